/*
 * srd_ep.h: the endpoint's internal state, shared by srd_ep.c (API,
 * pools, timers, scheduling), srd_tx.c (what goes out, acknowledgements
 * coming back, loss detection) and srd_rx.c (what comes in: data, the
 * handshake, reassembly and delivery).
 *
 * Nothing here is API: the three files are one module split for size,
 * compiled together (srd/unity/srd_unity.c).  The functions below are
 * the calls between them; each comment names the file that defines it.
 * None allocates, none fails for want of memory, and none may be called
 * from the log or packet-tap callbacks.  Where a function takes |ep| and
 * |p|, |p| is a live peer of |ep| (srd_ep_peer(ep, id) != NULL); |now| is
 * the caller's time, never earlier than the times |ep| was given before.
 * Broken preconditions are caught by assert() where the check is cheap
 * and are undefined otherwise.
 */
#ifndef SRD_EP_H
#define SRD_EP_H

#include <stdint.h>

#include <srd/srd.h>

#include "srd_acktr.h"
#include "srd_cc.h"
#include "srd_crc32c.h"
#include "srd_macro.h"
#include "srd_pathset.h"
#include "srd_pcg.h"
#include "srd_siphash.h"
#include "srd_pkt.h"
#include "srd_pq.h"
#include "srd_rtb.h"
#include "srd_rtt.h"

/* SRD_GONE_MAX is how many replaced incarnations a peer slot remembers. */
#define SRD_GONE_MAX 8

/* SRD_NIL ends index-linked lists. */
#define SRD_NIL UINT32_MAX

/* Send slot states. */
#define SRD_SEND_FREE 0
#define SRD_SEND_PENDING 1 /* posted, no message id yet (not started) */
#define SRD_SEND_ACTIVE 2  /* has a message id, in the peer's window */
#define SRD_SEND_DONE 3    /* completion queued, not polled */

/* srd_send is a posted send (a message): one slot of ep->sends, indexed
   by the slot number that srd_ep_cq_push is given. */
typedef struct srd_send {
  const uint8_t *buf; /* the user's buffer, read until the send is polled */
  void *user_ctx;     /* given back in the completion */
  uint32_t len;       /* message length */
  srd_peer_id peer;   /* the peer it goes to */
  uint32_t msg_id;    /* valid when ACTIVE */
  uint32_t n_frags;   /* fragments, at the peer's fragment size */
  uint32_t next_frag; /* first fragment never sent */
  uint32_t n_acked;   /* fragments acknowledged */
  uint32_t refunds;   /* losses of it that proved spurious */
  uint64_t *acked;    /* bitmap of acknowledged fragments */
  /* next and prev link the peer's send queue (messages with unsent
     fragments) or the free list (next only). */
  uint32_t next;
  uint32_t prev;
  uint8_t state;  /* SRD_SEND_* */
  uint8_t queued; /* in the peer's send queue */
} srd_send;

/* Receive slot states. */
#define SRD_RECV_FREE 0
#define SRD_RECV_POSTED 1  /* waiting in the posted queue */
#define SRD_RECV_CLAIMED 2 /* a message is being placed in it */
#define SRD_RECV_DONE 3    /* completion queued, not polled */

/* srd_recv is a posted receive buffer: one slot of ep->recvs. */
typedef struct srd_recv {
  uint8_t *buf;   /* the user's buffer, written until the receive is polled */
  size_t cap;     /* its size in bytes */
  void *user_ctx; /* given back in the completion */
  uint32_t next;  /* posted queue or free list */
  uint32_t prev;  /* posted queue */
  uint8_t state;  /* SRD_RECV_* */
} srd_recv;

/* Receive context states. */
#define SRD_RCTX_FREE 0
#define SRD_RCTX_ACTIVE 1 /* fragments arriving */
#define SRD_RCTX_HELD 2   /* complete, waiting for ordered delivery */

/* srd_rctx is a message being received (a reassembly context): one of
   ep->rctxs, max_recvs + unexp_msgs of them. */
typedef struct srd_rctx {
  srd_peer_id peer;   /* the sender, UINT32_MAX once it was removed */
  uint32_t msg_id;    /* the sender's message id */
  uint32_t msg_len;   /* the message's length */
  uint32_t frag_size; /* the session's fragment size when it began */
  uint32_t n_frags;   /* fragments of the message */
  uint32_t n_recvd;   /* fragments received */
  uint64_t *bits;     /* received fragments */
  uint32_t recv;      /* the posted receive, or SRD_NIL if unexpected */
  uint32_t chunks;    /* unexpected: chunks holding fragments (a list) */
  uint32_t reserved;  /* unexpected: chunks reserved, not yet taken */
  uint32_t next;      /* free list, or the unexpected queue */
  uint32_t prev;      /* the unexpected queue */
  uint8_t state;      /* SRD_RCTX_* */
  uint8_t anyorder;   /* deliverable in any order (its session ended) */
  uint8_t discard;    /* flushed: fragments accepted and acknowledged but
                         not placed; no completion */
} srd_rctx;

/* srd_retxq is a ring of fragments waiting to be sent again. */
typedef struct srd_retxq srd_retxq;

/* srd_retx is a fragment waiting to be sent again. */
typedef struct srd_retx {
  uint32_t slot;      /* its message's send slot */
  uint32_t msg_id;    /* its message (the slot may have been reused since) */
  uint32_t frag;      /* fragment index in the message */
  uint16_t lost_path; /* the path it was lost on (avoided for the resend) */
  uint8_t tries;      /* transmissions in a row that got no answer */
} srd_retx;

struct srd_retxq {
  srd_retx *q;   /* cap entries, allocated by srd_ep_add_peer */
  uint32_t cap;  /* ring size (lost: pkt_window; parked: + max_frags) */
  uint32_t head; /* oldest entry */
  uint32_t len;  /* entries in use */
};

/* srd_peer is everything an endpoint knows about one peer: allocated by
   srd_ep_add_peer, freed by srd_ep_remove_peer and srd_ep_del. */
typedef struct srd_peer {
  srd_peer_id id;       /* its index in ep->peers */
  srd_peer_settings ps; /* as given to srd_ep_add_peer */
  srd_peer_state state; /* changed only by srd_ep_set_state */

  /* Handshake (docs/protocol.md, "Incarnations and the handshake"). */
  uint32_t local_conn;      /* our incarnation id for this peer's session */
  uint32_t peer_conn;       /* the peer's proven incarnation id */
  uint64_t req_nonce;       /* our outstanding HS_REQ's nonce, 0 if none */
  uint32_t hs_tries;        /* HS_REQs sent for req_nonce */
  srd_tstamp hs_deadline;   /* when the outstanding HS_REQ is retried */
  srd_tstamp hs_sent_ts;    /* when the first HS_REQ for req_nonce left */
  int want_req;             /* send an HS_REQ */
  uint64_t cookie;          /* nonce of our HS_RESP awaiting proof, 0 if none */
  uint32_t cookie_conn;     /* the incarnation it was issued to */
  srd_pkt_hs cookie_params; /* that incarnation's REQ parameters */
  int want_resp;            /* send an HS_RESP answering resp_echo */
  uint64_t resp_echo;       /* the nonce of the HS_REQ it answers */
  uint32_t resp_dst;        /* that request's sender incarnation */
  int want_confirm;         /* send an HS_CONFIRM echoing confirm_echo */
  uint64_t confirm_echo;    /* the cookie of the HS_RESP it answers */
  /* Handshake paths: a reply goes back on the path index of the packet
     it answers (as ACKs do); hs_path is where our last HS_REQ went, so an
     unanswered one counts as a loss there and retries steer away. */
  uint16_t hs_path;     /* path of our latest HS_REQ */
  uint16_t reply_path;  /* path for the next HS_RESP or HS_CONFIRM */
  uint64_t echo_cookie; /* put in our data until the peer acknowledges */
  /* The peer incarnations this slot had sessions with and replaced (a
     ring): never established again, so that no packet of a session that
     ended, however late, can be taken into a new one with the same pair
     of ids (its message ids would start where the old ones did). */
  uint32_t gone[SRD_GONE_MAX];
  uint32_t n_gone; /* incarnations replaced so far (the ring's write index) */
  int responsive;  /* the peer has acknowledged something */
  srd_tstamp last_stale_req; /* rate limit for re-handshakes */

  /* Negotiated with the peer. */
  uint32_t frag_size;    /* min of both MTUs */
  uint32_t peer_max_msg; /* the peer's max_msg_size */
  uint32_t tx_window;    /* min of both message windows */

  /* Transmit side. */
  srd_rtb rtb;          /* data packets sent and not retired */
  uint32_t next_msg_id; /* the id the next message started gets */
  uint32_t msg_floor;   /* lowest message id not finished */
  uint32_t *tx_msgs;    /* slot + 1 by message id & mask, 0 if none */
  uint32_t sq_head;     /* send queue: messages with unsent fragments */
  uint32_t sq_tail;     /* its last slot */
  /* Fragments to send again: lost ones first (urgent); refused ones
     (RNR) after the rest of the message being sent, which may hold the
     receiver's buffer, so that refusals never starve it. */
  srd_retxq lost;
  srd_retxq parked;
  srd_pathset paths;       /* the paths, spraying and steering */
  srd_rtt rtt;             /* RTT over all paths */
  srd_cc cc;               /* the congestion controller's state */
  srd_cc_stat ccs;         /* what it shares with the engine */
  srd_tstamp next_pace_ts; /* pacing for windows below one packet */
  srd_tstamp rnr_until;    /* RNR backoff: no data before this */
  uint32_t rnr_exp;        /* RNR backoff exponent */
  /* rtt_seen has a bit per packet number of the last rtt_seen_mask + 1
     sent: set once the packet was acknowledged, so that its RTT sample
     comes from the acknowledgement that first tells of it (even after it
     left the sent ring: a late but first echo is how a path whose delay
     grew is learnt), and no later copy of an echo, which measures the
     delay of the copy, gives another. */
  uint64_t *rtt_seen;
  uint32_t rtt_seen_mask;
  /* base_rtt_full is the least RTT of a full-size data packet (0 until
     one is sampled): the base of the delay target. */
  srd_duration base_rtt_full;
  uint32_t rnr_epoch;       /* RNR backoff epochs begun */
  srd_tstamp rnr_epoch_ts;  /* when the latest began */
  uint32_t rnr_progress;    /* rnr_epoch when data was last acknowledged */
  uint32_t rto_backoff;     /* consecutive timeouts without progress */
  uint32_t silent_rtos;     /* timeouts with nothing heard from the peer */
  srd_tstamp last_rto;      /* when the timeout last fired */
  srd_tstamp last_progress; /* when an ACK last acknowledged new data */
  srd_tstamp loss_time;     /* when the next RACK loss falls due */
  srd_tstamp rack_max_xmit; /* newest (send time, seq) acknowledged, */
  uint32_t rack_max_seq;    /* over all paths, */
  uint16_t rack_max_path;   /* and the path it took */
  int rack_max_valid;       /* rack_max_* hold a packet */
  int want_sync;            /* tell the peer our message floor */
  /* sync_until: an abandoned message's id + 1, while the floor has not
     passed it (sync_owed): the floor is told again once it does, since
     the receiver may hold later messages for it (ordered) and no data may
     come to carry it. */
  uint32_t sync_until;
  int sync_owed; /* sync_until is set */

  /* Receive side. */
  srd_acktr acktr;   /* packets received, acknowledgements to send */
  uint32_t rx_next;  /* lowest message id not retired */
  uint32_t rx_floor; /* the peer's message floor, as last heard */
  uint32_t *rx_ctx;  /* rctx + 1 by message id & mask, 0 if none */
  uint64_t *rx_done; /* bitmap: message complete (or failed) */
  uint64_t *rx_err;  /* bitmap: message failed (truncated) */
  uint16_t ack_path; /* path of the newest data packet: ACKs go back on it */
  /* ack_span16 is how many of our packets one of the peer's ACKs
     acknowledges, x16, on average (srd_tx.c's unechoed). */
  int32_t ack_span16;
  /* ack_repeat_at is when the latest ACK is sent again, on another path,
     if no other ACK has followed it (SRD_TSTAMP_NONE: not to be). */
  srd_tstamp ack_repeat_at;
  /* ack_hold is how long the peer holds a packet before acknowledging
     it: a maximum of the echoes' hold times that decays by 1/8 a sample. */
  srd_duration ack_hold;

  /* Scheduling. */
  srd_pq_entry timer; /* in ep->timers at the peer's deadline, id = peer */
  int timer_dirty;    /* the deadline needs recomputing (on the dirty list) */
  /* dirty_since: the time given when the peer joined the dirty list, at
     which its deadline is computed (flush_timers).  Not the latest time:
     a peer that left the ready line because pacing or an RNR backoff held
     its next packet until T must wake at T even if, before the deadline
     is computed, another peer's packet brought the clock past T. */
  srd_tstamp dirty_since;
  uint32_t ready_next; /* the ready line: peers that may have output */
  uint32_t ready_prev;
  int in_ready; /* in the ready line */

  /* Statistics (srd_peer_stats). */
  uint64_t pkts_sent;
  uint64_t pkts_acked;
  uint64_t retransmits;
  uint64_t rnr_received;
  uint64_t msgs_sent;
  uint64_t msgs_received;
} srd_peer;

/* srd_ep is an endpoint (srd.h's opaque type): allocated with every pool
   by srd_ep_new, freed by srd_ep_del. */
struct srd_ep {
  srd_settings settings;    /* a copy of the caller's */
  const srd_mem *mem;       /* the caller's allocator (kept) */
  const srd_cc_ops *cc_ops; /* the controller settings.cc names */
  srd_pcg pcg;              /* the endpoint's only randomness */
  uint32_t conn_id;         /* srd_ep_conn_id */
  uint32_t max_frags;       /* fragments of the largest message, worst case */
  uint32_t frag_words;      /* uint64_t words of a fragment bitmap */
  size_t max_pkt;           /* largest datagram written */
  uint8_t *tap_buf;         /* pkt_tap: a datagram assembled from its pieces */

  /* The stateless handshake (srd_hs.c): the cookie key, the one it
     replaced (if hs_has_prev), and the incarnation ids of the sessions
     that cookies opened lately, a ring against replays. */
  uint8_t hs_key[SRD_SIPHASH_KEY_LEN];
  uint8_t hs_key_prev[SRD_SIPHASH_KEY_LEN];
  int hs_has_prev;
  uint32_t hs_spent[SRD_HS_SPENT];
  uint32_t hs_spent_next;

  srd_peer **peers; /* max_peers entries, NULL where no peer */

  srd_send *sends;      /* max_sends slots */
  uint32_t send_free;   /* free send slots (a list), SRD_NIL if none */
  srd_recv *recvs;      /* max_recvs slots */
  uint32_t recv_free;   /* free receive slots (a list) */
  uint32_t posted_head; /* posted receives in posting order */
  uint32_t posted_tail;

  srd_rctx *rctxs;     /* n_rctx reassembly contexts */
  uint32_t n_rctx;     /* max_recvs + unexp_msgs */
  uint32_t rctx_free;  /* free contexts (a list) */
  uint32_t unexp_head; /* unexpected messages in arrival order */
  uint32_t unexp_tail;
  uint32_t n_unexp; /* messages in the unexpected queue */

  /* Chunks hold fragments of unexpected messages. */
  uint8_t *chunk_mem;    /* n_chunks chunks of chunk_size bytes */
  uint32_t chunk_size;   /* one fragment: settings.mtu */
  uint32_t n_chunks;     /* enough for unexp_bytes */
  uint32_t *chunk_next;  /* a context's chunks, or the free list */
  uint32_t *chunk_frag;  /* the fragment a chunk holds */
  uint32_t chunk_free;   /* free chunks (a list) */
  uint32_t chunks_avail; /* free and not reserved */

  /* The completion queue and, beside it, the slot each entry frees. */
  srd_cqe *cq;       /* a ring of cq_cap entries */
  uint32_t *cq_slot; /* the slot, SRD_OP_RECV's in the top bit */
  uint32_t cq_cap;   /* max_sends + max_recvs: it never overflows */
  uint32_t cq_head;  /* the oldest completion */
  uint32_t cq_len;   /* completions not polled */

  srd_pq timers; /* peers by deadline */
  /* Peers whose deadline changed; recomputed in one go when the driver
     next asks for the expiry, rather than after every packet. */
  uint32_t *dirty;
  uint32_t n_dirty;
  srd_tstamp last_now; /* the latest time the endpoint was given */
  uint32_t ready_head; /* the ready line, round-robin among peers */
  uint32_t ready_tail;

  srd_ep_stats stats; /* srd_ep_get_stats */
};

/* srd_bit_test returns bit |i| of bitmap |b| (uint64_t words, bit i in
   word i / 64); srd_bit_set and srd_bit_clear set and clear it.  |b|
   must hold at least i / 64 + 1 words. */
static inline int srd_bit_test(const uint64_t *b, uint32_t i) {
  return (int)((b[i >> 6] >> (i & 63)) & 1);
}
static inline void srd_bit_set(uint64_t *b, uint32_t i) {
  b[i >> 6] |= 1ULL << (i & 63);
}
static inline void srd_bit_clear(uint64_t *b, uint32_t i) {
  b[i >> 6] &= ~(1ULL << (i & 63));
}

/* srd_established says whether |p|'s session is established. */
static inline int srd_established(const srd_peer *p) {
  return p->state == SRD_PEER_STATE_ESTABLISHED;
}

/* srd_msg_mask masks a message id into the per-peer message tables
   (tx_msgs, rx_ctx, rx_done, rx_err: msg_window entries, a power of
   two). */
static inline uint32_t srd_msg_mask(const srd_ep *ep) {
  return ep->settings.msg_window - 1;
}

/* srd_ep_peer returns peer |id| of |ep|, or NULL if |id| is out of range
   or names no peer (a driver's bad id is therefore not undefined). */
static inline srd_peer *srd_ep_peer(const srd_ep *ep, srd_peer_id id) {
  return id < ep->settings.max_peers ? ep->peers[id] : NULL;
}

/* srd_wrap_early returns a first sequence number 256 or fewer steps below
   2^32, so that every session crosses the wrap within its first few
   hundred messages (message ids) or packets (packet numbers) and the wrap
   path is never untested (like the Linux kernel's INITIAL_JIFFIES). */
static inline uint32_t srd_wrap_early(uint32_t r) {
  return 0xFFFFFF00u | (r & 0xFFu);
}

/* ------------------------------------------------------------------------ */
/* srd_ep.c                                                                 */

/* srd_ep_log hands the record (|ts|, |ev|, |peer|, |path|, |a|, |b|) to
   settings.log, if there is one (srd_log_event says what |a| and |b|
   mean); otherwise it does nothing.  The record lives on the stack for
   the call only.  It cannot fail.  Defined in srd_ep.c. */
SRD_COLD void srd_ep_log(srd_ep *ep, srd_tstamp ts, srd_log_event ev,
                         srd_peer_id peer, int32_t path, uint64_t a,
                         uint64_t b);

/* srd_ep_drop counts a received packet of type |type| (0 if unknown) from
   |peer| dropped for |why| (< SRD_DROP_REASONS: it indexes
   stats.drops) and logs it as SRD_LOG_DROP.  It only counts: the caller
   returns the error, if any.  Defined in srd_ep.c. */
SRD_COLD void srd_ep_drop(srd_ep *ep, srd_tstamp ts, srd_peer_id peer,
                          srd_drop_reason why, uint8_t type);

/* srd_ep_cq_push appends the completion of operation |op| in slot |slot|
   (an index into ep->sends for SRD_OP_SEND, ep->recvs for SRD_OP_RECV)
   with |status| (0 or a negative SRD_ERR_*), |peer|, |msg_id|, the
   user's |buf|, |len| and |user_ctx|, at |now|; flags are 0 (set them
   through srd_ep_cq_last).  It marks the slot DONE and counts the
   completion in stats.msgs_{sent,recv}_{ok,err}; the slot is freed, and
   |buf| handed back to the user, only when srd_ep_poll_cq takes the
   entry.  Precondition: the operation is posted and not yet completed,
   so that the queue, sized for every slot, is not full (asserted).  This
   is the one place where an operation completes: callers keep "exactly
   one completion" by calling it once per operation.  Defined in
   srd_ep.c. */
void srd_ep_cq_push(srd_ep *ep, srd_op op, uint32_t slot, int status,
                    srd_peer_id peer, uint32_t msg_id, void *buf, size_t len,
                    void *user_ctx, srd_tstamp now);

/* srd_ep_cq_last returns the completion pushed last, to set its flags.
   Precondition: a completion was pushed and not polled since. */
static inline srd_cqe *srd_ep_cq_last(srd_ep *ep) {
  uint32_t i = ep->cq_head + ep->cq_len - 1;
  return &ep->cq[i >= ep->cq_cap ? i - ep->cq_cap : i];
}

/* srd_ep_set_state moves |p| to state |st| and logs SRD_LOG_PEER_STATE
   (old, new); nothing happens if |p| is in |st| already.  It is the only
   function that changes srd_peer.state.  Defined in srd_ep.c. */
SRD_COLD void srd_ep_set_state(srd_ep *ep, srd_peer *p, srd_peer_state st,
                               srd_tstamp now);

/* srd_ep_sq_remove takes send |s| out of |p|'s send queue (messages with
   fragments never sent), if it is queued there; otherwise it does
   nothing.  |s| stays in its state and slot.  Precondition: |s| is a send
   to |p|.  Defined in srd_ep.c. */
void srd_ep_sq_remove(srd_ep *ep, srd_peer *p, srd_send *s);

/* srd_ep_rctx_release frees reassembly context |c|: an unexpected one
   that holds fragments (no receive, not discarded) gives back its chunks
   and reservation and leaves the unexpected queue; its peer's message
   table forgets it if it still points at it (the peer may be gone).  It
   completes nothing: a receive |c| fed was completed by the caller, or
   still is to be.  Precondition: |c| is not free.  Defined in
   srd_ep.c. */
void srd_ep_rctx_release(srd_ep *ep, srd_rctx *c);

/* srd_ep_rctx_release_chunks gives |c|'s chunks back to the pool and its
   unused reservation back to chunks_avail, leaving |c| with none.  |c|
   stays where it is (queue, tables, state).  Defined in srd_ep.c. */
void srd_ep_rctx_release_chunks(srd_ep *ep, srd_rctx *c);

/* srd_ep_start_handshake draws a fresh, nonzero nonce for a new HS_REQ
   to |p|, restarts the try count and asks for the request to be written
   at once (hs_deadline = |now|); a peer not established moves to
   SRD_PEER_STATE_HS_SENT, an established one stays established until an
   answer proves another incarnation.  Precondition: the caller makes |p|
   ready and its timer dirty afterwards (srd_ep_post_send does;
   srd_ep_read_pktv does after srd_rx_packet).  Defined in srd_ep.c. */
SRD_COLD void srd_ep_start_handshake(srd_ep *ep, srd_peer *p, srd_tstamp now);

/* srd_ep_rctx_unexp_remove takes |c| out of the unexpected queue.
   Precondition: |c| is in it (an unexpected message that has not taken a
   receive).  Defined in srd_ep.c. */
void srd_ep_rctx_unexp_remove(srd_ep *ep, srd_rctx *c);

/* srd_ep_drain_unexp hands messages waiting in the unexpected queue that
   may be delivered now to the receives posted, oldest first, while both
   last (after a post, or when a session's end frees held messages of
   their order).  Each goes through srd_rx_deliver, so it may complete
   receives (SRD_ERR_TRUNCATED for a buffer too small).  Defined in
   srd_ep.c. */
void srd_ep_drain_unexp(srd_ep *ep, srd_tstamp now);

/* srd_ep_chunk_take takes one of the chunks reserved for unexpected
   message |c| for its fragment |frag| and stores in *mem where the
   fragment goes (ep->chunk_size bytes in the endpoint's chunk pool,
   |c|'s until its chunks are released or copied into a receive).

   Returns 0, or SRD_ERR_NOMEM if |c| has no reservation left or the pool
   is empty (the endpoint's chunk memory is spent; *mem is unchanged).
   Neither happens while reservations are honoured (a context reserves a
   chunk for each of its fragments when it is created), so a caller that
   gets SRD_ERR_NOMEM found the accounting broken: it is fatal, and
   srd_rx.c treats it as unreachable.  Defined in srd_ep.c. */
int srd_ep_chunk_take(srd_ep *ep, srd_rctx *c, uint32_t frag, uint8_t **mem);

/* srd_ep_rto returns |p|'s retransmission timeout now: srd_rtt_rto of its
   RTT over all paths (floor rto_min, rto_initial before a sample, plus
   the larger of ack_delay and the receiver's measured hold time),
   doubled for each timeout in a row without progress (rto_backoff, at
   most 2^30 times) and then capped at the larger of rto_max and the
   value before backoff.  It changes nothing.  Defined in srd_ep.c. */
srd_duration srd_ep_rto(const srd_ep *ep, const srd_peer *p);

/* ------------------------------------------------------------------------ */
/* srd_tx.c                                                                 */

/* srd_tx_write writes the next packet |p| has due at |now| into |buf|
   (|cap| bytes) and stores its destination in *path.  What goes first: a
   handshake packet or a SYNC, then a standalone ACK that cannot ride on
   data, then data (with the due ACK riding on it when it fits whole),
   then a due ACK, then the repeat of the last ACK on another path.  For
   data only the header is written to |buf|; *payload is set to the
   fragment's bytes inside the posted send buffer (the user's, valid until
   that send's completion is polled), and to {NULL, 0} for every other
   packet.  With |contiguous| nonzero data is written only if |cap| also
   has room for a whole fragment behind the header, where the caller
   copies the payload (srd_ep_write_pkt); with 0 (srd_ep_write_pktv) the
   header is enough.  Writing a packet commits to it: its request flag is
   consumed, data gets a packet number in the sent ring and counts as in
   flight.  Starting a message longer than the peer's max_msg_size
   completes it with SRD_ERR_MSG_TOO_LONG instead.

   Returns the header's length, 0 if |p| has nothing due now, or
   SRD_ERR_NOBUF if |cap| is too small for what is due (a handshake packet
   or a SYNC needs SRD_PKT_HS_RESP_LEN, an ACK SRD_PKT_ACK_MAX_LEN, data
   SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN, plus the fragment when
   |contiguous|); nothing changed then.  Defined in srd_tx.c. */
srd_ssize srd_tx_write(srd_ep *ep, srd_peer *p, srd_path *path, uint8_t *buf,
                       size_t cap, srd_iovec *payload, int contiguous,
                       srd_tstamp now);

/* srd_tx_deadline returns the earliest time after which |p| needs
   srd_tx_on_timer or has a packet to write: the handshake retry, a
   delayed ACK, the ACK repeat, the next RACK loss, the RTO of the oldest
   packet in flight, and, while data waits, the end of the RNR backoff or
   of the pacing gap (windows below one packet); SRD_TSTAMP_NONE if none.
   It changes nothing.  Defined in srd_tx.c. */
srd_tstamp srd_tx_deadline(const srd_ep *ep, const srd_peer *p, srd_tstamp now);

/* srd_tx_on_timer runs |p|'s timers that are due at |now|: the handshake
   retry (past max_retries the peer, if not established, becomes
   SRD_PEER_STATE_UNREACHABLE and every send to it completes with
   SRD_ERR_PEER_UNREACHABLE), RACK losses, the retransmission timeout
   (a message with a fragment past max_retries, and after more than
   max_retries timeouts with nothing heard from the peer every send to
   it, completes with SRD_ERR_PEER_UNRESPONSIVE), retiring the sent ring and the
   end of an RNR backoff.  Precondition: the caller makes |p| ready and its
   timer dirty afterwards (srd_ep_handle_expiry does).  Defined in srd_tx.c. */
void srd_tx_on_timer(srd_ep *ep, srd_peer *p, srd_tstamp now);

/* srd_tx_on_ack applies acknowledgement |a| from |p| (an ACK packet's, or
   one riding on a DATA), which it only reads: packets acknowledged,
   fragments and messages done (send completions), RTT samples from the
   echoes no acknowledgement told of before, path state and steering,
   the NACKs (RNR backoff, and SRD_ERR_RNR past rnr_retries;
   SRD_ERR_REMOTE_TRUNCATED; DONE and HAVE notices), congestion control,
   loss detection (a fragment past max_retries completes its message with
   SRD_ERR_PEER_UNRESPONSIVE) and retiring the ring.

   Returns 0, or SRD_ERR_PROTO if |a| acknowledges a packet number never
   sent (its largest not below the next packet number, or more than 2^30
   behind it): the drop is counted (SRD_DROP_BAD_ACK) and nothing else
   changed.  Defined in srd_tx.c. */
int srd_tx_on_ack(srd_ep *ep, srd_peer *p, const srd_pkt_ack *a,
                  srd_tstamp now);

/* srd_tx_fail_all completes every started message to |p| with |err| (a
   negative SRD_ERR_*), in message id order, and with |pending_too| also
   the sends not started yet (which otherwise stay queued for the next
   session); the lost and parked retransmission queues are emptied.
   Defined in srd_tx.c. */
SRD_COLD void srd_tx_fail_all(srd_ep *ep, srd_peer *p, int err, int pending_too,
                              srd_tstamp now);

/* srd_ep_set_path_burst sets how many packets one data pick of |p|'s
   paths carries, from settings.path_burst_bytes and the peer's packet
   size (at least one). */
void srd_ep_set_path_burst(const srd_ep *ep, srd_peer *p);

/* srd_tx_session_reset ends the sending side of |p|'s session (the peer
   proved a new incarnation): started messages complete with
   SRD_ERR_PEER_RESET (sends not started stay, for the new session), the
   sent ring restarts at a fresh random packet number just below the
   wrap, and the message table, the per-path RACK state, the RTO backoff,
   RNR backoff, SYNC, ACK repeat and pacing state and the congestion
   controller start over.  The new session's message ids are the
   caller's to set.  Defined in srd_tx.c. */
SRD_COLD void srd_tx_session_reset(srd_ep *ep, srd_peer *p, srd_tstamp now);

/* ------------------------------------------------------------------------ */
/* srd_rx.c                                                                 */

/* srd_rx_packet handles packet |pkt| from |p|, decoded by srd_pkt_decode
   (its header CRC and fields checked).  Its payload comes in two pieces,
   |pay1| (|len1| bytes) and |pay2| (|len2|), both only read: pay2 NULL
   with len2 > 0 is a payload given by length only (a simulator's), not
   copied and not checked.  In order: a packet carrying our own id as its
   sender is refused; handshake packets run the handshake; other packets
   must be addressed to our session id and come from the peer's proven
   incarnation (a DATA echoing our cookie proves it); then DATA (its
   riding ACK first), ACK or SYNC.  Completions may be pushed, and a
   handshake may start (srd_ep_start_handshake) to learn which
   incarnation is live.

   Returns 0 if the packet was taken, or dropped as harmless (a
   duplicate, an old packet, one refused with an RNR: counted), or one of
   (the drop is counted in either case):
   SRD_ERR_STALE  a packet of another incarnation: our own come back, a
                  replaced incarnation's handshake, a handshake answer
                  that answers nothing of ours, or data, an ACK or a
                  SYNC for a session we do not have
   SRD_ERR_PROTO  a bogus riding or standalone ACK (srd_tx_on_ack), a
                  message id beyond every window, a fragment that
                  contradicts the message (length, offset, size), or a
                  payload that fails its CRC
   Defined in srd_rx.c. */
int srd_rx_packet(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                  const uint8_t *pay1, size_t len1, const uint8_t *pay2,
                  size_t len2, srd_tstamp now);

/* srd_rx_establish makes |conn| the proven incarnation of |p|, with its
   handshake parameters |params| (mtu, max_msg_size, msg_window), as a
   confirmed cookie does; a stateless handshake's peer starts so. */
SRD_COLD void srd_rx_establish(srd_ep *ep, srd_peer *p, uint32_t conn,
                               const srd_pkt_hs *params, srd_tstamp now);

/* srd_rx_session_reset ends the receiving side of |p|'s session:
   messages complete here that wait for a receive stay, deliverable in
   any order; every other message in progress ends, and a receive holding
   part of one completes with |err| (a negative SRD_ERR_*).  The message
   tables and the ACK tracker start over; the new session's first message
   id is the caller's to set.  Defined in srd_rx.c. */
SRD_COLD void srd_rx_session_reset(srd_ep *ep, srd_peer *p, int err,
                                   srd_tstamp now);

/* srd_rx_deliver hands unexpected message |c| to the oldest posted
   receive: a buffer too small completes with SRD_ERR_TRUNCATED (and a
   partial message is marked failed); a complete message is copied and
   completes; a partial one claims the receive, and its later fragments
   go straight into it.  Then its sender's retired ids advance.
   Precondition: a receive is posted, |c| is in the unexpected queue and
   may be delivered now (any order, or its turn for an ordered peer).
   Defined in srd_rx.c. */
void srd_rx_deliver(srd_ep *ep, srd_rctx *c, srd_tstamp now);

/* srd_rx_flush is the receiving side of srd_ep_flush: a receive holding
   part of a message completes with SRD_ERR_CANCELED and the rest of that
   message is taken in and dropped (so that its sender completes and its
   id stays done); unexpected messages are dropped; then every peer's
   retired ids advance.  Receives that hold nothing are the caller's to
   complete.  Defined in srd_rx.c. */
void srd_rx_flush(srd_ep *ep, srd_tstamp now);

#endif /* SRD_EP_H */
