/*
 * collective: SPMD collective kernels over the chips of a slice (docs/collectives.md),
 * built only from chip commands: remote DMA over the torus moves data between neighbours,
 * the vector unit reduces, semaphores synchronise. Every chip of the slice runs the
 * program pair built here for its position. The data is fp32 lines in VMEM, at the
 * same lines on every chip; the kernel uses semaphores 0..29 and leaves them at zero. It appends no HALT: the
 * caller adds what comes after (a write-back) and the HALTs.
 */
#ifndef FW_COLLECTIVE_H
#define FW_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/collective_args.h"
#include "fw/hal.h"


/* Lines of VMEM the kernel needs beyond the buffer (receive slots and a scratch line, or
 * for all-to-all the output blocks), placed right after the buffer. all_to_all: the
 * buffer is n blocks of lines / n lines (n = chips in the slice; lines a multiple of n),
 * block j for the chip of slice index j; afterwards block i holds what chip i sent. */
uint32_t fw_coll_scratch_lines(const fw_coll_args_t *a);

/* Checks that the slice is non-empty and inside its pod (message in err, -1 if not). */
int fw_slice_check(const fw_slice_t *s, char *err, size_t errlen);

/* Checks the arguments against the slice and the chip (message in err, -1 when they
 * cannot run). */
int fw_coll_check(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, char *err, size_t errlen);

/* Appends the programs of the chip at (x, y) of the pod (inside the slice). */
int fw_collective(const chip_geometry_t *chip, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                  fw_prog_t *compute, fw_prog_t *dma, char *err, size_t errlen);

/* Which lines a chip owns after a reduce-scatter, or contributes to an all-gather
 * (ring along the slice's one dimension longer than 1): [*first, *first + *count). */
void fw_coll_owned(const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y, uint32_t *first,
                   uint32_t *count);

/* A barrier over the slice, appended to both queues: neither queue of any chip goes past
 * it until both queues of every chip have reached it. Every chip sends a one-line remote
 * DMA to the slice's first chip (semaphore 30 there), which then releases them all
 * (semaphore 31), on its four engines. Remote signals use only 30 and 31, which no
 * collective uses, so a barrier may follow a collective directly. Uses the VMEM line
 * `scratch_line`; leaves every semaphore at zero. */
int fw_barrier(const fw_slice_t *s, unsigned x, unsigned y, uint32_t scratch_line, fw_prog_t *compute,
               fw_prog_t *dma, char *err, size_t errlen);

#endif
