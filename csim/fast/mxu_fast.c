/* mxu_fast: see mxu_fast.h.
 *
 * The column sums are computed by register-blocked kernels: a block of activation rows times a
 * strip of columns is held in vector registers while r runs from 0 to R-1 inside, so every
 * output keeps the array's order (s = +0, then s = s + a[r] w[r][c] for r = 0, 1, ...) and the
 * vectors only run across outputs. One kernel per instruction set -- AVX-512F (16 floats a
 * vector), AVX2 (8) and SSE2 (4, the x86-64 baseline, so any x86-64 host runs it) -- chosen at
 * run time with __builtin_cpu_supports; each is compiled for its own set with GCC's target
 * attribute, so the file needs no special flags.
 *
 * Bit-exactness rests on three things:
 *   - each product a[r] w[r][c] of two bf16 values is exact in fp32, so a vector multiply is
 *     the MXU's multiply, and each add is one IEEE fp32 add, rounded to nearest even;
 *   - the host runs with FTZ and DAZ (the spec's subnormal rule): the caller of mxu_fast_rows
 *     sets it (fast/fpmode.h), mxu_fast_gemm sets it itself;
 *   - a multiply and the add after it are never fused into an FMA (that would round once instead
 *     of twice): they are separate intrinsics in separate statements, and the pragmas below turn
 *     contraction off for GCC and clang whatever the flags (AVX-512F has FMA instructions, so
 *     without them GCC's -std=gnu11 or -ffp-contract=fast would fuse). scripts/bench_mxu_fast.sh
 *     (make bench) checks the object file for vfmadd; the tests catch a planted FMA.
 */
#include "fast/mxu_fast.h"

#include <immintrin.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fast/fpmode.h"

/* Never contract a multiply and an add into an FMA, whatever the command line says. */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define CANONICAL_NAN 0x7FC00000u

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNROLL _Pragma("GCC unroll 16")

/* One call of the kernels: out[i * ldo + c] (i < n, c < cols) gets the column sum over r <
 * rows of a_i[r] * w[r * ldw + c], from +0 in the order of r, with a_i at a + i * a_stride.
 * With `pad` the sum then gets + 0 once (a padded K tile's +0 x +0 rows: it turns -0 into +0);
 * with `acc` it is added to what out holds (out = out + s), else stored. */
typedef struct {
  unsigned rows, cols;
  size_t n;
  const uint16_t *a;
  size_t a_stride;
  const float *w;
  size_t ldw;
  float *out;
  size_t ldo;
  bool pad, acc;
} sums_t;

/* Widened activations of one block of rows live on the stack up to this many floats. */
#define ACT_STACK 8192

static float widen(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The widened activation block of a call with rows > ACT_STACK / block rows; NULL when the
 * stack buffer does. A model without memory cannot go on. */
static float *act_heap(const sums_t *s, unsigned block_rows) {
  if ((size_t)s->rows * block_rows <= ACT_STACK) return NULL;
  float *p = malloc((size_t)s->rows * block_rows * sizeof *p);
  if (!p) abort();
  return p;
}

/* ------------------------------------------------------------------ AVX-512F: 16 floats a vector
 * A block of up to 6 rows x 4 vectors (64 columns): 24 accumulators, 4 weight vectors and the
 * broadcast activation in the 32 vector registers. Per r: 4 loads of w, 6 broadcasts, 24
 * multiplies and 24 adds. The last vector of a strip is masked (`last`) for ragged columns. */
#define RB512 6
#define NV512 4
#define T512 __attribute__((target("avx512f")))

ALWAYS_INLINE T512 void strip512(const int rb, const int nv, const __mmask16 last, const unsigned rows,
                                 const float *ab, const size_t lda, const float *w, const size_t ldw, float *out,
                                 const size_t ldo, const bool pad, const bool acc) {
  __m512 s[RB512][NV512];
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) s[i][j] = _mm512_setzero_ps();
  for (unsigned r = 0; r < rows; r++) {
    const float *wr = w + (size_t)r * ldw;
    __m512 wv[NV512];
    UNROLL for (int j = 0; j < nv; j++) wv[j] =
        j == nv - 1 ? _mm512_maskz_loadu_ps(last, wr + 16 * j) : _mm512_loadu_ps(wr + 16 * j);
    UNROLL for (int i = 0; i < rb; i++) {
      const __m512 x = _mm512_set1_ps(ab[(size_t)i * lda + r]);
      UNROLL for (int j = 0; j < nv; j++) {
        const __m512 p = _mm512_mul_ps(x, wv[j]);
        s[i][j] = _mm512_add_ps(s[i][j], p);
      }
    }
  }
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) {
    const __mmask16 m = j == nv - 1 ? last : 0xFFFF;
    float *o = out + (size_t)i * ldo + 16 * j;
    __m512 v = s[i][j];
    if (pad) v = _mm512_add_ps(v, _mm512_setzero_ps());
    if (acc) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, o), v);
    _mm512_mask_storeu_ps(o, m, v);
  }
}

typedef void strip512_fn(__mmask16 last, unsigned rows, const float *ab, size_t lda, const float *w, size_t ldw,
                         float *out, size_t ldo, bool pad, bool acc);
#define STRIP512(RB, NV)                                                                                          \
  static T512 void strip512_##RB##_##NV(__mmask16 last, unsigned rows, const float *ab, size_t lda, const float *w, \
                                         size_t ldw, float *out, size_t ldo, bool pad, bool acc) {                \
    strip512(RB, NV, last, rows, ab, lda, w, ldw, out, ldo, pad, acc);                                            \
  }
#define STRIP512_ROWS(RB) STRIP512(RB, 1) STRIP512(RB, 2) STRIP512(RB, 3) STRIP512(RB, 4)
STRIP512_ROWS(1)
STRIP512_ROWS(2)
STRIP512_ROWS(3)
STRIP512_ROWS(4)
STRIP512_ROWS(5)
STRIP512_ROWS(6)
#define STRIP512_ENTRY(RB) {strip512_##RB##_1, strip512_##RB##_2, strip512_##RB##_3, strip512_##RB##_4}
static strip512_fn *const strips512[RB512][NV512] = {STRIP512_ENTRY(1), STRIP512_ENTRY(2), STRIP512_ENTRY(3),
                                                     STRIP512_ENTRY(4), STRIP512_ENTRY(5), STRIP512_ENTRY(6)};

/* Activation row a (rows bf16) widened into dst. */
static T512 void widen512(unsigned rows, const uint16_t *a, float *dst) {
  unsigned r = 0;
  for (; r + 16 <= rows; r += 16) {
    const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)(a + r));
    _mm512_storeu_ps(dst + r, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)));
  }
  for (; r < rows; r++) dst[r] = widen(a[r]);
}

static T512 void sums512(const sums_t *s) {
  float stack[ACT_STACK], *heap = act_heap(s, RB512), *ab = heap ? heap : stack;
  const size_t lda = s->rows;
  for (size_t i0 = 0; i0 < s->n; i0 += RB512) {
    const int rb = s->n - i0 < RB512 ? (int)(s->n - i0) : RB512;
    for (int i = 0; i < rb; i++) widen512(s->rows, s->a + (i0 + i) * s->a_stride, ab + i * lda);
    for (unsigned c0 = 0; c0 < s->cols; c0 += 16 * NV512) {
      const unsigned width = s->cols - c0 < 16 * NV512 ? s->cols - c0 : 16 * NV512, tail = width % 16;
      const int nv = (int)((width + 15) / 16);
      const __mmask16 last = tail ? (__mmask16)((1u << tail) - 1) : (__mmask16)0xFFFF;
      strips512[rb - 1][nv - 1](last, s->rows, ab, lda, s->w + c0, s->ldw, s->out + i0 * s->ldo + c0, s->ldo, s->pad,
                                s->acc);
    }
  }
  free(heap);
}

/* ------------------------------------------------------------------ AVX2: 8 floats a vector
 * A block of up to 4 rows x 3 vectors (24 columns): 12 accumulators, the broadcast and the
 * product in the 16 vector registers; the weights are read from memory by the multiplies. */
#define RB256 4
#define NV256 3
#define T256 __attribute__((target("avx2")))

ALWAYS_INLINE T256 __m256 load256(const float *p, const bool masked, const __m256i m) {
  return masked ? _mm256_maskload_ps(p, m) : _mm256_loadu_ps(p);
}

ALWAYS_INLINE T256 void strip256(const int rb, const int nv, const bool masked, const __m256i last,
                                 const unsigned rows, const float *ab, const size_t lda, const float *w,
                                 const size_t ldw, float *out, const size_t ldo, const bool pad, const bool acc) {
  __m256 s[RB256][NV256];
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) s[i][j] = _mm256_setzero_ps();
  for (unsigned r = 0; r < rows; r++) {
    const float *wr = w + (size_t)r * ldw;
    UNROLL for (int i = 0; i < rb; i++) {
      const __m256 x = _mm256_broadcast_ss(ab + (size_t)i * lda + r);
      UNROLL for (int j = 0; j < nv; j++) {
        const __m256 p = _mm256_mul_ps(x, load256(wr + 8 * j, masked && j == nv - 1, last));
        s[i][j] = _mm256_add_ps(s[i][j], p);
      }
    }
  }
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) {
    const bool mj = masked && j == nv - 1;
    float *o = out + (size_t)i * ldo + 8 * j;
    __m256 v = s[i][j];
    if (pad) v = _mm256_add_ps(v, _mm256_setzero_ps());
    if (acc) v = _mm256_add_ps(load256(o, mj, last), v);
    if (mj)
      _mm256_maskstore_ps(o, last, v);
    else
      _mm256_storeu_ps(o, v);
  }
}

typedef void strip256_fn(__m256i last, unsigned rows, const float *ab, size_t lda, const float *w, size_t ldw,
                         float *out, size_t ldo, bool pad, bool acc);
#define STRIP256(RB, NV, M)                                                                                      \
  static T256 void strip256_##RB##_##NV##_##M(__m256i last, unsigned rows, const float *ab, size_t lda,          \
                                              const float *w, size_t ldw, float *out, size_t ldo, bool pad,      \
                                              bool acc) {                                                        \
    strip256(RB, NV, M, last, rows, ab, lda, w, ldw, out, ldo, pad, acc);                                        \
  }
#define STRIP256_ROWS(RB, M) STRIP256(RB, 1, M) STRIP256(RB, 2, M) STRIP256(RB, 3, M)
STRIP256_ROWS(1, 0)
STRIP256_ROWS(2, 0)
STRIP256_ROWS(3, 0)
STRIP256_ROWS(4, 0)
STRIP256_ROWS(1, 1)
STRIP256_ROWS(2, 1)
STRIP256_ROWS(3, 1)
STRIP256_ROWS(4, 1)
#define STRIP256_ENTRY(RB, M) {strip256_##RB##_1_##M, strip256_##RB##_2_##M, strip256_##RB##_3_##M}
static strip256_fn *const strips256[2][RB256][NV256] = {
    {STRIP256_ENTRY(1, 0), STRIP256_ENTRY(2, 0), STRIP256_ENTRY(3, 0), STRIP256_ENTRY(4, 0)},
    {STRIP256_ENTRY(1, 1), STRIP256_ENTRY(2, 1), STRIP256_ENTRY(3, 1), STRIP256_ENTRY(4, 1)}};

static T256 void widen256(unsigned rows, const uint16_t *a, float *dst) {
  unsigned r = 0;
  for (; r + 8 <= rows; r += 8) {
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(a + r));
    _mm256_storeu_ps(dst + r, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
  }
  for (; r < rows; r++) dst[r] = widen(a[r]);
}

static T256 void sums256(const sums_t *s) {
  float stack[ACT_STACK], *heap = act_heap(s, RB256), *ab = heap ? heap : stack;
  const size_t lda = s->rows;
  for (size_t i0 = 0; i0 < s->n; i0 += RB256) {
    const int rb = s->n - i0 < RB256 ? (int)(s->n - i0) : RB256;
    for (int i = 0; i < rb; i++) widen256(s->rows, s->a + (i0 + i) * s->a_stride, ab + i * lda);
    for (unsigned c0 = 0; c0 < s->cols; c0 += 8 * NV256) {
      const unsigned width = s->cols - c0 < 8 * NV256 ? s->cols - c0 : 8 * NV256, tail = width % 8;
      const int nv = (int)((width + 7) / 8);
      const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      strips256[tail != 0][rb - 1][nv - 1](last, s->rows, ab, lda, s->w + c0, s->ldw, s->out + i0 * s->ldo + c0,
                                           s->ldo, s->pad, s->acc);
    }
  }
  free(heap);
}

/* ------------------------------------------------------------------ SSE2 (any x86-64): 4 floats
 * A block of up to 4 rows x 2 vectors (8 columns); columns past the last multiple of 4 are
 * summed one at a time, in the same order. */
#define RB128 4
#define NV128 2

ALWAYS_INLINE void strip128(const int rb, const int nv, const unsigned rows, const float *ab, const size_t lda,
                            const float *w, const size_t ldw, float *out, const size_t ldo, const bool pad,
                            const bool acc) {
  __m128 s[RB128][NV128];
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) s[i][j] = _mm_setzero_ps();
  for (unsigned r = 0; r < rows; r++) {
    const float *wr = w + (size_t)r * ldw;
    __m128 wv[NV128];
    UNROLL for (int j = 0; j < nv; j++) wv[j] = _mm_loadu_ps(wr + 4 * j);
    UNROLL for (int i = 0; i < rb; i++) {
      const __m128 x = _mm_set1_ps(ab[(size_t)i * lda + r]);
      UNROLL for (int j = 0; j < nv; j++) {
        const __m128 p = _mm_mul_ps(x, wv[j]);
        s[i][j] = _mm_add_ps(s[i][j], p);
      }
    }
  }
  UNROLL for (int i = 0; i < rb; i++) UNROLL for (int j = 0; j < nv; j++) {
    float *o = out + (size_t)i * ldo + 4 * j;
    __m128 v = s[i][j];
    if (pad) v = _mm_add_ps(v, _mm_setzero_ps());
    if (acc) v = _mm_add_ps(_mm_loadu_ps(o), v);
    _mm_storeu_ps(o, v);
  }
}

typedef void strip128_fn(unsigned rows, const float *ab, size_t lda, const float *w, size_t ldw, float *out,
                         size_t ldo, bool pad, bool acc);
#define STRIP128(RB, NV)                                                                                          \
  static void strip128_##RB##_##NV(unsigned rows, const float *ab, size_t lda, const float *w, size_t ldw,        \
                                   float *out, size_t ldo, bool pad, bool acc) {                                  \
    strip128(RB, NV, rows, ab, lda, w, ldw, out, ldo, pad, acc);                                                  \
  }
STRIP128(1, 1) STRIP128(1, 2) STRIP128(2, 1) STRIP128(2, 2) STRIP128(3, 1) STRIP128(3, 2) STRIP128(4, 1)
STRIP128(4, 2)
static strip128_fn *const strips128[RB128][NV128] = {
    {strip128_1_1, strip128_1_2}, {strip128_2_1, strip128_2_2}, {strip128_3_1, strip128_3_2}, {strip128_4_1, strip128_4_2}};

/* Fewer than 4 columns, one output at a time: s = +0, then s = s + a[r] w[r][c] in order. */
static void strip_scalar(int rb, unsigned width, unsigned rows, const float *ab, size_t lda, const float *w, size_t ldw,
                         float *out, size_t ldo, bool pad, bool acc) {
  for (int i = 0; i < rb; i++)
    for (unsigned c = 0; c < width; c++) {
      float v = 0.0f;
      for (unsigned r = 0; r < rows; r++) {
        const float p = ab[(size_t)i * lda + r] * w[(size_t)r * ldw + c];
        v = v + p;
      }
      if (pad) v = v + 0.0f;
      float *o = out + (size_t)i * ldo + c;
      *o = acc ? *o + v : v;
    }
}

static void widen128(unsigned rows, const uint16_t *a, float *dst) {
  unsigned r = 0;
  for (; r + 8 <= rows; r += 8) { /* bf16 h in the high half of a 32-bit lane is h << 16 */
    const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(a + r)), z = _mm_setzero_si128();
    _mm_storeu_ps(dst + r, _mm_castsi128_ps(_mm_unpacklo_epi16(z, h)));
    _mm_storeu_ps(dst + r + 4, _mm_castsi128_ps(_mm_unpackhi_epi16(z, h)));
  }
  for (; r < rows; r++) dst[r] = widen(a[r]);
}

static void sums128(const sums_t *s) {
  float stack[ACT_STACK], *heap = act_heap(s, RB128), *ab = heap ? heap : stack;
  const size_t lda = s->rows;
  for (size_t i0 = 0; i0 < s->n; i0 += RB128) {
    const int rb = s->n - i0 < RB128 ? (int)(s->n - i0) : RB128;
    for (int i = 0; i < rb; i++) widen128(s->rows, s->a + (i0 + i) * s->a_stride, ab + i * lda);
    float *out = s->out + i0 * s->ldo;
    unsigned c0 = 0;
    while (s->cols - c0 >= 4) {
      const int nv = s->cols - c0 >= 4 * NV128 ? NV128 : (int)((s->cols - c0) / 4);
      strips128[rb - 1][nv - 1](s->rows, ab, lda, s->w + c0, s->ldw, out + c0, s->ldo, s->pad, s->acc);
      c0 += 4 * (unsigned)nv;
    }
    if (c0 < s->cols)
      strip_scalar(rb, s->cols - c0, s->rows, ab, lda, s->w + c0, s->ldw, out + c0, s->ldo, s->pad, s->acc);
  }
  free(heap);
}

/* ------------------------------------------------------------------ dispatch */
mxu_fast_isa_t mxu_fast_best_isa(void) {
  if (__builtin_cpu_supports("avx512f")) return MXU_FAST_AVX512F;
  if (__builtin_cpu_supports("avx2")) return MXU_FAST_AVX2;
  return MXU_FAST_SSE2;
}

const char *mxu_fast_isa_name(mxu_fast_isa_t isa) {
  return isa == MXU_FAST_AVX512F ? "avx512f" : isa == MXU_FAST_AVX2 ? "avx2" : "sse2";
}

static void sums(mxu_fast_isa_t isa, const sums_t *s) {
  if (s->n == 0 || s->cols == 0) return;
  const mxu_fast_isa_t best = mxu_fast_best_isa();
  switch (isa < best ? isa : best) {
  case MXU_FAST_AVX512F: sums512(s); break;
  case MXU_FAST_AVX2: sums256(s); break;
  default: sums128(s); break;
  }
}

void mxu_fast_rows_isa(mxu_fast_isa_t isa, unsigned rows, unsigned cols, size_t n, const uint16_t *a, size_t a_stride,
                       const float *w, float *psum) {
  const sums_t s = {rows, cols, n, a, a_stride, w, cols, psum, cols, false, false};
  sums(isa, &s);
}

void mxu_fast_rows(unsigned rows, unsigned cols, size_t n, const uint16_t *a, size_t a_stride, const float *w,
                   float *psum) {
  mxu_fast_rows_isa(MXU_FAST_AVX512F, rows, cols, n, a, a_stride, w, psum);
}

/* Columns of B per pass of the GEMM: a K tile of B this wide (128 rows x 256 columns, 128 KiB)
 * stays in the L2 cache while every row of A streams past it. */
#define GEMM_COLS 256

void mxu_fast_gemm_isa(mxu_fast_isa_t isa, unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a,
                       const uint16_t *b, uint32_t *out) {
  const unsigned saved = fast_fpmode_enter();
  float *bw = malloc((k * n + 1) * sizeof *bw), *acc = calloc(m * n + 1, sizeof *acc); /* K = 0 sums to +0 */
  if (!bw || !acc) abort(); /* a model without memory cannot go on */
  for (size_t i = 0; i < k * n; i++) bw[i] = widen(b[i]);
  /* Per pass over a band of columns, the K tiles in order: the first stores its sums, each
   * later one adds its sums to them (C = C + s_t); a padded last tile adds +0 to its sums
   * first (what its +0 x +0 rows do: it turns a -0 sum into +0). */
  for (size_t c0 = 0; c0 < n; c0 += GEMM_COLS) {
    const unsigned cw = n - c0 < GEMM_COLS ? (unsigned)(n - c0) : GEMM_COLS;
    for (size_t t0 = 0; t0 < k; t0 += rows) {
      const unsigned kr = k - t0 < rows ? (unsigned)(k - t0) : rows;
      const sums_t s = {kr, cw, m, a + t0, k, bw + t0 * n + c0, n, acc + c0, n, kr < rows, t0 > 0};
      sums(isa, &s);
    }
  }
  for (size_t i = 0; i < m * n; i++) {
    uint32_t u;
    memcpy(&u, &acc[i], sizeof u);
    out[i] = (u & 0x7FFFFFFFu) > 0x7F800000u ? CANONICAL_NAN : u;
  }
  free(bw), free(acc);
  fast_fpmode_leave(saved);
}

void mxu_fast_gemm(unsigned rows, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b, uint32_t *out) {
  mxu_fast_gemm_isa(MXU_FAST_AVX512F, rows, m, k, n, a, b, out);
}

/* The pipeline registers the contract counts: command intake, loader start, input skew
 * entry, de-skew exit, accumulator write (docs/mxu.md). */
#define MXU_FAST_PIPELINE 5

void mxu_fast_run(unsigned rows, unsigned cols, size_t m, size_t k, size_t n, const uint16_t *a, const uint16_t *b,
                  uint32_t *out, mxu_fast_stats_t *st) {
  mxu_fast_gemm(rows, m, k, n, a, b, out);
  const uint64_t R = rows, C = cols, M = m;
  const uint64_t F = ((k + R - 1) / R) * ((n + C - 1) / C);
  st->tiles = F;
  st->cycles = R + (F - 1) * (M > R ? M : R) + M + (R + C - 2) + MXU_FAST_PIPELINE;
  st->compute = F * M;
  st->weight_load = F * R;
  st->weight_stall = (R - 1) + (F - 1) * (R > M ? R - M : 0);
  st->input_stall = 0;
  st->idle = 0;
  st->readout_cycles = ((n + C - 1) / C) * M;
}
