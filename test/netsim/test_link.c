/*
 * test_link.c: links: a packet of B bytes on a link of R bit/s with delay D
 * arrives exactly ceil(B*8/R) + D picoseconds after it starts; trains of
 * back-to-back packets never drift (departures come from cumulative
 * bytes); a link that went idle starts a new busy period; degraded rates;
 * seeded random loss at the configured probability; a link going down
 * loses what it holds.
 */
#include "nstest.h"

/* The tap records arrivals at the end of one link. */
typedef struct tap_rec {
  uint32_t link;
  uint32_t n, cap;
  netsim_time *t;
} tap_rec;

static void tap_cb(netsim_sim *sim, const netsim_pkt *pkt,
                   const netsim_link *link, void *user) {
  tap_rec *r = user;

  (void)pkt;
  if (netsim_link_id(link) == r->link && r->n < r->cap) {
    r->t[r->n++] = netsim_sim_now(sim);
  }
}

static netsim_linkcfg cfg(uint64_t rate, netsim_time delay, uint64_t q) {
  netsim_linkcfg c;

  netsim_linkcfg_default(&c);
  c.rate_bps = rate;
  c.delay = delay;
  c.queue_bytes = q;
  return c;
}

static void test_link_exact_timing(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(3), 1234567, 1000000);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(40), 500 * NETSIM_NS, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_time t_switch = ns_ceil_tx(1500, NETSIM_GBPS(3)) + 1234567;
  netsim_time t_host = t_switch + ns_ceil_tx(1500, NETSIM_GBPS(40)) + 500000;
  netsim_time tt[4];
  tap_rec tap = {.link = 0, .cap = 4, .t = tt};
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  netsim_sim_set_tap(sim, tap_cb, &tap);
  NS_OK(ns_send(sim, 0, 1, 1000, 1500, 1));
  /* Serialisation is exact and rounded up: 4,000,000 ps at 3 Gb/s. */
  assert_int_equal(ns_ceil_tx(1500, NETSIM_GBPS(3)), 4000000);
  assert_int_equal(netsim_host_tx_free_at(netsim_sim_host(sim, 0)), 4000000);
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(tap.n, 1);
  assert_int_equal(tap.t[0], t_switch);
  assert_int_equal(rec.n, 1);
  assert_int_equal(rec.t[0], t_host);
  assert_int_equal(rec.hops[0], 2);
  /* The same from a later start, on an idle link: a new busy period. */
  NS_OK(ns_send(sim, 0, 1, 1000, 1500, 2));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  assert_int_equal(rec.n, 2);
  assert_int_equal(rec.t[1], NETSIM_MS + t_host);
  /* An odd size on an odd rate rounds up. */
  NS_OK(ns_send(sim, 0, 1, 1000, 1, 3));
  netsim_sim_run_until(sim, 3 * NETSIM_MS);
  assert_int_equal(rec.t[2], 2 * NETSIM_MS + 2667 + 1234567 + 200 + 500000);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_no_drift(void **state) {
  enum { N = 20000, B = 1499 };
  const uint64_t R = NETSIM_GBPS(7);
  netsim_linkcfg c0 = cfg(R, 1000, (uint64_t)N * B);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(40), 500 * NETSIM_NS, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  tap_rec tap = {.link = 0, .cap = N};
  netsim_time naive = 0;
  ns_rec rec;
  uint32_t i;

  (void)state;
  tap.t = calloc(N, sizeof(*tap.t));
  ns_rec_init(&rec, N);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  netsim_sim_set_tap(sim, tap_cb, &tap);
  for (i = 0; i < N; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1000, B, i));
  }
  netsim_sim_run_until(sim, NETSIM_S);
  assert_int_equal(tap.n, N);
  assert_int_equal(rec.n, N);
  for (i = 0; i < N; ++i) {
    /* Packet i leaves when i+1 packets' bytes have left, exactly. */
    netsim_time fin = ns_ceil_tx((uint64_t)(i + 1) * B, R);
    assert_int_equal(tap.t[i], fin + 1000);
    /* The faster second link is idle for each packet. */
    assert_int_equal(rec.t[i], fin + 1000 + ns_ceil_tx(B, NETSIM_GBPS(40)) +
                                   500 * NETSIM_NS);
    assert_int_equal(rec.tag[i], i);
    naive += ns_ceil_tx(B, R);
  }
  /* Rounding each packet on its own would have drifted by N * 1/7 ps. */
  assert_true(naive > ns_ceil_tx((uint64_t)N * B, R) + 2000);
  free(tap.t);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_degraded_rate(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(100), 0, 1000000);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(400), 0, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_info info;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  NS_OK(netsim_link_set_rate(sim, l0, NETSIM_GBPS(25)));
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.rate_bps, NETSIM_GBPS(25));
  assert_int_equal(info.base_rate_bps, NETSIM_GBPS(100));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, NETSIM_US);
  assert_int_equal(rec.t[0], 320000 + 20000);
  /* Restore: back to 80 ps per byte. */
  NS_OK(netsim_link_set_rate(sim, l0, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, 2 * NETSIM_US);
  assert_int_equal(rec.t[1], NETSIM_US + 80000 + 20000);
  assert_int_equal(netsim_link_set_rate(sim, l0, NETSIM_RATE_MAX + 1),
                   NETSIM_ERR_INVAL);
  /* A change while packets are queued: those keep their times. */
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(netsim_link_set_rate(sim, l0, NETSIM_GBPS(50)));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, 3 * NETSIM_US);
  assert_int_equal(rec.n, 5);
  assert_int_equal(rec.t[2], 2 * NETSIM_US + 80000 + 20000);
  assert_int_equal(rec.t[3], 2 * NETSIM_US + 160000 + 20000);
  assert_int_equal(rec.t[4], 2 * NETSIM_US + 160000 + 160000 + 20000);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_random_loss(void **state) {
  enum { N = 40000 };
  uint64_t seed = tu_seed("test_link_random_loss");
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(100), 0, 100000000);
  netsim_sim *sim = ns_line(seed, &c0, &c0);
  netsim_link_stats ls;
  netsim_sim_stats st;
  double frac;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  assert_int_equal(netsim_link_set_loss(netsim_sim_link(sim, 0), 1.5),
                   NETSIM_ERR_INVAL);
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 0.05));
  for (i = 0; i < N; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, NETSIM_S);
  netsim_link_get_stats(netsim_sim_link(sim, 0), &ls);
  netsim_sim_get_stats(sim, &st);
  tu_assert(ls.drops[NETSIM_DROP_LOSS] + rec.n == N);
  tu_assert(st.drops[NETSIM_DROP_LOSS] == ls.drops[NETSIM_DROP_LOSS]);
  tu_assert(ls.rx_pkts == N);
  /* 5 standard deviations of a binomial(40000, 0.05) fraction. */
  frac = (double)ls.drops[NETSIM_DROP_LOSS] / N;
  tu_assert(frac > 0.05 - 0.0055 && frac < 0.05 + 0.0055);
  /* p = 1 loses everything, p = 0 nothing. */
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 1.0));
  rec.n = 0;
  for (i = 0; i < 100; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, 2 * NETSIM_S);
  tu_assert(rec.n == 0);
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 0.0));
  for (i = 0; i < 100; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, 3 * NETSIM_S);
  tu_assert(rec.n == 100);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_down_loses_everything(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), 10 * NETSIM_US, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c0);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 64);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  /* 10 packets of 1000 B take 0.8 us each: at 5 us, 6 are on the wire
     (10 us of delay) and 4 still queued. */
  for (i = 0; i < 10; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_sim_run_until(sim, 5 * NETSIM_US);
  assert_int_equal(netsim_link_queue_bytes(l0), 4000);
  netsim_link_set_up(sim, l0, 0);
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.up, 0);
  assert_int_equal(info.routed, 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 0);
  assert_int_equal(ns_send(sim, 0, 1, 1, 1000, 99), NETSIM_ERR_DROPPED);
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(rec.n, 0);
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.drops[NETSIM_DROP_LINK_DOWN], 11);
  assert_int_equal(ls.enq_pkts, 10);
  assert_int_equal(ls.rx_pkts, 0);
  netsim_link_set_up(sim, l0, 1);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 100));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  assert_int_equal(rec.n, 1);
  assert_int_equal(rec.t[0], NETSIM_MS + 800000 + 10 * NETSIM_US + 800000 +
                                 10 * NETSIM_US);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_stats(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), NETSIM_US, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c0);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  uint32_t i;

  (void)state;
  for (i = 0; i < 5; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.enq_pkts, 5);
  assert_int_equal(ls.enq_bytes, 5000);
  assert_int_equal(ls.q_bytes, 5000);
  assert_int_equal(ls.q_pkts, 5);
  assert_int_equal(ls.max_q_bytes, 5000);
  assert_int_equal(ls.busy_until, 5 * 800000);
  /* Occupancy falls as each packet finishes serialising. */
  netsim_sim_run_until(sim, 800000 - 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 5000);
  netsim_sim_run_until(sim, 800000);
  assert_int_equal(netsim_link_queue_bytes(l0), 4000);
  netsim_sim_run_until(sim, 3 * 800000 + 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 2000);
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.q_bytes, 0);
  assert_int_equal(ls.rx_pkts, 5);
  assert_int_equal(ls.rx_bytes, 5000);
  assert_int_equal(ls.enq_pkts, 5);
  /* Mean depth: packet i waits (i+1) * 0.8 us with 1000 B. */
  assert_true(ls.q_byte_ps == 1000.0 * 800000.0 * (1 + 2 + 3 + 4 + 5));
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.id, 0);
  assert_int_equal(info.peer, 1);
  assert_int_equal(info.from_node, 0);
  assert_int_equal(info.to_node, 2);
  assert_int_equal(info.to_port, 0);
  assert_int_equal(info.delay, NETSIM_US);
  assert_int_equal(info.queue_bytes, 1000000);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_link_exact_timing),
      cmocka_unit_test(test_link_no_drift),
      cmocka_unit_test(test_link_degraded_rate),
      cmocka_unit_test(test_link_random_loss),
      cmocka_unit_test(test_link_down_loses_everything),
      cmocka_unit_test(test_link_stats),
  };
  return cmocka_run_group_tests_name("netsim_link", tests, NULL, NULL);
}
