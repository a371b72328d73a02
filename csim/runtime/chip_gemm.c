/* chip_gemm: see chip_gemm.h. */
#include "runtime/chip_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/gemm.h"
#include "fw/hal.h"
#include "runtime/prog_load.h"

static uint64_t align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }
static size_t even(size_t x) { return (x + 1) & ~(size_t)1; }
static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

typedef chip_gemm_layout_t layout_t;

static layout_t layout(unsigned cols, size_t m, size_t k, size_t n) {
  layout_t l;
  l.lda = even(k);
  l.ldb = even(n);
  l.a = 0;
  /* room for A or A^T (K rows of pitch M), and for B or B^T (N rows of pitch K), so the
   * places of B and C do not depend on which */
  l.b = align64(l.a + max_u64(2 * (uint64_t)m * l.lda, 2 * (uint64_t)k * even(m)));
  l.c = align64(l.b + max_u64(2 * (uint64_t)k * l.ldb, 2 * (uint64_t)n * even(k)));
  l.zero = align64(l.c + 4 * (uint64_t)m * n);
  l.end = l.zero + 4 * (uint64_t)cols;
  return l;
}

uint64_t chip_gemm_hbm_bytes(unsigned cols, size_t m, size_t k, size_t n) { return layout(cols, m, k, n).end; }

/* The firmware's arguments: A or A^T, B or B^T as the host wrote them (pitches even). */
static fw_gemm_args_t gemm_args(const layout_t *l, size_t m, size_t k, size_t n, const chip_gemm_opts_t *opts) {
  return (fw_gemm_args_t){.a = (uint32_t)l->a, .b = (uint32_t)l->b, .c = (uint32_t)l->c, .zero = (uint32_t)l->zero,
                          .m = (uint32_t)m, .k = (uint32_t)k, .n = (uint32_t)n,
                          .lda = (uint32_t)(opts->a_transposed ? even(m) : l->lda),
                          .ldb = (uint32_t)(opts->b_transposed ? even(k) : l->ldb),
                          .relu = opts->relu, .bf16_out = opts->bf16_out, .k_panel = opts->k_panel,
                          .b_transposed = opts->b_transposed, .a_transposed = opts->a_transposed};
}

int chip_gemm_check(const chip_geometry_t *g, size_t m, size_t k, size_t n, const chip_gemm_opts_t *opts, char *err,
                    size_t errlen) {
  const chip_gemm_opts_t none = {0};
  if (!opts) opts = &none;
  if (m == 0 || k == 0 || n == 0 || m > UINT32_MAX || k > UINT32_MAX || n > UINT32_MAX) {
    snprintf(err, errlen, "matrix sizes must be 1 .. 2^32-1 (M=%zu K=%zu N=%zu)", m, k, n);
    return -1;
  }
  layout_t l = layout(g->cols, m, k, n);
  if (l.end > (1ull << 32)) {
    snprintf(err, errlen, "the GEMM needs %llu bytes of HBM; a chip addresses 4 GiB", (unsigned long long)l.end);
    return -1;
  }
  fw_gemm_args_t args = gemm_args(&l, m, k, n, opts);
  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  for (unsigned c = 0; c < CHIP_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
  int rc = fw_gemm_cores(g, &args, cq, dq, err, errlen);  /* the programs chip_gemm_load would build */
  for (unsigned c = 0; c < CHIP_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  return rc;
}

int chip_gemm_place(unsigned cols, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                    const chip_gemm_opts_t *opts, chip_gemm_write_t write, void *ctx) {
  const chip_gemm_opts_t none = {0};
  if (!opts) opts = &none;
  const layout_t l = layout(cols, m, k, n);
  const size_t widest = max_u64(max_u64(l.lda, l.ldb), max_u64(even(m), even(k)));
  uint16_t *row = calloc(widest, sizeof *row);
  uint8_t *zero = calloc(4 * (size_t)cols, 1);
  int rc = -1;
  if (!row || !zero) goto out;
  rc = -2;
  /* rows padded to an even number of bf16 with zeros */
  if (opts->a_transposed) { /* A^T: row i is A's column i, pitch M rounded up to even */
    const size_t ldat = even(m);
    memset(row, 0, ldat * sizeof *row);
    for (size_t i = 0; i < k; i++) {
      for (size_t j = 0; j < m; j++) row[j] = a[j * k + i];
      if (write(ctx, l.a + 2 * i * ldat, row, 2 * ldat)) goto out;
    }
  } else {
    memset(row, 0, l.lda * sizeof *row);
    for (size_t i = 0; i < m; i++) {
      memcpy(row, a + i * k, k * sizeof *row);
      if (write(ctx, l.a + 2 * i * l.lda, row, 2 * l.lda)) goto out;
    }
  }
  if (opts->b_transposed) { /* B^T: row j is B's column j, pitch K rounded up to even */
    const size_t ldbt = even(k);
    memset(row, 0, ldbt * sizeof *row);
    for (size_t j = 0; j < n; j++) {
      for (size_t i = 0; i < k; i++) row[i] = b[i * n + j];
      if (write(ctx, l.b + 2 * j * ldbt, row, 2 * ldbt)) goto out;
    }
  } else {
    memset(row, 0, l.ldb * sizeof *row);
    for (size_t i = 0; i < k; i++) {
      memcpy(row, b + i * n, n * sizeof *row);
      if (write(ctx, l.b + 2 * i * l.ldb, row, 2 * l.ldb)) goto out;
    }
  }
  if (write(ctx, l.zero, zero, 4 * (size_t)cols)) goto out;
  rc = 0;
out:
  free(row);
  free(zero);
  return rc;
}

static int hbm_write(void *chip, uint64_t addr, const void *data, size_t len) {
  return chip_hbm_write(chip, addr, data, len);
}

int chip_gemm_load(chip_t *c, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                   const chip_gemm_opts_t *opts, size_t cmds[2], char *err, size_t errlen) {
  const chip_gemm_opts_t none = {0};
  if (!opts) opts = &none;
  if (m == 0 || k == 0 || n == 0 || m > UINT32_MAX || k > UINT32_MAX || n > UINT32_MAX) {
    snprintf(err, errlen, "matrix sizes must be 1 .. 2^32-1 (M=%zu K=%zu N=%zu)", m, k, n);
    return -1;
  }
  const chip_geometry_t *g = chip_geometry(c);
  const layout_t l = layout(g->cols, m, k, n);
  /* Host: tensors into HBM. */
  const int placed = chip_gemm_place(g->cols, m, k, n, a, b, opts, hbm_write, c);
  if (placed) {
    if (placed == -1) snprintf(err, errlen, "out of memory");
    else snprintf(err, errlen, "the GEMM needs %llu bytes of HBM; the chip has less", (unsigned long long)l.end);
    return -1;
  }
  /* Firmware: the programs, a pair per core (its rows of A and C). */
  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  for (unsigned core = 0; core < CHIP_MAX_CORES; core++) fw_prog_init(&cq[core]), fw_prog_init(&dq[core]);
  int rc = -1;
  fw_gemm_args_t args = gemm_args(&l, m, k, n, opts);
  if (fw_gemm_cores(g, &args, cq, dq, err, errlen)) goto out;
  rt_profile_marks(opts->profile, opts->profile_chip, &cq[0]); /* (core 0's: the lead compute queue) */
  if (cmds) cmds[0] = cmds[1] = 0;
  for (unsigned core = 0; core < isa_geometry_cores(g); core++) {
    if (rt_load_core_programs(c, core, &cq[core], &dq[core], err, errlen) != RT_OK) goto out;
    if (cmds) cmds[0] += cq[core].count, cmds[1] += dq[core].count;
  }
  rc = 0;
out:
  for (unsigned core = 0; core < CHIP_MAX_CORES; core++) fw_prog_free(&cq[core]), fw_prog_free(&dq[core]);
  return rc;
}

uint64_t chip_gemm_c_addr(unsigned cols, size_t m, size_t k, size_t n) { return layout(cols, m, k, n).c; }

chip_gemm_layout_t chip_gemm_layout(unsigned cols, size_t m, size_t k, size_t n) { return layout(cols, m, k, n); }

int chip_gemm_programs(const chip_geometry_t *g, size_t m, size_t k, size_t n, const chip_gemm_opts_t *opts,
                       fw_prog_t cq[CHIP_MAX_CORES], fw_prog_t dq[CHIP_MAX_CORES], char *err, size_t errlen) {
  const chip_gemm_opts_t none = {0};
  for (unsigned c = 0; c < CHIP_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
  if (chip_gemm_check(g, m, k, n, opts, err, errlen)) return -1;
  const layout_t l = layout(g->cols, m, k, n);
  const fw_gemm_args_t args = gemm_args(&l, m, k, n, opts ? opts : &none);
  return fw_gemm_cores(g, &args, cq, dq, err, errlen);
}

int chip_gemm_read(chip_t *c, size_t m, size_t k, size_t n, bool bf16_out, uint32_t *out) {
  layout_t l = layout(chip_geometry(c)->cols, m, k, n);
  if (!bf16_out) return chip_hbm_read(c, l.c, out, 4 * m * n);
  size_t ldc = (n + 1) & ~(size_t)1;
  uint16_t *row = malloc(2 * ldc);
  int rc = row ? 0 : -1;
  for (size_t i = 0; i < m && !rc; i++) {
    rc = chip_hbm_read(c, l.c + 2 * i * ldc, row, 2 * n);
    for (size_t j = 0; j < n && !rc; j++) out[i * n + j] = row[j];
  }
  free(row);
  return rc;
}

int chip_gemm(chip_t *c, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
              uint32_t *out, const chip_gemm_opts_t *opts, chip_gemm_stats_t *st, char *err, size_t errlen) {
  const chip_gemm_opts_t none = {0};
  if (!opts) opts = &none;
  memset(st, 0, sizeof *st);
  size_t cmds[2];
  if (chip_gemm_load(c, m, k, n, a, b, opts, cmds, err, errlen)) return -1;
  st->compute_cmds = cmds[0];
  st->dma_cmds = cmds[1];
  /* Run: a timeout no correct run can reach, however slow the HBM (chip_cycle_bound) */
  const chip_geometry_t *g = chip_geometry(c);
  chip_status_t s;
  const uint64_t limit = 2 * chip_cycle_bound(c);
  if (chip_run(c, CHIP_QMASK_EVERY_CORE, limit, &s)) {
    snprintf(err, errlen, "GEMM run failed: %s", s.report);
    return -1;
  }
  st->cycles = s.cycles;
  st->hbm_bytes = s.hbm_bytes;
  st->dma_busy_cycles = s.dma_busy;
  st->mxu_busy_cycles = s.mxu_busy;
  st->compute = s.compute;
  st->weight_load = s.weight_load;
  st->weight_stall = s.weight_stall;
  st->input_stall = s.input_stall;
  st->mxu_idle = s.mxu_idle;
  if (chip_gemm_read(c, m, k, n, opts->bf16_out, out)) {
    snprintf(err, errlen, "the GEMM needs %llu bytes of HBM; the chip has less",
             (unsigned long long)chip_gemm_hbm_bytes(g->cols, m, k, n));
    return -1;
  }
  return 0;
}
