/*
 * rng: a small, fast, seedable pseudo-random generator (splitmix64 seeding xoshiro256**),
 * so every run is reproducible from its seed on any host. State lives in the caller's
 * struct: no globals, any number of independent streams.
 */
#ifndef RNG_H
#define RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t s[4];
} rng_t;

void rng_seed(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
/* Uniform in [0, bound), bound >= 1 (unbiased). */
uint64_t rng_below(rng_t *r, uint64_t bound);
/* A random normal bf16 with unbiased exponent in [emin, emax] and a random sign. */
uint16_t rng_bf16(rng_t *r, int emin, int emax);
/* count of the GEMM inputs `tpusim gemm` and the SystemC example make from a seed (A's M x K
 * values, then B's K x N, from one stream): rng_bf16 with exponents -4..1. */
void rng_gemm_inputs(rng_t *r, uint16_t *out, size_t count);
/* Value e of chip `chip`'s collective inputs from `seed` (`tpusim collective`, the SystemC
 * example): a normal fp32 of moderate range (exponents -7..8) and either sign, made from the
 * three alone (a counter-based generator), so any chip's values can be made again at any time
 * and a pod of any size needs no host copy of them. */
uint32_t rng_coll_input(uint64_t seed, unsigned chip, uint64_t e);

#endif
