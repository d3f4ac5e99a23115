/*
 * xport_uring.c: the "srd" backend, libsrd over UDP with io_uring.
 *
 * Paths and ports.  An endpoint binds n_paths consecutive UDP ports
 * base..base+n-1, one socket each.  Path i leaves from socket i (i mod n
 * for an ACK that answers a peer with more paths) and always goes to the
 * peer's base port, so the 5-tuple, which an ECMP fabric hashes, differs
 * per path in both directions: the entropy is the source port, as in
 * ENA Express and RoCEv2.  A datagram from (ip, port) belongs to the peer
 * at that ip with the largest base <= port < base + 64: ranges of bound
 * ports are contiguous and disjoint, so the answer is unique.  A server
 * (cfg.listen) adds a peer for an unknown source only when the datagram
 * is a well-formed handshake request (docs/protocol.md 2.4): its base is
 * the source port minus the header's path.  Anything else from nowhere
 * is dropped and counted, never given a peer slot.
 *
 * I/O.  Output pulls up to TX_BATCH packets from the engine with
 * srd_ep_write_pktv (header here, payload pointing into the user's send
 * buffer: no copy), groups each path's packets into UDP GSO sends of at
 * most cfg.burst segments and 64 KB, and submits all the sendmsg requests
 * in one io_uring_enter.  It waits for their completions before
 * returning, because a payload pointer is valid only until the next
 * completion poll (docs/programmers-guide.md, Buffer ownership).  Input
 * is one multishot recvmsg per socket into a shared provided-buffer ring
 * (GRO on: buffers of 64 KiB, split into segments by the UDP_GRO
 * cmsg).  Timers come from srd_ep_get_expiry: blocking progress sleeps in
 * io_uring_submit_and_wait_timeout until the next datagram or deadline;
 * busy-poll progress only enters the kernel to reap.
 *
 * Fallbacks, each said once through cfg.log: no DEFER_TASKRUN or
 * COOP_TASKRUN ring flags; no buffer rings or multishot recvmsg (Linux
 * < 5.19 / 6.0): one-shot recvmsg into the driver's own buffers; no
 * UDP_SEGMENT or UDP_GRO: one datagram per packet; a GSO send the route
 * refuses (segment above the path MTU): the group is resent datagram by
 * datagram and GSO is turned off.
 */
#define _GNU_SOURCE
#include "xport.h"
#include "impair.h"

#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <srd/srd.h>

#ifndef UDP_SEGMENT
#  define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#  define UDP_GRO 104
#endif

/* Packets pulled from the engine per output round, and rounds per
   progress call (bounds the time one call spends sending). */
#define TX_BATCH 256
#define TX_ROUNDS 16
/* Bytes per round: a round's packets share one send time, so a round
   must not take the kernel long to send (256 KiB: tens of us). */
#define ROUND_BYTES (256u << 10)
/* Room for a header, or a whole packet without payload (the largest ACK
   is 572 bytes). */
#define HDR_CAP 640
/* A GSO send carries at most 64 segments and one UDP datagram's worth of
   bytes. */
#define GSO_MAX_SEGS 64
#define GSO_MAX_BYTES 65000
/* Completions taken from the engine per poll. */
#define CQ_BATCH 64
#define BGID 7
/* One-shot receive mode: receives kept armed on socket 0. */
#define ONESHOT_DEPTH 64
/* Memory for receive buffers. */
#define RX_MEM_BYTES (8u << 20)
/* A passive peer that is not established and has sent nothing for that
   long is dropped (a forged or abandoned handshake must not hold a slot).
   Silence, not age: a client restarted on the same ports re-handshakes
   on an old slot, and must not lose it halfway. */
#define PASSIVE_HS_TIMEOUT_NS (2ull * 1000000000ull)

/* Control space of a receive: the GRO segment size and the arrival time. */
#define RX_CTL_SPACE                                                           \
  (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec)))

#define UD_KIND(u) ((u) >> 56)
#define UD_IDX(u) ((u)&0xffffffffu)
#define UD_RXM 1ull /* multishot recvmsg on socket IDX */
#define UD_RX1 2ull /* one-shot recvmsg, slot IDX */
/* Datagrams one recvmmsg(2) of the busy poll reads, and how many such
   calls one poll makes at most. */
#define DIRECT_BATCH 8
#define DIRECT_ROUNDS 8
#define UD_TX 3ull  /* sendmsg of tx message IDX */
#define UD_TXH 4ull /* sendmsg of a held (impaired) datagram, slot IDX */
#define UD(k, i) (((k) << 56) | (uint64_t)(i))

typedef struct upeer {
  int used;
  int passive;
  struct sockaddr_storage addr; /* the peer's base port */
  socklen_t alen;
  uint64_t last_rx; /* the last datagram from it (or its creation) */
} upeer;

typedef struct txpkt {
  uint8_t hdr[HDR_CAP];
  uint32_t hdrlen;
  srd_iovec payload;
  srd_path path;
  uint32_t len;
} txpkt;

typedef struct txmsg {
  struct msghdr mh;
  struct iovec iov[2 * GSO_MAX_SEGS];
  union {
    char buf[CMSG_SPACE(sizeof(uint16_t))];
    struct cmsghdr align;
  } ctl;
  uint32_t peer;
  uint16_t sock;
  uint16_t nseg;
  uint32_t seg; /* GSO segment size: the first packet's length */
  uint32_t bytes;
  int closed; /* a shorter last segment ends a GSO group */
  int pkts[GSO_MAX_SEGS];
} txmsg;

typedef struct rxslot { /* one-shot mode */
  struct msghdr mh;
  struct iovec iov;
  struct sockaddr_storage name;
  union {
    char buf[RX_CTL_SPACE];
    struct cmsghdr align;
  } ctl;
  uint16_t sock;
  uint8_t *buf;
} rxslot;

typedef struct held_send {
  struct msghdr mh;
  struct iovec iov;
  impair_pkt pkt;
  int busy;
} held_send;

typedef struct xport_uring {
  xport base;
  xport_config cfg;
  struct io_uring ring;
  unsigned ring_flags;
  int family;
  uint32_t nfd;
  int fd[XPORT_MAX_PATHS];
  uint16_t port0;
  srd_ep *ep;
  size_t max_pkt;
  /* peers, indexed by srd_peer_id */
  upeer *peers;
  uint32_t max_peers;
  uint32_t last_hit;
  /* receive */
  int multishot;
  int gro;
  struct io_uring_buf_ring *br;
  size_t br_bytes;
  unsigned nbuf;
  size_t bufsz;
  uint8_t *rxmem;
  struct msghdr rx_tmpl;
  int rx_armed[XPORT_MAX_PATHS];
  rxslot *slots;
  unsigned nslots;
  unsigned buf_adds;
  /* send */
  int gso;
  uint32_t burst;
  txpkt *tx;
  txmsg *msgs;
  unsigned tx_inflight;
  int gso_failed;
  uint32_t mtu;
  held_send *hs;
  unsigned nhs;
  /* impairments */
  int impair_on;
  impair imp;
  /* counters the engine does not keep */
  uint64_t sends, gso_sends, pkts_out, bytes_out, pkts_in, bytes_in;
  uint64_t unknown_src, rx_truncated, driver_bad;
  uint64_t last_gc;
  /* Kernel receive timestamps (SO_TIMESTAMPNS, CLOCK_REALTIME) and the
     offset that turns them into CLOCK_MONOTONIC; last_now keeps the time
     given to the engine from going backwards. */
  int rx_tstamp;
  int rt_valid; /* rt_off measured in this progress call */
  int64_t rt_off;
  uint64_t last_now;
  /* peek: the ring raises IORING_SQ_TASKRUN when completions wait to be
     run (TASKRUN_FLAG), so a poll enters the kernel only then. */
  int peek;
  unsigned rx_disarmed;  /* sockets whose multishot receive ended */
  uint64_t direct_sends; /* sendmsg(2) calls of our own (submit_msg) */
  /* direct_rx (busy-poll): socket 0, where every peer sends, is read with
     recvmmsg(2) on every poll instead of through the ring (direct_poll);
     the other sockets, which only send, keep their ring receive. */
  int direct_rx;
  unsigned rx_hits; /* direct_poll: polls in a row that found datagrams */
  /* With a single peer, the sockets but the base one (which hears every
     peer) are connected to it, and their sends name no address: the
     kernel then reuses the socket's route instead of looking one up per
     datagram (about half a microsecond on loopback).  conn_peer is that
     peer, or -1; npeers counts the peers. */
  int conn_peer;
  uint32_t npeers;
  rxslot *dslots;
  struct mmsghdr *dmm;
  uint8_t *dmem;
  char desc[512];
} xport_uring;

static void xlog(xport_uring *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void xlog(xport_uring *x, const char *fmt, ...) {
  char msg[400];
  va_list ap;

  if (x->cfg.log == NULL) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  x->cfg.log(x->cfg.user_data, msg);
}

/* ------------------------------------------------------------------------ */
/* Errors at the boundary: SRD_ERR_* to errno.                              */

static int srd_to_errno(int e) {
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
/* Addresses and peers                                                      */

static uint16_t sa_port(const struct sockaddr_storage *ss) {
  return ss->ss_family == AF_INET
             ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
             : ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static void sa_set_port(struct sockaddr_storage *ss, uint16_t port) {
  if (ss->ss_family == AF_INET) {
    ((struct sockaddr_in *)ss)->sin_port = htons(port);
  } else {
    ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
  }
}

static int sa_same_ip(const struct sockaddr_storage *a, const void *bv) {
  const struct sockaddr *b = bv;

  if (a->ss_family != b->sa_family) {
    return 0;
  }
  if (a->ss_family == AF_INET) {
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)b)->sin_addr.s_addr;
  }
  return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* find_peer returns the peer whose port range holds |sa|, or -1. */
static int find_peer(xport_uring *x, const void *sav) {
  const struct sockaddr *sa = sav;
  uint16_t port;
  int best = -1;
  uint16_t best_base = 0;
  uint32_t i;

  if (sa->sa_family == AF_INET) {
    port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
  } else {
    return -1;
  }
  /* The common case: the peer of the previous datagram. */
  i = x->last_hit;
  if (i < x->max_peers && x->peers[i].used) {
    uint16_t b = sa_port(&x->peers[i].addr);
    if (port >= b && port - b < XPORT_MAX_PATHS &&
        sa_same_ip(&x->peers[i].addr, sa)) {
      /* Still the largest base <= port?  Only a peer of the same ip whose
         base lies in (b, port] could be better; such ranges are rare,
         check them all only when more than one peer exists. */
      best = (int)i;
      best_base = b;
      if (x->npeers == 1) {
        return best;
      }
    }
  }
  for (i = 0; i < x->max_peers; ++i) {
    uint16_t b;
    if (!x->peers[i].used || (int)i == best) {
      continue;
    }
    b = sa_port(&x->peers[i].addr);
    if (port >= b && port - b < XPORT_MAX_PATHS &&
        (best < 0 || b > best_base) && sa_same_ip(&x->peers[i].addr, sa)) {
      best = (int)i;
      best_base = b;
    }
  }
  if (best >= 0) {
    x->last_hit = (uint32_t)best;
  }
  return best;
}

/* connect_sends connects the sending sockets to the only peer, or
   disconnects them when there is not exactly one. */
static void connect_sends(xport_uring *x) {
  struct sockaddr_storage un;
  int want = -1;
  uint32_t i, k;

  if (x->npeers == 1) {
    for (i = 0; i < x->max_peers && !x->peers[i].used; ++i) {
    }
    want = i < x->max_peers ? (int)i : -1;
  }
  if (want == x->conn_peer) {
    return;
  }
  memset(&un, 0, sizeof(un));
  un.ss_family = AF_UNSPEC;
  for (i = 1; i < x->nfd; ++i) {
    if (want < 0) {
      connect(x->fd[i], (struct sockaddr *)&un, sizeof(un));
    } else if (connect(x->fd[i], (struct sockaddr *)&x->peers[want].addr,
                       x->peers[want].alen) != 0) {
      /* Not all of them: undo, and keep naming the address. */
      xlog(x, "connect: %s; sends name their address", strerror(errno));
      for (k = 1; k < i; ++k) {
        connect(x->fd[k], (struct sockaddr *)&un, sizeof(un));
      }
      want = -1;
      break;
    }
  }
  x->conn_peer = want;
}

static int new_peer(xport_uring *x, const struct sockaddr_storage *ss,
                    socklen_t len, int passive, xport_peer *ppeer) {
  srd_peer_settings ps;
  srd_peer_id id;
  int rv;

  srd_peer_settings_default(&ps);
  ps.n_paths = x->nfd;
  rv = srd_ep_add_peer(x->ep, &ps, &id);
  if (rv != 0) {
    return srd_to_errno(rv);
  }
  if (id >= x->max_peers) {
    srd_ep_remove_peer(x->ep, id, xport_now());
    return -EAGAIN;
  }
  memset(&x->peers[id], 0, sizeof(x->peers[id]));
  x->peers[id].used = 1;
  x->peers[id].passive = passive;
  memcpy(&x->peers[id].addr, ss, len);
  x->peers[id].alen = len;
  x->peers[id].last_rx = xport_now();
  ++x->npeers;
  connect_sends(x);
  *ppeer = id;
  return 0;
}

static int uring_add_peer(xport *xp, const struct sockaddr *addr, socklen_t len,
                          xport_peer *ppeer) {
  xport_uring *x = (xport_uring *)xp;
  struct sockaddr_storage ss;

  if (addr == NULL || addr->sa_family != x->family || len > sizeof(ss)) {
    return -EINVAL;
  }
  memset(&ss, 0, sizeof(ss));
  memcpy(&ss, addr, len);
  return new_peer(x, &ss, len, 0, ppeer);
}

static int uring_remove_peer(xport *xp, xport_peer peer) {
  xport_uring *x = (xport_uring *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  srd_ep_remove_peer(x->ep, peer, xport_now());
  x->peers[peer].used = 0;
  --x->npeers;
  connect_sends(x);
  return 0;
}

/* gc_passive drops passive peers whose handshake never completed. */
static void gc_passive(xport_uring *x, uint64_t now) {
  uint32_t i;
  srd_peer_stats st;
  char a[80];

  if (now - x->last_gc < 100000000ull) {
    return;
  }
  x->last_gc = now;
  for (i = 0; i < x->max_peers; ++i) {
    upeer *p = &x->peers[i];
    if (!p->used || !p->passive || now - p->last_rx < PASSIVE_HS_TIMEOUT_NS) {
      continue;
    }
    if (srd_ep_get_peer_stats(x->ep, i, &st) == 0 &&
        st.state != SRD_PEER_STATE_ESTABLISHED) {
      xlog(x, "dropping peer %s: no handshake completed, and silent for 2 s",
           xport_format_addr((struct sockaddr *)&p->addr, a, sizeof(a)));
      srd_ep_remove_peer(x->ep, i, now);
      p->used = 0;
      --x->npeers;
      connect_sends(x);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Input                                                                    */

/* input_datagram hands a received datagram (a GRO train of |gso_size|
   segments, or one) to the engine.  The engine's clock is the kernel's
   arrival time when there is one: the time a datagram waited in the
   socket for a sleeping thread then counts as the receiver's hold time,
   which the ACK reports and the sender subtracts, and not as path delay
   that the delay-based congestion control would answer by shrinking its
   window.  The clock is kept monotonic and never ahead of |now|. */
static void input_datagram(xport_uring *x, uint16_t sock, const void *name,
                           socklen_t namelen, int gso_size, uint8_t *data,
                           size_t len, uint64_t arrival, uint64_t now) {
  int pi;
  size_t off, seg;
  srd_path path;

  (void)sock;
  if (namelen < sizeof(struct sockaddr_in)) {
    ++x->driver_bad;
    return;
  }
  pi = find_peer(x, name);
  if (pi < 0) {
    xport_peer id;
    struct sockaddr_storage ss;
    srd_pkt_info info;
    uint16_t hpath, port;
    size_t first =
        gso_size > 0 && (size_t)gso_size < len ? (size_t)gso_size : len;

    /* Only an intact request to open a session earns a peer slot. */
    if (!x->cfg.listen || srd_pkt_peek(data, first, &info) != 0 ||
        info.type != SRD_PKT_TYPE_HS_REQ || info.dst_conn != 0 ||
        info.hdrlen != first || (hpath = info.path) >= XPORT_MAX_PATHS ||
        namelen > sizeof(ss)) {
      ++x->unknown_src;
      ++x->driver_bad;
      return;
    }
    memset(&ss, 0, sizeof(ss));
    memcpy(&ss, name, namelen);
    port = sa_port(&ss);
    if (port <= hpath) {
      ++x->driver_bad;
      return;
    }
    sa_set_port(&ss, (uint16_t)(port - hpath));
    if (new_peer(x, &ss, namelen, 1, &id) != 0) {
      ++x->driver_bad;
      xlog(x, "no room for a new peer (max_peers)");
      return;
    }
    pi = (int)id;
  }
  x->peers[pi].last_rx = now;
  /* A datagram that arrived after |now| was taken keeps its own, later
     time (clamping it to |now| would overstate the hold time the ACK
     reports, and so understate the sender's RTT sample); the engine's
     later calls then use at least that time (tnow). */
  if (arrival == 0) {
    arrival = now;
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
    srd_ep_read_pkt(x->ep, &path, data + off, n, arrival);
    if (len == 0) {
      break;
    }
  }
}

/* parse_cmsg reads the GRO segment size and the arrival time. */
static void parse_cmsg(xport_uring *x, struct cmsghdr *c, int *gs,
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

/* get_sqe returns a free submission entry, submitting the queued ones to
   make room if need be; NULL if the ring is still full. */
static struct io_uring_sqe *get_sqe(xport_uring *x) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);

  if (sqe == NULL) {
    io_uring_submit(&x->ring);
    sqe = io_uring_get_sqe(&x->ring);
  }
  return sqe;
}

static int arm_multishot(xport_uring *x, uint16_t sock) {
  struct io_uring_sqe *sqe = get_sqe(x);

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

static int arm_oneshot(xport_uring *x, unsigned slot) {
  rxslot *s = &x->slots[slot];
  struct io_uring_sqe *sqe = get_sqe(x);

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

static int setup_oneshot(xport_uring *x) {
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
static void multishot_unsupported(xport_uring *x, int err) {
  uint32_t i;

  xlog(x,
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
  if (setup_oneshot(x) != 0) {
    xlog(x, "one-shot receive setup failed");
  }
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */

static void on_tx_result(xport_uring *x, unsigned mi, int res);

/* submit_msg sends tx message |mi|: by the ring, or |direct|ly. */
static void submit_msg(xport_uring *x, unsigned mi, int direct) {
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
  sqe = get_sqe(x);
  io_uring_prep_sendmsg(sqe, x->fd[m->sock], &m->mh, 0);
  io_uring_sqe_set_data64(sqe, UD(UD_TX, mi));
  ++x->tx_inflight;
}

static void reap(xport_uring *x, uint64_t now);

/* tnow keeps the engine's clock monotonic: |now|, or a later arrival time
   already given to it. */
static uint64_t tnow(xport_uring *x, uint64_t now) {
  if (now < x->last_now) {
    now = x->last_now;
  }
  x->last_now = now;
  return now;
}

/* resend_singly sends a refused GSO group's packets one by one, now,
   synchronously (their payloads are still valid). */
static void resend_singly(xport_uring *x, unsigned mi) {
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

static void send_held(xport_uring *x, uint64_t now) {
  impair_pkt pkt;
  unsigned i;

  for (i = 0; i < x->nhs; ++i) {
    held_send *h = &x->hs[i];
    struct io_uring_sqe *sqe;
    upeer *p;

    if (h->busy) {
      continue;
    }
    if (!impair_pop(&x->imp, now, &pkt)) {
      break;
    }
    p = pkt.peer < x->max_peers ? &x->peers[pkt.peer] : NULL;
    if (p == NULL || !p->used) {
      impair_release(&x->imp, pkt.data);
      continue;
    }
    h->pkt = pkt;
    h->iov.iov_base = pkt.data;
    h->iov.iov_len = pkt.len;
    memset(&h->mh, 0, sizeof(h->mh));
    h->mh.msg_name = &p->addr;
    h->mh.msg_namelen = p->alen;
    h->mh.msg_iov = &h->iov;
    h->mh.msg_iovlen = 1;
    sqe = get_sqe(x);
    io_uring_prep_sendmsg(sqe, x->fd[pkt.path], &h->mh, 0);
    io_uring_sqe_set_data64(sqe, UD(UD_TXH, i));
    h->busy = 1;
    ++x->tx_inflight;
    ++x->sends;
    ++x->pkts_out;
    x->bytes_out += pkt.len;
  }
}

/* add_to_group puts packet |ti| into the open GSO group of its socket, or
   opens one.  |open| maps socket to the open message index (or -1). */
static void add_to_group(xport_uring *x, int *open, unsigned *nmsg,
                         unsigned ti) {
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

/* output sends what the engine has due, in rounds of up to TX_BATCH
   packets; returns how many packets were written. */
static unsigned output(xport_uring *x, uint64_t now) {
  unsigned total = 0, round;
  int open[XPORT_MAX_PATHS];

  for (round = 0; round < TX_ROUNDS; ++round) {
    unsigned n = 0, nmsg = 0, i;
    srd_ssize len;
    size_t bytes = 0;

    /* Each round's packets carry the time they are sent at. */
    now = tnow(x, round ? xport_now() : now);
    while (n < TX_BATCH && bytes < ROUND_BYTES) {
      txpkt *t = &x->tx[n];
      len =
          srd_ep_write_pktv(x->ep, &t->path, t->hdr, HDR_CAP, &t->payload, now);
      if (len <= 0) {
        if (len == SRD_ERR_NOBUF) {
          xlog(x, "engine packet larger than the header buffer");
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
        impair_verdict v;
        impair_judge(&x->imp, sock, t->len, now, &v);
        /* A copy that must wait, or be corrupted, leaves from the
           layer's pool: the payload points into the user's buffer, which
           the layer only reads.  The others go out now. */
        for (int c = 0; c < v.copies; ++c) {
          uint64_t at = c ? v.dup_at : v.at;
          if (at > now || v.flip[c]) {
            struct iovec iov[2] = {{t->hdr, t->hdrlen},
                                   {(void *)t->payload.base, t->payload.len}};
            impair_hold(&x->imp, sock, t->path.peer, iov, 2, at, v.flip[c]);
          } else {
            add_to_group(x, open, &nmsg, i);
          }
        }
        continue;
      }
      add_to_group(x, open, &nmsg, i);
    }
    for (i = 0; i < nmsg; ++i) {
      submit_msg(x, i, nmsg == 1);
    }
    /* Every payload must be sent before the user polls completions. */
    while (x->tx_inflight > 0) {
      int rv = io_uring_submit_and_wait(&x->ring, 1);
      if (rv < 0 && rv != -EINTR && rv != -EAGAIN && rv != -EBUSY) {
        xlog(x, "io_uring_submit_and_wait: %s", strerror(-rv));
        break;
      }
      reap(x, now);
    }
    if (n < TX_BATCH && bytes < ROUND_BYTES) {
      break;
    }
  }
  return total;
}

/* ------------------------------------------------------------------------ */
/* Completions of the ring                                                  */

static void on_rx_multishot(xport_uring *x, struct io_uring_cqe *cqe,
                            uint64_t now) {
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

static void on_rx_oneshot(xport_uring *x, struct io_uring_cqe *cqe,
                          uint64_t now) {
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

static void on_tx(xport_uring *x, struct io_uring_cqe *cqe) {
  --x->tx_inflight;
  on_tx_result(x, UD_IDX(cqe->user_data), cqe->res);
}

/* on_tx_result: the send of tx message |mi| returned |res|. */
static void on_tx_result(xport_uring *x, unsigned mi, int res) {
  if (res >= 0) {
    return;
  }
  if (x->msgs[mi].nseg > 1 &&
      (res == -EINVAL || res == -EIO || res == -EMSGSIZE)) {
    /* The route refused the GSO send (a segment above the path MTU, or a
       device without checksum offload): send datagram by datagram. */
    if (!x->gso_failed) {
      xlog(x,
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

static void reap(xport_uring *x, uint64_t now) {
  struct io_uring_cqe *cqe;
  unsigned head, n = 0;
  uint32_t i;

  io_uring_for_each_cqe(&x->ring, head, cqe) {
    ++n;
    switch (UD_KIND(cqe->user_data)) {
    case UD_RXM:
      if (x->multishot) {
        on_rx_multishot(x, cqe, now);
      }
      break;
    case UD_RX1:
      on_rx_oneshot(x, cqe, now);
      break;
    case UD_TX:
      on_tx(x, cqe);
      break;
    case UD_TXH: {
      held_send *h = &x->hs[UD_IDX(cqe->user_data)];
      --x->tx_inflight;
      impair_release(&x->imp, h->pkt.data);
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
        if (!x->rx_armed[i] && arm_multishot(x, (uint16_t)i) != 0) {
          ++x->rx_disarmed;
        }
      }
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                 */

/* direct_poll reads what waits on socket 0 with recvmmsg(2), for the busy
   poll: a datagram reaches the engine in the one system call that reads
   it, as in a raw UDP ping-pong, where the ring would take a wake-up, task
   work and a completion (docs/transports.md, "Latency"). */
static void direct_poll(xport_uring *x, uint64_t now) {
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

/* need_enter says whether io_uring_enter has work: requests to submit,
   completions that wait as task work (DEFER_TASKRUN runs them only when
   the thread enters) or in the overflow list.  A ring without
   TASKRUN_FLAG does not say, and is entered every time. */
static int need_enter(xport_uring *x) {
  return !x->peek || io_uring_sq_ready(&x->ring) ||
         (IO_URING_READ_ONCE(*x->ring.sq.kflags) &
          (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW));
}

static int uring_progress(xport *xp, uint64_t timeout_ns) {
  xport_uring *x = (xport_uring *)xp;
  uint64_t now = xport_now(), exp, deadline;
  int pass;

  for (pass = 0; pass < 2; ++pass) {
    unsigned before = (unsigned)x->pkts_in, sent;
    int rv, fired = 0;

    x->rt_valid = 0;
    /* What the user posted since the last call leaves first: a reply
       posted on a message just received does not wait behind the poll
       for the next datagram.  (A busy poll sent it when it was posted.) */
    sent = pass == 0 && !x->cfg.busy_poll ? output(x, tnow(x, now)) : 0;
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
      reap(x, now);
    }
    if (x->direct_rx) {
      direct_poll(x, now);
    }
    now = tnow(x, now);
    exp = srd_ep_get_expiry(x->ep);
    if (exp <= now) {
      srd_ep_handle_expiry(x->ep, now);
      fired = 1;
    }
    if (x->impair_on) {
      send_held(x, now);
    }
    sent += output(x, now);
    if (x->cfg.listen) {
      gc_passive(x, now);
    }
    if (pass == 1 || x->cfg.busy_poll || timeout_ns == 0 ||
        (unsigned)x->pkts_in != before || sent > 0 || fired) {
      break;
    }
    /* Nothing happened: sleep in the ring until a datagram, the engine's
       next deadline, a held datagram's departure or the timeout. */
    deadline = now + timeout_ns;
    exp = srd_ep_get_expiry(x->ep);
    if (exp < deadline) {
      deadline = exp;
    }
    if (x->impair_on && impair_next(&x->imp) < deadline) {
      deadline = impair_next(&x->imp);
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
    now = xport_now();
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */

static int uring_post_send(xport *xp, xport_peer peer, const void *buf,
                           size_t len, void *ctx) {
  xport_uring *x = (xport_uring *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  uint64_t now = tnow(x, xport_now());
  int rv = srd_ep_post_send(x->ep, peer, buf, len, ctx, now);

  /* A busy poll trades batching for latency: the message leaves now,
     not at the next progress call. */
  if (rv == 0 && x->cfg.busy_poll) {
    output(x, now);
  }
  return srd_to_errno(rv);
}

static int uring_post_recv(xport *xp, void *buf, size_t cap, void *ctx) {
  xport_uring *x = (xport_uring *)xp;

  return srd_to_errno(
      srd_ep_post_recv(x->ep, buf, cap, ctx, tnow(x, xport_now())));
}

static size_t uring_poll_cq(xport *xp, xport_cqe *out, size_t n) {
  xport_uring *x = (xport_uring *)xp;
  srd_cqe c[CQ_BATCH];
  size_t got = 0, k, i;

  while (got < n) {
    size_t want = n - got < CQ_BATCH ? n - got : CQ_BATCH;
    k = srd_ep_poll_cq(x->ep, c, want);
    for (i = 0; i < k; ++i) {
      xport_cqe *o = &out[got + i];
      o->op = c[i].op == SRD_OP_SEND ? XPORT_OP_SEND : XPORT_OP_RECV;
      o->status = srd_to_errno(c[i].status);
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

static void uring_get_stats(xport *xp, xport_stats *st) {
  xport_uring *x = (xport_uring *)xp;
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
  st->imp_lost = x->imp.lost;
  st->imp_dup = x->imp.dup;
  st->imp_delayed = x->imp.delayed;
  st->imp_queue_drops = x->imp.queue_drops;
  st->imp_blackholed = x->imp.blackholed;
  st->imp_corrupted = x->imp.corrupted;
  st->imp_dup_delayed = x->imp.dup_delayed;
  st->n_paths = x->nfd;
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

static int uring_local_addr(xport *xp, struct sockaddr_storage *ss,
                            socklen_t *len) {
  xport_uring *x = (xport_uring *)xp;

  *len = sizeof(*ss);
  return getsockname(x->fd[0], (struct sockaddr *)ss, len) ? -errno : 0;
}

static int uring_peer_addr(xport *xp, xport_peer peer,
                           struct sockaddr_storage *ss, socklen_t *len) {
  xport_uring *x = (xport_uring *)xp;

  if (peer >= x->max_peers || !x->peers[peer].used) {
    return -EINVAL;
  }
  *ss = x->peers[peer].addr;
  *len = x->peers[peer].alen;
  return 0;
}

static const char *uring_describe(xport *xp) {
  xport_uring *x = (xport_uring *)xp;

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

/* ------------------------------------------------------------------------ */
/* Open and close                                                           */

/* quiesce_ring cancels every request still in the ring and waits (at
   most ~100 ms) until they completed.  A request holds its socket: left
   to the ring's asynchronous teardown, the ports stay bound for a while
   after close, and a process restarted on the same ports (srd-perf
   --local-port) fails to bind them. */
static void quiesce_ring(xport_uring *x) {
  struct io_uring_sync_cancel_reg reg;
  struct io_uring_cqe *cqe;
  int tries, rv;

  memset(&reg, 0, sizeof(reg));
  reg.flags = IORING_ASYNC_CANCEL_ANY;
  reg.timeout.tv_sec = 0;
  reg.timeout.tv_nsec = 100000000;
  rv = io_uring_register_sync_cancel(&x->ring, &reg);
  if (rv == -ENOENT) {
    return; /* nothing in flight */
  }
  if (rv < 0) {
    /* No synchronous cancel (Linux < 6.0): an asynchronous one. */
    struct io_uring_sqe *sqe = get_sqe(x);
    if (sqe == NULL) {
      return;
    }
    io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
    io_uring_sqe_set_data64(sqe, 0);
  }
  /* Run the cancelled requests' completions (DEFER_TASKRUN runs them
     only when this thread enters) and drop them. */
  for (tries = 0; tries < 100; ++tries) {
    struct __kernel_timespec ts = {0, 1000000};
    unsigned head, n = 0;
    io_uring_submit_and_wait_timeout(&x->ring, &cqe, 1, &ts, NULL);
    io_uring_for_each_cqe(&x->ring, head, cqe) {
      ++n;
    }
    io_uring_cq_advance(&x->ring, n);
    if (n == 0) {
      break;
    }
  }
}

static void uring_close(xport *xp) {
  xport_uring *x = (xport_uring *)xp;
  uint32_t i;

  if (x == NULL) {
    return;
  }
  if (x->ring.ring_fd > 0) {
    quiesce_ring(x);
    io_uring_queue_exit(&x->ring);
  }
  for (i = 0; i < x->nfd; ++i) {
    if (x->fd[i] >= 0) {
      close(x->fd[i]);
    }
  }
  if (x->br) {
    munmap(x->br, x->br_bytes);
  }
  free(x->rxmem);
  free(x->slots);
  free(x->dmem);
  free(x->dmm);
  free(x->dslots);
  free(x->tx);
  free(x->msgs);
  free(x->hs);
  free(x->peers);
  if (x->impair_on) {
    impair_fini(&x->imp);
  }
  srd_ep_del(x->ep);
  free(x);
}

static int make_socket(xport_uring *x, const struct sockaddr_storage *ss,
                       socklen_t len) {
  int fd = socket(x->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
  int sz = 4 << 20, one = 1;

  if (fd < 0) {
    return -errno;
  }
  if (x->family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  /* Large buffers: a burst of 64 KB GSO sends must not overflow them.
     SO_*BUFFORCE works as root; otherwise rmem_max caps the request. */
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
  }
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
  }
  if (bind(fd, (const struct sockaddr *)ss, len) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  return fd;
}

/* bind_ports binds n consecutive ports from cfg.port, or finds a free
   range when cfg.port is 0. */
static int bind_ports(xport_uring *x) {
  struct sockaddr_storage ss;
  socklen_t len;
  int tries, rv;
  uint32_t i;
  char a[80];

  if (x->cfg.bind_addr) {
    rv = xport_parse_addr(x->cfg.bind_addr, 0, x->family, &ss, &len);
    if (rv != 0) {
      xlog(x, "bad local address '%s'", x->cfg.bind_addr);
      return rv;
    }
  } else {
    memset(&ss, 0, sizeof(ss));
    ss.ss_family = (sa_family_t)x->family;
    len = x->family == AF_INET ? sizeof(struct sockaddr_in)
                               : sizeof(struct sockaddr_in6);
  }
  for (tries = 0; tries < 64; ++tries) {
    uint16_t base = x->cfg.port;
    struct sockaddr_storage b = ss;
    socklen_t bl = sizeof(b);

    sa_set_port(&b, base);
    rv = make_socket(x, &b, len);
    if (rv < 0) {
      xlog(x, "bind %s: %s",
           xport_format_addr((struct sockaddr *)&b, a, sizeof(a)),
           strerror(-rv));
      return rv;
    }
    x->fd[0] = rv;
    getsockname(x->fd[0], (struct sockaddr *)&b, &bl);
    base = sa_port(&b);
    x->port0 = base;
    for (i = 1; i < x->nfd; ++i) {
      if (base + i > 65535) {
        rv = -EADDRINUSE;
        break;
      }
      sa_set_port(&b, (uint16_t)(base + i));
      rv = make_socket(x, &b, len);
      if (rv < 0) {
        break;
      }
      x->fd[i] = rv;
    }
    if (i == x->nfd) {
      return 0;
    }
    /* A port of the range is taken: with a fixed port that is the
       user's error; otherwise try another range. */
    for (uint32_t k = 0; k < i; ++k) {
      close(x->fd[k]);
      x->fd[k] = -1;
    }
    if (x->cfg.port) {
      xlog(x,
           "port %u is in use: the srd transport binds %u consecutive "
           "ports %u-%u",
           base + i, x->nfd, base, base + x->nfd - 1);
      return rv;
    }
  }
  xlog(x, "found no %u consecutive free ports", x->nfd);
  return -EADDRINUSE;
}

static int setup_ring(xport_uring *x) {
  /* DEFER_TASKRUN runs completions only when the driver enters the ring,
     in one batch, on its own thread: the cheapest for both modes (a ring
     whose completions interrupt a spinning thread measured 2.5x slower
     round trips here).  TASKRUN_FLAG (Linux 5.19) raises
     IORING_SQ_TASKRUN in the shared ring when such work is queued, so a
     busy poll reads one word and enters the kernel only when a datagram
     came (need_enter).  Older kernels get COOP_TASKRUN, then plain. */
  static const unsigned tries[] = {
      IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
          IORING_SETUP_TASKRUN_FLAG,
      IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
      IORING_SETUP_COOP_TASKRUN, 0};
  const size_t ntries = sizeof(tries) / sizeof(tries[0]);
  struct io_uring_params p;
  struct io_uring_probe *probe;
  int rv = -ENOSYS;
  size_t i;

  for (i = 0; i < ntries; ++i) {
    memset(&p, 0, sizeof(p));
    p.flags = tries[i] | IORING_SETUP_CQSIZE;
    p.cq_entries = 4096;
    rv = io_uring_queue_init_params(1024, &x->ring, &p);
    if (rv == 0) {
      x->ring_flags = tries[i];
      break;
    }
    if (rv == -ENOSYS || rv == -EPERM || rv == -ENOMEM) {
      break;
    }
  }
  if (rv != 0) {
    x->ring.ring_fd = -1;
    xlog(x,
         "io_uring unavailable: %s (disabled by kernel.io_uring_disabled, a "
         "seccomp filter or a container policy?)",
         strerror(-rv));
    return rv;
  }
  if (i > 0) {
    xlog(x, "io_uring: no SINGLE_ISSUER|DEFER_TASKRUN (Linux < 6.1); using %s",
         tries[i] == 0 ? "default task work"
         : (tries[i] & IORING_SETUP_TASKRUN_FLAG)
             ? "COOP_TASKRUN|TASKRUN_FLAG"
             : "COOP_TASKRUN (every poll enters the kernel)");
  }
  x->peek = (tries[i] & IORING_SETUP_TASKRUN_FLAG) != 0;
  /* A registered ring fd (Linux 5.18) spares every io_uring_enter the
     file lookup (fget/fput); without it the ring works the same. */
  io_uring_register_ring_fd(&x->ring);
  probe = io_uring_get_probe_ring(&x->ring);
  if (probe == NULL || !io_uring_opcode_supported(probe, IORING_OP_SENDMSG) ||
      !io_uring_opcode_supported(probe, IORING_OP_RECVMSG)) {
    xlog(x, "io_uring lacks SENDMSG/RECVMSG (needs Linux 5.3)");
    if (probe) {
      io_uring_free_probe(probe);
    }
    return -ENOTSUP;
  }
  io_uring_free_probe(probe);
  return 0;
}

static int setup_rx(xport_uring *x) {
  struct io_uring_buf_reg reg;
  unsigned i;
  int rv, one = 1;

  x->gro = 0;
  if (!x->cfg.no_gro) {
    x->gro = 1;
    for (i = 0; i < x->nfd; ++i) {
      if (setsockopt(x->fd[i], SOL_UDP, UDP_GRO, &one, sizeof(one)) != 0) {
        xlog(x, "UDP_GRO not supported (%s); receiving unmerged datagrams",
             strerror(errno));
        x->gro = 0;
        break;
      }
    }
  }
  /* A busy poll reads each datagram as it lands: its arrival time is the
     time it is read, and the kernel's stamp would only cost a clock read
     and a control message per datagram. */
  x->rx_tstamp = !x->cfg.busy_poll;
  for (i = 0; x->rx_tstamp && i < x->nfd; ++i) {
    if (setsockopt(x->fd[i], SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) !=
        0) {
      xlog(x,
           "SO_TIMESTAMPNS not supported (%s); packets are timed when "
           "read",
           strerror(errno));
      x->rx_tstamp = 0;
      break;
    }
  }
  memset(&x->rx_tmpl, 0, sizeof(x->rx_tmpl));
  /* The kernel lays out io_uring_recvmsg_out (16 bytes), the name, the
     control messages: a name length that is a multiple of 8 keeps the
     cmsghdrs aligned. */
  x->rx_tmpl.msg_namelen = (sizeof(struct sockaddr_in6) + 7) & ~7u;
  x->rx_tmpl.msg_controllen = RX_CTL_SPACE;
  /* With GRO a buffer takes a merged 64 KB train; without, one packet. */
  x->bufsz = sizeof(struct io_uring_recvmsg_out) + x->rx_tmpl.msg_namelen +
             x->rx_tmpl.msg_controllen + (x->gro ? 65536 : x->max_pkt);
  x->bufsz = (x->bufsz + 63) & ~(size_t)63;
  if (x->cfg.busy_poll) {
    x->dslots = calloc(DIRECT_BATCH, sizeof(*x->dslots));
    x->dmm = calloc(DIRECT_BATCH, sizeof(*x->dmm));
    x->dmem = malloc((size_t)DIRECT_BATCH * x->bufsz);
    if (x->dslots == NULL || x->dmm == NULL || x->dmem == NULL) {
      return -ENOMEM;
    }
    for (i = 0; i < DIRECT_BATCH; ++i) {
      rxslot *d = &x->dslots[i];
      struct msghdr *mh = &x->dmm[i].msg_hdr;
      d->buf = x->dmem + (size_t)i * x->bufsz;
      d->iov.iov_base = d->buf;
      d->iov.iov_len = x->bufsz;
      mh->msg_name = &d->name;
      mh->msg_namelen = sizeof(d->name);
      mh->msg_iov = &d->iov;
      mh->msg_iovlen = 1;
      mh->msg_control = d->ctl.buf;
      mh->msg_controllen = sizeof(d->ctl.buf);
    }
    x->direct_rx = 1;
  }
  if (x->cfg.no_multishot) {
    return setup_oneshot(x);
  }
  for (x->nbuf = 4096; x->nbuf > 64 && x->nbuf * x->bufsz > RX_MEM_BYTES;) {
    x->nbuf /= 2;
  }
  x->br_bytes = x->nbuf * sizeof(struct io_uring_buf);
  x->br = mmap(NULL, x->br_bytes, PROT_READ | PROT_WRITE,
               MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (x->br == MAP_FAILED) {
    x->br = NULL;
    return -ENOMEM;
  }
  memset(&reg, 0, sizeof(reg));
  reg.ring_addr = (unsigned long)x->br;
  reg.ring_entries = x->nbuf;
  reg.bgid = BGID;
  rv = io_uring_register_buf_ring(&x->ring, &reg, 0);
  if (rv != 0) {
    xlog(x,
         "provided buffer rings not supported (%s; needs Linux 5.19); using "
         "one-shot recvmsg",
         strerror(-rv));
    munmap(x->br, x->br_bytes);
    x->br = NULL;
    return setup_oneshot(x);
  }
  x->rxmem = aligned_alloc(4096, ((size_t)x->nbuf * x->bufsz + 4095) & ~4095ul);
  if (x->rxmem == NULL) {
    return -ENOMEM;
  }
  io_uring_buf_ring_init(x->br);
  for (i = 0; i < x->nbuf; ++i) {
    io_uring_buf_ring_add(x->br, x->rxmem + (size_t)i * x->bufsz,
                          (unsigned)x->bufsz, (unsigned short)i,
                          io_uring_buf_ring_mask(x->nbuf), (int)i);
  }
  io_uring_buf_ring_advance(x->br, (int)x->nbuf);
  x->multishot = 1;
  for (i = x->direct_rx ? 1 : 0; i < x->nfd; ++i) {
    if ((rv = arm_multishot(x, (uint16_t)i)) != 0) {
      return rv;
    }
  }
  return 0;
}

static int uring_open(xport **px, const xport_config *cfg) {
  xport_uring *x;
  srd_settings s;
  uint32_t i;
  int rv, v;
  socklen_t vl = sizeof(v);

  if (cfg->n_paths < 1 || cfg->n_paths > XPORT_MAX_PATHS || cfg->burst < 1 ||
      cfg->burst > GSO_MAX_SEGS || cfg->max_msg_size == 0) {
    return -EINVAL;
  }
  x = calloc(1, sizeof(*x));
  if (x == NULL) {
    return -ENOMEM;
  }
  x->base.ops = &xport_uring_ops;
  x->cfg = *cfg;
  x->family = cfg->family;
  x->nfd = cfg->n_paths;
  x->burst = cfg->burst;
  x->ring.ring_fd = -1;
  x->conn_peer = -1;
  for (i = 0; i < XPORT_MAX_PATHS; ++i) {
    x->fd[i] = -1;
  }
  if (x->cfg.seed == 0 &&
      getrandom(&x->cfg.seed, sizeof(x->cfg.seed), 0) != sizeof(x->cfg.seed)) {
    x->cfg.seed = xport_now() ^ ((uint64_t)getpid() << 32);
  }
  srd_settings_default(&s);
  s.seed = x->cfg.seed;
  /* mtu 0: the largest the wire format allows; a peer with a smaller
     one (the client, which knows its route) wins in the handshake. */
  s.mtu = cfg->mtu ? cfg->mtu : 65000;
  x->mtu = s.mtu;
  s.max_msg_size = cfg->max_msg_size;
  s.max_sends = cfg->max_sends;
  s.max_recvs = cfg->max_recvs;
  if (s.unexp_bytes < cfg->max_msg_size) {
    s.unexp_bytes = cfg->max_msg_size;
  }
  if (cfg->cc) {
    s.cc = cfg->cc;
  }
  /* A kernel UDP path is not a NIC: its round trips carry tens to
     hundreds of microseconds of scheduling and batching noise, and a
     sleeping peer holds packets for a wake-up before it answers.  The
     engine's hardware-scale defaults (25 us delay target, 100 us RTO
     floor) read that noise as congestion and loss, so this driver starts
     from 200 us and 1 ms (docs/transports.md); both are settings. */
  s.cc_target_qdelay =
      cfg->cc_target_qdelay_ns ? cfg->cc_target_qdelay_ns : 200 * SRD_US;
  s.rto_min = cfg->rto_min_ns ? cfg->rto_min_ns : 1 * SRD_MS;
  if (s.rto_max < 20 * s.rto_min) {
    s.rto_max = 20 * s.rto_min;
  }
  if (s.rto_initial < s.rto_min) {
    s.rto_initial = s.rto_min;
  }
  if (cfg->max_retries) {
    s.max_retries = cfg->max_retries;
  }
  rv = srd_ep_new(&x->ep, &s, srd_mem_default());
  if (rv != 0) {
    xlog(x, "srd_ep_new: %s", srd_strerror(rv));
    free(x);
    return rv == SRD_ERR_NOMEM ? -ENOMEM : -EINVAL;
  }
  x->max_pkt = srd_ep_max_pkt_size(x->ep);
  x->max_peers = s.max_peers;
  x->peers = calloc(x->max_peers, sizeof(*x->peers));
  x->tx = calloc(TX_BATCH, sizeof(*x->tx));
  x->msgs = calloc(2 * TX_BATCH, sizeof(*x->msgs));
  if (x->peers == NULL || x->tx == NULL || x->msgs == NULL) {
    rv = -ENOMEM;
    goto fail;
  }
  if ((rv = bind_ports(x)) != 0 || (rv = setup_ring(x)) != 0) {
    goto fail;
  }
  x->gso = !cfg->no_gso && cfg->burst > 1;
  if (x->gso && getsockopt(x->fd[0], SOL_UDP, UDP_SEGMENT, &v, &vl) != 0) {
    xlog(x, "UDP GSO not supported (%s); one datagram per packet",
         strerror(errno));
    x->gso = 0;
  }
  if ((rv = setup_rx(x)) != 0) {
    goto fail;
  }
  if (cfg->impair_on) {
    x->impair_on = 1;
    x->nhs = 256;
    x->hs = calloc(x->nhs, sizeof(*x->hs));
    if (x->hs == NULL || impair_init(&x->imp, cfg->impair, x->nfd,
                                     x->cfg.seed ^ 0x5eed1a7e5eed1a7eULL, 8192,
                                     x->max_pkt) != 0) {
      rv = -ENOMEM;
      goto fail;
    }
  }
  io_uring_submit(&x->ring);
  *px = &x->base;
  return 0;
fail:
  uring_close(&x->base);
  return rv;
}

const xport_ops xport_uring_ops = {
    .name = "srd",
    .open = uring_open,
    .close = uring_close,
    .add_peer = uring_add_peer,
    .remove_peer = uring_remove_peer,
    .post_send = uring_post_send,
    .post_recv = uring_post_recv,
    .poll_cq = uring_poll_cq,
    .progress = uring_progress,
    .get_stats = uring_get_stats,
    .local_addr = uring_local_addr,
    .peer_addr = uring_peer_addr,
    .describe = uring_describe,
};
