/*
 * cli: what the `tpusim` commands share on the command line: an option table parsed once
 * (strict numbers with ranges, AxB shapes, choices, flags, strings), and the conventions for
 * messages and exit status (a usage error names the problem on stderr and exits 2; a run
 * that fails a check or cannot complete exits 1).
 */
#ifndef UTIL_CLI_H
#define UTIL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1   /* ran, but a check failed or the run could not complete */
#define CLI_EXIT_USAGE 2  /* bad usage or bad input */
#define CLI_HELP (-1)     /* cli_parse printed the help: exit 0 without running */

typedef enum {
  CLI_FLAG,    /* bool: set by the option alone */
  CLI_U64,     /* uint64_t, a decimal integer in [min, max] */
  CLI_UINT,    /* unsigned, a decimal integer in [min, max] (max at most UINT_MAX) */
  CLI_DIMS,    /* unsigned[2] from "AxB", each in [min, max]; `shape` names it ("XxY") */
  CLI_STR,     /* const char *, the text itself */
  CLI_CHOICE,  /* int: the index of the text in `shape`, "ring|torus2d" */
  CLI_CUSTOM   /* parse(cmd, "--name", text, dst), which prints its own usage error */
} cli_kind_t;

typedef struct {
  const char *name;  /* without the dashes; NULL ends the table */
  cli_kind_t kind;
  void *dst;
  uint64_t min, max;
  const char *shape;
  bool *given;       /* optional: set when the option appears */
  bool (*parse)(const char *cmd, const char *opt, const char *text, void *dst);
} cli_opt_t;

/* One table entry: CLI_OPT("pod", CLI_DIMS, o->pod, .min = 1, .max = 255, .shape = "XxY"); the
 * table ends with {0}. */
#define CLI_OPT(opt_name, opt_kind, ...) {.name = (opt_name), .kind = (opt_kind), .dst = __VA_ARGS__}

/* Parses a command's argv (argv[0] is its name) against opts. --help calls help() and
 * returns CLI_HELP; any other problem (unknown option, missing or bad value, a positional
 * argument) prints a usage error and returns CLI_EXIT_USAGE; else CLI_EXIT_OK. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, void (*help)(void));

/* Prints "tpusim CMD: <message>" and a hint to use --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tpusim CMD: error: <message>"; returns CLI_EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A decimal integer in [min, max], digits only (no sign, no spaces after); false when not. */
bool cli_number(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* The same, with a usage error naming the option. */
bool cli_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out);

#endif
