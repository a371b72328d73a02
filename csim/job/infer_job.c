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

rt_status_t infer_job_run(infer_job_t *j, char *err, size_t errlen) {
  const model_plan_t *p = &j->plan;
  infer_job_result_t *r = &j->res;
  *r = (infer_job_result_t){.first_step = -1, .checked = j->cfg.golden};
  rt_status_t rc = RT_FAILED;
  stopwatch_t sw;
  stopwatch_start(&sw);
  const fw_act_t *ain = &p->bufs[p->input].act, *aout = &p->bufs[p->output].act;
  const size_t in_per_chip = elems(ain), out_per_chip = elems(aout);
  const float *x = input_of(j, in_per_chip * j->chips);
  r->steps = calloc(p->nsteps, sizeof *r->steps);
  r->output_elems = out_per_chip * j->chips;
  r->output = malloc(r->output_elems * sizeof(float));
  uint64_t biggest = 0;
  for (size_t b = 0; b < p->nbufs; b++)
    if (fw_act_bytes(&p->bufs[b].act) > biggest) biggest = fw_act_bytes(&p->bufs[b].act);
  uint8_t *image = malloc(biggest);
  uint16_t *readback = malloc(biggest);
  golden_chip_t *gc = calloc(j->chips, sizeof *gc);
  fw_prog_t cq[MODEL_MAX_CORES], dq[MODEL_MAX_CORES];
  for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
  pod_t *pod = NULL;
  if (!x || !r->steps || !r->output || !image || !readback || !gc) goto oom;
  for (unsigned i = 0; i < j->chips; i++)
    if (!(gc[i].t = calloc(p->nbufs, sizeof *gc[i].t))) goto oom;
  if (!(pod = pod_build(&j->pod, err, errlen))) goto out;
  if (j->cfg.profile) pod_set_profile(pod, j->cfg.profile);
  /* Host: the constants and each chip's images into HBM; the golden model's copy of the input */
  for (unsigned i = 0; i < j->chips; i++) {
    chip_t *c = pod_chip(pod, i % j->pod.size_x, i / j->pod.size_x);
    model_pack_input(p, x + i * in_per_chip, image);
    if (chip_hbm_write(c, 0, p->consts, p->consts_bytes) || chip_hbm_write(c, ain->addr, image, fw_act_bytes(ain))) {
      snprintf(err, errlen, "cannot write the model into chip %u's HBM", i);
      goto out;
    }
    if (j->cfg.golden) {
      if (!(gc[i].t[p->input] = malloc(in_per_chip * 2))) goto oom;
      for (size_t e = 0; e < in_per_chip; e++) {
        uint32_t bits;
        memcpy(&bits, &x[i * in_per_chip + e], 4);
        gc[i].t[p->input][e] = arith_golden_fp32_to_bf16(bits);
      }
    }
  }
  const uint64_t macs_a_cycle = (uint64_t)j->geo.rows * j->geo.cols * isa_geometry_mxus(&j->geo) * isa_geometry_cores(&j->geo);
  for (size_t si = 0; si < p->nsteps; si++) {
    const model_step_t *s = &p->steps[si];
    if (j->cfg.progress) j->cfg.progress(j->cfg.progress_ctx, si, p->nsteps);
    pod_phase(pod, s->name);
    /* part -1 zeroes the output's border (when it has one), then the kernel's parts */
    for (int part = -1; part < (int)s->parts; part++) {
      for (unsigned c = 0; c < MODEL_MAX_CORES; c++) cq[c].count = dq[c].count = 0, cq[c].nmarks = 0;
      const int brc = part < 0 ? model_step_border_programs(p, si, cq, dq, err, errlen)
                               : model_step_programs(p, si, (unsigned)part, cq, dq, err, errlen);
      if (brc == 1) continue;
      if (brc) goto out;
      for (unsigned i = 0; i < j->chips; i++) {
        chip_t *c = pod_chip(pod, i % j->pod.size_x, i / j->pod.size_x);
        for (unsigned core = 0; core < isa_geometry_cores(&j->geo); core++)
          if (rt_load_core_programs(c, core, &cq[core], &dq[core], err, errlen) != RT_OK) goto out;
        rt_pod_marks(pod, i % j->pod.size_x, i / j->pod.size_x, &cq[0]);
      }
      /* a bound no working step comes near: 64 cycles per padded MAC a cycle, per byte moved */
      const uint64_t limit = 64 * (s->padded_macs / macs_a_cycle + fw_act_bytes(&p->bufs[s->in].act) +
                                   fw_act_bytes(&p->bufs[s->out].act)) + 1000000;
      uint64_t cycles = 0;
      char report[1024];
      if (pod_run(pod, CHIP_QMASK_EVERY_CORE, limit, &cycles, report, sizeof report)) {
        snprintf(err, errlen, "step %zu '%s' (%s), %s%d of %u: %s", si, s->name, s->ops, part < 0 ? "zeroing the border before part " : "part ", part < 0 ? 1 : part + 1, s->parts, report);
        goto out;
      }
      r->steps[si].cycles += cycles;
    }
    r->steps[si].macs = s->macs, r->steps[si].padded_macs = s->padded_macs;
    r->cycles += r->steps[si].cycles, r->macs += s->macs;
    if (!j->cfg.golden) continue;
    /* the golden model of this step on every chip's images, held to what the chip wrote */
    uint16_t *w = NULL;
    uint32_t *bias = NULL;
    if (s->kind == MODEL_STEP_CONV && golden_weights(j, s, &w, &bias)) goto oom;
    const fw_act_t *a = &p->bufs[s->out].act;
    for (unsigned i = 0; i < j->chips; i++) {
      chip_t *c = pod_chip(pod, i % j->pod.size_x, i / j->pod.size_x);
      uint16_t *y = malloc(elems(a) * 2);
      if (!y || golden_step(j, s, w, bias, gc[i].t[root_of(p, s->in)], s->res >= 0 ? gc[i].t[root_of(p, s->res)] : NULL,
                            y)) {
        free(y), free(w), free(bias);
        goto oom;
      }
      gc[i].t[s->out] = y;
      if (read_act(c, a, image, readback)) {
        snprintf(err, errlen, "cannot read step %zu's output from chip %u", si, i);
        free(w), free(bias);
        goto out;
      }
      compare(j, si, i, readback, y, elems(a));
      for (size_t b = 0; b < p->nbufs; b++) /* what no later step reads */
        if (p->bufs[b].alias < 0 && p->bufs[b].last_use == (int)si && (int)b != root_of(p, p->output))
          free(gc[i].t[b]), gc[i].t[b] = NULL;
    }
    free(w), free(bias);
  }
  if (j->cfg.progress) j->cfg.progress(j->cfg.progress_ctx, p->nsteps, p->nsteps);
  for (unsigned i = 0; i < j->chips; i++) {
    chip_t *c = pod_chip(pod, i % j->pod.size_x, i / j->pod.size_x);
    if (chip_hbm_read(c, aout->addr, image, fw_act_bytes(aout))) {
      snprintf(err, errlen, "cannot read the output from chip %u", i);
      goto out;
    }
    model_unpack_output(p, image, r->output + i * out_per_chip);
  }
  r->bit_exact = j->cfg.golden && r->mismatches == 0;
  uint64_t padded = 0;
  for (size_t si = 0; si < p->nsteps; si++) padded += p->steps[si].padded_macs;
  r->utilization = r->cycles ? (double)r->macs / ((double)r->cycles * (double)macs_a_cycle) : 0;
  r->bound = padded ? (double)r->macs / (double)padded : 0;
  rc = RT_OK;
  goto out;
oom:
  snprintf(err, errlen, "out of memory");
out:
  r->seconds = stopwatch_seconds(&sw);
  for (unsigned c = 0; c < MODEL_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  if (gc)
    for (unsigned i = 0; i < j->chips; i++) {
      if (gc[i].t)
        for (size_t b = 0; b < p->nbufs; b++)
          if (p->bufs[b].alias < 0) free(gc[i].t[b]);
      free(gc[i].t);
    }
  free(gc), free(image), free(readback);
  pod_free(pod);
  return rc;
}
