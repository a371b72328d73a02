/* cli: see cli.h. */
#include "util/cli.h"

#include "util/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tpusim %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'tpusim %s --help')\n", cmd);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

/* (process-wide on purpose: how the one stderr of the process is used) */
static bool quiet_flag, line_open;

int cli_fail(const char *cmd, const char *fmt, ...) {
  if (line_open) fputc('\n', stderr), line_open = false;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tpusim %s: error: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_EXIT_FAIL;
}

bool cli_input_ok(const char *path, char *why, size_t len) {
  struct stat st;
  if (stat(path, &st)) {
    snprintf(why, len, "cannot read '%s': %s", path, strerror(errno));
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(why, len, "cannot read '%s': %s", path, S_ISDIR(st.st_mode) ? "it is a directory" : "not a regular file");
    return false;
  }
  if (access(path, R_OK)) {
    snprintf(why, len, "cannot read '%s': %s", path, strerror(errno));
    return false;
  }
  return true;
}

bool cli_exe_dir(char *dir, size_t len) {
  ssize_t n = readlink("/proc/self/exe", dir, len - 1);
  if (n <= 0 || (size_t)n >= len - 1) return false;
  dir[n] = 0;
  char *slash = strrchr(dir, '/');
  if (!slash) return false;
  *slash = 0;
  return true;
}


void cli_set_quiet(bool quiet) { quiet_flag = quiet; }
bool cli_quiet(void) { return quiet_flag; }
bool cli_progress_tty(void) { return isatty(STDERR_FILENO) == 1; }

void cli_note(const char *fmt, ...) {
  if (quiet_flag) return;
  if (line_open) fputc('\n', stderr), line_open = false;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

void cli_progress(const char *fmt, ...) {
  if (quiet_flag) return;
  const bool tty = cli_progress_tty();
  if (tty) fputs("\r", stderr);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (tty) fputs("\033[K", stderr), line_open = true;
  else fputc('\n', stderr);
  fflush(stderr);
}

bool cli_number(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  const char *p = text;
  /* digits only: strtoull would take leading spaces and a sign (and wrap "-1") */
  if (!isdigit((unsigned char)*p)) return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

bool cli_real(const char *text, double *out) {
  /* a digit or a point first: strtod would take leading spaces, a sign, "inf" and "nan" */
  if (!isdigit((unsigned char)*text) && *text != '.') return false;
  char *end;
  errno = 0;
  const double v = strtod(text, &end);
  if (end == text || *end || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool cli_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  if (cli_number(text, min, max, out)) return true;
  cli_usage_error(cmd, "%s expects an integer in [%llu, %llu], got '%s'", opt, (unsigned long long)min,
                  (unsigned long long)max, text);
  return false;
}

/* "AxB", each a number in [min, max]. */
static bool parse_dims(const char *cmd, const char *opt, const cli_opt_t *o, const char *text) {
  const char *x = strchr(text, 'x');
  char a[32];
  uint64_t va, vb;
  if (x && (size_t)(x - text) < sizeof a) {
    memcpy(a, text, (size_t)(x - text));
    a[x - text] = 0;
    if (cli_number(a, o->min, o->max, &va) && cli_number(x + 1, o->min, o->max, &vb)) {
      ((unsigned *)o->dst)[0] = (unsigned)va;
      ((unsigned *)o->dst)[1] = (unsigned)vb;
      return true;
    }
  }
  cli_usage_error(cmd, "%s expects %s (each dimension must be %llu..%llu), got '%s'", opt, o->shape,
                  (unsigned long long)o->min, (unsigned long long)o->max, text);
  return false;
}

/* The index of `text` among the '|'-separated words of `choices`, or -1. */
static int choice_index(const char *choices, const char *text) {
  size_t n = strlen(text);
  int i = 0;
  for (const char *c = choices; *c; i++) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && !strncmp(c, text, n)) return i;
    if (!bar) break;
    c = bar + 1;
  }
  return -1;
}

/* The '|'-separated words of `choices` as "a, b, c", each after `prefix` (at most one character). */
static void choice_list(const char *choices, const char *prefix, char *list, size_t len) {
  size_t n = 0;
  for (const char *c = choices; *c && n + 4 < len; c++) {
    if (*prefix && (c == choices || c[-1] == '|')) list[n++] = *prefix;
    if (*c == '|') list[n++] = ',', list[n++] = ' ';
    else list[n++] = *c;
  }
  list[n] = 0;
}

bool cli_output_ext(const char *cmd, const char *opt, const char *path, const char *exts) {
  const char *base = strrchr(path, '/'), *dot = strrchr(base ? base + 1 : path, '.');
  if (dot && dot[1] && choice_index(exts, dot + 1) >= 0) return true;
  char list[256];
  choice_list(exts, ".", list, sizeof list);
  cli_usage_error(cmd, "%s '%s': the name must end in %s (the extension says what is written)", opt, path, list);
  return false;
}

static bool parse_value(const char *cmd, const cli_opt_t *o, const char *text) {
  char opt[64];
  snprintf(opt, sizeof opt, "--%s", o->name);
  uint64_t v;
  switch (o->kind) {
    case CLI_FLAG: *(bool *)o->dst = true; return true;
    case CLI_STR: *(const char **)o->dst = text; return true;
    case CLI_INPUT: {
      char why[4200];
      if (!cli_input_ok(text, why, sizeof why)) {
        cli_usage_error(cmd, "%s: %s", opt, why);
        return false;
      }
      if (!outfile_input(cmd, opt, text)) return false;
      *(const char **)o->dst = text;
      return true;
    }
    case CLI_OUTPUT:
      if (!outfile_claim(cmd, opt, text)) return false;
      *(const char **)o->dst = text;
      return true;
    case CLI_U64: return cli_parse_u64(cmd, opt, text, o->min, o->max, (uint64_t *)o->dst);
    case CLI_UINT:
      if (!cli_parse_u64(cmd, opt, text, o->min, o->max, &v)) return false;
      *(unsigned *)o->dst = (unsigned)v;
      return true;
    case CLI_DIMS: return parse_dims(cmd, opt, o, text);
    case CLI_CHOICE: {
      int i = choice_index(o->shape, text);
      if (i >= 0) {
        *(int *)o->dst = i;
        return true;
      }
      char list[256];
      choice_list(o->shape, "", list, sizeof list);
      cli_usage_error(cmd, "unknown %s '%s' (%s)", opt, text, list);
      return false;
    }
    case CLI_CUSTOM: return o->parse(cmd, opt, text, o->dst);
  }
  return false;
}

static bool check_only;

bool cli_check_only(void) { return check_only; }

int cli_checked(const char *cmd) {
  fprintf(stderr, "tpusim %s: the command line and its inputs are valid (--check: nothing simulated)\n", cmd);
  return CLI_EXIT_OK;
}

/* The table entry named exactly `name` (len bytes), or NULL. */
static const cli_opt_t *find_opt(const cli_opt_t *opts, const char *name, size_t len) {
  for (const cli_opt_t *o = opts; o->name; o++)
    if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
  return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, void (*help)(void)) {
  enum { MAX_OPTS = 64 };
  unsigned n = 0;
  for (; opts[n].name; n++)
    if (n == MAX_OPTS) {
      fprintf(stderr, "tpusim %s: too many options in the table\n", cmd);
      abort();
    }
  bool seen[MAX_OPTS] = {false}, seen_check = false;
  check_only = false;
  outfile_reset(); /* (one command line a process; tests parse several) */
  /* Exact long names only (docs/robustness.md, "Command lines"): getopt_long's unambiguous
   * prefixes ("--ste" for --steps) would let a new option silently change an old command line. */
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) || !arg[2]) return cli_usage_error(cmd, "unexpected argument '%s'", arg);
    const char *name = arg + 2, *eq = strchr(name, '=');
    const size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const bool is_help = len == 4 && !strncmp(name, "help", 4), is_check = len == 5 && !strncmp(name, "check", 5);
    if ((is_help || is_check) && eq) return cli_usage_error(cmd, "--%.*s takes no value, got '%s'", (int)len, name, arg);
    if (is_help) {
      help();
      return CLI_HELP;
    }
    if (is_check) {
      if (seen_check) return cli_usage_error(cmd, "--check is given twice");
      seen_check = check_only = true;
      continue;
    }
    const cli_opt_t *o = find_opt(opts, name, len);
    if (!o) return cli_usage_error(cmd, "unknown option '--%.*s'", (int)len, name);
    if (seen[o - opts]) return cli_usage_error(cmd, "--%s is given twice (each option at most once)", o->name);
    seen[o - opts] = true;
    const char *value = NULL;
    if (o->kind == CLI_FLAG) {
      if (eq) return cli_usage_error(cmd, "--%s takes no value, got '%s'", o->name, arg);
    } else if (eq) {
      value = eq + 1;
    } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
      value = argv[++i];
    } else if (i + 1 < argc) { /* (a value that is an option is a forgotten value: --NAME=--x says it is one) */
      return cli_usage_error(cmd, "--%s needs a value, got the option '%s' (--%s=VALUE for a value starting with "
                             "'--')", o->name, argv[i + 1], o->name);
    } else {
      return cli_usage_error(cmd, "--%s needs a value", o->name);
    }
    if (!parse_value(cmd, o, value)) return CLI_EXIT_USAGE;
    if (o->given) *o->given = true;
  }
  return CLI_EXIT_OK;
}
