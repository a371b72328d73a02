/* link: see link.h. */
#include "system/link.h"

#include <stdlib.h>

int link_init(link_t *l, unsigned latency, size_t slot_bytes) {
  l->depth = latency + 1;
  l->pos = 0;
  l->slot_bytes = slot_bytes;
  l->slots = calloc(l->depth, slot_bytes);
  return l->slots ? 0 : -1;
}

void link_free(link_t *l) {
  free(l->slots);
  l->slots = NULL;
}
