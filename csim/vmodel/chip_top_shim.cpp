// Shim for rtl/chip_top.sv, compiled once per MXU size with CHIP_* defined by the Makefile.
#include CHIP_HEADER
#include "vmodel/chip_top.h"
#include "vmodel/vmodel_impl.hpp"

extern "C" vmodel_t *CHIP_NEW(uint64_t seed, int zero_init);

// The widths of the typed ports' words and fields, from the table the RTL's chip_obs_pkg is
// generated from: obs_<WORD>_bits, hbm_req_<FIELD>_bits.
#define CHIP_OBS_WORD(name, bits, doc) constexpr unsigned obs_##name##_bits = bits;
#include "rtl/chip_obs.def"
#define CHIP_HBM_REQ_FIELD(name, lsb, width, doc) constexpr unsigned hbm_req_##name##_bits = width;
#include "rtl/chip_obs.def"

extern "C" vmodel_t *CHIP_NEW(uint64_t seed, int zero_init) {
  return vmodel_create<CHIP_CLASS>("chip_top", seed, [](VModelOf<CHIP_CLASS> *m) {
    constexpr unsigned qaw = __builtin_ctz(CHIP_QUEUE_DEPTH);
    constexpr unsigned line = 32 * CHIP_COLS;
    constexpr unsigned cores = CHIP_CORES, nq = ISA_NUM_QUEUES * cores;
    VMODEL_PORT(m, host_we_i, 1, true);
    VMODEL_PORT(m, host_queue_i, 8, true);
    VMODEL_PORT(m, host_addr_i, qaw, true);
    VMODEL_PORT(m, host_data_i, 32 * ISA_CMD_WORDS, true);
    VMODEL_PORT(m, start_i, nq, true);
    VMODEL_PORT(m, start_len_i, nq * (qaw + 1), true);
    VMODEL_PORT(m, abort_i, nq, true);
    VMODEL_PORT(m, hbm_bytes_i, 32, true);
    VMODEL_PORT(m, q_running_o, nq, false);
    VMODEL_PORT(m, q_halted_o, nq, false);
    VMODEL_PORT(m, q_error_o, nq * ISA_ERR_BITS, false);
    VMODEL_PORT(m, q_pc_o, nq * qaw, false);
    VMODEL_PORT(m, q_opcode_o, nq * 8, false);
    VMODEL_PORT(m, sem_rd_idx_i, 5, true);
    VMODEL_PORT(m, sem_rd_core_i, 8, true);
    VMODEL_PORT(m, sem_rd_value_o, 32, false);
    VMODEL_PORT(m, hbm_req_valid_o, cores, false);  // a port per core
    VMODEL_PORT(m, hbm_req_ready_i, cores, true);
    VMODEL_PORT(m, hbm_req_write_o, cores, false);
    VMODEL_PORT(m, hbm_req_addr_o, cores * hbm_req_ADDR_bits, false);
    VMODEL_PORT(m, hbm_req_bytes_o, cores * hbm_req_BYTES_bits, false);
    VMODEL_PORT(m, hbm_req_data_o, cores * line, false);
    VMODEL_PORT(m, hbm_resp_valid_i, cores, true);
    VMODEL_PORT(m, hbm_resp_data_i, cores * line, true);
    VMODEL_PORT(m, cnt_dma_busy_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_mxu_busy_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_compute_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_weight_load_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_weight_stall_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_input_stall_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, cnt_idle_o, obs_COUNTER_bits, false);
    VMODEL_PORT(m, mxu_error_o, 1, false);
    VMODEL_PORT(m, idle_o, 1, false);
    constexpr unsigned flit = CHIP_FLIT_BITS;
    VMODEL_PORT(m, my_x_i, 8, true);
    VMODEL_PORT(m, my_y_i, 8, true);
    VMODEL_PORT(m, size_x_i, 8, true);
    VMODEL_PORT(m, size_y_i, 8, true);
    VMODEL_PORT(m, buf_depth_i, 4, true);
    VMODEL_PORT(m, slice_i, 32, true);
    VMODEL_PORT(m, cnt_slice_drops_o, 16, false);
    VMODEL_PORT(m, net_in_flit_i, 4 * flit, true);
    VMODEL_PORT(m, net_out_flit_o, 4 * flit, false);
    VMODEL_PORT(m, net_credit_in_i, 8, true);
    VMODEL_PORT(m, net_credit_out_o, 8, false);
    VMODEL_PORT(m, net_occupancy_o, 8, false);
    VMODEL_PORT(m, cnt_router_flits_o, 5 * 32, false);
    // the visible events (fast/chip_obs.h), for the lockstep check
    constexpr unsigned rports = 4 + ISA_NUM_RDMA_ENGINES;
    VMODEL_PORT(m, obs_sems_o, cores * 32 * ISA_NUM_SEMS, false);
    constexpr unsigned mxus = CHIP_MXUS;
    VMODEL_PORT(m, obs_vmem_we_o, cores * (2 + mxus), false);
    VMODEL_PORT(m, obs_vmem_waddr_o, cores * (2 + mxus) * 32, false);
    VMODEL_PORT(m, obs_vmem_wdata_o, cores * (2 + mxus) * line, false);
    VMODEL_PORT(m, obs_rdma_we_o, ISA_NUM_RDMA_ENGINES, false);
    VMODEL_PORT(m, obs_rdma_waddr_o, ISA_NUM_RDMA_ENGINES * obs_RDMA_WADDR_bits, false);
    VMODEL_PORT(m, obs_rdma_wdata_o, ISA_NUM_RDMA_ENGINES * 64, false);
    VMODEL_PORT(m, obs_rtr_in_o, rports * flit, false);
    VMODEL_PORT(m, obs_rtr_out_o, rports * flit, false);
    VMODEL_PORT(m, obs_rtr_credit_in_o, rports * CHIP_ROUTER_VCS, false);
    VMODEL_PORT(m, obs_rtr_credit_out_o, rports * CHIP_ROUTER_VCS, false);
    VMODEL_PORT(m, obs_progress_o, cores * (6 * mxus + 2) * 32, false);
    VMODEL_PORT(m, obs_issue_o, nq, false);
    VMODEL_PORT(m, obs_busy_o, cores * obs_BUSY_bits, false);
    VMODEL_PORT(m, obs_mxu_busy_o, cores * mxus, false);
    VMODEL_PORT(m, obs_mxu_drained_o, cores * mxus, false);
    VMODEL_PORT(m, obs_acc_we_o, cores * mxus, false);
    VMODEL_PORT(m, obs_acc_waddr_o, cores * mxus * 32, false);
  }, zero_init ? 0 : 2);
}
