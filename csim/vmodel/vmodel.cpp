// vmodel: implementation of the common Verilated-model API (see vmodel.h).
#include "vmodel/vmodel_impl.hpp"

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
constexpr uint64_t kHalfPeriod = 5;  // trace time units per clock phase

unsigned words_of(unsigned width) { return (width + 31) / 32; }

[[noreturn]] void misuse(const vmodel *m, const char *what, int port) {
  std::fprintf(stderr, "vmodel %s: %s (port %d)\n", m->name_.c_str(), what, port);
  std::abort();
}

const VModelPort &port_at(const vmodel *m, int port) {
  if (port < 0 || static_cast<size_t>(port) >= m->ports_.size()) misuse(m, "no such port", port);
  return m->ports_[static_cast<size_t>(port)];
}
}  // namespace

vmodel::vmodel(const char *name, uint64_t seed, int rand_reset) : name_(name), ctx_(new VerilatedContext) {
  ctx_->traceEverOn(true);
  ctx_->randReset(rand_reset);  // 2: randomise every register and memory without a reset
  // Verilator seeds take an int; fold the 64-bit seed and avoid 0 ("use the time").
  int folded = static_cast<int>((seed ^ (seed >> 32)) & 0x7FFFFFFF);
  ctx_->randSeed(folded == 0 ? 1 : folded);
  Verilated::threadContextp(ctx_.get());
}

vmodel::~vmodel() = default;

void vmodel::add_port(const char *name, unsigned width, bool is_input, void *data) {
  ports_.push_back(VModelPort{name, width, is_input, data});
}

void vmodel::dump() {
  if (tfp_) tfp_->dump(ctx_->time());
}

void vmodel::tick(uint64_t cycles) {
  Verilated::threadContextp(ctx_.get());
  for (uint64_t i = 0; i < cycles; ++i) {
    *clk_ = 1;
    eval();
    dump();
    ctx_->timeInc(kHalfPeriod);
    *clk_ = 0;
    eval();
    dump();
    ctx_->timeInc(kHalfPeriod);
    ++cycle_;
  }
  dirty_ = false;
}

extern "C" {

int vmodel_port(const vmodel_t *m, const char *name) {
  for (size_t i = 0; i < m->ports_.size(); ++i)
    if (m->ports_[i].name == name) return static_cast<int>(i);
  return -1;
}

unsigned vmodel_port_width(const vmodel_t *m, int port) { return port_at(m, port).width; }

const char *vmodel_name(const vmodel_t *m) { return m->name_.c_str(); }

void vmodel_poke(vmodel_t *m, int port, uint64_t value) {
  const VModelPort &p = port_at(m, port);
  if (!p.is_input) misuse(m, "poke of an output", port);
  if (p.width > 64) misuse(m, "vmodel_poke on a port wider than 64 bits", port);
  if (p.width < 64) value &= (uint64_t{1} << p.width) - 1;
  uint64_t old;
  if (p.width <= 8) old = *static_cast<CData *>(p.data), *static_cast<CData *>(p.data) = static_cast<CData>(value);
  else if (p.width <= 16) old = *static_cast<SData *>(p.data), *static_cast<SData *>(p.data) = static_cast<SData>(value);
  else if (p.width <= 32) old = *static_cast<IData *>(p.data), *static_cast<IData *>(p.data) = static_cast<IData>(value);
  else old = *static_cast<QData *>(p.data), *static_cast<QData *>(p.data) = value;
  if (old != value) m->dirty_ = true;  // an unchanged input needs no evaluation before the next peek
}

uint64_t vmodel_peek(vmodel_t *m, int port) {
  const VModelPort &p = port_at(m, port);
  if (p.width > 64) misuse(m, "vmodel_peek on a port wider than 64 bits", port);
  if (m->dirty_) {  // settle combinational paths from freshly poked inputs
    m->eval();
    m->dirty_ = false;
  }
  if (p.width <= 8) return *static_cast<CData *>(p.data);
  if (p.width <= 16) return *static_cast<SData *>(p.data);
  if (p.width <= 32) return *static_cast<IData *>(p.data);
  return *static_cast<QData *>(p.data);
}

void vmodel_poke_words(vmodel_t *m, int port, const uint32_t *words) {
  const VModelPort &p = port_at(m, port);
  if (!p.is_input) misuse(m, "poke of an output", port);
  if (p.width <= 64) {
    uint64_t v = words[0];
    if (p.width > 32) v |= static_cast<uint64_t>(words[1]) << 32;
    vmodel_poke(m, port, v);
    return;
  }
  unsigned n = words_of(p.width);
  std::memcpy(p.data, words, n * sizeof(uint32_t));
  unsigned top_bits = p.width % 32;
  if (top_bits) static_cast<EData *>(p.data)[n - 1] &= (1u << top_bits) - 1;
  m->dirty_ = true;
}

void vmodel_peek_words(vmodel_t *m, int port, uint32_t *words) {
  const VModelPort &p = port_at(m, port);
  if (p.width <= 64) {
    uint64_t v = vmodel_peek(m, port);
    words[0] = static_cast<uint32_t>(v);
    if (p.width > 32) words[1] = static_cast<uint32_t>(v >> 32);
    return;
  }
  if (m->dirty_) {
    m->eval();
    m->dirty_ = false;
  }
  std::memcpy(words, p.data, words_of(p.width) * sizeof(uint32_t));
}

void *vmodel_port_ptr(vmodel_t *m, int port) { return port_at(m, port).data; }

void vmodel_reset(vmodel_t *m, unsigned cycles) {
  *m->rst_n_ = 0;
  m->tick(cycles ? cycles : 1);
  *m->rst_n_ = 1;
  m->dirty_ = true;
}

void vmodel_step(vmodel_t *m, uint64_t cycles) { m->tick(cycles); }

uint64_t vmodel_cycle(const vmodel_t *m) { return m->cycle_; }

int vmodel_trace_open(vmodel_t *m, const char *path, char *err, size_t errlen) {
  if (m->tfp_) {
    std::snprintf(err, errlen, "a trace is already open");
    return -1;
  }
  // The FST writer does not report a file it cannot create: find out first. Non-blocking,
  // and regular files only: a FIFO would block, a device would be written to.
  int probe = ::open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
  if (probe < 0) {
    std::snprintf(err, errlen, "cannot create trace file '%s': %s", path, std::strerror(errno));
    return -1;
  }
  struct stat st;
  const bool regular = ::fstat(probe, &st) == 0 && S_ISREG(st.st_mode);
  ::close(probe);
  if (!regular) {
    std::snprintf(err, errlen, "cannot create trace file '%s': not a regular file", path);
    return -1;
  }
  auto tfp = std::make_unique<VerilatedFstC>();
  m->attach_trace(tfp.get());
  tfp->open(path);
  if (!tfp->isOpen()) {
    std::remove(path);
    std::snprintf(err, errlen, "cannot open trace file '%s'", path);
    return -1;
  }
  m->tfp_ = std::move(tfp);  // the next rising edge is the first sample
  return 0;
}

namespace {
thread_local sigjmp_buf *fst_close_guard;  // set while this thread closes an FST writer

void on_fst_sigbus(int sig) {
  if (fst_close_guard) siglongjmp(*fst_close_guard, 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

void vmodel_trace_close(vmodel_t *m) {
  if (!m->tfp_) return;
  // The FST writer maps its hierarchy file back into memory to finish the waveform: on a full
  // disk that file is shorter than the writer believes and the read faults (SIGBUS). Caught
  // here, the writer is abandoned (leaked: it holds a lock it never released) and the file
  // left incomplete, which the command's output check reports (util/outfile.h: exit 1).
  sigjmp_buf guard;
  struct sigaction sa{}, old{};
  sa.sa_handler = on_fst_sigbus;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &old);
  if (sigsetjmp(guard, 1) == 0) {
    fst_close_guard = &guard;
    m->tfp_->close();
    m->tfp_.reset();
  } else {
    (void)m->tfp_.release();
  }
  fst_close_guard = nullptr;
  sigaction(SIGBUS, &old, nullptr);
}

void vmodel_free(vmodel_t *m) {
  if (!m) return;
  Verilated::threadContextp(m->ctx_.get());
  m->finish();
  vmodel_trace_close(m);
  delete m;
}

}  // extern "C"
