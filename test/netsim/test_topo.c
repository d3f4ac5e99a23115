/*
 * test_topo.c: topology builders: fat trees (k = 4, 8, 16) have k^3/4
 * hosts, 5k^2/4 switches and the documented layout, every host reaches
 * every other over the expected number of hops, and hosts in different
 * pods have (k/2)^2 equal-cost paths; leaf-spine has one path per spine
 * and the requested oversubscription; the dumbbell has N parallel paths;
 * bad arguments and bad building orders are clean errors.
 */
#include "nstest.h"

static netsim_sim *fattree(uint32_t k, netsim_topo_info *info) {
  netsim_fattree_settings ft;
  netsim_settings s;
  netsim_sim *sim = NULL;

  netsim_settings_default(&s);
  s.max_pkts = 32768;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, k);
  NS_OK(netsim_topo_fattree(sim, &ft, info));
  return sim;
}

static void check_fattree_counts(uint32_t k) {
  netsim_topo_info info;
  netsim_sim *sim = fattree(k, &info);
  uint32_t h = k / 2, i;
  netsim_link_info li;

  assert_int_equal(info.n_hosts, k * k * k / 4);
  assert_int_equal(info.n_switches, 5 * k * k / 4);
  /* Three tiers of k^3/4 cables each, two links per cable. */
  assert_int_equal(info.n_links, 2 * 3 * k * k * k / 4);
  assert_int_equal(netsim_sim_n_hosts(sim), info.n_hosts);
  assert_int_equal(netsim_sim_n_switches(sim), info.n_switches);
  assert_int_equal(netsim_sim_n_links(sim), info.n_links);
  assert_int_equal(netsim_sim_n_nodes(sim), info.n_hosts + info.n_switches);
  assert_int_equal(info.tier_count[0], k * h);
  assert_int_equal(info.tier_count[1], k * h);
  assert_int_equal(info.tier_count[2], h * h);
  assert_int_equal(info.tier_first[2], 2 * k * h);
  assert_int_equal(info.uplink_first, 2 * info.n_hosts);
  for (i = 0; i < info.n_hosts; ++i) {
    netsim_host *host = netsim_sim_host(sim, i);
    assert_int_equal(netsim_host_index(host), i);
    assert_int_equal(netsim_host_node(host), i);
    assert_int_equal(netsim_host_addr(host), NETSIM_ADDR_BASE + i);
    assert_ptr_equal(netsim_sim_host_by_addr(sim, NETSIM_ADDR_BASE + i), host);
    /* Host i hangs off edge (i / h) % h of pod i / h^2, at port i % h. */
    netsim_link_get_info(netsim_host_nic(host), &li);
    assert_int_equal(li.to_node,
                     info.n_hosts + (i / (h * h)) * h + (i / h) % h);
    assert_int_equal(li.to_port, i % h);
  }
  assert_null(netsim_sim_host_by_addr(sim, NETSIM_ADDR_BASE + info.n_hosts));
  /* Every switch has k ports, all connected. */
  for (i = 0; i < info.n_switches; ++i) {
    netsim_switch *sw = netsim_sim_switch(sim, i);
    uint32_t p;
    assert_int_equal(netsim_switch_n_ports(sw), k);
    for (p = 0; p < k; ++p) {
      assert_non_null(netsim_switch_port_link(sw, p));
    }
  }
  netsim_sim_del(sim);
}

static void test_topo_fattree_counts(void **state) {
  (void)state;
  check_fattree_counts(4);
  check_fattree_counts(8);
  check_fattree_counts(2);
}

static ns_rec recs[128];

/* Every host sends one packet to every other host; all arrive, over 2, 4
   or 6 links. */
static void check_all_pairs(uint32_t k) {
  netsim_sim *sim = fattree(k, NULL);
  uint32_t n = k * k * k / 4, h = k / 2, i, j;
  netsim_sim_stats st;

  for (i = 0; i < n; ++i) {
    ns_rec_init(&recs[i], n);
    netsim_host_set_rx(netsim_sim_host(sim, i), ns_rec_cb, &recs[i]);
  }
  for (i = 0; i < n; ++i) {
    for (j = 0; j < n; ++j) {
      if (i != j) {
        NS_OK(ns_send(sim, i, j, (uint16_t)(1000 + j), 100, i));
      }
    }
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.delivered, (uint64_t)n * (n - 1));
  assert_int_equal(st.drops[NETSIM_DROP_QUEUE] + st.drops[NETSIM_DROP_NO_ROUTE],
                   0);
  assert_int_equal(st.pkts_in_use, 0);
  for (j = 0; j < n; ++j) {
    uint32_t m;
    assert_int_equal(recs[j].n, n - 1);
    for (m = 0; m < recs[j].n; ++m) {
      uint32_t src = (uint32_t)recs[j].tag[m];
      uint32_t hops = src / h == j / h               ? 2
                      : src / (h * h) == j / (h * h) ? 4
                                                     : 6;
      assert_int_equal(recs[j].hops[m], hops);
      assert_int_equal(recs[j].src[m], NETSIM_ADDR_BASE + src);
    }
    ns_rec_fini(&recs[j]);
  }
  netsim_sim_del(sim);
}

static void test_topo_fattree_all_pairs(void **state) {
  (void)state;
  check_all_pairs(4);
  check_all_pairs(8);
}

static void check_paths(uint32_t k, int all) {
  netsim_sim *sim = fattree(k, NULL);
  uint32_t n = k * k * k / 4, h = k / 2, i, j, step = all ? 1 : 37;

  for (i = 0; i < n; i += step) {
    for (j = 0; j < n; j += step) {
      uint64_t want = i == j                       ? 1
                      : i / h == j / h             ? 1
                      : i / (h * h) == j / (h * h) ? h
                                                   : (uint64_t)h * h;
      assert_int_equal(netsim_sim_count_paths(sim, i, j), want);
    }
  }
  assert_int_equal(netsim_sim_count_paths(sim, 0, n), 0);
  netsim_sim_del(sim);
}

static void test_topo_fattree_paths(void **state) {
  (void)state;
  check_paths(4, 1);
  check_paths(8, 1);
  check_paths(16, 0);
}

static void test_topo_leafspine(void **state) {
  netsim_leafspine_settings ls;
  netsim_topo_info info;
  netsim_link_info li;
  netsim_sim *sim = ns_sim(1);
  uint64_t rates[4] = {0, NETSIM_GBPS(40), 0, 0};
  uint32_t i, j;

  (void)state;
  /* 4 spines, 3 leaves of 4 hosts at 100 Gb/s, 2:1 oversubscribed: each
     uplink carries 4 * 100 / (4 * 2) = 50 Gb/s; spine 1 is slower. */
  netsim_leafspine_settings_default(&ls, 4, 3, 4);
  ls.fabric.rate_bps = 0;
  ls.oversub = 2.0;
  ls.spine_rate_bps = rates;
  NS_OK(netsim_topo_leafspine(sim, &ls, &info));
  assert_int_equal(info.n_hosts, 12);
  assert_int_equal(info.n_switches, 7);
  assert_int_equal(info.n_links, 2 * (12 + 12));
  assert_int_equal(info.tier_first[1], 3);
  assert_int_equal(info.tier_count[1], 4);
  for (i = 0; i < 12; ++i) {
    for (j = 0; j < 12; ++j) {
      assert_int_equal(netsim_sim_count_paths(sim, i, j),
                       i / 4 == j / 4 ? 1 : 4);
    }
  }
  for (i = 0; i < 12; ++i) {
    netsim_link_get_info(netsim_sim_link(sim, info.uplink_first + 2 * i), &li);
    assert_int_equal(li.rate_bps,
                     i % 4 == 1 ? NETSIM_GBPS(40) : NETSIM_GBPS(50));
    assert_int_equal(li.from_port, 4 + i % 4);
  }
  netsim_sim_del(sim);

  /* Spine count = path count. */
  for (i = 1; i <= 16; i *= 2) {
    sim = ns_sim(1);
    netsim_leafspine_settings_default(&ls, i, 2, 1);
    NS_OK(netsim_topo_leafspine(sim, &ls, NULL));
    assert_int_equal(netsim_sim_count_paths(sim, 0, 1), i);
    netsim_sim_del(sim);
  }
}

static void test_topo_dumbbell(void **state) {
  netsim_dumbbell_settings db;
  netsim_topo_info info;
  netsim_link_info li;
  netsim_sim *sim = ns_sim(1);
  uint64_t rates[4] = {NETSIM_GBPS(5), NETSIM_GBPS(5), 0, NETSIM_GBPS(5)};
  netsim_time delays[4] = {NETSIM_US, 2 * NETSIM_US, 3 * NETSIM_US,
                           4 * NETSIM_US};
  uint32_t i;

  (void)state;
  netsim_dumbbell_settings_default(&db, 4);
  db.hosts_per_side = 2;
  db.path_rate_bps = rates;
  db.path_delay = delays;
  NS_OK(netsim_topo_dumbbell(sim, &db, &info));
  assert_int_equal(info.n_hosts, 4);
  assert_int_equal(info.n_switches, 2);
  assert_int_equal(info.n_links, 2 * (4 + 4));
  assert_int_equal(info.uplink_first, 8);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 2), 4);
  assert_int_equal(netsim_sim_count_paths(sim, 3, 1), 4);
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 1);
  for (i = 0; i < 4; ++i) {
    netsim_link_get_info(netsim_sim_link(sim, info.uplink_first + 2 * i), &li);
    assert_int_equal(li.rate_bps, rates[i] ? rates[i] : NETSIM_GBPS(100));
    assert_int_equal(li.delay, delays[i]);
    assert_int_equal(li.from_port, 2 + i);
    assert_int_equal(li.to_port, 2 + i);
  }
  netsim_sim_del(sim);
}

static void test_topo_errors(void **state) {
  netsim_fattree_settings ft;
  netsim_leafspine_settings ls;
  netsim_dumbbell_settings db;
  netsim_linkcfg c;
  netsim_sim *sim = ns_sim(1);
  netsim_host *host;

  (void)state;
  netsim_fattree_settings_default(&ft, 3);
  assert_int_equal(netsim_topo_fattree(sim, &ft, NULL), NETSIM_ERR_INVAL);
  ft.k = 0;
  assert_int_equal(netsim_topo_fattree(sim, &ft, NULL), NETSIM_ERR_INVAL);
  ft.k = 4;
  ft.host.rate_bps = 0;
  assert_int_equal(netsim_topo_fattree(sim, &ft, NULL), NETSIM_ERR_INVAL);
  netsim_leafspine_settings_default(&ls, 0, 2, 2);
  assert_int_equal(netsim_topo_leafspine(sim, &ls, NULL), NETSIM_ERR_INVAL);
  netsim_leafspine_settings_default(&ls, 2, 2, 2);
  ls.fabric.rate_bps = 0;
  ls.oversub = 0;
  assert_int_equal(netsim_topo_leafspine(sim, &ls, NULL), NETSIM_ERR_INVAL);
  netsim_dumbbell_settings_default(&db, 0);
  assert_int_equal(netsim_topo_dumbbell(sim, &db, NULL), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_build_routes(sim), NETSIM_ERR_STATE);
  /* Built once, never twice. */
  netsim_fattree_settings_default(&ft, 4);
  NS_OK(netsim_topo_fattree(sim, &ft, NULL));
  assert_int_equal(netsim_topo_fattree(sim, &ft, NULL), NETSIM_ERR_STATE);
  assert_int_equal(netsim_sim_add_host(sim, NULL), NETSIM_ERR_STATE);
  assert_int_equal(netsim_sim_add_switch(sim, 4, NULL), NETSIM_ERR_STATE);
  netsim_sim_del(sim);

  /* By hand: bad ports, bad nodes, two hosts back to back, a host with
     no cable. */
  sim = ns_sim(1);
  netsim_linkcfg_default(&c);
  NS_OK(netsim_sim_add_host(sim, &host));
  NS_OK(netsim_sim_add_host(sim, NULL));
  assert_int_equal(netsim_sim_add_switch(sim, 0, NULL), NETSIM_ERR_INVAL);
  NS_OK(netsim_sim_add_switch(sim, 2, NULL));
  assert_int_equal(netsim_sim_connect(sim, 0, 0, 1, 0, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_connect(sim, 0, 1, 2, 0, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_connect(sim, 0, 0, 2, 2, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_connect(sim, 0, 0, 7, 0, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_connect(sim, 2, 0, 2, 1, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  NS_OK(netsim_sim_connect(sim, 0, 0, 2, 0, &c, &c, NULL));
  assert_int_equal(netsim_sim_connect(sim, 1, 0, 2, 0, &c, &c, NULL),
                   NETSIM_ERR_INVAL);
  assert_int_equal(netsim_sim_build_routes(sim), NETSIM_ERR_STATE);
  /* A host without a NIC cable cannot send. */
  assert_int_equal(ns_send(sim, 1, 0, 1, 100, 0), NETSIM_ERR_DROPPED);
  NS_OK(netsim_sim_connect(sim, 1, 0, 2, 1, &c, &c, NULL));
  NS_OK(netsim_sim_build_routes(sim));
  assert_int_equal(netsim_sim_count_paths(sim, 0, 1), 1);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_topo_fattree_counts),
      cmocka_unit_test(test_topo_fattree_all_pairs),
      cmocka_unit_test(test_topo_fattree_paths),
      cmocka_unit_test(test_topo_leafspine),
      cmocka_unit_test(test_topo_dumbbell),
      cmocka_unit_test(test_topo_errors),
  };
  return cmocka_run_group_tests_name("netsim_topo", tests, NULL, NULL);
}
