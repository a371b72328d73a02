/* pod_link: see pod_link.h. */
#include "pod/pod_link.h"

#include <stdio.h>
#include <stdlib.h>

int pod_link_check(unsigned flit_words, unsigned link_bytes, char *err, size_t errlen) {
  const unsigned flit = 8u * (flit_words ? flit_words : 1);
  if (link_bytes <= flit) return 0;
  snprintf(err, errlen, "a link of %u bytes a cycle: a link carries at most a flit a cycle (%u bytes with %u-word flits)",
           link_bytes, flit, flit / 8);
  return -1;
}

pod_link_t *pod_link_new(unsigned n, unsigned latency, unsigned depth, unsigned flit_words, unsigned link_bytes) {
  pod_link_t *l = calloc(1, sizeof *l);
  if (!l) return NULL;
  const size_t links = (size_t)n * POD_LINK_DIRS;
  l->n = n, l->depth = depth, l->latency = latency, l->link_bytes = link_bytes;
  l->flit_bytes = 8u * (flit_words > 1 ? flit_words : 1);
  if (!(l->slots = calloc((size_t)depth * links, sizeof *l->slots))) goto oom;
  if (flit_words > 1 && !(l->slot_hi = calloc((size_t)depth * links, sizeof *l->slot_hi))) goto oom;
  if (link_bytes && link_bytes < l->flit_bytes) {
    if (!(l->ser = calloc(links, sizeof *l->ser))) goto oom;
    for (size_t k = 0; l->slot_hi && k < links; k++)
      if (!(l->ser[k].hi = calloc(POD_LINK_SER_CAP, sizeof *l->ser[k].hi))) goto oom;
    for (size_t k = 0; k < links; k++) l->ser[k].tokens = l->flit_bytes;
  }
  return l;
oom:
  pod_link_free(l);
  return NULL;
}

void pod_link_free(pod_link_t *l) {
  if (!l) return;
  free(l->slots);
  free(l->slot_hi);
  for (size_t k = 0; l->ser && k < (size_t)l->n * POD_LINK_DIRS; k++) free(l->ser[k].hi);
  free(l->ser);
  free(l);
}

void pod_link_clear(pod_link_t *l, unsigned i, unsigned d, uint64_t t) {
  if (i >= l->n) {
    for (unsigned j = 0; j < l->n; j++)
      for (unsigned e = 0; e < POD_LINK_DIRS; e++) pod_link_clear(l, j, e, t);
    return;
  }
  for (unsigned pos = 0; pos < l->depth; pos++) *pod_link_slot(l, pos, i, d) = (pod_link_slot_t){0};
  if (l->ser) { /* the serialiser emptied, its bucket full */
    pod_link_ser_t *z = &l->ser[(size_t)i * POD_LINK_DIRS + d];
    z->head = z->count = 0, z->tokens = l->flit_bytes, z->last = t;
  }
}
