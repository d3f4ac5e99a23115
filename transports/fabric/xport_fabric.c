/*
 * xport_fabric.c: the "fabric" backend, libfabric's reliable datagram
 * endpoints (FI_EP_RDM) with FI_MSG, the path MPI, NCCL (aws-ofi-nccl) and
 * UCX take on EFA.  Here it runs Debian's providers (tcp;ofi_rxm,
 * udp;ofi_rxd); on an EFA instance the same code runs real SRD (efa).
 *
 * Provider: cfg.provider, else the FI_PROVIDER environment variable, else
 * libfabric's first RDM provider.  fi_getinfo is asked for FI_EP_RDM,
 * FI_MSG | FI_SOURCE (a receive names its sender), FI_AV_TABLE, no memory
 * registration (mr_mode 0: buffers are plain host memory), manual
 * progress, and FI_ORDER_SAS on both sides; a provider that cannot order
 * sends is taken without it, and xport_describe says which ("order SAS"
 * or "order none").
 *
 * Address exchange (out of band, as fabtests do): a libfabric endpoint's
 * name is opaque and only known once it is open, so the peers trade names
 * over a TCP connection first.  A listening xport listens on cfg.port
 * (TCP, cfg.bind_addr); xport_add_peer connects there and both sides send
 * one hello: u32 magic "SRDF", u32 version 2, u32 name length (<= 256),
 * u32 tag (the sender's index for the receiver of the hello, which that
 * receiver's sends carry as remote CQ data), then the name (big-endian
 * integers).  The server inserts the client's
 * name in its address vector before it answers, so the client's first
 * message always finds its sender known; the client inserts the server's
 * on the answer and only then posts the sends queued meanwhile.  The
 * exchange is non-blocking and runs in xport_progress; its TCP connection
 * closes when it is done.  A failed exchange (refused, reset, garbage)
 * fails the peer: its queued and later sends complete with the error.
 * xport_local_addr and xport_peer_addr give these TCP addresses, so a
 * tool names hosts and ports as for the other backends.
 *
 * Completions: progress reads the completion queue in batches of
 * CQ_BATCH with fi_cq_readfrom (that call is also the provider's progress:
 * FI_PROGRESS_MANUAL), and each fi_cq_readerr entry becomes an error
 * completion: status the errno of its err (FI_E* values are errno's), and
 * detail the provider's own code (prov_errno); its text (fi_cq_strerror)
 * goes to the log with the op and the peer, so that no error is unnamed.
 * Operations the provider refuses for now (-FI_EAGAIN) and sends to a peer
 * whose exchange is not done wait in order in a pending queue that
 * progress retries.  Every posted operation ends in exactly one completion
 * (xport.h), except on xport_close, which drops them.  A dead peer:
 * providers that notice (tcp;ofi_rxm) fail its sends; for those that never
 * give up (udp;ofi_rxd retransmits forever and cannot cancel a send), the
 * peer timeout (cfg.peer_timeout_ns) declares the xport's only peer dead
 * when none of its posted sends completed for that long, and takes the
 * operations back by closing the endpoint (reset_ep): its sends complete
 * with -ETIMEDOUT, receives are posted again, in order, on a new endpoint.
 * xport_remove_peer takes the peer's address out of the address vector
 * once the provider gave back every send to it.
 *
 * Waiting: the completion queue is opened with FI_WAIT_FD where the
 * provider allows it; progress then sleeps in poll(2) on that fd (after
 * fi_trywait) and the exchange's sockets.  Without it progress sleeps in
 * slices of at most WAIT_SLICE_NS.  busy_poll never sleeps.
 */
#define _GNU_SOURCE
#include "xport.h"

#include "cuda/xcuda.h"
#include "cuda/xregion.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define FAB_VERSION FI_VERSION(1, 9)
#define MAX_PEERS 256
#define FA_MAP 4096      /* fi_addr values (AV table indices) the map holds */
#define MAX_OOB 32       /* exchanges in progress (server side) */
#define NAME_MAX_LEN 256 /* the longest endpoint name accepted */
#define HELLO_HDR 16     /* magic, version, length, tag */
#define OOB_MAGIC 0x53524446u /* "SRDF" */
#define OOB_VERSION 2
#define CQ_BATCH 64
#define WAIT_SLICE_NS 200000ull

/* An operation slot: the provider's context first, then ours. */
typedef struct fop {
  struct fi_context2 fctx;
  xport_op op;
  xport_peer peer;
  void *buf;
  size_t len;
  void *ctx;
  int next; /* free list or pending queue link */
  int posted;
  uint64_t seq; /* receives: posting order */
} fop;

/* oob is one address exchange in progress. */
typedef struct oob {
  int fd;   /* -1: unused */
  int peer; /* client: the peer it is for; server: -1 */
  int sent; /* our hello is out */
  uint8_t in[HELLO_HDR + NAME_MAX_LEN];
  size_t got;
} oob;

/* A peer's states.  P_GONE: removed, but sends to it are still with the
   provider; its address leaves the AV when the last one completes. */
enum { P_FREE = 0, P_EXCHANGE, P_READY, P_FAILED, P_GONE };

typedef struct fpeer {
  int state;
  int err; /* P_FAILED: the errno its sends complete with */
  fi_addr_t fa;
  int has_fa;   /* fa is in the AV */
  int inflight; /* sends handed to the provider, not yet completed */
  /* last_tx_ns: when a send to it last completed, or went to the
     provider with none in flight (the peer timeout counts from it). */
  uint64_t last_tx_ns;
  int silent_logged;
  struct sockaddr_storage addr; /* its TCP (exchange) address */
  socklen_t alen;
  /* The last error logged for its sends, so that a burst of alike
     errors is said once: err and prov_errno, and how many followed. */
  int log_err, log_prov;
  uint64_t log_repeats;
  /* tag_out: what our sends to it carry as remote CQ data, its index
     for us (from its hello), which names us at its end. */
  uint32_t tag_out;
} fpeer;

typedef struct xport_fabric {
  xport base;
  xport_config cfg;
  struct fi_info *info;
  struct fid_fabric *fabric;
  struct fid_domain *domain;
  struct fid_av *av;
  struct fid_cq *cq;
  struct fid_ep *ep;
  int cq_fd; /* FI_WAIT_FD's fd, or -1 */
  int sas;   /* the provider orders sends after sends */
  /* cqdata: sends carry the receiver's index for us as remote CQ data
     (the provider has cq_data_size >= 4), which names a receive's
     sender; otherwise FI_SOURCE does.  udp;ofi_rxd (libfabric 1.17)
     reported every receive of a 3-rank exchange as from the same
     address, and a rank then sent one peer's data to another. */
  int cqdata;
  uint8_t name[NAME_MAX_LEN];
  size_t name_len;
  int lfd; /* the exchange's listening socket, or -1 */
  fpeer peers[MAX_PEERS];
  int fa_peer[FA_MAP];   /* fi_addr (an AV table index) -> peer, or -1 */
  oob oobs[MAX_OOB + 1]; /* [MAX_OOB]: unused sentinel */
  fop *sends, *recvs;
  int send_free, recv_free;
  /* pending: operations not yet handed to the provider, in order */
  int ps_head, ps_tail, pr_head, pr_tail;
  xport_cqe *cq_ring;
  uint32_t cq_head, cq_len, cq_cap;
  uint64_t msgs_sent, msgs_recv, msgs_err, bytes_out, bytes_in, posts;
  uint64_t unknown_src;
  uint64_t recv_seq;
  uint64_t peer_timeout_ns;
  uint64_t ep_resets;
  /* hmem: cfg.mem is CUDA and the provider takes device memory itself
     (FI_HMEM, FI_MR_HMEM): its regions carry their registrations */
  int hmem;
  const xcuda_api *cu;
  xcuda_info cuda;
  xregions regs;
  char desc[448];
} xport_fabric;

/* flog formats a one-line diagnostic for cfg.log (xport_logf). */
#define flog(x, ...) xport_logf(&(x)->cfg, __VA_ARGS__)

static int open_ep(xport_fabric *x);
static int hmem_works(xport_fabric *x);

/* peer_live says whether |id| names a peer the caller may use. */
static int peer_live(const xport_fabric *x, xport_peer id) {
  return id < MAX_PEERS && x->peers[id].state != P_FREE &&
         x->peers[id].state != P_GONE;
}

static const char *provider_of(const xport_config *cfg) {
  const char *p = cfg->provider;

  if (p == NULL || *p == '\0') {
    p = getenv("FI_PROVIDER");
  }
  return p && *p ? p : NULL;
}

/* ------------------------------------------------------------------------ */
/* fi_getinfo                                                               */

/* make_hints returns the hints of this backend for |provider| (NULL:
   any) and |family|, with FI_ORDER_SAS when |sas|, and with FI_HMEM (device
   memory registered with the provider, FI_MR_HMEM) when |hmem|. */
static struct fi_info *make_hints(const char *provider, int family, int sas,
                                  int hmem) {
  struct fi_info *h = fi_allocinfo();

  if (h == NULL) {
    return NULL;
  }
  h->caps = FI_MSG | FI_SOURCE;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->addr_format = family == AF_INET6  ? FI_SOCKADDR_IN6
                   : family == AF_INET ? FI_SOCKADDR_IN
                                       : FI_FORMAT_UNSPEC;
  h->ep_attr->type = FI_EP_RDM;
  h->domain_attr->mr_mode = 0;
  if (hmem) {
    h->caps |= FI_HMEM;
    h->domain_attr->mr_mode = FI_MR_HMEM;
  }
  h->domain_attr->av_type = FI_AV_TABLE;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  if (sas) {
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
  }
  if (provider) {
    h->fabric_attr->prov_name = strdup(provider);
    if (h->fabric_attr->prov_name == NULL) {
      fi_freeinfo(h);
      return NULL;
    }
  }
  return h;
}

/* link_local says whether |i|'s source address is IPv6 link-local
   (fe80::/10): an endpoint there cannot be reached without a scope, which
   an endpoint name does not carry. */
static int link_local(const struct fi_info *i) {
  const struct sockaddr_in6 *a = i->src_addr;

  return i->addr_format == FI_SOCKADDR_IN6 && a &&
         i->src_addrlen >= sizeof(*a) && a->sin6_family == AF_INET6 &&
         IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr);
}

/* ip_format says whether |f| is an IP socket address format: the
   providers over sockets (tcp, udp) have them; efa has FI_ADDR_EFA and
   refuses hints that ask for another (ofi_check_info). */
static int ip_format(uint32_t f) {
  return f == FI_SOCKADDR || f == FI_SOCKADDR_IN || f == FI_SOCKADDR_IN6;
}

/* get_info asks fi_getinfo for |provider| on |node| (NULL: any), with
   FI_ORDER_SAS if a provider gives it; *sas says whether it did.  *out
   is the one endpoint to open: the first offered, passing over IPv6
   link-local ones when |node| is NULL.  A provider without IP addresses
   (efa: FI_ADDR_EFA) is asked a second time with the format left open
   and no node (its own device's address; the endpoint names are traded
   out of band whatever they are). */
static int get_info(const char *provider, int family, const char *node,
                    int hmem, struct fi_info **out, int *sas) {
  int rv = -FI_ENODATA, pass;

  for (pass = 0; pass < 2; ++pass) {
    for (*sas = 1; *sas >= 0; --*sas) {
      struct fi_info *h = make_hints(provider, pass ? AF_UNSPEC : family, *sas,
                                     hmem),
                     *list = NULL, *i;
      if (h == NULL) {
        return -ENOMEM;
      }
      rv = pass ? fi_getinfo(FAB_VERSION, NULL, NULL, 0, h, &list)
                : fi_getinfo(FAB_VERSION, node, NULL, node ? FI_SOURCE : 0, h,
                             &list);
      fi_freeinfo(h);
      if (rv != 0) {
        continue;
      }
      for (i = list;
           i && (link_local(i) || (pass && ip_format(i->addr_format)));
           i = i->next) {
      }
      if (pass && i == NULL) {
        fi_freeinfo(list);
        rv = -FI_ENODATA; /* only IP endpoints, of the other family */
        continue;
      }
      *out = fi_dupinfo(i ? i : list);
      fi_freeinfo(list);
      return *out ? 0 : -ENOMEM;
    }
  }
  return rv;
}

static const char *ep_type_name(enum fi_ep_type t) {
  switch (t) {
  case FI_EP_RDM:
    return "FI_EP_RDM";
  case FI_EP_DGRAM:
    return "FI_EP_DGRAM";
  case FI_EP_MSG:
    return "FI_EP_MSG";
  default:
    return "?";
  }
}

static int list_infos(const struct fi_info *info, int skip_ip, FILE *f);

int xport_fabric_providers(const char *provider, int family, FILE *f) {
  int rv, n = 0, pass;

  /* Without FI_ORDER_SAS in the hints: every endpoint, its order shown.
     The endpoints of |family|, then those without IP addresses (efa), as
     get_info finds them. */
  for (pass = 0; pass < 2; ++pass) {
    struct fi_info *info = NULL,
                   *h = make_hints(provider, pass ? AF_UNSPEC : family, 0, 0);
    if (h == NULL) {
      return -ENOMEM;
    }
    rv = fi_getinfo(FAB_VERSION, NULL, NULL, 0, h, &info);
    fi_freeinfo(h);
    if (rv == -FI_ENODATA) {
      continue;
    }
    if (rv != 0) {
      return rv < 0 ? rv : -rv;
    }
    n += list_infos(info, pass, f);
    fi_freeinfo(info);
  }
  return n;
}

/* list_infos prints |info|'s endpoints (|skip_ip|: not those with IP
   addresses) as fi_info does, to |f| unless NULL; returns how many. */
static int list_infos(const struct fi_info *info, int skip_ip, FILE *f) {
  const struct fi_info *i;
  int n = 0;

  for (i = info; i; i = i->next) {
    char mtu[32] = "n/a";
    if (skip_ip && ip_format(i->addr_format)) {
      continue;
    }
    ++n;
    if (f == NULL) {
      continue;
    }
    if (i->nic && i->nic->link_attr && i->nic->link_attr->mtu) {
      snprintf(mtu, sizeof(mtu), "%zu", i->nic->link_attr->mtu);
    }
    fprintf(
        f,
        "provider: %s\n"
        "    fabric: %s\n"
        "    domain: %s\n"
        "    type: %s\n"
        "    caps:%s%s%s%s\n"
        "    order: %s\n"
        "    progress: data %s\n"
        "    mtu: %s\n"
        "    max_msg_size: %zu\n"
        "    inject_size: %zu\n",
        i->fabric_attr->prov_name, i->fabric_attr->name, i->domain_attr->name,
        ep_type_name(i->ep_attr->type), i->caps & FI_MSG ? " FI_MSG" : "",
        i->caps & FI_TAGGED ? " FI_TAGGED" : "",
        i->caps & FI_SOURCE ? " FI_SOURCE" : "",
        i->caps & FI_HMEM ? " FI_HMEM" : "",
        (i->tx_attr->msg_order & FI_ORDER_SAS) ? "FI_ORDER_SAS" : "none",
        i->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto",
        mtu, i->ep_attr->max_msg_size, i->tx_attr->inject_size);
  }
  return n;
}

/* ------------------------------------------------------------------------ */
/* Completions and operation slots                                          */

static void complete(xport_fabric *x, const fop *o, int status, int detail,
                     size_t len) {
  xport_cqe *c = &x->cq_ring[(x->cq_head + x->cq_len++) % x->cq_cap];

  c->op = o->op;
  c->status = status;
  c->detail = detail;
  c->peer = o->peer;
  c->buf = o->buf;
  c->len = len;
  c->ctx = o->ctx;
  if (status != 0) {
    ++x->msgs_err;
  } else if (o->op == XPORT_OP_SEND) {
    ++x->msgs_sent;
    x->bytes_out += len;
  } else {
    ++x->msgs_recv;
    x->bytes_in += len;
  }
}

static void slot_free(xport_fabric *x, fop *o) {
  if (o->op == XPORT_OP_SEND) {
    o->next = x->send_free;
    x->send_free = (int)(o - x->sends);
  } else {
    o->next = x->recv_free;
    x->recv_free = (int)(o - x->recvs);
  }
}

static void pend(xport_fabric *x, fop *o) {
  int i = (int)(o - (o->op == XPORT_OP_SEND ? x->sends : x->recvs));
  int *head = o->op == XPORT_OP_SEND ? &x->ps_head : &x->pr_head;
  int *tail = o->op == XPORT_OP_SEND ? &x->ps_tail : &x->pr_tail;
  fop *base = o->op == XPORT_OP_SEND ? x->sends : x->recvs;

  o->next = -1;
  if (*tail >= 0) {
    base[*tail].next = i;
  } else {
    *head = i;
  }
  *tail = i;
}

/* submit hands |o| to the provider: 0, -FI_EAGAIN (retry later), or
   another negative fi_errno. */
static int submit(xport_fabric *x, fop *o) {
  ssize_t rv;

  void *desc = NULL;

  if (x->hmem) {
    /* Device memory goes with its registration; host memory needs none
       (FI_MR_HMEM without FI_MR_LOCAL). */
    const xregion *r = xregions_find(&x->regs, o->buf, o->len ? o->len : 1);
    desc = r ? fi_mr_desc((struct fid_mr *)r->handle) : NULL;
  }
  if (o->op == XPORT_OP_SEND) {
    const fpeer *p = &x->peers[o->peer];
    rv = x->cqdata ? fi_senddata(x->ep, o->buf, o->len, desc, p->tag_out, p->fa,
                                 &o->fctx)
                   : fi_send(x->ep, o->buf, o->len, desc, p->fa, &o->fctx);
  } else {
    rv = fi_recv(x->ep, o->buf, o->len, desc, FI_ADDR_UNSPEC, &o->fctx);
  }
  ++x->posts;
  if (rv == 0) {
    o->posted = 1;
    if (o->op == XPORT_OP_SEND && x->peers[o->peer].inflight++ == 0) {
      x->peers[o->peer].last_tx_ns = xport_now();
    }
  }
  return (int)rv;
}

/* flush_pending submits the pending operations that can go, in order:
   sends whose peer is ready (a failed peer's complete in error), and
   receives, until the provider says -FI_EAGAIN. */
static void flush_pending(xport_fabric *x, int sends) {
  fop *base = sends ? x->sends : x->recvs;
  int *head = sends ? &x->ps_head : &x->pr_head;
  int *tail = sends ? &x->ps_tail : &x->pr_tail;
  int i = *head, prev = -1, stalled = 0;

  while (i >= 0) {
    fop *o = &base[i];
    int next = o->next, take = 0, rv;

    if (sends && x->peers[o->peer].state == P_FAILED) {
      complete(x, o, x->peers[o->peer].err, 0, o->len);
      take = 1;
    } else if (!stalled && (!sends || x->peers[o->peer].state == P_READY)) {
      rv = submit(x, o);
      if (rv == 0) {
        take = 1;
      } else if (rv == -FI_EAGAIN) {
        stalled = 1; /* keep the order: nothing after it goes first */
      } else {
        flog(x, "fabric: %s: %s", sends ? "fi_send" : "fi_recv",
             fi_strerror(-rv));
        complete(x, o, -EIO, -rv, o->len);
        take = 1;
      }
    } else if (sends && x->peers[o->peer].state == P_EXCHANGE) {
      /* later sends to other peers may go; this one's keep order */
    }
    if (take) {
      if (prev >= 0) {
        base[prev].next = next;
      } else {
        *head = next;
      }
      if (*tail == i) {
        *tail = prev;
      }
      if (!o->posted) {
        slot_free(x, o);
      }
    } else {
      prev = i;
    }
    i = next;
  }
}

/* ------------------------------------------------------------------------ */
/* The address exchange                                                     */

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static int send_hello(xport_fabric *x, int fd, uint32_t tag) {
  uint8_t b[HELLO_HDR + NAME_MAX_LEN];
  size_t n = HELLO_HDR + x->name_len;

  put32(b, OOB_MAGIC);
  put32(b + 4, OOB_VERSION);
  put32(b + 8, (uint32_t)x->name_len);
  put32(b + 12, tag); /* our index for the peer: its sends name us by it */
  memcpy(b + HELLO_HDR, x->name, x->name_len);
  /* A fresh connection's send buffer takes these few hundred bytes. */
  return send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n ? 0
                                                                   : -EPROTO;
}

/* read_hello reads what arrived on |o|: 1 when its hello is whole, 0 for
   more to come, or a negative errno. */
static int read_hello(oob *o) {
  size_t want = HELLO_HDR;
  ssize_t r;

  for (;;) {
    if (o->got >= HELLO_HDR) {
      uint32_t len = get32(o->in + 8);
      if (get32(o->in) != OOB_MAGIC || get32(o->in + 4) != OOB_VERSION ||
          len == 0 || len > NAME_MAX_LEN) {
        return -EPROTO;
      }
      want = HELLO_HDR + len;
    }
    if (o->got == want && o->got > HELLO_HDR) {
      return 1;
    }
    r = recv(o->fd, o->in + o->got, want - o->got, MSG_DONTWAIT);
    if (r == 0) {
      return -ECONNRESET;
    }
    if (r < 0) {
      return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    }
    o->got += (size_t)r;
  }
}

static void oob_end(oob *o) {
  if (o->fd >= 0) {
    close(o->fd);
  }
  o->fd = -1;
  o->got = 0;
  o->sent = 0;
  o->peer = -1;
}

static int av_insert(xport_fabric *x, const oob *o, fi_addr_t *fa) {
  int rv = fi_av_insert(x->av, o->in + HELLO_HDR, 1, fa, 0, NULL);

  if (rv != 1) {
    flog(x, "fabric: fi_av_insert: %s", rv < 0 ? fi_strerror(-rv) : "failed");
    return -EPROTO;
  }
  if (*fa >= FA_MAP) {
    flog(x, "fabric: address vector index %llu past the backend's map",
         (unsigned long long)*fa);
    fi_av_remove(x->av, fa, 1, 0);
    return -EPROTO;
  }
  return 0;
}

static void peer_fail(xport_fabric *x, int id, int err, const char *why) {
  char a[80];
  fpeer *p = &x->peers[id];

  flog(x, "fabric peer %s: address exchange failed: %s",
       xport_format_addr((struct sockaddr *)&p->addr, a, sizeof(a)), why);
  p->state = P_FAILED;
  p->err = err;
}

/* oob_step advances exchange |o|; |re| are the poll events seen. */
static void oob_step(xport_fabric *x, oob *o, short re) {
  int rv;

  if (o->peer >= 0) { /* client */
    if (!o->sent) {
      int err = 0;
      socklen_t l = sizeof(err);
      if (!(re & (POLLOUT | POLLERR | POLLHUP))) {
        return;
      }
      getsockopt(o->fd, SOL_SOCKET, SO_ERROR, &err, &l);
      if (err == 0 && (rv = send_hello(x, o->fd, (uint32_t)o->peer)) != 0) {
        err = -rv;
      }
      if (err) {
        peer_fail(x, o->peer, -err, strerror(err));
        oob_end(o);
        return;
      }
      o->sent = 1;
      return;
    }
    rv = read_hello(o);
    if (rv == 0) {
      return;
    }
    if (rv > 0) {
      fpeer *p = &x->peers[o->peer];
      rv = av_insert(x, o, &p->fa);
      if (rv == 0) {
        p->state = P_READY;
        p->has_fa = 1;
        p->tag_out = get32(o->in + 12);
        x->fa_peer[p->fa] = o->peer;
      }
    }
    if (rv < 0) {
      peer_fail(x, o->peer, rv == -EPROTO ? -EPROTO : rv,
                rv == -EPROTO ? "not an srd fabric endpoint" : strerror(-rv));
    }
    oob_end(o);
    return;
  }
  /* server: the client's hello, then ours */
  rv = read_hello(o);
  if (rv > 0) {
    int id;
    for (id = 0; id < MAX_PEERS && x->peers[id].state != P_FREE; ++id) {
    }
    if (id == MAX_PEERS) {
      flog(x, "fabric: too many peers, one refused");
    } else {
      fpeer *p = &x->peers[id];
      p->alen = sizeof(p->addr);
      getpeername(o->fd, (struct sockaddr *)&p->addr, &p->alen);
      if (av_insert(x, o, &p->fa) != 0) {
        /* refused: the client sees the connection close */
      } else if (send_hello(x, o->fd, (uint32_t)id) != 0) {
        fi_av_remove(x->av, &p->fa, 1, 0);
      } else {
        p->state = P_READY;
        p->err = 0;
        p->log_err = p->log_prov = 0;
        p->has_fa = 1;
        p->inflight = 0;
        p->tag_out = get32(o->in + 12);
        x->fa_peer[p->fa] = id;
      }
    }
  }
  if (rv != 0) {
    oob_end(o);
  }
}

static void oob_accept(xport_fabric *x) {
  for (;;) {
    int fd = accept4(x->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), i;
    if (fd < 0) {
      return;
    }
    for (i = 0; i < MAX_OOB && x->oobs[i].fd >= 0; ++i) {
    }
    if (i == MAX_OOB) {
      close(fd);
      continue;
    }
    x->oobs[i].fd = fd;
    x->oobs[i].peer = -1;
    x->oobs[i].got = 0;
    x->oobs[i].sent = 1;
  }
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                 */

static int errno_of(int fi_err) {
  /* libfabric's FI_E* codes below FI_ERRNO_OFFSET are errno values. */
  if (fi_err > 0 && fi_err < FI_ERRNO_OFFSET) {
    return -fi_err;
  }
  if (fi_err == FI_ETRUNC) {
    return -EMSGSIZE;
  }
  return -EIO;
}

/* peer_release forgets peer |id|: its address leaves the AV. */
static void peer_release(xport_fabric *x, int id) {
  fpeer *p = &x->peers[id];

  if (p->has_fa) {
    fi_av_remove(x->av, &p->fa, 1, 0);
    x->fa_peer[p->fa] = -1;
    p->has_fa = 0;
  }
  p->state = P_FREE;
  p->inflight = 0;
}

/* send_done counts a send of peer |id| back from the provider. */
static void send_done(xport_fabric *x, xport_peer id) {
  fpeer *p = &x->peers[id];

  p->last_tx_ns = xport_now();
  p->silent_logged = 0;
  if (p->inflight > 0 && --p->inflight == 0 && p->state == P_GONE) {
    peer_release(x, (int)id);
  }
}

static void read_errors(xport_fabric *x) {
  struct fi_cq_err_entry e;
  char text[256], a[80];

  for (;;) {
    fop *o;
    const char *ptext;
    int st;

    memset(&e, 0, sizeof(e));
    if (fi_cq_readerr(x->cq, &e, 0) != 1) {
      return;
    }
    o = e.op_context;
    if (o == NULL || !o->posted) {
      continue; /* not ours, or of an endpoint closed since */
    }
    st = errno_of(e.err);
    if (o->op == XPORT_OP_RECV && e.err == FI_ETRUNC) {
      st = -EMSGSIZE;
    }
    if (o->op == XPORT_OP_SEND) {
      fpeer *p = &x->peers[o->peer];
      if (p->log_err == e.err && p->log_prov == e.prov_errno) {
        ++p->log_repeats; /* said already */
        goto done;
      }
      p->log_err = e.err;
      p->log_prov = e.prov_errno;
      p->log_repeats = 0;
    }
    ptext = fi_cq_strerror(x->cq, e.prov_errno, e.err_data, text, sizeof(text));
    flog(x, "fabric: %s %s: %s (provider: %s)%s",
         o->op == XPORT_OP_SEND ? "send to peer" : "receive from",
         o->op == XPORT_OP_SEND
             ? xport_format_addr((struct sockaddr *)&x->peers[o->peer].addr, a,
                                 sizeof(a))
             : "(any)",
         fi_strerror(e.err), ptext ? ptext : "no text",
         o->op == XPORT_OP_SEND ? "; alike errors that follow are not repeated"
                                : "");
  done:
    o->posted = 0;
    complete(x, o, st, e.prov_errno, o->op == XPORT_OP_SEND ? o->len : e.len);
    slot_free(x, o);
    if (o->op == XPORT_OP_SEND) {
      send_done(x, o->peer);
    }
  }
}

/* read_cq moves what the completion queue holds into the ring; returns
   how many entries it read, or a negative fi_errno of the queue. */
static int read_cq(xport_fabric *x) {
  struct fi_cq_data_entry ent[CQ_BATCH];
  fi_addr_t src[CQ_BATCH];
  int total = 0;

  for (;;) {
    size_t room = x->cq_cap - x->cq_len,
           want = room < CQ_BATCH ? room : CQ_BATCH;
    ssize_t n, i;

    if (want == 0) {
      return total;
    }
    n = fi_cq_readfrom(x->cq, ent, want, src);
    if (n == -FI_EAVAIL) {
      read_errors(x);
      continue;
    }
    if (n == -FI_EAGAIN) {
      return total;
    }
    if (n < 0) {
      return (int)n;
    }
    for (i = 0; i < n; ++i) {
      fop *o = ent[i].op_context;
      if (o == NULL || !o->posted) {
        continue; /* of an endpoint closed since */
      }
      o->posted = 0;
      if (o->op == XPORT_OP_RECV) {
        int id = -1;
        if (x->cqdata && (ent[i].flags & FI_REMOTE_CQ_DATA)) {
          id = ent[i].data < MAX_PEERS ? (int)ent[i].data : -1;
        } else if (src[i] < FA_MAP) {
          id = x->fa_peer[src[i]];
        }
        if (id >= 0 && x->peers[id].state == P_READY) {
          o->peer = (xport_peer)id;
        } else {
          o->peer = (xport_peer)-1;
          ++x->unknown_src;
        }
      }
      complete(x, o, 0, 0, o->op == XPORT_OP_SEND ? o->len : ent[i].len);
      slot_free(x, o);
      if (o->op == XPORT_OP_SEND) {
        send_done(x, o->peer);
      }
    }
    total += (int)n;
    if ((size_t)n < want) {
      return total;
    }
  }
}

static int cmp_seq(const void *a, const void *b) {
  const fop *x = *(const fop *const *)a, *y = *(const fop *const *)b;

  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* reset_ep takes every operation back from the provider by closing the
   endpoint, for dead peer |id|, the only peer: its sends complete with
   -ETIMEDOUT, the receives go back, in posting order, to the front of
   the pending queue, and a new endpoint (a new name, which the next
   exchange hands out) takes them.  Returns 0 or open_ep's errno. */
static int reset_ep(xport_fabric *x, int id) {
  fpeer *p = &x->peers[id];
  fop **rv = malloc(x->cfg.max_recvs * sizeof(*rv));
  struct fi_cq_data_entry ent[CQ_BATCH];
  struct fi_cq_err_entry e;
  uint32_t i, nr = 0, ns = 0;
  char a[80];

  if (rv == NULL) {
    return -ENOMEM;
  }
  read_cq(x); /* what completed before */
  fi_close(&x->ep->fid);
  x->ep = NULL;
  /* Whatever the close itself reported is of operations taken back. */
  while (fi_cq_read(x->cq, ent, CQ_BATCH) > 0 ||
         fi_cq_readerr(x->cq, &e, 0) == 1) {
  }
  for (i = 0; i < x->cfg.max_sends; ++i) {
    fop *o = &x->sends[i];
    if (o->posted) {
      o->posted = 0;
      complete(x, o, -ETIMEDOUT, 0, o->len);
      slot_free(x, o);
      ++ns;
    }
  }
  for (i = 0; i < x->cfg.max_recvs; ++i) {
    if (x->recvs[i].posted) {
      x->recvs[i].posted = 0;
      rv[nr++] = &x->recvs[i];
    }
  }
  qsort(rv, nr, sizeof(*rv), cmp_seq);
  while (nr > 0) { /* to the front, the oldest first */
    fop *o = rv[--nr];
    o->next = x->pr_head;
    x->pr_head = (int)(o - x->recvs);
    if (x->pr_tail < 0) {
      x->pr_tail = x->pr_head;
    }
  }
  free(rv);
  flog(x,
       "fabric peer %s: no send completed for %.1f s: dead; its %u sends "
       "fail with ETIMEDOUT (the endpoint is reopened to take them back from "
       "the provider)",
       xport_format_addr((struct sockaddr *)&p->addr, a, sizeof(a)),
       (double)x->peer_timeout_ns / 1e9, ns);
  p->inflight = 0;
  if (p->state == P_GONE) {
    peer_release(x, id);
  } else {
    if (p->has_fa) {
      fi_av_remove(x->av, &p->fa, 1, 0);
      x->fa_peer[p->fa] = -1;
      p->has_fa = 0;
    }
    p->state = P_FAILED;
    p->err = -ETIMEDOUT;
  }
  ++x->ep_resets;
  return open_ep(x);
}

/* check_peers finds peers whose sends have seen no completion for the
   peer timeout.  The only peer is declared dead (reset_ep); with others
   sharing the endpoint, closing it would take theirs too, so it is only
   said (once). */
static int check_peers(xport_fabric *x) {
  uint64_t now = xport_now();
  int i, live = 0, silent = -1;
  char a[80];

  for (i = 0; i < MAX_PEERS; ++i) {
    fpeer *p = &x->peers[i];
    if (p->state == P_FREE) {
      continue;
    }
    ++live;
    if (p->inflight > 0 && now - p->last_tx_ns > x->peer_timeout_ns) {
      silent = i;
    }
  }
  if (silent < 0) {
    return 0;
  }
  if (live == 1) {
    return reset_ep(x, silent);
  }
  if (!x->peers[silent].silent_logged) {
    x->peers[silent].silent_logged = 1;
    flog(x,
         "fabric peer %s: no send completed for %.1f s; its sends stay with "
         "the provider (other peers share the endpoint)",
         xport_format_addr((struct sockaddr *)&x->peers[silent].addr, a,
                           sizeof(a)),
         (double)x->peer_timeout_ns / 1e9);
  }
  return 0;
}

static int fab_progress(xport *xp, uint64_t timeout_ns) {
  xport_fabric *x = (xport_fabric *)xp;
  struct pollfd pfd[MAX_OOB + 3];
  int map[MAX_OOB + 3];
  int n = 0, i, rv, got;

  rv = read_cq(x);
  if (rv < 0) {
    flog(x, "fabric: fi_cq_read: %s", fi_strerror(-rv));
    return -EIO;
  }
  got = rv;
  if (x->peer_timeout_ns && (rv = check_peers(x)) != 0) {
    flog(x, "fabric: cannot reopen the endpoint: %s", strerror(-rv));
    return rv;
  }
  /* The exchange's sockets, without waiting. */
  if (x->lfd >= 0) {
    oob_accept(x);
  }
  for (i = 0; i < MAX_OOB; ++i) {
    if (x->oobs[i].fd >= 0) {
      pfd[n].fd = x->oobs[i].fd;
      pfd[n].events = x->oobs[i].sent ? POLLIN : POLLOUT;
      pfd[n].revents = 0;
      map[n++] = i;
    }
  }
  if (n && poll(pfd, (nfds_t)n, 0) > 0) {
    for (i = 0; i < n; ++i) {
      if (pfd[i].revents) {
        oob_step(x, &x->oobs[map[i]], pfd[i].revents);
        ++got;
      }
    }
  }
  flush_pending(x, 1);
  flush_pending(x, 0);
  if (got || x->cq_len || timeout_ns == 0 || x->cfg.busy_poll) {
    return 0;
  }
  /* Nothing happened: sleep until the queue, a socket or the timeout. */
  n = 0;
  for (i = 0; i < MAX_OOB; ++i) {
    if (x->oobs[i].fd >= 0) {
      pfd[n].fd = x->oobs[i].fd;
      pfd[n].events = x->oobs[i].sent ? POLLIN : POLLOUT;
      map[n++] = i;
    }
  }
  if (x->lfd >= 0) {
    pfd[n].fd = x->lfd;
    pfd[n].events = POLLIN;
    map[n++] = -1;
  }
  {
    uint64_t t = timeout_ns;
    struct fid *f = &x->cq->fid;
    int ms, cq_in = 0;
    if (x->cq_fd >= 0 && fi_trywait(x->fabric, &f, 1) == FI_SUCCESS) {
      pfd[n].fd = x->cq_fd;
      pfd[n].events = POLLIN;
      map[n++] = -1;
      cq_in = 1;
    } else if (t > WAIT_SLICE_NS) {
      t = WAIT_SLICE_NS; /* the provider wants to be called again */
    }
    /* Below poll's millisecond, and nothing that would wake us for the
       queue: look at the sockets, then sleep the slice itself.  (Polling
       the sockets alone rounded a 200 us slice up to 1 ms: a blocking
       server's round trips took 1.1 ms whenever the provider declined
       fi_trywait.) */
    if (!cq_in && t < 1000000) {
      struct timespec ts = {0, (long)t};
      if (n) {
        poll(pfd, (nfds_t)n, 0);
      }
      nanosleep(&ts, NULL);
      return 0;
    }
    ms = (int)((t + 999999) / 1000000);
    poll(pfd, (nfds_t)n, ms);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The ops                                                                  */

static int fab_add_peer(xport *xp, const struct sockaddr *addr, socklen_t len,
                        xport_peer *ppeer) {
  xport_fabric *x = (xport_fabric *)xp;
  int id, k, fd;
  fpeer *p;

  if (addr == NULL || addr->sa_family != x->cfg.family ||
      len > sizeof(struct sockaddr_storage)) {
    return -EINVAL;
  }
  for (id = 0; id < MAX_PEERS && x->peers[id].state != P_FREE; ++id) {
  }
  for (k = 0; k < MAX_OOB && x->oobs[k].fd >= 0; ++k) {
  }
  if (id == MAX_PEERS || k == MAX_OOB) {
    return -EAGAIN;
  }
  p = &x->peers[id];
  memset(&p->addr, 0, sizeof(p->addr));
  memcpy(&p->addr, addr, len);
  p->alen = len;
  p->state = P_EXCHANGE;
  p->err = 0;
  p->log_err = p->log_prov = 0;
  p->has_fa = 0;
  p->inflight = 0;
  *ppeer = (xport_peer)id;
  fd = socket(x->cfg.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
              IPPROTO_TCP);
  if (fd < 0) {
    peer_fail(x, id, -errno, strerror(errno));
    return 0;
  }
  if (connect(fd, addr, len) != 0 && errno != EINPROGRESS) {
    peer_fail(x, id, -errno, strerror(errno));
    close(fd);
    return 0;
  }
  x->oobs[k].fd = fd;
  x->oobs[k].peer = id;
  x->oobs[k].got = 0;
  x->oobs[k].sent = 0;
  return 0;
}

static int fab_remove_peer(xport *xp, xport_peer peer) {
  xport_fabric *x = (xport_fabric *)xp;
  fpeer *p;
  int k;

  if (!peer_live(x, peer)) {
    return -EINVAL;
  }
  p = &x->peers[peer];
  for (k = 0; k < MAX_OOB; ++k) {
    if (x->oobs[k].fd >= 0 && x->oobs[k].peer == (int)peer) {
      oob_end(&x->oobs[k]);
    }
  }
  /* Its queued sends complete with -ECANCELED; those with the provider
     complete as the provider says (it keeps the address until then). */
  p->state = P_FAILED;
  p->err = -ECANCELED;
  flush_pending(x, 1);
  if (p->inflight > 0) {
    p->state = P_GONE;
  } else {
    peer_release(x, (int)peer);
  }
  return 0;
}

static int fab_post_send(xport *xp, xport_peer peer, const void *buf,
                         size_t len, void *ctx) {
  xport_fabric *x = (xport_fabric *)xp;
  fop *o;
  int rv;

  if (!peer_live(x, peer) || (buf == NULL && len)) {
    return -EINVAL;
  }
  if (len > x->cfg.max_msg_size || len > x->info->ep_attr->max_msg_size) {
    return -EMSGSIZE;
  }
  if (x->send_free < 0) {
    return -EAGAIN;
  }
  o = &x->sends[x->send_free];
  x->send_free = o->next;
  o->op = XPORT_OP_SEND;
  o->peer = peer;
  o->buf = (void *)buf;
  o->len = len;
  o->ctx = ctx;
  o->posted = 0;
  if (x->ps_head < 0 && x->peers[peer].state == P_READY) {
    rv = submit(x, o);
    if (rv == 0) {
      return 0;
    }
    if (rv != -FI_EAGAIN) {
      flog(x, "fabric: fi_send: %s", fi_strerror(-rv));
      complete(x, o, -EIO, -rv, len);
      slot_free(x, o);
      return 0;
    }
  } else if (x->peers[peer].state == P_FAILED) {
    complete(x, o, x->peers[peer].err, 0, len);
    slot_free(x, o);
    return 0;
  }
  pend(x, o);
  return 0;
}

static int fab_post_recv(xport *xp, void *buf, size_t cap, void *ctx) {
  xport_fabric *x = (xport_fabric *)xp;
  fop *o;
  int rv;

  if (buf == NULL && cap) {
    return -EINVAL;
  }
  if (x->recv_free < 0) {
    return -EAGAIN;
  }
  o = &x->recvs[x->recv_free];
  x->recv_free = o->next;
  o->op = XPORT_OP_RECV;
  o->peer = 0;
  o->buf = buf;
  o->len = cap;
  o->ctx = ctx;
  o->posted = 0;
  o->seq = x->recv_seq++;
  if (x->pr_head < 0) {
    rv = submit(x, o);
    if (rv == 0) {
      return 0;
    }
    if (rv != -FI_EAGAIN) {
      flog(x, "fabric: fi_recv: %s", fi_strerror(-rv));
      slot_free(x, o);
      return -EIO;
    }
  }
  pend(x, o);
  return 0;
}

static size_t fab_poll_cq(xport *xp, xport_cqe *out, size_t n) {
  xport_fabric *x = (xport_fabric *)xp;
  size_t k = 0;

  while (k < n && x->cq_len) {
    out[k++] = x->cq_ring[x->cq_head];
    x->cq_head = (x->cq_head + 1) % x->cq_cap;
    --x->cq_len;
  }
  return k;
}

static void fab_get_stats(xport *xp, xport_stats *st) {
  xport_fabric *x = (xport_fabric *)xp;

  st->msgs_sent = x->msgs_sent;
  st->msgs_recv = x->msgs_recv;
  st->msgs_err = x->msgs_err;
  st->bytes_out = x->bytes_out;
  st->bytes_in = x->bytes_in;
  st->sends = x->posts;
  st->unknown_src = x->unknown_src;
  st->bad_in = x->unknown_src;
}

static int fab_local_addr(xport *xp, struct sockaddr_storage *ss,
                          socklen_t *len) {
  xport_fabric *x = (xport_fabric *)xp;

  *len = sizeof(*ss);
  if (x->lfd < 0) {
    return -ENOTCONN;
  }
  return getsockname(x->lfd, (struct sockaddr *)ss, len) ? -errno : 0;
}

static int fab_peer_addr(xport *xp, xport_peer peer,
                         struct sockaddr_storage *ss, socklen_t *len) {
  xport_fabric *x = (xport_fabric *)xp;

  if (!peer_live(x, peer)) {
    return -EINVAL;
  }
  *ss = x->peers[peer].addr;
  *len = x->peers[peer].alen;
  return 0;
}

static const char *fab_describe(xport *xp) {
  xport_fabric *x = (xport_fabric *)xp;
  const struct fi_info *i = x->info;

  snprintf(
      x->desc, sizeof(x->desc),
      "libfabric %u.%u provider %s, fabric %s, domain %s: FI_EP_RDM "
      "FI_MSG, order %s, %s progress, max msg %zu, inject %zu, senders by "
      "%s, %s",
      FI_MAJOR(fi_version()), FI_MINOR(fi_version()), i->fabric_attr->prov_name,
      i->fabric_attr->name, i->domain_attr->name, x->sas ? "SAS" : "none",
      i->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto",
      i->ep_attr->max_msg_size, i->tx_attr->inject_size,
      x->cqdata ? "CQ data" : "FI_SOURCE",
      x->cfg.busy_poll ? "busy-poll"
      : x->cq_fd >= 0  ? "blocking (poll on the CQ's fd)"
                       : "blocking (sleep slices)");
  if (x->hmem) {
    size_t n = strlen(x->desc);
    snprintf(x->desc + n, sizeof(x->desc) - n,
             "; cuda: %s (device %d), FI_HMEM: device memory registered "
             "with the provider, not staged",
             x->cuda.name, x->cuda.device);
  }
  return x->desc;
}

static void fab_close(xport *xp) {
  xport_fabric *x = (xport_fabric *)xp;
  int i;

  for (i = 0; i < MAX_OOB; ++i) {
    oob_end(&x->oobs[i]);
  }
  if (x->lfd >= 0) {
    close(x->lfd);
  }
  if (x->ep) {
    fi_close(&x->ep->fid);
  }
  for (i = 0; i < (int)x->regs.n; ++i) {
    fi_close(&((struct fid_mr *)x->regs.r[i].handle)->fid);
    if (x->regs.r[i].owned) {
      x->cu->dev_free((void *)x->regs.r[i].lo);
    }
  }
  xregions_free(&x->regs);
  if (x->av) {
    fi_close(&x->av->fid);
  }
  if (x->cq) {
    fi_close(&x->cq->fid);
  }
  if (x->domain) {
    fi_close(&x->domain->fid);
  }
  if (x->fabric) {
    fi_close(&x->fabric->fid);
  }
  if (x->info) {
    fi_freeinfo(x->info);
  }
  free(x->sends);
  free(x->recvs);
  free(x->cq_ring);
  free(x);
}

/* open_listener opens the exchange's TCP socket on cfg.port. */
static int open_listener(xport_fabric *x) {
  struct sockaddr_storage ss;
  socklen_t len;
  char a[80];
  int one = 1;
  const xport_config *cfg = &x->cfg;
  int rv = xport_parse_addr(cfg->bind_addr           ? cfg->bind_addr
                            : cfg->family == AF_INET ? "0.0.0.0"
                                                     : "::",
                            cfg->port, cfg->family, &ss, &len);

  if (rv != 0) {
    return rv;
  }
  x->lfd = socket(cfg->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                  IPPROTO_TCP);
  if (x->lfd < 0) {
    return -errno;
  }
  setsockopt(x->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (cfg->family == AF_INET6) {
    setsockopt(x->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  if (bind(x->lfd, (struct sockaddr *)&ss, len) != 0 ||
      listen(x->lfd, 64) != 0) {
    rv = -errno;
    flog(x, "fabric: address exchange: bind/listen %s: %s",
         xport_format_addr((struct sockaddr *)&ss, a, sizeof(a)),
         strerror(errno));
    return rv;
  }
  return 0;
}

/* open_fabric opens the fabric, domain, completion queue, address vector
   and endpoint of |x->info|. */
static int open_fabric(xport_fabric *x) {
  struct fi_cq_attr cqa;
  struct fi_av_attr ava;
  const char *step;
  int rv;

  x->cqdata = x->info->domain_attr->cq_data_size >= 4;
  memset(&cqa, 0, sizeof(cqa));
  cqa.format = FI_CQ_FORMAT_DATA;
  cqa.size = x->cfg.max_sends + x->cfg.max_recvs;
  cqa.wait_obj = x->cfg.busy_poll ? FI_WAIT_NONE : FI_WAIT_FD;
  memset(&ava, 0, sizeof(ava));
  ava.type = FI_AV_TABLE;
  ava.count = MAX_PEERS;
  x->name_len = sizeof(x->name);
  step = "fi_fabric";
  rv = fi_fabric(x->info->fabric_attr, &x->fabric, NULL);
  if (rv == 0) {
    step = "fi_domain";
    rv = fi_domain(x->fabric, x->info, &x->domain, NULL);
  }
  if (rv == 0) {
    step = "fi_cq_open";
    rv = fi_cq_open(x->domain, &cqa, &x->cq, NULL);
    if (rv != 0 && cqa.wait_obj == FI_WAIT_FD) {
      cqa.wait_obj = FI_WAIT_NONE;
      rv = fi_cq_open(x->domain, &cqa, &x->cq, NULL);
    }
  }
  if (rv == 0 && cqa.wait_obj == FI_WAIT_FD &&
      fi_control(&x->cq->fid, FI_GETWAIT, &x->cq_fd) != 0) {
    x->cq_fd = -1;
  }
  if (rv == 0) {
    step = "fi_av_open";
    rv = fi_av_open(x->domain, &ava, &x->av, NULL);
  }
  if (rv != 0) {
    flog(x, "fabric: %s (provider %s): %s", step,
         x->info->fabric_attr->prov_name, fi_strerror(-rv));
    return -EIO;
  }
  return open_ep(x);
}

/* open_ep opens the endpoint on |x|'s domain, bound to its completion
   queue and address vector, and reads its name. */
static int open_ep(xport_fabric *x) {
  const char *step = "fi_endpoint";
  int rv = fi_endpoint(x->domain, x->info, &x->ep, NULL);

  x->name_len = sizeof(x->name);
  if (rv == 0) {
    step = "fi_ep_bind(cq)";
    rv = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV);
  }
  if (rv == 0) {
    step = "fi_ep_bind(av)";
    rv = fi_ep_bind(x->ep, &x->av->fid, 0);
  }
  if (rv == 0) {
    step = "fi_enable";
    rv = fi_enable(x->ep);
  }
  if (rv == 0) {
    step = "fi_getname";
    rv = fi_getname(&x->ep->fid, x->name, &x->name_len);
  }
  if (rv != 0) {
    flog(x, "fabric: %s (provider %s): %s", step,
         x->info->fabric_attr->prov_name, fi_strerror(-rv));
    return rv == -FI_ETOOSMALL ? -EPROTO : -EIO;
  }
  return 0;
}

static int fab_open(xport **px, const xport_config *cfg) {
  xport_fabric *x;
  const char *prov = provider_of(cfg);
  uint32_t i;
  int rv;

  if (cfg->max_sends == 0 || cfg->max_recvs == 0) {
    return -EINVAL;
  }
  x = calloc(1, sizeof(*x));
  if (x == NULL) {
    return -ENOMEM;
  }
  x->base.ops = &xport_fabric_ops;
  x->cfg = *cfg;
  x->lfd = -1;
  x->cq_fd = -1;
  x->peer_timeout_ns =
      cfg->peer_timeout_ns ? cfg->peer_timeout_ns : 5000000000ull;
  x->ps_head = x->ps_tail = x->pr_head = x->pr_tail = -1;
  for (i = 0; i <= MAX_OOB; ++i) {
    x->oobs[i].fd = -1;
    x->oobs[i].peer = -1;
  }
  for (i = 0; i < FA_MAP; ++i) {
    x->fa_peer[i] = -1;
  }
  if (cfg->mem == XPORT_MEM_CUDA) {
    /* Device memory the provider takes itself (GPUDirect RDMA on EFA), or
       -ENOTSUP: xport_open then stages it through pinned host buffers. */
    char err[256];
    rv = xcuda_open(cfg->cuda_device, &x->cu, &x->cuda, err, sizeof(err));
    if (rv == 0 &&
        get_info(prov, cfg->family, cfg->bind_addr, 1, &x->info, &x->sas)) {
      flog(x,
           "fabric: provider %s takes no device memory (FI_HMEM): it is "
           "staged through pinned host buffers",
           prov ? prov : "(first)");
      rv = -ENOTSUP;
    }
    if (rv != 0) {
      fab_close(&x->base);
      return rv;
    }
    x->hmem = 1;
  }
  rv = x->info
           ? 0
           : get_info(prov, cfg->family, cfg->bind_addr, 0, &x->info, &x->sas);
  if (rv != 0) {
    flog(x,
         "fabric: no provider%s%s%s offers FI_EP_RDM with FI_MSG and "
         "FI_SOURCE for %s%s (fi_getinfo: %s; srd-perf --list-providers "
         "lists what this machine has)",
         prov ? " '" : "", prov ? prov : "", prov ? "'" : "",
         cfg->family == AF_INET6 ? "IPv6" : "IPv4",
         cfg->bind_addr ? " on that address" : "", fi_strerror(-rv));
    fab_close(&x->base);
    return rv == -FI_ENODATA ? -ENODEV : -EIO;
  }
  x->sends = calloc(cfg->max_sends, sizeof(*x->sends));
  x->recvs = calloc(cfg->max_recvs, sizeof(*x->recvs));
  x->cq_cap = cfg->max_sends + cfg->max_recvs;
  x->cq_ring = calloc(x->cq_cap, sizeof(*x->cq_ring));
  if (!x->sends || !x->recvs || !x->cq_ring) {
    fab_close(&x->base);
    return -ENOMEM;
  }
  for (i = 0; i < cfg->max_sends; ++i) {
    x->sends[i].next = i + 1 < cfg->max_sends ? (int)i + 1 : -1;
  }
  for (i = 0; i < cfg->max_recvs; ++i) {
    x->recvs[i].next = i + 1 < cfg->max_recvs ? (int)i + 1 : -1;
  }
  x->send_free = x->recv_free = 0;
  if ((rv = open_fabric(x)) != 0 || (cfg->listen && (rv = open_listener(x)))) {
    fab_close(&x->base);
    return rv;
  }
  if (x->hmem && !hmem_works(x)) {
    flog(x,
         "fabric: provider %s offers FI_HMEM but cannot register this "
         "device's memory: it is staged through pinned host buffers",
         x->info->fabric_attr->prov_name);
    fab_close(&x->base);
    return -ENOTSUP;
  }
  *px = &x->base;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory: host, or device memory registered with the provider (FI_HMEM)     */

/* reg_mr registers [buf, buf + len) of device memory with the domain. */
static int reg_mr(xport_fabric *x, void *buf, size_t len, struct fid_mr **mr) {
  struct iovec iov = {buf, len};
  struct fi_mr_attr a;
  int rv;

  memset(&a, 0, sizeof(a));
  a.mr_iov = &iov;
  a.iov_count = 1;
  a.access = FI_SEND | FI_RECV;
  a.iface = FI_HMEM_CUDA;
  a.device.cuda = x->cuda.device;
  rv = fi_mr_regattr(x->domain, &a, 0, mr);
  if (rv != 0) {
    flog(x, "fabric: fi_mr_regattr (FI_HMEM_CUDA, %zu bytes): %s", len,
         fi_strerror(-rv));
  }
  return rv;
}

/* hmem_works says whether the provider registers this device's memory
   (a provider may offer FI_HMEM for a CUDA its libfabric cannot load). */
static int hmem_works(xport_fabric *x) {
  struct fid_mr *mr;
  void *p = NULL;
  int ok;

  if (x->cu->dev_alloc(&p, 4096) != 0) {
    return 0;
  }
  ok = reg_mr(x, p, 4096, &mr) == 0;
  if (ok) {
    fi_close(&mr->fid);
  }
  x->cu->dev_free(p);
  return ok;
}

static void *fab_mem_alloc(xport *xp, size_t len) {
  xport_fabric *x = (xport_fabric *)xp;
  struct fid_mr *mr;
  void *p = NULL;
  int e;

  if (!x->hmem) {
    return posix_memalign(&p, 64, len ? len : 1) == 0 ? p : NULL;
  }
  e = x->cu->dev_alloc(&p, len ? len : 1);
  if (e != 0) {
    flog(x, "cuda: device memory: %s", xcuda_strerror(e));
    return NULL;
  }
  if (reg_mr(x, p, len ? len : 1, &mr) != 0) {
    x->cu->dev_free(p);
    return NULL;
  }
  if (xregions_add(&x->regs, p, len ? len : 1, 1, mr) != 0) {
    fi_close(&mr->fid);
    x->cu->dev_free(p);
    return NULL;
  }
  return p;
}

static void fab_mem_free(xport *xp, void *p) {
  xport_fabric *x = (xport_fabric *)xp;
  xregion r;

  if (!x->hmem) {
    free(p);
  } else if (xregions_del(&x->regs, p, &r) == 0) {
    fi_close(&((struct fid_mr *)r.handle)->fid);
    if (r.owned) {
      x->cu->dev_free(p);
    }
  }
}

static int fab_mem_register(xport *xp, void *buf, size_t len) {
  xport_fabric *x = (xport_fabric *)xp;
  struct fid_mr *mr;
  int rv;

  if (!x->hmem) {
    return -ENOTSUP;
  }
  if (len == 0) {
    return -EINVAL;
  }
  if (reg_mr(x, buf, len, &mr) != 0) {
    return -EIO;
  }
  rv = xregions_add(&x->regs, buf, len, 0, mr); /* -EEXIST: overlaps */
  if (rv != 0) {
    fi_close(&mr->fid);
  }
  return rv;
}

static int fab_mem_unregister(xport *xp, void *buf) {
  xport_fabric *x = (xport_fabric *)xp;
  xregion r;

  if (!x->hmem) {
    return -ENOTSUP;
  }
  if (xregions_del(&x->regs, buf, &r) != 0) {
    return -ENOENT;
  }
  fi_close(&((struct fid_mr *)r.handle)->fid);
  return 0;
}

static int fab_mem_copy(xport *xp, void *dst, const void *src, size_t len) {
  xport_fabric *x = (xport_fabric *)xp;
  int e;

  if (!x->hmem) {
    memcpy(dst, src, len);
    return 0;
  }
  e = len ? x->cu->memcpy_sync(dst, src, len) : 0;
  if (e != 0) {
    flog(x, "cuda: copy: %s", xcuda_strerror(e));
    return -EIO;
  }
  return 0;
}

const xport_ops xport_fabric_ops = {
    .name = "fabric",
    .open = fab_open,
    .close = fab_close,
    .add_peer = fab_add_peer,
    .remove_peer = fab_remove_peer,
    .post_send = fab_post_send,
    .post_recv = fab_post_recv,
    .poll_cq = fab_poll_cq,
    .progress = fab_progress,
    .get_stats = fab_get_stats,
    .local_addr = fab_local_addr,
    .peer_addr = fab_peer_addr,
    .describe = fab_describe,
    .mem_alloc = fab_mem_alloc,
    .mem_free = fab_mem_free,
    .mem_register = fab_mem_register,
    .mem_unregister = fab_mem_unregister,
    .mem_copy = fab_mem_copy,
};
