/*
 * The command format's one source (fw/isa.def through fw/isa.h) against its documentation
 * (docs/isa.md: the opcode, VEC and error tables) and the HAL's encoding against the word
 * layout the documentation gives, written out here by hand. The RTL is generated from the
 * same table (build/gen/chip_isa_pkg.sv); tests/test_cmdq.c holds the RTL to it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw/hal.h"
#include "fw/isa.h"

TestSuite(isa, .timeout = 30);

/* The rows "| a | b | c |..." of the first table after the line starting with `heading`:
 * columns 0, 1 and 2 of each row into col0/col1/col2 (up to max rows; col2 may be NULL);
 * returns the row count. */
static unsigned table_rows(const char *heading, const char *header_row, char col0[][32], char col1[][512],
                           char col2[][32], unsigned max) {
  FILE *f = fopen("docs/isa.md", "r");
  cr_assert_not_null(f, "docs/isa.md (run from the project root)");
  char line[4096];
  int state = 0; /* 0 before the heading, 1 before the table, 2 in it */
  unsigned n = 0;
  while (fgets(line, sizeof line, f)) {
    if (state == 0 && !strncmp(line, heading, strlen(heading))) state = 1;
    else if (state == 1 && !strncmp(line, header_row, strlen(header_row))) state = 2;
    else if (state == 2) {
      if (line[0] != '|') break;
      if (!strncmp(line, "|---", 4)) continue;
      char *c0 = line + 1, *bar = strchr(c0, '|');
      cr_assert_not_null(bar);
      *bar = 0;
      char *c1 = bar + 1, *bar2 = strchr(c1, '|');
      cr_assert_not_null(bar2);
      *bar2 = 0;
      char *c2 = bar2 + 1, *bar3 = strchr(c2, '|');
      if (bar3) *bar3 = 0;
      while (*c2 == ' ') c2++;
      for (char *e = c2 + strlen(c2); e > c2 && e[-1] == ' ';) *--e = 0;
      if (col2) snprintf(col2[n], 32, "%s", c2);
      cr_assert_lt(n, max);
      /* trim */
      while (*c0 == ' ') c0++;
      while (*c1 == ' ') c1++;
      for (char *e = c0 + strlen(c0); e > c0 && e[-1] == ' ';) *--e = 0;
      for (char *e = c1 + strlen(c1); e > c1 && e[-1] == ' ';) *--e = 0;
      snprintf(col0[n], 32, "%s", c0);
      snprintf(col1[n], 512, "%s", c1);
      n++;
    }
  }
  fclose(f);
  cr_assert_gt(n, 0, "no table after '%s' in docs/isa.md", heading);
  return n;
}

Test(isa, opcode_table_matches_the_documentation) {
  char code[64][32], name[64][512], queue[64][32];
  unsigned n = table_rows("## Command format", "| opcode | name", code, name, queue, 64), in_table = 0;
  for (unsigned i = 0; i < n; i++) {
    uint32_t op = (uint32_t)strtoul(code[i], NULL, 16);
    cr_expect(isa_opcode_name(op), "docs/isa.md documents opcode %s (%s), fw/isa.def has none", code[i], name[i]);
    if (!isa_opcode_name(op)) continue;
    cr_expect_str_eq(isa_opcode_name(op), name[i], "opcode %s", code[i]);
    /* the queue column: both, compute or DMA */
    const bool c = isa_op_allowed(op, ISA_QUEUE_COMPUTE), d = isa_op_allowed(op, ISA_QUEUE_DMA);
    const char *want = c && d ? "both" : c ? "compute" : "DMA";
    cr_expect_str_eq(queue[i], want, "%s: documented on queue '%s', fw/isa.def allows %s", name[i], queue[i], want);
  }
  for (uint32_t op = 0; op < 256; op++) in_table += isa_opcode_name(op) != NULL;
  cr_expect_eq(in_table, n, "fw/isa.def has %u opcodes, docs/isa.md documents %u", in_table, n);
}

Test(isa, vec_and_error_tables_match_the_documentation) {
  char code[64][32], text[64][512];
  unsigned n = table_rows("VEC operations", "| code | operation", code, text, NULL, 64);
  cr_expect_eq(n, ISA_NUM_VEC_OPS);
  for (unsigned i = 0; i < n; i++) {
    unsigned v = (unsigned)atoi(code[i]);
    cr_expect_eq(v, i, "VEC operations are numbered 0, 1, ... in order");
    cr_expect(isa_vec_op_name(v) && !strcmp(isa_vec_op_name(v), text[i]), "VEC %u: documented %s, table %s", v,
              text[i], isa_vec_op_name(v) ? isa_vec_op_name(v) : "(none)");
  }
  n = table_rows("## Errors", "| code | meaning", code, text, NULL, 64);
  unsigned codes = 0;
  for (unsigned e = 0; e < 16; e++) codes += isa_error_name(e) != NULL;
  cr_expect_eq(n, codes, "docs/isa.md documents %u error codes, fw/isa.def has %u", n, codes);
  for (unsigned i = 0; i < n; i++) {
    unsigned e = (unsigned)atoi(code[i]);
    cr_expect(isa_error_name(e) && !strcmp(isa_error_name(e), text[i]), "error %u: documented '%s', table '%s'", e,
              text[i], isa_error_name(e) ? isa_error_name(e) : "(none)");
  }
}

/* The documented word layout of every command (docs/isa.md, "Command format"), by hand. */
Test(isa, hal_encodes_the_documented_layout) {
  fw_prog_t p;
  fw_prog_init(&p);
  fw_halt(&p);
  fw_fence(&p);
  fw_sem_wait(&p, 5, 77);
  fw_sem_signal(&p, 31, 0xFFFFFFFFu);
  fw_dma_hbm_to_vmem(&p, 6, 2, 0x1000, 64, 12, 3, 16);
  fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 40, 0x2000, 128, 9, 8);
  fw_dma_vmem_to_vmem(&p, 7, 1, 100, 200, 4);
  fw_mxu_load(&p, 321);
  fw_mxu_matmul(&p, 11, 12, 13, true);
  fw_mxu_store(&p, 14, 15, 16);
  fw_vec(&p, ISA_VEC_SCALE, 17, 18, 19, 20, 0x3F800000u);
  fw_rdma_on(&p, 2, 3, 4, 10, 20, 5, 6, 7, 8, 9);
  fw_mxu_load_transposed(&p, 322);
  fw_mxu_select(&p, 1);
  fw_mxu_load_transposed(&p, 323);
  fw_mxu_matmul(&p, 21, 22, 23, false);
  fw_mxu_store(&p, 24, 25, 26);
  fw_vec_bcast(&p, ISA_VEC_ADD, 27, 28, 29, 30, 0);
  cr_assert(fw_prog_ok(&p));
  static const uint32_t want[][8] = {
      {0x01},
      {0x02},
      {0x03 | 5u << 8, 77},
      {0x04 | 31u << 8, 0xFFFFFFFFu},
      {0x10 | 6u << 8, 2, 0, 0x1000, 64, 12, 3, 16},
      {0x10 | 255u << 8, 0, 1, 0x2000, 128, 40, 9, 8},
      {0x10 | 7u << 8, 1, 2, 200, 0, 100, 4, 4},
      {0x20, 0, 321},
      {0x21, 0, 11, 12, 13, 1},
      {0x22, 0, 14, 15, 16},
      {0x30, 5, 17, 18, 19, 20, 0x3F800000u},
      {0x40 | 6u << 8, 7, 3 | 4u << 8 | 2u << 16, 20, 10, 5, 8, 9},
      {0x20, 0, 322, 1},
      {0x20, 0, 323, 1 | 1u << 8},
      {0x21, 0, 21, 22, 23, 1u << 8},
      {0x22, 0, 24, 25, 26, 1},
      {0x30, 0, 27, 28, 29, 30, 0, 1},
  };
  cr_assert_eq(p.count, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < p.count; i++)
    for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
      cr_expect_eq(p.words[i * ISA_CMD_WORDS + w], want[i][w], "command %zu (%s) word %u: 0x%08x, documented 0x%08x",
                   i, isa_opcode_name(want[i][0] & 0xFF), w, p.words[i * ISA_CMD_WORDS + w], want[i][w]);
  /* every bit the HAL sets is a defined bit; the reserved ones stay zero */
  for (size_t i = 0; i < p.count; i++) {
    const uint32_t *c = p.words + i * ISA_CMD_WORDS;
    for (unsigned w = 0; w < ISA_CMD_WORDS; w++)
      cr_expect_eq(c[w] & ~isa_defined_bits(isa_opcode(c), w), 0, "command %zu word %u sets reserved bits", i, w);
  }
  fw_prog_free(&p);
}

Test(isa, reserved_bits_and_queues_as_documented) {
  /* word 0 bits 31:16 are reserved in every command; bits 15:8 only where a semaphore is named */
  for (uint32_t op = 0; op < 256; op++) {
    if (!isa_opcode_name(op)) {
      cr_expect_eq(isa_defined_bits(op, 0), 0);
      cr_expect(!isa_op_allowed(op, ISA_QUEUE_COMPUTE) && !isa_op_allowed(op, ISA_QUEUE_DMA));
      continue;
    }
    bool names_sem = op == ISA_OP_SEM_WAIT || op == ISA_OP_SEM_SIGNAL || op == ISA_OP_DMA || op == ISA_OP_RDMA;
    cr_expect_eq(isa_defined_bits(op, 0), names_sem ? 0xFFFFu : 0xFFu, "%s word 0", isa_opcode_name(op));
    cr_expect(isa_op_allowed(op, ISA_QUEUE_COMPUTE) || isa_op_allowed(op, ISA_QUEUE_DMA));
  }
  cr_expect_eq(isa_defined_bits(ISA_OP_HALT, 1), 0);
  cr_expect_eq(isa_defined_bits(ISA_OP_MXU_MATMUL, 5), 0xFF01u, "accumulate is one bit, the MXU eight");
  cr_expect_eq(isa_defined_bits(ISA_OP_RDMA, 2), 0xFFFFFFFFu, "x, y, engine and the checked reserved bits");
  cr_expect_eq(isa_defined_bits(ISA_OP_VEC, 7), 1u, "b_repeat, one bit");
  cr_expect(!isa_op_allowed(ISA_OP_DMA, ISA_QUEUE_COMPUTE) && isa_op_allowed(ISA_OP_DMA, ISA_QUEUE_DMA));
  cr_expect(isa_op_allowed(ISA_OP_VEC, ISA_QUEUE_COMPUTE) && !isa_op_allowed(ISA_OP_VEC, ISA_QUEUE_DMA));
  cr_expect_eq(ISA_QMASK_ALL, 3u);
  cr_expect_eq(isa_rdma_packet_lines(4), 8);
  cr_expect_eq(isa_rdma_packet_lines(16), 8);
  cr_expect_eq(isa_rdma_packet_lines(128), 3, "docs/isa.md: 3 lines of 64 flits at 128x128");
}
