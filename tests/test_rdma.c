/*
 * Remote DMA between chips (rtl/chip_rdma.sv through the routers and csim/pod/pod.c's links;
 * docs/isa.md, "RDMA"): a copy to a chip across a 2x2 torus that signals a semaphore there,
 * many-to-one transfers that interleave in the routers, a destination outside the pod (error
 * 8), four engines driving four links at once, and the remote-DMA timing contract to the
 * cycle over links of every latency and of a rate below a flit a cycle. Remote DMA from one
 * core to the other of a chip is in test_chip_cores.c. Run per reset seed on the RTL and under
 * every model of MODELS (Makefile).
 */
#include <stdbool.h>
#include <string.h>

#include "chip_test.h"
#include "util/rng.h"

TestSuite(rdma, .timeout = 120);

Test(rdma, remote_dma_signals_the_remote_semaphore) {
  for (unsigned size = 4; size <= 16; size += 12) {
    pod_t *p = test_pod(size, 2, 2, 2);
    const unsigned line = 4 * size, rows = 9;
    chip_t *src = pod_chip(p, 0, 0), *dst = pod_chip(p, 1, 1);
    uint8_t data[16 * 64 * 9];
    rng_t rng;
    rng_seed(&rng, test_seed() + size);
    for (unsigned i = 0; i < rows * line; i++) data[i] = (uint8_t)rng_next(&rng);
    cr_assert_eq(chip_hbm_write(src, 0, data, rows * line), 0);
    /* source: HBM -> VMEM, then to (1,1) lines 200.., remote semaphore 3 += 5 per line, local 4 += 1 */
    fw_prog_t sd;
    fw_prog_init(&sd);
    fw_dma_hbm_to_vmem(&sd, 1, 1, 0, line, 10, rows, line);
    fw_sem_wait(&sd, 1, 1);
    fw_rdma(&sd, 1, 1, 10, 200, rows, 3, 5, 4, 1);
    fw_sem_wait(&sd, 4, 1);
    fw_halt(&sd);
    test_load_once(src, ISA_QUEUE_DMA, &sd);
    /* destination: wait for the data, write it to its own HBM */
    fw_prog_t dd;
    fw_prog_init(&dd);
    fw_sem_wait(&dd, 3, 5 * rows); /* every line adds 5 */
    fw_dma_vmem_to_hbm(&dd, 6, 1, 200, 4096, line, rows, line);
    fw_sem_wait(&dd, 6, 1);
    fw_halt(&dd);
    test_load_once(dst, ISA_QUEUE_DMA, &dd);
    for (unsigned y = 0; y < 2; y++)
      for (unsigned x = 0; x < 2; x++)
        if (!((x == 0 && y == 0) || (x == 1 && y == 1))) test_load_halt(pod_chip(p, x, y), ISA_QUEUE_DMA);
    uint64_t cycles;
    char report[1024];
    cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), 0, "%s", report);
    uint8_t out[16 * 64 * 9];
    cr_assert_eq(chip_hbm_read(dst, 4096, out, rows * line), 0);
    cr_assert_eq(memcmp(out, data, rows * line), 0, "%ux%u chips: the remote copy differs", size, size);
    cr_assert_eq(chip_sem(dst, 3), 0, "the wait consumed the remote signal");
    cr_assert_eq(chip_sem(src, 4), 0);
    pod_free(p);
  }
}

Test(rdma, many_to_one_transfers_interleave) {
  /* Every chip of a 3x3 pod sends 5 lines to (1,1), each to its own region; (1,1) waits
   * until all eight have arrived (semaphore counts) and writes everything back. */
  pod_t *p = test_pod(4, 3, 3, 1);
  const unsigned line = 16, rows = 5;
  chip_t *hub = pod_chip(p, 1, 1);
  for (unsigned i = 0; i < 9; i++) {
    chip_t *c = pod_chip(p, i % 3, i / 3);
    uint8_t data[16 * 5];
    for (unsigned b = 0; b < rows * line; b++) data[b] = (uint8_t)(i * 31 + b);
    cr_assert_eq(chip_hbm_write(c, 0, data, sizeof data), 0);
    fw_prog_t d;
    fw_prog_init(&d);
    if (c == hub) {
      fw_sem_wait(&d, 7, 8 * rows); /* eight sources, every line adds 1 */
      fw_dma_vmem_to_hbm(&d, 8, 1, 100, 8192, line, 9 * rows, line);
      fw_sem_wait(&d, 8, 1);
    } else {
      fw_dma_hbm_to_vmem(&d, 1, 1, 0, line, 0, rows, line);
      fw_sem_wait(&d, 1, 1);
      fw_rdma(&d, 1, 1, 0, 100 + i * rows, rows, 7, 1, ISA_SEM_NONE, 0);
    }
    fw_halt(&d);
    test_load_once(c, ISA_QUEUE_DMA, &d);
  }
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), 0, "%s", report);
  uint8_t out[9 * 16 * 5];
  cr_assert_eq(chip_hbm_read(hub, 8192, out, sizeof out), 0);
  /* the hub ejected every flit: 8 sources x one packet of 5 lines (2 header + 5 x 2 data flits) */
  uint32_t flits[5];
  chip_router_flits(hub, flits);
  cr_assert_eq(flits[0], 8 * (2 + 5 * 2), "flits ejected at the hub: %u", flits[0]);
  for (unsigned i = 0; i < 9; i++) {
    if (i == 4) continue;
    for (unsigned b = 0; b < rows * line; b++)
      cr_assert_eq(out[i * rows * line + b], (uint8_t)(i * 31 + b), "from chip %u byte %u: got %u want %u", i, b, out[i * rows * line + b], (uint8_t)(i * 31 + b));
  }
  pod_free(p);
}

Test(rdma, remote_destination_outside_the_pod_is_an_error) {
  pod_t *p = test_pod(4, 2, 2, 0);
  fw_prog_t d;
  fw_prog_init(&d);
  fw_rdma(&d, 2, 0, 0, 0, 1, ISA_SEM_NONE, 0, ISA_SEM_NONE, 0);
  fw_halt(&d);
  test_load_once(pod_chip(p, 0, 0), ISA_QUEUE_DMA, &d);
  for (unsigned i = 1; i < 4; i++) test_load_halt(pod_chip(p, i % 2, i / 2), ISA_QUEUE_DMA);
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 10000, &cycles, report, sizeof report), -1);
  cr_assert(strstr(report, "chip (0,0): DMA queue stopped with error 8"), "%s", report);
  pod_free(p);
}

/* The chip at the centre of a 3x3 pod sends `rows` lines to each of its four neighbours,
 * on engine e (0..3) or all on engine 0. Returns the pod's cycles; checks every copy. */
static uint64_t send_to_four(bool four_engines) {
  pod_t *p = test_pod(4, 3, 3, 1);
  const unsigned line = 16, rows = 40;
  const unsigned nb[4][2] = {{2, 1}, {0, 1}, {1, 2}, {1, 0}};
  chip_t *src = pod_chip(p, 1, 1);
  uint8_t data[16 * 40];
  rng_t rng;
  rng_seed(&rng, test_seed() + four_engines);
  for (unsigned i = 0; i < sizeof data; i++) data[i] = (uint8_t)rng_next(&rng);
  cr_assert_eq(chip_hbm_write(src, 0, data, sizeof data), 0);
  fw_prog_t sd;
  fw_prog_init(&sd);
  fw_dma_hbm_to_vmem(&sd, 1, 1, 0, line, 10, rows, line);
  fw_sem_wait(&sd, 1, 1);
  for (unsigned e = 0; e < 4; e++) fw_rdma_on(&sd, four_engines ? e : 0, nb[e][0], nb[e][1], 10, 300, rows, 3, 1, 4, 1);
  fw_sem_wait(&sd, 4, 4);
  fw_halt(&sd);
  test_load_once(src, ISA_QUEUE_DMA, &sd);
  for (unsigned y = 0; y < 3; y++)
    for (unsigned x = 0; x < 3; x++) {
      if (x == 1 && y == 1) continue;
      fw_prog_t dd;
      fw_prog_init(&dd);
      if ((x == 1) != (y == 1)) { /* a neighbour: wait for the lines, then put them in HBM */
        fw_sem_wait(&dd, 3, rows);
        fw_dma_vmem_to_hbm(&dd, 6, 1, 300, 4096, line, rows, line);
        fw_sem_wait(&dd, 6, 1);
      }
      fw_halt(&dd);
      test_load_once(pod_chip(p, x, y), ISA_QUEUE_DMA, &dd);
    }
  uint64_t cycles;
  char report[1024];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), 0, "%s", report);
  for (unsigned e = 0; e < 4; e++) {
    uint8_t out[16 * 40];
    cr_assert_eq(chip_hbm_read(pod_chip(p, nb[e][0], nb[e][1]), 4096, out, sizeof out), 0);
    cr_assert_eq(memcmp(out, data, sizeof out), 0, "neighbour %u: the copy differs", e);
  }
  uint32_t flits[5];
  chip_router_flits(src, flits);
  /* packets of up to 8 lines: 5 packets of 2 header + 8 x 2 data flits on each link */
  for (unsigned d = 1; d < 5; d++) cr_assert_eq(flits[d], 5 * (2 + 8 * 2), "link %u carried %u flits", d, flits[d]);
  pod_free(p);
  return cycles;
}

Test(rdma, four_engines_drive_four_links_at_once) {
  /* 40 lines of a 4x4 chip are 5 packets of 18 flits: 90 flits a link */
  uint64_t one = send_to_four(false), four = send_to_four(true);
  cr_assert_geq(one, 4 * 90, "one engine sends the 360 flits one after another (%llu cycles)",
                (unsigned long long)one);
  /* the loads and stores around the sends are the same in both runs: four engines save
   * three of the four 90-flit transfers */
  cr_assert_geq(one - four, 3 * 90 - 5, "four engines send in parallel: %llu cycles (one engine: %llu)",
                (unsigned long long)four, (unsigned long long)one);
}

/* The sender's [RDMA of `rows` lines of C x C chips to a chip H hops along X; HALT] and the
 * receiver's [SEM_WAIT rows; HALT] on an 8x1 pod of links of latency L carrying link_bytes a
 * cycle (0: a flit): the pod's cycles, and the transfer's flits (2 + lines x C/2 a packet of up
 * to 8 lines) in *flits. */
static uint64_t rdma_cycles(unsigned C, unsigned L, unsigned hops, unsigned rows, unsigned link_bytes, uint64_t *flits) {
  pod_config_t cfg = test_machine(8, 1, C, C);
  cfg.link_latency = L, cfg.link_bytes = link_bytes, cfg.threads = 0;
  cfg.chip.hbm_bytes = 1u << 20, cfg.chip.hbm_bytes_per_cycle = 64, cfg.chip.hbm_latency = 10;
  pod_t *p = test_pod_new(&cfg);
  for (unsigned x = 0; x < 8; x++) {
    fw_prog_t d;
    fw_prog_init(&d);
    if (x == 0) fw_rdma(&d, hops, 0, 0, 200, rows, 3, 1, ISA_SEM_NONE, 0);
    if (x == hops) fw_sem_wait(&d, 3, rows);
    fw_halt(&d);
    test_load_once(pod_chip(p, x, 0), ISA_QUEUE_DMA, &d);
  }
  uint64_t cycles;
  char report[512];
  cr_assert_eq(pod_run(p, ISA_QMASK_DMA, 100000, &cycles, report, sizeof report), 0, "%s", report);
  pod_free(p);
  *flits = 0;
  for (unsigned left = rows; left > 0;) {
    const unsigned k = left < 8 ? left : 8;
    *flits += 2 + k * (C / 2);
    left -= k;
  }
  return cycles;
}

/* Remote DMA timing contract (docs/isa.md): the transfer above takes F + H (2 + L) + 7 cycles,
 * F its flits, while the credit round trip fits the 8-flit buffers (L <= 2). */
Test(rdma, remote_dma_timing_contract) {
  const unsigned sizes[] = {4, 16}, rows_list[] = {1, 2, 7, 8, 9, 16, 20, 100};
  for (unsigned si = 0; si < 2; si++)
    for (unsigned L = 0; L <= 2; L++)
      for (unsigned hops = 1; hops <= 3; hops++)
        for (unsigned ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++) {
          const unsigned C = sizes[si], rows = rows_list[ri];
          uint64_t flits;
          const uint64_t cycles = rdma_cycles(C, L, hops, rows, 0, &flits);
          cr_assert_eq(cycles, flits + hops * (2 + L) + 7, "C=%u L=%u H=%u rows=%u: %llu cycles, contract %llu", C,
                       L, hops, rows, (unsigned long long)cycles, (unsigned long long)(flits + hops * (2 + L) + 7));
        }
}

/* Link rate (pod_config_t.link_bytes, docs/timing.md "Link rate"): a link that carries r bytes
 * a cycle, less than a flit's B, serialises the transfer's F flits: the first leaves at once
 * (an idle link's bucket holds a flit), flit k once the bucket has gained k B bytes, so over
 * one hop the contract above grows by ceil((F - 1) B / r) - (F - 1) cycles, and each further
 * hop by at most one more. Credits are not held back; the serialiser's queue stays within the
 * receiver's buffers. RTL, fast and lockstep chips alike (the link is the pod's, in C). */
Test(rdma, link_rate_timing_contract) {
  const unsigned rates[] = {2, 4, 6, 7}, rows_list[] = {1, 8, 20};
  for (unsigned L = 0; L <= 1; L++)
    for (unsigned hops = 1; hops <= 3; hops++)
      for (unsigned ri = 0; ri < sizeof rows_list / sizeof rows_list[0]; ri++)
        for (unsigned k = 0; k < sizeof rates / sizeof rates[0]; k++) {
          const unsigned rows = rows_list[ri], r = rates[k];
          uint64_t flits;
          const uint64_t cycles = rdma_cycles(4, L, hops, rows, r, &flits);
          const uint64_t serial = ((flits - 1) * 8 + r - 1) / r - (flits - 1);
          const uint64_t want = flits + hops * (2 + L) + 7 + serial;
          /* one hop to the cycle; a later hop's bucket may refill while its queue is empty (the
           * flits come at the first link's spacing, rounded), which costs it at most a cycle */
          cr_assert(cycles >= want && cycles <= want + hops - 1,
                    "r=%u L=%u H=%u rows=%u (%llu flits): %llu cycles, contract %llu .. %llu", r, L, hops, rows,
                    (unsigned long long)flits, (unsigned long long)cycles, (unsigned long long)want,
                    (unsigned long long)(want + hops - 1));
          if (hops == 1) cr_assert_eq(cycles, want);
        }
}
