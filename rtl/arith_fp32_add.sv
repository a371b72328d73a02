// fp32 + fp32 adder, round to nearest even.
// Latency 1 cycle, throughput 1 per cycle: sum_o and valid_o are registered.
module arith_fp32_add (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  input  logic [31:0] a_i,
  input  logic [31:0] b_i,
  output logic        valid_o,
  output logic [31:0] sum_o
);
  import arith_pkg::fp32_add;

  logic        valid_q;
  logic [31:0] sum_q;

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
      sum_q <= fp32_add(a_i, b_i);
    end
  end

  assign valid_o = valid_q;
  assign sum_o   = sum_q;
endmodule
