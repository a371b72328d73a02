/*
 * collective_args: what a collective is asked to do (fw/collective.h) -- the operation, the
 * algorithm, the slice and the buffer -- as plain types without any code, so that the golden
 * model (csim/golden/coll_golden.h) can take the same arguments and still share nothing with
 * the firmware that it checks.
 */
#ifndef FW_COLLECTIVE_ARGS_H
#define FW_COLLECTIVE_ARGS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  FW_COLL_ALLREDUCE, FW_COLL_REDUCE_SCATTER, FW_COLL_ALL_GATHER, FW_COLL_BROADCAST, FW_COLL_ALL_TO_ALL
} fw_coll_op_t;
typedef enum { FW_COLL_RING, FW_COLL_TORUS2D } fw_coll_algo_t;

typedef struct {
  unsigned x0, y0, w, h;   /* the slice: chips x0..x0+w-1, y0..y0+h-1 of the pod */
  unsigned pod_w, pod_h;   /* the pod (a slice dimension equal to the pod's wraps around) */
} fw_slice_t;

typedef struct {
  fw_coll_op_t op;
  fw_coll_algo_t algo;
  uint32_t data_line;      /* first VMEM line of the buffer, on every chip */
  uint32_t lines;          /* buffer length in lines (C fp32 each) */
  uint32_t chunk_lines;    /* pipelining unit: at most this many lines per remote DMA */
  unsigned root;           /* broadcast: the root chip, index y * w + x within the slice */
  bool bf16_in;            /* allreduce, reduce_scatter: the buffer holds bf16 values (C per
                            * line, in its low half); they are widened to fp32 in place first,
                            * and the reduction and the result are fp32 */
} fw_coll_args_t;

#endif
