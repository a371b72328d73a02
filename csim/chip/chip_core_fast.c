/* chip_core_fast: the chip_core (chip_core.h) of the fast chip model, csim/fast/chip_fast.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/chip_fast.h"
#include "chip/chip_core.h"
#include "vmodel/chip_top.h"

_Static_assert(CHIP_FAST_VCS == CHIP_ROUTER_VCS, "the fast chip's router has the RTL's VCs");

typedef struct {
  chip_core_t core;
  chip_fast_t *f;
  chip_geometry_t geo;
} fast_core_t;

static chip_fast_t *F(chip_core_t *c) { return ((fast_core_t *)c)->f; }

static void fast_free(chip_core_t *c) {
  if (!c) return;
  chip_fast_free(F(c));
  free(c);
}
static void fast_reset(chip_core_t *c) { chip_fast_reset(F(c)); }
static void fast_set_slice(chip_core_t *c, uint32_t slice) { chip_fast_set_slice(F(c), slice); }
static void fast_load(chip_core_t *c, unsigned queue, const uint32_t *cmds, size_t n) {
  (void)chip_fast_load(F(c), queue, cmds, n);  /* out of memory: chip_fast_error, the run stops */
}
static void fast_start(chip_core_t *c, unsigned mask, const uint32_t len[CHIP_MAX_QUEUES]) {
  chip_fast_start(F(c), mask, len);
}
static void fast_abort(chip_core_t *c, unsigned mask) { chip_fast_abort(F(c), mask); }
static void fast_hbm_request(chip_core_t *c, unsigned k, chip_hbm_req_t *r) {
  r->valid = chip_fast_hbm_request(F(c), k, &r->write, &r->addr, &r->bytes, &r->data);
}
static void fast_step(chip_core_t *c, const bool ready[CHIP_MAX_CORES], const uint32_t *const answer[CHIP_MAX_CORES],
                      chip_obs_t *obs) {
  (void)chip_fast_step(F(c), ready, answer, obs);  /* out of memory: chip_fast_error, the run stops */
}
static void fast_skip(chip_core_t *c, uint64_t n) { chip_fast_skip(F(c), n); }
static uint64_t fast_quiet_for(chip_core_t *c) { return chip_fast_quiet_for(F(c)); }
static void fast_status(chip_core_t *c, chip_core_status_t *st) {
  memset(st, 0, sizeof *st);
  for (unsigned q = 0; q < ISA_NUM_QUEUES * isa_geometry_cores(&((fast_core_t *)c)->geo); q++)
    chip_fast_queue(F(c), q, &st->running[q], &st->halted[q], &st->error[q], &st->pc[q], &st->opcode[q]);
}
static uint32_t fast_sem(chip_core_t *c, unsigned idx) { return chip_fast_sem(F(c), idx); }
static void fast_counters(chip_core_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]) { chip_fast_counters(F(c), cnt); }
static bool fast_mxu_error(chip_core_t *c) { return chip_fast_mxu_error(F(c)); }
static bool fast_idle(chip_core_t *c) { return chip_fast_idle(F(c)); }
static unsigned fast_occupancy(chip_core_t *c) { return chip_fast_occupancy(F(c)); }
static void fast_router_flits(chip_core_t *c, uint32_t flits[5]) { chip_fast_router_flits(F(c), flits); }
static uint32_t fast_slice_drops(chip_core_t *c) { return chip_fast_slice_drops(F(c)); }
static void fast_net_in(chip_core_t *c, const chip_net_t *in) { chip_fast_net_in(F(c), in->flit, in->hi, in->credits); }
static void fast_net_out(chip_core_t *c, chip_net_t *out) {
  chip_fast_net_out(F(c), out->flit, out->hi, &out->credits);
}
static int fast_trace_open(chip_core_t *c, const char *path, char *err, size_t errlen) {
  (void)c;
  snprintf(err, errlen, "cannot trace '%s': a fast chip model has no waveform (use --model rtl, or --rtl-chips for "
           "this chip)", path);
  return -1;
}
static void fast_trace_close(chip_core_t *c) { (void)c; }
static const char *fast_divergence(chip_core_t *c) { return chip_fast_error(F(c)); }

static int fast_vmem_read(chip_core_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  return chip_fast_vmem_read(F(c), line, n, dst);
}

static size_t fast_memory(chip_core_t *c) { return chip_fast_memory(F(c)); }

static int fast_step_idle(chip_core_t *c, uint32_t *busy) {
  chip_obs_t o;
  static const chip_net_t none = {0};
  fast_net_in(c, &none);
  (void)chip_fast_step(F(c), NULL, NULL, &o);
  int active = o.rdma_we;
  *busy = 0;
  for (unsigned k = 0; k < CHIP_MAX_CORES; k++) {
    *busy |= (uint32_t)o.core[k].busy << (16 * k);
    active |= o.core[k].issue || o.core[k].vmem_we || o.core[k].hbm_req_valid;
  }
  return active;
}

static const chip_core_ops_t fast_ops = {
    fast_free,      fast_reset,      fast_set_slice,   fast_load,       fast_start,       fast_abort,
    fast_hbm_request, fast_step,     fast_skip,        fast_quiet_for,  fast_status,      fast_sem,
    fast_counters,  fast_mxu_error,  fast_idle,        fast_occupancy,  fast_router_flits, fast_slice_drops,
    fast_net_in,    fast_net_out,    fast_trace_open,  fast_trace_close, fast_divergence,
    fast_vmem_read, fast_memory, fast_step_idle};

chip_core_t *chip_core_fast_new(const chip_core_config_t *cfg, char *err, size_t errlen) {
  fast_core_t *c = calloc(1, sizeof *c);
  if (!c) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  c->core.ops = &fast_ops;
  c->core.model = CHIP_MODEL_FAST;
  c->geo = cfg->geo;
  const chip_fast_config_t fc = {cfg->geo, cfg->hbm_bytes, cfg->x, cfg->y, cfg->size_x, cfg->size_y, cfg->buf_depth};
  if (!(c->f = chip_fast_new(&fc, err, errlen))) {
    free(c);
    return NULL;
  }
  return &c->core;
}
