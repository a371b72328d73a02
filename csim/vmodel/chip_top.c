/* chip_top: the registry of chip models built into this binary (see chip_top.h). */
#include "vmodel/chip_top.h"

#include <stddef.h>

#define CHIP_VARIANT(name, r, c, a, v, q, m, k) vmodel_t *chip_top_new_##name(uint64_t seed, int zero_init);
#include "chip_variants.h"
#undef CHIP_VARIANT

typedef struct {
  chip_geometry_t g;
  vmodel_t *(*create)(uint64_t seed, int zero_init);
} chip_variant_t;

static const chip_variant_t variants[] = {
#define CHIP_VARIANT(name, r, c, a, v, q, m, k) {{r, c, a, v, q, m, k, 1}, chip_top_new_##name}, /* 64-bit flits */
#include "chip_variants.h"
#undef CHIP_VARIANT
};

static const chip_variant_t *find(unsigned rows, unsigned cols, unsigned mxus, unsigned cores) {
  if (mxus == 0) mxus = 1;
  if (cores == 0) cores = 1;
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (variants[i].g.rows == rows && variants[i].g.cols == cols && variants[i].g.mxus == mxus &&
        variants[i].g.cores == cores)
      return &variants[i];
  return NULL;
}

vmodel_t *chip_top_new(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, uint64_t seed, int zero_init) {
  const chip_variant_t *v = find(rows, cols, mxus, cores);
  return v ? v->create(seed, zero_init) : NULL;
}

int chip_top_geometry(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, chip_geometry_t *g) {
  const chip_variant_t *v = find(rows, cols, mxus, cores);
  if (!v) return -1;
  *g = v->g;
  return 0;
}

const char *chip_top_sizes(void) {
  return ""
#define CHIP_VARIANT(name, r, c, a, v, q, m, k) #name " "
#include "chip_variants.h"
#undef CHIP_VARIANT
      ;
}
