// MXU datapath: a Rows x Cols weight-stationary systolic array of bf16 x bf16 + fp32 PEs
// with double-buffered weights, input skew, output de-skew and the fp32 accumulator memory.
//
// Dataflow (docs/mxu.md): an activation row accepted at edge E enters PE(r,0) at edge
// E+r+1 (input skew), moves right one PE per cycle and computes at PE(r,c) at edge E+r+c+1:
//   psum(r,c) = psum(r-1,c) + a(r) * w(r,c)      (psum(-1,c) = +0; one fp32 RNE add per PE)
// The bottom row's sums are de-skewed so column c waits Cols-c cycles, and the whole row is
// written (overwrite or fp32 accumulate) into the accumulator at edge E + Rows + Cols + 1.
// A weight row accepted at edge L is written into the idle buffer column by column, column
// c at edge L+c+1: the same diagonal the activations follow, so a new tile's weights never
// overtake the previous tile's last activations. Each activation carries its buffer select.
// A transposed row j (square arrays) is weight column j: its element r goes to PE(r, j) at
// edge L+r+1, the same diagonal again, so a transposed load costs exactly a plain one.
//
// Form: the state is 2-D arrays updated by loops in ONE always_ff, in reverse dataflow
// order (accumulator, de-skew, array bottom-up and right-to-left, weights, skew) with
// blocking assignments, so each element reads its neighbour's value from the previous
// cycle. Verilator compiles this into loops rather than one copy per PE (fast to build and
// run at 128x128), and the array loop only runs while activations are in flight, so an
// idle MXU costs almost nothing per cycle. Skew, de-skew and metadata delay lines are ring
// buffers indexed by a free-running tick, so they cost O(Rows + Cols) per cycle, not O(n^2).
module mxu_datapath #(
  parameter int unsigned Rows     = 4,
  parameter int unsigned Cols     = 4,
  parameter int unsigned AccDepth = 64
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  // weight row r of the tile for buffer w_buf_i (one row per cycle)
  input  logic                        w_fire_i,
  input  logic                        w_buf_i,
  input  logic [$clog2(Rows)-1:0]     w_row_idx_i,
  input  logic [Cols*16-1:0]          w_row_i,
  input  logic                        w_transpose_i,  // the row is weight column w_row_idx_i (Rows == Cols)
  // activation row (element r feeds array row r)
  input  logic                        a_fire_i,
  input  logic                        a_buf_i,
  input  logic [Rows*16-1:0]          a_row_i,
  input  logic [$clog2(AccDepth)-1:0] a_acc_addr_i,
  input  logic                        a_accumulate_i,
  // accumulator read port, one row per cycle, data one cycle after the request
  input  logic                        rd_en_i,
  input  logic [$clog2(AccDepth)-1:0] rd_addr_i,
  output logic                        rd_valid_o,
  output logic [Cols*32-1:0]          rd_data_o,
  // accumulator write, for observation (traces, tests)
  output logic                        acc_we_o,
  output logic [$clog2(AccDepth)-1:0] acc_waddr_o
);
  import arith_pkg::bf16_mul;
  import arith_pkg::fp32_add;

  localparam int unsigned AccAw       = $clog2(AccDepth);
  localparam int unsigned RowAw       = $clog2(Rows);
  localparam int unsigned ColAw       = $clog2(Cols);
  localparam int unsigned Latency     = Rows + Cols + 1;  // a_fire_i -> accumulator write
  // Ring buffers are powers of two deep, indexed by the low bits of the tick.
  localparam int unsigned SkewAw      = $clog2(Rows + 1);
  localparam int unsigned DeskewAw    = $clog2(Cols + 1);
  localparam int unsigned MetaAw      = $clog2(Latency + 1);
  localparam int unsigned SkewDepth   = 2 ** SkewAw;
  localparam int unsigned DeskewDepth = 2 ** DeskewAw;
  localparam int unsigned MetaDepth   = 2 ** MetaAw;
  localparam int unsigned TickW       = 32;

  // Input skew ring: row r of a row accepted at edge n sits in slot (n+r+1).
  logic [15:0]      skew_data  [Rows][SkewDepth];
  logic             skew_valid [Rows][SkewDepth];
  logic             skew_buf   [Rows][SkewDepth];
  // Weight write skew ring: column c of a row accepted at edge n sits in slot (n+c+1).
  logic [15:0]      wskew_data  [Cols][DeskewDepth];
  logic             wskew_valid [Cols][DeskewDepth];
  logic             wskew_buf   [Cols][DeskewDepth];
  logic [RowAw-1:0] wskew_row   [Cols][DeskewDepth];
  logic             wskew_tr    [Cols][DeskewDepth];  // element c of a transposed row: row c, column wskew_row
  // The PE array: two weight buffers, the activation register and the partial sum.
  logic [15:0]      weight    [2][Rows][Cols];
  logic [15:0]      act       [Rows][Cols];
  logic             act_valid [Rows][Cols];
  logic             act_buf   [Rows][Cols];
  logic [31:0]      psum      [Rows][Cols];
  // Output de-skew ring: column c's bottom sum waits Cols-c cycles.
  logic [31:0]      deskew [Cols][DeskewDepth];
  // Row metadata ring: accumulator address and mode, due Latency cycles after acceptance.
  logic             meta_valid [MetaDepth];
  logic [AccAw-1:0] meta_addr  [MetaDepth];
  logic             meta_accum [MetaDepth];
  // The accumulator memory.
  logic [31:0]      acc_mem [AccDepth][Cols];

  logic [TickW-1:0] tick;
  logic [TickW-1:0] act_busy;     // cycles of array activity left
  logic [TickW-1:0] weight_busy;  // cycles of weight writes left
  // Outputs: worked on with blocking assignments (acc_we_w, ...) and handed to their
  // registers non-blocking, so logic clocked on the same edge elsewhere reads old values.
  logic             rd_valid_q, acc_we_q, acc_we_w;
  logic [Cols*32-1:0] rd_data_q, rd_data_w;
  logic [AccAw-1:0] acc_waddr_q, acc_waddr_w;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int r = 0; r < Rows; r++) begin
        for (int s = 0; s < SkewDepth; s++) skew_valid[r][s] = 1'b0;
        for (int c = 0; c < Cols; c++) act_valid[r][c] = 1'b0;
      end
      for (int c = 0; c < Cols; c++) begin
        for (int s = 0; s < DeskewDepth; s++) wskew_valid[c][s] = 1'b0;
      end
      for (int s = 0; s < MetaDepth; s++) meta_valid[s] = 1'b0;
      tick        = '0;
      act_busy    = '0;
      weight_busy = '0;
      rd_valid_q  <= 1'b0;
      acc_we_q    <= 1'b0;
      acc_waddr_q <= '0;
    end else begin
      // 1. Accumulator write of the row whose de-skewed sums are due now.
      acc_we_w    = 1'b0;
      acc_waddr_w = acc_waddr_q;
      if (meta_valid[tick[MetaAw-1:0]]) begin
        automatic logic [MetaAw-1:0]   m = tick[MetaAw-1:0];
        automatic logic [DeskewAw-1:0] d = tick[DeskewAw-1:0];
        for (int c = 0; c < Cols; c++) begin
          acc_mem[meta_addr[m]][c] = meta_accum[m] ? fp32_add(acc_mem[meta_addr[m]][c], deskew[c][d])
                                                   : deskew[c][d];
        end
        meta_valid[m] = 1'b0;
        acc_we_w      = 1'b1;
        acc_waddr_w   = meta_addr[m];
      end

      if (act_busy != '0) begin
        // 2. De-skew: the bottom row's sums (computed at earlier edges) into the ring.
        for (int c = 0; c < Cols; c++) begin
          if (act_valid[Rows-1][c]) deskew[c][DeskewAw'(tick + Cols - c)] = psum[Rows-1][c];
        end
        // 3. The array, bottom-up and right-to-left: neighbours still hold last cycle's values.
        for (int r = Rows - 1; r >= 0; r--) begin
          for (int c = Cols - 1; c >= 0; c--) begin
            automatic logic        in_valid = (c == 0) ? skew_valid[r][tick[SkewAw-1:0]] : act_valid[r][c-1];
            automatic logic [15:0] in_data  = (c == 0) ? skew_data[r][tick[SkewAw-1:0]]  : act[r][c-1];
            automatic logic        in_buf   = (c == 0) ? skew_buf[r][tick[SkewAw-1:0]]   : act_buf[r][c-1];
            act_valid[r][c] = in_valid;
            if (in_valid) begin
              act[r][c]     = in_data;
              act_buf[r][c] = in_buf;
              psum[r][c]    = fp32_add((r == 0) ? 32'h0 : psum[r-1][c],
                                       bf16_mul(in_data, weight[in_buf][r][c]));
            end
          end
          skew_valid[r][tick[SkewAw-1:0]] = 1'b0;
        end
      end

      // 4. Weight writes due now, then the newly accepted weight row into the write skew.
      if (weight_busy != '0) begin
        for (int c = 0; c < Cols; c++) begin
          automatic logic [DeskewAw-1:0] s = tick[DeskewAw-1:0];
          if (wskew_valid[c][s]) begin
            if (wskew_tr[c][s]) weight[wskew_buf[c][s]][RowAw'(c)][ColAw'(wskew_row[c][s])] = wskew_data[c][s];
            else weight[wskew_buf[c][s]][wskew_row[c][s]][c] = wskew_data[c][s];
            wskew_valid[c][s] = 1'b0;
          end
        end
        weight_busy = weight_busy - 1;
      end
      if (w_fire_i) begin
        for (int c = 0; c < Cols; c++) begin
          automatic logic [DeskewAw-1:0] s = DeskewAw'(tick + c + 1);
          wskew_data[c][s]  = w_row_i[c*16 +: 16];
          wskew_valid[c][s] = 1'b1;
          wskew_buf[c][s]   = w_buf_i;
          wskew_row[c][s]   = w_row_idx_i;
          wskew_tr[c][s]    = w_transpose_i;
        end
        weight_busy = Cols;
      end

      // 5. The newly accepted activation row into the input skew, and its metadata.
      if (act_busy != '0) act_busy = act_busy - 1;
      if (a_fire_i) begin
        for (int r = 0; r < Rows; r++) begin
          automatic logic [SkewAw-1:0] s = SkewAw'(tick + r + 1);
          skew_data[r][s]  = a_row_i[r*16 +: 16];
          skew_valid[r][s] = 1'b1;
          skew_buf[r][s]   = a_buf_i;
        end
        meta_valid[MetaAw'(tick + Latency)] = 1'b1;
        meta_addr[MetaAw'(tick + Latency)]  = a_acc_addr_i;
        meta_accum[MetaAw'(tick + Latency)] = a_accumulate_i;
        act_busy = Latency;
      end

      // Read port (the wide data register only changes on a read).
      if (rd_en_i) begin
        for (int c = 0; c < Cols; c++) rd_data_w[c*32 +: 32] = acc_mem[rd_addr_i][c];
        rd_data_q <= rd_data_w;
      end
      rd_valid_q  <= rd_en_i;
      acc_we_q    <= acc_we_w;
      acc_waddr_q <= acc_waddr_w;

      tick = tick + 1;
    end
  end

  assign rd_valid_o  = rd_valid_q;
  assign rd_data_o   = rd_data_q;
  assign acc_we_o    = acc_we_q;
  assign acc_waddr_o = acc_waddr_q;
endmodule
