/*
 * fuzz_npy: libFuzzer harness for the .npy readers (util/npy.h), `make fuzz`: the N-D reader
 * and the 2-D one on every input. Any input must be refused with a one-line message, or
 * accepted with a sane shape and exactly the input's trailing data bytes as the values; the
 * two readers must agree (the same answer for a rank-2 array, the 2-D reader refusing any
 * other rank). Seeds: tests/fuzz/corpus/npy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal: a message, one line, nothing to free. */
static void check_refused(const char *err, const void *out_data) {
  if (!err[0] || strchr(err, '\n') || out_data) __builtin_trap();
}

/* An accepted array of n values: sane, and the input's last n * 4 bytes themselves
 * (a little-endian host). */
static void check_values(const float *v, size_t n, const uint8_t *data, size_t size) {
  if (!v || n == 0 || n > (1u << 28) || n * 4 > size) __builtin_trap();
  if (memcmp(v, data + size - n * 4, n * 4)) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  npy_matrix_t m;
  npy_array_t a;
  char err[512], err_nd[512];
  const int rc2 = npy_read_f32_2d_mem(data, size, "input", &m, err, sizeof err);
  const int rcn = npy_read_f32_mem(data, size, "input", &a, err_nd, sizeof err_nd);
  if (rc2) check_refused(err, m.data);
  else check_values(m.data, m.rows * m.cols, data, size);
  if (rcn) {
    check_refused(err_nd, a.data);
    if (a.rank || !rc2) __builtin_trap(); /* *out zeroed; the 2-D reader cannot take more */
  } else {
    if (a.rank < 1 || a.rank > NPY_MAX_RANK) __builtin_trap();
    size_t n = 1;
    for (unsigned i = 0; i < NPY_MAX_RANK; i++) {
      if ((i < a.rank) != (a.dims[i] != 0)) __builtin_trap(); /* used dims non-zero, the rest zero */
      if (i < a.rank) n *= a.dims[i];
    }
    check_values(a.data, n, data, size);
    if ((a.rank == 2) != (rc2 == 0)) __builtin_trap();
    if (a.rank == 2 && (m.rows != a.dims[0] || m.cols != a.dims[1])) __builtin_trap();
  }
  if (!rc2) free(m.data);
  if (!rcn) free(a.data);
  return 0;
}
