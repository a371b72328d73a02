/* train_job: the MLP training experiment (train_job.h). */
#include "job/train_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/train_golden.h"
#include "runtime/perf.h"
#include "runtime/pod_train.h"
#include "util/bits.h"
#include "util/rng.h"
#include "util/stopwatch.h"

struct train_job {
  train_job_config_t cfg;
  pod_train_config_t pod_cfg;   /* what runtime/pod_train runs (the plan's input) */
  fw_train_plan_t plan;
  train_job_result_t res;
  uint16_t *xb;                 /* the training examples as bf16 bits */
  uint32_t *w[FW_TRAIN_LAYERS], *bias[FW_TRAIN_LAYERS], *final_w[FW_TRAIN_LAYERS], *final_b[FW_TRAIN_LAYERS];
  uint32_t *params, *probs;     /* one chip's, read back after each step */
  train_job_step_t *rec;
  pod_train_t *pt;
  train_golden_t *ref;
};

void train_job_layer_shape(const train_job_t *j, unsigned l, unsigned *rows, unsigned *cols) {
  const unsigned F = j->cfg.train.features, H = j->cfg.hidden, K = j->cfg.train.classes;
  const unsigned r[FW_TRAIN_LAYERS] = {F, H, H}, c[FW_TRAIN_LAYERS] = {H, H, K};
  *rows = r[l], *cols = c[l];
}

/* The order the steps take the training examples: shuffled once from the seed (Fisher-Yates). */
static int shuffle(dataset_t *train, uint64_t seed) {
  rng_t r;
  rng_seed(&r, seed ^ 0x5eedda7aull);
  float *row = malloc(train->features * sizeof *row + 4);
  if (!row) return -1;
  for (unsigned i = train->count - 1; i > 0; i--) {
    unsigned j = (unsigned)rng_below(&r, i + 1);
    memcpy(row, train->x + (size_t)i * train->features, train->features * sizeof *row);
    memcpy(train->x + (size_t)i * train->features, train->x + (size_t)j * train->features, train->features * sizeof *row);
    memcpy(train->x + (size_t)j * train->features, row, train->features * sizeof *row);
    uint8_t t = train->label[i];
    train->label[i] = train->label[j], train->label[j] = t;
  }
  free(row);
  return 0;
}

/* He-uniform initial weights (U(-a, a), a = sqrt(6 / fan_in)), zero biases. */
static int init_network(train_job_t *j) {
  rng_t r;
  rng_seed(&r, j->cfg.seed);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    unsigned rows, cols;
    train_job_layer_shape(j, l, &rows, &cols);
    j->w[l] = malloc((size_t)rows * cols * 4), j->bias[l] = calloc(cols, 4);
    j->final_w[l] = malloc((size_t)rows * cols * 4), j->final_b[l] = malloc(cols * 4);
    if (!j->w[l] || !j->bias[l] || !j->final_w[l] || !j->final_b[l]) return -1;
    const double a = sqrt(6.0 / rows);
    for (size_t i = 0; i < (size_t)rows * cols; i++)
      j->w[l][i] = bits_of_float((float)(a * (2.0 * (double)(rng_next(&r) >> 11) / 9007199254740992.0 - 1.0)));
  }
  return 0;
}

/* The buffers a run needs beyond the network: the examples as bf16, one chip's read-back,
 * the step records. */
static int alloc_run(train_job_t *j) {
  const dataset_t *d = &j->cfg.train;
  j->xb = malloc((size_t)d->count * d->features * sizeof *j->xb + 2);
  j->params = malloc((size_t)j->plan.param_lines * j->plan.lanes * 4);
  j->probs = malloc((size_t)j->plan.batch_per_chip * j->plan.lanes * 4);
  j->rec = calloc(j->cfg.steps, sizeof *j->rec);
  if (!j->xb || !j->params || !j->probs || !j->rec || init_network(j)) return -1;
  for (size_t i = 0; i < (size_t)d->count * d->features; i++) j->xb[i] = arith_golden_fp32_to_bf16(bits_of_float(d->x[i]));
  return 0;
}

train_job_t *train_job_new(train_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  train_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    dataset_free(&cfg->train), dataset_free(&cfg->test);
    *rc = RT_FAILED;
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  j->cfg = *cfg;
  memset(&cfg->train, 0, sizeof cfg->train), memset(&cfg->test, 0, sizeof cfg->test); /* moved */
  const pod_config_t *pc = &j->cfg.machine;
  j->cfg.slice.pod_w = pc->size_x, j->cfg.slice.pod_h = pc->size_y;
  j->pod_cfg = (pod_train_config_t){
      .machine = *pc, .slice = j->cfg.slice,
      .net = {j->cfg.train.features, j->cfg.hidden, j->cfg.train.classes, j->cfg.batch, j->cfg.dp, j->cfg.mp,
              bits_of_float(j->cfg.lr)},
      .examples = j->cfg.train.count, .trace_path = j->cfg.trace_path, .trace_chip = j->cfg.trace_chip};
  if ((*rc = pod_train_check(&j->pod_cfg, &j->plan, err, errlen)) != RT_OK) goto fail;
  j->res = (train_job_result_t){.chips = j->cfg.slice.w * j->cfg.slice.h, .batch_per_chip = j->plan.batch_per_chip};
  return j;
fail:
  train_job_free(j);
  return NULL;
}

void train_job_free(train_job_t *j) {
  if (!j) return;
  pod_train_free(j->pt);
  train_golden_free(j->ref);
  dataset_free(&j->cfg.train), dataset_free(&j->cfg.test);
  free(j->xb), free(j->params), free(j->probs), free(j->rec);
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) free(j->w[l]), free(j->bias[l]), free(j->final_w[l]), free(j->final_b[l]);
  free(j);
}

const train_job_config_t *train_job_config(const train_job_t *j) { return &j->cfg; }
const fw_train_plan_t *train_job_plan(const train_job_t *j) { return &j->plan; }
const train_job_result_t *train_job_result(const train_job_t *j) { return &j->res; }

/* The first of a chip's values that differs from the reference's: the run fails with it. */
static rt_status_t compare_lines(const char *what, unsigned step, unsigned chip, const uint32_t *got,
                                 const uint32_t *want, size_t n, unsigned lanes, char *err, size_t errlen) {
  for (size_t k = 0; k < n; k++)
    if (got[k] != want[k]) {
      snprintf(err, errlen, "step %u: chip %u's %s line %zu lane %zu is 0x%08x, the reference trainer's 0x%08x",
               step + 1, chip, what, k / lanes, k % lanes, got[k], want[k]);
      return RT_FAILED;
    }
  return RT_OK;
}

/* Compares every slice chip with the reference after step s; *loss: the batch's mean loss. */
static rt_status_t check_step(train_job_t *j, unsigned s, unsigned batch_first, double *loss, char *err,
                              size_t errlen) {
  const fw_train_plan_t *pl = &j->plan;
  const fw_slice_t *sl = &j->pod_cfg.slice;
  const unsigned C = pl->lanes, chips = sl->w * sl->h;
  const size_t plines = (size_t)pl->param_lines * C;
  double sum = 0;
  for (unsigned i = 0; i < chips; i++) {
    if (pod_train_read(j->pt, i, j->params, j->probs)) {
      snprintf(err, errlen, "cannot read chip %u's HBM", i);
      return RT_FAILED;
    }
    size_t n;
    const uint32_t *want = train_golden_params(j->ref, i, &n), *wantp = train_golden_probs(j->ref, i);
    if (compare_lines("parameter", s, i, j->params, want, plines, C, err, errlen) != RT_OK ||
        compare_lines("probability", s, i, j->probs, wantp, (size_t)pl->batch_per_chip * C, C, err, errlen) != RT_OK)
      return RT_FAILED;
    for (size_t k = 0; k < plines; k++)
      if ((j->params[k] & 0x7F800000u) == 0x7F800000u) {
        snprintf(err, errlen, "the weights became non-finite at step %u (chip %u, parameter line %zu): the learning "
                 "rate %g is too large", s + 1, i, k / C, (double)j->cfg.lr);
        return RT_FAILED;
      }
    fw_train_place_t pc;
    fw_train_place(pl, sl, sl->x0 + i % sl->w, sl->y0 + i / sl->w, &pc);
    if (pc.mp_rank != 0) continue;
    const unsigned first = batch_first + pc.dp_rank * pl->batch_per_chip;
    for (unsigned e = 0; e < pl->batch_per_chip; e++) {
      double p = bits_to_float(j->probs[(size_t)e * C + j->cfg.train.label[first + e]]);
      sum += -log(p > 1e-30 ? p : 1e-30);
    }
  }
  *loss = sum / j->cfg.batch;
  return RT_OK;
}

rt_status_t train_job_train(train_job_t *j, profile_t *profile, char *err, size_t errlen) {
  const train_job_config_t *c = &j->cfg;
  const fw_train_plan_t *pl = &j->plan;
  rt_status_t rs;
  stopwatch_t sw;
  stopwatch_start(&sw);
  if (shuffle(&j->cfg.train, j->cfg.seed) || alloc_run(j)) {
    snprintf(err, errlen, "out of memory");
    return RT_FAILED;
  }
  j->pod_cfg.x = j->xb, j->pod_cfg.label = c->train.label, j->pod_cfg.profile = profile;
  j->res.steps = j->rec, j->res.x_bf16 = j->xb;
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    j->pod_cfg.w[l] = j->w[l], j->pod_cfg.bias[l] = j->bias[l];
    j->res.w_init[l] = j->w[l], j->res.b_init[l] = j->bias[l];
    j->res.w_final[l] = j->final_w[l], j->res.b_final[l] = j->final_b[l];
  }
  if (!(j->pt = pod_train_build(&j->pod_cfg, &j->plan, &rs, err, errlen))) return rs;
  const uint32_t *wc[FW_TRAIN_LAYERS] = {j->w[0], j->w[1], j->w[2]}, *bc[FW_TRAIN_LAYERS] = {j->bias[0], j->bias[1], j->bias[2]};
  if (!(j->ref = train_golden_new(&j->pod_cfg.net, &j->pod_cfg.slice, pl->lanes, pl->cores, wc, bc, err, errlen)))
    return RT_FAILED;
  const unsigned batches = c->train.count / c->batch;
  char why[4096];
  for (unsigned s = 0; s < c->steps; s++) {
    const unsigned first = (s % batches) * c->batch;
    if (c->before_step) c->before_step(c->ctx, s);
    if (pod_train_step(j->pt, first, &j->rec[s].cycles, why, sizeof why) != RT_OK) {
      snprintf(err, errlen, "step %u: %s", s + 1, why);
      return RT_FAILED;
    }
    if (train_golden_step(j->ref, j->xb, c->train.label, first)) {
      snprintf(err, errlen, "out of memory");
      return RT_FAILED;
    }
    if ((rs = check_step(j, s, first, &j->rec[s].loss, err, errlen)) != RT_OK) return rs;
    j->rec[s].wall_s = stopwatch_seconds(&sw);
    if (c->trace_steps && s + 1 == c->trace_steps) pod_train_trace_close(j->pt);
    if (c->on_step) c->on_step(c->ctx, s, &j->rec[s]);
  }
  train_golden_network(j->ref, 0, j->final_w, j->final_b);
  return RT_OK;
}

/* Host-side evaluation of the network (fp32 weights, float arithmetic): the fraction of
 * examples whose largest logit is their label. Deliberately not the chips' bf16 forward pass
 * (golden/train_golden.c is that): the accuracy a user would measure of the trained weights. */
static double accuracy(const dataset_t *d, unsigned hidden, uint32_t *const w[3], uint32_t *const bias[3]) {
  const unsigned F = d->features, H = hidden, K = d->classes;
  float *a1 = malloc(H * sizeof *a1), *a2 = malloc(H * sizeof *a2);
  unsigned right = 0;
  for (unsigned e = 0; a1 && a2 && e < d->count; e++) {
    const float *x = d->x + (size_t)e * F;
    for (unsigned n = 0; n < H; n++) {
      float s = bits_to_float(bias[0][n]);
      for (unsigned k = 0; k < F; k++) s += x[k] * bits_to_float(w[0][(size_t)k * H + n]);
      a1[n] = s > 0 ? s : 0;
    }
    for (unsigned n = 0; n < H; n++) {
      float s = bits_to_float(bias[1][n]);
      for (unsigned k = 0; k < H; k++) s += a1[k] * bits_to_float(w[1][(size_t)k * H + n]);
      a2[n] = s > 0 ? s : 0;
    }
    unsigned best = 0;
    float best_z = -INFINITY;
    for (unsigned n = 0; n < K; n++) {
      float s = bits_to_float(bias[2][n]);
      for (unsigned k = 0; k < H; k++) s += a2[k] * bits_to_float(w[2][(size_t)k * K + n]);
      if (s > best_z) best_z = s, best = n;
    }
    right += best == d->label[e];
  }
  const bool ok = a1 && a2;
  free(a1), free(a2);
  return ok && d->count ? (double)right / d->count : NAN;  /* NAN (JSON null) when out of memory */
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

rt_status_t train_job_measure(train_job_t *j, char *err, size_t errlen) {
  const train_job_config_t *c = &j->cfg;
  train_job_result_t *r = &j->res;
  pod_train_trace_close(j->pt); /* the trace holds the training steps, not the measurements */
  rt_status_t rs;
  if ((rs = pod_train_compute_cycles(j->pt, &r->compute_cycles, err, errlen)) != RT_OK) return rs;
  if ((c->dp > 1 || c->mp > 1) && (rs = pod_train_comm_cycles(j->pt, &r->comm_cycles, err, errlen)) != RT_OK)
    return rs;
  uint64_t *cyc = malloc(c->steps * sizeof *cyc);
  if (!cyc) {
    snprintf(err, errlen, "out of memory");
    return RT_FAILED;
  }
  for (unsigned s = 0; s < c->steps; s++) cyc[s] = j->rec[s].cycles;
  qsort(cyc, c->steps, sizeof *cyc, cmp_u64);
  r->step_cycles = cyc[c->steps / 2];
  free(cyc);
  r->exposed_cycles = r->step_cycles > r->compute_cycles ? r->step_cycles - r->compute_cycles : 0;
  /* the MXU's work on each chip (replicated layers included) against its peak; the model's
   * work once (forward, weight and input gradients but the data's) per second */
  const chip_config_t *chip = &c->machine.chip;
  const perf_chip_t p = {.rows = chip->rows, .cols = chip->cols, .mxus = chip->mxus, .cores = 1,
                         .clock_mhz = chip->clock_mhz};
  r->mxu_utilization = (double)fw_train_macs(&j->plan) / ((double)r->step_cycles * perf_macs_per_cycle(&p));
  r->model_macs = perf_mlp_model_macs(c->batch, c->train.features, c->hidden, c->train.classes);
  r->tflops = perf_flops(&p, r->model_macs, r->step_cycles) / 1e12;
  r->train_accuracy = accuracy(&c->train, c->hidden, j->final_w, j->final_b);
  r->test_accuracy = accuracy(&c->test, c->hidden, j->final_w, j->final_b);
  return RT_OK;
}
