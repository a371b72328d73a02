// vmodel_impl: the C++ side shared by every Verilated top's shim (see vmodel.h).
// A shim derives nothing: it constructs VModelOf<Vtop>, registers its ports with
// VMODEL_PORT, and returns the handle.
#ifndef VMODEL_IMPL_HPP
#define VMODEL_IMPL_HPP

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "verilated.h"
#include "verilated_fst_c.h"

#include "vmodel/vmodel.h"

struct VModelPort {
  std::string name;
  unsigned width;
  bool is_input;
  void *data;  // CData/SData/IData/QData, or the EData words of a VlWide
};

struct vmodel {
  // rand_reset: Verilator's randReset mode for every register and memory without a reset
  // (2: random from the seed, 0: zero)
  vmodel(const char *name, uint64_t seed, int rand_reset);
  virtual ~vmodel();

  virtual void eval() = 0;
  virtual void attach_trace(VerilatedFstC *tfp) = 0;
  virtual void finish() = 0;

  void add_port(const char *name, unsigned width, bool is_input, void *data);
  void tick(uint64_t cycles);
  void dump();

  std::string name_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::vector<VModelPort> ports_;
  CData *clk_ = nullptr;
  CData *rst_n_ = nullptr;
  std::unique_ptr<VerilatedFstC> tfp_;
  uint64_t cycle_ = 0;
  bool dirty_ = true;  // inputs changed since the last eval
};

template <class Top>
struct VModelOf final : vmodel {
  VModelOf(const char *name, uint64_t seed, int rand_reset) : vmodel(name, seed, rand_reset) {
    top_ = std::make_unique<Top>(ctx_.get(), "TOP");
    clk_ = &top_->clk_i;
    rst_n_ = &top_->rst_ni;
  }
  ~VModelOf() override = default;
  void eval() override { top_->eval(); }
  void attach_trace(VerilatedFstC *tfp) override { top_->trace(tfp, 99); }
  void finish() override { top_->final(); }
  Top *top() { return top_.get(); }

  std::unique_ptr<Top> top_;
};

// Registers a top-level port; the width is the declared width in the RTL. A width that
// does not match Verilator's storage type for the port makes construction fail.
#define VMODEL_PORT(model, sig, width, is_input) \
  (model)->add_port(#sig, (width), (is_input), vmodel_port_data((model)->top()->sig, (width)))

template <class T>
inline void *vmodel_port_data(T &scalar, unsigned width) {
  size_t expect = width <= 8 ? 1 : width <= 16 ? 2 : width <= 32 ? 4 : width <= 64 ? 8 : 0;
  if (width == 0 || sizeof(T) != expect) throw std::invalid_argument("port width mismatch");
  return &scalar;
}
template <std::size_t N>
inline void *vmodel_port_data(VlWide<N> &wide, unsigned width) {
  if (width <= 64 || N != (width + 31) / 32) throw std::invalid_argument("port width mismatch");
  return wide.data();
}

// Wraps construction for the shim's extern "C" factory: no exception crosses into C.
template <class Top, class Bind>
vmodel_t *vmodel_create(const char *name, uint64_t seed, Bind bind, int rand_reset = 2) {
  VModelOf<Top> *m = nullptr;
  try {
    m = new VModelOf<Top>(name, seed, rand_reset);
    bind(m);
    return m;
  } catch (...) {
    delete m;
    return nullptr;
  }
}

#endif
