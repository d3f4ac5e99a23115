/*
 * test_hs.c: the stateless handshake responder (srd_ep_answer_hs,
 * srd_ep_accept_cookie): answers no larger than their requests and no
 * peer for them; a forged, modified, misaddressed, expired or replayed
 * echo creates nothing; a valid one creates exactly one established peer
 * whose first data is delivered once; lost answers and echoes are
 * recovered by the initiator's retries; key rotation.
 */
#include "testutil.h"

#include <string.h>

#include "srd_macro.h"
#include "srd_pkt.h"

#define MSG_LEN 3000
#define BUF 70000

/* A client A with a peer for the server S, which has none until a cookie
   comes back; S's driver names A by the address |addr|. */
typedef struct hs_net {
  srd_ep *a, *s;
  srd_peer_id a_peer, s_peer;
  int s_has;
  srd_peer_settings ps;
  const char *addr;
  srd_tstamp now;
  int drop_resp, drop_confirm, drop_data; /* drop the first N of each */
  uint64_t req_bytes, resp_bytes, n_resp;
  uint8_t last_echo[BUF]; /* the last HS_CONFIRM or echoing DATA from A */
  size_t last_echo_len;
  int accept_rv; /* what the last srd_ep_accept_cookie returned */
  int n_again;   /* how many times it said SRD_ERR_AGAIN */
} hs_net;

static uint8_t pkt[BUF];
static uint8_t msg[MSG_LEN], rbuf[MSG_LEN];

static void net_init(hs_net *n, uint64_t seed) {
  srd_settings s;

  memset(n, 0, sizeof(*n));
  srd_settings_default(&s);
  s.mtu = 1024;
  s.seed = seed;
  assert_int_equal(srd_ep_new(&n->a, &s, srd_mem_default()), 0);
  s.seed = seed + 1;
  s.max_peers = 4;
  assert_int_equal(srd_ep_new(&n->s, &s, srd_mem_default()), 0);
  srd_peer_settings_default(&n->ps);
  n->ps.n_paths = 4;
  assert_int_equal(srd_ep_add_peer(n->a, &n->ps, &n->a_peer), 0);
  n->addr = "198.18.0.1:49152";
  n->now = 1000 * SRD_S; /* well into a cookie bucket's life */
}

static void net_fini(hs_net *n) {
  srd_ep_del(n->a);
  srd_ep_del(n->s);
}

static size_t n_peers(srd_ep *ep) {
  srd_peer_stats st;
  size_t k = 0;
  uint32_t i;

  for (i = 0; i < 16; ++i) {
    k += srd_ep_get_peer_stats(ep, i, &st) == 0;
  }
  return k;
}

/* to_s is S's driver: a known address goes to its peer; an unknown one's
   request is answered statelessly, its echo may create the peer. */
static void to_s(hs_net *n, const uint8_t *p, size_t len) {
  srd_path path = {0, 0};
  uint8_t out[SRD_PKT_HS_RESP_LEN];
  uint32_t rpath;
  srd_ssize r;

  if (p[1] == SRD_PKT_HS_CONFIRM ||
      (p[1] == SRD_PKT_DATA && (p[3] & SRD_DATA_FLAG_HS_ECHO))) {
    memcpy(n->last_echo, p, len);
    n->last_echo_len = len;
  }
  if (!n->s_has && p[1] == SRD_PKT_HS_REQ) {
    size_t before = n_peers(n->s);
    r = srd_ep_answer_hs(n->s, &n->ps, n->addr, strlen(n->addr), p, len, out,
                         sizeof(out), &rpath, n->now);
    assert_true(r > 0);
    assert_true((size_t)r <= len);
    n->req_bytes += len;
    n->resp_bytes += (size_t)r;
    assert_true(n_peers(n->s) == before);
    if (n->n_resp++ < (uint64_t)n->drop_resp) {
      return;
    }
    path.peer = n->a_peer;
    path.path = rpath;
    srd_ep_read_pkt(n->a, &path, out, (size_t)r, n->now);
    return;
  }
  if (!n->s_has) {
    n->accept_rv = srd_ep_accept_cookie(n->s, &n->ps, n->addr, strlen(n->addr),
                                        p, len, &n->s_peer, n->now);
    n->n_again += n->accept_rv == SRD_ERR_AGAIN;
    if (n->accept_rv != 0) {
      return;
    }
    n->s_has = 1;
  }
  path.peer = n->s_peer;
  srd_ep_read_pkt(n->s, &path, p, len, n->now);
}

static void step(hs_net *n) {
  srd_path path;
  srd_ssize len;
  srd_tstamp t;

  while ((len = srd_ep_write_pkt(n->a, &path, pkt, sizeof(pkt), n->now)) > 0) {
    if (pkt[1] == SRD_PKT_HS_CONFIRM && n->drop_confirm > 0) {
      --n->drop_confirm;
      continue;
    }
    if (pkt[1] == SRD_PKT_DATA && n->drop_data > 0) {
      --n->drop_data;
      continue;
    }
    to_s(n, pkt, (size_t)len);
  }
  if (n->s_has) {
    while ((len = srd_ep_write_pkt(n->s, &path, pkt, sizeof(pkt), n->now)) >
           0) {
      path.peer = n->a_peer;
      srd_ep_read_pkt(n->a, &path, pkt, (size_t)len, n->now);
    }
  }
  t = srd_min(srd_ep_get_expiry(n->a), srd_ep_get_expiry(n->s));
  n->now = srd_max(n->now + SRD_US, t == SRD_TSTAMP_NONE ? 0 : t);
  srd_ep_handle_expiry(n->a, n->now);
  srd_ep_handle_expiry(n->s, n->now);
}

/* run sends one message A -> S and runs until both completions. */
static void run_one(hs_net *n, srd_cqe *sent, srd_cqe *got) {
  int have_sent = 0, have_got = 0, i;

  assert_int_equal(srd_ep_post_recv(n->s, rbuf, sizeof(rbuf), NULL, n->now), 0);
  assert_int_equal(
      srd_ep_post_send(n->a, n->a_peer, msg, sizeof(msg), NULL, n->now), 0);
  for (i = 0; i < 200000 && !(have_sent && have_got); ++i) {
    step(n);
    have_sent += (int)srd_ep_poll_cq(n->a, sent, 1);
    have_got += (int)srd_ep_poll_cq(n->s, got, 1);
  }
  assert_int_equal(have_sent, 1);
  assert_int_equal(have_got, 1);
}

static void test_hs_answer_not_larger(void **state) {
  hs_net n;
  srd_path path;
  srd_ep_stats st;
  uint8_t out[256];
  uint32_t rp;
  srd_ssize len, r;
  (void)state;

  net_init(&n, 11);
  assert_int_equal(
      srd_ep_post_send(n.a, n.a_peer, msg, sizeof(msg), NULL, n.now), 0);
  len = srd_ep_write_pkt(n.a, &path, pkt, sizeof(pkt), n.now);
  assert_int_equal(pkt[1], SRD_PKT_HS_REQ);
  assert_int_equal(len, SRD_PKT_HS_REQ_LEN);
  r = srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, (size_t)len, out, sizeof(out),
                       &rp, n.now);
  assert_int_equal(r, SRD_PKT_HS_RESP_LEN);
  assert_true(r <= len);
  assert_int_equal(out[1], SRD_PKT_HS_RESP);
  assert_true(rp < n.ps.n_paths);
  /* Nothing kept: no peer, and the same request answered again. */
  assert_int_equal(n_peers(n.s), 0);
  assert_true(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, (size_t)len, out,
                               sizeof(out), NULL, n.now) == r);
  /* Shorter than the answer (a version-2 request, or cut): refused. */
  assert_int_equal(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, 44, out,
                                    sizeof(out), NULL, n.now),
                   SRD_ERR_PROTO);
  assert_int_equal(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt,
                                    SRD_PKT_HS_RESP_LEN - 1, out, sizeof(out),
                                    NULL, n.now),
                   SRD_ERR_PROTO);
  /* No room, a long address, another type. */
  assert_int_equal(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, (size_t)len, out,
                                    SRD_PKT_HS_RESP_LEN - 1, NULL, n.now),
                   SRD_ERR_NOBUF);
  assert_int_equal(srd_ep_answer_hs(n.s, &n.ps, pkt, SRD_HS_ADDR_MAX + 1, pkt,
                                    (size_t)len, out, sizeof(out), NULL, n.now),
                   SRD_ERR_INVALID_ARGUMENT);
  pkt[1] = SRD_PKT_SYNC;
  assert_true(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, (size_t)len, out,
                               sizeof(out), NULL, n.now) < 0);
  srd_ep_get_stats(n.s, &st);
  assert_int_equal(st.hs_answered, 2);
  assert_int_equal(st.hs_refused, 3);
  assert_int_equal(n_peers(n.s), 0);
  net_fini(&n);
}

/* A request that carries one of S's own incarnation ids is S's own,
   reflected back: no answer. */
static void test_hs_reflected_request(void **state) {
  hs_net n;
  srd_peer_id x;
  srd_path path;
  uint8_t out[256];
  srd_ssize len;
  (void)state;

  net_init(&n, 12);
  assert_int_equal(srd_ep_add_peer(n.s, &n.ps, &x), 0);
  assert_int_equal(srd_ep_post_send(n.s, x, msg, sizeof(msg), NULL, n.now), 0);
  len = srd_ep_write_pkt(n.s, &path, pkt, sizeof(pkt), n.now);
  assert_int_equal(pkt[1], SRD_PKT_HS_REQ);
  assert_int_equal(srd_ep_answer_hs(n.s, &n.ps, "x", 1, pkt, (size_t)len, out,
                                    sizeof(out), NULL, n.now),
                   SRD_ERR_STALE);
  net_fini(&n);
}

static void test_hs_valid_echo_one_peer(void **state) {
  hs_net n;
  srd_cqe sent, got;
  srd_peer_stats ps;
  srd_ep_stats st;
  srd_path path;
  srd_peer_id id;
  size_t i;
  (void)state;

  for (i = 0; i < sizeof(msg); ++i) {
    msg[i] = (uint8_t)(i * 13);
  }
  net_init(&n, 13);
  run_one(&n, &sent, &got);
  assert_int_equal(sent.status, 0);
  assert_int_equal(got.status, 0);
  assert_int_equal(got.len, sizeof(msg));
  assert_memory_equal(rbuf, msg, sizeof(msg));
  assert_int_equal(n_peers(n.s), 1);
  assert_int_equal(srd_ep_get_peer_stats(n.s, n.s_peer, &ps), 0);
  assert_int_equal(ps.state, SRD_PEER_STATE_ESTABLISHED);
  {
    srd_peer_stats pa;
    assert_int_equal(srd_ep_get_peer_stats(n.a, n.a_peer, &pa), 0);
    assert_int_equal(ps.peer_conn_id, pa.local_conn_id);
    assert_int_equal(ps.local_conn_id, pa.peer_conn_id);
  }
  srd_ep_get_stats(n.s, &st);
  assert_int_equal(st.hs_answered, 1);
  assert_int_equal(st.hs_accepted, 1);
  assert_true(n.resp_bytes <= n.req_bytes);
  /* A replayed echo creates no second peer, and delivers nothing twice
     (the known address goes to the peer, whose session drops it). */
  assert_true(n.last_echo_len > 0);
  assert_int_equal(srd_ep_accept_cookie(n.s, &n.ps, n.addr, strlen(n.addr),
                                        n.last_echo, n.last_echo_len, &id,
                                        n.now),
                   SRD_ERR_STALE);
  assert_int_equal(n_peers(n.s), 1);
  path.peer = n.s_peer;
  path.path = 0;
  srd_ep_read_pkt(n.s, &path, n.last_echo, n.last_echo_len, n.now);
  for (i = 0; i < 1000; ++i) {
    step(&n);
    assert_int_equal(srd_ep_poll_cq(n.s, &got, 1), 0);
  }
  /* The session works the other way too. */
  assert_int_equal(srd_ep_post_recv(n.a, rbuf, sizeof(rbuf), NULL, n.now), 0);
  assert_int_equal(
      srd_ep_post_send(n.s, n.s_peer, msg, sizeof(msg), NULL, n.now), 0);
  for (i = 0; i < 100000 && srd_ep_poll_cq(n.a, &got, 1) == 0; ++i) {
    step(&n);
  }
  assert_true(i < 100000);
  assert_int_equal(got.op, SRD_OP_RECV);
  assert_int_equal(got.status, 0);
  /* Removed, its echo replayed within the cookie's life: still nothing. */
  assert_int_equal(srd_ep_remove_peer(n.s, n.s_peer, n.now), 0);
  assert_int_equal(srd_ep_accept_cookie(n.s, &n.ps, n.addr, strlen(n.addr),
                                        n.last_echo, n.last_echo_len, &id,
                                        n.now),
                   SRD_ERR_STALE);
  assert_int_equal(n_peers(n.s), 0);
  net_fini(&n);
}

/* try_echo feeds a copy of |e| with byte |off| xored by |x| (resealed
   over |hdr| bytes; x 0: as is) to S's accept. */
static int try_echo(hs_net *n, const uint8_t *e, size_t len, size_t hdr,
                    size_t off, uint8_t x, const char *addr, srd_tstamp now) {
  srd_peer_id id;
  memcpy(pkt, e, len);
  pkt[off] ^= x;
  srd_pkt_seal(pkt, hdr);
  return srd_ep_accept_cookie(n->s, &n->ps, addr, strlen(addr), pkt, len, &id,
                              now);
}

static void test_hs_bad_cookies_refused(void **state) {
  hs_net n;
  srd_path path;
  srd_ssize len;
  uint8_t out[64], e[BUF];
  size_t elen, hdr = SRD_PKT_HS_CONFIRM_LEN, off;
  uint32_t rp;
  srd_ep_stats st;
  srd_duration per;
  static const uint8_t key[16] = {1, 2, 3};
  (void)state;

  net_init(&n, 14);
  per = 2 * SRD_S; /* the default hs_cookie_period */
  assert_int_equal(
      srd_ep_post_send(n.a, n.a_peer, msg, sizeof(msg), NULL, n.now), 0);
  len = srd_ep_write_pkt(n.a, &path, pkt, sizeof(pkt), n.now);
  len = srd_ep_answer_hs(n.s, &n.ps, n.addr, strlen(n.addr), pkt, (size_t)len,
                         out, sizeof(out), &rp, n.now);
  assert_int_equal(len, SRD_PKT_HS_RESP_LEN);
  path.peer = n.a_peer;
  path.path = rp;
  assert_int_equal(srd_ep_read_pkt(n.a, &path, out, (size_t)len, n.now), 0);
  /* A's HS_CONFIRM. */
  elen = 0;
  while ((len = srd_ep_write_pkt(n.a, &path, pkt, sizeof(pkt), n.now)) > 0) {
    if (pkt[1] == SRD_PKT_HS_CONFIRM) {
      memcpy(e, pkt, (size_t)len);
      elen = (size_t)len;
    }
  }
  assert_int_equal(elen, SRD_PKT_HS_CONFIRM_LEN);
  /* Every bit of the cookie, of the ids and of the parameters is bound
     (a changed parameter that is still valid: the window 1024 -> 512
     (bit 0x04 of byte 38 to 0x02: two flips); dst_conn; src_conn). */
  for (off = 20; off < 28; ++off) {
    assert_int_equal(try_echo(&n, e, elen, hdr, off, 0x10, n.addr, n.now),
                     SRD_ERR_STALE);
  }
  assert_int_equal(try_echo(&n, e, elen, hdr, 38, 0x06, n.addr, n.now),
                   SRD_ERR_STALE);
  assert_int_equal(try_echo(&n, e, elen, hdr, 8, 0x01, n.addr, n.now),
                   SRD_ERR_STALE);
  assert_int_equal(try_echo(&n, e, elen, hdr, 4, 0x01, n.addr, n.now),
                   SRD_ERR_STALE);
  /* From another address. */
  assert_int_equal(try_echo(&n, e, elen, hdr, 0, 0, "198.18.0.2:49152", n.now),
                   SRD_ERR_STALE);
  /* Expired: two buckets on. */
  assert_int_equal(try_echo(&n, e, elen, hdr, 0, 0, n.addr, n.now + 2 * per),
                   SRD_ERR_STALE);
  /* Not an echo at all: a DATA without the flag, an ACK... */
  assert_int_equal(n_peers(n.s), 0);
  /* Within the next bucket, under the key that one rotation replaced:
     still good (then once only). */
  assert_int_equal(srd_ep_set_hs_secret(n.s, key, sizeof(key)), 0);
  srd_ep_get_stats(n.s, &st);
  assert_int_equal(st.hs_accepted, 0);
  assert_int_equal(st.hs_refused, 13);
  assert_int_equal(try_echo(&n, e, elen, hdr, 0, 0, n.addr, n.now + per), 0);
  assert_int_equal(n_peers(n.s), 1);
  assert_int_equal(try_echo(&n, e, elen, hdr, 0, 0, n.addr, n.now + per),
                   SRD_ERR_STALE);
  assert_int_equal(n_peers(n.s), 1);
  net_fini(&n);

  /* Two rotations: the key that made it is gone. */
  net_init(&n, 15);
  assert_int_equal(srd_ep_set_hs_secret(n.s, key, 0), SRD_ERR_INVALID_ARGUMENT);
  memcpy(pkt, e, elen);
  assert_int_equal(srd_ep_set_hs_secret(n.s, key, sizeof(key)), 0);
  assert_int_equal(srd_ep_set_hs_secret(n.s, key + 1, sizeof(key) - 1), 0);
  assert_int_equal(try_echo(&n, e, elen, hdr, 0, 0, n.addr, n.now),
                   SRD_ERR_STALE);
  assert_int_equal(n_peers(n.s), 0);
  net_fini(&n);
}

/* A lost answer is recovered by the initiator's retried request, a lost
   HS_CONFIRM and first DATA by the data's retransmission, which carries
   the echo until acknowledged. */
static void test_hs_lost_answer_and_echo(void **state) {
  hs_net n;
  srd_cqe sent, got;
  srd_ep_stats st;
  (void)state;

  net_init(&n, 16);
  n.drop_resp = 2;
  n.drop_confirm = 1;
  n.drop_data = 3;
  run_one(&n, &sent, &got);
  assert_int_equal(sent.status, 0);
  assert_int_equal(got.status, 0);
  assert_int_equal(n_peers(n.s), 1);
  srd_ep_get_stats(n.s, &st);
  assert_int_equal(st.hs_answered, 3);
  assert_int_equal(st.hs_accepted, 1);
  assert_int_equal(st.msgs_recv_ok, 1);
  assert_true(n.resp_bytes <= n.req_bytes);
  net_fini(&n);
}

/* A full table refuses the proven newcomer clearly, and creates nothing. */
static void test_hs_table_full(void **state) {
  hs_net n;
  srd_peer_id x;
  int i;
  srd_cqe sent, got;
  (void)state;

  net_init(&n, 17);
  for (i = 0; i < 4; ++i) {
    assert_int_equal(srd_ep_add_peer(n.s, &n.ps, &x), 0);
  }
  assert_int_equal(srd_ep_post_recv(n.s, rbuf, sizeof(rbuf), NULL, n.now), 0);
  assert_int_equal(
      srd_ep_post_send(n.a, n.a_peer, msg, sizeof(msg), NULL, n.now), 0);
  for (i = 0; i < 2000; ++i) {
    step(&n);
  }
  assert_int_equal(n.s_has, 0);
  /* Refused for want of room while the cookie lived (later, expired). */
  assert_true(n.n_again > 0);
  assert_int_equal(n_peers(n.s), 4);
  assert_int_equal(srd_ep_poll_cq(n.s, &got, 1), 0);
  (void)sent;
  net_fini(&n);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hs_answer_not_larger),
      cmocka_unit_test(test_hs_reflected_request),
      cmocka_unit_test(test_hs_valid_echo_one_peer),
      cmocka_unit_test(test_hs_bad_cookies_refused),
      cmocka_unit_test(test_hs_lost_answer_and_echo),
      cmocka_unit_test(test_hs_table_full),
  };

  return cmocka_run_group_tests_name("hs", tests, NULL, NULL);
}
