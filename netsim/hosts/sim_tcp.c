/*
 * sim_tcp.c: the TCP model (see sim_tcp.h for what it models).
 *
 * One tconn holds both ends of a connection: the sender's state at host
 * |src| and the receiver's at host |dst|; they talk only through packets
 * netsim carries.  Data flows src -> dst, ACKs back.  Each packet carries
 * a tcp_hdr in a pool payload buffer; its wire size is the segment's
 * payload plus TCP/IP/Ethernet headers.
 *
 * Names follow the kernel's where the model follows the kernel: snd_una,
 * snd_nxt, rcv_nxt, sacked_out, lost_out, retrans_out, packets in flight
 * = outstanding - (sacked + lost) + retransmitted (tcp_packets_in_flight),
 * ca_state Open / CWR / Recovery / Loss, high_seq.
 */
#include "sim_tcp.h"

#include "sim_cubic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Header flags. */
#define F_SYN 0x01u
#define F_ACK 0x02u
#define F_ECE 0x04u
#define F_DSACK 0x08u
#define F_PSH 0x10u

#define MAX_SACK 3
/* TCP header with the timestamp option; a SYN carries more options. */
#define TCP_HDR_BYTES 32u
#define TCP_SYN_BYTES 40u

typedef struct tcp_hdr {
  uint64_t seq;
  uint64_t ack;
  uint64_t sack[MAX_SACK][2];
  netsim_time tsecr; /* the echoed send time + 1; 0: none */
  uint64_t ce_bytes;
  uint32_t len;
  uint32_t conn;
  uint8_t flags;
  uint8_t n_sack;
} tcp_hdr;

enum { CA_OPEN, CA_CWR, CA_RECOVERY, CA_LOSS };
enum { ST_CLOSED, ST_SYN_SENT, ST_EST };
enum { TM_NONE, TM_RTO, TM_PTO, TM_REO };

/* One segment of the sender's scoreboard. */
typedef struct tseg {
  uint64_t seq;
  netsim_time t_sent;
  uint32_t len;
  uint8_t sacked;
  uint8_t lost;
  uint8_t retrans;      /* a retransmission is outstanding */
  uint8_t ever_retrans; /* sent more than once */
  uint8_t psh;          /* ends the data written so far (tcp_mark_push) */
} tseg;

typedef struct sim_tcp sim_tcp;
typedef struct thost thost;

typedef struct tconn {
  sim_tcp *t;
  uint32_t id;
  uint32_t src, dst, key_conn;
  netsim_flowkey key;
  int state;
  int rcv_open;
  /* The application's stream: bytes written and the messages in it. */
  uint64_t written;
  simx_msg **mq;
  uint32_t mq_head, mq_len, mq_cap;
  uint32_t rd_idx;  /* messages before this are readable */
  uint32_t ack_idx; /* messages before this are acknowledged */
  /* Sender. */
  uint64_t snd_una, snd_nxt;
  tseg *sb;
  uint32_t sb_head, sb_len, sb_cap;
  uint64_t sb_base; /* absolute number of sb[sb_head] */
  uint64_t rtx_hint;
  uint32_t cwnd, ssthresh, cwnd_cnt, cwnd_clamp;
  uint32_t sacked_out, lost_out, retrans_out, lost_pending;
  uint32_t lost_events; /* segments marked lost, lost retransmissions too */
  int ca_state;
  uint64_t high_seq;
  uint32_t prior_cwnd, prr_delivered, prr_out;
  int cwnd_limited;
  uint32_t dupacks;
  netsim_time srtt, rttvar, rto, min_rtt;
  netsim_time max_rtt; /* the largest sample, for sim_tcp_conn_get */
  int have_rtt;
  uint32_t backoff;
  netsim_time rack_xmit;
  uint64_t rack_end;
  netsim_time rack_rtt;
  int rack_valid;
  uint64_t tlp_high_seq;
  int tlp_retrans;
  netsim_timer tm;
  int tm_mode;
  /* CUBIC; lsndtime is the latest data segment's send time. */
  sim_cubic cubic;
  netsim_time lsndtime;
  /* ECN and DCTCP. */
  double alpha;
  uint64_t dc_acked, dc_ce, dc_next_seq;
  uint64_t cwr_seq;
  uint64_t retransmits, timeouts;
  /* The host's ready line. */
  struct tconn *rnext, *rprev;
  int in_ready;
  /* Receiver. */
  uint64_t rcv_nxt;
  uint64_t (*ooo)[2];
  uint32_t n_ooo, cap_ooo;
  uint64_t last_s, last_e; /* the latest new segment, for SACK order */
  uint32_t delack_pending; /* new segments not yet acknowledged */
  uint32_t segs_rcvd;
  /* Delayed ACK as Linux's icsk_ack: rcv_wup is rcv_nxt as the latest
     ACK sent it, rcv_mss the largest segment seen (tcp_measure_rcv_mss),
     quick the ACKs still sent at once (icsk_ack.quick), last_rx the
     latest in-order data's arrival (tcp_event_data_recv's idle test;
     0: none yet). */
  uint64_t rcv_wup;
  uint32_t rcv_mss;
  uint32_t quick;
  int pushed; /* ICSK_ACK_PUSHED: a pushed or short segment unacknowledged */
  netsim_time last_rx;
  netsim_time ts_echo;
  uint64_t ce_pending;
  int dsack_pending;
  netsim_timer delack_tm;
} tconn;

struct thost {
  sim_tcp *t;
  netsim_host *nh;
  netsim_link *nic;
  uint64_t nic_rate;
  uint32_t idx;
  tconn *rhead, *rtail;
  netsim_timer tm;
  int pumping;
};

/* A deferred report to the application. */
typedef struct tev {
  int kind; /* 0 arrived, 1 readable, 2 sent, 3 progress */
  simx_msg *m;
  uint32_t flow;
  uint64_t bytes;
} tev;

struct sim_tcp {
  simx x;
  sim_tcp_cfg cfg;
  netsim_pktpool *pool;
  uint32_t n_hosts;
  thost *hosts;
  tconn **conns;
  uint32_t n_conns, cap_conns;
  /* (src, dst, conn) -> connection. */
  uint64_t *cm_key;
  tconn **cm_val;
  uint32_t cm_mask, cm_len;
  tev *evq;
  uint32_t evq_len, evq_cap;
  int draining;
  int depth;
  simx_counters cnt;
  /* lower: the layer that carries the segments instead of the NIC
     (sim_tcp_set_lower; send NULL: the NIC). */
  sim_tcp_lower lower;
};

static const simx_ops tcp_ops;

void sim_tcp_cfg_default(sim_tcp_cfg *c) {
  memset(c, 0, sizeof(*c));
  c->seed = 1;
  c->mss = 8948;
  c->init_cwnd = 10;
  c->rwnd = 6u << 20;
  c->rto_min = 200 * NETSIM_MS;
  c->rto_initial = 1 * NETSIM_S;
  c->rto_max = 120 * NETSIM_S;
  c->timer_slack = 2 * NETSIM_MS;
  c->cc = SIM_TCP_CC_CUBIC;
  c->ecn = 0;
  c->dctcp_g = 1.0 / 16.0;
  c->sack = 1;
  c->rack = 1;
  c->tlp = 1;
  c->dupthresh = 3;
  c->delayed_ack = 1;
  c->delack = 40 * NETSIM_MS;
  c->quickack = 16;
  c->handshake = 1;
  c->dport = 5001;
  c->nic_limit_bytes = 0;
}

/* ------------------------------------------------------------------------ */
/* Deferred reports: the application hears of events once the model is
   done with the packet or timer (it may post new messages in reply). */

static void emit(sim_tcp *t, int kind, simx_msg *m, uint32_t flow,
                 uint64_t bytes) {
  if (t->evq_len == t->evq_cap) {
    uint32_t ncap = t->evq_cap ? t->evq_cap * 2 : 64;
    tev *n = realloc(t->evq, (size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return; /* a lost report; counted below */
    }
    t->evq = n;
    t->evq_cap = ncap;
  }
  t->evq[t->evq_len].kind = kind;
  t->evq[t->evq_len].m = m;
  t->evq[t->evq_len].flow = flow;
  t->evq[t->evq_len].bytes = bytes;
  ++t->evq_len;
}

static void drain(sim_tcp *t) {
  uint32_t i;

  if (t->draining) {
    return;
  }
  t->draining = 1;
  for (i = 0; i < t->evq_len; ++i) {
    tev e = t->evq[i];
    const simx_app *a = &t->x.app;
    switch (e.kind) {
    case 0:
      if (a->arrived) {
        a->arrived(a->user, e.m);
      }
      break;
    case 1:
      if (a->readable) {
        a->readable(a->user, e.m);
      }
      break;
    case 2:
      if (a->sent) {
        a->sent(a->user, e.m, 0);
      }
      break;
    default:
      if (a->progress) {
        a->progress(a->user, e.flow, e.bytes);
      }
      break;
    }
  }
  t->evq_len = 0;
  t->draining = 0;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static netsim_time now_of(const sim_tcp *t) {
  return netsim_sim_now(t->x.sim);
}

static tseg *seg_at(tconn *c, uint32_t i) {
  return &c->sb[(c->sb_head + i) & (c->sb_cap - 1)];
}

static uint32_t in_flight(const tconn *c) {
  return c->sb_len - (c->sacked_out + c->lost_out) + c->retrans_out;
}

static simx_msg *mq_at(tconn *c, uint32_t i) {
  return c->mq[(c->mq_head + i) % c->mq_cap];
}

static int sb_push(tconn *c, uint64_t seq, uint32_t len) {
  tseg *s;

  if (c->sb_len == c->sb_cap) {
    uint32_t ncap = c->sb_cap ? c->sb_cap * 2 : 16, i;
    tseg *n = malloc((size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return NETSIM_ERR_NOMEM;
    }
    for (i = 0; i < c->sb_len; ++i) {
      n[i] = *seg_at(c, i);
    }
    free(c->sb);
    c->sb = n;
    c->sb_head = 0;
    c->sb_cap = ncap;
  }
  s = seg_at(c, c->sb_len++);
  memset(s, 0, sizeof(*s));
  s->seq = seq;
  s->len = len;
  s->psh = seq + len == c->written;
  return 0;
}

/* seg_index returns the index of the first segment ending after |seq|. */
static uint32_t seg_index(tconn *c, uint64_t seq) {
  uint32_t lo = 0, hi = c->sb_len;

  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    tseg *s = seg_at(c, mid);
    if (s->seq + s->len <= seq) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */

static netsim_pkt *new_pkt(sim_tcp *t, tcp_hdr **ph) {
  netsim_pkt *p;
  uint8_t *buf;

  if (netsim_sim_pkt_alloc(t->x.sim, &p) != 0) {
    ++t->cnt.local_drops;
    return NULL;
  }
  if (netsim_pkt_payload(t->pool, p, sizeof(tcp_hdr), &buf) != 0) {
    netsim_sim_pkt_free(t->x.sim, p);
    ++t->cnt.local_drops;
    return NULL;
  }
  *ph = (tcp_hdr *)(void *)buf;
  memset(*ph, 0, sizeof(tcp_hdr));
  return p;
}

static void send_from(sim_tcp *t, uint32_t host, netsim_pkt *p) {
  t->cnt.bytes_sent += p->size;
  if (t->lower.send) {
    t->lower.send(t->lower.user, host, p);
    return;
  }
  netsim_host_send(t->x.sim, t->hosts[host].nh, p);
}

static void reverse_key(const netsim_flowkey *k, netsim_flowkey *r) {
  r->src = k->dst;
  r->dst = k->src;
  r->sport = k->dport;
  r->dport = k->sport;
  r->proto = k->proto;
}

static void send_syn(tconn *c) {
  sim_tcp *t = c->t;
  tcp_hdr *h;
  netsim_pkt *p = new_pkt(t, &h);

  if (p == NULL) {
    return;
  }
  h->flags = F_SYN;
  h->conn = c->id;
  p->key = c->key;
  p->flow = c->id;
  p->size = SIMX_ETH_IP_OVERHEAD + TCP_SYN_BYTES;
  ++t->cnt.ctrl_pkts;
  send_from(t, c->src, p);
}

/* send_seg transmits segment |i| of the scoreboard (new or again). */
static void send_seg(tconn *c, uint32_t i) {
  sim_tcp *t = c->t;
  tseg *s = seg_at(c, i);
  tcp_hdr *h;
  netsim_pkt *p = new_pkt(t, &h);

  s->t_sent = now_of(t);
  c->lsndtime = s->t_sent;
  ++t->cnt.data_pkts;
  if (p == NULL) {
    return; /* lost at the sender: recovered like any loss */
  }
  h->seq = s->seq;
  h->len = s->len;
  h->flags = s->psh ? F_PSH : 0;
  h->conn = c->id;
  p->key = c->key;
  p->flow = c->id;
  p->flags = t->cfg.ecn ? NETSIM_PKT_ECT : 0;
  p->size = SIMX_ETH_IP_OVERHEAD + TCP_HDR_BYTES + s->len;
  send_from(t, c->src, p);
}

static void send_ack(tconn *c) {
  sim_tcp *t = c->t;
  tcp_hdr *h;
  netsim_pkt *p;
  uint32_t n = 0, i;

  netsim_evl_timer_stop(netsim_sim_evl(t->x.sim), &c->delack_tm);
  c->delack_pending = 0;
  c->rcv_wup = c->rcv_nxt;
  c->pushed = 0;
  if (c->quick > 0) {
    --c->quick; /* tcp_event_ack_sent's tcp_dec_quickack_mode */
  }
  p = new_pkt(t, &h);
  if (p == NULL) {
    return;
  }
  h->flags = F_ACK;
  h->ack = c->rcv_nxt;
  h->conn = c->id;
  h->tsecr = c->ts_echo;
  if (c->ce_pending) {
    h->flags |= F_ECE;
    h->ce_bytes = c->ce_pending;
    c->ce_pending = 0;
  }
  if (c->dsack_pending) {
    h->flags |= F_DSACK;
    c->dsack_pending = 0;
  }
  if (t->cfg.sack && c->n_ooo > 0) {
    /* The block holding the latest segment first (RFC 2018), then the
       highest others. */
    for (i = 0; i < c->n_ooo; ++i) {
      if (c->ooo[i][0] <= c->last_s && c->last_e <= c->ooo[i][1]) {
        h->sack[n][0] = c->ooo[i][0];
        h->sack[n][1] = c->ooo[i][1];
        ++n;
        break;
      }
    }
    for (i = c->n_ooo; i-- > 0 && n < MAX_SACK;) {
      if (n > 0 && h->sack[0][0] == c->ooo[i][0]) {
        continue;
      }
      h->sack[n][0] = c->ooo[i][0];
      h->sack[n][1] = c->ooo[i][1];
      ++n;
    }
  }
  h->n_sack = (uint8_t)n;
  reverse_key(&c->key, &p->key);
  p->flow = c->id;
  p->size = SIMX_ETH_IP_OVERHEAD + TCP_HDR_BYTES + (n ? 2 + 8 * n + 2 : 0);
  ++t->cnt.ctrl_pkts;
  send_from(t, c->dst, p);
}

/* ------------------------------------------------------------------------ */
/* Timers                                                                   */

static void set_timer(tconn *c, int mode, netsim_time at) {
  netsim_evl *evl = netsim_sim_evl(c->t->x.sim);

  c->tm_mode = mode;
  if (mode == TM_NONE) {
    netsim_evl_timer_stop(evl, &c->tm);
  } else {
    netsim_evl_timer_set(evl, &c->tm, at);
  }
}

static netsim_time rto_value(const tconn *c) {
  const sim_tcp_cfg *cf = &c->t->cfg;
  netsim_time r;

  if (!c->have_rtt) {
    r = cf->rto_initial;
  } else {
    netsim_time var = 4 * c->rttvar;
    r = c->srtt + (var > cf->rto_min ? var : cf->rto_min);
  }
  return r < cf->rto_max ? r : cf->rto_max;
}

static netsim_time backed_off_rto(const tconn *c) {
  netsim_time r = c->rto;
  uint32_t i;

  for (i = 0; i < c->backoff && r < c->t->cfg.rto_max; ++i) {
    r *= 2;
  }
  return r < c->t->cfg.rto_max ? r : c->t->cfg.rto_max;
}

/* probe_allowed says whether a tail loss probe may be scheduled
   (tcp_schedule_loss_probe: SACK, an RTT sample, Open or CWR; the model
   also keeps one probe outstanding at a time, which Linux enforces when
   the probe timer fires). */
static int probe_allowed(const tconn *c) {
  const sim_tcp_cfg *cf = &c->t->cfg;

  return cf->tlp && cf->sack && c->state == ST_EST && c->have_rtt &&
         c->sb_len > 0 && (c->ca_state == CA_OPEN || c->ca_state == CA_CWR) &&
         c->tlp_high_seq == 0;
}

/* probe_timeout is the probe's delay: 2 srtt, plus rto_min with one
   segment outstanding (for the peer's delayed ACK) or the timer slack,
   never later than |rto_left|, when the RTO would fire.  The probe then
   goes at the RTO's time, as a probe: Linux's timer stays
   ICSK_TIME_LOSS_PROBE. */
static netsim_time probe_timeout(const tconn *c, netsim_time rto_left) {
  const sim_tcp_cfg *cf = &c->t->cfg;
  netsim_time pto =
      2 * c->srtt + (c->sb_len == 1 ? cf->rto_min : cf->timer_slack);

  return pto < rto_left ? pto : rto_left;
}

/* arm_rto arms the retransmission timer from now, or the tail loss probe
   when it may be sent (tcp_set_xmit_timer on an ACK: tcp_schedule_loss_probe
   with the RTO counted from now, else tcp_rearm_rto). */
static void arm_rto(tconn *c) {
  sim_tcp *t = c->t;
  netsim_time now = now_of(t), rto = backed_off_rto(c);

  if (c->sb_len == 0 && c->state == ST_EST) {
    set_timer(c, TM_NONE, 0);
    return;
  }
  if (probe_allowed(c)) {
    set_timer(c, TM_PTO, now + probe_timeout(c, rto));
    return;
  }
  set_timer(c, TM_RTO, now + rto);
}

/* probe_after_send reschedules the probe after new data went out in Open
   (tcp_write_xmit's tcp_schedule_loss_probe: the timer becomes the probe,
   due 2 srtt after the newest segment and never after the RTO, which runs
   from the oldest outstanding segment's transmission, tcp_rto_delta_us).
   A pending reorder timer is left alone. */
static void probe_after_send(tconn *c) {
  netsim_time now = now_of(c->t), due, left;

  if (!probe_allowed(c) ||
      (c->tm_mode == TM_REO && netsim_timer_pending(&c->tm))) {
    return;
  }
  due = seg_at(c, 0)->t_sent + backed_off_rto(c);
  left = due > now ? due - now : 1;
  set_timer(c, TM_PTO, now + probe_timeout(c, left));
}

/* ------------------------------------------------------------------------ */
/* The host's transmit line                                                 */

static void ready_add(tconn *c) {
  thost *h = &c->t->hosts[c->src];

  if (c->in_ready) {
    return;
  }
  c->in_ready = 1;
  c->rnext = NULL;
  c->rprev = h->rtail;
  if (h->rtail) {
    h->rtail->rnext = c;
  } else {
    h->rhead = c;
  }
  h->rtail = c;
}

static void ready_del(tconn *c) {
  thost *h = &c->t->hosts[c->src];

  if (!c->in_ready) {
    return;
  }
  if (c->rprev) {
    c->rprev->rnext = c->rnext;
  } else {
    h->rhead = c->rnext;
  }
  if (c->rnext) {
    c->rnext->rprev = c->rprev;
  } else {
    h->rtail = c->rprev;
  }
  c->in_ready = 0;
  c->rnext = c->rprev = NULL;
}

/* find_lost returns the index of the first segment marked lost and not
   retransmitted, or UINT32_MAX. */
static uint32_t find_lost(tconn *c) {
  uint32_t i;

  if (c->lost_pending == 0) {
    return UINT32_MAX;
  }
  i = c->rtx_hint > c->sb_base ? (uint32_t)(c->rtx_hint - c->sb_base) : 0;
  for (; i < c->sb_len; ++i) {
    tseg *s = seg_at(c, i);
    if (s->lost && !s->retrans && !s->sacked) {
      c->rtx_hint = c->sb_base + i;
      return i;
    }
  }
  c->rtx_hint = c->sb_base + c->sb_len;
  return UINT32_MAX;
}

/* try_send sends one segment of |c| if the window allows; returns 1 if it
   did. */
static int try_send(tconn *c) {
  sim_tcp *t = c->t;
  uint32_t i;

  if (c->state != ST_EST) {
    return 0;
  }
  if (in_flight(c) >= c->cwnd) {
    if (c->lost_pending || c->snd_nxt < c->written) {
      c->cwnd_limited = 1;
    }
    return 0;
  }
  i = find_lost(c);
  if (t->cfg.cc == SIM_TCP_CC_CUBIC && in_flight(c) == 0 &&
      (i != UINT32_MAX || c->snd_nxt < c->written)) {
    /* CA_EVENT_TX_START: the first data after an idle period. */
    sim_cubic_tx_start(&c->cubic, now_of(t), c->lsndtime);
  }
  if (i != UINT32_MAX) {
    tseg *s = seg_at(c, i);
    s->retrans = 1;
    s->ever_retrans = 1;
    ++c->retrans_out;
    --c->lost_pending;
    ++c->retransmits;
    ++t->cnt.retransmits;
    if (c->ca_state == CA_RECOVERY) {
      ++c->prr_out;
    }
    send_seg(c, i);
  } else if (c->snd_nxt < c->written && c->snd_nxt - c->snd_una < t->cfg.rwnd) {
    uint64_t len = c->written - c->snd_nxt;
    uint64_t room = t->cfg.rwnd - (c->snd_nxt - c->snd_una);
    if (len > t->cfg.mss) {
      len = t->cfg.mss;
    }
    if (len > room) {
      len = room;
    }
    if (sb_push(c, c->snd_nxt, (uint32_t)len) != 0) {
      return 0;
    }
    c->snd_nxt += len;
    if (c->ca_state == CA_RECOVERY) {
      ++c->prr_out;
    }
    send_seg(c, c->sb_len - 1);
    if (netsim_timer_pending(&c->tm)) {
      probe_after_send(c);
    }
  } else {
    return 0;
  }
  if (!netsim_timer_pending(&c->tm)) {
    arm_rto(c);
  }
  return 1;
}

static void pump(thost *h);

static void on_host_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                          uint64_t arg) {
  (void)evl;
  (void)tm;
  (void)arg;
  pump(ctx);
  drain(((thost *)ctx)->t);
}

/* pump hands segments of the ready connections, in turn, to the NIC
   while it has room. */
static void pump(thost *h) {
  sim_tcp *t = h->t;

  if (h->pumping) {
    return;
  }
  h->pumping = 1;
  while (h->rhead) {
    tconn *c = h->rhead;
    if (t->lower.busy && t->lower.busy(t->lower.user, h->idx)) {
      break; /* the lower layer calls sim_tcp_wake when it has room */
    }
    if (!t->lower.send &&
        netsim_link_queue_bytes(h->nic) >= t->cfg.nic_limit_bytes) {
      netsim_time free_at = netsim_host_tx_free_at(h->nh);
      netsim_time half =
          netsim_time_tx(t->cfg.nic_limit_bytes / 2, h->nic_rate);
      netsim_time at = free_at > half ? free_at - half : 0;
      if (at <= now_of(t)) {
        at = now_of(t) + 1;
      }
      netsim_evl_timer_set(netsim_sim_evl(t->x.sim), &h->tm, at);
      break;
    }
    ready_del(c);
    if (try_send(c)) {
      ready_add(c);
    }
  }
  h->pumping = 0;
}

static void kick(tconn *c) {
  ready_add(c);
  pump(&c->t->hosts[c->src]);
}

/* ------------------------------------------------------------------------ */
/* Congestion control                                                       */

/* ssthresh_on_loss is the congestion controller's threshold after a loss
   (icsk_ca_ops->ssthresh): Reno and DCTCP halve (tcp_reno_ssthresh),
   CUBIC keeps 717/1024 and remembers W_max. */
static uint32_t ssthresh_on_loss(tconn *c) {
  uint32_t s = c->cwnd / 2;

  if (c->t->cfg.cc == SIM_TCP_CC_CUBIC) {
    return sim_cubic_ssthresh(&c->cubic, c->cwnd ? c->cwnd : 1);
  }
  return s > 2 ? s : 2;
}

static void enter_recovery(tconn *c) {
  c->prior_cwnd = c->cwnd;
  c->ssthresh = ssthresh_on_loss(c);
  c->prr_delivered = 0;
  c->prr_out = 0;
  c->high_seq = c->snd_nxt;
  c->ca_state = CA_RECOVERY;
  c->cwnd_cnt = 0;
  ++c->t->cnt.fast_recoveries;
}

/* prr sets cwnd during recovery from what was delivered (RFC 6937,
   PRR-SSRB, as tcp_cwnd_reduction): |newly_delivered| segments ACKed or
   SACKed by this ACK (none: nothing changes), |newly_lost| segments it
   marked lost, |una_advanced| it moved snd_una.  Above ssthresh the
   sending follows ssthresh / prior_cwnd of what is delivered; at or below
   it, what is delivered (slow start back to ssthresh), plus one only for
   an ACK that moved snd_una and found no new loss; a fast retransmit
   always goes out. */
static void prr(tconn *c, uint32_t newly_delivered, uint32_t newly_lost,
                int una_advanced) {
  uint32_t pipe = in_flight(c);
  int64_t sndcnt;

  if (newly_delivered == 0) {
    return;
  }
  c->prr_delivered += newly_delivered;
  if (pipe > c->ssthresh) {
    uint64_t dividend = (uint64_t)c->ssthresh * c->prr_delivered +
                        (c->prior_cwnd ? c->prior_cwnd - 1 : 0);
    sndcnt = (int64_t)(dividend / (c->prior_cwnd ? c->prior_cwnd : 1)) -
             (int64_t)c->prr_out;
  } else {
    int64_t a = (int64_t)c->prr_delivered - (int64_t)c->prr_out;
    int64_t b = (int64_t)newly_delivered;
    int64_t lim = (int64_t)c->ssthresh - (int64_t)pipe;
    sndcnt = a > b ? a : b;
    if (una_advanced && newly_lost == 0) {
      ++sndcnt;
    }
    if (sndcnt > lim) {
      sndcnt = lim;
    }
  }
  if (sndcnt < 1 && c->prr_out == 0) {
    sndcnt = 1;
  }
  if (sndcnt < 0) {
    sndcnt = 0;
  }
  c->cwnd = pipe + (uint32_t)sndcnt;
  if (c->cwnd < 1) {
    c->cwnd = 1;
  }
}

/* cong_avoid grows the window for |acked| segments ACKed: slow start to
   ssthresh (tcp_slow_start), then one segment per w ACKed
   (tcp_cong_avoid_ai), w the window for Reno and DCTCP
   (tcp_reno_cong_avoid) and CUBIC's count for CUBIC
   (cubictcp_cong_avoid). */
static void cong_avoid(tconn *c, uint32_t acked, uint32_t prior_in_flight) {
  uint32_t w;

  if (!c->cwnd_limited &&
      !(c->cwnd < c->ssthresh && c->cwnd < 2 * prior_in_flight)) {
    return;
  }
  if (c->cwnd < c->ssthresh) {
    uint32_t room = c->ssthresh - c->cwnd;
    uint32_t inc = acked < room ? acked : room;
    c->cwnd += inc;
    acked -= inc;
    if (acked == 0) {
      goto clamp;
    }
  }
  w = c->cwnd;
  if (c->t->cfg.cc == SIM_TCP_CC_CUBIC) {
    w = sim_cubic_update(&c->cubic, c->cwnd, acked, now_of(c->t));
  }
  sim_cubic_ai(&c->cwnd, &c->cwnd_cnt, w, acked, c->cwnd_clamp);
  return;
clamp:
  if (c->cwnd > c->cwnd_clamp) {
    c->cwnd = c->cwnd_clamp;
  }
}

/* ecn_react handles an ACK echoing |ce| marked bytes of |acked| (DCTCP's
   alpha per window; a cut once per window). */
static void ecn_react(tconn *c, uint64_t acked, uint64_t ce) {
  const sim_tcp_cfg *cf = &c->t->cfg;

  if (cf->cc == SIM_TCP_CC_DCTCP) {
    c->dc_acked += acked;
    c->dc_ce += ce;
    if (c->snd_una >= c->dc_next_seq) {
      double f = c->dc_acked ? (double)c->dc_ce / (double)c->dc_acked : 0.0;
      c->alpha = c->alpha * (1.0 - cf->dctcp_g) + cf->dctcp_g * f;
      c->dc_acked = c->dc_ce = 0;
      c->dc_next_seq = c->snd_nxt;
    }
  }
  if (ce == 0 || c->ca_state != CA_OPEN || c->snd_una < c->cwr_seq) {
    return;
  }
  if (cf->cc == SIM_TCP_CC_DCTCP) {
    uint32_t cut = (uint32_t)((double)c->cwnd * c->alpha / 2.0);
    c->ssthresh = c->cwnd - cut > 2 ? c->cwnd - cut : 2;
  } else {
    c->ssthresh = ssthresh_on_loss(c);
  }
  c->cwnd = c->ssthresh;
  c->cwnd_cnt = 0;
  c->cwr_seq = c->snd_nxt;
}

/* ------------------------------------------------------------------------ */
/* Loss detection                                                           */

static void mark_lost(tconn *c, tseg *s) {
  if (s->sacked) {
    return;
  }
  if (s->lost) {
    if (s->retrans) {
      /* A lost retransmission: send it again. */
      ++c->lost_events;
      s->retrans = 0;
      --c->retrans_out;
      ++c->lost_pending;
    }
    return;
  }
  s->lost = 1;
  ++c->lost_out;
  ++c->lost_events; /* tp->lost counts both kinds */
  if (s->retrans) {
    s->retrans = 0;
    --c->retrans_out;
  }
  ++c->lost_pending;
  c->rtx_hint = c->sb_base; /* rescan from the start */
}

static void rack_update(tconn *c, const tseg *s, netsim_time now) {
  netsim_time rtt = now - s->t_sent;

  if (s->ever_retrans && c->have_rtt && rtt < c->min_rtt) {
    return; /* an ACK for the original, most likely */
  }
  if (!c->rack_valid || s->t_sent > c->rack_xmit ||
      (s->t_sent == c->rack_xmit && s->seq + s->len > c->rack_end)) {
    c->rack_xmit = s->t_sent;
    c->rack_end = s->seq + s->len;
    c->rack_rtt = rtt;
    c->rack_valid = 1;
  }
}

static netsim_time rack_reo_wnd(const tconn *c) {
  netsim_time w;

  /* No reordering was ever seen on a FIFO path: in recovery, or once
     DupThresh segments are SACKed, the window is 0 (tcp_rack_reo_wnd). */
  if (c->ca_state == CA_RECOVERY || c->ca_state == CA_LOSS ||
      c->sacked_out >= c->t->cfg.dupthresh) {
    return 0;
  }
  w = c->min_rtt / 4;
  return w < c->srtt ? w : c->srtt;
}

/* rack_detect marks lost what RACK can; returns the time until the next
   segment would be (NETSIM_TIME_NONE if none waits). */
static netsim_time rack_detect(tconn *c, netsim_time now) {
  netsim_time reo = rack_reo_wnd(c), wait = NETSIM_TIME_NONE;
  uint32_t i;

  if (!c->rack_valid) {
    return NETSIM_TIME_NONE;
  }
  for (i = 0; i < c->sb_len; ++i) {
    tseg *s = seg_at(c, i);
    netsim_time deadline;
    if (s->sacked || (s->lost && !s->retrans)) {
      continue;
    }
    if (!(s->t_sent < c->rack_xmit ||
          (s->t_sent == c->rack_xmit && s->seq + s->len < c->rack_end))) {
      continue;
    }
    deadline = s->t_sent + c->rack_rtt + reo;
    if (deadline <= now) {
      mark_lost(c, s);
    } else if (deadline - now < wait) {
      wait = deadline - now;
    }
  }
  return wait;
}

/* dupthresh_detect: RFC 6675 IsLost, a segment with DupThresh SACKed
   segments above it is lost. */
static void dupthresh_detect(tconn *c) {
  uint32_t above = 0, i;

  if (c->sacked_out < c->t->cfg.dupthresh) {
    return;
  }
  for (i = c->sb_len; i-- > 0;) {
    tseg *s = seg_at(c, i);
    if (s->sacked) {
      ++above;
    } else if (above >= c->t->cfg.dupthresh && !s->lost) {
      mark_lost(c, s);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* The sender: ACKs and timers                                              */

static void rtt_sample(tconn *c, netsim_time rtt) {
  if (rtt == 0) {
    rtt = 1;
  }
  if (rtt > c->max_rtt) {
    c->max_rtt = rtt;
  }
  if (!c->have_rtt) {
    c->srtt = rtt;
    c->rttvar = rtt / 2;
    c->min_rtt = rtt;
    c->have_rtt = 1;
  } else {
    netsim_time d = rtt > c->srtt ? rtt - c->srtt : c->srtt - rtt;
    c->rttvar = (3 * c->rttvar + d) / 4;
    c->srtt = (7 * c->srtt + rtt) / 8;
    if (rtt < c->min_rtt) {
      c->min_rtt = rtt;
    }
  }
  c->rto = rto_value(c);
}

/* pacing_rate is Linux's sk_pacing_rate in bytes per second
   (tcp_update_pacing_rate: 200% of cwnd * mss / srtt in slow start below
   half of ssthresh, else 120%), which HyStart reads; 0 before an RTT. */
static uint64_t pacing_rate(const tconn *c) {
  double ratio = c->cwnd < c->ssthresh / 2 ? 2.0 : 1.2;
  uint32_t w = c->cwnd > c->sb_len ? c->cwnd : c->sb_len;

  if (!c->have_rtt || c->srtt == 0) {
    return 0;
  }
  return (uint64_t)((double)c->t->cfg.mss * w * ratio * (double)NETSIM_S /
                    (double)c->srtt);
}

static void sent_done(tconn *c) {
  while (c->ack_idx < c->mq_len) {
    simx_msg *m = mq_at(c, c->ack_idx);
    if (m->offset + m->bytes > c->snd_una) {
      break;
    }
    m->t_sent = now_of(c->t);
    emit(c->t, 2, m, m->flow, 0);
    ++c->ack_idx;
  }
  while (c->mq_len > 0 && c->rd_idx > 0 && c->ack_idx > 0) {
    c->mq_head = (c->mq_head + 1) % c->mq_cap;
    --c->mq_len;
    --c->rd_idx;
    --c->ack_idx;
  }
}

static void on_ack(tconn *c, const tcp_hdr *h) {
  sim_tcp *t = c->t;
  netsim_time now = now_of(t);
  uint32_t prior_in_flight = in_flight(c);
  uint32_t acked = 0, sacked = 0, i, k;
  uint64_t acked_bytes = 0, prior_una = c->snd_una;
  /* The newest never-retransmitted segment ACKed and SACKed, for the
     congestion controller's RTT sample (tcp_clean_rtx_queue's last_ackt,
     tcp_sacktag_one's last_sackt); a retransmission ACKed voids the
     first. */
  netsim_time last_ackt = NETSIM_TIME_NONE, last_sackt = NETSIM_TIME_NONE;
  int rtx_acked = 0;
  uint32_t prior_lost = c->lost_events;
  int dsack_tlp = 0, old;

  if (h->flags & F_SYN) {
    if (c->state == ST_SYN_SENT) {
      c->state = ST_EST;
      c->backoff = 0;
      if (h->tsecr > 0) {
        rtt_sample(c, now - (h->tsecr - 1));
      }
      set_timer(c, TM_NONE, 0);
      kick(c);
    }
    return;
  }
  if (c->state != ST_EST || h->ack > c->snd_nxt) {
    return;
  }
  /* An ACK below snd_una (a late duplicate, or one overtaken) takes
     tcp_ack's old_ack path: its SACK blocks still say what the receiver
     holds, and may mark losses and move recovery on, but it is no RTT
     sample (its timestamp is stale), no duplicate ACK, no ECN echo and no
     reason to touch the timers. */
  old = h->ack < c->snd_una;
  /* Cumulative acknowledgement. */
  while (c->sb_len > 0) {
    tseg *s = seg_at(c, 0);
    if (s->seq + s->len > h->ack) {
      break;
    }
    if (!s->sacked) {
      rack_update(c, s, now);
      ++acked;
      if (s->ever_retrans) {
        rtx_acked = 1;
      } else {
        last_ackt = s->t_sent;
      }
    }
    if (s->sacked) {
      --c->sacked_out;
    }
    if (s->lost) {
      --c->lost_out;
      if (!s->retrans) {
        --c->lost_pending;
      }
    }
    if (s->retrans) {
      --c->retrans_out;
    }
    acked_bytes += s->len;
    c->sb_head = (c->sb_head + 1) & (c->sb_cap - 1);
    --c->sb_len;
    ++c->sb_base;
  }
  if (h->ack > c->snd_una) {
    c->snd_una = h->ack;
  }
  /* SACK blocks. */
  for (k = 0; k < h->n_sack && k < MAX_SACK; ++k) {
    uint64_t bs = h->sack[k][0], be = h->sack[k][1];
    for (i = seg_index(c, bs); i < c->sb_len; ++i) {
      tseg *s = seg_at(c, i);
      if (s->seq >= be) {
        break;
      }
      if (s->seq < bs || s->seq + s->len > be || s->sacked) {
        continue;
      }
      s->sacked = 1;
      ++c->sacked_out;
      ++sacked;
      if (s->lost) {
        s->lost = 0;
        --c->lost_out;
        if (!s->retrans) {
          --c->lost_pending;
        }
      }
      if (s->retrans) {
        s->retrans = 0;
        --c->retrans_out;
      }
      if (!s->ever_retrans &&
          (last_sackt == NETSIM_TIME_NONE || s->t_sent > last_sackt)) {
        last_sackt = s->t_sent;
      }
      rack_update(c, s, now);
    }
  }
  if (old && sacked == 0) {
    return;
  }
  /* An RTT sample from the timestamp echo (RFC 7323), for ACKs of new
     data. */
  if (!old && (acked || sacked) && h->tsecr > 0 && h->tsecr - 1 <= now) {
    rtt_sample(c, now - (h->tsecr - 1));
  }
  if (t->cfg.cc == SIM_TCP_CC_CUBIC && !old) {
    /* cubictcp_acked (with HyStart) sees the ACK before loss recovery
       and window growth do. */
    netsim_time ca_rtt = NETSIM_TIME_NONE;
    if (last_sackt != NETSIM_TIME_NONE) {
      ca_rtt = now - last_sackt;
    } else if (last_ackt != NETSIM_TIME_NONE && !rtx_acked) {
      ca_rtt = now - last_ackt;
    }
    sim_cubic_acked(&c->cubic, ca_rtt, c->cwnd, &c->ssthresh, c->snd_una,
                    c->snd_nxt, pacing_rate(c), now);
  }
  if (acked > 0 && c->snd_una > prior_una) {
    c->backoff = 0;
    c->dupacks = 0;
  } else if (!old && c->sb_len > 0 && (sacked > 0 || !t->cfg.sack)) {
    ++c->dupacks;
  }
  /* The tail loss probe's fate. */
  if (!old && c->tlp_high_seq && c->snd_una >= c->tlp_high_seq) {
    if ((h->flags & F_DSACK) == 0 && c->tlp_retrans && c->ca_state == CA_OPEN) {
      /* The probe repaired a loss: reduce as for one (tcp_process_tlp_ack). */
      c->ssthresh = ssthresh_on_loss(c);
      c->cwnd = c->ssthresh;
    } else {
      dsack_tlp = 1;
    }
    c->tlp_high_seq = 0;
  }
  (void)dsack_tlp;
  /* Loss detection. */
  if (c->state == ST_EST && c->sb_len > 0) {
    if (t->cfg.sack && t->cfg.rack) {
      netsim_time wait = rack_detect(c, now);
      if (wait != NETSIM_TIME_NONE && c->lost_pending == 0) {
        set_timer(c, TM_REO, now + wait + t->cfg.timer_slack);
      }
    } else if (t->cfg.sack) {
      dupthresh_detect(c);
    } else if (c->dupacks == t->cfg.dupthresh ||
               (c->ca_state == CA_RECOVERY && acked > 0 &&
                c->snd_una < c->high_seq)) {
      /* NewReno: the third duplicate ACK, or a partial ACK, loses the
         head. */
      mark_lost(c, seg_at(c, 0));
    }
  }
  /* State changes. */
  if ((c->ca_state == CA_RECOVERY || c->ca_state == CA_LOSS) &&
      c->snd_una >= c->high_seq) {
    if (c->ca_state == CA_RECOVERY) {
      c->cwnd = c->ssthresh; /* tcp_end_cwnd_reduction */
    }
    c->ca_state = CA_OPEN;
  }
  if ((c->ca_state == CA_OPEN || c->ca_state == CA_CWR) && c->lost_out > 0) {
    enter_recovery(c);
  }
  if (c->ca_state == CA_RECOVERY) {
    prr(c, acked + sacked, c->lost_events - prior_lost, c->snd_una > prior_una);
  } else if (c->ca_state == CA_OPEN && acked > 0) {
    cong_avoid(c, acked, prior_in_flight);
  } else if (c->ca_state == CA_LOSS && acked > 0) {
    /* Slow start back up after a timeout. */
    cong_avoid(c, acked, prior_in_flight);
  }
  c->cwnd_limited = 0;
  if (t->cfg.ecn && !old) {
    ecn_react(c, acked_bytes, (h->flags & F_ECE) ? h->ce_bytes : 0);
  }
  /* Timers: re-armed by new data acknowledged (tcp_rearm_rto); stopped
     when nothing is outstanding. */
  if (old) {
    /* Left as they are. */
  } else if (c->sb_len == 0) {
    set_timer(c, TM_NONE, 0);
  } else if (acked > 0 || c->tm_mode == TM_NONE ||
             (c->tm_mode == TM_PTO && (c->ca_state != CA_OPEN))) {
    if (c->tm_mode != TM_REO) {
      arm_rto(c);
    }
  }
  sent_done(c);
  kick(c);
}

static void send_probe(tconn *c) {
  sim_tcp *t = c->t;

  ++t->cnt.probes;
  c->tlp_high_seq = c->snd_nxt;
  if (c->snd_nxt < c->written && c->snd_nxt - c->snd_una < t->cfg.rwnd) {
    /* New data if there is any, whatever the window. */
    uint64_t len = c->written - c->snd_nxt;
    if (len > t->cfg.mss) {
      len = t->cfg.mss;
    }
    if (sb_push(c, c->snd_nxt, (uint32_t)len) == 0) {
      c->snd_nxt += len;
      c->tlp_high_seq = c->snd_nxt;
      c->tlp_retrans = 0;
      send_seg(c, c->sb_len - 1);
    }
  } else if (c->sb_len > 0) {
    /* Else the highest outstanding segment again. */
    uint32_t i = c->sb_len - 1;
    tseg *s = seg_at(c, i);
    if (!s->sacked) {
      s->ever_retrans = 1;
      ++c->retransmits;
      ++t->cnt.retransmits;
      c->tlp_retrans = 1;
      send_seg(c, i);
    }
  }
  set_timer(c, TM_RTO, now_of(t) + backed_off_rto(c));
}

static void on_rto(tconn *c) {
  sim_tcp *t = c->t;
  uint32_t i;

  ++c->timeouts;
  ++t->cnt.timeouts;
  if (c->state == ST_SYN_SENT) {
    ++c->backoff;
    send_syn(c);
    set_timer(c, TM_RTO, now_of(t) + backed_off_rto(c));
    return;
  }
  if (c->sb_len == 0) {
    set_timer(c, TM_NONE, 0);
    return;
  }
  /* tcp_enter_loss: a window of one segment, every segment not SACKed is
     lost, and ssthresh reduced only if it was not already in this window:
     from Open, once the last episode's recovery point is passed, or at
     the first timeout of a Loss episode.  A timeout in fast recovery
     (TCPSackRecoveryFail) keeps the threshold recovery set (the PRR
     window it would otherwise halve again is already cut). */
  if (c->ca_state == CA_OPEN || c->snd_una >= c->high_seq ||
      (c->ca_state == CA_LOSS && c->backoff == 0)) {
    c->ssthresh = ssthresh_on_loss(c);
  }
  if (t->cfg.cc == SIM_TCP_CC_CUBIC) {
    sim_cubic_on_rto(&c->cubic, c->snd_nxt, now_of(t));
  }
  c->cwnd = 1;
  c->cwnd_cnt = 0;
  c->ca_state = CA_LOSS;
  c->high_seq = c->snd_nxt;
  c->dupacks = 0;
  c->tlp_high_seq = 0;
  c->retrans_out = 0;
  c->lost_out = 0;
  c->lost_pending = 0;
  for (i = 0; i < c->sb_len; ++i) {
    tseg *s = seg_at(c, i);
    s->retrans = 0;
    s->lost = 0;
    if (!s->sacked) {
      s->lost = 1;
      ++c->lost_out;
      ++c->lost_pending;
    }
  }
  c->rtx_hint = c->sb_base;
  ++c->backoff;
  set_timer(c, TM_RTO, now_of(t) + backed_off_rto(c));
  kick(c);
}

static void on_conn_timer(netsim_evl *evl, netsim_timer *tm, void *ctx,
                          uint64_t arg) {
  tconn *c = ctx;
  int mode = c->tm_mode;

  (void)evl;
  (void)tm;
  (void)arg;
  c->tm_mode = TM_NONE;
  if (mode == TM_RTO) {
    on_rto(c);
  } else if (mode == TM_PTO) {
    send_probe(c);
  } else if (mode == TM_REO) {
    uint32_t prior_lost = c->lost_events;
    netsim_time wait = rack_detect(c, now_of(c->t));
    if (c->lost_out > 0 && (c->ca_state == CA_OPEN || c->ca_state == CA_CWR)) {
      /* tcp_rack_reo_timeout: the reduction starts as for one segment
         delivered; in recovery already the window is left as it is. */
      enter_recovery(c);
      prr(c, 1, c->lost_events - prior_lost, 0);
    }
    if (wait != NETSIM_TIME_NONE && c->lost_pending == 0) {
      set_timer(c, TM_REO, now_of(c->t) + wait + c->t->cfg.timer_slack);
    } else {
      arm_rto(c);
    }
    kick(c);
  }
  drain(c->t);
}

/* ------------------------------------------------------------------------ */
/* The receiver                                                             */

static void on_delack(netsim_evl *evl, netsim_timer *tm, void *ctx,
                      uint64_t arg) {
  tconn *c = ctx;

  (void)evl;
  (void)tm;
  (void)arg;
  if (c->delack_pending) {
    send_ack(c);
  }
}

/* credit counts the new bytes [s, e) towards the messages they belong
   to. */
static void credit(tconn *c, uint64_t s, uint64_t e) {
  uint32_t lo = 0, hi = c->mq_len;

  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    simx_msg *m = mq_at(c, mid);
    if (m->offset + m->bytes <= s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (; lo < c->mq_len; ++lo) {
    simx_msg *m = mq_at(c, lo);
    uint64_t a, b;
    if (m->offset >= e) {
      break;
    }
    a = s > m->offset ? s : m->offset;
    b = e < m->offset + m->bytes ? e : m->offset + m->bytes;
    m->acc += b - a;
    if (m->acc == m->bytes) {
      m->t_arrive = now_of(c->t);
      emit(c->t, 0, m, m->flow, 0);
    }
  }
}

/* deliver reports what rcv_nxt's advance from |old| made readable. */
static void deliver(tconn *c, uint64_t old) {
  while (c->rd_idx < c->mq_len) {
    simx_msg *m = mq_at(c, c->rd_idx);
    uint64_t end = m->offset + m->bytes;
    uint64_t a = old > m->offset ? old : m->offset;
    uint64_t b = c->rcv_nxt < end ? c->rcv_nxt : end;
    if (m->offset >= c->rcv_nxt) {
      break;
    }
    if (b > a) {
      emit(c->t, 3, m, m->flow, b - a);
    }
    if (end > c->rcv_nxt) {
      break;
    }
    m->t_read = now_of(c->t);
    emit(c->t, 1, m, m->flow, 0);
    ++c->rd_idx;
  }
  while (c->mq_len > 0 && c->rd_idx > 0 && c->ack_idx > 0) {
    c->mq_head = (c->mq_head + 1) % c->mq_cap;
    --c->mq_len;
    --c->rd_idx;
    --c->ack_idx;
  }
}

/* ooo_covered says whether [s, e) is already held out of order. */
static int ooo_covered(const tconn *c, uint64_t s, uint64_t e) {
  uint32_t i;

  for (i = 0; i < c->n_ooo; ++i) {
    if (c->ooo[i][0] <= s && e <= c->ooo[i][1]) {
      return 1;
    }
  }
  return 0;
}

static int ooo_insert(tconn *c, uint64_t s, uint64_t e) {
  uint32_t i, j;

  if (c->n_ooo == c->cap_ooo) {
    uint32_t ncap = c->cap_ooo ? c->cap_ooo * 2 : 8;
    uint64_t(*n)[2] = realloc(c->ooo, (size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return NETSIM_ERR_NOMEM;
    }
    c->ooo = n;
    c->cap_ooo = ncap;
  }
  for (i = 0; i < c->n_ooo && c->ooo[i][0] < s; ++i) {
  }
  memmove(&c->ooo[i + 1], &c->ooo[i], (c->n_ooo - i) * sizeof(c->ooo[0]));
  c->ooo[i][0] = s;
  c->ooo[i][1] = e;
  ++c->n_ooo;
  /* Merge touching neighbours. */
  for (j = 0; j + 1 < c->n_ooo;) {
    if (c->ooo[j][1] >= c->ooo[j + 1][0]) {
      if (c->ooo[j + 1][1] > c->ooo[j][1]) {
        c->ooo[j][1] = c->ooo[j + 1][1];
      }
      memmove(&c->ooo[j + 1], &c->ooo[j + 2],
              (c->n_ooo - j - 2) * sizeof(c->ooo[0]));
      --c->n_ooo;
    } else {
      ++j;
    }
  }
  return 0;
}

/* ack_now is Linux's receiver ACK policy with delayed ACKs on
   (tcp_input.c: tcp_event_data_recv, tcp_measure_rcv_mss,
   tcp_data_queue, __tcp_ack_snd_check; tcp.c: tcp_cleanup_rbuf), for a
   data segment of |len| bytes and |flags| just taken in: |dup| it held
   nothing new, |in_order| it began at rcv_nxt, |had_ooo| the
   out-of-order queue was not empty before it, |read| it made new data
   readable (the application reads it at once).  It says whether the
   ACK goes at once; else the delayed-ACK timer sends it (tcp_output.c
   tcp_send_delayed_ack, here a fixed |delack|). */
static int ack_now(tconn *c, uint32_t len, uint8_t flags, int dup, int in_order,
                   int had_ooo, int read) {
  sim_tcp *t = c->t;
  netsim_time now = now_of(t);

  if (dup) {
    /* A retransmission of data already here (tcp_data_queue's
       out_of_window path): tcp_enter_quickack_mode and an ACK at once
       (it carries the D-SACK). */
    c->quick = t->cfg.quickack;
    return 1;
  }
  /* Quick-ACK mode (tcp_event_data_recv's tcp_incr_quickack,
     TCP_MAX_QUICKACKS 16): at the first in-order data, and again after
     a gap longer than the RTO (the model's receiver has no RTO of its
     own: rto_min stands for it). */
  if (in_order) {
    if (c->last_rx == 0 || now - c->last_rx > t->cfg.rto_min) {
      c->quick = t->cfg.quickack;
    }
    c->last_rx = now;
  }
  /* tcp_measure_rcv_mss: a segment shorter than rcv_mss, or a full one
     with PSH (the end of a write), sets ICSK_ACK_PUSHED. */
  if (len < c->rcv_mss || (flags & F_PSH)) {
    c->pushed = 1;
  }
  if (len > c->rcv_mss) {
    c->rcv_mss = len < t->cfg.mss ? len : t->cfg.mss;
  }
  /* tcp_cleanup_rbuf: the application (here always waiting in a read)
     took new in-order data and the receive queue is empty; with a
     pushed segment pending and no ping-pong mode (no data flows back on
     a model connection) the ACK goes now. */
  if (c->pushed && read && c->n_ooo == 0) {
    return 1;
  }
  return c->quick > 0 ||                       /* tcp_in_quickack_mode */
         c->n_ooo > 0 || !in_order ||          /* a hole: dup ACK + SACK */
         had_ooo ||                            /* the hole filled: ACK_NOW */
         c->rcv_nxt - c->rcv_wup > c->rcv_mss; /* over one rcv_mss unacked */
}

static void on_data(tconn *c, const tcp_hdr *h, const netsim_pkt *p) {
  sim_tcp *t = c->t;
  uint64_t s = h->seq, e = h->seq + h->len, old = c->rcv_nxt;
  int in_order = s == c->rcv_nxt, had_ooo = c->n_ooo > 0, dup, immediate;

  if (h->flags & F_SYN) {
    c->rcv_open = 1;
    /* SYN-ACK, from the receiver's host. */
    {
      tcp_hdr *r;
      netsim_pkt *q = new_pkt(t, &r);
      if (q != NULL) {
        r->flags = F_SYN | F_ACK;
        r->conn = c->id;
        r->tsecr = p->t_sent + 1;
        reverse_key(&c->key, &q->key);
        q->flow = c->id;
        q->size = SIMX_ETH_IP_OVERHEAD + TCP_SYN_BYTES;
        ++t->cnt.ctrl_pkts;
        send_from(t, c->dst, q);
      }
    }
    return;
  }
  if (h->len == 0) {
    return;
  }
  if (t->cfg.ecn && (p->flags & NETSIM_PKT_CE)) {
    c->ce_pending += h->len;
  }
  dup = e <= c->rcv_nxt || ooo_covered(c, s, e);
  if (!dup) {
    if (s <= c->rcv_nxt) {
      c->rcv_nxt = e;
      while (c->n_ooo > 0 && c->ooo[0][0] <= c->rcv_nxt) {
        if (c->ooo[0][1] > c->rcv_nxt) {
          c->rcv_nxt = c->ooo[0][1];
        }
        memmove(&c->ooo[0], &c->ooo[1], (c->n_ooo - 1) * sizeof(c->ooo[0]));
        --c->n_ooo;
      }
    } else {
      (void)ooo_insert(c, s, e);
    }
    c->last_s = s;
    c->last_e = e;
    credit(c, s > old ? s : old, e);
  } else {
    c->dsack_pending = 1;
  }
  ++c->segs_rcvd;
  if (dup) {
    /* The timestamp to echo never moves back (RFC 7323's PAWS: Linux
       discards a segment older than ts_recent with a duplicate ACK that
       echoes ts_recent): a late duplicate's stale timestamp would give
       the sender a false RTT sample.  A spurious retransmission's newer
       one is echoed, as tcp_replace_ts_recent does. */
    if (p->t_sent + 1 > c->ts_echo) {
      c->ts_echo = p->t_sent + 1;
    }
  } else if (c->delack_pending == 0 || !in_order) {
    c->ts_echo = p->t_sent + 1;
  }
  if (c->rcv_nxt > old) {
    deliver(c, old);
  }
  ++c->delack_pending;
  immediate =
      !t->cfg.delayed_ack ||
      ack_now(c, h->len, h->flags, dup, in_order, had_ooo, c->rcv_nxt > old) ||
      (p->flags & NETSIM_PKT_CE);
  if (immediate) {
    send_ack(c);
  } else if (!netsim_timer_pending(&c->delack_tm)) {
    netsim_evl_timer_set(netsim_sim_evl(t->x.sim), &c->delack_tm,
                         now_of(t) + t->cfg.delack);
  }
}

static void on_rx(netsim_sim *sim, netsim_host *nh, netsim_pkt *p, void *user) {
  thost *hh = user;
  sim_tcp *t = hh->t;
  const tcp_hdr *h = (const tcp_hdr *)(const void *)p->payload;

  (void)nh;
  if (p->flags & NETSIM_PKT_DUP) {
    /* A duplicating link's copy: counted, then handled as the packet it
       copies (NETSIM_PKT_DUP is not looked at again). */
    ++t->cnt.dup_rx;
  }
  if (p->flags & NETSIM_PKT_BITERR) {
    /* A bit error anywhere fails the segment's checksum, which the model
       takes to catch every error (a 16-bit sum misses some multi-bit
       errors; see docs/netsim.md): the receiver drops it unread, and
       the sender repairs the loss (SACK, RACK, TLP, RTO). */
    ++t->cnt.corrupt_rx;
    ++t->cnt.corrupt_dropped;
    if (p->flags & NETSIM_PKT_FLIPPED) {
      ++t->cnt.corrupt_in_hdr;
    }
    netsim_sim_pkt_free(sim, p);
    return;
  }
  if (h != NULL && p->payload_len >= sizeof(tcp_hdr) && h->conn < t->n_conns) {
    tconn *c = t->conns[h->conn];
    if (hh->idx == c->src && (h->flags & F_ACK)) {
      on_ack(c, h);
    } else if (hh->idx == c->dst && !(h->flags & F_ACK)) {
      on_data(c, h, p);
    }
  }
  netsim_sim_pkt_free(sim, p);
  drain(t);
}

/* ------------------------------------------------------------------------ */
/* Connections and posting                                                  */

static uint64_t cm_hash(uint64_t k) {
  return netsim_mix64(k);
}

static uint64_t conn_key(uint32_t src, uint32_t dst, uint32_t conn) {
  return ((uint64_t)src << 42) ^ ((uint64_t)dst << 21) ^ conn ^
         0x8000000000000000ULL;
}

static tconn *cm_find(sim_tcp *t, uint64_t k) {
  uint32_t s = (uint32_t)cm_hash(k) & t->cm_mask;

  while (t->cm_key[s]) {
    if (t->cm_key[s] == k) {
      return t->cm_val[s];
    }
    s = (s + 1) & t->cm_mask;
  }
  return NULL;
}

static int cm_put(sim_tcp *t, uint64_t k, tconn *c) {
  uint32_t s;

  if ((t->cm_len + 1) * 2 > t->cm_mask + 1) {
    uint32_t ncap = (t->cm_mask + 1) * 2, i, ocap = t->cm_mask + 1;
    uint64_t *nk = calloc(ncap, sizeof(*nk));
    tconn **nv = calloc(ncap, sizeof(*nv));
    if (nk == NULL || nv == NULL) {
      free(nk);
      free(nv);
      return NETSIM_ERR_NOMEM;
    }
    for (i = 0; i < ocap; ++i) {
      if (t->cm_key[i]) {
        uint32_t j = (uint32_t)cm_hash(t->cm_key[i]) & (ncap - 1);
        while (nk[j]) {
          j = (j + 1) & (ncap - 1);
        }
        nk[j] = t->cm_key[i];
        nv[j] = t->cm_val[i];
      }
    }
    free(t->cm_key);
    free(t->cm_val);
    t->cm_key = nk;
    t->cm_val = nv;
    t->cm_mask = ncap - 1;
  }
  s = (uint32_t)cm_hash(k) & t->cm_mask;
  while (t->cm_key[s]) {
    s = (s + 1) & t->cm_mask;
  }
  t->cm_key[s] = k;
  t->cm_val[s] = c;
  ++t->cm_len;
  return 0;
}

void sim_tcp_flowkey(const sim_tcp_cfg *c, uint32_t src, uint32_t dst,
                     uint32_t conn, netsim_flowkey *key) {
  uint64_t h = netsim_mix64(c->seed ^ netsim_mix64((uint64_t)src << 42 ^
                                                   (uint64_t)dst << 21 ^ conn ^
                                                   0x7463700000000000ULL));

  memset(key, 0, sizeof(*key));
  key->src = NETSIM_ADDR_BASE + src;
  key->dst = NETSIM_ADDR_BASE + dst;
  /* An ephemeral port from Linux's default range, 32768..60999. */
  key->sport = (uint16_t)(32768 + (uint32_t)((h >> 32) * 28232 >> 32));
  key->dport = c->dport;
  key->proto = 6;
}

static tconn *conn_open(sim_tcp *t, uint32_t src, uint32_t dst,
                        uint32_t key_conn) {
  tconn *c;

  if (t->n_conns == t->cap_conns) {
    uint32_t ncap = t->cap_conns ? t->cap_conns * 2 : 64;
    tconn **n = realloc(t->conns, (size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return NULL;
    }
    t->conns = n;
    t->cap_conns = ncap;
  }
  c = calloc(1, sizeof(*c));
  if (c == NULL) {
    return NULL;
  }
  if (cm_put(t, conn_key(src, dst, key_conn), c) != 0) {
    free(c);
    return NULL;
  }
  c->t = t;
  c->id = t->n_conns;
  c->src = src;
  c->dst = dst;
  c->key_conn = key_conn;
  sim_tcp_flowkey(&t->cfg, src, dst, key_conn, &c->key);
  c->cwnd = t->cfg.init_cwnd;
  c->ssthresh = UINT32_MAX / 2;
  c->cwnd_clamp = (uint32_t)(t->cfg.rwnd / t->cfg.mss) + 1;
  c->rto = t->cfg.rto_initial;
  c->alpha = 1.0;
  sim_cubic_init(&c->cubic, 0, now_of(t));
  /* tcp_initialize_rcv_mss: TCP_MSS_DEFAULT until larger segments come. */
  c->rcv_mss = t->cfg.mss < 536 ? t->cfg.mss : 536;
  netsim_timer_init(&c->tm, on_conn_timer, c, 0);
  netsim_timer_init(&c->delack_tm, on_delack, c, 0);
  t->conns[t->n_conns++] = c;
  if (t->cfg.handshake) {
    c->state = ST_SYN_SENT;
    send_syn(c);
    set_timer(c, TM_RTO, now_of(t) + t->cfg.rto_initial);
  } else {
    c->state = ST_EST;
    c->rcv_open = 1;
  }
  return c;
}

static int tcp_post(simx *x, simx_msg *m) {
  sim_tcp *t = (sim_tcp *)x;
  tconn *c;

  if (m->src >= t->n_hosts || m->dst >= t->n_hosts || m->src == m->dst ||
      m->bytes == 0) {
    return NETSIM_ERR_INVAL;
  }
  ++t->depth;
  c = cm_find(t, conn_key(m->src, m->dst, m->conn));
  if (c == NULL && (c = conn_open(t, m->src, m->dst, m->conn)) == NULL) {
    --t->depth;
    return NETSIM_ERR_NOMEM;
  }
  if (c->mq_len == c->mq_cap) {
    uint32_t ncap = c->mq_cap ? c->mq_cap * 2 : 16, i;
    simx_msg **n = malloc((size_t)ncap * sizeof(*n));
    if (n == NULL) {
      --t->depth;
      return NETSIM_ERR_NOMEM;
    }
    for (i = 0; i < c->mq_len; ++i) {
      n[i] = mq_at(c, i);
    }
    free(c->mq);
    c->mq = n;
    c->mq_head = 0;
    c->mq_cap = ncap;
  }
  m->offset = c->written;
  m->acc = 0;
  c->mq[(c->mq_head + c->mq_len) % c->mq_cap] = m;
  ++c->mq_len;
  c->written += m->bytes;
  kick(c);
  --t->depth;
  if (t->depth == 0) {
    drain(t);
  }
  return 0;
}

static void tcp_counters(simx *x, simx_counters *c) {
  *c = ((sim_tcp *)x)->cnt;
}

static void tcp_del(simx *x) {
  sim_tcp *t = (sim_tcp *)x;
  netsim_evl *evl;
  uint32_t i;

  if (t == NULL) {
    return;
  }
  evl = netsim_sim_evl(t->x.sim);
  for (i = 0; i < t->n_conns; ++i) {
    tconn *c = t->conns[i];
    netsim_evl_timer_stop(evl, &c->tm);
    netsim_evl_timer_stop(evl, &c->delack_tm);
    free(c->sb);
    free(c->mq);
    free(c->ooo);
    free(c);
  }
  if (t->hosts) {
    for (i = 0; i < t->n_hosts; ++i) {
      if (t->hosts[i].nh) {
        netsim_host_set_rx(t->hosts[i].nh, NULL, NULL);
        netsim_evl_timer_stop(evl, &t->hosts[i].tm);
      }
    }
  }
  free(t->conns);
  free(t->cm_key);
  free(t->cm_val);
  free(t->hosts);
  free(t->evq);
  free(t);
}

static const simx_ops tcp_ops = {"tcp", tcp_post, tcp_counters, tcp_del};

int sim_tcp_new(simx **px, netsim_sim *sim, const sim_tcp_cfg *c,
                const simx_app *app, char *err, size_t errlen) {
  sim_tcp *t;
  uint32_t i;

  if (c->mss < 64 || c->mss > 65000 || c->init_cwnd < 1 || c->rwnd < c->mss ||
      c->rto_min == 0 || c->rto_initial == 0 || c->rto_max < c->rto_min ||
      c->dupthresh < 1 || c->dctcp_g <= 0 || c->dctcp_g > 1) {
    if (err) {
      snprintf(err, errlen,
               "TCP settings out of range (mss 64..65000, init_cwnd >= 1, "
               "rwnd >= mss, rto_min > 0, rto_max >= rto_min, dupthresh "
               ">= 1, 0 < dctcp_g <= 1)");
    }
    return NETSIM_ERR_INVAL;
  }
  t = calloc(1, sizeof(*t));
  if (t == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  t->x.ops = &tcp_ops;
  t->x.sim = sim;
  t->x.app = *app;
  t->cfg = *c;
  if (t->cfg.cc == SIM_TCP_CC_DCTCP) {
    t->cfg.ecn = 1;
  }
  if (t->cfg.nic_limit_bytes == 0) {
    t->cfg.nic_limit_bytes = 4 * (t->cfg.mss + 128);
  }
  t->pool = netsim_sim_pool(sim);
  t->n_hosts = netsim_sim_n_hosts(sim);
  t->cm_key = calloc(64, sizeof(uint64_t));
  t->cm_val = calloc(64, sizeof(tconn *));
  t->cm_mask = 63;
  t->hosts = calloc(t->n_hosts ? t->n_hosts : 1, sizeof(thost));
  if (!t->cm_key || !t->cm_val || !t->hosts) {
    tcp_del(&t->x);
    return NETSIM_ERR_NOMEM;
  }
  for (i = 0; i < t->n_hosts; ++i) {
    thost *h = &t->hosts[i];
    netsim_link_info li;
    h->t = t;
    h->idx = i;
    h->nh = netsim_sim_host(sim, i);
    h->nic = netsim_host_nic(h->nh);
    netsim_timer_init(&h->tm, on_host_timer, h, 0);
    if (h->nic == NULL) {
      if (err) {
        snprintf(err, errlen, "host %u has no NIC (no link attached)", i);
      }
      tcp_del(&t->x);
      return NETSIM_ERR_INVAL;
    }
    netsim_link_get_info(h->nic, &li);
    h->nic_rate = li.rate_bps;
    netsim_host_set_rx(h->nh, on_rx, h);
  }
  {
    /* The header travels in a pool payload buffer. */
    netsim_pkt *p;
    uint8_t *b;
    int ok = 0;
    if (netsim_sim_pkt_alloc(sim, &p) == 0) {
      ok = netsim_pkt_payload(t->pool, p, sizeof(tcp_hdr), &b) == 0;
      netsim_sim_pkt_free(sim, p);
    }
    if (!ok) {
      if (err) {
        snprintf(err, errlen,
                 "the simulation's payload buffers are smaller than a TCP "
                 "header (%zu bytes)",
                 sizeof(tcp_hdr));
      }
      tcp_del(&t->x);
      return NETSIM_ERR_INVAL;
    }
  }
  *px = &t->x;
  return 0;
}

uint32_t sim_tcp_n_conns(simx *x) {
  return ((sim_tcp *)x)->n_conns;
}

void sim_tcp_set_lower(simx *x, const sim_tcp_lower *lower) {
  sim_tcp *t = (sim_tcp *)x;
  uint32_t i;

  t->lower = *lower;
  for (i = 0; i < t->n_hosts; ++i) {
    netsim_evl_timer_stop(netsim_sim_evl(t->x.sim), &t->hosts[i].tm);
  }
}

void sim_tcp_input(simx *x, uint32_t host, netsim_pkt *p) {
  sim_tcp *t = (sim_tcp *)x;

  if (host >= t->n_hosts) {
    netsim_sim_pkt_free(t->x.sim, p);
    return;
  }
  on_rx(t->x.sim, t->hosts[host].nh, p, &t->hosts[host]);
}

void sim_tcp_wake(simx *x, uint32_t host) {
  sim_tcp *t = (sim_tcp *)x;

  if (host < t->n_hosts) {
    pump(&t->hosts[host]);
    if (t->depth == 0) {
      drain(t);
    }
  }
}

int sim_tcp_conn_get(simx *x, uint32_t i, sim_tcp_conn_info *info) {
  sim_tcp *t = (sim_tcp *)x;
  tconn *c;

  if (i >= t->n_conns) {
    return NETSIM_ERR_NOENT;
  }
  c = t->conns[i];
  memset(info, 0, sizeof(*info));
  info->src = c->src;
  info->dst = c->dst;
  info->key = c->key;
  info->cwnd = c->cwnd;
  info->ssthresh = c->ssthresh;
  info->srtt = c->srtt;
  info->max_rtt = c->max_rtt;
  info->rto = backed_off_rto(c);
  info->snd_una = c->snd_una;
  info->snd_nxt = c->snd_nxt;
  info->rcv_nxt = c->rcv_nxt;
  info->retransmits = c->retransmits;
  info->timeouts = c->timeouts;
  info->alpha = c->alpha;
  info->w_max = c->cubic.last_max_cwnd;
  info->hystart_train = c->cubic.train_exits;
  info->hystart_delay = c->cubic.delay_exits;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The wire form of a packet (captures)                                    */

static void wput16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void wput32(uint8_t *p, uint32_t v) {
  wput16(p, v >> 16);
  wput16(p + 2, v & 0xffff);
}

size_t sim_tcp_wire_header(const netsim_pkt *p, uint8_t *out) {
  const tcp_hdr *h = (const tcp_hdr *)(const void *)netsim_pkt_data(p);
  size_t n = 20, i;
  uint8_t flags = 0;

  if (p->key.proto != 6 || h == NULL || p->payload_len < sizeof(tcp_hdr)) {
    return 0;
  }
  memset(out, 0, SIM_TCP_WIRE_MAX);
  wput16(out, p->key.sport);
  wput16(out + 2, p->key.dport);
  /* The SYN is number 0 in each direction; byte b of the stream is b+1. */
  wput32(out + 4, h->flags & F_SYN ? 0 : (uint32_t)(h->seq + 1));
  if (h->flags & F_ACK) {
    flags |= 0x10;
    wput32(out + 8, h->flags & F_SYN ? 1 : (uint32_t)(h->ack + 1));
  } else if (!(h->flags & F_SYN)) {
    /* Data: the model's flows go one way, so it acknowledges the other
       side's SYN, as every segment after the handshake does. */
    flags |= 0x10;
    wput32(out + 8, 1);
  }
  if (h->flags & F_SYN) {
    flags |= 0x02;
  }
  if (h->flags & F_PSH) {
    flags |= 0x08;
  }
  if (h->flags & F_ECE) {
    flags |= 0x40;
  }
  out[13] = flags;
  wput16(out + 14, 0xffff);
  if (h->flags & F_SYN) {
    /* MSS, SACK permitted, timestamps, window scale: 20 bytes. */
    out[n++] = 2, out[n++] = 4;
    wput16(out + n, 8948), n += 2;
    out[n++] = 4, out[n++] = 2;
  } else {
    out[n++] = 1, out[n++] = 1; /* NOP NOP */
  }
  out[n++] = 8, out[n++] = 10;
  wput32(out + n, (uint32_t)(p->t_sent / NETSIM_US)), n += 4;
  wput32(out + n, h->tsecr ? (uint32_t)((h->tsecr - 1) / NETSIM_US) : 0);
  n += 4;
  if (h->flags & F_SYN) {
    out[n++] = 1, out[n++] = 3, out[n++] = 3, out[n++] = 7; /* NOP, WS 7 */
  } else if (h->n_sack > 0) {
    out[n++] = 1, out[n++] = 1;
    out[n++] = 5, out[n++] = (uint8_t)(2 + 8 * h->n_sack);
    for (i = 0; i < h->n_sack; ++i) {
      wput32(out + n, (uint32_t)(h->sack[i][0] + 1)), n += 4;
      wput32(out + n, (uint32_t)(h->sack[i][1] + 1)), n += 4;
    }
  }
  out[12] = (uint8_t)((n / 4) << 4);
  return n;
}
