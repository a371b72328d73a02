/*
 * mxu_driver: runs C = A x B on a Verilated MXU (rtl/mxu_top.sv) through its ports, from
 * C arrays: tiles K by the array's rows and N by its columns (zero-padding partial tiles),
 * issues LOAD_WEIGHTS / MATMUL commands, streams weight and activation rows whenever the
 * MXU is ready, then reads the accumulator back. Also holds the GEMM timing contract.
 *
 * Accumulator layout: output column tile t (columns tC..tC+C-1) lives in accumulator rows
 * t*M .. t*M+M-1, so a GEMM needs ceil(N/C) * M <= accumulator depth.
 */
#ifndef MXU_DRIVER_H
#define MXU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmodel/vmodel.h"

typedef struct {
  vmodel_t *model;
  unsigned rows, cols, acc_depth;
  int p_cmd_valid, p_cmd_ready, p_cmd_op, p_cmd_addr, p_cmd_rows, p_cmd_accum;
  int p_w_valid, p_w_ready, p_w_row, p_a_valid, p_a_ready, p_a_row;
  int p_rd_en, p_rd_addr, p_rd_data, p_busy, p_error, p_w_transpose;
  int p_cnt[5];
  /* Optional: called about every 1024 cycles of a GEMM (for progress on stderr). */
  void (*progress)(void *ctx, uint64_t cycles, uint64_t expected);
  void *progress_ctx;
  /* Optional: when nonzero, the driver withholds data and commands at random (about one
   * cycle in three, from this seed) to exercise back-pressure; results must not change. */
  /* Optional: each tile is loaded transposed, row j of the load being B's column j, as a
   * GEMM against a transposed operand feeds it (square MXUs only): C = A x B all the same,
   * in the same cycles (docs/mxu.md, "Transposed loads"). b is still K x N. */
  bool b_transposed;
  uint64_t stall_seed;
} mxu_dev_t;

/* RTL performance counters, as deltas over one GEMM (names as in rtl/mxu_control.sv). */
typedef struct {
  uint64_t compute;       /* cycles an activation row entered the array */
  uint64_t weight_load;   /* cycles a weight row was loaded */
  uint64_t weight_stall;  /* cycles a matmul waited for its weights */
  uint64_t input_stall;   /* cycles a matmul waited for activation data */
  uint64_t idle;          /* cycles with nothing queued, running or in flight */
} mxu_counters_t;

typedef struct {
  uint64_t cycles;          /* first command accepted .. last accumulator write, inclusive */
  uint64_t readout_cycles;  /* reading the results back out of the accumulator */
  uint64_t tiles;           /* F = ceil(K/R) * ceil(N/C) */
  mxu_counters_t counters;
} mxu_gemm_stats_t;

/* Opens the rows x cols model (reset randomised from seed). Returns 0, or -1 with a
 * message (e.g. a size not built into this binary). */
int mxu_dev_open(mxu_dev_t *d, unsigned rows, unsigned cols, uint64_t seed, char *err, size_t errlen);
void mxu_dev_close(mxu_dev_t *d);

/* 0 when an M x K by K x N GEMM fits this MXU (or the rows x cols MXU built into this
 * binary), else -1 with a message. */
int mxu_gemm_check_shape(const mxu_dev_t *d, size_t m, size_t k, size_t n, char *err, size_t errlen);
int mxu_gemm_check(unsigned rows, unsigned cols, size_t m, size_t k, size_t n, char *err, size_t errlen);

/* C = A x B. a: M x K bf16, b: K x N bf16, c: M x N fp32 bits, row-major. Returns 0, or -1
 * with a message (bad shape, an MXU error flag, or a hang caught by the watchdog). */
int mxu_gemm(mxu_dev_t *d, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
             uint32_t *c, mxu_gemm_stats_t *stats, char *err, size_t errlen);

/* The timing contract (docs/mxu.md): cycles of mxu_gemm's `cycles` with data ready on
 * every cycle:  R + (F-1)*max(M,R) + M + (R+C-2) + MXU_PIPELINE_CYCLES. */
#define MXU_PIPELINE_CYCLES 5
uint64_t mxu_contract_cycles(unsigned rows, unsigned cols, size_t m, size_t k, size_t n);

#endif
