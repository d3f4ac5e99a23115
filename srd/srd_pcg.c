/*
 * srd_pcg.c: PCG32.
 */
#include "srd_pcg.h"

void srd_pcg_init(srd_pcg *pcg, uint64_t seed, uint64_t stream) {
  pcg->state = 0;
  pcg->inc = (stream << 1) | 1u;
  srd_pcg_u32(pcg);
  pcg->state += seed;
  srd_pcg_u32(pcg);
}

uint32_t srd_pcg_u32(srd_pcg *pcg) {
  uint64_t old = pcg->state;
  uint32_t xorshifted, rot;

  pcg->state = old * 6364136223846793005ULL + pcg->inc;
  xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
  rot = (uint32_t)(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

uint64_t srd_pcg_u64(srd_pcg *pcg) {
  uint64_t hi = srd_pcg_u32(pcg);
  return (hi << 32) | srd_pcg_u32(pcg);
}

uint32_t srd_pcg_bounded(srd_pcg *pcg, uint32_t bound) {
  uint64_t m = (uint64_t)srd_pcg_u32(pcg) * bound;
  uint32_t l = (uint32_t)m;

  if (l < bound) {
    uint32_t t = (uint32_t)(-bound) % bound;
    while (l < t) {
      m = (uint64_t)srd_pcg_u32(pcg) * bound;
      l = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}
