/*
 * perf: the performance arithmetic every report shares, in one place: a chip's MXU work a
 * cycle, the ideal cycles of a GEMM on it, peak and sustained FLOPS, and the GEMM's timing
 * contract on a chip of several MXUs and cores (docs/timing.md), from the kernels' own work
 * split (fw_gemm_core_rows). Commands, the SystemC host and tests report these; none
 * re-derives them.
 */
#ifndef RUNTIME_PERF_H
#define RUNTIME_PERF_H

#include <stdint.h>

/* What the arithmetic needs of a chip (0 MXUs or cores count as 1). */
typedef struct {
  unsigned rows, cols, mxus, cores;
  double clock_mhz;
} perf_chip_t;

/* MACs the chip's MXUs do a cycle at full rate: rows * cols * MXUs * cores. */
double perf_macs_per_cycle(const perf_chip_t *p);
/* M*K*N / perf_macs_per_cycle: the cycles of a GEMM with every MXU busy every cycle. */
double perf_gemm_ideal_cycles(const perf_chip_t *p, uint64_t m, uint64_t k, uint64_t n);
/* 2 * MACs a second at full rate. */
double perf_peak_flops(const perf_chip_t *p);
/* 2 * macs over `cycles` at the clock: FLOPS sustained. */
double perf_flops(const perf_chip_t *p, double macs, uint64_t cycles);
/* The MXU-alone timing contract of the largest share of the work one MXU takes in a GEMM on
 * the chip: its core's rows (fw_gemm_max_core_rows) and, with X MXUs, every X-th column tile
 * (the first MXU's share): the floor a chip-level GEMM approaches. */
uint64_t perf_gemm_share_contract_cycles(const perf_chip_t *p, uint64_t m, uint64_t k, uint64_t n);
/* The work of one training step of the features-hidden-hidden-classes MLP (fw/train.h) once,
 * as the model sees it: the forward GEMMs, every layer's weight gradient and the input
 * gradients of layers 3 and 2 (the data needs none), for a batch. */
double perf_mlp_model_macs(unsigned batch, unsigned features, unsigned hidden, unsigned classes);

#endif
