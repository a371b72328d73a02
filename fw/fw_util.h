/*
 * fw_util: the small integer helpers every fw kernel builder uses (minimum, division rounded
 * up, rounding up to a multiple). Header only, static inline; fw/ includes nothing else.
 */
#ifndef FW_FW_UTIL_H
#define FW_FW_UTIL_H

#include <stdint.h>

static inline uint32_t fw_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t fw_ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static inline uint32_t fw_round_up(uint32_t a, uint32_t b) { return fw_ceil_div(a, b) * b; }

#endif
