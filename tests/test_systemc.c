/*
 * test_systemc: the SystemC/TLM-2.0 modules (csim/sc/, docs/systemc.md) through their example,
 * build/tpusim_sc: a host that reaches a chip and a 2x2 slice over TLM transactions only must
 * get the results (every bit, against the golden models) and the cycles of the C path
 * (`tpusim gemm`, `tpusim collective`) for the same inputs, under the RTL and the fast model,
 * and the memory map's error paths (--selftest) must answer as docs/systemc.md says: out-of-map
 * addresses, bursts across a region's end, register accesses of the wrong size or alignment or
 * with byte enables, commands to a running chip, a run that times out and the chip running
 * again after it. At --chip v3 the slice's collectives take `tpusim collective`'s cycles: the
 * two share the pod's link model (link rate, wide flits). Inputs and reset seeds follow TPU_SEED.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "test_util.h"

TestSuite(systemc, .timeout = 300);

static const char *tpusim_sc(void) {
  const char *p = getenv("TPUSIM_SC");
  return p && *p ? p : "build/tpusim_sc";
}

static run_t run_sc(const char *args) {
  char line[2048];
  snprintf(line, sizeof line, "%s %s", tpusim_sc(), args);
  return run_shell(line);
}

/* The number after the nth (0-based) "  cycles" line of a report. */
static long long cycles_of(const char *out, int nth) {
  const char *p = out;
  for (int i = 0; i <= nth; i++) {
    p = strstr(p, "\n  cycles");
    cr_assert_not_null(p, "no cycles line %d in:\n%s", nth, out);
    p += 9;
  }
  return strtoll(p, NULL, 10);
}

/* tpusim gemm and tpusim collective, then tpusim_sc with the same options: the same cycles, and
 * every result agreeing with the golden models on both paths. */
static void same_as_c(const char *model, const char *shape, unsigned m, unsigned k, unsigned n, unsigned bytes,
                      const char *algo, unsigned latency) {
  const unsigned long long seed = (unsigned long long)test_seed();
  char args[512];
  snprintf(args, sizeof args, "gemm %s --m %u --k %u --n %u --seed %llu --model %s", shape, m, k, n, seed, model);
  run_t g = run(args);
  cr_assert_eq(g.status, 0, "tpusim %s: %s", args, g.err);
  cr_assert_not_null(strstr(g.out, "golden model    agrees on every bit"), "%s", g.out);
  snprintf(args, sizeof args, "collective --pod 2x2 %s --op allreduce --bytes %u --algo %s --link-latency %u "
           "--seed %llu --model %s", shape, bytes, algo, latency, seed, model);
  run_t c = run(args);
  cr_assert_eq(c.status, 0, "tpusim %s: %s", args, c.err);
  cr_assert_not_null(strstr(c.out, "agrees on every bit of every chip"), "%s", c.out);
  snprintf(args, sizeof args, "%s --m %u --k %u --n %u --bytes %u --algo %s --link-latency %u --seed %llu "
           "--model %s", shape, m, k, n, bytes, algo, latency, seed, model);
  run_t s = run_sc(args);
  cr_assert_eq(s.status, 0, "tpusim_sc %s: %s\n%s", args, s.out, s.err);
  cr_assert_not_null(strstr(s.out, "golden model    agrees on every bit ("), "%s", s.out);
  cr_assert_not_null(strstr(s.out, "golden model    agrees on every bit of every chip"), "%s", s.out);
  cr_assert_not_null(strstr(s.out, "over TLM-2.0"), "%s", s.out);
  cr_assert_eq(cycles_of(s.out, 0), cycles_of(g.out, 0), "GEMM cycles: SystemC %lld, C %lld", cycles_of(s.out, 0),
               cycles_of(g.out, 0));
  cr_assert_eq(cycles_of(s.out, 1), cycles_of(c.out, 0), "all-reduce cycles: SystemC %lld, C %lld",
               cycles_of(s.out, 1), cycles_of(c.out, 0));
}

Test(systemc, rtl_same_results_and_cycles_as_c) { same_as_c("rtl", "--mxu 16x16", 48, 40, 56, 4096, "torus2d", 2); }

Test(systemc, rtl_ring_small_chip) { same_as_c("rtl", "--mxu 4x4", 33, 17, 9, 1028, "ring", 1); }

/* chips of two cores of two MXUs: four queues a chip */
Test(systemc, rtl_two_cores_two_mxus) { same_as_c("rtl", "--mxu 4x4 --mxus 2 --cores 2", 40, 24, 36, 1024, "torus2d", 1); }

Test(systemc, fast_same_results_and_cycles_as_c) { same_as_c("fast", "--mxu 16x16", 100, 70, 50, 65536, "ring", 5); }

Test(systemc, lockstep_same_results_and_cycles_as_c) {
  same_as_c("check", "--mxu 4x4", 20, 24, 28, 2048, "torus2d", 0);
}

/* The slice carries its flits through the pod's link model (pod/pod_link.h), so at --chip v3
 * (two cores of two 128x128 MXUs, 128-byte flits on links of 96 bytes a cycle, the fast model)
 * its collective takes the cycles of `tpusim collective` with the same machine, op and size, and
 * every chip agrees with the golden model. extra: more options for both; algo "" gives none (a
 * broadcast runs no rings). Returns the cycles. */
static long long same_collective_as_c(const char *machine, const char *op, unsigned bytes, const char *algo,
                                      const char *extra) {
  const unsigned long long seed = (unsigned long long)test_seed();
  char args[512], algo_opt[64] = "";
  if (*algo) snprintf(algo_opt, sizeof algo_opt, "--algo %s", algo);
  snprintf(args, sizeof args, "collective %s --pod 2x2 --op %s --bytes %u %s --seed %llu --model fast %s --json",
           machine, op, bytes, algo_opt, seed, extra);
  run_t c = run(args);
  cr_assert_eq(c.status, 0, "tpusim %s: %s", args, c.err);
  cr_assert_not_null(strstr(c.out, "\"correct\":true"), "%s", c.out);
  snprintf(args, sizeof args, "%s --only collective --op %s --bytes %u %s --seed %llu --model fast %s --json",
           machine, op, bytes, algo_opt, seed, extra);
  run_t s = run_sc(args);
  cr_assert_eq(s.status, 0, "tpusim_sc %s: %s\n%s", args, s.out, s.err);
  cr_assert_not_null(strstr(s.out, "\"correct\":true"), "%s", s.out);
  cr_assert_eq(json_int(s.out, "semaphores_left"), 0, "%s", s.out);
  cr_assert_eq(json_int(s.out, "cycles"), json_int(c.out, "cycles"), "%s %s %u bytes: SystemC %lld cycles, C %lld",
               machine, op, bytes, json_int(s.out, "cycles"), json_int(c.out, "cycles"));
  return json_int(c.out, "cycles");
}

/* An all-reduce where the flit width and the link rate decide the cycles: the same machine with
 * a flit a cycle (no serialiser), and with the 64-bit flits a flit a cycle the slice had before it
 * shared the pod's links, take other cycles, and the slice follows the C path in each. */
/* "--machine FILE" for v3 with other links (a preset fixes its links: docs/machines.md). */
static const char *v3_with(const char *name, const char *keys) {
  static char args[2][160];
  static unsigned next;
  char *a = args[next++ % 2], path[128];
  snprintf(path, sizeof path, "/tmp/tpusim_sc_%s_%d.json", name, (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fprintf(f, "{\"preset\": \"v3\", %s}\n", keys);
  cr_assert_eq(fclose(f), 0);
  snprintf(a, sizeof args[0], "--machine %s", path);
  return a;
}

Test(systemc, v3_allreduce_same_cycles_as_c) {
  const long long v3 = same_collective_as_c("--chip v3", "allreduce", 65536, "ring", "");
  const char *wide = v3_with("flit_a_cycle", "\"pod\": {\"link_bytes\": 128}");
  const long long flit_a_cycle = same_collective_as_c(wide, "allreduce", 65536, "ring", "");
  const char *eight = v3_with("narrow", "\"chip\": {\"flit_words\": 1}, \"pod\": {\"link_bytes\": 8}");
  const long long narrow = same_collective_as_c(eight, "allreduce", 65536, "ring", "");
  remove(wide + strlen("--machine ")), remove(eight + strlen("--machine "));
  cr_assert_lt(flit_a_cycle, v3, "96 bytes a cycle must be slower than 128: %lld, %lld", v3, flit_a_cycle);
  cr_assert_lt(v3, narrow, "128-byte flits must be faster than 8-byte ones: %lld, %lld", v3, narrow);
  same_collective_as_c("--chip v3", "allreduce", 4096, "torus2d", "--link-latency 3");
  same_collective_as_c("--machine csim/pod/machines/v3.json", "allreduce", 16384, "torus2d", "");
}

Test(systemc, v3_other_collectives_same_cycles_as_c) {
  same_collective_as_c("--chip v3", "reduce_scatter", 32768, "ring", "");
  same_collective_as_c("--chip v3", "all_gather", 8192, "ring", "");
  same_collective_as_c("--chip v3", "broadcast", 65536, "", "");
}

/* b_transport instead of DMI for HBM: the same results (the way the host moves data is not timed
 * into the chip's cycles). */
Test(systemc, without_dmi_the_same) {
  run_t a = run_sc("--model fast --m 40 --k 32 --n 24 --bytes 2048");
  run_t b = run_sc("--model fast --m 40 --k 32 --n 24 --bytes 2048 --no-dmi");
  cr_assert_eq(a.status, 0, "%s", a.err);
  cr_assert_eq(b.status, 0, "%s", b.err);
  cr_assert_eq(cycles_of(a.out, 0), cycles_of(b.out, 0));
  cr_assert_eq(cycles_of(a.out, 1), cycles_of(b.out, 1));
  cr_assert_not_null(strstr(b.err, "b_transport"), "%s", b.err);
}

/* Every error path of the memory map answers as documented, with a message; the line count is
 * checked so that a case that silently vanished fails. */
static void selftest(const char *model) {
  char args[128];
  snprintf(args, sizeof args, "--selftest --model %s", model);
  run_t r = run_sc(args);
  cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
  cr_assert_null(strstr(r.out, "FAILED"), "%s", r.out);
  int lines = 0;
  for (const char *p = r.out; (p = strstr(p, "selftest ")); p++) lines++;
  cr_assert_eq(lines, 32, "%d cases:\n%s", lines, r.out);
  cr_assert_not_null(strstr(r.out, "selftest: 32 of 32 passed"), "%s", r.out);
  static const char *const want[] = {
      "selftest out_of_map                   TLM_ADDRESS_ERROR_RESPONSE",
      "selftest hbm_burst_crosses_end        TLM_BURST_ERROR_RESPONSE",
      "selftest register_8_bytes             TLM_BURST_ERROR_RESPONSE",
      "selftest register_unaligned           TLM_ADDRESS_ERROR_RESPONSE",
      "selftest register_byte_enables        TLM_BYTE_ENABLE_ERROR_RESPONSE",
      "selftest hbm_byte_enables_data        22 11 22 11 22 11 22 11",
      "selftest start_while_running          TLM_GENERIC_ERROR_RESPONSE",
      "selftest load_while_running           TLM_GENERIC_ERROR_RESPONSE",
      "selftest timeout_reported             failed, timed out, reported",
      "selftest runs_after_timeout           ran, semaphore 1 = 1",
      "selftest slice_crosses_chips          TLM_BURST_ERROR_RESPONSE",
      "selftest slice_timeout_reported       failed, timed out, reported",
      "selftest slice_runs_after_timeout     ran",
  };
  for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++)
    cr_assert_not_null(strstr(r.out, want[i]), "missing \"%s\" in:\n%s", want[i], r.out);
  /* clear messages on stderr, never on stdout */
  cr_assert_not_null(strstr(r.err, "is outside the chip's memory map"), "%s", r.err);
  cr_assert_not_null(strstr(r.err, "crosses the end of HBM"), "%s", r.err);
  cr_assert_not_null(strstr(r.err, "START: the chip is running"), "%s", r.err);
  cr_assert_not_null(strstr(r.err, "timed out after 2000 cycles"), "%s", r.err);
  cr_assert_null(strstr(r.out, "warning"), "%s", r.out);
}

Test(systemc, error_responses_rtl) { selftest("rtl"); }
Test(systemc, error_responses_fast) { selftest("fast"); }

Test(systemc, bad_command_lines) {
  static const char *const bad[][2] = {
      {"--frobnicate", "unknown option --frobnicate"},
      {"--mxu 5x5", "5x5 MXU"},
      {"--mxu 16", "--mxu"},
      {"--bytes 6", "multiple of 4"},
      {"--m 0", "--m"},
      {"--model slow", "--model takes rtl, fast or check"},
      {"--only both", "--only takes gemm or collective"},
      {"--pod 2x2 --bytes 1073741824", "VMEM"},
      {"--chip v4", "--chip takes small|v2|v3"},
      {"--machine /nonexistent.json", "--machine"},
      {"--op all_to_all", "--op takes allreduce, reduce_scatter, all_gather or broadcast"},
      {"--model fast --flit-words 1 --link-bytes 9", "a link of 9 bytes a cycle"},
  };
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    run_t r = run_sc(bad[i][0]);
    cr_assert_eq(r.status, 2, "%s: exit %d\n%s", bad[i][0], r.status, r.err);
    cr_assert_not_null(strstr(r.err, bad[i][1]), "%s: %s", bad[i][0], r.err);
    cr_assert_eq(r.out[0], 0, "%s printed results: %s", bad[i][0], r.out);
  }
  run_t h = run_sc("--help");
  cr_assert_eq(h.status, 0);
  cr_assert_not_null(strstr(h.out, "usage: tpusim_sc"));
}

/* --json: one object a part, with the text's cycles and verdicts. */
Test(systemc, json_lines_match_the_text) {
  run_t t = run_sc("--model fast --m 24 --k 40 --n 16 --bytes 1024");
  run_t j = run_sc("--model fast --m 24 --k 40 --n 16 --bytes 1024 --json");
  cr_assert_eq(t.status, 0, "%s", t.err);
  cr_assert_eq(j.status, 0, "%s", j.err);
  char *second = strchr(j.out, '\n');
  cr_assert_not_null(second, "%s", j.out);
  *second++ = 0;
  cr_assert_not_null(strstr(j.out, "\"part\":\"gemm\""), "%s", j.out);
  cr_assert_not_null(strstr(second, "\"part\":\"collective\""), "%s", second);
  cr_assert_eq(json_int(j.out, "cycles"), cycles_of(t.out, 0));
  cr_assert_eq(json_int(second, "cycles"), cycles_of(t.out, 1));
  cr_assert_not_null(strstr(j.out, "\"bit_exact\":true"), "%s", j.out);
  cr_assert_not_null(strstr(second, "\"correct\":true"), "%s", second);
  cr_assert_eq(json_int(second, "semaphores_left"), 0);
}
