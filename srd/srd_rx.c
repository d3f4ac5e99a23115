/*
 * srd_rx.c: the receiving side of a peer: which incarnation a packet
 * belongs to, the handshake that proves it, placing fragments in receive
 * buffers (or the unexpected pool), "receiver not ready", duplicate
 * suppression by message id (at-most-once), and delivery, in any order or,
 * for an ordered peer, in send order.
 */
#include "srd_ep.h"

#include <assert.h>
#include <string.h>

static srd_rctx *ctx_of(const srd_ep *ep, const srd_peer *p, uint32_t id) {
  uint32_t ref = p->rx_ctx[id & srd_msg_mask(ep)];
  return ref ? &ep->rctxs[ref - 1] : NULL;
}

/* copy2 copies a payload that may lie in two pieces. */
/* copy2 copies a payload in two pieces; a NULL second piece is one a
   simulator did not give (srd_ep_read_pktv). */
static void copy2(uint8_t *dst, const uint8_t *p1, size_t n1, const uint8_t *p2,
                  size_t n2) {
  if (n1) {
    memcpy(dst, p1, n1);
  }
  if (n2 && p2 != NULL) {
    memcpy(dst + n1, p2, n2);
  }
}

/* rx_must_check says whether the payload of DATA |pkt| is to be checked
   against its CRC: the sender put one in, this endpoint checks them, and
   the bytes are there (a simulator may give a payload by length only). */
static inline int rx_must_check(const srd_ep *ep, const srd_pkt *pkt,
                                const uint8_t *pay2, size_t len2) {
  return ep->settings.payload_crc && (pkt->c.flags & SRD_DATA_FLAG_PCRC) &&
         (len2 == 0 || pay2 != NULL);
}

/* rx_place copies a fragment's payload to |dst| and checks its CRC
   (srd_crc32c_copy: in the same pass for short payloads, over the copy
   just made for long ones).  Returns 0, or SRD_ERR_PROTO if the payload is
   not what was sent: the packet is then dropped and counted, and |dst|
   holds garbage where the fragment goes, which its retransmission
   overwrites before anything of the message is delivered (a fragment is
   marked received only once it passed). */
static int rx_place(srd_ep *ep, srd_peer *p, const srd_pkt *pkt, uint8_t *dst,
                    const uint8_t *pay1, size_t len1, const uint8_t *pay2,
                    size_t len2, srd_tstamp now) {
  uint32_t c;

  if (!rx_must_check(ep, pkt, pay2, len2)) {
    copy2(dst, pay1, len1, pay2, len2);
    return 0;
  }
  c = srd_crc32c_copy(0, dst, pay1, len1);
  if (len2) {
    c = srd_crc32c_copy(c, dst + len1, pay2, len2);
  }
  if (c != pkt->u.data.pcrc) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_CORRUPT_PAYLOAD, SRD_PKT_DATA);
    return SRD_ERR_PROTO;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Delivery                                                                 */

static void recv_complete(srd_ep *ep, srd_peer *p, uint32_t ridx, int status,
                          uint32_t msg_id, size_t len, srd_tstamp now) {
  srd_recv *r = &ep->recvs[ridx];

  if (p) {
    ++p->msgs_received;
  }
  srd_ep_cq_push(ep, SRD_OP_RECV, ridx, status, p ? p->id : UINT32_MAX, msg_id,
                 r->buf, len, r->user_ctx, now);
}

/* posted_pop takes the oldest posted receive. */
static uint32_t posted_pop(srd_ep *ep) {
  uint32_t idx = ep->posted_head;
  srd_recv *r = &ep->recvs[idx];

  ep->posted_head = r->next;
  if (ep->posted_head != SRD_NIL) {
    ep->recvs[ep->posted_head].prev = SRD_NIL;
  } else {
    ep->posted_tail = SRD_NIL;
  }
  r->next = r->prev = SRD_NIL;
  return idx;
}

static inline int ctx_complete(const srd_rctx *c) {
  return c->n_recvd == c->n_frags;
}

/* mark_failed records that message |id| of |p| failed at the receiver, so
   later fragments are refused with a truncation NACK. */
static void mark_failed(srd_ep *ep, srd_peer *p, uint32_t id) {
  if (id - p->rx_next < ep->settings.msg_window) {
    srd_bit_set(p->rx_done, id & srd_msg_mask(ep));
    srd_bit_set(p->rx_err, id & srd_msg_mask(ep));
  }
}

/* deliver_unexp moves unexpected message |c| into the oldest posted
   receive: copied now if complete, else its later fragments go straight
   to the buffer. */
static void deliver_unexp(srd_ep *ep, srd_rctx *c, srd_tstamp now) {
  srd_peer *p = srd_ep_peer(ep, c->peer);
  uint32_t ridx = posted_pop(ep);
  srd_recv *r = &ep->recvs[ridx];
  uint32_t ch;

  if (r->cap < c->msg_len) {
    recv_complete(ep, p, ridx, SRD_ERR_TRUNCATED, c->msg_id, c->msg_len, now);
    if (p && !ctx_complete(c)) {
      mark_failed(ep, p, c->msg_id);
    }
    srd_ep_rctx_release(ep, c);
    return;
  }
  for (ch = c->chunks; ch != SRD_NIL; ch = ep->chunk_next[ch]) {
    uint32_t off = ep->chunk_frag[ch] * c->frag_size;
    memcpy(r->buf + off, ep->chunk_mem + (size_t)ch * ep->chunk_size,
           srd_min(c->frag_size, c->msg_len - off));
  }
  if (ctx_complete(c)) {
    recv_complete(ep, p, ridx, 0, c->msg_id, c->msg_len, now);
    srd_ep_rctx_release(ep, c);
    return;
  }
  /* Still arriving: hand back the chunks, keep placing in the buffer. */
  srd_ep_rctx_release_chunks(ep, c);
  srd_ep_rctx_unexp_remove(ep, c);
  r->state = SRD_RECV_CLAIMED;
  c->recv = ridx;
}

/* retire forgets message id rx_next: it is finished at the receiver. */
static void retire(srd_ep *ep, srd_peer *p) {
  uint32_t i = p->rx_next & srd_msg_mask(ep);

  srd_bit_clear(p->rx_done, i);
  srd_bit_clear(p->rx_err, i);
  p->rx_ctx[i] = 0;
  ++p->rx_next;
}

/* abort_ctx ends a message the sender gave up on. */
SRD_COLD static void abort_ctx(srd_ep *ep, srd_peer *p, srd_rctx *c, int err,
                               srd_tstamp now) {
  if (c->recv != SRD_NIL) {
    recv_complete(ep, p, c->recv, err, c->msg_id, c->msg_len, now);
  }
  srd_ep_rctx_release(ep, c);
}

/* srd_rx_advance retires |p|'s message ids from rx_next on while they are
   finished: delivered or failed ids, messages of an ordered peer held in
   the unexpected pool (delivered now if a receive is posted, else it
   stops), and ids below the sender's floor, whose partial messages end
   with SRD_ERR_ABORTED.  A failed (truncated) id is kept until the
   sender's floor passes it.  At most one window of ids per call. */
static void srd_rx_advance(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  uint32_t steps;

  for (steps = 0; steps < ep->settings.msg_window; ++steps) {
    uint32_t i = p->rx_next & srd_msg_mask(ep);
    srd_rctx *c = ctx_of(ep, p, p->rx_next);

    if (srd_bit_test(p->rx_done, i)) {
      /* A message that failed here (truncated) is remembered until the
         sender has finished it, so that every copy of its packets keeps
         getting the NACK and none is acknowledged as a duplicate. */
      if (srd_bit_test(p->rx_err, i) && !srd_seq_lt(p->rx_next, p->rx_floor)) {
        return;
      }
      if (p->ps.ordered && c != NULL) {
        /* Complete in the unexpected pool, waiting for a buffer. */
        if (ep->posted_head == SRD_NIL) {
          return;
        }
        deliver_unexp(ep, c, now);
      }
      retire(ep, p);
    } else if (srd_seq_lt(p->rx_next, p->rx_floor)) {
      /* The sender finished this id without us: it gave up on it. */
      if (c != NULL) {
        abort_ctx(ep, p, c, SRD_ERR_ABORTED, now);
      }
      retire(ep, p);
    } else {
      return;
    }
  }
  /* A whole window went by: every id below the floor is gone. */
  if (srd_seq_lt(p->rx_next, p->rx_floor)) {
    p->rx_next = p->rx_floor;
  }
}

void srd_rx_deliver(srd_ep *ep, srd_rctx *c, srd_tstamp now) {
  srd_peer *p = srd_ep_peer(ep, c->peer);

  deliver_unexp(ep, c, now);
  if (p) {
    srd_rx_advance(ep, p, now);
  }
}

/* on_msg_complete runs when the last fragment of |c| is in. */
static void on_msg_complete(srd_ep *ep, srd_peer *p, srd_rctx *c,
                            srd_tstamp now) {
  uint32_t i = c->msg_id & srd_msg_mask(ep);

  srd_bit_set(p->rx_done, i);
  if (c->discard) {
    srd_ep_rctx_release(ep, c); /* flushed: known, not delivered */
  } else if (c->recv != SRD_NIL) {
    recv_complete(ep, p, c->recv, 0, c->msg_id, c->msg_len, now);
    srd_ep_rctx_release(ep, c);
  } else if (!p->ps.ordered) {
    /* It waits in the unexpected queue; the done bit answers duplicates
       from here on, so the id may retire. */
    p->rx_ctx[i] = 0;
  }
  srd_rx_advance(ep, p, now);
}

/* ------------------------------------------------------------------------ */
/* Data                                                                     */

/* new_ctx finds a home for a message whose first fragment just arrived:
   a posted receive, else the unexpected pool.  Returns NULL when the
   packet was answered otherwise (RNR or truncation). */
static srd_rctx *new_ctx(srd_ep *ep, srd_peer *p, const srd_pkt_data *d,
                         srd_tstamp now) {
  uint32_t fs = p->frag_size;
  uint32_t n_frags = d->msg_len <= fs ? 1 : (d->msg_len + fs - 1) / fs;
  uint32_t chunks = d->msg_len ? n_frags : 0;
  int can_buffer = !p->ps.ordered || d->msg_id == p->rx_next;
  uint32_t cidx, w;
  srd_rctx *c;

  if (can_buffer && ep->posted_head != SRD_NIL) {
    uint32_t ridx;
    if (ep->recvs[ep->posted_head].cap < d->msg_len) {
      ridx = posted_pop(ep);
      recv_complete(ep, p, ridx, SRD_ERR_TRUNCATED, d->msg_id, d->msg_len, now);
      mark_failed(ep, p, d->msg_id);
      srd_acktr_add_nack(&p->acktr, d->seq, d->msg_id, SRD_NACK_TRUNCATED);
      srd_rx_advance(ep, p, now);
      return NULL;
    }
    ridx = posted_pop(ep);
    ep->recvs[ridx].state = SRD_RECV_CLAIMED;
    assert(ep->rctx_free != SRD_NIL);
    cidx = ep->rctx_free;
    c = &ep->rctxs[cidx];
    ep->rctx_free = c->next;
    c->recv = ridx;
  } else if (ep->n_unexp < ep->settings.unexp_msgs &&
             ep->chunks_avail >= chunks) {
    assert(ep->rctx_free != SRD_NIL);
    cidx = ep->rctx_free;
    c = &ep->rctxs[cidx];
    ep->rctx_free = c->next;
    c->recv = SRD_NIL;
    c->chunks = SRD_NIL;
    c->reserved = chunks;
    ep->chunks_avail -= chunks;
    c->next = SRD_NIL;
    c->prev = ep->unexp_tail;
    if (ep->unexp_tail != SRD_NIL) {
      ep->rctxs[ep->unexp_tail].next = cidx;
    } else {
      ep->unexp_head = cidx;
    }
    ep->unexp_tail = cidx;
    ++ep->n_unexp;
    ++ep->stats.unexp_msgs;
  } else {
    /* No buffer and no room: "receiver not ready"; the sender backs off
       and sends the packet again. */
    srd_acktr_add_nack(&p->acktr, d->seq, d->msg_id, SRD_NACK_RNR);
    ++ep->stats.rnr_sent;
    srd_ep_drop(ep, now, p->id, SRD_DROP_RNR, SRD_PKT_DATA);
    srd_ep_log(ep, now, SRD_LOG_RNR_SENT, p->id, -1, d->msg_id, 0);
    return NULL;
  }
  c->peer = p->id;
  c->msg_id = d->msg_id;
  c->msg_len = d->msg_len;
  c->frag_size = fs;
  c->n_frags = n_frags;
  c->n_recvd = 0;
  c->state = SRD_RCTX_ACTIVE;
  c->anyorder = 0;
  c->discard = 0;
  w = (n_frags + 63) / 64;
  if (w == 1) {
    c->bits[0] = 0; /* the common case, without a call */
  } else {
    memset(c->bits, 0, w * sizeof(uint64_t));
  }
  p->rx_ctx[d->msg_id & srd_msg_mask(ep)] = cidx + 1;
  return c;
}

/* dup_msg answers a packet of a message that is complete here: its
   packet is acknowledged, nothing is delivered again.  A retransmission
   (its sender has gone unanswered) also gets a DONE notice by message id:
   if the acknowledgements of earlier copies came back after the sender
   had given up on those packets, packet numbers can no longer tell it,
   and the message would fail although it was delivered. */
static void dup_msg(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                    srd_tstamp now) {
  const srd_pkt_data *d = &pkt->u.data;

  srd_acktr_record(&p->acktr, d->seq, d->tx_ts, pkt->c.path, now);
  if (d->tx_count > 1) {
    srd_acktr_add_note(&p->acktr, d->seq, d->msg_id, SRD_NACK_DONE, 0);
  }
  srd_ep_drop(ep, now, p->id, SRD_DROP_DUP_MSG, SRD_PKT_DATA);
}

static int on_data(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                   const uint8_t *pay1, size_t len1, const uint8_t *pay2,
                   size_t len2, srd_tstamp now) {
  const srd_pkt_data *d = &pkt->u.data;
  uint32_t i = d->msg_id & srd_msg_mask(ep), frag, fs = p->frag_size;
  srd_rctx *c;
  uint8_t *dst;
  int rv;

  if (srd_seq_gt(d->msg_floor, p->rx_floor)) {
    p->rx_floor = d->msg_floor;
    srd_rx_advance(ep, p, now);
  }
  /* Acknowledgements return on the path index the data came on, so that
     "path i" is one entropy pair both ways and the sender's steering,
     which sees every loss on path i, keeps ACKs off a path dead in either
     direction. */
  p->ack_path = (uint16_t)(pkt->c.path < p->paths.n ? pkt->c.path
                                                    : pkt->c.path % p->paths.n);
  switch (srd_acktr_check(&p->acktr, d->seq)) {
  case SRD_ACKTR_OLD:
    srd_ep_drop(ep, now, p->id, SRD_DROP_OUT_OF_WINDOW, SRD_PKT_DATA);
    return 0;
  case SRD_ACKTR_DUP:
    /* The same transmission twice (the network duplicated it). */
    p->acktr.immediate = 1;
    srd_ep_drop(ep, now, p->id, SRD_DROP_DUP_PKT, SRD_PKT_DATA);
    return 0;
  default:
    break;
  }
  /* A retired message (delivered, or given up by its sender). */
  if (srd_seq_lt(d->msg_id, p->rx_next)) {
    dup_msg(ep, p, pkt, now);
    return 0;
  }
  /* Beyond the window the done bits describe another message (id minus
     the window), so the window is checked before them.  An ordered
     receiver that holds completed messages for receives not yet posted
     lets its sender's floor run ahead of its own: what lies beyond is
     refused (RNR) until the application catches up, never taken for a
     duplicate. */
  if (d->msg_id - p->rx_next >= ep->settings.msg_window) {
    if (srd_seq_lt(d->msg_id, p->rx_floor)) {
      /* Finished at the sender already: nothing is owed. */
      srd_ep_drop(ep, now, p->id, SRD_DROP_OUT_OF_WINDOW, SRD_PKT_DATA);
      return 0;
    }
    if (d->msg_id - p->rx_floor < p->tx_window) {
      srd_acktr_add_nack(&p->acktr, d->seq, d->msg_id, SRD_NACK_RNR);
      ++ep->stats.rnr_sent;
      srd_ep_drop(ep, now, p->id, SRD_DROP_RNR, SRD_PKT_DATA);
      srd_ep_log(ep, now, SRD_LOG_RNR_SENT, p->id, -1, d->msg_id, 0);
      return 0;
    }
    srd_ep_drop(ep, now, p->id, SRD_DROP_OUT_OF_WINDOW, SRD_PKT_DATA);
    return SRD_ERR_PROTO;
  }
  /* A finished message: acknowledge the packet, deliver nothing. */
  if (srd_bit_test(p->rx_done, i)) {
    if (srd_bit_test(p->rx_err, i)) {
      srd_acktr_add_nack(&p->acktr, d->seq, d->msg_id, SRD_NACK_TRUNCATED);
      srd_ep_drop(ep, now, p->id, SRD_DROP_DUP_MSG, SRD_PKT_DATA);
    } else {
      dup_msg(ep, p, pkt, now);
    }
    return 0;
  }
  /* The fragment must sit where the negotiated fragment size puts it.
     (The first fragment, all of a small message, needs no division.) */
  if (d->offset == 0) {
    frag = 0;
  } else {
    frag = d->offset / fs;
    if (frag * fs != d->offset) {
      frag = UINT32_MAX;
    }
  }
  if (d->msg_len > ep->settings.max_msg_size || frag == UINT32_MAX ||
      d->payload_len != srd_min(fs, d->msg_len - d->offset)) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_FIELD, SRD_PKT_DATA);
    return SRD_ERR_PROTO;
  }
  /* A message of one packet that can go straight into a posted receive
     (the common small message) needs no reassembly context. */
  if (d->msg_len <= fs && ep->posted_head != SRD_NIL &&
      ep->recvs[ep->posted_head].cap >= d->msg_len &&
      (!p->ps.ordered || d->msg_id == p->rx_next) &&
      ctx_of(ep, p, d->msg_id) == NULL) {
    uint32_t ridx;
    /* Into the oldest posted receive; it is taken only if the payload
       passed its check. */
    rv = rx_place(ep, p, pkt, ep->recvs[ep->posted_head].buf, pay1, len1, pay2,
                  len2, now);
    if (rv != 0) {
      return rv;
    }
    ridx = posted_pop(ep);
    srd_acktr_record(&p->acktr, d->seq, d->tx_ts, pkt->c.path, now);
    srd_bit_set(p->rx_done, i);
    recv_complete(ep, p, ridx, 0, d->msg_id, d->msg_len, now);
    srd_rx_advance(ep, p, now);
    return 0;
  }
  c = ctx_of(ep, p, d->msg_id);
  if (c != NULL) {
    if (c->msg_len != d->msg_len) {
      srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_FIELD, SRD_PKT_DATA);
      return SRD_ERR_PROTO;
    }
    if (srd_bit_test(c->bits, frag)) {
      /* A retransmission of a fragment we have: it still gets its ACK,
         and a sender that has gone unanswered gets told by message id. */
      srd_acktr_record(&p->acktr, d->seq, d->tx_ts, pkt->c.path, now);
      if (d->tx_count > 1) {
        srd_acktr_add_note(&p->acktr, d->seq, d->msg_id, SRD_NACK_HAVE, frag);
      }
      srd_ep_drop(ep, now, p->id, SRD_DROP_DUP_PKT, SRD_PKT_DATA);
      return 0;
    }
  } else {
    c = new_ctx(ep, p, d, now);
    if (c == NULL) {
      return 0;
    }
  }
  if (d->payload_len && !c->discard) {
    if (c->recv != SRD_NIL) {
      /* In place, checked in the same pass. */
      rv = rx_place(ep, p, pkt, ep->recvs[c->recv].buf + d->offset, pay1, len1,
                    pay2, len2, now);
      if (rv != 0) {
        return rv;
      }
    } else {
      /* A chunk is taken for good: check first. */
      if (rx_must_check(ep, pkt, pay2, len2) &&
          !srd_pkt_payload_ok(pkt, pay1, len1, pay2, len2)) {
        srd_ep_drop(ep, now, p->id, SRD_DROP_CORRUPT_PAYLOAD, SRD_PKT_DATA);
        return SRD_ERR_PROTO;
      }
      if (srd_ep_chunk_take(ep, c, frag, &dst) != 0) {
        srd_unreachable(); /* chunks were reserved for every fragment */
      }
      copy2(dst, pay1, len1, pay2, len2);
    }
  }
  srd_bit_set(c->bits, frag);
  ++c->n_recvd;
  srd_acktr_record(&p->acktr, d->seq, d->tx_ts, pkt->c.path, now);
  if (ctx_complete(c)) {
    on_msg_complete(ep, p, c, now);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                 */

void srd_rx_flush(srd_ep *ep, srd_tstamp now) {
  uint32_t i;

  for (i = 0; i < ep->n_rctx; ++i) {
    srd_rctx *c = &ep->rctxs[i];
    srd_peer *p = srd_ep_peer(ep, c->peer);

    if (c->state == SRD_RCTX_FREE || c->discard) {
      continue;
    }
    if (c->recv != SRD_NIL) {
      /* Its buffer goes back; the rest of the message is taken in and
         dropped, so that its sender completes and its id stays done. */
      recv_complete(ep, p, c->recv, SRD_ERR_CANCELED, c->msg_id, c->msg_len,
                    now);
      c->recv = SRD_NIL;
      c->discard = 1;
    } else if (ctx_complete(c) || p == NULL) {
      srd_ep_rctx_release(ep, c); /* its id is done already */
    } else {
      srd_ep_rctx_release_chunks(ep, c);
      srd_ep_rctx_unexp_remove(ep, c);
      c->discard = 1;
    }
  }
  for (i = 0; i < ep->settings.max_peers; ++i) {
    if (ep->peers[i]) {
      srd_rx_advance(ep, ep->peers[i], now);
    }
  }
}

void srd_rx_session_reset(srd_ep *ep, srd_peer *p, int err, srd_tstamp now) {
  uint32_t k;

  for (k = 0; k < ep->settings.msg_window; ++k) {
    srd_rctx *c = ctx_of(ep, p, p->rx_next + k);
    if (c == NULL) {
      continue;
    }
    if (c->recv == SRD_NIL && ctx_complete(c)) {
      /* Complete and acknowledged, waiting for a buffer: it stays, free
         of ordering now. */
      c->anyorder = 1;
      p->rx_ctx[(p->rx_next + k) & srd_msg_mask(ep)] = 0;
    } else {
      abort_ctx(ep, p, c, err, now);
    }
  }
  memset(p->rx_ctx, 0, ep->settings.msg_window * sizeof(uint32_t));
  memset(p->rx_done, 0, ((ep->settings.msg_window + 63) / 64) * 8);
  memset(p->rx_err, 0, ((ep->settings.msg_window + 63) / 64) * 8);
  srd_acktr_reset(&p->acktr);
}

/* mix derives a per-direction value from two incarnation ids. */
static uint32_t mix(uint32_t a, uint32_t b) {
  uint32_t h = a * 2654435761u ^ (b + 0x9E3779B9u + (a << 6) + (a >> 2));
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

/* gone says whether |conn| is an incarnation of the peer that a later one
   replaced. */
static int gone(const srd_peer *p, uint32_t conn) {
  uint32_t i;

  for (i = 0; i < p->n_gone && i < SRD_GONE_MAX; ++i) {
    if (p->gone[i] == conn) {
      return 1;
    }
  }
  return 0;
}

/* establish makes |conn| the peer's proven incarnation.  A different one
   than before means the peer restarted: what was in flight with the old
   one ends in SRD_ERR_PEER_RESET (sends) or SRD_ERR_ABORTED (receives),
   and the old one is gone for good. */

SRD_COLD static void establish(srd_ep *ep, srd_peer *p, uint32_t conn,
                               const srd_pkt_hs *params, srd_tstamp now) {
  uint32_t tx_base, rx_base;

  if (srd_established(p) && p->peer_conn == conn) {
    return;
  }
  if (srd_established(p)) {
    srd_ep_log(ep, now, SRD_LOG_PEER_RESET, p->id, -1, p->peer_conn, conn);
    p->gone[p->n_gone++ % SRD_GONE_MAX] = p->peer_conn;
  }
  /* Whatever the handshake had outstanding with other incarnations is
     moot now: a late answer to our request, or a late echo of a cookie
     given to another incarnation, would otherwise take the session back
     to one that may be dead. */
  if (p->cookie != 0 && p->cookie_conn != conn) {
    p->cookie = 0;
    p->want_resp = 0;
  }
  p->req_nonce = 0;
  p->want_req = 0;
  srd_tx_session_reset(ep, p, now);
  srd_rx_session_reset(ep, p, SRD_ERR_ABORTED, now);
  p->peer_conn = conn;
  p->frag_size = srd_min(p->ps.mtu, params->mtu);
  p->peer_max_msg = params->max_msg_size;
  p->tx_window = srd_min(ep->settings.msg_window, params->msg_window);
  p->ccs.pkt_bytes = p->frag_size + SRD_PKT_DATA_HDR_LEN;
  p->ccs.max_cwnd = (uint64_t)ep->settings.pkt_window * p->ccs.pkt_bytes;
  srd_ep_set_path_burst(ep, p);
  /* Both ends derive each direction's first message id from the two
     incarnation ids, whoever started the handshake. */
  tx_base = srd_wrap_early(mix(p->local_conn, conn));
  rx_base = srd_wrap_early(mix(conn, p->local_conn));
  p->next_msg_id = p->msg_floor = tx_base;
  p->rx_next = p->rx_floor = rx_base;
  srd_ep_set_state(ep, p, SRD_PEER_STATE_ESTABLISHED, now);
  /* Messages the old session held for their turn are free of it now, and
     may take receives posted already. */
  srd_ep_drain_unexp(ep, now);
}

void srd_rx_establish(srd_ep *ep, srd_peer *p, uint32_t conn,
                      const srd_pkt_hs *params, srd_tstamp now) {
  establish(ep, p, conn, params, now);
}

/* confirm_cookie: the incarnation our HS_RESP went to proved it is live
   by echoing the cookie. */
SRD_COLD static void confirm_cookie(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  establish(ep, p, p->cookie_conn, &p->cookie_params, now);
  p->cookie = 0;
  /* A repeated request may still be waiting for its answer; the peer has
     proved itself with the cookie, so the answer is moot (and would carry
     a zero cookie). */
  p->want_resp = 0;
}

SRD_COLD static int on_hs_req(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                              srd_tstamp now) {
  if (gone(p, pkt->c.src_conn)) {
    /* A late request of an incarnation that was replaced: answering it
       would take the cookie from the one that replaced it. */
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_CONN, SRD_PKT_HS_REQ);
    return SRD_ERR_STALE;
  }
  srd_ep_log(ep, now, SRD_LOG_HANDSHAKE, p->id, -1, SRD_PKT_HS_REQ,
             pkt->c.src_conn);
  /* Answer with a fresh cookie; a repeated request from the same
     incarnation gets the same one.  Nothing changes until the cookie comes
     back, so a replayed request cannot reset anything. */
  if (p->cookie == 0 || p->cookie_conn != pkt->c.src_conn) {
    do {
      p->cookie = srd_pcg_u64(&ep->pcg);
    } while (p->cookie == 0);
    p->cookie_conn = pkt->c.src_conn;
  }
  p->cookie_params = pkt->u.hs;
  p->reply_path = (uint16_t)(pkt->c.path % p->paths.n);
  p->want_resp = 1;
  p->resp_echo = pkt->u.hs.nonce;
  p->resp_dst = pkt->c.src_conn;
  return 0;
}

SRD_COLD static int on_hs_resp(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                               srd_tstamp now) {
  if (pkt->c.dst_conn != p->local_conn || p->req_nonce == 0 ||
      pkt->u.hs.echo != p->req_nonce || gone(p, pkt->c.src_conn)) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_CONN, SRD_PKT_HS_RESP);
    return SRD_ERR_STALE;
  }
  srd_ep_log(ep, now, SRD_LOG_HANDSHAKE, p->id, -1, SRD_PKT_HS_RESP,
             pkt->c.src_conn);
  /* The handshake's round trip is the first RTT sample, unless the
     request was sent more than once (Karn: ambiguous). */
  if (p->hs_tries == 1 && p->rtt.samples == 0 && now > p->hs_sent_ts) {
    srd_rtt_update(&p->rtt, now - p->hs_sent_ts);
    p->ccs.srtt = p->rtt.srtt;
    p->ccs.min_rtt = p->rtt.min_rtt;
    p->ccs.target_qdelay = srd_cc_target(&p->ccs.target_cfg, p->ccs.min_rtt);
  }
  p->req_nonce = 0;
  p->want_req = 0;
  establish(ep, p, pkt->c.src_conn, &pkt->u.hs, now);
  p->want_confirm = 1;
  p->confirm_echo = pkt->u.hs.nonce;
  p->reply_path = (uint16_t)(pkt->c.path % p->paths.n);
  p->echo_cookie = pkt->u.hs.nonce;
  return 0;
}

SRD_COLD static int on_hs_confirm(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                                  srd_tstamp now) {
  if (pkt->c.dst_conn != p->local_conn || p->cookie == 0 ||
      pkt->u.hs.echo != p->cookie || pkt->c.src_conn != p->cookie_conn) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_CONN, SRD_PKT_HS_CONFIRM);
    return SRD_ERR_STALE;
  }
  srd_ep_log(ep, now, SRD_LOG_HANDSHAKE, p->id, -1, SRD_PKT_HS_CONFIRM,
             pkt->c.src_conn);
  confirm_cookie(ep, p, now);
  return 0;
}

/* stale_dst: a packet for an earlier incarnation of this endpoint, or
   from an incarnation of the peer that we have no session with but that
   believes it has one (its proof, the cookie, was lost or replaced).  A
   handshake of our own, answered only by the incarnation live at the
   peer's address, sets both sides straight; one per RTO at most. */
SRD_COLD static void stale_dst(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  if (p->req_nonce != 0 ||
      (p->last_stale_req && now - p->last_stale_req < srd_ep_rto(ep, p))) {
    return;
  }
  p->last_stale_req = now ? now : 1;
  srd_ep_start_handshake(ep, p, now);
}

int srd_rx_packet(srd_ep *ep, srd_peer *p, const srd_pkt *pkt,
                  const uint8_t *pay1, size_t len1, const uint8_t *pay2,
                  size_t len2, srd_tstamp now) {
  if (pkt->c.src_conn == p->local_conn) {
    /* Our own packet come back (a reflecting service at the peer's
       address: an echo port), or a peer that drew our incarnation id
       (one chance in 2^32; it gets through when one of us restarts).
       Taken for a peer, it would be a session with ourselves. */
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_CONN, pkt->c.type);
    return SRD_ERR_STALE;
  }
  switch (pkt->c.type) {
  case SRD_PKT_HS_REQ:
    return on_hs_req(ep, p, pkt, now);
  case SRD_PKT_HS_RESP:
    return on_hs_resp(ep, p, pkt, now);
  case SRD_PKT_HS_CONFIRM:
    return on_hs_confirm(ep, p, pkt, now);
  default:
    break;
  }
  if (pkt->c.dst_conn != p->local_conn) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_CONN, pkt->c.type);
    stale_dst(ep, p, now);
    return SRD_ERR_STALE;
  }
  if (!srd_established(p) || pkt->c.src_conn != p->peer_conn) {
    /* Data that carries our cookie proves its sender's incarnation (its
       HS_CONFIRM may be late or lost). */
    if (pkt->c.type == SRD_PKT_DATA && (pkt->c.flags & SRD_DATA_FLAG_HS_ECHO) &&
        p->cookie != 0 && pkt->u.data.hs_echo == p->cookie &&
        pkt->c.src_conn == p->cookie_conn) {
      confirm_cookie(ep, p, now);
    } else {
      srd_ep_drop(ep, now, p->id,
                  srd_established(p) ? SRD_DROP_BAD_CONN : SRD_DROP_NO_SESSION,
                  pkt->c.type);
      /* An incarnation that thinks it has a session with us and has not:
         find out who is live at the peer's address (a replaced one is
         only ignored). */
      if (!gone(p, pkt->c.src_conn)) {
        stale_dst(ep, p, now);
      }
      return SRD_ERR_STALE;
    }
  }
  /* Anything valid from the peer's incarnation proves it is alive. */
  p->silent_rtos = 0;
  switch (pkt->c.type) {
  case SRD_PKT_DATA:
    if (pkt->u.data.ack != NULL) {
      /* The acknowledgement riding on it first: the packet is refused
         whole if that is bogus. */
      int rv = srd_tx_on_ack(ep, p, pkt->u.data.ack, now);
      if (rv != 0) {
        return rv;
      }
    }
    /* It came: this path works from the peer to here. */
    srd_pathset_on_rx(&p->paths, pkt->c.path % p->paths.n);
    return on_data(ep, p, pkt, pay1, len1, pay2, len2, now);
  case SRD_PKT_ACK: {
    /* The packets it acknowledges count first, then its own path. */
    int rv = srd_tx_on_ack(ep, p, &pkt->u.ack, now);
    srd_pathset_on_rx(&p->paths, pkt->c.path % p->paths.n);
    return rv;
  }
  case SRD_PKT_SYNC:
    srd_pathset_on_rx(&p->paths, pkt->c.path % p->paths.n);
    if (srd_seq_gt(pkt->u.sync.msg_floor, p->rx_floor)) {
      p->rx_floor = pkt->u.sync.msg_floor;
      srd_rx_advance(ep, p, now);
    }
    return 0;
  default:
    srd_unreachable();
  }
}
