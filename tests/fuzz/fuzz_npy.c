/*
 * fuzz_npy: libFuzzer harness for the .npy reader (util/npy.h), `make fuzz`. Any input must
 * be refused with a one-line message, or accepted with a sane shape and exactly the
 * input's trailing data bytes as the values. Seeds: tests/fuzz/corpus/npy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  npy_matrix_t m;
  char err[512];
  if (npy_read_f32_2d_mem(data, size, "input", &m, err, sizeof err)) {
    if (!err[0] || strchr(err, '\n') || m.data) __builtin_trap();  /* a message, one line, nothing to free */
    return 0;
  }
  const size_t n = m.rows * m.cols;
  if (!m.data || m.rows == 0 || m.cols == 0 || n > (1u << 28) || n * 4 > size) __builtin_trap();
  if (memcmp(m.data, data + size - n * 4, n * 4)) __builtin_trap();  /* little-endian host: the bytes themselves */
  free(m.data);
  return 0;
}
