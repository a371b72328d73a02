/*
 * arith_top: the Verilated model of rtl/arith_top.sv, the three arithmetic units side
 * by side (bf16 multiply, fp32 add, fp32->bf16 convert), each with latency 1.
 * Ports: clk_i rst_ni; mul_valid_i mul_a_i[16] mul_b_i[16] -> mul_valid_o mul_product_o[32];
 * add_valid_i add_a_i[32] add_b_i[32] -> add_valid_o add_sum_o[32];
 * cvt_valid_i cvt_a_i[32] -> cvt_valid_o cvt_result_o[16]. Driven through vmodel.h.
 */
#ifndef ARITH_TOP_H
#define ARITH_TOP_H

#include "vmodel/vmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Latency, in cycles, of each arithmetic unit (input sampled -> output valid). */
#define ARITH_UNIT_LATENCY 1

/* Builds the model with reset values randomised from `seed`; NULL if out of memory. */
vmodel_t *arith_top_new(uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
