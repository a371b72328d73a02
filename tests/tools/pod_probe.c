/*
 * pod_probe: a pod run the command line cannot ask for, printed so that one process and an MPI
 * job can be compared line for line (tests/test_pod_mpi.c): a packet dropped at a slice's edge
 * (its router then returns the dropped flits' credits one a cycle: a chip quiet but not still,
 * with nothing on any link, so a band must meet the others before stepping it), then traffic
 * inside the slice; then chip (0,1) sends a short transfer to (0,2) and waits for an answer, so
 * the last credits come back to it while it sleeps (another rank's, under MPI: they must still
 * wake it), before a long transfer that needs every credit. Prints each run's outcome, cycles and
 * report, and every chip's clock and last busy cycle. usage: pod_probe [THREADS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "system/dist.h"
#include "system/pod.h"

static void send_out_of_slice(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 1 && y == 0) fw_rdma(d, 2, 0, 0, 0, 3, 5, 1, ISA_SEM_NONE, 0);
}
static void send_in_slice(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 0 && y == 0) fw_rdma(d, 1, 3, 0, 0, 2, 5, 1, ISA_SEM_NONE, 0);
  if (x == 1 && y == 3) fw_sem_wait(d, 5, 2);
}

static void credits_to_a_sleeper(unsigned x, unsigned y, fw_prog_t *d) {
  if (x == 0 && y == 1) {
    fw_rdma(d, 0, 2, 0, 0, 2, 5, 1, ISA_SEM_NONE, 0);
    fw_sem_wait(d, 6, 1);
    fw_rdma(d, 0, 2, 0, 0, 60, 5, 1, ISA_SEM_NONE, 0);
  }
  if (x == 0 && y == 2) {
    fw_sem_wait(d, 5, 2);
    fw_rdma(d, 0, 1, 0, 0, 1, 6, 1, ISA_SEM_NONE, 0);
    fw_sem_wait(d, 5, 60);
  }
}

static int run(pod_t *p, void (*prog)(unsigned, unsigned, fw_prog_t *), const char *name) {
  for (unsigned y = 0; y < 4; y++)
    for (unsigned x = 0; x < 4; x++) {
      fw_prog_t d;
      fw_prog_init(&d);
      prog(x, y, &d);
      fw_halt(&d);
      char err[256];
      if (chip_load_program(pod_chip(p, x, y), ISA_QUEUE_DMA, d.words, d.count, err, sizeof err)) {
        fprintf(stderr, "pod_probe: %s\n", err);
        return -1;
      }
      fw_prog_free(&d);
    }
  uint64_t cycles;
  char report[1024];
  const int rc = pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report);
  int64_t clock[16] = {0}; /* a shell's clock is 0: the sum is the owner's */
  for (unsigned i = 0; i < 16; i++) clock[i] = (int64_t)chip_cycle(pod_chip(p, i % 4, i / 4));
  dist_sum_i64(clock, 16);
  printf("%s: rc %d, %llu cycles, report '%s'\n", name, rc, (unsigned long long)cycles, report);
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
  pod_config_t pc = {4, 4, 1, chip_config_default(4, 4), NULL, NULL, NULL, argc > 1 ? (unsigned)atoi(argv[1]) : 1};
  pc.chip.model = CHIP_MODEL_FAST;
  pod_t *p = pod_new(&pc, err, sizeof err);
  if (!p) {
    fprintf(stderr, "pod_probe: %s\n", err);
    dist_finalize();
    return 2;
  }
  if (dist_rank() > 0 && !freopen("/dev/null", "w", stdout)) return 1;
  pod_set_slice(p, 0, 0, 2, 4);
  pod_set_slice(p, 2, 0, 2, 4);
  int rc = run(p, send_out_of_slice, "out of the slice") || run(p, send_in_slice, "inside the slice") ||
           run(p, credits_to_a_sleeper, "credits back to a sleeping chip");
  pod_free(p);
  dist_finalize();
  return rc ? 1 : 0;
}
