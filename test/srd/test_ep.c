/*
 * test_ep.c: the endpoint API: settings, peers, posting, the completion
 * queue, errors, and a first transfer through the handshake.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static srd_ep *new_ep(const srd_settings *s) {
  srd_ep *ep = NULL;
  assert_int_equal(srd_ep_new(&ep, s, srd_mem_default()), 0);
  return ep;
}

static void test_ep_settings_default(void **state) {
  srd_settings s;
  srd_peer_settings ps;
  (void)state;

  srd_settings_default(&s);
  assert_int_equal(s.mtu, 8192);
  assert_int_equal(s.max_msg_size, 1u << 20);
  assert_string_equal(s.cc, "swift");
  assert_true(s.rto_min >= 10 * SRD_US && s.rto_min <= SRD_MS);
  assert_true(s.path_steering);
  srd_peer_settings_default(&ps);
  assert_int_equal(ps.n_paths, SRD_MAX_PATHS);
  assert_false(ps.ordered);
}

static void test_ep_new_rejects_bad_settings(void **state) {
  srd_settings s;
  srd_ep *ep = NULL;
  int i;
  (void)state;

  for (i = 0; i < 11; ++i) {
    srd_settings_default(&s);
    switch (i) {
    case 0:
      s.mtu = 100;
      break;
    case 1:
      s.mtu = 70000;
      break;
    case 2:
      s.msg_window = 1000;
      break;
    case 3:
      s.pkt_window = 8;
      break;
    case 4:
      s.rto_max = s.rto_min - 1;
      break;
    case 5:
      s.cc = "reno-please";
      break;
    case 6:
      s.max_msg_size = 0;
      break;
    case 7:
      s.max_peers = 0;
      break;
    case 8:
      s.ack_freq = 0;
      break;
    case 9:
      s.max_retries = 251;
      break;
    case 10:
      s.rnr_backoff_max = s.rnr_backoff_min - 1;
      break;
    }
    assert_int_equal(srd_ep_new(&ep, &s, srd_mem_default()),
                     SRD_ERR_INVALID_ARGUMENT);
  }
  srd_settings_default(&s);
  assert_int_equal(srd_ep_new(NULL, &s, srd_mem_default()),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_ep_new(&ep, NULL, srd_mem_default()),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_ep_new(&ep, &s, NULL), SRD_ERR_INVALID_ARGUMENT);
  srd_ep_del(NULL);
}

static void test_ep_conn_ids_distinct(void **state) {
  srd_settings s;
  srd_ep *a, *b, *c;
  (void)state;

  srd_settings_default(&s);
  s.seed = 1;
  a = new_ep(&s);
  s.seed = 2;
  b = new_ep(&s);
  s.seed = 1;
  c = new_ep(&s);
  assert_int_not_equal(srd_ep_conn_id(a), 0);
  assert_int_not_equal(srd_ep_conn_id(a), srd_ep_conn_id(b));
  /* Same seed, same incarnation id: drivers must pass fresh seeds. */
  assert_int_equal(srd_ep_conn_id(a), srd_ep_conn_id(c));
  srd_ep_del(a);
  srd_ep_del(b);
  srd_ep_del(c);
}

static void test_ep_peers(void **state) {
  srd_settings s;
  srd_peer_settings ps;
  srd_peer_id id, id2;
  srd_ep *ep;
  srd_peer_stats st;
  srd_path_stats pst;
  (void)state;

  srd_settings_default(&s);
  s.max_peers = 2;
  ep = new_ep(&s);
  srd_peer_settings_default(&ps);
  ps.n_paths = 0;
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id), SRD_ERR_INVALID_ARGUMENT);
  ps.n_paths = SRD_MAX_PATHS + 1;
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id), SRD_ERR_INVALID_ARGUMENT);
  ps.n_paths = 4;
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id), 0);
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id2), 0);
  assert_int_not_equal(id, id2);
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id2), SRD_ERR_AGAIN);

  assert_int_equal(srd_ep_get_peer_stats(ep, id, &st), 0);
  assert_int_equal(st.state, SRD_PEER_STATE_IDLE);
  assert_int_equal(st.n_paths, 4);
  assert_int_equal(st.peer_conn_id, 0);
  assert_int_equal(srd_ep_get_path_stats(ep, id, 3, 0, &pst), 0);
  /* A fresh path carries a full share. */
  assert_int_equal(pst.weight, 64);
  assert_int_equal(srd_ep_get_path_stats(ep, id, 4, 0, &pst),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_ep_get_peer_stats(ep, 7, &st), SRD_ERR_BAD_PEER);
  assert_int_equal(srd_ep_get_path_stats(ep, 7, 0, 0, &pst), SRD_ERR_BAD_PEER);

  assert_int_equal(srd_ep_remove_peer(ep, id, 0), 0);
  assert_int_equal(srd_ep_remove_peer(ep, id, 0), SRD_ERR_BAD_PEER);
  assert_int_equal(srd_ep_remove_peer(ep, 99, 0), SRD_ERR_BAD_PEER);
  /* The freed id is reused. */
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id2), 0);
  assert_int_equal(id2, id);
  srd_ep_del(ep);
}

static void test_ep_post_errors(void **state) {
  srd_settings s;
  srd_peer_settings ps;
  srd_peer_id id;
  srd_ep *ep;
  uint8_t buf[64];
  srd_cqe cqe[4];
  (void)state;

  srd_settings_default(&s);
  s.max_sends = 2;
  s.max_recvs = 1;
  s.max_msg_size = 4096;
  ep = new_ep(&s);
  srd_peer_settings_default(&ps);
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id), 0);

  assert_int_equal(srd_ep_post_send(ep, id + 1, buf, 8, NULL, 0),
                   SRD_ERR_BAD_PEER);
  assert_int_equal(srd_ep_post_send(ep, id, NULL, 8, NULL, 0),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_ep_post_send(ep, id, buf, 4097, NULL, 0),
                   SRD_ERR_MSG_TOO_LONG);
  assert_int_equal(srd_ep_post_send(ep, id, buf, 4096, NULL, 0), 0);
  assert_int_equal(srd_ep_post_send(ep, id, NULL, 0, NULL, 0), 0);
  assert_int_equal(srd_ep_post_send(ep, id, buf, 8, NULL, 0), SRD_ERR_AGAIN);

  assert_int_equal(srd_ep_post_recv(ep, NULL, 8, NULL, 0),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_ep_post_recv(ep, buf, sizeof(buf), NULL, 0), 0);
  assert_int_equal(srd_ep_post_recv(ep, buf, sizeof(buf), NULL, 0),
                   SRD_ERR_AGAIN);

  /* Flushing completes all three, and polling frees their slots. */
  srd_ep_flush(ep, 5);
  assert_int_equal(srd_ep_poll_cq(ep, cqe, 4), 3);
  assert_int_equal(cqe[0].status, SRD_ERR_CANCELED);
  assert_int_equal(cqe[1].status, SRD_ERR_CANCELED);
  assert_int_equal(cqe[2].status, SRD_ERR_CANCELED);
  assert_int_equal(cqe[2].op, SRD_OP_RECV);
  assert_int_equal(srd_ep_post_send(ep, id, buf, 8, NULL, 0), 0);
  assert_int_equal(srd_ep_post_recv(ep, buf, sizeof(buf), NULL, 0), 0);
  srd_ep_del(ep);
}

static void test_ep_io_argument_errors(void **state) {
  srd_settings s;
  srd_peer_settings ps;
  srd_peer_id id;
  srd_ep *ep;
  srd_path path = {42, 0};
  uint8_t buf[64] = {0}, small[8];
  srd_ep_stats st;
  (void)state;

  srd_settings_default(&s);
  ep = new_ep(&s);
  srd_peer_settings_default(&ps);
  assert_int_equal(srd_ep_add_peer(ep, &ps, &id), 0);
  assert_int_equal(srd_ep_get_expiry(ep), SRD_TSTAMP_NONE);
  assert_int_equal(srd_ep_write_pkt(ep, &path, buf, sizeof(buf), 0), 0);

  /* From a peer the driver never added. */
  assert_int_equal(srd_ep_read_pkt(ep, &path, buf, sizeof(buf), 0),
                   SRD_ERR_INVALID_ARGUMENT);
  srd_ep_get_stats(ep, &st);
  assert_int_equal(st.drops[SRD_DROP_BAD_PEER], 1);
  assert_int_equal(srd_ep_read_pkt(ep, NULL, buf, 1, 0),
                   SRD_ERR_INVALID_ARGUMENT);

  /* A handshake request is due after a send; 8 bytes cannot hold it. */
  assert_int_equal(srd_ep_post_send(ep, id, buf, 8, NULL, 0), 0);
  assert_int_equal(srd_ep_write_pkt(ep, &path, small, sizeof(small), 0),
                   SRD_ERR_NOBUF);
  assert_true(srd_ep_write_pkt(ep, &path, buf, sizeof(buf), 0) > 0);
  assert_int_equal(path.peer, id);
  srd_ep_del(ep);
}

static void test_ep_strerror(void **state) {
  static const int codes[] = {0,
                              SRD_ERR_INVALID_ARGUMENT,
                              SRD_ERR_NOBUF,
                              SRD_ERR_PROTO,
                              SRD_ERR_AGAIN,
                              SRD_ERR_MSG_TOO_LONG,
                              SRD_ERR_BAD_PEER,
                              SRD_ERR_PEER_UNRESPONSIVE,
                              SRD_ERR_PEER_UNREACHABLE,
                              SRD_ERR_RNR,
                              SRD_ERR_PEER_RESET,
                              SRD_ERR_CANCELED,
                              SRD_ERR_TRUNCATED,
                              SRD_ERR_REMOTE_TRUNCATED,
                              SRD_ERR_ABORTED,
                              SRD_ERR_STALE,
                              SRD_ERR_NOMEM};
  size_t i, j;
  (void)state;

  for (i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i) {
    assert_string_not_equal(srd_strerror(codes[i]), "unknown error");
    for (j = 0; j < i; ++j) {
      assert_string_not_equal(srd_strerror(codes[i]), srd_strerror(codes[j]));
    }
  }
  assert_string_equal(srd_strerror(-12345), "unknown error");
  assert_true(srd_err_is_fatal(SRD_ERR_NOMEM));
  assert_false(srd_err_is_fatal(SRD_ERR_PROTO));
  assert_false(srd_err_is_fatal(SRD_ERR_PEER_UNRESPONSIVE));
  for (i = 0; i < SRD_DROP_REASONS; ++i) {
    assert_string_not_equal(srd_drop_reason_name((srd_drop_reason)i),
                            "unknown");
  }
  assert_string_equal(srd_log_event_name(SRD_LOG_LOSS), "loss");
}

/* The first transfer: handshake, one message, both completions. */
static void test_ep_first_message(void **state) {
  tpair tp;
  uint8_t msg[20000], rbuf[32768];
  srd_cqe a, b;
  srd_peer_stats sa, sb;
  size_t i;
  (void)state;

  for (i = 0; i < sizeof(msg); ++i) {
    msg[i] = (uint8_t)(i * 31 + 7);
  }
  tpair_init(&tp, NULL, NULL, 8, 0);
  assert_int_equal(
      srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), (void *)2, tp.now), 0);
  assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                    (void *)1, tp.now),
                   0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &sa), 0);
  assert_int_equal(sa.state, SRD_PEER_STATE_HS_SENT);
  tpair_run(&tp, SRD_S);

  assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(a.op, SRD_OP_SEND);
  assert_int_equal(a.status, 0);
  assert_ptr_equal(a.user_ctx, (void *)1);
  assert_ptr_equal(a.buf, msg);
  assert_int_equal(a.len, sizeof(msg));
  assert_int_equal(a.peer, tp.peer[0]);
  assert_int_equal(b.op, SRD_OP_RECV);
  assert_int_equal(b.status, 0);
  assert_ptr_equal(b.user_ctx, (void *)2);
  assert_ptr_equal(b.buf, rbuf);
  assert_int_equal(b.len, sizeof(msg));
  assert_int_equal(b.peer, tp.peer[1]);
  assert_int_equal(a.msg_id, b.msg_id);
  assert_memory_equal(rbuf, msg, sizeof(msg));
  /* The delivery precedes the sender's completion. */
  assert_true(b.ts <= a.ts);

  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &sa), 0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[1], tp.peer[1], &sb), 0);
  assert_int_equal(sa.state, SRD_PEER_STATE_ESTABLISHED);
  assert_int_equal(sb.state, SRD_PEER_STATE_ESTABLISHED);
  assert_int_equal(sa.peer_conn_id, sb.local_conn_id);
  assert_int_equal(sb.peer_conn_id, sa.local_conn_id);
  assert_int_equal(sa.mtu, 8192);
  assert_true(sa.rtt_samples > 0);
  /* Three fragments, none lost. */
  assert_int_equal(sa.pkts_sent, 3);
  assert_int_equal(sa.retransmits, 0);
  assert_int_equal(sa.msgs_sent, 1);
  assert_int_equal(sb.msgs_received, 1);
  assert_int_equal(srd_ep_get_expiry(tp.ep[0]), SRD_TSTAMP_NONE);
  tpair_fini(&tp);
}

/* A peer's own mtu (its route's): the handshake settles both ends on the
   smaller offer, so B, which knows nothing of the route, sends A's size
   too; out of range is refused; above the endpoint's is the endpoint's. */
static int max_data_len(void *arg, const tpkt *p, uint64_t n) {
  size_t *max = arg;
  (void)n;
  if (p->type == 1 /* data */ && p->len > max[p->from]) {
    max[p->from] = p->len;
  }
  return TP_DELIVER;
}

static void test_ep_peer_mtu(void **state) {
  static uint8_t msg[20000], rbuf[2][32768];
  srd_peer_settings ps;
  srd_peer_stats sa, sb;
  srd_cqe c[4];
  size_t max[2] = {0, 0}, i;
  tpair tp;
  srd_peer_id id;
  (void)state;

  for (i = 0; i < sizeof(msg); ++i) {
    msg[i] = (uint8_t)(i * 13 + 1);
  }
  tpair_init(&tp, NULL, NULL, 4, 0);
  srd_peer_settings_default(&ps);
  ps.n_paths = 4;
  ps.mtu = 255;
  assert_int_equal(srd_ep_add_peer(tp.ep[0], &ps, &id),
                   SRD_ERR_INVALID_ARGUMENT);
  ps.mtu = 20000;
  assert_int_equal(srd_ep_add_peer(tp.ep[0], &ps, &id), 0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], id, &sa), 0);
  assert_int_equal(sa.mtu, 8192);
  assert_int_equal(srd_ep_remove_peer(tp.ep[0], id, tp.now), 0);
  assert_int_equal(srd_ep_remove_peer(tp.ep[0], tp.peer[0], tp.now), 0);
  ps.mtu = 1000;
  assert_int_equal(srd_ep_add_peer(tp.ep[0], &ps, &tp.peer[0]), 0);
  tp.filter = max_data_len;
  tp.filter_arg = max;
  for (i = 0; i < 2; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[i], rbuf[i], sizeof(rbuf[i]), NULL, tp.now), 0);
  }
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  /* B answers once it knows A: the same size back. */
  assert_int_equal(
      srd_ep_post_send(tp.ep[1], tp.peer[1], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, 2 * SRD_S);
  assert_int_equal(tpair_poll(&tp, 0, c, 4), 2);
  assert_int_equal(c[0].status, 0);
  assert_int_equal(c[1].status, 0);
  assert_int_equal(tpair_poll(&tp, 1, c, 4), 2);
  assert_int_equal(c[0].status, 0);
  assert_int_equal(c[1].status, 0);
  assert_memory_equal(rbuf[0], msg, sizeof(msg));
  assert_memory_equal(rbuf[1], msg, sizeof(msg));
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[0], tp.peer[0], &sa), 0);
  assert_int_equal(srd_ep_get_peer_stats(tp.ep[1], tp.peer[1], &sb), 0);
  assert_int_equal(sa.mtu, 1000);
  assert_int_equal(sb.mtu, 1000);
  /* 20 fragments each way, none longer than 1000 payload bytes. */
  assert_int_equal(sa.pkts_sent, 20);
  assert_int_equal(sb.pkts_sent, 20);
  for (i = 0; i < 2; ++i) {
    assert_true(max[i] > 1000 && max[i] <= 1000 + SRD_PKT_MAX_HDR);
  }
  tpair_fini(&tp);
}

/* Paths: one path pins every packet to path 0; n paths use all of them. */
static int record_paths(void *arg, const tpkt *p, uint64_t n) {
  uint64_t *mask = arg;
  (void)n;
  if (p->from == 0 && p->type == 1 /* data */) {
    *mask |= 1ULL << p->path;
  }
  return TP_DELIVER;
}

static void test_ep_paths_used(void **state) {
  static uint8_t msg[65536], rbuf[65536];
  uint32_t n_paths[] = {1, 5, 64};
  size_t k;
  (void)state;

  for (k = 0; k < 3; ++k) {
    tpair tp;
    uint64_t mask = 0;
    int i;
    tpair_init(&tp, NULL, NULL, n_paths[k], 0);
    tp.filter = record_paths;
    tp.filter_arg = &mask;
    for (i = 0; i < 8; ++i) {
      assert_int_equal(
          srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now), 0);
      assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                        NULL, tp.now),
                       0);
    }
    tpair_run(&tp, SRD_S);
    /* 64 data packets round-robin over the paths. */
    if (n_paths[k] == 64) {
      assert_true(mask == UINT64_MAX);
    } else {
      assert_true(mask == (1ULL << n_paths[k]) - 1);
    }
    tpair_fini(&tp);
  }
}

/* Path bursts: with path_burst_bytes, A's data packets go in runs of
   that many bytes' worth of whole packets on one path (packet k on the
   path of packet k - 1 unless k starts a run), and every path still
   carries runs. */
typedef struct runs {
  uint32_t last, n, bad, same; /* same: data packets on the path before */
  uint64_t mask;
} runs;

static int record_runs(void *arg, const tpkt *p, uint64_t n) {
  runs *r = arg;
  (void)n;
  if (p->from == 0 && p->type == 1 /* data */) {
    r->mask |= 1ULL << p->path;
    if (r->n % 3 != 0 && p->path != r->last) {
      ++r->bad;
    }
    if (r->n > 0 && p->path == r->last) {
      ++r->same;
    }
    r->last = p->path;
    ++r->n;
  }
  return TP_DELIVER;
}

/* send_recording_runs sends 8 messages of 64 KiB from A to B over 5
   paths with settings |s| and records the data packets' paths in |r|,
   after one message that gets every path acknowledged (runs go only on
   paths that have been). */
static void send_recording_runs(const srd_settings *s, runs *r) {
  static uint8_t msg[65536], rbuf[65536];
  tpair tp;
  int i;

  tpair_init(&tp, s, NULL, 5, 0);
  tp.filter = record_runs;
  tp.filter_arg = r;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
      0);
  tpair_run(&tp, SRD_S);
  memset(r, 0, sizeof(*r));
  for (i = 0; i < 8; ++i) {
    assert_int_equal(
        srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now), 0);
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, tp.now),
        0);
  }
  tpair_run(&tp, SRD_S);
  assert_true(r->mask == 0x1f);
  tpair_fini(&tp);
}

static void test_ep_path_burst(void **state) {
  srd_settings s;
  runs r;
  (void)state;

  srd_settings_default(&s);
  /* Room for three packets of 8192 + 56 bytes, not four. */
  s.path_burst_bytes = 4 * (8192 + 56) - 1;
  send_recording_runs(&s, &r);
  printf("  %u data packets on 5 paths in runs of 3, %u off their run\n", r.n,
         r.bad);
  assert_int_equal(r.n, 64);
  assert_int_equal(r.bad, 0);
  /* A window of two packets on 5 paths: a run would hold 4 * 2 / 5 of a
     path's share, so every packet picks its path (SRD_RUN_SHARES) and
     few follow the one before on its path (only where a cycle's order
     is reshuffled), where runs of 3 would put two in three there. */
  s.cc = "fixed";
  s.cc_fixed_window = 2 * (8192 + 56);
  send_recording_runs(&s, &r);
  printf("  window of 2 packets: %u data packets, %u on the path before\n", r.n,
         r.same);
  assert_true(r.n >= 64);
  assert_true(r.same * 4 < r.n);
  /* Beyond 1 MiB is refused. */
  srd_settings_default(&s);
  s.path_burst_bytes = (1u << 20) + 1;
  {
    srd_ep *ep = NULL;
    assert_int_equal(srd_ep_new(&ep, &s, srd_mem_default()),
                     SRD_ERR_INVALID_ARGUMENT);
  }
}

/* only_first_data lets one data packet from A through. */
static int only_first_data(void *arg, const tpkt *p, uint64_t n) {
  int *seen = arg;
  (void)n;
  if (p->from == 0 && p->type == 1) {
    return (*seen)++ == 0 ? TP_DELIVER : TP_DROP;
  }
  return TP_DELIVER;
}

/* Removing a peer completes its posted sends and claimed receives. */
static void test_ep_remove_peer_cancels(void **state) {
  int seen = 0;
  tpair tp;
  uint8_t msg[50000], rbuf[50000];
  srd_cqe cqe[8];
  size_t n;
  (void)state;

  tpair_init(&tp, NULL, NULL, 4, 0);
  tp.filter = only_first_data;
  tp.filter_arg = &seen;
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now),
                   0);
  assert_int_equal(srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg),
                                    (void *)1, tp.now),
                   0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, 10, (void *)2, tp.now), 0);
  /* Handshake, then the first data packets reach B. */
  tpair_collect(&tp);
  tp.now += SRD_US;
  tpair_deliver(&tp);
  tpair_collect(&tp);
  tp.now += SRD_US;
  tpair_deliver(&tp);
  tpair_collect(&tp);
  tp.now += SRD_US;
  tpair_deliver(&tp);
  assert_int_equal(seen, 8); /* 7 + 1 fragments sent, 1 delivered */

  assert_int_equal(srd_ep_remove_peer(tp.ep[0], tp.peer[0], tp.now), 0);
  n = tpair_poll(&tp, 0, cqe, 8);
  assert_int_equal(n, 2);
  assert_int_equal(cqe[0].status, SRD_ERR_CANCELED);
  assert_int_equal(cqe[1].status, SRD_ERR_CANCELED);
  assert_ptr_equal(cqe[0].user_ctx, (void *)1);
  assert_ptr_equal(cqe[1].user_ctx, (void *)2);

  /* B holds part of the first message in its receive; removing A there
     returns the buffer with an error. */
  assert_int_equal(srd_ep_remove_peer(tp.ep[1], tp.peer[1], tp.now), 0);
  n = tpair_poll(&tp, 1, cqe, 8);
  assert_int_equal(n, 1);
  assert_int_equal(cqe[0].status, SRD_ERR_CANCELED);
  assert_ptr_equal(cqe[0].buf, rbuf);
  tpair_fini(&tp);
}

/* A simulator may hand the engine a payload by length only (a NULL
   payload in srd_ep_read_pktv): the message completes with its length
   and nothing is copied into the receive buffer. */
static void test_ep_payload_by_length(void **state) {
  static uint8_t msg[20000], rbuf[20000];
  srd_cqe a, b;
  tpair tp;
  size_t i, k;
  int done = 0;
  (void)state;

  memset(msg, 0x5a, sizeof(msg));
  memset(rbuf, 0xab, sizeof(rbuf));
  tpair_init(&tp, NULL, NULL, 4, 0);
  assert_int_equal(srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, 0), 0);
  assert_int_equal(
      srd_ep_post_send(tp.ep[0], tp.peer[0], msg, sizeof(msg), NULL, 0), 0);
  for (k = 0; k < 100 && !done; ++k) {
    tpair_collect(&tp);
    tp.now += 10 * SRD_US;
    for (i = 0; i < tp.n; ++i) {
      const tpkt *q = &tp.q[i];
      srd_path path = {tp.peer[!q->from], q->path};
      if (q->type == 1) {
        srd_pkt_info info;
        size_t hl;
        assert_int_equal(srd_pkt_peek(q->data, q->len, &info), 0);
        hl = info.hdrlen;
        assert_int_equal(srd_ep_read_pktv(tp.ep[1], &path, q->data, hl, NULL,
                                          q->len - hl, tp.now),
                         0);
      } else {
        assert_int_equal(
            srd_ep_read_pkt(tp.ep[!q->from], &path, q->data, q->len, tp.now),
            0);
      }
    }
    tp.n = 0;
    if (srd_ep_get_expiry(tp.ep[0]) <= tp.now) {
      srd_ep_handle_expiry(tp.ep[0], tp.now);
    }
    if (srd_ep_get_expiry(tp.ep[1]) <= tp.now) {
      srd_ep_handle_expiry(tp.ep[1], tp.now);
    }
    done = tpair_poll(&tp, 0, &a, 1) == 1;
  }
  assert_true(done);
  assert_int_equal(a.status, 0);
  assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
  assert_int_equal(b.status, 0);
  assert_int_equal(b.len, sizeof(msg));
  for (i = 0; i < sizeof(rbuf); ++i) {
    assert_int_equal(rbuf[i], 0xab);
  }
  tpair_fini(&tp);
}

/* take_first_data holds back the first data packet from A (the test
   hands it to B itself). */
static int take_first_data(void *arg, const tpkt *p, uint64_t n) {
  tpkt *held = arg;
  (void)n;
  if (p->from == 0 && p->type == 1 && held->len == 0) {
    *held = *p;
    return TP_DROP;
  }
  return TP_DELIVER;
}

/* A data packet whose payload does not match its CRC is refused with
   SRD_ERR_PROTO and counted, wherever its bytes were to go: straight into
   a posted receive (a message of one packet), into a receive already
   given to a message of several, or into the chunks of an unexpected
   message.  Nothing completes, and the retransmission delivers the
   message intact. */
static void test_ep_corrupt_payload_refused(void **state) {
  static const struct {
    size_t len;
    int posted;
  } cases[] = {{100, 1}, {20000, 1}, {20000, 0}};
  static uint8_t msg[20000], rbuf[20000];
  static tpkt held;
  size_t i, k;
  (void)state;

  for (i = 0; i < sizeof(msg); ++i) {
    msg[i] = (uint8_t)(i * 13 + 1);
  }
  for (k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    tpair tp;
    srd_path path;
    srd_ep_stats st;
    srd_cqe a, b;
    uint32_t r;

    memset(rbuf, 0, sizeof(rbuf));
    held.len = 0;
    tpair_init(&tp, NULL, NULL, 4, 0);
    tp.filter = take_first_data;
    tp.filter_arg = &held;
    if (cases[k].posted) {
      assert_int_equal(
          srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now), 0);
    }
    assert_int_equal(
        srd_ep_post_send(tp.ep[0], tp.peer[0], msg, cases[k].len, NULL, tp.now),
        0);
    for (r = 0; r < 10 && held.len == 0; ++r) {
      tpair_collect(&tp);
      tp.now += SRD_US;
      tpair_deliver(&tp);
    }
    assert_true(held.len > 0);
    held.data[held.len - 1] ^= 0x01; /* the payload's last byte */
    path.peer = tp.peer[1];
    path.path = held.path;
    assert_int_equal(
        srd_ep_read_pkt(tp.ep[1], &path, held.data, held.len, tp.now),
        SRD_ERR_PROTO);
    srd_ep_get_stats(tp.ep[1], &st);
    assert_int_equal(st.drops[SRD_DROP_CORRUPT_PAYLOAD], 1);
    assert_int_equal(tpair_poll(&tp, 1, &b, 1), 0);
    if (!cases[k].posted) {
      assert_int_equal(
          srd_ep_post_recv(tp.ep[1], rbuf, sizeof(rbuf), NULL, tp.now), 0);
    }
    tpair_run(&tp, SRD_S);
    assert_int_equal(tpair_poll(&tp, 0, &a, 1), 1);
    assert_int_equal(a.status, 0);
    assert_int_equal(tpair_poll(&tp, 1, &b, 1), 1);
    assert_int_equal(b.status, 0);
    assert_int_equal(b.len, cases[k].len);
    assert_memory_equal(rbuf, msg, cases[k].len);
    srd_ep_get_stats(tp.ep[1], &st);
    assert_int_equal(st.drops[SRD_DROP_CORRUPT_PAYLOAD], 1);
    tpair_fini(&tp);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ep_settings_default),
      cmocka_unit_test(test_ep_new_rejects_bad_settings),
      cmocka_unit_test(test_ep_conn_ids_distinct),
      cmocka_unit_test(test_ep_peers),
      cmocka_unit_test(test_ep_post_errors),
      cmocka_unit_test(test_ep_io_argument_errors),
      cmocka_unit_test(test_ep_strerror),
      cmocka_unit_test(test_ep_first_message),
      cmocka_unit_test(test_ep_peer_mtu),
      cmocka_unit_test(test_ep_paths_used),
      cmocka_unit_test(test_ep_path_burst),
      cmocka_unit_test(test_ep_remove_peer_cancels),
      cmocka_unit_test(test_ep_payload_by_length),
      cmocka_unit_test(test_ep_corrupt_payload_refused),
  };
  return cmocka_run_group_tests_name("ep", tests, NULL, NULL);
}
