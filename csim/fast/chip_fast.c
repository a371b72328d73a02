/* chip_fast: see chip_fast.h. The wiring and the cycle order follow rtl/chip_top.sv. */
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

struct chip_fast {
  chip_fast_config_t cfg;
  cmdq_fast_limits_t limits;
  paged_t vmem;
  cmdq_fast_t q[NQ];
  dma_fast_t dma;
  mxu_unit_fast_t mxu[CHIP_MAX_MXUS];
  unsigned nmxu;          /* the core's MXU units */
  vec_unit_fast_t vec;
  rdma_fast_t rdma[NE];
  noc_fast_t *router;
  uint32_t sems[ISA_NUM_SEMS];
  release_t rel[REL_DEPTH];
  unsigned rel_count, rel_head;
  uint64_t dma_busy_cnt, mxu_busy_cnt;
  uint32_t rtr_flits[5];
  /* inputs held until changed, as on the RTL's ports */
  unsigned start, abort;
  uint32_t start_len[NQ];
  bool host_we;
  unsigned host_queue;
  uint32_t host_addr, host_data[ISA_CMD_WORDS];
  noc_flit_t net_in[4];
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
  if (c->nmxu > CHIP_MAX_MXUS) {
    snprintf(err, errlen, "a fast chip has at most %u MXUs per core, not %u", (unsigned)CHIP_MAX_MXUS, c->nmxu);
    free(c);
    return NULL;
  }
  c->limits = (cmdq_fast_limits_t){cfg->geo, cfg->hbm_bytes, cfg->size_x, cfg->size_y};
  const chip_geometry_t *g = &cfg->geo;
  noc_fast_config_t rc = {CHIP_FAST_VCS, NE, cfg->x, cfg->y, cfg->size_x, cfg->size_y, cfg->buf_depth};
  if (paged_init(&c->vmem, g->vmem_lines, 4ull * g->cols, VMEM_PAGE_BYTES) ||
      cmdq_fast_init(&c->q[ISA_QUEUE_COMPUTE], false, g->queue_depth) ||
      cmdq_fast_init(&c->q[ISA_QUEUE_DMA], true, g->queue_depth) || dma_fast_init(&c->dma, g->cols, g->vmem_lines) ||
      vec_unit_fast_init(&c->vec, g->cols, g->vmem_lines) || !(c->obs_line = calloc(g->cols, sizeof *c->obs_line)))
    goto oom;
  for (unsigned m = 0; m < c->nmxu; m++)
    if (mxu_unit_fast_init(&c->mxu[m], g)) goto oom;
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_init(&c->rdma[e], g->cols, g->vmem_lines, cfg->buf_depth)) goto oom;
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
  paged_free(&c->vmem);
  for (unsigned q = 0; q < NQ; q++) cmdq_fast_free(&c->q[q]);
  dma_fast_free(&c->dma);
  for (unsigned m = 0; m < c->nmxu; m++) mxu_unit_fast_free(&c->mxu[m]);
  vec_unit_fast_free(&c->vec);
  for (unsigned e = 0; e < NE; e++) rdma_fast_free(&c->rdma[e]);
  noc_fast_free(c->router);
  free(c->obs_line);
  free(c);
}

void chip_fast_reset(chip_fast_t *c) {
  for (unsigned q = 0; q < NQ; q++) cmdq_fast_reset(&c->q[q]);
  dma_fast_reset(&c->dma);
  for (unsigned m = 0; m < c->nmxu; m++) mxu_unit_fast_reset(&c->mxu[m]);
  vec_unit_fast_reset(&c->vec);
  for (unsigned e = 0; e < NE; e++) rdma_fast_reset(&c->rdma[e]);
  noc_fast_reset(c->router);
  memset(c->sems, 0, sizeof c->sems);
  c->rel_count = c->rel_head = 0;
  c->dma_busy_cnt = c->mxu_busy_cnt = 0;
  memset(c->rtr_flits, 0, sizeof c->rtr_flits);
  c->start = c->abort = 0;
  c->host_we = false;
  memset(c->net_in, 0, sizeof c->net_in);
  c->credit_in = 0;
}

void chip_fast_set_slice(chip_fast_t *c, uint32_t slice) { noc_fast_set_slice(c->router, slice); }

void chip_fast_start(chip_fast_t *c, unsigned mask, const uint32_t len[ISA_NUM_QUEUES]) {
  c->start = mask & ISA_QMASK_ALL;
  for (unsigned q = 0; q < NQ; q++) c->start_len[q] = len[q];
}

void chip_fast_abort(chip_fast_t *c, unsigned mask) { c->abort = mask & ISA_QMASK_ALL; }

bool chip_fast_hbm_request(chip_fast_t *c, bool *write, uint32_t *addr, uint32_t *bytes, const uint32_t **data) {
  return dma_fast_request(&c->dma, &c->vmem, write, addr, bytes, data);
}

/* ---- the network ports */
void chip_fast_net_in(chip_fast_t *c, const noc_flit_t in[4], uint8_t credits) {
  memcpy(c->net_in, in, sizeof c->net_in);
  c->credit_in = credits;
}

void chip_fast_net_out(const chip_fast_t *c, noc_flit_t out[4], uint8_t *credits) {
  memcpy(out, noc_fast_out(c->router) + 1, 4 * sizeof *out);  /* router ports 1..4 are the links */
  *credits = (uint8_t)((noc_fast_credit_out(c->router) >> CHIP_FAST_VCS) & 0xFF);
}

/* ---- status */
void chip_fast_queue(const chip_fast_t *c, unsigned q, bool *running, bool *halted, unsigned *error, unsigned *pc,
                     unsigned *opcode) {
  const cmdq_fast_t *x = &c->q[q];
  *running = x->running, *halted = x->halted, *error = x->error, *pc = x->pc;
  *opcode = isa_opcode(((const cmdq_fast_cmd_t *)paged_read(&x->mem, x->pc))->w);
}

uint32_t chip_fast_sem(const chip_fast_t *c, unsigned idx) { return c->sems[idx & 31]; }

void chip_fast_counters(const chip_fast_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]) {
  cnt[CHIP_CNT_DMA_BUSY] = c->dma_busy_cnt;
  cnt[CHIP_CNT_MXU_BUSY] = c->mxu_busy_cnt;
  cnt[CHIP_CNT_COMPUTE] = cnt[CHIP_CNT_WEIGHT_LOAD] = cnt[CHIP_CNT_WEIGHT_STALL] = 0;
  cnt[CHIP_CNT_INPUT_STALL] = cnt[CHIP_CNT_IDLE] = 0;
  for (unsigned m = 0; m < c->nmxu; m++) {  /* summed over the MXUs, as chip_top's ports are */
    const mxu_unit_fast_t *u = &c->mxu[m];
    cnt[CHIP_CNT_COMPUTE] += u->cnt_compute;
    cnt[CHIP_CNT_WEIGHT_LOAD] += u->cnt_weight_load;
    cnt[CHIP_CNT_WEIGHT_STALL] += u->cnt_weight_stall;
    cnt[CHIP_CNT_INPUT_STALL] += u->cnt_input_stall;
    cnt[CHIP_CNT_IDLE] += u->cnt_idle;
  }
}

bool chip_fast_mxu_error(const chip_fast_t *c) {
  for (unsigned m = 0; m < c->nmxu; m++)
    if (c->mxu[m].error) return true;
  return false;
}

static bool mxus_drained(const chip_fast_t *c) {
  for (unsigned m = 0; m < c->nmxu; m++)
    if (!mxu_unit_fast_drained(&c->mxu[m])) return false;
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

/* chip_top's drained[q]: everything the queue issued is done. */
static bool drained(const chip_fast_t *c, unsigned q) {
  if (q == ISA_QUEUE_DMA) return dma_fast_drained(&c->dma) && !rdma_sending(c);
  return mxus_drained(c) && !vec_unit_fast_busy(&c->vec) && c->rel_count == 0;
}

bool chip_fast_idle(const chip_fast_t *c) {
  return !c->q[0].running && !c->q[1].running && drained(c, 0) && drained(c, 1) && !rdma_busy(c);
}

unsigned chip_fast_occupancy(const chip_fast_t *c) { return noc_fast_occupancy(c->router) & 0xFF; }
void chip_fast_router_flits(const chip_fast_t *c, uint32_t flits[5]) { memcpy(flits, c->rtr_flits, sizeof c->rtr_flits); }
uint32_t chip_fast_slice_drops(const chip_fast_t *c) { return noc_fast_drops(c->router); }
const char *chip_fast_error(const chip_fast_t *c) { return c->error[0] ? c->error : NULL; }

int chip_fast_vmem_read(const chip_fast_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  if (line > c->cfg.geo.vmem_lines || n > c->cfg.geo.vmem_lines - line) return -1;
  for (uint32_t i = 0; i < n; i++)
    memcpy(dst + (size_t)i * c->cfg.geo.cols, paged_read(&c->vmem, line + i), 4ull * c->cfg.geo.cols);
  return 0;
}

size_t chip_fast_memory(const chip_fast_t *c) {
  size_t n = paged_bytes(&c->vmem) + paged_bytes(&c->q[0].mem) + paged_bytes(&c->q[1].mem);
  for (unsigned m = 0; m < c->nmxu; m++) n += paged_bytes(&c->mxu[m].acc);
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

/* A line written: the remote-DMA engines drop their copy of it if they hold one. */
static void line_written(chip_fast_t *c, uint32_t line) {
  for (unsigned e = 0; e < NE; e++) rdma_fast_line_written(&c->rdma[e], line);
}

static int write_line(chip_fast_t *c, uint32_t line, const uint32_t *data) {
  uint32_t *dst = paged_write(&c->vmem, line);
  if (!dst) return -1;
  memcpy(dst, data, 4ull * c->cfg.geo.cols);
  line_written(c, line);
  return 0;
}

int chip_fast_step(chip_fast_t *c, bool hbm_ready, const uint32_t *answer, chip_obs_t *obs) {
  if (c->error[0]) return -1;
  const unsigned V = CHIP_FAST_VCS;
  cmdq_fast_t *cq = &c->q[ISA_QUEUE_COMPUTE], *dq = &c->q[ISA_QUEUE_DMA];
  /* ---- registered state the units read of each other */
  const unsigned nm = c->nmxu;
  /* the vector unit waits for the MXUs' summed progress (exact: see chip_top) */
  vec_unit_fast_mxu_t prog = {0};
  unsigned mxu_busy_n = 0;
  uint8_t mxu_busy_bits = 0;
  for (unsigned m = 0; m < nm; m++) {
    const mxu_unit_fast_t *u = &c->mxu[m];
    prog.loads_issued += u->loads_issued, prog.loads_done += u->loads_done;
    prog.matmuls_issued += u->matmuls_issued, prog.matmuls_done += u->matmuls_done;
    prog.stores_issued += u->stores_issued, prog.stores_done += u->stores_done;
    if (mxu_unit_fast_busy(u)) mxu_busy_bits |= (uint8_t)(1u << m), mxu_busy_n++;
  }
  const uint32_t vecs_issued = c->vec.issued, vecs_done = c->vec.done;
  const bool dma_busy = !dma_fast_drained(&c->dma), mxu_busy = mxu_busy_n != 0;
  const bool drained_c = drained(c, ISA_QUEUE_COMPUTE), drained_d = drained(c, ISA_QUEUE_DMA);
  if (obs) {
    memset(obs, 0, sizeof *obs);
    for (unsigned q = 0; q < NQ; q++) {
      obs->running[q] = c->q[q].running, obs->halted[q] = c->q[q].halted;
      obs->error[q] = c->q[q].error, obs->pc[q] = c->q[q].pc;
    }
    memcpy(obs->sems, c->sems, sizeof c->sems);
    for (unsigned m = 0; m < nm; m++) {
      const mxu_unit_fast_t *u = &c->mxu[m];
      const uint32_t p[6] = {u->loads_issued, u->loads_done, u->matmuls_issued, u->matmuls_done, u->stores_issued,
                             u->stores_done};
      memcpy(obs->progress[m], p, sizeof p);
      if (mxu_unit_fast_drained(u)) obs->mxu_drained |= (uint8_t)(1u << m);
      if (u->acc_we) obs->acc_we |= (uint8_t)(1u << m);
      obs->acc_waddr[m] = u->acc_waddr;
    }
    obs->vec_progress[0] = vecs_issued, obs->vec_progress[1] = vecs_done;
    obs->mxu_busy = mxu_busy_bits;
    uint16_t busy = (dma_busy ? CHIP_BUSY_DMA : 0) | (mxu_busy ? CHIP_BUSY_MXU : 0) |
                    (vec_unit_fast_busy(&c->vec) ? CHIP_BUSY_VEC : 0) |
                    (mxus_drained(c) ? CHIP_MXU_DRAINED : 0) | (uint16_t)(c->rel_count << CHIP_FENCES_SHIFT);
    for (unsigned e = 0; e < NE; e++) {
      if (rdma_fast_busy(&c->rdma[e])) busy |= 1u << (CHIP_BUSY_RDMA_SHIFT + e);
      if (rdma_fast_sending(&c->rdma[e])) busy |= 1u << (CHIP_SENDING_RDMA_SHIFT + e);
    }
    obs->busy = busy;
    chip_fast_counters(c, obs->counters);
    obs->mxu_error = chip_fast_mxu_error(c);
    obs->idle = chip_fast_idle(c);
    bool w = false;
    uint32_t a = 0, b = 0;
    const uint32_t *d = NULL;
    obs->hbm_req_valid = chip_fast_hbm_request(c, &w, &a, &b, &d);
    if (obs->hbm_req_valid) {
      obs->hbm_req_write = w, obs->hbm_req_addr = a, obs->hbm_req_bytes = b;
      if (w) memcpy(c->obs_line, d, 4ull * c->cfg.geo.cols);
      obs->hbm_req_data = w ? c->obs_line : NULL;
    }
  }
  const bool fp = vec_unit_fast_busy(&c->vec) || mxu_busy;
  const unsigned saved_mode = fp ? fast_fpmode_enter() : 0;

  /* ---- the queues and their handshakes */
  cmdq_fast_view_t qv[NQ];
  cmdq_fast_decode(cq, &c->limits, &qv[ISA_QUEUE_COMPUTE]);
  cmdq_fast_decode(dq, &c->limits, &qv[ISA_QUEUE_DMA]);
  const uint32_t *cmd0 = qv[0].cmd, *cmd1 = qv[1].cmd;
  const bool is_rdma = qv[1].op == ISA_OP_RDMA, is_vec = qv[0].op == ISA_OP_VEC;
  const unsigned engine = is_rdma ? ISA_GET(cmd1, RDMA, engine) : 0;
  const bool mxu_op = qv[0].op == ISA_OP_MXU_LOAD || qv[0].op == ISA_OP_MXU_MATMUL || qv[0].op == ISA_OP_MXU_STORE;
  const unsigned sel = mxu_op ? isa_mxu(cmd0) : 0;  /* in range whenever the command issues */
  const bool issue_ready[NQ] = {is_vec ? vec_unit_fast_ready(&c->vec)
                                       : mxu_op && sel < nm && mxu_unit_fast_ready(&c->mxu[sel], cmd0),
                                is_rdma ? rdma_fast_ready(&c->rdma[engine]) : dma_fast_ready(&c->dma)};
  const bool signal_ready[NQ] = {c->rel_count != REL_DEPTH, drained_d};
  const bool drained_q[NQ] = {drained_c, drained_d};
  /* waits are granted against the value after earlier events of the cycle: queue 0, then 1 */
  uint32_t v1 = c->sems[qv[1].sem_idx];
  const bool grant0 = qv[0].sem_wait && c->sems[qv[0].sem_idx] >= qv[0].sem_value;
  if (grant0 && qv[1].sem_idx == qv[0].sem_idx) v1 -= qv[0].sem_value;
  const bool grant[NQ] = {grant0, qv[1].sem_wait && v1 >= qv[1].sem_value};
  bool sem_signal[NQ], advance[NQ];
  for (unsigned q = 0; q < NQ; q++) {
    sem_signal[q] = qv[q].ok && qv[q].op == ISA_OP_SEM_SIGNAL && signal_ready[q];
    advance[q] = cmdq_fast_advance(&qv[q], drained_q[q], grant[q], signal_ready[q], issue_ready[q]);
  }
  const release_t *rh = &c->rel[c->rel_head];
  bool rel_fire = c->rel_count != 0 && vecs_done >= rh->vecs;
  for (unsigned m = 0; m < nm && rel_fire; m++) {
    const mxu_unit_fast_t *u = &c->mxu[m];
    rel_fire = u->loads_done >= rh->loads[m] && u->matmuls_done >= rh->matmuls[m] && u->stores_done >= rh->stores[m];
  }
  if (obs) obs->issue = (uint8_t)((qv[0].issue_valid && issue_ready[0]) | (qv[1].issue_valid && issue_ready[1]) << 1);

  /* ---- the units' cycles: each reads the state before the edge and moves to the edge's */
  dma_fast_out_t dout;
  mxu_unit_fast_out_t mout[CHIP_MAX_MXUS];
  vec_unit_fast_out_t vout;
  rdma_fast_out_t rout[NE];
  int rc = dma_fast_cycle(&c->dma, &c->vmem, qv[1].issue_valid && !is_rdma, cmd1, hbm_ready, answer, &dout);
  for (unsigned m = 0; m < nm; m++)
    rc |= mxu_unit_fast_cycle(&c->mxu[m], &c->vmem, qv[0].issue_valid && !is_vec && sel == m, cmd0, vecs_issued,
                              vecs_done, &mout[m]);
  vec_unit_fast_cycle(&c->vec, &c->vmem, qv[0].issue_valid && is_vec, cmd0, &prog, &vout);
  const noc_flit_t *rtr_out = noc_fast_out(c->router);
  const uint32_t rtr_credit_out = noc_fast_credit_out(c->router);
  noc_flit_t rtr_in[PORTS];
  uint32_t rtr_credit_in = 0;
  for (unsigned e = 0; e < NE; e++) {
    const unsigned p = rdma_port(e);
    rtr_credit_in |= c->rdma[e].credit_q << (p * V);  /* registered: read before the engine's edge */
    rdma_fast_cycle(&c->rdma[e], &c->vmem, qv[1].issue_valid && is_rdma && engine == e, cmd1, &rtr_out[p],
                    (rtr_credit_out >> (p * V)) & 1, &rout[e]);
    rtr_in[p] = rout[e].inj;
  }
  memcpy(rtr_in + 1, c->net_in, sizeof c->net_in);
  rtr_credit_in |= (uint32_t)c->credit_in << V;
  if (obs) {
    obs->vmem_we = (uint8_t)(dout.vmem_we | vout.we << 2);
    obs->vmem_waddr[0] = dout.vmem_waddr, obs->vmem_wdata[0] = dout.vmem_wdata;
    obs->vmem_waddr[2] = vout.waddr, obs->vmem_wdata[2] = vout.wdata;
    for (unsigned m = 0; m < nm; m++) {
      const unsigned p = chip_obs_store_port(m);
      obs->vmem_we |= (uint8_t)(mout[m].vmem_we << p);
      obs->vmem_waddr[p] = mout[m].vmem_waddr, obs->vmem_wdata[p] = mout[m].vmem_wdata;
    }
    for (unsigned e = 0; e < NE; e++) {
      obs->rdma_we |= (uint8_t)(rout[e].vmem_we << e);
      obs->rdma_waddr[e] = rout[e].vmem_wword << 24 | rout[e].vmem_waddr;
      obs->rdma_wdata[e] = rout[e].vmem_wdata;
    }
    memcpy(obs->rtr_in, rtr_in, sizeof rtr_in);
    memcpy(obs->rtr_out, rtr_out, sizeof obs->rtr_out);
    obs->rtr_credit_in = rtr_credit_in, obs->rtr_credit_out = rtr_credit_out;
  }
  /* flits per router output port: ejected on every local port, then the links */
  for (unsigned e = 0; e < NE; e++) c->rtr_flits[0] += rtr_out[rdma_port(e)].valid;
  for (unsigned p = 1; p < 5; p++) c->rtr_flits[p] += rtr_out[p].valid;

  /* ---- the semaphores: waits, then the signals in chip_top's order */
  sem_events_t se = {0};
  sem_event(&se, grant[0], qv[0].sem_idx, qv[0].sem_value, true);
  sem_event(&se, grant[1], qv[1].sem_idx, qv[1].sem_value, true);
  sem_event(&se, rel_fire, rh->sem, rh->value, false);
  sem_event(&se, sem_signal[1], qv[1].sem_idx, qv[1].sem_value, false);
  sem_event(&se, dout.sem_signal, dout.sem_idx, dout.sem_value, false);
  for (unsigned e = 0; e < NE; e++) {
    sem_event(&se, rout[e].lsig, rout[e].lsem, rout[e].lvalue, false);
    sem_event(&se, rout[e].rsig, rout[e].rsem, rout[e].rvalue, false);
  }
  for (unsigned i = 0; i < se.n; i++) c->sems[se.ev[i].idx] += se.ev[i].sub ? -se.ev[i].value : se.ev[i].value;

  /* ---- release fences: the compute queue's SEM_SIGNAL records what must finish first */
  if (sem_signal[0]) {
    release_t *t = &c->rel[(c->rel_head + c->rel_count) % REL_DEPTH];
    t->sem = (uint8_t)qv[0].sem_idx, t->value = qv[0].sem_value, t->vecs = vecs_issued;
    for (unsigned m = 0; m < nm; m++)
      t->loads[m] = c->mxu[m].loads_issued, t->matmuls[m] = c->mxu[m].matmuls_issued,
      t->stores[m] = c->mxu[m].stores_issued;
  }
  if (rel_fire) c->rel_head = (c->rel_head + 1) % REL_DEPTH;
  c->rel_count = c->rel_count + sem_signal[0] - rel_fire;
  c->dma_busy_cnt += dma_busy;
  c->mxu_busy_cnt += mxu_busy_n;

  /* ---- VMEM: every write of the edge, later ports winning as in chip_top */
  if (dout.vmem_we && write_line(c, dout.vmem_waddr, dout.vmem_wdata)) rc = -1;
  for (unsigned m = 0; m < nm; m++)
    if (mout[m].vmem_we && write_line(c, mout[m].vmem_waddr, mout[m].vmem_wdata)) rc = -1;
  if (vout.we && write_line(c, vout.waddr, vout.wdata)) rc = -1;
  for (unsigned e = 0; e < NE; e++)
    if (rout[e].vmem_we) {
      uint32_t *line = paged_write(&c->vmem, rout[e].vmem_waddr);
      if (!line) {
        rc = -1;
        continue;
      }
      line[2 * rout[e].vmem_wword] = (uint32_t)rout[e].vmem_wdata;
      line[2 * rout[e].vmem_wword + 1] = (uint32_t)(rout[e].vmem_wdata >> 32);
      line_written(c, rout[e].vmem_waddr);
    }

  /* ---- the queues' edge, the host's command write, the router */
  for (unsigned q = 0; q < NQ; q++)
    cmdq_fast_commit(&c->q[q], &qv[q], (c->abort >> q) & 1, (c->start >> q) & 1, c->start_len[q], advance[q]);
  if (c->host_we && cmdq_fast_write(&c->q[c->host_queue], c->host_addr, c->host_data)) rc = -1;
  if (!noc_fast_idle(c->router) || rtr_credit_in) {
    noc_fast_step(c->router, rtr_in, rtr_credit_in);
  } else {
    bool any = false;
    for (unsigned p = 0; p < PORTS && !any; p++) any = rtr_in[p].valid;
    if (any) noc_fast_step(c->router, rtr_in, rtr_credit_in);
  }
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
    rc = chip_fast_step(c, false, NULL, NULL);
  }
  c->host_we = false;
  return rc;
}

/* Whether a queue can do nothing until an input changes something: stopped, or waiting at a
 * SEM_WAIT its semaphore does not satisfy (the other queue being parked too, nothing else can
 * add to it). */
static bool queue_parked(chip_fast_t *c, unsigned q) {
  cmdq_fast_t *x = &c->q[q];
  if (!x->running) return true;
  cmdq_fast_view_t v;
  cmdq_fast_decode(x, &c->limits, &v);
  return v.sem_wait && c->sems[v.sem_idx] < v.sem_value;
}

/* Nothing in the chip can change without an input: every unit idle (the DMA at most waiting for
 * HBM answers, a remote-DMA receiver at most waiting for the rest of a packet), no release
 * fence, no row in the MXU, the router empty, no start, abort or host write pending, and each
 * queue stopped or blocked at a SEM_WAIT. Only the MXU's idle counter and the DMA's busy
 * counter move in such cycles (chip_fast_skip). */
static bool parked(chip_fast_t *c) {
  if (c->start || c->abort || c->host_we || c->rel_count) return false;
  const dma_fast_t *d = &c->dma;
  if (d->fifo_count || d->cur_active || d->drain) return false;
  for (unsigned m = 0; m < c->nmxu; m++) {
    const mxu_unit_fast_t *u = &c->mxu[m];
    if (!mxu_unit_fast_drained(u) || u->acc_we || u->rd_valid || u->if_count) return false;
  }
  if (vec_unit_fast_busy(&c->vec)) return false;
  for (unsigned e = 0; e < NE; e++)
    if (rdma_fast_sending(&c->rdma[e]) || c->rdma[e].credit_q) return false;
  if (!noc_fast_idle(c->router)) return false;
  return queue_parked(c, 0) && queue_parked(c, 1);
}

uint64_t chip_fast_quiet_for(chip_fast_t *c) { return parked(c) ? UINT64_MAX : 0; }

void chip_fast_skip(chip_fast_t *c, uint64_t n) {
  if (!dma_fast_drained(&c->dma)) c->dma_busy_cnt += n; /* waiting for HBM answers */
  for (unsigned m = 0; m < c->nmxu; m++) mxu_unit_fast_skip(&c->mxu[m], n);
}
