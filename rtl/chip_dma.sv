// DMA engine (docs/isa.md, opcode DMA): HBM -> VMEM, VMEM -> HBM and VMEM -> VMEM, in 2-D
// strided rows (one VMEM line per row), signalling a semaphore on completion.
//
// Descriptors queue in a small FIFO. The issue stage sends one HBM request per row (one
// per cycle while the HBM port is ready); requests of consecutive descriptors follow each
// other without a gap. The HBM port answers every request in order (read data, or a write
// acknowledgement), and a completion FIFO attributes each answer to its descriptor: the
// descriptor completes (its semaphore is signalled) when its last answer arrives, i.e.
// when its last write has landed. Transfers of the queue take effect in order: a transfer
// that reads VMEM (VMEM -> HBM, VMEM -> VMEM) starts once earlier HBM -> VMEM transfers
// have landed; VMEM -> VMEM copies one line per cycle.
//
// A transposing HBM -> VMEM transfer (rows <= Cols rows of bytes/2 bf16) runs alone: it
// starts once nothing else is in flight, its answers fill a Cols x 2 Cols bf16 buffer
// instead of VMEM, and after the last one it writes bytes/2 lines, one per cycle, line e
// holding element e of every row (bf16 lanes 0..rows-1, zero beyond); then it completes.
// Nothing else starts until then, so the VMEM write port is its own.
module chip_dma #(
  parameter int unsigned Cols      = 4,
  parameter int unsigned VmemLines = 1024,
  localparam int unsigned LineW    = 32 * Cols
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  // descriptors from the DMA queue
  input  logic                         desc_valid_i,
  output logic                         desc_ready_o,
  input  chip_isa_pkg::cmd_u           desc_i,
  output logic                         drained_o,
  // VMEM
  output logic [$clog2(VmemLines)-1:0] vmem_raddr_o,
  input  logic [LineW-1:0]             vmem_rdata_i,
  output logic                         vmem_we_o,
  output logic [$clog2(VmemLines)-1:0] vmem_waddr_o,
  output logic [LineW-1:0]             vmem_wdata_o,
  // HBM port (chip_obs_pkg, from rtl/chip_obs.def); the lines ride beside the structs, as
  // their width is a parameter
  output chip_obs_pkg::hbm_req_t       hbm_req_o,
  output logic [LineW-1:0]             hbm_req_data_o,
  input  chip_obs_pkg::hbm_rsp_t       hbm_rsp_i,
  input  logic [LineW-1:0]             hbm_rsp_data_i,
  // completion
  output logic                         sem_signal_o,
  output logic [4:0]                   sem_idx_o,
  output logic [31:0]                  sem_value_o,
  output logic                         busy_o
);
  import chip_isa_pkg::*;

  localparam int unsigned LineAw = $clog2(VmemLines);
  localparam int unsigned Depth  = 16;  // transfers in flight: enough to cover long latencies
  localparam int unsigned TLines = 2 * Cols;  // bf16 elements of a line: lines a transposing DMA writes

  typedef struct packed {
    dma_kind_e         kind;
    logic [31:0]       hbm_addr;   // V2V: destination line
    logic [31:0]       stride;
    logic [LineAw-1:0] line;
    logic [31:0]       rows;
    logic [15:0]       bytes;
    logic [7:0]        sem;
    logic [31:0]       value;
  } desc_t;

  typedef struct packed {
    logic              tr;         // answers fill the transpose buffer (line: the row)
    logic              read;       // answers carry data for VMEM
    logic [LineAw-1:0] line;       // next VMEM line to write
    logic [31:0]       left;       // answers still to come
    logic [15:0]       bytes;
    logic [7:0]        sem;
    logic [31:0]       value;
  } pending_t;

  // Descriptor FIFO (depth 2).
  desc_t    fifo_q [2];
  logic [1:0] fifo_count_q;
  logic     fifo_head_q;
  // Issue stage.
  logic     cur_active_q;
  desc_t    cur_q;
  logic [31:0] cur_row_q;
  // Transposing DMA: the rows, then the lines written out of them.
  logic [LineW-1:0]  tbuf_q [Cols];       // row r: its TLines bf16 elements, as the line arrived
  logic              t_busy_q;            // from its start until its last line is written
  logic              drain_q;             // writing lines out
  logic [LineAw-1:0] t_line_q;            // next VMEM line to write
  logic [15:0]       t_left_q, t_elem_q;  // lines still to write; the element they hold
  logic [31:0]       t_rows_q;
  logic [7:0]        t_sem_q;
  logic [31:0]       t_value_q;
  // Completion FIFO.
  pending_t pend_q [Depth];
  logic [$clog2(Depth):0]   pend_count_q;
  logic [$clog2(Depth)-1:0] pend_head_q;

  desc_t in_desc;  // the command processor checked every field before issuing the DMA
  assign in_desc = '{kind: dma_kind_e'(desc_i.dma.kind[1:0]), hbm_addr: desc_i.dma.hbm_addr,
                     stride: desc_i.dma.stride, line: LineAw'(desc_i.dma.line), rows: desc_i.dma.rows,
                     bytes: 16'(desc_i.dma.bytes), sem: desc_i.dma.sem, value: desc_i.dma.value};
  assign desc_ready_o = (fifo_count_q != 2'd2);

  // ---------------------------------------------------------------- issue stage
  logic cur_is_v2v, cur_last, pend_full, issue_fire, v2v_step, cur_done;
  assign cur_is_v2v = (cur_q.kind == DmaVmemToVmem);
  assign cur_last   = (cur_row_q + 32'd1 == cur_q.rows);
  assign pend_full  = (pend_count_q == ($clog2(Depth) + 1)'(Depth));
  // HBM requests of the current descriptor (its completion entry exists already).
  assign hbm_req_o = '{valid: cur_active_q && !cur_is_v2v, write: (cur_q.kind == DmaVmemToHbm),
                       addr: cur_q.hbm_addr + cur_row_q * cur_q.stride, bytes: cur_q.bytes};
  assign hbm_req_data_o = vmem_rdata_i;
  assign issue_fire     = hbm_req_o.valid && hbm_rsp_i.ready;
  // VMEM -> VMEM copies wait for earlier HBM transfers, then move a line per cycle.
  assign v2v_step = cur_active_q && cur_is_v2v && (pend_count_q == '0);
  assign cur_done = (issue_fire || v2v_step) && cur_last;
  assign vmem_raddr_o = cur_q.line + LineAw'(cur_row_q);

  // A new descriptor starts when the issue stage is free and, for HBM kinds, its
  // completion entry fits.
  desc_t next_desc;
  logic  start;
  assign next_desc = fifo_q[fifo_head_q];
  // Transfers take effect in order: one that reads VMEM waits while an earlier HBM -> VMEM
  // transfer still has to write lines it reads (it would see stale data).
  logic reads_pending;
  always_comb begin
    reads_pending = 1'b0;
    // an entry covers the lines its answers still have to write: [line, line + left)
    // (only looked at when a VMEM -> HBM transfer waits to start)
    for (int i = 0; i < Depth && fifo_count_q != '0 && next_desc.kind == DmaVmemToHbm; i++) begin
      automatic logic [$clog2(Depth)-1:0] slot = $clog2(Depth)'(pend_head_q + $clog2(Depth)'(i));
      if (($clog2(Depth) + 1)'(i) < pend_count_q && pend_q[slot].read &&
          ({1'b0, pend_q[slot].line} < {1'b0, next_desc.line} + (LineAw + 1)'(next_desc.rows)) &&
          ({1'b0, next_desc.line} < {1'b0, pend_q[slot].line} + (LineAw + 1)'(pend_q[slot].left)))
        reads_pending = 1'b1;
    end
  end
  assign start = (fifo_count_q != '0) && (!cur_active_q || cur_done) && !t_busy_q &&
                 ((next_desc.kind == DmaVmemToVmem) || !pend_full) &&
                 !((next_desc.kind == DmaVmemToHbm) && reads_pending) &&
                 !((next_desc.kind == DmaHbmToVmemT) && (pend_count_q != '0 || cur_active_q));

  // ---------------------------------------------------------------- answers
  pending_t head;
  logic     answer_last;
  assign head        = pend_q[pend_head_q];
  assign answer_last = hbm_rsp_i.valid && (head.left == 32'd1);

  logic [LineW-1:0] keep_mask;
  assign keep_mask = {LineW{1'b1}} >> (LineW - 8 * int'(head.bytes));

  always_comb begin
    vmem_we_o    = 1'b0;
    vmem_waddr_o = head.line;
    vmem_wdata_o = '0;
    if (hbm_rsp_i.valid && head.read) begin
      vmem_we_o    = 1'b1;
      vmem_wdata_o = hbm_rsp_data_i & keep_mask;  // zero beyond the bytes copied
    end else if (drain_q) begin
      vmem_we_o    = 1'b1;
      vmem_waddr_o = t_line_q;
      for (int r = 0; r < Cols; r++) begin
        if (32'(r) < t_rows_q) vmem_wdata_o[16 * r +: 16] = tbuf_q[r][16 * t_elem_q[$clog2(TLines)-1:0] +: 16];
      end
    end else if (v2v_step) begin
      vmem_we_o    = 1'b1;
      vmem_waddr_o = LineAw'(cur_q.hbm_addr) + LineAw'(cur_row_q);
      vmem_wdata_o = vmem_rdata_i;
    end
    sem_signal_o = 1'b0;
    sem_idx_o    = head.sem[4:0];
    sem_value_o  = head.value;
    if (answer_last && !head.tr && head.sem != SemNone) begin
      sem_signal_o = 1'b1;
    end else if (drain_q && t_left_q == 16'd1 && t_sem_q != SemNone) begin
      sem_signal_o = 1'b1;
      sem_idx_o    = t_sem_q[4:0];
      sem_value_o  = t_value_q;
    end else if (v2v_step && cur_last && cur_q.sem != SemNone) begin
      sem_signal_o = 1'b1;
      sem_idx_o    = cur_q.sem[4:0];
      sem_value_o  = cur_q.value;
    end
  end

  // ---------------------------------------------------------------- state
  logic pend_push, pend_pop;
  assign pend_push = start && (next_desc.kind != DmaVmemToVmem);
  assign pend_pop  = answer_last;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fifo_count_q <= '0;
      fifo_head_q  <= 1'b0;
      cur_active_q <= 1'b0;
      cur_row_q    <= '0;
      pend_count_q <= '0;
      pend_head_q  <= '0;
      t_busy_q     <= 1'b0;
      drain_q      <= 1'b0;
    end else begin
      // descriptor FIFO
      if (desc_valid_i && desc_ready_o) fifo_q[fifo_head_q ^ fifo_count_q[0]] <= in_desc;
      fifo_count_q <= fifo_count_q + 2'(desc_valid_i && desc_ready_o) - 2'(start);
      if (start) fifo_head_q <= ~fifo_head_q;
      // issue stage
      if (start) begin
        cur_active_q <= 1'b1;
        cur_q        <= next_desc;
        cur_row_q    <= '0;
      end else if (cur_done) begin
        cur_active_q <= 1'b0;
      end else if (issue_fire || v2v_step) begin
        cur_row_q <= cur_row_q + 32'd1;
      end
      // transposing DMA: a row into the buffer per answer, then the lines out
      if (start && next_desc.kind == DmaHbmToVmemT) begin
        t_busy_q  <= 1'b1;
        t_line_q  <= next_desc.line;
        t_left_q  <= next_desc.bytes >> 1;
        t_elem_q  <= '0;
        t_rows_q  <= next_desc.rows;
        t_sem_q   <= next_desc.sem;
        t_value_q <= next_desc.value;
      end
      if (hbm_rsp_i.valid && head.tr) begin
        tbuf_q[head.line[$clog2(Cols)-1:0]] <= hbm_rsp_data_i;
        if (answer_last) drain_q <= 1'b1;
      end
      if (drain_q) begin
        t_line_q <= t_line_q + LineAw'(1);
        t_elem_q <= t_elem_q + 16'd1;
        t_left_q <= t_left_q - 16'd1;
        if (t_left_q == 16'd1) begin
          drain_q  <= 1'b0;
          t_busy_q <= 1'b0;
        end
      end
      // completion FIFO
      if (hbm_rsp_i.valid && !answer_last) begin
        pend_q[pend_head_q].left <= head.left - 32'd1;
        pend_q[pend_head_q].line <= head.line + LineAw'(1);
      end
      if (pend_push) begin
        // the tail slot: head + count before this cycle's pop (a pop moves the head, not the tail)
        pend_q[$clog2(Depth)'(pend_head_q + pend_count_q[$clog2(Depth)-1:0])] <=
          '{tr: next_desc.kind == DmaHbmToVmemT, read: next_desc.kind == DmaHbmToVmem,
            line: next_desc.kind == DmaHbmToVmemT ? '0 : next_desc.line, left: next_desc.rows,
            bytes: next_desc.bytes, sem: next_desc.sem, value: next_desc.value};
      end
      if (pend_pop) pend_head_q <= pend_head_q + $clog2(Depth)'(1);
      pend_count_q <= pend_count_q + ($clog2(Depth) + 1)'(pend_push) - ($clog2(Depth) + 1)'(pend_pop);
      // invariants (docs/architecture.md, "Assertions")
      assert (!(desc_valid_i && desc_ready_o) || fifo_count_q != 2'd2)
        else $error("chip_dma: descriptor FIFO written when full");
      assert (!start || fifo_count_q != '0) else $error("chip_dma: descriptor FIFO read when empty");
      assert (!pend_push || !pend_full) else $error("chip_dma: completion FIFO written when full");
      assert (!hbm_rsp_i.valid || pend_count_q != '0) else $error("chip_dma: an HBM answer with no request pending");
    end
  end

  assign drained_o = (fifo_count_q == '0) && !cur_active_q && (pend_count_q == '0) && !t_busy_q;
  assign busy_o    = !drained_o;
endmodule
