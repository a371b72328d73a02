/*
 * pod: X x Y chips (chip.h) wired as a 2-D torus through links (pod_link.h: rings of latency + 2 slots): each chip's
 * four router ports connect to its neighbours', flits and credits each way with the
 * same latency. The host loads each chip's HBM and programs, then runs the pod until every
 * chip is idle and the network is empty, with a timeout that names what is stuck.
 */
#ifndef POD_H
#define POD_H

#include <stddef.h>
#include <stdint.h>

#include "chip/chip.h"
#include "pod/pod_link.h"
#include "profile/profile.h"

typedef struct {
  unsigned size_x, size_y;    /* 1..255 each */
  unsigned link_latency;      /* extra cycles per link, each way */
  chip_config_t chip;         /* every chip's configuration (position filled in per chip) */
  /* NULL, or size_x * size_y flags (chip y * size_x + x): those chips run the Verilated RTL
   * whatever chip.model says (a waveform of one chip in a pod of fast ones) */
  const bool *rtl_chips;
  /* NULL, or called every 65,536 cycles of a pod_run with the cycles run so far (the commands
   * print progress on stderr from it) */
  void (*progress)(void *ctx, uint64_t cycles);
  void *progress_ctx;
  /* 0 or 1: the pod runs on the caller's thread; N > 1: its rows are split into N bands, each
   * run by a thread (the caller's and N - 1 more), meeting every link_latency + 1 cycles;
   * results and cycles identical to one thread's (pod.c). At most size_y. */
  unsigned threads;
  /* 0: a link carries a flit a cycle each way (8 x chip.flit_words bytes). Else the bytes a
   * link carries a cycle, at most a flit's: a serialiser per link, ahead of its delay line,
   * releases a flit when a token bucket filled by this many bytes a cycle holds a flit's worth
   * (docs/fidelity.md "ICI"). Credits are not held back. */
  unsigned link_bytes;
} pod_config_t;

typedef struct pod pod_t;

#define POD_MAX_SIZE 255          /* chips each way */
#define POD_MAX_LINK_LATENCY 1000 /* cycles each way: far beyond any board or cable */

/* 0 when the pod of *cfg can be built: 1..255 chips each way, a chip this build has for its
 * model (chip_geometry_for) and, when cfg->rtl_chips flags any, on the RTL too, flits of
 * chip.flit_words words on links of link_bytes bytes a cycle (chip_flit_words_check,
 * pod_link_check), link_latency and threads in range (threads at most the rows: a thread
 * takes whole rows). *g (may be NULL) gets the chips' geometry. Else -1 with a message.
 * pod_new checks its configuration with it; a job that has checked builds with pod_build. */
int pod_check(const pod_config_t *cfg, chip_geometry_t *g, char *err, size_t errlen);
/* The HBM each chip of cfg gets for a run that needs `need` bytes of it: cfg->chip.hbm_bytes 0
 * (the machine leaves it to the run) becomes `need`; a capacity is kept when the run fits it.
 * 0, or -1 with a message when it does not (or need is beyond CHIP_MAX_HBM_BYTES). */
int pod_hbm_fit(pod_config_t *cfg, uint64_t need, char *err, size_t errlen);
/* The bytes a link of the pod carries a cycle each way: link_bytes, else a flit's. */
static inline unsigned pod_link_bytes_per_cycle(const pod_config_t *p) {
  return p->link_bytes ? p->link_bytes : 8 * (p->chip.flit_words ? p->chip.flit_words : 1);
}

/* pod_check, then pod_build: NULL with a message when cfg is refused or building fails. */
pod_t *pod_new(const pod_config_t *cfg, char *err, size_t errlen);
/* Builds the pod of a configuration pod_check accepted (after any pod_hbm_fit), not checking
 * it again, so that a job checks once (config -> check -> build). NULL with a message when
 * out of memory or a chip or thread cannot be made. */
pod_t *pod_build(const pod_config_t *cfg, char *err, size_t errlen);
void pod_free(pod_t *p);
/* Chip (x, y), or NULL outside the pod. */
chip_t *pod_chip(pod_t *p, unsigned x, unsigned y);
void pod_size(const pod_t *p, unsigned *size_x, unsigned *size_y);

/* Makes chips x0..x0+w-1, y0..y0+h-1 one slice: their routers keep its traffic inside it
 * (chip_set_slice). Returns -1 if the rectangle is empty or leaves the pod. */
int pod_set_slice(pod_t *p, unsigned x0, unsigned y0, unsigned w, unsigned h);

/* Starts queues `mask` on every chip and runs until the pod is quiet or max_cycles pass
 * (or a router drops a packet for leaving its slice: that stops the run as an error).
 * Returns 0 when every chip's started queues halted; else -1 with a report naming each
 * chip (x,y) that failed or is stuck, and why. *cycles gets the cycles run. */
int pod_run(pod_t *p, unsigned mask, uint64_t max_cycles, uint64_t *cycles, char *report, size_t len);

/* After a timeout or a dropped packet, pod_run leaves the pod ready for the next programs:
 * pod_abort stops every queue of every chip and runs the pod until it is quiet (0), or gives
 * up after max_cycles (-1); pod_reset resets every chip (chip_reset) and empties the links. */
int pod_abort(pod_t *p, uint64_t max_cycles);
void pod_reset(pod_t *p);

/* The first chip whose lockstep check (CHIP_MODEL_CHECK) found a difference from the RTL, its
 * report; NULL when none did. pod_run stops at it. */
const char *pod_divergence(const pod_t *p);

/* The last cycle of the last pod_run in which chip (x, y) was busy (a queue running, a unit
 * busy or a flit in its router); 0 if it was quiet from the start. */
uint64_t pod_busy_until(const pod_t *p, unsigned x, unsigned y);

/* A profile (profile.h; NULL: none) that watches the pod's chips from now on: each pod_run ends
 * with profile_run_end, pod_free lets go of the chips; the caller frees the profile after. */
void pod_set_profile(pod_t *p, profile_t *prof);
/* The phase the next runs belong to in the pod's profile (nothing without one): "gemm",
 * "allreduce", "training step"... (profile_phase). */
void pod_phase(pod_t *p, const char *name);
/* The kernel phases of chip (x, y)'s compute program for the current phase (profile_marks);
 * nothing without a profile. */
void pod_marks(pod_t *p, unsigned x, unsigned y, const uint32_t *at, const char *const *names, unsigned n);

#endif
