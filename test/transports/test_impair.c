/*
 * test_impair.c: the srd backend's impairment layer in virtual time:
 * loss and duplication rates, the blackhole, FIFO under jitter,
 * reordering, the rate cap's serialisation and tail drop, the holding
 * pool, and that a seed fixes every draw.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "testutil.h"

#include "impair.h"

#define US 1000ull

static void setup(impair *imp, const xport_impair *one, uint32_t n_paths,
                  uint64_t seed) {
  xport_impair cfg[XPORT_MAX_PATHS];
  uint32_t i;

  memset(cfg, 0, sizeof(cfg));
  for (i = 0; i < n_paths; ++i) {
    cfg[i] = *one;
  }
  assert_int_equal(impair_init(imp, cfg, n_paths, seed, 64, 2048), 0);
}

/* within reports whether |k| successes of |n| draws at |p| lie within
   six standard deviations (a false failure is then ~1e-9). */
static int within(uint64_t k, uint64_t n, double p) {
  double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));
  return fabs((double)k - mean) <= 6 * sd + 1;
}

static void test_impair_loss_and_dup_rates(void **state) {
  uint64_t seed = tu_seed("impair_loss_and_dup_rates");
  xport_impair c = {.loss = 0.05, .dup = 0.02};
  impair imp;
  impair_verdict v;
  uint64_t lost = 0, dup = 0, i, n = 200000;

  (void)state;
  setup(&imp, &c, 4, seed);
  for (i = 0; i < n; ++i) {
    impair_judge(&imp, (uint16_t)(i % 4), 1000, i * US, &v);
    lost += v.copies == 0;
    dup += v.copies == 2;
    tu_assert(v.at == i * US); /* no delay configured: leaves at once */
  }
  tu_assert(lost == imp.lost && dup == imp.dup);
  tu_assert(within(lost, n, 0.05));
  /* Duplication is drawn among the survivors. */
  tu_assert(within(dup, n - lost, 0.02));
  impair_fini(&imp);
}

static void test_impair_blackhole_drops_all(void **state) {
  xport_impair cfg[XPORT_MAX_PATHS];
  impair imp;
  impair_verdict v;
  int i;

  (void)state;
  memset(cfg, 0, sizeof(cfg));
  cfg[1].blackhole = 1;
  assert_int_equal(impair_init(&imp, cfg, 3, 1, 8, 2048), 0);
  for (i = 0; i < 1000; ++i) {
    impair_judge(&imp, (uint16_t)(i % 3), 100, (uint64_t)i, &v);
    assert_int_equal(v.copies, i % 3 == 1 ? 0 : 1);
  }
  assert_int_equal(imp.blackholed, 333);
  assert_int_equal(imp.lost, 0);
  assert_false(impair_path_delays(&imp, 0));
  impair_fini(&imp);
}

static void test_impair_jitter_keeps_fifo(void **state) {
  uint64_t seed = tu_seed("impair_jitter_keeps_fifo");
  xport_impair c = {.delay_ns = 50 * US, .jitter_ns = 40 * US};
  impair imp;
  impair_verdict v;
  uint64_t prev = 0, i, spread = 0;

  (void)state;
  setup(&imp, &c, 1, seed);
  assert_true(impair_path_delays(&imp, 0));
  for (i = 0; i < 10000; ++i) {
    uint64_t now = i * US;
    impair_judge(&imp, 0, 100, now, &v);
    tu_assert(v.copies == 1);
    tu_assert(v.at >= now + 50 * US && v.at <= now + 90 * US);
    tu_assert(v.at >= prev); /* never overtakes an earlier one */
    spread += v.at - now - 50 * US;
    prev = v.at;
  }
  /* The jitter is really drawn, not always zero or always the max. */
  tu_assert(spread / 10000 > 10 * US && spread / 10000 < 35 * US);
  impair_fini(&imp);
}

static void test_impair_reorder_overtakes(void **state) {
  uint64_t seed = tu_seed("impair_reorder_overtakes");
  xport_impair c = {.reorder = 0.1, .reorder_delay_ns = 100 * US};
  impair imp;
  impair_verdict v;
  uint64_t held = 0, i;

  (void)state;
  setup(&imp, &c, 1, seed);
  for (i = 0; i < 10000; ++i) {
    impair_judge(&imp, 0, 100, i * US, &v);
    tu_assert(v.at == i * US || v.at == i * US + 100 * US);
    held += v.at != i * US;
  }
  tu_assert(within(held, 10000, 0.1));
  tu_assert(imp.delayed == held);
  impair_fini(&imp);
}

static void test_impair_rate_cap_serialises_and_drops(void **state) {
  /* 1 Gb/s: a 1250-byte datagram takes 10 us; a 5000-byte queue (the
     one being sent included) holds four. */
  xport_impair c = {.rate_bps = 1000000000ull, .queue_bytes = 5000};
  impair imp;
  impair_verdict v;
  int i, sent = 0;

  (void)state;
  setup(&imp, &c, 1, 3);
  for (i = 0; i < 10; ++i) { /* a burst at t = 0 */
    impair_judge(&imp, 0, 1250, 0, &v);
    if (v.copies) {
      ++sent;
      assert_int_equal(v.at, (uint64_t)sent * 10 * US);
    }
  }
  assert_int_equal(sent, 4);
  assert_int_equal(imp.queue_drops, 6);
  /* Once the queue has drained, the next one goes straight through. */
  impair_judge(&imp, 0, 1250, 1000 * US, &v);
  assert_int_equal(v.copies, 1);
  assert_int_equal(v.at, 1010 * US);
  impair_fini(&imp);
}

static void test_impair_hold_pops_in_time_order(void **state) {
  xport_impair c = {0};
  impair imp;
  impair_pkt p;
  uint8_t a[3] = {1, 2, 3}, b[2] = {9, 8};
  struct iovec iov[2] = {{a, 3}, {b, 2}};
  uint64_t at[] = {50, 10, 30, 10, 70};
  int i;

  (void)state;
  setup(&imp, &c, 2, 1);
  for (i = 0; i < 5; ++i) {
    assert_int_equal(
        impair_hold(&imp, (uint16_t)(i % 2), (uint32_t)i, iov, 2, at[i]), 0);
  }
  assert_int_equal(impair_next(&imp), 10);
  assert_int_equal(impair_pop(&imp, 9, &p), 0);
  /* Equal times leave in the order they were held. */
  assert_int_equal(impair_pop(&imp, 10, &p), 1);
  assert_int_equal(p.peer, 1);
  assert_int_equal(p.len, 5);
  assert_memory_equal(p.data, "\x01\x02\x03\x09\x08", 5);
  impair_release(&imp, p.data);
  assert_int_equal(impair_pop(&imp, 10, &p), 1);
  assert_int_equal(p.peer, 3);
  impair_release(&imp, p.data);
  assert_int_equal(impair_pop(&imp, 100, &p), 1);
  assert_int_equal(p.at, 30);
  impair_release(&imp, p.data);
  assert_int_equal(impair_pop(&imp, 100, &p), 1);
  assert_int_equal(p.at, 50);
  impair_release(&imp, p.data);
  assert_int_equal(impair_pop(&imp, 100, &p), 1);
  assert_int_equal(p.at, 70);
  impair_release(&imp, p.data);
  assert_int_equal(impair_next(&imp), UINT64_MAX);
  impair_fini(&imp);
}

static void test_impair_pool_full_is_a_drop(void **state) {
  xport_impair cfg[XPORT_MAX_PATHS];
  impair imp;
  uint8_t d[16] = {0};
  struct iovec iov = {d, sizeof(d)}, big = {d, 4096};
  int i;

  (void)state;
  memset(cfg, 0, sizeof(cfg));
  assert_int_equal(impair_init(&imp, cfg, 1, 1, 4, 2048), 0);
  for (i = 0; i < 4; ++i) {
    assert_int_equal(impair_hold(&imp, 0, 0, &iov, 1, 5), 0);
  }
  assert_int_equal(impair_hold(&imp, 0, 0, &iov, 1, 5), -ENOBUFS);
  assert_int_equal(imp.queue_drops, 1);
  impair_fini(&imp);
  assert_int_equal(impair_init(&imp, cfg, 1, 1, 4, 2048), 0);
  /* Longer than a pool buffer: dropped, counted. */
  assert_int_equal(impair_hold(&imp, 0, 0, &big, 1, 5), -ENOBUFS);
  assert_int_equal(imp.queue_drops, 1);
  impair_fini(&imp);
}

static void test_impair_seed_fixes_every_draw(void **state) {
  uint64_t seed = tu_seed("impair_seed_fixes_every_draw");
  xport_impair c = {.loss = 0.1,
                    .dup = 0.1,
                    .reorder = 0.1,
                    .reorder_delay_ns = 7 * US,
                    .delay_ns = 3 * US,
                    .jitter_ns = 20 * US};
  impair a, b, d;
  impair_verdict va, vb, vd;
  int i, differ = 0;

  (void)state;
  setup(&a, &c, 8, seed);
  setup(&b, &c, 8, seed);
  setup(&d, &c, 8, seed + 1);
  for (i = 0; i < 20000; ++i) {
    uint64_t now = (uint64_t)i * US;
    impair_judge(&a, (uint16_t)(i % 8), 500, now, &va);
    impair_judge(&b, (uint16_t)(i % 8), 500, now, &vb);
    impair_judge(&d, (uint16_t)(i % 8), 500, now, &vd);
    tu_assert(va.copies == vb.copies && va.at == vb.at);
    differ += va.copies != vd.copies || va.at != vd.at;
  }
  tu_assert(differ > 1000);
  impair_fini(&a);
  impair_fini(&b);
  impair_fini(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_impair_loss_and_dup_rates),
      cmocka_unit_test(test_impair_blackhole_drops_all),
      cmocka_unit_test(test_impair_jitter_keeps_fifo),
      cmocka_unit_test(test_impair_reorder_overtakes),
      cmocka_unit_test(test_impair_rate_cap_serialises_and_drops),
      cmocka_unit_test(test_impair_hold_pops_in_time_order),
      cmocka_unit_test(test_impair_pool_full_is_a_drop),
      cmocka_unit_test(test_impair_seed_fixes_every_draw),
  };
  return cmocka_run_group_tests_name("impair", tests, NULL, NULL);
}
