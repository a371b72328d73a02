// Chip command format (docs/isa.md): opcodes, error codes, field access.
package chip_pkg;

  localparam int unsigned CmdW    = 256;  // 8 x 32-bit words
  localparam int unsigned NumSems = 32;
  localparam logic [7:0]  SemNone = 8'hFF;

  localparam logic [7:0] OpHalt      = 8'h01;
  localparam logic [7:0] OpFence     = 8'h02;
  localparam logic [7:0] OpSemWait   = 8'h03;
  localparam logic [7:0] OpSemSignal = 8'h04;
  localparam logic [7:0] OpDma       = 8'h10;
  localparam logic [7:0] OpMxuLoad   = 8'h20;
  localparam logic [7:0] OpMxuMatmul = 8'h21;
  localparam logic [7:0] OpMxuStore  = 8'h22;
  localparam logic [7:0] OpVec       = 8'h30;
  localparam logic [7:0] OpRdma      = 8'h40;
  localparam int unsigned VecOps     = 9;   // VEC operations 0..8 (docs/isa.md)

  localparam logic [1:0] DmaH2V = 2'd0;
  localparam logic [1:0] DmaV2H = 2'd1;
  localparam logic [1:0] DmaV2V = 2'd2;

  localparam logic [3:0] ErrNone     = 4'd0;
  localparam logic [3:0] ErrOpcode   = 4'd1;
  localparam logic [3:0] ErrQueue    = 4'd2;
  localparam logic [3:0] ErrVmem     = 4'd3;
  localparam logic [3:0] ErrHbm      = 4'd4;
  localparam logic [3:0] ErrAcc      = 4'd5;
  localparam logic [3:0] ErrSize     = 4'd6;
  localparam logic [3:0] ErrSem      = 4'd7;
  localparam logic [3:0] ErrRemote   = 4'd8;

  function automatic logic [31:0] word(logic [CmdW-1:0] cmd, int unsigned i);
    return cmd[32 * i +: 32];
  endfunction

endpackage
