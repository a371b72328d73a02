/* chip: see chip.h. */
#include "system/chip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/hbm.h"
#include "vmodel/vmodel.h"

enum { P_HOST_WE, P_HOST_Q, P_HOST_ADDR, P_HOST_DATA, P_START, P_HBM_BYTES, P_RUNNING, P_HALTED,
       P_ERROR, P_PC, P_OPCODE, P_SEM_IDX, P_SEM_VALUE, P_REQ_VALID, P_REQ_READY, P_REQ_WRITE,
       P_REQ_ADDR, P_REQ_BYTES, P_REQ_DATA, P_RESP_VALID, P_RESP_DATA, P_DMA_BUSY, P_MXU_BUSY,
       P_COMPUTE, P_WLOAD, P_WSTALL, P_ISTALL, P_IDLE_CNT, P_MXU_ERROR, P_IDLE, P_MY_X, P_MY_Y,
       P_SIZE_X, P_SIZE_Y, P_BUF_DEPTH, P_NET_IN, P_NET_OUT, P_NET_CIN, P_NET_COUT, P_NET_OCC, P_RTR_FLITS, P_SLICE,
       P_DROPS, P_START_LEN, P_ABORT, P_COUNT };

static const char *const port_names[P_COUNT] = {
    "host_we_i", "host_queue_i", "host_addr_i", "host_data_i", "start_i", "hbm_bytes_i",
    "q_running_o", "q_halted_o", "q_error_o", "q_pc_o", "q_opcode_o", "sem_rd_idx_i",
    "sem_rd_value_o", "hbm_req_valid_o", "hbm_req_ready_i", "hbm_req_write_o", "hbm_req_addr_o",
    "hbm_req_bytes_o", "hbm_req_data_o", "hbm_resp_valid_i", "hbm_resp_data_i", "cnt_dma_busy_o",
    "cnt_mxu_busy_o", "cnt_compute_o", "cnt_weight_load_o", "cnt_weight_stall_o",
    "cnt_input_stall_o", "cnt_idle_o", "mxu_error_o", "idle_o", "my_x_i", "my_y_i", "size_x_i",
    "size_y_i", "buf_depth_i", "net_in_flit_i", "net_out_flit_o", "net_credit_in_i",
    "net_credit_out_o", "net_occupancy_o", "cnt_router_flits_o", "slice_i", "cnt_slice_drops_o", "start_len_i",
    "abort_i"};

struct chip {
  chip_config_t cfg;
  chip_geometry_t geo;
  vmodel_t *m;
  int p[P_COUNT];
  hbm_t hbm;
  uint32_t *line;  /* scratch, one VMEM line */
  uint32_t *prog[ISA_NUM_QUEUES];  /* the programs loaded, for reports */
  size_t prog_len[ISA_NUM_QUEUES];
  unsigned start_mask;
  bool start_pending;   /* start_i is high for the next cycle only */
  bool abort_pending;   /* abort_i likewise */
  uint64_t run_start;
  uint64_t base[7], hbm0;  /* counters at the start of the run */
  uint64_t cycle;
};

chip_config_t chip_config_default(unsigned rows, unsigned cols) {
  return (chip_config_t){.rows = rows, .cols = cols, .hbm_bytes = CHIP_DEFAULT_HBM_BYTES,
                         .hbm_bytes_per_cycle = CHIP_DEFAULT_HBM_BYTES_PER_CYCLE,
                         .hbm_latency = CHIP_DEFAULT_HBM_LATENCY, .seed = 1};
}

/* What the chip sees whenever the host clocks it outside a run (loading a program, reset): no
 * HBM answer or request slot, no start or abort, no flit or credit from the network. A run
 * (chip_tick, pod_run) sets each of these every cycle. */
static void idle_inputs(chip_t *c) {
  static const uint32_t zero[16] = {0};
  vmodel_poke(c->m, c->p[P_HOST_WE], 0);
  vmodel_poke(c->m, c->p[P_START], 0);
  vmodel_poke(c->m, c->p[P_ABORT], 0);
  vmodel_poke(c->m, c->p[P_REQ_READY], 0);
  vmodel_poke(c->m, c->p[P_RESP_VALID], 0);
  vmodel_poke(c->m, c->p[P_NET_CIN], 0);
  vmodel_poke_words(c->m, c->p[P_NET_IN], zero);
  c->start_pending = c->abort_pending = false;
}

chip_t *chip_new(const chip_config_t *cfg, char *err, size_t errlen) {
  chip_geometry_t geo;
  if (chip_top_geometry(cfg->rows, cfg->cols, &geo)) {
    snprintf(err, errlen, "no chip with a %ux%u MXU in this build (built: %s)", cfg->rows, cfg->cols, chip_top_sizes());
    return NULL;
  }
  if (cfg->hbm_bytes == 0 || cfg->hbm_bytes > (1ull << 32)) {
    snprintf(err, errlen, "HBM size must be 1 byte .. 4 GiB");
    return NULL;
  }
  if (cfg->hbm_bytes_per_cycle == 0 || cfg->hbm_latency == 0 || cfg->hbm_bytes_per_cycle > CHIP_MAX_HBM_BYTES_PER_CYCLE ||
      cfg->hbm_latency > CHIP_MAX_HBM_LATENCY) {
    snprintf(err, errlen, "HBM bandwidth must be 1..%u bytes per cycle and latency 1..%u cycles",
             CHIP_MAX_HBM_BYTES_PER_CYCLE, CHIP_MAX_HBM_LATENCY);
    return NULL;
  }
  chip_t *c = calloc(1, sizeof *c);
  if (!c) goto oom;
  c->cfg = *cfg;
  c->geo = geo;
  c->line = calloc(geo.cols, sizeof *c->line);
  if (!c->line || hbm_init(&c->hbm, cfg->hbm_bytes, cfg->hbm_bytes_per_cycle, cfg->hbm_latency, 4 * geo.cols)) goto oom;
  c->m = chip_top_new(cfg->rows, cfg->cols, cfg->seed);
  if (!c->m) goto oom;
  for (int i = 0; i < P_COUNT; i++) c->p[i] = vmodel_port(c->m, port_names[i]);
  vmodel_poke(c->m, c->p[P_HBM_BYTES], cfg->hbm_bytes == (1ull << 32) ? 0xFFFFFFFFu : cfg->hbm_bytes);
  vmodel_poke(c->m, c->p[P_SEM_IDX], 0);
  vmodel_poke(c->m, c->p[P_START_LEN], 0);
  vmodel_poke(c->m, c->p[P_SIZE_X], cfg->pod_x ? cfg->pod_x : 1);
  vmodel_poke(c->m, c->p[P_SIZE_Y], cfg->pod_y ? cfg->pod_y : 1);
  vmodel_poke(c->m, c->p[P_MY_X], cfg->x);
  vmodel_poke(c->m, c->p[P_MY_Y], cfg->y);
  vmodel_poke(c->m, c->p[P_BUF_DEPTH], CHIP_ROUTER_DEPTH);
  vmodel_poke(c->m, c->p[P_SLICE], 0);  /* no slice until chip_set_slice */
  idle_inputs(c);
  vmodel_reset(c->m, 2);
  return c;
oom:
  snprintf(err, errlen, "out of memory for a chip with %llu bytes of HBM", (unsigned long long)cfg->hbm_bytes);
  chip_free(c);
  return NULL;
}

void chip_free(chip_t *c) {
  if (!c) return;
  vmodel_free(c->m);
  hbm_free(&c->hbm);
  free(c->line);
  free(c->prog[0]);
  free(c->prog[1]);
  free(c);
}

const chip_geometry_t *chip_geometry(const chip_t *c) { return &c->geo; }
const chip_config_t *chip_config(const chip_t *c) { return &c->cfg; }
unsigned chip_line_bytes(const chip_t *c) { return 4 * c->geo.cols; }
uint64_t chip_cycle(const chip_t *c) { return c->cycle; }

int chip_hbm_write(chip_t *c, uint64_t addr, const void *src, size_t n) {
  if (addr > c->hbm.bytes || n > c->hbm.bytes - addr) return -1;
  return hbm_write(&c->hbm, addr, src, n);
}

int chip_hbm_read(chip_t *c, uint64_t addr, void *dst, size_t n) {
  if (addr > c->hbm.bytes || n > c->hbm.bytes - addr) return -1;
  return hbm_read(&c->hbm, addr, dst, n);
}

int chip_load_program(chip_t *c, int queue, const uint32_t *cmds, size_t n, char *err, size_t errlen) {
  if (queue < 0 || queue >= ISA_NUM_QUEUES) {
    snprintf(err, errlen, "no queue %d (the chip has %d)", queue, ISA_NUM_QUEUES);
    return -1;
  }
  if (n > c->geo.queue_depth) {
    snprintf(err, errlen, "a %zu-command program does not fit the %u-command queue", n, c->geo.queue_depth);
    return -1;
  }
  if ((vmodel_peek(c->m, c->p[P_RUNNING]) >> queue) & 1) {
    snprintf(err, errlen, "the %s queue is still running: abort it first (chip_abort)",
             queue == ISA_QUEUE_DMA ? "DMA" : "compute");
    return -1;
  }
  uint32_t *copy = malloc((n ? n : 1) * ISA_CMD_WORDS * sizeof *copy);
  if (!copy) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  if (n) memcpy(copy, cmds, n * ISA_CMD_WORDS * sizeof *copy);  /* an empty program may come as NULL (found by fuzzing) */
  free(c->prog[queue]);
  c->prog[queue] = copy;
  c->prog_len[queue] = n;
  idle_inputs(c);  /* the writes clock the chip: nothing else may happen in those cycles */
  vmodel_poke(c->m, c->p[P_HOST_Q], (uint64_t)queue);
  vmodel_poke(c->m, c->p[P_HOST_WE], 1);
  for (size_t i = 0; i < n; i++) {
    vmodel_poke(c->m, c->p[P_HOST_ADDR], i);
    vmodel_poke_words(c->m, c->p[P_HOST_DATA], cmds + i * ISA_CMD_WORDS);
    vmodel_step(c->m, 1);
  }
  vmodel_poke(c->m, c->p[P_HOST_WE], 0);
  return 0;
}

uint32_t chip_sem(chip_t *c, unsigned idx) {
  vmodel_poke(c->m, c->p[P_SEM_IDX], idx);
  return (uint32_t)vmodel_peek(c->m, c->p[P_SEM_VALUE]);
}

int chip_trace(chip_t *c, const char *path, char *err, size_t errlen) {
  return vmodel_trace_open(c->m, path, err, errlen);
}

void chip_trace_close(chip_t *c) { vmodel_trace_close(c->m); }

void chip_net_ports(chip_t *c, chip_net_ports_t *n) {
  n->in_flit = vmodel_port_ptr(c->m, c->p[P_NET_IN]);
  n->out_flit = vmodel_port_ptr(c->m, c->p[P_NET_OUT]);
  n->credit_in = vmodel_port_ptr(c->m, c->p[P_NET_CIN]);
  n->credit_out = vmodel_port_ptr(c->m, c->p[P_NET_COUT]);
}

void chip_router_flits(chip_t *c, uint32_t flits[5]) { vmodel_peek_words(c->m, c->p[P_RTR_FLITS], flits); }

bool chip_quiet(chip_t *c) {
  return vmodel_peek(c->m, c->p[P_IDLE]) && vmodel_peek(c->m, c->p[P_NET_OCC]) == 0;
}

void chip_start(chip_t *c, unsigned mask) {
  const unsigned qaw = (unsigned)__builtin_ctz(c->geo.queue_depth);
  uint64_t lens = 0;  /* each queue's program length, so running past it is an error */
  for (int q = 0; q < ISA_NUM_QUEUES; q++) lens |= (uint64_t)c->prog_len[q] << ((qaw + 1) * q);
  c->start_mask = mask & ISA_QMASK_ALL;
  c->run_start = c->cycle;
  c->start_pending = true;
  vmodel_poke(c->m, c->p[P_START_LEN], lens);
  vmodel_poke(c->m, c->p[P_START], c->start_mask);
}

/* One cycle: the HBM model answers and accepts around the chip's clock edge. */
void chip_tick(chip_t *c) {
  vmodel_t *m = c->m;
  /* The HBM request is registered state: read it before poking anything, so that reading
   * it costs no extra evaluation of the model. */
  bool ready = hbm_begin_cycle(&c->hbm);
  if (ready && vmodel_peek(m, c->p[P_REQ_VALID])) {
    bool write = vmodel_peek(m, c->p[P_REQ_WRITE]);
    uint64_t addr = vmodel_peek(m, c->p[P_REQ_ADDR]);
    unsigned nbytes = (unsigned)vmodel_peek(m, c->p[P_REQ_BYTES]);
    if (write) vmodel_peek_words(m, c->p[P_REQ_DATA], c->line);
    hbm_accept(&c->hbm, c->cycle, write, addr, nbytes, (const uint8_t *)c->line);
  }
  vmodel_poke(m, c->p[P_REQ_READY], ready);
  const hbm_answer_t *a = hbm_answer_due(&c->hbm, c->cycle);
  vmodel_poke(m, c->p[P_RESP_VALID], a != NULL);
  if (a) {
    if (a->read) memcpy(c->line, a->data, 4 * c->geo.cols);
    else memset(c->line, 0, 4 * c->geo.cols);
    vmodel_poke_words(m, c->p[P_RESP_DATA], c->line);
    hbm_answer_pop(&c->hbm);
  }
  vmodel_step(m, 1);
  if (c->start_pending) {
    vmodel_poke(m, c->p[P_START], 0);
    c->start_pending = false;
  }
  if (c->abort_pending) {
    vmodel_poke(m, c->p[P_ABORT], 0);
    c->abort_pending = false;
  }
  c->cycle++;
}

static void read_status(chip_t *c, chip_status_t *st) {
  vmodel_t *m = c->m;
  unsigned qaw = (unsigned)__builtin_ctz(c->geo.queue_depth);
  uint64_t running = vmodel_peek(m, c->p[P_RUNNING]), halted = vmodel_peek(m, c->p[P_HALTED]);
  uint64_t error = vmodel_peek(m, c->p[P_ERROR]), pc = vmodel_peek(m, c->p[P_PC]);
  uint64_t opcode = vmodel_peek(m, c->p[P_OPCODE]);
  for (int q = 0; q < ISA_NUM_QUEUES; q++) {
    st->running[q] = (running >> q) & 1;
    st->halted[q] = (halted >> q) & 1;
    st->error[q] = (error >> (ISA_ERR_BITS * q)) & ((1u << ISA_ERR_BITS) - 1);
    st->pc[q] = (pc >> (qaw * q)) & ((1u << qaw) - 1);
    st->opcode[q] = (opcode >> (8 * q)) & 0xFF;
  }
}

static const int counter_ports[7] = {P_DMA_BUSY, P_MXU_BUSY, P_COMPUTE, P_WLOAD, P_WSTALL, P_ISTALL, P_IDLE_CNT};

void chip_begin(chip_t *c, unsigned mask) {
  for (int i = 0; i < 7; i++) c->base[i] = vmodel_peek(c->m, c->p[counter_ports[i]]);
  c->hbm0 = c->hbm.bytes_moved;
  chip_start(c, mask);
}

int chip_finish(chip_t *c, bool timed_out, chip_status_t *st) {
  static const char *const qname[ISA_NUM_QUEUES] = {[ISA_QUEUE_COMPUTE] = "compute", [ISA_QUEUE_DMA] = "DMA"};
  vmodel_t *m = c->m;
  memset(st, 0, sizeof *st);
  st->timed_out = timed_out;
  read_status(c, st);
  st->cycles = c->cycle - c->run_start;
  uint64_t *dst[7] = {&st->dma_busy, &st->mxu_busy, &st->compute, &st->weight_load,
                      &st->weight_stall, &st->input_stall, &st->mxu_idle};
  for (int i = 0; i < 7; i++) *dst[i] = vmodel_peek(m, c->p[counter_ports[i]]) - c->base[i];
  st->hbm_bytes = c->hbm.bytes_moved - c->hbm0;
  int rc = 0;
  size_t used = 0;
  for (int q = 0; q < ISA_NUM_QUEUES; q++) {
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
                                 chip_sem(c, sem % ISA_NUM_SEMS));
      }
      used += (size_t)snprintf(st->report + used, sizeof st->report - used, ")");
      rc = -1;
    }
  }
  if (vmodel_peek(m, c->p[P_MXU_ERROR])) {
    used += (size_t)snprintf(st->report + used, sizeof st->report - used, "%sthe MXU dropped a command", used ? "; " : "");
    rc = -1;
  }
  if (st->timed_out && rc == 0 && !chip_idle(c)) {  /* (in a pod, a chip that finished is not at fault) */
    snprintf(st->report + used, sizeof st->report - used, "%sunits still busy", used ? "; " : "");
    rc = -1;
  }
  return rc;
}

uint64_t chip_cycle_bound(const chip_t *c) {
  const uint64_t bw = c->cfg.hbm_bytes_per_cycle, lat = c->cfg.hbm_latency;
  const uint64_t R = c->geo.rows, C = c->geo.cols;
  uint64_t total = 1000;
  for (int q = 0; q < ISA_NUM_QUEUES; q++)
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

bool chip_idle(chip_t *c) { return vmodel_peek(c->m, c->p[P_IDLE]) != 0; }

void chip_request_abort(chip_t *c, unsigned mask) {
  vmodel_poke(c->m, c->p[P_ABORT], mask & ISA_QMASK_ALL);
  c->abort_pending = true;
}

int chip_abort(chip_t *c, unsigned mask, uint64_t max_cycles) {
  chip_request_abort(c, mask);
  chip_tick(c);
  for (uint64_t n = 0; !chip_idle(c); n++) {
    if (n >= max_cycles) return -1;
    chip_tick(c);
  }
  return 0;
}

void chip_reset(chip_t *c) {
  idle_inputs(c);
  vmodel_reset(c->m, 2);
  hbm_flush(&c->hbm);
}

/* After a run that did not end by itself: the queues are aborted and the chip drained of the
 * work already issued, or if that does not end, reset. Appends what was done to the report. */
static void recover(chip_t *c, chip_status_t *st) {
  size_t used = strlen(st->report);
  bool drained = chip_abort(c, ISA_QMASK_ALL, CHIP_DRAIN_CYCLES) == 0;
  if (!drained) chip_reset(c);
  snprintf(st->report + used, sizeof st->report - used, "%s", drained
               ? " (the queues were aborted; the chip is idle)"
               : " (the queues were aborted and the units did not drain: the chip was reset)");
}

int chip_run(chip_t *c, unsigned mask, uint64_t max_cycles, chip_status_t *st) {
  chip_begin(c, mask);
  chip_tick(c);
  bool timed_out = false;
  while (!chip_idle(c)) {
    if (c->cycle - c->run_start >= max_cycles) {
      timed_out = true;
      break;
    }
    chip_tick(c);
  }
  int rc = chip_finish(c, timed_out, st);
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

void chip_set_slice(chip_t *c, unsigned x0, unsigned y0, unsigned w, unsigned h) {
  vmodel_poke(c->m, c->p[P_SLICE], (x0 & 0xFF) | (y0 & 0xFF) << 8 | (w & 0xFF) << 16 | (uint32_t)(h & 0xFF) << 24);
}

uint32_t chip_slice_drops(chip_t *c) { return (uint32_t)vmodel_peek(c->m, c->p[P_DROPS]); }
