/*
 * cmd_step: `tpusim step`, a data-parallel training step in miniature on a pod of RTL chips
 * (what `make sim` runs): parse, run the GEMMs and the all-reduce (runtime/pod_step), check
 * both phases on every chip against the golden models (golden/gemm_golden, coll_golden),
 * report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "golden/coll_golden.h"
#include "golden/gemm_golden.h"
#include "runtime/pod_collective.h"
#include "runtime/pod_step.h"
#include "system/chip.h"
#include "util/cli.h"
#include "util/report.h"
#include "util/rng.h"

typedef struct {
  pod_step_config_t cfg;
  unsigned pod[2], mxu[2], clock_mhz;
  int algo;
  bool json, have_tchip;
  cmd_models_t models;
  bool *rtl_chips;  /* --rtl-chips, resolved */
} step_opts_t;

static void step_help(void) {
  printf("usage: tpusim step [--pod XxY] [--mxu RxC] [--m M] [--k K] [--n N] [--algo ring|torus2d]\n"
         "                   [--link-latency L] [--seed S] [--clock-mhz F] [--trace-chip N --trace FILE.fst]\n"
         "                   [--model rtl|fast|check] [--rtl-chips LIST] [--json]\n\n"
         "A data-parallel training step in miniature (defaults: a 4x4 pod of 16x16-MXU chips,\n"
         "M=K=N=128, torus2d): every chip multiplies its own A (MxK) by its own B (KxN) with the\n"
         "firmware GEMM from HBM, then the pod all-reduces the MxN fp32 results. Prints per-phase\n"
         "cycles, MXU utilisation, all-reduce bus bandwidth, and whether every chip's result\n"
         "agrees with the golden models.\n" CMD_MODEL_HELP CLI_EXIT_STATUS_HELP);
}

static int parse(int argc, char **argv, step_opts_t *o) {
  *o = (step_opts_t){.pod = {4, 4}, .mxu = {16, 16}, .clock_mhz = CHIP_DEFAULT_CLOCK_MHZ, .algo = FW_COLL_TORUS2D,
                     .cfg = {.m = 128, .k = 128, .n = 128, .seed = 1}};
  pod_step_config_t *c = &o->cfg;
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, o->pod, .min = 1, .max = 255, .shape = "XxY"),
      CLI_OPT("mxu", CLI_DIMS, o->mxu, .min = 1, .max = 4096, .shape = "RxC"),
      CLI_OPT("m", CLI_U64, &c->m, .min = 1, .max = 1u << 16),
      CLI_OPT("k", CLI_U64, &c->k, .min = 1, .max = 1u << 16),
      CLI_OPT("n", CLI_U64, &c->n, .min = 1, .max = 1u << 16),
      CLI_OPT("algo", CLI_CHOICE, &o->algo, .shape = "ring|torus2d"),
      CLI_OPT("link-latency", CLI_UINT, &c->link_latency, .min = 0, .max = 1000),
      CLI_OPT("seed", CLI_U64, &c->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("clock-mhz", CLI_UINT, &o->clock_mhz, .min = 1, .max = 100000),
      CLI_OPT("trace-chip", CLI_UINT, &c->trace_chip, .min = 0, .max = 65535, .given = &o->have_tchip),
      CLI_OPT("trace", CLI_OUTPUT, &c->trace_path),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_MODEL_OPTS(&o->models),
      {0}};
  int rc = cli_parse("step", argc, argv, opts, step_help);
  if (rc != CLI_EXIT_OK) return rc;
  c->pod_w = o->pod[0], c->pod_h = o->pod[1], c->mxu_rows = o->mxu[0], c->mxu_cols = o->mxu[1];
  c->algo = (fw_coll_algo_t)o->algo;
  if (o->have_tchip && !c->trace_path) return cli_usage_error("step", "--trace-chip needs --trace FILE.fst");
  if (c->trace_chip >= c->pod_w * c->pod_h)
    return cli_usage_error("step", "--trace-chip %u is outside the %ux%u pod", c->trace_chip, c->pod_w, c->pod_h);
  rc = cmd_models_resolve("step", &o->models, c->pod_w, c->pod_h, c->trace_path ? (long)c->trace_chip : -1,
                          &o->rtl_chips);
  if (rc != CLI_EXIT_OK) return rc;
  c->model = (chip_model_t)o->models.model;
  c->rtl_chips = o->rtl_chips;
  char err[4096];
  if (pod_step_check(c, err, sizeof err)) return cli_usage_error("step", "%s", err);
  return CLI_EXIT_OK;
}

/* Phase 1: every chip's product against the golden GEMM; phase 2: the sums against the
 * golden all-reduce of the golden products. want_prod gets the golden products. */
static int check(const step_opts_t *o, const pod_step_stats_t *st, const uint16_t *a, const uint16_t *b,
                 const uint32_t *prod, const uint32_t *sum, uint32_t *want_prod, golden_diff_t *gemm,
                 coll_check_t *coll) {
  const pod_step_config_t *c = &o->cfg;
  const uint64_t mk = c->m * c->k, kn = c->k * c->n, mn = c->m * c->n;
  const unsigned chips = c->pod_w * c->pod_h;
  for (unsigned i = 0; i < chips; i++)
    gemm_golden(c->mxu_rows, c->m, c->k, c->n, a + i * mk, b + i * kn, false, false, want_prod + i * mn);
  golden_compare(prod, want_prod, chips * mn, gemm);
  return coll_golden_check(&st->slice, &st->allreduce, c->mxu_cols, mn, want_prod, sum, coll);
}

static int report(const step_opts_t *o, const pod_step_stats_t *st, const golden_diff_t *gemm,
                  const coll_check_t *coll) {
  const pod_step_config_t *c = &o->cfg;
  const double mhz = o->clock_mhz, ideal = (double)c->m * c->k * c->n / ((double)c->mxu_rows * c->mxu_cols);
  const uint64_t bytes = 4 * c->m * c->n, total = st->gemm_cycles + st->allreduce_cycles;
  const pod_coll_bw_t bw = pod_coll_bandwidth(&st->slice, FW_COLL_ALLREDUCE, bytes, st->allreduce_cycles, mhz);
  const bool ok = gemm->mismatches == 0 && coll->mismatches == 0 && coll->bound_violations == 0;
  report_t r;
  report_init(&r);
  report_u64(&r, "chips", c->pod_w * c->pod_h);
  report_u64(&r, "gemm_cycles", st->gemm_cycles);
  report_f64(&r, "mxu_utilization", ideal / (double)st->gemm_cycles);
  report_u64(&r, "allreduce_cycles", st->allreduce_cycles);
  report_u64(&r, "allreduce_bytes", bytes);
  report_f64(&r, "busbw_GBps", bw.busbw);
  report_f64(&r, "busbw_fraction", bw.busbw / bw.bound);
  report_u64(&r, "total_cycles", total);
  report_f64(&r, "time_us", (double)total / mhz);
  report_bool(&r, "correct", ok);
  report_text_u64(&r, "pod_w", c->pod_w);
  report_text_u64(&r, "pod_h", c->pod_h);
  report_text_u64(&r, "rows", c->mxu_rows);
  report_text_u64(&r, "cols", c->mxu_cols);
  report_text_u64(&r, "m", c->m);
  report_text_u64(&r, "k", c->k);
  report_text_u64(&r, "n", c->n);
  report_text_str(&r, "algo", c->algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  report_text_f64(&r, "bound", bw.bound);
  report_text_u64(&r, "clock_mhz", o->clock_mhz);
  report_line(&r, "data-parallel step on a {pod_w}x{pod_h} pod ({rows}x{cols} MXUs)");
  report_line(&r, "  phase 1  GEMM {m}x{k}x{n} per chip   {gemm_cycles:%8u} cycles  MXU utilisation "
                  "{mxu_utilization*100:%.1f}%");
  report_line(&r, "  phase 2  all-reduce ({algo}) {allreduce_bytes:%7u} B  {allreduce_cycles:%8u} cycles  busbw "
                  "{busbw_GBps:%.2f} GB/s ({busbw_fraction*100:%.1f}% of {bound:%.1f})");
  report_line(&r, "  total    {total_cycles} cycles, {time_us:%.1f} us at {clock_mhz} MHz");
  report_line(&r, "  golden   {correct?every chip's products and sums agree on every bit|DISAGREES}");
  if (c->trace_path) {
    report_text_str(&r, "trace", c->trace_path);
    report_text_u64(&r, "trace_chip", c->trace_chip);
    report_line(&r, "  trace    {trace} (chip {trace_chip}): make view WAVE=step");
  }
  if (report_print(&r, o->json, stdout)) return cli_fail("step", "cannot write the report");
  if (gemm->mismatches)
    return cli_fail("step", "%zu products differ from the golden GEMM; the first: value %zu is 0x%08x, golden 0x%08x",
                    gemm->mismatches, gemm->first, gemm->got, gemm->want);
  if (coll->mismatches || coll->bound_violations)
    return cli_fail("step", "%" PRIu64 " sums differ from the golden all-reduce, %" PRIu64 " outside the float64 bound",
                    coll->mismatches, coll->bound_violations);
  return CLI_EXIT_OK;
}

int cmd_step(int argc, char **argv) {
  step_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) {
    free(o.rtl_chips);
    return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  }
  if (cli_check_only()) {
    free(o.rtl_chips);
    return cli_checked("step");
  }
  const pod_step_config_t *c = &o.cfg;
  const unsigned chips = c->pod_w * c->pod_h;
  const uint64_t mn = c->m * c->n;
  uint16_t *a = malloc(chips * c->m * c->k * 2), *b = malloc(chips * c->k * c->n * 2);
  uint32_t *prod = malloc(chips * mn * 4), *sum = malloc(chips * mn * 4), *want = malloc(chips * mn * 4);
  if (!a || !b || !prod || !sum || !want) {
    rc = cli_fail("step", "out of memory");
    goto out;
  }
  rng_t r;
  rng_seed(&r, c->seed);
  for (uint64_t i = 0; i < chips * c->m * c->k; i++) a[i] = rng_bf16(&r, -3, 1);
  for (uint64_t i = 0; i < chips * c->k * c->n; i++) b[i] = rng_bf16(&r, -3, 1);
  pod_step_stats_t st;
  char err[4096];
  rt_status_t run = pod_step_run(c, a, b, prod, sum, &st, err, sizeof err);
  if (run != RT_OK) {
    rc = run == RT_INVALID ? cli_usage_error("step", "%s", err) : cli_fail("step", "%s", err);
    cli_remove_output(c->trace_path);  /* the run did not finish */
    goto out;
  }
  golden_diff_t gemm;
  coll_check_t coll;
  if (check(&o, &st, a, b, prod, sum, want, &gemm, &coll)) {
    rc = cli_fail("step", "out of memory for the golden models");
    goto out;
  }
  rc = report(&o, &st, &gemm, &coll);
out:
  free(a), free(b), free(prod), free(sum), free(want);
  free(o.rtl_chips);
  return rc;
}
