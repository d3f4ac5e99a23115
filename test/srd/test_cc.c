/*
 * test_cc.c: congestion control: the registry, and the "swift" and
 * "fixed" algorithms: slow start, additive increase (also below one
 * packet), the delay-proportional decrease only under connection-wide
 * congestion, once per RTT, the window's bounds, losses, the loss-rate
 * round, and timeouts; the delay target, fixed or derived from the
 * path (srd_cc_target), and Swift's flow-based scaling of it
 * (srd_cc_flow_scaling).
 */
#include <string.h>

#include "testutil.h"

#include "srd_cc.h"

#define PKT 4096u
#define MIN_RTT (10 * SRD_US)
#define TARGET (25 * SRD_US)

static void setup(srd_cc *cc, srd_cc_stat *st, const srd_cc_ops *ops,
                  srd_tstamp now) {
  memset(cc, 0, sizeof(*cc));
  memset(st, 0, sizeof(*st));
  st->pkt_bytes = PKT;
  st->target_qdelay = TARGET;
  st->init_cwnd = 10 * PKT;
  st->min_cwnd = PKT / 100;
  st->max_cwnd = 1000 * PKT;
  st->fixed_cwnd = 64 * PKT;
  st->srtt = 0;
  st->min_rtt = UINT64_MAX;
  cc->ops = ops;
  ops->init(cc, st, now);
}

/* sampled gives |st| an RTT history: base MIN_RTT, smoothed |srtt|. */
static void sampled(srd_cc_stat *st, srd_duration srtt) {
  st->min_rtt = MIN_RTT;
  st->srtt = srtt;
}

static srd_cc_ack mkack(uint64_t bytes, uint32_t pkts, srd_duration rtt,
                        int congested) {
  srd_cc_ack a;

  a.bytes_acked = bytes;
  a.pkts_acked = pkts;
  a.rtt = rtt;
  a.congested = congested;
  return a;
}

static void on_ack(srd_cc *cc, srd_cc_stat *st, uint64_t bytes, uint32_t pkts,
                   srd_duration rtt, int congested, srd_tstamp now) {
  srd_cc_ack a = mkack(bytes, pkts, rtt, congested);

  cc->ops->on_ack(cc, st, &a, now);
}

static void test_cc_registry(void **state) {
  const char *const *names = srd_cc_names();
  size_t i;
  (void)state;

  assert_ptr_equal(srd_cc_find("swift"), &srd_cc_swift);
  assert_ptr_equal(srd_cc_find("fixed"), &srd_cc_fixed);
  /* NULL is the default. */
  assert_ptr_equal(srd_cc_find(NULL), &srd_cc_swift);
  assert_null(srd_cc_find("nope"));
  assert_null(srd_cc_find(""));
  assert_null(srd_cc_find("swif"));
  assert_null(srd_cc_find("swiftx"));
  assert_null(srd_cc_find("Swift"));
  assert_string_equal(srd_cc_swift.name, "swift");
  assert_string_equal(srd_cc_fixed.name, "fixed");
  /* The names, ending in NULL, each found by name. */
  assert_non_null(names);
  for (i = 0; names[i] != NULL; ++i) {
    const srd_cc_ops *ops = srd_cc_find(names[i]);
    assert_non_null(ops);
    assert_string_equal(ops->name, names[i]);
    assert_non_null(ops->init);
    assert_non_null(ops->on_ack);
    assert_non_null(ops->on_loss);
    assert_non_null(ops->on_timeout);
    assert_non_null(ops->reset);
  }
  assert_int_equal(i, 2);
  assert_string_equal(names[0], "swift");
  assert_string_equal(names[1], "fixed");
}

static void test_cc_swift_init(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, 5 * SRD_MS);
  assert_true(st.cwnd == 10 * PKT);
  assert_true(cc.slow_start);
  assert_true(cc.last_decrease == 0);
  assert_true(cc.round_start == 5 * SRD_MS);
  assert_int_equal(cc.round_lost, 0);
  assert_int_equal(cc.round_acked, 0);
  /* reset starts over. */
  st.cwnd = 3;
  cc.slow_start = 0;
  cc.last_decrease = 7;
  cc.round_lost = 9;
  srd_cc_swift.reset(&cc, &st, 6 * SRD_MS);
  assert_true(st.cwnd == 10 * PKT);
  assert_true(cc.slow_start);
  assert_true(cc.last_decrease == 0);
  assert_true(cc.round_start == 6 * SRD_MS);
  assert_int_equal(cc.round_lost, 0);
}

static void test_cc_swift_slow_start(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  int i;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  /* No RTT sample in the ACK, or no base RTT yet: no change. */
  st.inflight = st.cwnd;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 10 * PKT);
  sampled(&st, 12 * SRD_US);
  on_ack(&cc, &st, PKT, 1, 0, 0, ++t);
  assert_true(st.cwnd == 10 * PKT);
  /* Below the target: grow by the bytes acknowledged. */
  for (i = 1; i <= 10; ++i) {
    st.inflight = st.cwnd - PKT;
    on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, t += SRD_US);
    assert_true(st.cwnd == (10u + (unsigned)i) * PKT);
  }
  on_ack(&cc, &st, 3000, 1, 12 * SRD_US, 1, t += SRD_US);
  assert_true(st.cwnd == 20 * PKT + 3000);
  assert_true(cc.slow_start);
  assert_true(st.decreases == 0);
  /* Up to max_cwnd, not beyond. */
  st.inflight = st.cwnd;
  on_ack(&cc, &st, 2000 * PKT, 2000, 12 * SRD_US, 0, t += SRD_US);
  assert_true(st.cwnd == st.max_cwnd);
}

static void test_cc_swift_app_limited(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, 12 * SRD_US);
  /* inflight + acked below half the window: the application, not the
     window, limits the sender; no growth. */
  st.inflight = 0;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 10 * PKT);
  st.inflight = 5 * PKT - PKT - 1;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 10 * PKT);
  /* At half: grows. */
  st.inflight = 5 * PKT - PKT;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 11 * PKT);
  /* The same in additive increase. */
  on_ack(&cc, &st, PKT, 1, MIN_RTT + TARGET, 0, ++t); /* ends slow start */
  assert_false(cc.slow_start);
  assert_true(st.cwnd == 11 * PKT);
  st.inflight = 0;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 11 * PKT);
  st.inflight = 11 * PKT;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd > 11 * PKT);
}

static void test_cc_swift_additive_increase(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  uint64_t w0;
  uint32_t i;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, 12 * SRD_US);
  /* A delay at or above the target ends slow start; not congested, so no
     decrease. */
  on_ack(&cc, &st, PKT, 1, MIN_RTT + TARGET, 0, ++t);
  assert_false(cc.slow_start);
  assert_true(st.cwnd == 10 * PKT);
  assert_true(st.decreases == 0);
  /* pkt * acked / cwnd per ACK: 4096 * 4096 / 40960 = 409.6. */
  st.inflight = st.cwnd;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 10 * PKT + 409);
  /* About one packet per window of acknowledgements. */
  w0 = st.cwnd;
  for (i = 0; i < w0 / PKT; ++i) {
    st.inflight = st.cwnd;
    on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, t += SRD_US);
  }
  assert_true(st.cwnd > w0 + PKT * 9 / 10);
  assert_true(st.cwnd <= w0 + PKT);
  /* A whole window in one ACK: exactly one packet. */
  st.cwnd = 20 * PKT;
  st.inflight = st.cwnd;
  on_ack(&cc, &st, 20 * PKT, 20, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 21 * PKT);
  assert_true(st.decreases == 0);
}

static void test_cc_swift_below_one_packet(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, 12 * SRD_US);
  on_ack(&cc, &st, PKT, 1, MIN_RTT + TARGET, 0, ++t);
  assert_false(cc.slow_start);
  /* Below one packet: an eighth of a packet per packet acknowledged. */
  st.cwnd = 1000;
  st.inflight = 1000;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 1000 + PKT / 8);
  on_ack(&cc, &st, 3 * PKT, 3, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 1000 + PKT / 8 + 3 * PKT / 8);
  /* Once at a packet or more, the additive rule: pkt * acked / cwnd. */
  st.cwnd = PKT;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 2 * PKT);
  /* In slow start the bytes acknowledged count, even below a packet. */
  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, 12 * SRD_US);
  st.cwnd = 100;
  st.inflight = 100;
  on_ack(&cc, &st, PKT, 1, 12 * SRD_US, 0, ++t);
  assert_true(st.cwnd == 100 + PKT);
}

static void test_cc_swift_decrease(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  const srd_duration srtt = 20 * SRD_US;
  uint64_t w;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, srtt);
  st.inflight = st.cwnd;
  /* Above the target (35 us) but not connection-wide: no cut, and slow
     start ends. */
  on_ack(&cc, &st, PKT, 1, 50 * SRD_US, 0, t += SRD_US);
  assert_true(st.cwnd == 10 * PKT);
  assert_false(cc.slow_start);
  assert_true(st.decreases == 0);
  /* Congested but below the target: no cut (growth instead). */
  on_ack(&cc, &st, PKT, 1, 34 * SRD_US, 1, t += SRD_US);
  assert_true(st.cwnd > 10 * PKT);
  assert_true(st.decreases == 0);
  /* Congested and 50 us: factor 1 - 0.8 * 15/50 = 0.76. */
  st.cwnd = 10 * PKT;
  on_ack(&cc, &st, PKT, 1, 50 * SRD_US, 1, t += SRD_US);
  assert_true(st.cwnd == 31129); /* 40960 * 0.76 = 31129.6 */
  assert_true(st.decreases == 1);
  assert_true(st.wide_decreases == 1);
  assert_true(cc.last_decrease == t);
  /* Within one srtt: no second cut. */
  on_ack(&cc, &st, PKT, 1, 50 * SRD_US, 1, t + srtt - 1);
  assert_true(st.cwnd == 31129);
  assert_true(st.decreases == 1);
  /* One srtt later: 100 us, 1 - 0.8 * 65/100 = 0.48, capped at 0.5. */
  t += srtt;
  on_ack(&cc, &st, PKT, 1, 100 * SRD_US, 1, t);
  assert_true(st.cwnd == 31129 / 2);
  assert_true(st.decreases == 2);
  /* 40 us: 1 - 0.8 * 5/40 = 0.9. */
  t += srtt;
  st.cwnd = 10000;
  on_ack(&cc, &st, PKT, 1, 40 * SRD_US, 1, t);
  assert_true(st.cwnd == 9000);
  /* Exactly at the target: the factor is 1, the window does not move
     (and does not grow). */
  t += srtt;
  on_ack(&cc, &st, PKT, 1, MIN_RTT + TARGET, 1, t);
  assert_true(st.cwnd == 9000);
  /* A huge delay: halved, no more. */
  t += srtt;
  on_ack(&cc, &st, PKT, 1, SRD_S, 1, t);
  assert_true(st.cwnd == 4500);
  /* Down to min_cwnd and no further. */
  for (w = 0; w < 20; ++w) {
    t += srtt;
    on_ack(&cc, &st, PKT, 1, SRD_S, 1, t);
  }
  assert_true(st.cwnd == st.min_cwnd);
  /* A larger floor clamps the cut. */
  st.min_cwnd = 3000;
  st.cwnd = 4000;
  t += srtt;
  on_ack(&cc, &st, PKT, 1, SRD_S, 1, t);
  assert_true(st.cwnd == 3000);
}

static void test_cc_swift_decrease_first_at_zero(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  (void)state;

  /* A cut at time 0 still counts as a cut for the once-per-RTT rule. */
  setup(&cc, &st, &srd_cc_swift, 0);
  sampled(&st, 20 * SRD_US);
  on_ack(&cc, &st, PKT, 1, SRD_S, 1, 0);
  assert_true(st.cwnd == 5 * PKT);
  assert_true(cc.last_decrease != 0);
  on_ack(&cc, &st, PKT, 1, SRD_S, 1, 1);
  assert_true(st.cwnd == 5 * PKT);
}

static void test_cc_swift_on_loss(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  const srd_duration srtt = 20 * SRD_US;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, srtt);
  /* A loss on one path (not connection-wide): no cut. */
  srd_cc_swift.on_loss(&cc, &st, 0, ++t);
  assert_true(st.cwnd == 10 * PKT);
  assert_true(cc.slow_start);
  assert_int_equal(cc.round_lost, 1);
  /* Connection-wide: halved, slow start over. */
  srd_cc_swift.on_loss(&cc, &st, 1, ++t);
  assert_true(st.cwnd == 5 * PKT);
  assert_false(cc.slow_start);
  assert_true(st.decreases == 1);
  assert_true(st.wide_decreases == 1);
  assert_int_equal(cc.round_lost, 2);
  /* At most once per srtt. */
  srd_cc_swift.on_loss(&cc, &st, 1, t + srtt - 1);
  assert_true(st.cwnd == 5 * PKT);
  srd_cc_swift.on_loss(&cc, &st, 1, t + srtt);
  assert_true(st.cwnd == 5 * PKT / 2);
  assert_true(st.decreases == 2);
}

/* lossy_round runs one loss-rate round from |t|: |lost| losses (not
   congested), |acked| packets acknowledged with the round's fastest RTT
   sample |floor| (0 for none), then a closing ACK one srtt after the
   round started.  Returns the window. */
static uint64_t lossy_round(srd_cc_stat *st, srd_duration floor, uint32_t lost,
                            uint32_t acked) {
  const srd_duration srtt = floor ? floor : MIN_RTT;
  srd_cc cc;
  srd_tstamp t0 = SRD_MS;
  uint32_t i;

  setup(&cc, st, &srd_cc_swift, t0);
  sampled(st, srtt);
  for (i = 0; i < lost; ++i) {
    srd_cc_swift.on_loss(&cc, st, 0, t0 + 1 + i);
  }
  assert_true(st->cwnd == 10 * PKT);
  /* The ACK carries no sample (a sample above the target would also
     trigger the delay rule); the round's floor is set directly. */
  on_ack(&cc, st, (uint64_t)acked * PKT, acked, 0, 0, t0 + srtt - 1);
  if (floor) {
    cc.round_min_rtt = floor;
  }
  /* Not yet a round. */
  assert_true(st->cwnd == 10 * PKT);
  assert_int_equal(cc.round_lost, lost);
  assert_int_equal(cc.round_acked, acked);
  on_ack(&cc, st, 0, 0, 0, 0, t0 + srtt);
  /* The round closed either way. */
  assert_int_equal(cc.round_lost, 0);
  assert_int_equal(cc.round_acked, 0);
  assert_true(cc.round_start == t0 + srtt);
  return st->cwnd;
}

static void test_cc_swift_loss_round(void **state) {
  srd_cc_stat st;
  const srd_duration queued = MIN_RTT + TARGET / 4 + 1;
  (void)state;

  /* More than 5% lost with queues building (the round's fastest sample
     above base + target/4): halved. */
  assert_true(lossy_round(&st, queued, 6, 94) == 5 * PKT);
  assert_true(st.decreases == 1);
  assert_true(st.wide_decreases == 0);
  /* The same loss without queueing (the floor at base + target/4):
     random loss, no cut; nor without any sample in the round. */
  assert_true(lossy_round(&st, MIN_RTT + TARGET / 4, 6, 94) == 10 * PKT);
  assert_true(st.decreases == 0);
  assert_true(lossy_round(&st, MIN_RTT, 50, 50) == 10 * PKT);
  assert_true(lossy_round(&st, 0, 50, 50) == 10 * PKT);
  /* 5% exactly is not more than 5%: 5 of 100. */
  assert_true(lossy_round(&st, queued, 5, 95) == 10 * PKT);
  /* Just above: 5 of 99. */
  assert_true(lossy_round(&st, queued, 5, 94) == 5 * PKT);
  /* A single loss is never a lossy round, even out of one packet. */
  assert_true(lossy_round(&st, queued, 1, 0) == 10 * PKT);
  assert_true(lossy_round(&st, queued, 2, 0) == 5 * PKT);
}

static void test_cc_swift_loss_round_timing(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t0 = SRD_MS;
  const srd_duration srtt = MIN_RTT + TARGET;
  (void)state;

  /* Before any RTT sample there are no rounds. */
  setup(&cc, &st, &srd_cc_swift, t0);
  srd_cc_swift.on_loss(&cc, &st, 0, t0);
  srd_cc_swift.on_loss(&cc, &st, 0, t0);
  on_ack(&cc, &st, 0, 0, 0, 0, t0 + SRD_S);
  assert_true(st.cwnd == 10 * PKT);
  assert_int_equal(cc.round_lost, 2);
  /* With srtt: the round closes and is lossy (its floor shows queueing),
     but the cut also waits for an srtt since the last one. */
  sampled(&st, srtt);
  cc.round_min_rtt = srtt;
  cc.last_decrease = t0 + SRD_S - 1;
  on_ack(&cc, &st, 0, 0, 0, 0, t0 + SRD_S);
  assert_true(st.cwnd == 10 * PKT);
  assert_int_equal(cc.round_lost, 0);
  /* Losses in timeouts count towards the round. */
  srd_cc_swift.on_timeout(&cc, &st, 1, 0, t0 + SRD_S + 1);
  srd_cc_swift.on_timeout(&cc, &st, 1, 0, t0 + SRD_S + 2);
  assert_int_equal(cc.round_lost, 2);
  assert_true(st.cwnd == 10 * PKT);
  cc.round_min_rtt = srtt;
  on_ack(&cc, &st, 0, 0, 0, 0, t0 + SRD_S + srtt);
  assert_true(st.cwnd == 5 * PKT);
}

static void test_cc_swift_on_timeout(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  const srd_duration srtt = 20 * SRD_US;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, t);
  sampled(&st, srtt);
  /* A first timeout, not congested: no cut. */
  srd_cc_swift.on_timeout(&cc, &st, 1, 0, t);
  assert_true(st.cwnd == 10 * PKT);
  assert_true(st.decreases == 0);
  /* Congested: halved, counted as wide. */
  srd_cc_swift.on_timeout(&cc, &st, 1, 1, t);
  assert_true(st.cwnd == 5 * PKT);
  assert_true(st.wide_decreases == 1);
  assert_false(cc.slow_start);
  /* The second in a row: halved, once per srtt, not wide. */
  srd_cc_swift.on_timeout(&cc, &st, 2, 0, t + 1);
  assert_true(st.cwnd == 5 * PKT);
  t += srtt;
  srd_cc_swift.on_timeout(&cc, &st, 2, 0, t);
  assert_true(st.cwnd == 5 * PKT / 2);
  assert_true(st.decreases == 2);
  assert_true(st.wide_decreases == 1);
  t += srtt;
  srd_cc_swift.on_timeout(&cc, &st, 4, 0, t);
  assert_true(st.cwnd == 5 * PKT / 4);
  /* The fifth: one packet, at once (no once-per-srtt wait). */
  st.cwnd = 100 * PKT;
  srd_cc_swift.on_timeout(&cc, &st, 5, 0, t + 1);
  assert_true(st.cwnd == PKT);
  assert_true(st.decreases == 4);
  assert_true(cc.last_decrease == t + 1);
  st.cwnd = 100 * PKT;
  srd_cc_swift.on_timeout(&cc, &st, 9, 1, t + 2);
  assert_true(st.cwnd == PKT);
  /* Clamped by the bounds. */
  st.min_cwnd = 2 * PKT;
  srd_cc_swift.on_timeout(&cc, &st, 5, 0, t + 4);
  assert_true(st.cwnd == 2 * PKT);
  st.min_cwnd = 1;
  st.max_cwnd = PKT / 2;
  srd_cc_swift.on_timeout(&cc, &st, 5, 0, t + 5);
  assert_true(st.cwnd == PKT / 2);
}

static void test_cc_fixed(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  srd_tstamp t = SRD_MS;
  uint32_t i;
  (void)state;

  setup(&cc, &st, &srd_cc_fixed, t);
  assert_true(st.cwnd == 64 * PKT);
  assert_ptr_equal(cc.ops, &srd_cc_fixed);
  sampled(&st, 20 * SRD_US);
  for (i = 1; i <= 10; ++i) {
    st.inflight = st.cwnd;
    on_ack(&cc, &st, 100 * PKT, 100, 12 * SRD_US, 0, t + i * SRD_MS);
    on_ack(&cc, &st, PKT, 1, SRD_S, 1, t + i * SRD_MS + 1);
    srd_cc_fixed.on_loss(&cc, &st, 1, t + i * SRD_MS + 2);
    srd_cc_fixed.on_timeout(&cc, &st, i, 1, t + i * SRD_MS + 3);
    assert_true(st.cwnd == 64 * PKT);
  }
  assert_true(st.decreases == 0);
  st.cwnd = 5;
  st.fixed_cwnd = 7;
  srd_cc_fixed.reset(&cc, &st, t);
  assert_true(st.cwnd == 7);
}

/* tcfg is the defaults' shape with the target following the path. */
static srd_cc_target_cfg tcfg(uint32_t pct, uint32_t hops) {
  srd_cc_target_cfg c;

  c.rtt_pct = pct;
  c.hops = hops;
  c.hop_qdelay = 1 * SRD_US;
  c.min = 2 * SRD_US;
  c.max = 25 * SRD_US;
  return c;
}

/* near: |got| within |tol| of |want| (nanoseconds). */
static int near(srd_duration got, double want, double tol) {
  return (double)got >= want - tol && (double)got <= want + tol;
}

static void test_cc_flow_scaling(void **state) {
  /* Swift's term with fs_max 16 packets and a range of 400% of 25 us. */
  const double range = 100.0 * SRD_US;
  const double lo = 0.25, hi = 3.16227766016838; /* 1/sqrt 16, 1/sqrt .1 */
  srd_duration prev = UINT64_MAX;
  uint64_t w;
  (void)state;

  /* The whole range at a tenth of a packet and below. */
  assert_true(
      near(srd_cc_flow_scaling(PKT / 10, PKT, 16, 400, TARGET), range, 2.0));
  assert_true(near(srd_cc_flow_scaling(1, PKT, 16, 400, TARGET), range, 2.0));
  assert_true(near(srd_cc_flow_scaling(0, PKT, 16, 400, TARGET), range, 2.0));
  /* One packet: (1 - 1/4) / (1/sqrt 0.1 - 1/4) of it; four: (1/2 - 1/4). */
  assert_true(near(srd_cc_flow_scaling(PKT, PKT, 16, 400, TARGET),
                   range * (1.0 - lo) / (hi - lo), 2.0));
  assert_true(near(srd_cc_flow_scaling(4 * PKT, PKT, 16, 400, TARGET),
                   range * (0.5 - lo) / (hi - lo), 2.0));
  /* Nothing from fs_max packets up. */
  assert_true(srd_cc_flow_scaling(16 * PKT, PKT, 16, 400, TARGET) == 0);
  assert_true(srd_cc_flow_scaling(1000 * PKT, PKT, 16, 400, TARGET) == 0);
  assert_true(srd_cc_flow_scaling(UINT64_MAX, PKT, 16, 400, TARGET) == 0);
  /* Off. */
  assert_true(srd_cc_flow_scaling(PKT, PKT, 0, 400, TARGET) == 0);
  assert_true(srd_cc_flow_scaling(PKT, PKT, 16, 0, TARGET) == 0);
  assert_true(srd_cc_flow_scaling(PKT, 0, 16, 400, TARGET) == 0);
  /* Proportional to the range and the target. */
  assert_true(near(srd_cc_flow_scaling(PKT, PKT, 16, 200, TARGET),
                   range / 2 * (1.0 - lo) / (hi - lo), 2.0));
  assert_true(near(srd_cc_flow_scaling(PKT, PKT, 16, 400, 2 * TARGET),
                   2 * range * (1.0 - lo) / (hi - lo), 2.0));
  /* Never rising with the window, from a tenth of a packet to fs_max
     (the inverse square root is exact to 1e-9 over every scale). */
  for (w = PKT / 10; w <= 17 * PKT; w += PKT / 7) {
    srd_duration f = srd_cc_flow_scaling(w, PKT, 16, 400, TARGET);
    double x = (double)w / PKT < 0.1 ? 0.1 : (double)w / PKT, r = 1.0;
    int i;
    assert_true(f <= prev);
    prev = f;
    /* Against a reference 1/sqrt by bisection. */
    if (x < 16) {
      double a = 0, b = 10;
      for (i = 0; i < 200; ++i) {
        r = (a + b) / 2;
        if (r * r * x > 1) {
          b = r;
        } else {
          a = r;
        }
      }
      assert_true(near(f, range * (r - lo) / (hi - lo), 2.0));
    }
  }
}

static void test_cc_flow_scaling_grows(void **state) {
  srd_cc cc;
  srd_cc_stat st;
  /* Above the path's target by 10 us: a one-packet window is cut without
     the flow term, and grows with it (its target is 25.8 us higher). */
  srd_duration rtt = MIN_RTT + TARGET + 10 * SRD_US;
  srd_tstamp t = 1000 * SRD_US;
  (void)state;

  setup(&cc, &st, &srd_cc_swift, 0);
  sampled(&st, rtt);
  cc.slow_start = 0;
  st.cwnd = 2 * PKT;
  st.inflight = 2 * PKT;
  on_ack(&cc, &st, PKT, 1, rtt, 1, t);
  assert_true(st.cwnd < 2 * PKT);

  setup(&cc, &st, &srd_cc_swift, 0);
  st.fs_max_pkts = 16;
  st.fs_range_pct = 400;
  sampled(&st, rtt);
  cc.slow_start = 0;
  st.cwnd = 2 * PKT;
  st.inflight = 2 * PKT;
  on_ack(&cc, &st, PKT, 1, rtt, 1, t);
  assert_true(st.cwnd > 2 * PKT);
  /* A window of fs_max packets has no extra allowance: cut. */
  st.cwnd = 16 * PKT;
  st.inflight = 16 * PKT;
  on_ack(&cc, &st, PKT, 1, rtt, 1, t + 100 * SRD_US);
  assert_true(st.cwnd < 16 * PKT);
}

static void test_cc_target_fixed(void **state) {
  srd_cc_target_cfg c = tcfg(0, 0);
  (void)state;

  /* pct and hops 0: the fixed target whatever the path. */
  assert_true(srd_cc_target(&c, 1 * SRD_US) == 25 * SRD_US);
  assert_true(srd_cc_target(&c, 12 * SRD_US) == 25 * SRD_US);
  assert_true(srd_cc_target(&c, 5 * SRD_MS) == 25 * SRD_US);
  /* Following the path, but nothing measured yet: the cap. */
  c = tcfg(50, 0);
  assert_true(srd_cc_target(&c, UINT64_MAX) == 25 * SRD_US);
  assert_true(srd_cc_target(&c, 0) == 25 * SRD_US);
}

static void test_cc_target_follows_rtt(void **state) {
  srd_cc_target_cfg c = tcfg(50, 0);
  (void)state;

  /* Half the base RTT: the 2-tier fabric's 12 us gives 6 us (75 KB at
     100 Gb/s, under a 200 KB port), a 40 us path 20 us. */
  assert_true(srd_cc_target(&c, 12 * SRD_US) == 6 * SRD_US);
  assert_true(srd_cc_target(&c, 40 * SRD_US) == 20 * SRD_US);
  /* Floor and cap. */
  assert_true(srd_cc_target(&c, 3 * SRD_US) == 2 * SRD_US);
  assert_true(srd_cc_target(&c, 60 * SRD_US) == 25 * SRD_US);
  /* Exact in nanoseconds: floor(12345 * 33 / 100). */
  c = tcfg(33, 0);
  c.min = 0;
  assert_true(srd_cc_target(&c, 12345) == 4073);
  /* No overflow on absurd base RTTs. */
  c = tcfg(1000, 0);
  c.max = UINT64_MAX;
  assert_true(srd_cc_target(&c, UINT64_MAX / 20) ==
              UINT64_MAX / 20 / 100 * 1000 + UINT64_MAX / 20 % 100 * 10);
  /* A minimum above the cap: the cap wins. */
  c = tcfg(50, 0);
  c.min = 30 * SRD_US;
  assert_true(srd_cc_target(&c, 12 * SRD_US) == 25 * SRD_US);
}

static void test_cc_target_hops(void **state) {
  srd_cc_target_cfg c = tcfg(0, 4);
  (void)state;

  /* Hops alone: Swift's per-hop term. */
  assert_true(srd_cc_target(&c, 10 * SRD_US) == 4 * SRD_US);
  assert_true(srd_cc_target(&c, 90 * SRD_US) == 4 * SRD_US);
  /* Both terms add. */
  c = tcfg(50, 3);
  assert_true(srd_cc_target(&c, 10 * SRD_US) == 8 * SRD_US);
  /* One hop: the floor. */
  c = tcfg(0, 1);
  assert_true(srd_cc_target(&c, 10 * SRD_US) == 2 * SRD_US);
}

static void test_cc_target_random(void **state) {
  uint64_t seed = tu_seed("cc_target_random");
  int i;
  (void)state;

  /* Within its bounds, and never shorter on a longer path. */
  for (i = 0; i < 10000; ++i) {
    srd_cc_target_cfg c = tcfg((uint32_t)(tu_rand(&seed) % 1001),
                               (uint32_t)(tu_rand(&seed) % 65));
    srd_duration a = 1 + tu_rand(&seed) % (10 * SRD_MS);
    srd_duration b = a + tu_rand(&seed) % (10 * SRD_MS);
    srd_duration ta, tb;

    c.hop_qdelay = tu_rand(&seed) % (10 * SRD_US);
    c.min = tu_rand(&seed) % (10 * SRD_US);
    c.max = c.min + tu_rand(&seed) % (1 * SRD_MS);
    ta = srd_cc_target(&c, a);
    tb = srd_cc_target(&c, b);
    assert_true(ta >= c.min && ta <= c.max);
    assert_true(tb >= ta);
    if (c.rtt_pct == 0 && c.hops == 0) {
      assert_true(ta == c.max);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cc_registry),
      cmocka_unit_test(test_cc_swift_init),
      cmocka_unit_test(test_cc_swift_slow_start),
      cmocka_unit_test(test_cc_swift_app_limited),
      cmocka_unit_test(test_cc_swift_additive_increase),
      cmocka_unit_test(test_cc_swift_below_one_packet),
      cmocka_unit_test(test_cc_swift_decrease),
      cmocka_unit_test(test_cc_swift_decrease_first_at_zero),
      cmocka_unit_test(test_cc_swift_on_loss),
      cmocka_unit_test(test_cc_swift_loss_round),
      cmocka_unit_test(test_cc_swift_loss_round_timing),
      cmocka_unit_test(test_cc_swift_on_timeout),
      cmocka_unit_test(test_cc_fixed),
      cmocka_unit_test(test_cc_target_fixed),
      cmocka_unit_test(test_cc_target_follows_rtt),
      cmocka_unit_test(test_cc_target_hops),
      cmocka_unit_test(test_cc_target_random),
      cmocka_unit_test(test_cc_flow_scaling),
      cmocka_unit_test(test_cc_flow_scaling_grows),
  };

  return cmocka_run_group_tests_name("cc", tests, NULL, NULL);
}
