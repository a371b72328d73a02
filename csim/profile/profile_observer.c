/*
 * profile_observer: the profile's per-cycle observer (chip_observer_t, profile_internal.h):
 * every cycle a profiled chip steps (on_tick) and every stretch it skips (on_skip) becomes the
 * chip's intervals, semaphore landings, RDMA sends and counter samples, and the op profile's
 * sums. It runs on the thread stepping the chip and touches only that chip's record.
 */
#include "profile/profile_internal.h"

#include <emmintrin.h>
#include <stdlib.h>
#include <string.h>

#define LAND_GAP 64 /* a semaphore raised again within this many cycles: the same landing */

/* signature()'s word: the busy flags the units' intervals follow, one uint32_t a cycle, so that
 * one compare tells whether any unit changed. Core k's field starts at bit SIG_CORE_BITS * k:
 *   bit 0, bit 2 (CHIP_BUSY_DMA, CHIP_BUSY_VEC, where obs busy has them): its DMA engine and
 *                vector unit busy;
 *   bit SIG_MXU_SHIFT + m: its MXU m busy.
 * Bit SIG_RDMA_SHIFT + e: the chip's remote-DMA engine e busy. */
enum {
  SIG_CORE_BITS = 12,
  SIG_UNITS = CHIP_BUSY_DMA | CHIP_BUSY_VEC,
  SIG_MXU_SHIFT = 4,
  SIG_RDMA_SHIFT = 28,
};
_Static_assert(SIG_UNITS < 1u << SIG_MXU_SHIFT && SIG_MXU_SHIFT + CHIP_MAX_MXUS <= SIG_CORE_BITS &&
                   SIG_CORE_BITS * CHIP_MAX_CORES <= SIG_RDMA_SHIFT && SIG_RDMA_SHIFT + ISA_NUM_RDMA_ENGINES <= 32,
               "the signature's fields do not overlap");
/* Core k's field of a signature (or of the bits that changed), at bit 0. */
static inline uint32_t sig_core(uint32_t bits, unsigned k) { return bits >> (SIG_CORE_BITS * k); }

/* The router's ports in chip_obs_t's valid masks: the local port 0, then the links +X -X +Y -Y. */
enum { ROUTER_LINK_PORT0 = 1, ROUTER_LINK_PORTS = ((1u << LINK_DIRS) - 1) << ROUTER_LINK_PORT0 };
/* 1 if link d (+X -X +Y -Y) carries a flit out of the chip in the cycle. */
static inline uint32_t link_flit(const chip_obs_t *o, unsigned d) {
  return o->rtr_out_valid >> (ROUTER_LINK_PORT0 + d) & 1;
}
/* Bit e: remote-DMA engine e busy (the chip's, in every core's busy word). */
static inline unsigned rdma_busy(const chip_obs_t *o) {
  return o->core[0].busy >> CHIP_BUSY_RDMA_SHIFT & ((1u << ISA_NUM_RDMA_ENGINES) - 1);
}
/* chip_obs_core_t.issue: bit q: queue q handed its command to a unit (an RDMA: issued). */
#define ISSUED_DMA (1u << ISA_QUEUE_DMA)

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

/* The phase chip c is in with its lead compute queue at pc. */
static unsigned phase_of(const pchip_t *c, uint32_t pc) {
  unsigned ph = c->p->cur_phase;
  if (!c->marks.n || c->marks.host != ph) return ph;
  for (unsigned i = 0; i < c->marks.n && c->marks.at[i] <= pc; i++) ph = c->marks.ph[i];
  return ph;
}

/* ---- records */
static void add_ev(pchip_t *c, const profile_ev_t *e) {
  pchip_records_t *r = &c->rec;
  if (r->n == r->limit) {
    if (!r->dropped) r->full_at = e->t0;
    r->dropped++;
    return;
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 256;
    if (cap > r->limit) cap = r->limit;
    profile_ev_t *ev;
    if (!c->p->streaming_on) {
      ev = realloc(r->ev, cap * sizeof *ev);
    } else { /* (the streaming thread reads the old array: kept until it is done; doubling from
              * 256, 48 arrays are more than memory holds) */
      ev = r->nretired < sizeof r->retired / sizeof r->retired[0] ? malloc(cap * sizeof *ev) : NULL;
      if (ev) memcpy(ev, r->ev, r->n * sizeof *ev), r->retired[r->nretired++] = r->ev;
    }
    if (!ev) {
      if (!r->dropped) r->full_at = e->t0;
      r->dropped++;
      return;
    }
    r->ev = ev, r->cap = cap;
  }
  r->ev[r->n++] = *e;
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

/* Unit u of a core (DMA, vector unit, MXU u - 2) as its interval's profile_unit_t and index. */
static unsigned unit_kind(unsigned u) { return u == 0 ? PROFILE_UNIT_DMA : u == 1 ? PROFILE_UNIT_VEC : PROFILE_UNIT_MXU; }
static unsigned unit_index(unsigned u) { return u >= 2 ? u - 2 : 0; }

static void close_land(pchip_t *c, unsigned k, unsigned s) {
  land_t *l = &c->land[k][s];
  if (!l->open) return;
  l->open = false;
  const profile_ev_t e = {l->t0, l->last + 1, PROFILE_EV_SEM, (uint8_t)k, 0, (uint8_t)s, 0, l->amount, {0}};
  add_ev(c, &e);
}

static void sample(pchip_t *c, uint64_t len) {
  pchip_records_t *r = &c->rec;
  if (r->ns == r->smp_cap) {
    size_t cap = r->smp_cap ? 2 * r->smp_cap : 64;
    sample_t *s = realloc(r->smp, cap * sizeof *s);
    if (!s) return;
    r->smp = s, r->smp_cap = cap;
  }
  sample_t *s = &r->smp[r->ns++];
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

/* ---- the op profile's sums */
/* n cycles of class `cls` whose counters moved by d[]: the op profile's sums. An MXU-cycle is
 * one of compute, weight stall, input stall or neither (the MXU's counters: docs/mxu.md); the
 * neither go to the class. */
static inline void account(pchip_t *c, unsigned phase, uint64_t n, int cls, const uint64_t *d) {
  profile_phase_stats_t *s = &c->sums.ph[phase];
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
/* The queues' pcs (~0 when stopped) and the busy bits the intervals follow (the layout above),
 * in cycle o. */
static inline uint32_t signature(const pchip_t *c, const chip_obs_t *o, uint32_t *pcs) {
  uint32_t bits = 0;
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    for (unsigned q = 0; q < ISA_NUM_QUEUES; q++) pcs[k * ISA_NUM_QUEUES + q] = oc->running[q] ? oc->pc[q] : UINT32_MAX;
    bits |= ((uint32_t)(oc->busy & SIG_UNITS) | (uint32_t)oc->mxu_busy << SIG_MXU_SHIFT) << (SIG_CORE_BITS * k);
  }
  return bits | (uint32_t)rdma_busy(o) << SIG_RDMA_SHIFT;
}

static void on_tick_slow(pchip_t *c, uint64_t t, const chip_obs_t *o, uint64_t hbm, const uint32_t *pcs, uint32_t bits);

/* Hands the quick path's pending run to the sums (on_tick): before anything else counts or looks. */
static void quick_flush(pchip_t *c) {
  profile_phase_stats_t *ps = &c->sums.ph[c->run_phase];
  if (c->quick_run) {
    c->prev_n += c->quick_run; /* (the stretch is the quick path's too) */
    *c->quick_cq += c->quick_run, *c->quick_dq += c->quick_run, *c->quick_wait += c->quick_run;
    ps->vec_busy += c->quick_vec * c->quick_run;
    c->quick_run = 0;
  }
  for (unsigned d = 0; d < LINK_DIRS; d++) ps->link_flits[d] += c->run_flits[d], c->run_flits[d] = 0;
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
  if (c->sig_valid && c->p->cur_phase == c->quick_host && o->core[0].pc[ISA_QUEUE_COMPUTE] == c->quick_pc0 &&
      ((o->rtr_in_valid | o->rtr_out_valid) != 0) == c->quick_net) {
    uint32_t diff = bits ^ c->sig_bits, sem_diff = 0; /* (one pass, no early exits: it runs every cycle) */
    for (unsigned k = 0; k < c->cores; k++) {
      diff |= (o->core[k].issue & ISSUED_DMA) | (pcs[2 * k] ^ c->sig_pc[2 * k]) | (pcs[2 * k + 1] ^ c->sig_pc[2 * k + 1]);
      sem_diff |= o->core[k].sem_epoch ^ c->sem_epoch[k];
    }
    bool same = !diff;
    if (same && sem_diff) {
      /* semaphores moved: their raises are recorded; the idle cause stays unless the lead
       * compute queue waits on one (then it is looked at again) */
      sem_raises(c, t, o);
      const unsigned k = c->cmd_q;
      same = !c->quick_semdep ||
             idle_class(c, k, true, c->cmd, o->core[k].sems, c->quick_dma, c->quick_rbusy, o) == c->prev_class;
    }
    if (same) {
      if (t >= c->bucket_t + c->p->cfg.bucket) roll_bucket(c, t);
      if (o->rtr_out_valid & ROUTER_LINK_PORTS)
        for (unsigned d = 0; d < LINK_DIRS; d++) {
          const uint32_t f = link_flit(o, d);
          c->bflits[d] += f;
          c->run_flits[d] += f;
        }
      c->last_hbm = hbm;
      c->rdma_we_prev = o->rdma_we != 0;
      c->quick_run++;
      c->end = t + 1;
      return;
    }
  }
  on_tick_slow(c, t, o, hbm, pcs, bits);
}

/* The first cycle a chip is seen in (stepped, o; or skipped, o NULL, before[] its counters). */
static void first_seen(pchip_t *c, uint64_t t, const chip_obs_t *o, uint64_t hbm, const uint64_t *before) {
  c->seen = true;
  c->first = t;
  c->bucket_t = t - t % c->p->cfg.bucket;
  if (o) {
    c->last_hbm = c->bucket_hbm0 = hbm;
    memcpy(c->last_cnt, o->counters, sizeof c->last_cnt);
    for (unsigned k = 0; k < c->cores; k++) memcpy(c->sems[k], o->core[k].sems, sizeof c->sems[k]);
  } else {
    memcpy(c->last_cnt, before, sizeof c->last_cnt);
    for (unsigned k = 0; k < c->cores; k++)
      for (unsigned s = 0; s < ISA_NUM_SEMS; s++) c->sems[k][s] = chip_sem(c->chip, k * ISA_NUM_SEMS + s);
  }
}

/* The queues' and units' intervals in cycle t, where the pcs or busy bits changed from the last
 * full look (while sig_valid, a unit's interval is open exactly when its bit is set: only the
 * queues and units that changed are looked at). */
static void intervals(pchip_t *c, uint64_t t, const chip_obs_t *o, const uint32_t *pcs, uint32_t bits, unsigned rbusy) {
  bool same = c->sig_valid;
  for (unsigned q = 0; q < c->queues; q++) same = same && pcs[q] == c->sig_pc[q];
  if (same && bits == c->sig_bits) return;
  const uint32_t ch = c->sig_valid ? bits ^ c->sig_bits : UINT32_MAX;
  for (unsigned q = 0; q < c->queues; q++)
    if (!c->sig_valid || pcs[q] != c->sig_pc[q]) queue_state(c, q, t, pcs[q] != UINT32_MAX, pcs[q]);
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    const uint32_t chk = sig_core(ch, k);
    if (chk & CHIP_BUSY_DMA) unit_state(c, &c->unit[k][0], t, oc->busy & CHIP_BUSY_DMA, k, PROFILE_UNIT_DMA, 0);
    if (chk & CHIP_BUSY_VEC) unit_state(c, &c->unit[k][1], t, oc->busy & CHIP_BUSY_VEC, k, PROFILE_UNIT_VEC, 0);
    for (unsigned m = 0; m < c->mxus; m++)
      if (chk >> (SIG_MXU_SHIFT + m) & 1)
        unit_state(c, &c->unit[k][2 + m], t, oc->mxu_busy >> m & 1, k, PROFILE_UNIT_MXU, m);
  }
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++)
    if (ch >> (SIG_RDMA_SHIFT + e) & 1) unit_state(c, &c->rdma[e], t, rbusy >> e & 1, 0, PROFILE_UNIT_RDMA, e);
  memcpy(c->sig_pc, pcs, sizeof c->sig_pc);
  c->sig_bits = bits;
  c->sig_valid = true;
}

/* The RDMAs with a remote semaphore issued in cycle o: a send each (the flows' starts). */
static void rdma_sends(pchip_t *c, uint64_t t, const chip_obs_t *o) {
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    if (!(oc->issue & ISSUED_DMA)) continue;
    const uint32_t *cmd;
    const unsigned q = k * ISA_NUM_QUEUES + ISA_QUEUE_DMA;
    if (opcode_at(c, q, oc->pc[ISA_QUEUE_DMA], &cmd) == ISA_OP_RDMA && ISA_GET(cmd, RDMA, remote_sem) != ISA_SEM_NONE) {
      const profile_ev_t e = {t, t + 1, PROFILE_EV_SEND, (uint8_t)k, ISA_QUEUE_DMA, 0,
                              send_dest(ISA_GET(cmd, RDMA, x), ISA_GET(cmd, RDMA, y), ISA_GET(cmd, RDMA, core)),
                              ISA_GET(cmd, RDMA, remote_sem), {0}};
      add_ev(c, &e);
    }
  }
}

/* The MXUs' idle cause in cycle o (its counters come with the next), the lead core's queue
 * heads and the semaphore it waits on, and what the quick path's next cycles add to. */
static void idle_cause(pchip_t *c, const chip_obs_t *o, unsigned phase, profile_phase_stats_t *ps, bool dma_busy,
                       unsigned rbusy, unsigned vec) {
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
  const int cls = idle_class(c, k, running[k], cmd, o->core[k].sems, dma_busy, rbusy != 0, o);
  if (c->prev_valid && (cls != c->prev_class || phase != c->prev_phase)) flush_prev(c, o->counters);
  if (!c->prev_valid) {
    memcpy(c->last_cnt, o->counters, sizeof c->last_cnt);
    c->prev_class = cls, c->prev_phase = phase, c->prev_n = 0, c->prev_valid = true;
  }
  c->prev_n++;
  c->quick_cq = &ps->queue_op[0][running[k] ? op_kind(cmd) : PROFILE_OP_STOPPED];
  const uint32_t dpc = o->core[k].pc[ISA_QUEUE_DMA];
  if (!c->dq_valid || c->dq_core != k || c->dq_pc != dpc) {
    const uint32_t *dcmd;
    opcode_at(c, k * ISA_NUM_QUEUES + ISA_QUEUE_DMA, dpc, &dcmd);
    c->dq_kind = op_kind(dcmd), c->dq_pc = dpc, c->dq_core = k, c->dq_valid = true;
  }
  c->quick_dq = &ps->queue_op[1][o->core[k].running[ISA_QUEUE_DMA] ? c->dq_kind : PROFILE_OP_STOPPED];
  c->quick_wait = running[k] && op == ISA_OP_SEM_WAIT && cls != PROFILE_IDLE_OTHER
                      ? &c->sums.wait[k][ISA_GET(cmd, SEM_WAIT, sem) % ISA_NUM_SEMS]
                      : &c->wait_sink;
  ++*c->quick_cq, ++*c->quick_dq, ++*c->quick_wait;
  /* what the next cycles may add to without a look (on_tick) */
  c->quick_host = c->p->cur_phase;
  c->quick_pc0 = o->core[0].pc[ISA_QUEUE_COMPUTE];
  c->quick_net = (o->rtr_in_valid | o->rtr_out_valid) != 0;
  c->quick_vec = vec;
  c->quick_semdep = running[k] && op == ISA_OP_SEM_WAIT, c->quick_dma = dma_busy, c->quick_rbusy = rbusy != 0;
  c->run_phase = phase;
}

/* A cycle the quick path did not take: everything it shows is looked at. */
static void on_tick_slow(pchip_t *c, uint64_t t, const chip_obs_t *o, uint64_t hbm, const uint32_t *pcs, uint32_t bits) {
  quick_flush(c);
  const unsigned phase = phase_of(c, o->core[0].pc[ISA_QUEUE_COMPUTE]);
  if (!c->seen) first_seen(c, t, o, hbm, NULL);
  roll_bucket(c, t);
  profile_phase_stats_t *ps = &c->sums.ph[phase];
  bool dma_busy = false;
  unsigned vec = 0;
  for (unsigned k = 0; k < c->cores; k++) {
    const chip_obs_core_t *oc = &o->core[k];
    dma_busy = dma_busy || (oc->busy & CHIP_BUSY_DMA);
    vec += (oc->busy & CHIP_BUSY_VEC) != 0;
  }
  ps->vec_busy += vec;
  const unsigned rbusy = rdma_busy(o);
  intervals(c, t, o, pcs, bits, rbusy);
  /* links and HBM */
  for (unsigned d = 0; d < LINK_DIRS; d++) {
    const uint32_t f = link_flit(o, d);
    c->bflits[d] += f;
    ps->link_flits[d] += f;
  }
  ps->hbm_bytes += hbm - c->last_hbm;
  c->last_hbm = hbm;
  /* semaphores raised, and RDMAs sent */
  sem_raises(c, t, o);
  rdma_sends(c, t, o);
  c->rdma_we_prev = o->rdma_we != 0;
  idle_cause(c, o, phase, ps, dma_busy, rbusy, vec);
  c->run_hbm0 = c->last_hbm;
  c->end = t + 1;
}

/* The units that stay busy through a skipped stretch of n cycles: as many as the counters say
 * (nothing changes in it, so the ones busy before it). */
static void skip_units(pchip_t *c, uint64_t t, uint64_t n, const uint64_t before[], const uint64_t after[]) {
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
    for (unsigned u = 0; u < UNITS; u++) unit_state(c, &c->unit[k][u], t, keep[k][u], k, unit_kind(u), unit_index(u));
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++) unit_state(c, &c->rdma[e], t, false, 0, PROFILE_UNIT_RDMA, e);
}

static void on_skip(void *ctx, uint64_t t, uint64_t n, const chip_core_status_t *st, const uint64_t before[],
                    const uint64_t after[]) {
  pchip_t *c = ctx;
  const unsigned phase = phase_of(c, st->pc[ISA_QUEUE_COMPUTE]);
  if (!c->seen) first_seen(c, t, NULL, 0, before);
  quick_flush(c);
  flush_prev(c, before);
  roll_bucket(c, t);
  c->sig_valid = false;
  for (unsigned q = 0; q < c->queues; q++) queue_state(c, q, t, st->running[q], st->pc[q]);
  skip_units(c, t, n, before, after);
  /* the idle cause of the stretch */
  bool running[CHIP_MAX_CORES];
  for (unsigned k = 0; k < c->cores; k++) running[k] = st->running[k * ISA_NUM_QUEUES + ISA_QUEUE_COMPUTE];
  const unsigned k = lead_core(c, running);
  const uint32_t *cmd;
  const uint32_t op = opcode_at(c, k * ISA_NUM_QUEUES, st->pc[k * ISA_NUM_QUEUES], &cmd);
  const int cls = idle_class(c, k, running[k], cmd, c->sems[k], after[CHIP_CNT_DMA_BUSY] != before[CHIP_CNT_DMA_BUSY],
                             false, NULL);
  if (running[k] && op == ISA_OP_SEM_WAIT && cls != PROFILE_IDLE_OTHER)
    c->sums.wait[k][ISA_GET(cmd, SEM_WAIT, sem) % ISA_NUM_SEMS] += n;
  c->sums.ph[phase].queue_op[0][running[k] ? op_kind(cmd) : PROFILE_OP_STOPPED] += n;
  const unsigned dq = k * ISA_NUM_QUEUES + ISA_QUEUE_DMA;
  const uint32_t *dcmd;
  opcode_at(c, dq, st->pc[dq], &dcmd);
  c->sums.ph[phase].queue_op[1][st->running[dq] ? op_kind(dcmd) : PROFILE_OP_STOPPED] += n;
  uint64_t d[CHIP_OBS_COUNTERS];
  for (int i = 0; i < CHIP_OBS_COUNTERS; i++) d[i] = after[i] - before[i];
  account(c, phase, n, cls, d);
  memcpy(c->last_cnt, after, sizeof c->last_cnt);
  c->rdma_we_prev = false;
  c->end = t + n;
}

const chip_observer_t profile_observer = {on_tick, on_skip};

void observer_run_end(pchip_t *c) {
  uint64_t now[CHIP_OBS_COUNTERS];
  chip_counters(c->chip, now);
  quick_flush(c);
  flush_prev(c, now);
  c->sig_valid = c->cmd_valid = c->dq_valid = false; /* (the next run's programs may differ) */
  const uint64_t t = c->end;
  for (unsigned q = 0; q < c->queues; q++) queue_state(c, q, t, false, 0);
  for (unsigned k = 0; k < c->cores; k++) {
    for (unsigned u = 0; u < UNITS; u++) unit_state(c, &c->unit[k][u], t, false, k, unit_kind(u), unit_index(u));
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
