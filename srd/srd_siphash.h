/*
 * srd_siphash.h: SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF", 2012), the keyed MAC of the stateless handshake's
 * cookies (docs/protocol.md, "Stateless responder").  A 128-bit key, a
 * 64-bit tag; the key and the message are read as the reference
 * implementation reads them (little-endian words), so its test vectors
 * hold (test/srd/test_siphash.c).
 */
#ifndef SRD_SIPHASH_H
#define SRD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* SRD_SIPHASH_KEY_LEN is the key length in bytes. */
#define SRD_SIPHASH_KEY_LEN 16

/* srd_siphash24 returns the SipHash-2-4 tag of the |len| bytes at |msg|
   under |key| (SRD_SIPHASH_KEY_LEN bytes), as the reference
   implementation's 8 output bytes read little-endian.  Both are only
   read; |msg| may be NULL when |len| is 0. */
uint64_t srd_siphash24(const uint8_t *key, const void *msg, size_t len);

#endif /* SRD_SIPHASH_H */
