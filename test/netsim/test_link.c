/*
 * test_link.c: links: a packet of B bytes on a link of R bit/s with delay D
 * arrives exactly ceil(B*8/R) + D picoseconds after it starts; trains of
 * back-to-back packets never drift (departures come from cumulative
 * bytes); a link that went idle starts a new busy period; degraded rates;
 * seeded random loss at the configured probability; a link going down
 * loses what it holds; bit errors at the configured rate, in the carried
 * bytes or marked beyond them, deterministic by seed and apart from loss.
 */
#include <math.h>

#include "nstest.h"

/* The tap records arrivals at the end of one link. */
typedef struct tap_rec {
  uint32_t link;
  uint32_t n, cap;
  netsim_time *t;
} tap_rec;

static void tap_cb(netsim_sim *sim, const netsim_pkt *pkt,
                   const netsim_link *link, void *user) {
  tap_rec *r = user;

  (void)pkt;
  if (netsim_link_id(link) == r->link && r->n < r->cap) {
    r->t[r->n++] = netsim_sim_now(sim);
  }
}

static netsim_linkcfg cfg(uint64_t rate, netsim_time delay, uint64_t q) {
  netsim_linkcfg c;

  netsim_linkcfg_default(&c);
  c.rate_bps = rate;
  c.delay = delay;
  c.queue_bytes = q;
  return c;
}

static void test_link_exact_timing(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(3), 1234567, 1000000);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(40), 500 * NETSIM_NS, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_time t_switch = ns_ceil_tx(1500, NETSIM_GBPS(3)) + 1234567;
  netsim_time t_host = t_switch + ns_ceil_tx(1500, NETSIM_GBPS(40)) + 500000;
  netsim_time tt[4];
  tap_rec tap = {.link = 0, .cap = 4, .t = tt};
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  netsim_sim_set_tap(sim, tap_cb, &tap);
  NS_OK(ns_send(sim, 0, 1, 1000, 1500, 1));
  /* Serialisation is exact and rounded up: 4,000,000 ps at 3 Gb/s. */
  assert_int_equal(ns_ceil_tx(1500, NETSIM_GBPS(3)), 4000000);
  assert_int_equal(netsim_host_tx_free_at(netsim_sim_host(sim, 0)), 4000000);
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(tap.n, 1);
  assert_int_equal(tap.t[0], t_switch);
  assert_int_equal(rec.n, 1);
  assert_int_equal(rec.t[0], t_host);
  assert_int_equal(rec.hops[0], 2);
  /* The same from a later start, on an idle link: a new busy period. */
  NS_OK(ns_send(sim, 0, 1, 1000, 1500, 2));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  assert_int_equal(rec.n, 2);
  assert_int_equal(rec.t[1], NETSIM_MS + t_host);
  /* An odd size on an odd rate rounds up. */
  NS_OK(ns_send(sim, 0, 1, 1000, 1, 3));
  netsim_sim_run_until(sim, 3 * NETSIM_MS);
  assert_int_equal(rec.t[2], 2 * NETSIM_MS + 2667 + 1234567 + 200 + 500000);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_no_drift(void **state) {
  enum { N = 20000, B = 1499 };
  const uint64_t R = NETSIM_GBPS(7);
  netsim_linkcfg c0 = cfg(R, 1000, (uint64_t)N * B);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(40), 500 * NETSIM_NS, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  tap_rec tap = {.link = 0, .cap = N};
  netsim_time naive = 0;
  ns_rec rec;
  uint32_t i;

  (void)state;
  tap.t = calloc(N, sizeof(*tap.t));
  ns_rec_init(&rec, N);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  netsim_sim_set_tap(sim, tap_cb, &tap);
  for (i = 0; i < N; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1000, B, i));
  }
  netsim_sim_run_until(sim, NETSIM_S);
  assert_int_equal(tap.n, N);
  assert_int_equal(rec.n, N);
  for (i = 0; i < N; ++i) {
    /* Packet i leaves when i+1 packets' bytes have left, exactly. */
    netsim_time fin = ns_ceil_tx((uint64_t)(i + 1) * B, R);
    assert_int_equal(tap.t[i], fin + 1000);
    /* The faster second link is idle for each packet. */
    assert_int_equal(rec.t[i], fin + 1000 + ns_ceil_tx(B, NETSIM_GBPS(40)) +
                                   500 * NETSIM_NS);
    assert_int_equal(rec.tag[i], i);
    naive += ns_ceil_tx(B, R);
  }
  /* Rounding each packet on its own would have drifted by N * 1/7 ps. */
  assert_true(naive > ns_ceil_tx((uint64_t)N * B, R) + 2000);
  free(tap.t);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_degraded_rate(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(100), 0, 1000000);
  netsim_linkcfg c1 = cfg(NETSIM_GBPS(400), 0, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c1);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_info info;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  NS_OK(netsim_link_set_rate(sim, l0, NETSIM_GBPS(25)));
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.rate_bps, NETSIM_GBPS(25));
  assert_int_equal(info.base_rate_bps, NETSIM_GBPS(100));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, NETSIM_US);
  assert_int_equal(rec.t[0], 320000 + 20000);
  /* Restore: back to 80 ps per byte. */
  NS_OK(netsim_link_set_rate(sim, l0, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, 2 * NETSIM_US);
  assert_int_equal(rec.t[1], NETSIM_US + 80000 + 20000);
  assert_int_equal(netsim_link_set_rate(sim, l0, NETSIM_RATE_MAX + 1),
                   NETSIM_ERR_INVAL);
  /* A change while packets are queued: those keep their times. */
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  NS_OK(netsim_link_set_rate(sim, l0, NETSIM_GBPS(50)));
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 0));
  netsim_sim_run_until(sim, 3 * NETSIM_US);
  assert_int_equal(rec.n, 5);
  assert_int_equal(rec.t[2], 2 * NETSIM_US + 80000 + 20000);
  assert_int_equal(rec.t[3], 2 * NETSIM_US + 160000 + 20000);
  assert_int_equal(rec.t[4], 2 * NETSIM_US + 160000 + 160000 + 20000);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_random_loss(void **state) {
  enum { N = 40000 };
  uint64_t seed = tu_seed("test_link_random_loss");
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(100), 0, 100000000);
  netsim_sim *sim = ns_line(seed, &c0, &c0);
  netsim_link_stats ls;
  netsim_sim_stats st;
  double frac;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 16);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  assert_int_equal(netsim_link_set_loss(netsim_sim_link(sim, 0), 1.5),
                   NETSIM_ERR_INVAL);
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 0.05));
  for (i = 0; i < N; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, NETSIM_S);
  netsim_link_get_stats(netsim_sim_link(sim, 0), &ls);
  netsim_sim_get_stats(sim, &st);
  tu_assert(ls.drops[NETSIM_DROP_LOSS] + rec.n == N);
  tu_assert(st.drops[NETSIM_DROP_LOSS] == ls.drops[NETSIM_DROP_LOSS]);
  tu_assert(ls.rx_pkts == N);
  /* 5 standard deviations of a binomial(40000, 0.05) fraction. */
  frac = (double)ls.drops[NETSIM_DROP_LOSS] / N;
  tu_assert(frac > 0.05 - 0.0055 && frac < 0.05 + 0.0055);
  /* p = 1 loses everything, p = 0 nothing. */
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 1.0));
  rec.n = 0;
  for (i = 0; i < 100; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, 2 * NETSIM_S);
  tu_assert(rec.n == 0);
  NS_OK(netsim_link_set_loss(netsim_sim_link(sim, 0), 0.0));
  for (i = 0; i < 100; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 100, i));
  }
  netsim_sim_run_until(sim, 3 * NETSIM_S);
  tu_assert(rec.n == 100);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_down_loses_everything(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), 10 * NETSIM_US, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c0);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  uint32_t i;
  ns_rec rec;

  (void)state;
  ns_rec_init(&rec, 64);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ns_rec_cb, &rec);
  /* 10 packets of 1000 B take 0.8 us each: at 5 us, 6 are on the wire
     (10 us of delay) and 4 still queued. */
  for (i = 0; i < 10; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_sim_run_until(sim, 5 * NETSIM_US);
  assert_int_equal(netsim_link_queue_bytes(l0), 4000);
  netsim_link_set_up(sim, l0, 0);
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.up, 0);
  assert_int_equal(info.routed, 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 0);
  assert_int_equal(ns_send(sim, 0, 1, 1, 1000, 99), NETSIM_ERR_DROPPED);
  netsim_sim_run_until(sim, NETSIM_MS);
  assert_int_equal(rec.n, 0);
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.drops[NETSIM_DROP_LINK_DOWN], 11);
  assert_int_equal(ls.enq_pkts, 10);
  assert_int_equal(ls.rx_pkts, 0);
  netsim_link_set_up(sim, l0, 1);
  NS_OK(ns_send(sim, 0, 1, 1, 1000, 100));
  netsim_sim_run_until(sim, 2 * NETSIM_MS);
  assert_int_equal(rec.n, 1);
  assert_int_equal(rec.t[0], NETSIM_MS + 800000 + 10 * NETSIM_US + 800000 +
                                 10 * NETSIM_US);
  ns_rec_fini(&rec);
  netsim_sim_del(sim);
}

static void test_link_stats(void **state) {
  netsim_linkcfg c0 = cfg(NETSIM_GBPS(10), NETSIM_US, 1000000);
  netsim_sim *sim = ns_line(1, &c0, &c0);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  uint32_t i;

  (void)state;
  for (i = 0; i < 5; ++i) {
    NS_OK(ns_send(sim, 0, 1, 1, 1000, i));
  }
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.enq_pkts, 5);
  assert_int_equal(ls.enq_bytes, 5000);
  assert_int_equal(ls.q_bytes, 5000);
  assert_int_equal(ls.q_pkts, 5);
  assert_int_equal(ls.max_q_bytes, 5000);
  assert_int_equal(ls.busy_until, 5 * 800000);
  /* Occupancy falls as each packet finishes serialising. */
  netsim_sim_run_until(sim, 800000 - 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 5000);
  netsim_sim_run_until(sim, 800000);
  assert_int_equal(netsim_link_queue_bytes(l0), 4000);
  netsim_sim_run_until(sim, 3 * 800000 + 1);
  assert_int_equal(netsim_link_queue_bytes(l0), 2000);
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_link_get_stats(l0, &ls);
  assert_int_equal(ls.q_bytes, 0);
  assert_int_equal(ls.rx_pkts, 5);
  assert_int_equal(ls.rx_bytes, 5000);
  assert_int_equal(ls.enq_pkts, 5);
  /* Mean depth: packet i waits (i+1) * 0.8 us with 1000 B. */
  assert_true(ls.q_byte_ps == 1000.0 * 800000.0 * (1 + 2 + 3 + 4 + 5));
  netsim_link_get_info(l0, &info);
  assert_int_equal(info.id, 0);
  assert_int_equal(info.peer, 1);
  assert_int_equal(info.from_node, 0);
  assert_int_equal(info.to_node, 2);
  assert_int_equal(info.to_port, 0);
  assert_int_equal(info.delay, NETSIM_US);
  assert_int_equal(info.queue_bytes, 1000000);
  netsim_sim_del(sim);
}

/* The bit-error receiver checks every packet's carried bytes against the
   pattern it was sent with (byte i of packet t is pat(t, i)). */
typedef struct ber_rec {
  uint32_t n;
  uint32_t flipped_pkts, corrupt_pkts, clean_pkts;
  /* flipped_bits: carried bits that differ; bad_flags: a flag that does
     not match the bytes (FLIPPED without a changed bit or the reverse). */
  uint64_t flipped_bits;
  uint32_t bad_flags;
  uint32_t cap;
  uint8_t *flags;   /* per tag */
  uint64_t *digest; /* per tag: a hash of the received bytes */
} ber_rec;

static uint8_t pat(uint64_t tag, uint32_t i) {
  return (uint8_t)netsim_mix64(tag * 131 + i);
}

static void ber_rx(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt,
                   void *user) {
  ber_rec *r = user;
  const uint8_t *d = netsim_pkt_data(pkt);
  uint32_t i, bits = 0;
  uint64_t h = 0;

  (void)host;
  for (i = 0; d && i < pkt->payload_len; ++i) {
    bits += (uint32_t)__builtin_popcount((unsigned)(d[i] ^ pat(pkt->tag, i)));
    h = netsim_mix64(h ^ d[i]);
  }
  r->flipped_bits += bits;
  r->bad_flags += (bits > 0) != ((pkt->flags & NETSIM_PKT_FLIPPED) != 0);
  r->flipped_pkts += (pkt->flags & NETSIM_PKT_FLIPPED) != 0;
  r->corrupt_pkts += (pkt->flags & NETSIM_PKT_CORRUPT) != 0;
  r->clean_pkts += (pkt->flags & NETSIM_PKT_BITERR) == 0;
  if (pkt->tag < r->cap) {
    r->flags[pkt->tag] = pkt->flags;
    r->digest[pkt->tag] = h;
  }
  ++r->n;
  netsim_sim_pkt_free(sim, pkt);
}

static void ber_rec_init(ber_rec *r, uint32_t cap) {
  memset(r, 0, sizeof(*r));
  r->cap = cap;
  r->flags = calloc(cap, 1);
  r->digest = calloc(cap, sizeof(*r->digest));
  assert_non_null(r->flags);
  assert_non_null(r->digest);
}

/* ber_rec_reset zeroes the counts (not the per-tag records). */
static void ber_rec_reset(ber_rec *r) {
  r->n = r->flipped_pkts = r->corrupt_pkts = r->clean_pkts = 0;
  r->flipped_bits = 0;
  r->bad_flags = 0;
}

static void ber_rec_fini(ber_rec *r) {
  free(r->flags);
  free(r->digest);
}

/* ber_send sends packet |tag| of |size| bytes carrying |carried| pattern
   bytes (inline up to NETSIM_PKT_INLINE, else in a pool buffer). */
static void ber_send(netsim_sim *sim, uint32_t size, uint32_t carried,
                     uint64_t tag) {
  netsim_pkt *p = ns_pkt(sim, 0, 1, 1000, size);
  uint8_t *b;
  uint32_t i;

  p->tag = tag;
  if (carried) {
    NS_OK(netsim_pkt_payload(netsim_sim_pool(sim), p, carried, &b));
    for (i = 0; i < carried; ++i) {
      b[i] = pat(tag, i);
    }
  }
  NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 0), p));
}

/* ber_net is ns_line with payload buffers and deep queues. */
static netsim_sim *ber_net(uint64_t seed) {
  netsim_settings s;
  netsim_linkcfg c = cfg(NETSIM_GBPS(100), 0, 1ull << 40);
  netsim_sim *sim = NULL;
  netsim_switch *sw;

  netsim_settings_default(&s);
  s.seed = seed;
  s.max_pkts = 1024;
  s.payload_max = 256;
  s.max_payloads = 1024;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_switch(sim, 2, &sw));
  NS_OK(netsim_sim_connect(sim, 0, 0, netsim_switch_node(sw), 0, &c, &c, NULL));
  NS_OK(netsim_sim_connect(sim, 1, 0, netsim_switch_node(sw), 1, &c, &c, NULL));
  NS_OK(netsim_sim_build_routes(sim));
  return sim;
}

/* ber_run sends |n| packets (size, carried) in bursts the pool holds and
   runs until they have all arrived. */
static void ber_run(netsim_sim *sim, uint32_t n, uint32_t size,
                    uint32_t carried, uint64_t tag0) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    ber_send(sim, size, carried, tag0 + i);
    if (i % 512 == 511 || i == n - 1) {
      netsim_sim_run_until(sim, netsim_sim_now(sim) + NETSIM_MS);
    }
  }
}

/* |x - mean| within 5 standard deviations |sd| (plus one for rounding). */
static int within(double x, double mean, double sd) {
  return fabs(x - mean) <= 5 * sd + 1;
}

/* ber_rate_leg sends |n| packets of |size| bytes, payload by length only,
   over link 0 at |ber| and checks the counts against the binomials. */
static void ber_rate_leg(uint64_t seed, double ber, uint32_t n, uint32_t size) {
  netsim_sim *sim = ber_net(seed);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  const double bits = 8.0 * size, p = 1 - pow(1 - ber, bits);
  netsim_link_stats ls, ls3;
  netsim_link_info info;
  netsim_sim_stats st;
  ber_rec r;

  ber_rec_init(&r, n);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ber_rx, &r);
  NS_OK(netsim_link_set_ber(l0, ber));
  netsim_link_get_info(l0, &info);
  assert_true(info.ber == ber);
  ber_run(sim, n, size, 0, 0);
  netsim_link_get_stats(l0, &ls);
  netsim_link_get_stats(netsim_sim_link(sim, 3), &ls3);
  netsim_sim_get_stats(sim, &st);
  /* Corrupted packets are delivered, marked, and counted on their link;
     with no carried bytes every error falls beyond them. */
  tu_assert(r.n == n);
  tu_assert(r.corrupt_pkts == ls.corrupted);
  tu_assert(r.flipped_pkts == 0 && r.clean_pkts + r.corrupt_pkts == n);
  tu_assert(st.corrupted == ls.corrupted && ls3.corrupted == 0);
  tu_assert(ls.drops[NETSIM_DROP_LOSS] == 0);
  /* Each packet is hit with p = 1 - (1 - ber)^(8 size), independently: a
     binomial(n, p); the errors are a binomial(8 size n, ber). */
  tu_assert(within((double)ls.corrupted, n * p, sqrt(n * p * (1 - p))));
  tu_assert(ls.bit_errors >= ls.corrupted);
  tu_assert(within((double)ls.bit_errors, n * bits * ber,
                   sqrt(n * bits * ber * (1 - ber))));
  ber_rec_fini(&r);
  netsim_sim_del(sim);
}

static void test_link_ber_rate(void **state) {
  uint64_t seed = tu_seed("test_link_ber_rate");

  (void)state;
  /* About one error per packet (p = 0.55): tight bounds (3-4%). */
  ber_rate_leg(seed, 1e-4, 20000, 1000);
  /* A low rate on jumbo frames (p = 0.07). */
  ber_rate_leg(seed ^ 1, 1e-6, 20000, 9000);
}

static void test_link_ber_flips(void **state) {
  enum { N = 6000 };
  uint64_t seed = tu_seed("test_link_ber_flips");
  netsim_sim *sim = ber_net(seed);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats a, b;
  double q;
  ber_rec r;

  (void)state;
  ber_rec_init(&r, 3 * N);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ber_rx, &r);
  /* All carried (inline): every error flips a bit the receiver sees, and
     the flipped bits are exactly the link's errors. */
  NS_OK(netsim_link_set_ber(l0, 1e-3));
  ber_run(sim, N, 80, 80, 0);
  netsim_link_get_stats(l0, &a);
  tu_assert(r.n == N && r.bad_flags == 0 && r.corrupt_pkts == 0);
  tu_assert(r.flipped_pkts == a.corrupted && r.flipped_bits == a.bit_errors);
  q = 1 - pow(1 - 1e-3, 640);
  tu_assert(within((double)a.corrupted, N * q, sqrt(N * q * (1 - q))));
  /* 200 bytes carried in a pool buffer of a 1000-byte packet: a fifth of
     the errors flip carried bits, the rest mark the packet. */
  ber_rec_reset(&r);
  ber_run(sim, N, 1000, 200, N);
  netsim_link_get_stats(l0, &b);
  tu_assert(r.n == N && r.bad_flags == 0);
  {
    double errs = (double)(b.bit_errors - a.bit_errors);
    tu_assert(
        within((double)r.flipped_bits, errs * 0.2, sqrt(errs * 0.2 * 0.8)));
    tu_assert(r.corrupt_pkts > 0 && r.flipped_pkts > 0);
    tu_assert(r.n - r.clean_pkts == b.corrupted - a.corrupted);
  }
  /* A packet whose size is below its carried length (a model header
     larger than the wire's): only the first |size| bytes take errors. */
  ber_rec_reset(&r);
  NS_OK(netsim_link_set_ber(l0, 1.0));
  ber_run(sim, 8, 10, 40, 2 * N);
  tu_assert(r.n == 8 && r.flipped_bits == 8 * 80 && r.corrupt_pkts == 0);
  ber_rec_fini(&r);
  netsim_sim_del(sim);
}

static void test_link_ber_limits(void **state) {
  netsim_sim *sim = ber_net(7);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  netsim_pkt *p;
  uint32_t i;
  ber_rec r;

  (void)state;
  ber_rec_init(&r, 4096);
  netsim_host_set_rx(netsim_sim_host(sim, 1), ber_rx, &r);
  assert_int_equal(netsim_link_set_ber(l0, -1e-9), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_link_set_ber(l0, 1.5), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_link_set_ber(l0, NAN), NETSIM_ERR_INVAL);
  /* BER 0 (never set, then set back to 0) never corrupts anything. */
  ber_run(sim, 1000, 9000, 64, 0);
  NS_OK(netsim_link_set_ber(l0, 0.5));
  NS_OK(netsim_link_set_ber(l0, 0.0));
  ber_run(sim, 1000, 9000, 64, 1000);
  netsim_link_get_stats(l0, &ls);
  tu_assert(r.n == 2000 && r.clean_pkts == 2000 && ls.corrupted == 0);
  tu_assert(ls.bit_errors == 0 && r.flipped_bits == 0);
  /* BER 1: every bit of every packet. */
  NS_OK(netsim_link_set_ber(l0, 1.0));
  ber_run(sim, 10, 100, 50, 2000);
  netsim_link_get_stats(l0, &ls);
  tu_assert(ls.corrupted == 10 && ls.bit_errors == 10 * 800);
  tu_assert(r.flipped_bits == 10 * 400 && r.corrupt_pkts == 10);
  /* A sender's stale error flags are cleared when it sends. */
  NS_OK(netsim_link_set_ber(l0, 0.0));
  p = ns_pkt(sim, 0, 1, 1000, 100);
  p->tag = 3000;
  p->flags = NETSIM_PKT_ECT | NETSIM_PKT_BITERR;
  NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 0), p));
  netsim_sim_run_until(sim, netsim_sim_now(sim) + NETSIM_MS);
  assert_int_equal(r.flags[3000], NETSIM_PKT_ECT);
  /* The fault calls: a cable's both directions, or every link. */
  NS_OK(netsim_fault_ber(sim, 2, 1e-6));
  netsim_link_get_info(netsim_sim_link(sim, 3), &info);
  assert_true(info.ber == 1e-6);
  assert_int_equal(netsim_fault_ber(sim, 99, 1e-6), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_fault_ber(sim, 2, 2.0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_fault_ber_all(sim, -1, 0), NETSIM_ERR_INVAL);
  NS_OK(netsim_fault_ber_all(sim, 1e-7, 1)); /* no switch-to-switch links */
  netsim_link_get_info(l0, &info);
  assert_true(info.ber == 0.0);
  NS_OK(netsim_fault_ber_all(sim, 1e-7, 0));
  for (i = 0; i < 4; ++i) {
    netsim_link_get_info(netsim_sim_link(sim, i), &info);
    assert_true(info.ber == 1e-7);
  }
  ber_rec_fini(&r);
  netsim_sim_del(sim);
}

/* ber_trial runs |n| packets over a link with loss and (if |ber|) bit
   errors, recording which were lost and how the others arrived. */
static void ber_trial(uint64_t seed, double ber, uint32_t n, ber_rec *r,
                      uint64_t *trace) {
  netsim_sim *sim = ber_net(seed);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  uint32_t i;

  ber_rec_init(r, n);
  for (i = 0; i < n; ++i) {
    r->flags[i] = 0xFF; /* lost until it arrives */
  }
  netsim_host_set_rx(netsim_sim_host(sim, 1), ber_rx, r);
  NS_OK(netsim_link_set_loss(l0, 0.05));
  NS_OK(netsim_link_set_ber(l0, ber));
  ber_run(sim, n, 1500, 64, 0);
  *trace = netsim_sim_trace_hash(sim);
  netsim_sim_del(sim);
}

static void test_link_ber_determinism(void **state) {
  enum { N = 4000 };
  uint64_t seed = tu_seed("test_link_ber_determinism");
  ber_rec a, b, c, d;
  uint64_t ta, tb, tc, td;
  uint32_t i, diff = 0, hit = 0;

  (void)state;
  ber_trial(seed, 2e-5, N, &a, &ta);
  ber_trial(seed, 2e-5, N, &b, &tb);
  ber_trial(seed + 1, 2e-5, N, &c, &tc);
  ber_trial(seed, 0.0, N, &d, &td);
  /* The same seed: the same packets hit, in the same bits. */
  assert_int_equal(ta, tb);
  assert_memory_equal(a.flags, b.flags, N);
  assert_memory_equal(a.digest, b.digest, N * sizeof(uint64_t));
  /* Another seed: other packets. */
  assert_true(ta != tc);
  for (i = 0; i < N; ++i) {
    diff += a.flags[i] != c.flags[i];
    hit += a.flags[i] != 0xFF && (a.flags[i] & NETSIM_PKT_BITERR);
    /* Bit errors draw from their own stream: the same packets are lost
       with and without them. */
    assert_int_equal(a.flags[i] == 0xFF, d.flags[i] == 0xFF);
  }
  tu_assert(hit > 0 && diff > 0);
  assert_true(ta != td);
  ber_rec_fini(&a);
  ber_rec_fini(&b);
  ber_rec_fini(&c);
  ber_rec_fini(&d);
}

/* ------------------------------------------------------------------------ */
/* Duplication                                                              */

/* dup_rec records, per tag, when the original and its copies arrived and
   what they carried. */
typedef struct dup_rec {
  uint32_t cap;
  uint64_t n, copies, bad;
  netsim_time *t_orig, *t_copy;
  uint32_t *n_copies;
  uint64_t *uid;
  uint64_t *digest; /* the original's bytes */
  uint8_t *flags;   /* the original's flags, 0xFF until it arrives */
} dup_rec;

static uint64_t dup_digest(const netsim_pkt *p) {
  const uint8_t *d = netsim_pkt_data(p);
  uint64_t h = p->payload_len;
  uint32_t i;

  for (i = 0; d && i < p->payload_len; ++i) {
    h = netsim_mix64(h ^ d[i]);
  }
  return h ^ ((uint64_t)p->size << 40) ^ ((uint64_t)p->flow << 20) ^
         p->key.sport;
}

static void dup_rx(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt,
                   void *user) {
  dup_rec *r = user;
  uint64_t tag = pkt->tag;

  (void)host;
  ++r->n;
  if (tag < r->cap) {
    if (pkt->flags & NETSIM_PKT_DUP) {
      ++r->copies;
      if (r->n_copies[tag]++ == 0) {
        r->t_copy[tag] = netsim_sim_now(sim);
      }
      /* A clone: the same packet, byte for byte. */
      r->bad += r->t_orig[tag] == NETSIM_TIME_NONE || r->uid[tag] != pkt->uid ||
                r->digest[tag] != dup_digest(pkt) ||
                r->flags[tag] != (pkt->flags & ~NETSIM_PKT_DUP);
    } else {
      r->bad += r->t_orig[tag] != NETSIM_TIME_NONE;
      r->t_orig[tag] = netsim_sim_now(sim);
      r->uid[tag] = pkt->uid;
      r->digest[tag] = dup_digest(pkt);
      r->flags[tag] = pkt->flags;
    }
  }
  netsim_sim_pkt_free(sim, pkt);
}

static void dup_rec_init(dup_rec *r, uint32_t cap) {
  uint32_t i;

  memset(r, 0, sizeof(*r));
  r->cap = cap;
  r->t_orig = malloc(cap * sizeof(*r->t_orig));
  r->t_copy = malloc(cap * sizeof(*r->t_copy));
  r->n_copies = calloc(cap, sizeof(*r->n_copies));
  r->uid = calloc(cap, sizeof(*r->uid));
  r->digest = calloc(cap, sizeof(*r->digest));
  r->flags = malloc(cap);
  assert_non_null(r->flags);
  memset(r->flags, 0xFF, cap);
  assert_non_null(r->t_orig);
  assert_non_null(r->t_copy);
  assert_non_null(r->n_copies);
  assert_non_null(r->uid);
  assert_non_null(r->digest);
  for (i = 0; i < cap; ++i) {
    r->t_orig[i] = r->t_copy[i] = NETSIM_TIME_NONE;
  }
}

static void dup_rec_fini(dup_rec *r) {
  free(r->t_orig);
  free(r->t_copy);
  free(r->n_copies);
  free(r->uid);
  free(r->digest);
  free(r->flags);
}

/* dup_run sends |n| packets (tags tag0...) of |size| bytes carrying
   |carried| pattern bytes, in bursts the pool holds, and runs until the
   copies (|delay| later) are in too. */
static void dup_run(netsim_sim *sim, uint32_t n, uint32_t size,
                    uint32_t carried, uint64_t tag0, netsim_time delay) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    ber_send(sim, size, carried, tag0 + i);
    if (i % 256 == 255 || i == n - 1) {
      netsim_sim_run_until(sim, netsim_sim_now(sim) + NETSIM_MS + delay);
    }
  }
}

static void test_link_dup_rate(void **state) {
  enum { N = 20000 };
  uint64_t seed = tu_seed("test_link_dup_rate");
  static const double ps[2] = {0.02, 0.3};
  uint32_t k;

  (void)state;
  for (k = 0; k < 2; ++k) {
    netsim_sim *sim = ber_net(seed + k);
    netsim_link *l0 = netsim_sim_link(sim, 0);
    const double p = ps[k];
    netsim_link_stats ls, ls3;
    netsim_link_info info;
    netsim_sim_stats st;
    uint32_t i, twice = 0;
    dup_rec r;

    dup_rec_init(&r, N);
    netsim_host_set_rx(netsim_sim_host(sim, 1), dup_rx, &r);
    NS_OK(netsim_link_set_dup(l0, p, 5 * NETSIM_US));
    netsim_link_get_info(l0, &info);
    assert_true(info.dup == p && info.dup_delay == 5 * NETSIM_US);
    dup_run(sim, N, 1500, 0, 0, 5 * NETSIM_US);
    netsim_link_get_stats(l0, &ls);
    netsim_link_get_stats(netsim_sim_link(sim, 3), &ls3);
    netsim_sim_get_stats(sim, &st);
    for (i = 0; i < N; ++i) {
      twice += r.n_copies[i] > 1;
    }
    /* Every original arrived once, every copy once, after it. */
    tu_assert(r.bad == 0 && twice == 0);
    tu_assert(r.n == N + r.copies && r.copies == ls.duplicated);
    tu_assert(st.duplicated == ls.duplicated && st.dup_skipped == 0);
    tu_assert(ls.dup_skipped == 0 && ls.dup_pending == 0);
    /* The copies bypassed the link (its counts are the originals'), and
       the next link (switch to host 1) carried them as any packet. */
    tu_assert(ls.rx_pkts == N && ls.enq_pkts == N);
    tu_assert(ls3.rx_pkts == N + r.copies && ls3.duplicated == 0);
    /* A binomial(N, p): within 5 standard deviations. */
    tu_assert(within((double)r.copies, N * p, sqrt(N * p * (1 - p))));
    dup_rec_fini(&r);
    netsim_sim_del(sim);
  }
}

static void test_link_dup_delay(void **state) {
  enum { N = 3000 };
  uint64_t seed = tu_seed("test_link_dup_delay");
  netsim_linkcfg slow = cfg(NETSIM_GBPS(1), 3 * NETSIM_US, 1ull << 40);
  netsim_sim *sim;
  netsim_link *l2;
  netsim_link_stats ls;
  uint32_t i, bad = 0, seen = 0;
  dup_rec r;

  (void)state;
  /* Host 0 -> switch -> host 1 over a slow last link (1 Gb/s, 3 us): the
     copies are made at the switch end of link 0 and queued at the
     switch like any packet; on link 2 (host 1 -> switch, then link 1 to
     host 0) the copies reach the host directly. */
  {
    netsim_settings s;
    netsim_linkcfg c = cfg(NETSIM_GBPS(100), NETSIM_US, 1ull << 40);
    netsim_switch *sw;
    netsim_settings_default(&s);
    s.seed = seed;
    s.max_pkts = 8192;
    s.payload_max = 256;
    s.max_payloads = 8192;
    NS_OK(netsim_sim_new(&sim, &s, NULL));
    NS_OK(netsim_sim_add_host(sim, NULL));
    NS_OK(netsim_sim_add_host(sim, NULL));
    NS_OK(netsim_sim_add_switch(sim, 2, &sw));
    NS_OK(netsim_sim_connect(sim, 0, 0, netsim_switch_node(sw), 0, &c, &slow,
                             NULL));
    NS_OK(
        netsim_sim_connect(sim, 1, 0, netsim_switch_node(sw), 1, &c, &c, NULL));
    NS_OK(netsim_sim_build_routes(sim));
  }
  dup_rec_init(&r, N);
  netsim_host_set_rx(netsim_sim_host(sim, 0), dup_rx, &r);
  /* Every packet, 250 ms later: far beyond the run of originals. */
  l2 = netsim_sim_link(sim, 1);
  NS_OK(netsim_link_set_dup(l2, 1.0, 250 * NETSIM_MS));
  for (i = 0; i < N; ++i) {
    /* Inline (60 bytes) and pool (200 bytes) payloads, and none. */
    netsim_pkt *p = ns_pkt(sim, 1, 0, (uint16_t)(1000 + i), 1500);
    uint8_t *b;
    uint32_t j, len = i % 3 == 0 ? 60 : i % 3 == 1 ? 200 : 0;
    p->tag = i;
    p->flow = 7 * i;
    if (len) {
      NS_OK(netsim_pkt_payload(netsim_sim_pool(sim), p, len, &b));
      for (j = 0; j < len; ++j) {
        b[j] = pat(i, j);
      }
    }
    NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 1), p));
  }
  /* The originals queue on the 1 Gb/s link for 36 ms; the copies, made
     at host 0's end, follow each exactly 250 ms later, not queued. */
  netsim_sim_run_until(sim, 100 * NETSIM_MS);
  netsim_link_get_stats(l2, &ls);
  tu_assert(ls.duplicated == N && ls.dup_pending == N && r.copies == 0);
  netsim_sim_run_until(sim, NETSIM_S);
  netsim_link_get_stats(l2, &ls);
  tu_assert(r.bad == 0 && r.copies == N && ls.dup_pending == 0);
  for (i = 0; i < N; ++i) {
    bad += r.n_copies[i] != 1 || r.t_copy[i] != r.t_orig[i] + 250 * NETSIM_MS;
  }
  tu_assert(bad == 0);
  /* A shorter delay later: copies stay in time order, each at its own
     original + delay.  Then delay 0: right behind the original. */
  dup_rec_fini(&r);
  dup_rec_init(&r, 4);
  netsim_host_set_rx(netsim_sim_host(sim, 0), dup_rx, &r);
  {
    static const netsim_time d[4] = {300 * NETSIM_US, 300 * NETSIM_US,
                                     10 * NETSIM_US, 0};
    netsim_time t0 = netsim_sim_now(sim);
    for (i = 0; i < 4; ++i) {
      netsim_sim_run_until(sim, t0 + i * 20 * NETSIM_US);
      NS_OK(netsim_link_set_dup(l2, 1.0, d[i]));
      NS_OK(ns_send(sim, 1, 0, 1, 1500, i));
    }
    netsim_sim_run_until(sim, t0 + NETSIM_MS);
    for (i = 0; i < 4; ++i) {
      seen += r.n_copies[i];
      tu_assert(r.t_copy[i] == r.t_orig[i] + d[i]);
    }
    tu_assert(seen == 4 && r.bad == 0);
    /* The copy sent 10 us later overtook the two 300 us copies. */
    tu_assert(r.t_copy[2] < r.t_copy[0] && r.t_copy[2] < r.t_copy[1]);
  }
  /* A host that sends a copy on sends it as a new, clean packet. */
  {
    netsim_pkt *p;
    NS_OK(netsim_sim_pkt_alloc(sim, &p));
    p->key.src = NETSIM_ADDR_BASE + 1;
    p->key.dst = NETSIM_ADDR_BASE;
    p->size = 100;
    p->tag = 3;
    p->flags = NETSIM_PKT_DUP | NETSIM_PKT_ECT;
    NS_OK(netsim_link_set_dup(l2, 0.0, 0));
    NS_OK(netsim_host_send(sim, netsim_sim_host(sim, 1), p));
    netsim_sim_run_until(sim, netsim_sim_now(sim) + NETSIM_MS);
    assert_int_equal(r.n_copies[3], 1); /* only the earlier one */
  }
  dup_rec_fini(&r);
  netsim_sim_del(sim);
}

/* dup_trial runs |n| packets of 1500 bytes carrying 64 over link 0
   with loss, bit errors and duplication |p| (copies 2 us later),
   recording the originals in |r| (dup_rec_init'ed) and the trace. */
static void dup_trial(uint64_t seed, double p, uint32_t n, dup_rec *r,
                      uint64_t *trace) {
  netsim_sim *sim = ber_net(seed);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;

  netsim_host_set_rx(netsim_sim_host(sim, 1), dup_rx, r);
  NS_OK(netsim_link_set_loss(l0, 0.05));
  NS_OK(netsim_link_set_ber(l0, 2e-5));
  NS_OK(netsim_link_set_dup(l0, p, 2 * NETSIM_US));
  dup_run(sim, n, 1500, 64, 0, 2 * NETSIM_US);
  netsim_link_get_stats(l0, &ls);
  tu_assert(ls.duplicated == r->copies && r->bad == 0);
  *trace = netsim_sim_trace_hash(sim);
  netsim_sim_del(sim);
}

static void test_link_dup_determinism(void **state) {
  enum { N = 4000 };
  uint64_t seed = tu_seed("test_link_dup_determinism");
  dup_rec a, b, c, on, off;
  uint64_t ta, tb, tc, ton, toff;
  uint32_t i, diff = 0, lost = 0, hit = 0;

  (void)state;
  dup_rec_init(&a, N);
  dup_rec_init(&b, N);
  dup_rec_init(&c, N);
  dup_rec_init(&on, N);
  dup_rec_init(&off, N);
  /* The same seed: the same packets duplicated; another seed: others. */
  dup_trial(seed, 0.1, N, &a, &ta);
  dup_trial(seed, 0.1, N, &b, &tb);
  dup_trial(seed + 1, 0.1, N, &c, &tc);
  assert_int_equal(ta, tb);
  assert_memory_equal(a.n_copies, b.n_copies, N * sizeof(uint32_t));
  assert_true(ta != tc);
  for (i = 0; i < N; ++i) {
    diff += a.n_copies[i] != c.n_copies[i];
  }
  tu_assert(a.copies > 0 && diff > 0);
  /* Duplication draws from its own stream: with it on (every packet) and
     off, the same packets are lost, and the same ones hit in the same
     bits; with it on, every packet that arrived has exactly one copy. */
  dup_trial(seed, 1.0, N, &on, &ton);
  dup_trial(seed, 0.0, N, &off, &toff);
  assert_memory_equal(on.flags, off.flags, N);
  assert_memory_equal(on.digest, off.digest, N * sizeof(uint64_t));
  assert_memory_equal(on.flags, a.flags, N);
  for (i = 0; i < N; ++i) {
    lost += off.flags[i] == 0xFF;
    hit += off.flags[i] != 0xFF && (off.flags[i] & NETSIM_PKT_BITERR);
    assert_int_equal(on.n_copies[i], off.flags[i] != 0xFF);
    assert_int_equal(off.n_copies[i], 0);
  }
  tu_assert(lost > 0 && hit > 0 && off.copies == 0);
  tu_assert(on.copies == N - lost);
  assert_true(ton != toff);
  dup_rec_fini(&a);
  dup_rec_fini(&b);
  dup_rec_fini(&c);
  dup_rec_fini(&on);
  dup_rec_fini(&off);
}

/* refuse_odd refuses the copies of odd tags and counts what it saw. */
typedef struct dup_cb_rec {
  uint64_t seen, bad;
} dup_cb_rec;

static int refuse_odd(netsim_sim *sim, const netsim_pkt *orig, netsim_pkt *copy,
                      void *user) {
  dup_cb_rec *k = user;

  (void)sim;
  ++k->seen;
  k->bad += copy == orig || copy->tag != orig->tag || copy->uid != orig->uid ||
            !(copy->flags & NETSIM_PKT_DUP) || (orig->flags & NETSIM_PKT_DUP);
  return (int)(copy->tag & 1);
}

/* dup_pool_leg sends |n| packets with 200 bytes in a pool buffer, at
   once, from a pool of |n_pkts| packets and |n_payloads| buffers, over a
   link that duplicates every packet 10 us later: the copies that find no
   packet or no buffer are skipped and counted, and nothing leaks. */
static void dup_pool_leg(uint32_t n_pkts, uint32_t n_payloads, uint32_t n) {
  netsim_settings s;
  netsim_linkcfg c = cfg(NETSIM_GBPS(100), 0, 1ull << 40);
  netsim_sim *sim = NULL;
  netsim_switch *sw;
  netsim_link_stats ls;
  netsim_sim_stats st;
  uint32_t i;
  dup_rec r;

  netsim_settings_default(&s);
  s.max_pkts = n_pkts;
  s.payload_max = 256;
  s.max_payloads = n_payloads;
  NS_OK(netsim_sim_new(&sim, &s, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_host(sim, NULL));
  NS_OK(netsim_sim_add_switch(sim, 2, &sw));
  NS_OK(netsim_sim_connect(sim, 0, 0, netsim_switch_node(sw), 0, &c, &c, NULL));
  NS_OK(netsim_sim_connect(sim, 1, 0, netsim_switch_node(sw), 1, &c, &c, NULL));
  NS_OK(netsim_sim_build_routes(sim));
  dup_rec_init(&r, n);
  netsim_host_set_rx(netsim_sim_host(sim, 1), dup_rx, &r);
  NS_OK(netsim_link_set_dup(netsim_sim_link(sim, 0), 1.0, 10 * NETSIM_US));
  for (i = 0; i < n; ++i) {
    ber_send(sim, 1000, 200, i);
  }
  netsim_sim_run_until(sim, NETSIM_MS);
  netsim_link_get_stats(netsim_sim_link(sim, 0), &ls);
  netsim_sim_get_stats(sim, &st);
  tu_assert(r.n == n + r.copies && r.bad == 0);
  tu_assert(ls.dup_skipped > 0 && ls.duplicated + ls.dup_skipped == n);
  tu_assert(st.dup_skipped == ls.dup_skipped && r.copies == ls.duplicated);
  tu_assert(ls.dup_pending == 0 && st.pkts_in_use == 0);
  dup_rec_fini(&r);
  netsim_sim_del(sim);
}

static void test_link_dup_pool(void **state) {
  (void)state;
  /* No packet for the copy, then no payload buffer. */
  dup_pool_leg(300, 1024, 300);
  dup_pool_leg(1024, 300, 300);
}

static void test_link_dup_limits(void **state) {
  netsim_sim *sim = ber_net(11);
  netsim_link *l0 = netsim_sim_link(sim, 0);
  netsim_link_stats ls;
  netsim_link_info info;
  netsim_dup_cb prev;
  void *prev_user;
  dup_cb_rec k = {0, 0};
  uint32_t i;
  dup_rec r;

  (void)state;
  dup_rec_init(&r, 8192);
  netsim_host_set_rx(netsim_sim_host(sim, 1), dup_rx, &r);
  assert_int_equal(netsim_link_set_dup(l0, -0.1, 0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_link_set_dup(l0, 1.5, 0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_link_set_dup(l0, NAN, 0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_link_set_dup(l0, 0.5, 1001 * NETSIM_S),
                   NETSIM_ERR_INVAL);
  /* Probability 0 (never set, then set back to 0) never duplicates. */
  dup_run(sim, 1000, 1000, 32, 0, 0);
  NS_OK(netsim_link_set_dup(l0, 0.7, NETSIM_US));
  NS_OK(netsim_link_set_dup(l0, 0.0, NETSIM_US));
  dup_run(sim, 1000, 1000, 32, 1000, 0);
  netsim_link_get_stats(l0, &ls);
  tu_assert(r.n == 2000 && r.copies == 0 && ls.duplicated == 0);
  /* The dup callback sees each copy and may refuse it (counted). */
  netsim_sim_set_dup_cb(sim, refuse_odd, &k, &prev, &prev_user);
  assert_null(prev);
  NS_OK(netsim_link_set_dup(l0, 1.0, 10 * NETSIM_US));
  dup_run(sim, 100, 1000, 200, 2000, 10 * NETSIM_US);
  netsim_link_get_stats(l0, &ls);
  tu_assert(k.seen == 100 && k.bad == 0 && r.bad == 0);
  tu_assert(ls.duplicated == 50 && ls.dup_skipped == 50 && r.copies == 50);
  for (i = 2000; i < 2100; ++i) {
    tu_assert(r.n_copies[i] == ((i & 1) == 0));
  }
  netsim_sim_set_dup_cb(sim, NULL, NULL, NULL, NULL);
  /* The fault calls: a cable's both directions, or every link. */
  NS_OK(netsim_fault_dup(sim, 2, 0.25, 3 * NETSIM_MS));
  netsim_link_get_info(netsim_sim_link(sim, 3), &info);
  assert_true(info.dup == 0.25 && info.dup_delay == 3 * NETSIM_MS);
  assert_int_equal(netsim_fault_dup(sim, 99, 0.1, 0), NETSIM_ERR_NOENT);
  assert_int_equal(netsim_fault_dup(sim, 2, 2.0, 0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_fault_dup_all(sim, -1, 0, 0), NETSIM_ERR_INVAL);
  assert_int_equal(netsim_fault_dup_all(sim, 0.1, 2000 * NETSIM_S, 0),
                   NETSIM_ERR_INVAL);
  NS_OK(netsim_fault_dup_all(sim, 0.5, NETSIM_US, 1)); /* no fabric links */
  netsim_link_get_info(netsim_sim_link(sim, 1), &info);
  assert_true(info.dup == 0.0);
  NS_OK(netsim_fault_dup_all(sim, 0.5, NETSIM_US, 0));
  for (i = 0; i < 4; ++i) {
    netsim_link_get_info(netsim_sim_link(sim, i), &info);
    assert_true(info.dup == 0.5 && info.dup_delay == NETSIM_US);
  }
  dup_rec_fini(&r);
  netsim_sim_del(sim);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_link_exact_timing),
      cmocka_unit_test(test_link_no_drift),
      cmocka_unit_test(test_link_degraded_rate),
      cmocka_unit_test(test_link_random_loss),
      cmocka_unit_test(test_link_down_loses_everything),
      cmocka_unit_test(test_link_stats),
      cmocka_unit_test(test_link_ber_rate),
      cmocka_unit_test(test_link_ber_flips),
      cmocka_unit_test(test_link_ber_limits),
      cmocka_unit_test(test_link_ber_determinism),
      cmocka_unit_test(test_link_dup_rate),
      cmocka_unit_test(test_link_dup_delay),
      cmocka_unit_test(test_link_dup_determinism),
      cmocka_unit_test(test_link_dup_pool),
      cmocka_unit_test(test_link_dup_limits),
  };
  return cmocka_run_group_tests_name("netsim_link", tests, NULL, NULL);
}
