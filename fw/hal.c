/* hal: see hal.h. Every command is built field by field from the command table (fw/isa.def). */
#include "fw/hal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fw_prog_init(fw_prog_t *p) { memset(p, 0, sizeof *p); }

void fw_prog_free(fw_prog_t *p) {
  free(p->words);
  memset(p, 0, sizeof *p);
}

bool fw_prog_ok(const fw_prog_t *p) { return !p->oom; }

int fw_programs_fit(const chip_geometry_t *chip, const fw_prog_t *compute, const fw_prog_t *dma, const char *what,
                    const char *hint, char *err, size_t errlen) {
  if ((compute && !fw_prog_ok(compute)) || !fw_prog_ok(dma)) {
    snprintf(err, errlen, "out of memory building %s", what);
    return -1;
  }
  if (compute && (compute->count > chip->queue_depth || dma->count > chip->queue_depth)) {
    snprintf(err, errlen, "%s needs %zu compute and %zu DMA commands; a queue holds %u%s", what, compute->count,
             dma->count, chip->queue_depth, hint);
    return -1;
  }
  if (!compute && dma->count > chip->queue_depth) {
    snprintf(err, errlen, "%s needs %zu DMA commands; a queue holds %u%s", what, dma->count, chip->queue_depth, hint);
    return -1;
  }
  return 0;
}

void fw_prog_mark(fw_prog_t *p, const char *name) {
  if (p->nmarks && p->marks[p->nmarks - 1].at == p->count) p->nmarks--;
  if (p->nmarks < FW_PROG_MARKS) p->marks[p->nmarks++] = (fw_mark_t){(uint32_t)p->count, name};
}

/* Appends a zeroed command with opcode `op`; returns its words, or NULL when out of memory
 * (then the program stays marked). */
static uint32_t *emit(fw_prog_t *p, isa_opcode_t op) {
  if (p->oom) return NULL;
  if (p->count == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 64;
    uint32_t *w = realloc(p->words, cap * ISA_CMD_WORDS * sizeof *w);
    if (!w) {
      p->oom = true;
      return NULL;
    }
    p->words = w;
    p->cap = cap;
  }
  uint32_t *c = p->words + p->count++ * ISA_CMD_WORDS;
  memset(c, 0, ISA_CMD_WORDS * sizeof *c);
  isa_put(c, ISA_OPCODE_WORD, ISA_OPCODE_LSB, ISA_OPCODE_WIDTH, op);
  return c;
}

void fw_halt(fw_prog_t *p) { emit(p, ISA_OP_HALT); }
void fw_fence(fw_prog_t *p) { emit(p, ISA_OP_FENCE); }

void fw_sem_wait(fw_prog_t *p, unsigned sem, uint32_t value) {
  uint32_t *c = emit(p, ISA_OP_SEM_WAIT);
  if (!c) return;
  ISA_PUT(c, SEM_WAIT, sem, sem);
  ISA_PUT(c, SEM_WAIT, value, value);
}

void fw_sem_signal(fw_prog_t *p, unsigned sem, uint32_t value) {
  uint32_t *c = emit(p, ISA_OP_SEM_SIGNAL);
  if (!c) return;
  ISA_PUT(c, SEM_SIGNAL, sem, sem);
  ISA_PUT(c, SEM_SIGNAL, value, value);
}

static void dma(fw_prog_t *p, isa_dma_kind_t kind, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                uint32_t line, uint32_t rows, uint32_t bytes) {
  uint32_t *c = emit(p, ISA_OP_DMA);
  if (!c) return;
  ISA_PUT(c, DMA, sem, sem);
  ISA_PUT(c, DMA, value, value);
  ISA_PUT(c, DMA, kind, kind);
  ISA_PUT(c, DMA, hbm_addr, hbm_addr);
  ISA_PUT(c, DMA, stride, stride);
  ISA_PUT(c, DMA, line, line);
  ISA_PUT(c, DMA, rows, rows);
  ISA_PUT(c, DMA, bytes, bytes);
}

void fw_dma_hbm_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                        uint32_t line, uint32_t rows, uint32_t bytes) {
  dma(p, ISA_DMA_HBM_TO_VMEM, sem, value, hbm_addr, stride, line, rows, bytes);
}

void fw_dma_hbm_to_vmem_transposed(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                                   uint32_t line, uint32_t rows, uint32_t bytes) {
  dma(p, ISA_DMA_HBM_TO_VMEM_T, sem, value, hbm_addr, stride, line, rows, bytes);
}

void fw_dma_vmem_to_hbm(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t line, uint32_t hbm_addr,
                        uint32_t stride, uint32_t rows, uint32_t bytes) {
  dma(p, ISA_DMA_VMEM_TO_HBM, sem, value, hbm_addr, stride, line, rows, bytes);
}

void fw_dma_vmem_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t src_line, uint32_t dst_line,
                         uint32_t rows) {
  /* whole lines; the byte count only has to be valid */
  dma(p, ISA_DMA_VMEM_TO_VMEM, sem, value, dst_line, 0, src_line, rows, 4);
}

void fw_rdma_on(fw_prog_t *p, unsigned engine, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line,
                uint32_t rows, unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value) {
  uint32_t *c = emit(p, ISA_OP_RDMA);
  if (!c) return;
  ISA_PUT(c, RDMA, remote_sem, remote_sem);
  ISA_PUT(c, RDMA, remote_value, remote_value);
  ISA_PUT(c, RDMA, x, x);
  ISA_PUT(c, RDMA, y, y);
  ISA_PUT(c, RDMA, engine, engine);
  ISA_PUT(c, RDMA, dst, dst_line);
  ISA_PUT(c, RDMA, src, src_line);
  ISA_PUT(c, RDMA, rows, rows);
  ISA_PUT(c, RDMA, local_sem, local_sem);
  ISA_PUT(c, RDMA, local_value, local_value);
  ISA_PUT(c, RDMA, core, p->rdma_core);
}

void fw_rdma_core(fw_prog_t *p, unsigned core) { p->rdma_core = core; }

void fw_rdma(fw_prog_t *p, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line, uint32_t rows,
             unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value) {
  fw_rdma_on(p, 0, x, y, src_line, dst_line, rows, remote_sem, remote_value, local_sem, local_value);
}

void fw_mxu_select(fw_prog_t *p, unsigned mxu) { p->mxu = mxu; }

void fw_mxu_load(fw_prog_t *p, uint32_t line) {
  uint32_t *c = emit(p, ISA_OP_MXU_LOAD);
  if (!c) return;
  ISA_PUT(c, MXU_LOAD, line, line);
  ISA_PUT(c, MXU_LOAD, mxu, p->mxu);
}

void fw_mxu_load_transposed(fw_prog_t *p, uint32_t line) {
  uint32_t *c = emit(p, ISA_OP_MXU_LOAD);
  if (c) {
    ISA_PUT(c, MXU_LOAD, line, line);
    ISA_PUT(c, MXU_LOAD, transpose, 1);
    ISA_PUT(c, MXU_LOAD, mxu, p->mxu);
  }
}

void fw_mxu_matmul(fw_prog_t *p, uint32_t line, uint32_t rows, uint32_t acc_row, bool accumulate) {
  uint32_t *c = emit(p, ISA_OP_MXU_MATMUL);
  if (!c) return;
  ISA_PUT(c, MXU_MATMUL, line, line);
  ISA_PUT(c, MXU_MATMUL, rows, rows);
  ISA_PUT(c, MXU_MATMUL, acc_row, acc_row);
  ISA_PUT(c, MXU_MATMUL, accumulate, accumulate);
  ISA_PUT(c, MXU_MATMUL, mxu, p->mxu);
}

void fw_mxu_store(fw_prog_t *p, uint32_t acc_row, uint32_t rows, uint32_t line) {
  uint32_t *c = emit(p, ISA_OP_MXU_STORE);
  if (!c) return;
  ISA_PUT(c, MXU_STORE, acc_row, acc_row);
  ISA_PUT(c, MXU_STORE, rows, rows);
  ISA_PUT(c, MXU_STORE, line, line);
  ISA_PUT(c, MXU_STORE, mxu, p->mxu);
}

static uint32_t *vec_cmd(fw_prog_t *p, isa_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line,
                         uint32_t rows, uint32_t scalar_bits) {
  uint32_t *c = emit(p, ISA_OP_VEC);
  if (!c) return NULL;
  ISA_PUT(c, VEC, op, op);
  ISA_PUT(c, VEC, a, a_line);
  ISA_PUT(c, VEC, b, b_line);
  ISA_PUT(c, VEC, dst, dst_line);
  ISA_PUT(c, VEC, rows, rows);
  ISA_PUT(c, VEC, scalar, scalar_bits);
  return c;
}

void fw_vec(fw_prog_t *p, isa_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line, uint32_t rows,
            uint32_t scalar_bits) {
  vec_cmd(p, op, a_line, b_line, dst_line, rows, scalar_bits);
}

void fw_vec_bcast(fw_prog_t *p, isa_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line, uint32_t rows,
                  uint32_t scalar_bits) {
  uint32_t *c = vec_cmd(p, op, a_line, b_line, dst_line, rows, scalar_bits);
  if (c) ISA_PUT(c, VEC, b_repeat, 1);
}

void fw_raw(fw_prog_t *p, const uint32_t w[ISA_CMD_WORDS]) {
  uint32_t *c = emit(p, (isa_opcode_t)0);
  if (c) memcpy(c, w, ISA_CMD_WORDS * sizeof *c);
}

void fw_prog_append(fw_prog_t *p, const fw_prog_t *src, size_t first, size_t n) {
  if (src->oom) p->oom = true;
  for (size_t i = first; i < first + n && i < src->count; i++) fw_raw(p, src->words + i * ISA_CMD_WORDS);
}
