/*
 * dataset: labelled examples for training (docs/training.md): the handwritten digits that
 * Debian's python3-sklearn ships (1,797 8x8 images of pixels 0..16, 10 classes, one CSV
 * line each: 64 pixels then the label, gzip-compressed), read with zlib; and synthetic
 * data of any shape. Pixels become fp32 features in [0, 1] (pixel / 16).
 *
 * The reader is strict: a regular file only (a FIFO or device is refused, not waited on),
 * gzip (one member or several in a row, as gzip -d reads them; any other bytes after the last
 * member are refused) or plain text, every line exactly the expected fields, every value in
 * range, at most DATASET_MAX_EXAMPLES lines and DATASET_MAX_BYTES of text (decompressed:
 * exactly that many bytes are read, one more is refused); anything else is refused with a
 * one-line message naming the file, the line and the problem.
 */
#ifndef UTIL_DATASET_H
#define UTIL_DATASET_H

#include <stddef.h>
#include <stdint.h>

#define DATASET_DIGITS_PATH "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"

enum {
  DIGITS_EXAMPLES = 1797,
  DIGITS_FEATURES = 64,
  DIGITS_CLASSES = 10,
  DIGITS_MAX_PIXEL = 16,
  DATASET_MAX_EXAMPLES = 1 << 20,
  DATASET_MAX_BYTES = 64 << 20,
  /* the fixed split: example i is a test example when i % DATASET_TEST_EVERY == DATASET_TEST_EVERY - 1 */
  DATASET_TEST_EVERY = 5,
};

typedef struct {
  unsigned count, features, classes;
  float *x;        /* count x features, row-major */
  uint8_t *label;  /* count, each below classes */
} dataset_t;

/* Reads the digits CSV at path (DATASET_DIGITS_PATH if NULL). 0, or -1 with a message in err
 * (and *d empty). */
int dataset_read_digits(const char *path, dataset_t *d, char *err, size_t errlen);

/* The same from len bytes of CSV text (already decompressed), named `name` in messages. */
int dataset_parse_digits(const char *text, size_t len, const char *name, dataset_t *d, char *err, size_t errlen);

/* count examples of `features` features in [0, 1) and `classes` classes (at least 2), from
 * seed: each class has a random centre and an example is its class's centre plus uniform
 * noise, so a network can learn them. 0, or -1 (sizes out of range, out of memory). */
int dataset_synthetic(unsigned count, unsigned features, unsigned classes, uint64_t seed, dataset_t *d, char *err,
                      size_t errlen);

/* The fixed train/test split (DATASET_TEST_EVERY), in the original order. 0, or -1 when
 * either part would be empty or memory runs out. */
int dataset_split(const dataset_t *all, dataset_t *train, dataset_t *test, char *err, size_t errlen);

void dataset_free(dataset_t *d);

#endif
