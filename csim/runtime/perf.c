/* perf: the performance arithmetic (perf.h). */
#include "runtime/perf.h"

#include "fw/gemm.h"
#include "runtime/mxu_driver.h"

static double units(const perf_chip_t *p) {
  return (double)(p->mxus ? p->mxus : 1) * (double)(p->cores ? p->cores : 1);
}

double perf_macs_per_cycle(const perf_chip_t *p) { return (double)p->rows * p->cols * units(p); }

double perf_gemm_ideal_cycles(const perf_chip_t *p, uint64_t m, uint64_t k, uint64_t n) {
  return (double)m * (double)k * (double)n / perf_macs_per_cycle(p);
}

double perf_peak_flops(const perf_chip_t *p) { return 2.0 * perf_macs_per_cycle(p) * p->clock_mhz * 1e6; }

double perf_flops(const perf_chip_t *p, double macs, uint64_t cycles) {
  return 2.0 * macs / ((double)cycles / (p->clock_mhz * 1e6));
}

uint64_t perf_gemm_share_contract_cycles(const perf_chip_t *p, uint64_t m, uint64_t k, uint64_t n) {
  const unsigned mxus = p->mxus ? p->mxus : 1, cores = p->cores ? p->cores : 1;
  const uint64_t tiles_n = (n + p->cols - 1) / p->cols, share = (tiles_n + mxus - 1) / mxus;
  const uint64_t rows = cores == 1 ? m : fw_gemm_max_core_rows((uint32_t)m, cores);
  return mxu_contract_cycles(p->rows, p->cols, rows, k, mxus == 1 ? n : share * p->cols);
}

double perf_mlp_model_macs(unsigned batch, unsigned features, unsigned hidden, unsigned classes) {
  const double F = features, H = hidden, K = classes;
  return (double)batch * (2 * F * H + 3 * H * H + 3 * H * K);
}
