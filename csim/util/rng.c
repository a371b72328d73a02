/* rng: see rng.h. */
#include "util/rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void rng_seed(rng_t *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(rng_t *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t rng_below(rng_t *r, uint64_t bound) {
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  /* reject the biased tail */
  uint64_t x;
  do {
    x = rng_next(r);
  } while (x >= limit);
  return x % bound;
}

uint16_t rng_bf16(rng_t *r, int emin, int emax) {
  uint64_t x = rng_next(r);
  unsigned exp = (unsigned)(emin + 127 + (int)rng_below(r, (uint64_t)(emax - emin + 1)));
  return (uint16_t)(((x & 1) << 15) | (exp << 7) | ((x >> 1) & 0x7F));
}

void rng_gemm_inputs(rng_t *r, uint16_t *out, size_t count) {
  for (size_t i = 0; i < count; i++) out[i] = rng_bf16(r, -4, 1);
}

uint32_t rng_coll_input(uint64_t seed, unsigned chip, uint64_t e) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ ((uint64_t)chip << 40 | e) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (uint32_t)((z >> 40) & 0x807FFFFFu) | ((uint32_t)(120 + (z >> 8) % 16) << 23);
}
