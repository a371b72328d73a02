/* infer_job: see infer_job.h and docs/models.md. */
#include "job/infer_job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "fast/chip_obs.h"
#include "golden/arith_golden.h"
#include "golden/conv_golden.h"
#include "golden/pool_golden.h"
#include "runtime/prog_load.h"
#include "util/rng.h"
#include "util/stopwatch.h"

_Static_assert(MODEL_MAX_CORES == CHIP_MAX_CORES, "the compiler's and the chip's core counts disagree");

struct infer_job {
  infer_job_config_t cfg;
  pod_config_t pod;        /* the machine with each chip's HBM fitted to the plan */
  chip_geometry_t geo;
  unsigned chips, images;  /* data-parallel chips, images on each */
  model_plan_t plan;
  float *own_input;
  infer_job_result_t res;
};

static size_t elems(const fw_act_t *a) { return (size_t)a->n * a->c * a->h * a->w; }

infer_job_t *infer_job_new(const infer_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  infer_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    *rc = RT_FAILED;
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  j->cfg = *cfg;
  j->pod = cfg->machine;
  *rc = RT_INVALID;
  if (pod_check(&j->pod, &j->geo, err, errlen)) goto fail;
  j->chips = j->pod.size_x * j->pod.size_y;
  const unsigned dp = cfg->dp ? cfg->dp : j->chips;
  if (dp != j->chips) {
    snprintf(err, errlen, "--dp %u: inference runs data parallel over every chip of the pod (%u); model parallel "
             "layers are not lowered yet", dp, j->chips);
    goto fail;
  }
  const graph_tensor_t *in = &cfg->graph->tensors[cfg->graph->input];
  const int64_t batch = in->dims[0];
  if (batch % dp) {
    snprintf(err, errlen, "--dp %u does not divide the batch of %" PRId64, dp, batch);
    goto fail;
  }
  j->images = (unsigned)(batch / dp);
  if (model_plan_build(cfg->graph, &j->geo, j->images, &j->plan, err, errlen)) goto fail;
  char why[256];
  if (pod_hbm_fit(&j->pod, j->plan.hbm_bytes, why, sizeof why)) {
    snprintf(err, errlen, "%s (the model: weights and biases %" PRIu64 " bytes, activations %" PRIu64 ")", why,
             j->plan.consts_bytes, j->plan.arena_bytes);
    goto fail;
  }
  *rc = RT_OK;
  return j;
fail:
  infer_job_free(j);
  return NULL;
}

void infer_job_free(infer_job_t *j) {
  if (!j) return;
  model_plan_free(&j->plan);
  free(j->own_input), free(j->res.steps), free(j->res.output);
  free(j);
}

const model_plan_t *infer_job_plan(const infer_job_t *j) { return &j->plan; }
const graph_tensor_t *infer_job_output(const infer_job_t *j) {
  return &j->cfg.graph->tensors[j->cfg.graph->output];
}
const infer_job_result_t *infer_job_result(const infer_job_t *j) { return &j->res; }
void infer_job_set_profile(infer_job_t *j, profile_t *prof) { j->cfg.profile = prof; }

/* ---- the golden model of one step, on NCHW bf16 arrays of one chip's images */

/* A step's weights as conv_golden takes them: Cout x Cin x kh x kw bf16 (a Gemm's K x N or N x K
 * as N x K x 1 x 1), from the graph's float32 values; bias as fp32 bits. */
static int golden_weights(const infer_job_t *j, const model_step_t *s, uint16_t **w, uint32_t **bias) {
  const model_plan_t *p = &j->plan;
  const graph_tensor_t *wt = &p->graph->tensors[s->weight];
  const size_t cin = p->bufs[s->in].act.c, cout = p->bufs[s->out].act.c, per = cin * s->kh * s->kw;
  *w = malloc(cout * per * 2);
  *bias = s->has_bias ? malloc(cout * 4) : NULL;
  if (!*w || (s->has_bias && !*bias)) return -1;
  for (size_t co = 0; co < cout; co++)
    for (size_t e = 0; e < per; e++) {
      const float v = !s->gemm ? wt->data[co * per + e] : s->trans_b ? wt->data[co * cin + e] : wt->data[e * cout + co];
      uint32_t bits;
      memcpy(&bits, &v, 4);
      (*w)[co * per + e] = arith_golden_fp32_to_bf16(bits);
    }
  if (s->has_bias) memcpy(*bias, p->graph->tensors[s->bias].data, cout * 4);
  return 0;
}

static int golden_step(const infer_job_t *j, const model_step_t *s, const uint16_t *w, const uint32_t *bias,
                       const uint16_t *x, const uint16_t *res, uint16_t *y) {
  const fw_act_t *in = &j->plan.bufs[s->in].act, *out = &j->plan.bufs[s->out].act;
  if (s->kind == MODEL_STEP_CONV) {
    const conv_golden_args_t a = {in->n, in->c, in->h, in->w, out->c, s->kh, s->kw, s->sh, s->sw,
                                  s->pt, s->pl, s->pb, s->pr, s->has_bias, res != NULL, s->relu};
    return conv_golden(j->geo.rows, &a, x, w, bias, res, y);
  }
  const pool_golden_window_t win = {.kh = s->kh, .kw = s->kw, .sh = s->sh, .sw = s->sw, .pad_top = s->pt,
                                    .pad_left = s->pl, .pad_bottom = s->pb, .pad_right = s->pr,
                                    .count_include_pad = s->count_include_pad};
  switch (s->kind) {
    case MODEL_STEP_MAXPOOL: return pool_golden_max(&win, in->n, in->c, in->h, in->w, x, y);
    case MODEL_STEP_AVGPOOL: return pool_golden_avg(&win, in->n, in->c, in->h, in->w, x, y);
    default: pool_golden_global_avg(in->n, in->c, in->h, in->w, x, y); return 0;
  }
}

/* ---- the run */

typedef struct {
  uint16_t **t;   /* per plan buffer: NCHW bf16 of this chip's images (views share their source's) */
} golden_chip_t;

static int root_of(const model_plan_t *p, int b) {
  while (p->bufs[b].alias >= 0) b = p->bufs[b].alias;
  return b;
}

/* Reads buffer b of a chip back as NCHW bf16 (its interior). */
static int read_act(chip_t *c, const fw_act_t *a, uint8_t *image, uint16_t *v) {
  if (chip_hbm_read(c, a->addr, image, fw_act_bytes(a))) return -1;
  for (uint32_t n = 0; n < a->n; n++)
    for (uint32_t ch = 0; ch < a->c; ch++)
      for (uint32_t h = 0; h < a->h; h++)
        for (uint32_t w = 0; w < a->w; w++)
          memcpy(&v[(((size_t)n * a->c + ch) * a->h + h) * a->w + w], image + fw_act_pixel_addr(a, n, h, w) - a->addr + 2ull * ch,
                 2);
  return 0;
}

static const float *input_of(infer_job_t *j, size_t total) {
  if (j->cfg.input) return j->cfg.input;
  j->own_input = malloc(total * sizeof(float));
  if (!j->own_input) return NULL;
  rng_t r;
  rng_seed(&r, j->cfg.seed);
  for (size_t i = 0; i < total; i++) j->own_input[i] = (float)((double)(rng_next(&r) >> 11) / 9007199254740992.0 * 2 - 1);
  return j->own_input;
}

static void compare(infer_job_t *j, size_t step, unsigned chip, const uint16_t *got, const uint16_t *want, size_t n) {
  infer_job_result_t *r = &j->res;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (r->first_step < 0) r->first_step = (int)step, r->first_chip = chip, r->first_index = i, r->got = got[i],
                             r->want = want[i];
      r->mismatches++;
    }
}

/* What a run holds while it goes: the pod, the golden model's tensors, the programs. */
typedef struct {
  infer_job_t *j;
  pod_t *pod;
  golden_chip_t *gc;
  uint8_t *image;      /* a host image of the largest buffer */
  uint16_t *readback;  /* its NCHW values */
  fw_prog_t cq[MODEL_MAX_CORES], dq[MODEL_MAX_CORES];
} run_ctx_t;

static chip_t *chip_of(const run_ctx_t *x, unsigned i) {
  return pod_chip(x->pod, i % x->j->pod.size_x, i / x->j->pod.size_x);
}

/* Host: the constants and each chip's images into HBM; the golden model's copy of the input. */
static rt_status_t load_inputs(run_ctx_t *x, const float *in, char *err, size_t errlen) {
  const model_plan_t *p = &x->j->plan;
  const fw_act_t *ain = &p->bufs[p->input].act;
  const size_t per_chip = elems(ain);
  for (unsigned i = 0; i < x->j->chips; i++) {
    model_pack_input(p, in + i * per_chip, x->image);
    if (chip_hbm_write(chip_of(x, i), 0, p->consts, p->consts_bytes) ||
        chip_hbm_write(chip_of(x, i), ain->addr, x->image, fw_act_bytes(ain))) {
      snprintf(err, errlen, "cannot write the model into chip %u's HBM", i);
      return RT_FAILED;
    }
    if (!x->j->cfg.golden) continue;
    if (!(x->gc[i].t[p->input] = malloc(per_chip * 2))) return snprintf(err, errlen, "out of memory"), RT_FAILED;
    for (size_t e = 0; e < per_chip; e++) {
      uint32_t bits;
      memcpy(&bits, &in[i * per_chip + e], 4);
      x->gc[i].t[p->input][e] = arith_golden_fp32_to_bf16(bits);
    }
  }
  return RT_OK;
}

/* Step si on every chip: part -1 zeroes the output's border (when it has one), then the kernel's
 * parts, each one program load on every core of every chip run to the end. */
static rt_status_t run_step(run_ctx_t *x, size_t si, uint64_t macs_a_cycle, char *err, size_t errlen) {
  const model_plan_t *p = &x->j->plan;
  const model_step_t *s = &p->steps[si];
  pod_phase(x->pod, s->name);
  for (int part = -1; part < (int)s->parts; part++) {
    for (unsigned c = 0; c < MODEL_MAX_CORES; c++) x->cq[c].count = x->dq[c].count = 0, x->cq[c].nmarks = 0;
    const int brc = part < 0 ? model_step_border_programs(p, si, x->cq, x->dq, err, errlen)
                             : model_step_programs(p, si, (unsigned)part, x->cq, x->dq, err, errlen);
    if (brc == 1) continue;
    if (brc) return RT_FAILED;
    for (unsigned i = 0; i < x->j->chips; i++) {
      for (unsigned core = 0; core < isa_geometry_cores(&x->j->geo); core++)
        if (rt_load_core_programs(chip_of(x, i), core, &x->cq[core], &x->dq[core], err, errlen) != RT_OK)
          return RT_FAILED;
      rt_pod_marks(x->pod, i % x->j->pod.size_x, i / x->j->pod.size_x, &x->cq[0]);
    }
    /* a bound no working step comes near: 64 cycles per padded MAC a cycle, per byte moved */
    const uint64_t limit = 64 * (s->padded_macs / macs_a_cycle + fw_act_bytes(&p->bufs[s->in].act) +
                                 fw_act_bytes(&p->bufs[s->out].act)) + 1000000;
    uint64_t cycles = 0;
    char report[1024];
    if (pod_run(x->pod, CHIP_QMASK_EVERY_CORE, limit, &cycles, report, sizeof report)) {
      snprintf(err, errlen, "step %zu '%s' (%s), %s %d of %u: %s", si, s->name, s->ops,
               part < 0 ? "zeroing the border before part" : "part", part < 0 ? 1 : part + 1, s->parts, report);
      return RT_FAILED;
    }
    x->j->res.steps[si].cycles += cycles;
  }
  return RT_OK;
}

/* The golden model of step si on every chip's images, held to what the chip wrote; the golden
 * tensors no later step reads are dropped. */
static rt_status_t check_step(run_ctx_t *x, size_t si, char *err, size_t errlen) {
  const model_plan_t *p = &x->j->plan;
  const model_step_t *s = &p->steps[si];
  uint16_t *w = NULL;
  uint32_t *bias = NULL;
  rt_status_t rc = RT_FAILED;
  if (s->kind == MODEL_STEP_CONV && golden_weights(x->j, s, &w, &bias)) goto oom;
  const fw_act_t *a = &p->bufs[s->out].act;
  for (unsigned i = 0; i < x->j->chips; i++) {
    golden_chip_t *g = &x->gc[i];
    if (!(g->t[s->out] = malloc(elems(a) * 2)) ||
        golden_step(x->j, s, w, bias, g->t[root_of(p, s->in)], s->res >= 0 ? g->t[root_of(p, s->res)] : NULL,
                    g->t[s->out]))
      goto oom;
    if (read_act(chip_of(x, i), a, x->image, x->readback)) {
      snprintf(err, errlen, "cannot read step %zu's output from chip %u", si, i);
      goto out;
    }
    compare(x->j, si, i, x->readback, g->t[s->out], elems(a));
    for (size_t b = 0; b < p->nbufs; b++)
      if (p->bufs[b].alias < 0 && p->bufs[b].last_use == (int)si && (int)b != root_of(p, p->output))
        free(g->t[b]), g->t[b] = NULL;
  }
  rc = RT_OK;
  goto out;
oom:
  snprintf(err, errlen, "out of memory");
out:
  free(w), free(bias);
  return rc;
}

static rt_status_t read_outputs(run_ctx_t *x, char *err, size_t errlen) {
  const model_plan_t *p = &x->j->plan;
  const fw_act_t *aout = &p->bufs[p->output].act;
  for (unsigned i = 0; i < x->j->chips; i++) {
    if (chip_hbm_read(chip_of(x, i), aout->addr, x->image, fw_act_bytes(aout))) {
      snprintf(err, errlen, "cannot read the output from chip %u", i);
      return RT_FAILED;
    }
    model_unpack_output(p, x->image, x->j->res.output + i * elems(aout));
  }
  return RT_OK;
}

static void free_ctx(run_ctx_t *x) {
  const model_plan_t *p = &x->j->plan;
  for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_free(&x->cq[c]), fw_prog_free(&x->dq[c]);
  if (x->gc)
    for (unsigned i = 0; i < x->j->chips; i++) {
      if (x->gc[i].t)
        for (size_t b = 0; b < p->nbufs; b++)
          if (p->bufs[b].alias < 0) free(x->gc[i].t[b]);
      free(x->gc[i].t);
    }
  free(x->gc), free(x->image), free(x->readback);
  pod_free(x->pod);
}

rt_status_t infer_job_run(infer_job_t *j, char *err, size_t errlen) {
  const model_plan_t *p = &j->plan;
  infer_job_result_t *r = &j->res;
  *r = (infer_job_result_t){.first_step = -1, .checked = j->cfg.golden};
  stopwatch_t sw;
  stopwatch_start(&sw);
  const size_t in_per_chip = elems(&p->bufs[p->input].act), out_per_chip = elems(&p->bufs[p->output].act);
  const float *in = input_of(j, in_per_chip * j->chips);
  r->steps = calloc(p->nsteps, sizeof *r->steps);
  r->output_elems = out_per_chip * j->chips;
  r->output = malloc(r->output_elems * sizeof(float));
  uint64_t biggest = 0;
  for (size_t b = 0; b < p->nbufs; b++)
    if (fw_act_bytes(&p->bufs[b].act) > biggest) biggest = fw_act_bytes(&p->bufs[b].act);
  run_ctx_t x = {.j = j, .image = malloc(biggest), .readback = malloc(biggest), .gc = calloc(j->chips, sizeof *x.gc)};
  for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_init(&x.cq[c]), fw_prog_init(&x.dq[c]);
  rt_status_t rc = RT_FAILED;
  bool ok = in && r->steps && r->output && x.image && x.readback && x.gc;
  for (unsigned i = 0; ok && i < j->chips; i++) ok = (x.gc[i].t = calloc(p->nbufs, sizeof *x.gc[i].t)) != NULL;
  if (!ok) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  if (!(x.pod = pod_build(&j->pod, err, errlen))) goto out;
  if (j->cfg.profile) pod_set_profile(x.pod, j->cfg.profile);
  if ((rc = load_inputs(&x, in, err, errlen)) != RT_OK) goto out;
  const uint64_t macs_a_cycle =
      (uint64_t)j->geo.rows * j->geo.cols * isa_geometry_mxus(&j->geo) * isa_geometry_cores(&j->geo);
  uint64_t padded = 0;
  for (size_t si = 0; si < p->nsteps; si++) {
    if (j->cfg.progress) j->cfg.progress(j->cfg.progress_ctx, si, p->nsteps);
    if ((rc = run_step(&x, si, macs_a_cycle, err, errlen)) != RT_OK) goto out;
    r->steps[si].macs = p->steps[si].macs, r->steps[si].padded_macs = p->steps[si].padded_macs;
    r->cycles += r->steps[si].cycles, r->macs += p->steps[si].macs, padded += p->steps[si].padded_macs;
    if (j->cfg.golden && (rc = check_step(&x, si, err, errlen)) != RT_OK) goto out;
  }
  if (j->cfg.progress) j->cfg.progress(j->cfg.progress_ctx, p->nsteps, p->nsteps);
  if ((rc = read_outputs(&x, err, errlen)) != RT_OK) goto out;
  r->bit_exact = j->cfg.golden && r->mismatches == 0;
  r->utilization = r->cycles ? (double)r->macs / ((double)r->cycles * (double)macs_a_cycle) : 0;
  r->bound = padded ? (double)r->macs / (double)padded : 0;
out:
  r->seconds = stopwatch_seconds(&sw);
  free_ctx(&x);
  return rc;
}
