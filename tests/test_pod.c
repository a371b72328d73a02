/*
 * Chips wired into a pod (csim/pod/pod.c): the pod's timeout report names the stuck chip,
 * queue and semaphore, and leaves the pod ready for the next programs; the local and remote
 * copy kernels (fw/kernels.c); slices whose routers drop and report packets addressed outside
 * them. Remote DMA itself is in test_rdma.c. Run per reset seed on the RTL and under every
 * model of MODELS (Makefile).
 */
#include <limits.h>
#include <string.h>

#include "chip_test.h"
#include "fw/kernels.h"
#include "util/rng.h"

TestSuite(pod, .timeout = 120);

Test(pod, stuck_pod_report_names_chip_queue_and_semaphore) {
  pod_t *p = test_pod(4, 2, 1, 0);
  fw_prog_t d;
  fw_prog_init(&d);
  fw_sem_wait(&d, 9, 1); /* nobody signals it */
  fw_halt(&d);
  test_load_once(pod_chip(p, 1, 0), ISA_QUEUE_DMA, &d);
  test_load_halt(pod_chip(p, 0, 0), ISA_QUEUE_DMA);
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 500, &cycles, report, sizeof report), -1);
  cr_assert(!strncmp(report, "timed out after 500 cycles: chip (1,0)", 38), "a timeout says so first: %s", report);
  cr_assert(strstr(report, "chip (1,0): DMA queue still at command 0 (SEM_WAIT on semaphore 9 for 1; it holds 0)"),
            "%s", report);
  cr_assert(strstr(report, "aborted"), "the run says what it did to the stuck queue: %s", report);
  /* the pod is ready for the next programs: a remote DMA from (0,0) that signals (1,0)'s
   * semaphore 9 runs once, and the stale wait does not take its signal */
  fw_prog_init(&d);
  fw_rdma(&d, 1, 0, 0, 100, 1, 9, 1, ISA_SEM_NONE, 0);
  fw_halt(&d);
  test_load_once(pod_chip(p, 0, 0), ISA_QUEUE_DMA, &d);
  test_load_halt(pod_chip(p, 1, 0), ISA_QUEUE_DMA);
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 5000, &cycles, report, sizeof report), 0, "%s", report);
  cr_assert_eq(chip_sem(pod_chip(p, 1, 0), 9), 1, "the signal arrived and nothing took it");
  pod_free(p);
}

/* ------------------------------------------------------------------ kernels */

Test(pod, local_and_remote_copy_kernels) {
  pod_t *p = test_pod(4, 2, 1, 1);
  chip_t *c0 = pod_chip(p, 0, 0), *c1 = pod_chip(p, 1, 0);
  const chip_geometry_t *g = chip_geometry(c0);
  const uint32_t bytes = 4 * 16 * 700 + 12; /* several chunks and a partial line */
  static uint8_t data[4 * 16 * 700 + 12], back[4 * 16 * 700 + 12];
  rng_t rng;
  rng_seed(&rng, test_seed() + 3);
  for (uint32_t i = 0; i < bytes; i++) data[i] = (uint8_t)rng_next(&rng);
  cr_assert_eq(chip_hbm_write(c0, 0, data, bytes), 0);
  fw_prog_t local, snd, rcv;
  fw_prog_init(&local);
  fw_prog_init(&snd);
  fw_prog_init(&rcv);
  char err[256];
  /* chip 0: copy locally to 200000, then send to chip 1 at 300000 */
  cr_assert_eq(fw_copy_local(g, 0, 200000, bytes, &local, err, sizeof err), 0, "%s", err);
  local.count--; /* drop its HALT: the remote copy follows in the same program */
  cr_assert_eq(fw_copy_remote(g, 0, 0, 1, 0, 200000, 300000, bytes, &snd, &rcv, err, sizeof err), 0, "%s", err);
  for (size_t i = 0; i < snd.count; i++) fw_raw(&local, snd.words + i * ISA_CMD_WORDS);
  fw_prog_free(&snd);
  test_load_once(c0, ISA_QUEUE_DMA, &local);
  test_load_once(c1, ISA_QUEUE_DMA, &rcv);
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 2000000, &cycles, report, sizeof report), 0, "%s", report);
  cr_assert_eq(chip_hbm_read(c0, 200000, back, bytes), 0);
  cr_assert_eq(memcmp(back, data, bytes), 0, "local copy differs");
  cr_assert_eq(chip_hbm_read(c1, 300000, back, bytes), 0);
  cr_assert_eq(memcmp(back, data, bytes), 0, "remote copy differs");
  for (unsigned s = 0; s < 32; s++) {
    cr_assert_eq(chip_sem(c0, s), 0, "chip 0 semaphore %u", s);
    cr_assert_eq(chip_sem(c1, s), 0, "chip 1 semaphore %u", s);
  }
  pod_free(p);
}

Test(pod, slice_routers_drop_and_report_packets_leaving_the_slice) {
  pod_t *p = test_pod(4, 4, 4, 1);
  cr_assert_eq(pod_set_slice(p, 0, 0, 2, 4), 0);
  cr_assert_eq(pod_set_slice(p, 2, 0, 2, 4), 0);
  cr_assert_eq(pod_set_slice(p, 3, 0, 2, 4), -1, "a slice past the pod's edge");
  cr_assert_eq(pod_set_slice(p, UINT_MAX, 0, 2, 4), -1, "x0 + w wraps to 1");
  cr_assert_eq(pod_set_slice(p, 0, UINT_MAX - 2, 2, 4), -1, "y0 + h wraps to 1");
  cr_assert_eq(pod_set_slice(p, 1, 0, UINT_MAX, 4), -1, "w wraps");
  /* chip (1,0) of the left slice sends 3 lines to (2,0), in the right slice */
  for (unsigned y = 0; y < 4; y++)
    for (unsigned x = 0; x < 4; x++) {
      fw_prog_t d;
      fw_prog_init(&d);
      if (x == 1 && y == 0) fw_rdma(&d, 2, 0, 0, 0, 3, 5, 1, ISA_SEM_NONE, 0);
      fw_halt(&d);
      test_load_once(pod_chip(p, x, y), ISA_QUEUE_DMA, &d);
    }
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), -1, "the run must fail");
  cr_assert(strstr(report, "chip (1,0): its router dropped 1 packet(s) addressed outside its slice") != NULL, "%s",
            report); /* the 3 lines travel as one packet */
  cr_assert_eq(chip_slice_drops(pod_chip(p, 1, 0)), 1);
  cr_assert_eq(chip_sem(pod_chip(p, 2, 0), 5), 0, "nothing arrived in the other slice");
  /* inside the slice, traffic flows: (0,0) -> (1,3) goes round Y (the slice spans Y) */
  for (unsigned y = 0; y < 4; y++)
    for (unsigned x = 0; x < 4; x++) {
      fw_prog_t d;
      fw_prog_init(&d);
      if (x == 0 && y == 0) fw_rdma(&d, 1, 3, 0, 0, 2, 5, 1, ISA_SEM_NONE, 0);
      if (x == 1 && y == 3) fw_sem_wait(&d, 5, 2);
      fw_halt(&d);
      test_load_once(pod_chip(p, x, y), ISA_QUEUE_DMA, &d);
    }
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), 0, "%s", report);
  pod_free(p);
}
