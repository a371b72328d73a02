/* chip_preset: see chip_preset.h. The figures and where they come from: docs/fidelity.md. */
#include "chip/chip_preset.h"

#include "chip/chip.h"

static const chip_preset_t presets[] = {
    /* the tests' chip: one core, one 4x4 MXU, the default HBM */
    {"small", 4, 4, 1, 1, CHIP_DEFAULT_CLOCK_MHZ, CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, 1, 0},
    /* TPU v2: 2 cores x 1 MXU 128x128 at 700 MHz, 600 GB/s HBM (857 bytes a cycle); ICI links
     * of 128-byte flits at v3's 96 bytes a cycle (67.2 GB/s each way: v2's is not in the sources) */
    {"v2", 128, 128, 1, 2, 700, 857, 16, 96},
    /* TPU v3: 2 cores x 2 MXUs 128x128 at 940 MHz, 900 GB/s HBM (957 bytes a cycle); ICI links
     * of 128-byte flits at 96 bytes a cycle = 90.2 GB/s each way (published: roughly 80-100) */
    {"v3", 128, 128, 2, 2, 940, 957, 16, 96},
};

const char *chip_preset_names(void) { return "small|v2|v3"; }

const chip_preset_t *chip_preset_at(unsigned i) {
  return i < sizeof presets / sizeof presets[0] ? &presets[i] : NULL;
}
