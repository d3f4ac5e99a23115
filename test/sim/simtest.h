/*
 * simtest.h: what the simulator-transport tests share: a two-host network
 * of parallel paths, an application that records what the transport
 * reports, and an exact packet filter in front of a host (drop the n-th
 * packet of a kind: the deterministic loss masks of picoquic's tests).
 * Everything is static: each test program includes it once.
 */
#ifndef SIMTEST_H
#define SIMTEST_H

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include <netsim/netsim.h>
#include "netsim_host.h" /* the filter wraps a host's receive callback */
#include "simx.h"

#define ST_OK(call)                                                            \
  do {                                                                         \
    int st_rv_ = (call);                                                       \
    if (st_rv_ != 0) {                                                         \
      fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call,        \
               st_rv_, netsim_strerror(st_rv_));                               \
    }                                                                          \
  } while (0)

/* st_net builds host 0 -- left -- |paths| x path -- right -- host 1, hosts
   at |host_bps|, paths at |path_bps|, 1 us links, 200 KB queues. */
static inline netsim_sim *st_net(uint64_t seed, uint32_t paths,
                                 uint64_t host_bps, uint64_t path_bps) {
  netsim_settings s;
  netsim_dumbbell_settings d;
  netsim_sim *sim = NULL;

  netsim_settings_default(&s);
  s.seed = seed;
  s.max_pkts = 16384;
  s.payload_max = 128;
  s.max_payloads = s.max_pkts;
  ST_OK(netsim_sim_new(&sim, &s, NULL));
  netsim_dumbbell_settings_default(&d, paths);
  d.host.rate_bps = host_bps;
  d.path.rate_bps = path_bps;
  ST_OK(netsim_topo_dumbbell(sim, &d, NULL));
  return sim;
}

/* st_net_unwired makes a simulation of two hosts and nothing else: no
   host has a NIC. */
static inline netsim_sim *st_net_unwired(void) {
  netsim_settings s;
  netsim_sim *sim = NULL;
  netsim_host *h;

  netsim_settings_default(&s);
  ST_OK(netsim_sim_new(&sim, &s, NULL));
  ST_OK(netsim_sim_add_host(sim, &h));
  ST_OK(netsim_sim_add_host(sim, &h));
  assert_null(netsim_host_nic(h));
  return sim;
}

/* st_app records the reports of a transport. */
typedef struct st_app {
  netsim_sim *sim;
  uint32_t arrived, readable, sent, errors;
  uint64_t progress_bytes;
  /* order[i] is the id of the i-th message to become readable. */
  uint32_t order[4096];
} st_app;

static inline void st_arrived(void *user, simx_msg *m) {
  st_app *a = user;
  if (m->t_arrive == NETSIM_TIME_NONE) {
    m->t_arrive = netsim_sim_now(a->sim);
  }
  ++a->arrived;
}

static inline void st_readable(void *user, simx_msg *m) {
  st_app *a = user;
  m->t_read = netsim_sim_now(a->sim);
  if (m->t_arrive == NETSIM_TIME_NONE) {
    m->t_arrive = m->t_read;
  }
  if (a->readable < 4096) {
    a->order[a->readable] = m->id;
  }
  ++a->readable;
}

static inline void st_sent(void *user, simx_msg *m, int status) {
  st_app *a = user;
  m->t_sent = netsim_sim_now(a->sim);
  m->status = status;
  ++a->sent;
  a->errors += status != 0;
}

static inline void st_progress(void *user, uint32_t flow, uint64_t bytes) {
  st_app *a = user;
  (void)flow;
  a->progress_bytes += bytes;
}

static inline simx_app st_app_init(st_app *a, netsim_sim *sim) {
  simx_app app;

  memset(a, 0, sizeof(*a));
  a->sim = sim;
  app.user = a;
  app.arrived = st_arrived;
  app.readable = st_readable;
  app.sent = st_sent;
  app.progress = st_progress;
  return app;
}

/* st_msg fills message |id| of |bytes| from host 0 to host 1. */
static inline void st_msg(simx_msg *m, uint32_t id, uint64_t bytes,
                          netsim_time now) {
  memset(m, 0, sizeof(*m));
  m->id = id;
  m->src = 0;
  m->dst = 1;
  m->bytes = bytes;
  m->t_post = now;
  m->t_arrive = m->t_read = m->t_sent = NETSIM_TIME_NONE;
}

/* The filter: in front of a host, drop the packets for which |drop|
   says so (n counts the packets the host received so far). */
typedef int (*st_drop_fn)(void *arg, const netsim_pkt *p, uint64_t n);

typedef struct st_filter {
  netsim_host_rx_cb inner;
  void *inner_user;
  st_drop_fn drop;
  void *arg;
  uint64_t n;
  uint64_t dropped;
} st_filter;

static inline void st_filter_cb(netsim_sim *sim, netsim_host *host,
                                netsim_pkt *pkt, void *user) {
  st_filter *f = user;

  if (f->drop(f->arg, pkt, f->n++)) {
    ++f->dropped;
    netsim_sim_pkt_free(sim, pkt);
    return;
  }
  f->inner(sim, host, pkt, f->inner_user);
}

/* st_filter_install puts |f| in front of host |idx| (after the transport
   attached). */
static inline void st_filter_install(netsim_sim *sim, uint32_t idx,
                                     st_filter *f, st_drop_fn drop, void *arg) {
  netsim_host *h = netsim_sim_host(sim, idx);

  memset(f, 0, sizeof(*f));
  f->inner = h->rx_cb;
  f->inner_user = h->rx_user;
  f->drop = drop;
  f->arg = arg;
  netsim_host_set_rx(h, st_filter_cb, f);
}

/* The marker: in front of a host, give the packets |pick| chooses what a
   link with bit errors gives them (docs/netsim.md, "Bit errors"): with
   |flip_bit| >= 0, that bit of the carried bytes flipped and
   NETSIM_PKT_FLIPPED; with -1, NETSIM_PKT_CORRUPT (an error in bytes the
   packet does not carry).  The packet goes on to the transport. */
typedef struct st_marker {
  netsim_host_rx_cb inner;
  void *inner_user;
  st_drop_fn pick;
  void *arg;
  int flip_bit;
  uint64_t n;
  uint64_t marked;
} st_marker;

static inline void st_marker_cb(netsim_sim *sim, netsim_host *host,
                                netsim_pkt *pkt, void *user) {
  st_marker *k = user;

  if (k->pick(k->arg, pkt, k->n++)) {
    uint8_t *d = (uint8_t *)(uintptr_t)netsim_pkt_data(pkt);
    ++k->marked;
    if (k->flip_bit >= 0 && d != NULL &&
        (uint32_t)k->flip_bit < pkt->payload_len * 8) {
      d[k->flip_bit >> 3] ^= (uint8_t)(0x80u >> (k->flip_bit & 7));
      pkt->flags |= NETSIM_PKT_FLIPPED;
    } else {
      pkt->flags |= NETSIM_PKT_CORRUPT;
    }
  }
  k->inner(sim, host, pkt, k->inner_user);
}

/* st_marker_install puts |k| in front of host |idx| (after the transport
   attached). */
static inline void st_marker_install(netsim_sim *sim, uint32_t idx,
                                     st_marker *k, st_drop_fn pick, void *arg,
                                     int flip_bit) {
  netsim_host *h = netsim_sim_host(sim, idx);

  memset(k, 0, sizeof(*k));
  k->inner = h->rx_cb;
  k->inner_user = h->rx_user;
  k->pick = pick;
  k->arg = arg;
  k->flip_bit = flip_bit;
  netsim_host_set_rx(h, st_marker_cb, k);
}

#endif /* SIMTEST_H */
