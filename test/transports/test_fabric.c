/*
 * test_fabric.c: the libfabric RDM backend behind the same message API,
 * on each of Debian's RDM providers (tcp;ofi_rxm, udp;ofi_rxd) on
 * loopback: many messages in flight come back intact, exactly once; a
 * provider name nobody offers fails xport_open with -ENODEV and says so;
 * a server nobody runs fails the sends queued for it (the address
 * exchange is refused); removing a peer cancels the sends queued for
 * it; a server that goes away ends every send posted to it in exactly
 * one completion, in error (tcp;ofi_rxm by itself, udp;ofi_rxd through
 * the backend's peer timeout); a peer that speaks something else on the
 * exchange's port is cut off and never becomes a peer; 300 clients one
 * after another are each served, their peers removed.
 *
 * Exits 77 (skipped) with the reason when libfabric was not built in, and
 * skips a provider this machine does not offer.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"

#ifdef SRD_HAVE_FABRIC

#  include "xtest.h"

static uint64_t seed;

static const char *const providers[] = {"tcp;ofi_rxm", "udp;ofi_rxd"};

static void base_cfg(xport_config *cfg, const char *provider) {
  xport_config_default(cfg);
  cfg->backend = "fabric";
  cfg->provider = provider;
  cfg->family = AF_INET;
  cfg->bind_addr = "127.0.0.1";
  cfg->max_msg_size = 1 << 20;
  cfg->log = xt_log;
}

/* have says whether |provider| offers what the backend needs here. */
static int have(const char *provider) {
  int n = xport_fabric_providers(provider, AF_INET, NULL);

  if (n <= 0) {
    printf("  provider %s not offered here (%d): skipped\n", provider, n);
  }
  return n > 0;
}

static void echo_case(const char *provider, int family, uint32_t n,
                      size_t max_size, uint32_t window, int busy) {
  xt_server srv;
  xport_config c;
  xport *x;
  xport_peer peer;
  xt_bufs bufs;
  xt_result r;

  base_cfg(&c, provider);
  c.busy_poll = busy;
  c.family = family;
  c.bind_addr = family == AF_INET6 ? "::1" : "127.0.0.1";
  assert_int_equal(xt_server_start(&srv, &c, max_size + 4), 0);
  assert_int_equal(xport_open(&x, &c), 0);
  printf("  %s\n", xport_describe(x));
  assert_non_null(strstr(xport_describe(x), provider));
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  xt_echo_run(x, peer, n, max_size, window, seed, &r, &bufs);
  xport_close(x);
  xt_bufs_free(&bufs);
  xt_server_stop(&srv);
  printf("  %llu echoes of %u in %.1f ms\n", (unsigned long long)r.echoes, n,
         (double)r.elapsed_ns / 1e6);
  tu_assert(r.send_err == 0 && r.sent_ok == n && r.echoes == n);
  tu_assert(r.dups == 0 && r.corrupt == 0 && r.recv_err == 0);
  tu_assert(r.send_buf_changed == 0);
  tu_assert(srv.echoed == n);
}

static void test_fabric_echo_many_in_flight(void **state) {
  size_t i;

  (void)state;
  seed = tu_seed("fabric_echo_many_in_flight");
  for (i = 0; i < sizeof(providers) / sizeof(providers[0]); ++i) {
    if (have(providers[i])) {
      echo_case(providers[i], AF_INET, 400, 200000, 32, 0);
    }
  }
}

static void test_fabric_echo_small_busy_poll(void **state) {
  size_t i;

  (void)state;
  seed = tu_seed("fabric_echo_small_busy_poll");
  for (i = 0; i < sizeof(providers) / sizeof(providers[0]); ++i) {
    if (have(providers[i])) {
      echo_case(providers[i], AF_INET, 2000, 2000, 64, 1);
    }
  }
}

static void test_fabric_echo_v6(void **state) {
  (void)state;
  if (!xt_have_v6_loopback(SOCK_STREAM)) {
    skip(); /* no IPv6 loopback here */
  }
  seed = tu_seed("fabric_echo_v6");
  if (xport_fabric_providers("tcp;ofi_rxm", AF_INET6, NULL) <= 0) {
    skip();
  }
  echo_case("tcp;ofi_rxm", AF_INET6, 300, 100000, 16, 0);
}

/* A log sink that keeps the last line. */
static char last_log[512];
static void keep_log(void *ud, const char *msg) {
  (void)ud;
  printf("  [xport] %s\n", msg);
  snprintf(last_log, sizeof(last_log), "%s", msg);
}

static void test_fabric_bad_provider(void **state) {
  xport_config c;
  xport *x = NULL;

  (void)state;
  base_cfg(&c, "no-such-provider");
  c.log = keep_log;
  last_log[0] = '\0';
  assert_int_equal(xport_open(&x, &c), -ENODEV);
  assert_null(x);
  assert_non_null(strstr(last_log, "no provider 'no-such-provider'"));
  assert_int_equal(xport_fabric_providers("no-such-provider", AF_INET, NULL),
                   0);
}

/* free_port returns a loopback TCP port nobody listens on now. */
static void free_port(struct sockaddr_in *a, socklen_t *l) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);

  memset(a, 0, sizeof(*a));
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  *l = sizeof(*a);
  assert_int_equal(bind(fd, (struct sockaddr *)a, sizeof(*a)), 0);
  getsockname(fd, (struct sockaddr *)a, l);
  close(fd);
}

/* drain progresses |x| until |want| completions came, or the limit; the
   first error's status goes to *first. */
static int drain(xport *x, int want, int *errs, int *first) {
  xport_cqe q[64];
  uint64_t t0 = xport_now();
  int done = 0;

  *errs = 0;
  *first = 0;
  while (done < want && xport_now() - t0 < XT_LIMIT_NS) {
    size_t n, k;
    xport_progress(x, 10000000ull);
    n = xport_poll_cq(x, q, 64);
    for (k = 0; k < n; ++k, ++done) {
      if (q[k].status != 0 && (*errs)++ == 0) {
        *first = q[k].status;
      }
    }
  }
  /* Nothing more may come: each send ends in exactly one completion. */
  xport_progress(x, 0);
  return done + (int)xport_poll_cq(x, q, 64);
}

static void test_fabric_exchange_refused(void **state) {
  xport_config c;
  xport *x;
  xport_peer peer;
  struct sockaddr_in a;
  socklen_t l;
  uint8_t m[8][64];
  int i, errs, first;

  (void)state;
  if (!have("tcp;ofi_rxm")) {
    skip();
  }
  free_port(&a, &l);
  base_cfg(&c, "tcp;ofi_rxm");
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(xport_add_peer(x, (struct sockaddr *)&a, l, &peer), 0);
  for (i = 0; i < 8; ++i) {
    assert_int_equal(xport_post_send(x, peer, m[i], sizeof(m[i]), m[i]), 0);
  }
  assert_int_equal(drain(x, 8, &errs, &first), 8);
  assert_int_equal(errs, 8);
  assert_int_equal(first, -ECONNREFUSED);
  xport_close(x);
}

/* Sends queued while the address exchange runs end with -ECANCELED when
   their peer is removed, each once; the peer is gone. */
static void test_fabric_remove_peer_cancels_queued(void **state) {
  xport_config c;
  xport *srv, *cli;
  xport_peer peer;
  struct sockaddr_storage ss;
  socklen_t l;
  uint8_t m[4][32];
  xport_cqe q[8];
  int i;

  (void)state;
  if (!have("tcp;ofi_rxm")) {
    skip();
  }
  base_cfg(&c, "tcp;ofi_rxm");
  c.listen = 1;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &ss, &l);
  c.listen = 0;
  assert_int_equal(xport_open(&cli, &c), 0);
  assert_int_equal(xport_add_peer(cli, (struct sockaddr *)&ss, l, &peer), 0);
  for (i = 0; i < 4; ++i) {
    assert_int_equal(xport_post_send(cli, peer, m[i], sizeof(m[i]), m[i]), 0);
  }
  /* No progress yet: the exchange has not run, the sends are queued. */
  assert_int_equal(xport_remove_peer(cli, peer), 0);
  assert_int_equal(xport_poll_cq(cli, q, 8), 4);
  for (i = 0; i < 4; ++i) {
    assert_int_equal(q[i].status, -ECANCELED);
    assert_ptr_equal(q[i].buf, m[i]); /* in posting order */
  }
  assert_int_equal(xport_post_send(cli, peer, m[0], 8, m[0]), -EINVAL);
  assert_int_equal(xport_peer_addr(cli, peer, &ss, &l), -EINVAL);
  xport_progress(cli, 0);
  assert_int_equal(xport_poll_cq(cli, q, 8), 0);
  xport_close(cli);
  xport_close(srv);
}

/* The server goes away after one echo: every send posted to it later
   ends in exactly one completion, and at least one in error, with each
   provider's own way of finding out. */
static void dead_peer_case(const char *provider, uint64_t peer_timeout_ns,
                           const char *said, int want_status) {
  xport_config c;
  xport *srv, *cli;
  xport_peer peer;
  struct sockaddr_storage ss;
  socklen_t l;
  static uint8_t m[32][4096];
  uint8_t r[4096];
  xport_cqe q[4];
  uint64_t t0;
  int i, got = 0, errs, first, posted = 0;

  base_cfg(&c, provider);
  c.listen = 1;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &ss, &l);
  c.listen = 0;
  c.log = keep_log;
  c.peer_timeout_ns = peer_timeout_ns;
  assert_int_equal(xport_open(&cli, &c), 0);
  assert_int_equal(xport_add_peer(cli, (struct sockaddr *)&ss, l, &peer), 0);
  assert_int_equal(xport_post_recv(srv, r, sizeof(r), r), 0);
  assert_int_equal(xport_post_send(cli, peer, m[0], 100, m[0]), 0);
  t0 = xport_now();
  while (got < 2 && xport_now() - t0 < XT_LIMIT_NS) {
    xport_progress(srv, 0);
    xport_progress(cli, 0);
    got += (int)xport_poll_cq(srv, q, 1);
    got += (int)xport_poll_cq(cli, q + 1, 1);
  }
  assert_int_equal(got, 2);
  xport_close(srv);
  last_log[0] = '\0';
  for (i = 0; i < 32; ++i) {
    if (xport_post_send(cli, peer, m[i], sizeof(m[i]), m[i]) == 0) {
      ++posted;
    }
  }
  assert_int_equal(posted, 32);
  assert_int_equal(drain(cli, posted, &errs, &first), posted);
  printf("  %s: %d of %d sends failed, first with %s\n", provider, errs, posted,
         strerror(-first));
  assert_true(errs > 0);
  if (want_status) {
    assert_int_equal(first, want_status);
  }
  /* What ended them is in the log: the provider's own text, or the
     backend's verdict. */
  assert_non_null(strstr(last_log, said));
  /* A send to it now fails at once, with the same error. */
  if (want_status) {
    assert_int_equal(xport_post_send(cli, peer, m[0], 8, m[0]), 0);
    assert_int_equal(drain(cli, 1, &errs, &first), 1);
    assert_int_equal(first, want_status);
  }
  xport_close(cli);
}

static void test_fabric_dead_peer_tcp(void **state) {
  (void)state;
  if (!have("tcp;ofi_rxm")) {
    skip();
  }
  dead_peer_case("tcp;ofi_rxm", 0, "provider:", 0);
}

/* udp;ofi_rxd never gives up on a peer: the backend's peer timeout ends
   the sends, by reopening the endpoint. */
static void test_fabric_dead_peer_udp_timeout(void **state) {
  (void)state;
  if (!have("udp;ofi_rxd")) {
    skip();
  }
  dead_peer_case("udp;ofi_rxd", 300000000ull, "no send completed for 0.3 s",
                 -ETIMEDOUT);
}

static void test_fabric_garbage_on_exchange_port(void **state) {
  xport_config c;
  xport *srv;
  struct sockaddr_storage ss;
  socklen_t l;
  xport_peer p0 = 0;
  char b[16];
  ssize_t n;
  uint64_t t0;
  int fd;
  const char *http = "GET / HTTP/1.0\r\n\r\n";

  (void)state;
  if (!have("tcp;ofi_rxm")) {
    skip();
  }
  base_cfg(&c, "tcp;ofi_rxm");
  c.listen = 1;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &ss, &l);
  fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_int_equal(connect(fd, (struct sockaddr *)&ss, l), 0);
  assert_true(write(fd, http, strlen(http)) > 0);
  t0 = xport_now();
  /* The server closes the connection without answering. */
  while ((n = recv(fd, b, sizeof(b), MSG_DONTWAIT)) < 0 &&
         (errno == EAGAIN || errno == EWOULDBLOCK) &&
         xport_now() - t0 < XT_LIMIT_NS) {
    xport_progress(srv, 1000000ull);
  }
  assert_true(n <= 0);
  /* and it never became a peer */
  assert_int_equal(xport_peer_addr(srv, p0, &ss, &l), -EINVAL);
  close(fd);
  xport_close(srv);
}

/* Clients come and go, one after another, as srd-perf's server sees
   them: each is served, and removing it frees its peer and its address
   (300 is more than the backend's 256 peers and libfabric's AV entries
   that are never removed). */
static void peers_come_and_go(const char *provider, int rounds) {
  xport_config c;
  xport *srv, *cli;
  struct sockaddr_storage ss;
  socklen_t l;
  uint8_t r[64], m[64];
  xport_cqe q;
  xport_peer peer;
  int i, served = 0;

  base_cfg(&c, provider);
  c.listen = 1;
  c.max_sends = c.max_recvs = 8;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &ss, &l);
  c.listen = 0;
  for (i = 0; i < rounds; ++i) {
    uint64_t t0 = xport_now();
    int got = 0, sent = 0;
    assert_int_equal(xport_open(&cli, &c), 0);
    assert_int_equal(xport_add_peer(cli, (struct sockaddr *)&ss, l, &peer), 0);
    memset(m, i & 0xff, sizeof(m));
    assert_int_equal(xport_post_recv(srv, r, sizeof(r), r), 0);
    assert_int_equal(xport_post_send(cli, peer, m, sizeof(m), m), 0);
    while ((!got || !sent) && xport_now() - t0 < XT_LIMIT_NS) {
      xport_progress(cli, 0);
      xport_progress(srv, 0);
      if (!sent && xport_poll_cq(cli, &q, 1) == 1) {
        assert_int_equal(q.status, 0);
        sent = 1;
      }
      if (!got && xport_poll_cq(srv, &q, 1) == 1) {
        assert_int_equal(q.status, 0);
        assert_int_equal(q.len, sizeof(m));
        assert_int_equal(r[0], i & 0xff);
        assert_true(q.peer < 256);
        assert_int_equal(xport_remove_peer(srv, q.peer), 0);
        got = 1;
      }
    }
    if (!got || !sent) {
      printf("  %s: client %d: got %d sent %d\n", provider, i, got, sent);
    }
    assert_true(got && sent);
    ++served;
    xport_close(cli);
  }
  printf("  %s: %d clients served one after another\n", provider, served);
  xport_close(srv);
}

/* On tcp;ofi_rxm only: on udp;ofi_rxd (1.17) it fails at random (the
   56th client of 300 in one run: its send completed, the server never
   received it), likely an earlier client's UDP port reused, which rxd
   cannot tell from the old endpoint (docs/transports.md). */
static void test_fabric_peers_come_and_go(void **state) {
  (void)state;
  if (!have("tcp;ofi_rxm")) {
    skip();
  }
  peers_come_and_go("tcp;ofi_rxm", 300);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fabric_echo_many_in_flight),
      cmocka_unit_test(test_fabric_echo_small_busy_poll),
      cmocka_unit_test(test_fabric_echo_v6),
      cmocka_unit_test(test_fabric_bad_provider),
      cmocka_unit_test(test_fabric_exchange_refused),
      cmocka_unit_test(test_fabric_remove_peer_cancels_queued),
      cmocka_unit_test(test_fabric_dead_peer_tcp),
      cmocka_unit_test(test_fabric_dead_peer_udp_timeout),
      cmocka_unit_test(test_fabric_garbage_on_exchange_port),
      cmocka_unit_test(test_fabric_peers_come_and_go),
  };
  return cmocka_run_group_tests_name("fabric", tests, NULL, NULL);
}

#else

int main(void) {
  printf("skip: libfabric was not built in (make deps installs "
         "libfabric-dev; make then rebuilds)\n");
  return 77;
}

#endif
