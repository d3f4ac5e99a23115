/*
 * xtest.h: what the transport tests share: an echo server on a thread of
 * its own (an xport belongs to the thread that opened it), a client that
 * sends indexed, patterned messages and checks that every echo comes back
 * intact exactly once, and seeded message sizes.  Every loop is bounded
 * by a count and a wall-clock limit: these tests use real sockets on
 * loopback, the one place a test here may read a clock.
 */
#ifndef XTEST_H
#define XTEST_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"

#include "xport.h"

#define XT_LIMIT_NS (20ull * 1000000000ull)

static inline void xt_fill(uint8_t *b, size_t len, uint32_t index) {
  uint64_t x =
      0x243F6A8885A308D3ull ^ ((uint64_t)index * 0x9E3779B97F4A7C15ull);
  size_t i;

  for (i = 0; i < len; ++i) {
    if (i < 4) {
      b[i] = (uint8_t)(index >> (8 * i));
    } else {
      if ((i & 7) == 4) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
      }
      b[i] = (uint8_t)(x >> (8 * (i & 7)));
    }
  }
}

/* xt_index returns the index of a message of at least 4 bytes. */
static uint32_t xt_index(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
         (uint32_t)b[3] << 24;
}

static inline void xt_log(void *ud, const char *msg) {
  (void)ud;
  printf("  [xport] %s\n", msg);
}

/* An echo server: posts receives, sends every message back to its
   sender, until told to stop. */
typedef struct xt_server {
  xport_config cfg;
  pthread_t th;
  atomic_int ready; /* 1 listening, -1 failed */
  atomic_int stop;
  struct sockaddr_storage addr;
  socklen_t alen;
  uint64_t echoed;
  xport_stats st;
  size_t cap;
} xt_server;

#define XT_SRV_BUFS 64

static inline void *xt_server_main(void *arg) {
  xt_server *s = arg;
  xport *x;
  uint8_t *bufs[XT_SRV_BUFS];
  int i;

  if (xport_open(&x, &s->cfg) != 0) {
    atomic_store(&s->ready, -1);
    return NULL;
  }
  xport_local_addr(x, &s->addr, &s->alen);
  for (i = 0; i < XT_SRV_BUFS; ++i) {
    bufs[i] = malloc(s->cap);
    xport_post_recv(x, bufs[i], s->cap, bufs[i]);
  }
  atomic_store(&s->ready, 1);
  while (!atomic_load(&s->stop)) {
    xport_cqe c[32];
    size_t n, k;
    xport_progress(x, 20000000ull);
    n = xport_poll_cq(x, c, 32);
    for (k = 0; k < n; ++k) {
      if (c[k].op == XPORT_OP_RECV) {
        if (c[k].status == 0 &&
            xport_post_send(x, c[k].peer, c[k].buf, c[k].len, c[k].buf) == 0) {
          ++s->echoed;
          continue; /* reposted when the echo is done */
        }
        xport_post_recv(x, c[k].buf, s->cap, c[k].buf);
      } else {
        xport_post_recv(x, c[k].buf, s->cap, c[k].buf);
      }
    }
  }
  xport_get_stats(x, &s->st);
  xport_close(x);
  for (i = 0; i < XT_SRV_BUFS; ++i) {
    free(bufs[i]);
  }
  return NULL;
}

/* xt_server_start starts an echo server with |cfg| (listen, port 0);
   returns 0, or -1 if it could not open (the log says why). */
static inline int xt_server_start(xt_server *s, const xport_config *cfg,
                                  size_t cap) {
  memset(s, 0, sizeof(*s));
  s->cfg = *cfg;
  s->cfg.listen = 1;
  s->cfg.port = 0;
  /* Two endpoints seeded alike would draw the same incarnation id, and an
     engine drops a packet that carries its own (a reflection). */
  if (s->cfg.seed != 0) {
    s->cfg.seed = s->cfg.seed * 2 + 1;
  }
  s->cap = cap;
  assert_int_equal(pthread_create(&s->th, NULL, xt_server_main, s), 0);
  while (atomic_load(&s->ready) == 0) {
    sched_yield();
  }
  if (atomic_load(&s->ready) < 0) {
    pthread_join(s->th, NULL);
    return -1;
  }
  return 0;
}

static inline void xt_server_stop(xt_server *s) {
  atomic_store(&s->stop, 1);
  pthread_join(s->th, NULL);
}

/* xt_have_v6_loopback says whether a socket of |type| can bind ::1 (a
   container may have no IPv6); the IPv6 tests skip() without it. */
static inline int xt_have_v6_loopback(int type) {
  int fd = socket(AF_INET6, type, 0), ok;
  struct sockaddr_in6 a;

  if (fd < 0) {
    return 0;
  }
  memset(&a, 0, sizeof(a));
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
  close(fd);
  return ok;
}

/* xt_result is what a client run saw. */
typedef struct xt_result {
  uint64_t sent_ok, send_err, echoes, dups, corrupt, recv_err;
  /* send_buf_changed: send buffers not as filled when their send
     completed (a transport wrote into the caller's buffer) */
  uint64_t send_buf_changed;
  int first_err;
  uint64_t elapsed_ns;
} xt_result;

/* xt_bufs are a client run's buffers: the xport may hold them until it
   is closed, so the caller frees them after xport_close. */
typedef struct xt_bufs {
  uint8_t **sb, **rb;
  uint32_t n;
} xt_bufs;

static inline void xt_bufs_free(xt_bufs *b) {
  uint32_t i;

  for (i = 0; i < b->n; ++i) {
    free(b->sb[i]);
    free(b->rb[i]);
  }
  free(b->sb);
  free(b->rb);
}

/* xt_echo_run sends |n| messages of seeded sizes in [4, max_size] (4
   bytes hold the index) with |window| in flight, to |peer| of |x|, and
   checks the echoes, and each send buffer as its send completes. */
static inline void xt_echo_run(xport *x, xport_peer peer, uint32_t n,
                               size_t max_size, uint32_t window, uint64_t seed,
                               xt_result *r, xt_bufs *bufs) {
  uint8_t **sb = calloc(window, sizeof(uint8_t *));
  uint8_t **rb = calloc(window, sizeof(uint8_t *));
  size_t *len = calloc(n, sizeof(size_t));
  uint8_t *seen = calloc(n, 1);
  uint8_t *chk = malloc(max_size + 4);
  uint32_t next = 0, i, outstanding = 0;
  uint64_t s = seed, t0 = xport_now();
  int *slot_of_send = calloc(window, sizeof(int));
  uint32_t *msg_of_slot = calloc(window, sizeof(uint32_t));

  memset(r, 0, sizeof(*r));
  for (i = 0; i < n; ++i) {
    len[i] = 4 + (size_t)(tu_rand(&s) % (max_size - 3));
  }
  for (i = 0; i < window; ++i) {
    sb[i] = malloc(max_size + 4);
    rb[i] = malloc(max_size + 4);
    assert_int_equal(xport_post_recv(x, rb[i], max_size + 4, rb[i]), 0);
    slot_of_send[i] = 0;
  }
  while ((r->echoes + r->dups + r->recv_err < n || outstanding) &&
         xport_now() - t0 < XT_LIMIT_NS && r->send_err == 0) {
    xport_cqe c[32];
    size_t k, m;
    /* At most |window| messages not yet echoed: the |window| receives
       posted here then always have room for the echoes (a send completes
       when the server took it, before its echo is back). */
    for (i = 0;
         i < window && next < n &&
         next - (r->echoes + r->dups + r->corrupt + r->recv_err) < window;
         ++i) {
      if (slot_of_send[i]) {
        continue;
      }
      xt_fill(sb[i], len[next], next);
      if (xport_post_send(x, peer, sb[i], len[next], (void *)(uintptr_t)i) !=
          0) {
        break;
      }
      slot_of_send[i] = 1;
      msg_of_slot[i] = next;
      ++outstanding;
      ++next;
    }
    xport_progress(x, 20000000ull);
    m = xport_poll_cq(x, c, 32);
    for (k = 0; k < m; ++k) {
      if (c[k].op == XPORT_OP_SEND) {
        uintptr_t sl = (uintptr_t)c[k].ctx;
        xt_fill(chk, len[msg_of_slot[sl]], msg_of_slot[sl]);
        if (memcmp(chk, sb[sl], len[msg_of_slot[sl]]) != 0) {
          ++r->send_buf_changed;
        }
        slot_of_send[sl] = 0;
        --outstanding;
        if (c[k].status == 0) {
          ++r->sent_ok;
        } else {
          if (r->send_err++ == 0) {
            r->first_err = c[k].status;
          }
        }
        continue;
      }
      if (c[k].status != 0) {
        ++r->recv_err;
      } else {
        uint32_t idx = xt_index(c[k].buf);
        if (idx >= n || c[k].len != len[idx]) {
          ++r->corrupt;
        } else {
          xt_fill(chk, len[idx], idx);
          if (memcmp(chk, c[k].buf, len[idx]) != 0) {
            ++r->corrupt;
          } else if (seen[idx]) {
            ++r->dups;
          } else {
            seen[idx] = 1;
            ++r->echoes;
          }
        }
      }
      xport_post_recv(x, c[k].buf, max_size + 4, c[k].buf);
    }
  }
  r->elapsed_ns = xport_now() - t0;
  if (r->send_err) {
    printf("  first send error: %s (%llu sent ok, %llu echoes)\n",
           strerror(-r->first_err), (unsigned long long)r->sent_ok,
           (unsigned long long)r->echoes);
  }
  free(len);
  free(seen);
  free(chk);
  free(slot_of_send);
  free(msg_of_slot);
  bufs->sb = sb;
  bufs->rb = rb;
  bufs->n = window;
}

/* A pair of xports in this thread: a listening one and a client with the
   listener as its peer (the tcp backend's tests and the staging layer's
   over tcp). */
typedef struct xt_pair {
  xport *srv, *cli;
  xport_peer peer;
} xt_pair;

static inline void xt_open_pair(xt_pair *p, xport_config *c) {
  struct sockaddr_storage ss;
  socklen_t l;

  c->listen = 1;
  assert_int_equal(xport_open(&p->srv, c), 0);
  xport_local_addr(p->srv, &ss, &l);
  c->listen = 0;
  assert_int_equal(xport_open(&p->cli, c), 0);
  assert_int_equal(xport_add_peer(p->cli, (struct sockaddr *)&ss, l, &p->peer),
                   0);
}

#endif /* XTEST_H */
