/*
 * test_stats.c: statistics: the share of bytes per uplink (spread by
 * ECMP, or all on one for a single 5-tuple), the busiest links, and the
 * conservation of packets in the simulation counters.
 */
#include <math.h>

#include "nstest.h"

static netsim_sim *fabric(uint64_t seed, netsim_topo_info *info) {
  netsim_leafspine_settings ls;
  netsim_sim *sim = ns_sim(seed);

  netsim_leafspine_settings_default(&ls, 4, 2, 8);
  NS_OK(netsim_topo_leafspine(sim, &ls, info));
  return sim;
}

static void uplinks(netsim_sim *sim, uint32_t *ids) {
  netsim_switch *leaf = netsim_sim_switch(sim, 0);
  uint32_t i;

  for (i = 0; i < 4; ++i) {
    ids[i] = netsim_link_id(netsim_switch_port_link(leaf, 8 + i));
  }
}

static void test_stats_share_uplinks(void **state) {
  uint64_t seed = tu_seed("test_stats_share_uplinks");
  netsim_sim *sim = fabric(seed, NULL);
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  uint32_t ids[5], i;
  double share[5], sum = 0;

  (void)state;
  uplinks(sim, ids);
  assert_int_equal(netsim_stats_share(sim, ids, 4, share), 0);
  for (i = 0; i < 4; ++i) {
    assert_true(share[i] == 0.0);
  }
  /* 256 flows from the 8 hosts of leaf 0 to those of leaf 1, each its
     own source port: ECMP spreads them. */
  NS_OK(netsim_traffic_new(&tr, sim, 256));
  netsim_flow_settings_default(&fl);
  fl.window = 2;
  fl.max_pkts = 20;
  for (i = 0; i < 256; ++i) {
    fl.src = i % 8;
    fl.dst = 8 + (i / 8) % 8;
    fl.sport = (uint16_t)(10000 + i);
    NS_OK(netsim_traffic_add_flow(tr, &fl, NULL));
  }
  netsim_sim_run_until(sim, 10 * NETSIM_MS);
  ids[4] = 99999;
  tu_assert(netsim_stats_share(sim, ids, 5, share) == 256ull * 20 * 1500);
  for (i = 0; i < 4; ++i) {
    print_message("uplink %u share %.3f\n", i, share[i]);
    tu_assert(share[i] > 0.12 && share[i] < 0.38);
    sum += share[i];
  }
  tu_assert(share[4] == 0.0);
  tu_assert(fabs(sum - 1.0) < 1e-9);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

static void test_stats_single_flow_one_uplink(void **state) {
  netsim_sim *sim = fabric(3, NULL);
  uint32_t ids[4], top[3], i, hot = 99;
  double share[4];

  (void)state;
  uplinks(sim, ids);
  for (i = 0; i < 200; ++i) {
    NS_OK(ns_send(sim, 0, 9, 4000, 1500, i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(netsim_stats_share(sim, ids, 4, share), 200 * 1500);
  for (i = 0; i < 4; ++i) {
    assert_true(share[i] == 0.0 || share[i] == 1.0);
    if (share[i] == 1.0) {
      hot = ids[i];
    }
  }
  assert_int_not_equal(hot, 99);
  /* By bytes, the NIC, the chosen uplink and the spine's downlink tie at
     the top, and ties go to the lowest id. */
  assert_int_equal(netsim_stats_busiest(sim, NETSIM_BUSY_BYTES, 3, top), 3);
  assert_int_equal(top[0], 0);
  assert_true(top[0] < top[1] && top[1] < top[2]);
  assert_true(top[1] == hot || top[2] == hot);
  /* The host's NIC queue was the deepest: 200 packets at once. */
  assert_int_equal(netsim_stats_busiest(sim, NETSIM_BUSY_MAX_QUEUE, 1, top), 1);
  assert_int_equal(top[0], 0);
  assert_int_equal(netsim_stats_busiest(sim, NETSIM_BUSY_BYTES, 0, top), 0);
  netsim_sim_del(sim);
}

static void test_stats_conservation(void **state) {
  uint64_t seed = tu_seed("test_stats_conservation");
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_sim *sim = NULL;
  netsim_traffic *tr = NULL;
  netsim_flow_settings fl;
  netsim_sim_stats st;
  uint64_t drops;
  int i, r;

  (void)state;
  netsim_settings_default(&s);
  s.seed = seed;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, 4);
  ft.edge_agg.queue_bytes = ft.agg_core.queue_bytes = 15000;
  NS_OK(netsim_topo_fattree(sim, &ft, NULL));
  NS_OK(netsim_fault_loss_all(sim, 0.001, 1));
  NS_OK(netsim_traffic_new(&tr, sim, 16));
  netsim_flow_settings_default(&fl);
  fl.window = 32;
  NS_OK(netsim_traffic_permutation(tr, &fl, 0));
  for (r = 1; r <= 20; ++r) {
    netsim_sim_run_until(sim, (netsim_time)r * 50 * NETSIM_US);
    netsim_sim_get_stats(sim, &st);
    drops = 0;
    for (i = 0; i < NETSIM_DROP_REASONS; ++i) {
      drops += st.drops[i];
    }
    tu_assert(st.sent == st.delivered + drops + st.pkts_in_use);
  }
  tu_assert(st.drops[NETSIM_DROP_QUEUE] > 0);
  tu_assert(st.drops[NETSIM_DROP_LOSS] > 0);
  tu_assert(st.events > st.hops);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stats_share_uplinks),
      cmocka_unit_test(test_stats_single_flow_one_uplink),
      cmocka_unit_test(test_stats_conservation),
  };
  return cmocka_run_group_tests_name("netsim_stats", tests, NULL, NULL);
}
