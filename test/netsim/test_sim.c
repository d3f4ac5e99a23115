/*
 * test_sim.c: the simulation as a whole: one scenario (fat tree,
 * permutation and constant-rate traffic, random loss, a link failure with
 * reconvergence, queue sampling) run twice gives the same event-trace hash
 * and counters, and a different seed a different hash; random streams
 * belong to their components; every allocation failure is a clean
 * NETSIM_ERR_NOMEM with nothing leaked; bad settings are refused.
 */
#include "nstest.h"

/* The failing allocator: allocation number |fail_at| (from 0) fails. */
typedef struct fm {
  long n;
  long fail_at;
  long live;
} fm;

static void *fm_malloc(size_t size, void *user) {
  fm *f = user;
  void *p;

  if (f->n++ == f->fail_at) {
    return NULL;
  }
  p = malloc(size);
  f->live += p != NULL;
  return p;
}

static void *fm_calloc(size_t nmemb, size_t size, void *user) {
  fm *f = user;
  void *p;

  if (f->n++ == f->fail_at) {
    return NULL;
  }
  p = calloc(nmemb, size);
  f->live += p != NULL;
  return p;
}

static void fm_free(void *p, void *user) {
  fm *f = user;

  if (p) {
    --f->live;
    free(p);
  }
}

typedef struct result {
  uint64_t hash;
  netsim_sim_stats st;
  uint64_t samples;
  uint64_t flow_delivered;
} result;

/* scenario builds and runs the test scenario; returns 0 or the first
   error, having freed everything either way. */
static int scenario(const netsim_mem *mem, uint64_t seed, result *res) {
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_flow_settings fl;
  netsim_topo_info info;
  netsim_sim *sim = NULL;
  netsim_traffic *tr = NULL;
  netsim_sampler *smp = NULL;
  uint32_t ids[4], i;
  int rv;

  netsim_settings_default(&s);
  s.seed = seed;
  s.max_pkts = 4096;
  s.reconverge = 50 * NETSIM_US;
  rv = netsim_sim_new(&sim, &s, mem);
  if (rv != 0) {
    return rv;
  }
  netsim_fattree_settings_default(&ft, 4);
  ft.edge_agg.queue_bytes = ft.agg_core.queue_bytes = 30000;
  /* ECN on both fabric tiers: a permutation may keep its flows inside
     the pods, where core links alone would never mark (seed
     0x22ddb2f24b6ee2be did). */
  ft.edge_agg.ecn_bytes = ft.agg_core.ecn_bytes = 10000;
  if ((rv = netsim_topo_fattree(sim, &ft, &info)) != 0 ||
      (rv = netsim_traffic_new(&tr, sim, 16 + 8)) != 0) {
    goto out;
  }
  netsim_flow_settings_default(&fl);
  fl.window = 12;
  fl.ect = 1;
  if ((rv = netsim_traffic_permutation(tr, &fl, 1)) != 0) {
    goto out;
  }
  fl.window = 0;
  fl.rate_bps = NETSIM_GBPS(20);
  for (i = 0; i < 8; ++i) {
    fl.src = i;
    fl.dst = 15 - i;
    fl.sport = (uint16_t)(7000 + i);
    fl.start = i * NETSIM_US;
    if ((rv = netsim_traffic_add_flow(tr, &fl, NULL)) != 0) {
      goto out;
    }
  }
  if ((rv = netsim_fault_loss_all(sim, 0.002, 1)) != 0 ||
      (rv = netsim_fault_link_down(sim, info.uplink_first + 32,
                                   100 * NETSIM_US)) != 0 ||
      (rv = netsim_fault_link_up(sim, info.uplink_first + 32,
                                 250 * NETSIM_US)) != 0 ||
      (rv = netsim_fault_degrade(sim, info.uplink_first + 40, NETSIM_GBPS(25),
                                 50 * NETSIM_US)) != 0) {
    goto out;
  }
  for (i = 0; i < 4; ++i) {
    ids[i] = info.uplink_first + 32 + 2 * i;
  }
  if ((rv = netsim_sampler_new(&smp, sim, ids, 4, 0, 10 * NETSIM_US, 30)) !=
      0) {
    goto out;
  }
  netsim_sim_run_until(sim, 400 * NETSIM_US);
  res->hash = netsim_sim_trace_hash(sim);
  netsim_sim_get_stats(sim, &res->st);
  res->samples = 0;
  for (i = 0; i < netsim_sampler_count(smp); ++i) {
    res->samples = res->samples * 31 + netsim_sampler_bytes(smp, i, 0) +
                   netsim_sampler_bytes(smp, i, 3);
  }
  res->flow_delivered = 0;
  for (i = 0; i < netsim_traffic_n_flows(tr); ++i) {
    netsim_flow_stats fs;
    netsim_traffic_flow_stats(tr, i, &fs);
    res->flow_delivered += fs.delivered * (i + 1);
  }
out:
  netsim_sampler_del(smp);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
  return rv;
}

static void test_sim_determinism(void **state) {
  uint64_t seed = tu_seed("test_sim_determinism");
  result a, b, c;

  (void)state;
  memset(&a, 0, sizeof(a));
  memset(&b, 0, sizeof(b));
  memset(&c, 0, sizeof(c));
  NS_OK(scenario(NULL, seed, &a));
  NS_OK(scenario(NULL, seed, &b));
  NS_OK(scenario(NULL, seed + 1, &c));
  print_message("trace hash %016llx, %llu events, %llu hops, %llu drops\n",
                (unsigned long long)a.hash, (unsigned long long)a.st.events,
                (unsigned long long)a.st.hops,
                (unsigned long long)(a.st.drops[NETSIM_DROP_QUEUE] +
                                     a.st.drops[NETSIM_DROP_LOSS] +
                                     a.st.drops[NETSIM_DROP_LINK_DOWN]));
  /* The scenario exercises what it should. */
  tu_assert(a.st.hops > 10000);
  tu_assert(a.st.drops[NETSIM_DROP_LOSS] > 0);
  tu_assert(a.st.ecn_marked > 0);
  tu_assert(a.st.reroutes == 2);
  /* Same seed: the same run, event for event. */
  tu_assert(a.hash == b.hash);
  tu_assert(memcmp(&a.st, &b.st, sizeof(a.st)) == 0);
  tu_assert(a.samples == b.samples);
  tu_assert(a.flow_delivered == b.flow_delivered);
  /* Another seed: another run. */
  tu_assert(a.hash != c.hash);
}

static void test_sim_streams_per_component(void **state) {
  uint64_t seed = tu_seed("test_sim_streams_per_component");
  netsim_linkcfg c;
  netsim_sim *sim[2];
  ns_rec rec[2];
  netsim_rng r1, r2;
  int k;
  uint32_t i;

  (void)state;
  netsim_linkcfg_default(&c);
  c.queue_bytes = 100000000;
  /* Two networks; the second has an extra switch and cable at the end. */
  for (k = 0; k < 2; ++k) {
    netsim_switch *sw;
    sim[k] = ns_sim(seed);
    NS_OK(netsim_sim_add_host(sim[k], NULL));
    NS_OK(netsim_sim_add_host(sim[k], NULL));
    NS_OK(netsim_sim_add_switch(sim[k], 3, &sw));
    if (k == 1) {
      NS_OK(netsim_sim_add_switch(sim[k], 1, NULL));
    }
    NS_OK(netsim_sim_connect(sim[k], 0, 0, 2, 0, &c, &c, NULL));
    NS_OK(netsim_sim_connect(sim[k], 1, 0, 2, 1, &c, &c, NULL));
    if (k == 1) {
      NS_OK(netsim_sim_connect(sim[k], 3, 0, 2, 2, &c, &c, NULL));
    }
    NS_OK(netsim_sim_build_routes(sim[k]));
    NS_OK(netsim_link_set_loss(netsim_sim_link(sim[k], 0), 0.5));
    ns_rec_init(&rec[k], 2000);
    netsim_host_set_rx(netsim_sim_host(sim[k], 1), ns_rec_cb, &rec[k]);
    for (i = 0; i < 2000; ++i) {
      NS_OK(ns_send(sim[k], 0, 1, (uint16_t)i, 100, i));
    }
    netsim_sim_run_until(sim[k], NETSIM_MS);
  }
  /* The switch's seed and the link's loss pattern did not move. */
  tu_assert(netsim_switch_seed(netsim_sim_switch(sim[0], 0)) ==
            netsim_switch_seed(netsim_sim_switch(sim[1], 0)));
  tu_assert(rec[0].n == rec[1].n);
  tu_assert(rec[0].n > 800 && rec[0].n < 1200);
  tu_assert(memcmp(rec[0].tag, rec[1].tag, rec[0].n * sizeof(uint64_t)) == 0);
  for (k = 0; k < 2; ++k) {
    ns_rec_fini(&rec[k]);
    netsim_sim_del(sim[k]);
  }
  /* Streams differ by class, by id and by master seed. */
  netsim_rng_init(&r1, seed, NETSIM_STREAM_LINK, 5);
  netsim_rng_init(&r2, seed, NETSIM_STREAM_SWITCH, 5);
  tu_assert(netsim_rng_next(&r1) != netsim_rng_next(&r2));
  netsim_rng_init(&r1, seed, NETSIM_STREAM_LINK, 5);
  netsim_rng_init(&r2, seed, NETSIM_STREAM_LINK, 6);
  tu_assert(netsim_rng_next(&r1) != netsim_rng_next(&r2));
  netsim_rng_init(&r1, seed, NETSIM_STREAM_LINK, 5);
  netsim_rng_init(&r2, seed ^ 1, NETSIM_STREAM_LINK, 5);
  tu_assert(netsim_rng_next(&r1) != netsim_rng_next(&r2));
  assert_int_equal(netsim_rng_threshold(0.0), 0);
  assert_int_equal(netsim_rng_threshold(-1.0), 0);
  assert_int_equal(netsim_rng_threshold(1.0), UINT64_MAX);
  assert_int_equal(netsim_rng_threshold(0.5), 1ULL << 63);
  for (i = 0; i < 1000; ++i) {
    tu_assert(netsim_rng_below(&r1, 7) < 7);
  }
}

static void test_sim_failmalloc(void **state) {
  fm f = {0, -1, 0};
  netsim_mem mem = {&f, fm_malloc, fm_free, fm_calloc};
  long total, i, nomem = 0;
  result ref, res;

  (void)state;
  NS_OK(scenario(&mem, 11, &ref));
  assert_int_equal(f.live, 0);
  total = f.n;
  print_message("the scenario makes %ld allocations\n", total);
  assert_true(total > 100);
  for (i = 0; i < total; ++i) {
    int rv;
    f.n = 0;
    f.fail_at = i;
    f.live = 0;
    memset(&res, 0, sizeof(res));
    rv = scenario(&mem, 11, &res);
    assert_int_equal(f.live, 0);
    if (rv != 0) {
      assert_int_equal(rv, NETSIM_ERR_NOMEM);
      ++nomem;
    }
  }
  /* Setup allocations fail cleanly; later ones (routing recomputed after
     the fault) are absorbed and the run completes. */
  assert_true(nomem > 100);
  assert_true(nomem < total);
}

static void test_sim_settings(void **state) {
  netsim_settings s;
  netsim_sim *sim = NULL;

  (void)state;
  netsim_settings_default(&s);
  s.max_pkts = 0;
  assert_int_equal(netsim_sim_new(&sim, &s, NULL), NETSIM_ERR_INVAL);
  netsim_settings_default(&s);
  s.max_hops = 0;
  assert_int_equal(netsim_sim_new(&sim, &s, NULL), NETSIM_ERR_INVAL);
  netsim_settings_default(&s);
  s.payload_max = 100;
  assert_int_equal(netsim_sim_new(&sim, &s, NULL), NETSIM_ERR_INVAL);
  netsim_settings_default(&s);
  s.seed = 99;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  assert_int_equal(netsim_sim_seed(sim), 99);
  assert_int_equal(netsim_sim_now(sim), 0);
  assert_null(netsim_sim_host(sim, 0));
  assert_null(netsim_sim_switch(sim, 0));
  assert_null(netsim_sim_link(sim, 0));
  assert_int_equal(netsim_sim_count_paths(sim, 0, 0), 0);
  netsim_sim_del(sim);
  netsim_sim_del(NULL);
  assert_string_equal(netsim_strerror(NETSIM_ERR_NOMEM), "out of memory");
  assert_string_equal(netsim_strerror(NETSIM_ERR_POOL), "pool exhausted");
  assert_string_equal(netsim_strerror(12345), "unknown error");
  assert_string_equal(netsim_strerror(0), "success");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sim_determinism),
      cmocka_unit_test(test_sim_streams_per_component),
      cmocka_unit_test(test_sim_failmalloc),
      cmocka_unit_test(test_sim_settings),
  };
  return cmocka_run_group_tests_name("netsim_sim", tests, NULL, NULL);
}
