/*
 * fuzz_digits: libFuzzer harness for the digits CSV parser (util/dataset.h), `make fuzz`.
 * Any input must be refused with a one-line message and nothing allocated, or accepted with
 * one example per line, every feature in [0, 1] and every label below 10. Seeds:
 * tests/fuzz/corpus/digits.
 */
#include <stdint.h>
#include <string.h>

#include "util/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dataset_t d;
  char err[512];
  if (dataset_parse_digits((const char *)data, size, "input", &d, err, sizeof err)) {
    if (!err[0] || strchr(err, '\n') || d.x || d.label) __builtin_trap();
    return 0;
  }
  size_t lines = 0;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  if (size && data[size - 1] != '\n') lines++;
  if (d.count != lines || d.features != DIGITS_FEATURES || d.classes != DIGITS_CLASSES) __builtin_trap();
  for (size_t i = 0; i < (size_t)d.count * d.features; i++)
    if (!(d.x[i] >= 0 && d.x[i] <= 1)) __builtin_trap();
  for (unsigned e = 0; e < d.count; e++)
    if (d.label[e] >= DIGITS_CLASSES) __builtin_trap();
  dataset_free(&d);
  return 0;
}
