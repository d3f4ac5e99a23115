/*
 * test_pkt.c: the packet pool: allocation hands out zeroed packets,
 * exhaustion is a clean NETSIM_ERR_POOL (for packets and for payload
 * buffers), freeing returns both, payloads are bounded by payload_max,
 * short payloads travel inline (and move to a pool buffer when they grow),
 * and a simulation whose pool runs dry keeps running.
 */
#include "nstest.h"

static void test_pkt_alloc_free(void **state) {
  netsim_pktpool *pool = NULL;
  netsim_pkt *p[8];
  int i;

  (void)state;
  NS_OK(netsim_pktpool_new(&pool, 8, 0, 0, NULL));
  assert_int_equal(netsim_pktpool_in_use(pool), 0);
  for (i = 0; i < 8; ++i) {
    NS_OK(netsim_pkt_alloc(pool, &p[i]));
    assert_int_equal(p[i]->size, 0);
    assert_int_equal(p[i]->hops, 0);
    assert_null(p[i]->payload);
    assert_null(p[i]->next);
    p[i]->size = 100 + i;
    p[i]->tag = i;
  }
  assert_int_equal(netsim_pktpool_in_use(pool), 8);
  for (i = 0; i < 8; ++i) {
    assert_int_equal(p[i]->tag, i);
  }
  netsim_pkt_free(pool, p[3]);
  NS_OK(netsim_pkt_alloc(pool, &p[3]));
  /* Reused, and zeroed again. */
  assert_int_equal(p[3]->size, 0);
  assert_int_equal(p[3]->tag, 0);
  for (i = 0; i < 8; ++i) {
    netsim_pkt_free(pool, p[i]);
  }
  assert_int_equal(netsim_pktpool_in_use(pool), 0);
  netsim_pktpool_del(pool);
}

static void test_pkt_pool_exhaustion(void **state) {
  netsim_pktpool *pool = NULL;
  netsim_pkt *p[5], *extra = NULL;
  int i;

  (void)state;
  NS_OK(netsim_pktpool_new(&pool, 5, 0, 0, NULL));
  for (i = 0; i < 5; ++i) {
    NS_OK(netsim_pkt_alloc(pool, &p[i]));
  }
  assert_int_equal(netsim_pkt_alloc(pool, &extra), NETSIM_ERR_POOL);
  assert_null(extra);
  assert_int_equal(netsim_pkt_alloc(pool, &extra), NETSIM_ERR_POOL);
  netsim_pkt_free(pool, p[0]);
  NS_OK(netsim_pkt_alloc(pool, &extra));
  assert_ptr_equal(extra, p[0]);
  netsim_pkt_free(pool, extra);
  for (i = 1; i < 5; ++i) {
    netsim_pkt_free(pool, p[i]);
  }
  netsim_pktpool_del(pool);

  /* An empty pool is legal and always exhausted. */
  NS_OK(netsim_pktpool_new(&pool, 0, 0, 0, NULL));
  assert_int_equal(netsim_pkt_alloc(pool, &extra), NETSIM_ERR_POOL);
  netsim_pktpool_del(pool);
}

static void test_pkt_payload(void **state) {
  netsim_pktpool *pool = NULL;
  netsim_pkt *a, *b, *c;
  uint8_t *buf, *buf2;

  (void)state;
  assert_int_equal(netsim_pktpool_new(&pool, 4, 9216, 0, NULL),
                   NETSIM_ERR_INVAL);
  NS_OK(netsim_pktpool_new(&pool, 4, 9216, 2, NULL));
  NS_OK(netsim_pkt_alloc(pool, &a));
  NS_OK(netsim_pkt_alloc(pool, &b));
  NS_OK(netsim_pkt_alloc(pool, &c));
  assert_int_equal(netsim_pkt_payload(pool, a, 9217, &buf), NETSIM_ERR_INVAL);
  NS_OK(netsim_pkt_payload(pool, a, 9216, &buf));
  memset(buf, 0xAB, 9216);
  assert_ptr_equal(a->payload, buf);
  assert_int_equal(a->payload_len, 9216);
  /* A second call keeps the buffer and changes the length. */
  NS_OK(netsim_pkt_payload(pool, a, 100, &buf2));
  assert_ptr_equal(buf, buf2);
  assert_int_equal(a->payload_len, 100);
  NS_OK(netsim_pkt_payload(pool, b, NETSIM_PKT_INLINE + 1, &buf2));
  assert_ptr_not_equal(buf, buf2);
  /* Two buffers only. */
  assert_int_equal(netsim_pkt_payload(pool, c, NETSIM_PKT_INLINE + 1, &buf2),
                   NETSIM_ERR_POOL);
  assert_null(c->payload);
  /* A short payload needs no buffer: it travels in the packet. */
  NS_OK(netsim_pkt_payload(pool, c, NETSIM_PKT_INLINE, &buf2));
  assert_ptr_equal(buf2, c->inl);
  assert_int_equal(c->payload_len, NETSIM_PKT_INLINE);
  memset(buf2, 0x5A, NETSIM_PKT_INLINE);
  /* Freeing a packet frees its buffer; a payload that outgrows the packet
     moves, bytes and all, to a pool buffer. */
  netsim_pkt_free(pool, a);
  NS_OK(netsim_pkt_payload(pool, c, 200, &buf2));
  assert_ptr_equal(buf2, buf);
  assert_ptr_equal(c->payload, buf);
  assert_int_equal(c->payload_len, 200);
  assert_int_equal(buf2[0], 0x5A);
  assert_int_equal(buf2[NETSIM_PKT_INLINE - 1], 0x5A);
  /* ...and keeps it when it shrinks again. */
  NS_OK(netsim_pkt_payload(pool, c, 10, &buf2));
  assert_ptr_equal(buf2, buf);
  netsim_pkt_free(pool, b);
  netsim_pkt_free(pool, c);
  assert_int_equal(netsim_pktpool_in_use(pool), 0);
  netsim_pktpool_del(pool);

  /* A pool without payload buffers still carries short payloads. */
  NS_OK(netsim_pktpool_new(&pool, 1, 0, 0, NULL));
  NS_OK(netsim_pkt_alloc(pool, &a));
  NS_OK(netsim_pkt_payload(pool, a, 16, &buf));
  assert_ptr_equal(buf, a->inl);
  assert_int_equal(netsim_pkt_payload(pool, a, NETSIM_PKT_INLINE + 1, &buf),
                   NETSIM_ERR_INVAL);
  netsim_pkt_free(pool, a);
  netsim_pktpool_del(pool);
}

static void test_pkt_sim_pool_runs_dry(void **state) {
  netsim_settings s;
  netsim_fattree_settings ft;
  netsim_flow_settings fl;
  netsim_sim *sim = NULL;
  netsim_traffic *tr = NULL;
  netsim_sim_stats st;
  uint64_t no_pkt = 0, delivered = 0;
  uint32_t i;

  (void)state;
  /* 16 hosts that want 64 packets each in flight, and 40 packets. */
  netsim_settings_default(&s);
  s.max_pkts = 40;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_fattree_settings_default(&ft, 4);
  NS_OK(netsim_topo_fattree(sim, &ft, NULL));
  NS_OK(netsim_traffic_new(&tr, sim, 16));
  netsim_flow_settings_default(&fl);
  fl.window = 64;
  fl.retry = 2 * NETSIM_US;
  NS_OK(netsim_traffic_permutation(tr, &fl, 0));
  netsim_sim_run_until(sim, 200 * NETSIM_US);
  netsim_sim_get_stats(sim, &st);
  assert_true(st.pkts_in_use <= 40);
  for (i = 0; i < 16; ++i) {
    netsim_flow_stats fs;
    NS_OK(netsim_traffic_flow_stats(tr, i, &fs));
    no_pkt += fs.no_pkt;
    delivered += fs.delivered;
  }
  /* The sources hit the empty pool, counted it, and traffic still flowed
     with the packets there were. */
  assert_true(no_pkt > 0);
  assert_true(delivered > 1000);
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pkt_alloc_free),
      cmocka_unit_test(test_pkt_pool_exhaustion),
      cmocka_unit_test(test_pkt_payload),
      cmocka_unit_test(test_pkt_sim_pool_runs_dry),
  };
  return cmocka_run_group_tests_name("netsim_pkt", tests, NULL, NULL);
}
