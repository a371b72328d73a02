/* sc_chip: see sc_chip.h. */
#include "sc/sc_chip.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

extern "C" {
#include "network/torus.h"
}

namespace tpu_sc {

using sc_core::sc_time;
using tlm::tlm_generic_payload;
using tlm::tlm_response_status;

namespace {

std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%" PRIx64, v);
  return b;
}

/* Does byte i of the transaction go through (its byte enable, cycled over the enable length)? */
bool enabled(const tlm_generic_payload &p, size_t i) {
  const unsigned char *be = p.get_byte_enable_ptr();
  return !be || be[i % p.get_byte_enable_length()] == TLM_BYTE_ENABLED;
}

}  // namespace

/* ------------------------------------------------------------------ run control */

sc_run_control::sc_run_control(const char *name)
    : name_(name), begin_((std::string(name) + "_begin").c_str()), end_((std::string(name) + "_end").c_str()) {}

void sc_run_control::request_run() {
  uint64_t bound = 200000;  /* the default limit: every chip's programs as if nothing overlapped, twice */
  bool set = false;
  uint64_t most = 0;
  for (sc_chip *c : chips_) {
    bound += 2 * c->cycle_bound();
    if (c->timeout()) set = true, most = c->timeout() > most ? c->timeout() : most;
  }
  const uint64_t want = set ? most : bound;
  if (state_ == IDLE) {
    state_ = RUN;
    active_ = true;
    run_start_ = tick_;
    limit_ = want;
    drops0_.clear();
    for (sc_chip *c : chips_) drops0_.push_back(chip_slice_drops(c->c_chip()));
    begin_.notify();
  } else if (tick_ - run_start_ + want > limit_) {
    limit_ = tick_ - run_start_ + want;  /* a chip joins the run: its time from now */
  }
}

bool sc_run_control::quiet() const {
  for (link *l : links_)
    if (l->in_flight()) return false;
  for (sc_chip *c : chips_)
    if (!chip_quiet(c->c_chip())) return false;
  return true;
}

/* Packets the chips' routers dropped since the run began (a hardware error: the run stops). */
std::string sc_run_control::drops() const {
  std::string why;
  for (size_t i = 0; i < chips_.size(); i++) {
    const uint32_t d = chip_slice_drops(chips_[i]->c_chip()) - drops0_[i];
    if (!d) continue;
    const chip_config_t *cfg = chip_config(chips_[i]->c_chip());
    char b[160];
    snprintf(b, sizeof b, "%schip (%u,%u): its router dropped %u packet(s) addressed outside its slice",
             why.empty() ? "" : "; ", cfg->x, cfg->y, d);
    why += b;
  }
  return why;
}

void sc_run_control::stepped() {
  if (++stepped_ < chips_.size()) return;
  stepped_ = 0;
  tick_++;
  const bool q = quiet();
  if (state_ == RUN) {
    std::string why;
    for (sc_chip *c : chips_)
      if (why.empty() && chip_divergence(c->c_chip())) why = "the lockstep check found a difference";
    if ((tick_ - run_start_) % 256 == 0 || q) {  /* (as pod_run, which looks every 256 cycles) */
      const std::string d = drops();
      if (!d.empty()) why += (why.empty() ? "" : "; ") + d;
    }
    if (q && why.empty()) {
      finish(false, false, "");
      end("");
      return;
    }
    const bool timed_out = tick_ - run_start_ >= limit_;
    if (why.empty() && !timed_out) return;
    if (timed_out && why.empty()) why = "timed out after " + std::to_string(limit_) + " cycles";
    finish(true, timed_out, why);
    for (sc_chip *c : chips_) chip_request_abort(c->c_chip(), CHIP_QMASK_EVERY_CORE);
    state_ = DRAIN;
    drain_start_ = tick_;
  } else if (state_ == DRAIN) {
    if (q) {
      end(" (every queue was aborted; the chips are quiet)");
    } else if (tick_ - drain_start_ >= CHIP_DRAIN_CYCLES) {
      for (sc_chip *c : chips_) chip_reset(c->c_chip());
      for (link *l : links_) l->clear(tick_);
      end(" (every queue was aborted and the chips did not drain: they were reset)");
    }
  }
}

void sc_run_control::finish(bool abnormal, bool timed_out, const std::string &why) {
  last_cycles_ = tick_ - run_start_;
  last_timed_out_ = timed_out;
  last_failed_ = false;
  for (sc_chip *c : chips_)
    if (c->started()) last_failed_ |= c->finish_run(tick_, abnormal, timed_out, why) != 0;
  if (abnormal && !last_failed_) /* no chip is at fault (pod_run's "flits still in the network") */
    SC_REPORT_WARNING(name_.c_str(), (why + (timed_out ? ": flits still in the network" : "")).c_str());
  last_failed_ |= abnormal;
}

void sc_run_control::end(const std::string &recovery) {
  state_ = IDLE;
  active_ = false;
  for (sc_chip *c : chips_)
    if (c->awaiting_done()) c->raise_done(recovery);
  end_.notify(sc_core::SC_ZERO_TIME);
}

/* ------------------------------------------------------------------ the chip */

sc_chip::sc_chip(sc_core::sc_module_name name, const chip_config_t &cfg, double clock_mhz, sc_run_control *ctl)
    : sc_core::sc_module(name), socket("socket"), clk("clk"), irq("irq"), cfg_(cfg), clock_mhz_(clock_mhz),
      period_(1000.0 / clock_mhz, sc_core::SC_NS), own_ctl_((std::string(this->name()) + "_run").c_str()),
      ctl_(ctl ? ctl : &own_ctl_) {
  char err[512] = "";
  if (chip_geometry_for(cfg.rows, cfg.cols, cfg.mxus, cfg.cores, cfg.model, &geo_, err, sizeof err) == 0)
    chip_ = chip_new(&cfg, err, sizeof err);
  if (!chip_) error_ = err;
  else queues_ = ISA_NUM_QUEUES * isa_geometry_cores(&geo_);
  window_.resize(queues_);
  ctl_->add_chip(this);
  socket.register_b_transport(this, &sc_chip::b_transport);
  socket.register_transport_dbg(this, &sc_chip::transport_dbg);
  socket.register_get_direct_mem_ptr(this, &sc_chip::get_direct_mem_ptr);
  SC_METHOD(clock_edge);  /* a method, not a thread: no context switch a cycle */
  sensitive << clk.pos();
  dont_initialize();
  SC_METHOD(irq_update);
  sensitive << irq_ev_;
}

sc_chip::~sc_chip() { chip_free(chip_); }

void sc_chip::end_of_elaboration() {
  unsigned bound = 0;
  for (int d = 0; d < 4; d++) bound += (tx[d].size() > 0) + (rx[d].size() > 0);
  if (bound != 0 && bound != 8)
    SC_REPORT_ERROR(name(), "a chip's link ports are bound all eight (a slice) or none (a chip alone)");
  linked_ = bound == 8;
}

uint64_t sc_chip::cycle_bound() const { return chip_ ? chip_cycle_bound(chip_) : 0; }

/* At each rising edge while the chip's slice runs: a cycle of the chip. Between runs the chip
 * is not clocked: the method waits for the run control's begin event, then for the next edge. */
void sc_chip::clock_edge() {
  if (!chip_) {
    next_trigger(ctl_->begin_event());  /* (never steps: the chip could not be built) */
    return;
  }
  if (!ctl_->active()) {  /* no run (it ended at the last edge): sleep until one begins */
    waiting_ = true;
    next_trigger(ctl_->begin_event());
    return;
  }
  if (waiting_) {  /* woken by the begin: the run's first cycle is the next rising edge */
    waiting_ = false;
    next_trigger(clk.posedge_event());
    return;
  }
  step();
  ctl_->stepped();
}

/* One cycle of the chip at a rising edge: its queues begin if it was started, what arrives on
 * its links goes in, the chip takes its cycle, what it sends goes on its links (pod.c's
 * band_tick, for one chip). */
void sc_chip::step() {
  const uint64_t t = ctl_->tick();
  if (pending_) {
    chip_begin(chip_, pending_);
    pending_ = 0;
    started_ = true;
    run_start_ = t;
  }
  if (linked_) {
    chip_net_t in;
    in.credits = 0;
    for (unsigned d = 0; d < 4; d++) rx[d]->take(t, &in, d);
    chip_net_in(chip_, &in);
  }
  chip_tick(chip_);
  if (linked_) {
    const unsigned V = CHIP_ROUTER_VCS;
    chip_net_t out;
    chip_net_out(chip_, &out);
    for (unsigned d = 0; d < 4; d++) tx[d]->put(t, &out, (uint8_t)((out.credits >> (d * V)) & ((1u << V) - 1)));
  }
}

int sc_chip::finish_run(uint64_t tick, bool abnormal, bool timed_out, const std::string &why) {
  const int rc = chip_finish(chip_, abnormal, &status_);
  run_cycles_ = tick - run_start_;
  started_ = false;
  failed_ = rc != 0;  /* (a chip whose queues halted is not at fault when its slice's run fails: pod_run's rule) */
  timed_out_ = timed_out;
  if (failed_ && !why.empty()) {
    const std::string r = why + (status_.report[0] ? ": " : "") + status_.report;
    snprintf(status_.report, sizeof status_.report, "%s", r.c_str());
  }
  return failed_ ? -1 : 0;
}

void sc_chip::raise_done(const std::string &recovery) {
  if (failed_ && !recovery.empty()) {
    const size_t used = strlen(status_.report);
    snprintf(status_.report + used, sizeof status_.report - used, "%s", recovery.c_str());
  }
  if (failed_) SC_REPORT_WARNING(name(), (std::string("run failed: ") + status_.report).c_str());
  done_ = true;
  awaiting_ = false;
  irq_pending_ = true;
  irq_ev_.notify(sc_core::SC_ZERO_TIME);
}

void sc_chip::irq_update() { irq.write(irq_pending_); }

bool sc_chip::queue_running(unsigned q) {
  chip_status_t st;
  chip_status(chip_, &st);
  return st.running[q] || (pending_ >> q & 1);
}

int sc_chip::start_check(uint32_t mask, std::string *why) {
  if (!chip_) return *why = "the chip could not be built", -1;
  if (mask == 0 || mask >> queues_) return *why = "START " + hex(mask) + ": the chip has queues 0.." +
                                                  std::to_string(queues_ - 1) + " (mask bits 0.." +
                                                  std::to_string(queues_ - 1) + ")", -1;
  if (ctl_->draining()) return *why = "START: the chip's slice is recovering from a failed run", -1;
  if (pending_ || started_ || !chip_idle(chip_))
    return *why = "START: the chip is running (wait for its done interrupt, or ABORT it first)", -1;
  return 0;
}

int sc_chip::start(uint32_t mask, std::string *why) {
  if (start_check(mask, why)) return -1;
  pending_ = mask;
  awaiting_ = true;
  done_ = false;
  irq_pending_ = false;
  irq_ev_.notify(sc_core::SC_ZERO_TIME);
  ctl_->request_run();
  return 0;
}

void sc_chip::abort(uint32_t mask) {
  if (!chip_) return;
  pending_ &= ~mask;
  /* a chip that does not run has nothing to abort: an abort request would stop its next run */
  if (started_) chip_request_abort(chip_, mask);
}

tlm_response_status sc_chip::refuse(tlm_response_status st, const std::string &why) {
  refusal_ = why;
  SC_REPORT_WARNING(name(), why.c_str());
  return st;
}

void sc_chip::b_transport(tlm_generic_payload &p, sc_time &delay) { p.set_response_status(access(p, delay)); }

/* Decodes the transaction against the memory map (sc_map.h) and hands it to its region. */
tlm_response_status sc_chip::access(tlm_generic_payload &p, sc_time &delay) {
  const uint64_t addr = p.get_address(), len = p.get_data_length();
  if (!chip_) return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "the chip could not be built: " + error_);
  if (len == 0 || !p.get_data_ptr())
    return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "a transaction at " + hex(addr) + " with no data");
  if (p.get_streaming_width() != 0 && p.get_streaming_width() < len)
    return refuse(tlm::TLM_BURST_ERROR_RESPONSE, "a streaming transaction at " + hex(addr) +
                                                     " (streaming width " + std::to_string(p.get_streaming_width()) +
                                                     " of " + std::to_string(len) + " bytes): not supported");
  if (p.get_byte_enable_ptr() && p.get_byte_enable_length() == 0)
    return refuse(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte enables of length 0 at " + hex(addr));
  const uint64_t hbm_bytes = cfg_.hbm_bytes;
  const uint64_t window = (uint64_t)geo_.queue_depth * ISA_CMD_WORDS * 4;
  uint64_t base, size;
  std::string what;
  int region;  /* 0 HBM, 1 command window, 2 registers */
  unsigned q = 0;
  if (addr < hbm_bytes) {
    region = 0, base = HBM_BASE, size = hbm_bytes, what = "HBM";
  } else if (addr >= CMD_BASE && addr < CMD_BASE + queues_ * CMD_STRIDE &&
             (addr - CMD_BASE) % CMD_STRIDE < window) {
    q = (unsigned)((addr - CMD_BASE) / CMD_STRIDE);
    region = 1, base = CMD_BASE + q * CMD_STRIDE, size = window, what = "queue " + std::to_string(q) + "'s command window";
  } else if (addr >= REG_BASE && addr < REG_BASE + REG_SIZE) {
    region = 2, base = REG_BASE, size = REG_SIZE, what = "the registers";
  } else {
    return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, "address " + hex(addr) + " is outside the chip's memory map "
                                                   "(docs/systemc.md)");
  }
  const uint64_t off = addr - base;
  if (len > size - off)
    return refuse(tlm::TLM_BURST_ERROR_RESPONSE, "a " + std::to_string(len) + "-byte transaction at " + hex(addr) +
                                                     " crosses the end of " + what + " at " + hex(base + size));
  if (p.is_read() == false && p.is_write() == false) return tlm::TLM_OK_RESPONSE;  /* TLM_IGNORE_COMMAND */
  if (region == 0) return hbm(p, off, delay);
  if (region == 1) return cmd(p, q, off, delay);
  return reg(p, off, delay);
}

tlm_response_status sc_chip::hbm(tlm_generic_payload &p, uint64_t off, sc_time &delay) {
  const size_t len = p.get_data_length();
  unsigned char *data = p.get_data_ptr();
  int rc = 0;
  if (!p.get_byte_enable_ptr()) {
    rc = p.is_read() ? chip_hbm_read(chip_, off, data, len) : chip_hbm_write(chip_, off, data, len);
  } else {  /* the enabled bytes only: the others are left as they are, in HBM and in the data */
    std::vector<unsigned char> cur(len);
    rc = chip_hbm_read(chip_, off, cur.data(), len);
    for (size_t i = 0; i < len && !rc; i++)
      if (enabled(p, i)) (p.is_read() ? data[i] : cur[i]) = p.is_read() ? cur[i] : data[i];
    if (!rc && p.is_write()) rc = chip_hbm_write(chip_, off, cur.data(), len);
  }
  if (rc) return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "HBM at " + hex(off) + ": out of memory");
  /* the HBM's latency and its bandwidth (docs/systemc.md, "Timing") */
  delay += period_ * (double)(cfg_.hbm_latency + (len + cfg_.hbm_bytes_per_cycle - 1) / cfg_.hbm_bytes_per_cycle);
  p.set_dmi_allowed(true);
  return tlm::TLM_OK_RESPONSE;
}

tlm_response_status sc_chip::cmd(tlm_generic_payload &p, unsigned q, uint64_t off, sc_time &delay) {
  const size_t len = p.get_data_length();
  if (off % 4 || len % 4)
    return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, "queue " + std::to_string(q) + "'s command window at offset " +
                                                       hex(off) + ", " + std::to_string(len) +
                                                       " bytes: commands are written in whole 32-bit words");
  std::vector<uint8_t> &w = window_[q];
  if (p.is_write() && queue_running(q))
    return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "queue " + std::to_string(q) + " is running: its command window "
                                                       "cannot be written (ABORT it first)");
  if (w.size() < off + len) {
    if (p.is_write()) w.resize((size_t)geo_.queue_depth * ISA_CMD_WORDS * 4, 0);
  }
  unsigned char *data = p.get_data_ptr();
  for (size_t i = 0; i < len; i++) {
    if (!enabled(p, i)) continue;
    if (p.is_write()) w[off + i] = data[i];
    else data[i] = off + i < w.size() ? w[off + i] : 0;
  }
  delay += period_ * (double)((len + 4 * ISA_CMD_WORDS - 1) / (4 * ISA_CMD_WORDS));  /* a command a cycle */
  return tlm::TLM_OK_RESPONSE;
}

tlm_response_status sc_chip::reg(tlm_generic_payload &p, uint64_t off, sc_time &delay) {
  delay += period_;
  const size_t len = p.get_data_length();
  unsigned char *data = p.get_data_ptr();
  if (off >= REG_REPORT && off < REG_REPORT + REG_REPORT_BYTES) {  /* the report: bytes, read-only */
    if (p.is_write())
      return refuse(tlm::TLM_COMMAND_ERROR_RESPONSE, "the report at " + hex(REG_BASE + off) + " is read-only");
    if (off + len > REG_REPORT + REG_REPORT_BYTES)
      return refuse(tlm::TLM_BURST_ERROR_RESPONSE, "a read past the end of the report");
    for (size_t i = 0; i < len; i++)
      if (enabled(p, i)) data[i] = (unsigned char)status_.report[off - REG_REPORT + i];
    return tlm::TLM_OK_RESPONSE;
  }
  if (off % 4)
    return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, "register access at " + hex(REG_BASE + off) +
                                                       ": registers are 32-bit words at 4-byte aligned addresses");
  if (len != 4)
    return refuse(tlm::TLM_BURST_ERROR_RESPONSE, "a " + std::to_string(len) + "-byte register access at " +
                                                     hex(REG_BASE + off) + ": registers take 4-byte accesses only");
  if (p.get_byte_enable_ptr())
    return refuse(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "register access at " + hex(REG_BASE + off) +
                                                           " with byte enables: registers are written whole");
  uint32_t v = 0;
  if (p.is_read()) {
    const tlm_response_status st = reg_read((uint32_t)off, &v);
    if (st == tlm::TLM_OK_RESPONSE) memcpy(data, &v, 4);
    return st;
  }
  memcpy(&v, data, 4);
  if ((uint32_t)off >= REG_QUEUE && (uint32_t)off < REG_QUEUE + CHIP_MAX_QUEUES * REG_QUEUE_STRIDE &&
      ((uint32_t)off - REG_QUEUE) % REG_QUEUE_STRIDE == REG_Q_PROG_LEN && v <= geo_.queue_depth)
    delay += period_ * (double)v;  /* the load writes a command a cycle */
  return reg_write((uint32_t)off, v);
}

tlm_response_status sc_chip::reg_read(uint32_t off, uint32_t *v) {
  const uint64_t cycle = chip_cycle(chip_);
  switch (off) {
    case REG_ID: *v = CHIP_ID; return tlm::TLM_OK_RESPONSE;
    case REG_ROWS: *v = geo_.rows; return tlm::TLM_OK_RESPONSE;
    case REG_COLS: *v = geo_.cols; return tlm::TLM_OK_RESPONSE;
    case REG_MXUS: *v = isa_geometry_mxus(&geo_); return tlm::TLM_OK_RESPONSE;
    case REG_CORES: *v = isa_geometry_cores(&geo_); return tlm::TLM_OK_RESPONSE;
    case REG_QUEUES: *v = queues_; return tlm::TLM_OK_RESPONSE;
    case REG_QUEUE_DEPTH: *v = geo_.queue_depth; return tlm::TLM_OK_RESPONSE;
    case REG_CMD_WORDS: *v = ISA_CMD_WORDS; return tlm::TLM_OK_RESPONSE;
    case REG_HBM_BYTES_LO: *v = (uint32_t)cfg_.hbm_bytes; return tlm::TLM_OK_RESPONSE;
    case REG_HBM_BYTES_HI: *v = (uint32_t)(cfg_.hbm_bytes >> 32); return tlm::TLM_OK_RESPONSE;
    case REG_VMEM_LINES: *v = geo_.vmem_lines; return tlm::TLM_OK_RESPONSE;
    case REG_ACC_DEPTH: *v = geo_.acc_depth; return tlm::TLM_OK_RESPONSE;
    case REG_CLOCK_MHZ: *v = (uint32_t)(clock_mhz_ + 0.5); return tlm::TLM_OK_RESPONSE;
    case REG_POS: *v = cfg_.x | cfg_.y << 8 | cfg_.pod_x << 16 | cfg_.pod_y << 24; return tlm::TLM_OK_RESPONSE;
    case REG_START: case REG_ABORT: *v = 0; return tlm::TLM_OK_RESPONSE;  /* write-only: read as 0 */
    case REG_SLICE: *v = slice_; return tlm::TLM_OK_RESPONSE;
    case REG_TIMEOUT: *v = timeout_; return tlm::TLM_OK_RESPONSE;
    case REG_STATUS:
      *v = (pending_ || started_ || ctl_->draining() ? (uint32_t)STATUS_BUSY : 0u) |
           (done_ ? (uint32_t)STATUS_DONE : 0u) | (done_ && failed_ ? (uint32_t)STATUS_FAILED : 0u) |
           (done_ && timed_out_ ? (uint32_t)STATUS_TIMED_OUT : 0u) | (chip_idle(chip_) ? (uint32_t)STATUS_IDLE : 0u);
      return tlm::TLM_OK_RESPONSE;
    case REG_IRQ: *v = irq_pending_; return tlm::TLM_OK_RESPONSE;
    case REG_RUN_CYCLES_LO: *v = (uint32_t)run_cycles_; return tlm::TLM_OK_RESPONSE;
    case REG_RUN_CYCLES_HI: *v = (uint32_t)(run_cycles_ >> 32); return tlm::TLM_OK_RESPONSE;
    case REG_CYCLE_LO: *v = (uint32_t)cycle; return tlm::TLM_OK_RESPONSE;
    case REG_CYCLE_HI: *v = (uint32_t)(cycle >> 32); return tlm::TLM_OK_RESPONSE;
    default: break;
  }
  if (off >= REG_QUEUE && off < REG_QUEUE + queues_ * REG_QUEUE_STRIDE) {
    const unsigned q = (off - REG_QUEUE) / REG_QUEUE_STRIDE;
    chip_status_t st;
    chip_status(chip_, &st);
    switch ((off - REG_QUEUE) % REG_QUEUE_STRIDE) {
      case REG_Q_STATE: *v = (uint32_t)st.running[q] | (uint32_t)st.halted[q] << 1 | (st.error[q] & 0xFF) << 8; break;
      case REG_Q_PC: *v = st.pc[q]; break;
      case REG_Q_OPCODE: *v = st.opcode[q]; break;
      default: *v = (uint32_t)(window_[q].size() ? prog_len_[q] : 0); break;
    }
    return tlm::TLM_OK_RESPONSE;
  }
  if (off >= REG_SEM && off < REG_SEM + 4 * ISA_NUM_SEMS * isa_geometry_cores(&geo_)) {
    *v = chip_sem(chip_, (off - REG_SEM) / 4);
    return tlm::TLM_OK_RESPONSE;
  }
  if (off >= REG_COUNTERS && off < REG_COUNTERS + 8 * COUNTERS) {
    const uint64_t c[COUNTERS] = {status_.dma_busy, status_.mxu_busy, status_.compute, status_.weight_load,
                                  status_.weight_stall, status_.input_stall, status_.mxu_idle, status_.hbm_bytes};
    const uint64_t x = c[(off - REG_COUNTERS) / 8];
    *v = (off - REG_COUNTERS) % 8 ? (uint32_t)(x >> 32) : (uint32_t)x;
    return tlm::TLM_OK_RESPONSE;
  }
  return refuse(tlm::TLM_ADDRESS_ERROR_RESPONSE, "no register at " + hex(REG_BASE + off));
}

tlm_response_status sc_chip::reg_write(uint32_t off, uint32_t v) {
  std::string why;
  switch (off) {
    case REG_START:
      return start(v, &why) ? refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, why) : tlm::TLM_OK_RESPONSE;
    case REG_ABORT: abort(v); return tlm::TLM_OK_RESPONSE;
    case REG_SLICE:
      if (pending_ || started_ || ctl_->active())
        return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "SLICE: the chip's slice is running");
      slice_ = v;
      chip_set_slice(chip_, v & 0xFF, v >> 8 & 0xFF, v >> 16 & 0xFF, v >> 24);
      return tlm::TLM_OK_RESPONSE;
    case REG_TIMEOUT: timeout_ = v; return tlm::TLM_OK_RESPONSE;
    case REG_IRQ:
      if (v & 1) irq_pending_ = false, irq_ev_.notify(sc_core::SC_ZERO_TIME);
      return tlm::TLM_OK_RESPONSE;
    default: break;
  }
  if (off >= REG_QUEUE && off < REG_QUEUE + queues_ * REG_QUEUE_STRIDE &&
      (off - REG_QUEUE) % REG_QUEUE_STRIDE == REG_Q_PROG_LEN) {
    const unsigned q = (off - REG_QUEUE) / REG_QUEUE_STRIDE;
    if (queue_running(q))
      return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "PROG_LEN of queue " + std::to_string(q) +
                                                         ": the queue is running (ABORT it first)");
    if (v > geo_.queue_depth)
      return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "PROG_LEN of queue " + std::to_string(q) + ": a " +
                                                         std::to_string(v) + "-command program does not fit the " +
                                                         std::to_string(geo_.queue_depth) + "-command queue");
    std::vector<uint8_t> &w = window_[q];
    if (w.empty()) w.resize((size_t)geo_.queue_depth * ISA_CMD_WORDS * 4, 0);
    char err[256];
    if (chip_load_program(chip_, (int)q, reinterpret_cast<const uint32_t *>(w.data()), v, err, sizeof err))
      return refuse(tlm::TLM_GENERIC_ERROR_RESPONSE, "PROG_LEN of queue " + std::to_string(q) + ": " + err);
    prog_len_[q] = v;
    return tlm::TLM_OK_RESPONSE;
  }
  uint32_t dummy;
  if (reg_read(off, &dummy) == tlm::TLM_OK_RESPONSE)
    return refuse(tlm::TLM_COMMAND_ERROR_RESPONSE, "the register at " + hex(REG_BASE + off) + " is read-only");
  return tlm::TLM_ADDRESS_ERROR_RESPONSE;  /* (reg_read said why) */
}

unsigned int sc_chip::transport_dbg(tlm_generic_payload &p) {
  const uint64_t addr = p.get_address(), len = p.get_data_length();
  if (!chip_ || addr >= cfg_.hbm_bytes || len > cfg_.hbm_bytes - addr || p.get_byte_enable_ptr()) return 0;
  if (p.is_read()) return chip_hbm_read(chip_, addr, p.get_data_ptr(), len) ? 0 : (unsigned)len;
  if (p.is_write()) return chip_hbm_write(chip_, addr, p.get_data_ptr(), len) ? 0 : (unsigned)len;
  return 0;
}

bool sc_chip::get_direct_mem_ptr(tlm_generic_payload &p, tlm::tlm_dmi &dmi) {
  const uint64_t addr = p.get_address();
  uint64_t first, len;
  uint8_t *page = chip_ && addr < cfg_.hbm_bytes ? chip_hbm_direct(chip_, addr, &first, &len) : nullptr;
  if (!page) {  /* no DMI outside HBM: the whole of the rest of the map */
    dmi.allow_read_write();
    dmi.set_start_address(addr < cfg_.hbm_bytes ? addr : cfg_.hbm_bytes);
    dmi.set_end_address(addr < cfg_.hbm_bytes ? addr : ~0ull);
    dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
    return false;
  }
  dmi.set_dmi_ptr(page);
  dmi.set_start_address(first);
  dmi.set_end_address(first + len - 1);
  dmi.allow_read_write();
  dmi.set_read_latency(period_ * (double)cfg_.hbm_latency);
  dmi.set_write_latency(period_ * (double)cfg_.hbm_latency);
  return true;
}

}  // namespace tpu_sc
