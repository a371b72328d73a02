/*
 * cli_run: runs `tpusim ARGS` for the command-line suites (test_tpusim_cli, test_train_cli):
 * its exit status, stdout and stderr, and a field of its flat JSON output. The binary is
 * build/tpusim unless TPUSIM names another (make sanitize runs the ASan build).
 */
#ifndef TESTS_CLI_RUN_H
#define TESTS_CLI_RUN_H

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

static inline const char *tpusim(void) {
  const char *p = getenv("TPUSIM");
  return p && *p ? p : "build/tpusim";
}

/* Runs `tpusim ARGS` through the shell, capturing stdout and stderr. */
static inline run_t run(const char *args) {
  run_t r = {0};
  char errfile[] = "/tmp/tpusim_err_XXXXXX";
  int fd = mkstemp(errfile);
  cr_assert_geq(fd, 0);
  close(fd);
  char cmd[2048];
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
static inline long long json_int(const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(json, pat);
  cr_assert_not_null(p, "no key %s in %s", key, json);
  return strtoll(p + strlen(pat), NULL, 10);
}

#endif
