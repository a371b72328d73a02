/*
 * sc_link: one direction of a link between two chips of a SystemC slice (docs/systemc.md,
 * "The slice"): a channel carrying, per clock cycle, what a chip's router port sends (a flit
 * and the credit bits of that direction), delivered `latency` + 1 cycles later, as the C pod's
 * links do (csim/pod/pod.c: a ring of latency + 2 slots, written at the sender's cycle t and
 * read at the receiver's cycle t + latency + 1). The chips of a slice are clocked together, so
 * the slot written and the slot read in a cycle differ and the order in which SystemC runs
 * the chips' processes cannot change what they see.
 */
#ifndef SC_SC_LINK_H
#define SC_SC_LINK_H

#include <systemc>
#include <vector>

extern "C" {
#include "fast/noc_fast.h"
}

namespace tpu_sc {

/* (64-bit flits: the SystemC slice does not carry the fast model's wide flits, chip_config_t's
 * flit_words; its chips are built with the default, 1) */
struct link_slot {
  noc_flit_t flit;
  uint8_t credits;  /* this direction's credit bits, one per VC */
};

/* What a chip's link ports see: the sender puts at its cycle, the receiver takes at its own. */
class link_if : public virtual sc_core::sc_interface {
 public:
  virtual void put(uint64_t cycle, const link_slot &s) = 0;
  virtual link_slot take(uint64_t cycle) = 0;
  virtual unsigned in_flight() const = 0;  /* slots holding a flit or credits */
  virtual void clear() = 0;                /* empties the link (the slice was reset) */
};

class link : public sc_core::sc_prim_channel, public link_if {
 public:
  link(const char *name, unsigned latency)
      : sc_core::sc_prim_channel(name), latency_(latency), ring_(latency + 2), in_flight_(0) {}
  void put(uint64_t cycle, const link_slot &s) override {
    link_slot &d = ring_[cycle % ring_.size()];
    if (!full(d) && full(s)) in_flight_++;
    d = s;
  }
  link_slot take(uint64_t cycle) override {
    link_slot &d = ring_[(cycle + ring_.size() - (latency_ + 1) % ring_.size()) % ring_.size()];
    const link_slot s = d;
    if (full(d)) in_flight_--;
    d = link_slot{};
    return s;
  }
  unsigned in_flight() const override { return in_flight_; }
  void clear() override {
    for (auto &s : ring_) s = link_slot{};
    in_flight_ = 0;
  }
  unsigned latency() const { return latency_; }

 private:
  static bool full(const link_slot &s) { return s.flit.valid || s.credits; }
  unsigned latency_;
  std::vector<link_slot> ring_;
  unsigned in_flight_;
};

}  // namespace tpu_sc

#endif
