/*
 * test_time.c: picosecond arithmetic: exact serialisation times (rounded
 * up), no overflow at high rates over long spans, and the inverse
 * (bytes sent in a span), against 128-bit references with seeded random
 * inputs.
 */
#include "nstest.h"

static void test_time_tx_exact(void **state) {
  (void)state;
  /* Whole picoseconds per byte. */
  assert_int_equal(netsim_time_tx(1500, NETSIM_GBPS(100)), 120000);
  assert_int_equal(netsim_time_tx(1, NETSIM_GBPS(400)), 20);
  assert_int_equal(netsim_time_tx(1500, NETSIM_GBPS(25)), 480000);
  assert_int_equal(netsim_time_tx(9000, NETSIM_GBPS(10)), 7200000);
  assert_int_equal(netsim_time_tx(0, NETSIM_GBPS(10)), 0);
  /* Fractions are rounded up: 8e12 / 3e9 = 2666.67 ps. */
  assert_int_equal(netsim_time_tx(1, NETSIM_GBPS(3)), 2667);
  assert_int_equal(netsim_time_tx(3, NETSIM_GBPS(3)), 8000);
  /* One bit per second: a byte takes 8 s. */
  assert_int_equal(netsim_time_tx(1, 1), 8 * NETSIM_S);
}

static void test_time_tx_no_overflow(void **state) {
  (void)state;
  /* 400 Gb/s for 10 s: 5e11 bytes, 1e13 ps; bytes * 8e12 would need 102
     bits. */
  assert_int_equal(netsim_time_tx(500000000000ULL, NETSIM_GBPS(400)),
                   10 * NETSIM_S);
  /* The highest rate, the largest remainders. */
  assert_int_equal(netsim_time_tx(123456789012345ULL, NETSIM_RATE_MAX),
                   ns_ceil_tx(123456789012345ULL, NETSIM_RATE_MAX));
  assert_int_equal(netsim_time_tx(987654321ULL, NETSIM_RATE_MAX - 1),
                   ns_ceil_tx(987654321ULL, NETSIM_RATE_MAX - 1));
  /* An odd rate over an hour's worth of bytes. */
  assert_int_equal(netsim_time_tx(45000000000000ULL, 99999999977ULL),
                   ns_ceil_tx(45000000000000ULL, 99999999977ULL));
}

static void test_time_tx_random(void **state) {
  uint64_t s = tu_seed("test_time_tx_random");
  int i;

  (void)state;
  for (i = 0; i < 100000; ++i) {
    uint64_t rate = 1 + tu_rand(&s) % NETSIM_RATE_MAX;
    uint64_t bytes = tu_rand(&s) >> (tu_rand(&s) % 64);
    /* Keep the result within 64 bits of picoseconds. */
    if (bytes / (rate / 8 + 1) > 1000000ULL) {
      bytes = tu_rand(&s) % (rate + 1);
    }
    tu_assert(netsim_time_tx(bytes, rate) == ns_ceil_tx(bytes, rate));
  }
}

static void test_time_bytes_inverse(void **state) {
  uint64_t s = tu_seed("test_time_bytes_inverse");
  int i;

  (void)state;
  assert_int_equal(netsim_time_bytes(120000, NETSIM_GBPS(100)), 1500);
  assert_int_equal(netsim_time_bytes(119999, NETSIM_GBPS(100)), 1499);
  assert_int_equal(netsim_time_bytes(NETSIM_S, NETSIM_GBPS(400)),
                   50000000000ULL);
  for (i = 0; i < 100000; ++i) {
    uint64_t rate = 1 + tu_rand(&s) % NETSIM_GBPS(1000);
    uint64_t bytes = tu_rand(&s) % 100000000ULL;
    netsim_time t = netsim_time_tx(bytes, rate);
    /* tx rounds up: the bytes fit in t, and not in t - 1 (unless exact). */
    tu_assert(netsim_time_bytes(t, rate) >= bytes);
    if (t > 0) {
      tu_assert(netsim_time_bytes(t - 1, rate) < bytes);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_time_tx_exact),
      cmocka_unit_test(test_time_tx_no_overflow),
      cmocka_unit_test(test_time_tx_random),
      cmocka_unit_test(test_time_bytes_inverse),
  };
  return cmocka_run_group_tests_name("netsim_time", tests, NULL, NULL);
}
