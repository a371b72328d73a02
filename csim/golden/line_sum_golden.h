/*
 * line_sum_golden: the golden model of the worked-example kernel fw/line_sum.h, written from
 * its documented order of additions (not from the firmware): each chunk of rows summed as a
 * tree, the chunk sums added in order. fp32 adds of arith_golden; values are bit patterns.
 */
#ifndef GOLDEN_LINE_SUM_GOLDEN_H
#define GOLDEN_LINE_SUM_GOLDEN_H

#include <stdint.h>

/* in: rows lines of `lanes` fp32 values; out: one line. rows, chunk_lines >= 1. Returns 0,
 * or -1 when out of memory. */
int line_sum_golden(unsigned lanes, uint32_t rows, uint32_t chunk_lines, const uint32_t *in, uint32_t *out);

#endif
