/* cli_shared: helpers more than one command uses (commands.h). */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "chip/chip.h"
#include "util/dist.h"
#include "pod/machine.h"
#include "pod/pod.h"
#include "util/cli.h"
#include "util/outfile.h"

bool cmd_parse_slice(const char *cmd, const char *opt, const char *text, void *dst) {
  fw_slice_t *s = dst;
  char buf[64];
  uint64_t v[4];
  snprintf(buf, sizeof buf, "%s", text);
  char *c1 = strchr(buf, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL, *x = c2 ? strchr(c2 + 1, 'x') : NULL;
  if (strlen(text) < sizeof buf && x) {
    *c1 = *c2 = *x = 0;
    const char *parts[4] = {buf, c1 + 1, c2 + 1, x + 1};
    bool ok = true;
    for (int i = 0; i < 4; i++) ok = ok && cli_number(parts[i], 0, 255, &v[i]);
    if (ok) {
      s->x0 = (unsigned)v[0], s->y0 = (unsigned)v[1], s->w = (unsigned)v[2], s->h = (unsigned)v[3];
      return true;
    }
  }
  cli_usage_error(cmd, "%s expects X0,Y0,WxH (numbers 0..255), got '%s'", opt, text);
  return false;
}

int cmd_plot(const char *exe_dir, const char *script_name, const char *csv, const char *png, const char *title,
             char *err, size_t errlen) {
  /* the binary is build/tpusim (or build/san/tpusim): the script is in scripts/ above it */
  char script[4200];
  snprintf(script, sizeof script, "%s/../scripts/%s", exe_dir, script_name);
  if (access(script, R_OK)) snprintf(script, sizeof script, "%s/../../scripts/%s", exe_dir, script_name);
  char *argv[] = {"/usr/bin/python3", script, (char *)csv, (char *)png, (char *)title, NULL};
  extern char **environ;
  pid_t pid;
  int status;
  int e = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
  if (e) {
    snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(e));
    return -1;
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(err, errlen, "scripts/%s: %s", script_name, strerror(errno));
      return -1;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status)) snprintf(err, errlen, "scripts/%s failed (exit %d; its message is above)", script_name, WEXITSTATUS(status));
  else snprintf(err, errlen, "scripts/%s was killed by signal %d", script_name, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

int cmd_job_error(const char *cmd, rt_status_t rs, const char *err) {
  return rs == RT_INVALID ? cli_usage_error(cmd, "%s", err) : cli_fail(cmd, "%s", err);
}

int cmd_split_check(const char *cmd, unsigned threads, unsigned w, unsigned h) {
  const unsigned ranks = dist_size();
  if (ranks > h)
    return cli_usage_error(cmd, "%u MPI ranks for the %ux%u pod: a rank takes whole rows, so at most %u ranks", ranks,
                           w, h, h);
  const unsigned rows = h / ranks; /* the fewest rows a rank gets */
  if (threads > rows) {
    if (ranks > 1)
      return cli_usage_error(cmd, "--threads %u: each of the %u MPI ranks gets %u row%s or more of the %ux%u pod, "
                             "and a thread takes whole rows (at most --threads %u)", threads, ranks, rows,
                             rows == 1 ? "" : "s",
                             w, h, rows);
    return cli_usage_error(cmd, "--threads %u: the %ux%u pod has %u row%s, and a thread takes whole rows (at most "
                           "--threads %u)", threads, w, h, h, h == 1 ? "" : "s", h);
  }
  return CLI_EXIT_OK;
}

/* One item of an --rtl-chips list: "a" or "a-b". */
static bool list_item(const char *item, unsigned n, unsigned *lo, unsigned *hi) {
  char buf[32];
  uint64_t a, b;
  if (strlen(item) >= sizeof buf) return false;
  snprintf(buf, sizeof buf, "%s", item);
  char *dash = strchr(buf, '-');
  if (dash) *dash = 0;
  if (!cli_number(buf, 0, UINT32_MAX, &a)) return false;
  b = a;
  if (dash && !cli_number(dash + 1, 0, UINT32_MAX, &b)) return false;
  if (a > b) return false;
  *lo = (unsigned)(a < n ? a : n), *hi = (unsigned)(b < n ? b : n);
  return b < n;
}

/* The chips a list option (chip indices y*w+x and ranges a-b, comma-separated) names in a w x h
 * pod, as n flags (*flags, the caller frees it): CLI_EXIT_OK, or a usage error naming `opt`. */
static int chip_list(const char *cmd, const char *opt, const char *list, unsigned w, unsigned h, bool **flags) {
  const unsigned n = w * h;
  if (!*list) return cli_usage_error(cmd, "%s names no chip", opt);
  bool *f = calloc(n ? n : 1, sizeof *f);
  char *text = strdup(list);
  if (!f || !text) {
    free(f), free(text);
    return cli_fail(cmd, "out of memory");
  }
  /* every item between commas is one: an empty one (",," or a comma first or last) is a typo */
  for (char *item = text, *next; item; item = next) {
    char *comma = strchr(item, ',');
    next = comma ? comma + 1 : NULL;
    if (comma) *comma = 0;
    unsigned lo, hi;
    if (!*item) {
      int rc = cli_usage_error(cmd, "%s '%s' has an empty item (chip indices and ranges a-b, comma-separated)", opt,
                               list);
      free(f), free(text);
      return rc;
    }
    if (!list_item(item, n, &lo, &hi)) {
      int rc = cli_usage_error(cmd, "%s: '%s' is not a chip of the %ux%u pod (chips 0..%u, index y*%u+x; ranges a-b)",
                               opt, item, w, h, n - 1, w);
      free(f), free(text);
      return rc;
    }
    for (unsigned i = lo; i <= hi; i++) f[i] = true;
  }
  free(text);
  *flags = f;
  return CLI_EXIT_OK;
}

void cmd_machine_init(cmd_machine_t *m, unsigned w, unsigned h, unsigned rows, unsigned cols) {
  const machine_t d = machine_default();
  const chip_config_t *c = &d.pod.chip;
  *m = (cmd_machine_t){.pod = {w, h}, .mxu = {rows, cols}, .mxus = c->mxus, .cores = c->cores,
                       .clock_mhz = c->clock_mhz, .hbm_bw = c->hbm_bytes_per_cycle, .hbm_latency = c->hbm_latency,
                       .flit_words = c->flit_words, .link_bytes = d.pod.link_bytes,
                       .link_latency = d.pod.link_latency, .threads = d.pod.threads, .model = (int)c->model};
}

void cmd_machine_free(cmd_machine_t *m) {
  free(m->rtl_flags);
  m->rtl_flags = NULL;
  m->machine.pod.rtl_chips = NULL;
}

/* The fields of the options into *p: all of them (given = false), or those given. */
static void apply_options(const cmd_machine_t *m, bool only_given, pod_config_t *p) {
  chip_config_t *c = &p->chip;
#define SET(given, dst, value) \
  if (!only_given || (given)) (dst) = (value)
  SET(m->pod_given, p->size_x, m->pod[0]);
  SET(m->pod_given, p->size_y, m->pod[1]);
  SET(m->mxu_given, c->rows, m->mxu[0]);
  SET(m->mxu_given, c->cols, m->mxu[1]);
  SET(m->mxus_given, c->mxus, m->mxus);
  SET(m->cores_given, c->cores, m->cores);
  SET(m->clock_given, c->clock_mhz, m->clock_mhz);
  SET(m->hbm_bw_given, c->hbm_bytes_per_cycle, m->hbm_bw);
  SET(m->hbm_latency_given, c->hbm_latency, m->hbm_latency);
  SET(m->flit_given, c->flit_words, m->flit_words);
  SET(m->link_bytes_given, p->link_bytes, m->link_bytes);
  SET(m->link_latency_given, p->link_latency, m->link_latency);
  SET(m->threads_given, p->threads, m->threads);
  SET(m->model_given, c->model, (chip_model_t)m->model);
#undef SET
}

/* An option that sets a value the preset or machine file sets (m->machine.keys) would contradict
 * it: refused, as a preset fixes what it sets (docs/machines.md, "Precedence"). */
static int option_against_machine(const char *cmd, const cmd_machine_t *m) {
  const struct {
    bool given;
    unsigned keys;
    const char *opt, *what;
  } opts[] = {
      {m->clock_given, MACHINE_HAS_CLOCK, "--clock-mhz", "the clock"},
      {m->hbm_bw_given, MACHINE_HAS_HBM_BW, "--hbm-bw", "the HBM bandwidth"},
      {m->hbm_latency_given, MACHINE_HAS_HBM_LATENCY, "--hbm-latency", "the HBM latency"},
      {m->flit_given, MACHINE_HAS_FLIT_WORDS, "--flit-words", "the flit width"},
      {m->link_bytes_given, MACHINE_HAS_LINK_BYTES, "--link-bytes", "the link rate"},
      {m->link_latency_given, MACHINE_HAS_LINK_LATENCY, "--link-latency", "the link latency"},
      {m->pod_given, MACHINE_HAS_POD, "--pod", "the pod's size"},
      {m->threads_given, MACHINE_HAS_THREADS, "--threads", "the threads"},
      {m->model_given, MACHINE_HAS_MODEL, "--model", "the model"},
  };
  for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
    if (opts[i].given && (m->machine.keys & opts[i].keys)) {
      char what[600];
      if (m->machine_path) snprintf(what, sizeof what, "--machine %s", m->machine_path);
      else snprintf(what, sizeof what, "--chip %s", m->machine.name);
      return cli_usage_error(cmd, "%s: %s sets %s, and a machine fixes what it sets: to vary it, write the machine "
                             "with --print-machine > m.json, edit m.json and give --machine m.json", opts[i].opt, what,
                             opts[i].what);
    }
  return CLI_EXIT_OK;
}

/* The machine of a file or preset over the command's defaults, and the options given over it. */
static int build_machine(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind) {
  int rc;
  machine_t *mc = &m->machine;
  *mc = machine_default();
  apply_options(m, false, &mc->pod); /* the command's defaults */
  if (m->machine_path && m->chip_given)
    return cli_usage_error(cmd, "--machine and --chip both name the machine: give one");
  char err[512];
  const bool from_file = m->machine_path || m->chip_given;
  if (m->machine_path && machine_load(m->machine_path, mc, err, sizeof err)) return cli_usage_error(cmd, "%s", err);
  if (m->chip_given && machine_preset((unsigned)m->chip, mc, err, sizeof err)) return cli_usage_error(cmd, "%s", err);
  if (from_file && (m->mxu_given || m->mxus_given || m->cores_given))
    return cli_usage_error(cmd, "%s sets the MXU size, the MXUs and the cores: give it or --mxu/--mxus/--cores, not both",
                           m->machine_path ? "--machine" : "--chip");
  if (from_file && (rc = option_against_machine(cmd, m)) != CLI_EXIT_OK) return rc;
  if (kind != CMD_POD && (mc->pod.size_x != 1 || mc->pod.size_y != 1 || mc->pod.threads > 1))
    return cli_usage_error(cmd, "%s runs one chip: the machine %s is a %ux%u pod on %u threads (pod.x, pod.y, "
                           "sim.threads); use a pod command or a machine of one chip", cmd,
                           m->machine_path ? m->machine_path : "", mc->pod.size_x, mc->pod.size_y, mc->pod.threads);
  apply_options(m, true, &mc->pod);
  /* a link of a flit a cycle has no serialiser: stated as 0 (pod_config_t) */
  const chip_config_t *c = &mc->pod.chip;
  if (mc->pod.link_bytes == 8 * (c->flit_words ? c->flit_words : 1)) mc->pod.link_bytes = 0;
  return CLI_EXIT_OK;
}

int cmd_machine_build(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind) {
  return build_machine(cmd, m, kind);
}

int cmd_machine_resolve(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind, long trace_chip) {
  const int rc = build_machine(cmd, m, kind);
  return rc != CLI_EXIT_OK ? rc : cmd_machine_check(cmd, m, kind, trace_chip);
}

int cmd_machine_check(const char *cmd, cmd_machine_t *m, cmd_machine_kind_t kind, long trace_chip) {
  int rc;
  pod_config_t *p = &m->machine.pod;
  const unsigned w = p->size_x, h = p->size_y;
  if ((rc = cmd_split_check(cmd, p->threads, w, h)) != CLI_EXIT_OK) return rc;
  if (m->rtl_chips) {
    if (p->chip.model == CHIP_MODEL_RTL)
      return cli_usage_error(cmd, "--rtl-chips picks chips to run the RTL among fast ones: it needs --model fast or "
                             "--model check");
    if ((rc = chip_list(cmd, "--rtl-chips", m->rtl_chips, w, h, &m->rtl_flags)) != CLI_EXIT_OK) return rc;
    p->rtl_chips = m->rtl_flags;
  }
  if (trace_chip >= 0 && (uint64_t)trace_chip < (uint64_t)w * h && p->chip.model == CHIP_MODEL_FAST &&
      !(m->rtl_flags && m->rtl_flags[trace_chip]))
    return cli_usage_error(cmd, "chip %ld runs the fast model, which has no waveform: add it to --rtl-chips to trace "
                           "it", trace_chip);
  char err[512];
  if (kind != CMD_LONE_MXU && pod_check(p, NULL, err, sizeof err)) {
    if (m->machine_path) return cli_usage_error(cmd, "machine %s: %s", m->machine_path, err);
    return cli_usage_error(cmd, "%s", err);
  }
  if (m->print_machine) {
    if (machine_write(&m->machine, stdout) || fflush(stdout)) return cli_fail(cmd, "cannot write the machine");
    return CLI_HELP;
  }
  return CLI_EXIT_OK;
}

/* TPUSIM_PROGRESS_SECONDS: unset or empty, the default; else seconds in [0, 3600] (0: a line at
 * every report, as the tests use). */
static bool progress_env(double *seconds) {
  const char *every = getenv("TPUSIM_PROGRESS_SECONDS");
  *seconds = cli_progress_tty() ? 0.5 : 5.0;
  return !every || !*every || (cli_real(every, seconds) && *seconds <= 3600);
}

int cmd_check_env(const char *cmd) {
  double s;
  if (!progress_env(&s))
    return cli_usage_error(cmd, "TPUSIM_PROGRESS_SECONDS is '%.40s': it must be a number of seconds from 0 to 3600 "
                           "(the interval between progress lines; unset: 5, or 0.5 on a terminal)",
                           getenv("TPUSIM_PROGRESS_SECONDS"));
  return CLI_EXIT_OK;
}

void cmd_progress_init(cmd_progress_t *p, const char *cmd) {
  memset(p, 0, sizeof *p);
  p->cmd = cmd;
  double every;
  progress_env(&every); /* (checked before the command ran: cmd_check_env) */
  ticker_init(&p->ticker, every);
  stopwatch_start(&p->watch);
}

void cmd_progress(void *ctx, uint64_t cycles) {
  cmd_progress_t *p = ctx;
  if (cli_quiet() || !ticker_due(&p->ticker)) return;
  cycles += p->base;
  const double secs = stopwatch_seconds(&p->watch), rate = secs > 0 ? (double)cycles / secs : 0.0;
  char left[64] = "", step[96] = "";
  double eta = -1;
  if (p->step_total && p->step) eta = secs / p->step * (p->step_total - p->step);
  else if (p->expected > cycles && rate > 0) eta = (double)(p->expected - cycles) / rate;
  if (eta >= 0) snprintf(left, sizeof left, ", about %.0f s left", eta);
  if (p->step_total && p->step)
    snprintf(step, sizeof step, ", %u/%u steps done, last loss %.4f", p->step, p->step_total, p->loss);
  else if (p->step_total)
    snprintf(step, sizeof step, ", 0/%u steps done", p->step_total);
  cli_progress("%s: cycle %" PRIu64 ", %.0f s, %.0f cycles/s%s%s", p->cmd, cycles, secs, rate, left, step);
}

int cmd_profile_check(const char *cmd, const cmd_profile_t *o, unsigned w, unsigned h) {
  if (o->chips && !o->path && !o->op)
    return cli_usage_error(cmd, "--profile-chips picks the chips of a profile: it needs --profile FILE or --op-profile");
  if (!o->chips) return CLI_EXIT_OK;
  bool *flags = NULL;
  const int rc = chip_list(cmd, "--profile-chips", o->chips, w, h, &flags);
  free(flags);
  return rc;
}

int cmd_profile_begin(const char *cmd, cmd_profile_t *o, unsigned w, unsigned h, double clock_mhz, unsigned rows,
                      unsigned cols) {
  cli_set_quiet(o->quiet);
  o->prof = NULL;
  int rc = cmd_profile_check(cmd, o, w, h);
  if (rc != CLI_EXIT_OK || (!o->path && !o->op)) return rc;
  bool *flags = NULL;
  if (o->chips && (rc = chip_list(cmd, "--profile-chips", o->chips, w, h, &flags)) != CLI_EXIT_OK) return rc;
  const profile_config_t pc = {.pod_w = w, .pod_h = h, .chips = flags, .clock_mhz = clock_mhz, .rows = rows, .cols = cols,
                               .trace_path = dist_active() || !o->path ? NULL : outfile_temp(o->path)}; /* (MPI: rank 0 writes at the end) */
  char err[256];
  o->prof = profile_new(&pc, err, sizeof err);
  free(flags);
  if (!o->prof) return cli_fail(cmd, "%s", err);
  if (*profile_left_out(o->prof)) cli_note("%s: %s", cmd, profile_left_out(o->prof));
  return CLI_EXIT_OK;
}

/* A key of the op profile (kept in o, as the report keeps keys by pointer in lines only). */
static const char *pkey(cmd_profile_t *o, unsigned row, unsigned col, const char *fmt, unsigned i) {
  snprintf(o->keys[row][col], sizeof o->keys[row][col], fmt, i);
  return o->keys[row][col];
}

int cmd_profile_end(const char *cmd, cmd_profile_t *o, report_t *r) {
  if (!o->prof) return CLI_EXIT_OK;
  char err[512];
  /* under mpirun each rank watched its own chips: rank 0 gathers them, writes and reports */
  if (profile_gather(o->prof, err, sizeof err)) return cli_fail(cmd, "%s", err);
  profile_summary(o->prof, &o->sum);
  const profile_summary_t *s = &o->sum;
  if (o->path) {
    const bool bad = dist_rank() == 0 && profile_write(o->prof, outfile_temp(o->path), err, sizeof err);
    if (dist_any(bad)) /* (every rank ends with rank 0's status) */
      return cli_fail(cmd, "%s", bad ? err : "MPI rank 0 could not write the profile");
    if (dist_rank() == 0) /* (the file is rank 0's) */
      cli_note("%s: wrote the profile of %u chip%s to %s%s", cmd, s->chips, s->chips == 1 ? "" : "s", o->path,
               s->events_dropped ? " (the event cap was reached: later intervals of some chips left out; "
                                   "--profile-chips fewer chips)" : "");
  }
  const double flops_per = 2.0 * s->rows * s->cols, hz = s->clock_mhz * 1e6;
  const profile_phase_stats_t *t = &s->total;
  report_object(r, "profile");
  report_u64(r, "chips", s->chips);
  report_u64(r, "events", s->events);
  report_u64(r, "events_dropped", s->events_dropped);
  unsigned row = 0, nt = 0;
  report_line(r, "op profile (per kernel phase; MXU utilisation = compute cycles / MXU cycles; TFLOPS per chip):");
  report_line(r, "  phase                               cycles    share   MXU util   TFLOPS");
  for (unsigned f = 0; f <= s->phases; f++) {
    const profile_phase_stats_t *p = f < s->phases ? &s->phase[f] : t;
    if (f < s->phases && (p->chip_cycles == 0 || row >= 12)) continue; /* (the report shows 12 at most) */
    const unsigned i = row;
    const char *kn = f < s->phases ? pkey(o, row, 0, "phase%u_name", i) : "total_name";
    const char *kc = f < s->phases ? pkey(o, row, 1, "phase%u_cycles", i) : "total_cycles";
    const char *ks = f < s->phases ? pkey(o, row, 2, "phase%u_share", i) : "total_share";
    const char *ku = f < s->phases ? pkey(o, row, 3, "phase%u_mxu_util", i) : "total_mxu_util";
    const char *kf = f < s->phases ? pkey(o, row, 4, "phase%u_tflops", i) : "total_tflops";
    report_str(r, kn, p->name);
    report_u64(r, kc, p->cycles);
    report_f64(r, ks, t->cycles ? (double)p->cycles / (double)t->cycles : 0);
    report_f64(r, ku, p->mxu_cycles ? (double)p->compute / (double)p->mxu_cycles : 0);
    report_f64(r, kf, p->chip_cycles ? (double)p->compute * flops_per * hz / (double)p->chip_cycles * 1e-12 : 0);
    snprintf(o->tmpl[nt], sizeof o->tmpl[nt], "  {profile.%s:%%-30s} {profile.%s:%%11u} {profile.%s*100:%%7.1f}%% "
             "{profile.%s*100:%%8.1f}%% {profile.%s:%%9.3f}", kn, kc, ks, ku, kf);
    report_line(r, o->tmpl[nt++]);
    row++;
  }
  static const char *const ck[PROFILE_IDLE_CAUSES] = {"idle_weights", "idle_inputs", "idle_semaphore", "idle_dma",
                                                      "idle_network", "idle_nothing", "idle_other"};
  report_u64(r, "mxu_cycles", t->mxu_cycles);
  report_u64(r, "mxu_compute", t->compute);
  report_u64(r, "mxu_idle", t->mxu_cycles - t->compute);
  for (int c = 0; c < PROFILE_IDLE_CAUSES; c++) report_u64(r, ck[c], t->idle[c]);
  const double idle = t->mxu_cycles > t->compute ? (double)(t->mxu_cycles - t->compute) : 1;
  static const char *const sk[PROFILE_IDLE_CAUSES] = {"share_weights", "share_inputs", "share_semaphore", "share_dma",
                                                      "share_network", "share_nothing", "share_other"};
  for (int c = 0; c < PROFILE_IDLE_CAUSES; c++) report_text_f64(r, sk[c], (double)t->idle[c] / idle);
  report_line(r, "  MXU idle {profile.mxu_idle} of {profile.mxu_cycles} MXU-cycles: weights "
                 "{profile.share_weights*100:%.1f}%, inputs {profile.share_inputs*100:%.1f}%, semaphore "
                 "{profile.share_semaphore*100:%.1f}%, DMA {profile.share_dma*100:%.1f}%,");
  report_line(r, "           network {profile.share_network*100:%.1f}%, nothing to do "
                 "{profile.share_nothing*100:%.1f}%, other work {profile.share_other*100:%.1f}%");
  /* what the lead core's queues had at their head, over the whole profile */
  static const char *const qn[2] = {"compute", "DMA"};
  for (unsigned q = 0; q < 2; q++) {
    uint64_t all = 0;
    for (unsigned k = 0; k < PROFILE_OPS; k++) all += t->queue_op[q][k];
    size_t used = (size_t)snprintf(o->tmpl[nt], sizeof o->tmpl[nt], "  %s queue at:", qn[q]);
    bool order[PROFILE_OPS] = {false};
    for (unsigned shown = 0; shown < PROFILE_OPS; shown++) { /* largest first */
      unsigned best = PROFILE_OPS;
      for (unsigned k = 0; k < PROFILE_OPS; k++)
        if (!order[k] && t->queue_op[q][k] && (best == PROFILE_OPS || t->queue_op[q][k] > t->queue_op[q][best])) best = k;
      if (best == PROFILE_OPS) break;
      order[best] = true;
      if (used < sizeof o->tmpl[nt])
        used += (size_t)snprintf(o->tmpl[nt] + used, sizeof o->tmpl[nt] - used, "%s %s %.1f%%", shown ? "," : "",
                                 profile_op_name(best), all ? 100.0 * (double)t->queue_op[q][best] / (double)all : 0.0);
    }
    report_line(r, o->tmpl[nt++]);
    for (unsigned k = 0; k < PROFILE_OPS; k++)
      if (t->queue_op[q][k]) {
        snprintf(o->keys[row][k % 8], sizeof o->keys[row][k % 8], "%cq_%s", q ? 'd' : 'c', profile_op_name(k));
        report_u64(r, o->keys[row][k % 8], t->queue_op[q][k]);
        if (k % 8 == 7) row++;
      }
    row++;
  }
  static const char *const lk[4] = {"link_px_util", "link_mx_util", "link_py_util", "link_my_util"};
  for (int d = 0; d < 4; d++)
    report_f64(r, lk[d], t->chip_cycles ? (double)t->link_flits[d] / (double)t->chip_cycles : 0);
  report_f64(r, "busiest_link_util", s->busiest_util);
  report_u64(r, "busiest_link_chip", s->busiest_chip);
  static const char *const dn[4] = {"+X", "-X", "+Y", "-Y"};
  report_str(r, "busiest_link_dir", dn[s->busiest_dir & 3]);
  report_line(r, "  links (mean over chips) +X {profile.link_px_util*100:%.1f}%, -X {profile.link_mx_util*100:%.1f}%, "
                 "+Y {profile.link_py_util*100:%.1f}%, -Y {profile.link_my_util*100:%.1f}%; busiest: chip "
                 "{profile.busiest_link_chip} {profile.busiest_link_dir} {profile.busiest_link_util*100:%.1f}%");
  report_str(r, "bottleneck", s->bottleneck < 0 ? "compute" : profile_idle_name((profile_idle_t)s->bottleneck));
  report_str(r, "bottleneck_line", s->bottleneck_line);
  report_line(r, "  bottleneck: {profile.bottleneck_line}");
  report_object_end(r);
  return CLI_EXIT_OK;
}

void cmd_profile_free(cmd_profile_t *o) {
  profile_free(o->prof);
  o->prof = NULL;
}
