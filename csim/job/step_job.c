/* step_job: the data-parallel step in miniature (step_job.h). */
#include "job/step_job.h"

#include <stdio.h>
#include <stdlib.h>

#include "job/coll_check.h"
#include "runtime/perf.h"
#include "util/cli.h"
#include "util/rng.h"

struct step_job {
  step_job_config_t cfg;
  pod_step_plan_t plan;
  step_job_result_t res;
  uint16_t *a, *b;          /* the data: one A (each chip's is it with its rows turned) and B */
  uint32_t *want;           /* the golden product of a and b, M x N */
  uint32_t *row;            /* one chip's row, read back */
  pod_step_results_t *out;  /* where the chips' results are read, during the run */
};

step_job_t *step_job_new(const step_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  step_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    *rc = RT_FAILED;
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  j->cfg = *cfg;
  if ((*rc = pod_step_check(&j->cfg.run, &j->plan, err, errlen)) != RT_OK) {
    free(j);
    return NULL;
  }
  return j;
}

void step_job_free(step_job_t *j) {
  if (!j) return;
  free(j->a), free(j->b), free(j->want), free(j->row);
  free(j);
}

step_job_config_t *step_job_config(step_job_t *j) { return &j->cfg; }
const step_job_result_t *step_job_result(const step_job_t *j) { return &j->res; }

/* Value e of chip's product: row r of it is row (r + chip) mod M of the golden product. */
static uint32_t product_value(const step_job_t *j, unsigned chip, uint64_t e) {
  const uint64_t m = j->cfg.run.m, n = j->cfg.run.n;
  return j->want[((e / n + chip) % m) * n + e % n];
}

/* After phase 1: the golden product of a and b once, each chip's product against it. */
static rt_status_t check_products(void *ctx, pod_step_results_t *r, char *err, size_t errlen) {
  step_job_t *j = ctx;
  const pod_step_config_t *c = &j->cfg.run;
  golden_diff_t *d = &j->res.gemm;
  const unsigned chips = c->machine.size_x * c->machine.size_y;
  cli_note("step: checking every chip's product against the golden GEMM...");
  gemm_golden(c->machine.chip.rows, c->m, c->k, c->n, j->a, j->b, false, false, j->want);
  for (unsigned i = 0; i < chips; i++)
    for (uint64_t row = 0; row < c->m; row++) {
      if (pod_step_read(r, i, row * c->n, c->n, j->row)) {
        snprintf(err, errlen, "chip %u's product cannot be read", i);
        return RT_FAILED;
      }
      for (uint64_t col = 0; col < c->n; col++) {
        const uint64_t e = row * c->n + col;
        const uint32_t want = product_value(j, i, e);
        if (j->row[col] != want && d->mismatches++ == 0)
          d->first = e, d->got = j->row[col], d->want = want, j->res.gemm_chip = i;
      }
    }
  return RT_OK;
}

static void sum_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  for (uint64_t k = 0; k < n; k++) vals[k] = product_value(ctx, chip, first + k);
}

static int sum_output(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  return pod_step_read(((step_job_t *)ctx)->out, chip, first, n, vals);
}

/* After phase 2: the sums against the golden all-reduce of the products. */
static rt_status_t check_sums(void *ctx, pod_step_results_t *r, char *err, size_t errlen) {
  step_job_t *j = ctx;
  j->out = r;
  cli_note("step: checking every chip's sums against the golden all-reduce...");
  coll_golden_io_t io = {j, sum_input, sum_output, 0, 0};
  const pod_step_config_t *c = &j->cfg.run;
  fw_coll_args_t a = {FW_COLL_ALLREDUCE, c->algo, 0, 0, 0, 0, false};
  if (job_coll_check(&j->plan.slice, &a, c->machine.chip.cols, c->m * c->n, &io, &j->res.sums)) {
    snprintf(err, errlen, "the sums cannot be read, or no memory for the golden model");
    return RT_FAILED;
  }
  return RT_OK;
}

/* The figures of a finished step. */
static void measure(step_job_t *j) {
  const pod_step_config_t *c = &j->cfg.run;
  step_job_result_t *r = &j->res;
  const chip_config_t *chip = &c->machine.chip;
  const perf_chip_t pc = {.rows = chip->rows, .cols = chip->cols, .mxus = chip->mxus, .cores = chip->cores,
                          .clock_mhz = chip->clock_mhz};
  const double mhz = chip->clock_mhz, ideal = perf_gemm_ideal_cycles(&pc, c->m, c->k, c->n);
  /* the pod's peak and what the step sustains: its GEMM FLOPs over the GEMM phase and the whole step */
  const double chips = (double)c->machine.size_x * c->machine.size_y, flops = 2.0 * (double)c->m * c->k * c->n * chips;
  r->allreduce_bytes = 4 * c->m * c->n;
  r->total_cycles = r->stats.gemm_cycles + r->stats.allreduce_cycles;
  r->mxu_utilization = ideal / (double)r->stats.gemm_cycles;
  r->peak_flops = perf_peak_flops(&pc) * chips;
  r->gemm_flops = flops / ((double)r->stats.gemm_cycles / (mhz * 1e6));
  r->sustained_flops = flops / ((double)r->total_cycles / (mhz * 1e6));
  r->allreduce_bw = pod_coll_bandwidth(&r->stats.slice, FW_COLL_ALLREDUCE, r->allreduce_bytes,
                                       r->stats.allreduce_cycles, mhz, pod_link_bytes_per_cycle(&c->machine));
  r->correct = r->gemm.mismatches == 0 && r->sums.mismatches == 0 && r->sums.bound_violations == 0;
}

rt_status_t step_job_run(step_job_t *j, char *err, size_t errlen) {
  const pod_step_config_t *c = &j->cfg.run;
  j->a = malloc(c->m * c->k * 2), j->b = malloc(c->k * c->n * 2);
  j->want = malloc(c->m * c->n * 4), j->row = malloc(c->n * 4);
  if (!j->a || !j->b || !j->want || !j->row) {
    snprintf(err, errlen, "out of memory");
    return RT_FAILED;
  }
  rng_t r;
  rng_seed(&r, j->cfg.seed);
  for (uint64_t i = 0; i < c->m * c->k; i++) j->a[i] = rng_bf16(&r, -3, 1);
  for (uint64_t i = 0; i < c->k * c->n; i++) j->b[i] = rng_bf16(&r, -3, 1);
  const pod_step_io_t io = {j, check_products, check_sums};
  const rt_status_t rc = pod_step_run(c, &j->plan, j->a, j->b, &io, &j->res.stats, err, errlen);
  if (rc == RT_OK) measure(j);
  return rc;
}
