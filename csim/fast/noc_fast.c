/*
 * noc_fast: see noc_fast.h. Mirrors rtl/noc_router.sv (module noc_router, MaxDepth = 8,
 * DataW = 64) and the functions of rtl/noc_pkg.sv it calls (route, route_in_slice, in_slice,
 * crosses_dateline, crosses_ahead, port_dim), decision for decision.
 *
 * The RTL updates its state in one always_ff with blocking assignments, so a later step of an
 * edge sees what an earlier one changed. noc_fast_step takes the same steps in the same order:
 * clear last cycle's outputs; if a flit was held before the edge, VC allocation (outputs and
 * their VCs in index order, each VC granting the first requester at or after its round-robin
 * pointer) then the two-iteration switch allocation; credits from downstream; credits of
 * dropped flits; arriving flits into the buffers. Where the RTL loops over ports and VCs
 * testing each, this file keeps bit masks over the input VCs (bit p * V + v, as the RTL's
 * request vectors) and walks only the set bits, and skips ports that hold nothing.
 *
 * Widths are the RTL's: credits and per-VC counts are CntW = 4 bits (they wrap as the RTL's
 * do, if a sender returns more credits than it had), drops_o 16 bits, occupancy_o the low 8
 * bits of the count, buffer pointers 3 bits (a ring of MaxDepth slots whatever depth is in
 * use). Outputs: between cycles only the valid bit of an output register is cleared, so an
 * idle port shows the last flit's other fields, as out_flit_o does.
 */
#include "fast/noc_fast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_LOCAL 0u
#define PORT_XPOS 1u
#define PORT_XNEG 2u
#define PORT_YPOS 3u
#define PORT_YNEG 4u
#define NET_PORTS 5u    /* noc_pkg::NumPorts: local 0 and the four directions */
#define CNT_MASK 0xFu   /* CntW = $clog2(MaxDepth + 1) = 4 bits */
#define PTR_MASK 0x7u   /* PtrW = $clog2(MaxDepth) = 3 bits */
#define MAX_IVCS 32u    /* P * V: the credit vectors of this API (and dbg_vc_i) are 32 bits */

typedef struct {
  uint64_t data;
  bool head, tail;
} slot_t;

struct noc_fast {
  /* configuration */
  unsigned ports, vcs, vc_shift, nivc; /* P, V, log2 V, P * V */
  uint32_t vc_mask;                    /* V ones */
  uint8_t my_x, my_y, size_x, size_y;
  unsigned num_local, buf_depth_in;    /* buf_depth_i as configured, sampled at reset */
  uint32_t slice;
  /* input VC buffers, input VC i = p * V + v at [i * NOC_FAST_MAX_DEPTH + slot] */
  slot_t buf[MAX_IVCS * NOC_FAST_MAX_DEPTH];
  uint8_t rd_ptr[MAX_IVCS], wr_ptr[MAX_IVCS], count[MAX_IVCS];
  unsigned port_count[NOC_FAST_MAX_PORTS];
  uint32_t nonempty;                   /* count[i] != 0 */
  /* input VC state: the output port and VC the packet at the front holds */
  uint32_t ivc_active;
  uint8_t ivc_port[MAX_IVCS], ivc_vc[MAX_IVCS];
  /* output VC state, output VC o * V + w */
  uint32_t ovc_busy;
  uint8_t credits[MAX_IVCS];
  /* round-robin pointers */
  uint8_t rr_va[MAX_IVCS];             /* per output VC: the input VC to favour next */
  uint8_t rr_sa_in[NOC_FAST_MAX_PORTS];  /* per input port, over its VCs */
  uint8_t rr_sa_out[NOC_FAST_MAX_PORTS]; /* per output port, over input ports */
  /* registered outputs */
  noc_flit_t out[NOC_FAST_MAX_PORTS];
  uint32_t credit_out;
  bool out_any;
  /* status */
  unsigned occupancy;
  bool overflow;
  uint32_t dropping;                   /* a local input VC is discarding the rest of a dropped packet */
  uint8_t drop_credits[MAX_IVCS];      /* credits of dropped flits not yet returned */
  unsigned drop_pending;               /* their sum (OccW bits, as occupancy) */
  unsigned occ_mask;                   /* OccW = $clog2(P * V * MaxDepth + 1) ones */
  uint16_t drops;
  uint8_t depth;                       /* depth_q */
};

/* ------------------------------------------------------------------ noc_pkg's functions */

static bool is_local(unsigned o) { return o == PORT_LOCAL || o >= NET_PORTS; }

/* Where a packet for this router that arrived on input p ejects (noc_router's eject_port). */
static unsigned eject_port(const noc_fast_t *r, unsigned p) {
  if (r->num_local == 1 || p == 0 || p >= NET_PORTS) return PORT_LOCAL;
  return p == PORT_XPOS ? PORT_LOCAL : p + 3;
}

/* One ring of noc_pkg::route: the port towards dst the shorter way, or 0 when dst == me.
 * dx is 9 bits and (dx << 1) is compared in 9 bits, as the RTL sizes them. */
static unsigned route_ring(uint8_t me, uint8_t dst, uint8_t size, unsigned pos, unsigned neg, bool *moves) {
  unsigned d = dst >= me ? (unsigned)(dst - me) : (unsigned)dst + size - me;
  *moves = d != 0;
  if (!d) return 0;
  if (size == 2) return (me & 1) ? neg : pos;
  unsigned twice = (d << 1) & 0x1FFu;
  if (twice == size) return (dst & 1) ? neg : pos;
  return twice < size ? pos : neg;
}

static unsigned route(const noc_fast_t *r, uint8_t dst_x, uint8_t dst_y) {
  bool moves;
  unsigned o = route_ring(r->my_x, dst_x, r->size_x, PORT_XPOS, PORT_XNEG, &moves);
  if (moves) return o;
  o = route_ring(r->my_y, dst_y, r->size_y, PORT_YPOS, PORT_YNEG, &moves);
  return moves ? o : PORT_LOCAL;
}

/* noc_pkg::route_in_slice: a dimension the slice part-covers is a mesh (straight there). */
static unsigned route_in_slice(const noc_fast_t *r, uint8_t dst_x, uint8_t dst_y) {
  uint8_t w = (uint8_t)(r->slice >> 16), h = (uint8_t)(r->slice >> 24);
  bool mesh_x = w != 0 && w != r->size_x, mesh_y = h != 0 && h != r->size_y;
  if (dst_x != r->my_x && mesh_x) return dst_x > r->my_x ? PORT_XPOS : PORT_XNEG;
  if (dst_x == r->my_x && dst_y != r->my_y && mesh_y) return dst_y > r->my_y ? PORT_YPOS : PORT_YNEG;
  return route(r, dst_x, dst_y);
}

/* noc_pkg::in_slice: slice = {h, w, y0, x0}, w = 0: the whole pod. */
static bool in_slice(uint8_t x, uint8_t y, uint32_t slice) {
  unsigned x0 = slice & 0xFF, y0 = (slice >> 8) & 0xFF, w = (slice >> 16) & 0xFF, h = slice >> 24;
  if (!w) return true;
  return x >= x0 && x < x0 + w && y >= y0 && y < y0 + h;
}

static bool crosses_dateline(const noc_fast_t *r, unsigned port) {
  switch (port) {
    case PORT_XPOS: return r->my_x == (uint8_t)(r->size_x - 1);
    case PORT_XNEG: return r->my_x == 0;
    case PORT_YPOS: return r->my_y == (uint8_t)(r->size_y - 1);
    case PORT_YNEG: return r->my_y == 0;
    default: return false;
  }
}

static bool crosses_ahead(const noc_fast_t *r, unsigned port, uint8_t dst_x, uint8_t dst_y) {
  switch (port) {
    case PORT_XPOS: return dst_x < r->my_x;
    case PORT_XNEG: return dst_x > r->my_x;
    case PORT_YPOS: return dst_y < r->my_y;
    case PORT_YNEG: return dst_y > r->my_y;
    default: return false;
  }
}

/* 0 local, 1 X, 2 Y. */
static unsigned port_dim(unsigned port) {
  return port == PORT_XPOS || port == PORT_XNEG ? 1 : port == PORT_YPOS || port == PORT_YNEG ? 2 : 0;
}

/* ------------------------------------------------------------------ set-up */

noc_fast_t *noc_fast_new(const noc_fast_config_t *cfg, char *err, unsigned long errlen) {
  unsigned ports = 4 + cfg->num_local;
  if (cfg->vcs < 2 || cfg->vcs > NOC_FAST_MAX_VCS || (cfg->vcs & (cfg->vcs - 1))) {
    snprintf(err, errlen, "noc_fast: %u VCs: must be a power of two, 2..%u", cfg->vcs, NOC_FAST_MAX_VCS);
    return NULL;
  }
  if (cfg->num_local != 1 && cfg->num_local != 4) {
    snprintf(err, errlen, "noc_fast: %u local ports: must be 1 or 4", cfg->num_local);
    return NULL;
  }
  if (ports * cfg->vcs > MAX_IVCS) {
    snprintf(err, errlen, "noc_fast: %u ports x %u VCs: at most %u input VCs", ports, cfg->vcs, MAX_IVCS);
    return NULL;
  }
  if (cfg->buf_depth < 1 || cfg->buf_depth > NOC_FAST_MAX_DEPTH) {
    snprintf(err, errlen, "noc_fast: buffer depth %u: must be 1..%u", cfg->buf_depth, NOC_FAST_MAX_DEPTH);
    return NULL;
  }
  if (cfg->size_x < 1 || cfg->size_x > 255 || cfg->size_y < 1 || cfg->size_y > 255 || cfg->x >= cfg->size_x ||
      cfg->y >= cfg->size_y) {
    snprintf(err, errlen, "noc_fast: router (%u,%u) in a %ux%u pod: coordinates are 8 bits, inside the pod", cfg->x,
             cfg->y, cfg->size_x, cfg->size_y);
    return NULL;
  }
  noc_fast_t *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, errlen, "noc_fast: out of memory");
    return NULL;
  }
  r->ports = ports;
  r->vcs = cfg->vcs;
  r->vc_shift = (unsigned)__builtin_ctz(cfg->vcs);
  r->nivc = ports * cfg->vcs;
  r->vc_mask = (1u << cfg->vcs) - 1;
  r->my_x = (uint8_t)cfg->x;
  r->my_y = (uint8_t)cfg->y;
  r->size_x = (uint8_t)cfg->size_x;
  r->size_y = (uint8_t)cfg->size_y;
  r->num_local = cfg->num_local;
  r->buf_depth_in = cfg->buf_depth;
  unsigned occ_bits = 0;
  while ((1u << occ_bits) < r->nivc * NOC_FAST_MAX_DEPTH + 1) occ_bits++;
  r->occ_mask = (1u << occ_bits) - 1;
  noc_fast_reset(r);
  return r;
}

void noc_fast_free(noc_fast_t *r) { free(r); }

/* The RTL's reset branch. The buffer contents and ivc_port/ivc_vc have no reset there (they
 * are read only behind count and ivc_active), so they are left as they are. */
void noc_fast_reset(noc_fast_t *r) {
  memset(r->rd_ptr, 0, sizeof r->rd_ptr);
  memset(r->wr_ptr, 0, sizeof r->wr_ptr);
  memset(r->count, 0, sizeof r->count);
  memset(r->port_count, 0, sizeof r->port_count);
  memset(r->rr_va, 0, sizeof r->rr_va);
  memset(r->rr_sa_in, 0, sizeof r->rr_sa_in);
  memset(r->rr_sa_out, 0, sizeof r->rr_sa_out);
  memset(r->drop_credits, 0, sizeof r->drop_credits);
  memset(r->out, 0, sizeof r->out);
  for (unsigned i = 0; i < MAX_IVCS; i++) r->credits[i] = (uint8_t)(r->buf_depth_in & CNT_MASK);
  r->nonempty = r->ivc_active = r->ovc_busy = r->dropping = 0;
  r->credit_out = 0;
  r->out_any = false;
  r->occupancy = 0;
  r->overflow = false;
  r->drop_pending = 0;
  r->drops = 0;
  r->depth = (uint8_t)(r->buf_depth_in & CNT_MASK);
}

void noc_fast_set_slice(noc_fast_t *r, uint32_t slice) { r->slice = slice; }

/* ------------------------------------------------------------------ one edge */

/* The first set bit of mask at or after bit `from`, wrapping (mask != 0). */
static unsigned first_from(uint32_t mask, unsigned from) {
  uint32_t upper = mask & (~0u << from);
  return (unsigned)__builtin_ctz(upper ? upper : mask);
}

/* VC allocation. Each input VC with a head at its front and no output VC yet asks for the
 * output port its route names, in the classes the dateline rule allows; then every free
 * output VC, in port and VC order, grants the first asker at or after its pointer. */
static void vc_allocate(noc_fast_t *r, uint32_t waiting) {
  const unsigned V = r->vcs;
  uint32_t req[NOC_FAST_MAX_PORTS][2];
  uint32_t asked = 0; /* output ports with a request */
  bool any = false;
  for (uint32_t m = waiting; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctz(m), p = i >> r->vc_shift, v = i & (V - 1);
    const slot_t *s = &r->buf[i * NOC_FAST_MAX_DEPTH + r->rd_ptr[i]];
    if (!s->head) continue;
    uint8_t dst_x = (uint8_t)s->data, dst_y = (uint8_t)(s->data >> 8);
    unsigned o = route_in_slice(r, dst_x, dst_y);
    unsigned cls = 3; /* bit c: class c allowed */
    if (o == PORT_LOCAL) o = eject_port(r, p);
    if (!is_local(o)) {
      if (crosses_dateline(r, o) || (port_dim(o) == port_dim(p) && v >= V / 2)) cls = 2;
      else if (crosses_ahead(r, o, dst_x, dst_y)) cls = 1;
    }
    if (!(asked & (1u << o))) req[o][0] = req[o][1] = 0;
    asked |= 1u << o;
    if (cls & 1) req[o][0] |= 1u << i;
    if (cls & 2) req[o][1] |= 1u << i;
    any = true;
  }
  if (!any) return;
  uint32_t granted = 0;
  for (uint32_t om = asked; om; om &= om - 1) {
    unsigned o = (unsigned)__builtin_ctz(om);
    bool local = is_local(o);
    for (unsigned w = 0; w < V; w++) {
      unsigned ovc = o * V + w;
      if (r->ovc_busy & (1u << ovc)) continue;
      uint32_t cand = (local ? (req[o][0] | req[o][1]) : req[o][w >= V / 2]) & ~granted;
      if (!cand) continue;
      unsigned pick = first_from(cand, r->rr_va[ovc]);
      granted |= 1u << pick;
      r->ivc_active |= 1u << pick;
      r->ivc_port[pick] = (uint8_t)o;
      r->ivc_vc[pick] = (uint8_t)w;
      r->ovc_busy |= 1u << ovc;
      r->rr_va[ovc] = (uint8_t)(pick + 1 == r->nivc ? 0 : pick + 1);
    }
  }
}

/* The flit at the front of input VC i crosses the switch to output o. */
static void traverse(noc_fast_t *r, unsigned o, unsigned p, unsigned v) {
  const unsigned i = (p << r->vc_shift) | v;
  const unsigned w = r->ivc_vc[i], ovc = o * r->vcs + w;
  const slot_t *s = &r->buf[i * NOC_FAST_MAX_DEPTH + r->rd_ptr[i]];
  r->out[o] = (noc_flit_t){.data = s->data, .vc = (uint8_t)w, .valid = true, .head = s->head, .tail = s->tail};
  r->credits[ovc] = (uint8_t)((r->credits[ovc] - 1) & CNT_MASK);
  r->credit_out |= 1u << i;
  r->out_any = true;
  r->rd_ptr[i] = (uint8_t)((r->rd_ptr[i] + 1) & PTR_MASK);
  if (--r->count[i] == 0) r->nonempty &= ~(1u << i);
  r->port_count[p]--;
  r->occupancy--;
  if (s->tail) {
    r->ivc_active &= ~(1u << i);
    r->ovc_busy &= ~(1u << ovc);
  }
  r->rr_sa_in[p] = (uint8_t)((v + 1) & (r->vcs - 1));
  r->rr_sa_out[o] = (uint8_t)(p == r->ports - 1 ? 0 : p + 1);
}

/* Switch allocation, separable, round-robin, two iterations: each input port offers the
 * first VC from its pointer that holds a flit, owns an output VC with a credit, and (second
 * iteration) is bound for an output not yet taken; each output takes the first offering
 * input from its pointer. The second iteration runs only if an input offered and lost. */
static void switch_allocate(noc_fast_t *r) {
  const unsigned P = r->ports, V = r->vcs;
  uint32_t in_done = 0, out_won = 0;
  bool retry = true;
  for (int iter = 0; iter < 2 && retry; iter++) {
    uint8_t in_vc[NOC_FAST_MAX_PORTS];
    uint32_t in_req = 0;
    uint32_t want[NOC_FAST_MAX_PORTS]; /* per output: the input ports offering to it */
    uint32_t wanted = 0;               /* outputs with an offer */
    const uint32_t ready = r->nonempty & r->ivc_active;
    for (unsigned p = 0; p < P; p++) {
      if ((in_done >> p) & 1) continue;
      uint32_t vcs = (ready >> (p << r->vc_shift)) & r->vc_mask;
      if (!vcs) continue;
      for (unsigned k = 0; k < V; k++) {
        unsigned v = (r->rr_sa_in[p] + k) & (V - 1);
        if (!((vcs >> v) & 1)) continue;
        unsigned i = (p << r->vc_shift) | v, o = r->ivc_port[i];
        if (((out_won >> o) & 1) || r->credits[o * V + r->ivc_vc[i]] == 0) continue;
        in_req |= 1u << p;
        in_vc[p] = (uint8_t)v;
        if (!((wanted >> o) & 1)) want[o] = 0;
        wanted |= 1u << o;
        want[o] |= 1u << p;
        break;
      }
    }
    for (uint32_t om = wanted; om; om &= om - 1) {
      unsigned o = (unsigned)__builtin_ctz(om);
      unsigned p = first_from(want[o], r->rr_sa_out[o]);
      out_won |= 1u << o;
      in_done |= 1u << p;
      traverse(r, o, p, in_vc[p]);
    }
    retry = (in_req & ~in_done) != 0;
  }
}

/* Credits of dropped flits: one per VC and cycle, unless the VC returns one itself. */
static void return_drop_credits(noc_fast_t *r) {
  for (unsigned i = 0; i < r->nivc; i++) {
    if (r->drop_credits[i] && !((r->credit_out >> i) & 1)) {
      r->credit_out |= 1u << i;
      r->out_any = true;
      r->drop_credits[i] = (uint8_t)((r->drop_credits[i] - 1) & CNT_MASK);
      r->drop_pending = (r->drop_pending - 1) & r->occ_mask;
    }
  }
}

/* A flit arriving on input p: dropped with its packet (a local head for outside the slice),
 * lost to a full buffer (overflow), or written into its VC buffer. */
static void arrive(noc_fast_t *r, unsigned p, const noc_flit_t *f) {
  const unsigned v = f->vc & (r->vcs - 1), i = (p << r->vc_shift) | v;
  if (is_local(p)) {
    if (f->head && !in_slice((uint8_t)f->data, (uint8_t)(f->data >> 8), r->slice)) {
      r->dropping |= 1u << i;
      r->drops++;
    }
    if ((r->dropping >> i) & 1) {
      r->drop_credits[i] = (uint8_t)((r->drop_credits[i] + 1) & CNT_MASK);
      r->drop_pending = (r->drop_pending + 1) & r->occ_mask;
      if (f->tail) r->dropping &= ~(1u << i);
      return;
    }
  }
  if (r->count[i] == r->depth) {
    r->overflow = true;
    return;
  }
  r->buf[i * NOC_FAST_MAX_DEPTH + r->wr_ptr[i]] = (slot_t){f->data, f->head, f->tail};
  r->wr_ptr[i] = (uint8_t)((r->wr_ptr[i] + 1) & PTR_MASK);
  r->count[i]++;
  r->nonempty |= 1u << i;
  r->port_count[p]++;
  r->occupancy++;
}

void noc_fast_step(noc_fast_t *r, const noc_flit_t *in, uint32_t credit_in) {
  const bool busy_before = r->occupancy != 0;
  if (r->out_any) { /* the previous cycle's outputs are gone */
    for (unsigned p = 0; p < r->ports; p++) r->out[p].valid = false;
    r->credit_out = 0;
    r->out_any = false;
  }
  if (busy_before) {
    uint32_t waiting = r->nonempty & ~r->ivc_active;
    if (waiting) vc_allocate(r, waiting);
    switch_allocate(r);
  }
  for (uint32_t m = credit_in; m; m &= m - 1) {
    unsigned i = (unsigned)__builtin_ctz(m);
    if (i < r->nivc) r->credits[i] = (uint8_t)((r->credits[i] + 1) & CNT_MASK);
  }
  if (r->drop_pending) return_drop_credits(r);
  for (unsigned p = 0; p < r->ports; p++)
    if (in[p].valid) arrive(r, p, &in[p]);
}

/* ------------------------------------------------------------------ outputs and status */

const noc_flit_t *noc_fast_out(const noc_fast_t *r) { return r->out; }
uint32_t noc_fast_credit_out(const noc_fast_t *r) { return r->credit_out; }
bool noc_fast_idle(const noc_fast_t *r) { return r->occupancy == 0 && !r->out_any && r->drop_pending == 0; }
unsigned noc_fast_ports(const noc_fast_t *r) { return r->ports; }
unsigned noc_fast_occupancy(const noc_fast_t *r) { return r->occupancy & 0xFFu; }
bool noc_fast_overflow(const noc_fast_t *r) { return r->overflow; }
uint16_t noc_fast_drops(const noc_fast_t *r) { return r->drops; }

unsigned noc_fast_vc_count(const noc_fast_t *r, unsigned port, unsigned vc) {
  return port < r->ports && vc < r->vcs ? r->count[(port << r->vc_shift) | vc] : 0;
}
