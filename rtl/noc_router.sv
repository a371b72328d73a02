// Torus router: 4 + NumLocal ports (local 0, +X, -X, +Y, -Y, then local 1.. NumLocal-1 as
// ports 5..), input-buffered virtual channels with
// credit-based flow control, dimension-order routing the shorter way round each ring,
// dateline VC classes, round-robin VC and switch allocation. docs/noc.md has the packet
// format and the timing contract.
//
// Pipeline: a flit arriving on an input port is written into its VC buffer at that edge
// (cycle 1); in the next cycle, when it is at the front of its buffer, route computation,
// VC allocation (head flits) and switch allocation all happen, and it is written into the
// output register at that edge (cycle 2). A hop therefore costs 2 router cycles plus the
// link. One flit per cycle per input and per output port.
//
// VC classes: VCs [0, NumVcs/2) are class 0, the rest class 1. A packet entering a ring
// uses class 0 and moves to class 1 on the hop over that ring's wraparound link, and stays
// there until it leaves the ring: the dateline breaks every ring's cyclic dependency, so
// dimension-order routing on the torus is deadlock-free. Ejection may use any VC.
//
// Form: like the MXU datapath, the state is arrays over ports, VCs and buffer slots,
// updated by loops in one always_ff with blocking assignments (decisions are taken on the
// state before the edge, then applied), and nothing is evaluated while the router holds no
// flit and none arrives, so idle routers in a big pod cost almost nothing.
//
// Local ports: with NumLocal = 1 every packet for this router ejects at port 0. With 4 (a
// chip with one remote-DMA engine per link), a packet ejects at the local port paired with
// the network port it arrived on (+X: 0, -X: 5, +Y: 6, -Y: 7), so four streams arriving at
// once are taken at four flits per cycle; a packet injected for this router ejects at 0.
//
// Slices (slice_i = {h, w, y0, x0}, w = 0 for none): routing stays inside the slice (a
// dimension the slice does not span is routed as a mesh), and a packet injected on a local
// port for a chip outside the slice is dropped whole (its credits returned) and counted
// in drops_o: the hardware keeps a slice's traffic inside it.
//
// Buffers hold MaxDepth flits per VC; buf_depth_i (1..MaxDepth, sampled in reset) sets the
// credits each output VC starts with, i.e. the downstream buffer depth in use.
module noc_router #(
  parameter int unsigned NumVcs   = 4,   // a power of two, at least 2
  parameter int unsigned MaxDepth = 8,
  parameter int unsigned DataW    = 64,
  parameter int unsigned NumLocal = 1,   // 1 or 4
  // Assert that the neighbours keep the credit protocol too (no flit into a full VC, no
  // credit beyond the buffer depth). The chip sets it; the router's own tests leave it off,
  // as they drive senders that break the protocol on purpose to see overflow_o flagged.
  parameter bit          CheckNeighbours = 1'b0,
  localparam int unsigned P       = 4 + NumLocal,
  localparam int unsigned VcW     = $clog2(NumVcs),
  localparam int unsigned FlitW   = DataW + VcW + 3  // {valid, head, tail, vc, data}
) (
  input  logic                            clk_i,
  input  logic                            rst_ni,
  input  logic [noc_pkg::CoordW-1:0]      my_x_i,
  input  logic [noc_pkg::CoordW-1:0]      my_y_i,
  input  logic [noc_pkg::CoordW-1:0]      size_x_i,
  input  logic [noc_pkg::CoordW-1:0]      size_y_i,
  input  logic [$clog2(MaxDepth+1)-1:0]   buf_depth_i,
  input  logic [31:0]                     slice_i,
  output logic [15:0]                     drops_o,         // packets dropped at the slice boundary
  // flits in and out, port p at [p*FlitW +: FlitW]
  input  logic [P*FlitW-1:0]              in_flit_i,
  output logic [P*FlitW-1:0]              out_flit_o,
  // credits: credit_in_i[p*NumVcs+v] returns one credit for output p, VC v;
  // credit_out_o[p*NumVcs+v] returns one for input p, VC v (a flit left that buffer)
  input  logic [P*NumVcs-1:0]             credit_in_i,
  output logic [P*NumVcs-1:0]             credit_out_o,
  // status
  output logic                            overflow_o,      // sticky: a flit hit a full VC
  output logic [7:0]                      occupancy_o,     // flits held
  // debug read of one input VC's occupancy (port * NumVcs + vc), for the watchdog's report
  input  logic [4:0]                      dbg_vc_i,
  output logic [3:0]                      dbg_count_o
);
  import noc_pkg::*;

  if (NumLocal != 1 && NumLocal != 4) begin : g_bad_num_local
    $error("noc_router: NumLocal must be 1 or 4");
  end

  // Whether output port o ejects into this chip, and where a packet arriving on input p ejects.
  function automatic logic is_local(int o);
    return o == int'(PortLocal) || o >= NumPorts;
  endfunction
  function automatic logic [PortW-1:0] eject_port(int p);
    if (NumLocal == 1 || p == 0 || p >= NumPorts) return PortLocal;
    return (p == int'(PortXPos)) ? PortLocal : PortW'(p + 3);
  endfunction

  localparam int unsigned V      = NumVcs;
  localparam int unsigned PtrW   = $clog2(MaxDepth);
  localparam int unsigned CntW   = $clog2(MaxDepth + 1);
  localparam int unsigned OccW   = $clog2(P * V * MaxDepth + 1);

  // Input VC buffers.
  logic [DataW-1:0] buf_data [P][V][MaxDepth];
  logic             buf_head [P][V][MaxDepth];
  logic             buf_tail [P][V][MaxDepth];
  logic [PtrW-1:0]  rd_ptr   [P][V];
  logic [PtrW-1:0]  wr_ptr   [P][V];
  logic [CntW-1:0]  count    [P][V];
  logic [OccW-1:0]  port_count [P];  // flits held per input port (lets idle ports be skipped)
  // Input VC state: the output port and VC the packet at the front holds.
  logic             ivc_active [P][V];
  logic [PortW-1:0] ivc_port   [P][V];
  logic [VcW-1:0]   ivc_vc     [P][V];
  // Output VC state.
  logic             ovc_busy [P][V];
  logic [CntW-1:0]  credits  [P][V];
  // Round-robin pointers.
  logic [PortW+VcW-1:0] rr_va [P][V];  // per output VC: next input {port, VC} to favour
  logic [VcW-1:0]   rr_sa_in  [P];     // per input port, over its VCs
  logic [PortW-1:0] rr_sa_out [P];     // per output port, over input ports
  // Outputs, packed as the ports are. The block works on out_w/credit_w (blocking, like the
  // rest of its state) and hands them to the output registers with a non-blocking
  // assignment, so logic clocked on the same edge elsewhere (the chip) reads the old value.
  logic [P-1:0][FlitW-1:0] out_w, out_q;
  logic [P*V-1:0]          credit_w, credit_q;
  logic                    out_any;  // some output or credit was sent last cycle
  logic [OccW-1:0]  occupancy;
  logic             overflow_q;
  logic             dropping [P][V];  // a local input VC is discarding the rest of a dropped packet
  logic [CntW-1:0]  drop_credits [P][V];  // credits of dropped flits not yet returned
  logic [OccW-1:0]  drop_pending;         // their sum
  logic [15:0]      drops_q;
  logic [CntW-1:0]  depth_q;    // buffer depth in use (buf_depth_i sampled in reset)

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int p = 0; p < P; p++) begin
        for (int v = 0; v < V; v++) begin
          rd_ptr[p][v]     = '0;
          wr_ptr[p][v]     = '0;
          count[p][v]      = '0;
          ivc_active[p][v] = 1'b0;
          ovc_busy[p][v]   = 1'b0;
          credits[p][v]    = buf_depth_i;
          rr_va[p][v]      = '0;
        end
        rr_sa_in[p]  = '0;
        rr_sa_out[p] = '0;
        port_count[p] = '0;
      end
      out_w      = '0;
      credit_w   = '0;
      out_q      <= '0;
      credit_q   <= '0;
      out_any    = 1'b0;
      occupancy  = '0;
      overflow_q = 1'b0;
      depth_q    = buf_depth_i;
      drops_q    = '0;
      drop_pending = '0;
      for (int p = 0; p < P; p++) begin
        for (int v = 0; v < V; v++) begin
          dropping[p][v]     = 1'b0;
          drop_credits[p][v] = '0;
        end
      end
    end else begin
      automatic logic busy_before = (occupancy != '0);
      // Outputs of the previous cycle are gone.
      if (out_any) begin
        for (int p = 0; p < P; p++) out_w[p][FlitW-1] = 1'b0;
        credit_w = '0;
        out_any  = 1'b0;
      end

      if (busy_before) begin
        // ---- VC allocation: each free output VC grants one waiting head flit (round-robin).
        // Class rule (see the header): the hop over the dateline, and any hop of a packet
        // already in class 1 of this ring, takes class 1; a packet that will cross the
        // dateline later takes class 0; any other packet may take either class.
        // Requests are gathered as bit masks over the input VCs (bit p*V + v), one per output
        // port and class, so an output VC with no candidate costs one test.
        automatic logic [P*V-1:0] req     [P][2];
        automatic logic [P*V-1:0] granted = '0;
        automatic logic           any_want = 1'b0;
        for (int o = 0; o < P; o++) begin
          req[o][0] = '0;
          req[o][1] = '0;
        end
        for (int p = 0; p < P; p++) begin
          if (port_count[p] != '0) begin
            for (int v = 0; v < V; v++) begin
              if ((count[p][v] != '0) && !ivc_active[p][v] && buf_head[p][v][rd_ptr[p][v]]) begin
                automatic logic [15:0] d = buf_data[p][v][rd_ptr[p][v]][15:0];  // dst_y, dst_x
                automatic logic [PortW-1:0] o = route_in_slice(my_x_i, my_y_i, d[7:0], d[15:8], size_x_i, size_y_i,
                                                               slice_i[23:16], slice_i[31:24]);
                automatic logic [1:0] cls = 2'b11;  // bit c: class c allowed
                if (o == PortLocal) o = eject_port(p);
                if (!is_local(int'(o))) begin
                  if (crosses_dateline(o, my_x_i, my_y_i, size_x_i, size_y_i) ||
                      ((port_dim(o) == port_dim(PortW'(p))) && (v >= V / 2))) begin
                    cls = 2'b10;
                  end else if (crosses_ahead(o, my_x_i, my_y_i, d[7:0], d[15:8])) begin
                    cls = 2'b01;
                  end
                end
                if (cls[0]) req[o][0][p * V + v] = 1'b1;
                if (cls[1]) req[o][1][p * V + v] = 1'b1;
                any_want = 1'b1;
              end
            end
          end
        end
        if (any_want) begin
          for (int o = 0; o < P; o++) begin
            if ((req[o][0] | req[o][1]) != '0) begin
              for (int w = 0; w < V; w++) begin
                // Ejection may use any VC; network ports only the VC's own class.
                automatic logic [P*V-1:0] cand = (is_local(o) ? (req[o][0] | req[o][1])
                                                   : req[o][(w >= V / 2) ? 1 : 0]) & ~granted;
                if (!ovc_busy[o][w] && (cand != '0)) begin
                  // The first candidate at or after the round-robin pointer.
                  automatic int unsigned pick = 0;
                  automatic logic found = 1'b0;
                  for (int i = 0; i < P * V; i++) begin
                    automatic int unsigned j = int'(rr_va[o][w]) + i;
                    if (j >= P * V) j = j - P * V;
                    if (!found && cand[j]) begin
                      found = 1'b1;
                      pick  = j;
                    end
                  end
                  begin
                    automatic logic [PortW-1:0] ip = PortW'(pick >> VcW);
                    automatic logic [VcW-1:0]   iv = VcW'(pick);
                    assert (!ivc_active[ip][iv])
                      else $error("noc_router: input %0d VC %0d granted a second output VC", ip, iv);
                    granted[pick]      = 1'b1;
                    ivc_active[ip][iv] = 1'b1;
                    ivc_port[ip][iv]   = PortW'(o);
                    ivc_vc[ip][iv]     = VcW'(w);
                    ovc_busy[o][w]     = 1'b1;
                    rr_va[o][w]        = (PortW+VcW)'((pick + 1 == P * V) ? 0 : pick + 1);
                  end
                end
              end
            end
          end
        end

        // ---- Switch allocation, separable and round-robin, in two iterations: each input
        // port offers one ready VC, each output port takes one input port; inputs that
        // lost then offer a VC bound for an output still free. Winners cross the switch.
        begin
          automatic logic           in_done [P];
          automatic logic           out_won [P];
          automatic logic           retry = 1'b1;  // an input offered a flit and lost
          for (int p = 0; p < P; p++) begin
            in_done[p] = 1'b0;
            out_won[p] = 1'b0;
          end
          for (int iter = 0; iter < 2; iter++) begin
            automatic logic           in_req [P];
            automatic logic [VcW-1:0] in_vc  [P];
            automatic logic           any_req = 1'b0;
            for (int p = 0; p < P; p++) begin
              in_req[p] = 1'b0;
              in_vc[p]  = '0;
              if (retry && !in_done[p] && (port_count[p] != '0)) begin
                for (int i = 0; i < V; i++) begin
                  automatic logic [VcW-1:0] v = VcW'(int'(rr_sa_in[p]) + i);  // wraps: V = 2^VcW
                  if (!in_req[p] && (count[p][v] != '0) && ivc_active[p][v] &&
                      !out_won[ivc_port[p][v]] && (credits[ivc_port[p][v]][ivc_vc[p][v]] != '0)) begin
                    in_req[p] = 1'b1;
                    in_vc[p]  = v;
                    any_req   = 1'b1;
                  end
                end
              end
            end
            for (int o = 0; o < P && any_req; o++) begin
              for (int i = 0; i < P; i++) begin
                automatic int p = (int'(rr_sa_out[o]) + i >= P) ? int'(rr_sa_out[o]) + i - P
                                                                 : int'(rr_sa_out[o]) + i;
                if (!out_won[o] && in_req[p] && (ivc_port[p][in_vc[p]] == PortW'(o))) begin
                  automatic logic [VcW-1:0] v = in_vc[p];
                  automatic logic [PtrW-1:0] r = rd_ptr[p][v];
                  automatic logic [VcW-1:0] w = ivc_vc[p][v];
                  assert (!out_won[o] && !in_done[p])
                    else $error("noc_router: switch grant not one-hot (output %0d, input %0d)", o, p);
                  assert (credits[o][w] != '0)
                    else $error("noc_router: output %0d VC %0d sent a flit without a credit", o, w);
                  assert (count[p][v] != '0)
                    else $error("noc_router: input %0d VC %0d read when empty", p, v);
                  out_won[o] = 1'b1;
                  in_done[p] = 1'b1;
                  out_w[o] = {1'b1, buf_head[p][v][r], buf_tail[p][v][r], w, buf_data[p][v][r]};
                  credits[o][w] = credits[o][w] - CntW'(1);
                  credit_w[p * V + int'(v)] = 1'b1;
                  out_any = 1'b1;
                  rd_ptr[p][v] = PtrW'(r + PtrW'(1));
                  count[p][v] = count[p][v] - CntW'(1);
                  port_count[p] = port_count[p] - OccW'(1);
                  occupancy = occupancy - OccW'(1);
                  if (buf_tail[p][v][r]) begin
                    ivc_active[p][v] = 1'b0;
                    ovc_busy[o][w]   = 1'b0;
                  end
                  rr_sa_in[p]  = VcW'(int'(v) + 1);
                  rr_sa_out[o] = PortW'((p == P - 1) ? 0 : p + 1);
                end
              end
            end
            retry = 1'b0;
            for (int p = 0; p < P; p++) retry = retry || (in_req[p] && !in_done[p]);
          end
        end
      end

      // ---- Credits returned by the downstream routers.
      if (credit_in_i != '0) begin
        for (int p = 0; p < P; p++) begin
          for (int v = 0; v < V; v++) begin
            if (credit_in_i[p * V + v]) begin
              assert (!CheckNeighbours || credits[p][v] < depth_q)
                else $error("noc_router: output %0d VC %0d credits above the buffer depth %0d", p, v, depth_q);
              credits[p][v] = credits[p][v] + CntW'(1);
            end
          end
        end
      end

      // ---- Credits of dropped flits, one per VC and cycle when the VC returns none itself.
      if (drop_pending != '0) begin
        for (int p = 0; p < P; p++) begin
          for (int v = 0; v < V; v++) begin
            if (drop_credits[p][v] != '0 && !credit_w[p * V + v]) begin
              credit_w[p * V + v] = 1'b1;
              out_any = 1'b1;
              drop_credits[p][v] = drop_credits[p][v] - CntW'(1);
              drop_pending = drop_pending - OccW'(1);
            end
          end
        end
      end

      // ---- Arriving flits into their VC buffers.
      for (int p = 0; p < P; p++) begin
        automatic logic [FlitW-1:0] f = in_flit_i[p * FlitW +: FlitW];
        if (f[FlitW-1]) begin
          automatic logic [VcW-1:0] v = f[DataW +: VcW];
          if (is_local(p) && f[FlitW-2] && !in_slice(f[7:0], f[15:8], slice_i)) begin
            dropping[p][v] = 1'b1;  // a head for outside the slice: drop the packet
            drops_q        = drops_q + 16'd1;
          end
          if (is_local(p) && dropping[p][v]) begin
            // the flit is gone, so its buffer slot is free again: return the credit, now or
            // (when a departing flit returns one on this VC this cycle) in a later cycle
            drop_credits[p][v] = drop_credits[p][v] + CntW'(1);
            drop_pending = drop_pending + OccW'(1);
            if (f[FlitW-3]) dropping[p][v] = 1'b0;
          end else if (count[p][v] == depth_q) begin
            overflow_q = 1'b1;  // the sender ignored its credits: drop and flag
            assert (!CheckNeighbours)
              else $error("noc_router: input %0d VC %0d written when full (the sender ignored its credits)", p, v);
          end else begin
            buf_data[p][v][wr_ptr[p][v]] = f[DataW-1:0];
            buf_head[p][v][wr_ptr[p][v]] = f[FlitW-2];
            buf_tail[p][v][wr_ptr[p][v]] = f[FlitW-3];
            wr_ptr[p][v] = PtrW'(wr_ptr[p][v] + PtrW'(1));
            count[p][v]  = count[p][v] + CntW'(1);
            port_count[p] = port_count[p] + OccW'(1);
            occupancy    = occupancy + OccW'(1);
          end
        end
      end
      out_q    <= out_w;
      credit_q <= credit_w;
    end
  end

  assign out_flit_o   = out_q;
  assign credit_out_o = credit_q;
  assign dbg_count_o  = (int'(dbg_vc_i) < P * V) ? 4'(count[int'(dbg_vc_i) / V][int'(dbg_vc_i) % V]) : 4'd0;
  assign overflow_o  = overflow_q;
  assign drops_o     = drops_q;
  assign occupancy_o = 8'(occupancy);  // fits while P * NumVcs * MaxDepth < 256 (the chip: 8 x 2 x 8)
endmodule
