/*
 * fuzz_pkt.c: libFuzzer target for the wire decoder, srd_pkt_decode.
 *
 * The input is one datagram.  A header CRC field (hcrc) of 0 stands for
 * "seal me": the target then writes the header's CRC32C (srd_pkt_seal),
 * and a DATA's payload CRC if it has the flag and a pcrc of 0, before
 * anything else, so that mutated inputs get past the integrity check to
 * the decoder behind it (a real CRC of 0 seals to itself).  It is decoded
 *   - contiguous (len == total == size), and
 *   - split: only the first |split| bytes given (an exact-size copy, so a
 *     read past them is a read past an allocation), with total == size,
 *     as srd_ep_read_pktv() does for a header and payload that lie apart;
 *     |split| comes from the input, and the split right after the decoded
 *     header is tried too.
 * Checks (abort() on failure):
 *   - a refusal names a drop reason;
 *   - a decoded packet re-encodes, with the encoder of its type, to
 *     exactly the header bytes it was decoded from, and its header length
 *     is what the encoder writes;
 *   - a DATA packet's payload is exactly the rest of the datagram;
 *   - the split decode agrees with the contiguous one: it succeeds if and
 *     only if the contiguous decode succeeds and the split holds the whole
 *     header, with the same result;
 *   - a decoded header's CRC is right, and the same header with one bit
 *     flipped (the input picks which; one that leaves the header's length
 *     as it is) is refused as SRD_DROP_CORRUPT_HDR; a DATA the target
 *     sealed passes srd_pkt_payload_ok, and fails it with one payload bit
 *     flipped;
 *   - the stateless handshake (srd_ep_answer_hs, srd_ep_accept_cookie,
 *     on an endpoint of the target's) refuses anything but an intact
 *     HS_REQ, answers that with exactly one HS_RESP no longer than it and
 *     creates no peer; no input echoes a cookie it was not given.
 *
 * Build: make fuzz-build (clang -fsanitize=fuzzer), run: make fuzz; the
 * gcc build replays test/fuzz/corpus/fuzz_pkt under make test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "srd_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

/* encode re-encodes |pkt| into |buf| (SRD_PKT_ACK_MAX_LEN bytes or more)
   and returns the header length written. */
static srd_ssize encode(const srd_pkt *pkt, uint8_t *buf, size_t cap) {
  switch (pkt->c.type) {
  case SRD_PKT_DATA:
    return srd_pkt_encode_data(buf, cap, &pkt->c, &pkt->u.data);
  case SRD_PKT_ACK:
    return srd_pkt_encode_ack(buf, cap, &pkt->c, &pkt->u.ack);
  case SRD_PKT_HS_REQ:
  case SRD_PKT_HS_RESP:
  case SRD_PKT_HS_CONFIRM:
    return srd_pkt_encode_hs(buf, cap, pkt->c.type, &pkt->c, &pkt->u.hs);
  case SRD_PKT_SYNC:
    return srd_pkt_encode_sync(buf, cap, &pkt->c, &pkt->u.sync);
  default:
    abort(); /* the decoder accepted an unknown type */
  }
}

/* check_decoded holds a successful decode of |hdr| (of which at least
   |len| bytes are readable), for a datagram of |total| bytes, to the
   encoder. */
static void check_decoded(const srd_pkt *pkt, const uint8_t *hdr, size_t len,
                          size_t total) {
  uint8_t buf[SRD_PKT_ACK_MAX_LEN + 64];
  srd_ssize n;

  CHECK(pkt->c.version == SRD_PROTO_VERSION);
  CHECK(pkt->c.type >= 1 && pkt->c.type <= SRD_PKT_TYPE_MAX);
  CHECK(pkt->c.src_conn != 0);
  CHECK(pkt->c.path < SRD_MAX_PATHS);
  CHECK(pkt->hdrlen >= SRD_PKT_COMMON_LEN && pkt->hdrlen <= len);
  CHECK(strcmp(srd_pkt_type_name(pkt->c.type), "unknown") != 0);

  /* The encoder refuses a buffer one byte short... */
  CHECK(encode(pkt, buf, pkt->hdrlen - 1) == SRD_ERR_NOBUF);
  /* ...and writes exactly the header it was decoded from. */
  memset(buf, 0xA5, sizeof(buf));
  n = encode(pkt, buf, sizeof(buf));
  CHECK(n > 0 && (size_t)n == pkt->hdrlen);
  CHECK(memcmp(buf, hdr, pkt->hdrlen) == 0);
  CHECK(buf[n] == 0xA5); /* and nothing past it */

  switch (pkt->c.type) {
  case SRD_PKT_DATA:
    CHECK((pkt->u.data.ack != NULL) ==
          ((pkt->c.flags & SRD_DATA_FLAG_ACK) != 0));
    CHECK(pkt->hdrlen ==
          srd_pkt_data_hdrlen(pkt->c.flags) +
              (pkt->u.data.ack ? srd_pkt_piggy_len(pkt->u.data.ack) : 0));
    CHECK(pkt->u.data.ack == NULL ||
          (pkt->u.data.ack->n_nack == 0 &&
           pkt->u.data.ack->n_ranges <= SRD_PIGGY_MAX_RANGES &&
           pkt->u.data.ack->n_echo <= SRD_PIGGY_MAX_ECHO));
    CHECK(total == pkt->hdrlen + pkt->u.data.payload_len);
    CHECK(pkt->u.data.offset <= pkt->u.data.msg_len);
    CHECK(pkt->u.data.payload_len <= pkt->u.data.msg_len - pkt->u.data.offset);
    CHECK(pkt->c.dst_conn != 0 && pkt->u.data.tx_count != 0);
    break;
  case SRD_PKT_ACK:
    CHECK(pkt->hdrlen == srd_pkt_ack_len(&pkt->u.ack));
    CHECK(total == pkt->hdrlen);
    CHECK(pkt->c.dst_conn != 0);
    break;
  default:
    CHECK(total == pkt->hdrlen);
    break;
  }
}

/* decode_split decodes the first |split| bytes of |data| as the header of
   a |size|-byte datagram.  Returns the decoder's result. */
static int decode_split(srd_pkt *pkt, const uint8_t *data, size_t split,
                        size_t size) {
  srd_drop_reason why = SRD_DROP_REASONS;
  uint8_t *hdr = malloc(split ? split : 1);
  int rv;

  CHECK(hdr != NULL);
  if (split) {
    memcpy(hdr, data, split);
  }
  rv = srd_pkt_decode(pkt, hdr, split, size, &why);
  if (rv == 0) {
    check_decoded(pkt, hdr, split, size);
  } else {
    CHECK(rv == SRD_ERR_PROTO);
    CHECK(why < SRD_DROP_REASONS);
    CHECK(strcmp(srd_drop_reason_name(why), "unknown") != 0);
  }
  free(hdr);
  return rv;
}

/* same_header checks that two decodes of one datagram agree, by their
   encodings. */
static void same_header(const srd_pkt *a, const srd_pkt *b) {
  uint8_t ba[SRD_PKT_ACK_MAX_LEN], bb[SRD_PKT_ACK_MAX_LEN];
  srd_ssize na = encode(a, ba, sizeof(ba));
  srd_ssize nb = encode(b, bb, sizeof(bb));

  CHECK(a->hdrlen == b->hdrlen && na == nb && na > 0);
  CHECK(memcmp(ba, bb, (size_t)na) == 0);
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* The payload CRC's place in a DATA header: its last field. */
#define PCRC_OFF (SRD_PKT_DATA_HDR_LEN - 4)

/* seal_if_asked seals |b| (|n| bytes) if its hcrc is 0; returns nonzero
   if it sealed a DATA's payload CRC. */
static int seal_if_asked(uint8_t *b, size_t n) {
  size_t span;
  int payload = 0;

  if (n < SRD_PKT_COMMON_LEN || get32(b + SRD_PKT_HCRC_OFF) != 0 || b[1] == 0 ||
      b[1] > SRD_PKT_TYPE_MAX) {
    return 0;
  }
  span = srd_pkt_span(b, n);
  if (span == 0 || span > n) {
    return 0;
  }
  if (b[1] == SRD_PKT_DATA && span >= SRD_PKT_DATA_HDR_LEN &&
      (b[3] & SRD_DATA_FLAG_PCRC) && get32(b + PCRC_OFF) == 0) {
    put32(b + PCRC_OFF, srd_crc32c(0, b + span, n - span));
    payload = 1;
  }
  srd_pkt_seal(b, span);
  return payload;
}

/* check_integrity holds decoded |pkt| of datagram |b| (|n| bytes) to its
   CRCs; |pick| chooses the bits flipped, |sealed| says whether the
   payload CRC was written here. */
static void check_integrity(const srd_pkt *pkt, const uint8_t *b, size_t n,
                            uint32_t pick, int sealed) {
  uint8_t *copy = malloc(n);
  srd_pkt other;
  srd_drop_reason why = SRD_DROP_REASONS;
  size_t bit = pick % (pkt->hdrlen * 8);

  CHECK(copy != NULL);
  CHECK(get32(b + SRD_PKT_HCRC_OFF) == srd_pkt_hcrc(b, pkt->hdrlen));
  memcpy(copy, b, n);
  copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  /* A flip that keeps the header's length is one CRC32C always sees. */
  if (copy[1] >= 1 && copy[1] <= SRD_PKT_TYPE_MAX &&
      srd_pkt_span(copy, n) == pkt->hdrlen && copy[0] == SRD_PROTO_VERSION) {
    CHECK(srd_pkt_decode(&other, copy, n, n, &why) == SRD_ERR_PROTO);
    CHECK(why == SRD_DROP_CORRUPT_HDR);
  }
  if (sealed && n > pkt->hdrlen) {
    const uint8_t *pay = b + pkt->hdrlen;
    size_t plen = n - pkt->hdrlen, split = pick % plen;
    CHECK(srd_pkt_payload_ok(pkt, pay, split, pay + split, plen - split));
    memcpy(copy, b, n);
    copy[pkt->hdrlen + split] ^= (uint8_t)(1u << (pick % 8));
    CHECK(!srd_pkt_payload_ok(pkt, copy + pkt->hdrlen, plen, NULL, 0));
  }
  free(copy);
}

/* check_stateless feeds the datagram to a stateless responder. */
static void check_stateless(const uint8_t *data, size_t size, int rv,
                            const srd_pkt *whole) {
  static srd_ep *ep;
  srd_settings s;
  srd_peer_settings ps;
  srd_peer_stats st;
  srd_peer_id id;
  uint8_t out[SRD_HS_ANSWER_LEN];
  srd_ssize n;

  if (ep == NULL) {
    srd_settings_default(&s);
    s.seed = 7;
    s.max_peers = 2;
    CHECK(srd_ep_new(&ep, &s, srd_mem_default()) == 0);
  }
  srd_peer_settings_default(&ps);
  n = srd_ep_answer_hs(ep, &ps, "a", 1, data, size, out, sizeof(out), NULL,
                       1000 * SRD_S);
  if (rv == 0 && whole->c.type == SRD_PKT_HS_REQ &&
      whole->c.src_conn != srd_ep_conn_id(ep)) {
    CHECK(n == SRD_HS_ANSWER_LEN && (size_t)n <= size);
    CHECK(out[1] == SRD_PKT_HS_RESP);
  } else {
    CHECK(n < 0);
  }
  CHECK(srd_ep_accept_cookie(ep, &ps, "a", 1, data, size, &id, 1000 * SRD_S) <
        0);
  CHECK(srd_ep_get_peer_stats(ep, 0, &st) == SRD_ERR_BAD_PEER);
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size) {
  srd_pkt whole, part;
  srd_drop_reason why = SRD_DROP_REASONS;
  int rv, rv2, sealed;
  size_t split;
  uint8_t *data = calloc(size ? size : 1, 1);

  /* An exact-size copy, sealed if it asks to be. */
  CHECK(data != NULL);
  if (size) {
    memcpy(data, input, size);
  }
  sealed = seal_if_asked(data, size);

  /* Contiguous. */
  rv = srd_pkt_decode(&whole, data, size, size, &why);
  if (rv == 0) {
    check_decoded(&whole, data, size, size);
    check_integrity(&whole, data, size,
                    size > 1 ? (uint32_t)data[size - 2] * 977u + (uint32_t)size
                             : 0,
                    sealed);
  } else {
    CHECK(rv == SRD_ERR_PROTO && why < SRD_DROP_REASONS);
  }
  check_stateless(data, size, rv, &whole);
  if (size < 2) {
    free(data);
    return 0;
  }

  /* Split at a point the input picks: its last byte and its length. */
  split = ((size_t)data[size - 1] * 257u + size / 3) % size;
  rv2 = decode_split(&part, data, split, size);
  if (rv2 == 0) {
    CHECK(rv == 0);
    same_header(&whole, &part);
  } else if (rv == 0) {
    CHECK(split < whole.hdrlen);
  }

  /* Split right after the header, as a driver with the payload apart. */
  if (rv == 0 && whole.hdrlen < size) {
    rv2 = decode_split(&part, data, whole.hdrlen, size);
    CHECK(rv2 == 0);
    same_header(&whole, &part);
  }
  free(data);
  return 0;
}
