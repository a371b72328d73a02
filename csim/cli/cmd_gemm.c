/*
 * cmd_gemm: `tpusim gemm`, C = A x B on the RTL: parse; inputs from .npy files rounded to
 * bf16 (RNE), or the job's seeded ones; run the GEMM job (job/gemm_job: the firmware GEMM on
 * a chip or the MXU alone, every bit checked against the golden model, the figures); report
 * the cycles, the timing contract and the RTL counters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "golden/arith_golden.h"
#include "job/gemm_job.h"
#include "runtime/mxu_driver.h"
#include "chip/chip.h"
#include "util/bits.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/npy.h"
#include "util/report.h"
#include "util/rng.h"
#include "util/stopwatch.h"
#include "vmodel/mxu_top.h"

#define GEMM_MAX_DIM (1u << 16)

typedef struct {
  uint64_t m, k, n, seed, check_rows;
  cmd_machine_t mach;
  chip_config_t chip;  /* the machine's chip (mach.machine.pod.chip), its reset seed --seed */
  int level;  /* LEVEL_CHIP, LEVEL_MXU */
  bool have_m, have_k, have_n, json, relu, bf16_out, transposed_a, transposed_b;
  const char *a_path, *b_path, *out_path, *trace;
  cmd_profile_t prof;
} gemm_opts_t;
enum { LEVEL_CHIP, LEVEL_MXU };

static void gemm_help(void) {
  printf("usage: tpusim gemm --mxu RxC [--mxus X] [--cores K] --m M --k K --n N [--level chip|mxu] [--seed S]\n"
         "                   [--a A.npy --b B.npy] [--out C.npy] [--hbm-bw BYTES_PER_CYCLE]\n"
         "                   [--hbm-latency CYCLES] [--relu] [--bf16-out] [--transposed-a]\n"
         "                   [--transposed-b] [--model rtl|fast|check] [--check-rows N] [--trace FILE.fst]\n"
         "                   [--json] [--profile FILE.json] [--op-profile] [--quiet]\n\n"
         "Computes C = A x B (A: MxK, B: KxN) with an R x C weight-stationary bf16 systolic\n"
         "array (fp32 accumulation) and checks every output bit against the golden model.\n"
         "--level chip (default): the firmware GEMM runs on a chip, A and B in HBM (bandwidth\n"
         "--hbm-bw bytes/cycle, default %u = 900 GB/s at %u MHz; latency --hbm-latency, default\n"
         "%u cycles); --relu and --bf16-out apply ReLU and round C to bf16 on the chip's vector\n"
         "unit on the way out; chip sizes built: %s\n"
         "--level mxu: the MXU alone, fed through its ports from C; sizes built: %s\n"
         "--transposed-b: B is kept transposed (B^T in HBM; the MXU alone is fed B column by\n"
         "column) and each tile is loaded transposed (MXU_LOAD's transpose bit; square MXUs), as\n"
         "a backward pass uses W^T\n"
         "--transposed-a: A is kept transposed (A^T in HBM, as a weight gradient X^T dY reads the\n"
         "activations X) and the chip's transposing DMAs make A's lines from A^T's rows (square\n"
         "MXUs; --level chip only: the MXU alone is fed A's rows by the host, where A^T would only\n"
         "change the order the host reads them in)\n"
         "--model fast: the fast C model (the chip's, csim/fast/chip_fast.c; with --level mxu the\n"
         "MXU's, csim/fast/mxu_fast.c), the RTL's bits and cycles; check: the chip's RTL and fast\n"
         "model in lockstep (docs/scale.md)\n"
         "--mxus X, --cores K (--level chip): a chip of K cores of X MXUs each (docs/isa.md, \"MXUs\",\n"
         "\"Cores\"): the GEMM splits the column tiles over a core's MXUs and the rows over the cores\n"
         "--chip small|v2|v3: a preset chip (docs/fidelity.md): its MXUs, cores, clock and HBM\n"
         "bandwidth (instead of --mxu/--mxus/--cores/--clock-mhz/--hbm-*: a preset fixes what it sets)\n"
         "--flit-words and --link-bytes are refused: one chip's GEMM sends nothing over its links;\n"
         "--hbm-bw and --hbm-latency need --level chip\n"
         "--check-rows N: the golden model checks N rows of C (the first, the last and random\n"
         "others from --seed) instead of all M, for GEMMs too big to check whole (0: all, default)\n"
         "Without --a/--b the inputs are random (from --seed, default 1). .npy inputs must be\n"
         "2-D float32 little-endian C-ordered; they are rounded to bf16 (round to nearest even)\n"
         "and --m/--k/--n are taken from them. --out writes C as float32 .npy. --mxu defaults\n"
         "to 16x16. --hbm-latency is at most %u cycles.\n" CMD_MACHINE_HELP CMD_PROFILE_HELP CLI_EXIT_STATUS_HELP,
         CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, CHIP_DEFAULT_CLOCK_MHZ, CHIP_DEFAULT_HBM_LATENCY, chip_top_sizes(),
         mxu_top_sizes(), CHIP_MAX_HBM_LATENCY);
}

static int parse(int argc, char **argv, gemm_opts_t *o) {
  *o = (gemm_opts_t){.seed = 1, .level = LEVEL_CHIP};
  cmd_machine_init(&o->mach, 1, 1, 16, 16);
  const cli_opt_t opts[] = {
      CMD_MACHINE_OPTS(&o->mach),
      CLI_OPT("check-rows", CLI_U64, &o->check_rows, .min = 0, .max = GEMM_MAX_DIM),
      CLI_OPT("m", CLI_U64, &o->m, .min = 1, .max = GEMM_MAX_DIM, .given = &o->have_m),
      CLI_OPT("k", CLI_U64, &o->k, .min = 1, .max = GEMM_MAX_DIM, .given = &o->have_k),
      CLI_OPT("n", CLI_U64, &o->n, .min = 1, .max = GEMM_MAX_DIM, .given = &o->have_n),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("a", CLI_INPUT, &o->a_path),
      CLI_OPT("b", CLI_INPUT, &o->b_path),
      CLI_OPT("out", CLI_OUTPUT, &o->out_path),
      CLI_OPT("trace", CLI_OUTPUT, &o->trace),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CMD_PROFILE_OPTS(&o->prof),
      CLI_OPT("relu", CLI_FLAG, &o->relu),
      CLI_OPT("bf16-out", CLI_FLAG, &o->bf16_out),
      CLI_OPT("transposed-a", CLI_FLAG, &o->transposed_a),
      CLI_OPT("transposed-b", CLI_FLAG, &o->transposed_b),
      CLI_OPT("level", CLI_CHOICE, &o->level, .shape = "chip|mxu"),
      {0}};
  int rc = cli_parse("gemm", argc, argv, opts, gemm_help);
  if (rc != CLI_EXIT_OK) return rc;
  /* a preset or machine file: the MXUs, cores, clock and HBM of docs/machines.md (fixed: not with the options) */
  const cmd_machine_kind_t kind = o->level == LEVEL_MXU ? CMD_LONE_MXU : CMD_LONE_CHIP;
  if ((rc = cmd_machine_build("gemm", &o->mach, kind)) != CLI_EXIT_OK) return rc;
  o->chip = o->mach.machine.pod.chip;
  o->chip.seed = o->seed;
  if (o->level == LEVEL_MXU && (o->relu || o->bf16_out))
    return cli_usage_error("gemm", "--relu and --bf16-out need --level chip (the vector unit applies them)");
  if (o->chip.model == CHIP_MODEL_CHECK && o->level == LEVEL_MXU)
    return cli_usage_error("gemm", "--model check needs --level chip (the MXU alone is held to its fast model by "
                           "tests/test_mxu.c)");
  if (o->chip.model == CHIP_MODEL_FAST && o->trace)
    return cli_usage_error("gemm", "--trace needs --model rtl or check: a fast model has no waveform");
  if (o->level == LEVEL_MXU && o->transposed_a)
    return cli_usage_error("gemm", "--transposed-a needs --level chip (its transposing DMAs make A's lines; the MXU "
                           "alone is fed A's rows by the host)");
  if ((o->transposed_a || o->transposed_b) && o->chip.rows != o->chip.cols)
    return cli_usage_error("gemm", "--transposed-%c needs a square MXU, not %ux%u", o->transposed_a ? 'a' : 'b',
                           o->chip.rows, o->chip.cols);
  if (o->level == LEVEL_MXU && (o->chip.mxus > 1 || o->chip.cores > 1))
    return cli_usage_error("gemm", "--mxus and --cores need --level chip (the MXU alone is one MXU)");
  if (o->level == LEVEL_MXU && (o->mach.hbm_bw_given || o->mach.hbm_latency_given))
    return cli_usage_error("gemm", "--hbm-bw and --hbm-latency need --level chip (the MXU alone is fed from C, not HBM)");
  if (o->mach.flit_given || o->mach.link_bytes_given)
    return cli_usage_error("gemm", "--flit-words and --link-bytes: the GEMM runs on one chip and sends nothing over its "
                           "links (a pod command or `tpusim chip` uses them)");
  if ((rc = cmd_machine_check("gemm", &o->mach, kind, -1)) != CLI_EXIT_OK) return rc;
  if (o->level == LEVEL_MXU && !mxu_top_acc_depth(o->chip.rows, o->chip.cols))
    return cli_usage_error("gemm", "no %ux%u MXU in this build; built sizes: %s", o->chip.rows, o->chip.cols,
                           mxu_top_sizes());
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

/* A and B as bf16 from the .npy files (which also give the dimensions); NULL without a file
 * (the job makes them from the seed). */
static int load_inputs(gemm_opts_t *o, uint16_t **a, uint16_t **b) {
  npy_matrix_t fa = {0}, fb = {0};
  char err[512];
  int rc = CLI_EXIT_OK;
  if (o->a_path) {
    if (npy_read_f32_2d(o->a_path, &fa, err, sizeof err)) {
      rc = cli_usage_error("gemm", "--a: %s", err);
      goto out;
    }
    if ((rc = take_dim("m", &o->have_m, &o->m, fa.rows, o->a_path)) ||
        (rc = take_dim("k", &o->have_k, &o->k, fa.cols, o->a_path)))
      goto out;
  }
  if (o->b_path) {
    if (npy_read_f32_2d(o->b_path, &fb, err, sizeof err)) {
      rc = cli_usage_error("gemm", "--b: %s", err);
      goto out;
    }
    if (o->a_path && fb.rows != fa.cols) {
      rc = cli_usage_error("gemm", "inner dimensions disagree: A is %zux%zu, B is %zux%zu", fa.rows, fa.cols, fb.rows,
                           fb.cols);
      goto out;
    }
    if ((rc = take_dim("k", &o->have_k, &o->k, fb.rows, o->b_path)) ||
        (rc = take_dim("n", &o->have_n, &o->n, fb.cols, o->b_path)))
      goto out;
  }
  if (!o->have_m || !o->have_k || !o->have_n) {
    rc = cli_usage_error("gemm", "missing %s (give --m, --k and --n, or --a/--b files)",
                         !o->have_m ? "--m" : !o->have_k ? "--k" : "--n");
    goto out;
  }
  if ((o->a_path && !(*a = to_bf16(&fa))) || (o->b_path && !(*b = to_bf16(&fb)))) rc = cli_fail("gemm", "out of memory");
out:
  free(fa.data);
  free(fb.data);
  return rc;
}

/* C as float32 .npy (bf16 results widen exactly). */
static int write_out(const gemm_opts_t *o, const uint32_t *c) {
  float *outf = malloc(o->m * o->n * sizeof *outf);
  if (!outf) return cli_fail("gemm", "out of memory");
  for (size_t i = 0; i < o->m * o->n; i++) {
    uint32_t bits = o->bf16_out ? c[i] << 16 : c[i];
    memcpy(&outf[i], &bits, sizeof bits);
  }
  char err[512];
  int wrc = npy_write_f32_2d_file(outfile_temp(o->out_path), outf, o->m, o->n, err, sizeof err);
  free(outf);
  return wrc ? cli_fail("gemm", "--out: %s", err) : CLI_EXIT_OK;
}

static int report(gemm_opts_t *o, const gemm_job_result_t *st) {
  const bool chip = o->level == LEVEL_CHIP;
  const golden_diff_t *d = &st->diff;
  const uint32_t c00 = st->c[0];
  const double secs = st->seconds;
  report_t r;
  report_init(&r);
  report_u64(&r, "m", o->m);
  report_u64(&r, "k", o->k);
  report_u64(&r, "n", o->n);
  report_u64(&r, "mxu_rows", o->chip.rows);
  report_u64(&r, "mxu_cols", o->chip.cols);
  report_u64(&r, "mxus", o->chip.mxus);
  report_u64(&r, "cores", o->chip.cores);
  report_str(&r, "level", chip ? "chip" : "mxu");
  report_str(&r, "model", chip_model_name(o->chip.model));
  report_bool(&r, "transposed_a", o->transposed_a);
  report_bool(&r, "transposed_b", o->transposed_b);
  report_u64(&r, "seed", o->seed);
  report_u64(&r, "cycles", st->cycles);
  report_f64(&r, "ideal_cycles", st->ideal_cycles);
  report_f64(&r, "utilization", st->utilization);
  report_u64(&r, "clock_mhz", o->chip.clock_mhz);
  report_f64(&r, "tflops", st->flops / 1e12);
  report_f64(&r, "peak_tflops", st->peak_flops / 1e12);
  if (chip) {
    report_u64(&r, "mxu_contract_cycles", st->contract_cycles);  /* the floor the chip-level GEMM approaches */
    report_u64(&r, "hbm_bw", o->chip.hbm_bytes_per_cycle);
    report_u64(&r, "hbm_latency", o->chip.hbm_latency);
    report_u64(&r, "hbm_bytes", st->hbm_bytes);
    report_u64(&r, "dma_busy_cycles", st->dma_busy);
    report_u64(&r, "mxu_busy_cycles", st->mxu_busy);
    report_u64(&r, "compute_commands", st->compute_cmds);
    report_u64(&r, "dma_commands", st->dma_cmds);
    report_line(&r, "GEMM {m}x{k} * {k}x{n} on a chip of {cores} core(s) with {mxus} {mxu_rows}x{mxu_cols} MXU(s) each, data in HBM{transposed_a?, A^T "
                    "made into A's lines by transposing DMAs|}{transposed_b?, B^T loaded transposed|}");
    report_line(&r, "  cycles          {cycles}  (the MXU alone: {mxu_contract_cycles})");
    report_line(&r, "  HBM             {hbm_bytes} bytes at {hbm_bw} bytes/cycle, latency {hbm_latency}");
    report_line(&r, "  busy cycles     DMA {dma_busy_cycles}, MXU {mxu_busy_cycles}");
    report_line(&r, "  programs        {compute_commands} compute, {dma_commands} DMA commands");
  } else {
    report_u64(&r, "tiles", st->tiles);
    report_u64(&r, "contract_cycles", st->contract_cycles);
    report_bool(&r, "contract_met", st->cycles == st->contract_cycles);
    report_u64(&r, "readout_cycles", st->readout_cycles);
    report_line(&r, "GEMM {m}x{k} * {k}x{n} on a {mxu_rows}x{mxu_cols} MXU ({tiles} tiles{transposed_b?, B^T loaded "
                    "transposed|})");
    report_line(&r, "  cycles          {cycles}  (contract {contract_cycles}: {contract_met?met|NOT met})");
  }
  report_bool(&r, "bit_exact", d->mismatches == 0);
  report_u64(&r, "checked_rows", st->checked_rows);
  report_u64(&r, "mismatches", d->mismatches);
  report_object(&r, "counters");
  report_u64(&r, "compute", st->counters.compute);
  report_u64(&r, "weight_load", st->counters.weight_load);
  report_u64(&r, "weight_stall", st->counters.weight_stall);
  report_u64(&r, "input_stall", st->counters.input_stall);
  report_u64(&r, "idle", st->counters.idle);
  report_object_end(&r);
  report_f64(&r, "sim_seconds", secs);
  report_f64(&r, "sim_cycles_per_s", secs > 0 ? (double)(st->cycles + st->readout_cycles) / secs : 0.0);
  report_f64(&r, "macs_per_s", secs > 0 ? (double)o->m * o->k * o->n / secs : 0.0);
  report_text_f64(&r, "c00", bits_fp32_value(o->bf16_out ? c00 << 16 : c00));
  report_line(&r, "  ideal cycles    {ideal_cycles:%.1f}  (M*K*N / (R*C*X*K), X MXUs, K cores)");
  report_line(&r, "  utilization     {utilization*100:%.2f}%: {tflops:%.2f} of {peak_tflops:%.2f} TFLOPS at {clock_mhz} MHz");
  report_line(&r, "  counters        compute {counters.compute}, weight load {counters.weight_load}, weight stall "
                  "{counters.weight_stall}, input stall {counters.input_stall}, idle {counters.idle}");
  if (!chip) report_line(&r, "  readout         {readout_cycles} cycles");
  report_line(&r, "  golden model    {bit_exact?agrees on every bit|DISAGREES} ({checked_rows} of {m} rows checked)");
  report_line(&r, "  C[0][0]         {c00:%.9g}");
  report_line(&r, "  simulation      {sim_cycles_per_s:%.0f} cycles/s, {macs_per_s:%.3g} MACs/s");
  const int prc = cmd_profile_end("gemm", &o->prof, &r);
  if (prc != CLI_EXIT_OK) return prc;
  if (report_print(&r, o->json, stdout)) return cli_fail("gemm", "cannot write the report");
  if (d->mismatches)
    return cli_fail("gemm", "%zu of %" PRIu64 " outputs differ from the golden model; the first: C[%zu][%zu] is "
                    "0x%08x, golden 0x%08x", d->mismatches, o->m * o->n, d->first / o->n, d->first % o->n, d->got,
                    d->want);
  return CLI_EXIT_OK;
}

int cmd_gemm(int argc, char **argv) {
  gemm_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  uint16_t *a = NULL, *b = NULL;
  gemm_job_t *j = NULL;
  char err[1024];
  rt_status_t rs;
  if ((rc = load_inputs(&o, &a, &b)) != CLI_EXIT_OK) goto out;
  cmd_progress_t progress;
  cmd_progress_init(&progress, "gemm");
  const gemm_job_config_t cfg = {
      .chip = o.chip, .level = o.level == LEVEL_CHIP ? GEMM_JOB_CHIP : GEMM_JOB_MXU, .m = o.m, .k = o.k, .n = o.n,
      .seed = o.seed, .a = a, .b = b, .relu = o.relu, .bf16_out = o.bf16_out, .transposed_a = o.transposed_a,
      .transposed_b = o.transposed_b, .check_rows = o.check_rows, .trace_path = o.trace ? outfile_temp_fst(o.trace) : NULL,
      .progress = cmd_progress, .progress_ctx = &progress};
  if (!(j = gemm_job_new(&cfg, &rs, err, sizeof err))) {
    rc = cmd_job_error("gemm", rs, err);
    goto out;
  }
  if ((o.prof.path || o.prof.op || o.prof.chips) && o.level != LEVEL_CHIP) {
    rc = cli_usage_error("gemm", "--profile and --op-profile profile chips: they need --level chip");
    goto out;
  }
  if ((rc = cmd_profile_check("gemm", &o.prof, 1, 1)) != CLI_EXIT_OK) goto out;
  if (cli_check_only()) {
    rc = cli_checked("gemm");
    goto out;
  }
  if ((rc = cmd_profile_begin("gemm", &o.prof, 1, 1, o.chip.clock_mhz, o.chip.rows, o.chip.cols)) != CLI_EXIT_OK) goto out;
  gemm_job_config(j)->profile = o.prof.prof;
  if ((rs = gemm_job_run(j, err, sizeof err)) != RT_OK) {
    rc = cmd_job_error("gemm", rs, err);
    goto out;
  }
  if (o.out_path && gemm_job_result(j)->diff.mismatches == 0 && (rc = write_out(&o, gemm_job_result(j)->c)) != CLI_EXIT_OK)
    goto out;
  rc = report(&o, gemm_job_result(j));
out:
  gemm_job_free(j);
  cmd_profile_free(&o.prof);
  free(a), free(b);
  return rc;
}
