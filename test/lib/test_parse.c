/*
 * test_parse.c: tool_parse.h, the values the tools read: whole numbers,
 * sizes (exact to 64 bits, K/M/G), decimals, numbers with units (also with
 * the scenario files' rules: blanks, any case, no sign), durations and
 * rates in the caller's unit, comma lists and index masks; every accepted
 * form and every error code.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "tool_parse.h"

static void test_parse_u64(void **state) {
  uint64_t v = 42;

  (void)state;
  assert_int_equal(tool_parse_u64("0", 0, 10, &v), 0);
  assert_true(v == 0);
  assert_int_equal(tool_parse_u64("007", 0, 10, &v), 0);
  assert_true(v == 7);
  assert_int_equal(tool_parse_u64("18446744073709551615", 0, UINT64_MAX, &v),
                   0);
  assert_true(v == UINT64_MAX);
  v = 42;
  /* Not numbers: the value is left alone. */
  assert_int_equal(tool_parse_u64("", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("-1", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("+1", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_u64(" 1", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("1 ", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("0x10", 0, 100, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("1K", 0, 10000, &v), -EINVAL);
  assert_int_equal(tool_parse_u64("abc", 0, 10, &v), -EINVAL);
  /* Out of range, and beyond 64 bits. */
  assert_int_equal(tool_parse_u64("11", 0, 10, &v), -ERANGE);
  assert_int_equal(tool_parse_u64("0", 1, 10, &v), -ERANGE);
  assert_int_equal(tool_parse_u64("18446744073709551616", 0, UINT64_MAX, &v),
                   -ERANGE);
  assert_true(v == 42);
}

static void test_parse_size(void **state) {
  static const struct {
    const char *s;
    uint64_t v;
  } ok[] = {{"0", 0},
            {"9000", 9000},
            {"64K", 65536},
            {"64k", 65536},
            {"1M", 1048576},
            {"1m", 1048576},
            {"2G", 2147483648ull},
            {"2g", 2147483648ull},
            {"17179869183G", 17179869183ull << 30},
            {"18446744073709551615", UINT64_MAX}};
  static const char *const bad[] = {"",   "K",    "1.5K", "12X", "1KB",
                                    "-1", " 1",   "1 ",   "+1",  "1 K",
                                    "1T", "0x10", "1e3"};
  uint64_t v = 42;
  size_t i;

  (void)state;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); ++i) {
    assert_int_equal(tool_parse_size(ok[i].s, 0, UINT64_MAX, &v), 0);
    assert_true(v == ok[i].v);
  }
  v = 42;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    assert_int_equal(tool_parse_size(bad[i], 0, UINT64_MAX, &v), -EINVAL);
  }
  /* The product must fit 64 bits, and the bounds apply to it. */
  assert_int_equal(tool_parse_size("17179869184G", 0, UINT64_MAX, &v), -ERANGE);
  assert_int_equal(tool_parse_size("99999999999999999999", 0, UINT64_MAX, &v),
                   -ERANGE);
  assert_int_equal(tool_parse_size("257K", 0, 256 * 1024, &v), -ERANGE);
  assert_int_equal(tool_parse_size("0", 1, 64, &v), -ERANGE);
  assert_true(v == 42);
  assert_int_equal(tool_parse_size("256K", 0, 256 * 1024, &v), 0);
  assert_true(v == 256 * 1024);
}

static void test_parse_double(void **state) {
  double v = 42;

  (void)state;
  assert_int_equal(tool_parse_double("1", 0, 100, &v), 0);
  assert_true(v == 1);
  assert_int_equal(tool_parse_double("-0.5", -1, 1, &v), 0);
  assert_true(v == -0.5);
  assert_int_equal(tool_parse_double("1e3", 0, 1e4, &v), 0);
  assert_true(v == 1000);
  assert_int_equal(tool_parse_double(".5", 0, 1, &v), 0);
  assert_true(v == 0.5);
  assert_int_equal(tool_parse_double("100", 0, 100, &v), 0);
  assert_true(v == 100);
  /* strtod's hexadecimal floats, as the tools always took them. */
  assert_int_equal(tool_parse_double("0x10", 0, 100, &v), 0);
  assert_true(v == 16);
  v = 42;
  assert_int_equal(tool_parse_double("", 0, 1, &v), -EINVAL);
  assert_int_equal(tool_parse_double("abc", 0, 1, &v), -EINVAL);
  assert_int_equal(tool_parse_double("1x", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_double(" 1", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_double("1 ", 0, 10, &v), -EINVAL);
  assert_int_equal(tool_parse_double("nan", -1e300, 1e300, &v), -EINVAL);
  assert_int_equal(tool_parse_double("inf", -1e300, HUGE_VAL, &v), -EINVAL);
  assert_int_equal(tool_parse_double("1e999", 0, HUGE_VAL, &v), -ERANGE);
  assert_int_equal(tool_parse_double("101", 0, 100, &v), -ERANGE);
  assert_int_equal(tool_parse_double("-1", 0, 100, &v), -ERANGE);
  assert_true(v == 42);
}

static void test_parse_unit_flags(void **state) {
  static const tool_unit u[] = {{"x", 2}, {"yy", 3}, {NULL, 0}};
  static const tool_unit with_bare[] = {{"", 1}, {"x", 2}, {NULL, 0}};
  const tool_unit *m = &u[0];
  double x = 0;

  (void)state;
  assert_int_equal(tool_parse_unit("1.5x", u, 0, &x, &m), 0);
  assert_true(x == 1.5 && m == &u[0]); /* the scale is not applied */
  assert_int_equal(tool_parse_unit("2yy", u, 0, &x, &m), 0);
  assert_true(x == 2 && m == &u[1]);
  /* No suffix: NULL without a "" entry, the "" entry with one. */
  assert_int_equal(tool_parse_unit("3", u, 0, &x, &m), 0);
  assert_true(x == 3 && m == NULL);
  assert_int_equal(tool_parse_unit("3", with_bare, 0, &x, &m), 0);
  assert_true(x == 3 && m == &with_bare[0]);
  assert_int_equal(tool_parse_unit("3", u, 0, &x, NULL), 0);
  /* The whole rest is the suffix. */
  assert_int_equal(tool_parse_unit("1y", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("1xx", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("1X", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("x", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("1 x", u, 0, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("1e999x", u, 0, &x, &m), -ERANGE);
  /* TOOL_UNIT_NOCASE, TOOL_UNIT_SPACE, TOOL_UNIT_UNSIGNED. */
  assert_int_equal(tool_parse_unit("1X", u, TOOL_UNIT_NOCASE, &x, &m), 0);
  assert_true(m == &u[0]);
  assert_int_equal(tool_parse_unit("1yY", u, TOOL_UNIT_NOCASE, &x, &m), 0);
  assert_true(m == &u[1]);
  assert_int_equal(tool_parse_unit("  1 x ", u, TOOL_UNIT_SPACE, &x, &m), 0);
  assert_true(x == 1 && m == &u[0]);
  assert_int_equal(tool_parse_unit(" 4 ", u, TOOL_UNIT_SPACE, &x, &m), 0);
  assert_true(x == 4 && m == NULL);
  assert_int_equal(tool_parse_unit("   ", u, TOOL_UNIT_SPACE, &x, &m), -EINVAL);
  assert_int_equal(tool_parse_unit("-1x", u, 0, &x, &m), 0);
  assert_true(x == -1);
  assert_int_equal(tool_parse_unit("-1x", u, TOOL_UNIT_UNSIGNED, &x, &m),
                   -EINVAL);
  assert_int_equal(tool_parse_unit("+1x", u, TOOL_UNIT_UNSIGNED, &x, &m),
                   -EINVAL);
  assert_int_equal(tool_parse_unit("-0", u, TOOL_UNIT_UNSIGNED, &x, &m),
                   -EINVAL);
}

/* The scenario files' sizes (netsim/scenario/scn_units.c, sim_parse_size)
   as a table: what a reader built on tool_parse_unit accepts. */
static int scn_size(const char *s, uint64_t *out) {
  static const tool_unit units[] = {
      {"", 1},        {"B", 1},         {"K", 1024},    {"KiB", 1024},
      {"M", 1 << 20}, {"MiB", 1 << 20}, {"G", 1 << 30}, {"GiB", 1 << 30},
      {"kB", 1e3},    {"MB", 1e6},      {"GB", 1e9},    {NULL, 0}};
  const tool_unit *u;
  double x;

  if (tool_parse_unit(s, units,
                      TOOL_UNIT_NOCASE | TOOL_UNIT_SPACE | TOOL_UNIT_UNSIGNED,
                      &x, &u) != 0) {
    return -1;
  }
  x *= u->scale;
  if (x > 1e15 || x != floor(x)) {
    return -1;
  }
  *out = (uint64_t)x;
  return 0;
}

static void test_parse_unit_scenario_rules(void **state) {
  uint64_t v = 0;

  (void)state;
  assert_int_equal(scn_size("64K", &v), 0);
  assert_true(v == 65536);
  assert_int_equal(scn_size(" 64 k ", &v), 0);
  assert_true(v == 65536);
  assert_int_equal(scn_size("1.5K", &v), 0);
  assert_true(v == 1536);
  assert_int_equal(scn_size("9000", &v), 0);
  assert_true(v == 9000);
  assert_int_equal(scn_size("2kb", &v), 0);
  assert_true(v == 2000);
  assert_int_equal(scn_size("1 MiB", &v), 0);
  assert_true(v == 1048576);
  assert_int_equal(scn_size("1.1B", &v), -1);
  assert_int_equal(scn_size("-1", &v), -1);
  assert_int_equal(scn_size("1X", &v), -1);
}

static void test_parse_duration(void **state) {
  double v = 42;

  (void)state;
  /* A bare number is in the caller's unit, exactly as written. */
  assert_int_equal(tool_parse_duration("10", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 10);
  assert_int_equal(tool_parse_duration("0.1", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 0.1);
  assert_int_equal(tool_parse_duration("10us", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 10);
  assert_int_equal(tool_parse_duration("1ms", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 1000);
  assert_int_equal(tool_parse_duration("500ns", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 0.5);
  assert_int_equal(tool_parse_duration("2s", TOOL_MS, 0, 1e7, &v), 0);
  assert_true(v == 2000);
  assert_int_equal(tool_parse_duration("1.5us", TOOL_NS, 0, 1e7, &v), 0);
  assert_true(v == 1500);
  assert_int_equal(tool_parse_duration("250ms", TOOL_SEC, 0, 60, &v), 0);
  assert_true(v == 0.25);
  v = 42;
  assert_int_equal(tool_parse_duration("1 ms", TOOL_US, 0, 1e7, &v), -EINVAL);
  assert_int_equal(tool_parse_duration("1MS", TOOL_US, 0, 1e7, &v), -EINVAL);
  assert_int_equal(tool_parse_duration("1min", TOOL_US, 0, 1e7, &v), -EINVAL);
  assert_int_equal(tool_parse_duration("us", TOOL_US, 0, 1e7, &v), -EINVAL);
  /* Bounds are in the caller's unit, after the conversion. */
  assert_int_equal(tool_parse_duration("11s", TOOL_US, 0, 1e7, &v), -ERANGE);
  assert_int_equal(tool_parse_duration("-1us", TOOL_US, 0, 1e7, &v), -ERANGE);
  assert_true(v == 42);
  assert_int_equal(tool_parse_duration("10s", TOOL_US, 0, 1e7, &v), 0);
  assert_true(v == 1e7);
}

static void test_parse_rate(void **state) {
  double v = 42;

  (void)state;
  assert_int_equal(tool_parse_rate("100", TOOL_GBPS, 0, 1e5, &v), 0);
  assert_true(v == 100);
  assert_int_equal(tool_parse_rate("100G", TOOL_GBPS, 0, 1e5, &v), 0);
  assert_true(v == 100);
  assert_int_equal(tool_parse_rate("25Gbps", TOOL_GBPS, 0, 1e5, &v), 0);
  assert_true(v == 25);
  assert_int_equal(tool_parse_rate("800M", TOOL_GBPS, 0, 1e5, &v), 0);
  assert_true(fabs(v - 0.8) < 1e-12);
  assert_int_equal(tool_parse_rate("1T", TOOL_GBPS, 0, 1e5, &v), 0);
  assert_true(v == 1000);
  assert_int_equal(tool_parse_rate("10Gb/s", TOOL_BPS, 0, 1e12, &v), 0);
  assert_true(v == 1e10);
  assert_int_equal(tool_parse_rate("10GB", TOOL_GBPS, 0, 1e5, &v), -EINVAL);
  assert_int_equal(tool_parse_rate("2T", TOOL_GBPS, 0, 1000, &v), -ERANGE);
}

static void test_parse_list(void **state) {
  const char *cur = "3,17,,4";
  char item[4];

  (void)state;
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 1);
  assert_string_equal(item, "3");
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 1);
  assert_string_equal(item, "17");
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), -EINVAL);
  assert_null(cur);
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 0);

  cur = "1";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 1);
  assert_string_equal(item, "1");
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 0);

  cur = "";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), -EINVAL);
  cur = ",1";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), -EINVAL);
  cur = "1,";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 1);
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), -EINVAL);
  cur = "1234";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), -ERANGE);
  cur = "123,4";
  assert_int_equal(tool_list_next(&cur, item, sizeof(item)), 1);
  assert_string_equal(item, "123");
}

static void test_parse_mask(void **state) {
  uint64_t m = 42;

  (void)state;
  assert_int_equal(tool_parse_mask("3,17,40", 64, &m), 0);
  assert_true(m == (1ull << 3 | 1ull << 17 | 1ull << 40));
  assert_int_equal(tool_parse_mask("0,0,63", 64, &m), 0);
  assert_true(m == (1ull | 1ull << 63));
  assert_int_equal(tool_parse_mask("3", 4, &m), 0);
  assert_true(m == 8);
  m = 42;
  assert_int_equal(tool_parse_mask("4", 4, &m), -ERANGE);
  assert_int_equal(tool_parse_mask("64", 64, &m), -ERANGE);
  assert_int_equal(tool_parse_mask("99999999999999999999", 64, &m), -ERANGE);
  assert_int_equal(tool_parse_mask("", 64, &m), -EINVAL);
  assert_int_equal(tool_parse_mask("1,,2", 64, &m), -EINVAL);
  assert_int_equal(tool_parse_mask("1,x", 64, &m), -EINVAL);
  assert_int_equal(tool_parse_mask("1K", 64, &m), -EINVAL);
  assert_true(m == 42);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_u64),
      cmocka_unit_test(test_parse_size),
      cmocka_unit_test(test_parse_double),
      cmocka_unit_test(test_parse_unit_flags),
      cmocka_unit_test(test_parse_unit_scenario_rules),
      cmocka_unit_test(test_parse_duration),
      cmocka_unit_test(test_parse_rate),
      cmocka_unit_test(test_parse_list),
      cmocka_unit_test(test_parse_mask),
  };
  return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
