/*
 * border: zeroes the border of an activation in HBM (fw/act.h) before a kernel writes its
 * interior. The memory plan reuses HBM (docs/models.md, "The compiler"), so a buffer's border
 * may hold an earlier tenant's bytes; the kernels write only the interior, and the convolutions
 * that read the buffer take the border as their zero padding. A DMA-queue program for core 0:
 * a block of VMEM lines is filled from the HBM zero line (stride 0), then written over the
 * border, which per image is one run above (the top rows and the first row's left columns), a
 * run of 2 bw pixels between each pair of rows, and one run below. Uses no semaphore.
 */
#ifndef FW_BORDER_H
#define FW_BORDER_H

#include <stddef.h>
#include <stdint.h>

#include "fw/act.h"
#include "fw/hal.h"

/* VMEM lines the zero block takes from line 0. */
#define FW_BORDER_ZERO_LINES 256u

/* Appends the zeroing of t's border to dma (no HALT; nothing when t has no border). zero: HBM
 * address of a line of zero bytes. 0, or -1 with a message when VMEM is smaller than the block
 * or an address leaves 32 bits. */
int fw_zero_border(const chip_geometry_t *chip, const fw_act_t *t, uint32_t zero, fw_prog_t *dma, char *err,
                   size_t errlen);

#endif
