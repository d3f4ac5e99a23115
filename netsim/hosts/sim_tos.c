/*
 * sim_tos.c: TCP over SRD (see sim_tos.h): the TCP model's packets as
 * messages of the SRD engine, through sim_tcp's lower-layer hooks and
 * sim_srd's message interface.  No TCP or SRD logic lives here.
 *
 * Each TCP packet becomes a tmsg: an SRD message (simx_msg, as the runner
 * would post one) that holds the packet.  The SRD layer reports the
 * message readable at the receiving host (in order: ordered delivery),
 * and the packet goes up to TCP there; it reports it sent at the sender
 * (acknowledged), which frees a place in the host's device queue.  A tmsg
 * is freed once both happened (or at a failed send, whose message never
 * reaches the receiver: sim_srd forgets it).
 */
#include "sim_tos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IPv4's header stays in the message; only Ethernet's framing goes. */
#define TOS_IP_HDR 20u
#define TOS_SLAB 256u

typedef struct tmsg {
  /* m is the SRD message (first: the callbacks' pointer is the tmsg's). */
  simx_msg m;
  /* p is the TCP packet it carries until delivered (NULL after). */
  netsim_pkt *p;
  netsim_time t_sent;
  uint8_t rx_done;
  uint8_t tx_done;
  struct tmsg *next;
} tmsg;

/* An arrival waiting to go up to TCP. */
typedef struct tpend {
  uint32_t host;
  netsim_pkt *p; /* NULL: a wake-up of |host| */
} tpend;

typedef struct sim_tos {
  simx x;
  sim_tos_cfg cfg;
  simx *tcp;
  simx *srd;
  uint32_t n_hosts;
  uint32_t queue;
  /* Per host: messages unacknowledged by SRD, and whether TCP was told
     the host is busy (it waits for a wake-up). */
  uint32_t *outstanding;
  uint8_t *blocked;
  /* tmsg storage: slabs and a free list. */
  tmsg **slabs;
  uint32_t n_slabs, cap_slabs;
  tmsg *free_list;
  /* The FIFO of deferred arrivals and wake-ups (a ring). */
  tpend *q;
  uint32_t q_head, q_len, q_cap;
  netsim_timer tm;
  /* in_send: inside TCP's lower send (TCP is running); delivering:
     emptying the FIFO. */
  int in_send;
  int delivering;
} sim_tos;

static const simx_ops tos_ops;

void sim_tos_cfg_default(sim_tos_cfg *c) {
  memset(c, 0, sizeof(*c));
  sim_tcp_cfg_default(&c->tcp);
  sim_srd_cfg_default(&c->srd);
  c->tcp.mss = 8192 - TOS_IP_HDR - 32;
  c->srd.peer.ordered = 1;
  c->queue = 0;
}

static netsim_time now_of(const sim_tos *t) {
  return netsim_sim_now(t->x.sim);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

static tmsg *tmsg_get(sim_tos *t) {
  tmsg *w;

  if (t->free_list == NULL) {
    uint32_t i;
    tmsg *slab;
    if (t->n_slabs == t->cap_slabs) {
      uint32_t ncap = t->cap_slabs ? t->cap_slabs * 2 : 16;
      tmsg **n = realloc(t->slabs, (size_t)ncap * sizeof(*n));
      if (n == NULL) {
        return NULL;
      }
      t->slabs = n;
      t->cap_slabs = ncap;
    }
    slab = calloc(TOS_SLAB, sizeof(*slab));
    if (slab == NULL) {
      return NULL;
    }
    t->slabs[t->n_slabs++] = slab;
    for (i = TOS_SLAB; i-- > 0;) {
      slab[i].next = t->free_list;
      t->free_list = &slab[i];
    }
  }
  w = t->free_list;
  t->free_list = w->next;
  memset(w, 0, sizeof(*w));
  return w;
}

static void tmsg_put(sim_tos *t, tmsg *w) {
  if (w->p) {
    netsim_sim_pkt_free(t->x.sim, w->p);
    w->p = NULL;
  }
  w->next = t->free_list;
  t->free_list = w;
}

/* ------------------------------------------------------------------------ */
/* Up to TCP                                                                */

static int q_push(sim_tos *t, uint32_t host, netsim_pkt *p) {
  if (t->q_len == t->q_cap) {
    uint32_t ncap = t->q_cap ? t->q_cap * 2 : 64, i;
    tpend *n = malloc((size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return NETSIM_ERR_NOMEM;
    }
    for (i = 0; i < t->q_len; ++i) {
      n[i] = t->q[(t->q_head + i) % t->q_cap];
    }
    free(t->q);
    t->q = n;
    t->q_head = 0;
    t->q_cap = ncap;
  }
  t->q[(t->q_head + t->q_len) % t->q_cap].host = host;
  t->q[(t->q_head + t->q_len) % t->q_cap].p = p;
  ++t->q_len;
  return 0;
}

/* deliver empties the FIFO into TCP, in order (what TCP sends meanwhile
   may add to it: the loop takes that too). */
static void deliver(sim_tos *t) {
  if (t->delivering) {
    return;
  }
  t->delivering = 1;
  while (t->q_len > 0) {
    tpend e = t->q[t->q_head];
    t->q_head = (t->q_head + 1) % t->q_cap;
    --t->q_len;
    if (e.p) {
      sim_tcp_input(t->tcp, e.host, e.p);
    } else {
      sim_tcp_wake(t->tcp, e.host);
    }
  }
  t->delivering = 0;
}

/* up hands |p| (NULL: a wake-up) to TCP at |host| now, or after what TCP
   is doing when it is running (see "Deferral" in sim_tos.h). */
static void up(sim_tos *t, uint32_t host, netsim_pkt *p) {
  if (q_push(t, host, p) != 0) {
    if (p) {
      netsim_sim_pkt_free(t->x.sim, p); /* lost: TCP repairs it */
    }
    return;
  }
  if (t->in_send || t->delivering) {
    if (!t->delivering && !netsim_timer_pending(&t->tm)) {
      netsim_evl_timer_set(netsim_sim_evl(t->x.sim), &t->tm, now_of(t));
    }
    return;
  }
  deliver(t);
}

static void on_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  (void)evl;
  (void)tm;
  (void)arg;
  deliver(ctx);
}

/* The SRD layer's reports. */

static void on_readable(void *user, simx_msg *m) {
  sim_tos *t = user;
  tmsg *w = (tmsg *)(void *)m;
  netsim_pkt *p = w->p;

  if (w->rx_done || p == NULL) {
    return; /* a second delivery: TCP gets each packet once */
  }
  w->rx_done = 1;
  w->p = NULL;
  /* The timestamp TCP's receiver echoes is when TCP sent it. */
  p->t_sent = w->t_sent;
  up(t, m->dst, p);
  if (w->tx_done) {
    tmsg_put(t, w);
  }
}

static void on_sent(void *user, simx_msg *m, int status) {
  sim_tos *t = user;
  tmsg *w = (tmsg *)(void *)m;
  uint32_t h = m->src;

  w->tx_done = 1;
  if (t->outstanding[h] > 0) {
    --t->outstanding[h];
  }
  if (t->blocked[h] && t->outstanding[h] < t->queue) {
    t->blocked[h] = 0;
    up(t, h, NULL);
  }
  if (w->rx_done || status != 0) {
    tmsg_put(t, w);
  }
}

/* ------------------------------------------------------------------------ */
/* Down from TCP                                                            */

static void lower_send(void *user, uint32_t host, netsim_pkt *p) {
  sim_tos *t = user;
  tmsg *w = tmsg_get(t);
  uint32_t dst = p->key.dst - NETSIM_ADDR_BASE;

  if (w == NULL || dst >= t->n_hosts ||
      p->size <= SIMX_ETH_IP_OVERHEAD - TOS_IP_HDR) {
    if (w) {
      tmsg_put(t, w);
    }
    netsim_sim_pkt_free(t->x.sim, p); /* lost: TCP repairs it */
    return;
  }
  w->p = p;
  w->t_sent = now_of(t);
  w->m.src = host;
  w->m.dst = dst;
  w->m.bytes = p->size - (SIMX_ETH_IP_OVERHEAD - TOS_IP_HDR);
  w->m.t_post = w->t_sent;
  w->m.t_arrive = w->m.t_read = w->m.t_sent = NETSIM_TIME_NONE;
  ++t->outstanding[host];
  ++t->in_send;
  if (simx_post(t->srd, &w->m) != 0) {
    --t->outstanding[host];
    w->tx_done = 1;
    tmsg_put(t, w);
  }
  --t->in_send;
}

static int lower_busy(void *user, uint32_t host) {
  sim_tos *t = user;

  if (t->outstanding[host] >= t->queue) {
    t->blocked[host] = 1;
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The instance                                                             */

static int tos_post(simx *x, simx_msg *m) {
  return simx_post(((sim_tos *)x)->tcp, m);
}

static void tos_counters(simx *x, simx_counters *c) {
  sim_tos *t = (sim_tos *)x;
  simx_counters s;

  simx_counters_get(t->tcp, c);
  simx_counters_get(t->srd, &s);
  /* What the network did to packets is the SRD layer's to meet. */
  c->local_drops += s.local_drops;
  c->corrupt_rx = s.corrupt_rx;
  c->corrupt_in_hdr = s.corrupt_in_hdr;
  c->corrupt_dropped = s.corrupt_dropped;
  c->corrupt_other = s.corrupt_other;
  c->corrupt_accepted = s.corrupt_accepted;
  c->dup_rx = s.dup_rx;
  c->unmatched = s.unmatched;
  c->recv_errors += s.recv_errors;
  c->bytes_sent = s.bytes_sent;
}

static void tos_del(simx *x) {
  sim_tos *t = (sim_tos *)x;
  uint32_t i;

  if (t == NULL) {
    return;
  }
  netsim_evl_timer_stop(netsim_sim_evl(t->x.sim), &t->tm);
  simx_del(t->srd);
  simx_del(t->tcp);
  for (i = 0; i < t->q_len; ++i) {
    netsim_pkt *p = t->q[(t->q_head + i) % t->q_cap].p;
    if (p) {
      netsim_sim_pkt_free(t->x.sim, p);
    }
  }
  for (i = 0; i < t->n_slabs; ++i) {
    uint32_t j;
    for (j = 0; j < TOS_SLAB; ++j) {
      if (t->slabs[i][j].p) {
        netsim_sim_pkt_free(t->x.sim, t->slabs[i][j].p);
      }
    }
    free(t->slabs[i]);
  }
  free(t->slabs);
  free(t->q);
  free(t->outstanding);
  free(t->blocked);
  free(t);
}

static const simx_ops tos_ops = {"tcp-over-srd", tos_post, tos_counters,
                                 tos_del};

/* prefix_err puts |layer| before the message a layer's constructor left
   in |err|. */
static void prefix_err(char *err, size_t errlen, const char *layer) {
  char why[256];

  if (err == NULL || errlen == 0) {
    return;
  }
  snprintf(why, sizeof(why), "%s", err);
  snprintf(err, errlen, "%s: %s", layer, why);
}

int sim_tos_new(simx **px, netsim_sim *sim, const sim_tos_cfg *c,
                const simx_app *app, char *err, size_t errlen) {
  sim_tos *t;
  simx_app down;
  sim_tcp_lower low;
  sim_srd_cfg sc;
  int rv;

  t = calloc(1, sizeof(*t));
  if (t == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  t->x.ops = &tos_ops;
  t->x.sim = sim;
  t->x.app = *app;
  t->cfg = *c;
  t->n_hosts = netsim_sim_n_hosts(sim);
  t->outstanding = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(uint32_t));
  t->blocked = calloc(t->n_hosts ? t->n_hosts : 1, 1);
  netsim_timer_init(&t->tm, on_timer, t, 0);
  if (t->outstanding == NULL || t->blocked == NULL) {
    tos_del(&t->x);
    return NETSIM_ERR_NOMEM;
  }
  if (err && errlen) {
    err[0] = '\0';
  }
  /* TCP first: the SRD layer then takes the hosts' receive callbacks. */
  rv = sim_tcp_new(&t->tcp, sim, &c->tcp, app, err, errlen);
  if (rv != 0) {
    prefix_err(err, errlen, "TCP");
    tos_del(&t->x);
    return rv;
  }
  sc = c->srd;
  sc.peer.ordered = 1;
  sc.ep.max_msg_size = c->tcp.mss + 64;
  if (sc.ep.max_sends < 64) {
    sc.ep.max_sends = 64;
  }
  if (sc.recv_depth < 512) {
    sc.recv_depth = 512;
  }
  if (sc.ep.msg_window < 256) {
    sc.ep.msg_window = 256;
  }
  if (sc.ep.unexp_msgs < 256) {
    sc.ep.unexp_msgs = 256;
  }
  if (sc.ep.unexp_bytes < 256 * sc.ep.max_msg_size) {
    sc.ep.unexp_bytes = 256 * sc.ep.max_msg_size;
  }
  t->queue = c->queue ? c->queue : sc.ep.max_sends;
  memset(&down, 0, sizeof(down));
  down.user = t;
  down.readable = on_readable;
  down.sent = on_sent;
  rv = sim_srd_new(&t->srd, sim, &sc, &down, err, errlen);
  if (rv != 0) {
    prefix_err(err, errlen, "SRD");
    tos_del(&t->x);
    return rv;
  }
  memset(&low, 0, sizeof(low));
  low.user = t;
  low.send = lower_send;
  low.busy = lower_busy;
  sim_tcp_set_lower(t->tcp, &low);
  *px = &t->x;
  return 0;
}

void sim_tos_srd_counters(simx *x, simx_counters *c) {
  simx_counters_get(((sim_tos *)x)->srd, c);
}

simx *sim_tos_tcp(simx *x) {
  return ((sim_tos *)x)->tcp;
}

simx *sim_tos_srd(simx *x) {
  return ((sim_tos *)x)->srd;
}
