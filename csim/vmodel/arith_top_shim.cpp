// Shim for rtl/arith_top.sv: constructs the Verilated model and lists its ports.
#include "Varith_top.h"
#include "vmodel/arith_top.h"
#include "vmodel/vmodel_impl.hpp"

extern "C" vmodel_t *arith_top_new(uint64_t seed) {
  return vmodel_create<Varith_top>("arith_top", seed, [](VModelOf<Varith_top> *m) {
    VMODEL_PORT(m, mul_valid_i, 1, true);
    VMODEL_PORT(m, mul_a_i, 16, true);
    VMODEL_PORT(m, mul_b_i, 16, true);
    VMODEL_PORT(m, mul_valid_o, 1, false);
    VMODEL_PORT(m, mul_product_o, 32, false);
    VMODEL_PORT(m, add_valid_i, 1, true);
    VMODEL_PORT(m, add_a_i, 32, true);
    VMODEL_PORT(m, add_b_i, 32, true);
    VMODEL_PORT(m, add_valid_o, 1, false);
    VMODEL_PORT(m, add_sum_o, 32, false);
    VMODEL_PORT(m, cvt_valid_i, 1, true);
    VMODEL_PORT(m, cvt_a_i, 32, true);
    VMODEL_PORT(m, cvt_valid_o, 1, false);
    VMODEL_PORT(m, cvt_result_o, 16, false);
  });
}
