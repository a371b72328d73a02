/* sc_slice: see sc_slice.h. */
#include "sc/sc_slice.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>

extern "C" {
#include "network/torus.h"
}

namespace tpu_sc {

using sc_core::sc_time;
using tlm::tlm_generic_payload;
using tlm::tlm_response_status;

sc_slice::sc_slice(sc_core::sc_module_name name, const pod_config_t &machine, double clock_mhz)
    : sc_core::sc_module(name), socket("socket"), clk("clk"), irq("irq"), w_(machine.size_x), h_(machine.size_y),
      latency_(machine.link_latency), ctl_((std::string(this->name()) + "_run").c_str()) {
  const unsigned w = w_, h = h_;
  const chip_config_t &chip = machine.chip;
  socket.register_b_transport(this, &sc_slice::b_transport);
  socket.register_transport_dbg(this, &sc_slice::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &sc_slice::get_direct_mem_ptr);
  const unsigned n = w * h;
  for (unsigned i = 0; i < n; i++) {  /* as pod_new configures its chips */
    chip_config_t c = chip;
    c.x = i % w, c.y = i / w, c.pod_x = w, c.pod_y = h;
    c.seed = chip.seed * 1000003u + i;
    const std::string cn = "chip_" + std::to_string(c.x) + "_" + std::to_string(c.y);
    chips_.emplace_back(new sc_chip(cn.c_str(), c, clock_mhz, &ctl_));
    if (!chips_.back()->ok() && error_.empty()) error_ = cn + ": " + chips_.back()->error();
    chips_.back()->clk(clk);
    chip_irq_.emplace_back(new sc_core::sc_signal<bool>((cn + "_irq").c_str()));
    chips_.back()->irq(*chip_irq_.back());
    to_chip_.emplace_back(new tlm_utils::simple_initiator_socket_tagged<sc_slice>(("to_" + cn).c_str()));
    to_chip_.back()->register_invalidate_direct_mem_ptr(this, &sc_slice::invalidate, (int)i);
    to_chip_.back()->bind(chips_.back()->socket);
  }
  /* link (i, d): what chip i sends in direction d, arriving at its neighbour from the opposite side;
   * a ring of latency + 2 slots each, as a pod run by one thread has */
  char err[256];
  if (pod_link_check(chip.flit_words, machine.link_bytes, err, sizeof err)) {
    if (error_.empty()) error_ = err;
  } else if (!(link_ = pod_link_new(n, latency_, latency_ + 2, chip.flit_words, machine.link_bytes))) {
    throw std::bad_alloc();
  }
  for (unsigned i = 0; i < n && link_; i++)
    for (unsigned d = 0; d < TORUS_DIRS; d++) {
      links_.emplace_back(new link(("link_" + std::to_string(i) + "_" + std::to_string(d)).c_str(), link_, i, d));
      ctl_.add_link(links_.back().get());
    }
  for (unsigned i = 0; i < n && link_; i++)
    for (unsigned d = 0; d < TORUS_DIRS; d++) {
      const unsigned nb = torus_neighbour(w, h, i, (torus_dir_t)d);
      chips_[i]->tx[d](*links_[i * TORUS_DIRS + d]);
      chips_[nb]->rx[torus_opposite((torus_dir_t)d)](*links_[i * TORUS_DIRS + d]);
    }
  SC_METHOD(on_end);
  sensitive << ctl_.end_event();
  dont_initialize();
  SC_METHOD(irq_update);
  sensitive << irq_ev_;
}

sc_slice::~sc_slice() { pod_link_free(link_); }

void sc_slice::on_end() {
  if (!started_) return;  /* a run of single chips' STARTs: each chip raises its own interrupt */
  started_ = false;
  done_ = true;
  irq_pending_ = true;
  irq_ev_.notify(sc_core::SC_ZERO_TIME);
}

tlm_response_status sc_slice::refuse(tlm_response_status st, const std::string &why) {
  refusal_ = why;
  SC_REPORT_WARNING(name(), why.c_str());
  return st;
}

void sc_slice::b_transport(tlm_generic_payload &p, sc_time &delay) {
  const uint64_t addr = p.get_address();
  if (addr >= SLICE_REG_BASE) {
    p.set_response_status(regs(p, delay));
    return;
  }
  const uint64_t i = addr / CHIP_WINDOW;
  if (i >= chips_.size()) {
    char b[64];
    snprintf(b, sizeof b, "0x%" PRIx64, addr);
    p.set_response_status(refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, std::string("address ") + b +
                                                                      " is outside the slice's memory map"));
    return;
  }
  if (p.get_data_length() > CHIP_WINDOW - addr % CHIP_WINDOW) {
    p.set_response_status(refuse(tlm::TLM_BURST_ERROR_RESPONSE, "a transaction crosses from one chip's window "
                                                                "into the next"));
    return;
  }
  p.set_address(addr % CHIP_WINDOW);
  (*to_chip_[i])->b_transport(p, delay);
  p.set_address(addr);
  refusal_ = chips_[i]->last_refusal();
}

unsigned int sc_slice::transport_dbg(tlm_generic_payload &p) {
  const uint64_t addr = p.get_address(), i = addr / CHIP_WINDOW;
  if (addr >= SLICE_REG_BASE || i >= chips_.size()) return 0;
  p.set_address(addr % CHIP_WINDOW);
  const unsigned n = (*to_chip_[i])->transport_dbg(p);
  p.set_address(addr);
  return n;
}

bool sc_slice::get_direct_mem_ptr(tlm_generic_payload &p, tlm::tlm_dmi &dmi) {
  const uint64_t addr = p.get_address(), i = addr / CHIP_WINDOW;
  if (addr >= SLICE_REG_BASE || i >= chips_.size()) return false;
  p.set_address(addr % CHIP_WINDOW);
  const bool ok = (*to_chip_[i])->get_direct_mem_ptr(p, dmi);
  p.set_address(addr);
  const uint64_t base = i * CHIP_WINDOW, end = dmi.get_end_address();
  dmi.set_start_address(base + dmi.get_start_address());
  dmi.set_end_address(end >= CHIP_WINDOW ? base + CHIP_WINDOW - 1 : base + end);
  return ok;
}

void sc_slice::invalidate(int chip, sc_dt::uint64 start, sc_dt::uint64 end) {
  const uint64_t base = (uint64_t)chip * CHIP_WINDOW;
  socket->invalidate_direct_mem_ptr(base + start, end >= CHIP_WINDOW ? base + CHIP_WINDOW - 1 : base + end);
}

tlm_response_status sc_slice::regs(tlm_generic_payload &p, sc_time &delay) {
  delay += chips_[0]->period();
  const uint64_t off = p.get_address() - SLICE_REG_BASE;
  char where[64];
  snprintf(where, sizeof where, "0x%llx", (unsigned long long)p.get_address());
  if (off >= SLICE_REG_SIZE)
    return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, std::string("address ") + where + " is outside the slice's "
                                                                                      "memory map");
  if (off % 4) return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, std::string("unaligned register access at ") + where);
  if (p.get_data_length() != 4)
    return refuse(tlm::TLM_BURST_ERROR_RESPONSE, std::string("a ") + std::to_string(p.get_data_length()) +
                                                     "-byte register access at " + where + ": 4-byte accesses only");
  if (p.get_byte_enable_ptr())
    return refuse(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, std::string("register access at ") + where +
                                                           " with byte enables");
  if (p.get_streaming_width() != 0 && p.get_streaming_width() < 4)
    return refuse(tlm::TLM_BURST_ERROR_RESPONSE, std::string("a streaming register access at ") + where);
  uint32_t v = 0;
  if (p.is_write()) {
    memcpy(&v, p.get_data_ptr(), 4);
    if (off == SREG_START) {
      std::string why;
      for (auto &c : chips_) /* every chip must be able to start before any does */
        if (c->start_check(v, &why)) return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, std::string(c->name()) + ": " + why);
      for (auto &c : chips_) c->start(v, &why);
      started_ = true;
      done_ = false;
      irq_pending_ = false;
      irq_ev_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_OK_RESPONSE;
    }
    if (off == SREG_ABORT) {
      for (auto &c : chips_) c->abort(v);
      return tlm::TLM_OK_RESPONSE;
    }
    if (off == SREG_IRQ) {
      if (v & 1) irq_pending_ = false, irq_ev_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_OK_RESPONSE;
    }
    if (off == SREG_ID || off == SREG_SIZE || off == SREG_LINK_LATENCY || off == SREG_STATUS ||
        off == SREG_RUN_CYCLES_LO || off == SREG_RUN_CYCLES_HI)
      return refuse(tlm::TLM_COMMAND_ERROR_RESPONSE, std::string("the slice register at ") + where + " is read-only");
    return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, std::string("no slice register at ") + where);
  }
  if (!p.is_read()) return tlm::TLM_OK_RESPONSE;
  const uint64_t cycles = ctl_.last_cycles();
  switch (off) {
    case SREG_ID: v = SLICE_ID; break;
    case SREG_SIZE: v = w_ | h_ << 8; break;
    case SREG_LINK_LATENCY: v = latency_; break;
    case SREG_START: case SREG_ABORT: v = 0; break;
    case SREG_STATUS:
      v = (started_ || ctl_.active() ? (uint32_t)STATUS_BUSY : 0u) | (done_ ? (uint32_t)STATUS_DONE : 0u) |
          (done_ && ctl_.last_failed() ? (uint32_t)STATUS_FAILED : 0u) |
          (done_ && ctl_.last_timed_out() ? (uint32_t)STATUS_TIMED_OUT : 0u);
      break;
    case SREG_IRQ: v = irq_pending_; break;
    case SREG_RUN_CYCLES_LO: v = (uint32_t)cycles; break;
    case SREG_RUN_CYCLES_HI: v = (uint32_t)(cycles >> 32); break;
    default: return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, std::string("no slice register at ") + where);
  }
  memcpy(p.get_data_ptr(), &v, 4);
  return tlm::TLM_OK_RESPONSE;
}

}  // namespace tpu_sc
