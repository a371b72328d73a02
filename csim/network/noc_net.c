/* noc_net: see noc_net.h. */
#include "network/noc_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast/noc_fast.h"
#include "network/torus.h"
#include "util/bits.h"
#include "vmodel/noc_router.h"
#include "vmodel/vmodel.h"

#define NOC_FLIT_WORDS_MAX 12 /* 5 ports x 70 bits, in 32-bit words */

/* One flit type for the links, the NI and both router models. */
typedef noc_flit_t flit_t;

/* A source queue: the head flits' data of the packets waiting (so injecting one reads no packet
 * record: a long backlog's records have left the cache). */
typedef struct {
  uint64_t *heads;
  uint32_t head, count, cap;
} head_queue_t;

/* A flit ejected at a node this cycle: the scoreboard checks them at the end of the cycle, after
 * asking for all their packet records at once (they were written when the packets were created,
 * long ago under a heavy load, and are no longer cached). */
typedef struct {
  flit_t f;
  uint32_t node;
} ejected_t;

/* What every cycle reads of a node, in 32 bytes (two nodes a cache line): its fast router and
 * its neighbours. */
typedef struct {
  noc_fast_t *fast;        /* the fast router (NOC_MODEL_FAST, NOC_MODEL_CHECK) */
  const flit_t *fast_out;  /* its output flits (noc_fast_out: fixed for its life) */
  uint32_t nbr[4];         /* [p - 1], p = 1..4: the neighbour on port p (its input opposite(p)) */
} link_node_t;

/* A node's network interface and its RTL router. */
typedef struct {
  uint64_t inj_head;       /* the head flit's data of the packet being injected */
  bool injecting;          /* a packet is under way */
  uint16_t inj_index;      /* its next flit */
  uint8_t inj_vc, next_vc;
  uint8_t inj_credits[8];
  head_queue_t source;     /* packets waiting to be injected */
  uint32_t ej_pkt[8];      /* per local-output VC: packet being reassembled */
  /* the RTL router (NOC_MODEL_RTL, NOC_MODEL_CHECK) */
  vmodel_t *model;
  uint32_t *in_flit, *out_flit; /* port storage (words) */
  void *credit_in, *credit_out;
  int p_overflow, p_occupancy, p_dbg_vc, p_dbg_count, p_drops;
  bool in_valid[NOC_PORTS]; /* a valid flit is poked on input p (so an idle port is not rewritten) */
} node_t;

/* The links. Every link has the same latency L, so all of them are one delay line of cycle
 * slots: what a router sends at cycle t lands in slot (t + 1 + L) mod D, where its neighbour
 * reads it at cycle t + 1 + L and then clears it. D = L + 2 keeps the slot written in a cycle
 * apart from the one read in it, so routers can be stepped in any order. */
typedef struct {
  flit_t *flit;      /* [n * NOC_PORTS + p]: the flit arriving on router n's input p (p = 0: the
                        NI's injection, written when read) */
  uint64_t *arrive;  /* [n]: the credits arriving at router n (credit_in_i) in bits 0..31 (the NI's
                        for the local output too, written a cycle ahead), and in bit 32 + p, a
                        flit on input p: zero when nothing arrives */
} slot_t;
#define ARRIVE_PORTS NOC_FAST_ARRIVE_FLIT
_Static_assert(NOC_PORTS == NOC_FAST_NET_PORTS, "the fast network's slots are the network's");
/* The per-node steps of a cycle, inlined into each model's loop (a call costs as much). */
#define HOT static inline __attribute__((always_inline))

struct noc_net {
  noc_config_t cfg;
  unsigned nodes, flit_bits, cred_bits;
  node_t *node;
  link_node_t *link;       /* [n] */
  uint8_t *ni_busy;        /* [n]: the NI has a packet under way or queued */
  ejected_t *ejected;      /* [nodes]: this cycle's ejected flits, in order */
  unsigned n_ejected;
  /* NOC_MODEL_FAST: the routers stepped as one network (noc_fast_step_network) */
  noc_fast_t **routers;    /* [n] */
  flit_t *local_out;       /* [n]: router n's local output flit of the cycle */
  uint32_t *local_events;  /* [n] */
  uint32_t *local_list;    /* [nodes] */
  unsigned depth;          /* D = link latency + 2 cycle slots */
  slot_t *slot;            /* [D] */
  bool diverged;           /* NOC_MODEL_CHECK: the models differed; `divergence` says where */
  char divergence[640];
  noc_packet_t *pkts;
  uint32_t npkts, cap_pkts;
  uint64_t cycle, last_activity, in_flight, measured_in_flight;
  noc_scoreboard_t sb;
};

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

/* ------------------------------------------------------------------ topology */

static unsigned opposite(unsigned port) {
  return NOC_PORT_XPOS + torus_opposite((torus_dir_t)(port - NOC_PORT_XPOS));
}

uint64_t noc_payload(uint32_t id, unsigned index) {
  uint64_t z = ((uint64_t)id << 8 | index) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ------------------------------------------------------------------ set-up */

const char *noc_model_name(noc_model_t model) {
  return model == NOC_MODEL_FAST ? "fast" : model == NOC_MODEL_CHECK ? "check" : "rtl";
}

static bool uses_rtl(const noc_net_t *net) { return net->cfg.model != NOC_MODEL_FAST; }
static bool uses_fast(const noc_net_t *net) { return net->cfg.model != NOC_MODEL_RTL; }

/* The Verilated router of node n, reset, its ports looked up. Returns -1 when out of memory. */
static int rtl_router_init(noc_net_t *net, unsigned n) {
  const noc_config_t *cfg = &net->cfg;
  node_t *nd = &net->node[n];
  /* each router's reset randomisation differs, all derived from the seed */
  nd->model = noc_router_new(cfg->vcs, cfg->seed * 1000003u + n);
  if (!nd->model) return -1;
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

/* The fast router of node n, as after reset. Returns -1 with a message. */
static int fast_router_init(noc_net_t *net, unsigned n, char *err, size_t errlen) {
  const noc_config_t *cfg = &net->cfg;
  noc_fast_config_t fc = {.vcs = cfg->vcs, .num_local = 1, .x = n % cfg->size_x, .y = n / cfg->size_x,
                          .size_x = cfg->size_x, .size_y = cfg->size_y, .buf_depth = cfg->buf_depth};
  net->link[n].fast = noc_fast_new(&fc, err, errlen);
  if (!net->link[n].fast) return -1;
  net->link[n].fast_out = noc_fast_out(net->link[n].fast);
  return 0;
}

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
  if (cfg->model > NOC_MODEL_CHECK) {
    snprintf(err, errlen, "unknown router model %d", (int)cfg->model);
    return NULL;
  }
  noc_net_t *net = calloc(1, sizeof *net);
  if (!net) goto oom;
  net->cfg = *cfg;
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
    if (uses_rtl(net) && rtl_router_init(net, n)) goto oom;
    if (uses_fast(net) && fast_router_init(net, n, err, errlen)) {
      noc_net_free(net);
      return NULL;
    }
    for (unsigned v = 0; v < cfg->vcs; v++) nd->inj_credits[v] = (uint8_t)cfg->buf_depth;
    for (unsigned p = 1; p < NOC_PORTS; p++) {
      /* Router port p (1..4) is the link in torus direction p - 1 (noc_router.h). */
      net->link[n].nbr[p - 1] = torus_neighbour(cfg->size_x, cfg->size_y, n, (torus_dir_t)(p - NOC_PORT_XPOS));
      if (uses_fast(net)) noc_fast_link(net->link[n].fast, p, net->link[n].nbr[p - 1], opposite(p));
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

/* The next packet's head; the line holding the packets after it is asked for now (a thousand
 * queues are read a word at a time, too many streams for the host to see). */
static uint64_t queue_pop(head_queue_t *q) {
  const uint64_t head = q->heads[q->head];
  __builtin_prefetch(&q->heads[(q->head + 8) & (q->cap - 1)]);
  q->head = (q->head + 1) & (q->cap - 1);
  q->count--;
  return head;
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

/* The NI's flit for this cycle, if any: continues the current packet, or starts the next
 * queued one on a VC (round-robin) that has credit. Node n's NI goes idle (ni_busy) when its
 * last queued packet has gone. */
static flit_t ni_inject(noc_net_t *net, node_t *nd, unsigned n) {
  flit_t f = {0};
  if (!nd->injecting) {
    if (!nd->source.count) {
      net->ni_busy[n] = 0;
      return f;
    }
    const unsigned vcs = net->cfg.vcs; /* a power of two */
    for (unsigned i = 0; i < vcs; i++) {
      const unsigned v = (nd->next_vc + i) & (vcs - 1);
      if (nd->inj_credits[v]) {
        nd->inj_head = queue_pop(&nd->source);
        nd->injecting = true;
        nd->inj_index = 0;
        nd->inj_vc = (uint8_t)v;
        nd->next_vc = (uint8_t)((v + 1) & (vcs - 1));
        break;
      }
    }
  }
  if (!nd->injecting || !nd->inj_credits[nd->inj_vc]) return f;
  const unsigned flits = (unsigned)(nd->inj_head >> 16) & 0xFF;
  f.valid = true;
  f.vc = nd->inj_vc;
  f.head = nd->inj_index == 0;
  f.tail = nd->inj_index + 1u == flits;
  f.data = f.head ? nd->inj_head : noc_payload((uint32_t)(nd->inj_head >> 32), nd->inj_index);
  nd->inj_credits[nd->inj_vc]--;
  net->sb.injected_flits++;
  net->last_activity = net->cycle;
  if (f.tail) {
    nd->injecting = false;
    if (!nd->source.count) net->ni_busy[n] = 0;
  } else {
    nd->inj_index++;
  }
  return f;
}

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

/* The cycle slots read this cycle, written this cycle for the neighbours (read L + 1 cycles
 * later), and read next cycle (where the NI's ejection credits go). */
static slot_t *slot_read(const noc_net_t *net) { return &net->slot[net->cycle % net->depth]; }
static slot_t *slot_write(const noc_net_t *net) {
  return &net->slot[(net->cycle + 1 + net->cfg.link_latency) % net->depth];
}
static slot_t *slot_next(const noc_net_t *net) { return &net->slot[(net->cycle + 1) % net->depth]; }

/* 1. What arrives at router n this cycle: the flits and credits in the read slot (from the
 * links, and the NI's ejection credits from last cycle), and the NI's injection (written there
 * now). Returns the credit vector; *ports gets a bit per input with a valid flit. The slot's
 * word is cleared for the cycle that next uses it (inputs without a flit are never written,
 * so only the word says which flits are there). */
HOT uint32_t gather_inputs(noc_net_t *net, slot_t *rd, unsigned n, unsigned *ports) {
  const uint64_t arrive = rd->arrive[n];
  if (arrive) rd->arrive[n] = 0;
  *ports = (unsigned)(arrive >> ARRIVE_PORTS);
  if (net->ni_busy[n]) {
    flit_t f = ni_inject(net, &net->node[n], n);
    if (f.valid) {
      rd->flit[(size_t)n * NOC_PORTS + NOC_PORT_LOCAL] = f;
      *ports |= 1u << NOC_PORT_LOCAL;
    }
  }
  return (uint32_t)arrive;
}

/* Router n's inputs onto its RTL model's ports (a port idle before and now is not rewritten). */
static void rtl_poke_inputs(noc_net_t *net, const flit_t *in, unsigned ports, uint32_t credits, unsigned n) {
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
static uint32_t rtl_outputs(const noc_net_t *net, const node_t *nd, flit_t *out, bool all) {
  for (unsigned p = 0; p < NOC_PORTS; p++) {
    if (all || flit_valid(net, nd->out_flit, p)) out[p] = flit_get(net, nd->out_flit, p);
    else out[p].valid = false;
  }
  return cred_get(net, nd->credit_out);
}

/* 2. Router n's outputs onto its links (into the write slot, at the neighbours' inputs), its
 * local output to the NI (ejection, whose credit the router gets next cycle), and the credits
 * for its local input back to the NI. out_ports: bit p for each valid out[p] (the others are
 * not read). V: the VC count. */
HOT void deliver_outputs(noc_net_t *net, slot_t *wr, slot_t *next, unsigned n, const flit_t *out, unsigned out_ports,
                         uint32_t credits, const unsigned V) {
  const uint32_t *nbr = net->link[n].nbr;
  const uint32_t vc_mask = (1u << V) - 1;
  if (out_ports & ~1u) {
    net->last_activity = net->cycle;
    for (unsigned m = out_ports & ~1u; m; m &= m - 1) {
      const unsigned p = (unsigned)__builtin_ctz(m), to = nbr[p - 1], in = opposite(p);
      wr->flit[(size_t)to * NOC_PORTS + in] = out[p];
      wr->arrive[to] |= 1ull << (ARRIVE_PORTS + in);
    }
  }
  for (uint32_t m = credits >> V; m;) { /* the network inputs that return credits */
    const unsigned p = 1 + (unsigned)__builtin_ctz(m) / V;
    wr->arrive[nbr[p - 1]] |= (uint64_t)((credits >> (p * V)) & vc_mask) << (opposite(p) * V);
    m &= ~(vc_mask << ((p - 1) * V));
  }
  if (credits & vc_mask) {
    node_t *nd = &net->node[n];
    for (uint32_t m = credits & vc_mask; m; m &= m - 1) nd->inj_credits[__builtin_ctz(m)]++;
  }
  if (out_ports & 1u) {
    net->ejected[net->n_ejected++] = (ejected_t){out[NOC_PORT_LOCAL], n};
    next->arrive[n] |= 1u << out[NOC_PORT_LOCAL].vc;
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

/* The valid bits of a router's outputs, as a mask. */
static unsigned valid_ports(const flit_t *out) {
  unsigned m = 0;
  for (unsigned p = 0; p < NOC_PORTS; p++) m |= (unsigned)out[p].valid << p;
  return m;
}

static void step_rtl(noc_net_t *net) {
  slot_t *rd = slot_read(net), *wr = slot_write(net), *next = slot_next(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    unsigned ports;
    uint32_t credits = gather_inputs(net, rd, n, &ports);
    rtl_poke_inputs(net, &rd->flit[(size_t)n * NOC_PORTS], ports, credits, n);
  }
  for (unsigned n = 0; n < net->nodes; n++) vmodel_step(net->node[n].model, 1);
  for (unsigned n = 0; n < net->nodes; n++) {
    flit_t out[NOC_PORTS];
    uint32_t credits = rtl_outputs(net, &net->node[n], out, false);
    deliver_outputs(net, wr, next, n, out, valid_ports(out), credits, net->cfg.vcs);
  }
}

/* The fast routers are stepped as one network (noc_fast_step_network): the NIs' injections are
 * written into the read slot first, the routers then read it and send onto the links in one
 * pass (a router with nothing to do is passed over, the event-driven part of NOC_MODEL_FAST),
 * and the local outputs go to the NIs after. */
static void step_fast(noc_net_t *net) {
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
}

/* ------------------------------------------------------------------ lockstep */

static const char *const port_names[NOC_PORTS] = {"local", "+X", "-X", "+Y", "-Y"};

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
    snprintf(what, sizeof what, "output port %u (%s), VC %u: %s differs: RTL %s, fast %s", p, port_names[p],
             rtl_out[p].vc, field, a, b);
    set_divergence(net, n, what);
    return false;
  }
  uint32_t fast_credits = noc_fast_credit_out(fast);
  if (fast_credits != rtl_credits) {
    unsigned bit = (unsigned)__builtin_ctz(fast_credits ^ rtl_credits);
    snprintf(what, sizeof what, "credit_out for input port %u (%s), VC %u differs: RTL %u, fast %u", bit / V,
             port_names[bit / V], bit % V, (rtl_credits >> bit) & 1, (fast_credits >> bit) & 1);
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
 * routers skip idle cycles as in NOC_MODEL_FAST, so the check covers that too. */
static bool step_check(noc_net_t *net) {
  slot_t *rd = slot_read(net), *wr = slot_write(net), *next = slot_next(net);
  for (unsigned n = 0; n < net->nodes; n++) {
    unsigned ports;
    const flit_t *in = &rd->flit[(size_t)n * NOC_PORTS];
    uint32_t credits = gather_inputs(net, rd, n, &ports);
    rtl_poke_inputs(net, in, ports, credits, n);
    vmodel_step(net->node[n].model, 1);
    noc_fast_step_ports(net->link[n].fast, in, ports, credits);
  }
  for (unsigned n = 0; n < net->nodes; n++) {
    flit_t out[NOC_PORTS];
    uint32_t credits = rtl_outputs(net, &net->node[n], out, true);
    if (!compare_router(net, n, out, credits)) return false;
  }
  for (unsigned n = 0; n < net->nodes; n++) {
    flit_t out[NOC_PORTS];
    uint32_t credits = rtl_outputs(net, &net->node[n], out, false);
    deliver_outputs(net, wr, next, n, out, valid_ports(out), credits, net->cfg.vcs);
  }
  return true;
}

void noc_net_step(noc_net_t *net) {
  if (net->diverged) return;
  switch (net->cfg.model) {
    case NOC_MODEL_FAST: step_fast(net); break;
    case NOC_MODEL_CHECK:
      if (!step_check(net)) return;
      break;
    default: step_rtl(net); break;
  }
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

/* The router's status, from the RTL model when there is one (the reference). */
static unsigned router_occupancy(const noc_net_t *net, unsigned n) {
  const node_t *nd = &net->node[n];
  return nd->model ? (unsigned)vmodel_peek(nd->model, nd->p_occupancy) : noc_fast_occupancy(net->link[n].fast);
}

static bool router_overflow(const noc_net_t *net, unsigned n) {
  const node_t *nd = &net->node[n];
  return nd->model ? vmodel_peek(nd->model, nd->p_overflow) != 0 : noc_fast_overflow(net->link[n].fast);
}

static unsigned router_vc_count(const noc_net_t *net, unsigned n, unsigned port, unsigned vc) {
  const node_t *nd = &net->node[n];
  if (!nd->model) return noc_fast_vc_count(net->link[n].fast, port, vc);
  vmodel_poke(nd->model, nd->p_dbg_vc, port * net->cfg.vcs + vc);
  return (unsigned)vmodel_peek(nd->model, nd->p_dbg_count);
}

uint64_t noc_net_flits_held(noc_net_t *net) {
  uint64_t held = 0;
  for (unsigned n = 0; n < net->nodes; n++) {
    node_t *nd = &net->node[n];
    held += router_occupancy(net, n) + nd->source.count + nd->injecting;
  }
  for (unsigned t = 0; t < net->depth; t++) /* on the links */
    for (unsigned n = 0; n < net->nodes; n++) held += (unsigned)__builtin_popcountll(net->slot[t].arrive[n] >> ARRIVE_PORTS);
  return held;
}

bool noc_net_overflow(const noc_net_t *net) {
  for (unsigned n = 0; n < net->nodes; n++)
    if (router_overflow(net, n)) return true;
  return false;
}

void noc_net_describe_stuck(noc_net_t *net, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  unsigned shown = 0;
  for (unsigned n = 0; n < net->nodes && shown < 16; n++) {
    for (unsigned p = 0; p < NOC_PORTS; p++) {
      for (unsigned v = 0; v < net->cfg.vcs; v++) {
        unsigned cnt = router_vc_count(net, n, p, v);
        if (cnt && used < len && shown < 16) {
          used += (size_t)snprintf(buf + used, len - used, "%srouter (%u,%u) input %s VC %u holds %u flit%s",
                                   shown ? "; " : "", n % net->cfg.size_x, n / net->cfg.size_x,
                                   port_names[p], v, cnt, cnt == 1 ? "" : "s");
          shown++;
        }
      }
    }
  }
  if (!shown) snprintf(buf, len, "no flits in any router buffer; %llu packets still queued at sources",
                       (unsigned long long)net->in_flight);
}

int noc_net_trace(noc_net_t *net, uint32_t node, const char *path, char *err, size_t errlen) {
  if (!net->node[0].model) {
    snprintf(err, errlen, "tracing needs the RTL router (--model rtl or check): a fast model has no waveform");
    return -1;
  }
  if (node >= net->nodes) {
    snprintf(err, errlen, "node %u is outside the %ux%u pod", node, net->cfg.size_x, net->cfg.size_y);
    return -1;
  }
  return vmodel_trace_open(net->node[node].model, path, err, errlen);
}
