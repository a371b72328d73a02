/*
 * chip_preset: the named chips `--chip v2|v3|small` selects (docs/fidelity.md, "Presets"):
 * cores, MXUs and their size, the clock and the HBM bandwidth of TPU v2 and v3 as published,
 * and the small chip the tests use. A preset fills a chip configuration; the pod shape it names
 * is the published pod's (the commands take --pod themselves).
 */
#ifndef SYSTEM_CHIP_PRESET_H
#define SYSTEM_CHIP_PRESET_H

#include "system/chip.h"

typedef struct {
  const char *name;
  unsigned rows, cols;          /* each MXU */
  unsigned mxus, cores;         /* MXUs per core, cores per chip */
  unsigned clock_mhz;           /* cycles to time in reports */
  unsigned hbm_bytes_per_cycle; /* the published HBM bandwidth at the clock */
  unsigned pod_x, pod_y;        /* the published pod */
  double hbm_gbps;              /* published figures, for docs/fidelity.md and reports */
} chip_preset_t;

/* The preset called `name`, or NULL. */
const chip_preset_t *chip_preset_find(const char *name);
/* "small|v2|v3": the CLI's choice list, in table order. */
const char *chip_preset_names(void);
/* Preset i in table order (i < chip_preset_count()). */
const chip_preset_t *chip_preset_at(unsigned i);
unsigned chip_preset_count(void);
/* Peak MXU FLOPS of one chip of the preset: 2 R C x MXUs x cores x clock. */
double chip_preset_peak_flops(const chip_preset_t *p);

#endif
