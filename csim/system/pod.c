/* pod: see pod.h.
 *
 * Time is event-driven (issue 13; docs/scale.md): every cycle the pod looks at what arrives on
 * each chip's links, and steps a chip only when something arrives or the chip says it may act
 * (chip_quiet_for); a chip left alone catches up the cycles it slept (chip_skip: its counters
 * move as they would) before it is stepped again or read. When no chip acts and nothing is on
 * a link, the pod jumps to the next cycle a chip wakes. A Verilated chip always says it may act,
 * so a pod of RTL chips runs every chip every cycle, as before.
 *
 * Links: each chip has a ring of latency + 2 slots per direction. What it sends at cycle t goes
 * into slot t mod D, and the neighbour reads slot (t + 1) mod D, which was written latency + 1
 * cycles earlier: the two never touch the same slot in a cycle, so the chips can be visited in
 * any order. A slot is cleared when it is read, so a link's slots hold only what is in flight.
 * The slots of one cycle position are kept together for every link of the pod, so a cycle's
 * reads and writes stay within one plane of slots however many chips there are. */
#include "system/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/torus.h"

#define DIRS TORUS_DIRS /* +X, -X, +Y, -Y: the chip's net port index */

typedef struct {
  noc_flit_t flit;
  uint8_t credits;       /* the credit bits of this direction (CHIP_ROUTER_VCS) */
} link_slot_t;

typedef struct {
  chip_t *chip;
  unsigned nb[DIRS];          /* the neighbour in each direction */
  uint64_t wake;              /* the tick it must next be stepped at (UINT64_MAX: when something arrives) */
  uint64_t at;                /* the tick it has run up to */
  uint64_t busy_until;        /* the last cycle of the last run in which the chip was not quiet */
  unsigned incoming;          /* link slots in flight towards it: it is looked at every cycle until they land */
  bool quiet;                 /* after its last step: no queue running, no unit busy, no flit held */
} pod_node_t;

struct pod {
  pod_config_t cfg;
  unsigned n, depth;
  pod_node_t *node;
  link_slot_t *slots;           /* depth x n x DIRS: at (position, chip, direction) what the chip sends that way */
  uint64_t tick;                /* cycles the pod has run, ever: the links' slot positions */
  uint64_t in_flight;           /* link slots holding a flit or a credit */
  unsigned *checked, nchecked;  /* the chips in lockstep (CHIP_MODEL_CHECK) */
  char divergence[640];
};

/* The slot at ring position pos of chip i's link in direction d. */
static link_slot_t *slot(pod_t *p, unsigned pos, unsigned i, unsigned d) {
  return &p->slots[((size_t)pos * p->n + i) * DIRS + d];
}

int pod_check(unsigned size_x, unsigned size_y, unsigned rows, unsigned cols, chip_geometry_t *g, char *err,
              size_t errlen) {
  chip_geometry_t mine;
  if (chip_top_geometry(rows, cols, g ? g : &mine)) {
    snprintf(err, errlen, "no chip with a %ux%u MXU; built: %s", rows, cols, chip_top_sizes());
    return -1;
  }
  if (size_x < 1 || size_y < 1 || size_x > 255 || size_y > 255) {
    snprintf(err, errlen, "pod %ux%u: each dimension must be 1..255", size_x, size_y);
    return -1;
  }
  return 0;
}

pod_t *pod_new(const pod_config_t *cfg, char *err, size_t errlen) {
  if (pod_check(cfg->size_x, cfg->size_y, cfg->chip.rows, cfg->chip.cols, NULL, err, errlen)) return NULL;
  pod_t *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  p->cfg = *cfg;
  p->n = cfg->size_x * cfg->size_y;
  p->depth = cfg->link_latency + 2;
  p->node = calloc(p->n, sizeof *p->node);
  p->checked = calloc(p->n, sizeof *p->checked);
  p->slots = calloc((size_t)p->depth * p->n * DIRS, sizeof *p->slots);
  if (!p->node || !p->checked || !p->slots) goto oom;
  p->cfg.rtl_chips = NULL;  /* the caller's array is not kept */
  for (unsigned i = 0; i < p->n; i++) {
    chip_config_t c = cfg->chip;
    c.x = i % cfg->size_x;
    c.y = i / cfg->size_x;
    c.pod_x = cfg->size_x;
    c.pod_y = cfg->size_y;
    c.seed = cfg->chip.seed * 1000003u + i;
    if (cfg->rtl_chips && cfg->rtl_chips[i]) c.model = CHIP_MODEL_RTL;
    if (c.model == CHIP_MODEL_CHECK) p->checked[p->nchecked++] = i;
    p->node[i].chip = chip_new(&c, err, errlen);
    if (!p->node[i].chip) {
      pod_free(p);
      return NULL;
    }
    for (unsigned d = 0; d < DIRS; d++) p->node[i].nb[d] = torus_neighbour(cfg->size_x, cfg->size_y, i, (torus_dir_t)d);
  }
  return p;
oom:
  snprintf(err, errlen, "out of memory building a %ux%u pod", cfg->size_x, cfg->size_y);
  pod_free(p);
  return NULL;
}

void pod_free(pod_t *p) {
  if (!p) return;
  for (unsigned i = 0; p->node && i < p->n; i++) chip_free(p->node[i].chip);
  free(p->slots);
  free(p->node);
  free(p->checked);
  free(p);
}

chip_t *pod_chip(pod_t *p, unsigned x, unsigned y) {
  return x < p->cfg.size_x && y < p->cfg.size_y ? p->node[y * p->cfg.size_x + x].chip : NULL;
}

void pod_size(const pod_t *p, unsigned *size_x, unsigned *size_y) {
  *size_x = p->cfg.size_x;
  *size_y = p->cfg.size_y;
}

/* Brings a chip up to tick t, the cycles it slept skipped (nothing happened in them). */
static void catch_up(pod_t *p, pod_node_t *nd, uint64_t t, uint64_t run_start) {
  if (nd->at >= t) return;
  chip_skip(nd->chip, t - nd->at);
  if (!nd->quiet && t > run_start) nd->busy_until = t - run_start;
  nd->at = t;
  (void)p;
}

/* One cycle of the pod: every chip with something arriving or something to do (its wake is
 * due) is stepped, its outputs put on its links; a chip nothing is on its way to and that
 * sleeps costs a comparison. Returns how many chips were stepped. */
static unsigned pod_tick(pod_t *p, uint64_t run_start) {
  const uint64_t t = p->tick;
  const unsigned V = CHIP_ROUTER_VCS, rd = (unsigned)((t + 1) % p->depth), wr = (unsigned)(t % p->depth);
  unsigned stepped = 0;
  for (unsigned i = 0; i < p->n; i++) {
    pod_node_t *nd = &p->node[i];
    if (nd->wake > t && !nd->incoming) continue;  /* asleep, and nothing on its way to it */
    chip_net_t in;
    bool arrived = false;
    for (unsigned d = 0; d < DIRS; d++) {
      link_slot_t *s = slot(p, rd, nd->nb[d], torus_opposite((torus_dir_t)d));
      in.flit[d] = s->flit;
      in.credits = (uint8_t)((d ? in.credits : 0) | s->credits << (d * V));
      if (s->flit.valid || s->credits) {
        *s = (link_slot_t){0};
        p->in_flight--;
        nd->incoming--;
        arrived = true;
      }
    }
    if (!arrived && nd->wake > t) continue;
    catch_up(p, nd, t, run_start);
    chip_net_in(nd->chip, &in);
    chip_tick(nd->chip);
    nd->at = t + 1;
    stepped++;
    chip_net_t out;
    chip_net_out(nd->chip, &out);
    for (unsigned d = 0; d < DIRS; d++) {
      const uint8_t cr = (out.credits >> (d * V)) & ((1u << V) - 1);
      if (!out.flit[d].valid && !cr) continue;
      *slot(p, wr, i, d) = (link_slot_t){out.flit[d], cr};
      p->in_flight++;
      p->node[nd->nb[d]].incoming++;
    }
    nd->quiet = chip_quiet(nd->chip);
    if (!nd->quiet) nd->busy_until = t + 1 - run_start;
    const uint64_t q = chip_quiet_for(nd->chip);
    nd->wake = q == UINT64_MAX ? UINT64_MAX : t + 1 + q;
  }
  p->tick = t + 1;
  return stepped;
}

/* The first tick after now at which a chip wakes (or UINT64_MAX), when nothing is in flight. */
static uint64_t next_wake(const pod_t *p) {
  uint64_t w = UINT64_MAX;
  for (unsigned i = 0; i < p->n; i++)
    if (p->node[i].wake < w) w = p->node[i].wake;
  return w;
}

static bool pod_quiet(pod_t *p) {
  if (p->in_flight) return false;
  for (unsigned i = 0; i < p->n; i++)
    if (!p->node[i].quiet) return false;
  return true;
}

/* Every chip brought up to now, and to be looked at again (the host is about to act on them). */
static void sync_all(pod_t *p, uint64_t run_start) {
  for (unsigned i = 0; i < p->n; i++) {
    catch_up(p, &p->node[i], p->tick, run_start);
    p->node[i].wake = p->tick;
  }
}

int pod_set_slice(pod_t *p, unsigned x0, unsigned y0, unsigned w, unsigned h) {
  if (w == 0 || h == 0 || w > p->cfg.size_x || h > p->cfg.size_y || x0 > p->cfg.size_x - w ||
      y0 > p->cfg.size_y - h)
    return -1; /* no sum that could wrap */
  for (unsigned y = y0; y < y0 + h; y++)
    for (unsigned x = x0; x < x0 + w; x++) chip_set_slice(pod_chip(p, x, y), x0, y0, w, h);
  return 0;
}

/* Chips whose router dropped packets since `base` (a hardware error: the run stops). */
static size_t report_drops(pod_t *p, const uint32_t *base, char *report, size_t len) {
  size_t used = 0;
  for (unsigned i = 0; i < p->n; i++) {
    uint32_t d = chip_slice_drops(p->node[i].chip) - base[i];
    if (d && used < len)
      used += (size_t)snprintf(report + used, len - used,
                               "%schip (%u,%u): its router dropped %u packet(s) addressed outside its slice",
                               used ? "; " : "", i % p->cfg.size_x, i / p->cfg.size_x, d);
  }
  return used;
}

void pod_reset(pod_t *p) {
  for (unsigned i = 0; i < p->n; i++) {
    pod_node_t *nd = &p->node[i];
    catch_up(p, nd, p->tick, p->tick);
    chip_reset(nd->chip);
    nd->incoming = 0;
    nd->quiet = chip_quiet(nd->chip);
    nd->wake = p->tick;
  }
  memset(p->slots, 0, (size_t)p->depth * p->n * DIRS * sizeof *p->slots);
  p->in_flight = 0;
}

/* Runs the pod until it is quiet: 0, or -1 after max_cycles. */
static int run_until_quiet(pod_t *p, uint64_t max_cycles) {
  const uint64_t start = p->tick;
  sync_all(p, start);
  for (uint64_t n = 0;; n++) {
    if (n >= max_cycles) {
      sync_all(p, start);
      return -1;
    }
    if (!pod_tick(p, start) && !p->in_flight) {
      if (pod_quiet(p)) break;
      const uint64_t w = next_wake(p); /* nothing acts: jump to the next chip that wakes */
      if (w == UINT64_MAX || w - start >= max_cycles) {
        p->tick = start + max_cycles;
        sync_all(p, start);
        return -1;
      }
      if (w > p->tick) p->tick = w;
    } else if (pod_quiet(p)) {
      break;
    }
  }
  sync_all(p, start);
  return 0;
}

int pod_abort(pod_t *p, uint64_t max_cycles) {
  for (unsigned i = 0; i < p->n; i++) chip_request_abort(p->node[i].chip, ISA_QMASK_ALL);
  return run_until_quiet(p, max_cycles + 1);
}

const char *pod_divergence(const pod_t *p) { return p->divergence[0] ? p->divergence : NULL; }

/* Whether a chip in lockstep has found a difference (kept, with the chip's place, in p). */
static bool diverged(pod_t *p) {
  if (p->divergence[0]) return true;
  for (unsigned k = 0; k < p->nchecked; k++) {
    const unsigned i = p->checked[k];
    const char *why = chip_divergence(p->node[i].chip);
    if (why) {
      snprintf(p->divergence, sizeof p->divergence, "chip (%u,%u): %s", i % p->cfg.size_x, i / p->cfg.size_x, why);
      return true;
    }
  }
  return false;
}

int pod_run(pod_t *p, unsigned mask, uint64_t max_cycles, uint64_t *cycles, char *report, size_t len) {
  uint32_t *drops0 = calloc(p->n, sizeof *drops0);
  if (!drops0) {
    snprintf(report, len, "out of memory");
    return -1;
  }
  for (unsigned i = 0; i < p->n; i++) {
    p->node[i].busy_until = 0;
    chip_begin(p->node[i].chip, mask);
    drops0[i] = chip_slice_drops(p->node[i].chip);
  }
  const uint64_t start = p->tick;
  sync_all(p, start);
  uint64_t n = 0, drop_check = 256, progress = 1u << 16;
  bool timed_out = false, dropped = false, split = false;
  for (;;) {
    const unsigned stepped = pod_tick(p, start);
    n = p->tick - start;
    if (p->nchecked && (split = diverged(p))) break;
    if (n >= drop_check) { /* a dropped packet will never arrive: stop early, with the reason */
      drop_check = n + 256;
      for (unsigned i = 0; i < p->n && !dropped; i++) dropped = chip_slice_drops(p->node[i].chip) != drops0[i];
      if (dropped) break;
    }
    if (!p->in_flight && pod_quiet(p)) break;
    if (n >= max_cycles) {
      timed_out = true;
      break;
    }
    if (n >= progress && p->cfg.progress) {
      progress = n + (1u << 16);
      p->cfg.progress(p->cfg.progress_ctx, n);
    }
    if (!stepped && !p->in_flight) { /* nothing acts and nothing is on a link: jump to the next chip that wakes */
      const uint64_t w = next_wake(p);
      p->tick = w == UINT64_MAX || w - start > max_cycles ? start + max_cycles : w > p->tick ? w : p->tick;
      if (p->tick - start >= max_cycles) {
        n = max_cycles;
        timed_out = true;
        break;
      }
    }
  }
  sync_all(p, start);
  *cycles = n;
  int rc = 0;
  size_t used = 0;
  if (len) report[0] = 0;

  if (timed_out) used = (size_t)snprintf(report, len, "timed out after %llu cycles: ", (unsigned long long)max_cycles);
  const size_t head = used;
  if (used < len) used += report_drops(p, drops0, report + used, len - used);
  if (used > head) rc = -1;
  free(drops0);
  for (unsigned i = 0; i < p->n; i++) {
    chip_status_t st;
    if (chip_finish(p->node[i].chip, timed_out || dropped || split, &st) && used < len) {
      used += (size_t)snprintf(report + used, len - used, "%schip (%u,%u): %s", used > head ? "; " : "",
                               i % p->cfg.size_x, i / p->cfg.size_x, st.report);
      rc = -1;
    }
  }
  if (timed_out && rc == 0) {
    if (used < len) used += (size_t)snprintf(report + used, len - used, "flits still in the network");
    rc = -1;
  }
  if (timed_out || dropped || split) { /* leave the pod ready for the next programs */
    bool drained = pod_abort(p, CHIP_DRAIN_CYCLES) == 0;
    if (!drained) pod_reset(p);
    if (used < len)
      snprintf(report + used, len - used, "%s", drained ? " (every queue was aborted; the pod is quiet)"
                                                        : " (every queue was aborted and the pod did not drain: it was "
                                                          "reset)");
  }
  return rc;
}

uint64_t pod_busy_until(const pod_t *p, unsigned x, unsigned y) {
  return p->node[y * p->cfg.size_x + x].busy_until;
}
