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
#include "system/chip.h"
#include "system/dist.h"
#include "util/cli.h"

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

int cmd_plot(const char *exe_dir, const char *script_name, const char *csv, const char *png, const char *title) {
  /* the binary is build/tpusim (or build/san/tpusim): the script is in scripts/ above it */
  char script[4200];
  snprintf(script, sizeof script, "%s/../scripts/%s", exe_dir, script_name);
  if (access(script, R_OK)) snprintf(script, sizeof script, "%s/../../scripts/%s", exe_dir, script_name);
  char *argv[] = {"/usr/bin/python3", script, (char *)csv, (char *)png, (char *)title, NULL};
  extern char **environ;
  pid_t pid;
  int status;
  if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int cmd_coll_check(const fw_slice_t *s, const fw_coll_args_t *a, unsigned lanes, uint64_t elems, coll_golden_io_t *io,
                   coll_check_t *chk) {
  io->share = dist_rank(), io->shares = dist_size();
  const int rc = coll_golden_check_stream(s, a, lanes, elems, io, chk);
  if (!dist_active() || rc) return rc; /* (a read that fails, fails on every rank: chip.h) */
  /* the shares' verdicts summed; the first mismatch is the one first in the check's order */
  int64_t counts[3] = {(int64_t)chk->checked, (int64_t)chk->mismatches, (int64_t)chk->bound_violations};
  dist_sum_i64(counts, 3);
  uint64_t bits; /* a non-negative double's bits order as the double does: the max, exactly */
  memcpy(&bits, &chk->max_rel_error, sizeof bits);
  uint64_t worst = UINT64_MAX - bits;
  dist_min_u64(&worst, 1);
  const uint64_t key = coll_golden_merge_key(a, s->w * s->h, elems, chk);
  uint64_t first = key, from;
  dist_min_u64(&first, 1);
  from = first != UINT64_MAX && key == first ? dist_rank() : UINT64_MAX;
  dist_min_u64(&from, 1);
  if (from != UINT64_MAX) dist_bcast(chk, sizeof *chk, (unsigned)from);
  chk->checked = (uint64_t)counts[0], chk->mismatches = (uint64_t)counts[1];
  chk->bound_violations = (uint64_t)counts[2];
  bits = UINT64_MAX - worst;
  memcpy(&chk->max_rel_error, &bits, sizeof bits);
  return rc;
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

int cmd_apply_chip(const char *cmd, cmd_models_t *m, unsigned mxu[2], unsigned *clock_mhz, uint64_t *hbm_bw) {
  if (m->chip_given) {
    if (m->mxu_given || m->mxus || m->cores)
      return cli_usage_error(cmd, "--chip sets the MXU size, the MXUs and the cores: give it or --mxu/--mxus/--cores, "
                             "not both");
    const chip_preset_t *p = chip_preset_at((unsigned)m->chip);
    mxu[0] = p->rows, mxu[1] = p->cols;
    m->mxus = p->mxus, m->cores = p->cores;
    if (!m->flit_words) m->flit_words = p->flit_words;
    if (!m->link_bytes) m->link_bytes = p->link_bytes;
    if (clock_mhz) *clock_mhz = p->clock_mhz;
    if (hbm_bw) *hbm_bw = p->hbm_bytes_per_cycle;
  }
  if (!m->mxus) m->mxus = 1;
  if (!m->cores) m->cores = 1;
  if (!m->flit_words) m->flit_words = 1;
  /* (a preset's wide flits on the RTL: refused where the chip is built, after the sizes) */
  char err[256];
  if ((m->flit_given || m->model == CHIP_MODEL_FAST) &&
      chip_flit_words_check(m->flit_words, mxu[1], (chip_model_t)m->model, err, sizeof err))
    return cli_usage_error(cmd, "%s", err);
  if (m->link_bytes > 8 * m->flit_words)
    return cli_usage_error(cmd, "--link-bytes %u: a link carries at most a flit a cycle (%u bytes with %u-word flits)",
                           m->link_bytes, 8 * m->flit_words, m->flit_words);
  if (m->link_bytes == 8 * m->flit_words) m->link_bytes = 0; /* (a flit a cycle: no serialiser) */
  return CLI_EXIT_OK;
}

int cmd_models_resolve(const char *cmd, const cmd_models_t *m, unsigned w, unsigned h, long trace_chip,
                       bool **rtl_chips) {
  *rtl_chips = NULL;
  const unsigned n = w * h;
  const int split = cmd_split_check(cmd, m->threads, w, h);
  if (split != CLI_EXIT_OK) return split;
  if (m->rtl_chips) {
    if (m->model == CHIP_MODEL_RTL)
      return cli_usage_error(cmd, "--rtl-chips picks chips to run the RTL among fast ones: it needs --model fast or "
                             "--model check");
    bool *flags = calloc(n ? n : 1, sizeof *flags);
    char *text = strdup(m->rtl_chips);
    if (!flags || !text) {
      free(flags), free(text);
      return cli_fail(cmd, "out of memory");
    }
    char *save = NULL;
    bool any = false;
    for (char *item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
      unsigned lo, hi;
      if (!list_item(item, n, &lo, &hi)) {
        int rc = cli_usage_error(cmd, "--rtl-chips: '%s' is not a chip of the %ux%u pod (chips 0..%u, index y*%u+x; "
                                 "ranges a-b)", item, w, h, n - 1, w);
        free(flags), free(text);
        return rc;
      }
      for (unsigned i = lo; i <= hi; i++) flags[i] = true;
      any = true;
    }
    free(text);
    if (!any) {
      free(flags);
      return cli_usage_error(cmd, "--rtl-chips names no chip");
    }
    *rtl_chips = flags;
  }
  if (trace_chip >= 0 && m->model == CHIP_MODEL_FAST && !(*rtl_chips && (*rtl_chips)[trace_chip])) {
    free(*rtl_chips);
    *rtl_chips = NULL;
    return cli_usage_error(cmd, "chip %ld runs the fast model, which has no waveform: add it to --rtl-chips to trace "
                           "it", trace_chip);
  }
  return CLI_EXIT_OK;
}

void cmd_progress_init(cmd_progress_t *p, const char *cmd) {
  p->cmd = cmd;
  ticker_init(&p->ticker, 2.0);
  stopwatch_start(&p->watch);
}

void cmd_progress(void *ctx, uint64_t cycles) {
  cmd_progress_t *p = ctx;
  if (!ticker_due(&p->ticker)) return;
  const double secs = stopwatch_seconds(&p->watch);
  fprintf(stderr, "%s: cycle %" PRIu64 " of the pod's run, %.0f s, %.0f cycles/s\n", p->cmd, cycles, secs,
          secs > 0 ? (double)cycles / secs : 0.0);
}
