/*
 * udp_ops.c: the "udp" backend, libsrd over UDP with io_uring: its
 * xport_ops table and the op functions.  udp.h describes the design;
 * the machinery is in the files it lists.
 */
#define _GNU_SOURCE
#include "udp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Completions taken from the engine per poll. */
#define CQ_BATCH 64

/* ------------------------------------------------------------------------ */
/* Errors at the boundary: SRD_ERR_* to errno.                              */

int udp_errno(int e) {
  switch (e) {
  case 0:
    return 0;
  case SRD_ERR_AGAIN:
    return -EAGAIN;
  case SRD_ERR_MSG_TOO_LONG:
  case SRD_ERR_TRUNCATED:
  case SRD_ERR_REMOTE_TRUNCATED:
    return -EMSGSIZE;
  case SRD_ERR_BAD_PEER:
  case SRD_ERR_INVALID_ARGUMENT:
    return -EINVAL;
  case SRD_ERR_PEER_UNRESPONSIVE:
    return -ETIMEDOUT;
  case SRD_ERR_PEER_UNREACHABLE:
    return -EHOSTUNREACH;
  case SRD_ERR_RNR:
    return -ENOBUFS;
  case SRD_ERR_PEER_RESET:
    return -ECONNRESET;
  case SRD_ERR_CANCELED:
    return -ECANCELED;
  case SRD_ERR_ABORTED:
    return -ECONNABORTED;
  case SRD_ERR_NOMEM:
    return -ENOMEM;
  default:
    return -EPROTO;
  }
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */

static int udp_add_peer(xport *xp, const struct sockaddr *addr, socklen_t len,
                        xport_peer *ppeer) {
  xport_udp *x = (xport_udp *)xp;
  struct sockaddr_storage ss;

  if (addr == NULL || addr->sa_family != x->family || len > sizeof(ss)) {
    return -EINVAL;
  }
  memset(&ss, 0, sizeof(ss));
  memcpy(&ss, addr, len);
  return udp_peer_new(x, &ss, len, 0, ppeer);
}

static int udp_remove_peer(xport *xp, xport_peer peer) {
  xport_udp *x = (xport_udp *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  udp_peer_drop(x, peer, xport_now());
  return 0;
}

/* udp_post_send posts the message to the engine; a busy poll sends it at
   once. */
static int udp_post_send(xport *xp, xport_peer peer, const void *buf,
                         size_t len, void *ctx) {
  xport_udp *x = (xport_udp *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  uint64_t now = udp_tnow(x, xport_now());
  int rv = srd_ep_post_send(x->ep, peer, buf, len, ctx, now);

  /* A busy poll trades batching for latency: the message leaves now,
     not at the next progress call. */
  if (rv == 0 && x->cfg.busy_poll) {
    udp_tx_output(x, now);
  }
  return udp_errno(rv);
}

static int udp_post_recv(xport *xp, void *buf, size_t cap, void *ctx) {
  xport_udp *x = (xport_udp *)xp;

  return udp_errno(
      srd_ep_post_recv(x->ep, buf, cap, ctx, udp_tnow(x, xport_now())));
}

/* udp_poll_cq moves the engine's completions out, their codes mapped. */
static size_t udp_poll_cq(xport *xp, xport_cqe *out, size_t n) {
  xport_udp *x = (xport_udp *)xp;
  srd_cqe c[CQ_BATCH];
  size_t got = 0, k, i;

  while (got < n) {
    size_t want = n - got < CQ_BATCH ? n - got : CQ_BATCH;
    k = srd_ep_poll_cq(x->ep, c, want);
    for (i = 0; i < k; ++i) {
      xport_cqe *o = &out[got + i];
      o->op = c[i].op == SRD_OP_SEND ? XPORT_OP_SEND : XPORT_OP_RECV;
      o->status = udp_errno(c[i].status);
      o->detail = c[i].status;
      o->peer = c[i].peer;
      o->buf = c[i].buf;
      o->ctx = c[i].user_ctx;
      o->len = c[i].len;
    }
    got += k;
    if (k < want) {
      break;
    }
  }
  return got;
}

/* need_enter says whether io_uring_enter has work: requests to submit,
   completions that wait as task work (DEFER_TASKRUN runs them only when
   the thread enters) or in the overflow list.  A ring without
   TASKRUN_FLAG does not say, and is entered every time. */
static int need_enter(xport_udp *x) {
  return !x->peek || io_uring_sq_ready(&x->ring) ||
         (IO_URING_READ_ONCE(*x->ring.sq.kflags) &
          (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW));
}

/* sleep_in_ring waits in the ring, from |now|, until a completion, the
   engine's next deadline, the impairment layer's next departure or
   |timeout_ns| later, whichever comes first.  Returns 0, or the ring's
   negative errno (a timeout or an interruption is no error). */
static int sleep_in_ring(xport_udp *x, uint64_t now, uint64_t timeout_ns) {
  uint64_t deadline = now + timeout_ns, exp;
  int rv;

  exp = srd_ep_get_expiry(x->ep);
  if (exp < deadline) {
    deadline = exp;
  }
  if (x->impair_on && impair_q_next(&x->held) < deadline) {
    deadline = impair_q_next(&x->held);
  }
  if (deadline > now) {
    struct __kernel_timespec ts;
    struct io_uring_cqe *cqe;
    uint64_t d = deadline - now;
    ts.tv_sec = (long long)(d / 1000000000ull);
    ts.tv_nsec = (long long)(d % 1000000000ull);
    rv = io_uring_submit_and_wait_timeout(&x->ring, &cqe, 1, &ts, NULL);
    if (rv < 0 && rv != -ETIME && rv != -EINTR && rv != -EAGAIN &&
        rv != -EBUSY) {
      return rv;
    }
  }
  return 0;
}

/* udp_progress: send what the user posted, take in what arrived (the
   ring's completions, the busy poll's reads), run the engine's timers,
   send the held datagrams that are due and what the engine then has to
   send.  When that did nothing, sleep (sleep_in_ring) and do it once
   more. */
static int udp_progress(xport *xp, uint64_t timeout_ns) {
  xport_udp *x = (xport_udp *)xp;
  uint64_t now = xport_now(), exp;
  int pass;

  for (pass = 0; pass < 2; ++pass) {
    unsigned before = (unsigned)x->pkts_in, sent;
    int rv, fired = 0;

    x->rt_valid = 0;
    /* What the user posted since the last call leaves first: a reply
       posted on a message just received does not wait behind the poll
       for the next datagram.  (A busy poll sent it when it was posted.) */
    sent =
        pass == 0 && !x->cfg.busy_poll ? udp_tx_output(x, udp_tnow(x, now)) : 0;
    /* Enter the kernel to run the receive task work and submit re-arms,
       when there is any: a busy poll that finds nothing costs no system
       call. */
    if (need_enter(x)) {
      rv = io_uring_submit_and_get_events(&x->ring);
      if (rv < 0 && rv != -EINTR && rv != -EAGAIN && rv != -EBUSY) {
        return rv;
      }
    }
    if (io_uring_cq_ready(&x->ring)) {
      udp_reap(x, now);
    }
    if (x->direct_rx) {
      udp_rx_direct_poll(x, now);
    }
    now = udp_tnow(x, now);
    exp = srd_ep_get_expiry(x->ep);
    if (exp <= now) {
      srd_ep_handle_expiry(x->ep, now);
      fired = 1;
    }
    if (x->impair_on) {
      udp_tx_send_held(x, now);
    }
    sent += udp_tx_output(x, now);
    if (x->cfg.listen) {
      udp_peer_gc(x, now);
    }
    if (pass == 1 || x->cfg.busy_poll || timeout_ns == 0 ||
        (unsigned)x->pkts_in != before || sent > 0 || fired) {
      break;
    }
    /* Nothing happened: sleep in the ring until a datagram, the engine's
       next deadline, a held datagram's departure or the timeout. */
    if ((rv = sleep_in_ring(x, now, timeout_ns)) != 0) {
      return rv;
    }
    now = xport_now();
  }
  return 0;
}

/* udp_get_stats adds the engine's counters to the driver's and the
   impairment layer's; the RTT and window are those of the peer sent to
   most. */
static void udp_get_stats(xport *xp, xport_stats *st) {
  xport_udp *x = (xport_udp *)xp;
  srd_ep_stats es;
  uint64_t now = xport_now(), busiest = 0;
  uint32_t i, j;
  int d;

  srd_ep_get_stats(x->ep, &es);
  st->msgs_sent = es.msgs_sent_ok;
  st->msgs_recv = es.msgs_recv_ok;
  st->msgs_err = es.msgs_sent_err + es.msgs_recv_err;
  st->pkts_out = x->pkts_out;
  st->pkts_in = x->pkts_in;
  st->bytes_out = x->bytes_out;
  st->bytes_in = x->bytes_in;
  st->sends = x->sends;
  st->gso_sends = x->gso_sends;
  st->retransmits = es.retransmits;
  st->losses_rack = es.losses_rack;
  st->losses_rto = es.losses_rto;
  st->spurious_losses = es.spurious_losses;
  st->rto_fired = es.rto_fired;
  st->bad_in = x->driver_bad;
  for (d = 0; d < SRD_DROP_REASONS; ++d) {
    /* Network duplicates and refusals for want of a buffer are the
       protocol working, not bad input. */
    if (d != SRD_DROP_DUP_PKT && d != SRD_DROP_DUP_MSG && d != SRD_DROP_RNR) {
      st->bad_in += es.drops[d];
    }
  }
  st->unknown_src = x->unknown_src;
  st->rx_truncated = x->rx_truncated;
  st->imp_queue_drops = x->held_drops;
  for (d = 0; x->impair_on && d < (int)x->nfd; ++d) {
    const impair_stats *is = &x->imp[d].st;
    st->imp_lost += is->lost;
    st->imp_dup += is->duplicated;
    st->imp_delayed += is->delayed;
    st->imp_queue_drops += is->queue_drops;
    st->imp_blackholed += is->blackholed;
    st->imp_corrupted += is->corrupted;
    st->imp_dup_delayed += is->dup_delayed;
  }
  st->n_paths = x->nfd;
  st->hs_answered = x->hs_answered;
  st->hs_full = x->hs_full;
  st->peers_max = x->peers_max;
  st->rx_restamped = x->rx_restamped;
  st->rnr_sent = es.rnr_sent;
  st->rnr_received = es.rnr_received;
  for (d = 0; d < SRD_DROP_REASONS && d < 16; ++d) {
    st->drops[d] = es.drops[d];
  }
  for (i = 0; i < x->max_peers; ++i) {
    srd_peer_stats pst;
    if (!x->peers[i].used) {
      continue;
    }
    if (srd_ep_get_peer_stats(x->ep, i, &pst) == 0 &&
        pst.pkts_sent >= busiest) {
      busiest = pst.pkts_sent;
      st->srtt_ns = pst.srtt;
      st->min_rtt_ns = pst.min_rtt;
      st->rto_ns = pst.rto;
      st->cwnd_bytes = pst.cwnd;
      st->ports_heard = (uint32_t)__builtin_popcountll(x->peers[i].ports_ok);
    }
    for (j = 0; j < x->nfd; ++j) {
      srd_path_stats ps;
      if (srd_ep_get_path_stats(x->ep, i, j, now, &ps) == 0) {
        st->path_pkts[j] += ps.sent;
        if (ps.avoided) {
          st->path_avoided_mask |= 1ull << j;
        }
      }
    }
  }
}

static int udp_local_addr(xport *xp, struct sockaddr_storage *ss,
                          socklen_t *len) {
  xport_udp *x = (xport_udp *)xp;

  *len = sizeof(*ss);
  return getsockname(x->fd[0], (struct sockaddr *)ss, len) ? -errno : 0;
}

static int udp_peer_addr(xport *xp, xport_peer peer,
                         struct sockaddr_storage *ss, socklen_t *len) {
  xport_udp *x = (xport_udp *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  *ss = x->peers[peer].addr;
  *len = x->peers[peer].alen;
  return 0;
}

static const char *udp_describe(xport *xp) {
  xport_udp *x = (xport_udp *)xp;

  snprintf(x->desc, sizeof(x->desc),
           "srd over UDP/io_uring: %u paths (ports %u-%u), burst %u%s, mtu "
           "%u, %s, %s, ring %s, %s",
           x->nfd, x->port0, x->port0 + x->nfd - 1, x->burst,
           x->gso ? " (UDP GSO)" : " (no GSO)", x->mtu,
           x->gro ? "GRO" : "no GRO",
           x->direct_rx   ? "recvmsg/recvmmsg on the base port"
           : x->multishot ? "multishot recvmsg + buffer ring"
                          : "one-shot recvmsg",
           (x->ring_flags & IORING_SETUP_DEFER_TASKRUN)  ? "defer_taskrun"
           : (x->ring_flags & IORING_SETUP_COOP_TASKRUN) ? "coop_taskrun"
                                                         : "plain",
           x->cfg.busy_poll ? "busy-poll" : "blocking");
  return x->desc;
}

const xport_ops xport_udp_ops = {
    .name = "udp",
    .open = udp_open,
    .close = udp_close,
    .add_peer = udp_add_peer,
    .remove_peer = udp_remove_peer,
    .post_send = udp_post_send,
    .post_recv = udp_post_recv,
    .poll_cq = udp_poll_cq,
    .progress = udp_progress,
    .get_stats = udp_get_stats,
    .local_addr = udp_local_addr,
    .peer_addr = udp_peer_addr,
    .describe = udp_describe,
};
