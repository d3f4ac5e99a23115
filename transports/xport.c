/*
 * xport.c: the backend registry, the calls that dispatch to a backend, and
 * the helpers every backend and tool shares (clock, addresses, errors).
 */
#define _GNU_SOURCE
#include "xport.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <srd/srd.h>

#include "config.h"
#include "cuda/xcuda.h"
#include "cuda/xport_stage.h"

/* The registry.  The udp backend needs liburing; a build without it
   leaves the backend out (tools/configure.sh records that in config.h,
   and the build says so at its end); so does the fabric backend without
   libfabric. */
static const xport_ops *const backends[] = {
#ifdef SRD_HAVE_URING
    &xport_udp_ops,
#endif
    &xport_tcp_ops,
#ifdef SRD_HAVE_FABRIC
    &xport_fabric_ops,
#endif
    NULL,
};

static const char *const backend_names[] = {
#ifdef SRD_HAVE_URING
    "udp",
#endif
    "tcp",
#ifdef SRD_HAVE_FABRIC
    "fabric",
#endif
    NULL,
};

/* Every backend the project has, built in or not, and why it would be
   missing from this build. */
static const struct {
  const char *name;
  const char *missing;
} known_backends[] = {
#ifdef SRD_HAVE_URING
    {"udp", NULL},
#else
    {"udp", "liburing was not found by pkg-config when this was built "
            "(make deps installs liburing-dev; make then rebuilds)"},
#endif
    {"tcp", NULL},
#ifdef SRD_HAVE_FABRIC
    {"fabric", NULL},
#else
    {"fabric", "libfabric was not found by pkg-config when this was built "
               "(make deps installs libfabric-dev; make then rebuilds)"},
#endif
};

#ifndef SRD_HAVE_FABRIC
int xport_fabric_providers(const char *provider, int family, FILE *f) {
  (void)provider;
  (void)family;
  (void)f;
  return -ENOENT;
}
#endif

const char *xport_backend_missing(const char *name) {
  size_t i;

  for (i = 0; i < sizeof(known_backends) / sizeof(known_backends[0]); ++i) {
    if (strcmp(known_backends[i].name, name) == 0) {
      return known_backends[i].missing ? known_backends[i].missing
                                       : "it is built in";
    }
  }
  return "no backend has that name";
}

const xport_ops *xport_backend(const char *name) {
  size_t i;

  for (i = 0; backends[i]; ++i) {
    if (strcmp(backends[i]->name, name) == 0) {
      return backends[i];
    }
  }
  return NULL;
}

const char *const *xport_backend_names(void) {
  return backend_names;
}

void xport_config_default(xport_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->backend = "udp";
  cfg->family = AF_INET;
  cfg->n_paths = 16;
  cfg->burst = 64;
  cfg->mtu = 0;
  cfg->max_msg_size = 1u << 20;
  cfg->max_sends = 1024;
  cfg->max_recvs = 1024;
  cfg->mem = XPORT_MEM_HOST;
}

int xport_open(xport **px, const xport_config *cfg) {
  const xport_ops *ops = xport_backend(cfg->backend ? cfg->backend : "udp");

  if (ops == NULL) {
    return -ENOENT;
  }
  if (cfg->mem != XPORT_MEM_HOST && cfg->mem != XPORT_MEM_CUDA) {
    return -EINVAL;
  }
  if (cfg->family != AF_INET && cfg->family != AF_INET6) {
    return -EINVAL;
  }
  if (cfg->mem == XPORT_MEM_CUDA) {
    /* A backend with memory calls of its own may take device memory
       itself (fabric: FI_HMEM, GPUDirect RDMA on EFA); it says -ENOTSUP
       when it cannot, and every other backend stages device memory
       through pinned host buffers (it sees host memory only). */
    if (ops->mem_alloc) {
      int rv = ops->open(px, cfg);
      if (rv != -ENOTSUP) {
        return rv;
      }
    }
    return xport_stage_open(px, ops, cfg);
  }
  return ops->open(px, cfg);
}

void xport_close(xport *x) {
  if (x) {
    x->ops->close(x);
  }
}

int xport_add_peer(xport *x, const struct sockaddr *addr, socklen_t len,
                   xport_peer *ppeer) {
  return x->ops->add_peer(x, addr, len, ppeer);
}

int xport_remove_peer(xport *x, xport_peer peer) {
  return x->ops->remove_peer(x, peer);
}

int xport_post_send(xport *x, xport_peer peer, const void *buf, size_t len,
                    void *ctx) {
  return x->ops->post_send(x, peer, buf, len, ctx);
}

int xport_post_recv(xport *x, void *buf, size_t cap, void *ctx) {
  return x->ops->post_recv(x, buf, cap, ctx);
}

size_t xport_poll_cq(xport *x, xport_cqe *cqes, size_t n) {
  return x->ops->poll_cq(x, cqes, n);
}

int xport_progress(xport *x, uint64_t timeout_ns) {
  return x->ops->progress(x, timeout_ns);
}

void xport_get_stats(xport *x, xport_stats *st) {
  memset(st, 0, sizeof(*st));
  x->ops->get_stats(x, st);
}

int xport_local_addr(xport *x, struct sockaddr_storage *ss, socklen_t *len) {
  return x->ops->local_addr(x, ss, len);
}

int xport_peer_addr(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                    socklen_t *len) {
  return x->ops->peer_addr(x, peer, ss, len);
}

const char *xport_describe(xport *x) {
  return x->ops->describe(x);
}

int xport_mem_probe(xport_mem mem, int device, char *why, size_t len) {
  if (mem == XPORT_MEM_HOST) {
    return 0;
  }
  if (mem != XPORT_MEM_CUDA) {
    snprintf(why, len, "unknown memory type %d", (int)mem);
    return -EINVAL;
  }
  return xcuda_open(device, NULL, NULL, why, len);
}

void *xport_mem_alloc(xport *x, size_t len) {
  void *p = NULL;

  if (x->ops->mem_alloc) {
    return x->ops->mem_alloc(x, len);
  }
  if (posix_memalign(&p, 64, len ? len : 1) != 0) {
    return NULL;
  }
  return p;
}

void xport_mem_free(xport *x, void *p) {
  if (p == NULL) {
    return;
  }
  if (x->ops->mem_free) {
    x->ops->mem_free(x, p);
  } else {
    free(p);
  }
}

int xport_mem_register(xport *x, void *buf, size_t len) {
  return x->ops->mem_register ? x->ops->mem_register(x, buf, len) : -ENOTSUP;
}

int xport_mem_unregister(xport *x, void *buf) {
  return x->ops->mem_unregister ? x->ops->mem_unregister(x, buf) : -ENOTSUP;
}

int xport_mem_copy(xport *x, void *dst, const void *src, size_t len) {
  if (x->ops->mem_copy) {
    return x->ops->mem_copy(x, dst, src, len);
  }
  memcpy(dst, src, len);
  return 0;
}

const char *xport_strerror(const xport_cqe *cqe) {
  if (cqe->detail <= XPORT_DETAIL_CUDA) {
    return xcuda_strerror(XPORT_DETAIL_CUDA - cqe->detail);
  }
  /* The srd backend keeps the engine's code, whose text is more precise
     than errno's ("peer unresponsive (retry budget exhausted)"). */
  if (cqe->detail <= -200) {
    return srd_strerror(cqe->detail);
  }
  return strerror(-cqe->status);
}

uint64_t xport_now(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int xport_parse_addr(const char *host, uint16_t port, int family,
                     struct sockaddr_storage *ss, socklen_t *len) {
  struct addrinfo hints, *res = NULL;
  char h[256];
  size_t n;

  if (host == NULL || *host == '\0') {
    return -EINVAL;
  }
  /* Accept "[v6]" as well as "v6". */
  n = strlen(host);
  if (host[0] == '[' && n >= 2 && host[n - 1] == ']' && n - 2 < sizeof(h)) {
    memcpy(h, host + 1, n - 2);
    h[n - 2] = '\0';
  } else if (n < sizeof(h)) {
    memcpy(h, host, n + 1);
  } else {
    return -EINVAL;
  }
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = family;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(h, NULL, &hints, &res) != 0 || res == NULL) {
    return -EINVAL;
  }
  memset(ss, 0, sizeof(*ss));
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *len = (socklen_t)res->ai_addrlen;
  freeaddrinfo(res);
  if (ss->ss_family == AF_INET) {
    ((struct sockaddr_in *)ss)->sin_port = htons(port);
  } else if (ss->ss_family == AF_INET6) {
    ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
  } else {
    return -EINVAL;
  }
  return 0;
}

int xport_path_mtu(const struct sockaddr *addr, socklen_t len) {
  int fd = socket(addr->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
  int mtu = 0, hdr;
  socklen_t ml = sizeof(mtu);

  if (fd < 0) {
    return -errno;
  }
  /* connect() on a UDP socket only looks the route up. */
  if (connect(fd, addr, len) != 0 ||
      getsockopt(fd, addr->sa_family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
                 addr->sa_family == AF_INET ? IP_MTU : IPV6_MTU, &mtu,
                 &ml) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  close(fd);
  /* IP and UDP headers, and the largest srd data header (an
     acknowledgement riding on it included). */
  hdr = (addr->sa_family == AF_INET ? 20 : 40) + 8 + SRD_PKT_MAX_HDR;
  mtu -= hdr;
  if (mtu > 65000) {
    mtu = 65000;
  }
  return mtu < 256 ? -EMSGSIZE : mtu;
}

const char *xport_format_addr(const struct sockaddr *sa, char *buf,
                              size_t cap) {
  char a[INET6_ADDRSTRLEN];

  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
    snprintf(buf, cap, "%s:%u", a, ntohs(s4->sin_port));
  } else if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
    snprintf(buf, cap, "[%s]:%u", a, ntohs(s6->sin6_port));
  } else {
    snprintf(buf, cap, "(family %d)", sa->sa_family);
  }
  return buf;
}

void xport_logf(const xport_config *cfg, const char *fmt, ...) {
  char msg[512];
  va_list ap;

  if (cfg->log == NULL) {
    return;
  }
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  cfg->log(cfg->user_data, msg);
}
