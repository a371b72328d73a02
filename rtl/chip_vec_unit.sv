// The chip's vector unit (docs/isa.md, opcode VEC): operations over VMEM lines, one line of
// C fp32 lanes per cycle: add, subtract, multiply, max, ReLU, multiply by a scalar, fp32 ->
// bf16 (RNE), bf16 -> fp32, copy; for training, ReLU's derivative mask, a + scalar * b,
// e^a, 1/a, 1/sqrt(a) and erf(a), reductions across a line's lanes (sum, max: a pairwise
// tree, broadcast) and across lines (sum, max: folded in line order into one line, written
// after the last). A binary operation with b_repeat reads the one line b for every row.
//
// Ordering within the compute queue: a VEC command starts once every MXU load, matmul and
// store issued before it has finished its VMEM accesses (snapshots of the MXU unit's
// progress counters), so "MXU_STORE, VEC" needs no fence. Its lanes are evaluated only
// while it runs, so an idle vector unit costs nothing per cycle.
module chip_vec_unit #(
  parameter int unsigned Cols      = 4,
  parameter int unsigned VmemLines = 1024,
  localparam int unsigned LineW    = 32 * Cols
) (
  input  logic                         clk_i,
  input  logic                         rst_ni,
  input  logic                         cmd_valid_i,
  output logic                         cmd_ready_o,
  input  chip_isa_pkg::cmd_u           cmd_i,
  // progress of earlier MXU work (issued counts are sampled at acceptance)
  input  logic [31:0]                  loads_issued_i,
  input  logic [31:0]                  loads_done_i,
  input  logic [31:0]                  matmuls_issued_i,
  input  logic [31:0]                  matmuls_done_i,
  input  logic [31:0]                  stores_issued_i,
  input  logic [31:0]                  stores_done_i,
  // own progress, for release fences and the MXU unit's ordering
  output logic [31:0]                  vecs_issued_o,
  output logic [31:0]                  vecs_done_o,
  output logic                         busy_o,
  // VMEM: two read ports, one write port
  output logic [$clog2(VmemLines)-1:0] a_raddr_o,
  input  logic [LineW-1:0]             a_rdata_i,
  output logic [$clog2(VmemLines)-1:0] b_raddr_o,
  input  logic [LineW-1:0]             b_rdata_i,
  output logic                         we_o,
  output logic [$clog2(VmemLines)-1:0] waddr_o,
  output logic [LineW-1:0]             wdata_o
);
  import chip_isa_pkg::*;
  import arith_pkg::*;

  localparam int unsigned LineAw = $clog2(VmemLines);

  // One pending command behind the running one.
  typedef struct packed {
    vec_op_e           op;
    logic              b_repeat;
    logic [LineAw-1:0] a, b, dst;
    logic [31:0]       rows;
    logic [31:0]       scalar;
  } vec_t;

  vec_t        pend_q, cur_q;
  logic [31:0] pend_loads_q, pend_matmuls_q, pend_stores_q;  // MXU work that must finish first
  logic        pend_valid_q, cur_active_q;
  logic [31:0] row_q, issued_q, done_q;

  vec_t in_cmd;  // the command processor checked every field before issuing the command
  assign in_cmd = '{op: vec_op_e'(cmd_i.vec.op[VecOpBits-1:0]), b_repeat: cmd_i.vec.b_repeat,
                    a: LineAw'(cmd_i.vec.a), b: LineAw'(cmd_i.vec.b),
                    dst: LineAw'(cmd_i.vec.dst), rows: cmd_i.vec.rows, scalar: cmd_i.vec.scalar};
  assign cmd_ready_o = !pend_valid_q;

  logic cur_last, cur_step, start;
  assign cur_step = cur_active_q;
  assign cur_last = cur_active_q && (row_q + 32'd1 == cur_q.rows);
  assign start    = pend_valid_q && (!cur_active_q || cur_last) &&
                    (loads_done_i >= pend_loads_q) && (matmuls_done_i >= pend_matmuls_q) &&
                    (stores_done_i >= pend_stores_q);

  assign a_raddr_o = cur_q.a + LineAw'(row_q);
  assign b_raddr_o = cur_q.b + (cur_q.b_repeat ? '0 : LineAw'(row_q));
  // A line reduction folds each line into acc_q and writes once, the last line's cycle, to dst.
  logic             cur_reduces;
  logic [LineW-1:0] acc_q;
  assign cur_reduces = vec_reduces_lines(cur_q.op);
  assign we_o        = cur_step && (!cur_reduces || cur_last);
  assign waddr_o     = cur_q.dst + (cur_reduces ? '0 : LineAw'(row_q));

  // a > +0: not a zero (or a subnormal, which reads as zero), not negative, not a NaN.
  function automatic logic fp32_positive(logic [31:0] a);
    return !a[31] && a[30:23] != 8'd0 && !(a[30:23] == 8'hFF && a[22:0] != '0);
  endfunction

  // e^a and 1/a (docs/numerics.md, "Exponential and reciprocal"): fp32 adds and multiplies
  // in a fixed order, then an exact scaling by a power of two. Modelled at one line per
  // cycle, like every operation (a pipelined unit in hardware).
  localparam logic [31:0] Fp32One = 32'h3F80_0000, Fp32Inf = 32'h7F80_0000, Fp32Sign = 32'h8000_0000;
  localparam logic [31:0] ExpLog2e = 32'h3FB8_AA3B, ExpRounder = 32'h4B40_0000;  // log2 e, 1.5 * 2^23
  localparam logic [31:0] ExpLn2Hi = 32'h3F31_7200, ExpLn2Lo = 32'h35BF_BE8E;   // ln 2 = Hi + Lo
  localparam logic [31:0] RecipA = 32'h3FB4_B4B5, RecipB = 32'hBEF0_F0F1;        // 24/17, -8/17
  localparam logic [31:0] ExpCoef [8] = '{32'h3F80_0000, 32'h3F80_0000, 32'h3F00_0000, 32'h3E2A_AAAB,
                                          32'h3D2A_AAAB, 32'h3C08_8889, 32'h3AB6_0B61, 32'h3950_0D01};

  function automatic logic [31:0] fp32_exp(logic [31:0] x);
    logic [31:0] t, kf, r, p;
    logic signed [9:0] k, biased;
    if (x[30:23] == 8'hFF && x[22:0] != '0) return Fp32CanonNan;
    if (x[30:23] >= 8'd134) return x[31] ? 32'd0 : Fp32Inf;  // |x| >= 128, infinities too
    t  = fp32_add(fp32_mul(x, ExpLog2e), ExpRounder);          // round(x log2 e) in the low bits
    k  = 10'($signed({1'b0, t[22:0]}) - 24'sh40_0000);
    kf = fp32_add(t, ExpRounder | Fp32Sign);
    r  = fp32_add(fp32_add(x, fp32_mul(kf, ExpLn2Hi | Fp32Sign)), fp32_mul(kf, ExpLn2Lo | Fp32Sign));
    p  = ExpCoef[7];
    for (int i = 6; i >= 0; i--) p = fp32_add(fp32_mul(p, r), ExpCoef[i]);
    biased = 10'($signed({2'b0, p[30:23]})) + k;
    if (biased >= 10'sd255) return Fp32Inf;
    if (biased <= 10'sd0) return 32'd0;
    return {1'b0, biased[7:0], p[22:0]};
  endfunction

  function automatic logic [31:0] fp32_recip(logic [31:0] x);
    logic [31:0] m, y, err;
    logic signed [9:0] biased;
    if (x[30:23] == 8'hFF) return x[22:0] != '0 ? Fp32CanonNan : {x[31], 31'd0};  // 1/Inf = 0
    if (x[30:23] == 8'h00) return {x[31], 8'hFF, 23'd0};  // zero and subnormals: Inf
    m = {9'h07F, x[22:0]};                                // the significand, in [1, 2)
    y = fp32_add(RecipA, fp32_mul(RecipB, m));
    for (int i = 0; i < 3; i++) begin
      err = fp32_add(Fp32One, fp32_mul(m, y) ^ Fp32Sign);
      y   = fp32_add(y, fp32_mul(y, err));
    end
    biased = 10'($signed({2'b0, y[30:23]})) - (10'($signed({2'b0, x[30:23]})) - 10'sd127);
    if (biased <= 10'sd0) return {x[31], 31'd0};          // below 2^-126: flushed
    return {x[31], biased[7:0], y[22:0]};
  endfunction

  // 1/sqrt(a) and erf(a) (docs/numerics.md, "Reciprocal square root", "Error function").
  localparam logic [31:0] Fp32Half = 32'h3F00_0000, RsqrtMagic = 32'h5F37_59DF;
  localparam logic [31:0] ErfTiny = 32'h3580_0000;                                    // 2^-20
  localparam logic [31:0] ErfUp = 32'h4B80_0000, ErfDown = 32'h3380_0000;             // 2^24, 2^-24
  localparam logic [31:0] ErfTwo = 32'h4000_0000, ErfFour = 32'h4080_0000;
  localparam logic [31:0] ErfC1 = 32'h3FC0_0000, ErfC2 = 32'h4040_0000;               // 1.5, 3
  localparam logic [31:0] ErfQ0 [7] = '{32'h3E03_75D4, 32'hBEC0_939F, 32'h3DE7_168C, 32'hBCDB_FD9C,
                                        32'h3BAA_0B1B, 32'hBA52_35A0, 32'h38A5_4ED6};
  localparam logic [31:0] ErfQ1 [11] = '{32'h3D0A_D554, 32'hBDF3_91B9, 32'h3E36_AD4B, 32'hBE0E_150F,
                                         32'h3D36_AD68, 32'h3C73_A4D6, 32'hBC9E_55D4, 32'h3B9A_0C38,
                                         32'h3B1B_CC06, 32'hBAC9_E7A2, 32'h3825_78B8};
  localparam logic [31:0] ErfQ2 [11] = '{32'h37B9_509D, 32'hB911_E8A9, 32'h39DA_FF28, 32'hBA4F_6791,
                                         32'h3A88_FAEA, 32'hBA83_B224, 32'h3A40_AD10, 32'hB9DB_1B24,
                                         32'h3913_FA4F, 32'h376D_303A, 32'hB7B9_8885};

  function automatic logic [31:0] fp32_rsqrt(logic [31:0] x);
    logic [31:0] y, r;
    if (x[30:23] == 8'hFF && x[22:0] != '0) return Fp32CanonNan;
    if (x[30:23] == 8'h00) return {x[31], 8'hFF, 23'd0};  // +-0 and subnormals: +-Inf
    if (x[31]) return Fp32CanonNan;                       // negative, -Inf included
    if (x[30:23] == 8'hFF) return 32'd0;                  // 1/sqrt(+Inf)
    y = RsqrtMagic - {1'b0, x[31:1]};                     // the integer estimate
    for (int i = 0; i < 3; i++) begin                     // y += y (1 - x y^2) / 2
      r = fp32_add(Fp32One, fp32_mul(fp32_mul(x, y), y) ^ Fp32Sign);
      y = fp32_add(y, fp32_mul(y, fp32_mul(r, Fp32Half)));
    end
    return y;
  endfunction

  function automatic logic [31:0] fp32_erf(logic [31:0] x);
    logic [31:0] a, z, t, p, r, s;
    a = {1'b0, x[30:0]};
    if (a > Fp32Inf) return Fp32CanonNan;
    if (a[30:23] == 8'h00) return {x[31], 31'd0};         // +-0 and subnormals
    if (a >= ErfFour) return {x[31], Fp32One[30:0]};      // 1 - erf(4) < 2^-25; Inf too
    if (a < ErfTiny) begin                                // x + x q0(0), x scaled by 2^24 and back
      s = fp32_mul(a, ErfUp);
      r = fp32_mul(fp32_add(s, fp32_mul(s, ErfQ0[0])), ErfDown);
    end else if (a < Fp32One) begin                       // x + x q0(x^2)
      z = fp32_mul(a, a);
      p = ErfQ0[6];
      for (int i = 5; i >= 0; i--) p = fp32_add(fp32_mul(p, z), ErfQ0[i]);
      r = fp32_add(a, fp32_mul(a, p));
    end else begin                                        // 1 - q(|x| - c), the subtraction exact
      t = fp32_add(a, (a >= ErfTwo ? ErfC2 : ErfC1) | Fp32Sign);
      p = a >= ErfTwo ? ErfQ2[10] : ErfQ1[10];
      for (int i = 9; i >= 0; i--) p = fp32_add(fp32_mul(p, t), a >= ErfTwo ? ErfQ2[i] : ErfQ1[i]);
      r = fp32_add(Fp32One, p ^ Fp32Sign);
      if (r > Fp32One) r = Fp32One;                       // at most 1
    end
    return {x[31], r[30:0]};
  endfunction

  // One lane of an element-wise operation (fp32 in and out).
  function automatic logic [31:0] lane(vec_op_e op, logic [31:0] a, logic [31:0] b,
                                       logic [31:0] scalar);
    unique case (op)
      VecAdd:    return fp32_add(a, b);
      VecSub:    return fp32_add(a, {~b[31], b[30:0]});
      VecMul:    return fp32_mul(a, b);
      VecMax:    return fp32_max(a, b);
      VecRelu:   return fp32_max(a, 32'd0);
      VecScale:  return fp32_mul(a, scalar);
      VecCopy:   return a;
      VecReluGrad: return fp32_positive(a) ? b : 32'd0;
      VecAxpy:   return fp32_add(a, fp32_mul(b, scalar));
      VecExp:    return fp32_exp(a);
      VecRecip:  return fp32_recip(a);
      VecRsqrt:  return fp32_rsqrt(a);
      VecErf:    return fp32_erf(a);
      default: return '0;
    endcase
  endfunction

  // A line's lanes combined pairwise: lanes i and i + step for step = 1, 2, 4, ... (i a
  // multiple of 2 step); lane 0 ends with the sum (sum) or the largest.
  function automatic logic [31:0] lane_tree(logic [LineW-1:0] line, logic sum);
    logic [31:0] t [Cols];
    for (int l = 0; l < Cols; l++) t[l] = line[32 * l +: 32];
    for (int step = 1; step < Cols; step = 2 * step) begin
      for (int i = 0; i + step < Cols; i = i + 2 * step) begin
        t[i] = sum ? fp32_add(t[i], t[i + step]) : fp32_max(t[i], t[i + step]);
      end
    end
    return t[0];
  endfunction

  // The lanes: evaluated only while a command runs. Conversions repack: to bf16, lane l of
  // the result holds bf16 lanes 2l and 2l+1 (the low half of the line; the high half is
  // zero); to fp32, lane l reads bf16 lane l from the low half of the source line. A lane
  // reduction puts lane_tree's result in every lane; a line reduction combines the fold so
  // far (acc_q) with each line after the first.
  always_comb begin
    wdata_o = '0;
    if (cur_active_q) begin
      if (cur_q.op == VecSumLanes || cur_q.op == VecMaxLanes) begin
        wdata_o[31:0] = lane_tree(a_rdata_i, cur_q.op == VecSumLanes);  // once, then copied
        for (int l = 1; l < Cols; l++) wdata_o[32 * l +: 32] = wdata_o[31:0];
      end else begin
        for (int l = 0; l < Cols; l++) begin
          if (cur_q.op == VecToBf16) begin
            if (l < Cols / 2) begin
              wdata_o[32 * l +: 32] = {fp32_to_bf16(a_rdata_i[32 * (2 * l + 1) +: 32]),
                                       fp32_to_bf16(a_rdata_i[32 * (2 * l) +: 32])};
            end
          end else if (cur_q.op == VecToFp32) begin
            wdata_o[32 * l +: 32] = bf16_to_fp32(a_rdata_i[16 * l +: 16]);
          end else if (cur_reduces) begin
            wdata_o[32 * l +: 32] = row_q == 0 ? a_rdata_i[32 * l +: 32] :
                lane(cur_q.op == VecSumLines ? VecAdd : VecMax, acc_q[32 * l +: 32], a_rdata_i[32 * l +: 32],
                     cur_q.scalar);
          end else begin
            wdata_o[32 * l +: 32] = lane(cur_q.op, a_rdata_i[32 * l +: 32], b_rdata_i[32 * l +: 32],
                                         cur_q.scalar);
          end
        end
      end
    end
  end

  // The fold so far: a data register, read only after the first line wrote it (no reset).
  always_ff @(posedge clk_i) begin
    if (cur_step && cur_reduces) acc_q <= wdata_o;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pend_valid_q <= 1'b0;
      cur_active_q <= 1'b0;
      row_q        <= '0;
      issued_q     <= '0;
      done_q       <= '0;
    end else begin
      if (cmd_valid_i && cmd_ready_o) begin
        pend_q         <= in_cmd;
        pend_loads_q   <= loads_issued_i;
        pend_matmuls_q <= matmuls_issued_i;
        pend_stores_q  <= stores_issued_i;
        pend_valid_q <= 1'b1;
        issued_q     <= issued_q + 32'd1;
      end
      if (start) begin
        cur_q        <= pend_q;
        cur_active_q <= 1'b1;
        row_q        <= '0;
        if (!(cmd_valid_i && cmd_ready_o)) pend_valid_q <= 1'b0;
      end else if (cur_last) begin
        cur_active_q <= 1'b0;
      end else if (cur_step) begin
        row_q <= row_q + 32'd1;
      end
      if (cur_last) done_q <= done_q + 32'd1;
    end
  end

  assign vecs_issued_o = issued_q;
  assign vecs_done_o   = done_q;
  assign busy_o        = pend_valid_q || cur_active_q;
endmodule
