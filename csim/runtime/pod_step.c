/* pod_step: see pod_step.h. */
#include "runtime/pod_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cli.h"

#include "runtime/chip_gemm.h"
#include "runtime/pod_collective.h"
#include "pod/pod.h"

rt_status_t pod_step_check(const pod_step_config_t *cfg, pod_step_plan_t *plan, char *err, size_t errlen) {
  chip_geometry_t *g = &plan->geo;
  if (pod_check(&cfg->machine, g, err, errlen)) return RT_INVALID;
  if (chip_gemm_check(g, cfg->m, cfg->k, cfg->n, NULL, err, errlen)) return RT_INVALID;
  fw_slice_t *s = &plan->slice;
  fw_coll_args_t *ca = &plan->allreduce;
  *s = (fw_slice_t){0, 0, cfg->machine.size_x, cfg->machine.size_y, cfg->machine.size_x, cfg->machine.size_y};
  *ca = (fw_coll_args_t){FW_COLL_ALLREDUCE, cfg->algo, 0, (uint32_t)((cfg->m * cfg->n + g->cols - 1) / g->cols), 0,
                         0, false};
  pod_coll_default_chunk(s, ca, g->vmem_lines);
  if (fw_coll_check(g, s, ca, err, errlen)) return RT_INVALID;
  if ((cfg->m * cfg->n) % g->cols) {
    snprintf(err, errlen, "M x N (%llu) must fill whole VMEM lines of %u values",
             (unsigned long long)(cfg->m * cfg->n), g->cols);
    return RT_INVALID;
  }
  plan->pod = cfg->machine;
  return pod_hbm_fit(&plan->pod, chip_gemm_hbm_bytes(g->cols, cfg->m, cfg->k, cfg->n), err, errlen) ? RT_INVALID
                                                                                                      : RT_OK;
}

struct pod_step_results {
  pod_t *pod;
  const pod_step_config_t *cfg;
  uint64_t c_addr;
};

int pod_step_read(pod_step_results_t *r, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals) {
  const pod_step_config_t *c = r->cfg;
  if (chip >= c->machine.size_x * c->machine.size_y || first > c->m * c->n || n > c->m * c->n - first) return -1;
  return chip_hbm_read(pod_chip(r->pod, chip % c->machine.size_x, chip / c->machine.size_x), r->c_addr + 4 * first, vals, 4 * n);
}

rt_status_t pod_step_run(const pod_step_config_t *cfg, const pod_step_plan_t *plan, const uint16_t *a,
                         const uint16_t *b, const pod_step_io_t *io, pod_step_stats_t *st, char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  const chip_geometry_t g = plan->geo;
  st->slice = plan->slice, st->allreduce = plan->allreduce;
  rt_status_t rc;
  const unsigned chips = cfg->machine.size_x * cfg->machine.size_y;
  const uint64_t m = cfg->m, k = cfg->k, n = cfg->n;
  pod_t *pod = pod_build(&plan->pod, err, errlen);  /* pod_step_check checked it */
  uint16_t *mine = malloc(m * k * sizeof *mine);  /* one chip's A at a time */
  pod_step_results_t res = {pod, cfg, chip_gemm_c_addr(g.cols, m, k, n)};
  rc = RT_FAILED;
  if (!pod || !mine) {
    if (pod) snprintf(err, errlen, "out of memory");
    goto out;
  }
  pod_set_profile(pod, cfg->profile);
  /* phase 1: the GEMMs */
  cli_note("step: %u chips, GEMM %llux%llux%llu each...", chips, (unsigned long long)m,
          (unsigned long long)k, (unsigned long long)n);
  uint64_t limit = 0;  /* the chips share nothing but the clock: the slowest one's bound */
  pod_phase(pod, "gemm"); /* (before the loads: the programs' kernel phases are the phase's) */
  for (unsigned i = 0; i < chips; i++) {
    chip_t *c = pod_chip(pod, i % cfg->machine.size_x, i / cfg->machine.size_x);
    for (uint64_t r = 0; r < m; r++) memcpy(mine + r * k, a + ((r + i) % m) * k, k * sizeof *mine);
    const chip_gemm_opts_t gopts = {.profile = cfg->profile, .profile_chip = i};
    if (chip_gemm_load(c, m, k, n, mine, b, &gopts, NULL, err, errlen)) goto out;
    if (2 * chip_cycle_bound(c) > limit) limit = 2 * chip_cycle_bound(c);
  }
  if (cfg->trace_path &&
      chip_trace(pod_chip(pod, cfg->trace_chip % cfg->machine.size_x, cfg->trace_chip / cfg->machine.size_x), cfg->trace_path, err,
                 errlen))
    goto out;
  char report[2048];
  if (pod_run(pod, CHIP_QMASK_EVERY_CORE, limit, &st->gemm_cycles, report, sizeof report)) {
    snprintf(err, errlen, "GEMM phase failed: %s", report);
    goto out;
  }
  if ((rc = io->products(io->ctx, &res, err, errlen)) != RT_OK) goto out;
  rc = RT_FAILED;
  for (unsigned i = 0; i < chips; i++) /* A and B are done with */
    if (chip_hbm_zero(pod_chip(pod, i % cfg->machine.size_x, i / cfg->machine.size_x), 0, res.c_addr)) goto out;
  /* phase 2: the all-reduce of the products, in place in HBM (the trace continues) */
  cli_note("step: all-reduce of %llu bytes per chip (%s)...", (unsigned long long)(4 * m * n),
          cfg->algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  pod_coll_stats_t cs;
  if ((rc = pod_coll_run(pod, &st->slice, &st->allreduce, res.c_addr, NULL, 0, &cs, err, errlen)) != RT_OK) goto out;
  st->allreduce_cycles = cs.cycles;
  for (unsigned i = 0; i < chips; i++) st->memory_bytes += chip_memory(pod_chip(pod, i % cfg->machine.size_x, i / cfg->machine.size_x));
  rc = io->sums(io->ctx, &res, err, errlen);
out:
  free(mine);
  pod_free(pod);
  return rc;
}
