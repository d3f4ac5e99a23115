/*
 * test_tcp.c: the TCP model (transports/sim/sim_tcp.c) between two hosts
 * over netsim, with exact drops: bulk goodput, SACK fast retransmit, the
 * tail-loss RTO and its tunable floor, head-of-line blocking, the SYN's
 * initial RTO, delayed ACKs, DCTCP under ECN marking, corrupted packets
 * dropped by the checksum and repaired as losses, late duplicates of every
 * packet neither delivered twice nor disturbing the connection.
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
   follows it and one segment is outstanding, so the repair waits for the
   RTO's time; it goes as a tail loss probe (Linux caps the probe's
   2 srtt + rto_min at the RTO and keeps it a probe: no timeout, no
   collapse of the window). */
static netsim_time tail_loss_latency(netsim_time rto_min, uint64_t *timeouts,
                                     uint64_t *probes) {
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
  *probes = k.probes;
  lat = r.m[0].t_read - r.m[0].t_post;
  run_fini(&r);
  return lat;
}

static void test_tcp_tail_loss_rto(void **state) {
  uint64_t to, pr;
  netsim_time lat;

  (void)state;
  lat = tail_loss_latency(200 * NETSIM_MS, &to, &pr);
  assert_int_equal(to, 0);
  assert_int_equal(pr, 1);
  assert_true(lat >= 200 * NETSIM_MS && lat < 201 * NETSIM_MS);
  /* The tunable floor of "tuned" datacenter TCP. */
  lat = tail_loss_latency(1 * NETSIM_MS, &to, &pr);
  assert_int_equal(to, 0);
  assert_int_equal(pr, 1);
  assert_true(lat >= 1 * NETSIM_MS && lat < 2 * NETSIM_MS);
}

/* The probe follows the newest segment: a message of three segments, all
   lost.  The timer armed for the first segment alone (2 srtt + rto_min,
   capped at the RTO) becomes the probe's 2 srtt + 2 ms as the second and
   third go out (tcp_write_xmit's tcp_schedule_loss_probe); the probe
   resends the third, its SACK shows the first two lost, and fast
   recovery repairs them within a few ms.  With the timer left as the
   first segment set it, the RTO would fire after 200 ms. */
static void test_tcp_probe_after_send(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  nth d = {{0, 1, 2}, 3, 0};

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 3 * MSS, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 2 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.f.dropped, 3);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.timeouts, 0);
  assert_int_equal(k.probes, 1);
  assert_int_equal(k.fast_recoveries, 1);
  assert_int_equal(k.retransmits, 3);
  assert_true(r.m[0].t_read - r.m[0].t_post < 10 * NETSIM_MS);
  assert_true(r.m[0].t_read - r.m[0].t_post > 2 * NETSIM_MS);
  run_fini(&r);
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
  /* Readable at once, and acknowledged at once although the receiver
     is not in quick-ACK mode and one segment is less than two: it is
     short and ends the write (PSH), and the application read it
     (tcp_cleanup_rbuf's ICSK_ACK_PUSHED). */
  assert_true(r.m[0].t_read < 10 * NETSIM_US);
  assert_true(r.m[0].t_sent < r.m[0].t_read + 10 * NETSIM_US);
  run_fini(&r);
}

/* Linux's receiver ACK policy, on by default (delayed_ack = 1):
   quick ACKs for the first 16 segments, then one ACK per two full
   segments (more than one rcv_mss unacknowledged).  8 MiB is 938
   segments: 16 + 461 ACKs.  delayed_ack = 0 acknowledges every one. */
static void test_tcp_ack_every_second(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  double ratio;
  int v;

  (void)state;
  for (v = 0; v < 2; ++v) {
    sim_tcp_cfg_default(&c);
    assert_int_equal(c.delayed_ack, 1);
    c.delayed_ack = v == 0;
    c.handshake = 0; /* every control packet is an ACK */
    run_init(&r, &c, NETSIM_GBPS(100));
    st_msg(&r.m[0], 0, 8u << 20, 0);
    ST_OK(simx_post(r.x, &r.m[0]));
    netsim_sim_run_until(r.sim, 100 * NETSIM_MS);
    simx_counters_get(r.x, &k);
    assert_int_equal(r.app.readable, 1);
    assert_int_equal(r.app.sent, 1);
    assert_int_equal(k.retransmits, 0);
    assert_int_equal(k.timeouts, 0);
    assert_true(k.data_pkts > 900);
    if (v == 0) {
      ratio = (double)(k.ctrl_pkts - c.quickack) /
              (double)(k.data_pkts - c.quickack);
      assert_true(ratio >= 0.45 && ratio <= 0.6);
      assert_true(k.ctrl_pkts < k.data_pkts * 6 / 10);
    } else {
      assert_int_equal(k.ctrl_pkts, k.data_pkts);
    }
    run_fini(&r);
  }
}

/* A lone full segment that does not end a write, after the quick-ACK
   phase, is acknowledged when the 40 ms delayed-ACK timer fires
   (tcp_send_delayed_ack): with a window of one segment the sender has
   one segment out at a time, so message 0's first 16 segments take the
   16 quick ACKs, segments 16-18 wait 40 ms each and segment 19 (PSH,
   read at once) is acknowledged at once. */
static void test_tcp_delayed_ack_lone(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;

  (void)state;
  sim_tcp_cfg_default(&c);
  c.rwnd = MSS;
  c.handshake = 0;
  run_init(&r, &c, NETSIM_GBPS(100));
  st_msg(&r.m[0], 0, 20 * MSS, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(r.app.sent, 1);
  assert_int_equal(k.data_pkts, 20);
  assert_int_equal(k.ctrl_pkts, 20);
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(k.probes, 0);
  assert_true(r.m[0].t_read >= 120 * NETSIM_MS);
  assert_true(r.m[0].t_read < 121 * NETSIM_MS);
  assert_true(r.m[0].t_sent < r.m[0].t_read + 10 * NETSIM_US);
  run_fini(&r);
}

/* Out of order, every segment is acknowledged at once with its SACK
   (__tcp_ack_snd_check: the out-of-order queue is not empty), so fast
   retransmit works with delayed ACKs on: segment 40 of 1 MiB is lost;
   each later segment that reaches the receiver before the
   retransmission (rcv_nxt still at the hole) has an ACK of its own
   carrying a SACK block (larger than a plain ACK), and the
   retransmission's ACK carries none. */
typedef struct ooo_count {
  simx *x;
  nth drop;          /* segment 40 */
  uint64_t arrivals; /* data reaching the receiver while the hole is open */
  uint64_t sack_acks, acks;
  uint32_t plain; /* the size of a plain ACK: the first one's */
} ooo_count;

static int count_ooo_data(void *arg, const netsim_pkt *p, uint64_t n) {
  ooo_count *o = arg;
  sim_tcp_conn_info ci;

  if (drop_nth_data(&o->drop, p, n)) {
    return 1;
  }
  ST_OK(sim_tcp_conn_get(o->x, 0, &ci));
  if (is_data(p) && ci.rcv_nxt == 40ull * MSS) {
    ++o->arrivals;
  }
  return 0;
}

static int count_sack_acks(void *arg, const netsim_pkt *p, uint64_t n) {
  ooo_count *o = arg;

  (void)n;
  if (is_data(p)) {
    return 0;
  }
  if (o->plain == 0) {
    o->plain = p->size;
  }
  ++o->acks;
  o->sack_acks += p->size > o->plain;
  return 0;
}

static void test_tcp_ack_ooo_at_once(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  st_filter f0;
  ooo_count o;

  (void)state;
  sim_tcp_cfg_default(&c);
  c.handshake = 0;
  run_init(&r, &c, NETSIM_GBPS(100));
  memset(&o, 0, sizeof(o));
  o.x = r.x;
  o.drop.want[0] = 40;
  o.drop.n_want = 1;
  st_filter_install(r.sim, 1, &r.f, count_ooo_data, &o);
  st_filter_install(r.sim, 0, &f0, count_sack_acks, &o);
  st_msg(&r.m[0], 0, 1u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.f.dropped, 1);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(r.app.sent, 1);
  assert_int_equal(k.retransmits, 1);
  assert_int_equal(k.timeouts, 0);
  assert_int_equal(k.fast_recoveries, 1);
  assert_true(r.m[0].t_read < 300 * NETSIM_US);
  /* At least the three that make the fast retransmit, and the
     retransmission itself. */
  assert_true(o.arrivals >= 4);
  assert_int_equal(o.sack_acks, o.arrivals - 1);
  assert_int_equal(o.acks, k.ctrl_pkts);
  /* Still fewer ACKs than segments: the rest were paired. */
  assert_true(k.ctrl_pkts < k.data_pkts * 7 / 10);
  run_fini(&r);
}

/* Loss recovery with delayed ACKs on: losses across a 4 MiB transfer
   (one in the quick-ACK phase, the others among paired ACKs) are
   repaired by fast retransmits, without a timeout. */
static void test_tcp_delayed_ack_losses(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  nth d = {{10, 100, 250, 400}, 4, 0};

  (void)state;
  sim_tcp_cfg_default(&c);
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 4u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.f.dropped, 4);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(r.app.sent, 1);
  assert_int_equal(r.app.progress_bytes, 4u << 20);
  assert_int_equal(k.retransmits, 4);
  assert_int_equal(k.timeouts, 0);
  assert_true(k.fast_recoveries >= 1);
  assert_true(r.m[0].t_read < 2 * NETSIM_MS);
  assert_true(k.ctrl_pkts < k.data_pkts * 7 / 10);
  run_fini(&r);
}

/* Late duplicates.  The path duplicates every packet in both directions
   (segments, ACKs, the handshake), each copy 300 ms later: beyond the
   200 ms minimum RTO, long after the original was delivered and
   acknowledged.  Message 0 (one segment lost, so that recovery runs and
   ACKs repeat) is followed by message 1 while message 0's copies arrive,
   and message 2 while message 1's do.  A duplicate segment is below
   rcv_nxt: the receiver answers with an immediate (D-SACK) ACK and
   delivers nothing again; a duplicate ACK is old or repeats snd_una and
   is only that: no RTT sample from its stale timestamp, no duplicate ACK
   counted towards a fast retransmit, no window change, no timeout.  The
   run ends where the same run without duplicates does. */
typedef struct dup_drops {
  uint64_t all, copies;
} dup_drops;

static void count_drops(netsim_sim *sim, const netsim_pkt *pkt,
                        netsim_drop_reason why, netsim_link *link, void *user) {
  dup_drops *d = user;

  (void)sim;
  (void)why;
  (void)link;
  ++d->all;
  d->copies += (pkt->flags & NETSIM_PKT_DUP) != 0;
}

typedef struct dup_out {
  sim_tcp_conn_info ci;
  simx_counters k;
  netsim_time lat[3];
} dup_out;

/* dup_late_run runs the three messages with duplication |dup| on the
   path, both directions or (|acks_only|) only the ACKs' (link 5), and
   message 1 of 1 MiB at 300 ms or (|acks_only|) of three segments at
   300.03 ms, amid the copies of message 0's ACKs. */
static void dup_late_run(const sim_tcp_cfg *c, double dup, int acks_only,
                         dup_out *o) {
  netsim_link_stats la, lb;
  nth d = {{20}, 1, 0};
  dup_drops drops = {0, 0};
  const uint64_t m1 = acks_only ? 3 * MSS : 1u << 20;
  const uint64_t total = (1u << 20) + m1 + 3 * MSS;
  uint32_t i;
  run r;

  run_init(&r, c, NETSIM_GBPS(100));
  /* The dumbbell's one path is links 4 (left to right) and 5. */
  if (acks_only) {
    ST_OK(netsim_link_set_dup(netsim_sim_link(r.sim, 5), dup, 300 * NETSIM_MS));
  } else {
    ST_OK(netsim_fault_dup(r.sim, 4, dup, 300 * NETSIM_MS));
  }
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  netsim_sim_set_drop_cb(r.sim, count_drops, &drops, NULL, NULL);
  st_msg(&r.m[0], 0, 1u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim,
                       300 * NETSIM_MS + (acks_only ? 30 : 0) * NETSIM_US);
  assert_int_equal(r.app.readable, 1);
  st_msg(&r.m[1], 1, m1, netsim_sim_now(r.sim));
  ST_OK(simx_post(r.x, &r.m[1]));
  netsim_sim_run_until(r.sim, 601 * NETSIM_MS);
  st_msg(&r.m[2], 2, 3 * MSS, netsim_sim_now(r.sim));
  ST_OK(simx_post(r.x, &r.m[2]));
  netsim_sim_run_until(r.sim, 2 * NETSIM_S);
  simx_counters_get(r.x, &o->k);
  netsim_link_get_stats(netsim_sim_link(r.sim, 4), &la);
  netsim_link_get_stats(netsim_sim_link(r.sim, 5), &lb);
  ST_OK(sim_tcp_conn_get(r.x, 0, &o->ci));
  if (dup > 0) {
    /* Every packet was copied; every copy reached its host or met a full
       queue (message 1's burst and message 0's copies share the last
       link). */
    assert_true(acks_only ? la.duplicated == 0 : la.duplicated > 2 * 118);
    assert_true(lb.duplicated > 100);
    assert_int_equal(la.dup_pending + lb.dup_pending, 0);
    assert_int_equal(o->k.dup_rx + drops.copies, la.duplicated + lb.duplicated);
    assert_true(o->k.dup_rx > 100);
  } else {
    assert_int_equal(o->k.dup_rx + la.duplicated + lb.duplicated, 0);
  }
  /* No original was lost but the one the filter took. */
  assert_int_equal(drops.copies, drops.all);
  assert_int_equal(r.f.dropped, 1);
  /* Each message delivered once, in order, whole. */
  assert_int_equal(r.app.readable, 3);
  assert_int_equal(r.app.arrived, 3);
  assert_int_equal(r.app.sent, 3);
  assert_int_equal(r.app.errors, 0);
  for (i = 0; i < 3; ++i) {
    assert_int_equal(r.app.order[i], i);
    o->lat[i] = r.m[i].t_read - r.m[i].t_post;
  }
  assert_int_equal(r.app.progress_bytes, total);
  assert_int_equal(o->ci.rcv_nxt, total);
  assert_int_equal(o->ci.snd_una, total);
  assert_int_equal(o->ci.snd_nxt, total);
  run_fini(&r);
}

static netsim_time absdiff(netsim_time a, netsim_time b) {
  return a > b ? a - b : b - a;
}

static void test_tcp_dup_late(void **state) {
  sim_tcp_cfg c;
  dup_out a, b;
  netsim_time max_rtt;
  int v;

  (void)state;
  for (v = 0; v < 4; ++v) {
    /* Linux's defaults; delayed ACKs (a duplicate's ACK goes at once);
       SACK without RACK (RFC 6675's duplicate-ACK rule); NewReno without
       SACK, with only the ACKs duplicated.  (Without SACK a duplicate
       segment's ACK is a duplicate ACK the sender cannot tell from one
       a loss causes, and three of them make a fast retransmit, in Linux
       as here; a late copy of an old ACK is below snd_una and is no
       duplicate ACK.) */
    sim_tcp_cfg_default(&c);
    c.delayed_ack = v == 1;
    c.rack = v != 2;
    c.sack = v != 3;
    dup_late_run(&c, 1.0, v == 3, &a);
    dup_late_run(&c, 0.0, v == 3, &b);
    /* The one loss repaired without a timeout, and the window cut once,
       as without duplicates. */
    assert_int_equal(a.k.retransmits, 1);
    assert_int_equal(b.k.retransmits, 1);
    assert_int_equal(a.k.timeouts, 0);
    assert_int_equal(b.k.timeouts, 0);
    assert_int_equal(a.k.fast_recoveries, b.k.fast_recoveries);
    assert_int_equal(a.k.probes, b.k.probes);
    assert_int_equal(a.ci.ssthresh, b.ci.ssthresh);
    /* No RTT sample came from a copy's stale timestamp (it would be
       300 ms): the largest is what the run without duplicates took (a
       few microseconds), or with delayed ACKs at most their timer (a
       message's odd last segment waits for it; the copies' D-SACK ACKs,
       which put the receiver in quick-ACK mode, change which one does). */
    max_rtt = b.ci.max_rtt;
    if (c.delayed_ack && max_rtt < c.delack) {
      max_rtt = c.delack;
    }
    assert_true(a.ci.max_rtt < max_rtt + 100 * NETSIM_US);
    assert_true(a.ci.rto < b.ci.rto + 20 * NETSIM_MS);
    /* The later messages went as fast (the copies add load to message
       1's path). */
    assert_int_equal(a.lat[0], b.lat[0]);
    assert_true(absdiff(a.lat[1], b.lat[1]) < 100 * NETSIM_US);
    assert_int_equal(a.lat[2], b.lat[2]);
  }
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

/* CUBIC in the model: one segment lost in a bulk transfer whose window
   the receive window holds at 65 segments; fast recovery leaves ssthresh
   at 717/1024 of the window the loss was seen at (W_max), where NewReno
   halves it and keeps no W_max. */
static void cubic_loss_run(int cc, sim_tcp_conn_info *ci) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  nth d = {{400}, 1, 0};

  sim_tcp_cfg_default(&c);
  c.cc = cc;
  c.rwnd = 64 * MSS;
  run_init(&r, &c, NETSIM_GBPS(100));
  st_filter_install(r.sim, 1, &r.f, drop_nth_data, &d);
  st_msg(&r.m[0], 0, 8u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  simx_counters_get(r.x, &k);
  assert_int_equal(r.app.readable, 1);
  assert_int_equal(k.retransmits, 1);
  assert_int_equal(k.fast_recoveries, 1);
  ST_OK(sim_tcp_conn_get(r.x, 0, ci));
  run_fini(&r);
}

static void test_tcp_cubic_loss(void **state) {
  sim_tcp_conn_info ci;

  (void)state;
  cubic_loss_run(SIM_TCP_CC_CUBIC, &ci);
  print_message("cubic: W_max %u ssthresh %u\n", ci.w_max, ci.ssthresh);
  assert_true(ci.w_max >= 16 && ci.w_max <= 65);
  assert_int_equal(ci.ssthresh, ci.w_max * 717 / 1024);
  cubic_loss_run(SIM_TCP_CC_RENO, &ci);
  assert_int_equal(ci.w_max, 0);
  assert_true(ci.ssthresh <= 33);
}

/* HyStart on a deep-buffered path: a 100 Gb/s host into a 10 Gb/s path
   with a 200 KB buffer (16 BDPs).  CUBIC's ACK train ends slow start at
   16 segments or a little more, before anything is lost; NewReno's slow
   start doubles until the buffer overflows. */
static void hystart_run(int cc, simx_counters *k, sim_tcp_conn_info *ci) {
  sim_tcp_cfg c;
  run r;

  sim_tcp_cfg_default(&c);
  c.cc = cc;
  run_init(&r, &c, NETSIM_GBPS(10));
  st_msg(&r.m[0], 0, 1u << 20, 0);
  ST_OK(simx_post(r.x, &r.m[0]));
  netsim_sim_run_until(r.sim, 1 * NETSIM_S);
  assert_int_equal(r.app.readable, 1);
  simx_counters_get(r.x, k);
  ST_OK(sim_tcp_conn_get(r.x, 0, ci));
  run_fini(&r);
}

static void test_tcp_hystart(void **state) {
  simx_counters k;
  sim_tcp_conn_info ci;

  (void)state;
  hystart_run(SIM_TCP_CC_CUBIC, &k, &ci);
  print_message("cubic: hystart %u/%u ssthresh %u cwnd %u retransmits %llu\n",
                ci.hystart_train, ci.hystart_delay, ci.ssthresh, ci.cwnd,
                (unsigned long long)k.retransmits);
  assert_int_equal(ci.hystart_train, 1);
  assert_int_equal(ci.hystart_delay, 0);
  assert_true(ci.ssthresh >= 16 && ci.ssthresh < 32);
  assert_int_equal(k.retransmits, 0);
  assert_int_equal(k.timeouts, 0);
  hystart_run(SIM_TCP_CC_RENO, &k, &ci);
  print_message("reno: ssthresh %u retransmits %llu\n", ci.ssthresh,
                (unsigned long long)k.retransmits);
  assert_int_equal(ci.hystart_train, 0);
  assert_true(k.retransmits > 0);
}

/* drop_blackhole drops data segment |want[0]| and every data segment from
   |want[1]| to |want[2]| (excluded). */
static int drop_blackhole(void *arg, const netsim_pkt *p, uint64_t n) {
  nth *d = arg;
  uint64_t i;
  (void)n;
  if (!is_data(p)) {
    return 0;
  }
  i = d->seen++;
  return i == d->want[0] || (i >= d->want[1] && i < d->want[2]);
}

/* A timeout in fast recovery (Linux's TCPSackRecoveryFail): segment 20 is
   lost, and from segment 32 on everything, the fast retransmission
   included, so nothing more is SACKed and the RTO fires in Recovery.
   tcp_enter_loss keeps the threshold recovery set (it was reduced in this
   window already): 21 (CUBIC) and 15 (Reno) where reducing the PRR
   window of 17 or 15 again would leave 11 or 7. */
static void test_tcp_rto_in_recovery(void **state) {
  sim_tcp_cfg c;
  run r;
  simx_counters k;
  sim_tcp_conn_info a, b;
  nth d = {{20, 32, 1u << 30}, 3, 0};
  int cc;

  (void)state;
  for (cc = 0; cc < 2; ++cc) {
    sim_tcp_cfg_default(&c);
    c.cc = cc ? SIM_TCP_CC_RENO : SIM_TCP_CC_CUBIC;
    run_init(&r, &c, NETSIM_GBPS(100));
    st_filter_install(r.sim, 1, &r.f, drop_blackhole, &d);
    d.seen = 0;
    st_msg(&r.m[0], 0, 4u << 20, 0);
    ST_OK(simx_post(r.x, &r.m[0]));
    netsim_sim_run_until(r.sim, 100 * NETSIM_MS);
    simx_counters_get(r.x, &k);
    assert_int_equal(k.fast_recoveries, 1);
    assert_int_equal(k.timeouts, 0);
    ST_OK(sim_tcp_conn_get(r.x, 0, &a));
    netsim_sim_run_until(r.sim, 300 * NETSIM_MS);
    simx_counters_get(r.x, &k);
    assert_int_equal(k.timeouts, 1);
    ST_OK(sim_tcp_conn_get(r.x, 0, &b));
    print_message("%s: ssthresh %u in recovery, %u after the RTO\n",
                  cc ? "reno" : "cubic", a.ssthresh, b.ssthresh);
    assert_true(a.ssthresh >= 5);
    assert_int_equal(b.ssthresh, a.ssthresh);
    assert_int_equal(b.cwnd, 1);
    run_fini(&r);
  }
}

/* arrivals drops data segments |lo| to |hi| (excluded) and records when
   every data segment reached the receiver's host. */
typedef struct arrivals {
  netsim_sim *sim;
  uint64_t lo, hi, seen;
  netsim_time at[64];
} arrivals;

static int drop_range_record(void *arg, const netsim_pkt *p, uint64_t n) {
  arrivals *a = arg;
  uint64_t i;
  (void)n;
  if (!is_data(p)) {
    return 0;
  }
  i = a->seen++;
  if (i < 64) {
    a->at[i] = netsim_sim_now(a->sim);
  }
  return i >= a->lo && i < a->hi;
}

/* PRR as tcp_cwnd_reduction: six of a ten-segment window lost, so the
   pipe falls below ssthresh (the slow-start reduction bound).  Each of
   the three SACKs that follow delivers one segment and moves nothing:
   each releases one retransmission (max(prr_delivered - prr_out,
   delivered)), not two (the +1 is only for an ACK that moves snd_una and
   finds no new loss).  So three retransmissions go in the first round
   and the other three an RTT later, on their ACKs; with the +1 on every
   ACK all six went at once. */
static void test_tcp_prr_bound(void **state) {
  sim_tcp_cfg c;
  run r;
  arrivals a;
  int cc;

  (void)state;
  for (cc = 0; cc < 2; ++cc) {
    uint32_t first_round = 0, i;
    sim_tcp_cfg_default(&c);
    c.cc = cc ? SIM_TCP_CC_RENO : SIM_TCP_CC_CUBIC;
    run_init(&r, &c, NETSIM_GBPS(100));
    memset(&a, 0, sizeof(a));
    a.sim = r.sim;
    a.lo = 1;
    a.hi = 7;
    st_filter_install(r.sim, 1, &r.f, drop_range_record, &a);
    st_msg(&r.m[0], 0, 10 * MSS, 0);
    ST_OK(simx_post(r.x, &r.m[0]));
    netsim_sim_run_until(r.sim, 1 * NETSIM_S);
    assert_int_equal(r.app.readable, 1);
    /* Ten segments and six retransmissions, no more. */
    assert_int_equal(a.seen, 16);
    for (i = 10; i < 16; ++i) {
      first_round += a.at[i] - a.at[10] < 4 * NETSIM_US;
    }
    print_message("%s: %u of 6 retransmissions in the first round, the "
                  "fourth %.2f us after the first\n",
                  cc ? "reno" : "cubic", first_round,
                  (a.at[13] - a.at[10]) / 1e6);
    assert_int_equal(first_round, 3);
    assert_true(a.at[13] - a.at[10] > 5 * NETSIM_US);
    run_fini(&r);
  }
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

/* A host without a NIC: NETSIM_ERR_INVAL and a message, as sim_srd says
   for the same. */
static void test_tcp_host_without_nic(void **state) {
  netsim_sim *sim = st_net_unwired();
  sim_tcp_cfg c;
  simx *x = NULL;
  st_app a;
  simx_app app = st_app_init(&a, sim);
  char err[256] = "";

  (void)state;
  sim_tcp_cfg_default(&c);
  assert_int_equal(sim_tcp_new(&x, sim, &c, &app, err, sizeof(err)),
                   NETSIM_ERR_INVAL);
  assert_null(x);
  assert_string_equal(err, "host 0 has no NIC (no link attached)");
  assert_int_equal(sim_tcp_new(&x, sim, &c, &app, NULL, 0), NETSIM_ERR_INVAL);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcp_bulk),
      cmocka_unit_test(test_tcp_fast_retransmit),
      cmocka_unit_test(test_tcp_tail_loss_rto),
      cmocka_unit_test(test_tcp_probe_after_send),
      cmocka_unit_test(test_tcp_hol_blocking),
      cmocka_unit_test(test_tcp_syn_lost),
      cmocka_unit_test(test_tcp_corrupt),
      cmocka_unit_test(test_tcp_dup_late),
      cmocka_unit_test(test_tcp_delayed_ack),
      cmocka_unit_test(test_tcp_ack_every_second),
      cmocka_unit_test(test_tcp_delayed_ack_lone),
      cmocka_unit_test(test_tcp_ack_ooo_at_once),
      cmocka_unit_test(test_tcp_delayed_ack_losses),
      cmocka_unit_test(test_tcp_dctcp),
      cmocka_unit_test(test_tcp_cubic_loss),
      cmocka_unit_test(test_tcp_hystart),
      cmocka_unit_test(test_tcp_rto_in_recovery),
      cmocka_unit_test(test_tcp_prr_bound),
      cmocka_unit_test(test_tcp_flowkey),
      cmocka_unit_test(test_tcp_host_without_nic),
  };
  return cmocka_run_group_tests_name("sim_tcp", tests, NULL, NULL);
}
