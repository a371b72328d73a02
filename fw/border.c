/* border: see border.h. */
#include "fw/border.h"

#include <stdio.h>

#include "fw/fw_util.h"

/* `bytes` (a multiple of 4) of zeros at addr: rows of up to a line, at most the block a DMA. */
static void zero_run(fw_prog_t *dq, uint32_t line_bytes, uint32_t zlines, uint64_t addr, uint64_t bytes) {
  while (bytes) {
    const uint64_t rows = fw_min_u32((uint32_t)(bytes / line_bytes), zlines);
    if (rows) {
      fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, 0, (uint32_t)addr, line_bytes, (uint32_t)rows, line_bytes);
      addr += rows * line_bytes, bytes -= rows * line_bytes;
    } else { /* the tail, shorter than a line */
      fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, 0, (uint32_t)addr, (uint32_t)bytes, 1, (uint32_t)bytes);
      bytes = 0;
    }
  }
}

int fw_zero_border(const chip_geometry_t *chip, const fw_act_t *t, uint32_t zero, fw_prog_t *dq, char *err,
                   size_t errlen) {
  if (!t->bh && !t->bw) return 0;
  const uint32_t line_bytes = 4 * chip->cols, zlines = fw_min_u32(FW_BORDER_ZERO_LINES, chip->vmem_lines);
  if ((uint64_t)t->addr + fw_act_bytes(t) > (1ull << 32)) {
    snprintf(err, errlen, "an activation of %llu bytes at 0x%x leaves the 32-bit HBM addresses",
             (unsigned long long)fw_act_bytes(t), t->addr);
    return -1;
  }
  fw_dma_hbm_to_vmem(dq, ISA_SEM_NONE, 0, zero, 0, 0, zlines, line_bytes);
  const uint64_t px = fw_act_pixel_bytes(t), row = fw_act_row_bytes(t), gap = 2ull * t->bw * px;
  for (uint32_t n = 0; n < t->n; n++) {
    const uint64_t img = fw_act_pixel_addr(t, n, -(int64_t)t->bh, -(int64_t)t->bw);
    zero_run(dq, line_bytes, zlines, img, t->bh * row + t->bw * px);        /* above, and row 0's left */
    if (gap && t->h > 1) /* row h's right and row h + 1's left: one strided DMA per piece of a line */
      for (uint64_t off = 0; off < gap; off += line_bytes) {
        const uint32_t piece = (uint32_t)(gap - off < line_bytes ? gap - off : line_bytes);
        for (uint32_t h = 0; h + 1 < t->h; h += zlines)
          fw_dma_vmem_to_hbm(dq, ISA_SEM_NONE, 0, 0, (uint32_t)(fw_act_pixel_addr(t, n, h, t->w) + off), (uint32_t)row,
                             fw_min_u32(zlines, t->h - 1 - h), piece);
      }
    zero_run(dq, line_bytes, zlines, fw_act_pixel_addr(t, n, t->h - 1, t->w), t->bw * px + t->bh * row); /* below */
  }
  return 0;
}
