// One in-order command queue of the chip's command processor (docs/isa.md): its command
// memory (written by the host), the program counter, decoding and checking, semaphore
// wait/signal, fences, and issue of DMA or MXU commands to their unit.
//
// A command that fails its checks stops the queue with an error code before anything is
// issued, so no unit ever sees an out-of-range command. The host gives the program's length
// with the start: running past it (no HALT) is an error, not a walk into stale memory. The
// host can stop the queue (abort) before its next command.
module chip_cmdq #(
  parameter bit          IsDma      = 1'b0,  // 1: the DMA queue, 0: the compute queue
  parameter int unsigned QueueDepth = 256,
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned VmemLines  = 1024,
  parameter int unsigned AccDepth   = 256,
  parameter int unsigned Mxus       = 1,     // MXU units of the core (the MXU field's range)
  parameter int unsigned Cores      = 1      // cores of a chip (the RDMA core field's range)
) (
  input  logic                          clk_i,
  input  logic                          rst_ni,
  // host: command memory writes and start
  input  logic                          host_we_i,
  input  logic [$clog2(QueueDepth)-1:0] host_addr_i,
  input  logic [chip_isa_pkg::CmdW-1:0] host_data_i,
  input  logic                          start_i,
  input  logic [$clog2(QueueDepth):0]   start_len_i,   // commands in the program, with start_i
  input  logic                          abort_i,       // stop before the next command (error ABORTED)
  input  logic [31:0]                   hbm_bytes_i,   // HBM size, for range checks
  input  logic [7:0]                    size_x_i,      // pod size, for remote DMA checks
  input  logic [7:0]                    size_y_i,
  // status
  output logic                          running_o,
  output logic                          halted_o,
  output logic [chip_isa_pkg::ErrBits-1:0] error_o,
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
  output chip_isa_pkg::cmd_u            issue_cmd_o,
  input  logic                          issue_ready_i,
  input  logic                          drained_i      // everything this queue issued is done
);
  import chip_isa_pkg::*;

  localparam int unsigned PcW = $clog2(QueueDepth);

  logic [CmdW-1:0] mem [QueueDepth];
  logic            mem_rsvd [QueueDepth];  // the command has a reserved bit set: decoded as it is written
  logic            running_q, halted_q;
  err_e            error_q;
  logic [PcW-1:0]  pc_q;
  logic [PcW:0]    len_q;  // the program's length

  // The reserved-bit check is made once, as the host writes a command, not every cycle the
  // command processor looks at it.
  always_ff @(posedge clk_i) begin
    if (host_we_i) begin
      mem[host_addr_i]      <= host_data_i;
      mem_rsvd[host_addr_i] <= cmd_reserved_set(host_data_i);
    end
  end

  // ---------------------------------------------------------------- decode and check
  cmd_u    cmd;  // the command at pc, seen as any command (chip_isa_pkg, from fw/isa.def)
  opcode_e op;
  err_e    err;
  assign cmd = mem[pc_q];
  assign op  = cmd.any.opcode;

  // A 32-bit operand widened for range arithmetic that cannot overflow.
  function automatic logic [63:0] w(logic [31:0] v);
    return {32'd0, v};
  endfunction

  // A semaphore field: an index, or SemNone where `none_ok`.
  function automatic logic bad_sem(logic [31:0] s, logic none_ok);
    return s >= 32'(NumSems) && !(none_ok && s == 32'(SemNone));
  endfunction

  // Evaluated only while the queue runs: an idle queue costs nothing here.
  always_comb begin
    err = ErrNone;
    if (!running_q) begin
      // idle: nothing to check
    end else if ({1'b0, pc_q} >= len_q) begin
      err = ErrEnd;                                      // past the program's last command
    end else if (!cmd_known(op)) begin
      err = ErrOpcode;                                   // not an opcode
    end else if (!cmd_allowed(op, IsDma ? QueueDma : QueueCompute)) begin
      err = ErrQueue;
    end else if (mem_rsvd[pc_q]) begin
      err = ErrOpcode;                                   // a reserved bit set
    end else begin
      unique case (op)
        OpSemWait, OpSemSignal: if (bad_sem(32'(cmd.sem_wait.sem), 1'b0)) err = ErrSem;
        OpDma: begin
          if (bad_sem(32'(cmd.dma.sem), 1'b1)) err = ErrSem;
          else if (cmd.dma.rows == 0 || cmd.dma.bytes == 0 || cmd.dma.bytes[1:0] != 2'b00 ||
                   w(cmd.dma.bytes) > 64'(4 * Cols) || cmd.dma.kind >= 32'(DmaKinds) ||
                   (cmd.dma.kind == 32'(DmaHbmToVmemT) && w(cmd.dma.rows) > 64'(Cols))) err = ErrSize;
          // a transposing DMA writes bytes/2 lines (one per element of a row), the others rows
          else if (w(cmd.dma.line) + (cmd.dma.kind == 32'(DmaHbmToVmemT) ? w(cmd.dma.bytes) >> 1 : w(cmd.dma.rows)) >
                   64'(VmemLines)) err = ErrVmem;
          else if (cmd.dma.kind == 32'(DmaVmemToVmem) &&
                   w(cmd.dma.hbm_addr) + w(cmd.dma.rows) > 64'(VmemLines)) err = ErrVmem;
          else if (cmd.dma.kind != 32'(DmaVmemToVmem) &&
                   w(cmd.dma.hbm_addr) + (w(cmd.dma.rows) - 1) * w(cmd.dma.stride) + w(cmd.dma.bytes) >
                   w(hbm_bytes_i))
            err = ErrHbm;
        end
        OpRdma: begin
          if (bad_sem(32'(cmd.rdma.remote_sem), 1'b1) || bad_sem(cmd.rdma.local_sem, 1'b1)) err = ErrSem;
          else if (cmd.rdma.rows == 0) err = ErrSize;
          else if (w(cmd.rdma.dst) + w(cmd.rdma.rows) > 64'(VmemLines) ||
                   w(cmd.rdma.src) + w(cmd.rdma.rows) > 64'(VmemLines)) err = ErrVmem;
          else if (cmd.rdma.x >= size_x_i || cmd.rdma.y >= size_y_i || 32'(cmd.rdma.core) >= Cores ||
                   cmd.rdma.dest_reserved != '0) err = ErrRemote;
        end
        OpMxuLoad: begin
          if (32'(cmd.mxu_load.mxu) >= Mxus) err = ErrMxu;
          else if (w(cmd.mxu_load.line) + 64'(Rows) > 64'(VmemLines)) err = ErrVmem;
        end
        OpMxuMatmul: begin
          if (32'(cmd.mxu_matmul.mxu) >= Mxus) err = ErrMxu;
          else if (cmd.mxu_matmul.rows == 0) err = ErrSize;
          else if (w(cmd.mxu_matmul.line) + w(cmd.mxu_matmul.rows) > 64'(VmemLines)) err = ErrVmem;
          else if (w(cmd.mxu_matmul.acc_row) + w(cmd.mxu_matmul.rows) > 64'(AccDepth)) err = ErrAcc;
        end
        OpVec: begin
          // b_repeat (b is one line for every row) is for the binary operations only
          if (cmd.vec.op >= 32'(VecOps) || (cmd.vec.b_repeat && !vec_binary(cmd.vec.op[VecOpBits-1:0])))
            err = ErrOpcode;
          else if (cmd.vec.rows == 0) err = ErrSize;
          else if (w(cmd.vec.a) + w(cmd.vec.rows) > 64'(VmemLines) ||
                   (vec_binary(cmd.vec.op[VecOpBits-1:0]) &&
                    w(cmd.vec.b) + (cmd.vec.b_repeat ? 64'd1 : w(cmd.vec.rows)) > 64'(VmemLines)) ||
                   w(cmd.vec.dst) + (vec_reduces_lines(cmd.vec.op[VecOpBits-1:0]) ? 64'd1 : w(cmd.vec.rows)) >
                       64'(VmemLines)) err = ErrVmem;
        end
        OpMxuStore: begin
          if (32'(cmd.mxu_store.mxu) >= Mxus) err = ErrMxu;
          else if (cmd.mxu_store.rows == 0) err = ErrSize;
          else if (w(cmd.mxu_store.acc_row) + w(cmd.mxu_store.rows) > 64'(AccDepth)) err = ErrAcc;
          else if (w(cmd.mxu_store.line) + w(cmd.mxu_store.rows) > 64'(VmemLines)) err = ErrVmem;
        end
        default: ;                                       // HALT, FENCE: nothing to check
      endcase
    end
  end

  // ---------------------------------------------------------------- execute
  logic is_unit_op, advance;
  assign is_unit_op    = (op == OpDma) || (op == OpMxuLoad) || (op == OpMxuMatmul) || (op == OpMxuStore) ||
                         (op == OpVec) || (op == OpRdma);
  assign issue_valid_o = running_q && (err == ErrNone) && is_unit_op;
  assign issue_cmd_o   = cmd;
  assign sem_idx_o     = cmd.sem_wait.sem[4:0];
  assign sem_value_o   = cmd.sem_wait.value;
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
      len_q     <= '0;
    end else if (abort_i) begin
      if (running_q) begin
        running_q <= 1'b0;
        error_q   <= ErrAborted;
      end
    end else if (start_i) begin
      running_q <= 1'b1;
      halted_q  <= 1'b0;
      error_q   <= ErrNone;
      pc_q      <= '0;
      len_q     <= start_len_i;
    end else if (running_q) begin
      if (err != ErrNone) begin
        running_q <= 1'b0;
        error_q   <= err;
      end else if (op == OpHalt) begin
        running_q <= 1'b0;
        halted_q  <= 1'b1;
      end else if (advance) begin
        if (pc_q == PcW'(QueueDepth - 1)) begin
          running_q <= 1'b0;        // past the end of the command memory (and so of the program)
          error_q   <= ErrEnd;
        end else begin
          pc_q <= pc_q + PcW'(1);
        end
      end
    end
  end

  // invariants (docs/architecture.md, "Assertions"): the queue looks only at commands of its
  // program, and hands a semaphore command on only with its index in range
  // (clocked like the state, reset included: a synchronous use of rst_ni here would mix the
  // two kinds of reset on one net, SYNCASYNCNET)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      assert (!running_q || err == ErrEnd || {1'b0, pc_q} < len_q)
        else $error("chip_cmdq: pc %0d outside the program (%0d commands)", pc_q, len_q);
      assert (!(sem_wait_o || sem_signal_o) || 32'(cmd.sem_wait.sem) < NumSems)
        else $error("chip_cmdq: semaphore %0d out of range", cmd.sem_wait.sem);
    end
  end

  assign running_o = running_q;
  assign halted_o  = halted_q;
  assign error_o   = error_q;
  assign pc_o      = pc_q;
  assign opcode_o  = op;
endmodule
