/*
 * udp_recv.c: the udp backend's receive path.  Receives are armed on the
 * ring (multishot into the buffer ring, or one-shot into slots), their
 * completions bring datagrams, and the busy poll reads socket 0 itself;
 * every datagram reaches the engine through input_datagram.
 */
#define _GNU_SOURCE
#include "udp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* One-shot receive mode: receives kept armed on socket 0. */
#define ONESHOT_DEPTH 64
/* How many recvmmsg(2) calls one direct poll makes at most. */
#define DIRECT_ROUNDS 8

/* hs_addr writes the bytes that name base address |ss| to the engine's
   stateless handshake (family, port, address) into |out| and returns how
   many. */
static size_t hs_addr(const struct sockaddr_storage *ss, uint8_t *out) {
  uint16_t port = udp_sa_port(ss);

  out[0] = (uint8_t)(ss->ss_family >> 8);
  out[1] = (uint8_t)ss->ss_family;
  out[2] = (uint8_t)(port >> 8);
  out[3] = (uint8_t)port;
  if (ss->ss_family == AF_INET6) {
    memcpy(out + 4, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
    return 20;
  }
  memcpy(out + 4, &((const struct sockaddr_in *)ss)->sin_addr, 4);
  return 8;
}

/* stranger handles a datagram from an address that is no peer (a
   server's, cfg.listen), without keeping anything for it until it proves
   its address (docs/transports.md, "Handshake floods"): a request to open
   a session is answered statelessly (srd_ep_answer_hs: a cookie, an
   answer no larger than the request, from the socket of the path the
   engine names); a packet echoing a valid cookie makes it a peer
   (srd_ep_accept_cookie), whose index it returns so that the datagram is
   then read as any other.  Anything else is dropped: -1. */
static int stranger(xport_udp *x, uint16_t sock, const void *name,
                    socklen_t namelen, const uint8_t *data, size_t first,
                    uint64_t now) {
  struct sockaddr_storage ss;
  srd_peer_settings ps;
  srd_pkt_info info;
  srd_peer_id id;
  uint8_t addr[SRD_HS_ADDR_MAX], out[SRD_HS_ANSWER_LEN];
  uint16_t port;
  uint32_t rpath;
  size_t alen;
  srd_ssize n;
  int rv;

  (void)sock;
  if (!x->cfg.listen || srd_pkt_peek(data, first, &info) != 0 ||
      info.path >= XPORT_MAX_PATHS || namelen > sizeof(ss) ||
      (info.type != SRD_PKT_TYPE_HS_REQ && !info.hs_echo)) {
    ++x->unknown_src;
    ++x->driver_bad;
    return -1;
  }
  /* The sender's base address: its port less the path it names (its
     socket), as udp_peer_find reads it. */
  memset(&ss, 0, sizeof(ss));
  memcpy(&ss, name, namelen);
  port = udp_sa_port(&ss);
  if (port <= info.path) {
    ++x->driver_bad;
    return -1;
  }
  udp_sa_set_port(&ss, (uint16_t)(port - info.path));
  alen = hs_addr(&ss, addr);
  udp_peer_passive_settings(x, &ps);
  if (info.type == SRD_PKT_TYPE_HS_REQ) {
    /* A GRO train of requests from one port is one request repeated. */
    n = srd_ep_answer_hs(x->ep, &ps, addr, alen, data, first, out, sizeof(out),
                         &rpath, now);
    if (n <= 0) {
      ++x->unknown_src;
      return -1;
    }
    if (sendto(x->fd[rpath % x->nfd], out, (size_t)n, MSG_DONTWAIT,
               (const struct sockaddr *)&ss, namelen) == n) {
      ++x->hs_answered;
      ++x->pkts_out;
      x->bytes_out += (uint64_t)n;
    }
    return -1;
  }
  rv = srd_ep_accept_cookie(x->ep, &ps, addr, alen, data, first, &id, now);
  if (rv == SRD_ERR_AGAIN) {
    /* A real limit: every slot holds a proven peer. */
    if (x->hs_full++ == 0) {
      udp_log(x, "peer table full (max_peers) of established peers: "
                 "refusing a new client");
    }
    ++x->driver_bad;
    return -1;
  }
  if (rv != 0) {
    ++x->unknown_src;
    return -1;
  }
  if (udp_peer_adopt(x, id, &ss, namelen) != 0) {
    ++x->driver_bad;
    udp_log(x, "no room for a new peer (max_peers)");
    return -1;
  }
  return (int)id;
}

/* input_datagram hands a received datagram (a GRO train of |gso_size|
   segments, or one) to the engine.  The engine's clock is the kernel's
   arrival time when there is one: the time a datagram waited in the
   socket for a sleeping thread then counts as the receiver's hold time,
   which the ACK reports and the sender subtracts, and not as path delay
   that the delay-based congestion control would answer by shrinking its
   window.  The clock is kept monotonic and never ahead of |now|. */
static void input_datagram(xport_udp *x, uint16_t sock, const void *name,
                           socklen_t namelen, int gso_size, uint8_t *data,
                           size_t len, uint64_t arrival, uint64_t now) {
  int pi;
  size_t off, seg;
  srd_path path;
  size_t first =
      gso_size > 0 && (size_t)gso_size < len ? (size_t)gso_size : len;

  if (namelen < sizeof(struct sockaddr_in)) {
    ++x->driver_bad;
    return;
  }
  pi = udp_peer_find(x, name, data, first);
  if (pi < 0 && (pi = stranger(x, sock, name, namelen, data, first,
                               arrival ? arrival : now)) < 0) {
    return;
  }
  x->peers[pi].last_rx = now;
  /* A datagram that arrived after |now| was taken keeps its own, later
     time (clamping it to |now| would overstate the hold time the ACK
     reports, and so understate the sender's RTT sample); the engine's
     later calls then use at least that time (udp_tnow). */
  if (arrival == 0) {
    arrival = now;
  } else if (arrival < x->last_now) {
    ++x->rx_restamped; /* the engine's clock passed it (udp_progress) */
  }
  if (arrival < x->last_now) {
    arrival = x->last_now;
  }
  x->last_now = arrival;
  path.peer = (srd_peer_id)pi;
  seg = gso_size > 0 ? (size_t)gso_size : len;
  /* An empty datagram goes to the engine too, which counts it dropped
     (truncated) like any other malformed one. */
  for (off = 0; off < len || (len == 0 && off == 0); off += seg) {
    size_t n = len - off < seg ? len - off : seg;
    /* Informational (the engine reads the path from the packet). */
    path.path = 0;
    ++x->pkts_in;
    x->bytes_in += n;
    if (x->cfg.tap) {
      udp_tap(x, 0, (uint32_t)pi, sock, name, data + off, n, NULL, 0);
    }
    srd_ep_read_pkt(x->ep, &path, data + off, n, arrival);
    if (len == 0) {
      break;
    }
  }
}

/* parse_cmsg reads the GRO segment size and the arrival time. */
static void parse_cmsg(xport_udp *x, struct cmsghdr *c, int *gs,
                       uint64_t *arrival) {
  if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
      c->cmsg_len >= CMSG_LEN(sizeof(int))) {
    memcpy(gs, CMSG_DATA(c), sizeof(*gs));
  } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
             c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
    struct timespec ts;
    int64_t t;
    if (!x->rt_valid) {
      /* The offset between the clocks changes only when the wall clock
         is set, so it is read once per progress call that receives. */
      struct timespec rt;
      clock_gettime(CLOCK_REALTIME, &rt);
      x->rt_off =
          (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (int64_t)xport_now();
      x->rt_valid = 1;
    }
    memcpy(&ts, CMSG_DATA(c), sizeof(ts));
    t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - x->rt_off;
    *arrival = t > 0 ? (uint64_t)t : 0;
  }
}

int udp_rx_arm_multishot(xport_udp *x, uint16_t sock) {
  struct io_uring_sqe *sqe = udp_get_sqe(x);

  if (sqe == NULL) {
    return -EBUSY;
  }
  io_uring_prep_recvmsg_multishot(sqe, x->fd[sock], &x->rx_tmpl, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = BGID;
  io_uring_sqe_set_data64(sqe, UD(UD_RXM, sock));
  x->rx_armed[sock] = 1;
  return 0;
}

static int arm_oneshot(xport_udp *x, unsigned slot) {
  rxslot *s = &x->slots[slot];
  struct io_uring_sqe *sqe = udp_get_sqe(x);

  if (sqe == NULL) {
    return -EBUSY;
  }
  s->iov.iov_base = s->buf;
  s->iov.iov_len = x->bufsz;
  memset(&s->mh, 0, sizeof(s->mh));
  s->mh.msg_name = &s->name;
  s->mh.msg_namelen = sizeof(s->name);
  s->mh.msg_iov = &s->iov;
  s->mh.msg_iovlen = 1;
  s->mh.msg_control = s->ctl.buf;
  s->mh.msg_controllen = sizeof(s->ctl.buf);
  io_uring_prep_recvmsg(sqe, x->fd[s->sock], &s->mh, 0);
  io_uring_sqe_set_data64(sqe, UD(UD_RX1, slot));
  return 0;
}

int udp_rx_setup_oneshot(xport_udp *x) {
  unsigned i;

  x->multishot = 0;
  /* Socket 0, where every peer sends, gets ONESHOT_DEPTH receives, or
     none when the busy poll reads it directly. */
  x->nslots = (x->direct_rx ? 0 : ONESHOT_DEPTH) + x->nfd - 1;
  if (x->nslots == 0) {
    return 0;
  }
  x->slots = calloc(x->nslots, sizeof(*x->slots));
  x->rxmem = malloc((size_t)x->nslots * x->bufsz);
  if (x->slots == NULL || x->rxmem == NULL) {
    return -ENOMEM;
  }
  for (i = 0; i < x->nslots; ++i) {
    x->slots[i].buf = x->rxmem + (size_t)i * x->bufsz;
    x->slots[i].sock = x->direct_rx        ? (uint16_t)(i + 1)
                       : i < ONESHOT_DEPTH ? 0
                                           : (uint16_t)(i - ONESHOT_DEPTH + 1);
    if (arm_oneshot(x, i) != 0) {
      return -EBUSY;
    }
  }
  return 0;
}

/* multishot_unsupported switches to one-shot receives, once. */
static void multishot_unsupported(xport_udp *x, int err) {
  uint32_t i;

  udp_log(x,
          "multishot recvmsg not supported by this kernel (%s; needs Linux "
          "6.0); using one-shot recvmsg",
          strerror(-err));
  for (i = 0; i < x->nfd; ++i) {
    x->rx_armed[i] = 0;
  }
  io_uring_unregister_buf_ring(&x->ring, BGID);
  if (x->br) {
    munmap(x->br, x->br_bytes);
    x->br = NULL;
  }
  free(x->rxmem);
  x->rxmem = NULL;
  if (udp_rx_setup_oneshot(x) != 0) {
    udp_log(x, "one-shot receive setup failed");
  }
}

/* ------------------------------------------------------------------------ */
/* Completions of receives                                                  */

void udp_rx_on_multishot(xport_udp *x, struct io_uring_cqe *cqe, uint64_t now) {
  uint16_t sock = (uint16_t)UD_IDX(cqe->user_data);

  if (cqe->res >= 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
    unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
    uint8_t *buf = x->rxmem + (size_t)bid * x->bufsz;
    struct io_uring_recvmsg_out *o =
        io_uring_recvmsg_validate(buf, cqe->res, &x->rx_tmpl);

    if (o == NULL || (o->flags & MSG_TRUNC)) {
      ++x->rx_truncated;
      ++x->driver_bad;
    } else {
      int gs = 0;
      uint64_t arrival = 0;
      struct cmsghdr *c;
      for (c = io_uring_recvmsg_cmsg_firsthdr(o, &x->rx_tmpl); c;
           c = io_uring_recvmsg_cmsg_nexthdr(o, &x->rx_tmpl, c)) {
        parse_cmsg(x, c, &gs, &arrival);
      }
      input_datagram(x, sock, io_uring_recvmsg_name(o),
                     o->namelen > x->rx_tmpl.msg_namelen ? 0 : o->namelen, gs,
                     io_uring_recvmsg_payload(o, &x->rx_tmpl),
                     io_uring_recvmsg_payload_length(o, cqe->res, &x->rx_tmpl),
                     arrival, now);
    }
    io_uring_buf_ring_add(x->br, buf, (unsigned)x->bufsz, (unsigned short)bid,
                          io_uring_buf_ring_mask(x->nbuf), x->buf_adds++);
  } else if (cqe->res == -EINVAL || cqe->res == -EOPNOTSUPP) {
    multishot_unsupported(x, cqe->res);
    return;
  }
  if (!(cqe->flags & IORING_CQE_F_MORE) && x->rx_armed[sock]) {
    x->rx_armed[sock] = 0; /* ENOBUFS or the kernel ended it: re-arm */
    ++x->rx_disarmed;
  }
}

void udp_rx_on_oneshot(xport_udp *x, struct io_uring_cqe *cqe, uint64_t now) {
  unsigned slot = UD_IDX(cqe->user_data);
  rxslot *s = &x->slots[slot];

  if (cqe->res >= 0) {
    if (s->mh.msg_flags & MSG_TRUNC) {
      ++x->rx_truncated;
      ++x->driver_bad;
    } else {
      int gs = 0;
      uint64_t arrival = 0;
      struct cmsghdr *c;
      for (c = CMSG_FIRSTHDR(&s->mh); c; c = CMSG_NXTHDR(&s->mh, c)) {
        parse_cmsg(x, c, &gs, &arrival);
      }
      input_datagram(x, s->sock, &s->name, s->mh.msg_namelen, gs, s->buf,
                     (size_t)cqe->res, arrival, now);
    }
  }
  arm_oneshot(x, slot);
}

/* ------------------------------------------------------------------------ */
/* The busy poll's direct reads                                             */

/* The busy poll reads socket 0 itself: a datagram reaches the engine in
   the one system call that reads it, as in a raw UDP ping-pong, where the
   ring would take a wake-up, task work and a completion
   (docs/transports.md, "Latency"). */
void udp_rx_direct_poll(xport_udp *x, uint64_t now) {
  struct mmsghdr *mm = x->dmm;
  unsigned round, i;
  int n;

  for (round = 0; round < DIRECT_ROUNDS; ++round) {
    if (x->rx_hits < 2) {
      /* Sparse traffic (a ping-pong): one recvmsg(2), which does not
         look for a second datagram the way recvmmsg(2) does. */
      ssize_t r = recvmsg(x->fd[0], &mm[0].msg_hdr, MSG_DONTWAIT);
      mm[0].msg_len = r > 0 ? (unsigned)r : 0;
      n = r >= 0 ? 1 : -1;
    } else {
      n = recvmmsg(x->fd[0], mm, DIRECT_BATCH, MSG_DONTWAIT, NULL);
    }
    /* Polls in a row that found something: dense traffic is read in
       batches, and a batch that is not full ends it. */
    x->rx_hits = n <= 0 ? 0 : n == 1 && x->rx_hits >= 2 ? 0 : x->rx_hits + 1;
    if (n <= 0) {
      return; /* EAGAIN: nothing waits; other errors are the next poll's */
    }
    for (i = 0; i < (unsigned)n; ++i) {
      struct msghdr *mh = &mm[i].msg_hdr;
      int gs = 0;
      uint64_t arrival = 0;
      struct cmsghdr *c;

      if (mh->msg_flags & MSG_TRUNC) {
        ++x->rx_truncated;
        ++x->driver_bad;
        continue;
      }
      for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
        parse_cmsg(x, c, &gs, &arrival);
      }
      input_datagram(x, 0, mh->msg_name, mh->msg_namelen, gs, x->dslots[i].buf,
                     mm[i].msg_len, arrival, now);
    }
    for (i = 0; i < (unsigned)n; ++i) { /* the kernel wrote them */
      mm[i].msg_hdr.msg_namelen = sizeof(x->dslots[i].name);
      mm[i].msg_hdr.msg_controllen = sizeof(x->dslots[i].ctl.buf);
    }
    if (n < DIRECT_BATCH) {
      return;
    }
  }
}
