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
  };
  return cmocka_run_group_tests_name("netsim_link", tests, NULL, NULL);
}
