/*
 * mxu_unit_fast: the fast chip's MXU unit (chip_fast.h), mirroring rtl/chip_mxu_unit.sv with
 * the MXU inside it (rtl/mxu_top.sv: rtl/mxu_control.sv and the timing of rtl/mxu_datapath.sv):
 * the weight and activation feeders, the store unit with its waiting store, the command
 * interface, loads and matmuls scheduled over the double-buffered weights, the five counters,
 * and each accumulator row written Rows + Cols + 1 edges after its activation row enters,
 * as the array does. The arithmetic is mxu_fast_rows (the host FPU, the documented order),
 * done in batches: a row's sums are computed when its accumulator write is due, or before a
 * weight load overwrites the buffer it reads, whichever comes first; the values are the
 * array's either way, since a row reads only its own load's weights.
 */
#ifndef FAST_MXU_UNIT_FAST_H
#define FAST_MXU_UNIT_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/isa.h"
#include "util/paged.h"

enum { MXU_FAST_FIFO = 4 };  /* feeder descriptor FIFOs and the matmul queue */

typedef struct {
  uint32_t acc_addr, rows;
  bool accumulate;
  uint8_t load_seq;
} mxu_fast_matmul_t;

/* An activation row in the array: where and how it lands, and when. */
typedef struct {
  uint64_t due;       /* the edge that writes it into the accumulator */
  uint32_t addr;
  bool accumulate, buf, computed;
} mxu_fast_row_t;

typedef struct {
  unsigned rows, cols, acc_depth;
  uint32_t vmem_lines;
  /* chip_mxu_unit: feeders, store unit, progress */
  uint32_t wf_line[MXU_FAST_FIFO], wf_vec[MXU_FAST_FIFO];
  bool wf_tr[MXU_FAST_FIFO];
  unsigned wf_count, wf_head, wf_row;
  uint32_t af_line[MXU_FAST_FIFO], af_rows[MXU_FAST_FIFO], af_vec[MXU_FAST_FIFO];
  unsigned af_count, af_head;
  uint32_t af_row;
  bool st_active, sn_valid;
  uint32_t st_acc, st_left, st_wline, st_vec, sn_acc, sn_rows, sn_line, sn_vec;
  uint64_t st_wait_rows, sn_wait_rows, mm_rows_issued, mm_rows_written;
  uint32_t loads_issued, loads_done, matmuls_issued, matmuls_done, stores_issued, stores_done;
  /* mxu_control */
  uint8_t loads_req, loads_started, ctl_loads_done;
  bool load_active, load_buf, stream_active, stream_accum, error;
  unsigned load_row;
  mxu_fast_matmul_t mmq[MXU_FAST_FIFO];
  unsigned mmq_count, mmq_head;
  uint32_t stream_addr, stream_left;
  uint8_t stream_seq;
  unsigned drain, wdrain;
  uint64_t cnt_compute, cnt_weight_load, cnt_weight_stall, cnt_input_stall, cnt_idle;
  /* mxu_datapath: weights, the rows in the array, the accumulator, the read port */
  float *weights[2];          /* rows x cols each, widened; allocated at first use */
  mxu_fast_row_t *inflight;   /* ring of `latency + 1` rows, oldest at head */
  uint16_t *acts;             /* their activation rows (rows bf16 each) */
  float *psums;               /* their column sums (cols each) */
  unsigned if_head, if_count, if_cap;
  paged_t acc;                /* acc_depth rows of cols fp32 bit patterns */
  uint64_t tick;              /* edges since reset */
  bool acc_we, rd_valid;
  uint32_t acc_waddr;
  uint32_t *rd_data, *st_wdata; /* the read port's register; the store's write of this cycle */
} mxu_unit_fast_t;

/* The unit this cycle, as chip_top sees it. */
typedef struct {
  bool cmd_ready;             /* the command offered can be taken (MXU_LOAD, MATMUL, STORE; when offered) */
  bool vmem_we;
  uint32_t vmem_waddr;
  const uint32_t *vmem_wdata;
} mxu_unit_fast_out_t;

int mxu_unit_fast_init(mxu_unit_fast_t *u, const chip_geometry_t *g);
void mxu_unit_fast_free(mxu_unit_fast_t *u);
void mxu_unit_fast_reset(mxu_unit_fast_t *u);
/* Whether the command at the compute queue can be taken now (cmd_ready_o). */
bool mxu_unit_fast_ready(const mxu_unit_fast_t *u, const uint32_t *cmd);
/* MXU busy (mxu_busy_o) and drained (drained_o). */
bool mxu_unit_fast_busy(const mxu_unit_fast_t *u);
bool mxu_unit_fast_drained(const mxu_unit_fast_t *u);
/* One cycle: the command offered (cmd_valid, the command), the vector unit's progress
 * (registered), VMEM before the cycle's writes. Updates the state to the edge's; the FP mode
 * must be the fast models' (fpmode.h). -1 without memory. */
int mxu_unit_fast_cycle(mxu_unit_fast_t *u, const paged_t *vmem, bool cmd_valid, const uint32_t *cmd,
                        uint32_t vecs_issued, uint32_t vecs_done, mxu_unit_fast_out_t *out);
/* n cycles with nothing to do (drained, no command): the idle counter moves. */
void mxu_unit_fast_skip(mxu_unit_fast_t *u, uint64_t n);

#endif
