/*
 * test_switch.c: ECMP: one 5-tuple always takes the same next hop; many
 * source ports spread evenly over the next hops (min/max and chi-square
 * bounds); switches with different seeds choose differently; every field
 * of the 5-tuple enters the hash; next-hop sets; no route (unknown
 * destinations, a host cut off by a failed link); and real packets follow
 * the hash.
 */
#include <math.h>

#include "nstest.h"

/* Two leaves of one host each under |spines| spines: leaf 0 (switch 0)
   reaches host 1 over uplink ports 1..spines. */
static netsim_sim *fabric(uint64_t seed, uint32_t spines,
                          netsim_topo_info *info) {
  netsim_leafspine_settings ls;
  netsim_sim *sim = ns_sim(seed);

  netsim_leafspine_settings_default(&ls, spines, 2, 1);
  NS_OK(netsim_topo_leafspine(sim, &ls, info));
  return sim;
}

static netsim_flowkey key_of(uint16_t sport) {
  netsim_flowkey k;

  memset(&k, 0, sizeof(k));
  k.src = NETSIM_ADDR_BASE;
  k.dst = NETSIM_ADDR_BASE + 1;
  k.sport = sport;
  k.dport = 4791;
  k.proto = 17;
  return k;
}

static void test_switch_same_tuple_same_port(void **state) {
  uint64_t s = tu_seed("test_switch_same_tuple_same_port");
  netsim_sim *sim = fabric(s, 8, NULL);
  netsim_switch *leaf = netsim_sim_switch(sim, 0);
  netsim_link_stats st;
  uint32_t i, used = 0;

  (void)state;
  for (i = 0; i < 2000; ++i) {
    netsim_flowkey k = key_of((uint16_t)tu_rand(&s));
    int p = netsim_switch_route(leaf, &k);
    tu_assert(p >= 1 && p <= 8);
    tu_assert(netsim_switch_route(leaf, &k) == p);
    tu_assert(netsim_ecmp_hash(netsim_switch_seed(leaf), &k) ==
              netsim_ecmp_hash(netsim_switch_seed(leaf), &k));
  }
  /* 500 packets of one flow use one uplink, and all arrive in order. */
  for (i = 0; i < 500; ++i) {
    NS_OK(ns_send(sim, 0, 1, 4242, 1000, i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  for (i = 1; i <= 8; ++i) {
    netsim_link_get_stats(netsim_switch_port_link(leaf, i), &st);
    tu_assert(st.rx_pkts == 0 || st.rx_pkts == 500);
    used += st.rx_pkts == 500;
  }
  tu_assert(used == 1);
  netsim_sim_del(sim);
}

static void test_switch_sports_spread(void **state) {
  enum { N = 16000, P = 8 };
  uint64_t s = tu_seed("test_switch_sports_spread");
  netsim_sim *sim = fabric(s, P, NULL);
  netsim_switch *leaf = netsim_sim_switch(sim, 0);
  uint32_t count[P + 1], i, lo = N, hi = 0;
  double mean = (double)N / P, chi2 = 0;

  (void)state;
  memset(count, 0, sizeof(count));
  /* Consecutive source ports, as SRD's path entropy uses them. */
  for (i = 0; i < N; ++i) {
    netsim_flowkey k = key_of((uint16_t)(49152 + i));
    int p = netsim_switch_route(leaf, &k);
    tu_assert(p >= 1 && p <= P);
    ++count[p];
  }
  for (i = 1; i <= P; ++i) {
    double d = (double)count[i] - mean;
    chi2 += d * d / mean;
    lo = count[i] < lo ? count[i] : lo;
    hi = count[i] > hi ? count[i] : hi;
  }
  print_message("ECMP spread over %d ports: min %u max %u chi2 %.1f\n", P, lo,
                hi, chi2);
  /* 7 degrees of freedom: P(chi2 > 40) is about 1e-6. */
  tu_assert(chi2 < 40.0);
  tu_assert(lo > 0.85 * mean && hi < 1.15 * mean);
  netsim_sim_del(sim);
}

static void test_switch_seeds_differ(void **state) {
  uint64_t s = tu_seed("test_switch_seeds_differ");
  netsim_sim *a = fabric(s, 8, NULL), *b = fabric(s ^ 0x5555, 8, NULL);
  netsim_switch *la = netsim_sim_switch(a, 0), *lb = netsim_sim_switch(b, 0);
  netsim_switch *spine = netsim_sim_switch(a, 2);
  uint32_t i, same = 0;
  uint64_t seed_a = netsim_switch_seed(la);

  (void)state;
  /* Different master seeds, different switch seeds; switches of one
     simulation differ too. */
  tu_assert(netsim_switch_seed(la) != netsim_switch_seed(lb));
  tu_assert(netsim_switch_seed(la) != netsim_switch_seed(spine));
  tu_assert(netsim_switch_seed(la) !=
            netsim_switch_seed(netsim_sim_switch(a, 1)));
  for (i = 0; i < 4000; ++i) {
    netsim_flowkey k = key_of((uint16_t)i);
    same += netsim_switch_route(la, &k) == netsim_switch_route(lb, &k);
  }
  /* Independent choices agree 1 time in 8. */
  tu_assert(same < 4000 / 4);
  tu_assert(same > 4000 / 32);
  /* The same seed gives the same choices. */
  netsim_switch_set_seed(lb, seed_a);
  for (i = 0; i < 4000; ++i) {
    netsim_flowkey k = key_of((uint16_t)i);
    tu_assert(netsim_switch_route(la, &k) == netsim_switch_route(lb, &k));
  }
  netsim_sim_del(a);
  netsim_sim_del(b);
}

static void test_switch_hash_every_field(void **state) {
  uint64_t s = tu_seed("test_switch_hash_every_field");
  int i;

  (void)state;
  for (i = 0; i < 1000; ++i) {
    uint64_t seed = tu_rand(&s);
    netsim_flowkey k = key_of((uint16_t)tu_rand(&s)), m;
    uint64_t h;
    k.src = (netsim_addr)tu_rand(&s);
    k.dst = (netsim_addr)tu_rand(&s);
    h = netsim_ecmp_hash(seed, &k);
    m = k;
    m.src ^= 1u << (tu_rand(&s) % 32);
    tu_assert(netsim_ecmp_hash(seed, &m) != h);
    m = k;
    m.dst ^= 1u << (tu_rand(&s) % 32);
    tu_assert(netsim_ecmp_hash(seed, &m) != h);
    m = k;
    m.sport ^= (uint16_t)(1u << (tu_rand(&s) % 16));
    tu_assert(netsim_ecmp_hash(seed, &m) != h);
    m = k;
    m.dport ^= (uint16_t)(1u << (tu_rand(&s) % 16));
    tu_assert(netsim_ecmp_hash(seed, &m) != h);
    m = k;
    m.proto ^= (uint8_t)(1u << (tu_rand(&s) % 8));
    tu_assert(netsim_ecmp_hash(seed, &m) != h);
    tu_assert(netsim_ecmp_hash(seed ^ (1ULL << (tu_rand(&s) % 64)), &k) != h);
  }
  /* The pick covers [0, n) and only that. */
  assert_int_equal(netsim_ecmp_pick(0, 8), 0);
  assert_int_equal(netsim_ecmp_pick(UINT64_MAX, 8), 7);
  assert_int_equal(netsim_ecmp_pick(UINT64_MAX, 1), 0);
}

static void test_switch_next_hops(void **state) {
  netsim_topo_info info;
  netsim_sim *sim = fabric(1, 4, &info);
  netsim_switch *leaf = netsim_sim_switch(sim, 0), *spine;
  uint32_t ports[8], n;
  netsim_flowkey k = key_of(1);

  (void)state;
  assert_int_equal(info.tier_first[1], 2);
  spine = netsim_sim_switch(sim, 2);
  n = netsim_switch_next_hops(leaf, 1, ports, 8);
  assert_int_equal(n, 4);
  assert_int_equal(ports[0], 1);
  assert_int_equal(ports[3], 4);
  /* Only |cap| are written, the size is still returned. */
  assert_int_equal(netsim_switch_next_hops(leaf, 1, ports, 2), 4);
  n = netsim_switch_next_hops(leaf, 0, ports, 8);
  assert_int_equal(n, 1);
  assert_int_equal(ports[0], 0);
  n = netsim_switch_next_hops(spine, 1, ports, 8);
  assert_int_equal(n, 1);
  assert_int_equal(ports[0], 1);
  assert_int_equal(netsim_switch_next_hops(leaf, 99, ports, 8), 0);
  /* Unknown destinations have no route. */
  k.dst = NETSIM_ADDR_BASE + 2;
  assert_int_equal(netsim_switch_route(leaf, &k), NETSIM_ERR_NOENT);
  k.dst = NETSIM_ADDR_BASE - 1;
  assert_int_equal(netsim_switch_route(leaf, &k), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_switch_n_ports(leaf), 5);
  assert_int_equal(netsim_switch_index(spine), 2);
  assert_int_equal(netsim_switch_node(spine), 4);
  assert_null(netsim_switch_port_link(leaf, 5));
  netsim_sim_del(sim);
}

/* A host that no routed link reaches has no route once routing has
   reconverged around the failure (NETSIM_ERR_NOENT, an empty next-hop
   set), and has one again once the link is back. */
static void test_switch_route_lost_with_link(void **state) {
  netsim_sim *sim = fabric(1, 1, NULL);
  netsim_switch *leaf = netsim_sim_switch(sim, 0);
  netsim_flowkey k = key_of(1), own = key_of(1);
  uint32_t up, ports[2];
  netsim_settings s;

  (void)state;
  netsim_settings_default(&s);
  own.dst = NETSIM_ADDR_BASE;
  up = netsim_link_id(netsim_switch_port_link(leaf, 1));
  assert_int_equal(netsim_switch_route(leaf, &k), 1);
  NS_OK(netsim_fault_link_down(sim, up, 0));
  /* Until routing reconverges, the switch still routes onto the cable. */
  netsim_sim_run_until(sim, s.reconverge / 2);
  assert_int_equal(netsim_switch_route(leaf, &k), 1);
  netsim_sim_run_until(sim, 2 * s.reconverge);
  assert_int_equal(netsim_switch_route(leaf, &k), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_switch_next_hops(leaf, 1, ports, 2), 0);
  assert_int_equal(netsim_switch_route(leaf, &own), 0);
  NS_OK(netsim_fault_link_up(sim, up, 2 * s.reconverge));
  netsim_sim_run_until(sim, 4 * s.reconverge);
  assert_int_equal(netsim_switch_route(leaf, &k), 1);
  netsim_sim_del(sim);
}

static void test_switch_packets_follow_hash(void **state) {
  enum { N = 4000 };
  uint64_t s = tu_seed("test_switch_packets_follow_hash");
  netsim_sim *sim = fabric(s, 4, NULL);
  netsim_switch *leaf = netsim_sim_switch(sim, 0);
  uint64_t expect[5] = {0, 0, 0, 0, 0};
  uint32_t i, ids[4];
  double share[4];
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, N);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  for (i = 0; i < N; ++i) {
    uint16_t sport = (uint16_t)tu_rand(&s);
    netsim_flowkey k = key_of(sport);
    ++expect[netsim_switch_route(leaf, &k)];
    NS_OK(ns_send(sim, 0, 1, sport, 100, i));
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  tu_assert(rec.n == N);
  for (i = 0; i < 4; ++i) {
    netsim_link_stats st;
    ids[i] = netsim_link_id(netsim_switch_port_link(leaf, i + 1));
    netsim_link_get_stats(netsim_switch_port_link(leaf, i + 1), &st);
    tu_assert(st.rx_pkts == expect[i + 1]);
  }
  tu_assert(netsim_stats_share(sim, ids, 4, share) == (uint64_t)N * 100);
  for (i = 0; i < 4; ++i) {
    tu_assert(fabs(share[i] - 0.25) < 0.05);
  }
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_switch_same_tuple_same_port),
      cmocka_unit_test(test_switch_sports_spread),
      cmocka_unit_test(test_switch_seeds_differ),
      cmocka_unit_test(test_switch_hash_every_field),
      cmocka_unit_test(test_switch_next_hops),
      cmocka_unit_test(test_switch_route_lost_with_link),
      cmocka_unit_test(test_switch_packets_follow_hash),
  };
  return cmocka_run_group_tests_name("netsim_switch", tests, NULL, NULL);
}
