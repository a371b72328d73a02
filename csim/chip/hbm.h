/*
 * hbm: the C model of a chip's HBM behind the chip's HBM port: capacity, latency and
 * bandwidth as parameters.
 *
 * Timing (docs/isa.md, "HBM timing"): one request per cycle at most; a budget of
 * `bytes_per_cycle` is added every cycle (at most one cycle's worth is kept while idle), a
 * request is accepted while the budget is positive and spends its bytes (the budget may go
 * negative); every request is answered -- read data or a write acknowledgement -- exactly
 * `latency` cycles after it was accepted, in order. Data is read and written at acceptance.
 *
 * Storage is allocated in pages of HBM_PAGE_BYTES on the first write into them (issue 13,
 * "lean memory"; docs/scale.md): a page nobody wrote reads as zeros and costs no memory, so a
 * pod of chips with large HBMs costs what its workload touches. A page that cannot be
 * allocated during a run drops the write and marks the HBM (`oom`); the host's next read
 * or write of it fails, so the run's results are never read as if it had not happened.
 */
#ifndef HBM_H
#define HBM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t due;        /* cycle the answer is delivered */
  bool read;
  uint8_t *data;       /* line_bytes, for reads */
} hbm_answer_t;

enum { HBM_PAGE_BYTES = 1 << 18 };  /* 256 KiB: a 4 GiB HBM keeps 16,384 page pointers (128 KiB) */

typedef struct hbm hbm_t;
struct hbm {
  hbm_t *mem;          /* whose pages this port reads and writes: itself, or the first port's */
  uint8_t **pages;     /* bytes / HBM_PAGE_BYTES (rounded up) pointers, NULL until written */
  uint64_t npages, pages_used;
  bool oom;            /* a page could not be allocated: a write was lost */
  uint64_t bytes;
  unsigned bytes_per_cycle, latency, line_bytes;
  int64_t budget;
  hbm_answer_t *ring;  /* answers in flight, latency + 1 slots */
  unsigned ring_len, head, count;
  uint64_t bytes_moved;
};

int hbm_init(hbm_t *h, uint64_t bytes, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes);
/* Another port onto mem's memory (a chip's second core: docs/isa.md, "Cores"): its own
 * timing -- budget, latency, answers in flight -- over the same pages. Freed before mem. */
int hbm_init_port(hbm_t *h, hbm_t *mem, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes);
void hbm_free(hbm_t *h);
/* Forgets the answers in flight and the bandwidth budget (the chip was reset); the memory
 * keeps its contents. */
void hbm_flush(hbm_t *h);

/* Start of a cycle: adds the bandwidth budget; true if a request can be accepted now. */
bool hbm_begin_cycle(hbm_t *h);
/* n cycles in which no request is offered (event-driven time): the budget grows as
 * hbm_begin_cycle would grow it. */
void hbm_skip(hbm_t *h, uint64_t n);
/* The cycle the oldest answer in flight is due, or UINT64_MAX when none is. */
static inline uint64_t hbm_next_due(const hbm_t *h) { return h->count ? h->ring[h->head].due : UINT64_MAX; }

/* The answer due at `cycle`, or NULL. */
const hbm_answer_t *hbm_answer_due(const hbm_t *h, uint64_t cycle);
/* Retires the answer returned by hbm_answer_due. */
void hbm_answer_pop(hbm_t *h);
/* Accepts a request at `cycle` (the caller checked hbm_begin_cycle). For writes, `data`
 * holds the bytes; for reads, the answer will carry them. */
void hbm_accept(hbm_t *h, uint64_t cycle, bool write, uint64_t addr, unsigned nbytes, const uint8_t *data);

/* The host's access, outside the timing: n bytes at addr (inside HBM, checked by the
 * caller). 0, or -1 when a page cannot be allocated or a write was lost before. */
int hbm_write(hbm_t *h, uint64_t addr, const void *src, size_t n);
int hbm_read(const hbm_t *h, uint64_t addr, void *dst, size_t n);
/* Zeros in [addr, addr + n): whole pages are freed (they read as zeros again), partial ones cleared. */
int hbm_zero(hbm_t *h, uint64_t addr, size_t n);
/* The page holding addr (inside HBM, checked by the caller), allocated if nobody wrote it yet,
 * for direct access (the SystemC module's DMI, docs/systemc.md): valid until the page is freed
 * (hbm_zero of all of it, hbm_free). NULL without memory. */
uint8_t *hbm_page(hbm_t *h, uint64_t addr);

#endif
