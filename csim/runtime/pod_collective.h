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

#include "fw/collective.h"
#include "runtime/status.h"
#include "pod/pod.h"

typedef struct {
  /* the pod and its chips (the kernels beyond the GEMM use core 0); machine.chip.hbm_bytes 0:
   * each chip's HBM sized to the buffer, else its capacity (a larger buffer is refused) */
  pod_config_t machine;
  fw_slice_t slice;            /* w/h filled in from the pod */
  fw_coll_args_t args;         /* data_line 0; lines from elems; chunk_lines 0 chooses */
  uint64_t elems;              /* fp32 values per chip */
  const char *trace_path;      /* FST of one chip's collective run, or NULL */
  unsigned trace_chip;         /* index y * size_x + x */
  profile_t *profile;          /* NULL, or a profile of the chips (profile/profile.h; pod_config_t) */
} pod_coll_config_t;

typedef struct {
  uint64_t cycles;             /* the collective, first command to the last chip idle */
  uint32_t lines, chunk_lines;
  uint64_t flits_sent;         /* by every router port facing a link, summed over the slice */
  uint32_t sems_left;          /* semaphores not back at zero after the kernel (must be 0) */
  uint64_t memory_bytes;       /* memory pages the chips' memories hold after it (chip_memory) */
} pod_coll_stats_t;

/* in/out: slice chips (index y * w + x within the slice) x elems fp32 bit patterns (with
 * args.bf16_in, `in` holds bf16 bit patterns in the low 16 bits; `out` is fp32).
 * Returns RT_OK; RT_INVALID with a message when the request cannot run (no such chip, the
 * buffer or the programs do not fit, a bad slice or argument); RT_FAILED when it ran and
 * failed (the message names the stuck chip and queue) or memory ran out. */
/* RT_OK when the collective of cfg can be asked of the chips (as pod_collective checks before
 * it builds the pod), else RT_INVALID with a message. pod_collective can still refuse it
 * later, when the programs turn out not to fit the queues. */
rt_status_t pod_coll_check(const pod_coll_config_t *cfg, char *err, size_t errlen);

/* What checking cfg's collective finds, kept by a job so that it checks once: the chips'
 * geometry, the slice (w/h and the pod's size filled in), the arguments (lines, chunk_lines
 * chosen), the pod to build (the machine with each chip's HBM sized to the buffer) and how a
 * chip's values lie in VMEM lines (all_to_all: blocks of `block` values, block_lines lines
 * each; else block 0, contiguous). pod_coll_check_plan: RT_OK and *plan, or RT_INVALID. */
typedef struct {
  chip_geometry_t geo;
  fw_slice_t slice;
  fw_coll_args_t args;
  pod_config_t pod;
  uint64_t block;
  uint32_t block_lines;
} pod_coll_plan_t;
rt_status_t pod_coll_check_plan(const pod_coll_config_t *cfg, pod_coll_plan_t *plan, char *err, size_t errlen);

/* For a host that reaches the chips another way (the SystemC host model, docs/systemc.md): the
 * pieces pod_collective runs. pod_coll_plan gives the chips' geometry (*g), the slice (w/h and
 * the pod's size filled in) and the arguments (lines, chunk_lines chosen) of cfg's collective,
 * as pod_coll_check checks them: RT_OK, or RT_INVALID with a message. */
rt_status_t pod_coll_plan(const pod_coll_config_t *cfg, chip_geometry_t *g, fw_slice_t *s, fw_coll_args_t *a, char *err,
                          size_t errlen);
/* Appends to a DMA program the copy of a chip's buffer, `lines` VMEM lines of lb bytes at HBM
 * address hbm_addr, into VMEM line 0 on (store: from VMEM back to HBM), and a fence. */
void pod_coll_copy_program(fw_prog_t *p, uint32_t lines, uint64_t hbm_addr, unsigned lb, bool store);
/* Chip (x, y)'s programs of the collective (fw_collective), each ended with HALT; cq and dq
 * initialised by the caller. 0, or -1 with a message. */
int pod_coll_programs(const chip_geometry_t *g, const fw_slice_t *s, const fw_coll_args_t *a, unsigned x, unsigned y,
                      fw_prog_t *cq, fw_prog_t *dq, char *err, size_t errlen);

rt_status_t pod_collective(const pod_coll_config_t *cfg, const uint32_t *in, uint32_t *out, pod_coll_stats_t *st,
                           char *err, size_t errlen);

/* The same with the values supplied and taken chip by chip, so a pod of any size needs no
 * host copy of every chip's data (docs/scale.md): input(chip, first, n) gives slice chip's
 * values [first, first + n) (as `in` holds them); once the collective has run, results() is
 * called with a reader of what every chip holds (pod_coll_read) and its return is the run's.
 * The inputs reach VMEM through HBM a group of chips at a time, each group's HBM cleared after
 * (chip_hbm_zero); the results are read from VMEM where the chips' model lets the host (the fast
 * models), else copied back to HBM first. */
typedef struct pod_coll_results pod_coll_results_t;
typedef struct {
  void *ctx;
  void (*input)(void *ctx, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals);
  rt_status_t (*results)(void *ctx, pod_coll_results_t *r, char *err, size_t errlen);
} pod_coll_io_t;
rt_status_t pod_collective_io(const pod_coll_config_t *cfg, const pod_coll_io_t *io, pod_coll_stats_t *st, char *err,
                              size_t errlen);
/* pod_collective_io of a collective pod_coll_check_plan accepted, with its plan (not checked
 * again): RT_OK; RT_INVALID when the programs turn out not to fit the queues (known only once
 * they are built); RT_FAILED as pod_collective. */
rt_status_t pod_collective_planned(const pod_coll_config_t *cfg, const pod_coll_plan_t *plan, const pod_coll_io_t *io,
                                   pod_coll_stats_t *st, char *err, size_t errlen);
/* Slice chip's values [first, first + n) after the collective (fp32 bit patterns): 0, or -1. */
int pod_coll_read(pod_coll_results_t *r, unsigned chip, uint64_t first, uint64_t n, uint32_t *vals);

/* On a pod that exists: every slice chip's buffer (a->lines lines) is at HBM address
 * hbm_addr; it is copied into VMEM line 0, reduced, and written back to the same place.
 * Chips outside the slice get HALT programs. trace_path (or NULL): an FST of chip
 * trace_chip (y * pod_w + x) from the collective on. */
rt_status_t pod_coll_run(pod_t *pod, const fw_slice_t *s, const fw_coll_args_t *a, uint64_t hbm_addr,
                         const char *trace_path, unsigned trace_chip, pod_coll_stats_t *st, char *err, size_t errlen);

/* Several collectives at once on disjoint slices of one pod (each slice's routers keep its
 * traffic inside it); stats.cycles is the pod's (they run together). */
typedef struct {
  fw_slice_t slice;
  fw_coll_args_t args;    /* lines and chunk_lines set */
  uint64_t hbm_addr;      /* the buffer in each of the slice's chips' HBM */
  pod_coll_stats_t stats;
} pod_coll_job_t;
rt_status_t pod_coll_run_jobs(pod_t *pod, pod_coll_job_t *jobs, unsigned njobs, const char *trace_path,
                              unsigned trace_chip, char *err, size_t errlen);

/* Bandwidth of a collective by the nccl-tests conventions (docs/collectives.md), at a clock
 * in MHz: algbw = bytes / time, busbw = algbw x the op's factor, link = one link one way (a
 * link of link_bytes bytes a cycle; 0: 8), bound = what the slice's links allow for the op, in GB/s. */
typedef struct {
  double time_s, algbw, busbw, link, bound;
  unsigned links;  /* links per chip the bound counts */
} pod_coll_bw_t;
pod_coll_bw_t pod_coll_bandwidth(const fw_slice_t *s, fw_coll_op_t op, uint64_t bytes, uint64_t cycles,
                                 double clock_mhz, unsigned link_bytes);

/* Sets a->chunk_lines for a->lines on this slice (at most 64, slots fitting VMEM). */
void pod_coll_default_chunk(const fw_slice_t *s, fw_coll_args_t *a, uint32_t vmem_lines);

#endif
