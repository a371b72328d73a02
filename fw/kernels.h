/*
 * kernels: element-wise and copy kernels for one chip (and a remote copy between two),
 * built on the HAL like the GEMM. Data streams HBM -> VMEM -> (vector unit) -> HBM in
 * chunks of VMEM lines, double-buffered so DMA overlaps the vector unit. Each kernel uses
 * semaphores 16..23 and leaves them at zero.
 */
#ifndef FW_KERNELS_H
#define FW_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "fw/gemm.h"
#include "fw/hal.h"

/* out[i] = op(a[i], b[i]) for `count` fp32 values (b unused by one-operand ops; `scalar`
 * for ISA_VEC_SCALE). Addresses are HBM byte addresses, multiples of 4. Appends to a
 * compute and a DMA program (each ends with HALT). Returns 0, or -1 with a message. */
int fw_elementwise(const chip_geometry_t *chip, isa_vec_op_t op, uint32_t a, uint32_t b, uint32_t out, uint32_t count,
                   uint32_t scalar, fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen);

/* Copies `bytes` (a multiple of 4) from src to dst in HBM through VMEM (DMA queue only;
 * appends HALT). */
int fw_copy_local(const chip_geometry_t *chip, uint32_t src, uint32_t dst, uint32_t bytes, fw_prog_t *dq, char *err,
                  size_t errlen);

/* Copies `bytes` (a multiple of 4) from src in the HBM of chip (sx, sy) to dst in the HBM
 * of chip (x, y): `sender` runs on the first chip's DMA queue, `receiver` on the other's. */
int fw_copy_remote(const chip_geometry_t *chip, unsigned sx, unsigned sy, unsigned x, unsigned y, uint32_t src,
                   uint32_t dst, uint32_t bytes, fw_prog_t *sender, fw_prog_t *receiver, char *err, size_t errlen);

#endif
