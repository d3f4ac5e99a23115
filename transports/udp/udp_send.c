/*
 * udp_send.c: the udp backend's send path.  Packets come out of the
 * engine in rounds, pass the impairment layer, are grouped per socket
 * into UDP GSO sends, and leave in one io_uring_enter; each round waits
 * for its completions.  The ring's completions (udp_reap) are here, as
 * the send path is what waits for them.
 */
#define _GNU_SOURCE
#include "udp.h"

#include <errno.h>
#include <string.h>

/* Rounds per progress call (bounds the time one call spends sending). */
#define TX_ROUNDS 16
/* Bytes per round: a round's packets share one send time, so a round
   must not take the kernel long to send (512 KiB: tens of us), and it
   must hold several of the engine's 64 KB runs, since the run a round
   cuts leaves in two shorter sends (at 256 KiB the sends averaged 37
   packets of the 48 a run has at MTU 1500, at 512 KiB 40). */
#define ROUND_BYTES (512u << 10)

static void on_tx_result(xport_udp *x, unsigned mi, int res);

/* submit_msg sends tx message |mi|: by the ring, or |direct|ly. */
static void submit_msg(xport_udp *x, unsigned mi, int direct) {
  txmsg *m = &x->msgs[mi];
  struct io_uring_sqe *sqe;
  upeer *p = &x->peers[m->peer];

  if (m->sock != 0 && (int)m->peer == x->conn_peer) {
    m->mh.msg_name = NULL; /* connected to it */
    m->mh.msg_namelen = 0;
  } else {
    m->mh.msg_name = &p->addr;
    m->mh.msg_namelen = p->alen;
  }
  m->mh.msg_iov = m->iov;
  m->mh.msg_iovlen = 0;
  m->mh.msg_flags = 0;
  for (unsigned k = 0; k < m->nseg; ++k) {
    txpkt *t = &x->tx[m->pkts[k]];
    m->iov[m->mh.msg_iovlen].iov_base = t->hdr;
    m->iov[m->mh.msg_iovlen++].iov_len = t->hdrlen;
    if (t->payload.len) {
      m->iov[m->mh.msg_iovlen].iov_base = (void *)t->payload.base;
      m->iov[m->mh.msg_iovlen++].iov_len = t->payload.len;
    }
  }
  if (m->nseg > 1) {
    struct cmsghdr *c;
    uint16_t gs = (uint16_t)m->seg;
    m->mh.msg_control = m->ctl.buf;
    m->mh.msg_controllen = sizeof(m->ctl.buf);
    c = CMSG_FIRSTHDR(&m->mh);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    memcpy(CMSG_DATA(c), &gs, sizeof(gs));
    ++x->gso_sends;
  } else {
    m->mh.msg_control = NULL;
    m->mh.msg_controllen = 0;
  }
  ++x->sends;
  x->pkts_out += m->nseg;
  x->bytes_out += m->bytes;
  if (direct) {
    /* One message: a sendmsg(2) of our own is one system call, as the
       ring's would be, without the ring's submission and completion.  A
       full socket buffer falls back to the ring, which waits for room. */
    ssize_t rv = sendmsg(x->fd[m->sock], &m->mh, MSG_DONTWAIT);
    if (rv >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      ++x->direct_sends;
      on_tx_result(x, mi, rv >= 0 ? 0 : -errno);
      return;
    }
  }
  sqe = udp_get_sqe(x);
  io_uring_prep_sendmsg(sqe, x->fd[m->sock], &m->mh, 0);
  io_uring_sqe_set_data64(sqe, UD(UD_TX, mi));
  ++x->tx_inflight;
}

/* resend_singly sends a refused GSO group's packets one by one, now,
   synchronously (their payloads are still valid). */
static void resend_singly(xport_udp *x, unsigned mi) {
  txmsg *m = &x->msgs[mi];
  upeer *p = &x->peers[m->peer];

  for (unsigned k = 0; k < m->nseg; ++k) {
    txpkt *t = &x->tx[m->pkts[k]];
    struct iovec iov[2] = {{t->hdr, t->hdrlen},
                           {(void *)t->payload.base, t->payload.len}};
    struct msghdr mh = {.msg_name = &p->addr,
                        .msg_namelen = p->alen,
                        .msg_iov = iov,
                        .msg_iovlen = t->payload.len ? 2 : 1};
    sendmsg(x->fd[m->sock], &mh, 0);
    ++x->sends;
  }
}

void udp_tx_send_held(xport_udp *x, uint64_t now) {
  hpkt *pkt;
  unsigned i;

  for (i = 0; i < x->nhs; ++i) {
    held_send *h = &x->hs[i];
    struct io_uring_sqe *sqe;
    upeer *p;

    if (h->busy) {
      continue;
    }
    if ((pkt = impair_q_pop(&x->held, now, NULL)) == NULL) {
      break;
    }
    p = pkt->peer < x->max_peers ? &x->peers[pkt->peer] : NULL;
    if (p == NULL || !p->used) {
      impair_q_put(&x->held, pkt);
      continue;
    }
    h->pkt = pkt;
    h->iov.iov_base = pkt->data;
    h->iov.iov_len = pkt->len;
    memset(&h->mh, 0, sizeof(h->mh));
    h->mh.msg_name = &p->addr;
    h->mh.msg_namelen = p->alen;
    h->mh.msg_iov = &h->iov;
    h->mh.msg_iovlen = 1;
    if (x->cfg.tap) {
      udp_tap(x, 1, pkt->peer, pkt->path, NULL, pkt->data, pkt->len, NULL, 0);
    }
    sqe = udp_get_sqe(x);
    io_uring_prep_sendmsg(sqe, x->fd[pkt->path], &h->mh, 0);
    io_uring_sqe_set_data64(sqe, UD(UD_TXH, i));
    h->busy = 1;
    ++x->tx_inflight;
    ++x->sends;
    ++x->pkts_out;
    x->bytes_out += pkt->len;
  }
}

/* add_to_group puts packet |ti| into the open GSO group of its socket, or
   opens one.  |open| maps socket to the open message index (or -1). */
static void add_to_group(xport_udp *x, int *open, unsigned *nmsg, unsigned ti) {
  txpkt *t = &x->tx[ti];
  uint16_t sock = (uint16_t)(t->path.path % x->nfd);
  int mi = open[sock];
  txmsg *m;

  if (mi >= 0) {
    m = &x->msgs[mi];
    if (x->gso && m->peer == t->path.peer && !m->closed && m->nseg < x->burst &&
        t->len <= m->seg && m->bytes + t->len <= GSO_MAX_BYTES) {
      m->pkts[m->nseg++] = (int)ti;
      m->bytes += t->len;
      if (t->len < m->seg) {
        m->closed = 1;
      }
      return;
    }
  }
  mi = (int)(*nmsg)++;
  m = &x->msgs[mi];
  m->peer = t->path.peer;
  m->sock = sock;
  m->nseg = 1;
  m->seg = t->len;
  m->bytes = t->len;
  m->closed = 0;
  m->pkts[0] = (int)ti;
  open[sock] = mi;
}

/* hold copies packet |t| (header and the user's payload, which is only
   read) into the held queue to leave socket |sock| at |at|, flipping the
   bits of the walk |f| that |bit| begins (IMPAIR_NONE: none).  A full
   queue (or a packet longer than a slot) is a drop. */
static void hold(xport_udp *x, uint16_t sock, const txpkt *t, uint64_t at,
                 impair_flips *f, uint64_t bit) {
  impair_link *l = &x->imp[sock];
  hpkt *h = t->len <= x->max_pkt ? impair_q_get(&x->held) : NULL;

  if (h != NULL) {
    h->len = t->len;
    h->path = sock;
    h->peer = t->path.peer;
    memcpy(h->data, t->hdr, t->hdrlen);
    if (t->payload.len) {
      memcpy(h->data + t->hdrlen, t->payload.base, t->payload.len);
    }
  } else {
    ++x->held_drops;
  }
  /* The walk goes to its end either way (the link moves past the copy). */
  for (; bit != IMPAIR_NONE; bit = impair_flips_next(l, f)) {
    if (h != NULL) {
      impair_flip_bit(h->data, bit);
    }
  }
  if (h != NULL) {
    impair_q_push(&x->held, h, at);
  }
}

unsigned udp_tx_output(xport_udp *x, uint64_t now) {
  unsigned total = 0, round;
  int open[XPORT_MAX_PATHS];

  for (round = 0; round < TX_ROUNDS; ++round) {
    unsigned n = 0, nmsg = 0, i;
    srd_ssize len;
    size_t bytes = 0;

    /* Each round's packets carry the time they are sent at, read now:
       the caller's time can be as old as the receives it processed
       first, or a preemption, which would count as path delay (tx_ts)
       or shorten the hold an ACK reports. */
    now = udp_tnow(x, xport_now());
    while (n < TX_BATCH && bytes < ROUND_BYTES) {
      txpkt *t = &x->tx[n];
      len =
          srd_ep_write_pktv(x->ep, &t->path, t->hdr, HDR_CAP, &t->payload, now);
      if (len <= 0) {
        if (len == SRD_ERR_NOBUF) {
          udp_log(x, "engine packet larger than the header buffer");
        }
        break;
      }
      if (t->path.peer >= x->max_peers || !x->peers[t->path.peer].used) {
        continue; /* a peer being removed */
      }
      t->hdrlen = (uint32_t)len;
      t->len = (uint32_t)len + (uint32_t)t->payload.len;
      bytes += t->len;
      ++n;
    }
    if (n == 0) {
      break;
    }
    total += n;
    for (i = 0; i < x->nfd; ++i) {
      open[i] = -1;
    }
    for (i = 0; i < n; ++i) {
      txpkt *t = &x->tx[i];
      if (x->impair_on) {
        uint16_t sock = (uint16_t)(t->path.path % x->nfd);
        impair_link *l = &x->imp[sock];
        impair_fate v;
        impair_link_send(l, t->len, now, &v);
        /* Each copy is corrupted as it is committed to the wire.  A copy
           that must wait, or be corrupted, leaves from the held queue:
           the payload points into the user's buffer, which the layer
           only reads.  The others go out now. */
        for (uint32_t c = 0; c < v.copies; ++c) {
          impair_flips f;
          uint64_t bit;
          impair_link_flips(l, &f, (uint64_t)t->len * 8);
          bit = impair_flips_next(l, &f);
          if (v.at[c] > now || bit != IMPAIR_NONE) {
            hold(x, sock, t, v.at[c], &f, bit);
          } else {
            add_to_group(x, open, &nmsg, i);
          }
        }
        continue;
      }
      add_to_group(x, open, &nmsg, i);
    }
    if (x->cfg.tap) {
      for (i = 0; i < nmsg; ++i) {
        const txmsg *m = &x->msgs[i];
        for (unsigned k = 0; k < m->nseg; ++k) {
          const txpkt *t = &x->tx[m->pkts[k]];
          udp_tap(x, 1, m->peer, m->sock, NULL, t->hdr, t->hdrlen,
                  t->payload.base, t->payload.len);
        }
      }
    }
    for (i = 0; i < nmsg; ++i) {
      submit_msg(x, i, nmsg == 1);
    }
    /* Every payload must be sent before the user polls completions. */
    while (x->tx_inflight > 0) {
      int rv = io_uring_submit_and_wait(&x->ring, 1);
      if (rv < 0 && rv != -EINTR && rv != -EAGAIN && rv != -EBUSY) {
        udp_log(x, "io_uring_submit_and_wait: %s", strerror(-rv));
        break;
      }
      udp_reap(x, now);
    }
    if (n < TX_BATCH && bytes < ROUND_BYTES) {
      break;
    }
  }
  return total;
}

/* ------------------------------------------------------------------------ */
/* Completions of the ring                                                  */

static void on_tx(xport_udp *x, struct io_uring_cqe *cqe) {
  --x->tx_inflight;
  on_tx_result(x, UD_IDX(cqe->user_data), cqe->res);
}

/* on_tx_result: the send of tx message |mi| returned |res|. */
static void on_tx_result(xport_udp *x, unsigned mi, int res) {
  if (res >= 0) {
    return;
  }
  if (x->msgs[mi].nseg > 1 &&
      (res == -EINVAL || res == -EIO || res == -EMSGSIZE)) {
    /* The route refused the GSO send (a segment above the path MTU, or a
       device without checksum offload): send datagram by datagram. */
    if (!x->gso_failed) {
      udp_log(x,
              "UDP GSO send refused (%s); sending one datagram per packet from "
              "now on",
              strerror(-res));
    }
    x->gso_failed = 1;
    x->gso = 0;
    resend_singly(x, mi);
  }
  /* Other send errors (ENOBUFS, EHOSTUNREACH, ECONNREFUSED from ICMP)
     are losses: the engine's timers resend. */
}

void udp_reap(xport_udp *x, uint64_t now) {
  struct io_uring_cqe *cqe;
  unsigned head, n = 0;
  uint32_t i;

  io_uring_for_each_cqe(&x->ring, head, cqe) {
    ++n;
    switch (UD_KIND(cqe->user_data)) {
    case UD_RXM:
      if (x->multishot) {
        udp_rx_on_multishot(x, cqe, now);
      }
      break;
    case UD_RX1:
      udp_rx_on_oneshot(x, cqe, now);
      break;
    case UD_TX:
      on_tx(x, cqe);
      break;
    case UD_TXH: {
      held_send *h = &x->hs[UD_IDX(cqe->user_data)];
      --x->tx_inflight;
      impair_q_put(&x->held, h->pkt);
      h->busy = 0;
      break;
    }
    default:
      break;
    }
  }
  io_uring_cq_advance(&x->ring, n);
  if (x->multishot) {
    if (x->buf_adds) {
      io_uring_buf_ring_advance(x->br, (int)x->buf_adds);
      x->buf_adds = 0;
    }
    if (x->rx_disarmed) {
      x->rx_disarmed = 0;
      for (i = x->direct_rx ? 1 : 0; i < x->nfd; ++i) {
        if (!x->rx_armed[i] && udp_rx_arm_multishot(x, (uint16_t)i) != 0) {
          ++x->rx_disarmed;
        }
      }
    }
  }
}
