/*
 * srd_tx.c: the sending side of a peer.  What to write next (handshake,
 * acknowledgements, data), acknowledgements coming back, loss detection
 * (per-path RACK and the retransmission timeout), retries, RNR backoff and
 * the end of every message (exactly one completion each).
 */
#include "srd_ep.h"

#include <assert.h>
#include <string.h>

/* Packets with this lost_path were not lost (an RNR): no path to avoid. */
#define NO_PATH 0xFFFFu

/* ------------------------------------------------------------------------ */
/* Message ends                                                             */

/* finish takes an ACTIVE message out of the peer's window and moves the
   message floor past every finished id. */
static void finish(srd_ep *ep, srd_peer *p, srd_send *s) {
  p->tx_msgs[s->msg_id & srd_msg_mask(ep)] = 0;
  while (p->msg_floor != p->next_msg_id &&
         p->tx_msgs[p->msg_floor & srd_msg_mask(ep)] == 0) {
    ++p->msg_floor;
  }
  /* The floor passed a message we gave up on: say so (the SYNC sent when
     it was abandoned named an older message still in flight). */
  if (p->sync_owed && !srd_seq_lt(p->msg_floor, p->sync_until)) {
    p->sync_owed = 0;
    if (srd_established(p)) {
      p->want_sync = 1;
    }
  }
}

static void complete(srd_ep *ep, srd_peer *p, srd_send *s, int status,
                     srd_tstamp now) {
  uint32_t slot = (uint32_t)(s - ep->sends);
  int started = s->state == SRD_SEND_ACTIVE;

  ++p->msgs_sent;
  srd_ep_cq_push(ep, SRD_OP_SEND, slot, status, p->id, started ? s->msg_id : 0,
                 (void *)s->buf, s->len, s->user_ctx, now);
  if (started) {
    srd_ep_cq_last(ep)->flags = SRD_CQE_F_STARTED;
  }
}

/* srd_tx_msg_fail ends send |s| (PENDING or ACTIVE, to |p|) with |err|, a
   negative SRD_ERR_*: out of the send queue, logged as
   SRD_LOG_MSG_FAILED; a started message also leaves the window, moves
   the message floor and has a SYNC sent, so that the receiver retires
   its id; then its one completion (SRD_CQE_F_STARTED if it started). */
static void srd_tx_msg_fail(srd_ep *ep, srd_peer *p, srd_send *s, int err,
                            srd_tstamp now) {
  srd_ep_sq_remove(ep, p, s);
  srd_ep_log(ep, now, SRD_LOG_MSG_FAILED, p->id, -1,
             s->state == SRD_SEND_ACTIVE ? s->msg_id : 0, (uint64_t)-err);
  if (s->state == SRD_SEND_ACTIVE) {
    if (!p->sync_owed || srd_seq_gt(s->msg_id + 1, p->sync_until)) {
      p->sync_until = s->msg_id + 1;
    }
    p->sync_owed = 1;
    finish(ep, p, s);
    /* The receiver may hold part of it: tell it the floor moved. */
    if (srd_established(p)) {
      p->want_sync = 1;
    }
  }
  complete(ep, p, s, err, now);
}

void srd_tx_fail_all(srd_ep *ep, srd_peer *p, int err, int pending_too,
                     srd_tstamp now) {
  uint32_t i, base = p->msg_floor;

  /* ACTIVE messages first, so that the completions keep message order.
     Failing one moves the floor, so count from where it was. */
  for (i = 0; i < ep->settings.msg_window; ++i) {
    uint32_t id = base + i;
    uint32_t ref = p->tx_msgs[id & srd_msg_mask(ep)];
    if (ref) {
      srd_tx_msg_fail(ep, p, &ep->sends[ref - 1], err, now);
    }
  }
  if (pending_too) {
    while (p->sq_head != SRD_NIL) {
      srd_tx_msg_fail(ep, p, &ep->sends[p->sq_head], err, now);
    }
  }
  p->lost.head = p->lost.len = 0;
  p->parked.head = p->parked.len = 0;
}

/* ------------------------------------------------------------------------ */
/* Losses                                                                   */

static void retx_push(srd_retxq *q, const srd_rtb_ent *e, uint16_t lost_path,
                      uint8_t tries) {
  srd_retx *r;
  uint32_t i;

  /* Lost fragments: each left flight unsent since, and nothing new goes
     out while any waits, so at most the ring's size.  Refused ones: what
     the ring held plus one message's fragments (no new message starts
     while any waits).  The rings are sized so. */
  assert(q->len < q->cap);
  i = q->head + q->len;
  r = &q->q[i >= q->cap ? i - q->cap : i];
  ++q->len;
  r->slot = e->slot;
  r->msg_id = e->msg_id;
  r->frag = e->frag;
  r->lost_path = lost_path;
  r->tries = tries;
}

static void retxq_pop(srd_retxq *q) {
  if (++q->head == q->cap) {
    q->head = 0;
  }
  --q->len;
}

/* live_send returns the message of |e| if it is still in flight. */
static srd_send *live_send(srd_ep *ep, const srd_peer *p, uint32_t slot,
                           uint32_t msg_id) {
  srd_send *s = &ep->sends[slot];

  return s->state == SRD_SEND_ACTIVE && s->msg_id == msg_id && s->peer == p->id
             ? s
             : NULL;
}

/* declare_lost handles a packet found lost: the path is penalised and the
   fragment queued to be resent on another path, or its message fails when
   the fragment has used up its retries. */
static void declare_lost(srd_ep *ep, srd_peer *p, srd_rtb_ent *e, int timeout,
                         srd_tstamp now) {
  srd_send *s;
  srd_duration base;
  srd_tstamp until;

  srd_rtb_leave_flight(&p->rtb, e, SRD_RTB_LOST);
  if (timeout) {
    ++ep->stats.losses_rto;
    base = srd_ep_rto(ep, p);
  } else {
    ++ep->stats.losses_rack;
    base = 2 * (p->rtt.srtt ? p->rtt.srtt : ep->settings.rto_min);
    /* Packets sent after it were acknowledged: if it arrives after all
       (a late copy of it, a straggler), its echo says how late that one
       copy was, not what the path's round trip is, and gives no sample.
       A packet the timeout declared lost still does: when every answer
       comes late, that is how the longer round trip is learnt. */
    srd_bit_set(p->rtt_seen, e->seq & p->rtt_seen_mask);
  }
  srd_ep_log(ep, now, SRD_LOG_LOSS, p->id, e->path, e->seq, timeout != 0);
  until = srd_pathset_on_loss(&p->paths, e->path, e->tx_ts, now, base,
                              2 * ep->settings.rto_max);
  if (until > now) {
    srd_ep_log(ep, now, SRD_LOG_PATH_AVOID, p->id, e->path, until,
               timeout ? SRD_AVOID_TIMEOUT : SRD_AVOID_LOSS);
  }
  s = live_send(ep, p, e->slot, e->msg_id);
  if (s == NULL || srd_bit_test(s->acked, e->frag)) {
    return;
  }
  if (e->tx_count > ep->settings.max_retries) {
    /* Losses of this message that later proved spurious (the packet was
       acknowledged or refused after all) are not held against it. */
    if (s->refunds == 0) {
      srd_tx_msg_fail(ep, p, s, SRD_ERR_PEER_UNRESPONSIVE, now);
      return;
    }
    --s->refunds;
    e->tx_count = (uint8_t)ep->settings.max_retries;
  }
  retx_push(&p->lost, e, e->path, e->tx_count);
}

static int congested(const srd_peer *p) {
  return p->ps.n_paths == 1 || srd_pathset_congested(&p->paths);
}

/* loss_deadline returns when INFLIGHT packet |e| counts as lost, or
   SRD_TSTAMP_NONE while there is no evidence against it.  Time-based, as
   RACK (RFC 8985), with evidence of two strengths:
   - a packet sent after it on the same path was acknowledged: paths are
     FIFO, so it is lost once that path's RTT plus a small reordering
     window has passed;
   - a packet sent after it on another path was acknowledged: reordering
     across paths is normal, so it is lost only once its own path's
     smoothed RTT plus four deviations (or the reordering window, if wider)
     has passed.  With many paths and few packets in flight a path rarely
     carries two packets at once, and this is what finds most losses. */
static srd_tstamp loss_deadline(const srd_ep *ep, const srd_peer *p,
                                const srd_rtb_ent *e) {
  const srd_pathset *ps = &p->paths;
  const srd_pathinfo *pi = &ps->p[e->path];
  srd_duration reo = srd_pathset_reo_wnd(ps, e->path, SRD_US), srtt, var;

  if (srd_pathset_rack_older(ps, e->path, e->tx_ts, e->seq)) {
    return e->tx_ts + pi->rack_rtt + reo;
  }
  if (pi->rtt.samples > 0) {
    srtt = pi->rtt.srtt;
    var = pi->rtt.rttvar;
  } else {
    srtt = p->rtt.srtt;
    var = p->rtt.rttvar;
  }
  /* srtt excludes the receiver's hold, but the packet's acknowledgement
     may wait that long at the receiver: its delayed ACK's timer (up to
     ack_delay), or longer (a software receiver that sleeps).  Without it
     a packet whose ACK was merely held counted as lost: in a loaded fat
     tree 99% of SRD's retransmissions were spurious, each loss round
     halving the window. */
  return e->tx_ts + srtt + srd_max(4 * var, reo) +
         srd_max(p->ack_hold, ep->settings.ack_delay);
}

/* peer_older says whether |e| was sent before the newest acknowledged
   packet of the peer.  A driver that regroups what it sends
   (settings.tx_regroups: a round of packets written at one time goes out
   path by path, one GSO send each) orders packets of the same time by
   number only on the same path: a lower number on another path may leave
   after a higher one, by as long as the round takes to send (hundreds of
   microseconds for 256 KB on a veth, where counting them lost made
   tens of thousands of spurious retransmissions in a 3 s transfer). */
static int peer_older(const srd_ep *ep, const srd_peer *p,
                      const srd_rtb_ent *e) {
  return p->rack_max_valid &&
         (e->tx_ts < p->rack_max_xmit ||
          (e->tx_ts == p->rack_max_xmit &&
           (!ep->settings.tx_regroups || e->path == p->rack_max_path) &&
           srd_seq_lt(e->seq, p->rack_max_seq)));
}

/* detect_losses declares lost every packet whose loss deadline passed and
   arms loss_time for the next one. */
static void detect_losses(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  srd_rtb *rtb = &p->rtb;
  uint32_t s;
  int lost = 0;

  p->loss_time = SRD_TSTAMP_NONE;
  if (p->rtt.samples == 0) {
    return;
  }
  for (s = rtb->head; s != rtb->next; ++s) {
    srd_rtb_ent *e = &rtb->ents[s & rtb->mask];
    srd_tstamp deadline;

    if (e->state != SRD_RTB_INFLIGHT) {
      continue;
    }
    if (!p->rack_max_valid || e->tx_ts > p->rack_max_xmit) {
      break; /* nothing sent later has been acknowledged */
    }
    if (!peer_older(ep, p, e)) {
      continue; /* sent in the same round, on another path */
    }
    deadline = loss_deadline(ep, p, e);
    if (now >= deadline) {
      declare_lost(ep, p, e, 0, now);
      lost = 1;
    } else if (deadline < p->loss_time) {
      p->loss_time = deadline;
    }
  }
  if (lost) {
    p->ccs.inflight = rtb->inflight_bytes;
    p->cc.ops->on_loss(&p->cc, &p->ccs, congested(p), now);
    srd_ep_log(ep, now, SRD_LOG_CC, p->id, -1, p->ccs.cwnd, 3);
  }
}

static srd_tstamp keep_lost_from(const srd_ep *ep, const srd_peer *p,
                                 srd_tstamp now) {
  srd_duration keep = 2 * srd_ep_rto(ep, p);
  return now > keep ? now - keep : 0;
}

/* rto_deadline is when the timeout fires: one RTO after the oldest
   packet in flight was sent and after an ACK last acknowledged new data,
   and (as TCP restarts its timer when it fires) at least one backed-off
   RTO after it last fired.  The timeout is for silence: while ACKs make
   progress, a lost packet is found by its later-sent neighbours (RACK),
   and the oldest packet of a deep, sprayed window can well spend more
   than srtt + 4 rttvar in a queue (a spurious timeout there would also
   cut the window to its minimum).  TCP restarts its timer on every ACK
   of new data for the same reason (RFC 6298 5.3).  Without the restart
   after firing, a burst sent over a few microseconds would expire as a
   volley of "consecutive" timeouts within those microseconds. */
static srd_tstamp rto_deadline(const srd_ep *ep, const srd_peer *p,
                               const srd_rtb_ent *oldest) {
  srd_duration rto = srd_ep_rto(ep, p);
  srd_tstamp t = srd_max(oldest->tx_ts, p->last_progress) + rto;

  if (p->rto_backoff > 0 && p->last_rto + rto > t) {
    t = p->last_rto + rto;
  }
  return t;
}

static void on_rto(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  srd_rtb *rtb = &p->rtb;
  srd_duration rto = srd_ep_rto(ep, p);
  uint32_t s;

  ++ep->stats.rto_fired;
  srd_ep_log(ep, now, SRD_LOG_RTO, p->id, -1, p->rto_backoff, rto);
  for (s = rtb->head; s != rtb->next; ++s) {
    srd_rtb_ent *e = &rtb->ents[s & rtb->mask];
    if (e->state == SRD_RTB_INFLIGHT && e->tx_ts + rto <= now) {
      declare_lost(ep, p, e, 1, now);
    }
  }
  ++p->rto_backoff;
  p->last_rto = now;
  /* The retransmission a timeout releases goes now, not when pacing of
     a collapsed window would let it (TCP sends it at once too); else the
     timeouts, and with them the retry budget, stretch by the pacing. */
  p->next_pace_ts = 0;
  p->ccs.inflight = rtb->inflight_bytes;
  p->cc.ops->on_timeout(&p->cc, &p->ccs, p->rto_backoff, congested(p), now);
  srd_ep_log(ep, now, SRD_LOG_CC, p->id, -1, p->ccs.cwnd, 4);
  /* So many timeouts in a row with not a packet heard from the peer: it
     is unresponsive (EFA's "Remote Unresponsive" for an address handle),
     and every send to it ends now rather than one packet budget at a
     time.  A later send tries afresh. */
  if (++p->silent_rtos > ep->settings.max_retries) {
    srd_tx_fail_all(ep, p, SRD_ERR_PEER_UNRESPONSIVE, 1, now);
    p->silent_rtos = 0;
    p->rto_backoff = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* Acknowledgements                                                         */

/* frag_in records that fragment |frag| of live message |s| reached the
   receiver; the last one completes the message. */
static void frag_in(srd_ep *ep, srd_peer *p, srd_send *s, uint32_t frag,
                    srd_tstamp now) {
  if (srd_bit_test(s->acked, frag)) {
    return;
  }
  srd_bit_set(s->acked, frag);
  if (++s->n_acked == s->n_frags) {
    /* Only a notice (DONE, HAVE) can complete a message some fragment of
       which was never sent, and only a forged one: either way it leaves
       the send queue now, or it would be started again once its slot is
       free (fuzz_ep: a read of the buffer the application had freed). */
    srd_ep_sq_remove(ep, p, s);
    finish(ep, p, s);
    complete(ep, p, s, 0, now);
  }
}

static void frag_acked(srd_ep *ep, srd_peer *p, const srd_rtb_ent *e,
                       srd_tstamp now) {
  srd_send *s = live_send(ep, p, e->slot, e->msg_id);

  if (s != NULL) {
    frag_in(ep, p, s, e->frag, now);
  }
}

/* spurious handles a packet declared lost that reached the receiver
   after all (acknowledged or refused): the path's reordering window grows
   and the message gets the retry back. */
static void spurious(srd_ep *ep, srd_peer *p, const srd_rtb_ent *e,
                     srd_tstamp now) {
  srd_send *s = live_send(ep, p, e->slot, e->msg_id);

  ++ep->stats.spurious_losses;
  srd_ep_log(ep, now, SRD_LOG_SPURIOUS, p->id, e->path, e->seq, 0);
  srd_pathset_on_spurious(&p->paths, e->path);
  if (s != NULL) {
    ++s->refunds;
  }
}

/* unechoed counts a packet sent on |path| as acknowledged; the path's
   reverse direction is taken for dead when many are with no packet from
   the peer coming on it (srd_pathset_on_unechoed).  The peer sends an ACK
   for every k packets or so (k = ack_span16 / 16, as measured here: its
   ack_freq, its delay timer and its batching decide), on the path of the
   newest, so a packet is the one whose path an ACK takes with probability
   about 1/k, and a live path goes 16 k packets unanswered with probability
   about e^-16. */
static void unechoed(srd_ep *ep, srd_peer *p, uint32_t path, srd_tstamp now) {
  if (srd_pathset_on_unechoed(&p->paths, path,
                              (uint32_t)srd_max(p->ack_span16, 16), now)) {
    srd_ep_log(ep, now, SRD_LOG_PATH_AVOID, p->id, path, 0, SRD_AVOID_REVERSE);
  }
}

/* ack_range applies an acknowledgement of packets |lo| .. |hi|. */
static void ack_range(srd_ep *ep, srd_peer *p, uint32_t lo, uint32_t hi,
                      uint64_t *bytes, uint32_t *pkts, srd_tstamp now) {
  srd_rtb *rtb = &p->rtb;
  uint32_t s;

  /* Only the live part of the ring matters. */
  if (srd_seq_lt(hi, rtb->head)) {
    return;
  }
  if (srd_seq_lt(lo, rtb->head)) {
    lo = rtb->head;
  }
  for (s = lo;; ++s) {
    srd_rtb_ent *e = srd_rtb_get(rtb, s);
    if (e != NULL) {
      if (e->state == SRD_RTB_INFLIGHT || e->state == SRD_RTB_LOST) {
        srd_bit_set(p->rtt_seen, e->seq & p->rtt_seen_mask);
      }
      if (e->state == SRD_RTB_INFLIGHT) {
        srd_rtb_leave_flight(rtb, e, SRD_RTB_ACKED);
        srd_pathset_on_ack(&p->paths, e->path, e->tx_ts, e->seq,
                           now - e->tx_ts);
        unechoed(ep, p, e->path, now);
        if (!peer_older(ep, p, e)) {
          p->rack_max_xmit = e->tx_ts;
          p->rack_max_seq = e->seq;
          p->rack_max_path = e->path;
          p->rack_max_valid = 1;
        }
        *bytes += e->bytes;
        ++*pkts;
        ++p->pkts_acked;
        frag_acked(ep, p, e, now);
      } else if (e->state == SRD_RTB_LOST) {
        /* Declared lost, but it arrived: reordering, not loss. */
        e->state = SRD_RTB_ACKED;
        spurious(ep, p, e, now);
        frag_acked(ep, p, e, now);
      }
    }
    if (s == hi) {
      break;
    }
  }
}

static void on_rnr(srd_ep *ep, srd_peer *p, srd_send *s, srd_rtb_ent *e,
                   uint32_t msg_id, srd_tstamp now) {
  ++ep->stats.rnr_received;
  ++p->rnr_received;
  if (e != NULL && e->state == SRD_RTB_INFLIGHT && s != NULL) {
    srd_rtb_leave_flight(&p->rtb, e, SRD_RTB_NACKED);
    if (!srd_bit_test(s->acked, e->frag)) {
      /* The refusal proves the packet got through: the count of
         unanswered tries starts over. */
      retx_push(&p->parked, e, NO_PATH, 0);
    }
  } else if (e != NULL && e->state == SRD_RTB_LOST) {
    /* Refused, not lost: it is queued again already. */
    e->state = SRD_RTB_NACKED;
    spurious(ep, p, e, now);
  }
  /* A refusal of a packet sent after the current epoch began, once its
     backoff is over, begins a new one: random exponential backoff, as
     EFA's provider does after an RNR (docs/pkt-processing.md there).
     Refusals of packets that were already on their way when an epoch
     began are old news: they neither back off further nor count against
     the budget. */
  if (now >= p->rnr_until && (e == NULL || e->tx_ts >= p->rnr_epoch_ts)) {
    srd_duration b;
    p->rnr_epoch_ts = now;
    ++p->rnr_epoch;
    if (p->rnr_exp < 30) {
      ++p->rnr_exp;
    }
    b = ep->settings.rnr_backoff_min << (p->rnr_exp - 1);
    if (b > ep->settings.rnr_backoff_max ||
        (b >> (p->rnr_exp - 1)) != ep->settings.rnr_backoff_min) {
      b = ep->settings.rnr_backoff_max;
    }
    b = b / 2 + (srd_pcg_u64(&ep->pcg) % (b / 2 + 1));
    p->rnr_until = now + b;
    srd_ep_log(ep, now, SRD_LOG_RNR_RECV, p->id, -1, msg_id, b);
  }
  /* The receiver is not ready past its budget when it refused in more
     than rnr_retries backoff epochs in a row without taking any data in
     between.  A receiver that drains, however slowly, is waited for: with
     many messages queued behind one posted receive, each is refused again
     and again while the others go in, and failing them would punish a
     receiver that keeps up with what it posts. */
  if (s != NULL && ep->settings.rnr_retries != UINT32_MAX &&
      p->rnr_epoch - p->rnr_progress > ep->settings.rnr_retries) {
    srd_tx_msg_fail(ep, p, s, SRD_ERR_RNR, now);
  }
}

static void on_nack(srd_ep *ep, srd_peer *p, const srd_pkt_nack *n,
                    srd_tstamp now) {
  uint32_t ref = p->tx_msgs[n->msg_id & srd_msg_mask(ep)];
  srd_send *s = ref ? live_send(ep, p, ref - 1, n->msg_id) : NULL;
  srd_rtb_ent *e = srd_rtb_get(&p->rtb, n->seq);

  if (e != NULL && (e->msg_id != n->msg_id || s == NULL ||
                    e->slot != (uint32_t)(s - ep->sends))) {
    e = NULL;
  }
  switch (n->reason) {
  case SRD_NACK_RNR:
    on_rnr(ep, p, s, e, n->msg_id, now);
    break;
  case SRD_NACK_TRUNCATED:
    if (s != NULL) {
      srd_tx_msg_fail(ep, p, s, SRD_ERR_REMOTE_TRUNCATED, now);
    }
    break;
  default:
    /* A notice that the receiver holds a fragment (HAVE) or the whole
       message (DONE), keyed by message id: it reaches us even when the
       packets it answers have left the sent ring (deep reordering), and
       it is what lets such a message succeed instead of running out of
       retries. */
    if (s != NULL) {
      uint32_t f;
      p->rnr_progress = p->rnr_epoch;
      if (n->reason == SRD_NACK_HAVE) {
        if (n->frag < s->n_frags) {
          frag_in(ep, p, s, n->frag, now);
        }
      } else {
        for (f = 0; f < s->n_frags && s->state == SRD_SEND_ACTIVE; ++f) {
          frag_in(ep, p, s, f, now);
        }
      }
    }
    break;
  }
}

int srd_tx_on_ack(srd_ep *ep, srd_peer *p, const srd_pkt_ack *a,
                  srd_tstamp now) {
  srd_rtb *rtb = &p->rtb;
  uint64_t bytes = 0;
  uint32_t pkts = 0, i, hi, lo, fresh = 0, n_rel = 0;
  uint16_t rel_path[SRD_ACK_MAX_ECHO];
  srd_duration rel_rtt[SRD_ACK_MAX_ECHO], rel_sum = 0;
  srd_duration latest = 0;
  srd_cc_ack ca;

  if (!a->empty && (!srd_seq_lt(a->largest, rtb->next) ||
                    rtb->next - a->largest > (1u << 30))) {
    srd_ep_drop(ep, now, p->id, SRD_DROP_BAD_ACK, SRD_PKT_ACK);
    return SRD_ERR_PROTO;
  }
  /* The peer acknowledges us, so it has confirmed our incarnation. */
  p->echo_cookie = 0;
  p->responsive = 1;

  /* The echoes of packets no acknowledgement told of before this one:
     only they give RTT samples (below), once each. */
  for (i = 0; i < a->n_echo; ++i) {
    const srd_pkt_echo *e = &a->echo[i];
    const srd_rtb_ent *re = srd_rtb_get(rtb, e->seq);
    uint32_t j;
    if (!srd_seq_lt(e->seq, rtb->next) ||
        rtb->next - e->seq > p->rtt_seen_mask ||
        srd_bit_test(p->rtt_seen, e->seq & p->rtt_seen_mask) ||
        (re != NULL && re->tx_ts != e->tx_ts)) {
      continue;
    }
    for (j = 0; j < i && a->echo[j].seq != e->seq; ++j) {
    }
    if (j == i) {
      fresh |= 1u << i;
    }
  }

  if (!a->empty) {
    hi = a->largest;
    lo = hi - a->first_range;
    ack_range(ep, p, lo, hi, &bytes, &pkts, now);
    for (i = 0; i < a->n_ranges; ++i) {
      hi = lo - a->ranges[i].gap - 1;
      lo = hi - (a->ranges[i].len - 1u);
      if (srd_seq_lt(hi, rtb->head) || srd_seq_gt(hi, a->largest)) {
        break; /* below the ring (or wrapped past it): nothing more */
      }
      ack_range(ep, p, lo, hi, &bytes, &pkts, now);
    }
  }

  /* Each echo acknowledges its packet too: with many holes the ranges
     report only the newest part of the window, and a retransmission just
     below it would never be acknowledged (and be resent forever). */
  for (i = 0; i < a->n_echo; ++i) {
    const srd_pkt_echo *e = &a->echo[i];
    if (!srd_seq_lt(e->seq, rtb->next) || rtb->next - e->seq > (1u << 30)) {
      continue; /* never sent: not ours to believe */
    }
    ack_range(ep, p, e->seq, e->seq, &bytes, &pkts, now);
  }

  for (i = 0; i < a->n_echo; ++i) {
    const srd_pkt_echo *e = &a->echo[i];
    const srd_rtb_ent *re = srd_rtb_get(rtb, e->seq);
    uint16_t path = re != NULL ? re->path : e->path;
    srd_duration rtt;
    /* One sample per transmission, from the acknowledgement that first
       tells of it: a copy of an echo in a duplicated or delayed ACK, or
       an echo of a packet other ACKs acknowledged already, measures the
       delay of the copy, not the path (duplicates delayed by D would
       pull srtt towards D and, through the delay target, the window to
       nothing).  A first echo counts even when its packet left the ring:
       that is how a path whose delay grew is learnt. */
    if (!(fresh & (1u << i)) || e->tx_ts > now || path >= p->paths.n) {
      continue;
    }
    srd_bit_set(p->rtt_seen, e->seq & p->rtt_seen_mask);
    rtt = now - e->tx_ts;
    /* The receiver held the packet this long before answering: the
       timers must allow for it (a software receiver that sleeps holds for
       tens of microseconds), a decaying maximum of it. */
    p->ack_hold =
        srd_max((srd_duration)e->hold_ns, p->ack_hold - p->ack_hold / 8);
    if (rtt <= e->hold_ns) {
      continue; /* clocks that disagree: no sample (a floor of 1 ns would
                   be the base RTT for good, and no delay its target) */
    }
    rtt -= e->hold_ns;
    srd_rtt_update(&p->rtt, rtt);
    /* Queueing is measured against the base RTT of a full packet: on a
       slow fabric a full packet's serialisation at every hop is much of
       its RTT (13 us a hop at 5 Gb/s), and against the base of small
       packets (the handshake's) it would read as a standing queue. */
    if (re != NULL && re->bytes >= p->ccs.pkt_bytes &&
        (p->base_rtt_full == 0 || rtt < p->base_rtt_full)) {
      p->base_rtt_full = rtt;
    }
    p->ccs.srtt = p->rtt.srtt;
    if (p->ccs.min_rtt !=
        (p->base_rtt_full ? p->base_rtt_full : p->rtt.min_rtt)) {
      p->ccs.min_rtt = p->base_rtt_full ? p->base_rtt_full : p->rtt.min_rtt;
      p->ccs.target_qdelay = srd_cc_target(&p->ccs.target_cfg, p->ccs.min_rtt);
    }
    if (srd_pathset_on_sample(&p->paths, path, rtt, p->ccs.min_rtt,
                              p->ccs.target_qdelay, p->rtt.srtt, now)) {
      srd_ep_log(ep, now, SRD_LOG_PATH_AVOID, p->id, path,
                 p->paths.p[path].avoid_until, SRD_AVOID_DELAY);
    }
    latest = rtt;
    rel_path[n_rel] = path;
    rel_rtt[n_rel++] = rtt;
    rel_sum += rtt;
  }
  /* The packets one acknowledgement tells of came back together on one
     reverse path: their RTTs differ only by their forward paths.  Each
     one's excess over their mean is its path's forward delay relative to
     the others, free of the reverse path's noise: what steering's
     weights balance on (srd_pathset_on_rel). */
  if (n_rel >= 2) {
    srd_duration margin = p->ccs.min_rtt / 8;
    for (i = 0; i < n_rel; ++i) {
      srd_pathset_on_rel(&p->paths, rel_path[i],
                         (int64_t)rel_rtt[i] - (int64_t)(rel_sum / n_rel),
                         margin, p->rtt.srtt, now);
    }
  }

  if (pkts > 0) {
    p->last_progress = now;
    /* The receiver took data: the next refusal starts a short backoff
       again, and the budget starts over. */
    p->rnr_progress = p->rnr_epoch;
    p->rnr_exp = 0;
  }
  for (i = 0; i < a->n_nack; ++i) {
    on_nack(ep, p, &a->nack[i], now);
  }

  if (pkts > 0) {
    /* Packets per acknowledgement, x16, a moving average (gain 1/8). */
    p->ack_span16 +=
        ((int32_t)srd_min(pkts, 1u << 20) * 16 - p->ack_span16) / 8;
  }
  /* Data acknowledged or refused arrived: the timer backs off no more. */
  if (pkts > 0 || a->n_nack > 0) {
    p->rto_backoff = 0;
    if (now >= p->rnr_until) {
      p->rnr_exp = 0;
    }
  }
  ca.bytes_acked = bytes;
  ca.pkts_acked = pkts;
  ca.rtt = latest;
  ca.congested = congested(p);
  p->ccs.inflight = rtb->inflight_bytes;
  if (pkts > 0 || latest > 0) {
    uint64_t before = p->ccs.cwnd;
    p->cc.ops->on_ack(&p->cc, &p->ccs, &ca, now);
    if (p->ccs.cwnd < before) {
      srd_ep_log(ep, now, SRD_LOG_CC, p->id, -1, p->ccs.cwnd,
                 ca.congested ? 2 : 1);
    }
  }
  detect_losses(ep, p, now);
  srd_rtb_retire(rtb, keep_lost_from(ep, p, now));
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                   */

void srd_tx_on_timer(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  srd_rtb_ent *oldest;

  if (p->req_nonce && !p->want_req && now >= p->hs_deadline) {
    /* Unanswered: a loss on the path it took (or its answer's). */
    srd_pathset_on_loss(&p->paths, p->hs_path, p->hs_deadline, now,
                        ep->settings.rto_initial, 2 * ep->settings.rto_max);
    if (p->hs_tries > ep->settings.max_retries) {
      p->req_nonce = 0;
      if (!srd_established(p)) {
        srd_ep_set_state(ep, p, SRD_PEER_STATE_UNREACHABLE, now);
        srd_tx_fail_all(ep, p, SRD_ERR_PEER_UNREACHABLE, 1, now);
      }
    } else {
      p->want_req = 1;
    }
  }
  if (p->loss_time != SRD_TSTAMP_NONE && now >= p->loss_time) {
    detect_losses(ep, p, now);
  }
  oldest = srd_rtb_oldest(&p->rtb);
  if (oldest != NULL && now >= rto_deadline(ep, p, oldest)) {
    on_rto(ep, p, now);
  }
  srd_rtb_retire(&p->rtb, keep_lost_from(ep, p, now));
  if (p->rnr_until && now >= p->rnr_until) {
    p->rnr_until = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */

/* activate gives the PENDING message |s| the next message id. */
static void activate(srd_ep *ep, srd_peer *p, srd_send *s) {
  uint32_t slot = (uint32_t)(s - ep->sends), w;

  s->msg_id = p->next_msg_id++;
  s->state = SRD_SEND_ACTIVE;
  p->tx_msgs[s->msg_id & srd_msg_mask(ep)] = slot + 1;
  s->n_frags =
      s->len <= p->frag_size ? 1 : (s->len + p->frag_size - 1) / p->frag_size;
  s->next_frag = 0;
  s->n_acked = 0;
  w = (s->n_frags + 63) / 64;
  if (w == 1) {
    s->acked[0] = 0; /* the common case, without a call */
  } else {
    memset(s->acked, 0, w * sizeof(uint64_t));
  }
}

/* sq_front returns the message whose next fragment goes out, starting
   one (and failing those too long for the peer) if needed, or NULL. */
static srd_send *sq_front(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  while (p->sq_head != SRD_NIL) {
    srd_send *s = &ep->sends[p->sq_head];
    if (s->state == SRD_SEND_ACTIVE) {
      return s;
    }
    if (s->len > p->peer_max_msg) {
      srd_tx_msg_fail(ep, p, s, SRD_ERR_MSG_TOO_LONG, now);
      continue;
    }
    if (p->next_msg_id - p->msg_floor >= p->tx_window) {
      return NULL; /* the peer's message window is full */
    }
    activate(ep, p, s);
    return s;
  }
  return NULL;
}

/* retx_front drops stale entries of |q| and returns the first live one. */
static srd_retx *retx_front(srd_ep *ep, srd_peer *p, srd_retxq *q) {
  while (q->len > 0) {
    srd_retx *r = &q->q[q->head];
    srd_send *s = live_send(ep, p, r->slot, r->msg_id);
    if (s != NULL && !srd_bit_test(s->acked, r->frag)) {
      return r;
    }
    retxq_pop(q);
  }
  return NULL;
}

/* sending returns the message whose fragments are being sent, if it has
   unsent ones. */
static srd_send *sending(srd_ep *ep, const srd_peer *p) {
  srd_send *s;

  if (p->sq_head == SRD_NIL) {
    return NULL;
  }
  s = &ep->sends[p->sq_head];
  return s->state == SRD_SEND_ACTIVE ? s : NULL;
}

/* has_data says whether a fragment is waiting (without starting one). */
static int has_data(const srd_ep *ep, const srd_peer *p) {
  const srd_send *s;

  if (p->lost.len > 0 || p->parked.len > 0) {
    return 1;
  }
  if (p->sq_head == SRD_NIL) {
    return 0;
  }
  s = &ep->sends[p->sq_head];
  return s->state == SRD_SEND_ACTIVE ||
         p->next_msg_id - p->msg_floor < p->tx_window ||
         s->len > p->peer_max_msg;
}

/* window_open says whether congestion control and pacing let a packet go
   now. */
/* window_open: bytes in flight are below the window (a packet may take
   them past it, once).  Below one full packet of window, sending is also
   paced; small packets still fill the window: a window of 30 KB is many
   64-byte messages per round trip, not one. */
static int window_open(const srd_peer *p, srd_tstamp now) {
  return p->rtb.inflight_bytes < p->ccs.cwnd &&
         (p->ccs.cwnd >= p->ccs.pkt_bytes || now >= p->next_pace_ts);
}

static int ring_open(srd_peer *p) {
  if (!srd_rtb_full(&p->rtb)) {
    return 1;
  }
  /* A full ring whose head is a kept lost entry can make room. */
  srd_rtb_retire(&p->rtb, SRD_TSTAMP_NONE);
  return !srd_rtb_full(&p->rtb);
}

static int data_ready(const srd_ep *ep, const srd_peer *p, srd_tstamp now) {
  return srd_established(p) && now >= p->rnr_until && has_data(ep, p) &&
         window_open(p, now) &&
         (!srd_rtb_full(&p->rtb) ||
          p->rtb.ents[p->rtb.head & p->rtb.mask].state != SRD_RTB_INFLIGHT);
}

srd_tstamp srd_tx_deadline(const srd_ep *ep, const srd_peer *p,
                           srd_tstamp now) {
  srd_tstamp t = SRD_TSTAMP_NONE, d;
  const srd_rtb_ent *oldest;

  if (p->req_nonce && !p->want_req) {
    t = srd_min(t, p->hs_deadline);
  }
  d = srd_acktr_deadline(&p->acktr, ep->settings.ack_freq,
                         ep->settings.ack_delay);
  t = srd_min(t, d);
  if (srd_established(p)) {
    t = srd_min(t, p->ack_repeat_at);
  }
  t = srd_min(t, p->loss_time);
  oldest = srd_rtb_oldest((srd_rtb *)&p->rtb);
  if (oldest != NULL) {
    t = srd_min(t, rto_deadline(ep, p, oldest));
  }
  if (srd_established(p) && has_data(ep, p)) {
    if (now < p->rnr_until) {
      t = srd_min(t, p->rnr_until);
    } else if (p->ccs.cwnd < p->ccs.pkt_bytes && now < p->next_pace_ts) {
      t = srd_min(t, p->next_pace_ts);
    }
  }
  return t;
}

static void common(const srd_ep *ep, const srd_peer *p, srd_pkt_common *c,
                   uint32_t dst, uint16_t path) {
  c->version = SRD_PROTO_VERSION;
  c->flags = 0;
  c->src_conn = p->local_conn;
  c->dst_conn = dst;
  c->path = path;
  (void)ep;
}

static void hs_params(const srd_ep *ep, const srd_peer *p, srd_pkt_hs *hs) {
  hs->mtu = p->ps.mtu;
  hs->max_msg_size = ep->settings.max_msg_size;
  hs->msg_window = ep->settings.msg_window;
}

SRD_COLD static srd_ssize write_ctl(srd_ep *ep, srd_peer *p, srd_path *path,
                                    uint8_t *buf, size_t cap, srd_tstamp now) {
  srd_pkt_common c;
  srd_pkt_hs hs;
  srd_ssize n;
  uint16_t pidx;

  memset(&hs, 0, sizeof(hs));
  if (cap < SRD_PKT_HS_RESP_LEN) {
    return SRD_ERR_NOBUF;
  }
  if (p->want_req) {
    /* A retry steers like a retransmission, away from the last try. */
    pidx = (uint16_t)(p->hs_tries == 0
                          ? srd_pathset_pick(&p->paths, &p->paths.ctl_cursor,
                                             now, UINT32_MAX)
                          : srd_pathset_pick_retx(&p->paths, now, p->hs_path));
    p->hs_path = pidx;
  } else if (p->want_resp || p->want_confirm) {
    pidx = p->reply_path;
  } else {
    pidx = (uint16_t)srd_pathset_pick(&p->paths, &p->paths.ctl_cursor, now,
                                      UINT32_MAX);
  }
  if (p->want_req) {
    common(ep, p, &c, srd_established(p) ? p->peer_conn : 0, pidx);
    hs.nonce = p->req_nonce;
    hs_params(ep, p, &hs);
    n = srd_pkt_encode_hs(buf, cap, SRD_PKT_HS_REQ, &c, &hs);
    p->want_req = 0;
    if (p->hs_tries == 0) {
      p->hs_sent_ts = now;
    }
    /* Handshake retries back off like the RTO, from rto_initial. */
    p->hs_deadline =
        now + srd_min(ep->settings.rto_initial << srd_min(p->hs_tries, 20u),
                      srd_max(ep->settings.rto_max, ep->settings.rto_initial));
    ++p->hs_tries;
  } else if (p->want_resp) {
    common(ep, p, &c, p->resp_dst, pidx);
    hs.echo = p->resp_echo;
    hs.nonce = p->cookie;
    hs_params(ep, p, &hs);
    n = srd_pkt_encode_hs(buf, cap, SRD_PKT_HS_RESP, &c, &hs);
    p->want_resp = 0;
  } else if (p->want_confirm) {
    common(ep, p, &c, p->peer_conn, pidx);
    hs.echo = p->confirm_echo;
    hs_params(ep, p, &hs); /* as in our HS_REQ, for a stateless responder */
    n = srd_pkt_encode_hs(buf, cap, SRD_PKT_HS_CONFIRM, &c, &hs);
    p->want_confirm = 0;
  } else {
    srd_pkt_sync sy;
    common(ep, p, &c, p->peer_conn, pidx);
    sy.msg_floor = p->msg_floor;
    n = srd_pkt_encode_sync(buf, cap, &c, &sy);
    p->want_sync = 0;
  }
  assert(n > 0);
  path->peer = p->id;
  path->path = pidx;
  ++ep->stats.ctrl_pkts_out;
  return n;
}

/* ack_repeat_delay is how long after an ACK with nothing after it the
   receiver sends its state again: well inside the sender's smallest
   retransmission timeout, well after the gaps of a packet train. */
static srd_duration ack_repeat_delay(const srd_ep *ep) {
  return srd_max(2 * ep->settings.ack_delay, ep->settings.rto_min / 4);
}

/* write_ack sends the acknowledgement state on the path of the newest
   data packet, or, as a |repeat|, on another path.  ECMP hashes the two
   directions apart, so an ACK can die on a reverse route that is down
   while its data came through; the ACKs that follow repair that, except
   after the last one of a burst, which would leave the sender to its
   retransmission timeout.  So the last ACK before a quiet spell goes out
   once more, on another path. */
static srd_ssize write_ack(srd_ep *ep, srd_peer *p, srd_path *path,
                           uint8_t *buf, size_t cap, int repeat,
                           srd_tstamp now) {
  srd_pkt_common c;
  srd_pkt_ack a;
  srd_ssize n;
  uint16_t pidx;

  if (cap < SRD_PKT_ACK_MAX_LEN) {
    return SRD_ERR_NOBUF;
  }
  pidx = p->ack_path;
  if (repeat && p->paths.n > 1) {
    pidx = (uint16_t)((pidx + 1 + srd_pcg_bounded(&ep->pcg, p->paths.n - 1)) %
                      p->paths.n);
  }
  p->ack_repeat_at = repeat ? SRD_TSTAMP_NONE : now + ack_repeat_delay(ep);
  common(ep, p, &c, p->peer_conn, pidx);
  srd_acktr_build(&p->acktr, &a, now);
  n = srd_pkt_encode_ack(buf, cap, &c, &a);
  assert(n > 0);
  path->peer = p->id;
  path->path = pidx;
  ++ep->stats.ack_pkts_out;
  return n;
}

/* piggy_ok says whether the acknowledgement due to |p| can ride on a data
   packet whole: no NACKs, and every packet received since the last
   acknowledgement is in an echo (so the few ranges a data packet carries
   lose nothing). */
static int piggy_ok(const srd_peer *p) {
  return p->acktr.unacked > 0 && p->acktr.n_nack == 0 &&
         p->acktr.n_echo <= SRD_PIGGY_MAX_ECHO &&
         p->acktr.n_echo >= p->acktr.unacked;
}

static srd_ssize write_data(srd_ep *ep, srd_peer *p, srd_path *path,
                            uint8_t *buf, size_t cap, srd_iovec *payload,
                            int contiguous, srd_tstamp now) {
  size_t need = SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN +
                (contiguous ? p->frag_size : 0);
  srd_pkt_common c;
  srd_pkt_data d;
  srd_pkt_ack piggy;
  srd_retxq *q;
  srd_retx *r;
  srd_send *s;
  srd_rtb_ent *e;
  uint32_t frag, exclude = UINT32_MAX, plen, offset;
  uint8_t tx_count;
  uint16_t pidx;
  size_t hdrlen;
  srd_ssize n;

  if (cap < need) {
    return SRD_ERR_NOBUF;
  }
  if (!ring_open(p)) {
    return 0;
  }
  /* What goes next: a lost fragment; else the rest of the message being
     sent; else a refused fragment; else a new message. */
  q = &p->lost;
  r = retx_front(ep, p, q);
  s = r == NULL ? sending(ep, p) : NULL;
  if (r == NULL && s == NULL) {
    q = &p->parked;
    r = retx_front(ep, p, q);
  }
  if (r != NULL) {
    s = &ep->sends[r->slot];
    frag = r->frag;
    tx_count = (uint8_t)(r->tries + 1);
    if (r->lost_path != NO_PATH) {
      exclude = r->lost_path;
    }
    retxq_pop(q);
  } else {
    if (s == NULL) {
      s = sq_front(ep, p, now);
    }
    if (s == NULL) {
      return 0;
    }
    frag = s->next_frag++;
    tx_count = 1;
    if (s->next_frag == s->n_frags) {
      srd_ep_sq_remove(ep, p, s);
    }
  }
  offset = frag * p->frag_size;
  plen = srd_min(p->frag_size, s->len - offset);
  if (p->paths.burst_max > 1 && p->paths.burst_left == 0) {
    /* A run holds at most SRD_RUN_SHARES paths' shares of the window:
       long runs where the window is wide (a fast link, few paths), down
       to one packet where it is tight (a shallow fabric, many paths),
       where a long run would pile onto one queue. */
    uint64_t share = SRD_RUN_SHARES * p->ccs.cwnd /
                     ((uint64_t)p->paths.n * p->ccs.pkt_bytes);
    p->paths.burst =
        (uint32_t)srd_max(1u, srd_min(share, (uint64_t)p->paths.burst_max));
  }
  pidx = (uint16_t)(r != NULL ? srd_pathset_pick_retx(&p->paths, now, exclude)
                              : srd_pathset_pick(&p->paths, &p->paths.cursor,
                                                 now, UINT32_MAX));

  common(ep, p, &c, p->peer_conn, pidx);
  if (p->echo_cookie) {
    c.flags = SRD_DATA_FLAG_HS_ECHO;
  }
  hdrlen = srd_pkt_data_hdrlen(c.flags);
  d.ack = NULL;
  if (piggy_ok(p) && cap >= need + SRD_PKT_PIGGY_MAX_LEN) {
    /* The acknowledgement due rides on this packet (a request answered
       by a response, traffic both ways): one datagram fewer. */
    srd_acktr_build_max(&p->acktr, &piggy, now, SRD_PIGGY_MAX_RANGES);
    c.flags |= SRD_DATA_FLAG_ACK;
    d.ack = &piggy;
    hdrlen += srd_pkt_piggy_len(&piggy);
    p->ack_repeat_at = now + ack_repeat_delay(ep);
    ++ep->stats.acks_on_data;
  }
  e = srd_rtb_add(&p->rtb, (uint32_t)(hdrlen + plen));
  srd_bit_clear(p->rtt_seen, e->seq & p->rtt_seen_mask);
  e->tx_ts = now;
  e->slot = (uint32_t)(s - ep->sends);
  e->msg_id = s->msg_id;
  e->frag = frag;
  e->path = pidx;
  e->tx_count = tx_count;

  d.seq = e->seq;
  d.msg_id = s->msg_id;
  d.msg_floor = p->msg_floor;
  d.msg_len = s->len;
  d.offset = offset;
  d.payload_len = (uint16_t)plen;
  d.tx_count = tx_count;
  d.tx_ts = now;
  d.hs_echo = p->echo_cookie;
  d.hs_mtu = d.hs_max_msg_size = d.hs_msg_window = 0;
  if (p->echo_cookie) {
    /* With the cookie go our request's parameters, which a stateless
       responder did not keep (srd_ep_accept_cookie). */
    srd_pkt_hs hs;
    hs_params(ep, p, &hs);
    d.hs_mtu = hs.mtu;
    d.hs_max_msg_size = hs.max_msg_size;
    d.hs_msg_window = hs.msg_window;
  }
  d.pcrc = 0;
  if (ep->settings.payload_crc) {
    /* Computed for every transmission from the send buffer, which the
       engine only reads: what is checked is what the user posted. */
    c.flags |= SRD_DATA_FLAG_PCRC;
    d.pcrc = srd_crc32c(0, s->buf + offset, plen);
  }
  n = srd_pkt_encode_data(buf, cap, &c, &d);
  assert(n == (srd_ssize)hdrlen);
  payload->base = s->buf + offset;
  payload->len = plen;

  path->peer = p->id;
  path->path = pidx;
  ++p->paths.p[pidx].sent;
  p->paths.p[pidx].bytes_sent += hdrlen + plen;
  ++p->pkts_sent;
  ++ep->stats.data_pkts_out;
  if (r != NULL) {
    ++p->paths.p[pidx].retransmits;
    ++p->retransmits;
    ++ep->stats.retransmits;
  }
  if (p->ccs.cwnd < p->ccs.pkt_bytes) {
    /* Below one packet of window: one packet per srtt * bytes / cwnd. */
    srd_duration rtt = p->rtt.srtt ? p->rtt.srtt : ep->settings.rto_initial;
    p->next_pace_ts = now + rtt * (hdrlen + plen) / p->ccs.cwnd;
  }
  /* A retransmission's RTO counts from now; a quiet peer gets a fresh
     timeout instead of an immediate one. */
  return n;
}

srd_ssize srd_tx_write(srd_ep *ep, srd_peer *p, srd_path *path, uint8_t *buf,
                       size_t cap, srd_iovec *payload, int contiguous,
                       srd_tstamp now) {
  int due;
  payload->base = NULL;
  payload->len = 0;
  if (p->want_req || p->want_resp || p->want_confirm ||
      (p->want_sync && srd_established(p))) {
    return write_ctl(ep, p, path, buf, cap, now);
  }
  if (!srd_established(p)) {
    return 0;
  }
  due = srd_acktr_ack_due(&p->acktr, now, ep->settings.ack_freq,
                          ep->settings.ack_delay);
  if (due && !piggy_ok(p)) {
    return write_ack(ep, p, path, buf, cap, 0, now);
  }
  if (data_ready(ep, p, now)) {
    /* A due acknowledgement rides on the data if it can. */
    srd_ssize n = write_data(ep, p, path, buf, cap, payload, contiguous, now);
    if (n != 0 || !due) {
      return n;
    }
  }
  if (due) {
    return write_ack(ep, p, path, buf, cap, 0, now);
  }
  if (now >= p->ack_repeat_at) {
    return write_ack(ep, p, path, buf, cap, 1, now);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                 */

void srd_tx_session_reset(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  uint32_t i;

  srd_tx_fail_all(ep, p, SRD_ERR_PEER_RESET, 0, now);
  srd_rtb_reset(&p->rtb, srd_wrap_early(srd_pcg_u32(&ep->pcg)));
  memset(p->tx_msgs, 0, ep->settings.msg_window * sizeof(uint32_t));
  p->lost.head = p->lost.len = 0;
  p->parked.head = p->parked.len = 0;
  for (i = 0; i < p->paths.n; ++i) {
    p->paths.p[i].rack_xmit_ts = 0;
    p->paths.p[i].rack_rtt = 0;
    p->paths.p[i].rack_valid = 0;
  }
  p->rack_max_xmit = 0;
  p->rack_max_valid = 0;
  p->loss_time = SRD_TSTAMP_NONE;
  p->rto_backoff = 0;
  p->silent_rtos = 0;
  p->rnr_until = 0;
  p->rnr_exp = 0;
  p->rnr_progress = p->rnr_epoch;
  p->want_sync = 0;
  p->sync_owed = 0;
  p->ack_repeat_at = SRD_TSTAMP_NONE;
  p->next_pace_ts = 0;
  p->cc.ops->reset(&p->cc, &p->ccs, now);
}
