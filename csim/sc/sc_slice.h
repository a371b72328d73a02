/*
 * sc_slice: a W x H slice of TPU chips as a SystemC module (issue 16; docs/systemc.md, "The
 * slice"): W x H sc_chip modules wired as a 2-D torus (wraparound in both dimensions, as the
 * C pod, csim/pod/pod.h) through sc_link channels over the pod's link model (pod/pod_link.h:
 * its latency, link rate and flit width), bound to the chips' link ports; one run control, so
 * the chips are clocked together and a run ends when
 * every chip is quiet and every link empty, the cycle pod_run ends.
 *
 * One TLM-2.0 target socket: chip (x, y)'s map (sc_map.h) in its window at
 * (y * W + x) * CHIP_WINDOW, forwarded to the chip's socket with the address made the chip's
 * (DMI too), and the slice's registers at SLICE_REG_BASE: a START that starts every chip at
 * the same rising edge (pod_run's start), the slice's status, done interrupt (`irq`) and the
 * last run's cycles.
 */
#ifndef SC_SC_SLICE_H
#define SC_SC_SLICE_H

#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sc/sc_chip.h"
#include "sc/sc_link.h"

extern "C" {
#include "pod/pod.h"
}

namespace tpu_sc {

class sc_slice : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<sc_slice> socket;
  sc_core::sc_in<bool> clk;
  sc_core::sc_out<bool> irq;

  SC_HAS_PROCESS(sc_slice);
  /* machine: the slice's size (size_x x size_y), its links (link_latency, link_bytes) and every
   * chip's configuration (position and reset seed are filled in per chip as pod_new does; the
   * flits are machine.chip.flit_words wide); ok() says whether every chip could be built. */
  sc_slice(sc_core::sc_module_name name, const pod_config_t &machine, double clock_mhz);
  ~sc_slice() override;
  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  sc_chip &chip(unsigned x, unsigned y) { return *chips_[y * w_ + x]; }
  const std::string &last_refusal() const { return refusal_; }

 private:
  void b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload &p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload &p, tlm::tlm_dmi &dmi);
  void invalidate(int chip, sc_dt::uint64 start, sc_dt::uint64 end);
  tlm::tlm_response_status regs(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
  tlm::tlm_response_status refuse(tlm::tlm_response_status st, const std::string &why);
  void on_end();

  unsigned w_, h_, latency_;
  sc_run_control ctl_;
  std::vector<std::unique_ptr<sc_chip>> chips_;
  pod_link_t *link_ = nullptr;  /* every chip's links, the pod's model; links_ are channels over it */
  std::vector<std::unique_ptr<link>> links_;
  std::vector<std::unique_ptr<sc_core::sc_signal<bool>>> chip_irq_;
  std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket_tagged<sc_slice>>> to_chip_;
  std::string error_, refusal_;
  bool started_ = false, done_ = false, irq_pending_ = false;
  sc_core::sc_event irq_ev_;
  void irq_update() { irq.write(irq_pending_); }
};

}  // namespace tpu_sc

#endif
