/*
 * hal: the firmware's hardware abstraction layer. It builds per-queue command programs for
 * a chip; it is the only code that encodes commands, field by field from the command table
 * (fw/isa.h, fw/isa.def; docs/isa.md). A program is a growable array of 256-bit commands;
 * errors (out of memory) are sticky and reported by fw_prog_ok.
 */
#ifndef FW_HAL_H
#define FW_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fw/isa.h"

/* Semaphore map of the kernels in fw/ (docs/kernels.md). A kernel leaves its semaphores at
 * zero; kernels that share a program pair must use disjoint ranges, or follow each other
 * (the GEMM and a collective both use 0..; a collective and a barrier may overlap in time). */
enum {
  FW_SEMS_GEMM = 0,          /* fw_gemm: 0..14 */
  FW_SEMS_STREAM = 16,       /* fw_elementwise, fw_copy_local, fw_copy_remote: 16..23; fw_line_sum: 16..20 */
  FW_SEMS_COLLECTIVE = 0,    /* fw_collective: 0..29 (29: bf16 widening, 28: phase hand-over) */
  FW_SEM_BARRIER_IN = 30,    /* fw_barrier: arrivals at the slice's first chip */
  FW_SEM_BARRIER_OUT = 31,   /* fw_barrier: its release of every other chip */
  /* fw_train_step uses the barrier's two as its queues' hand-overs (so no barrier inside a
   * training step): DMA -> compute and compute -> DMA tokens */
  FW_SEM_TRAIN_TO_COMPUTE = 30,
  FW_SEM_TRAIN_TO_DMA = 31,
  /* fw_train_step on a chip of two cores: lines handed between the cores (core 1's gradients
   * arriving at core 0, core 0's new parameters at core 1). The training step's collectives
   * are fp32, so they never use 29 (the bf16 widening's) */
  FW_SEM_TRAIN_PEER = 29
};

/* A kernel's phase, for the profile (docs/profiling.md): the commands from `at` on belong to
 * `name` (a string that outlives the program). */
#define FW_PROG_MARKS 8
typedef struct {
  uint32_t at;
  const char *name;
} fw_mark_t;

typedef struct {
  uint32_t *words;
  size_t count, cap;  /* in commands */
  fw_mark_t marks[FW_PROG_MARKS]; /* fw_prog_mark, in command order (not carried by fw_prog_append) */
  unsigned nmarks;
  bool oom;
  unsigned mxu;       /* the MXU the fw_mxu_* commands name (fw_mxu_select; 0 at init) */
  unsigned rdma_core; /* the destination core of the fw_rdma* commands (fw_rdma_core; 0 at init) */
} fw_prog_t;

void fw_prog_init(fw_prog_t *p);
void fw_prog_free(fw_prog_t *p);
bool fw_prog_ok(const fw_prog_t *p);

/* The one check every kernel builder makes of what it built: 0 when no allocation failed and
 * each program fits a queue of the chip; else -1 with "out of memory building <what>" or
 * "<what> needs N compute and M DMA commands; a queue holds D<hint>" (hint: how to make it fit,
 * e.g. " (use larger chunks)", or ""). `compute` may be NULL (a DMA-only kernel): then
 * "<what> needs M DMA commands". Counts are the programs' whole lengths (what the queue holds). */
int fw_programs_fit(const chip_geometry_t *chip, const fw_prog_t *compute, const fw_prog_t *dma, const char *what,
                    const char *hint, char *err, size_t errlen);

/* The commands appended from here on are phase `name` of the kernel (up to FW_PROG_MARKS a
 * program; a mark at the same place replaces the one before). No command: the profile reads it. */
void fw_prog_mark(fw_prog_t *p, const char *name);

void fw_halt(fw_prog_t *p);
void fw_fence(fw_prog_t *p);
void fw_sem_wait(fw_prog_t *p, unsigned sem, uint32_t value);
void fw_sem_signal(fw_prog_t *p, unsigned sem, uint32_t value);

/* 2-D DMA of `rows` rows of `bytes` bytes (a multiple of 4, at most a VMEM line); HBM
 * rows are `stride` bytes apart, VMEM rows are consecutive lines. On completion semaphore
 * `sem` (or ISA_SEM_NONE) gets `value` added. */
void fw_dma_hbm_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                        uint32_t line, uint32_t rows, uint32_t bytes);
void fw_dma_vmem_to_hbm(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t line, uint32_t hbm_addr,
                        uint32_t stride, uint32_t rows, uint32_t bytes);
void fw_dma_vmem_to_vmem(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t src_line, uint32_t dst_line,
                         uint32_t rows);
/* Transposed: `rows` (at most C) HBM rows of bytes/2 bf16 become bytes/2 VMEM lines from
 * `line`, line e holding element e of every row in bf16 lanes 0..rows-1 (zero beyond): the
 * streamed operand of A^T x B (docs/isa.md, "Transposing DMA"). */
void fw_dma_hbm_to_vmem_transposed(fw_prog_t *p, unsigned sem, uint32_t value, uint32_t hbm_addr, uint32_t stride,
                                   uint32_t line, uint32_t rows, uint32_t bytes);

/* Remote DMA (DMA queue): `rows` VMEM lines from src_line here to dst_line on chip (x, y),
 * over the torus. Each line adds `remote_value` to semaphore `remote_sem` of that chip when
 * it has been written there (lines may arrive in any order: wait for rows x value); when
 * the last line has left here, local semaphore `local_sem` gets `local_value` (either
 * semaphore may be ISA_SEM_NONE). */
void fw_rdma(fw_prog_t *p, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line, uint32_t rows,
             unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value);
/* The same on remote-DMA engine `engine` (0..3; fw_rdma uses 0). Each engine injects on its
 * own router port and sends its RDMAs in order; different engines run concurrently, so a
 * chip can drive all four links at once (one engine per link direction). */
void fw_rdma_on(fw_prog_t *p, unsigned engine, unsigned x, unsigned y, uint32_t src_line, uint32_t dst_line,
                uint32_t rows, unsigned remote_sem, uint32_t remote_value, unsigned local_sem, uint32_t local_value);
/* The fw_rdma* commands after this land in core `core` of the destination chip (its VMEM, its
 * semaphores; docs/isa.md, "Cores"): 0 until a program says. A kernel built for core c of every
 * chip (a collective among the chips' cores c) selects c; an RDMA to the chip's own (x, y) and
 * the other core hands lines from one core to the other. */
void fw_rdma_core(fw_prog_t *p, unsigned core);

/* The core's MXUs are independent units, each with its weights and accumulator (docs/isa.md,
 * "MXUs"): the fw_mxu_* commands after this name MXU `mxu` (0 until a program says). */
void fw_mxu_select(fw_prog_t *p, unsigned mxu);
void fw_mxu_load(fw_prog_t *p, uint32_t line);
/* The tile transposed: line line + j holds weight column j (R bf16), so a GEMM against B^T
 * needs no transposed copy of B; as fast as a plain load (square MXUs: every chip). */
void fw_mxu_load_transposed(fw_prog_t *p, uint32_t line);
void fw_mxu_matmul(fw_prog_t *p, uint32_t line, uint32_t rows, uint32_t acc_row, bool accumulate);
void fw_mxu_store(fw_prog_t *p, uint32_t acc_row, uint32_t rows, uint32_t line);

/* Vector unit: `rows` lines, dst[i] = op(a[i], b[i]) lane by lane (an ISA_VEC_ operation,
 * docs/isa.md; scalar_bits for ISA_VEC_SCALE). */
void fw_vec(fw_prog_t *p, isa_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line, uint32_t rows,
            uint32_t scalar_bits);

/* fw_vec with b_repeat: dst[i] = op(a[i], b) with b the one line b_line for every row (a bias,
 * LayerNorm's gamma or beta broadcast over rows). A binary operation only (ADD, SUB, MUL, MAX,
 * RELU_GRAD, AXPY): on any other the command stops the queue with error 1 (docs/isa.md). */
void fw_vec_bcast(fw_prog_t *p, isa_vec_op_t op, uint32_t a_line, uint32_t b_line, uint32_t dst_line, uint32_t rows,
                  uint32_t scalar_bits);

/* Appends a raw command, word for word (tests of the command processor's error paths). */
void fw_raw(fw_prog_t *p, const uint32_t words[ISA_CMD_WORDS]);
/* Appends commands first .. first + n - 1 of src (kernels that interleave two streams). */
void fw_prog_append(fw_prog_t *p, const fw_prog_t *src, size_t first, size_t n);

#endif
