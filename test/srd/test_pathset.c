/*
 * test_pathset.c: spraying and steering over a peer's paths: cycles that
 * take every path once in a fresh random order, exclusion, avoidance
 * after losses (doubling to 1024x, capped), the fallback when every path
 * is avoided, retransmissions on clean paths, delay outliers, the hot and
 * congested counts, the weights that follow relative delay, RACK ordering,
 * the reordering window, and paths whose reverse direction is dead
 * (acknowledged, never answered on).
 */
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "srd_pathset.h"
#include "srd_pcg.h"

#define NONE UINT32_MAX

/* The path set keeps a pointer to its generator: both live here. */
typedef struct fx {
  srd_pcg pcg;
  srd_pathset ps;
} fx;

static srd_pathset *init(fx *f, uint32_t n, int steering, uint64_t seed) {
  srd_pcg_init(&f->pcg, seed, 1);
  srd_pathset_init(&f->ps, n, steering, &f->pcg);
  return &f->ps;
}

static uint32_t pick(srd_pathset *ps, srd_tstamp now, uint32_t exclude) {
  uint32_t p = srd_pathset_pick(ps, &ps->cursor, now, exclude);

  assert_true(p < ps->n);
  return p;
}

static void test_pathset_spray_cycles(void **state) {
  static const uint32_t ns[] = {2, 3, 7, 8, 64};
  uint32_t seen[SRD_MAX_PATHS], first[SRD_MAX_PATHS];
  uint8_t prev[SRD_MAX_PATHS], cur[SRD_MAX_PATHS];
  size_t k;
  uint64_t seed;
  (void)state;

  for (k = 0; k < sizeof(ns) / sizeof(ns[0]); ++k) {
    uint32_t n = ns[k], distinct = 0, changed = 0, i, c;
    memset(first, 0, sizeof(first));
    for (seed = 1; seed <= 20; ++seed) {
      for (int steering = 0; steering < 2; ++steering) {
        fx f;
        srd_pathset *ps = init(&f, n, steering, seed);
        /* Each cycle of n packets takes every path exactly once. */
        for (c = 0; c < 10; ++c) {
          memset(seen, 0, sizeof(seen));
          for (i = 0; i < n; ++i) {
            uint32_t p = pick(ps, 1000 * c + i, NONE);
            cur[i] = (uint8_t)p;
            ++seen[p];
            if (c == 0 && i == 0) {
              first[p] = 1;
            }
          }
          for (i = 0; i < n; ++i) {
            assert_int_equal(seen[i], 1);
          }
          if (c > 0 && memcmp(prev, cur, n) != 0) {
            ++changed;
          }
          memcpy(prev, cur, n);
        }
      }
    }
    for (i = 0; i < n; ++i) {
      distinct += first[i];
    }
    /* Different seeds start at different paths, and the order changes
       from cycle to cycle. */
    assert_true(distinct >= (n < 4 ? n : 5));
    assert_true(changed > 0);
    if (n >= 7) {
      assert_true(changed >= 40 * 9 * 9 / 10);
    }
  }
}

/* A burst: each data pick holds for ps->burst packets, the cycle still
   takes every path once (a run each), control picks do not end a run,
   and an excluded or avoided path ends it at once. */
static void test_pathset_burst(void **state) {
  uint32_t seen[SRD_MAX_PATHS], i, c, p, run;
  uint64_t seed;
  (void)state;

  for (seed = 1; seed <= 20; ++seed) {
    fx f;
    srd_pathset *ps = init(&f, 4, 1, seed);
    ps->burst = 5;
    /* Runs go on paths that have been acknowledged (below). */
    for (i = 0; i < 4; ++i) {
      ps->p[i].acked = 1;
    }
    for (c = 0; c < 6; ++c) {
      memset(seen, 0, sizeof(seen));
      for (run = 0; run < 4; ++run) {
        p = pick(ps, 1000 * c + run, NONE);
        ++seen[p];
        for (i = 1; i < 5; ++i) {
          /* A control packet between data packets changes nothing. */
          (void)srd_pathset_pick(ps, &ps->ctl_cursor, 0, NONE);
          assert_int_equal(pick(ps, 1000 * c + run, NONE), p);
        }
      }
      for (i = 0; i < 4; ++i) {
        assert_int_equal(seen[i], 1);
      }
    }
    /* Excluding the run's path ends the run. */
    p = pick(ps, 0, NONE);
    assert_true(pick(ps, 0, p) != p);
    /* So does the path becoming avoided; the run's next packet goes to
       another path, whose run it starts. */
    p = pick(ps, 10, NONE);
    srd_pathset_avoid(ps, p, 1000);
    i = pick(ps, 10, NONE);
    assert_true(i != p);
    for (run = 1; run < 5; ++run) {
      assert_int_equal(pick(ps, 10, NONE), i);
    }
    /* A path never acknowledged, or with two losses found since its last
       acknowledgement, carries single packets: a pick follows the one
       before on its path only where a cycle's order is reshuffled, at
       most 3 times in 9 picks of 4 paths, where runs of 5 would put 6
       of 8 there. */
    for (c = 0; c < 2; ++c) {
      for (i = 0; i < 4; ++i) {
        ps->p[i].acked = c;
        ps->p[i].loss_streak = 2 * c;
      }
      p = pick(ps, 2000, NONE); /* the rest of a run */
      for (i = 0; i < 4; ++i) {
        (void)pick(ps, 2000, NONE);
      }
      run = 0;
      p = pick(ps, 2000, NONE);
      for (i = 0; i < 8; ++i) {
        uint32_t q = pick(ps, 2000, NONE);
        run += q == p;
        p = q;
      }
      assert_true(run <= 3);
    }
  }
}

static void test_pathset_ctl_cursor(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 5, 1, 77);
  uint8_t order[SRD_MAX_PATHS];
  uint32_t seen[5] = {0}, c0, i;
  (void)state;

  assert_true(ps->ctl_cursor < 5);
  c0 = ps->cursor;
  memcpy(order, ps->order, sizeof(order));
  /* Control packets walk the order from their own random place, and
     wrapping does not reshuffle it. */
  for (i = 0; i < 15; ++i) {
    ++seen[srd_pathset_pick(ps, &ps->ctl_cursor, 0, NONE)];
  }
  for (i = 0; i < 5; ++i) {
    assert_int_equal(seen[i], 3);
  }
  assert_memory_equal(order, ps->order, sizeof(order));
  /* The data cursor did not move. */
  assert_int_equal(ps->cursor, c0);
}

static void test_pathset_single(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 1, 1, 5);
  int i;
  (void)state;

  for (i = 0; i < 10; ++i) {
    assert_int_equal(pick(ps, 0, NONE), 0);
    /* Excluding the only path still gives it. */
    assert_int_equal(pick(ps, 0, 0), 0);
    assert_int_equal(srd_pathset_pick_retx(ps, 0, 0), 0);
  }
  /* With one path a loss does not avoid it (there is no other). */
  assert_true(srd_pathset_on_loss(ps, 0, 100, 100, 1000, SRD_S) == 0);
  assert_true(ps->p[0].avoid_until == 0);
  assert_int_equal(pick(ps, 100, NONE), 0);
  assert_true(ps->p[0].lost == 1);
  /* Nor does a delay outlier. */
  assert_false(srd_pathset_on_sample(ps, 0, 1000000, 1000, 1000, 1000, 0));
  assert_true(ps->p[0].avoid_until == 0);
}

static void test_pathset_exclude(void **state) {
  fx f;
  srd_pathset *ps;
  uint32_t counts[4] = {0}, i, p;
  (void)state;

  for (int steering = 0; steering < 2; ++steering) {
    ps = init(&f, 4, steering, 9);
    memset(counts, 0, sizeof(counts));
    for (i = 0; i < 300; ++i) {
      p = pick(ps, 0, 2);
      assert_int_not_equal(p, 2);
      ++counts[p];
    }
    assert_int_equal(counts[0], 100);
    assert_int_equal(counts[1], 100);
    assert_int_equal(counts[3], 100);
  }
  /* An out-of-range exclude excludes nothing. */
  ps = init(&f, 3, 0, 9);
  memset(counts, 0, sizeof(counts));
  for (i = 0; i < 30; ++i) {
    ++counts[pick(ps, 0, 3)];
  }
  assert_int_equal(counts[0], 10);
  assert_int_equal(counts[1], 10);
  assert_int_equal(counts[2], 10);
  /* Exclusion beats avoidance: with the other path avoided, the excluded
     one is still not used. */
  ps = init(&f, 2, 1, 9);
  srd_pathset_on_loss(ps, 1, 0, 0, 1000, SRD_S);
  assert_int_equal(pick(ps, 10, 0), 1);
}

static void test_pathset_loss_avoid(void **state) {
  fx f;
  srd_pathset *ps;
  srd_tstamp now = 10000, until;
  const srd_duration base = 1000;
  uint32_t i, k, counts[4];
  (void)state;

  ps = init(&f, 4, 1, 3);
  until = srd_pathset_on_loss(ps, 1, now, now, base, SRD_S);
  assert_true(until == now + base);
  assert_true(ps->p[1].avoid_until == now + base);
  assert_int_equal(ps->p[1].loss_streak, 1);
  assert_true(ps->p[1].lost == 1);
  assert_int_equal(srd_pathset_avoided(ps, now), 1);
  /* Path 1 is skipped while avoided; the others share evenly. */
  memset(counts, 0, sizeof(counts));
  for (i = 0; i < 30; ++i) {
    ++counts[pick(ps, now + base - 1, NONE)];
  }
  assert_int_equal(counts[1], 0);
  assert_int_equal(counts[0], 10);
  assert_int_equal(counts[2], 10);
  assert_int_equal(counts[3], 10);
  /* At avoid_until it is back (the probe), with its share. */
  assert_int_equal(srd_pathset_avoided(ps, now + base), 0);
  memset(counts, 0, sizeof(counts));
  for (i = 0; i < 40; ++i) {
    ++counts[pick(ps, now + base, NONE)];
  }
  assert_true(counts[1] >= 9 && counts[1] <= 11);

  /* A streak doubles the avoidance, to 1024x. */
  ps = init(&f, 4, 1, 3);
  for (k = 1; k <= 14; ++k) {
    uint32_t shift = k - 1 < 10 ? k - 1 : 10;
    until = srd_pathset_on_loss(ps, 2, now, now, base, SRD_S);
    assert_int_equal(ps->p[2].loss_streak, k);
    assert_true(until == now + (base << shift));
    assert_true(ps->p[2].avoid_until == until);
  }
  assert_true(ps->p[2].avoid_until == now + 1024 * base);
  /* ... and never past |cap|. */
  ps = init(&f, 4, 1, 3);
  for (k = 1; k <= 14; ++k) {
    srd_duration want = base << (k - 1 < 10 ? k - 1 : 10);
    until = srd_pathset_on_loss(ps, 0, now, now, base, 50 * base);
    assert_true(until == now + (want < 50 * base ? want : 50 * base));
  }
  /* An acknowledgement ends the streak; the avoidance already set stays,
     and the next loss starts from the base again. */
  srd_pathset_on_ack(ps, 0, 5, 5, 100);
  assert_int_equal(ps->p[0].loss_streak, 0);
  assert_true(ps->p[0].avoid_until == now + 50 * base);
  until = srd_pathset_on_loss(ps, 0, now + 100 * base, now + 100 * base, base,
                              SRD_S);
  assert_true(until == now + 101 * base);
  /* A later, shorter avoidance never shortens a longer one. */
  srd_pathset_on_loss(ps, 3, now, now, base, SRD_S); /* streak 1 */
  srd_pathset_on_loss(ps, 3, now, now, base,
                      SRD_S); /* streak 2: now + 2 base */
  srd_pathset_on_ack(ps, 3, 1, 1, 1);
  until = srd_pathset_on_loss(ps, 3, now + 1, now + 1, base, SRD_S);
  assert_true(until == now + 2 * base);
}

static void test_pathset_all_avoided(void **state) {
  fx f;
  srd_pathset *ps;
  srd_tstamp now = 1000;
  uint32_t i, counts[4] = {0};
  (void)state;

  ps = init(&f, 4, 1, 11);
  srd_pathset_on_loss(ps, 0, now, now, 500, SRD_S); /* until 1500 */
  /* One of four avoided: it is never picked. */
  for (i = 0; i < 30; ++i) {
    assert_int_not_equal(pick(ps, now, NONE), 0);
  }
  srd_pathset_on_loss(ps, 1, now, now, 200, SRD_S); /* until 1200 */
  srd_pathset_on_loss(ps, 2, now, now, 900, SRD_S); /* until 1900 */
  assert_int_equal(srd_pathset_avoided(ps, now), 3);
  /* Three of four: the trouble is not a path's; rather than funnel all
     into path 3, spraying goes on over all of them (the 50% rule).
     From a cycle boundary, 40 picks are ten whole cycles. */
  while (ps->cursor < ps->n) {
    (void)pick(ps, now, NONE);
  }
  for (i = 0; i < 40; ++i) {
    ++counts[pick(ps, now, NONE)];
  }
  for (i = 0; i < 4; ++i) {
    assert_int_equal(counts[i], 10);
  }
  /* ... except the excluded one. */
  for (i = 0; i < 12; ++i) {
    assert_int_not_equal(pick(ps, now, 1), 1);
  }
  /* At 1500 only path 2 is avoided: one of four, never picked. */
  for (i = 0; i < 30; ++i) {
    assert_int_not_equal(pick(ps, 1500, NONE), 2);
  }
  assert_int_equal(srd_pathset_avoided(ps, 1200), 2);
  assert_int_equal(srd_pathset_avoided(ps, 1500), 1);
  assert_int_equal(srd_pathset_avoided(ps, 1900), 0);
}

static void test_pathset_steering_off(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 0, 21);
  uint32_t counts[4] = {0}, i;
  (void)state;

  /* A loss is counted, but avoids nothing and returns 0. */
  assert_true(srd_pathset_on_loss(ps, 2, 100, 100, 1000, SRD_S) == 0);
  assert_true(srd_pathset_on_loss(ps, 2, 100, 100, 1000, SRD_S) == 0);
  assert_true(ps->p[2].avoid_until == 0);
  assert_true(ps->p[2].lost == 2);
  assert_int_equal(ps->p[2].loss_streak, 2);
  assert_int_equal(srd_pathset_avoided(ps, 100), 0);
  /* A hot sample is counted, but avoids nothing. */
  assert_false(srd_pathset_on_sample(ps, 2, 100000, 1000, 1000, 1000, 100));
  assert_true(ps->p[2].hot);
  assert_true(ps->p[2].avoid_until == 0);
  /* Blind spraying, the lossy path included; even a set avoid_until is
     ignored. */
  srd_pathset_avoid(ps, 1, SRD_TSTAMP_NONE);
  for (i = 0; i < 40; ++i) {
    ++counts[pick(ps, 100, NONE)];
  }
  for (i = 0; i < 4; ++i) {
    assert_int_equal(counts[i], 10);
  }
  /* Retransmissions too: no preference for clean paths. */
  memset(counts, 0, sizeof(counts));
  for (i = 0; i < 40; ++i) {
    ++counts[srd_pathset_pick_retx(ps, 100, NONE)];
  }
  for (i = 0; i < 4; ++i) {
    assert_int_equal(counts[i], 10);
  }
}

static void test_pathset_pick_retx(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 23);
  uint32_t counts[4] = {0}, p, i;
  (void)state;

  /* All clean: retransmissions spray like new packets, never on the
     excluded path. */
  for (i = 0; i < 30; ++i) {
    p = srd_pathset_pick_retx(ps, 0, 0);
    assert_true(p < 4);
    assert_int_not_equal(p, 0);
    ++counts[p];
  }
  assert_int_equal(counts[1], 10);
  assert_int_equal(counts[2], 10);
  assert_int_equal(counts[3], 10);
  /* Paths with a loss since their last ACK (no longer avoided) are
     passed over for a clean one. */
  srd_pathset_on_loss(ps, 0, 0, 0, 10, SRD_S);
  srd_pathset_on_loss(ps, 1, 0, 0, 10, SRD_S);
  srd_pathset_on_loss(ps, 2, 0, 0, 10, SRD_S);
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, 1000, NONE), 3);
  }
  /* While three of four are avoided, a retransmission still takes the
     one usable path. */
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, 0, NONE), 3);
  }
  /* An acknowledgement makes a path clean again. */
  srd_pathset_on_ack(ps, 1, 1, 1, 1);
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, 1000, 3), 1);
  }
  /* No clean path: an ordinary pick (not avoided, not excluded). */
  srd_pathset_on_loss(ps, 1, 1000, 1000, 10, SRD_S);
  srd_pathset_on_loss(ps, 3, 1000, 1000, 10, SRD_S);
  for (i = 0; i < 12; ++i) {
    p = srd_pathset_pick_retx(ps, 2000, 2);
    assert_true(p < 4);
    assert_int_not_equal(p, 2);
  }
  /* No clean path: the shortest loss streak, so that a long-failing path
     is never what a lost packet probes. */
  ps->p[0].loss_streak = 5;
  ps->p[1].loss_streak = 1;
  ps->p[3].loss_streak = 2;
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, SRD_S, 2), 1);
  }
}

/* Two paths, one dead for long (a long loss streak), the other lossy: a
   timeout avoids the live one as long as the dead one, so both are
   avoided when a packet lost on the live path is retransmitted.  The
   retransmission goes back on the live path (its streak is shorter),
   not onto the dead one because the live one lost it; only once the live
   path has failed more often in a row does the other get the try.  (A
   CI run found the blind alternation: half of a packet's 17 tries spent
   on a path blackholed 300 ms before, and the message failed with a
   live path at 17% loss.) */
static void test_pathset_retx_all_avoided(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 2, 1, 5);
  srd_tstamp now = 100 * SRD_MS;
  uint32_t i;
  (void)state;

  for (i = 0; i < 40; ++i) {
    srd_pathset_on_loss(ps, 0, (60 + i) * SRD_MS, (60 + i) * SRD_MS + 1, SRD_MS,
                        40 * SRD_MS);
  }
  srd_pathset_on_loss(ps, 1, now - 1, now, SRD_MS, 40 * SRD_MS);
  assert_true(ps->p[0].avoid_until > now && ps->p[1].avoid_until > now);
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, now, 1), 1);
  }
  /* Equal streaks: the other path, as a retransmission normally does. */
  ps->p[1].loss_streak = ps->p[0].loss_streak;
  assert_int_equal(srd_pathset_pick_retx(ps, now, 1), 0);
  /* Of several others, the shortest streak, the soonest recovered on a
     tie; |exclude| loses a tie. */
  ps = init(&f, 4, 1, 9);
  for (i = 0; i < 4; ++i) {
    srd_pathset_on_loss(ps, i, 0, 1, SRD_MS, 40 * SRD_MS);
  }
  ps->p[0].loss_streak = 3;
  ps->p[1].loss_streak = 2;
  ps->p[2].loss_streak = 2;
  ps->p[3].loss_streak = 2;
  ps->p[1].avoid_until = 30 * SRD_MS;
  ps->p[2].avoid_until = 20 * SRD_MS;
  for (i = 0; i < 12; ++i) {
    assert_int_equal(srd_pathset_pick_retx(ps, 2, 3), 2);
  }
}

static void test_pathset_loss_episode(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 29);
  const srd_duration base = 100;
  (void)state;

  /* A packet sent before the path's last loss was found is lost in the
     same episode: counted, but neither the streak nor the avoidance
     grows. */
  assert_true(srd_pathset_on_loss(ps, 0, 100, 1000, base, SRD_S) ==
              1000 + base);
  assert_true(srd_pathset_on_loss(ps, 0, 999, 1100, base, SRD_S) ==
              1000 + base);
  assert_int_equal(ps->p[0].loss_streak, 1);
  assert_true(ps->p[0].lost == 2);
  assert_true(ps->p[0].avoid_until == 1000 + base);
  /* One sent at or after it is a new failure: the streak grows. */
  assert_true(srd_pathset_on_loss(ps, 0, 1000, 1200, base, SRD_S) ==
              1200 + 2 * base);
  assert_int_equal(ps->p[0].loss_streak, 2);
  assert_true(srd_pathset_on_loss(ps, 0, 1100, 1300, base, SRD_S) ==
              1200 + 2 * base);
  assert_int_equal(ps->p[0].loss_streak, 2);
  /* After an acknowledgement every loss starts a streak. */
  srd_pathset_on_ack(ps, 0, 1250, 9, 1);
  assert_true(srd_pathset_on_loss(ps, 0, 5, 1400, base, SRD_S) == 1400 + base);
  assert_int_equal(ps->p[0].loss_streak, 1);
  /* Without steering the same episode also returns 0. */
  ps = init(&f, 4, 0, 29);
  assert_true(srd_pathset_on_loss(ps, 1, 100, 1000, base, SRD_S) == 0);
  assert_true(srd_pathset_on_loss(ps, 1, 50, 1100, base, SRD_S) == 0);
  assert_int_equal(ps->p[1].loss_streak, 1);
  assert_true(ps->p[1].lost == 2);
}

/* Three losses in a row (a dead path) put its weight at the floor, so
   that when its avoidance ends its probes cost a small share; two (a
   random or spurious pair) do not; the first acknowledgement on it
   gives the full share back. */
static void test_pathset_dead_path_floored(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 31);
  const srd_duration base = 100;
  (void)state;

  srd_pathset_on_loss(ps, 2, 100, 1000, base, SRD_S);
  srd_pathset_on_loss(ps, 2, 1000, 1200, base, SRD_S);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_FULL);
  srd_pathset_on_loss(ps, 2, 1200, 1500, base, SRD_S);
  assert_int_equal(ps->p[2].loss_streak, 3);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_MIN);
  assert_int_equal(ps->p[1].weight, SRD_PATH_WEIGHT_FULL);
  /* More losses keep it there. */
  srd_pathset_on_loss(ps, 2, 1500, 2000, base, SRD_S);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_MIN);
  /* Repaired: the first packet acknowledged on it restores the share. */
  srd_pathset_on_ack(ps, 2, 2100, 40, 10);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_FULL);
  assert_int_equal(ps->p[2].loss_streak, 0);
  /* Without steering nothing is weighed. */
  ps = init(&f, 4, 0, 31);
  srd_pathset_on_loss(ps, 1, 100, 1000, base, SRD_S);
  srd_pathset_on_loss(ps, 1, 1000, 1200, base, SRD_S);
  srd_pathset_on_loss(ps, 1, 1200, 1500, base, SRD_S);
  assert_int_equal(ps->p[1].weight, SRD_PATH_WEIGHT_FULL);
}

static void test_pathset_delay_outlier(void **state) {
  fx f;
  srd_pathset *ps;
  const srd_duration base = 10000, target = 25000;
  srd_tstamp now = 1000000;
  (void)state;

  ps = init(&f, 4, 1, 31);
  /* Hot (40000 > base + target) and above avg + target/2 = 24500: avoided
     for max(avg, recent). */
  assert_true(srd_pathset_on_sample(ps, 0, 40000, base, target, 12000, now));
  assert_true(ps->p[0].recent == 40000);
  assert_true(ps->p[0].hot);
  assert_true(ps->p[0].avoid_until == now + 40000);
  assert_int_equal(ps->n_hot, 1);
  assert_int_equal(ps->n_sampled, 1);
  /* Already avoided: not again, not longer. */
  assert_false(
      srd_pathset_on_sample(ps, 0, 80000, base, target, 12000, now + 1));
  assert_true(ps->p[0].avoid_until == now + 40000);
  assert_true(ps->p[0].recent == (3 * 40000 + 80000) / 4);
  /* The avoidance lasts |recent| (which exceeds avg whenever the path is
     an outlier), whatever the avg. */
  assert_true(srd_pathset_on_sample(ps, 3, 36000, base, target, 20000, now));
  assert_true(ps->p[3].avoid_until == now + 36000);
  ps = init(&f, 4, 1, 31);
  assert_true(srd_pathset_on_sample(ps, 3, 100000, base, target, 0, now));
  assert_true(ps->p[3].avoid_until == now + 100000);

  /* At base + target exactly: not hot. */
  ps = init(&f, 4, 1, 31);
  assert_false(
      srd_pathset_on_sample(ps, 1, base + target, base, target, 0, now));
  assert_false(ps->p[1].hot);
  assert_int_equal(ps->n_hot, 0);
  assert_int_equal(ps->n_sampled, 1);
  /* Hot but not an outlier (every path is slow: avg is high): counted in
     n_hot, not avoided. */
  assert_false(srd_pathset_on_sample(ps, 2, 42500, base, target, 30000, now));
  assert_true(ps->p[2].hot);
  assert_true(ps->p[2].avoid_until == 0);
  assert_int_equal(ps->n_hot, 1);
  /* One above avg + target/2: avoided. */
  assert_true(srd_pathset_on_sample(ps, 3, 42501, base, target, 30000, now));
  assert_int_equal(ps->n_hot, 2);
  assert_int_equal(ps->n_sampled, 3);

  /* recent is a 1/4-gain average: the path cools as it comes down. */
  assert_false(srd_pathset_on_sample(ps, 2, 10000, base, target, 30000, now));
  assert_true(ps->p[2].recent == (3 * 42500 + 10000) / 4); /* 34375 */
  assert_false(ps->p[2].hot);
  assert_int_equal(ps->n_hot, 1);
  assert_int_equal(ps->n_sampled, 3);
  /* The RTT estimator sees the raw samples. */
  assert_true(ps->p[2].rtt.samples == 2);
  assert_true(ps->p[2].rtt.latest == 10000);
  assert_true(ps->p[2].rtt.min_rtt == 10000);

  /* Back from avoidance, a path is judged on its first new sample alone,
     not averaged with the delay that got it avoided. */
  ps = init(&f, 4, 1, 31);
  assert_true(srd_pathset_on_sample(ps, 0, 80000, base, target, 12000, now));
  assert_true(ps->p[0].avoid_until == now + 80000);
  assert_false(
      srd_pathset_on_sample(ps, 0, 12000, base, target, 12000, now + 80000));
  assert_true(ps->p[0].recent == 12000);
  assert_false(ps->p[0].hot);
  assert_int_equal(ps->n_hot, 0);
  assert_true(ps->p[0].avoid_until == 0);
  /* A path that is an outlier again as soon as it is back is avoided
     twice as long each time (a slow spine), until a sample finds it cool. */
  ps = init(&f, 4, 1, 31);
  assert_true(srd_pathset_on_sample(ps, 0, 40000, base, target, 12000, now));
  assert_true(ps->p[0].avoid_until == now + 40000);
  now += 40000;
  assert_true(srd_pathset_on_sample(ps, 0, 40000, base, target, 12000, now));
  assert_true(ps->p[0].avoid_until == now + 80000);
  now += 80000;
  assert_true(srd_pathset_on_sample(ps, 0, 40000, base, target, 12000, now));
  assert_true(ps->p[0].avoid_until == now + 160000);
  now += 160000;
  assert_false(srd_pathset_on_sample(ps, 0, 12000, base, target, 12000, now));
  assert_int_equal(ps->p[0].delay_streak, 0);
  assert_true(srd_pathset_on_sample(ps, 0, 160000, base, target, 12000, now));
  /* recent = (3 * 12000 + 160000) / 4: avoided once, not doubled. */
  assert_true(ps->p[0].avoid_until == now + 49000);
  /* The doubling stops at 64 times. */
  ps = init(&f, 4, 1, 31);
  now = 1000000;
  for (int k = 0; k < 10; ++k) {
    srd_tstamp until;
    assert_true(srd_pathset_on_sample(ps, 0, 40000, base, target, 12000, now));
    until = ps->p[0].avoid_until;
    assert_true(until == now + (40000ull << (k < 6 ? k : 6)));
    now = until;
  }
  ps = init(&f, 4, 1, 31);
  now = 1000000;
  /* The same after an avoidance for loss. */
  srd_pathset_on_sample(ps, 1, 30000, base, target, 12000, now);
  srd_pathset_on_loss(ps, 1, now, now, 1000, SRD_S);
  assert_false(
      srd_pathset_on_sample(ps, 1, 11000, base, target, 12000, now + 1000));
  assert_true(ps->p[1].recent == 11000);
  /* Still avoided: averaged. */
  srd_pathset_on_loss(ps, 2, now, now, 1000, SRD_S);
  srd_pathset_on_sample(ps, 2, 20000, base, target, 12000, now);
  srd_pathset_on_sample(ps, 2, 12000, base, target, 12000, now + 999);
  assert_true(ps->p[2].recent == (3 * 20000 + 12000) / 4);
}

/* Weights: a path whose forward delay sits above the others' (relative to
   the mean of one acknowledgement's packets) gives up an eighth of its
   share per RTT, down to an eighth of a full one, and takes it back in
   steps while it is not; picks follow the weights, control picks do not. */
static void test_pathset_weights(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 61);
  const srd_duration margin = 1000, srtt = 10000;
  srd_tstamp now = 1000000;
  uint32_t cnt[4] = {0}, i, w, steps;
  (void)state;

  for (i = 0; i < 4; ++i) {
    assert_int_equal(ps->p[i].weight, SRD_PATH_WEIGHT_FULL);
  }
  assert_int_equal(ps->n_light, 0);
  /* rel averages with gain 1/4: 5000 / 4 = 1250 is above the margin. */
  srd_pathset_on_rel(ps, 0, 5000, margin, srtt, now);
  assert_true(ps->p[0].rel == 1250);
  assert_int_equal(ps->p[0].weight, SRD_PATH_WEIGHT_FULL - 8);
  assert_int_equal(ps->n_light, 1);
  /* At most one move per RTT. */
  srd_pathset_on_rel(ps, 0, 5000, margin, srtt, now + srtt - 1);
  assert_int_equal(ps->p[0].weight, SRD_PATH_WEIGHT_FULL - 8);
  srd_pathset_on_rel(ps, 0, 5000, margin, srtt, now + srtt);
  assert_int_equal(ps->p[0].weight, 56 - 7);
  /* Down to the floor, never below it. */
  for (i = 2; i < 40; ++i) {
    srd_pathset_on_rel(ps, 0, 5000, margin, srtt, now + i * srtt);
  }
  assert_int_equal(ps->p[0].weight, SRD_PATH_WEIGHT_MIN);
  assert_int_equal(ps->n_light, 1);
  /* Within the dead band (a quarter of the margin up to the margin): it
     stays. */
  ps->p[0].rel = 500;
  srd_pathset_on_rel(ps, 0, 500, margin, srtt, now + 100 * srtt);
  assert_int_equal(ps->p[0].weight, SRD_PATH_WEIGHT_MIN);
  /* Picks: path 0 at an eighth of a share carries one packet for every
     eight of each other path's. */
  for (i = 0; i < 25 * 40; ++i) {
    ++cnt[pick(ps, now, NONE)];
  }
  assert_true(cnt[0] >= 36 && cnt[0] <= 44);
  for (i = 1; i < 4; ++i) {
    assert_true(cnt[i] >= 316 && cnt[i] <= 324);
  }
  /* Control packets ignore weights: every path once per round. */
  memset(cnt, 0, sizeof(cnt));
  for (i = 0; i < 40; ++i) {
    ++cnt[srd_pathset_pick(ps, &ps->ctl_cursor, now, NONE)];
  }
  for (i = 0; i < 4; ++i) {
    assert_int_equal(cnt[i], 10);
  }
  /* Below the others' delay it takes its share back, two 64ths per RTT. */
  now += 200 * srtt;
  for (steps = 0, w = ps->p[0].weight; w < SRD_PATH_WEIGHT_FULL; ++steps) {
    srd_pathset_on_rel(ps, 0, -2000, margin, srtt, now + steps * srtt);
    assert_int_equal(ps->p[0].weight, w + 2);
    w = ps->p[0].weight;
  }
  assert_int_equal(steps, (SRD_PATH_WEIGHT_FULL - SRD_PATH_WEIGHT_MIN) / 2);
  assert_int_equal(ps->n_light, 0);
  /* Back at full weight: cycles take every path once again. */
  memset(cnt, 0, sizeof(cnt));
  ps->cursor = ps->n;
  for (i = 0; i < 8; ++i) {
    ++cnt[pick(ps, now, NONE)];
  }
  for (i = 0; i < 4; ++i) {
    assert_int_equal(cnt[i], 2);
  }
  /* Without steering (or with one path) the weights never move. */
  ps = init(&f, 4, 0, 61);
  for (i = 0; i < 10; ++i) {
    srd_pathset_on_rel(ps, 1, 50000, margin, srtt, now + i * srtt);
  }
  assert_int_equal(ps->p[1].weight, SRD_PATH_WEIGHT_FULL);
  assert_int_equal(ps->n_light, 0);
  ps = init(&f, 1, 1, 61);
  srd_pathset_on_rel(ps, 0, 50000, margin, srtt, now);
  assert_int_equal(ps->p[0].weight, SRD_PATH_WEIGHT_FULL);
}

static void test_pathset_congested(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 41);
  const srd_duration base = 10000, target = 25000;
  int i;
  uint32_t p;
  (void)state;

  assert_false(srd_pathset_congested(ps));
  /* 1 hot of 1 sampled. */
  srd_pathset_on_sample(ps, 0, 50000, base, target, 50000, 0);
  assert_int_equal(ps->n_hot, 1);
  assert_int_equal(ps->n_sampled, 1);
  assert_true(srd_pathset_congested(ps));
  /* 1 of 2: half is not most. */
  srd_pathset_on_sample(ps, 1, 12000, base, target, 50000, 0);
  assert_int_equal(ps->n_sampled, 2);
  assert_false(srd_pathset_congested(ps));
  /* 2 of 3. */
  srd_pathset_on_sample(ps, 2, 50000, base, target, 50000, 0);
  assert_int_equal(ps->n_hot, 2);
  assert_int_equal(ps->n_sampled, 3);
  assert_true(srd_pathset_congested(ps));
  /* 2 of 4. */
  srd_pathset_on_sample(ps, 3, 12000, base, target, 50000, 0);
  assert_int_equal(ps->n_sampled, 4);
  assert_false(srd_pathset_congested(ps));
  /* More samples on a path do not count it twice. */
  srd_pathset_on_sample(ps, 3, 12000, base, target, 50000, 0);
  srd_pathset_on_sample(ps, 0, 60000, base, target, 50000, 0);
  assert_int_equal(ps->n_sampled, 4);
  assert_int_equal(ps->n_hot, 2);
  /* 3 of 4 once path 1 heats up (a run of high samples). */
  for (i = 0; i < 10; ++i) {
    srd_pathset_on_sample(ps, 1, 60000, base, target, 50000, 0);
  }
  assert_true(ps->p[1].hot);
  assert_int_equal(ps->n_hot, 3);
  assert_true(srd_pathset_congested(ps));
  /* And all cool down. */
  for (i = 0; i < 20; ++i) {
    for (p = 0; p < 4; ++p) {
      srd_pathset_on_sample(ps, p, 10000, base, target, 10000, 0);
    }
  }
  assert_int_equal(ps->n_hot, 0);
  assert_false(srd_pathset_congested(ps));
}

static void test_pathset_rack_older(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 2, 1, 51);
  (void)state;

  /* Nothing acknowledged: nothing is older. */
  assert_false(srd_pathset_rack_older(ps, 0, 0, 0));
  srd_pathset_on_ack(ps, 0, 100, 50, 7);
  assert_true(ps->p[0].rack_valid);
  assert_true(ps->p[0].rack_rtt == 7);
  assert_true(srd_pathset_rack_older(ps, 0, 99, 1000));
  assert_true(srd_pathset_rack_older(ps, 0, 100, 49));
  assert_false(srd_pathset_rack_older(ps, 0, 100, 50));
  assert_false(srd_pathset_rack_older(ps, 0, 100, 51));
  assert_false(srd_pathset_rack_older(ps, 0, 101, 0));
  /* Per path: path 1 has no RACK state. */
  assert_false(srd_pathset_rack_older(ps, 1, 0, 0));
  /* An older acknowledgement does not move RACK back. */
  srd_pathset_on_ack(ps, 0, 90, 60, 9);
  srd_pathset_on_ack(ps, 0, 100, 49, 9);
  assert_true(ps->p[0].rack_xmit_ts == 100);
  assert_int_equal(ps->p[0].rack_seq, 50);
  assert_true(ps->p[0].rack_rtt == 7);
  assert_true(ps->p[0].acked == 3);
  /* Same send time, later number: moves. */
  srd_pathset_on_ack(ps, 0, 100, 52, 8);
  assert_int_equal(ps->p[0].rack_seq, 52);
  assert_true(ps->p[0].rack_rtt == 8);
  assert_true(srd_pathset_rack_older(ps, 0, 100, 51));
  /* Ties on send time compare numbers across the wrap. */
  srd_pathset_on_ack(ps, 1, 200, 0xFFFFFFFFu, 1);
  assert_true(srd_pathset_rack_older(ps, 1, 200, 0xFFFFFFFEu));
  assert_false(srd_pathset_rack_older(ps, 1, 200, 0));
  srd_pathset_on_ack(ps, 1, 200, 0, 1);
  assert_int_equal(ps->p[1].rack_seq, 0);
  assert_true(srd_pathset_rack_older(ps, 1, 200, 0xFFFFFFFFu));
  /* A later send time wins whatever the number. */
  srd_pathset_on_ack(ps, 1, 201, 0x80000000u, 1);
  assert_true(ps->p[1].rack_xmit_ts == 201);
  assert_true(srd_pathset_rack_older(ps, 1, 200, 0x90000000u));
}

static void test_pathset_reo_wnd(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 2, 1, 61);
  uint32_t i;
  (void)state;

  /* No sample: the floor. */
  assert_true(srd_pathset_reo_wnd(ps, 0, 123) == 123);
  /* min_rtt 100, srtt 3512: min_rtt/4 = 25 per step. */
  srd_pathset_on_sample(ps, 0, 4000, 0, SRD_S, SRD_S, 0);
  srd_pathset_on_sample(ps, 0, 100, 0, SRD_S, SRD_S, 0);
  assert_true(ps->p[0].rtt.min_rtt == 100);
  assert_true(ps->p[0].rtt.srtt == 3512);
  assert_int_equal(ps->p[0].reo_mult, 1);
  assert_true(srd_pathset_reo_wnd(ps, 0, 0) == 25);
  assert_true(srd_pathset_reo_wnd(ps, 0, 30) == 30);
  /* Each spurious loss adds a step, to 16. */
  for (i = 2; i <= 20; ++i) {
    srd_pathset_on_spurious(ps, 0);
    assert_int_equal(ps->p[0].reo_mult, i < 16 ? i : 16);
  }
  assert_true(srd_pathset_reo_wnd(ps, 0, 0) == 400);
  /* A spurious loss is no loss: it ends the streak. */
  srd_pathset_on_loss(ps, 0, 0, 0, 1000, SRD_S);
  srd_pathset_on_loss(ps, 0, 0, 0, 1000, SRD_S);
  assert_int_equal(ps->p[0].loss_streak, 2);
  srd_pathset_on_spurious(ps, 0);
  assert_int_equal(ps->p[0].loss_streak, 0);

  /* srtt caps the window: min_rtt 400, srtt 400. */
  srd_pathset_on_sample(ps, 1, 400, 0, SRD_S, SRD_S, 0);
  assert_true(srd_pathset_reo_wnd(ps, 1, 0) == 100);
  for (i = 0; i < 3; ++i) {
    srd_pathset_on_spurious(ps, 1);
  }
  assert_true(srd_pathset_reo_wnd(ps, 1, 0) == 400);
  srd_pathset_on_spurious(ps, 1);
  assert_int_equal(ps->p[1].reo_mult, 5);
  assert_true(srd_pathset_reo_wnd(ps, 1, 0) == 400);
  /* The floor still wins over the cap. */
  assert_true(srd_pathset_reo_wnd(ps, 1, 1000) == 1000);
}

static void test_pathset_reo_decay(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 2, 1, 71);
  uint32_t i;
  (void)state;

  for (i = 0; i < 5; ++i) {
    srd_pathset_on_spurious(ps, 0);
  }
  assert_int_equal(ps->p[0].reo_mult, 6);
  /* One step down per 16 losses. */
  for (i = 1; i <= 15; ++i) {
    srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
    assert_int_equal(ps->p[0].reo_mult, 6);
  }
  srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  assert_int_equal(ps->p[0].reo_mult, 5);
  for (i = 0; i < 16; ++i) {
    srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  }
  assert_int_equal(ps->p[0].reo_mult, 4);
  /* A spurious loss restarts the count. */
  for (i = 0; i < 10; ++i) {
    srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  }
  srd_pathset_on_spurious(ps, 0);
  assert_int_equal(ps->p[0].reo_mult, 5);
  for (i = 0; i < 15; ++i) {
    srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  }
  assert_int_equal(ps->p[0].reo_mult, 5);
  srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  assert_int_equal(ps->p[0].reo_mult, 4);
  /* Never below 1; decays without steering too. */
  for (i = 0; i < 16 * 10; ++i) {
    srd_pathset_on_loss(ps, 0, 0, 0, 1, SRD_S);
  }
  assert_int_equal(ps->p[0].reo_mult, 1);
  ps = init(&f, 2, 0, 71);
  srd_pathset_on_spurious(ps, 1);
  for (i = 0; i < 16; ++i) {
    srd_pathset_on_loss(ps, 1, 0, 0, 1, SRD_S);
  }
  assert_int_equal(ps->p[1].reo_mult, 1);
  /* Per path: path 0 untouched. */
  assert_int_equal(ps->p[0].reo_mult, 1);
  assert_int_equal(ps->p[0].reo_quiet, 0);
}

/* The pick contract, checked in a child process so that a failed assert()
   inside the engine fails this test instead of ending the program.
   Child exit codes: */
#define PICK_OK 0
#define PICK_EXCLUDED 1  /* returned |exclude| although another path exists */
#define PICK_AVOIDED 2   /* returned an avoided path though one was not */
#define PICK_NOT_FIRST 3 /* all avoided, but not the first to recover */
#define PICK_OUT_OF_RANGE 4

static const char *pick_why(int code) {
  switch (code) {
  case PICK_EXCLUDED:
    return "returned the excluded path although another path exists";
  case PICK_AVOIDED:
    return "returned an avoided path although a path was not avoided";
  case PICK_NOT_FIRST:
    return "every path avoided, but not the one that recovers first";
  case PICK_OUT_OF_RANGE:
    return "returned a path index >= n";
  default:
    return "?";
  }
}

/* check_pick picks once and checks the result against the contract in
   srd_pathset.h. */
static int check_pick(srd_pathset *ps, srd_tstamp now, uint32_t exclude) {
  uint32_t p = srd_pathset_pick(ps, &ps->cursor, now, exclude), i;
  int free_other = 0;
  srd_tstamp first = SRD_TSTAMP_NONE;

  if (p >= ps->n) {
    return PICK_OUT_OF_RANGE;
  }
  if (ps->n == 1) {
    return PICK_OK;
  }
  if (p == exclude) {
    return PICK_EXCLUDED;
  }
  if (!ps->steering) {
    return PICK_OK;
  }
  /* Half or more of the paths avoided: soft avoidance is off (Ultra
     Ethernet's 50% rule); a path avoided after failed probes (a streak of
     two) is still passed over while another path is left. */
  if (2 * srd_pathset_avoided(ps, now) >= ps->n) {
    int soft_other = 0;
    for (i = 0; i < ps->n; ++i) {
      if (i != exclude &&
          !(ps->p[i].avoid_until > now && ps->p[i].loss_streak >= 2)) {
        soft_other = 1;
      }
    }
    if (soft_other && ps->p[p].avoid_until > now && ps->p[p].loss_streak >= 2) {
      return PICK_AVOIDED;
    }
    return PICK_OK;
  }
  for (i = 0; i < ps->n; ++i) {
    if (i == exclude) {
      continue;
    }
    if (ps->p[i].avoid_until <= now) {
      free_other = 1;
    } else if (ps->p[i].avoid_until < first) {
      first = ps->p[i].avoid_until;
    }
  }
  if (free_other && ps->p[p].avoid_until > now) {
    return PICK_AVOIDED;
  }
  if (!free_other && ps->p[p].avoid_until != first) {
    return PICK_NOT_FIRST;
  }
  return PICK_OK;
}

/* run_child runs |fn| in a child and returns its exit code, or 100 + the
   signal that ended it. */
static int run_child(int (*fn)(void *), void *arg) {
  pid_t pid;
  int st;

  fflush(stdout);
  fflush(stderr);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    _exit(fn(arg));
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) {
    return 100 + WTERMSIG(st);
  }
  return WEXITSTATUS(st);
}

static void expect_child_ok(int rc) {
  if (rc >= 100) {
    fail_msg("srd_pathset_pick ended the process with signal %d (an "
             "engine assert?)",
             rc - 100);
  } else if (rc != PICK_OK) {
    fail_msg("srd_pathset_pick %s", pick_why(rc));
  }
}

static int two_paths_exclude(void *arg) {
  uint64_t seed;
  uint32_t i;
  int rc;
  (void)arg;

  /* Two paths, one excluded (retransmissions after losses on it): the
     other one, every time, whatever the spraying order. */
  for (seed = 1; seed <= 50; ++seed) {
    for (int steering = 0; steering < 2; ++steering) {
      fx f;
      srd_pathset *ps = init(&f, 2, steering, seed);
      for (i = 0; i < 40; ++i) {
        uint32_t exclude = i < 20 ? 0 : 1;
        if ((rc = check_pick(ps, 0, exclude)) != PICK_OK) {
          fprintf(stderr, "seed %u steering %d pick %u exclude %u\n",
                  (unsigned)seed, steering, i, exclude);
          return rc;
        }
      }
    }
  }
  return PICK_OK;
}

static void test_pathset_exclude_two_paths(void **state) {
  (void)state;

  expect_child_ok(run_child(two_paths_exclude, NULL));
}

static int three_paths_fallback(void *arg) {
  uint64_t seed;
  uint32_t i;
  int rc;
  (void)arg;

  /* Every path avoided, then one usable, wherever the cursor stands in
     its cycle: the contract of check_pick (the 50% rule) holds. */
  for (seed = 1; seed <= 50; ++seed) {
    fx f;
    srd_pathset *ps = init(&f, 3, 1, seed);
    srd_pathset_on_loss(ps, 0, 1000, 1000, 500, SRD_S);
    srd_pathset_on_loss(ps, 1, 1000, 1000, 200, SRD_S);
    srd_pathset_on_loss(ps, 2, 1000, 1000, 900, SRD_S);
    for (i = 0; i < 20; ++i) {
      if ((rc = check_pick(ps, 1000, NONE)) != PICK_OK) {
        fprintf(stderr, "seed %u pick %u\n", (unsigned)seed, i);
        return rc;
      }
    }
    /* Path 1 usable from 1200 to 1500: two of three avoided, spraying. */
    for (i = 0; i < 20; ++i) {
      if ((rc = check_pick(ps, 1300, NONE)) != PICK_OK) {
        fprintf(stderr, "seed %u pick %u (one usable path)\n", (unsigned)seed,
                i);
        return rc;
      }
    }
  }
  return PICK_OK;
}

static void test_pathset_fallback_any_cursor(void **state) {
  (void)state;

  expect_child_ok(run_child(three_paths_fallback, NULL));
}

static int random_picks(void *arg) {
  uint64_t s = *(uint64_t *)arg;
  uint32_t run, i, k;
  int rc;

  for (run = 0; run < 300; ++run) {
    fx f;
    uint32_t n = 2 + (uint32_t)(tu_rand(&s) % (SRD_MAX_PATHS - 1));
    int steering = (int)(tu_rand(&s) % 4 != 0);
    srd_pathset *ps = init(&f, n, steering, tu_rand(&s));
    srd_tstamp now = 1000;
    for (k = 0; k < 200; ++k) {
      uint32_t exclude = tu_rand(&s) % 3 ? NONE : (uint32_t)(tu_rand(&s) % n);
      /* Now and then avoid a few paths, sometimes nearly all. */
      if (tu_rand(&s) % 8 == 0) {
        uint32_t m = (uint32_t)(tu_rand(&s) % (n + 1));
        for (i = 0; i < m; ++i) {
          uint32_t p = (uint32_t)(tu_rand(&s) % n);
          srd_pathset_avoid(ps, p, now + 1 + tu_rand(&s) % 1000);
        }
      }
      /* And now and then a relative delay that moves a weight. */
      if (tu_rand(&s) % 4 == 0) {
        srd_pathset_on_rel(ps, (uint32_t)(tu_rand(&s) % n),
                           (int64_t)(tu_rand(&s) % 4000) - 1000, 500, 20, now);
      }
      if ((rc = check_pick(ps, now, exclude)) != PICK_OK) {
        fprintf(stderr,
                "seed=0x%016" PRIx64 " run %u n %u steering %d pick %u\n",
                tu_current_seed, run, n, steering, k);
        return rc;
      }
      now += tu_rand(&s) % 50;
    }
  }
  return PICK_OK;
}

/* A path whose packets are acknowledged but on which nothing from the
   peer ever arrives: after |limit| of them its weight falls to the floor
   at once (not avoided: its forward direction works); while the streak
   lasts, limit / 4 floor it again; it climbs back by the ordinary rule;
   an arrival on it ends the streak. */
static void test_pathset_reverse_dead(void **state) {
  fx f;
  srd_pathset *ps = init(&f, 4, 1, 5);
  const srd_duration margin = 1000, srtt = 10000;
  srd_tstamp now = 1000000;
  uint32_t cnt[4] = {0}, i;

  (void)state;
  for (i = 0; i < 63; ++i) {
    assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now), 0);
  }
  /* An arrival on it restarts the count. */
  srd_pathset_on_rx(ps, 2);
  for (i = 0; i < 63; ++i) {
    assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now), 0);
  }
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_FULL);
  assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now), 1);
  assert_int_equal(ps->p[2].rev_streak, 1);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_MIN);
  assert_int_equal(ps->n_light, 1);
  /* Light, not avoided: it carries an eighth of a share of the data. */
  assert_int_equal(srd_pathset_avoided(ps, now), 0);
  for (i = 0; i < 25 * 40; ++i) {
    ++cnt[pick(ps, now, NONE)];
  }
  assert_true(cnt[2] >= 36 && cnt[2] <= 44);
  /* It climbs back as any light path does (here one step)... */
  srd_pathset_on_rel(ps, 2, -2000, margin, srtt, now + srtt);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_MIN + 2);
  /* ...but while the streak lasts, limit / 4 unanswered packets floor it
     again, whatever the RTT rule allowed. */
  for (i = 0; i < 15; ++i) {
    assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now + srtt), 0);
  }
  assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now + srtt), 1);
  assert_int_equal(ps->p[2].rev_streak, 2);
  assert_int_equal(ps->p[2].weight, SRD_PATH_WEIGHT_MIN);
  assert_int_equal(ps->n_light, 1);
  /* The peer's packet on it: the streak ends, the full limit applies. */
  srd_pathset_on_rx(ps, 2);
  assert_int_equal(ps->p[2].rev_streak, 0);
  for (i = 0; i < 63; ++i) {
    assert_int_equal(srd_pathset_on_unechoed(ps, 2, 64, now + 2 * srtt), 0);
  }
  /* Without steering it is only counted. */
  ps = init(&f, 4, 0, 5);
  for (i = 0; i < 63; ++i) {
    assert_int_equal(srd_pathset_on_unechoed(ps, 1, 64, now), 0);
  }
  assert_int_equal(srd_pathset_on_unechoed(ps, 1, 64, now), 0);
  assert_int_equal(ps->p[1].rev_streak, 1);
  assert_int_equal(ps->p[1].weight, SRD_PATH_WEIGHT_FULL);
  assert_int_equal(ps->n_light, 0);
}

static void test_pathset_random_picks(void **state) {
  uint64_t seed = tu_seed("test_pathset_random_picks");
  int rc;
  (void)state;

  rc = run_child(random_picks, &seed);
  if (rc != PICK_OK) {
    print_error("failed with seed=0x%016" PRIx64 "\n", tu_current_seed);
  }
  expect_child_ok(rc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pathset_spray_cycles),
      cmocka_unit_test(test_pathset_burst),
      cmocka_unit_test(test_pathset_ctl_cursor),
      cmocka_unit_test(test_pathset_single),
      cmocka_unit_test(test_pathset_exclude),
      cmocka_unit_test(test_pathset_loss_avoid),
      cmocka_unit_test(test_pathset_all_avoided),
      cmocka_unit_test(test_pathset_steering_off),
      cmocka_unit_test(test_pathset_pick_retx),
      cmocka_unit_test(test_pathset_retx_all_avoided),
      cmocka_unit_test(test_pathset_loss_episode),
      cmocka_unit_test(test_pathset_dead_path_floored),
      cmocka_unit_test(test_pathset_delay_outlier),
      cmocka_unit_test(test_pathset_congested),
      cmocka_unit_test(test_pathset_weights),
      cmocka_unit_test(test_pathset_rack_older),
      cmocka_unit_test(test_pathset_reo_wnd),
      cmocka_unit_test(test_pathset_reo_decay),
      cmocka_unit_test(test_pathset_exclude_two_paths),
      cmocka_unit_test(test_pathset_fallback_any_cursor),
      cmocka_unit_test(test_pathset_reverse_dead),
      cmocka_unit_test(test_pathset_random_picks),
  };

  return cmocka_run_group_tests_name("pathset", tests, NULL, NULL);
}
