/* profile: see profile.h. */
#include "profile/profile.h"
#include "util/dist.h"

#include <emmintrin.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAND_GAP 64 /* a semaphore raised again within this many cycles: the same landing */
#define UNITS (2 + CHIP_MAX_MXUS) /* per core: DMA, vector unit, MXU m at 2 + m */

typedef struct {
  uint64_t t, len;     /* the bucket's first cycle and its cycles */
  uint32_t flits[4];   /* +X -X +Y -Y */
  uint64_t hbm;        /* bytes */
} sample_t;

typedef struct {
  uint64_t t0;
  uint32_t a;
  bool open;
} open_t;

typedef struct {
  uint64_t t0, last;
  uint32_t amount;
  bool open;
} land_t;

typedef struct {
  /* ---- on_tick's quick path: every field it reads or writes, in the record's first two cache
   * lines (it runs in every cycle of every profiled chip, between the simulation's own work, and
   * on a big pod each line it touches is a cache miss). A cycle that shows what the last one
   * did (the same queues, busy flags, semaphores, phase, router activity, no RDMA issued) adds to
   * a pending run (fast_run cycles, their flits and HBM bytes), which fast_flush hands to what
   * the last slow cycle counted (fast_cq...: its phase's queue heads, the semaphore waited on;
   * prev_n) before anything else looks. sig_valid: they are set (by the last full look; a
   * skip or a run's end clears it). */
  struct profile *p;
  uint64_t end, last_hbm, fast_run, bucket_t;
  uint32_t fast_pc0;        /* core 0's compute pc: the kernel phase follows it */
  uint32_t sig_pc[CHIP_MAX_QUEUES], sig_bits; /* what the intervals follow (signature) */
  uint32_t sem_epoch[CHIP_MAX_CORES]; /* the cores' sem_epoch when sems was last seen */
  unsigned fast_host, cores, queues;
  bool sig_valid, fast_net, rdma_we_prev;
  uint32_t bflits[4], run_flits[4];
  /* ---- the rest */
  bool fast_semdep, fast_dma, fast_rbusy; /* the idle cause follows the semaphores; its inputs */
  unsigned run_phase;
  uint64_t fast_vec, run_hbm0, prev_n;
  uint64_t *fast_cq, *fast_dq, *fast_wait;
  chip_t *chip;
  unsigned index, x, y, mxus;
  profile_ev_t *ev;
  size_t n, cap, limit;
  uint64_t dropped, full_at;
  sample_t *smp;
  size_t ns, smp_cap;
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
  profile_phase_stats_t ph[PROFILE_MAX_PHASES];
  uint64_t wait[CHIP_MAX_CORES][ISA_NUM_SEMS];
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
  /* the kernel's phases (profile_marks): from command mark_at[i] of core 0's compute queue on,
   * phase mark_ph[i], while the host's phase is still mark_host */
  uint32_t mark_at[PROFILE_MAX_MARKS];
  unsigned mark_ph[PROFILE_MAX_MARKS], nmarks, mark_host;
  uint64_t wait_sink;        /* (fast_wait when no semaphore wait counts) */
  /* the runs: run r's records are [runs[r - 1], runs[r]) (profile_run_end; the trace's order) */
  size_t *runs;
  unsigned nruns, runs_cap;
  /* the trace writer's: the process and tracks named, the semaphore tracks named (bit s) */
  bool named;
  uint32_t sems_named[CHIP_MAX_CORES];
  /* the run being written (snap_run): its records snap_ev[snap_from, snap_to), a snapshot while
   * streaming; and the arrays add_ev outgrew while the stream read them (freed at stream_join) */
  const profile_ev_t *snap_ev;
  size_t snap_from, snap_to;
  profile_ev_t *retired[48];
  unsigned nretired;
} pchip_t;
_Static_assert(offsetof(pchip_t, fast_semdep) <= 128, "on_tick's quick path in the record's first two cache lines");

/* A host phase as it began (profile_phase), for the trace's "host phases" track: every one,
 * not only the op profile's PROFILE_MAX_PHASES (randprog's sets). */
#define PROFILE_MAX_HOST_PHASES 65536 /* (3.7 MB) */
typedef struct {
  uint64_t cycle;
  char name[56];
} host_phase_t;

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

static const chip_observer_t observer;
static void stream_join(profile_t *p);
static void stream_run(profile_t *p);
static void stream_drop(profile_t *p);

const char *profile_op_name(unsigned op) {
  static const char *const n[PROFILE_OPS] = {"stopped", "HALT",     "FENCE",      "SEM_WAIT",  "SEM_SIGNAL", "DMA",
                                             "MXU_LOAD", "MXU_MATMUL", "MXU_STORE", "VEC",       "RDMA"};
  return op < PROFILE_OPS ? n[op] : "?";
}

static unsigned op_kind(const uint32_t *cmd) {
  if (!cmd) return PROFILE_OP_HALT; /* past the program: as good as stopped at its end */
  switch (isa_opcode(cmd)) {
    case ISA_OP_HALT: return PROFILE_OP_HALT;
    case ISA_OP_FENCE: return PROFILE_OP_FENCE;
    case ISA_OP_SEM_WAIT: return PROFILE_OP_SEM_WAIT;
    case ISA_OP_SEM_SIGNAL: return PROFILE_OP_SEM_SIGNAL;
    case ISA_OP_DMA: return PROFILE_OP_DMA;
    case ISA_OP_MXU_LOAD: return PROFILE_OP_MXU_LOAD;
    case ISA_OP_MXU_MATMUL: return PROFILE_OP_MXU_MATMUL;
    case ISA_OP_MXU_STORE: return PROFILE_OP_MXU_STORE;
    case ISA_OP_VEC: return PROFILE_OP_VEC;
    case ISA_OP_RDMA: return PROFILE_OP_RDMA;
    default: return PROFILE_OP_HALT;
  }
}

const char *profile_idle_name(profile_idle_t c) {
  static const char *const n[PROFILE_IDLE_CAUSES] = {"weights", "inputs", "semaphore", "DMA",
                                                     "network", "nothing to do", "other work"};
  return c < PROFILE_IDLE_CAUSES ? n[c] : "?";
}

/* "0-3,7,9-12": the chips [lo, hi] in runs, into buf. */
static void list_runs(const bool *flags, unsigned n, bool want, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < n && used + 24 < len;) {
    if (flags[i] != want) {
      i++;
      continue;
    }
    unsigned j = i;
    while (j + 1 < n && flags[j + 1] == want) j++;
    used += (size_t)snprintf(buf + used, len - used, j > i ? "%s%u-%u" : "%s%u", used ? "," : "", i, j);
    i = j + 1;
  }
}

profile_t *profile_new(const profile_config_t *cfg, char *err, size_t errlen) {
  profile_t *p = calloc(1, sizeof *p);
  const unsigned n = cfg->pod_w * cfg->pod_h;
  if (!p || !(p->chip = calloc(n ? n : 1, sizeof *p->chip))) {
    free(p);
    snprintf(err, errlen, "out of memory for a profile");
    return NULL;
  }
  p->cfg = *cfg;
  if (!p->cfg.max_chips) p->cfg.max_chips = PROFILE_DEFAULT_MAX_CHIPS;
  if (!p->cfg.max_events) p->cfg.max_events = PROFILE_DEFAULT_MAX_EVENTS;
  if (!p->cfg.bucket) p->cfg.bucket = PROFILE_DEFAULT_BUCKET;
  if (p->cfg.clock_mhz <= 0) p->cfg.clock_mhz = CHIP_DEFAULT_CLOCK_MHZ;
  p->nchips = n;
  bool *sel = calloc(n ? n : 1, sizeof *sel);
  if (!sel) {
    profile_free(p);
    snprintf(err, errlen, "out of memory for a profile");
    return NULL;
  }
  for (unsigned i = 0; i < n; i++) {
    sel[i] = cfg->chips ? cfg->chips[i] : i < p->cfg.max_chips;
    p->selected += sel[i];
  }
  if (!cfg->chips && n > p->cfg.max_chips) {
    char runs[256];
    list_runs(sel, n, false, runs, sizeof runs);
    snprintf(p->left_out, sizeof p->left_out, "profiling chips 0-%u of %u; chips %s left out (--profile-chips LIST "
             "picks others)", p->cfg.max_chips - 1, n, runs);
  }
  for (unsigned i = 0; i < n; i++) {
    if (!sel[i]) continue;
    pchip_t *c = aligned_alloc(64, (sizeof *c + 63) / 64 * 64); /* (the quick path's two lines, aligned) */
    if (c) memset(c, 0, sizeof *c);
    if (!c) {
      free(sel);
      profile_free(p);
      snprintf(err, errlen, "out of memory for a profile");
      return NULL;
    }
    c->p = p;
    c->index = i, c->x = i % cfg->pod_w, c->y = i / cfg->pod_w;
    c->limit = (size_t)(p->cfg.max_events / (p->selected ? p->selected : 1));
    if (c->limit < 64) c->limit = 64;
    p->chip[i] = c;
  }
  free(sel);
  snprintf(p->phase_name[0], sizeof p->phase_name[0], "run");
  p->phases = 1;
  return p;
}

void profile_forget_chips(profile_t *p) {
  if (p) p->forgot = true;
}

void profile_free(profile_t *p) {
  if (!p) return;
  stream_drop(p); /* (a trace not finished by profile_write is not left behind) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    if (c->chip && !p->forgot) chip_set_observer(c->chip, NULL, NULL);
    free(c->ev);
    free(c->runs);
    free(c->smp);
    free(c);
  }
  free(p->chip);
  free(p->host);
  free(p);
}

void profile_attach(profile_t *p, unsigned index, chip_t *chip) {
  if (!p || index >= p->nchips || !p->chip[index]) return;
  pchip_t *c = p->chip[index];
  const chip_geometry_t *g = chip_geometry(chip);
  c->chip = chip;
  c->cores = isa_geometry_cores(g);
  c->mxus = g->mxus ? g->mxus : 1;
  c->queues = ISA_NUM_QUEUES * c->cores;
  chip_set_observer(chip, &observer, c);
}

unsigned profile_chips(const profile_t *p) { return p->selected; }
const char *profile_left_out(const profile_t *p) { return p->left_out; }

/* The last phase takes the rest when they run out, named for what it holds. */
static unsigned phases_full(profile_t *p) {
  snprintf(p->phase_name[PROFILE_MAX_PHASES - 1], sizeof p->phase_name[0], "later phases");
  return PROFILE_MAX_PHASES - 1;
}

/* The index of phase `name`, added if new. */
static unsigned phase_index(profile_t *p, const char *name) {
  unsigned i;
  for (i = 0; i < p->phases; i++)
    if (!strcmp(p->phase_name[i], name)) return i;
  if (p->phases == PROFILE_MAX_PHASES) return phases_full(p);
  snprintf(p->phase_name[p->phases], sizeof p->phase_name[0], "%s", name);
  return p->phases++;
}

void profile_marks(profile_t *p, unsigned chip, const uint32_t *at, const char *const *names, unsigned n) {
  if (!p || chip >= p->nchips || !p->chip[chip]) return;
  pchip_t *c = p->chip[chip];
  c->nmarks = 0;
  c->mark_host = p->cur_phase;
  for (unsigned i = 0; i < n && i < PROFILE_MAX_MARKS; i++) {
    char name[64];
    snprintf(name, sizeof name, "%.30s: %.24s", p->phase_name[p->cur_phase], names[i]);
    c->mark_at[c->nmarks] = at[i];
    c->mark_ph[c->nmarks++] = phase_index(p, name);
  }
}

/* The phase chip c is in with its lead compute queue at pc. */
static unsigned phase_of(const pchip_t *c, uint32_t pc) {
  unsigned ph = c->p->cur_phase;
  if (!c->nmarks || c->mark_host != ph) return ph;
  for (unsigned i = 0; i < c->nmarks && c->mark_at[i] <= pc; i++) ph = c->mark_ph[i];
  return ph;
}

/* The phase's start for the trace's host track (a quote or backslash would need escaping in
 * the JSON: they become '). */
static void host_phase(profile_t *p, const char *name, uint64_t cycle) {
  if (p->host_full) return;
  if (p->nhost == p->host_cap) {
    const size_t cap = p->host_cap ? 2 * p->host_cap : 64; /* (64 doubled reaches the cap exactly) */
    host_phase_t *h = cap <= PROFILE_MAX_HOST_PHASES ? realloc(p->host, cap * sizeof *h) : NULL;
    if (!h) {
      p->host_full = true, p->host_cut = cycle;
      return;
    }
    p->host = h, p->host_cap = cap;
  }
  host_phase_t *h = &p->host[p->nhost++];
  h->cycle = cycle;
  snprintf(h->name, sizeof h->name, "%s", name);
  for (char *c = h->name; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '\'';
}

void profile_phase(profile_t *p, const char *name, uint64_t cycle) {
  /* the chips stand at `cycle`: what they do from now on counts for the phase */
  if (!p) return;
  host_phase(p, name, cycle);
  unsigned i;
  for (i = 0; i < p->phases; i++)
    if (!strcmp(p->phase_name[i], name)) break;
  if (i == p->phases) {
    if (p->phases == PROFILE_MAX_PHASES) i = phases_full(p);
    else snprintf(p->phase_name[p->phases++], sizeof p->phase_name[0], "%s", name);
  }
  p->cur_phase = i;
}

/* ---- records */
static void add_ev(pchip_t *c, const profile_ev_t *e) {
  if (c->n == c->limit) {
    if (!c->dropped) c->full_at = e->t0;
    c->dropped++;
    return;
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 256;
    if (cap > c->limit) cap = c->limit;
    profile_ev_t *ev;
    if (!c->p->streaming_on) {
      ev = realloc(c->ev, cap * sizeof *ev);
    } else { /* (the streaming thread reads the old array: kept until it is done; doubling from
              * 256, 48 arrays are more than memory holds) */
      ev = c->nretired < sizeof c->retired / sizeof c->retired[0] ? malloc(cap * sizeof *ev) : NULL;
      if (ev) memcpy(ev, c->ev, c->n * sizeof *ev), c->retired[c->nretired++] = c->ev;
    }
    if (!ev) {
      if (!c->dropped) c->full_at = e->t0;
      c->dropped++;
      return;
    }
    c->ev = ev, c->cap = cap;
  }
  c->ev[c->n++] = *e;
}

static void close_open(pchip_t *c, open_t *o, uint64_t t, uint8_t kind, unsigned core, unsigned unit, unsigned index,
                       uint32_t b, const uint32_t *cmd) {
  if (!o->open) return;
  o->open = false;
  if (t <= o->t0) return;
  profile_ev_t e = {o->t0, t, kind, (uint8_t)core, (uint8_t)unit, (uint8_t)index, o->a, b, {0}};
  if (cmd) memcpy(e.cmd, cmd, sizeof e.cmd);
  add_ev(c, &e);
}

static uint32_t opcode_at(const pchip_t *c, unsigned q, uint32_t pc, const uint32_t **cmd) {
  size_t n;
  const uint32_t *prog = chip_program(c->chip, q, &n);
  if (!prog || pc >= n) {
    *cmd = NULL;
    return 0;
  }
  *cmd = prog + (size_t)pc * ISA_CMD_WORDS;
  return isa_opcode(*cmd);
}

/* A queue's state in cycle t: a slice per command while it runs. */
static void queue_state(pchip_t *c, unsigned q, uint64_t t, bool running, uint32_t pc) {
  open_t *o = &c->q[q];
  if (o->open && (!running || o->a != pc)) {
    const uint32_t *cmd;
    const uint32_t op = opcode_at(c, q, o->a, &cmd);
    close_open(c, o, t, PROFILE_EV_QUEUE, q / ISA_NUM_QUEUES, q % ISA_NUM_QUEUES, 0, op, cmd);
  }
  if (running && !o->open) *o = (open_t){t, pc, true};
}

static void unit_state(pchip_t *c, open_t *o, uint64_t t, bool busy, unsigned core, unsigned unit, unsigned index) {
  if (o->open && !busy) close_open(c, o, t, PROFILE_EV_UNIT, core, unit, index, 0, NULL);
  else if (busy && !o->open) *o = (open_t){t, 0, true};
}

static void close_land(pchip_t *c, unsigned k, unsigned s) {
  land_t *l = &c->land[k][s];
  if (!l->open) return;
  l->open = false;
  const profile_ev_t e = {l->t0, l->last + 1, PROFILE_EV_SEM, (uint8_t)k, 0, (uint8_t)s, 0, l->amount, {0}};
  add_ev(c, &e);
}

static void sample(pchip_t *c, uint64_t len) {
  if (c->ns == c->smp_cap) {
    size_t cap = c->smp_cap ? 2 * c->smp_cap : 64;
    sample_t *s = realloc(c->smp, cap * sizeof *s);
    if (!s) return;
    c->smp = s, c->smp_cap = cap;
  }
  sample_t *s = &c->smp[c->ns++];
  s->t = c->bucket_t;
  s->len = len;
  memcpy(s->flits, c->bflits, sizeof s->flits);
  s->hbm = c->last_hbm - c->bucket_hbm0;
}

/* Closes the counter bucket if cycle t is past it (a stretch with nothing: one zero sample). */
static void roll_bucket(pchip_t *c, uint64_t t) {
  const uint64_t B = c->p->cfg.bucket;
  if (t < c->bucket_t + B) return;
  sample(c, B);
  memset(c->bflits, 0, sizeof c->bflits);
  c->bucket_hbm0 = c->last_hbm;
  const uint64_t now = t - t % B;
  if (now > c->bucket_t + B) { /* buckets with nothing in them: one sample of zeros */
    c->bucket_t += B;
    sample(c, now - c->bucket_t);
  }
  c->bucket_t = now;
}

/* n cycles of class `cls` whose counters moved by d[]: the op profile's sums. An MXU-cycle is
 * one of compute, weight stall, input stall or neither (the MXU's counters: docs/mxu.md); the
 * neither go to the class. */
static inline void account(pchip_t *c, unsigned phase, uint64_t n, int cls, const uint64_t *d) {
  profile_phase_stats_t *s = &c->ph[phase];
  const uint64_t M = (uint64_t)c->mxus * c->cores;
  s->chip_cycles += n;
  s->mxu_cycles += n * M;
  s->compute += d[CHIP_CNT_COMPUTE];
  s->mxu_busy += d[CHIP_CNT_MXU_BUSY];
  s->weight_load += d[CHIP_CNT_WEIGHT_LOAD];
  s->dma_busy += d[CHIP_CNT_DMA_BUSY];
  uint64_t N = n * M > d[CHIP_CNT_COMPUTE] ? n * M - d[CHIP_CNT_COMPUTE] : 0;
  const uint64_t ww = d[CHIP_CNT_WEIGHT_STALL] < N ? d[CHIP_CNT_WEIGHT_STALL] : N;
  N -= ww;
  const uint64_t in = d[CHIP_CNT_INPUT_STALL] < N ? d[CHIP_CNT_INPUT_STALL] : N;
  N -= in;
  s->idle[PROFILE_IDLE_WEIGHTS] += ww;
  s->idle[PROFILE_IDLE_INPUTS] += in;
  s->idle[cls] += N;
}

/* Ends the current stretch where the counters stand at now. */
static inline void flush_prev(pchip_t *c, const uint64_t *now) {
  if (!c->prev_valid) return;
  uint64_t d[CHIP_OBS_COUNTERS];
  for (int i = 0; i < CHIP_OBS_COUNTERS; i++) d[i] = now[i] - c->last_cnt[i];
  account(c, c->prev_phase, c->prev_n, c->prev_class, d);
  memcpy(c->last_cnt, now, sizeof c->last_cnt);
  c->prev_valid = false;
}

/* Why the MXUs of a chip whose compute queue (core k's) stands at cmd would idle. */
static int idle_class(pchip_t *c, unsigned k, bool running, const uint32_t *cmd, const uint32_t *sems, bool dma_busy,
                      bool network, const chip_obs_t *o) {
  if (!running) return PROFILE_IDLE_NOTHING;
  if (!cmd || isa_opcode(cmd) != ISA_OP_SEM_WAIT) return PROFILE_IDLE_OTHER;
  const unsigned s = ISA_GET(cmd, SEM_WAIT, sem) % ISA_NUM_SEMS;
  if (sems[s] >= ISA_GET(cmd, SEM_WAIT, value)) return PROFILE_IDLE_OTHER; /* granted now */
  if (dma_busy) return PROFILE_IDLE_DMA;
  network = network || (o && (o->rtr_in_valid | o->rtr_out_valid)); /* flits crossing the router */
  if (network || (c->remote_sems[k] >> s & 1)) return PROFILE_IDLE_NETWORK;
  return PROFILE_IDLE_SEMAPHORE;
}

/* The core whose compute queue the MXU's idle cause follows: core 0, or the first running. */
static unsigned lead_core(const pchip_t *c, const bool *running) {
  for (unsigned k = 0; k < c->cores; k++)
    if (running[k]) return k;
  return 0;
}

/* Bit s: semaphore s differs between a and b (four at a time: it runs at every raise). */
_Static_assert(ISA_NUM_SEMS % 4 == 0 && ISA_NUM_SEMS <= 32, "semaphores four at a time, a bit each");
static inline uint32_t sems_changed(const uint32_t *a, const uint32_t *b) {
  uint32_t m = 0;
  for (unsigned s = 0; s < ISA_NUM_SEMS; s += 4) {
    const __m128i eq = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(a + s)), _mm_loadu_si128((const __m128i *)(b + s)));
    m |= (uint32_t)(~_mm_movemask_ps(_mm_castsi128_ps(eq)) & 0xF) << s;
  }
  return m;
}

_Static_assert(ISA_NUM_QUEUES == 2, "on_tick compares a core's two queues' pcs unrolled");
/* The queues' pcs (~0 when stopped) and the busy bits the intervals follow, in cycle o. */
static inline uint32_t signature(const pchip_t *c, const chip_obs_t *o, uint32_t *pcs) {
  uint32_t bits = 0;
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) pcs[k * ISA_NUM_QUEUES + q] = oc->running[q] ? oc->pc[q] : UINT32_MAX;
    bits |= ((uint32_t)(oc->busy & (CHIP_BUSY_DMA | CHIP_BUSY_VEC)) | (uint32_t)oc->mxu_busy << 4) << (12 * k);
  }
  return bits | (uint32_t)(o->core[0].busy >> CHIP_BUSY_RDMA_SHIFT & 0xF) << 28;
}

static void on_tick_slow(pchip_t *c, uint64_t t, const chip_obs_t *o, uint64_t hbm, const uint32_t *pcs, uint32_t bits);

/* Hands the quick path's pending run to the sums (on_tick): before anything else counts or looks. */
static void fast_flush(pchip_t *c) {
  profile_phase_stats_t *ps = &c->ph[c->run_phase];
  if (c->fast_run) {
    c->prev_n += c->fast_run; /* (the stretch is the quick path's too) */
    *c->fast_cq += c->fast_run, *c->fast_dq += c->fast_run, *c->fast_wait += c->fast_run;
    ps->vec_busy += c->fast_vec * c->fast_run;
    c->fast_run = 0;
  }
  for (unsigned d = 0; d < 4; d++) ps->link_flits[d] += c->run_flits[d], c->run_flits[d] = 0;
  ps->hbm_bytes += c->last_hbm - c->run_hbm0;
  c->run_hbm0 = c->last_hbm;
}

/* The semaphores raised in cycle o (landings; raised by a remote DMA's line of the cycle before:
 * remote_sems). */
static void sem_raises(pchip_t *c, uint64_t t, const chip_obs_t *o) {
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    if (oc->sem_epoch == c->sem_epoch[k]) continue;
    uint32_t changed = sems_changed(oc->sems, c->sems[k]); /* (a cycle changes one or two of them) */
    for (; changed; changed &= changed - 1) {
      const unsigned s = (unsigned)__builtin_ctz(changed);
      if (oc->sems[s] > c->sems[k][s]) {
        land_t *l = &c->land[k][s];
        if (l->open && t - l->last > LAND_GAP) close_land(c, k, s);
        if (!l->open) *l = (land_t){t, t, 0, true};
        l->last = t;
        l->amount += oc->sems[s] - c->sems[k][s];
        if (c->rdma_we_prev) c->remote_sems[k] |= 1u << s;
      }
      c->sems[k][s] = oc->sems[s];
    }
    c->sem_epoch[k] = oc->sem_epoch;
  }
}

static void on_tick(void *ctx, uint64_t t, const chip_obs_t *o, uint64_t hbm) {
  pchip_t *c = ctx;
  /* The quick path: most cycles change none of what the intervals, the semaphores' records
   * and the idle cause follow, and only add to the counts of a stretch. */
  uint32_t pcs[CHIP_MAX_QUEUES];
  const uint32_t bits = signature(c, o, pcs);
  if (c->sig_valid && c->p->cur_phase == c->fast_host && o->core[0].pc[ISA_QUEUE_COMPUTE] == c->fast_pc0 &&
      ((o->rtr_in_valid | o->rtr_out_valid) != 0) == c->fast_net) {
    uint32_t diff = bits ^ c->sig_bits, sem_diff = 0; /* (one pass, no early exits: it runs every cycle) */
    for (unsigned k = 0; k < c->cores; k++) {
      diff |= (o->core[k].issue & 2u) | (pcs[2 * k] ^ c->sig_pc[2 * k]) | (pcs[2 * k + 1] ^ c->sig_pc[2 * k + 1]);
      sem_diff |= o->core[k].sem_epoch ^ c->sem_epoch[k];
    }
    bool same = !diff;
    if (same && sem_diff) {
      /* semaphores moved: their raises are recorded; the idle cause stays unless the lead
       * compute queue waits on one (then it is looked at again) */
      sem_raises(c, t, o);
      const unsigned k = c->cmd_q;
      same = !c->fast_semdep ||
             idle_class(c, k, true, c->cmd, o->core[k].sems, c->fast_dma, c->fast_rbusy, o) == c->prev_class;
    }
    if (same) {
      if (t >= c->bucket_t + c->p->cfg.bucket) roll_bucket(c, t);
      if (o->rtr_out_valid & 0x1E)
        for (unsigned d = 0; d < 4; d++) {
          const uint32_t f = o->rtr_out_valid >> (1 + d) & 1;
          c->bflits[d] += f;
          c->run_flits[d] += f;
        }
      c->last_hbm = hbm;
      c->rdma_we_prev = o->rdma_we != 0;
      c->fast_run++;
      c->end = t + 1;
      return;
    }
  }
  on_tick_slow(c, t, o, hbm, pcs, bits);
}

static void on_tick_slow(pchip_t *c, uint64_t t, const chip_obs_t *o, uint64_t hbm, const uint32_t *pcs, uint32_t bits) {
  fast_flush(c);
  const unsigned phase = phase_of(c, o->core[0].pc[ISA_QUEUE_COMPUTE]);
  if (!c->seen) {
    c->seen = true;
    c->first = t;
    c->bucket_t = t - t % c->p->cfg.bucket;
    c->last_hbm = c->bucket_hbm0 = hbm;
    memcpy(c->last_cnt, o->counters, sizeof c->last_cnt);
    for (unsigned k = 0; k < c->cores; k++) memcpy(c->sems[k], o->core[k].sems, sizeof c->sems[k]);
  }
  roll_bucket(c, t);
  profile_phase_stats_t *ps = &c->ph[phase];

  /* queues and units, when anything they show changed */
  bool same = c->sig_valid;
  for (unsigned q = 0; q < c->queues; q++) same = same && pcs[q] == c->sig_pc[q];
  bool dma_busy = false, network = false;
  unsigned vec = 0;
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    dma_busy = dma_busy || (oc->busy & CHIP_BUSY_DMA);
    vec += (oc->busy & CHIP_BUSY_VEC) != 0;
  }
  ps->vec_busy += vec;
  const unsigned rbusy = o->core[0].busy >> CHIP_BUSY_RDMA_SHIFT & 0xF;
  if (!same || bits != c->sig_bits) {
    /* (while sig_valid, a unit's interval is open exactly when its bit is set: only the queues
     * and units that changed are looked at) */
    const uint32_t ch = c->sig_valid ? bits ^ c->sig_bits : UINT32_MAX;
    for (unsigned q = 0; q < c->queues; q++)
      if (!c->sig_valid || pcs[q] != c->sig_pc[q]) queue_state(c, q, t, pcs[q] != UINT32_MAX, pcs[q]);
    for (unsigned k = 0; k < c->cores; k++) {
      const chip_obs_core_t *oc = &o->core[k];
      const uint32_t chk = ch >> (12 * k);
      if (chk & CHIP_BUSY_DMA) unit_state(c, &c->unit[k][0], t, oc->busy & CHIP_BUSY_DMA, k, PROFILE_UNIT_DMA, 0);
      if (chk & CHIP_BUSY_VEC) unit_state(c, &c->unit[k][1], t, oc->busy & CHIP_BUSY_VEC, k, PROFILE_UNIT_VEC, 0);
      for (unsigned m = 0; m < c->mxus; m++)
        if (chk >> (4 + m) & 1) unit_state(c, &c->unit[k][2 + m], t, oc->mxu_busy >> m & 1, k, PROFILE_UNIT_MXU, m);
    }
    for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++)
      if (ch >> (28 + e) & 1) unit_state(c, &c->rdma[e], t, rbusy >> e & 1, 0, PROFILE_UNIT_RDMA, e);
    memcpy(c->sig_pc, pcs, sizeof c->sig_pc);
    c->sig_bits = bits;
    c->sig_valid = true;
  }
  network = rbusy != 0;
  /* links and HBM */
  for (unsigned d = 0; d < 4; d++) {
    const uint32_t f = o->rtr_out_valid >> (1 + d) & 1;
    c->bflits[d] += f;
    ps->link_flits[d] += f;
  }
  ps->hbm_bytes += hbm - c->last_hbm;
  c->last_hbm = hbm;
  /* semaphores raised, and RDMAs sent */
  sem_raises(c, t, o);
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    if (oc->issue & 2) {
      const uint32_t *cmd;
      const unsigned q = k * ISA_NUM_QUEUES + ISA_QUEUE_DMA;
      if (opcode_at(c, q, oc->pc[ISA_QUEUE_DMA], &cmd) == ISA_OP_RDMA && ISA_GET(cmd, RDMA, remote_sem) != ISA_SEM_NONE) {
        const profile_ev_t e = {t, t + 1, PROFILE_EV_SEND, (uint8_t)k, ISA_QUEUE_DMA, 0,
                                ISA_GET(cmd, RDMA, x) | ISA_GET(cmd, RDMA, y) << 8 | ISA_GET(cmd, RDMA, core) << 16,
                                ISA_GET(cmd, RDMA, remote_sem), {0}};
        add_ev(c, &e);
      }
    }
  }
  c->rdma_we_prev = o->rdma_we != 0;
  /* the MXUs' idle cause in this cycle (its counters come with the next) */
  bool running[CHIP_MAX_CORES];
  for (unsigned k = 0; k < c->cores; k++) running[k] = o->core[k].running[ISA_QUEUE_COMPUTE];
  const unsigned k = lead_core(c, running);
  const uint32_t pc = o->core[k].pc[ISA_QUEUE_COMPUTE];
  if (!c->cmd_valid || c->cmd_q != k || c->cmd_pc != pc) {
    opcode_at(c, k * ISA_NUM_QUEUES, pc, &c->cmd);
    c->cmd_q = k, c->cmd_pc = pc, c->cmd_valid = true;
  }
  const uint32_t *cmd = c->cmd;
  const uint32_t op = cmd ? isa_opcode(cmd) : 0;
  const int cls = idle_class(c, k, running[k], cmd, o->core[k].sems, dma_busy, network, o);
  if (c->prev_valid && (cls != c->prev_class || phase != c->prev_phase)) flush_prev(c, o->counters);
  if (!c->prev_valid) {
    memcpy(c->last_cnt, o->counters, sizeof c->last_cnt);
    c->prev_class = cls, c->prev_phase = phase, c->prev_n = 0, c->prev_valid = true;
  }
  c->prev_n++;
  c->fast_cq = &ps->queue_op[0][running[k] ? op_kind(cmd) : PROFILE_OP_STOPPED];
  const uint32_t dpc = o->core[k].pc[ISA_QUEUE_DMA];
  if (!c->dq_valid || c->dq_core != k || c->dq_pc != dpc) {
    const uint32_t *dcmd;
    opcode_at(c, k * ISA_NUM_QUEUES + ISA_QUEUE_DMA, dpc, &dcmd);
    c->dq_kind = op_kind(dcmd), c->dq_pc = dpc, c->dq_core = k, c->dq_valid = true;
  }
  c->fast_dq = &ps->queue_op[1][o->core[k].running[ISA_QUEUE_DMA] ? c->dq_kind : PROFILE_OP_STOPPED];
  c->fast_wait = running[k] && op == ISA_OP_SEM_WAIT && cls != PROFILE_IDLE_OTHER
                     ? &c->wait[k][ISA_GET(cmd, SEM_WAIT, sem) % ISA_NUM_SEMS]
                     : &c->wait_sink;
  ++*c->fast_cq, ++*c->fast_dq, ++*c->fast_wait;
  /* what the next cycles may add to without a look (on_tick) */
  c->fast_host = c->p->cur_phase;
  c->fast_pc0 = o->core[0].pc[ISA_QUEUE_COMPUTE];
  c->fast_net = (o->rtr_in_valid | o->rtr_out_valid) != 0;
  c->fast_vec = vec;
  c->fast_semdep = running[k] && op == ISA_OP_SEM_WAIT, c->fast_dma = dma_busy, c->fast_rbusy = rbusy != 0;
  c->run_phase = phase, c->run_hbm0 = c->last_hbm;
  c->end = t + 1;
}

static void on_skip(void *ctx, uint64_t t, uint64_t n, const chip_core_status_t *st, const uint64_t before[],
                    const uint64_t after[]) {
  pchip_t *c = ctx;
  const unsigned phase = phase_of(c, st->pc[ISA_QUEUE_COMPUTE]);
  if (!c->seen) {
    c->seen = true;
    c->first = t;
    c->bucket_t = t - t % c->p->cfg.bucket;
    memcpy(c->last_cnt, before, sizeof c->last_cnt);
    for (unsigned k = 0; k < c->cores; k++)
      for (unsigned s = 0; s < ISA_NUM_SEMS; s++) c->sems[k][s] = chip_sem(c->chip, k * ISA_NUM_SEMS + s);
  }
  fast_flush(c);
  flush_prev(c, before);
  roll_bucket(c, t);
  c->sig_valid = false;
  for (unsigned q = 0; q < c->queues; q++) queue_state(c, q, t, st->running[q], st->pc[q]);
  /* the units that stay busy through the stretch: as many as the counters say (nothing
   * changes in it, so the ones busy before it) */
  uint64_t dmas = n ? (after[CHIP_CNT_DMA_BUSY] - before[CHIP_CNT_DMA_BUSY]) / n : 0;
  uint64_t mxus = n ? (after[CHIP_CNT_MXU_BUSY] - before[CHIP_CNT_MXU_BUSY]) / n : 0;
  bool keep[CHIP_MAX_CORES][UNITS] = {{false}};
  for (unsigned pass = 0; pass < 2; pass++) /* first the ones busy before, then any */
    for (unsigned k = 0; k < c->cores; k++) {
      if (dmas && !keep[k][0] && (pass || c->unit[k][0].open)) keep[k][0] = true, dmas--;
      for (unsigned m = 0; m < c->mxus; m++)
        if (mxus && !keep[k][2 + m] && (pass || c->unit[k][2 + m].open)) keep[k][2 + m] = true, mxus--;
    }
  for (unsigned k = 0; k < c->cores; k++)
    for (unsigned u = 0; u < UNITS; u++)
      unit_state(c, &c->unit[k][u], t, keep[k][u], k,
                 u == 0 ? PROFILE_UNIT_DMA : u == 1 ? PROFILE_UNIT_VEC : PROFILE_UNIT_MXU, u >= 2 ? u - 2 : 0);
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++) unit_state(c, &c->rdma[e], t, false, 0, PROFILE_UNIT_RDMA, e);
  /* the idle cause of the stretch */
  bool running[CHIP_MAX_CORES];
  for (unsigned k = 0; k < c->cores; k++) running[k] = st->running[k * ISA_NUM_QUEUES + ISA_QUEUE_COMPUTE];
  const unsigned k = lead_core(c, running);
  const uint32_t *cmd;
  const uint32_t op = opcode_at(c, k * ISA_NUM_QUEUES, st->pc[k * ISA_NUM_QUEUES], &cmd);
  const int cls = idle_class(c, k, running[k], cmd, c->sems[k], after[CHIP_CNT_DMA_BUSY] != before[CHIP_CNT_DMA_BUSY],
                             false, NULL);
  if (running[k] && op == ISA_OP_SEM_WAIT && cls != PROFILE_IDLE_OTHER) c->wait[k][ISA_GET(cmd, SEM_WAIT, sem) % ISA_NUM_SEMS] += n;
  c->ph[phase].queue_op[0][running[k] ? op_kind(cmd) : PROFILE_OP_STOPPED] += n;
  const unsigned dq = k * ISA_NUM_QUEUES + ISA_QUEUE_DMA;
  const uint32_t *dcmd;
  opcode_at(c, dq, st->pc[dq], &dcmd);
  c->ph[phase].queue_op[1][st->running[dq] ? op_kind(dcmd) : PROFILE_OP_STOPPED] += n;
  uint64_t d[CHIP_OBS_COUNTERS];
  for (int i = 0; i < CHIP_OBS_COUNTERS; i++) d[i] = after[i] - before[i];
  account(c, phase, n, cls, d);
  memcpy(c->last_cnt, after, sizeof c->last_cnt);
  c->rdma_we_prev = false;
  c->end = t + n;
}

static const chip_observer_t observer = {on_tick, on_skip};

void profile_run_end(profile_t *p) {
  if (!p) return;
  stream_join(p); /* (the last run is in the file; this one is next) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c || !c->chip || !c->seen) continue;
    uint64_t now[CHIP_OBS_COUNTERS];
    chip_counters(c->chip, now);
    fast_flush(c);
    flush_prev(c, now);
    c->sig_valid = c->cmd_valid = c->dq_valid = false; /* (the next run's programs may differ) */
    const uint64_t t = c->end;
    for (unsigned q = 0; q < c->queues; q++) queue_state(c, q, t, false, 0);
    for (unsigned k = 0; k < c->cores; k++) {
      for (unsigned u = 0; u < UNITS; u++)
        unit_state(c, &c->unit[k][u], t, false, k, u == 0 ? PROFILE_UNIT_DMA : u == 1 ? PROFILE_UNIT_VEC : PROFILE_UNIT_MXU,
                   u >= 2 ? u - 2 : 0);
      for (unsigned s = 0; s < ISA_NUM_SEMS; s++) close_land(c, k, s);
    }
    for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++) unit_state(c, &c->rdma[e], t, false, 0, PROFILE_UNIT_RDMA, e);
    if (c->end > c->bucket_t) {
      sample(c, c->end - c->bucket_t);
      memset(c->bflits, 0, sizeof c->bflits);
      c->bucket_hbm0 = c->last_hbm;
      c->bucket_t = c->end; /* the next bucket starts where the run ended */
    }
  }
  /* every chip's records so far make a run (the same count of runs on every MPI rank) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    if (c->nruns == c->runs_cap) {
      const unsigned cap = c->runs_cap ? 2 * c->runs_cap : 16;
      size_t *r = realloc(c->runs, cap * sizeof *r);
      if (!r) { /* (out of memory: the run is merged with the next; the trace stays whole) */
        continue;
      }
      c->runs = r, c->runs_cap = cap;
    }
    c->runs[c->nruns++] = c->n;
  }
  stream_run(p);
}

const profile_ev_t *profile_events(const profile_t *p, unsigned index, size_t *n) {
  *n = 0;
  if (index >= p->nchips || !p->chip[index]) return NULL;
  *n = p->chip[index]->n;
  return p->chip[index]->ev;
}

void profile_span(const profile_t *p, unsigned index, uint64_t *first, uint64_t *end) {
  *first = *end = 0;
  if (index < p->nchips && p->chip[index]) *first = p->chip[index]->first, *end = p->chip[index]->end;
}

/* ---- the op profile */
static void add_stats(profile_phase_stats_t *a, const profile_phase_stats_t *b) {
  a->chip_cycles += b->chip_cycles, a->mxu_cycles += b->mxu_cycles;
  a->compute += b->compute, a->mxu_busy += b->mxu_busy, a->weight_load += b->weight_load;
  for (int i = 0; i < PROFILE_IDLE_CAUSES; i++) a->idle[i] += b->idle[i];
  a->dma_busy += b->dma_busy, a->vec_busy += b->vec_busy, a->hbm_bytes += b->hbm_bytes;
  for (int d = 0; d < 4; d++) a->link_flits[d] += b->link_flits[d];
  for (int q = 0; q < 2; q++)
    for (int o = 0; o < PROFILE_OPS; o++) a->queue_op[q][o] += b->queue_op[q][o];
}

void profile_summary(const profile_t *p, profile_summary_t *s) {
  static const char *const dir[4] = {"+X", "-X", "+Y", "-Y"};
  memset(s, 0, sizeof *s);
  s->clock_mhz = p->cfg.clock_mhz;
  s->rows = p->cfg.rows, s->cols = p->cfg.cols;
  s->phases = p->phases;
  for (unsigned f = 0; f < p->phases; f++) snprintf(s->phase[f].name, sizeof s->phase[f].name, "%s", p->phase_name[f]);
  snprintf(s->total.name, sizeof s->total.name, "total");
  double best_link = -1;
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (!c || !c->seen) continue;
    s->chips++;
    s->mxus_per_chip = c->mxus * c->cores;
    s->events += c->n, s->events_dropped += c->dropped;
    uint64_t flits[4] = {0}, cycles = 0;
    for (unsigned f = 0; f < p->phases; f++) {
      add_stats(&s->phase[f], &c->ph[f]);
      if (c->ph[f].chip_cycles > s->phase[f].cycles) s->phase[f].cycles = c->ph[f].chip_cycles;
      for (int d = 0; d < 4; d++) flits[d] += c->ph[f].link_flits[d];
      cycles += c->ph[f].chip_cycles;
    }
    for (int d = 0; d < 4; d++) {
      const double u = cycles ? (double)flits[d] / (double)cycles : 0;
      if (u > best_link) best_link = u, s->busiest_chip = i, s->busiest_dir = (unsigned)d, s->busiest_util = u;
    }
    for (unsigned k = 0; k < c->cores; k++)
      for (unsigned q = 0; q < ISA_NUM_SEMS; q++)
        if (c->wait[k][q] > s->wait_cycles) s->wait_cycles = c->wait[k][q], s->wait_chip = i, s->wait_core = k, s->wait_sem = q;
  }
  for (unsigned f = 0; f < p->phases; f++) {
    add_stats(&s->total, &s->phase[f]);
    s->total.cycles += s->phase[f].cycles;
  }
  const profile_phase_stats_t *t = &s->total;
  const double avail = t->mxu_cycles ? (double)t->mxu_cycles : 1;
  const double util = (double)t->compute / avail;
  /* the largest cause; "nothing to do" only when it outweighs every other cause together (the
   * chips sit idle), as phases without MXU work (copies, collectives) would otherwise name it */
  s->bottleneck = -1;
  uint64_t most = 0, others = 0;
  for (int i = 0; i < PROFILE_IDLE_CAUSES; i++) {
    if (i == PROFILE_IDLE_NOTHING) continue;
    others += t->idle[i];
    if (t->idle[i] > most) most = t->idle[i], s->bottleneck = i;
  }
  if (t->idle[PROFILE_IDLE_NOTHING] > others) most = t->idle[PROFILE_IDLE_NOTHING], s->bottleneck = PROFILE_IDLE_NOTHING;
  if (util >= 0.5 || most == 0) s->bottleneck = -1;
  const unsigned w = p->cfg.pod_w ? p->cfg.pod_w : 1;
  char *b = s->bottleneck_line;
  const size_t bl = sizeof s->bottleneck_line;
  const double share = s->bottleneck >= 0 ? 100.0 * (double)t->idle[s->bottleneck] / avail : 0;
  switch (s->bottleneck) {
    case -1: snprintf(b, bl, "compute: the MXUs compute %.1f%% of their cycles", 100 * util); break;
    case PROFILE_IDLE_WEIGHTS:
      snprintf(b, bl, "weights: the MXUs wait for weights %.1f%% of their cycles (loads not hidden behind matmuls)", share);
      break;
    case PROFILE_IDLE_INPUTS:
      snprintf(b, bl, "inputs: the MXUs wait for activation rows %.1f%% of their cycles", share);
      break;
    case PROFILE_IDLE_SEMAPHORE:
      snprintf(b, bl, "a semaphore: the compute queues wait with nothing moving %.1f%% of the MXU cycles; longest: chip %u "
               "(%u,%u) core %u semaphore %u, %" PRIu64 " cycles", share, s->wait_chip, s->wait_chip % w, s->wait_chip / w,
               s->wait_core, s->wait_sem, s->wait_cycles);
      break;
    case PROFILE_IDLE_DMA:
      snprintf(b, bl, "DMA: the compute queues wait for the DMA engines %.1f%% of the MXU cycles (HBM traffic %.2f bytes "
               "a chip-cycle)", share, t->chip_cycles ? (double)t->hbm_bytes / (double)t->chip_cycles : 0.0);
      break;
    case PROFILE_IDLE_NETWORK:
      snprintf(b, bl, "the network: the compute queues wait for remote data %.1f%% of the MXU cycles; busiest link: chip "
               "%u (%u,%u) %s at %.1f%%", share, s->busiest_chip, s->busiest_chip % w, s->busiest_chip / w,
               dir[s->busiest_dir], 100 * s->busiest_util);
      break;
    case PROFILE_IDLE_NOTHING:
      snprintf(b, bl, "nothing to do: the compute queues have stopped %.1f%% of the MXU cycles (work ends unevenly, or the "
               "phase has no MXU work)", share);
      break;
    default:
      snprintf(b, bl, "other work: the compute queues issue vector work, stores or wait for the MXU's pipeline %.1f%% of "
               "the MXU cycles", share);
      break;
  }
}

/* ---- the trace */
enum { TID_QUEUE = 1, TID_CORE = 10, TID_RDMA = 40, TID_SEM = 100 };
static unsigned unit_tid(unsigned core, unsigned unit, unsigned index) {
  switch (unit) {
    case PROFILE_UNIT_DMA: return TID_CORE + 10 * core;
    case PROFILE_UNIT_VEC: return TID_CORE + 10 * core + 1;
    case PROFILE_UNIT_MXU: return TID_CORE + 10 * core + 2 + index;
    default: return TID_RDMA + index;
  }
}

/* The trace's writer: its own buffer (stdio's locking per call was most of a trace's time),
 * room for an event made once (ev_begin), then the event's pieces appended without checks:
 * literals by their compile-time length, numbers by a two-digit table (printf's parsing and
 * strlen were most of the rest). */
#define TW_EVENT_MAX 1024 /* bytes an event (but for wprintf's, which check) may take */
typedef struct tw {
  FILE *f;                /* NULL: the text stays in buf, which grows (a writer thread's part) */
  double units_per_cycle; /* 0.1 ns units per cycle: 1e4 / MHz */
  bool first;
  char *buf;
  size_t n, cap;
  bool oom;               /* (memory mode: buf could not grow; the text is incomplete) */
} tw_t;

static void wflush(tw_t *w) {
  if (w->n && w->f) fwrite(w->buf, 1, w->n, w->f), w->n = 0;
}

static void wgrow(tw_t *w, size_t len) {
  if (w->f) {
    wflush(w);
    return;
  }
  size_t cap = w->cap;
  while (w->n + len > cap) cap *= 2;
  char *b = realloc(w->buf, cap);
  if (!b) { /* (keep writing over the old text: the caller sees oom and fails) */
    w->oom = true, w->n = 0;
    return;
  }
  w->buf = b, w->cap = cap;
}

/* Makes room for len bytes: the file's buffer flushed, or the memory's grown. */
static inline void wroom(tw_t *w, size_t len) {
  if (w->n + len > w->cap) wgrow(w, len);
}

static inline void wput(tw_t *w, const char *s, size_t len) {
  wroom(w, len);
  if (len > w->cap - w->n) {
    if (w->f) fwrite(s, 1, len, w->f);
    return;
  }
  memcpy(w->buf + w->n, s, len);
  w->n += len;
}

static inline void wputs(tw_t *w, const char *s) { wput(w, s, strlen(s)); }

/* Appends a string literal (room made by ev_begin). */
#define WLIT(w, lit) (memcpy((w)->buf + (w)->n, (lit), sizeof(lit) - 1), (w)->n += sizeof(lit) - 1)

static void wprintf(tw_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wprintf(tw_t *w, const char *fmt, ...) {
  char b[1024];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(b, sizeof b, fmt, ap);
  va_end(ap);
  if (n > 0) wput(w, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

/* Cycle t in units of 0.1 ns (the trace's timestamps are microseconds with four decimals:
 * slices that touch in cycles touch in the file). */
static inline int64_t units(const tw_t *w, uint64_t t) { return (int64_t)((double)t * w->units_per_cycle + 0.5); }

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";

/* v's decimal digits, at least `min` of them (zeros in front), ending at end: their start. */
static inline char *digits(char *end, uint64_t v, int min) {
  char *p = end;
  while (v >= 100) {
    const unsigned r = (unsigned)(v % 100);
    v /= 100;
    p -= 2, memcpy(p, digits2 + 2 * r, 2);
  }
  if (v >= 10) p -= 2, memcpy(p, digits2 + 2 * v, 2);
  else *--p = (char)('0' + v);
  while (end - p < min) *--p = '0';
  return p;
}

/* How many decimal digits v has. */
static inline unsigned ndigits(uint64_t v) {
  unsigned n = 1;
  for (; v >= 10000; v /= 10000) n += 4;
  return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Appends v (room made), its digits written in place. */
static inline void put_u(tw_t *w, uint64_t v) {
  const unsigned n = ndigits(v);
  digits(w->buf + w->n + n, v, 1);
  w->n += n;
}

/* Appends v, a non-negative count of 0.1 ns units, as microseconds "123.4567" (room made), in
 * place, without printf's floats. */
static inline void put_fix4(tw_t *w, int64_t v) {
  const uint64_t u = v < 0 ? 0 : (uint64_t)v, whole = u / 10000;
  const unsigned n = ndigits(whole);
  char *o = w->buf + w->n;
  digits(o + n, whole, 1);
  o[n] = '.';
  digits(o + n + 5, u % 10000, 4);
  w->n += n + 5;
}

/* Starts an event, with room for TW_EVENT_MAX bytes of it. */
static void ev_begin(tw_t *w) {
  wroom(w, TW_EVENT_MAX);
  if (w->first) WLIT(w, "\n");
  else WLIT(w, ",\n");
  w->first = false;
}

static void meta(tw_t *w, unsigned pid, int tid, const char *what, const char *name, int sort) {
  ev_begin(w);
  if (tid < 0)
    wprintf(w, "{\"ph\":\"M\",\"pid\":%u,\"name\":\"%s\",\"args\":{\"%s\":", pid, what,
            strcmp(what, "process_sort_index") ? "name" : "sort_index");
  else
    wprintf(w, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%d,\"name\":\"%s\",\"args\":{\"%s\":", pid, tid, what,
            strcmp(what, "thread_sort_index") ? "name" : "sort_index");
  if (name) wprintf(w, "\"%s\"}}", name);
  else wprintf(w, "%d}}", sort);
}

static void thread(tw_t *w, unsigned pid, unsigned tid, const char *name) {
  meta(w, pid, (int)tid, "thread_name", name, 0);
  meta(w, pid, (int)tid, "thread_sort_index", NULL, (int)tid);
}

/* ,"key":v (room made) */
#define KV(w, key, v) (WLIT(w, ",\"" key "\":"), put_u(w, v))

static void queue_args(tw_t *w, const uint32_t *cmd, uint32_t op) {
  if (!cmd) return;
  switch (op) {
    case ISA_OP_SEM_WAIT:
    case ISA_OP_SEM_SIGNAL:
      KV(w, "sem", ISA_GET(cmd, SEM_WAIT, sem)), KV(w, "value", ISA_GET(cmd, SEM_WAIT, value));
      break;
    case ISA_OP_DMA:
      KV(w, "kind", ISA_GET(cmd, DMA, kind)), KV(w, "hbm_addr", ISA_GET(cmd, DMA, hbm_addr));
      KV(w, "line", ISA_GET(cmd, DMA, line)), KV(w, "rows", ISA_GET(cmd, DMA, rows));
      KV(w, "bytes", ISA_GET(cmd, DMA, bytes)), KV(w, "sem", ISA_GET(cmd, DMA, sem));
      break;
    case ISA_OP_MXU_LOAD:
      KV(w, "mxu", ISA_GET(cmd, MXU_LOAD, mxu)), KV(w, "line", ISA_GET(cmd, MXU_LOAD, line));
      KV(w, "transpose", ISA_GET(cmd, MXU_LOAD, transpose));
      break;
    case ISA_OP_MXU_MATMUL:
      KV(w, "mxu", ISA_GET(cmd, MXU_MATMUL, mxu)), KV(w, "line", ISA_GET(cmd, MXU_MATMUL, line));
      KV(w, "rows", ISA_GET(cmd, MXU_MATMUL, rows)), KV(w, "acc_row", ISA_GET(cmd, MXU_MATMUL, acc_row));
      KV(w, "accumulate", ISA_GET(cmd, MXU_MATMUL, accumulate));
      break;
    case ISA_OP_MXU_STORE:
      KV(w, "mxu", ISA_GET(cmd, MXU_STORE, mxu)), KV(w, "acc_row", ISA_GET(cmd, MXU_STORE, acc_row));
      KV(w, "rows", ISA_GET(cmd, MXU_STORE, rows)), KV(w, "line", ISA_GET(cmd, MXU_STORE, line));
      break;
    case ISA_OP_VEC:
      KV(w, "op", ISA_GET(cmd, VEC, op)), KV(w, "a", ISA_GET(cmd, VEC, a)), KV(w, "b", ISA_GET(cmd, VEC, b));
      KV(w, "dst", ISA_GET(cmd, VEC, dst)), KV(w, "rows", ISA_GET(cmd, VEC, rows));
      break;
    case ISA_OP_RDMA:
      KV(w, "dest_x", ISA_GET(cmd, RDMA, x)), KV(w, "dest_y", ISA_GET(cmd, RDMA, y));
      KV(w, "dest_core", ISA_GET(cmd, RDMA, core)), KV(w, "engine", ISA_GET(cmd, RDMA, engine));
      KV(w, "rows", ISA_GET(cmd, RDMA, rows)), KV(w, "remote_sem", ISA_GET(cmd, RDMA, remote_sem));
      break;
    default: break;
  }
}

/* {"ph":"X","pid":P,"tid":T,"ts":TS,"dur":DUR,"name":" (room made) */
static void x_head(tw_t *w, unsigned pid, unsigned tid, uint64_t t0, uint64_t t1) {
  const int64_t u0 = units(w, t0), u1 = units(w, t1);
  WLIT(w, "{\"ph\":\"X\",\"pid\":");
  put_u(w, pid);
  WLIT(w, ",\"tid\":");
  put_u(w, tid);
  WLIT(w, ",\"ts\":");
  put_fix4(w, u0);
  WLIT(w, ",\"dur\":");
  put_fix4(w, u1 - u0);
  WLIT(w, ",\"name\":\"");
}

/* A counter event's start: {"ph":"C","pid":P,"ts":TS (room made) */
static void c_head(tw_t *w, unsigned pid, uint64_t t) {
  ev_begin(w);
  WLIT(w, "{\"ph\":\"C\",\"pid\":");
  put_u(w, pid);
  WLIT(w, ",\"ts\":");
  put_fix4(w, units(w, t));
}

/* A chip's semaphore landings sorted by (core * ISA_NUM_SEMS + semaphore, first cycle), for the
 * flows' ends. */
typedef struct {
  uint64_t key, t0;
} land_ix_t;
typedef struct {
  land_ix_t *ix;
  size_t n;
} land_index_t;

/* (A semaphore's landings are recorded in the order they happen, one closing before the next
 * opens, so a stable counting sort by key orders them by (key, first cycle): no qsort, whose
 * calls back were half a trace's writing.) */
static int land_index(const pchip_t *c, land_index_t *li) {
  enum { KEYS = CHIP_MAX_CORES * ISA_NUM_SEMS };
  li->n = 0;
  li->ix = NULL;
  size_t start[KEYS + 1] = {0};
  for (size_t i = 0; i < c->n; i++)
    if (c->ev[i].kind == PROFILE_EV_SEM) start[1 + (c->ev[i].core % CHIP_MAX_CORES) * ISA_NUM_SEMS + c->ev[i].index % ISA_NUM_SEMS]++;
  for (unsigned k = 0; k < KEYS; k++) start[k + 1] += start[k];
  const size_t n = start[KEYS];
  if (!n) return 0;
  if (!(li->ix = malloc(n * sizeof *li->ix))) return -1;
  for (size_t i = 0; i < c->n; i++)
    if (c->ev[i].kind == PROFILE_EV_SEM) {
      const uint64_t key = (uint64_t)(c->ev[i].core % CHIP_MAX_CORES) * ISA_NUM_SEMS + c->ev[i].index % ISA_NUM_SEMS;
      li->ix[start[key]++] = (land_ix_t){key, c->ev[i].t0};
    }
  li->n = n;
  return 0;
}

/* Where the flow of RDMA send e ends: the receiving chip ri's first landing on the RDMA's
 * semaphore after the send, at cycle *at (landings: land_index). False: none. */
static bool flow_end(const profile_t *p, const land_index_t *lands, const profile_ev_t *e, unsigned *ri, uint64_t *at) {
  const unsigned dx = e->a & 0xFF, dy = e->a >> 8 & 0xFF, dk = e->a >> 16 & 3;
  if (dx >= p->cfg.pod_w || dy >= p->cfg.pod_h) return false;
  const unsigned r = dy * p->cfg.pod_w + dx;
  if (!p->chip[r] || !lands[r].n) return false;
  const uint64_t key = (uint64_t)dk * ISA_NUM_SEMS + e->b;
  size_t lo = 0, hi = lands[r].n; /* the first (key, t0) after (key, e->t0) */
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const land_ix_t *m = &lands[r].ix[mid];
    if (m->key < key || (m->key == key && m->t0 <= e->t0)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == lands[r].n || lands[r].ix[lo].key != key) return false;
  *ri = r, *at = lands[r].ix[lo].t0;
  return true;
}

/* The trace is in run order (so that it can be written while the runs go on, profile_run_end):
 * for each run, each chip's slices of the run (queue commands, unit intervals, semaphore
 * landings), a chip's process and tracks named before its first slices and a semaphore's track
 * before its first landing; then each chip's flows and counters (write_chip_tail); then the
 * host's phases and otherData. The writer that streams and the one that writes at the end
 * (profile_write) make the same bytes. */

/* Names chip c's process and its tracks but the semaphores' (its first slices follow). */
static void name_chip(tw_t *w, const pchip_t *c) {
  const unsigned pid = c->index + 1;
  static const char *const qn[ISA_NUM_QUEUES] = {"compute queue", "DMA queue"};
  char name[96];
  snprintf(name, sizeof name, "chip %u (%u,%u)", c->index, c->x, c->y);
  meta(w, pid, -1, "process_name", name, 0);
  meta(w, pid, -1, "process_sort_index", NULL, (int)c->index);
  for (unsigned k = 0; k < c->cores; k++) {
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) {
      snprintf(name, sizeof name, "core %u %s", k, qn[q]);
      thread(w, pid, TID_QUEUE + k * ISA_NUM_QUEUES + q, name);
    }
    snprintf(name, sizeof name, "core %u DMA engine", k);
    thread(w, pid, unit_tid(k, PROFILE_UNIT_DMA, 0), name);
    snprintf(name, sizeof name, "core %u vector unit", k);
    thread(w, pid, unit_tid(k, PROFILE_UNIT_VEC, 0), name);
    for (unsigned m = 0; m < c->mxus; m++) {
      snprintf(name, sizeof name, "core %u MXU %u", k, m);
      thread(w, pid, unit_tid(k, PROFILE_UNIT_MXU, m), name);
    }
  }
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++) {
    snprintf(name, sizeof name, "remote-DMA engine %u", e);
    thread(w, pid, unit_tid(0, PROFILE_UNIT_RDMA, e), name);
  }
}

/* Chip c's slices of records ev[from, to) (one run's), after the names they need. */
static void write_slices(tw_t *w, pchip_t *c, const profile_ev_t *ev, size_t from, size_t to) {
  if (from >= to) return;
  const unsigned pid = c->index + 1;
  if (!c->named) name_chip(w, c), c->named = true;
  uint32_t fresh[CHIP_MAX_CORES] = {0}; /* semaphore tracks first used here, named in (core, semaphore) order */
  for (size_t i = from; i < to; i++)
    if (ev[i].kind == PROFILE_EV_SEM) fresh[ev[i].core % CHIP_MAX_CORES] |= 1u << (ev[i].index % ISA_NUM_SEMS);
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++) {
    for (uint32_t m = fresh[k] & ~c->sems_named[k]; m; m &= m - 1) {
      const unsigned s = (unsigned)__builtin_ctz(m);
      char name[96];
      snprintf(name, sizeof name, "core %u semaphore %u raised", k, s);
      thread(w, pid, TID_SEM + 32 * k + s, name);
    }
    c->sems_named[k] |= fresh[k];
  }
  for (size_t i = from; i < to; i++) {
    const profile_ev_t *e = &ev[i];
    if (e->kind == PROFILE_EV_SEND) continue; /* (flows: write_chip_tail) */
    ev_begin(w);
    if (e->kind == PROFILE_EV_QUEUE) {
      const unsigned q = e->core * ISA_NUM_QUEUES + e->unit;
      const uint32_t op = e->b, *cmd = isa_opcode(e->cmd) == op && op ? e->cmd : NULL;
      const char *on = isa_opcode_name(op) ? isa_opcode_name(op) : "?";
      x_head(w, pid, TID_QUEUE + q, e->t0, e->t1);
      if (op == ISA_OP_SEM_WAIT && cmd) {
        WLIT(w, "wait sem ");
        put_u(w, ISA_GET(cmd, SEM_WAIT, sem));
        WLIT(w, "\",\"cat\":\"wait\",\"args\":{\"pc\":");
      } else {
        const size_t len = strnlen(on, 32);
        memcpy(w->buf + w->n, on, len), w->n += len;
        WLIT(w, "\",\"cat\":\"command\",\"args\":{\"pc\":");
      }
      put_u(w, e->a);
      KV(w, "cycles", e->t1 - e->t0);
      queue_args(w, cmd, op);
      WLIT(w, "}}");
    } else if (e->kind == PROFILE_EV_UNIT) {
      static const char *const un[4] = {"DMA\",\"args\":{\"cycles\":", "VEC\",\"args\":{\"cycles\":",
                                        "MXU\",\"args\":{\"cycles\":", "RDMA\",\"args\":{\"cycles\":"};
      static const size_t unl[4] = {sizeof "DMA\",\"args\":{\"cycles\":" - 1, sizeof "VEC\",\"args\":{\"cycles\":" - 1,
                                    sizeof "MXU\",\"args\":{\"cycles\":" - 1, sizeof "RDMA\",\"args\":{\"cycles\":" - 1};
      x_head(w, pid, unit_tid(e->core, e->unit, e->index), e->t0, e->t1);
      WLIT(w, "busy\",\"cat\":\"");
      memcpy(w->buf + w->n, un[e->unit & 3], unl[e->unit & 3]), w->n += unl[e->unit & 3];
      put_u(w, e->t1 - e->t0);
      WLIT(w, "}}");
    } else {
      x_head(w, pid, TID_SEM + 32 * e->core + e->index, e->t0, e->t1);
      WLIT(w, "sem ");
      put_u(w, e->index);
      WLIT(w, " +");
      put_u(w, e->b);
      WLIT(w, "\",\"cat\":\"semaphore\",\"args\":{\"added\":");
      put_u(w, e->b);
      KV(w, "cycles", e->t1 - e->t0);
      WLIT(w, "}}");
    }
  }
}

/* Chip c's flows and counters (after every run's slices). */
static void write_chip_tail(tw_t *w, const profile_t *p, const pchip_t *c, const land_index_t *lands, uint64_t *flow_id) {
  const unsigned pid = c->index + 1;
  /* flows: each RDMA with a remote semaphore to the first landing on that semaphore at the
   * receiver after the send (flow_end) */
  for (size_t i = 0; i < c->n; i++) {
    const profile_ev_t *e = &c->ev[i];
    unsigned ri;
    uint64_t at;
    if (e->kind != PROFILE_EV_SEND || !flow_end(p, lands, e, &ri, &at)) continue;
    const pchip_t *r = p->chip[ri];
    const unsigned dk = e->a >> 16 & 3;
    const uint64_t id = ++*flow_id;
    ev_begin(w);
    WLIT(w, "{\"ph\":\"s\",\"id\":");
    put_u(w, id);
    WLIT(w, ",\"pid\":");
    put_u(w, pid);
    WLIT(w, ",\"tid\":");
    put_u(w, TID_QUEUE + e->core * ISA_NUM_QUEUES + ISA_QUEUE_DMA);
    WLIT(w, ",\"ts\":");
    put_fix4(w, units(w, e->t0));
    WLIT(w, ",\"name\":\"RDMA\",\"cat\":\"rdma\"}");
    ev_begin(w);
    WLIT(w, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    put_u(w, id);
    WLIT(w, ",\"pid\":");
    put_u(w, r->index + 1);
    WLIT(w, ",\"tid\":");
    put_u(w, TID_SEM + 32 * dk + e->b);
    WLIT(w, ",\"ts\":");
    put_fix4(w, units(w, at));
    WLIT(w, ",\"name\":\"RDMA\",\"cat\":\"rdma\"}");
  }
  /* counters: each link's utilisation and the HBM's bandwidth, per bucket */
  for (size_t i = 0; i < c->ns; i++) {
    const sample_t *s = &c->smp[i];
    const double cyc = s->len ? (double)s->len : 1.0;
    c_head(w, pid, s->t);
    wprintf(w, ",\"name\":\"link utilisation\",\"args\":{\"+X\":%.4f,\"-X\":%.4f,\"+Y\":%.4f,\"-Y\":%.4f}}",
            s->flits[0] / cyc, s->flits[1] / cyc, s->flits[2] / cyc, s->flits[3] / cyc);
    c_head(w, pid, s->t);
    wprintf(w, ",\"name\":\"HBM GB/s\",\"args\":{\"GB/s\":%.3f}}", (double)s->hbm / cyc * p->cfg.clock_mhz * 1e-3);
  }
}

/* The host's phases as slices on a process of their own ("host phases", after the chips'), each
 * from its start to the next one's (the last to the end of the profiled chips' runs): where a
 * run (a randprog set, a training step) lies on the timeline. */
static void write_host_phases(tw_t *w, const profile_t *p) {
  uint64_t end = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->seen && p->chip[i]->end > end) end = p->chip[i]->end;
  if (!p->nhost || !end) return;
  const unsigned pid = p->nchips + 1;
  meta(w, pid, -1, "process_name", "host phases", 0);
  meta(w, pid, -1, "process_sort_index", NULL, -1);
  thread(w, pid, 1, "phase");
  for (size_t i = 0; i < p->nhost; i++) {
    const uint64_t t0 = p->host[i].cycle;
    uint64_t t1 = i + 1 < p->nhost ? p->host[i + 1].cycle : p->host_full ? p->host_cut : end;
    if (t1 > end) t1 = end;
    if (t0 >= t1) continue; /* (nothing ran in it) */
    ev_begin(w);
    x_head(w, pid, 1, t0, t1);
    wputs(w, p->host[i].name);
    wputs(w, "\",\"cat\":\"phase\",\"args\":{\"cycles\":");
    put_u(w, t1 - t0);
    wputs(w, "}}");
  }
}

/* The chips' events, formatted by up to PROFILE_MAX_WRITERS threads (profile_config_t.writers),
 * each a run of chips into memory (the first straight into w), then written in order. The
 * flows' ids are numbered from each chip's count of flows before it, so the file is the same
 * bytes on any number of threads. */
typedef struct {
  const profile_t *p;
  const land_index_t *lands; /* NULL: the chips' slices of snap_ev[snap_from, snap_to); else their flows and counters */
  unsigned from, to;   /* chips [from, to) */
  uint64_t flow0;      /* the flows before chip `from` */
  tw_t w;
} wpart_t;

static size_t part_records(const pchip_t *c, bool slices) { return (slices ? c->snap_to - c->snap_from : c->n) + 1; }

static void *write_part(void *arg) {
  wpart_t *a = arg;
  uint64_t flow = a->flow0;
  for (unsigned i = a->from; i < a->to; i++) {
    pchip_t *c = a->p->chip[i];
    if (!c || !c->seen) continue;
    if (a->lands) write_chip_tail(&a->w, a->p, c, a->lands, &flow);
    else write_slices(&a->w, c, c->snap_ev, c->snap_from, c->snap_to);
  }
  return NULL;
}

/* lands NULL: every chip's slices of snap_ev[snap_from, snap_to) (a run's); else every chip's
 * flows and counters. */
static int write_chips(tw_t *w, const profile_t *p, const land_index_t *lands) {
  /* parts of about equal records, as many as there are processors to spare (formatting is
   * nearly all of a trace's writing) */
  const bool slices = !lands;
  size_t records = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->seen) records += part_records(p->chip[i], slices);
  unsigned parts = p->cfg.writers;
  if (!parts) {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    parts = records < 100000 ? 1 : cpus > PROFILE_MAX_WRITERS ? PROFILE_MAX_WRITERS : cpus > 1 ? (unsigned)cpus : 1;
  }
  if (parts > PROFILE_MAX_WRITERS) parts = PROFILE_MAX_WRITERS;
  wpart_t part[PROFILE_MAX_WRITERS];
  uint64_t flows = 0;
  size_t acc = 0;
  unsigned k = 0;
  part[0] = (wpart_t){p, lands, 0, 0, 0, *w};
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (c && c->seen && k + 1 < parts && acc >= records / parts * (k + 1)) {
      part[k].to = i;
      k++;
      part[k] = (wpart_t){p, lands, i, i, flows, {NULL, w->units_per_cycle, false, malloc(1 << 20), 0, 1 << 20, false}};
      if (!part[k].w.buf) part[k].w.oom = true;
    }
    if (c && c->seen) {
      acc += part_records(c, slices);
      if (parts > 1 && !slices) { /* the flows this chip will draw */
        unsigned ri;
        uint64_t at;
        for (size_t j = 0; j < c->n; j++) flows += c->ev[j].kind == PROFILE_EV_SEND && flow_end(p, lands, &c->ev[j], &ri, &at);
      }
    }
  }
  part[k].to = p->nchips;
  parts = k + 1;
  pthread_t th[PROFILE_MAX_WRITERS];
  bool started[PROFILE_MAX_WRITERS] = {false};
  for (unsigned j = 1; j < parts; j++) started[j] = !part[j].w.oom && pthread_create(&th[j], NULL, write_part, &part[j]) == 0;
  write_part(&part[0]);
  *w = part[0].w;
  bool oom = w->oom;
  for (unsigned j = 1; j < parts; j++) {
    if (started[j]) pthread_join(th[j], NULL);
    else if (!part[j].w.oom) write_part(&part[j]); /* (no thread: done here) */
    oom = oom || part[j].w.oom;
    if (!oom && part[j].w.n) {
      const bool lead = w->first; /* (nothing written yet: its first event needs no comma) */
      wput(w, part[j].w.buf + lead, part[j].w.n - lead);
      w->first = false;
    }
    free(part[j].w.buf);
  }
  return oom ? -1 : 0;
}

/* Opens path's file beside it (tmp: its name) with the trace's head written: the writer. */
static tw_t *trace_open(const profile_t *p, const char *path, char **tmp, char *err, size_t errlen) {
  const size_t len = strlen(path) + 32;
  tw_t *w = calloc(1, sizeof *w);
  *tmp = malloc(len);
  if (!w || !*tmp || !(w->buf = malloc(1 << 20))) {
    if (w) free(w->buf);
    free(w), free(*tmp), *tmp = NULL;
    snprintf(err, errlen, "out of memory writing '%s'", path);
    return NULL;
  }
  snprintf(*tmp, len, "%s.tmp-%ld", path, (long)getpid());
  if (!(w->f = fopen(*tmp, "w"))) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    free(w->buf), free(w), free(*tmp), *tmp = NULL;
    return NULL;
  }
  w->units_per_cycle = 1e4 / p->cfg.clock_mhz, w->first = true, w->cap = 1 << 20;
  wputs(w, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  return w;
}

/* Takes run r's records (every chip's; past the last run, those after it) as the ones to write. */
static void snap_run(profile_t *p, unsigned r) {
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    c->snap_ev = c->ev;
    c->snap_from = r ? (r - 1 < c->nruns ? c->runs[r - 1] : c->n) : 0;
    c->snap_to = r < c->nruns ? c->runs[r] : c->n;
  }
}

/* Run r's slices, every chip's. */
static int write_run(tw_t *w, profile_t *p, unsigned r) {
  snap_run(p, r);
  return write_chips(w, p, NULL);
}

/* The trace's rest after the runs: flows, counters, the host's phases, otherData; then the file
 * is closed and renamed into place (tmp removed on failure). 0, or -1 with a message. */
static int trace_finish(profile_t *p, tw_t *w, char *tmp, const char *path, char *err, size_t errlen) {
  land_index_t *lands = calloc(p->nchips ? p->nchips : 1, sizeof *lands);
  bool oom = !lands;
  for (unsigned i = 0; i < p->nchips && !oom; i++)
    if (p->chip[i] && land_index(p->chip[i], &lands[i])) oom = true;
  if (!oom) oom = write_chips(w, p, lands) != 0;
  if (!oom) write_host_phases(w, p);
  for (unsigned i = 0; lands && i < p->nchips; i++) free(lands[i].ix);
  free(lands);
  uint64_t dropped = 0;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i]) dropped += p->chip[i]->dropped;
  wprintf(w, "\n],\"otherData\":{\"generator\":\"tpusim --profile\",\"clock_mhz\":%.3f,\"pod\":\"%ux%u\","
          "\"chips_profiled\":%u,\"bucket_cycles\":%u,\"events_dropped\":%" PRIu64 ",\"left_out\":\"%s\","
          "\"link_utilisation\":{", p->cfg.clock_mhz, p->cfg.pod_w, p->cfg.pod_h, p->selected, p->cfg.bucket, dropped,
          p->left_out);
  /* each profiled chip's outgoing links over the whole profile (flits / cycles), for the heat
   * map (scripts/plot_profile.py): "x,y": [+X, -X, +Y, -Y] */
  bool firstl = true;
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (!c || !c->seen) continue;
    uint64_t fl[4] = {0}, cyc = 0;
    for (unsigned ph = 0; ph < p->phases; ph++) {
      for (int d = 0; d < 4; d++) fl[d] += c->ph[ph].link_flits[d];
      cyc += c->ph[ph].chip_cycles;
    }
    const double n = cyc ? (double)cyc : 1.0;
    wprintf(w, "%s\"%u,%u\":[%.4f,%.4f,%.4f,%.4f]", firstl ? "" : ",", c->x, c->y, (double)fl[0] / n, (double)fl[1] / n,
            (double)fl[2] / n, (double)fl[3] / n);
    firstl = false;
  }
  wputs(w, "}}}\n");
  wflush(w);
  free(w->buf);
  const bool bad = ferror(w->f) != 0;
  const int closed = fclose(w->f);
  free(w);
  int rc = 0;
  if (oom) {
    snprintf(err, errlen, "out of memory writing '%s'", path);
    rc = -1;
  } else if (closed || bad || rename(tmp, path)) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
    rc = -1;
  }
  if (rc) remove(tmp);
  free(tmp);
  return rc;
}

int profile_write(profile_t *p, const char *path, char *err, size_t errlen) {
  stream_join(p);
  unsigned runs = 0; /* (the runs, and the records after the last, if any) */
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i] && p->chip[i]->nruns + 1 > runs) runs = p->chip[i]->nruns + 1;
  if (p->stream && p->cfg.trace_path && !strcmp(path, p->cfg.trace_path)) { /* the runs are in the file */
    if (!p->stream_off && !write_run(p->stream, p, runs - 1)) {
      tw_t *w = p->stream;
      char *tmp = p->stream_tmp;
      p->stream = NULL, p->stream_tmp = NULL;
      return trace_finish(p, w, tmp, path, err, errlen);
    }
  }
  stream_drop(p); /* (out of memory streaming, or another path: written whole) */
  char *tmp;
  tw_t *w = trace_open(p, path, &tmp, err, errlen);
  if (!w) return -1;
  for (unsigned i = 0; i < p->nchips; i++)
    if (p->chip[i]) p->chip[i]->named = false, memset(p->chip[i]->sems_named, 0, sizeof p->chip[i]->sems_named);
  bool oom = false;
  for (unsigned r = 0; r < runs && !oom; r++) oom = write_run(w, p, r) != 0;
  if (oom) {
    fclose(w->f);
    remove(tmp);
    free(w->buf), free(w), free(tmp);
    snprintf(err, errlen, "out of memory writing '%s'", path);
    return -1;
  }
  return trace_finish(p, w, tmp, path, err, errlen);
}

/* ---- streaming (cfg.trace_path): each run's slices written to the file by a thread of its own
 * while the next run simulates. It reads a snapshot of each chip's records (records never
 * change once added, and add_ev keeps an array it outgrows meanwhile) and touches only the
 * writer and each chip's naming state, which nothing else does until stream_join. */
static void *stream_main(void *arg) {
  profile_t *p = arg;
  if (write_chips(p->stream, p, NULL)) p->stream_off = true;
  return NULL;
}

static void stream_join(profile_t *p) {
  if (!p->streaming_on) return;
  pthread_join(p->streamer, NULL);
  p->streaming_on = false;
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    for (unsigned j = 0; c && j < c->nretired; j++) free(c->retired[j]);
    if (c) c->nretired = 0;
  }
}

/* After profile_run_end's run: its slices into the file (opened at the first run). */
static void stream_run(profile_t *p) {
  if (!p->cfg.trace_path || p->stream_off) return;
  if (!p->stream) {
    char err[256];
    if (!(p->stream = trace_open(p, p->cfg.trace_path, &p->stream_tmp, err, sizeof err))) {
      p->stream_off = true;
      return;
    }
  }
  snap_run(p, p->streamed++);
  if (!(p->streaming_on = pthread_create(&p->streamer, NULL, stream_main, p) == 0)) stream_main(p); /* (no thread: here) */
}

/* A stream the trace will not get: closed and removed. */
static void stream_drop(profile_t *p) {
  stream_join(p);
  if (!p->stream) return;
  fclose(p->stream->f);
  remove(p->stream_tmp);
  free(p->stream->buf), free(p->stream), free(p->stream_tmp);
  p->stream = NULL, p->stream_tmp = NULL;
}

/* ---- a pod split over MPI ranks: each rank's chips' records to rank 0 (profile_gather) */

/* A byte buffer written twice: first with no memory, to count the bytes, then for real. */
typedef struct {
  uint8_t *b;
  size_t n;
} gbuf_t;

static void gput(gbuf_t *g, const void *src, size_t len) {
  if (g->b && len) memcpy(g->b + g->n, src, len);
  g->n += len;
}

/* Chip c's records: a header of counts, then its events, samples, phases' sums and waits. */
static void gput_chip(gbuf_t *g, const pchip_t *c, unsigned phases) {
  const uint64_t h[11] = {c->index, c->cores, c->mxus, c->seen, c->first, c->end, c->dropped, c->full_at, c->n, c->ns,
                          c->nruns};
  gput(g, h, sizeof h);
  gput(g, c->ev, c->n * sizeof *c->ev);
  gput(g, c->smp, c->ns * sizeof *c->smp);
  gput(g, c->ph, phases * sizeof c->ph[0]);
  gput(g, c->wait, sizeof c->wait);
  for (unsigned r = 0; r < c->nruns; r++) { /* (the runs' ends: the trace's order) */
    const uint64_t e = c->runs[r];
    gput(g, &e, sizeof e);
  }
}

typedef struct {
  const uint8_t *b;
  size_t n, at;
  bool bad;
} grd_t;

static const void *gget(grd_t *r, size_t len) {
  if (r->bad || len > r->n - r->at) {
    r->bad = true;
    return NULL;
  }
  const void *p = r->b + r->at;
  r->at += len;
  return p;
}

/* Installs the chip records of buffer r (from rank `from`) into p's empty slots: 0, or -1 with a message. */
static int install_chips(profile_t *p, grd_t *r, unsigned from, char *err, size_t errlen) {
  while (r->at < r->n) {
    uint64_t h[11];
    const void *hp = gget(r, sizeof h);
    if (!hp) break;
    memcpy(h, hp, sizeof h);
    pchip_t *c = h[0] < p->nchips ? p->chip[h[0]] : NULL;
    const size_t n = (size_t)h[8], ns = (size_t)h[9];
    if (!c || c->seen || h[1] == 0 || h[1] > CHIP_MAX_CORES || h[2] == 0 || h[2] > CHIP_MAX_MXUS || n > c->limit ||
        ns > (r->n - r->at) / sizeof(sample_t)) {
      r->bad = true;
      break;
    }
    const void *ev = gget(r, n * sizeof *c->ev), *smp = gget(r, ns * sizeof *c->smp);
    const void *ph = gget(r, p->phases * sizeof c->ph[0]), *wait = gget(r, sizeof c->wait);
    const void *runs = h[10] == c->nruns ? gget(r, c->nruns * sizeof(uint64_t)) : NULL; /* (as many runs on every rank) */
    if (h[10] != c->nruns) r->bad = true;
    if (r->bad) break;
    profile_ev_t *e = n ? malloc(n * sizeof *e) : NULL;
    sample_t *s = ns ? malloc(ns * sizeof *s) : NULL;
    if ((n && !e) || (ns && !s)) {
      free(e), free(s);
      snprintf(err, errlen, "out of memory gathering the profile");
      return -1;
    }
    if (n) memcpy(e, ev, n * sizeof *e);
    if (ns) memcpy(s, smp, ns * sizeof *s);
    free(c->ev), free(c->smp);
    c->ev = e, c->n = c->cap = n;
    c->smp = s, c->ns = c->smp_cap = ns;
    c->cores = (unsigned)h[1], c->mxus = (unsigned)h[2], c->queues = ISA_NUM_QUEUES * c->cores;
    c->seen = h[3] != 0, c->first = h[4], c->end = h[5], c->dropped = h[6], c->full_at = h[7];
    memcpy(c->ph, ph, p->phases * sizeof c->ph[0]);
    memcpy(c->wait, wait, sizeof c->wait);
    for (unsigned k = 0; k < c->nruns; k++) {
      uint64_t e;
      memcpy(&e, (const uint8_t *)runs + k * sizeof e, sizeof e);
      c->runs[k] = e <= n ? (size_t)e : n;
    }
    c->chip = NULL; /* (the shell of another rank's chip: nothing here may step or read it) */
  }
  if (r->bad) {
    snprintf(err, errlen, "the profile records from MPI rank %u do not parse (ranks built differently?)", from);
    return -1;
  }
  return 0;
}

/* FNV-1a of the phases' names: every rank runs the same host program, so they must agree. */
static uint64_t phases_hash(const profile_t *p) {
  uint64_t h = 14695981039346656037ull ^ p->phases;
  for (unsigned f = 0; f < p->phases; f++)
    for (const char *s = p->phase_name[f];; s++) {
      h = (h ^ (unsigned char)*s) * 1099511628211ull;
      if (!*s) break;
    }
  return h;
}

#define GATHER_CHUNK ((size_t)1 << 30) /* MPI counts are ints: big buffers go in rounds */

int profile_gather(profile_t *p, char *err, size_t errlen) {
  if (!dist_active()) return 0;
  const unsigned R = dist_size(), me = dist_rank();
  /* the phases: the per-phase sums line up only if every rank named the same phases in order */
  uint64_t hv[2] = {phases_hash(p), ~phases_hash(p)};
  dist_min_u64(hv, 2);
  if (hv[0] != ~hv[1]) {
    snprintf(err, errlen, "the MPI ranks' profiles have different phases (%u here): the ranks did not run the same "
             "host program", p->phases);
    return -1;
  }
  /* a chip's records come from the lowest rank that watched it (its owner: a rank watches only
   * its own chips, chip_set_observer ignoring the shells of the others') */
  uint64_t *owner = malloc((p->nchips ? p->nchips : 1) * sizeof *owner);
  bool fail = !owner;
  for (unsigned i = 0; owner && i < p->nchips; i++) owner[i] = p->chip[i] && p->chip[i]->seen ? me : UINT64_MAX;
  if (dist_any(fail)) {
    free(owner);
    snprintf(err, errlen, "out of memory gathering the profile");
    return -1;
  }
  dist_min_u64(owner, p->nchips);
  gbuf_t g = {NULL, 0};
  for (int pass = 0; pass < 2 && me; pass++) {
    for (unsigned i = 0; i < p->nchips; i++)
      if (owner[i] == me) gput_chip(&g, p->chip[i], p->phases);
    if (pass == 0 && g.n && !(g.b = malloc(g.n))) fail = true;
    if (pass == 0) g.n = 0;
    if (fail) break;
  }
  free(owner);
  int64_t len[256] = {0}; /* dist_init: at most 255 ranks */
  len[me] = (int64_t)g.n;
  dist_sum_i64(len, R);
  uint8_t *recv[256] = {NULL};
  for (unsigned k = 1; me == 0 && k < R; k++)
    if (len[k] && !(recv[k] = malloc((size_t)len[k]))) fail = true;
  if (dist_any(fail)) {
    free(g.b);
    for (unsigned k = 0; k < R; k++) free(recv[k]);
    snprintf(err, errlen, "out of memory gathering the profile");
    return -1;
  }
  size_t rounds = 0;
  for (unsigned k = 1; k < R; k++) {
    const size_t r = ((size_t)len[k] + GATHER_CHUNK - 1) / GATHER_CHUNK;
    if (r > rounds) rounds = r;
  }
  for (size_t round = 0; round < rounds; round++) {
    const size_t off = round * GATHER_CHUNK;
    void *sendp[256] = {NULL}, *recvp[256] = {NULL};
    size_t send_len[256] = {0}, recv_len[256] = {0};
    if (me && g.n > off) sendp[0] = g.b + off, send_len[0] = g.n - off < GATHER_CHUNK ? g.n - off : GATHER_CHUNK;
    for (unsigned k = 1; me == 0 && k < R; k++)
      if ((size_t)len[k] > off)
        recvp[k] = recv[k] + off, recv_len[k] = (size_t)len[k] - off < GATHER_CHUNK ? (size_t)len[k] - off : GATHER_CHUNK;
    dist_exchange(sendp, send_len, recvp, recv_len);
  }
  free(g.b);
  int rc = 0;
  for (unsigned k = 1; me == 0 && k < R; k++) {
    grd_t r = {recv[k], (size_t)len[k], 0, false};
    if (!rc && recv[k]) rc = install_chips(p, &r, k, err, errlen);
    free(recv[k]);
  }
  if (dist_any(rc != 0)) { /* (rank 0's verdict, on every rank) */
    if (!rc) snprintf(err, errlen, "MPI rank 0 could not gather the profile");
    return -1;
  }
  return 0;
}
