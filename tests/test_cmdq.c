/*
 * The chip's command queues and command processor (rtl/chip_cmdq.sv; docs/isa.md, "Errors"
 * and "Host control"): every error path stops its queue at the command, before it runs, with
 * the documented code; an error on every opcode names it; every reserved bit of every command
 * is refused; a program that fills the command memory without a HALT, or ends without one, is
 * error END at the right command and runs nothing stale. Run per reset seed on the RTL and
 * under every model of MODELS (Makefile).
 */
#include <stdio.h>
#include <string.h>

#include "chip_test.h"

TestSuite(cmdq, .timeout = 300);

/* Runs the one-command program [w; HALT] on `queue` of chip c (reused across runs) and
 * returns the queue's error code; the report goes to `report`. An error must stop the queue
 * at the command, before it runs. */
static unsigned run_error_on(chip_t *c, int queue, const uint32_t w[ISA_CMD_WORDS], char *report, size_t len) {
  fw_prog_t p;
  fw_prog_init(&p);
  fw_raw(&p, w);
  fw_halt(&p);
  test_load_once(c, queue, &p);
  chip_status_t st;
  int rc = chip_run(c, ISA_QMASK(queue), 1000, &st);
  snprintf(report, len, "%s", st.report);
  const unsigned code = st.error[queue];
  cr_assert(code == 0 || (rc == -1 && !st.running[queue] && !st.halted[queue] && st.pc[queue] == 0),
            "an error stops the queue at the command: %s", st.report);
  return code;
}

/* The same on a chip of its own. */
static unsigned run_error(int queue, const uint32_t w[ISA_CMD_WORDS], char *report, size_t len) {
  chip_t *c = test_chip(4, 16, 5);
  unsigned code = run_error_on(c, queue, w, report, len);
  chip_free(c);
  return code;
}

Test(cmdq, every_error_path_stops_the_queue) {
  /* 4x4 chip: VMEM of V lines of 16 bytes, accumulator 4096 rows, HBM 4 MiB. */
  chip_geometry_t geo;
  cr_assert_eq(chip_top_geometry(4, 4, 1, 1, &geo), 0);
  const uint32_t V = geo.vmem_lines;
  struct {
    int queue;
    uint32_t w[8];
    unsigned code;
    const char *what;
  } cases[] = {
      {0, {0x77}, 1, "illegal opcode"},
      {1, {0x00}, 1, "zero command"},
      {0, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 16}, 2, "DMA in the compute queue"},
      {1, {0x20, 0, 0}, 2, "MXU_LOAD in the DMA queue"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, V - 6, 7, 16}, 3, "DMA past the end of VMEM"},
      {1, {0x10 | 1u << 8, 0, 2, V - 1, 0, 0, 2, 4}, 3, "VMEM->VMEM destination past the end"},
      {1, {0x10 | 1u << 8, 0, 0, (1u << 22) - 8, 16, 0, 1, 16}, 4, "DMA past the end of HBM"},
      {1, {0x10 | 1u << 8, 0, 1, 0, 0x40000000u, 0, 3, 16}, 4, "stride past the end of HBM"},
      {0, {0x21, 0, 0, 10, 4090, 0}, 5, "MATMUL past the accumulator"},
      {0, {0x22, 0, 4095, 2, 0}, 5, "STORE past the accumulator"},
      {0, {0x21, 0, V - 6, 10, 0, 0}, 3, "MATMUL activations past VMEM"},
      {0, {0x20, 0, V - 3}, 3, "LOAD weights past VMEM"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 0, 16}, 6, "zero rows"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 6}, 6, "bytes not a multiple of 4"},
      {1, {0x10 | 1u << 8, 0, 0, 0, 16, 0, 1, 20}, 6, "bytes beyond a line"},
      {1, {0x10 | 1u << 8, 0, ISA_NUM_DMA_KINDS, 0, 16, 0, 1, 16}, 6, "unknown DMA kind"},
      {0, {0x21, 0, 0, 0, 0, 0}, 6, "MATMUL of zero rows"},
      {0, {0x03 | 40u << 8, 1}, 7, "semaphore out of range"},
      {0, {0x30, ISA_NUM_VEC_OPS, 0, 0, 0, 1}, 1, "unknown vector operation"},
      {0, {0x30, 0, 0, 0, 0, 0}, 6, "vector op of zero rows"},
      {0, {0x30, 0, V - 1, 0, 0, 2}, 3, "vector operand past VMEM"},
      {0, {0x30, 3, 0, V - 1, 0, 2}, 3, "vector operand b of a binary op (MAX) past VMEM"},
      {0, {0x30, 0, 0, 0, V - 1, 2}, 3, "vector destination past VMEM"},
      {1, {0x30, 0, 0, 0, 0, 1}, 2, "vector op in the DMA queue"},
      {0, {0x40 | 255u << 8, 0, 0, 0, 0, 1, 255}, 2, "remote DMA in the compute queue"},
      {1, {0x40 | 255u << 8, 0, 1, 0, 0, 1, 255}, 8, "remote DMA to a chip outside a lone chip's pod"},
      {1, {0x40 | 255u << 8, 0, 1u << 18, 0, 0, 1, 255}, 8, "remote DMA with reserved bits of word 2 set"},
      {1, {0x40 | 255u << 8, 0, 0, 0, 0, 0, 255}, 6, "remote DMA of zero lines"},
      {1, {0x40 | 255u << 8, 0, 0, V - 1, 0, 2, 255}, 3, "remote DMA past the destination's VMEM"},
      {1, {0x40 | 40u << 8, 0, 0, 0, 0, 1, 255}, 7, "remote semaphore out of range"},
      {1, {0x10 | 40u << 8, 1, 0, 0, 16, 0, 1, 16}, 7, "DMA completion semaphore out of range"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char report[512];
    unsigned code = run_error(cases[i].queue, cases[i].w, report, sizeof report);
    cr_expect_eq(code, cases[i].code, "%s: error %u, expected %u (%s)", cases[i].what, code, cases[i].code, report);
    cr_expect(strstr(report, "stopped with error"), "%s: %s", cases[i].what, report);
  }
}

/* Every opcode of the table can be refused, and the report names it: word 0's bits 31:16
 * are reserved in every command, so setting one makes any command illegal (error 1). An
 * unknown opcode is reported as such. */
Test(cmdq, an_error_on_every_opcode_names_it) {
  chip_t *c = test_chip(4, 16, 5);
  static const struct {
    uint32_t op;
    const char *name;
  } ops[] = {{0x01, "HALT"}, {0x02, "FENCE"}, {0x03, "SEM_WAIT"}, {0x04, "SEM_SIGNAL"}, {0x10, "DMA"},
             {0x20, "MXU_LOAD"}, {0x21, "MXU_MATMUL"}, {0x22, "MXU_STORE"}, {0x30, "VEC"}, {0x40, "RDMA"}};
  unsigned named = 0;
  for (uint32_t op = 0; op < 256; op++) {
    if (!isa_opcode_name(op)) continue;
    named++;
    const int queue = isa_op_allowed(op, ISA_QUEUE_COMPUTE) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
    uint32_t w[ISA_CMD_WORDS] = {op | 1u << 31};
    char report[512], want[64];
    cr_expect_eq(run_error_on(c, queue, w, report, sizeof report), ISA_ERR_OPCODE, "0x%02x: %s", op, report);
    snprintf(want, sizeof want, "at command 0 (%s)", isa_opcode_name(op));
    cr_expect(strstr(report, want), "opcode 0x%02x: the report does not say '%s': %s", op, want, report);
  }
  /* the table's names are the documented ones (docs/isa.md) */
  cr_assert_eq(named, sizeof ops / sizeof ops[0], "%u opcodes in the table", named);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    cr_expect_str_eq(isa_opcode_name(ops[i].op), ops[i].name);
  char report[512];
  const uint32_t bad[ISA_CMD_WORDS] = {0x77};
  cr_expect_eq(run_error_on(c, ISA_QUEUE_COMPUTE, bad, report, sizeof report), ISA_ERR_OPCODE);
  cr_expect(strstr(report, "error 1 (illegal command") && strstr(report, "(not an opcode)"), "%s", report);
  chip_free(c);
}

/* The command processor refuses a command with any reserved bit set (every bit its fields do
 * not name, per fw/isa.def), and accepts the same command with the bit clear. Every reserved
 * bit of every command, one at a time. */
Test(cmdq, every_reserved_bit_is_refused) {
  chip_t *c = test_chip(4, 16, 5);
  /* a valid command of each opcode (HALT and FENCE have no operands) */
  fw_prog_t valid;
  fw_prog_init(&valid);
  fw_sem_wait(&valid, 3, 0);
  fw_sem_signal(&valid, 3, 0);
  fw_dma_hbm_to_vmem(&valid, ISA_SEM_NONE, 0, 0, 16, 0, 1, 16);
  fw_mxu_load(&valid, 0);
  fw_mxu_matmul(&valid, 0, 1, 0, false);
  fw_mxu_store(&valid, 0, 1, 8);
  fw_vec(&valid, ISA_VEC_ADD, 0, 1, 2, 1, 0);
  fw_rdma(&valid, 0, 0, 0, 8, 1, ISA_SEM_NONE, 0, ISA_SEM_NONE, 0);
  fw_halt(&valid);
  fw_fence(&valid);
  cr_assert(fw_prog_ok(&valid));
  unsigned checked = 0;
  for (size_t i = 0; i < valid.count; i++) {
    const uint32_t *cmd = valid.words + i * ISA_CMD_WORDS, op = isa_opcode(cmd);
    const int queue = isa_op_allowed(op, ISA_QUEUE_COMPUTE) ? ISA_QUEUE_COMPUTE : ISA_QUEUE_DMA;
    char report[512];
    if (op != ISA_OP_HALT)  /* HALT stops the program itself: nothing to report */
      cr_assert_eq(run_error_on(c, queue, cmd, report, sizeof report), 0, "%s as built: %s", isa_opcode_name(op), report);
    for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
      for (unsigned bit = 0; bit < 32; bit++) {
        if (isa_defined_bits(op, w) >> bit & 1) continue;
        uint32_t bad[ISA_CMD_WORDS];
        memcpy(bad, cmd, sizeof bad);
        bad[w] |= 1u << bit;
        cr_expect_eq(run_error_on(c, queue, bad, report, sizeof report), ISA_ERR_OPCODE,
                     "%s with reserved bit %u of word %u set: %s", isa_opcode_name(op), bit, w, report);
        checked++;
      }
  }
  cr_assert_geq(checked, 1490, "reserved bits tried: %u", checked);  /* 1494 since the MXU fields */
  fw_prog_free(&valid);
  chip_free(c);
}

Test(cmdq, program_without_halt_runs_off_the_end) {
  chip_t *c = test_chip(4, 16, 5);
  const chip_geometry_t *g = chip_geometry(c);
  fw_prog_t p;
  fw_prog_init(&p);
  for (unsigned i = 0; i < g->queue_depth; i++) fw_sem_signal(&p, 1, 1);
  test_load(c, ISA_QUEUE_DMA, &p);
  chip_status_t st;
  cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 100000, &st), -1);
  cr_assert_eq(st.error[1], ISA_ERR_END, "ran off the end of the command memory: %s", st.report);
  cr_assert_eq(chip_sem(c, 1), g->queue_depth, "every command ran once");
  fw_sem_signal(&p, 1, 1);
  char err[256];
  cr_assert_eq(chip_load_program(c, 1, p.words, p.count, err, sizeof err), -1);
  cr_assert(strstr(err, "does not fit"), "%s", err);
  fw_prog_free(&p);
  chip_free(c);
}

/* Defect found by a hostile tester: a program without a final HALT ran on into whatever the
 * command memory held past it (stale commands, or random bits after reset). The queue knows
 * the program's length: running past it is error END at the command after the last. */
Test(cmdq, running_past_the_program_is_an_error) {
  chip_t *c = test_chip(4, 16, 5);
  char err[256];
  chip_status_t st;
  /* a longer program first, so stale commands lie past the short one */
  fw_prog_t longer;
  fw_prog_init(&longer);
  for (int i = 0; i < 10; i++) fw_sem_signal(&longer, 2, 1);
  fw_halt(&longer);
  test_load_once(c, ISA_QUEUE_COMPUTE, &longer);
  test_run(c, ISA_QMASK_COMPUTE, 1000, &st);
  cr_assert_eq(chip_sem(c, 2), 10);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_sem_signal(&p, 3, 1);
  fw_sem_signal(&p, 3, 1);
  test_load_once(c, ISA_QUEUE_COMPUTE, &p);
  cr_assert_eq(chip_run(c, ISA_QMASK_COMPUTE, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_END, "%s", st.report);
  cr_assert_eq(st.pc[ISA_QUEUE_COMPUTE], 2, "stopped at the command after the last");
  cr_assert(strstr(st.report, "ran past the end of the program"), "%s", st.report);
  cr_assert_eq(chip_sem(c, 3), 2, "the program ran once");
  cr_assert_eq(chip_sem(c, 2), 10, "none of the stale commands ran");
  /* a queue never loaded: error END at once */
  chip_t *fresh = test_chip(4, 16, 5);
  cr_assert_eq(chip_run(fresh, ISA_QMASK_DMA, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_DMA], ISA_ERR_END, "%s", st.report);
  /* an empty program, given as NULL (the copy of it passed NULL to memcpy: found by fuzzing
   * under UBSan), is loaded and stops at once too */
  cr_assert_eq(chip_load_program(fresh, ISA_QUEUE_COMPUTE, NULL, 0, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chip_run(fresh, ISA_QMASK_COMPUTE, 1000, &st), -1);
  cr_assert_eq(st.error[ISA_QUEUE_COMPUTE], ISA_ERR_END, "%s", st.report);
  chip_free(fresh);
  chip_free(c);
}
