/*
 * cmd_golden: the golden model of the command processor's checks (docs/isa.md, "Errors"):
 * which error code a command stops its queue with, from its words alone, written from the
 * documentation and sharing no code with the RTL (rtl/chip_cmdq.sv). The random-program
 * runner (csim/verify/randprog_run.h) holds the chip's reports to it.
 */
#ifndef CMD_GOLDEN_H
#define CMD_GOLDEN_H

#include <stdint.h>

#include "fw/isa.h"

typedef struct {
  chip_geometry_t geo;     /* the chip's sizes */
  uint64_t hbm_bytes;      /* its HBM */
  unsigned pod_x, pod_y;   /* the pod (1, 1 for a lone chip): remote DMA destinations */
} cmd_golden_chip_t;

/* The error (an isa_error_t; ISA_ERR_NONE when the command may run) that command `cmd`
 * at index `pc` of a `len`-command program in queue `queue` stops the queue with. */
unsigned cmd_golden_error(const cmd_golden_chip_t *chip, unsigned queue, const uint32_t cmd[ISA_CMD_WORDS],
                          uint32_t pc, uint32_t len);

#endif
