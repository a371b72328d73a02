/*
 * chip_top: the Verilated models of rtl/chip_top.sv, one per MXU size built into this
 * binary (CHIP_SIZES in the Makefile), with their geometry and the layout of their network
 * ports. Driven through vmodel.h by csim/chip/chip.c, which adds the HBM model and the
 * host's view.
 */
#ifndef CHIP_TOP_H
#define CHIP_TOP_H

#include <stdint.h>

#include "fw/isa.h"
#include "vmodel/noc_router.h"
#include "vmodel/vmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The chip's router (rtl/chip_top.sv NumVcs): its four network ports carry flits of
 * CHIP_FLIT_BITS each, +X -X +Y -Y, and CHIP_ROUTER_VCS credit bits each. */
#define CHIP_ROUTER_VCS 2
#define CHIP_FLIT_BITS NOC_FLIT_BITS(CHIP_ROUTER_VCS)

/* Builds the chip of `cores` cores with `mxus` rows x cols MXUs each (0 means 1); NULL if that
 * size is not built in (CHIP_SIZES: RxC, RxCxM for M MXUs, ...cK for K cores). Registers and
 * memories without a reset start random from the seed, or zero with zero_init (the lockstep
 * check: what the fast model assumes of state nobody wrote). */
vmodel_t *chip_top_new(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, uint64_t seed, int zero_init);
/* Fills *g for that size; returns 0, or -1 if not built. */
int chip_top_geometry(unsigned rows, unsigned cols, unsigned mxus, unsigned cores, chip_geometry_t *g);
/* The sizes built, as "4x4 16x16 4x4x2 4x4x2c2 ..." for messages. */
const char *chip_top_sizes(void);

#ifdef __cplusplus
}
#endif

#endif
