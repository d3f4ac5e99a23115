/*
 * test_traffic.c: the built-in sources: constant bit rate flows depart on
 * exact cumulative-byte schedules; window flows keep exactly |window|
 * packets outstanding, with delayed feedback and retries after drops,
 * whatever copies duplicating links add; permutations are derangements; the
 * drop callback chains; errors.
 */
#include "nstest.h"

static netsim_sim *line(uint64_t seed) {
  netsim_linkcfg c;

  netsim_linkcfg_default(&c);
  c.queue_bytes = 10000000;
  return ns_line(seed, &c, &c);
}

static void test_traffic_cbr_exact(void **state) {
  const uint64_t R = NETSIM_GBPS(7);
  netsim_sim *sim = line(1);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;
  uint64_t want = 0;
  uint32_t id;

  (void)state;
  NS_OK(netsim_traffic_new(&tr, sim, 4));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 0;
  fl.rate_bps = R;
  fl.pkt_bytes = 1000;
  fl.start = 10 * NETSIM_US;
  fl.stop = NETSIM_MS;
  NS_OK(netsim_traffic_add_flow(tr, &fl, &id));
  assert_int_equal(id, 0);
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  NS_OK(netsim_traffic_flow_stats(tr, id, &fs));
  /* Departure k is at start + ceil(k * 1000 * 8 / R): count those before
     the stop time. */
  while (fl.start + ns_ceil_tx(want * 1000, R) < fl.stop) {
    ++want;
  }
  assert_int_equal(fs.sent, want);
  assert_int_equal(fs.delivered, want);
  assert_int_equal(fs.sent_bytes, want * 1000);
  assert_int_equal(fs.dropped, 0);
  /* The first packet: 2 hops of 80 ns + 1 us after the start. */
  assert_int_equal(fs.first_rx, fl.start + 2 * (80000 + NETSIM_US));
  assert_int_equal(fs.last_rx, fl.start + ns_ceil_tx((want - 1) * 1000, R) +
                                   2 * (80000 + NETSIM_US));
  assert_int_equal(fs.latency_sum, want * 2 * (80000 + NETSIM_US));
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_traffic_window_outstanding(void **state) {
  netsim_sim *sim = line(1);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;
  int i;

  (void)state;
  NS_OK(netsim_traffic_new(&tr, sim, 1));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 8;
  fl.pkt_bytes = 1500;
  NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  for (i = 1; i <= 50; ++i) {
    netsim_sim_run_until(sim, (netsim_time)i * 3 * NETSIM_US + 17);
    NS_OK(netsim_traffic_flow_stats(tr, 0, &fs));
    assert_int_equal(fs.sent - fs.delivered, 8);
  }
  /* The window is below the path's bandwidth-delay product: each of the
     8 slots carries one packet per one-way trip of 2 x (120 ns + 1 us). */
  assert_true(fs.delivered >= 8 * (150 * NETSIM_US / 2240000) - 8);
  assert_true(fs.delivered <= 8 * (150 * NETSIM_US / 2240000) + 8);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_traffic_window_ack_delay_and_del(void **state) {
  netsim_sim *sim = line(1);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;
  netsim_sim_stats st;

  (void)state;
  NS_OK(netsim_traffic_new(&tr, sim, 1));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 4;
  fl.pkt_bytes = 1000;
  fl.ack_delay = 10 * NETSIM_US;
  NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  netsim_sim_run_until(sim, 100 * NETSIM_US + 1);
  NS_OK(netsim_traffic_flow_stats(tr, 0, &fs));
  /* A round is 2.16 us out and 10 us back: 4 packets per round. */
  assert_true(fs.delivered >= 4 * 8 && fs.delivered <= 4 * 9);
  assert_true(fs.sent - fs.delivered <= 4);
  /* Deleting the generator cancels the pending feedback events. */
  assert_true(netsim_evl_pending(netsim_sim_evl(sim)) > 0);
  netsim_traffic_del(tr);
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.pkts_in_use, 0);
  assert_int_equal(netsim_evl_pending(netsim_sim_evl(sim)), 0);
  netsim_sim_del(sim);
}

static void test_traffic_window_retries_after_drops(void **state) {
  uint64_t seed = tu_seed("test_traffic_window_retries_after_drops");
  netsim_sim *sim = line(seed);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;

  (void)state;
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 3), 0.2));
  NS_OK(netsim_traffic_new(&tr, sim, 1));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 16;
  fl.retry = 5 * NETSIM_US;
  fl.ect = 1;
  NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  netsim_sim_run_until(sim, NETSIM_MS);
  NS_OK(netsim_traffic_flow_stats(tr, 0, &fs));
  tu_assert(fs.dropped > 100);
  tu_assert(fs.delivered > 1000);
  /* Every packet is delivered, dropped, or one of the 16 in flight. */
  tu_assert(fs.sent - fs.delivered - fs.dropped <= 16);
  tu_assert(fs.ecn_marked == 0);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_traffic_window_ignores_copies(void **state) {
  uint64_t seed = tu_seed("test_traffic_window_ignores_copies");
  netsim_sim *sim = line(seed);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;
  netsim_link_stats ls;
  int i;

  (void)state;
  /* Half the packets are copied at the switch, 3 us later, and a fifth
     of what crosses to host 1 is lost, copies included. */
  NS_OK(netsim_link_set_dup(netsim_sim_link(sim, 0), 0.5, 3 * NETSIM_US));
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 3), 0.2));
  NS_OK(netsim_traffic_new(&tr, sim, 1));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 8;
  fl.retry = 5 * NETSIM_US;
  NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  for (i = 1; i <= 100; ++i) {
    netsim_sim_run_until(sim, (netsim_time)i * 10 * NETSIM_US);
    NS_OK(netsim_traffic_flow_stats(tr, 0, &fs));
    /* Every packet sent is delivered, dropped or one of the 8 in flight:
       a copy (delivered or lost) gives the window no credit. */
    tu_assert(fs.delivered + fs.dropped <= fs.sent);
    tu_assert(fs.sent - fs.delivered - fs.dropped <= 8);
  }
  netsim_link_get_stats(netsim_sim_link(sim, 0), &ls);
  tu_assert(fs.delivered > 1000 && fs.dropped > 100);
  tu_assert(fs.dup_rx > 100 && fs.dup_rx < ls.duplicated);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_traffic_permutation(void **state) {
  uint64_t seed = tu_seed("test_traffic_permutation");
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_sim *sim = NULL;
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  uint32_t seen[128], i;

  (void)state;
  netsim_settings_default(&s);
  s.seed = seed;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, 8);
  NS_OK(netsim_topo_fattree(sim, &ft, NULL));
  NS_OK(netsim_traffic_new(&tr, sim, 128));
  netsim_flow_settings_default(&fl);
  fl.max_pkts = 10;
  NS_OK(netsim_traffic_permutation(tr, &fl, 3));
  assert_int_equal(netsim_traffic_n_flows(tr), 128);
  assert_int_equal(netsim_traffic_permutation(tr, &fl, 3), NETSIM_ERR_POOL);
  memset(seen, 0, sizeof(seen));
  for (i = 0; i < 128; ++i) {
    uint32_t d = netsim_traffic_flow_dst(tr, i);
    tu_assert(d < 128 && d != i);
    ++seen[d];
  }
  for (i = 0; i < 128; ++i) {
    tu_assert(seen[i] == 1);
  }
  assert_int_equal(netsim_traffic_flow_dst(tr, 128), UINT32_MAX);
  netsim_sim_run_until(sim, NETSIM_MS);
  for (i = 0; i < 128; ++i) {
    netsim_flow_stats fs;
    NS_OK(netsim_traffic_flow_stats(tr, i, &fs));
    tu_assert(fs.sent == 10 && fs.delivered == 10);
  }
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static int foreign_drops;

static void prev_drop(netsim_sim *sim, const netsim_pkt *pkt,
                      netsim_drop_reason why, netsim_link *link, void *user) {
  (void)sim;
  (void)link;
  assert_int_equal(why, NETSIM_DROP_QUEUE);
  assert_int_equal(pkt->tag, 999);
  assert_ptr_equal(user, &foreign_drops);
  ++foreign_drops;
}

static void test_traffic_drop_chain_and_errors(void **state) {
  netsim_linkcfg c;
  netsim_sim *sim;
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_flow_stats fs;
  netsim_drop_cb cb;
  void *user;

  (void)state;
  netsim_linkcfg_default(&c);
  c.queue_bytes = 3000;
  sim = ns_line(1, &c, &c);
  foreign_drops = 0;
  netsim_sim_set_drop_cb(sim, prev_drop, &foreign_drops, NULL, NULL);
  assert_int_equal(netsim_traffic_new(&tr, sim, 0), NETSIM_ERR_INVAL);
  NS_OK(netsim_traffic_new(&tr, sim, 1));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 2;
  fl.pkt_bytes = 1000;
  fl.rate_bps = NETSIM_GBPS(1);
  assert_int_equal(netsim_traffic_add_flow(tr, &fl, NULL), NETSIM_ERR_INVAL);
  fl.rate_bps = 0;
  fl.pkt_bytes = 0;
  assert_int_equal(netsim_traffic_add_flow(tr, &fl, NULL), NETSIM_ERR_INVAL);
  fl.pkt_bytes = 1000;
  fl.dst = 2;
  assert_int_equal(netsim_traffic_add_flow(tr, &fl, NULL), NETSIM_ERR_INVAL);
  fl.dst = 1;
  NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  assert_int_equal(netsim_traffic_add_flow(tr, &fl, NULL), NETSIM_ERR_POOL);
  assert_int_equal(netsim_traffic_flow_stats(tr, 1, &fs), NETSIM_ERR_NOENT);
  /* The flow fills 2000 of the NIC's 3000 bytes at once; four foreign
     packets find it full after the first. */
  netsim_sim_run_until(sim, 0);
  NS_OK(ns_send(sim, 0, 1, 7, 1000, 999));
  assert_int_equal(ns_send(sim, 0, 1, 7, 1000, 999), NETSIM_ERR_DROPPED);
  assert_int_equal(ns_send(sim, 0, 1, 7, 1000, 999), NETSIM_ERR_DROPPED);
  assert_int_equal(ns_send(sim, 0, 1, 7, 1000, 999), NETSIM_ERR_DROPPED);
  assert_int_equal(foreign_drops, 3);
  netsim_traffic_del(tr);
  netsim_sim_set_drop_cb(sim, NULL, NULL, &cb, &user);
  assert_true(cb == prev_drop);
  assert_ptr_equal(user, &foreign_drops);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_traffic_cbr_exact),
      cmocka_unit_test(test_traffic_window_outstanding),
      cmocka_unit_test(test_traffic_window_ack_delay_and_del),
      cmocka_unit_test(test_traffic_window_retries_after_drops),
      cmocka_unit_test(test_traffic_window_ignores_copies),
      cmocka_unit_test(test_traffic_permutation),
      cmocka_unit_test(test_traffic_drop_chain_and_errors),
  };
  return cmocka_run_group_tests_name("netsim_traffic", tests, NULL, NULL);
}
