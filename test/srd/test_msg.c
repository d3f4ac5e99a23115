/*
 * test_msg.c: messages: fragmentation and in-place reassembly, the
 * unexpected queue, "receiver not ready", truncation, ordered delivery,
 * message id wraparound and what the handshake negotiates.
 */
#include <stdlib.h>
#include <string.h>

#include "srd_loop.h"
#include "testutil.h"

#include "srd_pkt.h"

static void fill(uint8_t *b, size_t n, uint32_t tag) {
  size_t i;
  for (i = 0; i < n; ++i) {
    b[i] = (uint8_t)(tag * 131 + i * 7 + (i >> 8));
  }
}

/* Data packet header fields (big-endian, docs/protocol.md). */
static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}
#define PKT_DATA 1
#define DATA_MSG_ID(p) get32((p)->data + 24)
#define DATA_OFFSET(p) get32((p)->data + 36)

static void small_mtu(srd_settings *s) {
  srd_settings_default(s);
  s->mtu = 1024;
}

/* Messages of every interesting size arrive intact and in place: bytes
   past the message in the receive buffer are untouched. */
static void test_msg_sizes_in_place(void **state) {
  const size_t sizes[] = {0, 1, 1023, 1024, 1025, 3 * 1024 + 17, 1u << 20};
  srd_settings s;
  size_t k;
  (void)state;

  small_mtu(&s);
  for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
    size_t n = sizes[k];
    uint8_t *msg = malloc(n + 1), *rbuf = malloc(n + 64);
    srd_cqe a, b;
    tpair tp;

    fill(msg, n, (uint32_t)k);
    memset(rbuf, 0xEE, n + 64);
    tpair_init(&tp, &s, &s, 8, 0);
    assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, n + 64, NULL, tp.now), 0);
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, n, NULL, tp.now), 0);
    tpair_run(&tp, SRD_S);
    assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
    assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
    assert_int_equal(a.status, 0);
    assert_int_equal(b.status, 0);
    assert_int_equal(b.len, n);
    if (n) {
      assert_memory_equal(rbuf, msg, n);
    }
    for (size_t i = n; i < n + 64; ++i) {
      assert_int_equal(rbuf[i], 0xEE);
    }
    tpair_fini(&tp);
    free(msg);
    free(rbuf);
  }
}

/* Hold every data packet of A, then deliver them in reverse order. */
typedef struct hold {
  tpkt *pkts;
  size_t n;
  int holding;
} hold;

static int hold_data(void *arg, const tpkt *p, uint64_t n) {
  hold *h = arg;
  (void)n;
  if (h->holding && p->from == 0 && p->type == PKT_DATA) {
    h->pkts = realloc(h->pkts, (h->n + 1) * sizeof(tpkt));
    h->pkts[h->n++] = *p;
    return TP_DROP;
  }
  return TP_DELIVER;
}

static void deliver_reversed(tpair *tp, hold *h) {
  size_t i;
  for (i = h->n; i-- > 0;) {
    srd_path path = {tp->peer[1], h->pkts[i].path};
    assert_int_equal(srd_ep_read_pkt(tp->ep[1], &path, h->pkts[i].data,
                                     h->pkts[i].len, tp->now),
                     0);
  }
  free(h->pkts);
  h->pkts = NULL;
  h->n = 0;
  h->holding = 0;
}

static void test_msg_fragments_reversed(void **state) {
  static uint8_t msg[40000], rbuf[40000];
  srd_settings s;
  hold h = {NULL, 0, 1};
  srd_cqe b;
  tpair tp;
  (void)state;

  small_mtu(&s);
  fill(msg, sizeof(msg), 9);
  tpair_init(&tp, &s, &s, 4, 0);
  tp.filter = hold_data;
  tp.filter_arg = &h;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  /* Handshake, then the data packets the window allows are held. */
  tpair_run(&tp, 20 * SRD_US);
  assert_true(h.n >= 8);
  deliver_reversed(&tp, &h);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  tpair_fini(&tp);
}

/* Messages that arrive before any receive wait in the unexpected queue
   and are handed out in arrival order once receives are posted. */
static void test_msg_unexpected_queue(void **state) {
  static uint8_t msgs[3][20000], rbuf[3][20000];
  srd_cqe cqe[4];
  srd_ep_stats st;
  tpair tp;
  int i;
  (void)state;

  tpair_init(&tp, NULL, NULL, 8, 0);
  for (i = 0; i < 3; ++i) {
    fill(msgs[i], sizeof(msgs[i]), (uint32_t)i + 40);
    assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msgs[i],
                                      sizeof(msgs[i]) - (size_t)i * 1000,
                                      (void *)(uintptr_t)i, tp.now),
                     0);
  }
  tpair_run(&tp, SRD_S);
  /* The sends complete: the receiver accepted them into its pool. */
  assert_int_equal(tpair_poll(&tp, 0, cqe, 4), 3);
  for (i = 0; i < 3; ++i) {
    assert_int_equal(cqe[i].status, 0);
  }
  assert_int_equal(tpair_poll(&tp, 1, cqe, 4), 0);
  srd_ep_get_stats(tp.ep[1], &st);
  assert_int_equal(st.unexp_msgs, 3);

  for (i = 0; i < 3; ++i) {
    assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]),
                                      (void *)(uintptr_t)i, tp.now),
                     0);
  }
  assert_int_equal(tpair_poll(&tp, 1, cqe, 4), 3);
  for (i = 0; i < 3; ++i) {
    assert_int_equal(cqe[i].status, 0);
    assert_ptr_equal(cqe[i].buf, rbuf[i]);
    assert_int_equal(cqe[i].len, sizeof(msgs[i]) - (size_t)i * 1000);
    assert_memory_equal(rbuf[i], msgs[i], cqe[i].len);
  }
  tpair_fini(&tp);
}

/* A receive posted while an unexpected message is still arriving takes
   what came so far and the rest lands in place. */
static void test_msg_unexpected_then_posted(void **state) {
  static uint8_t msg[60000], rbuf[60000];
  hold h = {NULL, 0, 1};
  srd_cqe b;
  tpair tp;
  size_t i, half;
  (void)state;

  fill(msg, sizeof(msg), 77);
  tpair_init(&tp, NULL, NULL, 8, 0);
  tp.filter = hold_data;
  tp.filter_arg = &h;
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, 20 * SRD_US);
  assert_int_equal(h.n, 8);
  half = h.n / 2;
  for (i = 0; i < half; ++i) {
    srd_path path = {tp.peer[1], h.pkts[i].path};
    assert_int_equal(
        srd_ep_read_pkt(tp.ep[1], &path, h.pkts[i].data, h.pkts[i].len, tp.now),
        0);
  }
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 0);
  for (i = half; i < h.n; ++i) {
    srd_path path = {tp.peer[1], h.pkts[i].path};
    assert_int_equal(
        srd_ep_read_pkt(tp.ep[1], &path, h.pkts[i].data, h.pkts[i].len, tp.now),
        0);
  }
  free(h.pkts);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  tpair_fini(&tp);
}

/* No receive and no room: the receiver answers "not ready", the sender
   backs off and retries, and succeeds once a receive is posted. */
static void test_msg_rnr_then_success(void **state) {
  static uint8_t msg[3000], rbuf[3000];
  srd_settings sb;
  srd_ep_stats sta, stb;
  srd_cqe a, b;
  tpair tp;
  (void)state;

  srd_settings_default(&sb);
  sb.unexp_msgs = 0;
  fill(msg, sizeof(msg), 5);
  tpair_init(&tp, NULL, &sb, 4, 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, 2 * SRD_MS);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 0);
  srd_ep_get_stats(tp.ep[0], &sta);
  srd_ep_get_stats(tp.ep[1], &stb);
  assert_true(stb.rnr_sent >= 2);
  assert_int_equal(sta.rnr_received, stb.rnr_sent);
  assert_true(stb.drops[SRD_DROP_RNR] >= 2);

  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(a.status, 0);
  assert_int_equal(b.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  /* RNR is not loss: nothing counted as lost. */
  srd_ep_get_stats(tp.ep[0], &sta);
  assert_int_equal(sta.losses_rack + sta.losses_rto, 0);
  tpair_fini(&tp);
}

/* Past its RNR budget the send fails with SRD_ERR_RNR. */
static void test_msg_rnr_exhausted(void **state) {
  static uint8_t msg[3000];
  srd_settings sa, sb;
  srd_cqe a;
  srd_ep_stats st;
  tpair tp;
  (void)state;

  srd_settings_default(&sa);
  sa.rnr_retries = 3;
  srd_settings_default(&sb);
  sb.unexp_msgs = 0;
  tpair_init(&tp, &sa, &sb, 4, 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, 10 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(a.status, SRD_ERR_RNR);
  srd_ep_get_stats(tp.ep[0], &st);
  /* One counted RNR per backoff epoch: the budget plus the last. */
  assert_true(st.rnr_received >= 4);
  assert_int_equal(tpair_poll(&tp, 1, &a, 1), 0);
  tpair_fini(&tp);
}

/* A receiver that drains, however slowly, is never past its RNR budget:
   32 messages queued behind one posted receive are each refused in many
   backoff epochs while the others go in, far more than the budget of 2,
   and all of them arrive. */
static void test_msg_rnr_slow_receiver(void **state) {
  srd_loop_cfg cfg;
  srd_loop_result res;
  (void)state;

  srd_loop_cfg_default(&cfg);
  cfg.seed = tu_seed("msg_rnr_slow_receiver");
  cfg.n_paths = 4;
  cfg.messages = 200;
  cfg.size = 16384;
  cfg.inflight = 32;
  cfg.recv_window = 1;
  cfg.settings.unexp_msgs = 0;
  cfg.settings.rnr_retries = 2;
  assert_int_equal(srd_loop_run(&cfg, &res), 0);
  assert_true(res.finished);
  assert_int_equal(res.completed_ok, 200);
  assert_int_equal(res.completed_err, 0);
  assert_int_equal(res.delivered, 200);
  assert_int_equal(res.corrupted, 0);
  /* Every message but the first few waited behind others. */
  assert_true(res.b.rnr_sent > 200 * 2);
}

/* Below one full packet of window, small packets still fill the window:
   a 4000-byte window holds many 64-byte messages, not one per round
   trip. */
static void test_msg_small_packets_fill_small_window(void **state) {
  static uint8_t msg[64], rbuf[64 * 64];
  srd_settings sa;
  srd_cqe c;
  tpair tp;
  size_t i, data = 0;
  (void)state;

  srd_settings_default(&sa);
  sa.cc = "fixed";
  sa.cc_fixed_window = 4000; /* below one 8 KiB packet */
  tpair_init(&tp, &sa, NULL, 4, 0);
  for (i = 0; i < 64; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf + 64 * i, 64, NULL, tp.now), 0);
  }
  /* A first message establishes the session. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_MS);
  assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
  assert_int_equal(c.status, 0);
  for (i = 0; i < 20; ++i) {
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
        0);
  }
  /* For one round trip nothing comes back (nothing is delivered): what
     goes out is what the window allows.  Paced at srtt x 112 / 4000 per
     packet, 20 packets of 112 bytes fit in 4000 bytes and in the RTT. */
  for (i = 0; i < 40; ++i) {
    size_t k;
    tp.now += SRD_US;
    if (srd_ep_get_expiry(tp.ep[0]) <= tp.now) {
      srd_ep_handle_expiry(tp.ep[0], tp.now);
    }
    tpair_collect(&tp);
    for (k = 0; k < tp.n; ++k) {
      data += tp.q[k].from == 0 && tp.q[k].type == 1;
    }
    tp.n = 0;
  }
  assert_int_equal(data, 20);
  tpair_fini(&tp);
}

/* A packet that claims to come from our own incarnation (our handshake
   reflected by an echo service at the peer's address) is dropped: no
   session with ourselves. */
static void test_msg_reflected_handshake(void **state) {
  static uint8_t msg[100];
  srd_peer_stats ps;
  srd_ep_stats st;
  tpair tp;
  size_t i, reflected = 0;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_collect(&tp);
  for (i = 0; i < tp.n; ++i) {
    srd_path path = {tp.peer[0], tp.q[i].path};
    if (tp.q[i].from != 0) {
      continue;
    }
    assert_int_equal(
        srd_ep_read_pkt(tp.ep[0], &path, tp.q[i].data, tp.q[i].len, tp.now),
        SRD_ERR_STALE);
    ++reflected;
  }
  tp.n = 0;
  assert_true(reflected >= 1);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &ps), 0);
  assert_int_not_equal(ps.state, SRD_PEER_STATE_ESTABLISHED);
  srd_ep_get_stats(tp.ep[0], &st);
  assert_int_equal(st.drops[SRD_DROP_BAD_CONN], reflected);
  tpair_fini(&tp);
}

/* An echo whose hold time exceeds the measured round trip (clocks that
   disagree) gives no RTT sample; clamped to 1 ns it would be the base RTT
   for good and the delay target unreachable. */
static int inflate_hold(void *arg, const tpkt *p, uint64_t n) {
  tpkt *q = (tpkt *)p;
  uint32_t k, nr, ne;
  (void)arg, (void)n;
  if (p->type != 2 || p->len < SRD_PKT_ACK_HDR_LEN) {
    return TP_DELIVER;
  }
  nr = q->data[26];
  ne = q->data[27];
  for (k = 0; k < ne; ++k) {
    uint8_t *h = q->data + SRD_PKT_ACK_HDR_LEN + 4 * nr + 20 * k + 12;
    h[0] = h[1] = h[2] = h[3] = 0xff; /* hold: 4.3 s */
  }
  srd_pkt_seal(q->data, q->len); /* a receiver that means it */
  return TP_DELIVER;
}

static void test_msg_hold_beyond_rtt_no_sample(void **state) {
  static uint8_t msg[30000], rbuf[30000];
  srd_peer_stats ps;
  srd_cqe c;
  tpair tp;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = inflate_hold;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, 0), 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, 0), 0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
  assert_int_equal(c.status, 0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &ps), 0);
  /* Only the handshake's round trip was sampled. */
  assert_int_equal(ps.rtt_samples, 1);
  assert_true(ps.min_rtt > 1000);
  tpair_fini(&tp);
}

/* A response carries the acknowledgement of its request: one datagram
   each way, no acknowledgement packet of its own. */
static void test_msg_ack_rides_on_response(void **state) {
  static uint8_t req[100], resp[200], rbuf[2][300];
  srd_ep_stats st;
  srd_cqe c;
  tpair tp;
  size_t i, k, data = 0, acks = 0, with_ack = 0;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  for (k = 0; k < 2; ++k) {
    assert_int_equal(srd_ep_post_recv(tp.ep[k], rbuf[k], 300, NULL, 0), 0);
  }
  /* Establish with a first exchange, then settle. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], req, sizeof(req), NULL, 0), 0);
  tpair_run(&tp, SRD_MS);
  assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &c, 1), 1);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf[1], 300, NULL, tp.now), 0);

  /* A request reaches B; B answers at once. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], req, sizeof(req), NULL, tp.now),
      0);
  tpair_collect(&tp);
  assert_int_equal(tp.n, 1);
  tp.now += tp.delay;
  tpair_deliver(&tp);
  assert_int_equal(tpair_poll(&tp, 1, &c, 1), 1);
  assert_int_equal(c.len, sizeof(req));
  assert_int_equal(
      srd_ep_post_send(tp.ep[1], tp.peer[1], resp, sizeof(resp), NULL, tp.now),
      0);
  tpair_collect(&tp);
  for (i = 0; i < tp.n; ++i) {
    if (tp.q[i].from != 1) {
      continue;
    }
    data += tp.q[i].type == 1;
    acks += tp.q[i].type == 2;
    with_ack += tp.q[i].type == 1 && (tp.q[i].data[3] & 2);
  }
  assert_int_equal(data, 1);
  assert_int_equal(with_ack, 1);
  assert_int_equal(acks, 0);
  /* It acknowledges the request: A's send completes on it. */
  tp.now += tp.delay;
  tpair_deliver(&tp);
  assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
  assert_int_equal(c.op, SRD_OP_SEND);
  assert_int_equal(c.status, 0);
  assert_int_equal(tpair_poll(&tp, 0, &c, 1), 1);
  assert_int_equal(c.op, SRD_OP_RECV);
  assert_int_equal(c.len, sizeof(resp));
  srd_ep_get_stats(tp.ep[1], &st);
  assert_true(st.acks_on_data >= 1);
  tpair_fini(&tp);
}

/* A receive buffer smaller than the message: both sides hear of it. */
static void test_msg_truncated(void **state) {
  static uint8_t msg[10000], rbuf[4000], rbuf2[10000];
  srd_cqe a[2], b;
  tpair tp;
  int k;
  (void)state;

  fill(msg, sizeof(msg), 3);
  tpair_init(&tp, NULL, NULL, 4, 0);
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), (void *)1, tp.now), 0);
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf2, sizeof(rbuf2), (void *)2, tp.now), 0);
  assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                    (void *)1, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 100, (void *)2, tp.now), 0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, SRD_ERR_TRUNCATED);
  assert_ptr_equal(b.user_ctx, (void *)1);
  assert_int_equal(b.len, sizeof(msg));
  /* The next message is unaffected and takes the next buffer. */
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, 0);
  assert_int_equal(b.len, 100);
  assert_ptr_equal(b.user_ctx, (void *)2);
  assert_int_equal(tpair_poll(&tp, 0, a, 2), 2);
  for (k = 0; k < 2; ++k) {
    if (a[k].user_ctx == (void *)1) {
      assert_int_equal(a[k].status, SRD_ERR_REMOTE_TRUNCATED);
    } else {
      assert_int_equal(a[k].status, 0);
    }
  }
  tpair_fini(&tp);
}

/* Even when every NACK is lost for a while, the failure sticks: late
   copies of the truncated message's packets keep being refused. */
static int drop_acks_until(void *arg, const tpkt *p, uint64_t n) {
  int *budget = arg;
  (void)n;
  if (p->from == 1 && p->type == 2 /* ack */ && *budget > 0) {
    --*budget;
    return TP_DROP;
  }
  return TP_DELIVER;
}

static void test_msg_truncated_nack_lost(void **state) {
  static uint8_t msg[10000], rbuf[4000];
  int budget = 3;
  srd_cqe a, b;
  tpair tp;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = drop_acks_until;
  tp.filter_arg = &budget;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(budget, 0);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, SRD_ERR_TRUNCATED);
  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(a.status, SRD_ERR_REMOTE_TRUNCATED);
  tpair_fini(&tp);
}

/* Deliver A's data packets message by message in the order given by
   |order| (message index by arrival). */
typedef struct byorder {
  tpkt *pkts;
  size_t n;
  int holding;
} byorder;

static int hold_all_data(void *arg, const tpkt *p, uint64_t n) {
  byorder *h = arg;
  (void)n;
  if (h->holding && p->from == 0 && p->type == PKT_DATA) {
    h->pkts = realloc(h->pkts, (h->n + 1) * sizeof(tpkt));
    h->pkts[h->n++] = *p;
    return TP_DROP;
  }
  return TP_DELIVER;
}

/* reorder_delivery runs 4 messages whose packets arrive message 3 first,
   then 2, 1, 0, and returns the delivery order in |got|. */
static void reorder_delivery(int ordered, uint32_t got[4]) {
  static uint8_t msgs[4][2000], rbuf[4][2000];
  byorder h = {NULL, 0, 1};
  srd_cqe cqe[4];
  uint32_t first_id = 0;
  tpair tp;
  int i, m;
  size_t k, n;

  tpair_init(&tp, NULL, NULL, 4, ordered);
  tp.filter = hold_all_data;
  tp.filter_arg = &h;
  for (i = 0; i < 4; ++i) {
    fill(msgs[i], sizeof(msgs[i]), (uint32_t)i);
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
    assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msgs[i],
                                      sizeof(msgs[i]), NULL, tp.now),
                     0);
  }
  tpair_run(&tp, 20 * SRD_US);
  assert_int_equal(h.n, 4);
  first_id = DATA_MSG_ID(&h.pkts[0]);
  for (m = 3; m >= 0; --m) {
    for (k = 0; k < h.n; ++k) {
      if (DATA_MSG_ID(&h.pkts[k]) == first_id + (uint32_t)m) {
        srd_path path = {tp.peer[1], h.pkts[k].path};
        srd_ep_read_pkt(tp.ep[1], &path, h.pkts[k].data, h.pkts[k].len, tp.now);
      }
    }
  }
  free(h.pkts);
  h.holding = 0;
  tpair_run(&tp, SRD_S);
  n = tpair_poll(&tp, 1, cqe, 4);
  assert_int_equal(n, 4);
  for (k = 0; k < 4; ++k) {
    assert_int_equal(cqe[k].status, 0);
    got[k] = cqe[k].msg_id - first_id;
    assert_memory_equal(cqe[k].buf, msgs[got[k]], sizeof(msgs[0]));
  }
  tpair_fini(&tp);
}

static void test_msg_ordered_vs_unordered(void **state) {
  uint32_t got[4];
  (void)state;

  /* Unordered: delivered as they complete, newest first here. */
  reorder_delivery(0, got);
  assert_int_equal(got[0], 3);
  assert_int_equal(got[1], 2);
  assert_int_equal(got[2], 1);
  assert_int_equal(got[3], 0);
  /* Ordered: in send order whatever the arrival order. */
  reorder_delivery(1, got);
  assert_int_equal(got[0], 0);
  assert_int_equal(got[1], 1);
  assert_int_equal(got[2], 2);
  assert_int_equal(got[3], 3);
}

/* Message ids start just below 2^32 (srd_wrap_early), so 600 messages
   cross the wrap; each is delivered once, in order when ordered. */
static void run_wrap(int ordered) {
  enum { N = 600 };
  static uint8_t msgs[N][64];
  static uint8_t rbuf[64][64];
  uint32_t delivered = 0, completed = 0, last_idx = 0;
  int seen_wrap = 0, first = 1;
  uint32_t prev_id = 0;
  srd_cqe cqe[64];
  tpair tp;
  uint32_t i, posted = 0;
  size_t n, k;

  tpair_init(&tp, NULL, NULL, 16, ordered);
  for (i = 0; i < 64; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf[i], 64, (void *)(uintptr_t)i, tp.now),
        0);
  }
  while (completed < N) {
    while (posted < N && posted - completed < 48) {
      memset(msgs[posted], 0, 64);
      memcpy(msgs[posted], &posted, sizeof(posted));
      assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msgs[posted], 64,
                                        NULL, tp.now),
                       0);
      ++posted;
    }
    tpair_run(&tp, tp.now + 50 * SRD_US);
    while ((n = tpair_poll(&tp, 0, cqe, 64)) > 0) {
      for (k = 0; k < n; ++k) {
        assert_int_equal(cqe[k].status, 0);
        if (!first && cqe[k].msg_id < prev_id) {
          seen_wrap = 1;
        }
        prev_id = cqe[k].msg_id;
        first = 0;
      }
      completed += (uint32_t)n;
    }
    while ((n = tpair_poll(&tp, 1, cqe, 64)) > 0) {
      for (k = 0; k < n; ++k) {
        uint32_t idx;
        assert_int_equal(cqe[k].status, 0);
        memcpy(&idx, cqe[k].buf, sizeof(idx));
        assert_true(idx < N);
        if (ordered) {
          assert_int_equal(idx, delivered);
        }
        last_idx = idx;
        ++delivered;
        assert_int_equal(
            srd_ep_post_recv(tp.ep[1], cqe[k].buf, 64, cqe[k].user_ctx, tp.now),
            0);
      }
    }
  }
  (void)last_idx;
  assert_int_equal(delivered, N);
  assert_true(seen_wrap);
  tpair_fini(&tp);
}

static void test_msg_id_wraparound(void **state) {
  (void)state;
  run_wrap(0);
  run_wrap(1);
}

/* The fragment size is the smaller MTU of the two ends. */
static void test_msg_mtu_negotiated(void **state) {
  static uint8_t msg[10000], rbuf[10000];
  srd_settings sa, sb;
  srd_peer_stats st;
  srd_cqe b;
  tpair tp;
  (void)state;

  srd_settings_default(&sa);
  srd_settings_default(&sb);
  sb.mtu = 1500;
  fill(msg, sizeof(msg), 1);
  tpair_init(&tp, &sa, &sb, 4, 0);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, 0);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &st), 0);
  assert_int_equal(st.mtu, 1500);
  assert_int_equal(st.pkts_sent, 7); /* ceil(10000 / 1500) */
  tpair_fini(&tp);
}

/* A message larger than the receiver's maximum fails at the sender. */
static void test_msg_too_long_for_peer(void **state) {
  static uint8_t msg[8192], rbuf[8192];
  srd_settings sb;
  srd_cqe a[2];
  tpair tp;
  (void)state;

  srd_settings_default(&sb);
  sb.max_msg_size = 4096;
  tpair_init(&tp, NULL, &sb, 4, 0);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 8192, (void *)1, tp.now), 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 4096, (void *)2, tp.now), 0);
  tpair_run(&tp, SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, a, 2), 2);
  assert_int_equal(a[0].status, SRD_ERR_MSG_TOO_LONG);
  assert_ptr_equal(a[0].user_ctx, (void *)1);
  assert_int_equal(a[1].status, 0);
  tpair_fini(&tp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_msg_sizes_in_place),
      cmocka_unit_test(test_msg_fragments_reversed),
      cmocka_unit_test(test_msg_unexpected_queue),
      cmocka_unit_test(test_msg_unexpected_then_posted),
      cmocka_unit_test(test_msg_rnr_then_success),
      cmocka_unit_test(test_msg_rnr_exhausted),
      cmocka_unit_test(test_msg_rnr_slow_receiver),
      cmocka_unit_test(test_msg_small_packets_fill_small_window),
      cmocka_unit_test(test_msg_reflected_handshake),
      cmocka_unit_test(test_msg_hold_beyond_rtt_no_sample),
      cmocka_unit_test(test_msg_ack_rides_on_response),
      cmocka_unit_test(test_msg_truncated),
      cmocka_unit_test(test_msg_truncated_nack_lost),
      cmocka_unit_test(test_msg_ordered_vs_unordered),
      cmocka_unit_test(test_msg_id_wraparound),
      cmocka_unit_test(test_msg_mtu_negotiated),
      cmocka_unit_test(test_msg_too_long_for_peer),
  };
  return cmocka_run_group_tests_name("msg", tests, NULL, NULL);
}
