/*
 * test_util: helpers shared by the Criterion suites.
 *
 * The reset-randomisation seed of every RTL model built in a test comes from the
 * environment variable TPU_SEED (Criterion's argv never reaches the model); `make test`
 * runs each RTL suite once per seed in SEEDS. Operand streams derive from the same seed,
 * so each seed also covers different data. The chips' model comes from TPU_MODEL (rtl,
 * fast or check; rtl when unset): `make test` runs the chip, pod, collective and training
 * suites under each, so every one of them holds the fast model to the same results and
 * cycles, and under check to the RTL in every event of every cycle.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "chip/chip_core.h"
#include "pod/pod.h"

static inline uint64_t test_seed(void) {
  const char *s = getenv("TPU_SEED");
  if (!s || !*s) return 1;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  return *end ? 1 : (uint64_t)v;
}

static inline chip_model_t test_model(void) {
  const char *s = getenv("TPU_MODEL");
  chip_model_t m = CHIP_MODEL_RTL;
  if (s && *s && chip_model_parse(s, &m)) abort(); /* a typo must not quietly test the RTL */
  return m;
}

/* The threads a pod of `rows` rows runs on in this run (TPU_THREADS, pod_config_t.threads; at
 * most rows, a thread taking whole rows): 1 when not set. */
static inline unsigned test_threads(unsigned rows) {
  const char *s = getenv("TPU_THREADS");
  if (!s || !*s) return 1;
  char *end;
  const unsigned long n = strtoul(s, &end, 10);
  if (*end || n == 0 || n > 255) abort(); /* a typo must not quietly test one thread */
  return n < rows ? (unsigned)n : rows;
}

/* The machine a suite's pod tests run on: w x h chips of one rows x cols MXU with the default
 * clock and HBM (each chip's HBM sized to the run), this run's model, reset seed and threads. */
static inline pod_config_t test_machine(unsigned w, unsigned h, unsigned rows, unsigned cols) {
  pod_config_t m = {.size_x = w, .size_y = h, .chip = chip_config_default(rows, cols), .threads = test_threads(h)};
  m.chip.hbm_bytes = 0;
  m.chip.model = test_model();
  m.chip.seed = test_seed();
  return m;
}

#endif
