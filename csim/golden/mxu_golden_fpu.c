/* mxu_golden_fpu: see mxu_golden_fpu.h. */
#include "golden/mxu_golden_fpu.h"

#include <float.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "golden/arith_golden_fpu.h"

#if FLT_EVAL_METHOD != 0
#error "mxu_golden_fpu needs binary32 arithmetic evaluated in binary32 (FLT_EVAL_METHOD 0)"
#endif

/* bf16 bits widened exactly to binary32, a subnormal read as zero. */
static inline float widen(uint16_t h) { return arith_golden_fpu_in((uint32_t)h << 16); }

/* A tile's column sums for GROUP rows of A at once: s_r[j] = ((+0 + x_r[0] w[0][j]) + x_r[1]
 * w[1][j]) + ... over the tile's q real rows of B, then + (+0) for each of its pad padded rows
 * (a padded row adds +0 x +0 = +0, which turns a -0 sum into +0). Each lane does the scalar
 * step's operations in the same order, so every sum's bits are the scalar ones; the vector
 * kernels keep 16 (AVX2) or 8 (SSE2) columns of the GROUP rows in registers down the whole
 * tile and load each row of B once for the group. AVX2 where the host has it (chosen at run
 * time), else SSE2 (every x86-64 has it), else scalar with the flushes written out.
 *
 * The vector kernels run with the thread's MXCSR set to flush to zero and read denormals as
 * zero (gemm_rows), which for these operations is the documented rule exactly: a bf16 x bf16
 * product is exact in binary32 (16 significant bits), and a sum of two normals that lands
 * below 2^-126 is exact too, so "below 2^-126" means the same before and after rounding, and
 * the hardware's zero keeps the result's sign as the rule does. tests/test_mxu_golden.c holds
 * each kernel to the soft float on a million outputs with specials on both sides of 2^-126. */
enum { GROUP = 4 };

typedef struct {
  float *s[GROUP];        /* out: the tile's sums, n each */
  const float *x[GROUP];  /* A's rows widened, from the tile's first column */
  const float *w;         /* B's row at the tile's first row, rows n apart */
  size_t n, q, pad;
} tile_t;

/* Columns [from, n) of the tile, one lane at a time. */
static void tile_scalar(const tile_t *t, size_t from) {
  for (unsigned r = 0; r < GROUP; r++)
    for (size_t j = from; j < t->n; j++) {
      float s = 0.0f;
      for (size_t q = 0; q < t->q; q++) s = arith_golden_fpu_flush(s + arith_golden_fpu_flush(t->x[r][q] * t->w[q * t->n + j]));
      for (size_t q = 0; q < t->pad; q++) s = arith_golden_fpu_flush(s + 0.0f);
      t->s[r][j] = s;
    }
}

#if defined(__SSE2__)
static void tile_sse2(const tile_t *t) {
  size_t j = 0;
  for (; j + 8 <= t->n; j += 8) {
    __m128 s[GROUP][2];
    for (unsigned r = 0; r < GROUP; r++) s[r][0] = s[r][1] = _mm_setzero_ps();
    for (size_t q = 0; q < t->q; q++) {
      const float *w = t->w + q * t->n + j;
      const __m128 w0 = _mm_loadu_ps(w), w1 = _mm_loadu_ps(w + 4);
      for (unsigned r = 0; r < GROUP; r++) {
        const __m128 x = _mm_set1_ps(t->x[r][q]);
        s[r][0] = _mm_add_ps(s[r][0], _mm_mul_ps(x, w0));
        s[r][1] = _mm_add_ps(s[r][1], _mm_mul_ps(x, w1));
      }
    }
    for (size_t q = 0; q < t->pad; q++)
      for (unsigned r = 0; r < GROUP; r++)
        s[r][0] = _mm_add_ps(s[r][0], _mm_setzero_ps()), s[r][1] = _mm_add_ps(s[r][1], _mm_setzero_ps());
    for (unsigned r = 0; r < GROUP; r++) _mm_storeu_ps(t->s[r] + j, s[r][0]), _mm_storeu_ps(t->s[r] + j + 4, s[r][1]);
  }
  tile_scalar(t, j);
}
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* (AVX2 only: no FMA, so a multiply and an add stay two roundings) */
__attribute__((target("avx2"))) static void tile_avx2(const tile_t *t) {
  size_t j = 0;
  for (; j + 16 <= t->n; j += 16) {
    __m256 s[GROUP][2];
    for (unsigned r = 0; r < GROUP; r++) s[r][0] = s[r][1] = _mm256_setzero_ps();
    for (size_t q = 0; q < t->q; q++) {
      const float *w = t->w + q * t->n + j;
      const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
      for (unsigned r = 0; r < GROUP; r++) {
        const __m256 x = _mm256_set1_ps(t->x[r][q]);
        s[r][0] = _mm256_add_ps(s[r][0], _mm256_mul_ps(x, w0));
        s[r][1] = _mm256_add_ps(s[r][1], _mm256_mul_ps(x, w1));
      }
    }
    for (size_t q = 0; q < t->pad; q++)
      for (unsigned r = 0; r < GROUP; r++)
        s[r][0] = _mm256_add_ps(s[r][0], _mm256_setzero_ps()), s[r][1] = _mm256_add_ps(s[r][1], _mm256_setzero_ps());
    for (unsigned r = 0; r < GROUP; r++)
      _mm256_storeu_ps(t->s[r] + j, s[r][0]), _mm256_storeu_ps(t->s[r] + j + 8, s[r][1]);
  }
  tile_scalar(t, j);
}
#endif

typedef void tile_fn(const tile_t *t);

static void tile_plain(const tile_t *t) { tile_scalar(t, 0); }

/* The widest kernel this host runs; MXU_GOLDEN_FPU_LANES=4 or 1 picks a narrower one (the tests
 * hold each to the soft float). */
static tile_fn *pick_tile(void) {
  const char *lanes = getenv("MXU_GOLDEN_FPU_LANES");
  if (lanes && !strcmp(lanes, "1")) return tile_plain;
#if defined(__x86_64__) && defined(__GNUC__)
  if (!(lanes && !strcmp(lanes, "4")) && __builtin_cpu_supports("avx2")) return tile_avx2;
#endif
#if defined(__SSE2__)
  return tile_sse2;
#else
  return tile_plain;
#endif
}

/* Rows [first, end) of C: each row's sums depend on nothing but A's row and B. */
typedef struct {
  unsigned rows;
  size_t k, n, first, end;
  const uint16_t *a;
  const float *w;  /* B widened */
  uint32_t *out;
  tile_fn *tile;
} part_t;

static void gemm_rows(const part_t *p) {
  /* mxu_golden's loops and order: tile by tile, the column sums s (tile_t), then acc = s
   * (tile 0) or acc + s. NaNs propagate through the host's operations and are made canonical
   * once at the end: a NaN input or Inf x 0 or Inf - Inf anywhere gives the canonical NaN
   * either way. GROUP rows of C at a time, each in that order; a group of fewer rows fills
   * the rest with a row of zeros whose sums go to scratch. */
  const unsigned rows = p->rows;
  const size_t k = p->k, n = p->n, tiles = (k + rows - 1) / rows;
  float *buf = malloc(((2 * GROUP + 1) * (n + 1) + (GROUP + 1) * (k + 1)) * sizeof *buf), *acc[GROUP], *xa[GROUP];
  if (!buf) abort();  /* the golden model has no other way to fail */
  float *scratch = buf + 2 * GROUP * (n + 1), *zeros = scratch + (n + 1) + GROUP * (k + 1);
  tile_t t = {.n = n};
  for (unsigned r = 0; r < GROUP; r++)
    t.s[r] = buf + r * (n + 1), acc[r] = buf + (GROUP + r) * (n + 1), xa[r] = scratch + (n + 1) + r * (k + 1);
  for (size_t q = 0; q < k; q++) zeros[q] = 0.0f;
#if defined(__SSE2__)
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u); /* FTZ (bit 15) and DAZ (bit 6) for the vector kernels: see above */
#endif
  for (size_t i = p->first; i < p->end; i += GROUP) {
    const unsigned g = p->end - i < GROUP ? (unsigned)(p->end - i) : GROUP;
    for (unsigned r = 0; r < g; r++) {
      for (size_t q = 0; q < k; q++) xa[r][q] = widen(p->a[(i + r) * k + q]);
      for (size_t j = 0; j < n; j++) acc[r][j] = 0.0f; /* K = 0: the sum of nothing is +0 */
    }
    for (size_t tl = 0; tl < tiles; tl++) {
      const size_t k0 = tl * rows;
      t.q = k - k0 < rows ? k - k0 : rows, t.pad = rows - t.q, t.w = p->w + k0 * n;
      for (unsigned r = 0; r < GROUP; r++) t.x[r] = (r < g ? xa[r] : zeros) + k0;
      for (unsigned r = g; r < GROUP; r++) t.s[r] = scratch;
      p->tile(&t);
      for (unsigned r = 0; r < g; r++)
        for (size_t j = 0; j < n; j++) acc[r][j] = tl == 0 ? t.s[r][j] : arith_golden_fpu_flush(acc[r][j] + t.s[r][j]);
      for (unsigned r = g; r < GROUP; r++) t.s[r] = buf + r * (n + 1);
    }
    for (unsigned r = 0; r < g; r++)
      for (size_t j = 0; j < n; j++) p->out[(i + r) * n + j] = arith_golden_fpu_canonical(acc[r][j]);
  }
#if defined(__SSE2__)
  _mm_setcsr(csr);
#endif
  free(buf);
}

static void *gemm_rows_thread(void *arg) {
  gemm_rows(arg);
  return NULL;
}

/* Threads for a GEMM of `macs` MACs: one below 2^24 (starting one costs more than it saves),
 * else the host's processors, at most 16 and at most one a row. */
static unsigned threads_for(double macs, size_t m) {
  if (macs < 16777216.0) return 1;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned t = cpus > 1 ? (unsigned)(cpus < 16 ? cpus : 16) : 1;
  return t < m ? t : (unsigned)m;
}

void mxu_golden_fpu_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                         uint32_t *out) {
  float *w = malloc((k * n + 1) * sizeof *w);
  if (!w) abort();
  for (size_t i = 0; i < k * n; i++) w[i] = widen(b[i]);
  const unsigned nt = threads_for((double)m * k * n, m);
  part_t part[16];
  pthread_t tid[16];
  bool started[16] = {false};
  tile_fn *tile = pick_tile();
  for (unsigned t = 0; t < nt; t++) part[t] = (part_t){rows, k, n, m * t / nt, m * (t + 1) / nt, a, w, out, tile};
  /* parts 1.. on threads, part 0 here; a part whose thread cannot start runs here too */
  for (unsigned t = 1; t < nt; t++) started[t] = pthread_create(&tid[t], NULL, gemm_rows_thread, &part[t]) == 0;
  for (unsigned t = 0; t < nt; t++)
    if (!started[t]) gemm_rows(&part[t]);
  for (unsigned t = 1; t < nt; t++)
    if (started[t]) pthread_join(tid[t], NULL);
  free(w);
}
