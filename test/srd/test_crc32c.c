/*
 * test_crc32c.c: CRC32C against a bitwise reference: the standard check
 * value, every length and alignment around the hardware path's block
 * sizes, chaining, and the fused copy.
 */
#include "testutil.h"

#include <string.h>

#include "srd_crc32c.h"
#include "srd_crc32c_tab.h"
#include "srd_macro.h"

/* ref is the textbook bit-at-a-time CRC32C. */
static uint32_t ref(uint32_t crc, const uint8_t *p, size_t n) {
  uint32_t c = ~crc;
  size_t i;
  int k;

  for (i = 0; i < n; ++i) {
    c ^= p[i];
    for (k = 0; k < 8; ++k) {
      c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
    }
  }
  return ~c;
}

static void test_crc32c_check_value(void **state) {
  (void)state;
  assert_int_equal(srd_crc32c(0, "123456789", 9), 0xE3069283u);
  assert_int_equal(srd_crc32c_sw(0, "123456789", 9), 0xE3069283u);
  assert_int_equal(ref(0, (const uint8_t *)"123456789", 9), 0xE3069283u);
  assert_int_equal(srd_crc32c(0, NULL, 0), 0);
}

static void test_crc32c_lengths_and_alignments(void **state) {
  enum { MAX = 3 * 3 * SRD_CRC32C_LONG + 200 };
  static uint8_t buf[MAX + 8], dst[MAX + 8];
  uint64_t s = tu_seed("crc32c_lengths");
  size_t i, len, lens[64], nl = 0;
  unsigned al;

  (void)state;
  for (i = 0; i < sizeof(buf); ++i) {
    buf[i] = (uint8_t)tu_rand(&s);
  }
  /* Every length up to a few short blocks, then around each block size. */
  for (len = 0; len < 40; ++len) {
    lens[nl++] = len;
  }
  {
    const size_t around[] = {3 * SRD_CRC32C_SHORT, 3 * SRD_CRC32C_LONG,
                             2 * 3 * SRD_CRC32C_LONG, 8192, MAX};
    for (i = 0; i < srd_arraylen(around); ++i) {
      lens[nl++] = around[i] - 1;
      lens[nl++] = around[i];
      if (around[i] + 1 <= MAX) {
        lens[nl++] = around[i] + 1;
      }
    }
  }
  for (i = 0; i < nl; ++i) {
    for (al = 0; al < 8; ++al) {
      const uint8_t *p = buf + al;
      uint32_t want = ref(0, p, lens[i]), seed = (uint32_t)tu_rand(&s);
      tu_assert(srd_crc32c(0, p, lens[i]) == want);
      tu_assert(srd_crc32c_sw(0, p, lens[i]) == want);
      /* Chaining: the CRC of a split buffer is the CRC of the whole. */
      tu_assert(srd_crc32c(srd_crc32c(0, p, lens[i] / 3), p + lens[i] / 3,
                           lens[i] - lens[i] / 3) == want);
      tu_assert(srd_crc32c(seed, p, lens[i]) == ref(seed, p, lens[i]));
      memset(dst, 0xA5, sizeof(dst));
      tu_assert(srd_crc32c_copy(0, dst + (7 - al), p, lens[i]) == want);
      tu_assert(memcmp(dst + (7 - al), p, lens[i]) == 0);
      /* Nothing written past the end. */
      tu_assert(dst[7 - al + lens[i]] == 0xA5);
      /* A header's CRC, its own four bytes left out. */
      if (lens[i] >= 24) {
        size_t skip = lens[i] % 17;
        uint32_t c = ref(0, p, skip);
        c = ref(c, p + skip + 4, lens[i] - skip - 4);
        tu_assert(srd_crc32c_skip4(p, lens[i], skip) == c);
      }
    }
  }
}

static void test_crc32c_detects_bit_flips(void **state) {
  uint8_t b[64];
  uint32_t c0;
  size_t bit;

  (void)state;
  memset(b, 0x3C, sizeof(b));
  c0 = srd_crc32c(0, b, sizeof(b));
  for (bit = 0; bit < 8 * sizeof(b); ++bit) {
    b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    assert_int_not_equal(srd_crc32c(0, b, sizeof(b)), c0);
    b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc32c_check_value),
      cmocka_unit_test(test_crc32c_lengths_and_alignments),
      cmocka_unit_test(test_crc32c_detects_bit_flips),
  };
  printf("crc32c: hardware path %s\n",
         srd_crc32c_hw_available() ? "used" : "not available");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
