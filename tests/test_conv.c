/*
 * test_conv: the convolution kernel (fw/conv.h; docs/models.md, "Convolution as a GEMM") on a
 * chip of this run's model, held bit for bit to the golden model (csim/golden/conv_golden.h):
 * the shapes ResNet uses (the 7x7/2 stem, 3x3, 1x1, strided 1x1 projections) with bias,
 * residual and ReLU, odd channel counts, borders wider than the padding, several cores and
 * MXUs; the output's border is left zero; bad shapes are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip_test.h"
#include "fw/conv.h"
#include "golden/conv_golden.h"
#include "util/rng.h"

TestSuite(conv, .timeout = 300);

typedef struct {
  unsigned n, c, h, w, cout, kh, kw, sh, sw, pt, pl, pb, pr;
  unsigned in_b, out_b;  /* borders of the input (rows and columns) and of the output */
  bool bias, res, relu;
} conv_case_t;

/* HBM: a zero line, then the tensors one after another, 64-byte aligned. */
typedef struct {
  uint64_t next;
} hbm_alloc_t;
static uint32_t take(hbm_alloc_t *h, uint64_t bytes) {
  uint64_t at = h->next;
  h->next = (at + bytes + 63) & ~63ull;
  cr_assert_lt(h->next, 1ull << 22, "the case needs more than the test chip's 4 MiB of HBM");
  return (uint32_t)at;
}

/* NCHW bf16 values into t's layout in HBM (border and padding channels zero). */
static void put_act(chip_t *c, const fw_act_t *t, const uint16_t *v) {
  uint16_t *img = calloc(fw_act_bytes(t) / 2, 2);
  for (uint32_t n = 0; n < t->n; n++)
    for (uint32_t ch = 0; ch < t->c; ch++)
      for (uint32_t y = 0; y < t->h; y++)
        for (uint32_t x = 0; x < t->w; x++)
          img[(fw_act_pixel_addr(t, n, y, x) - t->addr) / 2 + ch] = v[((n * t->c + ch) * t->h + y) * t->w + x];
  cr_assert_eq(chip_hbm_write(c, t->addr, img, fw_act_bytes(t)), 0);
  free(img);
}

/* t's interior out of HBM as NCHW; every border and padding channel must still be zero. */
static void get_act(chip_t *c, const fw_act_t *t, uint16_t *v) {
  uint16_t *img = malloc(fw_act_bytes(t));
  cr_assert_eq(chip_hbm_read(c, t->addr, img, fw_act_bytes(t)), 0);
  for (uint32_t n = 0; n < t->n; n++)
    for (int64_t y = -(int64_t)t->bh; y < (int64_t)(t->h + t->bh); y++)
      for (int64_t x = -(int64_t)t->bw; x < (int64_t)(t->w + t->bw); x++)
        for (uint32_t ch = 0; ch < fw_act_cp(t); ch++) {
          const uint16_t got = img[(fw_act_pixel_addr(t, n, y, x) - t->addr) / 2 + ch];
          const bool inside = y >= 0 && x >= 0 && y < t->h && x < t->w && ch < t->c;
          if (inside) v[((n * t->c + ch) * t->h + (uint32_t)y) * t->w + (uint32_t)x] = got;
          else cr_assert_eq(got, 0, "image %u pixel (%lld, %lld) channel %u outside the interior: 0x%04x", n,
                            (long long)y, (long long)x, ch, got);
        }
  free(img);
}

static void fill(rng_t *r, uint16_t *v, size_t count) {
  for (size_t i = 0; i < count; i++) v[i] = rng_bf16(r, -3, 2);
}

/* Builds the layer of `cs` on chip c, runs it, checks it against the golden model; returns the
 * cycles. */
static uint64_t check_conv(chip_t *c, const conv_case_t *cs, rng_t *rng) {
  const chip_geometry_t *g = chip_geometry(c);
  const conv_golden_args_t ga = {cs->n, cs->c, cs->h, cs->w, cs->cout, cs->kh, cs->kw, cs->sh, cs->sw,
                                 cs->pt, cs->pl, cs->pb, cs->pr, cs->bias, cs->res, cs->relu};
  const unsigned oh = conv_golden_out_h(&ga), ow = conv_golden_out_w(&ga);
  hbm_alloc_t h = {0};
  fw_conv_args_t a = {.relu = cs->relu, .has_bias = cs->bias};
  a.zero = take(&h, 4ull * g->cols);
  a.win = (fw_gemm_window_t){.in = {0, cs->n, cs->c, cs->h, cs->w, cs->in_b, cs->in_b},
                             .out = {0, cs->n, cs->cout, oh, ow, cs->out_b, cs->out_b},
                             .has_res = cs->res, .kh = cs->kh, .kw = cs->kw, .sh = cs->sh, .sw = cs->sw,
                             .pt = cs->pt, .pl = cs->pl};
  a.win.res = a.win.out, a.win.res.bh = a.win.res.bw = cs->out_b ? cs->out_b - 1 : 1;
  a.win.in.addr = take(&h, fw_act_bytes(&a.win.in));
  a.win.out.addr = take(&h, fw_act_bytes(&a.win.out));
  a.win.res.addr = take(&h, fw_act_bytes(&a.win.res));
  const uint32_t cp = fw_act_cp(&a.win.in), k = fw_conv_k(g->rows, cs->kh, cs->kw, cp), ldb = (cs->cout + 1) & ~1u;
  a.weights = take(&h, 2ull * k * ldb);
  const uint32_t bias_lines = (cs->cout + g->cols - 1) / g->cols;
  a.bias = take(&h, 4ull * g->cols * bias_lines);

  const size_t nx = (size_t)cs->n * cs->c * cs->h * cs->w, nw = (size_t)cs->cout * cs->c * cs->kh * cs->kw;
  const size_t ny = (size_t)cs->n * cs->cout * oh * ow;
  uint16_t *x = malloc(2 * nx), *w = malloc(2 * nw), *res = malloc(2 * ny), *y = malloc(2 * ny), *want = malloc(2 * ny);
  uint32_t *bias = calloc((size_t)bias_lines * g->cols, 4);
  fill(rng, x, nx), fill(rng, w, nw), fill(rng, res, ny);
  for (unsigned i = 0; i < cs->cout; i++) bias[i] = (uint32_t)rng_bf16(rng, -2, 1) << 16;
  put_act(c, &a.win.in, x);
  put_act(c, &a.win.res, res);
  /* the output: border zero, interior a pattern the kernel must overwrite */
  uint16_t *junk = malloc(2 * ny);
  for (size_t i = 0; i < ny; i++) junk[i] = 0x7f7f;
  put_act(c, &a.win.out, junk);
  free(junk);
  /* B in the kernel's K order (the host lays the weights out once) */
  uint16_t *bm = calloc((size_t)k * ldb, 2);
  for (unsigned co = 0; co < cs->cout; co++)
    for (unsigned ch = 0; ch < cs->c; ch++)
      for (unsigned i = 0; i < cs->kh; i++)
        for (unsigned j = 0; j < cs->kw; j++)
          bm[(size_t)fw_conv_weight_row(g->rows, cs->kw, cp, i, j, ch) * ldb + co] =
              w[((co * cs->c + ch) * cs->kh + i) * cs->kw + j];
  cr_assert_eq(chip_hbm_write(c, a.weights, bm, 2ull * k * ldb), 0);
  cr_assert_eq(chip_hbm_write(c, a.bias, bias, 4ull * g->cols * bias_lines), 0);
  cr_assert_eq(chip_hbm_write(c, a.zero, (uint32_t[256]){0}, 4ull * g->cols), 0);

  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  for (unsigned i = 0; i < CHIP_MAX_CORES; i++) fw_prog_init(&cq[i]), fw_prog_init(&dq[i]);
  char err[512];
  cr_assert_eq(fw_conv2d(g, &a, cq, dq, err, sizeof err), 0, "%s", err);
  const uint64_t cycles = test_run_cores(c, cq, dq, 50000000);
  get_act(c, &a.win.out, y);
  cr_assert_eq(conv_golden(g->rows, &ga, x, w, bias, cs->res ? res : NULL, want), 0);
  for (size_t i = 0; i < ny; i++)
    cr_assert_eq(y[i], want[i],
                 "%ux%u/%u conv %u -> %u channels on %ux%u: output %zu (image %zu channel %zu pixel %zu): chip 0x%04x "
                 "golden 0x%04x", cs->kh, cs->kw, cs->sh, cs->c, cs->cout, cs->h, cs->w, i, i / (cs->cout * oh * ow),
                 i / (oh * ow) % cs->cout, i % (oh * ow), y[i], want[i]);
  free(x), free(w), free(res), free(y), free(want), free(bias), free(bm);
  return cycles;
}

/* The conv shapes of a ResNet, scaled down: n c h w cout kh kw sh sw pt pl pb pr in_b out_b bias res relu */
static const conv_case_t resnet_shapes[] = {
    {2, 3, 12, 12, 8, 7, 7, 2, 2, 3, 3, 3, 3, 3, 1, true, false, true},    /* the stem */
    {2, 8, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, true, false, true},      /* 3x3 */
    {2, 8, 6, 6, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, true, true, true},      /* 1x1 with the residual */
    {2, 8, 6, 6, 12, 1, 1, 2, 2, 0, 0, 0, 0, 0, 0, true, false, false},    /* strided 1x1 projection */
    {1, 5, 7, 5, 7, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1, true, true, true},       /* odd everything, wide borders */
    {3, 9, 4, 4, 5, 3, 3, 1, 1, 0, 0, 0, 0, 0, 2, false, false, false},    /* no padding, no bias */
    {2, 6, 5, 6, 3, 1, 3, 1, 2, 0, 1, 0, 1, 1, 0, true, false, true},      /* a 1x3 kernel, uneven strides */
    {1, 40, 3, 3, 20, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, true, true, false},    /* a fully connected layer as 1x1 */
};

Test(conv, resnet_shapes_4x4) {
  chip_t *c = test_chip(4, 16, 7);
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 1);
  for (size_t i = 0; i < sizeof resnet_shapes / sizeof resnet_shapes[0]; i++) check_conv(c, &resnet_shapes[i], &rng);
  chip_free(c);
}

Test(conv, resnet_shapes_16x16) {
  chip_t *c = test_chip(16, 64, 20);
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 2);
  for (size_t i = 0; i < sizeof resnet_shapes / sizeof resnet_shapes[0]; i++) check_conv(c, &resnet_shapes[i], &rng);
  chip_free(c);
}

Test(conv, two_cores_of_two_mxus) {
  chip_config_t cfg = test_chip_config(4, 4, 16, 7);
  cfg.mxus = 2, cfg.cores = 2;
  chip_t *c = test_chip_new(&cfg);
  rng_t rng;
  rng_seed(&rng, test_seed() * 7 + 3);
  for (size_t i = 0; i < sizeof resnet_shapes / sizeof resnet_shapes[0]; i++) check_conv(c, &resnet_shapes[i], &rng);
  chip_free(c);
}

Test(conv, bad_shapes_are_refused) {
  const chip_geometry_t g = {.rows = 4, .cols = 4, .acc_depth = 4096, .vmem_lines = 262144, .queue_depth = 32768};
  fw_conv_args_t a = {.win = {.in = {0, 1, 4, 6, 6, 0, 0}, .out = {4096, 1, 4, 6, 6, 0, 0}, .kh = 3, .kw = 3,
                              .sh = 1, .sw = 1, .pt = 1, .pl = 1}};
  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  for (unsigned i = 0; i < CHIP_MAX_CORES; i++) fw_prog_init(&cq[i]), fw_prog_init(&dq[i]);
  char err[256];
  cr_assert_eq(fw_conv2d(&g, &a, cq, dq, err, sizeof err), -1, "padding 1 on a border of 0 was accepted");
  cr_assert(strstr(err, "border"), "%s", err);
  a.win.in.bh = a.win.in.bw = 1, a.win.out.n = 2;
  cr_assert_eq(fw_conv2d(&g, &a, cq, dq, err, sizeof err), -1);
  a.win.out.n = 1, a.win.m0 = 36;
  cr_assert_eq(fw_conv2d(&g, &a, cq, dq, err, sizeof err), -1);
  cr_assert(strstr(err, "past"), "%s", err);
  a.win.m0 = 0;
  cr_assert_eq(fw_conv2d(&g, &a, cq, dq, err, sizeof err), 0, "%s", err);
  for (unsigned i = 0; i < CHIP_MAX_CORES; i++) fw_prog_free(&cq[i]), fw_prog_free(&dq[i]);
}

/* The im2col DMAs of a K tile (docs/models.md, "Convolution as a GEMM", timing): n rows made by one
 * strided DMA per run of pixels in an output row cost what one DMA of n rows costs,
 * (n - 1) ceil(b / B) + L + 6 cycles for [DMAs; FENCE; HALT], however many runs the rows take: the
 * DMA engine takes the next descriptor while the last requests are in flight. Held to the cycle
 * over output widths 1, 2, 7 and 9 (runs of one row up to whole rows), K tiles in and past a
 * kernel row's first, bandwidths and latencies. */
Test(conv, im2col_dmas_meet_the_timing_contract) {
  const unsigned bws[] = {64, 16, 8}, lats[] = {1, 10, 100}, widths[] = {1, 2, 7, 9};
  for (unsigned bi = 0; bi < 3; bi++)
    for (unsigned li = 0; li < 3; li++)
      for (unsigned wi = 0; wi < 4; wi++) {
        chip_t *c = test_chip(16, bws[bi], lats[li]);
        const unsigned ow = widths[wi];
        const fw_gemm_window_t w = {.in = {4096, 2, 8, 5, ow, 1, 1}, .out = {0, 2, 4, 5, ow, 0, 0}, .kh = 3, .kw = 3,
                                    .sh = 1, .sw = 1, .pt = 1, .pl = 1};
        for (unsigned kt = 0; kt < 3; kt++)
          for (unsigned n = 1; n <= 2 * 5 * ow - 3; n += 5) {
            fw_prog_t p;
            fw_prog_init(&p);
            fw_im2col_dma(&p, &w, 16, kt, 3 % (2 * 5 * ow), n, 0, 1);
            const size_t runs = p.count;
            fw_fence(&p);
            fw_halt(&p);
            test_load_once(c, ISA_QUEUE_DMA, &p);
            chip_status_t st;
            test_run(c, ISA_QMASK_DMA, 100000, &st);
            /* kernel row kt / 2, part kt % 2: 16 or 8 of the row's 24 bf16 */
            const unsigned bytes = kt % 2 ? 16 : 32, per = bytes <= bws[bi] ? 1 : bytes / bws[bi];
            cr_assert_eq(st.cycles, (uint64_t)(n - 1) * per + lats[li] + 6,
                         "width %u K tile %u: %u rows in %zu DMAs at B %u L %u took %llu cycles", ow, kt, n, runs,
                         bws[bi], lats[li], (unsigned long long)st.cycles);
            cr_assert_eq(chip_sem(c, 1), 1, "the last DMA signals");
            cr_assert_eq(st.hbm_bytes, (uint64_t)n * bytes);
            chip_reset(c);
          }
        chip_free(c);
      }
}
