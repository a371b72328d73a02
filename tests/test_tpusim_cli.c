/*
 * Tests of the `tpusim` command line: exit codes and messages for bad usage, the JSON
 * result of `tpusim dot` (bit-exact, cycle count N + 2 as docs/timing.md states), and no
 * output file left behind by a failed run. Runs build/tpusim (override with TPUSIM).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


typedef struct {
  int status;
  char out[8192];
  char err[8192];
} run_t;

static const char *tpusim(void) {
  const char *p = getenv("TPUSIM");
  return p && *p ? p : "build/tpusim";
}

/* Runs `tpusim ARGS` through the shell, capturing stdout and stderr. */
static run_t run(const char *args) {
  run_t r = {0};
  char errfile[] = "/tmp/tpusim_err_XXXXXX";
  int fd = mkstemp(errfile);
  cr_assert_geq(fd, 0);
  close(fd);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s 2>%s", tpusim(), args, errfile);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(r.out, 1, sizeof r.out - 1, p);
  r.out[n] = 0;
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  FILE *e = fopen(errfile, "r");
  n = fread(r.err, 1, sizeof r.err - 1, e);
  r.err[n] = 0;
  fclose(e);
  unlink(errfile);
  return r;
}

/* Extracts an integer field from a flat JSON object. */
static long long json_int(const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(json, pat);
  cr_assert_not_null(p, "no key %s in %s", key, json);
  return strtoll(p + strlen(pat), NULL, 10);
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
  cr_assert_eq(r.status, 1);
  cr_assert(strstr(r.err, "cannot create trace file '/nonexistent-dir/t.fst'"), "%s", r.err);
  cr_assert_eq(r.out[0], 0);
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
