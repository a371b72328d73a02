/* pod_train: see pod_train.h. */
#include "runtime/pod_train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/prog_load.h"
#include "pod/pod.h"

struct pod_train {
  pod_train_config_t cfg;
  fw_train_plan_t plan;
  chip_geometry_t geo;
  pod_t *pod;
};

/* The plan of cfg's run and the pod to build (*pc: the machine with each chip's HBM sized to the
 * plan), or RT_INVALID with a message. */
static rt_status_t plan_pod(const pod_train_config_t *cfg, fw_train_plan_t *plan, pod_config_t *pc, char *err,
                            size_t errlen) {
  chip_geometry_t g;
  if (pod_check(&cfg->machine, &g, err, errlen)) return RT_INVALID;
  fw_slice_t s = cfg->slice;
  s.pod_w = cfg->machine.size_x, s.pod_h = cfg->machine.size_y;
  if (cfg->trace_path && cfg->trace_chip >= cfg->machine.size_x * cfg->machine.size_y) {
    snprintf(err, errlen, "chip %u to trace is outside the %ux%u pod", cfg->trace_chip, cfg->machine.size_x, cfg->machine.size_y);
    return RT_INVALID;
  }
  if (fw_train_plan(&g, &s, &cfg->net, cfg->examples, plan, err, errlen)) return RT_INVALID;
  *pc = cfg->machine;
  return pod_hbm_fit(pc, plan->hbm_bytes, err, errlen) ? RT_INVALID : RT_OK;
}

rt_status_t pod_train_check(const pod_train_config_t *cfg, fw_train_plan_t *plan, char *err, size_t errlen) {
  pod_config_t pc;
  return plan_pod(cfg, plan, &pc, err, errlen);
}

/* The pod a checked plan runs on: the machine with each chip's HBM sized to the plan (the
 * check found it fits). */
static pod_config_t planned_pod(const pod_train_config_t *cfg, const fw_train_plan_t *plan) {
  pod_config_t pc = cfg->machine;
  char unused[256];
  (void)pod_hbm_fit(&pc, plan->hbm_bytes, unused, sizeof unused);
  return pc;
}

const fw_train_plan_t *pod_train_plan(const pod_train_t *t) { return &t->plan; }

static chip_t *slice_chip(pod_train_t *t, unsigned i) {
  const fw_slice_t *s = &t->cfg.slice;
  return pod_chip(t->pod, s->x0 + i % s->w, s->y0 + i / s->w);
}

/* The place of slice chip i, as the firmware sees it. */
static void place_of(const pod_train_t *t, unsigned i, fw_train_place_t *pc) {
  const fw_slice_t *s = &t->cfg.slice;
  fw_train_place(&t->plan, s, s->x0 + i % s->w, s->y0 + i / s->w, pc);
}

/* Writes the examples, labels, constants and chip i's parameter shard into its HBM. */
static int load_chip(pod_train_t *t, chip_t *c, unsigned i, char *err, size_t errlen) {
  const fw_train_plan_t *pl = &t->plan;
  const pod_train_config_t *cfg = &t->cfg;
  const unsigned C = pl->lanes, F = cfg->net.features;
  int rc = -1;
  uint16_t *row = calloc(pl->features_padded, sizeof *row);
  uint32_t *line = calloc(C, sizeof *line), *params = calloc((size_t)pl->param_lines * C, sizeof *params);
  uint32_t *w = NULL, *bias = NULL;
  if (!row || !line || !params) goto oom;
  for (unsigned e = 0; e < cfg->examples; e++) {
    memcpy(row, cfg->x + (size_t)e * F, F * sizeof *row);
    memset(line, 0, C * sizeof *line);
    line[cfg->label[e]] = 0x3F800000u;
    if (chip_hbm_write(c, pl->hbm_x + (uint64_t)e * 2 * pl->features_padded, row, 2 * pl->features_padded) ||
        chip_hbm_write(c, pl->hbm_y + (uint64_t)e * 4 * C, line, 4 * C))
      goto hbm;
  }
  memset(line, 0, C * sizeof *line);
  if (chip_hbm_write(c, pl->hbm_zero, line, 4 * C)) goto hbm;
  for (unsigned l = 0; l < C; l++) line[l] = l < cfg->net.classes ? 0 : 0xFF800000u; /* the logits' mask */
  if (chip_hbm_write(c, pl->hbm_consts, line, 4 * C)) goto hbm;
  /* the shard: layer 2's columns and layer 3's rows of this mp rank */
  fw_train_place_t pc;
  place_of(t, i, &pc);
  const unsigned full_n[3] = {cfg->net.hidden, cfg->net.hidden, cfg->net.classes};
  uint32_t *p = params;
  for (unsigned l = 0; l < FW_TRAIN_LAYERS; l++) {
    const fw_train_layer_t *ly = &pl->layer[l];
    const unsigned r0 = l == 2 ? pc.mp_rank * pl->hidden_per_mp : 0, c0 = l == 1 ? pc.mp_rank * pl->hidden_per_mp : 0;
    free(w), free(bias);
    w = malloc((size_t)ly->k * ly->n * sizeof *w + 4), bias = malloc(ly->n * sizeof *bias + 4);
    if (!w || !bias) goto oom;
    for (unsigned k = 0; k < ly->k; k++)
      memcpy(w + (size_t)k * ly->n, cfg->w[l] + (size_t)(r0 + k) * full_n[l] + c0, ly->n * sizeof *w);
    memcpy(bias, cfg->bias[l] + c0, ly->n * sizeof *bias);
    fw_train_pack(pl, l, w, bias, p);
    p += (size_t)ly->lines * C;
  }
  if (chip_hbm_write(c, pl->hbm_params, params, (size_t)pl->param_lines * 4 * C)) goto hbm;
  rc = 0;
  goto out;
oom:
  snprintf(err, errlen, "out of memory loading the chips");
  goto out;
hbm:
  snprintf(err, errlen, "the training data does not fit HBM");
out:
  free(row), free(line), free(params), free(w), free(bias);
  return rc;
}

/* Loads each slice chip's programs (from build(i): a pair per core), HALTs elsewhere, and runs
 * the pod. */
typedef int (*build_fn)(pod_train_t *t, unsigned i, unsigned first, fw_train_mode_t mode, fw_prog_t *cq, fw_prog_t *dq,
                        char *err, size_t errlen);

static int build_init(pod_train_t *t, unsigned i, unsigned first, fw_train_mode_t mode, fw_prog_t *cq, fw_prog_t *dq,
                      char *err, size_t errlen) {
  (void)i, (void)first, (void)mode;
  for (unsigned c = 0; c < t->plan.cores; c++)
    if (fw_train_init(&t->plan, &cq[c], &dq[c], err, errlen)) return -1;
  return 0;
}

static int build_step(pod_train_t *t, unsigned i, unsigned first, fw_train_mode_t mode, fw_prog_t *cq, fw_prog_t *dq,
                      char *err, size_t errlen) {
  const fw_slice_t *s = &t->cfg.slice;
  return fw_train_step(&t->geo, &t->plan, s, s->x0 + i % s->w, s->y0 + i / s->w, first, mode, cq, dq, err, errlen);
}

static void progs_reset(fw_prog_t *cq, fw_prog_t *dq) {
  for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++) {
    fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
    fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
  }
}

/* Loads core c's programs (a chip's cores beyond the plan's run HALTs) and returns the largest
 * command count, for the time limit. */
static rt_status_t load_cores(pod_train_t *t, chip_t *chip, fw_prog_t *cq, fw_prog_t *dq, size_t *cmds, char *err,
                              size_t errlen) {
  *cmds = 0;
  for (unsigned c = 0; c < t->plan.cores; c++) {
    if (!cq[c].count) fw_halt(&cq[c]);
    if (!dq[c].count) fw_halt(&dq[c]);
    if (cq[c].count + dq[c].count > *cmds) *cmds = cq[c].count + dq[c].count;
    rt_status_t rc = rt_load_core_programs(chip, c, &cq[c], &dq[c], err, errlen);
    if (rc != RT_OK) return rc;
  }
  return RT_OK;
}

static rt_status_t run(pod_train_t *t, build_fn build, unsigned first, fw_train_mode_t mode, uint64_t *cycles,
                       char *err, size_t errlen) {
  const fw_slice_t *s = &t->cfg.slice;
  fw_prog_t cq[FW_TRAIN_MAX_CORES], dq[FW_TRAIN_MAX_CORES];
  for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++) fw_prog_init(&cq[c]), fw_prog_init(&dq[c]);
  /* the phase first: the programs' kernel phases are the phase's (rt_pod_marks) */
  pod_phase(t->pod, build == build_init ? "init" : mode == FW_TRAIN_COMM_ONLY ? "collectives alone" : "training step");
  rt_status_t rc = RT_OK;
  uint64_t limit = 1000000;
  for (unsigned y = 0; y < s->pod_h && rc == RT_OK; y++)
    for (unsigned x = 0; x < s->pod_w && rc == RT_OK; x++) {
      progs_reset(cq, dq);
      const bool in = x >= s->x0 && x < s->x0 + s->w && y >= s->y0 && y < s->y0 + s->h;
      if (in && build(t, (y - s->y0) * s->w + (x - s->x0), first, mode, cq, dq, err, errlen)) {
        rc = RT_INVALID;
        for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++)
          if (!fw_prog_ok(&cq[c]) || !fw_prog_ok(&dq[c])) rc = RT_FAILED;
        break;
      }
      size_t cmds;
      rc = load_cores(t, pod_chip(t->pod, x, y), cq, dq, &cmds, err, errlen);
      rt_pod_marks(t->pod, x, y, &cq[0]);
      if (limit < 1000000 + 2000ull * cmds) limit = 1000000 + 2000ull * cmds;
    }
  for (unsigned c = 0; c < FW_TRAIN_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  if (rc != RT_OK) return rc;
  char report[2048];
  if (pod_run(t->pod, CHIP_QMASK_EVERY_CORE, limit, cycles, report, sizeof report)) {
    snprintf(err, errlen, "the chips failed: %s", report);
    return RT_FAILED;
  }
  return RT_OK;
}

static pod_train_t *create(const pod_train_config_t *cfg, const fw_train_plan_t *plan, rt_status_t *rc, char *err,
                           size_t errlen) {
  pod_train_t *t = calloc(1, sizeof *t);
  *rc = RT_FAILED;
  if (!t) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  t->cfg = *cfg;
  t->plan = *plan;
  t->cfg.slice.pod_w = t->cfg.machine.size_x, t->cfg.slice.pod_h = t->cfg.machine.size_y;
  const pod_config_t pc = planned_pod(cfg, plan);
  if (!(t->pod = pod_build(&pc, err, errlen))) goto fail;
  pod_set_profile(t->pod, cfg->profile);
  t->geo = *chip_geometry(pod_chip(t->pod, 0, 0));
  const fw_slice_t *s = &t->cfg.slice;
  if (pod_set_slice(t->pod, s->x0, s->y0, s->w, s->h)) {
    snprintf(err, errlen, "bad slice");
    goto fail;
  }
  for (unsigned i = 0; i < s->w * s->h; i++)
    if (load_chip(t, slice_chip(t, i), i, err, errlen)) goto fail;
  uint64_t cycles;
  if ((*rc = run(t, build_init, 0, FW_TRAIN_FULL, &cycles, err, errlen)) != RT_OK) goto fail;
  return t;
fail:
  pod_train_free(t);
  return NULL;
}

pod_train_t *pod_train_new(const pod_train_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  fw_train_plan_t plan;
  if ((*rc = pod_train_check(cfg, &plan, err, errlen)) != RT_OK) return NULL;
  return pod_train_build(cfg, &plan, rc, err, errlen);
}

pod_train_t *pod_train_build(const pod_train_config_t *cfg, const fw_train_plan_t *plan, rt_status_t *rc, char *err,
                             size_t errlen) {
  pod_train_t *t = create(cfg, plan, rc, err, errlen);
  if (t && cfg->trace_path &&
      chip_trace(pod_chip(t->pod, cfg->trace_chip % cfg->machine.size_x, cfg->trace_chip / cfg->machine.size_x), cfg->trace_path, err,
                 errlen)) {
    *rc = RT_FAILED;
    pod_train_free(t);
    return NULL;
  }
  return t;
}

void pod_train_free(pod_train_t *t) {
  if (!t) return;
  pod_free(t->pod);
  free(t);
}

rt_status_t pod_train_step(pod_train_t *t, unsigned first, uint64_t *cycles, char *err, size_t errlen) {
  return run(t, build_step, first, FW_TRAIN_FULL, cycles, err, errlen);
}

int pod_train_read(pod_train_t *t, unsigned chip, uint32_t *params, uint32_t *probs) {
  const fw_train_plan_t *pl = &t->plan;
  chip_t *c = slice_chip(t, chip);
  if (params && chip_hbm_read(c, pl->hbm_params, params, (size_t)pl->param_lines * 4 * pl->lanes)) return -1;
  if (probs && chip_hbm_read(c, pl->hbm_probs, probs, (size_t)pl->batch_per_chip * 4 * pl->lanes)) return -1; /* every core's */
  return 0;
}

void pod_train_trace_close(pod_train_t *t) {
  if (t->cfg.trace_path) chip_trace_close(pod_chip(t->pod, t->cfg.trace_chip % t->cfg.machine.size_x, t->cfg.trace_chip / t->cfg.machine.size_x));
}

unsigned pod_train_sems_left(pod_train_t *t) {
  unsigned left = 0;
  for (unsigned i = 0; i < t->cfg.slice.w * t->cfg.slice.h; i++)
    for (unsigned k = 0; k < ISA_NUM_SEMS * t->plan.cores; k++) left += chip_sem(slice_chip(t, i), k) != 0; /* every core's */
  return left;
}

rt_status_t pod_train_comm_cycles(pod_train_t *t, uint64_t *cycles, char *err, size_t errlen) {
  return run(t, build_step, 0, FW_TRAIN_COMM_ONLY, cycles, err, errlen);
}

rt_status_t pod_train_compute_cycles(const pod_train_t *trained, uint64_t *cycles, char *err, size_t errlen) {
  /* a 1x1 pod whose one chip runs the slice's first chip's program without collectives (the
   * programs of every chip have the same shape) */
  const pod_train_config_t *cfg = &trained->cfg;
  const fw_train_plan_t plan = trained->plan;
  pod_train_t *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(err, errlen, "out of memory");
    return RT_FAILED;
  }
  t->cfg = *cfg;
  t->plan = plan;
  /* one chip of the machine, on the caller's thread, without the pod's RTL picks or progress
   * (a lone chip of a checked machine: one row, no threads) */
  pod_config_t pc = planned_pod(cfg, &plan);
  pc.size_x = pc.size_y = 1, pc.rtl_chips = NULL, pc.progress = NULL, pc.progress_ctx = NULL, pc.threads = 0;
  rt_status_t rc = RT_FAILED;
  if (!(t->pod = pod_build(&pc, err, errlen))) goto out;
  t->geo = *chip_geometry(pod_chip(t->pod, 0, 0));
  chip_t *c = pod_chip(t->pod, 0, 0);
  if (load_chip(t, c, 0, err, errlen)) goto out;
  fw_prog_t cq[FW_TRAIN_MAX_CORES], dq[FW_TRAIN_MAX_CORES];
  for (unsigned k = 0; k < FW_TRAIN_MAX_CORES; k++) fw_prog_init(&cq[k]), fw_prog_init(&dq[k]);
  int bad = 0;
  for (unsigned pass = 0; pass < 2 && !bad; pass++) {
    progs_reset(cq, dq);
    const fw_slice_t *s = &t->cfg.slice;
    size_t cmds = 0;
    bad = pass == 0 ? build_init(t, 0, 0, FW_TRAIN_FULL, cq, dq, err, errlen)
                        : fw_train_step(&t->geo, &plan, s, s->x0, s->y0, 0, FW_TRAIN_COMPUTE_ONLY, cq, dq, err, errlen);
    if (!bad && load_cores(t, c, cq, dq, &cmds, err, errlen) != RT_OK) bad = 1;
    const uint64_t limit = 1000000 + 2000ull * cmds;
    char report[1024];
    if (!bad && pod_run(t->pod, CHIP_QMASK_EVERY_CORE, limit, cycles, report, sizeof report)) {
      snprintf(err, errlen, "the compute-only step failed: %s", report);
      bad = 1;
    }
  }
  for (unsigned k = 0; k < FW_TRAIN_MAX_CORES; k++) fw_prog_free(&cq[k]), fw_prog_free(&dq[k]);
  if (bad) goto out;
  rc = RT_OK;
out:
  pod_train_free(t);
  return rc;
}
