/*
 * test_queue.c: output queues: drop-tail exactly at the byte limit, ECN
 * marking of ECT packets above K bytes (and only of those), drops at a
 * congested switch port, the counters, and queue depth sampled over time.
 */
#include "nstest.h"

static netsim_linkcfg cfg(uint64_t rate, uint64_t q, uint64_t ecn) {
  netsim_linkcfg c;

  netsim_linkcfg_default(&c);
  c.rate_bps = rate;
  c.delay = NETSIM_US;
  c.queue_bytes = q;
  c.ecn_bytes = ecn;
  return c;
}

static void test_queue_droptail_at_limit(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), 10000, 0);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(100), 1000000, 0);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_sim_stats st;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 64);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  /* Ten 1000-byte packets fill the 10000-byte queue exactly. */
  for (i = 0; i < 10; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  assert_int_equal(netsim_link_queue_bytes(l0), 10000);
  assert_int_equal(ns_send(sim, 0, 1, 1, 1000, 10), NETSIM_ERR_DROPPED);
  assert_int_equal(ns_send(sim, 0, 1, 1, 1, 11), NETSIM_ERR_DROPPED);
  /* Once the first has left (0.8 us), exactly 1000 bytes fit again. */
  netsim_sim_run_until(sim, 800000);
  assert_int_equal(ns_send(sim, 0, 1, 1, 1001, 12), NETSIM_ERR_DROPPED);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 13));
  assert_int_equal(ns_send(sim, 0, 1, 1, 1, 14), NETSIM_ERR_DROPPED);
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.drops[NETSIM_DROP_QUEUE], 4);
  assert_int_equal(ls.enq_pkts, 11);
  assert_int_equal(ls.max_q_bytes, 10000);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.drops[NETSIM_DROP_QUEUE], 4);
  assert_int_equal(st.sent, 15);
  assert_int_equal(st.delivered, 11);
  assert_int_equal(rec.n, 11);
  assert_int_equal(rec.tag[10], 13);
  /* A packet larger than the whole queue never fits. */
  assert_int_equal(ns_send(sim, 0, 1, 1, 10001, 15), NETSIM_ERR_DROPPED);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_queue_ecn_above_k(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), 1000000, 3000);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(100), 1000000, 0);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_link_stats ls;
  netsim_sim_stats st;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 64);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  /* Eight ECT packets arrive to 0, 1000, ..., 7000 queued bytes: those
     finding more than 3000 bytes (the last four) are marked. */
  for (i = 0; i < 8; ++i) {
    netsim_pkt *p = ns_pkt(sim, 0, 1, 1, 1000);
    p->flags = NETSIM_PKT_ECT;
    p->tag = i;
    NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 0), p));
  }
  /* Non-ECT packets are never marked, however deep the queue. */
  for (i = 8; i < 12; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(rec.n, 12);
  for (i = 0; i < 12; ++i) {
    int marked = (rec.flags[i] & NETSIM_PKT_CE) != 0;
    assert_int_equal(rec.tag[i], i);
    assert_int_equal(marked, i >= 4 && i < 8);
    assert_int_equal((rec.flags[i] & NETSIM_PKT_ECT) != 0, i < 8);
  }
  netsim_link_get_stats(netsim_sim_link(sim, 0), &ls);
  assert_int_equal(ls.ecn_marked, 4);
  assert_int_equal(ls.drops[NETSIM_DROP_QUEUE], 0);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.ecn_marked, 4);
  /* The threshold can be changed; 0 turns marking off. */
  NS_OK(netsim_link_set_queue(netsim_sim_link(sim, 0), 1000000, 0));
  for (i = 0; i < 8; ++i) {
    netsim_pkt *p = ns_pkt(sim, 0, 1, 1, 1000);
    p->flags = NETSIM_PKT_ECT;
    NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 0), p));
  }
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  for (i = 12; i < 20; ++i) {
    assert_int_equal(rec.flags[i] & NETSIM_PKT_CE, 0);
  }
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_queue_switch_port_incast(void **state) {
  netsim_linkcfg fast = cfg(NETSIM_GBPS(100), 1000000, 0);
  netsim_linkcfg slow = cfg(NETSIM_GBPS(10), 5000, 0);
  netsim_sim *sim = ns_sim(1);
  netsim_switch *sw;
  netsim_link_stats ls;
  uint32_t i, h, down;
  ns_rec rec;

  (void)state;
  for (h = 0; h < 3; ++h) {
    NS_OK(netsim_sim_add_host(sim, NULL));
  }
  NS_OK(netsim_sim_add_switch(sim, 3, &sw));
  NS_OK(netsim_sim_connect(sim, 0, 0, 3, 0, &fast, &fast, NULL));
  NS_OK(netsim_sim_connect(sim, 1, 0, 3, 1, &fast, &fast, NULL));
  /* The switch's port towards host 2 is slow and shallow. */
  NS_OK(netsim_sim_connect(sim, 2, 0, 3, 2, &fast, &slow, NULL));
  NS_OK(netsim_sim_build_routes(sim));
  down = netsim_link_id(netsim_switch_port_link(sw, 2));
  assert_int_equal(down, 5);
  ns_rec_init(&rec, 64);
  netsim_host_set_rx(netsim_sim_host(sim, 2), ns_rec_cb, &rec);
  for (i = 0; i < 10; ++i) {
    NS_OK(ns_send(sim, 0, 2, 1, 1000, i));
    NS_OK(ns_send(sim, 1, 2, 2, 1000, 100 + i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_link_get_stats(netsim_sim_link(sim, down), &ls);
  /* 20 packets reach the port within 0.8 us, while it sends one: it keeps
     what fits in 5000 bytes and drops the rest. */
  assert_true(ls.drops[NETSIM_DROP_QUEUE] >= 10);
  assert_int_equal(ls.drops[NETSIM_DROP_QUEUE] + rec.n, 20);
  assert_int_equal(ls.max_q_bytes, 5000);
  assert_int_equal(ls.rx_pkts, rec.n);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_queue_depth_sampled(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), 1000000, 0);
  netsim_sim *sim = ns_line(1, &c0, &c0);
  netsim_sampler *smp = NULL;
  uint32_t ids[2] = {0, 3}, i, top[2];

  (void)state;
  assert_int_equal(netsim_sampler_new(&smp, sim, ids, 2, 0, 0, 10),
                   NETSIM_ERR_INVAL);
  ids[1] = 99;
  assert_int_equal(netsim_sampler_new(&smp, sim, ids, 2, 0, 800000, 20),
                   NETSIM_ERR_NOENT);
  ids[1] = 3;
  NS_OK(netsim_sampler_new(&smp, sim, ids, 2, 0, 800000, 20));
  for (i = 0; i < 10; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(netsim_sampler_count(smp), 20);
  for (i = 0; i < 20; ++i) {
    assert_int_equal(netsim_sampler_time(smp, i), (netsim_time)i * 800000);
    /* Packet k finishes at (k+1) * 0.8 us. */
    assert_int_equal(netsim_sampler_bytes(smp, i, 0),
                     i < 10 ? 10000 - 1000 * i : 0);
    /* The switch's port to host 1 never holds more than the packet it is
       sending (both links run at 10 Gb/s). */
    assert_true(netsim_sampler_bytes(smp, i, 1) <= 1000);
  }
  assert_int_equal(netsim_sampler_time(smp, 20), NETSIM_TIME_NONE);
  assert_int_equal(netsim_sampler_bytes(smp, 20, 0), 0);
  /* The deepest queue was link 0's. */
  assert_int_equal(netsim_stats_busiest(sim, NETSIM_BUSY_MAX_QUEUE, 2, top), 2);
  assert_int_equal(top[0], 0);
  assert_int_equal(netsim_stats_busiest(sim, NETSIM_BUSY_QUEUE, 1, top), 1);
  assert_int_equal(top[0], 0);
  netsim_sampler_del(smp);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_queue_droptail_at_limit),
      cmocka_unit_test(test_queue_ecn_above_k),
      cmocka_unit_test(test_queue_switch_port_incast),
      cmocka_unit_test(test_queue_depth_sampled),
  };
  return cmocka_run_group_tests_name("netsim_queue", tests, NULL, NULL);
}
