/*
 * srd_siphash.c: SipHash-2-4, written from the paper's description.
 */
#include "srd_siphash.h"

static uint64_t le64(const uint8_t *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
         (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static uint64_t rotl(uint64_t x, unsigned b) {
  return (x << b) | (x >> (64 - b));
}

/* sipround is one SipRound on the state v[4]. */
static void sipround(uint64_t *v) {
  v[0] += v[1];
  v[1] = rotl(v[1], 13);
  v[1] ^= v[0];
  v[0] = rotl(v[0], 32);
  v[2] += v[3];
  v[3] = rotl(v[3], 16);
  v[3] ^= v[2];
  v[0] += v[3];
  v[3] = rotl(v[3], 21);
  v[3] ^= v[0];
  v[2] += v[1];
  v[1] = rotl(v[1], 17);
  v[1] ^= v[2];
  v[2] = rotl(v[2], 32);
}

uint64_t srd_siphash24(const uint8_t *key, const void *msg, size_t len) {
  const uint8_t *p = msg;
  uint64_t k0 = le64(key), k1 = le64(key + 8), m, v[4];
  size_t i, left = len & 7;

  v[0] = k0 ^ 0x736f6d6570736575ull; /* "somepseudorandomlygeneratedbytes" */
  v[1] = k1 ^ 0x646f72616e646f6dull;
  v[2] = k0 ^ 0x6c7967656e657261ull;
  v[3] = k1 ^ 0x7465646279746573ull;
  for (i = 0; i + 8 <= len; i += 8) {
    m = le64(p + i);
    v[3] ^= m;
    sipround(v);
    sipround(v);
    v[0] ^= m;
  }
  /* The last block: the remaining bytes, and the length's low byte on
     top. */
  m = (uint64_t)(len & 0xff) << 56;
  while (left--) {
    m |= (uint64_t)p[i + left] << (8 * left);
  }
  v[3] ^= m;
  sipround(v);
  sipround(v);
  v[0] ^= m;
  v[2] ^= 0xff;
  sipround(v);
  sipround(v);
  sipround(v);
  sipround(v);
  return v[0] ^ v[1] ^ v[2] ^ v[3];
}
