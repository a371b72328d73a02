/* pod: see pod.h. */
#include "system/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/link.h"
#include "system/torus.h"
#include "util/bits.h"

#define DIRS TORUS_DIRS /* +X, -X, +Y, -Y: the chip's net port index */
#define FLIT_WORDS ((CHIP_FLIT_BITS + 31) / 32)

typedef struct {
  chip_t *chip;
  chip_net_ports_t port;
  link_t flit[DIRS];   /* out of net port d, towards that neighbour */
  link_t credit[DIRS]; /* credits out of net port d, back to that neighbour */
  uint64_t busy_until; /* the last cycle of the last run in which the chip was not quiet */
} pod_node_t;

struct pod {
  pod_config_t cfg;
  unsigned n;
  pod_node_t *node;
  unsigned *checked, nchecked;  /* the chips in lockstep (CHIP_MODEL_CHECK) */
  char divergence[640];
};

static unsigned neighbour(const pod_t *p, unsigned i, unsigned d) {
  return torus_neighbour(p->cfg.size_x, p->cfg.size_y, i, (torus_dir_t)d);
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
  p->node = calloc(p->n, sizeof *p->node);
  p->checked = calloc(p->n, sizeof *p->checked);
  if (!p->node || !p->checked) goto oom;
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
    chip_net_ports(p->node[i].chip, &p->node[i].port);
    for (unsigned d = 0; d < DIRS; d++)
      if (link_init(&p->node[i].flit[d], cfg->link_latency, FLIT_WORDS * 4) ||
          link_init(&p->node[i].credit[d], cfg->link_latency, 1))
        goto oom;
  }
  return p;
oom:
  snprintf(err, errlen, "out of memory building a %ux%u pod", cfg->size_x, cfg->size_y);
  pod_free(p);
  return NULL;
}

void pod_free(pod_t *p) {
  if (!p) return;
  for (unsigned i = 0; p->node && i < p->n; i++) {
    chip_free(p->node[i].chip);
    for (unsigned d = 0; d < DIRS; d++) {
      link_free(&p->node[i].flit[d]);
      link_free(&p->node[i].credit[d]);
    }
  }
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

/* One cycle of the whole pod: links in, every chip, links out. */
static bool pod_tick(pod_t *p) {
  const unsigned V = CHIP_ROUTER_VCS;
  bool traffic = false;
  for (unsigned i = 0; i < p->n; i++) {
    pod_node_t *nd = &p->node[i];
    uint8_t credits = 0;
    for (unsigned d = 0; d < DIRS; d++) {
      pod_node_t *nb = &p->node[neighbour(p, i, d)];
      const uint32_t *f = (const uint32_t *)link_slot(&nb->flit[torus_opposite((torus_dir_t)d)]);
      bits_copy(nd->port.in_flit, d * CHIP_FLIT_BITS, f, 0, CHIP_FLIT_BITS);
      credits |= (uint8_t)(*link_slot(&nb->credit[torus_opposite((torus_dir_t)d)]) << (d * V));
    }
    *nd->port.credit_in = credits;
  }
  for (unsigned i = 0; i < p->n; i++) chip_tick(p->node[i].chip);
  for (unsigned i = 0; i < p->n; i++) {
    pod_node_t *nd = &p->node[i];
    for (unsigned d = 0; d < DIRS; d++) {
      uint32_t *f = (uint32_t *)link_slot(&nd->flit[d]);
      memset(f, 0, FLIT_WORDS * 4);
      bits_copy(f, 0, nd->port.out_flit, d * CHIP_FLIT_BITS, CHIP_FLIT_BITS);
      traffic |= bits_get(f, CHIP_FLIT_BITS - 1, 1) != 0;
      *link_slot(&nd->credit[d]) = (uint8_t)((*nd->port.credit_out >> (d * V)) & ((1u << V) - 1));
    }
  }
  for (unsigned i = 0; i < p->n; i++)
    for (unsigned d = 0; d < DIRS; d++) {
      link_advance(&p->node[i].flit[d]);
      link_advance(&p->node[i].credit[d]);
    }
  return traffic;
}

static bool links_empty(const pod_t *p) {
  for (unsigned i = 0; i < p->n; i++)
    for (unsigned d = 0; d < DIRS; d++) {
      const link_t *l = &p->node[i].flit[d];
      for (unsigned s = 0; s < l->depth; s++)
        if (bits_get((const uint32_t *)(l->slots + s * l->slot_bytes), CHIP_FLIT_BITS - 1, 1)) return false;
    }
  return true;
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

/* Every chip quiet and every link empty. */
static bool pod_quiet(pod_t *p) {
  for (unsigned i = 0; i < p->n; i++)
    if (!chip_quiet(p->node[i].chip)) return false;
  return links_empty(p);
}

void pod_reset(pod_t *p) {
  for (unsigned i = 0; i < p->n; i++) {
    chip_reset(p->node[i].chip);
    for (unsigned d = 0; d < DIRS; d++) {
      link_t *f = &p->node[i].flit[d], *c = &p->node[i].credit[d];
      memset(f->slots, 0, f->depth * f->slot_bytes);
      memset(c->slots, 0, c->depth * c->slot_bytes);
    }
  }
}

int pod_abort(pod_t *p, uint64_t max_cycles) {
  for (unsigned i = 0; i < p->n; i++) chip_request_abort(p->node[i].chip, ISA_QMASK_ALL);
  pod_tick(p);
  for (uint64_t n = 0; !pod_quiet(p); n++) {
    if (n >= max_cycles) return -1;
    pod_tick(p);
  }
  return 0;
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
  uint64_t n = 0;
  bool timed_out = false, dropped = false, split = false;
  for (;;) {
    pod_tick(p);
    n++;
    if (p->nchecked && (split = diverged(p))) break;
    if ((n & 255) == 0)  /* a dropped packet will never arrive: stop early, with the reason */
      for (unsigned i = 0; i < p->n && !dropped; i++) dropped = chip_slice_drops(p->node[i].chip) != drops0[i];
    if (dropped) break;
    bool quiet = true;
    for (unsigned i = 0; i < p->n; i++)
      if (!chip_quiet(p->node[i].chip)) {
        p->node[i].busy_until = n;
        quiet = false;
      }
    if (quiet && links_empty(p)) break;
    if (n >= max_cycles) {
      timed_out = true;
      break;
    }
  }
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
