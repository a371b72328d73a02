/* noc_net: see noc_net.h; the router models behind one table, noc_router_ops.h. */
#include "network/noc_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/noc_fast.h"
#include "network/noc_router_ops.h"
#include "network/torus.h"
#include "vmodel/noc_router.h"
#include "vmodel/vmodel.h"

const char *const noc_port_names[NOC_PORTS] = {"local", "+X", "-X", "+Y", "-Y"};

/* Indexed by chip_model_t. */
static const noc_router_ops_t *const router_models[CHIP_MODELS] = {
    [CHIP_MODEL_RTL] = &noc_router_rtl_ops, [CHIP_MODEL_FAST] = &noc_router_fast_ops,
    [CHIP_MODEL_CHECK] = &noc_router_check_ops};

uint64_t noc_payload(uint32_t id, unsigned index) { return payload_of(id, index); }

/* ------------------------------------------------------------------ set-up */

noc_net_t *noc_net_new(const noc_config_t *cfg, char *err, size_t errlen) {
  if (cfg->size_x < 2 || cfg->size_y < 2 || cfg->size_x > 255 || cfg->size_y > 255) {
    snprintf(err, errlen, "pod %ux%u: each dimension must be 2..255", cfg->size_x, cfg->size_y);
    return NULL;
  }
  if (!noc_router_available(cfg->vcs)) {
    snprintf(err, errlen, "no router with %u VCs in this build (built: %s)", cfg->vcs, noc_router_vcs_list());
    return NULL;
  }
  if (cfg->buf_depth < 1 || cfg->buf_depth > NOC_MAX_DEPTH) {
    snprintf(err, errlen, "buffer depth %u: must be 1..%u flits", cfg->buf_depth, NOC_MAX_DEPTH);
    return NULL;
  }
  if (cfg->model >= CHIP_MODELS) {
    snprintf(err, errlen, "unknown router model %d", (int)cfg->model);
    return NULL;
  }
  noc_net_t *net = calloc(1, sizeof *net);
  if (!net) goto oom;
  net->cfg = *cfg;
  net->router = router_models[cfg->model];
  net->nodes = cfg->size_x * cfg->size_y;
  net->flit_bits = NOC_FLIT_BITS(cfg->vcs);
  net->cred_bits = NOC_PORTS * cfg->vcs;
  net->node = calloc(net->nodes, sizeof *net->node);
  net->link = calloc(net->nodes, sizeof *net->link);
  net->ni_busy = calloc(net->nodes, 1);
  net->ejected = calloc(net->nodes, sizeof *net->ejected);
  net->routers = calloc(net->nodes, sizeof *net->routers);
  net->local_out = calloc(net->nodes, sizeof *net->local_out);
  net->local_events = calloc(net->nodes, sizeof *net->local_events);
  net->local_list = calloc(net->nodes, sizeof *net->local_list);
  if (!net->node || !net->link || !net->ni_busy || !net->ejected || !net->routers || !net->local_out ||
      !net->local_events || !net->local_list)
    goto oom;
  for (unsigned n = 0; n < net->nodes; n++) {
    node_t *nd = &net->node[n];
    for (unsigned v = 0; v < 8; v++) nd->ej_pkt[v] = UINT32_MAX;
    for (unsigned v = 0; v < cfg->vcs; v++) nd->inj_credits[v] = (uint8_t)cfg->buf_depth;
    /* Router port p (1..4) is the link in torus direction p - 1 (noc_router.h). */
    for (unsigned p = 1; p < NOC_PORTS; p++)
      net->link[n].nbr[p - 1] = torus_neighbour(cfg->size_x, cfg->size_y, n, (torus_dir_t)(p - NOC_PORT_XPOS));
    if (net->router->init(net, n, err, errlen)) {
      noc_net_free(net);
      return NULL;
    }
    net->routers[n] = net->link[n].fast;
  }
  net->depth = cfg->link_latency + 2;
  net->slot = calloc(net->depth, sizeof *net->slot);
  if (!net->slot) goto oom;
  for (unsigned t = 0; t < net->depth; t++) {
    net->slot[t].flit = calloc((size_t)net->nodes * NOC_PORTS, sizeof(flit_t));
    net->slot[t].arrive = calloc(net->nodes, sizeof(uint64_t));
    if (!net->slot[t].flit || !net->slot[t].arrive) goto oom;
  }
  return net;
oom:
  snprintf(err, errlen, "out of memory building a %ux%u network", cfg->size_x, cfg->size_y);
  noc_net_free(net);
  return NULL;
}

void noc_net_free(noc_net_t *net) {
  if (!net) return;
  if (net->node) {
    for (unsigned n = 0; n < net->nodes; n++) {
      vmodel_free(net->node[n].model);
      free(net->node[n].source.heads);
    }
  }
  if (net->link)
    for (unsigned n = 0; n < net->nodes; n++) noc_fast_free(net->link[n].fast);
  if (net->slot) {
    for (unsigned t = 0; t < net->depth; t++) {
      free(net->slot[t].flit);
      free(net->slot[t].arrive);
    }
  }
  free(net->slot);
  free(net->node);
  free(net->link);
  free(net->ni_busy);
  free(net->ejected);
  free(net->routers);
  free(net->local_out);
  free(net->local_events);
  free(net->local_list);
  free(net->pkts);
  free(net);
}

/* ------------------------------------------------------------------ packets */

/* The capacity is a power of two, so positions wrap with a mask. */
static int queue_push(head_queue_t *q, uint64_t head) {
  if (q->count == q->cap) {
    uint32_t cap = q->cap ? 2 * q->cap : 16;
    uint64_t *heads = malloc((size_t)cap * sizeof *heads);
    if (!heads) return -1;
    for (uint32_t i = 0; i < q->count; i++) heads[i] = q->heads[(q->head + i) & (q->cap - 1)];
    free(q->heads);
    q->heads = heads;
    q->head = 0;
    q->cap = cap;
  }
  q->heads[(q->head + q->count) & (q->cap - 1)] = head;
  q->count++;
  return 0;
}

uint32_t noc_net_send(noc_net_t *net, uint32_t src, uint32_t dst, unsigned flits, bool measured) {
  if (net->npkts == net->cap_pkts) {
    uint32_t cap = net->cap_pkts ? 2 * net->cap_pkts : 1024;
    noc_packet_t *p = realloc(net->pkts, (size_t)cap * sizeof *p);
    if (!p) return UINT32_MAX;
    net->pkts = p;
    net->cap_pkts = cap;
  }
  uint32_t id = net->npkts;
  const unsigned X = net->cfg.size_x;
  const uint64_t head = (uint64_t)(dst % X) | (uint64_t)(dst / X) << 8 | (uint64_t)flits << 16 | (uint64_t)id << 32;
  if (queue_push(&net->node[src].source, head)) return UINT32_MAX;
  net->ni_busy[src] = 1;
  net->pkts[id] = (noc_packet_t){net->cycle, UINT64_MAX, src, dst, (uint16_t)flits, 0, measured};
  net->npkts++;
  net->in_flight++;
  net->measured_in_flight += measured;
  return id;
}

/* ------------------------------------------------------------------ one cycle */
/* The scoreboard's view of a flit leaving the network at node n. */
static void ni_eject(noc_net_t *net, unsigned n, const flit_t *f) {
  node_t *nd = &net->node[n];
  net->sb.ejected_flits++;
  net->last_activity = net->cycle;
  uint32_t *cur = &nd->ej_pkt[f->vc];
  if (f->head) {
    uint32_t id = (uint32_t)(f->data >> 32);
    unsigned X = net->cfg.size_x;
    if (id >= net->npkts) {
      net->sb.corrupted++;
      *cur = UINT32_MAX;
      return;
    }
    noc_packet_t *p = &net->pkts[id];
    if (p->received) {
      net->sb.duplicated++;
      *cur = UINT32_MAX;
      return;
    }
    if (p->dst != n || (f->data & 0xFFFF) != ((p->dst % X) | (p->dst / X) << 8)) net->sb.misrouted++;
    if (((f->data >> 16) & 0xFF) != p->flits) net->sb.corrupted++;
    *cur = id;
  } else if (*cur == UINT32_MAX || f->data != noc_payload(*cur, net->pkts[*cur].received)) {
    net->sb.corrupted++;
    if (*cur == UINT32_MAX) return;
  }
  noc_packet_t *p = &net->pkts[*cur];
  p->received++;
  if (f->tail != (p->received == p->flits)) net->sb.corrupted++;
  if (f->tail) {
    if (p->received == p->flits) {
      p->delivered = net->cycle;
      net->sb.delivered_packets++;
      net->in_flight--;
      net->measured_in_flight -= p->measured;
    }
    *cur = UINT32_MAX;
  }
}

/* 3. The scoreboard checks the cycle's ejected flits, in the order they came out, their packet
 * records asked for first. */
static void eject_all(noc_net_t *net) {
  const unsigned count = net->n_ejected;
  if (!count) return;
  for (unsigned k = 0; k < count; k++) {
    const ejected_t *e = &net->ejected[k];
    const uint32_t id = e->f.head ? (uint32_t)(e->f.data >> 32) : net->node[e->node].ej_pkt[e->f.vc];
    if (id < net->npkts) __builtin_prefetch(&net->pkts[id]);
  }
  for (unsigned k = 0; k < count; k++) ni_eject(net, net->ejected[k].node, &net->ejected[k].f);
  net->n_ejected = 0;
}

void noc_net_step(noc_net_t *net) {
  if (net->diverged) return;
  if (!net->router->step(net)) return;
  eject_all(net);
  net->cycle++;
}

const char *noc_net_divergence(const noc_net_t *net) { return net->diverged ? net->divergence : NULL; }

/* ------------------------------------------------------------------ queries */

uint64_t noc_net_cycle(const noc_net_t *net) { return net->cycle; }
unsigned noc_net_nodes(const noc_net_t *net) { return net->nodes; }
const noc_config_t *noc_net_config(const noc_net_t *net) { return &net->cfg; }
const noc_packet_t *noc_net_packet(const noc_net_t *net, uint32_t id) { return &net->pkts[id]; }
uint32_t noc_net_packet_count(const noc_net_t *net) { return net->npkts; }
const noc_scoreboard_t *noc_net_scoreboard(const noc_net_t *net) { return &net->sb; }
uint64_t noc_net_in_flight(const noc_net_t *net) { return net->in_flight; }
size_t noc_net_backlog(const noc_net_t *net, uint32_t node) { return net->node[node].source.count; }
uint64_t noc_net_measured_in_flight(const noc_net_t *net) { return net->measured_in_flight; }
uint64_t noc_net_quiet_cycles(const noc_net_t *net) { return net->cycle - net->last_activity; }

uint64_t noc_net_flits_held(noc_net_t *net) {
  uint64_t held = 0;
  for (unsigned n = 0; n < net->nodes; n++) {
    node_t *nd = &net->node[n];
    held += net->router->occupancy(net, n) + nd->source.count + nd->injecting;
  }
  for (unsigned t = 0; t < net->depth; t++) /* on the links */
    for (unsigned n = 0; n < net->nodes; n++) held += (unsigned)__builtin_popcountll(net->slot[t].arrive[n] >> ARRIVE_PORTS);
  return held;
}

bool noc_net_overflow(const noc_net_t *net) {
  for (unsigned n = 0; n < net->nodes; n++)
    if (net->router->overflow(net, n)) return true;
  return false;
}

void noc_net_describe_stuck(noc_net_t *net, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  unsigned shown = 0;
  for (unsigned n = 0; n < net->nodes && shown < 16; n++) {
    for (unsigned p = 0; p < NOC_PORTS; p++) {
      for (unsigned v = 0; v < net->cfg.vcs; v++) {
        unsigned cnt = net->router->vc_count(net, n, p, v);
        if (cnt && used < len && shown < 16) {
          used += (size_t)snprintf(buf + used, len - used, "%srouter (%u,%u) input %s VC %u holds %u flit%s",
                                   shown ? "; " : "", n % net->cfg.size_x, n / net->cfg.size_x,
                                   noc_port_names[p], v, cnt, cnt == 1 ? "" : "s");
          shown++;
        }
      }
    }
  }
  if (!shown) snprintf(buf, len, "no flits in any router buffer; %llu packets still queued at sources",
                       (unsigned long long)net->in_flight);
}

int noc_net_trace(noc_net_t *net, uint32_t node, const char *path, char *err, size_t errlen) {
  return net->router->trace(net, node, path, err, errlen);
}
