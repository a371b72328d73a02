/*
 * coll_golden: the golden model of the collectives (docs/collectives.md). Written from
 * the documented reduction order, independently of the firmware: for every line it
 * works out which chips' values are summed in which order (fp32 adds: arith_golden_fpu,
 * arith_golden's on the host FPU).
 * Data is per chip `lines` lines of `lanes` fp32 bit patterns, chip (x, y) of the slice
 * at index y * w + x.
 */
#ifndef GOLDEN_COLL_GOLDEN_H
#define GOLDEN_COLL_GOLDEN_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/collective_args.h"

/* out gets what every chip's buffer holds after the collective (reduce-scatter: only the
 * owned lines are defined, the others are copied from the input). */
void coll_golden(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, const uint32_t *in, uint32_t *out);

/* The slice index of the chip that owns line l of `lines` after a reduce-scatter (and
 * contributes it to an all-gather): the X ring's segments, then the Y ring's segments of
 * those (docs/collectives.md). */
unsigned coll_golden_owner(const fw_slice_t *s, uint32_t lines, uint32_t l);

/* The float64 error bound of a sequential fp32 sum of n values, relative to sum |x|:
 * gamma(n-1) = (n-1)u / (1 - (n-1)u), u = 2^-24 (docs/collectives.md). */
double coll_golden_bound(unsigned n);

typedef struct {
  uint64_t checked;            /* values compared */
  uint64_t mismatches;         /* values that differ from the golden model */
  uint64_t bound_violations;   /* reductions: sums outside the float64 bound */
  double max_rel_error;        /* reductions: max |got - float64 sum| / sum |x| */
  double bound;                /* coll_golden_bound(chips) */
  unsigned first_chip;         /* the first mismatch, when there is one */
  uint64_t first_value;
  uint32_t got, want;
} coll_check_t;

/* Checks a collective's results on every chip of the slice. in: chips x elems fp32 bit
 * patterns a chip (bf16 inputs widened), chip i of the slice at i * elems; out: what each
 * chip returned, the same layout. Every value must equal the golden model's (reduce-scatter:
 * the lines the chip owns; all_to_all: block j of chip i is block i of chip j, elems/chips
 * values a block), and every reduction must lie within the float64 bound. a->lines is
 * ignored (it follows from elems). Returns 0, or -1 when out of memory. */
int coll_golden_check(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems,
                      const uint32_t *in, const uint32_t *out, coll_check_t *c);

/* The same check with the data fetched as it is needed, a block of values of every chip at a
 * time, so a pod of any size is checked without holding every chip's data: input(chip, first,
 * n) gives chip's inputs [first, first + n) (bf16 widened), output(...) what the chip holds
 * there after the collective (0, or -1 when it cannot be read: the check stops, -1). */
typedef struct {
  void *ctx;
  void (*input)(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals);
  int (*output)(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals);
  /* A share of the work (shares 0 or 1: all of it): every output is fetched, in the same order,
   * but only blocks of values with index % shares == share are checked (all-to-all: the chips
   * i with i % shares == share), and only their inputs asked for. For processes whose outputs
   * come from calls they must all make together, each checking a share (MPI ranks,
   * docs/scale.md); coll_golden_merge_key orders their first mismatches. */
  unsigned share, shares;
} coll_golden_io_t;
/* The place of c's first mismatch in the check's own order (UINT64_MAX when none), so that the
 * first of several shares' is the one with the smallest key. */
uint64_t coll_golden_merge_key(const fw_coll_args_t *a, unsigned chips, uint64_t elems, const coll_check_t *c);

int coll_golden_check_stream(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems,
                             const coll_golden_io_t *io, coll_check_t *c);

#endif
