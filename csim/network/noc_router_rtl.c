/* noc_router_rtl: the Verilated rtl/noc_router.sv at every node (noc_router_ops.h). */
#include <stdio.h>

#include "network/noc_router_ops.h"
#include "util/bits.h"
#include "vmodel/noc_router.h"
#include "vmodel/vmodel.h"

#define NOC_FLIT_WORDS_MAX 12 /* 5 ports x 70 bits, in 32-bit words */

/* ------------------------------------------------------------------ bit fields */

static bool flit_valid(const noc_net_t *net, const uint32_t *w, unsigned port) {
  unsigned bit = port * net->flit_bits + net->flit_bits - 1;
  return (w[bit / 32] >> (bit % 32)) & 1;
}

static flit_t flit_get(const noc_net_t *net, const uint32_t *w, unsigned port) {
  unsigned off = port * net->flit_bits, vcb = NOC_VC_BITS(net->cfg.vcs);
  flit_t f;
  f.data = bits_get(w, off, NOC_DATA_BITS);
  f.vc = (unsigned)bits_get(w, off + NOC_DATA_BITS, vcb);
  f.tail = bits_get(w, off + NOC_DATA_BITS + vcb, 1);
  f.head = bits_get(w, off + NOC_DATA_BITS + vcb + 1, 1);
  f.valid = bits_get(w, off + NOC_DATA_BITS + vcb + 2, 1);
  return f;
}

static void flit_put(const noc_net_t *net, uint32_t *w, unsigned port, const flit_t *f) {
  unsigned off = port * net->flit_bits, vcb = NOC_VC_BITS(net->cfg.vcs);
  bits_put(w, off, NOC_DATA_BITS, f->data);
  bits_put(w, off + NOC_DATA_BITS, vcb, f->vc);
  bits_put(w, off + NOC_DATA_BITS + vcb, 3, (uint64_t)f->tail | (uint64_t)f->head << 1 | (uint64_t)f->valid << 2);
}

static uint32_t cred_get(const noc_net_t *net, const void *p) {
  return net->cred_bits <= 8 ? *(const uint8_t *)p : net->cred_bits <= 16 ? *(const uint16_t *)p : *(const uint32_t *)p;
}

static void cred_put(const noc_net_t *net, void *p, uint32_t v) {
  if (net->cred_bits <= 8) *(uint8_t *)p = (uint8_t)v;
  else if (net->cred_bits <= 16) *(uint16_t *)p = (uint16_t)v;
  else *(uint32_t *)p = v;
}

/* ------------------------------------------------------------------ a node's router */

/* The Verilated router of node n, reset, its ports looked up. Returns -1 with a message when out of
 * memory. */
int noc_router_rtl_init(noc_net_t *net, unsigned n, char *err, size_t errlen) {
  const noc_config_t *cfg = &net->cfg;
  node_t *nd = &net->node[n];
  /* each router's reset randomisation differs, all derived from the seed */
  nd->model = noc_router_new(cfg->vcs, cfg->seed * 1000003u + n);
  if (!nd->model) {
    snprintf(err, errlen, "out of memory building a %ux%u network", cfg->size_x, cfg->size_y);
    return -1;
  }
  vmodel_t *m = nd->model;
  vmodel_poke(m, vmodel_port(m, "my_x_i"), n % cfg->size_x);
  vmodel_poke(m, vmodel_port(m, "my_y_i"), n / cfg->size_x);
  vmodel_poke(m, vmodel_port(m, "size_x_i"), cfg->size_x);
  vmodel_poke(m, vmodel_port(m, "size_y_i"), cfg->size_y);
  vmodel_poke(m, vmodel_port(m, "buf_depth_i"), cfg->buf_depth);
  vmodel_poke(m, vmodel_port(m, "slice_i"), 0);  /* no slice: the whole torus */
  uint32_t zero[NOC_FLIT_WORDS_MAX] = {0};
  vmodel_poke_words(m, vmodel_port(m, "in_flit_i"), zero);
  vmodel_poke(m, vmodel_port(m, "credit_in_i"), 0);
  vmodel_reset(m, 2);
  nd->in_flit = vmodel_port_ptr(m, vmodel_port(m, "in_flit_i"));
  nd->out_flit = vmodel_port_ptr(m, vmodel_port(m, "out_flit_o"));
  nd->credit_in = vmodel_port_ptr(m, vmodel_port(m, "credit_in_i"));
  nd->credit_out = vmodel_port_ptr(m, vmodel_port(m, "credit_out_o"));
  nd->p_overflow = vmodel_port(m, "overflow_o");
  nd->p_occupancy = vmodel_port(m, "occupancy_o");
  nd->p_dbg_vc = vmodel_port(m, "dbg_vc_i");
  nd->p_dbg_count = vmodel_port(m, "dbg_count_o");
  nd->p_drops = vmodel_port(m, "drops_o");
  return 0;
}

/* Router n's inputs onto its RTL model's ports (a port idle before and now is not rewritten). */
void noc_router_rtl_poke_inputs(noc_net_t *net, const flit_t *in, unsigned ports, uint32_t credits, unsigned n) {
  node_t *nd = &net->node[n];
  static const flit_t none = {0};
  for (unsigned p = 0; p < NOC_PORTS; p++) {
    const bool valid = (ports >> p) & 1;
    if (valid || nd->in_valid[p]) {
      flit_put(net, nd->in_flit, p, valid ? &in[p] : &none);
      nd->in_valid[p] = valid;
    }
  }
  cred_put(net, nd->credit_in, credits);
}

/* The RTL router's outputs: every field of every port when `all` (the lockstep compares them),
 * else the valid flits only (the others read as not valid). Returns credit_out. */
uint32_t noc_router_rtl_outputs(const noc_net_t *net, const node_t *nd, flit_t *out, bool all) {
  for (unsigned p = 0; p < NOC_PORTS; p++) {
    if (all || flit_valid(net, nd->out_flit, p)) out[p] = flit_get(net, nd->out_flit, p);
    else out[p].valid = false;
  }
  return cred_get(net, nd->credit_out);
}

unsigned noc_router_rtl_occupancy(const noc_net_t *net, unsigned n) {
  const node_t *nd = &net->node[n];
  return (unsigned)vmodel_peek(nd->model, nd->p_occupancy);
}

bool noc_router_rtl_overflow(const noc_net_t *net, unsigned n) {
  const node_t *nd = &net->node[n];
  return vmodel_peek(nd->model, nd->p_overflow) != 0;
}

unsigned noc_router_rtl_vc_count(noc_net_t *net, unsigned n, unsigned port, unsigned vc) {
  const node_t *nd = &net->node[n];
  vmodel_poke(nd->model, nd->p_dbg_vc, port * net->cfg.vcs + vc);
  return (unsigned)vmodel_peek(nd->model, nd->p_dbg_count);
}

int noc_router_rtl_trace(noc_net_t *net, unsigned n, const char *path, char *err, size_t errlen) {
  if (n >= net->nodes) {
    snprintf(err, errlen, "node %u is outside the %ux%u pod", n, net->cfg.size_x, net->cfg.size_y);
    return -1;
  }
  return vmodel_trace_open(net->node[n].model, path, err, errlen);
}

/* ------------------------------------------------------------------ a cycle */

void noc_router_rtl_deliver(noc_net_t *net) {
  slot_t *wr = slot_write(net), *next = slot_next(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    flit_t out[NOC_PORTS];
    uint32_t credits = noc_router_rtl_outputs(net, &net->node[n], out, false);
    deliver_outputs(net, wr, next, n, out, valid_ports(out), credits, net->cfg.vcs);
  }
}

static bool step_rtl(noc_net_t *net) {
  slot_t *rd = slot_read(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    unsigned ports;
    uint32_t credits = gather_inputs(net, rd, n, &ports);
    noc_router_rtl_poke_inputs(net, &rd->flit[(size_t)n * NOC_PORTS], ports, credits, n);
  }
  for (unsigned n = 0; n < net->nodes; n++) vmodel_step(net->node[n].model, 1);
  noc_router_rtl_deliver(net);
  return true;
}

const noc_router_ops_t noc_router_rtl_ops = {
    .init = noc_router_rtl_init, .step = step_rtl, .occupancy = noc_router_rtl_occupancy,
    .overflow = noc_router_rtl_overflow, .vc_count = noc_router_rtl_vc_count, .trace = noc_router_rtl_trace};
