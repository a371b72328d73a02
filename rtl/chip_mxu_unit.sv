// The chip's MXU unit: the MXU (rtl/mxu_top.sv) fed from VMEM (docs/isa.md, MXU_LOAD,
// MXU_MATMUL, MXU_STORE).
//
// MXU_LOAD and MXU_MATMUL go to the MXU's command port in program order, and a descriptor
// for each goes to its feeder: the weight feeder streams the R weight lines, the activation
// feeder the M activation lines, each one line per cycle whenever the MXU is ready, so the
// MXU's own double buffering overlaps the next tile's weights with this tile's rows.
// MXU_STORE copies accumulator rows to VMEM, one per cycle, once every MATMUL issued
// before it has written its rows; one more store may wait behind the running one, so a
// kernel that stores every tile keeps issuing. A MATMUL whose accumulator rows overlap a
// running or waiting store waits for it.
module chip_mxu_unit #(
  parameter int unsigned Rows      = 4,
  parameter int unsigned Cols      = 4,
  parameter int unsigned AccDepth  = 256,
  parameter int unsigned VmemLines = 1024,
  localparam int unsigned LineW    = 32 * Cols
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic                         cmd_valid_i,
  output logic                         cmd_ready_o,
  input  chip_isa_pkg::cmd_u           cmd_i,
  output logic                         drained_o,   // feeders empty, no store running, every MATMUL landed
  // progress counters for release fences: commands accepted and VMEM work finished, per kind
  output logic [31:0]                  loads_issued_o,
  output logic [31:0]                  loads_done_o,
  output logic [31:0]                  matmuls_issued_o,
  output logic [31:0]                  matmuls_done_o,
  output logic [31:0]                  stores_issued_o,
  output logic [31:0]                  stores_done_o,
  // the vector unit's progress: a load, matmul or store waits for the VEC commands issued
  // before it, so the compute queue's VMEM effects happen in program order
  input  logic [31:0]                  vecs_issued_i,
  input  logic [31:0]                  vecs_done_i,
  // VMEM: two read ports (weights, activations) and a write port (stores)
  output logic [$clog2(VmemLines)-1:0] w_raddr_o,
  input  logic [Cols*16-1:0]           w_rdata_i,   // a weight row: C bf16
  output logic [$clog2(VmemLines)-1:0] a_raddr_o,
  input  logic [Rows*16-1:0]           a_rdata_i,   // an activation row: R bf16
  output logic                         vmem_we_o,
  output logic [$clog2(VmemLines)-1:0] vmem_waddr_o,
  output logic [LineW-1:0]             vmem_wdata_o,
  // status
  output logic                         mxu_busy_o,
  output logic                         mxu_error_o,   // the MXU dropped a command (never, if checks hold)
  output logic                         acc_we_o,
  output logic [$clog2(AccDepth)-1:0]  acc_waddr_o,
  output logic [63:0]                  cnt_compute_o,
  output logic [63:0]                  cnt_weight_load_o,
  output logic [63:0]                  cnt_weight_stall_o,
  output logic [63:0]                  cnt_input_stall_o,
  output logic [63:0]                  cnt_idle_o
);
  import chip_isa_pkg::*;

  localparam int unsigned LineAw = $clog2(VmemLines);
  localparam int unsigned AccAw  = $clog2(AccDepth);
  localparam int unsigned FDepth = 4;  // feeder descriptor FIFOs
  localparam int unsigned FAw    = $clog2(FDepth);

  // the command (the command processor checked its fields)
  opcode_e op;
  assign op = cmd_i.any.opcode;

  // ---------------------------------------------------------------- feeder FIFOs
  logic [LineAw-1:0] wf_line_q [FDepth];
  logic              wf_tr_q   [FDepth];  // a transposed load: line j is weight column j
  logic [31:0]       wf_vec_q  [FDepth];  // VEC commands that must finish first
  logic [31:0]       af_vec_q  [FDepth];
  logic [FAw:0]      wf_count_q;
  logic [FAw-1:0]    wf_head_q;
  logic [LineAw-1:0] af_line_q [FDepth];
  logic [AccAw:0]    af_rows_q [FDepth];
  logic [FAw:0]      af_count_q;
  logic [FAw-1:0]    af_head_q;
  logic [$clog2(Rows):0] wf_row_q;  // row of the head weight descriptor being fed
  logic [AccAw:0]    af_row_q;      // row of the head activation descriptor being fed

  // ---------------------------------------------------------------- the MXU
  logic mxu_cmd_valid, mxu_cmd_ready, mxu_w_valid, mxu_w_ready, mxu_a_valid, mxu_a_ready;
  logic mxu_busy, acc_we;
  logic rd_en, rd_valid;
  logic [AccAw-1:0] rd_addr;
  logic [Cols*32-1:0] rd_data;

  // ---------------------------------------------------------------- store unit
  logic             st_active_q;
  logic [AccAw-1:0] st_acc_q;
  logic [AccAw:0]   st_left_q;       // rows still to read
  logic [63:0]      st_wait_rows_q;  // matmul rows that must be written first
  logic [LineAw-1:0] st_wline_q;    // VMEM line for the row arriving from the read port
  // the store waiting behind the running one
  logic             sn_valid_q;
  logic [AccAw-1:0] sn_acc_q;
  logic [AccAw:0]   sn_rows_q;
  logic [LineAw-1:0] sn_line_q;
  logic [63:0]      sn_wait_rows_q;
  logic [31:0]      st_vec_q, sn_vec_q;
  logic [63:0]      mm_rows_issued_q, mm_rows_written_q;
  logic [31:0]      loads_issued_q, loads_done_q, matmuls_issued_q, matmuls_done_q;
  logic [31:0]      stores_issued_q, stores_done_q;

  // Command acceptance.
  logic [63:0] mm_rows, mm_acc;  // the matmul's accumulator rows [mm_acc, mm_acc + mm_rows), widened
  logic        is_load, is_matmul, is_store, overlaps_store, accept;
  assign mm_rows = {32'd0, cmd_i.mxu_matmul.rows};
  assign mm_acc  = {32'd0, cmd_i.mxu_matmul.acc_row};
  assign is_load   = (op == OpMxuLoad);
  assign is_matmul = (op == OpMxuMatmul);
  assign is_store  = (op == OpMxuStore);
  // the matmul's rows against the rows the running store has still to read and the waiting one's
  assign overlaps_store =
      (st_active_q && (mm_acc < {{(64-AccAw){1'b0}}, st_acc_q} + {{(63-AccAw){1'b0}}, st_left_q}) &&
       ({{(64-AccAw){1'b0}}, st_acc_q} < mm_acc + mm_rows)) ||
      (sn_valid_q && (mm_acc < {{(64-AccAw){1'b0}}, sn_acc_q} + {{(63-AccAw){1'b0}}, sn_rows_q}) &&
       ({{(64-AccAw){1'b0}}, sn_acc_q} < mm_acc + mm_rows));
  always_comb begin
    accept = 1'b0;
    if (is_load)   accept = mxu_cmd_ready && (wf_count_q != (FAw + 1)'(FDepth));
    if (is_matmul) accept = mxu_cmd_ready && (af_count_q != (FAw + 1)'(FDepth)) && !overlaps_store;
    if (is_store)  accept = !sn_valid_q;
  end
  assign cmd_ready_o   = accept;
  assign mxu_cmd_valid = cmd_valid_i && (is_load || (is_matmul && !overlaps_store)) &&
                         ((is_load && wf_count_q != (FAw + 1)'(FDepth)) ||
                          (is_matmul && af_count_q != (FAw + 1)'(FDepth)));
  logic cmd_fire;
  assign cmd_fire = cmd_valid_i && accept;

  // Feeders: the head descriptor's next line, whenever the MXU takes a row.
  assign w_raddr_o   = wf_line_q[wf_head_q] + LineAw'(wf_row_q);
  assign a_raddr_o   = af_line_q[af_head_q] + LineAw'(af_row_q);
  assign mxu_w_valid = (wf_count_q != '0) && (vecs_done_i >= wf_vec_q[wf_head_q]);
  assign mxu_a_valid = (af_count_q != '0) && (vecs_done_i >= af_vec_q[af_head_q]);
  logic wf_last, af_last;
  assign wf_last = mxu_w_valid && mxu_w_ready && (wf_row_q == ($clog2(Rows) + 1)'(Rows - 1));
  assign af_last = mxu_a_valid && mxu_a_ready && (af_row_q + (AccAw + 1)'(1) == af_rows_q[af_head_q]);

  mxu_top #(
    .Rows     (Rows),
    .Cols     (Cols),
    .AccDepth (AccDepth)
  ) u_mxu (
    .clk_i,
    .rst_ni,
    .cmd_valid_i        (mxu_cmd_valid),
    .cmd_ready_o        (mxu_cmd_ready),
    .cmd_op_i           (is_matmul),
    .cmd_acc_addr_i     (AccAw'(cmd_i.mxu_matmul.acc_row)),
    .cmd_rows_i         ((AccAw + 1)'(cmd_i.mxu_matmul.rows)),
    .cmd_accumulate_i   (cmd_i.mxu_matmul.accumulate),
    .w_valid_i          (mxu_w_valid),
    .w_ready_o          (mxu_w_ready),
    .w_row_i            (w_rdata_i),
    .w_transpose_i      (wf_tr_q[wf_head_q]),
    .a_valid_i          (mxu_a_valid),
    .a_ready_o          (mxu_a_ready),
    .a_row_i            (a_rdata_i),
    .rd_en_i            (rd_en),
    .rd_addr_i          (rd_addr),
    .rd_valid_o         (rd_valid),
    .rd_data_o          (rd_data),
    .busy_o             (mxu_busy),
    .error_o            (mxu_error_o),
    .acc_we_o           (acc_we),
    .acc_waddr_o,
    .cnt_compute_o,
    .cnt_weight_load_o,
    .cnt_weight_stall_o,
    .cnt_input_stall_o,
    .cnt_idle_o
  );

  // Store: read one accumulator row per cycle once the earlier matmuls have written.
  logic st_can_read, st_finish;
  // the running store is done once its last read's data has been written
  assign st_finish = st_active_q && (st_left_q == '0) && !rd_valid;
  assign st_can_read = st_active_q && (st_left_q != '0) && (mm_rows_written_q >= st_wait_rows_q) &&
                       (vecs_done_i >= st_vec_q);
  assign rd_en   = st_can_read;
  assign rd_addr = st_acc_q;
  assign vmem_we_o    = rd_valid;  // the row read last cycle
  assign vmem_waddr_o = st_wline_q;
  assign vmem_wdata_o = rd_data;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wf_count_q        <= '0;
      wf_head_q         <= '0;
      wf_row_q          <= '0;
      af_count_q        <= '0;
      af_head_q         <= '0;
      af_row_q          <= '0;
      st_active_q       <= 1'b0;
      st_left_q         <= '0;
      sn_valid_q        <= 1'b0;
      mm_rows_issued_q  <= '0;
      mm_rows_written_q <= '0;
      loads_issued_q    <= '0;
      loads_done_q      <= '0;
      matmuls_issued_q  <= '0;
      matmuls_done_q    <= '0;
      stores_issued_q   <= '0;
      stores_done_q     <= '0;
    end else begin
      // weight feeder
      if (cmd_fire && is_load) begin
        wf_line_q[FAw'(wf_head_q + wf_count_q[FAw-1:0])] <= LineAw'(cmd_i.mxu_load.line);
        wf_tr_q[FAw'(wf_head_q + wf_count_q[FAw-1:0])]   <= cmd_i.mxu_load.transpose;
        wf_vec_q[FAw'(wf_head_q + wf_count_q[FAw-1:0])]  <= vecs_issued_i;
      end
      if (mxu_w_valid && mxu_w_ready) wf_row_q <= wf_last ? '0 : wf_row_q + 1'b1;
      if (wf_last) wf_head_q <= wf_head_q + FAw'(1);
      wf_count_q <= wf_count_q + (FAw + 1)'(cmd_fire && is_load) - (FAw + 1)'(wf_last);
      // activation feeder
      if (cmd_fire && is_matmul) begin
        af_line_q[FAw'(af_head_q + af_count_q[FAw-1:0])] <= LineAw'(cmd_i.mxu_matmul.line);
        af_rows_q[FAw'(af_head_q + af_count_q[FAw-1:0])] <= (AccAw + 1)'(cmd_i.mxu_matmul.rows);
        af_vec_q[FAw'(af_head_q + af_count_q[FAw-1:0])]  <= vecs_issued_i;
        mm_rows_issued_q <= mm_rows_issued_q + mm_rows;
      end
      if (mxu_a_valid && mxu_a_ready) af_row_q <= af_last ? '0 : af_row_q + 1'b1;
      if (af_last) af_head_q <= af_head_q + FAw'(1);
      af_count_q <= af_count_q + (FAw + 1)'(cmd_fire && is_matmul) - (FAw + 1)'(af_last);
      if (acc_we) mm_rows_written_q <= mm_rows_written_q + 64'd1;
      if (cmd_fire && is_load) loads_issued_q <= loads_issued_q + 32'd1;
      if (wf_last) loads_done_q <= loads_done_q + 32'd1;
      if (cmd_fire && is_matmul) matmuls_issued_q <= matmuls_issued_q + 32'd1;
      if (af_last) matmuls_done_q <= matmuls_done_q + 32'd1;
      if (cmd_fire && is_store) stores_issued_q <= stores_issued_q + 32'd1;
      if (st_finish) stores_done_q <= stores_done_q + 32'd1;
      // store
      if (rd_valid) st_wline_q <= st_wline_q + LineAw'(1);
      if (st_can_read) begin
        st_acc_q  <= st_acc_q + AccAw'(1);
        st_left_q <= st_left_q - (AccAw + 1)'(1);
      end
      // A new store runs at once when the unit is free (or frees up now), else waits.
      if (cmd_fire && is_store && (!st_active_q || st_finish) && !sn_valid_q) begin
        st_active_q    <= 1'b1;
        st_acc_q       <= AccAw'(cmd_i.mxu_store.acc_row);
        st_left_q      <= (AccAw + 1)'(cmd_i.mxu_store.rows);
        st_wline_q     <= LineAw'(cmd_i.mxu_store.line);
        st_wait_rows_q <= mm_rows_issued_q;
        st_vec_q       <= vecs_issued_i;
      end else if (st_finish && sn_valid_q) begin
        st_active_q    <= 1'b1;
        st_acc_q       <= sn_acc_q;
        st_left_q      <= sn_rows_q;
        st_wline_q     <= sn_line_q;
        st_wait_rows_q <= sn_wait_rows_q;
        st_vec_q       <= sn_vec_q;
        sn_valid_q     <= 1'b0;
      end else if (st_finish) begin
        st_active_q <= 1'b0;
      end
      if (cmd_fire && is_store && st_active_q && !st_finish) begin
        sn_valid_q     <= 1'b1;
        sn_acc_q       <= AccAw'(cmd_i.mxu_store.acc_row);
        sn_rows_q      <= (AccAw + 1)'(cmd_i.mxu_store.rows);
        sn_line_q      <= LineAw'(cmd_i.mxu_store.line);
        sn_wait_rows_q <= mm_rows_issued_q;
        sn_vec_q       <= vecs_issued_i;
      end
    end
  end

  assign acc_we_o   = acc_we;
  assign loads_issued_o   = loads_issued_q;
  assign loads_done_o     = loads_done_q;
  assign matmuls_issued_o = matmuls_issued_q;
  assign matmuls_done_o   = matmuls_done_q;
  assign stores_issued_o  = stores_issued_q;
  assign stores_done_o    = stores_done_q;
  assign drained_o  = (wf_count_q == '0) && (af_count_q == '0) && !st_active_q && !sn_valid_q &&
                      (mm_rows_written_q == mm_rows_issued_q) && !mxu_busy;
  assign mxu_busy_o = mxu_busy;
endmodule
