/*
 * noc_router: the Verilated models of rtl/noc_router.sv, one per VC count built into this
 * binary (NOC_VCS in the Makefile), and the flit layout on their ports. Driven through
 * vmodel.h; csim/network/noc_net.h wires X x Y of them into a torus.
 *
 * Ports: clk_i rst_ni my_x_i my_y_i size_x_i size_y_i buf_depth_i; in_flit_i and
 * out_flit_o (5 flits of NOC_FLIT_BITS(vcs), port p at bit p*NOC_FLIT_BITS); credit_in_i
 * and credit_out_o (5*vcs bits, port p VC v at bit p*vcs+v); overflow_o occupancy_o;
 * dbg_vc_i (port*vcs + vc) -> dbg_count_o (flits held by that input VC).
 */
#ifndef NOC_ROUTER_H
#define NOC_ROUTER_H

#include <stdint.h>

#include "vmodel/vmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NOC_PORTS 5
#define NOC_PORT_LOCAL 0
#define NOC_PORT_XPOS 1
#define NOC_PORT_XNEG 2
#define NOC_PORT_YPOS 3
#define NOC_PORT_YNEG 4
#define NOC_DATA_BITS 64
#define NOC_MAX_DEPTH 8
/* bits of a flit on a port: data, vc, tail, head, valid (valid is the top bit) */
#define NOC_VC_BITS(vcs) ((vcs) <= 2 ? 1u : (vcs) <= 4 ? 2u : 3u)
#define NOC_FLIT_BITS(vcs) (NOC_DATA_BITS + NOC_VC_BITS(vcs) + 3u)

/* Builds a router with `vcs` VCs, reset values randomised from seed; NULL if that VC count
 * is not built into this binary. */
vmodel_t *noc_router_new(unsigned vcs, uint64_t seed);
/* 1 when a router with `vcs` VCs is built, else 0. */
int noc_router_available(unsigned vcs);
/* The VC counts built, as "2 4" for messages. */
const char *noc_router_vcs_list(void);

#ifdef __cplusplus
}
#endif

#endif
