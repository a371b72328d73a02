/*
 * cli_run: runs `tpusim ARGS` for the command-line suites (test_tpusim_cli, test_train_cli):
 * its exit status, stdout and stderr, and a field of its flat JSON output; any shell line the same way. The binary is
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

/* Runs a shell command line, capturing its exit status, stdout and stderr. */
static inline run_t run_shell(const char *line) {
  run_t r = {0};
  char errfile[] = "/tmp/tpusim_err_XXXXXX";
  int fd = mkstemp(errfile);
  cr_assert_geq(fd, 0);
  close(fd);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s 2>%s", line, errfile);
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

/* Runs `tpusim ARGS` through the shell, capturing stdout and stderr. */
static inline run_t run(const char *args) {
  char line[2048];
  snprintf(line, sizeof line, "%s %s", tpusim(), args);
  return run_shell(line);
}

/* A JSON report without its host-time fields (wall time, rates, peak RSS), in place: what
 * must not depend on how the pod was run (threads, MPI ranks). */
static inline void without_host_fields(char *json) {
  static const char *const host[] = {"\"sim_seconds\":", "\"peak_rss_MB\":", "\"sets_per_minute\":", "\"wall_s\":"};
  for (unsigned k = 0; k < sizeof host / sizeof host[0]; k++) {
    char *p = strstr(json, host[k]);
    if (!p) continue;
    char *end = p + strcspn(p, ",}");
    if (*end == ',') end++;
    memmove(p, end, strlen(end) + 1);
  }
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
