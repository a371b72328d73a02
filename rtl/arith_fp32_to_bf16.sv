// fp32 -> bf16 converter, round to nearest even.
// Latency 1 cycle, throughput 1 per cycle: result_o and valid_o are registered.
module arith_fp32_to_bf16 (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        valid_i,
  input  logic [31:0] a_i,
  output logic        valid_o,
  output logic [15:0] result_o
);
  import arith_pkg::fp32_to_bf16;

  logic        valid_q;
  logic [15:0] result_q;

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
      result_q <= fp32_to_bf16(a_i);
    end
  end

  assign valid_o  = valid_q;
  assign result_o = result_q;
endmodule
