/*
 * Tests of the .npy reader and writer (csim/util/npy.c), the 2-D matrix functions and the
 * N-D array ones: bit-exact round trips, byte images built here exactly as numpy 1.24's
 * np.save writes them (so no binary fixtures), the writer's bytes against np.save's itself
 * (one test runs /usr/bin/python3 with numpy, as `make deps` installs it), one test per
 * class of bad input, writer failures, and a fixed-seed fuzz of both readers.
 *
 * Every test gets a fresh directory under /tmp from setup() and teardown() removes it.
 * Criterion runs each test in its own process, so that per-test path can be a static.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/npy.h"

#define TIMEOUT_S 30
#define ERR_LEN 512
#define FUZZ_CASES 20000

/* ------------------------------------------------------------------ temp directory */

static char tmp_dir[64];

static void remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char child[1024];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        remove_tree(child);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void setup(void) {
  strcpy(tmp_dir, "/tmp/npy_test_XXXXXX");
  cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
}

static void teardown(void) { remove_tree(tmp_dir); }

TestSuite(npy, .init = setup, .fini = teardown);

/* Number of entries in dir (without . and ..), their names joined into list for messages. */
static int dir_entries(const char *dir, char *list, size_t listlen) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
  int n = 0;
  list[0] = '\0';
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    n++;
    size_t used = strlen(list);
    snprintf(list + used, listlen - used, "%s%s", used ? " " : "", e->d_name);
  }
  closedir(d);
  return n;
}

static void join(char *dst, size_t len, const char *name) {
  snprintf(dst, len, "%s/%s", tmp_dir, name);
}

static void write_bytes(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
  cr_assert_eq(fwrite(bytes, 1, len, f), len);
  cr_assert_eq(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "fopen %s: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap);
  cr_assert_not_null(buf);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      cr_assert_not_null(buf);
    }
  }
  fclose(f);
  *len = n;
  return buf;
}

/* ------------------------------------------------------------------ data */

static uint64_t xorshift64(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* Bit patterns a float32 copy must not disturb: NaN payloads (quiet and signalling),
 * signed zeros, infinities, subnormals, extreme normals. */
static const uint32_t specials[] = {
    0x7FC00000, 0x7FC00001, 0xFFC12345, 0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF,
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x00400000,
    0x80000001, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
};
#define N_SPECIALS (sizeof specials / sizeof specials[0])

/* n float32 bit patterns: the specials first, then pseudo-random bits. */
static uint32_t *make_bits(size_t n, uint64_t seed) {
  uint32_t *v = malloc(n * sizeof *v);
  cr_assert_not_null(v);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++)
    v[i] = i < N_SPECIALS ? specials[i] : (uint32_t)(xorshift64(&s) >> 16);
  return v;
}

/* The little-endian bytes of n float32 bit patterns, as a .npy stores them. */
static unsigned char *le_bytes(const uint32_t *bits, size_t n) {
  unsigned char *le = malloc(n * 4 + 1);
  cr_assert_not_null(le);
  for (size_t i = 0; i < n; i++)
    for (int b = 0; b < 4; b++) le[4 * i + b] = (unsigned char)(bits[i] >> (8 * b));
  return le;
}

/* ------------------------------------------------------------------ file images */

typedef struct {
  unsigned char *bytes;
  size_t len;
} image_t;

/* A .npy image with the given header dict text, framed as numpy's _wrap_header does:
 * 1..64 spaces and a newline so the data starts at a multiple of 64. data is stored as
 * given (little-endian bytes). */
static image_t image_from_dict(int major, const char *dict, const void *data, size_t data_len) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t dlen = strlen(dict);
  size_t pad = 64 - (prefix + dlen + 1) % 64;
  size_t hlen = dlen + pad + 1;
  image_t img = {malloc(prefix + hlen + data_len + 1), prefix + hlen + data_len};
  cr_assert_not_null(img.bytes);
  unsigned char *p = img.bytes;
  memcpy(p, "\x93NUMPY", 6);
  p[6] = (unsigned char)major;
  p[7] = 0;
  for (size_t i = 0; i < prefix - 8; i++) p[8 + i] = (unsigned char)(hlen >> (8 * i));
  memcpy(p + prefix, dict, dlen);
  memset(p + prefix + dlen, ' ', pad);
  p[prefix + hlen - 1] = '\n';
  if (data_len) memcpy(p + prefix + hlen, data, data_len);
  return img;
}

/* A version 1.0 image whose header is exactly hdr: no padding added. */
static image_t image_raw_header(const char *hdr, const void *data, size_t data_len) {
  size_t hl = strlen(hdr);
  image_t img = {malloc(10 + hl + data_len + 1), 10 + hl + data_len};
  cr_assert_not_null(img.bytes);
  memcpy(img.bytes, "\x93NUMPY\x01\x00", 8);
  img.bytes[8] = (unsigned char)(hl & 0xFF);
  img.bytes[9] = (unsigned char)(hl >> 8);
  memcpy(img.bytes + 10, hdr, hl);
  if (data_len) memcpy(img.bytes + 10 + hl, data, data_len);
  return img;
}

static size_t product(unsigned rank, const size_t *dims) {
  size_t n = 1;
  for (unsigned i = 0; i < rank; i++) n *= dims[i];
  return n;
}

/* The exact bytes numpy 1.24 np.save writes for a C-ordered float32 array: keys sorted,
 * repr of the shape tuple (a trailing comma for one dimension), then (numpy >= 1.23)
 * 21 - len(repr(dims[0])) spaces of room for the first axis to grow, then the 64-byte
 * alignment padding. */
static image_t numpy_image_nd(unsigned rank, const size_t *dims, const uint32_t *bits) {
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (unsigned i = 0; i < rank; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%zu", i ? ", " : "", dims[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", rank == 1 ? "," : "");
  char digits[32];
  int rd = snprintf(digits, sizeof digits, "%zu", dims[0]);
  for (int i = 0; i < 21 - rd; i++) dict[n++] = ' ';
  dict[n] = '\0';
  size_t count = product(rank, dims);
  unsigned char *le = le_bytes(bits, count);
  image_t img = image_from_dict(1, dict, le, count * 4);
  free(le);
  return img;
}

static image_t numpy_image(size_t rows, size_t cols, const uint32_t *bits) {
  const size_t dims[2] = {rows, cols};
  return numpy_image_nd(2, dims, bits);
}

/* Offset of the data in a well-formed image. */
static size_t data_offset(const unsigned char *p) {
  if (p[6] == 1) return 10 + (size_t)(p[8] | p[9] << 8);
  return 12 + (size_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 |
                       (uint32_t)p[11] << 24);
}

/* ------------------------------------------------------------------ checks */

static void expect_matrix(const npy_matrix_t *m, size_t rows, size_t cols, const uint32_t *bits) {
  cr_assert_eq(m->rows, rows);
  cr_assert_eq(m->cols, cols);
  cr_assert_not_null(m->data);
  cr_assert(memcmp(m->data, bits, rows * cols * 4) == 0, "data differs from what was stored");
}

/* Reads img from a file; expects success with the given contents. */
static void expect_reads(const image_t *img, size_t rows, size_t cols, const uint32_t *bits) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "ok.npy");
  write_bytes(path, img->bytes, img->len);
  npy_matrix_t m;
  int rc = npy_read_f32_2d(path, &m, err, sizeof err);
  cr_assert_eq(rc, 0, "read failed: %s", err);
  expect_matrix(&m, rows, cols, bits);
  free(m.data);
}

/* Reads img from a file; expects -1, a one-line message naming the file and holding want,
 * and a zeroed *out. */
static void expect_rejects(const image_t *img, const char *want) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "bad.npy");
  write_bytes(path, img->bytes, img->len);
  npy_matrix_t m = {7, 7, (float *)(void *)path};
  int rc = npy_read_f32_2d(path, &m, err, sizeof err);
  cr_assert_eq(rc, -1, "accepted a bad file (wanted error '%s')", want);
  cr_assert_not_null(strstr(err, want), "message '%s' lacks '%s'", err, want);
  cr_assert_not_null(strstr(err, path), "message '%s' does not name the file", err);
  cr_assert_null(strchr(err, '\n'), "message '%s' is not one line", err);
  cr_assert(m.data == NULL && m.rows == 0 && m.cols == 0);
}

static void reject_dict(int major, const char *dict, size_t data_len, const char *want) {
  unsigned char *zeros = calloc(1, data_len + 1);
  cr_assert_not_null(zeros);
  image_t img = image_from_dict(major, dict, zeros, data_len);
  expect_rejects(&img, want);
  free(img.bytes);
  free(zeros);
}

#define DICT(descr, fortran, shape) \
  "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

/* ------------------------------------------------------------------ round trips */

/* write -> read of random-plus-special data; the file must also be byte-identical to
 * what np.save writes and leave no temporary behind. */
static void round_trip(size_t rows, size_t cols) {
  uint32_t *bits = make_bits(rows * cols, rows * 1000 + cols);
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "m.npy");
  int rc = npy_write_f32_2d(path, (const float *)(const void *)bits, rows, cols, err, sizeof err);
  cr_assert_eq(rc, 0, "write failed: %s", err);

  char list[512];
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 1, "directory holds: %s", list);
  size_t len;
  unsigned char *file = read_bytes(path, &len);
  image_t want = numpy_image(rows, cols, bits);
  cr_assert_eq(len, want.len, "file is %zu bytes, np.save writes %zu", len, want.len);
  cr_assert(memcmp(file, want.bytes, len) == 0, "file bytes differ from np.save's");
  cr_assert_eq(data_offset(file) % 64, 0);

  npy_matrix_t m;
  rc = npy_read_f32_2d(path, &m, err, sizeof err);
  cr_assert_eq(rc, 0, "read failed: %s", err);
  expect_matrix(&m, rows, cols, bits);
  free(m.data);
  free(want.bytes);
  free(file);
  free(bits);
}

Test(npy, round_trip_1x1, .timeout = TIMEOUT_S) { round_trip(1, 1); }
Test(npy, round_trip_3x5, .timeout = TIMEOUT_S) { round_trip(3, 5); }
Test(npy, round_trip_1x1000, .timeout = TIMEOUT_S) { round_trip(1, 1000); }
Test(npy, round_trip_257x3, .timeout = TIMEOUT_S) { round_trip(257, 3); }
Test(npy, round_trip_300x2, .timeout = TIMEOUT_S) { round_trip(300, 2); }
Test(npy, round_trip_many_rows, .timeout = TIMEOUT_S) { round_trip(123457, 2); }

Test(npy, write_replaces_existing_file, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "m.npy");
  uint32_t *a = make_bits(4, 1), *b = make_bits(9, 2);
  int rc = npy_write_f32_2d(path, (const float *)(void *)a, 2, 2, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  rc = npy_write_f32_2d(path, (const float *)(void *)b, 3, 3, err, sizeof err);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 1, "directory holds: %s", list);
  npy_matrix_t m;
  cr_assert_eq(npy_read_f32_2d(path, &m, err, sizeof err), 0, "%s", err);
  expect_matrix(&m, 3, 3, b);
  free(m.data);
  free(a);
  free(b);
}

/* ------------------------------------------------------------------ numpy-made files */

Test(npy, reads_np_save_images, .timeout = TIMEOUT_S) {
  static const size_t shapes[][2] = {{3, 4}, {1, 7}, {300, 2}, {7, 1}, {1, 1}};
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    size_t r = shapes[k][0], c = shapes[k][1];
    uint32_t *bits = make_bits(r * c, 40 + k);
    image_t img = numpy_image(r, c, bits);
    cr_assert_eq(data_offset(img.bytes) % 64, 0);
    expect_reads(&img, r, c, bits);
    free(img.bytes);
    free(bits);
  }
}

Test(npy, reads_versions_2_and_3, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(6, 3);
  unsigned char *le = le_bytes(bits, 6);
  for (int major = 2; major <= 3; major++) {
    image_t img = image_from_dict(major, DICT("<f4", "False", "(2, 3)"), le, 24);
    expect_reads(&img, 2, 3, bits);
    free(img.bytes);
  }
  free(le);
  free(bits);
}

/* Headers other writers (or older numpy) produce, all meaning a 2 x 3 '<f4' matrix. */
Test(npy, reads_header_variants, .timeout = TIMEOUT_S) {
  static const char *const dicts[] = {
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
      "{'fortran_order':False,'shape':(2,3),'descr':'<f4',}",
      "  {  'descr' :  '<f4' ,\t'fortran_order' : False , 'shape' : ( 2 , 3 , ) , }  ",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
  };
  uint32_t *bits = make_bits(6, 4);
  unsigned char *le = le_bytes(bits, 6);
  for (size_t k = 0; k < sizeof dicts / sizeof dicts[0]; k++) {
    image_t img = image_from_dict(1, dicts[k], le, 24);
    expect_reads(&img, 2, 3, bits);
    free(img.bytes);
  }
  /* No alignment padding at all: only the terminating newline. */
  image_t img =
      image_raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", le, 24);
  expect_reads(&img, 2, 3, bits);
  free(img.bytes);
  free(le);
  free(bits);
}

/* ------------------------------------------------------------------ bad input */

Test(npy, rejects_non_npy, .timeout = TIMEOUT_S) {
  const char *text = "rows,cols\n3,4\n1,2,3,4,5,6,7,8,9,10,11,12\n";
  image_t img = {(unsigned char *)text, strlen(text)};
  expect_rejects(&img, "is not a .npy file");
  img = (image_t){(unsigned char *)"\x93NUMPY\x01", 7}; /* shorter than the preamble */
  expect_rejects(&img, "is not a .npy file");
  img = (image_t){(unsigned char *)"\x93NUMPY\x02\x00\x10\x00", 10}; /* v2 needs 12 */
  expect_rejects(&img, "is not a .npy file");
  img = (image_t){(unsigned char *)"", 0};
  expect_rejects(&img, "is not a .npy file");
}

Test(npy, rejects_nonexistent_file, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "missing.npy");
  npy_matrix_t m;
  cr_assert_eq(npy_read_f32_2d(path, &m, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, path), "%s", err);
  cr_assert_not_null(strstr(err, strerror(ENOENT)), "%s", err);
  cr_assert_null(m.data);
}

Test(npy, rejects_directory, .timeout = TIMEOUT_S) {
  char err[ERR_LEN] = "";
  npy_matrix_t m;
  cr_assert_eq(npy_read_f32_2d(tmp_dir, &m, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, tmp_dir), "%s", err);
  cr_assert_not_null(strstr(err, strerror(EISDIR)), "%s", err);
}

Test(npy, rejects_truncated_data, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(12, 5);
  image_t img = numpy_image(3, 4, bits);
  img.len -= 1;
  expect_rejects(&img, "is truncated: expected 48 data bytes, found 47");
  img.len -= 47;
  expect_rejects(&img, "is truncated: expected 48 data bytes, found 0");
  free(img.bytes);
  free(bits);
}

Test(npy, rejects_extra_trailing_bytes, .timeout = TIMEOUT_S) {
  unsigned char data[51] = {0};
  image_t img = image_from_dict(1, DICT("<f4", "False", "(3, 4)"), data, sizeof data);
  expect_rejects(&img, "has 3 extra bytes after the 48 data bytes");
  free(img.bytes);
}

Test(npy, rejects_float64, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f8", "False", "(3, 4)"), 96, "dtype is '<f8', expected float32 '<f4'");
}

Test(npy, rejects_int32, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<i4", "False", "(3, 4)"), 48, "dtype is '<i4', expected float32 '<f4'");
}

Test(npy, rejects_big_endian_float32, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT(">f4", "False", "(3, 4)"), 48, "dtype is '>f4', expected float32 '<f4'");
}

Test(npy, rejects_structured_dtype, .timeout = TIMEOUT_S) {
  reject_dict(1, "{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (3,)}",
              24, "dtype is a structured type");
}

Test(npy, rejects_fortran_order, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "True", "(3, 4)"), 48,
              "is Fortran-ordered; save it C-ordered (np.ascontiguousarray)");
}

Test(npy, rejects_1d, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "False", "(12,)"), 48, "has 1 dimension, expected a 2-D matrix");
}

Test(npy, rejects_3d, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "False", "(2, 3, 4)"), 96,
              "has 3 dimensions, expected a 2-D matrix");
}

Test(npy, rejects_0d, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "False", "()"), 4, "has 0 dimensions, expected a 2-D matrix");
}

Test(npy, rejects_empty_dimension, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "False", "(0, 3)"), 0, "empty matrix");
  reject_dict(1, DICT("<f4", "False", "(3, 0)"), 0, "empty matrix");
}

Test(npy, rejects_negative_dimension, .timeout = TIMEOUT_S) {
  reject_dict(1, DICT("<f4", "False", "(-1, 3)"), 12, "negative dimension");
}

Test(npy, rejects_oversized_shape, .timeout = TIMEOUT_S) {
  /* Just over 1 GiB, products that wrap 64 bits, and a dimension beyond 64 bits. */
  reject_dict(1, DICT("<f4", "False", "(16384, 16385)"), 0, "exceeds the 1 GiB data limit");
  reject_dict(1, DICT("<f4", "False", "(4294967296, 4294967296)"), 0,
              "exceeds the 1 GiB data limit");
  reject_dict(1, DICT("<f4", "False", "(4611686018427387905, 4)"), 0,
              "exceeds the 1 GiB data limit");
  reject_dict(1, DICT("<f4", "False", "(99999999999999999999999, 1)"), 0, "too large");
  /* Exactly 1 GiB is allowed; the missing data is found without reading or allocating it. */
  reject_dict(1, DICT("<f4", "False", "(16384, 16384)"), 0,
              "is truncated: expected 1073741824 data bytes, found 0");
}

Test(npy, rejects_unknown_version, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(12, 6);
  image_t img = numpy_image(3, 4, bits);
  img.bytes[6] = 4;
  expect_rejects(&img, "unsupported .npy format version 4.0");
  img.bytes[6] = 0;
  expect_rejects(&img, "unsupported .npy format version 0.0");
  img.bytes[6] = 1;
  img.bytes[7] = 1;
  expect_rejects(&img, "unsupported .npy format version 1.1");
  free(img.bytes);
  free(bits);
}

Test(npy, rejects_huge_header_length, .timeout = TIMEOUT_S) {
  unsigned char data[24] = {0};
  image_t img = image_from_dict(2, DICT("<f4", "False", "(2, 3)"), data, sizeof data);
  memcpy(img.bytes + 8, "\xff\xff\xff\xff", 4);
  expect_rejects(&img, "header length 4294967295 exceeds the 64 KiB limit");
  memcpy(img.bytes + 8, "\x01\x00\x01\x00", 4);
  expect_rejects(&img, "header length 65537 exceeds the 64 KiB limit");
  free(img.bytes);
}

Test(npy, rejects_truncated_header, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(12, 8);
  image_t img = numpy_image(3, 4, bits);
  img.len = 100; /* the header says 118 bytes */
  expect_rejects(&img, "header is truncated: expected 118 bytes, found 90");
  free(img.bytes);
  free(bits);
}

Test(npy, rejects_unterminated_header, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(12, 9);
  image_t img = numpy_image(3, 4, bits);
  img.bytes[data_offset(img.bytes) - 1] = ' ';
  expect_rejects(&img, "header is not terminated by a newline");
  img.bytes[8] = img.bytes[9] = 0; /* zero-length header */
  expect_rejects(&img, "header is not terminated by a newline");
  free(img.bytes);
  free(bits);
}

Test(npy, rejects_missing_key, .timeout = TIMEOUT_S) {
  reject_dict(1, "{'descr': '<f4', 'fortran_order': False, }", 4, "missing key 'shape'");
  reject_dict(1, "{'fortran_order': False, 'shape': (1, 1), }", 4, "missing key 'descr'");
  reject_dict(1, "{'descr': '<f4', 'shape': (1, 1), }", 4, "missing key 'fortran_order'");
  reject_dict(1, "{}", 4, "missing key 'descr'");
}

Test(npy, rejects_unexpected_and_duplicate_keys, .timeout = TIMEOUT_S) {
  reject_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}", 4,
              "unexpected key 'x'");
  reject_dict(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}",
              4, "duplicate key 'descr'");
}

Test(npy, rejects_garbage_header, .timeout = TIMEOUT_S) {
  static const char *const dicts[] = {
      "hello, world",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)} trailing",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [1, 1]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 1)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1, x)}",
      "{descr: '<f4', 'fortran_order': False, 'shape': (1, 1)}",
      "{'descr': '\\x3cf4', 'fortran_order': False, 'shape': (1, 1)}",
  };
  for (size_t k = 0; k < sizeof dicts / sizeof dicts[0]; k++)
    reject_dict(1, dicts[k], 4, "malformed header");
  /* Headers cut off mid-token, right at their end (no padding to read into). */
  static const char *const cut[] = {
      "{'shape': (1, 1), 'descr': '<f4', 'fortran_order': F\n",
      "{'shape': (1, 1), 'descr': '<f4', 'fortran_order': \n",
      "{'fortran_order': False, 'descr': '<f4', 'shape': (1\n",
      "{'fortran_order': False, 'shape': (1, 1), 'descr': '<f\n",
      "{\n",
      "\n",
  };
  for (size_t k = 0; k < sizeof cut / sizeof cut[0]; k++) {
    image_t img = image_raw_header(cut[k], "\0\0\0\0", 4);
    expect_rejects(&img, "malformed header");
    free(img.bytes);
  }
  /* A control byte from the file must not reach the message raw. */
  reject_dict(1, "{'descr': '<f4\x01', 'fortran_order': False, 'shape': (1, 1)}", 4,
              "dtype is '<f4?'");
}

/* ------------------------------------------------------------------ writer failures */

Test(npy, write_into_missing_directory_fails_cleanly, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "no_such_dir/m.npy");
  float v[4] = {1, 2, 3, 4};
  cr_assert_eq(npy_write_f32_2d(path, v, 2, 2, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, path), "message '%s' does not name the path", err);
  cr_assert_not_null(strstr(err, strerror(ENOENT)), "%s", err);
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 0, "left behind: %s", list);
}

Test(npy, write_onto_directory_fails_cleanly, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "sub");
  cr_assert_eq(mkdir(path, 0755), 0);
  float v[4] = {1, 2, 3, 4};
  cr_assert_eq(npy_write_f32_2d(path, v, 2, 2, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, path), "message '%s' does not name the path", err);
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 1, "left behind: %s", list);
  cr_assert_str_eq(list, "sub");
  cr_assert_eq(dir_entries(path, list, sizeof list), 0, "left behind: %s", list);
}

Test(npy, write_refuses_unreadable_shapes, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "m.npy");
  float v[4] = {1, 2, 3, 4};
  cr_assert_eq(npy_write_f32_2d(path, v, 0, 4, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "empty"), "%s", err);
  cr_assert_eq(npy_write_f32_2d(path, v, 4, 0, err, sizeof err), -1);
  /* Refused before any data is read, so the small buffer is safe. */
  cr_assert_eq(npy_write_f32_2d(path, v, (size_t)1 << 20, (size_t)1 << 20, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "1 GiB"), "%s", err);
  cr_assert_eq(npy_write_f32_2d(path, v, SIZE_MAX, SIZE_MAX, err, sizeof err), -1);
  cr_assert_eq(npy_write_f32_2d(path, NULL, 1, 1, err, sizeof err), -1);
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 0, "left behind: %s", list);
}

/* ------------------------------------------------------------------ N-D arrays */

/* A shape of up to NPY_MAX_RANK dimensions, for the tables below. */
typedef struct {
  unsigned rank;
  size_t dims[NPY_MAX_RANK];
} shape_t;

/* Shapes of every rank: single elements, a first axis with many digits (numpy's growth
 * room shrinks), the layouts `tpusim infer` exchanges (NCHW images, [B, S, H] sequences)
 * scaled down. */
static const shape_t nd_shapes[] = {
    {1, {1}},          {1, {17}},           {1, {100000}},        {2, {3, 5}},
    {2, {1, 1000}},    {3, {2, 3, 4}},      {3, {128, 1, 3}},     {3, {2, 16, 12}},
    {4, {1, 1, 1, 1}}, {4, {2, 3, 22, 22}}, {4, {10, 3, 7, 7}},   {5, {2, 1, 3, 1, 2}},
    {6, {1, 2, 1, 2, 1, 3}}, {6, {3, 2, 2, 2, 2, 5}},
};
#define N_ND_SHAPES (sizeof nd_shapes / sizeof nd_shapes[0])

static void expect_array(const npy_array_t *a, const shape_t *sh, const uint32_t *bits) {
  cr_assert_eq(a->rank, sh->rank);
  for (unsigned i = 0; i < NPY_MAX_RANK; i++)
    cr_assert_eq(a->dims[i], i < sh->rank ? sh->dims[i] : 0, "dims[%u] is %zu", i, a->dims[i]);
  cr_assert_not_null(a->data);
  cr_assert(memcmp(a->data, bits, product(sh->rank, sh->dims) * 4) == 0, "data differs from what was stored");
}

/* Reads img with the N-D reader, from a file and from memory; expects -1, a one-line
 * message naming the file (the buffer) and holding want, and a zeroed *out. */
static void expect_rejects_nd(const image_t *img, const char *want) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "bad.npy");
  write_bytes(path, img->bytes, img->len);
  npy_array_t a = {7, {7}, (float *)(void *)path};
  int rc = npy_read_f32(path, &a, err, sizeof err);
  cr_assert_eq(rc, -1, "accepted a bad file (wanted error '%s')", want);
  cr_assert_not_null(strstr(err, want), "message '%s' lacks '%s'", err, want);
  cr_assert_not_null(strstr(err, path), "message '%s' does not name the file", err);
  cr_assert_null(strchr(err, '\n'), "message '%s' is not one line", err);
  cr_assert(a.data == NULL && a.rank == 0 && a.dims[0] == 0);
  a.data = (float *)(void *)path;
  rc = npy_read_f32_mem(img->bytes, img->len, "buffer", &a, err, sizeof err);
  cr_assert_eq(rc, -1, "accepted a bad buffer (wanted error '%s')", want);
  cr_assert_not_null(strstr(err, want), "message '%s' lacks '%s'", err, want);
  cr_assert_not_null(strstr(err, "buffer"), "message '%s' does not name the buffer", err);
  cr_assert(a.data == NULL && a.rank == 0);
}

static void reject_dict_nd(const char *dict, size_t data_len, const char *want) {
  unsigned char *zeros = calloc(1, data_len + 1);
  cr_assert_not_null(zeros);
  image_t img = image_from_dict(1, dict, zeros, data_len);
  expect_rejects_nd(&img, want);
  free(img.bytes);
  free(zeros);
}

/* write -> bytes equal to np.save's image -> read back, through both writers. */
Test(npy, nd_round_trips, .timeout = TIMEOUT_S) {
  for (size_t k = 0; k < N_ND_SHAPES; k++) {
    const shape_t *sh = &nd_shapes[k];
    uint32_t *bits = make_bits(product(sh->rank, sh->dims), 100 + k);
    image_t want = numpy_image_nd(sh->rank, sh->dims, bits);
    for (int in_place = 0; in_place <= 1; in_place++) {
      char path[128], err[ERR_LEN] = "", list[512];
      join(path, sizeof path, "a.npy");
      const float *v = (const float *)(const void *)bits;
      int rc = in_place ? npy_write_f32_file(path, v, sh->rank, sh->dims, err, sizeof err)
                        : npy_write_f32(path, v, sh->rank, sh->dims, err, sizeof err);
      cr_assert_eq(rc, 0, "shape %zu: write failed: %s", k, err);
      cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 1, "directory holds: %s", list);
      size_t len;
      unsigned char *file = read_bytes(path, &len);
      cr_assert_eq(len, want.len, "shape %zu: file is %zu bytes, np.save writes %zu", k, len, want.len);
      cr_assert(memcmp(file, want.bytes, len) == 0, "shape %zu: file bytes differ from np.save's", k);
      cr_assert_eq(data_offset(file) % 64, 0);
      npy_array_t a;
      cr_assert_eq(npy_read_f32(path, &a, err, sizeof err), 0, "shape %zu: read failed: %s", k, err);
      expect_array(&a, sh, bits);
      free(a.data);
      cr_assert_eq(npy_read_f32_mem(file, len, "mem", &a, err, sizeof err), 0, "%s", err);
      expect_array(&a, sh, bits);
      free(a.data);
      free(file);
      unlink(path);
    }
    free(want.bytes);
    free(bits);
  }
}

/* The same bit patterns as gen_bits in the python script below: i * 2654435761 + seed,
 * modulo 2^32 (NaN payloads, infinities and subnormals among them). */
static uint32_t *formula_bits(size_t n, uint32_t seed) {
  uint32_t *v = malloc(n * sizeof *v + 1);
  cr_assert_not_null(v);
  for (size_t i = 0; i < n; i++) v[i] = (uint32_t)((uint64_t)i * 2654435761u + seed);
  return v;
}

/* numpy itself: np.save of every shape, byte for byte against npy_write_f32 of the same
 * values, and each of numpy's files read back by npy_read_f32. */
Test(npy, nd_matches_numpy_np_save, .timeout = TIMEOUT_S) {
  char script[128], err[ERR_LEN] = "";
  join(script, sizeof script, "save.py");
  FILE *f = fopen(script, "w");
  cr_assert_not_null(f);
  fprintf(f, "import sys\nimport numpy as np\nshapes = [\n");
  for (size_t k = 0; k < N_ND_SHAPES; k++) {
    fprintf(f, "    (");
    for (unsigned i = 0; i < nd_shapes[k].rank; i++) fprintf(f, "%zu, ", nd_shapes[k].dims[i]);
    fprintf(f, "),\n");
  }
  fprintf(f, "]\n"
             "for k, shape in enumerate(shapes):\n"
             "    n = int(np.prod(shape))\n"
             "    bits = (np.arange(n, dtype=np.uint64) * 2654435761 + 7 * k + 1) %% 2**32\n"
             "    a = bits.astype(np.uint32).view(np.float32).reshape(shape)\n"
             "    np.save('%%s/np%%d.npy' %% (sys.argv[1], k), a)\n");
  cr_assert_eq(fclose(f), 0);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", script, tmp_dir);
  cr_assert_eq(system(cmd), 0, "%s failed (numpy: 'make deps' installs python3-numpy)", cmd);

  for (size_t k = 0; k < N_ND_SHAPES; k++) {
    const shape_t *sh = &nd_shapes[k];
    size_t n = product(sh->rank, sh->dims);
    uint32_t *bits = formula_bits(n, (uint32_t)(7 * k + 1));
    char ours[128], theirs[128];
    join(ours, sizeof ours, "ours.npy");
    snprintf(theirs, sizeof theirs, "%s/np%zu.npy", tmp_dir, k);
    cr_assert_eq(npy_write_f32(ours, (const float *)(const void *)bits, sh->rank, sh->dims, err, sizeof err), 0,
                 "%s", err);
    size_t la, lb;
    unsigned char *a = read_bytes(ours, &la), *b = read_bytes(theirs, &lb);
    cr_assert_eq(la, lb, "shape %zu (rank %u): %zu bytes, np.save wrote %zu", k, sh->rank, la, lb);
    cr_assert(memcmp(a, b, la) == 0, "shape %zu (rank %u): bytes differ from np.save's", k, sh->rank);
    npy_array_t arr;
    cr_assert_eq(npy_read_f32(theirs, &arr, err, sizeof err), 0, "%s", err);
    expect_array(&arr, sh, bits);
    free(arr.data);
    free(a);
    free(b);
    free(bits);
  }
}

/* The N-D reader on 2-D files agrees with the 2-D reader, and the 2-D reader takes the
 * N-D writer's rank-2 files. */
Test(npy, nd_and_2d_agree, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "m.npy");
  uint32_t *bits = make_bits(12, 77);
  const size_t dims[2] = {3, 4};
  cr_assert_eq(npy_write_f32(path, (const float *)(void *)bits, 2, dims, err, sizeof err), 0, "%s", err);
  npy_matrix_t m;
  cr_assert_eq(npy_read_f32_2d(path, &m, err, sizeof err), 0, "%s", err);
  expect_matrix(&m, 3, 4, bits);
  free(m.data);
  cr_assert_eq(npy_write_f32_2d(path, (const float *)(void *)bits, 4, 3, err, sizeof err), 0, "%s", err);
  npy_array_t a;
  cr_assert_eq(npy_read_f32(path, &a, err, sizeof err), 0, "%s", err);
  const shape_t sh = {2, {4, 3}};
  expect_array(&a, &sh, bits);
  free(a.data);
  free(bits);
}

Test(npy, nd_reads_versions_2_and_3, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(24, 78);
  unsigned char *le = le_bytes(bits, 24);
  const shape_t sh = {4, {2, 1, 3, 4}};
  for (int major = 2; major <= 3; major++) {
    image_t img = image_from_dict(major, DICT("<f4", "False", "(2, 1, 3, 4)"), le, 96);
    char path[128], err[ERR_LEN] = "";
    join(path, sizeof path, "v.npy");
    write_bytes(path, img.bytes, img.len);
    npy_array_t a;
    cr_assert_eq(npy_read_f32(path, &a, err, sizeof err), 0, "%s", err);
    expect_array(&a, &sh, bits);
    free(a.data);
    free(img.bytes);
  }
  free(le);
  free(bits);
}

Test(npy, nd_rejects_rank, .timeout = TIMEOUT_S) {
  reject_dict_nd(DICT("<f4", "False", "()"), 4, "shape () is a scalar, expected 1 to 6 dimensions");
  reject_dict_nd(DICT("<f4", "False", "(1, 1, 1, 1, 1, 1, 1)"), 4, "has 7 dimensions, expected at most 6");
  reject_dict_nd(DICT("<f4", "False", "(2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)"), 4,
                 "has 16 dimensions, expected at most 6");
  /* The 2-D reader keeps its own words for any rank but 2. */
  reject_dict(1, DICT("<f4", "False", "(1, 1, 1, 1, 1, 1, 1)"), 4, "has 7 dimensions, expected a 2-D matrix");
  reject_dict(1, DICT("<f4", "False", "(2, 3, 4, 5)"), 480, "has 4 dimensions, expected a 2-D matrix");
}

Test(npy, nd_rejects_zero_dimension, .timeout = TIMEOUT_S) {
  reject_dict_nd(DICT("<f4", "False", "(2, 0, 3)"), 0, "shape (2, 0, 3) has a zero dimension");
  reject_dict_nd(DICT("<f4", "False", "(0,)"), 0, "shape (0,) has a zero dimension");
  reject_dict_nd(DICT("<f4", "False", "(1, 1, 1, 1, 1, 0)"), 0, "shape (1, 1, 1, 1, 1, 0) has a zero dimension");
  /* A zero anywhere wins over a size that would overflow. */
  reject_dict_nd(DICT("<f4", "False", "(4294967296, 4294967296, 0)"), 0, "has a zero dimension");
}

Test(npy, nd_rejects_oversized_shape, .timeout = TIMEOUT_S) {
  reject_dict_nd(DICT("<f4", "False", "(1024, 1024, 257)"), 0,
                 "float32 array of shape (1024, 1024, 257) exceeds the 1 GiB data limit");
  reject_dict_nd(DICT("<f4", "False", "(268435457,)"), 0, "exceeds the 1 GiB data limit");
  /* Products that wrap 64 bits: 2^64 (to 0) and 2^96; 2^62 + 1 times 4 (to 4). */
  reject_dict_nd(DICT("<f4", "False", "(65536, 65536, 65536, 65536)"), 0, "exceeds the 1 GiB data limit");
  reject_dict_nd(DICT("<f4", "False", "(4294967296, 4294967296, 4294967296)"), 0, "exceeds the 1 GiB data limit");
  reject_dict_nd(DICT("<f4", "False", "(4611686018427387905, 2, 2)"), 0, "exceeds the 1 GiB data limit");
  reject_dict_nd(DICT("<f4", "False", "(1, 99999999999999999999999, 1)"), 0, "too large");
  /* Exactly 1 GiB is allowed; the missing data is found without reading or allocating it. */
  reject_dict_nd(DICT("<f4", "False", "(4, 64, 1024, 1024)"), 0,
                 "is truncated: expected 1073741824 data bytes, found 0");
}

Test(npy, nd_rejects_dtype_order_and_sizes, .timeout = TIMEOUT_S) {
  reject_dict_nd(DICT("<f8", "False", "(2, 3, 4)"), 192, "dtype is '<f8', expected float32 '<f4'");
  reject_dict_nd(DICT("<f2", "False", "(2, 3, 4)"), 48, "dtype is '<f2', expected float32 '<f4'");
  reject_dict_nd(DICT(">f4", "False", "(5,)"), 20, "dtype is '>f4', expected float32 '<f4'");
  reject_dict_nd("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}", 12, "structured");
  reject_dict_nd(DICT("<f4", "True", "(2, 3, 4)"), 96, "is Fortran-ordered");
  reject_dict_nd(DICT("<f4", "False", "(2, 3, 4)"), 95, "is truncated: expected 96 data bytes, found 95");
  reject_dict_nd(DICT("<f4", "False", "(2, 3, 4)"), 100, "has 4 extra bytes after the 96 data bytes");
  reject_dict_nd(DICT("<f4", "False", "(2, -3, 4)"), 96, "negative dimension");
  reject_dict_nd("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4}", 96, "malformed header");
  reject_dict_nd("{'descr': '<f4', 'shape': (2, 3, 4), }", 96, "missing key 'fortran_order'");
  image_t img = {(unsigned char *)"not an array", 12};
  expect_rejects_nd(&img, "is not a .npy file");
}

Test(npy, nd_rejects_bad_paths_and_arguments, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "";
  join(path, sizeof path, "missing.npy");
  npy_array_t a;
  cr_assert_eq(npy_read_f32(path, &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, path), "%s", err);
  cr_assert_not_null(strstr(err, strerror(ENOENT)), "%s", err);
  cr_assert_null(a.data);
  cr_assert_eq(npy_read_f32(tmp_dir, &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, strerror(EISDIR)), "%s", err);
  cr_assert_eq(npy_read_f32("/dev/zero", &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "not a regular file"), "%s", err);
  cr_assert_eq(npy_read_f32(NULL, &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "null argument"), "%s", err);
  cr_assert_eq(npy_read_f32(path, NULL, err, sizeof err), -1);
  cr_assert_eq(npy_read_f32_mem("", 0, "empty", &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "empty is not a .npy file"), "%s", err);
  cr_assert_eq(npy_read_f32_mem(NULL, 4, "x", &a, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "null argument"), "%s", err);
  /* No message buffer: still refused, nothing written anywhere. */
  cr_assert_eq(npy_read_f32(path, &a, NULL, 0), -1);
}

Test(npy, nd_write_refuses_unreadable_shapes, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "a.npy");
  float v[8] = {0};
  const size_t d7[7] = {1, 1, 1, 1, 1, 1, 1};
  for (int in_place = 0; in_place <= 1; in_place++) {
    int (*wr)(const char *, const float *, unsigned, const size_t *, char *, size_t) =
        in_place ? npy_write_f32_file : npy_write_f32;
    cr_assert_eq(wr(path, v, 0, d7, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "rank 0"), "%s", err);
    cr_assert_eq(wr(path, v, 7, d7, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "rank 7"), "%s", err);
    const size_t z[3] = {2, 0, 3};
    cr_assert_eq(wr(path, v, 3, z, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "shape (2, 0, 3): it has a zero dimension"), "%s", err);
    /* Refused before any data is read, so the small buffer is safe. */
    const size_t big[3] = {1024, 1024, 257}, wrap[4] = {65536, 65536, 65536, 65536};
    cr_assert_eq(wr(path, v, 3, big, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "1 GiB"), "%s", err);
    cr_assert_eq(wr(path, v, 4, wrap, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "1 GiB"), "%s", err);
    const size_t huge[2] = {SIZE_MAX, SIZE_MAX};
    cr_assert_eq(wr(path, v, 2, huge, err, sizeof err), -1);
    cr_assert_eq(wr(path, NULL, 1, d7, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "null argument"), "%s", err);
    cr_assert_eq(wr(path, v, 1, NULL, err, sizeof err), -1);
    cr_assert_eq(wr(tmp_dir, v, 1, d7, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "is a directory"), "%s", err);
    char missing[128];
    join(missing, sizeof missing, "no_such_dir/a.npy");
    cr_assert_eq(wr(missing, v, 1, d7, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, strerror(ENOENT)), "%s", err);
    cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 0, "left behind: %s", list);
  }
}

/* npy_write_f32 replaces an existing file whole; npy_write_f32_file writes the named file
 * itself (no temporary beside it). */
Test(npy, nd_write_replaces_existing_file, .timeout = TIMEOUT_S) {
  char path[128], err[ERR_LEN] = "", list[512];
  join(path, sizeof path, "a.npy");
  uint32_t *a = make_bits(24, 5), *b = make_bits(6, 6);
  const shape_t sa = {3, {2, 3, 4}}, sb = {1, {6}};
  cr_assert_eq(npy_write_f32(path, (const float *)(void *)a, sa.rank, sa.dims, err, sizeof err), 0, "%s", err);
  cr_assert_eq(npy_write_f32_file(path, (const float *)(void *)b, sb.rank, sb.dims, err, sizeof err), 0, "%s",
               err);
  cr_assert_eq(dir_entries(tmp_dir, list, sizeof list), 1, "directory holds: %s", list);
  npy_array_t arr;
  cr_assert_eq(npy_read_f32(path, &arr, err, sizeof err), 0, "%s", err);
  expect_array(&arr, &sb, b);
  free(arr.data);
  cr_assert_eq(npy_write_f32(path, (const float *)(void *)a, sa.rank, sa.dims, err, sizeof err), 0, "%s", err);
  cr_assert_eq(npy_read_f32(path, &arr, err, sizeof err), 0, "%s", err);
  expect_array(&arr, &sa, a);
  free(arr.data);
  free(a);
  free(b);
}

/* ------------------------------------------------------------------ fuzz */

static const char fuzz_alphabet[] = "0123456789 ,:(){}[]'\"\n\t\\<>=|fi48LTrueFalsdcpho-x\x93";

/* Checks the N-D reader's verdict on a mutant against the 2-D reader's (rc2, m): the same
 * answer for a rank-2 array, a refusal for the 2-D reader for any other rank, and on
 * success a shape that accounts for exactly the data bytes present, which must be the ones
 * returned. Returns the rank accepted, or 0. */
static unsigned fuzz_check_nd(int it, const unsigned char *buf, size_t len, const char *path, int rc2,
                              const npy_matrix_t *m) {
  char err[ERR_LEN] = "";
  npy_array_t a;
  int rc = npy_read_f32(path, &a, err, sizeof err);
  cr_assert(rc == 0 || rc == -1, "case %d: returned %d", it, rc);
  if (rc == -1) {
    cr_assert(err[0] != '\0' && strchr(err, '\n') == NULL, "case %d: message '%s'", it, err);
    cr_assert(a.data == NULL && a.rank == 0, "case %d: refused but *out not zeroed", it);
    cr_assert_eq(rc2, -1, "case %d: the 2-D reader took what the N-D reader refused: %s", it, err);
    return 0;
  }
  cr_assert(a.rank >= 1 && a.rank <= NPY_MAX_RANK, "case %d: rank %u", it, a.rank);
  size_t off = data_offset(buf), count = product(a.rank, a.dims);
  cr_assert(len >= off && count * 4 == len - off, "case %d: %zu values but %zu data bytes", it, count,
            len >= off ? len - off : 0);
  unsigned char *want = le_bytes((const uint32_t *)(const void *)a.data, count);
  cr_assert(memcmp(want, buf + off, len - off) == 0, "case %d: data differs", it);
  free(want);
  if (a.rank == 2) {
    cr_assert_eq(rc2, 0, "case %d: a 2-D array the 2-D reader refused", it);
    cr_assert(m->rows == a.dims[0] && m->cols == a.dims[1], "case %d: the readers' shapes differ", it);
  } else {
    cr_assert_eq(rc2, -1, "case %d: the 2-D reader took a rank-%u array", it, a.rank);
  }
  free(a.data);
  return a.rank;
}

/* 20,000 mutants of four valid images (2-D as numpy writes it, 2-D version 2, 4-D and
 * 1-D), each read by both readers. Each must return 0 or -1 (a crash fails the test), and
 * on success the shape must account for exactly the data bytes present, which must be the
 * ones returned; the two readers must agree (fuzz_check_nd). */
Test(npy, fuzz_reader, .timeout = TIMEOUT_S) {
  uint32_t *bits = make_bits(12, 10);
  unsigned char *le = le_bytes(bits, 12);
  const size_t d4[4] = {2, 1, 3, 2}, d1[1] = {12};
  image_t base[4] = {numpy_image(3, 4, bits), image_from_dict(2, DICT("<f4", "False", "(2, 6)"), le, 48),
                     numpy_image_nd(4, d4, bits), numpy_image_nd(1, d1, bits)};
  size_t cap = 0;
  for (int k = 0; k < 4; k++) cap = base[k].len > cap ? base[k].len : cap;
  cap += 64;
  unsigned char *buf = malloc(cap);
  cr_assert_not_null(buf);

  char path[128], err[ERR_LEN];
  join(path, sizeof path, "fuzz.npy");
  uint64_t s = 0x243F6A8885A308D3ull;
  unsigned accepted = 0, rejected = 0, accepted_nd = 0;
  for (int it = 0; it < FUZZ_CASES; it++) {
    const image_t *b = &base[xorshift64(&s) % 4];
    memcpy(buf, b->bytes, b->len);
    size_t len = b->len;
    size_t hdr_end = data_offset(b->bytes);
    int muts = 1 + (int)(xorshift64(&s) % 3);
    for (int k = 0; k < muts; k++) {
      uint64_t r = xorshift64(&s);
      switch (r % 7) {
      case 0: /* flip one bit anywhere */
        if (len) buf[(r >> 8) % len] ^= (unsigned char)(1u << ((r >> 40) % 8));
        break;
      case 1: /* random byte anywhere */
        if (len) buf[(r >> 8) % len] = (unsigned char)(r >> 48);
        break;
      case 2: /* header byte from the characters that matter to the parser */
        if (len > 10)
          buf[10 + (r >> 8) % ((hdr_end < len ? hdr_end : len) - 10)] =
              (unsigned char)fuzz_alphabet[(r >> 40) % (sizeof fuzz_alphabet - 1)];
        break;
      case 3: /* truncate */
        len = len ? (size_t)((r >> 8) % len) : 0;
        break;
      case 4: /* append random bytes */
        for (size_t n = 1 + (r >> 8) % 8; n > 0 && len < cap; n--)
          buf[len++] = (unsigned char)xorshift64(&s);
        break;
      case 5: /* small random header length */
        if (len >= 10) {
          buf[8] = (unsigned char)((r >> 8) % 256);
          buf[9] = (unsigned char)((r >> 16) % 2);
        }
        break;
      default: /* delete one header byte, shifting the rest */
        if (len > 11) {
          size_t at = 10 + (r >> 8) % ((hdr_end < len ? hdr_end : len) - 10);
          memmove(buf + at, buf + at + 1, len - at - 1);
          len--;
        }
        break;
      }
    }
    /* A fresh file each time: rewriting one in place is ~10x slower on ext4, which
     * flushes a file truncated to zero and rewritten (auto_da_alloc). */
    write_bytes(path, buf, len);
    npy_matrix_t m;
    err[0] = '\0';
    int rc = npy_read_f32_2d(path, &m, err, sizeof err);
    accepted_nd += fuzz_check_nd(it, buf, len, path, rc, &m) > 0;
    unlink(path);
    cr_assert(rc == 0 || rc == -1, "case %d: returned %d", it, rc);
    if (rc == -1) {
      rejected++;
      cr_assert(err[0] != '\0' && strchr(err, '\n') == NULL, "case %d: message '%s'", it, err);
      cr_assert_null(m.data);
      continue;
    }
    accepted++;
    size_t off = data_offset(buf);
    cr_assert(len >= off, "case %d: accepted with the data offset past the end", it);
    cr_assert_eq(m.rows * m.cols * 4, len - off, "case %d: %zu x %zu but %zu data bytes", it,
                 m.rows, m.cols, len - off);
    unsigned char *want = le_bytes((const uint32_t *)(const void *)m.data, m.rows * m.cols);
    cr_assert(memcmp(want, buf + off, len - off) == 0, "case %d: data differs", it);
    free(want);
    free(m.data);
  }
  /* Guards against a fuzz that only ever exercises the first check. */
  cr_assert_gt(accepted, 100);
  cr_assert_gt(accepted_nd, accepted + 100, "the N-D reader took %u, the 2-D reader %u", accepted_nd, accepted);
  cr_assert_gt(rejected, FUZZ_CASES / 2);
  free(buf);
  free(le);
  for (int k = 0; k < 4; k++) free(base[k].bytes);
  free(bits);
}
