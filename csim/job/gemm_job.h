/*
 * gemm_job: C = A x B on one chip or one MXU (`tpusim gemm`; docs/gemm.md, docs/mxu.md) as one
 * job that owns config -> check -> build -> run -> golden check -> measure. It checks once
 * (gemm_job_new: the shape against the chip or the MXU, the chip's HBM), makes the seeded
 * inputs when none are given, runs the firmware GEMM on a chip (runtime/chip_gemm) or feeds
 * the MXU alone (runtime/mxu_driver, or its fast model), checks C against the golden model
 * (all of it or a sample of rows) and derives the figures (runtime/perf: ideal cycles, the
 * timing contract, utilisation, FLOPS). A client parses and reports.
 */
#ifndef JOB_GEMM_JOB_H
#define JOB_GEMM_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chip/chip.h"
#include "golden/gemm_golden.h"
#include "profile/profile.h"
#include "runtime/mxu_driver.h"
#include "runtime/status.h"

typedef enum { GEMM_JOB_CHIP, GEMM_JOB_MXU } gemm_job_level_t;

typedef struct {
  chip_config_t chip;           /* the chip (its MXU's size alone at GEMM_JOB_MXU); chip.seed: reset */
  gemm_job_level_t level;
  uint64_t m, k, n;
  uint64_t seed;                /* the inputs when a/b are NULL, and the rows check_rows samples */
  const uint16_t *a, *b;        /* bf16 inputs (M x K, K x N), or NULL: seeded (the job's own) */
  bool relu, bf16_out, transposed_a, transposed_b;
  uint64_t check_rows;          /* rows of C the golden model checks (0 or >= M: all) */
  const char *trace_path;       /* FST of the run, or NULL (not on the fast model) */
  profile_t *profile;           /* NULL, or a profile of the chip (GEMM_JOB_CHIP) */
  /* the chip's progress (chip_set_progress; GEMM_JOB_CHIP), or NULL */
  void (*progress)(void *ctx, uint64_t cycles);
  void *progress_ctx;
} gemm_job_config_t;

typedef struct {
  uint64_t cycles, readout_cycles, tiles;
  mxu_counters_t counters;
  uint64_t hbm_bytes, dma_busy, mxu_busy;  /* chip level */
  size_t compute_cmds, dma_cmds;           /* chip level */
  double seconds;                          /* host time of the run */
  golden_diff_t diff;                      /* C against the golden model */
  uint64_t checked_rows;
  const uint32_t *c;                       /* M x N (bf16 bits in the low half with bf16_out) */
  /* the figures: M*K*N over the chip's MACs a cycle, the MXU-alone contract of the largest
   * share (perf_gemm_share_contract_cycles), ideal over the cycles, FLOPS sustained and peak */
  double ideal_cycles, utilization, flops, peak_flops;
  uint64_t contract_cycles;
} gemm_job_result_t;

typedef struct gemm_job gemm_job_t;

/* Checks cfg: NULL with *rc RT_INVALID and a message when the GEMM does not fit the chip or
 * the MXU, RT_FAILED when out of memory. cfg->a and cfg->b must outlive the job. */
gemm_job_t *gemm_job_new(const gemm_job_config_t *cfg, rt_status_t *rc, char *err, size_t errlen);
void gemm_job_free(gemm_job_t *j);

/* Runs it and checks C: RT_OK (the verdict in the result), RT_INVALID when the trace cannot
 * be opened (its message "--trace: ..."), RT_FAILED with a message. The profile may be set
 * on gemm_job_config after the check. */
rt_status_t gemm_job_run(gemm_job_t *j, char *err, size_t errlen);
gemm_job_config_t *gemm_job_config(gemm_job_t *j);
const gemm_job_result_t *gemm_job_result(const gemm_job_t *j);

#endif
