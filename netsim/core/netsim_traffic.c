/*
 * netsim_traffic.c: built-in traffic sources, so that the core can be
 * tested and benchmarked without a transport.
 *
 * A constant-bit-rate flow sends one packet every pkt_bytes at rate_bps;
 * its n-th departure is start + tx(n * pkt_bytes), computed from cumulative
 * bytes so it never drifts.  A window flow is a closed loop: it keeps
 * |window| packets outstanding, sending one more whenever one is delivered
 * (after |ack_delay|, 0 meaning at once, an ideal feedback path that costs
 * no event) or |retry| after one is dropped.  Neither is a transport: they
 * retransmit nothing and exist to load the fabric.
 *
 * The generator owns the receive callback of its destination hosts and
 * recognises its packets by flow id and 5-tuple; packets it does not know
 * are freed (at a destination) or passed to the previous drop callback.
 */
#include <netsim/netsim.h>

#include <string.h>

#include "netsim_evl.h"
#include "netsim_host.h"
#include "netsim_sim.h"

typedef struct flow {
  /* tr is the owning generator. */
  netsim_traffic *tr;
  /* s is the flow's settings. */
  netsim_flow_settings s;
  /* src is the sending host. */
  netsim_host *src;
  /* key is the 5-tuple every packet carries. */
  netsim_flowkey key;
  /* tm fires at the start, then for each CBR departure, or for retries
     of a window flow. */
  netsim_timer tm;
  /* started is set once the start time has passed. */
  int started;
  /* slots counts CBR departure times used (sent or skipped). */
  uint64_t slots;
  /* retry_pending counts window slots waiting for |tm|. */
  uint32_t retry_pending;
  /* st is the flow's counters. */
  netsim_flow_stats st;
} flow;

struct netsim_traffic {
  /* sim is the simulation the flows run in. */
  netsim_sim *sim;
  /* flows holds |n| of |cap| flows (fixed: timers point into it). */
  flow *flows;
  uint32_t n, cap;
  /* prev_cb and prev_user: the drop callback this one chains to. */
  netsim_drop_cb prev_cb;
  void *prev_user;
};

static void flow_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                       uint64_t arg);
static void ack_fire(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg);

void netsim_flow_settings_default(netsim_flow_settings *s) {
  memset(s, 0, sizeof(*s));
  s->proto = 17;
  s->sport = 1024;
  s->dport = 9000;
  s->pkt_bytes = 1500;
  s->window = 16;
  s->retry = 10 * NETSIM_US;
}

static flow *own_flow(netsim_traffic *tr, const netsim_pkt *p) {
  flow *f;

  if (p->flow >= tr->n) {
    return NULL;
  }
  f = &tr->flows[p->flow];
  if (p->key.src != f->key.src || p->key.dst != f->key.dst ||
      p->key.sport != f->key.sport || p->key.dport != f->key.dport ||
      p->key.proto != f->key.proto) {
    return NULL;
  }
  return f;
}

static void arm_retry(netsim_sim *sim, flow *f) {
  ++f->retry_pending;
  if (!netsim_timer_pending(&f->tm)) {
    netsim_evl_timer_set(sim->evl, &f->tm, sim->evl->now + f->s.retry);
  }
}

/* send_one sends the flow's next packet if it may.  Returns 1 if sent (or
   dropped at the NIC), 0 if the flow is done, NETSIM_ERR_POOL if the pool
   was empty. */
static int send_one(netsim_sim *sim, flow *f) {
  netsim_time now = sim->evl->now;
  netsim_pkt *p;

  if ((f->s.max_pkts && f->st.sent >= f->s.max_pkts) ||
      (f->s.stop && now >= f->s.stop)) {
    return 0;
  }
  if (netsim_pkt_alloc(sim->pool, &p) != 0) {
    ++f->st.no_pkt;
    return NETSIM_ERR_POOL;
  }
  p->key = f->key;
  p->flags = f->s.ect ? NETSIM_PKT_ECT : 0;
  p->size = f->s.pkt_bytes;
  p->flow = (uint32_t)(f - f->tr->flows);
  p->tag = f->st.sent;
  ++f->st.sent;
  f->st.sent_bytes += f->s.pkt_bytes;
  netsim_host_send(sim, f->src, p);
  return 1;
}

/* window_send sends |n| packets of a window flow; slots the pool could not
   fill wait for a retry. */
static void window_send(netsim_sim *sim, flow *f, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (send_one(sim, f) < 0) {
      arm_retry(sim, f);
    }
  }
}

static void flow_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                       uint64_t arg) {
  flow *f = ctx;
  netsim_sim *sim = f->tr->sim;

  (void)arg;
  if (f->s.rate_bps) {
    f->started = 1;
    if (send_one(sim, f) == 0) {
      return;
    }
    ++f->slots;
    netsim_evl_timer_set(
        evl, tm,
        f->s.start + netsim_time_tx(f->slots * f->s.pkt_bytes, f->s.rate_bps));
    return;
  }
  if (!f->started) {
    f->started = 1;
    window_send(sim, f, f->s.window);
    return;
  }
  {
    uint32_t n = f->retry_pending;
    f->retry_pending = 0;
    window_send(sim, f, n);
  }
}

static void ack_fire(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  flow *f = ctx;

  (void)evl;
  (void)tm;
  (void)arg;
  window_send(f->tr->sim, f, 1);
}

static void flow_rx(netsim_sim *sim, netsim_host *host, netsim_pkt *p,
                    void *user) {
  netsim_traffic *tr = user;
  netsim_time now = sim->evl->now;
  flow *f = own_flow(tr, p);

  (void)host;
  if (f == NULL) {
    netsim_pkt_free(sim->pool, p);
    return;
  }
  if (p->flags & NETSIM_PKT_DUP) {
    /* A duplicating link's copy: the window already took its credit
       from the original. */
    ++f->st.dup_rx;
    netsim_pkt_free(sim->pool, p);
    return;
  }
  if (f->st.delivered == 0) {
    f->st.first_rx = now;
  }
  ++f->st.delivered;
  f->st.delivered_bytes += p->size;
  f->st.last_rx = now;
  f->st.latency_sum += now - p->t_sent;
  if (p->flags & NETSIM_PKT_CE) {
    ++f->st.ecn_marked;
  }
  netsim_pkt_free(sim->pool, p);
  if (f->s.window) {
    if (f->s.ack_delay == 0) {
      window_send(sim, f, 1);
    } else if (netsim_evl_schedule(sim->evl, now + f->s.ack_delay, ack_fire, f,
                                   0, NULL) != 0) {
      arm_retry(sim, f);
    }
  }
}

static void flow_drop(netsim_sim *sim, const netsim_pkt *p,
                      netsim_drop_reason why, netsim_link *link, void *user) {
  netsim_traffic *tr = user;
  flow *f = own_flow(tr, p);

  if (f == NULL) {
    if (tr->prev_cb) {
      tr->prev_cb(sim, p, why, link, tr->prev_user);
    }
    return;
  }
  if (p->flags & NETSIM_PKT_DUP) {
    return; /* a copy: its original is counted */
  }
  ++f->st.dropped;
  if (f->s.window) {
    arm_retry(sim, f);
  }
}

int netsim_traffic_new(netsim_traffic **ptr, netsim_sim *sim,
                       uint32_t max_flows) {
  const netsim_mem *mem = &sim->mem;
  netsim_traffic *tr;
  int rv;

  if (max_flows == 0) {
    return NETSIM_ERR_INVAL;
  }
  tr = mem->calloc(1, sizeof(*tr), mem->user_data);
  if (tr == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  tr->flows = mem->calloc(max_flows, sizeof(*tr->flows), mem->user_data);
  if (tr->flows == NULL) {
    mem->free(tr, mem->user_data);
    return NETSIM_ERR_NOMEM;
  }
  /* One timer per flow: reserve the heap slots now. */
  rv = netsim_evl_reserve(sim->evl, sim->evl->cap + max_flows);
  if (rv != 0) {
    mem->free(tr->flows, mem->user_data);
    mem->free(tr, mem->user_data);
    return rv;
  }
  tr->sim = sim;
  tr->cap = max_flows;
  netsim_sim_set_drop_cb(sim, flow_drop, tr, &tr->prev_cb, &tr->prev_user);
  *ptr = tr;
  return 0;
}

void netsim_traffic_del(netsim_traffic *tr) {
  netsim_sim *sim;
  netsim_evl *evl;
  uint32_t i;

  if (tr == NULL) {
    return;
  }
  sim = tr->sim;
  evl = sim->evl;
  for (i = 0; i < tr->n; ++i) {
    flow *f = &tr->flows[i];
    netsim_host *dst = sim->hosts[f->s.dst];
    netsim_evl_timer_stop(evl, &f->tm);
    if (dst->rx_cb == flow_rx && dst->rx_user == tr) {
      netsim_host_set_rx(dst, NULL, NULL);
    }
  }
  /* Delayed window feedback still pending points into the flows. */
  for (i = 0; i < evl->pool_n; ++i) {
    netsim_timer *tm = &evl->pool[i];
    if (netsim_timer_pending(tm) && tm->cb == ack_fire &&
        (flow *)tm->ctx >= tr->flows && (flow *)tm->ctx < tr->flows + tr->n) {
      netsim_evl_cancel(evl, ((uint64_t)tm->pool_gen << 32) | (i + 1));
    }
  }
  if (sim->drop_cb == flow_drop && sim->drop_user == tr) {
    netsim_sim_set_drop_cb(sim, tr->prev_cb, tr->prev_user, NULL, NULL);
  }
  sim->mem.free(tr->flows, sim->mem.user_data);
  sim->mem.free(tr, sim->mem.user_data);
}

int netsim_traffic_add_flow(netsim_traffic *tr, const netsim_flow_settings *s,
                            uint32_t *pid) {
  netsim_sim *sim = tr->sim;
  netsim_host *src, *dst;
  flow *f;
  int rv;

  if (s->src >= sim->n_hosts || s->dst >= sim->n_hosts || s->pkt_bytes == 0 ||
      (s->rate_bps == 0) == (s->window == 0) || s->rate_bps > NETSIM_RATE_MAX) {
    return NETSIM_ERR_INVAL;
  }
  if (tr->n == tr->cap) {
    return NETSIM_ERR_POOL;
  }
  src = sim->hosts[s->src];
  dst = sim->hosts[s->dst];
  f = &tr->flows[tr->n];
  memset(f, 0, sizeof(*f));
  f->tr = tr;
  f->s = *s;
  f->src = src;
  f->key.src = src->addr;
  f->key.dst = dst->addr;
  f->key.sport = s->sport;
  f->key.dport = s->dport;
  f->key.proto = s->proto;
  netsim_timer_init(&f->tm, flow_timer, f, 0);
  rv = netsim_evl_timer_set(
      sim->evl, &f->tm, s->start > sim->evl->now ? s->start : sim->evl->now);
  if (rv != 0) {
    return rv;
  }
  if (f->s.start < sim->evl->now) {
    f->s.start = sim->evl->now;
  }
  netsim_host_set_rx(dst, flow_rx, tr);
  if (pid) {
    *pid = tr->n;
  }
  ++tr->n;
  return 0;
}

int netsim_traffic_permutation(netsim_traffic *tr,
                               const netsim_flow_settings *tmpl,
                               uint64_t stream) {
  netsim_sim *sim = tr->sim;
  const netsim_mem *mem = &sim->mem;
  uint32_t n = sim->n_hosts, i, *perm;
  netsim_rng rng;
  int rv = 0;

  if (n < 2) {
    return NETSIM_ERR_INVAL;
  }
  if (tr->cap - tr->n < n) {
    return NETSIM_ERR_POOL;
  }
  perm = mem->malloc(sizeof(*perm) * n, mem->user_data);
  if (perm == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  /* Sattolo's shuffle: a uniformly random single cycle, hence a
     derangement (no host sends to itself). */
  for (i = 0; i < n; ++i) {
    perm[i] = i;
  }
  netsim_rng_init(&rng, sim->set.seed, NETSIM_STREAM_TRAFFIC, stream);
  for (i = n - 1; i > 0; --i) {
    uint32_t j = netsim_rng_below(&rng, i), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (i = 0; i < n && rv == 0; ++i) {
    netsim_flow_settings s = *tmpl;
    s.src = i;
    s.dst = perm[i];
    s.sport = (uint16_t)(1024 + i);
    rv = netsim_traffic_add_flow(tr, &s, NULL);
  }
  mem->free(perm, mem->user_data);
  return rv;
}

uint32_t netsim_traffic_n_flows(const netsim_traffic *tr) {
  return tr->n;
}

int netsim_traffic_flow_stats(const netsim_traffic *tr, uint32_t id,
                              netsim_flow_stats *st) {
  if (id >= tr->n) {
    return NETSIM_ERR_NOENT;
  }
  *st = tr->flows[id].st;
  return 0;
}

uint32_t netsim_traffic_flow_dst(const netsim_traffic *tr, uint32_t id) {
  return id < tr->n ? tr->flows[id].s.dst : UINT32_MAX;
}
