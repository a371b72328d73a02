// bf16 x bf16 multiplier producing the exact product in fp32 format.
// Latency 1 cycle, throughput 1 per cycle: product_o and valid_o are registered.
module arith_bf16_mul (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  input  logic [15:0] a_i,
  input  logic [15:0] b_i,
  output logic        valid_o,
  output logic [31:0] product_o
);
  import arith_pkg::bf16_mul;

  logic        valid_q;
  logic [31:0] product_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= 1'b0;
    end else begin
      valid_q <= valid_i;
    end
  end

  // Data needs no reset: valid_q qualifies it.
  always_ff @(posedge clk_i) begin
    if (valid_i) begin
      product_q <= bf16_mul(a_i, b_i);
    end
  end

  assign valid_o   = valid_q;
  assign product_o = product_q;
endmodule
