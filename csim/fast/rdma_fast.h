/*
 * rdma_fast: one remote-DMA engine of the fast chip (chip_fast.h), mirroring rtl/chip_rdma.sv:
 * up to four descriptors waiting behind the one being sent; packets of up to P lines (head
 * flit, header flit, the lines' data 64 bits a flit, or fw words a flit with wide flits)
 * injected one flit per cycle on VC 0
 * under the local port's credits; the local semaphore signalled with the last flit; and the
 * receiving side, which reassembles packets per VC as the router ejects them, writes each
 * 64-bit word to VMEM as its flit arrives, signals the remote semaphore as a line completes,
 * and returns each flit's credit the next cycle.
 */
#ifndef FAST_RDMA_FAST_H
#define FAST_RDMA_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fast/noc_fast.h"
#include "fw/isa.h"
#include "util/paged.h"

enum { RDMA_FAST_FIFO = 4, RDMA_FAST_VCS = 2 };

typedef struct {
  uint8_t x, y, rsem, lsem;
  uint8_t core, dcore;         /* the issuing core; the destination core (the RDMA's core field) */
  uint32_t dst, src, rows, rvalue, lvalue;
} rdma_fast_desc_t;

typedef struct {
  uint32_t line, lidx, word, value;
  uint8_t sem, core;           /* core: whose VMEM and semaphore the packet is for */
  bool sig, hdr, busy;
} rdma_fast_rx_t;

typedef struct {
  unsigned line_flits, pkt_lines; /* flits per line; lines per packet */
  unsigned fw;                 /* 64-bit words a flit (1: the RTL's flits) */
  uint32_t vmem_lines;
  unsigned flit_mask;          /* the flit counter's width (FIdxW bits) */
  rdma_fast_desc_t fifo[RDMA_FAST_FIFO], cur;
  unsigned fifo_head, fifo_count;
  bool cur_active;
  uint32_t row, flit;
  unsigned credits, buf_depth;
  rdma_fast_rx_t rx[RDMA_FAST_VCS];
  unsigned credit_q;           /* credits of ejected flits, returned this cycle (bit per VC) */
  /* The line being sent, as VMEM holds it: read once, not a word a cycle from memory a pod of
   * chips has long evicted; dropped when the chip writes that line (rdma_fast_line_written). */
  uint32_t *send_copy, send_line;
  unsigned send_core;
  bool send_valid;
} rdma_fast_t;

typedef struct {
  noc_flit_t inj;              /* the flit offered to the router's local port this cycle */
  noc_wide_t inj_hi;           /* a wide flit's other words */
  bool vmem_we;
  uint32_t vmem_waddr, vmem_wword; /* the line and its flit-sized piece (word wword * fw on) */
  uint64_t vmem_wdata;              /* its first word; a wide flit's others in vmem_whi */
  uint64_t vmem_whi[NOC_FLIT_MAX_WORDS - 1];
  unsigned vmem_wcore;          /* the core written and signalled (rsig) */
  bool lsig, rsig;
  unsigned lsem, rsem, lcore;  /* lcore: the core signalled by lsig (the sending descriptor's) */
  uint32_t lvalue, rvalue;
} rdma_fast_out_t;

/* flit_words: 64-bit words a flit carries (0 means 1), dividing the line's cols / 2. */
int rdma_fast_init(rdma_fast_t *r, unsigned cols, uint32_t vmem_lines, unsigned buf_depth, unsigned flit_words);
void rdma_fast_free(rdma_fast_t *r);
/* The chip wrote VMEM line `line` at this edge. */
static inline void rdma_fast_line_written(rdma_fast_t *r, unsigned core, uint32_t line) {
  if (r->send_line == line && r->send_core == core) r->send_valid = false;
}
void rdma_fast_reset(rdma_fast_t *r);
static inline bool rdma_fast_ready(const rdma_fast_t *r) { return r->fifo_count != RDMA_FAST_FIFO; }
static inline bool rdma_fast_sending(const rdma_fast_t *r) { return r->fifo_count != 0 || r->cur_active; }
static inline bool rdma_fast_busy(const rdma_fast_t *r) {
  return rdma_fast_sending(r) || r->rx[0].busy || r->rx[1].busy;
}
/* One cycle: the descriptor offered, the router's ejected flit for this engine and the
 * injection credit it returns (both registered), VMEM before the cycle's writes. */
/* One cycle: vmem[c] is core c's VMEM; a descriptor offered (desc_valid, cmd) comes from core
 * desc_core; ej_hi: the ejected wide flit's other words (NULL with 64-bit flits). */
void rdma_fast_cycle(rdma_fast_t *r, const paged_t *const *vmem, bool desc_valid, const uint32_t *cmd,
                     unsigned desc_core, const noc_flit_t *ej, const noc_wide_t *ej_hi, bool inj_credit,
                     rdma_fast_out_t *out);

#endif
