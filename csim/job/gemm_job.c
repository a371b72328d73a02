/* gemm_job: C = A x B on one chip or one MXU (gemm_job.h). */
#include "job/gemm_job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fast/mxu_fast.h"
#include "pod/pod.h"
#include "runtime/chip_gemm.h"
#include "runtime/perf.h"
#include "util/cli.h"
#include "util/rng.h"
#include "util/stopwatch.h"
#include "vmodel/mxu_top.h"

struct gemm_job {
  gemm_job_config_t cfg;
  gemm_job_result_t res;
  uint16_t *own_a, *own_b;  /* the seeded inputs, when the config gives none */
  uint32_t *c;
};

static chip_gemm_opts_t gemm_opts(const gemm_job_config_t *c) {
  return (chip_gemm_opts_t){.relu = c->relu, .bf16_out = c->bf16_out, .b_transposed = c->transposed_b,
                            .a_transposed = c->transposed_a, .profile = c->profile};
}

/* The shape against the chip (its programs, VMEM, HBM when the machine gives its capacity)
 * or the MXU: 0, or -1 with a message. */
static int check(const gemm_job_config_t *c, char *err, size_t errlen) {
  if (c->level == GEMM_JOB_MXU) return mxu_gemm_check(c->chip.rows, c->chip.cols, c->m, c->k, c->n, err, errlen);
  chip_geometry_t geo;
  const chip_gemm_opts_t opts = gemm_opts(c);
  pod_config_t p = {.chip = c->chip};
  return chip_geometry_for(c->chip.rows, c->chip.cols, c->chip.mxus, c->chip.cores, c->chip.model, &geo, err, errlen) ||
         chip_gemm_check(&geo, c->m, c->k, c->n, &opts, err, errlen) ||
         pod_hbm_fit(&p, chip_gemm_hbm_bytes(c->chip.cols, c->m, c->k, c->n), err, errlen);
}

gemm_job_t *gemm_job_new(const gemm_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  gemm_job_t *j = calloc(1, sizeof *j);
  *rc = RT_FAILED;
  if (!j) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  j->cfg = *cfg;
  if (check(cfg, err, errlen)) {
    *rc = RT_INVALID;
    free(j);
    return NULL;
  }
  *rc = RT_OK;
  return j;
}

void gemm_job_free(gemm_job_t *j) {
  if (!j) return;
  free(j->own_a), free(j->own_b), free(j->c);
  free(j);
}

gemm_job_config_t *gemm_job_config(gemm_job_t *j) { return &j->cfg; }
const gemm_job_result_t *gemm_job_result(const gemm_job_t *j) { return &j->res; }

/* The firmware GEMM on a chip, A and B in its HBM. */
static rt_status_t run_chip(gemm_job_t *j, char *err, size_t errlen) {
  const gemm_job_config_t *o = &j->cfg;
  gemm_job_result_t *st = &j->res;
  const uint64_t need = chip_gemm_hbm_bytes(o->chip.cols, o->m, o->k, o->n);
  chip_config_t cfg = o->chip;  /* (its HBM capacity, if the machine gives one, was checked) */
  if (!cfg.hbm_bytes) cfg.hbm_bytes = need < (1u << 20) ? (1u << 20) : need;
  char why[1024];
  rt_status_t rc = RT_FAILED;
  chip_t *chip = chip_new(&cfg, err, errlen);
  if (!chip) goto out;
  if (o->trace_path && chip_trace(chip, o->trace_path, why, sizeof why)) {
    snprintf(err, errlen, "--trace: %s", why);
    rc = RT_INVALID;
    goto out;
  }
  if (o->progress) chip_set_progress(chip, o->progress, o->progress_ctx);
  profile_attach(o->profile, 0, chip);
  profile_phase(o->profile, "gemm", chip_cycle(chip));
  stopwatch_t w;
  stopwatch_start(&w);
  chip_gemm_stats_t cs;
  const chip_gemm_opts_t gopts = gemm_opts(o);
  if (chip_gemm(chip, o->m, o->k, o->n, o->a, o->b, j->c, &gopts, &cs, err, errlen)) goto out;
  st->seconds = stopwatch_seconds(&w);
  st->cycles = cs.cycles;
  st->counters = (mxu_counters_t){cs.compute, cs.weight_load, cs.weight_stall, cs.input_stall, cs.mxu_idle};
  st->hbm_bytes = cs.hbm_bytes;
  st->dma_busy = cs.dma_busy_cycles;
  st->mxu_busy = cs.mxu_busy_cycles;
  st->compute_cmds = cs.compute_cmds;
  st->dma_cmds = cs.dma_cmds;
  profile_run_end(o->profile);
  rc = RT_OK;
out:
  profile_forget_chips(o->profile);
  chip_free(chip);
  return rc;
}

/* A line on stderr at most every second, for GEMMs long enough to want one. */
static void show_progress(void *ctx, uint64_t cycles, uint64_t expected) {
  if (ticker_due(ctx)) cli_progress("gemm: cycle %" PRIu64 " of about %" PRIu64, cycles, expected);
}

/* The MXU alone, fed through its ports. */
static rt_status_t run_mxu(gemm_job_t *j, char *err, size_t errlen) {
  const gemm_job_config_t *o = &j->cfg;
  gemm_job_result_t *st = &j->res;
  mxu_dev_t dev;
  char why[1024];
  if (mxu_dev_open(&dev, o->chip.rows, o->chip.cols, o->seed, err, errlen)) return RT_FAILED;
  rt_status_t rc = RT_FAILED;
  if (o->trace_path && vmodel_trace_open(dev.model, o->trace_path, why, sizeof why)) {
    snprintf(err, errlen, "--trace: %s", why);
    rc = RT_INVALID;
    goto out;
  }
  ticker_t ticker;
  ticker_init(&ticker, 1.0);
  if (mxu_contract_cycles(o->chip.rows, o->chip.cols, o->m, o->k, o->n) > 20000) {
    dev.progress = show_progress;
    dev.progress_ctx = &ticker;
  }
  stopwatch_t w;
  stopwatch_start(&w);
  mxu_gemm_stats_t ms;
  dev.b_transposed = o->transposed_b;
  if (mxu_gemm(&dev, o->m, o->k, o->n, o->a, o->b, j->c, &ms, err, errlen)) goto out;
  st->seconds = stopwatch_seconds(&w);
  st->cycles = ms.cycles;
  st->readout_cycles = ms.readout_cycles;
  st->tiles = ms.tiles;
  st->counters = ms.counters;
  rc = RT_OK;
out:
  mxu_dev_close(&dev);
  return rc;
}

/* The MXU alone on its fast model: the same bits, cycles and counters as run_mxu. */
static void run_mxu_fast(gemm_job_t *j) {
  const gemm_job_config_t *o = &j->cfg;
  gemm_job_result_t *st = &j->res;
  stopwatch_t w;
  stopwatch_start(&w);
  mxu_fast_stats_t fs;
  mxu_fast_run(o->chip.rows, o->chip.cols, o->m, o->k, o->n, o->a, o->b, j->c, &fs);
  st->seconds = stopwatch_seconds(&w);
  st->cycles = fs.cycles;
  st->readout_cycles = fs.readout_cycles;
  st->tiles = fs.tiles;
  st->counters = (mxu_counters_t){fs.compute, fs.weight_load, fs.weight_stall, fs.input_stall, fs.idle};
}

/* C against the golden model: every row, or the first and last rows and a random sample
 * between (check_rows of them). 0, or -1 when out of memory. */
static int golden_check(gemm_job_t *j) {
  const gemm_job_config_t *o = &j->cfg;
  golden_diff_t *d = &j->res.diff;
  j->res.checked_rows = o->check_rows && o->check_rows < o->m ? o->check_rows : o->m;
  if (!o->check_rows || o->check_rows >= o->m)
    return gemm_golden_check(o->chip.rows, o->m, o->k, o->n, o->a, o->b, o->relu, o->bf16_out, j->c, d);
  size_t *which = malloc(o->check_rows * sizeof *which);
  if (!which) return -1;
  rng_t pick;
  rng_seed(&pick, o->seed * 31 + 7);
  which[0] = 0;
  if (o->check_rows > 1) which[1] = o->m - 1;
  for (size_t i = 2; i < o->check_rows; i++) which[i] = 1 + (size_t)rng_below(&pick, o->m - 2);
  const int rc =
      gemm_golden_check_rows(o->chip.rows, o->m, o->k, o->n, o->a, o->b, o->relu, o->bf16_out, j->c, which, o->check_rows, d);
  free(which);
  return rc;
}

/* The inputs from the seed when the config gives none (M, K, N are at least 1): 0, or -1 when
 * out of memory. */
static int seeded_inputs(gemm_job_t *j) {
  gemm_job_config_t *o = &j->cfg;
  rng_t rng;
  rng_seed(&rng, o->seed);
  if (!o->a) {
    if (!(j->own_a = malloc(o->m * o->k * sizeof *j->own_a))) return -1;
    rng_gemm_inputs(&rng, j->own_a, o->m * o->k);
    o->a = j->own_a;
  }
  if (!o->b) {
    if (!(j->own_b = malloc(o->k * o->n * sizeof *j->own_b))) return -1;
    rng_gemm_inputs(&rng, j->own_b, o->k * o->n);
    o->b = j->own_b;
  }
  return 0;
}

static void measure(gemm_job_t *j) {
  const gemm_job_config_t *o = &j->cfg;
  gemm_job_result_t *r = &j->res;
  const perf_chip_t pc = {.rows = o->chip.rows, .cols = o->chip.cols, .mxus = o->chip.mxus, .cores = o->chip.cores,
                          .clock_mhz = o->chip.clock_mhz};
  r->contract_cycles = perf_gemm_share_contract_cycles(&pc, o->m, o->k, o->n);
  r->ideal_cycles = perf_gemm_ideal_cycles(&pc, o->m, o->k, o->n);
  r->utilization = r->ideal_cycles / (double)r->cycles;
  r->flops = perf_flops(&pc, (double)o->m * o->k * o->n, r->cycles);
  r->peak_flops = perf_peak_flops(&pc);
}

rt_status_t gemm_job_run(gemm_job_t *j, char *err, size_t errlen) {
  const gemm_job_config_t *o = &j->cfg;
  if (seeded_inputs(j) || !(j->c = calloc(o->m * o->n, sizeof *j->c))) {
    snprintf(err, errlen, "out of memory");
    return RT_FAILED;
  }
  j->res.c = j->c;
  rt_status_t rc = RT_OK;
  if (o->chip.model == CHIP_MODEL_FAST && o->level == GEMM_JOB_MXU)
    run_mxu_fast(j);
  else
    rc = o->level == GEMM_JOB_CHIP ? run_chip(j, err, errlen) : run_mxu(j, err, errlen);
  if (rc != RT_OK) return rc;
  if (golden_check(j)) {
    snprintf(err, errlen, "out of memory for the golden model");
    return RT_FAILED;
  }
  measure(j);
  return RT_OK;
}
