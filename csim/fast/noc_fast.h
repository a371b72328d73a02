/*
 * noc_fast: the torus router at host speed (issue 13; docs/scale.md). It mirrors
 * rtl/noc_router.sv cycle for cycle: the same input VC buffers, dimension-order routing in
 * the slice, dateline VC classes, round-robin VC and switch allocation (with the same
 * pointers, so contending packets win in the same order), credits, slice drops and their
 * credit return, and the same registered outputs, so every flit and credit leaves on the same
 * port, VC and cycle as from the Verilated router. It shares no code with the Verilated path;
 * tests/test_noc_fast.c and `tpusim net --model check` hold it to the RTL in lockstep.
 *
 * Ports are numbered as in the RTL: 0 local, 1..4 +X -X +Y -Y, then 5.. the other local
 * ports (num_local = 4: the chip's remote-DMA engines). A router with nothing buffered and
 * nothing arriving costs a few instructions a cycle (noc_fast_idle).
 */
#ifndef FAST_NOC_FAST_H
#define FAST_NOC_FAST_H

#include <stdbool.h>
#include <stdint.h>

#define NOC_FAST_MAX_PORTS 8
#define NOC_FAST_MAX_VCS 8
#define NOC_FAST_MAX_DEPTH 8

/* Words a flit can carry: 64-bit flits (the RTL's) or up to 1024 bits (fast model only;
 * noc_fast_config_t.flit_words, docs/fidelity.md "ICI"). */
#define NOC_FLIT_MAX_WORDS 16

/* A flit on a port: what the RTL packs as {valid, head, tail, vc, data}. */
typedef struct {
  uint64_t data;
  uint8_t vc;
  bool valid, head, tail;
} noc_flit_t;

/* A wide flit's words beyond the first (fast model only): carried beside its noc_flit_t, where
 * the flits are wide, so that 64-bit flits stay 16 bytes everywhere. */
typedef struct {
  uint64_t w[NOC_FLIT_MAX_WORDS - 1];
} noc_wide_t;

typedef struct {
  unsigned vcs;                /* a power of two, 2..NOC_FAST_MAX_VCS */
  unsigned num_local;          /* 1 or 4 */
  unsigned x, y, size_x, size_y;
  unsigned buf_depth;          /* 1..NOC_FAST_MAX_DEPTH: the credits each output VC starts with (sampled at reset) */
  unsigned flit_words;         /* 64-bit words a flit carries, 1..NOC_FLIT_MAX_WORDS (0 means 1); the
                                  router reads only the first (a head's destination) */
} noc_fast_config_t;

typedef struct noc_fast noc_fast_t;

/* NULL with a message on a bad configuration or without memory. The router starts as after reset. */
noc_fast_t *noc_fast_new(const noc_fast_config_t *cfg, char *err, unsigned long errlen);
void noc_fast_free(noc_fast_t *r);
/* The state reset gives (rst_ni low): buffers empty, credits = buf_depth, pointers zero, no
 * output, counters cleared. */
void noc_fast_reset(noc_fast_t *r);
/* The slice input (slice_i = {h, w, y0, x0}, w = 0: the whole pod); may change at any time. */
void noc_fast_set_slice(noc_fast_t *r, uint32_t slice);

/* A router of wide flits (flit_words > 1): the words beyond the first of the flits arriving at
 * its next edge (in_hi[p] for input p; the array lives until that edge), and of the flits on its
 * outputs after it (NULL for a router of 64-bit flits). Only with noc_fast_step_ports. */
void noc_fast_wide_in(noc_fast_t *r, const noc_wide_t *in_hi);
const noc_wide_t *noc_fast_out_wide(const noc_fast_t *r);

/* One rising clock edge. in[p] is the flit arriving on input p (num ports entries);
 * credit_in bit p*vcs+v returns a credit for output p, VC v. Afterwards noc_fast_out and
 * noc_fast_credit_out hold the registered outputs of the cycle that follows the edge. */
void noc_fast_step(noc_fast_t *r, const noc_flit_t *in, uint32_t credit_in);
/* noc_fast_step for a caller that knows which inputs carry a flit: bit p of in_ports set for
 * each valid in[p] (others are not read). The same edge, without looking at idle ports.
 * Returns the outputs' summary: noc_fast_out_ports and noc_fast_credit_out. */
typedef struct {
  uint32_t credits; /* noc_fast_credit_out */
  uint32_t ports;   /* noc_fast_out_ports */
} noc_fast_outputs_t;
noc_fast_outputs_t noc_fast_step_ports(noc_fast_t *r, const noc_flit_t *in, unsigned in_ports, uint32_t credit_in);

/* ------------------------------------------------------------------ a network of routers
 *
 * noc_fast_step_network runs one clock edge of many routers (one local port each) joined by links,
 * with the same decisions as noc_fast_step, but each router's outputs go straight onto its links
 * instead of into its output registers (noc_fast_out, noc_fast_credit_out and
 * noc_fast_out_ports are not kept for a router stepped this way), and a router with nothing to do
 * is passed over. The links are cycle slots the caller keeps (docs/noc.md): this cycle's `rd`,
 * read and cleared, and `wr`, the slot the links deliver into (L + 1 cycles later). */

/* Router r's network port p (1..4) leads to router `peer`'s port `peer_port`: a flit leaving on p
 * arrives on the peer's input peer_port, and a credit for r's input p returns to the peer's output
 * peer_port. Only for routers with one local port. */
void noc_fast_link(noc_fast_t *r, unsigned p, uint32_t peer, unsigned peer_port);

#define NOC_FAST_NET_PORTS 5 /* the slots' flits per router: local port 0 and the four links */
#define NOC_FAST_ARRIVE_FLIT 32 /* in an arrival word, bit 32 + p: a flit on input p */

typedef struct {
  const noc_flit_t *rd_flit; /* [n * NOC_FAST_NET_PORTS + p]: the flit arriving on router n's input p */
  uint64_t *rd_arrive;       /* [n]: credit_in (bits 0..31) and the inputs with a flit
                                (NOC_FAST_ARRIVE_FLIT + p) of router n this cycle; zeroed as read */
  noc_flit_t *wr_flit;       /* the slot written for the neighbours, laid out as rd_flit */
  uint64_t *wr_arrive;       /* ORed into */
  noc_flit_t *local_out;     /* [n]: router n's local output flit, when local_events[n] says so */
  uint32_t *local_events;    /* [n]: NOC_FAST_LOCAL_FLIT, and bit NOC_FAST_LOCAL_CREDIT + v: a
                                credit for local input VC v; written for the routers in `local` */
  uint32_t *local;           /* the routers with local events this cycle, in order ... */
  unsigned n_local;          /* ... and their count (the caller zeroes it) */
  unsigned forwarded;        /* made nonzero when a flit is sent on a link */
} noc_fast_links_t;
#define NOC_FAST_LOCAL_FLIT 1u
#define NOC_FAST_LOCAL_CREDIT 8u

/* One edge of routers r[0..count - 1], router n reading slot index n. Every router must have one
 * local port and its four links set (noc_fast_link). */
void noc_fast_step_network(noc_fast_t *const *r, unsigned count, noc_fast_links_t *links);
/* The router's outputs: flit of output p at [p] (the pointer stays the same for the router's
 * life); credit_out bit p*vcs+v: a credit for input p, VC v. */
const noc_flit_t *noc_fast_out(const noc_fast_t *r);
uint32_t noc_fast_credit_out(const noc_fast_t *r);
/* Bit p: output p holds a valid flit (the valid bits of noc_fast_out, as a mask). */
unsigned noc_fast_out_ports(const noc_fast_t *r);

/* Nothing buffered, no output or credit registered, no dropped-flit credit to return: an edge
 * with no flit and no credit arriving changes nothing but clears outputs that are already clear. */
bool noc_fast_idle(const noc_fast_t *r);
unsigned noc_fast_ports(const noc_fast_t *r);
unsigned noc_fast_occupancy(const noc_fast_t *r);   /* flits held (occupancy_o) */
bool noc_fast_overflow(const noc_fast_t *r);        /* sticky: a flit hit a full VC (overflow_o) */
uint16_t noc_fast_drops(const noc_fast_t *r);       /* packets dropped at the slice boundary (drops_o) */
unsigned noc_fast_vc_count(const noc_fast_t *r, unsigned port, unsigned vc); /* flits held by one input VC (dbg_count_o) */

#endif
