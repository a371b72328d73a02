/* coll_job: a collective on a slice (coll_job.h). */
#include "job/coll_job.h"

#include <stdio.h>
#include <stdlib.h>

#include "job/coll_check.h"
#include "util/cli.h"
#include "util/rng.h"

struct coll_job {
  coll_job_config_t cfg;
  pod_coll_plan_t plan;
  coll_job_result_t res;
  pod_coll_results_t *out;  /* where the chips' results are read, during the check */
};

coll_job_t *coll_job_new(const coll_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen) {
  coll_job_t *j = calloc(1, sizeof *j);
  if (!j) {
    *rc = RT_FAILED;
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  j->cfg = *cfg;
  if ((*rc = pod_coll_check_plan(&j->cfg.run, &j->plan, err, errlen)) != RT_OK) {
    free(j);
    return NULL;
  }
  return j;
}

void coll_job_free(coll_job_t *j) { free(j); }
coll_job_config_t *coll_job_config(coll_job_t *j) { return &j->cfg; }
const coll_job_result_t *coll_job_result(const coll_job_t *j) { return &j->res; }

/* The inputs: random fp32 values of moderate range and both signs, each made from the seed,
 * the chip and its index alone (rng_coll_input). As the chips get them: bf16 bits with
 * bf16_in; as the golden model takes them: widened (the same values). */
static void device_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const coll_job_t *j = ctx;
  for (uint64_t k = 0; k < n; k++) {
    const uint32_t bits = rng_coll_input(j->cfg.seed, chip, first + k);
    vals[k] = j->cfg.run.args.bf16_in ? bits >> 16 : bits;
  }
}

static void golden_input(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const coll_job_t *j = ctx;
  for (uint64_t k = 0; k < n; k++) {
    const uint32_t bits = rng_coll_input(j->cfg.seed, chip, first + k);
    vals[k] = j->cfg.run.args.bf16_in ? bits & 0xFFFF0000u : bits;
  }
}

static int device_output(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  return pod_coll_read(((coll_job_t *)ctx)->out, chip, first, n, vals);
}

/* Every chip's results against the golden model, a block of values of every chip at a time. */
static rt_status_t check_results(void *ctx, pod_coll_results_t *r, char *err, size_t errlen) {
  coll_job_t *j = ctx;
  j->out = r;
  cli_note("collective: checking every chip's results against the golden model...");
  coll_golden_io_t io = {j, golden_input, device_output, 0, 0};
  const pod_coll_config_t *c = &j->cfg.run;
  if (job_coll_check(&j->plan.slice, &c->args, c->machine.chip.cols, c->elems, &io, &j->res.check)) {
    snprintf(err, errlen, "the results cannot be read, or no memory for the golden model");
    return RT_FAILED;
  }
  return RT_OK;
}

rt_status_t coll_job_run(coll_job_t *j, char *err, size_t errlen) {
  const pod_coll_config_t *c = &j->cfg.run;
  coll_job_result_t *r = &j->res;
  const pod_coll_io_t io = {j, device_input, check_results};
  const rt_status_t rc = pod_collective_planned(c, &j->plan, &io, &r->stats, err, errlen);
  if (rc != RT_OK) return rc;
  r->bytes = c->elems * (c->args.bf16_in ? 2 : 4);
  r->bw = pod_coll_bandwidth(&j->plan.slice, c->args.op, r->bytes, r->stats.cycles, c->machine.chip.clock_mhz,
                             pod_link_bytes_per_cycle(&c->machine));
  r->correct = r->check.mismatches == 0 && r->check.bound_violations == 0 && r->stats.sems_left == 0;
  return RT_OK;
}
