/*
 * sim_srd.c: libsrd in netsim hosts, driven by virtual time through the
 * packet loop every driver writes (docs/programmers-guide.md): input,
 * output, one deadline, completions.  No SRD logic lives here.
 *
 * Zero copy.  The driver writes packets with srd_ep_write_pktv, which
 * points the payload into the posted send buffer instead of copying it.
 * Every message is sent from one shared, read-only arena, each from its
 * own small offset |k| (its send slot, k < MTU): the payload of a fragment
 * at message offset |off| is then arena + k + off, and since fragment
 * offsets are multiples of the MTU, (pointer - arena) mod MTU names the
 * slot, so the driver knows which message a packet belongs to without
 * looking into the engine.  The netsim packet carries only the SRD header
 * (in a pool buffer, or a side buffer for the rare header too large for
 * one) and the payload's length; the receiver gives the engine the payload
 * by length only (srd_ep_read_pktv with a NULL payload), which the engine
 * accounts for without copying, so neither the arena nor the receive
 * buffer is ever read or written.  Payload contents are not what the
 * simulator studies (the engine's own tests check every byte).
 *
 * Which message a receive completion is.  A receive completion names the
 * peer and the engine's message id.  The sender learns the id from the
 * DATA header it writes (srd_pkt_peek() reads its msg_id) the
 * first time a fragment of the message leaves, and records (src, dst,
 * msg_id) -> message in a table the receiver consults.
 *
 * Bit errors (netsim_link_set_ber).  A packet's carried bytes are its SRD
 * header, so netsim flips header bits itself and the engine reads the
 * damaged header.  An error in bytes the packet does not carry (the
 * payload, given by length, or the framing) only marks the packet; the
 * engine would find it with its payload CRC, which it cannot compute
 * over bytes that are not there, so the driver makes the error visible
 * the way the CRC would see it: it flips a random bit of the header CRC
 * field (hcrc, bytes 16..19 of wire format 2, which covers the whole
 * header): a detected corruption (docs/netsim.md, "SRD in the hosts").
 * Before wire format 2 those bytes are the first type-specific field and
 * nothing checks them.  For every corrupted packet the driver reads the
 * engine's drop counters before and after, so it knows whether the
 * engine dropped the packet, and why, or took it.
 *
 * Duplicates (netsim_link_set_dup).  A copy a duplicating link made is
 * given to the engine as the datagram it copies, however late: nothing
 * here treats it differently (NETSIM_PKT_DUP is only counted), so what
 * the engine does with a duplicate is its own.  A copy whose header sits
 * in a side buffer gets a side buffer of its own (on_dup).  A message the
 * engine delivered twice would find no entry in the message table the
 * second time (the first took it) and be counted as unmatched.
 *
 * NIC backpressure.  A real driver cannot push more than its NIC ring
 * holds; here the driver stops writing while the host's NIC queue holds
 * nic_limit_bytes, and a timer resumes it when half has drained.  The
 * engine therefore keeps its packets (and measures RTT from when they
 * really leave), as it would over a NIC.
 */
#include "sim_srd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A packet whose SRD header sits in a side buffer has this bit in
   netsim_pkt.flow; the low bits are the side buffer's index. */
#define SIDE_FLAG 0x80000000u
#define SIDE_SIZE 640u /* >= SRD_PKT_ACK_MAX_LEN (572) */
#define HDR_CAP 640u
#define NO_PEER UINT32_MAX
/* Where the header CRC sits in wire format 2 (docs/protocol.md). */
#define HCRC_OFF 16u
#define HCRC_LEN 4u

/* The (src, dst, msg_id) -> message table (open addressing, linear
   probing, backward-shift deletion: no tombstones). */
typedef struct ment {
  uint64_t pair; /* (src + 1) << 32 | dst; 0: empty */
  uint32_t msg_id;
  simx_msg *m;
} ment;

typedef struct sim_srd sim_srd;

typedef struct shost {
  sim_srd *t;
  netsim_host *nh;
  netsim_link *nic;
  uint64_t nic_rate;
  /* nic_half is how long the NIC takes to send half of nic_limit_bytes at
     nic_rate. */
  netsim_time nic_half;
  uint32_t idx;
  srd_ep *ep;
  netsim_timer tm;
  /* The NIC is above its limit until nic_wake (0: not blocked). */
  netsim_time nic_wake;
  /* Peers: host index -> peer id (open addressing, keys host + 1), and
     peer id -> host index. */
  uint32_t *pm_key;
  uint32_t *pm_val;
  uint32_t pm_mask;
  uint32_t *peer_host;
  uint32_t n_peers;
  /* The last host a packet came from and its peer id (most packets come
     from the host the previous one came from). */
  uint32_t last_src, last_peer;
  /* Send slots: slot k -> message, its engine id once mapped. */
  simx_msg **slot_msg;
  uint32_t *slot_id;
  uint8_t *slot_mapped;
  uint32_t *free_slots;
  uint32_t n_free;
  /* Messages waiting for a send slot (a ring). */
  simx_msg **backlog;
  uint32_t bl_head, bl_len, bl_cap;
  int in_service;
  /* rng picks the bit a payload error flips (see the top comment). */
  netsim_rng rng;
} shost;

struct sim_srd {
  simx x;
  sim_srd_cfg cfg;
  netsim_pktpool *pool;
  uint32_t payload_max;
  uint32_t n_hosts;
  shost *hosts;
  uint8_t *arena;
  size_t arena_len;
  uint8_t *scratch; /* every posted receive's buffer */
  uint32_t max_sends;
  /* Side buffers for headers larger than a pool payload. */
  uint8_t *side;
  uint32_t *side_free;
  uint32_t n_side, side_cap;
  /* The message table. */
  ment *mt;
  uint32_t mt_mask, mt_len;
  simx_counters cnt;
  netsim_drop_cb prev_drop;
  void *prev_drop_user;
  netsim_dup_cb prev_dup;
  void *prev_dup_user;
  int hooked; /* on_drop and on_dup are installed (prev_* are valid) */
  uint8_t hdr[HDR_CAP];
};

static const simx_ops srd_ops;

void sim_srd_cfg_default(sim_srd_cfg *c) {
  memset(c, 0, sizeof(*c));
  srd_settings_default(&c->ep);
  /* A simulated host needs far smaller pools than the defaults (sized
     for a real endpoint with a 4 MiB unexpected pool): 1024 hosts must fit
     in the memory htsim uses (issue 3). */
  c->ep.max_peers = 0; /* 0: sized by sim_srd_new (or the runner) */
  c->ep.max_sends = 0;
  c->ep.max_recvs = 0;
  c->ep.unexp_msgs = 0;
  c->ep.unexp_bytes = 0;
  c->ep.msg_window = 0;
  c->ep.pkt_window = 0;
  /* Payloads travel by length only, so there are no payload bytes to
     check; the header's CRC32C still guards every header. */
  c->ep.payload_crc = 0;
  srd_peer_settings_default(&c->peer);
  c->seed = 1;
  c->recv_depth = 0;
  c->sport_base = 49152;
  c->dport = 4791;
  c->nic_limit_bytes = 0; /* 0: four of the largest packets */
}

/* ------------------------------------------------------------------------ */
/* Tables                                                                   */

static uint64_t mix64(uint64_t x) {
  return netsim_mix64(x);
}

static uint32_t mt_slot(const sim_srd *t, uint64_t pair, uint32_t id) {
  return (uint32_t)mix64(pair * 0x9E3779B97F4A7C15ULL ^ id) & t->mt_mask;
}

static int mt_grow(sim_srd *t) {
  uint32_t ncap = (t->mt_mask + 1) * 2, i;
  ment *old = t->mt, *n = calloc(ncap, sizeof(*n));
  uint32_t ocap = t->mt_mask + 1;

  if (n == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  t->mt = n;
  t->mt_mask = ncap - 1;
  for (i = 0; i < ocap; ++i) {
    if (old[i].pair) {
      uint32_t s = mt_slot(t, old[i].pair, old[i].msg_id);
      while (n[s].pair) {
        s = (s + 1) & t->mt_mask;
      }
      n[s] = old[i];
    }
  }
  free(old);
  return 0;
}

static int mt_put(sim_srd *t, uint32_t src, uint32_t dst, uint32_t id,
                  simx_msg *m) {
  uint64_t pair = (uint64_t)(src + 1) << 32 | dst;
  uint32_t s;

  if ((t->mt_len + 1) * 2 > t->mt_mask + 1 && mt_grow(t) != 0) {
    return NETSIM_ERR_NOMEM;
  }
  s = mt_slot(t, pair, id);
  while (t->mt[s].pair) {
    if (t->mt[s].pair == pair && t->mt[s].msg_id == id) {
      t->mt[s].m = m;
      return 0;
    }
    s = (s + 1) & t->mt_mask;
  }
  t->mt[s].pair = pair;
  t->mt[s].msg_id = id;
  t->mt[s].m = m;
  ++t->mt_len;
  return 0;
}

/* mt_take removes and returns the entry, or NULL. */
static simx_msg *mt_take(sim_srd *t, uint32_t src, uint32_t dst, uint32_t id) {
  uint64_t pair = (uint64_t)(src + 1) << 32 | dst;
  uint32_t s = mt_slot(t, pair, id), j;
  simx_msg *m;

  while (t->mt[s].pair && !(t->mt[s].pair == pair && t->mt[s].msg_id == id)) {
    s = (s + 1) & t->mt_mask;
  }
  if (!t->mt[s].pair) {
    return NULL;
  }
  m = t->mt[s].m;
  /* Backward-shift deletion keeps every probe chain unbroken. */
  j = s;
  for (;;) {
    uint32_t home;
    j = (j + 1) & t->mt_mask;
    if (!t->mt[j].pair) {
      break;
    }
    home = mt_slot(t, t->mt[j].pair, t->mt[j].msg_id);
    if (((j - home) & t->mt_mask) >= ((j - s) & t->mt_mask)) {
      t->mt[s] = t->mt[j];
      s = j;
    }
  }
  t->mt[s].pair = 0;
  --t->mt_len;
  return m;
}

static uint32_t pm_find(const shost *h, uint32_t host) {
  uint32_t s = (uint32_t)mix64(host) & h->pm_mask;

  while (h->pm_key[s]) {
    if (h->pm_key[s] == host + 1) {
      return h->pm_val[s];
    }
    s = (s + 1) & h->pm_mask;
  }
  return NO_PEER;
}

/* peer_of returns host |h|'s peer id for host |other|, adding the peer the
   first time; NO_PEER if the endpoint has no room. */
static uint32_t peer_of(shost *h, uint32_t other) {
  uint32_t id = pm_find(h, other), s;
  srd_peer_id pid;

  if (id != NO_PEER) {
    return id;
  }
  if (h->n_peers >= h->t->cfg.ep.max_peers ||
      srd_ep_add_peer(h->ep, &h->t->cfg.peer, &pid) != 0) {
    return NO_PEER;
  }
  ++h->n_peers;
  s = (uint32_t)mix64(other) & h->pm_mask;
  while (h->pm_key[s]) {
    s = (s + 1) & h->pm_mask;
  }
  h->pm_key[s] = other + 1;
  h->pm_val[s] = pid;
  h->peer_host[pid] = other;
  return pid;
}

/* ------------------------------------------------------------------------ */
/* Side buffers                                                             */

static uint8_t *side_buf(sim_srd *t, uint32_t i) {
  return t->side + (size_t)i * SIDE_SIZE;
}

/* side_get returns a free side buffer's index, growing the set (rarely:
   only headers above the pool's payload size use it); UINT32_MAX if out
   of memory. */
static uint32_t side_get(sim_srd *t) {
  if (t->n_side == 0) {
    uint32_t ncap = t->side_cap ? t->side_cap * 2 : 256, i;
    uint8_t *ns;
    uint32_t *nf;
    if (ncap >= SIDE_FLAG) {
      return UINT32_MAX;
    }
    ns = realloc(t->side, (size_t)ncap * SIDE_SIZE);
    if (ns == NULL) {
      return UINT32_MAX;
    }
    t->side = ns;
    nf = realloc(t->side_free, (size_t)ncap * sizeof(*nf));
    if (nf == NULL) {
      return UINT32_MAX;
    }
    t->side_free = nf;
    for (i = ncap; i-- > t->side_cap;) {
      t->side_free[t->n_side++] = i;
    }
    t->side_cap = ncap;
  }
  return t->side_free[--t->n_side];
}

static void side_put(sim_srd *t, uint32_t i) {
  t->side_free[t->n_side++] = i;
}

/* A dropped packet may hold a side buffer. */
static void on_drop(netsim_sim *sim, const netsim_pkt *pkt,
                    netsim_drop_reason why, netsim_link *link, void *user) {
  sim_srd *t = user;

  if (pkt->key.proto == 17 && pkt->key.dport == t->cfg.dport &&
      (pkt->flow & SIDE_FLAG)) {
    side_put(t, pkt->flow & ~SIDE_FLAG);
  }
  if (t->prev_drop) {
    t->prev_drop(sim, pkt, why, link, t->prev_drop_user);
  }
}

/* A duplicating link's copy of a packet whose header is in a side buffer
   needs a side buffer of its own (netsim copies only what the packet
   carries); without one the copy is refused. */
static int on_dup(netsim_sim *sim, const netsim_pkt *orig, netsim_pkt *copy,
                  void *user) {
  sim_srd *t = user;

  if (orig->key.proto == 17 && orig->key.dport == t->cfg.dport &&
      (orig->flow & SIDE_FLAG)) {
    uint32_t si = side_get(t);
    if (si == UINT32_MAX) {
      return 1;
    }
    memcpy(side_buf(t, si), side_buf(t, orig->flow & ~SIDE_FLAG),
           (size_t)orig->tag);
    copy->flow = SIDE_FLAG | si;
    return 0;
  }
  return t->prev_dup ? t->prev_dup(sim, orig, copy, t->prev_dup_user) : 0;
}

/* ------------------------------------------------------------------------ */
/* The packet loop                                                          */

static srd_tstamp now_ns(const sim_srd *t) {
  return netsim_sim_now(t->x.sim) / NETSIM_NS;
}

/* send_pkt puts one datagram the engine wrote on the wire and returns its
   size on the wire (0 if it could not be sent). */
static uint32_t send_pkt(shost *h, const srd_path *path, size_t hdrlen,
                         const srd_iovec *iov) {
  sim_srd *t = h->t;
  netsim_pkt *p;
  uint8_t *buf;
  uint32_t dst = h->peer_host[path->peer];

  uint32_t size;

  if (netsim_sim_pkt_alloc(t->x.sim, &p) != 0) {
    ++t->cnt.local_drops;
    return 0;
  }
  if (hdrlen <= t->payload_max &&
      netsim_pkt_payload(t->pool, p, (uint32_t)hdrlen, &buf) == 0) {
    memcpy(buf, t->hdr, hdrlen);
    p->flow = h->idx;
  } else {
    uint32_t si = side_get(t);
    if (si == UINT32_MAX) {
      netsim_sim_pkt_free(t->x.sim, p);
      ++t->cnt.local_drops;
      return 0;
    }
    memcpy(side_buf(t, si), t->hdr, hdrlen);
    p->tag = hdrlen;
    p->flow = SIDE_FLAG | si;
  }
  if (iov->len > 0) {
    /* A data fragment: which message is it? (see the top comment) */
    size_t off = (size_t)((const uint8_t *)iov->base - t->arena);
    uint32_t k = (uint32_t)(off % t->cfg.ep.mtu);
    ++t->cnt.data_pkts;
    srd_pkt_info info;
    if (k < t->max_sends && h->slot_msg[k] != NULL && !h->slot_mapped[k] &&
        srd_pkt_peek(t->hdr, hdrlen, &info) == 0 &&
        info.type == SRD_PKT_TYPE_DATA) {
      uint32_t id = info.msg_id;
      if (mt_put(t, h->idx, dst, id, h->slot_msg[k]) == 0) {
        h->slot_mapped[k] = 1;
        h->slot_id[k] = id;
      }
    }
  } else {
    ++t->cnt.ctrl_pkts;
  }
  p->key.src = NETSIM_ADDR_BASE + h->idx;
  p->key.dst = NETSIM_ADDR_BASE + dst;
  p->key.sport = (uint16_t)(t->cfg.sport_base + path->path);
  p->key.dport = t->cfg.dport;
  p->key.proto = 17;
  p->size = size = (uint32_t)(hdrlen + iov->len + SIMX_ETH_IP_OVERHEAD + 8);
  t->cnt.bytes_sent += size;
  netsim_host_send(t->x.sim, h->nh, p);
  return size;
}

/* flush writes every due datagram while the NIC has room. */
static void flush(shost *h) {
  sim_srd *t = h->t;
  srd_tstamp now = now_ns(t);
  uint32_t limit = t->cfg.nic_limit_bytes;

  /* No time passes here: the queue only grows by what is sent. */
  uint64_t q = netsim_link_queue_bytes(h->nic);

  h->nic_wake = 0;
  for (;;) {
    srd_path path;
    srd_iovec iov;
    srd_ssize n;

    if (q >= limit) {
      netsim_time free_at = netsim_host_tx_free_at(h->nh);
      netsim_time half = h->nic_half;
      h->nic_wake = free_at > half ? free_at - half : 0;
      if (h->nic_wake <= netsim_sim_now(t->x.sim)) {
        h->nic_wake = netsim_sim_now(t->x.sim) + 1;
      }
      break;
    }
    n = srd_ep_write_pktv(h->ep, &path, t->hdr, sizeof(t->hdr), &iov, now);
    if (n <= 0) {
      break;
    }
    q += send_pkt(h, &path, (size_t)n, &iov);
  }
}

static void post_backlog(shost *h);

/* poll_cq reads the completions and reports them. */
static void poll_cq(shost *h) {
  sim_srd *t = h->t;
  srd_cqe cq[32];
  size_t n, i;

  while ((n = srd_ep_poll_cq(h->ep, cq, 32)) > 0) {
    for (i = 0; i < n; ++i) {
      const srd_cqe *e = &cq[i];
      if (e->op == SRD_OP_SEND) {
        uint32_t k = (uint32_t)(uintptr_t)e->user_ctx;
        simx_msg *m = h->slot_msg[k];
        if (h->slot_mapped[k] && e->status != 0) {
          /* Never delivered (or not known to be): forget the id. */
          (void)mt_take(t, h->idx, m->dst, h->slot_id[k]);
        }
        h->slot_msg[k] = NULL;
        h->slot_mapped[k] = 0;
        h->free_slots[h->n_free++] = k;
        if (e->status != 0) {
          ++t->cnt.send_errors;
        }
        m->status = e->status;
        if (t->x.app.sent) {
          t->x.app.sent(t->x.app.user, m, e->status);
        }
      } else {
        uint32_t src =
            e->peer < t->cfg.ep.max_peers ? h->peer_host[e->peer] : NO_PEER;
        simx_msg *m = NULL;
        if (e->status == 0 && src != NO_PEER) {
          m = mt_take(t, src, h->idx, e->msg_id);
        }
        if (m == NULL) {
          ++t->cnt.recv_errors;
          if (e->status == 0) {
            /* A second delivery of a message, or a damaged id. */
            ++t->cnt.unmatched;
          }
        } else {
          if (t->x.app.arrived) {
            t->x.app.arrived(t->x.app.user, m);
          }
          if (t->x.app.readable) {
            t->x.app.readable(t->x.app.user, m);
          }
          if (t->x.app.progress) {
            t->x.app.progress(t->x.app.user, m->flow, m->bytes);
          }
        }
        if (e->status != SRD_ERR_CANCELED) {
          (void)srd_ep_post_recv(h->ep, t->scratch, t->cfg.ep.max_msg_size,
                                 NULL, now_ns(t));
        }
      }
    }
  }
  post_backlog(h);
}

static void arm(shost *h) {
  sim_srd *t = h->t;
  netsim_evl *evl = netsim_sim_evl(t->x.sim);
  netsim_time now = netsim_sim_now(t->x.sim), at = NETSIM_TIME_NONE, cur;
  srd_tstamp e = srd_ep_get_expiry(h->ep);

  if (e != SRD_TSTAMP_NONE) {
    at = e >= UINT64_MAX / NETSIM_NS ? NETSIM_TIME_NONE : e * NETSIM_NS;
    if (at != NETSIM_TIME_NONE && at <= now) {
      /* Due now (in ns): run it after what is already due. */
      at = h->nic_wake ? NETSIM_TIME_NONE : now + 1;
    }
  }
  if (h->nic_wake && h->nic_wake < at) {
    at = h->nic_wake;
  }
  if (at == NETSIM_TIME_NONE) {
    /* Left armed if it is: a spurious wake-up costs one event, a stop
       and a re-arm two heap updates. */
    return;
  }
  cur = netsim_evl_timer_expiry(evl, &h->tm);
  /* A deadline that moved later (the retransmission timeout does, on every
     acknowledgement) keeps the earlier wake-up, which re-arms: far fewer
     heap updates than following every move. */
  if (cur == NETSIM_TIME_NONE || at < cur) {
    netsim_evl_timer_set(evl, &h->tm, at);
  }
}

/* service runs the loop's output half after any input: completions,
   output, the deadline. */
static void service(shost *h) {
  if (h->in_service) {
    return;
  }
  h->in_service = 1;
  poll_cq(h);
  flush(h);
  arm(h);
  h->in_service = 0;
}

static void on_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  shost *h = ctx;
  srd_tstamp now = now_ns(h->t);

  (void)evl;
  (void)tm;
  (void)arg;
  if (srd_ep_get_expiry(h->ep) <= now) {
    srd_ep_handle_expiry(h->ep, now);
  }
  service(h);
}

/* corrupt_drops sums the drop reasons that mean "found corrupted". */
static uint64_t corrupt_drops(const srd_ep_stats *st) {
  return st->drops[SRD_DROP_CORRUPT_HDR] + st->drops[SRD_DROP_CORRUPT_PAYLOAD];
}

static uint64_t all_drops(const srd_ep_stats *st) {
  uint64_t n = 0;
  uint32_t i;

  for (i = 0; i < SRD_DROP_REASONS; ++i) {
    n += st->drops[i];
  }
  return n;
}

/* read_corrupted gives the engine a packet netsim marked with bit errors
   (NETSIM_PKT_BITERR): an error beyond the header becomes a flipped bit
   of the header CRC field (see the top comment); then the packet is read
   like any other, and the engine's drop counters say what it made of
   it. */
static void read_corrupted(shost *h, const srd_path *path, uint8_t *hdr,
                           size_t hdrlen, size_t plen, uint8_t flags) {
  sim_srd *t = h->t;
  srd_ep_stats before, after;
  uint32_t bit;

  if (flags & NETSIM_PKT_FLIPPED) {
    /* The header is damaged already: the CRC over it will not match. */
    ++t->cnt.corrupt_in_hdr;
  } else if (hdrlen > 0) {
    bit = hdrlen >= HCRC_OFF + HCRC_LEN
              ? HCRC_OFF * 8 + netsim_rng_below(&h->rng, HCRC_LEN * 8)
              : netsim_rng_below(&h->rng, (uint32_t)hdrlen * 8);
    hdr[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
  }
  srd_ep_get_stats(h->ep, &before);
  (void)srd_ep_read_pktv(h->ep, path, hdr, hdrlen, NULL, plen, now_ns(t));
  srd_ep_get_stats(h->ep, &after);
  if (corrupt_drops(&after) != corrupt_drops(&before)) {
    /* Counted from the engine's own counters (srd_counters). */
  } else if (all_drops(&after) != all_drops(&before)) {
    ++t->cnt.corrupt_other;
  } else {
    ++t->cnt.corrupt_accepted;
  }
}

static void on_rx(netsim_sim *sim, netsim_host *nh, netsim_pkt *pkt,
                  void *user) {
  shost *h = user;
  sim_srd *t = h->t;
  uint32_t src = pkt->key.src - NETSIM_ADDR_BASE;
  uint8_t *hdr;
  size_t hdrlen, plen;
  srd_path path;

  (void)nh;
  /* The header is in the packet's second cache line (netsim_pkt_data) or,
     if too large for a pool buffer, in a side buffer; the payload's length
     is what the packet's size leaves (see send_pkt). */
  if (pkt->flow & SIDE_FLAG) {
    hdr = side_buf(t, pkt->flow & ~SIDE_FLAG);
    hdrlen = (size_t)pkt->tag;
  } else {
    /* The receiver owns the packet: it may write a payload error into
       the header (read_corrupted). */
    hdr = (uint8_t *)(uintptr_t)netsim_pkt_data(pkt);
    hdrlen = pkt->payload_len;
  }
  if (src == h->last_src) {
    path.peer = h->last_peer;
  } else {
    path.peer = src < t->n_hosts ? peer_of(h, src) : NO_PEER;
    if (path.peer != NO_PEER) {
      h->last_src = src;
      h->last_peer = path.peer;
    }
  }
  path.path = (uint16_t)(pkt->key.sport - t->cfg.sport_base);
  plen = hdrlen + SIMX_ETH_IP_OVERHEAD + 8 <= pkt->size
             ? pkt->size - hdrlen - SIMX_ETH_IP_OVERHEAD - 8
             : SIZE_MAX;
  if (pkt->flags & NETSIM_PKT_BITERR) {
    ++t->cnt.corrupt_rx;
  }
  if (pkt->flags & NETSIM_PKT_DUP) {
    /* Counted only: the engine reads it as the datagram it copies. */
    ++t->cnt.dup_rx;
  }
  if (path.peer != NO_PEER && hdr != NULL && plen <= t->arena_len) {
    /* The payload by length only: the engine accounts for it without
       copying (see the top comment). */
    if (pkt->flags & NETSIM_PKT_BITERR) {
      read_corrupted(h, &path, hdr, hdrlen, plen, pkt->flags);
    } else {
      (void)srd_ep_read_pktv(h->ep, &path, hdr, hdrlen, NULL, plen, now_ns(t));
    }
  }
  if (pkt->flow & SIDE_FLAG) {
    side_put(t, pkt->flow & ~SIDE_FLAG);
  }
  netsim_sim_pkt_free(sim, pkt);
  service(h);
}

static void post_backlog(shost *h) {
  sim_srd *t = h->t;

  while (h->bl_len > 0 && h->n_free > 0) {
    simx_msg *m = h->backlog[h->bl_head];
    uint32_t k = h->free_slots[h->n_free - 1];
    uint32_t peer = peer_of(h, m->dst);
    int rv;

    if (peer == NO_PEER) {
      rv = SRD_ERR_BAD_PEER;
    } else {
      h->slot_msg[k] = m;
      h->slot_mapped[k] = 0;
      rv = srd_ep_post_send(h->ep, peer, t->arena + k, (size_t)m->bytes,
                            (void *)(uintptr_t)k, now_ns(t));
      if (rv == SRD_ERR_AGAIN) {
        h->slot_msg[k] = NULL;
        return;
      }
    }
    h->bl_head = (h->bl_head + 1) % h->bl_cap;
    --h->bl_len;
    if (rv != 0) {
      h->slot_msg[k] = NULL;
      ++t->cnt.send_errors;
      m->status = rv;
      if (t->x.app.sent) {
        t->x.app.sent(t->x.app.user, m, rv);
      }
      continue;
    }
    --h->n_free;
  }
}

static int srd_post(simx *x, simx_msg *m) {
  sim_srd *t = (sim_srd *)x;
  shost *h;

  if (m->src >= t->n_hosts || m->dst >= t->n_hosts || m->src == m->dst ||
      m->bytes == 0 || m->bytes > t->cfg.ep.max_msg_size) {
    return NETSIM_ERR_INVAL;
  }
  h = &t->hosts[m->src];
  if (h->bl_len == h->bl_cap) {
    uint32_t ncap = h->bl_cap ? h->bl_cap * 2 : 64, i;
    simx_msg **nb = malloc((size_t)ncap * sizeof(*nb));
    if (nb == NULL) {
      return NETSIM_ERR_NOMEM;
    }
    for (i = 0; i < h->bl_len; ++i) {
      nb[i] = h->backlog[(h->bl_head + i) % h->bl_cap];
    }
    free(h->backlog);
    h->backlog = nb;
    h->bl_head = 0;
    h->bl_cap = ncap;
  }
  h->backlog[(h->bl_head + h->bl_len) % h->bl_cap] = m;
  ++h->bl_len;
  post_backlog(h);
  service(h);
  return 0;
}

static void srd_counters(simx *x, simx_counters *c) {
  sim_srd *t = (sim_srd *)x;
  uint32_t i;

  *c = t->cnt;
  c->retransmits = c->timeouts = c->fast_recoveries = 0;
  for (i = 0; i < t->n_hosts; ++i) {
    srd_ep_stats st;
    srd_ep_get_stats(t->hosts[i].ep, &st);
    c->retransmits += st.retransmits;
    c->timeouts += st.rto_fired;
    c->fast_recoveries += st.losses_rack;
    c->corrupt_dropped += corrupt_drops(&st);
  }
}

static void host_fini(shost *h) {
  srd_ep_del(h->ep);
  free(h->pm_key);
  free(h->pm_val);
  free(h->peer_host);
  free(h->slot_msg);
  free(h->slot_id);
  free(h->slot_mapped);
  free(h->free_slots);
  free(h->backlog);
}

static void srd_del(simx *x) {
  sim_srd *t = (sim_srd *)x;
  uint32_t i;

  if (t == NULL) {
    return;
  }
  if (t->hosts) {
    for (i = 0; i < t->n_hosts; ++i) {
      if (t->hosts[i].nh) {
        netsim_host_set_rx(t->hosts[i].nh, NULL, NULL);
        netsim_evl_timer_stop(netsim_sim_evl(t->x.sim), &t->hosts[i].tm);
      }
      host_fini(&t->hosts[i]);
    }
  }
  /* Give the simulation back the callbacks it had, if this transport
     took them: one that failed before that leaves them as they are. */
  if (t->hooked) {
    netsim_sim_set_drop_cb(t->x.sim, t->prev_drop, t->prev_drop_user, NULL,
                           NULL);
    netsim_sim_set_dup_cb(t->x.sim, t->prev_dup, t->prev_dup_user, NULL, NULL);
  }
  free(t->hosts);
  free(t->arena);
  free(t->scratch);
  free(t->side);
  free(t->side_free);
  free(t->mt);
  free(t);
}

static const simx_ops srd_ops = {"srd", srd_post, srd_counters, srd_del};

static uint32_t pow2_at_least(uint32_t n) {
  uint32_t p = 1;

  while (p < n) {
    p <<= 1;
  }
  return p;
}

static int host_init(sim_srd *t, shost *h, uint32_t idx, char *err,
                     size_t errlen) {
  srd_settings s = t->cfg.ep;
  uint32_t i, j, cap = pow2_at_least(2 * s.max_peers + 2);
  int rv;

  h->t = t;
  h->idx = idx;
  netsim_timer_init(&h->tm, on_timer, h, 0);
  h->nh = netsim_sim_host(t->x.sim, idx);
  h->nic = netsim_host_nic(h->nh);
  if (h->nic == NULL) {
    if (err) {
      snprintf(err, errlen, "host %u has no NIC (no link attached)", idx);
    }
    return NETSIM_ERR_INVAL;
  }
  netsim_rng_init(&h->rng, t->cfg.seed, NETSIM_STREAM_USER + 1, idx);
  s.seed = netsim_mix64(t->cfg.seed ^
                        netsim_mix64(0x5344000000000000ULL | (uint64_t)idx));
  rv = srd_ep_new(&h->ep, &s, srd_mem_default());
  if (rv != 0) {
    if (err) {
      snprintf(err, errlen, "the SRD engine refused its settings: %s",
               srd_strerror(rv));
    }
    return rv == SRD_ERR_NOMEM ? NETSIM_ERR_NOMEM : NETSIM_ERR_INVAL;
  }
  h->pm_key = calloc(cap, sizeof(uint32_t));
  h->pm_val = calloc(cap, sizeof(uint32_t));
  h->pm_mask = cap - 1;
  h->peer_host = malloc(s.max_peers * sizeof(uint32_t));
  h->slot_msg = calloc(t->max_sends, sizeof(simx_msg *));
  h->slot_id = calloc(t->max_sends, sizeof(uint32_t));
  h->slot_mapped = calloc(t->max_sends, 1);
  h->free_slots = malloc(t->max_sends * sizeof(uint32_t));
  if (!h->pm_key || !h->pm_val || !h->peer_host || !h->slot_msg ||
      !h->slot_id || !h->slot_mapped || !h->free_slots) {
    return NETSIM_ERR_NOMEM;
  }
  for (i = 0; i < s.max_peers; ++i) {
    h->peer_host[i] = NO_PEER;
  }
  h->last_src = NO_PEER;
  for (i = t->max_sends, j = 0; i-- > 0;) {
    h->free_slots[j++] = i;
  }
  h->n_free = t->max_sends;
  for (i = 0; i < t->cfg.recv_depth; ++i) {
    rv = srd_ep_post_recv(h->ep, t->scratch, s.max_msg_size, NULL, 0);
    if (rv != 0) {
      if (err) {
        snprintf(err, errlen, "host %u: posting receive %u of %u failed: %s",
                 idx, i + 1, t->cfg.recv_depth, srd_strerror(rv));
      }
      return NETSIM_ERR_INVAL;
    }
  }
  {
    netsim_link_info li;
    netsim_link_get_info(h->nic, &li);
    h->nic_rate = li.rate_bps;
    h->nic_half = netsim_time_tx(t->cfg.nic_limit_bytes / 2, h->nic_rate);
  }
  netsim_host_set_rx(h->nh, on_rx, h);
  return 0;
}

int sim_srd_new(simx **px, netsim_sim *sim, const sim_srd_cfg *c,
                const simx_app *app, char *err, size_t errlen) {
  sim_srd *t;
  uint32_t i;
  int rv;

  if (c->ep.mtu < 256) {
    if (err) {
      snprintf(err, errlen, "mtu must be >= 256");
    }
    return NETSIM_ERR_INVAL;
  }
  t = calloc(1, sizeof(*t));
  if (t == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  t->x.ops = &srd_ops;
  t->x.sim = sim;
  t->x.app = *app;
  t->cfg = *c;
  /* Whatever the caller left at 0 gets a size that suits a host with a
     few peers (the runner sizes them from the workload). */
  if (t->cfg.ep.max_peers == 0) {
    t->cfg.ep.max_peers = 8;
  }
  if (t->cfg.ep.max_sends == 0) {
    t->cfg.ep.max_sends = 64;
  }
  if (t->cfg.recv_depth == 0) {
    t->cfg.recv_depth = 32;
  }
  if (t->cfg.ep.msg_window == 0) {
    t->cfg.ep.msg_window = 64;
  }
  if (t->cfg.ep.pkt_window == 0) {
    t->cfg.ep.pkt_window = 128;
  }
  t->pool = netsim_sim_pool(sim);
  t->n_hosts = netsim_sim_n_hosts(sim);
  /* Send slots double as payload offsets, so there are fewer than an
     MTU of them. */
  t->max_sends = t->cfg.ep.max_sends;
  if (t->max_sends >= t->cfg.ep.mtu) {
    t->max_sends = t->cfg.ep.mtu - 1;
  }
  t->cfg.ep.max_sends = t->max_sends;
  if (t->cfg.ep.max_recvs < t->cfg.recv_depth ||
      t->cfg.ep.max_recvs > t->cfg.recv_depth) {
    t->cfg.ep.max_recvs = t->cfg.recv_depth;
  }
  if (t->cfg.nic_limit_bytes == 0) {
    t->cfg.nic_limit_bytes = 4 * (t->cfg.ep.mtu + 128);
  }
  {
    /* The pool's payload buffers hold headers; how large are they? */
    netsim_pkt *p;
    uint8_t *b;
    t->payload_max = 0;
    if (netsim_sim_pkt_alloc(sim, &p) == 0) {
      uint32_t lo = 0, hi = 4096;
      /* netsim_pkt_payload refuses lengths above payload_max. */
      while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (netsim_pkt_payload(t->pool, p, mid, &b) == 0) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      t->payload_max = lo;
      netsim_sim_pkt_free(sim, p);
    }
  }
  t->arena_len = (size_t)t->cfg.ep.max_msg_size + t->max_sends;
  t->arena = calloc(1, t->arena_len);
  t->scratch = malloc(t->cfg.ep.max_msg_size);
  t->mt = calloc(1024, sizeof(ment));
  t->mt_mask = 1023;
  t->hosts = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(shost));
  if (!t->arena || !t->scratch || !t->mt || !t->hosts) {
    srd_del(&t->x);
    return NETSIM_ERR_NOMEM;
  }
  for (i = 0; i < t->n_hosts; ++i) {
    rv = host_init(t, &t->hosts[i], i, err, errlen);
    if (rv != 0) {
      srd_del(&t->x);
      return rv;
    }
  }
  netsim_sim_set_drop_cb(sim, on_drop, t, &t->prev_drop, &t->prev_drop_user);
  netsim_sim_set_dup_cb(sim, on_dup, t, &t->prev_dup, &t->prev_dup_user);
  t->hooked = 1;
  *px = &t->x;
  return 0;
}

srd_ep *sim_srd_ep(simx *x, uint32_t idx) {
  sim_srd *t = (sim_srd *)x;

  return idx < t->n_hosts ? t->hosts[idx].ep : NULL;
}

uint32_t sim_srd_peer(simx *x, uint32_t idx, uint32_t other) {
  sim_srd *t = (sim_srd *)x;

  return idx < t->n_hosts ? pm_find(&t->hosts[idx], other) : NO_PEER;
}

int64_t sim_srd_side_held(simx *x) {
  sim_srd *t = (sim_srd *)x;

  return (int64_t)t->side_cap - (int64_t)t->n_side;
}
