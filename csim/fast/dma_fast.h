/*
 * dma_fast: the fast chip's DMA engine (chip_fast.h), mirroring rtl/chip_dma.sv: the
 * two-descriptor FIFO, the issue stage (one HBM request per row while the port is ready,
 * VMEM -> VMEM a line per cycle once earlier HBM transfers have landed), the 16-entry
 * completion FIFO that attributes every HBM answer to its descriptor, the read-after-write
 * wait of VMEM -> HBM transfers, and the transposing transfer with its C x 2C buffer. Every
 * request, VMEM write and semaphore signal comes in the RTL's cycle.
 */
#ifndef FAST_DMA_FAST_H
#define FAST_DMA_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "fw/isa.h"
#include "util/paged.h"

enum { DMA_FAST_PENDING = 16 };

typedef struct {
  uint8_t kind, sem;
  uint32_t hbm_addr, stride, line, rows, value;
  uint16_t bytes;
} dma_fast_desc_t;

typedef struct {
  bool tr, read;
  uint32_t line, left, value;
  uint16_t bytes;
  uint8_t sem;
} dma_fast_pend_t;

typedef struct {
  unsigned cols;
  uint32_t vmem_lines;
  dma_fast_desc_t fifo[2];
  unsigned fifo_count, fifo_head;
  bool cur_active;
  dma_fast_desc_t cur;
  uint32_t cur_row;
  uint32_t *tbuf;              /* cols lines (the transposing buffer), allocated at first use */
  bool t_busy, drain;
  uint32_t t_line, t_rows, t_value;
  uint16_t t_left, t_elem;
  uint8_t t_sem;
  dma_fast_pend_t pend[DMA_FAST_PENDING];
  unsigned pend_count, pend_head;
  uint32_t *wline;             /* the line this cycle writes */
} dma_fast_t;

/* What the DMA does in a cycle. */
typedef struct {
  bool vmem_we;
  uint32_t vmem_waddr;
  const uint32_t *vmem_wdata;
  bool sem_signal;
  unsigned sem_idx;
  uint32_t sem_value;
} dma_fast_out_t;

int dma_fast_init(dma_fast_t *d, unsigned cols, uint32_t vmem_lines);
void dma_fast_free(dma_fast_t *d);
void dma_fast_reset(dma_fast_t *d);

static inline bool dma_fast_ready(const dma_fast_t *d) { return d->fifo_count != 2; }
static inline bool dma_fast_drained(const dma_fast_t *d) {
  return d->fifo_count == 0 && !d->cur_active && d->pend_count == 0 && !d->t_busy;
}
/* The HBM request shown this cycle (registered state): valid, and its fields. The data is
 * the VMEM line of the row (vmem: the chip's VMEM before this cycle's writes). */
bool dma_fast_request(const dma_fast_t *d, const paged_t *vmem, bool *write, uint32_t *addr, uint32_t *bytes,
                      const uint32_t **data);
/* One cycle: the descriptor offered (desc_valid, its command), the HBM port's ready and
 * answer (NULL: none). Reads VMEM as it was before the cycle; returns its write (the caller
 * applies it after every unit has read) and its semaphore signal; updates its state to the
 * edge's. -1 without memory. */
int dma_fast_cycle(dma_fast_t *d, const paged_t *vmem, bool desc_valid, const uint32_t *cmd, bool hbm_ready,
                   const uint32_t *answer, dma_fast_out_t *out);

#endif
