/*
 * two_endpoints.c: the smallest complete libsrd driver.  Two endpoints in
 * one process exchange datagrams through an array that stands in for the
 * network, with a virtual clock.  docs/programmers-guide.md walks through
 * it; `make` builds it as build/bin/example-two-endpoints and the tests
 * run it.
 *
 *   cc -o two_endpoints two_endpoints.c $(pkg-config --cflags --libs srd)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <srd/srd.h>

#define N_MSGS 100
#define MSG_SIZE 50000

/* The "network": datagrams written but not yet read. */
typedef struct dgram {
  int to;        /* endpoint index */
  srd_path path; /* path.path: the entropy the sender chose */
  size_t len;
  uint8_t *data;
} dgram;

static dgram inflight[4096];
static size_t n_inflight;

int main(void) {
  srd_settings s;
  srd_peer_settings ps;
  srd_ep *ep[2];
  srd_peer_id peer[2]; /* ep[i]'s id for the other endpoint */
  srd_tstamp now = 0;  /* our clock, in nanoseconds */
  static uint8_t sendbuf[N_MSGS][MSG_SIZE], recvbuf[8][MSG_SIZE];
  uint8_t *pkt;
  size_t cap, i;
  int k, sent = 0, sends_done = 0, received = 0;

  /* 1. Endpoints and peers.  Each endpoint needs its own seed (it picks
        the incarnation id); a real driver passes fresh randomness. */
  for (k = 0; k < 2; ++k) {
    srd_settings_default(&s);
    s.seed = 1000 + (uint64_t)k;
    if (srd_ep_new(&ep[k], &s, srd_mem_default()) != 0) {
      fprintf(stderr, "srd_ep_new failed\n");
      return 1;
    }
    srd_peer_settings_default(&ps);
    ps.n_paths = 16;
    if (srd_ep_add_peer(ep[k], &ps, &peer[k]) != 0) {
      fprintf(stderr, "srd_ep_add_peer failed\n");
      return 1;
    }
  }
  cap = srd_ep_max_pkt_size(ep[0]);
  pkt = malloc(cap);

  /* 2. Post receives on B and the first sends on A.  Buffers belong to
        the engine until their completion is polled. */
  for (i = 0; i < 8; ++i) {
    srd_ep_post_recv(ep[1], recvbuf[i], MSG_SIZE, (void *)i, now);
  }

  /* 3. The packet loop. */
  while (sends_done < N_MSGS || received < N_MSGS) {
    srd_cqe cqe[16];
    size_t n, m;
    srd_tstamp next;

    while (sent < N_MSGS && sent - sends_done < 8) {
      memset(sendbuf[sent], sent, MSG_SIZE);
      srd_ep_post_send(ep[0], peer[0], sendbuf[sent], MSG_SIZE, NULL, now);
      ++sent;
    }

    /* Output: write every datagram that is due. */
    for (k = 0; k < 2; ++k) {
      srd_path path;
      srd_ssize len;
      while ((len = srd_ep_write_pkt(ep[k], &path, pkt, cap, now)) > 0) {
        dgram *d = &inflight[n_inflight++];
        d->to = !k;
        d->path = path;
        d->len = (size_t)len;
        d->data = malloc((size_t)len);
        memcpy(d->data, pkt, (size_t)len);
      }
    }

    /* The network takes 5 us; then input: read what arrived.  The path
       names the peer it came from, in the receiver's ids. */
    now += 5 * SRD_US;
    m = n_inflight;
    n_inflight = 0;
    for (i = 0; i < m; ++i) {
      dgram d = inflight[i];
      srd_path from = {peer[d.to], d.path.path};
      srd_ep_read_pkt(ep[d.to], &from, d.data, d.len, now);
      free(d.data);
    }

    /* Timers: run them when due. */
    for (k = 0; k < 2; ++k) {
      if (srd_ep_get_expiry(ep[k]) <= now) {
        srd_ep_handle_expiry(ep[k], now);
      }
    }

    /* Completions: every posted operation ends in exactly one. */
    while ((n = srd_ep_poll_cq(ep[0], cqe, 16)) > 0) {
      for (i = 0; i < n; ++i) {
        if (cqe[i].status != 0) {
          fprintf(stderr, "send failed: %s\n", srd_strerror(cqe[i].status));
          return 1;
        }
      }
      sends_done += (int)n;
    }
    while ((n = srd_ep_poll_cq(ep[1], cqe, 16)) > 0) {
      for (i = 0; i < n; ++i) {
        const uint8_t *b = cqe[i].buf;
        if (cqe[i].status != 0 || cqe[i].len != MSG_SIZE ||
            b[0] != b[MSG_SIZE - 1]) {
          fprintf(stderr, "bad receive\n");
          return 1;
        }
        ++received;
        /* Give the buffer back to the engine. */
        srd_ep_post_recv(ep[1], cqe[i].buf, MSG_SIZE, cqe[i].user_ctx, now);
      }
    }

    /* Nothing in flight: jump the clock to the next deadline. */
    next = srd_ep_get_expiry(ep[0]);
    if (srd_ep_get_expiry(ep[1]) < next) {
      next = srd_ep_get_expiry(ep[1]);
    }
    if (n_inflight == 0 && next != SRD_TSTAMP_NONE && next > now) {
      now = next;
    }
  }
  printf("two_endpoints: %d messages of %d bytes in %.1f us of virtual "
         "time\n",
         received, MSG_SIZE, (double)now / 1e3);
  srd_ep_del(ep[0]);
  srd_ep_del(ep[1]);
  free(pkt);
  return 0;
}
