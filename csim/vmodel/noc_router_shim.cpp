// Shim for rtl/noc_router.sv, compiled once per VC count with NOC_VCS, NOC_CLASS,
// NOC_HEADER and NOC_NEW defined by the Makefile.
#include NOC_HEADER
#include "vmodel/noc_router.h"
#include "vmodel/vmodel_impl.hpp"

extern "C" vmodel_t *NOC_NEW(uint64_t seed);

extern "C" vmodel_t *NOC_NEW(uint64_t seed) {
  return vmodel_create<NOC_CLASS>("noc_router", seed, [](VModelOf<NOC_CLASS> *m) {
    constexpr unsigned flit = NOC_FLIT_BITS(NOC_VCS);
    VMODEL_PORT(m, my_x_i, 8, true);
    VMODEL_PORT(m, my_y_i, 8, true);
    VMODEL_PORT(m, size_x_i, 8, true);
    VMODEL_PORT(m, size_y_i, 8, true);
    VMODEL_PORT(m, buf_depth_i, 4, true);
    VMODEL_PORT(m, slice_i, 32, true);
    VMODEL_PORT(m, drops_o, 16, false);
    VMODEL_PORT(m, in_flit_i, NOC_PORTS * flit, true);
    VMODEL_PORT(m, out_flit_o, NOC_PORTS * flit, false);
    VMODEL_PORT(m, credit_in_i, NOC_PORTS * NOC_VCS, true);
    VMODEL_PORT(m, credit_out_o, NOC_PORTS * NOC_VCS, false);
    VMODEL_PORT(m, overflow_o, 1, false);
    VMODEL_PORT(m, occupancy_o, 8, false);
    VMODEL_PORT(m, dbg_vc_i, 5, true);
    VMODEL_PORT(m, dbg_count_o, 4, false);
  });
}
