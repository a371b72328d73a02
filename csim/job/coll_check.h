/*
 * coll_check: a collective's results checked against the golden model as the pod jobs run it
 * (golden/coll_golden's streaming check): under MPI every rank fetches every chip's results
 * (reading a chip is collective: chip/chip.h) and checks a share of them, and the shares'
 * verdicts are merged on every rank, so each rank reports the same verdict.
 */
#ifndef JOB_COLL_CHECK_H
#define JOB_COLL_CHECK_H

#include <stdint.h>

#include "fw/collective_args.h"
#include "golden/coll_golden.h"

/* 0, or -1 as coll_golden_check_stream. */
int job_coll_check(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems, coll_golden_io_t *io,
                   coll_check_t *chk);

#endif
