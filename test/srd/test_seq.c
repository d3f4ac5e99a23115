/*
 * test_seq.c: serial number arithmetic on 32-bit sequence numbers
 * (srd_seq_lt and friends, RFC 1982) across the 2^32 wrap, and the early
 * wrap of first sequence numbers (srd_wrap_early).
 */
#include <stdlib.h>

#include "testutil.h"

#include "srd_ep.h"
#include "srd_macro.h"

/* check_before asserts every comparison for |a| strictly before |b|. */
static void check_before(uint32_t a, uint32_t b) {
  assert_true(srd_seq_lt(a, b));
  assert_true(srd_seq_le(a, b));
  assert_false(srd_seq_gt(a, b));
  assert_false(srd_seq_ge(a, b));
  assert_false(srd_seq_lt(b, a));
  assert_false(srd_seq_le(b, a));
  assert_true(srd_seq_gt(b, a));
  assert_true(srd_seq_ge(b, a));
}

static void test_seq_equal(void **state) {
  static const uint32_t v[] = {0,           1,           0x7FFFFFFFu,
                               0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  size_t i;
  (void)state;

  for (i = 0; i < srd_arraylen(v); ++i) {
    assert_false(srd_seq_lt(v[i], v[i]));
    assert_true(srd_seq_le(v[i], v[i]));
    assert_false(srd_seq_gt(v[i], v[i]));
    assert_true(srd_seq_ge(v[i], v[i]));
  }
}

static void test_seq_plain(void **state) {
  (void)state;

  check_before(0, 1);
  check_before(1, 2);
  check_before(100, 200);
  check_before(0x7FFFFFFEu, 0x7FFFFFFFu);
  check_before(0x80000000u, 0x80000001u);
  check_before(0xFFFFFFFEu, 0xFFFFFFFFu);
}

static void test_seq_wrap(void **state) {
  (void)state;

  /* Just below 2^32 is before just above 0. */
  check_before(0xFFFFFFFFu, 0);
  check_before(0xFFFFFFFFu, 1);
  check_before(0xFFFFFF00u, 0x000000FFu);
  check_before(0xFFFFFFF0u, 0x10u);
  /* Unsigned order says the opposite. */
  assert_true(0xFFFFFFFFu > 0u);
  /* The farthest apart two numbers can be and still be ordered. */
  check_before(0, 0x7FFFFFFFu);
  check_before(0x80000000u, 0xFFFFFFFFu);
  check_before(0x80000001u, 0);
  check_before(0xFFFFFFFFu, 0x7FFFFFFEu);
  /* 0x7FFFFFFF is after 0, but 0x80000001 is 2^31 - 1 below 0 modulo
     2^32, so it is before: the order is by distance, not by value. */
  assert_true(srd_seq_gt(0x7FFFFFFFu, 0));
  assert_true(srd_seq_gt(0, 0x80000001u));
}

static void test_seq_random(void **state) {
  uint64_t s = tu_seed("test_seq_random");
  int i;
  (void)state;

  for (i = 0; i < 100000; ++i) {
    uint32_t a = (uint32_t)tu_rand(&s);
    uint32_t d = (uint32_t)(tu_rand(&s) % 0x7FFFFFFFu) + 1; /* 1..2^31-1 */
    uint32_t b = a + d;
    tu_assert(srd_seq_lt(a, b));
    tu_assert(srd_seq_le(a, b));
    tu_assert(!srd_seq_ge(a, b));
    tu_assert(!srd_seq_gt(a, b));
    tu_assert(srd_seq_gt(b, a));
    tu_assert(srd_seq_ge(b, a));
    tu_assert(!srd_seq_lt(b, a));
    tu_assert(!srd_seq_le(b, a));
    tu_assert(srd_seq_le(a, a) && !srd_seq_lt(a, a));
  }
}

static void test_seq_wrap_early(void **state) {
  uint32_t r;
  (void)state;

  assert_int_equal(srd_wrap_early(0), 0xFFFFFF00u);
  assert_int_equal(srd_wrap_early(1), 0xFFFFFF01u);
  assert_int_equal(srd_wrap_early(0xFF), 0xFFFFFFFFu);
  assert_int_equal(srd_wrap_early(0x100), 0xFFFFFF00u);
  assert_int_equal(srd_wrap_early(0x12345678u), 0xFFFFFF78u);
  assert_int_equal(srd_wrap_early(0xFFFFFFFFu), 0xFFFFFFFFu);
  for (r = 0; r < 0x400; ++r) {
    uint32_t v = srd_wrap_early(r * 0x9E3779B9u);
    /* At most 256 steps below 2^32: the wrap comes within 256 numbers. */
    assert_true(v >= 0xFFFFFF00u);
    assert_true((uint32_t)(0u - v) >= 1 && (uint32_t)(0u - v) <= 256);
    assert_true(srd_seq_lt(v, 0));
    assert_true(srd_seq_lt(v, v + 256));
    assert_int_equal(v & 0xFFu, (r * 0x9E3779B9u) & 0xFFu);
  }
}

static void test_seq_is_pow2(void **state) {
  uint32_t i;
  (void)state;

  assert_false(srd_is_pow2(0));
  for (i = 0; i < 32; ++i) {
    assert_true(srd_is_pow2(1u << i));
    if (i >= 2) {
      assert_false(srd_is_pow2((1u << i) - 1));
      assert_false(srd_is_pow2((1u << i) + 1));
    }
  }
  assert_false(srd_is_pow2(0xFFFFFFFFu));
  assert_false(srd_is_pow2(3));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seq_equal),      cmocka_unit_test(test_seq_plain),
      cmocka_unit_test(test_seq_wrap),       cmocka_unit_test(test_seq_random),
      cmocka_unit_test(test_seq_wrap_early), cmocka_unit_test(test_seq_is_pow2),
  };

  return cmocka_run_group_tests_name("seq", tests, NULL, NULL);
}
