/*
 * pod_link: the links between the chips of a torus, the one link model the C pod (pod.c) and
 * the SystemC slice (csim/sc/sc_link.h) share. Chip i's link in direction d (+X -X +Y -Y) is a
 * delay line of `depth` slots: what the chip's router port sends at cycle t (a flit, a wide
 * flit's other words, that direction's credit bits) goes into slot t mod depth and its
 * neighbour takes it from there at t + latency + 1 (depth >= latency + 2, so a cycle's reads and
 * writes never meet and the chips can be visited in any order; a slot is emptied when read).
 * With a link rate (link_bytes below a flit's 8 x flit_words bytes) a serialiser sits ahead of
 * the delay line: a token bucket filled by link_bytes a cycle lets a flit through when it holds
 * a flit's bytes (docs/timing.md); credits are not held back.
 *
 * The slots of one cycle position are kept together for every link (a plane of n x 4), so a
 * pod's cycle stays within one plane however many chips there are. The struct is open and the
 * per-cycle calls are inline because the pod's innermost loop makes them for every chip it
 * steps; only pod_link_new, pod_link_free and pod_link_clear are functions.
 */
#ifndef POD_POD_LINK_H
#define POD_POD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chip/chip.h"

#define POD_LINK_DIRS 4u /* +X, -X, +Y, -Y: the chip's net port index (torus_dir_t) */

typedef struct {
  noc_flit_t flit;
  uint8_t credits; /* the credit bits of this direction (CHIP_ROUTER_VCS) */
} pod_link_slot_t;

/* A link's serialiser: the flits its sender has put out and the link has not yet taken, and
 * the bucket's bytes. At most the receiver's buffers' worth of flits wait (the sender's credits
 * bound them; POD_LINK_SER_CAP is twice what they allow). */
#define POD_LINK_SER_CAP 32u
typedef struct {
  noc_flit_t flit[POD_LINK_SER_CAP];
  noc_wide_t *hi; /* [POD_LINK_SER_CAP] with wide flits */
  uint32_t head, count, tokens;
  uint64_t last; /* the tick the bucket was last filled for */
} pod_link_ser_t;

typedef struct {
  unsigned n, depth, latency;   /* chips; slots per link; cycles each way beyond the one a hop takes */
  uint32_t link_bytes;          /* bytes a cycle (0: a flit a cycle) */
  uint32_t flit_bytes;          /* a flit's bytes (the bucket's price of a flit) */
  pod_link_slot_t *slots;       /* depth x n x DIRS: at (position, chip, direction) what the chip sends that way */
  noc_wide_t *slot_hi;          /* the same for wide flits' other words (NULL with 64-bit flits) */
  pod_link_ser_t *ser;          /* n x DIRS serialisers (NULL: a link carries a flit a cycle) */
} pod_link_t;

/* 0 when a link can carry link_bytes bytes a cycle with flits of flit_words words (0: a flit a
 * cycle; at most a flit's 8 x flit_words), else -1 with a message. */
int pod_link_check(unsigned flit_words, unsigned link_bytes, char *err, size_t errlen);

/* The links of n chips, empty, their buckets full: depth slots each (at least latency + 2),
 * flits of flit_words words (0 or 1: 64-bit), link_bytes as pod_config_t has it. NULL when out
 * of memory. */
pod_link_t *pod_link_new(unsigned n, unsigned latency, unsigned depth, unsigned flit_words, unsigned link_bytes);
void pod_link_free(pod_link_t *l);
/* Empties chip i's link d (every link: i == n), its bucket full from tick t on. */
void pod_link_clear(pod_link_t *l, unsigned i, unsigned d, uint64_t t);

/* The slot positions tick t writes and reads. */
static inline unsigned pod_link_write_pos(const pod_link_t *l, uint64_t t) { return (unsigned)(t % l->depth); }
static inline unsigned pod_link_read_pos(const pod_link_t *l, uint64_t t) {
  return (unsigned)((t + l->depth - (l->latency + 1)) % l->depth);
}

/* The slot at position pos of chip i's link d, and its wide words. */
static inline pod_link_slot_t *pod_link_slot(const pod_link_t *l, unsigned pos, unsigned i, unsigned d) {
  return &l->slots[((size_t)pos * l->n + i) * POD_LINK_DIRS + d];
}
static inline noc_wide_t *pod_link_slot_hi(const pod_link_t *l, unsigned pos, unsigned i, unsigned d) {
  return &l->slot_hi[((size_t)pos * l->n + i) * POD_LINK_DIRS + d];
}

/* What chip i's link d delivers at read position rd goes into the receiver's input port `at`
 * (in->flit[at], in->hi[at], credit bits at * CHIP_ROUTER_VCS on; the other credit bits are
 * kept), and the slot is emptied. 1 when the slot held something, else 0. */
static inline unsigned pod_link_take(pod_link_t *l, unsigned rd, unsigned i, unsigned d, chip_net_t *in, unsigned at) {
  pod_link_slot_t *s = pod_link_slot(l, rd, i, d);
  in->flit[at] = s->flit;
  if (l->slot_hi && s->flit.valid) in->hi[at] = *pod_link_slot_hi(l, rd, i, d);
  in->credits = (uint8_t)(in->credits | s->credits << (at * CHIP_ROUTER_VCS));
  if (!s->flit.valid && !s->credits) return 0;
  memset(s, 0, sizeof *s);
  return 1;
}

/* Chip i's link d at tick t: the bucket gains link_bytes a tick since it was last filled, the
 * chip's new flit (out->flit[d]) joins the queue, and the flit at the queue's front leaves when
 * the bucket holds a flit's bytes, which it spends. out->flit[d] (and its words) becomes what
 * the link takes this tick (not valid: nothing). True while flits wait. */
static inline bool pod_link_serialise(pod_link_t *l, unsigned i, unsigned d, uint64_t t, chip_net_t *out) {
  pod_link_ser_t *z = &l->ser[(size_t)i * POD_LINK_DIRS + d];
  /* an idle link's bucket holds at most a flit (a flit starts at once, no burst after); a busy
   * one keeps what a flit did not use, so the flits leave at link_bytes a tick on average */
  const uint64_t filled = (uint64_t)z->tokens + (t - z->last) * l->link_bytes;
  z->tokens = !z->count && filled > l->flit_bytes ? l->flit_bytes : (uint32_t)filled;
  z->last = t;
  if (out->flit[d].valid) {
    const uint32_t at = (z->head + z->count) % POD_LINK_SER_CAP;
    z->flit[at] = out->flit[d];
    if (z->hi) z->hi[at] = out->hi[d];
    z->count++;
  }
  out->flit[d].valid = false;
  if (z->count && z->tokens >= l->flit_bytes) {
    out->flit[d] = z->flit[z->head];
    if (z->hi) out->hi[d] = z->hi[z->head];
    z->head = (z->head + 1) % POD_LINK_SER_CAP;
    z->count--;
    z->tokens -= l->flit_bytes;
  }
  return z->count != 0;
}

/* Chip i sends on its link d at tick t (write position wr) what out->flit[d] and out->hi[d]
 * hold, through the serialiser when the link has a rate, with the credit bits cr. *held |= flits
 * still wait in the serialiser (the chip's link is busy). 1 when a slot was written, else 0. */
static inline unsigned pod_link_put(pod_link_t *l, uint64_t t, unsigned wr, unsigned i, unsigned d, chip_net_t *out,
                                    uint8_t cr, bool *held) {
  if (l->ser) *held |= pod_link_serialise(l, i, d, t, out);
  if (!out->flit[d].valid && !cr) return 0;
  pod_link_slot_t *s = pod_link_slot(l, wr, i, d);
  s->flit = out->flit[d];
  s->credits = cr;
  if (l->slot_hi && out->flit[d].valid) *pod_link_slot_hi(l, wr, i, d) = out->hi[d];
  return 1;
}

/* Flits waiting in chip i's link d's serialiser (0 on a link without a rate). */
static inline unsigned pod_link_queued(const pod_link_t *l, unsigned i, unsigned d) {
  return l->ser ? l->ser[(size_t)i * POD_LINK_DIRS + d].count : 0;
}

#endif
