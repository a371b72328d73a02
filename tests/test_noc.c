/*
 * RTL tests of the torus router (rtl/noc_router.sv) in networks wired by csim/network/noc_net.c:
 * the zero-load latency contract of docs/noc.md for every source/destination pair on 4x4
 * (2 and 4 VCs, several link latencies and packet lengths) and for wraparound paths on
 * 8x8; clean scoreboards under load with every pattern and minimal buffers; the watchdog
 * and the configuration checks (the router model among them; --model's names in the model
 * enum's order). Run once per reset seed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "network/noc_net.h"
#include "network/noc_traffic.h"
#include "test_util.h"
#include "vmodel/noc_router.h"

static unsigned ring_hops(unsigned a, unsigned b, unsigned k) {
  unsigned d = a > b ? a - b : b - a;
  return d < k - d ? d : k - d;
}

/* Contract: latency = F + H * (2 + L) cycles from creation to tail ejection. */
static unsigned contract(unsigned hops, unsigned flits, unsigned link) { return flits + hops * (2 + link); }

static noc_net_t *make_net(unsigned x, unsigned y, unsigned vcs, unsigned buf, unsigned link) {
  noc_config_t cfg = {x, y, vcs, buf, link, test_seed(), CHIP_MODEL_RTL};
  char err[256];
  noc_net_t *net = noc_net_new(&cfg, err, sizeof err);
  cr_assert_not_null(net, "%s", err);
  return net;
}

/* Sends one packet into an empty network and checks its latency against the contract. */
static void check_zero_load(noc_net_t *net, unsigned src, unsigned dst, unsigned flits) {
  const noc_config_t *c = noc_net_config(net);
  unsigned X = c->size_x, Y = c->size_y;
  unsigned hops = ring_hops(src % X, dst % X, X) + ring_hops(src / X, dst / X, Y);
  uint32_t id = noc_net_send(net, src, dst, flits, true);
  for (int i = 0; i < 2000 && noc_net_in_flight(net); i++) noc_net_step(net);
  const noc_packet_t *p = noc_net_packet(net, id);
  cr_assert_neq(p->delivered, UINT64_MAX, "packet %u->%u never arrived", src, dst);
  unsigned want = contract(hops, flits, c->link_latency);
  cr_assert_eq(p->delivered - p->created, want, "%ux%u VCs %u L %u: (%u,%u)->(%u,%u), %u flits, %u hops: %llu cycles, contract %u",
               X, Y, c->vcs, c->link_latency, src % X, src / X, dst % X, dst / X, flits, hops,
               (unsigned long long)(p->delivered - p->created), want);
  /* let credits return before the next packet so it sees an idle network */
  for (unsigned i = 0; i < 4 + 2 * c->link_latency; i++) noc_net_step(net);
}

static void check_scoreboard_clean(noc_net_t *net) {
  const noc_scoreboard_t *sb = noc_net_scoreboard(net);
  cr_assert_eq(sb->corrupted, 0);
  cr_assert_eq(sb->duplicated, 0);
  cr_assert_eq(sb->misrouted, 0);
  cr_assert_eq(noc_net_in_flight(net), 0);
  cr_assert(!noc_net_overflow(net));
}

TestSuite(noc, .timeout = 300);

Test(noc, zero_load_latency_every_pair_4x4) {
  const unsigned vcs[] = {2, 4}, links[] = {0, 1, 3}, flits[] = {1, 4};
  for (unsigned a = 0; a < 2; a++) {
    for (unsigned b = 0; b < 3; b++) {
      noc_net_t *net = make_net(4, 4, vcs[a], 8, links[b]);
      for (unsigned f = 0; f < 2; f++)
        for (unsigned s = 0; s < 16; s++)
          for (unsigned d = 0; d < 16; d++) check_zero_load(net, s, d, flits[f]);
      check_scoreboard_clean(net);
      noc_net_free(net);
    }
  }
}

Test(noc, zero_load_latency_across_wraparound_8x8) {
  /* Sources at the edges and the middle of an 8x8 to every node: half of these paths cross
   * a wraparound link, some at distance 4 (the tie). */
  noc_net_t *net = make_net(8, 8, 4, 8, 2);
  const unsigned srcs[] = {0, 7, 56, 63, 27, 4 * 8 + 0};
  for (unsigned i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
    for (unsigned d = 0; d < 64; d++) check_zero_load(net, srcs[i], d, 3);
  check_scoreboard_clean(net);
  noc_net_free(net);
}

Test(noc, non_square_pod_4x2) {
  noc_net_t *net = make_net(4, 2, 2, 4, 0);
  for (unsigned s = 0; s < 8; s++)
    for (unsigned d = 0; d < 8; d++) check_zero_load(net, s, d, 2);
  check_scoreboard_clean(net);
  noc_net_free(net);
}

static void run_clean(unsigned x, unsigned y, unsigned vcs, unsigned buf, unsigned link,
                      noc_pattern_t pat, double rate, unsigned flits) {
  noc_net_t *net = make_net(x, y, vcs, buf, link);
  noc_run_t run = {.pattern = pat, .rate = rate, .packet_flits = flits, .warmup = 200,
                   .measure = 2000, .watchdog = 5000, .seed = test_seed() * 7 + pat};
  noc_result_t r;
  cr_assert_eq(noc_run_traffic(net, &run, &r), 0);
  cr_assert(noc_result_clean(&r), "%s rate %.2f: lost %llu dup %llu corrupted %llu misrouted %llu stuck %d %s",
            noc_pattern_name(pat), rate, (unsigned long long)r.lost, (unsigned long long)r.duplicated,
            (unsigned long long)r.corrupted, (unsigned long long)r.misrouted, r.stuck, r.stuck_report);
  cr_assert_gt(r.packets, 0);
  cr_assert_eq(noc_net_scoreboard(net)->delivered_packets, r.created, "every packet exactly once");
  noc_net_free(net);
}

Test(noc, every_pattern_under_load_is_clean) {
  for (int p = 0; p < NOC_PATTERNS; p++) {
    run_clean(4, 4, 4, 8, 0, (noc_pattern_t)p, 0.6, 4);
    run_clean(4, 4, 2, 1, 2, (noc_pattern_t)p, 0.6, 3);
  }
}

Test(noc, low_load_latency_near_zero_load) {
  /* At 1% load on 8x8 uniform, 1-flit packets, the average latency is the average
   * zero-load latency (average 4 hops: 1 + 4 * 2 = 9) plus a little queueing. */
  noc_net_t *net = make_net(8, 8, 4, 8, 0);
  noc_run_t run = {.pattern = NOC_UNIFORM, .rate = 0.01, .packet_flits = 1, .warmup = 500,
                   .measure = 5000, .watchdog = 5000, .seed = test_seed()};
  noc_result_t r;
  cr_assert_eq(noc_run_traffic(net, &run, &r), 0);
  cr_assert(noc_result_clean(&r));
  /* uniform over the 63 other nodes: mean hops = 4 * 64 / 63 */
  double zero_load = 1 + 2.0 * 4 * 64 / 63;
  cr_assert(r.avg_latency >= zero_load - 0.5 && r.avg_latency < zero_load + 1.0, "avg %.2f, zero-load %.2f",
            r.avg_latency, zero_load);
  noc_net_free(net);
}

Test(noc, bad_configurations_are_refused) {
  char err[256];
  noc_config_t c = {4, 4, 3, 8, 0, 1, CHIP_MODEL_RTL};
  cr_assert_null(noc_net_new(&c, err, sizeof err));
  cr_assert(strstr(err, "no router with 3 VCs"), "%s", err);
  c = (noc_config_t){1, 4, 4, 8, 0, 1, CHIP_MODEL_RTL};
  cr_assert_null(noc_net_new(&c, err, sizeof err));
  cr_assert(strstr(err, "2..255"), "%s", err);
  c = (noc_config_t){4, 4, 4, 0, 0, 1, CHIP_MODEL_RTL};
  cr_assert_null(noc_net_new(&c, err, sizeof err));
  cr_assert(strstr(err, "buffer depth"), "%s", err);
  c = (noc_config_t){4, 4, 4, 8, 0, 1, CHIP_MODELS};
  cr_assert_null(noc_net_new(&c, err, sizeof err));
  cr_assert(strstr(err, "unknown router model"), "%s", err);
  cr_assert_eq(noc_pattern_check(NOC_TRANSPOSE, 4, 8, err, sizeof err), -1);
  noc_pattern_t p;
  cr_assert_eq(noc_pattern_parse("zigzag", &p), -1);
}

/* --model's choice index is the model (CLI_CHOICE): CHIP_MODEL_CHOICES lists the names in enum
 * order, and each name parses back to its model. */
Test(noc, model_choices_are_in_enum_order) {
  char choices[] = CHIP_MODEL_CHOICES;
  unsigned i = 0;
  for (char *save, *name = strtok_r(choices, "|", &save); name; name = strtok_r(NULL, "|", &save), i++) {
    cr_assert_lt(i, CHIP_MODELS, "more choices than models: %s", CHIP_MODEL_CHOICES);
    cr_assert_str_eq(chip_model_name((chip_model_t)i), name);
    chip_model_t m;
    cr_assert_eq(chip_model_parse(name, &m), 0, "%s", name);
    cr_assert_eq(m, (chip_model_t)i);
  }
  cr_assert_eq(i, CHIP_MODELS, "%s names %u of %u models", CHIP_MODEL_CHOICES, i, (unsigned)CHIP_MODELS);
  chip_model_t m;
  cr_assert_eq(chip_model_parse("fastest", &m), -1);
}

Test(noc, patterns_map_as_documented) {
  rng_t rng;
  rng_seed(&rng, 1);
  /* on 8x8: node (x, y) = y * 8 + x */
  cr_assert_eq(noc_pattern_dest(NOC_TRANSPOSE, 8, 8, 1 * 8 + 2, &rng), 2 * 8 + 1);
  cr_assert_eq(noc_pattern_dest(NOC_BITCOMP, 8, 8, 1 * 8 + 2, &rng), 6 * 8 + 5);
  cr_assert_eq(noc_pattern_dest(NOC_TORNADO, 8, 8, 0, &rng), 3 * 8 + 3);
  cr_assert_eq(noc_pattern_dest(NOC_NEIGHBOR, 8, 8, 7 * 8 + 7, &rng), 0);
  for (int i = 0; i < 1000; i++) cr_assert_neq(noc_pattern_dest(NOC_UNIFORM, 8, 8, 5, &rng), 5);
  unsigned hot = 0;
  for (int i = 0; i < 10000; i++) hot += noc_pattern_dest(NOC_HOTSPOT, 8, 8, 0, &rng) == 4 * 8 + 4;
  cr_assert(hot > 1800 && hot < 2300, "hotspot share %u/10000", hot);
}

Test(noc, stuck_report_names_router_port_and_vc) {
  /* Mid-flight, a 4-flit packet from (0,0) to (2,0) sits in router buffers; the report the
   * watchdog prints must name where. */
  noc_net_t *net = make_net(4, 4, 4, 8, 0);
  noc_net_send(net, 0, 2, 4, false);
  noc_net_step(net);
  noc_net_step(net);
  char report[512];
  noc_net_describe_stuck(net, report, sizeof report);
  cr_assert(strstr(report, "router (0,0) input local VC 0 holds"), "%s", report);
  for (int i = 0; i < 100; i++) noc_net_step(net);
  noc_net_describe_stuck(net, report, sizeof report);
  cr_assert(strstr(report, "no flits in any router buffer; 0 packets"), "%s", report);
  check_scoreboard_clean(net);
  noc_net_free(net);
}

Test(noc, ring_of_two_every_pair) {
  noc_net_t *net = make_net(2, 2, 2, 4, 1);
  for (unsigned s = 0; s < 4; s++)
    for (unsigned d = 0; d < 4; d++) check_zero_load(net, s, d, 2);
  check_scoreboard_clean(net);
  noc_net_free(net);
}

Test(noc, overflow_flags_a_sender_that_ignores_credits) {
  /* A router with 2-flit buffers in use; a sender pushes a 6-flit packet into one input VC
   * without waiting for credits. The router forwards 2 flits (its own credits), holds 2,
   * and the next arrivals find the buffer full: overflow must be flagged. */
  vmodel_t *m = noc_router_new(4, test_seed());
  cr_assert_not_null(m);
  vmodel_poke(m, vmodel_port(m, "my_x_i"), 1);
  vmodel_poke(m, vmodel_port(m, "my_y_i"), 1);
  vmodel_poke(m, vmodel_port(m, "size_x_i"), 8);
  vmodel_poke(m, vmodel_port(m, "size_y_i"), 8);
  vmodel_poke(m, vmodel_port(m, "buf_depth_i"), 2);
  vmodel_poke(m, vmodel_port(m, "credit_in_i"), 0);
  int in = vmodel_port(m, "in_flit_i"), ovf = vmodel_port(m, "overflow_o");
  uint32_t words[12] = {0};
  vmodel_poke_words(m, in, words);
  vmodel_reset(m, 2);
  const unsigned fw = NOC_FLIT_BITS(4), port = NOC_PORT_XNEG;
  for (unsigned i = 0; i < 6; i++) {
    memset(words, 0, sizeof words);
    /* data: head carries destination (3, 1): two hops on +X */
    uint64_t data = i == 0 ? (3u | 1u << 8 | 6u << 16) : i;
    for (unsigned b = 0; b < 64; b++)
      if ((data >> b) & 1) words[(port * fw + b) / 32] |= 1u << ((port * fw + b) % 32);
    unsigned top = port * fw + fw - 1;                         /* valid */
    words[top / 32] |= 1u << (top % 32);
    if (i == 0) words[(top - 1) / 32] |= 1u << ((top - 1) % 32); /* head */
    if (i == 5) words[(top - 2) / 32] |= 1u << ((top - 2) % 32); /* tail */
    vmodel_poke_words(m, in, words);
    vmodel_step(m, 1);
  }
  cr_assert_eq(vmodel_peek(m, ovf), 1, "buffer depth 2 in use, 6 flits pushed, 2 credits");
  vmodel_free(m);
}

Test(noc, short_window_accepts_at_most_one_flit_per_node_cycle) {
  noc_net_t *net = make_net(8, 8, 4, 8, 0);
  noc_run_t run = {.pattern = NOC_UNIFORM, .rate = 1.0, .packet_flits = 1, .warmup = 0,
                   .measure = 2, .watchdog = 5000, .seed = test_seed()};
  noc_result_t r;
  cr_assert_eq(noc_run_traffic(net, &run, &r), 0);
  cr_assert_leq(r.accepted, 1.0, "accepted %.3f", r.accepted);
  cr_assert(noc_result_clean(&r));
  noc_net_free(net);
}
