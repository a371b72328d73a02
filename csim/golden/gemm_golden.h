/*
 * gemm_golden: the golden result of the chip's GEMM kernel (fw/gemm.h, docs/gemm.md): the
 * MXU's accumulation order (mxu_golden_fpu, on the host FPU; mxu_golden, the soft-float
 * reference it is held to, stays for the tests), then the epilogue the vector unit applies on the
 * way out (ReLU, then the round to bf16), and the comparison the CLI and the tests share.
 */
#ifndef GOLDEN_GEMM_GOLDEN_H
#define GOLDEN_GEMM_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first difference between a result and the golden one. */
typedef struct {
  size_t mismatches;  /* elements that differ */
  size_t first;       /* index of the first, when mismatches > 0 */
  uint32_t got, want; /* its values */
} golden_diff_t;

/* C = A x B on an MXU with `rows` rows, then ReLU and/or the round to bf16 (out then holds
 * bf16 bits in the low 16 bits). a: M x K bf16, b: K x N bf16, out: M x N; row-major. */
void gemm_golden(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, bool relu,
                 bool bf16_out, uint32_t *out);

/* Compares `got` (M x N) with gemm_golden's result. Returns 0, or -1 when out of memory. */
int gemm_golden_check(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, bool relu,
                      bool bf16_out, const uint32_t *got, golden_diff_t *d);

/* The same for the `count` rows listed in `which` only: a big GEMM's check when every row would
 * take too long (d->first indexes the whole M x N result). 0, or -1 when out of memory or a
 * listed row is not below M. */
int gemm_golden_check_rows(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                           bool relu, bool bf16_out, const uint32_t *got, const size_t *which, size_t count,
                           golden_diff_t *d);

/* Compares n values. */
void golden_compare(const uint32_t *got, const uint32_t *want, size_t n, golden_diff_t *d);

#endif
