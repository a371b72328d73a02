/* coll_check: the distributed golden check of a collective (coll_check.h). */
#include "job/coll_check.h"

#include <string.h>

#include "util/dist.h"

int job_coll_check(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems, coll_golden_io_t *io,
                   coll_check_t *chk) {
  io->share = dist_rank(), io->shares = dist_size();
  const int rc = coll_golden_check_stream(s, a, lanes, elems, io, chk);
  if (!dist_active() || rc) return rc; /* (a read that fails, fails on every rank: chip.h) */
  /* the shares' verdicts summed; the first mismatch is the one first in the check's order */
  int64_t counts[3] = {(int64_t)chk->checked, (int64_t)chk->mismatches, (int64_t)chk->bound_violations};
  dist_sum_i64(counts, 3);
  uint64_t bits; /* a non-negative double's bits order as the double does: the max, exactly */
  memcpy(&bits, &chk->max_rel_error, sizeof bits);
  uint64_t worst = UINT64_MAX - bits;
  dist_min_u64(&worst, 1);
  const uint64_t key = coll_golden_merge_key(a, s->w * s->h, elems, chk);
  uint64_t first = key, from;
  dist_min_u64(&first, 1);
  from = first != UINT64_MAX && key == first ? dist_rank() : UINT64_MAX;
  dist_min_u64(&from, 1);
  if (from != UINT64_MAX) dist_bcast(chk, sizeof *chk, (unsigned)from);
  chk->checked = (uint64_t)counts[0], chk->mismatches = (uint64_t)counts[1];
  chk->bound_violations = (uint64_t)counts[2];
  bits = UINT64_MAX - worst;
  memcpy(&chk->max_rel_error, &bits, sizeof bits);
  return rc;
}
