/*
 * srd_macro.h: small helpers shared by the engine's modules.  Header
 * only: nothing here has a definition elsewhere.
 */
#ifndef SRD_MACRO_H
#define SRD_MACRO_H

#include <stddef.h>
#include <stdint.h>

/* srd_min and srd_max return the smaller and the larger of |A| and |B|,
   evaluating one of them twice: pass no expression with side effects. */
#define srd_min(A, B) ((A) < (B) ? (A) : (B))
#define srd_max(A, B) ((A) > (B) ? (A) : (B))
/* srd_arraylen is the number of elements of array |A| (an array, not a
   pointer). */
#define srd_arraylen(A) (sizeof(A) / sizeof((A)[0]))

/* srd_unreachable marks a branch the code cannot take: reaching it is
   undefined with GCC and clang, abort() elsewhere.  srd_likely and
   srd_unlikely hint a branch's usual outcome to the compiler; they do not
   change what it computes. */
#if defined(__GNUC__)
#  define srd_unreachable() __builtin_unreachable()
#  define srd_likely(X) __builtin_expect(!!(X), 1)
#  define srd_unlikely(X) __builtin_expect(!!(X), 0)
#else
#  define srd_unreachable() abort()
#  define srd_likely(X) (X)
#  define srd_unlikely(X) (X)
#endif

/* SRD_FLATTEN marks an entry point of the per-packet path (reading and
   writing a packet): every call in it is inlined, transitively, so that
   the packet's fields stay in registers from decoding to delivery.
   SRD_COLD marks what such a path calls rarely (handshakes, errors,
   logging, session resets): kept out of line, out of the hot code. */
#if defined(__GNUC__)
#  define SRD_FLATTEN __attribute__((flatten))
#  define SRD_COLD __attribute__((cold, noinline))
#else
#  define SRD_FLATTEN
#  define SRD_COLD
#endif

/* srd_seq_lt and friends compare 32-bit sequence numbers that wrap
   (RFC 1982 serial number arithmetic): |a| is before |b| when the
   difference, read as signed, is negative. */
static inline int srd_seq_lt(uint32_t a, uint32_t b) {
  return (int32_t)(a - b) < 0;
}
static inline int srd_seq_le(uint32_t a, uint32_t b) {
  return (int32_t)(a - b) <= 0;
}
static inline int srd_seq_gt(uint32_t a, uint32_t b) {
  return (int32_t)(a - b) > 0;
}
static inline int srd_seq_ge(uint32_t a, uint32_t b) {
  return (int32_t)(a - b) >= 0;
}

/* srd_is_pow2 returns nonzero if |x| is a nonzero power of two. */
static inline int srd_is_pow2(uint32_t x) {
  return x && !(x & (x - 1));
}

#endif /* SRD_MACRO_H */
