/*
 * profile_summary: the op profile (profile.h, profile_summary): the per-chip sums the observer
 * kept, added over the profiled chips and phases, with the busiest link, the longest semaphore
 * wait and the bottleneck's line (docs/profiling.md, "The op profile").
 */
#include "profile/profile_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *profile_op_name(unsigned op) {
  static const char *const n[PROFILE_OPS] = {"stopped", "HALT",     "FENCE",      "SEM_WAIT",  "SEM_SIGNAL", "DMA",
                                             "MXU_LOAD", "MXU_MATMUL", "MXU_STORE", "VEC",       "RDMA"};
  return op < PROFILE_OPS ? n[op] : "?";
}

const char *profile_idle_name(profile_idle_t c) {
  static const char *const n[PROFILE_IDLE_CAUSES] = {"weights", "inputs", "semaphore", "DMA",
                                                     "network", "nothing to do", "other work"};
  return c < PROFILE_IDLE_CAUSES ? n[c] : "?";
}

static void add_stats(profile_phase_stats_t *a, const profile_phase_stats_t *b) {
  a->chip_cycles += b->chip_cycles, a->mxu_cycles += b->mxu_cycles;
  a->compute += b->compute, a->mxu_busy += b->mxu_busy, a->weight_load += b->weight_load;
  for (int i = 0; i < PROFILE_IDLE_CAUSES; i++) a->idle[i] += b->idle[i];
  a->dma_busy += b->dma_busy, a->vec_busy += b->vec_busy, a->hbm_bytes += b->hbm_bytes;
  for (int d = 0; d < LINK_DIRS; d++) a->link_flits[d] += b->link_flits[d];
  for (int q = 0; q < 2; q++)
    for (int o = 0; o < PROFILE_OPS; o++) a->queue_op[q][o] += b->queue_op[q][o];
}

static void bottleneck(profile_summary_t *s, unsigned w);

void profile_summary(const profile_t *p, profile_summary_t *s) {
  memset(s, 0, sizeof *s);
  s->clock_mhz = p->cfg.clock_mhz;
  s->rows = p->cfg.rows, s->cols = p->cfg.cols;
  s->phases = p->phases;
  for (unsigned f = 0; f < p->phases; f++) snprintf(s->phase[f].name, sizeof s->phase[f].name, "%s", p->phase_name[f]);
  snprintf(s->total.name, sizeof s->total.name, "total");
  double best_link = -1;
  for (unsigned i = 0; i < p->nchips; i++) {
    const pchip_t *c = p->chip[i];
    if (!c || !c->seen) continue;
    s->chips++;
    s->mxus_per_chip = c->mxus * c->cores;
    s->events += c->rec.n, s->events_dropped += c->rec.dropped;
    uint64_t flits[LINK_DIRS] = {0}, cycles = 0;
    for (unsigned f = 0; f < p->phases; f++) {
      add_stats(&s->phase[f], &c->sums.ph[f]);
      if (c->sums.ph[f].chip_cycles > s->phase[f].cycles) s->phase[f].cycles = c->sums.ph[f].chip_cycles;
      for (int d = 0; d < LINK_DIRS; d++) flits[d] += c->sums.ph[f].link_flits[d];
      cycles += c->sums.ph[f].chip_cycles;
    }
    for (int d = 0; d < LINK_DIRS; d++) {
      const double u = cycles ? (double)flits[d] / (double)cycles : 0;
      if (u > best_link) best_link = u, s->busiest_chip = i, s->busiest_dir = (unsigned)d, s->busiest_util = u;
    }
    for (unsigned k = 0; k < c->cores; k++)
      for (unsigned q = 0; q < ISA_NUM_SEMS; q++)
        if (c->sums.wait[k][q] > s->wait_cycles)
          s->wait_cycles = c->sums.wait[k][q], s->wait_chip = i, s->wait_core = k, s->wait_sem = q;
  }
  for (unsigned f = 0; f < p->phases; f++) {
    add_stats(&s->total, &s->phase[f]);
    s->total.cycles += s->phase[f].cycles;
  }
  bottleneck(s, p->cfg.pod_w ? p->cfg.pod_w : 1);
}

/* The bottleneck rule (profile.h) over s's total, and its line (w: the pod's width, for the
 * chips' x, y). */
static void bottleneck(profile_summary_t *s, unsigned w) {
  static const char *const dir[LINK_DIRS] = {"+X", "-X", "+Y", "-Y"};
  const profile_phase_stats_t *t = &s->total;
  const double avail = t->mxu_cycles ? (double)t->mxu_cycles : 1;
  const double util = (double)t->compute / avail;
  /* the largest cause; "nothing to do" only when it outweighs every other cause together (the
   * chips sit idle), as phases without MXU work (copies, collectives) would otherwise name it */
  s->bottleneck = -1;
  uint64_t most = 0, others = 0;
  for (int i = 0; i < PROFILE_IDLE_CAUSES; i++) {
    if (i == PROFILE_IDLE_NOTHING) continue;
    others += t->idle[i];
    if (t->idle[i] > most) most = t->idle[i], s->bottleneck = i;
  }
  if (t->idle[PROFILE_IDLE_NOTHING] > others) most = t->idle[PROFILE_IDLE_NOTHING], s->bottleneck = PROFILE_IDLE_NOTHING;
  if (util >= 0.5 || most == 0) s->bottleneck = -1;
  char *b = s->bottleneck_line;
  const size_t bl = sizeof s->bottleneck_line;
  const double share = s->bottleneck >= 0 ? 100.0 * (double)t->idle[s->bottleneck] / avail : 0;
  switch (s->bottleneck) {
    case -1: snprintf(b, bl, "compute: the MXUs compute %.1f%% of their cycles", 100 * util); break;
    case PROFILE_IDLE_WEIGHTS:
      snprintf(b, bl, "weights: the MXUs wait for weights %.1f%% of their cycles (loads not hidden behind matmuls)", share);
      break;
    case PROFILE_IDLE_INPUTS:
      snprintf(b, bl, "inputs: the MXUs wait for activation rows %.1f%% of their cycles", share);
      break;
    case PROFILE_IDLE_SEMAPHORE:
      snprintf(b, bl, "a semaphore: the compute queues wait with nothing moving %.1f%% of the MXU cycles; longest: chip %u "
               "(%u,%u) core %u semaphore %u, %" PRIu64 " cycles", share, s->wait_chip, s->wait_chip % w, s->wait_chip / w,
               s->wait_core, s->wait_sem, s->wait_cycles);
      break;
    case PROFILE_IDLE_DMA:
      snprintf(b, bl, "DMA: the compute queues wait for the DMA engines %.1f%% of the MXU cycles (HBM traffic %.2f bytes "
               "a chip-cycle)", share, t->chip_cycles ? (double)t->hbm_bytes / (double)t->chip_cycles : 0.0);
      break;
    case PROFILE_IDLE_NETWORK:
      snprintf(b, bl, "the network: the compute queues wait for remote data %.1f%% of the MXU cycles; busiest link: chip "
               "%u (%u,%u) %s at %.1f%%", share, s->busiest_chip, s->busiest_chip % w, s->busiest_chip / w,
               dir[s->busiest_dir], 100 * s->busiest_util);
      break;
    case PROFILE_IDLE_NOTHING:
      snprintf(b, bl, "nothing to do: the compute queues have stopped %.1f%% of the MXU cycles (work ends unevenly, or the "
               "phase has no MXU work)", share);
      break;
    default:
      snprintf(b, bl, "other work: the compute queues issue vector work, stores or wait for the MXU's pipeline %.1f%% of "
               "the MXU cycles", share);
      break;
  }
}
