/* cli: see cli.h. */
#include "util/cli.h"

#include "util/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
  while (isspace((unsigned char)*p)) p++;
  if (!isdigit((unsigned char)*p)) return false;  /* no sign: strtoull would wrap "-1" */
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno || *end != '\0' || v < min || v > max) return false;
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
      size_t n = 0;
      for (const char *c = o->shape; *c && n + 3 < sizeof list; c++) {
        if (*c == '|') list[n++] = ',', list[n++] = ' ';
        else list[n++] = *c;
      }
      list[n] = 0;
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

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, void (*help)(void)) {
  enum { MAX_OPTS = 64, HELP = MAX_OPTS + 1, CHECK = MAX_OPTS + 2 };
  struct option longopts[MAX_OPTS + 3];
  unsigned n = 0;
  for (; opts[n].name; n++) {
    if (n == MAX_OPTS) {
      fprintf(stderr, "tpusim %s: too many options in the table\n", cmd);
      abort();
    }
    longopts[n] = (struct option){opts[n].name, opts[n].kind == CLI_FLAG ? no_argument : required_argument, 0,
                                  (int)n + 1};
  }
  longopts[n] = (struct option){"help", no_argument, 0, HELP};
  longopts[n + 1] = (struct option){"check", no_argument, 0, CHECK};
  longopts[n + 2] = (struct option){0, 0, 0, 0};
  outfile_reset(); /* (one command line a process; tests parse several) */
  opterr = 0;
  optind = 0;  /* 0, not 1: glibc then forgets everything about the last argv it scanned */
  check_only = false;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    if (c == HELP) {
      help();
      return CLI_HELP;
    }
    if (c == CHECK) {
      check_only = true;
      continue;
    }
    if (c < 1 || c > (int)n)
      return cli_usage_error(cmd, "unknown option or missing value: '%s'", argv[optind - 1]);
    const cli_opt_t *o = &opts[c - 1];
    if (!parse_value(cmd, o, optarg)) return CLI_EXIT_USAGE;
    if (o->given) *o->given = true;
  }
  if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
  return CLI_EXIT_OK;
}
