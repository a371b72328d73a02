/* npy: see npy.h. Format reference: numpy/lib/format.py ("NPY format"). */
#include "util/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6
#define MAX_HEADER_LEN (64u * 1024u)
#define MAX_DATA_BYTES ((size_t)1 << 30)
#define ELEM_BYTES 4u
#define ARRAY_ALIGN 64u
/* numpy >= 1.23 leaves room after the dict so the first axis can grow in place
 * (format.GROWTH_AXIS_MAX_DIGITS); mirrored so our files match np.save's bytes. */
#define GROWTH_AXIS_MAX_DIGITS 21
#define SHOW_MAX 32        /* longest piece of file text quoted in a message */
/* Fits the header we write: the writer's dims multiply to at most 2^28, so at most 9
 * digits each, plus growth room and padding. */
#define HEADER_BUF_LEN 320
#define SHAPE_TEXT_LEN (NPY_MAX_RANK * 22 + 4) /* "(d, d, ...)" with 20-digit dims */

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Copies file text into a message: non-printable bytes become '?' (the message must stay
 * one printable line whatever the file holds), long text is cut with "...". */
static void show(char *dst, size_t dstlen, const char *s, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n && i < SHOW_MAX && k + 1 < dstlen; i++) {
    unsigned char ch = (unsigned char)s[i];
    dst[k++] = (ch >= 0x20 && ch < 0x7F) ? (char)ch : '?';
  }
  if (n > SHOW_MAX && k + 4 < dstlen) {
    memcpy(dst + k, "...", 3);
    k += 3;
  }
  dst[k] = '\0';
}

static bool host_is_little_endian(void) {
  const uint16_t probe = 1;
  unsigned char b;
  memcpy(&b, &probe, 1);
  return b == 1;
}

static void swap32_inplace(unsigned char *p, size_t count) {
  for (size_t i = 0; i < count; i++, p += 4) {
    unsigned char t = p[0];
    p[0] = p[3];
    p[3] = t;
    t = p[1];
    p[1] = p[2];
    p[2] = t;
  }
}

/* Whether an array of shape dims[0..rank-1] of float32 exceeds the data limit; phrased
 * with divisions so that it cannot overflow whatever the dimensions (the running product
 * stays at most the limit). Every dimension must be non-zero. */
static bool too_large(const uint64_t *dims, size_t rank) {
  const uint64_t max_elems = MAX_DATA_BYTES / ELEM_BYTES;
  uint64_t elems = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] > max_elems / elems) return true;
    elems *= dims[i];
  }
  return false;
}

static bool has_zero_dim(const uint64_t *dims, size_t rank) {
  for (size_t i = 0; i < rank; i++)
    if (dims[i] == 0) return true;
  return false;
}

/* The shape as Python prints the tuple: "(5,)", "(2, 3, 4)". */
static void shape_text(char *dst, size_t dstlen, const uint64_t *dims, size_t rank) {
  size_t k = (size_t)snprintf(dst, dstlen, "(");
  for (size_t i = 0; i < rank && k < dstlen; i++)
    k += (size_t)snprintf(dst + k, dstlen - k, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
  if (k < dstlen) snprintf(dst + k, dstlen - k, rank == 1 ? ",)" : ")");
}

/* ------------------------------------------------------------------ header parsing */

/* The header is a Python dict literal. Rather than a general Python parser, this accepts
 * exactly the shapes of value the three known keys can take, with free whitespace, either
 * quote style and an optional trailing comma, which covers every writer seen in practice. */
typedef struct {
  const char *p, *end, *start;
} cursor_t;

typedef struct {
  bool have_descr, have_fortran, have_shape;
  bool descr_structured;  /* a list of fields, not a plain type string */
  const char *descr;      /* points into the header text */
  size_t descr_len;
  bool fortran;
  size_t ndim;            /* may exceed NPY_MAX_RANK: only that many dims are kept */
  uint64_t dims[NPY_MAX_RANK];
} header_t;

static void skip_ws(cursor_t *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static bool peek(const cursor_t *c, char ch) { return c->p < c->end && *c->p == ch; }

static bool eat(cursor_t *c, char ch) {
  if (!peek(c, ch)) return false;
  c->p++;
  return true;
}

static int malformed(const cursor_t *c, const char *path, const char *what, char *err,
                     size_t errlen) {
  return fail(err, errlen, "%s: malformed header: %s at header byte %zu", path, what,
              (size_t)(c->p - c->start));
}

/* A quoted string without escapes (no dtype or key needs one). */
static bool lex_string(cursor_t *c, const char **s, size_t *n) {
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
  char q = *c->p++;
  const char *b = c->p;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || *c->p == '\n') return false;
    c->p++;
  }
  if (c->p >= c->end) return false;
  *s = b;
  *n = (size_t)(c->p - b);
  c->p++;
  return true;
}

static bool lex_word(cursor_t *c, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return false;
  c->p += n;
  return true;
}

/* shape: a tuple of non-negative integers, e.g. (), (3,), (3, 4), (3L, 4L) (Python 2). */
static int parse_shape(cursor_t *c, header_t *h, const char *path, char *err, size_t errlen) {
  if (!eat(c, '(')) return malformed(c, path, "shape is not a tuple", err, errlen);
  skip_ws(c);
  h->ndim = 0;
  if (eat(c, ')')) return 0;
  for (;;) {
    if (peek(c, '-')) return fail(err, errlen, "%s: shape has a negative dimension", path);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
      return malformed(c, path, "expected a dimension in shape", err, errlen);
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      unsigned d = (unsigned)(*c->p - '0');
      if (v > (UINT64_MAX - d) / 10)
        return fail(err, errlen, "%s: shape has a dimension too large to represent", path);
      v = v * 10 + d;
      c->p++;
    }
    if (peek(c, 'L') || peek(c, 'l')) c->p++;
    if (h->ndim < NPY_MAX_RANK) h->dims[h->ndim] = v;
    h->ndim++;
    skip_ws(c);
    if (eat(c, ',')) {
      skip_ws(c);
      if (eat(c, ')')) return 0;
    } else if (eat(c, ')')) {
      return 0;
    } else {
      return malformed(c, path, "expected ',' or ')' in shape", err, errlen);
    }
  }
}

static int parse_value(cursor_t *c, const char *key, size_t klen, header_t *h,
                       const char *path, char *err, size_t errlen) {
  bool *seen;
  if (klen == 5 && memcmp(key, "descr", 5) == 0) seen = &h->have_descr;
  else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) seen = &h->have_fortran;
  else if (klen == 5 && memcmp(key, "shape", 5) == 0) seen = &h->have_shape;
  else {
    char shown[SHOW_MAX + 4];
    show(shown, sizeof shown, key, klen);
    return fail(err, errlen, "%s: header has unexpected key '%s'", path, shown);
  }
  if (*seen) {
    /* Python would keep the last value silently; a duplicate signals a broken writer. */
    char shown[SHOW_MAX + 4];
    show(shown, sizeof shown, key, klen);
    return fail(err, errlen, "%s: header has duplicate key '%s'", path, shown);
  }
  *seen = true;

  if (seen == &h->have_descr) {
    if (peek(c, '[')) {
      /* Structured dtypes are a list of fields; no need to parse one just to reject it. */
      h->descr_structured = true;
      return 0;
    }
    if (!lex_string(c, &h->descr, &h->descr_len))
      return malformed(c, path, "descr is not a quoted string", err, errlen);
    return 0;
  }
  if (seen == &h->have_fortran) {
    if (lex_word(c, "True")) h->fortran = true;
    else if (lex_word(c, "False")) h->fortran = false;
    else return malformed(c, path, "fortran_order is not True or False", err, errlen);
    return 0;
  }
  return parse_shape(c, h, path, err, errlen);
}

static int parse_header(const char *text, size_t n, header_t *h, const char *path, char *err,
                        size_t errlen) {
  cursor_t c = {text, text + n, text};
  memset(h, 0, sizeof *h);
  skip_ws(&c);
  if (!eat(&c, '{')) return malformed(&c, path, "expected '{'", err, errlen);
  skip_ws(&c);
  while (!eat(&c, '}')) {
    const char *key;
    size_t klen;
    if (!lex_string(&c, &key, &klen))
      return malformed(&c, path, "expected a quoted key", err, errlen);
    skip_ws(&c);
    if (!eat(&c, ':')) return malformed(&c, path, "expected ':' after key", err, errlen);
    skip_ws(&c);
    if (parse_value(&c, key, klen, h, path, err, errlen) != 0) return -1;
    if (h->descr_structured) return 0; /* rejected by the caller; the rest is irrelevant */
    skip_ws(&c);
    if (eat(&c, ',')) {
      skip_ws(&c);
    } else if (!peek(&c, '}')) {
      return malformed(&c, path, "expected ',' or '}'", err, errlen);
    }
  }
  skip_ws(&c);
  if (c.p != c.end) return malformed(&c, path, "unexpected text after the dict", err, errlen);
  if (!h->have_descr) return fail(err, errlen, "%s: header is missing key 'descr'", path);
  if (!h->have_fortran)
    return fail(err, errlen, "%s: header is missing key 'fortran_order'", path);
  if (!h->have_shape) return fail(err, errlen, "%s: header is missing key 'shape'", path);
  return 0;
}

/* The rank and size checks of a 2-D read, with the matrix wording the 2-D functions have
 * always had. */
static int check_matrix(const header_t *h, const char *path, char *err, size_t errlen) {
  if (h->ndim != 2)
    return fail(err, errlen, "%s has %zu dimension%s, expected a 2-D matrix", path, h->ndim,
                h->ndim == 1 ? "" : "s");
  if (h->dims[0] == 0 || h->dims[1] == 0)
    return fail(err, errlen, "%s: empty matrix (shape (%llu, %llu))", path,
                (unsigned long long)h->dims[0], (unsigned long long)h->dims[1]);
  if (too_large(h->dims, 2))
    return fail(err, errlen, "%s: %llu x %llu float32 matrix exceeds the 1 GiB data limit",
                path, (unsigned long long)h->dims[0], (unsigned long long)h->dims[1]);
  return 0;
}

/* The rank and size checks of an N-D read. */
static int check_array(const header_t *h, const char *path, char *err, size_t errlen) {
  if (h->ndim == 0)
    return fail(err, errlen, "%s: shape () is a scalar, expected 1 to %d dimensions", path,
                NPY_MAX_RANK);
  if (h->ndim > NPY_MAX_RANK)
    return fail(err, errlen, "%s has %zu dimensions, expected at most %d", path, h->ndim,
                NPY_MAX_RANK);
  char shape[SHAPE_TEXT_LEN];
  shape_text(shape, sizeof shape, h->dims, h->ndim);
  if (has_zero_dim(h->dims, h->ndim))
    return fail(err, errlen, "%s: shape %s has a zero dimension", path, shape);
  if (too_large(h->dims, h->ndim))
    return fail(err, errlen, "%s: float32 array of shape %s exceeds the 1 GiB data limit", path,
                shape);
  return 0;
}

/* Checks that the parsed header describes an array this module can load: of rank
 * want_rank (2: a matrix), or of any supported rank (want_rank 0). */
static int check_header(const header_t *h, unsigned want_rank, const char *path, char *err, size_t errlen) {
  if (h->descr_structured)
    return fail(err, errlen, "%s: dtype is a structured type, expected float32 '<f4'", path);
  if (h->descr_len != 3 || memcmp(h->descr, "<f4", 3) != 0) {
    char shown[SHOW_MAX + 4];
    show(shown, sizeof shown, h->descr, h->descr_len);
    return fail(err, errlen, "%s: dtype is '%s', expected float32 '<f4'", path, shown);
  }
  if (h->fortran)
    return fail(err, errlen,
                "%s is Fortran-ordered; save it C-ordered (np.ascontiguousarray)", path);
  return want_rank == 2 ? check_matrix(h, path, err, errlen) : check_array(h, path, err, errlen);
}

/* ------------------------------------------------------------------ reader */

/* After a short read: reports a read error and returns true if there was one; plain end
 * of file returns false, leaving the caller to word what is missing. */
static bool read_failed(FILE *f, const char *path, const char *what, char *err,
                        size_t errlen) {
  if (!ferror(f)) return false;
  fail(err, errlen, "%s: read error in %s: %s", path, what, strerror(errno ? errno : EIO));
  return true;
}

/* Reads the array from f, which holds fsize bytes; `path` names it in messages; want_rank
 * as check_header's. Does not close f. */
static int read_stream(FILE *f, uint64_t fsize, const char *path, unsigned want_rank, npy_array_t *out, char *err,
                       size_t errlen) {
  int rc = -1;
  char *header = NULL;
  unsigned char *data = NULL;

  /* Preamble: magic, major, minor, then a 2-byte (v1) or 4-byte (v2, v3) header length. */
  unsigned char pre[12];
  size_t pre_len = 10;
  size_t got = fread(pre, 1, pre_len, f);
  if (got < pre_len || memcmp(pre, MAGIC, MAGIC_LEN) != 0) {
    if (!read_failed(f, path, "preamble", err, errlen))
      fail(err, errlen, "%s is not a .npy file", path);
    goto done;
  }
  unsigned major = pre[6], minor = pre[7];
  if (minor != 0 || major < 1 || major > 3) {
    fail(err, errlen, "%s: unsupported .npy format version %u.%u (expected 1.0, 2.0 or 3.0)",
         path, major, minor);
    goto done;
  }
  uint32_t hlen;
  if (major == 1) {
    hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
  } else {
    pre_len = 12;
    if (fread(pre + 10, 1, 2, f) < 2) {
      if (!read_failed(f, path, "preamble", err, errlen))
        fail(err, errlen, "%s is not a .npy file", path);
      goto done;
    }
    hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 |
           (uint32_t)pre[11] << 24;
  }
  if (hlen > MAX_HEADER_LEN) {
    fail(err, errlen, "%s: header length %lu exceeds the 64 KiB limit", path,
         (unsigned long)hlen);
    goto done;
  }

  header = malloc(hlen ? hlen : 1);
  if (!header) {
    fail(err, errlen, "%s: out of memory", path);
    goto done;
  }
  got = fread(header, 1, hlen, f);
  if (got < hlen) {
    if (!read_failed(f, path, "header", err, errlen))
      fail(err, errlen, "%s: header is truncated: expected %lu bytes, found %zu", path,
           (unsigned long)hlen, got);
    goto done;
  }
  if (hlen == 0 || header[hlen - 1] != '\n') {
    fail(err, errlen, "%s: header is not terminated by a newline", path);
    goto done;
  }
  header_t h;
  if (parse_header(header, hlen, &h, path, err, errlen) != 0 ||
      check_header(&h, want_rank, path, err, errlen) != 0)
    goto done;

  /* check_header bounded the size, so none of this can overflow. */
  size_t count = 1;
  for (size_t i = 0; i < h.ndim; i++) count *= (size_t)h.dims[i];
  size_t nbytes = count * ELEM_BYTES;
  uint64_t data_off = pre_len + hlen;

  /* Compare sizes before allocating, so a corrupt shape cannot make us allocate up to 1 GiB
   * only to find the data missing. */
  {
    uint64_t avail = fsize > data_off ? fsize - data_off : 0;
    if (avail < nbytes) {
      fail(err, errlen, "%s is truncated: expected %zu data bytes, found %llu", path, nbytes,
           (unsigned long long)avail);
      goto done;
    }
    if (avail > nbytes) {
      fail(err, errlen, "%s has %llu extra bytes after the %zu data bytes", path,
           (unsigned long long)(avail - nbytes), nbytes);
      goto done;
    }
  }

  data = malloc(nbytes);
  if (!data) {
    fail(err, errlen, "%s: out of memory for %zu data bytes", path, nbytes);
    goto done;
  }
  /* Re-checked while reading: the file may change under us. */
  got = fread(data, 1, nbytes, f);
  if (got < nbytes) {
    if (!read_failed(f, path, "data", err, errlen))
      fail(err, errlen, "%s is truncated: expected %zu data bytes, found %zu", path, nbytes,
           got);
    goto done;
  }
  if (fgetc(f) != EOF) {
    fail(err, errlen, "%s has extra bytes after the %zu data bytes", path, nbytes);
    goto done;
  }
  if (read_failed(f, path, "data", err, errlen)) goto done;

  if (!host_is_little_endian()) swap32_inplace(data, count);
  out->rank = (unsigned)h.ndim;
  for (size_t i = 0; i < h.ndim; i++) out->dims[i] = (size_t)h.dims[i];
  out->data = (float *)(void *)data;
  data = NULL;
  rc = 0;

done:
  free(data);
  free(header);
  return rc;
}

/* The readers' common part: `fn` names the public function in a null-argument message. */
static int read_path(const char *fn, const char *path, unsigned want_rank, npy_array_t *out, char *err,
                     size_t errlen) {
  if (out) memset(out, 0, sizeof *out);
  if (!path || !out) return fail(err, errlen, "%s: null argument", fn);
  /* Non-blocking open, so a FIFO with no writer cannot hang us; then only regular files:
   * a FIFO, socket or device could block or never end. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return fail(err, errlen, "cannot open %s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(err, errlen, "cannot open %s: %s", path, S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
  }
  int flags = fcntl(fd, F_GETFL);
  FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    return fail(err, errlen, "cannot open %s: %s", path, strerror(e));
  }
  int rc = read_stream(f, st.st_size > 0 ? (uint64_t)st.st_size : 0, path, want_rank, out, err, errlen);
  fclose(f); /* read-only: a close error cannot lose data */
  return rc;
}

static int read_mem(const char *fn, const void *buf, size_t len, const char *name, unsigned want_rank,
                    npy_array_t *out, char *err, size_t errlen) {
  if (out) memset(out, 0, sizeof *out);
  if (!buf || !name || !out) return fail(err, errlen, "%s: null argument", fn);
  static const char empty[1];
  FILE *f = fmemopen(len ? (void *)(uintptr_t)buf : (void *)(uintptr_t)empty, len ? len : 1, "rb");
  if (!f) return fail(err, errlen, "%s: %s", name, strerror(errno));
  int rc = len ? read_stream(f, len, name, want_rank, out, err, errlen) : fail(err, errlen, "%s is not a .npy file", name);
  fclose(f);
  return rc;
}

int npy_read_f32(const char *path, npy_array_t *out, char *err, size_t errlen) {
  return read_path("npy_read_f32", path, 0, out, err, errlen);
}

int npy_read_f32_mem(const void *buf, size_t len, const char *name, npy_array_t *out, char *err,
                     size_t errlen) {
  return read_mem("npy_read_f32_mem", buf, len, name, 0, out, err, errlen);
}

/* A 2-D array as a matrix (a is rank 2). */
static void to_matrix(const npy_array_t *a, npy_matrix_t *out) {
  out->rows = a->dims[0];
  out->cols = a->dims[1];
  out->data = a->data;
}

int npy_read_f32_2d(const char *path, npy_matrix_t *out, char *err, size_t errlen) {
  if (out) memset(out, 0, sizeof *out);
  if (!out) return fail(err, errlen, "npy_read_f32_2d: null argument");
  npy_array_t a;
  if (read_path("npy_read_f32_2d", path, 2, &a, err, errlen) != 0) return -1;
  to_matrix(&a, out);
  return 0;
}

int npy_read_f32_2d_mem(const void *buf, size_t len, const char *name, npy_matrix_t *out, char *err,
                        size_t errlen) {
  if (out) memset(out, 0, sizeof *out);
  if (!out) return fail(err, errlen, "npy_read_f32_2d_mem: null argument");
  npy_array_t a;
  if (read_mem("npy_read_f32_2d_mem", buf, len, name, 2, &a, err, errlen) != 0) return -1;
  to_matrix(&a, out);
  return 0;
}

/* ------------------------------------------------------------------ writer */

static int write_all(int fd, const void *buf, size_t n) {
  const unsigned char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (w == 0) {
      errno = EIO; /* write(2) made no progress; do not spin */
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int write_data(int fd, const float *data, size_t count) {
  if (host_is_little_endian()) return write_all(fd, data, count * ELEM_BYTES);
  unsigned char buf[4096];
  const unsigned char *src = (const unsigned char *)data;
  while (count > 0) {
    size_t k = count < sizeof buf / ELEM_BYTES ? count : sizeof buf / ELEM_BYTES;
    memcpy(buf, src, k * ELEM_BYTES);
    swap32_inplace(buf, k);
    if (write_all(fd, buf, k * ELEM_BYTES) != 0) return -1;
    src += k * ELEM_BYTES;
    count -= k;
  }
  return 0;
}

/* Builds the preamble and header exactly as numpy 1.24's np.save does for this array;
 * returns the total length (a multiple of 64). buf holds HEADER_BUF_LEN bytes; the shape
 * passed the writer's checks. */
static size_t build_header(char *buf, const uint64_t *dims, size_t rank) {
  char shape[SHAPE_TEXT_LEN];
  shape_text(shape, sizeof shape, dims, rank);
  int n = snprintf(buf + 10, HEADER_BUF_LEN - 10, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                   shape);
  size_t len = 10 + (size_t)n;
  /* Room for the first axis to grow to GROWTH_AXIS_MAX_DIGITS digits. */
  char digits[32];
  int rd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)dims[0]);
  size_t growth = rd < GROWTH_AXIS_MAX_DIGITS ? (size_t)(GROWTH_AXIS_MAX_DIGITS - rd) : 0;
  /* numpy pads by 1..64 spaces (a full 64 when already aligned), then the newline. */
  size_t pad = ARRAY_ALIGN - (len + growth + 1) % ARRAY_ALIGN;
  memset(buf + len, ' ', growth + pad);
  len += growth + pad;
  buf[len++] = '\n';
  size_t hlen = len - 10;
  memcpy(buf, MAGIC, MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xFF);
  buf[9] = (char)(hlen >> 8);
  return len;
}

/* rename() would replace a device or FIFO at path with a regular file: refuse them. */
static int target_ok(const char *path, char *err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
    return fail(err, errlen, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  return 0;
}

/* The N-D writers' checks; fills dims64 with the shape: 0, or -1 with a message. */
static int array_checks(const char *fn, const char *path, const float *data, unsigned rank, const size_t *dims,
                        uint64_t *dims64, char *err, size_t errlen) {
  if (!path || !data || !dims) return fail(err, errlen, "%s: null argument", fn);
  if (rank == 0 || rank > NPY_MAX_RANK)
    return fail(err, errlen, "%s: refusing to write an array of rank %u (expected 1 to %d)", path, rank,
                NPY_MAX_RANK);
  for (unsigned i = 0; i < rank; i++) dims64[i] = dims[i];
  char shape[SHAPE_TEXT_LEN];
  shape_text(shape, sizeof shape, dims64, rank);
  if (has_zero_dim(dims64, rank))
    return fail(err, errlen, "%s: refusing to write shape %s: it has a zero dimension", path, shape);
  if (too_large(dims64, rank))
    return fail(err, errlen, "%s: float32 array of shape %s exceeds the 1 GiB data limit", path, shape);
  return target_ok(path, err, errlen);
}

/* The matrix writers' checks, in the words they have always used: 0, or -1 with a message. */
static int matrix_checks(const char *path, const float *data, size_t rows, size_t cols, char *err, size_t errlen) {
  if (!path || !data) return fail(err, errlen, "npy_write_f32_2d: null argument");
  if (rows == 0 || cols == 0)
    return fail(err, errlen, "%s: refusing to write an empty %zu x %zu matrix", path, rows,
                cols);
  const uint64_t dims[2] = {rows, cols};
  if (too_large(dims, 2))
    return fail(err, errlen, "%s: %zu x %zu float32 matrix exceeds the 1 GiB data limit", path,
                rows, cols);
  return target_ok(path, err, errlen);
}

/* Header and data to fd, synced and closed (fd closed either way): 0, or -1 with the step
 * that failed in *step and errno set. */
static int write_fd(int fd, const float *data, const uint64_t *dims, size_t rank, const char **step) {
  char header[HEADER_BUF_LEN];
  size_t header_len = build_header(header, dims, rank);
  size_t count = 1;
  for (size_t i = 0; i < rank; i++) count *= (size_t)dims[i];
  *step = "write";
  if (write_all(fd, header, header_len) != 0 || write_data(fd, data, count) != 0) goto fail;
  *step = "sync";
  if (fsync(fd) != 0) goto fail; /* else a crash after rename could leave it empty */
  *step = "close";
  return close(fd) != 0 ? -1 : 0;
fail:;
  const int e = errno;
  close(fd);
  errno = e;
  return -1;
}

/* Writes the checked array to a temporary beside path and renames it into place. */
static int write_replace(const char *path, const float *data, const uint64_t *dims, size_t rank, char *err,
                         size_t errlen) {
  /* Temporary next to the target so rename() is atomic (same file system). O_EXCL with a
   * pid-and-attempt suffix instead of mkstemp so the final file gets the usual 0666 & ~umask
   * permissions, not mkstemp's 0600. */
  size_t tmp_size = strlen(path) + 64;
  char *tmp = malloc(tmp_size);
  if (!tmp) return fail(err, errlen, "%s: out of memory", path);
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
    snprintf(tmp, tmp_size, "%s.tmp-%ld-%d", path, (long)getpid(), attempt);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int e = errno;
    fail(err, errlen, "%s: cannot create temporary file %s: %s", path, tmp, strerror(e));
    free(tmp);
    return -1;
  }
  const char *step;
  if (write_fd(fd, data, dims, rank, &step) != 0) goto fail_tmp;
  step = "rename into place";
  if (rename(tmp, path) != 0) goto fail_tmp;
  free(tmp);
  return 0;

fail_tmp:;
  int e = errno;
  unlink(tmp);
  fail(err, errlen, "%s: cannot %s: %s", path, step, strerror(e));
  free(tmp);
  return -1;
}

/* Writes the checked array to path itself, removing it on failure. */
static int write_in_place(const char *path, const float *data, const uint64_t *dims, size_t rank, char *err,
                          size_t errlen) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return fail(err, errlen, "%s: cannot create: %s", path, strerror(errno));
  const char *step;
  if (write_fd(fd, data, dims, rank, &step) == 0) return 0;
  const int e = errno;
  unlink(path);
  return fail(err, errlen, "%s: cannot %s: %s", path, step, strerror(e));
}

int npy_write_f32(const char *path, const float *data, unsigned rank, const size_t *dims, char *err,
                  size_t errlen) {
  uint64_t d[NPY_MAX_RANK];
  if (array_checks("npy_write_f32", path, data, rank, dims, d, err, errlen)) return -1;
  return write_replace(path, data, d, rank, err, errlen);
}

int npy_write_f32_file(const char *path, const float *data, unsigned rank, const size_t *dims, char *err,
                       size_t errlen) {
  uint64_t d[NPY_MAX_RANK];
  if (array_checks("npy_write_f32_file", path, data, rank, dims, d, err, errlen)) return -1;
  return write_in_place(path, data, d, rank, err, errlen);
}

int npy_write_f32_2d(const char *path, const float *data, size_t rows, size_t cols, char *err,
                     size_t errlen) {
  if (matrix_checks(path, data, rows, cols, err, errlen)) return -1;
  const uint64_t d[2] = {rows, cols};
  return write_replace(path, data, d, 2, err, errlen);
}

int npy_write_f32_2d_file(const char *path, const float *data, size_t rows, size_t cols, char *err, size_t errlen) {
  if (matrix_checks(path, data, rows, cols, err, errlen)) return -1;
  const uint64_t d[2] = {rows, cols};
  return write_in_place(path, data, d, 2, err, errlen);
}
