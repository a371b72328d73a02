/*
 * mxu_top: the Verilated models of rtl/mxu_top.sv, one per array size built into this
 * binary (MXU_SIZES in the Makefile). Driven through vmodel.h; csim/runtime/mxu_driver.h runs
 * GEMMs on them.
 *
 * Ports: clk_i rst_ni; cmd_valid_i cmd_ready_o cmd_op_i cmd_acc_addr_i cmd_rows_i
 * cmd_accumulate_i; w_valid_i w_ready_o w_row_i[C*16] w_transpose_i; a_valid_i a_ready_o a_row_i[R*16];
 * rd_en_i rd_addr_i rd_valid_o rd_data_o[C*32]; busy_o error_o acc_we_o acc_waddr_o;
 * cnt_compute_o cnt_weight_load_o cnt_weight_stall_o cnt_input_stall_o cnt_idle_o (64 bits).
 */
#ifndef MXU_TOP_H
#define MXU_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmodel/vmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MXU_OP_LOAD_WEIGHTS 0
#define MXU_OP_MATMUL 1

/* Builds the rows x cols model with reset values randomised from seed; NULL if that size
 * is not built into this binary (or out of memory). */
vmodel_t *mxu_top_new(unsigned rows, unsigned cols, uint64_t seed);
/* Accumulator depth (rows) of the rows x cols model, 0 if that size is not built. */
unsigned mxu_top_acc_depth(unsigned rows, unsigned cols);
/* The sizes built, as "4x4, 8x8, ..." for messages. */
const char *mxu_top_sizes(void);

#ifdef __cplusplus
}
#endif

#endif
