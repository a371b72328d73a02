// One core of the chip (docs/isa.md, "Cores"): its command processor with a compute and a
// DMA queue, its bank of hardware semaphores, its VMEM, its DMA engine (through the chip's
// shared HBM port), its Mxus MXU units (each with its weights, accumulator and VMEM ports,
// named by the MXU field of MXU_LOAD, MXU_MATMUL and MXU_STORE) and its vector unit. The
// router and the remote-DMA engines are the chip's (chip_top): the core hands them its
// RDMAs and lends them word ports on its VMEM and its semaphores.
module chip_core #(
  parameter int unsigned Mxus       = 1,     // MXU units of the core
  parameter int unsigned Cores      = 1,     // cores of the chip (the RDMA core field's range)
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned AccDepth   = 256,
  parameter int unsigned VmemLines  = 1024,
  parameter int unsigned QueueDepth = 256,
  localparam int unsigned LineW     = 32 * Cols,
  localparam int unsigned LineAw    = $clog2(VmemLines),
  localparam int unsigned QAw       = $clog2(QueueDepth),
  localparam int unsigned NumRdma   = chip_isa_pkg::NumRdmaEngines,
  localparam int unsigned WIdxW     = (Cols > 2) ? $clog2(Cols / 2) : 1,  // 64-bit word of a line
  localparam int unsigned NumQueues = chip_isa_pkg::NumQueues  // the compute queue and the DMA queue
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // host: programs, start, HBM size, pod size
  input  logic                   host_we_i,
  input  logic                   host_queue_i,     // 0 compute, 1 DMA
  input  logic [QAw-1:0]         host_addr_i,
  input  logic [chip_isa_pkg::CmdW-1:0] host_data_i,
  input  logic [NumQueues-1:0]   start_i,
  input  logic [NumQueues*(QAw+1)-1:0] start_len_i,
  input  logic [NumQueues-1:0]   abort_i,
  input  logic [31:0]            hbm_bytes_i,
  input  logic [7:0]             size_x_i,
  input  logic [7:0]             size_y_i,
  output logic [NumQueues-1:0]   q_running_o,
  output logic [NumQueues-1:0]   q_halted_o,
  output logic [NumQueues*chip_isa_pkg::ErrBits-1:0] q_error_o,
  output logic [NumQueues*QAw-1:0] q_pc_o,
  output logic [NumQueues*8-1:0] q_opcode_o,
  input  logic [4:0]             sem_rd_idx_i,
  output logic [31:0]            sem_rd_value_o,
  // the DMA engine's HBM port (chip_dma's; chip_top gives each core a port of its own)
  output chip_obs_pkg::hbm_req_t hbm_req_o,
  output logic [LineW-1:0]       hbm_req_data_o,
  input  chip_obs_pkg::hbm_rsp_t hbm_rsp_i,
  input  logic [LineW-1:0]       hbm_rsp_data_i,
  // RDMA commands to the chip's remote-DMA engines, and what the engines do for this core
  output logic                   rdma_valid_o,
  output chip_isa_pkg::cmd_u     rdma_cmd_o,
  input  logic                   rdma_ready_i,      // the engine the RDMA names takes it
  input  logic                   rdma_send_busy_i,  // an engine is sending
  input  logic [NumRdma-1:0]     rdma_rd_en_i,      // engine e reads this core's VMEM
  input  logic [NumRdma*LineAw-1:0] rdma_raddr_i,
  input  logic [NumRdma*WIdxW-1:0] rdma_rword_i,
  output logic [NumRdma*64-1:0]  rdma_rdata_o,
  input  logic [NumRdma-1:0]     rdma_we_i,         // engine e writes a word of this core's VMEM
  input  logic [NumRdma*LineAw-1:0] rdma_waddr_i,
  input  logic [NumRdma*WIdxW-1:0] rdma_wword_i,
  input  logic [NumRdma*64-1:0]  rdma_wdata_i,
  input  logic [NumRdma-1:0]     rdma_lsig_i,       // engine e adds to this core's semaphores
  input  logic [NumRdma*5-1:0]   rdma_lsem_i,
  input  logic [NumRdma*32-1:0]  rdma_lval_i,
  input  logic [NumRdma-1:0]     rdma_rsig_i,
  input  logic [NumRdma*5-1:0]   rdma_rsem_i,
  input  logic [NumRdma*32-1:0]  rdma_rval_i,
  // counters (the MXU's summed over the MXUs)
  output chip_obs_pkg::counters_t cnt_o,
  output logic                   mxu_error_o,
  output logic                   idle_o,            // no queue running, no unit of the core busy
  // visible events (chip_top's obs_* ports, for this core)
  output logic [NumSems*32-1:0]  obs_sems_o,
  output logic [2+Mxus-1:0]      obs_vmem_we_o,
  output logic [(2+Mxus)*32-1:0] obs_vmem_waddr_o,
  output logic [(2+Mxus)*LineW-1:0] obs_vmem_wdata_o,
  output logic [(6*Mxus+2)*32-1:0] obs_progress_o,
  output logic [NumQueues-1:0]   obs_issue_o,
  output chip_obs_pkg::busy_t    obs_busy_o,        // (the remote-DMA fields 0: chip_top's)
  output logic [Mxus-1:0]        obs_mxu_busy_o,
  output logic [Mxus-1:0]        obs_mxu_drained_o,
  output logic [Mxus-1:0]        obs_acc_we_o,
  output logic [Mxus*32-1:0]     obs_acc_waddr_o
);
  import chip_isa_pkg::*;

  // ---------------------------------------------------------------- VMEM
  logic [$clog2(VmemLines)-1:0] vec_araddr, vec_braddr, vec_waddr;
  logic [LineW-1:0]  vec_wdata;
  logic              vec_we;
  // the remote-DMA engines' word ports, for this core (chip_top qualified them)
  logic [$clog2(VmemLines)-1:0] rdma_raddr [NumRdma];
  logic [$clog2(VmemLines)-1:0] rdma_waddr [NumRdma];
  logic [WIdxW-1:0]  rdma_rword [NumRdma];
  logic [WIdxW-1:0]  rdma_wword [NumRdma];
  logic [63:0]       rdma_wdata [NumRdma];
  logic [63:0]       rdma_word [NumRdma];
  logic              rdma_we [NumRdma];
  logic              rdma_lsig [NumRdma];
  logic              rdma_rsig [NumRdma];
  logic [4:0]        rdma_lsem [NumRdma];
  logic [4:0]        rdma_rsem [NumRdma];
  logic [31:0]       rdma_lval [NumRdma];
  logic [31:0]       rdma_rval [NumRdma];
  always_comb begin
    for (int e = 0; e < NumRdma; e++) begin
      rdma_raddr[e] = rdma_raddr_i[LineAw * e +: LineAw];
      rdma_rword[e] = rdma_rword_i[WIdxW * e +: WIdxW];
      rdma_we[e]    = rdma_we_i[e];
      rdma_waddr[e] = rdma_waddr_i[LineAw * e +: LineAw];
      rdma_wword[e] = rdma_wword_i[WIdxW * e +: WIdxW];
      rdma_wdata[e] = rdma_wdata_i[64 * e +: 64];
      rdma_lsig[e]  = rdma_lsig_i[e];
      rdma_lsem[e]  = rdma_lsem_i[5 * e +: 5];
      rdma_lval[e]  = rdma_lval_i[32 * e +: 32];
      rdma_rsig[e]  = rdma_rsig_i[e];
      rdma_rsem[e]  = rdma_rsem_i[5 * e +: 5];
      rdma_rval[e]  = rdma_rval_i[32 * e +: 32];
      rdma_rdata_o[64 * e +: 64] = rdma_word[e];
    end
  end
  logic [LineW-1:0]  vmem [VmemLines];
  logic [LineAw-1:0] dma_raddr, dma_waddr;
  logic [LineAw-1:0] w_raddr [Mxus];
  logic [LineAw-1:0] a_raddr [Mxus];
  logic [LineAw-1:0] st_waddr [Mxus];
  logic [LineW-1:0]  dma_wdata;
  logic [LineW-1:0]  st_wdata [Mxus];
  logic              dma_we;
  logic [Mxus-1:0]   st_we;
  logic [Cols*16-1:0] w_line [Mxus];  // a weight row: the low C bf16 of a line
  logic [Rows*16-1:0] a_line [Mxus];  // an activation row: the low R bf16 of a line
  logic [LineW-1:0]  dma_line, vec_aline, vec_bline;
  // Six + Mxus write ports (DMA, each MXU's stores, vector unit, four remote-DMA receivers,
  // these a 64-bit word at a time) and 7 + 2 Mxus read ports: VMEM is modelled as banked
  // finely enough that these never conflict (docs/fidelity.md). Writes to one line in one
  // cycle land in this order, the last winning; programs order them (docs/isa.md).
  always_ff @(posedge clk_i) begin
    if (dma_we) vmem[dma_waddr] <= dma_wdata;
    for (int m = 0; m < Mxus; m++)
      if (st_we[m]) vmem[st_waddr[m]] <= st_wdata[m];
    if (vec_we) vmem[vec_waddr] <= vec_wdata;
    for (int e = 0; e < NumRdma; e++)
      if (rdma_we[e]) vmem[rdma_waddr[e]][64 * int'(rdma_wword[e]) +: 64] <= rdma_wdata[e];
  end

  // ---------------------------------------------------------------- queues
  logic [1:0]        sem_wait, sem_grant, sem_signal, signal_ready, issue_valid, issue_ready, drained;
  logic              mxu_drained;
  logic [4:0]        sem_idx [2];
  logic [31:0]       sem_value [2];
  cmd_u              issue_cmd [2];

  for (genvar q = 0; q < 2; q++) begin : g_queue
    chip_cmdq #(
      .IsDma      (q == 1),
      .QueueDepth (QueueDepth),
      .Rows       (Rows),
      .Cols       (Cols),
      .VmemLines  (VmemLines),
      .AccDepth   (AccDepth),
      .Mxus       (Mxus),
      .Cores      (Cores)
    ) u_cmdq (
      .clk_i,
      .rst_ni,
      .host_we_i     (host_we_i && (host_queue_i == q[0])),
      .host_addr_i,
      .host_data_i,
      .start_i       (start_i[q]),
      .start_len_i   (start_len_i[(QAw+1)*q +: QAw+1]),
      .abort_i       (abort_i[q]),
      .hbm_bytes_i,
      .size_x_i,
      .size_y_i,
      .running_o     (q_running_o[q]),
      .halted_o      (q_halted_o[q]),
      .error_o       (q_error_o[ErrBits*q +: ErrBits]),
      .pc_o          (q_pc_o[QAw*q +: QAw]),
      .opcode_o      (q_opcode_o[8*q +: 8]),
      .sem_idx_o     (sem_idx[q]),
      .sem_wait_o    (sem_wait[q]),
      .sem_grant_i   (sem_grant[q]),
      .sem_signal_o  (sem_signal[q]),
      .sem_value_o   (sem_value[q]),
      .issue_valid_o (issue_valid[q]),
      .issue_cmd_o   (issue_cmd[q]),
      .issue_ready_i (issue_ready[q]),
      .signal_ready_i(signal_ready[q]),
      .drained_i     (drained[q])
    );
  end

  // ---------------------------------------------------------------- units
  // each MXU unit's progress, and their sums (what the vector unit waits for: an MXU command
  // issued after a VEC waits for it, so while a VEC waits no unit's done count can pass its
  // issued count at the VEC, and the sums compare exactly)
  logic [31:0] loads_issued [Mxus];
  logic [31:0] loads_done [Mxus];
  logic [31:0] matmuls_issued [Mxus];
  logic [31:0] matmuls_done [Mxus];
  logic [31:0] stores_issued [Mxus];
  logic [31:0] stores_done [Mxus];
  logic [31:0] all_loads_issued, all_loads_done, all_matmuls_issued, all_matmuls_done;
  logic [31:0] all_stores_issued, all_stores_done;
  logic [31:0] vecs_issued, vecs_done;
  always_comb begin
    all_loads_issued   = '0;
    all_loads_done     = '0;
    all_matmuls_issued = '0;
    all_matmuls_done   = '0;
    all_stores_issued  = '0;
    all_stores_done    = '0;
    for (int m = 0; m < Mxus; m++) begin
      all_loads_issued   = all_loads_issued + loads_issued[m];
      all_loads_done     = all_loads_done + loads_done[m];
      all_matmuls_issued = all_matmuls_issued + matmuls_issued[m];
      all_matmuls_done   = all_matmuls_done + matmuls_done[m];
      all_stores_issued  = all_stores_issued + stores_issued[m];
      all_stores_done    = all_stores_done + stores_done[m];
    end
  end
  logic        is_rdma, dma_ready, dma_drained;
  // the DMA queue's commands go to the DMA engine or to the chip's remote-DMA engines (the
  // RDMA's engine field: chip_top takes it, or not)
  assign is_rdma        = (issue_cmd[1].any.opcode == OpRdma);
  assign rdma_valid_o   = issue_valid[1] && is_rdma;
  assign rdma_cmd_o     = issue_cmd[1];
  assign issue_ready[1] = is_rdma ? rdma_ready_i : dma_ready;
  // the remote-DMA engines are the chip's: a release waits until none is sending, whichever
  // core's lines it holds (docs/isa.md, "Cores")
  assign drained[1] = dma_drained && !rdma_send_busy_i;
  logic        vec_busy, vec_ready, is_vec;
  logic [Mxus-1:0] mxu_ready, mxu_drained_m, mxu_busy, mxu_error, acc_we;
  logic [7:0]  mxu_sel;  // the MXU a compute-queue command names (the queue checked it)
  // the compute queue's commands go to an MXU unit or the vector unit
  assign is_vec = (issue_cmd[0].any.opcode == OpVec);
  always_comb begin
    unique case (issue_cmd[0].any.opcode)
      OpMxuLoad:   mxu_sel = issue_cmd[0].mxu_load.mxu;
      OpMxuMatmul: mxu_sel = issue_cmd[0].mxu_matmul.mxu;
      OpMxuStore:  mxu_sel = issue_cmd[0].mxu_store.mxu;
      default:     mxu_sel = '0;
    endcase
  end
  logic sel_ready;  // the named MXU unit takes the command
  always_comb begin
    sel_ready = 1'b0;
    for (int m = 0; m < Mxus; m++) if (mxu_sel == 8'(m)) sel_ready = mxu_ready[m];
  end
  assign issue_ready[0] = is_vec ? vec_ready : sel_ready;
  assign mxu_drained    = &mxu_drained_m;
  assign mxu_error_o    = |mxu_error;
  logic        dma_sem_signal, dma_busy;
  logic [4:0]  dma_sem_idx;
  logic [31:0] dma_sem_value;
  logic [$clog2(AccDepth)-1:0] acc_waddr [Mxus];
  chip_obs_pkg::counters_t mxu_cnt [Mxus];  // each MXU unit's counters (DMA and busy 0)

  chip_dma #(
    .Cols      (Cols),
    .VmemLines (VmemLines)
  ) u_dma (
    .clk_i,
    .rst_ni,
    .desc_valid_i    (issue_valid[1] && !is_rdma),
    .desc_ready_o    (dma_ready),
    .desc_i          (issue_cmd[1]),
    .drained_o       (dma_drained),
    .vmem_raddr_o    (dma_raddr),
    .vmem_rdata_i    (dma_line),
    .vmem_we_o       (dma_we),
    .vmem_waddr_o    (dma_waddr),
    .vmem_wdata_o    (dma_wdata),
    .hbm_req_o,
    .hbm_req_data_o,
    .hbm_rsp_i,
    .hbm_rsp_data_i,
    .sem_signal_o    (dma_sem_signal),
    .sem_idx_o       (dma_sem_idx),
    .sem_value_o     (dma_sem_value),
    .busy_o          (dma_busy)
  );

  for (genvar m = 0; m < Mxus; m++) begin : g_mxu
    logic [63:0] compute, weight_load, weight_stall, input_stall, idle;
    chip_mxu_unit #(
      .Rows      (Rows),
      .Cols      (Cols),
      .AccDepth  (AccDepth),
      .VmemLines (VmemLines)
    ) u_mxu_unit (
      .clk_i,
      .rst_ni,
      .cmd_valid_i        (issue_valid[0] && !is_vec && (mxu_sel == 8'(m))),
      .cmd_ready_o        (mxu_ready[m]),
      .cmd_i              (issue_cmd[0]),
      .drained_o          (mxu_drained_m[m]),
      .loads_issued_o     (loads_issued[m]),
      .loads_done_o       (loads_done[m]),
      .matmuls_issued_o   (matmuls_issued[m]),
      .matmuls_done_o     (matmuls_done[m]),
      .stores_issued_o    (stores_issued[m]),
      .stores_done_o      (stores_done[m]),
      .vecs_issued_i      (vecs_issued),
      .vecs_done_i        (vecs_done),
      .w_raddr_o          (w_raddr[m]),
      .w_rdata_i          (w_line[m]),
      .a_raddr_o          (a_raddr[m]),
      .a_rdata_i          (a_line[m]),
      .vmem_we_o          (st_we[m]),
      .vmem_waddr_o       (st_waddr[m]),
      .vmem_wdata_o       (st_wdata[m]),
      .mxu_busy_o         (mxu_busy[m]),
      .mxu_error_o        (mxu_error[m]),
      .acc_we_o           (acc_we[m]),
      .acc_waddr_o        (acc_waddr[m]),
      .cnt_compute_o      (compute),
      .cnt_weight_load_o  (weight_load),
      .cnt_weight_stall_o (weight_stall),
      .cnt_input_stall_o  (input_stall),
      .cnt_idle_o         (idle)
    );
    assign mxu_cnt[m] = '{dma_busy: '0, mxu_busy: '0, compute: compute, weight_load: weight_load,
                          weight_stall: weight_stall, input_stall: input_stall, idle: idle};
  end

  chip_vec_unit #(
    .Cols      (Cols),
    .VmemLines (VmemLines)
  ) u_vec_unit (
    .clk_i,
    .rst_ni,
    .cmd_valid_i      (issue_valid[0] && is_vec),
    .cmd_ready_o      (vec_ready),
    .cmd_i            (issue_cmd[0]),
    .loads_issued_i   (all_loads_issued),
    .loads_done_i     (all_loads_done),
    .matmuls_issued_i (all_matmuls_issued),
    .matmuls_done_i   (all_matmuls_done),
    .stores_issued_i  (all_stores_issued),
    .stores_done_i    (all_stores_done),
    .vecs_issued_o    (vecs_issued),
    .vecs_done_o      (vecs_done),
    .busy_o           (vec_busy),
    .a_raddr_o        (vec_araddr),
    .a_rdata_i        (vec_aline),
    .b_raddr_o        (vec_braddr),
    .b_rdata_i        (vec_bline),
    .we_o             (vec_we),
    .waddr_o          (vec_waddr),
    .wdata_o          (vec_wdata)
  );

  // VMEM read ports, gated by their unit's activity. Written as if statements, not
  // ternaries: Verilator then reads (copies) a wide line only when its unit is busy, where a
  // ternary evaluates both arms every cycle; an idle chip clears the lines and copies none.
  always_comb begin
    dma_line  = '0;
    vec_aline = '0;
    vec_bline = '0;
    for (int e = 0; e < NumRdma; e++) rdma_word[e] = '0;
    for (int m = 0; m < Mxus; m++) begin
      w_line[m] = '0;
      a_line[m] = '0;
      if (!mxu_drained_m[m]) begin
        w_line[m] = vmem[w_raddr[m]][Cols*16-1:0];
        a_line[m] = vmem[a_raddr[m]][Rows*16-1:0];
      end
    end
    if (dma_busy) dma_line = vmem[dma_raddr];
    if (vec_busy) begin
      vec_aline = vmem[vec_araddr];
      vec_bline = vmem[vec_braddr];
    end
    for (int e = 0; e < NumRdma; e++)
      if (rdma_rd_en_i[e]) rdma_word[e] = vmem[rdma_raddr[e]][64 * int'(rdma_rword[e]) +: 64];
  end

  // ---------------------------------------------------------------- semaphores
  // Waits are granted against the value after earlier events of the same cycle in a fixed
  // order (queue 0 wait, queue 1 wait); signals add afterwards.
  logic [31:0] sems_q [NumSems];
  logic        rdma_any_sig;
  always_comb begin
    rdma_any_sig = 1'b0;
    for (int e = 0; e < NumRdma; e++) rdma_any_sig = rdma_any_sig || rdma_lsig[e] || rdma_rsig[e];
  end
  always_comb begin
    automatic logic [31:0] v0 = sems_q[sem_idx[0]];
    automatic logic [31:0] v1 = sems_q[sem_idx[1]];
    sem_grant[0] = sem_wait[0] && (v0 >= sem_value[0]);
    if (sem_grant[0] && sem_idx[1] == sem_idx[0]) v1 = v1 - sem_value[0];
    sem_grant[1] = sem_wait[1] && (v1 >= sem_value[1]);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i < NumSems; i++) sems_q[i] <= '0;
    end else if (sem_grant != '0 || sem_signal[1] || rel_fire || dma_sem_signal || rdma_any_sig) begin
      // (nothing to do in most cycles: an idle chip skips the bank)
      for (int i = 0; i < NumSems; i++) begin
        automatic logic [31:0] v = sems_q[i];
        // a semaphore never goes below zero: a wait is granted only against what is there
        if (sem_grant[0] && sem_idx[0] == 5'(i)) begin
          assert (v >= sem_value[0]) else $error("chip_core: semaphore %0d taken below zero", i);
          v = v - sem_value[0];
        end
        if (sem_grant[1] && sem_idx[1] == 5'(i)) begin
          assert (v >= sem_value[1]) else $error("chip_core: semaphore %0d taken below zero", i);
          v = v - sem_value[1];
        end
        if (rel_fire && rel_sem_q[rel_head_q] == 5'(i)) v = v + rel_value_q[rel_head_q];
        if (sem_signal[1] && sem_idx[1] == 5'(i)) v = v + sem_value[1];
        if (dma_sem_signal && dma_sem_idx == 5'(i)) v = v + dma_sem_value;
        for (int e = 0; e < NumRdma; e++) begin
          if (rdma_lsig[e] && rdma_lsem[e] == 5'(i)) v = v + rdma_lval[e];
          if (rdma_rsig[e] && rdma_rsem[e] == 5'(i)) v = v + rdma_rval[e];
        end
        sems_q[i] <= v;
      end
    end
  end
  assign sem_rd_value_o = sems_q[sem_rd_idx_i];

  // ---------------------------------------------------------------- counters
  logic [63:0] dma_busy_q, mxu_busy_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      dma_busy_q <= '0;
      mxu_busy_q <= '0;
    end else begin
      if (dma_busy) dma_busy_q <= dma_busy_q + 64'd1;
      if (mxu_busy != '0) mxu_busy_q <= mxu_busy_q + 64'($countones(mxu_busy));
    end
  end
  // ---------------------------------------------------------------- release fences
  // The DMA queue's SEM_SIGNAL waits for its DMAs (they complete in order). The compute
  // queue's SEM_SIGNAL does not block: it records how many MXU loads, matmuls and stores
  // were issued before it and fires once each unit has finished that many VMEM accesses,
  // while the queue goes on to issue the next tile's work (docs/isa.md).
  assign signal_ready[1] = drained[1];
  localparam int unsigned RelDepth = 4;
  logic [4:0]  rel_sem_q   [RelDepth];
  logic [31:0] rel_value_q [RelDepth];
  // per MXU: commands issued later to another MXU may finish first, so sums would not do
  logic [31:0] rel_loads_q [RelDepth][Mxus];
  logic [31:0] rel_mms_q   [RelDepth][Mxus];
  logic [31:0] rel_sts_q   [RelDepth][Mxus];
  logic [31:0] rel_vecs_q  [RelDepth];
  logic [2:0]  rel_count_q;
  logic [1:0]  rel_head_q;
  logic        rel_fire;
  assign signal_ready[0] = (rel_count_q != 3'(RelDepth));
  always_comb begin
    rel_fire = (rel_count_q != '0) && (vecs_done >= rel_vecs_q[rel_head_q]);
    for (int m = 0; m < Mxus; m++)
      rel_fire = rel_fire && (loads_done[m] >= rel_loads_q[rel_head_q][m]) &&
                 (matmuls_done[m] >= rel_mms_q[rel_head_q][m]) && (stores_done[m] >= rel_sts_q[rel_head_q][m]);
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rel_count_q <= '0;
      rel_head_q  <= '0;
    end else begin
      if (sem_signal[0]) begin
        rel_sem_q[2'(rel_head_q + rel_count_q[1:0])]   <= sem_idx[0];
        rel_value_q[2'(rel_head_q + rel_count_q[1:0])] <= sem_value[0];
        rel_loads_q[2'(rel_head_q + rel_count_q[1:0])] <= loads_issued;
        rel_mms_q[2'(rel_head_q + rel_count_q[1:0])]   <= matmuls_issued;
        rel_sts_q[2'(rel_head_q + rel_count_q[1:0])]   <= stores_issued;
        rel_vecs_q[2'(rel_head_q + rel_count_q[1:0])]  <= vecs_issued;
      end
      if (rel_fire) rel_head_q <= rel_head_q + 2'd1;
      rel_count_q <= rel_count_q + 3'(sem_signal[0]) - 3'(rel_fire);
    end
  end
  assign drained[0] = mxu_drained && !vec_busy && (rel_count_q == '0);
  // ---------------------------------------------------------------- visible events
  always_comb begin
    for (int i = 0; i < NumSems; i++) obs_sems_o[32 * i +: 32] = sems_q[i];
  end
  always_comb begin
    obs_vmem_we_o[0] = dma_we;
    obs_vmem_we_o[2] = vec_we;
    obs_vmem_waddr_o[0 +: 32]  = 32'(dma_waddr);
    obs_vmem_waddr_o[64 +: 32] = 32'(vec_waddr);
    obs_vmem_wdata_o[0 +: LineW]         = dma_wdata;
    obs_vmem_wdata_o[2 * LineW +: LineW] = vec_wdata;
    for (int m = 0; m < Mxus; m++) begin
      automatic int unsigned p = (m == 0) ? 1 : 2 + m;
      obs_vmem_we_o[p]                     = st_we[m];
      obs_vmem_waddr_o[32 * p +: 32]       = 32'(st_waddr[m]);
      obs_vmem_wdata_o[LineW * p +: LineW] = st_wdata[m];
    end
  end
  always_comb begin
    for (int m = 0; m < Mxus; m++)
      obs_progress_o[192 * m +: 192] = {stores_done[m], stores_issued[m], matmuls_done[m], matmuls_issued[m],
                                        loads_done[m], loads_issued[m]};
    obs_progress_o[192 * Mxus +: 64] = {vecs_done, vecs_issued};
  end
  assign obs_issue_o    = issue_valid & issue_ready;
  // (chip_top puts the remote-DMA engines' flags in)
  assign obs_busy_o     = '{zero: '0, fences: rel_count_q, sending: '0, rdma: '0, mxu_drained: mxu_drained,
                            vec: vec_busy, mxu: (mxu_busy != '0), dma: dma_busy};
  assign obs_mxu_busy_o    = mxu_busy;
  assign obs_mxu_drained_o = mxu_drained_m;
  always_comb begin
    for (int m = 0; m < Mxus; m++) begin
      obs_acc_we_o[m]              = acc_we[m];
      obs_acc_waddr_o[32 * m +: 32] = 32'(acc_waddr[m]);
    end
  end
  // the core's own busy counters, then the MXU counters summed over the MXUs: MXU-cycles
  // (docs/isa.md, "Counters")
  always_comb begin
    cnt_o          = '0;
    cnt_o.dma_busy = dma_busy_q;
    cnt_o.mxu_busy = mxu_busy_q;
    for (int m = 0; m < Mxus; m++) cnt_o = chip_obs_pkg::counters_add(cnt_o, mxu_cnt[m]);
  end
  assign idle_o = (q_running_o == 2'b00) && (drained == 2'b11);
endmodule
