/*
 * test_cubic.c: CUBIC (netsim/hosts/sim_cubic.c) against what Linux's
 * tcp_cubic.c does, driven one ACK at a time over an idealised path of a
 * fixed RTT: the threshold after a loss and fast convergence, growth
 * cubic in the time since the epoch (concave below W_max, convex above),
 * the TCP-friendly region at small RTTs, the RTO's reset, HyStart's ACK
 * train and delay detectors.  Each figure differs from what NewReno
 * would give (half the window, one segment per RTT, no slow-start exit).
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

#include "sim_cubic.h"

/* A flow in congestion avoidance: every RTT, cwnd ACKs spread evenly. */
typedef struct flow {
  sim_cubic ca;
  uint32_t cwnd, cnt, ssthresh;
  netsim_time now, rtt;
} flow;

/* flow_lose starts |f| at window |w| before a loss at time |now|, then
   takes the loss: cwnd = ssthresh = CUBIC's threshold. */
static void flow_lose(flow *f, uint32_t w, netsim_time rtt, netsim_time now) {
  uint32_t ss = UINT32_MAX / 2;

  memset(f, 0, sizeof(*f));
  f->rtt = rtt;
  f->now = now;
  sim_cubic_init(&f->ca, 0, now);
  /* One RTT sample before the loss gives delay_min. */
  sim_cubic_acked(&f->ca, rtt, 10, &ss, 1, 2, 0, now);
  f->cwnd = w;
  f->ssthresh = sim_cubic_ssthresh(&f->ca, w);
  f->cwnd = f->ssthresh;
}

/* flow_rtts runs |n| RTTs of congestion avoidance. */
static void flow_rtts(flow *f, uint32_t n) {
  uint32_t r, i;

  for (r = 0; r < n; ++r) {
    uint32_t acks = f->cwnd;
    netsim_time step = f->rtt / acks;
    for (i = 0; i < acks; ++i) {
      uint32_t w;
      f->now += step;
      w = sim_cubic_update(&f->ca, f->cwnd, 1, f->now);
      sim_cubic_ai(&f->cwnd, &f->cnt, w, 1, UINT32_MAX);
    }
  }
}

static void test_cubic_beta(void **state) {
  sim_cubic ca;

  (void)state;
  sim_cubic_init(&ca, 0, 0);
  /* 717/1024 of the window, where Reno halves. */
  assert_int_equal(sim_cubic_ssthresh(&ca, 100), 70);
  assert_int_equal(ca.last_max_cwnd, 100);
  assert_int_equal(sim_cubic_ssthresh(&ca, 1000), 700);
  assert_int_equal(ca.last_max_cwnd, 1000);
  /* A loss below the last maximum: fast convergence remembers
     cwnd * (1 + beta) / 2 = 0.85 cwnd. */
  assert_int_equal(sim_cubic_ssthresh(&ca, 800), 560);
  assert_int_equal(ca.last_max_cwnd, 800u * 1741 / 2048);
  /* Never below two segments. */
  assert_int_equal(sim_cubic_ssthresh(&ca, 2), 2);
  /* An RTO forgets W_max. */
  sim_cubic_on_rto(&ca, 0, 0);
  assert_int_equal(ca.last_max_cwnd, 0);
  assert_int_equal(ca.epoch_start, 0);
}

/* W(t) = C (t - K)^3 + W_max, C = 0.4, K = cbrt(W_max (1 - beta) / C),
   t from the epoch's start plus the RTT.  At a 100 ms RTT and W_max
   1000 the cubic term is far ahead of the friendly region. */
static double cubic_w(double wmax, double t) {
  double k = cbrt(wmax * (1.0 - 717.0 / 1024.0) / 0.4);
  return 0.4 * (t - k) * (t - k) * (t - k) + wmax;
}

static void test_cubic_growth(void **state) {
  flow f;
  double k = cbrt(1000 * (1.0 - 717.0 / 1024.0) / 0.4); /* 9.09 s */
  uint32_t at[6];
  double t[6] = {1, 3, 6, 9, 12, 15};
  uint32_t i, done = 0;

  (void)state;
  flow_lose(&f, 1000, 100 * NETSIM_MS, 10 * NETSIM_S);
  assert_int_equal(f.cwnd, 700);
  assert_true(k > 9.0 && k < 9.2);
  for (i = 0; i < 6; ++i) {
    /* t counts from the epoch (the first ACK) plus one RTT. */
    uint32_t target = (uint32_t)(t[i] * 10.0) - 1;
    flow_rtts(&f, target - done);
    done = target;
    at[i] = f.cwnd;
    print_message("t %.0f s: cwnd %u, W(t) %.1f\n", t[i], at[i],
                  cubic_w(1000, t[i]));
    /* Within 2% of the cubic (the window lags the target by < 1 RTT). */
    assert_true(fabs(at[i] - cubic_w(1000, t[i])) < 0.02 * 1000);
  }
  /* Concave below W_max: the growth slows as t nears K ... */
  assert_true(at[1] - at[0] > at[2] - at[1]);
  assert_true(at[2] - at[1] > at[3] - at[2]);
  /* ... a plateau around W_max (9 s: within 1% of it) ... */
  assert_true(at[3] > 990 && at[3] <= 1001);
  /* ... and convex above it: the probe speeds up. */
  assert_true(at[5] - at[4] > at[4] - at[3]);
  assert_true(at[5] > 1050);
}

/* At a small RTT the cubic clock barely moves in a few hundred RTTs, and
   CUBIC grows as the emulated Reno: 3 (1 - beta) / (1 + beta) = 0.53
   segments per RTT (Reno itself: 1).  The RTT is 1 ms: below it the
   kernel's count, recomputed at most once a millisecond and only lowered
   in between, grows the window in bursts. */
static void test_cubic_friendly(void **state) {
  flow f;
  uint32_t w0;

  (void)state;
  flow_lose(&f, 100, 1 * NETSIM_MS, 1 * NETSIM_S);
  w0 = f.cwnd;
  assert_int_equal(w0, 70);
  flow_rtts(&f, 200);
  print_message("200 RTTs of 1 ms: cwnd %u -> %u (%.2f per RTT)\n", w0, f.cwnd,
                (f.cwnd - w0) / 200.0);
  assert_true(f.cwnd - w0 >= 95 && f.cwnd - w0 <= 118);
  /* The cubic alone would be at 76. */
  assert_true(cubic_w(100, 0.201) < 77);
}

/* HyStart's ACK train: at 16 segments or more, ACKs spaced by under 2 ms
   that run on for more than delay_min / 2 after a round began end slow
   start (ssthresh = cwnd); below hystart_low_window nothing happens. */
static void test_cubic_hystart_train(void **state) {
  sim_cubic ca;
  uint32_t ss = UINT32_MAX / 2, i;
  netsim_time rtt = 1 * NETSIM_MS, now = 5 * NETSIM_MS;

  (void)state;
  sim_cubic_init(&ca, 0, now);
  /* A round of 15 segments, ACKs 100 us apart over 1.5 ms: under the
     low window. */
  sim_cubic_acked(&ca, rtt, 15, &ss, 0, 0, 0, now);
  for (i = 0; i < 15; ++i) {
    now += 100 * NETSIM_US;
    sim_cubic_acked(&ca, rtt, 15, &ss, 1 + i, 100, 0, now);
  }
  assert_int_equal(ss, UINT32_MAX / 2);
  assert_int_equal(ca.found, 0);
  /* A new round at 20 segments: the train passes delay_min / 2 (500 us)
     at its sixth ACK. */
  sim_cubic_acked(&ca, rtt, 20, &ss, 101, 200, 0, now);
  for (i = 0; i < 5; ++i) {
    now += 100 * NETSIM_US;
    sim_cubic_acked(&ca, rtt, 20, &ss, 102 + i, 200, 0, now);
    assert_int_equal(ca.found, 0);
  }
  now += 100 * NETSIM_US;
  sim_cubic_acked(&ca, rtt, 20, &ss, 110, 200, 0, now);
  assert_int_equal(ca.found, 1);
  assert_int_equal(ss, 20);
  assert_int_equal(ca.train_exits, 1);
}

/* HyStart's delay detector: a round whose least RTT over 8 samples is
   more than max(delay_min / 8, 4 ms) above delay_min ends slow start.
   ACKs 3 ms apart never make a train. */
static void test_cubic_hystart_delay(void **state) {
  sim_cubic ca;
  uint32_t ss = UINT32_MAX / 2, i;
  netsim_time now = 1 * NETSIM_MS;

  (void)state;
  sim_cubic_init(&ca, 0, now);
  for (i = 0; i < 10; ++i) {
    now += 3 * NETSIM_MS;
    sim_cubic_acked(&ca, 10 * NETSIM_MS, 32, &ss, 1 + i, 1000, 0, now);
  }
  assert_int_equal(ca.found, 0);
  assert_int_equal(ca.delay_min, 10000);
  /* A new round, RTTs 3 ms up: under the 4 ms floor. */
  sim_cubic_acked(&ca, 13 * NETSIM_MS, 32, &ss, 1001, 2000, 0, now);
  for (i = 0; i < 10; ++i) {
    now += 3 * NETSIM_MS;
    sim_cubic_acked(&ca, 13 * NETSIM_MS, 32, &ss, 1002 + i, 2000, 0, now);
  }
  assert_int_equal(ca.found, 0);
  /* Another, 5 ms up: found at the ninth sample. */
  sim_cubic_acked(&ca, 15 * NETSIM_MS, 64, &ss, 2001, 3000, 0, now);
  for (i = 0; i < 8 && !ca.found; ++i) {
    now += 3 * NETSIM_MS;
    sim_cubic_acked(&ca, 15 * NETSIM_MS, 64, &ss, 2002 + i, 3000, 0, now);
  }
  assert_int_equal(ca.found, 1);
  assert_int_equal(i, 8);
  assert_int_equal(ss, 64);
  assert_int_equal(ca.delay_exits, 1);
  assert_int_equal(ca.train_exits, 0);
}

/* Before any loss (W_max 0) the window grows at least 5% per RTT
   (cnt <= 20): faster than Reno's one segment at a large window. */
static void test_cubic_no_loss_yet(void **state) {
  flow f;

  (void)state;
  memset(&f, 0, sizeof(f));
  sim_cubic_init(&f.ca, 0, 0);
  f.rtt = 10 * NETSIM_MS;
  f.now = 1 * NETSIM_S;
  f.cwnd = 200;
  flow_rtts(&f, 10);
  print_message("no loss yet, 10 RTTs from 200: %u\n", f.cwnd);
  /* 200 * 1.05^10 = 326; Reno: 210. */
  assert_true(f.cwnd >= 300 && f.cwnd <= 340);
}

/* bictcp_update's pacing of itself: with the window unchanged the count
   is recomputed at most 32 times a second, so a target that moved stays
   unseen for 31.25 ms. */
static void test_cubic_update_gate(void **state) {
  flow f;
  uint32_t c0, c1, c2;
  netsim_time t0;

  (void)state;
  flow_lose(&f, 1000, 100 * NETSIM_MS, 10 * NETSIM_S);
  t0 = f.now + 100 * NETSIM_MS;
  c0 = sim_cubic_update(&f.ca, 700, 1, t0);
  /* As the epoch begins (t = the 100 ms minimum RTT) the cubic target
     is 710: 700 / 10 ACKs per segment; 32 ms later it is 712-713. */
  assert_int_equal(c0, 70);
  c1 = sim_cubic_update(&f.ca, 700, 1, t0 + 31 * NETSIM_MS);
  assert_int_equal(c1, c0);
  c2 = sim_cubic_update(&f.ca, 700, 1, t0 + 32 * NETSIM_MS);
  print_message("cnt %u, %u after 31 ms, %u after 32 ms\n", c0, c1, c2);
  assert_true(c2 >= 50 && c2 < 60);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cubic_beta),
      cmocka_unit_test(test_cubic_growth),
      cmocka_unit_test(test_cubic_friendly),
      cmocka_unit_test(test_cubic_hystart_train),
      cmocka_unit_test(test_cubic_hystart_delay),
      cmocka_unit_test(test_cubic_no_loss_yet),
      cmocka_unit_test(test_cubic_update_gate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
