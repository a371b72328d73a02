// MXU: a Rows x Cols weight-stationary bf16 systolic array with double-buffered weights and
// an fp32 accumulator memory, behind a command port and valid/ready data ports.
// This is the Verilated top for the MXU on its own (tpusim gemm --level mxu, tests/test_mxu_*).
module mxu_top #(
  parameter int unsigned Rows     = 4,
  parameter int unsigned Cols     = 4,
  parameter int unsigned AccDepth = 256
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  input  logic                        cmd_valid_i,
  output logic                        cmd_ready_o,
  input  logic                        cmd_op_i,
  input  logic [$clog2(AccDepth)-1:0] cmd_acc_addr_i,
  input  logic [$clog2(AccDepth):0]   cmd_rows_i,
  input  logic                        cmd_accumulate_i,
  input  logic                        w_valid_i,
  output logic                        w_ready_o,
  input  logic [Cols*16-1:0]          w_row_i,
  input  logic                        w_transpose_i,  // this row is weight column j (square arrays only)
  input  logic                        a_valid_i,
  output logic                        a_ready_o,
  input  logic [Rows*16-1:0]          a_row_i,
  input  logic                        rd_en_i,
  input  logic [$clog2(AccDepth)-1:0] rd_addr_i,
  output logic                        rd_valid_o,
  output logic [Cols*32-1:0]          rd_data_o,
  output logic                        busy_o,
  output logic                        error_o,
  output logic                        acc_we_o,
  output logic [$clog2(AccDepth)-1:0] acc_waddr_o,
  output logic [63:0]                 cnt_compute_o,
  output logic [63:0]                 cnt_weight_load_o,
  output logic [63:0]                 cnt_weight_stall_o,
  output logic [63:0]                 cnt_input_stall_o,
  output logic [63:0]                 cnt_idle_o
);
  logic                        w_fire, w_buf, a_fire, a_buf, a_accumulate;
  logic [$clog2(Rows)-1:0]     w_row_idx;
  logic [$clog2(AccDepth)-1:0] a_acc_addr;

  mxu_control #(
    .Rows     (Rows),
    .Cols     (Cols),
    .AccDepth (AccDepth)
  ) u_control (
    .clk_i,
    .rst_ni,
    .cmd_valid_i,
    .cmd_ready_o,
    .cmd_op_i,
    .cmd_acc_addr_i,
    .cmd_rows_i,
    .cmd_accumulate_i,
    .w_valid_i,
    .w_ready_o,
    .a_valid_i,
    .a_ready_o,
    .w_fire_o       (w_fire),
    .w_buf_o        (w_buf),
    .w_row_idx_o    (w_row_idx),
    .a_fire_o       (a_fire),
    .a_buf_o        (a_buf),
    .a_acc_addr_o   (a_acc_addr),
    .a_accumulate_o (a_accumulate),
    .busy_o,
    .error_o,
    .cnt_compute_o,
    .cnt_weight_load_o,
    .cnt_weight_stall_o,
    .cnt_input_stall_o,
    .cnt_idle_o
  );

  mxu_datapath #(
    .Rows     (Rows),
    .Cols     (Cols),
    .AccDepth (AccDepth)
  ) u_datapath (
    .clk_i,
    .rst_ni,
    .w_fire_i       (w_fire),
    .w_buf_i        (w_buf),
    .w_row_idx_i    (w_row_idx),
    .w_row_i,
    .w_transpose_i  (w_transpose_i && (Rows == Cols)),
    .a_fire_i       (a_fire),
    .a_buf_i        (a_buf),
    .a_row_i,
    .a_acc_addr_i   (a_acc_addr),
    .a_accumulate_i (a_accumulate),
    .rd_en_i,
    .rd_addr_i,
    .rd_valid_o,
    .rd_data_o,
    .acc_we_o,
    .acc_waddr_o
  );
endmodule
