/*
 * test_impair.c: the srd backend's impairment layer in virtual time:
 * loss and duplication rates, the blackhole, FIFO under jitter,
 * reordering, the rate cap's serialisation and tail drop, the holding
 * pool, corruption (its rate, one flipped bit spread over every bit, the
 * caller's bytes untouched, the other draws unchanged), delayed
 * duplicates, and that a seed fixes every draw.
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
        impair_hold(&imp, (uint16_t)(i % 2), (uint32_t)i, iov, 2, at[i], 0), 0);
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
    assert_int_equal(impair_hold(&imp, 0, 0, &iov, 1, 5, 0), 0);
  }
  assert_int_equal(impair_hold(&imp, 0, 0, &iov, 1, 5, 0), -ENOBUFS);
  assert_int_equal(imp.queue_drops, 1);
  impair_fini(&imp);
  assert_int_equal(impair_init(&imp, cfg, 1, 1, 4, 2048), 0);
  /* Longer than a pool buffer: dropped, counted. */
  assert_int_equal(impair_hold(&imp, 0, 0, &big, 1, 5, 0), -ENOBUFS);
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

/* popcount8 counts the bits set in |b|. */
static int popcount8(uint8_t b) {
  int n = 0;

  for (; b; b &= (uint8_t)(b - 1)) {
    ++n;
  }
  return n;
}

static void test_impair_corrupt_flips_one_bit_of_a_copy(void **state) {
  uint64_t seed = tu_seed("impair_corrupt_flips_one_bit_of_a_copy");
  uint64_t s = seed ^ 0x1234;
  xport_impair c = {.corrupt = 0.05, .dup = 0.1};
  impair imp;
  impair_verdict v;
  impair_pkt p;
  uint8_t hdr[64], pay[1400], keep_hdr[64], keep_pay[1400];
  uint64_t n = 40000, i, copies = 0, flipped = 0, in_hdr = 0, in_front = 0;
  uint64_t by_bit[8] = {0};
  int k;

  (void)state;
  setup(&imp, &c, 4, seed);
  for (i = 0; i < n; ++i) {
    /* A header and a payload apart, as the driver sends them (the
       payload is the user's buffer). */
    size_t hl = 16 + (size_t)(tu_rand(&s) % 49);
    size_t pl = (size_t)(tu_rand(&s) % (sizeof(pay) + 1));
    struct iovec iov[2] = {{hdr, hl}, {pay, pl}};
    size_t len = hl + pl, j;

    for (j = 0; j < hl; ++j) {
      hdr[j] = (uint8_t)tu_rand(&s);
    }
    for (j = 0; j < pl; ++j) {
      pay[j] = (uint8_t)tu_rand(&s);
    }
    memcpy(keep_hdr, hdr, hl);
    memcpy(keep_pay, pay, pl);
    impair_judge(&imp, (uint16_t)(i % 4), len, i * US, &v);
    tu_assert(v.copies == 1 || v.copies == 2);
    copies += (uint64_t)v.copies;
    for (k = 0; k < v.copies; ++k) {
      uint64_t diff_bits = 0, first = UINT64_MAX;
      if (!v.flip[k]) {
        continue;
      }
      ++flipped;
      tu_assert(v.flip[k] >= 1 && v.flip[k] <= len * 8);
      tu_assert(impair_hold(&imp, (uint16_t)(i % 4), 7, iov, 2, i * US,
                            v.flip[k]) == 0);
      tu_assert(impair_pop(&imp, i * US, &p) == 1);
      tu_assert(p.len == len);
      /* The copy differs from what was sent in exactly one bit, the
         verdict's; the caller's bytes are as they were. */
      for (j = 0; j < len; ++j) {
        uint8_t sent = j < hl ? hdr[j] : pay[j - hl];
        int d = popcount8((uint8_t)(sent ^ p.data[j]));
        if (d && first == UINT64_MAX) {
          first = j * 8;
          while (!((sent ^ p.data[j]) & (1u << (first - j * 8)))) {
            ++first;
          }
        }
        diff_bits += (uint64_t)d;
      }
      tu_assert(diff_bits == 1);
      tu_assert(first == v.flip[k] - 1);
      tu_assert(memcmp(hdr, keep_hdr, hl) == 0);
      tu_assert(memcmp(pay, keep_pay, pl) == 0);
      impair_release(&imp, p.data);
      in_hdr += first / 8 < hl;
      in_front += first < len * 4; /* the first half of the bits */
      ++by_bit[first % 8];
    }
  }
  printf("  %llu of %llu datagrams corrupted, %llu in the header\n",
         (unsigned long long)flipped, (unsigned long long)copies,
         (unsigned long long)in_hdr);
  tu_assert(flipped == imp.corrupted);
  tu_assert(within(flipped, copies, 0.05));
  /* Uniform over the bits: each bit of a byte alike, each half of the
     datagram alike, the header hit too. */
  for (k = 0; k < 8; ++k) {
    tu_assert(within(by_bit[k], flipped, 1.0 / 8));
  }
  tu_assert(within(in_front, flipped, 0.5));
  tu_assert(in_hdr > 0 && in_hdr < flipped);
  impair_fini(&imp);
}

static void test_impair_corrupt_leaves_other_draws(void **state) {
  uint64_t seed = tu_seed("impair_corrupt_leaves_other_draws");
  xport_impair c = {.loss = 0.1,
                    .dup = 0.1,
                    .reorder = 0.1,
                    .reorder_delay_ns = 7 * US,
                    .jitter_ns = 20 * US};
  xport_impair cc = c;
  impair a, b;
  impair_verdict va, vb;
  uint64_t flips = 0;
  int i;

  (void)state;
  cc.corrupt = 0.3;
  setup(&a, &c, 4, seed);
  setup(&b, &cc, 4, seed);
  for (i = 0; i < 20000; ++i) {
    uint64_t now = (uint64_t)i * US;
    impair_judge(&a, (uint16_t)(i % 4), 300, now, &va);
    impair_judge(&b, (uint16_t)(i % 4), 300, now, &vb);
    /* Turning corruption on changes what is flipped, nothing else. */
    tu_assert(va.copies == vb.copies && va.at == vb.at &&
              va.dup_at == vb.dup_at);
    tu_assert(va.flip[0] == 0 && va.flip[1] == 0);
    flips += (vb.flip[0] != 0) + (vb.flip[1] != 0);
    /* A dropped datagram is never drawn for. */
    tu_assert(vb.copies == 2 || vb.flip[1] == 0);
    tu_assert(vb.copies >= 1 || vb.flip[0] == 0);
  }
  tu_assert(flips > 0);
  tu_assert(a.lost == b.lost && a.dup == b.dup && a.delayed == b.delayed);
  impair_fini(&a);
  impair_fini(&b);
}

static void test_impair_dup_delay_sends_the_copy_late(void **state) {
  uint64_t seed = tu_seed("impair_dup_delay_sends_the_copy_late");
  xport_impair plain = {.dup = 0.1, .delay_ns = 10 * US, .jitter_ns = 5 * US};
  xport_impair late = plain;
  impair a, b;
  impair_verdict va, vb;
  impair_pkt p;
  uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct iovec iov = {d, sizeof(d)};
  uint64_t dups = 0, popped = 0, held = 0, i, now;

  (void)state;
  late.dup_delay_ns = 500 * US;
  setup(&a, &plain, 1, seed);
  assert_int_equal(impair_init(&b, (xport_impair[]){late}, 1, seed, 4096, 64),
                   0);
  for (i = 0; i < 3000; ++i) {
    now = i * US;
    impair_judge(&a, 0, sizeof(d), now, &va);
    impair_judge(&b, 0, sizeof(d), now, &vb);
    tu_assert(va.copies == vb.copies);
    /* The original keeps its time (and the FIFO); without the delay the
       copy leaves with it. */
    tu_assert(va.at == vb.at && va.dup_at == va.at);
    if (vb.copies == 2) {
      ++dups;
      tu_assert(vb.dup_at == vb.at + 500 * US);
      d[0] = (uint8_t)i;
      tu_assert(impair_hold(&b, 0, (uint32_t)i, &iov, 1, vb.dup_at, 0) == 0);
      ++held;
    } else {
      tu_assert(vb.dup_at == vb.at);
    }
    /* Copies come out at their time, never before. */
    while (impair_pop(&b, now, &p)) {
      tu_assert(p.at <= now && p.at + 1 * US > now);
      tu_assert(p.data[0] == (uint8_t)p.peer);
      impair_release(&b, p.data);
      ++popped;
    }
    tu_assert(impair_next(&b) > now);
  }
  tu_assert(dups == b.dup && dups == b.dup_delayed && a.dup_delayed == 0);
  tu_assert(within(dups, 3000, 0.1));
  /* The last 500 us worth are still waiting. */
  tu_assert(popped < held && held - popped <= 500 / 10 * 3 + 20);
  impair_fini(&a);
  impair_fini(&b);
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
      cmocka_unit_test(test_impair_corrupt_flips_one_bit_of_a_copy),
      cmocka_unit_test(test_impair_corrupt_leaves_other_draws),
      cmocka_unit_test(test_impair_dup_delay_sends_the_copy_late),
  };
  return cmocka_run_group_tests_name("impair", tests, NULL, NULL);
}
