/*
 * npy: reads and writes NumPy .npy files holding 2-D float32 matrices, for
 * `tpusim gemm --a/--b/--out`.
 *
 * Only the one layout the simulator exchanges is supported: little-endian
 * float32 ('<f4'), C order, shape (rows, cols), both dimensions non-zero and
 * at most 1 GiB of data, read from a regular file only (a FIFO or device is refused, not
waited on). The reader accepts format versions 1.0, 2.0 and 3.0
 * and rejects everything else with a one-line message naming the file and the
 * problem; it is written to stay in bounds on arbitrary (hostile) input. The
 * writer produces the same bytes as numpy 1.24's np.save (version 1.0, data
 * aligned to 64 bytes) and replaces the target atomically.
 */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>
#include <stdint.h>

/* A row-major matrix: element (r, c) is data[r * cols + c]. */
typedef struct {
  size_t rows, cols;
  float *data;
} npy_matrix_t;

/* Reads a .npy holding a 2-D little-endian float32 ('<f4') C-ordered array. Returns 0 and
 * fills *out (caller frees out->data with free()), or -1 with a one-line message in err
 * naming the problem (and *out zeroed). err may be NULL or errlen 0 to discard the message. */
int npy_read_f32_2d(const char *path, npy_matrix_t *out, char *err, size_t errlen);

/* The same from the len bytes at buf (named `name` in messages): for fuzzing the reader. */
int npy_read_f32_2d_mem(const void *buf, size_t len, const char *name, npy_matrix_t *out, char *err,
                        size_t errlen);

/* Writes rows x cols float32 values as a version 1.0 .npy ('<f4', fortran_order False,
 * shape (rows, cols)). Writes to a temporary file in the same directory and renames it
 * into place, so a failure never leaves a partial file at path (and removes the
 * temporary). Returns 0, or -1 with a message in err. Empty and over-1-GiB matrices are
 * refused, since the reader would reject them. */
int npy_write_f32_2d(const char *path, const float *data, size_t rows, size_t cols, char *err,
                     size_t errlen);
/* The same written to path itself, which a failure removes: for a path that is already a
 * temporary (a command's outputs: util/outfile.h). */
int npy_write_f32_2d_file(const char *path, const float *data, size_t rows, size_t cols, char *err, size_t errlen);

#endif /* NPY_H */
