/*
 * test_tcp.c: the TCP model (transports/sim/sim_tcp.c) between two hosts
 * over netsim, with exact drops: bulk goodput, SACK fast retransmit, the
 * tail-loss RTO and its tunable floor, head-of-line blocking, the SYN's
 * initial RTO, delayed ACKs, DCTCP under ECN marking, corrupted packets
 * dropped by the checksum and repaired as losses.
 */
#include "simtest.h"
#include "sim_tcp.h"

#define MSS 8948u

typedef struct run {
  netsim_sim *sim;
  simx *x;
  st_app app;
  st_filter f;
  simx_msg m[8];
} run;

static void run_init(run *r, const sim_tcp_cfg *c, uint64_t path_bps) {
  simx_app app;

  memset(r, 0, sizeof(*r));
  r->sim = st_net(7, 1, NETSIM_GBPS(100), path_bps);
  app = st_app_init(&r->app, r->sim);
  ST_OK(sim_tcp_new(&r->x, r->sim, c, &app, NULL, 0));
}

static void run_fini(run *r) {
  simx_del(r->x);
  netsim_sim_del(r->sim);
}

/* Data segments are the large packets. */
static int is_data(const netsim_pkt *p) {
  return p->size > 200;
}

typedef struct nth {
  uint64_t want[4];
  uint32_t n_want;
  uint64_t seen;
} nth;

/* drop_nth_data drops the data segments numbered in |want| (from 0). */
static int drop_nth_data(void *arg, const netsim_pkt *p, uint64_t n) {
  nth *d = arg;
  uint32_t i;
  (void)n;
  if (!is_data(p)) {
    return 0;
  }
  for (i = 0; i < d->n_want; ++i) {
    if (d->want[i] == d->seen) {
      ++d->seen;
      return 1;
    }
  }
  ++d->seen;
  return 0;
}

static int drop_first(void *arg, const netsim_pkt *p, uint64_t n) {
  (void)arg;
  (void)p;
  return n == 0;
}

static void test_tcp_bulk(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_msg(&r.m[0], 0, 8u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 100 * NETSIM_MS);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(r.app.sent, 1);
  assert_int_equal(r.app.progress_bytes, 8u << 20);
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(k.timeouts, 0);
  /* 8 MiB at 100 Gb/s is 671 us on the wire (plus headers, a handshake
     and slow start from ten segments). */
  assert_true(r.m[0].t_read - r.m[0].t_post < 900 * NETSIM_US);
  assert_true(r.m[0].t_read > 671 * NETSIM_US);
  assert_true(r.m[0].t_sent > r.m[0].t_read);
  run_fini(&r);
}

static void test_tcp_fast_retransmit(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  nth d = {{20}, 1, 0};

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 1u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.f.dropped, 1);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.retransmits, 1);
  assert_int_equal(k.timeouts, 0);
  assert_int_equal(k.fast_recoveries, 1);
  /* Three SACKed segments mark the hole lost at once: repaired in about
     one RTT, far from any timer. */
  assert_true(r.m[0].t_read < 300 * NETSIM_US);
  assert_true(r.m[0].t_read > r.m[0].t_arrive ||
              r.m[0].t_read == r.m[0].t_arrive);
  run_fini(&r);
}

/* A message of three segments whose last segment is lost: nothing
   follows it, one segment is outstanding, so only the RTO repairs it. */
static netsim_time tail_loss_latency(netsim_time rto_min, uint64_t *timeouts) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  nth d = {{2}, 1, 0};
  netsim_time lat;

  sim_tcp_cfg_default(&c);
  c.rto_min = rto_min;
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 3 * MSS, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 2 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.retransmits, 1);
  *timeouts = k.timeouts;
  lat = r.m[0].t_read - r.m[0].t_post;
  run_fini(&r);
  return lat;
}

static void test_tcp_tail_loss_rto(void **state) {
  uint64_t to;
  netsim_time lat;

  (void)state;
  lat = tail_loss_latency(200 * NETSIM_MS, &to);
  assert_int_equal(to, 1);
  assert_true(lat >= 200 * NETSIM_MS && lat < 201 * NETSIM_MS);
  /* The tunable floor of "tuned" datacenter TCP. */
  lat = tail_loss_latency(1 * NETSIM_MS, &to);
  assert_int_equal(to, 1);
  assert_true(lat >= 1 * NETSIM_MS && lat < 2 * NETSIM_MS);
}

static void test_tcp_hol_blocking(void **state) {
  sim_tcp_cfg c;
  run r;
  nth d = {{0}, 1, 0};

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 3 * MSS, 0);
  st_msg(&r.m[1], 1, MSS, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  ST_OK(simx_post(r.x, &r.m[1]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  assert_int_equal(r.app.readable, 2);
  /* B arrived whole while A had a hole, and waited for A. */
  assert_true(r.m[1].t_arrive < r.m[0].t_arrive);
  assert_true(r.m[1].t_read == r.m[0].t_read);
  assert_true(r.m[1].t_read > r.m[1].t_arrive);
  assert_int_equal(r.app.order[0], 0);
  assert_int_equal(r.app.order[1], 1);
  run_fini(&r);
}

static void test_tcp_syn_lost(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_first, NULL);
  st_msg(&r.m[0], 0, 1000, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 3 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.timeouts, 1);
  /* The initial RTO: 1 s. */
  assert_true(r.m[0].t_read >= 1 * NETSIM_S);
  assert_true(r.m[0].t_read < 1 * NETSIM_S + 100 * NETSIM_US);
  run_fini(&r);
}

/* A corrupted segment (in the payload, or in the header) fails the
   checksum: dropped, counted, and repaired exactly as the lost segment of
   test_tcp_fast_retransmit; a corrupted SYN costs the initial RTO. */
static void test_tcp_corrupt(void **state) {
  static const int flips[2] = {-1, 3};
  sim_tcp_cfg c;
  simx_counters k;
  st_marker mk;
  uint32_t i;
  run r;

  (void)state;
  for (i = 0; i < 2; ++i) {
    nth d = {{20}, 1, 0};
    sim_tcp_cfg_default(&c);
    run_init(&r, &c, NETSIM_GBPS(100));
    st_marker_install(r.sim, 1, &mk, drop_nth_data, &d, flips[i]);
    st_msg(&r.m[0], 0, 1u << 20, 0);
    ST_OK(simx_post(r.x, &r.m[0]));
    netsim_sim_run_until(r.sim, 1 * NETSIM_S);
    simx_counters_get(r.x, &k);
    assert_int_equal(mk.marked, 1);
    assert_int_equal(k.corrupt_rx, 1);
    assert_int_equal(k.corrupt_in_hdr, flips[i] >= 0);
    assert_int_equal(k.corrupt_dropped, 1);
    assert_int_equal(k.corrupt_other + k.corrupt_accepted, 0);
    assert_int_equal(r.app.readable, 1);
    assert_int_equal(r.app.progress_bytes, 1u << 20);
    assert_int_equal(k.retransmits, 1);
    assert_int_equal(k.fast_recoveries, 1);
    assert_int_equal(k.timeouts, 0);
    assert_true(r.m[0].t_read < 300 * NETSIM_US);
    run_fini(&r);
  }
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_marker_install(r.sim, 1, &mk, drop_first, NULL, -1);
  st_msg(&r.m[0], 0, 1000, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 3 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(k.corrupt_dropped, 1);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.timeouts, 1);
  assert_true(r.m[0].t_read >= 1 * NETSIM_S);
  run_fini(&r);
}

static void test_tcp_delayed_ack(void **state) {
  sim_tcp_cfg c;
  run r;

  (void)state;
  sim_tcp_cfg_default(&c);
  c.delayed_ack = 1;
  c.quickack = 0;
  c.handshake = 0;
  run_init(&r, &c, NETSIM_GBPS(100));
  st_msg(&r.m[0], 0, 1000, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  assert_int_equal(r.app.sent, 1);
  /* Readable at once; acknowledged only when the 40 ms timer fires. */
  assert_true(r.m[0].t_read < 10 * NETSIM_US);
  assert_true(r.m[0].t_sent >= 40 * NETSIM_MS);
  assert_true(r.m[0].t_sent < 41 * NETSIM_MS);
  run_fini(&r);
}

/* DCTCP against NewReno through a 10 Gb/s bottleneck that marks ECT
   packets above 30 KB: DCTCP keeps the queue near the threshold and drops
   nothing; NewReno fills the 200 KB buffer until it drops. */
static void dctcp_run(int cc, netsim_sim_stats *st, double *alpha,
                      uint64_t *maxq) {
  sim_tcp_cfg c;
  netsim_settings s;
  netsim_dumbbell_settings d;
  netsim_sim *sim = NULL;
  simx *x = NULL;
  st_app a;
  simx_app app;
  simx_msg m;
  sim_tcp_conn_info ci;
  netsim_link_stats ls;
  netsim_topo_info info;

  netsim_settings_default(&s);
  s.payload_max = 128;
  s.max_payloads = s.max_pkts;
  ST_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_dumbbell_settings_default(&d, 1);
  d.path.rate_bps = NETSIM_GBPS(10);
  d.path.ecn_bytes = 30000;
  ST_OK(netsim_topo_dumbbell(sim, &d, &info));
  sim_tcp_cfg_default(&c);
  c.cc = cc;
  c.ecn = cc == SIM_TCP_CC_DCTCP;
  app = st_app_init(&a, sim);
  ST_OK(sim_tcp_new(&x, sim, &c, &app, NULL, 0));
  st_msg(&m, 0, 20u << 20, 0);
  ST_OK(simx_post(x, &m));
  netsim_sim_run_until(sim, 100 * NETSIM_MS);
  assert_int_equal(a.readable, 1);
  netsim_sim_get_stats(sim, st);
  ST_OK(sim_tcp_conn_get(x, 0, &ci));
  *alpha = ci.alpha;
  netsim_link_get_stats(netsim_sim_link(sim, info.uplink_first), &ls);
  *maxq = ls.max_q_bytes;
  simx_del(x);
  netsim_sim_del(sim);
}

static void test_tcp_dctcp(void **state) {
  netsim_sim_stats st;
  double alpha;
  uint64_t maxq;

  (void)state;
  dctcp_run(SIM_TCP_CC_DCTCP, &st, &alpha, &maxq);
  assert_true(st.ecn_marked > 0);
  assert_int_equal(st.drops[NETSIM_DROP_QUEUE], 0);
  assert_true(alpha > 0.0 && alpha < 1.0);
  assert_true(maxq < 150000);
  dctcp_run(SIM_TCP_CC_RENO, &st, &alpha, &maxq);
  assert_int_equal(st.ecn_marked, 0);
  assert_true(st.drops[NETSIM_DROP_QUEUE] > 0);
  assert_true(maxq > 190000);
}

static void test_tcp_flowkey(void **state) {
  sim_tcp_cfg c;
  netsim_flowkey a, b, a2;

  (void)state;
  sim_tcp_cfg_default(&c);
  sim_tcp_flowkey(&c, 3, 9, 0, &a);
  sim_tcp_flowkey(&c, 3, 9, 0, &a2);
  sim_tcp_flowkey(&c, 3, 9, 1, &b);
  assert_memory_equal(&a, &a2, sizeof(a));
  assert_int_equal(a.src, NETSIM_ADDR_BASE + 3);
  assert_int_equal(a.dst, NETSIM_ADDR_BASE + 9);
  assert_int_equal(a.proto, 6);
  assert_int_equal(a.dport, 5001);
  assert_true(a.sport >= 32768 && a.sport < 61000);
  assert_true(a.sport != b.sport);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcp_bulk),
      cmocka_unit_test(test_tcp_fast_retransmit),
      cmocka_unit_test(test_tcp_tail_loss_rto),
      cmocka_unit_test(test_tcp_hol_blocking),
      cmocka_unit_test(test_tcp_syn_lost),
      cmocka_unit_test(test_tcp_corrupt),
      cmocka_unit_test(test_tcp_delayed_ack),
      cmocka_unit_test(test_tcp_dctcp),
      cmocka_unit_test(test_tcp_flowkey),
  };
  return cmocka_run_group_tests_name("sim_tcp", tests, NULL, NULL);
}
