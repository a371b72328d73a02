/*
 * coll_golden: the golden model of the collectives (docs/collectives.md). Written from
 * the documented reduction order, independently of the firmware: for every line it
 * works out which chips' values are summed in which order (fp32 adds, arith_golden).
 * Data is per chip `lines` lines of `lanes` fp32 bit patterns, chip (x, y) of the slice
 * at index y * w + x.
 */
#ifndef COLL_GOLDEN_H
#define COLL_GOLDEN_H

#include <stdint.h>

#include "fw/collective.h"

/* out gets what every chip's buffer holds after the collective (reduce-scatter: only the
 * owned lines are defined, the others are copied from the input). */
void coll_golden(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, const uint32_t *in, uint32_t *out);

#endif
