/* chip_fast: see chip_fast.h. The wiring and the cycle order follow rtl/chip_top.sv and
 * rtl/chip_core.sv. */
#include "fast/chip_fast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/cmdq_fast.h"
#include "fast/dma_fast.h"
#include "fast/fpmode.h"
#include "fast/mxu_unit_fast.h"
#include "fast/noc_fast.h"
#include "fast/rdma_fast.h"
#include "fast/vec_unit_fast.h"
#include "util/paged.h"

enum { NQ = ISA_NUM_QUEUES, NE = ISA_NUM_RDMA_ENGINES, PORTS = CHIP_OBS_ROUTER_PORTS, REL_DEPTH = 4,
       VMEM_PAGE_BYTES = 65536 };

/* A release fence: what must be done first, per MXU (a later command to another MXU may
 * finish first, so sums would not do). */
typedef struct {
  uint8_t sem;
  uint32_t value, vecs;
  uint32_t loads[CHIP_MAX_MXUS], matmuls[CHIP_MAX_MXUS], stores[CHIP_MAX_MXUS];
} release_t;

/* One core (chip_core.sv). */
typedef struct {
  cmdq_fast_t q[NQ];
  paged_t vmem;
  dma_fast_t dma;
  mxu_unit_fast_t mxu[CHIP_MAX_MXUS];
  vec_unit_fast_t vec;
  uint32_t sems[ISA_NUM_SEMS];
  uint32_t sem_epoch;  /* counts the cycles that changed sems, and resets: never goes back */
  release_t rel[REL_DEPTH];
  unsigned rel_count, rel_head;
  uint64_t dma_busy_cnt, mxu_busy_cnt;
} core_t;

struct chip_fast {
  chip_fast_config_t cfg;
  cmdq_fast_limits_t limits;
  unsigned nmxu, ncore;  /* MXUs per core, cores */
  core_t core[CHIP_MAX_CORES];
  const paged_t *vmems[CHIP_MAX_CORES];
  rdma_fast_t rdma[NE];
  noc_fast_t *router;
  uint32_t rtr_flits[5];
  /* inputs held until changed, as on the RTL's ports */
  unsigned start, abort;
  uint32_t start_len[CHIP_MAX_QUEUES];
  bool host_we;
  unsigned host_queue;
  uint32_t host_addr, host_data[ISA_CMD_WORDS];
  noc_flit_t net_in[4];
  unsigned flit_words;         /* the chip's flits (1: 64 bits) */
  noc_wide_t net_in_hi[4];     /* wide flits' other words */
  uint8_t credit_in;
  uint32_t *obs_line;  /* the HBM request's data, as the cycle starts (obs) */
  char error[128];
};

/* The router port of remote-DMA engine e (chip_top's rdma_port). */
static unsigned rdma_port(unsigned e) { return e == 0 ? 0 : 4 + e; }

chip_fast_t *chip_fast_new(const chip_fast_config_t *cfg, char *err, size_t errlen) {
  chip_fast_t *c = calloc(1, sizeof *c);
  if (!c) goto oom;
  c->cfg = *cfg;
  c->nmxu = isa_geometry_mxus(&cfg->geo);
  c->ncore = isa_geometry_cores(&cfg->geo);
  if (c->nmxu > CHIP_MAX_MXUS || c->ncore > CHIP_MAX_CORES) {
    snprintf(err, errlen, "a fast chip has at most %u cores of at most %u MXUs, not %u of %u", (unsigned)CHIP_MAX_CORES,
             (unsigned)CHIP_MAX_MXUS, c->ncore, c->nmxu);
    free(c);
    return NULL;
  }
  c->limits = (cmdq_fast_limits_t){cfg->geo, cfg->hbm_bytes, cfg->size_x, cfg->size_y};
  c->flit_words = isa_geometry_flit_words(&cfg->geo);
  const chip_geometry_t *g = &cfg->geo;
  noc_fast_config_t rc = {CHIP_FAST_VCS, NE, cfg->x, cfg->y, cfg->size_x, cfg->size_y, cfg->buf_depth,
                          isa_geometry_flit_words(g)};
  for (unsigned k = 0; k < c->ncore; k++) {
    core_t *o = &c->core[k];
    if (paged_init(&o->vmem, g->vmem_lines, 4ull * g->cols, VMEM_PAGE_BYTES) ||
        cmdq_fast_init(&o->q[ISA_QUEUE_COMPUTE], false, g->queue_depth) ||
        cmdq_fast_init(&o->q[ISA_QUEUE_DMA], true, g->queue_depth) || dma_fast_init(&o->dma, g->cols, g->vmem_lines) ||
        vec_unit_fast_init(&o->vec, g->cols, g->vmem_lines))
      goto oom;
    for (unsigned m = 0; m < c->nmxu; m++)
      if (mxu_unit_fast_init(&o->mxu[m], g)) goto oom;
    c->vmems[k] = &o->vmem;
  }
  if (!(c->obs_line = calloc((size_t)CHIP_MAX_CORES * g->cols, sizeof *c->obs_line))) goto oom;
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_init(&c->rdma[e], g->cols, g->vmem_lines, cfg->buf_depth, isa_geometry_flit_words(g))) goto oom;
  if (!(c->router = noc_fast_new(&rc, err, errlen))) {
    chip_fast_free(c);
    return NULL;
  }
  chip_fast_reset(c);
  return c;
oom:
  snprintf(err, errlen, "out of memory for a fast %ux%u chip", cfg->geo.rows, cfg->geo.cols);
  chip_fast_free(c);
  return NULL;
}

void chip_fast_free(chip_fast_t *c) {
  if (!c) return;
  for (unsigned k = 0; k < c->ncore && k < CHIP_MAX_CORES; k++) {
    core_t *o = &c->core[k];
    paged_free(&o->vmem);
    for (unsigned q = 0; q < NQ; q++) cmdq_fast_free(&o->q[q]);
    dma_fast_free(&o->dma);
    for (unsigned m = 0; m < c->nmxu && m < CHIP_MAX_MXUS; m++) mxu_unit_fast_free(&o->mxu[m]);
    vec_unit_fast_free(&o->vec);
  }
  for (unsigned e = 0; e < NE; e++) rdma_fast_free(&c->rdma[e]);
  noc_fast_free(c->router);
  free(c->obs_line);
  free(c);
}

void chip_fast_reset(chip_fast_t *c) {
  for (unsigned k = 0; k < c->ncore; k++) {
    core_t *o = &c->core[k];
    for (unsigned q = 0; q < NQ; q++) cmdq_fast_reset(&o->q[q]);
    dma_fast_reset(&o->dma);
    for (unsigned m = 0; m < c->nmxu; m++) mxu_unit_fast_reset(&o->mxu[m]);
    vec_unit_fast_reset(&o->vec);
    memset(o->sems, 0, sizeof o->sems);
    o->sem_epoch++;
    o->rel_count = o->rel_head = 0;
    o->dma_busy_cnt = o->mxu_busy_cnt = 0;
  }
  for (unsigned e = 0; e < NE; e++) rdma_fast_reset(&c->rdma[e]);
  noc_fast_reset(c->router);
  memset(c->rtr_flits, 0, sizeof c->rtr_flits);
  c->start = c->abort = 0;
  c->host_we = false;
  memset(c->net_in, 0, sizeof c->net_in);
  c->credit_in = 0;
}

void chip_fast_set_slice(chip_fast_t *c, uint32_t slice) { noc_fast_set_slice(c->router, slice); }

static unsigned queue_mask(const chip_fast_t *c) { return (1u << (NQ * c->ncore)) - 1; }

void chip_fast_start(chip_fast_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]) {
  c->start = mask & queue_mask(c);
  for (unsigned q = 0; q < NQ * c->ncore; q++) c->start_len[q] = len[q];
}

void chip_fast_abort(chip_fast_t *c, unsigned mask) { c->abort = mask & queue_mask(c); }

bool chip_fast_hbm_request(chip_fast_t *c, unsigned k, bool *write, uint32_t *addr, uint32_t *bytes,
                           const uint32_t **data) {
  if (k >= c->ncore) return false;
  return dma_fast_request(&c->core[k].dma, &c->core[k].vmem, write, addr, bytes, data);
}

/* ---- the network ports */
void chip_fast_net_in(chip_fast_t *c, const noc_flit_t in[4], const noc_wide_t in_hi[4], uint8_t credits) {
  memcpy(c->net_in, in, sizeof c->net_in);
  if (c->flit_words > 1) memcpy(c->net_in_hi, in_hi, sizeof c->net_in_hi);
  c->credit_in = credits;
}

void chip_fast_net_out(const chip_fast_t *c, noc_flit_t out[4], noc_wide_t out_hi[4], uint8_t *credits) {
  memcpy(out, noc_fast_out(c->router) + 1, 4 * sizeof *out);  /* router ports 1..4 are the links */
  if (c->flit_words > 1) memcpy(out_hi, noc_fast_out_wide(c->router) + 1, 4 * sizeof *out_hi);
  *credits = (uint8_t)((noc_fast_credit_out(c->router) >> CHIP_FAST_VCS) & 0xFF);
}

/* ---- status */
void chip_fast_queue(const chip_fast_t *c, unsigned q, bool *running, bool *halted, unsigned *error, unsigned *pc,
                     unsigned *opcode) {
  const cmdq_fast_t *x = &c->core[q / NQ].q[q % NQ];
  *running = x->running, *halted = x->halted, *error = x->error, *pc = x->pc;
  *opcode = isa_opcode(((const cmdq_fast_cmd_t *)paged_read(&x->mem, x->pc))->w);
}

uint32_t chip_fast_sem(const chip_fast_t *c, unsigned idx) {
  return c->core[(idx / ISA_NUM_SEMS) % c->ncore].sems[idx % ISA_NUM_SEMS];
}

void chip_fast_counters(const chip_fast_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]) {
  if (c->ncore == 1 && c->nmxu == 1) { /* (the common chip, without the loops: a profile asks every cycle) */
    const core_t *o = &c->core[0];
    const mxu_unit_fast_t *u = &o->mxu[0];
    cnt[CHIP_CNT_DMA_BUSY] = o->dma_busy_cnt, cnt[CHIP_CNT_MXU_BUSY] = o->mxu_busy_cnt;
    cnt[CHIP_CNT_COMPUTE] = u->cnt_compute, cnt[CHIP_CNT_WEIGHT_LOAD] = u->cnt_weight_load;
    cnt[CHIP_CNT_WEIGHT_STALL] = u->cnt_weight_stall, cnt[CHIP_CNT_INPUT_STALL] = u->cnt_input_stall;
    cnt[CHIP_CNT_IDLE] = u->cnt_idle;
    return;
  }
  uint64_t dma = 0, busy = 0, compute = 0, wload = 0, wstall = 0, istall = 0, idle = 0;
  for (unsigned k = 0; k < c->ncore; k++) { /* summed over the cores and MXUs, as chip_top's ports are */
    const core_t *o = &c->core[k];
    dma += o->dma_busy_cnt;
    busy += o->mxu_busy_cnt;
    for (unsigned m = 0; m < c->nmxu; m++) {
      const mxu_unit_fast_t *u = &o->mxu[m];
      compute += u->cnt_compute, wload += u->cnt_weight_load, wstall += u->cnt_weight_stall;
      istall += u->cnt_input_stall, idle += u->cnt_idle;
    }
  }
  cnt[CHIP_CNT_DMA_BUSY] = dma, cnt[CHIP_CNT_MXU_BUSY] = busy, cnt[CHIP_CNT_COMPUTE] = compute;
  cnt[CHIP_CNT_WEIGHT_LOAD] = wload, cnt[CHIP_CNT_WEIGHT_STALL] = wstall, cnt[CHIP_CNT_INPUT_STALL] = istall;
  cnt[CHIP_CNT_IDLE] = idle;
}

bool chip_fast_mxu_error(const chip_fast_t *c) {
  for (unsigned k = 0; k < c->ncore; k++)
    for (unsigned m = 0; m < c->nmxu; m++)
      if (c->core[k].mxu[m].error) return true;
  return false;
}

static bool mxus_drained(const chip_fast_t *c, const core_t *o) {
  for (unsigned m = 0; m < c->nmxu; m++)
    if (!mxu_unit_fast_drained(&o->mxu[m])) return false;
  return true;
}

static bool rdma_sending(const chip_fast_t *c) {
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_sending(&c->rdma[e])) return true;
  return false;
}

static bool rdma_busy(const chip_fast_t *c) {
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_busy(&c->rdma[e])) return true;
  return false;
}

/* chip_core's drained[q]: everything the queue issued is done (the remote-DMA engines are
 * the chip's: a DMA queue waits until none is sending). */
static bool drained(const chip_fast_t *c, const core_t *o, unsigned q) {
  if (q == ISA_QUEUE_DMA) return dma_fast_drained(&o->dma) && !rdma_sending(c);
  return mxus_drained(c, o) && !vec_unit_fast_busy(&o->vec) && o->rel_count == 0;
}

bool chip_fast_idle(const chip_fast_t *c) {
  for (unsigned k = 0; k < c->ncore; k++) {
    const core_t *o = &c->core[k];
    if (o->q[0].running || o->q[1].running || !drained(c, o, 0) || !drained(c, o, 1)) return false;
  }
  return !rdma_busy(c);
}

unsigned chip_fast_occupancy(const chip_fast_t *c) { return noc_fast_occupancy(c->router) & 0xFF; }
void chip_fast_router_flits(const chip_fast_t *c, uint32_t flits[5]) { memcpy(flits, c->rtr_flits, sizeof c->rtr_flits); }
uint32_t chip_fast_slice_drops(const chip_fast_t *c) { return noc_fast_drops(c->router); }
const char *chip_fast_error(const chip_fast_t *c) { return c->error[0] ? c->error : NULL; }

int chip_fast_vmem_read(const chip_fast_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  if (line > c->cfg.geo.vmem_lines || n > c->cfg.geo.vmem_lines - line) return -1;
  for (uint32_t i = 0; i < n; i++)
    memcpy(dst + (size_t)i * c->cfg.geo.cols, paged_read(&c->core[0].vmem, line + i), 4ull * c->cfg.geo.cols);
  return 0;
}

size_t chip_fast_memory(const chip_fast_t *c) {
  size_t n = 0;
  for (unsigned k = 0; k < c->ncore; k++) {
    const core_t *o = &c->core[k];
    n += paged_bytes(&o->vmem) + paged_bytes(&o->q[0].mem) + paged_bytes(&o->q[1].mem);
    for (unsigned m = 0; m < c->nmxu; m++) n += paged_bytes(&o->mxu[m].acc);
  }
  return n;
}

/* ---- one cycle */

/* A pending semaphore update of the cycle. */
typedef struct {
  unsigned n;
  struct {
    unsigned idx;
    uint32_t value;
    bool sub;
  } ev[4 + 2 * NE];
} sem_events_t;

static void sem_event(sem_events_t *s, bool on, unsigned idx, uint32_t value, bool sub) {
  if (!on) return;
  s->ev[s->n].idx = idx & 31, s->ev[s->n].value = value, s->ev[s->n].sub = sub;
  s->n++;
}

static int out_of_memory(chip_fast_t *c) {
  snprintf(c->error, sizeof c->error, "the fast chip (%u,%u) ran out of memory", c->cfg.x, c->cfg.y);
  return -1;
}

/* A line of core k written: the remote-DMA engines drop their copy of it if they hold one. */
static void line_written(chip_fast_t *c, unsigned k, uint32_t line) {
  for (unsigned e = 0; e < NE; e++) rdma_fast_line_written(&c->rdma[e], k, line);
}

static int write_line(chip_fast_t *c, unsigned k, uint32_t line, const uint32_t *data) {
  uint32_t *dst = paged_write(&c->core[k].vmem, line);
  if (!dst) return -1;
  memcpy(dst, data, 4ull * c->cfg.geo.cols);
  line_written(c, k, line);
  return 0;
}

/* What a core's cycle computes before the edge and applies at it. */
typedef struct {
  cmdq_fast_view_t qv[NQ];
  bool is_rdma, is_vec, grant[NQ], sem_signal[NQ], advance[NQ], rel_fire, issue_ready[NQ];
  unsigned sel, mxu_busy_n;
  vec_unit_fast_mxu_t prog;
  uint32_t vecs_issued, vecs_done;
  bool dma_busy;
  dma_fast_out_t dout;
  mxu_unit_fast_out_t mout[CHIP_MAX_MXUS];
  vec_unit_fast_out_t vout;
} core_cycle_t;

/* The core's registered state the units read of each other, its queues' decode, and (obs) its
 * state as the cycle starts. */
static void core_begin(chip_fast_t *c, unsigned k, core_cycle_t *y, chip_obs_core_t *obs, bool lite, unsigned rdma_busy) {
  core_t *o = &c->core[k];
  const unsigned nm = c->nmxu;
  /* the vector unit waits for the MXUs' summed progress (exact: see chip_core) */
  memset(&y->prog, 0, sizeof y->prog);
  y->mxu_busy_n = 0;
  uint8_t mxu_busy_bits = 0;
  for (unsigned m = 0; m < nm; m++) {
    const mxu_unit_fast_t *u = &o->mxu[m];
    y->prog.loads_issued += u->loads_issued, y->prog.loads_done += u->loads_done;
    y->prog.matmuls_issued += u->matmuls_issued, y->prog.matmuls_done += u->matmuls_done;
    y->prog.stores_issued += u->stores_issued, y->prog.stores_done += u->stores_done;
    if (mxu_unit_fast_busy(u)) mxu_busy_bits |= (uint8_t)(1u << m), y->mxu_busy_n++;
  }
  y->vecs_issued = o->vec.issued, y->vecs_done = o->vec.done;
  y->dma_busy = !dma_fast_drained(&o->dma);
  if (obs) {
    for (unsigned q = 0; q < NQ; q++) {
      obs->running[q] = o->q[q].running, obs->pc[q] = o->q[q].pc;
      if (!lite) obs->halted[q] = o->q[q].halted, obs->error[q] = o->q[q].error;
    }
    if (!lite || obs->sem_epoch != o->sem_epoch) memcpy(obs->sems, o->sems, sizeof o->sems); /* (lite: kept) */
    obs->sem_epoch = o->sem_epoch;
    for (unsigned m = 0; m < nm && !lite; m++) {
      const mxu_unit_fast_t *u = &o->mxu[m];
      const uint32_t p[6] = {u->loads_issued, u->loads_done, u->matmuls_issued, u->matmuls_done, u->stores_issued,
                             u->stores_done};
      memcpy(obs->progress[m], p, sizeof p);
      if (mxu_unit_fast_drained(u)) obs->mxu_drained |= (uint8_t)(1u << m);
      if (u->acc_we) obs->acc_we |= (uint8_t)(1u << m);
      obs->acc_waddr[m] = u->acc_waddr;
    }
    if (!lite) obs->vec_progress[0] = y->vecs_issued, obs->vec_progress[1] = y->vecs_done;
    obs->mxu_busy = mxu_busy_bits;
    uint16_t busy = (y->dma_busy ? CHIP_BUSY_DMA : 0) | (y->mxu_busy_n ? CHIP_BUSY_MXU : 0) |
                    (vec_unit_fast_busy(&o->vec) ? CHIP_BUSY_VEC : 0) | (uint16_t)(rdma_busy << CHIP_BUSY_RDMA_SHIFT);
    if (!lite) { /* (what a profile does not read) */
      busy |= (uint16_t)((mxus_drained(c, o) ? CHIP_MXU_DRAINED : 0) | o->rel_count << CHIP_FENCES_SHIFT);
      for (unsigned e = 0; e < NE; e++)
        if (rdma_fast_sending(&c->rdma[e])) busy |= 1u << (CHIP_SENDING_RDMA_SHIFT + e);
    }
    obs->busy = busy;
  }
  /* the queues and their handshakes, but for the remote-DMA engines' readiness (chip_fast_step) */
  cmdq_fast_decode(&o->q[ISA_QUEUE_COMPUTE], &c->limits, &y->qv[ISA_QUEUE_COMPUTE]);
  cmdq_fast_decode(&o->q[ISA_QUEUE_DMA], &c->limits, &y->qv[ISA_QUEUE_DMA]);
  y->is_rdma = y->qv[1].op == ISA_OP_RDMA;
  y->is_vec = y->qv[0].op == ISA_OP_VEC;
  const cmdq_fast_view_t *q0 = &y->qv[0];
  const bool mxu_op = q0->op == ISA_OP_MXU_LOAD || q0->op == ISA_OP_MXU_MATMUL || q0->op == ISA_OP_MXU_STORE;
  y->sel = mxu_op ? isa_mxu(q0->cmd) : 0;  /* in range whenever the command issues */
  y->issue_ready[0] = y->is_vec ? vec_unit_fast_ready(&o->vec)
                                : mxu_op && y->sel < nm && mxu_unit_fast_ready(&o->mxu[y->sel], q0->cmd);
  y->issue_ready[1] = y->is_rdma ? false : dma_fast_ready(&o->dma);
}

/* The core's handshakes once its RDMA's readiness is known: waits granted against the value
 * after earlier events of the cycle (queue 0, then 1), signals, the release fence firing. */
static void core_decide(chip_fast_t *c, unsigned k, core_cycle_t *y) {
  core_t *o = &c->core[k];
  const bool drained_q[NQ] = {drained(c, o, ISA_QUEUE_COMPUTE), drained(c, o, ISA_QUEUE_DMA)};
  const bool signal_ready[NQ] = {o->rel_count != REL_DEPTH, drained_q[ISA_QUEUE_DMA]};
  uint32_t v1 = o->sems[y->qv[1].sem_idx];
  const bool grant0 = y->qv[0].sem_wait && o->sems[y->qv[0].sem_idx] >= y->qv[0].sem_value;
  if (grant0 && y->qv[1].sem_idx == y->qv[0].sem_idx) v1 -= y->qv[0].sem_value;
  y->grant[0] = grant0;
  y->grant[1] = y->qv[1].sem_wait && v1 >= y->qv[1].sem_value;
  for (unsigned q = 0; q < NQ; q++) {
    y->sem_signal[q] = y->qv[q].ok && y->qv[q].op == ISA_OP_SEM_SIGNAL && signal_ready[q];
    y->advance[q] = cmdq_fast_advance(&y->qv[q], drained_q[q], y->grant[q], signal_ready[q], y->issue_ready[q]);
  }
  const release_t *rh = &o->rel[o->rel_head];
  y->rel_fire = o->rel_count != 0 && y->vecs_done >= rh->vecs;
  for (unsigned m = 0; m < c->nmxu && y->rel_fire; m++) {
    const mxu_unit_fast_t *u = &o->mxu[m];
    y->rel_fire = u->loads_done >= rh->loads[m] && u->matmuls_done >= rh->matmuls[m] && u->stores_done >= rh->stores[m];
  }
}

/* The observation's fields known before the cycle: counters, errors, idleness, the HBM
 * requests (a write's data copied, as the RTL's port holds it). */
static inline void observe_begin(chip_fast_t *c, chip_obs_t *obs, bool lite) {
  const unsigned nk = c->ncore;
  if (!lite) memset(obs, 0, sizeof *obs);  /* (lite: every field it fills is written below) */
  obs->lite = lite;
  for (unsigned k = 0; k < nk; k++) obs->core[k].issue = 0;
  chip_fast_counters(c, obs->counters);
  if (lite) return;
  obs->mxu_error = chip_fast_mxu_error(c);
  obs->idle = chip_fast_idle(c);
  for (unsigned k = 0; k < nk; k++) {
    chip_obs_core_t *oc = &obs->core[k];
    bool w = false;
    uint32_t a = 0, b = 0;
    const uint32_t *d = NULL;
    oc->hbm_req_valid = chip_fast_hbm_request(c, k, &w, &a, &b, &d);
    if (oc->hbm_req_valid) {
      oc->hbm_req_write = w, oc->hbm_req_addr = a, oc->hbm_req_bytes = b;
      uint32_t *line = c->obs_line + (size_t)k * c->cfg.geo.cols;
      if (w) memcpy(line, d, 4ull * c->cfg.geo.cols);
      oc->hbm_req_data = w ? line : NULL;
    }
  }
}

/* The remote-DMA engines take RDMAs: the lowest core first when several offer one to an
 * engine in a cycle. take_from[e] is the core engine e takes from, or -1. */
static inline void rdma_arbitrate(chip_fast_t *c, core_cycle_t *cy, int *take_from) {
  const unsigned nk = c->ncore;
  for (unsigned e = 0; e < NE; e++) {
    take_from[e] = -1;
    for (int k = (int)nk - 1; k >= 0; k--)
      if (cy[k].qv[1].issue_valid && cy[k].is_rdma && ISA_GET(cy[k].qv[1].cmd, RDMA, engine) == e) take_from[e] = k;
  }
  for (unsigned k = 0; k < nk; k++)
    if (cy[k].is_rdma) {
      const unsigned e = ISA_GET(cy[k].qv[1].cmd, RDMA, engine);
      cy[k].issue_ready[1] = take_from[e] == (int)k && rdma_fast_ready(&c->rdma[e]);
    }
}

/* Each core's DMA, MXUs and vector unit: each reads the state before the edge and moves to
 * the edge's. Nonzero when one ran out of memory. */
static inline int units_cycle(chip_fast_t *c, core_cycle_t *cy, const bool *hbm_ready,
                              const uint32_t *const *answer) {
  int rc = 0;
  for (unsigned k = 0; k < c->ncore; k++) {
    core_t *o = &c->core[k];
    core_cycle_t *y = &cy[k];
    const uint32_t *cmd0 = y->qv[0].cmd, *cmd1 = y->qv[1].cmd;
    rc |= dma_fast_cycle(&o->dma, &o->vmem, y->qv[1].issue_valid && !y->is_rdma, cmd1, hbm_ready && hbm_ready[k],
                         answer ? answer[k] : NULL, &y->dout);
    for (unsigned m = 0; m < c->nmxu; m++)
      rc |= mxu_unit_fast_cycle(&o->mxu[m], &o->vmem, y->qv[0].issue_valid && !y->is_vec && y->sel == m, cmd0,
                                y->vecs_issued, y->vecs_done, &y->mout[m]);
    vec_unit_fast_cycle(&o->vec, &o->vmem, y->qv[0].issue_valid && y->is_vec, cmd0, &y->prog, &y->vout);
  }
  return rc;
}

/* What the router takes at its edge: the engines' injections (their cycles run here, taking
 * the RDMAs arbitrated) and the links' flits and credits. */
typedef struct {
  noc_flit_t in[PORTS];
  noc_wide_t in_hi[PORTS]; /* (filled only with wide flits) */
  uint32_t credit_in;
} router_inputs_t;

static inline void rdma_cycle(chip_fast_t *c, const core_cycle_t *cy, const int *take_from, const noc_flit_t *rtr_out,
                              uint32_t rtr_credit_out, router_inputs_t *ri, rdma_fast_out_t *rout) {
  const unsigned V = CHIP_FAST_VCS;
  ri->credit_in = 0;
  for (unsigned e = 0; e < NE; e++) {
    const unsigned p = rdma_port(e);
    const int from = take_from[e];
    ri->credit_in |= c->rdma[e].credit_q << (p * V);  /* registered: read before the engine's edge */
    rdma_fast_cycle(&c->rdma[e], c->vmems, from >= 0, from >= 0 ? cy[from].qv[1].cmd : NULL, from >= 0 ? (unsigned)from : 0,
                    &rtr_out[p], c->flit_words > 1 ? &noc_fast_out_wide(c->router)[p] : NULL,
                    (rtr_credit_out >> (p * V)) & 1, &rout[e]);
    ri->in[p] = rout[e].inj;
    if (c->flit_words > 1) ri->in_hi[p] = rout[e].inj_hi;
  }
  memcpy(ri->in + 1, c->net_in, sizeof c->net_in);
  if (c->flit_words > 1) {
    memcpy(ri->in_hi + 1, c->net_in_hi, sizeof c->net_in_hi);
    noc_fast_wide_in(c->router, ri->in_hi);
  }
  ri->credit_in |= (uint32_t)c->credit_in << V;
}

/* The observation's fields of the edge: VMEM writes, the engines' writes, the router's ports. */
static inline void observe_edge(const chip_fast_t *c, chip_obs_t *obs, bool lite, const core_cycle_t *cy,
                                const rdma_fast_out_t *rout, const router_inputs_t *ri, const noc_flit_t *rtr_out,
                                uint32_t rtr_credit_out) {
  for (unsigned k = 0; k < c->ncore && !lite; k++) {
    chip_obs_core_t *oc = &obs->core[k];
    const core_cycle_t *y = &cy[k];
    oc->vmem_we = (uint8_t)(y->dout.vmem_we | y->vout.we << 2);
    oc->vmem_waddr[0] = y->dout.vmem_waddr, oc->vmem_wdata[0] = y->dout.vmem_wdata;
    oc->vmem_waddr[2] = y->vout.waddr, oc->vmem_wdata[2] = y->vout.wdata;
    for (unsigned m = 0; m < c->nmxu; m++) {
      const unsigned p = chip_obs_store_port(m);
      oc->vmem_we |= (uint8_t)(y->mout[m].vmem_we << p);
      oc->vmem_waddr[p] = y->mout[m].vmem_waddr, oc->vmem_wdata[p] = y->mout[m].vmem_wdata;
    }
  }
  _Static_assert(NE == 4, "the engines' write enables, unrolled");
  obs->rdma_we = (uint8_t)(rout[0].vmem_we | rout[1].vmem_we << 1 | rout[2].vmem_we << 2 | rout[3].vmem_we << 3);
  obs->rtr_out_valid = (uint16_t)noc_fast_out_ports(c->router); /* (rtr_in_valid: with the router's edge) */
  if (lite) return;
  for (unsigned e = 0; e < NE; e++) {
    obs->rdma_waddr[e] = rout[e].vmem_we ? (uint32_t)rout[e].vmem_wcore << 30 | rout[e].vmem_wword << 24 |
                                               rout[e].vmem_waddr
                                         : 0;
    obs->rdma_wdata[e] = rout[e].vmem_wdata;
  }
  memcpy(obs->rtr_in, ri->in, sizeof ri->in);
  memcpy(obs->rtr_out, rtr_out, sizeof obs->rtr_out);
  obs->rtr_credit_in = ri->credit_in, obs->rtr_credit_out = rtr_credit_out;
}

/* Core k's semaphores at the edge: waits, then the signals in chip_core's order; then its
 * release fences (the compute queue's SEM_SIGNAL records what must finish first). */
static inline void core_sems_edge(chip_fast_t *c, unsigned k, const core_cycle_t *y, const rdma_fast_out_t *rout) {
  core_t *o = &c->core[k];
  const release_t *rh = &o->rel[o->rel_head];
  sem_events_t se = {0};
  sem_event(&se, y->grant[0], y->qv[0].sem_idx, y->qv[0].sem_value, true);
  sem_event(&se, y->grant[1], y->qv[1].sem_idx, y->qv[1].sem_value, true);
  sem_event(&se, y->rel_fire, rh->sem, rh->value, false);
  sem_event(&se, y->sem_signal[1], y->qv[1].sem_idx, y->qv[1].sem_value, false);
  sem_event(&se, y->dout.sem_signal, y->dout.sem_idx, y->dout.sem_value, false);
  for (unsigned e = 0; e < NE; e++) {
    sem_event(&se, rout[e].lsig && rout[e].lcore == k, rout[e].lsem, rout[e].lvalue, false);
    sem_event(&se, rout[e].rsig && rout[e].vmem_wcore == k, rout[e].rsem, rout[e].rvalue, false);
  }
  for (unsigned i = 0; i < se.n; i++) o->sems[se.ev[i].idx] += se.ev[i].sub ? -se.ev[i].value : se.ev[i].value;
  o->sem_epoch += se.n != 0;

  if (y->sem_signal[0]) {
    release_t *t = &o->rel[(o->rel_head + o->rel_count) % REL_DEPTH];
    t->sem = (uint8_t)y->qv[0].sem_idx, t->value = y->qv[0].sem_value, t->vecs = y->vecs_issued;
    for (unsigned m = 0; m < c->nmxu; m++)
      t->loads[m] = o->mxu[m].loads_issued, t->matmuls[m] = o->mxu[m].matmuls_issued,
      t->stores[m] = o->mxu[m].stores_issued;
  }
  if (y->rel_fire) o->rel_head = (o->rel_head + 1) % REL_DEPTH;
  o->rel_count = o->rel_count + y->sem_signal[0] - y->rel_fire;
}

/* Core k's VMEM at the edge: every write, later ports winning as in chip_core. Nonzero when a
 * page could not be had. */
static inline int core_vmem_edge(chip_fast_t *c, unsigned k, const core_cycle_t *y, const rdma_fast_out_t *rout) {
  core_t *o = &c->core[k];
  int rc = 0;
  if (y->dout.vmem_we && write_line(c, k, y->dout.vmem_waddr, y->dout.vmem_wdata)) rc = -1;
  for (unsigned m = 0; m < c->nmxu; m++)
    if (y->mout[m].vmem_we && write_line(c, k, y->mout[m].vmem_waddr, y->mout[m].vmem_wdata)) rc = -1;
  if (y->vout.we && write_line(c, k, y->vout.waddr, y->vout.wdata)) rc = -1;
  for (unsigned e = 0; e < NE; e++)
    if (rout[e].vmem_we && rout[e].vmem_wcore == k) {
      uint32_t *line = paged_write(&o->vmem, rout[e].vmem_waddr);
      if (!line) {
        rc = -1;
        continue;
      }
      const unsigned fw = c->rdma[e].fw, at = 2 * fw * rout[e].vmem_wword;
      line[at] = (uint32_t)rout[e].vmem_wdata;
      line[at + 1] = (uint32_t)(rout[e].vmem_wdata >> 32);
      for (unsigned j = 1; j < fw; j++) { /* a wide flit's other words */
        const uint64_t v = rout[e].vmem_whi[j - 1];
        line[at + 2 * j] = (uint32_t)v, line[at + 2 * j + 1] = (uint32_t)(v >> 32);
      }
      line_written(c, k, rout[e].vmem_waddr);
    }
  return rc;
}

int chip_fast_step(chip_fast_t *c, const bool *hbm_ready, const uint32_t *const *answer, chip_obs_t *obs) {
  if (c->error[0]) return -1;
  const unsigned nk = c->ncore;
  core_cycle_t cy[CHIP_MAX_CORES];
  bool fp = false;
  const bool lite = obs && obs->lite;
  if (obs) observe_begin(c, obs, lite);
  unsigned rdma_busy = 0; /* (the chip's remote-DMA engines, in every core's busy word) */
  for (unsigned e = 0; obs && e < NE; e++) rdma_busy |= (unsigned)rdma_fast_busy(&c->rdma[e]) << e;
  for (unsigned k = 0; k < nk; k++) {
    core_begin(c, k, &cy[k], obs ? &obs->core[k] : NULL, lite, rdma_busy);
    fp = fp || cy[k].mxu_busy_n || vec_unit_fast_busy(&c->core[k].vec);
  }
  const unsigned saved_mode = fp ? fast_fpmode_enter() : 0;

  int take_from[NE];
  rdma_arbitrate(c, cy, take_from);
  for (unsigned k = 0; k < nk; k++) core_decide(c, k, &cy[k]);
  if (obs)
    for (unsigned k = 0; k < nk; k++)
      obs->core[k].issue = (uint8_t)((cy[k].qv[0].issue_valid && cy[k].issue_ready[0]) |
                                     (cy[k].qv[1].issue_valid && cy[k].issue_ready[1]) << 1);

  int rc = units_cycle(c, cy, hbm_ready, answer);
  const noc_flit_t *rtr_out = noc_fast_out(c->router);
  const uint32_t rtr_credit_out = noc_fast_credit_out(c->router);
  router_inputs_t ri;
  rdma_fast_out_t rout[NE];
  rdma_cycle(c, cy, take_from, rtr_out, rtr_credit_out, &ri, rout);
  if (obs) observe_edge(c, obs, lite, cy, rout, &ri, rtr_out, rtr_credit_out);
  /* flits per router output port: ejected on every local port, then the links */
  for (unsigned e = 0; e < NE; e++) c->rtr_flits[0] += rtr_out[rdma_port(e)].valid;
  for (unsigned p = 1; p < 5; p++) c->rtr_flits[p] += rtr_out[p].valid;

  for (unsigned k = 0; k < nk; k++) {
    core_t *o = &c->core[k];
    core_cycle_t *y = &cy[k];
    core_sems_edge(c, k, y, rout);
    o->dma_busy_cnt += y->dma_busy;
    o->mxu_busy_cnt += y->mxu_busy_n;
    if (core_vmem_edge(c, k, y, rout)) rc = -1;
    /* ---- the queues' edge */
    for (unsigned q = 0; q < NQ; q++) {
      const unsigned bit = k * NQ + q;
      cmdq_fast_commit(&o->q[q], &y->qv[q], (c->abort >> bit) & 1, (c->start >> bit) & 1, c->start_len[bit],
                       y->advance[q]);
    }
  }
  /* ---- the host's command write */
  if (c->host_we && c->host_queue / NQ < nk &&
      cmdq_fast_write(&c->core[c->host_queue / NQ].q[c->host_queue % NQ], c->host_addr, c->host_data))
    rc = -1;
  /* ---- the router (an idle one with nothing arriving returns at once) */
  unsigned in_ports = 0;
  for (unsigned p = 0; p < PORTS; p++) in_ports |= (unsigned)ri.in[p].valid << p;
  noc_fast_step_ports(c->router, ri.in, in_ports, ri.credit_in);
  if (obs) obs->rtr_in_valid = (uint16_t)in_ports;
  if (fp) fast_fpmode_leave(saved_mode);
  c->start = c->abort = 0;  /* start_i and abort_i are high for one cycle */
  return rc ? out_of_memory(c) : 0;
}

int chip_fast_load(chip_fast_t *c, unsigned queue, const uint32_t *cmds, size_t n) {
  memset(c->net_in, 0, sizeof c->net_in);  /* the writes clock the chip: nothing else happens */
  c->credit_in = 0;
  c->start = c->abort = 0;
  c->host_we = true;
  c->host_queue = queue;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    c->host_addr = (uint32_t)i;
    memcpy(c->host_data, cmds + i * ISA_CMD_WORDS, sizeof c->host_data);
    rc = chip_fast_step(c, NULL, NULL, NULL);
  }
  c->host_we = false;
  return rc;
}

/* Whether a queue can do nothing until an input changes something: stopped, or waiting at a
 * SEM_WAIT its semaphore does not satisfy (every queue being parked too, nothing else can
 * add to it). */
static bool queue_parked(chip_fast_t *c, core_t *o, unsigned q) {
  cmdq_fast_t *x = &o->q[q];
  if (!x->running) return true;
  cmdq_fast_view_t v;
  cmdq_fast_decode(x, &c->limits, &v);
  return v.sem_wait && o->sems[v.sem_idx] < v.sem_value;
}

/* Nothing in the chip can change without an input: every unit idle (a DMA at most waiting for
 * HBM answers, a remote-DMA receiver at most waiting for the rest of a packet), no release
 * fence, no row in an MXU, the router empty, no start, abort or host write pending, and each
 * queue stopped or blocked at a SEM_WAIT. Only the MXUs' idle counters and the DMAs' busy
 * counters move in such cycles (chip_fast_skip). */
static bool parked(chip_fast_t *c) {
  if (c->start || c->abort || c->host_we) return false;
  for (unsigned k = 0; k < c->ncore; k++) {
    core_t *o = &c->core[k];
    if (o->rel_count) return false;
    const dma_fast_t *d = &o->dma;
    if (d->fifo_count || d->cur_active || d->drain) return false;
    for (unsigned m = 0; m < c->nmxu; m++) {
      const mxu_unit_fast_t *u = &o->mxu[m];
      if (!mxu_unit_fast_drained(u) || u->acc_we || u->rd_valid || u->if_count) return false;
    }
    if (vec_unit_fast_busy(&o->vec)) return false;
  }
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_sending(&c->rdma[e]) || c->rdma[e].credit_q) return false;
  if (!noc_fast_idle(c->router)) return false;
  for (unsigned k = 0; k < c->ncore; k++)
    if (!queue_parked(c, &c->core[k], 0) || !queue_parked(c, &c->core[k], 1)) return false;
  return true;
}

uint64_t chip_fast_quiet_for(chip_fast_t *c) { return parked(c) ? UINT64_MAX : 0; }

void chip_fast_skip(chip_fast_t *c, uint64_t n) {
  for (unsigned k = 0; k < c->ncore; k++) {
    core_t *o = &c->core[k];
    if (!dma_fast_drained(&o->dma)) o->dma_busy_cnt += n; /* waiting for HBM answers */
    for (unsigned m = 0; m < c->nmxu; m++) mxu_unit_fast_skip(&o->mxu[m], n);
  }
}
