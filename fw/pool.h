/*
 * pool: the pooling kernels of the model compiler (ONNX MaxPool, AveragePool,
 * GlobalAveragePool) on the vector unit, over activations in the layout of fw/act.h (bf16,
 * channels last, a zero border round each image). docs/models.md, "Pooling kernels", defines
 * the order of the arithmetic bit for bit (csim/golden/pool_golden.c reproduces it) and
 * docs/timing.md, "Pooling", the cycles.
 *
 * A pixel's Cp channels are ceil(Cp / C) channel blocks of C (C = MXU columns), a VMEM line
 * each: DMA brings a block's bf16 channels into a line's low half, TO_FP32 widens them, the
 * window's taps are combined lane by lane in fp32 (MAX, or ADD then SCALE by the fp32
 * reciprocal of the count), TO_BF16 rounds, DMA writes the block back. A window position in
 * the padding is never read: each tap's range of output columns and rows is clipped to the
 * valid input pixels (MaxPool's -inf padding; AveragePool divides by the valid count, or by
 * kh x kw with count_include_pad). The output rows are split over the chip's cores; DMA loads
 * input rows two output rows ahead of the vector unit and stores each output row while the
 * next is computed.
 *
 * Each function appends core c's programs to compute[c] and dma[c] for every core of the chip,
 * without HALT (kernels compose): once core c's DMA queue is past them, its output rows are in
 * HBM. They use VMEM from line 0 (MaxPool and AveragePool: at most args.vmem_lines) and semaphores FW_SEMS_STREAM .. + 3, and leave those at zero.
 * They return 0, or -1 with a message (a shape that is not a pooling, does not fit VMEM or the
 * queues, tensors that overlap or leave 32-bit HBM addresses).
 */
#ifndef FW_POOL_H
#define FW_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/act.h"
#include "fw/hal.h"

/* The largest kernel side and stride the kernels take (ONNX models use up to 7 or so; a
 * whole-image window is GlobalAveragePool). */
#define FW_POOL_MAX_WINDOW 64

typedef struct {
  fw_act_t in, out;       /* out: n and c of in, h = fw_pool_out_size(in.h, kh, sh, pad_top, pad_bottom), w alike */
  uint32_t kh, kw, sh, sw; /* kernel and strides, 1 .. FW_POOL_MAX_WINDOW */
  uint32_t pad_top, pad_left, pad_bottom, pad_right; /* each below its kernel side: every window holds a pixel */
  bool count_include_pad; /* AveragePool: divide by kh x kw (1) or by the window's valid pixels (0) */
  uint32_t vmem_lines;    /* the VMEM lines from line 0 it may use; 0: all of it */
} fw_pool_args_t;

/* GlobalAveragePool sums an image's channel block in chunks of whole rows of at most this many
 * pixels (a row at a time when a row is longer), two chunk buffers in VMEM. */
#define FW_POOL_GLOBAL_CHUNK_PIXELS 2048

/* ONNX's output size with ceil_mode 0: floor((in + pad_lo + pad_hi - k) / s) + 1, or 0 when
 * no window fits (or k or s is 0). */
uint32_t fw_pool_out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t pad_lo, uint32_t pad_hi);

int fw_maxpool(const chip_geometry_t *chip, const fw_pool_args_t *a, fw_prog_t *compute, fw_prog_t *dma, char *err,
               size_t errlen);
int fw_avgpool(const chip_geometry_t *chip, const fw_pool_args_t *a, fw_prog_t *compute, fw_prog_t *dma, char *err,
               size_t errlen);
/* out: n and c of in, h = w = 1: the mean of each image's h x w pixels, channel by channel. */
int fw_global_avgpool(const chip_geometry_t *chip, const fw_act_t *in, const fw_act_t *out, fw_prog_t *compute,
                      fw_prog_t *dma, char *err, size_t errlen);

/* What a pooling costs core `core` (docs/timing.md, "Pooling"), read off the programs the
 * kernel builds: the lines its vector unit processes (a line a cycle), the DMA rows (an HBM
 * request each) and bytes of its loads and stores, and its commands. 0, or -1 with the
 * message the kernel would give. For FW_POOL_GLOBAL only a->in and a->out are read. */
typedef enum { FW_POOL_MAX, FW_POOL_AVG, FW_POOL_GLOBAL } fw_pool_kind_t;
typedef struct {
  uint64_t vec_lines;
  uint64_t vec_cmds, vec_single; /* VEC commands, and those of one line */
  uint64_t load_rows, store_rows, load_bytes, store_bytes;
  uint64_t lead_rows;  /* DMA rows that land before the vector unit's first line: the first output row's loads */
  uint64_t tail_rows;  /* DMA rows after its last line: the last output row's store */
  uint32_t compute_cmds, dma_cmds;
} fw_pool_cost_t;
int fw_pool_cost(const chip_geometry_t *chip, fw_pool_kind_t kind, const fw_pool_args_t *a, unsigned core,
                 fw_pool_cost_t *cost, char *err, size_t errlen);

/* The timing contract of MaxPool and AveragePool on a core (docs/timing.md, "Pooling"): its
 * cycles while the vector unit never waits for the DMA queue, with p cycles a DMA row
 * (ceil(row bytes / the core's HBM bytes a cycle)) and HBM latency L; 0 for a core without
 * work. Below it otherwise. */
uint64_t fw_pool_contract_cycles(const fw_pool_cost_t *cost, uint32_t p, uint32_t hbm_latency);

#endif
