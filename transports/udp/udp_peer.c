/*
 * udp_peer.c: the udp backend's peer map.  A peer is an srd peer of the
 * engine and the base address of its port range; a datagram's source
 * address finds its peer (udp.h, "Paths and ports").  With a single
 * peer the sending sockets are connected to it (connect_sends).
 */
#define _GNU_SOURCE
#include "udp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* A passive peer that is not established and has sent nothing for that
   long is dropped (a forged or abandoned handshake must not hold a slot).
   Silence, not age: a client restarted on the same ports re-handshakes
   on an old slot, and must not lose it halfway. */
#define PASSIVE_HS_TIMEOUT_NS (2ull * 1000000000ull)

uint16_t udp_sa_port(const struct sockaddr_storage *ss) {
  return ss->ss_family == AF_INET
             ? ntohs(((const struct sockaddr_in *)ss)->sin_port)
             : ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

void udp_sa_set_port(struct sockaddr_storage *ss, uint16_t port) {
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

/* peer_at returns the peer of |sa|'s ip whose base port is |base|, or
   -1. */
static int peer_at(const xport_udp *x, const struct sockaddr *sa,
                   uint16_t base) {
  uint32_t i;

  for (i = 0; i < x->max_peers; ++i) {
    if (x->peers[i].used && udp_sa_port(&x->peers[i].addr) == base &&
        sa_same_ip(&x->peers[i].addr, sa)) {
      return (int)i;
    }
  }
  return -1;
}

int udp_peer_find(xport_udp *x, const void *sav, const uint8_t *pkt,
                  size_t len) {
  const struct sockaddr *sa = sav;
  uint16_t port, off;
  int best = -1;
  uint16_t best_base = 0;
  uint32_t i;
  srd_pkt_info info;

  if (sa->sa_family == AF_INET) {
    port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
  } else {
    return -ENOENT;
  }
  /* The common case: the peer of the previous datagram. */
  i = x->last_hit;
  if (i < x->max_peers && x->peers[i].used) {
    uint16_t b = udp_sa_port(&x->peers[i].addr);
    if (port >= b && port - b < XPORT_MAX_PATHS &&
        sa_same_ip(&x->peers[i].addr, sa)) {
      /* Still the largest base <= port?  Only a peer of the same ip whose
         base lies in (b, port] could be better; such ranges are rare,
         check them all only when more than one peer exists. */
      best = (int)i;
      best_base = b;
      if (x->npeers == 1) {
        goto confirm;
      }
    }
  }
  for (i = 0; i < x->max_peers; ++i) {
    uint16_t b;
    if (!x->peers[i].used || (int)i == best) {
      continue;
    }
    b = udp_sa_port(&x->peers[i].addr);
    if (port >= b && port - b < XPORT_MAX_PATHS &&
        (best < 0 || b > best_base) && sa_same_ip(&x->peers[i].addr, sa)) {
      best = (int)i;
      best_base = b;
    }
  }
  if (best < 0) {
    return -ENOENT;
  }
confirm:
  /* The range says whose it may be; the first datagram from each port of
     a peer confirms it, by the path its header names (its socket: base +
     path is the port).  A new client that took ports inside a lingering
     peer's range is told apart so, and its handshake earns it a slot of
     its own, instead of being taken for the old one's. */
  off = (uint16_t)(port - best_base);
  if (!(x->peers[best].ports_ok >> off & 1)) {
    if (srd_pkt_peek(pkt, len, &info) != 0 || info.path >= XPORT_MAX_PATHS) {
      return best; /* not intact: the engine drops and counts it */
    }
    if (info.path != off) {
      if (port < info.path ||
          (best = peer_at(x, sa, (uint16_t)(port - info.path))) < 0) {
        return -ENOENT;
      }
      off = info.path;
    }
    x->peers[best].ports_ok |= 1ull << off;
  }
  x->last_hit = (uint32_t)best;
  return best;
}

/* connect_sends connects the sending sockets to the only peer, or
   disconnects them when there is not exactly one. */
static void connect_sends(xport_udp *x) {
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
      udp_log(x, "connect: %s; sends name their address", strerror(errno));
      for (k = 1; k < i; ++k) {
        connect(x->fd[k], (struct sockaddr *)&un, sizeof(un));
      }
      want = -1;
      break;
    }
  }
  x->conn_peer = want;
}

/* tap_local finds our address towards |p| as the kernel would route to
   it (a UDP socket connected to it sends nothing), for the tap; our
   bound address when that fails. */
static void tap_local(xport_udp *x, upeer *p) {
  socklen_t l = sizeof(p->tap_local);
  int fd = socket(p->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || connect(fd, (struct sockaddr *)&p->addr, p->alen) != 0 ||
      getsockname(fd, (struct sockaddr *)&p->tap_local, &l) != 0) {
    l = sizeof(p->tap_local);
    getsockname(x->fd[0], (struct sockaddr *)&p->tap_local, &l);
  }
  if (fd >= 0) {
    close(fd);
  }
}

void udp_tap(xport_udp *x, int out, uint32_t pi, uint16_t sock,
             const struct sockaddr *from, const uint8_t *hdr, size_t hdrlen,
             const uint8_t *payload, size_t paylen) {
  const upeer *p = &x->peers[pi];
  struct sockaddr_storage us = p->tap_local;

  udp_sa_set_port(&us, (uint16_t)(x->port0 + sock));
  if (from == NULL) {
    from = (const struct sockaddr *)&p->addr;
  }
  if (out) {
    x->cfg.tap(x->cfg.tap_user, 1, (struct sockaddr *)&us, from, hdr, hdrlen,
               payload, paylen, xport_now());
  } else {
    x->cfg.tap(x->cfg.tap_user, 0, from, (struct sockaddr *)&us, hdr, hdrlen,
               payload, paylen, xport_now());
  }
}

static int bind_peer(xport_udp *x, srd_peer_id id,
                     const struct sockaddr_storage *ss, socklen_t len,
                     int passive);

int udp_peer_new(xport_udp *x, const struct sockaddr_storage *ss, socklen_t len,
                 int passive, xport_peer *ppeer) {
  srd_peer_settings ps;
  srd_peer_id id;
  int rv;

  srd_peer_settings_default(&ps);
  ps.n_paths = x->nfd;
  /* mtu 0 takes the largest the wire format allows, so a peer we add
     gets what its route carries unfragmented (a fragment lost is the
     whole packet lost): the handshake then settles both ends on it.  A
     passive peer's own offer (it looked its route up) wins the same way. */
  if (x->cfg.mtu == 0 && !passive) {
    int m = xport_path_mtu((const struct sockaddr *)ss, len);
    if (m > 0 && (uint32_t)m < x->mtu) {
      ps.mtu = (uint32_t)m;
    }
  }
  rv = srd_ep_add_peer(x->ep, &ps, &id);
  if (rv != 0) {
    return udp_errno(rv);
  }
  rv = bind_peer(x, id, ss, len, passive);
  if (rv == 0) {
    *ppeer = id;
  }
  return rv;
}

int udp_peer_adopt(xport_udp *x, srd_peer_id id,
                   const struct sockaddr_storage *ss, socklen_t len) {
  return bind_peer(x, id, ss, len, 1);
}

/* bind_peer maps engine peer |id| to address |ss|. */
static int bind_peer(xport_udp *x, srd_peer_id id,
                     const struct sockaddr_storage *ss, socklen_t len,
                     int passive) {
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
  if (x->cfg.tap) {
    tap_local(x, &x->peers[id]);
  }
  if (++x->npeers > x->peers_max) {
    x->peers_max = x->npeers;
  }
  connect_sends(x);
  return 0;
}

void udp_peer_drop(xport_udp *x, srd_peer_id id, uint64_t now) {
  srd_ep_remove_peer(x->ep, id, now);
  x->peers[id].used = 0;
  --x->npeers;
  connect_sends(x);
}

void udp_peer_gc(xport_udp *x, uint64_t now) {
  uint32_t i;
  srd_peer_stats st;
  char a[80];

  if (now - x->last_gc < 100000000ull) {
    return;
  }
  x->last_gc = now;
  udp_hs_rekey(x, now);
  /* Dropping a quiet half-open peer by the clock alone broke a client
     that had its session (our HS_CONFIRM lost) and nothing to send for
     2 s: its later data met no peer here and was retransmitted until its
     retry budget ran out (srd-coll, 4 ranks, one run in two). */
  if ((uint64_t)x->npeers * 4 < (uint64_t)x->max_peers * 3) {
    return;
  }
  for (i = 0; i < x->max_peers; ++i) {
    upeer *p = &x->peers[i];
    if (!p->used || !p->passive || now - p->last_rx < PASSIVE_HS_TIMEOUT_NS) {
      continue;
    }
    if (srd_ep_get_peer_stats(x->ep, i, &st) == 0 &&
        st.state != SRD_PEER_STATE_ESTABLISHED) {
      udp_log(x, "dropping peer %s: no handshake completed, and silent for 2 s",
              xport_format_addr((struct sockaddr *)&p->addr, a, sizeof(a)));
      udp_peer_drop(x, i, now);
    }
  }
}

void udp_peer_passive_settings(const xport_udp *x, srd_peer_settings *ps) {
  srd_peer_settings_default(ps);
  ps->n_paths = x->nfd;
}

void udp_hs_rekey(xport_udp *x, uint64_t now) {
  uint8_t key[16];

  if (x->hs_key_at != 0 && now - x->hs_key_at < 60000000000ull) {
    return;
  }
  x->hs_key_at = now ? now : 1;
  if (getrandom(key, sizeof(key), GRND_NONBLOCK) == (ssize_t)sizeof(key)) {
    srd_ep_set_hs_secret(x->ep, key, sizeof(key));
  }
}
