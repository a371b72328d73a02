/* dma_fast: see dma_fast.h. The order of decisions is chip_dma.sv's. */
#include "fast/dma_fast.h"

#include <stdlib.h>
#include <string.h>

int dma_fast_init(dma_fast_t *d, unsigned cols, uint32_t vmem_lines) {
  memset(d, 0, sizeof *d);
  d->cols = cols;
  d->vmem_lines = vmem_lines;
  d->wline = calloc(cols, sizeof *d->wline);
  return d->wline ? 0 : -1;
}

void dma_fast_free(dma_fast_t *d) {
  free(d->wline);
  free(d->tbuf);
}

void dma_fast_reset(dma_fast_t *d) {
  d->fifo_count = 0;
  d->fifo_head = 0;
  d->cur_active = false;
  d->cur_row = 0;
  d->pend_count = 0;
  d->pend_head = 0;
  d->t_busy = false;
  d->drain = false;
}

static uint32_t vline_of(const dma_fast_t *d, uint32_t v) { return v & (d->vmem_lines - 1); }

static const uint32_t *vmem_line(const paged_t *vmem, uint32_t line) { return paged_read(vmem, line); }

bool dma_fast_request(const dma_fast_t *d, const paged_t *vmem, bool *write, uint32_t *addr, uint32_t *bytes,
                      const uint32_t **data) {
  if (!d->cur_active || d->cur.kind == ISA_DMA_VMEM_TO_VMEM) return false;
  *write = d->cur.kind == ISA_DMA_VMEM_TO_HBM;
  *addr = d->cur.hbm_addr + d->cur_row * d->cur.stride;
  *bytes = d->cur.bytes;
  *data = vmem_line(vmem, vline_of(d, d->cur.line + d->cur_row));
  return true;
}

/* An earlier HBM -> VMEM transfer still has to write lines the next VMEM -> HBM one reads:
 * entry [line, line + left) against [next.line, next.line + rows), in LineAw + 1 bits. */
static bool reads_pending(const dma_fast_t *d, const dma_fast_desc_t *next) {
  const uint32_t w = 2 * d->vmem_lines - 1; /* LineAw + 1 bits */
  for (unsigned i = 0; i < d->pend_count; i++) {
    const dma_fast_pend_t *p = &d->pend[(d->pend_head + i) % DMA_FAST_PENDING];
    if (p->read && p->line < ((next->line + (next->rows & w)) & w) && next->line < ((p->line + (p->left & w)) & w))
      return true;
  }
  return false;
}

static dma_fast_desc_t desc_of(const dma_fast_t *d, const uint32_t *cmd) {
  return (dma_fast_desc_t){.kind = (uint8_t)(ISA_GET(cmd, DMA, kind) & 3), .sem = (uint8_t)ISA_GET(cmd, DMA, sem),
                           .hbm_addr = ISA_GET(cmd, DMA, hbm_addr), .stride = ISA_GET(cmd, DMA, stride),
                           .line = vline_of(d, ISA_GET(cmd, DMA, line)), .rows = ISA_GET(cmd, DMA, rows),
                           .value = ISA_GET(cmd, DMA, value), .bytes = (uint16_t)ISA_GET(cmd, DMA, bytes)};
}

int dma_fast_cycle(dma_fast_t *d, const paged_t *vmem, bool desc_valid, const uint32_t *cmd, bool hbm_ready,
                   const uint32_t *answer, dma_fast_out_t *out) {
  const unsigned cols = d->cols;
  memset(out, 0, sizeof *out);
  /* ---- the cycle, from the state before the edge */
  const bool cur_is_v2v = d->cur.kind == ISA_DMA_VMEM_TO_VMEM;
  const bool cur_last = d->cur_row + 1 == d->cur.rows;
  const bool pend_full = d->pend_count == DMA_FAST_PENDING;
  const bool req_valid = d->cur_active && !cur_is_v2v;
  const bool issue_fire = req_valid && hbm_ready;
  const bool v2v_step = d->cur_active && cur_is_v2v && d->pend_count == 0;
  const bool cur_done = (issue_fire || v2v_step) && cur_last;
  const dma_fast_desc_t next = d->fifo[d->fifo_head];
  const bool have_next = d->fifo_count != 0;
  const bool start = have_next && (!d->cur_active || cur_done) && !d->t_busy &&
                     (next.kind == ISA_DMA_VMEM_TO_VMEM || !pend_full) &&
                     !(next.kind == ISA_DMA_VMEM_TO_HBM && reads_pending(d, &next)) &&
                     !(next.kind == ISA_DMA_HBM_TO_VMEM_T && (d->pend_count != 0 || d->cur_active));
  dma_fast_pend_t *head = &d->pend[d->pend_head];
  const bool resp = answer != NULL;
  const bool answer_last = resp && head->left == 1;
  const bool push = desc_valid && dma_fast_ready(d);

  if (resp && head->read) {
    out->vmem_we = true;
    out->vmem_waddr = head->line;
    const unsigned words = head->bytes / 4; /* bytes is a multiple of 4: zero beyond them */
    memcpy(d->wline, answer, words * sizeof *d->wline);
    memset(d->wline + words, 0, (cols - words) * sizeof *d->wline);
    out->vmem_wdata = d->wline;
  } else if (d->drain) {
    out->vmem_we = true;
    out->vmem_waddr = d->t_line;
    const unsigned e = d->t_elem % (2 * cols);
    memset(d->wline, 0, cols * sizeof *d->wline);
    for (unsigned r = 0; r < cols && r < d->t_rows; r++) {
      const uint32_t h = (d->tbuf[(size_t)r * cols + e / 2] >> (16 * (e % 2))) & 0xFFFFu;
      d->wline[r / 2] |= h << (16 * (r % 2));
    }
    out->vmem_wdata = d->wline;
  } else if (v2v_step) {
    out->vmem_we = true;
    out->vmem_waddr = vline_of(d, d->cur.hbm_addr + d->cur_row);
    memcpy(d->wline, vmem_line(vmem, vline_of(d, d->cur.line + d->cur_row)), cols * sizeof *d->wline);
    out->vmem_wdata = d->wline;
  }
  if (answer_last && !head->tr && head->sem != ISA_SEM_NONE) {
    out->sem_signal = true, out->sem_idx = head->sem & 31, out->sem_value = head->value;
  } else if (d->drain && d->t_left == 1 && d->t_sem != ISA_SEM_NONE) {
    out->sem_signal = true, out->sem_idx = d->t_sem & 31, out->sem_value = d->t_value;
  } else if (v2v_step && cur_last && d->cur.sem != ISA_SEM_NONE) {
    out->sem_signal = true, out->sem_idx = d->cur.sem & 31, out->sem_value = d->cur.value;
  }

  /* ---- the edge */
  if (push) d->fifo[d->fifo_head ^ (d->fifo_count & 1)] = desc_of(d, cmd);
  d->fifo_count = d->fifo_count + push - start;
  if (start) d->fifo_head ^= 1;
  if (start) {
    d->cur_active = true;
    d->cur = next;
    d->cur_row = 0;
  } else if (cur_done) {
    d->cur_active = false;
  } else if (issue_fire || v2v_step) {
    d->cur_row++;
  }
  const bool was_drain = d->drain;
  if (start && next.kind == ISA_DMA_HBM_TO_VMEM_T) {
    if (!d->tbuf && !(d->tbuf = calloc((size_t)cols * cols, sizeof *d->tbuf))) return -1;
    d->t_busy = true;
    d->t_line = next.line;
    d->t_left = (uint16_t)(next.bytes >> 1);
    d->t_elem = 0;
    d->t_rows = next.rows;
    d->t_sem = next.sem;
    d->t_value = next.value;
  }
  if (resp && head->tr) {
    memcpy(d->tbuf + (size_t)(head->line & (cols - 1)) * cols, answer, cols * sizeof *answer);
    if (answer_last) d->drain = true;
  }
  if (was_drain) {
    d->t_line = vline_of(d, d->t_line + 1);
    d->t_elem++;
    if (d->t_left == 1) {
      d->drain = false;
      d->t_busy = false;
    }
    d->t_left--;
  }
  const bool pend_push = start && next.kind != ISA_DMA_VMEM_TO_VMEM;
  if (resp && !answer_last) {
    head->left--;
    head->line = vline_of(d, head->line + 1);
  }
  if (pend_push)
    d->pend[(d->pend_head + d->pend_count) % DMA_FAST_PENDING] =
        (dma_fast_pend_t){.tr = next.kind == ISA_DMA_HBM_TO_VMEM_T, .read = next.kind == ISA_DMA_HBM_TO_VMEM,
                          .line = next.kind == ISA_DMA_HBM_TO_VMEM_T ? 0 : next.line, .left = next.rows,
                          .value = next.value, .bytes = next.bytes, .sem = next.sem};
  if (answer_last) d->pend_head = (d->pend_head + 1) % DMA_FAST_PENDING;
  d->pend_count = d->pend_count + pend_push - answer_last;
  return 0;
}
