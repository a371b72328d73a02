/* outfile: see outfile.h. */
#define _GNU_SOURCE /* syncfs */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cli.h"

typedef struct {
  char *dest;     /* where it goes (a symbolic link's target), as the user named it otherwise */
  char *shown;    /* as the user named it (messages; outfile_temp looks it up by this) */
  char *canon;    /* dest with its directory resolved: two claims of one file have the same */
  char *temp;     /* what the command writes */
  char *hier;     /* the FST writer's companion of temp (an FST output), or NULL */
  char *scratch;  /* a scratch file beside temp, or NULL */
} claim_t;

/* The claims by name given and by canonical destination, so that a command claiming many
 * files (randprog --save: a set a file) costs the same per file: open addressing, claim
 * i + 1 in a slot (0: empty), at most half full. */
typedef struct {
  uint32_t *slot;
  size_t cap;
} index_t;

typedef struct {
  dev_t dev;
  ino_t ino;
  char *shown;
} input_t;

/* (process-wide: see outfile.h) */
static claim_t *claims;
static volatile sig_atomic_t nclaims; /* the signal handler reads claims[0 .. nclaims) */
static size_t claims_cap;
static input_t *inputs;
static size_t ninputs, inputs_cap;
static bool handlers_installed;
static index_t by_shown, by_canon;
static char probed_dir[PATH_MAX]; /* the directory the last claim's probe succeeded in */

static const int SIGNALS[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/* Removes every temporary, then dies of the signal (so the exit status says which). Only
 * async-signal-safe calls: unlink, signal, raise. */
static void remove_temps(void) {
  for (sig_atomic_t i = 0; i < nclaims; i++) {
    unlink(claims[i].temp);
    if (claims[i].hier) unlink(claims[i].hier);
    if (claims[i].scratch) unlink(claims[i].scratch);
  }
}

static void on_signal(int sig) {
  remove_temps();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_handlers(void) {
  if (handlers_installed) return;
  handlers_installed = true;
  atexit(remove_temps); /* (an exit that skipped outfile_finish leaves nothing either) */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++) sigaddset(&sa.sa_mask, SIGNALS[i]);
  for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++) {
    struct sigaction old;
    /* a signal the parent set to be ignored (nohup, a shell's background job) stays ignored */
    if (sigaction(SIGNALS[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(SIGNALS[i], &sa, NULL);
  }
}

static char *dup_printf(const char *fmt, const char *a, const char *b) {
  const size_t n = strlen(fmt) + strlen(a) + strlen(b) + 32;
  char *s = malloc(n);
  if (s) snprintf(s, n, fmt, a, b);
  return s;
}

/* The directory part of path ("." or "/" when there is none) in dir. */
static void dir_of(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, len, ".");
  else if (slash == path) snprintf(dir, len, "/");
  else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* The canonical name of a destination that may not exist yet: its directory resolved. */
static bool canonical(const char *path, char *out, size_t len) {
  char dir[PATH_MAX], real[PATH_MAX];
  dir_of(path, dir, sizeof dir);
  if (!realpath(dir, real)) return false;
  const char *slash = strrchr(path, '/');
  return (size_t)snprintf(out, len, "%s/%s", real, slash ? slash + 1 : path) < len;
}

static int usage(const char *cmd, const char *opt, const char *path, const char *why) {
  return cli_usage_error(cmd, "%s: cannot write '%s': %s", opt, path, why);
}

/* Whether a file can be created in dir: a probe is made and removed, since permission bits
 * alone mislead (root, read-only and virtual file systems). NULL, or the reason. */
static const char *dir_refuses(const char *dir) {
  struct stat st;
  if (stat(dir, &st) || !S_ISDIR(st.st_mode)) return "does not exist";
  char probe[PATH_MAX + 64];
  snprintf(probe, sizeof probe, "%s/.tpusim-%ld-probe", dir, (long)getpid());
  const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return strerror(errno);
  close(fd);
  unlink(probe);
  return NULL;
}

/* What is at path: a regular file or nothing, in a directory this process can create files
 * in (outputs are written beside their destination). */
static bool check_dest(const char *cmd, const char *opt, const char *shown, const char *dest) {
  struct stat st;
  const bool exists = stat(dest, &st) == 0;
  if (exists && !S_ISREG(st.st_mode))
    return usage(cmd, opt, shown, S_ISDIR(st.st_mode) ? "it is a directory" : "not a regular file"), false;
  if (!exists && errno != ENOENT) return usage(cmd, opt, shown, strerror(errno)), false;
  char dir[PATH_MAX], why[PATH_MAX + 64];
  dir_of(dest, dir, sizeof dir);
  /* (a directory probed once is not probed again: creating a file is the costly part of a claim,
   * and randprog --save claims a file a set in one directory) */
  const char *no = strcmp(dir, probed_dir) ? dir_refuses(dir) : NULL;
  if (!no) snprintf(probed_dir, sizeof probed_dir, "%s", dir);
  if (no) {
    snprintf(why, sizeof why, "directory '%s' %s%s", dir, strcmp(no, "does not exist") ? "refuses a new file: " : "", no);
    return usage(cmd, opt, shown, why), false;
  }
  return true;
}

bool outfile_dir_ok(const char *cmd, const char *opt, const char *dir) {
  const char *no = *dir ? dir_refuses(dir) : "an empty path";
  if (no) cli_usage_error(cmd, "%s %s: cannot write files into it: %s", opt, dir, strcmp(no, "does not exist") ? no : "no such directory");
  return !no;
}

static bool same_file(const char *path, dev_t dev, ino_t ino) {
  struct stat st;
  return stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Doubles the claims' array with the signals blocked (the handler reads it; claims are made
 * while the command line is parsed, before the run starts any thread). */
static bool grow_claims(void) {
  const size_t cap = claims_cap ? 2 * claims_cap : 16;
  claim_t *grown = malloc(cap * sizeof *grown), *old = claims;
  if (!grown) return false;
  sigset_t block, was;
  sigemptyset(&block);
  for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++) sigaddset(&block, SIGNALS[i]);
  pthread_sigmask(SIG_BLOCK, &block, &was);
  if (nclaims) memcpy(grown, old, (size_t)nclaims * sizeof *grown);
  claims = grown, claims_cap = cap;
  pthread_sigmask(SIG_SETMASK, &was, NULL);
  free(old);
  return true;
}

static void free_claim(claim_t *c) {
  free(c->dest), free(c->shown), free(c->canon), free(c->temp), free(c->hier), free(c->scratch);
}

static const char *shown_of(const claim_t *c) { return c->shown; }
static const char *canon_of(const claim_t *c) { return c->canon; }

static size_t slot_of(const index_t *ix, const char *key) {
  uint64_t h = 14695981039346656037ull; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return (size_t)h & (ix->cap - 1);
}

/* The claim whose field is key, or NULL. */
static claim_t *index_find(const index_t *ix, const char *key, const char *(*field)(const claim_t *)) {
  if (!ix->cap) return NULL;
  for (size_t h = slot_of(ix, key); ix->slot[h]; h = (h + 1) & (ix->cap - 1))
    if (!strcmp(field(&claims[ix->slot[h] - 1]), key)) return &claims[ix->slot[h] - 1];
  return NULL;
}

static void index_put(index_t *ix, uint32_t i, const char *(*field)(const claim_t *)) {
  size_t h = slot_of(ix, field(&claims[i]));
  while (ix->slot[h]) h = (h + 1) & (ix->cap - 1);
  ix->slot[h] = i + 1;
}

/* Room for claims[0 .. n] in both indexes (rebuilt when they would be over half full). */
static bool index_room(size_t n) {
  if (2 * (n + 1) <= by_shown.cap) return true;
  const size_t cap = by_shown.cap ? 2 * by_shown.cap : 64;
  uint32_t *a = calloc(cap, sizeof *a), *b = calloc(cap, sizeof *b);
  if (!a || !b) return free(a), free(b), false;
  free(by_shown.slot), free(by_canon.slot);
  by_shown = (index_t){a, cap}, by_canon = (index_t){b, cap};
  for (uint32_t i = 0; i < n; i++) index_put(&by_shown, i, shown_of), index_put(&by_canon, i, canon_of);
  return true;
}

bool outfile_claim(const char *cmd, const char *opt, const char *path) {
  if (!*path) return cli_usage_error(cmd, "%s: an empty path", opt), false;
  char dest[PATH_MAX];
  struct stat st;
  /* a symbolic link is followed: the file it names is the output */
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    if (!realpath(path, dest) && !(errno == ENOENT && canonical(path, dest, sizeof dest)))
      return usage(cmd, opt, path, strerror(errno)), false;
  } else if ((size_t)snprintf(dest, sizeof dest, "%s", path) >= sizeof dest) {
    return usage(cmd, opt, path, "the path is too long"), false;
  }
  if (!check_dest(cmd, opt, path, dest)) return false;
  char canon[PATH_MAX];
  if (!canonical(dest, canon, sizeof canon)) return usage(cmd, opt, path, strerror(errno)), false;
  const claim_t *same = index_find(&by_canon, canon, canon_of);
  if (same)
    return cli_usage_error(cmd, "%s '%s': the same file is already an output of this command ('%s')", opt, path,
                           same->shown), false;
  for (size_t i = 0; i < ninputs; i++)
    if (same_file(dest, inputs[i].dev, inputs[i].ino))
      return cli_usage_error(cmd, "%s '%s' is an input of this command ('%s'): it would be overwritten", opt, path,
                             inputs[i].shown), false;
  if (((size_t)nclaims == claims_cap && !grow_claims()) || !index_room((size_t)nclaims))
    return cli_fail(cmd, "out of memory"), false;
  char tag[64], dir[PATH_MAX];
  snprintf(tag, sizeof tag, ".tpusim-%ld-%ld.", (long)getpid(), (long)nclaims);
  dir_of(dest, dir, sizeof dir);
  const char *slash = strrchr(dest, '/'), *name = slash ? slash + 1 : dest;
  claim_t c = {.dest = strdup(dest), .shown = strdup(path), .canon = strdup(canon), .temp = dup_printf("%s/%s", dir, tag)};
  char *temp = c.temp ? dup_printf("%s%s", c.temp, name) : NULL;
  free(c.temp);
  c.temp = temp;
  if (!c.dest || !c.shown || !c.canon || !c.temp) {
    free_claim(&c);
    return cli_fail(cmd, "out of memory"), false;
  }
  /* a temporary that exists is not ours: never touch it */
  if (lstat(c.temp, &st) == 0) {
    free_claim(&c);
    return usage(cmd, opt, path, "its temporary name already exists (another tpusim of the same process id?)"), false;
  }
  install_handlers();
  claims[nclaims] = c;
  index_put(&by_shown, (uint32_t)nclaims, shown_of), index_put(&by_canon, (uint32_t)nclaims, canon_of);
  nclaims = nclaims + 1; /* (after the entry is whole: the handler may run at any point) */
  return true;
}

bool outfile_input(const char *cmd, const char *opt, const char *path) {
  struct stat st;
  if (stat(path, &st)) return true; /* (the reader reports it) */
  for (sig_atomic_t i = 0; i < nclaims; i++)
    if (same_file(claims[i].dest, st.st_dev, st.st_ino))
      return cli_usage_error(cmd, "%s '%s' is an output of this command ('%s'): it would be overwritten", opt, path,
                             claims[i].shown), false;
  if (ninputs == inputs_cap) {
    const size_t cap = inputs_cap ? 2 * inputs_cap : 8;
    input_t *grown = realloc(inputs, cap * sizeof *grown);
    if (!grown) return cli_fail(cmd, "out of memory"), false;
    inputs = grown, inputs_cap = cap;
  }
  inputs[ninputs++] = (input_t){.dev = st.st_dev, .ino = st.st_ino, .shown = strdup(path)};
  return true;
}

static claim_t *find(const char *path) {
  claim_t *c = index_find(&by_shown, path, shown_of);
  if (c) return c;
  fprintf(stderr, "tpusim: internal error: output '%s' was not claimed\n", path);
  abort();
}

const char *outfile_temp(const char *path) { return find(path)->temp; }

const char *outfile_temp_fst(const char *path) {
  claim_t *c = find(path);
  if (!c->hier) {
    char *hier = dup_printf("%s%s", c->temp, ".hier");
    if (!hier) abort();
    c->hier = hier; /* (a pointer store: the handler sees NULL or the whole name) */
  }
  return c->temp;
}

const char *outfile_scratch(const char *path, const char *suffix) {
  claim_t *c = find(path);
  if (!c->scratch) {
    char *s = dup_printf("%s.%s", c->temp, suffix);
    if (!s) abort();
    c->scratch = s;
  }
  return c->scratch;
}

FILE *outfile_open(const char *path, const char *mode) {
  const int fd = open(outfile_temp(path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, mode);
  if (!f) {
    const int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

int outfile_close(FILE *f) {
  const bool bad = fflush(f) != 0 || ferror(f);
  int e = bad ? (errno ? errno : EIO) : 0;
  if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
  if (e) errno = e;
  return e ? -1 : 0;
}

static uint64_t be64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

/* An FST file is whole when its blocks -- a type byte, then a big-endian length that counts
 * itself and the block's data -- run from the header block exactly to the end of the file,
 * and it has the geometry and hierarchy blocks the writer appends last (gtkwave's fstapi.c:
 * FST_BL_HDR 0, FST_BL_GEOM 3, FST_BL_HIER 4 and its LZ4 forms 6 and 7). */
static bool fst_whole(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  struct stat st;
  if (fstat(fileno(f), &st)) {
    fclose(f);
    return false;
  }
  bool geom = false, hier = false, ok = true;
  for (uint64_t pos = 0, n = 0;; n++) {
    unsigned char h[9];
    const size_t got = fread(h, 1, sizeof h, f);
    if (got == 0 && feof(f)) break;
    const uint64_t len = got == sizeof h ? be64(h + 1) : 0;
    if (got != sizeof h || len < 8 || (n == 0 && h[0] != 0) || fseeko(f, (off_t)(pos + 1 + len), SEEK_SET)) {
      ok = false;
      break;
    }
    geom |= h[0] == 3, hier |= h[0] == 4 || h[0] == 6 || h[0] == 7;
    if ((pos += 1 + len) > (uint64_t)st.st_size) {
      ok = false;
      break;
    }
  }
  fclose(f);
  return ok && geom && hier;
}

/* Everything written to the file system of c's temporary reaches the disk before any rename (a
 * crash then never leaves an empty file at a destination, and a delayed allocation that
 * fails on a full disk is seen): one syncfs for a file system, not an fsync a file, which cost
 * 15 s for randprog --save's 20,000 sets. */
static int sync_dir_of(const char *cmd, const claim_t *c, char *synced, size_t len) {
  char dir[PATH_MAX];
  dir_of(c->temp, dir, sizeof dir);
  if (access(c->temp, F_OK) || !strcmp(dir, synced)) return CLI_EXIT_OK; /* (not written, or synced) */
  snprintf(synced, len, "%s", dir);
  const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int bad = fd < 0 || syncfs(fd) != 0;
  const int e = errno;
  if (fd >= 0) close(fd);
  return bad ? cli_fail(cmd, "cannot write '%s' to the disk: %s", c->shown, strerror(e)) : CLI_EXIT_OK;
}

int outfile_finish(const char *cmd, int rc) {
  if (rc == CLI_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout)))
    rc = cli_fail(cmd, "cannot write the report to standard output: %s", strerror(errno ? errno : EIO));
  for (sig_atomic_t i = 0; i < nclaims && rc == CLI_EXIT_OK; i++) {
    const claim_t *c = &claims[i];
    if (c->scratch) unlink(c->scratch);
    if (c->hier && access(c->temp, F_OK) == 0 && !fst_whole(c->temp))
      rc = cli_fail(cmd, "the waveform '%s' is incomplete (a short write: is the disk full?)", c->shown);
  }
  char synced[PATH_MAX] = "";
  for (sig_atomic_t i = 0; i < nclaims && rc == CLI_EXIT_OK; i++) rc = sync_dir_of(cmd, &claims[i], synced, sizeof synced);
  for (sig_atomic_t i = 0; i < nclaims && rc == CLI_EXIT_OK; i++) {
    const claim_t *c = &claims[i];
    if (rename(c->temp, c->dest) != 0 && errno != ENOENT)
      rc = cli_fail(cmd, "cannot move the finished '%s' into place: %s", c->shown, strerror(errno));
  }
  remove_temps(); /* (after a success: only what a failure left, and the FST writers' .hier) */
  outfile_reset();
  return rc;
}

void outfile_reset(void) {
  const sig_atomic_t n = nclaims;
  nclaims = 0;
  for (sig_atomic_t i = 0; i < n; i++) free_claim(&claims[i]);
  if (by_shown.cap) memset(by_shown.slot, 0, by_shown.cap * sizeof *by_shown.slot);
  if (by_canon.cap) memset(by_canon.slot, 0, by_canon.cap * sizeof *by_canon.slot);
  for (size_t i = 0; i < ninputs; i++) free(inputs[i].shown);
  ninputs = 0;
  probed_dir[0] = 0;
}
