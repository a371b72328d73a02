/*
 * sc_link: one direction of a link between two chips of a SystemC slice (docs/systemc.md,
 * "The slice"), a SystemC channel over the C pod's link model (pod/pod_link.h): the slice's
 * links are one pod_link_t, and link (i, d) is chip i's delay line in direction d, with its
 * latency, its link rate (a serialiser when link_bytes is below a flit's bytes) and wide flits,
 * exactly as pod.c's links carry them. A chip puts what its router port sends at its cycle t;
 * the neighbour takes it at t + latency + 1. The chips of a slice are clocked together, so the
 * slot written and the slot read in a cycle differ and the order in which SystemC runs the
 * chips' processes cannot change what they see.
 */
#ifndef SC_SC_LINK_H
#define SC_SC_LINK_H

#include <systemc>

extern "C" {
#include "pod/pod_link.h"
}

namespace tpu_sc {

/* What a chip's link ports see: the sender puts at its cycle, the receiver takes at its own. */
class link_if : public virtual sc_core::sc_interface {
 public:
  /* out->flit[d] (and out->hi[d]) of the link's direction d and the credit bits cr, sent at
   * `cycle`; the serialiser may hold the flit back (out->flit[d] then says what the link took) */
  virtual void put(uint64_t cycle, chip_net_t *out, uint8_t cr) = 0;
  /* what arrives at `cycle` into in's input port `at` (its credit bits or'ed in) */
  virtual void take(uint64_t cycle, chip_net_t *in, unsigned at) = 0;
  virtual unsigned in_flight() const = 0;  /* slots holding a flit or credits, and flits held back */
  virtual void clear(uint64_t cycle) = 0;  /* empties the link (the slice was reset) */
};

class link : public sc_core::sc_prim_channel, public link_if {
 public:
  /* chip i's link in direction d of the slice's links l (not owned) */
  link(const char *name, pod_link_t *l, unsigned i, unsigned d)
      : sc_core::sc_prim_channel(name), l_(l), chip_(i), dir_(d) {}
  void put(uint64_t cycle, chip_net_t *out, uint8_t cr) override {
    /* nothing to send and nothing held back: the link is left alone (a bucket that is not used
     * fills the same whether it is looked at every cycle or later, as pod.c's sleeping chips) */
    if (!out->flit[dir_].valid && !cr && !pod_link_queued(l_, chip_, dir_)) return;
    bool held = false;  /* (in_flight counts what is held: pod_link_queued) */
    in_flight_ += pod_link_put(l_, cycle, pod_link_write_pos(l_, cycle), chip_, dir_, out, cr, &held);
  }
  void take(uint64_t cycle, chip_net_t *in, unsigned at) override {
    if (!in_flight_) {  /* no slot holds anything: what an empty slot gives */
      in->flit[at] = noc_flit_t{};
      return;
    }
    in_flight_ -= pod_link_take(l_, pod_link_read_pos(l_, cycle), chip_, dir_, in, at);
  }
  unsigned in_flight() const override { return in_flight_ + pod_link_queued(l_, chip_, dir_); }
  void clear(uint64_t cycle) override {
    pod_link_clear(l_, chip_, dir_, cycle);
    in_flight_ = 0;
  }

 private:
  pod_link_t *l_;
  unsigned chip_, dir_;
  unsigned in_flight_ = 0;
};

}  // namespace tpu_sc

#endif
