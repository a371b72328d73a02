/*
 * cmd_collective: `tpusim collective`, a collective on a slice of a pod of RTL chips: parse,
 * run the collective job (job/coll_job: the firmware on every chip, every chip's result
 * checked against the golden model and the float64 bound, the nccl-tests bandwidth figures),
 * report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "job/coll_job.h"
#include "chip/chip.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/stopwatch.h"

typedef struct {
  pod_coll_config_t cfg;
  int op, algo;
  uint64_t bytes, seed;  /* seed: the inputs' and the chips' reset randomisation */
  bool json, have_slice, have_op, have_tchip, have_algo, have_root;
  double seconds;  /* host time of the run (staging, collective, check) */
  cmd_machine_t mach;
  cmd_profile_t prof;
} coll_opts_t;

static const char *const op_names = "allreduce|reduce_scatter|all_gather|broadcast|all_to_all";
static const char *const names[] = {"allreduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"};

static void coll_help(void) {
  printf("usage: tpusim collective --pod XxY [--slice X0,Y0,WxH] --op OP --bytes B [--algo ring|torus2d]\n"
         "                         [--root N] [--bf16-in] [--mxu RxC] [--chunk-lines N] [--link-latency L]\n"
         "                         [--seed S] [--model rtl|fast|check] [--rtl-chips LIST] [--threads N]\n"
         "                         [--machine FILE | --chip small|v2|v3] [--print-machine] [machine options]\n"
         "                         [--clock-mhz F] [--trace-chip N --trace FILE.fst] [--json]\n"
         "                         [--profile FILE.json] [--profile-chips LIST] [--op-profile] [--quiet]\n\n"
         "Runs a collective as firmware on every chip of a slice (default: the whole pod): remote\n"
         "DMA over the torus, reductions on the vector units, semaphores. OP: allreduce,\n"
         "reduce_scatter, all_gather, broadcast (from slice chip --root, default 0), all_to_all.\n"
         "B: bytes per chip (fp32 values, a multiple of 4; all_to_all: of 4 x chips), in VMEM;\n"
         "with --bf16-in (allreduce, reduce_scatter) the inputs are bf16 (B a multiple of 2),\n"
         "widened to fp32 on the chips, reduced and returned in fp32. ALGO: ring (default; bidirectional rings along X then Y) or torus2d (all-reduce:\n"
         "half the data X then Y, the other half Y then X). Every chip's result is checked\n"
         "bit-exact against the golden model. --algo is for the ops on rings (torus2d: allreduce\n"
         "only; none for broadcast and all_to_all); --root for broadcast only. docs/collectives.md\n"
         "has the algorithms and the bandwidth conventions (nccl-tests).\n" CMD_MACHINE_HELP CMD_POD_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP);
}

/* The options an op would not use are refused, not ignored (fw/collective.c: only the all-reduce
 * has a torus2d plan; a broadcast runs chains from its root and an all-to-all sends each block
 * straight to its chip, neither on rings). */
static int op_options_check(const coll_opts_t *o) {
  const fw_coll_op_t op = (fw_coll_op_t)o->op;
  if (o->have_root && op != FW_COLL_BROADCAST)
    return cli_usage_error("collective", "--root is the broadcast's source: --op %s has none", names[op]);
  if (o->have_algo && (op == FW_COLL_BROADCAST || op == FW_COLL_ALL_TO_ALL))
    return cli_usage_error("collective", "--algo: --op %s runs no rings (%s)", names[op],
                           op == FW_COLL_BROADCAST ? "chains from the root along X, then along Y"
                                                   : "each block goes straight to its chip");
  if (o->algo == FW_COLL_TORUS2D && op != FW_COLL_ALLREDUCE)
    return cli_usage_error("collective", "--algo torus2d is the all-reduce's: --op %s runs forward rings (--algo ring, "
                           "the default)", names[op]);
  return CLI_EXIT_OK;
}

static int parse(int argc, char **argv, coll_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
  cmd_machine_init(&o->mach, 1, 1, 16, 16);
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, o->mach.pod, .min = 1, .max = POD_MAX_SIZE, .shape = "XxY", .given = &o->mach.pod_given),
      CLI_OPT("slice", CLI_CUSTOM, &o->cfg.slice, .given = &o->have_slice, .parse = cmd_parse_slice),
      CLI_OPT("op", CLI_CHOICE, &o->op, .shape = op_names, .given = &o->have_op),
      CLI_OPT("bytes", CLI_U64, &o->bytes, .min = 1, .max = 1ull << 34),
      CLI_OPT("algo", CLI_CHOICE, &o->algo, .shape = "ring|torus2d", .given = &o->have_algo),
      CLI_OPT("chunk-lines", CLI_UINT, &o->cfg.args.chunk_lines, .min = 1, .max = 1u << 20),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("trace-chip", CLI_UINT, &o->cfg.trace_chip, .min = 0, .max = 65535, .given = &o->have_tchip),
      CLI_OPT("trace", CLI_OUTPUT, &o->cfg.trace_path),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CLI_OPT("bf16-in", CLI_FLAG, &o->cfg.args.bf16_in),
      CLI_OPT("root", CLI_UINT, &o->cfg.args.root, .min = 0, .max = 65535, .given = &o->have_root),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("collective", argc, argv, opts, coll_help);
  if (rc != CLI_EXIT_OK) return rc;
  pod_coll_config_t *cfg = &o->cfg;
  cfg->args.op = (fw_coll_op_t)o->op;
  cfg->args.algo = (fw_coll_algo_t)o->algo;
  /* (a machine file may give the pod) */
  if (!(o->mach.pod_given || o->mach.machine_path) || !o->have_op || !o->bytes)
    return cli_usage_error("collective", "--pod, --op and --bytes are required");
  if (o->have_tchip && !cfg->trace_path) return cli_usage_error("collective", "--trace-chip needs --trace FILE.fst");
  if ((rc = op_options_check(o)) != CLI_EXIT_OK) return rc;
  rc = cmd_machine_resolve("collective", &o->mach, CMD_POD, cfg->trace_path ? (long)cfg->trace_chip : -1);
  if (rc != CLI_EXIT_OK) return rc;
  cfg->machine = o->mach.machine.pod;
  cfg->machine.chip.seed = o->seed;
  const unsigned pod_w = cfg->machine.size_x, pod_h = cfg->machine.size_y;
  if (!o->have_slice) cfg->slice = (fw_slice_t){0, 0, pod_w, pod_h, 0, 0};
  if (cfg->trace_path && cfg->trace_chip >= pod_w * pod_h)
    return cli_usage_error("collective", "--trace-chip %u is outside the %ux%u pod", cfg->trace_chip, pod_w, pod_h);
  cfg->slice.pod_w = pod_w, cfg->slice.pod_h = pod_h;
  const unsigned esize = cfg->args.bf16_in ? 2 : 4;
  if (o->bytes % esize)
    return cli_usage_error("collective", "--bytes must be a multiple of %u (%s values), got %" PRIu64, esize,
                           cfg->args.bf16_in ? "bf16" : "fp32", o->bytes);
  cfg->elems = o->bytes / esize;
  return CLI_EXIT_OK;
}

static int report(coll_opts_t *o, const coll_job_result_t *res) {
  const fw_slice_t *s = &o->cfg.slice;
  const fw_coll_op_t op = o->cfg.args.op;
  const pod_coll_stats_t *st = &res->stats;
  const coll_check_t *chk = &res->check;
  const pod_coll_bw_t bw = res->bw;
  const bool reduction = op == FW_COLL_ALLREDUCE || op == FW_COLL_REDUCE_SCATTER;
  const bool correct = res->correct;
  report_t r;
  report_init(&r);
  report_u64(&r, "chips", s->w * s->h);
  report_u64(&r, "bytes", o->bytes);
  report_u64(&r, "lines", st->lines);
  report_u64(&r, "chunk_lines", st->chunk_lines);
  report_u64(&r, "cycles", st->cycles);
  report_f64(&r, "time_us", bw.time_s * 1e6);
  report_f64(&r, "algbw_GBps", bw.algbw);
  report_f64(&r, "busbw_GBps", bw.busbw);
  report_f64(&r, "link_GBps", bw.link);
  report_f64(&r, "busbw_bound_GBps", bw.bound);
  report_f64(&r, "busbw_fraction", bw.busbw / bw.bound);
  report_u64(&r, "link_flits", st->flits_sent);
  report_f64(&r, "max_rel_error_vs_float64", chk->max_rel_error);
  report_u64(&r, "float64_bound_violations", chk->bound_violations);
  report_u64(&r, "semaphores_left", st->sems_left);
  report_f64(&r, "sim_seconds", o->seconds);
  report_f64(&r, "chip_memory_MB", (double)st->memory_bytes / (1 << 20));
  report_f64(&r, "peak_rss_MB", (double)stopwatch_peak_rss() / (1 << 20));
  report_str(&r, "model", chip_model_name(o->cfg.machine.chip.model));
  report_u64(&r, "mismatches", chk->mismatches);
  report_bool(&r, "correct", correct);
  report_text_str(&r, "op", names[op]);
  report_text_u64(&r, "w", s->w);
  report_text_u64(&r, "h", s->h);
  report_text_u64(&r, "clock_mhz", o->cfg.machine.chip.clock_mhz);
  report_text_u64(&r, "links", bw.links);
  report_text_f64(&r, "float64_bound", chk->bound);
  report_text_bool(&r, "within_bound", chk->bound_violations == 0);
  report_line(&r, "{op} on a {w}x{h} slice, {bytes} bytes per chip");
  report_line(&r, "  cycles          {cycles}  ({time_us:%.2f} us at {clock_mhz} MHz)");
  report_line(&r, "  algbw           {algbw_GBps:%.3f} GB/s");
  if (op == FW_COLL_ALL_TO_ALL)
    report_line(&r, "  busbw           {busbw_GBps:%.3f} GB/s  ({busbw_fraction*100:%.1f}% of {busbw_bound_GBps:%.2f} "
                    "GB/s: {links} links of {link_GBps:%.2f} GB/s at the slice's mean hop count)");
  else
    report_line(&r, "  busbw           {busbw_GBps:%.3f} GB/s  ({busbw_fraction*100:%.1f}% of {busbw_bound_GBps:%.2f} "
                    "GB/s: {links} links of {link_GBps:%.2f} GB/s)");
  report_line(&r, "  golden model    {correct?agrees on every bit of every chip|DISAGREES}");
  report_line(&r, "  host            {sim_seconds:%.1f} s ({model} model), chips' memories {chip_memory_MB:%.0f} MB, peak "
                  "RSS {peak_rss_MB:%.0f} MB");
  if (reduction)
    report_line(&r, "  vs float64      max |err| / sum|x| = {max_rel_error_vs_float64:%.3g} (bound (n-1)u/(1-(n-1)u) = "
                    "{float64_bound:%.3g}: {within_bound?within|EXCEEDED})");
  const int prc = cmd_profile_end("collective", &o->prof, &r);
  if (prc != CLI_EXIT_OK) return prc;
  if (report_print(&r, o->json, stdout)) return cli_fail("collective", "cannot write the report");
  if (correct) return CLI_EXIT_OK;
  if (chk->mismatches)
    return cli_fail("collective", "%" PRIu64 " values differ from the golden model; the first: chip %u value %" PRIu64
                    " is 0x%08x, golden 0x%08x", chk->mismatches, chk->first_chip, chk->first_value, chk->got,
                    chk->want);
  if (chk->bound_violations)
    return cli_fail("collective", "%" PRIu64 " sums outside the float64 bound", chk->bound_violations);
  return cli_fail("collective", "%u semaphores left non-zero after the kernel", st->sems_left);
}

int cmd_collective(int argc, char **argv) {
  coll_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) {
    cmd_machine_free(&o.mach);
    return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  }
  cmd_progress_t progress;
  cmd_progress_init(&progress, "collective");
  o.cfg.machine.progress = cmd_progress;
  o.cfg.machine.progress_ctx = &progress;
  char err[4096];
  rt_status_t rs;
  /* the slice, the chip, the buffer in VMEM: checked before anything is allocated or written */
  coll_job_config_t jc = {.run = o.cfg, .seed = o.seed};
  if (jc.run.trace_path) jc.run.trace_path = outfile_temp_fst(jc.run.trace_path); /* (renamed into place at the end) */
  coll_job_t *j = coll_job_new(&jc, &rs, err, sizeof err);
  if (!j) {
    rc = cmd_job_error("collective", rs, err);
    goto out;
  }
  if ((rc = cmd_profile_check("collective", &o.prof, o.cfg.machine.size_x, o.cfg.machine.size_y)) != CLI_EXIT_OK)
    goto out;
  if (cli_check_only()) {
    rc = cli_checked("collective");
    goto out;
  }
  const pod_config_t *pc = &o.cfg.machine;
  rc = cmd_profile_begin("collective", &o.prof, pc->size_x, pc->size_y, pc->chip.clock_mhz, pc->chip.rows,
                         pc->chip.cols);
  if (rc != CLI_EXIT_OK) goto out;
  coll_job_config(j)->run.profile = o.prof.prof;
  cli_note("collective: %u chips, %" PRIu64 " bytes each, running...", o.cfg.slice.w * o.cfg.slice.h, o.bytes);
  stopwatch_t w;
  stopwatch_start(&w);
  rs = coll_job_run(j, err, sizeof err);
  o.seconds = stopwatch_seconds(&w);
  if (rs != RT_OK) {
    rc = cmd_job_error("collective", rs, err);
    goto out;
  }
  rc = report(&o, coll_job_result(j));
out:
  coll_job_free(j);
  cmd_profile_free(&o.prof);
  cmd_machine_free(&o.mach);
  return rc;
}
