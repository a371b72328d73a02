/* cli: see cli.h. */
#include "util/cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tpusim %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n(see 'tpusim %s --help')\n", cmd);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tpusim %s: error: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return CLI_EXIT_FAIL;
}

bool cli_parse_u64(const char *cmd, const char *opt, const char *text, uint64_t min,
                   uint64_t max, uint64_t *out) {
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  if (!isdigit((unsigned char)*p)) {
    cli_usage_error(cmd, "%s expects an integer in [%llu, %llu], got '%s'", opt,
                    (unsigned long long)min, (unsigned long long)max, text);
    return false;
  }
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno || *end != '\0' || v < min || v > max) {
    cli_usage_error(cmd, "%s expects an integer in [%llu, %llu], got '%s'", opt,
                    (unsigned long long)min, (unsigned long long)max, text);
    return false;
  }
  *out = v;
  return true;
}

bool cli_parse_dims(const char *cmd, const char *opt, const char *shape, const char *text, unsigned min,
                    unsigned max, unsigned *a, unsigned *b) {
  unsigned x, y;
  char tail;
  if (sscanf(text, "%ux%u%c", &x, &y, &tail) != 2 || x < min || y < min || x > max || y > max) {
    cli_usage_error(cmd, "%s expects %s (each dimension must be %u..%u), got '%s'", opt, shape, min, max, text);
    return false;
  }
  *a = x;
  *b = y;
  return true;
}
