/* paged: see paged.h. */
#include "util/paged.h"

#include <stdlib.h>

int paged_init(paged_t *p, size_t items, size_t item_bytes, size_t page_bytes) {
  *p = (paged_t){.item_bytes = item_bytes, .items = items};
  size_t per = 1;
  unsigned shift = 0;
  while (per * 2 * item_bytes <= page_bytes && per < items) per *= 2, shift++;
  p->per_page = per;
  p->shift = shift;
  p->npages = (items + per - 1) / per;
  p->pages = calloc(p->npages ? p->npages : 1, sizeof *p->pages);
  p->zero = calloc(per, item_bytes);
  if (!p->pages || !p->zero) {
    paged_free(p);
    return -1;
  }
  return 0;
}

void paged_free(paged_t *p) {
  if (p->pages)
    for (size_t i = 0; i < p->npages; i++) free(p->pages[i]);
  free(p->pages);
  free(p->zero);
  p->pages = NULL;
  p->zero = NULL;
  p->pages_used = 0;
}

void *paged_alloc_page(paged_t *p, size_t page) {
  uint8_t *mem = calloc(p->per_page, p->item_bytes);
  if (!mem) {
    p->oom = true;
    return NULL;
  }
  p->pages[page] = mem;
  p->pages_used++;
  return mem;
}
