/*
 * test_hist.c: tool_hist.h, the one percentile definition (nearest rank,
 * ceil(p * n) - 1 over the sorted samples): its edge cases (one sample,
 * p = 1, p tiny, p = 0, out-of-range p), every rank of decimal p against
 * integer arithmetic, the sort helpers, and the log-linear histogram
 * against the exact percentiles of seeded random samples within its
 * documented error bound.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "tool_hist.h"

static void test_hist_index_edges(void **state) {
  (void)state;
  /* One sample: every p is that sample. */
  assert_int_equal(tool_pct_index(1, 0), 0);
  assert_int_equal(tool_pct_index(1, 1e-12), 0);
  assert_int_equal(tool_pct_index(1, 0.5), 0);
  assert_int_equal(tool_pct_index(1, 1.0), 0);
  /* p = 1 is the largest; above 1 too. */
  assert_int_equal(tool_pct_index(1000, 1.0), 999);
  assert_int_equal(tool_pct_index(1000, 2.0), 999);
  /* p tiny, 0, negative or NaN: the smallest. */
  assert_int_equal(tool_pct_index(1000, 1e-300), 0);
  assert_int_equal(tool_pct_index(1000, 1e-9), 0);
  assert_int_equal(tool_pct_index(1000, 0), 0);
  assert_int_equal(tool_pct_index(1000, -1), 0);
  assert_int_equal(tool_pct_index(1000, NAN), 0);
  /* The smallest x with at least p*n samples <= x. */
  assert_int_equal(tool_pct_index(4, 0.5), 1); /* {1,2,3,4}: 2 */
  assert_int_equal(tool_pct_index(5, 0.5), 2); /* the middle */
  assert_int_equal(tool_pct_index(100, 0.99), 98);
  assert_int_equal(tool_pct_index(101, 0.99), 99);
  assert_int_equal(tool_pct_index(1000, 0.999), 998);
  assert_int_equal(tool_pct_index(999, 0.999), 998); /* 998.001 */
  assert_int_equal(tool_pct_index(100, 0.07), 6);    /* 0.07 * 100 = 7 */
  assert_int_equal(tool_pct_index(2, 0.5000001), 1);
  assert_int_equal(tool_pct_index(10, 0.01), 0);
}

/* Every p = a / 1000 and every n up to 600: the rank is ceil(a * n /
   1000) - 1 computed in integers, the decimal product the definition
   means, whatever binary makes of a / 1000. */
static void test_hist_index_decimal_ranks(void **state) {
  uint64_t a, n;

  (void)state;
  for (a = 1; a <= 1000; ++a) {
    for (n = 1; n <= 600; ++n) {
      uint64_t k = (a * n + 999) / 1000 - 1;
      if (tool_pct_index((size_t)n, (double)a / 1000.0) != k) {
        fail_msg("p = %" PRIu64 "/1000, n = %" PRIu64 ": index %zu, want "
                 "%" PRIu64,
                 a, n, tool_pct_index((size_t)n, (double)a / 1000.0), k);
      }
    }
  }
}

static void test_hist_pct_arrays(void **state) {
  uint64_t u[] = {5, 1, 4, 2, 3};
  double d[] = {0.5, NAN, -1, 2};
  float f[] = {3, 1, 2};

  (void)state;
  tool_sort_u64(u, 5);
  assert_true(u[0] == 1 && u[4] == 5);
  assert_true(tool_pct_u64(u, 5, 0.5) == 3);
  assert_true(tool_pct_u64(u, 5, 0.99) == 5);
  assert_true(tool_pct_u64(u, 5, 0.2) == 1);
  assert_true(tool_pct_u64(u, 5, 0.21) == 2);
  assert_true(tool_pct_u64(u, 0, 0.5) == 0);
  tool_sort_double(d, 4);
  assert_true(d[0] == -1 && d[1] == 0.5 && d[2] == 2 && isnan(d[3]));
  assert_true(tool_pct_double(d, 3, 0.5) == 0.5);
  assert_true(tool_pct_double(d, 3, 1.0) == 2);
  assert_true(tool_pct_double(d, 0, 1.0) == 0);
  tool_sort_float(f, 3);
  assert_true(tool_pct_float(f, 3, 0.34) == 2);
  assert_true(tool_pct_float(f, 3, 0.33) == 1);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* check_bound asserts that |r| is |x| read from a histogram of |s|
   sub-bits: x <= r < x + x * 2^-s, and r == x below 2^(s+1). */
static void check_bound(uint64_t x, uint64_t r, unsigned s) {
  tu_assert(r >= x);
  if (x >> (s + 1) == 0) {
    tu_assert(r == x);
  } else {
    tu_assert((double)(r - x) < ldexp((double)x, -(int)s));
  }
}

static void test_hist_matches_exact(void **state) {
  static const double ps[] = {0,   1e-9, 0.01,  0.1,    0.5,
                              0.9, 0.99, 0.999, 0.9999, 1.0};
  static const unsigned bits[] = {1, 3, 7, 10, 14};
  uint64_t seed = tu_seed("hist_matches_exact"), *v;
  size_t n = 200000, i, b, k;

  (void)state;
  v = malloc(n * sizeof(*v));
  assert_non_null(v);
  for (b = 0; b < sizeof(bits) / sizeof(bits[0]); ++b) {
    tool_hist h;
    size_t m = b % 2 ? n : 1 + tu_rand(&seed) % 50;
    assert_int_equal(tool_hist_init(&h, bits[b]), 0);
    for (i = 0; i < m; ++i) {
      /* Log-uniform over 64 bits: every bucket range gets samples. */
      uint64_t r = tu_rand(&seed);
      v[i] = r >> (tu_rand(&seed) % 64);
      tool_hist_record(&h, v[i]);
    }
    qsort(v, m, sizeof(*v), cmp_u64);
    tu_assert(h.total == m && h.min == v[0] && h.max == v[m - 1]);
    for (k = 0; k < sizeof(ps) / sizeof(ps[0]); ++k) {
      check_bound(tool_pct_u64(v, m, ps[k]), tool_hist_pct(&h, ps[k]), bits[b]);
    }
    tu_assert(tool_hist_pct(&h, 1.0) == v[m - 1]);
    tool_hist_fini(&h);
  }
  free(v);
}

static void test_hist_one_sample_and_extremes(void **state) {
  tool_hist h;

  (void)state;
  assert_int_equal(tool_hist_init(&h, 7), 0);
  assert_true(tool_hist_pct(&h, 0.5) == 0); /* nothing recorded */
  assert_true(tool_hist_mean(&h) == 0);
  tool_hist_record(&h, 123456789);
  assert_true(tool_hist_pct(&h, 1e-9) == 123456789);
  assert_true(tool_hist_pct(&h, 0.5) == 123456789);
  assert_true(tool_hist_pct(&h, 1.0) == 123456789);
  tool_hist_reset(&h);
  assert_true(h.total == 0);
  tool_hist_record(&h, UINT64_MAX);
  tool_hist_record(&h, 0);
  assert_true(tool_hist_pct(&h, 0.5) == 0);
  assert_true(tool_hist_pct(&h, 1.0) == UINT64_MAX);
  tool_hist_record_n(&h, 1000, 98);
  tool_hist_record_n(&h, 5, 0);
  assert_true(h.total == 100);
  assert_true(tool_hist_pct(&h, 0.01) == 0);
  check_bound(1000, tool_hist_pct(&h, 0.02), 7);
  check_bound(1000, tool_hist_pct(&h, 0.99), 7);
  assert_true(tool_hist_pct(&h, 0.991) == UINT64_MAX);
  tool_hist_fini(&h);
  tool_hist_fini(&h); /* twice is fine */
}

static void test_hist_merge_and_mean(void **state) {
  tool_hist a, b, all, other;
  uint64_t seed = tu_seed("hist_merge_and_mean");
  int i;

  (void)state;
  assert_int_equal(tool_hist_init(&a, 5), 0);
  assert_int_equal(tool_hist_init(&b, 5), 0);
  assert_int_equal(tool_hist_init(&all, 5), 0);
  assert_int_equal(tool_hist_init(&other, 6), 0);
  for (i = 0; i < 10000; ++i) {
    uint64_t v = tu_rand(&seed) % 1000000;
    tool_hist_record(i % 3 ? &a : &b, v);
    tool_hist_record(&all, v);
  }
  assert_int_equal(tool_hist_merge(&a, &b), 0);
  tu_assert(a.total == all.total && a.min == all.min && a.max == all.max);
  tu_assert(memcmp(a.counts, all.counts, a.n_buckets * sizeof(uint64_t)) == 0);
  tu_assert(fabs(tool_hist_mean(&a) - tool_hist_mean(&all)) < 1e-6);
  assert_int_equal(tool_hist_merge(&a, &other), -EINVAL);
  tu_assert(a.total == all.total);
  tool_hist_reset(&other);
  tool_hist_record(&other, 2);
  tool_hist_record(&other, 4);
  assert_true(tool_hist_mean(&other) == 3);
  tool_hist_fini(&a);
  tool_hist_fini(&b);
  tool_hist_fini(&all);
  tool_hist_fini(&other);
}

static void test_hist_init_bounds(void **state) {
  tool_hist h;

  (void)state;
  assert_int_equal(tool_hist_init(&h, 0), -EINVAL);
  assert_null(h.counts);
  assert_int_equal(tool_hist_init(&h, TOOL_HIST_SUB_BITS_MAX + 1), -EINVAL);
  assert_int_equal(tool_hist_init(&h, 7), 0);
  assert_true(h.n_buckets == 58 * 128); /* 58 KiB of counters */
  tool_hist_fini(&h);
  assert_int_equal(tool_hist_init(&h, TOOL_HIST_SUB_BITS_MAX), 0);
  tool_hist_record(&h, UINT64_MAX);
  assert_true(tool_hist_pct(&h, 0.5) == UINT64_MAX);
  tool_hist_fini(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hist_index_edges),
      cmocka_unit_test(test_hist_index_decimal_ranks),
      cmocka_unit_test(test_hist_pct_arrays),
      cmocka_unit_test(test_hist_matches_exact),
      cmocka_unit_test(test_hist_one_sample_and_extremes),
      cmocka_unit_test(test_hist_merge_and_mean),
      cmocka_unit_test(test_hist_init_bounds),
  };
  return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
