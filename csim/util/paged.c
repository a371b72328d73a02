/* paged: see paged.h. */
#include "util/paged.h"

#include <stdlib.h>
#include <sys/mman.h>

enum { HUGE_BYTES = 2u << 20 };

/* Reserves `bytes` of zero-filled address space aligned to HUGE_BYTES, backed on first write
 * (by huge pages where the host gives them), or NULL. */
static uint8_t *reserve(size_t bytes) {
  const size_t len = bytes + HUGE_BYTES;
  uint8_t *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uint8_t *start = (uint8_t *)(((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
  if (start > raw) munmap(raw, (size_t)(start - raw));
  const size_t tail = (size_t)(raw + len - (start + bytes));
  if (tail) munmap(start + bytes, tail);
#ifdef MADV_HUGEPAGE
  (void)madvise(start, bytes, MADV_HUGEPAGE);  /* a hint: without it the pages are 4 KiB */
#endif
  return start;
}

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
  const size_t total = p->npages * per * item_bytes;
  if (total >= HUGE_BYTES && (p->region = reserve(total))) p->region_bytes = total;
  return 0;
}

void paged_free(paged_t *p) {
  if (p->region) munmap(p->region, p->region_bytes);
  else if (p->pages)
    for (size_t i = 0; i < p->npages; i++) free(p->pages[i]);
  p->region = NULL;
  free(p->pages);
  free(p->zero);
  p->pages = NULL;
  p->zero = NULL;
  p->pages_used = 0;
}

void *paged_alloc_page(paged_t *p, size_t page) {
  const size_t bytes = p->per_page * p->item_bytes;
  uint8_t *mem = p->region ? p->region + page * bytes : calloc(p->per_page, p->item_bytes);
  if (!mem) {
    p->oom = true;
    return NULL;
  }
  p->pages[page] = mem;
  p->pages_used++;
  return mem;
}
