/* noc_router_fast: the fast C model of the router (fast/noc_fast.h) at every node, the routers
 * stepped as one network (noc_router_ops.h). */
#include <stdio.h>

#include "fast/noc_fast.h"
#include "network/noc_router_ops.h"

/* The fast router of node n, as after reset, linked to its neighbours. Returns -1 with a message. */
int noc_router_fast_init(noc_net_t *net, unsigned n, char *err, size_t errlen) {
  const noc_config_t *cfg = &net->cfg;
  noc_fast_config_t fc = {.vcs = cfg->vcs, .num_local = 1, .x = n % cfg->size_x, .y = n / cfg->size_x,
                          .size_x = cfg->size_x, .size_y = cfg->size_y, .buf_depth = cfg->buf_depth};
  link_node_t *ln = &net->link[n];
  ln->fast = noc_fast_new(&fc, err, errlen);
  if (!ln->fast) return -1;
  ln->fast_out = noc_fast_out(ln->fast);
  for (unsigned p = 1; p < NOC_PORTS; p++) noc_fast_link(ln->fast, p, ln->nbr[p - 1], opposite(p));
  return 0;
}

static unsigned fast_occupancy(const noc_net_t *net, unsigned n) { return noc_fast_occupancy(net->link[n].fast); }
static bool fast_overflow(const noc_net_t *net, unsigned n) { return noc_fast_overflow(net->link[n].fast); }

static unsigned fast_vc_count(noc_net_t *net, unsigned n, unsigned port, unsigned vc) {
  return noc_fast_vc_count(net->link[n].fast, port, vc);
}

static int fast_trace(noc_net_t *net, unsigned n, const char *path, char *err, size_t errlen) {
  (void)net, (void)n, (void)path;
  snprintf(err, errlen, "tracing needs the RTL router (--model rtl or check): a fast model has no waveform");
  return -1;
}

/* The fast routers are stepped as one network (noc_fast_step_network): the NIs' injections are
 * written into the read slot first, the routers then read it and send onto the links in one
 * pass (a router with nothing to do is passed over, the event-driven part of CHIP_MODEL_FAST),
 * and the local outputs go to the NIs after. */
static bool step_fast(noc_net_t *net) {
  slot_t *rd = slot_read(net), *wr = slot_write(net), *next = slot_next(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    if (!net->ni_busy[n]) continue;
    const flit_t f = ni_inject(net, &net->node[n], n);
    if (f.valid) {
      rd->flit[(size_t)n * NOC_PORTS + NOC_PORT_LOCAL] = f;
      rd->arrive[n] |= 1ull << (ARRIVE_PORTS + NOC_PORT_LOCAL);
    }
  }
  noc_fast_links_t links = {.rd_flit = rd->flit, .rd_arrive = rd->arrive, .wr_flit = wr->flit,
                            .wr_arrive = wr->arrive, .local_out = net->local_out,
                            .local_events = net->local_events, .local = net->local_list};
  noc_fast_step_network(net->routers, net->nodes, &links);
  if (links.forwarded) net->last_activity = net->cycle;
  const uint32_t vc_mask = (1u << net->cfg.vcs) - 1;
  for (unsigned k = 0; k < links.n_local; k++) {
    const unsigned n = net->local_list[k];
    const uint32_t events = net->local_events[n];
    if (events & NOC_FAST_LOCAL_FLIT) {
      net->ejected[net->n_ejected++] = (ejected_t){net->local_out[n], n};
      next->arrive[n] |= 1u << net->local_out[n].vc;
    }
    for (uint32_t m = (events >> NOC_FAST_LOCAL_CREDIT) & vc_mask; m; m &= m - 1)
      net->node[n].inj_credits[__builtin_ctz(m)]++;
  }
  return true;
}

const noc_router_ops_t noc_router_fast_ops = {
    .init = noc_router_fast_init, .step = step_fast, .occupancy = fast_occupancy,
    .overflow = fast_overflow, .vc_count = fast_vc_count, .trace = fast_trace};
