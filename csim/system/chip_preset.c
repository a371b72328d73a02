/* chip_preset: see chip_preset.h. The figures and where they come from: docs/fidelity.md. */
#include "system/chip_preset.h"

#include <string.h>

static const chip_preset_t presets[] = {
    /* the tests' chip: one core, one 4x4 MXU, the default HBM */
    {"small", 4, 4, 1, 1, CHIP_DEFAULT_CLOCK_MHZ, CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, 4, 4, 900.0},
    /* TPU v2: 2 cores x 1 MXU 128x128 at 700 MHz, 600 GB/s HBM (857 bytes a cycle), 16x16 pod */
    {"v2", 128, 128, 1, 2, 700, 857, 16, 16, 600.0},
    /* TPU v3: 2 cores x 2 MXUs 128x128 at 940 MHz, 900 GB/s HBM (957 bytes a cycle), 32x32 pod */
    {"v3", 128, 128, 2, 2, 940, 957, 32, 32, 900.0},
};

unsigned chip_preset_count(void) { return sizeof presets / sizeof presets[0]; }
const chip_preset_t *chip_preset_at(unsigned i) { return i < chip_preset_count() ? &presets[i] : NULL; }

const chip_preset_t *chip_preset_find(const char *name) {
  for (unsigned i = 0; i < chip_preset_count(); i++)
    if (!strcmp(presets[i].name, name)) return &presets[i];
  return NULL;
}

const char *chip_preset_names(void) { return "small|v2|v3"; }

double chip_preset_peak_flops(const chip_preset_t *p) {
  return 2.0 * p->rows * p->cols * p->mxus * p->cores * p->clock_mhz * 1e6;
}
