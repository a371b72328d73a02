/*
 * sc_chip: a TPU chip as a SystemC module (issue 16; docs/systemc.md), a thin C++ layer over
 * the C chip (chip/chip.h), whichever model runs it (RTL, fast, or both in lockstep).
 *
 * - A TLM-2.0 target socket, loosely timed: b_transport with an annotated delay, and the
 *   direct-memory interface for HBM. Through it a host reads and writes HBM, writes command
 *   programs into a command window per queue, loads them (PROG_LEN), starts queues, and reads
 *   status, semaphores, counters and the last run's report (sc_map.h has the map). A
 *   transaction the map does not allow gets a TLM error response and a message on stderr
 *   (SC_REPORT_WARNING), never a crash.
 * - Clocked by `clk` (an sc_clock at the chip's frequency): while it runs, the chip takes one
 *   cycle (chip_tick) at every rising edge; when its run ends it raises `irq`.
 * - Four link ports each way (+X -X +Y -Y) for a slice (sc_slice.h); unbound on a lone chip.
 *
 * Runs and clock gating: the chips of a slice share one sc_run_control. A run starts when a
 * chip is started (START); from the next rising edge every chip of the slice is stepped every
 * cycle, until every chip is quiet (no queue running, no unit busy, no flit in its router) and
 * every link empty, exactly when csim/pod/pod.c's pod_run ends; in between runs no chip is
 * clocked (as the C path, which steps chips only inside chip_run and pod_run), so the cycles
 * of a run are the C path's.
 */
#ifndef SC_SC_CHIP_H
#define SC_SC_CHIP_H

#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "sc/sc_link.h"
#include "sc/sc_map.h"

extern "C" {
#include "chip/chip.h"
}

namespace tpu_sc {

class sc_chip;

/* The runs of a set of chips clocked together (a slice, or one chip alone): see above. */
class sc_run_control {
 public:
  explicit sc_run_control(const char *name);
  void add_chip(sc_chip *c) { chips_.push_back(c); }
  void add_link(link *l) { links_.push_back(l); }
  bool active() const { return active_; }
  const sc_core::sc_event &begin_event() const { return begin_; }
  const sc_core::sc_event &end_event() const { return end_; }
  uint64_t tick() const { return tick_; }
  /* A chip asks for a run (its START): the chips are stepped from the next rising edge. */
  void request_run();
  /* Each chip after its step of a cycle; the last one decides whether the run goes on. */
  void stepped();
  /* The last run: its cycles (first step to the end), and whether it failed or timed out. */
  uint64_t last_cycles() const { return last_cycles_; }
  bool last_failed() const { return last_failed_; }
  bool last_timed_out() const { return last_timed_out_; }
  bool draining() const { return state_ == DRAIN; }

 private:
  enum state_t { IDLE, RUN, DRAIN };
  bool quiet() const;
  std::string drops() const;
  void finish(bool abnormal, bool timed_out, const std::string &why);
  void end(const std::string &recovery);
  std::string name_;
  std::vector<sc_chip *> chips_;
  std::vector<link *> links_;
  sc_core::sc_event begin_, end_;
  state_t state_ = IDLE;
  bool active_ = false;
  unsigned stepped_ = 0;
  uint64_t tick_ = 0, run_start_ = 0, drain_start_ = 0, limit_ = 0;
  uint64_t last_cycles_ = 0;
  std::vector<uint32_t> drops0_;
  bool last_failed_ = false, last_timed_out_ = false;
};

class sc_chip : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<sc_chip> socket;
  sc_core::sc_in<bool> clk;
  sc_core::sc_out<bool> irq;
  /* link ports: tx[d] what this chip sends in direction d, rx[d] what arrives from d */
  sc_core::sc_port<link_if, 1, sc_core::SC_ZERO_OR_MORE_BOUND> tx[4], rx[4];

  SC_HAS_PROCESS(sc_chip);
  /* cfg: the C chip's configuration; clock_mhz: its clock (the sc_clock on clk must have this
   * period); ctl: the slice's run control, or NULL for a chip alone. ok() says whether the chip
   * could be built (error() why not). */
  sc_chip(sc_core::sc_module_name name, const chip_config_t &cfg, double clock_mhz, sc_run_control *ctl = nullptr);
  ~sc_chip() override;
  bool ok() const { return chip_ != nullptr; }
  const std::string &error() const { return error_; }
  /* The message of the last transaction refused (empty: none since the last clear). */
  const std::string &last_refusal() const { return refusal_; }
  void clear_refusal() { refusal_.clear(); }
  /* For the slice: START's checks and effect (0, or -1 with *why), and ABORT's. */
  int start_check(uint32_t mask, std::string *why);
  int start(uint32_t mask, std::string *why);
  void abort(uint32_t mask);
  chip_t *c_chip() { return chip_; }
  /* for sc_run_control */
  bool links_bound() const { return linked_; }
  void step();
  bool started() const { return started_; }
  int finish_run(uint64_t tick, bool abnormal, bool timed_out, const std::string &why);
  void raise_done(const std::string &recovery);
  bool awaiting_done() const { return awaiting_; }
  bool failed() const { return failed_; }
  uint64_t cycle_bound() const;
  uint32_t timeout() const { return timeout_; }
  sc_core::sc_time period() const { return period_; }

 private:
  void b_transport(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload &p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload &p, tlm::tlm_dmi &dmi);
  void end_of_elaboration() override;
  void clock_edge();
  void irq_update();
  tlm::tlm_response_status access(tlm::tlm_generic_payload &p, sc_core::sc_time &delay);
  tlm::tlm_response_status hbm(tlm::tlm_generic_payload &p, uint64_t off, sc_core::sc_time &delay);
  tlm::tlm_response_status cmd(tlm::tlm_generic_payload &p, unsigned q, uint64_t off, sc_core::sc_time &delay);
  tlm::tlm_response_status reg(tlm::tlm_generic_payload &p, uint64_t off, sc_core::sc_time &delay);
  tlm::tlm_response_status reg_read(uint32_t off, uint32_t *v);
  tlm::tlm_response_status reg_write(uint32_t off, uint32_t v);
  tlm::tlm_response_status refuse(tlm::tlm_response_status st, const std::string &why);
  bool queue_running(unsigned q);

  chip_t *chip_ = nullptr;
  chip_config_t cfg_;
  chip_geometry_t geo_;
  unsigned queues_ = 0;
  double clock_mhz_;
  sc_core::sc_time period_;
  sc_run_control own_ctl_;
  sc_run_control *ctl_;
  std::string error_, refusal_;
  std::vector<std::vector<uint8_t>> window_;  /* per queue: the command window (the host's staging) */
  bool linked_ = false;
  bool waiting_ = false;     /* the clock method sleeps until a run begins */
  uint32_t pending_ = 0;     /* queues to start at the next rising edge */
  bool started_ = false;     /* begun in the current run */
  uint64_t run_start_ = 0;
  uint32_t slice_ = 0, timeout_ = 0;
  bool awaiting_ = false;    /* started since its last done interrupt */
  bool done_ = false, failed_ = false, timed_out_ = false, irq_pending_ = false;
  uint64_t run_cycles_ = 0;
  uint32_t prog_len_[CHIP_MAX_QUEUES] = {0};
  chip_status_t status_{};
  sc_core::sc_event irq_ev_;
};

}  // namespace tpu_sc

#endif
