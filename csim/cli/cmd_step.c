/*
 * cmd_step: `tpusim step`, a data-parallel training step in miniature on a pod of RTL chips:
 * parse, run the step job (job/step_job: the GEMMs and the all-reduce, both phases checked on
 * every chip against the golden models, measured), report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "job/step_job.h"
#include "chip/chip.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/stopwatch.h"

typedef struct {
  pod_step_config_t cfg;
  int algo;
  bool json, have_tchip;
  uint64_t seed;          /* the data's and the chips' reset randomisation */
  cmd_machine_t mach;
  cmd_profile_t prof;
  double seconds;         /* host time of the run and its checks */
  uint64_t memory_bytes;  /* the chips' memory pages at the end */
} step_opts_t;

static void step_help(void) {
  printf("usage: tpusim step [--pod XxY] [--mxu RxC] [--m M] [--k K] [--n N] [--algo ring|torus2d]\n"
         "                   [--link-latency L] [--seed S] [--clock-mhz F] [--trace-chip N --trace FILE.fst]\n"
         "                   [--machine FILE | --chip small|v2|v3] [--print-machine] [machine options]\n"
         "                   [--model rtl|fast|check] [--rtl-chips LIST] [--threads N] [--json]\n"
         "                   [--profile FILE.json] [--profile-chips LIST] [--op-profile] [--quiet]\n\n"
         "A data-parallel training step in miniature (defaults: a 4x4 pod of 16x16-MXU chips,\n"
         "M=K=N=128, torus2d): every chip multiplies its own A (MxK: one matrix with its rows\n"
         "turned by the chip's index, so no two chips hold the same data) by the same B (KxN),\n"
         "as data-parallel chips do, with the firmware GEMM from HBM, then the pod all-reduces\n"
         "the MxN fp32 results. Prints per-phase cycles, MXU utilisation, all-reduce bus\n"
         "bandwidth, host time and memory, and whether every chip's product and the sums agree\n"
         "with the golden models (progress on stderr).\n" CMD_MACHINE_HELP CMD_POD_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP);
}

static int parse(int argc, char **argv, step_opts_t *o) {
  *o = (step_opts_t){.algo = FW_COLL_TORUS2D, .seed = 1, .cfg = {.m = 128, .k = 128, .n = 128}};
  cmd_machine_init(&o->mach, 4, 4, 16, 16);
  pod_step_config_t *c = &o->cfg;
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, o->mach.pod, .min = 1, .max = POD_MAX_SIZE, .shape = "XxY", .given = &o->mach.pod_given),
      CLI_OPT("m", CLI_U64, &c->m, .min = 1, .max = 1u << 16),
      CLI_OPT("k", CLI_U64, &c->k, .min = 1, .max = 1u << 16),
      CLI_OPT("n", CLI_U64, &c->n, .min = 1, .max = 1u << 16),
      CLI_OPT("algo", CLI_CHOICE, &o->algo, .shape = "ring|torus2d"),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("trace-chip", CLI_UINT, &c->trace_chip, .min = 0, .max = 65535, .given = &o->have_tchip),
      CLI_OPT("trace", CLI_OUTPUT, &c->trace_path),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("step", argc, argv, opts, step_help);
  if (rc != CLI_EXIT_OK) return rc;
  c->algo = (fw_coll_algo_t)o->algo;
  if (o->have_tchip && !c->trace_path) return cli_usage_error("step", "--trace-chip needs --trace FILE.fst");
  rc = cmd_machine_resolve("step", &o->mach, CMD_POD, c->trace_path ? (long)c->trace_chip : -1);
  if (rc != CLI_EXIT_OK) return rc;
  c->machine = o->mach.machine.pod;
  c->machine.chip.seed = o->seed;
  if (c->trace_chip >= c->machine.size_x * c->machine.size_y)
    return cli_usage_error("step", "--trace-chip %u is outside the %ux%u pod", c->trace_chip, c->machine.size_x,
                           c->machine.size_y);
  return CLI_EXIT_OK;
}

static int report(step_opts_t *o, const step_job_result_t *res) {
  const pod_step_config_t *c = &o->cfg;
  const pod_step_stats_t *st = &res->stats;
  const golden_diff_t *gemm = &res->gemm;
  const coll_check_t *coll = &res->sums;
  const pod_coll_bw_t bw = res->allreduce_bw;
  report_t r;
  report_init(&r);
  report_u64(&r, "chips", c->machine.size_x * c->machine.size_y);
  report_u64(&r, "gemm_cycles", st->gemm_cycles);
  report_f64(&r, "mxu_utilization", res->mxu_utilization);
  report_u64(&r, "mxus", c->machine.chip.mxus ? c->machine.chip.mxus : 1);
  report_u64(&r, "cores", c->machine.chip.cores ? c->machine.chip.cores : 1);
  report_f64(&r, "peak_pflops", res->peak_flops / 1e15);
  report_f64(&r, "gemm_pflops", res->gemm_flops / 1e15);
  report_u64(&r, "allreduce_cycles", st->allreduce_cycles);
  report_u64(&r, "allreduce_bytes", res->allreduce_bytes);
  report_f64(&r, "busbw_GBps", bw.busbw);
  report_f64(&r, "busbw_fraction", bw.busbw / bw.bound);
  report_u64(&r, "total_cycles", res->total_cycles);
  report_f64(&r, "time_us", (double)res->total_cycles / c->machine.chip.clock_mhz);
  report_f64(&r, "sustained_pflops", res->sustained_flops / 1e15);
  report_bool(&r, "correct", res->correct);
  report_f64(&r, "sim_seconds", o->seconds);
  report_f64(&r, "chip_memory_MB", (double)o->memory_bytes / (1 << 20));
  report_f64(&r, "peak_rss_MB", (double)stopwatch_peak_rss() / (1 << 20));
  report_str(&r, "model", chip_model_name(c->machine.chip.model));
  report_text_u64(&r, "pod_w", c->machine.size_x);
  report_text_u64(&r, "pod_h", c->machine.size_y);
  report_text_u64(&r, "rows", c->machine.chip.rows);
  report_text_u64(&r, "cols", c->machine.chip.cols);
  report_text_u64(&r, "m", c->m);
  report_text_u64(&r, "k", c->k);
  report_text_u64(&r, "n", c->n);
  report_text_str(&r, "algo", c->algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  report_text_f64(&r, "bound", bw.bound);
  report_text_u64(&r, "clock_mhz", c->machine.chip.clock_mhz);
  report_line(&r, "data-parallel step on a {pod_w}x{pod_h} pod (chips of {cores} core(s) x {mxus} {rows}x{cols} MXU(s)), "
                  "peak {peak_pflops:%.1f} PFLOPS at {clock_mhz} MHz");
  report_line(&r, "  phase 1  GEMM {m}x{k}x{n} per chip   {gemm_cycles:%8u} cycles  MXU utilisation "
                  "{mxu_utilization*100:%.1f}%, {gemm_pflops:%.2f} PFLOPS");
  report_line(&r, "  phase 2  all-reduce ({algo}) {allreduce_bytes:%7u} B  {allreduce_cycles:%8u} cycles  busbw "
                  "{busbw_GBps:%.2f} GB/s ({busbw_fraction*100:%.1f}% of {bound:%.1f})");
  report_line(&r, "  total    {total_cycles} cycles, {time_us:%.1f} us at {clock_mhz} MHz, sustained "
                  "{sustained_pflops:%.2f} PFLOPS");
  report_line(&r, "  golden   {correct?every chip's products and sums agree on every bit|DISAGREES}");
  report_line(&r, "  host     {sim_seconds:%.1f} s ({model} model), chips' memories {chip_memory_MB:%.0f} MB, peak RSS "
                  "{peak_rss_MB:%.0f} MB");
  if (c->trace_path) {
    report_text_str(&r, "trace", c->trace_path);
    report_text_u64(&r, "trace_chip", c->trace_chip);
    report_line(&r, "  trace    {trace} (chip {trace_chip}): make view WAVE=step");
  }
  const int prc = cmd_profile_end("step", &o->prof, &r);
  if (prc != CLI_EXIT_OK) return prc;
  if (report_print(&r, o->json, stdout)) return cli_fail("step", "cannot write the report");
  if (gemm->mismatches)
    return cli_fail("step", "%zu products differ from the golden GEMM; the first: chip %u value %zu is 0x%08x, golden "
                    "0x%08x", gemm->mismatches, res->gemm_chip, gemm->first, gemm->got, gemm->want);
  if (coll->mismatches || coll->bound_violations)
    return cli_fail("step", "%" PRIu64 " sums differ from the golden all-reduce, %" PRIu64 " outside the float64 bound",
                    coll->mismatches, coll->bound_violations);
  return CLI_EXIT_OK;
}

int cmd_step(int argc, char **argv) {
  step_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) {
    cmd_machine_free(&o.mach);
    return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  }
  cmd_progress_t progress;
  cmd_progress_init(&progress, "step");
  o.cfg.machine.progress = cmd_progress;
  o.cfg.machine.progress_ctx = &progress;
  char err[4096];
  rt_status_t rs;
  step_job_config_t jc = {.run = o.cfg, .seed = o.seed};
  if (jc.run.trace_path) jc.run.trace_path = outfile_temp_fst(jc.run.trace_path); /* (renamed into place at the end) */
  step_job_t *j = step_job_new(&jc, &rs, err, sizeof err);
  if (!j) {
    rc = cmd_job_error("step", rs, err);
    goto out;
  }
  if ((rc = cmd_profile_check("step", &o.prof, o.cfg.machine.size_x, o.cfg.machine.size_y)) != CLI_EXIT_OK) goto out;
  if (cli_check_only()) {
    rc = cli_checked("step");
    goto out;
  }
  const pod_config_t *pc = &o.cfg.machine;
  rc = cmd_profile_begin("step", &o.prof, pc->size_x, pc->size_y, pc->chip.clock_mhz, pc->chip.rows, pc->chip.cols);
  if (rc != CLI_EXIT_OK) goto out;
  step_job_config(j)->run.profile = o.prof.prof;
  stopwatch_t w;
  stopwatch_start(&w);
  rs = step_job_run(j, err, sizeof err);
  o.seconds = stopwatch_seconds(&w);
  if (rs != RT_OK) {
    rc = cmd_job_error("step", rs, err);
    goto out;
  }
  o.memory_bytes = step_job_result(j)->stats.memory_bytes;
  rc = report(&o, step_job_result(j));
out:
  step_job_free(j);
  cmd_profile_free(&o.prof);
  cmd_machine_free(&o.mach);
  return rc;
}
