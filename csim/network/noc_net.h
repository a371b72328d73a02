/*
 * noc_net: an X x Y torus of routers wired in C (links as rings of cycle slots, noc_net.c), with a network
 * interface per node and a scoreboard. The routers are the Verilated RTL (noc_router.h), the
 * fast C model of the same router (fast/noc_fast.h), or both in lockstep (model, below).
 *
 * Network interface (NI): each node has an unbounded source queue; the NI injects one flit
 * per cycle into the router's local port, one packet at a time on a VC with credits, and
 * ejects every flit the router delivers (ejection never backs up). The scoreboard checks
 * every ejected flit: right node, payload intact, flits of a packet in order, each packet
 * exactly once. Packets between the same pair may overtake each other on different VCs.
 *
 * Packet format (docs/noc.md): head flit data = dst_x[7:0] | dst_y[15:8] | flits[23:16] |
 * 0[31:24] | packet id[63:32]; every other flit carries noc_payload(id, index).
 */
#ifndef NOC_NET_H
#define NOC_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/model.h"

typedef struct {
  unsigned size_x, size_y;   /* 2..255 each (8-bit coordinates) */
  unsigned vcs;              /* a VC count built into this binary (noc_router.h) */
  unsigned buf_depth;        /* flits per VC buffer, 1..NOC_MAX_DEPTH */
  unsigned link_latency;     /* extra cycles per link, each way (0 = a wire) */
  uint64_t seed;             /* reset randomisation */
  /* Which router model runs at each node: CHIP_MODEL_RTL (0) unless set, the Verilated
   * rtl/noc_router.sv; CHIP_MODEL_FAST, csim/fast/noc_fast.c only (no Verilated router is built;
   * a router that holds nothing and receives nothing is not stepped); CHIP_MODEL_CHECK, both at
   * every node, the same inputs, every output compared every cycle, the RTL's outputs driving
   * the network, the first difference stopping it (noc_router_ops.h). */
  chip_model_t model;
} noc_config_t;

typedef struct {
  uint64_t created;    /* cycle the packet entered its source queue */
  uint64_t delivered;  /* cycle its tail was ejected; UINT64_MAX until then */
  uint32_t src, dst;   /* node = y * size_x + x */
  uint16_t flits;
  uint16_t received;   /* flits ejected so far */
  bool measured;       /* created in the measurement window */
} noc_packet_t;

typedef struct {
  uint64_t injected_flits, ejected_flits, delivered_packets;
  uint64_t duplicated, corrupted, misrouted;
} noc_scoreboard_t;

typedef struct noc_net noc_net_t;

/* Returns the network, or NULL with a message (bad size, VC count not built, memory). */
noc_net_t *noc_net_new(const noc_config_t *cfg, char *err, size_t errlen);
void noc_net_free(noc_net_t *net);

/* Queues a packet of `flits` (1..255) flits from src to dst at the current cycle; returns
 * its id (an index into noc_net_packet), or UINT32_MAX when out of memory. */
uint32_t noc_net_send(noc_net_t *net, uint32_t src, uint32_t dst, unsigned flits, bool measured);

/* Runs one cycle of the whole network; nothing once a lockstep check has diverged. */
void noc_net_step(noc_net_t *net);

/* CHIP_MODEL_CHECK: NULL while the two models agree, else the report of the first difference:
 * the cycle (noc_net_cycle when the edge that produced it ran), the router (x,y), the output
 * port and VC or the credit bit, the signal that differs and both values. */
const char *noc_net_divergence(const noc_net_t *net);

uint64_t noc_net_cycle(const noc_net_t *net);
unsigned noc_net_nodes(const noc_net_t *net);
const noc_config_t *noc_net_config(const noc_net_t *net);
const noc_packet_t *noc_net_packet(const noc_net_t *net, uint32_t id);
uint32_t noc_net_packet_count(const noc_net_t *net);
const noc_scoreboard_t *noc_net_scoreboard(const noc_net_t *net);
/* Packets created and not yet delivered (in source queues or in the network). */
uint64_t noc_net_in_flight(const noc_net_t *net);
/* Packets waiting in node n's source queue (not yet started by its NI). */
size_t noc_net_backlog(const noc_net_t *net, uint32_t node);
/* Measured packets (noc_net_send(..., measured = true)) not yet delivered. */
uint64_t noc_net_measured_in_flight(const noc_net_t *net);
/* Cycles since any flit was injected, moved out of a router, or ejected. */
uint64_t noc_net_quiet_cycles(const noc_net_t *net);
/* Flits held in router buffers, on links, and in NI source queues or injections. */
uint64_t noc_net_flits_held(noc_net_t *net);
/* Any router flagged a VC buffer overflow (a flow-control bug). */
bool noc_net_overflow(const noc_net_t *net);

/* Writes where flits are stuck (router coordinates, input port, VC, flits held) into buf. */
void noc_net_describe_stuck(noc_net_t *net, char *buf, size_t len);

/* Traces one router (node index) into an FST file: the RTL router (with CHIP_MODEL_CHECK, the RTL
 * one of the pair). Returns 0, or -1 with a message (always with CHIP_MODEL_FAST: a fast model
 * has no waveform). */
int noc_net_trace(noc_net_t *net, uint32_t node, const char *path, char *err, size_t errlen);

/* Body-flit payload of packet `id`, flit `index` (index >= 1). */
uint64_t noc_payload(uint32_t id, unsigned index);

#endif
