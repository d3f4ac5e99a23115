/*
 * test_tcp.c: the kernel TCP backend behind the same message API:
 * messages of every size (empty ones too) come back intact, in order, over
 * IPv4 and IPv6, blocking and busy-poll; a receive buffer that is too
 * small fails that receive with -EMSGSIZE and the stream goes on; a
 * refused connection fails its sends with -ECONNREFUSED; a peer that
 * speaks something else is cut off with -EPROTO and counted; a peer that
 * goes away fails the sends queued to it.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xtest.h"

static uint64_t seed;

static void base_cfg(xport_config *cfg, int family) {
  xport_config_default(cfg);
  cfg->backend = "tcp";
  cfg->family = family;
  cfg->bind_addr = family == AF_INET6 ? "::1" : "127.0.0.1";
  cfg->max_msg_size = 1 << 20;
  cfg->log = xt_log;
}

static void echo_case(xport_config *c, uint32_t n, size_t max_size,
                      uint32_t window) {
  xt_server srv;
  xport *x;
  xport_peer peer;
  xt_bufs bufs;
  xt_result r;

  assert_int_equal(xt_server_start(&srv, c, max_size + 4), 0);
  assert_int_equal(xport_open(&x, c), 0);
  printf("  %s\n", xport_describe(x));
  assert_int_equal(
      xport_add_peer(x, (struct sockaddr *)&srv.addr, srv.alen, &peer), 0);
  xt_echo_run(x, peer, n, max_size, window, seed, &r, &bufs);
  xport_close(x);
  xt_bufs_free(&bufs);
  xt_server_stop(&srv);
  tu_assert(r.send_err == 0 && r.sent_ok == n && r.echoes == n);
  tu_assert(r.dups == 0 && r.corrupt == 0 && r.recv_err == 0);
}

static void test_tcp_echo_v4_blocking(void **state) {
  xport_config c;

  (void)state;
  seed = tu_seed("tcp_echo_v4_blocking");
  base_cfg(&c, AF_INET);
  echo_case(&c, 500, 300000, 16);
}

static void test_tcp_echo_v6_busy_poll(void **state) {
  xport_config c;

  (void)state;
  if (!xt_have_v6_loopback(SOCK_STREAM)) {
    skip(); /* no IPv6 loopback here */
  }
  seed = tu_seed("tcp_echo_v6_busy_poll");
  base_cfg(&c, AF_INET6);
  c.busy_poll = 1;
  echo_case(&c, 500, 100000, 16);
}

/* pump progresses both until |want| completions came from |x|. */
static size_t pump(xt_pair *p, xport *x, xport_cqe *q, size_t want) {
  size_t got = 0;
  uint64_t t0 = xport_now();

  while (got < want && xport_now() - t0 < XT_LIMIT_NS) {
    xport_progress(p->srv, 0);
    xport_progress(p->cli, 0);
    got += xport_poll_cq(x, q + got, want - got);
  }
  return got;
}

static void test_tcp_small_buffer_fails_that_receive(void **state) {
  xport_config c;
  xt_pair p;
  uint8_t big[5000], small[100], ok[5000], msg2[10] = "0123456789";
  xport_cqe q[4];
  size_t n;

  (void)state;
  memset(big, 7, sizeof(big));
  base_cfg(&c, AF_INET);
  xt_open_pair(&p, &c);
  assert_int_equal(xport_post_recv(p.srv, small, sizeof(small), small), 0);
  assert_int_equal(xport_post_recv(p.srv, ok, sizeof(ok), ok), 0);
  assert_int_equal(xport_post_send(p.cli, p.peer, big, sizeof(big), big), 0);
  assert_int_equal(xport_post_send(p.cli, p.peer, msg2, 10, msg2), 0);
  n = pump(&p, p.srv, q, 2);
  assert_int_equal(n, 2);
  assert_int_equal(q[0].status, -EMSGSIZE);
  assert_ptr_equal(q[0].buf, small);
  assert_int_equal(q[0].len, 5000);
  /* The stream goes on: the next message lands in the next buffer. */
  assert_int_equal(q[1].status, 0);
  assert_int_equal(q[1].len, 10);
  assert_memory_equal(ok, "0123456789", 10);
  xport_close(p.cli);
  xport_close(p.srv);
}

static void test_tcp_empty_message(void **state) {
  xport_config c;
  xt_pair p;
  uint8_t r[16];
  xport_cqe q[2];

  (void)state;
  base_cfg(&c, AF_INET);
  xt_open_pair(&p, &c);
  assert_int_equal(xport_post_recv(p.srv, r, sizeof(r), r), 0);
  assert_int_equal(xport_post_send(p.cli, p.peer, NULL, 0, NULL), 0);
  assert_int_equal(pump(&p, p.srv, q, 1), 1);
  assert_int_equal(q[0].status, 0);
  assert_int_equal(q[0].len, 0);
  assert_int_equal(pump(&p, p.cli, q, 1), 1);
  assert_int_equal(q[0].status, 0);
  xport_close(p.cli);
  xport_close(p.srv);
}

static void test_tcp_refused(void **state) {
  xport_config c;
  xport *x;
  xport_peer peer;
  struct sockaddr_in a;
  socklen_t l = sizeof(a);
  uint8_t m[8] = {0};
  xport_cqe q;
  uint64_t t0;
  int fd, got = 0;

  (void)state;
  fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, (struct sockaddr *)&a, sizeof(a));
  getsockname(fd, (struct sockaddr *)&a, &l);
  close(fd); /* nobody listens there now */
  base_cfg(&c, AF_INET);
  assert_int_equal(xport_open(&x, &c), 0);
  assert_int_equal(xport_add_peer(x, (struct sockaddr *)&a, l, &peer), 0);
  assert_int_equal(xport_post_send(x, peer, m, sizeof(m), NULL), 0);
  t0 = xport_now();
  while (!got && xport_now() - t0 < XT_LIMIT_NS) {
    xport_progress(x, 10000000ull);
    got = (int)xport_poll_cq(x, &q, 1);
  }
  assert_int_equal(got, 1);
  assert_int_equal(q.status, -ECONNREFUSED);
  xport_close(x);
}

static void test_tcp_garbage_peer_cut_off(void **state) {
  xport_config c;
  xport *srv;
  struct sockaddr_storage ss;
  socklen_t l;
  xport_stats st;
  uint8_t r[256];
  xport_cqe q;
  int fd;
  uint64_t t0;
  const char *http = "GET / HTTP/1.0\r\n\r\n";

  (void)state;
  base_cfg(&c, AF_INET);
  c.listen = 1;
  assert_int_equal(xport_open(&srv, &c), 0);
  xport_local_addr(srv, &ss, &l);
  assert_int_equal(xport_post_recv(srv, r, sizeof(r), r), 0);
  fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_int_equal(connect(fd, (struct sockaddr *)&ss, l), 0);
  assert_true(write(fd, http, strlen(http)) > 0);
  t0 = xport_now();
  do {
    xport_progress(srv, 10000000ull);
    xport_get_stats(srv, &st);
  } while (st.bad_in == 0 && xport_now() - t0 < XT_LIMIT_NS);
  assert_int_equal(st.bad_in, 1);
  /* Nothing delivered; the connection was closed on it. */
  assert_int_equal(xport_poll_cq(srv, &q, 1), 0);
  {
    char b[16];
    ssize_t n;
    t0 = xport_now();
    while ((n = recv(fd, b, sizeof(b), MSG_DONTWAIT)) < 0 &&
           (errno == EAGAIN || errno == EWOULDBLOCK) &&
           xport_now() - t0 < XT_LIMIT_NS) {
      xport_progress(srv, 1000000ull);
    }
    assert_true(n <= 0);
  }
  close(fd);
  xport_close(srv);
}

static void test_tcp_peer_vanishes(void **state) {
  xport_config c;
  xt_pair p;
  static uint8_t big[1 << 20];
  xport_cqe q[64];
  uint64_t t0;
  int i, err = 0, first = 0, posted = 0, done = 0;

  (void)state;
  base_cfg(&c, AF_INET);
  xt_open_pair(&p, &c);
  /* The server never posts a receive, so the client's sends back up in
     the kernel's buffers; then the server goes away. */
  for (i = 0; i < 32; ++i) {
    if (xport_post_send(p.cli, p.peer, big, sizeof(big), NULL) == 0) {
      ++posted;
    }
  }
  for (i = 0; i < 100; ++i) {
    xport_progress(p.srv, 0);
    xport_progress(p.cli, 0);
  }
  xport_close(p.srv);
  t0 = xport_now();
  while (done < posted && xport_now() - t0 < XT_LIMIT_NS) {
    size_t n, k;
    xport_progress(p.cli, 10000000ull);
    n = xport_poll_cq(p.cli, q, 64);
    for (k = 0; k < n; ++k, ++done) {
      if (q[k].status != 0 && err++ == 0) {
        first = q[k].status;
      }
    }
  }
  printf("  %d of %d sends failed, first with %s\n", err, posted,
         strerror(-first));
  assert_int_equal(done, posted);
  assert_true(err > 0);
  assert_true(first == -ECONNRESET || first == -EPIPE);
  xport_close(p.cli);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcp_echo_v4_blocking),
      cmocka_unit_test(test_tcp_echo_v6_busy_poll),
      cmocka_unit_test(test_tcp_small_buffer_fails_that_receive),
      cmocka_unit_test(test_tcp_empty_message),
      cmocka_unit_test(test_tcp_refused),
      cmocka_unit_test(test_tcp_garbage_peer_cut_off),
      cmocka_unit_test(test_tcp_peer_vanishes),
  };
  return cmocka_run_group_tests_name("tcp", tests, NULL, NULL);
}
