/*
 * train_args: what a training run is asked to do (fw/train.h) -- the network's shape, the
 * batch, the learning rate and the parallel layout -- as plain types without code, so that
 * the reference trainer (csim/golden/train_golden.h) takes the same arguments and still
 * shares nothing with the firmware it checks (docs/training.md).
 */
#ifndef FW_TRAIN_ARGS_H
#define FW_TRAIN_ARGS_H

#include <stdint.h>

#include "fw/collective_args.h"

/* input (features) -> hidden -> hidden -> classes, ReLU after each hidden layer, softmax
 * cross-entropy, mini-batch SGD. Layout on a slice of dp x mp chips (docs/training.md):
 *   - mp == 1: data parallel over the whole slice, chip index y * w + x is its dp rank;
 *   - dp == 1: model parallel over the whole slice, the chip index is its mp rank;
 *   - else the slice is dp x mp chips: dp rank = x - x0 (DP along X), mp rank = y - y0.
 * Model parallel splits the second hidden layer Megatron-style: its weight W2 by columns
 * (hidden / mp outputs per chip), the classifier's W3 by rows. */
typedef struct {
  unsigned features, hidden, classes;
  unsigned batch;      /* the global batch; each dp rank takes batch / dp examples */
  unsigned dp, mp;
  uint32_t lr;         /* fp32 bits of the learning rate */
} fw_train_net_t;

enum { FW_TRAIN_LAYERS = 3 };

#endif
