// The TPU chip (docs/isa.md): Cores cores (rtl/chip_core.sv: each its command queues,
// semaphores, VMEM, DMA engine, Mxus MXU units and vector unit, and its own port into the
// chip's HBM, as a v2/v3 TensorCore has HBM of its own), sharing the torus router with four
// remote-DMA engines on four local ports (one per link direction, so a chip can drive all
// four links at once). The host addresses queue q of core c as queue 2c + q (docs/isa.md,
// "Cores").
module chip_top #(
  parameter int unsigned Mxus       = 1,     // MXU units of each core
  parameter int unsigned Cores      = 1,     // cores of the chip (1 or 2)
  parameter int unsigned Rows       = 4,
  parameter int unsigned Cols       = 4,
  parameter int unsigned AccDepth   = 256,
  parameter int unsigned VmemLines  = 1024,
  parameter int unsigned QueueDepth = 256,
  parameter int unsigned NumVcs     = 2,     // the router's VCs per port
  localparam int unsigned FlitW     = 64 + $clog2(NumVcs) + 3,
  localparam int unsigned LineW     = 32 * Cols,
  localparam int unsigned LineAw    = $clog2(VmemLines),
  localparam int unsigned QAw       = $clog2(QueueDepth),
  localparam int unsigned NumRdma   = chip_isa_pkg::NumRdmaEngines,
  localparam int unsigned WIdxW     = (Cols > 2) ? $clog2(Cols / 2) : 1,
  localparam int unsigned Nq        = chip_isa_pkg::NumQueues,   // queues per core
  localparam int unsigned NumQueues = Nq * Cores                  // queues of the chip
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // host: programs, start, HBM size
  input  logic                   host_we_i,
  input  logic [7:0]             host_queue_i,     // 2 core + q: q 0 compute, 1 DMA
  input  logic [QAw-1:0]         host_addr_i,
  input  logic [chip_isa_pkg::CmdW-1:0] host_data_i,
  input  logic [NumQueues-1:0]   start_i,
  input  logic [NumQueues*(QAw+1)-1:0] start_len_i,  // each queue's program length, with start_i
  input  logic [NumQueues-1:0]   abort_i,           // stop these queues before their next command
  input  logic [31:0]            hbm_bytes_i,
  // position in the pod, and the router's buffer depth in use (sampled in reset)
  input  logic [7:0]             my_x_i,
  input  logic [7:0]             my_y_i,
  input  logic [7:0]             size_x_i,
  input  logic [7:0]             size_y_i,
  input  logic [3:0]             buf_depth_i,
  input  logic [31:0]            slice_i,           // the chip's slice {h, w, y0, x0}; w = 0: the pod
  output logic [15:0]            cnt_slice_drops_o, // packets dropped for leaving the slice
  // the four network ports (+X, -X, +Y, -Y at index 0..3), wired to the neighbours by csim/pod/pod.c
  input  logic [4*FlitW-1:0]     net_in_flit_i,
  output logic [4*FlitW-1:0]     net_out_flit_o,
  input  logic [4*NumVcs-1:0]    net_credit_in_i,
  output logic [4*NumVcs-1:0]    net_credit_out_o,
  output logic [7:0]             net_occupancy_o,   // flits held in the router
  output logic [5*32-1:0]        cnt_router_flits_o, // flits sent per router output port (local, +X, -X, +Y, -Y)
  // queue status, queue q at [q*...]
  output logic [NumQueues-1:0]   q_running_o,
  output logic [NumQueues-1:0]   q_halted_o,
  output logic [NumQueues*chip_isa_pkg::ErrBits-1:0] q_error_o,
  output logic [NumQueues*QAw-1:0] q_pc_o,
  output logic [NumQueues*8-1:0] q_opcode_o,
  // semaphore read-back: semaphore sem_rd_idx_i of core sem_rd_core_i
  input  logic [4:0]             sem_rd_idx_i,
  input  logic [7:0]             sem_rd_core_i,
  output logic [31:0]            sem_rd_value_o,
  // HBM ports, core c's at [c] (served by csim/chip/hbm.c, one memory behind them all): a
  // core's chip_obs_pkg::hbm_req_t and hbm_rsp_t, field by field (the ports C pokes stay flat)
  output logic [Cores-1:0]       hbm_req_valid_o,
  input  logic [Cores-1:0]       hbm_req_ready_i,
  output logic [Cores-1:0]       hbm_req_write_o,
  output logic [Cores*32-1:0]    hbm_req_addr_o,
  output logic [Cores*16-1:0]    hbm_req_bytes_o,
  output logic [Cores*LineW-1:0] hbm_req_data_o,
  input  logic [Cores-1:0]       hbm_resp_valid_i,
  input  logic [Cores*LineW-1:0] hbm_resp_data_i,
  // counters, summed over the cores (the MXU's over every MXU: MXU-cycles): the fields of
  // chip_obs_pkg::counters_t (rtl/chip_obs.def), a port each
  output logic [63:0]            cnt_dma_busy_o,
  output logic [63:0]            cnt_mxu_busy_o,
  output logic [63:0]            cnt_compute_o,
  output logic [63:0]            cnt_weight_load_o,
  output logic [63:0]            cnt_weight_stall_o,
  output logic [63:0]            cnt_input_stall_o,
  output logic [63:0]            cnt_idle_o,
  output logic                   mxu_error_o,
  output logic                   idle_o,            // no queue running, no unit busy
  // Visible events, read-only taps of internal signals (docs/scale.md, "Lockstep"): what
  // `--check` compares with the chip's fast model every cycle, as Ibex's RVFI exposes retired
  // instructions to a reference model. Nothing inside the chip reads them. Per core c at
  // [c * (the core's width) +: ...] (chip_core's obs_* ports).
  output logic [Cores*NumSems*32-1:0] obs_sems_o,
  output logic [Cores*(2+Mxus)-1:0] obs_vmem_we_o,
  output logic [Cores*(2+Mxus)*32-1:0] obs_vmem_waddr_o,
  output logic [Cores*(2+Mxus)*LineW-1:0] obs_vmem_wdata_o,
  output logic [NumRdma-1:0]     obs_rdma_we_o,       // VMEM word writes of the remote-DMA receivers
  output logic [NumRdma*chip_obs_pkg::RdmaWaddrW-1:0] obs_rdma_waddr_o,  // chip_obs_pkg::rdma_waddr_t each
  output logic [NumRdma*64-1:0]  obs_rdma_wdata_o,
  output logic [(4+NumRdma)*FlitW-1:0]  obs_rtr_in_o,  // flits into and out of every router port
  output logic [(4+NumRdma)*FlitW-1:0]  obs_rtr_out_o,
  output logic [(4+NumRdma)*NumVcs-1:0] obs_rtr_credit_in_o,
  output logic [(4+NumRdma)*NumVcs-1:0] obs_rtr_credit_out_o,
  output logic [Cores*(6*Mxus+2)*32-1:0] obs_progress_o,
  output logic [NumQueues-1:0]   obs_issue_o,         // a queue hands a command to its unit
  // per core a chip_obs_pkg::busy_t (rtl/chip_obs.def): its units' busy flags, and the
  // remote-DMA engines' (the chip's, in every core's word)
  output logic [Cores*chip_obs_pkg::BusyW-1:0] obs_busy_o,
  output logic [Cores*Mxus-1:0]  obs_mxu_busy_o,      // each MXU's busy and drained flags
  output logic [Cores*Mxus-1:0]  obs_mxu_drained_o,
  output logic [Cores*Mxus-1:0]  obs_acc_we_o,        // an accumulator row written, per MXU
  output logic [Cores*Mxus*32-1:0] obs_acc_waddr_o
);
  import chip_isa_pkg::*;

  // ---------------------------------------------------------------- the remote-DMA engines' wires
  logic [LineAw-1:0] rdma_raddr [NumRdma];
  logic [LineAw-1:0] rdma_waddr [NumRdma];
  logic [WIdxW-1:0]  rdma_rword [NumRdma];
  logic [WIdxW-1:0]  rdma_wword [NumRdma];
  logic [63:0]       rdma_wdata [NumRdma];
  logic [63:0]       rdma_word [NumRdma];
  logic              rdma_we [NumRdma];
  logic [1:0]        rdma_rcore [NumRdma];
  logic [1:0]        rdma_wcore [NumRdma];
  logic              rdma_lsig [NumRdma];
  logic              rdma_rsig [NumRdma];
  logic [4:0]        rdma_lsem [NumRdma];
  logic [4:0]        rdma_rsem [NumRdma];
  logic [31:0]       rdma_lval [NumRdma];
  logic [31:0]       rdma_rval [NumRdma];
  logic [NumRdma-1:0] rdma_ready, rdma_busy_e, rdma_send_busy_e, rdma_take;
  logic [1:0]        rdma_from [NumRdma];  // the core whose RDMA engine e takes this cycle
  cmd_u              rdma_desc [NumRdma];  // and its command
  logic              rdma_send_busy;
  assign rdma_send_busy = |rdma_send_busy_e;

  // ---------------------------------------------------------------- the cores
  logic [Cores-1:0]  core_rdma_valid, core_rdma_ready, core_idle, core_mxu_error;
  cmd_u              core_rdma_cmd [Cores];
  logic [NumRdma*64-1:0] core_rdma_rdata [Cores];
  logic [31:0]       core_sem_value [Cores];
  chip_obs_pkg::counters_t core_cnt [Cores];

  for (genvar c = 0; c < Cores; c++) begin : g_core
    logic [NumRdma-1:0]        rd_en, we, lsig, rsig;
    logic [NumRdma*LineAw-1:0] raddr, waddr;
    logic [NumRdma*WIdxW-1:0]  rword, wword;
    logic [NumRdma*64-1:0]     wdata;
    logic [NumRdma*5-1:0]      lsem, rsem;
    logic [NumRdma*32-1:0]     lval, rval;
    chip_obs_pkg::busy_t       busy, busy_word;
    chip_obs_pkg::hbm_req_t    hbm_req;
    assign hbm_req_valid_o[c]          = hbm_req.valid;
    assign hbm_req_write_o[c]          = hbm_req.write;
    assign hbm_req_addr_o[32 * c +: 32] = hbm_req.addr;
    assign hbm_req_bytes_o[16 * c +: 16] = hbm_req.bytes;
    // what each engine does for this core: reads while sending its lines, writes and
    // signals what arrives for it
    always_comb begin
      for (int e = 0; e < NumRdma; e++) begin
        rd_en[e]                    = rdma_send_busy_e[e] && (rdma_rcore[e] == 2'(c));
        raddr[LineAw * e +: LineAw] = rdma_raddr[e];
        rword[WIdxW * e +: WIdxW]   = rdma_rword[e];
        we[e]                       = rdma_we[e] && (rdma_wcore[e] == 2'(c));
        waddr[LineAw * e +: LineAw] = rdma_waddr[e];
        wword[WIdxW * e +: WIdxW]   = rdma_wword[e];
        wdata[64 * e +: 64]         = rdma_wdata[e];
        lsig[e]                     = rdma_lsig[e] && (rdma_rcore[e] == 2'(c));
        lsem[5 * e +: 5]            = rdma_lsem[e];
        lval[32 * e +: 32]          = rdma_lval[e];
        rsig[e]                     = rdma_rsig[e] && (rdma_wcore[e] == 2'(c));
        rsem[5 * e +: 5]            = rdma_rsem[e];
        rval[32 * e +: 32]          = rdma_rval[e];
      end
    end

    chip_core #(
      .Mxus       (Mxus),
      .Cores      (Cores),
      .Rows       (Rows),
      .Cols       (Cols),
      .AccDepth   (AccDepth),
      .VmemLines  (VmemLines),
      .QueueDepth (QueueDepth)
    ) u_core (
      .clk_i,
      .rst_ni,
      .host_we_i          (host_we_i && (host_queue_i[7:1] == 7'(c))),
      .host_queue_i       (host_queue_i[0]),
      .host_addr_i,
      .host_data_i,
      .start_i            (start_i[Nq * c +: Nq]),
      .start_len_i        (start_len_i[Nq * (QAw + 1) * c +: Nq * (QAw + 1)]),
      .abort_i            (abort_i[Nq * c +: Nq]),
      .hbm_bytes_i,
      .size_x_i,
      .size_y_i,
      .q_running_o        (q_running_o[Nq * c +: Nq]),
      .q_halted_o         (q_halted_o[Nq * c +: Nq]),
      .q_error_o          (q_error_o[Nq * ErrBits * c +: Nq * ErrBits]),
      .q_pc_o             (q_pc_o[Nq * QAw * c +: Nq * QAw]),
      .q_opcode_o         (q_opcode_o[Nq * 8 * c +: Nq * 8]),
      .sem_rd_idx_i,
      .sem_rd_value_o     (core_sem_value[c]),
      .hbm_req_o          (hbm_req),
      .hbm_req_data_o     (hbm_req_data_o[LineW * c +: LineW]),
      .hbm_rsp_i          ('{ready: hbm_req_ready_i[c], valid: hbm_resp_valid_i[c]}),
      .hbm_rsp_data_i     (hbm_resp_data_i[LineW * c +: LineW]),
      .rdma_valid_o       (core_rdma_valid[c]),
      .rdma_cmd_o         (core_rdma_cmd[c]),
      .rdma_ready_i       (core_rdma_ready[c]),
      .rdma_send_busy_i   (rdma_send_busy),
      .rdma_rd_en_i       (rd_en),
      .rdma_raddr_i       (raddr),
      .rdma_rword_i       (rword),
      .rdma_rdata_o       (core_rdma_rdata[c]),
      .rdma_we_i          (we),
      .rdma_waddr_i       (waddr),
      .rdma_wword_i       (wword),
      .rdma_wdata_i       (wdata),
      .rdma_lsig_i        (lsig),
      .rdma_lsem_i        (lsem),
      .rdma_lval_i        (lval),
      .rdma_rsig_i        (rsig),
      .rdma_rsem_i        (rsem),
      .rdma_rval_i        (rval),
      .cnt_o              (core_cnt[c]),
      .mxu_error_o        (core_mxu_error[c]),
      .idle_o             (core_idle[c]),
      .obs_sems_o         (obs_sems_o[NumSems * 32 * c +: NumSems * 32]),
      .obs_vmem_we_o      (obs_vmem_we_o[(2 + Mxus) * c +: 2 + Mxus]),
      .obs_vmem_waddr_o   (obs_vmem_waddr_o[(2 + Mxus) * 32 * c +: (2 + Mxus) * 32]),
      .obs_vmem_wdata_o   (obs_vmem_wdata_o[(2 + Mxus) * LineW * c +: (2 + Mxus) * LineW]),
      .obs_progress_o     (obs_progress_o[(6 * Mxus + 2) * 32 * c +: (6 * Mxus + 2) * 32]),
      .obs_issue_o        (obs_issue_o[Nq * c +: Nq]),
      .obs_busy_o         (busy),
      .obs_mxu_busy_o     (obs_mxu_busy_o[Mxus * c +: Mxus]),
      .obs_mxu_drained_o  (obs_mxu_drained_o[Mxus * c +: Mxus]),
      .obs_acc_we_o       (obs_acc_we_o[Mxus * c +: Mxus]),
      .obs_acc_waddr_o    (obs_acc_waddr_o[Mxus * 32 * c +: Mxus * 32])
    );
    always_comb begin
      busy_word         = busy;
      busy_word.rdma    = rdma_busy_e;       // the core leaves the remote-DMA flags to chip_top
      busy_word.sending = rdma_send_busy_e;
    end
    assign obs_busy_o[chip_obs_pkg::BusyW * c +: chip_obs_pkg::BusyW] = busy_word;
  end

  // semaphore read-back, counters and status over the cores
  chip_obs_pkg::counters_t cnt;
  always_comb begin
    sem_rd_value_o = '0;
    cnt            = '0;
    for (int c = 0; c < Cores; c++) begin
      if (sem_rd_core_i == 8'(c)) sem_rd_value_o = core_sem_value[c];
      cnt = chip_obs_pkg::counters_add(cnt, core_cnt[c]);
    end
  end
  assign cnt_dma_busy_o     = cnt.dma_busy;
  assign cnt_mxu_busy_o     = cnt.mxu_busy;
  assign cnt_compute_o      = cnt.compute;
  assign cnt_weight_load_o  = cnt.weight_load;
  assign cnt_weight_stall_o = cnt.weight_stall;
  assign cnt_input_stall_o  = cnt.input_stall;
  assign cnt_idle_o         = cnt.idle;
  assign mxu_error_o = |core_mxu_error;
  assign idle_o      = (&core_idle) && !(|rdma_busy_e);

  // ---------------------------------------------------------------- router and remote DMA
  // An RDMA goes to the engine its engine field names; when several cores offer one to the
  // same engine in a cycle, the lowest core's goes first.
  always_comb begin
    rdma_take = '0;
    for (int e = 0; e < NumRdma; e++) begin
      rdma_from[e] = '0;
      rdma_desc[e] = core_rdma_cmd[0];
      for (int c = Cores - 1; c >= 0; c--)
        if (core_rdma_valid[c] && core_rdma_cmd[c].rdma.engine == 2'(e)) begin
          rdma_take[e] = 1'b1;
          rdma_from[e] = 2'(c);
          rdma_desc[e] = core_rdma_cmd[c];
        end
    end
    for (int c = 0; c < Cores; c++) begin
      core_rdma_ready[c] = 1'b0;
      for (int e = 0; e < NumRdma; e++)
        if (core_rdma_cmd[c].rdma.engine == 2'(e) && rdma_from[e] == 2'(c)) core_rdma_ready[c] = rdma_ready[e];
    end
  end

  // Router ports: 0 local (engine 0), 1..4 the links (+X, -X, +Y, -Y), 5..7 local (engines 1..3).
  localparam int unsigned RtrPorts = 4 + NumRdma;
  logic [FlitW-1:0]  inj_flit [NumRdma];
  logic [FlitW-1:0]  ej_flit  [NumRdma];
  logic [NumVcs-1:0] ej_credit [NumRdma];
  logic [NumRdma-1:0] inj_credit;
  logic [RtrPorts*FlitW-1:0]  rtr_in, rtr_out;
  logic [RtrPorts*NumVcs-1:0] rtr_credit_in, rtr_credit_out;
  logic              unused_overflow;
  logic [3:0]        unused_dbg;
  logic [RtrPorts*NumVcs-1:0] unused_inj_credits;

  // The router port of remote-DMA engine e.
  function automatic int unsigned rdma_port(int unsigned e);
    return (e == 0) ? 0 : 4 + e;
  endfunction

  always_comb begin
    rtr_in        = '0;
    rtr_credit_in = '0;
    rtr_in[FlitW +: 4*FlitW]           = net_in_flit_i;
    rtr_credit_in[NumVcs +: 4*NumVcs]  = net_credit_in_i;
    for (int unsigned e = 0; e < NumRdma; e++) begin
      rtr_in[rdma_port(e) * FlitW +: FlitW]          = inj_flit[e];
      rtr_credit_in[rdma_port(e) * NumVcs +: NumVcs] = ej_credit[e];
      ej_flit[e]    = rtr_out[rdma_port(e) * FlitW +: FlitW];
      inj_credit[e] = rtr_credit_out[rdma_port(e) * NumVcs];  // engines inject on VC 0
    end
  end
  assign net_out_flit_o     = rtr_out[FlitW +: 4*FlitW];
  assign net_credit_out_o   = rtr_credit_out[NumVcs +: 4*NumVcs];
  // injection credits of VCs other than 0 on the local ports, and the links' own (wired above)
  assign unused_inj_credits = rtr_credit_out;

  noc_router #(
    .NumVcs   (NumVcs),
    .MaxDepth (8),
    .DataW    (64),
    .NumLocal (NumRdma),
    .CheckNeighbours (1'b1)  // the engines and csim/pod/pod.c's links keep the credit protocol
  ) u_router (
    .clk_i,
    .rst_ni,
    .my_x_i,
    .my_y_i,
    .size_x_i,
    .size_y_i,
    .buf_depth_i,
    .slice_i,
    .drops_o      (cnt_slice_drops_o),
    .in_flit_i    (rtr_in),
    .out_flit_o   (rtr_out),
    .credit_in_i  (rtr_credit_in),
    .credit_out_o (rtr_credit_out),
    .overflow_o   (unused_overflow),
    .occupancy_o  (net_occupancy_o),
    .dbg_vc_i     (5'd0),
    .dbg_count_o  (unused_dbg)
  );

  for (genvar e = 0; e < NumRdma; e++) begin : g_rdma
    chip_rdma #(
      .Cols      (Cols),
      .VmemLines (VmemLines),
      .NumVcs    (NumVcs)
    ) u_rdma (
      .clk_i,
      .rst_ni,
      .buf_depth_i,
      .desc_valid_i    (rdma_take[e]),
      .desc_ready_o    (rdma_ready[e]),
      .desc_i          (rdma_desc[e]),
      .desc_core_i     (rdma_from[e]),
      .busy_o          (rdma_busy_e[e]),
      .send_busy_o     (rdma_send_busy_e[e]),
      .vmem_raddr_o    (rdma_raddr[e]),
      .vmem_rword_o    (rdma_rword[e]),
      .vmem_rdata_i    (rdma_word[e]),
      .vmem_we_o       (rdma_we[e]),
      .vmem_waddr_o    (rdma_waddr[e]),
      .vmem_wword_o    (rdma_wword[e]),
      .vmem_wdata_o    (rdma_wdata[e]),
      .vmem_rcore_o    (rdma_rcore[e]),
      .vmem_wcore_o    (rdma_wcore[e]),
      .inj_flit_o      (inj_flit[e]),
      .inj_credit_i    (inj_credit[e]),
      .ej_flit_i       (ej_flit[e]),
      .ej_credit_o     (ej_credit[e]),
      .local_signal_o  (rdma_lsig[e]),
      .local_sem_o     (rdma_lsem[e]),
      .local_value_o   (rdma_lval[e]),
      .remote_signal_o (rdma_rsig[e]),
      .remote_sem_o    (rdma_rsem[e]),
      .remote_value_o  (rdma_rval[e])
    );
  end
  // the word an engine sends comes from the VMEM of the core whose lines it holds
  always_comb begin
    for (int e = 0; e < NumRdma; e++) begin
      rdma_word[e] = '0;
      for (int c = 0; c < Cores; c++)
        if (rdma_rcore[e] == 2'(c)) rdma_word[e] = core_rdma_rdata[c][64 * e +: 64];
    end
  end

  // flits per router output port: 0 counts the flits ejected on every local port, 1..4 the links
  logic [31:0] rtr_flits_q [5];
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int p = 0; p < 5; p++) rtr_flits_q[p] <= '0;
    end else if (rtr_out != '0) begin
      automatic logic [31:0] ejected = '0;
      for (int e = 0; e < NumRdma; e++) ejected = ejected + 32'(rtr_out[rdma_port(e) * FlitW + FlitW - 1]);
      rtr_flits_q[0] <= rtr_flits_q[0] + ejected;
      for (int p = 1; p < 5; p++) if (rtr_out[p * FlitW + FlitW - 1]) rtr_flits_q[p] <= rtr_flits_q[p] + 32'd1;
    end
  end
  always_comb begin
    for (int p = 0; p < 5; p++) cnt_router_flits_o[32 * p +: 32] = rtr_flits_q[p];
  end

  // ---------------------------------------------------------------- visible events
  always_comb begin
    for (int e = 0; e < NumRdma; e++) begin
      obs_rdma_we_o[e]               = rdma_we[e];
      obs_rdma_waddr_o[chip_obs_pkg::RdmaWaddrW * e +: chip_obs_pkg::RdmaWaddrW] =
          chip_obs_pkg::rdma_waddr_t'{core: rdma_wcore[e], word: 6'(rdma_wword[e]), line: 24'(rdma_waddr[e])};
      obs_rdma_wdata_o[64 * e +: 64] = rdma_wdata[e];
    end
  end
  assign obs_rtr_in_o         = rtr_in;
  assign obs_rtr_out_o        = rtr_out;
  assign obs_rtr_credit_in_o  = rtr_credit_in;
  assign obs_rtr_credit_out_o = rtr_credit_out;
endmodule
