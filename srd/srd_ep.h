/*
 * srd_ep.h: the endpoint's internal state, shared by srd_ep.c (API,
 * pools, timers, scheduling), srd_tx.c (what goes out, acknowledgements
 * coming back, loss detection) and srd_rx.c (what comes in: data, the
 * handshake, reassembly and delivery).
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

/* srd_send is a posted send (a message). */
typedef struct srd_send {
  const uint8_t *buf;
  void *user_ctx;
  uint32_t len;
  srd_peer_id peer;
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
  uint8_t state;
  uint8_t queued; /* in the peer's send queue */
} srd_send;

/* Receive slot states. */
#define SRD_RECV_FREE 0
#define SRD_RECV_POSTED 1  /* waiting in the posted queue */
#define SRD_RECV_CLAIMED 2 /* a message is being placed in it */
#define SRD_RECV_DONE 3    /* completion queued, not polled */

/* srd_recv is a posted receive buffer. */
typedef struct srd_recv {
  uint8_t *buf;
  size_t cap;
  void *user_ctx;
  uint32_t next; /* posted queue or free list */
  uint32_t prev;
  uint8_t state;
} srd_recv;

/* Receive context states. */
#define SRD_RCTX_FREE 0
#define SRD_RCTX_ACTIVE 1 /* fragments arriving */
#define SRD_RCTX_HELD 2   /* complete, waiting for ordered delivery */

/* srd_rctx is a message being received. */
typedef struct srd_rctx {
  srd_peer_id peer;
  uint32_t msg_id;
  uint32_t msg_len;
  uint32_t frag_size;
  uint32_t n_frags;
  uint32_t n_recvd;
  uint64_t *bits;    /* received fragments */
  uint32_t recv;     /* the posted receive, or SRD_NIL if unexpected */
  uint32_t chunks;   /* unexpected: chunks holding fragments (a list) */
  uint32_t reserved; /* unexpected: chunks reserved, not yet taken */
  uint32_t next;     /* free list, or the unexpected queue */
  uint32_t prev;
  uint8_t state;
  uint8_t anyorder; /* deliverable in any order (its session ended) */
  uint8_t discard;  /* flushed: fragments accepted and acknowledged but
                       not placed; no completion */
} srd_rctx;

/* srd_retxq is a ring of fragments waiting to be sent again. */
typedef struct srd_retxq srd_retxq;

/* srd_retx is a fragment waiting to be sent again. */
typedef struct srd_retx {
  uint32_t slot;
  uint32_t msg_id;
  uint32_t frag;
  uint16_t lost_path; /* the path it was lost on (avoided for the resend) */
  uint8_t tries;      /* transmissions in a row that got no answer */
} srd_retx;

struct srd_retxq {
  srd_retx *q;
  uint32_t cap;
  uint32_t head;
  uint32_t len;
};

/* srd_peer is everything an endpoint knows about one peer. */
typedef struct srd_peer {
  srd_peer_id id;
  srd_peer_settings ps;
  srd_peer_state state;

  /* Handshake (docs/protocol.md, "Incarnations and the handshake"). */
  uint32_t local_conn; /* our incarnation id for this peer's session */
  uint32_t peer_conn;  /* the peer's proven incarnation id */
  uint64_t req_nonce;  /* our outstanding HS_REQ's nonce, 0 if none */
  uint32_t hs_tries;   /* HS_REQs sent for req_nonce */
  srd_tstamp hs_deadline;
  srd_tstamp hs_sent_ts;    /* when the first HS_REQ for req_nonce left */
  int want_req;             /* send an HS_REQ */
  uint64_t cookie;          /* nonce of our HS_RESP awaiting proof, 0 if none */
  uint32_t cookie_conn;     /* the incarnation it was issued to */
  srd_pkt_hs cookie_params; /* that incarnation's REQ parameters */
  int want_resp;            /* send an HS_RESP answering resp_echo */
  uint64_t resp_echo;
  uint32_t resp_dst;
  int want_confirm; /* send an HS_CONFIRM echoing confirm_echo */
  uint64_t confirm_echo;
  /* Handshake paths: a reply goes back on the path index of the packet
     it answers (as ACKs do); hs_path is where our last HS_REQ went, so an
     unanswered one counts as a loss there and retries steer away. */
  uint16_t hs_path;
  uint16_t reply_path;
  uint64_t echo_cookie; /* put in our data until the peer acknowledges */
  /* The peer incarnations this slot had sessions with and replaced (a
     ring): never established again, so that no packet of a session that
     ended, however late, can be taken into a new one with the same pair
     of ids (its message ids would start where the old ones did). */
  uint32_t gone[SRD_GONE_MAX];
  uint32_t n_gone;
  int responsive;            /* the peer has acknowledged something */
  srd_tstamp last_stale_req; /* rate limit for re-handshakes */

  /* Negotiated with the peer. */
  uint32_t frag_size; /* min of both MTUs */
  uint32_t peer_max_msg;
  uint32_t tx_window; /* min of both message windows */

  /* Transmit side. */
  srd_rtb rtb;
  uint32_t next_msg_id;
  uint32_t msg_floor; /* lowest message id not finished */
  uint32_t *tx_msgs;  /* slot + 1 by message id & mask, 0 if none */
  uint32_t sq_head;   /* send queue: messages with unsent fragments */
  uint32_t sq_tail;
  /* Fragments to send again: lost ones first (urgent); refused ones
     (RNR) after the rest of the message being sent, which may hold the
     receiver's buffer, so that refusals never starve it. */
  srd_retxq lost;
  srd_retxq parked;
  srd_pathset paths;
  srd_rtt rtt;
  srd_cc cc;
  srd_cc_stat ccs;
  srd_tstamp next_pace_ts; /* pacing for windows below one packet */
  srd_tstamp rnr_until;    /* RNR backoff: no data before this */
  uint32_t rnr_exp;
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
  uint32_t rack_max_seq;    /* over all paths */
  int rack_max_valid;
  int want_sync; /* tell the peer our message floor */
  /* sync_until: an abandoned message's id + 1, while the floor has not
     passed it (sync_owed): the floor is told again once it does, since
     the receiver may hold later messages for it (ordered) and no data may
     come to carry it. */
  uint32_t sync_until;
  int sync_owed;

  /* Receive side. */
  srd_acktr acktr;
  uint32_t rx_next;  /* lowest message id not retired */
  uint32_t rx_floor; /* the peer's message floor, as last heard */
  uint32_t *rx_ctx;  /* rctx + 1 by message id & mask, 0 if none */
  uint64_t *rx_done; /* bitmap: message complete (or failed) */
  uint64_t *rx_err;  /* bitmap: message failed (truncated) */
  uint16_t ack_path; /* path of the newest data packet: ACKs go back on it */
  /* ack_repeat_at is when the latest ACK is sent again, on another path,
     if no other ACK has followed it (SRD_TSTAMP_NONE: not to be). */
  srd_tstamp ack_repeat_at;
  /* ack_hold is how long the peer holds a packet before acknowledging
     it: a maximum of the echoes' hold times that decays by 1/8 a sample. */
  srd_duration ack_hold;

  /* Scheduling. */
  srd_pq_entry timer;
  int timer_dirty; /* the deadline needs recomputing (on the dirty list) */
  uint32_t ready_next;
  uint32_t ready_prev;
  int in_ready;

  /* Statistics. */
  uint64_t pkts_sent;
  uint64_t pkts_acked;
  uint64_t retransmits;
  uint64_t rnr_received;
  uint64_t msgs_sent;
  uint64_t msgs_received;
} srd_peer;

struct srd_ep {
  srd_settings settings;
  const srd_mem *mem;
  const srd_cc_ops *cc_ops;
  srd_pcg pcg;
  uint32_t conn_id;
  uint32_t max_frags;  /* fragments of the largest message, worst case */
  uint32_t frag_words; /* uint64_t words of a fragment bitmap */
  size_t max_pkt;      /* largest datagram written */
  uint8_t *tap_buf;    /* pkt_tap: a datagram assembled from its pieces */

  srd_peer **peers;

  srd_send *sends;
  uint32_t send_free;
  srd_recv *recvs;
  uint32_t recv_free;
  uint32_t posted_head; /* posted receives in posting order */
  uint32_t posted_tail;

  srd_rctx *rctxs;
  uint32_t n_rctx;
  uint32_t rctx_free;
  uint32_t unexp_head; /* unexpected messages in arrival order */
  uint32_t unexp_tail;
  uint32_t n_unexp;

  /* Chunks hold fragments of unexpected messages. */
  uint8_t *chunk_mem;
  uint32_t chunk_size;
  uint32_t n_chunks;
  uint32_t *chunk_next;
  uint32_t *chunk_frag;
  uint32_t chunk_free;
  uint32_t chunks_avail; /* free and not reserved */

  /* The completion queue and, beside it, the slot each entry frees. */
  srd_cqe *cq;
  uint32_t *cq_slot;
  uint32_t cq_cap;
  uint32_t cq_head;
  uint32_t cq_len;

  srd_pq timers;
  /* Peers whose deadline changed; recomputed in one go when the driver
     next asks for the expiry, rather than after every packet. */
  uint32_t *dirty;
  uint32_t n_dirty;
  srd_tstamp last_now; /* the latest time the endpoint was given */
  uint32_t ready_head;
  uint32_t ready_tail;

  srd_ep_stats stats;
};

/* Bitmap helpers. */
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

/* srd_msg_mask masks a message id into the per-peer message tables. */
static inline uint32_t srd_msg_mask(const srd_ep *ep) {
  return ep->settings.msg_window - 1;
}

/* srd_ep_peer returns peer |id| or NULL. */
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

/* srd_ep.c */
SRD_COLD void srd_ep_log(srd_ep *ep, srd_tstamp ts, srd_log_event ev,
                         srd_peer_id peer, int32_t path, uint64_t a,
                         uint64_t b);
SRD_COLD void srd_ep_drop(srd_ep *ep, srd_tstamp ts, srd_peer_id peer,
                          srd_drop_reason why, uint8_t type);
void srd_ep_cq_push(srd_ep *ep, srd_op op, uint32_t slot, int status,
                    srd_peer_id peer, uint32_t msg_id, void *buf, size_t len,
                    void *user_ctx, srd_tstamp now);
void srd_ep_ready(srd_ep *ep, srd_peer *p);

/* srd_ep_cq_last returns the completion pushed last. */
static inline srd_cqe *srd_ep_cq_last(srd_ep *ep) {
  uint32_t i = ep->cq_head + ep->cq_len - 1;
  return &ep->cq[i >= ep->cq_cap ? i - ep->cq_cap : i];
}
void srd_ep_update_timer(srd_ep *ep, srd_peer *p, srd_tstamp now);
SRD_COLD void srd_ep_set_state(srd_ep *ep, srd_peer *p, srd_peer_state st,
                               srd_tstamp now);
void srd_ep_sq_remove(srd_ep *ep, srd_peer *p, srd_send *s);
void srd_ep_rctx_release(srd_ep *ep, srd_rctx *c);
void srd_ep_rctx_release_chunks(srd_ep *ep, srd_rctx *c);
SRD_COLD void srd_ep_start_handshake(srd_ep *ep, srd_peer *p, srd_tstamp now);
void srd_ep_rctx_unexp_remove(srd_ep *ep, srd_rctx *c);
/* srd_ep_drain_unexp hands messages waiting in the unexpected queue that
   may be delivered now to the receives posted, oldest first, while both
   last (after a post, or when a session's end frees held messages of
   their order). */
void srd_ep_drain_unexp(srd_ep *ep, srd_tstamp now);
int srd_ep_chunk_take(srd_ep *ep, srd_rctx *c, uint32_t frag, uint8_t **mem);
srd_duration srd_ep_rto(const srd_ep *ep, const srd_peer *p);

/* srd_tx.c */
srd_ssize srd_tx_write(srd_ep *ep, srd_peer *p, srd_path *path, uint8_t *buf,
                       size_t cap, srd_iovec *payload, int contiguous,
                       srd_tstamp now);
srd_tstamp srd_tx_deadline(const srd_ep *ep, const srd_peer *p, srd_tstamp now);
void srd_tx_on_timer(srd_ep *ep, srd_peer *p, srd_tstamp now);
int srd_tx_on_ack(srd_ep *ep, srd_peer *p, const srd_pkt_ack *a,
                  srd_tstamp now);
void srd_tx_msg_fail(srd_ep *ep, srd_peer *p, srd_send *s, int err,
                     srd_tstamp now);
SRD_COLD void srd_tx_fail_all(srd_ep *ep, srd_peer *p, int err, int pending_too,
                              srd_tstamp now);
SRD_COLD void srd_tx_session_reset(srd_ep *ep, srd_peer *p, srd_tstamp now);

/* srd_rx.c */
int srd_rx_packet(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                  const uint8_t *pay1, size_t len1, const uint8_t *pay2,
                  size_t len2, srd_tstamp now);
SRD_COLD void srd_rx_session_reset(srd_ep *ep, srd_peer *p, int err,
                                   srd_tstamp now);
void srd_rx_deliver(srd_ep *ep, srd_rctx *c, srd_tstamp now);
void srd_rx_advance(srd_ep *ep, srd_peer *p, srd_tstamp now);
void srd_rx_flush(srd_ep *ep, srd_tstamp now);

#endif /* SRD_EP_H */
