/*
 * train: the firmware of a training step (docs/training.md). Every chip of a slice runs the
 * program pair built here for its place in the layout (fw/train_args.h): the forward pass
 * (GEMMs on the MXU from VMEM, bias, ReLU, softmax on the vector unit), the backward pass
 * (transposed-operand GEMMs, the ReLU mask, bias sums), the all-reduce of each layer's
 * gradients over the data-parallel group as soon as they exist (interleaved with the next
 * layer's backward pass), the model-parallel all-reduces of activations, and the SGD update.
 * Weights stay in VMEM between steps; each step writes them and the probabilities to HBM
 * for the host. Semaphores: 0..28 the collectives (fw/collective.h; fp32 ones, which leave 29
 * alone), 29 the lines one core hands the other, 30 DMA -> compute and 31 compute -> DMA
 * hand-overs, each an ordered stream of tokens; all end at zero. On a chip of two cores each
 * core is a data-parallel replica with half the chip's examples: core 0 adds core 1's
 * gradients to its own before the data-parallel all-reduce, updates, and hands core 1 the new
 * parameters.
 */
#ifndef FW_TRAIN_H
#define FW_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/collective_args.h"
#include "fw/hal.h"
#include "fw/train_args.h"

#define FW_TRAIN_MAX_CORES 2 /* a chip's cores the step runs on (each a data-parallel replica) */

typedef enum {
  FW_TRAIN_FULL,          /* the step */
  FW_TRAIN_COMPUTE_ONLY,  /* the step without its collectives (what compute alone costs) */
  FW_TRAIN_COMM_ONLY      /* its collectives alone, in the same order (what they cost alone) */
} fw_train_mode_t;

/* One layer's parameters on a chip: K x N (this chip's shard), padded to whole tiles. */
typedef struct {
  unsigned k, n;            /* real rows and columns */
  unsigned kp, nb;          /* rows padded to a tile; column blocks of C lanes */
  uint32_t lines;           /* nb * kp weight lines (block nt, row k: line nt * kp + k), then nb bias lines */
} fw_train_layer_t;

typedef struct {
  fw_train_net_t net;
  unsigned lanes;                        /* C (= R: training needs a square MXU) */
  unsigned mxus;                         /* the core's MXUs: the GEMMs' output tiles go round them */
  unsigned cores;                        /* the chip's cores: data-parallel replicas within the chip */
  unsigned batch_per_chip;               /* examples a step on each chip (batch / dp) */
  unsigned batch_per_core;               /* of them, each core's */
  unsigned batch_per_core_padded;        /* that, rounded up to a tile of C rows */
  unsigned features_padded, hidden_padded;  /* features and hidden, rounded up to C */
  unsigned hidden_per_mp;                /* hidden / mp: an mp rank's share of layer 2's columns */
  unsigned hidden_per_mp_padded;         /* that, rounded up to C */
  unsigned examples;                     /* training examples in HBM */
  fw_train_layer_t layer[FW_TRAIN_LAYERS];
  /* HBM byte addresses: a zero line, the constants (the logits' mask line), the parameters
   * (every layer's lines in order, C fp32 a line), the probabilities out (batch_per_chip lines, each core's
   * in turn), the
   * activations' bf16 copies for the transposing DMA, the examples (bf16 rows of fp
   * features) and their one-hot labels (fp32 lines) */
  uint32_t hbm_zero, hbm_consts, hbm_params, hbm_probs, hbm_a1, hbm_a2, hbm_x, hbm_y;
  uint32_t hbm_peer;                     /* two cores: core 1's gradient lines on their way to core 0 */
  uint64_t hbm_bytes;
  uint32_t param_lines;                  /* all layers */
  /* VMEM lines (see train.c) */
  uint32_t v_params[FW_TRAIN_LAYERS], v_grad[FW_TRAIN_LAYERS], v_wb[FW_TRAIN_LAYERS], v_bb[FW_TRAIN_LAYERS];
  uint32_t v_peer[FW_TRAIN_LAYERS];      /* core 0 of a two-core chip: core 1's gradients */
  uint32_t v_flag;                       /* two cores: the line a hand-over's flag writes */
  uint32_t v_mask, v_x, v_y, v_xt, v_z1, v_tmp, v_a1b, v_a1t, v_z2, v_a2b, v_a2t, v_zp, v_z3, v_zm, v_m, v_e, v_sum,
      v_rcp, v_p, v_dz3, v_dz3b, v_da2, v_dz2, v_dz2b, v_da1, v_dz1, v_dz1b;
  uint32_t vmem_used;
  fw_coll_args_t dp_coll[FW_TRAIN_LAYERS], mp_fwd, mp_bwd;  /* every chip's all-reduces */
} fw_train_plan_t;

/* A chip's place in the layout: its ranks and the groups it all-reduces with. */
typedef struct {
  unsigned dp_rank, mp_rank;
  fw_slice_t dp_group, mp_group;
} fw_train_place_t;

/* Checks the run against the chip and the slice and lays it out; -1 with a message when it
 * cannot run (the layout's rules, a batch or hidden size that does not divide, what does not
 * fit VMEM, HBM or the accumulator). */
int fw_train_plan(const chip_geometry_t *chip, const fw_slice_t *s, const fw_train_net_t *net, unsigned examples,
                  fw_train_plan_t *pl, char *err, size_t errlen);

/* The place of the chip at (x, y) of the pod (inside the slice). */
void fw_train_place(const fw_train_plan_t *pl, const fw_slice_t *s, unsigned x, unsigned y, fw_train_place_t *pc);

/* Once, before the first step, on each core: clears the VMEM the run uses, loads the parameters
 * from HBM and builds the mask. Appends HALTs. */
int fw_train_init(const fw_train_plan_t *pl, fw_prog_t *compute, fw_prog_t *dma, char *err, size_t errlen);

/* One step for the chip at (x, y) on the examples first .. first + batch - 1 of HBM (this
 * chip takes its dp rank's share, each of its cores half of that): core c's programs are
 * appended to compute[c] and dma[c] (pl->cores of each; docs/training.md, "Cores"). Appends
 * HALTs. */
int fw_train_step(const chip_geometry_t *chip, const fw_train_plan_t *pl, const fw_slice_t *s, unsigned x, unsigned y,
                  unsigned first, fw_train_mode_t mode, fw_prog_t *compute, fw_prog_t *dma, char *err, size_t errlen);

/* Multiply-accumulates per chip per step in the GEMMs (real sizes, no padding). */
uint64_t fw_train_macs(const fw_train_plan_t *pl);

/* Host side: packs a layer's shard (k x n fp32 bit patterns row-major, bias n) into its
 * parameter lines (layer.lines x C, zero padding), and back. */
void fw_train_pack(const fw_train_plan_t *pl, unsigned layer, const uint32_t *w, const uint32_t *bias, uint32_t *lines);
void fw_train_unpack(const fw_train_plan_t *pl, unsigned layer, const uint32_t *lines, uint32_t *w, uint32_t *bias);

#endif
