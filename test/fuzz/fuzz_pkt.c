/*
 * fuzz_pkt.c: libFuzzer target for the wire decoder, srd_pkt_decode.
 *
 * The input is one datagram.  It is decoded
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
 *     header, with the same result.
 *
 * Build: make fuzz-build (clang -fsanitize=fuzzer), run: make fuzz; the
 * gcc build replays test/fuzz/corpus/fuzz_pkt under make test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "srd_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  srd_pkt whole, part;
  srd_drop_reason why = SRD_DROP_REASONS;
  int rv, rv2;
  size_t split;

  /* Contiguous. */
  rv = srd_pkt_decode(&whole, data, size, size, &why);
  if (rv == 0) {
    check_decoded(&whole, data, size, size);
  } else {
    CHECK(rv == SRD_ERR_PROTO && why < SRD_DROP_REASONS);
  }
  if (size < 2) {
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
  return 0;
}
