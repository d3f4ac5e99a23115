/*
 * nstest.h: what the netsim tests share: small networks built by hand, a
 * receive recorder and a packet helper.  Everything is static: each test
 * program includes it once.
 */
#ifndef NSTEST_H
#define NSTEST_H

#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include <netsim/netsim.h>

/* NS_OK asserts that a netsim call returned 0, printing the error. */
#define NS_OK(call)                                                            \
  do {                                                                         \
    int ns_rv_ = (call);                                                       \
    if (ns_rv_ != 0) {                                                         \
      fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call,        \
               ns_rv_, netsim_strerror(ns_rv_));                               \
    }                                                                          \
  } while (0)

/* ns_sim makes a simulation with default settings and |seed|. */
static inline netsim_sim *ns_sim(uint64_t seed) {
  netsim_settings s;
  netsim_sim *sim = NULL;

  netsim_settings_default(&s);
  s.seed = seed;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  return sim;
}

/* ns_line builds host 0 -- switch -- host 1: link 0 is host 0 -> switch
   (configured by |c0|), 1 switch -> host 0, 2 host 1 -> switch, 3 switch
   -> host 1 (configured by |c1|). */
static inline netsim_sim *ns_line(uint64_t seed, const netsim_linkcfg *c0,
                                  const netsim_linkcfg *c1) {
  netsim_sim *sim = ns_sim(seed);
  netsim_switch *sw;
  uint32_t l;

  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_switch(sim, 2, &sw));
  NS_OK(netsim_sim_connect(sim, 0, 0, netsim_switch_node(sw), 0, c0, c0, &l));
  assert_int_equal(l, 0);
  NS_OK(netsim_sim_connect(sim, 1, 0, netsim_switch_node(sw), 1, c1, c1, &l));
  assert_int_equal(l, 2);
  NS_OK(netsim_sim_build_routes(sim));
  return sim;
}

/* ns_pkt allocates a packet of |size| bytes from host |src| to host |dst|
   with source port |sport| (UDP, destination port 4791). */
static inline netsim_pkt *ns_pkt(netsim_sim *sim, uint32_t src, uint32_t dst,
                                 uint16_t sport, uint32_t size) {
  netsim_pkt *p = NULL;

  NS_OK(netsim_sim_pkt_alloc(sim, &p));
  p->key.src = NETSIM_ADDR_BASE + src;
  p->key.dst = NETSIM_ADDR_BASE + dst;
  p->key.sport = sport;
  p->key.dport = 4791;
  p->key.proto = 17;
  p->size = size;
  return p;
}

/* ns_send sends a packet as ns_pkt makes it; returns netsim_host_send's
   result. */
static inline int ns_send(netsim_sim *sim, uint32_t src, uint32_t dst,
                          uint16_t sport, uint32_t size, uint64_t tag) {
  netsim_pkt *p = ns_pkt(sim, src, dst, sport, size);
  p->tag = tag;
  return netsim_host_send(sim, netsim_sim_host(sim, src), p);
}

/* ns_rec records what a host receives, then frees the packets. */
typedef struct ns_rec {
  uint32_t n, cap;
  netsim_time *t;
  uint64_t *tag;
  uint16_t *hops;
  uint8_t *flags;
  uint16_t *sport;
  netsim_addr *src;
} ns_rec;

static inline void ns_rec_init(ns_rec *r, uint32_t cap) {
  memset(r, 0, sizeof(*r));
  r->cap = cap;
  r->t = calloc(cap, sizeof(*r->t));
  r->tag = calloc(cap, sizeof(*r->tag));
  r->hops = calloc(cap, sizeof(*r->hops));
  r->flags = calloc(cap, sizeof(*r->flags));
  r->sport = calloc(cap, sizeof(*r->sport));
  r->src = calloc(cap, sizeof(*r->src));
  assert_non_null(r->t);
  assert_non_null(r->src);
}

static inline void ns_rec_fini(ns_rec *r) {
  free(r->t);
  free(r->tag);
  free(r->hops);
  free(r->flags);
  free(r->sport);
  free(r->src);
}

static inline void ns_rec_cb(netsim_sim *sim, netsim_host *host,
                             netsim_pkt *pkt, void *user) {
  ns_rec *r = user;

  (void)host;
  if (r->n < r->cap) {
    r->t[r->n] = netsim_sim_now(sim);
    r->tag[r->n] = pkt->tag;
    r->hops[r->n] = pkt->hops;
    r->flags[r->n] = pkt->flags;
    r->sport[r->n] = pkt->key.sport;
    r->src[r->n] = pkt->key.src;
  }
  ++r->n;
  netsim_sim_pkt_free(sim, pkt);
}

/* ns_ceil_tx is the reference for netsim_time_tx, in 128-bit arithmetic. */
static inline netsim_time ns_ceil_tx(uint64_t bytes, uint64_t rate) {
  __extension__ typedef unsigned __int128 u128;
  u128 num = (u128)bytes * 8u * 1000000000000ull;
  return (netsim_time)((num + rate - 1) / rate);
}

#endif /* NSTEST_H */
