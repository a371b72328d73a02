/*
 * cmd_randprog: `tpusim randprog`, random command programs on RTL chips or pods, each run
 * judged (verify/randprog_run.h): valid sets must halt and match a freshly reset pod bit
 * for bit and cycle for cycle, invalid ones stop where they must, mutated ones where the
 * golden command checker allows. Stops at the first set that does not (exit 1), with the
 * command line that reproduces it. With --profile, each set's run on the pod under test is a
 * phase of the profile ("set N (kind)"), and a set that fails still writes the trace: its
 * timeline is what one wants to look at.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "util/dist.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/stopwatch.h"
#include "verify/randprog.h"
#include "chip/chip.h"
#include "verify/randprog_run.h"
#include "vmodel/chip_top.h"

typedef struct {
  uint64_t count, seed, reset_seed;
  bool have_reset_seed;
  int kind;  /* a randprog_kind_t, or RANDPROG_KINDS for all of them in turn */
  bool print, json;
  const char *save_dir;
  cmd_machine_t mach;
  pod_config_t pod;    /* the machine's pod (its shape, model and threads are the bench's) */
  cmd_profile_t prof;  /* --profile, --op-profile, --profile-chips, --quiet */
} randprog_opts_t;

static void randprog_help(void) {
  printf("usage: tpusim randprog [--pod XxY] [--mxu RxC] [--mxus X] [--cores K] [--chip small|v2|v3] [--count N] [--seed S] [--reset-seed R]\n"
         "                       [--kind valid|invalid|mutated|all] [--model rtl|fast|check] [--threads N]\n"
         "                       [--print] [--save DIR] [--json] [--profile FILE.json] [--op-profile]\n"
         "                       [--profile-chips LIST] [--quiet] [--machine FILE] [--print-machine]\n\n"
         "Generates N random command-program sets (default 1000; the kinds in turn, or only\n"
         "--kind) for a pod of X x Y chips (default 1x1: a lone chip; MXU RxC, default 4x4)\n"
         "and runs each on the same pod, judging how it ended: a valid set halts, leaves every\n"
         "semaphore at zero and matches a freshly reset pod (other reset values) in results,\n"
         "and in cycles when it sends no RDMA (a quarter of them: the routers' arbiters keep\n"
         "state between programs); an invalid one stops with its error at its command; a\n"
         "mutated one ends where the golden command checker allows. Set n has seed S + n\n"
         "(default S = 1); --print lists each set's programs (not with --json); --save writes each (lone-chip) set to DIR as an input of the command-\n"
         "program fuzzer (tests/fuzz/fuzz_cmdprog.c). The pods' reset values come from R (default\n"
         "S). docs/robustness.md describes the programs. --model: the chips under test run the RTL\n"
         "(default), the fast model, or both in lockstep (check: every visible event compared every\n"
         "cycle; the reference pod then runs the fast model). --threads N: the pod under test's rows\n"
         "split into N bands run by threads (pod.h; at most Y). --mxus X: X MXUs per core (the\n"
         "RTL has RxCxX where built; the fast model any X up to 4); --cores K: K cores a chip (the\n"
         "programs are core 0's; the other core idles beside it); --chip: a preset (docs/fidelity.md).\n"
         "Sizes built: %s\n"
         "--profile: each set's run on the pod under test (its semaphore drain, loads and run; not the\n"
         "reference's) is a phase, \"set N (kind)\", on the trace's host-phases track and in the op\n"
         "profile; a set that fails still writes the trace and prints the op profile (exit 1).\n"
         CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP,
         chip_top_sizes());
}

static int parse(int argc, char **argv, randprog_opts_t *o) {
  *o = (randprog_opts_t){.count = 1000, .seed = 1, .kind = RANDPROG_KINDS};
  cmd_machine_init(&o->mach, 1, 1, 4, 4);
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, o->mach.pod, .min = 1, .max = 16, .shape = "XxY", .given = &o->mach.pod_given),
      CMD_MACHINE_OPTS(&o->mach),
      CMD_POD_OPTS(&o->mach),
      CLI_OPT("count", CLI_U64, &o->count, .min = 1, .max = 1000000000),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX / 2),
      CLI_OPT("reset-seed", CLI_U64, &o->reset_seed, .min = 0, .max = UINT64_MAX, .given = &o->have_reset_seed),
      CLI_OPT("kind", CLI_CHOICE, &o->kind, .shape = "valid|invalid|mutated|all"),
      CLI_OPT("print", CLI_FLAG, &o->print),
      CLI_OPT("save", CLI_STR, &o->save_dir),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_PROFILE_OPTS(&o->prof),
      {0}};
  int rc = cli_parse("randprog", argc, argv, opts, randprog_help);
  cli_set_quiet(o->prof.quiet);
  if (rc != CLI_EXIT_OK) return rc;
  if (!o->have_reset_seed) o->reset_seed = o->seed;
  if (o->print && o->json)
    return cli_usage_error("randprog", "--print lists the programs as text on stdout, where --json puts one JSON "
                           "object: give one of them");
  if (o->save_dir && !outfile_dir_ok("randprog", "--save", o->save_dir)) return CLI_EXIT_USAGE;
  const cmd_machine_t *m = &o->mach;
  if (m->flit_given)
    return cli_usage_error("randprog", "--flit-words: the random programs run on 64-bit flits (their reference is the "
                           "RTL's timing)");
  if (m->link_bytes_given || m->link_latency_given || m->hbm_bw_given || m->hbm_latency_given || m->rtl_chips)
    return cli_usage_error("randprog", "--link-bytes, --link-latency, --hbm-bw, --hbm-latency and --rtl-chips: the "
                           "bench's pods have the default links and HBM, every chip the one model");
  if ((rc = cmd_machine_resolve("randprog", &o->mach, CMD_POD, -1)) != CLI_EXIT_OK) return rc;
  o->pod = o->mach.machine.pod;
  o->pod.chip.flit_words = 1; /* (a preset's ICI is not the programs' subject) */
  if (o->pod.size_x > 16 || o->pod.size_y > 16)
    return cli_usage_error("randprog", "a pod of %ux%u: the bench takes up to 16x16", o->pod.size_x, o->pod.size_y);
  if (o->save_dir && (o->pod.size_x != 1 || o->pod.size_y != 1))
    return cli_usage_error("randprog", "--save writes lone-chip sets (the fuzzer's input): give --pod 1x1");
  if (o->save_dir && dist_active())
    return cli_usage_error("randprog", "--save under mpirun: every rank would write the same files; run without it");
  return CLI_EXIT_OK;
}

/* A lone chip's set as the command-program fuzzer reads it: the compute queue's command
 * count (a byte), its commands, then the DMA queue's commands (32 bytes each). */
static int save(const char *dir, const randprog_t *p) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s-%llu.bin", dir, randprog_kind_name(p->kind), (unsigned long long)p->seed);
  const fw_prog_t *c = &p->prog[0][ISA_QUEUE_COMPUTE], *d = &p->prog[0][ISA_QUEUE_DMA];
  if (c->count > 255) return -1;
  /* (claimed as it is made: the names come from the sets; the directory was checked first) */
  if (!outfile_claim("randprog", "--save", path)) return -1;
  FILE *f = outfile_open(path, "wb");
  if (!f) return -1;
  const uint8_t n = (uint8_t)c->count;
  bool ok = fwrite(&n, 1, 1, f) == 1 && fwrite(c->words, ISA_CMD_WORDS * 4, c->count, f) == c->count &&
            fwrite(d->words, ISA_CMD_WORDS * 4, d->count, f) == d->count;
  return outfile_close(f) || !ok ? -1 : 0;
}

static int report(randprog_opts_t *o, const randprog_stats_t *st, uint64_t sets, double secs) {
  report_t r;
  report_init(&r);
  report_u64(&r, "sets", sets);
  report_u64(&r, "valid", st->sets[RANDPROG_VALID]);
  report_u64(&r, "invalid", st->sets[RANDPROG_INVALID]);
  report_u64(&r, "mutated", st->sets[RANDPROG_MUTATED]);
  report_u64(&r, "halted", st->outcomes[RANDPROG_HALTED]);
  report_u64(&r, "stopped", st->outcomes[RANDPROG_STOPPED]);
  report_u64(&r, "timed_out", st->outcomes[RANDPROG_TIMED_OUT]);
  report_u64(&r, "drains", st->drains);
  report_u64(&r, "cycle_checked", st->cycle_checked);
  report_u64(&r, "commands", st->commands);
  report_u64(&r, "cycles", st->cycles);
  report_f64(&r, "sim_seconds", secs);
  report_f64(&r, "sets_per_minute", secs > 0 ? 60.0 * (double)sets / secs : 0.0);
  report_object(&r, "queue_errors");
  for (unsigned e = 1; e < 16; e++)
    if (isa_error_name(e)) {
      char key[16];
      snprintf(key, sizeof key, "e%u", e);
      report_u64(&r, key, st->errors[e]);
    }
  report_object_end(&r);
  report_text_u64(&r, "pod_x", o->pod.size_x);
  report_text_u64(&r, "pod_y", o->pod.size_y);
  report_text_u64(&r, "rows", o->pod.chip.rows);
  report_text_u64(&r, "cols", o->pod.chip.cols);
  report_u64(&r, "mxus", o->pod.chip.mxus);
  report_line(&r, "random programs on a {pod_x}x{pod_y} pod of {rows}x{cols} chips ({mxus} MXU(s) per core): {sets} sets, "
                  "every one as judged");
  report_line(&r, "  kinds           {valid} valid ({cycle_checked} without RDMA, held to the reference's cycles), "
                  "{invalid} invalid, {mutated} mutated");
  report_line(&r, "  ends            {halted} halted, {stopped} stopped with an error, {timed_out} timed out "
                  "({drains} semaphore drains after)");
  report_line(&r, "  queue errors    1:{queue_errors.e1} 2:{queue_errors.e2} 3:{queue_errors.e3} 4:{queue_errors.e4} "
                  "5:{queue_errors.e5} 6:{queue_errors.e6} 7:{queue_errors.e7} 8:{queue_errors.e8} "
                  "9:{queue_errors.e9} 10:{queue_errors.e10} 11:{queue_errors.e11}");
  report_line(&r, "  simulated       {commands} commands, {cycles} cycles");
  report_line(&r, "  rate            {sets_per_minute:%.0f} sets per minute ({sim_seconds:%.1f} s)");
  const int prc = cmd_profile_end("randprog", &o->prof, &r);
  if (prc != CLI_EXIT_OK) return prc;
  return report_print(&r, o->json, stdout) ? cli_fail("randprog", "cannot write the report") : CLI_EXIT_OK;
}

int cmd_randprog(int argc, char **argv) {
  randprog_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  /* (before anything runs: a --profile-chips outside the pod is bad usage) */
  if ((rc = cmd_profile_begin("randprog", &o.prof, o.pod.size_x, o.pod.size_y, o.pod.chip.clock_mhz, o.pod.chip.rows, o.pod.chip.cols)) != CLI_EXIT_OK)
    return rc;
  if (cli_check_only()) {
    cmd_profile_free(&o.prof);
    return cli_checked("randprog");
  }
  char err[512], why[2048];
  randprog_bench_t *b = randprog_bench_new(o.pod.size_x, o.pod.size_y, o.pod.chip.rows, o.pod.chip.cols, o.pod.chip.mxus, o.pod.chip.cores, o.reset_seed,
                                           o.pod.chip.model, o.pod.threads, err, sizeof err);
  if (!b) {
    cmd_profile_free(&o.prof);
    return cli_usage_error("randprog", "%s", err);
  }
  randprog_bench_profile(b, o.prof.prof);
  bool judged = false;  /* a set ran and failed its judgement */
  randprog_stats_t st = {0};
  stopwatch_t w;
  stopwatch_start(&w);
  ticker_t ticker;
  ticker_init(&ticker, 2.0);
  uint64_t n = 0;
  for (; n < o.count; n++) {
    const randprog_kind_t kind = o.kind == RANDPROG_KINDS ? (randprog_kind_t)(n % RANDPROG_KINDS) : (randprog_kind_t)o.kind;
    randprog_t p;
    if (randprog_generate(randprog_bench_target(b), kind, o.seed + n, &p, err, sizeof err)) {
      rc = cli_fail("randprog", "%s", err);
      break;
    }
    if (o.print) randprog_print(stdout, &p);
    if (o.save_dir && save(o.save_dir, &p)) {
      rc = cli_fail("randprog", "cannot write a set into '%s'", o.save_dir);
      randprog_free(&p);
      break;
    }
    if (o.prof.prof) { /* each set's run a phase of its own */
      char phase[64];
      snprintf(phase, sizeof phase, "set %" PRIu64 " (%s)", n, randprog_kind_name(kind));
      randprog_bench_phase(b, phase);
    }
    if (randprog_bench_run(b, &p, &st, why, sizeof why)) {
      judged = true;
      rc = cli_fail("randprog", "set %" PRIu64 " (%s, seed %" PRIu64 "%s%s): %s\n  reproduce: tpusim randprog --pod "
                    "%ux%u --mxu %ux%u --model %s --seed %" PRIu64 " --reset-seed %" PRIu64 " --count %" PRIu64 "%s%s",
                    n, randprog_kind_name(kind), o.seed + n, p.what[0] ? ", " : "", p.what, why, o.pod.size_x, o.pod.size_y,
                    o.pod.chip.rows, o.pod.chip.cols, chip_model_name(o.pod.chip.model), o.seed, o.reset_seed, n + 1, o.kind == RANDPROG_KINDS ? "" : " --kind ",
                    o.kind == RANDPROG_KINDS ? "" : randprog_kind_name(kind));
      randprog_free(&p);
      break;
    }
    randprog_free(&p);
    if (ticker_due(&ticker))
      cli_progress("randprog: %" PRIu64 " of %" PRIu64 " sets, %.0f per minute", n + 1, o.count,
                   60.0 * (double)(n + 1) / stopwatch_seconds(&w));
  }
  const double secs = stopwatch_seconds(&w);
  randprog_bench_free(b);
  if (rc != CLI_EXIT_OK) {
    /* the failing set's timeline is the profile's point: the trace and the report of the sets
     * run, the failing one included; the exit status stays the failure's */
    if (judged && o.prof.prof) report(&o, &st, n + 1, secs);
    cmd_profile_free(&o.prof);
    return rc;
  }
  rc = report(&o, &st, n, secs);
  cmd_profile_free(&o.prof);
  return rc;
}
