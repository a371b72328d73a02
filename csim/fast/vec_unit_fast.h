/*
 * vec_unit_fast: the fast chip's vector unit (chip_fast.h), mirroring rtl/chip_vec_unit.sv:
 * one command waiting behind the running one, started once the MXU loads, matmuls and stores
 * issued before it have finished, one line read and written per cycle (a line reduction
 * folds into a register and writes once, with the last line), and the issued and done counts
 * the MXU unit and the release fences order themselves by. The lanes are vec_fast's (the
 * host FPU with the documented numerics).
 */
#ifndef FAST_VEC_UNIT_FAST_H
#define FAST_VEC_UNIT_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/isa.h"
#include "util/paged.h"

typedef struct {
  uint8_t op;
  bool b_repeat;               /* operand b is the one line b for every row */
  uint32_t a, b, dst, rows, scalar;
} vec_unit_fast_cmd_t;

typedef struct {
  unsigned cols;
  uint32_t vmem_lines;
  vec_unit_fast_cmd_t pend, cur;
  uint32_t pend_loads, pend_matmuls, pend_stores;
  bool pend_valid, cur_active;
  uint32_t row, issued, done;
  uint32_t *acc, *wdata;       /* the fold so far; the line this cycle writes */
} vec_unit_fast_t;

typedef struct {
  bool we;
  uint32_t waddr;
  const uint32_t *wdata;
} vec_unit_fast_out_t;

/* The MXU unit's progress, as registered before the cycle. */
typedef struct {
  uint32_t loads_issued, loads_done, matmuls_issued, matmuls_done, stores_issued, stores_done;
} vec_unit_fast_mxu_t;

int vec_unit_fast_init(vec_unit_fast_t *v, unsigned cols, uint32_t vmem_lines);
void vec_unit_fast_free(vec_unit_fast_t *v);
void vec_unit_fast_reset(vec_unit_fast_t *v);
static inline bool vec_unit_fast_ready(const vec_unit_fast_t *v) { return !v->pend_valid; }
static inline bool vec_unit_fast_busy(const vec_unit_fast_t *v) { return v->pend_valid || v->cur_active; }
/* One cycle (the FP mode set as fpmode.h says): the command offered, the MXU's progress,
 * VMEM before the cycle's writes; returns the line written, updates the state to the edge's. */
void vec_unit_fast_cycle(vec_unit_fast_t *v, const paged_t *vmem, bool cmd_valid, const uint32_t *cmd,
                         const vec_unit_fast_mxu_t *mxu, vec_unit_fast_out_t *out);

#endif
