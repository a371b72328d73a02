/*
 * cmd_net: `tpusim net`, synthetic traffic on an X x Y torus of RTL routers (noc_net,
 * noc_traffic): one load point with latency, throughput and a clean scoreboard, or a
 * latency-versus-load sweep written as CSV and plotted to PNG.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "system/noc_net.h"
#include "system/noc_traffic.h"
#include "util/cli.h"
#include "util/json.h"
#include "vmodel/noc_router.h"

#define NET_MAX_NODES 65536u

typedef struct {
  noc_config_t cfg;
  noc_run_t run;
  const char *trace, *sweep_csv;
  uint64_t trace_node;
  bool json, sweep;
} net_opts_t;

static void net_help(void) {
  printf("usage: tpusim net --pod XxY [--traffic PATTERN] [--rate R] [--packet-flits F]\n"
         "                  [--vcs V] [--buf D] [--link-latency L] [--cycles N] [--warmup W]\n"
         "                  [--seed S] [--trace FILE.fst [--trace-node N]] [--json]\n"
         "       tpusim net --pod XxY --sweep [--sweep-csv FILE.csv] [same options]\n\n"
         "Runs Bernoulli traffic on an X x Y torus of RTL routers wired through C link models:\n"
         "warm-up W cycles (default 1000), measurement N cycles (default 10000), then drain.\n"
         "PATTERN: uniform (default), transpose, bitcomp, tornado, neighbor, hotspot.\n"
         "R: offered load in flits/node/cycle, 0..1 (default 0.1). F: flits per packet, 1..255\n"
         "(default 1). V: VCs per port, built: %s(default 4). D: flits per VC buffer, 1..%u\n"
         "(default 8). L: extra link cycles each way (default 0). --trace writes router N's\n"
         "waveform (default node 0). --sweep runs rates 0.05, 0.10, ... until saturation and\n"
         "writes a latency-versus-load CSV (default build/net_sweep.csv) and a PNG next to it.\n"
         "Exit status: 0 clean, 1 a scoreboard error or a stuck network, 2 bad usage.\n",
         noc_router_vcs_list(), NOC_MAX_DEPTH);
}

static bool parse_rate(const char *text, double *out) {
  char *end;
  double r = strtod(text, &end);
  if (end == text || *end || !(r >= 0.0 && r <= 1.0)) {
    cli_usage_error("net", "--rate expects a number in [0, 1] (flits/node/cycle), got '%s'", text);
    return false;
  }
  *out = r;
  return true;
}

static int parse(int argc, char **argv, net_opts_t *o) {
  enum { O_POD = 1, O_TRAFFIC, O_RATE, O_FLITS, O_VCS, O_BUF, O_LINK, O_CYCLES, O_WARMUP, O_SEED,
         O_TRACE, O_TRACE_NODE, O_JSON, O_SWEEP, O_SWEEP_CSV, O_HELP };
  static const struct option longopts[] = {
      {"pod", required_argument, 0, O_POD},         {"traffic", required_argument, 0, O_TRAFFIC},
      {"rate", required_argument, 0, O_RATE},       {"packet-flits", required_argument, 0, O_FLITS},
      {"vcs", required_argument, 0, O_VCS},         {"buf", required_argument, 0, O_BUF},
      {"link-latency", required_argument, 0, O_LINK}, {"cycles", required_argument, 0, O_CYCLES},
      {"warmup", required_argument, 0, O_WARMUP},   {"seed", required_argument, 0, O_SEED},
      {"trace", required_argument, 0, O_TRACE},     {"trace-node", required_argument, 0, O_TRACE_NODE},
      {"json", no_argument, 0, O_JSON},             {"sweep", no_argument, 0, O_SWEEP},
      {"sweep-csv", required_argument, 0, O_SWEEP_CSV}, {"help", no_argument, 0, O_HELP},
      {0, 0, 0, 0}};
  memset(o, 0, sizeof *o);
  o->cfg = (noc_config_t){.vcs = 4, .buf_depth = 8, .seed = 1};
  o->run = (noc_run_t){.pattern = NOC_UNIFORM, .rate = 0.1, .packet_flits = 1, .warmup = 1000,
                       .measure = 10000, .seed = 1};
  o->sweep_csv = "build/net_sweep.csv";
  bool have_pod = false;
  uint64_t v;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case O_POD: {
        unsigned x, y;
        if (!cli_parse_dims("net", "--pod", "XxY", optarg, 2, 255, &x, &y)) return CLI_EXIT_USAGE;
        o->cfg.size_x = x;
        o->cfg.size_y = y;
        have_pod = true;
        break;
      }
      case O_TRAFFIC:
        if (noc_pattern_parse(optarg, &o->run.pattern))
          return cli_usage_error("net", "unknown traffic pattern '%s' (uniform, transpose, bitcomp, tornado, neighbor, hotspot)", optarg);
        break;
      case O_RATE:
        if (!parse_rate(optarg, &o->run.rate)) return CLI_EXIT_USAGE;
        break;
      case O_FLITS:
        if (!cli_parse_u64("net", "--packet-flits", optarg, 1, 255, &v)) return CLI_EXIT_USAGE;
        o->run.packet_flits = (unsigned)v;
        break;
      case O_VCS:
        if (!cli_parse_u64("net", "--vcs", optarg, 1, 64, &v)) return CLI_EXIT_USAGE;
        if (!noc_router_available((unsigned)v))
          return cli_usage_error("net", "no router with %llu VCs in this build (built: %s)", (unsigned long long)v, noc_router_vcs_list());
        o->cfg.vcs = (unsigned)v;
        break;
      case O_BUF:
        if (!cli_parse_u64("net", "--buf", optarg, 1, NOC_MAX_DEPTH, &v)) return CLI_EXIT_USAGE;
        o->cfg.buf_depth = (unsigned)v;
        break;
      case O_LINK:
        if (!cli_parse_u64("net", "--link-latency", optarg, 0, 1000, &v)) return CLI_EXIT_USAGE;
        o->cfg.link_latency = (unsigned)v;
        break;
      case O_CYCLES:
        if (!cli_parse_u64("net", "--cycles", optarg, 1, 100000000, &o->run.measure)) return CLI_EXIT_USAGE;
        break;
      case O_WARMUP:
        if (!cli_parse_u64("net", "--warmup", optarg, 0, 100000000, &o->run.warmup)) return CLI_EXIT_USAGE;
        break;
      case O_SEED:
        if (!cli_parse_u64("net", "--seed", optarg, 0, UINT64_MAX, &o->run.seed)) return CLI_EXIT_USAGE;
        o->cfg.seed = o->run.seed;
        break;
      case O_TRACE: o->trace = optarg; break;
      case O_TRACE_NODE:
        if (!cli_parse_u64("net", "--trace-node", optarg, 0, NET_MAX_NODES - 1, &o->trace_node)) return CLI_EXIT_USAGE;
        break;
      case O_JSON: o->json = true; break;
      case O_SWEEP: o->sweep = true; break;
      case O_SWEEP_CSV: o->sweep_csv = optarg; break;
      case O_HELP: net_help(); return -1;
      default:
        return cli_usage_error("net", "unknown option or missing value: '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_error("net", "unexpected argument '%s'", argv[optind]);
  if (!have_pod) return cli_usage_error("net", "missing --pod XxY");
  char err[256];
  if (noc_pattern_check(o->run.pattern, o->cfg.size_x, o->cfg.size_y, err, sizeof err))
    return cli_usage_error("net", "%s", err);
  if (o->trace && o->trace_node >= (uint64_t)o->cfg.size_x * o->cfg.size_y)
    return cli_usage_error("net", "--trace-node %llu is outside the %ux%u pod", (unsigned long long)o->trace_node,
                           o->cfg.size_x, o->cfg.size_y);
  if (o->trace && o->sweep) return cli_usage_error("net", "--trace and --sweep cannot be combined");
  if (strchr(o->sweep_csv, '\''))  /* the plot runs through the shell with the path quoted */
    return cli_usage_error("net", "--sweep-csv: the path may not contain a single quote");
  /* Wait long enough for the slowest credit loop before declaring the network stuck. */
  o->run.watchdog = 20000 + 100 * (uint64_t)o->cfg.link_latency;
  return CLI_EXIT_OK;
}

typedef struct {
  struct timespec last;
} progress_t;

static void show_progress(void *ctx, const char *phase, uint64_t cycle) {
  progress_t *p = ctx;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (now.tv_sec - p->last.tv_sec < 2) return;
  p->last = now;
  fprintf(stderr, "net: %s, cycle %" PRIu64 "\n", phase, cycle);
}

/* Builds a network, runs one load point, frees it. Returns 0, or an exit status;
 * *traced says whether this run created the trace file. */
static int run_point(const net_opts_t *o, double rate, noc_result_t *res, bool *traced) {
  char err[512];
  *traced = false;
  noc_net_t *net = noc_net_new(&o->cfg, err, sizeof err);
  if (!net) return cli_fail("net", "%s", err);
  if (o->trace && noc_net_trace(net, (uint32_t)o->trace_node, o->trace, err, sizeof err)) {
    noc_net_free(net);
    return cli_fail("net", "%s", err);
  }
  *traced = o->trace != NULL;
  progress_t prog;
  clock_gettime(CLOCK_MONOTONIC, &prog.last);
  noc_run_t run = o->run;
  run.rate = rate;
  run.progress = show_progress;
  run.progress_ctx = &prog;
  int rc = noc_run_traffic(net, &run, res);
  noc_net_free(net);
  return rc ? cli_fail("net", "out of memory") : CLI_EXIT_OK;
}

static void print_result(const net_opts_t *o, double rate, const noc_result_t *r) {
  if (o->json) {
    json_t j;
    json_begin(&j, stdout);
    json_u64(&j, "pod_x", o->cfg.size_x);
    json_u64(&j, "pod_y", o->cfg.size_y);
    json_str(&j, "traffic", noc_pattern_name(o->run.pattern));
    json_f64(&j, "rate", rate);
    json_u64(&j, "packet_flits", o->run.packet_flits);
    json_u64(&j, "vcs", o->cfg.vcs);
    json_u64(&j, "buf", o->cfg.buf_depth);
    json_u64(&j, "link_latency", o->cfg.link_latency);
    json_u64(&j, "seed", o->run.seed);
    json_f64(&j, "offered", r->offered);
    json_f64(&j, "accepted", r->accepted);
    json_f64(&j, "avg_latency", r->avg_latency);
    json_f64(&j, "p50_latency", r->p50_latency);
    json_f64(&j, "p99_latency", r->p99_latency);
    json_f64(&j, "max_latency", r->max_latency);
    json_u64(&j, "packets", r->packets);
    json_u64(&j, "created", r->created);
    json_u64(&j, "lost", r->lost);
    json_u64(&j, "duplicated", r->duplicated);
    json_u64(&j, "corrupted", r->corrupted);
    json_u64(&j, "misrouted", r->misrouted);
    json_bool(&j, "saturated", r->saturated);
    json_bool(&j, "stuck", r->stuck);
    json_bool(&j, "overflow", r->overflow);
    json_u64(&j, "cycles", r->cycles);
    json_f64(&j, "sim_seconds", r->sim_seconds);
    json_f64(&j, "sim_cycles_per_s", r->sim_cycles_per_s);
    json_end(&j);
    return;
  }
  printf("%ux%u torus, %s traffic, %u-flit packets, %u VCs x %u flits, link latency %u\n",
         o->cfg.size_x, o->cfg.size_y, noc_pattern_name(o->run.pattern), o->run.packet_flits,
         o->cfg.vcs, o->cfg.buf_depth, o->cfg.link_latency);
  printf("  offered         %.4f flits/node/cycle\n", r->offered);
  printf("  accepted        %.4f flits/node/cycle%s\n", r->accepted, r->saturated ? "  (saturated)" : "");
  printf("  latency         avg %.2f, p50 %.0f, p99 %.0f, max %.0f cycles\n", r->avg_latency,
         r->p50_latency, r->p99_latency, r->max_latency);
  printf("  packets         %" PRIu64 " measured, %" PRIu64 " created\n", r->packets, r->created);
  printf("  scoreboard      lost %" PRIu64 ", duplicated %" PRIu64 ", corrupted %" PRIu64 ", misrouted %" PRIu64 "%s\n",
         r->lost, r->duplicated, r->corrupted, r->misrouted, r->overflow ? ", BUFFER OVERFLOW" : "");
  printf("  simulation      %" PRIu64 " cycles, %.0f cycles/s\n", r->cycles, r->sim_cycles_per_s);
}

static int sweep(const net_opts_t *o) {
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", o->sweep_csv);
  FILE *csv = fopen(tmp, "w");
  if (!csv) return cli_fail("net", "cannot write '%s'", o->sweep_csv);
  fprintf(csv, "rate,offered,accepted,avg_latency,p50_latency,p99_latency,saturated\n");
  printf("%8s %10s %10s %12s %10s\n", "rate", "offered", "accepted", "avg_latency", "p99");
  int saturated_points = 0, rc = CLI_EXIT_OK;
  for (int i = 1; i <= 20 && saturated_points < 2; i++) {
    double rate = 0.05 * i;
    noc_result_t r;
    bool traced;
    if ((rc = run_point(o, rate, &r, &traced)) != CLI_EXIT_OK) break;
    if (!noc_result_clean(&r)) {
      rc = cli_fail("net", "rate %.2f: scoreboard not clean (lost %" PRIu64 ", duplicated %" PRIu64
                    ", corrupted %" PRIu64 ")%s%s", rate, r.lost, r.duplicated, r.corrupted,
                    r.stuck ? ": " : "", r.stuck ? r.stuck_report : "");
      break;
    }
    fprintf(csv, "%.2f,%.5f,%.5f,%.3f,%.0f,%.0f,%d\n", rate, r.offered, r.accepted, r.avg_latency,
            r.p50_latency, r.p99_latency, r.saturated);
    printf("%8.2f %10.4f %10.4f %12.2f %10.0f%s\n", rate, r.offered, r.accepted, r.avg_latency,
           r.p99_latency, r.saturated ? "  saturated" : "");
    fflush(stdout);
    /* Past saturation the latency is unbounded: two saturated points end the sweep. */
    saturated_points += r.saturated || r.avg_latency > 20 * (r.p50_latency + 1);
  }
  if (fclose(csv) || rc != CLI_EXIT_OK || rename(tmp, o->sweep_csv)) {
    remove(tmp);
    return rc != CLI_EXIT_OK ? rc : cli_fail("net", "cannot write '%s'", o->sweep_csv);
  }
  char png[1024], cmd[4096], title[256];
  snprintf(png, sizeof png, "%.*s.png", (int)(strlen(o->sweep_csv) > 4 && !strcmp(o->sweep_csv + strlen(o->sweep_csv) - 4, ".csv")
                                                ? strlen(o->sweep_csv) - 4 : strlen(o->sweep_csv)), o->sweep_csv);
  snprintf(title, sizeof title, "%ux%u torus, %s, %u-flit packets, %u VCs x %u", o->cfg.size_x, o->cfg.size_y,
           noc_pattern_name(o->run.pattern), o->run.packet_flits, o->cfg.vcs, o->cfg.buf_depth);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' '%s' '%s'", o->sweep_csv, png, title);
  if (system(cmd) != 0) return cli_fail("net", "plotting failed (scripts/plot_sweep.py needs python3-matplotlib: make deps)");
  fprintf(stderr, "net: wrote %s and %s\n", o->sweep_csv, png);
  return CLI_EXIT_OK;
}

int cmd_net(int argc, char **argv) {
  net_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc < 0 ? CLI_EXIT_OK : rc;
  if (o.sweep) return sweep(&o);
  noc_result_t r;
  bool traced;
  if ((rc = run_point(&o, o.run.rate, &r, &traced)) != CLI_EXIT_OK) {
    if (traced) remove(o.trace);
    return rc;
  }
  print_result(&o, o.run.rate, &r);
  if (r.stuck) return cli_fail("net", "network stuck: %s", r.stuck_report);
  if (!noc_result_clean(&r))
    return cli_fail("net", "scoreboard not clean: lost %" PRIu64 ", duplicated %" PRIu64 ", corrupted %" PRIu64
                    ", misrouted %" PRIu64 "%s", r.lost, r.duplicated, r.corrupted, r.misrouted,
                    r.overflow ? ", VC buffer overflow" : "");
  return CLI_EXIT_OK;
}
