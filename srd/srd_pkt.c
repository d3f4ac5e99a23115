/*
 * srd_pkt.c: wire format encode and decode.
 *
 * The decoder is the first thing a hostile or broken datagram meets, so it
 * checks every field, every length and every reserved bit, and says why it
 * refused.  The fuzz target test/fuzz/fuzz_pkt.c holds it to that.
 */
#include "srd_pkt.h"

#include <string.h>

#include "srd_crc32c.h"
#include "srd_macro.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#  error "srd_pkt.c assumes a little-endian host (x86-64, arm64)"
#endif

/* Big-endian fields through one unaligned load or store and a byte swap
   (memcpy of a constant size compiles to a plain move). */
static inline void put16(uint8_t *p, uint16_t v) {
  v = __builtin_bswap16(v);
  memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v) {
  v = __builtin_bswap32(v);
  memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v) {
  v = __builtin_bswap64(v);
  memcpy(p, &v, 8);
}

static inline uint16_t get16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return __builtin_bswap16(v);
}

static inline uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}

static inline uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

static void put_ack_body(uint8_t *p, const srd_pkt_ack *a);
static int get_ack_body(srd_pkt_ack *a, const uint8_t *p, size_t avail,
                        uint32_t max_ranges, uint32_t max_echo,
                        uint32_t max_nack, size_t *n, srd_drop_reason *why);

static void put_common(uint8_t *p, const srd_pkt_common *c, uint8_t type,
                       uint16_t flags) {
  p[0] = SRD_PROTO_VERSION;
  p[1] = type;
  put16(p + 2, flags);
  put32(p + 4, c->src_conn);
  put32(p + 8, c->dst_conn);
  put16(p + 12, c->path);
  put16(p + 14, 0);
  put32(p + 16, 0); /* hcrc: srd_pkt_seal(), once the header is whole */
}

srd_ssize srd_pkt_encode_data(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                              const srd_pkt_data *d) {
  size_t base = srd_pkt_data_hdrlen(c->flags), n = base;

  if (c->flags & SRD_DATA_FLAG_ACK) {
    if (d->ack == NULL || d->ack->empty || d->ack->n_nack ||
        d->ack->n_ranges > SRD_PIGGY_MAX_RANGES ||
        d->ack->n_echo > SRD_PIGGY_MAX_ECHO) {
      return SRD_ERR_INVALID_ARGUMENT;
    }
    n += srd_pkt_piggy_len(d->ack);
  }
  if (cap < n) {
    return SRD_ERR_NOBUF;
  }
  put_common(buf, c, SRD_PKT_DATA, c->flags);
  put32(buf + 20, d->seq);
  put32(buf + 24, d->msg_id);
  put32(buf + 28, d->msg_floor);
  put32(buf + 32, d->msg_len);
  put32(buf + 36, d->offset);
  put16(buf + 40, d->payload_len);
  buf[42] = d->tx_count;
  buf[43] = 0;
  put64(buf + 44, d->tx_ts);
  put32(buf + 52, (c->flags & SRD_DATA_FLAG_PCRC) ? d->pcrc : 0);
  if (c->flags & SRD_DATA_FLAG_HS_ECHO) {
    put64(buf + 56, d->hs_echo);
    put32(buf + 64, d->hs_mtu);
    put32(buf + 68, d->hs_max_msg_size);
    put32(buf + 72, d->hs_msg_window);
  }
  if (c->flags & SRD_DATA_FLAG_ACK) {
    put_ack_body(buf + base, d->ack);
  }
  srd_pkt_seal(buf, n);
  return (srd_ssize)n;
}

srd_ssize srd_pkt_encode_ack(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                             const srd_pkt_ack *a) {
  size_t n = srd_pkt_ack_len(a);

  if (a->n_ranges > SRD_ACK_MAX_RANGES || a->n_echo > SRD_ACK_MAX_ECHO ||
      a->n_nack > SRD_ACK_MAX_NACK) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (cap < n) {
    return SRD_ERR_NOBUF;
  }
  put_common(buf, c, SRD_PKT_ACK, a->empty ? SRD_ACK_FLAG_EMPTY : 0);
  put_ack_body(buf + SRD_PKT_COMMON_LEN, a);
  srd_pkt_seal(buf, n);
  return (srd_ssize)n;
}

/* put_ack_body writes the fields of |a| that follow an ACK's common
   header, at |p|: on an ACK, or riding on a DATA. */
static void put_ack_body(uint8_t *p, const srd_pkt_ack *a) {
  size_t i;

  put32(p, a->largest);
  put16(p + 4, a->first_range);
  p[6] = a->n_ranges;
  p[7] = a->n_echo;
  p[8] = a->n_nack;
  p[9] = p[10] = p[11] = 0;
  p += SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN;
  for (i = 0; i < a->n_ranges; ++i, p += SRD_PKT_ACK_RANGE_LEN) {
    put16(p, a->ranges[i].gap);
    put16(p + 2, a->ranges[i].len);
  }
  for (i = 0; i < a->n_echo; ++i, p += SRD_PKT_ACK_ECHO_LEN) {
    put64(p, a->echo[i].tx_ts);
    put32(p + 8, a->echo[i].seq);
    put32(p + 12, a->echo[i].hold_ns);
    put16(p + 16, a->echo[i].path);
    put16(p + 18, 0);
  }
  for (i = 0; i < a->n_nack; ++i, p += SRD_PKT_ACK_NACK_LEN) {
    put32(p, a->nack[i].seq);
    put32(p + 4, a->nack[i].msg_id);
    p[8] = a->nack[i].reason;
    p[9] = (uint8_t)(a->nack[i].frag >> 16);
    p[10] = (uint8_t)(a->nack[i].frag >> 8);
    p[11] = (uint8_t)a->nack[i].frag;
  }
}

srd_ssize srd_pkt_encode_hs(uint8_t *buf, size_t cap, uint8_t type,
                            const srd_pkt_common *c, const srd_pkt_hs *hs) {
  size_t n;

  switch (type) {
  case SRD_PKT_HS_REQ:
    n = SRD_PKT_HS_REQ_LEN;
    break;
  case SRD_PKT_HS_RESP:
    n = SRD_PKT_HS_RESP_LEN;
    break;
  case SRD_PKT_HS_CONFIRM:
    n = SRD_PKT_HS_CONFIRM_LEN;
    break;
  default:
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (cap < n) {
    return SRD_ERR_NOBUF;
  }
  put_common(buf, c, type, 0);
  switch (type) {
  case SRD_PKT_HS_REQ:
    put64(buf + 20, hs->nonce);
    put32(buf + 28, hs->mtu);
    put32(buf + 32, hs->max_msg_size);
    put32(buf + 36, hs->msg_window);
    memset(buf + 40, 0, SRD_PKT_HS_REQ_LEN - 40); /* reserved, padding */
    break;
  case SRD_PKT_HS_RESP:
    put64(buf + 20, hs->echo);
    put64(buf + 28, hs->nonce);
    put32(buf + 36, hs->mtu);
    put32(buf + 40, hs->max_msg_size);
    put32(buf + 44, hs->msg_window);
    put32(buf + 48, 0);
    break;
  default:
    put64(buf + 20, hs->echo);
    put32(buf + 28, hs->mtu);
    put32(buf + 32, hs->max_msg_size);
    put32(buf + 36, hs->msg_window);
    break;
  }
  srd_pkt_seal(buf, n);
  return (srd_ssize)n;
}

srd_ssize srd_pkt_encode_sync(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                              const srd_pkt_sync *s) {
  if (cap < SRD_PKT_SYNC_LEN) {
    return SRD_ERR_NOBUF;
  }
  put_common(buf, c, SRD_PKT_SYNC, 0);
  put32(buf + 20, s->msg_floor);
  put32(buf + 24, 0);
  srd_pkt_seal(buf, SRD_PKT_SYNC_LEN);
  return SRD_PKT_SYNC_LEN;
}

static int refuse(srd_drop_reason *why, srd_drop_reason r) {
  *why = r;
  return SRD_ERR_PROTO;
}

/* exact checks that a fixed-size packet is exactly |n| bytes. */
static int exact(size_t len, size_t total, size_t n, srd_drop_reason *why) {
  if (len < n || total < n) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  if (total != n) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  return 0;
}

/* params_ok checks a handshake's parameters (mtu, max_msg_size and
   msg_window), wherever they ride. */
static int params_ok(uint32_t mtu, uint32_t max_msg_size, uint32_t msg_window) {
  return mtu >= SRD_PKT_MIN_MTU && mtu <= SRD_PKT_MAX_MTU &&
         max_msg_size >= 1 && max_msg_size <= SRD_PKT_MAX_MSG_SIZE &&
         srd_is_pow2(msg_window) && msg_window <= SRD_PKT_MAX_MSG_WINDOW;
}

static int hs_params_ok(const srd_pkt_hs *hs) {
  return hs->nonce != 0 && params_ok(hs->mtu, hs->max_msg_size, hs->msg_window);
}

/* zeros says whether the |n| bytes at |p| are all 0. */
static int zeros(const uint8_t *p, size_t n) {
  uint8_t acc = 0;

  while (n--) {
    acc |= *p++;
  }
  return acc == 0;
}

static int decode_data(srd_pkt *pkt, const uint8_t *buf, size_t len,
                       size_t total, srd_drop_reason *why) {
  srd_pkt_data *d = &pkt->u.data;
  size_t hdrlen, n;

  if (pkt->c.flags &
      ~(SRD_DATA_FLAG_HS_ECHO | SRD_DATA_FLAG_ACK | SRD_DATA_FLAG_PCRC)) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  hdrlen = srd_pkt_data_hdrlen(pkt->c.flags);
  if (len < hdrlen) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  d->ack = NULL;
  if (pkt->c.flags & SRD_DATA_FLAG_ACK) {
    /* The acknowledgement riding on it: never empty, no NACKs. */
    pkt->piggy.empty = 0;
    if (get_ack_body(&pkt->piggy, buf + hdrlen, len - hdrlen,
                     SRD_PIGGY_MAX_RANGES, SRD_PIGGY_MAX_ECHO, 0, &n,
                     why) != 0) {
      return SRD_ERR_PROTO;
    }
    d->ack = &pkt->piggy;
    hdrlen += n;
  }
  d->seq = get32(buf + 20);
  d->msg_id = get32(buf + 24);
  d->msg_floor = get32(buf + 28);
  d->msg_len = get32(buf + 32);
  d->offset = get32(buf + 36);
  d->payload_len = get16(buf + 40);
  d->tx_count = buf[42];
  d->tx_ts = get64(buf + 44);
  d->pcrc = get32(buf + 52);
  d->hs_echo = d->hs_mtu = d->hs_max_msg_size = d->hs_msg_window = 0;
  if (pkt->c.flags & SRD_DATA_FLAG_HS_ECHO) {
    d->hs_echo = get64(buf + 56);
    d->hs_mtu = get32(buf + 64);
    d->hs_max_msg_size = get32(buf + 68);
    d->hs_msg_window = get32(buf + 72);
  }
  if (buf[43] != 0 || d->tx_count == 0 || pkt->c.dst_conn == 0 ||
      (!(pkt->c.flags & SRD_DATA_FLAG_PCRC) && d->pcrc != 0)) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  if ((pkt->c.flags & SRD_DATA_FLAG_HS_ECHO) &&
      (d->hs_echo == 0 ||
       !params_ok(d->hs_mtu, d->hs_max_msg_size, d->hs_msg_window))) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  if (total < hdrlen + d->payload_len) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  if (total != hdrlen + d->payload_len) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  /* A fragment lies inside its message; only an empty message has an
     empty fragment; the message id floor is never ahead of the id. */
  if (d->msg_len > SRD_PKT_MAX_MSG_SIZE || d->payload_len > SRD_PKT_MAX_MTU ||
      d->offset > d->msg_len || d->payload_len > d->msg_len - d->offset ||
      (d->payload_len == 0) != (d->msg_len == 0) ||
      srd_seq_gt(d->msg_floor, d->msg_id)) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  pkt->hdrlen = hdrlen;
  return 0;
}

/* get_ack_body decodes the fields of an ACK that follow its common header
   from |p| (|avail| header bytes there) into |a|, with at most
   |max_ranges| ranges, |max_echo| echoes and |max_nack| NACKs, and stores
   their length in |*n|.  Returns 0, or SRD_ERR_PROTO with *why set. */
static int get_ack_body(srd_pkt_ack *a, const uint8_t *p, size_t avail,
                        uint32_t max_ranges, uint32_t max_echo,
                        uint32_t max_nack, size_t *n, srd_drop_reason *why) {
  size_t i;

  if (avail < SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  a->largest = get32(p);
  a->first_range = get16(p + 4);
  a->n_ranges = p[6];
  a->n_echo = p[7];
  a->n_nack = p[8];
  if (p[9] || p[10] || p[11] || a->n_ranges > max_ranges ||
      a->n_echo > max_echo || a->n_nack > max_nack ||
      (a->empty && (a->largest || a->first_range || a->n_ranges))) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  *n = srd_pkt_ack_len(a) - SRD_PKT_COMMON_LEN;
  if (avail < *n) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  p += SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN;
  for (i = 0; i < a->n_ranges; ++i, p += SRD_PKT_ACK_RANGE_LEN) {
    a->ranges[i].gap = get16(p);
    a->ranges[i].len = get16(p + 2);
    if (a->ranges[i].gap == 0 || a->ranges[i].len == 0) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
  }
  for (i = 0; i < a->n_echo; ++i, p += SRD_PKT_ACK_ECHO_LEN) {
    a->echo[i].tx_ts = get64(p);
    a->echo[i].seq = get32(p + 8);
    a->echo[i].hold_ns = get32(p + 12);
    a->echo[i].path = get16(p + 16);
    if (a->echo[i].path >= SRD_MAX_PATHS || get16(p + 18) != 0) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
  }
  for (i = 0; i < a->n_nack; ++i, p += SRD_PKT_ACK_NACK_LEN) {
    a->nack[i].seq = get32(p);
    a->nack[i].msg_id = get32(p + 4);
    a->nack[i].reason = p[8];
    a->nack[i].frag = (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
    /* Only a HAVE names a fragment. */
    if (p[8] == 0 || p[8] > SRD_NACK_MAX ||
        (p[8] != SRD_NACK_HAVE && a->nack[i].frag != 0)) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
  }
  return 0;
}

static int decode_ack(srd_pkt *pkt, const uint8_t *buf, size_t len,
                      size_t total, srd_drop_reason *why) {
  srd_pkt_ack *a = &pkt->u.ack;
  size_t n;

  if ((pkt->c.flags & ~SRD_ACK_FLAG_EMPTY) || pkt->c.dst_conn == 0) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  if (len < SRD_PKT_ACK_HDR_LEN) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  a->empty = (pkt->c.flags & SRD_ACK_FLAG_EMPTY) != 0;
  if (get_ack_body(a, buf + SRD_PKT_COMMON_LEN, len - SRD_PKT_COMMON_LEN,
                   SRD_ACK_MAX_RANGES, SRD_ACK_MAX_ECHO, SRD_ACK_MAX_NACK, &n,
                   why) != 0) {
    return SRD_ERR_PROTO;
  }
  n += SRD_PKT_COMMON_LEN;
  if (exact(len, total, n, why) != 0) {
    return SRD_ERR_PROTO;
  }
  pkt->hdrlen = n;
  return 0;
}

static int decode_hs(srd_pkt *pkt, const uint8_t *buf, size_t len, size_t total,
                     srd_drop_reason *why) {
  srd_pkt_hs *hs = &pkt->u.hs;
  size_t n;

  memset(hs, 0, sizeof(*hs));
  if (pkt->c.flags != 0) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  switch (pkt->c.type) {
  case SRD_PKT_HS_REQ:
    n = SRD_PKT_HS_REQ_LEN;
    if (exact(len, total, n, why) != 0) {
      return SRD_ERR_PROTO;
    }
    hs->nonce = get64(buf + 20);
    hs->mtu = get32(buf + 28);
    hs->max_msg_size = get32(buf + 32);
    hs->msg_window = get32(buf + 36);
    if (!zeros(buf + 40, SRD_PKT_HS_REQ_LEN - 40) || !hs_params_ok(hs)) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
    break;
  case SRD_PKT_HS_RESP:
    n = SRD_PKT_HS_RESP_LEN;
    if (exact(len, total, n, why) != 0) {
      return SRD_ERR_PROTO;
    }
    hs->echo = get64(buf + 20);
    hs->nonce = get64(buf + 28);
    hs->mtu = get32(buf + 36);
    hs->max_msg_size = get32(buf + 40);
    hs->msg_window = get32(buf + 44);
    if (get32(buf + 48) != 0 || hs->echo == 0 || pkt->c.dst_conn == 0 ||
        !hs_params_ok(hs)) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
    break;
  default: /* SRD_PKT_HS_CONFIRM */
    n = SRD_PKT_HS_CONFIRM_LEN;
    if (exact(len, total, n, why) != 0) {
      return SRD_ERR_PROTO;
    }
    hs->echo = get64(buf + 20);
    hs->mtu = get32(buf + 28);
    hs->max_msg_size = get32(buf + 32);
    hs->msg_window = get32(buf + 36);
    if (hs->echo == 0 || pkt->c.dst_conn == 0 ||
        !params_ok(hs->mtu, hs->max_msg_size, hs->msg_window)) {
      return refuse(why, SRD_DROP_BAD_FIELD);
    }
    break;
  }
  pkt->hdrlen = n;
  return 0;
}

static int decode_sync(srd_pkt *pkt, const uint8_t *buf, size_t len,
                       size_t total, srd_drop_reason *why) {
  if (pkt->c.flags != 0 || pkt->c.dst_conn == 0) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  if (exact(len, total, SRD_PKT_SYNC_LEN, why) != 0) {
    return SRD_ERR_PROTO;
  }
  pkt->u.sync.msg_floor = get32(buf + 20);
  if (get32(buf + 24) != 0) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  pkt->hdrlen = SRD_PKT_SYNC_LEN;
  return 0;
}

size_t srd_pkt_span(const uint8_t *buf, size_t len) {
  uint16_t flags = get16(buf + 2);
  const uint8_t *a;
  size_t n;

  switch (buf[1]) {
  case SRD_PKT_DATA:
    n = srd_pkt_data_hdrlen(flags);
    if (!(flags & SRD_DATA_FLAG_ACK)) {
      return n;
    }
    if (len < n + SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN) {
      return 0;
    }
    a = buf + n;
    return n + SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN +
           (size_t)a[6] * SRD_PKT_ACK_RANGE_LEN +
           (size_t)a[7] * SRD_PKT_ACK_ECHO_LEN +
           (size_t)a[8] * SRD_PKT_ACK_NACK_LEN;
  case SRD_PKT_ACK:
    if (len < SRD_PKT_ACK_HDR_LEN) {
      return 0;
    }
    a = buf + SRD_PKT_COMMON_LEN;
    return SRD_PKT_ACK_HDR_LEN + (size_t)a[6] * SRD_PKT_ACK_RANGE_LEN +
           (size_t)a[7] * SRD_PKT_ACK_ECHO_LEN +
           (size_t)a[8] * SRD_PKT_ACK_NACK_LEN;
  case SRD_PKT_HS_REQ:
    return SRD_PKT_HS_REQ_LEN;
  case SRD_PKT_HS_RESP:
    return SRD_PKT_HS_RESP_LEN;
  case SRD_PKT_HS_CONFIRM:
    return SRD_PKT_HS_CONFIRM_LEN;
  default:
    return SRD_PKT_SYNC_LEN;
  }
}

uint32_t srd_pkt_hcrc(const uint8_t *buf, size_t hdrlen) {
  return srd_crc32c_skip4(buf, hdrlen, SRD_PKT_HCRC_OFF);
}

void srd_pkt_seal(uint8_t *buf, size_t hdrlen) {
  put32(buf + SRD_PKT_HCRC_OFF, srd_pkt_hcrc(buf, hdrlen));
}

/* check_header checks what must hold before any other field is believed:
   the version, the type, and the header's CRC over the length the header
   claims.  A corrupted length field makes the CRC run over other bytes,
   which fails it as surely as any other flipped bit. */
static int check_header(const uint8_t *buf, size_t len, size_t *span,
                        srd_drop_reason *why) {
  if (len < SRD_PKT_COMMON_LEN) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  if (buf[0] != SRD_PROTO_VERSION) {
    return refuse(why, SRD_DROP_BAD_VERSION);
  }
  if (buf[1] == 0 || buf[1] > SRD_PKT_TYPE_MAX) {
    return refuse(why, SRD_DROP_BAD_TYPE);
  }
  *span = srd_pkt_span(buf, len);
  if (*span == 0 || *span > len) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  if (get32(buf + SRD_PKT_HCRC_OFF) != srd_pkt_hcrc(buf, *span)) {
    return refuse(why, SRD_DROP_CORRUPT_HDR);
  }
  return 0;
}

int srd_pkt_payload_ok(const srd_pkt *pkt, const uint8_t *pay1, size_t len1,
                       const uint8_t *pay2, size_t len2) {
  uint32_t c;

  if (pkt->c.type != SRD_PKT_DATA || !(pkt->c.flags & SRD_DATA_FLAG_PCRC) ||
      (len2 > 0 && pay2 == NULL)) {
    return 1; /* nothing to check, or bytes a simulator did not give */
  }
  c = srd_crc32c(0, pay1, len1);
  if (len2) {
    c = srd_crc32c(c, pay2, len2);
  }
  return c == pkt->u.data.pcrc;
}

int srd_pkt_decode(srd_pkt *pkt, const uint8_t *buf, size_t len, size_t total,
                   srd_drop_reason *why) {
  size_t span;

  if (total < len) {
    return refuse(why, SRD_DROP_TRUNCATED);
  }
  if (check_header(buf, len, &span, why) != 0) {
    return SRD_ERR_PROTO;
  }
  pkt->c.version = buf[0];
  pkt->c.type = buf[1];
  pkt->c.flags = get16(buf + 2);
  pkt->c.src_conn = get32(buf + 4);
  pkt->c.dst_conn = get32(buf + 8);
  pkt->c.path = get16(buf + 12);
  if (pkt->c.version != SRD_PROTO_VERSION) {
    return refuse(why, SRD_DROP_BAD_VERSION);
  }
  if (pkt->c.type == 0 || pkt->c.type > SRD_PKT_TYPE_MAX) {
    return refuse(why, SRD_DROP_BAD_TYPE);
  }
  if (pkt->c.src_conn == 0 || pkt->c.path >= SRD_MAX_PATHS ||
      get16(buf + 14) != 0) {
    return refuse(why, SRD_DROP_BAD_FIELD);
  }
  switch (pkt->c.type) {
  case SRD_PKT_DATA:
    return decode_data(pkt, buf, len, total, why);
  case SRD_PKT_ACK:
    return decode_ack(pkt, buf, len, total, why);
  case SRD_PKT_HS_REQ:
  case SRD_PKT_HS_RESP:
  case SRD_PKT_HS_CONFIRM:
    return decode_hs(pkt, buf, len, total, why);
  case SRD_PKT_SYNC:
    return decode_sync(pkt, buf, len, total, why);
  default:
    srd_unreachable();
  }
}

int srd_pkt_peek(const uint8_t *pkt, size_t len, srd_pkt_info *info) {
  srd_drop_reason why;
  size_t span;

  if (pkt == NULL || info == NULL) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  if (check_header(pkt, len, &span, &why) != 0) {
    return SRD_ERR_PROTO;
  }
  memset(info, 0, sizeof(*info));
  info->type = pkt[1];
  info->flags = get16(pkt + 2);
  info->src_conn = get32(pkt + 4);
  info->dst_conn = get32(pkt + 8);
  info->path = get16(pkt + 12);
  info->hdrlen = span;
  info->handshake = pkt[1] >= SRD_PKT_HS_REQ && pkt[1] <= SRD_PKT_HS_CONFIRM;
  info->hs_echo =
      pkt[1] == SRD_PKT_HS_CONFIRM ||
      (pkt[1] == SRD_PKT_DATA && (info->flags & SRD_DATA_FLAG_HS_ECHO) != 0);
  if (pkt[1] == SRD_PKT_DATA) {
    info->msg_id = get32(pkt + 24);
    info->msg_len = get32(pkt + 32);
    info->offset = get32(pkt + 36);
    info->payload_len = get16(pkt + 40);
  }
  return 0;
}

const char *srd_pkt_type_name(uint8_t type) {
  switch (type) {
  case SRD_PKT_DATA:
    return "data";
  case SRD_PKT_ACK:
    return "ack";
  case SRD_PKT_HS_REQ:
    return "hs_req";
  case SRD_PKT_HS_RESP:
    return "hs_resp";
  case SRD_PKT_HS_CONFIRM:
    return "hs_confirm";
  case SRD_PKT_SYNC:
    return "sync";
  default:
    return "unknown";
  }
}
