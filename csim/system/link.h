/*
 * link: the model of a point-to-point link between two routers (and, later, between
 * chips): a delay line that delivers what was sent at cycle t at cycle t + 1 + latency,
 * in order, one fixed-size slot per cycle. Latency 0 is a plain register-to-register wire
 * (the receiver's input stage samples the sender's output register on the next edge).
 * Flits and returning credits each use a link of the same latency.
 */
#ifndef LINK_H
#define LINK_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  unsigned depth;     /* latency + 1 slots */
  unsigned pos;       /* slot of the current cycle */
  size_t slot_bytes;
  uint8_t *slots;
} link_t;

/* Returns 0, or -1 when out of memory. Slots start empty (all zero bytes). */
int link_init(link_t *l, unsigned latency, size_t slot_bytes);
void link_free(link_t *l);

/* The slot due at the receiver this cycle (sent latency + 1 cycles ago). Read it, then
 * overwrite it with what the sender sends this cycle (link_send_slot), then link_advance. */
static inline uint8_t *link_slot(link_t *l) { return l->slots + (size_t)l->pos * l->slot_bytes; }
static inline void link_advance(link_t *l) { l->pos = (l->pos + 1 == l->depth) ? 0 : l->pos + 1; }

#endif
