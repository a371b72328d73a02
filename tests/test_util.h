/*
 * test_util: helpers shared by the Criterion suites.
 *
 * The reset-randomisation seed of every RTL model built in a test comes from the
 * environment variable TPU_SEED (Criterion's argv never reaches the model); `make test`
 * runs each RTL suite once per seed in SEEDS. Operand streams derive from the same seed,
 * so each seed also covers different data.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>

static inline uint64_t test_seed(void) {
  const char *s = getenv("TPU_SEED");
  if (!s || !*s) return 1;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  return *end ? 1 : (uint64_t)v;
}

#endif
