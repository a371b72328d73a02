/*
 * chip_gemm: runs C = A x B on one chip the way TPU software does: the host lays the
 * matrices out in HBM, the firmware GEMM kernel (fw/gemm.h) builds the compute and DMA
 * programs, the chip runs them to completion, and the host reads C back from HBM.
 *
 * HBM layout: A (M x lda bf16, lda = K rounded up to even, zero-padded; or A^T, K x M
 * rounded up to even), then B (K x ldb bf16, ldb = N rounded up to even; or B^T, N x K
 * rounded up to even), then C (M x N fp32), then one zero VMEM line, each at a 64-byte
 * boundary. A and B get room for the larger of their two layouts, so the addresses do not
 * depend on the options.
 */
#ifndef CHIP_GEMM_H
#define CHIP_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/hal.h"
#include "chip/chip.h"
#include "profile/profile.h"

typedef struct {
  uint64_t cycles;                 /* programs started .. chip idle */
  uint64_t hbm_bytes, dma_busy_cycles, mxu_busy_cycles;
  uint64_t compute, weight_load, weight_stall, input_stall, mxu_idle;  /* MXU counters */
  size_t compute_cmds, dma_cmds;
} chip_gemm_stats_t;

/* HBM bytes a GEMM of this shape needs on a chip whose MXU has `cols` columns. */
uint64_t chip_gemm_hbm_bytes(unsigned cols, size_t m, size_t k, size_t n);

typedef struct {
  bool relu;      /* ReLU on the way out */
  bool bf16_out;  /* round C to bf16 on the way out (out then holds bf16 in the low 16 bits) */
  unsigned k_panel; /* K tiles per activation panel; 0: the firmware chooses (docs/gemm.md) */
  bool b_transposed; /* keep B^T in HBM (as a layer's weights are, seen from the backward pass)
                        and load its tiles transposed; b is still K x N */
  bool a_transposed; /* keep A^T in HBM (the activations X of a weight gradient X^T dY) and make
                        the activation lines with transposing DMAs (square MXUs); a is still M x K */
  profile_t *profile; /* the GEMM's kernel phases (fw/gemm.c's fw_prog_mark) go to this profile as
                         chip profile_chip's (the caller has attached the chip and set the host's
                         phase: profile_phase, pod_phase); NULL: none */
  unsigned profile_chip;
} chip_gemm_opts_t;

/* 0 when the firmware can run this shape with these options (NULL: none) on a chip of
 * geometry g (HBM, VMEM, accumulator and queue sizes: it builds the programs), else -1 with
 * a message. chip_gemm and chip_gemm_load then fail only when the run does. */
int chip_gemm_check(const chip_geometry_t *g, size_t m, size_t k, size_t n, const chip_gemm_opts_t *opts, char *err,
                    size_t errlen);

/* a: M x K bf16, b: K x N bf16, out: M x N fp32 bits (bf16 bits with opts->bf16_out),
 * row-major; opts may be NULL. Returns 0, or -1 with a message (shape too large for HBM
 * or the queues, a chip error, a timeout). */
int chip_gemm(chip_t *c, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
              uint32_t *out, const chip_gemm_opts_t *opts, chip_gemm_stats_t *st, char *err, size_t errlen);

/* The two halves of chip_gemm, for chips that run inside a pod: put A and B in HBM and
 * load the programs (cmds gets the compute and DMA command counts, may be NULL); after
 * the run, read C (chip_gemm_c_addr: where it is in HBM). */
int chip_gemm_load(chip_t *c, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                   const chip_gemm_opts_t *opts, size_t cmds[2], char *err, size_t errlen);
int chip_gemm_read(chip_t *c, size_t m, size_t k, size_t n, bool bf16_out, uint32_t *out);
uint64_t chip_gemm_c_addr(unsigned cols, size_t m, size_t k, size_t n);

/* For a host that reaches the chip some other way (the SystemC host model, docs/systemc.md):
 * where chip_gemm_load puts A, B, C and the zero line in HBM (the layout above; lda and ldb
 * are the pitches in bf16 of A's and B's rows as written, K and N rounded up to even, the
 * padding zeros; chip_gemm_place writes them), and the programs it loads, a compute and a DMA program per core (cq[c],
 * dq[c] for the chip's cores, initialised by the call; the caller frees them with
 * fw_prog_free). 0, or -1 with a message. */
typedef struct {
  uint64_t a, b, c, zero, end;
  size_t lda, ldb;
} chip_gemm_layout_t;
chip_gemm_layout_t chip_gemm_layout(unsigned cols, size_t m, size_t k, size_t n);
/* What chip_gemm_load writes into HBM, A and B in the layout above (opts' transposes; NULL:
 * none) and the zero line, written row by row through write(ctx, addr, data, len), which
 * returns 0 (or non-zero to stop). 0, -1 when out of memory, -2 when a write was refused. */
typedef int (*chip_gemm_write_t)(void *ctx, uint64_t addr, const void *data, size_t len);
int chip_gemm_place(unsigned cols, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                    const chip_gemm_opts_t *opts, chip_gemm_write_t write, void *ctx);
int chip_gemm_programs(const chip_geometry_t *g, size_t m, size_t k, size_t n, const chip_gemm_opts_t *opts,
                       fw_prog_t cq[CHIP_MAX_CORES], fw_prog_t dq[CHIP_MAX_CORES], char *err, size_t errlen);

#endif
