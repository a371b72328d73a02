/*
 * chip_top: the Verilated models of rtl/chip_top.sv, one per MXU size built into this
 * binary (CHIP_SIZES in the Makefile), with their geometry. Driven through vmodel.h by
 * csim/chip.c, which adds the HBM model and the host's view.
 */
#ifndef CHIP_TOP_H
#define CHIP_TOP_H

#include <stdint.h>

#include "vmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned rows, cols, acc_depth, vmem_lines, queue_depth;
} chip_geometry_t;

/* Builds the chip with a rows x cols MXU; NULL if that size is not built in. */
vmodel_t *chip_top_new(unsigned rows, unsigned cols, uint64_t seed);
/* Fills *g for that size; returns 0, or -1 if not built. */
int chip_top_geometry(unsigned rows, unsigned cols, chip_geometry_t *g);
/* The sizes built, as "4x4 16x16 ..." for messages. */
const char *chip_top_sizes(void);

#ifdef __cplusplus
}
#endif

#endif
