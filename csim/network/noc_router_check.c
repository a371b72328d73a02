/* noc_router_check: the RTL and the fast router at every node in lockstep, every output compared
 * every cycle, the RTL's driving the network (noc_router_ops.h). */
#include <stdio.h>

#include "fast/noc_fast.h"
#include "network/noc_router_ops.h"
#include "vmodel/vmodel.h"

/* Both routers of node n: the RTL's, then the fast one. */
static int check_init(noc_net_t *net, unsigned n, char *err, size_t errlen) {
  return noc_router_rtl_init(net, n, err, errlen) || noc_router_fast_init(net, n, err, errlen) ? -1 : 0;
}

static void set_divergence(noc_net_t *net, unsigned n, const char *what) {
  net->diverged = true;
  snprintf(net->divergence, sizeof net->divergence, "cycle %llu, router (%u,%u): %s", (unsigned long long)net->cycle,
           n % net->cfg.size_x, n / net->cfg.size_x, what);
}

/* The first field of a flit that differs, in the order of the packed port: valid, head, tail,
 * vc, data; NULL when none does. */
static const char *flit_difference(const flit_t *a, const flit_t *b) {
  if (a->valid != b->valid) return "valid";
  if (a->head != b->head) return "head";
  if (a->tail != b->tail) return "tail";
  if (a->vc != b->vc) return "vc";
  if (a->data != b->data) return "data";
  return NULL;
}

static int flit_text(char *buf, size_t len, const flit_t *f) {
  return snprintf(buf, len, "{valid %d, head %d, tail %d, vc %u, data 0x%016llx}", f->valid, f->head, f->tail,
                  f->vc, (unsigned long long)f->data);
}

/* Compares router n's outputs from the two models: every port's flit (all of its fields, valid
 * or not), credit_out, occupancy_o, overflow_o, drops_o. Returns false with the report set. */
static bool compare_router(noc_net_t *net, unsigned n, const flit_t *rtl_out, uint32_t rtl_credits) {
  node_t *nd = &net->node[n];
  const noc_fast_t *fast = net->link[n].fast;
  const flit_t *fast_out = noc_fast_out(fast);
  const unsigned V = net->cfg.vcs;
  char what[512], a[128], b[128];
  for (unsigned p = 0; p < NOC_PORTS; p++) {
    const char *field = flit_difference(&rtl_out[p], &fast_out[p]);
    if (!field) continue;
    flit_text(a, sizeof a, &rtl_out[p]);
    flit_text(b, sizeof b, &fast_out[p]);
    snprintf(what, sizeof what, "output port %u (%s), VC %u: %s differs: RTL %s, fast %s", p, noc_port_names[p],
             rtl_out[p].vc, field, a, b);
    set_divergence(net, n, what);
    return false;
  }
  uint32_t fast_credits = noc_fast_credit_out(fast);
  if (fast_credits != rtl_credits) {
    unsigned bit = (unsigned)__builtin_ctz(fast_credits ^ rtl_credits);
    snprintf(what, sizeof what, "credit_out for input port %u (%s), VC %u differs: RTL %u, fast %u", bit / V,
             noc_port_names[bit / V], bit % V, (rtl_credits >> bit) & 1, (fast_credits >> bit) & 1);
    set_divergence(net, n, what);
    return false;
  }
  const struct {
    const char *name;
    int port;
    unsigned fast;
  } status[] = {{"occupancy_o", nd->p_occupancy, noc_fast_occupancy(fast)},
                {"overflow_o", nd->p_overflow, noc_fast_overflow(fast)},
                {"drops_o", nd->p_drops, noc_fast_drops(fast)}};
  for (unsigned i = 0; i < sizeof status / sizeof status[0]; i++) {
    unsigned rtl = (unsigned)vmodel_peek(nd->model, status[i].port);
    if (rtl == status[i].fast) continue;
    snprintf(what, sizeof what, "%s differs: RTL %u, fast %u", status[i].name, rtl, status[i].fast);
    set_divergence(net, n, what);
    return false;
  }
  return true;
}

/* Both models of every router take the same inputs; their outputs are compared before any is
 * delivered, so at a divergence the network stops where both models last agreed. The fast
 * routers skip idle cycles as in CHIP_MODEL_FAST, so the check covers that too. */
static bool step_check(noc_net_t *net) {
  slot_t *rd = slot_read(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    unsigned ports;
    const flit_t *in = &rd->flit[(size_t)n * NOC_PORTS];
    uint32_t credits = gather_inputs(net, rd, n, &ports);
    noc_router_rtl_poke_inputs(net, in, ports, credits, n);
    vmodel_step(net->node[n].model, 1);
    noc_fast_step_ports(net->link[n].fast, in, ports, credits);
  }
  for (unsigned n = 0; n < net->nodes; n++) {
    flit_t out[NOC_PORTS];
    uint32_t credits = noc_router_rtl_outputs(net, &net->node[n], out, true);
    if (!compare_router(net, n, out, credits)) return false;
  }
  noc_router_rtl_deliver(net);
  return true;
}

/* The status the network reads is the RTL's (the reference); the lockstep compares the rest. */
const noc_router_ops_t noc_router_check_ops = {
    .init = check_init, .step = step_check, .occupancy = noc_router_rtl_occupancy,
    .overflow = noc_router_rtl_overflow, .vc_count = noc_router_rtl_vc_count, .trace = noc_router_rtl_trace};
