/*
 * line_sum: the worked example of docs/kernels.md. Sums `rows` lines of fp32 values in HBM
 * into one line, lane by lane, on the vector unit: out[l] = sum over r of in[r][l].
 *
 * The order of the additions is part of the kernel's definition (csim/golden/line_sum_golden.c
 * reproduces it bit for bit): the rows are taken in chunks of `chunk_lines`; each chunk is
 * summed as a tree in VMEM (while a chunk has n > 1 lines, line i += line i + ceil(n/2) for
 * i < floor(n/2), then n = ceil(n/2)); the chunk sums are added in order into the result
 * (result = chunk 0, then result += chunk 1, ...). The DMA queue loads chunk c + 1 while the
 * vector unit sums chunk c (two VMEM buffers), synchronised by semaphores FW_SEMS_STREAM..
 * +4, which the kernel leaves at zero.
 */
#ifndef FW_LINE_SUM_H
#define FW_LINE_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "fw/hal.h"

typedef struct {
  uint32_t src;          /* HBM byte address of the rows, one VMEM line (4 * cols bytes) each */
  uint32_t rows;         /* >= 1 */
  uint32_t chunk_lines;  /* rows per chunk, >= 1; 0 chooses (fw_line_sum_chunk) */
  uint32_t vmem_line;    /* first of the VMEM lines it uses: 2 * chunk_lines buffers, then the result */
} fw_line_sum_args_t;

/* The chunk fw_line_sum uses when chunk_lines is 0: 256 lines, or what two buffers of VMEM
 * hold from vmem_line on. */
uint32_t fw_line_sum_chunk(const chip_geometry_t *chip, const fw_line_sum_args_t *a);

/* The VMEM line that holds the result once the programs are done (vmem_lines when the
 * arguments do not fit: fw_line_sum refuses them). */
uint32_t fw_line_sum_result_line(const chip_geometry_t *chip, const fw_line_sum_args_t *a);

/* Appends the kernel to a compute and a DMA program, without HALT: once the DMA queue is past
 * it the result is in VMEM (fw_line_sum_result_line), and later compute commands see it in
 * program order; the caller stores it, or goes on (a collective over the chips' sums,
 * docs/kernels.md). Returns 0, or -1 with a message. */
int fw_line_sum(const chip_geometry_t *chip, const fw_line_sum_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                size_t errlen);

#endif
