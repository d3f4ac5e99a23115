/*
 * udp_setup.c: opening and closing the udp backend: the engine and its
 * settings, the sockets (n_paths consecutive ports), the ring, and the
 * receive side (GRO, timestamps, the buffer ring or one-shot slots, the
 * busy poll's slots).  Every feature the kernel lacks has its fallback
 * here, said once through cfg.log.
 */
#define _GNU_SOURCE
#include "udp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* Memory for receive buffers. */
#define RX_MEM_BYTES (8u << 20)

/* quiesce_ring cancels every request still in the ring and waits (at
   most ~100 ms) until they completed.  A request holds its socket: left
   to the ring's asynchronous teardown, the ports stay bound for a while
   after close, and a process restarted on the same ports (srd-perf
   --local-port) fails to bind them. */
static void quiesce_ring(xport_udp *x) {
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
    struct io_uring_sqe *sqe = udp_get_sqe(x);
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

void udp_close(xport *xp) {
  xport_udp *x = (xport_udp *)xp;
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
  impair_q_fini(&x->held);
  srd_ep_del(x->ep);
  free(x);
}

static int make_socket(xport_udp *x, const struct sockaddr_storage *ss,
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
static int bind_ports(xport_udp *x) {
  struct sockaddr_storage ss;
  socklen_t len;
  int tries, rv;
  uint32_t i;
  char a[80];

  if (x->cfg.bind_addr) {
    rv = xport_parse_addr(x->cfg.bind_addr, 0, x->family, &ss, &len);
    if (rv != 0) {
      udp_log(x, "bad local address '%s'", x->cfg.bind_addr);
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

    udp_sa_set_port(&b, base);
    rv = make_socket(x, &b, len);
    if (rv < 0) {
      udp_log(x, "bind %s: %s",
              xport_format_addr((struct sockaddr *)&b, a, sizeof(a)),
              strerror(-rv));
      return rv;
    }
    x->fd[0] = rv;
    getsockname(x->fd[0], (struct sockaddr *)&b, &bl);
    base = udp_sa_port(&b);
    x->port0 = base;
    for (i = 1; i < x->nfd; ++i) {
      if (base + i > 65535) {
        rv = -EADDRINUSE;
        break;
      }
      udp_sa_set_port(&b, (uint16_t)(base + i));
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
      udp_log(x,
              "port %u is in use: the udp transport binds %u consecutive "
              "ports %u-%u",
              base + i, x->nfd, base, base + x->nfd - 1);
      return rv;
    }
  }
  udp_log(x, "found no %u consecutive free ports", x->nfd);
  return -EADDRINUSE;
}

static int setup_ring(xport_udp *x) {
  /* DEFER_TASKRUN runs completions only when the driver enters the ring,
     in one batch, on its own thread: the cheapest for both modes (a ring
     whose completions interrupt a spinning thread measured 2.5x slower
     round trips here).  TASKRUN_FLAG (Linux 5.19) raises
     IORING_SQ_TASKRUN in the shared ring when such work is queued, so a
     busy poll reads one word and enters the kernel only when a datagram
     came (need_enter, udp_ops.c).  Older kernels get COOP_TASKRUN, then
     plain. */
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
    udp_log(x,
            "io_uring unavailable: %s (disabled by kernel.io_uring_disabled, a "
            "seccomp filter or a container policy?)",
            strerror(-rv));
    return rv;
  }
  if (i > 0) {
    udp_log(x,
            "io_uring: no SINGLE_ISSUER|DEFER_TASKRUN (Linux < 6.1); using %s",
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
    udp_log(x, "io_uring lacks SENDMSG/RECVMSG (needs Linux 5.3)");
    if (probe) {
      io_uring_free_probe(probe);
    }
    return -ENOTSUP;
  }
  io_uring_free_probe(probe);
  return 0;
}

static int setup_rx(xport_udp *x) {
  struct io_uring_buf_reg reg;
  unsigned i;
  int rv, one = 1;

  x->gro = 0;
  if (!x->cfg.no_gro) {
    x->gro = 1;
    for (i = 0; i < x->nfd; ++i) {
      if (setsockopt(x->fd[i], SOL_UDP, UDP_GRO, &one, sizeof(one)) != 0) {
        udp_log(x, "UDP_GRO not supported (%s); receiving unmerged datagrams",
                strerror(errno));
        x->gro = 0;
        break;
      }
    }
  }
  /* Every datagram carries the kernel's arrival time, a busy poll's too:
     a busy poller reads a datagram as it lands only while it has a CPU,
     and one that was preempted (a loaded machine, more pollers than
     cores) would otherwise count the time it waited in the socket as
     path delay, which the delay-based window answers by shrinking, down
     to its floor. */
  x->rx_tstamp = 1;
  for (i = 0; x->rx_tstamp && i < x->nfd; ++i) {
    if (setsockopt(x->fd[i], SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) !=
        0) {
      udp_log(x,
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
    return udp_rx_setup_oneshot(x);
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
    udp_log(x,
            "provided buffer rings not supported (%s; needs Linux 5.19); using "
            "one-shot recvmsg",
            strerror(-rv));
    munmap(x->br, x->br_bytes);
    x->br = NULL;
    return udp_rx_setup_oneshot(x);
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
    if ((rv = udp_rx_arm_multishot(x, (uint16_t)i)) != 0) {
      return rv;
    }
  }
  return 0;
}

/* impair_cfg_of translates one path's impairments (xport.h) into the
   impairment model's configuration; the blackhole holds from the start. */
static void impair_cfg_of(impair_cfg *c, const xport_impair *xi) {
  memset(c, 0, sizeof(*c));
  c->delay = xi->delay_ns;
  c->jitter = xi->jitter_ns;
  c->loss = xi->loss;
  c->dup = xi->dup;
  c->reorder = xi->reorder;
  c->reorder_delay = xi->reorder_delay_ns;
  c->rate_bps = xi->rate_bps;
  c->queue_bytes = xi->queue_bytes;
  c->blackhole = xi->blackhole;
  c->dup_delay = xi->dup_delay_ns;
  c->corrupt = xi->corrupt;
}

int udp_open(xport **px, const xport_config *cfg) {
  xport_udp *x;
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
  x->base.ops = &xport_udp_ops;
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
  /* Each send round goes out gathered per socket (udp_send.c). */
  s.tx_regroups = 1;
  /* A datagram costs the kernel far more than its bytes do (an skb, a
     route lookup, a socket wake-up each), and one UDP GSO send costs
     about one datagram: the engine keeps a GSO send's worth of packets
     in a row on one path (no more than its window allows the engine
     caps runs at), so that a send round leaves in full sends, one per
     socket, instead of a packet or two on each of 16 paths
     (docs/transports.md, make bench-veth). */
  s.path_burst_bytes = !cfg->no_gso && cfg->burst > 1 ? GSO_MAX_BYTES : 0;
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
  /* The same noise makes the base RTT no measure of the path: the target
     stays fixed (cc_target_rtt_pct 0), as it was. */
  s.cc_target_rtt_pct = 0;
  s.cc_target_hops = 0;
  s.cc_target_min = 0;
  /* Nor is a window under 16 packets a sign of many flows here (a
     descheduled thread shrinks it too), and on the fixed 200 us target
     the flow term would add up to 800 us: off, as it was (two CI runs
     with it on left one of test_perf's eight loopback paths under 1%). */
  s.cc_fs_max_window = 0;
  /* The floor covers the kernel's scheduling too: on a 2-CPU host with
     both ends and the veth's softirq busy, a receiver is off its CPU or
     inside a send for over 1 ms several times a second (an ACK's
     sendmsg measured 0.5-1.4 ms there), and a 1 ms floor fired 10-60
     spurious timeouts per 3 s transfer, each resending every packet older
     than one RTO; 5 ms fired none in 6 of 6 runs over a veth at MTU 9001.
     Linux TCP's floor is 200 ms. */
  s.rto_min = cfg->rto_min_ns ? cfg->rto_min_ns : 5 * SRD_MS;
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
    udp_log(x, "srd_ep_new: %s", srd_strerror(rv));
    free(x);
    return rv == SRD_ERR_NOMEM ? -ENOMEM : -EINVAL;
  }
  /* Cookies under a key from the system's random source, not the seed. */
  udp_hs_rekey(x, xport_now());
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
    udp_log(x, "UDP GSO not supported (%s); one datagram per packet",
            strerror(errno));
    x->gso = 0;
  }
  if ((rv = setup_rx(x)) != 0) {
    goto fail;
  }
  if (cfg->impair_on) {
    x->impair_on = 1;
    for (i = 0; i < x->nfd; ++i) {
      impair_cfg c;
      impair_cfg_of(&c, &cfg->impair[i]);
      rv = impair_cfg_check(&c);
      if (rv != 0) {
        goto fail;
      }
      impair_link_init(&x->imp[i], &c, x->cfg.seed ^ 0x5eed1a7e5eed1a7eULL, i);
    }
    x->nhs = 256;
    x->hs = calloc(x->nhs, sizeof(*x->hs));
    if (x->hs == NULL || impair_q_init(&x->held, sizeof(hpkt) + x->max_pkt,
                                       HELD_MAX, HELD_MAX) != 0) {
      rv = -ENOMEM;
      goto fail;
    }
  }
  io_uring_submit(&x->ring);
  *px = &x->base;
  return 0;
fail:
  udp_close(&x->base);
  return rv;
}
