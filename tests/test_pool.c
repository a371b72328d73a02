/*
 * The pooling kernels (fw/pool.c: MaxPool, AveragePool, GlobalAveragePool) on chips of this
 * run's model, bit-exact against their golden model (csim/golden/pool_golden.c): random bf16
 * tensors packed into the activation layout of fw/act.h (borders 0 and 1 on the input and the
 * output, channel counts odd and not multiples of the MXU's columns), ResNet's windows, both
 * count modes, all-negative inputs (the padding never wins), one and two cores. Every run
 * leaves the output's border, its padding channel and the bytes round it as they were, and
 * every semaphore at zero. Bad shapes are refused with their messages; a small case is held to
 * the timing formula of docs/timing.md ("Pooling").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "fw/act.h"
#include "fw/hal.h"
#include "fw/pool.h"
#include "golden/pool_golden.h"
#include "util/bits.h"
#include "util/rng.h"
#include "chip_test.h"

TestSuite(pool, .timeout = 600);

enum { GUARD = 256 };             /* bytes checked on each side of the output */
static const uint8_t GUARD_BYTE = 0xA5;

/* A chip of size x size MXUs, `cores` cores (two MXUs each when two: the RTL's 4x4x2c2). */
static chip_t *pool_chip(unsigned size, unsigned cores, uint64_t hbm) {
  chip_config_t cfg = test_chip_config(size, size, 64, 10);
  cfg.hbm_bytes = hbm;
  if (cores > 1) cfg.mxus = 2, cfg.cores = cores;
  return test_chip_new(&cfg);
}

/* Random bf16 values of both signs over a few binades (so averages round), with a few zeros
 * of either sign; all negative (zeros -0) when `negative`. */
static void random_bf16(rng_t *r, uint16_t *v, size_t n, bool negative) {
  for (size_t i = 0; i < n; i++) {
    const uint64_t x = rng_next(r);
    if (x % 61 == 0)
      v[i] = negative || (x >> 8) & 1 ? 0x8000 : 0;
    else
      v[i] = (uint16_t)((negative ? 0x8000 : (x >> 20) & 0x8000) | (uint16_t)(124 + (x >> 8) % 8) << 7 |
                        ((x >> 32) & 0x7F));
  }
}

/* The tensor's bytes in the layout: zero but for the interior's C channels. */
static uint8_t *pack(const fw_act_t *t, const uint16_t *logical) {
  uint8_t *b = calloc(1, fw_act_bytes(t));
  cr_assert_not_null(b);
  for (uint32_t n = 0; n < t->n; n++)
    for (uint32_t h = 0; h < t->h; h++)
      for (uint32_t w = 0; w < t->w; w++)
        for (uint32_t c = 0; c < t->c; c++) {
          const uint16_t v = logical[(((size_t)n * t->c + c) * t->h + h) * t->w + w];
          memcpy(b + fw_act_pixel_addr(t, n, h, w) - t->addr + 2 * c, &v, 2);
        }
  return b;
}

/* The output's interior as a logical tensor; every other byte of the layout must be zero. */
static void unpack(const fw_act_t *t, const uint8_t *b, uint16_t *logical) {
  uint8_t *want = calloc(1, fw_act_bytes(t));
  for (uint32_t n = 0; n < t->n; n++)
    for (uint32_t h = 0; h < t->h; h++)
      for (uint32_t w = 0; w < t->w; w++)
        for (uint32_t c = 0; c < t->c; c++) {
          const uint64_t at = fw_act_pixel_addr(t, n, h, w) - t->addr + 2 * c;
          memcpy(&logical[(((size_t)n * t->c + c) * t->h + h) * t->w + w], b + at, 2);
          memcpy(want + at, b + at, 2);
        }
  for (uint64_t i = 0; i < fw_act_bytes(t); i++)
    cr_assert_eq(b[i], want[i], "output byte %llu (border or padding channel) is 0x%02x, not 0",
                 (unsigned long long)i, b[i]);
  free(want);
}

/* Ends every core's programs (the kernels compose: no HALT of their own) and runs them. */
static uint64_t run_cores(chip_t *c, fw_prog_t *cq, fw_prog_t *dq) {
  for (unsigned k = 0; k < isa_geometry_cores(chip_geometry(c)); k++) fw_halt(&cq[k]), fw_halt(&dq[k]);
  return test_run_cores(c, cq, dq, 50000000);
}

/* Places in at 0x1000 and out after it (guard bytes round it), writes them, runs `kind` over
 * them and reads the output back into out_logical. Returns the cycles. */
static uint64_t run_pool(chip_t *c, fw_pool_kind_t kind, fw_pool_args_t *a, const uint16_t *in_logical,
                         uint16_t *out_logical) {
  const chip_geometry_t *g = chip_geometry(c);
  a->in.addr = 0x1000;
  a->out.addr = (uint32_t)((a->in.addr + fw_act_bytes(&a->in) + 2 * GUARD + 63) & ~63ull);
  uint8_t *in = pack(&a->in, in_logical);
  cr_assert_eq(chip_hbm_write(c, a->in.addr, in, fw_act_bytes(&a->in)), 0);
  free(in);
  const size_t span = fw_act_bytes(&a->out) + 2 * GUARD;
  uint8_t *out = malloc(span);
  memset(out, GUARD_BYTE, span);
  memset(out + GUARD, 0, fw_act_bytes(&a->out));
  cr_assert_eq(chip_hbm_write(c, a->out.addr - GUARD, out, span), 0);
  fw_prog_t cq[2], dq[2];
  for (int k = 0; k < 2; k++) fw_prog_init(&cq[k]), fw_prog_init(&dq[k]);
  char err[256];
  const int rc = kind == FW_POOL_MAX   ? fw_maxpool(g, a, cq, dq, err, sizeof err)
                 : kind == FW_POOL_AVG ? fw_avgpool(g, a, cq, dq, err, sizeof err)
                                       : fw_global_avgpool(g, &a->in, &a->out, cq, dq, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  const uint64_t cycles = run_cores(c, cq, dq);
  cr_assert_eq(chip_hbm_read(c, a->out.addr - GUARD, out, span), 0);
  for (size_t i = 0; i < GUARD; i++) {
    cr_assert_eq(out[i], GUARD_BYTE, "byte %zu before the output was written", GUARD - i);
    cr_assert_eq(out[span - 1 - i], GUARD_BYTE, "byte %zu after the output was written", i);
  }
  unpack(&a->out, out + GUARD, out_logical);
  free(out);
  return cycles;
}

typedef struct {
  uint32_t n, c, h, w, kh, kw, sh, sw, pt, pl, pb, pr;
  bool incl;
  uint32_t in_border, out_border;
  uint32_t vmem_lines; /* the kernel's VMEM budget (0: all) */
} shape_t;

static fw_pool_args_t args_of(const shape_t *s) {
  fw_pool_args_t a = {.kh = s->kh, .kw = s->kw, .sh = s->sh, .sw = s->sw, .pad_top = s->pt, .pad_left = s->pl,
                      .pad_bottom = s->pb, .pad_right = s->pr, .count_include_pad = s->incl,
                      .vmem_lines = s->vmem_lines};
  a.in = (fw_act_t){.n = s->n, .c = s->c, .h = s->h, .w = s->w, .bh = s->in_border, .bw = s->in_border};
  a.out = (fw_act_t){.n = s->n, .c = s->c, .h = fw_pool_out_size(s->h, s->kh, s->sh, s->pt, s->pb),
                     .w = fw_pool_out_size(s->w, s->kw, s->sw, s->pl, s->pr), .bh = s->out_border, .bw = s->out_border};
  return a;
}

/* `kind` over shape s on chip c against the golden model; returns the cycles. */
static uint64_t check_shape_with(chip_t *c, fw_pool_kind_t kind, const shape_t *s, bool negative, bool specials) {
  fw_pool_args_t a = args_of(s);
  if (kind == FW_POOL_GLOBAL) a.out.h = a.out.w = 1;
  const size_t nin = (size_t)s->n * s->c * s->h * s->w, nout = (size_t)a.out.n * a.out.c * a.out.h * a.out.w;
  uint16_t *in = malloc(nin * 2), *got = malloc(nout * 2), *want = malloc(nout * 2);
  rng_t r;
  rng_seed(&r, test_seed() * 1009 + s->c * 31 + s->h * 7 + s->w + kind);
  random_bf16(&r, in, nin, negative);
  if (specials) /* NaNs, infinities, subnormals of both signs, the largest finite values */
    for (size_t i = 0; i < nin; i += 5) {
      static const uint16_t sp[] = {0x7FC0, 0xFF81, 0x7F80, 0xFF80, 0x0001, 0x807F, 0x7F7F, 0xFF7F, 0x0080};
      in[i] = sp[rng_below(&r, sizeof sp / sizeof *sp)];
    }
  const uint64_t cycles = run_pool(c, kind, &a, in, got);
  const pool_golden_window_t win = {s->kh, s->kw, s->sh, s->sw, s->pt, s->pl, s->pb, s->pr, s->incl};
  if (kind == FW_POOL_MAX)
    cr_assert_eq(pool_golden_max(&win, s->n, s->c, s->h, s->w, in, want), 0);
  else if (kind == FW_POOL_AVG)
    cr_assert_eq(pool_golden_avg(&win, s->n, s->c, s->h, s->w, in, want), 0);
  else
    pool_golden_global_avg(s->n, s->c, s->h, s->w, in, want);
  const unsigned size = chip_geometry(c)->cols;
  for (size_t i = 0; i < nout; i++)
    cr_assert_eq(got[i], want[i],
                 "%ux%u chip, kind %d, %ux%ux%ux%u, %ux%u/%ux%u pads %u,%u,%u,%u%s borders %u/%u: out[%zu] chip 0x%04x "
                 "golden 0x%04x",
                 size, size, kind, s->n, s->c, s->h, s->w, s->kh, s->kw, s->sh, s->sw, s->pt, s->pl, s->pb, s->pr,
                 s->incl ? " incl" : "", s->in_border, s->out_border, i, got[i], want[i]);
  if (negative && kind == FW_POOL_MAX)  /* the maximum of negative pixels: never a padding zero */
    for (size_t i = 0; i < nout; i++) cr_assert(got[i] & 0x8000, "out[%zu] = 0x%04x: the padding won", i, got[i]);
  free(in);
  free(got);
  free(want);
  return cycles;
}

static uint64_t check_shape(chip_t *c, fw_pool_kind_t kind, const shape_t *s, bool negative) {
  return check_shape_with(c, kind, s, negative, false);
}

static void check_shapes(unsigned size, unsigned cores, fw_pool_kind_t kind, const shape_t *s, size_t n,
                         bool negative) {
  chip_t *c = pool_chip(size, cores, 1u << 22);
  for (size_t i = 0; i < n; i++) check_shape(c, kind, &s[i], negative);
  chip_free(c);
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

Test(pool, maxpool_3x3_stride_2_pad_1_as_in_resnet) {
  static const shape_t s4[] = {
      {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 1, 0},  /* C = 5: a full block and 2 of 4 lanes (Cp 6) */
      {1, 4, 8, 7, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 0, 0},
      {1, 1, 1, 1, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},  /* one pixel: only the centre tap */
  };
  check_shapes(4, 1, FW_POOL_MAX, s4, COUNT(s4), false);
  static const shape_t s16[] = {
      {1, 20, 11, 10, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0},  /* two blocks: 16 + 4 channels */
      {2, 3, 6, 12, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},
  };
  check_shapes(16, 1, FW_POOL_MAX, s16, COUNT(s16), false);
}

Test(pool, maxpool_2x2_stride_2_and_other_windows) {
  static const shape_t s[] = {
      {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, false, 0, 0, 0},
      {1, 6, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0, false, 1, 1, 0},  /* odd sides: the last row and column unused */
      {1, 2, 7, 8, 2, 2, 2, 2, 1, 1, 1, 1, false, 0, 1, 0},  /* pads on both sides of an even kernel */
      {1, 3, 9, 10, 3, 2, 3, 1, 2, 0, 1, 1, false, 1, 0, 0}, /* asymmetric windows, strides and pads */
      {1, 2, 10, 11, 2, 3, 1, 3, 0, 2, 1, 0, false, 0, 0, 0},
      {1, 9, 5, 6, 1, 1, 1, 1, 0, 0, 0, 0, false, 1, 1, 0},  /* 1x1: a copy */
      {2, 3, 11, 13, 2, 2, 3, 3, 0, 1, 1, 0, false, 0, 1, 0}, /* strides past the kernel: rows, columns, a phase unread */
  };
  check_shapes(4, 1, FW_POOL_MAX, s, COUNT(s), false);
}

Test(pool, maxpool_of_negative_pixels_never_takes_the_padding) {
  static const shape_t s[] = {
      {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},  /* a zero border would win if read */
      {1, 3, 6, 5, 3, 3, 1, 1, 2, 2, 2, 2, false, 0, 1, 0},  /* pad 2 of a 3x3 kernel, borders smaller */
      {1, 2, 7, 8, 2, 2, 2, 2, 1, 1, 1, 1, false, 1, 0, 0},
  };
  check_shapes(4, 1, FW_POOL_MAX, s, COUNT(s), true);
}

Test(pool, avgpool_3x3_stride_1_pad_1_both_count_modes) {
  static const shape_t s4[] = {
      {1, 7, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 1, 0},
      {1, 7, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, true, 1, 0, 0},
      {2, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, false, 1, 1, 0},
      {1, 5, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, true, 0, 0, 0},
      {1, 5, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0},
      {1, 2, 8, 9, 2, 3, 2, 1, 1, 2, 0, 1, false, 0, 1, 0},  /* counts 1..6 across the edges */
      {2, 3, 11, 13, 2, 2, 3, 3, 0, 1, 1, 0, false, 1, 0, 0}, /* strides past the kernel */
  };
  check_shapes(4, 1, FW_POOL_AVG, s4, COUNT(s4), false);
  static const shape_t s16[] = {
      {1, 18, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, false, 1, 1, 0},
      {1, 18, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, true, 0, 0, 0},
  };
  check_shapes(16, 1, FW_POOL_AVG, s16, COUNT(s16), false);
}

Test(pool, global_avgpool) {
  static const shape_t s4[] = {
      {3, 9, 5, 4, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 0, 0},  /* no border: one DMA an image block */
      {2, 5, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, false, 1, 1, 0},  /* a border: a DMA a row */
      {1, 3, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 1, 0},
  };
  check_shapes(4, 1, FW_POOL_GLOBAL, s4, COUNT(s4), false);
  static const shape_t s16[] = {{2, 40, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, false, 1, 0, 0}};
  check_shapes(16, 1, FW_POOL_GLOBAL, s16, COUNT(s16), false);
}

/* Images of more than FW_POOL_GLOBAL_CHUNK_PIXELS pixels are summed in chunks, each continuing
 * the running sum in pixel order; rows longer than a chunk go one at a time. */
Test(pool, global_avgpool_in_chunks) {
  static const shape_t s[] = {
      {1, 5, 50, 41, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 1, 0},  /* chunks of 49 rows and 1 */
      {1, 2, 3, 2100, 0, 0, 0, 0, 0, 0, 0, 0, false, 1, 0, 0}, /* a row a chunk */
  };
  check_shapes(4, 1, FW_POOL_GLOBAL, s, COUNT(s), false);
}

/* A VMEM budget that holds fewer channel blocks than a pixel has: the blocks go in passes
 * (3, 3, 3 and 1 of C = 40 on a 4x4 chip), or one block at a time with the least ring. */
Test(pool, channel_passes_when_vmem_is_short) {
  static const shape_t s[] = {
      {2, 40, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, false, 1, 0, 200},
      {1, 40, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 1, 50},
      {1, 10, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 60},
  };
  check_shapes(4, 1, FW_POOL_AVG, s, COUNT(s), false);
  check_shapes(4, 1, FW_POOL_MAX, s, COUNT(s), true);
}

/* Special values: NaNs become the canonical NaN, infinities propagate (and +Inf + -Inf is a
 * NaN), subnormals read as zeros, sums of the largest values overflow to infinity. */
Test(pool, special_values) {
  chip_t *c = pool_chip(4, 1, 1u << 22);
  static const shape_t s[] = {
      {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},
      {1, 7, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 1, 0},
  };
  for (size_t i = 0; i < COUNT(s); i++)
    for (int kind = FW_POOL_MAX; kind <= FW_POOL_GLOBAL; kind++) check_shape_with(c, kind, &s[i], false, true);
  chip_free(c);
}

/* GlobalAveragePool is AveragePool with an H x W kernel, bit for bit: both sum the pixels in
 * row-major order from the first (docs/models.md). */
Test(pool, global_avgpool_is_the_whole_image_window) {
  chip_t *c = pool_chip(4, 1, 1u << 22);
  const shape_t s = {2, 6, 5, 7, 5, 7, 1, 1, 0, 0, 0, 0, false, 1, 0, 0};
  fw_pool_args_t ga = args_of(&s), aa = args_of(&s);
  const size_t nin = (size_t)s.n * s.c * s.h * s.w, nout = (size_t)s.n * s.c;
  uint16_t *in = malloc(nin * 2), got_g[12], got_a[12], want[12];
  rng_t r;
  rng_seed(&r, test_seed() * 77);
  random_bf16(&r, in, nin, false);
  run_pool(c, FW_POOL_GLOBAL, &ga, in, got_g);
  run_pool(c, FW_POOL_AVG, &aa, in, got_a);
  pool_golden_global_avg(s.n, s.c, s.h, s.w, in, want);
  for (size_t i = 0; i < nout; i++) {
    cr_assert_eq(got_g[i], want[i], "GlobalAveragePool out[%zu] 0x%04x golden 0x%04x", i, got_g[i], want[i]);
    cr_assert_eq(got_a[i], want[i], "AveragePool 5x7 out[%zu] 0x%04x golden 0x%04x", i, got_a[i], want[i]);
  }
  free(in);
  chip_free(c);
}

Test(pool, on_two_cores) {
  static const shape_t mx[] = {
      {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},  /* 10 rows: 5 a core, split inside image 1 */
      {1, 3, 1, 4, 1, 2, 1, 2, 0, 0, 0, 0, false, 0, 0, 0},  /* one output row: core 1 has nothing */
  };
  check_shapes(4, 2, FW_POOL_MAX, mx, COUNT(mx), false);
  static const shape_t av[] = {{1, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 1, 0}};
  check_shapes(4, 2, FW_POOL_AVG, av, COUNT(av), false);
  static const shape_t gl[] = {{3, 6, 4, 5, 0, 0, 0, 0, 0, 0, 0, 0, false, 1, 1, 0}};
  check_shapes(4, 2, FW_POOL_GLOBAL, gl, COUNT(gl), false);
}

/* The reciprocal the averages multiply by: the golden model's long division against the
 * host's 1/n in double rounded to float (the same but where double rounding could differ). */
Test(pool, reciprocals_are_rounded_to_nearest) {
  for (uint64_t n = 1; n <= 70000; n++) {
    const float host = (float)(1.0 / (double)n);
    cr_assert_eq(pool_golden_recip(n), bits_of_float(host), "1/%llu", (unsigned long long)n);
  }
  cr_assert_eq(pool_golden_recip(9), 0x3DE38E39u);
  cr_assert_eq(pool_golden_recip(49), 0x3CA72F05u);
}

Test(pool, output_sizes) {
  cr_assert_eq(fw_pool_out_size(112, 3, 2, 1, 1), 56);
  cr_assert_eq(fw_pool_out_size(7, 2, 2, 0, 0), 3);
  cr_assert_eq(fw_pool_out_size(2, 3, 1, 0, 0), 0);
  cr_assert_eq(fw_pool_out_size(5, 0, 1, 0, 0), 0);
  for (uint32_t in = 1; in < 20; in++)
    for (uint32_t k = 1; k < 6; k++)
      for (uint32_t s = 1; s < 4; s++)
        for (uint32_t p = 0; p < k; p++)
          cr_assert_eq(fw_pool_out_size(in, k, s, p, k - 1 - p), pool_golden_out_size(in, k, s, p, k - 1 - p));
}

/* The timing contract (docs/timing.md, "Pooling"): while the vector unit never waits for the
 * DMA queue, core k takes
 *   V + V1 + (lead - 1) p + (tail - 1) p + 2 L + 15
 * cycles (V lines through the vector unit, V1 one-line VECs, lead the DMA rows of the first
 * output row's loads, tail those of the last row's store, p = ceil(row bytes / (B / cores)),
 * L the HBM latency) and the kernel the largest over its cores. Always at least the larger
 * of V + V1 and the DMA rows' p (load + store). */
static int64_t contract(const chip_t *c, fw_pool_kind_t kind, const fw_pool_args_t *run, unsigned row_bytes,
                        int64_t *lower) {
  const chip_geometry_t *g = chip_geometry(c);
  const chip_config_t *cfg = chip_config(c);
  const unsigned cores = isa_geometry_cores(g), share = cfg->hbm_bytes_per_cycle / cores;
  const int64_t p = (row_bytes + share - 1) / share, L = cfg->hbm_latency;
  int64_t most = 0;
  *lower = 0;
  for (unsigned k = 0; k < cores; k++) {
    fw_pool_cost_t co;
    char err[256];
    cr_assert_eq(fw_pool_cost(g, kind, run, k, &co, err, sizeof err), 0, "%s", err);
    if (!co.vec_cmds) continue;
    const int64_t v = (int64_t)(co.vec_lines + co.vec_single), d = p * (int64_t)(co.load_rows + co.store_rows);
    const int64_t f = v + ((int64_t)co.lead_rows - 1) * p + ((int64_t)co.tail_rows - 1) * p + 2 * L + 15;
    cr_assert_eq(fw_pool_contract_cycles(&co, (uint32_t)p, (uint32_t)L), (uint64_t)f);
    most = f > most ? f : most;
    *lower = v > *lower ? v : *lower;
    *lower = d > *lower ? d : *lower;
  }
  return most;
}

static void check_contract(unsigned cores, unsigned bw, unsigned lat, fw_pool_kind_t kind, const shape_t *s) {
  chip_config_t cfg = test_chip_config(4, 4, bw, lat);
  if (cores > 1) cfg.mxus = 2, cfg.cores = cores;
  chip_t *c = test_chip_new(&cfg);
  const uint64_t cycles = check_shape(c, kind, s, false);
  fw_pool_args_t a = args_of(s);
  a.in.addr = 0x1000, a.out.addr = 1u << 21;
  int64_t lower;
  const int64_t want = contract(c, kind, &a, 8, &lower);
  cr_assert_eq((int64_t)cycles, want, "%u cores, B %u, L %u, kind %d, %ux%ux%ux%u %ux%u/%u: %llu cycles, contract %lld",
               cores, bw, lat, kind, s->n, s->c, s->h, s->w, s->kh, s->kw, s->sh, (unsigned long long)cycles,
               (long long)want);
  cr_assert_geq((int64_t)cycles, lower);
  chip_free(c);
}

Test(pool, meets_its_timing_contract) {
  static const shape_t sh[] = {
      {1, 4, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0},
      {2, 4, 17, 33, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0},
      {1, 8, 17, 33, 3, 3, 2, 2, 1, 1, 1, 1, false, 1, 1, 0},  /* two blocks a pixel */
      {1, 4, 16, 16, 2, 2, 2, 2, 0, 0, 0, 0, false, 0, 0, 0},
      {1, 4, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1, false, 0, 0, 0},
      {1, 4, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, true, 0, 0, 0},
  };
  static const unsigned lat[] = {1, 10};
  for (int kind = FW_POOL_MAX; kind <= FW_POOL_AVG; kind++)
    for (size_t i = 0; i < COUNT(sh); i++) {
      for (size_t l = 0; l < COUNT(lat); l++) {
        check_contract(1, 64, lat[l], kind, &sh[i]);
        check_contract(1, 8, lat[l], kind, &sh[i]);  /* a row a cycle exactly */
        check_contract(2, 64, lat[l], kind, &sh[i]);
      }
      if (i == 1 || i == 2 || i == 4) check_contract(1, 64, 40, kind, &sh[i]);
    }
}

/* Where the DMA queue is what the vector unit waits for (a slow HBM port), the contract is a
 * lower bound: cycles stay above it and above both units' own work. */
Test(pool, is_bounded_when_hbm_is_slow) {
  static const shape_t s[] = {
      {1, 4, 16, 16, 2, 2, 2, 2, 0, 0, 0, 0, false, 0, 0, 0},
      {2, 4, 17, 33, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0},
  };
  for (size_t i = 0; i < COUNT(s); i++)
    for (unsigned cores = 1; cores <= 2; cores++) {
      chip_config_t cfg = test_chip_config(4, 4, 4, 40);
      if (cores > 1) cfg.mxus = 2, cfg.cores = cores;
      chip_t *c = test_chip_new(&cfg);
      const uint64_t cycles = check_shape(c, FW_POOL_MAX, &s[i], false);
      fw_pool_args_t a = args_of(&s[i]);
      a.in.addr = 0x1000, a.out.addr = 1u << 21;
      int64_t lower;
      const int64_t f = contract(c, FW_POOL_MAX, &a, 8, &lower);
      cr_assert_gt((int64_t)cycles, f, "shape %zu, %u cores: %llu cycles, contract %lld", i, cores,
                   (unsigned long long)cycles, (long long)f);
      cr_assert_geq((int64_t)cycles, lower);
      chip_free(c);
    }
}

/* The figure of docs/timing.md: ResNet-50's MaxPool (112x112x64 -> 56x56x64, 3x3/2 pad 1,
 * batch 1) on a 128x128 chip of the fast model (v3's HBM: 957 bytes a cycle, latency 100), one
 * core and v3's two, bit-exact and to the contract's cycle. */
Test(pool, resnet50_maxpool_on_a_128x128_chip) {
  const shape_t s = {1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 1, 0};
  const uint64_t want[2] = {44118, 22613};
  for (unsigned cores = 1; cores <= 2; cores++) {
    chip_config_t cfg = chip_config_default(128, 128);
    cfg.model = CHIP_MODEL_FAST, cfg.hbm_bytes = 1u << 23, cfg.seed = test_seed();
    if (cores > 1) cfg.mxus = 2, cfg.cores = cores;
    chip_t *c = test_chip_new(&cfg);
    const uint64_t cycles = check_shape(c, FW_POOL_MAX, &s, false);
    fw_pool_args_t a = args_of(&s);
    a.in.addr = 0x1000, a.out.addr = 1u << 22;
    int64_t lower;
    cr_assert_eq((int64_t)cycles, contract(c, FW_POOL_MAX, &a, 128, &lower));
    cr_assert_eq(cycles, want[cores - 1], "%u cores: %llu cycles", cores, (unsigned long long)cycles);
    chip_free(c);
  }
}

/* Shapes the kernels cannot run are refused with a message naming what is wrong. */
static void refused(fw_pool_kind_t kind, const fw_pool_args_t *a, const char *what) {
  chip_geometry_t g;
  cr_assert_eq(chip_top_geometry(4, 4, 1, 1, &g), 0);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  char err[256] = "";
  const int rc = kind == FW_POOL_MAX   ? fw_maxpool(&g, a, &cq, &dq, err, sizeof err)
                 : kind == FW_POOL_AVG ? fw_avgpool(&g, a, &cq, &dq, err, sizeof err)
                                       : fw_global_avgpool(&g, &a->in, &a->out, &cq, &dq, err, sizeof err);
  cr_expect_eq(rc, -1, "accepted; wanted \"%s\"", what);
  cr_expect(strstr(err, what) != NULL, "message \"%s\", wanted \"%s\"", err, what);
  fw_pool_cost_t co;
  cr_expect_eq(fw_pool_cost(&g, kind, a, 0, &co, err, sizeof err), -1);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
}

Test(pool, bad_shapes_are_refused) {
  const shape_t base = {1, 4, 8, 8, 3, 3, 2, 2, 1, 1, 1, 1, false, 0, 0, 0};
  fw_pool_args_t ok = args_of(&base);
  ok.in.addr = 0x1000, ok.out.addr = 0x80000000u;
  fw_pool_args_t a = ok;
  a.kh = 0;
  refused(FW_POOL_MAX, &a, "kernel height 0 is outside 1..64");
  a = ok, a.sw = 65;
  refused(FW_POOL_AVG, &a, "stride width 65 is outside 1..64");
  a = ok, a.pad_left = 3;
  refused(FW_POOL_MAX, &a, "must each be below the 3x3 kernel");
  a = ok, a.in.h = 1, a.in.w = 1, a.pad_top = a.pad_bottom = a.pad_left = a.pad_right = 0;
  refused(FW_POOL_MAX, &a, "larger than the padded 1x1 input");
  a = ok, a.out.w = 5;
  refused(FW_POOL_MAX, &a, "the output is 4x5; a 3x3 kernel, stride 2x2, over 8x8 gives 4x4");
  a = ok, a.out.c = 5;
  refused(FW_POOL_AVG, &a, "the output has 1 images of 5 channels, the input 1 of 4");
  a = ok, a.in.n = 0;
  refused(FW_POOL_MAX, &a, "the input has a zero dimension");
  a = ok, a.out.addr = 0x1100;
  refused(FW_POOL_MAX, &a, "overlap in HBM");
  a = ok, a.out.addr = 0xFFFFFFC0u;
  refused(FW_POOL_MAX, &a, "the output (128 bytes at 0xffffffc0) reaches past 32-bit HBM addresses");
  a = ok, a.vmem_lines = 20;
  refused(FW_POOL_MAX, &a, "do not fit the 20 lines of VMEM");
  a = ok, a.in.w = 300000, a.out.w = fw_pool_out_size(300000, 3, 2, 1, 1);
  refused(FW_POOL_AVG, &a, "an input row of 300000 pixels does not fit");
  a = ok, a.in.n = a.out.n = 20000;
  refused(FW_POOL_MAX, &a, "(split the batch)");
  /* GlobalAveragePool */
  fw_pool_args_t gl = ok;
  gl.out.h = gl.out.w = 1;
  a = gl, a.out.w = 2;
  refused(FW_POOL_GLOBAL, &a, "the output is 1x2, not 1x1");
  a = gl, a.in.w = 200000;
  refused(FW_POOL_GLOBAL, &a, "two input rows of 200000 pixels do not fit");
  a = gl, a.out.n = 2;
  refused(FW_POOL_GLOBAL, &a, "the output has 2 images of 4 channels, the input 1 of 4");
  a = gl, a.in.n = a.out.n = 40000;
  refused(FW_POOL_GLOBAL, &a, "(split the batch)");
  /* the cost of a core the chip does not have */
  chip_geometry_t g;
  cr_assert_eq(chip_top_geometry(4, 4, 1, 1, &g), 0);
  fw_pool_cost_t co;
  char err[256];
  cr_expect_eq(fw_pool_cost(&g, FW_POOL_MAX, &ok, 1, &co, err, sizeof err), -1);
  cr_expect(strstr(err, "no core 1") != NULL, "%s", err);
  cr_expect_eq(fw_pool_cost(&g, FW_POOL_MAX, &ok, 0, &co, err, sizeof err), 0, "%s", err);
}
