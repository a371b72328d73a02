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
 * bits of the count (the sum of the VCs' counts, worked out when asked), buffer pointers 3
 * bits (a ring of MaxDepth slots whatever depth is in use). Outputs: between cycles only the
 * valid bit of an output register is cleared, so an idle port shows the last flit's other
 * fields, as out_flit_o does.
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
/* Small helpers of the per-edge path, inlined where they are used (a call costs as much). */
#define INLINE static inline __attribute__((always_inline))

/* One input VC in 8 bytes: a ring of NOC_FAST_MAX_DEPTH slots (the RTL's buf_*, rd_ptr,
 * wr_ptr, count) and the output VC its front packet holds. */
typedef struct {
  uint8_t rd, wr, count;    /* ring pointers (PtrW = 3 bits) and flits held (CntW = 4 bits) */
  uint8_t heads, tails;     /* head and tail flags of the slots, bit s for slot s */
  uint8_t out_port, out_vc; /* ivc_port, ivc_vc: valid while ivc_active */
  uint8_t spare;
} ivc_t;

/* One output VC: its credits (CntW bits), VC allocation's round-robin pointer, and the input
 * VC that holds it (valid while ovc_busy). */
typedef struct {
  uint8_t credits, rr_va, owner;
} ovc_t;

/* The state is laid out for the cache: a thousand routers stepped every cycle do not all fit
 * in the host's L2, so what an edge touches is packed together: the masks and counts every
 * edge tests, the output registers, the per-VC records, and, apart, the flit data and what
 * only slice drops use. */
typedef noc_fast_outputs_t (*step_fn_t)(noc_fast_t *r, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in);

static step_fn_t step_for(unsigned vcs, unsigned ports);

struct noc_fast {
  step_fn_t step;       /* the edge compiled for this router's VC and port counts */
  /* masks over input VCs i = p * V + v (output VCs o * V + w for ovc_busy) */
  uint32_t nonempty;    /* count != 0 */
  uint32_t ivc_active;  /* the packet at the front of i holds an output VC */
  uint32_t ovc_busy;    /* an output VC is held by a packet */
  uint32_t credit_out;  /* registered: credits for the input VCs */
  uint32_t dropping;    /* a local input VC is discarding the rest of a dropped packet */
  uint8_t asked;        /* outputs with a request (req) */
  bool va_dirty;        /* a request or a free output VC appeared since VC allocation last ran:
                           until then it would grant nothing (every free VC found no requester) */
  uint8_t out_valid;    /* registered: the output ports with a valid flit */
  bool overflow;        /* sticky: a flit hit a full VC */
  uint8_t depth;        /* depth_q: buf_depth sampled at reset */
  uint16_t drops;
  uint16_t drop_pending; /* sum of drop_credits (OccW bits) */
  /* configuration */
  uint8_t ports, vcs, vc_shift, nivc, num_local; /* P, V, log2 V, P * V */
  uint8_t my_x, my_y, size_x, size_y;
  bool mesh_x, mesh_y;  /* the slice part-covers X, Y: route straight (set_mesh) */
  uint8_t dateline;     /* bit o: output o's hop crosses a wraparound link */
  uint16_t occ_mask;    /* OccW = $clog2(P * V * MaxDepth + 1) ones */
  uint32_t vc_mask;     /* V ones */
  uint32_t slice;
  unsigned buf_depth_in; /* buf_depth_i as configured */
  /* per port: round-robin pointers of switch allocation */
  uint8_t rr_sa_in[NOC_FAST_MAX_PORTS];  /* per input port, over its VCs */
  uint8_t rr_sa_out[NOC_FAST_MAX_PORTS]; /* per output port, over input ports */
  /* VC allocation's requests, kept as the state changes instead of gathered every edge: input
   * VC i is in req[o][c] while it has a head at its front, holds no output VC, and its route
   * is output o with class c allowed (exactly the RTL's req[o][c] at the start of an edge) */
  uint32_t req[NOC_FAST_MAX_PORTS][2];
  noc_flit_t out[NOC_FAST_MAX_PORTS];    /* registered output flits */
  ovc_t ovc[MAX_IVCS];
  ivc_t ivc[MAX_IVCS];
  uint8_t drop_credits[MAX_IVCS];  /* credits of dropped flits not yet returned */
  uint64_t data[];                 /* flit data: slot s of input VC i at [i * MaxDepth + s] (P * V VCs) */
};

/* ------------------------------------------------------------------ noc_pkg's functions */

static bool is_local(unsigned o) { return o == PORT_LOCAL || o >= NET_PORTS; }

/* Where a packet for this router that arrived on input p ejects (noc_router's eject_port). */
static unsigned eject_port(const noc_fast_t *r, unsigned p) {
  if (r->num_local == 1 || p == 0 || p >= NET_PORTS) return PORT_LOCAL;
  return p == PORT_XPOS ? PORT_LOCAL : p + 3;
}

/* One ring of noc_pkg::route, for dst != me: the port towards dst the shorter way. The
 * distance is 9 bits and (d << 1) is compared in 9 bits, as the RTL sizes them. */
static unsigned route_ring(uint8_t me, uint8_t dst, uint8_t size, unsigned pos, unsigned neg) {
  const unsigned d = dst >= me ? (unsigned)(dst - me) : (unsigned)dst + size - me;
  if (size == 2) return (me & 1) ? neg : pos;  /* both ways are one hop: not the wraparound */
  const unsigned twice = (d << 1) & 0x1FFu;
  if (twice == size) return (dst & 1) ? neg : pos; /* half way round: split by parity */
  return twice < size ? pos : neg;
}

/* noc_pkg::route_in_slice with noc_pkg::route inside it: X first, then Y; in a dimension the
 * slice part-covers (mesh_x, mesh_y) straight towards dst, else the shorter way round. */
static unsigned route_in_slice(const noc_fast_t *r, uint8_t dst_x, uint8_t dst_y) {
  if (dst_x != r->my_x) {
    if (r->mesh_x) return dst_x > r->my_x ? PORT_XPOS : PORT_XNEG;
    return route_ring(r->my_x, dst_x, r->size_x, PORT_XPOS, PORT_XNEG);
  }
  if (dst_y != r->my_y) {
    if (r->mesh_y) return dst_y > r->my_y ? PORT_YPOS : PORT_YNEG;
    return route_ring(r->my_y, dst_y, r->size_y, PORT_YPOS, PORT_YNEG);
  }
  return PORT_LOCAL;
}

/* The slice's part in routing (route_in_slice's mesh_x, mesh_y). */
static void set_mesh(noc_fast_t *r) {
  const uint8_t w = (uint8_t)(r->slice >> 16), h = (uint8_t)(r->slice >> 24);
  r->mesh_x = w != 0 && w != r->size_x;
  r->mesh_y = h != 0 && h != r->size_y;
}

/* noc_pkg::in_slice: slice = {h, w, y0, x0}, w = 0: the whole pod. */
static bool in_slice(uint8_t x, uint8_t y, uint32_t slice) {
  unsigned x0 = slice & 0xFF, y0 = (slice >> 8) & 0xFF, w = (slice >> 16) & 0xFF, h = slice >> 24;
  if (!w) return true;
  return x >= x0 && x < x0 + w && y >= y0 && y < y0 + h;
}

/* Worked out once per router: bit o of r->dateline. */
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
  static const uint8_t dim[NOC_FAST_MAX_PORTS] = {0, 1, 1, 2, 2, 0, 0, 0};
  return dim[port];
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
  noc_fast_t *r = calloc(1, sizeof *r + (size_t)ports * cfg->vcs * NOC_FAST_MAX_DEPTH * sizeof r->data[0]);
  if (!r) {
    snprintf(err, errlen, "noc_fast: out of memory");
    return NULL;
  }
  r->ports = (uint8_t)ports;
  r->vcs = (uint8_t)cfg->vcs;
  r->vc_shift = (uint8_t)__builtin_ctz(cfg->vcs);
  r->nivc = (uint8_t)(ports * cfg->vcs);
  r->vc_mask = (1u << cfg->vcs) - 1;
  r->my_x = (uint8_t)cfg->x;
  r->my_y = (uint8_t)cfg->y;
  r->size_x = (uint8_t)cfg->size_x;
  r->size_y = (uint8_t)cfg->size_y;
  r->num_local = cfg->num_local;
  r->buf_depth_in = cfg->buf_depth;
  unsigned occ_bits = 0;
  while ((1u << occ_bits) < r->nivc * NOC_FAST_MAX_DEPTH + 1u) occ_bits++;
  r->occ_mask = (uint16_t)((1u << occ_bits) - 1);
  for (unsigned o = PORT_XPOS; o <= PORT_YNEG; o++) r->dateline |= (uint8_t)(crosses_dateline(r, o) << o);
  set_mesh(r);
  r->step = step_for(r->vcs, r->ports);
  noc_fast_reset(r);
  return r;
}

void noc_fast_free(noc_fast_t *r) { free(r); }

/* The RTL's reset branch. The buffer contents and ivc_port/ivc_vc have no reset there (they
 * are read only behind count and ivc_active), so they are left as they are (the routes of
 * front heads too: read only while one waits). */
void noc_fast_reset(noc_fast_t *r) {
  memset(r->drop_credits, 0, sizeof r->drop_credits);
  for (unsigned i = 0; i < MAX_IVCS; i++) {
    r->ivc[i].rd = r->ivc[i].wr = r->ivc[i].count = 0;
    r->ovc[i] = (ovc_t){.credits = (uint8_t)(r->buf_depth_in & CNT_MASK), .rr_va = 0, .owner = 0};
  }
  memset(r->rr_sa_in, 0, sizeof r->rr_sa_in);
  memset(r->rr_sa_out, 0, sizeof r->rr_sa_out);
  memset(r->out, 0, sizeof r->out);
  r->nonempty = r->ivc_active = r->ovc_busy = r->dropping = 0;
  memset(r->req, 0, sizeof r->req);
  r->asked = 0;
  r->va_dirty = false;
  r->out_valid = 0;
  r->credit_out = 0;
  r->overflow = false;
  r->drop_pending = 0;
  r->drops = 0;
  r->depth = (uint8_t)(r->buf_depth_in & CNT_MASK);
}

/* ------------------------------------------------------------------ one edge */

/* The edge is written once, with the VC count V and port count P as arguments of inlined
 * functions, and compiled for each (V, P) a router can have (step_for): with them constant,
 * the masks and shifts over input VCs (i = p * V + v) become immediates. */
#define VC_SHIFT(V) ((unsigned)__builtin_ctz(V))
#define VC_MASK(V) ((1u << (V)) - 1u)

/* The output port and allowed classes (bit c: class c) of a head for dst at the front of input
 * VC i = (p, v): noc_router's route computation and class rule, from the same destination,
 * input and slice, worked out when the head reaches the front (and again if the slice changes). */
INLINE unsigned route_of(const noc_fast_t *r, unsigned p, unsigned v, uint64_t dst, const unsigned V) {
  const uint8_t dst_x = (uint8_t)dst, dst_y = (uint8_t)(dst >> 8);
  unsigned o = route_in_slice(r, dst_x, dst_y), cls = 3;
  if (o == PORT_LOCAL) o = eject_port(r, p);
  if (!is_local(o)) {
    if (((r->dateline >> o) & 1) || (port_dim(o) == port_dim(p) && v >= V / 2u)) cls = 2;
    else if (crosses_ahead(r, o, dst_x, dst_y)) cls = 1;
  }
  return o | cls << 4;
}

/* Input VC i asks VC allocation for the output of a head for dst (the head's data). */
INLINE void request_route(noc_fast_t *r, unsigned i, uint64_t dst, const unsigned V) {
  const unsigned route = route_of(r, i >> VC_SHIFT(V), i & (V - 1u), dst, V);
  const unsigned o = route & 0xFu, cls = route >> 4;
  if (cls & 1) r->req[o][0] |= 1u << i;
  if (cls & 2) r->req[o][1] |= 1u << i;
  r->asked |= (uint8_t)(1u << o);
  r->va_dirty = true;
}

/* Input VC i, holding no output VC, has a new flit at its front: if it is a head, it asks. */
INLINE void request_vc(noc_fast_t *r, unsigned i, const unsigned V) {
  const ivc_t *q = &r->ivc[i];
  if ((q->heads >> q->rd) & 1) request_route(r, i, r->data[i * NOC_FAST_MAX_DEPTH + q->rd], V);
}

/* The first set bit of mask at or after bit `from`, wrapping (mask != 0). */
INLINE unsigned first_from(uint32_t mask, unsigned from) {
  const uint32_t upper = mask & (~0u << from);
  return (unsigned)__builtin_ctz(upper ? upper : mask);
}

/* Output VC ovc's credits become c (CntW bits: they wrap as the RTL's do). */
INLINE void set_credits(noc_fast_t *r, unsigned ovc, unsigned c) { r->ovc[ovc].credits = (uint8_t)(c & CNT_MASK); }

/* Whether input VC q's flit may cross the switch: its output VC has a credit. */
INLINE bool has_credit(const noc_fast_t *r, const ivc_t *q, const unsigned V) {
  return r->ovc[q->out_port * V + q->out_vc].credits != 0;
}

/* Output VC o * V + w grants input VC `pick`, which then no longer asks. */
INLINE void grant_vc(noc_fast_t *r, unsigned o, unsigned w, unsigned pick, const unsigned V, const unsigned P) {
  const unsigned ovc = o * V + w;
  r->req[o][0] &= ~(1u << pick);
  r->req[o][1] &= ~(1u << pick);
  r->ivc_active |= 1u << pick;
  r->ovc_busy |= 1u << ovc;
  r->ivc[pick].out_port = (uint8_t)o;
  r->ivc[pick].out_vc = (uint8_t)w;
  r->ovc[ovc].owner = (uint8_t)pick;
  r->ovc[ovc].rr_va = (uint8_t)(pick + 1 == P * V ? 0 : pick + 1);
}

/* The free VCs `free` (a mask over w) of output o grant, in VC order, the first of the
 * requesters (in req[o][c], or either class) at or after each one's pointer, while any are left. */
INLINE void grant_in_order(noc_fast_t *r, unsigned o, uint32_t free, bool any_class, unsigned c, const unsigned V,
                           const unsigned P) {
  for (; free; free &= free - 1) {
    const uint32_t cand = any_class ? (r->req[o][0] | r->req[o][1]) : r->req[o][c];
    if (!cand) return;
    const unsigned w = (unsigned)__builtin_ctz(free);
    grant_vc(r, o, w, first_from(cand, r->ovc[o * V + w].rr_va), V, P);
  }
}

/* VC allocation: every free output VC, in port and VC order, grants the first requesting
 * input VC at or after its round-robin pointer (ejection: any requester; a network port: those
 * allowed the VC's class, class 0 being the lower VCs, so granted in VC order). An input VC
 * asks for one output only, so outputs do not interact, and an output whose VCs are all held,
 * or free only in a class nobody asks for, costs a test or two. */
INLINE void vc_allocate(noc_fast_t *r, const unsigned V, const unsigned P) {
  const uint32_t low = VC_MASK(V / 2);
  for (uint32_t om = r->asked; om; om &= om - 1) {
    const unsigned o = (unsigned)__builtin_ctz(om);
    const uint32_t free = ~(r->ovc_busy >> (o * V)) & VC_MASK(V);
    if (is_local(o)) {
      if (free) grant_in_order(r, o, free, true, 0, V, P);
    } else {
      if ((free & low) && r->req[o][0]) grant_in_order(r, o, free & low, false, 0, V, P);
      if ((free & ~low) && r->req[o][1]) grant_in_order(r, o, free & ~low, false, 1, V, P);
    }
    if (!(r->req[o][0] | r->req[o][1])) r->asked &= (uint8_t)~(1u << o);
  }
  r->va_dirty = false;
}

/* The flit at the front of input VC i = (p, v) crosses the switch to output o. */
INLINE void traverse(noc_fast_t *r, unsigned o, unsigned p, unsigned v, const unsigned V, const unsigned P) {
  const unsigned i = (p << VC_SHIFT(V)) | v;
  ivc_t *q = &r->ivc[i];
  const unsigned w = q->out_vc, ovc = o * V + w, slot = q->rd, count = q->count - 1u;
  const bool head = (q->heads >> slot) & 1, tail = (q->tails >> slot) & 1;
  r->out[o] = (noc_flit_t){.data = r->data[i * NOC_FAST_MAX_DEPTH + slot], .vc = (uint8_t)w, .valid = true,
                           .head = head, .tail = tail};
  q->rd = (uint8_t)((slot + 1) & PTR_MASK);
  q->count = (uint8_t)count;
  set_credits(r, ovc, r->ovc[ovc].credits - 1u);
  r->out_valid |= (uint8_t)(1u << o);
  r->credit_out |= 1u << i;
  if (!count) r->nonempty &= ~(1u << i);
  if (tail) {
    r->ivc_active &= ~(1u << i);
    r->ovc_busy &= ~(1u << ovc);
    r->va_dirty = true; /* a free output VC */
    if (count) request_vc(r, i, V); /* the next packet's head, at the next edge */
  }
  r->rr_sa_in[p] = (uint8_t)((v + 1) & (V - 1u));
  r->rr_sa_out[o] = (uint8_t)(p + 1u == P ? 0 : p + 1);
}

/* The VCs in `vcs` (a mask over a port's V VCs) rotated to start at VC rr: bit k is VC rr + k. */
INLINE uint32_t rotate_vcs(uint32_t vcs, unsigned rr, const unsigned V) {
  return ((vcs >> rr) | (vcs << (V - rr))) & VC_MASK(V);
}

/* Switch allocation, separable, round-robin, two iterations: each input port offers the
 * first VC from its pointer that holds a flit and owns an output VC with a credit (second
 * iteration: bound for an output not yet taken); each output takes the first offering input
 * from its pointer. The second iteration runs only if an input offered and lost. */
INLINE void switch_allocate(noc_fast_t *r, const unsigned V, const unsigned P) {
  const uint32_t held = r->nonempty & r->ivc_active; /* VCs with a flit and an output VC */
  if (!held) return; /* nobody can offer: no grant, no second iteration */
  const unsigned p0 = (unsigned)__builtin_ctz(held) >> VC_SHIFT(V);
  if (!((uint64_t)held >> ((p0 + 1) << VC_SHIFT(V)))) {
    /* one input port can offer: its first VC with a credit wins its output, and nobody lost */
    const unsigned rr = r->rr_sa_in[p0];
    for (uint32_t rot = rotate_vcs((held >> (p0 << VC_SHIFT(V))) & VC_MASK(V), rr, V); rot; rot &= rot - 1) {
      const unsigned v = (rr + (unsigned)__builtin_ctz(rot)) & (V - 1u);
      const ivc_t *q = &r->ivc[(p0 << VC_SHIFT(V)) | v];
      if (has_credit(r, q, V)) {
        traverse(r, q->out_port, p0, v, V, P);
        return;
      }
    }
    return;
  }
  uint32_t in_done = 0, out_won = 0;
  bool retry = true;
  for (int iter = 0; iter < 2 && retry; iter++) {
    uint8_t in_vc[NOC_FAST_MAX_PORTS];
    uint32_t in_req = 0;
    uint32_t want[NOC_FAST_MAX_PORTS]; /* per output: the input ports offering to it */
    uint32_t wanted = 0;               /* outputs with an offer */
    uint32_t ready = r->nonempty & r->ivc_active;
    while (ready) { /* the ports with a VC that may offer, in order */
      const unsigned p = (unsigned)__builtin_ctz(ready) >> VC_SHIFT(V);
      const uint32_t vcs = (ready >> (p << VC_SHIFT(V))) & VC_MASK(V);
      ready &= ~(VC_MASK(V) << (p << VC_SHIFT(V)));
      if ((in_done >> p) & 1) continue;
      const unsigned rr = r->rr_sa_in[p];
      for (uint32_t rot = rotate_vcs(vcs, rr, V); rot; rot &= rot - 1) {
        const unsigned v = (rr + (unsigned)__builtin_ctz(rot)) & (V - 1u);
        const ivc_t *q = &r->ivc[(p << VC_SHIFT(V)) | v];
        const unsigned o = q->out_port;
        if (((out_won >> o) & 1) || !has_credit(r, q, V)) continue;
        in_req |= 1u << p;
        in_vc[p] = (uint8_t)v;
        if (!((wanted >> o) & 1)) want[o] = 0;
        wanted |= 1u << o;
        want[o] |= 1u << p;
        break;
      }
    }
    for (uint32_t om = wanted; om; om &= om - 1) {
      const unsigned o = (unsigned)__builtin_ctz(om);
      const unsigned p = first_from(want[o], r->rr_sa_out[o]);
      out_won |= 1u << o;
      in_done |= 1u << p;
      traverse(r, o, p, in_vc[p], V, P);
    }
    retry = (in_req & ~in_done) != 0;
  }
}

/* Credits of dropped flits: one per VC and cycle, unless the VC returns one itself. */
static void return_drop_credits(noc_fast_t *r) {
  for (unsigned i = 0; i < r->nivc; i++) {
    if (r->drop_credits[i] && !((r->credit_out >> i) & 1)) {
      r->credit_out |= 1u << i;
      r->drop_credits[i] = (uint8_t)((r->drop_credits[i] - 1) & CNT_MASK);
      r->drop_pending = (uint16_t)((r->drop_pending - 1) & r->occ_mask);
    }
  }
}

/* A head on local input VC i for outside the slice drops its packet: this flit and the rest of
 * the packet are discarded (their credits returned later). Returns whether f is discarded. */
static bool drop_local(noc_fast_t *r, unsigned i, const noc_flit_t *f) {
  if (f->head && !in_slice((uint8_t)f->data, (uint8_t)(f->data >> 8), r->slice)) {
    r->dropping |= 1u << i;
    r->drops++;
  }
  if (!((r->dropping >> i) & 1)) return false;
  r->drop_credits[i] = (uint8_t)((r->drop_credits[i] + 1) & CNT_MASK);
  r->drop_pending = (uint16_t)((r->drop_pending + 1) & r->occ_mask);
  if (f->tail) r->dropping &= ~(1u << i);
  return true;
}

/* A flit arriving on input p: dropped with its packet (local inputs), lost to a full buffer
 * (overflow), or written into its VC buffer. */
INLINE void arrive(noc_fast_t *r, unsigned p, const noc_flit_t *f, const unsigned V) {
  const unsigned v = f->vc & (V - 1u), i = (p << VC_SHIFT(V)) | v;
  ivc_t *q = &r->ivc[i];
  if (is_local(p) && drop_local(r, i, f)) return;
  const unsigned count = q->count;
  if (count == r->depth) {
    r->overflow = true;
    return;
  }
  const unsigned slot = q->wr;
  const uint8_t bit = (uint8_t)(1u << slot);
  r->data[i * NOC_FAST_MAX_DEPTH + slot] = f->data;
  q->heads = (uint8_t)((q->heads & ~bit) | (unsigned)f->head << slot);
  q->tails = (uint8_t)((q->tails & ~bit) | (unsigned)f->tail << slot);
  q->wr = (uint8_t)((slot + 1) & PTR_MASK);
  q->count = (uint8_t)(count + 1);
  r->nonempty |= 1u << i;
  if (!count && f->head && !((r->ivc_active >> i) & 1)) request_route(r, i, f->data, V); /* at the front */
}

/* The edge, in the RTL's order. */
INLINE noc_fast_outputs_t step(noc_fast_t *r, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in,
                               const unsigned V, const unsigned P) {
  const bool busy_before = r->nonempty != 0; /* occupancy != 0: counts never wrap (at most depth) */
  if (r->out_valid | r->credit_out) { /* the RTL's out_any: last cycle's outputs are gone (valid bits only) */
    for (uint32_t m = r->out_valid; m; m &= m - 1) r->out[__builtin_ctz(m)].valid = false;
    r->out_valid = 0;
    r->credit_out = 0;
  }
  if (busy_before) {
    if (r->asked && r->va_dirty) vc_allocate(r, V, P);
    switch_allocate(r, V, P);
  }
  for (uint32_t m = credit_in & (uint32_t)((1ull << (P * V)) - 1); m; m &= m - 1) {
    const unsigned ovc = (unsigned)__builtin_ctz(m);
    set_credits(r, ovc, r->ovc[ovc].credits + 1u);
  }
  if (r->drop_pending) return_drop_credits(r);
  for (unsigned m = in_ports & ((1u << P) - 1); m; m &= m - 1) {
    const unsigned p = (unsigned)__builtin_ctz(m);
    if (in[p].valid) arrive(r, p, &in[p], V);
  }
  return (noc_fast_outputs_t){.credits = r->credit_out, .ports = r->out_valid};
}

static noc_fast_outputs_t step_v2_p5(noc_fast_t *r, const noc_flit_t *in, unsigned ports, uint32_t credits) {
  return step(r, in, ports, credits, 2, 5);
}
static noc_fast_outputs_t step_v4_p5(noc_fast_t *r, const noc_flit_t *in, unsigned ports, uint32_t credits) {
  return step(r, in, ports, credits, 4, 5);
}
static noc_fast_outputs_t step_v2_p8(noc_fast_t *r, const noc_flit_t *in, unsigned ports, uint32_t credits) {
  return step(r, in, ports, credits, 2, 8);
}
static noc_fast_outputs_t step_v4_p8(noc_fast_t *r, const noc_flit_t *in, unsigned ports, uint32_t credits) {
  return step(r, in, ports, credits, 4, 8);
}

/* The edge compiled for the router's (V, P): 2 or 4 VCs (8 do not fit the 32-bit credit
 * vectors), 5 or 8 ports. */
static step_fn_t step_for(unsigned vcs, unsigned ports) {
  if (ports == 5) return vcs == 2 ? step_v2_p5 : step_v4_p5;
  return vcs == 2 ? step_v2_p8 : step_v4_p8;
}

void noc_fast_set_slice(noc_fast_t *r, uint32_t slice) {
  if (slice == r->slice) return;
  r->slice = slice;
  set_mesh(r);
  memset(r->req, 0, sizeof r->req); /* the waiting heads ask again, routed in the new slice */
  r->asked = 0;
  for (uint32_t m = r->nonempty & ~r->ivc_active; m; m &= m - 1) request_vc(r, (unsigned)__builtin_ctz(m), r->vcs);
}

noc_fast_outputs_t noc_fast_step_ports(noc_fast_t *r, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in) {
  return r->step(r, in, in_ports, credit_in);
}

void noc_fast_step(noc_fast_t *r, const noc_flit_t *in, uint32_t credit_in) {
  unsigned in_ports = 0;
  for (unsigned p = 0; p < r->ports; p++) in_ports |= (unsigned)in[p].valid << p;
  r->step(r, in, in_ports, credit_in);
}

/* ------------------------------------------------------------------ outputs and status */

const noc_flit_t *noc_fast_out(const noc_fast_t *r) { return r->out; }
unsigned noc_fast_out_ports(const noc_fast_t *r) { return r->out_valid; }
uint32_t noc_fast_credit_out(const noc_fast_t *r) { return r->credit_out; }
bool noc_fast_idle(const noc_fast_t *r) { return !(r->nonempty | r->out_valid | r->credit_out | r->drop_pending); }
unsigned noc_fast_ports(const noc_fast_t *r) { return r->ports; }
/* occupancy_o: the flits held (the sum of the VCs' counts, which the RTL keeps as it goes), low 8 bits. */
unsigned noc_fast_occupancy(const noc_fast_t *r) {
  unsigned held = 0;
  for (unsigned i = 0; i < r->nivc; i++) held += r->ivc[i].count;
  return held & 0xFFu;
}
bool noc_fast_overflow(const noc_fast_t *r) { return r->overflow; }
uint16_t noc_fast_drops(const noc_fast_t *r) { return r->drops; }

unsigned noc_fast_vc_count(const noc_fast_t *r, unsigned port, unsigned vc) {
  return port < r->ports && vc < r->vcs ? r->ivc[(port << r->vc_shift) | vc].count : 0;
}
