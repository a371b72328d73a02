/*
 * profile: where every cycle of a run goes (docs/profiling.md). A profile watches chips through
 * their observer (chip.h: every cycle stepped, every stretch skipped) and keeps, with bounded
 * memory:
 *   - per queue, a slice per command from the cycle it becomes the queue's head to the cycle
 *     the next one does (a SEM_WAIT's slice is the time the queue was blocked on it);
 *   - per unit (each core's DMA engine, MXUs and vector unit; the chip's remote-DMA engines)
 *     its busy intervals, which add up to the unit's busy counter where it has one;
 *   - per semaphore, the stretches in which remote or local signals raised it, and every RDMA
 *     sent with a remote semaphore (a flow from the send to the receiver's semaphore);
 *   - counters every `bucket` cycles: HBM bytes and the flits each link carried;
 *   - per phase (named by the host between runs: profile_phase) and chip, the cycles, the MXU's
 *     compute and busy cycles, the MXU's idle cycles split by cause, DMA busy, HBM bytes and
 *     each link's flits: the op profile (profile_summary).
 * profile_write writes it all as a Chrome / Perfetto trace-event JSON file.
 *
 * A chip's records are touched only by the thread stepping it, so a pod on threads gives the
 * same profile as on one. The host calls everything else between runs. A pod split over MPI
 * ranks: every rank makes the same profile and watches only its own chips (the others' are
 * shells, which chip_set_observer ignores); profile_gather then hands them all to rank 0.
 */
#ifndef PROFILE_PROFILE_H
#define PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chip/chip.h"

#define PROFILE_DEFAULT_MAX_CHIPS 64          /* chips profiled when no list is given */
#define PROFILE_DEFAULT_MAX_EVENTS 2000000ull /* records kept over every chip (64 bytes each: ~130 MB) */
#define PROFILE_DEFAULT_BUCKET 1024           /* cycles per counter sample */
#define PROFILE_MAX_PHASES 128

/* Why an MXU was not computing in a cycle (MXU-cycles: a core's MXUs each count). */
typedef enum {
  PROFILE_IDLE_WEIGHTS,   /* loading weights, or a matmul waiting for them */
  PROFILE_IDLE_INPUTS,    /* a matmul streaming with no activation row offered */
  PROFILE_IDLE_SEMAPHORE, /* the compute queue blocked on a semaphore, no DMA or network activity */
  PROFILE_IDLE_DMA,       /* the compute queue blocked on a semaphore while the DMA engine works */
  PROFILE_IDLE_NETWORK,   /* ... while remote DMAs are in flight or flits cross the router */
  PROFILE_IDLE_NOTHING,   /* the compute queue has stopped (nothing left to do) */
  PROFILE_IDLE_OTHER,     /* the queue is issuing other work (vector unit, stores, the MXU's pipeline) */
  PROFILE_IDLE_CAUSES
} profile_idle_t;

/* What a queue's head command is, for the op profile's breakdown: stopped, then by opcode. */
enum { PROFILE_OP_STOPPED, PROFILE_OP_HALT, PROFILE_OP_FENCE, PROFILE_OP_SEM_WAIT, PROFILE_OP_SEM_SIGNAL, PROFILE_OP_DMA,
       PROFILE_OP_MXU_LOAD, PROFILE_OP_MXU_MATMUL, PROFILE_OP_MXU_STORE, PROFILE_OP_VEC, PROFILE_OP_RDMA, PROFILE_OPS };
/* "stopped", "HALT", ... "RDMA" */
const char *profile_op_name(unsigned op);

/* "weights", "inputs", "semaphore", "DMA", "network", "nothing to do", "other work". */
const char *profile_idle_name(profile_idle_t c);

typedef struct {
  unsigned pod_w, pod_h;    /* the chips: index y * pod_w + x */
  const bool *chips;        /* NULL: the first max_chips chips; else pod_w * pod_h flags */
  unsigned max_chips;       /* 0: PROFILE_DEFAULT_MAX_CHIPS (with chips == NULL) */
  uint64_t max_events;      /* 0: PROFILE_DEFAULT_MAX_EVENTS */
  unsigned bucket;          /* 0: PROFILE_DEFAULT_BUCKET */
  double clock_mhz;         /* timestamps: cycles / clock_mhz microseconds */
  unsigned rows, cols;      /* the MXU (FLOPS: 2 R C per compute cycle) */
  unsigned writers;         /* threads that format the trace (profile_write): 0, one per processor
                             * (up to PROFILE_MAX_WRITERS) for 100,000 records or more; else up to
                             * PROFILE_MAX_WRITERS. The file is the same bytes on any number. */
  const char *trace_path;   /* the trace will be written here (profile_write with this path): each
                             * run's slices go to the file (beside it, renamed into place at the
                             * end) while the next run simulates. The same bytes as without.
                             * Not for a pod split over MPI ranks (rank 0 writes after gathering) */
} profile_config_t;
#define PROFILE_MAX_WRITERS 4

typedef struct profile profile_t;

profile_t *profile_new(const profile_config_t *cfg, char *err, size_t errlen);
/* Detaches from every chip still attached (call before the chips are freed, or after with
 * profile_forget_chips). */
void profile_free(profile_t *p);
/* The chips are gone (a pod freed before the profile): do not touch them. */
void profile_forget_chips(profile_t *p);
/* Watches chip `index` (y * pod_w + x) if it is one of the profiled chips. */
void profile_attach(profile_t *p, unsigned index, chip_t *c);
/* The chips profiled, and a sentence saying which were left out ("" when none). */
unsigned profile_chips(const profile_t *p);
const char *profile_left_out(const profile_t *p);

/* The phase that starts at `cycle` (the chips' cycle count, the same for every chip of a pod
 * between runs): cycles from there on count for it. Phases of the same name add up; past
 * PROFILE_MAX_PHASES the last one, renamed "later phases", takes the rest. The trace shows
 * every host phase (up to 65,536) on a track of its own, "host phases". */
void profile_phase(profile_t *p, const char *name, uint64_t cycle);
/* The kernel phases of chip `chip`'s (core 0's) compute program in the current phase: from
 * command at[i] on, its cycles count for phase "<current>: names[i]" (the lead compute queue's
 * pc says where a chip is; the firmware's fw_prog_mark). n = 0: none (a program without marks).
 * A phase's cycles are then its longest chip's, so where chips are in different kernel phases
 * at once the shares can add to a little more than the whole. */
#define PROFILE_MAX_MARKS 8
void profile_marks(profile_t *p, unsigned chip, const uint32_t *at, const char *const *names, unsigned n);
/* After a run: brings every profiled chip's records up to its current cycle. */
void profile_run_end(profile_t *p);

/* ---- the op profile: sums over the profiled chips */
typedef struct {
  char name[64];
  uint64_t cycles;          /* wall cycles of the phase (the chips run together) */
  uint64_t chip_cycles;     /* summed over chips */
  uint64_t mxu_cycles;      /* MXU-cycles available: chip cycles x MXUs of a chip */
  uint64_t compute, mxu_busy, weight_load;
  uint64_t idle[PROFILE_IDLE_CAUSES];  /* add up to mxu_cycles - compute */
  uint64_t dma_busy, vec_busy, hbm_bytes;
  uint64_t link_flits[4];   /* +X -X +Y -Y, summed over chips */
  /* chip-cycles the lead core's compute (0) and DMA (1) queue had each kind of command at its
   * head (PROFILE_OP_*; a SEM_WAIT's are cycles blocked on it) */
  uint64_t queue_op[2][PROFILE_OPS];
} profile_phase_stats_t;

typedef struct {
  unsigned phases;
  profile_phase_stats_t phase[PROFILE_MAX_PHASES];
  profile_phase_stats_t total;
  unsigned chips, mxus_per_chip;
  double clock_mhz;
  unsigned rows, cols;
  uint64_t events, events_dropped;
  /* the busiest link: chip index, direction 0..3 (+X -X +Y -Y), its flits / total cycles */
  unsigned busiest_chip, busiest_dir;
  double busiest_util;
  /* the semaphore waited on longest by a compute queue: chip, core, semaphore, cycles */
  unsigned wait_chip, wait_core, wait_sem;
  uint64_t wait_cycles;
  /* the bottleneck rule (docs/profiling.md): "compute" when the MXUs compute at least half
   * their cycles, else the largest idle cause ("nothing to do" only when it outweighs the
   * others together) */
  int bottleneck;           /* -1: compute, else a profile_idle_t */
  char bottleneck_line[256];
} profile_summary_t;

void profile_summary(const profile_t *p, profile_summary_t *s);

/* ---- what the trace holds, for tests */
typedef enum { PROFILE_EV_QUEUE, PROFILE_EV_UNIT, PROFILE_EV_SEM, PROFILE_EV_SEND } profile_ev_kind_t;
typedef enum { PROFILE_UNIT_DMA, PROFILE_UNIT_VEC, PROFILE_UNIT_MXU, PROFILE_UNIT_RDMA } profile_unit_t;
typedef struct {
  uint64_t t0, t1;      /* cycles [t0, t1) */
  uint8_t kind;         /* profile_ev_kind_t */
  uint8_t core;         /* queue events: queue 2c + q's core; units: the core (RDMA: 0) */
  uint8_t unit;         /* QUEUE: the queue (0 compute, 1 DMA of the core); UNIT: profile_unit_t */
  uint8_t index;        /* MXU or RDMA engine; SEM: the semaphore */
  uint32_t a, b;        /* QUEUE: pc, opcode; SEM: amount added; SEND: dest x | y << 8 | core << 16, sem */
  uint32_t cmd[ISA_CMD_WORDS]; /* QUEUE: the command (programs change between runs) */
} profile_ev_t;
/* Chip `index`'s records (NULL, n = 0 if not profiled); valid until the next run. */
const profile_ev_t *profile_events(const profile_t *p, unsigned index, size_t *n);
/* The cycles chip `index` was watched: from its first observed cycle to its last + 1. */
void profile_span(const profile_t *p, unsigned index, uint64_t *first, uint64_t *end);

/* A pod split over MPI ranks (dist.h), after its last run: every rank sends the records of the
 * chips it watched (events, samples, per-phase sums, waits, spans) to rank 0, which puts them in
 * its empty slots for those chips; rank 0's profile is then the one a single process would have
 * made, for profile_summary and profile_write (the other ranks keep their own chips' alone).
 * Collective: every rank calls it; nothing without MPI. 0, or -1 with a message on every rank
 * (out of memory, or ranks whose phases differ: they did not run the same host program). */
int profile_gather(profile_t *p, char *err, size_t errlen);

/* Writes the Chrome trace-event JSON to path itself (a failed write removes it: give a
 * temporary to replace a file whole, as the commands do, util/outfile.h). 0, or -1 with a
 * message. */
int profile_write(profile_t *p, const char *path, char *err, size_t errlen);

#endif
