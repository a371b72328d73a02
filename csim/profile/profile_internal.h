/*
 * profile_internal: what the profiler's files share, private to csim/profile (profile.h is the
 * API). The profiler is cut by concept:
 *   profile.c           the profile's life: chips attached, phases and kernel marks, runs;
 *   profile_observer.c  the per-cycle observer (chip_observer_t): intervals, semaphore raises,
 *                       RDMA sends, counter samples and the op profile's sums, per chip;
 *   profile_summary.c   the op profile (profile_summary) from the per-chip sums;
 *   profile_trace.c     the Chrome / Perfetto trace-event JSON writer (profile_write);
 *   profile_stream.c    each run's slices written by a thread while the next run simulates;
 *   profile_gather.c    a pod split over MPI ranks: the ranks' chips' records to rank 0.
 * Ownership: a pchip_t's flat fields are the observer's (on the thread stepping the chip; the
 * others only read the chip's identity and span: index, x, y, cores, mxus, seen, first, end,
 * which the gather fills for another rank's chips); it appends to `rec` and adds to `sums`,
 * which the summary, the trace and the gather read between runs; `marks` are the host's
 * (profile_marks); `out` is the trace writer's.
 */
#ifndef PROFILE_PROFILE_INTERNAL_H
#define PROFILE_PROFILE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define UNITS (2 + CHIP_MAX_MXUS) /* per core: DMA, vector unit, MXU m at 2 + m */
#define LINK_DIRS 4               /* a chip's outgoing links: +X -X +Y -Y */

/* A PROFILE_EV_SEND's `a`: the RDMA's destination x | y << 8 | core << 16. */
enum { SEND_DEST_Y_SHIFT = 8, SEND_DEST_CORE_SHIFT = 16, SEND_DEST_XY_MASK = 0xFF, SEND_DEST_CORE_MASK = 3 };
_Static_assert(CHIP_MAX_CORES - 1 <= SEND_DEST_CORE_MASK, "a send's destination core fits its field");
static inline uint32_t send_dest(uint32_t x, uint32_t y, uint32_t core) {
  return x | y << SEND_DEST_Y_SHIFT | core << SEND_DEST_CORE_SHIFT;
}
static inline unsigned send_dest_x(uint32_t a) { return a & SEND_DEST_XY_MASK; }
static inline unsigned send_dest_y(uint32_t a) { return a >> SEND_DEST_Y_SHIFT & SEND_DEST_XY_MASK; }
static inline unsigned send_dest_core(uint32_t a) { return a >> SEND_DEST_CORE_SHIFT & SEND_DEST_CORE_MASK; }

/* A counter bucket (profile_config_t.bucket cycles, or the part of one a run ended in). */
typedef struct {
  uint64_t t, len;          /* the bucket's first cycle and its cycles */
  uint32_t flits[LINK_DIRS]; /* +X -X +Y -Y */
  uint64_t hbm;             /* bytes */
} sample_t;

/* An interval open since t0 (a queue's: at pc a). */
typedef struct {
  uint64_t t0;
  uint32_t a;
  bool open;
} open_t;

/* A semaphore's landing: raised from t0 to last, by amount in all. */
typedef struct {
  uint64_t t0, last;
  uint32_t amount;
  bool open;
} land_t;

/* A chip's records: the observer appends (add_ev, sample), profile_run_end marks where each
 * run ends; the trace, the stream and the gather read them between runs. */
typedef struct {
  profile_ev_t *ev;
  size_t n, cap, limit;
  uint64_t dropped, full_at;
  sample_t *smp;
  size_t ns, smp_cap;
  /* the runs: run r's records are [runs[r - 1], runs[r]) (profile_run_end; the trace's order) */
  size_t *runs;
  unsigned nruns, runs_cap;
  /* the arrays add_ev outgrew while the stream read them (freed at stream_join) */
  profile_ev_t *retired[48];
  unsigned nretired;
} pchip_records_t;

/* A chip's op-profile sums (the observer adds, profile_summary and the gather read). */
typedef struct {
  profile_phase_stats_t ph[PROFILE_MAX_PHASES];
  uint64_t wait[CHIP_MAX_CORES][ISA_NUM_SEMS]; /* cycles a compute queue waited on each semaphore */
} pchip_sums_t;

/* The kernel's phases (profile_marks): from command at[i] of core 0's compute queue on, phase
 * ph[i], while the host's phase is still `host`. */
typedef struct {
  uint32_t at[PROFILE_MAX_MARKS];
  unsigned ph[PROFILE_MAX_MARKS], n, host;
} pchip_marks_t;

/* The trace writer's per-chip state: the process and tracks named, the semaphore tracks named
 * (bit s), and the run being written (trace_snap_run): its records ev[from, to), a snapshot
 * while streaming. */
typedef struct {
  bool named;
  uint32_t sems_named[CHIP_MAX_CORES];
  const profile_ev_t *ev;
  size_t from, to;
} pchip_out_t;

typedef struct {
  /* ---- on_tick's quick path: every field it reads or writes, in the record's first two cache
   * lines (it runs in every cycle of every profiled chip, between the simulation's own work, and
   * on a big pod each line it touches is a cache miss). A cycle that shows what the last one
   * did (the same queues, busy flags, semaphores, phase, router activity, no RDMA issued) adds to
   * a pending run (quick_run cycles, their flits and HBM bytes), which quick_flush hands to what
   * the last slow cycle counted (quick_cq...: its phase's queue heads, the semaphore waited on;
   * prev_n) before anything else looks. sig_valid: they are set (by the last full look; a
   * skip or a run's end clears it). */
  struct profile *p;
  uint64_t end, last_hbm, quick_run, bucket_t;
  uint32_t quick_pc0;       /* core 0's compute pc: the kernel phase follows it */
  uint32_t sig_pc[CHIP_MAX_QUEUES], sig_bits; /* what the intervals follow (signature) */
  uint32_t sem_epoch[CHIP_MAX_CORES]; /* the cores' sem_epoch when sems was last seen */
  unsigned quick_host, cores, queues;
  bool sig_valid, quick_net, rdma_we_prev;
  uint32_t bflits[LINK_DIRS], run_flits[LINK_DIRS];
  /* ---- the rest of the observer's state */
  bool quick_semdep, quick_dma, quick_rbusy; /* the idle cause follows the semaphores; its inputs */
  unsigned run_phase;
  uint64_t quick_vec, run_hbm0, prev_n;
  uint64_t *quick_cq, *quick_dq, *quick_wait;
  chip_t *chip;
  unsigned index, x, y, mxus;
  bool seen;
  uint64_t first;
  open_t q[CHIP_MAX_QUEUES];
  open_t unit[CHIP_MAX_CORES][UNITS];
  open_t rdma[ISA_NUM_RDMA_ENGINES];
  uint32_t sems[CHIP_MAX_CORES][ISA_NUM_SEMS];
  uint32_t remote_sems[CHIP_MAX_CORES]; /* bit s: raised by a remote DMA's line */
  land_t land[CHIP_MAX_CORES][ISA_NUM_SEMS];
  /* the op profile's current stretch: prev_n cycles of one idle class in one phase since the
   * counters stood at last_cnt (the sums are linear in the counters, so a stretch counts as
   * its cycles one by one would) */
  uint64_t last_cnt[CHIP_OBS_COUNTERS];
  bool prev_valid;
  int prev_class;
  unsigned prev_phase;
  uint64_t bucket_hbm0;
  /* (sig_pc and sig_bits hold the state the intervals follow as last seen: queues' pcs, ~0 when
   * stopped; busy bits. A cycle that shows the same touches no interval.) */
  /* the lead compute queue's command, kept while its pc stays; the same core's DMA queue's kind */
  unsigned cmd_q;
  uint32_t cmd_pc;
  const uint32_t *cmd;
  bool cmd_valid;
  uint32_t dq_pc;
  unsigned dq_core, dq_kind;
  bool dq_valid;
  uint64_t wait_sink;       /* (quick_wait when no semaphore wait counts) */
  /* ---- shared with the other concepts (see the top) */
  pchip_sums_t sums;
  pchip_marks_t marks;
  pchip_records_t rec;
  pchip_out_t out;
} pchip_t;
_Static_assert(offsetof(pchip_t, quick_semdep) <= 128, "on_tick's quick path in the record's first two cache lines");

/* A host phase as it began (profile_phase), for the trace's "host phases" track: every one,
 * not only the op profile's PROFILE_MAX_PHASES (randprog's sets). */
#define PROFILE_MAX_HOST_PHASES 65536 /* (3.7 MB) */
typedef struct {
  uint64_t cycle;
  char name[56];
} host_phase_t;

struct tw; /* the trace's writer (profile_trace.c) */

struct profile {
  profile_config_t cfg;
  unsigned nchips, selected;
  pchip_t **chip;         /* per pod chip, NULL when not profiled */
  char left_out[512];
  char phase_name[PROFILE_MAX_PHASES][64];
  unsigned phases, cur_phase;
  bool forgot;
  host_phase_t *host;     /* the host's phases in order; past the cap (or out of memory) the
                           * last one ends at host_cut */
  size_t nhost, host_cap;
  uint64_t host_cut;
  bool host_full;
  /* streaming (cfg.trace_path): the file being written beside it, its writer, the runs written,
   * the thread writing the last one (while streaming_on) */
  char *stream_tmp;
  struct tw *stream;
  unsigned streamed;
  pthread_t streamer;
  bool streaming_on, stream_off; /* (off: the file could not be opened or written: it is written whole at the end) */
};

/* ---- profile_observer.c */
extern const chip_observer_t profile_observer;
/* After a run: brings chip c's records and sums up to its current cycle (profile_run_end). */
void observer_run_end(pchip_t *c);

/* ---- profile_trace.c */
typedef struct tw tw_t;
/* Opens path's file beside it (*tmp: its name) with the trace's head written: the writer, or
 * NULL with a message. */
tw_t *trace_open(const profile_t *p, const char *path, char **tmp, char *err, size_t errlen);
/* A trace that will not be finished: closed and removed. */
void trace_discard(tw_t *w, char *tmp);
/* Takes run r's records (every chip's; past the last run, those after it) as the ones to write. */
void trace_snap_run(profile_t *p, unsigned r);
/* Every chip's slices of the records trace_snap_run took. 0, or -1 out of memory. */
int trace_write_snapped(tw_t *w, const profile_t *p);

/* ---- profile_stream.c */
/* Waits for the run being streamed (if any) to be in the file. */
void stream_join(profile_t *p);
/* After profile_run_end's run: its slices into the file (opened at the first run). */
void stream_run(profile_t *p);
/* The stream, with the slices of run runs - 1 (the last, or the records after it) written, if
 * it writes `path` (*tmp: the file beside it); else NULL, the stream dropped (out of memory, or
 * another path: the trace is then written whole). */
tw_t *stream_take(profile_t *p, const char *path, unsigned runs, char **tmp);
/* A stream the trace will not get: closed and removed. */
void stream_drop(profile_t *p);

#endif
