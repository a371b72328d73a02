/*
 * dist: the process's place in an MPI job (Open MPI; docs/scale.md "MPI"). `mpirun -np R
 * build/tpusim ...` starts R processes (ranks) that all run the same command: the host's
 * program runs on every rank, the pod's rows are split among the ranks, and a rank simulates
 * only its own chips. Without mpirun the process is rank 0 of 1 and MPI is never started.
 *
 * Every call below is collective when the job has several ranks: all ranks make the same
 * calls in the same order (they run the same host program on the same arguments).
 */
#ifndef DIST_H
#define DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Starts MPI when this process was started by mpirun (else does nothing): 0, or -1 with a
 * message. Then checks that every rank got the same arguments, and (on every run, MPI or not)
 * the environment's TPUSIM_END_WAIT_S: -2 with a message (a usage error) if not. */
int dist_init(int *argc, char ***argv, char *err, size_t errlen);
/* Ends MPI (if started), the process's status being `rc`. A rank that ends first waits for the
 * others to end too, up to DIST_END_WAIT_S seconds (the environment's TPUSIM_END_WAIT_S, if
 * set and not empty: a decimal number of seconds from DIST_END_WAIT_MIN_S to DIST_END_WAIT_MAX_S;
 * anything else is refused by dist_init): a rank that failed alone (its host program stopped where the others' did not) would
 * otherwise leave them waiting for ever in a shared operation. If they do not all come, it
 * says so on stderr and stops the job (MPI_Abort with rc, or 1). */
void dist_finalize(int rc);
#define DIST_END_WAIT_S 30
#define DIST_END_WAIT_MIN_S 1     /* below a second rank 0 may still be writing the reports */
#define DIST_END_WAIT_MAX_S 86400 /* a day */
/* Stops every rank of the job (a rank that cannot go on must not leave the others waiting). */
void dist_abort(int code);

unsigned dist_rank(void);
unsigned dist_size(void);
/* Several ranks: the chips' operations are shared (chip.c) and the pod's run is split. */
static inline bool dist_active(void) { return dist_size() > 1; }

/* Rank `root`'s n bytes at buf, on every rank. */
void dist_bcast(void *buf, size_t n, unsigned root);
/* Element-wise sum, and minimum, of n values over the ranks, in place. */
void dist_sum_i64(int64_t *v, size_t n);
void dist_min_u64(uint64_t *v, size_t n);
/* Whether any rank says true. */
bool dist_any(bool mine);
/* Exchanges with the other ranks: send[k] (send_len[k] bytes, may be 0) goes to rank k and
 * recv[k] (recv_len[k] bytes) comes from it; lengths known on both sides. */
void dist_exchange(void *const *send, const size_t *send_len, void *const *recv, const size_t *recv_len);

#endif
