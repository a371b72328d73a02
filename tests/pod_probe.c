/*
 * pod_probe: the pod runs of tests/pod_scenarios.h, printed so that one process and an
 * MPI job can be compared line for line (tests/test_pod_mpi.c): each run's outcome, cycles and
 * report, and every chip's clock, last busy cycle and semaphore 5.
 * usage: pod_probe [THREADS]   (under mpirun or not)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod_scenarios.h"
#include "util/dist.h"

static int run(pod_t *p, const pod_scenario_t *s) {
  char err[256];
  if (pod_scenario_load(p, s, err, sizeof err)) {
    fprintf(stderr, "pod_probe: %s\n", err);
    return -1;
  }
  uint64_t cycles;
  char report[1024];
  const int rc = pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report);
  int64_t clock[16] = {0}; /* a shell's clock is 0: the sum is the owner's */
  for (unsigned i = 0; i < 16; i++) clock[i] = (int64_t)chip_cycle(pod_chip(p, i % 4, i / 4));
  dist_sum_i64(clock, 16);
  printf("%s: rc %d, %llu cycles, report '%s'\n", s->name, rc, (unsigned long long)cycles, report);
  for (unsigned i = 0; i < 16; i++)
    printf("  chip %u: clock %lld, busy until %llu, semaphore 5 %u\n", i, (long long)clock[i],
           (unsigned long long)pod_busy_until(p, i % 4, i / 4), chip_sem(pod_chip(p, i % 4, i / 4), 5));
  return 0;
}

int main(int argc, char **argv) {
  char err[256];
  if (dist_init(&argc, &argv, err, sizeof err)) {
    fprintf(stderr, "pod_probe: %s\n", err);
    return 2;
  }
  pod_config_t pc = {.size_x = 4, .size_y = 4, .link_latency = 1, .chip = chip_config_default(4, 4), .threads = argc > 1 ? (unsigned)atoi(argv[1]) : 1};
  pc.chip.model = CHIP_MODEL_FAST;
  pod_t *p = pod_new(&pc, err, sizeof err);
  if (!p) {
    fprintf(stderr, "pod_probe: %s\n", err);
    dist_finalize(2);
    return 2;
  }
  if (argc > 1 && strcmp(argv[1], "fail-alone") == 0) {
    /* rank 1 fails where the others go on into a shared chip operation (an HBM write to a chip
     * rank 1 owns, answered by it): the ranks must not wait for ever (dist_finalize) */
    if (dist_rank() == 1) {
      fprintf(stderr, "pod_probe: rank 1 fails alone\n");
      dist_finalize(1);
      return 1;
    }
    uint32_t v = 0;
    chip_hbm_write(pod_chip(p, 0, 3), 0, &v, sizeof v);
    fprintf(stderr, "pod_probe: the write came back\n");
    dist_finalize(1);
    return 1;
  }
  if (dist_rank() > 0 && !freopen("/dev/null", "w", stdout)) return 1;
  int rc = pod_scenario_slices(p);
  for (unsigned k = 0; k < POD_SCENARIOS && !rc; k++) rc = run(p, &pod_scenarios[k]);
  pod_free(p);
  dist_finalize(rc ? 1 : 0);
  return rc ? 1 : 0;
}
