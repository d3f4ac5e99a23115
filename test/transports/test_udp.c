/*
 * test_udp.c: the udp backend (libsrd over UDP with io_uring) on
 * loopback: messages of every size come back intact exactly once over
 * IPv4 and IPv6, blocking and busy-poll, with and without the kernel
 * features it falls back from (multishot receive, GSO, GRO); GSO bursts
 * and spraying really happen; the impairment layer loses, duplicates and
 * reorders without breaking exactly-once; corruption never touches the
 * sender's buffers and is never delivered; a blackholed path is steered
 * around; thousands of garbage datagrams are counted and deliver
 * nothing; a vanished or absent peer ends in error completions within the
 * retry budget.
 *
 * Exits 77 (skip) when io_uring is unavailable (a container policy).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include <srd/srd.h>

#include "xtest.h"

static uint64_t seed;

static void base_cfg(xport_config *cfg, int family) {
  xport_config_default(cfg);
  cfg->backend = "udp";
  cfg->family = family;
  cfg->bind_addr = family == AF_INET6 ? "::1" : "127.0.0.1";
  cfg->max_msg_size = 256 << 10;
  cfg->n_paths = 8;
  cfg->log = xt_log;
}

/* echo_case runs a whole echo exchange with |scfg| at the server and
   |ccfg| at the client; fills |r| and the client's stats. */
static int echo_case(const xport_config *scfg, const xport_config *ccfg,
                     uint32_t n, size_t max_size, uint32_t window, xt_result *r,
                     xport_stats *cst, xport_stats *sst) {
  xt_server srv;
  xport *x;
  xport_peer peer;
  xt_bufs bufs;

  if (xt_server_start(&srv, scfg, max_size + 4) != 0) {
    return -1;
  }
  assert_int_equal(xport_open(&x, ccfg), 0);
  printf("  %s\n", xport_describe(x));
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  xt_echo_run(x, peer, n, max_size, window, seed, r, &bufs);
  if (cst) {
    xport_get_stats(x, cst);
  }
  xport_close(x);
  xt_bufs_free(&bufs);
  xt_server_stop(&srv);
  if (sst) {
    *sst = srv.st;
  }
  printf("  %llu echoes in %.1f ms\n", (unsigned long long)r->echoes,
         (double)r->elapsed_ns / 1e6);
  return 0;
}

static void assert_clean(const xt_result *r, uint32_t n) {
  tu_assert(r->send_err == 0);
  tu_assert(r->sent_ok == n);
  tu_assert(r->echoes == n);
  tu_assert(r->dups == 0 && r->corrupt == 0 && r->recv_err == 0);
}

static void test_udp_echo_v4_blocking(void **state) {
  xport_config c;
  xt_result r;

  (void)state;
  seed = tu_seed("udp_echo_v4_blocking");
  base_cfg(&c, AF_INET);
  assert_int_equal(echo_case(&c, &c, 400, 200000, 16, &r, NULL, NULL), 0);
  assert_clean(&r, 400);
}

static void test_udp_echo_v6_busy_poll(void **state) {
  xport_config c;
  xt_result r;

  (void)state;
  if (!xt_have_v6_loopback(SOCK_DGRAM)) {
    skip(); /* no IPv6 loopback here */
  }
  seed = tu_seed("udp_echo_v6_busy_poll");
  base_cfg(&c, AF_INET6);
  c.busy_poll = 1;
  assert_int_equal(echo_case(&c, &c, 400, 100000, 16, &r, NULL, NULL), 0);
  assert_clean(&r, 400);
}

/* A blocking ping-pong: every datagram reaches the engine with its
   kernel arrival time (SO_TIMESTAMPNS).  The engine's clock only moves
   forward, so a datagram that arrived before the driver last read the
   clock is restamped with the later time, and its wait in the socket
   counts as path delay.  A driver that read the clock before taking in
   what had arrived (tried while chasing veth retransmissions) restamped
   nearly every datagram: an engine RTT of 130 us over a veth whose round
   trip is 13 us, and the delay target shrank the window to nothing.  In
   a ping-pong each datagram arrives after the post that caused it, so
   none needs restamping; a tenth leaves room for timers and ACKs of
   their own. */
static void test_udp_arrivals_keep_kernel_time(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cst, sst;

  (void)state;
  seed = tu_seed("udp_arrivals_keep_kernel_time");
  base_cfg(&c, AF_INET);
  assert_int_equal(echo_case(&c, &c, 300, 1000, 1, &r, &cst, &sst), 0);
  assert_clean(&r, 300);
  printf("  restamped: client %llu of %llu datagrams, server %llu of %llu\n",
         (unsigned long long)cst.rx_restamped, (unsigned long long)cst.pkts_in,
         (unsigned long long)sst.rx_restamped, (unsigned long long)sst.pkts_in);
  tu_assert(cst.pkts_in >= 300 && sst.pkts_in >= 300);
  tu_assert(cst.rx_restamped * 10 <= cst.pkts_in);
  tu_assert(sst.rx_restamped * 10 <= sst.pkts_in);
}

/* The busy poll reads the base port itself and connects its sending
   sockets while it has a single peer: with one peer, two, and one again
   (after the first is removed), every echo comes back exactly once, also
   with one-shot ring receives on the other sockets and the impairment
   layer's held sends (which name their address on connected sockets). */
static void test_udp_busy_poll_peers(void **state) {
  xport_config sc, cc;
  xt_server a, b;
  xport *x;
  xport_peer pa, pb;
  xt_bufs bufs[4];
  xt_result r;
  uint32_t i;

  (void)state;
  seed = tu_seed("udp_busy_poll_peers");
  base_cfg(&sc, AF_INET);
  sc.seed = seed | 1;
  cc = sc;
  cc.busy_poll = 1;
  cc.no_multishot = 1;
  cc.impair_on = 1;
  for (i = 0; i < XPORT_MAX_PATHS; ++i) {
    cc.impair[i].loss = 0.02;
    cc.impair[i].dup = 0.02;
    cc.impair[i].delay_ns = 10000;
  }
  assert_int_equal(xt_server_start(&a, &sc, 30000 + 4), 0);
  sc.seed = seed | 3;
  assert_int_equal(xt_server_start(&b, &sc, 30000 + 4), 0);
  assert_int_equal(xport_open(&x, &cc), 0);
  printf("  %s\n", xport_describe(x));
  assert_int_equal(xport_add_peer(x, (struct sockaddr *)&a.addr, a.alen, &pa),
                   0);
  xt_echo_run(x, pa, 100, 30000, 8, seed, &r, &bufs[0]);
  assert_clean(&r, 100);
  assert_int_equal(xport_add_peer(x, (struct sockaddr *)&b.addr, b.alen, &pb),
                   0);
  xt_echo_run(x, pb, 100, 30000, 8, seed + 1, &r, &bufs[1]);
  assert_clean(&r, 100);
  xt_echo_run(x, pa, 100, 30000, 8, seed + 2, &r, &bufs[2]);
  assert_clean(&r, 100);
  assert_int_equal(xport_remove_peer(x, pa), 0);
  xt_echo_run(x, pb, 100, 30000, 8, seed + 3, &r, &bufs[3]);
  assert_clean(&r, 100);
  xport_close(x);
  for (i = 0; i < 4; ++i) {
    xt_bufs_free(&bufs[i]);
  }
  xt_server_stop(&a);
  xt_server_stop(&b);
}

static void test_udp_fallbacks(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cs;

  (void)state;
  /* What an old kernel gets: one-shot receives, one datagram per packet,
     no merged receives; small packets so that messages span many. */
  seed = tu_seed("udp_fallbacks");
  base_cfg(&c, AF_INET);
  c.no_multishot = 1;
  c.no_gso = 1;
  c.no_gro = 1;
  c.mtu = 1400;
  assert_int_equal(echo_case(&c, &c, 200, 60000, 8, &r, &cs, NULL), 0);
  assert_clean(&r, 200);
  tu_assert(cs.gso_sends == 0);
  tu_assert(cs.pkts_out == cs.sends);
}

static void test_udp_gso_bursts_and_spraying(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cs, ss;
  uint32_t i;

  (void)state;
  seed = tu_seed("udp_gso_bursts_and_spraying");
  base_cfg(&c, AF_INET);
  c.mtu = 1400;
  c.n_paths = 4;
  c.burst = 16;
  assert_int_equal(echo_case(&c, &c, 300, 64000, 32, &r, &cs, &ss), 0);
  assert_clean(&r, 300);
  /* Several packets per send on average, and every path used. */
  printf("  client: %llu packets in %llu sends (%llu GSO)\n",
         (unsigned long long)cs.pkts_out, (unsigned long long)cs.sends,
         (unsigned long long)cs.gso_sends);
  tu_assert(cs.gso_sends > 0);
  tu_assert(cs.pkts_out > cs.sends + cs.sends / 2);
  tu_assert(cs.n_paths == 4);
  for (i = 0; i < 4; ++i) {
    tu_assert(cs.path_pkts[i] > 0);
  }
  /* GRO: the server read fewer datagrams than packets?  Each merged
     train is one receive; pkts_in counts packets either way. */
  tu_assert(ss.pkts_in >= cs.pkts_out / 2);
}

static void test_udp_impaired_exactly_once(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cs;
  uint32_t i;

  (void)state;
  seed = tu_seed("udp_impaired_exactly_once");
  base_cfg(&c, AF_INET);
  c.mtu = 4000;
  c.seed = seed | 1;
  c.impair_on = 1;
  for (i = 0; i < XPORT_MAX_PATHS; ++i) {
    c.impair[i].loss = 0.05;
    c.impair[i].dup = 0.03;
    c.impair[i].reorder = 0.05;
    c.impair[i].reorder_delay_ns = 200000;
    c.impair[i].delay_ns = 20000;
    c.impair[i].jitter_ns = 20000;
  }
  assert_int_equal(echo_case(&c, &c, 300, 50000, 16, &r, &cs, NULL), 0);
  assert_clean(&r, 300);
  printf("  client: lost %llu, duplicated %llu, delayed %llu, retransmits "
         "%llu\n",
         (unsigned long long)cs.imp_lost, (unsigned long long)cs.imp_dup,
         (unsigned long long)cs.imp_delayed,
         (unsigned long long)cs.retransmits);
  tu_assert(cs.imp_lost > 0 && cs.imp_dup > 0 && cs.imp_delayed > 0);
  tu_assert(cs.retransmits > 0);
}

/* corrupt_drops adds up |st|'s engine drops under the integrity checks'
   reasons (those named corrupt*). */
static uint64_t corrupt_drops(const xport_stats *st) {
  uint64_t n = 0;
  int d;

  for (d = 0; d < SRD_DROP_REASONS && d < 16; ++d) {
    if (strncmp(srd_drop_reason_name((srd_drop_reason)d), "corrupt", 7) == 0) {
      n += st->drops[d];
    }
  }
  return n;
}

static void test_udp_corruption_never_delivered(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cs, ss;
  uint32_t i;

  (void)state;
  seed = tu_seed("udp_corruption_never_delivered");
  base_cfg(&c, AF_INET);
  c.mtu = 4000;
  c.seed = seed | 1;
  c.impair_on = 1;
  for (i = 0; i < XPORT_MAX_PATHS; ++i) {
    c.impair[i].corrupt = 0.05;
    c.impair[i].dup = 0.03;
    c.impair[i].dup_delay_ns = 300000;
  }
  assert_int_equal(echo_case(&c, &c, 300, 50000, 16, &r, &cs, &ss), 0);
  printf("  client: corrupted %llu, duplicated %llu (%llu late); dropped as "
         "corrupt: client %llu, server %llu; %llu echoes corrupted\n",
         (unsigned long long)cs.imp_corrupted, (unsigned long long)cs.imp_dup,
         (unsigned long long)cs.imp_dup_delayed,
         (unsigned long long)corrupt_drops(&cs),
         (unsigned long long)corrupt_drops(&ss), (unsigned long long)r.corrupt);
  /* The layer corrupts copies: the payloads it sent straight from the
     send buffers are as the client filled them. */
  tu_assert(r.send_buf_changed == 0);
  tu_assert(cs.imp_corrupted > 0 && cs.imp_dup_delayed > 0);
  /* The engine's integrity check drops what the wire corrupted: exactly
     once, intact, and the drops are counted (both ends corrupt). */
  assert_clean(&r, 300);
  tu_assert(corrupt_drops(&ss) > 0 && corrupt_drops(&cs) > 0);
}

static void test_udp_blackhole_is_steered_around(void **state) {
  xport_config c;
  xt_result r;
  xport_stats cs;
  uint64_t others = 0;
  uint32_t i;

  (void)state;
  seed = tu_seed("udp_blackhole_is_steered_around");
  base_cfg(&c, AF_INET);
  c.mtu = 2000;
  c.n_paths = 8;
  c.impair_on = 1;
  c.impair[5].blackhole = 1; /* both ends: path 5 is dead both ways */
  assert_int_equal(echo_case(&c, &c, 300, 40000, 16, &r, &cs, NULL), 0);
  assert_clean(&r, 300);
  for (i = 0; i < 8; ++i) {
    if (i != 5) {
      others += cs.path_pkts[i];
    }
  }
  printf("  path 5: %llu packets, the others %llu on average\n",
         (unsigned long long)cs.path_pkts[5], (unsigned long long)(others / 7));
  tu_assert(cs.imp_blackholed > 0);
  /* Steering: the dead path gets a small fraction of a fair share. */
  tu_assert(cs.path_pkts[5] * 4 < others / 7);
}

/* A datagram shaped like the protocol's packets (docs/protocol.md) with
   random fields, or random bytes. */
static size_t garbage(uint8_t *b, uint64_t *s) {
  static const size_t lens[] = {48, 56, 28, 40, 48, 24, 24};
  uint64_t r = tu_rand(s);
  size_t len, i;

  if (r % 3 == 0) {
    len = (size_t)(tu_rand(s) % 1500);
    for (i = 0; i < len; ++i) {
      b[i] = (uint8_t)tu_rand(s);
    }
    return len;
  }
  /* A header of a real type and length, then mutations. */
  i = (size_t)(tu_rand(s) % 7);
  len = lens[i] + (i == 0 ? (size_t)(tu_rand(s) % 512) : 0);
  for (size_t k = 0; k < len; ++k) {
    b[k] = (uint8_t)tu_rand(s);
  }
  b[0] = 1;
  b[1] = (uint8_t)(i == 0 ? 1 : i == 1 ? 1 : i);
  b[2] = b[3] = 0;
  b[12] = 0;
  b[13] = (uint8_t)(tu_rand(s) % 8);
  if (i == 3) {
    b[1] = 3; /* a handshake request: conn 0 is the only valid dst */
    b[8] = b[9] = b[10] = b[11] = 0;
  }
  for (int m = (int)(tu_rand(s) % 4); m > 0; --m) {
    b[tu_rand(s) % len] ^= (uint8_t)(1u << (tu_rand(s) % 8));
  }
  return len;
}

static void test_udp_bad_input_counted_never_delivered(void **state) {
  xport_config c;
  xport *srv;
  struct sockaddr_storage sa;
  socklen_t sl;
  uint8_t buf[2048], *rbufs[16];
  uint64_t s, sent = 0, t0, t1;
  xport_stats st;
  xport_cqe q[16];
  int fd, i, delivered = 0;
  const int N = 5000;

  (void)state;
  seed = tu_seed("udp_bad_input_counted_never_delivered");
  s = seed;
  base_cfg(&c, AF_INET);
  c.listen = 1;
  c.n_paths = 4;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &sa, &sl);
  for (i = 0; i < 16; ++i) {
    rbufs[i] = malloc(256 << 10);
    xport_post_recv(srv, rbufs[i], 256 << 10, rbufs[i]);
  }
  fd = socket(AF_INET, SOCK_DGRAM, 0);
  assert_true(fd >= 0);
  t0 = xport_now();
  /* Send in bursts and let the server read each, so that no datagram is
     lost in the socket buffer and every one can be accounted for. */
  while (sent < (uint64_t)N && xport_now() - t0 < XT_LIMIT_NS) {
    for (i = 0; i < 50; ++i) {
      size_t len = garbage(buf, &s);
      if (sendto(fd, buf, len, 0, (struct sockaddr *)&sa, sl) >= 0) {
        ++sent;
      }
    }
    t1 = xport_now();
    do {
      xport_progress(srv, 1000000ull);
      delivered += (int)xport_poll_cq(srv, q, 16);
      xport_get_stats(srv, &st);
    } while (st.pkts_in + st.unknown_src + st.rx_truncated < sent &&
             xport_now() - t1 < 2000000000ull);
  }
  xport_get_stats(srv, &st);
  printf("  sent %llu garbage datagrams: %llu to the engine, %llu from no "
         "peer, %llu truncated; %llu counted bad\n",
         (unsigned long long)sent, (unsigned long long)st.pkts_in,
         (unsigned long long)st.unknown_src,
         (unsigned long long)st.rx_truncated, (unsigned long long)st.bad_in);
  tu_assert(sent == (uint64_t)N);
  tu_assert(delivered == 0);
  /* Every datagram was seen: given to the engine (which counts what it
     drops) or dropped by the driver for coming from no peer. */
  tu_assert(st.pkts_in + st.unknown_src + st.rx_truncated == sent);
  /* Nearly all were bad; the few well-formed handshake requests among
     them were answered, not counted bad. */
  tu_assert(st.bad_in >= sent - sent / 20);
  tu_assert(st.msgs_recv == 0);
  close(fd);
  xport_close(srv);
  for (i = 0; i < 16; ++i) {
    free(rbufs[i]);
  }
  /* And a real exchange still works afterwards on a fresh pair (the
     garbage did not wedge anything shared). */
  {
    xt_result r;
    base_cfg(&c, AF_INET);
    assert_int_equal(echo_case(&c, &c, 50, 10000, 8, &r, NULL, NULL), 0);
    assert_clean(&r, 50);
  }
}

static void test_udp_server_survives_garbage_mid_run(void **state) {
  /* Garbage aimed at a server while a real client talks to it: the
     client's messages still arrive intact exactly once. */
  xport_config c;
  xt_server srv;
  xport *x;
  xport_peer peer;
  xt_bufs bufs;
  xt_result r;
  uint8_t buf[2048];
  uint64_t s;
  int fd, i;

  (void)state;
  seed = tu_seed("udp_server_survives_garbage_mid_run");
  s = seed ^ 0x55;
  base_cfg(&c, AF_INET);
  assert_int_equal(xt_server_start(&srv, &c, 20004), 0);
  fd = socket(AF_INET, SOCK_DGRAM, 0);
  for (i = 0; i < 2000; ++i) {
    size_t len = garbage(buf, &s);
    sendto(fd, buf, len, 0, (struct sockaddr *)&srv.addr, srv.alen);
  }
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  xt_echo_run(x, peer, 200, 20000, 8, seed, &r, &bufs);
  xport_close(x);
  xt_bufs_free(&bufs);
  close(fd);
  xt_server_stop(&srv);
  assert_clean(&r, 200);
  tu_assert(srv.st.bad_in > 0);
}

static void test_udp_peer_vanishes(void **state) {
  xport_config c;
  xt_server srv;
  xport *x;
  xport_peer peer;
  uint8_t *buf = calloc(1, 32768);
  uint64_t t0, t_dead = 0, waited;
  int ok = 0, err = 0, first_status = 0, i, outstanding = 0;
  xport_cqe q[16];

  (void)state;
  seed = tu_seed("udp_peer_vanishes");
  base_cfg(&c, AF_INET);
  c.max_retries = 6; /* a short retry budget keeps the test short */
  assert_int_equal(xt_server_start(&srv, &c, 40000), 0);
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  t0 = xport_now();
  /* A steady stream; the server goes away after 100 completions. */
  while (xport_now() - t0 < XT_LIMIT_NS) {
    size_t n, k;
    while (outstanding < 8 && !t_dead) {
      assert_int_equal(xport_post_send(x, peer, buf, 32768, NULL), 0);
      ++outstanding;
    }
    if (!t_dead && ok >= 100) {
      xt_server_stop(&srv);
      t_dead = xport_now();
    }
    xport_progress(x, 10000000ull);
    n = xport_poll_cq(x, q, 16);
    for (k = 0; k < n; ++k) {
      --outstanding;
      if (q[k].status == 0) {
        ++ok;
      } else if (err++ == 0) {
        first_status = q[k].status;
      }
    }
    if (t_dead && outstanding == 0) {
      break;
    }
  }
  waited = xport_now() - (t_dead ? t_dead : t0);
  printf("  %d ok, %d failed (%s) %.1f ms after the peer vanished\n", ok, err,
         strerror(-first_status), (double)waited / 1e6);
  tu_assert(t_dead != 0 && outstanding == 0);
  tu_assert(err > 0 && first_status == -ETIMEDOUT);
  /* The retry budget: 7 tries with a backed-off timeout of at most
     rto_max (20 ms here) each, well under 2 s even on a busy machine. */
  tu_assert(waited < 2000000000ull);
  xport_close(x);
  free(buf);
  (void)i;
}

/* A flood of handshake requests from many addresses. */
#define FLOOD_SOCKS 256
typedef struct flood {
  struct sockaddr_storage to;
  socklen_t tolen;
  uint8_t req[256];
  size_t reqlen;
  atomic_int stop;
  atomic_ullong sent;
} flood;

/* flood_main sends the one HS_REQ from FLOOD_SOCKS sockets in turn (each
   its own port, so each a new peer to the server), a few thousand a
   second, until told to stop, at most 400,000 in all and for at most
   30 s. */
static void *flood_main(void *arg) {
  flood *f = arg;
  int fd[FLOOD_SOCKS], i;
  uint64_t end = xport_now() + 30000000000ull;

  for (i = 0; i < FLOOD_SOCKS; ++i) {
    fd[i] = socket(AF_INET, SOCK_DGRAM, 0);
  }
  for (i = 0; !atomic_load(&f->stop) && atomic_load(&f->sent) < 400000 &&
              xport_now() < end;
       i = (i + 1) % FLOOD_SOCKS) {
    if (fd[i] >= 0 && sendto(fd[i], f->req, f->reqlen, MSG_DONTWAIT,
                             (struct sockaddr *)&f->to, f->tolen) > 0) {
      atomic_fetch_add(&f->sent, 1);
    }
    usleep(200); /* a few thousand a second: a slot then outlives a
                    handshake's round trip many times over */
  }
  for (i = 0; i < FLOOD_SOCKS; ++i) {
    if (fd[i] >= 0) {
      close(fd[i]);
    }
  }
  return NULL;
}

/* A flood of handshake requests from many addresses takes no peer slot
   at a server: each is answered statelessly (a cookie, an answer no
   larger than the request) and no peer exists until a cookie comes back,
   so the real client is served and the table never holds more than it.
   (Before the cookies, the flood filled the table and the client was
   refused; then, with eviction, the flood could still evict it.) */
static void test_udp_hs_flood_no_lockout(void **state) {
  xport_config c;
  xt_server srv;
  xport *x;
  xport_peer peer;
  xt_bufs bufs;
  xt_result r;
  flood f;
  pthread_t th;
  srd_settings s;
  srd_ep *ep;
  srd_peer_settings ps;
  srd_peer_id pid;
  srd_path path;
  srd_ssize n;
  uint64_t flood_end;
  static uint8_t one[16];

  (void)state;
  seed = tu_seed("udp_hs_flood_no_lockout");
  base_cfg(&c, AF_INET);
  c.seed = seed | 1;
  assert_int_equal(xt_server_start(&srv, &c, 4096), 0);
  /* A real HS_REQ, written by an engine of its own. */
  memset(&f, 0, sizeof(f));
  srd_settings_default(&s);
  s.seed = seed | 2;
  assert_int_equal(srd_ep_new(&ep, &s, srd_mem_default()), 0);
  srd_peer_settings_default(&ps);
  ps.n_paths = 1;
  assert_int_equal(srd_ep_add_peer(ep, &ps, &pid), 0);
  assert_int_equal(srd_ep_post_send(ep, pid, one, sizeof(one), NULL, 1), 0);
  n = srd_ep_write_pkt(ep, &path, f.req, sizeof(f.req), 1);
  assert_true(n > 0);
  f.reqlen = (size_t)n;
  srd_ep_del(ep);
  memcpy(&f.to, &srv.addr, srv.alen);
  f.tolen = srv.alen;
  flood_end = xport_now() + 30000000000ull;
  assert_int_equal(pthread_create(&th, NULL, flood_main, &f), 0);
  /* The flood fills the table first: a request from every port, four
     times the table's 64 slots (bounded by the flood's own 30 s). */
  while (atomic_load(&f.sent) < FLOOD_SOCKS && xport_now() < flood_end) {
    usleep(1000);
  }
  c.seed = seed | 3;
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  xt_echo_run(x, peer, 100, 4000, 8, seed, &r, &bufs);
  atomic_store(&f.stop, 1);
  pthread_join(th, NULL);
  xport_close(x);
  xt_bufs_free(&bufs);
  xt_server_stop(&srv);
  printf("  %llu handshake requests from %d ports; %llu answered "
         "statelessly; at most %u peer(s) at once; %llu echoes in %.1f ms\n",
         (unsigned long long)atomic_load(&f.sent), FLOOD_SOCKS,
         (unsigned long long)srv.st.hs_answered, srv.st.peers_max,
         (unsigned long long)r.echoes, (double)r.elapsed_ns / 1e6);
  tu_assert(srv.st.hs_answered > 0); /* the flood was answered */
  tu_assert(srv.st.peers_max == 1);  /* and held no slot: only the client */
  assert_clean(&r, 100);
}

static void test_udp_unreachable_peer(void **state) {
  xport_config c;
  xport *x;
  xport_peer peer;
  struct sockaddr_in a;
  uint8_t msg[100] = {0};
  xport_cqe q;
  uint64_t t0;
  int fd, got = 0;
  socklen_t l = sizeof(a);

  (void)state;
  /* A port nobody listens on: take a free one and release it. */
  fd = socket(AF_INET, SOCK_DGRAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, (struct sockaddr *)&a, sizeof(a));
  getsockname(fd, (struct sockaddr *)&a, &l);
  close(fd);
  base_cfg(&c, AF_INET);
  c.max_retries = 4;
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(xport_add_peer(x, (struct sockaddr *)&a, sizeof(a), &peer),
                   0);
  assert_int_equal(xport_post_send(x, peer, msg, sizeof(msg), NULL), 0);
  t0 = xport_now();
  while (!got && xport_now() - t0 < XT_LIMIT_NS) {
    xport_progress(x, 10000000ull);
    got = (int)xport_poll_cq(x, &q, 1);
  }
  tu_assert(got == 1);
  tu_assert(q.status == -EHOSTUNREACH);
  printf("  %s after %.1f ms\n", xport_strerror(&q),
         (double)(xport_now() - t0) / 1e6);
  xport_close(x);
}

static void test_udp_bad_settings(void **state) {
  xport_config c;
  xport *x;

  (void)state;
  base_cfg(&c, AF_INET);
  c.n_paths = 0;
  assert_int_equal(xport_open(&x, &c), -EINVAL);
  c.n_paths = 65;
  assert_int_equal(xport_open(&x, &c), -EINVAL);
  base_cfg(&c, AF_INET);
  c.burst = 0;
  assert_int_equal(xport_open(&x, &c), -EINVAL);
  base_cfg(&c, AF_INET);
  c.backend = "nonesuch";
  assert_int_equal(xport_open(&x, &c), -ENOENT);
  base_cfg(&c, AF_INET);
  c.mem = (xport_mem)7;
  assert_int_equal(xport_open(&x, &c), -EINVAL);
  /* CUDA memory where there is none: what the probe says (no CUDA in
     the build, no runtime, no device). */
  c.mem = XPORT_MEM_CUDA;
  {
    char why[256];
    int pr = xport_mem_probe(XPORT_MEM_CUDA, 0, why, sizeof(why));
    if (pr != 0) {
      printf("  -m cuda here: %s\n", why);
      assert_int_equal(xport_open(&x, &c), pr);
    }
  }
  /* A fixed port range that is taken. */
  base_cfg(&c, AF_INET);
  c.listen = 1;
  assert_int_equal(xport_open(&x, &c), 0);
  {
    xport *y;
    struct sockaddr_storage ss;
    socklen_t l;
    xport_local_addr(x, &ss, &l);
    c.port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    assert_int_equal(xport_open(&y, &c), -EADDRINUSE);
  }
  xport_close(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_udp_echo_v4_blocking),
      cmocka_unit_test(test_udp_echo_v6_busy_poll),
      cmocka_unit_test(test_udp_arrivals_keep_kernel_time),
      cmocka_unit_test(test_udp_fallbacks),
      cmocka_unit_test(test_udp_gso_bursts_and_spraying),
      cmocka_unit_test(test_udp_impaired_exactly_once),
      cmocka_unit_test(test_udp_corruption_never_delivered),
      cmocka_unit_test(test_udp_busy_poll_peers),
      cmocka_unit_test(test_udp_blackhole_is_steered_around),
      cmocka_unit_test(test_udp_bad_input_counted_never_delivered),
      cmocka_unit_test(test_udp_server_survives_garbage_mid_run),
      cmocka_unit_test(test_udp_peer_vanishes),
      cmocka_unit_test(test_udp_unreachable_peer),
      cmocka_unit_test(test_udp_hs_flood_no_lockout),
      cmocka_unit_test(test_udp_bad_settings),
  };
  xport_config c;
  xport *x;
  int rv;

  /* io_uring may be disabled (kernel.io_uring_disabled, seccomp). */
  xport_config_default(&c);
  c.bind_addr = "127.0.0.1";
  c.n_paths = 1;
  rv = xport_open(&x, &c);
  if (rv == -ENOSYS || rv == -EPERM) {
    printf("io_uring unavailable (%s): skip\n", strerror(-rv));
    return 77;
  }
  if (rv == 0) {
    xport_close(x);
  }
  return cmocka_run_group_tests_name("udp", tests, NULL, NULL);
}
