/*
 * cmd_gemm: `tpusim gemm`, C = A x B on the RTL MXU. Inputs come from .npy files or are
 * generated from the seed, are rounded to bf16 (RNE) and fed through the MXU's ports by
 * mxu_driver; the result is checked bit for bit against mxu_golden and reported with the
 * cycle count, the timing contract and the RTL performance counters.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "golden/arith_golden.h"
#include "golden/mxu_golden.h"
#include "runtime/chip_gemm.h"
#include "runtime/mxu_driver.h"
#include "system/chip.h"
#include "util/bits.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/npy.h"
#include "util/rng.h"
#include "vmodel/mxu_top.h"

#define GEMM_MAX_DIM (1u << 16)

typedef struct {
  unsigned rows, cols;
  uint64_t m, k, n, seed, hbm_bw, hbm_latency;
  bool have_m, have_k, have_n, json, chip, relu, bf16_out;
  const char *a_path, *b_path, *out_path, *trace;
} gemm_opts_t;

/* What either level reports about one GEMM. */
typedef struct {
  uint64_t cycles, readout_cycles, tiles;
  mxu_counters_t counters;
  uint64_t hbm_bytes, dma_busy, mxu_busy;  /* chip level */
  size_t compute_cmds, dma_cmds;           /* chip level */
} gemm_run_t;

static void gemm_help(void) {
  printf("usage: tpusim gemm --mxu RxC --m M --k K --n N [--level chip|mxu] [--seed S]\n"
         "                   [--a A.npy --b B.npy] [--out C.npy] [--hbm-bw BYTES_PER_CYCLE]\n"
         "                   [--hbm-latency CYCLES] [--relu] [--bf16-out] [--trace FILE.fst] [--json]\n\n"
         "Computes C = A x B (A: MxK, B: KxN) with an R x C weight-stationary bf16 systolic\n"
         "array (fp32 accumulation) and checks every output bit against the golden model.\n"
         "--level chip (default): the firmware GEMM runs on a chip, A and B in HBM (bandwidth\n"
         "--hbm-bw bytes/cycle, default %u = 900 GB/s at %u MHz; latency --hbm-latency, default\n"
         "%u cycles); --relu and --bf16-out apply ReLU and round C to bf16 on the chip's vector\n"
         "unit on the way out; chip sizes built: %s\n"
         "--level mxu: the MXU alone, fed through its ports from C; sizes built: %s\n"
         "Without --a/--b the inputs are random (from --seed, default 1). .npy inputs must be\n"
         "2-D float32 little-endian C-ordered; they are rounded to bf16 (round to nearest even)\n"
         "and --m/--k/--n are taken from them. --out writes C as float32 .npy. --mxu defaults\n"
         "to 16x16. Exit status: 0 bit-exact, 1 mismatch or run failure, 2 bad usage or input.\n",
         CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, CHIP_DEFAULT_CLOCK_MHZ, CHIP_DEFAULT_HBM_LATENCY, chip_top_sizes(),
         mxu_top_sizes());
}

static int parse_mxu(const char *text, gemm_opts_t *o) {
  unsigned r, c;
  if (!cli_parse_dims("gemm", "--mxu", "RxC", text, 1, 4096, &r, &c)) return CLI_EXIT_USAGE;
  o->rows = r;
  o->cols = c;
  return CLI_EXIT_OK;
}

static int parse(int argc, char **argv, gemm_opts_t *o) {
  enum { O_MXU = 1, O_M, O_K, O_N, O_SEED, O_A, O_B, O_OUT, O_TRACE, O_JSON, O_HELP, O_LEVEL, O_BW, O_LAT,
         O_RELU, O_BF16 };
  static const struct option longopts[] = {
      {"mxu", required_argument, 0, O_MXU}, {"m", required_argument, 0, O_M},
      {"k", required_argument, 0, O_K},     {"n", required_argument, 0, O_N},
      {"seed", required_argument, 0, O_SEED}, {"a", required_argument, 0, O_A},
      {"b", required_argument, 0, O_B},     {"out", required_argument, 0, O_OUT},
      {"trace", required_argument, 0, O_TRACE}, {"json", no_argument, 0, O_JSON},
      {"help", no_argument, 0, O_HELP},     {"level", required_argument, 0, O_LEVEL},
      {"hbm-bw", required_argument, 0, O_BW}, {"hbm-latency", required_argument, 0, O_LAT},
      {"relu", no_argument, 0, O_RELU},     {"bf16-out", no_argument, 0, O_BF16},
      {0, 0, 0, 0}};
  *o = (gemm_opts_t){.rows = 16, .cols = 16, .seed = 1, .chip = true,
                      .hbm_bw = CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, .hbm_latency = CHIP_DEFAULT_HBM_LATENCY};
  opterr = 0;
  optind = 1;
  int c, rc;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case O_MXU:
        if ((rc = parse_mxu(optarg, o)) != CLI_EXIT_OK) return rc;
        break;
      case O_M:
        if (!cli_parse_u64("gemm", "--m", optarg, 1, GEMM_MAX_DIM, &o->m)) return CLI_EXIT_USAGE;
        o->have_m = true;
        break;
      case O_K:
        if (!cli_parse_u64("gemm", "--k", optarg, 1, GEMM_MAX_DIM, &o->k)) return CLI_EXIT_USAGE;
        o->have_k = true;
        break;
      case O_N:
        if (!cli_parse_u64("gemm", "--n", optarg, 1, GEMM_MAX_DIM, &o->n)) return CLI_EXIT_USAGE;
        o->have_n = true;
        break;
      case O_SEED:
        if (!cli_parse_u64("gemm", "--seed", optarg, 0, UINT64_MAX, &o->seed)) return CLI_EXIT_USAGE;
        break;
      case O_A: o->a_path = optarg; break;
      case O_B: o->b_path = optarg; break;
      case O_OUT: o->out_path = optarg; break;
      case O_TRACE: o->trace = optarg; break;
      case O_JSON: o->json = true; break;
      case O_HELP: gemm_help(); return -1;
      case O_RELU: o->relu = true; break;
      case O_BF16: o->bf16_out = true; break;
      case O_LEVEL:
        if (!strcmp(optarg, "chip")) o->chip = true;
        else if (!strcmp(optarg, "mxu")) o->chip = false;
        else return cli_usage_error("gemm", "--level expects chip or mxu, got '%s'", optarg);
        break;
      case O_BW:
        if (!cli_parse_u64("gemm", "--hbm-bw", optarg, 1, 1u << 20, &o->hbm_bw)) return CLI_EXIT_USAGE;
        break;
      case O_LAT:
        if (!cli_parse_u64("gemm", "--hbm-latency", optarg, 1, 1u << 20, &o->hbm_latency)) return CLI_EXIT_USAGE;
        break;
      default:
        return cli_usage_error("gemm", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("gemm", "unexpected argument '%s'", argv[optind]);
  chip_geometry_t g;
  if (!o->chip && (o->relu || o->bf16_out))
    return cli_usage_error("gemm", "--relu and --bf16-out need --level chip (the vector unit applies them)");
  if (o->chip && chip_top_geometry(o->rows, o->cols, &g))
    return cli_usage_error("gemm", "no chip with a %ux%u MXU in this build; chip sizes: %s (or --level mxu)",
                           o->rows, o->cols, chip_top_sizes());
  if (!o->chip && !mxu_top_acc_depth(o->rows, o->cols))
    return cli_usage_error("gemm", "no %ux%u MXU in this build; built sizes: %s", o->rows, o->cols, mxu_top_sizes());
  return CLI_EXIT_OK;
}

/* Takes a dimension from a file, checking it against the option if both are given. */
static int take_dim(const char *name, bool *have, uint64_t *dim, size_t file_dim, const char *path) {
  if (*have && *dim != file_dim)
    return cli_usage_error("gemm", "--%s %" PRIu64 " disagrees with %s (%zu)", name, *dim, path, file_dim);
  if (file_dim > GEMM_MAX_DIM)
    return cli_usage_error("gemm", "%s: dimension %zu exceeds the limit of %u", path, file_dim, GEMM_MAX_DIM);
  *dim = file_dim;
  *have = true;
  return CLI_EXIT_OK;
}

static uint16_t *to_bf16(const npy_matrix_t *mat) {
  size_t count = mat->rows * mat->cols;
  uint16_t *out = malloc(count * sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < count; i++) {
    uint32_t bits;
    memcpy(&bits, &mat->data[i], sizeof bits);
    out[i] = arith_golden_fp32_to_bf16(bits);
  }
  return out;
}

static uint16_t *random_bf16(rng_t *rng, size_t count) {
  uint16_t *out = malloc((count ? count : 1) * sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < count; i++) out[i] = rng_bf16(rng, -4, 1);
  return out;
}

typedef struct {
  bool enabled;
  struct timespec last;
} progress_t;

static void show_progress(void *ctx, uint64_t cycles, uint64_t expected) {
  progress_t *p = ctx;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!p->enabled || now.tv_sec - p->last.tv_sec < 1) return;
  p->last = now;
  fprintf(stderr, "gemm: cycle %" PRIu64 " of about %" PRIu64 "\n", cycles, expected);
}

int cmd_gemm(int argc, char **argv) {
  gemm_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;

  char err[512];
  npy_matrix_t fa = {0}, fb = {0};
  uint16_t *a = NULL, *b = NULL;
  uint32_t *c = NULL, *golden = NULL;
  mxu_dev_t dev = {0};
  chip_t *chip = NULL;
  rc = CLI_EXIT_OK;

  if (o.a_path) {
    if (npy_read_f32_2d(o.a_path, &fa, err, sizeof err)) { rc = cli_usage_error("gemm", "--a: %s", err); goto out; }
    if ((rc = take_dim("m", &o.have_m, &o.m, fa.rows, o.a_path)) ||
        (rc = take_dim("k", &o.have_k, &o.k, fa.cols, o.a_path)))
      goto out;
  }
  if (o.b_path) {
    if (npy_read_f32_2d(o.b_path, &fb, err, sizeof err)) { rc = cli_usage_error("gemm", "--b: %s", err); goto out; }
    if (o.a_path && fb.rows != fa.cols) {
      rc = cli_usage_error("gemm", "inner dimensions disagree: A is %zux%zu, B is %zux%zu",
                           fa.rows, fa.cols, fb.rows, fb.cols);
      goto out;
    }
    if ((rc = take_dim("k", &o.have_k, &o.k, fb.rows, o.b_path)) ||
        (rc = take_dim("n", &o.have_n, &o.n, fb.cols, o.b_path)))
      goto out;
  }
  if (!o.have_m || !o.have_k || !o.have_n) {
    rc = cli_usage_error("gemm", "missing %s (give --m, --k and --n, or --a/--b files)",
                         !o.have_m ? "--m" : !o.have_k ? "--k" : "--n");
    goto out;
  }
  chip_geometry_t geo;
  if (o.chip) {
    chip_top_geometry(o.rows, o.cols, &geo);
    if (chip_gemm_check(&geo, o.m, o.k, o.n, err, sizeof err)) { rc = cli_usage_error("gemm", "%s", err); goto out; }
  } else {
    if (mxu_dev_open(&dev, o.rows, o.cols, o.seed, err, sizeof err)) { rc = cli_usage_error("gemm", "%s", err); goto out; }
    if (mxu_gemm_check_shape(&dev, o.m, o.k, o.n, err, sizeof err)) { rc = cli_usage_error("gemm", "%s", err); goto out; }
  }

  rng_t rng;
  rng_seed(&rng, o.seed);
  a = o.a_path ? to_bf16(&fa) : random_bf16(&rng, o.m * o.k);
  b = o.b_path ? to_bf16(&fb) : random_bf16(&rng, o.k * o.n);
  c = calloc(o.m * o.n, sizeof *c);
  golden = calloc(o.m * o.n, sizeof *golden);
  if (!a || !b || !c || !golden) { rc = cli_fail("gemm", "out of memory"); goto out; }

  uint64_t contract = mxu_contract_cycles(o.rows, o.cols, o.m, o.k, o.n);
  gemm_run_t st = {0};
  struct timespec t0, t1;
  if (o.chip) {
    uint64_t need = chip_gemm_hbm_bytes(o.cols, o.m, o.k, o.n);
    chip_config_t cfg = {.rows = o.rows, .cols = o.cols, .hbm_bytes = need < (1u << 20) ? (1u << 20) : need,
                         .hbm_bytes_per_cycle = (unsigned)o.hbm_bw, .hbm_latency = (unsigned)o.hbm_latency,
                         .seed = o.seed};
    chip = chip_new(&cfg, err, sizeof err);
    if (!chip) { rc = cli_fail("gemm", "%s", err); goto out; }
    if (o.trace && chip_trace(chip, o.trace, err, sizeof err)) { rc = cli_fail("gemm", "%s", err); goto out; }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    chip_gemm_stats_t cs;
    chip_gemm_opts_t gopts = {o.relu, o.bf16_out, 0};
    if (chip_gemm(chip, o.m, o.k, o.n, a, b, c, &gopts, &cs, err, sizeof err)) { rc = cli_fail("gemm", "%s", err); goto out; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st.cycles = cs.cycles;
    st.counters = (mxu_counters_t){cs.compute, cs.weight_load, cs.weight_stall, cs.input_stall, cs.mxu_idle};
    st.hbm_bytes = cs.hbm_bytes;
    st.dma_busy = cs.dma_busy_cycles;
    st.mxu_busy = cs.mxu_busy_cycles;
    st.compute_cmds = cs.compute_cmds;
    st.dma_cmds = cs.dma_cmds;
  } else {
    if (o.trace && vmodel_trace_open(dev.model, o.trace, err, sizeof err)) { rc = cli_fail("gemm", "%s", err); goto out; }
    progress_t prog = {.enabled = contract > 20000};
    clock_gettime(CLOCK_MONOTONIC, &prog.last);
    dev.progress = show_progress;
    dev.progress_ctx = &prog;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mxu_gemm_stats_t ms;
    if (mxu_gemm(&dev, o.m, o.k, o.n, a, b, c, &ms, err, sizeof err)) {
      if (o.trace) vmodel_trace_close(dev.model);
      rc = cli_fail("gemm", "%s", err);
      goto out;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    st.cycles = ms.cycles;
    st.readout_cycles = ms.readout_cycles;
    st.tiles = ms.tiles;
    st.counters = ms.counters;
  }
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  mxu_golden_gemm(o.rows, o.m, o.k, o.n, a, b, golden);
  for (size_t i = 0; i < o.m * o.n; i++) {
    if (o.relu) golden[i] = arith_golden_fp32_max(golden[i], 0);
    if (o.bf16_out) golden[i] = arith_golden_fp32_to_bf16(golden[i]);
  }
  size_t mismatches = 0;
  for (size_t i = 0; i < o.m * o.n; i++) mismatches += c[i] != golden[i];

  double ideal = (double)o.m * (double)o.k * (double)o.n / ((double)o.rows * o.cols);
  double util = ideal / (double)st.cycles;
  uint64_t sim_cycles = st.cycles + st.readout_cycles;
  double cps = secs > 0 ? (double)sim_cycles / secs : 0.0;
  double macs = secs > 0 ? (double)o.m * o.k * o.n / secs : 0.0;

  if (o.out_path && mismatches == 0) {
    float *outf = malloc(o.m * o.n * sizeof *outf);
    if (!outf) { rc = cli_fail("gemm", "out of memory"); goto out; }
    for (size_t i = 0; i < o.m * o.n; i++) {
      uint32_t bits = o.bf16_out ? c[i] << 16 : c[i];  /* bf16 results widen exactly */
      memcpy(&outf[i], &bits, sizeof bits);
    }
    int wrc = npy_write_f32_2d(o.out_path, outf, o.m, o.n, err, sizeof err);
    free(outf);
    if (wrc) { rc = cli_fail("gemm", "--out: %s", err); goto out; }
  }

  if (o.json) {
    json_t j;
    json_begin(&j, stdout);
    json_u64(&j, "m", o.m);
    json_u64(&j, "k", o.k);
    json_u64(&j, "n", o.n);
    json_u64(&j, "mxu_rows", o.rows);
    json_u64(&j, "mxu_cols", o.cols);
    json_str(&j, "level", o.chip ? "chip" : "mxu");
    json_u64(&j, "seed", o.seed);
    json_u64(&j, "cycles", st.cycles);
    json_f64(&j, "ideal_cycles", ideal);
    json_f64(&j, "utilization", util);
    if (o.chip) {
      /* the MXU-only contract is the floor the chip-level GEMM approaches */
      json_u64(&j, "mxu_contract_cycles", contract);
      json_u64(&j, "hbm_bw", o.hbm_bw);
      json_u64(&j, "hbm_latency", o.hbm_latency);
      json_u64(&j, "hbm_bytes", st.hbm_bytes);
      json_u64(&j, "dma_busy_cycles", st.dma_busy);
      json_u64(&j, "mxu_busy_cycles", st.mxu_busy);
      json_u64(&j, "compute_commands", st.compute_cmds);
      json_u64(&j, "dma_commands", st.dma_cmds);
    } else {
      json_u64(&j, "tiles", st.tiles);
      json_u64(&j, "contract_cycles", contract);
      json_bool(&j, "contract_met", st.cycles == contract);
      json_u64(&j, "readout_cycles", st.readout_cycles);
    }
    json_bool(&j, "bit_exact", mismatches == 0);
    json_u64(&j, "mismatches", mismatches);
    json_object(&j, "counters");
    json_u64(&j, "compute", st.counters.compute);
    json_u64(&j, "weight_load", st.counters.weight_load);
    json_u64(&j, "weight_stall", st.counters.weight_stall);
    json_u64(&j, "input_stall", st.counters.input_stall);
    json_u64(&j, "idle", st.counters.idle);
    json_object_end(&j);
    json_f64(&j, "sim_seconds", secs);
    json_f64(&j, "sim_cycles_per_s", cps);
    json_f64(&j, "macs_per_s", macs);
    json_end(&j);
  } else {
    if (o.chip) {
      printf("GEMM %" PRIu64 "x%" PRIu64 " * %" PRIu64 "x%" PRIu64 " on a chip with a %ux%u MXU, data in HBM\n",
             o.m, o.k, o.k, o.n, o.rows, o.cols);
      printf("  cycles          %" PRIu64 "  (the MXU alone: %" PRIu64 ")\n", st.cycles, contract);
      printf("  HBM             %" PRIu64 " bytes at %" PRIu64 " bytes/cycle, latency %" PRIu64 "\n",
             st.hbm_bytes, o.hbm_bw, o.hbm_latency);
      printf("  busy cycles     DMA %" PRIu64 ", MXU %" PRIu64 "\n", st.dma_busy, st.mxu_busy);
      printf("  programs        %zu compute, %zu DMA commands\n", st.compute_cmds, st.dma_cmds);
    } else {
      printf("GEMM %" PRIu64 "x%" PRIu64 " * %" PRIu64 "x%" PRIu64 " on a %ux%u MXU (%" PRIu64 " tiles)\n",
             o.m, o.k, o.k, o.n, o.rows, o.cols, st.tiles);
      printf("  cycles          %" PRIu64 "  (contract %" PRIu64 ": %s)\n", st.cycles, contract,
             st.cycles == contract ? "met" : "NOT met");
    }
    printf("  ideal cycles    %.1f  (M*K*N / (R*C))\n", ideal);
    printf("  utilization     %.2f%%\n", 100.0 * util);
    printf("  counters        compute %" PRIu64 ", weight load %" PRIu64 ", weight stall %" PRIu64
           ", input stall %" PRIu64 ", idle %" PRIu64 "\n",
           st.counters.compute, st.counters.weight_load, st.counters.weight_stall,
           st.counters.input_stall, st.counters.idle);
    if (!o.chip) printf("  readout         %" PRIu64 " cycles\n", st.readout_cycles);
    printf("  golden model    %s\n", mismatches ? "DISAGREES" : "agrees on every bit");
    printf("  C[0][0]         %.9g\n", bits_fp32_value(o.bf16_out ? c[0] << 16 : c[0]));
    printf("  simulation      %.0f cycles/s, %.3g MACs/s\n", cps, macs);
  }
  if (mismatches) rc = cli_fail("gemm", "%zu of %" PRIu64 " outputs differ from the golden model", mismatches, o.m * o.n);

out:
  if (dev.model) mxu_dev_close(&dev);
  chip_free(chip);
  free(fa.data), free(fb.data), free(a), free(b), free(c), free(golden);
  return rc;
}
