/*
 * train_golden: the reference trainer, a golden model of a training step on a slice
 * (docs/training.md). Written from the documented step -- layers, precision, the MXU's
 * accumulation order (mxu_golden_fpu: mxu_golden's on the host FPU), the vector unit's
 * operations (vec_golden), the collectives' reduction orders (coll_golden) and the
 * parameter-line layout -- and sharing no code with the firmware (fw/train.c) it checks. It
 * keeps every chip's parameters and reproduces them bit for bit after every step, for every
 * parallel layout.
 */
#ifndef GOLDEN_TRAIN_GOLDEN_H
#define GOLDEN_TRAIN_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include "fw/collective_args.h"
#include "fw/train_args.h"

typedef struct train_golden train_golden_t;

/* w[l] and bias[l]: the whole network's initial parameters as fp32 bit patterns, row-major
 * (layer 1 features x hidden, layer 2 hidden x hidden, layer 3 hidden x classes); lanes: C
 * of the chips (= R); cores: the chips' cores (0 means 1), each a data-parallel replica with
 * an equal share of the chip's examples whose gradients core 0 sums (docs/training.md,
 * "Cores"). NULL with a message when out of memory. */
train_golden_t *train_golden_new(const fw_train_net_t *net, const fw_slice_t *s, unsigned lanes, unsigned cores,
                                 const uint32_t *const w[FW_TRAIN_LAYERS], const uint32_t *const bias[FW_TRAIN_LAYERS],
                                 char *err, size_t errlen);
void train_golden_free(train_golden_t *t);

/* One step on examples first .. first + batch - 1 of x (bf16 bit patterns, features a row)
 * and label. 0, or -1 when out of memory. */
int train_golden_step(train_golden_t *t, const uint16_t *x, const uint8_t *label, unsigned first);

/* Chip i of the slice (y * w + x): its parameter lines (every layer's, C fp32 a line, as the
 * chip writes them to HBM), how many, and its last step's probabilities (batch / dp lines,
 * core 0's examples first). */
const uint32_t *train_golden_params(const train_golden_t *t, unsigned chip, size_t *lines);
const uint32_t *train_golden_probs(const train_golden_t *t, unsigned chip);

/* The whole network's parameters as the chips of data-parallel rank dp_rank hold them (the
 * split layers put together from every mp rank's shard): row-major fp32 bits. */
void train_golden_network(const train_golden_t *t, unsigned dp_rank, uint32_t *const w[FW_TRAIN_LAYERS],
                          uint32_t *const bias[FW_TRAIN_LAYERS]);

#endif
