/*
 * gen_corpus.c: writes the seed inputs of the fuzz targets into
 * test/fuzz/corpus/<target>/seed-*.  Not part of `make test`; its output
 * is committed.  Run it from the repository root:
 *
 *   gcc -std=c11 -D_DEFAULT_SOURCE -O1 -Isrd/include -Isrd \
 *       test/fuzz/gen_corpus.c srd/srd_*.c -o /tmp/gen_corpus
 *   /tmp/gen_corpus test/fuzz/corpus
 *
 * It writes, deterministically:
 *   fuzz_pkt    packets of every type built with the encoders (and a few
 *               refused ones), and real traffic captured from two
 *               endpoints through srd_ep_write_pkt: a handshake, data,
 *               ACKs with ranges, echoes and NACKs (RNR, truncation), a
 *               retransmission, a SYNC;
 *   fuzz_ep     record sequences in the format test/fuzz/fuzz_ep.c
 *               documents: replays and mutations of A's real packets,
 *               forged packets patched with the real incarnation ids,
 *               time steps, posting, polling, the wire, a flush;
 *   fuzz_acktr  operation sequences in the format test/fuzz/fuzz_acktr.c
 *               documents: in order, reordered, duplicates, gaps, wrap
 *               past 2^32, jumps past the window, NACKs, resets, the
 *               largest window filled by runs, ACKs with few ranges,
 *               every ACK frequency, failed allocations;
 *   fuzz_wire   schedules in the format test/fuzz/fuzz_wire.c documents:
 *               lossless traffic in every configuration, reordering,
 *               duplicates, split reads, losses, unreachable peers,
 *               corrupted and forged (re-sealed) DATA, forged answers,
 *               replays, restarts, peer removal, an ordered receiver
 *               posting late, flushes and truncation.
 * Seeds the fuzzers found are added beside these, under their hash names,
 * with libFuzzer's -merge=1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <srd/srd.h>

#include "srd_pkt.h"

static const char *out_root;
static unsigned n_written;

static void mkdir_p(const char *path) {
  if (mkdir(path, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "gen_corpus: cannot create %s: %s\n", path,
            strerror(errno));
    exit(1);
  }
}

static void write_seed(const char *target, const char *name,
                       const uint8_t *data, size_t len) {
  char path[512];
  FILE *f;

  snprintf(path, sizeof(path), "%s/%s", out_root, target);
  mkdir_p(path);
  snprintf(path, sizeof(path), "%s/%s/seed-%s", out_root, target, name);
  f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "gen_corpus: cannot write %s\n", path);
    exit(1);
  }
  ++n_written;
}

/* A byte buffer that seeds are put together in. */
typedef struct buf {
  uint8_t b[8192];
  size_t n;
} buf;

static void b8(buf *s, uint32_t v) {
  if (s->n < sizeof(s->b)) {
    s->b[s->n++] = (uint8_t)v;
  }
}

static void b16(buf *s, uint32_t v) {
  b8(s, v >> 8);
  b8(s, v);
}

static void b32(buf *s, uint32_t v) {
  b16(s, v >> 16);
  b16(s, v);
}

static void bbytes(buf *s, const uint8_t *p, size_t n) {
  size_t i;

  for (i = 0; i < n; ++i) {
    b8(s, p[i]);
  }
}

/* ------------------------------------------------------------------------ */
/* fuzz_pkt: encoded packets                                                */

/* pkt_seed writes datagram |p| with its CRC fields zeroed: fuzz_pkt seals
   such a datagram before it decodes it, so that what the fuzzer makes of
   it reaches the decoder behind the integrity check. */
static void pkt_seed(const char *name, const uint8_t *p, size_t n) {
  static uint8_t b[SRD_PKT_ACK_MAX_LEN + 1100];

  memcpy(b, p, n);
  if (n >= SRD_PKT_COMMON_LEN) {
    memset(b + SRD_PKT_HCRC_OFF, 0, 4);
  }
  if (n >= SRD_PKT_DATA_HDR_LEN && b[1] == SRD_PKT_DATA &&
      (b[3] & SRD_DATA_FLAG_PCRC)) {
    memset(b + SRD_PKT_DATA_HDR_LEN - 4, 0, 4); /* pcrc */
  }
  write_seed("fuzz_pkt", name, b, n);
}

static void gen_pkt_encoded(void) {
  uint8_t p[SRD_PKT_ACK_MAX_LEN + 1100];
  srd_pkt_common c = {SRD_PROTO_VERSION, 0, 0, 0x11223344u, 0x55667788u, 7};
  srd_pkt_data d;
  srd_pkt_ack a;
  srd_pkt_hs hs;
  srd_pkt_sync sy;
  srd_ssize n;
  uint32_t i;

  memset(&hs, 0, sizeof(hs));
  hs.nonce = 0x0123456789ABCDEFull;
  hs.echo = 0x0FEDCBA987654321ull;
  hs.mtu = 8192;
  hs.max_msg_size = 1u << 20;
  hs.msg_window = 1024;
  c.dst_conn = 0;
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_REQ, &c, &hs);
  pkt_seed("hs_req", p, (size_t)n);
  c.dst_conn = 0x55667788u;
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_REQ, &c, &hs);
  pkt_seed("hs_req_rehandshake", p, (size_t)n);
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_RESP, &c, &hs);
  pkt_seed("hs_resp", p, (size_t)n);
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_CONFIRM, &c, &hs);
  pkt_seed("hs_confirm", p, (size_t)n);
  sy.msg_floor = 0xFFFFFF80u;
  n = srd_pkt_encode_sync(p, sizeof(p), &c, &sy);
  pkt_seed("sync", p, (size_t)n);

  /* DATA: first, middle and last fragments, an empty message, the echo. */
  memset(&d, 0, sizeof(d));
  d.seq = 0xFFFFFFF0u;
  d.msg_id = 0xFFFFFF10u;
  d.msg_floor = 0xFFFFFF0Eu;
  d.msg_len = 2500;
  d.offset = 0;
  d.payload_len = 1024;
  d.tx_count = 1;
  d.tx_ts = 123456789;
  c.flags = SRD_DATA_FLAG_PCRC; /* pcrc 0: fuzz_pkt computes it */
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  for (i = 0; i < d.payload_len; ++i) {
    p[n + i] = (uint8_t)(i * 7);
  }
  pkt_seed("data_first", p, (size_t)n + d.payload_len);
  d.offset = 2048;
  d.payload_len = 452;
  d.tx_count = 3;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  pkt_seed("data_last_retx", p, (size_t)n + d.payload_len);
  c.flags = 0;
  d.msg_len = 0;
  d.offset = 0;
  d.payload_len = 0;
  d.tx_count = 1;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  pkt_seed("data_empty", p, (size_t)n);
  c.flags = SRD_DATA_FLAG_HS_ECHO;
  d.hs_echo = 0xC00C1E0000000001ull;
  d.hs_mtu = 8192; /* the sender's request parameters ride with it */
  d.hs_max_msg_size = 1u << 20;
  d.hs_msg_window = 1024;
  d.msg_len = 16;
  d.payload_len = 16;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0xAB, 16);
  pkt_seed("data_echo", p, (size_t)n + 16);
  /* DATA carrying an acknowledgement, with and without the echo. */
  memset(&a, 0, sizeof(a));
  a.largest = 0x00000003u;
  a.first_range = 2;
  a.n_ranges = 2;
  a.ranges[0].gap = 1;
  a.ranges[0].len = 3;
  a.ranges[1].gap = 4;
  a.ranges[1].len = 1;
  a.n_echo = 2;
  a.echo[0].tx_ts = 1000;
  a.echo[0].seq = 0x00000003u;
  a.echo[0].hold_ns = 500;
  a.echo[0].path = 5;
  a.echo[1].tx_ts = 900;
  a.echo[1].seq = 0xFFFFFFFEu;
  a.echo[1].path = 63;
  d.ack = &a;
  c.flags = SRD_DATA_FLAG_HS_ECHO | SRD_DATA_FLAG_ACK;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0xCD, 16);
  pkt_seed("data_echo_ack", p, (size_t)n + 16);
  c.flags = SRD_DATA_FLAG_ACK;
  a.n_ranges = 0;
  a.n_echo = 1;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0xCD, 16);
  pkt_seed("data_ack", p, (size_t)n + 16);
  d.ack = NULL;
  c.flags = 0;

  /* ACKs: one range; many ranges, echoes and NACKs; the largest arrays. */
  memset(&a, 0, sizeof(a));
  a.largest = 0x00000010u;
  a.first_range = 40;
  n = srd_pkt_encode_ack(p, sizeof(p), &c, &a);
  pkt_seed("ack_simple", p, (size_t)n);
  a.n_ranges = 3;
  for (i = 0; i < 3; ++i) {
    a.ranges[i].gap = (uint16_t)(i + 1);
    a.ranges[i].len = (uint16_t)(2 * i + 1);
  }
  a.n_echo = 2;
  for (i = 0; i < 2; ++i) {
    a.echo[i].tx_ts = 1000000 + i;
    a.echo[i].hold_ns = 5000;
    a.echo[i].path = (uint16_t)(i * 9);
  }
  a.n_nack = 2;
  a.nack[0].seq = 0x11;
  a.nack[0].msg_id = 0xFFFFFF12u;
  a.nack[0].reason = SRD_NACK_RNR;
  a.nack[1].seq = 0x12;
  a.nack[1].msg_id = 0xFFFFFF13u;
  a.nack[1].reason = SRD_NACK_TRUNCATED;
  n = srd_pkt_encode_ack(p, sizeof(p), &c, &a);
  pkt_seed("ack_ranges_echo_nack", p, (size_t)n);
  a.n_ranges = SRD_ACK_MAX_RANGES;
  for (i = 0; i < SRD_ACK_MAX_RANGES; ++i) {
    a.ranges[i].gap = 1;
    a.ranges[i].len = 1;
  }
  a.n_echo = SRD_ACK_MAX_ECHO;
  a.n_nack = SRD_ACK_MAX_NACK;
  for (i = 0; i < SRD_ACK_MAX_NACK; ++i) {
    a.nack[i].seq = i;
    a.nack[i].msg_id = i;
    a.nack[i].reason = SRD_NACK_RNR;
  }
  n = srd_pkt_encode_ack(p, sizeof(p), &c, &a);
  pkt_seed("ack_max", p, (size_t)n);
#ifdef SRD_ACK_FLAG_EMPTY
  memset(&a, 0, sizeof(a));
  a.empty = 1;
  a.n_nack = 1;
  a.nack[0].seq = 5;
  a.nack[0].msg_id = 6;
  a.nack[0].reason = SRD_NACK_RNR;
  n = srd_pkt_encode_ack(p, sizeof(p), &c, &a);
  pkt_seed("ack_empty_nack", p, (size_t)n);
#endif

  /* Refused DATA: an echo flag without a cookie; bytes past the payload. */
  c.flags = SRD_DATA_FLAG_HS_ECHO;
  d.hs_echo = 0;
  d.msg_len = 16;
  d.payload_len = 16;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0xAB, 16);
  pkt_seed("bad_data_echo_zero", p, (size_t)n + 16);
  c.flags = 0;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0xAB, 20);
  pkt_seed("bad_data_too_long", p, (size_t)n + 20);

  /* Refused: truncated, bad version, bad type, bad reserved field. */
  n = srd_pkt_encode_sync(p, sizeof(p), &c, &sy);
  pkt_seed("bad_truncated", p, (size_t)n - 3);
  p[0] = SRD_PROTO_VERSION + 1;
  pkt_seed("bad_version", p, (size_t)n);
  p[0] = SRD_PROTO_VERSION;
  p[1] = 9;
  pkt_seed("bad_type", p, (size_t)n);
  p[1] = SRD_PKT_SYNC;
  p[15] = 1;
  pkt_seed("bad_reserved", p, (size_t)n);
  /* A wrong header CRC (not 0: that asks fuzz_pkt to seal it). */
  p[15] = 0;
  n = srd_pkt_encode_sync(p, sizeof(p), &c, &sy);
  p[SRD_PKT_HCRC_OFF] ^= 0x40;
  write_seed("fuzz_pkt", "bad_hcrc", p, (size_t)n);
}

/* ------------------------------------------------------------------------ */
/* fuzz_pkt: real traffic                                                   */

typedef struct pair {
  srd_ep *ep[2];
  srd_peer_id peer[2];
  srd_tstamp now;
  uint8_t pkt[16384];
  unsigned saved[7][2][2]; /* type, flags != 0, sender: how many saved */
  unsigned n_saved;
  /* drop[i]: datagrams from endpoint i are lost. */
  int drop[2];
} pair;

static void pair_save(pair *w, int from, const uint8_t *p, size_t n) {
  char name[64];
  unsigned t = p[1] <= SRD_PKT_TYPE_MAX ? p[1] : 0;
  unsigned fl = (p[2] | (p[3] & ~SRD_DATA_FLAG_PCRC)) != 0;
  /* NACKs make an ACK special too. */
  if (t == SRD_PKT_ACK && n > SRD_PKT_COMMON_LEN + 8 &&
      p[SRD_PKT_COMMON_LEN + 8] != 0) {
    fl = 1;
  }
  if (w->saved[t][fl][from] >= 3) {
    return;
  }
  ++w->saved[t][fl][from];
  snprintf(name, sizeof(name), "real-%02u-%s%s-from-%c", w->n_saved++,
           srd_pkt_type_name((uint8_t)t), fl ? "-flag" : "", from ? 'b' : 'a');
  /* The first of a kind as it was written, CRCs and all; the others for
     fuzz_pkt to seal. */
  if (w->saved[t][fl][from] == 1) {
    write_seed("fuzz_pkt", name, p, n);
  } else {
    pkt_seed(name, p, n);
  }
}

/* pair_run moves datagrams both ways, with timers, for |rounds| rounds
   of 2 us. */
static void pair_run(pair *w, int rounds) {
  int r, i;

  for (r = 0; r < rounds; ++r) {
    for (i = 0; i < 2; ++i) {
      srd_path path;
      srd_ssize n;
      while ((n = srd_ep_write_pkt(w->ep[i], &path, w->pkt, sizeof(w->pkt),
                                   w->now)) > 0) {
        srd_path in = {w->peer[1 - i], path.path};
        pair_save(w, i, w->pkt, (size_t)n);
        if (!w->drop[i]) {
          srd_ep_read_pkt(w->ep[1 - i], &in, w->pkt, (size_t)n, w->now);
        }
      }
    }
    for (i = 0; i < 2; ++i) {
      srd_cqe cqe[8];
      while (srd_ep_poll_cq(w->ep[i], cqe, 8) > 0) {
      }
      srd_ep_handle_expiry(w->ep[i], w->now);
    }
    w->now += 2 * SRD_US;
  }
}

static void gen_pkt_real(void) {
  static pair w;
  static uint8_t sbuf[4][4096], rbuf[4][4096];
  srd_settings s;
  srd_peer_settings ps;
  int i;

  memset(&w, 0, sizeof(w));
  for (i = 0; i < 2; ++i) {
    srd_settings_default(&s);
    s.seed = 0xC0FFEE00u + (uint64_t)i;
    s.mtu = 1024;
    s.max_msg_size = 8192;
    s.unexp_msgs = 0; /* no buffer, no message: RNR */
    s.max_retries = 2;
    s.rnr_backoff_max = 100 * SRD_US;
    srd_peer_settings_default(&ps);
    ps.n_paths = 4;
    if (srd_ep_new(&w.ep[i], &s, srd_mem_default()) != 0 ||
        srd_ep_add_peer(w.ep[i], &ps, &w.peer[i]) != 0) {
      fprintf(stderr, "gen_corpus: endpoint setup failed\n");
      exit(1);
    }
  }
  for (i = 0; i < 4; ++i) {
    memset(sbuf[i], 'a' + i, sizeof(sbuf[i]));
  }
  /* A handshake and a message with no receive posted: RNR. */
  srd_ep_post_send(w.ep[0], w.peer[0], sbuf[0], 100, NULL, w.now);
  pair_run(&w, 20);
  /* A receive too small: truncation. */
  srd_ep_post_recv(w.ep[1], rbuf[0], 50, NULL, w.now);
  pair_run(&w, 200);
  /* Room: a message of three fragments, and one back. */
  srd_ep_post_recv(w.ep[1], rbuf[1], 4096, NULL, w.now);
  srd_ep_post_send(w.ep[0], w.peer[0], sbuf[1], 3000, NULL, w.now);
  srd_ep_post_recv(w.ep[0], rbuf[2], 4096, NULL, w.now);
  srd_ep_post_send(w.ep[1], w.peer[1], sbuf[2], 7, NULL, w.now);
  pair_run(&w, 200);
  /* A's data is lost until the message fails: retransmissions, SYNC. */
  w.drop[0] = 1;
  srd_ep_post_recv(w.ep[1], rbuf[3], 4096, NULL, w.now);
  srd_ep_post_send(w.ep[0], w.peer[0], sbuf[3], 1500, NULL, w.now);
  pair_run(&w, 20000);
  w.drop[0] = 0;
  pair_run(&w, 200);
  srd_ep_del(w.ep[0]);
  srd_ep_del(w.ep[1]);
}

/* ------------------------------------------------------------------------ */
/* fuzz_ep                                                                  */

/* Record ops (test/fuzz/fuzz_ep.c). */
enum {
  E_FEED_B = 0,
  E_FEED_B_PATCHED = 1,
  E_REPLAY = 2,
  E_MUTATE = 3,
  E_TIME = 4,
  E_EXPIRY = 5,
  E_B_WRITE = 6,
  E_A_WRITE = 7,
  E_PUMP = 8,
  E_A_SEND = 9,
  E_B_RECV = 10,
  E_POLL_A = 11,
  E_POLL_B = 12,
  E_FEED_A = 13,
  E_B_SEND_A_RECV = 14,
  E_FLUSH_STATS = 15
};

#define F(op, flags) ((uint32_t)(op) | (uint32_t)(flags) << 4)

static void ep_seed(const char *name, const buf *s) {
  write_seed("fuzz_ep", name, s->b, s->n);
}

/* ep_packet appends a feed of an encoded packet (patched by the target). */
static void ep_feed(buf *s, uint32_t op, const uint8_t *p, size_t n,
                    uint8_t path) {
  b8(s, op);
  b16(s, (uint32_t)n);
  b8(s, path);
  if (op & 0x10) {
    b16(s, 20); /* split after 19 bytes */
  }
  bbytes(s, p, n);
}

static void gen_ep(void) {
  static const uint8_t cfgs[] = {0x00, 0x01, 0x06, 0x08,
                                 0x10, 0x80, 0x21, 0x4F};
  uint8_t p[2048];
  srd_pkt_common c = {SRD_PROTO_VERSION, 0, 0, 1, 2, 0};
  srd_pkt_hs hs;
  srd_pkt_sync sy;
  srd_pkt_ack a;
  srd_pkt_data d;
  srd_ssize n;
  buf s;
  char name[64];
  unsigned i;

  /* Setup alone, in every flavour. */
  for (i = 0; i < sizeof(cfgs); ++i) {
    s.n = 0;
    b8(&s, cfgs[i]);
    snprintf(name, sizeof(name), "setup-cfg%02x", cfgs[i]);
    ep_seed(name, &s);
  }

  /* The lost packets arrive late (replayed from the ring, slots 12..14),
     then B acknowledges, both poll. */
  s.n = 0;
  b8(&s, 0x00);
  for (i = 12; i < 15; ++i) {
    b8(&s, E_REPLAY);
    b8(&s, i);
  }
  b8(&s, E_TIME);
  b16(&s, 10);
  b8(&s, F(E_B_WRITE, 1));
  b8(&s, E_POLL_A);
  b8(&s, 16);
  b8(&s, E_POLL_B);
  b8(&s, 16);
  ep_seed("late-data", &s);

  /* The same in two pieces, twice each (duplicates), out of order. */
  s.n = 0;
  b8(&s, 0x01);
  for (i = 0; i < 6; ++i) {
    b8(&s, F(E_REPLAY, 1));
    b8(&s, 14 - i % 3);
    b16(&s, (uint32_t)(i * 13));
  }
  b8(&s, E_REPLAY);
  b8(&s, 3); /* an old, delivered message */
  b8(&s, F(E_B_WRITE, 1));
  ep_seed("late-data-split-dup", &s);

  /* The wire runs: A retransmits after its timeout. */
  s.n = 0;
  b8(&s, 0x06);
  b8(&s, E_EXPIRY);
  b8(&s, E_PUMP);
  b8(&s, 15);
  b8(&s, F(E_FLUSH_STATS, 0));
  b8(&s, F(E_FLUSH_STATS, 1));
  ep_seed("retransmit", &s);

  /* A's packets are lost until its message fails: SYNC to B. */
  s.n = 0;
  b8(&s, 0x00);
  for (i = 0; i < 12; ++i) {
    b8(&s, F(E_TIME, 2));
    b16(&s, 40);
    b8(&s, E_A_WRITE);
  }
  /* The retransmissions and the SYNC reach B late, from the ring. */
  for (i = 15; i < 30; ++i) {
    b8(&s, E_REPLAY);
    b8(&s, i);
  }
  b8(&s, F(E_A_WRITE, 1));
  b8(&s, F(E_B_WRITE, 1));
  b8(&s, E_POLL_A);
  b8(&s, 16);
  ep_seed("give-up-sync", &s);

  /* Messages of every size, a small receive (truncation), no receive
     (RNR with cfg 0x10), and traffic back from B. */
  s.n = 0;
  b8(&s, 0x10);
  b8(&s, F(E_B_RECV, 2));
  b8(&s, 20);
  b8(&s, F(E_A_SEND, 0));
  b16(&s, 3000);
  b8(&s, F(E_A_SEND, 2));
  b8(&s, 9);
  b8(&s, F(E_A_SEND, 0));
  b16(&s, 8192);
  b8(&s, F(E_A_SEND, 0));
  b16(&s, 8200); /* too long */
  b8(&s, F(E_B_SEND_A_RECV, 1));
  b16(&s, 4000);
  b8(&s, F(E_B_SEND_A_RECV, 0));
  b16(&s, 4000);
  b8(&s, E_PUMP);
  b8(&s, 15);
  b8(&s, F(E_B_RECV, 0));
  b16(&s, 8192);
  b8(&s, E_PUMP);
  b8(&s, 15);
  ep_seed("sizes-rnr-truncate", &s);

  /* Mutations of real packets: DATA header fields (the low bytes of seq,
     msg_id, msg_floor, msg_len, offset and payload_len), the HS_REQ, the
     ACK; half of them re-sealed, so that the check behind the CRC runs. */
  for (i = 0; i < 8; ++i) {
    static const uint8_t off[8] = {1,
                                   3,
                                   SRD_PKT_COMMON_LEN + 3,
                                   SRD_PKT_COMMON_LEN + 7,
                                   SRD_PKT_COMMON_LEN + 11,
                                   SRD_PKT_COMMON_LEN + 15,
                                   SRD_PKT_COMMON_LEN + 19,
                                   SRD_PKT_COMMON_LEN + 22};
    s.n = 0;
    b8(&s, i & 1 ? 0x80 : 0x00);
    b8(&s, F(E_MUTATE, (i & 2 ? 2 : 0) | (i & 4)));
    b8(&s, 12 + i % 3);
    b8(&s, 1);
    b16(&s, off[i]);
    b8(&s, 0x41 + i);
    if (i & 2) {
      b16(&s, 600);
    }
    b8(&s, F(E_MUTATE, i & 4));
    b8(&s, (uint8_t)(i % 2)); /* the handshake packets */
    b8(&s, 1);
    b16(&s, SRD_PKT_COMMON_LEN + i);
    b8(&s, 0xFF);
    b8(&s, F(E_MUTATE, i & 4));
    b8(&s, 11); /* A's ACK of B's messages */
    b8(&s, 1);
    b16(&s, SRD_PKT_COMMON_LEN + 3);
    b8(&s, 0x80);
    b8(&s, F(E_B_WRITE, 1));
    snprintf(name, sizeof(name), "mutate-%u", i);
    ep_seed(name, &s);
  }

  /* Forged packets, patched with the real incarnation ids. */
  memset(&hs, 0, sizeof(hs));
  hs.nonce = 0x1111222233334444ull;
  hs.echo = 0x5555666677778888ull;
  hs.mtu = 512;
  hs.max_msg_size = 4096;
  hs.msg_window = 16;
  s.n = 0;
  b8(&s, 0x00);
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_REQ, &c, &hs);
  ep_feed(&s, F(E_FEED_B_PATCHED, 0), p, (size_t)n, 3);
  b8(&s, F(E_B_WRITE, 0));
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_CONFIRM, &c, &hs);
  ep_feed(&s, F(E_FEED_B_PATCHED, 0), p, (size_t)n, 3);
  n = srd_pkt_encode_hs(p, sizeof(p), SRD_PKT_HS_RESP, &c, &hs);
  ep_feed(&s, F(E_FEED_A, 0), p, (size_t)n, 3);
  b8(&s, E_PUMP);
  b8(&s, 10);
  ep_seed("forged-handshake", &s);

  s.n = 0;
  b8(&s, 0x01);
  sy.msg_floor = 0xFFFFFFF0u;
  n = srd_pkt_encode_sync(p, sizeof(p), &c, &sy);
  ep_feed(&s, F(E_FEED_B_PATCHED, 0), p, (size_t)n, 1);
  b8(&s, E_REPLAY);
  b8(&s, 13);
  b8(&s, E_POLL_B);
  b8(&s, 16);
  ep_seed("forged-sync", &s);

  /* Forged ACKs to A, and to B while B has data in flight. */
  memset(&a, 0, sizeof(a));
  a.largest = 0x12345678u;
  a.first_range = 3;
  a.n_ranges = 1;
  a.ranges[0].gap = 1;
  a.ranges[0].len = 2;
  a.n_echo = 1;
  a.echo[0].tx_ts = 1000;
  a.echo[0].hold_ns = 10;
  a.echo[0].path = 0;
  a.n_nack = 2;
  a.nack[0].seq = 0x12345678u;
  a.nack[0].msg_id = 0xFFFFFF05u;
  a.nack[0].reason = SRD_NACK_RNR;
  a.nack[1].seq = 0x12345677u;
  a.nack[1].msg_id = 0xFFFFFF06u;
  a.nack[1].reason = SRD_NACK_TRUNCATED;
  n = srd_pkt_encode_ack(p, sizeof(p), &c, &a);
  s.n = 0;
  b8(&s, 0x00);
  ep_feed(&s, F(E_FEED_A, 2), p, (size_t)n, 0);
  b8(&s, F(E_B_SEND_A_RECV, 1));
  b16(&s, 2000);
  b8(&s, E_B_WRITE);
  ep_feed(&s, F(E_FEED_B_PATCHED, 2), p, (size_t)n, 0);
  b8(&s, E_EXPIRY);
  b8(&s, F(E_B_WRITE, 1));
  b8(&s, F(E_A_WRITE, 1));
  ep_seed("forged-ack", &s);

  /* Forged data for the in-flight message and a new one. */
  memset(&d, 0, sizeof(d));
  d.seq = 0x40000000u;
  d.msg_id = 0xFFFFFF40u;
  d.msg_floor = 0xFFFFFF40u;
  d.msg_len = 100;
  d.payload_len = 100;
  d.tx_count = 1;
  d.tx_ts = 5;
  c.flags = 0;
  n = srd_pkt_encode_data(p, sizeof(p), &c, &d);
  memset(p + n, 0x33, 100);
  s.n = 0;
  b8(&s, 0x00);
  ep_feed(&s, F(E_FEED_B_PATCHED, 0), p, (size_t)n + 100, 0);
  ep_feed(&s, F(E_FEED_B_PATCHED, 1), p, (size_t)n + 100, 0);
  ep_feed(&s, F(E_FEED_B, 0), p, (size_t)n + 100, 0);
  b8(&s, E_POLL_B);
  b8(&s, 4);
  ep_seed("forged-data", &s);

  /* Flush in the middle, then carry on. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, E_REPLAY);
  b8(&s, 12);
  b8(&s, F(E_FLUSH_STATS, 3));
  b8(&s, F(E_FLUSH_STATS, 7));
  b8(&s, E_POLL_A);
  b8(&s, 16);
  b8(&s, E_POLL_B);
  b8(&s, 16);
  b8(&s, F(E_A_SEND, 2));
  b8(&s, 200);
  b8(&s, F(E_B_RECV, 2));
  b8(&s, 255);
  b8(&s, E_PUMP);
  b8(&s, 15);
  ep_seed("flush", &s);

  /* A restarts (a new incarnation) with messages in flight both ways;
     the old incarnation's packets come back late. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, E_REPLAY);
  b8(&s, 12); /* B holds part of a message when A restarts */
  b8(&s, F(E_B_SEND_A_RECV, 1));
  b16(&s, 3000);
  b8(&s, E_B_WRITE);
  b8(&s, F(E_FLUSH_STATS, 2));
  b8(&s, F(E_A_SEND, 2));
  b8(&s, 77);
  b8(&s, E_PUMP);
  b8(&s, 15);
  for (i = 0; i < 4; ++i) {
    b8(&s, E_REPLAY);
    b8(&s, 9 + i);
  }
  b8(&s, F(E_FLUSH_STATS, 2));
  b8(&s, F(E_TIME, 3));
  b16(&s, 100);
  b8(&s, F(E_B_SEND_A_RECV, 3));
  b8(&s, 99);
  b8(&s, E_PUMP);
  b8(&s, 15);
  ep_seed("restart", &s);

  /* A restarts and its handshake is never answered: unreachable. */
  s.n = 0;
  b8(&s, 0x02);
  b8(&s, F(E_FLUSH_STATS, 2));
  b8(&s, F(E_A_SEND, 2));
  b8(&s, 12);
  for (i = 0; i < 20; ++i) {
    b8(&s, E_EXPIRY);
    b8(&s, E_A_WRITE);
  }
  b8(&s, E_POLL_A);
  b8(&s, 16);
  ep_seed("restart-unreachable", &s);

  /* Long silence: the handshake state after a timeout, RTO backoff. */
  s.n = 0;
  b8(&s, 0x02);
  b8(&s, F(E_TIME, 3));
  b16(&s, 500);
  b8(&s, E_A_WRITE);
  b8(&s, F(E_TIME, 3));
  b16(&s, 1);
  b8(&s, F(E_A_SEND, 2));
  b8(&s, 30);
  b8(&s, E_PUMP);
  b8(&s, 15);
  ep_seed("silence", &s);
}

/* ------------------------------------------------------------------------ */
/* fuzz_acktr                                                               */

/* Ops (test/fuzz/fuzz_acktr.c). */
enum {
  T_NEAR = 0,
  T_AHEAD = 1,
  T_ANY = 2,
  T_EDGE = 3,
  T_CHECK = 4,
  T_BASE = 5,
  T_NACK = 6,
  T_TIME = 7,
  T_BUILD = 8,
  T_RESET = 9,
  T_RUN = 10,
  T_BUILD_MAX = 11
};

static void at_rec(buf *s, uint32_t op, uint32_t arg, int wide) {
  b8(s, op);
  if (wide) {
    b32(s, arg);
  } else {
    b8(s, arg);
  }
  b32(s, 0x1000u + (uint32_t)s->n); /* tx_ts */
  b8(s, (uint32_t)s->n % 64);       /* path */
}

static void gen_acktr(void) {
  buf s;
  int i;

  /* In order across the wrap, acknowledged every 4. */
  s.n = 0;
  b8(&s, 0);    /* window 64 */
  b8(&s, 0xF0); /* first number 0xFFFFFFF0 */
  for (i = 0; i < 40; ++i) {
    at_rec(&s, T_AHEAD, 0, 0);
    if (i % 4 == 3) {
      b8(&s, T_TIME);
      b16(&s, 3000);
      b8(&s, T_BUILD);
    }
  }
  write_seed("fuzz_acktr", "in-order-wrap", s.b, s.n);

  /* Gaps, then the holes filled out of order, duplicates. */
  s.n = 0;
  b8(&s, 1); /* window 128 */
  b8(&s, 0x80);
  for (i = 0; i < 20; ++i) {
    at_rec(&s, T_AHEAD, (uint32_t)(i % 3), 0);
  }
  b8(&s, T_BUILD);
  for (i = 0; i < 20; ++i) {
    at_rec(&s, T_NEAR, (uint32_t)(uint8_t)(-(i % 7) - 1), 0);
  }
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "gaps-reorder-dup", s.b, s.n);

  /* More than 32 ranges: every other number. */
  s.n = 0;
  b8(&s, 2); /* window 256 */
  b8(&s, 0x10);
  for (i = 0; i < 80; ++i) {
    at_rec(&s, T_AHEAD, 1, 0);
  }
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "many-ranges", s.b, s.n);

  /* Jumps: to the window's edge, past it, by half the space. */
  s.n = 0;
  b8(&s, 0);
  b8(&s, 0x00);
  at_rec(&s, T_AHEAD, 0, 0);
  at_rec(&s, T_EDGE, 0, 0);
  at_rec(&s, T_EDGE, 1, 0);
  at_rec(&s, T_EDGE, 2, 0);
  at_rec(&s, T_ANY, 70, 1);
  b8(&s, T_BUILD);
  b8(&s, T_BASE);
  b8(&s, 2);
  b8(&s, 1);
  at_rec(&s, T_NEAR, 0, 0);
  b8(&s, T_CHECK);
  b16(&s, 0);
  at_rec(&s, T_ANY, 0x7FFFFFFFu, 1);
  at_rec(&s, T_ANY, 0x80000001u, 1);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "jumps", s.b, s.n);

  /* More than 16 echoes and 8 NACKs before an ACK; a reset. */
  s.n = 0;
  b8(&s, 3);
  b8(&s, 0x20);
  for (i = 0; i < 20; ++i) {
    at_rec(&s, T_AHEAD, 0, 0);
    b8(&s, T_NACK);
    b8(&s, (uint32_t)i);
    b32(&s, 0xFFFFFF00u + (uint32_t)i);
    b8(&s, (uint32_t)i);
    b8(&s, T_TIME);
    b16(&s, 0x8001);
  }
  b8(&s, T_BUILD);
  b8(&s, T_RESET);
  b8(&s, 0);
  at_rec(&s, T_NEAR, 5, 0);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "echo-nack-reset", s.b, s.n);

  /* The largest window, a long run. */
  s.n = 0;
  b8(&s, 6); /* window 4096 */
  b8(&s, 0xFF);
  for (i = 0; i < 300; ++i) {
    at_rec(&s, T_AHEAD, 0, 0);
  }
  at_rec(&s, T_AHEAD, 200, 0);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "long-run", s.b, s.n);

  /* The largest window filled by runs, with holes; ACKs with few ranges
     (as on data packets) and whole ones; the window slid past. */
  s.n = 0;
  b8(&s, 227); /* window 65536 */
  b8(&s, 0x00);
  for (i = 0; i < 4; ++i) {
    b8(&s, T_RUN);
    b16(&s, 16000);
    b8(&s, (uint32_t)i);
    b8(&s, T_BASE);
    b8(&s, 0);
    b16(&s, 7);
  }
  b8(&s, T_BUILD_MAX);
  b8(&s, 4);
  b8(&s, T_BUILD);
  b8(&s, T_RUN);
  b16(&s, 65535);
  b8(&s, 9);
  b8(&s, T_BUILD_MAX);
  b8(&s, 0);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "big-window-runs", s.b, s.n);

  /* Every ACK frequency: few packets, ACKs that ride on data (few
     ranges, few echoes), the delayed-ACK clock. */
  for (i = 0; i < 4; ++i) {
    char name[32];
    int j;
    s.n = 0;
    b8(&s, (uint32_t)(i << 3) | 1u); /* window 128 */
    b8(&s, 0xFE);
    for (j = 0; j < 12; ++j) {
      at_rec(&s, T_AHEAD, (uint32_t)(j % 3), 0);
      b8(&s, T_TIME);
      b16(&s, (uint32_t)(1000 + j * 700));
      if (j % 3 == 2) {
        b8(&s, T_BUILD_MAX);
        b8(&s, (uint32_t)(j % 5));
      }
    }
    snprintf(name, sizeof(name), "ack-freq-%d", i);
    write_seed("fuzz_acktr", name, s.b, s.n);
  }

  /* Failed allocations, then the tracker starts again. */
  s.n = 0;
  b8(&s, 4);
  b8(&s, 0x40);
  at_rec(&s, T_AHEAD, 0, 0);
  b8(&s, T_RESET);
  b8(&s, 1);
  at_rec(&s, T_AHEAD, 3, 0);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "nomem-restart", s.b, s.n);

  /* More NACKs than the queue holds (a window's worth), then ACKs until
     it is empty. */
  s.n = 0;
  b8(&s, 0); /* window 64 */
  b8(&s, 0x10);
  at_rec(&s, T_AHEAD, 0, 0);
  for (i = 0; i < 70; ++i) {
    b8(&s, T_NACK);
    b8(&s, (uint32_t)i);
    b32(&s, (uint32_t)i);
    b8(&s, (uint32_t)i);
  }
  for (i = 0; i < 10; ++i) {
    b8(&s, T_BUILD);
  }
  write_seed("fuzz_acktr", "nack-overflow", s.b, s.n);

  /* The delayed ACK falls due exactly at its deadline (5 us after the
     first unacknowledged packet), not a nanosecond before. */
  s.n = 0;
  b8(&s, 0);
  b8(&s, 0x30);
  at_rec(&s, T_AHEAD, 0, 0);
  b8(&s, T_TIME);
  b16(&s, 2000);
  at_rec(&s, T_AHEAD, 0, 0);
  b8(&s, T_TIME);
  b16(&s, 2999);
  b8(&s, T_TIME);
  b16(&s, 1);
  b8(&s, T_BUILD);
  write_seed("fuzz_acktr", "ack-deadline", s.b, s.n);
}

/* ------------------------------------------------------------------------ */
/* fuzz_wire                                                                */

/* Record ops (test/fuzz/fuzz_wire.c); flag 1 picks B. */
enum {
  W_SEND = 0,
  W_RECV = 1,
  W_WRITE = 2,
  W_DELIVER = 3,
  W_DROP = 4,
  W_MOVE = 5,
  W_TIME = 6,
  W_EXPIRY = 7,
  W_MUTATE = 8,
  W_REPLAY = 9,
  W_CYCLE = 10,
  W_PUMP = 11,
  W_POLL = 12,
  W_RESTART = 13,
  W_FLUSH = 14,
  W_STATS = 15
};

/* Mutation kinds. */
enum {
  M_FLIP = 0,
  M_BYTE = 1,
  M_U16 = 2,
  M_U32 = 3,
  M_ADD = 4,
  M_TRUNC = 5,
  M_EXTEND = 6,
  M_INTERESTING = 7
};

/* Offsets in a DATA datagram, from the header layout (srd_pkt.h). */
#define OFF_SRC_CONN 4
#define OFF_DST_CONN 8
#define OFF_SEQ (SRD_PKT_COMMON_LEN + 0)
#define OFF_MSG_ID (SRD_PKT_COMMON_LEN + 4)
#define OFF_FLOOR (SRD_PKT_COMMON_LEN + 8)
#define OFF_MSG_LEN (SRD_PKT_COMMON_LEN + 12)
#define OFF_OFFSET (SRD_PKT_COMMON_LEN + 16)

static void w_send(buf *s, int x, uint32_t len) {
  b8(s, F(W_SEND, x));
  b16(s, len);
}

static void w_recv(buf *s, int x, uint32_t cap) {
  b8(s, F(W_RECV, x));
  b16(s, cap);
}

static void w_write(buf *s, int x, uint32_t n) {
  b8(s, F(W_WRITE, x));
  b8(s, n);
}

static void w_deliver(buf *s, uint32_t idx) {
  b8(s, W_DELIVER);
  b8(s, idx);
}

static void w_pump(buf *s, uint32_t rounds) {
  b8(s, W_PUMP);
  b8(s, rounds - 1);
}

static void w_time(buf *s, uint32_t unit, uint32_t d) {
  b8(s, F(W_TIME, unit));
  b16(s, d);
}

static void w_poll(buf *s, int x) {
  b8(s, F(W_POLL, x));
  b8(s, 16);
}

/* w_mutate edits queued datagram |idx| once; |seal| re-seals it. */
static void w_mutate(buf *s, uint32_t idx, int seal, uint32_t kind,
                     uint32_t off, uint32_t val) {
  b8(s, F(W_MUTATE, seal ? 2 : 0));
  b8(s, idx);
  b8(s, 1);
  b8(s, kind);
  b16(s, off);
  b32(s, val);
}

/* w_established: a handshake and a message each way, delivered. */
static void w_established(buf *s) {
  w_recv(s, 1, 4096);
  w_send(s, 0, 100);
  w_recv(s, 0, 4096);
  w_send(s, 1, 50);
  w_pump(s, 16);
  w_poll(s, 0);
  w_poll(s, 1);
}

static void wire_seed(const char *name, const buf *s) {
  write_seed("fuzz_wire", name, s->b, s->n);
}

static void gen_wire(void) {
  static const uint8_t cfgs[][2] = {{0x00, 0x00}, {0x01, 0x00}, {0x0C, 0x01},
                                    {0x92, 0x12}, {0x21, 0x4A}, {0x44, 0x20},
                                    {0x83, 0x06}, {0x08, 0x38}};
  char name[64];
  buf s;
  unsigned i, j;

  /* Traffic both ways on a lossless wire, in every flavour. */
  for (i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); ++i) {
    s.n = 0;
    b8(&s, cfgs[i][0]);
    b8(&s, cfgs[i][1]);
    w_established(&s);
    w_recv(&s, 1, 8192);
    w_send(&s, 0, 8192);
    w_send(&s, 0, 3);
    w_recv(&s, 1, 8192);
    w_pump(&s, 16);
    w_pump(&s, 16);
    b8(&s, F(W_STATS, 0));
    b8(&s, F(W_STATS, 1));
    snprintf(name, sizeof(name), "lossless-cfg%02x%02x", cfgs[i][0],
             cfgs[i][1]);
    wire_seed(name, &s);
  }

  /* Reordered, duplicated, split: three fragments, delivered from the
     back, each one twice. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, 0x00);
  w_established(&s);
  w_recv(&s, 1, 4096);
  w_send(&s, 0, 3000);
  w_write(&s, 0, 8);
  for (i = 0; i < 3; ++i) {
    b8(&s, F(W_DELIVER, 4)); /* keep it: a duplicate */
    b8(&s, 2 - i);
    b8(&s, F(W_DELIVER, 2)); /* split */
    b8(&s, 2 - i);
    b16(&s, 30 + i * 20);
  }
  w_write(&s, 1, 8);
  w_deliver(&s, 0);
  w_pump(&s, 8);
  wire_seed("reorder-dup-split", &s);

  /* Losses: everything A writes is dropped for a while, then moved
     around and delayed. */
  s.n = 0;
  b8(&s, 0x04);
  b8(&s, 0x00);
  w_established(&s);
  w_recv(&s, 1, 8192);
  w_send(&s, 0, 5000);
  for (i = 0; i < 6; ++i) {
    w_write(&s, 0, 8);
    for (j = 0; j < 3; ++j) {
      b8(&s, W_DROP);
      b8(&s, 0);
    }
    b8(&s, W_MOVE);
    b8(&s, 0);
    w_time(&s, 2, 3);
    b8(&s, W_EXPIRY);
  }
  w_pump(&s, 16);
  wire_seed("loss-delay", &s);

  /* The peer never answers: retries run out (unreachable, then
     unresponsive), a ghost peer too. */
  s.n = 0;
  b8(&s, 0x40);
  b8(&s, 0x08);
  b8(&s, F(W_SEND, 4)); /* to the ghost */
  b16(&s, 10);
  w_send(&s, 0, 10);
  for (i = 0; i < 12; ++i) {
    w_write(&s, 0, 8);
    b8(&s, F(W_DROP, 0));
    b8(&s, 0);
    b8(&s, W_EXPIRY);
  }
  w_poll(&s, 0);
  w_established(&s);
  w_send(&s, 0, 2000);
  for (i = 0; i < 12; ++i) {
    w_write(&s, 0, 8);
    b8(&s, W_DROP);
    b8(&s, 0);
    b8(&s, W_DROP);
    b8(&s, 0);
    b8(&s, W_EXPIRY);
  }
  w_poll(&s, 0);
  wire_seed("unreachable-unresponsive", &s);

  /* Corruption and forgery of DATA fields: plain (dropped by the CRC
     checks) and re-sealed. */
  {
    static const uint32_t offs[] = {OFF_SEQ,     OFF_MSG_ID, OFF_FLOOR,
                                    OFF_MSG_LEN, OFF_OFFSET, 1};
    for (i = 0; i < 2 * sizeof(offs) / sizeof(offs[0]); ++i) {
      s.n = 0;
      b8(&s, i & 1 ? 0x01 : 0x00);
      b8(&s, 0x00);
      w_established(&s);
      w_recv(&s, 1, 4096);
      w_send(&s, 0, 2000);
      w_write(&s, 0, 8);
      w_mutate(&s, 0, i >= 6, M_ADD, offs[i % 6], i & 1 ? 1 : 0xFF);
      w_mutate(&s, 1, i >= 6, M_FLIP, 200, i);
      w_deliver(&s, 0);
      w_deliver(&s, 0);
      w_pump(&s, 16);
      snprintf(name, sizeof(name), "%s-%u", i >= 6 ? "forge" : "corrupt",
               i % 6);
      wire_seed(name, &s);
    }
  }

  /* Forged handshake and acknowledgements: B's answers, re-sealed with
     other incarnation ids, cut short, extended. */
  for (i = 0; i < 4; ++i) {
    s.n = 0;
    b8(&s, 0x00);
    b8(&s, 0x00);
    w_send(&s, 0, 300);
    w_write(&s, 0, 4);
    w_deliver(&s, 0);
    w_write(&s, 1, 4);
    w_mutate(&s, 0, 1, i < 2 ? M_INTERESTING : (i == 2 ? M_TRUNC : M_EXTEND),
             i == 0 ? OFF_SRC_CONN : OFF_DST_CONN, i == 0 ? 5 : 4);
    w_deliver(&s, 0);
    w_pump(&s, 16);
    w_recv(&s, 1, 4096);
    w_pump(&s, 16);
    snprintf(name, sizeof(name), "forge-answer-%u", i);
    wire_seed(name, &s);
  }

  /* Replays of old datagrams, before and after A restarts. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, 0x00);
  w_established(&s);
  for (i = 0; i < 6; ++i) {
    b8(&s, F(W_REPLAY, i & 1));
    b8(&s, i);
  }
  w_pump(&s, 4);
  w_recv(&s, 1, 4096);
  w_send(&s, 0, 1500);
  w_write(&s, 0, 8);
  b8(&s, F(W_RESTART, 0));
  for (i = 0; i < 6; ++i) {
    b8(&s, W_REPLAY);
    b8(&s, 60 - i);
  }
  w_send(&s, 0, 700);
  w_pump(&s, 16);
  w_deliver(&s, 0);
  w_pump(&s, 16);
  wire_seed("replay-restart", &s);

  /* B restarts with messages in flight both ways. */
  s.n = 0;
  b8(&s, 0x02);
  b8(&s, 0x00);
  w_established(&s);
  w_send(&s, 0, 3000);
  w_send(&s, 1, 3000);
  w_recv(&s, 0, 4096);
  w_write(&s, 0, 2);
  w_write(&s, 1, 2);
  w_deliver(&s, 0);
  b8(&s, F(W_RESTART, 1));
  w_pump(&s, 16);
  w_time(&s, 3, 2);
  w_recv(&s, 1, 4096);
  w_send(&s, 0, 30);
  w_pump(&s, 16);
  wire_seed("restart-b", &s);

  /* Peers removed and added again, on both sides, mid-message. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, 0x00);
  w_established(&s);
  w_recv(&s, 1, 8192);
  w_send(&s, 0, 6000);
  w_write(&s, 0, 3);
  w_deliver(&s, 0);
  b8(&s, F(W_CYCLE, 1));
  w_deliver(&s, 0);
  w_pump(&s, 16);
  w_send(&s, 0, 6000);
  w_write(&s, 0, 2);
  b8(&s, F(W_CYCLE, 0));
  w_pump(&s, 16);
  w_recv(&s, 1, 8192);
  w_send(&s, 0, 40);
  w_pump(&s, 16);
  wire_seed("peer-cycle", &s);

  /* An ordered receiver that posts late, with no room for unexpected
     messages and a message window of 1: RNR, then the receives. */
  for (i = 0; i < 2; ++i) {
    s.n = 0;
    b8(&s, i ? 0x01 : 0x21);
    b8(&s, 0x30);
    for (j = 0; j < 5; ++j) {
      w_send(&s, 0, 100 + j * 700);
    }
    w_pump(&s, 16);
    w_time(&s, 2, 5);
    for (j = 0; j < 5; ++j) {
      w_recv(&s, 1, 4096);
    }
    w_pump(&s, 16);
    snprintf(name, sizeof(name), "ordered-late-recv-%u", i);
    wire_seed(name, &s);
  }

  /* Flushes, truncation (a small receive), a too-long send. */
  s.n = 0;
  b8(&s, 0x10);
  b8(&s, 0x00);
  w_established(&s);
  w_recv(&s, 1, 10);
  w_send(&s, 0, 500);
  w_send(&s, 0, 9000);
  w_pump(&s, 16);
  w_send(&s, 0, 800);
  w_write(&s, 0, 1);
  b8(&s, F(W_FLUSH, 0));
  w_recv(&s, 1, 1000);
  b8(&s, F(W_FLUSH, 1));
  w_pump(&s, 16);
  wire_seed("flush-truncate", &s);

  /* Buffers too small for the next datagram, headers too small for a
     piggybacked acknowledgement; a message longer than B takes. */
  s.n = 0;
  b8(&s, 0x00);
  b8(&s, 0x80);
  w_established(&s);
  w_recv(&s, 1, 8192);
  w_recv(&s, 0, 8192);
  w_send(&s, 0, 3000);
  w_send(&s, 1, 3000);
  w_send(&s, 0, 6000); /* more than B's 4096 */
  for (i = 0; i < 6; ++i) {
    b8(&s, F(W_WRITE, (i & 1) | 4 | (i & 2)));
    b8(&s, 4);
    b8(&s, i * 40);
    w_deliver(&s, 0);
  }
  w_pump(&s, 16);
  wire_seed("small-buffers", &s);

  /* The API misused, statistics; restarts after failed allocations. */
  s.n = 0;
  b8(&s, 0x40);
  b8(&s, 0x00);
  w_established(&s);
  b8(&s, F(W_STATS, 2));
  b8(&s, F(W_STATS, 3));
  for (i = 0; i < 4; ++i) {
    b8(&s, F(W_RESTART, (i & 1) | 2));
    b8(&s, i * 7 + 1);
    w_send(&s, i & 1, 100);
    w_recv(&s, 1 - (i & 1), 100);
    w_pump(&s, 8);
  }
  wire_seed("misuse-nomem", &s);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUTDIR (test/fuzz/corpus)\n", argv[0]);
    return 1;
  }
  out_root = argv[1];
  mkdir_p(out_root);
  gen_pkt_encoded();
  gen_pkt_real();
  gen_ep();
  gen_acktr();
  gen_wire();
  printf("gen_corpus: wrote %u seeds under %s\n", n_written, out_root);
  return 0;
}
