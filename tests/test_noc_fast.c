/*
 * The fast router (csim/fast/noc_fast.c) held to the RTL router (rtl/noc_router.sv), run once
 * per reset seed:
 *   - networks in lockstep (CHIP_MODEL_CHECK: both models at every node, every output flit,
 *     credit and status bit compared every cycle) under every traffic pattern of `tpusim net`
 *     at loads 0.05, 0.3, 0.6 and 1.0 (past saturation), over 4x4, 8x8, 3x5 and 2x6 pods with
 *     2 and 4 VCs, buffers of 2 and 8 flits and links of 0 and 2 cycles;
 *   - one router in lockstep under random stimulus the network never produces: slices that
 *     change, heads for outside the slice (drops and their delayed credits), destinations
 *     outside the pod, senders that ignore their credits (overflow), spurious credits;
 *   - CHIP_MODEL_FAST alone gives the RTL's results packet for packet;
 *   - the four-local-port router (the chip's) ejects at the port paired with the input;
 *   - an idle router's step changes nothing; tracing a fast network is refused.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "fast/noc_fast.h"
#include "network/noc_net.h"
#include "network/noc_traffic.h"
#include "test_util.h"
#include "util/bits.h"
#include "util/rng.h"
#include "vmodel/noc_router.h"

TestSuite(noc_fast, .timeout = 120);

/* ------------------------------------------------------------------ networks in lockstep */

typedef struct {
  unsigned x, y, vcs, buf, link;
} shape_t;

/* Every combination of shape, VCs, buffer depth and link latency. */
static shape_t config_at(unsigned i) {
  static const unsigned dims[][2] = {{4, 4}, {8, 8}, {3, 5}, {2, 6}};
  static const unsigned vcs[] = {2, 4}, bufs[] = {2, 8}, links[] = {0, 2};
  return (shape_t){dims[i % 4][0], dims[i % 4][1], vcs[(i / 4) % 2], bufs[(i / 8) % 2], links[(i / 16) % 2]};
}
#define CONFIGS 32u

typedef struct {
  noc_pattern_t pattern;
  double rate;
  unsigned index; /* which configurations this case runs */
} lockstep_t;

static const double loads[] = {0.05, 0.3, 0.6, 1.0};
#define LOADS 4u

ParameterizedTestParameters(noc_fast, lockstep_every_pattern_and_load) {
  static lockstep_t cases[NOC_PATTERNS * LOADS];
  unsigned n = 0;
  for (unsigned p = 0; p < NOC_PATTERNS; p++)
    for (unsigned l = 0; l < LOADS; l++) cases[n] = (lockstep_t){(noc_pattern_t)p, loads[l], n}, n++;
  return cr_make_param_array(lockstep_t, cases, n);
}

/* Runs traffic in lockstep; a divergence fails with the network's report. */
static void run_lockstep(const shape_t *s, noc_pattern_t pattern, double rate, unsigned flits, uint64_t seed) {
  noc_config_t cfg = {s->x, s->y, s->vcs, s->buf, s->link, seed, CHIP_MODEL_CHECK};
  char err[256];
  noc_net_t *net = noc_net_new(&cfg, err, sizeof err);
  cr_assert_not_null(net, "%s", err);
  noc_run_t run = {.pattern = pattern, .rate = rate, .packet_flits = flits, .warmup = 200, .measure = 1500,
                   .drain_max = 3000, .watchdog = 3000, .seed = seed * 31 + pattern};
  noc_result_t r;
  cr_assert_eq(noc_run_traffic(net, &run, &r), 0);
  const char *div = noc_net_divergence(net);
  cr_assert_null(div, "%ux%u %u VCs x %u, L %u, %s at %.2f, %u-flit packets: %s", s->x, s->y, s->vcs, s->buf, s->link,
                 noc_pattern_name(pattern), rate, flits, div);
  cr_assert(noc_result_clean(&r), "%ux%u %s at %.2f: lost %llu corrupted %llu stuck %d %s", s->x, s->y,
            noc_pattern_name(pattern), rate, (unsigned long long)r.lost, (unsigned long long)r.corrupted, r.stuck,
            r.stuck_report);
  cr_assert_gt(noc_net_scoreboard(net)->delivered_packets, 0);
  noc_net_free(net);
}

/* Each (pattern, load) case runs four of the 32 configurations, and the seed shifts which, so
 * every configuration meets every load across the cases and the seeds; packets of 1 to 4 flits. */
ParameterizedTest(lockstep_t *c, noc_fast, lockstep_every_pattern_and_load, .timeout = 300) {
  const uint64_t seed = test_seed();
  for (unsigned k = 0; k < 4; k++) {
    shape_t s = config_at((unsigned)(4 * c->index + k + 5 * seed) % CONFIGS);
    if (c->pattern == NOC_TRANSPOSE && s.x != s.y) s.y = s.x; /* transpose needs a square pod */
    run_lockstep(&s, c->pattern, c->rate, 1 + (c->index + k) % 4, seed);
  }
}

/* ------------------------------------------------------------------ fast alone = RTL */

static noc_net_t *run_model(const shape_t *s, chip_model_t model, noc_pattern_t pattern, double rate, unsigned flits,
                            noc_result_t *r) {
  noc_config_t cfg = {s->x, s->y, s->vcs, s->buf, s->link, test_seed(), model};
  char err[256];
  noc_net_t *net = noc_net_new(&cfg, err, sizeof err);
  cr_assert_not_null(net, "%s", err);
  noc_run_t run = {.pattern = pattern, .rate = rate, .packet_flits = flits, .warmup = 200, .measure = 1000,
                   .drain_max = 2000, .watchdog = 5000, .seed = test_seed() * 17 + 3};
  cr_assert_eq(noc_run_traffic(net, &run, r), 0);
  return net;
}

Test(noc_fast, fast_alone_gives_the_rtl_results, .timeout = 300) {
  const shape_t shapes[] = {{8, 8, 4, 8, 0}, {5, 3, 2, 2, 2}, {4, 4, 4, 1, 1}};
  const double rates[] = {0.1, 0.45, 0.9};
  const noc_pattern_t patterns[] = {NOC_UNIFORM, NOC_BITCOMP, NOC_HOTSPOT};
  for (unsigned i = 0; i < 3; i++) {
    noc_result_t a, b;
    noc_net_t *rtl = run_model(&shapes[i], CHIP_MODEL_RTL, patterns[i], rates[i], 1 + i, &a);
    noc_net_t *fast = run_model(&shapes[i], CHIP_MODEL_FAST, patterns[i], rates[i], 1 + i, &b);
    const noc_scoreboard_t *sa = noc_net_scoreboard(rtl), *sb = noc_net_scoreboard(fast);
    cr_assert_eq(memcmp(sa, sb, sizeof *sa), 0, "scoreboards differ");
    cr_assert_eq(noc_net_cycle(rtl), noc_net_cycle(fast));
    cr_assert_eq(noc_net_packet_count(rtl), noc_net_packet_count(fast));
    for (uint32_t id = 0; id < noc_net_packet_count(rtl); id++)
      cr_assert_eq(noc_net_packet(rtl, id)->delivered, noc_net_packet(fast, id)->delivered, "packet %u", id);
    cr_assert_eq(a.packets, b.packets);
    cr_assert_eq(a.avg_latency, b.avg_latency);
    cr_assert_eq(a.p99_latency, b.p99_latency);
    cr_assert_eq(a.accepted, b.accepted);
    cr_assert_eq(a.saturated, b.saturated);
    cr_assert(noc_result_clean(&b), "lost %llu stuck %d %s overflow %d", (unsigned long long)b.lost, b.stuck, b.stuck_report, b.overflow);
    noc_net_free(rtl);
    noc_net_free(fast);
  }
}

Test(noc_fast, tracing_a_fast_network_is_refused) {
  noc_config_t cfg = {2, 2, 2, 8, 0, 1, CHIP_MODEL_FAST};
  char err[256];
  noc_net_t *net = noc_net_new(&cfg, err, sizeof err);
  cr_assert_not_null(net, "%s", err);
  cr_assert_eq(noc_net_trace(net, 0, "/tmp/never.fst", err, sizeof err), -1);
  cr_assert(strstr(err, "a fast model has no waveform"), "%s", err);
  noc_net_free(net);
}

/* ------------------------------------------------------------------ one router, random stimulus */

#define PORTS 5u
#define WORDS 12u

typedef struct {
  unsigned credits[8];   /* the sender's credits per VC */
  unsigned left[8];      /* flits of the packet under way on each VC, 0 when none */
  uint32_t id[8];
} sender_t;

typedef struct {
  vmodel_t *m;
  noc_fast_t *f;
  int in, out, cin, cout, ovf, occ, drops, dbg_vc, dbg_cnt, slice;
  unsigned vcs, fw;
} pair_t;

static void pack_flit(uint32_t *w, unsigned fw, unsigned vcs, unsigned p, const noc_flit_t *f) {
  unsigned off = p * fw, vcb = NOC_VC_BITS(vcs);
  bits_put(w, off, 64, f->data);
  bits_put(w, off + 64, vcb, f->vc);
  bits_put(w, off + 64 + vcb, 3, (uint64_t)f->tail | (uint64_t)f->head << 1 | (uint64_t)f->valid << 2);
}

static noc_flit_t unpack_flit(const uint32_t *w, unsigned fw, unsigned vcs, unsigned p) {
  unsigned off = p * fw, vcb = NOC_VC_BITS(vcs);
  noc_flit_t f;
  f.data = bits_get(w, off, 64);
  f.vc = (uint8_t)bits_get(w, off + 64, vcb);
  f.tail = bits_get(w, off + 64 + vcb, 1);
  f.head = bits_get(w, off + 64 + vcb + 1, 1);
  f.valid = bits_get(w, off + 64 + vcb + 2, 1);
  return f;
}

static void pair_new(pair_t *pr, unsigned vcs, unsigned depth, unsigned x, unsigned y, unsigned sx, unsigned sy) {
  pr->vcs = vcs;
  pr->fw = NOC_FLIT_BITS(vcs);
  pr->m = noc_router_new(vcs, test_seed() * 7 + x);
  cr_assert_not_null(pr->m);
  vmodel_t *m = pr->m;
  vmodel_poke(m, vmodel_port(m, "my_x_i"), x);
  vmodel_poke(m, vmodel_port(m, "my_y_i"), y);
  vmodel_poke(m, vmodel_port(m, "size_x_i"), sx);
  vmodel_poke(m, vmodel_port(m, "size_y_i"), sy);
  vmodel_poke(m, vmodel_port(m, "buf_depth_i"), depth);
  pr->slice = vmodel_port(m, "slice_i");
  vmodel_poke(m, pr->slice, 0);
  pr->in = vmodel_port(m, "in_flit_i");
  pr->out = vmodel_port(m, "out_flit_o");
  pr->cin = vmodel_port(m, "credit_in_i");
  pr->cout = vmodel_port(m, "credit_out_o");
  pr->ovf = vmodel_port(m, "overflow_o");
  pr->occ = vmodel_port(m, "occupancy_o");
  pr->drops = vmodel_port(m, "drops_o");
  pr->dbg_vc = vmodel_port(m, "dbg_vc_i");
  pr->dbg_cnt = vmodel_port(m, "dbg_count_o");
  uint32_t zero[WORDS] = {0};
  vmodel_poke_words(m, pr->in, zero);
  vmodel_poke(m, pr->cin, 0);
  vmodel_reset(m, 2);
  noc_fast_config_t fc = {.vcs = vcs, .num_local = 1, .x = x, .y = y, .size_x = sx, .size_y = sy, .buf_depth = depth};
  char err[256];
  pr->f = noc_fast_new(&fc, err, sizeof err);
  cr_assert_not_null(pr->f, "%s", err);
}

static void pair_free(pair_t *pr) {
  vmodel_free(pr->m);
  noc_fast_free(pr->f);
}

/* One edge of both models with the same inputs, then every output compared. */
static void pair_step(pair_t *pr, const noc_flit_t *in, uint32_t credits, uint32_t slice, uint64_t cycle, rng_t *rng) {
  uint32_t w[WORDS] = {0};
  for (unsigned p = 0; p < PORTS; p++) pack_flit(w, pr->fw, pr->vcs, p, &in[p]);
  vmodel_poke_words(pr->m, pr->in, w);
  vmodel_poke(pr->m, pr->cin, credits);
  vmodel_poke(pr->m, pr->slice, slice);
  noc_fast_set_slice(pr->f, slice);
  vmodel_step(pr->m, 1);
  noc_fast_step(pr->f, in, credits);
  vmodel_peek_words(pr->m, pr->out, w);
  const noc_flit_t *fo = noc_fast_out(pr->f);
  for (unsigned p = 0; p < PORTS; p++) {
    noc_flit_t r = unpack_flit(w, pr->fw, pr->vcs, p);
    cr_assert(r.valid == fo[p].valid && r.head == fo[p].head && r.tail == fo[p].tail && r.vc == fo[p].vc &&
                  r.data == fo[p].data,
              "cycle %llu output %u: RTL {%d %d %d vc %u %016llx} fast {%d %d %d vc %u %016llx}",
              (unsigned long long)cycle, p, r.valid, r.head, r.tail, r.vc, (unsigned long long)r.data, fo[p].valid,
              fo[p].head, fo[p].tail, fo[p].vc, (unsigned long long)fo[p].data);
  }
  cr_assert_eq(vmodel_peek(pr->m, pr->cout), noc_fast_credit_out(pr->f), "cycle %llu credit_out",
               (unsigned long long)cycle);
  cr_assert_eq(vmodel_peek(pr->m, pr->occ), noc_fast_occupancy(pr->f), "cycle %llu occupancy",
               (unsigned long long)cycle);
  cr_assert_eq(vmodel_peek(pr->m, pr->ovf), noc_fast_overflow(pr->f), "cycle %llu overflow", (unsigned long long)cycle);
  cr_assert_eq(vmodel_peek(pr->m, pr->drops), noc_fast_drops(pr->f), "cycle %llu drops", (unsigned long long)cycle);
  unsigned probe = (unsigned)rng_below(rng, PORTS * pr->vcs);
  vmodel_poke(pr->m, pr->dbg_vc, probe);
  cr_assert_eq(vmodel_peek(pr->m, pr->dbg_cnt), noc_fast_vc_count(pr->f, probe / pr->vcs, probe % pr->vcs),
               "cycle %llu dbg_count of input VC %u", (unsigned long long)cycle, probe);
}

/* A random slice {h, w, y0, x0} of an sx x sy pod, or none (w = 0). */
static uint32_t random_slice(rng_t *rng, unsigned sx, unsigned sy) {
  if (rng_below(rng, 3) == 0) return 0;
  unsigned x0 = (unsigned)rng_below(rng, sx), y0 = (unsigned)rng_below(rng, sy);
  unsigned w = 1 + (unsigned)rng_below(rng, sx - x0), h = 1 + (unsigned)rng_below(rng, sy - y0);
  return h << 24 | w << 16 | y0 << 8 | x0;
}

/* The next flit a sender offers on port p, if any: continues a packet under way on a VC or
 * starts one; heads go to random nodes (now and then outside the pod); a sender usually
 * waits for credits, but 1 in `cheat` flits it does not. */
static noc_flit_t sender_flit(sender_t *s, rng_t *rng, unsigned vcs, unsigned sx, unsigned sy, unsigned cheat,
                              uint32_t *next_id) {
  noc_flit_t f = {0};
  unsigned v = (unsigned)rng_below(rng, vcs);
  bool ignore_credits = cheat && rng_below(rng, cheat) == 0;
  if (!s->credits[v] && !ignore_credits) return f;
  f.valid = true;
  f.vc = (uint8_t)v;
  if (!s->left[v]) {
    unsigned dx = (unsigned)rng_below(rng, sx), dy = (unsigned)rng_below(rng, sy);
    if (rng_below(rng, 50) == 0) dx = (unsigned)rng_below(rng, 256), dy = (unsigned)rng_below(rng, 256);
    s->left[v] = 1 + (unsigned)rng_below(rng, 4);
    s->id[v] = (*next_id)++;
    f.head = true;
    f.data = dx | dy << 8 | (uint64_t)s->left[v] << 16 | (uint64_t)s->id[v] << 32;
  } else {
    f.data = rng_next(rng);
  }
  f.tail = --s->left[v] == 0;
  if (s->credits[v]) s->credits[v]--;
  return f;
}

typedef struct {
  unsigned vcs, depth, x, y, sx, sy, cheat;
} fuzz_t;

ParameterizedTestParameters(noc_fast, one_router_random_stimulus) {
  static fuzz_t cases[] = {
      {4, 8, 1, 2, 4, 4, 0},  {2, 2, 0, 0, 8, 8, 0},   {4, 3, 7, 7, 8, 8, 0}, {2, 8, 1, 0, 2, 6, 0},
      {4, 1, 2, 1, 5, 3, 0},  {4, 8, 3, 3, 8, 8, 200}, {2, 4, 0, 4, 3, 5, 50}, {4, 2, 5, 0, 6, 2, 100},
  };
  return cr_make_param_array(fuzz_t, cases, sizeof cases / sizeof cases[0]);
}

/* Downstream of each output VC, each owed credit comes back with probability 1/2 a cycle (and,
 * with cheating senders, now and then one that was never owed: the network never does these
 * things, the RTL and the fast model must still agree). */
ParameterizedTest(fuzz_t *c, noc_fast, one_router_random_stimulus, .timeout = 120) {
  pair_t pr;
  pair_new(&pr, c->vcs, c->depth, c->x, c->y, c->sx, c->sy);
  rng_t rng;
  rng_seed(&rng, test_seed() * 1000 + c->vcs * 100 + c->depth * 10 + c->x);
  sender_t snd[PORTS];
  memset(snd, 0, sizeof snd);
  for (unsigned p = 0; p < PORTS; p++)
    for (unsigned v = 0; v < c->vcs; v++) snd[p].credits[v] = c->depth;
  unsigned owed[PORTS * 8] = {0}; /* per output VC: credits downstream still has to return */
  uint32_t slice = 0, next_id = 1;
  unsigned busy = 40; /* percent of cycles a port offers a flit, changing in phases */
  for (uint64_t cycle = 0; cycle < 30000; cycle++) {
    if (cycle % 1000 == 0) busy = 5 + (unsigned)rng_below(&rng, 96);
    if (rng_below(&rng, 2000) == 0) slice = random_slice(&rng, c->sx, c->sy);
    noc_flit_t in[PORTS];
    for (unsigned p = 0; p < PORTS; p++) {
      in[p] = (noc_flit_t){0};
      if (rng_below(&rng, 100) < busy) in[p] = sender_flit(&snd[p], &rng, c->vcs, c->sx, c->sy, c->cheat, &next_id);
    }
    uint32_t credits = 0;
    for (unsigned i = 0; i < PORTS * c->vcs; i++) {
      if (owed[i] && rng_below(&rng, 2)) {
        owed[i]--;
        credits |= 1u << i;
      }
    }
    if (c->cheat && rng_below(&rng, c->cheat) == 0) credits |= 1u << rng_below(&rng, PORTS * c->vcs);
    pair_step(&pr, in, credits, slice, cycle, &rng);
    /* the router's outputs: owe their credits; its credits: back to the senders */
    const noc_flit_t *out = noc_fast_out(pr.f);
    for (unsigned o = 0; o < PORTS; o++)
      if (out[o].valid) owed[o * c->vcs + out[o].vc]++;
    uint32_t back = noc_fast_credit_out(pr.f);
    for (unsigned i = 0; i < PORTS * c->vcs; i++)
      if ((back >> i) & 1) snd[i / c->vcs].credits[i % c->vcs]++;
  }
  pair_free(&pr);
}

/* ------------------------------------------------------------------ the fast model alone */

static noc_fast_t *fast_router(unsigned num_local, unsigned x, unsigned y, unsigned sx, unsigned sy) {
  noc_fast_config_t fc = {.vcs = 4, .num_local = num_local, .x = x, .y = y, .size_x = sx, .size_y = sy, .buf_depth = 8};
  char err[256];
  noc_fast_t *f = noc_fast_new(&fc, err, sizeof err);
  cr_assert_not_null(f, "%s", err);
  return f;
}

static noc_flit_t head_for(unsigned x, unsigned y, unsigned vc) {
  return (noc_flit_t){.data = x | y << 8 | 1u << 16, .vc = (uint8_t)vc, .valid = true, .head = true, .tail = true};
}

/* With four local ports a packet for this router leaves at the port paired with its input:
 * +X (and local) at 0, -X at 5, +Y at 6, -Y at 7 (docs/noc.md); two cycles after it arrives. */
Test(noc_fast, four_local_ports_eject_by_input) {
  const unsigned input[] = {0, 1, 2, 3, 4, 5, 6, 7}, want[] = {0, 0, 5, 6, 7, 0, 0, 0};
  for (unsigned i = 0; i < 8; i++) {
    noc_fast_t *f = fast_router(4, 2, 2, 4, 4);
    cr_assert_eq(noc_fast_ports(f), 8);
    noc_flit_t in[8] = {{0}}, none[8] = {{0}};
    in[input[i]] = head_for(2, 2, 1);
    noc_fast_step(f, in, 0);
    for (unsigned p = 0; p < 8; p++) cr_assert(!noc_fast_out(f)[p].valid);
    cr_assert_eq(noc_fast_occupancy(f), 1);
    noc_fast_step(f, none, 0);
    for (unsigned p = 0; p < 8; p++)
      cr_assert_eq(noc_fast_out(f)[p].valid, p == want[i], "input %u: output %u", input[i], p);
    cr_assert_eq(noc_fast_credit_out(f), 1u << (input[i] * 4 + 1), "the credit goes back to input %u VC 1", input[i]);
    noc_fast_free(f);
  }
}

/* The local ports 5..7 are inputs like port 0: a head for outside the slice is dropped there. */
Test(noc_fast, four_local_ports_drop_outside_the_slice) {
  noc_fast_t *f = fast_router(4, 0, 0, 4, 4);
  noc_fast_set_slice(f, 2u << 24 | 2u << 16); /* the 2x2 slice at (0,0) */
  noc_flit_t in[8] = {{0}}, none[8] = {{0}};
  in[6] = head_for(3, 3, 2);
  noc_fast_step(f, in, 0);
  cr_assert_eq(noc_fast_drops(f), 1);
  cr_assert_eq(noc_fast_occupancy(f), 0);
  cr_assert(!noc_fast_idle(f), "the dropped flit's credit is still to be returned");
  noc_fast_step(f, none, 0);
  cr_assert_eq(noc_fast_credit_out(f), 1u << (6 * 4 + 2));
  noc_fast_step(f, none, 0);
  cr_assert(noc_fast_idle(f));
  noc_fast_free(f);
}

/* An idle router's edge with nothing arriving changes nothing (the network skips it). */
Test(noc_fast, idle_router_edge_changes_nothing) {
  noc_fast_t *f = fast_router(1, 1, 1, 4, 4);
  noc_flit_t in[5] = {{0}}, none[5] = {{0}};
  in[0] = head_for(2, 1, 0);
  noc_fast_step(f, in, 0);
  cr_assert(!noc_fast_idle(f));
  for (int i = 0; i < 3; i++) noc_fast_step(f, none, 0);
  cr_assert(noc_fast_idle(f));
  noc_flit_t before[5];
  memcpy(before, noc_fast_out(f), sizeof before);
  noc_fast_step(f, none, 0);
  cr_assert(noc_fast_idle(f));
  cr_assert_eq(memcmp(before, noc_fast_out(f), sizeof before), 0);
  cr_assert_eq(noc_fast_credit_out(f), 0);
  noc_fast_free(f);
}

Test(noc_fast, bad_configurations_are_refused) {
  char err[256];
  noc_fast_config_t fc = {.vcs = 3, .num_local = 1, .x = 0, .y = 0, .size_x = 4, .size_y = 4, .buf_depth = 8};
  cr_assert_null(noc_fast_new(&fc, err, sizeof err));
  cr_assert(strstr(err, "power of two"), "%s", err);
  fc.vcs = 8;
  cr_assert_null(noc_fast_new(&fc, err, sizeof err));
  cr_assert(strstr(err, "at most 32 input VCs"), "%s", err);
  fc.vcs = 4, fc.num_local = 2;
  cr_assert_null(noc_fast_new(&fc, err, sizeof err));
  fc.num_local = 1, fc.buf_depth = 9;
  cr_assert_null(noc_fast_new(&fc, err, sizeof err));
  fc.buf_depth = 8, fc.x = 4;
  cr_assert_null(noc_fast_new(&fc, err, sizeof err));
}
