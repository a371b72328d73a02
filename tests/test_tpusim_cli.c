/*
 * Tests of the `tpusim` command line: exit codes and messages for bad usage, the JSON
 * result of `tpusim dot` (bit-exact, cycle count N + 2 as docs/timing.md states), and no
 * output file left behind by a failed run; `tpusim gemm` with random and .npy inputs,
 * its JSON, and every bad-input class (exit 2, a message naming the problem, no output
 * file). Runs build/tpusim (override with TPUSIM).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "golden/arith_golden.h"
#include "golden/mxu_golden.h"
#include "util/npy.h"
#include "cli_run.h"

/* The command line is refused: exit 2, the message names `needle`, nothing on stdout. */
static run_t expect_usage(const char *args, const char *needle) {
  run_t r = run(args);
  cr_expect_eq(r.status, 2, "'%s' exited %d: %s", args, r.status, r.err);
  cr_expect(strstr(r.err, needle), "'%s': expected '%s' in: %s", args, needle, r.err);
  cr_expect_eq(r.out[0], 0, "'%s' printed a result", args);
  return r;
}

TestSuite(tpusim_cli, .timeout = 60);

Test(tpusim_cli, no_command_is_usage_error) {
  run_t r = run("");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "usage:"), "%s", r.err);
}

Test(tpusim_cli, help_lists_commands) {
  run_t r = run("--help");
  cr_assert_eq(r.status, 0);
  cr_assert(strstr(r.out, "dot"), "%s", r.out);
}

Test(tpusim_cli, unknown_command) {
  run_t r = run("frobnicate");
  cr_assert_eq(r.status, 2);
  cr_assert(strstr(r.err, "unknown command 'frobnicate'"), "%s", r.err);
}

Test(tpusim_cli, dot_bad_numbers) {
  const char *bad[] = {"dot --n 0", "dot --n -3", "dot --n 12x", "dot --n 99999999999",
                       "dot --seed abc", "dot --n", "dot --bogus", "dot extra"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    run_t r = run(bad[i]);
    cr_expect_eq(r.status, 2, "'%s' exited %d", bad[i], r.status);
    cr_expect(strstr(r.err, "tpusim dot:"), "'%s' said: %s", bad[i], r.err);
    cr_expect_eq(r.out[0], 0, "'%s' printed a result", bad[i]);
  }
}

Test(tpusim_cli, dot_json_is_bit_exact_and_meets_cycle_contract) {
  for (int n = 1; n <= 257; n += 64) {
    char args[64];
    snprintf(args, sizeof args, "dot --n %d --seed %d --json", n, n);
    run_t r = run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
    cr_assert_eq(json_int(r.out, "cycles"), n + 2, "N + 2 cycles: %s", r.out);
    cr_assert_eq(json_int(r.out, "n"), n);
  }
}

Test(tpusim_cli, dot_same_seed_same_result) {
  run_t a = run("dot --n 100 --seed 42 --json");
  run_t b = run("dot --n 100 --seed 42 --json");
  cr_assert_eq(json_int(a.out, "sum_fp32_bits"), json_int(b.out, "sum_fp32_bits"));
  run_t c = run("dot --n 100 --seed 43 --json");
  cr_assert_neq(json_int(a.out, "sum_fp32_bits"), json_int(c.out, "sum_fp32_bits"));
}

Test(tpusim_cli, dot_trace_unwritable_fails_cleanly) {
  run_t r = run("dot --n 4 --trace /nonexistent-dir/t.fst");
  cr_assert_eq(r.status, 2, "an output that cannot be written is bad usage: %s", r.err);
  cr_assert(strstr(r.err, "--trace: cannot write '/nonexistent-dir/t.fst'"), "%s", r.err);
  cr_assert_eq(r.out[0], 0);
}

/* One exit-code rule (docs/robustness.md), stated in every command's --help. */
Test(tpusim_cli, every_help_states_the_exit_code_rule) {
  const char *cmds[] = {"dot", "gemm", "net", "chip", "collective", "step"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    char args[64];
    snprintf(args, sizeof args, "%s --help", cmds[i]);
    run_t r = run(args);
    cr_expect_eq(r.status, 0, "%s", args);
    cr_expect(strstr(r.out, "Exit status: 0 success; 1 the run failed") && strstr(r.out, "2 bad usage"),
              "%s does not state the rule: %s", args, r.out);
  }
}

/* Outputs are checked before anything is simulated: each of these exits 2 at once (the
 * unchecked gemm --out used to simulate for seconds, then exit 1). */
Test(tpusim_cli, outputs_are_checked_before_simulating) {
  const char *bad[][2] = {
      {"gemm --mxu 4x4 --m 300 --k 300 --n 300 --out /nonexistent-dir/c.npy", "directory '/nonexistent-dir' does not exist"},
      {"gemm --mxu 4x4 --m 3 --k 3 --n 3 --trace /nonexistent-dir/c.fst", "--trace: cannot write"},
      {"gemm --mxu 4x4 --m 3 --k 3 --n 3 --out /tmp", "it is a directory"},
      {"gemm --mxu 4x4 --m 3 --k 3 --n 3 --out /dev/null", "not a regular file"},
      {"gemm --mxu 4x4 --m 3 --k 3 --n 3 --out ''", "an empty path"},
      {"gemm --mxu 4x4 --m 3 --k 3 --n 3 --trace /proc/t.fst", "--trace: cannot write '/proc/t.fst'"},
      {"net --pod 2x2 --trace /nonexistent-dir/r.fst", "--trace: cannot write"},
      {"net --pod 2x2 --sweep --sweep-csv /nonexistent-dir/s.csv", "--sweep-csv: cannot write"},
      {"collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 64 --trace /nonexistent-dir/c.fst", "--trace"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --trace /nonexistent-dir/s.fst", "--trace"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const run_t r = expect_usage(bad[i][0], bad[i][1]);
    cr_expect_null(strstr(r.err, "running"), "'%s' simulated first: %s", bad[i][0], r.err);
  }
}

/* The sweep's plot is found from the binary, not the working directory. */
Test(tpusim_cli, net_sweep_plots_from_any_directory) {
  char dir[] = "/tmp/tpusim_sweep_XXXXXX", exe[4096], cmd[8400], path[4200];
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_not_null(realpath(tpusim(), exe));
  snprintf(cmd, sizeof cmd, "cd %s && %s net --pod 2x2 --sweep --cycles 200 --warmup 20 --sweep-csv s.csv >/dev/null 2>&1",
           dir, exe);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  snprintf(path, sizeof path, "%s/s.png", dir);
  cr_assert_eq(access(path, R_OK), 0, "no plot at %s", path);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}

Test(tpusim_cli, dot_trace_written) {
  char path[] = "/tmp/tpusim_dot_XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  char args[128];
  snprintf(args, sizeof args, "dot --n 8 --trace %s", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  cr_assert_gt(ftell(f), 100);
  fclose(f);
  unlink(path);
}

/* ------------------------------------------------------------------ tpusim gemm */

static char tmpdir[64];

static void make_tmpdir(void) {
  strcpy(tmpdir, "/tmp/tpusim_gemm_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

static const char *tmp(const char *name) {
  static char paths[8][128];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, 128, "%s/%s", tmpdir, name);
  return p;
}

static void write_bytes(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(bytes, 1, len, f), len);
  fclose(f);
}

/* A version 1.0 .npy image with the given header dict and data bytes. */
static void write_npy_raw(const char *path, const char *dict, size_t data_bytes) {
  char buf[4096] = "\x93NUMPY\x01\x00";
  size_t hlen = strlen(dict) + 1, total = 10 + hlen;
  size_t pad = (64 - total % 64) % 64;
  buf[8] = (char)((hlen + pad) & 0xFF);
  buf[9] = (char)((hlen + pad) >> 8);
  memcpy(buf + 10, dict, strlen(dict));
  memset(buf + 10 + strlen(dict), ' ', pad);
  buf[total + pad - 1] = '\n';
  memset(buf + total + pad, 0, data_bytes);
  write_bytes(path, buf, total + pad + data_bytes);
}

static void write_matrix(const char *path, size_t rows, size_t cols, float scale) {
  float *v = malloc(rows * cols * sizeof *v);
  for (size_t i = 0; i < rows * cols; i++) v[i] = scale * (float)((int)(i % 7) - 3) + 0.1f * (float)i;
  char err[256];
  cr_assert_eq(npy_write_f32_2d(path, v, rows, cols, err, sizeof err), 0, "%s", err);
  free(v);
}

TestSuite(tpusim_gemm, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 120);

Test(tpusim_gemm, json_bit_exact_and_contract) {
  run_t r = run("gemm --level mxu --mxu 8x8 --m 20 --k 17 --n 9 --seed 3 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
  cr_assert(strstr(r.out, "\"contract_met\":true"), "%s", r.out);
  cr_assert_eq(json_int(r.out, "cycles"), json_int(r.out, "contract_cycles"));
  cr_assert_eq(json_int(r.out, "tiles"), 3 * 2);
  const char *keys[] = {"\"m\":20", "\"k\":17", "\"n\":9", "\"mxu_rows\":8", "\"mxu_cols\":8",
                        "\"ideal_cycles\":", "\"utilization\":", "\"counters\":{\"compute\":120"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_assert(strstr(r.out, keys[i]), "missing %s in %s", keys[i], r.out);
}

/* B kept transposed: the same product (checked against the golden model of A x B) in the
 * same cycles, on the MXU alone and on a chip with whole tiles. */
Test(tpusim_gemm, transposed_b_same_bits_same_cycles) {
  const char *pairs[][2] = {
      {"gemm --level mxu --mxu 8x8 --m 20 --k 17 --n 9 --seed 3 --json",
       "gemm --level mxu --mxu 8x8 --m 20 --k 17 --n 9 --seed 3 --json --transposed-b"},
      {"gemm --mxu 4x4 --m 9 --k 12 --n 8 --json", "gemm --mxu 4x4 --m 9 --k 12 --n 8 --json --transposed-b"},
  };
  for (int i = 0; i < 2; i++) {
    run_t p = run(pairs[i][0]), t = run(pairs[i][1]);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_assert(strstr(t.out, "\"transposed_b\":true") && strstr(t.out, "\"bit_exact\":true"), "%s", t.out);
    cr_assert(strstr(p.out, "\"transposed_b\":false"), "%s", p.out);
    cr_assert_eq(json_int(t.out, "cycles"), json_int(p.out, "cycles"), "%s\n%s", p.out, t.out);
  }
}

/* A kept transposed (A^T in HBM, its lines made by the chip's transposing DMAs): the same
 * product as from A, bit for bit (the golden model of A x B, and C itself), also with B^T. */
Test(tpusim_gemm, transposed_a_same_bits) {
  const char *flags[] = {"", "--transposed-a", "--transposed-a --transposed-b"};
  const char *outs[] = {"plain.npy", "at.npy", "atbt.npy"};
  for (int i = 0; i < 3; i++) {
    char args[512];
    snprintf(args, sizeof args, "gemm --mxu 16x16 --m 45 --k 37 --n 70 --seed 4 --json %s --out %s", flags[i],
             tmp(outs[i]));
    run_t r = run(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
    cr_assert(strstr(r.out, i ? "\"transposed_a\":true" : "\"transposed_a\":false"), "%s", r.out);
  }
  for (int i = 1; i < 3; i++) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", tmp(outs[0]), tmp(outs[i]));
    cr_assert_eq(system(cmd), 0, "C from %s differs from C from A", outs[i]);
  }
}

Test(tpusim_gemm, chip_level_json) {
  run_t r = run("gemm --mxu 4x4 --m 9 --k 13 --n 6 --hbm-bw 8 --hbm-latency 30 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *keys[] = {"\"level\":\"chip\"", "\"bit_exact\":true", "\"hbm_bytes\":", "\"dma_busy_cycles\":",
                        "\"mxu_busy_cycles\":", "\"utilization\":", "\"hbm_bw\":8", "\"hbm_latency\":30"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_assert(strstr(r.out, keys[i]), "missing %s in %s", keys[i], r.out);
  cr_assert_gt(json_int(r.out, "hbm_bytes"), 2 * (9 * 13 + 13 * 6));
}

Test(tpusim_gemm, chip_epilogue_relu_bf16) {
  run_t r = run("gemm --mxu 4x4 --m 11 --k 7 --n 9 --relu --bf16-out --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
  run_t bad = run("gemm --level mxu --mxu 4x4 --m 4 --k 4 --n 4 --relu");
  cr_assert_eq(bad.status, 2);
  cr_assert(strstr(bad.err, "need --level chip"), "%s", bad.err);
}

Test(tpusim_gemm, npy_in_and_out_bit_exact) {
  write_matrix(tmp("a.npy"), 5, 11, 1.37f);
  write_matrix(tmp("b.npy"), 11, 6, -0.61f);
  char args[512];
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --b %s --out %s --json", tmp("a.npy"),
           tmp("b.npy"), tmp("c.npy"));
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"m\":5") && strstr(r.out, "\"k\":11") && strstr(r.out, "\"n\":6"), "%s", r.out);
  npy_matrix_t a, b, c;
  char err[256];
  cr_assert_eq(npy_read_f32_2d(tmp("a.npy"), &a, err, sizeof err), 0, "%s", err);
  cr_assert_eq(npy_read_f32_2d(tmp("b.npy"), &b, err, sizeof err), 0, "%s", err);
  cr_assert_eq(npy_read_f32_2d(tmp("c.npy"), &c, err, sizeof err), 0, "%s", err);
  cr_assert_eq(c.rows, 5);
  cr_assert_eq(c.cols, 6);
  uint16_t a16[55], b16[66];
  for (size_t i = 0; i < 55; i++) {
    uint32_t bits;
    memcpy(&bits, &a.data[i], 4);
    a16[i] = arith_golden_fp32_to_bf16(bits);
  }
  for (size_t i = 0; i < 66; i++) {
    uint32_t bits;
    memcpy(&bits, &b.data[i], 4);
    b16[i] = arith_golden_fp32_to_bf16(bits);
  }
  uint32_t want[30];
  mxu_golden_gemm(4, 5, 11, 6, a16, b16, want);
  cr_assert_eq(memcmp(want, c.data, sizeof want), 0, "C.npy differs from the golden model");
  free(a.data), free(b.data), free(c.data);
}

/* Runs a gemm that must fail with exit 2, a message containing `needle`, no stdout and no
 * output file. */
static void expect_bad(const char *args, const char *needle) {
  char full[1024];
  snprintf(full, sizeof full, "%s --out %s", args, tmp("out.npy"));
  expect_usage(full, needle);
  cr_expect_eq(access(tmp("out.npy"), F_OK), -1, "'%s' left an output file", args);
}

Test(tpusim_gemm, bad_sizes) {
  expect_bad("gemm --mxu 4x4 --m 0 --k 4 --n 4", "--m expects");
  expect_bad("gemm --mxu 4x4 --m -2 --k 4 --n 4", "--m expects");
  expect_bad("gemm --mxu 4x4 --m 4 --k 4", "missing --n");
  expect_bad("gemm --mxu 4x --m 4 --k 4 --n 4", "--mxu expects RxC");
  expect_bad("gemm --mxu 0x4 --m 4 --k 4 --n 4", "--mxu expects RxC");
  expect_bad("gemm --mxu 5x5 --m 4 --k 4 --n 4", "no chip with a 5x5 MXU");
  expect_bad("gemm --level mxu --mxu 5x5 --m 4 --k 4 --n 4", "no 5x5 MXU");
  expect_bad("gemm --level mxu --mxu 4x4 --m 4096 --k 4 --n 8", "accumulator depth");
  expect_bad("gemm --mxu 8x8 --m 4 --k 4 --n 4", "no chip with a 8x8 MXU");
  expect_bad("gemm --level tpu --m 4 --k 4 --n 4", "unknown --level 'tpu' (chip, mxu)");
  expect_bad("gemm --m 4 --k 4 --n 4 --hbm-bw 0", "--hbm-bw expects");
  expect_bad("gemm --m 4 --k 4 --n 4 --hbm-latency 0", "--hbm-latency expects");
  expect_bad("gemm --mxu 4x4 --m 60000 --k 60000 --n 4", "a chip addresses 4 GiB");
  expect_bad("gemm --mxu 4x4 --m 4000 --k 4000 --n 400", "commands per queue");
  /* the epilogue's VECs make the program larger: the check counts them too */
  expect_bad("gemm --mxu 4x4 --m 4000 --k 192 --n 268 --relu --bf16-out", "a queue holds");
  expect_bad("gemm --mxu 4x4 --m 99999999 --k 4 --n 4", "--m expects");
  expect_bad("gemm --mxu 4x4 --m 4 --k 4 --n 4 --frob", "unknown option");
  expect_bad("gemm --level mxu --mxu 4x8 --m 4 --k 4 --n 8 --transposed-b", "--transposed-b needs a square MXU");
  expect_bad("gemm --mxu 4x8 --m 4 --k 4 --n 8 --transposed-a", "--transposed-a needs a square MXU, not 4x8");
  expect_bad("gemm --mxu 8x4 --m 4 --k 4 --n 8 --transposed-a --transposed-b", "needs a square MXU, not 8x4");
  expect_bad("gemm --level mxu --mxu 4x4 --m 4 --k 4 --n 8 --transposed-a", "--transposed-a needs --level chip");
}

/* Cores, MXUs and the presets (docs/fidelity.md): what each refuses, and what --chip sets. */
Test(tpusim_gemm, cores_mxus_and_presets) {
  expect_bad("gemm --chip v4 --m 4 --k 4 --n 4", "unknown --chip 'v4' (small, v2, v3)");
  expect_bad("gemm --chip v3 --mxu 4x4 --m 4 --k 4 --n 4", "--chip sets the MXU size");
  expect_bad("gemm --chip small --mxus 2 --m 4 --k 4 --n 4", "--chip sets the MXU size");
  expect_bad("gemm --mxu 4x4 --mxus 5 --m 4 --k 4 --n 4", "--mxus expects");
  expect_bad("gemm --mxu 4x4 --cores 3 --m 4 --k 4 --n 4", "--cores expects");
  expect_bad("gemm --mxu 4x4 --mxus 3 --m 4 --k 4 --n 4", "no RTL chip of 1 core(s) with 3 4x4 MXU(s)");
  expect_bad("gemm --chip v3 --m 4 --k 4 --n 4 --model check", "no lockstep chip of 2 core(s) with 2 128x128 MXU(s)");
  expect_bad("gemm --level mxu --mxu 4x4 --mxus 2 --m 4 --k 4 --n 4", "--mxus and --cores need --level chip");
  static const char *const other[][2] = {
      {"collective --chip v9 --pod 2x2 --op allreduce --bytes 64", "unknown --chip 'v9'"},
      {"step --chip v2 --mxu 16x16", "--chip sets the MXU size"},
      {"randprog --mxu 4x4 --cores 2 --model rtl --count 1", "no RTL chip of 2 core(s) with 1 4x4 MXU(s)"},
      {"chip --chip v3 --cores 1", "--chip sets the MXU size"},
  };
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) expect_usage(other[i][0], other[i][1]);
  run_t r = run("gemm --chip v3 --m 64 --k 256 --n 512 --model fast --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *keys[] = {"\"mxu_rows\":128", "\"mxus\":2", "\"cores\":2", "\"clock_mhz\":940", "\"hbm_bw\":957",
                        "\"bit_exact\":true", "\"peak_tflops\":123.2"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_assert(strstr(r.out, keys[i]), "missing %s in %s", keys[i], r.out);
  r = run("gemm --mxu 4x4 --mxus 2 --cores 2 --m 37 --k 29 --n 45 --model check --check-rows 5 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"checked_rows\":5") && strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
}

/* --flit-words: wide ICI flits on the fast model (docs/fidelity.md "ICI"); the presets' 16-word
 * flits; the refusals. */
Test(tpusim_collective, flit_words) {
  static const char *const bad[][2] = {
      {"collective --pod 2x2 --mxu 16x16 --flit-words 2 --op allreduce --bytes 4096", "fast model only"},
      {"collective --pod 2x2 --mxu 16x16 --flit-words 3 --op allreduce --bytes 4096 --model fast", "a power of two"},
      {"collective --pod 2x2 --mxu 4x4 --flit-words 4 --op allreduce --bytes 4096 --model fast", "at most a VMEM line (2 words"},
      {"collective --pod 2x2 --mxu 16x16 --flit-words 32 --op allreduce --bytes 4096 --model fast", "--flit-words expects"},
      {"randprog --mxu 16x16 --flit-words 2 --model fast --count 1", "64-bit flits"},
      {"collective --pod 2x2 --mxu 16x16 --link-bytes 16 --op allreduce --bytes 4096 --model fast", "at most a flit a cycle (8 bytes"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_usage(bad[i][0], bad[i][1]);
  run_t r = run("collective --pod 2x2 --mxu 16x16 --flit-words 4 --op allreduce --bytes 65536 --model fast --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"correct\":true") && strstr(r.out, "\"link_GBps\":30.0"), "%s", r.out);
  r = run("collective --chip v3 --pod 2x2 --op allreduce --bytes 262144 --model fast --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"correct\":true") && strstr(r.out, "\"link_GBps\":90.2"), "%s", r.out);
}

Test(tpusim_gemm, bad_npy_inputs) {
  char args[512];
  write_matrix(tmp("a35.npy"), 3, 5, 1.0f);
  write_matrix(tmp("b42.npy"), 4, 2, 1.0f);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --b %s", tmp("a35.npy"), tmp("b42.npy"));
  expect_bad(args, "inner dimensions disagree");
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --m 4", tmp("a35.npy"));
  expect_bad(args, "disagrees with");

  write_bytes(tmp("text.npy"), "hello, not numpy\n", 17);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("text.npy"));
  expect_bad(args, "not a .npy");

  write_npy_raw(tmp("f8.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 32);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("f8.npy"));
  expect_bad(args, "<f8");

  write_npy_raw(tmp("fo.npy"), "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("fo.npy"));
  expect_bad(args, "Fortran");

  write_npy_raw(tmp("1d.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("1d.npy"));
  expect_bad(args, "dimension");

  write_npy_raw(tmp("short.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 40);
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("short.npy"));
  expect_bad(args, "truncated");

  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --n 3", tmp("missing.npy"));
  expect_bad(args, "missing.npy");
}

Test(tpusim_gemm, unwritable_out_fails_without_partial_file) {
  run_t r = run("gemm --mxu 4x4 --m 3 --k 3 --n 3 --out /nonexistent-dir/c.npy");
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "/nonexistent-dir/c.npy"), "%s", r.err);
  cr_assert_eq(access("/nonexistent-dir/c.npy", F_OK), -1);
}

/* A FIFO as --a is refused, not read: it would block until a writer came (found by a
 * hostile tester); the timeout of the suite would catch a hang. */
Test(tpusim_gemm, fifo_input_is_refused) {
  const char *fifo = tmp("a.fifo");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  char args[512];
  snprintf(args, sizeof args, "gemm --mxu 4x4 --a %s --b %s", fifo, fifo);
  expect_bad(args, "not a regular file");
  /* the reader itself refuses it too (a library caller gets no hang either) */
  npy_matrix_t m;
  char err[256];
  cr_assert_eq(npy_read_f32_2d(fifo, &m, err, sizeof err), -1);
  cr_assert(strstr(err, "not a regular file"), "%s", err);
  cr_assert_eq(npy_read_f32_2d("/dev/zero", &m, err, sizeof err), -1);
  cr_assert(strstr(err, "not a regular file"), "%s", err);
}

/* --hbm-latency is bounded, and at the bound the slowest HBM still finishes (the timeout
 * counts the latency of every DMA: a run cannot time out by construction). */
Test(tpusim_gemm, slowest_hbm_still_finishes) {
  expect_bad("gemm --mxu 4x4 --m 8 --k 8 --n 8 --hbm-latency 10001", "--hbm-latency expects an integer in [1, 10000]");
  run_t r = run("gemm --mxu 4x4 --m 16 --k 12 --n 8 --hbm-latency 10000 --hbm-bw 1 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"bit_exact\":true"), "%s", r.out);
}

/* ------------------------------------------------------------------ tpusim net */

Test(tpusim_cli, net_json_clean_run) {
  run_t r = run("net --pod 4x4 --traffic uniform --rate 0.2 --packet-flits 2 --cycles 500 --warmup 100 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *keys[] = {"\"offered\":", "\"accepted\":", "\"avg_latency\":", "\"p99_latency\":",
                        "\"packets\":", "\"lost\":0", "\"duplicated\":0", "\"corrupted\":0",
                        "\"cycles\":", "\"sim_cycles_per_s\":"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_assert(strstr(r.out, keys[i]), "missing %s in %s", keys[i], r.out);
  cr_assert_gt(json_int(r.out, "packets"), 100);
}

Test(tpusim_cli, net_bad_usage) {
  const char *bad[][2] = {
      {"net --rate 0.1", "missing --pod"},
      {"net --pod 1x4", "each dimension must be 2..255"},
      {"net --pod 256x2", "each dimension must be 2..255"},
      {"net --pod 4x", "--pod expects XxY"},
      {"net --pod 4x4 --rate 1.5", "--rate expects a number in [0, 1]"},
      {"net --pod 4x4 --rate -0.1", "--rate expects a number in [0, 1]"},
      {"net --pod 4x4 --rate abc", "--rate expects a number in [0, 1]"},
      {"net --pod 4x4 --traffic zigzag", "unknown traffic pattern 'zigzag'"},
      {"net --pod 4x8 --traffic transpose", "transpose needs a square pod"},
      {"net --pod 4x4 --packet-flits 0", "--packet-flits expects"},
      {"net --pod 4x4 --vcs 3", "no router with 3 VCs"},
      {"net --pod 4x4 --buf 0", "--buf expects"},
      {"net --pod 4x4 --buf 9", "--buf expects"},
      {"net --pod 4x4 --trace /tmp/x.fst --trace-node 16", "outside the 4x4 pod"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_usage(bad[i][0], bad[i][1]);
}

/* The text of a field's value in a flat JSON object (up to the next comma or brace). */
static void json_text(const char *json, const char *key, char *buf, size_t len) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(json, pat);
  cr_assert_not_null(p, "no key %s in %s", key, json);
  p += strlen(pat);
  size_t n = strcspn(p, ",}");
  cr_assert_lt(n, len);
  memcpy(buf, p, n);
  buf[n] = 0;
}

/* The fast router (--model fast, docs/scale.md) gives the RTL's results to the last digit, and
 * the lockstep (--model check) finds no difference; only the model's name and host time differ. */
Test(tpusim_cli, net_fast_and_check_models_report_what_the_rtl_reports, .timeout = 120) {
  const char *runs[] = {"net --pod 4x4 --traffic uniform --rate 0.3 --packet-flits 2 --cycles 500 --warmup 100 --seed 3",
                        "net --pod 5x3 --traffic tornado --rate 0.9 --vcs 2 --buf 2 --link-latency 2 --cycles 300",
                        "net --pod 4x4 --traffic hotspot --rate 0.5 --packet-flits 4 --buf 1 --cycles 300 --seed 7"};
  const char *fields[] = {"offered", "accepted", "avg_latency", "p50_latency", "p99_latency", "max_latency", "packets",
                          "created", "lost", "duplicated", "corrupted", "misrouted", "saturated", "stuck", "overflow",
                          "cycles"};
  for (unsigned i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char args[512];
    run_t r[3];
    const char *models[] = {"rtl", "fast", "check"};
    for (int m = 0; m < 3; m++) {
      snprintf(args, sizeof args, "%s --model %s --json", runs[i], models[m]);
      r[m] = run(args);
      cr_assert_eq(r[m].status, 0, "%s: %s", args, r[m].err);
      char want[32], got[32];
      snprintf(want, sizeof want, "\"%s\"", models[m]);
      json_text(r[m].out, "model", got, sizeof got);
      cr_assert_str_eq(got, want, "%s", r[m].out);
    }
    for (unsigned k = 0; k < sizeof fields / sizeof fields[0]; k++) {
      char a[64], b[64], c[64];
      json_text(r[0].out, fields[k], a, sizeof a);
      json_text(r[1].out, fields[k], b, sizeof b);
      json_text(r[2].out, fields[k], c, sizeof c);
      cr_expect_str_eq(b, a, "%s: %s fast %s, RTL %s", runs[i], fields[k], b, a);
      cr_expect_str_eq(c, a, "%s: %s check %s, RTL %s", runs[i], fields[k], c, a);
    }
  }
  run_t text = run("net --pod 2x2 --model fast --cycles 100");
  cr_assert_eq(text.status, 0, "%s", text.err);
  cr_assert(strstr(text.out, "fast routers"), "%s", text.out);
}

Test(tpusim_cli, net_model_refusals) {
  expect_usage("net --pod 4x4 --model quick", "unknown --model 'quick' (rtl, fast, check)");
  expect_usage("net --pod 4x4 --model", "--model");
  remove("/tmp/tpusim_net_fast_never.fst");
  expect_usage("net --pod 4x4 --model fast --trace /tmp/tpusim_net_fast_never.fst",
               "--trace needs --model rtl or check: a fast model has no waveform");
  cr_expect_neq(access("/tmp/tpusim_net_fast_never.fst", F_OK), 0, "a refused run wrote its trace");
  expect_usage("net --pod 4x4 --model fast --sweep --trace /tmp/tpusim_net_fast_never.fst", "--trace");
}

Test(tpusim_cli, net_check_model_traces_the_rtl_router) {
  const char *fst = "/tmp/tpusim_net_check_trace.fst";
  remove(fst);
  char args[256];
  snprintf(args, sizeof args, "net --pod 3x3 --rate 0.2 --cycles 100 --warmup 10 --model check --trace %s --trace-node 4", fst);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  struct stat st;
  cr_assert_eq(stat(fst, &st), 0, "no trace written");
  cr_assert_gt(st.st_size, 0);
  remove(fst);
}

Test(tpusim_cli, collective_json_and_bad_input) {
  run_t r = run("collective --pod 2x2 --op allreduce --algo torus2d --bytes 4000 --mxu 4x4 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  const char *keys[] = {"\"cycles\":", "\"time_us\":", "\"algbw_GBps\":", "\"busbw_GBps\":", "\"link_GBps\":",
                        "\"busbw_bound_GBps\":", "\"busbw_fraction\":", "\"correct\":true"};
  for (unsigned i = 0; i < sizeof keys / sizeof keys[0]; i++) cr_expect(strstr(r.out, keys[i]), "%s in %s", keys[i], r.out);
  cr_expect_gt(json_int(r.out, "cycles"), 0);
  expect_usage("collective --pod 4x4 --slice 3,3,2x2 --op allreduce --bytes 64", "outside the 4x4 pod");
  expect_usage("collective --pod 4x4 --slice 0,0,0x2 --op allreduce --bytes 64", "empty");
  expect_usage("collective --pod 4x4 --op allreduce --bytes 6", "multiple of 4");
  expect_usage("collective --pod 4x4 --op allreduce --bytes 5 --bf16-in", "multiple of 2");
  expect_usage("collective --pod 4x4 --op reduce --bytes 64", "unknown --op");
  expect_usage("collective --pod 4x4 --op allreduce --algo tree --bytes 64", "unknown --algo");
  expect_usage("collective --pod 4x4 --op allreduce --bytes 1073741824", "do not fit VMEM");
  expect_usage("collective --pod 6x4 --slice 0,0,3x4 --op allreduce --algo torus2d --bytes 64", "needs wraparound");
  expect_usage("collective --pod 4x1 --op allreduce --algo torus2d --bytes 64", "torus2d needs a slice");
  expect_usage("collective --pod 3x1 --op all_to_all --bytes 16", "equal blocks");
  expect_usage("collective --pod 2x2 --op broadcast --root 4 --bytes 16", "root 4 is outside");
  expect_usage("collective --pod 2x2 --op allreduce --bytes 16 --trace-chip 9 --trace /tmp/x.fst", "outside the 2x2");
  expect_usage("collective --op allreduce --bytes 16", "required");
  /* numbers that wrap or overflow are refused, not taken modulo 2^32 (they used to crash or
   * run a different size) */
  expect_usage("collective --mxu 4x4 --pod 2x2 --op allreduce --bytes 64 --slice -1,0,2x1", "--slice");
  expect_usage("collective --mxu 4x4 --pod 2x2 --op allreduce --bytes 64 --slice 0,4294967295,2x1", "--slice");
  expect_usage("collective --mxu 4294967300x4294967300 --pod 2x2 --op allreduce --bytes 64", "--mxu");
  expect_usage("collective --mxu 4x4 --pod 4294967298x4294967298 --op allreduce --bytes 64", "--pod");
  expect_usage("collective --mxu 4x4 --pod 2x2 --op allreduce --bytes 18446744073709551680", "--bytes");
}

Test(tpusim_cli, step_runs_and_checks) {
  run_t r = run("step --pod 2x2 --mxu 4x4 --m 8 --k 12 --n 8 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_expect(strstr(r.out, "\"correct\":true"), "%s", r.out);
  cr_expect_gt(json_int(r.out, "gemm_cycles"), 0);
  cr_expect_gt(json_int(r.out, "allreduce_cycles"), 0);
  expect_usage("step --pod 4x4 --m 0", "--m");
  expect_usage("step --pod 3x1 --algo torus2d --mxu 4x4 --m 4 --k 4 --n 4", "torus2d");
}

/* The fast models (--model fast, docs/scale.md), of the MXU alone and of the chip: the same JSON
 * as the RTL's but for the host-time fields and the model's name; --model check (the chip's
 * RTL and fast model in lockstep) too. Refused where they cannot be. */
Test(tpusim_gemm, fast_models_report_what_the_rtl_reports) {
  const char *shapes[] = {"--level mxu --mxu 8x8 --m 20 --k 17 --n 9 --seed 3",
                          "--level mxu --mxu 4x8 --m 3 --k 30 --n 33 --seed 5",
                          "--level mxu --mxu 16x16 --m 40 --k 16 --n 50 --seed 6 --transposed-b",
                          "--mxu 4x4 --m 13 --k 22 --n 9 --seed 7 --relu",
                          "--mxu 16x16 --m 40 --k 33 --n 50 --seed 8 --transposed-a --bf16-out"};
  const char *mxu_fields[] = {"cycles", "tiles", "contract_cycles", "readout_cycles", "mismatches", "compute",
                              "weight_load", "weight_stall", "input_stall", "idle"};
  const char *chip_fields[] = {"cycles", "hbm_bytes", "dma_busy_cycles", "mxu_busy_cycles", "compute_commands",
                               "dma_commands", "mismatches", "compute", "weight_load", "weight_stall", "input_stall",
                               "idle"};
  for (int i = 0; i < 5; i++) {
    char a[256], b[256], c[256];
    snprintf(a, sizeof a, "gemm %s --json", shapes[i]);
    snprintf(b, sizeof b, "gemm %s --json --model fast", shapes[i]);
    snprintf(c, sizeof c, "gemm %s --json --model check", shapes[i]);
    const bool chip = !strstr(shapes[i], "--level mxu");
    run_t r = run(a), f = run(b), k = chip ? run(c) : r;
    cr_assert_eq(f.status, 0, "%s: %s", b, f.err);
    cr_assert_eq(k.status, 0, "%s: %s", c, k.err);
    cr_assert(strstr(f.out, "\"model\":\"fast\"") && strstr(r.out, "\"model\":\"rtl\""), "%s\n%s", r.out, f.out);
    cr_assert(strstr(f.out, "\"bit_exact\":true"), "%s", f.out);
    const char *const *fields = chip ? chip_fields : mxu_fields;
    const unsigned nfields = chip ? sizeof chip_fields / sizeof *chip_fields : sizeof mxu_fields / sizeof *mxu_fields;
    for (unsigned n = 0; n < nfields; n++) {
      cr_assert_eq(json_int(f.out, fields[n]), json_int(r.out, fields[n]), "%s: %s differs\n%s\n%s", shapes[i],
                   fields[n], r.out, f.out);
      cr_assert_eq(json_int(k.out, fields[n]), json_int(r.out, fields[n]), "%s: %s differs\n%s\n%s", shapes[i],
                   fields[n], r.out, k.out);
    }
  }
  run_t bad = run("gemm --level mxu --model check --mxu 4x4 --m 4 --k 4 --n 4");
  cr_assert_eq(bad.status, 2);
  cr_assert(strstr(bad.err, "--model check needs --level chip"), "%s", bad.err);
  bad = run("gemm --level mxu --model fast --mxu 4x4 --m 4 --k 4 --n 4 --trace /tmp/never_written.fst");
  cr_assert_eq(bad.status, 2);
  cr_assert(strstr(bad.err, "a fast model has no waveform"), "%s", bad.err);
  bad = run("gemm --model fast --mxu 4x4 --m 4 --k 4 --n 4 --trace /tmp/never_written.fst");
  cr_assert_eq(bad.status, 2);
  cr_assert(strstr(bad.err, "a fast model has no waveform"), "%s", bad.err);
  bad = run("gemm --level mxu --model quick --mxu 4x4 --m 4 --k 4 --n 4");
  cr_assert_eq(bad.status, 2);
  cr_assert(strstr(bad.err, "unknown --model"), "%s", bad.err);
}

/* The pod commands on each model (docs/scale.md): fast chips, chips in lockstep, and mixed pods
 * (--rtl-chips) report what the RTL reports, cycle for cycle; bad model options exit 2. */
Test(tpusim_pod_models, every_model_and_mixed_pods_report_what_the_rtl_reports, .timeout = 240) {
  static const struct {
    const char *args;
    const char *fields[8];
  } runs[] = {
      {"collective --pod 2x2 --mxu 4x4 --op allreduce --algo torus2d --bytes 512 --seed 4",
       {"cycles", "link_flits", "mismatches", "semaphores_left", "float64_bound_violations"}},
      {"collective --pod 3x2 --mxu 4x4 --op all_to_all --bytes 384 --seed 5", {"cycles", "link_flits", "mismatches"}},
      {"step --pod 2x2 --mxu 4x4 --m 8 --k 12 --n 8 --seed 6", {"gemm_cycles", "allreduce_cycles", "total_cycles"}},
      {"train --pod 2x2 --mxu 4x4 --data synthetic --examples 300 --features 8 --classes 4 --hidden 8 --batch 16 "
       "--steps 2",
       {"step_cycles", "compute_cycles", "comm_cycles", "exposed_comm_cycles", "steps_checked"}},
  };
  const char *models[] = {"--model fast", "--model check", "--model fast --rtl-chips 1,3", "--model check --rtl-chips 0-2"};
  for (unsigned i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char args[512];
    snprintf(args, sizeof args, "%s --json", runs[i].args);
    run_t r = run(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    for (unsigned m = 0; m < sizeof models / sizeof models[0]; m++) {
      snprintf(args, sizeof args, "%s %s --json", runs[i].args, models[m]);
      run_t f = run(args);
      cr_assert_eq(f.status, 0, "%s: %s", args, f.err);
      cr_assert(strstr(f.out, "\"correct\":true") || strstr(f.out, "\"reference_bit_exact\":true"), "%s: %s", args,
                f.out);
      for (unsigned k = 0; k < 8 && runs[i].fields[k]; k++)
        cr_expect_eq(json_int(f.out, runs[i].fields[k]), json_int(r.out, runs[i].fields[k]), "%s: %s %lld, RTL %lld",
                     args, runs[i].fields[k], json_int(f.out, runs[i].fields[k]), json_int(r.out, runs[i].fields[k]));
    }
  }
  /* a chip kept on the RTL in a fast pod is traced like any RTL chip */
  const char *fst = "build/tests/tpusim_mixed_pod.fst";
  remove(fst);
  char args[256];
  snprintf(args, sizeof args, "collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips 2 --trace-chip 2 "
           "--trace %s", fst);
  run_t t = run(args);
  cr_assert_eq(t.status, 0, "%s: %s", args, t.err);
  FILE *f = fopen(fst, "rb");
  cr_assert(f != NULL, "no trace of the RTL chip written");
  fclose(f);
  remove(fst);
}

Test(tpusim_pod_models, bad_model_options_are_refused, .timeout = 60) {
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model quick", "unknown --model 'quick'");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips 4", "'4' is not a chip of the 2x2 pod");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips 1-7", "'1-7' is not a chip");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips 3-1", "'3-1' is not a chip");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips x", "'x' is not a chip");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --rtl-chips ,", "has an empty item");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --rtl-chips 1", "needs --model fast or --model check");
  expect_usage("step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --model fast --rtl-chips 9", "not a chip of the 2x2 pod");
  expect_usage("train --pod 2x2 --mxu 4x4 --steps 1 --model fast --rtl-chips -1", "not a chip of the 2x2 pod");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast --trace-chip 1 --trace build/tests/never.fst",
               "no waveform");
  expect_usage("randprog --pod 2x2 --model slow --count 1", "unknown --model");
  expect_usage("chip --mxu 4x4 --model rtl,fast", "unknown --model");
}

/* --threads N (docs/scale.md "Threads"): every pod command reports what one thread reports,
 * field for field but host time; more threads than rows exit 2. */
Test(tpusim_pod_models, threads_report_what_one_thread_reports, .timeout = 240) {
  static const char *const runs[] = {
      "collective --pod 3x4 --mxu 4x4 --op allreduce --algo torus2d --bytes 1536 --seed 4 --model fast",
      "collective --pod 2x2 --mxu 4x4 --op all_gather --bytes 256 --seed 2 --model fast --rtl-chips 3",
      "step --pod 2x3 --mxu 4x4 --m 8 --k 12 --n 8 --seed 6 --model fast",
      "train --pod 2x2 --mxu 4x4 --data synthetic --examples 300 --features 8 --classes 4 --hidden 8 --batch 16 "
      "--steps 2 --model fast",
      "randprog --pod 2x4 --count 30 --seed 9 --model fast",
  };
  static const unsigned threads[] = {3, 2, 3, 2, 4};
  for (unsigned i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char args[512];
    snprintf(args, sizeof args, "%s --json", runs[i]);
    run_t one = run(args);
    cr_assert_eq(one.status, 0, "%s: %s", args, one.err);
    without_host_fields(one.out);
    snprintf(args, sizeof args, "%s --threads %u --json", runs[i], threads[i]);
    run_t many = run(args);
    cr_assert_eq(many.status, 0, "%s: %s", args, many.err);
    without_host_fields(many.out);
    cr_expect_str_eq(many.out, one.out, "%s:\n%s\none thread:\n%s", args, many.out, one.out);
  }
  expect_usage("collective --pod 4x3 --mxu 4x4 --op allreduce --bytes 256 --threads 4",
               "--threads 4: the 4x3 pod has 3 rows, and a thread takes whole rows (at most --threads 3)");
  expect_usage("step --pod 2x1 --mxu 4x4 --m 4 --k 4 --n 4 --threads 2", "has 1 row, and a thread takes whole rows");
  expect_usage("train --pod 2x2 --mxu 4x4 --steps 1 --threads 3", "at most --threads 2");
  expect_usage("randprog --pod 2x2 --count 1 --threads 3", "at most --threads 2");
  expect_usage("collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --threads 0", "--threads");
}

/* ---- profiles (docs/profiling.md) */
#define PROFILE_COLL "collective --pod 2x2 --mxu 4x4 --op allreduce --bytes 256 --model fast"
/* (the files in a directory of their own: tmp()) */
TestSuite(tpusim_profile, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 120);

Test(tpusim_profile, unwritable_profile_is_refused_before_the_run) {
  run_t r = run(PROFILE_COLL " --profile /nonexistent-dir/p.json");
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "/nonexistent-dir/p.json"), "%s", r.err);
  cr_assert(!strstr(r.err, "running"), "the run started: %s", r.err);
  cr_assert_eq(access("/nonexistent-dir/p.json", F_OK), -1);
}

Test(tpusim_profile, chips_outside_the_pod_are_refused_without_a_file) {
  const char *path = tmp("outside.json");
  char args[512];
  snprintf(args, sizeof args, PROFILE_COLL " --profile %s --profile-chips 1,4", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "--profile-chips: '4' is not a chip of the 2x2 pod"), "%s", r.err);
  cr_assert_eq(access(path, F_OK), -1, "a file was left behind");
  r = run(PROFILE_COLL " --profile-chips 0");
  cr_assert_eq(r.status, 2, "%s", r.err);
  cr_assert(strstr(r.err, "needs --profile FILE or --op-profile"), "%s", r.err);
}

Test(tpusim_profile, trace_and_op_profile_in_the_report, .timeout = 120) {
  const char *path = tmp("coll.json");
  char args[512];
  snprintf(args, sizeof args, PROFILE_COLL " --profile %s --profile-chips 0-2 --json", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"profile\":{\"chips\":3,"), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase1_name\":\"allreduce: reduce-scatter\""), "%s", r.out); /* the kernel's phases */
  cr_assert(strstr(r.out, "\"bottleneck_line\":"), "%s", r.out);
  char line[1024];
  snprintf(line, sizeof line, "/usr/bin/python3 scripts/check_trace.py %s", path);
  run_t c = run_shell(line);
  cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
  cr_assert(strstr(c.out, "flows"), "%s", c.out);
  remove(path);
  /* the text report names the bottleneck */
  r = run(PROFILE_COLL " --op-profile");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "op profile"), "%s", r.out);
  cr_assert(strstr(r.out, "  bottleneck: "), "%s", r.out);
}

Test(tpusim_profile, quiet_prints_nothing_on_stderr, .timeout = 120) {
  run_t r = run(PROFILE_COLL " --quiet");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert_str_empty(r.err, "stderr: %s", r.err);
  r = run(PROFILE_COLL);
  cr_assert(strstr(r.err, "collective: 4 chips, 256 bytes each, running..."), "%s", r.err);
}

/* TPUSIM_PROGRESS_SECONDS is read strictly, before anything runs (it was atof: 'abc' or -1
 * were taken silently). */
Test(tpusim_profile, a_bad_progress_interval_is_refused_before_the_run) {
  static const char *const bad[] = {"abc", "-1", "1e9", " 2", "inf"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char line[512];
    snprintf(line, sizeof line, "TPUSIM_PROGRESS_SECONDS='%s' %s dot --n 4", bad[i], tpusim());
    run_t r = run_shell(line);
    cr_expect_eq(r.status, 2, "'%s': %s", bad[i], r.err);
    cr_expect(strstr(r.err, "TPUSIM_PROGRESS_SECONDS is ") && !*r.out, "'%s': %s", bad[i], r.err);
  }
  char ok[512];
  snprintf(ok, sizeof ok, "TPUSIM_PROGRESS_SECONDS=2.5 %s dot --n 4 >/dev/null", tpusim());
  run_t r = run_shell(ok);
  cr_expect_eq(r.status, 0, "%s", r.err);
}

/* Not a terminal: a line per interval (TPUSIM_PROGRESS_SECONDS=0: at every report), in the
 * documented form "CMD: cycle N, T s, R cycles/s[, about S s left][, D/N steps done, last loss L]". */
Test(tpusim_profile, progress_lines_when_not_a_terminal, .timeout = 120) {
  char line[1024];
  snprintf(line, sizeof line, "TPUSIM_PROGRESS_SECONDS=0 %s train --pod 2x1 --dp 2 --mp 1 --mxu 4x4 --batch 8 --steps 3 "
           "--model fast --data synthetic --examples 64 --features 8 --classes 4 --hidden 8 </dev/null", tpusim());
  run_t r = run_shell(line);
  cr_assert_eq(r.status, 0, "%s", r.err);
  unsigned lines = 0;
  for (const char *p = r.err; (p = strstr(p, "train: cycle ")) != NULL; p++) {
    unsigned long long cycles;
    unsigned done, total;
    double secs, rate, left, loss;
    cr_assert_eq(sscanf(p, "train: cycle %llu, %lf s, %lf cycles/s, about %lf s left, %u/%u steps done, last loss %lf",
                        &cycles, &secs, &rate, &left, &done, &total, &loss), 7, "%.200s", p);
    cr_assert_eq(total, 3);
    cr_assert_eq(done, lines + 1);
    lines++;
  }
  cr_assert_eq(lines, 3, "%s", r.err);
  cr_assert(!strchr(r.err, '\r'), "a line updated in place on a file");
}

/* scripts/check_trace.py on a trace: valid, and (needle) holding a track or slice. */
static void expect_valid_trace(const char *path, const char *needle) {
  char line[1024];
  snprintf(line, sizeof line, "/usr/bin/python3 scripts/check_trace.py %s", path);
  run_t c = run_shell(line);
  cr_assert_eq(c.status, 0, "%s%s", c.out, c.err);
  snprintf(line, sizeof line, "grep -c '%s' %s", needle, path);
  c = run_shell(line);
  cr_assert(atoi(c.out) > 0, "no '%s' in %s", needle, path);
}

/* The chip benchmark profiles its GEMM once more after the timed runs: the trace, the op
 * profile in --json with the GEMM's kernel phases, and that run's host time apart. */
Test(tpusim_profile, chip_writes_a_trace_and_reports_the_profile) {
  const char *path = tmp("chip.json");
  char args[512];
  snprintf(args, sizeof args, "chip --mxu 4x4 --cycles 100 --model fast --profile %s --json", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"profile\":{\"chips\":1,"), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase0_name\":\"gemm: fill\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase1_name\":\"gemm: steady state\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase2_name\":\"gemm: drain\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"profiled_gemm_ns_per_cycle\":"), "%s", r.out);
  /* the profiled run is the timed GEMM again: the same cycles */
  cr_assert_eq(json_int(r.out, "total_cycles"), json_int(r.out, "gemm_cycles"), "%s", r.out);
  expect_valid_trace(path, "\"name\":\"gemm\",\"cat\":\"phase\"");
  r = run("chip --mxu 4x4 --cycles 100 --model fast --op-profile");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "the GEMM profiled"), "%s", r.out);
  cr_assert(strstr(r.out, "  bottleneck: "), "%s", r.out);
}

/* Issue 27: `chip --op-profile` reported negative host times ("each waiting chip: -938 ns",
 * "idle_chip_in_pod_ns_per_cycle": -403.67), the waiting chips' cost taken as the difference
 * of two runs timed differently. Every host time is >= 0, in --json and in text, on the fast
 * model (whose waiting chips cost next to nothing, so timing noise decides the sign: each case
 * twice) at 4x4 and the default 16x16, and on the RTL at 4x4 (the RTL at 16x16 takes minutes
 * under valgrind, make memcheck). */
static void expect_no_negative_host_time(const char *args, bool json) {
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
  if (json) {
    unsigned figures = 0;
    for (const char *p = strstr(r.out, "_ns_per_cycle\":"); p; p = strstr(p + 1, "_ns_per_cycle\":")) {
      const double v = strtod(p + strlen("_ns_per_cycle\":"), NULL);
      cr_assert_geq(v, 0, "%s: %.40s", args, p > r.out + 30 ? p - 30 : r.out);
      figures++;
    }
    cr_assert_geq(figures, 5, "%s: %s", args, r.out);
    cr_assert(strstr(r.out, "\"idle_chip_in_pod_ns_per_cycle\":"), "%s", r.out);
    return;
  }
  const char *w = strstr(r.out, "(each waiting chip: ");
  cr_assert_not_null(w, "%s: %s", args, r.out);
  w += strlen("(each waiting chip: ");
  cr_assert(*w >= '0' && *w <= '9', "%s: %.60s", args, w);
  const char *end = strstr(r.out, "op profile");
  for (const char *m = strchr(r.out, '-'); m && (!end || m < end); m = strchr(m + 1, '-'))
    cr_assert(!(m[1] >= '0' && m[1] <= '9'), "%s: a negative figure: %.60s", args, m);
}

Test(tpusim_profile, chip_host_times_are_never_negative, .timeout = 240) { /* (minutes under valgrind) */
  for (unsigned rep = 0; rep < 2; rep++) {
    expect_no_negative_host_time("chip --mxu 4x4 --model fast --op-profile --json", true);
    expect_no_negative_host_time("chip --model fast --op-profile --json", true);
    expect_no_negative_host_time("chip --mxu 4x4 --model fast --op-profile", false);
    expect_no_negative_host_time("chip --model fast --op-profile", false);
  }
  expect_no_negative_host_time("chip --mxu 4x4 --model fast --json", true);
  expect_no_negative_host_time("chip --mxu 4x4 --cycles 2000 --op-profile --json", true);
  expect_no_negative_host_time("chip --mxu 4x4 --cycles 2000 --op-profile", false);
}

/* randprog: each set's run a phase, on the trace's host-phase track and in the op profile. */
Test(tpusim_profile, randprog_writes_a_trace_with_a_phase_per_set) {
  const char *path = tmp("randprog.json");
  char args[512];
  snprintf(args, sizeof args, "randprog --pod 2x2 --count 3 --model fast --profile %s --profile-chips 0,3 --json", path);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"profile\":{\"chips\":2,"), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase0_name\":\"set 0 (valid)\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase2_name\":\"set 2 (mutated)\""), "%s", r.out);
  expect_valid_trace(path, "\"name\":\"set 1 (invalid)\",\"cat\":\"phase\"");
  r = run("randprog --count 2 --model rtl --op-profile");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "set 1 (invalid)"), "%s", r.out);
}

/* The tpusim step's GEMM phase is split by the firmware's marks too (rt_pod_marks' path). */
Test(tpusim_profile, step_splits_its_gemm_into_kernel_phases) {
  run_t r = run("step --pod 2x1 --mxu 4x4 --m 16 --k 16 --n 16 --algo ring --model fast --op-profile --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"phase0_name\":\"gemm: fill\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase1_name\":\"gemm: steady state\""), "%s", r.out);
  cr_assert(strstr(r.out, "\"phase2_name\":\"gemm: drain\""), "%s", r.out);
}

/* Bad profile options on chip and randprog: exit 2 with a message before anything runs, no file. */
Test(tpusim_profile, chip_and_randprog_refuse_bad_profile_options) {
  expect_usage("chip --mxu 4x4 --model fast --profile /nonexistent-dir/p.json", "/nonexistent-dir/p.json");
  expect_usage("randprog --count 1 --model fast --profile /nonexistent-dir/p.json", "/nonexistent-dir/p.json");
  cr_assert_eq(access("/nonexistent-dir/p.json", F_OK), -1);
  const char *path = tmp("bad.json");
  char args[512];
  snprintf(args, sizeof args, "chip --mxu 4x4 --model fast --profile %s --profile-chips 1", path);
  expect_usage(args, "--profile-chips: '1' is not a chip of the 1x1 pod");
  snprintf(args, sizeof args, "randprog --pod 2x2 --count 1 --model fast --profile %s --profile-chips 0,4", path);
  expect_usage(args, "--profile-chips: '4' is not a chip of the 2x2 pod");
  cr_assert_eq(access(path, F_OK), -1, "a file was left behind");
  expect_usage("randprog --count 1 --model fast --profile-chips 0", "needs --profile FILE or --op-profile");
  expect_usage("chip --mxu 4x4 --model fast --profile-chips 0", "needs --profile FILE or --op-profile");
}

/* ------------------------------------------------------------------ machine files */

TestSuite(tpusim_machine, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 120);

/* A path in the suite's directory that lives through a whole table (tmp() reuses 8). */
static const char *machine_path(const char *name) {
  static char paths[32][160];
  static unsigned next;
  char *p = paths[next++ % 32];
  snprintf(p, sizeof paths[0], "%s/%s", tmpdir, name);
  return p;
}

static const char *write_machine(const char *name, const char *text) {
  const char *path = machine_path(name);
  write_bytes(path, text, strlen(text));
  return path;
}

/* --print-machine writes what --machine reads back: the same machine again, nothing simulated. */
Test(tpusim_machine, print_machine_round_trips) {
  run_t first = run("step --chip v3 --pod 2x4 --model fast --link-latency 3 --print-machine");
  cr_assert_eq(first.status, 0, "%s", first.err);
  cr_assert(strstr(first.out, "\"clock_mhz\": 940") && strstr(first.out, "\"x\": 2, \"y\": 4") &&
                strstr(first.out, "\"link_latency\": 3") && strstr(first.out, "\"model\": \"fast\""),
            "%s", first.out);
  char args[512];
  snprintf(args, sizeof args, "step --machine %s --print-machine", write_machine("m.json", first.out));
  run_t again = run(args);
  cr_assert_eq(again.status, 0, "%s", again.err);
  cr_assert_str_eq(again.out, first.out);
}

/* A preset is its file: --chip v3 and --machine v3.json give the same report. */
Test(tpusim_machine, preset_and_its_file_report_the_same) {
  run_t by_name = run("collective --chip v3 --pod 2x2 --op allreduce --bytes 262144 --model fast --json");
  run_t by_file =
      run("collective --machine csim/pod/machines/v3.json --pod 2x2 --op allreduce --bytes 262144 --model fast --json");
  cr_assert_eq(by_name.status, 0, "%s", by_name.err);
  cr_assert_eq(by_file.status, 0, "%s", by_file.err);
  without_host_fields(by_name.out);
  without_host_fields(by_file.out);
  cr_assert_str_eq(by_file.out, by_name.out);
  cr_assert(strstr(by_name.out, "\"link_GBps\":90.2"), "%s", by_name.out);
}

/* Keys left out keep the preset's values; options give what the file leaves out, and an option
 * setting what the file (or its preset) sets is refused, naming the option and the way to vary
 * a machine. */
Test(tpusim_machine, file_then_options) {
  char args[512];
  const char *m = write_machine("p.json", "{\"preset\": \"v2\", \"pod\": {\"x\": 2, \"y\": 2}, \"sim\": {\"model\": \"fast\"}}");
  snprintf(args, sizeof args, "collective --machine %s --link-latency 2 --op allreduce --bytes 4096 --print-machine", m);
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"cores\": 2") && strstr(r.out, "\"clock_mhz\": 700") &&
                strstr(r.out, "\"hbm_bytes_per_cycle\": 857") && strstr(r.out, "\"x\": 2, \"y\": 2") &&
                strstr(r.out, "\"link_latency\": 2"),
            "%s", r.out);
  const char *set_by_file[][2] = {{"--clock-mhz 1000", "--clock-mhz: --machine"}, {"--hbm-bw 8", "--hbm-bw: --machine"},
                                  {"--pod 2x1", "--pod: --machine"}, {"--model rtl", "--model: --machine"},
                                  {"--link-bytes 8", "--link-bytes: --machine"}};
  for (size_t i = 0; i < sizeof set_by_file / sizeof set_by_file[0]; i++) {
    snprintf(args, sizeof args, "collective --machine %s %s --op allreduce --bytes 4096 --print-machine", m,
             set_by_file[i][0]);
    run_t bad = expect_usage(args, set_by_file[i][1]);
    cr_expect(strstr(bad.err, "--print-machine > m.json"), "%s", bad.err);
  }
}

Test(tpusim_machine, bad_machine_files) {
  char args[512];
  const char *fifo = machine_path("fifo.json");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *bad[][2] = {
      {machine_path("missing.json"), "No such file"},
      {tmpdir, "it is a directory"},
      {fifo, "not a regular file"},
      {write_machine("empty.json", ""), "not a machine file"},
      {write_machine("trunc.json", "{\"chip\": {\"mxu_rows\": 16,"), "not a machine file: line 1"},
      {write_machine("text.json", "mxu_rows = 16\n"), "not a machine file"},
      {write_machine("array.json", "[1, 2]"), "a machine file is a JSON object, not an array"},
      {write_machine("top.json", "{\"chips\": {}}"), "unknown key chips"},
      {write_machine("key.json", "{\"chip\": {\"mxu_size\": 16}}"), "unknown key chip.mxu_size"},
      {write_machine("type.json", "{\"chip\": {\"cores\": \"two\"}}"), "chip.cores must be an integer"},
      {write_machine("real.json", "{\"chip\": {\"clock_mhz\": 940.5}}"), "chip.clock_mhz must be an integer"},
      {write_machine("neg.json", "{\"pod\": {\"link_latency\": -1}}"), "pod.link_latency is -1"},
      {write_machine("range.json", "{\"chip\": {\"mxus\": 9}}"), "chip.mxus is 9: it must be in 1..4"},
      {write_machine("section.json", "{\"pod\": 4}"), "\"pod\" must be an object"},
      {write_machine("model.json", "{\"sim\": {\"model\": \"gate\"}}"), "sim.model is \"gate\""},
      {write_machine("preset.json", "{\"preset\": \"v9\"}"), "preset is \"v9\""},
      {write_machine("rtl.json", "{\"chip\": {\"mxu_rows\": 5, \"mxu_cols\": 5}, \"sim\": {\"model\": \"rtl\"}}"),
       "no chip with a 5x5 MXU in this build"},
      {write_machine("flit.json", "{\"chip\": {\"flit_words\": 2}, \"sim\": {\"model\": \"rtl\"}}"), "fast model only"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(args, sizeof args, "collective --machine %s --pod 2x2 --op allreduce --bytes 4096 --json", bad[i][0]);
    run_t r = expect_usage(args, bad[i][1]);
    cr_expect(strstr(r.err, bad[i][0]), "'%s': the message does not name the machine file: %s", args, r.err);
  }
  snprintf(args, sizeof args, "collective --machine %s --chip v3 --pod 2x2 --op allreduce --bytes 4096",
           write_machine("ok.json", "{}"));
  expect_usage(args, "--chip");
  snprintf(args, sizeof args, "gemm --machine %s --m 16 --k 16 --n 16",
           write_machine("pod.json", "{\"pod\": {\"x\": 2, \"y\": 1}}"));
  expect_usage(args, "one chip");
  snprintf(args, sizeof args, "step --machine %s --mxu 4x4 --m 16 --k 16 --n 16",
           write_machine("v3.json", "{\"preset\": \"v3\"}"));
  expect_usage(args, "--machine sets the MXU size");
}

/* ------------------------------------------------------------------ one option grammar */
/* docs/robustness.md, "Command lines": exact long names, each at most once; numbers, shapes and
 * lists with nothing around or between their parts; options that contradict each other, need
 * another or would be ignored refused; --check runs every check the run would. Each case is the
 * issue's (27) command line: exit 2, a message naming the option, nothing simulated, nothing
 * written (the suite's directory stays empty). */

TestSuite(tpusim_grammar, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 120); /* (valgrind: memcheck.sh) */

/* The suite's directory holds nothing: no command of the table wrote a file. */
static void expect_dir_empty(const char *after) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", tmpdir);
  cr_expect_eq(system(cmd), 0, "after '%s' the directory %s is not empty", after, tmpdir);
}

/* expect_usage, then: nothing simulated (no progress line) and nothing written. */
static run_t refused_at_once(const char *args, const char *needle) {
  const run_t r = expect_usage(args, needle);
  cr_expect_null(strstr(r.err, "running"), "'%s' simulated first: %s", args, r.err);
  cr_expect_null(strstr(r.err, "cycle "), "'%s' simulated first: %s", args, r.err);
  expect_dir_empty(args);
  return r;
}

Test(tpusim_grammar, exact_names_once_each) {
  refused_at_once("train --ste 2 --js", "unknown option '--ste'");
  refused_at_once("train --steps 2 --js", "unknown option '--js'");
  refused_at_once("gemm --mxu 4x4 --m 4 --k 4 --n 4 --seed 1 --seed 2", "--seed is given twice");
  refused_at_once("gemm --mxu 4x4 --m 4 --k 4 --n 4 --json --json", "--json is given twice");
  refused_at_once("dot --json=yes", "--json takes no value");
  refused_at_once("dot --trace --json", "--trace needs a value, got the option '--json'");
  refused_at_once("dot -n 4", "unexpected argument '-n'");
  refused_at_once("dot -- --n 4", "unexpected argument '--'");
  /* both value forms work, and say the same */
  run_t a = run("dot --n 16 --seed 3 --json"), b = run("dot --n=16 --seed=3 --json");
  cr_assert_eq(a.status, 0, "%s", a.err);
  cr_assert_eq(b.status, 0, "%s", b.err);
  cr_assert(json_int(a.out, "sum_fp32_bits") == json_int(b.out, "sum_fp32_bits"), "%s\n%s", a.out, b.out);
}

Test(tpusim_grammar, numbers_shapes_and_lists_have_nothing_around_or_between_parts) {
  const char *bad[][2] = {
      {"dot --n ' 4'", "--n expects an integer"},
      {"dot --n '4 '", "--n expects an integer"},
      {"dot --n +4", "--n expects an integer"},
      {"gemm --mxu ' 4x4' --m 4 --k 4 --n 4", "--mxu expects RxC"},
      {"gemm --mxu '4x 4' --m 4 --k 4 --n 4", "--mxu expects RxC"},
      {"gemm --mxu '4 x4' --m 4 --k 4 --n 4", "--mxu expects RxC"},
      {"net --pod 2x2 --rate ' 0.1'", "--rate expects a number"},
      {"net --pod 2x2 --rate '0.1 '", "--rate expects a number"},
      {"train --lr ' 0.5'", "--lr must be"},
      {"train --lr nan", "--lr must be"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --op-profile --profile-chips 1,,2", "--profile-chips '1,,2' has an empty item"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --op-profile --profile-chips ,1", "has an empty item"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --op-profile --profile-chips 1,", "has an empty item"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --model fast --rtl-chips 1,,2", "--rtl-chips '1,,2' has an empty item"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --model fast --rtl-chips 1,", "has an empty item"},
      {"collective --pod 4x4 --slice ' 0,0,2x2' --op allreduce --bytes 64", "--slice expects X0,Y0,WxH"},
      {"collective --pod 4x4 --slice '0, 0,2x2' --op allreduce --bytes 64", "--slice expects X0,Y0,WxH"},
      {"collective --pod 4x4 --slice 0,,0,2x2 --op allreduce --bytes 64", "--slice expects X0,Y0,WxH"},
      {"collective --pod 4x4 --slice 0,0,2x2, --op allreduce --bytes 64", "--slice expects X0,Y0,WxH"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) refused_at_once(bad[i][0], bad[i][1]);
}

/* --chip and --machine fix what they set: an option setting the same value is refused (it was
 * silently lost: --chip v2 --clock-mhz 1000 reported 700 MHz), with the way to vary a machine. */
Test(tpusim_grammar, a_preset_and_an_option_it_sets) {
  const char *bad[][2] = {
      {"step --chip v2 --clock-mhz 1000 --pod 2x2 --m 16 --k 16 --n 16 --model fast", "--clock-mhz: --chip v2 sets the clock"},
      {"gemm --chip v3 --hbm-bw 100 --m 16 --k 16 --n 16 --model fast", "--hbm-bw: --chip v3 sets the HBM bandwidth"},
      {"collective --chip v3 --pod 2x2 --flit-words 1 --op allreduce --bytes 64 --model fast", "--flit-words: --chip v3"},
      {"collective --chip v3 --pod 2x2 --link-bytes 8 --op allreduce --bytes 64 --model fast", "--link-bytes: --chip v3"},
      {"chip --chip small --hbm-latency 5", "--hbm-latency: --chip small"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const run_t r = refused_at_once(bad[i][0], bad[i][1]);
    cr_expect(strstr(r.err, "--print-machine > m.json") && strstr(r.err, "--machine m.json"), "%s", r.err);
  }
  /* what the preset leaves open stays open */
  run_t ok = run("step --chip v3 --pod 2x2 --model fast --link-latency 3 --threads 2 --print-machine");
  cr_assert_eq(ok.status, 0, "%s", ok.err);
}

/* An option that needs another, or that the command or its mode would ignore, is refused. */
Test(tpusim_grammar, needed_and_ignored_options) {
  char args[512];
  snprintf(args, sizeof args, "net --pod 2x2 --sweep-csv %s", tmp("s.csv"));
  refused_at_once(args, "--sweep-csv names the sweep's CSV: it needs --sweep");
  const char *bad[][2] = {
      {"net --pod 2x2 --sweep --rate 0.2", "--rate with --sweep"},
      {"net --pod 2x2 --trace-node 1", "--trace-node needs --trace"},
      {"collective --pod 2x2 --op allreduce --root 3 --bytes 64", "--root is the broadcast's source"},
      {"collective --pod 1x4 --op broadcast --algo torus2d --bytes 64", "--algo: --op broadcast runs no rings"},
      {"collective --pod 2x2 --op all_to_all --algo ring --bytes 64", "--algo: --op all_to_all runs no rings"},
      {"collective --pod 2x2 --op reduce_scatter --algo torus2d --bytes 64", "--algo torus2d is the all-reduce's"},
      {"collective --pod 2x2 --op all_gather --algo torus2d --bytes 64", "--algo torus2d is the all-reduce's"},
      {"collective --pod 2x2 --op all_gather --bf16-in --bytes 64", "bf16 inputs are for reductions"},
      {"collective --pod 2x2 --op allreduce --bytes 64 --trace-chip 1", "--trace-chip needs --trace"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --trace-chip 1", "--trace-chip needs --trace"},
      {"train --pod 2x2 --mxu 4x4 --trace-steps 1", "--trace-chip and --trace-steps need --trace"},
      {"train --pod 2x2 --mxu 4x4 --quiet --print-every 5", "--print-every sets how often"},
      {"gemm --level mxu --mxu 4x4 --hbm-bw 8 --m 4 --k 4 --n 4", "--hbm-bw and --hbm-latency need --level chip"},
      {"gemm --mxu 16x16 --model fast --flit-words 2 --m 4 --k 4 --n 4", "--flit-words and --link-bytes"},
      {"gemm --mxu 16x16 --link-bytes 4 --m 4 --k 4 --n 4", "--flit-words and --link-bytes"},
      {"randprog --print --json --count 1", "--print lists the programs as text"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --profile-chips 1", "--profile-chips picks the chips of a profile"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) refused_at_once(bad[i][0], bad[i][1]);
}

/* --check runs every check the run would: these used to pass --check (or to fail after set-up,
 * exit 1). */
Test(tpusim_grammar, check_refuses_what_the_run_would) {
  const char *bad[][2] = {
      {"step --pod 2x2 --mxu 4x4 --m 16 --k 16 --n 16 --model fast --rtl-chips 0 --mxus 3 --check", "no RTL chip of 1 core(s) with 3"},
      {"step --pod 2x2 --mxu 4x4 --m 16 --k 16 --n 16 --model fast --rtl-chips 0 --flit-words 2 --check", "chips chosen to run the RTL: 2-word flits"},
      {"step --pod 2x2 --m 16 --k 16 --n 16 --model fast --rtl-chips 0 --chip v3 --check", "no RTL chip of 2 core(s) with 2 128x128"},
      {"train --pod 2x2 --mxu 16x16 --steps 1 --model fast --rtl-chips 0 --mxus 3 --check", "chips chosen to run the RTL"},
      {"collective --pod 2x2 --op allreduce --bytes 64 --model fast --rtl-chips 0 --flit-words 2 --check", "chips chosen to run the RTL"},
      {"step --pod 2x2 --mxu 4x4 --m 4 --k 4 --n 4 --op-profile --profile-chips 7 --check", "--profile-chips: '7' is not a chip of the 2x2 pod"},
      {"collective --pod 2x2 --op allreduce --bytes 64 --op-profile --profile-chips 1,,2 --check", "has an empty item"},
      {"train --pod 2x2 --mxu 16x16 --steps 1 --op-profile --profile-chips 9 --check", "'9' is not a chip"},
      {"gemm --mxu 4x4 --m 4 --k 4 --n 4 --op-profile --profile-chips 1 --check", "'1' is not a chip of the 1x1 pod"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) refused_at_once(bad[i][0], bad[i][1]);
  /* and the fast chip with wide flits is what --model fast asks for: valid, and it runs */
  run_t r = run("chip --model fast --flit-words 2 --check");
  cr_assert_eq(r.status, 0, "%s", r.err);
  r = run("chip --model fast --flit-words 2 --cycles 1000 --json");
  cr_assert_eq(r.status, 0, "%s", r.err);
  cr_assert(strstr(r.out, "\"model\":\"fast\""), "%s", r.out);
  refused_at_once("chip --flit-words 2", "2-word flits run on the fast model only");
}

/* Outputs named by extension are checked by it when parsed, not after the run. */
Test(tpusim_grammar, outputs_named_by_their_extension) {
  char args[512];
  const char *bad[][2] = {{"p.xyz", "--plot '"}, {"noext", "--plot '"}, {"p.png.txt", "--plot '"}, {"p.", "--plot '"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --hidden 16 --batch 16 --steps 1 --model fast --plot %s",
             tmp(bad[i][0]));
    const run_t r = expect_usage(args, bad[i][1]);
    cr_expect(strstr(r.err, "must end in .png, .svg, .pdf"), "%s", r.err);
    expect_dir_empty(args);
  }
  snprintf(args, sizeof args, "train --pod 1x1 --mxu 16x16 --plot %s", tmp("p.xyz"));
  refused_at_once(args, "the name must end in .png, .svg, .pdf");
  snprintf(args, sizeof args, "net --pod 2x2 --sweep --sweep-csv %s", tmp("x.txt"));
  const run_t r = refused_at_once(args, "--sweep-csv '");
  cr_expect(strstr(r.err, "must end in .csv"), "%s", r.err);
}

/* --json keeps its promise: one JSON object on stdout, nothing else. */
Test(tpusim_grammar, net_sweep_json_is_one_object) {
  char args[512];
  snprintf(args, sizeof args, "net --pod 2x2 --model fast --sweep --cycles 300 --warmup 50 --json --sweep-csv %s",
           tmp("s.csv"));
  run_t r = run(args);
  cr_assert_eq(r.status, 0, "%s", r.err);
  const size_t n = strlen(r.out);
  cr_assert(n > 2 && r.out[0] == '{' && r.out[n - 2] == '}', "%s", r.out);
  cr_assert_eq(strchr(r.out, '\n'), r.out + n - 1, "more than one line: %s", r.out);
  cr_assert(strstr(r.out, "\"points\":[{\"rate\":0.05") && strstr(r.out, "\"saturated\":"), "%s", r.out);
  cr_assert(strstr(r.out, "\"csv\":\"") && strstr(r.out, "s.csv\""), "%s", r.out);
  cr_assert_null(strstr(r.out, "avg_latency  "), "the text table: %s", r.out);
}
