/* chip: see chip.h; the chip carrying out the host's operations itself (chip_host_local), and
 * every rank's part of a chip of an MPI job in chip_remote.c. */
#include "chip/chip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip_core.h"
#include "chip/chip_host.h"
#include "chip/hbm.h"


chip_config_t chip_config_default(unsigned rows, unsigned cols) {
  return (chip_config_t){.rows = rows, .cols = cols, .hbm_bytes = CHIP_DEFAULT_HBM_BYTES,
                         .hbm_bytes_per_cycle = CHIP_DEFAULT_HBM_BYTES_PER_CYCLE,
                         .hbm_latency = CHIP_DEFAULT_HBM_LATENCY, .seed = 1,
                         .clock_mhz = CHIP_DEFAULT_CLOCK_MHZ};
}

int chip_geometry_for(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, chip_model_t model,
                      chip_geometry_t *g, char *err, size_t errlen) {
  if (mxus == 0) mxus = 1;
  if (cores == 0) cores = 1;
  if (!chip_top_geometry(rows, cols, mxus, cores, g)) return 0;
  if (mxus > CHIP_MAX_MXUS || cores > CHIP_MAX_CORES) {
    snprintf(err, errlen, "%u cores of %u MXUs: the models take 1..%u cores of 1..%u MXUs", cores, mxus,
             (unsigned)CHIP_MAX_CORES, (unsigned)CHIP_MAX_MXUS);
    return -1;
  }
  if (chip_top_geometry(rows, cols, 1, 1, g)) {
    snprintf(err, errlen, "no chip with a %ux%u MXU in this build (built: %s)", rows, cols, chip_top_sizes());
    return -1;
  }
  if (model != CHIP_MODEL_FAST) {
    snprintf(err, errlen, "no %s chip of %u core(s) with %u %ux%u MXU(s) in this build (built: %s; the fast model "
             "takes up to %u cores of up to %u MXUs)", model == CHIP_MODEL_CHECK ? "lockstep" : "RTL", cores, mxus, rows,
             cols, chip_top_sizes(), (unsigned)CHIP_MAX_CORES, (unsigned)CHIP_MAX_MXUS);
    return -1;
  }
  g->mxus = mxus;
  g->cores = cores;
  return 0;
}

int chip_flit_words_check(unsigned flit_words, unsigned cols, chip_model_t model, char *err, size_t errlen) {
  if (flit_words <= 1) return 0;
  const unsigned line_words = cols / 2 ? cols / 2 : 1;
  if (model != CHIP_MODEL_FAST) {
    snprintf(err, errlen, "%u-word flits run on the fast model only (the RTL's flits are 64 bits: --model fast)",
             flit_words);
    return -1;
  }
  if ((flit_words & (flit_words - 1)) || flit_words > NOC_FLIT_MAX_WORDS || flit_words > line_words) {
    snprintf(err, errlen, "%u-word flits: a power of two up to %u words and at most a VMEM line (%u words at %u "
             "columns)", flit_words, NOC_FLIT_MAX_WORDS, line_words, cols);
    return -1;
  }
  return 0;
}

int chip_check_config(const chip_config_t *cfg, chip_geometry_t *geo, char *err, size_t errlen) {
  if (chip_geometry_for(cfg->rows, cfg->cols, cfg->mxus, cfg->cores, cfg->model, geo, err, errlen)) return -1;
  if (chip_flit_words_check(cfg->flit_words, cfg->cols, cfg->model, err, errlen)) return -1;
  geo->flit_words = cfg->flit_words > 1 ? cfg->flit_words : 1;
  if (cfg->hbm_bytes == 0 || cfg->hbm_bytes > (1ull << 32)) {
    snprintf(err, errlen, "HBM size must be 1 byte .. 4 GiB");
    return -1;
  }
  if (cfg->hbm_bytes_per_cycle == 0 || cfg->hbm_latency == 0 || cfg->hbm_bytes_per_cycle > CHIP_MAX_HBM_BYTES_PER_CYCLE ||
      cfg->hbm_latency > CHIP_MAX_HBM_LATENCY) {
    snprintf(err, errlen, "HBM bandwidth must be 1..%u bytes per cycle and latency 1..%u cycles",
             CHIP_MAX_HBM_BYTES_PER_CYCLE, CHIP_MAX_HBM_LATENCY);
    return -1;
  }
  return 0;
}

chip_t *chip_alloc(const chip_config_t *cfg, const chip_geometry_t *geo, const chip_host_ops_t *host) {
  chip_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->cfg = *cfg;
  c->host = host;
  c->geo = *geo;
  c->queues = ISA_NUM_QUEUES * isa_geometry_cores(geo);
  return c;
}

chip_t *chip_new(const chip_config_t *cfg, char *err, size_t errlen) {
  chip_geometry_t geo;
  if (chip_check_config(cfg, &geo, err, errlen)) return NULL;
  chip_t *c = chip_alloc(cfg, &geo, &chip_host_local);
  if (!c) goto oom;
  c->ports = isa_geometry_cores(&geo);
  c->line = calloc((size_t)CHIP_MAX_CORES * geo.cols, sizeof *c->line);
  /* Each core has its port into the one memory, with its share of the chip's bandwidth (a v2
   * or v3 TensorCore has HBM of its own: docs/isa.md, "Cores"). */
  const unsigned share = (cfg->hbm_bytes_per_cycle + c->ports - 1) / c->ports;
  if (!c->line || hbm_init(&c->hbm[0], cfg->hbm_bytes, share, cfg->hbm_latency, 4 * geo.cols)) goto oom;
  for (unsigned k = 1; k < c->ports; k++)
    if (hbm_init_port(&c->hbm[k], &c->hbm[0], share, cfg->hbm_latency, 4 * geo.cols)) goto oom;
  chip_core_config_t cc = {geo, cfg->hbm_bytes == (1ull << 32) ? 0xFFFFFFFFu : (uint32_t)cfg->hbm_bytes, cfg->x,
                           cfg->y, cfg->pod_x ? cfg->pod_x : 1, cfg->pod_y ? cfg->pod_y : 1, CHIP_ROUTER_DEPTH, cfg->seed};
  switch (cfg->model) {
    case CHIP_MODEL_FAST: c->core = chip_core_fast_new(&cc, err, errlen); break;
    case CHIP_MODEL_CHECK: c->core = chip_core_check_new(&cc, err, errlen); break;
    default: c->core = chip_core_rtl_new(&cc, false, err, errlen); break;
  }
  if (!c->core) {
    chip_free(c);
    return NULL;
  }
  return c;
oom:
  snprintf(err, errlen, "out of memory for a chip with %llu bytes of HBM", (unsigned long long)cfg->hbm_bytes);
  chip_free(c);
  return NULL;
}

void chip_free(chip_t *c) {
  if (!c) return;
  if (c->core) c->core->ops->free(c->core);
  for (unsigned k = c->ports; k-- > 0;) hbm_free(&c->hbm[k]);  /* the other ports before the memory */
  free(c->line);
  free(c->obs);
  for (unsigned q = 0; q < CHIP_MAX_QUEUES; q++) free(c->prog[q]);
  free(c);
}

const chip_geometry_t *chip_geometry(const chip_t *c) { return &c->geo; }
const chip_config_t *chip_config(const chip_t *c) { return &c->cfg; }
unsigned chip_line_bytes(const chip_t *c) { return 4 * c->geo.cols; }
uint64_t chip_cycle(const chip_t *c) { return c->cycle; }
const char *chip_divergence(const chip_t *c) { return c->core->ops->divergence(c->core); }

/* ---- the host's operations, as chip_host_ops_t says how (chip_host.h) */

int chip_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n) { return c->host->hbm_write(c, addr, src, n); }
int chip_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n) { return c->host->hbm_read(c, addr, dst, n); }
int chip_hbm_zero(chip_t *c, uint64_t addr, size_t n) { return c->host->hbm_zero(c, addr, n); }
uint8_t *chip_hbm_direct(chip_t *c, uint64_t addr, uint64_t *first, uint64_t *len) {
  return c->host->hbm_direct(c, addr, first, len);
}
size_t chip_memory(chip_t *c) { return c->host->memory(c); }
int chip_vmem_read(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst) { return c->host->vmem_read(c, line, n, dst); }
int chip_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  return c->host->load_program(c, queue, cmds, n, err, errlen);
}
uint32_t chip_sem(chip_t *c, unsigned idx) { return c->host->sem(c, idx); }
int chip_trace(chip_t *c, const char *path, char *err, size_t errlen) { return c->host->trace(c, path, err, errlen); }
void chip_trace_close(chip_t *c) { c->host->trace_close(c); }
void chip_router_flits(chip_t *c, uint32_t flits[5]) { c->host->router_flits(c, flits); }
void chip_status(chip_t *c, chip_status_t *st) { c->host->status(c, st); }
int chip_finish(chip_t *c, bool timed_out, chip_status_t *st) { return c->host->finish(c, timed_out, st); }
bool chip_idle(chip_t *c) { return c->host->idle(c); }
void chip_request_abort(chip_t *c, unsigned mask) { c->host->request_abort(c, mask); }
void chip_reset(chip_t *c) { c->host->reset(c); }
void chip_set_observer(chip_t *c, const chip_observer_t *ops, void *ctx) { c->host->set_observer(c, ops, ctx); }
void chip_set_slice(chip_t *c, unsigned x0, unsigned y0, unsigned w, unsigned h) {
  c->host->set_slice(c, (x0 & 0xFF) | (y0 & 0xFF) << 8 | (w & 0xFF) << 16 | (uint32_t)(h & 0xFF) << 24);
}

/* ---- the chip carrying them out itself */

static int local_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n) {
  return addr > c->hbm[0].bytes || n > c->hbm[0].bytes - addr ? -1 : hbm_write(&c->hbm[0], addr, src, n);
}

static int local_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n) {
  return addr > c->hbm[0].bytes || n > c->hbm[0].bytes - addr ? -1 : hbm_read(&c->hbm[0], addr, dst, n);
}

static int local_hbm_zero(chip_t *c, uint64_t addr, size_t n) {
  return addr > c->hbm[0].bytes || n > c->hbm[0].bytes - addr ? -1 : hbm_zero(&c->hbm[0], addr, n);
}

static uint8_t *local_hbm_direct(chip_t *c, uint64_t addr, uint64_t *first, uint64_t *len) {
  if (addr >= c->hbm[0].bytes) return NULL;
  *first = addr / HBM_PAGE_BYTES * HBM_PAGE_BYTES;
  *len = c->hbm[0].bytes - *first < HBM_PAGE_BYTES ? c->hbm[0].bytes - *first : HBM_PAGE_BYTES;
  return hbm_page(&c->hbm[0], addr);
}

static size_t local_memory(chip_t *c) {
  return c->hbm[0].pages_used * (size_t)HBM_PAGE_BYTES + c->core->ops->memory(c->core);
}

static int local_vmem_read(chip_t *c, uint32_t line, uint32_t n, uint32_t *dst) {
  return c->core->ops->vmem_read(c->core, line, n, dst);
}

int chip_keep_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  uint32_t *copy = malloc((n ? n : 1) * ISA_CMD_WORDS * sizeof *copy);
  if (!copy) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (n) memcpy(copy, cmds, n * ISA_CMD_WORDS * sizeof *copy);  /* an empty program may come as NULL (found by fuzzing) */
  free(c->prog[queue]);
  c->prog[queue] = copy;
  c->prog_len[queue] = n;
  return 0;
}

static int local_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  if (queue < 0 || queue >= (int)c->queues) {
    snprintf(err, errlen, "no queue %d (the chip has %u)", queue, c->queues);
    return -1;
  }
  if (n > c->geo.queue_depth) {
    snprintf(err, errlen, "a %zu-command program does not fit the %u-command queue", n, c->geo.queue_depth);
    return -1;
  }
  chip_core_status_t cs;
  c->core->ops->status(c->core, &cs);
  if (cs.running[queue]) {
    snprintf(err, errlen, "the %s queue%s is still running: abort it first (chip_abort)",
             queue % ISA_NUM_QUEUES == ISA_QUEUE_DMA ? "DMA" : "compute", queue >= ISA_NUM_QUEUES ? " of core 1" : "");
    return -1;
  }
  if (chip_keep_program(c, queue, cmds, n, err, errlen)) return -1;
  c->core->ops->load(c->core, (unsigned)queue, cmds, n);
  return 0;
}

static bool idle_of(chip_t *c) { return c->core->ops->idle(c->core); }
static uint32_t sem_of(chip_t *c, unsigned idx) { return c->core->ops->sem(c->core, idx); }

static int local_trace(chip_t *c, const char *path, char *err, size_t errlen) {
  return c->core->ops->trace_open(c->core, path, err, errlen);
}

void chip_local_trace_close(chip_t *c) { c->core->ops->trace_close(c->core); }

void chip_net_in(chip_t *c, const chip_net_t *in) { c->core->ops->net_in(c->core, in); }
void chip_net_out(chip_t *c, chip_net_t *out) { c->core->ops->net_out(c->core, out); }

static void local_router_flits(chip_t *c, uint32_t flits[5]) { c->core->ops->router_flits(c->core, flits); }

bool chip_quiet(chip_t *c) { return c->core->ops->idle(c->core) && c->core->ops->occupancy(c->core) == 0; }

void chip_start(chip_t *c, unsigned mask) {
  uint32_t lens[CHIP_MAX_QUEUES] = {0};  /* each queue's program length, so running past it is an error */
  for (unsigned q = 0; q < c->queues; q++) lens[q] = (uint32_t)c->prog_len[q];
  c->start_mask = mask & ((1u << c->queues) - 1);
  c->run_start = c->cycle;
  c->core->ops->start(c->core, c->start_mask, lens);
}

/* Bytes every HBM port has moved. */
static uint64_t hbm_moved(const chip_t *c) {
  uint64_t n = 0;
  for (unsigned k = 0; k < c->ports; k++) n += c->hbm[k].bytes_moved;
  return n;
}

/* One cycle: the HBM model answers and accepts around the chip's clock edge. */
void chip_tick(chip_t *c) {
  /* The HBM requests are registered state: read before the cycle's inputs are given. */
  bool ready[CHIP_MAX_CORES] = {false};
  const uint32_t *answer[CHIP_MAX_CORES] = {NULL};
  for (unsigned k = 0; k < c->ports; k++) {
    hbm_t *h = &c->hbm[k];
    ready[k] = hbm_begin_cycle(h);
    if (ready[k]) {
      chip_hbm_req_t q;
      c->core->ops->hbm_request(c->core, k, &q);
      if (q.valid) hbm_accept(h, c->cycle, q.write, q.addr, q.bytes, (const uint8_t *)q.data);
    }
    const hbm_answer_t *a = hbm_answer_due(h, c->cycle);
    if (a) {
      uint32_t *line = c->line + (size_t)k * c->geo.cols;
      if (a->read) memcpy(line, a->data, 4 * c->geo.cols);
      else memset(line, 0, 4 * c->geo.cols);
      answer[k] = line;
      hbm_answer_pop(h);
    }
  }
  if (c->obs_ops) {
    c->obs->lite = true;  /* (the fast model then fills only what a profile reads) */
    c->core->ops->step(c->core, ready, answer, c->obs);
    c->obs_ops->tick(c->obs_ctx, c->cycle, c->obs, hbm_moved(c));
  } else {
    c->core->ops->step(c->core, ready, answer, NULL);
  }
  c->cycle++;
}

uint64_t chip_quiet_for(chip_t *c) {
  const uint64_t core = c->core->ops->quiet_for(c->core);
  if (core == 0) return 0;
  uint64_t due = UINT64_MAX;
  for (unsigned k = 0; k < c->ports; k++)
    if (hbm_next_due(&c->hbm[k]) < due) due = hbm_next_due(&c->hbm[k]);
  if (due == UINT64_MAX) return core;
  return due <= c->cycle ? 0 : (due - c->cycle < core ? due - c->cycle : core);
}

void chip_skip(chip_t *c, uint64_t n) {
  if (n == 0) return;
  uint64_t before[CHIP_OBS_COUNTERS], after[CHIP_OBS_COUNTERS];
  chip_core_status_t st;
  if (c->obs_ops) {
    c->core->ops->counters(c->core, before);
    c->core->ops->status(c->core, &st);
  }
  for (unsigned k = 0; k < c->ports; k++) hbm_skip(&c->hbm[k], n);
  c->core->ops->skip(c->core, n);
  if (c->obs_ops) {
    c->core->ops->counters(c->core, after);
    c->obs_ops->skip(c->obs_ctx, c->cycle, n, &st, before, after);
  }
  c->cycle += n;
}

_Static_assert(offsetof(chip_obs_t, core) <= 64, "a profile's chip-wide observation fields on the first cache line");

void chip_local_set_observer(chip_t *c, const chip_observer_t *ops, void *ctx) {
  if (ops && !c->obs) { /* (aligned: what a profile reads every cycle is on its first two cache lines) */
    if ((c->obs = aligned_alloc(64, (sizeof *c->obs + 63) / 64 * 64))) memset(c->obs, 0, sizeof *c->obs);
    else ops = NULL; /* (out of memory: no profile) */
  }
  c->obs_ops = ops, c->obs_ctx = ctx;
}

const uint32_t *chip_program(const chip_t *c, unsigned queue, size_t *n) {
  *n = queue < CHIP_MAX_QUEUES ? c->prog_len[queue] : 0;
  return queue < CHIP_MAX_QUEUES ? c->prog[queue] : NULL;
}

void chip_set_progress(chip_t *c, void (*progress)(void *ctx, uint64_t cycles), void *ctx) {
  c->progress = progress, c->progress_ctx = ctx;
}

void chip_counters(chip_t *c, uint64_t cnt[CHIP_OBS_COUNTERS]) { c->core->ops->counters(c->core, cnt); }
void chip_core_state(chip_t *c, chip_core_status_t *st) { c->core->ops->status(c->core, st); }

static void read_status(chip_t *c, chip_status_t *st) {
  chip_core_status_t cs;
  c->core->ops->status(c->core, &cs);
  for (unsigned q = 0; q < c->queues; q++) {
    st->running[q] = cs.running[q];
    st->halted[q] = cs.halted[q];
    st->error[q] = cs.error[q];
    st->pc[q] = cs.pc[q];
    st->opcode[q] = cs.opcode[q];
  }
}

static void local_status(chip_t *c, chip_status_t *st) {
  memset(st, 0, sizeof *st);
  read_status(c, st);
}

void chip_begin(chip_t *c, unsigned mask) {
  c->core->ops->counters(c->core, c->base);
  c->hbm0 = hbm_moved(c);
  chip_start(c, mask);
}

static int finish_local(chip_t *c, bool timed_out, chip_status_t *st) {
  static const char *const qname[CHIP_MAX_QUEUES] = {"compute", "DMA", "core 1 compute", "core 1 DMA"};
  memset(st, 0, sizeof *st);
  st->timed_out = timed_out;
  read_status(c, st);
  st->cycles = c->cycle - c->run_start;
  uint64_t *dst[CHIP_OBS_COUNTERS] = {[CHIP_CNT_DMA_BUSY] = &st->dma_busy,       [CHIP_CNT_MXU_BUSY] = &st->mxu_busy,
                                     [CHIP_CNT_COMPUTE] = &st->compute,         [CHIP_CNT_WEIGHT_LOAD] = &st->weight_load,
                                     [CHIP_CNT_WEIGHT_STALL] = &st->weight_stall, [CHIP_CNT_INPUT_STALL] = &st->input_stall,
                                     [CHIP_CNT_IDLE] = &st->mxu_idle};
  uint64_t now[CHIP_OBS_COUNTERS];
  c->core->ops->counters(c->core, now);
  for (int i = 0; i < CHIP_OBS_COUNTERS; i++) *dst[i] = now[i] - c->base[i];
  st->hbm_bytes = hbm_moved(c) - c->hbm0;
  int rc = 0;
  size_t used = 0;
  const char *diverged = chip_divergence(c);
  if (diverged) { /* the lockstep check's report comes first: nothing after it is the RTL's alone */
    used += (size_t)snprintf(st->report, sizeof st->report, "%s", diverged);
    rc = -1;
  }
  for (unsigned q = 0; q < c->queues; q++) {
    /* the queues this run started, and any other still running */
    if (!(c->start_mask & ISA_QMASK(q)) && !st->running[q]) continue;
    const char *op = isa_opcode_name(st->opcode[q]) ? isa_opcode_name(st->opcode[q]) : "not an opcode";
    if (st->error[q] && (c->start_mask & ISA_QMASK(q))) {
      const char *meaning = isa_error_name(st->error[q]) ? isa_error_name(st->error[q]) : "unknown error";
      used += (size_t)snprintf(st->report + used, sizeof st->report - used,
                               "%s%s queue stopped with error %u (%s) at command %u (%s)", used ? "; " : "",
                               qname[q], st->error[q], meaning, st->pc[q], op);
      rc = -1;
    } else if (st->timed_out && st->running[q]) {
      used += (size_t)snprintf(st->report + used, sizeof st->report - used,
                               "%s%s queue still at command %u (%s", used ? "; " : "", qname[q], st->pc[q], op);
      if (st->opcode[q] == ISA_OP_SEM_WAIT && st->pc[q] < c->prog_len[q]) {
        const uint32_t *cmd = c->prog[q] + (size_t)st->pc[q] * ISA_CMD_WORDS;
        unsigned sem = ISA_GET(cmd, SEM_WAIT, sem);
        used += (size_t)snprintf(st->report + used, sizeof st->report - used,
                                 " on semaphore %u for %u; it holds %u", sem, ISA_GET(cmd, SEM_WAIT, value),
                                 sem_of(c, (q / ISA_NUM_QUEUES) * ISA_NUM_SEMS + sem % ISA_NUM_SEMS));
      }
      used += (size_t)snprintf(st->report + used, sizeof st->report - used, ")");
      rc = -1;
    }
  }
  if (c->core->ops->mxu_error(c->core)) {
    used += (size_t)snprintf(st->report + used, sizeof st->report - used, "%sthe MXU dropped a command", used ? "; " : "");
    rc = -1;
  }
  if (st->timed_out && rc == 0 && !idle_of(c)) {  /* (in a pod, a chip that finished is not at fault) */
    snprintf(st->report + used, sizeof st->report - used, "%sunits still busy", used ? "; " : "");
    rc = -1;
  }
  return rc;
}

uint64_t chip_cycle_bound(const chip_t *c) {
  const uint64_t cores = isa_geometry_cores(&c->geo);  /* each core's port has its share */
  const uint64_t bw = (c->cfg.hbm_bytes_per_cycle + cores - 1) / cores, lat = c->cfg.hbm_latency;
  const uint64_t R = c->geo.rows, C = c->geo.cols;
  uint64_t total = 1000;
  for (unsigned q = 0; q < c->queues; q++)  /* (as if the cores took turns: a bound, not an estimate) */
    for (size_t i = 0; i < c->prog_len[q]; i++) {
      const uint32_t *cmd = c->prog[q] + i * ISA_CMD_WORDS;
      uint64_t t = 8;  /* issue, and the command processor's own cycles */
      switch (isa_opcode(cmd)) {
        case ISA_OP_DMA: t += ISA_GET(cmd, DMA, rows) * ((ISA_GET(cmd, DMA, bytes) + bw - 1) / bw + 2) + lat + 16; break;
        case ISA_OP_RDMA: t += ISA_GET(cmd, RDMA, rows) * (C / 2 + 4) + 4 * (c->cfg.pod_x + c->cfg.pod_y) + 64; break;
        case ISA_OP_MXU_LOAD: t += 2 * R + 16; break;
        case ISA_OP_MXU_MATMUL: t += ISA_GET(cmd, MXU_MATMUL, rows) + 2 * (R + C) + 16; break;
        case ISA_OP_MXU_STORE: t += ISA_GET(cmd, MXU_STORE, rows) + R + C + 16; break;
        case ISA_OP_VEC: t += ISA_GET(cmd, VEC, rows) + 16; break;
        default: break;
      }
      total += t;
    }
  return total;
}

void chip_local_request_abort(chip_t *c, unsigned mask) {
  c->core->ops->abort(c->core, mask & ((1u << c->queues) - 1));
}

int chip_abort(chip_t *c, unsigned mask, uint64_t max_cycles) {
  chip_request_abort(c, mask);
  chip_tick(c);
  for (uint64_t n = 0; !idle_of(c); n++) {
    if (n >= max_cycles) return -1;
    chip_tick(c);
  }
  return 0;
}

void chip_local_reset(chip_t *c) {
  c->core->ops->reset(c->core);
  for (unsigned k = 0; k < c->ports; k++) hbm_flush(&c->hbm[k]);
}

/* After a run that did not end by itself: the queues are aborted and the chip drained of the
 * work already issued, or if that does not end, reset. Appends what was done to the report. */
static void recover(chip_t *c, chip_status_t *st) {
  size_t used = strlen(st->report);
  bool drained = chip_abort(c, (1u << c->queues) - 1, CHIP_DRAIN_CYCLES) == 0;
  if (!drained) chip_reset(c);
  snprintf(st->report + used, sizeof st->report - used, "%s", drained
               ? " (the queues were aborted; the chip is idle)"
               : " (the queues were aborted and the units did not drain: the chip was reset)");
}

int chip_run(chip_t *c, unsigned mask, uint64_t max_cycles, chip_status_t *st) {
  chip_begin(c, mask);
  chip_tick(c);
  bool timed_out = false;
  uint64_t report_at = 1u << 16;
  while (!idle_of(c) && !chip_divergence(c)) {
    const uint64_t ran = c->cycle - c->run_start;
    if (ran >= max_cycles) {
      timed_out = true;
      break;
    }
    if (c->progress && ran >= report_at) {
      c->progress(c->progress_ctx, ran);
      report_at = ran + (1u << 16);
    }
    const uint64_t quiet = chip_quiet_for(c);  /* a fast chip waiting for HBM jumps ahead */
    if (quiet) chip_skip(c, quiet < max_cycles - ran ? quiet : max_cycles - ran);
    else chip_tick(c);
  }
  int rc = finish_local(c, timed_out, st);
  if (timed_out) {
    char head[64];  /* goes before what chip_finish found, which is kept as far as it fits */
    size_t hl = (size_t)snprintf(head, sizeof head, "timed out after %llu cycles: ", (unsigned long long)max_cycles);
    memmove(st->report + hl, st->report, sizeof st->report - hl);
    memcpy(st->report, head, hl);
    st->report[sizeof st->report - 1] = 0;
    recover(c, st);
  }
  return rc;
}

void chip_local_set_slice(chip_t *c, uint32_t slice) { c->core->ops->set_slice(c->core, slice); }

uint32_t chip_slice_drops(chip_t *c) { return c->core->ops->slice_drops(c->core); }

const chip_host_ops_t chip_host_local = {
    .hbm_write = local_hbm_write, .hbm_read = local_hbm_read, .hbm_zero = local_hbm_zero, .hbm_direct = local_hbm_direct,
    .memory = local_memory, .vmem_read = local_vmem_read, .load_program = local_load_program, .sem = sem_of,
    .trace = local_trace, .trace_close = chip_local_trace_close, .router_flits = local_router_flits, .status = local_status,
    .finish = finish_local, .idle = idle_of, .request_abort = chip_local_request_abort, .reset = chip_local_reset,
    .set_slice = chip_local_set_slice, .set_observer = chip_local_set_observer,
};
