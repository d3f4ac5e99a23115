/*
 * fuzz_seal.h: how the fuzz targets forge a datagram of wire format 2:
 * its CRCs rewritten to match its bytes, so that what they changed gets
 * past the integrity check to the logic behind it (docs/protocol.md,
 * "Integrity").
 */
#ifndef FUZZ_SEAL_H
#define FUZZ_SEAL_H

#include <stddef.h>
#include <stdint.h>

#include <srd/srd.h>

#include "srd_pkt.h"

/* FUZZ_PCRC_OFF: the payload CRC's place in a DATA header (its last
   field, with SRD_DATA_FLAG_PCRC). */
#define FUZZ_PCRC_OFF (SRD_PKT_DATA_HDR_LEN - 4)

static inline uint32_t fuzz_get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static inline void fuzz_put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* fuzz_reseal rewrites the header CRC of datagram |p| (|len| bytes) and,
   with |payload|, the payload CRC of a DATA that has one.  Returns
   nonzero if it could: a known type whose header lies within |len|. */
static inline int fuzz_reseal(uint8_t *p, size_t len, int payload) {
  size_t span;

  if (len < SRD_PKT_COMMON_LEN || p[1] == 0 || p[1] > SRD_PKT_TYPE_MAX) {
    return 0;
  }
  span = srd_pkt_span(p, len);
  if (span == 0 || span > len) {
    return 0;
  }
  if (payload && p[1] == SRD_PKT_DATA && span >= SRD_PKT_DATA_HDR_LEN &&
      (p[3] & SRD_DATA_FLAG_PCRC)) {
    fuzz_put32(p + FUZZ_PCRC_OFF, srd_crc32c(0, p + span, len - span));
  }
  srd_pkt_seal(p, span);
  return 1;
}

#endif /* FUZZ_SEAL_H */
