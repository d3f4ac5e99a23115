/*
 * test_reliab.c: reliability: exact losses and their retransmission on
 * another path, duplicates, lost acknowledgements, retry exhaustion, an
 * unreachable peer, timeout backoff, RTT samples, steering around a
 * blackholed path, and at-most-once across incarnations (replays from a
 * dead endpoint, a restarted peer).
 */
#include <stdlib.h>
#include <string.h>

#include "srd_pkt.h"
#include "testutil.h"

#define PKT_DATA 1
#define PKT_ACK 2
#define PKT_HS_REQ 3

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}
/* session_id returns |ep|'s incarnation id for its session with |peer|
   (what its packets to that peer carry as src_conn). */
static uint32_t session_id(const srd_ep *ep, srd_peer_id peer) {
  srd_peer_stats st;
  assert_int_equal(srd_ep_get_peer_stats(ep, peer, &st), 0);
  return st.local_conn_id;
}

#define D_SEQ(p) get32((p)->data + 20)
#define D_MSG(p) get32((p)->data + 24)
#define D_OFF(p) get32((p)->data + 36)
#define D_TXC(p) ((p)->data[42])

static void fill(uint8_t *b, size_t n, uint32_t tag) {
  size_t i;
  for (i = 0; i < n; ++i) {
    b[i] = (uint8_t)(tag * 131 + i * 7 + (i >> 8));
  }
}

/* A log of A's data packets: which fragment, which path, which try. */
typedef struct dlog {
  uint32_t msg[4096], off[4096], txc[4096];
  uint16_t path[4096];
  srd_tstamp ts[4096];
  size_t n;
  /* drop the first transmission of fragment at this offset */
  uint32_t drop_off;
  int drop_first;
  /* drop every data packet of A after the first |pass| */
  int drop_all_after;
  uint32_t pass;
  /* drop A's packets on this path (both data and control), -1 for none */
  int dead_path;
  /* drop every packet from B (acks) while nonzero */
  int drop_b;
  srd_tstamp *now;
  uint64_t dropped_data;
} dlog;

static int dlog_filter(void *arg, const tpkt *p, uint64_t n) {
  dlog *l = arg;
  (void)n;
  if (p->from == 1) {
    return l->drop_b ? TP_DROP : TP_DELIVER;
  }
  if ((int)p->path == l->dead_path) {
    if (p->type == PKT_DATA) {
      ++l->dropped_data;
    }
    return TP_DROP;
  }
  if (p->type != PKT_DATA) {
    return TP_DELIVER;
  }
  if (l->n < 4096) {
    l->msg[l->n] = D_MSG(p);
    l->off[l->n] = D_OFF(p);
    l->txc[l->n] = D_TXC(p);
    l->path[l->n] = p->path;
    l->ts[l->n] = *l->now;
    ++l->n;
  }
  if (l->drop_first && D_OFF(p) == l->drop_off && D_TXC(p) == 1) {
    ++l->dropped_data;
    return TP_DROP;
  }
  if (l->drop_all_after && l->pass == 0) {
    ++l->dropped_data;
    return TP_DROP;
  }
  if (l->pass > 0) {
    --l->pass;
  }
  return TP_DELIVER;
}

static void dlog_init(dlog *l, tpair *tp) {
  memset(l, 0, sizeof(*l));
  l->dead_path = -1;
  l->now = &tp->now;
  tp->filter = dlog_filter;
  tp->filter_arg = l;
}

/* One lost fragment is sent again, on another path, and the message is
   delivered once. */
static void test_reliab_loss_retransmitted_elsewhere(void **state) {
  static uint8_t msg[40000], rbuf[40000];
  srd_settings s;
  srd_cqe a, b;
  srd_ep_stats st;
  dlog l;
  tpair tp;
  size_t i, first = SIZE_MAX, again = SIZE_MAX;
  (void)state;

  srd_settings_default(&s);
  s.mtu = 4096;
  fill(msg, sizeof(msg), 1);
  tpair_init(&tp, &s, &s, 8, 0);
  dlog_init(&l, &tp);
  l.drop_first = 1;
  l.drop_off = 2 * 4096;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 0);
  assert_int_equal(a.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  for (i = 0; i < l.n; ++i) {
    if (l.off[i] == 2 * 4096) {
      if (first == SIZE_MAX) {
        first = i;
      } else if (again == SIZE_MAX) {
        again = i;
      }
    }
  }
  assert_true(first != SIZE_MAX && again != SIZE_MAX);
  assert_int_equal(l.txc[first], 1);
  assert_int_equal(l.txc[again], 2);
  assert_int_not_equal(l.path[first], l.path[again]);
  srd_ep_get_stats(tp.ep[0], &st);
  assert_int_equal(st.retransmits, 1);
  assert_int_equal(st.losses_rack + st.losses_rto, 1);
  tpair_fini(&tp);
}

/* regrouped_round runs a sender whose driver sends a round of packets
   path by path (settings.tx_regroups = |regroups|): after a warm-up that
   gives it RTT samples, a 16-packet message is written in one round over
   8 paths; only path 0's two packets arrive first (its GSO send), the ACK
   of the second comes back, and 60 us later (past the cross-path loss
   deadline, before the 100 us timeout) the others arrive too.  Returns
   how many packets the sender declared lost by then. */
static uint64_t regrouped_round(int regroups) {
  static uint8_t msg[16 * 1024], rbuf[16 * 1024], small[64], sbuf[64];
  srd_settings s;
  srd_ep_stats st;
  srd_cqe c;
  tpair tp;
  tpkt *held;
  size_t i, n, nheld = 0;
  srd_path path;
  uint64_t lost;

  srd_settings_default(&s);
  s.mtu = 1024;
  s.tx_regroups = regroups;
  tpair_init(&tp, &s, NULL, 8, 0);
  tp.delay = 5 * SRD_US;
  for (i = 0; i < 4; ++i) { /* RTT samples */
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], sbuf, sizeof(sbuf), NULL, tp.now), 0);
    assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], small,
                                      sizeof(small), NULL, tp.now),
                     0);
    tpair_run(&tp, tp.now + SRD_MS);
    assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
    assert_int_equal(tpair_poll(&tp, 1, &c, 1), 1);
  }
  fill(msg, sizeof(msg), 3);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  n = tpair_collect(&tp);
  assert_true(n == 16);
  held = malloc(n * sizeof(*held));
  assert_non_null(held);
  /* Path 0's packets go first, the rest wait. */
  for (i = 0; i < n; ++i) {
    if (tp.q[i].path == 0) {
      path.peer = tp.peer[1];
      path.path = 0;
      srd_ep_read_pkt(tp.ep[1], &path, tp.q[i].data, tp.q[i].len, tp.now);
    } else {
      held[nheld++] = tp.q[i];
    }
  }
  assert_true(nheld == 14);
  tp.n = 0;
  /* B's ACK (immediate or at its ack delay) back to A. */
  tp.now += s.ack_delay + tp.delay;
  srd_ep_handle_expiry(tp.ep[1], tp.now);
  tpair_collect(&tp);
  tp.now += tp.delay;
  tpair_deliver(&tp);
  tp.now += 60 * SRD_US;
  srd_ep_handle_expiry(tp.ep[0], tp.now);
  srd_ep_get_stats(tp.ep[0], &st);
  lost = st.losses_rack + st.losses_rto;
  /* The rest arrive; the message is delivered once, intact. */
  for (i = 0; i < nheld; ++i) {
    path.peer = tp.peer[1];
    path.path = held[i].path;
    srd_ep_read_pkt(tp.ep[1], &path, held[i].data, held[i].len, tp.now);
  }
  free(held);
  tpair_run(&tp, tp.now + 10 * SRD_MS);
  assert_int_equal(tpair_poll(&tp, 1, &c, 1), 1);
  assert_int_equal(c.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  assert_int_equal(tpair_poll(&tp, 1, &c, 1), 0);
  tpair_fini(&tp);
  return lost;
}

/* A driver that sends a round path by path (UDP GSO) says so, and the
   packets of the round that leave after a later-numbered one on another
   path are not taken for lost; one whose packets leave as written would
   have left them first, and they are. */
static void test_reliab_regrouped_round_not_lost(void **state) {
  (void)state;
  assert_int_equal(regrouped_round(1), 0);
  assert_true(regrouped_round(0) > 0);
}

/* Every packet delivered twice: nothing is delivered twice. */
static int dup_everything(void *arg, const tpkt *p, uint64_t n) {
  (void)arg, (void)p, (void)n;
  return TP_DUP;
}

static void test_reliab_duplicates_suppressed(void **state) {
  static uint8_t msgs[10][30000], rbuf[10][30000];
  srd_cqe cqe[16];
  srd_ep_stats st;
  tpair tp;
  size_t n, i;
  (void)state;

  tpair_init(&tp, NULL, NULL, 8, 0);
  tp.filter = dup_everything;
  for (i = 0; i < 10; ++i) {
    fill(msgs[i], sizeof(msgs[i]), (uint32_t)i);
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
    assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msgs[i],
                                      sizeof(msgs[i]), NULL, tp.now),
                     0);
  }
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, cqe, 16), 10);
  n = tpair_poll(&tp, 1, cqe, 16);
  assert_int_equal(n, 10);
  for (i = 0; i < n; ++i) {
    assert_int_equal(cqe[i].status, 0);
  }
  srd_ep_get_stats(tp.ep[1], &st);
  assert_true(st.drops[SRD_DROP_DUP_PKT] >= 40);
  assert_int_equal(st.msgs_recv_ok, 10);
  tpair_fini(&tp);
}

/* Lost acknowledgements make the sender resend data the receiver has:
   acknowledged again, never delivered again. */
static void test_reliab_ack_loss(void **state) {
  static uint8_t msg[20000], rbuf[20000];
  srd_cqe a, b;
  srd_ep_stats sta, stb;
  dlog l;
  tpair tp;
  (void)state;

  fill(msg, sizeof(msg), 4);
  tpair_init(&tp, NULL, NULL, 4, 0);
  dlog_init(&l, &tp);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  /* Handshake through, then B goes silent for 500 us. */
  tpair_run(&tp, 15 * SRD_US);
  l.drop_b = 1;
  tpair_run(&tp, tp.now + 500 * SRD_US);
  l.drop_b = 0;
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(a.status, 0);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 0);
  srd_ep_get_stats(tp.ep[0], &sta);
  srd_ep_get_stats(tp.ep[1], &stb);
  assert_true(sta.rto_fired >= 1);
  assert_true(sta.retransmits >= 3);
  assert_true(stb.drops[SRD_DROP_DUP_MSG] >= 3);
  assert_int_equal(stb.msgs_recv_ok, 1);
  tpair_fini(&tp);
}

/* A peer that stops answering: the send fails with
   SRD_ERR_PEER_UNRESPONSIVE after max_retries + 1 transmissions of the
   packet, the timeout doubling each time up to rto_max. */
static void test_reliab_retry_exhausted_backoff(void **state) {
  static uint8_t msg[100];
  srd_settings s;
  srd_cqe a;
  dlog l;
  tpair tp;
  size_t i, n = 0;
  srd_tstamp when[64];
  (void)state;

  srd_settings_default(&s);
  s.max_retries = 6;
  s.rto_min = 100 * SRD_US;
  s.rto_max = 1600 * SRD_US;
  tpair_init(&tp, &s, &s, 4, 0);
  dlog_init(&l, &tp);
  l.drop_all_after = 1;
  l.pass = 0;
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, 60 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(a.status, SRD_ERR_PEER_UNRESPONSIVE);
  for (i = 0; i < l.n; ++i) {
    assert_int_equal(l.off[i], 0);
    when[n++] = l.ts[i];
  }
  assert_int_equal(n, 7); /* max_retries + 1 */
  /* The gaps double (RTO from rto_initial, no sample) up to rto_max. */
  for (i = 2; i < n; ++i) {
    srd_duration g1 = when[i - 1] - when[i - 2], g2 = when[i] - when[i - 1];
    assert_true(g2 >= g1);
    assert_true(g2 <= 2 * g1 + 10 * SRD_US);
    assert_true(g2 <= s.rto_max + 10 * SRD_US);
  }
  assert_true(when[n - 1] - when[n - 2] >= s.rto_max);
  tpair_fini(&tp);
}

/* Nobody answers the handshake: every send fails with
   SRD_ERR_PEER_UNREACHABLE and the peer is marked unreachable. */
static int drop_all(void *arg, const tpkt *p, uint64_t n) {
  uint64_t *reqs = arg;
  (void)n;
  if (p->type == PKT_HS_REQ) {
    ++*reqs;
  }
  return TP_DROP;
}

static void test_reliab_unreachable(void **state) {
  static uint8_t msg[100];
  srd_settings s;
  srd_peer_stats st;
  srd_cqe a[3];
  uint64_t reqs = 0;
  tpair tp;
  (void)state;

  srd_settings_default(&s);
  s.max_retries = 4;
  tpair_init(&tp, &s, &s, 4, 0);
  tp.filter = drop_all;
  tp.filter_arg = &reqs;
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 10, (void *)1, tp.now), 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 20, (void *)2, tp.now), 0);
  tpair_run(&tp, 60 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, a, 3), 2);
  assert_int_equal(a[0].status, SRD_ERR_PEER_UNREACHABLE);
  assert_int_equal(a[1].status, SRD_ERR_PEER_UNREACHABLE);
  assert_int_equal(reqs, 5);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &st), 0);
  assert_int_equal(st.state, SRD_PEER_STATE_UNREACHABLE);
  /* A new send tries again. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 20, (void *)3, tp.now), 0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &st), 0);
  assert_int_equal(st.state, SRD_PEER_STATE_HS_SENT);
  tpair_fini(&tp);
}

/* RTT samples are the real round trip, free of acknowledgement delay. */
static void test_reliab_rtt_sample(void **state) {
  static uint8_t msg[64], rbuf[64];
  srd_peer_stats st;
  srd_path_stats pst;
  tpair tp;
  int i;
  (void)state;

  tpair_init(&tp, NULL, NULL, 1, 0);
  tp.delay = 7 * SRD_US;
  for (i = 0; i < 20; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now), 0);
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
        0);
    tpair_run(&tp, tp.now + 100 * SRD_US);
    while (srd_ep_poll_cq(tp.ep[0], (srd_cqe[1]){{0}}, 1) ||
           srd_ep_poll_cq(tp.ep[1], (srd_cqe[1]){{0}}, 1)) {
    }
  }
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &st), 0);
  /* Single packets wait for the delayed-ACK timer (5 us); the echo takes
     that hold time out, leaving the 14 us of the two one-way delays. */
  assert_int_equal(st.min_rtt, 14 * SRD_US);
  assert_int_equal(st.srtt, 14 * SRD_US);
  assert_int_equal(srd_ep_get_path_stats(tp.ep[0], tp.peer[0], 0, tp.now, &pst),
                   0);
  assert_int_equal(pst.srtt, 14 * SRD_US);
  assert_int_equal(pst.sent, 20);
  assert_int_equal(pst.acked, 20);
  tpair_fini(&tp);
}

/* A blackholed path: every message still arrives, the path is avoided,
   and after the first losses it carries almost nothing. */
static void test_reliab_blackhole_steering(void **state) {
  enum { N = 200 };
  static uint8_t msg[32768], rbuf[16][32768];
  srd_path_stats pst;
  srd_cqe cqe[32];
  uint32_t done = 0, delivered = 0, posted = 0, i;
  uint64_t early;
  dlog l;
  tpair tp;
  size_t n, k;
  (void)state;

  tpair_init(&tp, NULL, NULL, 8, 0);
  dlog_init(&l, &tp);
  l.dead_path = 3;
  for (i = 0; i < 16; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
  }
  early = 0;
  while (done < N) {
    while (posted < N && posted - done < 16) {
      assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                        NULL, tp.now),
                       0);
      ++posted;
    }
    tpair_run(&tp, tp.now + 100 * SRD_US);
    if (posted == 32) {
      early = l.dropped_data;
    }
    while ((n = tpair_poll(&tp, 0, cqe, 32)) > 0) {
      for (k = 0; k < n; ++k) {
        assert_int_equal(cqe[k].status, 0);
      }
      done += (uint32_t)n;
    }
    while ((n = tpair_poll(&tp, 1, cqe, 32)) > 0) {
      for (k = 0; k < n; ++k) {
        assert_int_equal(cqe[k].status, 0);
        assert_int_equal(srd_ep_post_recv(tp.ep[1], cqe[k].buf, sizeof(rbuf[0]),
                                          NULL, tp.now),
                         0);
      }
      delivered += (uint32_t)n;
    }
    assert_true(tp.now < 10 * SRD_S);
  }
  assert_int_equal(delivered, N);
  assert_int_equal(srd_ep_get_path_stats(tp.ep[0], tp.peer[0], 3, tp.now, &pst),
                   0);
  assert_true(pst.lost >= 1);
  /* 800 data packets in all; blind spraying would lose 100 on path 3.
     Steering stops using it but for rare probes. */
  assert_true(l.dropped_data < 40);
  (void)early;
  tpair_fini(&tp);
}

/* Capture A's data packets for replay. */
typedef struct capture {
  tpkt *pkts;
  size_t n;
} capture;

static int capture_data(void *arg, const tpkt *p, uint64_t n) {
  capture *c = arg;
  (void)n;
  if (p->from == 0 && p->type == PKT_DATA) {
    c->pkts = realloc(c->pkts, (c->n + 1) * sizeof(tpkt));
    c->pkts[c->n++] = *p;
  }
  return TP_DELIVER;
}

static void replay(tpair *tp, const capture *c) {
  size_t i;
  for (i = 0; i < c->n; ++i) {
    srd_path path = {tp->peer[1], c->pkts[i].path};
    srd_ep_read_pkt(tp->ep[1], &path, c->pkts[i].data, c->pkts[i].len, tp->now);
  }
}

/* Replaying a session's packets later delivers nothing again. */
static void test_reliab_replay_same_session(void **state) {
  static uint8_t msg[20000], rbuf[4][20000];
  capture c = {NULL, 0};
  srd_ep_stats st;
  srd_cqe cqe[8];
  tpair tp;
  int i;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = capture_data;
  tp.filter_arg = &c;
  for (i = 0; i < 4; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
  }
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 1);
  replay(&tp, &c);
  replay(&tp, &c);
  tpair_run(&tp, 2 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 0);
  srd_ep_get_stats(tp.ep[1], &st);
  assert_int_equal(st.drops[SRD_DROP_DUP_MSG] + st.drops[SRD_DROP_DUP_PKT],
                   2 * c.n);
  free(c.pkts);
  tpair_fini(&tp);
}

/* A restarts (a new incarnation under the same address).  Packets of
   the dead incarnation replayed to B are refused as stale; the new one
   proves itself with a handshake and its messages are delivered. */
static void test_reliab_restart_and_stale_replay(void **state) {
  static uint8_t msg[20000], msg2[5000], rbuf[4][20000];
  capture c = {NULL, 0};
  srd_settings s;
  srd_peer_settings ps;
  srd_peer_stats st;
  srd_ep_stats est;
  srd_cqe cqe[8];
  uint32_t old_conn;
  tpair tp;
  int i;
  (void)state;

  fill(msg2, sizeof(msg2), 99);
  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = capture_data;
  tp.filter_arg = &c;
  for (i = 0; i < 4; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
  }
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 1);
  old_conn = session_id(tp.ep[0], tp.peer[0]);

  /* A dies and comes back with a new incarnation id. */
  srd_ep_del(tp.ep[0]);
  srd_settings_default(&s);
  s.seed = 4242;
  assert_int_equal(srd_ep_new(&tp.ep[0], &s, srd_mem_default()), 0);
  srd_peer_settings_default(&ps);
  ps.n_paths = 4;
  assert_int_equal(srd_ep_add_peer(tp.ep[0], &ps, &tp.peer[0]), 0);
  assert_int_not_equal(session_id(tp.ep[0], tp.peer[0]), old_conn);

  /* The old incarnation's packets are replayed: all refused. */
  tp.filter = NULL;
  replay(&tp, &c);
  srd_ep_get_stats(tp.ep[1], &est);
  assert_int_equal(est.drops[SRD_DROP_DUP_MSG] + est.drops[SRD_DROP_DUP_PKT],
                   c.n); /* same session still: duplicates */
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 0);

  /* The new incarnation sends: B accepts it after the handshake. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg2, sizeof(msg2), NULL, tp.now),
      0);
  tpair_run(&tp, 2 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, cqe, 8), 1);
  assert_int_equal(cqe[0].status, 0);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 1);
  assert_int_equal(cqe[0].status, 0);
  assert_int_equal(cqe[0].len, sizeof(msg2));
  assert_memory_equal(cqe[0].buf, msg2, sizeof(msg2));
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[1], tp.peer[1], &st), 0);
  assert_int_equal(st.peer_conn_id, session_id(tp.ep[0], tp.peer[0]));

  /* Now the dead incarnation's packets are foreign: stale. */
  replay(&tp, &c);
  srd_ep_get_stats(tp.ep[1], &est);
  assert_int_equal(est.drops[SRD_DROP_BAD_CONN], c.n);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 0);
  free(c.pkts);
  tpair_fini(&tp);
}

/* B restarts while A has messages in flight: those that had left fail
   with SRD_ERR_PEER_RESET, the ones not started go to the new B. */
static void test_reliab_peer_restart_resets(void **state) {
  static uint8_t msg[60000], rbuf[4][60000];
  srd_settings s;
  srd_peer_settings ps;
  srd_cqe cqe[8];
  dlog l;
  tpair tp;
  size_t n, k;
  int ok = 0, reset = 0, i;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  dlog_init(&l, &tp);
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf[0], sizeof(rbuf[0]), NULL, tp.now), 0);
  /* One message to establish, then three large ones that B never gets. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 10, (void *)0, tp.now), 0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, cqe, 8), 1);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 1);
  l.drop_all_after = 1;
  for (i = 1; i <= 3; ++i) {
    assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                      (void *)(uintptr_t)i, tp.now),
                     0);
  }
  tpair_collect(&tp);
  tp.now += SRD_US;
  tpair_deliver(&tp);

  /* B restarts. */
  srd_ep_del(tp.ep[1]);
  srd_settings_default(&s);
  s.seed = 777;
  assert_int_equal(srd_ep_new(&tp.ep[1], &s, srd_mem_default()), 0);
  srd_peer_settings_default(&ps);
  ps.n_paths = 4;
  assert_int_equal(srd_ep_add_peer(tp.ep[1], &ps, &tp.peer[1]), 0);
  for (i = 0; i < 4; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
  }
  l.drop_all_after = 0;
  tpair_run(&tp, 10 * SRD_S);
  while ((n = tpair_poll(&tp, 0, cqe, 8)) > 0) {
    for (k = 0; k < n; ++k) {
      if (cqe[k].status == 0) {
        ++ok;
      } else {
        assert_int_equal(cqe[k].status, SRD_ERR_PEER_RESET);
        ++reset;
      }
    }
  }
  /* Every send completed once; the started ones were reset. */
  assert_int_equal(ok + reset, 3);
  assert_true(reset >= 1);
  n = tpair_poll(&tp, 1, cqe, 8);
  assert_int_equal((int)n, ok);
  tpair_fini(&tp);
}

/* A forged or replayed handshake answer changes nothing. */
static void test_reliab_forged_handshake(void **state) {
  static uint8_t msg[100], rbuf[100];
  uint8_t resp[SRD_PKT_HS_RESP_LEN] = {0};
  srd_path path;
  srd_ep_stats st;
  srd_peer_stats ps;
  srd_cqe cqe[2];
  tpair tp;
  uint32_t b_conn, a_conn;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 2), 1);
  a_conn = session_id(tp.ep[0], tp.peer[0]);
  b_conn = session_id(tp.ep[1], tp.peer[1]);

  /* An HS_RESP to A from a "new B" with a nonce A never sent. */
  resp[0] = SRD_PROTO_VERSION;
  resp[1] = 4; /* HS_RESP */
  resp[4] = 0x12, resp[5] = 0x34, resp[6] = 0x56, resp[7] = 0x78;
  resp[8] = (uint8_t)(a_conn >> 24), resp[9] = (uint8_t)(a_conn >> 16);
  resp[10] = (uint8_t)(a_conn >> 8), resp[11] = (uint8_t)a_conn;
  resp[27] = 1;                     /* echo */
  resp[35] = 2;                     /* nonce */
  resp[38] = 0x20;                  /* mtu 8192 */
  resp[41] = 0x10;                  /* max msg 1 MiB */
  resp[46] = 0x04;                  /* msg window 1024 */
  srd_pkt_seal(resp, sizeof(resp)); /* forged by someone who can */
  path.peer = tp.peer[0];
  path.path = 0;
  assert_int_equal(srd_ep_read_pkt(tp.ep[0], &path, resp, sizeof(resp), tp.now),
                   SRD_ERR_STALE);
  srd_ep_get_stats(tp.ep[0], &st);
  assert_int_equal(st.drops[SRD_DROP_BAD_CONN], 1);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &ps), 0);
  assert_int_equal(ps.peer_conn_id, b_conn);
  assert_int_equal(ps.state, SRD_PEER_STATE_ESTABLISHED);
  tpair_fini(&tp);
}

/* A message the sender gives up on while the receiver holds part of it:
   the receive comes back SRD_ERR_ABORTED and later messages flow. */
static int drop_msg_frag(void *arg, const tpkt *p, uint64_t n) {
  uint32_t *victim = arg;
  (void)n;
  if (p->from == 0 && p->type == PKT_DATA && D_OFF(p) == 8192) {
    if (*victim == 0) {
      *victim = D_MSG(p);
    }
    if (D_MSG(p) == *victim) {
      return TP_DROP;
    }
  }
  return TP_DELIVER;
}

static void test_reliab_abandoned_message_aborts_receive(void **state) {
  static uint8_t msg[20000], msg2[300], rbuf[2][20000];
  srd_settings s;
  srd_cqe a[4], b[4];
  uint32_t victim = 0;
  size_t n;
  tpair tp;
  (void)state;

  srd_settings_default(&s);
  s.max_retries = 3;
  fill(msg2, sizeof(msg2), 5);
  tpair_init(&tp, &s, &s, 4, 0);
  tp.filter = drop_msg_frag;
  tp.filter_arg = &victim;
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf[0], sizeof(rbuf[0]), (void *)1, tp.now),
      0);
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf[1], sizeof(rbuf[1]), (void *)2, tp.now),
      0);
  assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                    (void *)1, tp.now),
                   0);
  tpair_run(&tp, 10 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, a, 4), 1);
  assert_int_equal(a[0].status, SRD_ERR_PEER_UNRESPONSIVE);
  assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg2, sizeof(msg2),
                                    (void *)2, tp.now),
                   0);
  tpair_run(&tp, 20 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, a, 4), 1);
  assert_int_equal(a[0].status, 0);
  n = tpair_poll(&tp, 1, b, 4);
  assert_int_equal(n, 2);
  assert_int_equal(b[0].status, SRD_ERR_ABORTED);
  assert_ptr_equal(b[0].user_ctx, (void *)1);
  assert_int_equal(b[1].status, 0);
  assert_ptr_equal(b[1].user_ctx, (void *)2);
  assert_memory_equal(rbuf[1], msg2, sizeof(msg2));
  tpair_fini(&tp);
}

/* srd_ep_flush gives the buffers back but keeps the sessions.  m1 is
   half received when B flushes; m2, sent after it, was delivered but is
   not retired yet (m1 comes first).  Replayed packets of m2 must not
   deliver it again, and m1's missing half is taken in and dropped, so its
   sender completes. */
typedef struct flushcase {
  uint32_t m1; /* m1's message id, from its first packet */
  int have_m1;
  tpkt held[8]; /* m1's fragments past the first */
  int n_held;
  tpkt m2[4]; /* m2's packets, for replay */
  int n_m2;
} flushcase;

static int flush_filter(void *arg, const tpkt *p, uint64_t n) {
  flushcase *f = arg;
  (void)n;
  if (p->from != 0 || p->type != PKT_DATA) {
    return TP_DELIVER;
  }
  if (!f->have_m1) {
    f->have_m1 = 1;
    f->m1 = D_MSG(p);
  }
  if (D_MSG(p) == f->m1) {
    if (D_OFF(p) == 0) {
      return TP_DELIVER;
    }
    if (f->n_held < 8) {
      f->held[f->n_held++] = *p;
    }
    return TP_DROP;
  }
  if (f->n_m2 < 4) {
    f->m2[f->n_m2++] = *p;
  }
  return TP_DELIVER;
}

static void feed(tpair *tp, const tpkt *pkts, int n) {
  int i;
  for (i = 0; i < n; ++i) {
    srd_path path = {tp->peer[1], pkts[i].path};
    srd_ep_read_pkt(tp->ep[1], &path, pkts[i].data, pkts[i].len, tp->now);
  }
}

static void test_reliab_flush_keeps_at_most_once(void **state) {
  static uint8_t m1[30000], m2[100], rbuf[3][30000];
  flushcase f;
  srd_cqe cqe[8];
  size_t n, k;
  int ok = 0, i;
  tpair tp;
  (void)state;

  memset(&f, 0, sizeof(f));
  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = flush_filter;
  tp.filter_arg = &f;
  for (i = 0; i < 2; ++i) {
    assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]),
                                      (void *)(uintptr_t)i, tp.now),
                     0);
  }
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], m1, sizeof(m1), NULL, tp.now), 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], m2, sizeof(m2), NULL, tp.now), 0);
  tpair_run(&tp, tp.now + 30 * SRD_US);
  /* m2 delivered; m1 half in rbuf[0]. */
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 1);
  assert_int_equal(cqe[0].len, sizeof(m2));
  assert_true(f.n_held >= 2 && f.n_m2 >= 1);

  srd_ep_flush(tp.ep[1], tp.now);
  n = tpair_poll(&tp, 1, cqe, 8);
  assert_int_equal(n, 1);
  assert_int_equal(cqe[0].status, SRD_ERR_CANCELED);
  assert_ptr_equal(cqe[0].buf, rbuf[0]);

  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf[2], sizeof(rbuf[2]), NULL, tp.now), 0);
  tp.filter = NULL;
  feed(&tp, f.m2, f.n_m2);     /* m2 again: not delivered again */
  feed(&tp, f.held, f.n_held); /* m1's rest: taken in, dropped */
  tpair_run(&tp, 2 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, cqe, 8), 0);
  while ((n = tpair_poll(&tp, 0, cqe, 8)) > 0) {
    for (k = 0; k < n; ++k) {
      assert_int_equal(cqe[k].status, 0);
      ++ok;
    }
  }
  assert_int_equal(ok, 2);
  tpair_fini(&tp);
}

/* An echo acknowledges its packet even when the ranges leave it out
   (with many holes they cover only the newest part of the window). */
static int hold_data2(void *arg, const tpkt *p, uint64_t n) {
  capture *c = arg;
  (void)n;
  if (p->from == 0 && p->type == PKT_DATA) {
    c->pkts = realloc(c->pkts, (c->n + 1) * sizeof(tpkt));
    c->pkts[c->n++] = *p;
    return TP_DROP;
  }
  return TP_DELIVER;
}

static void test_reliab_echo_acknowledges(void **state) {
  static uint8_t msg[100];
  capture c = {NULL, 0};
  srd_pkt_common pc;
  srd_pkt_ack a;
  srd_pkt pkt;
  srd_drop_reason why;
  uint8_t buf[SRD_PKT_ACK_MAX_LEN];
  srd_path path;
  srd_cqe cqe[4];
  srd_ssize n;
  (void)state;

  {
    tpair tp;
    tpair_init(&tp, NULL, NULL, 1, 0);
    tp.filter = hold_data2;
    tp.filter_arg = &c;
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 10, (void *)1, tp.now), 0);
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 20, (void *)2, tp.now), 0);
    tpair_run(&tp, tp.now + 20 * SRD_US);
    assert_int_equal(c.n, 2);
    /* B's ACK: the range names only the second packet, the echo the
       first. */
    memset(&pc, 0, sizeof(pc));
    pc.src_conn = session_id(tp.ep[1], tp.peer[1]);
    pc.dst_conn = session_id(tp.ep[0], tp.peer[0]);
    memset(&a, 0, sizeof(a));
    assert_int_equal(srd_pkt_decode(&pkt, c.pkts[1].data, c.pkts[1].len,
                                    c.pkts[1].len, &why),
                     0);
    a.largest = pkt.u.data.seq;
    assert_int_equal(srd_pkt_decode(&pkt, c.pkts[0].data, c.pkts[0].len,
                                    c.pkts[0].len, &why),
                     0);
    a.n_echo = 1;
    a.echo[0].tx_ts = pkt.u.data.tx_ts;
    a.echo[0].seq = pkt.u.data.seq;
    assert_int_not_equal(a.echo[0].seq, a.largest);
    n = srd_pkt_encode_ack(buf, sizeof(buf), &pc, &a);
    assert_true(n > 0);
    path.peer = tp.peer[0];
    path.path = 0;
    assert_int_equal(srd_ep_read_pkt(tp.ep[0], &path, buf, (size_t)n, tp.now),
                     0);
    assert_int_equal(tpair_poll(&tp, 0, cqe, 4), 2);
    assert_int_equal(cqe[0].status, 0);
    assert_int_equal(cqe[1].status, 0);
    free(c.pkts);
    tpair_fini(&tp);
  }
}

/* A repeated HS_REQ queues a second HS_RESP; when the CONFIRM for the
   first comes before it is written, the answer is dropped, never sent
   with a zero cookie.  Every datagram B writes must decode. */
static void test_reliab_hs_confirm_races_repeated_req(void **state) {
  static uint8_t msg[10];
  tpkt req, *q;
  srd_pkt pkt;
  srd_drop_reason why;
  size_t i, n;
  tpair tp;
  (void)state;

  tpair_init(&tp, NULL, NULL, 2, 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  assert_int_equal(tpair_collect(&tp), 1); /* A's HS_REQ */
  req = tp.q[0];
  assert_int_equal(req.type, PKT_HS_REQ);
  tpair_deliver(&tp);                      /* to B */
  assert_int_equal(tpair_collect(&tp), 1); /* B's HS_RESP */
  tpair_deliver(&tp);                      /* to A */
  n = tpair_collect(&tp);                  /* A: CONFIRM and data */
  assert_true(n >= 2);
  /* The REQ again (as if resent), then A's CONFIRM and data. */
  {
    srd_path path = {tp.peer[1], req.path};
    srd_ep_read_pkt(tp.ep[1], &path, req.data, req.len, tp.now);
  }
  tpair_deliver(&tp);
  n = tpair_collect(&tp);
  for (i = 0, q = tp.q; i < n; ++i, ++q) {
    if (q->from == 1) {
      assert_int_equal(srd_pkt_decode(&pkt, q->data, q->len, q->len, &why), 0);
    }
  }
  tpair_run(&tp, SRD_S);
  assert_int_equal(srd_ep_poll_cq(tp.ep[0], (srd_cqe[1]){{0}}, 1), 1);
  tpair_fini(&tp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reliab_loss_retransmitted_elsewhere),
      cmocka_unit_test(test_reliab_regrouped_round_not_lost),
      cmocka_unit_test(test_reliab_duplicates_suppressed),
      cmocka_unit_test(test_reliab_ack_loss),
      cmocka_unit_test(test_reliab_retry_exhausted_backoff),
      cmocka_unit_test(test_reliab_unreachable),
      cmocka_unit_test(test_reliab_rtt_sample),
      cmocka_unit_test(test_reliab_blackhole_steering),
      cmocka_unit_test(test_reliab_replay_same_session),
      cmocka_unit_test(test_reliab_restart_and_stale_replay),
      cmocka_unit_test(test_reliab_peer_restart_resets),
      cmocka_unit_test(test_reliab_forged_handshake),
      cmocka_unit_test(test_reliab_abandoned_message_aborts_receive),
      cmocka_unit_test(test_reliab_flush_keeps_at_most_once),
      cmocka_unit_test(test_reliab_echo_acknowledges),
      cmocka_unit_test(test_reliab_hs_confirm_races_repeated_req),
  };
  return cmocka_run_group_tests_name("reliab", tests, NULL, NULL);
}
