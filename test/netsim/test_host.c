/*
 * test_host.c: hosts as a transport sees them: send, the receive callback
 * and its ownership of the packet, payloads carried byte for byte, timers
 * on the event list, replying with the received packet, NIC pacing, the
 * tap, send jitter, and errors.
 */
#include "nstest.h"

typedef struct rx_ctx {
  int calls;
  uint8_t payload[9000];
  uint32_t payload_len;
  netsim_flowkey key;
  uint64_t tag;
  uint32_t flow;
  netsim_host *host;
} rx_ctx;

static void rx_keep(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt,
                    void *user) {
  rx_ctx *c = user;

  ++c->calls;
  c->host = host;
  c->key = pkt->key;
  c->tag = pkt->tag;
  c->flow = pkt->flow;
  c->payload_len = pkt->payload_len;
  if (pkt->payload) {
    memcpy(c->payload, pkt->payload, pkt->payload_len);
  }
  netsim_sim_pkt_free(sim, pkt);
}

static void test_host_send_receive(void **state) {
  netsim_linkcfg c;
  netsim_settings s;
  netsim_sim *sim = NULL;
  netsim_switch *sw;
  netsim_pkt *p;
  uint8_t *buf, want[9000];
  netsim_sim_stats st;
  rx_ctx ctx;
  uint32_t i;

  (void)state;
  memset(&ctx, 0, sizeof(ctx));
  netsim_settings_default(&s);
  s.payload_max = 9000;
  s.max_payloads = 4;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_linkcfg_default(&c);
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_switch(sim, 2, &sw));
  NS_OK(netsim_sim_connect(sim, 0, 0, 2, 0, &c, &c, NULL));
  NS_OK(netsim_sim_connect(sim, 1, 0, 2, 1, &c, &c, NULL));
  NS_OK(netsim_sim_build_routes(sim));
  netsim_host_set_rx(netsim_sim_host(sim, 1), rx_keep, &ctx);

  p = ns_pkt(sim, 0, 1, 55555, 9100);
  p->tag = 0x1122334455667788ULL;
  p->flow = 42;
  NS_OK(netsim_pkt_payload(netsim_sim_pool(sim), p, 9000, &buf));
  for (i = 0; i < 9000; ++i) {
    want[i] = (uint8_t)(i * 7 + 3);
  }
  memcpy(buf, want, 9000);
  NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 0), p));
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(ctx.calls, 1);
  assert_ptr_equal(ctx.host, netsim_sim_host(sim, 1));
  assert_int_equal(ctx.key.src, NETSIM_ADDR_BASE);
  assert_int_equal(ctx.key.dst, NETSIM_ADDR_BASE + 1);
  assert_int_equal(ctx.key.sport, 55555);
  assert_int_equal(ctx.key.dport, 4791);
  assert_int_equal(ctx.key.proto, 17);
  assert_int_equal(ctx.tag, 0x1122334455667788ULL);
  assert_int_equal(ctx.flow, 42);
  assert_int_equal(ctx.payload_len, 9000);
  assert_memory_equal(ctx.payload, want, 9000);
  assert_int_equal(netsim_host_rx_pkts(netsim_sim_host(sim, 1)), 1);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.sent, 1);
  assert_int_equal(st.delivered, 1);
  assert_int_equal(st.delivered_bytes, 9100);
  assert_int_equal(st.hops, 2);
  assert_int_equal(st.pkts_in_use, 0);

  /* Without a callback, packets are counted and freed. */
  netsim_host_set_rx(netsim_sim_host(sim, 1), NULL, NULL);
  NS_OK(ns_send(sim, 0, 1, 1, 100, 0));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  assert_int_equal(netsim_host_rx_pkts(netsim_sim_host(sim, 1)), 2);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.pkts_in_use, 0);
  netsim_sim_del(sim);
}

/* A host timer that sends one packet when it fires. */
static void send_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                       uint64_t arg) {
  netsim_sim *sim = ctx;

  (void)evl;
  (void)tm;
  NS_OK(ns_send(sim, 0, 1, 1, 1000, arg));
}

static void test_host_timer(void **state) {
  netsim_linkcfg c;
  netsim_sim *sim;
  netsim_timer tm;
  ns_rec rec;

  (void)state;
  netsim_linkcfg_default(&c);
  sim = ns_line(1, &c, &c);
  ns_rec_init(&rec, 8);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  netsim_timer_init(&tm, send_timer, sim, 77);
  NS_OK(netsim_evl_timer_set(netsim_sim_evl(sim), &tm, 5 * NETSIM_US));
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(rec.n, 1);
  assert_int_equal(rec.tag[0], 77);
  assert_int_equal(rec.t[0], 5 * NETSIM_US + 2 * (80000 + NETSIM_US));
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

/* pong sends every packet back where it came from, the same packet. */
static int bounces;
static netsim_time last_back;

static void pong(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt,
                 void *user) {
  netsim_addr a = pkt->key.src;

  (void)user;
  if (netsim_host_index(host) == 0) {
    last_back = netsim_sim_now(sim);
    if (++bounces == 100) {
      netsim_sim_pkt_free(sim, pkt);
      return;
    }
  }
  pkt->key.src = pkt->key.dst;
  pkt->key.dst = a;
  NS_OK(netsim_host_send(sim, host, pkt));
}

static void test_host_reply_with_same_packet(void **state) {
  netsim_linkcfg c;
  netsim_sim *sim;
  netsim_sim_stats st;

  (void)state;
  netsim_linkcfg_default(&c);
  c.delay = 3 * NETSIM_US;
  sim = ns_line(1, &c, &c);
  netsim_host_set_rx(netsim_sim_host(sim, 0), pong, NULL);
  netsim_host_set_rx(netsim_sim_host(sim, 1), pong, NULL);
  bounces = 0;
  NS_OK(ns_send(sim, 0, 1, 1, 1500, 0));
  netsim_sim_run_until(sim, NETSIM_S);
  assert_int_equal(bounces, 100);
  /* 100 round trips of four 1500-byte hops. */
  assert_int_equal(last_back, 100 * 4 * (120000 + 3 * NETSIM_US));
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.sent, 200);
  assert_int_equal(st.pkts_in_use, 0);
  netsim_sim_del(sim);
}

static void tap_count(netsim_sim *sim, const netsim_pkt *pkt,
                      const netsim_link *link, void *user) {
  (void)sim;
  (void)pkt;
  (void)link;
  ++*(int *)user;
}

static void test_host_pacing_tap_errors(void **state) {
  netsim_linkcfg c;
  netsim_sim *sim;
  netsim_sim_stats st;
  netsim_pkt *p;
  int taps = 0;

  (void)state;
  netsim_linkcfg_default(&c);
  sim = ns_line(1, &c, &c);
  netsim_sim_set_tap(sim, tap_count, &taps);
  assert_int_equal(netsim_host_tx_free_at(netsim_sim_host(sim, 0)), 0);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  assert_int_equal(netsim_host_tx_free_at(netsim_sim_host(sim, 0)), 240000);
  /* A packet of size 0 is refused and freed. */
  p = ns_pkt(sim, 0, 1, 1, 0);
  assert_int_equal(netsim_host_send(sim, netsim_sim_host(sim, 0), p),
                   NETSIM_ERR_INVAL);
  /* A packet to nowhere dies at the switch. */
  NS_OK(ns_send(sim, 0, 7, 1, 1000, 0));
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(netsim_host_tx_free_at(netsim_sim_host(sim, 0)), NETSIM_MS);
  netsim_sim_get_stats(sim, &st);
  assert_int_equal(st.drops[NETSIM_DROP_NO_ROUTE], 1);
  assert_int_equal(st.delivered, 3);
  assert_int_equal(taps, 3 * 2 + 1);
  assert_int_equal(st.pkts_in_use, 0);
  netsim_sim_set_tap(sim, NULL, NULL);
  netsim_sim_del(sim);
}

/* jitter_run sends |n| 1000-byte packets from host 0 (a burst of n / 2 at
   once, then one every 3 us) with send jitter |j| on host 0's NIC, and
   records their arrival at host 1 in |rec|.  Returns host 0's
   tx_free_at just after the burst. */
static netsim_time jitter_run(uint64_t seed, netsim_time j, uint32_t n,
                              ns_rec *rec) {
  netsim_linkcfg c;
  netsim_sim *sim;
  netsim_time free_at;
  uint32_t i;

  netsim_linkcfg_default(&c);
  sim = ns_line(seed, &c, &c);
  NS_OK(netsim_host_set_tx_jitter(netsim_sim_host(sim, 0), j));
  ns_rec_init(rec, n);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, rec);
  for (i = 0; i < n / 2; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  free_at = netsim_host_tx_free_at(netsim_sim_host(sim, 0));
  for (; i < n; ++i) {
    netsim_sim_run_until(sim, (netsim_time)i * 3 * NETSIM_US);
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_sim_run_until(sim, NETSIM_S);
  assert_int_equal(rec->n, n);
  netsim_sim_del(sim);
  return free_at;
}

/* Send jitter delays each packet by at most the jitter, never reorders a
   host's packets, leaves the NIC's pacing as it was, varies with the
   seed and repeats with it. */
static void test_host_tx_jitter(void **state) {
  const netsim_time j = 500 * NETSIM_NS;
  const uint32_t n = 256;
  uint64_t seed = tu_seed("test_host_tx_jitter");
  ns_rec base, a, b, other;
  netsim_time f0, f1;
  uint32_t i, moved = 0, diff = 0;
  netsim_sim *sim;

  (void)state;
  f0 = jitter_run(seed, 0, n, &base);
  f1 = jitter_run(seed, j, n, &a);
  (void)jitter_run(seed, j, n, &b);
  (void)jitter_run(seed + 1, j, n, &other);
  /* The NIC serialises as fast as ever: only arrivals move. */
  assert_int_equal(f0, f1);
  for (i = 0; i < n; ++i) {
    assert_int_equal(a.tag[i], i); /* in the order sent */
    assert_true(a.t[i] >= base.t[i]);
    assert_true(a.t[i] <= base.t[i] + j);
    assert_int_equal(a.t[i], b.t[i]); /* the same seed, the same times */
    moved += a.t[i] != base.t[i];
    diff += a.t[i] != other.t[i];
  }
  /* Uniform in [0, 500 ns]: nearly every spaced packet moves, and
     another seed moves them differently. */
  assert_true(moved > n / 4);
  assert_true(diff > n / 4);
  ns_rec_fini(&base);
  ns_rec_fini(&a);
  ns_rec_fini(&b);
  ns_rec_fini(&other);

  /* Errors: more than 1 ms; a host without a NIC. */
  sim = ns_sim(seed);
  NS_OK(netsim_sim_add_host(sim, NULL));
  assert_int_equal(netsim_host_set_tx_jitter(netsim_sim_host(sim, 0), 0),
                   NETSIM_ERR_STATE);
  assert_int_equal(
      netsim_host_set_tx_jitter(netsim_sim_host(sim, 0), NETSIM_MS + 1),
      NETSIM_ERR_INVAL);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_send_receive),
      cmocka_unit_test(test_host_timer),
      cmocka_unit_test(test_host_reply_with_same_packet),
      cmocka_unit_test(test_host_pacing_tap_errors),
      cmocka_unit_test(test_host_tx_jitter),
  };
  return cmocka_run_group_tests_name("netsim_host", tests, NULL, NULL);
}
