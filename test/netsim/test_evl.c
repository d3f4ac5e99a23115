/*
 * test_evl.c: the event list: order by time, equal-time ties by insertion
 * order (also for events scheduled from callbacks), cancellation and
 * stopping, moving and re-arming timers (also from their own callbacks),
 * pool exhaustion as a clean error, run_until and the clock, the
 * interrupt flag checked between events, sequence
 * renumbering, the bucket width following the event rate, and seeded random
 * comparisons against a sorted-list model, with times in the current
 * bucket, across the wheel and beyond it, while the bucket width changes.
 */
#include "nstest.h"

#include "netsim_evl.h"

/* A log of fired events. */
static uint64_t fired[4096];
static netsim_time fired_at[4096];
static size_t n_fired;

static void log_cb(netsim_evl *evl, netsim_timer *tm, void *ctx, uint64_t arg) {
  (void)tm;
  (void)ctx;
  assert_true(n_fired < 4096);
  fired_at[n_fired] = netsim_evl_now(evl);
  fired[n_fired++] = arg;
}

static netsim_evl *mk(uint32_t pooled) {
  netsim_evl_settings s = {.max_pooled = pooled, .heap_hint = 0};
  netsim_evl *evl = NULL;

  NS_OK(netsim_evl_new(&evl, &s, NULL));
  n_fired = 0;
  return evl;
}

static void test_evl_order_by_time(void **state) {
  netsim_evl *evl = mk(64);
  static const netsim_time t[] = {50, 10, 40, 30, 20, 60, 0, 15};
  size_t i;

  (void)state;
  for (i = 0; i < 8; ++i) {
    NS_OK(netsim_evl_schedule(evl, t[i], log_cb, NULL, t[i], NULL));
  }
  assert_int_equal(netsim_evl_pending(evl), 8);
  assert_int_equal(netsim_evl_next_time(evl), 0);
  assert_int_equal(netsim_evl_run_until(evl, NETSIM_TIME_NONE), 8);
  assert_int_equal(n_fired, 8);
  for (i = 1; i < 8; ++i) {
    assert_true(fired[i - 1] < fired[i]);
    assert_int_equal(fired_at[i], fired[i]);
  }
  assert_int_equal(netsim_evl_count(evl), 8);
  assert_int_equal(netsim_evl_next_time(evl), NETSIM_TIME_NONE);
  netsim_evl_del(evl);
}

/* chain_cb schedules two more events at the current time the first time
   it runs: they must run after everything already scheduled for now. */
static void chain_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  log_cb(evl, tm, ctx, arg);
  if (arg == 1000) {
    NS_OK(netsim_evl_schedule(evl, netsim_evl_now(evl), log_cb, NULL, 2000,
                              NULL));
    NS_OK(netsim_evl_schedule(evl, netsim_evl_now(evl), log_cb, NULL, 2001,
                              NULL));
  }
}

static void test_evl_ties_by_insertion(void **state) {
  netsim_evl *evl = mk(1024);
  netsim_timer tm[8];
  size_t i;

  (void)state;
  /* 300 events at the same time, scheduled in a known order, interleaved
     with events at other times and with caller timers. */
  for (i = 0; i < 300; ++i) {
    NS_OK(netsim_evl_schedule(evl, 100, i == 150 ? chain_cb : log_cb, NULL,
                              i == 150 ? 1000 : i, NULL));
    NS_OK(
        netsim_evl_schedule(evl, 100 + (i % 7), log_cb, NULL, 5000 + i, NULL));
    if (i < 8) {
      netsim_timer_init(&tm[i], log_cb, NULL, 3000 + i);
      NS_OK(netsim_evl_timer_set(evl, &tm[i], 100));
    }
  }
  netsim_evl_run_until(evl, 100);
  /* At t=100: the 300 in insertion order, with the 8 timers and the
     i%7==0 events interleaved where they were scheduled, then the two
     events scheduled from the callback. */
  {
    size_t k = 0, j;
    for (i = 0; i < 300; ++i) {
      assert_int_equal(fired[k++], i == 150 ? 1000 : i);
      if (i % 7 == 0) {
        assert_int_equal(fired[k++], 5000 + i);
      }
      if (i < 8) {
        assert_int_equal(fired[k++], 3000 + i);
      }
    }
    assert_int_equal(fired[k++], 2000);
    assert_int_equal(fired[k++], 2001);
    assert_int_equal(n_fired, k);
    for (j = 0; j < k; ++j) {
      assert_int_equal(fired_at[j], 100);
    }
  }
  assert_int_equal(netsim_evl_now(evl), 100);
  netsim_evl_run_until(evl, NETSIM_TIME_NONE);
  /* The later ones: by time, then insertion order. */
  for (i = 1; i < n_fired; ++i) {
    assert_true(fired_at[i - 1] <= fired_at[i]);
    if (fired_at[i - 1] == fired_at[i] && fired_at[i] > 100) {
      assert_true(fired[i - 1] < fired[i]);
    }
  }
  netsim_evl_del(evl);
}

static void test_evl_cancel(void **state) {
  netsim_evl *evl = mk(16);
  netsim_evid a, b, c;
  netsim_timer tm;

  (void)state;
  NS_OK(netsim_evl_schedule(evl, 10, log_cb, NULL, 1, &a));
  NS_OK(netsim_evl_schedule(evl, 20, log_cb, NULL, 2, &b));
  NS_OK(netsim_evl_schedule(evl, 30, log_cb, NULL, 3, &c));
  netsim_timer_init(&tm, log_cb, NULL, 4);
  NS_OK(netsim_evl_timer_set(evl, &tm, 25));
  assert_true(netsim_timer_pending(&tm));
  assert_int_equal(netsim_evl_timer_expiry(evl, &tm), 25);
  NS_OK(netsim_evl_cancel(evl, b));
  assert_int_equal(netsim_evl_cancel(evl, b), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_evl_cancel(evl, 0), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_evl_cancel(evl, 12345678), NETSIM_ERR_NOENT);
  netsim_evl_timer_stop(evl, &tm);
  netsim_evl_timer_stop(evl, &tm);
  assert_false(netsim_timer_pending(&tm));
  assert_int_equal(netsim_evl_timer_expiry(evl, &tm), NETSIM_TIME_NONE);
  assert_int_equal(netsim_evl_pending(evl), 2);
  netsim_evl_run_until(evl, 100);
  assert_int_equal(n_fired, 2);
  assert_int_equal(fired[0], 1);
  assert_int_equal(fired[1], 3);
  /* Fired events cannot be cancelled, even after their slot was reused. */
  assert_int_equal(netsim_evl_cancel(evl, a), NETSIM_ERR_NOENT);
  NS_OK(netsim_evl_schedule(evl, 200, log_cb, NULL, 5, NULL));
  assert_int_equal(netsim_evl_cancel(evl, c), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_evl_pending(evl), 1);
  netsim_evl_del(evl);
}

static netsim_timer *self_tm;
static int self_mode;

/* self_cb re-arms, stops or re-arms-then-stops its own timer. */
static void self_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                    uint64_t arg) {
  log_cb(evl, tm, ctx, arg);
  assert_false(netsim_timer_pending(tm));
  if (n_fired >= 5) {
    return;
  }
  switch (self_mode) {
  case 0:
    NS_OK(netsim_evl_timer_set(evl, tm, netsim_evl_now(evl) + 10));
    assert_true(netsim_timer_pending(tm));
    break;
  case 1:
    netsim_evl_timer_stop(evl, tm);
    break;
  case 2:
    NS_OK(netsim_evl_timer_set(evl, tm, netsim_evl_now(evl) + 10));
    netsim_evl_timer_stop(evl, tm);
    break;
  default:
    /* Re-arm at the same time: runs after the other event due now. */
    NS_OK(netsim_evl_timer_set(evl, tm, netsim_evl_now(evl)));
    break;
  }
}

static void test_evl_rearm_from_callback(void **state) {
  netsim_timer tm;
  int mode;

  (void)state;
  for (mode = 0; mode < 4; ++mode) {
    netsim_evl *evl = mk(16);
    self_mode = mode;
    self_tm = &tm;
    netsim_timer_init(&tm, self_cb, NULL, 7);
    NS_OK(netsim_evl_timer_set(evl, &tm, 5));
    NS_OK(netsim_evl_schedule(evl, 5, log_cb, NULL, 8, NULL));
    NS_OK(netsim_evl_schedule(evl, 12, log_cb, NULL, 9, NULL));
    netsim_evl_run_until(evl, 1000);
    switch (mode) {
    case 0:
      /* 7@5, 8@5, 9@12, 7@15, 7@25, 7@35: the timer stops re-arming at
         five events. */
      assert_int_equal(n_fired, 5);
      assert_int_equal(fired[0], 7);
      assert_int_equal(fired[1], 8);
      assert_int_equal(fired[2], 9);
      assert_int_equal(fired_at[3], 15);
      assert_int_equal(fired_at[4], 25);
      break;
    case 1:
    case 2:
      assert_int_equal(n_fired, 3);
      break;
    default:
      /* 7@5, 8@5, 7@5, 7@5, 7@5 then no more re-arming; 9@12. */
      assert_int_equal(n_fired, 6);
      assert_int_equal(fired[1], 8);
      assert_int_equal(fired[2], 7);
      assert_int_equal(fired_at[4], 5);
      assert_int_equal(fired[5], 9);
      break;
    }
    assert_false(netsim_timer_pending(&tm));
    assert_int_equal(netsim_evl_pending(evl), 0);
    netsim_evl_del(evl);
  }
}

static void test_evl_move_pending(void **state) {
  netsim_evl *evl = mk(4);
  netsim_timer t1, t2;

  (void)state;
  netsim_timer_init(&t1, log_cb, NULL, 1);
  netsim_timer_init(&t2, log_cb, NULL, 2);
  NS_OK(netsim_evl_timer_set(evl, &t1, 10));
  NS_OK(netsim_evl_timer_set(evl, &t2, 20));
  /* Later, then earlier than the other, then equal: a fresh sequence. */
  NS_OK(netsim_evl_timer_set(evl, &t1, 30));
  NS_OK(netsim_evl_timer_set(evl, &t1, 5));
  assert_int_equal(netsim_evl_next_time(evl), 5);
  NS_OK(netsim_evl_timer_set(evl, &t1, 20));
  assert_int_equal(netsim_evl_pending(evl), 2);
  netsim_evl_run_until(evl, 100);
  assert_int_equal(n_fired, 2);
  assert_int_equal(fired[0], 2);
  assert_int_equal(fired[1], 1);
  /* The past is refused. */
  assert_int_equal(netsim_evl_timer_set(evl, &t1, 99), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_evl_schedule(evl, 50, log_cb, NULL, 0, NULL),
                   NETSIM_ERR_INVAL);
  netsim_evl_del(evl);
}

static void test_evl_pool_exhaustion(void **state) {
  netsim_evl *evl = mk(4);
  netsim_evid id;
  int i;

  (void)state;
  for (i = 0; i < 4; ++i) {
    NS_OK(netsim_evl_schedule(evl, 10 + i, log_cb, NULL, i, NULL));
  }
  assert_int_equal(netsim_evl_schedule(evl, 10, log_cb, NULL, 9, &id),
                   NETSIM_ERR_POOL);
  assert_int_equal(netsim_evl_pending(evl), 4);
  assert_true(netsim_evl_step(evl));
  NS_OK(netsim_evl_schedule(evl, 20, log_cb, NULL, 9, &id));
  assert_int_equal(netsim_evl_schedule(evl, 10, log_cb, NULL, 9, NULL),
                   NETSIM_ERR_POOL);
  netsim_evl_run_until(evl, NETSIM_TIME_NONE);
  assert_int_equal(n_fired, 5);
  assert_int_equal(fired[4], 9);
  netsim_evl_del(evl);

  /* A list with no pool at all. */
  evl = mk(0);
  assert_int_equal(netsim_evl_schedule(evl, 10, log_cb, NULL, 9, NULL),
                   NETSIM_ERR_POOL);
  netsim_evl_del(evl);
}

static void stop_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                    uint64_t arg) {
  log_cb(evl, tm, ctx, arg);
  netsim_evl_stop(evl);
}

static void test_evl_run_until_clock(void **state) {
  netsim_evl *evl = mk(8);

  (void)state;
  NS_OK(netsim_evl_schedule(evl, 10, log_cb, NULL, 1, NULL));
  NS_OK(netsim_evl_schedule(evl, 20, stop_cb, NULL, 2, NULL));
  NS_OK(netsim_evl_schedule(evl, 30, log_cb, NULL, 3, NULL));
  assert_int_equal(netsim_evl_run_until(evl, 15), 1);
  assert_int_equal(netsim_evl_now(evl), 15);
  /* Events exactly at |until| run. */
  assert_int_equal(netsim_evl_run_until(evl, 20), 1);
  assert_int_equal(netsim_evl_now(evl), 20);
  NS_OK(netsim_evl_schedule(evl, 20, log_cb, NULL, 4, NULL));
  /* stop() leaves the clock at the stopping event. */
  NS_OK(netsim_evl_schedule(evl, 25, stop_cb, NULL, 5, NULL));
  assert_int_equal(netsim_evl_run_until(evl, 1000), 2);
  assert_int_equal(netsim_evl_now(evl), 25);
  assert_int_equal(netsim_evl_run_until(evl, 1000), 1);
  assert_int_equal(netsim_evl_now(evl), 1000);
  assert_int_equal(netsim_evl_step(evl), 0);
  netsim_evl_del(evl);
}

/* The flag netsim_evl_set_interrupt watches, and a callback that sets it
   the way a signal handler would (between two events). */
static volatile sig_atomic_t intr_flag;

static void intr_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                    uint64_t arg) {
  log_cb(evl, tm, ctx, arg);
  intr_flag = 1;
}

static void test_evl_interrupt(void **state) {
  netsim_evl *evl = mk(8);

  (void)state;
  intr_flag = 0;
  netsim_evl_set_interrupt(evl, &intr_flag);
  NS_OK(netsim_evl_schedule(evl, 10, log_cb, NULL, 1, NULL));
  NS_OK(netsim_evl_schedule(evl, 20, intr_cb, NULL, 2, NULL));
  NS_OK(netsim_evl_schedule(evl, 20, log_cb, NULL, 3, NULL));
  NS_OK(netsim_evl_schedule(evl, 30, log_cb, NULL, 4, NULL));
  /* Unset, it changes nothing. */
  assert_int_equal(netsim_evl_run_until(evl, 15), 1);
  assert_int_equal(netsim_evl_now(evl), 15);
  /* Set by an event, it stops the run before the next one, even one due
     at the same time, and leaves the clock at the event that set it. */
  assert_int_equal(netsim_evl_run_until(evl, 1000), 1);
  assert_int_equal(netsim_evl_now(evl), 20);
  assert_int_equal(n_fired, 2);
  /* While it stays set, nothing fires and the clock stays. */
  assert_int_equal(netsim_evl_run_until(evl, 1000), 0);
  assert_int_equal(netsim_evl_now(evl), 20);
  /* Cleared, the run goes on where it stopped, in order. */
  intr_flag = 0;
  assert_int_equal(netsim_evl_run_until(evl, 1000), 2);
  assert_int_equal(netsim_evl_now(evl), 1000);
  assert_int_equal(n_fired, 4);
  assert_int_equal(fired[2], 3);
  assert_int_equal(fired[3], 4);
  /* NULL watches nothing. */
  intr_flag = 1;
  netsim_evl_set_interrupt(evl, NULL);
  NS_OK(netsim_evl_schedule(evl, 1010, log_cb, NULL, 5, NULL));
  assert_int_equal(netsim_evl_run_until(evl, 2000), 1);
  assert_int_equal(netsim_evl_now(evl), 2000);
  netsim_evl_del(evl);
}

static void test_evl_renumber(void **state) {
  netsim_evl *evl = mk(64);
  int i;

  (void)state;
  /* Equal-time ties must survive the sequence space running out. */
  evl->seq = NETSIM_EVL_SEQ_LIMIT - 20;
  for (i = 0; i < 40; ++i) {
    /* Three times in the current bucket, in the wheel and beyond it. */
    static const netsim_time base[3] = {100, 100 * NETSIM_NS, 1 * NETSIM_MS};
    NS_OK(netsim_evl_schedule(evl, base[(i / 3) % 3] + (i % 3), log_cb, NULL, i,
                              NULL));
  }
  assert_true(evl->seq < 100);
  netsim_evl_run_until(evl, NETSIM_TIME_NONE);
  assert_int_equal(n_fired, 40);
  for (i = 1; i < 40; ++i) {
    assert_true(fired_at[i - 1] <= fired_at[i]);
    if (fired_at[i - 1] == fired_at[i]) {
      assert_true(fired[i - 1] < fired[i]);
    }
  }
  netsim_evl_del(evl);
}

/* The random model: a plain list of (time, sequence, id) entries. */
typedef struct ment {
  netsim_time at;
  uint64_t seq;
  uint64_t id;
} ment;

static ment model[2048];
static size_t n_model;
static uint64_t model_seq;
static netsim_timer mtm[32];
static netsim_evid mev[256];
static uint64_t rnd_state;

static void model_del(uint64_t id) {
  size_t i;
  for (i = 0; i < n_model; ++i) {
    if (model[i].id == id) {
      model[i] = model[--n_model];
      return;
    }
  }
}

static void model_add(netsim_time at, uint64_t id) {
  model_del(id);
  assert_true(n_model < 2048);
  model[n_model].at = at;
  model[n_model].seq = ++model_seq;
  model[n_model].id = id;
  ++n_model;
}

static int model_pop(ment *out) {
  size_t i, best = 0;
  if (n_model == 0) {
    return 0;
  }
  for (i = 1; i < n_model; ++i) {
    if (model[i].at < model[best].at ||
        (model[i].at == model[best].at && model[i].seq < model[best].seq)) {
      best = i;
    }
  }
  *out = model[best];
  model[best] = model[--n_model];
  return 1;
}

/* model_cb is every timer's callback: it checks the model agrees, then
   sometimes re-arms itself. */
static void model_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  ment m = {0, 0, 0};

  (void)ctx;
  tu_assert(model_pop(&m));
  tu_assert(m.id == arg);
  tu_assert(m.at == netsim_evl_now(evl));
  if (arg < 32 && tu_rand(&rnd_state) % 3 == 0) {
    netsim_time at = netsim_evl_now(evl) + tu_rand(&rnd_state) % 4;
    NS_OK(netsim_evl_timer_set(evl, tm, at));
    model_add(at, arg);
  }
}

/* model_next returns the model's earliest time, or NETSIM_TIME_NONE. */
static netsim_time model_next(void) {
  netsim_time t = NETSIM_TIME_NONE;
  size_t i;

  for (i = 0; i < n_model; ++i) {
    if (model[i].at < t) {
      t = model[i].at;
    }
  }
  return t;
}

/* model_at returns timer |id|'s time in the model, or NETSIM_TIME_NONE. */
static netsim_time model_at(uint64_t id) {
  size_t i;

  for (i = 0; i < n_model; ++i) {
    if (model[i].id == id) {
      return model[i].at;
    }
  }
  return NETSIM_TIME_NONE;
}

/* random_vs_model runs random operations against the model.  With
   |spread|, times reach across the wheel and beyond it, and the bucket
   width is changed now and then, as the list does by itself. */
static void random_vs_model(const char *name, int spread) {
  netsim_evl *evl;
  int round, op;

  rnd_state = tu_seed(name);
  for (round = 0; round < 20; ++round) {
    size_t i;
    evl = mk(256);
    n_model = 0;
    model_seq = 0;
    for (i = 0; i < 32; ++i) {
      netsim_timer_init(&mtm[i], model_cb, NULL, i);
    }
    memset(mev, 0, sizeof(mev));
    for (op = 0; op < 4000; ++op) {
      uint64_t r = tu_rand(&rnd_state);
      netsim_time now = netsim_evl_now(evl);
      netsim_time at = now + (r >> 8) % 16;
      uint32_t k;
      if (spread) {
        /* The current bucket, the wheel (4096 buckets of 2^8 to 2^24 ps
           below), or beyond. */
        static const netsim_time span[4] = {16, 1u << 20, 1ULL << 28,
                                            1ULL << 40};
        at = now + (r >> 16) % span[(r >> 8) & 3];
        if ((r >> 12) % 64 == 0) {
          netsim_evl_set_width(evl, 8 + (uint32_t)((r >> 20) % 17));
        }
      }
      switch (r % 6) {
      case 0:
        k = (uint32_t)((r >> 32) % 32);
        NS_OK(netsim_evl_timer_set(evl, &mtm[k], at));
        model_add(at, k);
        break;
      case 1:
        k = (uint32_t)((r >> 32) % 32);
        netsim_evl_timer_stop(evl, &mtm[k]);
        model_del(k);
        break;
      case 2:
        k = (uint32_t)((r >> 32) % 256);
        if (netsim_evl_cancel(evl, mev[k]) == 0) {
          model_del(100 + k);
        }
        if (netsim_evl_schedule(evl, at, model_cb, NULL, 100 + k, &mev[k]) ==
            0) {
          model_add(at, 100 + k);
        }
        break;
      case 3:
        k = (uint32_t)((r >> 32) % 256);
        if (netsim_evl_cancel(evl, mev[k]) == 0) {
          model_del(100 + k);
        }
        break;
      default:
        netsim_evl_step(evl);
        break;
      }
      tu_assert(netsim_evl_pending(evl) == n_model);
      tu_assert(netsim_evl_next_time(evl) == model_next());
      k = (uint32_t)((r >> 40) % 32);
      tu_assert(netsim_evl_timer_expiry(evl, &mtm[k]) == model_at(k));
    }
    netsim_evl_run_until(evl, NETSIM_TIME_NONE);
    tu_assert(n_model == 0);
    netsim_evl_del(evl);
  }
}

static void test_evl_random_vs_model(void **state) {
  (void)state;
  random_vs_model("test_evl_random_vs_model", 0);
}

static void test_evl_random_spread_vs_model(void **state) {
  (void)state;
  random_vs_model("test_evl_random_spread_vs_model", 1);
}

/* tick_cb re-arms itself |period| ps later (ctx), arg times. */
static void tick_cb(netsim_evl *evl, netsim_timer *tm, void *ctx,
                    uint64_t arg) {
  const netsim_time *period = ctx;

  ++n_fired;
  if (n_fired < arg) {
    NS_OK(netsim_evl_timer_set(evl, tm, netsim_evl_now(evl) + *period));
  }
}

static void test_evl_width_follows_rate(void **state) {
  static const netsim_time period[2] = {1 * NETSIM_US, 100};
  int i;

  (void)state;
  for (i = 0; i < 2; ++i) {
    netsim_evl *evl = mk(0);
    netsim_timer tm[4];
    uint32_t j;
    for (j = 0; j < 4; ++j) {
      netsim_timer_init(&tm[j], tick_cb, (void *)&period[i], 40000);
      NS_OK(netsim_evl_timer_set(evl, &tm[j], j));
    }
    netsim_evl_run_until(evl, NETSIM_TIME_NONE);
    assert_int_equal(netsim_evl_count(evl), 40000 + 3);
    /* Four events a period: a bucket of about 8 events is two periods. */
    if (i == 0) {
      assert_true(evl->wshift >= 20 && evl->wshift <= 22);
    } else {
      assert_int_equal(evl->wshift, NETSIM_EVL_WSHIFT_MIN);
    }
    netsim_evl_del(evl);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_evl_order_by_time),
      cmocka_unit_test(test_evl_ties_by_insertion),
      cmocka_unit_test(test_evl_cancel),
      cmocka_unit_test(test_evl_rearm_from_callback),
      cmocka_unit_test(test_evl_move_pending),
      cmocka_unit_test(test_evl_pool_exhaustion),
      cmocka_unit_test(test_evl_run_until_clock),
      cmocka_unit_test(test_evl_interrupt),
      cmocka_unit_test(test_evl_renumber),
      cmocka_unit_test(test_evl_random_vs_model),
      cmocka_unit_test(test_evl_random_spread_vs_model),
      cmocka_unit_test(test_evl_width_follows_rate),
  };
  return cmocka_run_group_tests_name("netsim_evl", tests, NULL, NULL);
}
