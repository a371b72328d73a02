/*
 * Deadlock and loss soak of the torus (run once, seed 1): an 8x8 torus under every
 * pattern at offered load 1.0 (every source always has a packet waiting) for 100,000
 * cycles, then injection stops and every packet must drain with a clean scoreboard; with
 * 4 VCs x 8 flits, and with 2 VCs and minimal (1-flit) buffers.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>

#include "network/noc_net.h"
#include "network/noc_traffic.h"
#include "test_util.h"

typedef struct {
  noc_pattern_t pattern;
  unsigned vcs, buf, flits;
} soak_t;

ParameterizedTestParameters(noc_soak, full_load_then_drain) {
  static soak_t cases[2 * NOC_PATTERNS];
  for (int p = 0; p < NOC_PATTERNS; p++) {
    cases[2 * p] = (soak_t){(noc_pattern_t)p, 4, 8, 4};
    cases[2 * p + 1] = (soak_t){(noc_pattern_t)p, 2, 1, 1};
  }
  return cr_make_param_array(soak_t, cases, 2 * NOC_PATTERNS);
}

ParameterizedTest(soak_t *s, noc_soak, full_load_then_drain, .timeout = 900) {
  noc_config_t cfg = {8, 8, s->vcs, s->buf, 1, test_seed(), CHIP_MODEL_RTL};
  char err[256];
  noc_net_t *net = noc_net_new(&cfg, err, sizeof err);
  cr_assert_not_null(net, "%s", err);
  noc_run_t run = {.pattern = s->pattern, .rate = 1.0, .packet_flits = s->flits, .warmup = 0,
                   .measure = 100000, .watchdog = 10000, .seed = 11 + s->pattern, .saturate = true};
  noc_result_t r;
  cr_assert_eq(noc_run_traffic(net, &run, &r), 0);
  cr_assert(!r.stuck, "%s, %u VCs x %u: %s", noc_pattern_name(s->pattern), s->vcs, s->buf, r.stuck_report);
  cr_assert(noc_result_clean(&r), "%s, %u VCs x %u: lost %llu dup %llu corrupted %llu misrouted %llu overflow %d",
            noc_pattern_name(s->pattern), s->vcs, s->buf, (unsigned long long)r.lost,
            (unsigned long long)r.duplicated, (unsigned long long)r.corrupted,
            (unsigned long long)r.misrouted, r.overflow);
  cr_assert_eq(noc_net_in_flight(net), 0, "every packet drained");
  cr_assert_eq(noc_net_scoreboard(net)->delivered_packets, r.created);
  cr_assert_gt(r.accepted, 0.01, "the network carried traffic (accepted %.3f)", r.accepted);
  cr_log_info("%s %u VCs x %u: accepted %.3f flits/node/cycle, %llu packets", noc_pattern_name(s->pattern),
              s->vcs, s->buf, r.accepted, (unsigned long long)r.created);
  noc_net_free(net);
}
