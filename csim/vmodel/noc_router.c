/* noc_router: the registry of router models built into this binary (see noc_router.h). */
#include "vmodel/noc_router.h"

#include <stddef.h>

#define NOC_VARIANT(v) vmodel_t *noc_router_new_v##v(uint64_t seed);
#include "noc_variants.h"
#undef NOC_VARIANT

typedef struct {
  unsigned vcs;
  vmodel_t *(*create)(uint64_t seed);
} noc_variant_t;

static const noc_variant_t variants[] = {
#define NOC_VARIANT(v) {v, noc_router_new_v##v},
#include "noc_variants.h"
#undef NOC_VARIANT
};

vmodel_t *noc_router_new(unsigned vcs, uint64_t seed) {
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (variants[i].vcs == vcs) return variants[i].create(seed);
  return NULL;
}

int noc_router_available(unsigned vcs) {
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (variants[i].vcs == vcs) return 1;
  return 0;
}

const char *noc_router_vcs_list(void) {
  return ""
#define NOC_VARIANT(v) #v " "
#include "noc_variants.h"
#undef NOC_VARIANT
      ;
}
