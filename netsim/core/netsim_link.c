/*
 * netsim_link.c: links.
 *
 * A link is a FIFO served at its rate followed by a propagation delay.
 * Because service is FIFO at a known rate, a packet's departure time is
 * fixed when it is admitted, so netsim computes it then: the queue needs no
 * "serialisation done" event, and the link needs one pending event in all,
 * for the arrival of its FIFO's head at the far end, re-armed for the next
 * packet as each one arrives.  A packet-hop therefore costs one event.
 * Occupancy, which drop-tail and ECN need, is brought up to date lazily
 * (netsim_queue.h).
 *
 * Departure times come from cumulative bytes within a busy period
 * (epoch_start + tx(epoch_bytes)), so a long train of back-to-back packets
 * never accumulates rounding error (shared/style.md 2.3).
 *
 * Impairments.  Random loss, bit errors and duplication are the
 * impairment model's (netsim/impair/impair.h), each drawn from its own
 * stream of the link: a packet that reaches the far end takes its bit
 * errors there (the model's geometric gaps over the stream of bits the
 * link delivers: a clean packet costs a subtraction, no draw), is lost or
 * not, and if not may be duplicated.  The rest is netsim's: which bits a
 * packet carries, and where a copy goes.
 *
 * Jitter.  A host's NIC link may add a random delay to each packet's
 * arrival (netsim_host_set_tx_jitter: the host's DMA, PCIe and doorbell
 * timing), drawn when the packet is admitted and clamped so that it never
 * arrives before the packet ahead of it: the FIFO and its one timer stay
 * as they are, the serialiser (and so the queue and the NIC's rate) is
 * untouched, and a packet-hop still costs one event.
 *
 * Duplication.  The copy is a duplicate made in the fabric after the link, so
 * it waits |dup_delay| outside the queue and the serialiser, in a list of
 * its own kept in time order, and goes to the same next hop when its time
 * comes: one more timer per duplicating link, not an event per copy (a
 * delay of seconds at tens of Gb/s holds thousands of copies, more than
 * the pool of one-shot events).
 */
#include "netsim_link.h"

#include <assert.h>
#include <string.h>

#include "netsim_host.h"
#include "netsim_switch.h"
#include "netsim_time.h"

static void link_arrive(netsim_evl *evl, netsim_timer *tm, void *ctx,
                        uint64_t arg);
static void dup_fire(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg);

int netsim_linkcfg_check(const netsim_linkcfg *cfg) {
  if (cfg == NULL || cfg->rate_bps == 0 || cfg->rate_bps > NETSIM_RATE_MAX ||
      cfg->delay > 1000 * NETSIM_S) {
    return NETSIM_ERR_INVAL;
  }
  return 0;
}

static void set_rate(netsim_link *l, uint64_t rate_bps) {
  l->rate_bps = rate_bps;
  l->ps_per_byte = netsim_time_ps_per_byte(rate_bps);
}

netsim_link *netsim_link_new(const netsim_mem *mem) {
  void *base = mem->malloc(sizeof(netsim_link) + 64, mem->user_data);
  netsim_link *l;

  if (base == NULL) {
    return NULL;
  }
  l = (netsim_link *)(((uintptr_t)base + 63) & ~(uintptr_t)63);
  memset(l, 0, sizeof(*l));
  l->mem_base = base;
  return l;
}

void netsim_link_del(const netsim_mem *mem, netsim_link *l) {
  if (l) {
    mem->free(l->mem_base, mem->user_data);
  }
}

void netsim_link_init(netsim_link *l, netsim_sim *sim, uint32_t id,
                      const netsim_linkcfg *cfg) {
  netsim_timer_init(&l->tm, link_arrive, l, id);
  netsim_queue_init(&l->q, cfg->queue_bytes, cfg->ecn_bytes);
  l->sim = sim;
  l->id = id;
  l->delay = cfg->delay;
  l->base_rate_bps = cfg->rate_bps;
  set_rate(l, cfg->rate_bps);
  {
    /* No impairment until one is set; the streams are link |id|'s. */
    const impair_cfg clean = {0};
    impair_link_init(&l->imp, &clean, sim->set.seed, id);
  }
  netsim_timer_init(&l->dup_tm, dup_fire, l, id);
  l->up = 1;
  l->routed = 1;
}

int netsim_link_send(netsim_sim *sim, netsim_link *l, netsim_pkt *pkt) {
  netsim_time now = sim->evl->now, fin;
  netsim_queue *q = &l->q;
  int verdict, was_empty;

  if (!l->up) {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_LINK_DOWN, l);
    return NETSIM_ERR_DROPPED;
  }
  /* q->bytes counts from q->qhead on, which may lag behind packets that
     have finished serialising (they retire at the latest when they
     arrive): an upper bound of the occupancy.  Retiring them reads each
     one, which has usually left the caches since it was queued, so it is
     done only when the bound could change the outcome: a drop, an ECN
     mark or a new maximum. */
  if ((uint64_t)q->bytes + pkt->size > q->limit ||
      (uint64_t)q->bytes + pkt->size > q->max_bytes ||
      (q->ecn && q->bytes > q->ecn && (pkt->flags & NETSIM_PKT_ECT))) {
    netsim_queue_advance(q, now);
  }
  verdict = netsim_queue_admit(q, pkt);
  if (verdict == NETSIM_QUEUE_FULL) {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_QUEUE, l);
    return NETSIM_ERR_DROPPED;
  }
  if (verdict == NETSIM_QUEUE_MARK) {
    pkt->flags |= NETSIM_PKT_CE;
    ++l->marked;
    ++sim->st.ecn_marked;
  }
  if (l->busy_until <= now) {
    /* Idle: a new busy period starts now. */
    l->epoch_start = now;
    l->epoch_bytes = 0;
  }
  l->epoch_bytes += pkt->size;
  fin = l->epoch_start + (l->ps_per_byte
                              ? l->epoch_bytes * l->ps_per_byte
                              : netsim_time_tx(l->epoch_bytes, l->rate_bps));
  l->busy_until = fin;
  pkt->t_arr = fin + l->delay;
  if (l->jitter) {
    /* Late by a random amount, but FIFO: never ahead of the packet
       before it on the link. */
    pkt->t_arr += impair_rng_below(&l->imp.jitter_rng, l->jitter + 1);
    if (q->tail && pkt->t_arr < q->tail->t_arr) {
      pkt->t_arr = q->tail->t_arr;
    }
  }
  was_empty = q->head == NULL;
  l->byte_ps += (double)pkt->size * (double)(fin - now);
  netsim_queue_push(q, pkt, fin);
  if (was_empty) {
    int rv = netsim_evl_timer_set(sim->evl, &l->tm, pkt->t_arr);
    /* The heap was sized for one timer per link when routes were built. */
    assert(rv == 0);
    (void)rv;
  }
  return 0;
}

/* link_corrupt applies the bit errors that fall in |p| as it reaches the
   far end (netsim_link_set_ber): the first min(payload_len, size) bytes
   are the ones the packet carries, the rest only a length. */
static void link_corrupt(netsim_sim *sim, netsim_link *l, netsim_pkt *p) {
  uint64_t carried, pos;
  uint32_t n = 0;
  uint8_t *data;
  impair_flips f;

  impair_link_flips(&l->imp, &f, (uint64_t)p->size * 8);
  pos = impair_flips_next(&l->imp, &f);
  if (pos == IMPAIR_NONE) {
    return;
  }
  /* netsim owns the packet while it crosses the link. */
  data = (uint8_t *)(uintptr_t)netsim_pkt_data(p);
  carried = p->payload_len < p->size ? p->payload_len : p->size;
  if (data == NULL) {
    carried = 0;
  } else if (p->payload_idx == UINT32_MAX && carried > NETSIM_PKT_INLINE) {
    carried = NETSIM_PKT_INLINE;
  }
  carried *= 8;
  do {
    ++n;
    if (pos < carried) {
      impair_flip_bit(data, pos);
      p->flags |= NETSIM_PKT_FLIPPED;
    } else {
      p->flags |= NETSIM_PKT_CORRUPT;
    }
  } while ((pos = impair_flips_next(&l->imp, &f)) != IMPAIR_NONE);
  ++sim->st.corrupted;
  netsim_sim_trace(sim, sim->evl->now,
                   (0xCULL << 60) ^ (p->uid << 24) ^ ((uint64_t)n << 32) ^
                       l->id);
}

/* forward hands |p|, at the far end of |l|, to the node there. */
static void forward(netsim_sim *sim, netsim_link *l, netsim_pkt *p) {
  netsim_node *to = l->to;

  if (to->kind == NETSIM_NODE_SWITCH) {
    netsim_switch_forward(sim, (netsim_switch *)to, p);
  } else {
    netsim_host_deliver(sim, (netsim_host *)to, p);
  }
}

/* link_dup queues a copy of |p|, which reached the far end and was drawn
   for duplication, for dup_delay later (netsim_link_set_dup). */
static void link_dup(netsim_sim *sim, netsim_link *l, const netsim_pkt *p) {
  netsim_time due = sim->evl->now + l->dup_delay;
  netsim_pkt *c, **pp;
  int rv;

  if (netsim_pkt_clone(sim->pool, p, &c) != 0) {
    ++l->dup_skipped;
    ++sim->st.dup_skipped;
    return;
  }
  c->flags |= NETSIM_PKT_DUP;
  c->next = NULL;
  c->t_arr = due;
  if (sim->dup_cb && sim->dup_cb(sim, p, c, sim->dup_user) != 0) {
    netsim_pkt_free(sim->pool, c);
    ++l->dup_skipped;
    ++sim->st.dup_skipped;
    return;
  }
  ++l->duplicated;
  ++sim->st.duplicated;
  netsim_sim_trace(sim, sim->evl->now, (0xDULL << 60) ^ (p->uid << 24) ^ l->id);
  /* In time order, after every copy due at the same time: at the tail,
     unless the delay was shortened since the tail was queued. */
  if (l->dup_tail == NULL || l->dup_tail->t_arr <= due) {
    pp = l->dup_tail ? &l->dup_tail->next : &l->dup_head;
  } else {
    for (pp = &l->dup_head; (*pp)->t_arr <= due; pp = &(*pp)->next) {
    }
  }
  c->next = *pp;
  *pp = c;
  if (c->next == NULL) {
    l->dup_tail = c;
  }
  ++l->dup_n;
  if (l->dup_head == c) {
    rv = netsim_evl_timer_set(sim->evl, &l->dup_tm, due);
    /* netsim_link_set_dup made room for the timer. */
    assert(rv == 0);
    (void)rv;
  }
}

/* dup_fire: the first waiting copy's time has come. */
static void dup_fire(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  netsim_link *l = ctx;
  netsim_sim *sim = l->sim;
  netsim_pkt *c = l->dup_head;

  assert(c && c->t_arr == evl->now);
  l->dup_head = c->next;
  if (l->dup_head == NULL) {
    l->dup_tail = NULL;
  } else {
    netsim_evl_timer_set(evl, tm, l->dup_head->t_arr);
  }
  --l->dup_n;
  c->next = NULL;
  netsim_sim_trace(sim, evl->now, (0xEULL << 60) ^ (c->uid << 24) ^ arg);
  if (sim->tap_cb) {
    sim->tap_cb(sim, c, l, sim->tap_user);
  }
  forward(sim, l, c);
}

/* link_arrive: the FIFO's head reached the far end. */
static void link_arrive(netsim_evl *evl, netsim_timer *tm, void *ctx,
                        uint64_t arg) {
  netsim_link *l = ctx;
  netsim_sim *sim = l->sim;
  netsim_queue *q = &l->q;
  netsim_pkt *p;

  {
    /* If the next event is an arrival too, its packet: the event list
       prefetched its link's first two lines an event ago, and the packet
       has usually left the caches since it was queued. */
    const netsim_timer *next = netsim_evl_next_timer(evl);
    if (next && next->cb == link_arrive) {
      __builtin_prefetch(((const netsim_link *)next->ctx)->q.head);
    }
  }
  assert(q->head && q->head->t_arr == evl->now);
  p = netsim_queue_pop(q);
  if (q->head) {
    /* The successor's arrival time was copied into |p| when it was queued:
       no need to touch it now. */
    netsim_evl_timer_set(evl, tm, p->t_next_arr);
  }
  ++l->rx_pkts;
  l->rx_bytes += p->size;
  ++sim->st.hops;
  ++p->hops;
  netsim_sim_trace(sim, evl->now, (p->uid << 24) ^ arg);
  if (l->impair & IMPAIR_F_BER) {
    link_corrupt(sim, l, p);
  }
  if (sim->tap_cb) {
    sim->tap_cb(sim, p, l, sim->tap_user);
  }
  if ((l->impair & IMPAIR_F_LOSS) && impair_link_lose(&l->imp)) {
    netsim_sim_drop(sim, p, NETSIM_DROP_LOSS, l);
    return;
  }
  if ((l->impair & IMPAIR_F_DUP) && impair_link_dup(&l->imp)) {
    link_dup(sim, l, p);
  }
  forward(sim, l, p);
}

void netsim_link_set_up(netsim_sim *sim, netsim_link *l, int up) {
  netsim_pkt *p, *next;

  if (up) {
    l->up = 1;
    return;
  }
  if (!l->up) {
    return;
  }
  l->up = 0;
  /* Everything queued or on the wire is lost.  Detach the FIFO first: the
     drop callback may send again (onto a dead link, where it is dropped
     at once). */
  netsim_evl_timer_stop(sim->evl, &l->tm);
  p = netsim_queue_take_all(&l->q);
  l->busy_until = sim->evl->now;
  l->epoch_start = sim->evl->now;
  l->epoch_bytes = 0;
  for (; p; p = next) {
    next = p->next;
    p->next = NULL;
    ++l->flushed_pkts;
    l->flushed_bytes += p->size;
    netsim_sim_drop(sim, p, NETSIM_DROP_LINK_DOWN, l);
  }
}

int netsim_link_set_rate(netsim_sim *sim, netsim_link *l, uint64_t rate_bps) {
  netsim_time now = sim->evl->now;

  if (rate_bps == 0) {
    rate_bps = l->base_rate_bps;
  }
  if (rate_bps > NETSIM_RATE_MAX) {
    return NETSIM_ERR_INVAL;
  }
  /* A new busy period starts where the current one ends: packets already
     queued keep their times, later ones are timed at the new rate. */
  l->epoch_start = l->busy_until > now ? l->busy_until : now;
  l->epoch_bytes = 0;
  set_rate(l, rate_bps);
  return 0;
}

int netsim_link_set_loss(netsim_link *l, double p) {
  if (impair_link_set_loss(&l->imp, p) != 0) {
    return NETSIM_ERR_INVAL;
  }
  l->impair = l->imp.flags;
  return 0;
}

int netsim_link_set_ber(netsim_link *l, double ber) {
  if (impair_link_set_ber(&l->imp, ber) != 0) {
    return NETSIM_ERR_INVAL;
  }
  l->impair = l->imp.flags;
  return 0;
}

int netsim_link_set_dup(netsim_link *l, double p, netsim_time delay) {
  netsim_sim *sim = l->sim;

  if (!(p >= 0.0 && p <= 1.0) || delay > 1000 * NETSIM_S) {
    return NETSIM_ERR_INVAL;
  }
  if (p > 0.0 && !l->dup_slot) {
    /* Room for the copy timer, so that arming it never allocates. */
    ++sim->n_dup_links;
    if (netsim_sim_reserve_events(sim) != 0) {
      --sim->n_dup_links;
      return NETSIM_ERR_NOMEM;
    }
    l->dup_slot = 1;
  }
  impair_link_set_dup(&l->imp, p);
  l->dup_delay = delay;
  l->impair = l->imp.flags;
  return 0;
}

int netsim_link_set_queue(netsim_link *l, uint64_t queue_bytes,
                          uint64_t ecn_bytes) {
  netsim_queue_set_limits(&l->q, queue_bytes, ecn_bytes);
  return 0;
}

uint32_t netsim_link_id(const netsim_link *l) {
  return l->id;
}

uint64_t netsim_link_queue_bytes(netsim_link *l) {
  netsim_queue_advance(&l->q, l->sim->evl->now);
  return l->q.bytes;
}

void netsim_link_get_info(const netsim_link *l, netsim_link_info *info) {
  memset(info, 0, sizeof(*info));
  info->id = l->id;
  info->peer = l->peer;
  info->from_node = l->from_node;
  info->from_port = l->from_port;
  info->to_node = l->to_node;
  info->to_port = l->to_port;
  info->rate_bps = l->rate_bps;
  info->base_rate_bps = l->base_rate_bps;
  info->delay = l->delay;
  info->queue_bytes = l->q.limit;
  info->ecn_bytes = l->q.ecn;
  info->loss = l->imp.cfg.loss;
  info->ber = l->imp.cfg.ber;
  info->dup = l->imp.cfg.dup;
  info->dup_delay = l->dup_delay;
  info->up = l->up;
  info->routed = l->routed;
}

void netsim_link_get_stats(netsim_link *l, netsim_link_stats *st) {
  netsim_pkt *p;

  memset(st, 0, sizeof(*st));
  netsim_queue_advance(&l->q, l->sim->evl->now);
  /* Every admitted packet has arrived, was flushed, or is still on the
     link. */
  st->enq_pkts = l->rx_pkts + l->flushed_pkts;
  st->enq_bytes = l->rx_bytes + l->flushed_bytes;
  for (p = l->q.head; p; p = p->next) {
    ++st->enq_pkts;
    st->enq_bytes += p->size;
  }
  st->rx_pkts = l->rx_pkts;
  st->rx_bytes = l->rx_bytes;
  memcpy(st->drops, l->drops, sizeof(st->drops));
  st->ecn_marked = l->marked;
  st->q_bytes = l->q.bytes;
  st->q_pkts = l->q.pkts;
  st->max_q_bytes = l->q.max_bytes;
  st->q_byte_ps = l->byte_ps;
  st->busy_until = l->busy_until;
  st->corrupted = l->imp.st.corrupted;
  st->bit_errors = l->imp.st.bit_errors;
  st->duplicated = l->duplicated;
  st->dup_skipped = l->dup_skipped;
  st->dup_pending = l->dup_n;
}
