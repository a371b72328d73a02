/*
 * Tests of training on a slice (fw/train.h, runtime/pod_train.h, docs/training.md): every
 * parallel layout -- one chip, data parallel on 1-D and 2-D slices, model parallel, both at
 * once, a slice inside a larger pod, ragged sizes -- reproduces the reference trainer
 * (golden/train_golden) on every parameter and probability bit after every step, leaves every
 * semaphore at zero, and learns; the step's cycles do not depend on the data or the reset
 * values, and a lone chip's step is its compute-only step; the plan refuses every bad layout
 * with a message naming it.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/train.h"
#include "golden/arith_golden.h"
#include "golden/train_golden.h"
#include "runtime/pod_train.h"
#include "test_util.h"
#include "util/bits.h"
#include "util/rng.h"

TestSuite(train, .timeout = 240);

typedef struct {
  unsigned pod_w, pod_h;
  fw_slice_t slice;
  unsigned dp, mp, features, hidden, classes, batch, steps;
  unsigned mxu;  /* R = C of the chips; 0: 4 */
  unsigned mxus; /* MXUs per core; 0: 1 */
  unsigned cores; /* cores per chip; 0: 1 */
} layout_t;

typedef struct {
  uint16_t *x;
  uint8_t *label;
  uint32_t *w[3], *bias[3];
  unsigned examples;
} data_t;

/* Learnable synthetic data (each class a centre plus noise) and small random weights. */
static void make_data(const layout_t *l, uint64_t seed, data_t *d) {
  rng_t r;
  rng_seed(&r, seed);
  d->examples = 4 * l->batch;
  d->x = malloc((size_t)d->examples * l->features * 2);
  d->label = malloc(d->examples);
  float *centre = malloc((size_t)l->classes * l->features * sizeof *centre);
  for (unsigned i = 0; i < l->classes * l->features; i++) centre[i] = (float)rng_below(&r, 1000) / 1000.0f;
  for (unsigned e = 0; e < d->examples; e++) {
    d->label[e] = (uint8_t)rng_below(&r, l->classes);
    for (unsigned f = 0; f < l->features; f++)
      d->x[(size_t)e * l->features + f] = arith_golden_fp32_to_bf16(
          bits_of_float(centre[d->label[e] * l->features + f] + (float)rng_below(&r, 400) / 1000.0f - 0.2f));
  }
  free(centre);
  const unsigned rows[3] = {l->features, l->hidden, l->hidden}, cols[3] = {l->hidden, l->hidden, l->classes};
  for (unsigned k = 0; k < 3; k++) {
    d->w[k] = malloc((size_t)rows[k] * cols[k] * 4), d->bias[k] = malloc(cols[k] * 4);
    const float a = sqrtf(6.0f / (float)rows[k]);
    for (size_t i = 0; i < (size_t)rows[k] * cols[k]; i++)
      d->w[k][i] = bits_of_float(a * ((float)rng_below(&r, 20001) / 10000.0f - 1.0f));
    for (unsigned i = 0; i < cols[k]; i++) d->bias[k][i] = bits_of_float((float)rng_below(&r, 100) / 1000.0f);
  }
}

static void free_data(data_t *d) {
  free(d->x), free(d->label);
  for (unsigned k = 0; k < 3; k++) free(d->w[k]), free(d->bias[k]);
}

static pod_train_config_t config_of(const layout_t *l, const data_t *d, uint64_t seed) {
  const unsigned mxu = l->mxu ? l->mxu : 4;
  pod_config_t machine = test_machine(l->pod_w, l->pod_h, mxu, mxu);
  machine.chip.mxus = l->mxus, machine.chip.cores = l->cores, machine.chip.seed = seed, machine.link_latency = 1;
  pod_train_config_t c = {.machine = machine, .slice = l->slice,
                          .net = {l->features, l->hidden, l->classes, l->batch, l->dp, l->mp, bits_of_float(0.5f)},
                          .examples = d->examples, .x = d->x, .label = d->label};
  c.slice.pod_w = l->pod_w, c.slice.pod_h = l->pod_h;
  for (unsigned k = 0; k < 3; k++) c.w[k] = d->w[k], c.bias[k] = d->bias[k];
  return c;
}

/* The mean cross-entropy of the step's batch from the chips' probabilities. */
static double batch_loss(pod_train_t *t, const pod_train_config_t *c, const layout_t *l, unsigned first,
                         uint32_t *probs) {
  const fw_train_plan_t *pl = pod_train_plan(t);
  double sum = 0;
  for (unsigned i = 0; i < l->slice.w * l->slice.h; i++) {
    fw_train_place_t pc;
    fw_train_place(pl, &c->slice, l->slice.x0 + i % l->slice.w, l->slice.y0 + i / l->slice.w, &pc);
    if (pc.mp_rank) continue;
    cr_assert_eq(pod_train_read(t, i, NULL, probs), 0);
    for (unsigned e = 0; e < pl->batch_per_chip; e++) {
      float p;
      memcpy(&p, &probs[(size_t)e * pl->lanes + c->label[first + pc.dp_rank * pl->batch_per_chip + e]], 4);
      sum -= log(p > 1e-30f ? p : 1e-30f);
    }
  }
  return sum / l->batch;
}

/* A layout's pod and the reference trainer on the same data and initial weights. */
typedef struct {
  data_t d;
  pod_train_config_t c;
  pod_train_t *t;
  train_golden_t *ref;
} trainers_t;

static void trainers_new(trainers_t *r, const layout_t *l, uint64_t data_seed, uint64_t chip_seed, float lr) {
  make_data(l, data_seed, &r->d);
  r->c = config_of(l, &r->d, chip_seed);
  r->c.net.lr = bits_of_float(lr);
  char err[4096];
  rt_status_t rc;
  r->t = pod_train_new(&r->c, &rc, err, sizeof err);
  cr_assert_not_null(r->t, "%s", err);
  const uint32_t *wc[3] = {r->d.w[0], r->d.w[1], r->d.w[2]}, *bc[3] = {r->d.bias[0], r->d.bias[1], r->d.bias[2]};
  r->ref = train_golden_new(&r->c.net, &r->c.slice, r->c.machine.chip.cols, pod_train_plan(r->t)->cores, wc, bc, err,
                            sizeof err);
  cr_assert_not_null(r->ref, "%s", err);
}

static void trainers_free(trainers_t *r) {
  train_golden_free(r->ref);
  pod_train_free(r->t);
  free_data(&r->d);
}

/* After step s: every chip's parameters and probabilities, every lane (pad lanes included),
 * must be the reference trainer's. */
static void expect_chips_match(pod_train_t *t, const train_golden_t *ref, const layout_t *l, unsigned s,
                               uint32_t *params, uint32_t *probs) {
  const fw_train_plan_t *pl = pod_train_plan(t);
  const size_t plines = (size_t)pl->param_lines * pl->lanes;
  for (unsigned i = 0; i < l->slice.w * l->slice.h; i++) {
    cr_assert_eq(pod_train_read(t, i, params, probs), 0);
    size_t n;
    const uint32_t *want = train_golden_params(ref, i, &n), *wantp = train_golden_probs(ref, i);
    cr_assert_eq(n, pl->param_lines);
    for (size_t j = 0; j < plines; j++)
      cr_assert_eq(params[j], want[j], "dp %u mp %u step %u chip %u parameter line %zu lane %zu: 0x%08x, reference 0x%08x",
                   l->dp, l->mp, s + 1, i, j / pl->lanes, j % pl->lanes, params[j], want[j]);
    for (size_t j = 0; j < (size_t)pl->batch_per_chip * pl->lanes; j++)
      cr_assert_eq(probs[j], wantp[j], "dp %u mp %u step %u chip %u probability %zu: 0x%08x, reference 0x%08x", l->dp,
                   l->mp, s + 1, i, j, probs[j], wantp[j]);
  }
}

/* Trains `steps` steps on the chips and the reference trainer, comparing every chip after
 * every step; returns the cycles of the last step and the first and last losses (the data is
 * four batches, so steps 1 and 4k + 1 see the same examples). */
static uint64_t check_layout(const layout_t *l, uint64_t seed, double *loss0, double *loss1) {
  trainers_t r;
  trainers_new(&r, l, seed, seed, 0.5f);
  char err[4096];
  const fw_train_plan_t *pl = pod_train_plan(r.t);
  const size_t plines = (size_t)pl->param_lines * pl->lanes;
  uint32_t *params = malloc(plines * 4), *probs = malloc((size_t)pl->batch_per_chip * pl->lanes * 4);
  uint64_t cycles = 0, first_cycles = 0;
  for (unsigned s = 0; s < l->steps; s++) {
    const unsigned first = (s % (r.d.examples / l->batch)) * l->batch;
    cr_assert_eq(pod_train_step(r.t, first, &cycles, err, sizeof err), RT_OK, "step %u: %s", s + 1, err);
    cr_assert_eq(train_golden_step(r.ref, r.d.x, r.d.label, first), 0);
    cr_assert_eq(pod_train_sems_left(r.t), 0, "step %u left semaphores set", s + 1);
    expect_chips_match(r.t, r.ref, l, s, params, probs);
    double loss = batch_loss(r.t, &r.c, l, first, probs);
    if (s == 0) *loss0 = loss, first_cycles = cycles;
    *loss1 = loss;
    /* the step's programs are the same every step: so are its cycles */
    cr_assert_eq(cycles, first_cycles, "step %u took %llu cycles, step 1 %llu", s + 1, (unsigned long long)cycles,
                 (unsigned long long)first_cycles);
  }
  free(params), free(probs);
  trainers_free(&r);
  return cycles;
}

static const layout_t LAYOUTS[] = {
    /* pod, slice, dp, mp, features, hidden, classes, batch, steps */
    {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 8, 8, 4, 8, 9, 4, 1, 0},          /* one chip */
    {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 8, 8, 4, 16, 9, 4, 1, 0},         /* DP, 2-D torus all-reduce */
    {4, 1, {0, 0, 4, 1, 0, 0}, 4, 1, 6, 12, 3, 20, 9, 4, 1, 0},        /* DP on a ring, ragged sizes */
    {2, 2, {0, 0, 2, 2, 0, 0}, 1, 4, 8, 16, 4, 12, 9, 4, 1, 0},        /* MP over a 2-D slice */
    {2, 2, {0, 0, 2, 2, 0, 0}, 2, 2, 8, 16, 4, 16, 9, 4, 1, 0},        /* DP along X, MP along Y */
    {4, 3, {1, 1, 2, 2, 0, 0}, 2, 2, 10, 12, 3, 12, 9, 4, 1, 0},       /* inside a larger pod */
    {4, 2, {0, 0, 4, 2, 0, 0}, 4, 2, 5, 20, 4, 24, 9, 4, 1, 0},        /* a 4 x 2 slice, hidden 10 a chip */
    {4, 4, {0, 0, 3, 3, 0, 0}, 9, 1, 7, 9, 4, 18, 9, 4, 1, 0},     /* DP on a 3x3 mesh slice: the ring */
    {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 6, 8, 3, 4, 9, 4, 1, 0},       /* one example a chip */
    {2, 2, {0, 0, 2, 1, 0, 0}, 2, 1, 64, 48, 10, 40, 5, 16, 1, 0},  /* 16-lane chips, digits-like shapes */
    {1, 2, {0, 0, 1, 2, 0, 0}, 1, 2, 30, 64, 10, 24, 5, 16, 1, 0},  /* 16-lane chips, MP */
};

Test(train, every_layout_matches_the_reference_bit_for_bit_and_learns) {
  for (unsigned i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++) {
    double loss0, loss1;
    check_layout(&LAYOUTS[i], test_seed() * 100 + i, &loss0, &loss1);
    cr_assert_lt(loss1, loss0, "layout %u (dp %u mp %u): the loss went from %g to %g", i, LAYOUTS[i].dp, LAYOUTS[i].mp,
                 loss0, loss1);
  }
}

/* Issue 27: a learning rate so large that the activations overflow. The chips compute whole
 * tiles, so the MXU's inf x 0 (an overflowed activation times a pad weight) puts NaN in pad
 * lanes and pad rows; the reference trainer must hold every lane as the chips do, step by step
 * until the weights are non-finite, and some pad lane must be among the non-finite ones (or
 * the case would not test the padding). Layouts with pad rows (features, hidden / mp not a
 * multiple of C), pad lanes (classes < C) and pad examples. */
Test(train, a_diverging_run_matches_the_reference_on_every_lane) {
  static const layout_t diverging[] = {
      {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 6, 6, 3, 5, 20, 4, 1, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 10, 20, 3, 24, 20, 4, 1, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 1, 4, 9, 24, 3, 12, 20, 4, 1, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 2, 2, 7, 12, 2, 10, 20, 4, 1, 0},
      {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 30, 20, 10, 16, 20, 16, 1, 0},
  };
  static const float lr[] = {1e30f, 1e15f, 1e8f, 1e30f, 1e20f};
  for (unsigned i = 0; i < sizeof diverging / sizeof diverging[0]; i++) {
    const layout_t *l = &diverging[i];
    trainers_t r;
    trainers_new(&r, l, test_seed() * 10 + i, test_seed(), lr[i]);
    char err[4096];
    const fw_train_plan_t *pl = pod_train_plan(r.t);
    /* which parameter lanes are padding: those a shard of all-ones leaves zero */
    const size_t plines = (size_t)pl->param_lines * pl->lanes;
    uint32_t *params = malloc(plines * 4), *probs = malloc((size_t)pl->batch_per_chip * pl->lanes * 4);
    uint32_t *real = malloc(plines * 4), *ones = malloc(plines * 4); /* (a shard is smaller than its lines) */
    for (size_t j = 0; j < plines; j++) ones[j] = 1;
    for (unsigned k = 0, at = 0; k < FW_TRAIN_LAYERS; at += pl->layer[k].lines * pl->lanes, k++)
      fw_train_pack(pl, k, ones, ones, real + at);
    bool diverged = false, pad_non_finite = false;
    for (unsigned s = 0; s < l->steps && !diverged; s++) {
      const unsigned first = (s % (r.d.examples / l->batch)) * l->batch;
      uint64_t cycles;
      cr_assert_eq(pod_train_step(r.t, first, &cycles, err, sizeof err), RT_OK, "layout %u step %u: %s", i, s + 1, err);
      cr_assert_eq(train_golden_step(r.ref, r.d.x, r.d.label, first), 0);
      expect_chips_match(r.t, r.ref, l, s, params, probs);
      for (unsigned chip = 0; chip < l->slice.w * l->slice.h; chip++) {
        cr_assert_eq(pod_train_read(r.t, chip, params, NULL), 0);
        for (size_t j = 0; j < plines; j++)
          if ((params[j] & 0x7F800000u) == 0x7F800000u) diverged = true, pad_non_finite |= real[j] == 0;
      }
    }
    cr_assert(diverged, "layout %u: the weights stayed finite at lr %g", i, (double)lr[i]);
    cr_assert(pad_non_finite, "layout %u: no pad lane became non-finite, the case does not test the padding", i);
    free(params), free(probs), free(real), free(ones);
    trainers_free(&r);
  }
}

/* The training step's GEMMs over two MXUs (their output tiles in groups, one per MXU):
 * every parameter and probability bit as the reference trainer's after every step, on a
 * lone chip, data parallel and model parallel, and each step faster than on one MXU. */
Test(train, two_mxus_match_the_reference_and_are_faster) {
  static const layout_t one_mxu[] = {
      {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 8, 16, 4, 16, 3, 4, 1, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 8, 16, 4, 32, 3, 4, 1, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 2, 2, 8, 16, 4, 16, 3, 4, 1, 0},
  };
  for (unsigned i = 0; i < sizeof one_mxu / sizeof one_mxu[0]; i++) {
    layout_t two = one_mxu[i];
    two.mxus = 2;
    double a0, a1, b0, b1;
    const uint64_t c1 = check_layout(&one_mxu[i], test_seed() * 10 + i, &a0, &a1);
    const uint64_t c2 = check_layout(&two, test_seed() * 10 + i, &b0, &b1);
    cr_assert(a0 == b0 && a1 == b1, "layout %u: the same losses on one and two MXUs", i);
    cr_assert_lt(c2, c1, "layout %u: two MXUs %llu cycles a step, one %llu", i, (unsigned long long)c2,
                 (unsigned long long)c1);
  }
}

/* Each core of a two-core chip is a data-parallel replica with half the chip's examples
 * (docs/training.md, "Cores"): bit-exact against the reference for a lone chip, data-, model-
 * and both-parallel slices, every core's probabilities and the parameters after every step;
 * the chips' cores on MXUs of their own make the step faster than one core. (The RTL is built
 * with two cores only as 4x4x2c2: two MXUs a core.) */
Test(train, two_cores_match_the_reference_and_are_faster) {
  static const layout_t one_core[] = { /* big enough that halving the MXU work outweighs the hand-overs */
      {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 16, 32, 4, 32, 3, 4, 2, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 16, 32, 4, 64, 3, 4, 2, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 1, 4, 16, 32, 4, 32, 3, 4, 2, 0},
      {2, 2, {0, 0, 2, 2, 0, 0}, 2, 2, 16, 32, 4, 32, 3, 4, 2, 0},
  };
  for (unsigned i = 0; i < sizeof one_core / sizeof one_core[0]; i++) {
    layout_t two = one_core[i];
    two.cores = 2;
    double a0, a1, b0, b1;
    const uint64_t c1 = check_layout(&one_core[i], test_seed() * 10 + i, &a0, &a1);
    const uint64_t c2 = check_layout(&two, test_seed() * 10 + i, &b0, &b1);
    cr_assert(fabs(a0 - b0) < 1e-3 && fabs(a1 - b1) < 0.05, "layout %u: about the same losses on one core (%g, %g) and "
              "two (%g, %g)", i, a0, a1, b0, b1);
    cr_assert_lt(c2, c1, "layout %u: two cores %llu cycles a step, one %llu", i, (unsigned long long)c2,
                 (unsigned long long)c1);
  }
}

Test(train, step_cycles_depend_on_neither_data_nor_reset_values) {
  const layout_t l = {2, 2, {0, 0, 2, 2, 0, 0}, 2, 2, 8, 16, 4, 16, 2, 4, 1, 0};
  double a, b;
  uint64_t c1 = check_layout(&l, 7, &a, &b), c2 = check_layout(&l, 8, &a, &b);
  cr_assert_eq(c1, c2, "seed 7: %llu cycles, seed 8: %llu", (unsigned long long)c1, (unsigned long long)c2);
}

Test(train, a_lone_chip_step_is_its_compute_only_step_and_comm_adds_to_a_slice) {
  const layout_t one = {1, 1, {0, 0, 1, 1, 0, 0}, 1, 1, 8, 8, 4, 8, 1, 4, 1, 0};
  data_t d;
  make_data(&one, 3, &d);
  pod_train_config_t c = config_of(&one, &d, 3);
  char err[4096];
  rt_status_t rc;
  uint64_t step, compute;
  pod_train_t *t = pod_train_new(&c, &rc, err, sizeof err);
  cr_assert_not_null(t, "%s", err);
  cr_assert_eq(pod_train_step(t, 0, &step, err, sizeof err), RT_OK, "%s", err);
  cr_assert_eq(pod_train_compute_cycles(t, &compute, err, sizeof err), RT_OK, "%s", err);
  cr_assert_eq(step, compute, "a lone chip: step %llu, compute-only %llu", (unsigned long long)step,
               (unsigned long long)compute);
  pod_train_free(t);
  free_data(&d);
  /* on a slice: the step is at least its compute, and the collectives alone take time */
  const layout_t dp = {2, 2, {0, 0, 2, 2, 0, 0}, 4, 1, 8, 8, 4, 16, 1, 4, 1, 0};
  make_data(&dp, 4, &d);
  c = config_of(&dp, &d, 4);
  t = pod_train_new(&c, &rc, err, sizeof err);
  cr_assert_not_null(t, "%s", err);
  uint64_t comm;
  cr_assert_eq(pod_train_step(t, 0, &step, err, sizeof err), RT_OK, "%s", err);
  cr_assert_eq(pod_train_compute_cycles(t, &compute, err, sizeof err), RT_OK, "%s", err);
  cr_assert_eq(pod_train_comm_cycles(t, &comm, err, sizeof err), RT_OK, "%s", err);
  cr_assert_eq(pod_train_sems_left(t), 0);
  cr_assert_geq(step, compute);
  cr_assert_gt(comm, 0);
  cr_assert_leq(step, compute + comm + 64, "step %llu > compute %llu + comm %llu", (unsigned long long)step,
                (unsigned long long)compute, (unsigned long long)comm);
  pod_train_free(t);
  free_data(&d);
}

/* fw_train_plan on 4x4 chips (or rows x cols) of a pw x ph pod must refuse with `want` in the message. */
static void refuse(unsigned rows, unsigned cols, fw_slice_t s, fw_train_net_t net, unsigned examples, const char *want) {
  chip_geometry_t g = {.rows = rows, .cols = cols, .acc_depth = 4096, .vmem_lines = 262144, .queue_depth = 32768};
  fw_train_plan_t pl;
  char err[1024] = "";
  cr_assert_eq(fw_train_plan(&g, &s, &net, examples, &pl, err, sizeof err), -1, "accepted: %s", want);
  cr_assert(strstr(err, want), "message '%s' does not say '%s'", err, want);
}

Test(train, the_plan_refuses_every_bad_layout) {
  const fw_slice_t s22 = {0, 0, 2, 2, 2, 2}, s41 = {0, 0, 4, 1, 4, 1};
  const uint32_t lr = bits_of_float(0.1f);
  refuse(4, 4, s22, (fw_train_net_t){8, 8, 4, 18, 4, 1, lr}, 100, "not divisible by the data-parallel degree");
  refuse(4, 4, s22, (fw_train_net_t){8, 10, 4, 16, 1, 4, lr}, 100, "not divisible by the model-parallel degree");
  refuse(4, 4, s22, (fw_train_net_t){8, 8, 4, 16, 2, 1, lr}, 100, "the slice has 4 chips");
  refuse(4, 4, s41, (fw_train_net_t){8, 8, 4, 16, 2, 2, lr}, 100, "the slice must be 2x2");
  refuse(4, 4, s22, (fw_train_net_t){8, 8, 5, 16, 4, 1, lr}, 100, "5 classes");
  refuse(4, 4, s22, (fw_train_net_t){8, 8, 1, 16, 4, 1, lr}, 100, "1 classes");
  refuse(4, 8, s22, (fw_train_net_t){8, 8, 4, 16, 4, 1, lr}, 100, "square MXU");
  refuse(4, 4, s22, (fw_train_net_t){8, 8, 4, 16, 4, 1, lr}, 10, "fewer than one batch");
  refuse(4, 4, s22, (fw_train_net_t){8, 4096, 4, 16, 4, 1, lr}, 100, "4096 hidden units");
  refuse(4, 4, s22, (fw_train_net_t){4000, 8, 4, 16, 4, 1, lr}, 100, "4000 features");
  refuse(4, 4, s22, (fw_train_net_t){8, 1024, 4, 4096, 4, 1, lr}, 8192, "VMEM lines");
  refuse(4, 4, (fw_slice_t){1, 1, 2, 2, 2, 2}, (fw_train_net_t){8, 8, 4, 16, 4, 1, lr}, 100, "outside");
  refuse(4, 4, (fw_slice_t){0, 0, 1, 1, 1, 1}, (fw_train_net_t){8, 400, 4, 16, 1, 1, lr}, 100, "a queue holds");
  /* two cores: each takes half the chip's examples */
  chip_geometry_t g2 = {.rows = 4, .cols = 4, .cores = 2, .acc_depth = 4096, .vmem_lines = 262144, .queue_depth = 32768};
  fw_train_plan_t pl;
  char err[1024] = "";
  const fw_train_net_t odd = {8, 8, 4, 20, 4, 1, lr}; /* 5 examples a chip */
  cr_assert_eq(fw_train_plan(&g2, &s22, &odd, 100, &pl, err, sizeof err), -1);
  cr_assert(strstr(err, "not divisible by the chip's 2 cores"), "%s", err);
}
