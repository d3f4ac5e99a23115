/*
 * test_stage.c: CUDA device memory staged through pinned host buffers
 * (transports/cuda/xport_stage.c), over the tcp backend, on a fake
 * device, so that the staging logic is tested where there is no GPU
 * (tools/gpu-check.sh runs the real one).
 *
 * The fake is hostile where a real device would be unforgiving: its
 * "device memory" is mapped PROT_NONE, so that any host access that is
 * not one of its copies (the backend handed a device pointer, the layer
 * peeking at one) faults; its asynchronous copies run only when an event
 * query or a synchronize gets to them, late and in a seeded random
 * number of steps, so that a send completed before its copy, or a
 * receive before its copy to the device, shows as wrong bytes; and it
 * can fail copies, or hold them all.
 *
 * Checked through the public API: every message arrives intact exactly
 * once and in posting order (tcp's per-peer order) whether its buffers
 * are device or host memory, mixed; every posted operation ends in one
 * completion with its buffer and context; failed copies complete with
 * -EIO naming the CUDA error; a removed peer's waiting sends end with
 * -ECANCELED; a budget smaller than the traffic gives -EAGAIN and still
 * delivers; a close with everything in flight frees everything (the
 * ASan build checks).  srd-perf -m cuda's end-to-end test and the
 * no-device message: test/tools/test_perf_cuda.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>

#include "xtest.h"

#include "config.h"

static uint64_t seed;

/* ------------------------------------------------------------------ */
/* the fake device (test/transports/fake_cudart.c, next to this binary) */

static int (*fk_control)(int hold, double fail, uint64_t seed);
static void (*fk_counts)(uint64_t *copies, uint64_t *failed, int *streams,
                         int *events);

/* fk_reset seeds the fake, lets its copies run, fails none. */
static void fk_reset(uint64_t s) {
  fk_control(0, 0, s | 1);
}

/* fk_live says whether the fake still has device regions, streams or
   events (1), or everything was freed (0). */
static int fk_live(void) {
  uint64_t c, f;
  int st, ev;
  fk_counts(&c, &f, &st, &ev);
  return fk_control(0, -1, 0) != 0 || st != 0 || ev != 0;
}

static uint64_t fk_copies(void) {
  uint64_t c, f;
  int st, ev;
  fk_counts(&c, &f, &st, &ev);
  return c;
}

/* ------------------------------------------------------------------ */
/* helpers                                                              */

static void cfg_of(xport_config *c) {
  xport_config_default(c);
  c->backend = "tcp";
  c->family = AF_INET;
  c->bind_addr = "127.0.0.1";
  c->max_msg_size = 1 << 20;
  c->mem = XPORT_MEM_CUDA;
  c->log = xt_log;
}

/* put writes message |idx| of |len| bytes into |b| (device or host). */
static void put(xport *x, uint8_t *b, size_t len, uint32_t idx, int dev) {
  uint8_t *h = malloc(len ? len : 1);
  xt_fill(h, len, idx);
  if (dev) {
    assert_int_equal(xport_mem_copy(x, b, h, len), 0);
  } else {
    memcpy(b, h, len);
  }
  free(h);
}

/* check says whether |b| holds message |idx| of |len| bytes. */
static int check(xport *x, const uint8_t *b, size_t len, uint32_t idx,
                 int dev) {
  uint8_t *h = malloc(len ? len : 1), *w = malloc(len ? len : 1);
  int ok;
  if (dev) {
    assert_int_equal(xport_mem_copy(x, h, b, len), 0);
  } else {
    memcpy(h, b, len);
  }
  xt_fill(w, len, idx);
  ok = memcmp(h, w, len) == 0;
  free(h);
  free(w);
  return ok;
}

#define NB 16 /* buffers each side */

typedef struct side {
  uint8_t *buf[NB];
  int dev[NB];
  size_t cap;
} side;

static void side_alloc(side *s, xport *x, size_t cap, uint64_t *rng) {
  int i;
  s->cap = cap;
  for (i = 0; i < NB; ++i) {
    /* Two in three in device memory, the rest host: a mix. */
    s->dev[i] = tu_rand(rng) % 3 != 0;
    s->buf[i] = s->dev[i] ? xport_mem_alloc(x, cap) : malloc(cap);
    assert_non_null(s->buf[i]);
  }
}

/* side_free frees host buffers after the close; device memory went with
   the xport (receives may still have been posted). */
static void side_free(side *s) {
  int i;
  for (i = 0; i < NB; ++i) {
    if (!s->dev[i]) {
      free(s->buf[i]);
    }
  }
}

/* ------------------------------------------------------------------ */
/* the cases                                                            */

/* Client sends n messages of seeded sizes from a mix of device and host
   buffers; the server receives into a mix and checks each one's bytes
   and order; every op completes once with its buffer and context. */
static void run_stream(uint32_t n, size_t stage_bytes, double fail_p,
                       const char *name) {
  xport_config c;
  xt_pair p;
  side tx, rx;
  uint64_t rng;
  int busy_tx[NB] = {0}, busy_rx[NB] = {0};
  uint32_t next = 0, want = 0, got = 0, send_done = 0, send_err = 0, again = 0;
  uint64_t t0 = xport_now();
  xport_stats st;

  seed = tu_seed(name);
  rng = seed;
  fk_reset(seed ^ 0x5eed);
  fk_control(0, fail_p, 0);
  cfg_of(&c);
  c.stage_bytes = stage_bytes;
  xt_open_pair(&p, &c);
  printf("  %s\n", xport_describe(p.cli));
  side_alloc(&tx, p.cli, 256 << 10, &rng);
  side_alloc(&rx, p.srv, 256 << 10, &rng);
  while ((send_done < n || (fail_p == 0 && got < n)) &&
         xport_now() - t0 < XT_LIMIT_NS) {
    xport_cqe q[32];
    size_t k, i;
    int b;
    for (b = 0; b < NB; ++b) {
      if (!busy_rx[b]) {
        int rv = xport_post_recv(p.srv, rx.buf[b], rx.cap,
                                 (void *)(uintptr_t)(b + 1));
        if (rv == -EAGAIN) {
          ++again;
          break;
        }
        assert_int_equal(rv, 0);
        busy_rx[b] = 1;
      }
    }
    for (b = 0; b < NB && next < n; ++b) {
      size_t len;
      int rv;
      if (busy_tx[b]) {
        continue;
      }
      /* Sizes 4..256K (the index is in the first 4 bytes), most small,
         some large. */
      len = 4 + (tu_rand(&rng) % 4 == 0 ? tu_rand(&rng) % ((256 << 10) - 4)
                                        : tu_rand(&rng) % 3000);
      put(p.cli, tx.buf[b], len, next, tx.dev[b]);
      rv = xport_post_send(p.cli, p.peer, tx.buf[b], len,
                           (void *)(uintptr_t)(b + 1));
      if (rv == -EAGAIN) {
        ++again;
        break;
      }
      assert_int_equal(rv, 0);
      busy_tx[b] = 1;
      ++next;
    }
    xport_progress(p.cli, 0);
    xport_progress(p.srv, 0);
    k = xport_poll_cq(p.cli, q, 32);
    for (i = 0; i < k; ++i) {
      b = (int)(uintptr_t)q[i].ctx - 1;
      assert_true(q[i].op == XPORT_OP_SEND && b >= 0 && b < NB);
      tu_assert(busy_tx[b] && q[i].buf == tx.buf[b]);
      busy_tx[b] = 0;
      ++send_done;
      if (q[i].status != 0) {
        tu_assert(q[i].status == -EIO && q[i].detail <= XPORT_DETAIL_CUDA);
        tu_assert(strstr(xport_strerror(&q[i]), "cudaErrorIllegalAddress") !=
                  NULL);
        ++send_err;
      }
    }
    k = xport_poll_cq(p.srv, q, 32);
    for (i = 0; i < k; ++i) {
      b = (int)(uintptr_t)q[i].ctx - 1;
      assert_true(q[i].op == XPORT_OP_RECV && b >= 0 && b < NB);
      tu_assert(busy_rx[b] && q[i].buf == rx.buf[b]);
      busy_rx[b] = 0;
      if (q[i].status != 0) {
        /* A failed copy to the device: the message is lost to it. */
        tu_assert(fail_p > 0 && q[i].status == -EIO);
        ++got;
        continue;
      }
      tu_assert(q[i].len >= 4);
      {
        uint8_t head[4];
        uint32_t idx;
        if (rx.dev[b]) {
          assert_int_equal(xport_mem_copy(p.srv, head, rx.buf[b], 4), 0);
        } else {
          memcpy(head, rx.buf[b], 4);
        }
        idx = xt_index(head);
        /* tcp keeps order; failed sends leave gaps. */
        if (idx != want && fail_p == 0) {
          printf("  got %u, want %u (len %zu, dev %d)\n", idx, want, q[i].len,
                 rx.dev[b]);
        }
        tu_assert(idx >= want);
        tu_assert(fail_p > 0 || idx == want);
        tu_assert(check(p.srv, rx.buf[b], q[i].len, idx, rx.dev[b]));
        want = idx + 1;
      }
      ++got;
    }
  }
  xport_get_stats(p.cli, &st);
  printf("  %u messages, %u send completions (%u failed copies), %u "
         "received; staged %llu B out; %u -EAGAIN; fake copies %llu\n",
         n, send_done, send_err, got, (unsigned long long)st.staged_out, again,
         (unsigned long long)fk_copies());
  tu_assert(send_done == n);
  tu_assert(fail_p > 0 || (got == n && send_err == 0));
  tu_assert(fail_p == 0 || send_err > 0);
  tu_assert(st.staged_out > 0);
  if (stage_bytes) {
    tu_assert(again > 0); /* the budget bit */
  }
  xport_close(p.cli);
  xport_close(p.srv);
  side_free(&tx);
  side_free(&rx);
  tu_assert(!fk_live());
}

static void test_stage_mixed_memory_intact_in_order(void **state) {
  (void)state;
  run_stream(3000, 0, 0, "stage_mixed_memory_intact_in_order");
}

static void test_stage_budget_gives_eagain_and_delivers(void **state) {
  (void)state;
  /* 64 KiB a direction: far less than 16 messages of up to 256 KiB. */
  run_stream(600, 64 << 10, 0, "stage_budget_gives_eagain_and_delivers");
}

static void test_stage_failed_copies_complete_once(void **state) {
  (void)state;
  run_stream(1500, 0, 0.05, "stage_failed_copies_complete_once");
}

/* Sends whose copies have not run when their peer is removed end with
   -ECANCELED, each once; close with receives posted frees them. */
static void test_stage_removed_peer_cancels_waiting_sends(void **state) {
  xport_config c;
  xt_pair p;
  uint8_t *b[8];
  int i, n = 0, canc = 0;
  xport_cqe q[16];
  uint64_t t0;

  (void)state;
  seed = tu_seed("stage_removed_peer_cancels_waiting_sends");
  fk_reset(seed);
  cfg_of(&c);
  xt_open_pair(&p, &c);
  for (i = 0; i < 8; ++i) {
    b[i] = xport_mem_alloc(p.cli, 4096);
    assert_non_null(b[i]);
  }
  /* A receive left posted at close, staged. */
  assert_int_equal(
      xport_post_recv(p.srv, xport_mem_alloc(p.srv, 4096), 4096, NULL), 0);
  fk_control(1, -1, 0);
  for (i = 0; i < 8; ++i) {
    assert_int_equal(xport_post_send(p.cli, p.peer, b[i], 4096, b[i]), 0);
  }
  xport_progress(p.cli, 0);
  assert_int_equal(xport_poll_cq(p.cli, q, 16), 0); /* all copying */
  assert_int_equal(xport_remove_peer(p.cli, p.peer), 0);
  fk_control(0, -1, 0);
  t0 = xport_now();
  while (n < 8 && xport_now() - t0 < XT_LIMIT_NS) {
    size_t k, j;
    xport_progress(p.cli, 0);
    k = xport_poll_cq(p.cli, q, 16);
    for (j = 0; j < k; ++j) {
      ++n;
      canc += q[j].status == -ECANCELED;
    }
  }
  printf("  8 sends waiting on their copies: %d completions, %d -ECANCELED\n",
         n, canc);
  assert_int_equal(n, 8);
  assert_int_equal(canc, 8);
  xport_progress(p.cli, 0);
  assert_int_equal(xport_poll_cq(p.cli, q, 16), 0); /* once each */
  for (i = 0; i < 8; ++i) {
    xport_mem_free(p.cli, b[i]);
  }
  xport_close(p.cli);
  xport_close(p.srv); /* its staged receive still posted */
  tu_assert(!fk_live());
}

/* Close with sends copying, posted to the backend and received but not
   yet polled: nothing leaks (ASan), device memory left allocated goes
   with the xport. */
static void test_stage_close_in_flight(void **state) {
  xport_config c;
  xt_pair p;
  uint8_t *b[8];
  int i;

  (void)state;
  seed = tu_seed("stage_close_in_flight");
  fk_reset(seed);
  cfg_of(&c);
  xt_open_pair(&p, &c);
  for (i = 0; i < 8; ++i) {
    b[i] = xport_mem_alloc(p.cli, 65536);
    assert_int_equal(
        xport_post_recv(p.srv, xport_mem_alloc(p.srv, 65536), 65536, NULL), 0);
  }
  for (i = 0; i < 8; ++i) {
    assert_int_equal(xport_post_send(p.cli, p.peer, b[i], 65536, NULL), 0);
    xport_progress(p.cli, 0);
    xport_progress(p.srv, 0);
  }
  xport_close(p.cli);
  xport_close(p.srv);
  tu_assert(!fk_live()); /* every device buffer, stream and event freed */
}

static void test_stage_regions(void **state) {
  xport_config c;
  xport *x, *h;
  uint8_t *d;

  (void)state;
  fk_reset(1);
  cfg_of(&c);
  assert_int_equal(xport_open(&x, &c), 0);
  d = xport_mem_alloc(x, 8192);
  assert_non_null(d);
  assert_int_equal(xport_mem_register(x, d + 100, 10), -EEXIST);
  assert_int_equal(xport_mem_unregister(x, d + 1), -ENOENT);
  assert_int_equal(xport_mem_register(x, d + 8192, 0), -EINVAL);
  xport_mem_free(x, d);
  assert_int_equal(fk_control(0, -1, 0), 0); /* no region left */
  xport_close(x);
  c.mem = XPORT_MEM_HOST;
  assert_int_equal(xport_open(&h, &c), 0);
  assert_int_equal(xport_mem_register(h, &c, sizeof(c)), -ENOTSUP);
  xport_close(h);
}

/* load_fake points SRD_CUDART at the fake next to this binary and finds
   its controls; returns 0, or 77 (skip) when it cannot be used. */
static int load_fake(void) {
  char exe[PATH_MAX], lib[PATH_MAX + 32];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  void *h;

#ifndef SRD_HAVE_CUDA
  printf("built without CUDA's headers: no staging layer to test "
         "(tools/install-deps.sh --cuda)\n");
  return 77;
#endif
  if (n <= 0) {
    return 77;
  }
  exe[n] = '\0';
  snprintf(lib, sizeof(lib), "%s/libfakecudart.so", dirname(exe));
  h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    printf("cannot load the fake CUDA runtime: %s\n", dlerror());
    return 1;
  }
  *(void **)&fk_control = dlsym(h, "fake_cuda_control");
  *(void **)&fk_counts = dlsym(h, "fake_cuda_counts");
  if (fk_control == NULL || fk_counts == NULL) {
    printf("%s has no controls\n", lib);
    return 1;
  }
  setenv("SRD_CUDART", lib, 1);
  return 0;
}

int main(void) {
  int rv = load_fake();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stage_mixed_memory_intact_in_order),
      cmocka_unit_test(test_stage_budget_gives_eagain_and_delivers),
      cmocka_unit_test(test_stage_failed_copies_complete_once),
      cmocka_unit_test(test_stage_removed_peer_cancels_waiting_sends),
      cmocka_unit_test(test_stage_close_in_flight),
      cmocka_unit_test(test_stage_regions),
  };
  if (rv != 0) {
    return rv;
  }
  return cmocka_run_group_tests_name("stage", tests, NULL, NULL);
}
