/*
 * srd_crc32c.c: CRC32C in software (slicing-by-8) and with the SSE4.2
 * CRC32 instruction (three interleaved streams, after Mark Adler's
 * crc32c.c), with a fused copy for the receive path.
 */
#include "srd_crc32c.h"

#include <string.h>

#include "srd_crc32c_tab.h"
#include "srd_macro.h"

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* The raw register functions work on the inverted CRC register. */
static uint32_t sw_reg(uint32_t c, const uint8_t *p, size_t n) {
  while (n && ((uintptr_t)p & 7)) {
    c = srd_crc32c_slice[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    --n;
  }
  while (n >= 8) {
    uint64_t w = load64(p) ^ c;
    c = srd_crc32c_slice[7][w & 0xFF] ^ srd_crc32c_slice[6][(w >> 8) & 0xFF] ^
        srd_crc32c_slice[5][(w >> 16) & 0xFF] ^
        srd_crc32c_slice[4][(w >> 24) & 0xFF] ^
        srd_crc32c_slice[3][(w >> 32) & 0xFF] ^
        srd_crc32c_slice[2][(w >> 40) & 0xFF] ^
        srd_crc32c_slice[1][(w >> 48) & 0xFF] ^ srd_crc32c_slice[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) {
    c = srd_crc32c_slice[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  }
  return c;
}

uint32_t srd_crc32c_sw(uint32_t crc, const void *buf, size_t len) {
  return ~sw_reg(~crc, buf, len);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#  define SRD_CRC32C_X86 1

/* shift advances register |c| over the zero bytes a table stands for. */
static inline uint32_t shift(const uint32_t t[4][256], uint32_t c) {
  return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^
         t[3][c >> 24];
}

#  include <cpuid.h>

#  define HW __attribute__((target("sse4.2")))

HW static inline uint64_t crc64(uint64_t c, uint64_t w) {
  return __builtin_ia32_crc32di(c, w);
}

HW static inline uint32_t crc8(uint32_t c, uint8_t b) {
  return __builtin_ia32_crc32qi(c, b);
}

/* blocks runs three streams of |n| bytes each over |p| (3n bytes), and
   copies them to |d| if not NULL. */
HW static inline uint32_t blocks(uint32_t c, const uint8_t *p, uint8_t *d,
                                 size_t n, const uint32_t t[4][256]) {
  uint64_t c0 = c, c1 = 0, c2 = 0;
  const uint8_t *end = p + n;

  if (d != NULL) {
    do {
      uint64_t w0 = load64(p), w1 = load64(p + n), w2 = load64(p + 2 * n);
      c0 = crc64(c0, w0);
      c1 = crc64(c1, w1);
      c2 = crc64(c2, w2);
      memcpy(d, &w0, 8);
      memcpy(d + n, &w1, 8);
      memcpy(d + 2 * n, &w2, 8);
      p += 8;
      d += 8;
    } while (p < end);
  } else {
    do {
      c0 = crc64(c0, load64(p));
      c1 = crc64(c1, load64(p + n));
      c2 = crc64(c2, load64(p + 2 * n));
      p += 8;
    } while (p < end);
  }
  c0 = shift(t, (uint32_t)c0) ^ (uint32_t)c1;
  return shift(t, (uint32_t)c0) ^ (uint32_t)c2;
}

/* tail runs the last |n| < 8 bytes with the widest instructions. */
HW static inline uint32_t tail(uint32_t c, const uint8_t *p, uint8_t *d,
                               size_t n) {
  if (n & 4) {
    uint32_t w;
    memcpy(&w, p, 4);
    c = __builtin_ia32_crc32si(c, w);
    if (d != NULL) {
      memcpy(d, &w, 4);
      d += 4;
    }
    p += 4;
  }
  if (n & 2) {
    uint16_t w;
    memcpy(&w, p, 2);
    c = __builtin_ia32_crc32hi(c, w);
    if (d != NULL) {
      memcpy(d, &w, 2);
      d += 2;
    }
    p += 2;
  }
  if (n & 1) {
    if (d != NULL) {
      *d = *p;
    }
    c = crc8(c, *p);
  }
  return c;
}

/* hw_reg runs register |c| over |n| bytes at |p|, copying them to |d| if
   not NULL.  Unaligned loads cost nothing extra on x86-64, so there is no
   byte-wise prologue (headers start at any offset, as hcrc's second
   piece does). */
HW static uint32_t hw_reg(uint32_t c, const uint8_t *p, uint8_t *d, size_t n) {
  uint64_t c64;

  while (n >= 3 * SRD_CRC32C_LONG) {
    c = blocks(c, p, d, SRD_CRC32C_LONG, srd_crc32c_long);
    p += 3 * SRD_CRC32C_LONG;
    d = d ? d + 3 * SRD_CRC32C_LONG : NULL;
    n -= 3 * SRD_CRC32C_LONG;
  }
  while (n >= 3 * SRD_CRC32C_SHORT) {
    c = blocks(c, p, d, SRD_CRC32C_SHORT, srd_crc32c_short);
    p += 3 * SRD_CRC32C_SHORT;
    d = d ? d + 3 * SRD_CRC32C_SHORT : NULL;
    n -= 3 * SRD_CRC32C_SHORT;
  }
  c64 = c;
  while (n >= 8) {
    uint64_t w = load64(p);
    c64 = crc64(c64, w);
    if (d != NULL) {
      memcpy(d, &w, 8);
      d += 8;
    }
    p += 8;
    n -= 8;
  }
  return tail((uint32_t)c64, p, d, n);
}

/* hw_skip4 is hw_reg over |n| bytes at |p| but the four at |skip|. */
HW static uint32_t hw_skip4(uint32_t c, const uint8_t *p, size_t n,
                            size_t skip) {
  return hw_reg(hw_reg(c, p, NULL, skip), p + skip + 4, NULL, n - skip - 4);
}

/* Folding with carry-less multiplication (Intel's "Fast CRC Computation
   for Generic Polynomials Using PCLMULQDQ"), 512 bits at a time with
   VPCLMULQDQ: sixteen 128-bit lanes, four 64-byte registers.  A lane
   folds forward by D bits as lo64 * K(D + 31) ^ hi64 * K(D - 33), where
   K(n) is x^n mod P, bit-reflected (SRD_CRC32C_K*: the generator derives
   and checks them).  The folded 16 bytes then go through the CRC32
   instruction like data, from a zero register: they are congruent to
   what they replace.  Three to four times the CRC32 instruction's 8 bytes
   a cycle, on the CPUs that have it (Ice Lake and later, Zen 4). */
/* Below this the CRC32 instruction's streams are as fast. */
#  define FOLD_MIN 1024

#  define FOLD                                                                 \
    __attribute__((target("avx512f,avx512vl,avx512bw,vpclmulqdq,pclmul,"       \
                          "sse4.2")))
#  include <immintrin.h>

FOLD static inline __m512i fold512(__m512i x, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), data,
                                   0x96);
}

FOLD static inline __m128i fold128(__m128i x, __m128i k, __m128i data) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                                     _mm_clmulepi64_si128(x, k, 0x11)),
                       data);
}

/* fold_reg runs register |c| over |n| >= FOLD_MIN bytes at |p| (copying
   them to |d| if not NULL). */
FOLD static uint32_t fold_reg(uint32_t c, const uint8_t *p, uint8_t *d,
                              size_t n) {
  const __m512i k2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(
      (long long)SRD_CRC32C_K2048_HI, (long long)SRD_CRC32C_K2048_LO));
  const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(
      (long long)SRD_CRC32C_K512_HI, (long long)SRD_CRC32C_K512_LO));
  const __m128i k128 = _mm_set_epi64x((long long)SRD_CRC32C_K128_HI,
                                      (long long)SRD_CRC32C_K128_LO);
  __m512i x0, x1, x2, x3;
  __m128i a0, a1, a2, a3;
  uint64_t r;

  x0 = _mm512_loadu_si512((const void *)p);
  x1 = _mm512_loadu_si512((const void *)(p + 64));
  x2 = _mm512_loadu_si512((const void *)(p + 128));
  x3 = _mm512_loadu_si512((const void *)(p + 192));
  if (d != NULL) {
    _mm512_storeu_si512((void *)d, x0);
    _mm512_storeu_si512((void *)(d + 64), x1);
    _mm512_storeu_si512((void *)(d + 128), x2);
    _mm512_storeu_si512((void *)(d + 192), x3);
    d += 256;
  }
  /* The register enters as the first four bytes' complement. */
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)c)));
  p += 256;
  n -= 256;
  while (n >= 256) {
    __m512i y0 = _mm512_loadu_si512((const void *)p);
    __m512i y1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i y2 = _mm512_loadu_si512((const void *)(p + 128));
    __m512i y3 = _mm512_loadu_si512((const void *)(p + 192));
    if (d != NULL) {
      _mm512_storeu_si512((void *)d, y0);
      _mm512_storeu_si512((void *)(d + 64), y1);
      _mm512_storeu_si512((void *)(d + 128), y2);
      _mm512_storeu_si512((void *)(d + 192), y3);
      d += 256;
    }
    x0 = fold512(x0, k2048, y0);
    x1 = fold512(x1, k2048, y1);
    x2 = fold512(x2, k2048, y2);
    x3 = fold512(x3, k2048, y3);
    p += 256;
    n -= 256;
  }
  /* Four registers into one (64 bytes apart), its lanes into one (16
     bytes apart). */
  x1 = fold512(x0, k512, x1);
  x2 = fold512(x1, k512, x2);
  x3 = fold512(x2, k512, x3);
  a0 = _mm512_extracti32x4_epi32(x3, 0);
  a1 = _mm512_extracti32x4_epi32(x3, 1);
  a2 = _mm512_extracti32x4_epi32(x3, 2);
  a3 = _mm512_extracti32x4_epi32(x3, 3);
  a1 = fold128(a0, k128, a1);
  a2 = fold128(a1, k128, a2);
  a3 = fold128(a2, k128, a3);
  r = __builtin_ia32_crc32di(0, (uint64_t)_mm_cvtsi128_si64(a3));
  r = __builtin_ia32_crc32di(r, (uint64_t)_mm_extract_epi64(a3, 1));
  return hw_reg((uint32_t)r, p, d, n);
}

static int hw_state;   /* 0 unknown, 1 yes, 2 no */
static int fold_state; /* the same for folding */

static void hw_probe(void) {
  unsigned a, b, c, d;
  int hw = 2, fold = 2;

  /* CPUID leaf 1, ECX: SSE4.2 (bit 20), PCLMULQDQ (bit 1), OSXSAVE (bit
     27); leaf 7: AVX512F, BW, VL (EBX bits 16, 30, 31), VPCLMULQDQ (ECX
     bit 10); and the OS saves the AVX-512 state (XCR0 bits 1, 2, 5-7).
     Header-only checks: libsrd links no runtime support library. */
  if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2)) {
    hw = 1;
    if ((c & bit_PCLMUL) && (c & bit_OSXSAVE) &&
        __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F) &&
        (b & bit_AVX512BW) && (b & bit_AVX512VL) && (c & (1u << 10))) {
      unsigned lo, hi;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      if ((lo & 0xE6u) == 0xE6u) {
        fold = 1;
      }
    }
  }
  /* A benign race: every thread stores the same answers. */
  __atomic_store_n(&fold_state, fold, __ATOMIC_RELAXED);
  __atomic_store_n(&hw_state, hw, __ATOMIC_RELAXED);
}

static inline int hw_ok(void) {
  int s = __atomic_load_n(&hw_state, __ATOMIC_RELAXED);
  if (srd_unlikely(s == 0)) {
    hw_probe();
    s = __atomic_load_n(&hw_state, __ATOMIC_RELAXED);
  }
  return s == 1;
}

int srd_crc32c_hw_available(void) {
  return hw_ok();
}

static int fold_available(void) {
  return hw_ok() && __atomic_load_n(&fold_state, __ATOMIC_RELAXED) == 1;
}

/* hw_any picks the fastest hardware path for |n| bytes. */
static inline uint32_t hw_any(uint32_t c, const uint8_t *p, uint8_t *d,
                              size_t n) {
  if (n >= FOLD_MIN && fold_available()) {
    return fold_reg(c, p, d, n);
  }
  return hw_reg(c, p, d, n);
}
#else
int srd_crc32c_hw_available(void) {
  return 0;
}
#endif

const char *srd_crc32c_impl(void) {
#ifdef SRD_CRC32C_X86
  if (fold_available()) {
    return "vpclmulqdq+sse4.2";
  }
#endif
  return srd_crc32c_hw_available() ? "sse4.2" : "software";
}

uint32_t srd_crc32c_skip4(const void *buf, size_t len, size_t skip) {
  const uint8_t *p = buf;
#ifdef SRD_CRC32C_X86
  if (hw_ok()) {
    return ~hw_skip4(~0u, p, len, skip);
  }
#endif
  return ~sw_reg(sw_reg(~0u, p, skip), p + skip + 4, len - skip - 4);
}

uint32_t srd_crc32c(uint32_t crc, const void *buf, size_t len) {
#ifdef SRD_CRC32C_X86
  if (hw_ok()) {
    return ~hw_any(~crc, buf, NULL, len);
  }
#endif
  return ~sw_reg(~crc, buf, len);
}

uint32_t srd_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len) {
#ifdef SRD_CRC32C_X86
  if (len >= FOLD_MIN && fold_available()) {
    /* The C library's copy writes whole cache lines without reading them
       first (rep movsb); the folding loop's stores would read every line
       of a receive buffer that is not in cache.  So: copy, then fold the
       copy, which is in the nearest cache now. */
    memcpy(dst, src, len);
    return ~fold_reg(~crc, dst, NULL, len);
  }
  if (hw_ok()) {
    return ~hw_any(~crc, src, dst, len);
  }
#endif
  if (len) {
    memcpy(dst, src, len);
  }
  return ~sw_reg(~crc, src, len);
}
