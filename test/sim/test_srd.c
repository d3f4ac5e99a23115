/*
 * test_srd.c: the SRD engine in netsim hosts (transports/sim/sim_srd.c):
 * every message delivered once and matched to its record, the path index
 * carried as the UDP source port and fanned out by ECMP, one path pinned
 * to one link, loss repaired by the engine, ordered delivery, the pools
 * sized from the settings, corrupted packets handed to the engine and
 * what it made of them, late duplicates of every packet never delivered
 * twice.
 */
#include "simtest.h"
#include "sim_srd.h"

#define N_MSGS 64

typedef struct run {
  netsim_sim *sim;
  simx *x;
  st_app app;
  st_filter f;
  simx_msg m[N_MSGS];
  /* Source ports seen at host 1. */
  uint8_t sport_seen[65536];
} run;

static void run_init(run *r, const sim_srd_cfg *c, uint32_t paths) {
  simx_app app;

  memset(r, 0, sizeof(*r));
  r->sim = st_net(11, paths, NETSIM_GBPS(100), NETSIM_GBPS(100));
  app = st_app_init(&r->app, r->sim);
  ST_OK(sim_srd_new(&r->x, r->sim, c, &app, NULL, 0));
}

static void run_fini(run *r) {
  simx_del(r->x);
  netsim_sim_del(r->sim);
}

static void post_all(run *r, uint32_t n, uint64_t bytes) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    st_msg(&r->m[i], i, bytes, netsim_sim_now(r->sim));
    ST_OK(simx_post(r->x, &r->m[i]));
  }
}

static int count_sports(void *arg, const netsim_pkt *p, uint64_t n) {
  run *r = arg;
  (void)n;
  if (p->size > 1000) {
    r->sport_seen[p->key.sport] = 1;
  }
  return 0;
}

static uint32_t n_sports(const run *r) {
  uint32_t i, n = 0;

  for (i = 0; i < 65536; ++i) {
    n += r->sport_seen[i];
  }
  return n;
}

static void test_srd_messages(void **state) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  simx_counters k;
  uint32_t i;

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 64 * 1024;
  run_init(r, &c, 8);
  st_filter_install(r->sim, 1, &r->f, count_sports, r);
  post_all(r, N_MSGS, 64 * 1024);
  netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
  simx_counters_get(r->x, &k);
  assert_int_equal(r->app.readable, N_MSGS);
  assert_int_equal(r->app.arrived, N_MSGS);
  assert_int_equal(r->app.sent, N_MSGS);
  assert_int_equal(r->app.errors, 0);
  assert_int_equal(r->app.progress_bytes, (uint64_t)N_MSGS * 64 * 1024);
  assert_int_equal(k.recv_errors, 0);
  assert_int_equal(k.send_errors, 0);
  assert_int_equal(k.local_drops, 0);
  for (i = 0; i < N_MSGS; ++i) {
    /* Each record was reported once, readable before its sender knew. */
    assert_true(r->m[i].t_read != NETSIM_TIME_NONE);
    assert_true(r->m[i].t_read <= r->m[i].t_sent);
    assert_int_equal(r->m[i].status, 0);
  }
  /* The engine's 64 path indices are 64 source ports: 49152 + path. */
  assert_int_equal(n_sports(r), 64);
  for (i = 0; i < 64; ++i) {
    assert_int_equal(r->sport_seen[49152 + i], 1);
  }
  run_fini(r);
  free(r);
}

static void test_srd_ecmp_fanout(void **state) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  netsim_topo_info info;
  uint32_t ids[8], i;
  double share[8];

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 256 * 1024;
  run_init(r, &c, 8);
  post_all(r, 16, 256 * 1024);
  netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
  assert_int_equal(r->app.readable, 16);
  /* Dumbbell: path i is link uplink_first + 2i (left to right); hosts
     first, so the first uplink is 4 (two hosts, two links each). */
  info.uplink_first = 4;
  for (i = 0; i < 8; ++i) {
    ids[i] = info.uplink_first + 2 * i;
  }
  netsim_stats_share(r->sim, ids, 8, share);
  for (i = 0; i < 8; ++i) {
    assert_true(share[i] > 0.0); /* every path carries some */
  }
  run_fini(r);
  free(r);
}

static void test_srd_one_path(void **state) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  uint32_t ids[4] = {4, 6, 8, 10}, i, used = 0;
  double share[4];

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 64 * 1024;
  c.peer.n_paths = 1;
  run_init(r, &c, 4);
  st_filter_install(r->sim, 1, &r->f, count_sports, r);
  post_all(r, 8, 64 * 1024);
  netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
  assert_int_equal(r->app.readable, 8);
  assert_int_equal(n_sports(r), 1);
  netsim_stats_share(r->sim, ids, 4, share);
  for (i = 0; i < 4; ++i) {
    used += share[i] > 0;
  }
  assert_int_equal(used, 1); /* one entropy, one ECMP path: like TCP */
  run_fini(r);
  free(r);
}

typedef struct nth {
  uint64_t want;
  uint64_t seen;
} nth;

static int drop_nth_data(void *arg, const netsim_pkt *p, uint64_t n) {
  nth *d = arg;
  (void)n;
  if (p->size < 1000) {
    return 0;
  }
  return d->seen++ == d->want;
}

static void test_srd_loss(void **state) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  simx_counters k;
  nth d = {5, 0};
  uint32_t i;

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 64 * 1024;
  run_init(r, &c, 8);
  st_filter_install(r->sim, 1, &r->f, drop_nth_data, &d);
  post_all(r, 16, 64 * 1024);
  netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
  simx_counters_get(r->x, &k);
  assert_int_equal(r->f.dropped, 1);
  assert_int_equal(r->app.readable, 16);
  assert_int_equal(r->app.errors, 0);
  assert_true(k.retransmits >= 1);
  /* Repaired at microsecond scale (rto_min is 100 us). */
  for (i = 0; i < 16; ++i) {
    assert_true(r->m[i].t_read - r->m[i].t_post < 500 * NETSIM_US);
  }
  run_fini(r);
  free(r);
}

/* A corrupted data packet: in its payload (which the simulator does not
   carry: the driver flips a bit of the header CRC field instead) or in
   its header (a flipped header bit).  The driver classifies what the
   engine did with it; with wire format 2 the engine's CRCs drop it as
   corrupt and the retransmission delivers the message. */
static void test_srd_corrupt(void **state) {
  /* Bit 8 * 30 + 1 is in DATA's msg_len (format 1) or msg_floor (2). */
  static const int flips[2] = {-1, 8 * 30 + 1};
  sim_srd_cfg c;
  simx_counters k;
  st_marker mk;
  uint32_t i;

  (void)state;
  for (i = 0; i < 2; ++i) {
    run *r = calloc(1, sizeof(*r));
    nth d = {5, 0};
    sim_srd_cfg_default(&c);
    c.ep.max_msg_size = 64 * 1024;
    run_init(r, &c, 8);
    st_marker_install(r->sim, 1, &mk, drop_nth_data, &d, flips[i]);
    post_all(r, 16, 64 * 1024);
    netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
    simx_counters_get(r->x, &k);
    assert_int_equal(mk.marked, 1);
    assert_int_equal(k.corrupt_rx, 1);
    assert_int_equal(k.corrupt_in_hdr, flips[i] >= 0);
    /* Each corrupted packet the engine read is classified once. */
    assert_int_equal(k.corrupt_dropped + k.corrupt_other + k.corrupt_accepted,
                     1);
    {
      srd_ep_stats st;
      srd_ep_get_stats(sim_srd_ep(r->x, 1), &st);
      assert_int_equal(st.drops[SRD_DROP_CORRUPT_HDR] +
                           st.drops[SRD_DROP_CORRUPT_PAYLOAD],
                       1);
      assert_int_equal(k.corrupt_dropped, 1);
      assert_int_equal(k.corrupt_accepted, 0);
      assert_int_equal(r->app.readable, 16);
      assert_int_equal(r->app.errors, 0);
      assert_int_equal(k.recv_errors, 0);
      assert_true(k.retransmits >= 1);
    }
    run_fini(r);
    free(r);
  }
}

/* count_copies counts the duplicating links' copies that reach a host:
   data packets, and packets whose header sits in one of the driver's side
   buffers (netsim_pkt.flow's high bit), which the driver's dup callback
   must give a side buffer of their own. */
typedef struct copies {
  uint64_t data, side;
  uint32_t drop_every; /* drop every Nth original data packet, if not 0 */
  uint64_t originals;
} copies;

static int count_copies(void *arg, const netsim_pkt *p, uint64_t n) {
  copies *k = arg;
  (void)n;
  if (p->flags & NETSIM_PKT_DUP) {
    k->data += p->size >= 1000;
    k->side += (p->flow & 0x80000000u) != 0;
  } else if (k->drop_every && p->size >= 1000 &&
             ++k->originals % k->drop_every == 0) {
    return 1; /* lost after its copy was made */
  }
  return 0;
}

/* The copies lost on the way (a full queue), counted before the
   driver's drop callback sees them. */
typedef struct copy_drops {
  uint64_t n;
  netsim_drop_cb prev;
  void *prev_user;
} copy_drops;

static void count_copy_drops(netsim_sim *sim, const netsim_pkt *pkt,
                             netsim_drop_reason why, netsim_link *link,
                             void *user) {
  copy_drops *d = user;

  d->n += (pkt->flags & NETSIM_PKT_DUP) != 0;
  d->prev(sim, pkt, why, link, d->prev_user);
}

static uint64_t drops_of(simx *x, uint32_t host, int why) {
  srd_ep_stats st;

  srd_ep_get_stats(sim_srd_ep(x, host), &st);
  return st.drops[why];
}

/* Late duplicates: every packet crossing the fabric (data, acknowledge-
   ments, handshakes) is copied and the copy arrives 300 ms later, long
   after the original was delivered and acknowledged and its message
   completed, while a second batch of messages is in flight.  The sender's
   NIC link loses 2% (before the copies are made), so that acknowledge-
   ments carry ranges and some outgrow the pool's payload buffers (side
   buffers).  The engine delivers every message exactly once: a second
   delivery would be a completion the message table no longer knows
   (unmatched).  With |downstream|, every 11th original data packet is
   lost at the receiver, after the links made its copy: the copy's
   acknowledgement, 300 ms later, is then the first news of that packet,
   which must not become an RTT sample (the packet was declared lost by
   reordering time), and the second batch must not wait for the copies. */
static void dup_late(int downstream) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  simx_counters k;
  netsim_sim_stats st;
  st_filter f0;
  copies c0 = {0, 0, 0, 0}, c1 = {0, 0, 0, 0};
  copy_drops cd = {0, NULL, NULL};
  uint64_t pending = 0;
  netsim_time worst[2] = {0, 0};
  uint32_t i;

  c1.drop_every = downstream ? 11 : 0;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 64 * 1024;
  run_init(r, &c, 8);
  ST_OK(netsim_fault_dup_all(r->sim, 1.0, 300 * NETSIM_MS, 1));
  ST_OK(netsim_link_set_loss(netsim_sim_link(r->sim, 0), 0.02));
  st_filter_install(r->sim, 1, &r->f, count_copies, &c1);
  st_filter_install(r->sim, 0, &f0, count_copies, &c0);
  netsim_sim_set_drop_cb(r->sim, count_copy_drops, &cd, &cd.prev,
                         &cd.prev_user);
  assert_non_null(cd.prev);
  post_all(r, N_MSGS / 2, 64 * 1024);
  netsim_sim_run_until(r->sim, 300 * NETSIM_MS);
  assert_int_equal(r->app.readable, N_MSGS / 2);
  for (i = N_MSGS / 2; i < N_MSGS; ++i) {
    st_msg(&r->m[i], i, 64 * 1024, netsim_sim_now(r->sim));
    ST_OK(simx_post(r->x, &r->m[i]));
  }
  netsim_sim_run_until(r->sim, 2 * NETSIM_S);
  simx_counters_get(r->x, &k);
  netsim_sim_get_stats(r->sim, &st);
  for (i = 0; i < netsim_sim_n_links(r->sim); ++i) {
    netsim_link_stats ls;
    netsim_link_get_stats(netsim_sim_link(r->sim, i), &ls);
    pending += ls.dup_pending;
  }
  /* Every packet was copied; each copy reached an engine or met a full
     queue (the copies double the load of the last hop). */
  assert_int_equal(st.dup_skipped, 0);
  assert_int_equal(pending, 0);
  assert_int_equal(k.dup_rx + cd.n, st.duplicated);
  assert_true(c1.data > (uint64_t)N_MSGS * 4);
  if (!downstream) {
    assert_true(c0.side > 0);
  }
  /* Each copy of a header in a side buffer had its own, returned once. */
  assert_int_equal(sim_srd_side_held(r->x), 0);
  /* Each message delivered once, its record matched, nothing failed. */
  assert_int_equal(r->app.readable, N_MSGS);
  assert_int_equal(r->app.arrived, N_MSGS);
  assert_int_equal(r->app.sent, N_MSGS);
  assert_int_equal(r->app.errors, 0);
  assert_int_equal(r->app.progress_bytes, (uint64_t)N_MSGS * 64 * 1024);
  assert_int_equal(k.unmatched, 0);
  assert_int_equal(k.recv_errors, 0);
  assert_int_equal(k.send_errors, 0);
  for (i = 0; i < N_MSGS; ++i) {
    netsim_time lat = r->m[i].t_read - r->m[i].t_post;
    assert_true(r->m[i].t_read != NETSIM_TIME_NONE);
    assert_int_equal(r->m[i].status, 0);
    if (lat > worst[i >= N_MSGS / 2]) {
      worst[i >= N_MSGS / 2] = lat;
    }
  }
  /* The receiver dropped every data copy as a duplicate (of a packet or
     of a whole message) or as too old for its window; none was taken for
     corrupt: the copies of headers in side buffers carried their own. */
  assert_true(drops_of(r->x, 1, SRD_DROP_DUP_PKT) +
                  drops_of(r->x, 1, SRD_DROP_DUP_MSG) +
                  drops_of(r->x, 1, SRD_DROP_OUT_OF_WINDOW) >=
              c1.data);
  for (i = 0; i < 2; ++i) {
    assert_int_equal(drops_of(r->x, i, SRD_DROP_CORRUPT_HDR), 0);
  }
  print_message("copies: %llu made, %llu data at the receiver, %llu with "
                "side-buffer headers, %llu lost in queues; worst latency "
                "%.1f us, then %.1f us amid the copies\n",
                (unsigned long long)st.duplicated, (unsigned long long)c1.data,
                (unsigned long long)(c0.side + c1.side),
                (unsigned long long)cd.n, (double)worst[0] / 1e6,
                (double)worst[1] / 1e6);
  /* No batch waits for the copies: far below their 300 ms. */
  assert_true(worst[1] < 30 * NETSIM_MS);
  run_fini(r);
  free(r);
}

static void test_srd_dup_late(void **state) {
  (void)state;
  dup_late(0);
}

static void test_srd_dup_late_lost_downstream(void **state) {
  (void)state;
  dup_late(1);
}

static void test_srd_ordered(void **state) {
  sim_srd_cfg c;
  run *r = calloc(1, sizeof(*r));
  nth d = {1, 0};
  uint32_t i;

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 64 * 1024;
  c.peer.ordered = 1;
  c.ep.unexp_msgs = 64;
  c.ep.unexp_bytes = 4u << 20;
  run_init(r, &c, 8);
  st_filter_install(r->sim, 1, &r->f, drop_nth_data, &d);
  post_all(r, 16, 64 * 1024);
  netsim_sim_run_until(r->sim, 10 * NETSIM_MS);
  assert_int_equal(r->f.dropped, 1);
  assert_int_equal(r->app.readable, 16);
  for (i = 0; i < 16; ++i) {
    assert_int_equal(r->app.order[i], i);
  }
  run_fini(r);
  free(r);
}

static void test_srd_bad_settings(void **state) {
  sim_srd_cfg c;
  netsim_sim *sim = st_net(1, 2, NETSIM_GBPS(100), NETSIM_GBPS(100));
  simx *x = NULL;
  st_app a;
  simx_app app = st_app_init(&a, sim);
  simx_msg m;
  char err[256] = "";

  (void)state;
  sim_srd_cfg_default(&c);
  c.ep.pkt_window = 100; /* not a power of two */
  assert_int_equal(sim_srd_new(&x, sim, &c, &app, err, sizeof(err)),
                   NETSIM_ERR_INVAL);
  assert_non_null(strstr(err, "refused its settings"));
  sim_srd_cfg_default(&c);
  c.ep.max_msg_size = 1000;
  ST_OK(sim_srd_new(&x, sim, &c, &app, err, sizeof(err)));
  st_msg(&m, 0, 2000, 0); /* larger than max_msg_size */
  assert_int_equal(simx_post(x, &m), NETSIM_ERR_INVAL);
  st_msg(&m, 0, 1000, 0);
  m.dst = 0; /* to itself */
  assert_int_equal(simx_post(x, &m), NETSIM_ERR_INVAL);
  simx_del(x);
  netsim_sim_del(sim);
}

static void keep_drop(netsim_sim *sim, const netsim_pkt *pkt,
                      netsim_drop_reason why, netsim_link *link, void *user) {
  (void)sim, (void)pkt, (void)why, (void)link;
  ++*(int *)user;
}

/* A host without a NIC is a topology that was not built: NETSIM_ERR_INVAL
   and a message, as sim_tcp says for the same.  The failed transport
   leaves the simulation's drop callback as it found it. */
static void test_srd_host_without_nic(void **state) {
  netsim_sim *sim = st_net_unwired();
  sim_srd_cfg c;
  simx *x = NULL;
  st_app a;
  simx_app app = st_app_init(&a, sim);
  char err[256] = "";
  int drops = 0;
  netsim_drop_cb prev;
  void *prev_user;

  (void)state;
  netsim_sim_set_drop_cb(sim, keep_drop, &drops, NULL, NULL);
  sim_srd_cfg_default(&c);
  assert_int_equal(sim_srd_new(&x, sim, &c, &app, err, sizeof(err)),
                   NETSIM_ERR_INVAL);
  assert_null(x);
  assert_string_equal(err, "host 0 has no NIC (no link attached)");
  /* Without a buffer, the same code. */
  assert_int_equal(sim_srd_new(&x, sim, &c, &app, NULL, 0), NETSIM_ERR_INVAL);
  netsim_sim_set_drop_cb(sim, NULL, NULL, &prev, &prev_user);
  assert_true(prev == keep_drop);
  assert_ptr_equal(prev_user, &drops);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_srd_messages),
      cmocka_unit_test(test_srd_ecmp_fanout),
      cmocka_unit_test(test_srd_one_path),
      cmocka_unit_test(test_srd_loss),
      cmocka_unit_test(test_srd_corrupt),
      cmocka_unit_test(test_srd_dup_late),
      cmocka_unit_test(test_srd_dup_late_lost_downstream),
      cmocka_unit_test(test_srd_ordered),
      cmocka_unit_test(test_srd_bad_settings),
      cmocka_unit_test(test_srd_host_without_nic),
  };
  return cmocka_run_group_tests_name("sim_srd", tests, NULL, NULL);
}
