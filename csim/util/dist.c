/* dist: see dist.h. Open MPI, started only under mpirun (OMPI_COMM_WORLD_SIZE set): a plain run
 * never pays MPI's start-up. */
#include "util/dist.h"

#include <ctype.h>
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned rank_, size_ = 1;
static bool started;
static double end_wait_s = DIST_END_WAIT_S;

/* TPUSIM_END_WAIT_S, strictly: unset or empty, the default; else a plain decimal number of
 * seconds in the documented range (a value a correct job could not end within, 0 or less,
 * or text, would make dist_finalize stop a job that did nothing wrong). */
static int read_end_wait(char *err, size_t errlen) {
  const char *env = getenv("TPUSIM_END_WAIT_S");
  end_wait_s = DIST_END_WAIT_S;
  if (!env || !*env) return 0;
  char *end;
  errno = 0;
  const double v = strtod(env, &end);
  if (isspace((unsigned char)*env) || end == env || *end || errno || !(v >= DIST_END_WAIT_MIN_S) ||
      !(v <= DIST_END_WAIT_MAX_S)) {
    snprintf(err, errlen, "TPUSIM_END_WAIT_S is '%.40s': it must be a number of seconds from %d to %d (how long a rank "
             "that has ended waits for the other MPI ranks; unset: %d)", env, DIST_END_WAIT_MIN_S, DIST_END_WAIT_MAX_S,
             DIST_END_WAIT_S);
    return -1;
  }
  end_wait_s = v;
  return 0;
}

/* FNV-1a of the arguments: ranks that disagree on them would simulate different things. */
static uint64_t args_hash(int argc, char **argv) {
  uint64_t h = 14695981039346656037ull;
  for (int i = 1; i < argc; i++)
    for (const char *s = argv[i];; s++) {
      h = (h ^ (unsigned char)*s) * 1099511628211ull;
      if (!*s) break;
    }
  return h;
}

int dist_init(int *argc, char ***argv, char *err, size_t errlen) {
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  if (!world || atoi(world) <= 1) return read_end_wait(err, errlen) ? -2 : 0;
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    snprintf(err, errlen, "MPI did not start");
    return -1;
  }
  started = true;
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  rank_ = (unsigned)r, size_ = (unsigned)n;
  if (n > 255) { /* a rank takes whole rows of a pod of at most 255 */
    snprintf(err, errlen, "%d MPI ranks: a pod has at most 255 rows and a rank takes whole rows (at most 255)", n);
    return -2;
  }
  uint64_t mine = args_hash(*argc, *argv), lo = mine, hi = mine;
  MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) {
    snprintf(err, errlen, "the %u ranks were started with different arguments: every rank must run the same command",
             size_);
    return -2;
  }
  return read_end_wait(err, errlen) ? -2 : 0; /* (with MPI up: rank 0 says it, every rank ends) */
}

void dist_finalize(int rc) {
  if (!started) return;
  const double wait = end_wait_s;
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  const double until = MPI_Wtime() + wait;
  int done = 0;
  while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done && MPI_Wtime() < until) {
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  if (!done) {
    fprintf(stderr, "tpusim: rank %u has ended (status %d) but the other ranks have not within %g s (a failure on "
            "this rank alone?): stopping the job\n", rank_, rc, wait);
    fflush(stdout), fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, rc ? rc : 1);
  }
  MPI_Finalize();
  started = false;
}

void dist_abort(int code) {
  if (started) MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);
}

unsigned dist_rank(void) { return rank_; }
unsigned dist_size(void) { return size_; }

/* MPI counts are ints: large buffers go in pieces. */
#define CHUNK (1u << 30)

void dist_bcast(void *buf, size_t n, unsigned root) {
  if (size_ < 2) return;
  for (size_t off = 0; off < n; off += CHUNK)
    MPI_Bcast((char *)buf + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_BYTE, (int)root, MPI_COMM_WORLD);
}

void dist_sum_i64(int64_t *v, size_t n) {
  if (size_ > 1 && n) MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void dist_min_u64(uint64_t *v, size_t n) {
  if (size_ > 1 && n) MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
}

bool dist_any(bool mine) {
  int v = mine;
  if (size_ > 1) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  return v != 0;
}

void dist_exchange(void *const *send, const size_t *send_len, void *const *recv, const size_t *recv_len) {
  if (size_ < 2) return;
  MPI_Request req[2 * 256]; /* dist_init: at most 255 ranks */
  int nreq = 0;
  for (unsigned k = 0; k < size_; k++) {
    if (k == rank_) continue;
    if (recv_len[k]) MPI_Irecv(recv[k], (int)recv_len[k], MPI_BYTE, (int)k, 7, MPI_COMM_WORLD, &req[nreq++]);
    if (send_len[k]) MPI_Isend(send[k], (int)send_len[k], MPI_BYTE, (int)k, 7, MPI_COMM_WORLD, &req[nreq++]);
  }
  MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
}
