/*
 * xport_tcp.c: the "tcp" backend, kernel TCP as a user would otherwise
 * pick it: one connection per peer, messages framed by an 8-byte header
 * (u32 magic "SRDT", u32 length, big-endian), TCP_NODELAY, the kernel's
 * own buffers and loss recovery.  One connection is one 5-tuple, so an
 * ECMP fabric pins it to one path: the baseline that srd-perf puts next
 * to the udp backend.
 *
 * Semantics, in the same API as srd: a send completes when the kernel
 * has taken all its bytes (as UCX's tcp transport does), in order per
 * connection; a receive takes the next message of any connection, in
 * posting order.  With no receive posted a connection is simply not read
 * (TCP's window pushes back; nothing is refused).  A message longer than
 * its receive buffer completes that receive with -EMSGSIZE and its bytes
 * are skipped.  A connection that fails (refused, reset, closed, or a
 * frame that is not ours) fails every send queued on it with the errno.
 *
 * I/O: non-blocking sockets; writev of up to 32 queued messages per call;
 * reads go straight into the posted buffer for the bulk of a large
 * message and through a 256 KiB staging buffer for headers and small
 * messages.  Blocking progress sleeps in poll(2); busy-poll never does.
 */
#define _GNU_SOURCE
#include "xport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define TCP_MAGIC 0x53524454u /* "SRDT" */
#define FRAME_HDR 8
#define STAGE_SIZE (256u << 10)
#define DIRECT_MIN (16u << 10) /* read straight into the user's buffer */
#define MAX_CONNS 256
#define WRITEV_MSGS 32
#define READ_BUDGET (8u << 20) /* bytes per connection per progress */

typedef struct tsend {
  const uint8_t *buf;
  size_t len;
  void *ctx;
  uint8_t hdr[FRAME_HDR];
  size_t done; /* bytes of header + payload written */
  int next;
} tsend;

typedef struct trecv {
  uint8_t *buf;
  size_t cap;
  void *ctx;
} trecv;

typedef struct tconn {
  int used;
  int fd;
  int connecting;
  int err; /* the connection's failure, 0 while it works */
  struct sockaddr_storage addr;
  socklen_t alen;
  int sq_head, sq_tail; /* queued sends (indices into sends) */
  /* receive state */
  uint8_t *stage;
  size_t stage_len, stage_off;
  int in_body;
  uint8_t hdr[FRAME_HDR];
  size_t hdr_got;
  uint32_t body_len;
  size_t body_got;
  int rslot; /* the receive this message fills, or -1 to skip it */
  uint64_t retrans_seen;
} tconn;

typedef struct xport_tcp {
  xport base;
  xport_config cfg;
  int lfd;
  tconn conns[MAX_CONNS];
  /* first_conn: where the next pass starts reading, one further each
     pass, so that connections share the posted receives in turn (a
     receive takes the next message of whichever connection is read
     first: in index order, the first ones took them all). */
  int first_conn;
  tsend *sends;
  int send_free;
  trecv *recvs;
  int *rfree;
  int n_rfree;
  int *rq; /* posted receives in posting order (ring) */
  uint32_t rq_head, rq_len, rq_cap;
  xport_cqe *cq; /* completions (ring) */
  uint32_t cq_head, cq_len, cq_cap;
  struct pollfd *pfd;
  int *pfd_conn;
  uint64_t msgs_sent, msgs_recv, msgs_err, bytes_out, bytes_in, syscalls;
  uint64_t bad_in, retrans_closed;
  char desc[256];
} xport_tcp;

static void tlog(xport_tcp *x, const char *msg) {
  if (x->cfg.log) {
    x->cfg.log(x->cfg.user_data, msg);
  }
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void complete(xport_tcp *x, xport_op op, int status, xport_peer peer,
                     void *buf, size_t len, void *ctx) {
  xport_cqe *c = &x->cq[(x->cq_head + x->cq_len++) % x->cq_cap];

  c->op = op;
  c->status = status;
  c->detail = 0;
  c->peer = peer;
  c->buf = buf;
  c->len = len;
  c->ctx = ctx;
  if (status == 0) {
    if (op == XPORT_OP_SEND) {
      ++x->msgs_sent;
    } else {
      ++x->msgs_recv;
    }
  } else {
    ++x->msgs_err;
  }
}

static void set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);

  fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static uint64_t conn_retrans(tconn *c) {
  struct tcp_info ti;
  socklen_t l = sizeof(ti);

  if (c->fd >= 0 && getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0) {
    return ti.tcpi_total_retrans;
  }
  return c->retrans_seen;
}

/* conn_fail ends connection |id| with |err|: its queued sends and the
   receive it was filling complete in error. */
static void conn_fail(xport_tcp *x, int id, int err) {
  tconn *c = &x->conns[id];
  char msg[200], a[80];

  if (c->err) {
    return;
  }
  c->retrans_seen = conn_retrans(c);
  x->retrans_closed += c->retrans_seen;
  c->err = err;
  /* A peer that closes with nothing outstanding is a normal end. */
  if (!((err == -ECONNRESET || err == -ECANCELED) && c->sq_head < 0 &&
        !c->in_body)) {
    snprintf(msg, sizeof(msg), "tcp peer %s: %s",
             xport_format_addr((struct sockaddr *)&c->addr, a, sizeof(a)),
             strerror(-err));
    tlog(x, msg);
  }
  while (c->sq_head >= 0) {
    int i = c->sq_head;
    tsend *s = &x->sends[i];
    c->sq_head = s->next;
    complete(x, XPORT_OP_SEND, err, (xport_peer)id, (void *)s->buf, s->len,
             s->ctx);
    s->next = x->send_free;
    x->send_free = i;
  }
  c->sq_tail = -1;
  if (c->in_body && c->rslot >= 0) {
    trecv *r = &x->recvs[c->rslot];
    complete(x, XPORT_OP_RECV, -ECONNABORTED, (xport_peer)id, r->buf,
             c->body_len, r->ctx);
    x->rfree[x->n_rfree++] = c->rslot;
  }
  c->in_body = 0;
  c->rslot = -1;
  if (c->fd >= 0) {
    close(c->fd);
    c->fd = -1;
  }
}

static int conn_new(xport_tcp *x, int fd, const struct sockaddr_storage *ss,
                    socklen_t len) {
  int i, one = 1;
  tconn *c;

  for (i = 0; i < MAX_CONNS && x->conns[i].used; ++i) {
  }
  if (i == MAX_CONNS) {
    return -EAGAIN;
  }
  c = &x->conns[i];
  if (c->stage == NULL && (c->stage = malloc(STAGE_SIZE)) == NULL) {
    return -ENOMEM;
  }
  c->used = 1;
  c->fd = fd;
  c->connecting = 0;
  c->err = 0;
  memcpy(&c->addr, ss, len);
  c->alen = len;
  c->sq_head = c->sq_tail = -1;
  c->stage_len = c->stage_off = 0;
  c->in_body = 0;
  c->hdr_got = 0;
  c->rslot = -1;
  c->retrans_seen = 0;
  set_nonblock(fd);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return i;
}

/* set_cc gives socket |fd| the kernel congestion control cfg.cc names
   (TCP_CONGESTION), if one is named: a namespace's default
   (net.ipv4.tcp_congestion_control) may only be set to the algorithms
   net.ipv4.tcp_allowed_congestion_control lists, but a process with
   CAP_NET_ADMIN may give its own sockets any that is available.
   Accepted connections inherit the listening socket's.  Returns 0, or
   -errno (-ENOENT: no such algorithm here; -EPERM: not allowed) after
   saying so to the log. */
static int set_cc(xport_tcp *x, int fd) {
  const char *cc = x->cfg.cc;
  char msg[160];
  int rv;

  if (cc == NULL || cc[0] == '\0') {
    return 0;
  }
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) ==
      0) {
    return 0;
  }
  rv = -errno;
  snprintf(msg, sizeof(msg), "tcp: congestion control '%s': %s", cc,
           strerror(errno));
  tlog(x, msg);
  return rv;
}

static int tcp_add_peer(xport *xp, const struct sockaddr *addr, socklen_t len,
                        xport_peer *ppeer) {
  xport_tcp *x = (xport_tcp *)xp;
  struct sockaddr_storage ss;
  int fd, id, one = 1;

  if (addr == NULL || addr->sa_family != x->cfg.family || len > sizeof(ss)) {
    return -EINVAL;
  }
  memset(&ss, 0, sizeof(ss));
  memcpy(&ss, addr, len);
  fd = socket(x->cfg.family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) {
    return -errno;
  }
  if ((id = set_cc(x, fd)) != 0) {
    close(fd);
    return id;
  }
  if (x->cfg.bind_addr || x->cfg.port) {
    struct sockaddr_storage b;
    socklen_t bl;
    int rv = x->cfg.bind_addr
                 ? xport_parse_addr(x->cfg.bind_addr, x->cfg.port,
                                    x->cfg.family, &b, &bl)
                 : xport_parse_addr(x->cfg.family == AF_INET ? "0.0.0.0" : "::",
                                    x->cfg.port, x->cfg.family, &b, &bl);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (rv != 0 || bind(fd, (struct sockaddr *)&b, bl) != 0) {
      rv = rv ? rv : -errno;
      close(fd);
      return rv;
    }
  }
  id = conn_new(x, fd, &ss, len);
  if (id < 0) {
    close(fd);
    return id;
  }
  if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
    if (errno == EINPROGRESS) {
      x->conns[id].connecting = 1;
    } else {
      conn_fail(x, id, -errno);
    }
  }
  *ppeer = (xport_peer)id;
  return 0;
}

static int tcp_remove_peer(xport *xp, xport_peer peer) {
  xport_tcp *x = (xport_tcp *)xp;

  if (peer >= MAX_CONNS || !x->conns[peer].used) {
    return -EINVAL;
  }
  conn_fail(x, (int)peer, -ECANCELED);
  x->conns[peer].used = 0;
  return 0;
}

static int tcp_post_send(xport *xp, xport_peer peer, const void *buf,
                         size_t len, void *ctx) {
  xport_tcp *x = (xport_tcp *)xp;
  tconn *c;
  tsend *s;
  int i;

  if (peer >= MAX_CONNS || !x->conns[peer].used || (buf == NULL && len)) {
    return -EINVAL;
  }
  if (len > x->cfg.max_msg_size) {
    return -EMSGSIZE;
  }
  if (x->send_free < 0) {
    return -EAGAIN;
  }
  c = &x->conns[peer];
  i = x->send_free;
  s = &x->sends[i];
  x->send_free = s->next;
  s->buf = buf;
  s->len = len;
  s->ctx = ctx;
  s->done = 0;
  s->next = -1;
  put_be32(s->hdr, TCP_MAGIC);
  put_be32(s->hdr + 4, (uint32_t)len);
  if (c->err) {
    complete(x, XPORT_OP_SEND, c->err, peer, (void *)buf, len, ctx);
    s->next = x->send_free;
    x->send_free = i;
    return 0;
  }
  if (c->sq_tail >= 0) {
    x->sends[c->sq_tail].next = i;
  } else {
    c->sq_head = i;
  }
  c->sq_tail = i;
  return 0;
}

static int tcp_post_recv(xport *xp, void *buf, size_t cap, void *ctx) {
  xport_tcp *x = (xport_tcp *)xp;
  int i;

  if (buf == NULL && cap) {
    return -EINVAL;
  }
  if (x->n_rfree == 0) {
    return -EAGAIN;
  }
  i = x->rfree[--x->n_rfree];
  x->recvs[i].buf = buf;
  x->recvs[i].cap = cap;
  x->recvs[i].ctx = ctx;
  x->rq[(x->rq_head + x->rq_len++) % x->rq_cap] = i;
  return 0;
}

static size_t tcp_poll_cq(xport *xp, xport_cqe *out, size_t n) {
  xport_tcp *x = (xport_tcp *)xp;
  size_t k = 0;

  while (k < n && x->cq_len) {
    out[k++] = x->cq[x->cq_head];
    x->cq_head = (x->cq_head + 1) % x->cq_cap;
    --x->cq_len;
  }
  return k;
}

/* conn_write writes queued sends; returns bytes written, or -EAGAIN when
   the socket is full. */
static ssize_t conn_write(xport_tcp *x, int id) {
  tconn *c = &x->conns[id];
  ssize_t total = 0;

  while (c->sq_head >= 0 && !c->err) {
    struct iovec iov[2 * WRITEV_MSGS];
    struct msghdr mh;
    int n = 0, i = c->sq_head, k = 0;
    ssize_t w;

    for (; i >= 0 && k < WRITEV_MSGS; i = x->sends[i].next, ++k) {
      tsend *s = &x->sends[i];
      if (s->done < FRAME_HDR) {
        iov[n].iov_base = s->hdr + s->done;
        iov[n++].iov_len = FRAME_HDR - s->done;
        if (s->len) {
          iov[n].iov_base = (void *)s->buf;
          iov[n++].iov_len = s->len;
        }
      } else {
        iov[n].iov_base = (void *)(s->buf + (s->done - FRAME_HDR));
        iov[n++].iov_len = s->len - (s->done - FRAME_HDR);
      }
    }
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = iov;
    mh.msg_iovlen = (size_t)n;
    w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    ++x->syscalls;
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return total ? total : -EAGAIN;
      }
      if (errno == EINTR) {
        continue;
      }
      conn_fail(x, id, -errno);
      return total;
    }
    total += w;
    x->bytes_out += (uint64_t)w;
    while (w > 0 && c->sq_head >= 0) {
      tsend *s = &x->sends[c->sq_head];
      size_t left = FRAME_HDR + s->len - s->done;
      if ((size_t)w < left) {
        s->done += (size_t)w;
        break;
      }
      w -= (ssize_t)left;
      i = c->sq_head;
      c->sq_head = s->next;
      if (c->sq_head < 0) {
        c->sq_tail = -1;
      }
      complete(x, XPORT_OP_SEND, 0, (xport_peer)id, (void *)s->buf, s->len,
               s->ctx);
      s->next = x->send_free;
      x->send_free = i;
    }
  }
  return total;
}

/* take_recv gives the message starting on connection |id| the oldest
   posted receive; returns 0 if none is posted. */
static int take_recv(xport_tcp *x, int id) {
  tconn *c = &x->conns[id];

  if (x->rq_len == 0) {
    return 0;
  }
  c->rslot = x->rq[x->rq_head];
  x->rq_head = (x->rq_head + 1) % x->rq_cap;
  --x->rq_len;
  if (x->recvs[c->rslot].cap < c->body_len) {
    /* Too long for the buffer: the receive fails, the bytes are
       skipped. */
    trecv *r = &x->recvs[c->rslot];
    complete(x, XPORT_OP_RECV, -EMSGSIZE, (xport_peer)id, r->buf, c->body_len,
             r->ctx);
    x->rfree[x->n_rfree++] = c->rslot;
    c->rslot = -1;
  }
  return 1;
}

static void finish_body(xport_tcp *x, int id) {
  tconn *c = &x->conns[id];

  if (c->rslot >= 0) {
    trecv *r = &x->recvs[c->rslot];
    complete(x, XPORT_OP_RECV, 0, (xport_peer)id, r->buf, c->body_len, r->ctx);
    x->rfree[x->n_rfree++] = c->rslot;
  }
  c->in_body = 0;
  c->hdr_got = 0;
  c->rslot = -1;
}

/* conn_read parses and reads what connection |id| has; returns the bytes
   read from the socket, or -EAGAIN if it would block right away. */
static ssize_t conn_read(xport_tcp *x, int id) {
  tconn *c = &x->conns[id];
  size_t budget = READ_BUDGET;
  ssize_t total = 0;

  while (!c->err && c->fd >= 0 && budget > 0) {
    size_t avail = c->stage_len - c->stage_off;
    ssize_t r;

    if (!c->in_body) {
      size_t k = FRAME_HDR - c->hdr_got;
      if (k > avail) {
        k = avail;
      }
      memcpy(c->hdr + c->hdr_got, c->stage + c->stage_off, k);
      c->hdr_got += k;
      c->stage_off += k;
      avail -= k;
      if (c->hdr_got == FRAME_HDR) {
        uint32_t len = get_be32(c->hdr + 4);
        if (get_be32(c->hdr) != TCP_MAGIC || len > x->cfg.max_msg_size) {
          ++x->bad_in;
          conn_fail(x, id, -EPROTO);
          break;
        }
        /* No receive posted: leave the rest in the kernel (TCP's window
           is the backpressure) until one is. */
        c->body_len = len;
        c->body_got = 0;
        if (!take_recv(x, id)) {
          break; /* the header stays parsed; read on once one is posted */
        }
        c->in_body = 1;
        if (len == 0) {
          finish_body(x, id);
        }
        continue;
      }
    } else {
      size_t need = c->body_len - c->body_got, k = need < avail ? need : avail;
      if (k) {
        if (c->rslot >= 0) {
          memcpy(x->recvs[c->rslot].buf + c->body_got, c->stage + c->stage_off,
                 k);
        }
        c->body_got += k;
        c->stage_off += k;
        avail -= k;
        need -= k;
      }
      if (need == 0) {
        finish_body(x, id);
        continue;
      }
      if (need >= DIRECT_MIN && c->rslot >= 0) {
        /* The bulk of a large message: straight into its buffer. */
        r = recv(c->fd, x->recvs[c->rslot].buf + c->body_got, need,
                 MSG_DONTWAIT);
        if (r > 0) {
          c->body_got += (size_t)r;
          total += r;
          budget = (size_t)r > budget ? 0 : budget - (size_t)r;
          x->bytes_in += (uint64_t)r;
          if (c->body_got == c->body_len) {
            finish_body(x, id);
          }
          continue;
        }
        goto rerr;
      }
    }
    if (avail > 0) {
      continue;
    }
    /* Refill the staging buffer. */
    c->stage_off = c->stage_len = 0;
    r = recv(c->fd, c->stage, STAGE_SIZE, MSG_DONTWAIT);
    if (r > 0) {
      c->stage_len = (size_t)r;
      total += r;
      budget = (size_t)r > budget ? 0 : budget - (size_t)r;
      x->bytes_in += (uint64_t)r;
      continue;
    }
  rerr:
    if (r == 0) {
      conn_fail(x, id, -ECONNRESET);
      break;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return total ? total : -EAGAIN;
    }
    if (errno == EINTR) {
      continue;
    }
    conn_fail(x, id, -errno);
    break;
  }
  return total;
}

static int wants_read(xport_tcp *x, tconn *c) {
  return !(c->hdr_got == FRAME_HDR && !c->in_body && x->rq_len == 0);
}

static int do_accept(xport_tcp *x) {
  int n = 0;

  while (x->lfd >= 0) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int fd = accept4(x->lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
    if (fd < 0) {
      break;
    }
    if (conn_new(x, fd, &ss, len) < 0) {
      tlog(x, "tcp: no room for another connection");
      close(fd);
      continue;
    }
    ++n;
  }
  return n;
}

/* pass does one non-blocking round over every connection; returns
   nonzero if anything moved. */
static int pass(xport_tcp *x) {
  int i, k, moved = do_accept(x);

  x->first_conn = (x->first_conn + 1) % MAX_CONNS;
  for (k = 0; k < MAX_CONNS; ++k) {
    i = (x->first_conn + k) % MAX_CONNS;
    tconn *c = &x->conns[i];
    if (!c->used || c->err) {
      continue;
    }
    if (c->connecting) {
      struct pollfd p = {.fd = c->fd, .events = POLLOUT};
      int e = 0;
      socklen_t l = sizeof(e);
      if (poll(&p, 1, 0) <= 0) {
        continue;
      }
      getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &l);
      if (e) {
        conn_fail(x, i, -e);
        moved = 1;
        continue;
      }
      c->connecting = 0;
      moved = 1;
    }
    if (c->sq_head >= 0 && conn_write(x, i) > 0) {
      moved = 1;
    }
    if (wants_read(x, c) && conn_read(x, i) != -EAGAIN) {
      moved = 1;
    }
  }
  return moved;
}

static int tcp_progress(xport *xp, uint64_t timeout_ns) {
  xport_tcp *x = (xport_tcp *)xp;
  int n = 0, i, ms;

  if (pass(x) || x->cq_len || x->cfg.busy_poll || timeout_ns == 0) {
    return 0;
  }
  if (x->lfd >= 0) {
    x->pfd[n].fd = x->lfd;
    x->pfd[n].events = POLLIN;
    x->pfd_conn[n++] = -1;
  }
  for (i = 0; i < MAX_CONNS; ++i) {
    tconn *c = &x->conns[i];
    short ev = 0;
    if (!c->used || c->err || c->fd < 0) {
      continue;
    }
    if (c->connecting || c->sq_head >= 0) {
      ev |= POLLOUT;
    }
    if (!c->connecting && wants_read(x, c)) {
      ev |= POLLIN;
    }
    if (ev) {
      x->pfd[n].fd = c->fd;
      x->pfd[n].events = ev;
      x->pfd_conn[n++] = i;
    }
  }
  ms = (int)((timeout_ns + 999999) / 1000000);
  if (ms > 1000) {
    ms = 1000;
  }
  if (poll(x->pfd, (nfds_t)n, ms) > 0) {
    pass(x);
  }
  return 0;
}

static void tcp_get_stats(xport *xp, xport_stats *st) {
  xport_tcp *x = (xport_tcp *)xp;
  int i;

  st->msgs_sent = x->msgs_sent;
  st->msgs_recv = x->msgs_recv;
  st->msgs_err = x->msgs_err;
  st->bytes_out = x->bytes_out;
  st->bytes_in = x->bytes_in;
  st->sends = x->syscalls;
  st->bad_in = x->bad_in;
  st->retransmits = x->retrans_closed;
  for (i = 0; i < MAX_CONNS; ++i) {
    if (x->conns[i].used && !x->conns[i].err) {
      st->retransmits += conn_retrans(&x->conns[i]);
    }
  }
  /* Segments, estimated from bytes at a 64 KiB loopback MSS is
     meaningless; count messages as "packets" on the one path. */
  st->pkts_out = x->msgs_sent;
  st->pkts_in = x->msgs_recv;
  st->n_paths = 1;
  st->path_pkts[0] = x->msgs_sent;
}

static int tcp_local_addr(xport *xp, struct sockaddr_storage *ss,
                          socklen_t *len) {
  xport_tcp *x = (xport_tcp *)xp;
  int i, fd = x->lfd;

  for (i = 0; fd < 0 && i < MAX_CONNS; ++i) {
    if (x->conns[i].used && x->conns[i].fd >= 0) {
      fd = x->conns[i].fd;
    }
  }
  *len = sizeof(*ss);
  if (fd < 0) {
    return -ENOTCONN;
  }
  return getsockname(fd, (struct sockaddr *)ss, len) ? -errno : 0;
}

static int tcp_peer_addr(xport *xp, xport_peer peer,
                         struct sockaddr_storage *ss, socklen_t *len) {
  xport_tcp *x = (xport_tcp *)xp;

  if (peer >= MAX_CONNS || !x->conns[peer].used) {
    return -EINVAL;
  }
  *ss = x->conns[peer].addr;
  *len = x->conns[peer].alen;
  return 0;
}

static const char *tcp_describe(xport *xp) {
  xport_tcp *x = (xport_tcp *)xp;

  snprintf(x->desc, sizeof(x->desc),
           "kernel TCP: one connection per peer, 8-byte length prefix, "
           "TCP_NODELAY, %s",
           x->cfg.busy_poll ? "busy-poll" : "blocking (poll)");
  return x->desc;
}

static void tcp_close(xport *xp) {
  xport_tcp *x = (xport_tcp *)xp;
  int i;

  if (x == NULL) {
    return;
  }
  for (i = 0; i < MAX_CONNS; ++i) {
    if (x->conns[i].fd >= 0 && x->conns[i].used) {
      close(x->conns[i].fd);
    }
    free(x->conns[i].stage);
  }
  if (x->lfd >= 0) {
    close(x->lfd);
  }
  free(x->sends);
  free(x->recvs);
  free(x->rfree);
  free(x->rq);
  free(x->cq);
  free(x->pfd);
  free(x->pfd_conn);
  free(x);
}

static int tcp_open(xport **px, const xport_config *cfg) {
  xport_tcp *x;
  uint32_t i;
  int one = 1;

  if (cfg->max_sends == 0 || cfg->max_recvs == 0) {
    return -EINVAL;
  }
  if (cfg->tap != NULL) {
    return -EOPNOTSUPP; /* the kernel owns TCP's segments: tcpdump them */
  }
  x = calloc(1, sizeof(*x));
  if (x == NULL) {
    return -ENOMEM;
  }
  x->base.ops = &xport_tcp_ops;
  x->cfg = *cfg;
  x->lfd = -1;
  for (i = 0; i < MAX_CONNS; ++i) {
    x->conns[i].fd = -1;
  }
  x->sends = calloc(cfg->max_sends, sizeof(*x->sends));
  x->recvs = calloc(cfg->max_recvs, sizeof(*x->recvs));
  x->rfree = calloc(cfg->max_recvs, sizeof(int));
  x->rq = calloc(cfg->max_recvs, sizeof(int));
  x->cq_cap = cfg->max_sends + cfg->max_recvs;
  x->cq = calloc(x->cq_cap, sizeof(*x->cq));
  x->pfd = calloc(MAX_CONNS + 1, sizeof(*x->pfd));
  x->pfd_conn = calloc(MAX_CONNS + 1, sizeof(int));
  if (!x->sends || !x->recvs || !x->rfree || !x->rq || !x->cq || !x->pfd ||
      !x->pfd_conn) {
    tcp_close(&x->base);
    return -ENOMEM;
  }
  for (i = 0; i < cfg->max_sends; ++i) {
    x->sends[i].next = i + 1 < cfg->max_sends ? (int)i + 1 : -1;
  }
  x->send_free = 0;
  for (i = 0; i < cfg->max_recvs; ++i) {
    x->rfree[i] = (int)(cfg->max_recvs - 1 - i);
  }
  x->n_rfree = (int)cfg->max_recvs;
  x->rq_cap = cfg->max_recvs;
  if (cfg->listen) {
    struct sockaddr_storage ss;
    socklen_t len;
    int rv = xport_parse_addr(cfg->bind_addr           ? cfg->bind_addr
                              : cfg->family == AF_INET ? "0.0.0.0"
                                                       : "::",
                              cfg->port, cfg->family, &ss, &len);
    if (rv != 0) {
      tcp_close(&x->base);
      return rv;
    }
    x->lfd = socket(cfg->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    IPPROTO_TCP);
    if (x->lfd < 0) {
      rv = -errno;
      tcp_close(&x->base);
      return rv;
    }
    setsockopt(x->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if ((rv = set_cc(x, x->lfd)) != 0) {
      tcp_close(&x->base);
      return rv;
    }
    if (cfg->family == AF_INET6) {
      setsockopt(x->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (bind(x->lfd, (struct sockaddr *)&ss, len) != 0 ||
        listen(x->lfd, 64) != 0) {
      char msg[160], a[80];
      rv = -errno;
      snprintf(msg, sizeof(msg), "tcp: bind/listen %s: %s",
               xport_format_addr((struct sockaddr *)&ss, a, sizeof(a)),
               strerror(errno));
      tlog(x, msg);
      tcp_close(&x->base);
      return rv;
    }
  }
  *px = &x->base;
  return 0;
}

const xport_ops xport_tcp_ops = {
    .name = "tcp",
    .open = tcp_open,
    .close = tcp_close,
    .add_peer = tcp_add_peer,
    .remove_peer = tcp_remove_peer,
    .post_send = tcp_post_send,
    .post_recv = tcp_post_recv,
    .poll_cq = tcp_poll_cq,
    .progress = tcp_progress,
    .get_stats = tcp_get_stats,
    .local_addr = tcp_local_addr,
    .peer_addr = tcp_peer_addr,
    .describe = tcp_describe,
};
