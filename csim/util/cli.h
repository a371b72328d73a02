/*
 * cli: what the `tpusim` commands share on the command line: an option table parsed once
 * (strict numbers with ranges, AxB shapes, choices, flags, strings), and the conventions for
 * messages and exit status (a usage error names the problem on stderr and exits 2; a run
 * that fails a check or cannot complete exits 1).
 */
#ifndef UTIL_CLI_H
#define UTIL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1   /* ran, but a check failed or the run could not complete */
#define CLI_EXIT_USAGE 2  /* bad usage, bad input, or an output that cannot be written */
#define CLI_HELP (-1)     /* cli_parse printed the help: exit 0 without running */

/* The rule every command's --help states (docs/robustness.md). */
#define CLI_EXIT_STATUS_HELP                                                                      \
  "Exit status: 0 success; 1 the run failed (a result differs from the golden model, a chip\n"   \
  "error, a timeout, a stuck network, an output that could not be written whole);\n"           \
  "2 bad usage, a bad input file, or an output that cannot be written (all checked before\n"   \
  "anything is simulated). Outputs are written under hidden temporary names beside their\n"    \
  "destinations and renamed into place only when the command succeeds: a failure or a signal\n" \
  "leaves nothing, and no existing file is touched. --check checks the command line and its\n"  \
  "input files and exits without simulating. Options: full names (--name value or\n"          \
  "--name=value), each at most once; options that contradict each other, or that the run\n"   \
  "would ignore, are refused (docs/robustness.md, \"Command lines\").\n"

typedef enum {
  CLI_FLAG,    /* bool: set by the option alone */
  CLI_U64,     /* uint64_t, a decimal integer in [min, max] */
  CLI_UINT,    /* unsigned, a decimal integer in [min, max] (max at most UINT_MAX) */
  CLI_DIMS,    /* unsigned[2] from "AxB", each in [min, max]; `shape` names it ("XxY") */
  CLI_STR,     /* const char *, the text itself */
  CLI_INPUT,   /* const char *, a regular file that can be read (checked as parsed) */
  CLI_OUTPUT,  /* const char *, a file the command will write: claimed as parsed (util/outfile.h:
                  checked, written under a temporary name, renamed into place on success) */
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

/* Parses a command's argv (argv[0] is its name) against opts: "--name value" or "--name=value",
 * exact names only (no abbreviations), each option at most once (docs/robustness.md, "Command
 * lines"). --help calls help() and returns CLI_HELP; any other problem (unknown option, missing
 * or bad value, a repeated option, a positional argument) prints a usage error naming the option
 * and returns CLI_EXIT_USAGE; else CLI_EXIT_OK. Every
 * command also takes --check: cli_check_only() is then true, and the command returns
 * cli_checked() once it has checked everything it would check before simulating. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt_t *opts, void (*help)(void));
bool cli_check_only(void);
int cli_checked(const char *cmd);

/* Prints "tpusim CMD: <message>" and a hint to use --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tpusim CMD: error: <message>"; returns CLI_EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether `path` names a file that can be read (a regular file: not a directory, FIFO or
 * device, which could block or never end). false with the reason in why. (Outputs:
 * util/outfile.h.) */
bool cli_input_ok(const char *path, char *why, size_t len);

/* Whether the file name of `path` ends in a dot and one of the '|'-separated extensions of exts
 * ("png|svg|pdf"), checked when parsed; false after a usage error naming opt and the extensions. */
bool cli_output_ext(const char *cmd, const char *opt, const char *path, const char *exts);

/* The directory holding the running tpusim binary (build/ in the project), for the files
 * that live beside it: false when /proc/self/exe cannot be read. */
bool cli_exe_dir(char *dir, size_t len);

/* Progress and notes on stderr (docs/profiling.md, "Progress"). cli_set_quiet(true) (--quiet)
 * silences both; errors still print. cli_note prints a line. cli_progress shows a run's
 * progress: on a terminal one line kept up to date in place, otherwise a line at most every
 * `every` seconds of the ticker given (the caller's). */
void cli_set_quiet(bool quiet);
bool cli_quiet(void);
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* stderr is a terminal (progress updates a line in place). */
bool cli_progress_tty(void);

/* A decimal integer in [min, max], digits only (no sign, no spaces before or after); false when not. */
bool cli_number(const char *text, uint64_t min, uint64_t max, uint64_t *out);
/* A finite decimal number, e.g. 0.25, .5 or 1e-3: a digit or a point first (no sign, no spaces
 * before or after, no inf or nan); false when not. */
bool cli_real(const char *text, double *out);
/* cli_number with a usage error naming the option. */
bool cli_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min, uint64_t max, uint64_t *out);

#endif
