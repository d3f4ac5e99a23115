/*
 * test_tos.c: TCP over SRD (netsim/hosts/sim_tos.c) between two hosts
 * over netsim, with exact drops in front of the receiving host: every
 * message readable once and in posting order, losses repaired by the SRD
 * layer below TCP (TCP retransmits nothing, never times out: a lost SYN
 * costs microseconds, not TCP's 1 s initial RTO), traffic both ways at
 * once (TCP never re-entered from inside itself), the device queue's
 * backpressure, and the errors of the two layers named.
 */
#include "simtest.h"
#include "sim_tos.h"

#define N_MSGS 64

typedef struct run {
  netsim_sim *sim;
  simx *x;
  st_app app;
  st_filter f;
  simx_msg m[N_MSGS];
} run;

static void run_init(run *r, const sim_tos_cfg *c, uint32_t paths,
                     uint64_t path_bps) {
  simx_app app;

  memset(r, 0, sizeof(*r));
  r->sim = st_net(7, paths, NETSIM_GBPS(100), path_bps);
  app = st_app_init(&r->app, r->sim);
  ST_OK(sim_tos_new(&r->x, r->sim, c, &app, NULL, 0));
}

static void run_fini(run *r) {
  simx_del(r->x);
  netsim_sim_del(r->sim);
}

typedef struct every {
  uint64_t period;
  uint64_t seen;
} every;

/* drop_every drops every |period|-th data packet (SRD's large ones). */
static int drop_every(void *arg, const netsim_pkt *p, uint64_t n) {
  every *d = arg;

  (void)n;
  if (p->size < 1000) {
    return 0;
  }
  return ++d->seen % d->period == 0;
}

static int drop_first(void *arg, const netsim_pkt *p, uint64_t n) {
  (void)arg;
  (void)p;
  return n == 0;
}

/* Readable in posting order: the ids were posted 0, 1, 2, ... */
static void assert_in_order(const st_app *a, uint32_t n) {
  uint32_t i;

  assert_int_equal(a->readable, n);
  for (i = 0; i < n; ++i) {
    assert_int_equal(a->order[i], i);
  }
}

/* 64 messages of 256 KiB over 4 paths with every 40th data packet
   dropped at the receiver: all of it readable, once and in order, the
   losses repaired by SRD; TCP sends no segment twice. */
static void test_tos_loss_repaired_below(void **state) {
  sim_tos_cfg c;
  run r;
  every d = {40, 0};
  simx_counters k, s;
  uint32_t i;

  (void)state;
  sim_tos_cfg_default(&c);
  run_init(&r, &c, 4, NETSIM_GBPS(25));
  st_filter_install(r.sim, 1, &r.f, drop_every, &d);
  for (i = 0; i < N_MSGS; ++i) {
    st_msg(&r.m[i], i, 256u << 10, 0);
    ST_OK(simx_post(r.x, &r.m[i]));
  }
  netsim_sim_run_until(r.sim, 100 * NETSIM_MS);
  simx_counters_get(r.x, &k);
  sim_tos_srd_counters(r.x, &s);
  assert_in_order(&r.app, N_MSGS);
  assert_int_equal(r.app.sent, N_MSGS);
  assert_int_equal(r.app.errors, 0);
  assert_int_equal(r.app.progress_bytes, (uint64_t)N_MSGS << 18);
  assert_true(r.f.dropped > 50);
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(k.timeouts, 0);
  assert_int_equal(k.fast_recoveries, 0);
  assert_int_equal(k.probes, 0);
  assert_true(s.retransmits >= r.f.dropped);
  assert_int_equal(s.send_errors, 0);
  /* TCP's segments: 16 MiB in segments of 8140 bytes. */
  assert_int_equal(k.data_pkts, ((uint64_t)N_MSGS << 18) / 8140 + 1);
  /* 16 MiB over 4 x 25 Gb/s is 1.34 ms on the wire: sprayed, not pinned
     to one path (5.4 ms). */
  assert_true(r.m[N_MSGS - 1].t_read < 3 * NETSIM_MS);
  run_fini(&r);
}

/* The first packet host 1 receives dropped (the SRD layer's handshake
   request, which the SYN's message waits for): SRD retries it after its
   1 ms initial timeout and TCP never knows (plain TCP, its SYN lost,
   waits its 1 s initial RTO: test_tcp.c). */
static void test_tos_syn_lost(void **state) {
  sim_tos_cfg c;
  run r;
  simx_counters k, s;

  (void)state;
  sim_tos_cfg_default(&c);
  run_init(&r, &c, 1, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_first, NULL);
  st_msg(&r.m[0], 0, 1000, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 3 * NETSIM_S);
  simx_counters_get(r.x, &k);
  sim_tos_srd_counters(r.x, &s);
  assert_int_equal(r.f.dropped, 1);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.timeouts, 0);
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(s.send_errors, 0);
  assert_true(r.m[0].t_read > 1 * NETSIM_MS);
  assert_true(r.m[0].t_read < 2 * NETSIM_MS);
  run_fini(&r);
}

/* Messages of random sizes both ways at once (each host sends data and
   ACKs through its SRD layer while SRD delivers to it), every 25th data
   packet dropped at host 1: each direction readable in order, whole,
   with no TCP retransmission.  Seeded (tu_seed). */
static void test_tos_both_ways(void **state) {
  sim_tos_cfg c;
  run r;
  every d = {25, 0};
  simx_counters k;
  uint64_t seed = tu_seed("test_tos_both_ways"), total = 0, back = 0;
  uint32_t i, n_fwd = 0, n_back = 0;
  uint32_t fwd_order[N_MSGS], back_order[N_MSGS];

  (void)state;
  sim_tos_cfg_default(&c);
  run_init(&r, &c, 4, NETSIM_GBPS(25));
  st_filter_install(r.sim, 1, &r.f, drop_every, &d);
  for (i = 0; i < N_MSGS; ++i) {
    uint64_t bytes = 1 + tu_rand(&seed) % (300u << 10);
    st_msg(&r.m[i], i, bytes, 0);
    if (i % 2) {
      r.m[i].src = 1;
      r.m[i].dst = 0;
      back += bytes;
    }
    total += bytes;
    ST_OK(simx_post(r.x, &r.m[i]));
  }
  netsim_sim_run_until(r.sim, 200 * NETSIM_MS);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, N_MSGS);
  assert_int_equal(r.app.progress_bytes, total);
  assert_true(back > 0 && r.f.dropped > 0);
  for (i = 0; i < N_MSGS; ++i) {
    uint32_t id = r.app.order[i];
    if (id % 2) {
      back_order[n_back++] = id;
    } else {
      fwd_order[n_fwd++] = id;
    }
  }
  for (i = 0; i < n_fwd; ++i) {
    assert_int_equal(fwd_order[i], 2 * i);
  }
  for (i = 0; i < n_back; ++i) {
    assert_int_equal(back_order[i], 2 * i + 1);
  }
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(k.timeouts, 0);
  run_fini(&r);
}

/* The device queue: with room for one SRD message per host, TCP waits
   for each to be acknowledged before it hands down the next (one segment
   per SRD round trip: slower than with the default queue), and still
   delivers everything. */
static void test_tos_queue(void **state) {
  sim_tos_cfg c;
  run r;
  netsim_time t_deep, t_one;

  (void)state;
  sim_tos_cfg_default(&c);
  run_init(&r, &c, 1, NETSIM_GBPS(100));
  st_msg(&r.m[0], 0, 4u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  assert_int_equal(r.app.readable, 1);
  t_deep = r.m[0].t_read;
  run_fini(&r);

  c.queue = 1;
  run_init(&r, &c, 1, NETSIM_GBPS(100));
  st_msg(&r.m[0], 0, 4u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  assert_int_equal(r.app.readable, 1);
  t_one = r.m[0].t_read;
  run_fini(&r);
  /* 4 MiB is 336 us at 100 Gb/s; one 8 KiB segment per round trip of
     several microseconds is far slower. */
  assert_true(t_deep < 600 * NETSIM_US);
  assert_true(t_one > 3 * t_deep);
}

/* Errors name the layer: a host without a NIC fails TCP first. */
static void test_tos_host_without_nic(void **state) {
  netsim_sim *sim = st_net_unwired();
  sim_tos_cfg c;
  simx *x = NULL;
  st_app a;
  simx_app app = st_app_init(&a, sim);
  char err[256] = "";

  (void)state;
  sim_tos_cfg_default(&c);
  assert_int_equal(sim_tos_new(&x, sim, &c, &app, err, sizeof(err)),
                   NETSIM_ERR_INVAL);
  assert_null(x);
  assert_string_equal(err, "TCP: host 0 has no NIC (no link attached)");
  assert_int_equal(sim_tos_new(&x, sim, &c, &app, NULL, 0), NETSIM_ERR_INVAL);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tos_loss_repaired_below),
      cmocka_unit_test(test_tos_syn_lost),
      cmocka_unit_test(test_tos_both_ways),
      cmocka_unit_test(test_tos_queue),
      cmocka_unit_test(test_tos_host_without_nic),
  };
  return cmocka_run_group_tests_name("sim_tos", tests, NULL, NULL);
}
