/*
 * noc_traffic: BookSim-style synthetic traffic and measurement on a noc_net: Bernoulli
 * injection into unbounded source queues, the standard patterns, warm-up / measurement /
 * drain phases, latency from packet creation to tail ejection (source queueing
 * included), accepted throughput, percentiles, and the forward-progress watchdog.
 */
#ifndef NOC_TRAFFIC_H
#define NOC_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "network/noc_net.h"
#include "util/rng.h"

typedef enum {
  NOC_UNIFORM,    /* any other node, uniformly */
  NOC_TRANSPOSE,  /* (x, y) -> (y, x); square pods only */
  NOC_BITCOMP,    /* (x, y) -> (X-1-x, Y-1-y) */
  NOC_TORNADO,    /* (x, y) -> (x + ceil(X/2) - 1, y + ceil(Y/2) - 1), modulo the size */
  NOC_NEIGHBOR,   /* (x, y) -> (x + 1, y + 1), modulo the size */
  NOC_HOTSPOT,    /* 20% of packets to the centre node (X/2, Y/2), the rest uniform */
  NOC_PATTERNS
} noc_pattern_t;

/* Parses a pattern name (uniform, transpose, bitcomp, tornado, neighbor, hotspot); -1 if unknown. */
int noc_pattern_parse(const char *name, noc_pattern_t *out);
const char *noc_pattern_name(noc_pattern_t p);
/* 0 if the pattern works on an X x Y pod, else -1 with a message. */
int noc_pattern_check(noc_pattern_t p, unsigned x, unsigned y, char *err, size_t errlen);
uint32_t noc_pattern_dest(noc_pattern_t p, unsigned x, unsigned y, uint32_t src, rng_t *rng);

typedef struct {
  noc_pattern_t pattern;
  double rate;              /* offered load, flits/node/cycle, [0, 1] */
  unsigned packet_flits;    /* 1..255 */
  uint64_t warmup, measure; /* cycles */
  uint64_t drain_max;       /* cycles to wait for the measured packets (0: 10 x measure) */
  uint64_t watchdog;        /* cycles without any flit moving before the run is declared stuck */
  uint64_t seed;            /* traffic randomness */
  bool saturate;            /* ignore rate: keep a packet waiting at every source, so each
                               injection port is busy whenever the network accepts (the
                               deadlock stress; backlogs stay bounded so the drain is short) */
  void (*progress)(void *ctx, const char *phase, uint64_t cycle);
  void *progress_ctx;
} noc_run_t;

typedef struct {
  double offered, accepted;       /* flits/node/cycle over the measurement window */
  double avg_latency, p50_latency, p99_latency, max_latency;
  uint64_t packets;               /* measured packets delivered */
  uint64_t created;               /* all packets created */
  uint64_t lost, duplicated, corrupted, misrouted;
  uint64_t cycles;                /* simulated cycles in all phases */
  bool saturated;                 /* measured packets did not all arrive within drain_max */
  bool stuck;                     /* the watchdog fired */
  bool overflow;                  /* a router flagged a VC buffer overflow */
  bool diverged;                  /* CHIP_MODEL_CHECK: the RTL and fast routers differed; the run
                                     stopped there (noc_net_divergence says where) */
  char stuck_report[1024];
  double sim_seconds, sim_cycles_per_s;
} noc_result_t;

/* Runs warm-up, measurement (injecting), drain of the measured packets (still injecting,
 * unmeasured), then stops injection and drains everything, so `lost` counts packets that
 * never arrived. A lockstep divergence ends the run where it happened. Returns 0, or -1
 * when out of memory. */
int noc_run_traffic(noc_net_t *net, const noc_run_t *run, noc_result_t *res);

/* True when the result shows no loss, duplication, corruption, misrouting, overflow, hang or
 * lockstep divergence. */
bool noc_result_clean(const noc_result_t *res);

#endif
