// Remote DMA over the torus (docs/isa.md, opcode RDMA): VMEM lines of this chip to VMEM
// lines of another chip, one packet per line through one of the router's local ports (the
// chip has four of these engines, one per local port). Up to FifoDepth descriptors wait
// behind the one being sent, so the DMA queue can keep the other engines fed. Each line
// adds the remote value to a semaphore of the destination chip when it has been written
// there (packets may overtake each other on different VCs, so completion is counted, not
// flagged: a transfer of n lines has landed when the semaphore has gained n x value), and
// optionally a local semaphore gets a value once the last line has left.
//
// Packet of up to PktLines consecutive lines: head flit (destination x, y, length), a header
// flit (first destination line [23:0], remote semaphore [28:24], signal-on-arrival [29],
// destination core [31:30], value [63:32]), then each line's data, 64 bits per flit, low bits first; the last data
// flit is the tail. The receiver writes each line (and adds the value to the semaphore)
// as its last flit arrives. Two header flits per PktLines lines keep the payload share
// high when lines are short (16x16: 8 lines of 8 flits, 97%; one line would be 80%).
// Sending uses VC 0 of the router's local input port under its credits; receiving takes
// every flit the router ejects (reassembling per VC) and returns its credit the next cycle.
// The engine is the chip's, shared by its cores: each descriptor carries the core that issued
// it (whose VMEM it reads and whose local semaphore it signals), each packet the core it is
// for (whose VMEM and semaphore it lands in).
module chip_rdma #(
  parameter int unsigned Cols      = 4,
  parameter int unsigned VmemLines = 1024,
  parameter int unsigned NumVcs    = 2,
  parameter int unsigned FifoDepth = 4,   // a power of two
  localparam int unsigned LineW    = 32 * Cols,
  localparam int unsigned WIdxW    = (Cols > 2) ? $clog2(Cols / 2) : 1,  // word of a line
  localparam int unsigned VcW      = $clog2(NumVcs),
  localparam int unsigned FlitW    = 64 + VcW + 3
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic [3:0]                   buf_depth_i,   // the router's input buffer depth
  // descriptors from the DMA queue
  input  logic                         desc_valid_i,
  output logic                         desc_ready_o,
  input  chip_isa_pkg::cmd_u           desc_i,
  input  logic [1:0]                   desc_core_i,   // the core that issued it
  output logic                         busy_o,        // sending or receiving
  output logic                         send_busy_o,   // sending (the DMA queue's drained)
  // VMEM, one 64-bit word at a time: a read port (sending: the word of the line going out)
  // and a write port (receiving: each word lands as its flit arrives), so a wide line is
  // never copied, and an idle engine moves nothing
  output logic [$clog2(VmemLines)-1:0] vmem_raddr_o,
  output logic [WIdxW-1:0]             vmem_rword_o,
  input  logic [63:0]                  vmem_rdata_i,
  output logic                         vmem_we_o,
  output logic [$clog2(VmemLines)-1:0] vmem_waddr_o,
  output logic [WIdxW-1:0]             vmem_wword_o,
  output logic [63:0]                  vmem_wdata_o,
  output logic [1:0]                   vmem_rcore_o,  // the core whose VMEM is read (sending)
  output logic [1:0]                   vmem_wcore_o,  // the core whose VMEM is written and signalled (receiving)
  // the router's local port
  output logic [FlitW-1:0]             inj_flit_o,
  input  logic                         inj_credit_i,  // a credit for local input VC 0
  input  logic [FlitW-1:0]             ej_flit_i,
  output logic [NumVcs-1:0]            ej_credit_o,
  // semaphores: local (sending done) and remote arrivals (this chip as destination)
  output logic                         local_signal_o,
  output logic [4:0]                   local_sem_o,
  output logic [31:0]                  local_value_o,
  output logic                         remote_signal_o,
  output logic [4:0]                   remote_sem_o,
  output logic [31:0]                  remote_value_o
);
  import chip_isa_pkg::*;

  localparam int unsigned LineAw = $clog2(VmemLines);
  localparam int unsigned Words  = LineW / 64;        // data flits per line
  // lines per packet (fw/isa.def; the C side: isa_rdma_packet_lines)
  localparam int unsigned PktLines =
      (Words * RdmaPacketLines + RdmaHeaderFlits <= RdmaMaxPacketFlits) ? RdmaPacketLines :
      (Words * RdmaShortPacketLines + RdmaHeaderFlits <= RdmaMaxPacketFlits) ? RdmaShortPacketLines : 1;
  localparam int unsigned MaxLen   = PktLines * Words + RdmaHeaderFlits;   // flits in a full packet
  localparam int unsigned FIdxW    = $clog2(MaxLen + 1);

  typedef struct packed {
    logic [7:0]        x, y;
    logic [LineAw-1:0] dst, src;
    logic [31:0]       rows;
    logic [7:0]        rsem, lsem;
    logic [31:0]       rvalue, lvalue;
    logic [1:0]        core, dcore;  // the issuing core, the destination core
  } rdma_t;

  // ---------------------------------------------------------------- sending
  localparam int unsigned FAw = $clog2(FifoDepth);
  rdma_t       fifo_q [FifoDepth];
  rdma_t       cur_q;
  logic [FAw-1:0] fifo_head_q;
  logic [FAw:0]   fifo_count_q;
  logic        cur_active_q;
  logic [31:0] row_q;              // first line of the packet being sent
  logic [FIdxW-1:0] flit_q;         // flit of that packet
  logic [3:0]  credits_q;

  rdma_t in_desc;  // the command processor checked every field (and the engine field picked this engine)
  assign in_desc = '{x: desc_i.rdma.x, y: desc_i.rdma.y, dst: LineAw'(desc_i.rdma.dst),
                     src: LineAw'(desc_i.rdma.src), rows: desc_i.rdma.rows, rsem: desc_i.rdma.remote_sem,
                     rvalue: desc_i.rdma.remote_value, lsem: desc_i.rdma.local_sem[7:0],
                     lvalue: desc_i.rdma.local_value, core: desc_core_i, dcore: desc_i.rdma.core};
  assign desc_ready_o = (fifo_count_q != (FAw + 1)'(FifoDepth));

  logic send, last_flit, last_pkt;
  logic [31:0] pkt_lines;           // lines in the packet being sent
  logic [FIdxW-1:0] pkt_len;        // its flits
  logic [31:0] data_idx;            // data flit index within the packet
  assign pkt_lines = ((cur_q.rows - row_q) < 32'(PktLines)) ? cur_q.rows - row_q : 32'(PktLines);
  assign pkt_len   = FIdxW'(pkt_lines * Words + RdmaHeaderFlits);
  assign send      = cur_active_q && (credits_q != 4'd0);
  assign last_flit = (flit_q == pkt_len - FIdxW'(1));
  assign last_pkt  = (row_q + pkt_lines == cur_q.rows);
  assign data_idx  = 32'(flit_q) - 32'(RdmaHeaderFlits);
  // the line whose data is going out (Words is a power of two)
  assign vmem_raddr_o = cur_q.src + LineAw'(row_q) + LineAw'(data_idx / Words);
  assign vmem_rword_o = WIdxW'(data_idx % Words);
  logic [LineAw-1:0] dst_line;
  assign dst_line = cur_q.dst + LineAw'(row_q);

  always_comb begin
    logic [63:0] data;
    data = '0;
    if (flit_q == '0) begin
      data = {40'd0, 8'(pkt_len), cur_q.y, cur_q.x};
    end else if (flit_q == FIdxW'(1)) begin
      data = {(cur_q.rsem != SemNone) ? cur_q.rvalue : 32'd0, cur_q.dcore,
              cur_q.rsem != SemNone, cur_q.rsem[4:0], 24'(dst_line)};
    end else begin
      // one indexed select, not a compare per word: this runs every cycle
      data = vmem_rdata_i;
    end
    inj_flit_o = {send, flit_q == '0, last_flit, VcW'(0), data};
  end

  logic start, push;
  assign start = (fifo_count_q != '0) && !cur_active_q;
  assign push  = desc_valid_i && desc_ready_o;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fifo_head_q  <= '0;
      fifo_count_q <= '0;
      cur_active_q <= 1'b0;
      row_q        <= '0;
      flit_q       <= '0;
      credits_q    <= buf_depth_i;
    end else begin
      if (push) fifo_q[FAw'(fifo_head_q + fifo_count_q[FAw-1:0])] <= in_desc;
      fifo_count_q <= fifo_count_q + (FAw + 1)'(push) - (FAw + 1)'(start);
      if (start) begin
        cur_q        <= fifo_q[fifo_head_q];
        fifo_head_q  <= fifo_head_q + FAw'(1);
        cur_active_q <= 1'b1;
        row_q        <= '0;
        flit_q       <= '0;
      end else if (send) begin
        if (!last_flit) begin
          flit_q <= flit_q + FIdxW'(1);
        end else begin
          flit_q <= '0;
          if (last_pkt) cur_active_q <= 1'b0;
          else row_q <= row_q + pkt_lines;
        end
      end
      credits_q <= credits_q - 4'(send) + 4'(inj_credit_i);
      // invariants (docs/architecture.md, "Assertions")
      assert (!send || credits_q != '0) else $error("chip_rdma: a flit sent without a credit");
      assert ({1'b0, credits_q} - 5'(send) + 5'(inj_credit_i) <= 5'(buf_depth_i))
        else $error("chip_rdma: credits above the buffer depth %0d", buf_depth_i);
      assert (!push || fifo_count_q != (FAw + 1)'(FifoDepth)) else $error("chip_rdma: descriptor FIFO written when full");
      assert (!start || fifo_count_q != '0) else $error("chip_rdma: descriptor FIFO read when empty");
    end
  end
  assign local_signal_o = send && last_flit && last_pkt && (cur_q.lsem != SemNone);
  assign local_sem_o    = cur_q.lsem[4:0];
  assign vmem_rcore_o   = cur_q.core;  // (the local semaphore's core too)
  assign local_value_o  = cur_q.lvalue;

  // ---------------------------------------------------------------- receiving
  logic [LineAw-1:0] rx_line_q  [NumVcs];  // the packet's first line
  logic [LineAw-1:0] rx_lidx_q  [NumVcs];  // the line being assembled, from the first
  logic [WIdxW-1:0]  rx_word_q  [NumVcs];  // its next word
  logic [4:0]        rx_sem_q   [NumVcs];
  logic              rx_sig_q   [NumVcs];
  logic [31:0]       rx_value_q [NumVcs];
  logic              rx_hdr_q   [NumVcs];  // the next flit is the header
  logic [1:0]        rx_core_q  [NumVcs];  // the core the packet is for
  logic              rx_busy_q  [NumVcs];
  logic [NumVcs-1:0] credit_q;

  logic              ej_valid, ej_head, ej_tail;
  logic [VcW-1:0]    ej_vc;
  logic [63:0]       ej_data;
  assign ej_valid = ej_flit_i[FlitW-1];
  assign ej_head  = ej_flit_i[FlitW-2];
  assign ej_tail  = ej_flit_i[FlitW-3];
  assign ej_vc    = ej_flit_i[64 +: VcW];
  assign ej_data  = ej_flit_i[63:0];

  // One assembler per VC. The loop over VCs is unrolled, so every register access has a
  // constant index.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      credit_q <= '0;
      for (int v = 0; v < NumVcs; v++) begin
        rx_hdr_q[v]  <= 1'b0;
        rx_busy_q[v] <= 1'b0;
        rx_word_q[v] <= '0;
        rx_lidx_q[v] <= '0;
      end
    end else begin
      credit_q <= '0;
      for (int v = 0; v < NumVcs; v++) begin
        if (ej_valid && ej_vc == VcW'(v)) begin
          credit_q[v] <= 1'b1;
          if (ej_head) begin
            rx_hdr_q[v]  <= 1'b1;
            rx_busy_q[v] <= 1'b1;
            rx_word_q[v] <= '0;
            rx_lidx_q[v] <= '0;
          end else if (rx_hdr_q[v]) begin
            rx_hdr_q[v]   <= 1'b0;
            rx_line_q[v]  <= LineAw'(ej_data[23:0]);
            rx_sem_q[v]   <= ej_data[28:24];
            rx_sig_q[v]   <= ej_data[29];
            rx_value_q[v] <= ej_data[63:32];
            rx_core_q[v]  <= ej_data[31:30];
          end else begin
            if (int'(rx_word_q[v]) == Words - 1) begin  // the line is complete
              rx_word_q[v] <= '0;
              rx_lidx_q[v] <= rx_lidx_q[v] + LineAw'(1);
            end else begin
              rx_word_q[v] <= rx_word_q[v] + WIdxW'(1);
            end
            if (ej_tail) rx_busy_q[v] <= 1'b0;
          end
        end
      end
    end
  end

  // Every data flit writes its word; a line's last word completes it and adds the value to
  // the semaphore.
  logic line_done;
  always_comb begin
    vmem_we_o    = ej_valid && !ej_head && !rx_hdr_q[ej_vc];
    vmem_waddr_o = rx_line_q[ej_vc] + rx_lidx_q[ej_vc];
    vmem_wword_o = rx_word_q[ej_vc];
    vmem_wdata_o = ej_data;
    line_done    = vmem_we_o && (int'(rx_word_q[ej_vc]) == Words - 1);
    remote_signal_o = line_done && rx_sig_q[ej_vc];
    remote_sem_o    = rx_sem_q[ej_vc];
    remote_value_o  = rx_value_q[ej_vc];
    vmem_wcore_o    = rx_core_q[ej_vc];
  end
  assign ej_credit_o = credit_q;

  logic rx_any;
  always_comb begin
    rx_any = 1'b0;
    for (int v = 0; v < NumVcs; v++) rx_any = rx_any || rx_busy_q[v];
  end
  assign send_busy_o = (fifo_count_q != '0) || cur_active_q;
  assign busy_o      = send_busy_o || rx_any;
endmodule
