/*
 * Tests of the HBM model's paged storage (csim/chip/hbm.c, docs/scale.md): a page nobody
 * wrote reads as zeros and costs nothing, accesses across page boundaries keep every byte,
 * a 4 GiB HBM touched in a few places holds only those pages, and the timed port (hbm_accept)
 * reads what the host wrote. No RTL: the suite runs once.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "chip/hbm.h"
#include "util/rng.h"

TestSuite(hbm, .timeout = 60);

Test(hbm, untouched_pages_read_as_zeros_and_cost_nothing) {
  hbm_t h;
  cr_assert_eq(hbm_init(&h, 1ull << 32, 64, 10, 64), 0);
  cr_assert_eq(h.pages_used, 0);
  uint8_t buf[256];
  memset(buf, 0xAB, sizeof buf);
  cr_assert_eq(hbm_read(&h, (1ull << 32) - sizeof buf, buf, sizeof buf), 0);
  for (size_t i = 0; i < sizeof buf; i++) cr_assert_eq(buf[i], 0);
  cr_assert_eq(h.pages_used, 0, "a read allocated a page");
  hbm_free(&h);
}

Test(hbm, accesses_across_pages_keep_every_byte) {
  hbm_t h;
  const uint64_t bytes = 5ull * HBM_PAGE_BYTES + 123;
  cr_assert_eq(hbm_init(&h, bytes, 64, 10, 64), 0);
  uint8_t *ref = calloc(bytes, 1), *got = malloc(bytes);
  rng_t r;
  rng_seed(&r, 7);
  for (unsigned t = 0; t < 2000; t++) {
    const uint64_t addr = rng_below(&r, bytes), n = 1 + rng_below(&r, bytes - addr < 3 * HBM_PAGE_BYTES ? bytes - addr : 3 * HBM_PAGE_BYTES);
    uint8_t *src = malloc(n);
    for (uint64_t i = 0; i < n; i++) src[i] = (uint8_t)rng_next(&r);
    cr_assert_eq(hbm_write(&h, addr, src, n), 0);
    memcpy(ref + addr, src, n);
    free(src);
  }
  cr_assert_eq(hbm_read(&h, 0, got, bytes), 0);
  cr_assert_eq(memcmp(got, ref, bytes), 0);
  cr_assert_leq(h.pages_used, 6);
  free(ref), free(got);
  hbm_free(&h);
}

Test(hbm, a_big_hbm_holds_only_the_pages_written) {
  hbm_t h;
  cr_assert_eq(hbm_init(&h, 1ull << 32, 64, 10, 64), 0);
  const uint8_t one = 1;
  const uint64_t addrs[] = {0, HBM_PAGE_BYTES - 1, HBM_PAGE_BYTES, 123456789, (1ull << 32) - 1};
  for (unsigned i = 0; i < 5; i++) cr_assert_eq(hbm_write(&h, addrs[i], &one, 1), 0);
  cr_assert_eq(h.pages_used, 4, "the first two pages, the one holding 123456789 and the last: %llu",
               (unsigned long long)h.pages_used);
  hbm_free(&h);
}

Test(hbm, the_timed_port_reads_what_the_host_wrote) {
  hbm_t h;
  cr_assert_eq(hbm_init(&h, 4 * HBM_PAGE_BYTES, 64, 3, 64), 0);
  uint8_t line[64];
  for (unsigned i = 0; i < 64; i++) line[i] = (uint8_t)(i * 3 + 1);
  cr_assert_eq(hbm_write(&h, HBM_PAGE_BYTES - 20, line, 64), 0); /* straddles pages 0 and 1 */
  cr_assert(hbm_begin_cycle(&h));
  hbm_accept(&h, 10, false, HBM_PAGE_BYTES - 20, 64, NULL);
  for (uint64_t c = 11; c < 13; c++) cr_assert_null(hbm_answer_due(&h, c));
  const hbm_answer_t *a = hbm_answer_due(&h, 13);
  cr_assert_not_null(a);
  cr_assert_eq(memcmp(a->data, line, 64), 0);
  hbm_answer_pop(&h);
  hbm_free(&h);
}
