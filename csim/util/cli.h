/*
 * cli: shared helpers for the `tpusim` commands: strict number parsing and the usage-error
 * convention (message on stderr naming the problem, exit status 2).
 */
#ifndef CLI_H
#define CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1   /* ran, but a check failed or the run could not complete */
#define CLI_EXIT_USAGE 2  /* bad usage or bad input */

/* Prints "tpusim CMD: <message>" and a hint to use --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tpusim CMD: error: <message>"; returns CLI_EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a decimal integer in [min, max]; on error prints a usage error naming the option
 * and returns false. */
bool cli_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min,
                   uint64_t max, uint64_t *out);

/* Parses "AxB" (a pod XxY, an MXU RxC: `shape` names it in messages), each in [min, max];
 * on error prints a usage error naming the option and returns false. */
bool cli_parse_dims(const char *cmd, const char *opt, const char *shape, const char *text, unsigned min,
                    unsigned max, unsigned *a, unsigned *b);

#endif
