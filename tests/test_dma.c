/*
 * The chip's DMA engine (rtl/chip_dma.sv; docs/isa.md, "DMA" and "Transposing DMA"): the DMA
 * timing contract to the cycle, plain and transposing; the transpose written bit for bit, in
 * order with the DMAs around it; HBM -> VMEM -> VMEM -> HBM round trips that zero-fill short
 * rows; runs back to back that stay exact (no phantom HBM responses between runs). Run per
 * reset seed on the RTL and under every model of MODELS (Makefile).
 */
#include <string.h>

#include "chip_test.h"
#include "util/rng.h"
TestSuite(dma, .timeout = 300);

/* DMA timing contract (docs/isa.md): the program [DMA of `rows` rows of n bytes; FENCE;
 * HALT] runs (rows - 1) * ceil(n / B) + L + 6 cycles when n <= B or B divides n, and a
 * transposing DMA (rows <= C) one cycle more per line it writes (n / 2). */
Test(dma, dma_timing_contract) {
  const unsigned rows_l[] = {1, 5, 16, 64}, bytes_l[] = {4, 16, 64}, bw_l[] = {64, 16, 8}, lat_l[] = {1, 10, 100};
  for (int transposed = 0; transposed < 2; transposed++)
    for (int a = 0; a < 4; a++)
      for (int b = 0; b < 3; b++)
        for (int i = 0; i < 3; i++)
          for (int d = 0; d < 3; d++) {
            unsigned rows = rows_l[a], n = bytes_l[b], bw = bw_l[i], lat = lat_l[d];
            if (transposed && rows > 16) continue;  /* at most C rows */
            chip_t *c = test_chip(16, bw, lat);
            fw_prog_t p;
            fw_prog_init(&p);
            if (transposed) fw_dma_hbm_to_vmem_transposed(&p, 1, 1, 0, 64, 0, rows, n);
            else fw_dma_hbm_to_vmem(&p, 1, 1, 0, 64, 0, rows, n);
            fw_fence(&p);
            fw_halt(&p);
            test_load_once(c, ISA_QUEUE_DMA, &p);
            chip_status_t st;
            test_run(c, ISA_QMASK_DMA, 100000, &st);
            uint64_t per = n <= bw ? 1 : n / bw;
            cr_assert_eq(st.cycles, (rows - 1) * per + lat + 6 + (transposed ? n / 2 : 0),
                         "%s rows %u bytes %u B %u L %u: %llu cycles", transposed ? "transposing" : "plain", rows, n,
                         bw, lat, (unsigned long long)st.cycles);
            cr_assert_eq(chip_sem(c, 1), 1, "the DMA signalled its semaphore");
            cr_assert_eq(st.hbm_bytes, (uint64_t)rows * n);
            chip_free(c);
          }
}

/* The transposing DMA (docs/isa.md, "Transposing DMA"): rows HBM rows of n/2 bf16 become
 * n/2 VMEM lines of rows bf16, zero beyond; plain DMAs before and after it keep their
 * order. Its timing contract is in dma_timing_contract. */
Test(dma, transposing_dma_writes_the_transpose) {
  static const unsigned sizes[] = {4, 16};
  rng_t rng;
  rng_seed(&rng, test_seed() * 43 + 1);
  for (unsigned z = 0; z < 2; z++) {
    const unsigned C = sizes[z], line = 4 * C;
    chip_t *c = test_chip(C, 16, 9);
    const unsigned shapes[][2] = {{C, 2 * C}, {1, 2}, {C - 1, 6}, {3, 2 * C - 2}};  /* rows, elements */
    for (unsigned s = 0; s < 4; s++) {
      const unsigned rows = shapes[s][0], elems = shapes[s][1], stride = 4 * line;
      uint16_t x[16 * 32];
      for (unsigned r = 0; r < rows; r++)
        for (unsigned e = 0; e < elems; e++) x[r * elems + e] = rng_bf16(&rng, -4, 4);
      for (unsigned r = 0; r < rows; r++) cr_assert_eq(chip_hbm_write(c, 4096 + r * stride, x + r * elems, 2 * elems), 0);
      uint8_t mark[64];
      for (unsigned i = 0; i < line; i++) mark[i] = (uint8_t)(0xC3 ^ i);
      cr_assert_eq(chip_hbm_write(c, 0, mark, line), 0);
      fw_prog_t p;
      fw_prog_init(&p);
      fw_dma_hbm_to_vmem(&p, ISA_SEM_NONE, 0, 0, line, 100, 1, line);          /* before: a marker line */
      fw_dma_hbm_to_vmem_transposed(&p, 1, 1, 4096, stride, 200, rows, 2 * elems);
      fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 200, 1u << 20, line, elems, line); /* after: reads the result */
      fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 100, 2u << 20, line, 1, line);
      fw_fence(&p);
      fw_halt(&p);
      test_load_once(c, ISA_QUEUE_DMA, &p);
      test_run(c, ISA_QMASK_DMA, 100000, NULL);
      cr_assert_eq(chip_sem(c, 1), 1);
      uint16_t out[32 * 32];
      cr_assert_eq(chip_hbm_read(c, 1u << 20, out, (size_t)elems * line), 0);
      for (unsigned e = 0; e < elems; e++)
        for (unsigned l = 0; l < 2 * C; l++) {
          const uint16_t want = l < rows ? x[l * elems + e] : 0;
          cr_assert_eq(out[e * 2 * C + l], want, "%ux%u rows %u elems %u: line %u lane %u: 0x%04x, want 0x%04x", C, C,
                       rows, elems, e, l, out[e * 2 * C + l], want);
        }
      uint8_t back[64];
      cr_assert_eq(chip_hbm_read(c, 2u << 20, back, line), 0);
      cr_assert_eq(memcmp(back, mark, line), 0, "the DMA before it landed");
      fw_prog_init(&p);  /* take the semaphore back for the next shape */
      fw_sem_wait(&p, 1, 1);
      fw_halt(&p);
      test_load_once(c, ISA_QUEUE_DMA, &p);
      test_run(c, ISA_QMASK_DMA, 1000, NULL);
    }
    chip_free(c);
  }
}

Test(dma, dma_round_trip_zero_fills_and_orders) {
  chip_t *c = test_chip(4, 16, 10);
  uint8_t src[256];
  for (int i = 0; i < 256; i++) src[i] = (uint8_t)(i * 7 + 1);
  cr_assert_eq(chip_hbm_write(c, 0, src, sizeof src), 0);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_dma_hbm_to_vmem(&p, ISA_SEM_NONE, 0, 0, 16, 10, 8, 12);       /* 8 rows of 12 bytes */
  fw_dma_vmem_to_vmem(&p, ISA_SEM_NONE, 0, 10, 100, 8);             /* copy the lines */
  fw_dma_vmem_to_hbm(&p, 4, 1, 100, 4096, 16, 8, 16);              /* whole lines back */
  fw_halt(&p);
  test_load_once(c, ISA_QUEUE_DMA, &p);
  test_run(c, ISA_QMASK_DMA, 10000, NULL);
  uint8_t out[128];
  cr_assert_eq(chip_hbm_read(c, 4096, out, sizeof out), 0);
  for (int r = 0; r < 8; r++)
    for (int i = 0; i < 16; i++)
      cr_assert_eq(out[16 * r + i], i < 12 ? src[16 * r + i] : 0, "row %d byte %d", r, i);
  cr_assert_eq(chip_sem(c, 4), 1);
  chip_free(c);
}

/* Defect found by a hostile tester: after a run, the HBM port's inputs stayed as the last cycle
 * left them, and loading the next program (which clocks the chip) fed the DMA unit phantom
 * responses: after 17 runs of [DMA one row, signal; HALT] the semaphore read 19 and the 17th
 * run timed out. Every run must succeed, count once, and leave the other VMEM lines alone. */
Test(dma, runs_back_to_back_stay_exact) {
  chip_t *c = test_chip(4, 16, 5);
  const unsigned line = 16;
  uint8_t row[16], back[16];
  for (unsigned i = 0; i < 16; i++) row[i] = (uint8_t)(0xA0 + i);
  cr_assert_eq(chip_hbm_write(c, 0, row, sizeof row), 0);
  /* a sentinel line that no program touches */
  uint8_t sentinel[16] = {0};
  for (unsigned i = 0; i < 16; i++) sentinel[i] = (uint8_t)(0x5A ^ i);
  cr_assert_eq(chip_hbm_write(c, 4096, sentinel, line), 0);
  fw_prog_t s;
  fw_prog_init(&s);
  fw_dma_hbm_to_vmem(&s, ISA_SEM_NONE, 0, 4096, line, 50, 1, line);
  fw_fence(&s);
  fw_halt(&s);
  chip_status_t st;
  test_load_once(c, ISA_QUEUE_DMA, &s);
  test_run(c, ISA_QMASK_DMA, 10000, &st);
  fw_prog_t p;
  fw_prog_init(&p);
  fw_dma_hbm_to_vmem(&p, 1, 1, 0, line, 7, 1, line);
  fw_halt(&p);
  for (unsigned run = 1; run <= 20; run++) {
    test_load(c, ISA_QUEUE_DMA, &p);
    cr_assert_eq(chip_run(c, ISA_QMASK_DMA, 10000, &st), 0, "run %u: %s", run, st.report);
    cr_assert_eq(chip_sem(c, 1), run, "run %u: semaphore 1 holds %u", run, chip_sem(c, 1));
  }
  /* the sentinel line is still the sentinel: copy it back out and compare */
  fw_prog_t q;
  fw_prog_init(&q);
  fw_dma_vmem_to_hbm(&q, ISA_SEM_NONE, 0, 50, 8192, line, 1, line);
  fw_dma_vmem_to_hbm(&q, ISA_SEM_NONE, 0, 7, 8192 + line, line, 1, line);
  fw_fence(&q);
  fw_halt(&q);
  test_load_once(c, ISA_QUEUE_DMA, &q);
  test_run(c, ISA_QMASK_DMA, 10000, &st);
  cr_assert_eq(chip_hbm_read(c, 8192, back, line), 0);
  cr_assert_eq(memcmp(back, sentinel, line), 0, "VMEM line 50 changed between runs");
  cr_assert_eq(chip_hbm_read(c, 8192 + line, back, line), 0);
  cr_assert_eq(memcmp(back, row, line), 0, "VMEM line 7 holds the row");
  fw_prog_free(&p);
  chip_free(c);
}
