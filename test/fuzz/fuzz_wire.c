/*
 * fuzz_wire.c: libFuzzer target for two endpoints, A and B, joined by a
 * wire that the input drives, and for the guarantees the engine makes to
 * its users whatever the wire does.
 *
 * Nothing is set up in advance: the input posts sends and receives, lets
 * the endpoints write datagrams into the wire's queue (both directions),
 * and then delivers, drops, duplicates, reorders and delays them, mutates
 * their bytes, replays old ones, advances the virtual clock, removes and
 * re-adds a peer, restarts an endpoint.  Every datagram an endpoint writes
 * is also kept in a history, so that it can be replayed later.
 *
 * Input: two configuration bytes, then at most MAX_RECORDS records, each
 * an op byte (low 4 bits: the op, high 4 bits: flags f) and the op's
 * arguments; a record cut short reads zeros.  Configuration:
 *   byte 0  bit 0 B delivers A's messages in order, bit 1 A B's; bits 2-3
 *           1/2/8/64 paths; bit 4 the "fixed" congestion controller; bit 5
 *           B buffers no unexpected message; bit 6 A has a ghost peer (an
 *           address nobody answers); bit 7 an MTU of 256 at A (else 1024)
 *   byte 1  bit 0 no path steering; bit 1 an MTU of 512 at B; bit 2 B does
 *           not check payload CRCs; bit 3 two retries, not four;
 *           bits 4-5 a message window of 64, 8, 2 or 1; bit 6 a packet
 *           window of 16 (else 64); bit 7 B's largest message is half
 *           A's (A's longer sends fail when they start)
 * Records (X is A if f & 1 is clear, else B):
 *   0  X posts a send of len:u8 (f & 2) or len:u16; with f & 4, A sends
 *      to its ghost peer
 *   1  X posts a receive of cap:u8 (f & 2) or cap:u16
 *   2  X writes what is due into the wire, at most n:u8 datagrams (f & 2:
 *      with srd_ep_write_pktv; f & 4: into a buffer of only 64 + c:u8
 *      bytes, the header's with f & 2, so that a datagram may not fit
 *      or an acknowledgement not ride on data)
 *   3  deliver queued datagram idx:u8 (f & 2: in two pieces, split:u16;
 *      f & 4: and keep it queued, a duplicate to come)
 *   4  drop queued datagram idx:u8
 *   5  move queued datagram idx:u8 to the back of the queue
 *   6  advance the clock by d:u16 units (f & 3: 1 ns, 1 us, 100 us,
 *      10 ms) and run both endpoints' timers
 *   7  jump to the next expiry (f & 2: A's, f & 4: B's, else the sooner)
 *      and run the timers
 *   8  mutate queued datagram idx:u8 with n:u8 (at most 8) edits of
 *      kind:u8 off:u16 val:u32 each: flip a bit, set a byte, a u16 or a
 *      u32, add to a u32, truncate, extend, set a u32 to an interesting
 *      value (0, ~0, 2^31, A's or B's incarnation id...); f & 2: then
 *      re-seal it (a forgery: valid CRCs over the new bytes)
 *   9  replay datagram idx:u8 of X's history: a copy joins the queue
 *   10 X removes its peer (the other endpoint) and adds it again
 *   11 run the wire losslessly for rounds:u8 (at most 16) rounds: both
 *      write, the whole queue is delivered in order, timers run when idle
 *   12 poll X's completion queue, n:u8 (at most 16)
 *   13 X restarts (flushed, deleted, created again with a new seed: a new
 *      incarnation; at most MAX_RESTARTS times per endpoint); f & 2:
 *      after a try with an allocator whose n:u8 % 32 + 1th allocation
 *      fails, which must fail with SRD_ERR_NOMEM and leave nothing)
 *   14 X flushes
 *   15 read X's statistics and check them; f & 2: and call X the wrong
 *      ways (NULL buffers, unknown peers: each refused)
 * Virtual time is bounded by TIME_LIMIT (and the healing at the end by
 * SETTLE_TIME more), the work of each op by the
 * datagrams it may move; the queue holds QCAP datagrams (a write into a
 * full queue is a loss).
 *
 * Messages: one of TAG_LEN bytes or more starts with a tag (magic, sender,
 * message index k, length, a checksum of the whole message); the rest is a
 * pattern of (sender, k).  A shorter one is a pattern of (sender, length).
 *
 * A datagram on the wire is genuine (as an endpoint wrote it, possibly
 * duplicated, delayed or replayed), corrupt (mutated, and its CRCs no
 * longer match) or forged (mutated and re-sealed: CRCs that match the new
 * bytes, see fuzz_seal.h).  Checks (abort() on failure), against anything:
 *   - every posted operation completes exactly once, at the endpoint and
 *     incarnation that posted it, with its own buffer, length and peer; no
 *     completion names an unknown user_ctx; after srd_ep_flush() at the
 *     end every one has completed; a send that succeeded has
 *     SRD_CQE_F_STARTED; srd_ep_poll_cq never returns more than asked nor
 *     writes past it;
 *   - a successful receive fits its buffer and comes from the peer (or
 *     from no peer, UINT32_MAX, after a removal); a TRUNCATED one had a
 *     buffer smaller than the message;
 *   - a delivered message whose id never appeared in a forged DATA
 *     datagram to that endpoint is intact: a valid tag of a message the
 *     other endpoint sent (not to the ghost), with every byte as sent; and
 *     is never one whose send failed without SRD_CQE_F_STARTED;
 *   - a datagram with a corrupt header is refused (SRD_ERR_PROTO); one
 *     with a corrupt payload is never delivered (the check above), so
 *     plain corruption is held to everything here;
 *   - srd_ep_read_pkt returns 0, SRD_ERR_PROTO or SRD_ERR_STALE; every
 *     datagram written fits srd_ep_max_pkt_size, decodes, carries the
 *     writer's incarnation id for that peer and goes to a peer of the
 *     writer on one of its paths; statistics count every datagram read;
 *   - no crash, no sanitizer report, no leak, bounded work.
 * Until a forged datagram is delivered, also:
 *   - no message is delivered twice (for short messages: no more
 *     deliveries of a length than sends of it);
 *   - an ordered receiver delivers in send order (until the first restart
 *     or peer removal);
 *   - at the end, after the wire heals (the non-genuine datagrams are
 *     dropped, receives posted, the wire run losslessly for up to
 *     SETTLE_TIME): every send that succeeded was delivered or taken by a
 *     receive too small for it (an unexpected message is acknowledged
 *     before a receive takes it), unless its receiver flushed or
 *     restarted (which discards acknowledged messages waiting for a
 *     buffer; a peer's removal keeps them, and they come with peer
 *     UINT32_MAX); the sends of a session that ended (its sender
 *     restarted or removed its peer) only once the endpoints have talked
 *     again: an ordered receiver holds what came after a gap until it sees
 *     that session end.  (WIRE_OPEN_*, below, bring back the workarounds
 *     of two engine bugs this target found, fixed since.)
 * A forger that knows the incarnation ids can acknowledge data never
 * delivered, move message floors past 2^31 and back, and so have replays
 * taken again: it can break at-most-once and success-means-delivered, not
 * the bookkeeping above nor the bytes of messages it did not touch.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <srd/srd.h>

#include "fuzz_input.h"
#include "fuzz_seal.h"
#include "srd_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* Build with -DWIRE_TRACE to see what a run does (on stderr). */
#ifdef WIRE_TRACE
#  include <stdio.h>
#  define TRACE(...) fprintf(stderr, __VA_ARGS__)
#else
#  define TRACE(...) ((void)0)
#endif

/* WIRE_OPEN_HELD_AFTER_RESET: an engine bug this target found, fixed
   (srd_ep_drain_unexp); 1 brings back the workaround.  A message an
   ordered receiver holds for its turn, complete and acknowledged, is
   freed of ordering when the session ends (its sender restarts, or
   removes and adds this peer again), but it is handed only to a receive
   posted after that, not to those already waiting; with all of them
   posted before, it waits until the application posts another one.  The
   sender was told it was delivered.  While this is 1 the healed wire ends
   with receives posted one at a time at each endpoint (each takes one such
   message), so that the check of success-means-delivered tests the rest;
   set it to 0 once fixed
   (corpus/fuzz_wire/known-held-after-reset fails without the fix). */
#ifndef WIRE_OPEN_HELD_AFTER_RESET
#  define WIRE_OPEN_HELD_AFTER_RESET 0
#endif

/* WIRE_OPEN_STALE_FLOOR: another, fixed (the floor is told again once it
   passes an abandoned message).  When a sender gives up on a message
   (RNR past its budget, say) while an older one is still in flight, the
   SYNC it sends names the older one as its floor; when the older one
   completes, the floor moves past the given-up one, but nothing tells the
   receiver until the next data packet.  An ordered receiver waits for the
   given-up message for ever, holding the acknowledged ones behind it.
   While this is 1 the healed wire ends with a one-byte message each way,
   whose data packets carry the floor; set it to 0 once fixed
   (corpus/fuzz_wire/known-stale-floor fails without the fix). */
#ifndef WIRE_OPEN_STALE_FLOOR
#  define WIRE_OPEN_STALE_FLOOR 0
#endif

#define MAX_RECORDS 512
#define MAX_OPS 768    /* posted operations per run */
#define MAX_FORGED 512 /* forged message ids remembered per receiver */
#define QCAP 128       /* datagrams on the wire */
#define HIST_N 64      /* datagrams kept per writer for replays */
#define PKT_CAP 2048   /* > srd_ep_max_pkt_size of both endpoints */
#define DRAIN_MAX 64   /* datagrams one write op takes */
#define MAX_MSG 8192   /* both endpoints' max_msg_size */
#define TIME_LIMIT (60 * SRD_S)
/* The healed wire's time, past the input's: timeouts follow the RTT the
   input made (a datagram it held for seconds is an RTT of seconds, and
   rto_max caps only the backoff), so that they may take minutes to run
   out. */
#define SETTLE_TIME (3600 * SRD_S)
#define STEP (1 * SRD_US) /* the lossless wire's delay per round */
#define MAX_RESTARTS 4    /* per endpoint and run */
#define MAX_CYCLES 8      /* peer removals per endpoint and run */
#define MAX_EDITS 8
#define TAG_LEN 20
#define MSG_MAGIC 0x57495245u /* "WIRE" */
#define SETTLE_ROUNDS 8

#define EP_A 0
#define EP_B 1
#define NO_PEER UINT32_MAX

/* Kinds of posted operations. */
#define K_SEND 1
#define K_RECV 2

/* Kinds of datagrams on the wire. */
#define D_GENUINE 0
#define D_CORRUPT 1
#define D_FORGED 2

typedef struct posted {
  uint8_t kind;
  uint8_t ep;    /* who posted it */
  uint8_t done;  /* its completion was polled */
  uint8_t inc;   /* the poster's incarnation */
  uint8_t epoch; /* the poster's sessions ended so far (world.epoch) */
  srd_peer_id peer;
  uint32_t k; /* sends: the message index */
  uint8_t *buf;
  size_t len; /* send length or receive capacity */
} posted;

typedef struct dgram {
  uint8_t from;
  uint8_t kind;
  uint16_t path;
  uint32_t len;
  uint8_t b[PKT_CAP];
} dgram;

typedef struct world {
  srd_ep *ep[2];
  srd_peer_id peer[2]; /* ep[i]'s id for the other endpoint */
  srd_peer_id ghost;   /* A's peer nobody answers, or NO_PEER */
  uint32_t conn[2]; /* ep[i]'s incarnation id for its session with the other */
  uint8_t inc[2];   /* restarts so far */
  uint8_t epoch[2]; /* sessions ended so far: restarts and peer removals */
  uint8_t cycles[2];
  uint32_t n_paths;
  int has_ghost;
  srd_tstamp now;
  srd_tstamp limit; /* the clock stops here */
  srd_settings settings[2];
  srd_peer_settings ps[2];

  posted ops[MAX_OPS];
  uint32_t n_ops;
  /* Messages each endpoint sent, by index k (unique over the run). */
  uint32_t msg_len[2][MAX_OPS];
  uint8_t msg_ghost[2][MAX_OPS];
  uint8_t msg_delivered[2][MAX_OPS];
  uint8_t msg_unsent[2][MAX_OPS]; /* failed without SRD_CQE_F_STARTED */
  uint8_t msg_ok[2][MAX_OPS];     /* its send succeeded */
  uint32_t n_msgs[2];
  /* Messages shorter than the tag, by length. */
  uint32_t short_sent[2][TAG_LEN];
  uint32_t short_ok[2][TAG_LEN];
  uint32_t short_delivered[2][TAG_LEN];
  /* The lengths of the messages each endpoint received into buffers too
     small (TRUNCATED): acknowledged, so their sends may have succeeded
     (an unexpected message is acknowledged before a receive takes it). */
  uint32_t trunc_len[2][MAX_OPS];
  uint8_t trunc_used[2][MAX_OPS];
  uint32_t n_trunc[2];
  /* Message ids each endpoint received in forged DATA datagrams. */
  uint32_t forged[2][MAX_FORGED];
  uint32_t n_forged[2];
  int forged_all[2];
  /* tainted: a forged datagram was delivered, so at-most-once no longer
     holds.  discarded[i]: endpoint i flushed or restarted (and
     dropped what waited for a buffer).  reset: a session ended. */
  int tainted;
  int discarded[2];
  int reset;
  int64_t last_k[2]; /* the last message delivered to an ordered receiver */
  uint64_t reads[2]; /* datagrams given to each incarnation */

  /* The wire: slots, and the queue's order. */
  uint8_t qord[QCAP];
  uint32_t qn;
  uint8_t qfree[QCAP];
  uint32_t n_free;
  uint32_t hist_n[2], hist_next[2];
  dgram q[QCAP];
  dgram hist[2][HIST_N];
  uint8_t pkt[PKT_CAP];
} world;

static world W;

static void put16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void advance_to(srd_tstamp t) {
  if (t > W.limit) {
    t = W.limit;
  }
  if (t > W.now) {
    W.now = t;
  }
}

/* ------------------------------------------------------------------------ */
/* Sealing                                                                  */

/* wire_sealed says whether datagram |p| passes the integrity checks of
   endpoint |to|: its header CRC matches, and its payload CRC too if it
   has one and |to| checks them. */
static int wire_sealed(const uint8_t *p, size_t len, int to) {
  static uint8_t copy[PKT_CAP];

  memcpy(copy, p, len);
  return fuzz_reseal(copy, len, W.settings[to].payload_crc) &&
         memcmp(copy, p, len) == 0;
}

/* header_sealed says whether the header CRC of datagram |p| matches. */
static int header_sealed(const uint8_t *p, size_t len) {
  static uint8_t copy[PKT_CAP];

  memcpy(copy, p, len);
  return fuzz_reseal(copy, len, 0) && memcmp(copy, p, len) == 0;
}

/* ------------------------------------------------------------------------ */
/* Message contents                                                         */

static uint8_t pat(uint32_t from, uint32_t k, uint32_t i) {
  uint32_t x = k * 0x9E3779B1u ^ (i + 1) * 0x85EBCA6Bu ^ from * 0xC2B2AE35u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return (uint8_t)(x >> 24);
}

static uint32_t fnv1a(uint32_t h, const uint8_t *p, size_t n) {
  size_t i;

  for (i = 0; i < n; ++i) {
    h = (h ^ p[i]) * 16777619u;
  }
  return h;
}

/* msg_fill writes message |k| of |len| bytes from endpoint |from| into
   |b|. */
static void msg_fill(uint8_t *b, int from, uint32_t k, uint32_t len) {
  uint32_t i, h;

  if (len < TAG_LEN) {
    for (i = 0; i < len; ++i) {
      b[i] = pat((uint32_t)from + 2, len, i);
    }
    return;
  }
  put32(b, MSG_MAGIC);
  put32(b + 4, (uint32_t)from);
  put32(b + 8, k);
  put32(b + 12, len);
  for (i = TAG_LEN; i < len; ++i) {
    b[i] = pat((uint32_t)from, k, i);
  }
  h = fnv1a(2166136261u, b, 16);
  h = fnv1a(h, b + TAG_LEN, len - TAG_LEN);
  put32(b + 16, h);
}

static int is_forged(int to, uint32_t msg_id) {
  uint32_t i;

  if (W.forged_all[to]) {
    return 1;
  }
  for (i = 0; i < W.n_forged[to]; ++i) {
    if (W.forged[to][i] == msg_id) {
      return 1;
    }
  }
  return 0;
}

/* verify_msg checks a message that endpoint |to| received successfully
   into a buffer of |cap| bytes. */
static void verify_msg(int to, const srd_cqe *e, size_t cap) {
  static uint8_t want[MAX_MSG];
  int from = 1 - to;
  const uint8_t *b = e->buf;
  uint32_t len = (uint32_t)e->len, k;

  if (is_forged(to, e->msg_id)) {
    return; /* the forger's bytes */
  }
  /* (Past the message the buffer may hold anything: the engine checks a
     payload's CRC as it copies it into place, so the bytes of a refused
     datagram may stay where they went.) */
  (void)cap;
  if (len < TAG_LEN) {
    CHECK(W.short_sent[from][len] > 0);
    msg_fill(want, from, 0, len);
    CHECK(memcmp(b, want, len) == 0);
    ++W.short_delivered[from][len];
    CHECK(W.tainted || W.short_delivered[from][len] <= W.short_sent[from][len]);
    return;
  }
  CHECK(get32(b) == MSG_MAGIC && get32(b + 4) == (uint32_t)from);
  k = get32(b + 8);
  CHECK(k < W.n_msgs[from]);
  CHECK(W.msg_len[from][k] == len && get32(b + 12) == len);
  CHECK(!W.msg_ghost[from][k]);
  msg_fill(want, from, k, len);
  CHECK(memcmp(b, want, len) == 0); /* the checksum too */
  /* Never one whose send ended before any packet of it left. */
  CHECK(!W.msg_unsent[from][k]);
  if (!W.tainted) {
    /* At most once... */
    CHECK(W.msg_delivered[from][k] == 0);
    /* ...and in order, if asked, within a session. */
    if (W.ps[to].ordered && !W.reset) {
      CHECK((int64_t)k > W.last_k[to]);
    }
  }
  W.last_k[to] = k;
  if (W.msg_delivered[from][k] < 255) {
    ++W.msg_delivered[from][k];
  }
}

/* ------------------------------------------------------------------------ */
/* Posting and completions                                                  */

static posted *new_op(int ep, uint8_t kind, size_t len) {
  posted *op;

  if (W.n_ops == MAX_OPS) {
    return NULL;
  }
  op = &W.ops[W.n_ops];
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  op->ep = (uint8_t)ep;
  op->inc = W.inc[ep];
  op->epoch = W.epoch[ep];
  op->len = len;
  op->peer = NO_PEER;
  op->buf = malloc(len ? len : 1);
  CHECK(op->buf != NULL);
  return op;
}

static void forget_op(posted *op) {
  free(op->buf);
  op->buf = NULL;
}

static void post_send(int from, size_t len, int ghost) {
  uint32_t k = W.n_msgs[from];
  srd_peer_id to;
  posted *op;
  int rv;

  if (ghost && !W.has_ghost) {
    ghost = 0;
  }
  to = ghost ? W.ghost : W.peer[from];
  op = new_op(from, K_SEND, len);
  if (op == NULL) {
    return;
  }
  if (len <= MAX_MSG) {
    msg_fill(op->buf, from, k, (uint32_t)len);
  }
  rv = srd_ep_post_send(W.ep[from], to, op->buf, len,
                        (void *)(uintptr_t)(W.n_ops + 1), W.now);
  TRACE("%llu: %c posts send op %u len %zu k %u: %d\n",
        (unsigned long long)W.now, "AB"[from], (unsigned)W.n_ops, len,
        (unsigned)k, rv);
  if (rv != 0) {
    CHECK(rv == SRD_ERR_AGAIN ||
          (rv == SRD_ERR_MSG_TOO_LONG && len > W.settings[from].max_msg_size));
    forget_op(op);
    return;
  }
  CHECK(len <= W.settings[from].max_msg_size);
  op->peer = to;
  op->k = k;
  W.msg_len[from][k] = (uint32_t)len;
  W.msg_ghost[from][k] = (uint8_t)ghost;
  if (len < TAG_LEN && !ghost) {
    ++W.short_sent[from][len];
  }
  ++W.n_msgs[from];
  ++W.n_ops;
}

static void post_recv(int to, size_t cap) {
  posted *op = new_op(to, K_RECV, cap);
  int rv;

  if (op == NULL) {
    return;
  }
  memset(op->buf, 0xEE, cap ? cap : 1);
  rv = srd_ep_post_recv(W.ep[to], op->buf, cap,
                        (void *)(uintptr_t)(W.n_ops + 1), W.now);
  TRACE("%llu: %c posts recv op %u cap %zu: %d\n", (unsigned long long)W.now,
        "AB"[to], (unsigned)W.n_ops, cap, rv);
  if (rv != 0) {
    CHECK(rv == SRD_ERR_AGAIN);
    forget_op(op);
    return;
  }
  ++W.n_ops;
}

static void on_cqe(int ep, const srd_cqe *e) {
  uintptr_t id = (uintptr_t)e->user_ctx;
  posted *op;

  CHECK(id >= 1 && id <= W.n_ops);
  op = &W.ops[id - 1];
  TRACE("%llu: %c cqe op %u status %d len %zu flags %u msg_id %u peer %u\n",
        (unsigned long long)W.now, "AB"[ep], (unsigned)id - 1, e->status,
        e->len, (unsigned)e->flags, (unsigned)e->msg_id, (unsigned)e->peer);
  CHECK(op->ep == ep && op->inc == W.inc[ep] && !op->done);
  CHECK(e->buf == op->buf);
  CHECK(e->status == 0 ||
        (e->status <= SRD_ERR_INVALID_ARGUMENT && e->status >= SRD_ERR_STALE));
  if (op->kind == K_SEND) {
    CHECK(e->op == SRD_OP_SEND);
    CHECK(e->peer == op->peer);
    CHECK(e->len == op->len);
    CHECK(e->status != 0 || (e->flags & SRD_CQE_F_STARTED));
    if (e->status == 0) {
      W.msg_ok[ep][op->k] = 1;
      if (op->len < TAG_LEN && !W.msg_ghost[ep][op->k]) {
        ++W.short_ok[ep][op->len];
      }
    } else if (!(e->flags & SRD_CQE_F_STARTED)) {
      CHECK(op->len < TAG_LEN || !W.msg_delivered[ep][op->k]);
      W.msg_unsent[ep][op->k] = 1;
    }
  } else {
    CHECK(e->op == SRD_OP_RECV);
    if (e->status == 0) {
      /* A whole message waiting for a buffer when its peer was removed
         comes with no peer. */
      CHECK(e->peer == W.peer[ep] || (W.cycles[ep] && e->peer == NO_PEER));
      CHECK(e->len <= op->len);
      verify_msg(ep, e, op->len);
    } else if (e->status == SRD_ERR_TRUNCATED) {
      CHECK(e->len > op->len);
      CHECK(W.n_trunc[ep] < MAX_OPS);
      W.trunc_len[ep][W.n_trunc[ep]++] = (uint32_t)e->len;
    }
  }
  op->done = 1;
  free(op->buf);
  op->buf = NULL;
}

static size_t poll_cq(int ep, size_t n) {
  static srd_cqe canary[2];
  srd_cqe cqes[18];
  size_t k, i;

  CHECK(n <= 16);
  memset(canary, 0x5A, sizeof(canary));
  memset(cqes, 0x5A, sizeof(cqes));
  k = srd_ep_poll_cq(W.ep[ep], cqes, n);
  CHECK(k <= n);
  CHECK(memcmp(&cqes[n], canary, sizeof(canary)) == 0);
  for (i = 0; i < k; ++i) {
    on_cqe(ep, &cqes[i]);
  }
  return k;
}

static void poll_all(int ep) {
  while (poll_cq(ep, 16) == 16) {
  }
}

/* ------------------------------------------------------------------------ */
/* The wire                                                                 */

static void wire_init(void) {
  uint32_t i;

  W.qn = 0;
  W.n_free = QCAP;
  for (i = 0; i < QCAP; ++i) {
    W.qfree[i] = (uint8_t)(QCAP - 1 - i);
  }
}

/* wire_push queues a copy of |d|; a full queue loses it. */
static void wire_push(const dgram *d) {
  uint8_t slot;

  if (W.n_free == 0) {
    return;
  }
  slot = W.qfree[--W.n_free];
  W.q[slot].from = d->from;
  W.q[slot].kind = d->kind;
  W.q[slot].path = d->path;
  W.q[slot].len = d->len;
  memcpy(W.q[slot].b, d->b, d->len);
  W.qord[W.qn++] = slot;
}

/* wire_take removes the |i|th queued datagram and returns its slot (valid
   until the next push). */
static uint8_t wire_take(uint32_t i) {
  uint8_t slot = W.qord[i];

  memmove(W.qord + i, W.qord + i + 1, W.qn - i - 1);
  --W.qn;
  W.qfree[W.n_free++] = slot;
  return slot;
}

static void hist_add(int from, const dgram *d) {
  dgram *h = &W.hist[from][W.hist_next[from]];

  *h = *d;
  W.hist_next[from] = (W.hist_next[from] + 1) % HIST_N;
  if (W.hist_n[from] < HIST_N) {
    ++W.hist_n[from];
  }
}

/* feed gives datagram |d| to the other endpoint, in two pieces split at
   |split| - 1 if |split| > 0.  Each piece is copied to an allocation of
   its exact size, so that a read past the datagram is a read past an
   allocation. */
static void feed(const dgram *d, uint32_t split) {
  int to = 1 - d->from;
  srd_path p = {W.peer[to], d->path};
  uint8_t *hdr, *pay = NULL;
  size_t len = d->len, hlen = len;
  int kind = d->kind, rv;

  if (kind == D_CORRUPT && wire_sealed(d->b, len, to)) {
    kind = D_FORGED;
  }
  if (kind == D_FORGED) {
    srd_pkt pkt;
    srd_drop_reason why;
    W.tainted = 1;
    if (srd_pkt_decode(&pkt, d->b, len, len, &why) == 0 &&
        pkt.c.type == SRD_PKT_DATA) {
      if (W.n_forged[to] < MAX_FORGED) {
        W.forged[to][W.n_forged[to]++] = pkt.u.data.msg_id;
      } else {
        W.forged_all[to] = 1;
      }
    }
  }
  if (split > 0) {
    hlen = (split - 1) % (len + 1);
  }
  hdr = malloc(hlen ? hlen : 1);
  CHECK(hdr != NULL);
  memcpy(hdr, d->b, hlen);
  if (split > 0) {
    pay = malloc(len - hlen ? len - hlen : 1);
    CHECK(pay != NULL);
    memcpy(pay, d->b + hlen, len - hlen);
    rv = srd_ep_read_pktv(W.ep[to], &p, hdr, hlen, pay, len - hlen, W.now);
  } else {
    rv = srd_ep_read_pkt(W.ep[to], &p, hdr, hlen, W.now);
  }
#ifdef WIRE_TRACE
  {
    srd_pkt pkt;
    srd_drop_reason why;
    if (srd_pkt_decode(&pkt, d->b, len, len, &why) == 0) {
      TRACE("%llu: %c reads %u bytes (kind %d, type %u, src %08x dst %08x",
            (unsigned long long)W.now, "AB"[to], (unsigned)len, kind,
            pkt.c.type, (unsigned)pkt.c.src_conn, (unsigned)pkt.c.dst_conn);
      if (pkt.c.type == SRD_PKT_DATA) {
        TRACE(", seq %u msg %u len %u off %u", (unsigned)pkt.u.data.seq,
              (unsigned)pkt.u.data.msg_id, (unsigned)pkt.u.data.msg_len,
              (unsigned)pkt.u.data.offset);
      }
      TRACE("): %d\n", rv);
    } else {
      TRACE("%llu: %c reads %u bytes (kind %d, undecodable): %d\n",
            (unsigned long long)W.now, "AB"[to], (unsigned)len, kind, rv);
    }
  }
#endif
  CHECK(rv == 0 || rv == SRD_ERR_PROTO || rv == SRD_ERR_STALE);
  /* A corrupt header is refused; a corrupt payload may be dropped as a
     duplicate (read_pkt returns 0) but never delivered (verify_msg). */
  CHECK(kind != D_CORRUPT || rv == SRD_ERR_PROTO || header_sealed(d->b, len));
  ++W.reads[to];
  free(hdr);
  free(pay);
}

static void check_written(int from, const uint8_t *buf, size_t n,
                          const srd_path *path) {
  srd_peer_stats st;
  srd_pkt pkt;
  srd_drop_reason why;

  CHECK(n > 0 && n <= srd_ep_max_pkt_size(W.ep[from]));
  CHECK(srd_pkt_decode(&pkt, buf, n, n, &why) == 0);
  CHECK(path->peer == W.peer[from] ||
        (from == EP_A && W.has_ghost && path->peer == W.ghost));
  CHECK(path->path == pkt.c.path);
  CHECK(srd_ep_get_peer_stats(W.ep[from], path->peer, &st) == 0);
  CHECK(pkt.c.src_conn == st.local_conn_id);
  CHECK(path->path < st.n_paths);
}

/* write_one has |from| write its next datagram into W.pkt, offering
   |cap| bytes (for the header alone with |vec|); returns its length, or 0
   when nothing is due or (only if |cap| is short) it did not fit. */
static size_t write_one(int from, int vec, size_t cap, srd_path *path) {
  srd_iovec pay = {NULL, 0};
  srd_ssize n;

  if (!vec) {
    n = srd_ep_write_pkt(W.ep[from], path, W.pkt, cap, W.now);
    CHECK(n >= 0 || (n == SRD_ERR_NOBUF && cap < sizeof(W.pkt)));
    return n > 0 ? (size_t)n : 0;
  }
  n = srd_ep_write_pktv(W.ep[from], path, W.pkt, cap, &pay, W.now);
  /* srd.h says a header buffer of 64 bytes or more works (acknowledgements
     then go in packets of their own), but an acknowledgement is written
     only into SRD_PKT_ACK_MAX_LEN bytes, whatever its length: with less,
     write_pktv fails with NOBUF for as long as one is due. */
  CHECK(n >= 0 || (n == SRD_ERR_NOBUF && cap < SRD_PKT_ACK_MAX_LEN));
  if (n <= 0) {
    return 0;
  }
  CHECK((size_t)n <= cap);
  CHECK(pay.len == 0 || (n <= SRD_PKT_MAX_HDR && pay.base != NULL));
  CHECK((size_t)n + pay.len <= sizeof(W.pkt));
  if (pay.len) {
    memcpy(W.pkt + n, pay.base, pay.len);
  }
  return (size_t)n + pay.len;
}

/* drain lets |from| write at most |max| due datagrams into the wire (those
   for the ghost are lost), offering |cap| bytes each.  Returns how many it
   wrote. */
static uint32_t drain(int from, uint32_t max, int vec, size_t cap) {
  static dgram d;
  uint32_t n_out = 0;

  while (n_out < max) {
    srd_path path;
    size_t n = write_one(from, vec, cap, &path);
    if (n == 0) {
      break;
    }
    check_written(from, W.pkt, n, &path);
    ++n_out;
    if (path.peer != W.peer[from]) {
      continue; /* to the ghost */
    }
    d.from = (uint8_t)from;
    d.kind = D_GENUINE;
    d.path = path.path;
    d.len = (uint32_t)n;
    memcpy(d.b, W.pkt, n);
    hist_add(from, &d);
    wire_push(&d);
  }
  return n_out;
}

static srd_tstamp next_expiry(void) {
  srd_tstamp a = srd_ep_get_expiry(W.ep[EP_A]);
  srd_tstamp b = srd_ep_get_expiry(W.ep[EP_B]);

  return a < b ? a : b;
}

static void run_timers(void) {
  srd_ep_handle_expiry(W.ep[EP_A], W.now);
  srd_ep_handle_expiry(W.ep[EP_B], W.now);
}

/* deliver_all delivers the whole queue, in order. */
static uint32_t deliver_all(void) {
  uint32_t n = 0;

  while (W.qn > 0) {
    feed(&W.q[wire_take(0)], 0);
    ++n;
  }
  return n;
}

/* pump runs the lossless wire for at most |rounds| rounds, or until
   nothing is left to do. */
static void pump(uint32_t rounds) {
  uint32_t i;

  for (i = 0; i < rounds; ++i) {
    uint32_t moved = drain(EP_A, DRAIN_MAX, i & 1, PKT_CAP);
    moved += drain(EP_B, DRAIN_MAX, i & 1, PKT_CAP);
    moved += deliver_all();
    poll_all(EP_A);
    poll_all(EP_B);
    if (!moved) {
      srd_tstamp t = next_expiry();
      if (t == SRD_TSTAMP_NONE || (t > W.now && W.now >= W.limit)) {
        return;
      }
      advance_to(t);
      run_timers();
    }
    advance_to(W.now + STEP);
  }
}

/* ------------------------------------------------------------------------ */
/* Endpoints                                                                */

static void on_log(void *user_data, const srd_log_record *rec) {
  (void)user_data;
  CHECK(rec->ts <= W.now);
  CHECK(strcmp(srd_log_event_name(rec->event), "unknown") != 0);
  if (rec->event == SRD_LOG_DROP) {
    CHECK(rec->a < SRD_DROP_REASONS);
  }
}

static void on_tap(void *user_data, srd_pkt_dir dir, const srd_path *path,
                   const uint8_t *pkt, size_t len, srd_tstamp ts) {
  (void)user_data;
  CHECK(dir == SRD_PKT_IN || dir == SRD_PKT_OUT);
  CHECK(path != NULL && pkt != NULL && ts == W.now);
  CHECK(len <= PKT_CAP);
}

/* session_id returns endpoint |i|'s incarnation id for its session with
   the other (what its datagrams carry as src_conn). */
static uint32_t session_id(int i) {
  srd_peer_stats st;

  CHECK(srd_ep_get_peer_stats(W.ep[i], W.peer[i], &st) == 0);
  return st.local_conn_id;
}

static void add_peers(int i) {
  CHECK(srd_ep_add_peer(W.ep[i], &W.ps[i], &W.peer[i]) == 0);
  if (i == EP_A && W.has_ghost) {
    srd_peer_settings g;
    srd_peer_settings_default(&g);
    g.n_paths = 1;
    CHECK(srd_ep_add_peer(W.ep[i], &g, &W.ghost) == 0);
  }
}

static void ep_create(int i) {
  srd_settings s = W.settings[i];

  s.seed += 0x100000u * W.inc[i];
  CHECK(srd_ep_new(&W.ep[i], &s, srd_mem_default()) == 0);
  CHECK(srd_ep_max_pkt_size(W.ep[i]) <= PKT_CAP);
  W.reads[i] = 0;
  add_peers(i);
  W.conn[i] = session_id(i);
}

static void setup(uint8_t c0, uint8_t c1) {
  static const uint32_t paths[] = {1, 2, 8, 64};
  static const uint32_t windows[] = {64, 8, 2, 1};
  int i;

  memset(&W, 0, offsetof(world, q));
  wire_init();
  W.ghost = NO_PEER;
  W.limit = TIME_LIMIT;
  W.has_ghost = (c0 & 0x40) != 0;
  W.last_k[EP_A] = W.last_k[EP_B] = -1;
  for (i = 0; i < 2; ++i) {
    srd_settings *s = &W.settings[i];
    srd_settings_default(s);
    s->seed = 0x31AE0000u + (uint64_t)i * 0x2222u;
    s->mtu = 1024;
    s->max_msg_size = MAX_MSG;
    s->max_sends = 16;
    s->max_recvs = 16;
    s->unexp_msgs = 4;
    s->unexp_bytes = 16384;
    s->msg_window = windows[(c1 >> 4) & 3];
    s->pkt_window = (c1 & 0x40) ? 16 : 64;
    s->max_retries = (c1 & 0x08) ? 2 : 4;
    s->rnr_retries = 4;
    s->rnr_backoff_max = 1 * SRD_MS;
    s->rto_max = 5 * SRD_MS;
    s->cc = (c0 & 0x10) ? "fixed" : "swift";
    s->path_steering = !(c1 & 0x01);
    s->log = on_log;
    s->pkt_tap = on_tap;
    srd_peer_settings_default(&W.ps[i]);
    W.ps[i].n_paths = paths[(c0 >> 2) & 3];
  }
  if (c0 & 0x80) {
    W.settings[EP_A].mtu = 256;
  }
  if (c1 & 0x02) {
    W.settings[EP_B].mtu = 512;
  }
  if (c1 & 0x80) {
    W.settings[EP_B].max_msg_size = MAX_MSG / 2;
  }
  if (c0 & 0x20) {
    W.settings[EP_B].unexp_msgs = 0;
  }
  W.settings[EP_B].payload_crc = !(c1 & 0x04);
  W.ps[EP_B].ordered = c0 & 0x01;
  W.ps[EP_A].ordered = (c0 & 0x02) != 0;
  W.n_paths = W.ps[EP_A].n_paths;
  for (i = 0; i < 2; ++i) {
    ep_create(i);
  }
}

/* collect flushes endpoint |i| and polls everything: every operation it
   posted has completed. */
static void collect(int i) {
  uint32_t k;

  poll_all(i);
  srd_ep_flush(W.ep[i], W.now);
  poll_all(i);
  for (k = 0; k < W.n_ops; ++k) {
    CHECK(W.ops[k].ep != i || W.ops[k].done);
  }
}

/* try_nomem creates endpoint |i|'s next incarnation and its peers with
   an allocator whose |fail_at|th allocation fails: srd_ep_new or
   srd_ep_add_peer report SRD_ERR_NOMEM (or all succeed), and nothing is
   left once the endpoint is deleted. */
static void try_nomem(int i, int fail_at) {
  failing f = {0, fail_at, 0};
  srd_mem mem = {&f, f_malloc, f_free, f_calloc};
  srd_settings s = W.settings[i];
  srd_peer_id id;
  srd_ep *e;
  int rv;

  s.seed += 0x100000u * W.inc[i];
  rv = srd_ep_new(&e, &s, &mem);
  if (rv == 0) {
    rv = srd_ep_add_peer(e, &W.ps[i], &id);
    if (rv == 0) {
      rv = srd_ep_add_peer(e, &W.ps[i], &id);
    }
    srd_ep_del(e);
  }
  CHECK(rv == 0 || rv == SRD_ERR_NOMEM);
  CHECK(rv != 0 || f.calls < fail_at);
  CHECK(f.live == 0);
}

static void restart(int i, uint8_t nomem) {
  if (W.inc[i] == MAX_RESTARTS) {
    return;
  }
  if (nomem) {
    try_nomem(i, nomem);
  }
  collect(i);
  srd_ep_del(W.ep[i]);
  ++W.inc[i];
  ++W.epoch[i];
  W.discarded[i] = 1;
  W.reset = 1;
  ep_create(i);
}

static void cycle_peer(int i) {
  if (W.cycles[i] == MAX_CYCLES) {
    return;
  }
  ++W.cycles[i];
  TRACE("%llu: %c removes peer %u\n", (unsigned long long)W.now, "AB"[i],
        (unsigned)W.peer[i]);
  CHECK(srd_ep_remove_peer(W.ep[i], W.peer[i], W.now) == 0);
  CHECK(srd_ep_remove_peer(W.ep[i], W.peer[i], W.now) == SRD_ERR_BAD_PEER);
  CHECK(srd_ep_add_peer(W.ep[i], &W.ps[i], &W.peer[i]) == 0);
  W.conn[i] = session_id(i);
  ++W.epoch[i];
  W.reset = 1;
}

static void check_stats(int i) {
  srd_ep_stats st;
  srd_peer_stats ps;
  srd_path_stats pst;
  uint64_t drops = 0;
  int r;

  srd_ep_get_stats(W.ep[i], &st);
  CHECK(st.pkts_in == W.reads[i]);
  for (r = 0; r < SRD_DROP_REASONS; ++r) {
    drops += st.drops[r];
  }
  CHECK(drops <= st.pkts_in);
  CHECK(srd_ep_get_peer_stats(W.ep[i], W.peer[i], &ps) == 0);
  CHECK(ps.state <= SRD_PEER_STATE_UNREACHABLE);
  CHECK(ps.n_paths == W.ps[i].n_paths);
  CHECK(ps.state != SRD_PEER_STATE_ESTABLISHED || ps.peer_conn_id != 0);
  CHECK(srd_ep_get_path_stats(W.ep[i], W.peer[i], 0, W.now, &pst) == 0);
  CHECK(pst.acked <= pst.sent);
  CHECK(srd_ep_get_path_stats(W.ep[i], W.peer[i], ps.n_paths, W.now, &pst) ==
        SRD_ERR_INVALID_ARGUMENT);
}

/* misuse calls endpoint |i| the wrong ways a driver might: each is
   refused, and changes nothing but the drop count of a datagram from an
   unknown peer. */
static void misuse(int i) {
  static const uint8_t junk[SRD_PKT_COMMON_LEN] = {SRD_PROTO_VERSION, 1};
  srd_peer_id bad = W.peer[i] + 1000;
  srd_path path = {bad, 0};
  srd_peer_stats ps;
  srd_ep_stats st;
  srd_path_stats pst;
  uint64_t drops;

  srd_ep_get_stats(W.ep[i], &st);
  drops = st.drops[SRD_DROP_BAD_PEER];
  CHECK(srd_ep_post_send(W.ep[i], W.peer[i], NULL, 5, NULL, W.now) ==
        SRD_ERR_INVALID_ARGUMENT);
  CHECK(srd_ep_post_send(W.ep[i], bad, junk, 5, NULL, W.now) ==
        SRD_ERR_BAD_PEER);
  CHECK(srd_ep_post_recv(W.ep[i], NULL, 5, NULL, W.now) ==
        SRD_ERR_INVALID_ARGUMENT);
  CHECK(srd_ep_get_peer_stats(W.ep[i], bad, &ps) == SRD_ERR_BAD_PEER);
  CHECK(srd_ep_get_path_stats(W.ep[i], bad, 0, W.now, &pst) ==
        SRD_ERR_BAD_PEER);
  CHECK(srd_ep_remove_peer(W.ep[i], bad, W.now) == SRD_ERR_BAD_PEER);
  CHECK(srd_ep_read_pkt(W.ep[i], &path, junk, sizeof(junk), W.now) ==
        SRD_ERR_INVALID_ARGUMENT);
  ++W.reads[i];
  CHECK(srd_ep_read_pkt(W.ep[i], NULL, junk, sizeof(junk), W.now) ==
        SRD_ERR_INVALID_ARGUMENT);
  CHECK(srd_ep_write_pkt(W.ep[i], &path, NULL, 10, W.now) ==
        SRD_ERR_INVALID_ARGUMENT);
  srd_ep_get_stats(W.ep[i], &st);
  CHECK(st.drops[SRD_DROP_BAD_PEER] == drops + 1);
  CHECK(st.pkts_in == W.reads[i]);
}

/* ------------------------------------------------------------------------ */
/* Mutations                                                                */

static void edit(reader *r, dgram *d) {
  uint8_t kind = rd8(r);
  uint16_t off16 = rd16(r);
  uint32_t val = rd32(r);
  uint32_t off = d->len ? off16 % d->len : 0;
  const uint32_t interesting[8] = {
      0,         1,         UINT32_MAX,  0x80000000u,
      W.conn[0], W.conn[1], 0x7FFFFFFFu, (uint32_t)W.now};

  switch (kind % 8) {
  case 0: /* flip a bit */
    if (d->len) {
      d->b[off] ^= (uint8_t)(1u << (val & 7));
    }
    break;
  case 1: /* set a byte */
    if (d->len) {
      d->b[off] = (uint8_t)val;
    }
    break;
  case 2: /* set a u16 */
    if (d->len >= 2) {
      put16(d->b + off % (d->len - 1), val);
    }
    break;
  case 3: /* set a u32 */
    if (d->len >= 4) {
      put32(d->b + off % (d->len - 3), val);
    }
    break;
  case 4: /* add to a u32: a neighbouring seq or message id */
    if (d->len >= 4) {
      uint8_t *p = d->b + off % (d->len - 3);
      put32(p, get32(p) + (uint32_t)(int32_t)(int8_t)val);
    }
    break;
  case 5: /* truncate */
    d->len = off16 % (d->len + 1);
    break;
  case 6: /* extend */
    val %= 65;
    if (d->len + val > PKT_CAP) {
      val = PKT_CAP - d->len;
    }
    memset(d->b + d->len, (int)(val * 7), val);
    d->len += val;
    break;
  default: /* an interesting u32 */
    if (d->len >= 4) {
      put32(d->b + off % (d->len - 3), interesting[val % 8]);
    }
    break;
  }
}

static void do_mutate(reader *r, uint8_t f) {
  static dgram orig;
  uint8_t idx = rd8(r);
  uint32_t n = rd8(r) % (MAX_EDITS + 1), i;
  dgram tmp, *d;

  if (W.qn == 0) {
    /* Read the edits all the same, so that a record means the same. */
    memset(&tmp, 0, sizeof(tmp));
    for (i = 0; i < n; ++i) {
      edit(r, &tmp);
    }
    return;
  }
  d = &W.q[W.qord[idx % W.qn]];
  orig.len = d->len;
  memcpy(orig.b, d->b, d->len);
  for (i = 0; i < n; ++i) {
    edit(r, d);
  }
  if (d->len == orig.len && memcmp(d->b, orig.b, d->len) == 0) {
    return; /* unchanged */
  }
  if ((f & 2) && fuzz_reseal(d->b, d->len, 1)) {
    d->kind = D_FORGED;
  } else if (d->kind == D_GENUINE) {
    d->kind = D_CORRUPT; /* feed() tells whether its CRCs still match */
  }
}

/* ------------------------------------------------------------------------ */
/* The records                                                              */

static size_t rd_len(reader *r, uint8_t f) {
  if (f & 2) {
    return rd8(r);
  }
  return rd16(r) % (MAX_MSG + 65);
}

static void run_record(reader *r) {
  static const srd_duration unit[] = {SRD_NS, SRD_US, 100 * SRD_US,
                                      10 * SRD_MS};
  uint8_t op = rd8(r);
  uint8_t f = op >> 4;
  int x = f & 1;

  TRACE("%llu: record op %u flags %x\n", (unsigned long long)W.now, op & 15u,
        (unsigned)f);
  switch (op & 15) {
  case 0:
    post_send(x, rd_len(r, f), x == EP_A && (f & 4));
    break;
  case 1:
    post_recv(x, rd_len(r, f));
    break;
  case 2: {
    uint32_t n = rd8(r) % (DRAIN_MAX + 1);
    size_t cap = (f & 4) ? 64u + rd8(r) : PKT_CAP;
    drain(x, n, (f & 2) != 0, cap);
    break;
  }
  case 3: {
    uint8_t idx = rd8(r);
    uint32_t split = (f & 2) ? (uint32_t)rd16(r) + 1 : 0;
    if (W.qn > 0) {
      uint32_t i = idx % W.qn;
      if (f & 4) {
        feed(&W.q[W.qord[i]], split);
      } else {
        feed(&W.q[wire_take(i)], split);
      }
    }
    break;
  }
  case 4: {
    uint8_t idx = rd8(r);
    if (W.qn > 0) {
      wire_take(idx % W.qn);
    }
    break;
  }
  case 5: {
    uint8_t idx = rd8(r);
    if (W.qn > 0) {
      uint32_t i = idx % W.qn;
      uint8_t slot = W.qord[i];
      memmove(W.qord + i, W.qord + i + 1, W.qn - i - 1);
      W.qord[W.qn - 1] = slot;
    }
    break;
  }
  case 6:
    advance_to(W.now + (srd_duration)rd16(r) * unit[f & 3]);
    run_timers();
    break;
  case 7: {
    srd_tstamp t = (f & 2)   ? srd_ep_get_expiry(W.ep[EP_A])
                   : (f & 4) ? srd_ep_get_expiry(W.ep[EP_B])
                             : next_expiry();
    if (t != SRD_TSTAMP_NONE) {
      advance_to(t);
    }
    run_timers();
    break;
  }
  case 8:
    do_mutate(r, f);
    break;
  case 9: {
    uint8_t idx = rd8(r);
    if (W.hist_n[x] > 0) {
      wire_push(&W.hist[x][idx % W.hist_n[x]]);
    }
    break;
  }
  case 10:
    cycle_peer(x);
    break;
  case 11:
    pump(rd8(r) % 16 + 1);
    break;
  case 12:
    poll_cq(x, rd8(r) % 17);
    break;
  case 13:
    restart(x, (f & 2) ? rd8(r) % 32 + 1 : 0);
    break;
  case 14:
    srd_ep_flush(W.ep[x], W.now);
    W.discarded[x] = 1;
    break;
  default:
    check_stats(x);
    if (f & 2) {
      misuse(x);
    }
    break;
  }
}

/* settle heals the wire (the datagrams that are not genuine are dropped),
   gives both endpoints receives and runs the wire losslessly. */
/* posted_recvs counts the receives endpoint |i| has posted and not seen
   complete. */
static uint32_t posted_recvs(int i) {
  uint32_t k, n = 0;

  for (k = 0; k < W.n_ops; ++k) {
    n += W.ops[k].kind == K_RECV && W.ops[k].ep == i && !W.ops[k].done;
  }
  return n;
}

static void settle(void) {
  uint32_t i;
  int x;

  W.limit = W.now + SETTLE_TIME;
  for (i = 0; i < W.qn;) {
    if (W.q[W.qord[i]].kind != D_GENUINE) {
      wire_take(i);
    } else {
      ++i;
    }
  }
  for (i = 0; i < SETTLE_ROUNDS; ++i) {
    for (x = 0; x < 2; ++x) {
      uint32_t n = posted_recvs(x);
      /* One slot stays free for the receive posted last. */
      for (; n + 1 < W.settings[x].max_recvs; ++n) {
        post_recv(x, MAX_MSG);
      }
    }
    pump(64);
  }
#if WIRE_OPEN_STALE_FLOOR
  for (x = 0; x < 2; ++x) {
    post_send(x, 1, 0);
  }
  pump(64);
#endif
#if WIRE_OPEN_HELD_AFTER_RESET
  /* Each receive posted hands over one of them. */
  for (i = 0; i < 16; ++i) {
    for (x = 0; x < 2; ++x) {
      post_recv(x, MAX_MSG);
    }
    pump(4);
  }
#endif
}

/* truncated_as takes one message of |len| bytes that endpoint |to|
   received into too small a buffer, if there is one left. */
static int truncated_as(int to, uint32_t len) {
  uint32_t i;

  for (i = 0; i < W.n_trunc[to]; ++i) {
    if (!W.trunc_used[to][i] && W.trunc_len[to][i] == len) {
      W.trunc_used[to][i] = 1;
      return 1;
    }
  }
  return 0;
}

/* check_delivered: every send that succeeded was delivered, or taken by
   a receive too small for it (an unexpected message is acknowledged
   before a receive takes it), unless its receiver may have discarded it.
   Only the sends of sessions still on, unless |ended_too|: a message an
   ordered receiver holds behind one that never came waits until the
   sender's session is seen to end (docs/protocol.md, "Ordered mode"), and
   a sender that removed its peer or restarted and never spoke again has
   told nobody. */
static void check_delivered(int ended_too) {
  uint32_t need[2][TAG_LEN];
  uint32_t i, len, n;
  int from;

  memset(need, 0, sizeof(need));
  memset(W.trunc_used, 0, sizeof(W.trunc_used));
  for (i = 0; i < W.n_ops; ++i) {
    const posted *op = &W.ops[i];
    if (op->kind != K_SEND || W.discarded[1 - op->ep] ||
        !W.msg_ok[op->ep][op->k] ||
        (!ended_too && op->epoch != W.epoch[op->ep])) {
      continue;
    }
    if (op->len < TAG_LEN) {
      ++need[op->ep][op->len];
      continue;
    }
    if (W.msg_delivered[op->ep][op->k] > 0) {
      continue;
    }
    TRACE("op %u (%c's message %u, %u bytes) succeeded, not delivered\n",
          (unsigned)i, "AB"[op->ep], (unsigned)op -> k, (unsigned)op -> len);
    CHECK(truncated_as(1 - op->ep, (uint32_t)op->len));
  }
  for (from = 0; from < 2; ++from) {
    for (len = 0; len < TAG_LEN; ++len) {
      for (n = W.short_delivered[from][len]; n < need[from][len]; ++n) {
        TRACE("%c's short messages of %u bytes: %u succeeded, %u delivered\n",
              "AB"[from], (unsigned)len, (unsigned)need[from][len],
              (unsigned)W.short_delivered[from][len]);
        CHECK(truncated_as(1 - from, len));
      }
    }
  }
}

/* talk_again has each endpoint send the other a one-byte message, so that
   each learns of the other's new session if there is one, and runs the
   wire. */
static void talk_again(void) {
  int x;

  for (x = 0; x < 2; ++x) {
    post_send(x, 1, 0);
  }
  pump(64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  uint32_t n, i;
  uint8_t c0 = rd8(&r);

  setup(c0, rd8(&r));
  for (n = 0; r.left > 0 && n < MAX_RECORDS; ++n) {
    run_record(&r);
  }
  check_stats(EP_A);
  check_stats(EP_B);
  if (!W.tainted) {
    settle();
    check_delivered(0);
    talk_again();
    check_delivered(1);
  }
  collect(EP_A);
  collect(EP_B);
  for (i = 0; i < W.n_ops; ++i) {
    CHECK(W.ops[i].done);
  }
  srd_ep_del(W.ep[EP_A]);
  srd_ep_del(W.ep[EP_B]);
  W.ep[EP_A] = W.ep[EP_B] = NULL;
  return 0;
}
