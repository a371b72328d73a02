/* mxu_golden_fpu: see mxu_golden_fpu.h. */
#include "golden/mxu_golden_fpu.h"

#include <float.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
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

/* s[j] = flush(s[j] + flush(x * w[j])) for j < n: one row of the column sums, four lanes at a
 * time on SSE2 (every x86-64 has it), each lane the scalar step's exact operations. */
static void row_step(float *s, float x, const float *w, size_t n) {
  size_t j = 0;
#if defined(__SSE2__)
  const __m128 xv = _mm_set1_ps(x);
  const __m128i exp = _mm_set1_epi32(0x7F800000), mag = _mm_set1_epi32(0x7FFFFFFF), zero = _mm_setzero_si128();
  for (; j + 4 <= n; j += 4) {
    __m128i pu = _mm_castps_si128(_mm_mul_ps(xv, _mm_loadu_ps(w + j)));
    /* below 2^-126 (exponent field 0): keep the sign bit only */
    pu = _mm_andnot_si128(_mm_and_si128(_mm_cmpeq_epi32(_mm_and_si128(pu, exp), zero), mag), pu);
    __m128i su = _mm_castps_si128(_mm_add_ps(_mm_loadu_ps(s + j), _mm_castsi128_ps(pu)));
    su = _mm_andnot_si128(_mm_and_si128(_mm_cmpeq_epi32(_mm_and_si128(su, exp), zero), mag), su);
    _mm_storeu_ps(s + j, _mm_castsi128_ps(su));
  }
#endif
  for (; j < n; j++) s[j] = arith_golden_fpu_flush(s[j] + arith_golden_fpu_flush(x * w[j]));
}

/* Rows [first, end) of C: each row's sums depend on nothing but A's row and B. */
typedef struct {
  unsigned rows;
  size_t k, n, first, end;
  const uint16_t *a;
  const float *w;  /* B widened */
  uint32_t *out;
} part_t;

static void gemm_rows(const part_t *p) {
  /* mxu_golden's loops and order: tile by tile, the column sum s = ((+0 + x0 w0) + x1 w1) + ...
   * over the tile's R rows (a padded row adds +0 x +0 = +0, which turns a -0 sum into +0),
   * then acc = s (tile 0) or acc + s. NaNs propagate through the host's operations and are
   * made canonical once at the end: a NaN input or Inf x 0 or Inf - Inf anywhere gives the
   * canonical NaN either way. */
  const unsigned rows = p->rows;
  const size_t k = p->k, n = p->n, tiles = (k + rows - 1) / rows;
  float *s = malloc((n + 1) * sizeof *s), *acc = malloc((n + 1) * sizeof *acc);
  if (!s || !acc) abort();  /* the golden model has no other way to fail */
  for (size_t i = p->first; i < p->end; i++) {
    for (size_t j = 0; j < n; j++) acc[j] = 0.0f; /* K = 0: the sum of nothing is +0 */
    for (size_t t = 0; t < tiles; t++) {
      for (size_t j = 0; j < n; j++) s[j] = 0.0f; /* +0 enters the top of the column */
      for (size_t r = 0; r < rows; r++) {
        const size_t kk = t * rows + r;
        if (kk >= k) {
          for (size_t j = 0; j < n; j++) s[j] = arith_golden_fpu_flush(s[j] + 0.0f);
          continue;
        }
        row_step(s, widen(p->a[i * k + kk]), p->w + kk * n, n);
      }
      for (size_t j = 0; j < n; j++) acc[j] = t == 0 ? s[j] : arith_golden_fpu_flush(acc[j] + s[j]);
    }
    for (size_t j = 0; j < n; j++) p->out[i * n + j] = arith_golden_fpu_canonical(acc[j]);
  }
  free(s), free(acc);
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
  for (unsigned t = 0; t < nt; t++) part[t] = (part_t){rows, k, n, m * t / nt, m * (t + 1) / nt, a, w, out};
  /* parts 1.. on threads, part 0 here; a part whose thread cannot start runs here too */
  for (unsigned t = 1; t < nt; t++) started[t] = pthread_create(&tid[t], NULL, gemm_rows_thread, &part[t]) == 0;
  for (unsigned t = 0; t < nt; t++)
    if (!started[t]) gemm_rows(&part[t]);
  for (unsigned t = 1; t < nt; t++)
    if (started[t]) pthread_join(tid[t], NULL);
  free(w);
}
