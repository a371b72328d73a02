// Shim for rtl/mxu_top.sv, compiled once per array size with MXU_ROWS, MXU_COLS,
// MXU_CLASS, MXU_HEADER and MXU_NEW defined by the Makefile.
#include MXU_HEADER
#include "vmodel/mxu_top.h"
#include "vmodel/vmodel_impl.hpp"

extern "C" vmodel_t *MXU_NEW(uint64_t seed);

extern "C" vmodel_t *MXU_NEW(uint64_t seed) {
  return vmodel_create<MXU_CLASS>("mxu_top", seed, [](VModelOf<MXU_CLASS> *m) {
    constexpr unsigned acc_aw = __builtin_ctz(MXU_ACC_DEPTH);  // AccDepth is a power of two
    static_assert((MXU_ACC_DEPTH & (MXU_ACC_DEPTH - 1)) == 0, "accumulator depth must be 2^n");
    VMODEL_PORT(m, cmd_valid_i, 1, true);
    VMODEL_PORT(m, cmd_ready_o, 1, false);
    VMODEL_PORT(m, cmd_op_i, 1, true);
    VMODEL_PORT(m, cmd_acc_addr_i, acc_aw, true);
    VMODEL_PORT(m, cmd_rows_i, acc_aw + 1, true);
    VMODEL_PORT(m, cmd_accumulate_i, 1, true);
    VMODEL_PORT(m, w_valid_i, 1, true);
    VMODEL_PORT(m, w_ready_o, 1, false);
    VMODEL_PORT(m, w_row_i, MXU_COLS * 16, true);
    VMODEL_PORT(m, w_transpose_i, 1, true);
    VMODEL_PORT(m, a_valid_i, 1, true);
    VMODEL_PORT(m, a_ready_o, 1, false);
    VMODEL_PORT(m, a_row_i, MXU_ROWS * 16, true);
    VMODEL_PORT(m, rd_en_i, 1, true);
    VMODEL_PORT(m, rd_addr_i, acc_aw, true);
    VMODEL_PORT(m, rd_valid_o, 1, false);
    VMODEL_PORT(m, rd_data_o, MXU_COLS * 32, false);
    VMODEL_PORT(m, busy_o, 1, false);
    VMODEL_PORT(m, error_o, 1, false);
    VMODEL_PORT(m, acc_we_o, 1, false);
    VMODEL_PORT(m, acc_waddr_o, acc_aw, false);
    VMODEL_PORT(m, cnt_compute_o, 64, false);
    VMODEL_PORT(m, cnt_weight_load_o, 64, false);
    VMODEL_PORT(m, cnt_weight_stall_o, 64, false);
    VMODEL_PORT(m, cnt_input_stall_o, 64, false);
    VMODEL_PORT(m, cnt_idle_o, 64, false);
  });
}
