/*
 * cmd_collective: `tpusim collective`, a collective on a slice of a pod of RTL chips
 * (pod_collective, fw/collective.c), checked bit-exact on every chip against the golden
 * model, with nccl-tests bandwidth figures.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "golden/coll_golden.h"
#include "runtime/pod_collective.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/rng.h"
#include "vmodel/chip_top.h"

static void coll_help(void) {
  printf("usage: tpusim collective --pod XxY [--slice X0,Y0,WxH] --op OP --bytes B [--algo ring|torus2d]\n"
         "                         [--root N] [--bf16-in] [--mxu RxC] [--chunk-lines N] [--link-latency L]\n"
         "                         [--seed S]\n"
         "                         [--clock-mhz F] [--trace-chip N --trace FILE.fst] [--json]\n\n"
         "Runs a collective as firmware on every chip of a slice (default: the whole pod): remote\n"
         "DMA over the torus, reductions on the vector units, semaphores. OP: allreduce,\n"
         "reduce_scatter, all_gather, broadcast (from slice chip --root, default 0), all_to_all.\n"
         "B: bytes per chip (fp32 values, a multiple of 4; all_to_all: of 4 x chips), in VMEM;\n"
         "with --bf16-in (allreduce, reduce_scatter) the inputs are bf16 (B a multiple of 2),\n"
         "widened to fp32 on the chips, reduced and returned in fp32. ALGO: ring (default; bidirectional rings along X then Y) or torus2d (all-reduce:\n"
         "half the data X then Y, the other half Y then X). Every chip's result is checked\n"
         "bit-exact against the golden model. docs/collectives.md has the algorithms and the\n"
         "bandwidth conventions (nccl-tests).\n");
}

int cmd_collective(int argc, char **argv) {
  enum { O_POD = 1, O_SLICE, O_OP, O_BYTES, O_ALGO, O_MXU, O_CHUNK, O_LINK, O_SEED, O_CLOCK, O_TCHIP, O_TRACE,
         O_JSON, O_ROOT, O_BF16, O_HELP };
  static const struct option longopts[] = {
      {"pod", required_argument, 0, O_POD},         {"slice", required_argument, 0, O_SLICE},
      {"op", required_argument, 0, O_OP},           {"bytes", required_argument, 0, O_BYTES},
      {"algo", required_argument, 0, O_ALGO},       {"mxu", required_argument, 0, O_MXU},
      {"chunk-lines", required_argument, 0, O_CHUNK}, {"link-latency", required_argument, 0, O_LINK},
      {"seed", required_argument, 0, O_SEED},       {"clock-mhz", required_argument, 0, O_CLOCK},
      {"trace-chip", required_argument, 0, O_TCHIP}, {"trace", required_argument, 0, O_TRACE},
      {"json", no_argument, 0, O_JSON},             {"help", no_argument, 0, O_HELP},
      {"root", required_argument, 0, O_ROOT},       {"bf16-in", no_argument, 0, O_BF16},
      {0, 0, 0, 0}};
  pod_coll_config_t cfg = {0};
  cfg.mxu_rows = cfg.mxu_cols = 16;
  cfg.seed = 1;
  uint64_t bytes = 0, v;
  double clock_mhz = CHIP_DEFAULT_CLOCK_MHZ;
  bool json = false, have_pod = false, have_slice = false, have_op = false, have_tchip = false;
  char tail;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case O_POD:
        if (!cli_parse_dims("collective", "--pod", "XxY", optarg, 1, 255, &cfg.pod_w, &cfg.pod_h))
          return CLI_EXIT_USAGE;
        have_pod = true;
        break;
      case O_SLICE:
        if (sscanf(optarg, "%u,%u,%ux%u%c", &cfg.slice.x0, &cfg.slice.y0, &cfg.slice.w, &cfg.slice.h, &tail) != 4)
          return cli_usage_error("collective", "--slice expects X0,Y0,WxH, got '%s'", optarg);
        have_slice = true;
        break;
      case O_OP:
        if (!strcmp(optarg, "allreduce")) cfg.args.op = FW_COLL_ALLREDUCE;
        else if (!strcmp(optarg, "reduce_scatter")) cfg.args.op = FW_COLL_REDUCE_SCATTER;
        else if (!strcmp(optarg, "all_gather")) cfg.args.op = FW_COLL_ALL_GATHER;
        else if (!strcmp(optarg, "broadcast")) cfg.args.op = FW_COLL_BROADCAST;
        else if (!strcmp(optarg, "all_to_all")) cfg.args.op = FW_COLL_ALL_TO_ALL;
        else return cli_usage_error("collective", "unknown --op '%s' (allreduce, reduce_scatter, all_gather, "
                                    "broadcast, all_to_all)", optarg);
        have_op = true;
        break;
      case O_BYTES:
        if (!cli_parse_u64("collective", "--bytes", optarg, 1, 1ull << 34, &bytes)) return CLI_EXIT_USAGE;
        break;
      case O_ALGO:
        if (!strcmp(optarg, "ring")) cfg.args.algo = FW_COLL_RING;
        else if (!strcmp(optarg, "torus2d")) cfg.args.algo = FW_COLL_TORUS2D;
        else return cli_usage_error("collective", "unknown --algo '%s' (ring, torus2d)", optarg);
        break;
      case O_MXU:
        if (!cli_parse_dims("collective", "--mxu", "RxC", optarg, 1, 4096, &cfg.mxu_rows, &cfg.mxu_cols))
          return CLI_EXIT_USAGE;
        break;
      case O_CHUNK:
        if (!cli_parse_u64("collective", "--chunk-lines", optarg, 1, 1u << 20, &v)) return CLI_EXIT_USAGE;
        cfg.args.chunk_lines = (uint32_t)v;
        break;
      case O_LINK:
        if (!cli_parse_u64("collective", "--link-latency", optarg, 0, 1000, &v)) return CLI_EXIT_USAGE;
        cfg.link_latency = (unsigned)v;
        break;
      case O_SEED:
        if (!cli_parse_u64("collective", "--seed", optarg, 0, UINT64_MAX, &cfg.seed)) return CLI_EXIT_USAGE;
        break;
      case O_CLOCK:
        if (!cli_parse_u64("collective", "--clock-mhz", optarg, 1, 100000, &v)) return CLI_EXIT_USAGE;
        clock_mhz = (double)v;
        break;
      case O_TCHIP:
        if (!cli_parse_u64("collective", "--trace-chip", optarg, 0, 65535, &v)) return CLI_EXIT_USAGE;
        cfg.trace_chip = (unsigned)v;
        have_tchip = true;
        break;
      case O_TRACE: cfg.trace_path = optarg; break;
      case O_JSON: json = true; break;
      case O_BF16: cfg.args.bf16_in = true; break;
      case O_ROOT:
        if (!cli_parse_u64("collective", "--root", optarg, 0, 65535, &v)) return CLI_EXIT_USAGE;
        cfg.args.root = (unsigned)v;
        break;
      case O_HELP: coll_help(); return CLI_EXIT_OK;
      default: return cli_usage_error("collective", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("collective", "unexpected argument '%s'", argv[optind]);
  if (!have_pod || !have_op || !bytes) return cli_usage_error("collective", "--pod, --op and --bytes are required");
  if (!have_slice) cfg.slice = (fw_slice_t){0, 0, cfg.pod_w, cfg.pod_h, 0, 0};
  if (have_tchip && !cfg.trace_path) return cli_usage_error("collective", "--trace-chip needs --trace FILE.fst");
  if (cfg.trace_path && cfg.trace_chip >= cfg.pod_w * cfg.pod_h)
    return cli_usage_error("collective", "--trace-chip %u is outside the %ux%u pod", cfg.trace_chip, cfg.pod_w,
                           cfg.pod_h);
  fw_slice_t s = cfg.slice;
  s.pod_w = cfg.pod_w, s.pod_h = cfg.pod_h;
  if (s.w == 0 || s.h == 0 || s.x0 + s.w > s.pod_w || s.y0 + s.h > s.pod_h)
    return cli_usage_error("collective", "slice %u,%u,%ux%u is empty or outside the %ux%u pod", s.x0, s.y0, s.w, s.h,
                           s.pod_w, s.pod_h);
  const unsigned esize = cfg.args.bf16_in ? 2 : 4;
  if (bytes % esize)
    return cli_usage_error("collective", "--bytes must be a multiple of %u (%s values), got %" PRIu64, esize,
                           cfg.args.bf16_in ? "bf16" : "fp32", bytes);
  cfg.elems = bytes / esize;
  const unsigned chips = s.w * s.h, lanes = cfg.mxu_cols;
  const uint64_t lines = (cfg.elems + lanes - 1) / lanes;
  chip_geometry_t geo;
  if (chip_top_geometry(cfg.mxu_rows, cfg.mxu_cols, &geo))
    return cli_usage_error("collective", "no chip with a %ux%u MXU; built: %s", cfg.mxu_rows, cfg.mxu_cols,
                           chip_top_sizes());
  if (lines >= geo.vmem_lines)  /* checked before the host buffers are allocated */
    return cli_usage_error("collective", "%" PRIu64 " bytes per chip do not fit VMEM (%u lines of %u bytes)", bytes,
                           geo.vmem_lines, 4 * lanes);
  uint32_t *in = calloc(chips * lines * lanes, 4), *want = calloc(chips * lines * lanes, 4);
  uint32_t *dev_in = calloc(chips * cfg.elems, 4), *out = calloc(chips * cfg.elems, 4);
  if (!in || !want || !dev_in || !out) return cli_fail("collective", "out of memory for %u x %" PRIu64 " bytes", chips, bytes);
  rng_t r;
  rng_seed(&r, cfg.seed);
  for (unsigned ch = 0; ch < chips; ch++)
    for (uint64_t e = 0; e < cfg.elems; e++) {
      uint64_t x = rng_next(&r);  /* values of moderate range, both signs */
      uint32_t bits = (uint32_t)((x >> 40) & 0x807FFFFFu) | ((uint32_t)(120 + (x >> 8) % 16) << 23);
      if (cfg.args.bf16_in) { /* the chip widens bf16 to fp32 exactly: the golden model sums the widened */
        dev_in[ch * cfg.elems + e] = bits >> 16;
        bits &= 0xFFFF0000u;
      } else {
        dev_in[ch * cfg.elems + e] = bits;
      }
      in[ch * lines * lanes + e] = bits;
    }
  fprintf(stderr, "collective: %u chips, %" PRIu64 " bytes each, running...\n", chips, bytes);
  pod_coll_stats_t st;
  char err[4096];
  if (pod_collective(&cfg, dev_in, out, &st, err, sizeof err)) {
    bool usage = !strstr(err, "failed:");
    free(in), free(want), free(dev_in), free(out);
    return usage ? cli_usage_error("collective", "%s", err) : cli_fail("collective", "%s", err);
  }
  fw_coll_args_t ga = cfg.args;
  ga.lines = (uint32_t)lines;
  if (cfg.args.op == FW_COLL_ALL_TO_ALL) { /* element level: chip i's block j is chip j's block i */
    const uint64_t b = cfg.elems / chips;
    for (unsigned i = 0; i < chips; i++)
      for (unsigned j = 0; j < chips; j++)
        memcpy(want + i * lines * lanes + j * b, in + j * lines * lanes + i * b, b * 4);
  } else {
    coll_golden(&s, &ga, lanes, in, want);
  }
  uint64_t mismatches = 0, bound_violations = 0;
  double max_rel = 0;
  for (unsigned ch = 0; ch < chips; ch++) {
    uint32_t first = 0, count = (uint32_t)lines;
    if (cfg.args.op == FW_COLL_REDUCE_SCATTER) fw_coll_owned(&s, &ga, s.x0 + ch % s.w, s.y0 + ch / s.w, &first, &count);
    for (uint64_t e = (uint64_t)first * lanes; e < (uint64_t)(first + count) * lanes && e < cfg.elems; e++) {
      mismatches += out[ch * cfg.elems + e] != want[ch * lines * lanes + e];
      if (cfg.args.op == FW_COLL_ALLREDUCE || cfg.args.op == FW_COLL_REDUCE_SCATTER) { /* vs a float64 sum */
        double sum = 0, mag = 0, got;
        for (unsigned o = 0; o < chips; o++) {
          float f;
          uint32_t b = in[o * lines * lanes + e];
          memcpy(&f, &b, 4);
          sum += f, mag += fabs(f);
        }
        float g;
        memcpy(&g, &out[ch * cfg.elems + e], 4);
        got = g;
        if (mag > 0 && fabs(got - sum) / mag > max_rel) max_rel = fabs(got - sum) / mag;
        /* sequential fp32 sums of n values: |error| <= gamma(n-1) sum|x|, gamma(k) = ku/(1-ku), u = 2^-24 */
        const double gamma = (chips - 1) * 0x1p-24 / (1 - (chips - 1) * 0x1p-24);
        if (fabs(got - sum) > gamma * mag) bound_violations++;
      }
    }
  }
  const unsigned n = chips;
  const pod_coll_bw_t bw = pod_coll_bandwidth(&s, cfg.args.op, bytes, st.cycles, clock_mhz);
  const bool correct = mismatches == 0 && bound_violations == 0 && st.sems_left == 0;
  if (json) {
    json_t j;
    json_begin(&j, stdout);
    json_u64(&j, "chips", n);
    json_u64(&j, "bytes", bytes);
    json_u64(&j, "lines", st.lines);
    json_u64(&j, "chunk_lines", st.chunk_lines);
    json_u64(&j, "cycles", st.cycles);
    json_f64(&j, "time_us", bw.time_s * 1e6);
    json_f64(&j, "algbw_GBps", bw.algbw);
    json_f64(&j, "busbw_GBps", bw.busbw);
    json_f64(&j, "link_GBps", bw.link);
    json_f64(&j, "busbw_bound_GBps", bw.bound);
    json_f64(&j, "busbw_fraction", bw.busbw / bw.bound);
    json_u64(&j, "link_flits", st.flits_sent);
    json_f64(&j, "max_rel_error_vs_float64", max_rel);
    json_u64(&j, "float64_bound_violations", bound_violations);
    json_u64(&j, "semaphores_left", st.sems_left);
    json_u64(&j, "mismatches", mismatches);
    json_bool(&j, "correct", correct);
    json_end(&j);
  } else {
    static const char *const names[] = {"allreduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all"};
    printf("%s on a %ux%u slice, %" PRIu64 " bytes per chip\n", names[cfg.args.op], s.w, s.h, bytes);
    printf("  cycles          %" PRIu64 "  (%.2f us at %.0f MHz)\n", st.cycles, bw.time_s * 1e6, clock_mhz);
    printf("  algbw           %.3f GB/s\n", bw.algbw);
    if (cfg.args.op == FW_COLL_ALL_TO_ALL)
      printf("  busbw           %.3f GB/s  (%.1f%% of %.2f GB/s: %u links of %.2f GB/s at the slice's mean hop count)\n",
             bw.busbw, 100 * bw.busbw / bw.bound, bw.bound, bw.links, bw.link);
    else
      printf("  busbw           %.3f GB/s  (%.1f%% of %.2f GB/s: %u links of %.2f GB/s)\n", bw.busbw,
             100 * bw.busbw / bw.bound, bw.bound, bw.links, bw.link);
    printf("  golden model    %s\n", correct ? "agrees on every bit of every chip" : "DISAGREES");
    if (cfg.args.op == FW_COLL_ALLREDUCE || cfg.args.op == FW_COLL_REDUCE_SCATTER)
      printf("  vs float64      max |err| / sum|x| = %.3g (bound (n-1)u/(1-(n-1)u) = %.3g: %s)\n", max_rel,
             (chips - 1) * 0x1p-24 / (1 - (chips - 1) * 0x1p-24), bound_violations ? "EXCEEDED" : "within");
  }
  free(in), free(want), free(dev_in), free(out);
  return correct ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
