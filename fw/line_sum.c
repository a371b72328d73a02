/* line_sum: see line_sum.h and docs/kernels.md (the worked example). */
#include "fw/line_sum.h"

#include <stdio.h>

#include "fw/fw_util.h"

/* Semaphores: a chunk landed in buffer b (DMA -> compute), buffer b read (compute -> DMA),
 * the result ready (compute -> DMA). */
enum { SEM_LOADED = FW_SEMS_STREAM, SEM_FREE = SEM_LOADED + 2, SEM_DONE = SEM_FREE + 2 };


uint32_t fw_line_sum_chunk(const chip_geometry_t *chip, const fw_line_sum_args_t *a) {
  if (a->chunk_lines) return a->chunk_lines;
  uint32_t room = chip->vmem_lines > a->vmem_line + 1 ? (chip->vmem_lines - a->vmem_line - 1) / 2 : 0;
  return fw_min_u32(fw_min_u32(256, room), a->rows);
}

uint32_t fw_line_sum_result_line(const chip_geometry_t *chip, const fw_line_sum_args_t *a) {
  uint64_t line = a->vmem_line + 2ull * fw_line_sum_chunk(chip, a);
  return line < chip->vmem_lines ? (uint32_t)line : chip->vmem_lines;  /* past VMEM: fw_line_sum refuses it */
}

/* Compute queue: the tree sum of the n lines at `line`, into `line` itself. Each VEC adds the
 * upper part to the lower part in one command, a line per cycle; the vector unit runs its
 * commands in order, so each step reads the previous step's results. */
static void tree_sum(fw_prog_t *cq, uint32_t line, uint32_t n) {
  while (n > 1) {
    uint32_t upper = (n + 1) / 2, pairs = n / 2;
    fw_vec(cq, ISA_VEC_ADD, line, line + upper, line, pairs, 0);
    n = upper;
  }
}

int fw_line_sum(const chip_geometry_t *chip, const fw_line_sum_args_t *a, fw_prog_t *cq, fw_prog_t *dq, char *err,
                size_t errlen) {
  const uint32_t line_bytes = 4 * chip->cols, chunk = fw_line_sum_chunk(chip, a);
  const uint32_t result = fw_line_sum_result_line(chip, a);
  if (a->rows == 0) {
    snprintf(err, errlen, "line_sum needs at least one row");
    return -1;
  }
  if (chunk == 0 || (uint64_t)result + 1 > chip->vmem_lines) {
    snprintf(err, errlen, "line_sum: two chunks of %u lines and the result do not fit VMEM from line %u", chunk,
             a->vmem_line);
    return -1;
  }
  const uint32_t chunks = (a->rows + chunk - 1) / chunk;
  for (uint32_t c = 0; c < chunks; c++) {
    const uint32_t b = c % 2, buf = a->vmem_line + b * chunk, n = fw_min_u32(chunk, a->rows - c * chunk);
    /* DMA queue: load chunk c into buffer b once the chunk before it there has been summed */
    if (c >= 2) fw_sem_wait(dq, SEM_FREE + b, 1);
    fw_dma_hbm_to_vmem(dq, SEM_LOADED + b, 1, a->src + c * chunk * line_bytes, line_bytes, buf, n, line_bytes);
    /* compute queue: sum it, fold it into the result, hand the buffer back */
    fw_sem_wait(cq, SEM_LOADED + b, 1);
    tree_sum(cq, buf, n);
    if (c == 0)
      fw_vec(cq, ISA_VEC_COPY, buf, buf, result, 1, 0);
    else
      fw_vec(cq, ISA_VEC_ADD, result, buf, result, 1, 0);
    fw_sem_signal(cq, SEM_FREE + b, 1);  /* a release: fires once the VECs above have written */
  }
  fw_sem_signal(cq, SEM_DONE, 1);
  /* DMA queue: wait for the result; take the buffer signals nobody waited for (the last two
   * chunks'), so every semaphore is back at zero */
  fw_sem_wait(dq, SEM_DONE, 1);
  for (uint32_t c = chunks >= 2 ? chunks - 2 : 0; c < chunks; c++) fw_sem_wait(dq, SEM_FREE + c % 2, 1);
  char what[48];
  snprintf(what, sizeof what, "line_sum of %u rows", a->rows);
  return fw_programs_fit(chip, cq, dq, what, " (use larger chunks)", err, errlen);
}
