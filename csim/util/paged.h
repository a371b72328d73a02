/*
 * paged: an array of fixed-size items stored a page at a time, each page allocated when an
 * item in it is first written; an item nobody wrote reads as zeros and costs no memory
 * (issue 13, "lean memory"; docs/scale.md). The fast chip keeps its VMEM lines, accumulator
 * rows and command memories in these, so a pod of chips with v3-sized memories costs what
 * its workload touches.
 *
 * Reads of an unwritten item return a shared page of zeros; writes allocate. A page that
 * cannot be allocated makes paged_write return NULL and sets `oom`: the owner stops (a model
 * without memory cannot go on) with a message, it never writes through NULL.
 */
#ifndef UTIL_PAGED_H
#define UTIL_PAGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint8_t **pages;        /* npages pointers, NULL until a page is written */
  uint8_t *zero;          /* one page of zeros, for reads of unwritten pages */
  size_t item_bytes, items, per_page, npages, pages_used;
  unsigned shift;         /* per_page = 1 << shift */
  bool oom;
} paged_t;

/* `items` items of `item_bytes` each, about `page_bytes` a page (a power-of-two number of
 * items, at least one). 0, or -1 without memory for the page table. */
int paged_init(paged_t *p, size_t items, size_t item_bytes, size_t page_bytes);
void paged_free(paged_t *p);

/* Item i (i < items) for reading: its bytes, or zeros when its page was never written. */
static inline const void *paged_read(const paged_t *p, size_t i) {
  const uint8_t *page = p->pages[i >> p->shift];
  return (page ? page : p->zero) + (i & (p->per_page - 1)) * p->item_bytes;
}

void *paged_alloc_page(paged_t *p, size_t page);

/* Item i for writing (its page allocated if needed), or NULL without memory. */
static inline void *paged_write(paged_t *p, size_t i) {
  uint8_t *page = p->pages[i >> p->shift];
  if (!page && !(page = paged_alloc_page(p, i >> p->shift))) return NULL;
  return page + (i & (p->per_page - 1)) * p->item_bytes;
}

/* Bytes of pages allocated. */
static inline size_t paged_bytes(const paged_t *p) { return p->pages_used * p->per_page * p->item_bytes; }

#endif
