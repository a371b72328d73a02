/*
 * cmd_net: `tpusim net`, synthetic traffic on an X x Y torus of routers (noc_net,
 * noc_traffic): one load point with latency, throughput and a clean scoreboard, or a
 * latency-versus-load sweep written as CSV and plotted to PNG. --model picks the RTL routers,
 * their fast C model, or both in lockstep.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "network/noc_net.h"
#include "network/noc_traffic.h"
#include "util/cli.h"
#include "util/json.h"
#include "util/outfile.h"
#include "util/report.h"
#include "util/stopwatch.h"
#include "vmodel/noc_router.h"

#define NET_MAX_NODES 65536u

typedef struct {
  noc_config_t cfg;
  noc_run_t run;
  const char *trace, *sweep_csv;
  char exe_dir[4096];       /* where tpusim is: build/, beside scripts/ */
  char default_csv[4200], png[4200]; /* png: the sweep's plot, the CSV's name with .png */
  uint64_t trace_node;
  int model;                /* chip_model_t: its index in CHIP_MODEL_CHOICES */
  bool json, sweep;
} net_opts_t;

static void net_help(void) {
  printf("usage: tpusim net --pod XxY [--traffic PATTERN] [--rate R] [--packet-flits F]\n"
         "                  [--vcs V] [--buf D] [--link-latency L] [--cycles N] [--warmup W]\n"
         "                  [--seed S] [--model rtl|fast|check] [--trace FILE.fst [--trace-node N]]\n"
         "                  [--json]\n"
         "       tpusim net --pod XxY --sweep [--sweep-csv FILE.csv] [same options]\n\n"
         "Runs Bernoulli traffic on an X x Y torus of routers wired through C link models:\n"
         "warm-up W cycles (default 1000), measurement N cycles (default 10000), then drain.\n"
         "PATTERN: uniform (default), transpose, bitcomp, tornado, neighbor, hotspot.\n"
         "R: offered load in flits/node/cycle, 0..1 (default 0.1). F: flits per packet, 1..255\n"
         "(default 1). V: VCs per port, built: %s(default 4). D: flits per VC buffer, 1..%u\n"
         "(default 8). L: extra link cycles each way (default 0). --trace writes router N's\n"
         "waveform (default node 0). --sweep runs rates 0.05, 0.10, ... until saturation and\n"
         "writes a latency-versus-load CSV (default net_sweep.csv beside the tpusim binary, in\n"
         "build/) and a PNG next to it (scripts/plot_sweep.py, found from the binary: any working\n"
         "directory will do); --sweep-csv needs --sweep and a name ending in .csv, --rate is not\n"
         "taken with --sweep, and --sweep --json prints one JSON object (a point per rate).\n"
         "--model: rtl (default) the Verilated routers; fast their C model\n"
         "(csim/fast/noc_fast.c, cycle-equal to the RTL: the same results, many times faster; no\n"
         "--trace); check both at every node, every output compared every cycle, and the first\n"
         "difference reported (exit 1). A scoreboard error or a stuck network is a failed run.\n"
         CLI_EXIT_STATUS_HELP,
         noc_router_vcs_list(), NOC_MAX_DEPTH);
}

static bool parse_rate(const char *cmd, const char *opt, const char *text, void *dst) {
  double r;
  if (!cli_real(text, &r) || !(r >= 0.0 && r <= 1.0)) {
    cli_usage_error(cmd, "%s expects a number in [0, 1] (flits/node/cycle), got '%s'", opt, text);
    return false;
  }
  *(double *)dst = r;
  return true;
}

static bool parse_pattern(const char *cmd, const char *opt, const char *text, void *dst) {
  if (!noc_pattern_parse(text, dst)) return true;
  cli_usage_error(cmd, "unknown %s pattern '%s' (uniform, transpose, bitcomp, tornado, neighbor, hotspot)", opt + 2,
                  text);
  return false;
}

/* The sweep's plot: the CSV's name with .png for .csv. */
static const char *sweep_png(net_opts_t *o) {
  const size_t n = strlen(o->sweep_csv);
  const bool csv = n > 4 && !strcmp(o->sweep_csv + n - 4, ".csv");
  snprintf(o->png, sizeof o->png, "%.*s.png", (int)(csv ? n - 4 : n), o->sweep_csv);
  return o->png;
}

static int parse(int argc, char **argv, net_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->cfg = (noc_config_t){.vcs = 4, .buf_depth = 8, .seed = 1};
  o->run = (noc_run_t){.pattern = NOC_UNIFORM, .rate = 0.1, .packet_flits = 1, .warmup = 1000,
                       .measure = 10000, .seed = 1};
  if (!cli_exe_dir(o->exe_dir, sizeof o->exe_dir)) return cli_fail("net", "cannot find the tpusim binary's directory");
  snprintf(o->default_csv, sizeof o->default_csv, "%s/net_sweep.csv", o->exe_dir);
  o->sweep_csv = o->default_csv;
  unsigned pod[2];
  bool have_pod = false, have_rate = false, have_csv = false, have_node = false;
  const cli_opt_t opts[] = {
      CLI_OPT("pod", CLI_DIMS, pod, .min = 2, .max = 255, .shape = "XxY", .given = &have_pod),
      CLI_OPT("traffic", CLI_CUSTOM, &o->run.pattern, .parse = parse_pattern),
      CLI_OPT("rate", CLI_CUSTOM, &o->run.rate, .given = &have_rate, .parse = parse_rate),
      CLI_OPT("packet-flits", CLI_UINT, &o->run.packet_flits, .min = 1, .max = 255),
      CLI_OPT("vcs", CLI_UINT, &o->cfg.vcs, .min = 1, .max = 64),
      CLI_OPT("buf", CLI_UINT, &o->cfg.buf_depth, .min = 1, .max = NOC_MAX_DEPTH),
      CLI_OPT("link-latency", CLI_UINT, &o->cfg.link_latency, .min = 0, .max = 1000),
      CLI_OPT("cycles", CLI_U64, &o->run.measure, .min = 1, .max = 100000000),
      CLI_OPT("warmup", CLI_U64, &o->run.warmup, .min = 0, .max = 100000000),
      CLI_OPT("seed", CLI_U64, &o->run.seed, .min = 0, .max = UINT64_MAX),
      CLI_OPT("model", CLI_CHOICE, &o->model, .shape = CHIP_MODEL_CHOICES),
      CLI_OPT("trace", CLI_OUTPUT, &o->trace),
      CLI_OPT("trace-node", CLI_U64, &o->trace_node, .min = 0, .max = NET_MAX_NODES - 1, .given = &have_node),
      CLI_OPT("json", CLI_FLAG, &o->json),
      CLI_OPT("sweep", CLI_FLAG, &o->sweep),
      CLI_OPT("sweep-csv", CLI_OUTPUT, &o->sweep_csv, .given = &have_csv),
      {0}};
  int rc = cli_parse("net", argc, argv, opts, net_help);
  if (rc != CLI_EXIT_OK) return rc;
  if (!have_pod) return cli_usage_error("net", "missing --pod XxY");
  /* options the mode would not use are refused, not ignored */
  if (have_csv && !o->sweep) return cli_usage_error("net", "--sweep-csv names the sweep's CSV: it needs --sweep");
  if (have_rate && o->sweep)
    return cli_usage_error("net", "--rate with --sweep: the sweep runs its own rates (0.05, 0.10, ...)");
  if (have_node && !o->trace) return cli_usage_error("net", "--trace-node needs --trace FILE.fst");
  if (have_csv && !cli_output_ext("net", "--sweep-csv", o->sweep_csv, "csv")) return CLI_EXIT_USAGE;
  o->cfg.size_x = pod[0];
  o->cfg.size_y = pod[1];
  o->cfg.seed = o->run.seed;
  o->cfg.model = (chip_model_t)o->model;
  if (!noc_router_available(o->cfg.vcs))
    return cli_usage_error("net", "no router with %u VCs in this build (built: %s)", o->cfg.vcs,
                           noc_router_vcs_list());
  char err[256];
  if (noc_pattern_check(o->run.pattern, o->cfg.size_x, o->cfg.size_y, err, sizeof err))
    return cli_usage_error("net", "%s", err);
  if (o->trace && o->trace_node >= (uint64_t)o->cfg.size_x * o->cfg.size_y)
    return cli_usage_error("net", "--trace-node %llu is outside the %ux%u pod", (unsigned long long)o->trace_node,
                           o->cfg.size_x, o->cfg.size_y);
  if (o->trace && o->sweep) return cli_usage_error("net", "--trace and --sweep cannot be combined");
  if (o->trace && o->cfg.model == CHIP_MODEL_FAST)
    return cli_usage_error("net", "--trace needs --model rtl or check: a fast model has no waveform");
  if (o->sweep && ((!have_csv && !outfile_claim("net", "--sweep-csv", o->sweep_csv)) ||
                   !outfile_claim("net", "--sweep-csv's plot", sweep_png(o))))
    return CLI_EXIT_USAGE;
  /* Wait long enough for the slowest credit loop before declaring the network stuck. */
  o->run.watchdog = 20000 + 100 * (uint64_t)o->cfg.link_latency;
  return CLI_EXIT_OK;
}

/* A line on stderr at most every two seconds. */
static void show_progress(void *ctx, const char *phase, uint64_t cycle) {
  if (ticker_due(ctx)) fprintf(stderr, "net: %s, cycle %" PRIu64 "\n", phase, cycle);
}

/* Builds a network, runs one load point, frees it. Returns 0, or an exit status. */
static int run_point(const net_opts_t *o, double rate, noc_result_t *res) {
  char err[512];
  noc_net_t *net = noc_net_new(&o->cfg, err, sizeof err);
  if (!net) return cli_fail("net", "%s", err);
  if (o->trace && noc_net_trace(net, (uint32_t)o->trace_node, outfile_temp_fst(o->trace), err, sizeof err)) {
    noc_net_free(net);
    return cli_fail("net", "%s", err);
  }
  ticker_t ticker;
  ticker_init(&ticker, 2.0);
  noc_run_t run = o->run;
  run.rate = rate;
  run.progress = show_progress;
  run.progress_ctx = &ticker;
  int rc = noc_run_traffic(net, &run, res);
  if (!rc && noc_net_divergence(net)) {
    rc = cli_fail("net", "rate %.2f: the fast router differs from the RTL: %s", rate, noc_net_divergence(net));
    noc_net_free(net);
    return rc;
  }
  noc_net_free(net);
  return rc ? cli_fail("net", "out of memory") : CLI_EXIT_OK;
}

static int print_result(const net_opts_t *o, double rate, const noc_result_t *r) {
  report_t rep;
  report_init(&rep);
  report_u64(&rep, "pod_x", o->cfg.size_x);
  report_u64(&rep, "pod_y", o->cfg.size_y);
  report_str(&rep, "traffic", noc_pattern_name(o->run.pattern));
  report_f64(&rep, "rate", rate);
  report_u64(&rep, "packet_flits", o->run.packet_flits);
  report_u64(&rep, "vcs", o->cfg.vcs);
  report_u64(&rep, "buf", o->cfg.buf_depth);
  report_u64(&rep, "link_latency", o->cfg.link_latency);
  report_u64(&rep, "seed", o->run.seed);
  report_str(&rep, "model", chip_model_name(o->cfg.model));
  report_f64(&rep, "offered", r->offered);
  report_f64(&rep, "accepted", r->accepted);
  report_f64(&rep, "avg_latency", r->avg_latency);
  report_f64(&rep, "p50_latency", r->p50_latency);
  report_f64(&rep, "p99_latency", r->p99_latency);
  report_f64(&rep, "max_latency", r->max_latency);
  report_u64(&rep, "packets", r->packets);
  report_u64(&rep, "created", r->created);
  report_u64(&rep, "lost", r->lost);
  report_u64(&rep, "duplicated", r->duplicated);
  report_u64(&rep, "corrupted", r->corrupted);
  report_u64(&rep, "misrouted", r->misrouted);
  report_bool(&rep, "saturated", r->saturated);
  report_bool(&rep, "stuck", r->stuck);
  report_bool(&rep, "overflow", r->overflow);
  report_u64(&rep, "cycles", r->cycles);
  report_f64(&rep, "sim_seconds", r->sim_seconds);
  report_f64(&rep, "sim_cycles_per_s", r->sim_cycles_per_s);
  report_line(&rep, "{pod_x}x{pod_y} torus, {traffic} traffic, {packet_flits}-flit packets, {vcs} VCs x {buf} flits, "
                    "link latency {link_latency}, {model} routers");
  report_line(&rep, "  offered         {offered:%.4f} flits/node/cycle");
  report_line(&rep, "  accepted        {accepted:%.4f} flits/node/cycle{saturated?  (saturated)|}");
  report_line(&rep, "  latency         avg {avg_latency:%.2f}, p50 {p50_latency:%.0f}, p99 {p99_latency:%.0f}, max "
                    "{max_latency:%.0f} cycles");
  report_line(&rep, "  packets         {packets} measured, {created} created");
  report_line(&rep, "  scoreboard      lost {lost}, duplicated {duplicated}, corrupted {corrupted}, misrouted "
                    "{misrouted}{overflow?, BUFFER OVERFLOW|}");
  report_line(&rep, "  simulation      {cycles} cycles, {sim_cycles_per_s:%.0f} cycles/s");
  return report_print(&rep, o->json, stdout) ? cli_fail("net", "cannot write the report") : CLI_EXIT_OK;
}

/* The sweep as one JSON object (--json): the run's parameters, the files, and a point per rate. */
static void print_sweep_json(const net_opts_t *o, const noc_result_t *pts, const double *rates, int n, const char *png) {
  json_t j;
  json_begin(&j, stdout);
  json_u64(&j, "pod_x", o->cfg.size_x);
  json_u64(&j, "pod_y", o->cfg.size_y);
  json_str(&j, "traffic", noc_pattern_name(o->run.pattern));
  json_u64(&j, "packet_flits", o->run.packet_flits);
  json_u64(&j, "vcs", o->cfg.vcs);
  json_u64(&j, "buf", o->cfg.buf_depth);
  json_u64(&j, "link_latency", o->cfg.link_latency);
  json_u64(&j, "seed", o->run.seed);
  json_str(&j, "model", chip_model_name(o->cfg.model));
  json_str(&j, "csv", o->sweep_csv);
  json_str(&j, "png", png);
  json_array(&j, "points");
  for (int i = 0; i < n; i++) {
    json_object(&j, NULL);
    json_f64(&j, "rate", rates[i]);
    json_f64(&j, "offered", pts[i].offered);
    json_f64(&j, "accepted", pts[i].accepted);
    json_f64(&j, "avg_latency", pts[i].avg_latency);
    json_f64(&j, "p50_latency", pts[i].p50_latency);
    json_f64(&j, "p99_latency", pts[i].p99_latency);
    json_bool(&j, "saturated", pts[i].saturated);
    json_object_end(&j);
  }
  json_array_end(&j);
  json_end(&j);
}

static int sweep(net_opts_t *o) {
  enum { MAX_POINTS = 20 };
  noc_result_t pts[MAX_POINTS];
  double rates[MAX_POINTS];
  int points = 0;
  FILE *csv = outfile_open(o->sweep_csv, "w");
  if (!csv) return cli_fail("net", "cannot write '%s': %s", o->sweep_csv, strerror(errno));
  fprintf(csv, "rate,offered,accepted,avg_latency,p50_latency,p99_latency,saturated\n");
  if (!o->json) printf("%8s %10s %10s %12s %10s\n", "rate", "offered", "accepted", "avg_latency", "p99");
  int saturated_points = 0, rc = CLI_EXIT_OK;
  for (int i = 1; i <= MAX_POINTS && saturated_points < 2; i++) {
    double rate = 0.05 * i;
    noc_result_t r;
    if ((rc = run_point(o, rate, &r)) != CLI_EXIT_OK) break;
    if (!noc_result_clean(&r)) {
      rc = cli_fail("net", "rate %.2f: scoreboard not clean (lost %" PRIu64 ", duplicated %" PRIu64
                    ", corrupted %" PRIu64 ")%s%s", rate, r.lost, r.duplicated, r.corrupted,
                    r.stuck ? ": " : "", r.stuck ? r.stuck_report : "");
      break;
    }
    fprintf(csv, "%.2f,%.5f,%.5f,%.3f,%.0f,%.0f,%d\n", rate, r.offered, r.accepted, r.avg_latency,
            r.p50_latency, r.p99_latency, r.saturated);
    pts[points] = r, rates[points++] = rate;
    if (!o->json) {
      printf("%8.2f %10.4f %10.4f %12.2f %10.0f%s\n", rate, r.offered, r.accepted, r.avg_latency,
             r.p99_latency, r.saturated ? "  saturated" : "");
      fflush(stdout);
    }
    /* Past saturation the latency is unbounded: two saturated points end the sweep. */
    saturated_points += r.saturated || r.avg_latency > 20 * (r.p50_latency + 1);
  }
  if (outfile_close(csv) != 0 && rc == CLI_EXIT_OK)
    rc = cli_fail("net", "cannot write '%s': %s", o->sweep_csv, strerror(errno));
  if (rc != CLI_EXIT_OK) return rc;
  char title[256], err[4400];
  snprintf(title, sizeof title, "%ux%u torus, %s, %u-flit packets, %u VCs x %u", o->cfg.size_x, o->cfg.size_y,
           noc_pattern_name(o->run.pattern), o->run.packet_flits, o->cfg.vcs, o->cfg.buf_depth);
  if (cmd_plot(o->exe_dir, "plot_sweep.py", outfile_temp(o->sweep_csv), outfile_temp(o->png), title, err, sizeof err))
    return cli_fail("net", "cannot plot the sweep to '%s': %s", o->png, err);
  if (o->json) print_sweep_json(o, pts, rates, points, o->png);
  fprintf(stderr, "net: wrote %s and %s\n", o->sweep_csv, o->png);
  return CLI_EXIT_OK; /* (stdout is flushed and checked at the end: outfile_finish) */
}

int cmd_net(int argc, char **argv) {
  net_opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK) return rc == CLI_HELP ? CLI_EXIT_OK : rc;
  if (cli_check_only()) return cli_checked("net");
  if (o.sweep) return sweep(&o);
  noc_result_t r;
  if ((rc = run_point(&o, o.run.rate, &r)) != CLI_EXIT_OK) return rc;
  if ((rc = print_result(&o, o.run.rate, &r)) != CLI_EXIT_OK) return rc;
  if (r.stuck) return cli_fail("net", "network stuck: %s", r.stuck_report);
  if (!noc_result_clean(&r))
    return cli_fail("net", "scoreboard not clean: lost %" PRIu64 ", duplicated %" PRIu64 ", corrupted %" PRIu64
                    ", misrouted %" PRIu64 "%s", r.lost, r.duplicated, r.corrupted, r.misrouted,
                    r.overflow ? ", VC buffer overflow" : "");
  return CLI_EXIT_OK;
}
