/* Collectives on pods of RTL chips (fw/collective.c through csim/runtime/pod_collective.c), every
 * chip's result bit-exact against the golden model (csim/golden/coll_golden.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "golden/arith_golden.h"
#include "golden/coll_golden.h"
#include "runtime/pod_collective.h"
#include "chip/chip.h"
#include "chip_test.h"
#include "util/rng.h"

static uint32_t random_fp32(rng_t *r) {
  /* sign, an exponent in a band (so sums round), a random mantissa; sometimes zero */
  uint64_t v = rng_next(r);
  if (v % 97 == 0) return 0;
  return (uint32_t)((v >> 40) & 0x807FFFFFu) | ((uint32_t)(120 + (v >> 8) % 16) << 23);
}

/* Runs collective `args` (op, algo, chunk_lines, root, bf16_in) on slice s of a pw x ph pod
 * of 4x4 chips with `elems` random values a chip, and checks every value of every chip. */
static void check_args(unsigned pw, unsigned ph, fw_slice_t s, const fw_coll_args_t *args, uint64_t elems) {
  const fw_coll_op_t op = args->op;
  const fw_coll_algo_t algo = args->algo;
  pod_coll_config_t cfg = {.machine = test_machine(1, 1, 4, 4)};
  cfg.machine.size_x = pw, cfg.machine.size_y = ph, cfg.slice = s;
  cfg.machine.threads = test_threads(ph);
  cfg.args = *args;
  cfg.elems = elems, cfg.machine.chip.rows = 4, cfg.machine.chip.cols = 4, cfg.machine.link_latency = 1, cfg.machine.chip.seed = test_seed();
  const unsigned chips = s.w * s.h, lanes = 4;
  uint32_t *in = calloc((size_t)chips * elems, 4), *out = calloc((size_t)chips * elems, 4);
  rng_t r;
  rng_seed(&r, test_seed() * 1000 + elems);
  /* the device sees each chip's buffer as `elems` values (bf16 bits with bf16_in); the
   * golden model takes them as fp32 (bf16 widened exactly) */
  uint32_t *dev_in = calloc((size_t)chips * elems, 4);
  for (uint64_t i = 0; i < chips * elems; i++) {
    uint16_t b = args->bf16_in ? rng_bf16(&r, -6, 6) : 0;
    uint32_t v = args->bf16_in ? arith_golden_bf16_to_fp32(b) : random_fp32(&r);
    in[i] = v;
    dev_in[i] = args->bf16_in ? b : v;
  }
  pod_coll_stats_t st;
  char err[2048];
  cr_assert_eq(pod_collective(&cfg, dev_in, out, &st, err, sizeof err), 0, "%s", err);
  fw_slice_t gs = s;
  gs.pod_w = pw, gs.pod_h = ph;
  /* every value bit-exact (reduce-scatter: the owned lines), every sum within the float64 bound */
  coll_check_t chk;
  cr_assert_eq(coll_golden_check(&gs, &cfg.args, lanes, elems, in, out, &chk), 0);
  cr_assert_eq(chk.mismatches, 0,
               "pod %ux%u slice %u,%u %ux%u op %d algo %d elems %llu: %llu of %llu values differ; the first: chip %u "
               "value %llu: 0x%08x, golden 0x%08x",
               pw, ph, s.x0, s.y0, s.w, s.h, op, algo, (unsigned long long)elems, (unsigned long long)chk.mismatches,
               (unsigned long long)chk.checked, chk.first_chip, (unsigned long long)chk.first_value, chk.got, chk.want);
  cr_assert_eq(chk.bound_violations, 0, "%llu sums outside the float64 bound", (unsigned long long)chk.bound_violations);
  cr_assert_gt(chk.checked, 0);
  cr_assert_gt(st.cycles, 0);
  cr_assert_eq(st.sems_left, 0, "%u semaphores left non-zero", st.sems_left);
  free(in), free(out), free(dev_in);
}

static fw_slice_t whole(unsigned w, unsigned h) { return (fw_slice_t){0, 0, w, h, w, h}; }

static void check(unsigned pw, unsigned ph, fw_slice_t s, fw_coll_op_t op, fw_coll_algo_t algo, uint64_t elems,
                  unsigned chunk) {
  fw_coll_args_t a = {op, algo, 0, 0, chunk, 0, false};
  check_args(pw, ph, s, &a, elems);
}

static void check_root(unsigned pw, unsigned ph, fw_slice_t s, unsigned root, uint64_t elems) {
  fw_coll_args_t a = {FW_COLL_BROADCAST, FW_COLL_RING, 0, 0, 0, root, false};
  check_args(pw, ph, s, &a, elems);
}

TestSuite(collective, .timeout = 600);

Test(collective, allreduce_ring_and_torus2d_on_2x2) {
  const uint64_t sizes[] = {1, 3, 37, 1000};
  for (unsigned i = 0; i < 4; i++) {
    check(2, 2, whole(2, 2), FW_COLL_ALLREDUCE, FW_COLL_RING, sizes[i], 0);
    check(2, 2, whole(2, 2), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, sizes[i], 0);
  }
}

Test(collective, allreduce_on_4x4_torus) {
  check(4, 4, whole(4, 4), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 4099, 0);
  check(4, 4, whole(4, 4), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 5, 0);
  check(4, 4, whole(4, 4), FW_COLL_ALLREDUCE, FW_COLL_RING, 1001, 3);
}

Test(collective, reduce_scatter_and_all_gather_on_2d_slices) {
  const uint64_t sizes[] = {1, 13, 1000};
  for (unsigned i = 0; i < 3; i++)
    for (int op = 1; op <= 2; op++) {
      check(2, 2, whole(2, 2), (fw_coll_op_t)op, FW_COLL_RING, sizes[i], 0);
      check(4, 4, whole(4, 4), (fw_coll_op_t)op, FW_COLL_RING, sizes[i] * 3, 0);
      check(6, 4, (fw_slice_t){1, 1, 3, 2, 6, 4}, (fw_coll_op_t)op, FW_COLL_RING, sizes[i] + 5, 0);
    }
}

Test(collective, every_op_on_1xN_and_Nx1) {
  const uint64_t sizes[] = {1, 7, 602};
  for (unsigned i = 0; i < 3; i++)
    for (int op = 0; op < 3; op++) {
      check(1, 4, whole(1, 4), (fw_coll_op_t)op, FW_COLL_RING, sizes[i], 0);
      check(3, 1, whole(3, 1), (fw_coll_op_t)op, FW_COLL_RING, sizes[i], 0);
    }
}

Test(collective, mesh_and_full_torus_slices) {
  /* 3 of 6 chips in X: a mesh ring; 4x2 of a 4x4 pod: X wraps, Y is a 2-chip mesh */
  check(6, 1, (fw_slice_t){2, 0, 3, 1, 6, 1}, FW_COLL_ALLREDUCE, FW_COLL_RING, 333, 0);
  check(6, 1, (fw_slice_t){1, 0, 3, 1, 6, 1}, FW_COLL_REDUCE_SCATTER, FW_COLL_RING, 50, 0);
  check(4, 4, (fw_slice_t){0, 1, 4, 2, 4, 4}, FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 777, 0);
  check(4, 4, (fw_slice_t){1, 1, 2, 2, 4, 4}, FW_COLL_ALLREDUCE, FW_COLL_RING, 64, 0);
}

Test(collective, bad_slices_and_sizes_are_refused) {
  pod_coll_config_t cfg = {.machine = test_machine(1, 1, 4, 4)};
  cfg.machine.size_x = 4, cfg.machine.size_y = 4, cfg.machine.chip.rows = 4, cfg.machine.chip.cols = 4, cfg.elems = 16, cfg.machine.chip.seed = 1;
  cfg.machine.threads = test_threads(4);
  uint32_t in[16 * 16] = {0}, out[16 * 16];
  pod_coll_stats_t st;
  char err[512];
  cfg.slice = (fw_slice_t){3, 0, 2, 2, 0, 0};
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1);
  cr_assert(strstr(err, "outside") != NULL, "%s", err);
  cfg.slice = (fw_slice_t){0, 0, 0, 2, 0, 0};
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1);
  cfg.slice = (fw_slice_t){0, 0, 4, 1, 0, 0};
  cfg.args.algo = FW_COLL_TORUS2D;
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1);
  cr_assert(strstr(err, "torus2d") != NULL, "%s", err);
  cfg.slice = (fw_slice_t){0, 0, 3, 4, 0, 0};
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1);
  cr_assert(strstr(err, "needs wraparound links") != NULL, "torus2d on a 3-wide mesh: %s", err);
  cfg.args.algo = FW_COLL_RING;
  cfg.args.op = FW_COLL_ALL_TO_ALL;
  cfg.slice = (fw_slice_t){0, 0, 3, 1, 0, 0};
  cfg.elems = 16;
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1, "16 values in 3 blocks");
  cr_assert(strstr(err, "equal blocks") != NULL, "%s", err);
  cfg.args.op = FW_COLL_BROADCAST;
  cfg.args.root = 3;
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1, "root outside the slice");
  cfg.args.root = 0;
  cfg.args.bf16_in = true;
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), -1, "bf16 inputs to a broadcast");
  cfg.args.bf16_in = false;
  cfg.args.op = FW_COLL_ALLREDUCE;
  cfg.elems = 1u << 30;
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), RT_INVALID);
  cr_assert(strstr(err, "VMEM") != NULL, "%s", err);
  /* an empty slice is refused before anything divides by its size (all_to_all splits by it) */
  cfg.elems = 16;
  cfg.args.op = FW_COLL_ALL_TO_ALL;
  cfg.slice = (fw_slice_t){0, 0, 0, 0, 0, 0};
  cr_assert_eq(pod_coll_check(&cfg, err, sizeof err), RT_INVALID);
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), RT_INVALID);
  cr_assert(strstr(err, "empty") != NULL, "%s", err);
  /* offsets near UINT_MAX are outside the pod: x0 + w must not wrap to a small number */
  cfg.args.op = FW_COLL_ALLREDUCE;
  cfg.slice = (fw_slice_t){UINT_MAX, 0, 2, 1, 0, 0};
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), RT_INVALID);
  cr_assert(strstr(err, "outside") != NULL, "%s", err);
  cfg.slice = (fw_slice_t){0, UINT_MAX - 1, 1, 4, 0, 0};
  cr_assert_eq(pod_coll_check(&cfg, err, sizeof err), RT_INVALID);
  const chip_geometry_t g = {4, 4, 64, 4096, 1024, 1, 1, 1};
  const fw_coll_args_t args = {FW_COLL_ALLREDUCE, FW_COLL_RING, 0, 4, 1, 0, false};
  const fw_slice_t wraps[] = {{UINT_MAX, 0, 2, 1, 4, 4}, {0, UINT_MAX, 1, 2, 4, 4}, {1, 0, UINT_MAX, 1, 4, 4},
                              {0, 0, 5, 1, 4, 4}, {4, 0, 1, 1, 4, 4}};
  for (unsigned i = 0; i < sizeof wraps / sizeof wraps[0]; i++)
    cr_assert_eq(fw_coll_check(&g, &wraps[i], &args, err, sizeof err), -1, "slice %u: %u,%u,%ux%u accepted", i,
                 wraps[i].x0, wraps[i].y0, wraps[i].w, wraps[i].h);
  /* programs that do not fit the queues are the request's fault too: one-line chunks of a
   * large buffer */
  cfg.args.op = FW_COLL_ALLREDUCE;
  cfg.slice = (fw_slice_t){0, 0, 2, 2, 0, 0};
  cfg.elems = 4 * 100000;
  cfg.args.chunk_lines = 1;
  cr_assert_eq(pod_coll_check(&cfg, err, sizeof err), RT_OK, "%s", err);
  uint32_t *big_in = calloc(4 * cfg.elems, 4), *big_out = calloc(4 * cfg.elems, 4);
  cr_assert_eq(pod_collective(&cfg, big_in, big_out, &st, err, sizeof err), RT_INVALID);
  cr_assert(strstr(err, "a queue holds") != NULL, "%s", err);
  free(big_in), free(big_out);
}

/* Two all-reduces at once on the two halves of a 4x4 pod (2x4 slices: a 2-chip mesh in X,
 * a ring in Y), each checked against its own golden model. */
Test(collective, concurrent_slices_each_get_their_own_sums) {
  const unsigned lanes = 4, lines = 150;
  pod_config_t pc = test_machine(4, 4, 4, 4);
  pc.link_latency = 1, pc.chip.hbm_bytes = 1u << 20, pc.chip.hbm_bytes_per_cycle = 64, pc.chip.hbm_latency = 10;
  char err[2048];
  pod_t *pod = pod_new(&pc, err, sizeof err);
  cr_assert_not_null(pod, "%s", err);
  pod_coll_job_t jobs[2] = {{{0, 0, 2, 4, 4, 4}, {FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 0, lines, 8, 0, false}, 0, {0}},
                            {{2, 0, 2, 4, 4, 4}, {FW_COLL_ALLREDUCE, FW_COLL_RING, 0, lines, 5, 0, false}, 0, {0}}};
  uint32_t *in[2], *want[2];
  rng_t r;
  rng_seed(&r, test_seed() * 77);
  for (unsigned j = 0; j < 2; j++) {
    in[j] = calloc(8 * lines * lanes, 4), want[j] = calloc(8 * lines * lanes, 4);
    for (unsigned c = 0; c < 8; c++) {
      for (unsigned e = 0; e < lines * lanes; e++) in[j][c * lines * lanes + e] = random_fp32(&r);
      const fw_slice_t *s = &jobs[j].slice;
      cr_assert_eq(chip_hbm_write(pod_chip(pod, s->x0 + c % 2, s->y0 + c / 2), 0, in[j] + c * lines * lanes,
                                  lines * lanes * 4), 0);
    }
    coll_golden(&jobs[j].slice, &jobs[j].args, lanes, in[j], want[j]);
  }
  cr_assert_eq(pod_coll_run_jobs(pod, jobs, 2, NULL, 0, err, sizeof err), 0, "%s", err);
  for (unsigned j = 0; j < 2; j++) {
    for (unsigned c = 0; c < 8; c++) {
      uint32_t got[150 * 4];
      const fw_slice_t *s = &jobs[j].slice;
      cr_assert_eq(chip_hbm_read(pod_chip(pod, s->x0 + c % 2, s->y0 + c / 2), 0, got, sizeof got), 0);
      for (unsigned e = 0; e < lines * lanes; e++)
        cr_assert_eq(got[e], want[j][c * lines * lanes + e], "slice %u chip %u value %u: 0x%08x, golden 0x%08x", j,
                     c, e, got[e], want[j][c * lines * lanes + e]);
    }
    cr_assert_eq(chip_slice_drops(pod_chip(pod, jobs[j].slice.x0, 0)), 0);
    cr_assert_eq(jobs[j].stats.sems_left, 0, "slice %u: %u semaphores left non-zero", j, jobs[j].stats.sems_left);
    free(in[j]), free(want[j]);
  }
  pod_free(pod);
}

Test(collective, mesh_ring_closing_back_along_the_slice) {
  /* 5 of 8 chips in X: the ring's closing hop runs 4 hops back inside the slice */
  check(8, 1, (fw_slice_t){1, 0, 5, 1, 8, 1}, FW_COLL_ALLREDUCE, FW_COLL_RING, 999, 0);
  check(8, 2, (fw_slice_t){2, 0, 5, 2, 8, 2}, FW_COLL_ALLREDUCE, FW_COLL_RING, 1234, 0);
}

Test(collective, several_mib_per_chip) {
  check(2, 2, whole(2, 2), FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 3u << 18, 0); /* 786432 values: 3 MiB a chip */
}

Test(collective, broadcast_from_any_root) {
  /* roots in the corner and the middle; torus, mesh and 1-D slices; odd sizes */
  for (unsigned root = 0; root < 16; root += 5) {
    check_root(4, 4, whole(4, 4), root, 1001);
  }
  check_root(6, 1, (fw_slice_t){1, 0, 5, 1, 6, 1}, 2, 77);
  check_root(4, 4, (fw_slice_t){1, 1, 3, 2, 4, 4}, 4, 1);
  check_root(1, 4, whole(1, 4), 3, 4099);
}

Test(collective, all_to_all_on_torus_mesh_and_rings) {
  check(4, 4, whole(4, 4), FW_COLL_ALL_TO_ALL, FW_COLL_RING, 16 * 37, 0);
  check(2, 2, whole(2, 2), FW_COLL_ALL_TO_ALL, FW_COLL_RING, 4, 0);
  check(5, 1, whole(5, 1), FW_COLL_ALL_TO_ALL, FW_COLL_RING, 5 * 9, 0);
  check(4, 4, (fw_slice_t){0, 1, 3, 3, 4, 4}, FW_COLL_ALL_TO_ALL, FW_COLL_RING, 9 * 12, 0);
}

/* Chip i works (a vector op of 300 (i + 1) lines) before the barrier; nobody may get past
 * it before the slowest has arrived. Without the barrier the fast chips finish early. */
static void run_barrier(unsigned w, unsigned h, bool with_barrier, uint64_t busy[16]) {
  pod_config_t pc = test_machine(w, h, 4, 4);
  pc.link_latency = 1, pc.chip.hbm_bytes = 1u << 20, pc.chip.hbm_bytes_per_cycle = 64, pc.chip.hbm_latency = 10;
  char err[1024];
  pod_t *pod = pod_new(&pc, err, sizeof err);
  cr_assert_not_null(pod, "%s", err);
  fw_slice_t s = {0, 0, w, h, w, h};
  for (unsigned i = 0; i < w * h; i++) {
    fw_prog_t cq, dq;
    fw_prog_init(&cq), fw_prog_init(&dq);
    fw_vec(&cq, ISA_VEC_COPY, 100, 100, 2000, 300 * (i + 1), 0);
    if (with_barrier) cr_assert_eq(fw_barrier(&s, i % w, i / w, 50, &cq, &dq, err, sizeof err), 0, "%s", err);
    fw_vec(&cq, ISA_VEC_COPY, 100, 100, 9000, 10, 0); /* after the barrier */
    fw_halt(&cq), fw_halt(&dq);
    chip_t *c = pod_chip(pod, i % w, i / w);
    test_load(c, ISA_QUEUE_COMPUTE, &cq);
    test_load(c, ISA_QUEUE_DMA, &dq);
    fw_prog_free(&cq), fw_prog_free(&dq);
  }
  uint64_t cycles;
  cr_assert_eq(pod_run(pod, ISA_QMASK_ALL, 1000000, &cycles, err, sizeof err), 0, "%s", err);
  for (unsigned i = 0; i < w * h; i++) {
    busy[i] = pod_busy_until(pod, i % w, i / w);
    if (with_barrier)
      for (unsigned k = 0; k < 32; k++) cr_assert_eq(chip_sem(pod_chip(pod, i % w, i / w), k), 0, "semaphore %u", k);
  }
  pod_free(pod);
}

Test(collective, barrier_holds_everyone_until_the_slowest_arrives) {
  const unsigned shapes[][2] = {{4, 4}, {3, 1}, {1, 5}, {2, 2}};
  for (unsigned t = 0; t < 4; t++) {
    unsigned w = shapes[t][0], h = shapes[t][1], n = w * h;
    uint64_t free_run[16], held[16];
    run_barrier(w, h, false, free_run);
    run_barrier(w, h, true, held);
    uint64_t slowest = free_run[n - 1];  /* chip n-1 has the most work */
    cr_assert_lt(free_run[0] + 300, slowest, "without the barrier chip 0 finishes early");
    for (unsigned i = 0; i < n; i++)
      cr_assert_geq(held[i], slowest - 20, "%ux%u: chip %u left the barrier at %llu, before the slowest (%llu) "
                    "arrived", w, h, i, (unsigned long long)held[i], (unsigned long long)slowest);
  }
}

Test(collective, bf16_inputs_reduce_in_fp32) {
  const fw_slice_t slices[] = {{0, 0, 2, 2, 2, 2}, {0, 0, 4, 1, 4, 1}};
  const fw_coll_algo_t algos[] = {FW_COLL_TORUS2D, FW_COLL_RING};
  for (unsigned t = 0; t < 2; t++)
    for (int op = 0; op < 2; op++) { /* allreduce, reduce_scatter */
      fw_coll_args_t a = {(fw_coll_op_t)op, algos[t], 0, 0, 0, 0, true};
      if (op == FW_COLL_REDUCE_SCATTER) a.algo = FW_COLL_RING;
      check_args(slices[t].pod_w, slices[t].pod_h, slices[t], &a, 333);
    }
}

/* ---- Small-message timing contract (docs/collectives.md, docs/timing.md): a one-line
 * broadcast on 4x4 chips (a line is a 4-flit packet) takes (16 + L) + max over chips of
 * a(c), with a(root) = -1 and a(c) = a(parent) + (16 + L) + the slot of c's stream among
 * the parent's sends (issued in the order +X, -X, +Y, -Y, one per cycle). */
typedef struct {
  unsigned plus, minus;  /* chain lengths each way from the root */
} chains_t;

static chains_t chains(unsigned n, unsigned r, bool ring) {
  chains_t c = {ring ? n / 2 : n - 1 - r, ring ? n - 1 - n / 2 : r};
  return c;
}

static uint64_t broadcast_contract(fw_slice_t s, unsigned root, unsigned L) {
  const unsigned rx = root % s.w, ry = root / s.w, hop = 16 + L;
  chains_t cx = chains(s.w, rx, s.w == s.pod_w), cy = chains(s.h, ry, s.h == s.pod_h);
  int64_t worst = -1;
  for (int dirx = -1; dirx <= 1; dirx++) {          /* the row chain taken, 0: stay at the root */
    unsigned lenx = dirx > 0 ? cx.plus : dirx < 0 ? cx.minus : 0;
    if (dirx != 0 && lenx == 0) continue;
    for (unsigned dx = dirx ? 1 : 0; dx <= lenx; dx++) {
      /* time the chip dx along the row chain has the line */
      int64_t a = -1;
      for (unsigned k = 1; k <= dx; k++) {
        unsigned slot = 0;
        if (k == 1 && dirx < 0 && cx.plus > 0) slot = 1; /* the root sends +X first */
        a += hop + slot;
      }
      /* this row chip's sends: the row forward first (if the chain goes on), then +Y, -Y */
      unsigned first_y = (dirx == 0) ? (cx.plus > 0) + (cx.minus > 0) : (dx < lenx);
      for (int diry = -1; diry <= 1; diry += 2) {
        unsigned leny = diry > 0 ? cy.plus : cy.minus;
        if (leny == 0) continue;
        unsigned slot = first_y + ((diry < 0 && cy.plus > 0) ? 1 : 0);
        int64_t t = a + hop + slot + (int64_t)(leny - 1) * hop;
        if (t > worst) worst = t;
      }
      if (a > worst) worst = a;
    }
  }
  return (uint64_t)(hop + worst);
}

Test(collective, one_line_broadcast_meets_its_timing_contract) {
  const struct {
    unsigned pw, ph;
    fw_slice_t s;
    unsigned root;
  } cases[] = {{8, 1, {0, 0, 8, 1, 8, 1}, 0},  {5, 1, {0, 0, 5, 1, 5, 1}, 3}, {8, 1, {1, 0, 5, 1, 8, 1}, 0},
               {4, 4, {0, 0, 4, 4, 4, 4}, 0},  {4, 4, {0, 0, 4, 4, 4, 4}, 5}, {6, 4, {1, 0, 4, 4, 6, 4}, 0},
               {4, 4, {0, 0, 3, 2, 4, 4}, 4},  {8, 8, {0, 0, 8, 8, 8, 8}, 9}, {1, 6, {0, 0, 1, 6, 1, 6}, 2},
               {5, 3, {0, 0, 5, 3, 5, 3}, 7}};
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (unsigned L = 0; L <= 3; L += 3) {
      pod_coll_config_t cfg = {.machine = test_machine(1, 1, 4, 4)};
      cfg.machine.size_x = cases[i].pw, cfg.machine.size_y = cases[i].ph, cfg.slice = cases[i].s;
      cfg.machine.threads = test_threads(cases[i].ph);
      cfg.args.op = FW_COLL_BROADCAST, cfg.args.root = cases[i].root;
      cfg.elems = 4, cfg.machine.chip.rows = 4, cfg.machine.chip.cols = 4, cfg.machine.link_latency = L, cfg.machine.chip.seed = test_seed();
      const unsigned chips = cases[i].s.w * cases[i].s.h;
      uint32_t in[64 * 4], out[64 * 4];
      for (unsigned k = 0; k < chips * 4; k++) in[k] = 0x3F800000u + k;
      pod_coll_stats_t st;
      char err[1024];
      cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), 0, "%s", err);
      for (unsigned c = 0; c < chips; c++)
        cr_assert_eq(memcmp(out + 4 * c, in + 4 * cases[i].root, 16), 0, "case %u chip %u", i, c);
      fw_slice_t s = cases[i].s;
      cr_assert_eq(st.cycles, broadcast_contract(s, cases[i].root, L),
                   "case %u (%ux%u slice of %ux%u, root %u, L=%u): %llu cycles, contract %llu", i, s.w, s.h, s.pod_w,
                   s.pod_h, cases[i].root, L, (unsigned long long)st.cycles,
                   (unsigned long long)broadcast_contract(s, cases[i].root, L));
    }
}

/* Architecture decision 5: the same inputs give the same outputs and the same cycle count,
 * whatever the reset randomisation (a dependence on an unreset register would show). */
Test(collective, same_inputs_same_cycles_under_any_reset_seed) {
  const uint64_t elems = 3001;
  uint32_t *in = calloc(16 * elems, 4), *out[2] = {calloc(16 * elems, 4), calloc(16 * elems, 4)};
  rng_t r;
  rng_seed(&r, 99);
  for (uint64_t i = 0; i < 16 * elems; i++) in[i] = random_fp32(&r);
  uint64_t cycles[2];
  for (unsigned k = 0; k < 2; k++) {
    pod_coll_config_t cfg = {.machine = test_machine(1, 1, 4, 4)};
    cfg.machine.size_x = 4, cfg.machine.size_y = 4, cfg.slice = whole(4, 4);
    cfg.machine.threads = test_threads(4);
    cfg.args.op = FW_COLL_ALLREDUCE, cfg.args.algo = FW_COLL_TORUS2D;
    cfg.elems = elems, cfg.machine.chip.rows = 4, cfg.machine.chip.cols = 4, cfg.machine.link_latency = 2, cfg.machine.chip.seed = 1000 * test_seed() + k;
    pod_coll_stats_t st;
    char err[1024];
    cr_assert_eq(pod_collective(&cfg, in, out[k], &st, err, sizeof err), 0, "%s", err);
    cycles[k] = st.cycles;
  }
  cr_assert_eq(cycles[0], cycles[1], "cycles differ with the reset seed: %llu, %llu", (unsigned long long)cycles[0],
               (unsigned long long)cycles[1]);
  cr_assert_eq(memcmp(out[0], out[1], 16 * elems * 4), 0, "results differ with the reset seed");
  free(in), free(out[0]), free(out[1]);
}

/* A barrier right after an all-reduce, in the same programs: chips that finish the
 * collective early enter the barrier while others still reduce; its signals must not
 * disturb them (semaphores 30 and 31 only). Results exact, every semaphore back at zero. */
Test(collective, barrier_right_after_a_collective) {
  const unsigned w = 4, h = 4, n = 16, lanes = 4, lines = 301;
  pod_config_t pc = test_machine(w, h, 4, 4);
  pc.link_latency = 1, pc.chip.hbm_bytes = 1u << 20, pc.chip.hbm_bytes_per_cycle = 64, pc.chip.hbm_latency = 10;
  char err[2048];
  pod_t *pod = pod_new(&pc, err, sizeof err);
  cr_assert_not_null(pod, "%s", err);
  const fw_slice_t s = {0, 0, w, h, w, h};
  const fw_coll_args_t a = {FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, 0, lines, 7, 0, false};
  const chip_geometry_t *g = chip_geometry(pod_chip(pod, 0, 0));
  uint32_t *in = calloc(n * lines * lanes, 4), *want = calloc(n * lines * lanes, 4), got[301 * 4];
  rng_t r;
  rng_seed(&r, test_seed() * 5 + 3);
  for (unsigned i = 0; i < n * lines * lanes; i++) in[i] = random_fp32(&r);
  coll_golden(&s, &a, lanes, in, want);
  const uint32_t scratch = lines + fw_coll_scratch_lines(&a);
  for (unsigned c = 0; c < n; c++) {
    chip_t *chip = pod_chip(pod, c % w, c / w);
    cr_assert_eq(chip_hbm_write(chip, 0, in + c * lines * lanes, lines * lanes * 4), 0);
    fw_prog_t cq, dq;
    fw_prog_init(&cq), fw_prog_init(&dq);
    /* load, all-reduce, barrier, store: one program pair */
    fw_dma_hbm_to_vmem(&dq, 29, 1, 0, 16, 0, lines, 16);
    fw_sem_wait(&dq, 29, 1);
    cr_assert_eq(fw_collective(g, &s, &a, c % w, c / w, &cq, &dq, err, sizeof err), 0, "%s", err);
    cr_assert_eq(fw_barrier(&s, c % w, c / w, scratch, &cq, &dq, err, sizeof err), 0, "%s", err);
    fw_dma_vmem_to_hbm(&dq, 29, 1, 0, 0, 16, lines, 16);
    fw_sem_wait(&dq, 29, 1);
    fw_halt(&cq), fw_halt(&dq);
    test_load(chip, ISA_QUEUE_COMPUTE, &cq);
    test_load(chip, ISA_QUEUE_DMA, &dq);
    fw_prog_free(&cq), fw_prog_free(&dq);
  }
  uint64_t cycles;
  cr_assert_eq(pod_run(pod, ISA_QMASK_ALL, 2000000, &cycles, err, sizeof err), 0, "%s", err);
  for (unsigned c = 0; c < n; c++) {
    chip_t *chip = pod_chip(pod, c % w, c / w);
    cr_assert_eq(chip_hbm_read(chip, 0, got, sizeof got), 0);
    cr_assert_eq(memcmp(got, want + c * lines * lanes, sizeof got), 0, "chip %u: the all-reduce differs", c);
    for (unsigned k = 0; k < 32; k++) cr_assert_eq(chip_sem(chip, k), 0, "chip %u semaphore %u", c, k);
  }
  free(in), free(want);
  pod_free(pod);
}

/* Wide flits (fast model only: docs/fidelity.md "ICI"): a flit of W 64-bit words carries W
 * words of a line, so a link moves 8 W bytes a cycle. Every op and algorithm on 16x16 chips
 * (8-word lines) with 2-, 4- and 8-word flits, every value bit-exact against the golden model
 * (it knows nothing of flits), on one thread and on two; a big all-reduce's cycles fall as
 * the flits widen. */
static uint64_t run_wide(fw_coll_op_t op, fw_coll_algo_t algo, unsigned w, unsigned threads, uint64_t elems,
                         unsigned link_bytes) {
  const fw_slice_t s = {0, 0, 4, 4, 4, 4};
  pod_config_t machine = test_machine(4, 4, 16, 16);
  machine.chip.model = CHIP_MODEL_FAST, machine.chip.seed = 7, machine.chip.flit_words = w;
  machine.threads = threads, machine.link_latency = 1, machine.link_bytes = link_bytes;
  pod_coll_config_t cfg = {.machine = machine, .slice = s, .elems = elems};
  cfg.args = (fw_coll_args_t){op, algo, 0, 0, 0, 0, false};
  uint32_t *in = calloc(16 * elems, 4), *out = calloc(16 * elems, 4);
  rng_t r;
  rng_seed(&r, 99 + w);
  for (uint64_t i = 0; i < 16 * elems; i++) in[i] = random_fp32(&r);
  pod_coll_stats_t st;
  char err[2048];
  cr_assert_eq(pod_collective(&cfg, in, out, &st, err, sizeof err), 0, "%u-word flits: %s", w, err);
  coll_check_t chk;
  cr_assert_eq(coll_golden_check(&s, &cfg.args, 16, elems, in, out, &chk), 0);
  cr_assert_eq(chk.mismatches, 0, "op %d algo %d, %u-word flits: %llu values differ; the first: chip %u value %llu: "
               "0x%08x, golden 0x%08x", op, algo, w, (unsigned long long)chk.mismatches, chk.first_chip,
               (unsigned long long)chk.first_value, chk.got, chk.want);
  cr_assert_eq(st.sems_left, 0);
  free(in), free(out);
  return st.cycles;
}

Test(collective, wide_flits_are_bit_exact_and_faster) {
  static const struct { fw_coll_op_t op; fw_coll_algo_t algo; } ops[] = {
      {FW_COLL_ALLREDUCE, FW_COLL_TORUS2D}, {FW_COLL_ALLREDUCE, FW_COLL_RING}, {FW_COLL_REDUCE_SCATTER, FW_COLL_RING},
      {FW_COLL_ALL_GATHER, FW_COLL_RING},  {FW_COLL_BROADCAST, FW_COLL_RING}, {FW_COLL_ALL_TO_ALL, FW_COLL_RING}};
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (unsigned w = 2; w <= 8; w *= 2) {
      const uint64_t one = run_wide(ops[i].op, ops[i].algo, w, 1, 16 * 1024, 0);
      cr_assert_eq(run_wide(ops[i].op, ops[i].algo, w, 2, 16 * 1024, 0), one, "op %d, %u-word flits: two threads' cycles",
                   ops[i].op, w);
      /* a link slower than a flit a cycle (pod_config_t.link_bytes): the same bits, more cycles, the
       * same on two threads */
      const uint64_t slow = run_wide(ops[i].op, ops[i].algo, w, 1, 16 * 1024, 6 * w);
      cr_assert_geq(slow, one, "op %d, %u-word flits at %u bytes a cycle", ops[i].op, w, 6 * w);
      cr_assert_eq(run_wide(ops[i].op, ops[i].algo, w, 2, 16 * 1024, 6 * w), slow);
    }
  uint64_t last = UINT64_MAX;
  for (unsigned w = 1; w <= 8; w *= 2) {
    const uint64_t c = run_wide(FW_COLL_ALLREDUCE, FW_COLL_TORUS2D, w, 1, 64 * 1024, 0);
    cr_assert_lt(c, last, "%u-word flits: %llu cycles, no fewer than the narrower flits' %llu", w,
                 (unsigned long long)c, (unsigned long long)last);
    last = c;
  }
}

/* Wide flits are refused where they cannot run: the RTL (and the lockstep), a flit wider than a
 * VMEM line or not a power of two. */
Test(collective, wide_flits_are_refused_where_they_cannot_run) {
  char err[256];
  cr_assert_neq(chip_flit_words_check(2, 16, CHIP_MODEL_RTL, err, sizeof err), 0);
  cr_assert(strstr(err, "fast model only"), "%s", err);
  cr_assert_neq(chip_flit_words_check(4, 4, CHIP_MODEL_FAST, err, sizeof err), 0); /* 4x4: 2-word lines */
  cr_assert_neq(chip_flit_words_check(3, 16, CHIP_MODEL_FAST, err, sizeof err), 0);
  cr_assert(strstr(err, "power of two"), "%s", err);
  cr_assert_eq(chip_flit_words_check(8, 16, CHIP_MODEL_FAST, err, sizeof err), 0);
  cr_assert_eq(chip_flit_words_check(1, 4, CHIP_MODEL_RTL, err, sizeof err), 0);
}
