/* mxu_top: the registry of MXU models built into this binary (see mxu_top.h). */
#include "vmodel/mxu_top.h"

#define MXU_VARIANT(r, c, d) vmodel_t *mxu_top_new_##r##x##c(uint64_t seed);
#include "mxu_variants.h"
#undef MXU_VARIANT

typedef struct {
  unsigned rows, cols, acc_depth;
  vmodel_t *(*create)(uint64_t seed);
} mxu_variant_t;

static const mxu_variant_t variants[] = {
#define MXU_VARIANT(r, c, d) {r, c, d, mxu_top_new_##r##x##c},
#include "mxu_variants.h"
#undef MXU_VARIANT
};

static const mxu_variant_t *find(unsigned rows, unsigned cols) {
  for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
    if (variants[i].rows == rows && variants[i].cols == cols) return &variants[i];
  return NULL;
}

vmodel_t *mxu_top_new(unsigned rows, unsigned cols, uint64_t seed) {
  const mxu_variant_t *v = find(rows, cols);
  return v ? v->create(seed) : NULL;
}

unsigned mxu_top_acc_depth(unsigned rows, unsigned cols) {
  const mxu_variant_t *v = find(rows, cols);
  return v ? v->acc_depth : 0;
}

const char *mxu_top_sizes(void) {
  return ""
#define MXU_VARIANT(r, c, d) #r "x" #c " "
#include "mxu_variants.h"
#undef MXU_VARIANT
      ;
}
