/*
 * pod_collective: runs a collective (fw/collective.h) on a slice of a pod of RTL chips.
 * The host puts each chip's buffer in its HBM; each chip DMAs it into VMEM, runs the
 * collective firmware, and DMAs the result back; the host reads it. The cycles reported
 * are those of the collective alone (the HBM copies run as separate pod runs).
 */
#ifndef POD_COLLECTIVE_H
#define POD_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "collective.h"

typedef struct {
  unsigned pod_w, pod_h;
  fw_slice_t slice;            /* pod_w/pod_h filled in from the pod */
  fw_coll_args_t args;         /* data_line 0; lines from elems; chunk_lines 0 chooses */
  uint64_t elems;              /* fp32 values per chip */
  unsigned mxu_rows, mxu_cols; /* chip size (a built chip) */
  unsigned link_latency;
  uint64_t seed;               /* reset randomisation */
  const char *trace_path;      /* FST of one chip's collective run, or NULL */
  unsigned trace_chip;         /* index y * pod_w + x */
} pod_coll_config_t;

typedef struct {
  uint64_t cycles;             /* the collective, first command to the last chip idle */
  uint32_t lines, chunk_lines;
  uint64_t flits_sent;         /* by every router port facing a link, summed over the slice */
} pod_coll_stats_t;

/* in/out: slice chips (index y * w + x within the slice) x elems fp32 bit patterns.
 * Returns 0, or -1 with a message (bad configuration, or the run failed: then the
 * message names the stuck chip and queue). */
int pod_collective(const pod_coll_config_t *cfg, const uint32_t *in, uint32_t *out, pod_coll_stats_t *st,
                   char *err, size_t errlen);

#endif
