/*
 * The chip as a whole (rtl/chip_top.sv through csim/chip/chip.c; docs/isa.md, "Semaphores" and
 * "Host control"): its two queues ordered by semaphores, two waits on one semaphore in one
 * cycle granted in order, a wait nobody satisfies timing out with a report that names it, and
 * the host's control between runs (a timeout aborts, a running queue cannot be loaded over,
 * abort and reset). Its units have suites of their own: test_cmdq.c, test_dma.c, test_vec.c,
 * test_gemm.c (the MXU through the firmware GEMM), test_chip_mxus.c, test_chip_cores.c. Run
 * per reset seed on the RTL and under every model of MODELS (Makefile).
 */
#include <string.h>

#include "chip_test.h"

TestSuite(chip, .timeout = 300);

Test(chip, semaphores_order_the_queues) {
  /* The compute queue waits for 2 on semaphore 5; the DMA queue adds 1, moves data (slow
   * HBM), adds 1 more. Both halt; the wait consumed both signals. */
  chip_t *c = test_chip(4, 4, 200);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_sem_wait(&cq, 5, 2);
  fw_sem_signal(&cq, 6, 3);
  fw_halt(&cq);
  fw_sem_signal(&dq, 5, 1);
  fw_dma_hbm_to_vmem(&dq, 5, 1, 0, 16, 0, 4, 16);
  fw_sem_wait(&dq, 6, 3);
  fw_halt(&dq);
  chip_status_t st;
  test_run_programs(c, &cq, &dq, 10000, &st);
  cr_assert(st.halted[0] && st.halted[1]);
  cr_assert_eq(chip_sem(c, 5), 0);
  cr_assert_eq(chip_sem(c, 6), 0);
  /* the wait could only pass after the DMA: latency 200 */
  cr_assert_gt(st.cycles, 200);
  fw_prog_free(&cq);
  fw_prog_free(&dq);
  chip_free(c);
}

/* Both queues wait on one semaphore in the same cycle: the compute queue's wait is granted
 * against the value first and the DMA queue's against what it leaves (docs/isa.md), so with 4
 * on the semaphore and waits for 3 and 2 only the first passes, and 1 is left. */
Test(chip, waits_on_one_semaphore_in_one_cycle_are_granted_in_order) {
  chip_t *c = test_chip(4, 16, 5);
  fw_prog_t cq, dq;
  fw_prog_init(&cq);
  fw_prog_init(&dq);
  fw_sem_signal(&cq, 5, 4);  /* a release fence: the 4 lands while both queues wait */
  fw_sem_wait(&cq, 5, 3);
  fw_halt(&cq);
  fw_sem_wait(&dq, 5, 2);
  fw_halt(&dq);
  test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
  test_load_once(c, ISA_QUEUE_DMA, &dq);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_ALL, 500, &st), -1);
  cr_assert(st.halted[0], "the compute queue's wait passed: %s", st.report);
  cr_assert(strstr(st.report, "DMA queue still at command 0 (SEM_WAIT on semaphore 5 for 2; it holds 1)"), "%s",
            st.report);
  cr_assert_eq(chip_sem(c, 5), 1);
  chip_free(c);
}

Test(chip, unsatisfiable_wait_times_out_with_a_report) {
  chip_t *c = test_chip(4, 16, 5);
  fw_prog_t cq;
  fw_prog_init(&cq);
  fw_sem_signal(&cq, 7, 1);
  fw_sem_wait(&cq, 7, 2);
  fw_halt(&cq);
  test_load_once(c, ISA_QUEUE_COMPUTE, &cq);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 2000, &st), -1);
  cr_assert(st.timed_out);
  cr_assert(!strncmp(st.report, "timed out after 2000 cycles: ", 29), "a timeout says so first: %s", st.report);
  cr_assert(strstr(st.report, "compute queue still at command 1 (SEM_WAIT on semaphore 7 for 2; it holds 1)"), "%s",
            st.report);
  chip_free(c);
}

/* Defect found by a hostile tester: a queue left running by a timeout went on running, and
 * the next program loaded over it ran twice ([SEM_SIGNAL s26 +6; HALT] left s26 at 12). A
 * timeout now aborts the queues (the report says so), and loading into a running queue is
 * refused. */
Test(chip, a_timeout_leaves_the_chip_ready_for_the_next_program) {
  chip_t *c = test_chip(4, 16, 5);
  char err[256];
  chip_status_t st;
  fw_prog_t stuck, next;
  fw_prog_init(&stuck);
  fw_prog_init(&next);
  fw_sem_wait(&stuck, 26, 1);  /* nobody signals 26 */
  fw_halt(&stuck);
  fw_sem_signal(&next, 26, 6);
  fw_halt(&next);
  test_load_once(c, ISA_QUEUE_COMPUTE, &stuck);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 500, &st), -1);
  cr_assert(st.timed_out);
  cr_assert(strstr(st.report, "SEM_WAIT on semaphore 26 for 1") && strstr(st.report, "aborted"), "%s", st.report);
  test_load(c, ISA_QUEUE_COMPUTE, &next);
  test_run(c, ISA_QMASK_COMPUTE, 500, &st);
  cr_assert_eq(chip_sem(c, 26), 6, "the second program ran once, the first not at all");
  /* a queue running outside chip_run cannot be loaded over; chip_abort stops it */
  fw_prog_t waits;
  fw_prog_init(&waits);
  fw_sem_wait(&waits, 25, 1);
  fw_halt(&waits);
  test_load_once(c, ISA_QUEUE_COMPUTE, &waits);
  chip_begin(c, ISA_QMASK_COMPUTE);
  for (int i = 0; i < 10; i++) chip_tick(c);
  cr_assert_eq(chip_load_program(c, ISA_QUEUE_COMPUTE, next.words, next.count, err, sizeof err), -1);
  cr_assert(strstr(err, "still running"), "%s", err);
  /* a run of the other queue that times out names both (it used to name only its own) */
  fw_prog_t dma_waits;
  fw_prog_init(&dma_waits);
  fw_sem_wait(&dma_waits, 24, 1);
  fw_halt(&dma_waits);
  test_load_once(c, ISA_QUEUE_DMA, &dma_waits);
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 200, &st), -1);
  cr_assert(strstr(st.report, "compute queue still at command 0 (SEM_WAIT on semaphore 25") &&
                strstr(st.report, "DMA queue still at command 0 (SEM_WAIT on semaphore 24"),
            "%s", st.report);
  cr_assert_eq(chip_abort(c, ISA_QMASK_COMPUTE, 1000), 0);
  cr_assert_eq(chip_finish(c, false, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_ABORTED, "%s", st.report);
  cr_assert(strstr(st.report, "stopped by the host"), "%s", st.report);
  /* and a reset leaves the memories alone */
  test_load(c, ISA_QUEUE_COMPUTE, &next);
  chip_reset(c);
  cr_assert_eq(chip_sem(c, 26), 0, "reset clears the semaphores");
  test_run(c, ISA_QMASK_COMPUTE, 500, &st);
  cr_assert_eq(chip_sem(c, 26), 6, "the program loaded before the reset is still there");
  fw_prog_free(&next);
  chip_free(c);
}
