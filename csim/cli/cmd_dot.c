/*
 * cmd_dot: `tpusim dot`, the foundation's demo. A bf16 dot product streams through the
 * RTL arithmetic units: the multiplier takes one pair per cycle, the adder folds each
 * product into the fp32 running sum (a serial chain, one add per cycle thanks to the
 * adder's 1-cycle latency), and the converter rounds the sum to bf16. The C golden model
 * runs the same order and must agree on every bit.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "golden/arith_golden.h"
#include "util/bits.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/rng.h"
#include "vmodel/arith_top.h"

#define DOT_MAX_N (1u << 20)

typedef struct {
  uint64_t n, seed;
  const char *trace;
  bool json;
} dot_opts_t;

typedef struct {
  uint32_t sum_fp32;
  uint16_t sum_bf16;
  uint64_t cycles;
} dot_result_t;

static void dot_help(void) {
  printf("usage: tpusim dot [--n N] [--seed S] [--trace FILE.fst] [--json]\n\n"
         "Streams a random bf16 dot product of length N (default 32, at most %u) through\n"
         "the RTL multiply, add and convert units and checks it against the golden model.\n"
         "Exit status: 0 bit-exact, 1 mismatch or run failure, 2 bad usage.\n",
         DOT_MAX_N);
}

typedef struct {
  int mul_valid, mul_a, mul_b, mul_product;
  int add_valid, add_a, add_b, add_sum;
  int cvt_valid, cvt_a, cvt_result;
} arith_ports_t;

static arith_ports_t lookup_ports(const vmodel_t *m) {
  arith_ports_t p = {
      vmodel_port(m, "mul_valid_i"), vmodel_port(m, "mul_a_i"),   vmodel_port(m, "mul_b_i"),
      vmodel_port(m, "mul_product_o"), vmodel_port(m, "add_valid_i"), vmodel_port(m, "add_a_i"),
      vmodel_port(m, "add_b_i"),     vmodel_port(m, "add_sum_o"), vmodel_port(m, "cvt_valid_i"),
      vmodel_port(m, "cvt_a_i"),     vmodel_port(m, "cvt_result_o"),
  };
  return p;
}

/* Cycle i (0..n) feeds pair i to the multiplier and product i-1 with the running sum to
 * the adder; one more cycle converts the sum: n + 2 cycles after reset. */
static dot_result_t run_rtl(vmodel_t *m, const uint16_t *a, const uint16_t *b, uint64_t n) {
  arith_ports_t p = lookup_ports(m);
  vmodel_poke(m, p.mul_valid, 0);
  vmodel_poke(m, p.add_valid, 0);
  vmodel_poke(m, p.cvt_valid, 0);
  vmodel_reset(m, 2);
  uint64_t start = vmodel_cycle(m);
  uint32_t sum = 0;
  for (uint64_t i = 0; i <= n; i++) {
    vmodel_poke(m, p.mul_valid, i < n);
    if (i < n) {
      vmodel_poke(m, p.mul_a, a[i]);
      vmodel_poke(m, p.mul_b, b[i]);
    }
    vmodel_poke(m, p.add_valid, i > 0);
    if (i > 0) {
      vmodel_poke(m, p.add_a, sum);
      vmodel_poke(m, p.add_b, vmodel_peek(m, p.mul_product));
    }
    vmodel_step(m, 1);
    if (i > 0) sum = (uint32_t)vmodel_peek(m, p.add_sum);
  }
  vmodel_poke(m, p.mul_valid, 0);
  vmodel_poke(m, p.add_valid, 0);
  vmodel_poke(m, p.cvt_valid, 1);
  vmodel_poke(m, p.cvt_a, sum);
  vmodel_step(m, 1);
  vmodel_poke(m, p.cvt_valid, 0);
  dot_result_t r = {sum, (uint16_t)vmodel_peek(m, p.cvt_result), vmodel_cycle(m) - start};
  vmodel_step(m, 1);  /* let the trace show the idle state */
  return r;
}

static int parse(int argc, char **argv, dot_opts_t *o) {
  static const struct option longopts[] = {
      {"n", required_argument, 0, 'n'},     {"seed", required_argument, 0, 's'},
      {"trace", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
  *o = (dot_opts_t){.n = 32, .seed = 1};
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'n':
        if (!cli_parse_u64("dot", "--n", optarg, 1, DOT_MAX_N, &o->n)) return CLI_EXIT_USAGE;
        break;
      case 's':
        if (!cli_parse_u64("dot", "--seed", optarg, 0, UINT64_MAX, &o->seed)) return CLI_EXIT_USAGE;
        break;
      case 't': o->trace = optarg; break;
      case 'j': o->json = true; break;
      case 'h': dot_help(); return -1;
      default:
        return cli_usage_error("dot", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("dot", "unexpected argument '%s'", argv[optind]);
  return CLI_EXIT_OK;
}

int cmd_dot(int argc, char **argv) {
  dot_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;

  uint16_t *a = calloc(o.n, sizeof *a), *b = calloc(o.n, sizeof *b);
  vmodel_t *m = arith_top_new(o.seed);
  if (!a || !b || !m) {
    free(a), free(b), vmodel_free(m);
    return cli_fail("dot", "out of memory");
  }
  rng_t rng;
  rng_seed(&rng, o.seed);
  for (uint64_t i = 0; i < o.n; i++) {
    a[i] = rng_bf16(&rng, -2, 1);
    b[i] = rng_bf16(&rng, -2, 1);
  }

  char err[256];
  if (o.trace && vmodel_trace_open(m, o.trace, err, sizeof err) != 0) {
    free(a), free(b), vmodel_free(m);
    return cli_fail("dot", "%s", err);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  dot_result_t r = run_rtl(m, a, b, o.n);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  vmodel_free(m);

  uint32_t golden = 0;
  double reference = 0.0;
  for (uint64_t i = 0; i < o.n; i++) {
    golden = arith_golden_fp32_add(golden, arith_golden_bf16_mul(a[i], b[i]));
    reference += bits_bf16_value(a[i]) * bits_bf16_value(b[i]);
  }
  uint16_t golden_bf16 = arith_golden_fp32_to_bf16(golden);
  bool exact = golden == r.sum_fp32 && golden_bf16 == r.sum_bf16;
  free(a), free(b);

  if (o.json) {
    json_t j;
    json_begin(&j, stdout);
    json_u64(&j, "n", o.n);
    json_u64(&j, "seed", o.seed);
    json_u64(&j, "cycles", r.cycles);
    json_u64(&j, "sum_fp32_bits", r.sum_fp32);
    json_f64(&j, "sum_fp32", bits_fp32_value(r.sum_fp32));
    json_u64(&j, "sum_bf16_bits", r.sum_bf16);
    json_f64(&j, "sum_bf16", bits_bf16_value(r.sum_bf16));
    json_f64(&j, "float64_reference", reference);
    json_bool(&j, "bit_exact", exact);
    json_f64(&j, "sim_cycles_per_s", secs > 0 ? (double)r.cycles / secs : 0.0);
    json_end(&j);
  } else {
    printf("bf16 dot product, n = %" PRIu64 ", seed %" PRIu64 "\n", o.n, o.seed);
    printf("  RTL sum (fp32)     0x%08" PRIx32 "  = %.9g\n", r.sum_fp32, bits_fp32_value(r.sum_fp32));
    printf("  RTL sum (bf16)     0x%04" PRIx16 "      = %.9g\n", r.sum_bf16, bits_bf16_value(r.sum_bf16));
    printf("  float64 reference              = %.9g\n", reference);
    printf("  golden model       %s\n", exact ? "agrees on every bit" : "DISAGREES");
    printf("  cycles             %" PRIu64 " (n + 2: multiply, add chain, convert)\n", r.cycles);
  }
  if (!exact)
    return cli_fail("dot", "RTL 0x%08" PRIx32 "/0x%04" PRIx16 " != golden 0x%08" PRIx32 "/0x%04" PRIx16,
                    r.sum_fp32, r.sum_bf16, golden, golden_bf16);
  return CLI_EXIT_OK;
}
