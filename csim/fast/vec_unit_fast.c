/* vec_unit_fast: see vec_unit_fast.h. */
#include "fast/vec_unit_fast.h"

#include <stdlib.h>
#include <string.h>

#include "fast/vec_fast.h"

int vec_unit_fast_init(vec_unit_fast_t *v, unsigned cols, uint32_t vmem_lines) {
  memset(v, 0, sizeof *v);
  v->cols = cols;
  v->vmem_lines = vmem_lines;
  v->acc = calloc(cols, sizeof *v->acc);
  v->wdata = calloc(cols, sizeof *v->wdata);
  return v->acc && v->wdata ? 0 : -1;
}

void vec_unit_fast_free(vec_unit_fast_t *v) {
  free(v->acc);
  free(v->wdata);
}

void vec_unit_fast_reset(vec_unit_fast_t *v) {
  v->pend_valid = v->cur_active = false;
  v->row = v->issued = v->done = 0;
}

static bool reduces(uint8_t op) { return op == ISA_VEC_SUM_LINES || op == ISA_VEC_MAX_LINES; }

void vec_unit_fast_cycle(vec_unit_fast_t *v, const paged_t *vmem, bool cmd_valid, const uint32_t *cmd,
                         const vec_unit_fast_mxu_t *mxu, vec_unit_fast_out_t *out) {
  const uint32_t mask = v->vmem_lines - 1;
  const bool accept = cmd_valid && !v->pend_valid;
  const bool cur_last = v->cur_active && v->row + 1 == v->cur.rows;
  const bool start = v->pend_valid && (!v->cur_active || cur_last) && mxu->loads_done >= v->pend_loads &&
                     mxu->matmuls_done >= v->pend_matmuls && mxu->stores_done >= v->pend_stores;
  const bool red = reduces(v->cur.op);
  out->we = v->cur_active && (!red || cur_last);
  out->waddr = (v->cur.dst + (red ? 0 : v->row)) & mask;
  out->wdata = v->wdata;
  if (v->cur_active) {
    const uint32_t *a = paged_read(vmem, (v->cur.a + v->row) & mask);
    const uint32_t *b = paged_read(vmem, (v->cur.b + (v->cur.b_repeat ? 0 : v->row)) & mask);
    if (red && v->row == 0) memcpy(v->wdata, a, v->cols * sizeof *a);
    else vec_fast_line((isa_vec_op_t)v->cur.op, v->cols, a, red ? v->acc : b, v->cur.scalar, v->wdata);
    if (red) memcpy(v->acc, v->wdata, v->cols * sizeof *v->acc);
  }
  /* the edge */
  if (accept) {
    v->pend = (vec_unit_fast_cmd_t){.op = (uint8_t)(ISA_GET(cmd, VEC, op) & 31),
                                    .b_repeat = ISA_GET(cmd, VEC, b_repeat) != 0, .a = ISA_GET(cmd, VEC, a) & mask,
                                    .b = ISA_GET(cmd, VEC, b) & mask, .dst = ISA_GET(cmd, VEC, dst) & mask,
                                    .rows = ISA_GET(cmd, VEC, rows), .scalar = ISA_GET(cmd, VEC, scalar)};
    v->pend_loads = mxu->loads_issued;
    v->pend_matmuls = mxu->matmuls_issued;
    v->pend_stores = mxu->stores_issued;
    v->pend_valid = true;
    v->issued++;
  }
  if (start) {
    v->cur = v->pend;
    v->cur_active = true;
    v->row = 0;
    if (!accept) v->pend_valid = false;
  } else if (cur_last) {
    v->cur_active = false;
  } else if (v->cur_active) {
    v->row++;
  }
  if (cur_last) v->done++;
}
