/* rdma_fast: see rdma_fast.h. */
#include "fast/rdma_fast.h"

#include <stdlib.h>
#include <string.h>

int rdma_fast_init(rdma_fast_t *r, unsigned cols, uint32_t vmem_lines, unsigned buf_depth, unsigned flit_words) {
  memset(r, 0, sizeof *r);
  if (!(r->send_copy = calloc(cols, sizeof *r->send_copy))) return -1;
  r->fw = flit_words ? flit_words : 1;
  r->line_flits = cols / 2 / r->fw;
  r->pkt_lines = isa_rdma_packet_lines_wide(cols, r->fw);
  r->vmem_lines = vmem_lines;
  r->buf_depth = buf_depth;
  const unsigned max_len = r->pkt_lines * r->line_flits + ISA_RDMA_HEADER_FLITS;
  unsigned bits = 0;
  while ((1u << bits) < max_len + 1) bits++;
  r->flit_mask = (1u << bits) - 1;
  rdma_fast_reset(r);
  return 0;
}

void rdma_fast_free(rdma_fast_t *r) { free(r->send_copy); }

void rdma_fast_reset(rdma_fast_t *r) {
  r->fifo_head = r->fifo_count = 0;
  r->cur_active = false;
  r->row = r->flit = 0;
  r->credits = r->buf_depth;
  r->credit_q = 0;
  for (unsigned v = 0; v < RDMA_FAST_VCS; v++) {
    r->rx[v].hdr = r->rx[v].busy = false;
    r->rx[v].word = r->rx[v].lidx = 0;
  }
}

static rdma_fast_desc_t desc_of(const rdma_fast_t *r, const uint32_t *cmd, unsigned core) {
  const uint32_t mask = r->vmem_lines - 1;
  return (rdma_fast_desc_t){.x = (uint8_t)ISA_GET(cmd, RDMA, x), .y = (uint8_t)ISA_GET(cmd, RDMA, y),
                            .rsem = (uint8_t)ISA_GET(cmd, RDMA, remote_sem), .lsem = (uint8_t)ISA_GET(cmd, RDMA, local_sem),
                            .dst = ISA_GET(cmd, RDMA, dst) & mask, .src = ISA_GET(cmd, RDMA, src) & mask,
                            .rows = ISA_GET(cmd, RDMA, rows), .rvalue = ISA_GET(cmd, RDMA, remote_value),
                            .lvalue = ISA_GET(cmd, RDMA, local_value), .core = (uint8_t)core,
                            .dcore = (uint8_t)ISA_GET(cmd, RDMA, core)};
}

void rdma_fast_cycle(rdma_fast_t *r, const paged_t *const *vmem, bool desc_valid, const uint32_t *cmd,
                     unsigned desc_core, const noc_flit_t *ej, const noc_wide_t *ej_hi, bool inj_credit,
                     rdma_fast_out_t *out) {
  if (!r->cur_active && !r->fifo_count && !desc_valid && !ej->valid) {
    /* nothing to send or take: only a returning credit counts (most engines, most cycles) */
    out->inj.valid = false;
    out->vmem_we = out->lsig = out->rsig = false;
    r->credits = (r->credits + inj_credit) & 15;
    r->credit_q = 0;
    return;
  }
  const uint32_t mask = r->vmem_lines - 1;
  /* ---- sending */
  const rdma_fast_desc_t *c = &r->cur;
  const uint32_t left = c->rows - r->row;
  const uint32_t pkt_lines = left < r->pkt_lines ? left : r->pkt_lines;
  const uint32_t pkt_len = (pkt_lines * r->line_flits + ISA_RDMA_HEADER_FLITS) & r->flit_mask;
  const bool send = r->cur_active && r->credits != 0;
  const bool last_flit = r->flit == ((pkt_len - 1) & r->flit_mask);
  const bool last_pkt = r->row + pkt_lines == c->rows;
  out->inj = (noc_flit_t){.valid = send, .head = r->flit == 0, .tail = last_flit, .vc = 0};
  if (r->flit == 0) {
    out->inj.data = (uint64_t)(pkt_len & 0xFF) << 16 | (uint64_t)c->y << 8 | c->x;
  } else if (r->flit == 1) {
    const bool sig = c->rsem != ISA_SEM_NONE;
    out->inj.data = (uint64_t)(sig ? c->rvalue : 0) << 32 | (uint64_t)(c->dcore & 3) << 30 | (uint64_t)sig << 29 |
                    (uint64_t)(c->rsem & 31) << 24 |
                    ((c->dst + r->row) & mask & 0xFFFFFFu);
  } else if (send) {  /* a data flit: the word of the line going out (only a sent flit's data is seen) */
    const uint32_t idx = r->flit - ISA_RDMA_HEADER_FLITS, l = (c->src + r->row + idx / r->line_flits) & mask;
    if (!r->send_valid || r->send_line != l || r->send_core != c->core) {
      memcpy(r->send_copy, paged_read(vmem[c->core], l), 8ull * r->line_flits * r->fw);
      r->send_line = l, r->send_core = c->core, r->send_valid = true;
    }
    const uint32_t *w = r->send_copy + 2 * r->fw * (idx % r->line_flits);
    out->inj.data = w[0] | (uint64_t)w[1] << 32;
    for (unsigned j = 1; j < r->fw; j++) out->inj_hi.w[j - 1] = w[2 * j] | (uint64_t)w[2 * j + 1] << 32;
  } else {
    out->inj.data = 0;
  }
  out->lsig = send && last_flit && last_pkt && c->lsem != ISA_SEM_NONE;
  out->lsem = c->lsem & 31;
  out->lvalue = c->lvalue;
  out->lcore = c->core;

  /* ---- receiving: the flit the router ejected last edge */
  const unsigned vc = ej->vc & (RDMA_FAST_VCS - 1);
  rdma_fast_rx_t *rx = &r->rx[vc];
  out->vmem_we = ej->valid && !ej->head && !rx->hdr;
  out->vmem_waddr = (rx->line + rx->lidx) & mask;
  out->vmem_wword = rx->word;
  out->vmem_wdata = ej->data;
  if (r->fw > 1 && out->vmem_we) memcpy(out->vmem_whi, ej_hi->w, (r->fw - 1) * sizeof *ej_hi->w);
  const bool line_done = out->vmem_we && rx->word == r->line_flits - 1;
  out->rsig = line_done && rx->sig;
  out->rsem = rx->sem;
  out->rvalue = rx->value;
  out->vmem_wcore = rx->core;

  /* ---- the edge */
  const bool push = desc_valid && rdma_fast_ready(r);
  const bool start = r->fifo_count != 0 && !r->cur_active;
  if (push) r->fifo[(r->fifo_head + r->fifo_count) % RDMA_FAST_FIFO] = desc_of(r, cmd, desc_core);
  r->fifo_count = r->fifo_count + push - start;
  if (start) {
    r->cur = r->fifo[r->fifo_head];
    r->fifo_head = (r->fifo_head + 1) % RDMA_FAST_FIFO;
    r->cur_active = true;
    r->row = 0;
    r->flit = 0;
  } else if (send) {
    if (!last_flit) {
      r->flit = (r->flit + 1) & r->flit_mask;
    } else {
      r->flit = 0;
      if (last_pkt) r->cur_active = false;
      else r->row += pkt_lines;
    }
  }
  r->credits = (r->credits - send + inj_credit) & 15;
  r->credit_q = 0;
  if (ej->valid) {
    r->credit_q = 1u << vc;
    if (ej->head) {
      rx->hdr = rx->busy = true;
      rx->word = rx->lidx = 0;
    } else if (rx->hdr) {
      rx->hdr = false;
      rx->line = (uint32_t)(ej->data & 0xFFFFFFu) & mask;
      rx->sem = (uint8_t)((ej->data >> 24) & 31);
      rx->sig = (ej->data >> 29) & 1;
      rx->value = (uint32_t)(ej->data >> 32);
      rx->core = (uint8_t)((ej->data >> 30) & 3);
    } else {
      if (rx->word == r->line_flits - 1) {
        rx->word = 0;
        rx->lidx = (rx->lidx + 1) & mask;
      } else {
        rx->word++;
      }
      if (ej->tail) rx->busy = false;
    }
  }
}
