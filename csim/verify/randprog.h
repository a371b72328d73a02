/*
 * randprog: random command programs for a chip or a pod (docs/robustness.md), the
 * generator half of the random-program verifier (randprog_run.h judges the runs). It is
 * a library so that later models (fast C models of the chip) can be held to the RTL with
 * the same programs.
 *
 * A VALID program pair per chip uses every opcode with random shapes and addresses inside
 * a window of VMEM, semaphore hand-overs between the queues (and, in a pod, remote DMA
 * between chips), and cannot deadlock: every hand-over is a signal in one queue and a
 * wait in another, appended in one global order, and each semaphore is waited on by one
 * queue only. It reads only memory it initialised (the window is loaded from HBM first,
 * the MXU weights and accumulator rows are written before they are read) and has no data
 * race (the window is split into zones, randprog_layout_t), so its results do not depend
 * on reset values, on what ran before, or on timing: the runner compares them between
 * pods. Every queue halts and every semaphore ends at zero. A quarter of the sets send
 * no RDMA, so the routers stay idle and their cycles can be compared too (randprog_run.h).
 * An INVALID program is a valid one with one command replaced by one that must stop its
 * queue with a known error (each error code in turn) at that command; the others may
 * then wait for ever (a timeout naming their semaphores).
 * A MUTATED program is a valid one with a few random changes (bits flipped, fields set to
 * edge values, commands swapped, dropped or repeated); what it does is judged command by
 * command against the golden checker (golden/cmd_golden.h).
 */
#ifndef RANDPROG_H
#define RANDPROG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fw/hal.h"

typedef enum { RANDPROG_VALID, RANDPROG_INVALID, RANDPROG_MUTATED, RANDPROG_KINDS } randprog_kind_t;

/* What the programs are for. */
typedef struct {
  unsigned pod_x, pod_y;     /* 1 x 1: a lone chip (remote DMA to itself) */
  chip_geometry_t geo;
  uint64_t hbm_bytes;        /* at least randprog_hbm_bytes() */
  unsigned hbm_latency;      /* cycles (for the programs' cycle bound) */
  unsigned body_commands;    /* at most this many random commands per chip (besides the fixed ones) */
} randprog_target_t;

/* The memory the programs use: HBM [0, in_bytes) is the input the host fills, the
 * program's results go to [out_addr, out_addr + out_bytes) (the window's final contents
 * at out_addr, DMA results after it); VMEM lines [0, window_lines). */
typedef struct {
  uint32_t window_lines, line_bytes;
  /* the window's zones: the compute queue's lines (it alone reads and writes them), the
   * DMA queue's (its DMAs and the RDMAs it sends), and the remote zone (each line written
   * by at most one RDMA): no two unordered accesses to a line, one of them a write */
  uint32_t compute_lines, dma_lines, remote_lines;
  uint64_t in_bytes, out_addr, out_bytes;
} randprog_layout_t;

randprog_layout_t randprog_layout(const chip_geometry_t *g);
uint64_t randprog_hbm_bytes(const chip_geometry_t *g);

typedef struct {
  randprog_kind_t kind;
  uint64_t seed;
  unsigned chips;                         /* pod_x * pod_y; chip i is at (i % pod_x, i / pod_x) */
  fw_prog_t (*prog)[2];                   /* [chip][queue] (ISA_QUEUE_COMPUTE, ISA_QUEUE_DMA) */
  /* INVALID: this queue must stop with this error at this command */
  unsigned bad_chip, bad_queue, bad_pc, bad_error;
  uint64_t max_cycles;                    /* more than the valid program can take */
  char what[160];                         /* INVALID, MUTATED: what was changed */
} randprog_t;

/* Generates a program set of `kind` from `seed` (the same seed, the same programs). 0, or
 * -1 when out of memory or the target is unusable (message in err). */
int randprog_generate(const randprog_target_t *t, randprog_kind_t kind, uint64_t seed, randprog_t *p, char *err,
                      size_t errlen);
void randprog_free(randprog_t *p);

const char *randprog_kind_name(randprog_kind_t k);

/* Prints every chip's programs, one command a line with its fields by name (isa.def). */
void randprog_print(FILE *out, const randprog_t *p);

#endif
