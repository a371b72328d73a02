// One in-order command queue of the chip's command processor (docs/isa.md): its command
// memory (written by the host), the program counter, decoding and checking, semaphore
// wait/signal, fences, and issue of DMA or MXU commands to their unit.
//
// A command that fails its checks stops the queue with an error code before anything is
// issued, so no unit ever sees an out-of-range command.
module chip_cmdq #(
  parameter bit          IsDma      = 1'b0,  // 1: the DMA queue, 0: the compute queue
  parameter int unsigned QueueDepth = 256,
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned VmemLines  = 1024,
  parameter int unsigned AccDepth   = 256
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // host: command memory writes and start
  input  logic                          host_we_i,
  input  logic [$clog2(QueueDepth)-1:0] host_addr_i,
  input  logic [chip_pkg::CmdW-1:0]     host_data_i,
  input  logic                          start_i,
  input  logic [31:0]                   hbm_bytes_i,   // HBM size, for range checks
  input  logic [7:0]                    size_x_i,      // pod size, for remote DMA checks
  input  logic [7:0]                    size_y_i,
  // status
  output logic                          running_o,
  output logic                          halted_o,
  output logic [3:0]                    error_o,
  output logic [$clog2(QueueDepth)-1:0] pc_o,
  output logic [7:0]                    opcode_o,      // the command at pc (waveforms, reports)
  // semaphores
  output logic [4:0]                    sem_idx_o,
  output logic                          sem_wait_o,    // wait for sem >= sem_value_o ...
  input  logic                          sem_grant_i,   // ... granted: subtracted this cycle
  output logic                          sem_signal_o,  // SEM_SIGNAL taken this cycle (see signal_ready_i)
  input  logic                          signal_ready_i,// the signal can be taken: fired now, or queued as a release fence
  output logic [31:0]                   sem_value_o,
  // units
  output logic                          issue_valid_o,
  output logic [chip_pkg::CmdW-1:0]     issue_cmd_o,
  input  logic                          issue_ready_i,
  input  logic                          drained_i      // everything this queue issued is done
);
  import chip_pkg::*;

  localparam int unsigned PcW = $clog2(QueueDepth);

  logic [CmdW-1:0] mem [QueueDepth];
  logic            running_q, halted_q;
  logic [3:0]      error_q;
  logic [PcW-1:0]  pc_q;

  always_ff @(posedge clk_i) begin
    if (host_we_i) mem[host_addr_i] <= host_data_i;
  end

  // ---------------------------------------------------------------- decode and check
  logic [CmdW-1:0] cmd;
  logic [7:0]      op, sem;
  logic [3:0]      err;
  logic [63:0]     w1, w2, w3, w4, w5, w6, w7;  // operands, widened for range arithmetic
  assign cmd = mem[pc_q];
  assign op  = cmd[7:0];
  assign sem = cmd[15:8];
  assign w1  = {32'd0, word(cmd, 1)};
  assign w2  = {32'd0, word(cmd, 2)};
  assign w3  = {32'd0, word(cmd, 3)};
  assign w4  = {32'd0, word(cmd, 4)};
  assign w5  = {32'd0, word(cmd, 5)};
  assign w6  = {32'd0, word(cmd, 6)};
  assign w7  = {32'd0, word(cmd, 7)};

  always_comb begin
    err = ErrNone;
    unique case (op)
      OpHalt, OpFence: ;
      OpSemWait, OpSemSignal: if (sem >= 8'(NumSems)) err = ErrSem;
      OpDma: begin
        if (!IsDma) err = ErrQueue;
        else if (sem >= 8'(NumSems) && sem != SemNone) err = ErrSem;
        else if (w6 == 0 || w7 == 0 || w7[1:0] != 2'b00 || w7 > 64'(4 * Cols) || w2 > 2) err = ErrSize;
        else if (w5 + w6 > 64'(VmemLines)) err = ErrVmem;
        else if (w2 == 64'(DmaV2V) && w3 + w6 > 64'(VmemLines)) err = ErrVmem;
        else if (w2 != 64'(DmaV2V) && (w3 + (w6 - 1) * w4 + w7 > {32'd0, hbm_bytes_i})) err = ErrHbm;
      end
      OpRdma: begin
        if (!IsDma) err = ErrQueue;
        else if ((sem >= 8'(NumSems) && sem != SemNone) || (w6 >= 64'(NumSems) && w6 != 64'(SemNone))) err = ErrSem;
        else if (w5 == 0) err = ErrSize;
        else if (w3 + w5 > 64'(VmemLines) || w4 + w5 > 64'(VmemLines)) err = ErrVmem;
        // w2: x [7:0], y [15:8], remote-DMA engine [17:16]
        else if (w2[7:0] >= size_x_i || w2[15:8] >= size_y_i || w2[63:18] != 0) err = ErrRemote;
      end
      OpMxuLoad: begin
        if (IsDma) err = ErrQueue;
        else if (w2 + 64'(Rows) > 64'(VmemLines)) err = ErrVmem;
      end
      OpMxuMatmul: begin
        if (IsDma) err = ErrQueue;
        else if (w3 == 0) err = ErrSize;
        else if (w2 + w3 > 64'(VmemLines)) err = ErrVmem;
        else if (w4 + w3 > 64'(AccDepth)) err = ErrAcc;
      end
      OpVec: begin
        if (IsDma) err = ErrQueue;
        else if (w1 >= 64'(VecOps)) err = ErrOpcode;
        else if (w5 == 0) err = ErrSize;
        else if (w2 + w5 > 64'(VmemLines) || w3 + w5 > 64'(VmemLines) || w4 + w5 > 64'(VmemLines)) err = ErrVmem;
      end
      OpMxuStore: begin
        if (IsDma) err = ErrQueue;
        else if (w3 == 0) err = ErrSize;
        else if (w2 + w3 > 64'(AccDepth)) err = ErrAcc;
        else if (w4 + w3 > 64'(VmemLines)) err = ErrVmem;
      end
      default: err = ErrOpcode;
    endcase
  end

  // ---------------------------------------------------------------- execute
  logic is_unit_op, advance;
  assign is_unit_op    = (op == OpDma) || (op == OpMxuLoad) || (op == OpMxuMatmul) || (op == OpMxuStore) ||
                         (op == OpVec) || (op == OpRdma);
  assign issue_valid_o = running_q && (err == ErrNone) && is_unit_op;
  assign issue_cmd_o   = cmd;
  assign sem_idx_o     = sem[4:0];
  assign sem_value_o   = word(cmd, 1);
  assign sem_wait_o    = running_q && (err == ErrNone) && (op == OpSemWait);
  assign sem_signal_o  = running_q && (err == ErrNone) && (op == OpSemSignal) && signal_ready_i;

  always_comb begin
    advance = 1'b0;
    if (running_q && err == ErrNone) begin
      unique case (op)
        OpFence:     advance = drained_i;
        OpSemWait:   advance = sem_grant_i;
        OpSemSignal: advance = signal_ready_i;
        OpHalt:      advance = 1'b0;
        default:     advance = issue_ready_i;  // unit commands
      endcase
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      running_q <= 1'b0;
      halted_q  <= 1'b0;
      error_q   <= ErrNone;
      pc_q      <= '0;
    end else if (start_i) begin
      running_q <= 1'b1;
      halted_q  <= 1'b0;
      error_q   <= ErrNone;
      pc_q      <= '0;
    end else if (running_q) begin
      if (err != ErrNone) begin
        running_q <= 1'b0;
        error_q   <= err;
      end else if (op == OpHalt) begin
        running_q <= 1'b0;
        halted_q  <= 1'b1;
      end else if (advance) begin
        if (pc_q == PcW'(QueueDepth - 1)) begin
          running_q <= 1'b0;        // ran off the end of the command memory
          error_q   <= ErrOpcode;
        end else begin
          pc_q <= pc_q + PcW'(1);
        end
      end
    end
  end

  assign running_o = running_q;
  assign halted_o  = halted_q;
  assign error_o   = error_q;
  assign pc_o      = pc_q;
  assign opcode_o  = op;
endmodule
