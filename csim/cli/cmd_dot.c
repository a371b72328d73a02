/*
 * cmd_dot: `tpusim dot`, the foundation's demo: a random bf16 dot product streamed through
 * the RTL arithmetic units (runtime/arith_dot), checked bit for bit against the golden
 * model's serial chain (arith_golden_dot), with a float64 reference beside it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "golden/arith_golden.h"
#include "runtime/arith_dot.h"
#include "util/bits.h"
#include "util/cli.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/rng.h"
#include "util/stopwatch.h"
#include "vmodel/arith_top.h"

#define DOT_MAX_N (1u << 20)

typedef struct {
  uint64_t n, seed;
  const char *trace;
  bool json;
} dot_opts_t;

static void dot_help(void) {
  printf("usage: tpusim dot [--n N] [--seed S] [--trace FILE.fst] [--json]\n\n"
         "Streams a random bf16 dot product of length N (default 32, at most %u) through\n"
         "the RTL multiply, add and convert units and checks it against the golden model.\n"
         CLI_EXIT_STATUS_HELP,
         DOT_MAX_N);
}

static int parse(int argc, char **argv, dot_opts_t *o) {
  *o = (dot_opts_t){.n = 32, .seed = 1};
  const cli_opt_t opts[] = {
      CLI_OPT("n", CLI_U64, &o->n, .min = 1, .max = DOT_MAX_N),
      CLI_OPT("seed", CLI_U64, &o->seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("trace", CLI_OUTPUT, &o->trace),
      CLI_OPT("json", CLI_FLAG, &o->json),
      {0}};
  return cli_parse("dot", argc, argv, opts, dot_help);
}

int cmd_dot(int argc, char **argv) {
  dot_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  if (cli_check_only()) return cli_checked("dot");

  /* inputs */
  uint16_t *a = calloc(o.n, sizeof *a), *b = calloc(o.n, sizeof *b);
  vmodel_t *m = arith_top_new(o.seed);
  char err[256];
  if (!a || !b || !m) {
    rc = cli_fail("dot", "out of memory");
    goto out;
  }
  rng_t rng;
  rng_seed(&rng, o.seed);
  for (uint64_t i = 0; i < o.n; i++) {
    a[i] = rng_bf16(&rng, -2, 1);
    b[i] = rng_bf16(&rng, -2, 1);
  }
  /* run */
  if (o.trace && vmodel_trace_open(m, outfile_temp_fst(o.trace), err, sizeof err) != 0) {
    rc = cli_usage_error("dot", "--trace: %s", err);
    goto out;
  }
  stopwatch_t w;
  stopwatch_start(&w);
  arith_dot_result_t r = arith_dot_run(m, a, b, o.n);
  double secs = stopwatch_seconds(&w);
  /* check */
  uint32_t golden = arith_golden_dot(a, b, o.n);
  uint16_t golden_bf16 = arith_golden_fp32_to_bf16(golden);
  bool exact = golden == r.sum_fp32 && golden_bf16 == r.sum_bf16;
  double reference = 0.0;
  for (uint64_t i = 0; i < o.n; i++) reference += bits_bf16_value(a[i]) * bits_bf16_value(b[i]);
  /* report */
  report_t rep;
  report_init(&rep);
  report_u64(&rep, "n", o.n);
  report_u64(&rep, "seed", o.seed);
  report_u64(&rep, "cycles", r.cycles);
  report_u64(&rep, "sum_fp32_bits", r.sum_fp32);
  report_f64(&rep, "sum_fp32", bits_fp32_value(r.sum_fp32));
  report_u64(&rep, "sum_bf16_bits", r.sum_bf16);
  report_f64(&rep, "sum_bf16", bits_bf16_value(r.sum_bf16));
  report_f64(&rep, "float64_reference", reference);
  report_bool(&rep, "bit_exact", exact);
  report_f64(&rep, "sim_cycles_per_s", secs > 0 ? (double)r.cycles / secs : 0.0);
  report_line(&rep, "bf16 dot product, n = {n}, seed {seed}");
  report_line(&rep, "  RTL sum (fp32)     0x{sum_fp32_bits:%08x}  = {sum_fp32:%.9g}");
  report_line(&rep, "  RTL sum (bf16)     0x{sum_bf16_bits:%04x}      = {sum_bf16:%.9g}");
  report_line(&rep, "  float64 reference              = {float64_reference:%.9g}");
  report_line(&rep, "  golden model       {bit_exact?agrees on every bit|DISAGREES}");
  report_line(&rep, "  cycles             {cycles} (n + 2: multiply, add chain, convert)");
  if (report_print(&rep, o.json, stdout))
    rc = cli_fail("dot", "cannot write the report");
  else if (!exact)
    rc = cli_fail("dot", "RTL 0x%08" PRIx32 "/0x%04" PRIx16 " != golden 0x%08" PRIx32 "/0x%04" PRIx16, r.sum_fp32,
                  r.sum_bf16, golden, golden_bf16);
  else
    rc = CLI_EXIT_OK;
out:
  vmodel_free(m);
  free(a);
  free(b);
  return rc;
}
