// Verilated top for the arithmetic units: the three units side by side with independent
// ports, so one model tests all of them in the same cycles and runs the `tpusim dot` demo.
module arith_top (
  input  logic        clk_i,
  input  logic        rst_ni,

  input  logic        mul_valid_i,
  input  logic [15:0] mul_a_i,
  input  logic [15:0] mul_b_i,
  output logic        mul_valid_o,
  output logic [31:0] mul_product_o,

  input  logic        add_valid_i,
  input  logic [31:0] add_a_i,
  input  logic [31:0] add_b_i,
  output logic        add_valid_o,
  output logic [31:0] add_sum_o,

  input  logic        cvt_valid_i,
  input  logic [31:0] cvt_a_i,
  output logic        cvt_valid_o,
  output logic [15:0] cvt_result_o
);
  arith_bf16_mul u_mul (
    .clk_i,
    .rst_ni,
    .valid_i   (mul_valid_i),
    .a_i       (mul_a_i),
    .b_i       (mul_b_i),
    .valid_o   (mul_valid_o),
    .product_o (mul_product_o)
  );

  arith_fp32_add u_add (
    .clk_i,
    .rst_ni,
    .valid_i (add_valid_i),
    .a_i     (add_a_i),
    .b_i     (add_b_i),
    .valid_o (add_valid_o),
    .sum_o   (add_sum_o)
  );

  arith_fp32_to_bf16 u_cvt (
    .clk_i,
    .rst_ni,
    .valid_i  (cvt_valid_i),
    .a_i      (cvt_a_i),
    .valid_o  (cvt_valid_o),
    .result_o (cvt_result_o)
  );
endmodule
