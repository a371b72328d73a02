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
 * request vectors) and walks only the set bits, so an edge costs in proportion to the flits
 * and credits that move, not to the ports and VCs.
 *
 * Widths are the RTL's: credits and per-VC counts are CntW = 4 bits (they wrap as the RTL's
 * do, if a sender returns more credits than it had), drops_o 16 bits, occupancy_o the low 8
 * bits of the count (the sum of the VCs' counts, worked out when asked). Outputs: between
 * cycles only the valid bit of an output register is cleared, so an idle port shows the last
 * flit's other fields, as out_flit_o does. A VC's buffer is a ring of MaxDepth slots whatever
 * depth is in use; where in the ring a flit sits is not visible at the ports.
 */
#include "fast/noc_fast.h"

#include <stddef.h>
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
#define RING_SLOTS (NOC_FAST_MAX_DEPTH - 1u) /* behind the front flit: depth 8 leaves 7 */
#define MAX_IVCS 32u    /* P * V: the credit vectors of this API (and dbg_vc_i) are 32 bits */
/* Small helpers of the per-edge path, inlined where they are used (a call costs as much). */
#define INLINE static inline __attribute__((always_inline))

/* One input VC in 12 bytes: the flit at its front (the RTL's buf_data, buf_head, buf_tail at
 * rd_ptr), how many it holds, and the output VC its front packet holds (ivc_port * V + ivc_vc,
 * valid while the VC is active). */
typedef struct __attribute__((packed, aligned(4))) {
  uint64_t data;  /* the front flit's data */
  uint16_t flags; /* the front flit's head (bit 0) and tail (bit 8): its meta word's bytes 2, 3 */
  uint8_t count;  /* flits held (CntW bits) */
  uint8_t ovc;    /* the output VC held */
} ivc_t;
#define FRONT_HEAD 1u
#define FRONT_TAIL 0x100u

/* The flits behind an input VC's front, in one cache line: RING_SLOTS of them from the VC's rd,
 * with their head and tail flags (bit s for data[s]). */
typedef struct {
  uint64_t data[RING_SLOTS];
  uint8_t heads, tails;
  uint8_t rd; /* the slot of the flit right behind the front */
  uint8_t spare[5];
} ring_t;

/* One output VC: its credits (CntW bits), VC allocation's round-robin pointer, and the input VC
 * that holds it (valid while it is busy). */
typedef struct {
  uint8_t credits, rr_va, owner, spare;
} ovc_t;

/* The state is laid out for the cache: a thousand routers stepped every cycle do not all fit
 * in the host's L2, so what an edge touches is packed into as few lines as the router's port
 * and VC counts allow. A header (masks over the VCs, counters, configuration) comes first; then
 * a body whose arrays are sized for this router's P ports and N = P * V input (and output) VCs,
 * at offsets that are constants in the edge compiled for (V, P) (the OFF_* macros):
 *
 *   req[P]        uint64_t  VC allocation's requests per output: bit i (class 0) and bit 32 + i
 *                           (class 1) while input VC i has a head at its front, holds no output
 *                           VC and its route is that output with that class allowed (the RTL's
 *                           req[o][c] at the start of an edge, kept as the state changes)
 *   ivc[N]        ivc_t     the input VCs, i = p * V + v (12 bytes each)
 *   ovc[N]        ovc_t     the output VCs, o * V + w
 *   rr_sa_in[P], rr_sa_out[P]  switch allocation's pointers, per input and per output port
 *   out[P]        noc_flit_t the registered output flits (a router stepped on links has none)
 *   drop_credits[N]  per local input VC, credits of dropped flits not yet returned
 *   ring[N]       ring_t    the flits behind the fronts, a cache line per input VC
 *
 * A VC's buffer is its front flit and a ring of MaxDepth - 1 slots behind it (in order from rd),
 * so a VC holding one flit, the usual case at low load, is one record. */
struct noc_fast {
  /* what an edge reads, in the first line: masks over input VCs i = p * V + v (output VCs
   * o * V + w for ovc_busy) */
  uint32_t nonempty;    /* count != 0 */
  uint32_t active;      /* ivc_active: the packet at the front of i holds an output VC */
  uint32_t ovc_busy;    /* an output VC is held by a packet */
  uint32_t credit_out;  /* registered: credits for the input VCs */
  uint32_t ready;       /* nonempty & active, and the output VC held has a credit: the VCs
                           switch allocation may take (before outputs already taken) */
  uint8_t out_valid;    /* registered: the output ports with a valid flit */
  uint8_t asked;        /* outputs with a request in req */
  uint8_t dirty;        /* outputs where a request or a free VC appeared since VC allocation last
                           ran: the others would grant nothing (each of their free VCs found no
                           requester, and since then requests only went and VCs only filled) */
  uint8_t kind;         /* which compiled edge: (V == 4) | (P == 8) << 1 */
  uint16_t drop_pending; /* sum of drop_credits (OccW bits) */
  bool overflow;        /* sticky: a flit hit a full VC */
  uint8_t depth;        /* depth_q: buf_depth sampled at reset */
  uint32_t dropping;    /* a local input VC is discarding the rest of a dropped packet */
  uint8_t sliced;       /* slice_i's w != 0: heads on local inputs are checked against the slice */
  uint8_t my_x, my_y, size_x, size_y;
  bool mesh_x, mesh_y;  /* the slice part-covers X, Y: route straight (set_mesh) */
  uint8_t dateline;     /* bit o: output o's hop crosses a wraparound link */
  uint32_t peer[4];     /* noc_fast_link: port p's peer router (p = 1..4 at [p - 1]) ... */
  uint8_t peer_port[4]; /* ... and its port */
  /* routes worked out at set-up (set_mesh) for destination coordinates below 64, one bit each:
   * per dimension X (0), Y (1), whether the way is the negative one, and the class rule's
   * answer when the hop is not bound to class 1 by the packet's VC: class 0 only (ahead), or
   * class 1 only (the dateline) */
  uint64_t route_neg[2], route_cls0[2], route_cls1[2];
  /* configuration and counters the edge reads rarely */
  uint8_t ports, vcs, vc_shift, nivc, num_local; /* P, V, log2 V, P * V */
  uint16_t drops;       /* drops_o */
  uint16_t occ_mask;    /* OccW = $clog2(P * V * MaxDepth + 1) ones */
  uint32_t slice;
  uint32_t buf_depth_in; /* buf_depth_i as configured */
  /* wide flits (flit_words > 1): the words beyond the first of each buffered flit, kept beside
   * the buffers (so a router of 64-bit flits pays nothing): input VC i's ring of MaxDepth
   * entries of flit_words - 1 words at pay + i * MaxDepth * (flit_words - 1), read from
   * pay_rd[i] in arrival order */
  uint8_t flit_words;
  uint8_t pay_rd[MAX_IVCS];
  uint64_t *pay;
  const noc_wide_t *in_hi; /* this edge's arriving words (noc_fast_wide_in) */
  noc_wide_t *out_hi;      /* the outputs' words, [P] */
  uint64_t body[];      /* the arrays above, at OFF_*(V, P) bytes */
};

#define NIVC(V, P) ((V) * (P))
#define OFF_REQ(V, P) (0u * (V) * (P)) /* first */
#define OFF_IVC(V, P) (OFF_REQ(V, P) + 8u * (P))
#define OFF_OVC(V, P) (OFF_IVC(V, P) + 12u * NIVC(V, P))
#define OFF_RR_SA_IN(V, P) (OFF_OVC(V, P) + 4u * NIVC(V, P))
#define OFF_RR_SA_OUT(V, P) (OFF_RR_SA_IN(V, P) + (P))
#define OFF_OUT(V, P) ((OFF_RR_SA_OUT(V, P) + (P) + 7u) & ~7u) /* registers: not on links */
#define OFF_DROP_CREDITS(V, P) (OFF_OUT(V, P) + 16u * (P))
#define HEADER_BYTES ((unsigned)sizeof(struct noc_fast))
#define OFF_RING(V, P) ((((HEADER_BYTES + OFF_DROP_CREDITS(V, P) + NIVC(V, P)) + 63u) & ~63u) - HEADER_BYTES)
#define BODY_SIZE(V, P) (OFF_RING(V, P) + (unsigned)sizeof(ring_t) * NIVC(V, P))

/* The body's arrays of router r with V VCs and P ports (constants in the compiled edge). */
#define B8(r, off) ((uint8_t *)(r)->body + (off))
#define REQ(r, V, P) ((r)->body + OFF_REQ(V, P) / 8u)
#define OUT(r, V, P) ((noc_flit_t *)B8(r, OFF_OUT(V, P)))
#define IVC(r, V, P) ((ivc_t *)B8(r, OFF_IVC(V, P)))
#define OVC(r, V, P) ((ovc_t *)B8(r, OFF_OVC(V, P)))
#define RR_SA_IN(r, V, P) B8(r, OFF_RR_SA_IN(V, P))
#define RR_SA_OUT(r, V, P) B8(r, OFF_RR_SA_OUT(V, P))
#define DROP_CREDITS(r, V, P) B8(r, OFF_DROP_CREDITS(V, P))
#define RING(r, V, P) ((ring_t *)B8(r, OFF_RING(V, P)))
#define META_VALID (1u << 8)
#define META_HEAD (1u << 16)
#define META_TAIL (1u << 24)

/* Flit metadata {vc, valid, head, tail} is read and written as one 32-bit word. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "noc_fast: the flit meta word assumes a little-endian host"
#endif
_Static_assert(offsetof(noc_flit_t, vc) == 8 && offsetof(noc_flit_t, valid) == 9 && offsetof(noc_flit_t, head) == 10 &&
                   offsetof(noc_flit_t, tail) == 11 && sizeof(noc_flit_t) == 16,
               "noc_flit_t: the layout traverse writes");
_Static_assert(sizeof(ivc_t) == 12 && sizeof(ovc_t) == 4 && sizeof(ring_t) == 64, "the VC records");
_Static_assert(sizeof(struct noc_fast) % 8 == 0, "the body is 8-byte aligned");

/* ------------------------------------------------------------------ noc_pkg's functions */

static bool is_local(unsigned o) { return o == PORT_LOCAL || o >= NET_PORTS; }

/* Where a packet for this router that arrived on input p ejects (noc_router's eject_port). */
static unsigned eject_port(const noc_fast_t *r, unsigned p) {
  if (r->num_local == 1 || p == 0 || p >= NET_PORTS) return PORT_LOCAL;
  return p == PORT_XPOS ? PORT_LOCAL : p + 3;
}

/* One ring of noc_pkg::route, for dst != me: whether the shorter way to dst is the negative
 * one. The distance is 9 bits and (d << 1) is compared in 9 bits, as the RTL sizes them. */
static unsigned route_neg(unsigned me, unsigned dst, unsigned size) {
  const unsigned d = dst >= me ? dst - me : dst + size - me;
  if (size == 2) return me & 1;  /* both ways are one hop: not the wraparound */
  const unsigned twice = (d << 1) & 0x1FFu;
  if (twice == size) return dst & 1; /* half way round: split by parity */
  return twice > size;
}

/* The output port and allowed classes (bit c: class c) of a head for (dst_x, dst_y) != (my_x,
 * my_y) at the front of input VC (p, v), worked out from the coordinates: noc_pkg::route,
 * route_in_slice, crosses_dateline, port_dim and crosses_ahead as noc_router calls them. */
static unsigned route_slow(const noc_fast_t *r, unsigned p, unsigned v, unsigned dst_x, unsigned dst_y, unsigned V) {
  unsigned o, ahead;
  if (dst_x != r->my_x) {
    const unsigned neg = r->mesh_x ? dst_x < r->my_x : route_neg(r->my_x, dst_x, r->size_x);
    o = PORT_XPOS + neg;
    ahead = neg ? dst_x > r->my_x : dst_x < r->my_x;
    if (p - PORT_XPOS < 2u && v >= V / 2u) return o | 2u << 4; /* class 1 stays in this ring */
  } else {
    const unsigned neg = r->mesh_y ? dst_y < r->my_y : route_neg(r->my_y, dst_y, r->size_y);
    o = PORT_YPOS + neg;
    ahead = neg ? dst_y > r->my_y : dst_y < r->my_y;
    if (p - PORT_YPOS < 2u && v >= V / 2u) return o | 2u << 4;
  }
  if ((r->dateline >> o) & 1) return o | 2u << 4; /* the hop over the dateline: class 1 */
  return o | (ahead ? 1u : 3u) << 4;  /* crossing later: class 0; never: either */
}

/* The slice's part in routing (route_in_slice's mesh_x, mesh_y) and in dropping. */
static void set_mesh(noc_fast_t *r) {
  const uint8_t w = (uint8_t)(r->slice >> 16), h = (uint8_t)(r->slice >> 24);
  r->mesh_x = w != 0 && w != r->size_x;
  r->mesh_y = h != 0 && h != r->size_y;
  r->sliced = w != 0;
  /* route_of's tables: the routes of route_slow from a local input (no class-1 VC of the ring) */
  for (unsigned dim = 0; dim < 2; dim++) {
    r->route_neg[dim] = r->route_cls0[dim] = r->route_cls1[dim] = 0;
    for (unsigned c = 0; c < 64; c++) {
      const unsigned x = dim ? r->my_x : c, y = dim ? c : r->my_y;
      if (dim ? c == r->my_y : c == r->my_x) continue;
      const unsigned route = route_slow(r, PORT_LOCAL, 0, x, y, 2);
      r->route_neg[dim] |= (uint64_t)((route & 0xF) == PORT_XNEG || (route & 0xF) == PORT_YNEG) << c;
      r->route_cls0[dim] |= (uint64_t)((route >> 4) & 1) << c;
      r->route_cls1[dim] |= (uint64_t)((route >> 5) & 1) << c;
    }
  }
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


/* ------------------------------------------------------------------ set-up */

/* Runs the statements with V and P constants for router r's VC and port counts. */
#define WITH_SHAPE(r, ...)                                  \
  do {                                                       \
    switch ((r)->kind) {                                     \
      case 0: { enum { V = 2, P = 5 }; __VA_ARGS__; } break;        \
      case 1: { enum { V = 4, P = 5 }; __VA_ARGS__; } break;        \
      case 2: { enum { V = 2, P = 8 }; __VA_ARGS__; } break;        \
      default: { enum { V = 4, P = 8 }; __VA_ARGS__; } break;       \
    }                                                        \
  } while (0)

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
  if (cfg->flit_words > NOC_FLIT_MAX_WORDS) {
    snprintf(err, errlen, "noc_fast: %u-word flits: at most %u", cfg->flit_words, NOC_FLIT_MAX_WORDS);
    return NULL;
  }
  if (cfg->size_x < 1 || cfg->size_x > 255 || cfg->size_y < 1 || cfg->size_y > 255 || cfg->x >= cfg->size_x ||
      cfg->y >= cfg->size_y) {
    snprintf(err, errlen, "noc_fast: router (%u,%u) in a %ux%u pod: coordinates are 8 bits, inside the pod", cfg->x,
             cfg->y, cfg->size_x, cfg->size_y);
    return NULL;
  }
  const uint8_t kind = (uint8_t)((cfg->vcs == 4) | (ports == 8) << 1);
  size_t size = sizeof(noc_fast_t);
  switch (kind) {
    case 0: size += BODY_SIZE(2, 5); break;
    case 1: size += BODY_SIZE(4, 5); break;
    case 2: size += BODY_SIZE(2, 8); break;
    default: size += BODY_SIZE(4, 8); break;
  }
  size = (size + 63) / 64 * 64;
  noc_fast_t *r = aligned_alloc(64, size);
  if (!r) {
    snprintf(err, errlen, "noc_fast: out of memory");
    return NULL;
  }
  memset(r, 0, size);
  r->kind = kind;
  r->ports = (uint8_t)ports;
  r->vcs = (uint8_t)cfg->vcs;
  r->vc_shift = (uint8_t)__builtin_ctz(cfg->vcs);
  r->nivc = (uint8_t)(ports * cfg->vcs);
  r->my_x = (uint8_t)cfg->x;
  r->my_y = (uint8_t)cfg->y;
  r->size_x = (uint8_t)cfg->size_x;
  r->size_y = (uint8_t)cfg->size_y;
  r->num_local = (uint8_t)cfg->num_local;
  r->buf_depth_in = cfg->buf_depth;
  r->flit_words = (uint8_t)(cfg->flit_words ? cfg->flit_words : 1);
  if (r->flit_words > 1 &&
      (!(r->pay = calloc((size_t)r->nivc * NOC_FAST_MAX_DEPTH * (r->flit_words - 1u), sizeof *r->pay)) ||
       !(r->out_hi = calloc(ports, sizeof *r->out_hi)))) {
    free(r->pay);
    free(r);
    snprintf(err, errlen, "noc_fast: out of memory");
    return NULL;
  }
  unsigned occ_bits = 0;
  while ((1u << occ_bits) < r->nivc * NOC_FAST_MAX_DEPTH + 1u) occ_bits++;
  r->occ_mask = (uint16_t)((1u << occ_bits) - 1);
  for (unsigned o = PORT_XPOS; o <= PORT_YNEG; o++) r->dateline |= (uint8_t)(crosses_dateline(r, o) << o);
  set_mesh(r);
  noc_fast_reset(r);
  return r;
}

void noc_fast_free(noc_fast_t *r) {
  if (r) free(r->pay), free(r->out_hi);
  free(r);
}

void noc_fast_wide_in(noc_fast_t *r, const noc_wide_t *in_hi) { r->in_hi = in_hi; }
const noc_wide_t *noc_fast_out_wide(const noc_fast_t *r) { return r->out_hi; }

/* The RTL's reset branch. The buffer contents and ivc_port/ivc_vc have no reset there (they
 * are read only behind count and ivc_active), so they are left as they are. */
void noc_fast_reset(noc_fast_t *r) {
  WITH_SHAPE(r, {
    memset(DROP_CREDITS(r, V, P), 0, NIVC(V, P));
    for (unsigned i = 0; i < NIVC(V, P); i++) {
      IVC(r, V, P)[i].count = 0;
      RING(r, V, P)[i].rd = 0;
      OVC(r, V, P)[i] = (ovc_t){.credits = (uint8_t)(r->buf_depth_in & CNT_MASK)};
    }
    memset(RR_SA_IN(r, V, P), 0, P);
    memset(RR_SA_OUT(r, V, P), 0, P);
    memset(OUT(r, V, P), 0, P * sizeof(noc_flit_t));
    memset(REQ(r, V, P), 0, P * sizeof(uint64_t));
  });
  r->nonempty = r->active = r->ovc_busy = r->dropping = r->ready = 0;
  r->asked = 0;
  r->dirty = 0;
  r->out_valid = 0;
  r->credit_out = 0;
  r->overflow = false;
  r->drop_pending = 0;
  r->drops = 0;
  r->depth = (uint8_t)(r->buf_depth_in & CNT_MASK);
  memset(r->pay_rd, 0, sizeof r->pay_rd);
}

/* A wide flit's words beyond the first: into input VC i's payload ring behind the `held` flits
 * it holds, and out of it in the same order. */
static void pay_put(noc_fast_t *r, unsigned i, unsigned held, unsigned p) {
  const unsigned n = r->flit_words - 1u;
  memcpy(r->pay + ((size_t)i * NOC_FAST_MAX_DEPTH + ((r->pay_rd[i] + held) & (NOC_FAST_MAX_DEPTH - 1))) * n,
         r->in_hi[p].w, n * sizeof *r->pay);
}

static void pay_take(noc_fast_t *r, unsigned i, unsigned o) {
  const unsigned n = r->flit_words - 1u;
  memcpy(r->out_hi[o].w, r->pay + ((size_t)i * NOC_FAST_MAX_DEPTH + r->pay_rd[i]) * n, n * sizeof *r->pay);
  r->pay_rd[i] = (uint8_t)((r->pay_rd[i] + 1u) & (NOC_FAST_MAX_DEPTH - 1));
}

/* ------------------------------------------------------------------ one edge */

/* The edge is written once, with the VC count V and port count P as arguments of inlined
 * functions, and compiled for each (V, P) a router can have: with them constant, the masks,
 * shifts and the body's offsets become immediates. */
#define VC_SHIFT(V) ((unsigned)__builtin_ctz(V))
#define VC_MASK(V) ((1u << (V)) - 1u)
#define CLASS1 32u /* req[o]: bit i class 0, bit CLASS1 + i class 1 */

/* Where an edge's outputs go: the router's output registers (noc_fast_step: LINKED 0, and no
 * sink), or the links of a network (noc_fast_step_network: LINKED 1), router n of it. */
typedef struct {
  noc_flit_t *wr_flit;   /* noc_fast_links_t's */
  uint64_t *wr_arrive;
  noc_flit_t *local_out; /* router n's */
  uint32_t *local;       /* router n's events this edge (noc_fast_links_t.local_events), and
                            SINK_FORWARDED once it sent a flit on a link */
} sink_t;
#define SINK_FORWARDED (1u << 31)

/* The output port and allowed classes (bit c: class c) of a head for dst at the front of input
 * VC i = (p, v): noc_router's route computation (route_in_slice, route, eject_port) and class
 * rule (crosses_dateline, port_dim, crosses_ahead), from the same destination, input and slice,
 * worked out when the head reaches the front (and again if the slice changes). */
INLINE unsigned route_of(const noc_fast_t *r, unsigned p, unsigned v, uint64_t dst, const unsigned V) {
  const unsigned dst_x = (uint8_t)dst, dst_y = (uint8_t)(dst >> 8);
  unsigned dim, c;
  if (dst_x != r->my_x) dim = 0, c = dst_x;
  else if (dst_y != r->my_y) dim = 1, c = dst_y;
  else return eject_port(r, p) | 3u << 4; /* ejection: any VC */
  if (c >= 64) return route_slow(r, p, v, dst_x, dst_y, V);
  const unsigned base = PORT_XPOS + 2 * dim, o = base + ((unsigned)(r->route_neg[dim] >> c) & 1);
  if (p - base < 2u && v >= V / 2u) return o | 2u << 4; /* class 1 stays in this ring */
  return o | ((unsigned)(r->route_cls0[dim] >> c) & 1) << 4 | ((unsigned)(r->route_cls1[dim] >> c) & 1) << 5;
}

/* Input VC i asks VC allocation for the output of a head for dst (the head's data). */
INLINE void request_route(noc_fast_t *r, unsigned i, uint64_t dst, const unsigned V, const unsigned P) {
  const unsigned route = route_of(r, i >> VC_SHIFT(V), i & (V - 1u), dst, V);
  const unsigned o = route & 0xFu, cls = route >> 4;
  REQ(r, V, P)[o] |= (uint64_t)((cls & 1) | (uint64_t)(cls >> 1) << CLASS1) << i;
  r->asked |= (uint8_t)(1u << o);
  r->dirty |= (uint8_t)(1u << o);
}

/* The first set bit of mask at or after bit `from`, wrapping (mask != 0). */
INLINE unsigned first_from(uint32_t mask, unsigned from) {
  const uint32_t upper = mask & (~0u << from);
  return (unsigned)__builtin_ctz(upper ? upper : mask);
}

/* Output VC ovc = o * V + w grants input VC `pick` (which has a head at its front). */
INLINE void grant(noc_fast_t *r, unsigned ovc, unsigned pick, const unsigned V, const unsigned P) {
  ovc_t *const oc = &OVC(r, V, P)[ovc];
  r->active |= 1u << pick;
  r->ovc_busy |= 1u << ovc;
  r->ready |= (uint32_t)(oc->credits != 0) << pick;
  IVC(r, V, P)[pick].ovc = (uint8_t)ovc;
  oc->owner = (uint8_t)pick;
  oc->rr_va = (uint8_t)(pick + 1 == P * V ? 0 : pick + 1);
}

#define NOINLINE static __attribute__((noinline))

/* VC allocation at output o with several requesters: its free VCs `free`, in VC order, each
 * grant the first requester at or after their round-robin pointer (ejection: any requester; a
 * network port: those allowed the VC's class, class 0 being the lower VCs). Out of line: the
 * usual output has one requester. */
INLINE void va_contended(noc_fast_t *r, unsigned o, uint32_t free, const unsigned V, const unsigned P) {
  const uint32_t low = VC_MASK(V / 2), high = VC_MASK(V) & ~low;
  const ovc_t *const oc = OVC(r, V, P);
  uint64_t req = REQ(r, V, P)[o];
  if (is_local(o)) {
    for (; free; free &= free - 1) {
      const uint32_t cand = (uint32_t)req | (uint32_t)(req >> CLASS1);
      if (!cand) break;
      const unsigned ovc = o * V + (unsigned)__builtin_ctz(free), pick = first_from(cand, oc[ovc].rr_va);
      req &= ~((1ull | 1ull << CLASS1) << pick);
      grant(r, ovc, pick, V, P);
    }
  } else {
    for (uint32_t f = free & low; f && (uint32_t)req; f &= f - 1) {
      const unsigned ovc = o * V + (unsigned)__builtin_ctz(f), pick = first_from((uint32_t)req, oc[ovc].rr_va);
      req &= ~((1ull | 1ull << CLASS1) << pick);
      grant(r, ovc, pick, V, P);
    }
    for (uint32_t f = free & high; f && (req >> CLASS1); f &= f - 1) {
      const unsigned ovc = o * V + (unsigned)__builtin_ctz(f);
      const unsigned pick = first_from((uint32_t)(req >> CLASS1), oc[ovc].rr_va);
      req &= ~((1ull | 1ull << CLASS1) << pick);
      grant(r, ovc, pick, V, P);
    }
  }
  REQ(r, V, P)[o] = req;
  if (!req) r->asked &= (uint8_t)~(1u << o);
}

/* VC allocation: every free output VC, in port and VC order, grants the first requesting
 * input VC at or after its round-robin pointer. An input VC asks for one output only, so
 * outputs do not interact; an output with one requester grants it its first free VC of an
 * allowed class. Only outputs where a request or a free VC appeared since the last run are
 * visited (dirty). */
INLINE void vc_allocate(noc_fast_t *r, const unsigned V, const unsigned P,
                        void (*contended)(noc_fast_t *, unsigned, uint32_t)) {
  const uint32_t low = VC_MASK(V / 2), high = VC_MASK(V) & ~low;
  uint64_t *const reqs = REQ(r, V, P);
  uint32_t outputs = r->asked & r->dirty;
  r->dirty = 0;
  do {
    const unsigned o = (unsigned)__builtin_ctz(outputs);
    outputs &= outputs - 1;
    uint32_t free = ~(r->ovc_busy >> (o * V)) & VC_MASK(V);
    if (!free) continue;
    const uint64_t req = reqs[o];
    const uint32_t c0 = (uint32_t)req, c1 = (uint32_t)(req >> CLASS1), any = c0 | c1;
    if (any & (any - 1)) {
      contended(r, o, free);
      continue;
    }
    /* one requester */
    free &= is_local(o) ? VC_MASK(V) : (c0 ? low : 0) | (c1 ? high : 0);
    if (free) {
      reqs[o] = 0;
      r->asked &= (uint8_t)~(1u << o);
      grant(r, o * V + (unsigned)__builtin_ctz(free), (unsigned)__builtin_ctz(any), V, P);
    }
  } while (outputs);
}

/* The flit at the front of input VC i = (p, v) crosses the switch to output o (the port of its
 * output VC), into the output register or onto the link; its credit goes back to the sender; the
 * flit behind it, if any, comes to the front. */
INLINE void traverse(noc_fast_t *r, const sink_t *k, unsigned o, unsigned p, unsigned v, const unsigned V,
                     const unsigned P, const int LINKED) {
  const unsigned i = (p << VC_SHIFT(V)) | v;
  ivc_t *const q = &IVC(r, V, P)[i];
  const unsigned ovc = q->ovc, count = q->count - 1u;
  const unsigned flags = q->flags;
  const uint32_t out_meta = (uint32_t)flags << 16 | META_VALID | (ovc & (V - 1u));
  noc_flit_t *out;
  if (!LINKED) {
    out = &OUT(r, V, P)[o];
    r->out_valid |= (uint8_t)(1u << o);
    r->credit_out |= 1u << i;
  } else {
    if (o == PORT_LOCAL) {
      out = k->local_out;
      *k->local |= NOC_FAST_LOCAL_FLIT;
    } else {
      const uint32_t peer = r->peer[o - 1];
      const unsigned port = r->peer_port[o - 1];
      out = &k->wr_flit[(size_t)peer * NOC_FAST_NET_PORTS + port];
      k->wr_arrive[peer] |= 1ull << (NOC_FAST_ARRIVE_FLIT + port);
      *k->local |= SINK_FORWARDED;
    }
    if (p == PORT_LOCAL) *k->local |= 1u << (NOC_FAST_LOCAL_CREDIT + v);
    else k->wr_arrive[r->peer[p - 1]] |= 1ull << (r->peer_port[p - 1] * V + v);
  }
  out->data = q->data;
  memcpy(&out->vc, &out_meta, sizeof out_meta);
  if (r->pay) pay_take(r, i, o); /* (routers of wide flits are not linked) */
  q->count = (uint8_t)count;
  ovc_t *const oc = &OVC(r, V, P)[ovc];
  const unsigned credits = (oc->credits - 1u) & CNT_MASK;
  oc->credits = (uint8_t)credits;
  RR_SA_IN(r, V, P)[p] = (uint8_t)((v + 1) & (V - 1u));
  RR_SA_OUT(r, V, P)[o] = (uint8_t)(p + 1u == P ? 0 : p + 1);
  if (count) { /* the next flit comes to the front */
    ring_t *const g = &RING(r, V, P)[i];
    const unsigned slot = g->rd;
    q->data = g->data[slot];
    q->flags = (uint16_t)(((g->heads >> slot) & 1u) | ((g->tails >> slot) & 1u) << 8);
    g->rd = (uint8_t)(slot + 1 == RING_SLOTS ? 0 : slot + 1);
  } else {
    r->nonempty &= ~(1u << i);
  }
  if (flags & FRONT_TAIL) {
    r->active &= ~(1u << i);
    r->ovc_busy &= ~(1u << ovc);
    r->ready &= ~(1u << i);
    r->dirty |= (uint8_t)(1u << o); /* a free output VC */
    if (count && (q->flags & FRONT_HEAD)) request_route(r, i, q->data, V, P); /* the next packet's head */
  } else if (!count || !credits) {
    r->ready &= ~(1u << i);
  }
}

/* The VCs in `vcs` (a mask over a port's V VCs) rotated to start at VC rr: bit k is VC rr + k. */
INLINE uint32_t rotate_vcs(uint32_t vcs, unsigned rr, const unsigned V) {
  return ((vcs >> rr) | (vcs << (V - rr))) & VC_MASK(V);
}

/* The VC input port p offers in switch allocation: the first from its pointer among `vcs`
 * (ready: holding a flit and an output VC with a credit). */
INLINE unsigned offer(const noc_fast_t *r, unsigned p, uint32_t vcs, const unsigned V, const unsigned P) {
  const unsigned rr = RR_SA_IN(r, V, P)[p];
  return (rr + (unsigned)__builtin_ctz(rotate_vcs(vcs, rr, V))) & (V - 1u);
}

/* Switch allocation when two offers of the first iteration want the same output: each output
 * takes the first offering input from its pointer; the inputs that lost then offer a ready VC
 * bound for an output still free (the second iteration), and those outputs choose again. */
INLINE void sa_contended(noc_fast_t *r, const sink_t *k, uint32_t ready, uint32_t in_req, const uint8_t *in_vc_first,
                         const uint8_t *out_first, const unsigned V, const unsigned P, const int LINKED) {
  uint8_t in_vc[NOC_FAST_MAX_PORTS];
  uint32_t want[NOC_FAST_MAX_PORTS] = {0}; /* per output: the input ports offering to it */
  uint32_t wanted = 0;                     /* outputs with an offer */
  for (uint32_t m = in_req; m; m &= m - 1) {
    const unsigned p = (unsigned)__builtin_ctz(m), o = out_first[p];
    in_vc[p] = in_vc_first[p];
    wanted |= 1u << o;
    want[o] |= 1u << p;
  }
  uint32_t in_done = 0;
  const uint32_t out_won = wanted;
  for (uint32_t om = wanted; om; om &= om - 1) {
    const unsigned o = (unsigned)__builtin_ctz(om), p = first_from(want[o], RR_SA_OUT(r, V, P)[o]);
    in_done |= 1u << p;
    traverse(r, k, o, p, in_vc[p], V, P, LINKED);
  }
  /* second iteration: the ports that lost offer a ready VC bound for an output still free */
  wanted = 0;
  for (uint32_t lost = in_req & ~in_done; lost; lost &= lost - 1) {
    const unsigned p = (unsigned)__builtin_ctz(lost), rr = RR_SA_IN(r, V, P)[p];
    for (uint32_t rot = rotate_vcs((ready >> (p << VC_SHIFT(V))) & VC_MASK(V), rr, V); rot; rot &= rot - 1) {
      const unsigned v = (rr + (unsigned)__builtin_ctz(rot)) & (V - 1u);
      const unsigned o = IVC(r, V, P)[(p << VC_SHIFT(V)) | v].ovc >> VC_SHIFT(V);
      if ((out_won >> o) & 1) continue;
      in_vc[p] = (uint8_t)v;
      if (!((wanted >> o) & 1)) want[o] = 0;
      wanted |= 1u << o;
      want[o] |= 1u << p;
      break;
    }
  }
  for (uint32_t om = wanted; om; om &= om - 1) {
    const unsigned o = (unsigned)__builtin_ctz(om), p = first_from(want[o], RR_SA_OUT(r, V, P)[o]);
    traverse(r, k, o, p, in_vc[p], V, P, LINKED);
  }
}

/* Switch allocation, separable, round-robin, two iterations: each input port offers the
 * first VC from its pointer that holds a flit and owns an output VC with a credit (the ready
 * mask); each output takes the first offering input from its pointer; inputs that lost offer
 * again for the outputs still free. When the offers all want different outputs (the usual
 * case) every one wins and nobody lost, so there is no second iteration. */
INLINE void switch_allocate(noc_fast_t *r, const sink_t *k, const unsigned V, const unsigned P, const int LINKED,
                            void (*contended)(noc_fast_t *, const sink_t *, uint32_t, uint32_t, const uint8_t *,
                                              const uint8_t *)) {
  const uint32_t ready = r->ready;
  uint8_t in_vc[NOC_FAST_MAX_PORTS], out_of[NOC_FAST_MAX_PORTS];
  uint32_t wanted = 0, in_req = 0, clash = 0;
  for (uint32_t m = ready; m;) { /* first iteration: every port with a ready VC offers one */
    const unsigned p = (unsigned)__builtin_ctz(m) >> VC_SHIFT(V);
    const uint32_t vcs = (m >> (p << VC_SHIFT(V))) & VC_MASK(V);
    m &= ~(VC_MASK(V) << (p << VC_SHIFT(V)));
    const unsigned v = (vcs & (vcs - 1)) ? offer(r, p, vcs, V, P) : (unsigned)__builtin_ctz(vcs);
    const unsigned o = IVC(r, V, P)[(p << VC_SHIFT(V)) | v].ovc >> VC_SHIFT(V);
    clash |= wanted & (1u << o);
    wanted |= 1u << o;
    in_req |= 1u << p;
    in_vc[p] = (uint8_t)v;
    out_of[p] = (uint8_t)o;
  }
  if (clash) {
    if (LINKED) sa_contended(r, k, ready, in_req, in_vc, out_of, V, P, 1); /* inline: k stays local */
    else contended(r, k, ready, in_req, in_vc, out_of);
    return;
  }
  for (uint32_t m = in_req; m; m &= m - 1) { /* every offer wins its output */
    const unsigned p = (unsigned)__builtin_ctz(m);
    traverse(r, k, out_of[p], p, in_vc[p], V, P, LINKED);
  }
}

/* Credits of dropped flits: one per VC and cycle, unless the VC returns one itself. */
INLINE void return_drop_credits(noc_fast_t *r, const sink_t *k, const unsigned V, const unsigned P, const int LINKED) {
  uint8_t *const dc = DROP_CREDITS(r, V, P);
  for (unsigned i = 0; i < NIVC(V, P); i++) {
    if (!dc[i]) continue;
    if (!LINKED) {
      if ((r->credit_out >> i) & 1) continue;
      r->credit_out |= 1u << i;
    } else { /* drops are on local inputs: port 0 here */
      if ((*k->local >> (NOC_FAST_LOCAL_CREDIT + i)) & 1) continue;
      *k->local |= 1u << (NOC_FAST_LOCAL_CREDIT + i);
    }
    dc[i] = (uint8_t)((dc[i] - 1) & CNT_MASK);
    r->drop_pending = (uint16_t)((r->drop_pending - 1) & r->occ_mask);
  }
}

/* A head on local input VC i for outside the slice drops its packet: this flit and the rest of
 * the packet are discarded (their credits returned later). Returns whether f is discarded. */
static bool drop_local(noc_fast_t *r, uint8_t *drop_credits, unsigned i, const noc_flit_t *f) {
  if (f->head && !in_slice((uint8_t)f->data, (uint8_t)(f->data >> 8), r->slice)) {
    r->dropping |= 1u << i;
    r->drops++;
  }
  if (!((r->dropping >> i) & 1)) return false;
  drop_credits[i] = (uint8_t)((drop_credits[i] + 1) & CNT_MASK);
  r->drop_pending = (uint16_t)((r->drop_pending + 1) & r->occ_mask);
  if (f->tail) r->dropping &= ~(1u << i);
  return true;
}

/* A flit arriving on input p: dropped with its packet (local inputs), lost to a full buffer
 * (overflow), or written into its VC buffer: at the front if the VC was empty, else behind. */
INLINE void arrive(noc_fast_t *r, unsigned p, const noc_flit_t *f, const unsigned V, const unsigned P) {
  uint32_t meta;
  memcpy(&meta, &f->vc, sizeof meta);
  const unsigned i = (p << VC_SHIFT(V)) | (meta & (V - 1u));
  if (is_local(p) && (r->sliced | r->dropping) && drop_local(r, DROP_CREDITS(r, V, P), i, f)) return;
  ivc_t *const q = &IVC(r, V, P)[i];
  const unsigned count = q->count;
  if (count == r->depth) {
    r->overflow = true;
    return;
  }
  q->count = (uint8_t)(count + 1);
  r->nonempty |= 1u << i;
  if (r->pay) pay_put(r, i, count, p);
  if (!count) {
    q->data = f->data;
    q->flags = (uint16_t)(meta >> 16);
    if ((r->active >> i) & 1) /* the rest of a packet that holds an output VC */
      r->ready |= (uint32_t)(OVC(r, V, P)[q->ovc].credits != 0) << i;
    else if (meta & META_HEAD) request_route(r, i, f->data, V, P); /* a head at the front */
  } else {
    ring_t *const g = &RING(r, V, P)[i];
    unsigned slot = g->rd + count - 1u; /* rd <= 6, count <= 7 */
    if (slot >= RING_SLOTS) slot -= RING_SLOTS;
    const unsigned bit = 1u << slot;
    g->data[slot] = f->data;
    g->heads = (uint8_t)((g->heads & ~bit) | ((meta >> 16) & 1u) << slot);
    g->tails = (uint8_t)((g->tails & ~bit) | ((meta >> 24) & 1u) << slot);
  }
}

/* The edge, in the RTL's order; `va` and `sa` are VC and switch allocation's contended cases,
 * compiled out of line for this (V, P) and sink. */
INLINE void step(noc_fast_t *r, const sink_t *k, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in,
                 const unsigned V, const unsigned P, const int LINKED, void (*va)(noc_fast_t *, unsigned, uint32_t),
                 void (*sa)(noc_fast_t *, const sink_t *, uint32_t, uint32_t, const uint8_t *, const uint8_t *)) {
  if (!LINKED) {
    /* the RTL's out_any: last cycle's outputs are gone (valid bits only) */
    for (uint32_t m = r->out_valid; m; m &= m - 1) OUT(r, V, P)[__builtin_ctz(m)].valid = false;
    r->out_valid = 0;
    r->credit_out = 0;
  }
  if (r->nonempty) { /* busy_before: occupancy != 0 (counts never wrap: at most depth) */
    if (r->asked & r->dirty) vc_allocate(r, V, P, va);
    if (r->ready) switch_allocate(r, k, V, P, LINKED, sa);
  }
  for (uint32_t m = credit_in & (uint32_t)((1ull << (P * V)) - 1); m; m &= m - 1) {
    const unsigned ovc = (unsigned)__builtin_ctz(m);
    ovc_t *const oc = &OVC(r, V, P)[ovc];
    const unsigned credits = (oc->credits + 1u) & CNT_MASK;
    oc->credits = (uint8_t)credits;
    if ((r->ovc_busy >> ovc) & 1) { /* its owner may become ready (or, wrapping to 0, not) */
      const unsigned i = oc->owner;
      r->ready = (r->ready & ~(1u << i)) | (uint32_t)(credits != 0 && ((r->nonempty >> i) & 1)) << i;
    }
  }
  if (r->drop_pending) return_drop_credits(r, k, V, P, LINKED);
  for (unsigned m = in_ports & ((1u << P) - 1); m; m &= m - 1) {
    const unsigned p = (unsigned)__builtin_ctz(m);
    arrive(r, p, &in[p], V, P);
  }
}

/* The contended cases of VC and switch allocation, out of line, one per (V, P) and sink. */
#define CONTENDED(v, p)                                                                                      \
  NOINLINE void va_##v##_##p(noc_fast_t *r, unsigned o, uint32_t free) { va_contended(r, o, free, v, p); } \
  NOINLINE void sa_##v##_##p(noc_fast_t *r, const sink_t *k, uint32_t ready, uint32_t in_req, const uint8_t *in_vc, \
                             const uint8_t *out_of) {                                                      \
    sa_contended(r, k, ready, in_req, in_vc, out_of, v, p, 0);                                             \
  }
CONTENDED(2, 5)
CONTENDED(4, 5)
CONTENDED(2, 8)
CONTENDED(4, 8)

/* The edge compiled for the router's (V, P): 2 or 4 VCs (8 do not fit the 32-bit credit
 * vectors), 5 or 8 ports. A router that holds nothing, shows no output and receives nothing
 * would only clear outputs that are already clear: it returns at once. */
noc_fast_outputs_t noc_fast_step_ports(noc_fast_t *r, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in) {
  if (!(in_ports | credit_in | r->nonempty | r->out_valid | r->credit_out | r->drop_pending))
    return (noc_fast_outputs_t){0, 0};
  switch (r->kind) {
    case 0: step(r, NULL, in, in_ports, credit_in, 2, 5, 0, va_2_5, sa_2_5); break;
    case 1: step(r, NULL, in, in_ports, credit_in, 4, 5, 0, va_4_5, sa_4_5); break;
    case 2: step(r, NULL, in, in_ports, credit_in, 2, 8, 0, va_2_8, sa_2_8); break;
    default: step(r, NULL, in, in_ports, credit_in, 4, 8, 0, va_4_8, sa_4_8); break;
  }
  return (noc_fast_outputs_t){.credits = r->credit_out, .ports = r->out_valid};
}

void noc_fast_link(noc_fast_t *r, unsigned p, uint32_t peer, unsigned peer_port) {
  if (p < 1 || p > 4 || r->ports != NOC_FAST_NET_PORTS) return;
  r->peer[p - 1] = peer;
  r->peer_port[p - 1] = (uint8_t)peer_port;
}

/* The routers' hot lines on links (the header and the body up to the output registers) asked for
 * ahead of use:
 * straight-line prefetches of (constant) line offsets. */
INLINE void prefetch_router(const noc_fast_t *r, const unsigned V, const unsigned P) {
  const char *const p = (const char *)r;
  const unsigned lines = (unsigned)(sizeof *r + OFF_OUT(V, P) + 63) / 64;
#define PREFETCH_LINE(k) \
  if (lines > (k)) __builtin_prefetch(p + 64 * (k))
  PREFETCH_LINE(0);
  PREFETCH_LINE(1);
  PREFETCH_LINE(2);
  PREFETCH_LINE(3);
  PREFETCH_LINE(4);
  PREFETCH_LINE(5);
  PREFETCH_LINE(6);
  PREFETCH_LINE(7);
  PREFETCH_LINE(8);
  PREFETCH_LINE(9);
  PREFETCH_LINE(10);
  PREFETCH_LINE(11);
#undef PREFETCH_LINE
}

/* One router's edge on links, out of line: the network's loop stays small. */
#define STEP_LINKED(v)                                                                                      \
  NOINLINE void step_linked_##v(noc_fast_t *r, const noc_flit_t *in, uint64_t arrive, const sink_t *k) {    \
    step(r, k, in, (unsigned)(arrive >> NOC_FAST_ARRIVE_FLIT), (uint32_t)arrive, v, NOC_FAST_NET_PORTS, 1,    \
         va_##v##_5, NULL);                                                                                 \
  }
STEP_LINKED(2)
STEP_LINKED(4)

INLINE void step_network(noc_fast_t *const *routers, unsigned count, noc_fast_links_t *links, const unsigned V,
                         void (*edge)(noc_fast_t *, const noc_flit_t *, uint64_t, const sink_t *)) {
  enum { P = NOC_FAST_NET_PORTS, AHEAD = 2 };
  const noc_flit_t *const rd_flit = links->rd_flit;
  uint64_t *const rd_arrive = links->rd_arrive;
  uint32_t forwarded = 0;
  for (unsigned n = 0; n < count; n++) {
    if (n + AHEAD < count) prefetch_router(routers[n + AHEAD], V, P);
    noc_fast_t *const r = routers[n];
    const uint64_t arrive = rd_arrive[n];
    if (!arrive && !(r->nonempty | r->drop_pending)) continue; /* nothing to do */
    rd_arrive[n] = 0;
    uint32_t local = 0;
    const sink_t k = {links->wr_flit, links->wr_arrive, &links->local_out[n], &local};
    edge(r, &rd_flit[(size_t)n * P], arrive, &k);
    forwarded |= local;
    if (local & ~SINK_FORWARDED) {
      links->local_events[n] = local & ~SINK_FORWARDED;
      links->local[links->n_local++] = n;
    }
  }
  if (forwarded & SINK_FORWARDED) links->forwarded++;
}

void noc_fast_step_network(noc_fast_t *const *r, unsigned count, noc_fast_links_t *links) {
  if (!count) return;
  if (r[0]->vcs == 2) step_network(r, count, links, 2, step_linked_2);
  else step_network(r, count, links, 4, step_linked_4);
}

void noc_fast_step(noc_fast_t *r, const noc_flit_t *in, uint32_t credit_in) {
  unsigned in_ports = 0;
  for (unsigned p = 0; p < r->ports; p++) in_ports |= (unsigned)in[p].valid << p;
  noc_fast_step_ports(r, in, in_ports, credit_in);
}

void noc_fast_set_slice(noc_fast_t *r, uint32_t slice) {
  if (slice == r->slice) return;
  r->slice = slice;
  set_mesh(r);
  /* the waiting heads ask again, routed in the new slice */
  r->asked = 0;
  WITH_SHAPE(r, {
    memset(REQ(r, V, P), 0, P * sizeof(uint64_t));
    for (uint32_t m = r->nonempty & ~r->active; m; m &= m - 1) {
      const unsigned i = (unsigned)__builtin_ctz(m);
      if (IVC(r, V, P)[i].flags & FRONT_HEAD) request_route(r, i, IVC(r, V, P)[i].data, V, P);
    }
  });
}

/* ------------------------------------------------------------------ outputs and status */

const noc_flit_t *noc_fast_out(const noc_fast_t *r) {
  const noc_flit_t *out = NULL;
  WITH_SHAPE(r, out = OUT(r, V, P));
  return out;
}
unsigned noc_fast_out_ports(const noc_fast_t *r) { return r->out_valid; }
uint32_t noc_fast_credit_out(const noc_fast_t *r) { return r->credit_out; }
bool noc_fast_idle(const noc_fast_t *r) { return !(r->nonempty | r->out_valid | r->credit_out | r->drop_pending); }
unsigned noc_fast_ports(const noc_fast_t *r) { return r->ports; }
/* occupancy_o: the flits held (the sum of the VCs' counts, which the RTL keeps as it goes), low 8 bits. */
unsigned noc_fast_occupancy(const noc_fast_t *r) {
  const ivc_t *ivc = NULL;
  WITH_SHAPE(r, ivc = IVC(r, V, P));
  unsigned held = 0;
  for (uint32_t m = r->nonempty; m; m &= m - 1) held += ivc[__builtin_ctz(m)].count;
  return held & 0xFFu;
}
bool noc_fast_overflow(const noc_fast_t *r) { return r->overflow; }
uint16_t noc_fast_drops(const noc_fast_t *r) { return r->drops; }

unsigned noc_fast_vc_count(const noc_fast_t *r, unsigned port, unsigned vc) {
  const ivc_t *ivc = NULL;
  WITH_SHAPE(r, ivc = IVC(r, V, P));
  return port < r->ports && vc < r->vcs ? ivc[(port << r->vc_shift) | vc].count : 0;
}
