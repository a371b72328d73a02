/* arith_dot: see arith_dot.h. */
#include "runtime/arith_dot.h"

typedef struct {
  int mul_valid, mul_a, mul_b, mul_product;
  int add_valid, add_a, add_b, add_sum;
  int cvt_valid, cvt_a, cvt_result;
} arith_ports_t;

static arith_ports_t lookup_ports(const vmodel_t *m) {
  arith_ports_t p = {
      vmodel_port(m, "mul_valid_i"), vmodel_port(m, "mul_a_i"),   vmodel_port(m, "mul_b_i"),
      vmodel_port(m, "mul_product_o"), vmodel_port(m, "add_valid_i"), vmodel_port(m, "add_a_i"),
      vmodel_port(m, "add_b_i"),     vmodel_port(m, "add_sum_o"), vmodel_port(m, "cvt_valid_i"),
      vmodel_port(m, "cvt_a_i"),     vmodel_port(m, "cvt_result_o"),
  };
  return p;
}

/* Cycle i (0..n) feeds pair i to the multiplier and product i-1 with the running sum to
 * the adder; one more cycle converts the sum: n + 2 cycles after reset. */
arith_dot_result_t arith_dot_run(vmodel_t *m, const uint16_t *a, const uint16_t *b, uint64_t n) {
  arith_ports_t p = lookup_ports(m);
  vmodel_poke(m, p.mul_valid, 0);
  vmodel_poke(m, p.add_valid, 0);
  vmodel_poke(m, p.cvt_valid, 0);
  vmodel_reset(m, 2);
  uint64_t start = vmodel_cycle(m);
  uint32_t sum = 0;
  for (uint64_t i = 0; i <= n; i++) {
    vmodel_poke(m, p.mul_valid, i < n);
    if (i < n) {
      vmodel_poke(m, p.mul_a, a[i]);
      vmodel_poke(m, p.mul_b, b[i]);
    }
    vmodel_poke(m, p.add_valid, i > 0);
    if (i > 0) {
      vmodel_poke(m, p.add_a, sum);
      vmodel_poke(m, p.add_b, vmodel_peek(m, p.mul_product));
    }
    vmodel_step(m, 1);
    if (i > 0) sum = (uint32_t)vmodel_peek(m, p.add_sum);
  }
  vmodel_poke(m, p.mul_valid, 0);
  vmodel_poke(m, p.add_valid, 0);
  vmodel_poke(m, p.cvt_valid, 1);
  vmodel_poke(m, p.cvt_a, sum);
  vmodel_step(m, 1);
  vmodel_poke(m, p.cvt_valid, 0);
  arith_dot_result_t r = {sum, (uint16_t)vmodel_peek(m, p.cvt_result), vmodel_cycle(m) - start};
  vmodel_step(m, 1);  /* let the trace show the idle state */
  return r;
}
