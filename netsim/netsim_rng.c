/*
 * netsim_rng.c: splitmix64 streams (Steele, Lea, Flood, OOPSLA 2014).  A
 * component's stream is seeded from mix(master ^ mix(class, id)), so each
 * stream depends only on the master seed and the component's own identity
 * (shared/style.md 2.9): adding a link does not shift any other stream.
 */
#include "netsim_rng.h"

uint64_t netsim_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void netsim_rng_init(netsim_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id) {
  uint64_t who =
      netsim_mix64(((uint64_t)cls << 56) ^ id ^ 0xD1B54A32D192ED03ULL);

  rng->state = netsim_mix64(master ^ who);
}

uint64_t netsim_rng_next(netsim_rng *rng) {
  rng->state += 0x9E3779B97F4A7C15ULL;
  return netsim_mix64(rng->state);
}

uint32_t netsim_rng_below(netsim_rng *rng, uint32_t n) {
  return (uint32_t)(((netsim_rng_next(rng) >> 32) * (uint64_t)n) >> 32);
}

uint64_t netsim_rng_threshold(double p) {
  double v;

  if (!(p > 0.0)) {
    return 0;
  }
  if (p >= 1.0) {
    return UINT64_MAX;
  }
  v = p * 18446744073709551616.0;
  if (v >= 18446744073709549568.0) {
    return UINT64_MAX - 1;
  }
  return (uint64_t)v;
}
