/* hal: see hal.h. The encoding follows docs/isa.md. */
#include "hal.h"

#include <stdlib.h>
#include <string.h>

enum {
  OP_HALT = 0x01, OP_FENCE = 0x02, OP_SEM_WAIT = 0x03, OP_SEM_SIGNAL = 0x04, OP_DMA = 0x10,
  OP_MXU_LOAD = 0x20, OP_MXU_MATMUL = 0x21, OP_MXU_STORE = 0x22, OP_VEC = 0x30, OP_RDMA = 0x40
};
enum { DMA_H2V = 0, DMA_V2H = 1, DMA_V2V = 2 };

void fw_prog_init(fw_prog_t *p) { memset(p, 0, sizeof *p); }

void fw_prog_free(fw_prog_t *p) {
  free(p->words);
  memset(p, 0, sizeof *p);
}

bool fw_prog_ok(const fw_prog_t *p) { return !p->oom; }

static void emit(fw_prog_t *p, unsigned op, unsigned sem, uint32_t w1, uint32_t w2, uint32_t w3,
                 uint32_t w4, uint32_t w5, uint32_t w6, uint32_t w7) {
  if (p->oom) return;
  if (p->count == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 64;
    uint32_t *w = realloc(p->words, cap * FW_CMD_WORDS * sizeof *w);
    if (!w) {
      p->oom = true;
      return;
    }
    p->words = w;
    p->cap = cap;
  }
  uint32_t *c = p->words + p->count++ * FW_CMD_WORDS;
  c[0] = (op & 0xFF) | (sem & 0xFF) << 8;
  c[1] = w1, c[2] = w2, c[3] = w3, c[4] = w4, c[5] = w5, c[6] = w6, c[7] = w7;
}

void fw_halt(fw_prog_t *p) { emit(p, OP_HALT, 0, 0, 0, 0, 0, 0, 0, 0); }
void fw_fence(fw_prog_t *p) { emit(p, OP_FENCE, 0, 0, 0, 0, 0, 0, 0, 0); }
void fw_sem_wait(fw_prog_t *p, unsigned sem, uint32_t value) { emit(p, OP_SEM_WAIT, sem, value, 0, 0, 0, 0, 0, 0); }
void fw_sem_signal(fw_prog_t *p, unsigned sem, uint32_t value) { emit(p, OP_SEM_SIGNAL, sem, value, 0, 0, 0, 0, 0, 0); }

void fw_dma_hbm_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                        uint32_t line, uint32_t rows, uint32_t bytes) {
  emit(p, OP_DMA, sem, value, DMA_H2V, hbm_addr, stride, line, rows, bytes);
}

void fw_dma_vmem_to_hbm(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t line, uint32_t hbm_addr,
                        uint32_t stride, uint32_t rows, uint32_t bytes) {
  emit(p, OP_DMA, sem, value, DMA_V2H, hbm_addr, stride, line, rows, bytes);
}

void fw_dma_vmem_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t src_line, uint32_t dst_line,
                         uint32_t rows) {
  emit(p, OP_DMA, sem, value, DMA_V2V, dst_line, 0, src_line, rows, 4);
}

void fw_rdma_on(fw_prog_t *p, unsigned engine, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line,
                uint32_t rows, unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value) {
  emit(p, OP_RDMA, remote_sem, remote_value, (x & 0xFF) | (y & 0xFF) << 8 | (engine & 3u) << 16, dst_line, src_line,
       rows, local_sem, local_value);
}

void fw_rdma(fw_prog_t *p, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line, uint32_t rows,
             unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value) {
  fw_rdma_on(p, 0, x, y, src_line, dst_line, rows, remote_sem, remote_value, local_sem, local_value);
}

void fw_mxu_load(fw_prog_t *p, uint32_t line) { emit(p, OP_MXU_LOAD, 0, 0, line, 0, 0, 0, 0, 0); }

void fw_mxu_matmul(fw_prog_t *p, uint32_t line, uint32_t rows, uint32_t acc_row, bool accumulate) {
  emit(p, OP_MXU_MATMUL, 0, 0, line, rows, acc_row, accumulate, 0, 0);
}

void fw_mxu_store(fw_prog_t *p, uint32_t acc_row, uint32_t rows, uint32_t line) {
  emit(p, OP_MXU_STORE, 0, 0, acc_row, rows, line, 0, 0, 0);
}

void fw_vec(fw_prog_t *p, fw_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line, uint32_t rows,
            uint32_t scalar_bits) {
  emit(p, OP_VEC, 0, (uint32_t)op, a_line, b_line, dst_line, rows, scalar_bits, 0);
}

void fw_raw(fw_prog_t *p, const uint32_t w[FW_CMD_WORDS]) {
  emit(p, w[0] & 0xFF, (w[0] >> 8) & 0xFF, w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
}
