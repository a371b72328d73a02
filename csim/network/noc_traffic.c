/* noc_traffic: see noc_traffic.h. */
#include "network/noc_traffic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const pattern_names[NOC_PATTERNS] = {"uniform", "transpose", "bitcomp",
                                                         "tornado", "neighbor", "hotspot"};

int noc_pattern_parse(const char *name, noc_pattern_t *out) {
  for (int i = 0; i < NOC_PATTERNS; i++) {
    if (!strcmp(name, pattern_names[i])) {
      *out = (noc_pattern_t)i;
      return 0;
    }
  }
  return -1;
}

const char *noc_pattern_name(noc_pattern_t p) { return pattern_names[p]; }

int noc_pattern_check(noc_pattern_t p, unsigned x, unsigned y, char *err, size_t errlen) {
  if (p == NOC_TRANSPOSE && x != y) {
    snprintf(err, errlen, "transpose needs a square pod, not %ux%u", x, y);
    return -1;
  }
  return 0;
}

uint32_t noc_pattern_dest(noc_pattern_t p, unsigned X, unsigned Y, uint32_t src, rng_t *rng) {
  unsigned x = src % X, y = src / X, n = X * Y;
  switch (p) {
    case NOC_TRANSPOSE: return x * X + y;
    case NOC_BITCOMP: return (Y - 1 - y) * X + (X - 1 - x);
    case NOC_TORNADO: return ((y + (Y + 1) / 2 - 1) % Y) * X + (x + (X + 1) / 2 - 1) % X;
    case NOC_NEIGHBOR: return ((y + 1) % Y) * X + (x + 1) % X;
    case NOC_HOTSPOT:
      if (rng_below(rng, 5) == 0) return (Y / 2) * X + X / 2;
      /* fall through */
    default: {
      uint32_t d = (uint32_t)rng_below(rng, n - 1);
      return d >= src ? d + 1 : d;
    }
  }
}

/* rng_next (util/rng.c: xoshiro256**), inlined into the injection loop, which draws once per node
 * and cycle: the same numbers in the same order. */
static inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t next_u64(uint64_t *s) {
  const uint64_t result = rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl64(s[3], 45);
  return result;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The watchdog: packets outstanding and nothing moved for run->watchdog cycles. If the
 * routers and sources still hold flits the network is stuck; if they are empty, the
 * packets are gone: lost (counted after the run), not stuck. */
static bool watchdog_fired(noc_net_t *net, const noc_run_t *run, noc_result_t *res) {
  if (noc_net_in_flight(net) == 0 || noc_net_quiet_cycles(net) < run->watchdog) return false;
  if (noc_net_flits_held(net) == 0) return true;
  res->stuck = true;
  int n = snprintf(res->stuck_report, sizeof res->stuck_report,
                   "no flit moved for %llu cycles at cycle %llu: ",
                   (unsigned long long)noc_net_quiet_cycles(net), (unsigned long long)noc_net_cycle(net));
  noc_net_describe_stuck(net, res->stuck_report + n, sizeof res->stuck_report - (size_t)n);
  return true;
}

int noc_run_traffic(noc_net_t *net, const noc_run_t *run, noc_result_t *res) {
  memset(res, 0, sizeof *res);
  const noc_config_t *cfg = noc_net_config(net);
  const unsigned nodes = noc_net_nodes(net);
  const double p_packet = run->rate / run->packet_flits;
  const uint64_t drain_max = run->drain_max ? run->drain_max : 10 * run->measure + 1000;
  rng_t rng;
  rng_seed(&rng, run->seed);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);

  uint64_t start = noc_net_cycle(net);
  uint64_t measure_start = start + run->warmup, measure_end = measure_start + run->measure;
  uint64_t ejected_at_start = 0, ejected_at_end = 0;
  bool window_closed = false, gone = false;
  /* P(packet this cycle) as a 64-bit threshold; p >= 1 injects every cycle without it. */
  const uint64_t threshold = p_packet >= 1.0 ? UINT64_MAX : (uint64_t)(p_packet * 18446744073709551616.0);
  for (;;) {
    uint64_t now = noc_net_cycle(net);
    if (now == measure_start) ejected_at_start = noc_net_scoreboard(net)->ejected_flits;
    if (now == measure_end) {
      ejected_at_end = noc_net_scoreboard(net)->ejected_flits;
      window_closed = true;
    }
    bool measuring = now >= measure_start && now < measure_end;
    if (now >= measure_end) {
      /* Count measured packets still out; stop once they are all in, or give up. */
      if (noc_net_measured_in_flight(net) == 0) break;
      if (now - measure_end >= drain_max) {
        res->saturated = true;
        break;
      }
    }
    if (run->saturate || p_packet >= 1.0) {
      for (uint32_t s = 0; s < nodes; s++) {
        if (run->saturate ? noc_net_backlog(net, s) == 0 : true) {
          uint32_t d = noc_pattern_dest(run->pattern, cfg->size_x, cfg->size_y, s, &rng);
          if (noc_net_send(net, s, d, run->packet_flits, measuring) == UINT32_MAX) return -1;
        }
      }
    } else if (p_packet > 0) {
      /* one draw per node: a packet when it falls under the threshold */
      for (uint32_t s = 0; s < nodes; s++) {
        if (next_u64(rng.s) < threshold) {
          uint32_t d = noc_pattern_dest(run->pattern, cfg->size_x, cfg->size_y, s, &rng);
          if (noc_net_send(net, s, d, run->packet_flits, measuring) == UINT32_MAX) return -1;
        }
      }
    }
    noc_net_step(net);
    if ((res->diverged = noc_net_divergence(net) != NULL)) break;
    if (run->progress && (noc_net_cycle(net) & 4095) == 0)
      run->progress(run->progress_ctx, now < measure_start ? "warm-up" : now < measure_end ? "measure" : "drain",
                    noc_net_cycle(net));
    if ((gone = watchdog_fired(net, run, res))) break;
  }
  /* A run cut short by the watchdog measured only part of the window. */
  uint64_t window = run->measure;
  if (!window_closed) {
    ejected_at_end = noc_net_scoreboard(net)->ejected_flits;
    window = noc_net_cycle(net) > measure_start ? noc_net_cycle(net) - measure_start : 0;
  }

  /* Stop injecting and drain everything; whatever then never arrives is lost. */
  while (!res->stuck && !gone && !res->diverged && noc_net_in_flight(net) > 0) {
    noc_net_step(net);
    if ((res->diverged = noc_net_divergence(net) != NULL)) break;
    if (run->progress && (noc_net_cycle(net) & 4095) == 0)
      run->progress(run->progress_ctx, "final drain", noc_net_cycle(net));
    gone = watchdog_fired(net, run, res);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);

  const noc_scoreboard_t *sb = noc_net_scoreboard(net);
  uint32_t count = noc_net_packet_count(net);
  uint64_t *lat = malloc(((size_t)count + 1) * sizeof *lat);
  if (!lat) return -1;
  uint64_t created_measured = 0;
  double sum = 0;
  for (uint32_t i = 0; i < count; i++) {
    const noc_packet_t *p = noc_net_packet(net, i);
    if (p->delivered == UINT64_MAX) res->lost++;
    if (!p->measured) continue;
    created_measured++;
    if (p->delivered != UINT64_MAX) {
      lat[res->packets++] = p->delivered - p->created;
      sum += (double)(p->delivered - p->created);
    }
  }
  if (res->stuck || res->diverged) res->lost = 0; /* unknown: the run stopped with packets in flight */
  qsort(lat, res->packets, sizeof *lat, cmp_u64);
  if (res->packets) {
    res->avg_latency = sum / (double)res->packets;
    res->p50_latency = (double)lat[(res->packets - 1) / 2];
    res->p99_latency = (double)lat[(res->packets * 99 + 99) / 100 - 1];
    res->max_latency = (double)lat[res->packets - 1];
  }
  free(lat);
  res->offered = window ? (double)created_measured * run->packet_flits / ((double)nodes * window) : 0;
  res->accepted = window ? (double)(ejected_at_end - ejected_at_start) / ((double)nodes * window) : 0;
  /* Past saturation the network accepts less than is offered and source queues grow. */
  if (res->offered > 0.01 && res->accepted < 0.95 * res->offered) res->saturated = true;
  res->created = count;
  res->duplicated = sb->duplicated;
  res->corrupted = sb->corrupted;
  res->misrouted = sb->misrouted;
  res->overflow = noc_net_overflow(net);
  res->cycles = noc_net_cycle(net) - start;
  res->sim_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  res->sim_cycles_per_s = res->sim_seconds > 0 ? (double)res->cycles / res->sim_seconds : 0;
  return 0;
}

bool noc_result_clean(const noc_result_t *res) {
  return !res->stuck && !res->diverged && !res->overflow && res->lost == 0 && res->duplicated == 0 &&
         res->corrupted == 0 && res->misrouted == 0;
}
