// MXU control: the command interface, the weight loader, the activation streamer, and the
// performance counters.
//
// Commands (docs/mxu.md): LOAD_WEIGHTS takes the next Rows weight rows from the weight
// port into the idle weight buffer; MATMUL streams cmd_rows_i activation rows from the
// activation port through the array, into accumulator rows cmd_acc_addr_i.. (overwrite,
// or fp32 accumulate), using the weights of the most recent LOAD_WEIGHTS before it.
// Loads and matmuls run concurrently: a load may run ahead of the matmuls into the other
// buffer as soon as no matmul that still has to stream reads that buffer, and a matmul
// starts as soon as its weights are complete (also in the very cycle the last row
// arrives) and the previous matmul has streamed its last row. With data ready every
// cycle a tile therefore takes max(M, Rows) cycles, which is the double-buffering contract.
module mxu_control #(
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned AccDepth   = 64,
  parameter int unsigned QueueDepth = 4
) (
  input  logic                        clk_i,
  input  logic                        rst_ni,
  // command port
  input  logic                        cmd_valid_i,
  output logic                        cmd_ready_o,
  input  logic                        cmd_op_i,         // 0: LOAD_WEIGHTS, 1: MATMUL
  input  logic [$clog2(AccDepth)-1:0] cmd_acc_addr_i,
  input  logic [$clog2(AccDepth):0]   cmd_rows_i,
  input  logic                        cmd_accumulate_i,
  // data port handshakes
  input  logic                        w_valid_i,
  output logic                        w_ready_o,
  input  logic                        a_valid_i,
  output logic                        a_ready_o,
  // to the datapath
  output logic                        w_fire_o,
  output logic                        w_buf_o,
  output logic [$clog2(Rows)-1:0]     w_row_idx_o,
  output logic                        a_fire_o,
  output logic                        a_buf_o,
  output logic [$clog2(AccDepth)-1:0] a_acc_addr_o,
  output logic                        a_accumulate_o,
  // status
  output logic                        busy_o,
  output logic                        error_o,          // sticky: a MATMUL was malformed
  output logic [63:0]                 cnt_compute_o,      // an activation row entered the array
  output logic [63:0]                 cnt_weight_load_o,  // a weight row was loaded
  output logic [63:0]                 cnt_weight_stall_o, // a matmul waited for its weights
  output logic [63:0]                 cnt_input_stall_o,  // a matmul waited for activation data
  output logic [63:0]                 cnt_idle_o          // nothing queued, running or in flight
);
  localparam int unsigned AccAw   = $clog2(AccDepth);
  localparam int unsigned RowAw   = $clog2(Rows);  // Rows >= 2
  localparam int unsigned QAw     = $clog2(QueueDepth);
  localparam int unsigned Latency = Rows + Cols + 1;  // must match mxu_datapath
  localparam int unsigned DrainW  = $clog2(Latency + 1);
  localparam logic        OpLoad  = 1'b0;

  typedef logic [7:0] seq_t;  // load sequence numbers, compared modulo 256

  typedef struct packed {
    logic [AccAw-1:0] acc_addr;
    logic [AccAw:0]   rows;
    logic             accumulate;
    seq_t             load_seq;  // the LOAD_WEIGHTS whose weights it uses
  } matmul_t;

  // Loads: counted, not queued (they carry no operands).
  seq_t             loads_req_q, loads_started_q, loads_done_q;
  logic             load_active_q;
  logic [RowAw-1:0] load_row_q;
  logic             load_buf_q;
  // Matmul queue and the streaming matmul.
  matmul_t          mmq_q [QueueDepth];
  logic [QAw:0]     mmq_count_q;
  logic [QAw-1:0]   mmq_head_q;
  logic             stream_active_q;
  logic [AccAw-1:0] stream_addr_q;
  logic             stream_accum_q;
  seq_t             stream_seq_q;
  logic [AccAw:0]   stream_left_q;
  logic [DrainW-1:0] drain_q;        // cycles until the last streamed row is accumulated
  logic [$clog2(Cols+2)-1:0] wdrain_q;  // cycles until the last weight row is written
  logic             error_q;
  logic [63:0]      cnt_compute_q, cnt_weight_load_q, cnt_weight_stall_q, cnt_input_stall_q,
                    cnt_idle_q;

  // ---------------------------------------------------------------- handshakes
  logic w_fire, a_fire, load_last, stream_last;
  assign w_ready_o   = load_active_q;
  assign a_ready_o   = stream_active_q;
  assign w_fire      = w_valid_i && w_ready_o;
  assign a_fire      = a_valid_i && a_ready_o;
  assign load_last   = w_fire && (load_row_q == RowAw'(Rows - 1));
  assign stream_last = a_fire && (stream_left_q == (AccAw + 1)'(1));

  // ---------------------------------------------------------------- commands
  logic    mmq_full, mmq_empty, cmd_is_load, cmd_bad, cmd_fire;
  matmul_t mmq_head, cmd_matmul;
  assign mmq_full    = (mmq_count_q == (QAw + 1)'(QueueDepth));
  assign mmq_empty   = (mmq_count_q == '0);
  assign mmq_head    = mmq_q[mmq_head_q];
  assign cmd_is_load = (cmd_op_i == OpLoad);
  // At most 128 loads outstanding keeps the modulo-256 sequence comparisons exact.
  assign cmd_ready_o = cmd_is_load ? (seq_t'(loads_req_q - loads_done_q) < seq_t'(128)) : !mmq_full;
  assign cmd_fire    = cmd_valid_i && cmd_ready_o;
  // One extra bit so that addr + rows cannot wrap past the check.
  assign cmd_bad     = !cmd_is_load && ((cmd_rows_i == '0) ||
                       ({2'b0, cmd_acc_addr_i} + {1'b0, cmd_rows_i} > (AccAw + 2)'(AccDepth)));
  assign cmd_matmul  = '{acc_addr: cmd_acc_addr_i, rows: cmd_rows_i,
                         accumulate: cmd_accumulate_i, load_seq: seq_t'(loads_req_q - 8'd1)};

  // ---------------------------------------------------------------- scheduling
  // The oldest matmul that still has rows to stream, if any, after this cycle.
  logic oldest_valid;
  seq_t oldest_seq, loads_done_next;
  always_comb begin
    oldest_valid = 1'b0;
    oldest_seq   = '0;
    if (stream_active_q && !stream_last) begin
      oldest_valid = 1'b1;
      oldest_seq   = stream_seq_q;
    end else if (!mmq_empty) begin
      oldest_valid = 1'b1;
      oldest_seq   = mmq_head.load_seq;
    end
  end
  assign loads_done_next = loads_done_q + {7'd0, load_last};

  logic load_free, buf_free, load_start, stream_free, weights_ready, stream_start;
  assign load_free   = !load_active_q || load_last;
  // Load s writes buffer s%2, which matmuls of load s-2 read: wait until none is left.
  assign buf_free    = !oldest_valid || ($signed(oldest_seq - loads_started_q) >= -8'sd1);
  assign load_start  = (loads_started_q != loads_req_q) && load_free && buf_free;
  assign stream_free = !stream_active_q || stream_last;
  assign weights_ready = $signed(loads_done_next - mmq_head.load_seq) >= 8'sd1;
  assign stream_start  = !mmq_empty && stream_free && weights_ready;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      loads_req_q     <= '0;
      loads_started_q <= '0;
      loads_done_q    <= '0;
      load_active_q   <= 1'b0;
      load_row_q      <= '0;
      load_buf_q      <= 1'b0;
      mmq_count_q     <= '0;
      mmq_head_q      <= '0;
      stream_active_q <= 1'b0;
      stream_left_q   <= '0;
      drain_q         <= '0;
      wdrain_q        <= '0;
      error_q         <= 1'b0;
    end else begin
      // command intake
      if (cmd_fire && cmd_is_load) loads_req_q <= loads_req_q + 8'd1;
      if (cmd_fire && cmd_bad) error_q <= 1'b1;

      // loader
      if (load_start) begin
        load_active_q   <= 1'b1;
        load_row_q      <= '0;
        load_buf_q      <= loads_started_q[0];
        loads_started_q <= loads_started_q + 8'd1;
      end else if (load_last) begin
        load_active_q <= 1'b0;
      end else if (w_fire) begin
        load_row_q <= load_row_q + RowAw'(1);
      end
      if (load_last) loads_done_q <= loads_done_q + 8'd1;

      // streamer
      if (stream_start) begin
        stream_active_q <= 1'b1;
        stream_addr_q   <= mmq_head.acc_addr;
        stream_accum_q  <= mmq_head.accumulate;
        stream_seq_q    <= mmq_head.load_seq;
        stream_left_q   <= mmq_head.rows;
      end else if (stream_last) begin
        stream_active_q <= 1'b0;
      end else if (a_fire) begin
        stream_left_q <= stream_left_q - (AccAw + 1)'(1);
        stream_addr_q <= stream_addr_q + AccAw'(1);
      end

      // matmul queue: pop on start, push good commands
      if (stream_start) mmq_head_q <= QAw'(mmq_head_q + QAw'(1));
      if (cmd_fire && !cmd_is_load && !cmd_bad) begin
        mmq_q[QAw'(mmq_head_q + mmq_count_q[QAw-1:0])] <= cmd_matmul;
      end
      mmq_count_q <= mmq_count_q + (QAw + 1)'(cmd_fire && !cmd_is_load && !cmd_bad)
                                 - (QAw + 1)'(stream_start);

      // in-flight drains
      if (a_fire) drain_q <= DrainW'(Latency);
      else if (drain_q != '0) drain_q <= drain_q - DrainW'(1);
      if (w_fire) wdrain_q <= ($bits(wdrain_q))'(Cols);
      else if (wdrain_q != '0) wdrain_q <= wdrain_q - ($bits(wdrain_q))'(1);
    end
  end

  // ---------------------------------------------------------------- counters
  logic busy, weight_stall, input_stall;
  assign busy = (loads_req_q != loads_done_q) || !mmq_empty || stream_active_q ||
                (drain_q != '0) || (wdrain_q != '0);
  assign weight_stall = !mmq_empty && stream_free && !weights_ready;
  assign input_stall  = stream_active_q && !a_valid_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_compute_q      <= '0;
      cnt_weight_load_q  <= '0;
      cnt_weight_stall_q <= '0;
      cnt_input_stall_q  <= '0;
      cnt_idle_q         <= '0;
    end else begin
      if (a_fire) cnt_compute_q <= cnt_compute_q + 64'd1;
      if (w_fire) cnt_weight_load_q <= cnt_weight_load_q + 64'd1;
      if (weight_stall) cnt_weight_stall_q <= cnt_weight_stall_q + 64'd1;
      if (input_stall) cnt_input_stall_q <= cnt_input_stall_q + 64'd1;
      if (!busy && !cmd_valid_i) cnt_idle_q <= cnt_idle_q + 64'd1;
    end
  end

  assign w_fire_o       = w_fire;
  assign w_buf_o        = load_buf_q;
  assign w_row_idx_o    = load_row_q;
  assign a_fire_o       = a_fire;
  assign a_buf_o        = stream_seq_q[0];
  assign a_acc_addr_o   = stream_addr_q;
  assign a_accumulate_o = stream_accum_q;
  assign busy_o         = busy;
  assign error_o        = error_q;
  assign cnt_compute_o      = cnt_compute_q;
  assign cnt_weight_load_o  = cnt_weight_load_q;
  assign cnt_weight_stall_o = cnt_weight_stall_q;
  assign cnt_input_stall_o  = cnt_input_stall_q;
  assign cnt_idle_o         = cnt_idle_q;
endmodule
