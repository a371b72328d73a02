/*
 * profile: the profile's life (profile.h; its concepts: profile_internal.h): the chips it
 * watches, the host's phases and the kernels' marks, and the runs' ends.
 */
#include "profile/profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "0-3,7,9-12": the chips [lo, hi] in runs, into buf. */
static void list_runs(const bool *flags, unsigned n, bool want, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (unsigned i = 0; i < n && used + 24 < len;) {
    if (flags[i] != want) {
      i++;
      continue;
    }
    unsigned j = i;
    while (j + 1 < n && flags[j + 1] == want) j++;
    used += (size_t)snprintf(buf + used, len - used, j > i ? "%s%u-%u" : "%s%u", used ? "," : "", i, j);
    i = j + 1;
  }
}

profile_t *profile_new(const profile_config_t *cfg, char *err, size_t errlen) {
  profile_t *p = calloc(1, sizeof *p);
  const unsigned n = cfg->pod_w * cfg->pod_h;
  if (!p || !(p->chip = calloc(n ? n : 1, sizeof *p->chip))) {
    free(p);
    snprintf(err, errlen, "out of memory for a profile");
    return NULL;
  }
  p->cfg = *cfg;
  if (!p->cfg.max_chips) p->cfg.max_chips = PROFILE_DEFAULT_MAX_CHIPS;
  if (!p->cfg.max_events) p->cfg.max_events = PROFILE_DEFAULT_MAX_EVENTS;
  if (!p->cfg.bucket) p->cfg.bucket = PROFILE_DEFAULT_BUCKET;
  if (p->cfg.clock_mhz <= 0) p->cfg.clock_mhz = CHIP_DEFAULT_CLOCK_MHZ;
  p->nchips = n;
  bool *sel = calloc(n ? n : 1, sizeof *sel);
  if (!sel) {
    profile_free(p);
    snprintf(err, errlen, "out of memory for a profile");
    return NULL;
  }
  for (unsigned i = 0; i < n; i++) {
    sel[i] = cfg->chips ? cfg->chips[i] : i < p->cfg.max_chips;
    p->selected += sel[i];
  }
  if (!cfg->chips && n > p->cfg.max_chips) {
    char runs[256];
    list_runs(sel, n, false, runs, sizeof runs);
    snprintf(p->left_out, sizeof p->left_out, "profiling chips 0-%u of %u; chips %s left out (--profile-chips LIST "
             "picks others)", p->cfg.max_chips - 1, n, runs);
  }
  for (unsigned i = 0; i < n; i++) {
    if (!sel[i]) continue;
    pchip_t *c = aligned_alloc(64, (sizeof *c + 63) / 64 * 64); /* (the quick path's two lines, aligned) */
    if (c) memset(c, 0, sizeof *c);
    if (!c) {
      free(sel);
      profile_free(p);
      snprintf(err, errlen, "out of memory for a profile");
      return NULL;
    }
    c->p = p;
    c->index = i, c->x = i % cfg->pod_w, c->y = i / cfg->pod_w;
    c->rec.limit = (size_t)(p->cfg.max_events / (p->selected ? p->selected : 1));
    if (c->rec.limit < 64) c->rec.limit = 64;
    p->chip[i] = c;
  }
  free(sel);
  snprintf(p->phase_name[0], sizeof p->phase_name[0], "run");
  p->phases = 1;
  return p;
}

void profile_forget_chips(profile_t *p) {
  if (p) p->forgot = true;
}

void profile_free(profile_t *p) {
  if (!p) return;
  stream_drop(p); /* (a trace not finished by profile_write is not left behind) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    if (c->chip && !p->forgot) chip_set_observer(c->chip, NULL, NULL);
    free(c->rec.ev);
    free(c->rec.runs);
    free(c->rec.smp);
    free(c);
  }
  free(p->chip);
  free(p->host);
  free(p);
}

void profile_attach(profile_t *p, unsigned index, chip_t *chip) {
  if (!p || index >= p->nchips || !p->chip[index]) return;
  pchip_t *c = p->chip[index];
  const chip_geometry_t *g = chip_geometry(chip);
  c->chip = chip;
  c->cores = isa_geometry_cores(g);
  c->mxus = g->mxus ? g->mxus : 1;
  c->queues = ISA_NUM_QUEUES * c->cores;
  chip_set_observer(chip, &profile_observer, c);
}

unsigned profile_chips(const profile_t *p) { return p->selected; }
const char *profile_left_out(const profile_t *p) { return p->left_out; }

/* The last phase takes the rest when they run out, named for what it holds. */
static unsigned phases_full(profile_t *p) {
  snprintf(p->phase_name[PROFILE_MAX_PHASES - 1], sizeof p->phase_name[0], "later phases");
  return PROFILE_MAX_PHASES - 1;
}

/* The index of phase `name`, added if new. */
static unsigned phase_index(profile_t *p, const char *name) {
  unsigned i;
  for (i = 0; i < p->phases; i++)
    if (!strcmp(p->phase_name[i], name)) return i;
  if (p->phases == PROFILE_MAX_PHASES) return phases_full(p);
  snprintf(p->phase_name[p->phases], sizeof p->phase_name[0], "%s", name);
  return p->phases++;
}

void profile_marks(profile_t *p, unsigned chip, const uint32_t *at, const char *const *names, unsigned n) {
  if (!p || chip >= p->nchips || !p->chip[chip]) return;
  pchip_t *c = p->chip[chip];
  c->marks.n = 0;
  c->marks.host = p->cur_phase;
  for (unsigned i = 0; i < n && i < PROFILE_MAX_MARKS; i++) {
    char name[64];
    snprintf(name, sizeof name, "%.30s: %.24s", p->phase_name[p->cur_phase], names[i]);
    c->marks.at[c->marks.n] = at[i];
    c->marks.ph[c->marks.n++] = phase_index(p, name);
  }
}

/* The phase's start for the trace's host track (a quote or backslash would need escaping in
 * the JSON: they become '). */
static void host_phase(profile_t *p, const char *name, uint64_t cycle) {
  if (p->host_full) return;
  if (p->nhost == p->host_cap) {
    const size_t cap = p->host_cap ? 2 * p->host_cap : 64; /* (64 doubled reaches the cap exactly) */
    host_phase_t *h = cap <= PROFILE_MAX_HOST_PHASES ? realloc(p->host, cap * sizeof *h) : NULL;
    if (!h) {
      p->host_full = true, p->host_cut = cycle;
      return;
    }
    p->host = h, p->host_cap = cap;
  }
  host_phase_t *h = &p->host[p->nhost++];
  h->cycle = cycle;
  snprintf(h->name, sizeof h->name, "%s", name);
  for (char *c = h->name; *c; c++)
    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '\'';
}

void profile_phase(profile_t *p, const char *name, uint64_t cycle) {
  /* the chips stand at `cycle`: what they do from now on counts for the phase */
  if (!p) return;
  host_phase(p, name, cycle);
  unsigned i;
  for (i = 0; i < p->phases; i++)
    if (!strcmp(p->phase_name[i], name)) break;
  if (i == p->phases) {
    if (p->phases == PROFILE_MAX_PHASES) i = phases_full(p);
    else snprintf(p->phase_name[p->phases++], sizeof p->phase_name[0], "%s", name);
  }
  p->cur_phase = i;
}

void profile_run_end(profile_t *p) {
  if (!p) return;
  stream_join(p); /* (the last run is in the file; this one is next) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c || !c->chip || !c->seen) continue;
    observer_run_end(c);
  }
  /* every chip's records so far make a run (the same count of runs on every MPI rank) */
  for (unsigned i = 0; i < p->nchips; i++) {
    pchip_t *c = p->chip[i];
    if (!c) continue;
    pchip_records_t *rec = &c->rec;
    if (rec->nruns == rec->runs_cap) {
      const unsigned cap = rec->runs_cap ? 2 * rec->runs_cap : 16;
      size_t *r = realloc(rec->runs, cap * sizeof *r);
      if (!r) { /* (out of memory: the run is merged with the next; the trace stays whole) */
        continue;
      }
      rec->runs = r, rec->runs_cap = cap;
    }
    rec->runs[rec->nruns++] = rec->n;
  }
  stream_run(p);
}

const profile_ev_t *profile_events(const profile_t *p, unsigned index, size_t *n) {
  *n = 0;
  if (index >= p->nchips || !p->chip[index]) return NULL;
  *n = p->chip[index]->rec.n;
  return p->chip[index]->rec.ev;
}

void profile_span(const profile_t *p, unsigned index, uint64_t *first, uint64_t *end) {
  *first = *end = 0;
  if (index < p->nchips && p->chip[index]) *first = p->chip[index]->first, *end = p->chip[index]->end;
}

