/* dataset: see dataset.h. */
#include "util/dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/rng.h"

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...) {
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void dataset_free(dataset_t *d) {
  if (!d) return;
  free(d->x);
  free(d->label);
  memset(d, 0, sizeof *d);
}

static int alloc(dataset_t *d, unsigned count, unsigned features, unsigned classes) {
  d->count = count, d->features = features, d->classes = classes;
  d->x = malloc((size_t)count * features * sizeof *d->x);
  d->label = malloc(count ? count : 1);
  if (!d->x || !d->label) {
    dataset_free(d);
    return -1;
  }
  return 0;
}

/* One field: 1 to 3 decimal digits, at most max. Returns its end, or NULL. */
static const char *field(const char *p, const char *end, unsigned max, unsigned *v) {
  unsigned n = 0, digits = 0;
  while (p < end && *p >= '0' && *p <= '9' && digits < 4) n = 10 * n + (unsigned)(*p++ - '0'), digits++;
  if (digits == 0 || digits > 3 || n > max) return NULL;
  *v = n;
  return p;
}

int dataset_parse_digits(const char *text, size_t len, const char *name, dataset_t *d, char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  /* count the lines first: one example each (a final newline ends the last one) */
  size_t lines = 0;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  if (len && text[len - 1] != '\n') lines++;
  if (lines == 0) return fail(err, errlen, "%s: no examples", name);
  if (lines > DATASET_MAX_EXAMPLES)
    return fail(err, errlen, "%s: more than %d examples", name, DATASET_MAX_EXAMPLES);
  if (alloc(d, (unsigned)lines, DIGITS_FEATURES, DIGITS_CLASSES)) return fail(err, errlen, "%s: out of memory", name);
  const char *p = text, *end = text + len;
  for (unsigned e = 0; e < d->count; e++) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *stop = eol > p && eol[-1] == '\r' ? eol - 1 : eol;  /* CRLF files too */
    for (unsigned f = 0; f <= DIGITS_FEATURES; f++) {
      const bool label = f == DIGITS_FEATURES;
      unsigned v;
      const char *q = field(p, stop, label ? DIGITS_CLASSES - 1 : DIGITS_MAX_PIXEL, &v);
      if (!q) {
        dataset_free(d);
        return fail(err, errlen, "%s: line %u, field %u: %s", name, e + 1, f + 1,
                    p >= stop ? "missing (a line holds 64 pixels and a label)"
                    : label   ? "not a label 0..9"
                              : "not a pixel 0..16");
      }
      if (!label && (q >= stop || *q != ',')) {
        dataset_free(d);
        return fail(err, errlen, "%s: line %u: %u fields, a line holds 64 pixels and a label", name, e + 1, f + 1);
      }
      if (label && q != stop) {
        dataset_free(d);
        return fail(err, errlen, "%s: line %u: more than 65 fields, or junk after the label", name, e + 1);
      }
      if (label) d->label[e] = (uint8_t)v;
      else d->x[(size_t)e * DIGITS_FEATURES + f] = (float)v / DIGITS_MAX_PIXEL;
      p = label ? q : q + 1;
    }
    p = eol < end ? eol + 1 : end;
  }
  return 0;
}

/* The file's text as it is read: at most DATASET_MAX_BYTES bytes once decompressed; the
 * buffer grows to one byte more, so that a longer text is seen as one. */
typedef struct {
  const char *path;
  char *text;
  size_t len, cap;
  char *err;
  size_t errlen;
} text_t;

static int too_long(const text_t *t) {
  return fail(t->err, t->errlen, "%s: more than %d MiB of text (decompressed)", t->path, DATASET_MAX_BYTES >> 20);
}

/* Room for at least one more byte of text, or -1 (too much text, out of memory). */
static int text_room(text_t *t) {
  if (t->len < t->cap) return 0;
  if (t->cap > DATASET_MAX_BYTES) return too_long(t);
  size_t next = t->cap ? 2 * t->cap : 1 << 20;
  if (next > (size_t)DATASET_MAX_BYTES + 1) next = (size_t)DATASET_MAX_BYTES + 1;
  char *grown = realloc(t->text, next);
  if (!grown) return fail(t->err, t->errlen, "%s: out of memory", t->path);
  t->text = grown, t->cap = next;
  return 0;
}

/* Reads from fd until zs holds at least `need` unread bytes at the start of `in` or the file
 * ends; -1 (with the message) on a read error. */
static int fill(int fd, z_stream *zs, unsigned char *in, size_t size, unsigned need, text_t *t) {
  if (zs->avail_in && zs->next_in != in) memmove(in, zs->next_in, zs->avail_in);
  zs->next_in = in;
  while (zs->avail_in < need) {
    const ssize_t n = read(fd, in + zs->avail_in, size - zs->avail_in);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(t->err, t->errlen, "cannot read %s: %s", t->path, strerror(errno));
    if (n == 0) break;
    zs->avail_in += (uInt)n;
  }
  return 0;
}

/* gzip members, one after another to the end of the file, as gzip -d reads them: anything
 * else after a member is refused. */
static int inflate_members(int fd, z_stream *zs, unsigned char *in, size_t size, text_t *t) {
  for (;;) {
    if (fill(fd, zs, in, size, 2, t)) return -1;
    if (zs->avail_in == 0) return 0;
    if (zs->avail_in < 2 || zs->next_in[0] != 0x1f || zs->next_in[1] != 0x8b)
      return fail(t->err, t->errlen, "%s: bytes after the end of the gzip data that are not a further gzip member",
                  t->path);
    if (inflateReset(zs) != Z_OK) return fail(t->err, t->errlen, "%s: corrupt gzip data (reset)", t->path);
    int z;
    do {
      if (zs->avail_in == 0 && fill(fd, zs, in, size, 1, t)) return -1;
      if (text_room(t)) return -1;
      zs->next_out = (Bytef *)t->text + t->len, zs->avail_out = (uInt)(t->cap - t->len);
      z = inflate(zs, Z_NO_FLUSH);
      t->len = t->cap - zs->avail_out;
      if (z == Z_BUF_ERROR && zs->avail_in == 0) /* no input left, and the member goes on */
        return fail(t->err, t->errlen, "%s: corrupt gzip data (it ends early)", t->path);
      if (z != Z_OK && z != Z_STREAM_END && z != Z_BUF_ERROR)
        return fail(t->err, t->errlen, "%s: corrupt gzip data (%s)", t->path, zs->msg ? zs->msg : "read error");
    } while (z != Z_STREAM_END);
  }
}

/* The whole text of fd: gzip (the magic 1f 8b first) inflated, anything else as it is. */
static int read_text(int fd, text_t *t) {
  enum { IN_BYTES = 1 << 16 };
  unsigned char *in = malloc(IN_BYTES);
  z_stream zs = {0};
  if (!in || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    free(in);
    return fail(t->err, t->errlen, "%s: out of memory", t->path);
  }
  int rc = fill(fd, &zs, in, IN_BYTES, 2, t);
  if (rc == 0 && zs.avail_in >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
    rc = inflate_members(fd, &zs, in, IN_BYTES, t);
  } else if (rc == 0) { /* plain text: what was read, then the rest */
    for (size_t at = 0; rc == 0;) {
      if ((rc = text_room(t))) break;
      if (at < zs.avail_in) {
        const size_t n = zs.avail_in - at < t->cap - t->len ? zs.avail_in - at : t->cap - t->len;
        memcpy(t->text + t->len, in + at, n);
        t->len += n, at += n;
        continue;
      }
      const ssize_t n = read(fd, t->text + t->len, t->cap - t->len);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) rc = fail(t->err, t->errlen, "cannot read %s: %s", t->path, strerror(errno));
      if (n <= 0) break;
      t->len += (size_t)n;
    }
  }
  inflateEnd(&zs);
  free(in);
  return rc == 0 && t->len > DATASET_MAX_BYTES ? too_long(t) : rc;
}

int dataset_read_digits(const char *path, dataset_t *d, char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  if (!path) path = DATASET_DIGITS_PATH;
  /* non-blocking open, so a FIFO with no writer cannot hang us; then only regular files */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fail(err, errlen, "cannot open %s: %s%s", path, strerror(errno),
                errno == ENOENT && !strcmp(path, DATASET_DIGITS_PATH) ? " (run 'make deps': package python3-sklearn)"
                                                                       : "");
  struct stat st;
  int flags = fcntl(fd, F_GETFL);
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    const bool dir = S_ISDIR(st.st_mode);
    close(fd);
    return fail(err, errlen, "cannot open %s: %s", path, dir ? strerror(EISDIR) : "not a regular file");
  }
  text_t t = {.path = path, .err = err, .errlen = errlen};
  int rc = read_text(fd, &t);
  close(fd);
  if (rc == 0) rc = dataset_parse_digits(t.text, t.len, path, d, err, errlen);
  free(t.text);
  return rc;
}

int dataset_synthetic(unsigned count, unsigned features, unsigned classes, uint64_t seed, dataset_t *d, char *err,
                      size_t errlen) {
  memset(d, 0, sizeof *d);
  if (count == 0 || count > DATASET_MAX_EXAMPLES || features == 0 || features > 65536 || classes < 2 ||
      classes > 256 || (uint64_t)count * features > (1ull << 28))
    return fail(err, errlen, "synthetic data: %u examples of %u features and %u classes is out of range (1..%d "
                "examples, 1..65536 features, 2..256 classes, at most 2^28 values)", count, features, classes,
                DATASET_MAX_EXAMPLES);
  float *centre = malloc((size_t)classes * features * sizeof *centre);
  if (!centre || alloc(d, count, features, classes)) {
    free(centre);
    return fail(err, errlen, "synthetic data: out of memory");
  }
  rng_t r;
  rng_seed(&r, seed);
  const float unit = 1.0f / 16777216.0f;  /* 24 random bits -> [0, 1) */
  for (size_t i = 0; i < (size_t)classes * features; i++) centre[i] = (float)(rng_next(&r) >> 40) * unit;
  for (unsigned e = 0; e < count; e++) {
    const unsigned c = (unsigned)rng_below(&r, classes);
    d->label[e] = (uint8_t)c;
    for (unsigned f = 0; f < features; f++)
      d->x[(size_t)e * features + f] =
          0.5f * centre[(size_t)c * features + f] + 0.5f * ((float)(rng_next(&r) >> 40) * unit);
  }
  free(centre);
  return 0;
}

int dataset_split(const dataset_t *all, dataset_t *train, dataset_t *test, char *err, size_t errlen) {
  memset(train, 0, sizeof *train);
  memset(test, 0, sizeof *test);
  const unsigned n_test = all->count / DATASET_TEST_EVERY, n_train = all->count - n_test;
  if (n_test == 0 || n_train == 0)
    return fail(err, errlen, "%u examples are too few to split (at least %d)", all->count, DATASET_TEST_EVERY);
  if (alloc(train, n_train, all->features, all->classes) || alloc(test, n_test, all->features, all->classes)) {
    dataset_free(train);
    dataset_free(test);
    return fail(err, errlen, "out of memory");
  }
  unsigned t = 0, s = 0;
  for (unsigned e = 0; e < all->count; e++) {
    dataset_t *to = e % DATASET_TEST_EVERY == DATASET_TEST_EVERY - 1 ? test : train;
    unsigned *k = to == test ? &t : &s;
    memcpy(to->x + (size_t)*k * all->features, all->x + (size_t)e * all->features, all->features * sizeof *all->x);
    to->label[*k] = all->label[e];
    (*k)++;
  }
  return 0;
}
