/*
 * test_failmalloc.c: allocation.  Every allocation of srd_ep_new and
 * srd_ep_add_peer is failed in turn: each failure returns SRD_ERR_NOMEM
 * and leaks nothing.  Then a whole lossy transfer runs with a counting
 * allocator and must not allocate once: pools are sized up front, never
 * on the packet path (shared/design.md).
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct fm {
  uint64_t calls;   /* allocation calls so far */
  uint64_t fail_at; /* the call that fails, UINT64_MAX for none */
  int64_t live;     /* allocations not yet freed */
} fm;

static void *fm_malloc(size_t n, void *ud) {
  fm *f = ud;
  void *p;
  if (f->calls++ == f->fail_at) {
    return NULL;
  }
  p = malloc(n ? n : 1);
  if (p) {
    ++f->live;
  }
  return p;
}

static void *fm_calloc(size_t nmemb, size_t size, void *ud) {
  fm *f = ud;
  void *p;
  if (f->calls++ == f->fail_at) {
    return NULL;
  }
  p = calloc(nmemb ? nmemb : 1, size ? size : 1);
  if (p) {
    ++f->live;
  }
  return p;
}

static void fm_free(void *p, void *ud) {
  fm *f = ud;
  if (p) {
    --f->live;
    free(p);
  }
}

static void test_failmalloc_ep_new_and_add_peer(void **state) {
  fm f;
  srd_mem mem = {&f, fm_malloc, fm_free, fm_calloc};
  srd_settings s;
  srd_peer_settings ps;
  uint64_t n, failures = 0;
  (void)state;

  srd_settings_default(&s);
  s.max_sends = 16;
  s.max_recvs = 16;
  srd_peer_settings_default(&ps);
  for (n = 0;; ++n) {
    srd_ep *ep = NULL;
    srd_peer_id id;
    int rv;

    memset(&f, 0, sizeof(f));
    f.fail_at = n;
    rv = srd_ep_new(&ep, &s, &mem);
    if (rv == 0) {
      rv = srd_ep_add_peer(ep, &ps, &id);
      if (rv == 0) {
        rv = srd_ep_add_peer(ep, &ps, &id);
      }
      assert_true(rv == 0 || rv == SRD_ERR_NOMEM);
      srd_ep_del(ep);
    } else {
      assert_int_equal(rv, SRD_ERR_NOMEM);
      assert_null(ep);
    }
    assert_int_equal(f.live, 0); /* nothing leaked */
    if (f.calls <= n) {
      break; /* every allocation succeeded: all were tried */
    }
    ++failures;
  }
  /* Every allocation call was failed once. */
  assert_true(failures >= 10);
  assert_int_equal(failures, n);
}

/* A lossy transfer through two endpoints never allocates. */
typedef struct wirepkt {
  uint8_t data[9000];
  size_t len;
  int to;
  uint16_t path;
} wirepkt;

static void test_failmalloc_no_alloc_on_packet_path(void **state) {
  enum { N = 300, SIZE = 20000 };
  fm f;
  srd_mem mem = {&f, fm_malloc, fm_free, fm_calloc};
  srd_settings s;
  srd_peer_settings ps;
  srd_ep *ep[2];
  srd_peer_id peer[2];
  static uint8_t msg[SIZE], rbuf[32][SIZE];
  static wirepkt q[4096];
  size_t nq = 0, i;
  uint64_t calls_after_setup, rng = 42, sent = 0, done = 0, got = 0;
  srd_tstamp now = 0;
  srd_cqe cqe[64];
  int k;
  (void)state;

  memset(&f, 0, sizeof(f));
  f.fail_at = UINT64_MAX;
  srd_settings_default(&s);
  s.mtu = 4096;
  srd_peer_settings_default(&ps);
  ps.n_paths = 8;
  for (k = 0; k < 2; ++k) {
    s.seed = (uint64_t)k + 1;
    assert_int_equal(srd_ep_new(&ep[k], &s, &mem), 0);
    assert_int_equal(srd_ep_add_peer(ep[k], &ps, &peer[k]), 0);
  }
  for (i = 0; i < 32; ++i) {
    assert_int_equal(
        srd_ep_post_recv(ep[1], rbuf[i], SIZE, (void *)(uintptr_t)i, now), 0);
  }
  calls_after_setup = f.calls;

  while (got < N || done < N) {
    size_t n, m;
    while (sent < N && sent - done < 32) {
      assert_int_equal(srd_ep_post_send(ep[0], peer[0], msg, SIZE, NULL, now),
                       0);
      ++sent;
    }
    for (k = 0; k < 2; ++k) {
      for (;;) {
        srd_path path;
        srd_ssize len;
        assert_true(nq < sizeof(q) / sizeof(q[0]));
        len =
            srd_ep_write_pkt(ep[k], &path, q[nq].data, sizeof(q[nq].data), now);
        assert_true(len >= 0);
        if (len == 0) {
          break;
        }
        /* 5% loss, 2% duplication. */
        if (tu_rand(&rng) % 100 < 5) {
          continue;
        }
        q[nq].len = (size_t)len;
        q[nq].to = !k;
        q[nq].path = path.path;
        ++nq;
        if (tu_rand(&rng) % 100 < 2) {
          q[nq] = q[nq - 1];
          ++nq;
        }
      }
    }
    now += 3 * SRD_US;
    m = nq;
    nq = 0;
    for (i = 0; i < m; ++i) {
      srd_path path = {peer[q[i].to], q[i].path};
      srd_ep_read_pkt(ep[q[i].to], &path, q[i].data, q[i].len, now);
    }
    for (k = 0; k < 2; ++k) {
      if (srd_ep_get_expiry(ep[k]) <= now) {
        srd_ep_handle_expiry(ep[k], now);
      }
    }
    while ((n = srd_ep_poll_cq(ep[0], cqe, 64)) > 0) {
      for (i = 0; i < n; ++i) {
        assert_int_equal(cqe[i].status, 0);
      }
      done += n;
    }
    while ((n = srd_ep_poll_cq(ep[1], cqe, 64)) > 0) {
      for (i = 0; i < n; ++i) {
        assert_int_equal(cqe[i].status, 0);
        assert_int_equal(
            srd_ep_post_recv(ep[1], cqe[i].buf, SIZE, cqe[i].user_ctx, now), 0);
      }
      got += n;
    }
    assert_true(now < 10 * SRD_S);
  }
  /* Not one allocation after the endpoints and peers were set up. */
  assert_int_equal(f.calls, calls_after_setup);
  srd_ep_del(ep[0]);
  srd_ep_del(ep[1]);
  assert_int_equal(f.live, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_failmalloc_ep_new_and_add_peer),
      cmocka_unit_test(test_failmalloc_no_alloc_on_packet_path),
  };
  return cmocka_run_group_tests_name("failmalloc", tests, NULL, NULL);
}
