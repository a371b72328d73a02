/* hbm: see hbm.h. */
#include "system/hbm.h"

#include <stdlib.h>
#include <string.h>

int hbm_init(hbm_t *h, uint64_t bytes, unsigned bytes_per_cycle, unsigned latency, unsigned line_bytes) {
  memset(h, 0, sizeof *h);
  h->mem = calloc(bytes, 1);
  h->bytes = bytes;
  h->bytes_per_cycle = bytes_per_cycle;
  h->latency = latency;
  h->line_bytes = line_bytes;
  h->ring_len = latency + 2;
  h->ring = calloc(h->ring_len, sizeof *h->ring);
  if (!h->mem || !h->ring) {
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
  free(h->mem);
  h->ring = NULL;
  h->mem = NULL;
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
    memcpy(h->mem + addr, data, nbytes);
  } else {
    memset(a->data, 0, h->line_bytes);
    memcpy(a->data, h->mem + addr, nbytes);
  }
  h->budget -= nbytes;
  h->bytes_moved += nbytes;
}
