/*
 * rng: a small, fast, seedable pseudo-random generator (splitmix64 seeding xoshiro256**),
 * so every run is reproducible from its seed on any host. State lives in the caller's
 * struct: no globals, any number of independent streams.
 */
#ifndef RNG_H
#define RNG_H

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

#endif
