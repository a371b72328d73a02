/*
 * arith_dot: streams a bf16 dot product through the RTL arithmetic units (rtl/arith_top.sv,
 * vmodel/arith_top.h): the multiplier takes one pair per cycle, the adder folds each product
 * into the fp32 running sum (a serial chain, one add per cycle thanks to the adder's 1-cycle
 * latency), and the converter rounds the sum to bf16. The golden model's
 * arith_golden_dot runs the same order.
 */
#ifndef RUNTIME_ARITH_DOT_H
#define RUNTIME_ARITH_DOT_H

#include <stdint.h>

#include "vmodel/vmodel.h"

typedef struct {
  uint32_t sum_fp32;
  uint16_t sum_bf16;
  uint64_t cycles;  /* from reset released to the bf16 result: n + 2 (docs/timing.md) */
} arith_dot_result_t;

/* Resets the model and runs the dot product of a and b (n bf16 each, n >= 1). */
arith_dot_result_t arith_dot_run(vmodel_t *m, const uint16_t *a, const uint16_t *b, uint64_t n);

#endif
