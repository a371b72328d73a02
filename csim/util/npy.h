/*
 * npy: reads and writes NumPy .npy files holding float32 arrays: N-dimensional ones for
 * `tpusim infer --input/--out` (a model's input and output, e.g. NCHW images), and the 2-D
 * matrices of `tpusim gemm --a/--b/--out` and `tpusim train`.
 *
 * Only the one layout the simulator exchanges is supported: little-endian float32 ('<f4'),
 * C order, 1 to NPY_MAX_RANK dimensions (exactly 2 for the matrix functions), every
 * dimension non-zero and at most 1 GiB of data, read from a regular file only (a FIFO or
 * device is refused, not waited on). The reader accepts format versions 1.0, 2.0 and 3.0
 * and rejects everything else with a one-line message naming the file and the problem; it
 * is written to stay in bounds on arbitrary (hostile) input. The writer produces the same
 * bytes as numpy 1.24's np.save (version 1.0, data aligned to 64 bytes) and replaces the
 * target atomically. The matrix functions are the N-D ones with the rank fixed at 2 and
 * their own messages ("expected a 2-D matrix", "empty matrix").
 */
#ifndef NPY_H
#define NPY_H

#include <stddef.h>
#include <stdint.h>

/* The most dimensions an array may have (a batch of sequences of vectors is 3; NCHW 4). */
#define NPY_MAX_RANK 6

/* A C-ordered array: dims[0..rank-1] are its shape (the rest zero), data holds their
 * product of values, the last dimension varying fastest. */
typedef struct {
  unsigned rank;
  size_t dims[NPY_MAX_RANK];
  float *data;
} npy_array_t;

/* A row-major matrix: element (r, c) is data[r * cols + c]. */
typedef struct {
  size_t rows, cols;
  float *data;
} npy_matrix_t;

/* Reads a .npy holding a little-endian float32 ('<f4') C-ordered array of rank 1 to
 * NPY_MAX_RANK. Returns 0 and fills *out (caller frees out->data with free()), or -1 with a
 * one-line message in err naming the file and the problem (and *out zeroed). err may be
 * NULL or errlen 0 to discard the message. */
int npy_read_f32(const char *path, npy_array_t *out, char *err, size_t errlen);

/* The same from the len bytes at buf (named `name` in messages): for fuzzing the reader. */
int npy_read_f32_mem(const void *buf, size_t len, const char *name, npy_array_t *out, char *err,
                     size_t errlen);

/* Writes a float32 array of shape dims[0..rank-1] (rank 1 to NPY_MAX_RANK) as a version 1.0
 * .npy ('<f4', fortran_order False), as np.save does. Writes to a temporary file in the
 * same directory and renames it into place, so a failure never leaves a partial file at
 * path (and removes the temporary). Returns 0, or -1 with a message in err. Shapes the
 * reader would reject (a zero dimension, over 1 GiB) are refused. */
int npy_write_f32(const char *path, const float *data, unsigned rank, const size_t *dims, char *err,
                  size_t errlen);
/* The same written to path itself, which a failure removes: for a path that is already a
 * temporary (a command's outputs: util/outfile.h). */
int npy_write_f32_file(const char *path, const float *data, unsigned rank, const size_t *dims, char *err,
                       size_t errlen);

/* npy_read_f32 for a 2-D array only: a file of another rank is refused ("has 3 dimensions,
 * expected a 2-D matrix"). */
int npy_read_f32_2d(const char *path, npy_matrix_t *out, char *err, size_t errlen);

/* The same from the len bytes at buf (named `name` in messages): for fuzzing the reader. */
int npy_read_f32_2d_mem(const void *buf, size_t len, const char *name, npy_matrix_t *out, char *err,
                        size_t errlen);

/* npy_write_f32 of a rows x cols matrix (shape (rows, cols)). Empty and over-1-GiB
 * matrices are refused, since the reader would reject them. */
int npy_write_f32_2d(const char *path, const float *data, size_t rows, size_t cols, char *err,
                     size_t errlen);
/* The same written to path itself, which a failure removes (npy_write_f32_file). */
int npy_write_f32_2d_file(const char *path, const float *data, size_t rows, size_t cols, char *err, size_t errlen);

#endif /* NPY_H */
