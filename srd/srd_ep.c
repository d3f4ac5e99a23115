/*
 * srd_ep.c: the endpoint: settings, pools, peers, posting, the completion
 * queue, timers and the order in which peers get to send.
 *
 * Everything the per-packet path needs is allocated here, in srd_ep_new
 * and srd_ep_add_peer; reading and writing packets never allocates.
 */
#include "srd_ep.h"

#include <assert.h>
#include <string.h>

static void srd_ep_ready(srd_ep *ep, srd_peer *p);
static void srd_ep_update_timer(srd_ep *ep, srd_peer *p, srd_tstamp now);

void srd_settings_default(srd_settings *s) {
  memset(s, 0, sizeof(*s));
  s->seed = 0;
  s->mtu = 8192;
  s->max_msg_size = 1u << 20;
  s->max_peers = 64;
  s->max_sends = 1024;
  s->max_recvs = 1024;
  s->unexp_msgs = 64;
  s->unexp_bytes = 4u << 20;
  s->msg_window = 1024;
  s->pkt_window = 512;
  s->rto_min = 100 * SRD_US;
  s->rto_max = 20 * SRD_MS;
  s->rto_initial = 1 * SRD_MS;
  s->max_retries = 16;
  s->rnr_retries = 32;
  s->rnr_backoff_min = 10 * SRD_US;
  s->rnr_backoff_max = 10 * SRD_MS;
  s->ack_freq = 4;
  s->ack_delay = 5 * SRD_US;
  s->cc = "swift";
  s->cc_target_qdelay = 25 * SRD_US;
  s->cc_target_rtt_pct = 0;
  s->cc_target_hops = 0;
  s->cc_target_hop_qdelay = 1 * SRD_US;
  s->cc_target_min = 2 * SRD_US;
  s->cc_fs_max_window = 16;
  s->cc_fs_range_pct = 400;
  s->cc_init_window = 64u << 10;
  s->cc_fixed_window = 256u << 10;
  s->path_steering = 1;
  s->payload_crc = 1;
  s->hs_cookie_period = 2 * SRD_S;
}

void srd_peer_settings_default(srd_peer_settings *ps) {
  ps->n_paths = SRD_MAX_PATHS;
  ps->ordered = 0;
  ps->mtu = 0;
}

static int settings_valid(const srd_settings *s) {
  return s->mtu >= SRD_PKT_MIN_MTU && s->mtu <= SRD_PKT_MAX_MTU &&
         s->max_msg_size >= 1 && s->max_msg_size <= SRD_PKT_MAX_MSG_SIZE &&
         s->max_peers >= 1 && s->max_peers <= (1u << 20) && s->max_sends >= 1 &&
         s->max_sends <= (1u << 24) && s->max_recvs <= (1u << 24) &&
         s->unexp_msgs <= (1u << 20) && srd_is_pow2(s->msg_window) &&
         s->msg_window <= SRD_PKT_MAX_MSG_WINDOW &&
         srd_is_pow2(s->pkt_window) && s->pkt_window >= 16 &&
         s->pkt_window <= 32768 && s->rto_min > 0 && s->rto_max >= s->rto_min &&
         s->rto_initial > 0 && s->max_retries <= 250 &&
         s->rnr_backoff_min > 0 && s->rnr_backoff_max >= s->rnr_backoff_min &&
         s->ack_freq >= 1 && s->cc_init_window >= 1 &&
         s->cc_fixed_window >= 1 && s->cc_target_rtt_pct <= 1000 &&
         s->cc_target_hops <= 64 && s->cc_fs_max_window <= 65536 &&
         s->cc_fs_range_pct <= 10000 && s->hs_cookie_period > 0 &&
         s->path_burst_bytes <= (1u << 20);
}

static void *xcalloc(const srd_ep *ep, size_t n, size_t size) {
  return ep->mem->calloc(n ? n : 1, size, ep->mem->user_data);
}

static void xfree(const srd_ep *ep, void *p) {
  if (p) {
    ep->mem->free(p, ep->mem->user_data);
  }
}

int srd_ep_new(srd_ep **pep, const srd_settings *settings, const srd_mem *mem) {
  srd_ep *ep;
  uint32_t i;
  uint64_t *bits;

  if (pep == NULL || settings == NULL || mem == NULL ||
      !settings_valid(settings)) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (srd_cc_find(settings->cc) == NULL) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  ep = mem->calloc(1, sizeof(*ep), mem->user_data);
  if (ep == NULL) {
    return SRD_ERR_NOMEM;
  }
  ep->settings = *settings;
  ep->settings.cc = NULL; /* resolved below; the string is not kept */
  ep->mem = mem;
  ep->cc_ops = srd_cc_find(settings->cc);
  srd_pcg_init(&ep->pcg, settings->seed, 0x5344u /* "SD" */);
  do {
    ep->conn_id = srd_pcg_u32(&ep->pcg);
  } while (ep->conn_id == 0);
  {
    /* The cookie key comes from a stream of its own, so that the
       endpoint's other draws are what they were without it. */
    srd_pcg k;
    srd_pcg_init(&k, settings->seed, 0x4853u /* "HS" */);
    for (i = 0; i < SRD_SIPHASH_KEY_LEN; i += 4) {
      uint32_t w = srd_pcg_u32(&k);
      memcpy(ep->hs_key + i, &w, 4);
    }
  }
  /* Fragment bitmaps are sized for the smallest MTU a peer may
     negotiate. */
  ep->max_frags =
      (settings->max_msg_size + SRD_PKT_MIN_MTU - 1) / SRD_PKT_MIN_MTU;
  ep->frag_words = (ep->max_frags + 63) / 64;
  ep->max_pkt = srd_max((size_t)settings->mtu + SRD_PKT_DATA_HDR_LEN +
                            SRD_PKT_DATA_ECHO_LEN + SRD_PKT_PIGGY_MAX_LEN,
                        (size_t)SRD_PKT_ACK_MAX_LEN);

  ep->send_free = ep->recv_free = ep->rctx_free = ep->chunk_free = SRD_NIL;
  ep->posted_head = ep->posted_tail = SRD_NIL;
  ep->unexp_head = ep->unexp_tail = SRD_NIL;
  ep->ready_head = ep->ready_tail = SRD_NIL;

  ep->peers = xcalloc(ep, settings->max_peers, sizeof(srd_peer *));
  ep->sends = xcalloc(ep, settings->max_sends, sizeof(srd_send));
  ep->recvs = xcalloc(ep, settings->max_recvs, sizeof(srd_recv));
  ep->n_rctx = settings->max_recvs + settings->unexp_msgs;
  ep->rctxs = xcalloc(ep, ep->n_rctx, sizeof(srd_rctx));
  ep->chunk_size = settings->mtu;
  ep->n_chunks =
      settings->unexp_msgs ? settings->unexp_bytes / settings->mtu : 0;
  ep->chunk_mem = xcalloc(ep, ep->n_chunks, ep->chunk_size);
  ep->chunk_next = xcalloc(ep, ep->n_chunks, sizeof(uint32_t));
  ep->chunk_frag = xcalloc(ep, ep->n_chunks, sizeof(uint32_t));
  ep->cq_cap = settings->max_sends + settings->max_recvs;
  ep->cq = xcalloc(ep, ep->cq_cap, sizeof(srd_cqe));
  ep->cq_slot = xcalloc(ep, ep->cq_cap, sizeof(uint32_t));
  if (!ep->peers || !ep->sends || !ep->recvs || !ep->rctxs || !ep->chunk_mem ||
      !ep->chunk_next || !ep->chunk_frag || !ep->cq || !ep->cq_slot) {
    srd_ep_del(ep);
    return SRD_ERR_NOMEM;
  }
  if (srd_pq_init(&ep->timers, settings->max_peers, mem) != 0 ||
      (ep->dirty = xcalloc(ep, settings->max_peers, sizeof(uint32_t))) ==
          NULL) {
    srd_ep_del(ep);
    return SRD_ERR_NOMEM;
  }
  /* One allocation holds every send slot's and receive context's fragment
     bitmap; it hangs off sends[0].acked. */
  bits =
      xcalloc(ep, (size_t)(settings->max_sends + ep->n_rctx) * ep->frag_words,
              sizeof(uint64_t));
  if (bits == NULL) {
    srd_ep_del(ep);
    return SRD_ERR_NOMEM;
  }
  for (i = settings->max_sends; i-- > 0;) {
    ep->sends[i].acked = bits + (size_t)i * ep->frag_words;
    ep->sends[i].next = ep->send_free;
    ep->send_free = i;
  }
  bits += (size_t)settings->max_sends * ep->frag_words;
  for (i = ep->n_rctx; i-- > 0;) {
    ep->rctxs[i].bits = bits + (size_t)i * ep->frag_words;
    ep->rctxs[i].next = ep->rctx_free;
    ep->rctx_free = i;
  }
  for (i = settings->max_recvs; i-- > 0;) {
    ep->recvs[i].next = ep->recv_free;
    ep->recv_free = i;
  }
  for (i = ep->n_chunks; i-- > 0;) {
    ep->chunk_next[i] = ep->chunk_free;
    ep->chunk_free = i;
  }
  ep->chunks_avail = ep->n_chunks;
  if (settings->pkt_tap != NULL &&
      (ep->tap_buf = xcalloc(ep, 1, ep->max_pkt)) == NULL) {
    srd_ep_del(ep);
    return SRD_ERR_NOMEM;
  }
  *pep = ep;
  return 0;
}

static void peer_free(srd_ep *ep, srd_peer *p) {
  srd_rtb_fini(&p->rtb);
  srd_acktr_fini(&p->acktr);
  xfree(ep, p->tx_msgs);
  xfree(ep, p->lost.q);
  xfree(ep, p->parked.q);
  xfree(ep, p->rx_ctx);
  xfree(ep, p->rx_done);
  xfree(ep, p->rx_err);
  xfree(ep, p->rtt_seen);
  xfree(ep, p);
}

void srd_ep_del(srd_ep *ep) {
  uint32_t i;

  if (ep == NULL) {
    return;
  }
  if (ep->peers) {
    for (i = 0; i < ep->settings.max_peers; ++i) {
      if (ep->peers[i]) {
        peer_free(ep, ep->peers[i]);
      }
    }
  }
  if (ep->sends && ep->settings.max_sends) {
    xfree(ep, ep->sends[0].acked);
  }
  srd_pq_fini(&ep->timers);
  xfree(ep, ep->dirty);
  xfree(ep, ep->peers);
  xfree(ep, ep->sends);
  xfree(ep, ep->recvs);
  xfree(ep, ep->rctxs);
  xfree(ep, ep->chunk_mem);
  xfree(ep, ep->chunk_next);
  xfree(ep, ep->chunk_frag);
  xfree(ep, ep->cq);
  xfree(ep, ep->cq_slot);
  xfree(ep, ep->tap_buf);
  ep->mem->free(ep, ep->mem->user_data);
}

uint32_t srd_ep_conn_id(const srd_ep *ep) {
  return ep->conn_id;
}

size_t srd_ep_max_pkt_size(const srd_ep *ep) {
  return ep->max_pkt;
}

/* ------------------------------------------------------------------------ */
/* Logging and counters                                                     */

void srd_ep_log(srd_ep *ep, srd_tstamp ts, srd_log_event ev, srd_peer_id peer,
                int32_t path, uint64_t a, uint64_t b) {
  srd_log_record r;

  if (ep->settings.log == NULL) {
    return;
  }
  r.ts = ts;
  r.event = ev;
  r.peer = peer;
  r.path = path;
  r.a = a;
  r.b = b;
  ep->settings.log(ep->settings.user_data, &r);
}

void srd_ep_drop(srd_ep *ep, srd_tstamp ts, srd_peer_id peer,
                 srd_drop_reason why, uint8_t type) {
  ++ep->stats.drops[why];
  srd_ep_log(ep, ts, SRD_LOG_DROP, peer, -1, why, type);
}

const char *srd_log_event_name(srd_log_event ev) {
  static const char *const n[] = {
      "peer_state", "handshake",  "drop",      "loss", "spurious",
      "rto",        "path_avoid", "path_ok",   "cc",   "rnr_sent",
      "rnr_recv",   "msg_failed", "peer_reset"};
  return (unsigned)ev < srd_arraylen(n) ? n[ev] : "unknown";
}

const char *srd_drop_reason_name(srd_drop_reason r) {
  static const char *const n[] = {
      "truncated",  "bad_version", "bad_type",    "bad_field",      "bad_conn",
      "no_session", "dup_pkt",     "dup_msg",     "out_of_window",  "rnr",
      "bad_ack",    "bad_peer",    "corrupt_hdr", "corrupt_payload"};
  return (unsigned)r < srd_arraylen(n) ? n[r] : "unknown";
}

void srd_ep_set_state(srd_ep *ep, srd_peer *p, srd_peer_state st,
                      srd_tstamp now) {
  if (p->state == st) {
    return;
  }
  srd_ep_log(ep, now, SRD_LOG_PEER_STATE, p->id, -1, p->state, st);
  p->state = st;
}

/* ------------------------------------------------------------------------ */
/* Peers                                                                    */

void srd_ep_set_path_burst(const srd_ep *ep, srd_peer *p) {
  uint32_t n = ep->settings.path_burst_bytes / p->ccs.pkt_bytes;

  p->paths.burst_max = srd_max(1u, n);
  p->paths.burst = p->paths.burst_max;
  if (p->paths.burst_left >= p->paths.burst) {
    p->paths.burst_left = p->paths.burst - 1;
  }
}

static uint32_t acktr_window(const srd_settings *s) {
  uint32_t w = 2 * s->pkt_window;
  return srd_max(64u, srd_min(w, 65536u));
}

int srd_ep_add_peer(srd_ep *ep, const srd_peer_settings *ps,
                    srd_peer_id *ppeer) {
  srd_peer *p;
  uint32_t i, mw = ep->settings.msg_window;
  size_t mwords = (mw + 63) / 64;

  if (ps == NULL || ppeer == NULL || ps->n_paths < 1 ||
      ps->n_paths > SRD_MAX_PATHS ||
      (ps->mtu != 0 && ps->mtu < SRD_PKT_MIN_MTU)) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  for (i = 0; i < ep->settings.max_peers && ep->peers[i]; ++i) {
  }
  if (i == ep->settings.max_peers) {
    return SRD_ERR_AGAIN;
  }
  p = xcalloc(ep, 1, sizeof(*p));
  if (p == NULL) {
    return SRD_ERR_NOMEM;
  }
  if (srd_rtb_init(&p->rtb, ep->settings.pkt_window, ep->mem) != 0 ||
      srd_acktr_init(&p->acktr, acktr_window(&ep->settings), ep->mem) != 0 ||
      (p->tx_msgs = xcalloc(ep, mw, sizeof(uint32_t))) == NULL ||
      (p->lost.q = xcalloc(ep, ep->settings.pkt_window, sizeof(srd_retx))) ==
          NULL ||
      (p->parked.q = xcalloc(ep, ep->settings.pkt_window + ep->max_frags,
                             sizeof(srd_retx))) == NULL ||
      (p->rx_ctx = xcalloc(ep, mw, sizeof(uint32_t))) == NULL ||
      (p->rx_done = xcalloc(ep, mwords, sizeof(uint64_t))) == NULL ||
      (p->rx_err = xcalloc(ep, mwords, sizeof(uint64_t))) == NULL ||
      (p->rtt_seen = xcalloc(ep, 16 * ep->settings.pkt_window / 64,
                             sizeof(uint64_t))) == NULL) {
    peer_free(ep, p);
    return SRD_ERR_NOMEM;
  }
  /* Every session of this peer slot gets its own incarnation id: a peer
     removed and added again is a new session to the remote, whose packets
     for the old one are then refused (docs/protocol.md, section 3). */
  do {
    p->local_conn = srd_pcg_u32(&ep->pcg);
  } while (p->local_conn == 0);
  p->rtt_seen_mask = 16 * ep->settings.pkt_window - 1;
  p->lost.cap = ep->settings.pkt_window;
  p->parked.cap = ep->settings.pkt_window + ep->max_frags;
  p->id = i;
  p->ps = *ps;
  /* The peer's mtu from here on is what its packets may carry at most. */
  if (p->ps.mtu == 0 || p->ps.mtu > ep->settings.mtu) {
    p->ps.mtu = ep->settings.mtu;
  }
  p->state = SRD_PEER_STATE_IDLE;
  p->sq_head = p->sq_tail = SRD_NIL;
  p->ready_next = p->ready_prev = SRD_NIL;
  p->frag_size = p->ps.mtu;
  p->peer_max_msg = ep->settings.max_msg_size;
  p->tx_window = mw;
  srd_pathset_init(&p->paths, ps->n_paths, ep->settings.path_steering,
                   &ep->pcg);
  srd_rtt_init(&p->rtt);
  p->ccs.pkt_bytes = p->ps.mtu + SRD_PKT_DATA_HDR_LEN;
  p->ccs.target_qdelay = ep->settings.cc_target_qdelay;
  p->ccs.target_cfg.rtt_pct = ep->settings.cc_target_rtt_pct;
  p->ccs.target_cfg.hops = ep->settings.cc_target_hops;
  p->ccs.target_cfg.hop_qdelay = ep->settings.cc_target_hop_qdelay;
  p->ccs.target_cfg.min = ep->settings.cc_target_min;
  p->ccs.target_cfg.max = ep->settings.cc_target_qdelay;
  p->ccs.fs_max_pkts = ep->settings.cc_fs_max_window;
  p->ccs.fs_range_pct = ep->settings.cc_fs_range_pct;
  p->ccs.init_cwnd = ep->settings.cc_init_window;
  p->ccs.fixed_cwnd = ep->settings.cc_fixed_window;
  p->ccs.min_cwnd = 64;
  p->ccs.max_cwnd = (uint64_t)ep->settings.pkt_window * p->ccs.pkt_bytes;
  srd_ep_set_path_burst(ep, p);
  p->ccs.min_rtt = UINT64_MAX;
  p->ack_repeat_at = SRD_TSTAMP_NONE;
  p->ack_span16 = (int32_t)(16 * ep->settings.ack_freq);
  p->cc.ops = ep->cc_ops;
  p->cc.ops->init(&p->cc, &p->ccs, 0);
  srd_pq_entry_init(&p->timer, i);
  ep->peers[i] = p;
  *ppeer = i;
  return 0;
}

int srd_ep_remove_peer(srd_ep *ep, srd_peer_id id, srd_tstamp now) {
  srd_peer *p = srd_ep_peer(ep, id);
  uint32_t i;

  if (p == NULL) {
    return SRD_ERR_BAD_PEER;
  }
  srd_tx_fail_all(ep, p, SRD_ERR_CANCELED, 1, now);
  srd_rx_session_reset(ep, p, SRD_ERR_CANCELED, now);
  /* Messages from the peer that arrived whole and wait for a receive
     were acknowledged, so their sender completed them: they stay, and
     are delivered with no peer (UINT32_MAX), in any order.  Whatever else
     of the peer's is left goes. */
  for (i = 0; i < ep->n_rctx; ++i) {
    srd_rctx *c = &ep->rctxs[i];
    if (c->state == SRD_RCTX_FREE || c->peer != id) {
      continue;
    }
    if (c->recv == SRD_NIL && !c->discard && c->n_recvd == c->n_frags) {
      c->peer = UINT32_MAX;
      c->anyorder = 1;
    } else {
      srd_ep_rctx_release(ep, c);
    }
  }
  srd_pq_remove(&ep->timers, &p->timer);
  /* Those that stay may take receives that wait already. */
  srd_ep_drain_unexp(ep, now);
  if (p->in_ready) {
    if (p->ready_prev != SRD_NIL) {
      ep->peers[p->ready_prev]->ready_next = p->ready_next;
    } else {
      ep->ready_head = p->ready_next;
    }
    if (p->ready_next != SRD_NIL) {
      ep->peers[p->ready_next]->ready_prev = p->ready_prev;
    } else {
      ep->ready_tail = p->ready_prev;
    }
  }
  /* The id may be reused at once: take it off the dirty list. */
  for (i = 0; i < ep->n_dirty;) {
    if (ep->dirty[i] == id) {
      ep->dirty[i] = ep->dirty[--ep->n_dirty];
    } else {
      ++i;
    }
  }
  ep->peers[id] = NULL;
  peer_free(ep, p);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Posting                                                                  */

static void sq_append(srd_ep *ep, srd_peer *p, srd_send *s, uint32_t idx) {
  s->next = SRD_NIL;
  s->prev = p->sq_tail;
  if (p->sq_tail != SRD_NIL) {
    ep->sends[p->sq_tail].next = idx;
  } else {
    p->sq_head = idx;
  }
  p->sq_tail = idx;
  s->queued = 1;
}

void srd_ep_sq_remove(srd_ep *ep, srd_peer *p, srd_send *s) {
  if (!s->queued) {
    return;
  }
  if (s->prev != SRD_NIL) {
    ep->sends[s->prev].next = s->next;
  } else {
    p->sq_head = s->next;
  }
  if (s->next != SRD_NIL) {
    ep->sends[s->next].prev = s->prev;
  } else {
    p->sq_tail = s->prev;
  }
  s->next = s->prev = SRD_NIL;
  s->queued = 0;
}

/* srd_ep_start_handshake sends a fresh HS_REQ to |p|. */
void srd_ep_start_handshake(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  do {
    p->req_nonce = srd_pcg_u64(&ep->pcg);
  } while (p->req_nonce == 0);
  p->hs_tries = 0;
  p->want_req = 1;
  p->hs_deadline = now;
  if (p->state != SRD_PEER_STATE_ESTABLISHED) {
    srd_ep_set_state(ep, p, SRD_PEER_STATE_HS_SENT, now);
  }
}

int srd_ep_post_send(srd_ep *ep, srd_peer_id peer, const void *buf, size_t len,
                     void *user_ctx, srd_tstamp now) {
  srd_peer *p = srd_ep_peer(ep, peer);
  srd_send *s;
  uint32_t idx;

  if (buf == NULL && len > 0) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (p == NULL) {
    return SRD_ERR_BAD_PEER;
  }
  if (len > ep->settings.max_msg_size) {
    return SRD_ERR_MSG_TOO_LONG;
  }
  if (ep->send_free == SRD_NIL) {
    return SRD_ERR_AGAIN;
  }
  idx = ep->send_free;
  s = &ep->sends[idx];
  ep->send_free = s->next;
  s->buf = buf;
  s->len = (uint32_t)len;
  s->user_ctx = user_ctx;
  s->peer = peer;
  s->msg_id = 0;
  s->n_frags = s->next_frag = s->n_acked = 0;
  s->refunds = 0;
  s->state = SRD_SEND_PENDING;
  sq_append(ep, p, s, idx);
  if (p->state == SRD_PEER_STATE_IDLE ||
      p->state == SRD_PEER_STATE_UNREACHABLE) {
    srd_ep_start_handshake(ep, p, now);
  }
  srd_ep_ready(ep, p);
  srd_ep_update_timer(ep, p, now);
  return 0;
}

/* unexp_ready returns nonzero if unexpected message |c| may take a receive
   buffer now: any message of an unordered peer, only the next one in
   order of an ordered peer. */
static int unexp_ready(const srd_ep *ep, const srd_rctx *c) {
  const srd_peer *p = srd_ep_peer(ep, c->peer);

  return p == NULL || !p->ps.ordered || c->anyorder || c->msg_id == p->rx_next;
}

int srd_ep_post_recv(srd_ep *ep, void *buf, size_t cap, void *user_ctx,
                     srd_tstamp now) {
  srd_recv *r;
  uint32_t idx;

  if (buf == NULL && cap > 0) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (ep->recv_free == SRD_NIL) {
    return SRD_ERR_AGAIN;
  }
  idx = ep->recv_free;
  r = &ep->recvs[idx];
  ep->recv_free = r->next;
  r->buf = buf;
  r->cap = cap;
  r->user_ctx = user_ctx;
  r->state = SRD_RECV_POSTED;
  r->next = SRD_NIL;
  r->prev = ep->posted_tail;
  if (ep->posted_tail != SRD_NIL) {
    ep->recvs[ep->posted_tail].next = idx;
  } else {
    ep->posted_head = idx;
  }
  ep->posted_tail = idx;

  /* A message that arrived before any receive takes this one. */
  srd_ep_drain_unexp(ep, now);
  return 0;
}

void srd_ep_drain_unexp(srd_ep *ep, srd_tstamp now) {
  uint32_t ci = ep->unexp_head, guard = ep->n_rctx + 1;

  while (ep->posted_head != SRD_NIL && ci != SRD_NIL && guard-- > 0) {
    if (unexp_ready(ep, &ep->rctxs[ci])) {
      srd_rx_deliver(ep, &ep->rctxs[ci], now);
      ci = ep->unexp_head; /* the queue changed */
    } else {
      ci = ep->rctxs[ci].next;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Receive contexts and chunks                                              */

void srd_ep_rctx_unexp_remove(srd_ep *ep, srd_rctx *c) {
  if (c->prev != SRD_NIL) {
    ep->rctxs[c->prev].next = c->next;
  } else {
    ep->unexp_head = c->next;
  }
  if (c->next != SRD_NIL) {
    ep->rctxs[c->next].prev = c->prev;
  } else {
    ep->unexp_tail = c->prev;
  }
  c->next = c->prev = SRD_NIL;
  --ep->n_unexp;
}

/* srd_ep_rctx_release_chunks returns |c|'s chunks and reservation. */
void srd_ep_rctx_release_chunks(srd_ep *ep, srd_rctx *c) {
  uint32_t ch = c->chunks;

  while (ch != SRD_NIL) {
    uint32_t next = ep->chunk_next[ch];
    ep->chunk_next[ch] = ep->chunk_free;
    ep->chunk_free = ch;
    ++ep->chunks_avail;
    ch = next;
  }
  ep->chunks_avail += c->reserved;
  c->chunks = SRD_NIL;
  c->reserved = 0;
}

/* srd_ep_rctx_release frees |c|: its chunks and reservation, its place
   in the unexpected queue and in its peer's table. */
void srd_ep_rctx_release(srd_ep *ep, srd_rctx *c) {
  uint32_t idx = (uint32_t)(c - ep->rctxs);
  srd_peer *p = srd_ep_peer(ep, c->peer);

  if (c->recv == SRD_NIL && !c->discard) {
    srd_ep_rctx_release_chunks(ep, c);
    srd_ep_rctx_unexp_remove(ep, c);
  }
  if (p && p->rx_ctx[c->msg_id & (ep->settings.msg_window - 1)] == idx + 1) {
    p->rx_ctx[c->msg_id & (ep->settings.msg_window - 1)] = 0;
  }
  c->state = SRD_RCTX_FREE;
  c->next = ep->rctx_free;
  ep->rctx_free = idx;
}

int srd_ep_chunk_take(srd_ep *ep, srd_rctx *c, uint32_t frag, uint8_t **mem) {
  uint32_t ch;

  if (c->reserved == 0 || ep->chunk_free == SRD_NIL) {
    return SRD_ERR_NOMEM; /* unreachable while reservations are honoured */
  }
  ch = ep->chunk_free;
  ep->chunk_free = ep->chunk_next[ch];
  --c->reserved;
  ep->chunk_frag[ch] = frag;
  ep->chunk_next[ch] = c->chunks;
  c->chunks = ch;
  *mem = ep->chunk_mem + (size_t)ch * ep->chunk_size;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Completion queue                                                         */

/* The slot reference beside a completion: the op in the top bit. */
#define CQ_RECV_BIT 0x80000000u

void srd_ep_cq_push(srd_ep *ep, srd_op op, uint32_t slot, int status,
                    srd_peer_id peer, uint32_t msg_id, void *buf, size_t len,
                    void *user_ctx, srd_tstamp now) {
  uint32_t i;
  srd_cqe *e;

  /* Each posted operation completes once and its slot is freed only when
     polled, so the queue (max_sends + max_recvs) cannot overflow. */
  assert(ep->cq_len < ep->cq_cap);
  i = ep->cq_head + ep->cq_len;
  if (i >= ep->cq_cap) {
    i -= ep->cq_cap;
  }
  ++ep->cq_len;
  e = &ep->cq[i];
  e->op = op;
  e->status = status;
  e->peer = peer;
  e->msg_id = msg_id;
  e->flags = 0;
  e->buf = buf;
  e->len = len;
  e->user_ctx = user_ctx;
  e->ts = now;
  ep->cq_slot[i] = slot | (op == SRD_OP_RECV ? CQ_RECV_BIT : 0);
  if (op == SRD_OP_SEND) {
    ep->sends[slot].state = SRD_SEND_DONE;
    if (status == 0) {
      ++ep->stats.msgs_sent_ok;
    } else {
      ++ep->stats.msgs_sent_err;
    }
  } else {
    ep->recvs[slot].state = SRD_RECV_DONE;
    if (status == 0) {
      ++ep->stats.msgs_recv_ok;
    } else {
      ++ep->stats.msgs_recv_err;
    }
  }
}

size_t srd_ep_poll_cq(srd_ep *ep, srd_cqe *cqes, size_t n) {
  size_t k;

  for (k = 0; k < n && ep->cq_len > 0; ++k) {
    uint32_t ref = ep->cq_slot[ep->cq_head];
    uint32_t slot = ref & ~CQ_RECV_BIT;

    cqes[k] = ep->cq[ep->cq_head];
    if (ref & CQ_RECV_BIT) {
      ep->recvs[slot].state = SRD_RECV_FREE;
      ep->recvs[slot].next = ep->recv_free;
      ep->recv_free = slot;
    } else {
      ep->sends[slot].state = SRD_SEND_FREE;
      ep->sends[slot].next = ep->send_free;
      ep->send_free = slot;
    }
    if (++ep->cq_head == ep->cq_cap) {
      ep->cq_head = 0;
    }
    --ep->cq_len;
  }
  return k;
}

void srd_ep_flush(srd_ep *ep, srd_tstamp now) {
  uint32_t i;

  for (i = 0; i < ep->settings.max_peers; ++i) {
    srd_peer *p = ep->peers[i];
    if (p) {
      srd_tx_fail_all(ep, p, SRD_ERR_CANCELED, 1, now);
      srd_ep_update_timer(ep, p, now);
    }
  }
  /* The sessions go on: what was delivered stays known, so that nothing
     is delivered twice after a flush. */
  srd_rx_flush(ep, now);
  while (ep->posted_head != SRD_NIL) {
    uint32_t idx = ep->posted_head;
    srd_recv *r = &ep->recvs[idx];
    ep->posted_head = r->next;
    srd_ep_cq_push(ep, SRD_OP_RECV, idx, SRD_ERR_CANCELED, UINT32_MAX, 0,
                   r->buf, 0, r->user_ctx, now);
  }
  ep->posted_tail = SRD_NIL;
}

/* ------------------------------------------------------------------------ */
/* Timers and scheduling                                                    */

srd_duration srd_ep_rto(const srd_ep *ep, const srd_peer *p) {
  srd_duration rto =
      srd_rtt_rto(&p->rtt, ep->settings.rto_min, ep->settings.rto_initial,
                  srd_max(ep->settings.ack_delay, p->ack_hold), SRD_US);
  uint32_t shift = srd_min(p->rto_backoff, 30u);
  srd_duration max = srd_max(ep->settings.rto_max, rto);

  if (rto > (max >> shift)) {
    return max;
  }
  return rto << shift;
}

/* srd_ep_ready puts |p| at the back of the ready line (the peers that
   may have a packet to write, served round-robin by write_next), unless
   it is in it already. */
static void srd_ep_ready(srd_ep *ep, srd_peer *p) {
  if (p->in_ready) {
    return;
  }
  p->in_ready = 1;
  p->ready_next = SRD_NIL;
  p->ready_prev = ep->ready_tail;
  if (ep->ready_tail != SRD_NIL) {
    ep->peers[ep->ready_tail]->ready_next = p->id;
  } else {
    ep->ready_head = p->id;
  }
  ep->ready_tail = p->id;
}

static void ready_pop_head(srd_ep *ep) {
  srd_peer *p = ep->peers[ep->ready_head];

  ep->ready_head = p->ready_next;
  if (ep->ready_head != SRD_NIL) {
    ep->peers[ep->ready_head]->ready_prev = SRD_NIL;
  } else {
    ep->ready_tail = SRD_NIL;
  }
  p->in_ready = 0;
  p->ready_next = p->ready_prev = SRD_NIL;
}

/* srd_ep_update_timer marks |p|'s deadline for recomputing: it joins the
   dirty list once, and flush_timers recomputes it (srd_tx_deadline) when
   the driver next asks for the expiry or runs the timers, rather than
   after every packet.  It also records |now| as the latest time. */
static void srd_ep_update_timer(srd_ep *ep, srd_peer *p, srd_tstamp now) {
  if (now > ep->last_now) {
    ep->last_now = now;
  }
  if (!p->timer_dirty) {
    p->timer_dirty = 1;
    p->dirty_since = now;
    ep->dirty[ep->n_dirty++] = p->id;
  }
}

/* flush_timers recomputes the deadlines of the peers that changed, each
   as of when it changed (a time gate that has passed since gives a
   deadline in the past: the next srd_ep_handle_expiry puts the peer back
   in the ready line). */
static void flush_timers(srd_ep *ep) {
  uint32_t i;

  for (i = 0; i < ep->n_dirty; ++i) {
    srd_peer *p = ep->peers[ep->dirty[i]];
    srd_tstamp t;
    if (p == NULL || !p->timer_dirty) {
      continue;
    }
    p->timer_dirty = 0;
    t = srd_tx_deadline(ep, p, p->dirty_since);
    if (t == SRD_TSTAMP_NONE) {
      srd_pq_remove(&ep->timers, &p->timer);
    } else {
      srd_pq_update(&ep->timers, &p->timer, t);
    }
  }
  ep->n_dirty = 0;
}

srd_tstamp srd_ep_get_expiry(srd_ep *ep) {
  const srd_pq_entry *e;

  flush_timers(ep);
  e = srd_pq_top(&ep->timers);
  return e ? e->key : SRD_TSTAMP_NONE;
}

void srd_ep_handle_expiry(srd_ep *ep, srd_tstamp now) {
  srd_pq_entry *e;
  uint32_t guard = ep->settings.max_peers;

  if (now > ep->last_now) {
    ep->last_now = now;
  }
  flush_timers(ep);
  /* Each expired peer runs once per call; its new deadline is later. */
  while ((e = srd_pq_top(&ep->timers)) != NULL && e->key <= now &&
         guard-- > 0) {
    srd_peer *p = ep->peers[e->id];
    srd_pq_remove(&ep->timers, e);
    srd_tx_on_timer(ep, p, now);
    srd_ep_ready(ep, p);
    srd_ep_update_timer(ep, p, now);
  }
  flush_timers(ep);
}

/* write_next lets the peers at the head of the ready line write, in
   turn, until one has a packet.  With |contiguous| the payload must fit
   in |buf| behind the header. */
static srd_ssize write_next(srd_ep *ep, srd_path *path, uint8_t *hdr,
                            size_t cap, srd_iovec *payload, int contiguous,
                            srd_tstamp now) {
  while (ep->ready_head != SRD_NIL) {
    srd_peer *p = ep->peers[ep->ready_head];
    srd_ssize n = srd_tx_write(ep, p, path, hdr, cap, payload, contiguous, now);

    if (n < 0) {
      return n;
    }
    if (n > 0) {
      /* Round-robin: the peer goes to the back of the line (where it is
         already when alone in it); if it has nothing more, it leaves the
         line when its turn comes. */
      if (ep->ready_tail != p->id) {
        ready_pop_head(ep);
        srd_ep_ready(ep, p);
      }
      srd_ep_update_timer(ep, p, now);
      ++ep->stats.pkts_out;
      ep->stats.bytes_out += (uint64_t)n + payload->len;
      return n;
    }
    ready_pop_head(ep);
    srd_ep_update_timer(ep, p, now);
  }
  return 0;
}

/* tap2 shows the tap a datagram given in two pieces, assembled; a
   missing second piece (a payload by length only) reads as zeros. */
SRD_COLD static void tap2(srd_ep *ep, srd_pkt_dir dir, const srd_path *path,
                          const uint8_t *hdr, size_t hdrlen,
                          const uint8_t *payload, size_t payloadlen,
                          srd_tstamp now) {
  size_t n = srd_min(hdrlen, ep->max_pkt);
  size_t m = srd_min(payloadlen, ep->max_pkt - n);

  memcpy(ep->tap_buf, hdr, n);
  if (payload != NULL) {
    memcpy(ep->tap_buf + n, payload, m);
  } else {
    memset(ep->tap_buf + n, 0, m);
  }
  ep->settings.pkt_tap(ep->settings.user_data, dir, path, ep->tap_buf, n + m,
                       now);
}

SRD_FLATTEN srd_ssize srd_ep_write_pktv(srd_ep *ep, srd_path *path,
                                        uint8_t *hdr, size_t cap,
                                        srd_iovec *payload, srd_tstamp now) {
  srd_ssize n;

  if (ep == NULL || path == NULL || hdr == NULL || payload == NULL) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  n = write_next(ep, path, hdr, cap, payload, 0, now);
  if (n > 0 && ep->settings.pkt_tap) {
    tap2(ep, SRD_PKT_OUT, path, hdr, (size_t)n, payload->base, payload->len,
         now);
  }
  return n;
}

SRD_FLATTEN srd_ssize srd_ep_write_pkt(srd_ep *ep, srd_path *path, uint8_t *buf,
                                       size_t cap, srd_tstamp now) {
  srd_iovec payload;
  srd_ssize n;

  if (ep == NULL || path == NULL || buf == NULL) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  n = write_next(ep, path, buf, cap, &payload, 1, now);
  if (n <= 0) {
    return n;
  }
  /* srd_tx_write reserved room for the payload behind the header. */
  if (payload.len) {
    memcpy(buf + n, payload.base, payload.len);
  }
  if (ep->settings.pkt_tap) {
    ep->settings.pkt_tap(ep->settings.user_data, SRD_PKT_OUT, path, buf,
                         (size_t)n + payload.len, now);
  }
  return n + (srd_ssize)payload.len;
}

/* ------------------------------------------------------------------------ */
/* Input                                                                    */

SRD_FLATTEN int srd_ep_read_pktv(srd_ep *ep, const srd_path *path,
                                 const uint8_t *hdr, size_t hdrlen,
                                 const uint8_t *payload, size_t payloadlen,
                                 srd_tstamp now) {
  srd_pkt pkt;
  srd_drop_reason why;
  srd_peer *p;
  int rv;

  if (ep == NULL || path == NULL || hdr == NULL) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  ++ep->stats.pkts_in;
  ep->stats.bytes_in += hdrlen + payloadlen;
  p = srd_ep_peer(ep, path->peer);
  if (p == NULL) {
    srd_ep_drop(ep, now, path->peer, SRD_DROP_BAD_PEER, 0);
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (ep->settings.pkt_tap) {
    if (payloadlen == 0) {
      ep->settings.pkt_tap(ep->settings.user_data, SRD_PKT_IN, path, hdr,
                           hdrlen, now);
    } else {
      tap2(ep, SRD_PKT_IN, path, hdr, hdrlen, payload, payloadlen, now);
    }
  }
  rv = srd_pkt_decode(&pkt, hdr, hdrlen, hdrlen + payloadlen, &why);
  if (rv != 0) {
    srd_ep_drop(ep, now, p->id, why, hdrlen > 1 ? hdr[1] : 0);
    return rv;
  }
  /* The header is intact (its CRC matched): every field of it may be
     believed.  The payload's CRC is checked as the payload is placed in
     its receive buffer (srd_rx.c), before the fragment counts. */
  rv = srd_rx_packet(ep, p, &pkt, hdr + pkt.hdrlen, hdrlen - pkt.hdrlen,
                     payload, payloadlen, now);
  srd_ep_ready(ep, p);
  srd_ep_update_timer(ep, p, now);
  return rv;
}

int srd_ep_read_pkt(srd_ep *ep, const srd_path *path, const uint8_t *pkt,
                    size_t len, srd_tstamp now) {
  return srd_ep_read_pktv(ep, path, pkt, len, NULL, 0, now);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */

void srd_ep_get_stats(const srd_ep *ep, srd_ep_stats *st) {
  *st = ep->stats;
}

int srd_ep_get_peer_stats(const srd_ep *ep, srd_peer_id id,
                          srd_peer_stats *st) {
  const srd_peer *p = srd_ep_peer(ep, id);

  if (p == NULL || st == NULL) {
    return SRD_ERR_BAD_PEER;
  }
  memset(st, 0, sizeof(*st));
  st->state = p->state;
  st->peer_conn_id = p->peer_conn;
  st->local_conn_id = p->local_conn;
  st->n_paths = p->ps.n_paths;
  st->mtu = p->frag_size;
  st->srtt = p->rtt.srtt;
  st->rttvar = p->rtt.rttvar;
  st->min_rtt = p->rtt.samples ? p->rtt.min_rtt : 0;
  st->rto = srd_ep_rto(ep, p);
  st->cwnd = p->ccs.cwnd;
  st->inflight = p->rtb.inflight_bytes;
  st->pkts_sent = p->pkts_sent;
  st->pkts_acked = p->pkts_acked;
  st->retransmits = p->retransmits;
  st->rtt_samples = p->rtt.samples;
  st->cc_decreases = p->ccs.decreases;
  st->cc_wide_decreases = p->ccs.wide_decreases;
  st->rnr_received = p->rnr_received;
  st->msgs_sent = p->msgs_sent;
  st->msgs_received = p->msgs_received;
  return 0;
}

int srd_ep_get_path_stats(const srd_ep *ep, srd_peer_id id, uint32_t path,
                          srd_tstamp now, srd_path_stats *st) {
  const srd_peer *p = srd_ep_peer(ep, id);
  const srd_pathinfo *pi;

  if (p == NULL) {
    return SRD_ERR_BAD_PEER;
  }
  if (st == NULL || path >= p->paths.n) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  pi = &p->paths.p[path];
  memset(st, 0, sizeof(*st));
  st->sent = pi->sent;
  st->acked = pi->acked;
  st->lost = pi->lost;
  st->retransmits = pi->retransmits;
  st->bytes_sent = pi->bytes_sent;
  st->srtt = pi->rtt.srtt;
  st->rttvar = pi->rtt.rttvar;
  st->min_rtt = pi->rtt.samples ? pi->rtt.min_rtt : 0;
  st->last_rtt = pi->rtt.latest;
  st->avoided = p->paths.steering && pi->avoid_until > now;
  st->avoid_until = pi->avoid_until;
  st->weight = pi->weight;
  return 0;
}
