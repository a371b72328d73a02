/* mxu_unit_fast: see mxu_unit_fast.h. The order of decisions is the RTL's: chip_mxu_unit.sv's
 * command acceptance, feeders and store unit around mxu_control.sv's loader and streamer. */
#include "fast/mxu_unit_fast.h"

#include <emmintrin.h>
#include <stdlib.h>
#include <string.h>

#include "fast/mxu_fast.h"
#include "util/bits.h"

enum { ACC_PAGE_BYTES = 32768 };
#define CANONICAL_NAN 0x7FC00000u

int mxu_unit_fast_init(mxu_unit_fast_t *u, const chip_geometry_t *g) {
  memset(u, 0, sizeof *u);
  u->rows = g->rows, u->cols = g->cols, u->acc_depth = g->acc_depth, u->vmem_lines = g->vmem_lines;
  u->rd_data = calloc(g->cols, sizeof *u->rd_data);
  u->st_wdata = calloc(g->cols, sizeof *u->st_wdata);
  if (!u->rd_data || !u->st_wdata) return -1;
  return paged_init(&u->acc, g->acc_depth, (size_t)g->cols * 4, ACC_PAGE_BYTES);
}

void mxu_unit_fast_free(mxu_unit_fast_t *u) {
  free(u->weights[0]), free(u->weights[1]);
  free(u->inflight), free(u->acts), free(u->psums);
  free(u->rd_data), free(u->st_wdata);
  paged_free(&u->acc);
}

/* What rst_ni clears (the RTL's reset branches); data registers keep their values. */
void mxu_unit_fast_reset(mxu_unit_fast_t *u) {
  u->wf_count = u->wf_head = u->wf_row = 0;
  u->af_count = u->af_head = 0;
  u->af_row = 0;
  u->st_active = false, u->st_left = 0, u->sn_valid = false;
  u->mm_rows_issued = u->mm_rows_written = 0;
  u->loads_issued = u->loads_done = u->matmuls_issued = u->matmuls_done = u->stores_issued = u->stores_done = 0;
  u->loads_req = u->loads_started = u->ctl_loads_done = 0;
  u->load_active = false, u->load_row = 0, u->load_buf = false;
  u->mmq_count = u->mmq_head = 0;
  u->stream_active = false, u->stream_left = 0;
  u->drain = u->wdrain = 0;
  u->error = false;
  u->cnt_compute = u->cnt_weight_load = u->cnt_weight_stall = u->cnt_input_stall = u->cnt_idle = 0;
  u->if_head = u->if_count = 0;  /* rows in the array are dropped */
  u->tick = 0;
  u->acc_we = u->rd_valid = false;
  u->acc_waddr = 0;
}

static uint32_t vline(const mxu_unit_fast_t *u, uint32_t v) { return v & (u->vmem_lines - 1); }
static uint32_t acc_row(const mxu_unit_fast_t *u, uint32_t v) { return v & (u->acc_depth - 1); }

/* The command's accumulator rows against the rows the running store has still to read and
 * the waiting one's (64-bit sums, as the RTL widens them). */
static bool overlaps_store(const mxu_unit_fast_t *u, const uint32_t *cmd) {
  const uint64_t acc = ISA_GET(cmd, MXU_MATMUL, acc_row), rows = ISA_GET(cmd, MXU_MATMUL, rows);
  return (u->st_active && acc < (uint64_t)u->st_acc + u->st_left && u->st_acc < acc + rows) ||
         (u->sn_valid && acc < (uint64_t)u->sn_acc + u->sn_rows && u->sn_acc < acc + rows);
}

/* mxu_control's cmd_ready_o: a load while fewer than 128 are outstanding, a matmul while its queue has room. */
static bool control_ready(const mxu_unit_fast_t *u, bool is_matmul) {
  return is_matmul ? u->mmq_count != MXU_FAST_FIFO : (uint8_t)(u->loads_req - u->ctl_loads_done) < 128;
}

bool mxu_unit_fast_ready(const mxu_unit_fast_t *u, const uint32_t *cmd) {
  const uint32_t op = isa_opcode(cmd);
  const bool is_matmul = op == ISA_OP_MXU_MATMUL;
  if (op == ISA_OP_MXU_LOAD) return control_ready(u, false) && u->wf_count != MXU_FAST_FIFO;
  if (is_matmul) return control_ready(u, true) && u->af_count != MXU_FAST_FIFO && !overlaps_store(u, cmd);
  if (op == ISA_OP_MXU_STORE) return !u->sn_valid;
  return false;
}

bool mxu_unit_fast_busy(const mxu_unit_fast_t *u) {
  return u->loads_req != u->ctl_loads_done || u->mmq_count != 0 || u->stream_active || u->drain != 0 || u->wdrain != 0;
}

bool mxu_unit_fast_drained(const mxu_unit_fast_t *u) {
  return u->wf_count == 0 && u->af_count == 0 && !u->st_active && !u->sn_valid &&
         u->mm_rows_written == u->mm_rows_issued && !mxu_unit_fast_busy(u);
}

static int ensure_datapath(mxu_unit_fast_t *u) {
  if (u->inflight) return 0;
  const unsigned latency = u->rows + u->cols + 1;
  u->if_cap = latency + 1;
  u->weights[0] = calloc((size_t)u->rows * u->cols, sizeof(float));
  u->weights[1] = calloc((size_t)u->rows * u->cols, sizeof(float));
  u->inflight = calloc(u->if_cap, sizeof *u->inflight);
  u->acts = calloc((size_t)u->if_cap * u->rows, sizeof *u->acts);
  u->psums = calloc((size_t)u->if_cap * u->cols, sizeof *u->psums);
  return u->weights[0] && u->weights[1] && u->inflight && u->acts && u->psums ? 0 : -1;
}

/* Computes the column sums of the rows in the array that have none yet, those reading buffer
 * `buf` (or every one with buf < 0), in runs of consecutive ring slots. */
static void compute_rows(mxu_unit_fast_t *u, int buf) {
  unsigned i = 0;
  while (i < u->if_count) {
    const unsigned slot = (u->if_head + i) % u->if_cap;
    const mxu_fast_row_t *r = &u->inflight[slot];
    if (r->computed || (buf >= 0 && r->buf != (bool)buf)) {
      i++;
      continue;
    }
    unsigned n = 1; /* the run: same buffer, none computed, no wrap of the ring */
    while (i + n < u->if_count && slot + n < u->if_cap && !u->inflight[slot + n].computed &&
           u->inflight[slot + n].buf == r->buf)
      n++;
    mxu_fast_rows(u->rows, u->cols, n, u->acts + (size_t)slot * u->rows, u->rows, u->weights[r->buf],
                  u->psums + (size_t)slot * u->cols);
    for (unsigned k = 0; k < n; k++) u->inflight[slot + k].computed = true;
    i += n;
  }
}

/* Weight row `row` of buffer `buf` from a VMEM line (its low cols bf16); a transposed row j
 * of a square array is weight column j. */
static void write_weight_row(mxu_unit_fast_t *u, bool buf, unsigned row, bool transpose, const uint32_t *line) {
  float *w = u->weights[buf];
  const unsigned C = u->cols;
  for (unsigned c = 0; c < C; c++) {
    const uint16_t h = (uint16_t)(line[c / 2] >> (16 * (c % 2)));
    const float v = bits_to_float((uint32_t)h << 16);
    if (transpose && u->rows == C) w[(size_t)c * C + row] = v;
    else w[(size_t)row * C + c] = v;
  }
}

/* The accumulator write due at this edge, if any (datapath step 1). */
static int accumulate_due(mxu_unit_fast_t *u, bool *we, uint32_t *addr) {
  *we = false;
  if (!u->if_count) return 0;
  mxu_fast_row_t *r = &u->inflight[u->if_head];
  if (r->due != u->tick) return 0;
  if (!r->computed) compute_rows(u, -1);
  float *acc = paged_write(&u->acc, r->addr);  /* (the accumulator is only ever read as float or copied) */
  if (!acc) return -1;
  const float *s = u->psums + (size_t)u->if_head * u->cols;
  /* fp32 adds (or the sums themselves), NaNs made canonical: four lanes at a time */
  const __m128 nan = _mm_castsi128_ps(_mm_set1_epi32((int)CANONICAL_NAN));
  unsigned c = 0;
  for (; c + 4 <= u->cols; c += 4) {
    const __m128 v = r->accumulate ? _mm_add_ps(_mm_loadu_ps(acc + c), _mm_loadu_ps(s + c)) : _mm_loadu_ps(s + c);
    const __m128 is_nan = _mm_cmpunord_ps(v, v);
    _mm_storeu_ps(acc + c, _mm_or_ps(_mm_and_ps(is_nan, nan), _mm_andnot_ps(is_nan, v)));
  }
  for (; c < u->cols; c++) {
    const float v = r->accumulate ? acc[c] + s[c] : s[c];
    acc[c] = v != v ? bits_to_float(CANONICAL_NAN) : v;
  }
  *we = true;
  *addr = r->addr;
  u->if_head = (u->if_head + 1) % u->if_cap;
  u->if_count--;
  return 0;
}

/* One cycle's decisions, from the state before the edge (the RTL's combinational logic). */
typedef struct {
  bool is_load, is_matmul, is_store, mxu_cmd_valid, cmd_fire;
  bool w_fire, a_fire, wf_last, af_last, st_finish, st_can_read;       /* chip_mxu_unit */
  bool load_last, stream_last, ctl_fire, cmd_is_load, load_start, stream_start, cmd_bad; /* mxu_control */
  bool busy, weight_stall, input_stall, acc_we_before;
  uint8_t cmd_load_seq;
  uint32_t cmd_acc, cmd_rows;
  const mxu_fast_matmul_t *head;
} mxu_cycle_t;

static inline void decide(mxu_unit_fast_t *u, bool cmd_valid, const uint32_t *cmd, uint32_t vecs_done, mxu_cycle_t *d,
                          mxu_unit_fast_out_t *out) {
  const unsigned R = u->rows, C = u->cols;
  const uint32_t op = isa_opcode(cmd);
  d->is_load = op == ISA_OP_MXU_LOAD, d->is_matmul = op == ISA_OP_MXU_MATMUL, d->is_store = op == ISA_OP_MXU_STORE;
  /* ---- chip_mxu_unit: command acceptance */
  const bool overlaps = overlaps_store(u, cmd);
  const bool ctl_ready = control_ready(u, d->is_matmul);
  bool accept = false;
  if (d->is_load) accept = ctl_ready && u->wf_count != MXU_FAST_FIFO;
  if (d->is_matmul) accept = ctl_ready && u->af_count != MXU_FAST_FIFO && !overlaps;
  if (d->is_store) accept = !u->sn_valid;
  d->mxu_cmd_valid = cmd_valid && (d->is_load || (d->is_matmul && !overlaps)) &&
                     ((d->is_load && u->wf_count != MXU_FAST_FIFO) || (d->is_matmul && u->af_count != MXU_FAST_FIFO));
  d->cmd_fire = cmd_valid && accept;
  out->cmd_ready = accept;
  /* feeders */
  const bool w_valid = u->wf_count != 0 && vecs_done >= u->wf_vec[u->wf_head];
  const bool a_valid = u->af_count != 0 && vecs_done >= u->af_vec[u->af_head];
  d->w_fire = w_valid && u->load_active, d->a_fire = a_valid && u->stream_active;
  d->wf_last = d->w_fire && u->wf_row == R - 1;
  d->af_last = d->a_fire && u->af_row + 1 == u->af_rows[u->af_head];
  /* store: one accumulator row read per cycle once the earlier matmuls have written theirs */
  d->st_finish = u->st_active && u->st_left == 0 && !u->rd_valid;
  d->st_can_read = u->st_active && u->st_left != 0 && u->mm_rows_written >= u->st_wait_rows && vecs_done >= u->st_vec;
  out->vmem_we = u->rd_valid;
  out->vmem_waddr = u->st_wline;
  if (u->rd_valid) memcpy(u->st_wdata, u->rd_data, C * sizeof *u->st_wdata);
  out->vmem_wdata = u->st_wdata;
  /* ---- mxu_control */
  d->load_last = d->w_fire && u->load_row == R - 1;
  d->stream_last = d->a_fire && u->stream_left == 1;
  const bool mmq_empty = u->mmq_count == 0;
  d->head = &u->mmq[u->mmq_head];
  d->cmd_is_load = !d->is_matmul;
  d->cmd_load_seq = (uint8_t)(u->loads_req - 1); /* the matmul uses the last load issued before it */
  d->ctl_fire = d->mxu_cmd_valid && ctl_ready;
  bool oldest_valid = false;
  uint8_t oldest_seq = 0;
  if (u->stream_active && !d->stream_last) oldest_valid = true, oldest_seq = u->stream_seq;
  else if (!mmq_empty) oldest_valid = true, oldest_seq = d->head->load_seq;
  const uint8_t loads_done_next = (uint8_t)(u->ctl_loads_done + d->load_last);
  const bool load_free = !u->load_active || d->load_last;
  const bool buf_free = !oldest_valid || (int8_t)(uint8_t)(oldest_seq - u->loads_started) >= -1;
  d->load_start = u->loads_started != u->loads_req && load_free && buf_free;
  const bool stream_free = !u->stream_active || d->stream_last;
  const bool weights_ready = (int8_t)(uint8_t)(loads_done_next - d->head->load_seq) >= 1;
  d->stream_start = !mmq_empty && stream_free && weights_ready;
  d->cmd_acc = acc_row(u, ISA_GET(cmd, MXU_MATMUL, acc_row));
  d->cmd_rows = ISA_GET(cmd, MXU_MATMUL, rows) & (2 * u->acc_depth - 1);
  d->cmd_bad = !d->cmd_is_load && (d->cmd_rows == 0 || (uint64_t)d->cmd_acc + d->cmd_rows > u->acc_depth);
  d->busy = mxu_unit_fast_busy(u);
  d->weight_stall = !mmq_empty && stream_free && !weights_ready;
  d->input_stall = u->stream_active && !a_valid;
}

/* The datapath's edge: the accumulator write due, then the new rows. */
static inline int datapath_edge(mxu_unit_fast_t *u, const paged_t *vmem, mxu_cycle_t *d) {
  const unsigned R = u->rows, C = u->cols, latency = R + C + 1;
  if ((d->w_fire || d->a_fire) && ensure_datapath(u)) return -1;
  bool acc_we_now = false;
  uint32_t acc_addr_now = u->acc_waddr;
  if (accumulate_due(u, &acc_we_now, &acc_addr_now)) return -1;
  if (d->w_fire) {
    if (u->if_count) compute_rows(u, u->load_buf); /* rows still in the array read the old weights */
    const uint32_t *line = paged_read(vmem, vline(u, u->wf_line[u->wf_head] + u->wf_row));
    write_weight_row(u, u->load_buf, u->load_row, u->wf_tr[u->wf_head], line);
  }
  if (d->a_fire) {
    const unsigned slot = (u->if_head + u->if_count) % u->if_cap;
    const uint32_t *line = paged_read(vmem, vline(u, u->af_line[u->af_head] + u->af_row));
    memcpy(u->acts + (size_t)slot * R, line, R * sizeof(uint16_t)); /* the low R bf16 of the line */
    u->inflight[slot] = (mxu_fast_row_t){.due = u->tick + latency, .addr = u->stream_addr,
                                         .accumulate = u->stream_accum, .buf = u->stream_seq & 1, .computed = false};
    u->if_count++;
  }
  if (d->st_can_read) memcpy(u->rd_data, paged_read(&u->acc, u->st_acc), C * sizeof *u->rd_data);
  d->acc_we_before = u->acc_we;
  u->rd_valid = d->st_can_read;
  u->acc_we = acc_we_now;
  u->acc_waddr = acc_addr_now;
  u->tick++;
  return 0;
}

/* mxu_control's edge: the weight load and the activation stream, the matmul queue, the
 * counters. */
static inline void control_edge(mxu_unit_fast_t *u, const uint32_t *cmd, const mxu_cycle_t *d) {
  const unsigned R = u->rows, C = u->cols, latency = R + C + 1;
  if (d->ctl_fire && d->cmd_is_load) u->loads_req++;
  if (d->ctl_fire && d->cmd_bad) u->error = true;
  if (d->load_start) {
    u->load_active = true;
    u->load_row = 0;
    u->load_buf = u->loads_started & 1;
    u->loads_started++;
  } else if (d->load_last) {
    u->load_active = false;
  } else if (d->w_fire) {
    u->load_row++;
  }
  if (d->load_last) u->ctl_loads_done++;
  if (d->stream_start) {
    u->stream_active = true;
    u->stream_addr = d->head->acc_addr;
    u->stream_accum = d->head->accumulate;
    u->stream_seq = d->head->load_seq;
    u->stream_left = d->head->rows;
  } else if (d->stream_last) {
    u->stream_active = false;
  } else if (d->a_fire) {
    u->stream_left--;
    u->stream_addr = acc_row(u, u->stream_addr + 1);
  }
  const bool mmq_push = d->ctl_fire && !d->cmd_is_load && !d->cmd_bad;
  if (mmq_push)
    u->mmq[(u->mmq_head + u->mmq_count) % MXU_FAST_FIFO] =
        (mxu_fast_matmul_t){.acc_addr = d->cmd_acc, .rows = d->cmd_rows,
                            .accumulate = ISA_GET(cmd, MXU_MATMUL, accumulate), .load_seq = d->cmd_load_seq};
  if (d->stream_start) u->mmq_head = (u->mmq_head + 1) % MXU_FAST_FIFO;
  u->mmq_count = u->mmq_count + mmq_push - d->stream_start;
  u->drain = d->a_fire ? latency : u->drain ? u->drain - 1 : 0;
  u->wdrain = d->w_fire ? C : u->wdrain ? u->wdrain - 1 : 0;
  u->cnt_compute += d->a_fire;
  u->cnt_weight_load += d->w_fire;
  u->cnt_weight_stall += d->weight_stall;
  u->cnt_input_stall += d->input_stall;
  u->cnt_idle += !d->busy && !d->mxu_cmd_valid;
}

/* chip_mxu_unit's store sequencer at the edge: the running store, and the one waiting. */
static inline void store_edge(mxu_unit_fast_t *u, const uint32_t *cmd, uint32_t vecs_issued, const mxu_cycle_t *d,
                              uint64_t mm_issued_before, bool vmem_we) {
  if (vmem_we) u->st_wline = vline(u, u->st_wline + 1);
  if (d->st_can_read) {
    u->st_acc = acc_row(u, u->st_acc + 1);
    u->st_left--;
  }
  const bool store_fire = d->cmd_fire && d->is_store, was_active = u->st_active;
  if (store_fire && (!was_active || d->st_finish) && !u->sn_valid) {
    u->st_active = true;
    u->st_acc = acc_row(u, ISA_GET(cmd, MXU_STORE, acc_row));
    u->st_left = ISA_GET(cmd, MXU_STORE, rows) & (2 * u->acc_depth - 1);
    u->st_wline = vline(u, ISA_GET(cmd, MXU_STORE, line));
    u->st_wait_rows = mm_issued_before;
    u->st_vec = vecs_issued;
  } else if (d->st_finish && u->sn_valid) {
    u->st_active = true;
    u->st_acc = u->sn_acc, u->st_left = u->sn_rows, u->st_wline = u->sn_line;
    u->st_wait_rows = u->sn_wait_rows, u->st_vec = u->sn_vec;
    u->sn_valid = false;
  } else if (d->st_finish) {
    u->st_active = false;
  }
  if (store_fire && was_active && !d->st_finish) {
    u->sn_valid = true;
    u->sn_acc = acc_row(u, ISA_GET(cmd, MXU_STORE, acc_row));
    u->sn_rows = ISA_GET(cmd, MXU_STORE, rows) & (2 * u->acc_depth - 1);
    u->sn_line = vline(u, ISA_GET(cmd, MXU_STORE, line));
    u->sn_wait_rows = mm_issued_before;
    u->sn_vec = vecs_issued;
  }
}

/* chip_mxu_unit's edge: the weight and activation feeders' FIFOs, the progress counters the
 * release fences read, then the store sequencer. */
static inline void unit_edge(mxu_unit_fast_t *u, const uint32_t *cmd, uint32_t vecs_issued, const mxu_cycle_t *d,
                             bool vmem_we) {
  const bool load_fire = d->cmd_fire && d->is_load, matmul_fire = d->cmd_fire && d->is_matmul;
  if (load_fire) {
    const unsigned t = (u->wf_head + u->wf_count) % MXU_FAST_FIFO;
    u->wf_line[t] = vline(u, ISA_GET(cmd, MXU_LOAD, line));
    u->wf_tr[t] = ISA_GET(cmd, MXU_LOAD, transpose);
    u->wf_vec[t] = vecs_issued;
  }
  if (d->w_fire) u->wf_row = d->wf_last ? 0 : u->wf_row + 1;
  if (d->wf_last) u->wf_head = (u->wf_head + 1) % MXU_FAST_FIFO;
  u->wf_count = u->wf_count + load_fire - d->wf_last;
  const uint64_t mm_issued_before = u->mm_rows_issued;
  if (matmul_fire) {
    const unsigned t = (u->af_head + u->af_count) % MXU_FAST_FIFO;
    u->af_line[t] = vline(u, ISA_GET(cmd, MXU_MATMUL, line));
    u->af_rows[t] = d->cmd_rows;
    u->af_vec[t] = vecs_issued;
    u->mm_rows_issued += ISA_GET(cmd, MXU_MATMUL, rows);
  }
  if (d->a_fire) u->af_row = d->af_last ? 0 : u->af_row + 1;
  if (d->af_last) u->af_head = (u->af_head + 1) % MXU_FAST_FIFO;
  u->af_count = u->af_count + matmul_fire - d->af_last;
  if (d->acc_we_before) u->mm_rows_written++;
  if (load_fire) u->loads_issued++;
  if (d->wf_last) u->loads_done++;
  if (matmul_fire) u->matmuls_issued++;
  if (d->af_last) u->matmuls_done++;
  if (d->cmd_fire && d->is_store) u->stores_issued++;
  if (d->st_finish) u->stores_done++;
  store_edge(u, cmd, vecs_issued, d, mm_issued_before, vmem_we);
}

int mxu_unit_fast_cycle(mxu_unit_fast_t *u, const paged_t *vmem, bool cmd_valid, const uint32_t *cmd,
                        uint32_t vecs_issued, uint32_t vecs_done, mxu_unit_fast_out_t *out) {
  if (!cmd_valid && !u->acc_we && !u->rd_valid && !u->if_count && mxu_unit_fast_drained(u)) {
    /* nothing in the unit and nothing offered (most cycles of most chips): only the idle
     * counter and the datapath's clock move */
    out->cmd_ready = false;
    out->vmem_we = false;
    u->cnt_idle++;
    u->tick++;
    return 0;
  }
  mxu_cycle_t d;
  decide(u, cmd_valid, cmd, vecs_done, &d, out);
  if (datapath_edge(u, vmem, &d)) return -1;
  control_edge(u, cmd, &d);
  unit_edge(u, cmd, vecs_issued, &d, out->vmem_we);
  return 0;
}

void mxu_unit_fast_skip(mxu_unit_fast_t *u, uint64_t n) {
  u->cnt_idle += n;
  u->tick += n;
}
