/* hbm: see hbm.h. */
#include "chip/hbm.h"

#include <stdlib.h>
#include <string.h>

static int init_timing(hbm_t *h, uint64_t bytes, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes);

int hbm_init(hbm_t *h, uint64_t bytes, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes) {
  memset(h, 0, sizeof *h);
  h->mem = h;
  h->npages = (bytes + HBM_PAGE_BYTES - 1) / HBM_PAGE_BYTES;
  h->pages = calloc(h->npages ? h->npages : 1, sizeof *h->pages);
  if (!h->pages) return -1;
  return init_timing(h, bytes, bytes_per_cycle, latency, line_bytes);
}

int hbm_init_port(hbm_t *h, hbm_t *mem, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes) {
  memset(h, 0, sizeof *h);
  h->mem = mem;
  return init_timing(h, mem->bytes, bytes_per_cycle, latency, line_bytes);
}

static int init_timing(hbm_t *h, uint64_t bytes, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes) {
  h->bytes = bytes;
  h->bytes_per_cycle = bytes_per_cycle;
  h->latency = latency;
  h->line_bytes = line_bytes;
  h->ring_len = latency + 2;
  h->ring = calloc(h->ring_len, sizeof *h->ring);
  if (!h->ring) {
    hbm_free(h);
    return -1;
  }
  for (unsigned i = 0; i < h->ring_len; i++) {
    h->ring[i].data = calloc(line_bytes, 1);
    if (!h->ring[i].data) {
      hbm_free(h);
      return -1;
    }
  }
  return 0;
}

void hbm_free(hbm_t *h) {
  if (h->ring)
    for (unsigned i = 0; i < h->ring_len; i++) free(h->ring[i].data);
  free(h->ring);
  if (h->pages)  /* (a second port owns none) */
    for (uint64_t i = 0; i < h->npages; i++) free(h->pages[i]);
  free(h->pages);
  h->ring = NULL;
  h->pages = NULL;
}

/* Runs body for each page piece of [addr, addr + n): page (index), off (in it), len. */
#define FOR_PIECES(addr, n, body)                                                        \
  for (uint64_t at_ = (addr), end_ = (addr) + (n); at_ < end_;) {                       \
    const uint64_t page = at_ / HBM_PAGE_BYTES, off = at_ % HBM_PAGE_BYTES;               \
    const uint64_t len = end_ - at_ < HBM_PAGE_BYTES - off ? end_ - at_ : HBM_PAGE_BYTES - off; \
    body;                                                                                 \
    at_ += len;                                                                           \
  }

int hbm_write(hbm_t *h, uint64_t addr, const void *src, size_t n) {
  if (h->oom) return -1;
  const uint8_t *s = src;
  FOR_PIECES(addr, n, {
    if (!h->pages[page]) {
      if (!(h->pages[page] = calloc(HBM_PAGE_BYTES, 1))) {
        h->oom = true;
        return -1;
      }
      h->pages_used++;
    }
    memcpy(h->pages[page] + off, s, len);
    s += len;
  })
  return 0;
}

uint8_t *hbm_page(hbm_t *h, uint64_t addr) {
  const uint64_t page = addr / HBM_PAGE_BYTES;
  if (h->oom) return NULL;
  if (!h->pages[page]) {
    if (!(h->pages[page] = calloc(HBM_PAGE_BYTES, 1))) return NULL;
    h->pages_used++;
  }
  return h->pages[page];
}

int hbm_read(const hbm_t *h, uint64_t addr, void *dst, size_t n) {
  if (h->oom) return -1;
  uint8_t *d = dst;
  FOR_PIECES(addr, n, {
    if (h->pages[page])
      memcpy(d, h->pages[page] + off, len);
    else
      memset(d, 0, len);
    d += len;
  })
  return 0;
}

int hbm_zero(hbm_t *h, uint64_t addr, size_t n) {
  if (h->oom) return -1;
  FOR_PIECES(addr, n, {
    if (h->pages[page] && len == HBM_PAGE_BYTES) {
      free(h->pages[page]);
      h->pages[page] = NULL;
      h->pages_used--;
    } else if (h->pages[page]) {
      memset(h->pages[page] + off, 0, len);
    }
  })
  return 0;
}

void hbm_flush(hbm_t *h) {
  h->head = 0;
  h->count = 0;
  h->budget = 0;
}

bool hbm_begin_cycle(hbm_t *h) {
  h->budget += h->bytes_per_cycle;
  if (h->budget > (int64_t)h->bytes_per_cycle) h->budget = h->bytes_per_cycle;
  return h->budget > 0 && h->count < h->ring_len;
}

void hbm_skip(hbm_t *h, uint64_t n) {
  if (n == 0) return;
  /* the budget after n cycles of growth, capped at one cycle's worth */
  const int64_t room = (int64_t)h->bytes_per_cycle - h->budget;
  h->budget = (uint64_t)room <= n * (uint64_t)h->bytes_per_cycle ? (int64_t)h->bytes_per_cycle
                                                                : h->budget + (int64_t)(n * h->bytes_per_cycle);
}

const hbm_answer_t *hbm_answer_due(const hbm_t *h, uint64_t cycle) {
  if (!h->count || h->ring[h->head].due != cycle) return NULL;
  return &h->ring[h->head];
}

void hbm_answer_pop(hbm_t *h) {
  h->head = (h->head + 1) % h->ring_len;
  h->count--;
}

void hbm_accept(hbm_t *h, uint64_t cycle, bool write, uint64_t addr, unsigned nbytes, const uint8_t *data) {
  hbm_answer_t *a = &h->ring[(h->head + h->count) % h->ring_len];
  h->count++;
  a->due = cycle + h->latency;
  a->read = !write;
  /* The chip's command checks keep every access inside HBM; clip anyway, never overrun. */
  if (addr > h->bytes) addr = h->bytes;
  if (nbytes > h->bytes - addr) nbytes = (unsigned)(h->bytes - addr);
  if (write) {
    (void)hbm_write(h->mem, addr, data, nbytes); /* a lost write marks the memory's oom for the host */
  } else {
    memset(a->data, 0, h->line_bytes);
    (void)hbm_read(h->mem, addr, a->data, nbytes);
  }
  h->budget -= nbytes;
  h->bytes_moved += nbytes;
}
