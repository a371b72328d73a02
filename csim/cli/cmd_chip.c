/*
 * cmd_chip: `tpusim chip`, the host cost of simulating a chip: host time per simulated
 * cycle for an idle chip, a chip running a GEMM, and chips moving data through their
 * routers (a 3x1 pod: one sending, one forwarding, one receiving).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "fw/hal.h"
#include "runtime/chip_gemm.h"
#include "system/chip.h"
#include "system/pod.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/rng.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void chip_help(void) {
  printf("usage: tpusim chip [--mxu RxC] [--cycles N] [--json]\n\n"
         "Measures the host time per simulated cycle of one chip (MXU RxC, default 16x16): idle,\n"
         "running a GEMM from HBM, and moving data through routers (a 3x1 pod, chip 0 sending\n"
         "to chip 2 through chip 1; reported per chip). --cycles sets the idle run (default\n"
         "200000). Sizes built: %s\n",
         chip_top_sizes());
}

int cmd_chip(int argc, char **argv) {
  static const struct option longopts[] = {{"mxu", required_argument, 0, 'm'}, {"cycles", required_argument, 0, 'c'},
                                           {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  unsigned r = 16, cl = 16;
  uint64_t cycles = 200000;
  bool json = false;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'm': {
        if (!cli_parse_dims("chip", "--mxu", "RxC", optarg, 1, 4096, &r, &cl)) return CLI_EXIT_USAGE;
        break;
      }
      case 'c':
        if (!cli_parse_u64("chip", "--cycles", optarg, 1, 1000000000, &cycles)) return CLI_EXIT_USAGE;
        break;
      case 'j': json = true; break;
      case 'h': chip_help(); return CLI_EXIT_OK;
      default: return cli_usage_error("chip", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("chip", "unexpected argument '%s'", argv[optind]);
  chip_geometry_t g;
  if (chip_top_geometry(r, cl, &g)) return cli_usage_error("chip", "no chip with a %ux%u MXU; built: %s", r, cl, chip_top_sizes());
  char err[512];
  chip_config_t cfg = chip_config_default(r, cl);
  cfg.hbm_bytes = 1u << 24;

  /* idle */
  chip_t *chip = chip_new(&cfg, err, sizeof err);
  if (!chip) return cli_fail("chip", "%s", err);
  double t0 = now_s();
  for (uint64_t i = 0; i < cycles; i++) chip_tick(chip);
  double idle_ns = 1e9 * (now_s() - t0) / (double)cycles;

  /* GEMM */
  const size_t m = 4 * r, k = 4 * r, n = 4 * cl;
  uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2);
  uint32_t *out = malloc(m * n * 4);
  if (!a || !b || !out) return cli_fail("chip", "out of memory");
  rng_t rng;
  rng_seed(&rng, 1);
  for (size_t i = 0; i < m * k; i++) a[i] = rng_bf16(&rng, -2, 1);
  for (size_t i = 0; i < k * n; i++) b[i] = rng_bf16(&rng, -2, 1);
  chip_gemm_stats_t st;
  t0 = now_s();
  if (chip_gemm(chip, m, k, n, a, b, out, NULL, &st, err, sizeof err)) return cli_fail("chip", "%s", err);
  double gemm_ns = 1e9 * (now_s() - t0) / (double)st.cycles;
  chip_free(chip);
  free(a), free(b), free(out);

  /* routers: 3x1 pod, chip 0 streams lines to chip 2 */
  pod_config_t pc = {3, 1, 0, cfg};
  pod_t *pod = pod_new(&pc, err, sizeof err);
  if (!pod) return cli_fail("chip", "%s", err);
  const unsigned lines = 2000;
  for (unsigned x = 0; x < 3; x++) {
    fw_prog_t p;
    fw_prog_init(&p);
    if (x == 0) {
      for (unsigned i = 0; i < 8; i++) fw_rdma(&p, 2, 0, 0, 0, lines, 1, 1, ISA_SEM_NONE, 0);
    } else if (x == 2) {
      fw_sem_wait(&p, 1, 8 * lines);
    }
    fw_halt(&p);
    if (chip_load_program(pod_chip(pod, x, 0), ISA_QUEUE_DMA, p.words, p.count, err, sizeof err))
      return cli_fail("chip", "%s", err);
    fw_prog_free(&p);
  }
  uint64_t pod_cycles;
  char report[1024];
  t0 = now_s();
  if (pod_run(pod, ISA_QMASK_DMA, 100000000, &pod_cycles, report, sizeof report)) return cli_fail("chip", "%s", report);
  double router_ns = 1e9 * (now_s() - t0) / (double)pod_cycles / 3.0;
  pod_free(pod);

  if (json) {
    json_t j;
    json_begin(&j, stdout);
    json_u64(&j, "mxu_rows", r);
    json_u64(&j, "mxu_cols", cl);
    json_f64(&j, "idle_ns_per_cycle", idle_ns);
    json_f64(&j, "gemm_ns_per_cycle", gemm_ns);
    json_u64(&j, "gemm_cycles", st.cycles);
    json_f64(&j, "router_ns_per_cycle", router_ns);
    json_u64(&j, "router_cycles", pod_cycles);
    json_end(&j);
  } else {
    printf("host time per simulated cycle, chip with a %ux%u MXU\n", r, cl);
    printf("  idle                     %8.0f ns\n", idle_ns);
    printf("  running a GEMM %zux%zux%zu  %8.0f ns  (%" PRIu64 " cycles)\n", m, k, n, gemm_ns, st.cycles);
    printf("  moving data (3x1 pod)    %8.0f ns per chip  (%" PRIu64 " cycles)\n", router_ns, pod_cycles);
  }
  return CLI_EXIT_OK;
}
