/*
 * netsim_rng.c: netsim's random streams are the impairment model's
 * generator (impair.h: splitmix64, streams named by master seed, class and
 * id, so each depends only on the component's own identity and adding a
 * link shifts no other stream).  These are netsim's names for it.
 */
#include <netsim/netsim.h>

uint64_t netsim_mix64(uint64_t x) {
  return impair_mix64(x);
}

void netsim_rng_init(netsim_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id) {
  impair_rng_init(rng, master, cls, id);
}

uint64_t netsim_rng_next(netsim_rng *rng) {
  return impair_rng_next(rng);
}

uint32_t netsim_rng_below(netsim_rng *rng, uint32_t n) {
  return (uint32_t)(((impair_rng_next(rng) >> 32) * (uint64_t)n) >> 32);
}

uint64_t netsim_rng_threshold(double p) {
  return impair_threshold(p);
}
