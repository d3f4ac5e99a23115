/*
 * test_fault.c: faults: a cable that goes down loses the packets switches
 * keep hashing onto it until routing reconverges, then traffic avoids it,
 * and comes back after it is up again and routing has reconverged; path
 * counts follow routing; random loss everywhere at the configured rate;
 * a degraded rate from a given time; errors.
 */
#include "nstest.h"

/* Two hosts joined by |paths| parallel links; reconvergence |rc|. */
static netsim_sim *dumbbell(uint64_t seed, uint32_t paths, netsim_time rc,
                            netsim_topo_info *info) {
  netsim_settings s;
  netsim_dumbbell_settings db;
  netsim_sim *sim = NULL;

  netsim_settings_default(&s);
  s.seed = seed;
  s.reconverge = rc;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_dumbbell_settings_default(&db, paths);
  NS_OK(netsim_topo_dumbbell(sim, &db, info));
  return sim;
}

static uint64_t rx_of(netsim_sim *sim, uint32_t id) {
  netsim_link_stats st;
  netsim_link_get_stats(netsim_sim_link(sim, id), &st);
  return st.rx_pkts;
}

static uint64_t down_drops(netsim_sim *sim) {
  netsim_sim_stats st;
  netsim_sim_get_stats(sim, &st);
  return st.drops[NETSIM_DROP_LINK_DOWN];
}

static void test_fault_blackhole_then_reroute(void **state) {
  netsim_topo_info info;
  netsim_sim *sim = dumbbell(7, 4, 100 * NETSIM_US, &info);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_link_info li;
  uint32_t dead, i;
  uint64_t d1, r1, rx[4];

  (void)state;
  dead = info.uplink_first + 2; /* path 1, left to right */
  NS_OK(netsim_traffic_new(&tr, sim, 64));
  netsim_flow_settings_default(&fl);
  fl.src = 0;
  fl.dst = 1;
  fl.window = 0;
  fl.rate_bps = NETSIM_MBPS(100);
  fl.pkt_bytes = 1000;
  for (i = 0; i < 64; ++i) {
    fl.sport = (uint16_t)(1000 + i);
    NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  }
  NS_OK(netsim_fault_link_down(sim, dead, NETSIM_MS));
  NS_OK(netsim_fault_link_up(sim, dead, 2 * NETSIM_MS));

  /* Before: every path carries traffic, nothing is lost. */
  netsim_sim_run_until(sim, NETSIM_MS - 1);
  for (i = 0; i < 4; ++i) {
    assert_true(rx_of(sim, info.uplink_first + 2 * i) > 0);
  }
  assert_int_equal(down_drops(sim), 0);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 4);

  /* The blackhole: down, but still routed; packets hashed onto it die. */
  netsim_sim_run_until(sim, NETSIM_MS + 100 * NETSIM_US - 1);
  netsim_link_get_info(netsim_sim_link(sim, dead), &li);
  assert_int_equal(li.up, 0);
  assert_int_equal(li.routed, 1);
  assert_true(down_drops(sim) > 5);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 4);
  {
    netsim_link_stats st;
    netsim_link_get_stats(netsim_sim_link(sim, dead), &st);
    assert_int_equal(st.drops[NETSIM_DROP_LINK_DOWN], down_drops(sim));
  }

  /* Reconverged: the link leaves routing; no more losses, no traffic on
     it, the three others carry everything. */
  netsim_sim_run_until(sim, NETSIM_MS + 100 * NETSIM_US);
  netsim_link_get_info(netsim_sim_link(sim, dead), &li);
  assert_int_equal(li.routed, 0);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 3);
  d1 = down_drops(sim);
  r1 = rx_of(sim, dead);
  for (i = 0; i < 4; ++i) {
    rx[i] = rx_of(sim, info.uplink_first + 2 * i);
  }
  netsim_sim_run_until(sim, 2 * NETSIM_MS - 1);
  assert_int_equal(down_drops(sim), d1);
  assert_int_equal(rx_of(sim, dead), r1);
  for (i = 0; i < 4; ++i) {
    if (i != 1) {
      assert_true(rx_of(sim, info.uplink_first + 2 * i) > rx[i]);
    }
  }

  /* Up again at 2 ms, but routing returns to it only at 2.1 ms. */
  netsim_sim_run_until(sim, 2 * NETSIM_MS + 100 * NETSIM_US - 1);
  netsim_link_get_info(netsim_sim_link(sim, dead), &li);
  assert_int_equal(li.up, 1);
  assert_int_equal(li.routed, 0);
  assert_int_equal(rx_of(sim, dead), r1);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 3);
  netsim_sim_run_until(sim, 3 * NETSIM_MS);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 4);
  assert_true(rx_of(sim, dead) > r1);
  assert_int_equal(down_drops(sim), d1);
  {
    netsim_sim_stats st;
    netsim_sim_get_stats(sim, &st);
    assert_int_equal(st.reroutes, 2);
    /* Everything sent was delivered, lost in the blackhole, or is in
       flight. */
    assert_int_equal(st.sent, st.delivered + d1 + st.pkts_in_use);
  }
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_fault_fattree_core_link(void **state) {
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_topo_info info;
  netsim_sim *sim = NULL;
  netsim_sim_stats st;
  uint32_t i, j, p, dead;

  (void)state;
  netsim_settings_default(&s);
  s.reconverge = 50 * NETSIM_US;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, 4);
  NS_OK(netsim_topo_fattree(sim, &ft, &info));
  /* The first aggregation-core link: aggregation 0 of pod 0 to core 0. */
  dead = info.uplink_first + 2 * 16;
  {
    netsim_link_info li;
    netsim_link_get_info(netsim_sim_link(sim, dead), &li);
    assert_int_equal(li.from_node, 16 + 8);
    assert_int_equal(li.to_node, 16 + 16);
  }
  NS_OK(netsim_fault_link_down(sim, dead, 10 * NETSIM_US));
  /* In the blackhole, all-pairs traffic over many source ports loses
     some packets. */
  netsim_sim_run_until(sim, 20 * NETSIM_US);
  for (i = 0; i < 16; ++i) {
    for (j = 0; j < 16; ++j) {
      for (p = 0; i != j && p < 8; ++p) {
        ns_send(sim, i, j, (uint16_t)(2000 + p), 100, 0);
      }
    }
  }
  netsim_sim_run_until(sim, 60 * NETSIM_US - 1);
  netsim_sim_get_stats(sim, &st);
  assert_true(st.drops[NETSIM_DROP_LINK_DOWN] > 0);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 4), 4);
  /* Reconverged: pods 0 and 1 see 3 paths each way, pods 1 and 2 still
     4; and no packet is lost any more. */
  netsim_sim_run_until(sim, 60 * NETSIM_US);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 4), 3);
  assert_int_equal(netsim_sim_count_paths(sim, 4, 0), 3);
  assert_int_equal(netsim_sim_count_paths(sim, 4, 8), 4);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 1);
  netsim_sim_run_until(sim, 100 * NETSIM_US);
  netsim_sim_get_stats(sim, &st);
  {
    uint64_t lost = st.drops[NETSIM_DROP_LINK_DOWN], sent = st.sent;
    for (i = 0; i < 16; ++i) {
      for (j = 0; j < 16; ++j) {
        for (p = 0; i != j && p < 8; ++p) {
          NS_OK(ns_send(sim, i, j, (uint16_t)(2000 + p), 100, 0));
        }
      }
    }
    netsim_sim_run_until(sim, 200 * NETSIM_US);
    netsim_sim_get_stats(sim, &st);
    assert_int_equal(st.drops[NETSIM_DROP_LINK_DOWN], lost);
    assert_int_equal(st.delivered + lost, st.sent);
    assert_int_equal(st.sent, sent + 16 * 15 * 8);
  }
  netsim_sim_del(sim);
}

static void test_fault_flap_within_reconvergence(void **state) {
  netsim_topo_info info;
  netsim_sim *sim = dumbbell(1, 2, 100 * NETSIM_US, &info);

  (void)state;
  /* Down at 10 us, up at 50 us: routing drops it at 110 us and takes it
     back at 150 us. */
  NS_OK(netsim_fault_link_down(sim, info.uplink_first, 10 * NETSIM_US));
  NS_OK(netsim_fault_link_up(sim, info.uplink_first, 50 * NETSIM_US));
  netsim_sim_run_until(sim, 109 * NETSIM_US);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 2);
  netsim_sim_run_until(sim, 110 * NETSIM_US);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 1);
  netsim_sim_run_until(sim, 150 * NETSIM_US);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 2);
  /* The whole fabric down: no path at all, and packets have no route. */
  NS_OK(netsim_fault_link_down(sim, info.uplink_first, 200 * NETSIM_US));
  NS_OK(netsim_fault_link_down(sim, info.uplink_first + 2, 200 * NETSIM_US));
  netsim_sim_run_until(sim, 300 * NETSIM_US);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 0);
  NS_OK(ns_send(sim, 0, 1, 1, 100, 0));
  netsim_sim_run_until(sim, 400 * NETSIM_US);
  {
    netsim_sim_stats st;
    netsim_sim_get_stats(sim, &st);
    assert_int_equal(st.drops[NETSIM_DROP_NO_ROUTE], 1);
  }
  netsim_sim_del(sim);
}

static void test_fault_loss_everywhere(void **state) {
  uint64_t seed = tu_seed("test_fault_loss_everywhere");
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_sim *sim = NULL;
  netsim_sim_stats st;
  uint32_t i, j, r;
  double frac;

  (void)state;
  netsim_settings_default(&s);
  s.seed = seed;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, 4);
  NS_OK(netsim_topo_fattree(sim, &ft, NULL));
  assert_int_equal(netsim_fault_loss_all(sim, 1.5, 0), NETSIM_ERR_INVAL);
  NS_OK(netsim_fault_loss_all(sim, 0.01, 0));
  for (r = 0; r < 100; ++r) {
    for (i = 0; i < 16; ++i) {
      for (j = 0; j < 16; ++j) {
        if (i != j) {
          NS_OK(ns_send(sim, i, j, (uint16_t)(r * 16 + j), 100, 0));
        }
      }
    }
    netsim_sim_run_until(sim, (r + 1) * 100 * NETSIM_US);
  }
  netsim_sim_get_stats(sim, &st);
  tu_assert(st.delivered + st.drops[NETSIM_DROP_LOSS] == st.sent);
  /* Each arrival at the end of a link is lost with p = 0.01; 5 sigma. */
  frac = (double)st.drops[NETSIM_DROP_LOSS] / (double)st.hops;
  print_message("loss per hop %.5f over %llu hops\n", frac,
                (unsigned long long)st.hops);
  tu_assert(st.hops > 100000);
  tu_assert(frac > 0.01 - 0.0015 && frac < 0.01 + 0.0015);

  /* Only the fabric: host links lose nothing. */
  NS_OK(netsim_fault_loss_all(sim, 0.0, 0));
  NS_OK(netsim_fault_loss_all(sim, 0.5, 1));
  for (i = 0; i < 16; ++i) {
    netsim_link_info li;
    netsim_link_get_info(netsim_host_nic(netsim_sim_host(sim, i)), &li);
    tu_assert(li.loss == 0.0);
    netsim_link_get_info(netsim_sim_link(sim, 32 + 2 * i), &li);
    tu_assert(li.loss == 0.5);
  }
  /* One cable, both ways. */
  NS_OK(netsim_fault_loss(sim, 5, 0.25));
  {
    netsim_link_info a, b;
    netsim_link_get_info(netsim_sim_link(sim, 4), &a);
    netsim_link_get_info(netsim_sim_link(sim, 5), &b);
    tu_assert(a.loss == 0.25 && b.loss == 0.25);
  }
  assert_int_equal(netsim_fault_loss(sim, 99999, 0.1), NETSIM_ERR_NOENT);
  netsim_sim_del(sim);
}

static void test_fault_degrade_at_time(void **state) {
  netsim_topo_info info;
  netsim_sim *sim = dumbbell(1, 1, 0, &info);
  netsim_link_info li;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 8);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  NS_OK(
      netsim_fault_degrade(sim, info.uplink_first, NETSIM_GBPS(10), NETSIM_MS));
  NS_OK(netsim_fault_degrade(sim, info.uplink_first, 0, 3 * NETSIM_MS));
  assert_int_equal(netsim_fault_degrade(sim, 99999, 0, 0), NETSIM_ERR_NOENT);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 1));
  netsim_sim_run_until(sim, 3 * NETSIM_MS);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 2));
  netsim_sim_run_until(sim, 4 * NETSIM_MS);
  assert_int_equal(rec.n, 3);
  /* Three 100 Gb/s links of 1 us, or the middle one at 10 Gb/s. */
  assert_int_equal(rec.t[0], 3 * (80000 + NETSIM_US));
  assert_int_equal(rec.t[1], 2 * NETSIM_MS + 2 * (80000 + NETSIM_US) + 800000 +
                                 NETSIM_US);
  assert_int_equal(rec.t[2], 3 * NETSIM_MS + 3 * (80000 + NETSIM_US));
  netsim_link_get_info(netsim_sim_link(sim, info.uplink_first + 1), &li);
  assert_int_equal(li.rate_bps, NETSIM_GBPS(100));
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_fault_errors(void **state) {
  netsim_settings s;
  netsim_dumbbell_settings db;
  netsim_sim *sim = NULL;

  (void)state;
  netsim_settings_default(&s);
  s.max_events = 3;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_dumbbell_settings_default(&db, 2);
  NS_OK(netsim_topo_dumbbell(sim, &db, NULL));
  assert_int_equal(netsim_fault_link_down(sim, 999, 0), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_fault_link_up(sim, 999, 0), NETSIM_ERR_NOENT);
  NS_OK(netsim_fault_link_down(sim, 4, NETSIM_MS));
  /* One event left: a down needs two; nothing is half-scheduled. */
  assert_int_equal(netsim_fault_link_down(sim, 6, NETSIM_MS), NETSIM_ERR_POOL);
  assert_int_equal(netsim_evl_pending(netsim_sim_evl(sim)), 2);
  NS_OK(netsim_fault_degrade(sim, 6, NETSIM_GBPS(1), NETSIM_MS));
  assert_int_equal(netsim_fault_degrade(sim, 6, NETSIM_GBPS(1), NETSIM_MS),
                   NETSIM_ERR_POOL);
  netsim_sim_run_until(sim, NETSIM_S);
  NS_OK(netsim_fault_link_up(sim, 4, 0));
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fault_blackhole_then_reroute),
      cmocka_unit_test(test_fault_fattree_core_link),
      cmocka_unit_test(test_fault_flap_within_reconvergence),
      cmocka_unit_test(test_fault_loss_everywhere),
      cmocka_unit_test(test_fault_degrade_at_time),
      cmocka_unit_test(test_fault_errors),
  };
  return cmocka_run_group_tests_name("netsim_fault", tests, NULL, NULL);
}
