/*
 * torus: the geometry of an X x Y torus of nodes (chips, or routers alone): node n is
 * (x, y) = (n % X, n / X); the four link directions +X -X +Y -Y; each node's neighbour in
 * a direction, with wraparound. The pod (pod.c) and the router network (noc_net.c) wire
 * their links by it; a direction is also the index of a chip's network port.
 */
#ifndef NETWORK_TORUS_H
#define NETWORK_TORUS_H

typedef enum { TORUS_XPOS, TORUS_XNEG, TORUS_YPOS, TORUS_YNEG, TORUS_DIRS } torus_dir_t;

/* The node next to `node` in direction d on a size_x x size_y torus. */
unsigned torus_neighbour(unsigned size_x, unsigned size_y, unsigned node, torus_dir_t d);

/* The direction back: a link leaving in d arrives from torus_opposite(d). */
static inline torus_dir_t torus_opposite(torus_dir_t d) { return (torus_dir_t)(d ^ 1u); }

#endif
