/*
 * srd_hs.c: the stateless handshake responder (srd.h, "Stateless
 * handshake"; docs/protocol.md, "Stateless responder").  An HS_REQ from an
 * unknown address is answered with a cookie that is a MAC of what the
 * answer committed to, and nothing is kept; the echo of a valid cookie
 * creates the peer, already established.
 */
#include <assert.h>
#include <string.h>

#include "srd_ep.h"
#include "srd_macro.h"
#include "srd_pkt.h"
#include "srd_siphash.h"

/* The bytes a cookie's MAC covers: the time bucket, both incarnation ids
   (the one offered in the answer first), the request's parameters and
   the address. */
#define MAC_FIXED 28

static void hs_put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint64_t cookie_mac(const uint8_t *key, uint64_t bucket, uint32_t local,
                           uint32_t remote, const srd_pkt_hs *params,
                           const void *addr, size_t addrlen) {
  uint8_t m[MAC_FIXED + 1 + SRD_HS_ADDR_MAX];
  uint64_t c;

  hs_put32(m, (uint32_t)(bucket >> 32));
  hs_put32(m + 4, (uint32_t)bucket);
  hs_put32(m + 8, local);
  hs_put32(m + 12, remote);
  hs_put32(m + 16, params->mtu);
  hs_put32(m + 20, params->max_msg_size);
  hs_put32(m + 24, params->msg_window);
  m[MAC_FIXED] = (uint8_t)addrlen;
  if (addrlen) {
    memcpy(m + MAC_FIXED + 1, addr, addrlen);
  }
  c = srd_siphash24(key, m, MAC_FIXED + 1 + addrlen);
  /* 0 means "no cookie" on the wire; one tag in 2^64 moves. */
  return c ? c : 1;
}

static int ps_ok(const srd_peer_settings *ps) {
  return ps->n_paths >= 1 && ps->n_paths <= SRD_MAX_PATHS &&
         (ps->mtu == 0 || ps->mtu >= SRD_PKT_MIN_MTU);
}

/* ours says whether |conn| is an incarnation id of this endpoint: its
   own, or one of a peer's sessions. */
static int ours(const srd_ep *ep, uint32_t conn) {
  uint32_t i;

  if (conn == ep->conn_id) {
    return 1;
  }
  for (i = 0; i < ep->settings.max_peers; ++i) {
    if (ep->peers[i] != NULL && ep->peers[i]->local_conn == conn) {
      return 1;
    }
  }
  return 0;
}

static int hs_refuse(srd_ep *ep, srd_tstamp now, srd_drop_reason why,
                     uint8_t type, int err) {
  ++ep->stats.hs_refused;
  srd_ep_drop(ep, now, UINT32_MAX, why, type);
  return err;
}

srd_ssize srd_ep_answer_hs(srd_ep *ep, const srd_peer_settings *ps,
                           const void *addr, size_t addrlen, const uint8_t *pkt,
                           size_t len, uint8_t *out, size_t cap,
                           uint32_t *out_path, srd_tstamp now) {
  srd_pkt in;
  srd_pkt_common c;
  srd_pkt_hs hs;
  srd_drop_reason why;
  srd_ssize n;
  uint32_t local, mtu;
  uint64_t cookie;

  if (ep == NULL || ps == NULL || pkt == NULL || out == NULL ||
      (addr == NULL && addrlen > 0) || addrlen > SRD_HS_ADDR_MAX ||
      !ps_ok(ps)) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  ++ep->stats.pkts_in;
  ep->stats.bytes_in += len;
  /* The answer is never longer than what asked for it. */
  if (len < SRD_PKT_HS_RESP_LEN) {
    return hs_refuse(ep, now, SRD_DROP_TRUNCATED, SRD_PKT_HS_REQ,
                     SRD_ERR_PROTO);
  }
  if (srd_pkt_decode(&in, pkt, len, len, &why) != 0) {
    return hs_refuse(ep, now, why, len > 1 ? pkt[1] : 0, SRD_ERR_PROTO);
  }
  if (in.c.type != SRD_PKT_HS_REQ) {
    return hs_refuse(ep, now, SRD_DROP_NO_SESSION, in.c.type, SRD_ERR_PROTO);
  }
  if (ours(ep, in.c.src_conn)) {
    /* Our own request come back (or an id drawn twice). */
    return hs_refuse(ep, now, SRD_DROP_BAD_CONN, in.c.type, SRD_ERR_STALE);
  }
  if (cap < SRD_PKT_HS_RESP_LEN) {
    return SRD_ERR_NOBUF;
  }
  /* The incarnation id the session would have here: fresh for every
     answer, bound by the MAC, so that the echo names it. */
  do {
    local = srd_pcg_u32(&ep->pcg);
  } while (local == 0 || local == in.c.src_conn || ours(ep, local));
  cookie = cookie_mac(ep->hs_key, now / ep->settings.hs_cookie_period, local,
                      in.c.src_conn, &in.u.hs, addr, addrlen);
  mtu = ps->mtu == 0 || ps->mtu > ep->settings.mtu ? ep->settings.mtu : ps->mtu;
  memset(&c, 0, sizeof(c));
  c.version = SRD_PROTO_VERSION;
  c.src_conn = local;
  c.dst_conn = in.c.src_conn;
  c.path = (uint16_t)(in.c.path % ps->n_paths);
  memset(&hs, 0, sizeof(hs));
  hs.echo = in.u.hs.nonce;
  hs.nonce = cookie;
  hs.mtu = mtu;
  hs.max_msg_size = ep->settings.max_msg_size;
  hs.msg_window = ep->settings.msg_window;
  n = srd_pkt_encode_hs(out, cap, SRD_PKT_HS_RESP, &c, &hs);
  assert(n == SRD_PKT_HS_RESP_LEN && (size_t)n <= len);
  if (out_path != NULL) {
    *out_path = c.path;
  }
  ++ep->stats.hs_answered;
  ++ep->stats.pkts_out;
  ++ep->stats.ctrl_pkts_out;
  ep->stats.bytes_out += (uint64_t)n;
  return n;
}

/* valid says whether |cookie| is one that srd_ep_answer_hs made at a
   time in this bucket or the previous one, under either key. */
static int valid(const srd_ep *ep, uint64_t cookie, uint32_t local,
                 uint32_t remote, const srd_pkt_hs *params, const void *addr,
                 size_t addrlen, srd_tstamp now) {
  uint64_t b = now / ep->settings.hs_cookie_period;
  int k, back;

  for (k = 0; k < 1 + ep->hs_has_prev; ++k) {
    const uint8_t *key = k ? ep->hs_key_prev : ep->hs_key;
    for (back = 0; back < 2 && (uint64_t)back <= b; ++back) {
      if (cookie_mac(key, b - (uint64_t)back, local, remote, params, addr,
                     addrlen) == cookie) {
        return 1;
      }
    }
  }
  return 0;
}

/* replay says whether a session of incarnation |remote|, or one opened
   with our id |local|, exists or was opened by a cookie lately. */
static int replay(const srd_ep *ep, uint32_t local, uint32_t remote) {
  uint32_t i;

  for (i = 0; i < SRD_HS_SPENT; ++i) {
    if (ep->hs_spent[i] == local) {
      return 1;
    }
  }
  for (i = 0; i < ep->settings.max_peers; ++i) {
    const srd_peer *p = ep->peers[i];
    if (p != NULL &&
        (p->local_conn == local || (p->peer_conn == remote && remote != 0) ||
         (p->cookie != 0 && p->cookie_conn == remote))) {
      return 1;
    }
  }
  return 0;
}

int srd_ep_accept_cookie(srd_ep *ep, const srd_peer_settings *ps,
                         const void *addr, size_t addrlen, const uint8_t *pkt,
                         size_t len, srd_peer_id *ppeer, srd_tstamp now) {
  srd_pkt in;
  srd_pkt_hs params;
  srd_drop_reason why;
  srd_peer *p;
  srd_peer_id id;
  uint64_t cookie;
  int rv;

  if (ep == NULL || ps == NULL || pkt == NULL || ppeer == NULL ||
      (addr == NULL && addrlen > 0) || addrlen > SRD_HS_ADDR_MAX ||
      !ps_ok(ps)) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (srd_pkt_decode(&in, pkt, len, len, &why) != 0) {
    return hs_refuse(ep, now, why, len > 1 ? pkt[1] : 0, SRD_ERR_PROTO);
  }
  memset(&params, 0, sizeof(params));
  if (in.c.type == SRD_PKT_HS_CONFIRM) {
    cookie = in.u.hs.echo;
    params = in.u.hs;
  } else if (in.c.type == SRD_PKT_DATA &&
             (in.c.flags & SRD_DATA_FLAG_HS_ECHO)) {
    cookie = in.u.data.hs_echo;
    params.mtu = in.u.data.hs_mtu;
    params.max_msg_size = in.u.data.hs_max_msg_size;
    params.msg_window = in.u.data.hs_msg_window;
  } else {
    return hs_refuse(ep, now, SRD_DROP_NO_SESSION, in.c.type, SRD_ERR_PROTO);
  }
  if (!valid(ep, cookie, in.c.dst_conn, in.c.src_conn, &params, addr, addrlen,
             now) ||
      replay(ep, in.c.dst_conn, in.c.src_conn)) {
    return hs_refuse(ep, now, SRD_DROP_BAD_CONN, in.c.type, SRD_ERR_STALE);
  }
  rv = srd_ep_add_peer(ep, ps, &id);
  if (rv != 0) {
    ++ep->stats.hs_refused;
    return rv;
  }
  p = ep->peers[id];
  /* The session's id is the one the answer offered; the cookie stays,
     so that the HS_CONFIRM, passed on next, is taken as its proof. */
  p->local_conn = in.c.dst_conn;
  p->cookie = cookie;
  p->cookie_conn = in.c.src_conn;
  p->cookie_params = params;
  p->reply_path = (uint16_t)(in.c.path % p->paths.n);
  srd_ep_log(ep, now, SRD_LOG_HANDSHAKE, id, -1, in.c.type, in.c.src_conn);
  srd_rx_establish(ep, p, in.c.src_conn, &params, now);
  ep->hs_spent[ep->hs_spent_next++ % SRD_HS_SPENT] = in.c.dst_conn;
  ++ep->stats.hs_accepted;
  *ppeer = id;
  return 0;
}

int srd_ep_set_hs_secret(srd_ep *ep, const void *key, size_t len) {
  const uint8_t *k = key;
  size_t i;

  if (ep == NULL || key == NULL || len == 0) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  memcpy(ep->hs_key_prev, ep->hs_key, sizeof(ep->hs_key));
  ep->hs_has_prev = 1;
  for (i = 0; i < sizeof(ep->hs_key); ++i) {
    ep->hs_key[i] = k[i % len];
  }
  return 0;
}
