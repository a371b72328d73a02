// Arithmetic of the TPU datapath: bf16 x bf16 -> exact fp32 product, fp32 + fp32 with
// round-to-nearest-even, fp32 -> bf16 with round-to-nearest-even.
//
// The operations are functions so that replicated datapaths (the MXU's PE array, the
// vector unit's lanes) can call them from loops over 2-D state arrays, which Verilator
// compiles into compact loops instead of one copy per instance. The standalone units
// (arith_bf16_mul, arith_fp32_add, arith_fp32_to_bf16) wrap them with a pipeline register.
//
// Numerics (docs/numerics.md): subnormal inputs and results flush to zero with the sign
// kept; any NaN input, Inf x 0 and Inf - Inf give the canonical quiet NaN.
package arith_pkg;

  localparam logic [31:0] Fp32CanonNan = 32'h7FC0_0000;
  localparam logic [15:0] Bf16CanonNan = 16'h7FC0;

  // Exact product of two bf16 values in fp32 format. The 8-bit significands multiply into
  // 16 bits, which fit fp32's 24: only overflow (-> Inf) and underflow (-> 0) lose value.
  function automatic logic [31:0] bf16_mul(logic [15:0] a, logic [15:0] b);
    logic              sign;
    logic              a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
    logic [15:0]       sig_prod;
    logic signed [9:0] exp_res;
    logic [22:0]       frac_res;
    logic [31:0]       result;

    sign   = a[15] ^ b[15];
    a_zero = (a[14:7] == 8'h00);  // zero, or subnormal flushed to zero
    b_zero = (b[14:7] == 8'h00);
    a_inf  = (a[14:7] == 8'hFF) && (a[6:0] == 7'd0);
    b_inf  = (b[14:7] == 8'hFF) && (b[6:0] == 7'd0);
    a_nan  = (a[14:7] == 8'hFF) && (a[6:0] != 7'd0);
    b_nan  = (b[14:7] == 8'hFF) && (b[6:0] != 7'd0);

    sig_prod = {8'd0, 1'b1, a[6:0]} * {8'd0, 1'b1, b[6:0]};  // in [2^14, 2^16)
    if (sig_prod[15]) begin
      exp_res  = 10'($unsigned(a[14:7])) + 10'($unsigned(b[14:7])) - 10'sd126;
      frac_res = {sig_prod[14:0], 8'd0};
    end else begin
      exp_res  = 10'($unsigned(a[14:7])) + 10'($unsigned(b[14:7])) - 10'sd127;
      frac_res = {sig_prod[13:0], 9'd0};
    end

    if (a_nan || b_nan) begin
      result = Fp32CanonNan;
    end else if (a_inf || b_inf) begin
      result = (a_zero || b_zero) ? Fp32CanonNan : {sign, 8'hFF, 23'd0};
    end else if (a_zero || b_zero) begin
      result = {sign, 31'd0};
    end else if (exp_res >= 10'sd255) begin
      result = {sign, 8'hFF, 23'd0};
    end else if (exp_res <= 10'sd0) begin
      result = {sign, 31'd0};
    end else begin
      result = {sign, exp_res[7:0], frac_res};
    end
    return result;
  endfunction

  // Number of leading zeros of a 27-bit value (27 when it is zero).
  function automatic logic [4:0] clz27(logic [26:0] x);
    logic [4:0] count;
    logic       found;
    count = 5'd0;
    found = 1'b0;
    for (int i = 26; i >= 0; i--) begin
      if (!found && x[i]) found = 1'b1;
      if (!found) count = count + 5'd1;
    end
    return count;
  endfunction

  // fp32 addition, round to nearest even. Significands carry three extra bits below the
  // LSB (guard, round, sticky), which is enough for exact RNE in both effective addition
  // and subtraction.
  function automatic logic [31:0] fp32_add(logic [31:0] a, logic [31:0] b);
    logic              a_zero, b_zero, a_inf, b_inf, a_nan, b_nan;
    logic              swap, sign_big, subtract;
    logic [31:0]       op_big;
    logic [30:0]       mag_small;
    logic [7:0]        exp_diff;
    logic [49:0]       small_shifted;
    logic [26:0]       sig_big, sig_small;
    logic [27:0]       sum;
    logic [25:0]       norm;  // normalised significand without its hidden bit, then G, R, S
    logic [4:0]        lz;
    logic [23:0]       rounded_frac;
    logic              round_up;
    logic signed [9:0] exp_res;
    logic [31:0]       result;

    a_zero = (a[30:23] == 8'h00);
    b_zero = (b[30:23] == 8'h00);
    a_inf  = (a[30:23] == 8'hFF) && (a[22:0] == 23'd0);
    b_inf  = (b[30:23] == 8'hFF) && (b[22:0] == 23'd0);
    a_nan  = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
    b_nan  = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);

    // Order by magnitude; equal magnitudes keep a as the bigger one.
    swap     = (b[30:0] > a[30:0]);
    op_big      = swap ? b : a;
    mag_small   = swap ? a[30:0] : b[30:0];
    sign_big = op_big[31];
    subtract = a[31] ^ b[31];

    exp_diff      = op_big[30:23] - mag_small[30:23];
    sig_big       = {1'b1, op_big[22:0], 3'd0};
    // Shifts of 26 or more leave only sticky; clamping at 30 keeps the sticky bit alive.
    small_shifted = {1'b1, mag_small[22:0], 26'd0} >> ((exp_diff > 8'd30) ? 8'd30 : exp_diff);
    sig_small     = {small_shifted[49:24], |small_shifted[23:0]};

    sum = subtract ? ({1'b0, sig_big} - {1'b0, sig_small})
                   : ({1'b0, sig_big} + {1'b0, sig_small});

    lz = 5'd0;
    if (sum[27]) begin
      norm    = {sum[26:2], |sum[1:0]};
      exp_res = 10'($unsigned(op_big[30:23])) + 10'sd1;
    end else begin
      lz      = clz27(sum[26:0]);
      norm    = 26'(sum[26:0] << lz);
      exp_res = 10'($unsigned(op_big[30:23])) - 10'($unsigned(lz));
    end

    round_up = norm[2] && (norm[1] || norm[0] || norm[3]);
    // The fraction (hidden bit dropped) plus the rounding increment; a carry out of it means
    // 1.11..1 rounded up to 2.0: the exponent steps up and the fraction is zero again.
    rounded_frac = {1'b0, norm[25:3]} + {23'd0, round_up};
    if (rounded_frac[23]) begin
      exp_res = exp_res + 10'sd1;
    end

    if (a_nan || b_nan || (a_inf && b_inf && subtract)) begin
      result = Fp32CanonNan;
    end else if (a_inf || b_inf) begin
      result = {sign_big, 8'hFF, 23'd0};
    end else if (a_zero && b_zero) begin
      result = {a[31] & b[31], 31'd0};  // -0 only for (-0) + (-0)
    end else if (b_zero) begin
      result = a;
    end else if (a_zero) begin
      result = b;
    end else if (sum == 28'd0) begin
      result = 32'd0;  // exact cancellation gives +0 under round-to-nearest
    end else if (exp_res >= 10'sd255) begin
      result = {sign_big, 8'hFF, 23'd0};
    end else if (exp_res <= 10'sd0) begin
      result = {sign_big, 31'd0};  // tiny sums are exact; flush keeping their sign
    end else begin
      result = {sign_big, exp_res[7:0], rounded_frac[22:0]};
    end
    return result;
  endfunction

  // fp32 -> bf16, round to nearest even. An increment of the upper half carries into the
  // exponent by itself, and 0x7F7F_8000 and above round to Inf as RNE requires.
  function automatic logic [15:0] fp32_to_bf16(logic [31:0] a);
    logic        round_up;
    logic [15:0] result;
    round_up = a[15] && ((|a[14:0]) || a[16]);
    if (a[30:23] == 8'hFF) begin
      result = (a[22:0] != 23'd0) ? Bf16CanonNan : {a[31], 8'hFF, 7'd0};
    end else if (a[30:23] == 8'h00) begin
      result = {a[31], 15'd0};
    end else begin
      result = a[31:16] + {15'd0, round_up};
    end
    return result;
  endfunction

  // fp32 x fp32, round to nearest even. The 48-bit significand product is rounded to 24
  // bits as if the exponent range were unbounded; a result below 2^-126 then flushes to a
  // zero with the product's sign, one of 2^128 or more becomes Inf.
  function automatic logic [31:0] fp32_mul(logic [31:0] a, logic [31:0] b);
    logic              sign, a_zero, b_zero, a_inf, b_inf, a_nan, b_nan, round_up;
    logic [47:0]       prod;
    logic [22:0]       frac;
    logic [23:0]       rounded_frac;  // fraction plus the increment; bit 23 is the carry
    logic signed [10:0] exp_res;
    logic [31:0]       result;
    sign   = a[31] ^ b[31];
    a_zero = (a[30:23] == 8'h00);
    b_zero = (b[30:23] == 8'h00);
    a_inf  = (a[30:23] == 8'hFF) && (a[22:0] == 23'd0);
    b_inf  = (b[30:23] == 8'hFF) && (b[22:0] == 23'd0);
    a_nan  = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
    b_nan  = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
    prod   = {24'd0, 1'b1, a[22:0]} * {24'd0, 1'b1, b[22:0]};  // in [2^46, 2^48)
    exp_res = 11'($unsigned(a[30:23])) + 11'($unsigned(b[30:23])) - 11'sd127;
    if (prod[47]) begin
      frac     = prod[46:24];
      round_up = prod[23] && ((|prod[22:0]) || prod[24]);
      exp_res  = exp_res + 11'sd1;
    end else begin
      frac     = prod[45:23];
      round_up = prod[22] && ((|prod[21:0]) || prod[23]);
    end
    rounded_frac = {1'b0, frac} + {23'd0, round_up};
    if (rounded_frac[23]) exp_res = exp_res + 11'sd1;  // 1.11..1 rounded up to 2.0

    if (a_nan || b_nan) begin
      result = Fp32CanonNan;
    end else if (a_inf || b_inf) begin
      result = (a_zero || b_zero) ? Fp32CanonNan : {sign, 8'hFF, 23'd0};
    end else if (a_zero || b_zero) begin
      result = {sign, 31'd0};
    end else if (exp_res >= 11'sd255) begin
      result = {sign, 8'hFF, 23'd0};
    end else if (exp_res <= 11'sd0) begin
      result = {sign, 31'd0};
    end else begin
      result = {sign, exp_res[7:0], rounded_frac[22:0]};
    end
    return result;
  endfunction

  // The larger of two fp32 values; max(+0, -0) = +0; any NaN gives the canonical NaN.
  function automatic logic [31:0] fp32_max(logic [31:0] a, logic [31:0] b);
    logic [31:0] fa, fb;
    logic        a_nan, b_nan, a_bigger;
    a_nan = (a[30:23] == 8'hFF) && (a[22:0] != 23'd0);
    b_nan = (b[30:23] == 8'hFF) && (b[22:0] != 23'd0);
    fa = (a[30:23] == 8'h00) ? {a[31], 31'd0} : a;  // subnormals read as zero
    fb = (b[30:23] == 8'h00) ? {b[31], 31'd0} : b;
    if (fa[30:0] == 31'd0 && fb[30:0] == 31'd0) begin
      a_bigger = !fa[31];                     // +0 beats -0
    end else if (fa[31] != fb[31]) begin
      a_bigger = !fa[31];
    end else begin
      a_bigger = fa[31] ? (fa[30:0] < fb[30:0]) : (fa[30:0] > fb[30:0]);
    end
    if (a_nan || b_nan) return Fp32CanonNan;
    return a_bigger ? fa : fb;
  endfunction

  // bf16 -> fp32, exact; subnormal bf16 -> signed zero, NaN -> canonical.
  function automatic logic [31:0] bf16_to_fp32(logic [15:0] a);
    if (a[14:7] == 8'hFF && a[6:0] != 7'd0) return Fp32CanonNan;
    if (a[14:7] == 8'h00) return {a[15], 31'd0};
    return {a, 16'd0};
  endfunction

endpackage
