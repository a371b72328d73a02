/*
 * chip_preset: the named chips `--chip small|v2|v3` selects (docs/fidelity.md, "Presets"):
 * cores, MXUs and their size, the clock and the HBM bandwidth of TPU v2 and v3 as published,
 * and the small chip the tests use. The CLI applies them (cmd_apply_chip).
 */
#ifndef CHIP_CHIP_PRESET_H
#define CHIP_CHIP_PRESET_H

typedef struct {
  const char *name;
  unsigned rows, cols;          /* each MXU */
  unsigned mxus, cores;         /* MXUs per core, cores per chip */
  unsigned clock_mhz;           /* cycles to time in reports */
  unsigned hbm_bytes_per_cycle; /* the published HBM bandwidth at the clock, the chip's in all */
  unsigned flit_words;          /* 64-bit words an ICI flit carries */
  unsigned link_bytes;          /* bytes a link carries a cycle each way (0: a flit) */
} chip_preset_t;

/* "small|v2|v3": the presets' names in table order, as the CLI's choice list. */
const char *chip_preset_names(void);
/* Preset i in table order (a choice index from chip_preset_names), or NULL. */
const chip_preset_t *chip_preset_at(unsigned i);

#endif
