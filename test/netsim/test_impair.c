/*
 * test_impair.c: the impairment model (netsim/impair/impair.h), once for
 * all its users: loss and duplication rates within binomial bounds, delay
 * and jitter bounds and the FIFO, reordering, the rate cap (never
 * exceeded, tail drop at the queue limit), delayed duplicates, corruption
 * (exactly one bit, uniform over the bits) and bit errors, the blackhole
 * from its time, determinism from the seed, each impairment's stream left
 * alone by the others, and the delay queue's order and slots.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "impair.h"

#define US 1000ull

/* within reports whether |k| successes of |n| trials at |p| lie within
   six standard deviations of the mean (a false failure is ~1e-9). */
static int within(uint64_t k, uint64_t n, double p) {
  double mean = (double)n * p, sd = sqrt((double)n * p * (1 - p));
  return fabs((double)k - mean) <= 6 * sd + 1;
}

static void link_init(impair_link *l, const impair_cfg *c, uint64_t seed) {
  assert_int_equal(impair_cfg_check(c), 0);
  impair_link_init(l, c, seed, 3);
}

static void test_impair_loss_and_dup_rates(void **state) {
  uint64_t seed = tu_seed("impair_loss_and_dup_rates");
  impair_cfg c = {.loss = 0.05, .dup = 0.02};
  impair_link l;
  impair_fate f;
  uint64_t lost = 0, dup = 0, i, n = 200000;

  (void)state;
  link_init(&l, &c, seed);
  for (i = 0; i < n; ++i) {
    impair_link_send(&l, 1000, i * US, &f);
    if (f.copies == 0) {
      tu_assert(f.drop == IMPAIR_DROP_LOSS);
      ++lost;
      continue;
    }
    tu_assert(f.drop == IMPAIR_DROP_NONE);
    dup += f.copies == 2;
    /* Nothing else configured: every copy arrives at once. */
    tu_assert(f.at[0] == i * US && (f.copies == 1 || f.at[1] == i * US));
  }
  tu_assert(l.st.sent == n && l.st.lost == lost && l.st.duplicated == dup);
  tu_assert(within(lost, n, 0.05));
  /* Duplication is drawn among the survivors. */
  tu_assert(within(dup, n - lost, 0.02));
  tu_assert(l.st.delayed == 0 && l.st.queue_drops == 0);
}

static void test_impair_certain_and_impossible(void **state) {
  impair_cfg c = {.loss = 1.0};
  impair_link a, b;
  impair_fate f;
  int i;

  (void)state;
  link_init(&a, &c, 1);
  c.loss = 0;
  c.dup = 1.0;
  link_init(&b, &c, 1);
  for (i = 0; i < 1000; ++i) {
    impair_link_send(&a, 100, (uint64_t)i, &f);
    assert_int_equal(f.copies, 0);
    impair_link_send(&b, 100, (uint64_t)i, &f);
    assert_int_equal(f.copies, 2);
  }
  /* p = 0 and p = 1 draw nothing: the streams have not moved. */
  assert_int_equal(a.loss_rng.state, b.loss_rng.state);
  assert_int_equal(a.dup_rng.state, b.dup_rng.state);
  assert_int_equal(impair_threshold(0.0), 0);
  assert_int_equal(impair_threshold(-1.0), 0);
  assert_int_equal(impair_threshold(NAN), 0);
  assert_int_equal(impair_threshold(1.0), UINT64_MAX);
  assert_int_equal(impair_threshold(0.5), 1ULL << 63);
}

static void test_impair_cfg_check_and_setters(void **state) {
  impair_cfg c = {.loss = 0.1};
  impair_link l;

  (void)state;
  assert_int_equal(impair_cfg_check(&c), 0);
  c.loss = 1.5;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.loss = 0;
  c.corrupt = -0.1;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.corrupt = 0;
  c.ber = NAN;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.ber = 0;
  c.dup = 1.01;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.dup = 0;
  c.reorder = -1;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.reorder = 0;
  c.jitter = IMPAIR_NONE;
  assert_int_equal(impair_cfg_check(&c), -EINVAL);
  c.jitter = 0;
  assert_int_equal(impair_cfg_check(&c), 0);
  assert_int_equal(impair_cfg_check(NULL), -EINVAL);
  link_init(&l, &c, 1);
  assert_int_equal(l.flags, 0);
  assert_int_equal(impair_link_set_loss(&l, 2.0), -EINVAL);
  assert_int_equal(impair_link_set_dup(&l, -1.0), -EINVAL);
  assert_int_equal(impair_link_set_ber(&l, 1.5), -EINVAL);
  assert_int_equal(l.flags, 0);
  assert_int_equal(impair_link_set_loss(&l, 0.2), 0);
  assert_int_equal(impair_link_set_dup(&l, 0.3), 0);
  assert_int_equal(impair_link_set_ber(&l, 1e-6), 0);
  assert_int_equal(l.flags, IMPAIR_F_LOSS | IMPAIR_F_DUP | IMPAIR_F_BER);
  assert_true(l.cfg.loss == 0.2 && l.cfg.dup == 0.3 && l.cfg.ber == 1e-6);
  assert_int_equal(impair_link_set_loss(&l, 0), 0);
  assert_int_equal(impair_link_set_dup(&l, 0), 0);
  assert_int_equal(impair_link_set_ber(&l, 0), 0);
  assert_int_equal(l.flags, 0);
}

static void test_impair_delay_jitter_bounds(void **state) {
  uint64_t seed = tu_seed("impair_delay_jitter_bounds");
  impair_cfg c = {.delay = 50 * US, .jitter = 40 * US};
  impair_link l;
  impair_fate f;
  uint64_t i, n = 20000, quart[4] = {0}, lo = UINT64_MAX, hi = 0;

  (void)state;
  link_init(&l, &c, seed);
  /* Sent further apart than the jitter: the FIFO never holds one back,
     so each delay is delay + the jitter drawn, uniform in [0, jitter]. */
  for (i = 0; i < n; ++i) {
    uint64_t now = i * 100 * US, j;
    impair_link_send(&l, 100, now, &f);
    tu_assert(f.copies == 1);
    tu_assert(f.at[0] >= now + 50 * US && f.at[0] <= now + 90 * US);
    j = f.at[0] - now - 50 * US;
    ++quart[j * 4 / (40 * US + 1)];
    lo = j < lo ? j : lo;
    hi = j > hi ? j : hi;
  }
  for (i = 0; i < 4; ++i) {
    tu_assert(within(quart[i], n, 0.25));
  }
  /* Both ends of the range are reached (to within a microsecond). */
  tu_assert(lo < 1 * US && hi > 39 * US);
  tu_assert(l.st.delayed == n);
}

static void test_impair_jitter_keeps_fifo(void **state) {
  uint64_t seed = tu_seed("impair_jitter_keeps_fifo");
  impair_cfg c = {.delay = 50 * US, .jitter = 40 * US};
  impair_link l;
  impair_fate f;
  uint64_t prev = 0, i, waited = 0;

  (void)state;
  link_init(&l, &c, seed);
  /* Sent 1 us apart with up to 40 us of jitter: without the FIFO most
     would overtake one another. */
  for (i = 0; i < 20000; ++i) {
    uint64_t now = i * US;
    impair_link_send(&l, 100, now, &f);
    tu_assert(f.copies == 1);
    tu_assert(f.at[0] >= now + 50 * US && f.at[0] <= now + 90 * US);
    /* Never before the one sent before it. */
    tu_assert(f.at[0] >= prev);
    waited += f.at[0] == prev;
    prev = f.at[0];
  }
  tu_assert(waited > 1000); /* the FIFO did hold packets back */
}

static void test_impair_reorder_overtakes(void **state) {
  uint64_t seed = tu_seed("impair_reorder_overtakes");
  impair_cfg c = {.delay = 10 * US,
                  .jitter = 5 * US,
                  .reorder = 0.1,
                  .reorder_delay = 100 * US};
  impair_link l;
  impair_fate f;
  uint64_t held = 0, overtaken = 0, i, n = 20000, prev_in_order = 0;
  uint64_t last_held = 0;

  (void)state;
  link_init(&l, &c, seed);
  for (i = 0; i < n; ++i) {
    uint64_t now = i * US;
    impair_link_send(&l, 100, now, &f);
    tu_assert(f.copies == 1);
    if (f.at[0] >= now + 100 * US) {
      /* Held back: delay + reorder_delay + jitter, outside the FIFO. */
      tu_assert(f.at[0] <= now + 115 * US);
      ++held;
      last_held = f.at[0];
    } else {
      tu_assert(f.at[0] >= now + 10 * US && f.at[0] >= prev_in_order);
      prev_in_order = f.at[0];
      overtaken += f.at[0] < last_held;
    }
  }
  tu_assert(within(held, n, 0.1) && held == l.st.reordered);
  tu_assert(overtaken > 0); /* later packets do overtake the held ones */
}

static void test_impair_rate_cap_serialises_and_drops(void **state) {
  /* 1 Gb/s: a 1250-byte packet takes 10 us; a 5000-byte queue (the one
     being sent included) holds four. */
  impair_cfg c = {
      .rate_bps = 1000000000ull, .queue_bytes = 5000, .delay = 7 * US};
  impair_link l;
  impair_fate f;
  int i, sent = 0;

  (void)state;
  link_init(&l, &c, 3);
  for (i = 0; i < 10; ++i) { /* a burst at t = 0 */
    impair_link_send(&l, 1250, 0, &f);
    if (f.copies) {
      ++sent;
      assert_int_equal(f.at[0], (uint64_t)sent * 10 * US + 7 * US);
    } else {
      assert_int_equal(f.drop, IMPAIR_DROP_QUEUE);
    }
  }
  assert_int_equal(sent, 4);
  assert_int_equal(l.st.queue_drops, 6);
  /* Once the queue has drained, the next one goes straight through. */
  impair_link_send(&l, 1250, 1000 * US, &f);
  assert_int_equal(f.copies, 1);
  assert_int_equal(f.at[0], 1017 * US);
}

static void test_impair_rate_cap_never_exceeded(void **state) {
  uint64_t seed = tu_seed("impair_rate_cap_never_exceeded");
  uint64_t s = seed ^ 0xabcdef;
  /* 10 Gb/s behind 16 KB, offered bursts of about eight packets with
     idle gaps between them. */
  const uint64_t rate = 10000000000ull, qb = 16384;
  impair_cfg c = {.rate_bps = rate, .queue_bytes = qb, .delay = 3 * US};
  impair_link l;
  impair_fate f;
  uint64_t now = 0, prev_fin = 0, offered = 0, carried = 0, drops = 0;
  uint64_t i, epoch = 0, epoch_bytes = 0, periods = 0;

  (void)state;
  link_init(&l, &c, seed);
  for (i = 0; i < 50000; ++i) {
    size_t len = 64 + (size_t)(tu_rand(&s) % 9000);
    uint64_t backlog = 0, fin;

    now += tu_rand(&s) % 8 == 0 ? tu_rand(&s) % (80 * US) : 0;
    if (prev_fin > now) {
      backlog = (prev_fin - now) * rate / 8000000000ull;
    }
    offered += len;
    impair_link_send(&l, len, now, &f);
    if (f.copies == 0) {
      /* Dropped only when it would not fit behind the backlog. */
      tu_assert(f.drop == IMPAIR_DROP_QUEUE && backlog + len > qb);
      ++drops;
      continue;
    }
    tu_assert(backlog + len <= qb);
    if (prev_fin <= now) { /* the serialiser was idle */
      epoch = now;
      epoch_bytes = 0;
      ++periods;
    }
    epoch_bytes += len;
    fin = f.at[0] - 3 * US;
    /* It leaves when the bytes of the busy period so far have gone at
       the rate, no sooner: over a busy period the link never carries
       more than the rate allows (to within one rounding). */
    tu_assert(fin >= prev_fin && fin >= now);
    tu_assert(fin == epoch + epoch_bytes * 8000000000ull / rate);
    tu_assert((double)epoch_bytes * 8 <=
              (double)rate * (double)(fin - epoch) / 1e9 + 10);
    prev_fin = fin;
    carried += len;
  }
  tu_assert(drops > 0 && drops == l.st.queue_drops && carried < offered);
  tu_assert(periods > 10); /* idle gaps, and busy periods after them */
}

static void test_impair_dup_delay_sends_the_copy_late(void **state) {
  uint64_t seed = tu_seed("impair_dup_delay_sends_the_copy_late");
  impair_cfg plain = {.dup = 0.1, .delay = 10 * US, .jitter = 5 * US};
  impair_cfg late = plain;
  impair_link a, b;
  impair_fate fa, fb;
  uint64_t dups = 0, i, n = 20000, prev = 0;

  (void)state;
  late.dup_delay = 500 * US;
  link_init(&a, &plain, seed);
  link_init(&b, &late, seed);
  for (i = 0; i < n; ++i) {
    uint64_t now = i * US;
    impair_link_send(&a, 64, now, &fa);
    impair_link_send(&b, 64, now, &fb);
    tu_assert(fa.copies == fb.copies);
    /* The originals keep the FIFO among themselves: a late copy takes no
       place in it. */
    tu_assert(fb.at[0] >= now + 10 * US && fb.at[0] <= now + 15 * US);
    tu_assert(fb.at[0] >= prev);
    prev = fb.at[0];
    if (fb.copies == 2) {
      ++dups;
      /* Without dup_delay the copy follows right behind the original;
         with it, dup_delay late plus its own jitter. */
      tu_assert(fa.at[1] >= fa.at[0] && fa.at[1] <= fa.at[0] + 5 * US);
      tu_assert(fb.at[1] >= now + 510 * US && fb.at[1] <= now + 515 * US);
    }
  }
  tu_assert(dups == b.st.duplicated && dups == b.st.dup_delayed);
  tu_assert(a.st.dup_delayed == 0 && within(dups, n, 0.1));
}

/* popcount8 counts the bits set in |b|. */
static int popcount8(uint8_t b) {
  int n = 0;

  for (; b; b &= (uint8_t)(b - 1)) {
    ++n;
  }
  return n;
}

static void test_impair_corrupt_flips_one_bit_uniformly(void **state) {
  uint64_t seed = tu_seed("impair_corrupt_flips_one_bit_uniformly");
  uint64_t s = seed ^ 0x1234;
  impair_cfg c = {.corrupt = 0.05};
  impair_link l;
  uint8_t pkt[1500], keep[1500];
  uint64_t n = 60000, i, hit = 0, by_bit[8] = {0}, by_tenth[10] = {0};
  int k;

  (void)state;
  link_init(&l, &c, seed);
  for (i = 0; i < n; ++i) {
    size_t len = 1 + (size_t)(tu_rand(&s) % sizeof(pkt)), j, where = 0;
    uint64_t flipped, diff = 0;

    for (j = 0; j < len; ++j) {
      pkt[j] = (uint8_t)tu_rand(&s);
    }
    memcpy(keep, pkt, len);
    flipped = impair_link_corrupt(&l, pkt, len);
    tu_assert(flipped <= 1);
    for (j = 0; j < len; ++j) {
      int d = popcount8((uint8_t)(pkt[j] ^ keep[j]));
      if (d) {
        /* bit 0 is the first on the wire: the byte's high bit */
        for (k = 0; k < 8; ++k) {
          if ((pkt[j] ^ keep[j]) & (0x80u >> k)) {
            where = j * 8 + (size_t)k;
          }
        }
      }
      diff += (uint64_t)d;
    }
    /* Exactly the bits it said it flipped. */
    tu_assert(diff == flipped);
    if (flipped) {
      ++hit;
      ++by_bit[where % 8];
      ++by_tenth[where * 10 / (len * 8)];
    }
  }
  tu_assert(hit == l.st.corrupted && hit == l.st.bit_errors);
  tu_assert(within(hit, n, 0.05));
  /* Uniform over the bits: each bit of a byte alike, each tenth of the
     packet alike. */
  for (k = 0; k < 8; ++k) {
    tu_assert(within(by_bit[k], hit, 1.0 / 8));
  }
  for (k = 0; k < 10; ++k) {
    tu_assert(within(by_tenth[k], hit, 1.0 / 10));
  }
}

static void test_impair_flip_bit_is_wire_order(void **state) {
  uint8_t d[3] = {0};
  impair_cfg c = {.corrupt = 1.0};
  impair_link l;
  impair_flips f;
  uint64_t bit;
  int i;

  (void)state;
  impair_flip_bit(d, 0);
  impair_flip_bit(d, 15);
  impair_flip_bit(d, 17);
  assert_int_equal(d[0], 0x80);
  assert_int_equal(d[1], 0x01);
  assert_int_equal(d[2], 0x40);
  /* corrupt = 1: one bit of every copy, in range, and only one. */
  link_init(&l, &c, 9);
  for (i = 0; i < 1000; ++i) {
    impair_link_flips(&l, &f, 24);
    bit = impair_flips_next(&l, &f);
    assert_true(bit < 24);
    assert_int_equal(impair_flips_next(&l, &f), IMPAIR_NONE);
  }
  /* A packet of no bits has none to flip. */
  impair_link_flips(&l, &f, 0);
  assert_int_equal(impair_flips_next(&l, &f), IMPAIR_NONE);
  assert_int_equal(l.st.corrupted, 1000);
}

static void test_impair_ber_rates(void **state) {
  uint64_t seed = tu_seed("impair_ber_rates");
  const double ber = 1e-4;
  const uint64_t n = 20000, bits = 8000;
  impair_cfg c = {.ber = ber};
  impair_link l;
  impair_flips f;
  uint64_t i, hit = 0, errs = 0, bit, prev;
  double p = 1 - pow(1 - ber, (double)bits);

  (void)state;
  link_init(&l, &c, seed);
  assert_int_equal(l.flags, IMPAIR_F_BER);
  for (i = 0; i < n; ++i) {
    uint64_t k = 0;
    impair_link_flips(&l, &f, bits);
    for (prev = 0; (bit = impair_flips_next(&l, &f)) != IMPAIR_NONE;) {
      /* In increasing order, within the packet. */
      tu_assert(bit < bits && (k == 0 || bit > prev));
      prev = bit;
      ++k;
    }
    hit += k > 0;
    errs += k;
  }
  /* Packets hit: binomial(n, 1 - (1 - ber)^bits); errors: binomial(n
     bits, ber). */
  tu_assert(within(hit, n, p) && hit == l.st.corrupted);
  tu_assert(within(errs, n * bits, ber) && errs == l.st.bit_errors);
  /* ber = 1 hits every bit. */
  assert_int_equal(impair_link_set_ber(&l, 1.0), 0);
  impair_link_flips(&l, &f, 100);
  for (i = 0; (bit = impair_flips_next(&l, &f)) != IMPAIR_NONE; ++i) {
    assert_int_equal(bit, i);
  }
  assert_int_equal(i, 100);
}

static void test_impair_ber_clean_packets_cost_no_draw(void **state) {
  impair_cfg c = {.ber = 1e-9};
  impair_link l;
  impair_flips f;
  impair_rng before;
  int i;

  (void)state;
  link_init(&l, &c, 5);
  /* The first error is about 1e9 bits away: a thousand small packets go
     by without a draw, the gap just shrinks. */
  tu_assert(l.ber_left > 100000);
  before = l.corrupt_rng;
  for (i = 0; i < 1000; ++i) {
    uint64_t left = l.ber_left;
    if (left < 80) {
      break;
    }
    impair_link_flips(&l, &f, 80);
    assert_int_equal(impair_flips_next(&l, &f), IMPAIR_NONE);
    assert_int_equal(l.ber_left, left - 80);
  }
  assert_int_equal(l.corrupt_rng.state, before.state);
}

static void test_impair_blackhole_from_time(void **state) {
  impair_cfg c = {
      .blackhole = 1, .blackhole_from = 500 * US, .loss = 0.5, .dup = 0.5};
  impair_link l;
  impair_fate f;
  uint64_t i, passed = 0;

  (void)state;
  link_init(&l, &c, 2);
  for (i = 0; i < 1000; ++i) {
    impair_link_send(&l, 100, i * US, &f);
    if (i < 500) {
      passed += f.copies > 0;
      tu_assert(f.drop != IMPAIR_DROP_BLACKHOLE);
    } else {
      tu_assert(f.copies == 0 && f.drop == IMPAIR_DROP_BLACKHOLE);
    }
  }
  tu_assert(passed > 0 && l.st.blackholed == 500);
  /* Blackholed packets are never drawn for. */
  tu_assert(l.st.lost + passed == 500);
  /* blackhole_from 0: from the start. */
  c.blackhole_from = 0;
  link_init(&l, &c, 2);
  impair_link_send(&l, 100, 0, &f);
  assert_int_equal(f.copies, 0);
}

/* everything is a configuration with every impairment on. */
static const impair_cfg everything = {.delay = 3 * US,
                                      .jitter = 20 * US,
                                      .loss = 0.1,
                                      .dup = 0.1,
                                      .reorder = 0.1,
                                      .reorder_delay = 7 * US,
                                      .rate_bps = 40000000000ull,
                                      .queue_bytes = 20000,
                                      .dup_delay = 30 * US,
                                      .corrupt = 0.1,
                                      .ber = 1e-5};

/* same_fate compares two fates. */
static int same_fate(const impair_fate *a, const impair_fate *b) {
  return a->copies == b->copies && a->drop == b->drop &&
         (a->copies < 1 || a->at[0] == b->at[0]) &&
         (a->copies < 2 || a->at[1] == b->at[1]);
}

static void test_impair_seed_fixes_every_draw(void **state) {
  uint64_t seed = tu_seed("impair_seed_fixes_every_draw");
  impair_link a, b, d, e;
  impair_fate fa, fb, fd, fe;
  uint8_t pa[300], pb[300];
  int i, differ = 0, differ_id = 0;

  (void)state;
  impair_link_init(&a, &everything, seed, 1);
  impair_link_init(&b, &everything, seed, 1);
  impair_link_init(&d, &everything, seed + 1, 1);
  impair_link_init(&e, &everything, seed, 2);
  for (i = 0; i < 20000; ++i) {
    uint64_t now = (uint64_t)i * US;
    impair_link_send(&a, 300, now, &fa);
    impair_link_send(&b, 300, now, &fb);
    impair_link_send(&d, 300, now, &fd);
    impair_link_send(&e, 300, now, &fe);
    memset(pa, 0, sizeof(pa));
    memset(pb, 0, sizeof(pb));
    impair_link_corrupt(&a, pa, sizeof(pa));
    impair_link_corrupt(&b, pb, sizeof(pb));
    tu_assert(same_fate(&fa, &fb) && memcmp(pa, pb, sizeof(pa)) == 0);
    differ += !same_fate(&fa, &fd);
    differ_id += !same_fate(&fa, &fe);
  }
  /* Another seed, or another link of the same seed: other draws. */
  tu_assert(differ > 1000 && differ_id > 1000);
  tu_assert(memcmp(&a.st, &b.st, sizeof(a.st)) == 0);
}

static void test_impair_counts_add_up(void **state) {
  uint64_t seed = tu_seed("impair_counts_add_up");
  uint64_t s = seed ^ 77, arrived = 0, i, n = 50000, now = 0;
  impair_cfg c = everything;
  impair_link l;
  impair_fate f;

  (void)state;
  c.blackhole = 1;
  c.blackhole_from = 4000 * US;
  impair_link_init(&l, &c, seed, 1);
  for (i = 0; i < n; ++i) {
    now += tu_rand(&s) % 200; /* about 60 Gb/s offered to 40 */
    impair_link_send(&l, 64 + (size_t)(tu_rand(&s) % 3000), now, &f);
    arrived += f.copies;
  }
  /* Every copy offered is accounted for, once. */
  tu_assert(l.st.sent == n);
  tu_assert(l.st.sent + l.st.duplicated ==
            l.st.blackholed + l.st.lost + l.st.queue_drops + arrived);
  tu_assert(l.st.blackholed > 0 && l.st.lost > 0 && l.st.queue_drops > 0);
}

/* fates_equal runs |n| packets through a link of |x| and one of |y| (the
   same seed) and says whether they had the same fates. */
static int fates_equal(const impair_cfg *x, const impair_cfg *y, uint64_t seed,
                       int n, int corrupt_too) {
  impair_link a, b;
  impair_fate fa, fb;
  uint8_t p[200] = {0};
  int i, same = 1;

  impair_link_init(&a, x, seed, 4);
  impair_link_init(&b, y, seed, 4);
  for (i = 0; i < n; ++i) {
    impair_link_send(&a, 200, (uint64_t)i * US, &fa);
    impair_link_send(&b, 200, (uint64_t)i * US, &fb);
    same &= same_fate(&fa, &fb);
    if (corrupt_too) {
      impair_link_corrupt(&b, p, sizeof(p));
    }
  }
  return same;
}

static void test_impair_corrupt_leaves_other_draws(void **state) {
  uint64_t seed = tu_seed("impair_corrupt_leaves_other_draws");
  impair_cfg clean = everything, dirty = everything;

  (void)state;
  clean.corrupt = clean.ber = 0;
  dirty.corrupt = 0.5;
  dirty.ber = 1e-3;
  /* Turning corruption on changes what is flipped, nothing else: the
     same packets are lost, duplicated, held back and delayed alike. */
  tu_assert(fates_equal(&clean, &dirty, seed, 20000, 1));
}

static void test_impair_streams_are_apart(void **state) {
  uint64_t seed = tu_seed("impair_streams_are_apart");
  impair_cfg a = {.loss = 0.2}, b = a;
  impair_link x, y;
  impair_fate fx, fy;
  int i, same_loss = 1, differ = 0;

  (void)state;
  /* Adding duplication, reordering and jitter leaves the loss draws as
     they were: the same packets are lost. */
  b.dup = 0.3;
  b.reorder = 0.3;
  b.reorder_delay = 9 * US;
  b.jitter = 5 * US;
  impair_link_init(&x, &a, seed, 1);
  impair_link_init(&y, &b, seed, 1);
  for (i = 0; i < 20000; ++i) {
    impair_link_send(&x, 100, (uint64_t)i * US, &fx);
    impair_link_send(&y, 100, (uint64_t)i * US, &fy);
    same_loss &= (fx.copies == 0) == (fy.copies == 0);
    differ += !same_fate(&fx, &fy);
  }
  tu_assert(same_loss && differ > 0);
  /* And a changed reorder probability leaves duplication's draws. */
  a = everything;
  b = everything;
  b.reorder = 0.4;
  impair_link_init(&x, &a, seed, 1);
  impair_link_init(&y, &b, seed, 1);
  for (i = 0; i < 20000; ++i) {
    impair_link_send(&x, 100, (uint64_t)i * US, &fx);
    impair_link_send(&y, 100, (uint64_t)i * US, &fy);
    /* Held-back copies still take their turn at the serialiser: the
       same copies are made and dropped. */
    tu_assert(fx.copies == fy.copies && fx.drop == fy.drop);
  }
  tu_assert(x.st.lost == y.st.lost && x.st.duplicated == y.st.duplicated);
}

/* ------------------------------------------------------------------------ */
/* The delay queue                                                          */

typedef struct qpkt {
  uint64_t id;
  uint8_t data[40];
} qpkt;

static void test_impair_q_time_order(void **state) {
  impair_q q;
  uint64_t at[] = {50, 10, 30, 10, 70};
  impair_time t;
  qpkt *p;
  int i;

  (void)state;
  assert_int_equal(impair_q_init(&q, sizeof(qpkt), 4, 0), 0);
  assert_int_equal(impair_q_next(&q), IMPAIR_NONE);
  for (i = 0; i < 5; ++i) { /* the fifth grows the queue */
    p = impair_q_get(&q);
    assert_non_null(p);
    p->id = (uint64_t)i;
    memset(p->data, i, sizeof(p->data));
    impair_q_push(&q, p, at[i]);
  }
  assert_int_equal(q.len, 5);
  assert_int_equal(impair_q_next(&q), 10);
  assert_null(impair_q_pop(&q, 9, &t));
  /* Equal times leave in the order they were pushed. */
  p = impair_q_pop(&q, 10, &t);
  assert_int_equal(p->id, 1);
  assert_int_equal(t, 10);
  assert_int_equal(p->data[39], 1);
  impair_q_put(&q, p);
  p = impair_q_pop(&q, 10, NULL);
  assert_int_equal(p->id, 3);
  impair_q_put(&q, p);
  assert_null(impair_q_pop(&q, 10, &t));
  p = impair_q_pop(&q, 100, &t);
  assert_true(p->id == 2 && t == 30);
  impair_q_put(&q, p);
  p = impair_q_pop(&q, 100, &t);
  assert_true(p->id == 0 && t == 50);
  impair_q_put(&q, p);
  p = impair_q_pop(&q, 100, &t);
  assert_true(p->id == 4 && t == 70);
  impair_q_put(&q, p);
  assert_int_equal(impair_q_next(&q), IMPAIR_NONE);
  assert_int_equal(q.len, 0);
  impair_q_fini(&q);
}

static void test_impair_q_limit(void **state) {
  impair_q q;
  void *s[4];
  int i;

  (void)state;
  assert_int_equal(impair_q_init(&q, 10, 0, 3), 0);
  for (i = 0; i < 3; ++i) {
    s[i] = impair_q_get(&q);
    assert_non_null(s[i]);
  }
  /* max_slots in use: none to give until one comes back. */
  assert_null(impair_q_get(&q));
  impair_q_put(&q, s[1]);
  s[3] = impair_q_get(&q);
  assert_ptr_equal(s[3], s[1]);
  impair_q_push(&q, s[0], 5); /* fini frees queued slots too */
  impair_q_fini(&q);
}

static void test_impair_q_against_a_sort(void **state) {
  uint64_t seed = tu_seed("impair_q_against_a_sort");
  uint64_t s = seed, now = 0, pushed = 0, popped = 0, last_at = 0;
  uint64_t last_id = 0;
  impair_q q;
  qpkt *p;
  int i;

  (void)state;
  assert_int_equal(impair_q_init(&q, sizeof(qpkt), 0, 0), 0);
  for (i = 0; i < 200000; ++i) {
    if (tu_rand(&s) % 3 != 0) {
      /* Push one due within 100 us, times on a coarse grid so that ties
         are common. */
      p = impair_q_get(&q);
      assert_non_null(p);
      p->id = pushed++;
      p->data[0] = (uint8_t)p->id;
      impair_q_push(&q, p, now + tu_rand(&s) % 100 * US);
    } else {
      impair_time t;
      now += tu_rand(&s) % (3 * US);
      while ((p = impair_q_pop(&q, now, &t)) != NULL) {
        /* In time order; of equal times, in push order; the slot's bytes
           intact. */
        tu_assert(t <= now && t >= last_at);
        tu_assert(t > last_at || p->id > last_id || popped == 0);
        tu_assert(p->data[0] == (uint8_t)p->id);
        last_at = t;
        last_id = p->id;
        ++popped;
        impair_q_put(&q, p);
      }
      tu_assert(impair_q_next(&q) > now);
    }
  }
  tu_assert(popped + q.len == pushed && popped > 0);
  /* Slots are reused: far fewer allocated than pushed. */
  tu_assert(q.n_slots < pushed / 10);
  impair_q_fini(&q);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_impair_loss_and_dup_rates),
      cmocka_unit_test(test_impair_certain_and_impossible),
      cmocka_unit_test(test_impair_cfg_check_and_setters),
      cmocka_unit_test(test_impair_delay_jitter_bounds),
      cmocka_unit_test(test_impair_jitter_keeps_fifo),
      cmocka_unit_test(test_impair_reorder_overtakes),
      cmocka_unit_test(test_impair_rate_cap_serialises_and_drops),
      cmocka_unit_test(test_impair_rate_cap_never_exceeded),
      cmocka_unit_test(test_impair_dup_delay_sends_the_copy_late),
      cmocka_unit_test(test_impair_corrupt_flips_one_bit_uniformly),
      cmocka_unit_test(test_impair_flip_bit_is_wire_order),
      cmocka_unit_test(test_impair_ber_rates),
      cmocka_unit_test(test_impair_ber_clean_packets_cost_no_draw),
      cmocka_unit_test(test_impair_blackhole_from_time),
      cmocka_unit_test(test_impair_seed_fixes_every_draw),
      cmocka_unit_test(test_impair_counts_add_up),
      cmocka_unit_test(test_impair_corrupt_leaves_other_draws),
      cmocka_unit_test(test_impair_streams_are_apart),
      cmocka_unit_test(test_impair_q_time_order),
      cmocka_unit_test(test_impair_q_limit),
      cmocka_unit_test(test_impair_q_against_a_sort),
  };
  return cmocka_run_group_tests_name("impair", tests, NULL, NULL);
}
