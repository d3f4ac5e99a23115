/*
 * test_guarantees.c: seeded adversarial property tests of libsrd's
 * guarantees (docs/protocol.md; the design's "Semantics it must hold"),
 * through the public API only.
 *
 * A virtual-time wire joins two or three endpoints, driven with srd_ep_*
 * calls alone.  For each datagram an endpoint writes, the adversary picks
 * a delay (any delay: a copy may arrive long after every timer, so delay
 * is also deep reordering), may duplicate it, may damage it (random
 * multi-bit flips, byte smears, truncation; a damaged copy replaces the
 * original or comes in addition), may flip, one at a time, every bit of
 * one sample datagram before delivering the original, and records it, to
 * replay it later into a new session.  A driver maps peers to endpoints;
 * a datagram for an endpoint that is down or that has no peer for its
 * sender is dropped, as a real driver with no address would.
 *
 * Every run keeps an oracle:
 *   - each payload starts with its message's index; every delivered
 *     message is compared byte for byte with what was sent, and must
 *     come to the right endpoint from the right peer, once;
 *   - every posted send ends in exactly one completion, every posted
 *     receive in at most one, none for a context the test never posted;
 *   - a send completed OK was delivered to the receiving application by
 *     the end of the run (the test posts enough receives and drains the
 *     wire at the end; receivers that may lose accepted messages by
 *     contract, srd_ep_flush, have the exact messages it names exempted);
 *   - a completion fails only with a status the class allows, and only
 *     where the engine may produce it:
 *       CANCELED    only from inside srd_ep_remove_peer or srd_ep_flush;
 *       PEER_RESET  only for a started send, in the very call in which
 *                   the endpoint logged SRD_LOG_PEER_RESET for that peer,
 *                   and only once the remote really has a new session
 *                   (it restarted, or removed and re-added us);
 *       ABORTED     (receives) only in a call that logged PEER_RESET for
 *                   that peer, or after its sender gave up on a started
 *                   message to us;
 *     every other error is a violation: these wires deliver at least one
 *     intact copy of every datagram within a bounded delay (or lose a few
 *     percent of them at worst, which the retry budget covers by a
 *     margin of 10^-12 a packet), so the retry budget is never really
 *     exhausted;
 *   - an ordered receiver sees each sender's messages in send order;
 *   - a logged PEER_RESET never goes back to an incarnation it replaced;
 *   - no hang: each run is bounded in steps and in virtual time.
 *
 * Classes, and what each allows besides success:
 *   0 control       benign reordering wire; nothing.
 *   1 ordered late  ordered receiver posting late, small unexpected pool,
 *                   small msg_window, rnr_retries unbounded; nothing.
 *   2 re-add        remove and re-add a peer (no restart) with traffic in
 *                   flight both ways, or one way (the other side has
 *                   nothing that would make it look again), sometimes in
 *                   the middle of the first handshake; the old session's
 *                   datagrams replayed into the new one, its handshakes
 *                   again and again while the new one forms, handshake
 *                   datagrams sometimes late; sends CANCELED, PEER_RESET;
 *                   receives CANCELED, ABORTED.
 *   3 restart       srd_ep_del + srd_ep_new (new seed) of one endpoint,
 *                   flushed first or crashed, down for a while, maybe
 *                   re-added by the others, the old incarnation's
 *                   datagrams replayed at random later times; as class 2.
 *                   Sends of a crashed incarnation get no completion.
 *   4 corruption    every single-bit flip of a sample datagram of each
 *                   type (DATA, DATA with an ACK, ACK, HS_REQ, HS_RESP,
 *                   HS_CONFIRM, SYNC; SYNC runs flush the sender), plus
 *                   random damage of random datagrams; sends CANCELED and
 *                   receives ABORTED only around that flush.
 *   5 late dups     duplicates of any datagram delayed past the RTO, many
 *                   RTOs and every timer; nothing, and every send
 *                   completes within 2 s of virtual time.
 *   6 deep reorder  datagrams (data and ACKs) held well past 2 RTOs, so
 *                   sent-ring entries retire before their answers come:
 *                   up to 10% of them at random, or every one on some
 *                   slow paths, or everything one way during pauses of
 *                   up to 20 ms; nothing.
 *   7 wraparound    sessions of 280+ messages, so message ids (and packet
 *                   numbers, which start within 256 of 2^32) cross 2^32;
 *                   nothing, and every such stream's ids must cross.
 *
 * SRD_GUARANTEE_RUNS sets the runs per class (default 1000, the control
 * 200); SRD_TEST_SEED reproduces a whole set; a failing run prints its
 * class, index and sub-seed, and SRD_GUARANTEE_RUN=<index> reruns only
 * that run of each class (SRD_GUARANTEE_TRACE=1 traces completions,
 * actions and violations, 2 adds the engine's log records).
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX_NODES 3
#define MAX_PIDS 8    /* max_peers of every endpoint */
#define PKT_CAP 1536  /* largest datagram: mtu <= 1024 plus headers */
#define NBUF 96       /* receive buffers per endpoint */
#define BUF_CAP 4096  /* largest max_msg_size drawn */
#define REC_CAP 512   /* datagrams kept for replay (a uniform sample) */
#define HS_REC_CAP 64 /* handshake datagrams kept for replay (the latest) */
#define MAX_MSGS 512  /* messages per run */
#define MAX_ACTS 64   /* scripted actions per run */
#define TAG_LEN 16    /* the message tag at the start of every payload */
#define TAG_MAGIC 0x47535244u
#define STEP_CAP 400000u
#define SAME_TIME_CAP 50000u
/* CLASS_STEP_CAP bounds a whole class (about 10x what one takes), so that
   an engine that hangs in every run fails in a minute, not in hours. */
#define CLASS_STEP_CAP 60000000u
#define MAX_REPORTS 5 /* failing runs printed per class */

/* What the adversary needs to know of the wire format to tell sample
   datagrams apart (docs/protocol.md 2.1, unchanged in version 2): the
   type is byte 1 and the flags bytes 2-3; DATA's flag 0x0002 says an
   acknowledgement rides on it. */
#define WIRE_TYPE_OFF 1
#define WIRE_FLAGS_OFF 2
#define WIRE_DATA 1
#define WIRE_ACK 2
#define WIRE_HS_REQ 3
#define WIRE_HS_RESP 4
#define WIRE_HS_CONFIRM 5
#define WIRE_SYNC 6
#define WIRE_DATA_FLAG_ACK 0x0002u

enum {
  S_DATA,
  S_DATA_ACK,
  S_ACK,
  S_HS_REQ,
  S_HS_RESP,
  S_HS_CONFIRM,
  S_SYNC,
  S_KINDS
};
static const char *const sample_names[S_KINDS] = {
    "DATA", "DATA+ACK", "ACK", "HS_REQ", "HS_RESP", "HS_CONFIRM", "SYNC"};

enum {
  V_DUP,
  V_CORRUPT,
  V_MISROUTE,
  V_ORDER,
  V_TWICE,
  V_UNKNOWN,
  V_NOCOMPL,
  V_OK_LOST,
  V_SEND_ERR,
  V_RECV_ERR,
  V_SLOW,
  V_HANG,
  V_REVERT,
  V_API,
  V_COVER,
  V_KINDS
};
static const char *const viol_names[V_KINDS] = {
    "delivered_twice",  "corrupted_delivery", "misrouted_delivery",
    "out_of_order",     "completed_twice",    "unknown_ctx",
    "send_never_done",  "ok_not_delivered",   "bad_send_status",
    "bad_recv_status",  "slow_completion",    "hang",
    "session_reverted", "api_error",          "coverage"};

/* Statuses by index: 0 success, 1..15 SRD_ERR_* -201..-215. */
#define N_ST 16
static int st_index(int status) {
  return status == 0                        ? 0
         : status <= -201 && status >= -215 ? -status - 200
                                            : N_ST - 1;
}

/* Allowed failures, per class. */
#define AL_CANCELED 0x1
#define AL_RESET 0x2
#define AL_ABORTED 0x4

/* Scripted actions. */
enum { A_NOP, A_RECV, A_REMOVE, A_READD, A_DOWN, A_UP, A_FLUSH };
/* C_BOTHWAYS: messages in flight both ways between x and y; C_LIVE: and
   each way has completed one already (the session is up); C_LIVE1: the
   same one way, x to y. */
enum { C_NONE, C_BOTHWAYS, C_LIVE, C_LIVE1, C_ALLPOSTED };
typedef struct action {
  srd_duration at;   /* absolute, or after the previous action if rel */
  srd_duration wait; /* a conditional action fires at the latest then */
  uint8_t kind, cond, rel, x, y;
  uint32_t arg; /* A_RECV: receives to post; A_DOWN: flush first */
} action;

typedef struct cfg {
  int cls;
  uint32_t run;
  uint64_t seed;
  uint32_t allow;
  uint32_t n_nodes;
  srd_settings st; /* every endpoint's, but the seed */
  uint32_t n_paths;
  int ordered[MAX_NODES][MAX_NODES]; /* receiver i orders sender j */
  int late[MAX_NODES];               /* receives only by A_RECV */
  uint32_t n_msgs[MAX_NODES][MAX_NODES];
  srd_duration post_gap;
  int small_sizes;
  /* wire */
  srd_duration dmin, dmax;
  double p_dup;
  int dup_far;
  double p_deep;
  srd_duration deep_min, deep_max;
  uint64_t slow_paths; /* path indices whose every datagram is held */
  srd_duration slow_delay;
  /* Pauses: what |from| writes for |to| in [a, b) is held until b. */
  struct {
    uint8_t from, to;
    srd_tstamp a, b;
  } pause[4];
  uint32_t n_pause;
  double p_corrupt, p_corrupt_replace;
  int sweep_kind; /* S_* or -1 */
  uint32_t sweep_occ;
  double p_replay;
  srd_duration replay_span;
  double p_hs_late; /* a handshake datagram comes late (not lost) */
  /* bounds */
  srd_duration liveness; /* 0: none */
  srd_duration time_cap; /* after the last post and action */
  int want_cross;
  action acts[MAX_ACTS];
  uint32_t n_acts;
} cfg;

typedef struct wpkt {
  uint32_t len;
  uint16_t path;
  uint8_t from, to, sweep;
  uint8_t data[PKT_CAP];
} wpkt;

typedef struct hent {
  srd_tstamp at;
  uint64_t order;
  uint32_t idx;
} hent;

typedef struct msg {
  uint8_t src, dst;
  uint32_t k; /* index in its stream src -> dst */
  uint32_t len;
  uint32_t src_inc;
  srd_peer_id pid;
  srd_tstamp post_at, posted_ts, done_ts;
  int posted, ncompl, orphan, ndeliv;
  srd_tstamp deliv_ts; /* first delivery */
  uint32_t deliv_inc;  /* the receiver's incarnation then */
  int status;
  uint32_t flags, msg_id;
  uint8_t *buf;
} msg;

typedef struct rop {
  uint8_t node, state;
  uint16_t buf;
} rop;
enum { R_POSTED = 1, R_DONE, R_ORPHAN };

struct world;

typedef struct node {
  struct world *w;
  int idx;
  srd_ep *ep;
  int up;
  uint32_t inc;
  int has_peer[MAX_NODES];
  srd_peer_id pid[MAX_NODES];
  int pnode[MAX_PIDS];
  srd_tstamp reset_ts[MAX_PIDS];
  uint32_t old_conn[MAX_PIDS][8];
  uint32_t n_old[MAX_PIDS];
  int canceling, flushing;
  int ample;
  uint32_t target, posted;
  uint16_t free_bufs[NBUF];
  uint32_t n_free;
  uint8_t *bufs;
} node;

typedef struct fexempt {
  uint8_t at, src;
  uint32_t msg_id;
} fexempt;

typedef struct cstats {
  uint64_t runs, failed, msgs, delivered, datagrams, steps;
  uint64_t v[V_KINDS];
  uint64_t send_st[N_ST], recv_st[N_ST];
  uint64_t bad_send_st[N_ST], bad_recv_st[N_ST];
  uint64_t seen[S_KINDS], sweeps[S_KINDS], flips;
  uint64_t resets, replays, corrupted, removes_busy, restarts, crossed;
  srd_tstamp vtime;
} cstats;

typedef struct world {
  const cfg *c;
  uint64_t rng;
  srd_tstamp now, cap;
  uint64_t steps, same;
  int trace;
  node n[MAX_NODES];
  /* wire */
  wpkt *pool;
  uint32_t pool_cap, *pfree, n_pfree;
  hent *heap;
  uint32_t n_heap;
  uint64_t order;
  wpkt *recs; /* REC_CAP sampled, then HS_REC_CAP handshakes */
  uint64_t n_rec_seen, n_hs_seen;
  uint32_t seen[S_KINDS];
  int sweep_done;
  /* messages */
  msg m[MAX_MSGS];
  uint32_t n_m, porder[MAX_MSGS], cursor;
  uint32_t blocked[MAX_MSGS], n_blocked;
  uint32_t n_open;
  uint8_t *payload;
  size_t payload_cap;
  rop *r;
  uint32_t n_r, cap_r;
  /* oracle */
  int64_t last_k[MAX_NODES][MAX_NODES];
  uint32_t stream_failed[MAX_NODES][MAX_NODES];
  uint32_t remote_new[MAX_NODES][MAX_NODES];
  uint32_t gaveup[MAX_NODES][MAX_NODES];
  uint32_t oks[MAX_NODES][MAX_NODES];
  uint32_t removed[MAX_NODES][MAX_NODES]; /* i removed peer j */
  fexempt fx[1024];
  uint32_t n_fx;
  /* actions */
  uint32_t next_act;
  srd_tstamp last_exec;
  int final;
  srd_tstamp final_at;
  /* results */
  cstats *cs;
  uint64_t v[V_KINDS];
  uint64_t datagrams;
} world;

static world W;

/* ------------------------------------------------------------------------ */
/* Randomness                                                               */

static double unif(uint64_t *s) {
  return (double)(tu_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t pick(uint64_t *s, uint64_t lo, uint64_t hi) {
  return lo + tu_rand(s) % (hi - lo + 1);
}

static void viol(world *w, int kind) {
  ++w->v[kind];
  if (w->trace) {
    printf("    [%" PRIu64 "] VIOLATION %s\n", w->now, viol_names[kind]);
  }
}

/* ------------------------------------------------------------------------ */
/* The wire                                                                 */

static int hent_lt(const hent *a, const hent *b) {
  return a->at < b->at || (a->at == b->at && a->order < b->order);
}

static void heap_push(world *w, hent e) {
  uint32_t i = w->n_heap++;

  while (i > 0) {
    uint32_t up = (i - 1) / 2;
    if (!hent_lt(&e, &w->heap[up])) {
      break;
    }
    w->heap[i] = w->heap[up];
    i = up;
  }
  w->heap[i] = e;
}

static hent heap_pop(world *w) {
  hent top = w->heap[0], last = w->heap[--w->n_heap];
  uint32_t i = 0, n = w->n_heap;

  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    const hent *best = &last;
    if (l < n && hent_lt(&w->heap[l], best)) {
      m = l;
      best = &w->heap[l];
    }
    if (r < n && hent_lt(&w->heap[r], best)) {
      m = r;
    }
    if (m == i) {
      break;
    }
    w->heap[i] = w->heap[m];
    i = m;
  }
  if (n > 0) {
    w->heap[i] = last;
  }
  return top;
}

static void schedule(world *w, int from, int to, uint16_t path,
                     const uint8_t *d, size_t len, srd_tstamp at, int sweep) {
  uint32_t idx;
  wpkt *p;
  hent e;

  if (w->n_pfree == 0) {
    uint32_t i, ncap = w->pool_cap * 2;
    w->pool = realloc(w->pool, ncap * sizeof(wpkt));
    w->pfree = realloc(w->pfree, ncap * sizeof(uint32_t));
    w->heap = realloc(w->heap, ncap * sizeof(hent));
    assert_non_null(w->pool);
    assert_non_null(w->pfree);
    assert_non_null(w->heap);
    for (i = w->pool_cap; i < ncap; ++i) {
      w->pfree[w->n_pfree++] = i;
    }
    w->pool_cap = ncap;
  }
  idx = w->pfree[--w->n_pfree];
  p = &w->pool[idx];
  p->len = (uint32_t)len;
  p->path = path;
  p->from = (uint8_t)from;
  p->to = (uint8_t)to;
  p->sweep = (uint8_t)sweep;
  memcpy(p->data, d, len);
  e.at = at;
  e.order = w->order++;
  e.idx = idx;
  heap_push(w, e);
}

static int sample_kind(const uint8_t *d, size_t len) {
  if (len < 4) {
    return -1;
  }
  switch (d[WIRE_TYPE_OFF]) {
  case WIRE_DATA:
    return ((d[WIRE_FLAGS_OFF] << 8 | d[WIRE_FLAGS_OFF + 1]) &
            WIRE_DATA_FLAG_ACK)
               ? S_DATA_ACK
               : S_DATA;
  case WIRE_ACK:
    return S_ACK;
  case WIRE_HS_REQ:
    return S_HS_REQ;
  case WIRE_HS_RESP:
    return S_HS_RESP;
  case WIRE_HS_CONFIRM:
    return S_HS_CONFIRM;
  case WIRE_SYNC:
    return S_SYNC;
  default:
    return -1;
  }
}

static srd_duration span(uint64_t *s, srd_duration lo, srd_duration hi) {
  return (srd_duration)pick(s, lo, hi);
}

/* dup_delay: how late a duplicate comes.  Far duplicates come past the
   RTO, many RTOs, and every timer of the run. */
static srd_duration dup_delay(world *w) {
  double u = unif(&w->rng);

  if (!w->c->dup_far) {
    return u < 0.8 ? span(&w->rng, 0, 200 * SRD_US)
                   : span(&w->rng, 200 * SRD_US, 5 * SRD_MS);
  }
  if (u < 0.2) {
    return span(&w->rng, 0, 100 * SRD_US);
  }
  if (u < 0.5) {
    return span(&w->rng, 200 * SRD_US, 2 * SRD_MS);
  }
  if (u < 0.8) {
    return span(&w->rng, 2 * SRD_MS, 50 * SRD_MS);
  }
  return span(&w->rng, 50 * SRD_MS, 500 * SRD_MS);
}

/* damage corrupts a copy of a datagram: random bit flips, a smeared byte
   range, or a truncation. */
static size_t damage(world *w, uint8_t *d, size_t len) {
  double u = unif(&w->rng);
  uint32_t i, n;

  if (u < 0.6) {
    n = (uint32_t)pick(&w->rng, 1, 8);
    for (i = 0; i < n; ++i) {
      uint64_t bit = pick(&w->rng, 0, len * 8 - 1);
      d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
  } else if (u < 0.9) {
    size_t at = pick(&w->rng, 0, len - 1);
    size_t k = pick(&w->rng, 1, len - at < 16 ? len - at : 16);
    for (i = 0; i < k; ++i) {
      d[at + i] = (uint8_t)tu_rand(&w->rng);
    }
  } else if (len > 1) {
    len = pick(&w->rng, 1, len - 1);
  }
  return len;
}

static void record(world *w, int from, int to, uint16_t path, const uint8_t *d,
                   size_t len, int kind) {
  uint64_t slot;
  wpkt *r;

  if (kind >= S_HS_REQ && kind <= S_HS_CONFIRM) {
    /* Few, and where sessions are decided: all of the latest are kept. */
    slot = REC_CAP + w->n_hs_seen++ % HS_REC_CAP;
  } else if ((slot = w->n_rec_seen++) >= REC_CAP) {
    slot = pick(&w->rng, 0, slot);
    if (slot >= REC_CAP) {
      return;
    }
  }
  r = &w->recs[slot];
  r->from = (uint8_t)from;
  r->to = (uint8_t)to;
  r->path = path;
  r->len = (uint32_t)len;
  memcpy(r->data, d, len);
}

/* replay schedules recorded datagrams between |x| and |y| (either way;
   y < 0: any involving x) to arrive at random later times. */
static void replay(world *w, int x, int y) {
  const cfg *c = w->c;
  uint32_t i, k;
  int kind;

  if (c->p_replay <= 0) {
    return;
  }
  for (i = 0; i < REC_CAP + HS_REC_CAP; ++i) {
    const wpkt *r = &w->recs[i];
    srd_duration d;
    if (i < REC_CAP ? i >= w->n_rec_seen : i - REC_CAP >= w->n_hs_seen) {
      continue;
    }
    if (y < 0
            ? r->from != x && r->to != x
            : !((r->from == x && r->to == y) || (r->from == y && r->to == x))) {
      continue;
    }
    kind = sample_kind(r->data, r->len);
    if (kind >= S_HS_REQ && kind <= S_HS_CONFIRM) {
      /* Handshakes are few and decide sessions: each comes back, more
         than once, in the round trips in which the new session forms. */
      for (k = 0; k < 5; ++k) {
        schedule(w, r->from, r->to, r->path, r->data, r->len,
                 w->now + span(&w->rng, 0, k < 3 ? 300 * SRD_US : 3 * SRD_MS),
                 0);
        ++w->cs->replays;
      }
    }
    if (unif(&w->rng) >= c->p_replay) {
      continue;
    }
    d = unif(&w->rng) < 0.9
            ? span(&w->rng, 0, c->replay_span)
            : span(&w->rng, c->replay_span, 10 * c->replay_span);
    schedule(w, r->from, r->to, r->path, r->data, r->len, w->now + d, 0);
    ++w->cs->replays;
  }
}

/* adversary decides the fate of a datagram |from| wrote for |to|. */
static void adversary(world *w, int from, int to, uint16_t path,
                      const uint8_t *d, size_t len) {
  const cfg *c = w->c;
  int kind = sample_kind(d, len), sweep = 0, n;
  srd_duration delay = span(&w->rng, c->dmin, c->dmax);
  uint8_t bad[PKT_CAP];

  ++w->datagrams;
  record(w, from, to, path, d, len, kind);
  if (kind >= 0) {
    ++w->cs->seen[kind];
    if (kind == c->sweep_kind && !w->sweep_done &&
        w->seen[kind] == c->sweep_occ) {
      sweep = 1;
      w->sweep_done = 1;
    }
    ++w->seen[kind];
  }
  if (c->p_deep > 0 && unif(&w->rng) < c->p_deep) {
    delay += span(&w->rng, c->deep_min, c->deep_max);
  }
  if (kind >= S_HS_REQ && kind <= S_HS_CONFIRM && c->p_hs_late > 0 &&
      unif(&w->rng) < c->p_hs_late) {
    delay += span(&w->rng, 50 * SRD_US, 3 * SRD_MS);
  }
  if (path < 64 && (c->slow_paths >> path & 1)) {
    delay += c->slow_delay;
  }
  for (n = 0; n < (int)c->n_pause; ++n) {
    if (c->pause[n].from == from && c->pause[n].to == to &&
        w->now >= c->pause[n].a && w->now < c->pause[n].b) {
      delay += c->pause[n].b - w->now;
    }
  }
  if (!sweep && c->p_corrupt > 0 && unif(&w->rng) < c->p_corrupt) {
    size_t blen;
    memcpy(bad, d, len);
    blen = damage(w, bad, len);
    ++w->cs->corrupted;
    schedule(w, from, to, path, bad, blen, w->now + delay, 0);
    if (unif(&w->rng) < c->p_corrupt_replace) {
      return; /* damaged in place of the original: a loss */
    }
    delay += span(&w->rng, 0, 20 * SRD_US);
  }
  schedule(w, from, to, path, d, len, w->now + delay, sweep);
  for (n = 0; n < 3 && c->p_dup > 0 && unif(&w->rng) < c->p_dup; ++n) {
    schedule(w, from, to, path, d, len, w->now + delay + dup_delay(w), 0);
  }
}

/* ------------------------------------------------------------------------ */
/* Endpoints                                                                */

static void after_call(world *w, int i);

static void node_log(void *user_data, const srd_log_record *rec) {
  node *nd = user_data;
  uint32_t k, p = rec->peer;

  if (nd->w->trace > 1 && rec->event != SRD_LOG_PEER_RESET) {
    printf("    [%" PRIu64 "] node %d log %s peer %u path %d a=%" PRIu64
           " b=%" PRIu64 "\n",
           rec->ts, nd->idx, srd_log_event_name(rec->event), p, rec->path,
           rec->a, rec->b);
  }
  if (rec->event != SRD_LOG_PEER_RESET || p >= MAX_PIDS) {
    return;
  }
  nd->reset_ts[p] = rec->ts;
  ++nd->w->cs->resets;
  for (k = 0; k < nd->n_old[p]; ++k) {
    if (nd->old_conn[p][k] == (uint32_t)rec->b) {
      viol(nd->w, V_REVERT);
    }
  }
  if (nd->n_old[p] < 8) {
    nd->old_conn[p][nd->n_old[p]++] = (uint32_t)rec->a;
  }
  if (nd->w->trace) {
    printf("    [%" PRIu64 "] node %d peer %u: PEER_RESET %08x -> %08x\n",
           rec->ts, nd->idx, p, (uint32_t)rec->a, (uint32_t)rec->b);
  }
}

static void forget_pid(node *nd, srd_peer_id pid) {
  nd->pnode[pid] = -1;
  nd->reset_ts[pid] = SRD_TSTAMP_NONE;
  nd->n_old[pid] = 0;
}

static int add_peer(world *w, int i, int j) {
  node *nd = &w->n[i];
  srd_peer_settings ps;
  srd_peer_id pid;

  srd_peer_settings_default(&ps);
  ps.n_paths = w->c->n_paths;
  ps.ordered = w->c->ordered[i][j];
  if (srd_ep_add_peer(nd->ep, &ps, &pid) != 0 || pid >= MAX_PIDS) {
    viol(w, V_API);
    return -1;
  }
  forget_pid(nd, pid);
  nd->has_peer[j] = 1;
  nd->pid[j] = pid;
  nd->pnode[pid] = j;
  return 0;
}

static int node_start(world *w, int i) {
  node *nd = &w->n[i];
  srd_settings st = w->c->st;
  uint32_t j;

  st.seed = tu_rand(&w->rng);
  st.log = node_log;
  st.user_data = nd;
  if (srd_ep_new(&nd->ep, &st, srd_mem_default()) != 0) {
    viol(w, V_API);
    return -1;
  }
  assert_true(srd_ep_max_pkt_size(nd->ep) <= PKT_CAP);
  nd->up = 1;
  ++nd->inc;
  nd->posted = 0;
  nd->n_free = NBUF;
  for (j = 0; j < NBUF; ++j) {
    nd->free_bufs[j] = (uint16_t)j;
  }
  for (j = 0; j < MAX_PIDS; ++j) {
    forget_pid(nd, j);
  }
  for (j = 0; j < w->c->n_nodes; ++j) {
    nd->has_peer[j] = 0;
    if (j != (uint32_t)i && add_peer(w, i, (int)j) != 0) {
      return -1;
    }
  }
  return 0;
}

static void post_recvs(world *w, int i, uint32_t n) {
  node *nd = &w->n[i];

  while (n-- > 0 && nd->up && nd->n_free > 0) {
    uint16_t b = nd->free_bufs[--nd->n_free];
    rop *r;
    int rv;

    if (w->n_r == w->cap_r) {
      w->cap_r = w->cap_r ? 2 * w->cap_r : 1024;
      w->r = realloc(w->r, w->cap_r * sizeof(rop));
      assert_non_null(w->r);
    }
    r = &w->r[w->n_r];
    r->node = (uint8_t)i;
    r->state = R_POSTED;
    r->buf = b;
    ++w->n_r;
    ++nd->posted;
    rv = srd_ep_post_recv(nd->ep, nd->bufs + (size_t)b * BUF_CAP, BUF_CAP,
                          (void *)(uintptr_t)w->n_r, w->now);
    if (rv != 0) {
      viol(w, V_API);
      r->state = R_DONE;
      --nd->posted;
      nd->free_bufs[nd->n_free++] = b;
      return;
    }
  }
}

static void replenish(world *w, int i) {
  node *nd = &w->n[i];

  if (nd->up && nd->ample && nd->posted < nd->target) {
    post_recvs(w, i, nd->target - nd->posted);
  }
}

/* ------------------------------------------------------------------------ */
/* The oracle                                                               */

static int exempt(const world *w, const msg *m) {
  uint32_t i;

  for (i = 0; i < w->n_fx; ++i) {
    if (w->fx[i].at == m->dst && w->fx[i].src == m->src &&
        w->fx[i].msg_id == m->msg_id) {
      return 1;
    }
  }
  return 0;
}

/* delivered checks a message node |i| received from its peer |pid|. */
static void delivered(world *w, int i, srd_peer_id pid, const uint8_t *b,
                      size_t len) {
  node *nd = &w->n[i];
  uint32_t tag[4], idx;
  msg *m;

  if (len < TAG_LEN) {
    viol(w, V_CORRUPT);
    return;
  }
  memcpy(tag, b, sizeof(tag));
  idx = tag[1];
  if (tag[0] != TAG_MAGIC || idx >= w->n_m || w->m[idx].len != len ||
      memcmp(b, w->m[idx].buf, len) != 0) {
    viol(w, V_CORRUPT);
    return;
  }
  m = &w->m[idx];
  ++w->cs->delivered;
  /* A message that arrived whole before its sender was removed is
     delivered with no peer (srd_ep_remove_peer). */
  if (m->dst != i ||
      (pid == UINT32_MAX ? !w->removed[i][m->src]
                         : pid >= MAX_PIDS || nd->pnode[pid] != m->src)) {
    viol(w, V_MISROUTE);
  }
  if (++m->ndeliv > 1) {
    viol(w, V_DUP);
    if (w->trace) {
      printf("    [%" PRIu64 "] msg #%u (%u->%u k=%u id=%08x) delivered again"
             " at incarnation %u, first at %" PRIu64 " (incarnation %u)\n",
             w->now, idx, m->src, m->dst, m->k, m->msg_id, nd->inc, m->deliv_ts,
             m->deliv_inc);
    }
    return;
  }
  m->deliv_ts = w->now;
  m->deliv_inc = nd->inc;
  if (w->c->ordered[m->dst][m->src] && w->c->cls != 2 && w->c->cls != 3) {
    int64_t *last = &w->last_k[m->src][m->dst];
    if ((int64_t)m->k <= *last ||
        ((int64_t)m->k != *last + 1 && !w->stream_failed[m->src][m->dst])) {
      viol(w, V_ORDER);
      if (w->trace) {
        printf("    [%" PRIu64 "] msg #%u (%u->%u k=%u id=%08x) delivered"
               " after k=%" PRId64 "\n",
               w->now, idx, m->src, m->dst, m->k, m->msg_id, *last);
      }
    }
    if ((int64_t)m->k > *last) {
      *last = m->k;
    }
  }
}

static void on_send_cqe(world *w, int i, const srd_cqe *e) {
  node *nd = &w->n[i];
  uintptr_t ctx = (uintptr_t)e->user_ctx;
  const cfg *c = w->c;
  msg *m;
  int ok;

  if (ctx == 0 || ctx > w->n_m) {
    viol(w, V_UNKNOWN);
    return;
  }
  m = &w->m[ctx - 1];
  if (!m->posted || m->src != i || m->src_inc != nd->inc) {
    viol(w, V_UNKNOWN);
    return;
  }
  if (m->ncompl++ > 0) {
    viol(w, V_TWICE);
    return;
  }
  --w->n_open;
  m->status = e->status;
  m->flags = e->flags;
  m->msg_id = e->msg_id;
  m->done_ts = e->ts;
  if (e->buf != m->buf || e->len != m->len || e->peer != m->pid) {
    viol(w, V_API);
  }
  ++w->cs->send_st[st_index(e->status)];
  if (e->status != 0 && (e->flags & SRD_CQE_F_STARTED)) {
    ++w->gaveup[m->src][m->dst];
  }
  if (e->status != 0) {
    ++w->stream_failed[m->src][m->dst];
  }
  switch (e->status) {
  case 0:
    ok = 1;
    ++w->oks[m->src][m->dst];
    if (c->liveness && e->ts - m->posted_ts > c->liveness) {
      viol(w, V_SLOW);
    }
    break;
  case SRD_ERR_CANCELED:
    ok = (c->allow & AL_CANCELED) && nd->canceling;
    break;
  case SRD_ERR_PEER_RESET:
    ok = (c->allow & AL_RESET) && (e->flags & SRD_CQE_F_STARTED) &&
         e->peer < MAX_PIDS && nd->reset_ts[e->peer] == e->ts &&
         w->remote_new[i][m->dst] > 0;
    break;
  default:
    ok = 0;
    break;
  }
  if (!ok) {
    viol(w, V_SEND_ERR);
    ++w->cs->bad_send_st[st_index(e->status)];
  }
  if (w->trace) {
    printf("    [%" PRIu64 "] node %d send #%u (%u->%u k=%u len=%u id=%08x)"
           " done: %s%s\n",
           w->now, i, (unsigned)(ctx - 1), m->src, m->dst, m->k, m->len,
           e->msg_id, e->status ? srd_strerror(e->status) : "ok",
           ok ? "" : "  <-- not allowed");
  }
}

static void on_recv_cqe(world *w, int i, const srd_cqe *e) {
  node *nd = &w->n[i];
  uintptr_t ctx = (uintptr_t)e->user_ctx;
  const cfg *c = w->c;
  rop *r;
  int ok = 1, src;

  if (ctx == 0 || ctx > w->n_r) {
    viol(w, V_UNKNOWN);
    return;
  }
  r = &w->r[ctx - 1];
  if (r->node != i || r->state == R_ORPHAN) {
    viol(w, V_UNKNOWN);
    return;
  }
  if (r->state != R_POSTED) {
    viol(w, V_TWICE);
    return;
  }
  r->state = R_DONE;
  --nd->posted;
  ++w->cs->recv_st[st_index(e->status)];
  src = e->peer < MAX_PIDS ? nd->pnode[e->peer] : -1;
  if (e->buf != nd->bufs + (size_t)r->buf * BUF_CAP) {
    viol(w, V_API);
  } else if (e->status == 0) {
    if (e->len > BUF_CAP) {
      viol(w, V_CORRUPT);
    } else {
      delivered(w, i, e->peer, e->buf, e->len);
    }
  }
  switch (e->status) {
  case 0:
    break;
  case SRD_ERR_CANCELED:
    ok = (c->allow & AL_CANCELED) && nd->canceling;
    /* A flushed receive's message is taken in and dropped (srd.h): its
       sender may complete OK; this names the one message that may. */
    if (ok && nd->flushing && src >= 0 && w->n_fx < 1024) {
      w->fx[w->n_fx].at = (uint8_t)i;
      w->fx[w->n_fx].src = (uint8_t)src;
      w->fx[w->n_fx].msg_id = e->msg_id;
      ++w->n_fx;
    }
    break;
  case SRD_ERR_ABORTED:
    ok =
        (c->allow & AL_ABORTED) && e->peer < MAX_PIDS &&
        (nd->reset_ts[e->peer] == e->ts || (src >= 0 && w->gaveup[src][i] > 0));
    break;
  default:
    ok = 0;
    break;
  }
  if (!ok) {
    viol(w, V_RECV_ERR);
    ++w->cs->bad_recv_st[st_index(e->status)];
  }
  if (w->trace && e->status != 0) {
    printf("    [%" PRIu64 "] node %d recv failed: %s%s\n", w->now, i,
           srd_strerror(e->status), ok ? "" : "  <-- not allowed");
  }
  nd->free_bufs[nd->n_free++] = r->buf;
}

static void retry_blocked(world *w);

static int poll_node(world *w, int i) {
  node *nd = &w->n[i];
  srd_cqe cq[32];
  size_t n, k;
  int any = 0, sends = 0;

  if (!nd->up) {
    return 0;
  }
  while ((n = srd_ep_poll_cq(nd->ep, cq, 32)) > 0) {
    any = 1;
    for (k = 0; k < n; ++k) {
      if (cq[k].op == SRD_OP_SEND) {
        on_send_cqe(w, i, &cq[k]);
        sends = 1;
      } else if (cq[k].op == SRD_OP_RECV) {
        on_recv_cqe(w, i, &cq[k]);
      } else {
        viol(w, V_API);
      }
    }
  }
  if (sends && w->n_blocked > 0) {
    retry_blocked(w); /* a send slot came free */
  }
  return any;
}

static void drain(world *w, int i) {
  node *nd = &w->n[i];
  uint8_t buf[PKT_CAP];

  while (nd->up) {
    srd_path path;
    srd_ssize n = srd_ep_write_pkt(nd->ep, &path, buf, sizeof(buf), w->now);
    int j;
    if (n == 0) {
      break;
    }
    if (n < 0) {
      viol(w, V_API);
      break;
    }
    j = path.peer < MAX_PIDS ? nd->pnode[path.peer] : -1;
    if (j < 0) {
      viol(w, V_API);
      continue;
    }
    adversary(w, i, j, path.path, buf, (size_t)n);
  }
}

/* after_call settles endpoint |i| after any call into it: completions
   polled, receives reposted, datagrams written. */
static void after_call(world *w, int i) {
  int rounds;

  for (rounds = 0; rounds < 8; ++rounds) {
    int any = poll_node(w, i);
    replenish(w, i);
    any |= poll_node(w, i);
    drain(w, i);
    any |= poll_node(w, i);
    if (!any) {
      break;
    }
  }
}

static void read_into(world *w, int from, int to, uint16_t path,
                      const uint8_t *d, size_t len) {
  node *nd = &w->n[to];
  srd_path p;

  if (!nd->up || !nd->has_peer[from]) {
    return; /* no endpoint, or no peer for that address: dropped */
  }
  p.peer = nd->pid[from];
  p.path = path;
  (void)srd_ep_read_pkt(nd->ep, &p, d, len, w->now);
  after_call(w, to);
}

static void deliver_next(world *w) {
  hent e = heap_pop(w);
  wpkt p;

  /* Copy it out: delivering makes more datagrams, which may move the
     pool. */
  memcpy(&p, &w->pool[e.idx], offsetof(wpkt, data) + w->pool[e.idx].len);
  w->pfree[w->n_pfree++] = e.idx;
  if (p.sweep) {
    uint8_t flip[PKT_CAP];
    size_t bit;
    for (bit = 0; bit < (size_t)p.len * 8; ++bit) {
      memcpy(flip, p.data, p.len);
      flip[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      read_into(w, p.from, p.to, p.path, flip, p.len);
    }
    ++w->cs->sweeps[w->c->sweep_kind];
    w->cs->flips += (uint64_t)p.len * 8;
  }
  read_into(w, p.from, p.to, p.path, p.data, p.len);
}

/* ------------------------------------------------------------------------ */
/* Posting                                                                  */

static int try_post(world *w, uint32_t idx) {
  msg *m = &w->m[idx];
  node *nd = &w->n[m->src];
  int rv;

  if (!nd->up || !nd->has_peer[m->dst]) {
    return -1;
  }
  rv = srd_ep_post_send(nd->ep, nd->pid[m->dst], m->buf, m->len,
                        (void *)(uintptr_t)(idx + 1), w->now);
  if (rv == SRD_ERR_AGAIN) {
    return -1;
  }
  if (rv != 0) {
    viol(w, V_API);
    return 0; /* never posted: it owes no completion */
  }
  m->posted = 1;
  m->posted_ts = w->now;
  m->src_inc = nd->inc;
  m->pid = nd->pid[m->dst];
  ++w->n_open;
  after_call(w, m->src);
  return 0;
}

/* retry_blocked posts, in order, sends that could not be posted when due
   (their peer was removed or down, or the send slots were full).  A
   stream's messages stay in order: once one is blocked, the rest of its
   stream waits behind it. */
static void retry_blocked(world *w) {
  static int busy, again;
  int stuck[MAX_NODES][MAX_NODES];
  uint32_t list[MAX_MSGS], i, n;

  if (busy) {
    again = 1; /* re-entered through a completion: go round once more */
    return;
  }
  busy = 1;
  do {
    again = 0;
    n = w->n_blocked;
    memcpy(list, w->blocked, n * sizeof(uint32_t));
    w->n_blocked = 0;
    memset(stuck, 0, sizeof(stuck));
    for (i = 0; i < n; ++i) {
      const msg *m = &w->m[list[i]];
      if (stuck[m->src][m->dst] || try_post(w, list[i]) != 0) {
        stuck[m->src][m->dst] = 1;
        w->blocked[w->n_blocked++] = list[i];
      }
    }
  } while (again && w->n_blocked > 0);
  busy = 0;
}

static int stream_blocked(const world *w, const msg *m) {
  uint32_t i;

  for (i = 0; i < w->n_blocked; ++i) {
    const msg *b = &w->m[w->blocked[i]];
    if (b->src == m->src && b->dst == m->dst) {
      return 1;
    }
  }
  return 0;
}

static void post_due(world *w) {
  while (w->cursor < w->n_m && w->m[w->porder[w->cursor]].post_at <= w->now) {
    uint32_t idx = w->porder[w->cursor++];
    if (stream_blocked(w, &w->m[idx]) || try_post(w, idx) != 0) {
      w->blocked[w->n_blocked++] = idx;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Actions                                                                  */

static int in_flight(const world *w, int x, int y) {
  uint32_t i;

  for (i = 0; i < w->n_m; ++i) {
    const msg *m = &w->m[i];
    if (m->src == x && m->dst == y && m->posted && !m->ncompl && !m->orphan) {
      return 1;
    }
  }
  return 0;
}

static int cond_holds(const world *w, const action *a) {
  switch (a->cond) {
  case C_BOTHWAYS:
    return in_flight(w, a->x, a->y) && in_flight(w, a->y, a->x);
  case C_LIVE:
    return w->oks[a->x][a->y] > 0 && w->oks[a->y][a->x] > 0 &&
           in_flight(w, a->x, a->y) && in_flight(w, a->y, a->x);
  case C_LIVE1:
    return w->oks[a->x][a->y] > 0 && in_flight(w, a->x, a->y);
  case C_ALLPOSTED:
    return w->cursor == w->n_m && w->n_blocked == 0;
  default:
    return 1;
  }
}

static srd_tstamp action_time(const world *w) {
  const action *a;
  srd_tstamp at;

  if (w->next_act >= w->c->n_acts) {
    return SRD_TSTAMP_NONE;
  }
  a = &w->c->acts[w->next_act];
  at = a->rel ? w->last_exec + a->at : a->at;
  if (a->cond == C_NONE || w->now < at) {
    return at;
  }
  if (cond_holds(w, a) || w->now >= at + a->wait) {
    return w->now;
  }
  return at + a->wait;
}

static void cancel_call(world *w, int i, int flush, int y) {
  node *nd = &w->n[i];

  nd->canceling = 1;
  nd->flushing = flush;
  if (flush) {
    srd_ep_flush(nd->ep, w->now);
  } else if (srd_ep_remove_peer(nd->ep, nd->pid[y], w->now) != 0) {
    viol(w, V_API);
  }
  poll_node(w, i);
  nd->canceling = nd->flushing = 0;
}

static void node_down(world *w, int r, int flush) {
  node *nd = &w->n[r];
  uint32_t i;

  if (flush) {
    cancel_call(w, r, 1, -1);
  }
  /* A crashed incarnation's operations end with it, without a
     completion. */
  for (i = 0; i < w->n_m; ++i) {
    msg *m = &w->m[i];
    if (m->src == r && m->posted && !m->ncompl && !m->orphan) {
      m->orphan = 1;
      --w->n_open;
    }
  }
  for (i = 0; i < w->n_r; ++i) {
    if (w->r[i].node == r && w->r[i].state == R_POSTED) {
      w->r[i].state = R_ORPHAN;
    }
  }
  srd_ep_del(nd->ep);
  nd->ep = NULL;
  nd->up = 0;
  for (i = 0; i < MAX_NODES; ++i) {
    nd->has_peer[i] = 0;
  }
  ++w->cs->restarts;
}

static void exec_action(world *w, const action *a) {
  node *nx = &w->n[a->x];
  uint32_t j;

  if (w->trace) {
    printf("    [%" PRIu64 "] action %d x=%d y=%d arg=%u\n", w->now, a->kind,
           a->x, a->y, a->arg);
  }
  switch (a->kind) {
  case A_RECV:
    post_recvs(w, a->x, a->arg);
    after_call(w, a->x);
    break;
  case A_REMOVE:
    if (!nx->up || !nx->has_peer[a->y]) {
      break;
    }
    if (in_flight(w, a->x, a->y) && in_flight(w, a->y, a->x)) {
      ++w->cs->removes_busy;
    }
    cancel_call(w, a->x, 0, a->y);
    ++w->removed[a->x][a->y];
    forget_pid(nx, nx->pid[a->y]);
    nx->has_peer[a->y] = 0;
    after_call(w, a->x);
    break;
  case A_READD:
    if (!nx->up || nx->has_peer[a->y]) {
      break;
    }
    if (add_peer(w, a->x, a->y) == 0) {
      /* y's sessions with x are new from here: what y had in flight to
         x may end in PEER_RESET. */
      ++w->remote_new[a->y][a->x];
      replay(w, a->x, a->y);
      retry_blocked(w);
      after_call(w, a->x);
    }
    break;
  case A_DOWN:
    if (nx->up) {
      node_down(w, a->x, (int)a->arg);
    }
    break;
  case A_UP:
    if (nx->up || node_start(w, a->x) != 0) {
      break;
    }
    for (j = 0; j < w->c->n_nodes; ++j) {
      if (j != a->x) {
        ++w->remote_new[j][a->x];
      }
    }
    replay(w, a->x, -1);
    replenish(w, a->x);
    retry_blocked(w);
    after_call(w, a->x);
    break;
  case A_FLUSH:
    if (nx->up) {
      cancel_call(w, a->x, 1, -1);
      after_call(w, a->x);
    }
    break;
  default:
    break;
  }
}

/* ------------------------------------------------------------------------ */
/* A run                                                                    */

static uint32_t draw_size(uint64_t *s, const cfg *c) {
  uint32_t mtu = c->st.mtu, max = c->st.max_msg_size;
  double u = unif(s);

  if (c->small_sizes && u < 0.9) {
    return (uint32_t)pick(s, TAG_LEN, mtu);
  }
  if (u < 0.25) {
    return (uint32_t)pick(s, TAG_LEN, 64);
  }
  if (u < 0.45) {
    return (uint32_t)pick(s, 65, mtu);
  }
  if (u < 0.55) {
    return mtu;
  }
  if (u < 0.9 && max > mtu) {
    return (uint32_t)pick(s, mtu + 1, max);
  }
  return max;
}

static int by_post_at(const void *a, const void *b) {
  const msg *x = &W.m[*(const uint32_t *)a], *y = &W.m[*(const uint32_t *)b];

  if (x->post_at != y->post_at) {
    return x->post_at < y->post_at ? -1 : 1;
  }
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void build_msgs(world *w, uint64_t *s) {
  const cfg *c = w->c;
  uint32_t i, j, k, next_k[MAX_NODES][MAX_NODES];
  size_t total = 0, off = 0;

  memset(next_k, 0, sizeof(next_k));
  w->n_m = 0;
  for (i = 0; i < c->n_nodes; ++i) {
    uint32_t left = 0;
    srd_tstamp t = span(s, 0, 20 * SRD_US);
    for (j = 0; j < c->n_nodes; ++j) {
      left += c->n_msgs[i][j];
    }
    while (left > 0) {
      uint64_t r = pick(s, 0, left - 1);
      msg *m;
      for (j = 0; r >= c->n_msgs[i][j] - next_k[i][j]; ++j) {
        r -= c->n_msgs[i][j] - next_k[i][j];
      }
      assert_true(w->n_m < MAX_MSGS);
      m = &w->m[w->n_m++];
      memset(m, 0, sizeof(*m));
      m->src = (uint8_t)i;
      m->dst = (uint8_t)j;
      m->k = next_k[i][j]++;
      m->len = draw_size(s, c);
      m->post_at = t;
      total += m->len;
      --left;
      if (unif(s) >= 0.3) {
        t += span(s, 0, 2 * c->post_gap);
      }
    }
  }
  if (total > w->payload_cap) {
    w->payload_cap = total;
    w->payload = realloc(w->payload, total);
    assert_non_null(w->payload);
  }
  for (i = 0; i < w->n_m; ++i) {
    msg *m = &w->m[i];
    uint32_t tag[4] = {TAG_MAGIC, i, m->len, (uint32_t)c->seed};
    m->buf = w->payload + off;
    off += m->len;
    memcpy(m->buf, tag, sizeof(tag));
    for (k = TAG_LEN; k < m->len; k += 8) {
      uint64_t v = tu_rand(s);
      memcpy(m->buf + k, &v, m->len - k < 8 ? m->len - k : 8);
    }
    w->porder[i] = i;
  }
  qsort(w->porder, w->n_m, sizeof(uint32_t), by_post_at);
}

static void world_reset(world *w, const cfg *c, cstats *cs, int trace) {
  uint32_t i, j;

  w->c = c;
  w->cs = cs;
  w->trace = trace;
  w->rng = tu_rand(&(uint64_t){c->seed ^ 0x5bd1e995u});
  w->now = 0;
  w->steps = w->same = 0;
  w->n_heap = 0;
  w->n_pfree = 0;
  for (i = 0; i < w->pool_cap; ++i) {
    w->pfree[w->n_pfree++] = w->pool_cap - 1 - i;
  }
  w->order = 0;
  w->n_rec_seen = w->n_hs_seen = 0;
  memset(w->seen, 0, sizeof(w->seen));
  w->sweep_done = 0;
  w->cursor = w->n_blocked = w->n_open = 0;
  w->n_r = 0;
  for (i = 0; i < MAX_NODES; ++i) {
    for (j = 0; j < MAX_NODES; ++j) {
      w->last_k[i][j] = -1;
    }
  }
  memset(w->stream_failed, 0, sizeof(w->stream_failed));
  memset(w->remote_new, 0, sizeof(w->remote_new));
  memset(w->gaveup, 0, sizeof(w->gaveup));
  memset(w->oks, 0, sizeof(w->oks));
  memset(w->removed, 0, sizeof(w->removed));
  w->n_fx = 0;
  w->next_act = 0;
  w->last_exec = 0;
  w->final = 0;
  memset(w->v, 0, sizeof(w->v));
  w->datagrams = 0;
  for (i = 0; i < MAX_NODES; ++i) {
    node *nd = &w->n[i];
    nd->w = w;
    nd->idx = (int)i;
    nd->ep = NULL;
    nd->up = 0;
    nd->inc = 0;
    nd->canceling = nd->flushing = 0;
    nd->ample = !c->late[i];
    /* Enough posted receives that no message waits in the unexpected
       pool: a message takes a receive at its first fragment, and each
       peer has at most msg_window in flight. */
    nd->target = 2 * (c->n_nodes - 1) * c->st.msg_window + 4;
    if (nd->target > NBUF) {
      nd->target = NBUF;
    }
  }
}

static int main_done(const world *w) {
  return w->cursor == w->n_m && w->n_blocked == 0 &&
         w->next_act == w->c->n_acts && w->n_open == 0;
}

static void enter_final(world *w) {
  uint32_t i;

  w->final = 1;
  w->final_at = w->now;
  for (i = 0; i < w->c->n_nodes; ++i) {
    node *nd = &w->n[i];
    if (nd->up) {
      nd->ample = 1;
      nd->target = NBUF;
      replenish(w, (int)i);
      after_call(w, (int)i);
    }
  }
}

static void loop(world *w) {
  const cfg *c = w->c;
  srd_tstamp last_t = 0;

  for (;;) {
    srd_tstamp tw, te = SRD_TSTAMP_NONE, ta, tp, t;
    int ie = -1;
    uint32_t i;

    if (!w->final && main_done(w)) {
      enter_final(w);
    }
    tw = w->n_heap ? w->heap[0].at : SRD_TSTAMP_NONE;
    for (i = 0; i < c->n_nodes; ++i) {
      if (w->n[i].up) {
        srd_tstamp x = srd_ep_get_expiry(w->n[i].ep);
        if (x < te) {
          te = x;
          ie = (int)i;
        }
      }
    }
    ta = action_time(w);
    tp = w->cursor < w->n_m ? w->m[w->porder[w->cursor]].post_at
                            : SRD_TSTAMP_NONE;
    if (w->final && tw == SRD_TSTAMP_NONE &&
        (te == SRD_TSTAMP_NONE || te > w->now + 100 * SRD_MS ||
         w->now > w->final_at + SRD_S)) {
      break; /* drained */
    }
    t = tw;
    t = te < t ? te : t;
    t = ta < t ? ta : t;
    t = tp < t ? tp : t;
    if (t == SRD_TSTAMP_NONE) {
      break; /* nothing can happen any more */
    }
    if (t > w->cap || ++w->steps > STEP_CAP) {
      viol(w, V_HANG);
      break;
    }
    if (t > w->now) {
      w->now = t;
    }
    if (w->now == last_t) {
      if (++w->same > SAME_TIME_CAP) {
        viol(w, V_HANG);
        break;
      }
    } else {
      w->same = 0;
      last_t = w->now;
    }
    if (tw == t) {
      deliver_next(w);
    } else if (te == t) {
      srd_ep_handle_expiry(w->n[ie].ep, w->now);
      after_call(w, ie);
    } else if (ta == t) {
      const action *a = &c->acts[w->next_act++];
      w->last_exec = w->now;
      exec_action(w, a);
    } else {
      post_due(w);
    }
  }
}

static void check_run(world *w) {
  const cfg *c = w->c;
  uint32_t i;
  int hi[MAX_NODES][MAX_NODES], lo[MAX_NODES][MAX_NODES];
  uint32_t ok[MAX_NODES][MAX_NODES];

  memset(hi, 0, sizeof(hi));
  memset(lo, 0, sizeof(lo));
  memset(ok, 0, sizeof(ok));
  for (i = 0; i < w->n_m; ++i) {
    const msg *m = &w->m[i];
    if (m->posted && !m->orphan && m->ncompl == 0) {
      viol(w, V_NOCOMPL);
    }
    if (m->ncompl && m->status == 0) {
      if (m->ndeliv == 0 && !exempt(w, m)) {
        viol(w, V_OK_LOST);
      }
      ++ok[m->src][m->dst];
      hi[m->src][m->dst] |= m->msg_id >= 0xFFFFFF00u;
      lo[m->src][m->dst] |= m->msg_id < 0x100u;
    }
  }
  if (c->want_cross) {
    uint32_t j;
    for (i = 0; i < c->n_nodes; ++i) {
      for (j = 0; j < c->n_nodes; ++j) {
        if (ok[i][j] >= 256) {
          if (hi[i][j] && lo[i][j]) {
            ++w->cs->crossed;
          } else {
            viol(w, V_COVER);
          }
        }
      }
    }
  }
}

static void print_cfg(const cfg *c) {
  uint32_t i, j;

  print_error("  nodes=%u paths=%u mtu=%u max_msg=%u msg_window=%u "
              "pkt_window=%u unexp=%u/%u rnr_retries=%u post_gap=%" PRIu64
              " delay=%" PRIu64 "..%" PRIu64 " dup=%.3f far=%d deep=%.3f "
              "slow=%" PRIx64 "/%" PRIu64 " pauses=%u "
              "corrupt=%.3f/%.2f sweep=%s#%u replay=%.2f\n",
              c->n_nodes, c->n_paths, c->st.mtu, c->st.max_msg_size,
              c->st.msg_window, c->st.pkt_window, c->st.unexp_msgs,
              c->st.unexp_bytes, c->st.rnr_retries, c->post_gap, c->dmin,
              c->dmax, c->p_dup, c->dup_far, c->p_deep, c->slow_paths,
              c->slow_delay, c->n_pause, c->p_corrupt, c->p_corrupt_replace,
              c->sweep_kind >= 0 ? sample_names[c->sweep_kind] : "-",
              c->sweep_occ, c->p_replay);
  for (i = 0; i < c->n_nodes; ++i) {
    for (j = 0; j < c->n_nodes; ++j) {
      if (c->n_msgs[i][j]) {
        print_error("  stream %u->%u: %u msgs%s%s\n", i, j, c->n_msgs[i][j],
                    c->ordered[j][i] ? ", ordered" : "",
                    c->late[j] ? ", receiver posts late" : "");
      }
    }
  }
  for (i = 0; i < c->n_pause; ++i) {
    print_error("  pause %u->%u: %" PRIu64 "..%" PRIu64 "\n", c->pause[i].from,
                c->pause[i].to, c->pause[i].a, c->pause[i].b);
  }
  for (i = 0; i < c->n_acts; ++i) {
    const action *a = &c->acts[i];
    print_error(
        "  action %u: kind=%d x=%d y=%d arg=%u at=%s%" PRIu64 " cond=%d\n", i,
        a->kind, a->x, a->y, a->arg, a->rel ? "+" : "", a->at, a->cond);
  }
}

/* run_one runs |c| and returns the number of violations. */
static uint64_t run_one(const cfg *c, cstats *cs, int trace) {
  world *w = &W;
  srd_tstamp last = 0;
  uint64_t s = c->seed ^ 0x2545F4914F6CDD1DULL, total = 0;
  uint32_t i;

  world_reset(w, c, cs, trace);
  build_msgs(w, &s);
  for (i = 0; i < w->n_m; ++i) {
    last = w->m[i].post_at > last ? w->m[i].post_at : last;
  }
  for (i = 0; i < c->n_acts; ++i) {
    last += c->acts[i].at + c->acts[i].wait;
  }
  w->cap = last + c->time_cap;
  for (i = 0; i < c->n_nodes; ++i) {
    if (node_start(w, (int)i) != 0) {
      goto out;
    }
  }
  for (i = 0; i < c->n_nodes; ++i) {
    replenish(w, (int)i);
    after_call(w, (int)i);
  }
  loop(w);
  check_run(w);
  for (i = 0; trace && i < c->n_nodes; ++i) {
    uint32_t j;
    for (j = 0; w->n[i].up && j < c->n_nodes; ++j) {
      srd_peer_stats ps;
      if (j == i || !w->n[i].has_peer[j] ||
          srd_ep_get_peer_stats(w->n[i].ep, w->n[i].pid[j], &ps) != 0) {
        continue;
      }
      printf("    end: node %u peer %u: state=%d srtt=%" PRIu64
             " rttvar=%" PRIu64 " min_rtt=%" PRIu64 " rto=%" PRIu64
             " cwnd=%" PRIu64 " inflight=%" PRIu64 " retx=%" PRIu64 "\n",
             i, j, (int)ps.state, ps.srtt, ps.rttvar, ps.min_rtt, ps.rto,
             ps.cwnd, ps.inflight, ps.retransmits);
    }
  }
out:
  for (i = 0; i < c->n_nodes; ++i) {
    if (w->n[i].up) {
      srd_ep_del(w->n[i].ep);
      w->n[i].up = 0;
    }
  }
  for (i = 0; i < V_KINDS; ++i) {
    cs->v[i] += w->v[i];
    total += w->v[i];
  }
  cs->msgs += w->n_m;
  cs->datagrams += w->datagrams;
  cs->steps += w->steps;
  cs->vtime += w->now;
  return total;
}

/* ------------------------------------------------------------------------ */
/* Drawing runs                                                             */

static void draw_common(cfg *c, uint64_t *s) {
  static const uint32_t windows[] = {4, 8, 16, 32};
  static const uint32_t pkt_windows[] = {16, 32, 64, 512};
  static const uint32_t max_msgs[] = {1024, 2048, 4096};
  uint32_t i;

  srd_settings_default(&c->st);
  c->st.mtu = (uint32_t)pick(s, 256, 1024);
  c->st.max_msg_size = max_msgs[pick(s, 0, 2)];
  if (c->st.max_msg_size < c->st.mtu) {
    c->st.max_msg_size = c->st.mtu;
  }
  c->st.max_peers = MAX_PIDS;
  c->st.max_sends = 512;
  c->st.max_recvs = 256;
  c->st.msg_window = windows[pick(s, 0, 3)];
  c->st.pkt_window = pkt_windows[pick(s, 0, 3)];
  c->st.ack_freq = (uint32_t)pick(s, 1, 8);
  c->n_nodes = 2;
  c->n_paths = unif(s) < 0.2 ? 1 : (uint32_t)pick(s, 2, 16);
  c->post_gap = span(s, 1 * SRD_US, 30 * SRD_US);
  c->dmin = span(s, 2 * SRD_US, 10 * SRD_US);
  c->dmax = c->dmin + span(s, 0, 40 * SRD_US);
  c->sweep_kind = -1;
  c->time_cap = 20 * SRD_S;
  for (i = 0; i < MAX_NODES; ++i) {
    c->late[i] = 0;
  }
}

static action *add_act(cfg *c, int kind, int x, int y, srd_duration at,
                       int rel) {
  action *a;

  assert_true(c->n_acts < MAX_ACTS);
  a = &c->acts[c->n_acts++];
  memset(a, 0, sizeof(*a));
  a->kind = (uint8_t)kind;
  a->x = (uint8_t)x;
  a->y = (uint8_t)y;
  a->at = at;
  a->rel = (uint8_t)rel;
  return a;
}

static void both_ways(cfg *c, uint64_t *s, uint32_t lo, uint32_t hi) {
  uint32_t i, j;

  for (i = 0; i < c->n_nodes; ++i) {
    for (j = 0; j < c->n_nodes; ++j) {
      if (i != j) {
        c->n_msgs[i][j] = (uint32_t)pick(s, lo, hi);
      }
    }
  }
}

/* send_span estimates how long node 0's posting lasts. */
static srd_duration send_span(const cfg *c) {
  uint32_t j, n = 0;

  for (j = 0; j < c->n_nodes; ++j) {
    n += c->n_msgs[0][j];
  }
  return n * c->post_gap * 7 / 10 + 20 * SRD_US;
}

static void draw_control(cfg *c, uint64_t *s) {
  draw_common(c, s);
  both_ways(c, s, 5, 30);
  c->ordered[1][0] = unif(s) < 0.3;
}

static void draw_ordered_late(cfg *c, uint64_t *s) {
  static const uint32_t windows[] = {4, 8, 16};
  static const uint32_t unexp[] = {0, 1, 2, 3, 4, 8};
  static const uint32_t ubytes[] = {0, 512, 1024, 2048, 4096, 16384, 65536};
  uint32_t n, posted = 0, mode;

  draw_common(c, s);
  c->st.msg_window = windows[pick(s, 0, 2)];
  c->st.unexp_msgs = unexp[pick(s, 0, 5)];
  c->st.unexp_bytes = ubytes[pick(s, 0, 6)];
  c->st.rnr_retries = UINT32_MAX;
  n = c->n_msgs[0][1] = (uint32_t)pick(s, 10, 40);
  if (unif(s) < 0.5) {
    c->n_msgs[1][0] = (uint32_t)pick(s, 1, 10);
    c->ordered[0][1] = unif(s) < 0.5;
  }
  c->ordered[1][0] = 1;
  c->late[1] = 1;
  c->p_dup = unif(s) < 0.5 ? 0 : 0.05;
  mode = (uint32_t)pick(s, 0, 2);
  if (mode == 1) {
    /* A trickle from the start. */
    uint32_t k = (uint32_t)pick(s, 0, 2);
    add_act(c, A_RECV, 1, 0, 0, 0)->arg = k;
    posted = k;
  } else if (mode == 2) {
    uint32_t k = (uint32_t)pick(s, 1, n / 2);
    add_act(c, A_RECV, 1, 0, span(s, 0, send_span(c)), 0)->arg = k;
    posted = k;
  }
  /* The rest only once every message was posted (mode 0: all of them). */
  {
    action *a = add_act(c, A_NOP, 1, 0, 0, mode != 0);
    a->cond = C_ALLPOSTED;
    a->wait = SRD_S;
  }
  while (posted < n) {
    uint32_t k = (uint32_t)pick(s, 1, 4);
    k = k > n - posted ? n - posted : k;
    add_act(c, A_RECV, 1, 0, span(s, 0, 2 * SRD_MS), 1)->arg = k;
    posted += k;
  }
}

static void draw_readd(cfg *c, uint64_t *s) {
  uint32_t events, e;
  srd_duration sp;

  draw_common(c, s);
  c->n_nodes = unif(s) < 0.3 ? 3 : 2;
  both_ways(c, s, 8, 30);
  c->p_dup = unif(s) < 0.5 ? 0 : unif(s) * 0.1;
  c->p_hs_late = unif(s) < 0.5 ? 0 : 0.2;
  c->p_replay = 0.3;
  c->replay_span = 20 * SRD_MS;
  sp = send_span(c);
  events = unif(s) < 0.7 ? 1 : 2;
  if (unif(s) < 0.3) {
    /* One way only, from the side that removes: the other has no data
       of its own that would make it find out about the new session. */
    events = 1;
    c->n_msgs[1][0] = 0;
  }
  for (e = 0; e < events; ++e) {
    int x = (int)pick(s, 0, 1), y = !x;
    action *a;
    if (c->n_msgs[1][0] == 0) {
      x = 0;
      y = 1;
    }
    a = add_act(c, A_REMOVE, x, y, span(s, sp / 10, sp * 9 / 10), e > 0);
    a->cond = c->n_msgs[1][0] == 0 ? C_LIVE1
              : unif(s) < 0.8      ? C_LIVE
                                   : C_BOTHWAYS;
    if (e == 0 && unif(s) < 0.3) {
      /* In the middle of the first handshake: answers to the old session
         still on their way while the new one forms. */
      a->at = span(s, 0, 60 * SRD_US);
      a->cond = C_NONE;
    }
    a->wait = 2 * SRD_MS;
    add_act(c, A_READD, x, y, unif(s) < 0.5 ? 0 : span(s, 1, 2 * SRD_MS), 1);
  }
}

static void draw_restart(cfg *c, uint64_t *s) {
  uint32_t events, e, j;
  srd_duration sp;

  draw_common(c, s);
  c->n_nodes = unif(s) < 0.3 ? 3 : 2;
  both_ways(c, s, 8, 30);
  c->p_dup = unif(s) < 0.5 ? 0 : unif(s) * 0.05;
  c->p_replay = unif(s) < 0.5 ? 0.3 : 1.0;
  c->p_hs_late = unif(s) < 0.5 ? 0 : 0.2;
  c->replay_span = span(s, 1 * SRD_MS, 30 * SRD_MS);
  sp = send_span(c);
  events = unif(s) < 0.75 ? 1 : 2;
  for (e = 0; e < events; ++e) {
    int r = (int)pick(s, 0, c->n_nodes - 1);
    int other = (r + 1) % (int)c->n_nodes;
    action *a =
        add_act(c, A_DOWN, r, other, span(s, sp / 10, sp * 9 / 10), e > 0);
    a->cond = unif(s) < 0.8 ? C_LIVE : C_BOTHWAYS;
    if (e == 0 && unif(s) < 0.3) {
      /* In the middle of the first handshake (as in draw_readd). */
      a->at = span(s, 0, 60 * SRD_US);
      a->cond = C_NONE;
    }
    a->wait = 2 * SRD_MS;
    a->arg = unif(s) < 0.5; /* flush first, else crash */
    add_act(c, A_UP, r, 0, unif(s) < 0.3 ? 0 : span(s, 1, 5 * SRD_MS), 1);
    for (j = 0; j < c->n_nodes; ++j) {
      if ((int)j != r && unif(s) < 0.5) {
        add_act(c, A_REMOVE, (int)j, r, span(s, 0, 3 * SRD_MS), 1);
        add_act(c, A_READD, (int)j, r, 0, 1);
      }
    }
  }
}

static void draw_corruption(cfg *c, uint64_t *s) {
  draw_common(c, s);
  c->st.mtu = 256;
  c->st.max_msg_size = 1024;
  both_ways(c, s, 8, 20);
  c->p_dup = unif(s) < 0.5 ? 0 : 0.05;
  if (c->run % 2 == 0) {
    c->sweep_kind = (int)((c->run / 2) % S_KINDS);
    c->sweep_occ = c->sweep_kind <= S_ACK ? (uint32_t)pick(s, 0, 6) : 0;
    c->p_corrupt = unif(s) * 0.05;
  } else {
    c->p_corrupt = 0.01 + unif(s) * 0.14;
  }
  c->p_corrupt_replace = 0.5;
  if (c->sweep_kind == S_SYNC || unif(s) < 0.2) {
    /* Flushing a sender mid-message makes it send a SYNC. */
    int x = (int)pick(s, 0, 1);
    action *a = add_act(c, A_FLUSH, x, !x, span(s, 0, send_span(c)), 0);
    a->cond = C_LIVE;
    a->wait = 2 * SRD_MS;
  }
}

static void draw_late_dups(cfg *c, uint64_t *s) {
  draw_common(c, s);
  both_ways(c, s, 10, 40);
  /* Traffic that lasts longer than the duplicates' delays, so that they
     arrive while it goes on (half the runs), or after it all (the rest). */
  if (unif(s) < 0.5) {
    c->post_gap = span(s, 100 * SRD_US, 5 * SRD_MS);
  }
  c->p_dup = 0.1 + unif(s) * 0.4;
  c->dup_far = 1;
  c->ordered[1][0] = unif(s) < 0.25;
  c->liveness = 2 * SRD_S;
  c->time_cap = 3 * SRD_S;
}

static void draw_deep_reorder(cfg *c, uint64_t *s) {
  double u;

  draw_common(c, s);
  both_ways(c, s, 10, 40);
  if (unif(s) < 0.5) {
    c->post_gap = span(s, 20 * SRD_US, 1 * SRD_MS);
  }
  u = unif(s);
  if (u < 0.3) {
    /* Pauses (a PFC pause storm, a rerouting stall): everything one way
       is held for a while, then arrives at once, behind what was sent
       after.  One or two, at most 20 ms each, apart by 5 ms or more: in a
       pause nothing comes back, so the timeout backs off undisturbed from
       100 us, about 8 timeouts, within the 17 tries and the 17 silent
       timeouts of the budget, and the gap lets every held answer in.
       (Overlapping pauses release stale ACKs in the middle of a stall,
       which reset the backoff: then 17 tries take 16 ms, and the budget
       is not what these runs test.) */
    uint32_t k;
    srd_tstamp t = span(s, 0, send_span(c) + 100 * SRD_US);
    c->n_pause = (uint32_t)pick(s, 1, 2);
    for (k = 0; k < c->n_pause; ++k) {
      c->pause[k].from = (uint8_t)pick(s, 0, 1);
      c->pause[k].to = (uint8_t)!c->pause[k].from;
      c->pause[k].a = t;
      c->pause[k].b = t + span(s, 500 * SRD_US, 20 * SRD_MS);
      t = c->pause[k].b + span(s, 5 * SRD_MS, 20 * SRD_MS);
    }
  } else if (c->n_paths >= 2 && u < 0.65) {
    /* Slow paths: every datagram on them, both ways (ACKs return on the
       path of their data), is held for many RTOs.  A retransmission
       avoids the path it was lost on, so every fragment gets through in
       time on another. */
    uint32_t k, n = (uint32_t)pick(s, 1, c->n_paths / 2);
    for (k = 0; k < n; ++k) {
      c->slow_paths |= 1ULL << pick(s, 0, c->n_paths - 1);
    }
    c->slow_delay = span(s, 500 * SRD_US, 30 * SRD_MS);
  } else {
    /* Each try of a fragment is answered in time unless its data or its
       ACK is held: with at most 10% held, all 17 tries fail with
       probability 0.19^17, 10^-12: these runs may lose nothing. */
    c->p_deep = 0.02 + unif(s) * 0.08;
    c->deep_min = 500 * SRD_US;
    c->deep_max = span(s, 2 * SRD_MS, 30 * SRD_MS);
  }
  c->p_dup = unif(s) < 0.5 ? 0 : 0.02;
  c->ordered[1][0] = unif(s) < 0.25;
  c->liveness = 10 * SRD_S;
}

static void draw_wraparound(cfg *c, uint64_t *s) {
  static const uint32_t windows[] = {16, 32};

  draw_common(c, s);
  c->st.msg_window = windows[pick(s, 0, 1)];
  c->n_msgs[0][1] = (uint32_t)pick(s, 280, 320);
  c->n_msgs[1][0] = (uint32_t)pick(s, 0, 40);
  c->small_sizes = 1;
  c->post_gap = span(s, 1 * SRD_US, 5 * SRD_US);
  c->p_dup = 0.02;
  c->ordered[1][0] = unif(s) < 0.25;
  c->want_cross = 1;
  c->liveness = 10 * SRD_S;
}

typedef void (*draw_fn)(cfg *c, uint64_t *s);

static const struct {
  const char *name;
  draw_fn draw;
  uint32_t allow;
  uint32_t runs;
} classes[] = {
    {"control", draw_control, 0, 200},
    {"ordered_late_recv", draw_ordered_late, 0, 1000},
    {"readd_peer", draw_readd, AL_CANCELED | AL_RESET | AL_ABORTED, 1000},
    {"restart", draw_restart, AL_CANCELED | AL_RESET | AL_ABORTED, 1000},
    {"corruption", draw_corruption, AL_CANCELED | AL_ABORTED, 1000},
    {"late_dups", draw_late_dups, 0, 1000},
    {"deep_reorder", draw_deep_reorder, 0, 1000},
    {"wraparound", draw_wraparound, 0, 1000},
};

static uint64_t sub_seed(uint64_t seed, int cls, uint32_t run) {
  uint64_t x = seed ^ ((uint64_t)(cls + 1) * 0xA24BAED4963EE407ULL) ^
               ((uint64_t)run * 0x9FB21C651E98DF25ULL);
  return tu_rand(&x);
}

static void print_status_counts(const char *what, const uint64_t *st) {
  int i;

  printf("             %s:", what);
  for (i = 0; i < N_ST; ++i) {
    if (st[i]) {
      printf(" %s=%" PRIu64, i == 0 ? "ok" : srd_strerror(-200 - i), st[i]);
    }
  }
  printf("\n");
}

static void run_class(int cls) {
  const char *env = getenv("SRD_GUARANTEE_RUNS");
  const char *only = getenv("SRD_GUARANTEE_RUN");
  const char *tr = getenv("SRD_GUARANTEE_TRACE");
  uint64_t seed = tu_seed(classes[cls].name);
  uint32_t runs = env && *env ? (uint32_t)strtoul(env, NULL, 0)
                              : classes[cls].runs,
           run, first = 0, reported = 0;
  int trace = tr && *tr ? atoi(tr) : 0;
  cstats cs;
  int i;

  if (trace) {
    setvbuf(stdout, NULL, _IONBF, 0);
  }
  if (cls == 0 && env && *env && runs > classes[0].runs) {
    runs = classes[0].runs;
  }
  if (only && *only) {
    first = (uint32_t)strtoul(only, NULL, 0);
    runs = first + 1;
  }
  memset(&cs, 0, sizeof(cs));
  for (run = first; run < runs; ++run) {
    cfg c;
    uint64_t s, nv;

    memset(&c, 0, sizeof(c));
    c.cls = cls;
    c.run = run;
    c.seed = sub_seed(seed, cls, run);
    c.allow = classes[cls].allow;
    s = c.seed;
    classes[cls].draw(&c, &s);
    if (trace) {
      printf("  run %u sub-seed 0x%016" PRIx64 "\n", run, c.seed);
    }
    nv = run_one(&c, &cs, trace);
    ++cs.runs;
    if (cs.steps > CLASS_STEP_CAP && run + 1 < runs) {
      print_error("%s: step budget spent after %u runs\n", classes[cls].name,
                  run + 1);
      ++cs.failed;
      break;
    }
    if (nv > 0) {
      ++cs.failed;
      if (reported++ < MAX_REPORTS) {
        print_error("%s run %u sub-seed=0x%016" PRIx64
                    " (rerun: SRD_TEST_SEED=0x%016" PRIx64
                    " SRD_GUARANTEE_RUN=%u):",
                    classes[cls].name, run, c.seed, seed, run);
        for (i = 0; i < V_KINDS; ++i) {
          if (W.v[i]) {
            print_error(" %s=%" PRIu64, viol_names[i], W.v[i]);
          }
        }
        print_error("\n");
        print_cfg(&c);
      }
    }
  }
  printf("[ GUARANT  ] %s: %" PRIu64 " runs, %" PRIu64 " failed; %" PRIu64
         " messages, %" PRIu64 " delivered, %" PRIu64 " datagrams, %" PRIu64
         " steps, %.1f s virtual\n",
         classes[cls].name, cs.runs, cs.failed, cs.msgs, cs.delivered,
         cs.datagrams, cs.steps, (double)cs.vtime / SRD_S);
  print_status_counts("sends", cs.send_st);
  print_status_counts("receives", cs.recv_st);
  printf("             resets=%" PRIu64 " replays=%" PRIu64 " damaged=%" PRIu64
         " busy_removes=%" PRIu64 " restarts=%" PRIu64 " crossed=%" PRIu64
         " flips=%" PRIu64 "\n",
         cs.resets, cs.replays, cs.corrupted, cs.removes_busy, cs.restarts,
         cs.crossed, cs.flips);
  if (cls == 4) {
    printf("             sweeps:");
    for (i = 0; i < S_KINDS; ++i) {
      printf(" %s=%" PRIu64 "/%" PRIu64, sample_names[i], cs.sweeps[i],
             cs.seen[i]);
    }
    printf("\n");
  }
  if (cs.failed > 0) {
    printf("             violations:");
    for (i = 0; i < V_KINDS; ++i) {
      if (cs.v[i]) {
        printf(" %s=%" PRIu64, viol_names[i], cs.v[i]);
      }
    }
    printf("\n");
    print_status_counts("bad send statuses", cs.bad_send_st);
    print_status_counts("bad recv statuses", cs.bad_recv_st);
  }
  fflush(stdout);
  tu_assert(cs.failed == 0);
  /* The class does what it says (only when the whole set ran). */
  if (!(only && *only)) {
    if (cls == 2) {
      tu_assert(cs.removes_busy > 0);
    }
    if (cls == 3) {
      tu_assert(cs.restarts > 0 && cs.replays > 0);
    }
    if (cls == 4 && runs >= 2 * S_KINDS) {
      for (i = 0; i < S_KINDS; ++i) {
        tu_assert(cs.sweeps[i] > 0);
      }
    }
  }
}

static int setup(void **state) {
  uint32_t i;
  (void)state;

  W.pool_cap = 1024;
  W.pool = malloc(W.pool_cap * sizeof(wpkt));
  W.pfree = malloc(W.pool_cap * sizeof(uint32_t));
  W.heap = malloc(W.pool_cap * sizeof(hent));
  W.recs = malloc((REC_CAP + HS_REC_CAP) * sizeof(wpkt));
  assert_non_null(W.pool);
  assert_non_null(W.pfree);
  assert_non_null(W.heap);
  assert_non_null(W.recs);
  for (i = 0; i < MAX_NODES; ++i) {
    W.n[i].bufs = malloc((size_t)NBUF * BUF_CAP);
    assert_non_null(W.n[i].bufs);
  }
  return 0;
}

static int teardown(void **state) {
  uint32_t i;
  (void)state;

  for (i = 0; i < MAX_NODES; ++i) {
    free(W.n[i].bufs);
  }
  free(W.pool);
  free(W.pfree);
  free(W.heap);
  free(W.recs);
  free(W.payload);
  free(W.r);
  memset(&W, 0, sizeof(W));
  return 0;
}

static void test_guarantees_control(void **state) {
  (void)state;
  run_class(0);
}

static void test_guarantees_ordered_late_recv(void **state) {
  (void)state;
  run_class(1);
}

static void test_guarantees_readd_peer(void **state) {
  (void)state;
  run_class(2);
}

static void test_guarantees_restart(void **state) {
  (void)state;
  run_class(3);
}

static void test_guarantees_corruption(void **state) {
  (void)state;
  run_class(4);
}

static void test_guarantees_late_dups(void **state) {
  (void)state;
  run_class(5);
}

static void test_guarantees_deep_reorder(void **state) {
  (void)state;
  run_class(6);
}

static void test_guarantees_wraparound(void **state) {
  (void)state;
  run_class(7);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_guarantees_control, setup, teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_ordered_late_recv, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_readd_peer, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_corruption, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_late_dups, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_deep_reorder, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_guarantees_wraparound, setup,
                                      teardown),
  };
  return cmocka_run_group_tests_name("guarantees", tests, NULL, NULL);
}
