/* chip_check: the lockstep chip_core (chip_core.h, chip_core_check_new): the Verilated RTL
 * and the fast model side by side, the same inputs every cycle, every visible event
 * (fast/chip_obs.h) compared every cycle; the first difference is kept as the divergence
 * report (cycle, unit, port or address, both values) and the runs above stop at it. The
 * outputs passed on (status, network ports) are the RTL's. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip_core.h"
#include "vmodel/chip_top.h"

typedef struct {
  chip_core_t core;
  chip_core_t *rtl, *fast;
  unsigned cols;
  uint64_t cycle;          /* steps so far: chip.c's cycle count */
  chip_obs_t obs_rtl, obs_fast;
  char report[512];
} check_core_t;

static check_core_t *K(chip_core_t *c) { return (check_core_t *)c; }

static void diverged(check_core_t *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diverged(check_core_t *k, const char *fmt, ...) {
  int n = snprintf(k->report, sizeof k->report, "the fast model diverged from the RTL at cycle %" PRIu64 ": ", k->cycle);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(k->report + n, sizeof k->report - (size_t)n, fmt, ap);
  va_end(ap);
}

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
}

/* Field CORE, LINE or WORD of an obs_rdma_waddr_o word (rtl/chip_obs.def). */
#define RDMA_WADDR(word, field) ((unsigned)CHIP_OBS_FIELD(word, CHIP_RDMA_WADDR, field))

static const char *const qname[ISA_NUM_QUEUES] = {"compute", "DMA"};
static const char *const progress_name[6] = {"loads issued", "loads done", "matmuls issued", "matmuls done",
                                             "stores issued", "stores done"};
static const char *const counter_name[CHIP_OBS_COUNTERS] = {"DMA busy", "MXU busy", "compute", "weight load",
                                                            "weight stall", "input stall", "MXU idle"};
static const char *const writer_name[CHIP_OBS_VMEM_PORTS] = {"the DMA", "MXU 0's store", "the vector unit",
                                                              "MXU 1's store", "MXU 2's store", "MXU 3's store"};

static bool same_flit(const noc_flit_t *a, const noc_flit_t *b) {
  if (a->valid != b->valid) return false;
  return !a->valid || (a->head == b->head && a->tail == b->tail && a->vc == b->vc && a->data == b->data);
}

static void flit_text(const noc_flit_t *f, char *buf, size_t len) {
  if (!f->valid) snprintf(buf, len, "no flit");
  else snprintf(buf, len, "%s%sflit vc %u data 0x%016" PRIx64, f->head ? "head " : "", f->tail ? "tail " : "", f->vc,
                f->data);
}

/* One core's view: 0, or -1 with the first difference ("core 1: ..." on a chip of several). */
static int compare_core(const chip_obs_core_t *r, const chip_obs_core_t *f, unsigned cols, const char *core, char *why,
                        size_t len) {
  for (unsigned q = 0; q < ISA_NUM_QUEUES; q++)
    if (r->running[q] != f->running[q] || r->halted[q] != f->halted[q] || r->error[q] != f->error[q] ||
        r->pc[q] != f->pc[q]) {
      say(why, len, "%s%s queue: RTL running %d halted %d error %u pc %u, fast running %d halted %d error %u pc %u", core,
               qname[q], r->running[q], r->halted[q], r->error[q], r->pc[q], f->running[q], f->halted[q], f->error[q],
               f->pc[q]);
      return -1;
    }
  if (r->issue != f->issue) {
    say(why, len, "%scommand issue (bit q: queue q hands a command to its unit): RTL 0x%x, fast 0x%x", core, r->issue, f->issue);
    return -1;
  }
  for (unsigned s = 0; s < ISA_NUM_SEMS; s++)
    if (r->sems[s] != f->sems[s]) {
      say(why, len, "%ssemaphore %u: RTL %u, fast %u", core, s, r->sems[s], f->sems[s]);
      return -1;
    }
  for (unsigned m = 0; m < CHIP_MAX_MXUS; m++)
    for (unsigned i = 0; i < 6; i++)
      if (r->progress[m][i] != f->progress[m][i]) {
        say(why, len, "%sMXU %u %s: RTL %u, fast %u", core, m, progress_name[i], r->progress[m][i], f->progress[m][i]);
        return -1;
      }
  for (unsigned i = 0; i < 2; i++)
    if (r->vec_progress[i] != f->vec_progress[i]) {
      say(why, len, "%sVECs %s: RTL %u, fast %u", core, i ? "done" : "issued", r->vec_progress[i], f->vec_progress[i]);
      return -1;
    }
  if (r->busy != f->busy) {
    say(why, len, "%sunits' busy flags (docs/scale.md, obs_busy_o): RTL 0x%04x, fast 0x%04x", core, r->busy, f->busy);
    return -1;
  }
  if (r->mxu_busy != f->mxu_busy || r->mxu_drained != f->mxu_drained) {
    say(why, len, "%sMXUs busy / drained (bit m: MXU m): RTL 0x%x/0x%x, fast 0x%x/0x%x", core, r->mxu_busy, r->mxu_drained,
        f->mxu_busy, f->mxu_drained);
    return -1;
  }
  for (unsigned m = 0; m < CHIP_MAX_MXUS; m++) {
    const bool rw = (r->acc_we >> m) & 1, fw = (f->acc_we >> m) & 1;
    if (rw != fw || (rw && r->acc_waddr[m] != f->acc_waddr[m])) {
      say(why, len, "%sMXU %u accumulator write: RTL %s row %u, fast %s row %u", core, m, rw ? "writes" : "no write",
          r->acc_waddr[m], fw ? "writes" : "no write", f->acc_waddr[m]);
      return -1;
    }
  }
  if (r->vmem_we != f->vmem_we) {
    say(why, len, "%sVMEM line writes (bit 0 DMA, 1 MXU 0's store, 2 vector unit, 2 + m MXU m's store): RTL 0x%x, fast 0x%x", core,
        r->vmem_we, f->vmem_we);
    return -1;
  }
  for (unsigned p = 0; p < CHIP_OBS_VMEM_PORTS; p++) {
    if (!((r->vmem_we >> p) & 1)) continue;
    if (r->vmem_waddr[p] != f->vmem_waddr[p]) {
      say(why, len, "%sVMEM write of %s: RTL line %u, fast line %u", core, writer_name[p], r->vmem_waddr[p], f->vmem_waddr[p]);
      return -1;
    }
    for (unsigned w = 0; w < cols; w++)
      if (r->vmem_wdata[p][w] != f->vmem_wdata[p][w]) {
        say(why, len, "%sVMEM write of %s to line %u, lane %u: RTL 0x%08x, fast 0x%08x", core, writer_name[p], r->vmem_waddr[p],
                 w, r->vmem_wdata[p][w], f->vmem_wdata[p][w]);
        return -1;
      }
  }
  if (r->hbm_req_valid != f->hbm_req_valid ||
      (r->hbm_req_valid && (r->hbm_req_write != f->hbm_req_write || r->hbm_req_addr != f->hbm_req_addr ||
                            r->hbm_req_bytes != f->hbm_req_bytes))) {
    say(why, len, "%sHBM request: RTL %s %s addr 0x%x bytes %u, fast %s %s addr 0x%x bytes %u", core,
             r->hbm_req_valid ? "valid" : "none", r->hbm_req_write ? "write" : "read", r->hbm_req_addr, r->hbm_req_bytes,
             f->hbm_req_valid ? "valid" : "none", f->hbm_req_write ? "write" : "read", f->hbm_req_addr, f->hbm_req_bytes);
    return -1;
  }
  if (r->hbm_req_write)
    for (unsigned w = 0; w < cols; w++)
      if (r->hbm_req_data[w] != f->hbm_req_data[w]) {
        say(why, len, "%sHBM write at 0x%x, word %u: RTL 0x%08x, fast 0x%08x", core, r->hbm_req_addr, w, r->hbm_req_data[w],
                 f->hbm_req_data[w]);
        return -1;
      }
  return 0;
}

int chip_obs_compare(const chip_obs_t *r, const chip_obs_t *f, unsigned cols, char *why, size_t len) {
  static const char *const core_name[CHIP_MAX_CORES] = {"", "core 1: "};
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++)
    if (compare_core(&r->core[k], &f->core[k], cols, core_name[k], why, len)) return -1;
  for (unsigned i = 0; i < CHIP_OBS_COUNTERS; i++)
    if (r->counters[i] != f->counters[i]) {
      say(why, len, "counter '%s': RTL %" PRIu64 ", fast %" PRIu64, counter_name[i], r->counters[i], f->counters[i]);
      return -1;
    }
  if (r->mxu_error != f->mxu_error || r->idle != f->idle) {
    say(why, len, "MXU error / chip idle: RTL %d/%d, fast %d/%d", r->mxu_error, r->idle, f->mxu_error, f->idle);
    return -1;
  }
  if (r->rdma_we != f->rdma_we) {
    say(why, len, "VMEM word writes of the remote-DMA receivers (bit e: engine e): RTL 0x%x, fast 0x%x", r->rdma_we,
             f->rdma_we);
    return -1;
  }
  for (unsigned e = 0; e < ISA_NUM_RDMA_ENGINES; e++)
    if (((r->rdma_we >> e) & 1) && (r->rdma_waddr[e] != f->rdma_waddr[e] || r->rdma_wdata[e] != f->rdma_wdata[e])) {
      say(why, len, "remote-DMA engine %u receiving: RTL core %u line %u word %u data 0x%016" PRIx64 ", fast core %u "
          "line %u word %u data 0x%016" PRIx64, e, RDMA_WADDR(r->rdma_waddr[e], CORE), RDMA_WADDR(r->rdma_waddr[e], LINE),
          RDMA_WADDR(r->rdma_waddr[e], WORD), r->rdma_wdata[e], RDMA_WADDR(f->rdma_waddr[e], CORE),
          RDMA_WADDR(f->rdma_waddr[e], LINE), RDMA_WADDR(f->rdma_waddr[e], WORD), f->rdma_wdata[e]);
      return -1;
    }
  static const char *const port_name[CHIP_OBS_ROUTER_PORTS] = {"local 0", "+X", "-X", "+Y", "-Y",
                                                               "local 1", "local 2", "local 3"};
  for (unsigned p = 0; p < CHIP_OBS_ROUTER_PORTS; p++)
    for (int dir = 0; dir < 2; dir++) {
      const noc_flit_t *a = dir ? &r->rtr_out[p] : &r->rtr_in[p], *b = dir ? &f->rtr_out[p] : &f->rtr_in[p];
      if (same_flit(a, b)) continue;
      char ta[96], tb[96];
      flit_text(a, ta, sizeof ta);
      flit_text(b, tb, sizeof tb);
      say(why, len, "router port %u (%s) %s: RTL %s, fast %s", p, port_name[p], dir ? "output" : "input", ta, tb);
      return -1;
    }
  if (r->rtr_in_valid != f->rtr_in_valid || r->rtr_out_valid != f->rtr_out_valid) { /* (what a profile reads) */
    say(why, len, "router valid masks (bit port) in/out: RTL 0x%02x/0x%02x, fast 0x%02x/0x%02x", r->rtr_in_valid,
        r->rtr_out_valid, f->rtr_in_valid, f->rtr_out_valid);
    return -1;
  }
  if (r->rtr_credit_in != f->rtr_credit_in || r->rtr_credit_out != f->rtr_credit_out) {
    say(why, len, "router credits (bit port * 2 + VC) in/out: RTL 0x%04x/0x%04x, fast 0x%04x/0x%04x", r->rtr_credit_in,
             r->rtr_credit_out, f->rtr_credit_in, f->rtr_credit_out);
    return -1;
  }
  return 0;
}

static void check_free(chip_core_t *c) {
  if (!c) return;
  if (K(c)->rtl) K(c)->rtl->ops->free(K(c)->rtl);
  if (K(c)->fast) K(c)->fast->ops->free(K(c)->fast);
  free(c);
}

#define BOTH(op, ...)                              \
  do {                                             \
    K(c)->rtl->ops->op(K(c)->rtl, __VA_ARGS__);    \
    K(c)->fast->ops->op(K(c)->fast, __VA_ARGS__);  \
  } while (0)

static void check_reset(chip_core_t *c) {
  K(c)->rtl->ops->reset(K(c)->rtl);
  K(c)->fast->ops->reset(K(c)->fast);
}
static void check_set_slice(chip_core_t *c, uint32_t slice) { BOTH(set_slice, slice); }
static void check_net_in(chip_core_t *c, const chip_net_t *in) { BOTH(net_in, in); }
static void check_load(chip_core_t *c, unsigned queue, const uint32_t *cmds, size_t n) { BOTH(load, queue, cmds, n); }
static void check_start(chip_core_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]) { BOTH(start, mask, len); }
static void check_abort(chip_core_t *c, unsigned mask) { BOTH(abort, mask); }
static void check_hbm_request(chip_core_t *c, unsigned core, chip_hbm_req_t *r) {
  K(c)->rtl->ops->hbm_request(K(c)->rtl, core, r);
}

static void check_step(chip_core_t *c, const bool ready[CHIP_MAX_CORES], const uint32_t *const answer[CHIP_MAX_CORES],
                       chip_obs_t *obs) {
  check_core_t *k = K(c);
  k->rtl->ops->step(k->rtl, ready, answer, &k->obs_rtl);
  k->fast->ops->step(k->fast, ready, answer, &k->obs_fast);
  if (!k->report[0]) {
    const char *why = k->fast->ops->divergence(k->fast);
    if (why) diverged(k, "%s", why);
    else {
      char why[400];
      if (chip_obs_compare(&k->obs_rtl, &k->obs_fast, k->cols, why, sizeof why)) diverged(k, "%s", why);
    }
  }
  if (obs) *obs = k->obs_rtl;
  k->cycle++;
}

/* The fast model skips the cycles it says nothing happens in (its event-driven time); the RTL
 * runs them and must show nothing happening (no command issued, no memory written, no HBM
 * request, no flit in its router, no queue moving, the units' busy flags as they were): that
 * holds the fast model's claim to the RTL, and the next step compares everything, the
 * counters the skip moved included. */
static void check_skip(chip_core_t *c, uint64_t n) {
  check_core_t *k = K(c);
  static const chip_net_t none = {0};  /* nothing arrives in skipped cycles */
  k->rtl->ops->net_in(k->rtl, &none);
  k->fast->ops->net_in(k->fast, &none);
  uint32_t busy0 = 0, busy;
  for (uint64_t i = 0; i < n; i++) {
    const int active = k->rtl->ops->step_idle(k->rtl, &busy);
    if (i == 0) busy0 = busy;
    if (!k->report[0] && (active || busy != busy0))
      diverged(k, "the fast model skipped %" PRIu64 " cycles as quiet, but the RTL acts in cycle %" PRIu64
               " of them (busy flags 0x%08x, were 0x%08x)", n, i + 1, busy, busy0);
    k->cycle++;
  }
  k->fast->ops->skip(k->fast, n);
}

static uint64_t check_quiet_for(chip_core_t *c) { return K(c)->fast->ops->quiet_for(K(c)->fast); }

#define RTL_OP(ret, name, args, call) \
  static ret check_##name args { return K(c)->rtl->ops->name call; }
RTL_OP(void, status, (chip_core_t *c, chip_core_status_t *st), (K(c)->rtl, st))
RTL_OP(uint32_t, sem, (chip_core_t *c, unsigned idx), (K(c)->rtl, idx))
RTL_OP(void, counters, (chip_core_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]), (K(c)->rtl, cnt))
RTL_OP(bool, mxu_error, (chip_core_t *c), (K(c)->rtl))
RTL_OP(bool, idle, (chip_core_t *c), (K(c)->rtl))
RTL_OP(unsigned, occupancy, (chip_core_t *c), (K(c)->rtl))
RTL_OP(void, router_flits, (chip_core_t *c, uint32_t flits[5]), (K(c)->rtl, flits))
RTL_OP(uint32_t, slice_drops, (chip_core_t *c), (K(c)->rtl))
RTL_OP(void, net_out, (chip_core_t *c, chip_net_t *out), (K(c)->rtl, out))
RTL_OP(int, trace_open, (chip_core_t *c, const char *path, char *err, size_t errlen), (K(c)->rtl, path, err, errlen))
RTL_OP(void, trace_close, (chip_core_t *c), (K(c)->rtl))

static const char *check_divergence(chip_core_t *c) { return K(c)->report[0] ? K(c)->report : NULL; }

/* The fast model's VMEM: the lockstep has held every write to it to the RTL's. */
static int check_vmem_read(chip_core_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  return K(c)->fast->ops->vmem_read(K(c)->fast, line, n, dst);
}

static size_t check_memory(chip_core_t *c) { return K(c)->fast->ops->memory(K(c)->fast); }

static int check_step_idle(chip_core_t *c, uint32_t *busy) {
  check_step(c, false, NULL, NULL);
  *busy = (uint32_t)K(c)->obs_rtl.core[0].busy | (uint32_t)K(c)->obs_rtl.core[1].busy << 16;
  return 1;
}

static const chip_core_ops_t check_ops = {
    check_free,      check_reset,      check_set_slice,   check_load,      check_start,       check_abort,
    check_hbm_request, check_step,     check_skip,        check_quiet_for, check_status,      check_sem,
    check_counters,  check_mxu_error,  check_idle,        check_occupancy, check_router_flits, check_slice_drops,
    check_net_in,    check_net_out,    check_trace_open, check_trace_close, check_divergence,
    check_vmem_read, check_memory, check_step_idle};

chip_core_t *chip_core_check_new(const chip_core_config_t *cfg, char *err, size_t errlen) {
  check_core_t *k = calloc(1, sizeof *k);
  if (!k) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  k->core.ops = &check_ops;
  k->core.model = CHIP_MODEL_CHECK;
  k->cols = cfg->geo.cols;
  if (!(k->rtl = chip_core_rtl_new(cfg, true, err, errlen)) || !(k->fast = chip_core_fast_new(cfg, err, errlen))) {
    check_free(&k->core);
    return NULL;
  }
  return &k->core;
}
