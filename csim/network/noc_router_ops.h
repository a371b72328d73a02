/*
 * noc_router_ops: the router network's insides (noc_net.h) as its router models see them, and
 * the models behind one table, as the chip's are (chip/chip_core.h): the Verilated RTL
 * (noc_router_rtl.c), the fast C model (noc_router_fast.c over fast/noc_fast.h) and both in
 * lockstep (noc_router_check.c). noc_net.c picks the table once, from noc_config_t.model, and
 * owns everything else: the network interfaces, the links' cycle slots, the scoreboard. A model
 * steps every router of the network in one call, so each model keeps its own loop over the nodes
 * and the per-node steps below are inlined into it. Private to csim/network.
 */
#ifndef NETWORK_NOC_ROUTER_OPS_H
#define NETWORK_NOC_ROUTER_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fast/noc_fast.h"
#include "network/noc_net.h"
#include "network/torus.h"
#include "vmodel/noc_router.h"
#include "vmodel/vmodel.h"

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
  noc_fast_t *fast;        /* the fast router (CHIP_MODEL_FAST, CHIP_MODEL_CHECK) */
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
  /* the RTL router (CHIP_MODEL_RTL, CHIP_MODEL_CHECK) */
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
  const struct noc_router_ops *router; /* the routers' model (cfg.model), picked once */
  unsigned nodes, flit_bits, cred_bits;
  node_t *node;
  link_node_t *link;       /* [n] */
  uint8_t *ni_busy;        /* [n]: the NI has a packet under way or queued */
  ejected_t *ejected;      /* [nodes]: this cycle's ejected flits, in order */
  unsigned n_ejected;
  /* CHIP_MODEL_FAST: the routers stepped as one network (noc_fast_step_network) */
  noc_fast_t **routers;    /* [n] */
  flit_t *local_out;       /* [n]: router n's local output flit of the cycle */
  uint32_t *local_events;  /* [n] */
  uint32_t *local_list;    /* [nodes] */
  unsigned depth;          /* D = link latency + 2 cycle slots */
  slot_t *slot;            /* [D] */
  bool diverged;           /* CHIP_MODEL_CHECK: the models differed; `divergence` says where */
  char divergence[640];
  noc_packet_t *pkts;
  uint32_t npkts, cap_pkts;
  uint64_t cycle, last_activity, in_flight, measured_in_flight;
  noc_scoreboard_t sb;
};

/* One router model: what the network asks of the routers at its nodes. */
typedef struct noc_router_ops {
  /* Builds node n's router(s), as after reset: 0, or -1 with a message. Called once a node, its
   * neighbours (link_node_t.nbr) known. */
  int (*init)(noc_net_t *net, unsigned n, char *err, size_t errlen);
  /* One cycle of every router: the NIs' injections and what the links bring in, the clock edge,
   * what the routers send onto the links and to the NIs (ejected, for eject_all). false: the
   * lockstep found a difference (net->divergence says where) and nothing was delivered. */
  bool (*step)(noc_net_t *net);
  /* Router n's status: the flits it holds, whether a VC buffer overflowed, the flits in an
   * input port's VC (the RTL's when there is one: the reference). */
  unsigned (*occupancy)(const noc_net_t *net, unsigned n);
  bool (*overflow)(const noc_net_t *net, unsigned n);
  unsigned (*vc_count)(noc_net_t *net, unsigned n, unsigned port, unsigned vc);
  /* Traces router n into an FST file: 0, or -1 with a message (a model with no waveform). */
  int (*trace)(noc_net_t *net, unsigned n, const char *path, char *err, size_t errlen);
} noc_router_ops_t;

extern const noc_router_ops_t noc_router_rtl_ops, noc_router_fast_ops, noc_router_check_ops;

/* The Verilated router's parts that the lockstep shares (noc_router_rtl.c). */
int noc_router_rtl_init(noc_net_t *net, unsigned n, char *err, size_t errlen);
void noc_router_rtl_poke_inputs(noc_net_t *net, const flit_t *in, unsigned ports, uint32_t credits, unsigned n);
uint32_t noc_router_rtl_outputs(const noc_net_t *net, const node_t *nd, flit_t *out, bool all);
unsigned noc_router_rtl_occupancy(const noc_net_t *net, unsigned n);
bool noc_router_rtl_overflow(const noc_net_t *net, unsigned n);
unsigned noc_router_rtl_vc_count(noc_net_t *net, unsigned n, unsigned port, unsigned vc);
int noc_router_rtl_trace(noc_net_t *net, unsigned n, const char *path, char *err, size_t errlen);
/* The RTL routers' outputs of the cycle (after their clock edge) onto the links and to the NIs. */
void noc_router_rtl_deliver(noc_net_t *net);
/* The fast router of node n, as after reset, linked to its neighbours (noc_router_fast.c). */
int noc_router_fast_init(noc_net_t *net, unsigned n, char *err, size_t errlen);

/* The router ports' names, by port (local, +X, -X, +Y, -Y), for reports. */
extern const char *const noc_port_names[NOC_PORTS];

/* ------------------------------------------------------------------ the per-node steps */

static inline unsigned opposite(unsigned port) {
  return NOC_PORT_XPOS + torus_opposite((torus_dir_t)(port - NOC_PORT_XPOS));
}

/* noc_payload (noc_net.h), inlined where the NIs make and check body flits. */
static inline uint64_t payload_of(uint32_t id, unsigned index) {
  uint64_t z = ((uint64_t)id << 8 | index) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The next packet's head; the line holding the packets after it is asked for now (a thousand
 * queues are read a word at a time, too many streams for the host to see). */
static inline uint64_t queue_pop(head_queue_t *q) {
  const uint64_t head = q->heads[q->head];
  __builtin_prefetch(&q->heads[(q->head + 8) & (q->cap - 1)]);
  q->head = (q->head + 1) & (q->cap - 1);
  q->count--;
  return head;
}


/* The NI's flit for this cycle, if any: continues the current packet, or starts the next
 * queued one on a VC (round-robin) that has credit. Node n's NI goes idle (ni_busy) when its
 * last queued packet has gone. */
static inline flit_t ni_inject(noc_net_t *net, node_t *nd, unsigned n) {
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
  f.data = f.head ? nd->inj_head : payload_of((uint32_t)(nd->inj_head >> 32), nd->inj_index);
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


/* The cycle slots read this cycle, written this cycle for the neighbours (read L + 1 cycles
 * later), and read next cycle (where the NI's ejection credits go). */
static inline slot_t *slot_read(const noc_net_t *net) { return &net->slot[net->cycle % net->depth]; }
static inline slot_t *slot_write(const noc_net_t *net) {
  return &net->slot[(net->cycle + 1 + net->cfg.link_latency) % net->depth];
}
static inline slot_t *slot_next(const noc_net_t *net) { return &net->slot[(net->cycle + 1) % net->depth]; }

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


/* The valid bits of a router's outputs, as a mask. */
static inline unsigned valid_ports(const flit_t *out) {
  unsigned m = 0;
  for (unsigned p = 0; p < NOC_PORTS; p++) m |= (unsigned)out[p].valid << p;
  return m;
}

#endif
