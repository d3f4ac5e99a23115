/*
 * fuzz_ep.c: libFuzzer target for the endpoint's input path,
 * srd_ep_read_pkt(), driven by a sequence of packets and time steps.
 *
 * Every input starts from the same place: two endpoints, A and B (fixed,
 * distinct seeds), each the other's peer, run a real handshake and some
 * traffic both ways over a lossless zero-delay wire on a virtual clock, so
 * that B has an established session with A, both have posted operations
 * left, and A's last data packets were "lost" (captured, not delivered).
 * Every packet A writes is kept in a ring of real packets.
 *
 * Input: byte 0 chooses the configuration (ordered delivery on either
 * side, 1/2/8/64 paths, the congestion controller, whether B buffers
 * unexpected messages, path steering, a smaller MTU at A).  Then at most
 * MAX_RECORDS records, each an op byte (low 4 bits: the op, high 4 bits:
 * flags) and the op's arguments; a record cut short reads zeros:
 *   0  feed bytes to B as if from A               len:u16 path:u8 bytes
 *      (flag 8: re-sealed first, fuzz_seal.h)
 *   1  the same, after writing A's and B's incarnation ids into bytes
 *      4..11 (src_conn, dst_conn), so the packet passes the session
 *      check; flag 2 also fixes the version, path and reserved fields;
 *      then re-sealed (valid CRCs) unless flag 8
 *   2  replay a real packet of A's ring to B      idx:u8
 *   3  mutate a real packet of A's ring, feed it  idx:u8 n:u8
 *      to B (flag 2: and cut it to a length;      n x (off:u16 val:u8)
 *      flag 4: then re-seal it)                   [len:u16]
 *   4  advance the clock, run the timers          d:u16 (unit from flags)
 *   5  jump to the next expiry, run the timers
 *   6  B writes its packets (flag 1: delivered to A; flag 2: with
 *      srd_ep_write_pktv)
 *   7  A writes its packets, into the ring (flag 1: delivered to B; flag
 *      2: with srd_ep_write_pktv)
 *   8  run the wire (both ways, with timers)      rounds:u8
 *   9  A posts a send                             len:u8 or u16
 *   10 B posts a receive                          cap:u8 or u16
 *   11 poll A's completion queue                  n:u8
 *   12 poll B's completion queue                  n:u8
 *   13 feed bytes to A as if from B (patched as   len:u16 path:u8 bytes
 *      op 1 unless flag 4; re-sealed unless
 *      flag 8)
 *   14 B posts a send (flag 1) or A a receive     len:u8 or u16
 *   15 with flags 1 and 2: flush A (flag 4 clear) or B (flag 4 set);
 *      with flag 2 alone: A restarts (flushed, deleted, created again
 *      with a new seed: a new incarnation; at most MAX_RESTARTS times);
 *      else read and check the statistics
 * Feeding ops take flag 1 to pass the datagram split in two with
 * srd_ep_read_pktv (split:u16 follows).  Virtual time is bounded by
 * TIME_LIMIT, the wire by the packets each op may move.
 *
 * Checks (abort() on failure):
 *   - every posted operation (A's and B's sends and receives, tracked by
 *     user_ctx) completes at most once, with its own buffer and length,
 *     and after srd_ep_flush() at the end every one has completed;
 *   - a message delivered successfully (to B, or to A) has exactly the
 *     bytes and length the other side sent: A's and B's send buffers hold
 *     a pattern derived from the message index in their first 8 bytes;
 *     messages whose id appeared in a forged DATA packet (any fed packet
 *     but an exact replay of a real one) are exempt;
 *   - such a message (of 8 bytes or more, so that it names its index) is
 *     delivered at most once, and never if its send failed without
 *     SRD_CQE_F_STARTED (no packet of it left); a send that succeeded has
 *     SRD_CQE_F_STARTED;
 *   - a receive that completes TRUNCATED had a buffer smaller than the
 *     message; a successful one had room;
 *   - srd_ep_poll_cq never returns more than asked nor writes past it;
 *   - srd_ep_read_pkt returns 0, SRD_ERR_PROTO or SRD_ERR_STALE, and
 *     SRD_ERR_PROTO for a fed datagram whose header CRC does not match;
 *   - every datagram an endpoint writes fits srd_ep_max_pkt_size, decodes
 *     with srd_pkt_decode, carries the writer's incarnation id and the
 *     path it was written for;
 *   - log records name a known event (and drop reason) at a time not
 *     ahead of the clock; the packet tap sees sane arguments;
 *   - after setup both peers are ESTABLISHED; B counts every packet fed.
 * Everything allocated is freed: libFuzzer's leak checker is on.
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

#define MAX_RECORDS 256
#define MAX_OPS 640    /* posted operations per run */
#define MAX_FORGED 512 /* forged message ids remembered per receiver */
#define RING_N 64      /* real packets of A kept */
#define PKT_CAP 2048   /* > srd_ep_max_pkt_size of both endpoints */
#define MAX_FEED 2048  /* longest datagram fed */
#define DRAIN_MAX 128  /* packets one endpoint writes per op */
#define MAX_MSG 8192   /* both endpoints' max_msg_size */
#define TIME_LIMIT (60 * SRD_S)
#define STEP (1 * SRD_US) /* the wire's delay per round */
#define MAX_RESTARTS 4    /* of A per run */

#define EP_A 0
#define EP_B 1

/* Kinds of posted operations. */
#define K_SEND 1
#define K_RECV 2

typedef struct posted {
  uint8_t kind;
  uint8_t ep;   /* EP_A or EP_B: who posted it */
  uint8_t done; /* its completion was polled */
  uint8_t *buf;
  size_t len; /* send length or receive capacity */
} posted;

typedef struct world {
  srd_ep *ep[2];
  srd_peer_id peer[2]; /* ep[i]'s id for the other endpoint */
  uint32_t conn[2];
  uint32_t n_paths;
  srd_tstamp now;

  posted ops[MAX_OPS];
  uint32_t n_ops;
  /* Messages sent by each endpoint: index k -> length, how often the
     other endpoint delivered it, and whether its send failed before any
     packet of it left. */
  uint32_t msg_len[2][MAX_OPS];
  uint8_t msg_delivered[2][MAX_OPS];
  uint8_t msg_unsent[2][MAX_OPS];
  uint32_t msg_of_op[MAX_OPS];
  uint32_t n_msgs[2];
  /* Message ids each endpoint received in forged DATA packets. */
  uint32_t forged[2][MAX_FORGED];
  uint32_t n_forged[2];
  int forged_all[2];

  uint64_t reads[2]; /* datagrams given to each endpoint */
  srd_settings settings[2];
  srd_peer_settings ps[2];
  uint32_t restarts; /* how often A restarted */

  /* A's real packets (not cleared between runs: only the first ring_n
     count). */
  size_t ring_len[RING_N];
  uint32_t ring_n, ring_next;
  uint8_t ring[RING_N][PKT_CAP];
  uint8_t pkt[PKT_CAP];
} world;

static world W;

/* session_id returns endpoint |i|'s incarnation id for its session with
   its peer: what its packets carry as src_conn. */
static uint32_t session_id(int i) {
  srd_peer_stats st;
  CHECK(srd_ep_get_peer_stats(W.ep[i], W.peer[i], &st) == 0);
  return st.local_conn_id;
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
  if (t > TIME_LIMIT) {
    t = TIME_LIMIT;
  }
  if (t > W.now) {
    W.now = t;
  }
}

/* ------------------------------------------------------------------------ */
/* Message contents                                                         */

#define MSG_MAGIC 0x53524432u /* "SRD2" */

/* The bytes of the messages come from a fixed pseudo-random table, at an
   offset that depends on the sender and the message. */
#define PATTERN_LEN (MAX_MSG + 8192)
static uint8_t pattern[PATTERN_LEN];

static void pattern_init(void) {
  static int done;
  uint32_t x = 0x2545F491u, i;

  if (done) {
    return;
  }
  for (i = 0; i < PATTERN_LEN; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    pattern[i] = (uint8_t)(x >> 24);
  }
  done = 1;
}

/* msg_fill writes message |k| of |len| bytes from endpoint |from| into
   |b|.  A message of 8 bytes or more starts with the magic and k; a
   shorter one depends on its length and sender only. */
static void msg_fill(uint8_t *b, int from, uint32_t k, uint32_t len) {
  if (len < 8) {
    memcpy(b, pattern + len * 8 + (uint32_t)from * 64, len);
    return;
  }
  put32(b, MSG_MAGIC);
  put32(b + 4, k);
  memcpy(b + 8, pattern + (k * 257u + (uint32_t)from * 4099u) % 8192u, len - 8);
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

/* verify_msg checks a message that endpoint |to| received successfully. */
static void verify_msg(int to, const srd_cqe *e) {
  static uint8_t want[MAX_MSG];
  int from = 1 - to;
  const uint8_t *b = e->buf;
  uint32_t len = (uint32_t)e->len, k;

  if (is_forged(to, e->msg_id)) {
    return;
  }
  if (len < 8) {
    /* Some message of this length was sent. */
    for (k = 0; k < W.n_msgs[from] && W.msg_len[from][k] != len; ++k) {
    }
    CHECK(k < W.n_msgs[from]);
  } else {
    CHECK(get32(b) == MSG_MAGIC);
    k = get32(b + 4);
    CHECK(k < W.n_msgs[from]);
    CHECK(W.msg_len[from][k] == len);
    /* At most once, and never one whose send ended before it started. */
    CHECK(W.msg_delivered[from][k] == 0);
    CHECK(!W.msg_unsent[from][k]);
    W.msg_delivered[from][k] = 1;
  }
  msg_fill(want, from, k, len);
  CHECK(memcmp(b, want, len) == 0);
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
  op->len = len;
  op->buf = malloc(len ? len : 1);
  CHECK(op->buf != NULL);
  return op;
}

/* forget_op drops the op new_op() made when posting failed. */
static void forget_op(posted *op) {
  free(op->buf);
  op->buf = NULL;
}

static void post_send(int from, size_t len) {
  posted *op = new_op(from, K_SEND, len);
  uint32_t k = W.n_msgs[from];
  int rv;

  if (op == NULL) {
    return;
  }
  if (len <= MAX_MSG) {
    msg_fill(op->buf, from, k, (uint32_t)len);
  }
  rv = srd_ep_post_send(W.ep[from], W.peer[from], op->buf, len,
                        (void *)(uintptr_t)(W.n_ops + 1), W.now);
  if (rv != 0) {
    CHECK(rv == SRD_ERR_AGAIN || (rv == SRD_ERR_MSG_TOO_LONG && len > MAX_MSG));
    forget_op(op);
    return;
  }
  CHECK(len <= MAX_MSG);
  W.msg_len[from][k] = (uint32_t)len;
  W.msg_of_op[W.n_ops] = k;
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
  CHECK(op->ep == ep && !op->done);
  CHECK(e->buf == op->buf);
  CHECK(e->status == 0 ||
        (e->status <= SRD_ERR_INVALID_ARGUMENT && e->status >= SRD_ERR_STALE));
  if (op->kind == K_SEND) {
    CHECK(e->op == SRD_OP_SEND);
    CHECK(e->peer == W.peer[ep]);
    CHECK(e->len == op->len);
#ifdef SRD_CQE_F_STARTED
    /* A send that succeeded had started; one that failed unstarted was
       never seen by the peer. */
    CHECK(e->status != 0 || (e->flags & SRD_CQE_F_STARTED));
    if (e->status != 0 && !(e->flags & SRD_CQE_F_STARTED) && op->len >= 8) {
      uint32_t k = W.msg_of_op[id - 1];
      CHECK(!W.msg_delivered[ep][k]);
      W.msg_unsent[ep][k] = 1;
    }
#endif
  } else {
    CHECK(e->op == SRD_OP_RECV);
    if (e->status == 0) {
      CHECK(e->peer == W.peer[ep]);
      CHECK(e->len <= op->len);
      verify_msg(ep, e);
    } else if (e->status == SRD_ERR_TRUNCATED) {
      CHECK(e->len > op->len);
    }
  }
  op->done = 1;
  /* The buffer is ours again. */
  free(op->buf);
  op->buf = NULL;
}

/* poll_cq takes up to |n| completions of endpoint |ep|. */
static size_t poll_cq(int ep, size_t n) {
  static srd_cqe canary[2];
  srd_cqe cqes[18];
  size_t k, i;

  CHECK(n <= 16);
  memset(canary, 0x5A, sizeof(canary));
  memset(cqes, 0x5A, sizeof(cqes));
  k = srd_ep_poll_cq(W.ep[ep], cqes, n);
  CHECK(k <= n);
  /* Nothing written past what was asked for. */
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

static void ring_add(const uint8_t *pkt, size_t len) {
  memcpy(W.ring[W.ring_next], pkt, len);
  W.ring_len[W.ring_next] = len;
  W.ring_next = (W.ring_next + 1) % RING_N;
  if (W.ring_n < RING_N) {
    ++W.ring_n;
  }
}

/* feed gives |len| bytes to endpoint |to| as if from the other one, on
   |path|; |split| > 0 passes them in two pieces, split at |split| - 1.
   |genuine| says they are a real packet of the other endpoint, unchanged.
   Each piece is copied to an allocation of its exact size, so that a read
   past the datagram is a read past an allocation. */
/* header_sealed says whether the header CRC of datagram |p| matches. */
static int header_sealed(const uint8_t *p, size_t len) {
  static uint8_t copy[MAX_FEED > PKT_CAP ? MAX_FEED : PKT_CAP];

  memcpy(copy, p, len);
  return fuzz_reseal(copy, len, 0) && memcmp(copy, p, len) == 0;
}

static void feed(int to, const uint8_t *bytes, size_t len, uint16_t path,
                 uint32_t split, int genuine) {
  srd_path p = {W.peer[to], (uint16_t)(path % SRD_MAX_PATHS)};
  uint8_t *hdr, *pay = NULL;
  size_t hlen = len;
  int rv;

  if (!genuine) {
    srd_pkt pkt;
    srd_drop_reason why;
    if (srd_pkt_decode(&pkt, bytes, len, len, &why) == 0 &&
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
  memcpy(hdr, bytes, hlen);
  if (split > 0) {
    pay = malloc(len - hlen ? len - hlen : 1);
    CHECK(pay != NULL);
    memcpy(pay, bytes + hlen, len - hlen);
    rv = srd_ep_read_pktv(W.ep[to], &p, hdr, hlen, pay, len - hlen, W.now);
  } else {
    rv = srd_ep_read_pkt(W.ep[to], &p, hdr, hlen, W.now);
  }
  CHECK(rv == 0 || rv == SRD_ERR_PROTO || rv == SRD_ERR_STALE);
  /* A datagram whose header CRC does not match is refused. */
  CHECK(genuine || rv == SRD_ERR_PROTO || header_sealed(bytes, len));
  ++W.reads[to];
  free(hdr);
  free(pay);
}

/* check_written holds a datagram endpoint |from| wrote to its rules. */
static void check_written(int from, const uint8_t *buf, srd_ssize n,
                          const srd_path *path) {
  srd_pkt pkt;
  srd_drop_reason why;

  CHECK(n > 0 && (size_t)n <= srd_ep_max_pkt_size(W.ep[from]));
  CHECK(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why) == 0);
  CHECK(pkt.c.src_conn == W.conn[from]);
  CHECK(path->peer == W.peer[from]);
  CHECK(path->path == pkt.c.path && path->path < W.n_paths);
}

/* write_one has endpoint |from| write its next datagram into W.pkt,
   contiguous or, with |vec|, as a header and a pointer into the send
   buffer (srd_ep_write_pktv), joined here.  Returns its length or 0. */
static size_t write_one(int from, int vec, srd_path *path) {
  srd_ssize n;

  if (!vec) {
    n = srd_ep_write_pkt(W.ep[from], path, W.pkt, sizeof(W.pkt), W.now);
    CHECK(n >= 0);
    return (size_t)n;
  }
  {
    srd_iovec pay = {NULL, 0};
    n = srd_ep_write_pktv(W.ep[from], path, W.pkt, sizeof(W.pkt), &pay, W.now);
    CHECK(n >= 0);
    if (n == 0) {
      return 0;
    }
    CHECK(pay.len == 0 || (n <= SRD_PKT_MAX_HDR && pay.base != NULL));
    CHECK((size_t)n + pay.len <= sizeof(W.pkt));
    if (pay.len) {
      memcpy(W.pkt + n, pay.base, pay.len);
    }
    return (size_t)n + pay.len;
  }
}

/* drain lets endpoint |from| write what is due (at most DRAIN_MAX
   datagrams), delivering each to the other endpoint if |deliver|.
   Returns how many it wrote. */
static int drain(int from, int deliver, int vec) {
  int n_out = 0;

  while (n_out < DRAIN_MAX) {
    srd_path path;
    size_t n = write_one(from, vec, &path);
    if (n == 0) {
      break;
    }
    check_written(from, W.pkt, (srd_ssize)n, &path);
    ++n_out;
    if (from == EP_A) {
      ring_add(W.pkt, n);
    }
    if (deliver) {
      feed(1 - from, W.pkt, n, path.path, 0, 1);
    }
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

/* pump runs the lossless wire both ways for at most |rounds| rounds, or
   until nothing is left to do.  Returns nonzero if it went quiet. */
static int pump(int rounds) {
  int i;

  for (i = 0; i < rounds; ++i) {
    int moved = drain(EP_A, 1, i & 1);
    moved += drain(EP_B, 1, i & 1);
    poll_all(EP_A);
    poll_all(EP_B);
    if (!moved) {
      srd_tstamp t = next_expiry();
      if (t == SRD_TSTAMP_NONE || (t > W.now && W.now >= TIME_LIMIT)) {
        return 1;
      }
      advance_to(t);
      run_timers();
    }
    advance_to(W.now + STEP);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */

/* on_log checks the engine's log records (user_data: &W.conn[ep]). */
static void on_log(void *user_data, const srd_log_record *rec) {
  (void)user_data;
  CHECK(rec->ts <= W.now);
  CHECK(strcmp(srd_log_event_name(rec->event), "unknown") != 0);
  if (rec->event == SRD_LOG_DROP) {
    CHECK(rec->a < SRD_DROP_REASONS);
  }
}

/* on_tap checks what the packet tap sees. */
static void on_tap(void *user_data, srd_pkt_dir dir, const srd_path *path,
                   const uint8_t *pkt, size_t len, srd_tstamp ts) {
  (void)user_data;
  CHECK(dir == SRD_PKT_IN || dir == SRD_PKT_OUT);
  CHECK(path != NULL && pkt != NULL && ts == W.now);
  CHECK(len <= MAX_FEED || dir == SRD_PKT_IN);
}

static const uint32_t setup_sends_a[] = {0, 5, 8, 100, 1500, 3000};
static const uint32_t setup_sends_b[] = {10, 2000};

static void setup(uint8_t cfg) {
  static const uint32_t paths[] = {1, 2, 8, 64};
  srd_settings s[2];
  srd_peer_settings ps[2];
  srd_peer_stats st;
  int i;
  uint32_t j;

  memset(&W, 0, offsetof(world, ring));
  for (i = 0; i < 2; ++i) {
    srd_settings_default(&s[i]);
    s[i].seed = 0x5EED0000u + (uint64_t)i * 0x1111u;
    s[i].mtu = 1024;
    s[i].max_msg_size = MAX_MSG;
    s[i].max_sends = 16;
    s[i].max_recvs = 16;
    s[i].unexp_msgs = 4;
    s[i].unexp_bytes = 8192;
    s[i].msg_window = 64;
    s[i].pkt_window = 64;
    s[i].max_retries = 4;
    s[i].rnr_retries = 4;
    s[i].rnr_backoff_max = 1 * SRD_MS;
    s[i].rto_max = 5 * SRD_MS;
    s[i].cc = (cfg & 0x08) ? "fixed" : "swift";
    s[i].path_steering = !(cfg & 0x40);
    s[i].log = on_log;
    s[i].pkt_tap = on_tap;
    srd_peer_settings_default(&ps[i]);
    ps[i].n_paths = paths[(cfg >> 1) & 3];
  }
  if (cfg & 0x80) {
    s[EP_A].mtu = 512;
  }
  if (cfg & 0x10) {
    s[EP_B].unexp_msgs = 0;
  }
  ps[EP_B].ordered = cfg & 0x01;
  ps[EP_A].ordered = (cfg & 0x20) != 0;
  W.n_paths = ps[EP_A].n_paths;
  for (i = 0; i < 2; ++i) {
    W.settings[i] = s[i];
    W.ps[i] = ps[i];
    CHECK(srd_ep_new(&W.ep[i], &s[i], srd_mem_default()) == 0);
    CHECK(srd_ep_add_peer(W.ep[i], &ps[i], &W.peer[i]) == 0);
    W.conn[i] = session_id(i);
    CHECK(srd_ep_max_pkt_size(W.ep[i]) <= PKT_CAP);
  }
  CHECK(W.conn[EP_A] != W.conn[EP_B]);

  /* A handshake and messages from A to B, then from B to A. */
  for (j = 0; j < sizeof(setup_sends_a) / sizeof(setup_sends_a[0]); ++j) {
    post_send(EP_A, setup_sends_a[j]);
    post_recv(EP_B, 4096);
  }
  CHECK(pump(400));
  for (j = 0; j < sizeof(setup_sends_b) / sizeof(setup_sends_b[0]); ++j) {
    post_send(EP_B, setup_sends_b[j]);
    post_recv(EP_A, 4096);
  }
  CHECK(pump(400));
  for (j = 0; j < W.n_ops; ++j) {
    CHECK(W.ops[j].done);
  }
  for (i = 0; i < 2; ++i) {
    CHECK(srd_ep_get_peer_stats(W.ep[i], W.peer[i], &st) == 0);
    CHECK(st.state == SRD_PEER_STATE_ESTABLISHED);
    CHECK(st.peer_conn_id == W.conn[1 - i]);
  }
  /* Leave work behind: receives at B, and a message from A whose packets
     were lost (they are in the ring). */
  post_recv(EP_B, 4096);
  post_recv(EP_B, 1000);
  post_send(EP_A, 2500);
  drain(EP_A, 0, 0);
}

/* restart_a replaces A with a new incarnation (a process restart): what
   A had posted is flushed and collected first, as srd_ep_del asks.  B's
   session with the old A ends when the new one completes a handshake. */
static void restart_a(void) {
  srd_settings s = W.settings[EP_A];
  uint32_t i;

  if (W.restarts == MAX_RESTARTS) {
    return;
  }
  ++W.restarts;
  s.seed += 0x100000u * W.restarts;
  poll_all(EP_A);
  srd_ep_flush(W.ep[EP_A], W.now);
  poll_all(EP_A);
  for (i = 0; i < W.n_ops; ++i) {
    CHECK(W.ops[i].ep != EP_A || W.ops[i].done);
  }
  srd_ep_del(W.ep[EP_A]);
  CHECK(srd_ep_new(&W.ep[EP_A], &s, srd_mem_default()) == 0);
  CHECK(srd_ep_add_peer(W.ep[EP_A], &W.ps[EP_A], &W.peer[EP_A]) == 0);
  W.conn[EP_A] = session_id(EP_A);
  W.reads[EP_A] = 0;
}

static void teardown(void) {
  uint32_t i;

  for (i = 0; i < W.n_ops; ++i) {
    free(W.ops[i].buf);
  }
  srd_ep_del(W.ep[EP_A]);
  srd_ep_del(W.ep[EP_B]);
  W.ep[EP_A] = W.ep[EP_B] = NULL;
}

/* ------------------------------------------------------------------------ */
/* The records                                                              */

/* feed_bytes reads a datagram from the input and feeds it to |to|,
   patched with the real incarnation ids if |patch| (and its version, path
   and reserved fields fixed too if |fix|). */
static void feed_bytes(reader *r, int to, uint8_t flags, int patch, int fix,
                       int seal) {
  uint8_t buf[MAX_FEED];
  size_t len = rd16(r) % (MAX_FEED + 1);
  uint16_t path = rd8(r);
  uint32_t split = (flags & 1) ? (uint32_t)rd16(r) + 1 : 0;

  if (len > r->left) {
    len = r->left;
  }
  memcpy(buf, r->p, len);
  r->p += len;
  r->left -= len;
  if (patch && len >= 12) {
    put32(buf + 4, W.conn[1 - to]);
    put32(buf + 8, W.conn[to]);
  }
  if (fix && len >= 16) {
    buf[0] = SRD_PROTO_VERSION;
    buf[12] = 0;
    buf[13] = (uint8_t)(buf[13] % W.n_paths);
    buf[14] = buf[15] = 0;
  }
  if (seal) {
    fuzz_reseal(buf, len, 1);
  }
  feed(to, buf, len, path, split, 0);
}

static void do_mutate(reader *r, uint8_t flags) {
  uint8_t buf[PKT_CAP];
  uint32_t slot, n, i;
  size_t len;
  uint32_t split;
  int same;

  slot = rd8(r);
  n = rd8(r) % 8;
  if (W.ring_n == 0) {
    return;
  }
  slot %= W.ring_n;
  len = W.ring_len[slot];
  memcpy(buf, W.ring[slot], len);
  for (i = 0; i < n; ++i) {
    uint16_t off = rd16(r);
    uint8_t val = rd8(r);
    if (len > 0) {
      buf[off % len] = val;
    }
  }
  if (flags & 2) {
    len = rd16(r) % (len + 1);
  }
  if (flags & 4) {
    fuzz_reseal(buf, len, 1);
  }
  split = (flags & 1) ? (uint32_t)rd16(r) + 1 : 0;
  same = len == W.ring_len[slot] && memcmp(buf, W.ring[slot], len) == 0;
  feed(EP_B, buf, len, (uint16_t)(slot % SRD_MAX_PATHS), split, same);
}

static void do_time(reader *r, uint8_t flags) {
  static const srd_duration unit[] = {SRD_NS, SRD_US, 100 * SRD_US,
                                      10 * SRD_MS};
  uint16_t d = rd16(r);

  advance_to(W.now + (srd_duration)d * unit[flags & 3]);
  if (flags & 4) {
    srd_ep_handle_expiry(W.ep[EP_B], W.now);
  } else {
    run_timers();
  }
}

static size_t rd_len(reader *r, uint8_t flags) {
  if (flags & 2) {
    return rd8(r);
  }
  return rd16(r) % (MAX_MSG + 65);
}

static void do_stats(uint8_t flags) {
  srd_ep_stats st;
  srd_peer_stats ps;
  srd_path_stats pst;
  int ep = flags & 1;
  uint64_t drops = 0;
  int i;

  srd_ep_get_stats(W.ep[ep], &st);
  CHECK(st.pkts_in == W.reads[ep]);
  for (i = 0; i < SRD_DROP_REASONS; ++i) {
    drops += st.drops[i];
  }
  CHECK(drops <= st.pkts_in);
  CHECK(srd_ep_get_peer_stats(W.ep[ep], W.peer[ep], &ps) == 0);
  CHECK(srd_ep_get_path_stats(W.ep[ep], W.peer[ep], flags % W.n_paths, W.now,
                              &pst) == 0);
  CHECK(srd_ep_get_path_stats(W.ep[ep], W.peer[ep], W.n_paths, W.now, &pst) ==
        SRD_ERR_INVALID_ARGUMENT);
}

static void run_record(reader *r) {
  uint8_t op = rd8(r);
  uint8_t flags = op >> 4;

  switch (op & 15) {
  case 0:
    feed_bytes(r, EP_B, flags, 0, 0, (flags & 8) != 0);
    break;
  case 1:
    feed_bytes(r, EP_B, flags, 1, (flags & 2) != 0, !(flags & 8));
    break;
  case 2: {
    uint8_t idx = rd8(r);
    uint32_t split = (flags & 1) ? (uint32_t)rd16(r) + 1 : 0;
    if (W.ring_n > 0) {
      uint32_t slot = idx % W.ring_n;
      feed(EP_B, W.ring[slot], W.ring_len[slot], idx, split, 1);
    }
    break;
  }
  case 3:
    do_mutate(r, flags);
    break;
  case 4:
    do_time(r, flags);
    break;
  case 5: {
    srd_tstamp t = (flags & 1) ? srd_ep_get_expiry(W.ep[EP_B]) : next_expiry();
    if (t != SRD_TSTAMP_NONE) {
      advance_to(t);
    }
    run_timers();
    break;
  }
  case 6:
    drain(EP_B, flags & 1, (flags & 2) != 0);
    break;
  case 7:
    drain(EP_A, flags & 1, (flags & 2) != 0);
    break;
  case 8:
    pump(rd8(r) % 16 + 1);
    break;
  case 9:
    post_send(EP_A, rd_len(r, flags));
    break;
  case 10:
    post_recv(EP_B, rd_len(r, flags));
    break;
  case 11:
    poll_cq(EP_A, rd8(r) % 17);
    break;
  case 12:
    poll_cq(EP_B, rd8(r) % 17);
    break;
  case 13:
    feed_bytes(r, EP_A, flags, !(flags & 4), (flags & 2) != 0, !(flags & 8));
    break;
  case 14:
    if (flags & 1) {
      post_send(EP_B, rd_len(r, flags));
    } else {
      post_recv(EP_A, rd_len(r, flags));
    }
    break;
  default:
    if ((flags & 3) == 3) {
      srd_ep_flush(W.ep[(flags >> 2) & 1], W.now);
    } else if ((flags & 3) == 2) {
      restart_a();
    } else {
      do_stats(flags);
    }
    break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  uint32_t n, i;

  pattern_init();
  setup(rd8(&r));
  for (n = 0; r.left > 0 && n < MAX_RECORDS; ++n) {
    run_record(&r);
  }
  do_stats(0);
  do_stats(1);

  /* Every posted operation ends in exactly one completion: flush what is
     left and collect it all. */
  poll_all(EP_A);
  poll_all(EP_B);
  srd_ep_flush(W.ep[EP_A], W.now);
  srd_ep_flush(W.ep[EP_B], W.now);
  poll_all(EP_A);
  poll_all(EP_B);
  for (i = 0; i < W.n_ops; ++i) {
    CHECK(W.ops[i].done);
  }
  teardown();
  return 0;
}
