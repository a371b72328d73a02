/*
 * cmd_step: `tpusim step`, a data-parallel training step in miniature on a pod of RTL
 * chips (what `make sim` runs). Phase 1: every chip runs the firmware GEMM on its own
 * data from its HBM (its forward/backward matmul). Phase 2: the pod all-reduces the
 * results (the gradient sum) with the collective firmware. Both phases are checked
 * bit-exact against the golden models on every chip.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "golden/coll_golden.h"
#include "golden/mxu_golden.h"
#include "runtime/chip_gemm.h"
#include "runtime/pod_collective.h"
#include "system/pod.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/rng.h"

static void step_help(void) {
  printf("usage: tpusim step [--pod XxY] [--mxu RxC] [--m M] [--k K] [--n N] [--algo ring|torus2d]\n"
         "                   [--link-latency L] [--seed S] [--clock-mhz F] [--trace-chip N --trace FILE.fst]\n"
         "                   [--json]\n\n"
         "A data-parallel training step in miniature (defaults: a 4x4 pod of 16x16-MXU chips,\n"
         "M=K=N=128, torus2d): every chip multiplies its own A (MxK) by its own B (KxN) with the\n"
         "firmware GEMM from HBM, then the pod all-reduces the MxN fp32 results. Prints per-phase\n"
         "cycles, MXU utilisation, all-reduce bus bandwidth, and whether every chip's result\n"
         "agrees with the golden models.\n");
}

int cmd_step(int argc, char **argv) {
  enum { O_POD = 1, O_MXU, O_M, O_K, O_N, O_ALGO, O_LINK, O_SEED, O_CLOCK, O_TCHIP, O_TRACE, O_JSON, O_HELP };
  static const struct option longopts[] = {
      {"pod", required_argument, 0, O_POD},   {"mxu", required_argument, 0, O_MXU},
      {"m", required_argument, 0, O_M},       {"k", required_argument, 0, O_K},
      {"n", required_argument, 0, O_N},       {"algo", required_argument, 0, O_ALGO},
      {"link-latency", required_argument, 0, O_LINK}, {"seed", required_argument, 0, O_SEED},
      {"clock-mhz", required_argument, 0, O_CLOCK}, {"trace-chip", required_argument, 0, O_TCHIP},
      {"trace", required_argument, 0, O_TRACE}, {"json", no_argument, 0, O_JSON},
      {"help", no_argument, 0, O_HELP},       {0, 0, 0, 0}};
  unsigned pw = 4, ph = 4, R = 16, C = 16, link = 0, tchip = 0;
  uint64_t m = 128, k = 128, n = 128, seed = 1, v, clock = CHIP_DEFAULT_CLOCK_MHZ;
  fw_coll_algo_t algo = FW_COLL_TORUS2D;
  const char *trace = NULL;
  bool json = false, have_tchip = false;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case O_POD:
        if (!cli_parse_dims("step", "--pod", "XxY", optarg, 1, 255, &pw, &ph)) return CLI_EXIT_USAGE;
        break;
      case O_MXU:
        if (!cli_parse_dims("step", "--mxu", "RxC", optarg, 1, 4096, &R, &C)) return CLI_EXIT_USAGE;
        break;
      case O_M: if (!cli_parse_u64("step", "--m", optarg, 1, 1u << 16, &m)) return CLI_EXIT_USAGE; break;
      case O_K: if (!cli_parse_u64("step", "--k", optarg, 1, 1u << 16, &k)) return CLI_EXIT_USAGE; break;
      case O_N: if (!cli_parse_u64("step", "--n", optarg, 1, 1u << 16, &n)) return CLI_EXIT_USAGE; break;
      case O_ALGO:
        if (!strcmp(optarg, "ring")) algo = FW_COLL_RING;
        else if (!strcmp(optarg, "torus2d")) algo = FW_COLL_TORUS2D;
        else return cli_usage_error("step", "unknown --algo '%s' (ring, torus2d)", optarg);
        break;
      case O_LINK: if (!cli_parse_u64("step", "--link-latency", optarg, 0, 1000, &v)) return CLI_EXIT_USAGE; link = (unsigned)v; break;
      case O_SEED: if (!cli_parse_u64("step", "--seed", optarg, 0, UINT64_MAX, &seed)) return CLI_EXIT_USAGE; break;
      case O_CLOCK: if (!cli_parse_u64("step", "--clock-mhz", optarg, 1, 100000, &clock)) return CLI_EXIT_USAGE; break;
      case O_TCHIP:
        if (!cli_parse_u64("step", "--trace-chip", optarg, 0, 65535, &v)) return CLI_EXIT_USAGE;
        tchip = (unsigned)v, have_tchip = true;
        break;
      case O_TRACE: trace = optarg; break;
      case O_JSON: json = true; break;
      case O_HELP: step_help(); return CLI_EXIT_OK;
      default: return cli_usage_error("step", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("step", "unexpected argument '%s'", argv[optind]);
  if (have_tchip && !trace) return cli_usage_error("step", "--trace-chip needs --trace FILE.fst");
  if (tchip >= pw * ph) return cli_usage_error("step", "--trace-chip %u is outside the %ux%u pod", tchip, pw, ph);
  chip_geometry_t g;
  if (chip_top_geometry(R, C, &g)) return cli_usage_error("step", "no chip with a %ux%u MXU; built: %s", R, C, chip_top_sizes());
  char err[4096];
  if (chip_gemm_check(&g, m, k, n, err, sizeof err)) return cli_usage_error("step", "%s", err);
  const unsigned chips = pw * ph;
  fw_slice_t s = {0, 0, pw, ph, pw, ph};
  fw_coll_args_t ca = {FW_COLL_ALLREDUCE, algo, 0, (uint32_t)((m * n + C - 1) / C), 0, 0, false};
  pod_coll_default_chunk(&s, &ca, g.vmem_lines);
  if (fw_coll_check(&g, &s, &ca, err, sizeof err)) return cli_usage_error("step", "%s", err);
  if ((m * n) % C) return cli_usage_error("step", "M x N (%" PRIu64 ") must fill whole VMEM lines of %u values", m * n, C);

  uint16_t *a = malloc(chips * m * k * 2), *b = malloc(chips * k * n * 2);
  uint32_t *prod = malloc(chips * m * n * 4), *want_prod = malloc(chips * m * n * 4), *want = malloc(chips * m * n * 4);
  if (!a || !b || !prod || !want_prod || !want) return cli_fail("step", "out of memory");
  rng_t r;
  rng_seed(&r, seed);
  for (uint64_t i = 0; i < chips * m * k; i++) a[i] = rng_bf16(&r, -3, 1);
  for (uint64_t i = 0; i < chips * k * n; i++) b[i] = rng_bf16(&r, -3, 1);

  pod_config_t pc = {pw, ph, link, chip_config_default(R, C)};
  pc.chip.seed = seed;
  pc.chip.hbm_bytes = chip_gemm_hbm_bytes(C, m, k, n);
  pod_t *pod = pod_new(&pc, err, sizeof err);
  if (!pod) return cli_fail("step", "%s", err);
  int rc = CLI_EXIT_FAIL;
  /* phase 1: the GEMMs */
  fprintf(stderr, "step: %u chips, GEMM %" PRIu64 "x%" PRIu64 "x%" PRIu64 " each...\n", chips, m, k, n);
  for (unsigned i = 0; i < chips; i++)
    if (chip_gemm_load(pod_chip(pod, i % pw, i / pw), m, k, n, a + i * m * k, b + i * k * n, NULL, NULL, err,
                       sizeof err))
      goto fail;
  if (trace && chip_trace(pod_chip(pod, tchip % pw, tchip / pw), trace, err, sizeof err)) goto fail;
  uint64_t gemm_cycles, coll_cycles;
  char report[2048];
  if (pod_run(pod, ISA_QMASK_ALL, 10000000, &gemm_cycles, report, sizeof report)) {
    snprintf(err, sizeof err, "GEMM phase failed: %s", report);
    goto fail;
  }
  uint64_t mismatch_gemm = 0, mismatch_sum = 0;
  for (unsigned i = 0; i < chips; i++) {
    if (chip_gemm_read(pod_chip(pod, i % pw, i / pw), m, k, n, false, prod + i * m * n)) goto fail;
    mxu_golden_gemm(R, m, k, n, a + i * m * k, b + i * k * n, want_prod + i * m * n);
    for (uint64_t e = 0; e < m * n; e++) mismatch_gemm += prod[i * m * n + e] != want_prod[i * m * n + e];
  }
  /* phase 2: the all-reduce of the products, in place in HBM (the trace continues) */
  fprintf(stderr, "step: all-reduce of %" PRIu64 " bytes per chip (%s)...\n", 4 * m * n,
          algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  pod_coll_stats_t cs;
  if (pod_coll_run(pod, &s, &ca, chip_gemm_c_addr(C, m, k, n), NULL, 0, &cs, err, sizeof err)) goto fail;
  coll_cycles = cs.cycles;
  for (unsigned i = 0; i < chips; i++)
    if (chip_gemm_read(pod_chip(pod, i % pw, i / pw), m, k, n, false, prod + i * m * n)) goto fail;
  coll_golden(&s, &ca, C, want_prod, want);
  for (uint64_t e = 0; e < chips * m * n; e++) mismatch_sum += prod[e] != want[e];
  {
    const double mhz = (double)clock, ideal = (double)m * k * n / ((double)R * C);
    const double util = ideal / (double)gemm_cycles;
    const pod_coll_bw_t bw = pod_coll_bandwidth(&s, FW_COLL_ALLREDUCE, 4 * m * n, coll_cycles, mhz);
    const double busbw = bw.busbw, bound = bw.bound;
    const bool ok = mismatch_gemm == 0 && mismatch_sum == 0;
    if (json) {
      json_t j;
      json_begin(&j, stdout);
      json_u64(&j, "chips", chips);
      json_u64(&j, "gemm_cycles", gemm_cycles);
      json_f64(&j, "mxu_utilization", util);
      json_u64(&j, "allreduce_cycles", coll_cycles);
      json_u64(&j, "allreduce_bytes", 4 * m * n);
      json_f64(&j, "busbw_GBps", busbw);
      json_f64(&j, "busbw_fraction", busbw / bound);
      json_u64(&j, "total_cycles", gemm_cycles + coll_cycles);
      json_f64(&j, "time_us", (double)(gemm_cycles + coll_cycles) / mhz);
      json_bool(&j, "correct", ok);
      json_end(&j);
    } else {
      printf("data-parallel step on a %ux%u pod (%ux%u MXUs)\n", pw, ph, R, C);
      printf("  phase 1  GEMM %" PRIu64 "x%" PRIu64 "x%" PRIu64 " per chip   %8" PRIu64 " cycles  MXU utilisation %.1f%%\n",
             m, k, n, gemm_cycles, 100 * util);
      printf("  phase 2  all-reduce (%s) %7" PRIu64 " B  %8" PRIu64 " cycles  busbw %.2f GB/s (%.1f%% of %.1f)\n",
             algo == FW_COLL_TORUS2D ? "torus2d" : "ring", 4 * m * n, coll_cycles, busbw, 100 * busbw / bound, bound);
      printf("  total    %" PRIu64 " cycles, %.1f us at %" PRIu64 " MHz\n", gemm_cycles + coll_cycles,
             (double)(gemm_cycles + coll_cycles) / mhz, clock);
      printf("  golden   %s\n", ok ? "every chip's products and sums agree on every bit"
                                     : "DISAGREES");
      if (trace) printf("  trace    %s (chip %u): make view WAVE=step\n", trace, tchip);
    }
    rc = ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  }
  goto out;
fail:
  fprintf(stderr, "tpusim step: error: %s\n", err);
out:
  pod_free(pod);
  free(a), free(b), free(prod), free(want_prod), free(want);
  return rc;
}
