/*
 * test_pkt.c: the wire codec (version 2).  Every packet type survives an
 * encode and decode round trip, and every malformed packet is refused with
 * the right srd_drop_reason: truncation, version, type, header CRC,
 * reserved fields, flags, connection ids, paths, lengths, fragment bounds,
 * message id floors, ACK counts and ranges, NACK reasons and fragments and
 * handshake parameters.  Also the payload CRC (SRD_DATA_FLAG_PCRC,
 * srd_pkt_payload_ok) and srd_pkt_peek.
 *
 * The tests that forge a field go through decode_fails(), which reseals
 * the header (srd_pkt_seal) so that the check behind the CRC is the one
 * tested; test_pkt_bit_flips does not.
 */
#include <string.h>

#include "testutil.h"

#include "srd_crc32c.h"
#include "srd_macro.h"
#include "srd_pkt.h"

/* A buffer big enough for any header and a full payload. */
#define BUFLEN (SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN + 65536 + 64)

static uint8_t buf[BUFLEN];

static void wr16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void wr32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void wr64(uint8_t *p, uint64_t v) {
  wr32(p, (uint32_t)(v >> 32));
  wr32(p + 4, (uint32_t)v);
}

static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* reseal gives a header that a test changed a valid CRC again, when the
   header it claims lies within |len|: the field checks behind the CRC are
   what such a test is about (a forger who computes CRCs). */
static void reseal(uint8_t *b, size_t len) {
  size_t span;

  if (len < SRD_PKT_COMMON_LEN || b[1] == 0 || b[1] > SRD_PKT_TYPE_MAX) {
    return;
  }
  span = srd_pkt_span(b, len);
  if (span != 0 && span <= len) {
    srd_pkt_seal(b, span);
  }
}

/* decode_fails decodes |b| (resealed) and returns the drop reason, or -1
   if the packet was accepted. */
static int decode_fails(const uint8_t *b, size_t len, size_t total) {
  static uint8_t copy[BUFLEN];
  srd_pkt pkt;
  srd_drop_reason why = SRD_DROP_REASONS;
  int rv;

  assert_true(len <= sizeof(copy));
  memcpy(copy, b, len);
  reseal(copy, len);
  rv = srd_pkt_decode(&pkt, copy, len, total, &why);

  if (rv == 0) {
    return -1;
  }
  assert_int_equal(rv, SRD_ERR_PROTO);
  assert_int_not_equal(why, SRD_DROP_REASONS);
  return (int)why;
}

#define EXPECT_DROP(B, LEN, TOTAL, REASON)                                     \
  assert_int_equal(decode_fails((B), (LEN), (TOTAL)), (int)(REASON))
#define EXPECT_OK(B, LEN, TOTAL)                                               \
  assert_int_equal(decode_fails((B), (LEN), (TOTAL)), -1)

static srd_pkt_common common(void) {
  srd_pkt_common c;

  memset(&c, 0, sizeof(c));
  c.src_conn = 0x11223344u;
  c.dst_conn = 0x55667788u;
  c.path = 63;
  return c;
}

static srd_pkt_data data_hdr(void) {
  srd_pkt_data d;

  memset(&d, 0, sizeof(d));
  d.seq = 0xFFFFFF10u;
  d.msg_id = 0x80000001u;
  d.msg_floor = 0x7FFFFFF0u;
  d.msg_len = 10000;
  d.offset = 4096;
  d.payload_len = 4096;
  d.tx_count = 3;
  d.tx_ts = 0x0123456789ABCDEFull;
  d.hs_echo = 0;
  /* The handshake parameters that go with an echo (only then). */
  d.hs_mtu = 4096;
  d.hs_max_msg_size = 1u << 20;
  d.hs_msg_window = 256;
  return d;
}

/* make_data writes a DATA packet with header |d| and a patterned payload
   into buf; returns the total length. */
static size_t make_data(uint16_t flags, const srd_pkt_data *d) {
  srd_pkt_common c = common();
  srd_ssize n;
  size_t i;

  c.flags = flags;
  n = srd_pkt_encode_data(buf, sizeof(buf), &c, d);
  assert_int_equal(n, (srd_ssize)srd_pkt_data_hdrlen(flags));
  for (i = 0; i < d->payload_len; ++i) {
    buf[(size_t)n + i] = (uint8_t)(i * 7 + 1);
  }
  return (size_t)n + d->payload_len;
}

/* A DATA packet carrying an acknowledgement: the ACK's fields after its
   common header sit between the data header and the payload. */
static srd_pkt_ack piggy_ack(void) {
  srd_pkt_ack a;
  uint32_t i;

  memset(&a, 0, sizeof(a));
  a.largest = 0x00000005u; /* wraps below 0 with its ranges */
  a.first_range = 3;
  a.n_ranges = SRD_PIGGY_MAX_RANGES;
  for (i = 0; i < a.n_ranges; ++i) {
    a.ranges[i].gap = (uint16_t)(i + 1);
    a.ranges[i].len = (uint16_t)(2 * i + 1);
  }
  a.n_echo = SRD_PIGGY_MAX_ECHO;
  for (i = 0; i < a.n_echo; ++i) {
    a.echo[i].tx_ts = 0x1000000000ull + i;
    a.echo[i].seq = 0xFFFFFFF0u + i;
    a.echo[i].hold_ns = 1000 * i;
    a.echo[i].path = (uint16_t)(60 + i);
  }
  return a;
}

static size_t make_data_ack(uint16_t flags, const srd_pkt_data *d,
                            const srd_pkt_ack *a) {
  srd_pkt_common c = common();
  srd_pkt_data dd = *d;
  srd_ssize n;
  size_t i;

  c.flags = (uint16_t)(flags | SRD_DATA_FLAG_ACK);
  dd.ack = a;
  n = srd_pkt_encode_data(buf, sizeof(buf), &c, &dd);
  assert_int_equal(
      n, (srd_ssize)(srd_pkt_data_hdrlen(c.flags) + srd_pkt_piggy_len(a)));
  for (i = 0; i < d->payload_len; ++i) {
    buf[(size_t)n + i] = (uint8_t)(i * 7 + 1);
  }
  return (size_t)n + d->payload_len;
}

static void fill_ack_max(srd_pkt_ack *a) {
  uint32_t i;

  memset(a, 0, sizeof(*a));
  a->largest = 0x00000005u;
  a->first_range = 0xFFFF;
  a->n_ranges = SRD_ACK_MAX_RANGES;
  a->n_echo = SRD_ACK_MAX_ECHO;
  a->n_nack = SRD_ACK_MAX_NACK;
  for (i = 0; i < SRD_ACK_MAX_RANGES; ++i) {
    a->ranges[i].gap = (uint16_t)(i + 1);
    a->ranges[i].len = (uint16_t)(0xFFFF - i);
  }
  for (i = 0; i < SRD_ACK_MAX_ECHO; ++i) {
    a->echo[i].tx_ts = 0xFEDCBA9876543210ull + i;
    a->echo[i].seq = 0xFFFFFFF8u + i; /* across the wrap */
    a->echo[i].hold_ns = 0xFFFFFFF0u + i;
    a->echo[i].path = (uint16_t)(63 - i);
  }
  for (i = 0; i < SRD_ACK_MAX_NACK; ++i) {
    a->nack[i].seq = 0xFFFFFFFFu - i;
    a->nack[i].msg_id = 0x10000u + i;
    a->nack[i].reason = (uint8_t)(i % 2 ? SRD_NACK_RNR : SRD_NACK_TRUNCATED);
  }
}

static size_t make_ack(const srd_pkt_ack *a) {
  srd_pkt_common c = common();
  srd_ssize n = srd_pkt_encode_ack(buf, sizeof(buf), &c, a);

  assert_int_equal(n, (srd_ssize)srd_pkt_ack_len(a));
  return (size_t)n;
}

static srd_pkt_hs hs_params(void) {
  srd_pkt_hs hs;

  memset(&hs, 0, sizeof(hs));
  hs.nonce = 0xA5A5A5A5DEADBEEFull;
  hs.echo = 0x0102030405060708ull;
  hs.mtu = 8192;
  hs.max_msg_size = 1u << 20;
  hs.msg_window = 1024;
  return hs;
}

static size_t make_hs(uint8_t type, const srd_pkt_hs *hs) {
  srd_pkt_common c = common();
  srd_ssize n = srd_pkt_encode_hs(buf, sizeof(buf), type, &c, hs);

  assert_true(n > 0);
  return (size_t)n;
}

static size_t make_sync(uint32_t floor) {
  srd_pkt_common c = common();
  srd_pkt_sync s = {.msg_floor = floor};
  srd_ssize n = srd_pkt_encode_sync(buf, sizeof(buf), &c, &s);

  assert_int_equal(n, SRD_PKT_SYNC_LEN);
  return (size_t)n;
}

/* A valid packet of each shape, for the tests that break them. */
enum {
  K_DATA,
  K_DATA_ECHO,
  K_DATA_EMPTY,
  K_DATA_ACK,
  K_ACK_MIN,
  K_ACK_MAX,
  K_HS_REQ,
  K_HS_RESP,
  K_HS_CONFIRM,
  K_SYNC,
  K_COUNT
};

static size_t make_kind(int k) {
  srd_pkt_data d = data_hdr();
  srd_pkt_ack a;
  srd_pkt_hs hs = hs_params();

  switch (k) {
  case K_DATA:
    return make_data(0, &d);
  case K_DATA_ECHO:
    d.hs_echo = 0x1122334455667788ull;
    d.payload_len = 100;
    return make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  case K_DATA_EMPTY:
    d.msg_len = d.offset = d.payload_len = 0;
    return make_data(0, &d);
  case K_DATA_ACK:
    a = piggy_ack();
    d.payload_len = 200;
    return make_data_ack(0, &d, &a);
  case K_ACK_MIN:
    memset(&a, 0, sizeof(a));
    a.largest = 77;
    return make_ack(&a);
  case K_ACK_MAX:
    fill_ack_max(&a);
    return make_ack(&a);
  case K_HS_REQ:
    return make_hs(SRD_PKT_HS_REQ, &hs);
  case K_HS_RESP:
    return make_hs(SRD_PKT_HS_RESP, &hs);
  case K_HS_CONFIRM:
    return make_hs(SRD_PKT_HS_CONFIRM, &hs);
  default:
    return make_sync(42);
  }
}

static void test_pkt_data_roundtrip(void **state) {
  srd_pkt_data d = data_hdr();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t total;
  (void)state;

  total = make_data(0, &d);
  assert_int_equal(total, SRD_PKT_DATA_HDR_LEN + 4096);
  assert_int_equal(buf[0], SRD_PROTO_VERSION);
  assert_int_equal(buf[1], SRD_PKT_DATA);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.hdrlen, SRD_PKT_DATA_HDR_LEN);
  assert_int_equal(pkt.c.version, SRD_PROTO_VERSION);
  assert_int_equal(pkt.c.type, SRD_PKT_DATA);
  assert_int_equal(pkt.c.flags, 0);
  assert_int_equal(pkt.c.src_conn, 0x11223344u);
  assert_int_equal(pkt.c.dst_conn, 0x55667788u);
  assert_int_equal(pkt.c.path, 63);
  assert_int_equal(pkt.u.data.seq, d.seq);
  assert_int_equal(pkt.u.data.msg_id, d.msg_id);
  assert_int_equal(pkt.u.data.msg_floor, d.msg_floor);
  assert_int_equal(pkt.u.data.msg_len, d.msg_len);
  assert_int_equal(pkt.u.data.offset, d.offset);
  assert_int_equal(pkt.u.data.payload_len, d.payload_len);
  assert_int_equal(pkt.u.data.tx_count, d.tx_count);
  assert_true(pkt.u.data.tx_ts == d.tx_ts);
  assert_true(pkt.u.data.hs_echo == 0);

  /* The last fragment, ending exactly at the message's end. */
  d.offset = 8192;
  d.payload_len = 10000 - 8192;
  d.tx_count = 255;
  total = make_data(0, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.u.data.offset, 8192);
  assert_int_equal(pkt.u.data.payload_len, 10000 - 8192);
  assert_int_equal(pkt.u.data.tx_count, 255);

  /* An empty message: no payload, offset 0. */
  d.msg_len = d.offset = d.payload_len = 0;
  d.msg_floor = d.msg_id;
  total = make_data(0, &d);
  assert_int_equal(total, SRD_PKT_DATA_HDR_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.u.data.msg_len, 0);
  assert_int_equal(pkt.u.data.payload_len, 0);

  /* The largest message and fragment the decoder allows. */
  d.msg_len = SRD_PKT_MAX_MSG_SIZE;
  d.offset = SRD_PKT_MAX_MSG_SIZE - SRD_PKT_MAX_MTU;
  d.payload_len = SRD_PKT_MAX_MTU;
  total = make_data(0, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.u.data.payload_len, SRD_PKT_MAX_MTU);
}

static void test_pkt_data_echo_roundtrip(void **state) {
  srd_pkt_data d = data_hdr();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t total;
  (void)state;

  d.hs_echo = 0xCAFEF00D12345678ull;
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  assert_int_equal(total, SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN + 4096);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.hdrlen, SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN);
  assert_int_equal(pkt.c.flags, SRD_DATA_FLAG_HS_ECHO);
  assert_true(pkt.u.data.hs_echo == 0xCAFEF00D12345678ull);
  assert_int_equal(pkt.u.data.payload_len, 4096);
  /* The payload starts after the echo. */
  assert_int_equal(buf[pkt.hdrlen], 1);
  assert_int_equal(buf[pkt.hdrlen + 1], 8);

  /* With the flag, an empty message. */
  d.msg_len = d.offset = d.payload_len = 0;
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  assert_int_equal(total, SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_true(pkt.u.data.hs_echo == 0xCAFEF00D12345678ull);
  assert_int_equal(pkt.u.data.payload_len, 0);

  /* The parameters that ride with the echo come back, and are checked as
     in a handshake request. */
  assert_int_equal(pkt.u.data.hs_mtu, 4096);
  assert_int_equal(pkt.u.data.hs_max_msg_size, 1u << 20);
  assert_int_equal(pkt.u.data.hs_msg_window, 256);
  d.hs_msg_window = 100;
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.hs_msg_window = 256;
  d.hs_mtu = 255;
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* The encoder does not write the echo without the flag. */
  d = data_hdr();
  d.hs_echo = 0x99;
  total = make_data(0, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_true(pkt.u.data.hs_echo == 0);
}

static void check_ack_equal(const srd_pkt_ack *x, const srd_pkt_ack *y) {
  uint32_t i;

  assert_int_equal(x->empty, y->empty);
  assert_int_equal(x->largest, y->largest);
  assert_int_equal(x->first_range, y->first_range);
  assert_int_equal(x->n_ranges, y->n_ranges);
  assert_int_equal(x->n_echo, y->n_echo);
  assert_int_equal(x->n_nack, y->n_nack);
  for (i = 0; i < x->n_ranges; ++i) {
    assert_int_equal(x->ranges[i].gap, y->ranges[i].gap);
    assert_int_equal(x->ranges[i].len, y->ranges[i].len);
  }
  for (i = 0; i < x->n_echo; ++i) {
    assert_true(x->echo[i].tx_ts == y->echo[i].tx_ts);
    assert_int_equal(x->echo[i].seq, y->echo[i].seq);
    assert_int_equal(x->echo[i].hold_ns, y->echo[i].hold_ns);
    assert_int_equal(x->echo[i].path, y->echo[i].path);
  }
  for (i = 0; i < x->n_nack; ++i) {
    assert_int_equal(x->nack[i].seq, y->nack[i].seq);
    assert_int_equal(x->nack[i].msg_id, y->nack[i].msg_id);
    assert_int_equal(x->nack[i].reason, y->nack[i].reason);
    assert_int_equal(x->nack[i].frag, y->nack[i].frag);
  }
}

static void test_pkt_data_ack_roundtrip(void **state) {
  srd_pkt_data d = data_hdr();
  srd_pkt_ack a = piggy_ack();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t total, hdr, i;
  int echo;
  (void)state;

  for (echo = 0; echo < 2; ++echo) {
    d.hs_echo = echo ? 0xC00C1Eull : 0;
    total = make_data_ack(echo ? SRD_DATA_FLAG_HS_ECHO : 0, &d, &a);
    hdr = srd_pkt_data_hdrlen(echo ? SRD_DATA_FLAG_HS_ECHO : 0) +
          (SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN) +
          SRD_PIGGY_MAX_RANGES * SRD_PKT_ACK_RANGE_LEN +
          SRD_PIGGY_MAX_ECHO * SRD_PKT_ACK_ECHO_LEN;
    assert_int_equal(hdr, (echo ? 76 : 56) + 12 + 4 * 4 + 20 * 4);
    assert_int_equal(total, hdr + d.payload_len);
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
    assert_int_equal(pkt.hdrlen, hdr);
    assert_ptr_equal(pkt.u.data.ack, &pkt.piggy);
    assert_int_equal(pkt.u.data.seq, d.seq);
    assert_int_equal(pkt.u.data.payload_len, d.payload_len);
    assert_true(pkt.u.data.hs_echo == d.hs_echo);
    assert_int_equal(pkt.piggy.empty, 0);
    assert_int_equal(pkt.piggy.largest, a.largest);
    assert_int_equal(pkt.piggy.first_range, a.first_range);
    assert_int_equal(pkt.piggy.n_ranges, a.n_ranges);
    assert_int_equal(pkt.piggy.n_echo, a.n_echo);
    assert_int_equal(pkt.piggy.n_nack, 0);
    for (i = 0; i < a.n_ranges; ++i) {
      assert_int_equal(pkt.piggy.ranges[i].gap, a.ranges[i].gap);
      assert_int_equal(pkt.piggy.ranges[i].len, a.ranges[i].len);
    }
    for (i = 0; i < a.n_echo; ++i) {
      assert_true(pkt.piggy.echo[i].tx_ts == a.echo[i].tx_ts);
      assert_int_equal(pkt.piggy.echo[i].seq, a.echo[i].seq);
      assert_int_equal(pkt.piggy.echo[i].hold_ns, a.echo[i].hold_ns);
      assert_int_equal(pkt.piggy.echo[i].path, a.echo[i].path);
    }
    /* The payload follows the acknowledgement. */
    assert_int_equal(buf[hdr], 1);
    assert_int_equal(buf[hdr + 1], 8);
  }
  /* A minimal acknowledgement: no ranges, no echoes. */
  a.n_ranges = a.n_echo = 0;
  total = make_data_ack(0, &d, &a);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.hdrlen, SRD_PKT_DATA_HDR_LEN + 12);
  /* Without the flag, no acknowledgement. */
  total = make_data(0, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_null(pkt.u.data.ack);
}

static void test_pkt_data_ack_malformed(void **state) {
  srd_pkt_data d = data_hdr();
  srd_pkt_ack a = piggy_ack();
  srd_pkt_common c = common();
  srd_pkt_data dd = d;
  size_t total, base = SRD_PKT_DATA_HDR_LEN;
  (void)state;

  /* The encoder refuses what may not ride: NACKs, too many ranges or
     echoes, an empty acknowledgement, none at all. */
  c.flags = SRD_DATA_FLAG_ACK;
  dd.ack = &a;
  a.n_nack = 1;
  assert_int_equal(srd_pkt_encode_data(buf, sizeof(buf), &c, &dd),
                   SRD_ERR_INVALID_ARGUMENT);
  a = piggy_ack();
  a.n_ranges = SRD_PIGGY_MAX_RANGES + 1;
  assert_int_equal(srd_pkt_encode_data(buf, sizeof(buf), &c, &dd),
                   SRD_ERR_INVALID_ARGUMENT);
  a = piggy_ack();
  a.n_echo = SRD_PIGGY_MAX_ECHO + 1;
  assert_int_equal(srd_pkt_encode_data(buf, sizeof(buf), &c, &dd),
                   SRD_ERR_INVALID_ARGUMENT);
  a = piggy_ack();
  a.empty = 1;
  assert_int_equal(srd_pkt_encode_data(buf, sizeof(buf), &c, &dd),
                   SRD_ERR_INVALID_ARGUMENT);
  dd.ack = NULL;
  assert_int_equal(srd_pkt_encode_data(buf, sizeof(buf), &c, &dd),
                   SRD_ERR_INVALID_ARGUMENT);
  a = piggy_ack();
  dd.ack = &a;
  assert_int_equal(srd_pkt_encode_data(buf, base + 40, &c, &dd), SRD_ERR_NOBUF);
  assert_int_equal(
      srd_pkt_encode_data(buf, base + srd_pkt_piggy_len(&a) - 1, &c, &dd),
      SRD_ERR_NOBUF);

  /* The decoder: counts above the limits, NACKs, reserved bytes, zero
     gaps and lengths, bad echo paths, a cut-short block.  A larger count
     claims a longer header, which the payload gives room for: the count
     check itself is reached. */
  total = make_data_ack(0, &d, &a);
  buf[base + 8] = 1; /* n_nack */
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  buf[base + 6] = SRD_PIGGY_MAX_RANGES + 1;
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  buf[base + 7] = SRD_PIGGY_MAX_ECHO + 1;
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  buf[base + 10] = 1; /* reserved */
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  buf[base + 12] = buf[base + 13] = 0; /* first range's gap */
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  buf[base + 12 + 16 + 16] = 0; /* first echo's path: 64 */
  buf[base + 12 + 16 + 17] = 64;
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  /* Header cut inside the acknowledgement. */
  EXPECT_DROP(buf, base + 20, total, SRD_DROP_TRUNCATED);
  EXPECT_DROP(buf, base + 5, base + 5, SRD_DROP_TRUNCATED);
  /* One byte short overall: the payload no longer fits. */
  EXPECT_DROP(buf, total - 1, total - 1, SRD_DROP_TRUNCATED);
}

static void test_pkt_ack_roundtrip(void **state) {
  srd_pkt_ack a;
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n;
  (void)state;

  /* Every array at its maximum count. */
  fill_ack_max(&a);
  n = make_ack(&a);
  assert_int_equal(n, SRD_PKT_ACK_MAX_LEN);
  assert_int_equal(buf[1], SRD_PKT_ACK);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  assert_int_equal(pkt.c.type, SRD_PKT_ACK);
  assert_int_equal(pkt.hdrlen, SRD_PKT_ACK_MAX_LEN);
  check_ack_equal(&pkt.u.ack, &a);

  /* Nothing but the largest. */
  memset(&a, 0, sizeof(a));
  a.largest = 0xFFFFFFFFu;
  n = make_ack(&a);
  assert_int_equal(n, SRD_PKT_ACK_HDR_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);

  /* Each array alone. */
  fill_ack_max(&a);
  a.n_echo = a.n_nack = 0;
  n = make_ack(&a);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);
  fill_ack_max(&a);
  a.n_ranges = a.n_nack = 0;
  n = make_ack(&a);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);
  fill_ack_max(&a);
  a.n_ranges = a.n_echo = 0;
  n = make_ack(&a);
  assert_int_equal(n, SRD_PKT_ACK_HDR_LEN +
                          SRD_ACK_MAX_NACK * SRD_PKT_ACK_NACK_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);
}

static void test_pkt_ack_empty(void **state) {
  srd_pkt_ack a;
  srd_pkt pkt;
  srd_pkt_common c = common();
  srd_drop_reason why;
  size_t n;
  (void)state;

  /* An ACK that acknowledges nothing, carrying NACKs and echoes. */
  fill_ack_max(&a);
  a.empty = 1;
  a.largest = 0;
  a.first_range = 0;
  a.n_ranges = 0;
  n = make_ack(&a);
  assert_int_equal(((uint16_t)buf[2] << 8 | buf[3]), SRD_ACK_FLAG_EMPTY);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);
  assert_int_equal(pkt.u.ack.empty, 1);
  /* The flag comes from the ACK, not from c->flags. */
  c.flags = 0;
  assert_int_equal(srd_pkt_encode_ack(buf, sizeof(buf), &c, &a), (srd_ssize)n);
  assert_int_equal(buf[3], SRD_ACK_FLAG_EMPTY);
  a.empty = 0;
  c.flags = SRD_ACK_FLAG_EMPTY;
  assert_int_equal(srd_pkt_encode_ack(buf, sizeof(buf), &c, &a), (srd_ssize)n);
  assert_int_equal(buf[3], 0);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  assert_int_equal(pkt.u.ack.empty, 0);

  /* Empty means empty: no largest, no first range, no ranges. */
  memset(&a, 0, sizeof(a));
  a.empty = 1;
  n = make_ack(&a);
  EXPECT_OK(buf, n, n);
  a.largest = 1;
  n = make_ack(&a);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  a.largest = 0;
  a.first_range = 1;
  n = make_ack(&a);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  a.first_range = 0;
  a.n_ranges = 1;
  a.ranges[0].gap = 1;
  a.ranges[0].len = 1;
  n = make_ack(&a);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  /* Only ACKs know the flag: on other types it is an unknown bit. */
  n = make_kind(K_SYNC);
  wr16(buf + 2, SRD_ACK_FLAG_EMPTY);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  /* An empty ACK cut short is truncated like any other. */
  memset(&a, 0, sizeof(a));
  a.empty = 1;
  a.n_nack = 1;
  a.nack[0].seq = 5;
  a.nack[0].reason = SRD_NACK_RNR;
  n = make_ack(&a);
  EXPECT_OK(buf, n, n);
  EXPECT_DROP(buf, n - 1, n - 1, SRD_DROP_TRUNCATED);
}

static void test_pkt_hs_req_roundtrip(void **state) {
  srd_pkt_hs hs = hs_params();
  srd_pkt_common c = common();
  srd_pkt pkt;
  srd_drop_reason why;
  srd_ssize n;
  (void)state;

  /* A first HS_REQ does not know the receiver's incarnation yet. */
  c.dst_conn = 0;
  c.flags = 0xFFFF; /* the encoder writes 0 */
  n = srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_HS_REQ, &c, &hs);
  assert_int_equal(n, SRD_PKT_HS_REQ_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why), 0);
  assert_int_equal(pkt.c.type, SRD_PKT_HS_REQ);
  assert_int_equal(pkt.c.flags, 0);
  assert_int_equal(pkt.c.dst_conn, 0);
  assert_int_equal(pkt.hdrlen, SRD_PKT_HS_REQ_LEN);
  assert_true(pkt.u.hs.nonce == hs.nonce);
  assert_true(pkt.u.hs.echo == 0); /* not carried by a REQ */
  assert_int_equal(pkt.u.hs.mtu, hs.mtu);
  assert_int_equal(pkt.u.hs.max_msg_size, hs.max_msg_size);
  assert_int_equal(pkt.u.hs.msg_window, hs.msg_window);

  /* The bounds themselves are valid. */
  hs.mtu = SRD_PKT_MIN_MTU;
  hs.max_msg_size = 1;
  hs.msg_window = 1;
  n = srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_HS_REQ, &c, &hs);
  assert_int_equal(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why), 0);
  assert_int_equal(pkt.u.hs.mtu, SRD_PKT_MIN_MTU);
  assert_int_equal(pkt.u.hs.msg_window, 1);
  hs.mtu = SRD_PKT_MAX_MTU;
  hs.max_msg_size = SRD_PKT_MAX_MSG_SIZE;
  hs.msg_window = SRD_PKT_MAX_MSG_WINDOW;
  c.dst_conn = 9;
  n = srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_HS_REQ, &c, &hs);
  assert_int_equal(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why), 0);
  assert_int_equal(pkt.c.dst_conn, 9);
  assert_int_equal(pkt.u.hs.mtu, SRD_PKT_MAX_MTU);
  assert_int_equal(pkt.u.hs.max_msg_size, SRD_PKT_MAX_MSG_SIZE);
  assert_int_equal(pkt.u.hs.msg_window, SRD_PKT_MAX_MSG_WINDOW);
}

static void test_pkt_hs_resp_roundtrip(void **state) {
  srd_pkt_hs hs = hs_params();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n;
  (void)state;

  n = make_hs(SRD_PKT_HS_RESP, &hs);
  assert_int_equal(n, SRD_PKT_HS_RESP_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  assert_int_equal(pkt.c.type, SRD_PKT_HS_RESP);
  assert_int_equal(pkt.hdrlen, SRD_PKT_HS_RESP_LEN);
  assert_true(pkt.u.hs.echo == hs.echo);
  assert_true(pkt.u.hs.nonce == hs.nonce);
  assert_int_equal(pkt.u.hs.mtu, hs.mtu);
  assert_int_equal(pkt.u.hs.max_msg_size, hs.max_msg_size);
  assert_int_equal(pkt.u.hs.msg_window, hs.msg_window);
}

static void test_pkt_hs_confirm_roundtrip(void **state) {
  srd_pkt_hs hs = hs_params();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n;
  (void)state;

  /* CONFIRM carries the echo and its sender's request parameters (for
     a stateless responder), checked as in a REQ; no nonce. */
  hs.nonce = 0;
  n = make_hs(SRD_PKT_HS_CONFIRM, &hs);
  assert_int_equal(n, SRD_PKT_HS_CONFIRM_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  assert_int_equal(pkt.c.type, SRD_PKT_HS_CONFIRM);
  assert_int_equal(pkt.hdrlen, SRD_PKT_HS_CONFIRM_LEN);
  assert_true(pkt.u.hs.echo == hs.echo);
  assert_true(pkt.u.hs.nonce == 0);
  assert_int_equal(pkt.u.hs.mtu, hs.mtu);
  assert_int_equal(pkt.u.hs.max_msg_size, hs.max_msg_size);
  assert_int_equal(pkt.u.hs.msg_window, hs.msg_window);
  /* Parameters out of range are refused, as in a REQ. */
  hs.mtu = 1;
  n = make_hs(SRD_PKT_HS_CONFIRM, &hs);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  hs = hs_params();
  hs.msg_window = 3;
  n = make_hs(SRD_PKT_HS_CONFIRM, &hs);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
}

/* An HS_REQ is exactly as long as the HS_RESP it asks for (no
   amplification), its padding zero. */
static void test_pkt_hs_req_padded(void **state) {
  srd_pkt_hs hs = hs_params();
  size_t n, i;
  (void)state;

  assert_true(SRD_PKT_HS_REQ_LEN >= SRD_PKT_HS_RESP_LEN);
  n = make_hs(SRD_PKT_HS_REQ, &hs);
  assert_int_equal(n, SRD_PKT_HS_REQ_LEN);
  for (i = 40; i < n; ++i) {
    assert_int_equal(buf[i], 0);
  }
  EXPECT_OK(buf, n, n);
  for (i = 40; i < n; ++i) {
    n = make_hs(SRD_PKT_HS_REQ, &hs);
    buf[i] = 1;
    srd_pkt_seal(buf, n);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
  /* The version-2 request, 44 bytes, is refused as short. */
  n = make_hs(SRD_PKT_HS_REQ, &hs);
  srd_pkt_seal(buf, 44);
  EXPECT_DROP(buf, 44, 44, SRD_DROP_TRUNCATED);
}

static void test_pkt_sync_roundtrip(void **state) {
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n;
  uint32_t floors[] = {0, 1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
  size_t i;
  (void)state;

  for (i = 0; i < srd_arraylen(floors); ++i) {
    n = make_sync(floors[i]);
    assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
    assert_int_equal(pkt.c.type, SRD_PKT_SYNC);
    assert_int_equal(pkt.hdrlen, SRD_PKT_SYNC_LEN);
    assert_int_equal(pkt.u.sync.msg_floor, floors[i]);
  }
}

static void test_pkt_encode_nobuf(void **state) {
  srd_pkt_common c = common();
  srd_pkt_data d = data_hdr();
  srd_pkt_ack a;
  srd_pkt_hs hs = hs_params();
  srd_pkt_sync s = {.msg_floor = 1};
  (void)state;

  assert_int_equal(srd_pkt_encode_data(buf, SRD_PKT_DATA_HDR_LEN - 1, &c, &d),
                   SRD_ERR_NOBUF);
  assert_int_equal(srd_pkt_encode_data(buf, SRD_PKT_DATA_HDR_LEN, &c, &d),
                   SRD_PKT_DATA_HDR_LEN);
  c.flags = SRD_DATA_FLAG_HS_ECHO;
  assert_int_equal(
      srd_pkt_encode_data(buf, SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN - 1,
                          &c, &d),
      SRD_ERR_NOBUF);
  c.flags = 0;

  fill_ack_max(&a);
  assert_int_equal(srd_pkt_encode_ack(buf, SRD_PKT_ACK_MAX_LEN - 1, &c, &a),
                   SRD_ERR_NOBUF);
  assert_int_equal(srd_pkt_encode_ack(buf, SRD_PKT_ACK_MAX_LEN, &c, &a),
                   SRD_PKT_ACK_MAX_LEN);
  a.n_ranges = SRD_ACK_MAX_RANGES + 1;
  assert_int_equal(srd_pkt_encode_ack(buf, sizeof(buf), &c, &a),
                   SRD_ERR_INVALID_ARGUMENT);
  fill_ack_max(&a);
  a.n_echo = SRD_ACK_MAX_ECHO + 1;
  assert_int_equal(srd_pkt_encode_ack(buf, sizeof(buf), &c, &a),
                   SRD_ERR_INVALID_ARGUMENT);
  fill_ack_max(&a);
  a.n_nack = SRD_ACK_MAX_NACK + 1;
  assert_int_equal(srd_pkt_encode_ack(buf, sizeof(buf), &c, &a),
                   SRD_ERR_INVALID_ARGUMENT);

  assert_int_equal(
      srd_pkt_encode_hs(buf, SRD_PKT_HS_REQ_LEN - 1, SRD_PKT_HS_REQ, &c, &hs),
      SRD_ERR_NOBUF);
  assert_int_equal(
      srd_pkt_encode_hs(buf, SRD_PKT_HS_RESP_LEN - 1, SRD_PKT_HS_RESP, &c, &hs),
      SRD_ERR_NOBUF);
  assert_int_equal(srd_pkt_encode_hs(buf, SRD_PKT_HS_CONFIRM_LEN - 1,
                                     SRD_PKT_HS_CONFIRM, &c, &hs),
                   SRD_ERR_NOBUF);
  assert_int_equal(srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_DATA, &c, &hs),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_SYNC, &c, &hs),
                   SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_pkt_encode_sync(buf, SRD_PKT_SYNC_LEN - 1, &c, &s),
                   SRD_ERR_NOBUF);
  assert_int_equal(srd_pkt_encode_sync(buf, SRD_PKT_SYNC_LEN, &c, &s),
                   SRD_PKT_SYNC_LEN);
}

static void test_pkt_truncated_prefixes(void **state) {
  int k;
  size_t total, len;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    total = make_kind(k);
    EXPECT_OK(buf, total, total);
    for (len = 0; len < total; ++len) {
      /* A datagram cut short. */
      EXPECT_DROP(buf, len, len, SRD_DROP_TRUNCATED);
    }
    /* A header buffer too short for the common header, whatever the
       stated total. */
    for (len = 0; len < SRD_PKT_COMMON_LEN; ++len) {
      EXPECT_DROP(buf, len, total, SRD_DROP_TRUNCATED);
    }
    /* total below len is a caller's contradiction, refused too. */
    EXPECT_DROP(buf, total, total - 1, SRD_DROP_TRUNCATED);
  }
}

static void test_pkt_trailing_bytes(void **state) {
  int k;
  size_t total;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    total = make_kind(k);
    buf[total] = 0;
    EXPECT_DROP(buf, total + 1, total + 1, SRD_DROP_BAD_FIELD);
    EXPECT_DROP(buf, total, total + 1, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_bad_version(void **state) {
  static const uint8_t versions[] = {0, SRD_PROTO_VERSION + 1, 0x80, 0xFF};
  int k;
  size_t total, i;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    for (i = 0; i < sizeof(versions); ++i) {
      total = make_kind(k);
      buf[0] = versions[i];
      EXPECT_DROP(buf, total, total, SRD_DROP_BAD_VERSION);
    }
  }
}

static void test_pkt_bad_type(void **state) {
  static const uint8_t types[] = {0, SRD_PKT_TYPE_MAX + 1, 0x80, 0xFF};
  int k;
  size_t total, i;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    for (i = 0; i < sizeof(types); ++i) {
      total = make_kind(k);
      buf[1] = types[i];
      EXPECT_DROP(buf, total, total, SRD_DROP_BAD_TYPE);
    }
  }
  assert_string_equal(srd_pkt_type_name(SRD_PKT_DATA), "data");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_ACK), "ack");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_HS_REQ), "hs_req");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_HS_RESP), "hs_resp");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_HS_CONFIRM), "hs_confirm");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_SYNC), "sync");
  assert_string_equal(srd_pkt_type_name(0), "unknown");
  assert_string_equal(srd_pkt_type_name(SRD_PKT_TYPE_MAX + 1), "unknown");
}

static void test_pkt_common_fields(void **state) {
  int k;
  size_t total;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    /* src_conn 0 */
    total = make_kind(k);
    wr32(buf + 4, 0);
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    total = make_kind(k);
    wr32(buf + 4, 1);
    EXPECT_OK(buf, total, total);
    /* path >= SRD_MAX_PATHS */
    total = make_kind(k);
    wr16(buf + 12, SRD_MAX_PATHS);
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    wr16(buf + 12, 0xFFFF);
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    wr16(buf + 12, 0x0100);
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    wr16(buf + 12, 0);
    EXPECT_OK(buf, total, total);
    /* reserved bytes 14, 15 */
    total = make_kind(k);
    buf[14] = 1;
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    total = make_kind(k);
    buf[15] = 0x80;
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_unknown_flags(void **state) {
  int k, bit;
  size_t total;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    for (bit = 0; bit < 16; ++bit) {
      uint16_t f = (uint16_t)(1u << bit);
      int is_data = k == K_DATA || k == K_DATA_ECHO || k == K_DATA_EMPTY ||
                    k == K_DATA_ACK;
      int is_ack = k == K_ACK_MIN || k == K_ACK_MAX;
      if ((is_data && (f == SRD_DATA_FLAG_HS_ECHO || f == SRD_DATA_FLAG_ACK ||
                       f == SRD_DATA_FLAG_PCRC)) ||
          (is_ack && f == SRD_ACK_FLAG_EMPTY)) {
        continue; /* known flags: tested on their own */
      }
      total = make_kind(k);
      /* Keep the packet's own flags (HS_ECHO, ACK), add the unknown bit. */
      wr16(buf + 2, (uint16_t)(((uint16_t)buf[2] << 8 | buf[3]) | f));
      EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    }
  }
}

static void test_pkt_dst_conn_zero(void **state) {
  int k;
  size_t total;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    total = make_kind(k);
    wr32(buf + 8, 0);
    if (k == K_HS_REQ) {
      EXPECT_OK(buf, total, total); /* a first HS_REQ */
    } else {
      EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    }
  }
}

static void test_pkt_data_payload_len_mismatch(void **state) {
  srd_pkt_data d = data_hdr();
  size_t total, hdr;
  uint16_t flags;
  (void)state;

  for (flags = 0; flags <= SRD_DATA_FLAG_HS_ECHO; ++flags) {
    d.hs_echo = flags ? 5 : 0;
    total = make_data(flags, &d);
    hdr = srd_pkt_data_hdrlen(flags);
    /* The header claims more payload than there is. */
    wr16(buf + 40, (uint16_t)(d.payload_len + 1));
    EXPECT_DROP(buf, total, total, SRD_DROP_TRUNCATED);
    wr16(buf + 40, 0xFFFF);
    EXPECT_DROP(buf, total, total, SRD_DROP_TRUNCATED);
    /* Less: the datagram has bytes after the payload. */
    wr16(buf + 40, (uint16_t)(d.payload_len - 1));
    EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    /* A header with no payload, claiming some. */
    make_data(flags, &d);
    EXPECT_DROP(buf, hdr, hdr, SRD_DROP_TRUNCATED);
    EXPECT_DROP(buf, hdr + 1, hdr + 1, SRD_DROP_TRUNCATED);
  }
  /* An empty message followed by stray bytes. */
  d.msg_len = d.offset = d.payload_len = 0;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total + 1, total + 1, SRD_DROP_BAD_FIELD);
}

static void test_pkt_data_offset_bounds(void **state) {
  srd_pkt_data d = data_hdr();
  size_t total;
  (void)state;

  /* offset beyond the message */
  d.msg_len = 1000;
  d.offset = 1001;
  d.payload_len = 1;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.offset = 1000; /* at the end, with payload */
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.offset = 0xFFFFFFFFu;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* offset + payload one past the end, and exactly at it */
  d.offset = 500;
  d.payload_len = 501;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.payload_len = 500;
  total = make_data(0, &d);
  EXPECT_OK(buf, total, total);

  /* No overflow in offset + payload_len near the 32-bit limit. */
  d.msg_len = SRD_PKT_MAX_MSG_SIZE;
  d.offset = SRD_PKT_MAX_MSG_SIZE - 50;
  d.payload_len = 100;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.payload_len = 50;
  total = make_data(0, &d);
  EXPECT_OK(buf, total, total);

  /* A message above the decoder's limit, and a payload above the MTU
     limit. */
  d.msg_len = SRD_PKT_MAX_MSG_SIZE + 1;
  d.offset = 0;
  d.payload_len = 100;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.msg_len = 100000;
  d.payload_len = SRD_PKT_MAX_MTU + 1;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.payload_len = SRD_PKT_MAX_MTU;
  total = make_data(0, &d);
  EXPECT_OK(buf, total, total);
}

static void test_pkt_data_empty_rules(void **state) {
  srd_pkt_data d = data_hdr();
  size_t total;
  (void)state;

  /* An empty fragment of a message that is not empty. */
  d.msg_len = 100;
  d.offset = 0;
  d.payload_len = 0;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.offset = 100; /* even at its end */
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* Payload for an empty message. */
  d.msg_len = 0;
  d.offset = 0;
  d.payload_len = 1;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* An empty message must sit at offset 0. */
  d.payload_len = 0;
  d.offset = 1;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.offset = 0;
  total = make_data(0, &d);
  EXPECT_OK(buf, total, total);
}

static void test_pkt_data_msg_floor(void **state) {
  static const struct {
    uint32_t id, floor;
    int ok;
  } cases[] = {
      {100, 100, 1},
      {100, 99, 1},
      {100, 0, 1},
      {100, 101, 0},
      {100, 100 + 0x7FFFFFFFu, 0},
      {100, 100 - 0x7FFFFFFFu, 1},
      /* across the wrap: the floor just below 2^32 is before a small id */
      {3, 0xFFFFFFFEu, 1},
      {0, 0xFFFFFFFFu, 1},
      {0xFFFFFFFEu, 3, 0},
      {0xFFFFFFFFu, 0, 0},
      {0x7FFFFFFFu, 0x80000000u, 0},
      {0x80000000u, 0x7FFFFFFFu, 1},
  };
  srd_pkt_data d = data_hdr();
  size_t i, total;
  (void)state;

  for (i = 0; i < srd_arraylen(cases); ++i) {
    d.msg_id = cases[i].id;
    d.msg_floor = cases[i].floor;
    total = make_data(0, &d);
    if (cases[i].ok) {
      EXPECT_OK(buf, total, total);
    } else {
      EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
    }
  }
}

static void test_pkt_data_bad_header_fields(void **state) {
  srd_pkt_data d = data_hdr();
  size_t total;
  (void)state;

  /* tx_count 0 */
  d.tx_count = 0;
  total = make_data(0, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  d.tx_count = 1;
  total = make_data(0, &d);
  EXPECT_OK(buf, total, total);

  /* reserved byte after tx_count */
  buf[43] = 1;
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* HS_ECHO flag with a zero echo */
  d.hs_echo = 0;
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  wr64(buf + 56, 1);
  EXPECT_OK(buf, total, total);

  /* The HS_ECHO flag on a header too short to hold the echo. */
  d.hs_echo = 7;
  make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  EXPECT_DROP(buf, SRD_PKT_DATA_HDR_LEN + 4, SRD_PKT_DATA_HDR_LEN + 4096,
              SRD_DROP_TRUNCATED);
}

static void test_pkt_ack_counts_above_max(void **state) {
  srd_pkt_ack a;
  size_t n;
  (void)state;

  /* A count above its maximum claims a header as long as that count says:
     given bytes enough for the header it claims (zeros after the packet),
     the header CRC holds (decode_fails reseals) and the count check itself
     refuses it. */
  memset(buf, 0, sizeof(buf));
  fill_ack_max(&a);
  n = make_ack(&a);
  buf[26] = SRD_ACK_MAX_RANGES + 1;
  EXPECT_DROP(buf, n + SRD_PKT_ACK_RANGE_LEN, n + SRD_PKT_ACK_RANGE_LEN,
              SRD_DROP_BAD_FIELD);
  buf[26] = 0xFF;
  EXPECT_DROP(buf, sizeof(buf), sizeof(buf), SRD_DROP_BAD_FIELD);
  n = make_ack(&a);
  buf[27] = SRD_ACK_MAX_ECHO + 1;
  EXPECT_DROP(buf, n + SRD_PKT_ACK_ECHO_LEN, n + SRD_PKT_ACK_ECHO_LEN,
              SRD_DROP_BAD_FIELD);
  n = make_ack(&a);
  buf[28] = SRD_ACK_MAX_NACK + 1;
  EXPECT_DROP(buf, n + SRD_PKT_ACK_NACK_LEN, n + SRD_PKT_ACK_NACK_LEN,
              SRD_DROP_BAD_FIELD);
  n = make_ack(&a);
  buf[28] = 0xFF;
  EXPECT_DROP(buf, sizeof(buf), sizeof(buf), SRD_DROP_BAD_FIELD);
  /* The same counts in a datagram that ends where the packet did: the span
     the header claims lies beyond the bytes given, which reads as
     TRUNCATED before the CRC and any count is checked (a decoder cannot
     know which bytes the CRC covers). */
  n = make_ack(&a);
  buf[28] = 0xFF;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);
  n = make_ack(&a);
  buf[26] = SRD_ACK_MAX_RANGES + 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);
  n = make_ack(&a);
  buf[27] = SRD_ACK_MAX_ECHO + 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);

  /* A count that promises more entries than present: truncated. */
  memset(&a, 0, sizeof(a));
  a.largest = 10;
  n = make_ack(&a);
  buf[26] = 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);
  buf[26] = 0;
  buf[27] = 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);
  buf[27] = 0;
  buf[28] = 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_TRUNCATED);
}

static void test_pkt_ack_reserved(void **state) {
  srd_pkt_ack a;
  size_t n, off, i;
  (void)state;

  fill_ack_max(&a);
  for (i = 29; i <= 31; ++i) {
    n = make_ack(&a);
    buf[i] = 1;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
  /* The padding of the first and the last echo. */
  off = SRD_PKT_ACK_HDR_LEN + SRD_ACK_MAX_RANGES * SRD_PKT_ACK_RANGE_LEN;
  n = make_ack(&a);
  buf[off + 18] = 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  n = make_ack(&a);
  buf[off + (SRD_ACK_MAX_ECHO - 1) * SRD_PKT_ACK_ECHO_LEN + 19] = 1;
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  /* Each byte of the fragment index of a NACK whose reason is not HAVE
     (the first is TRUNCATED, the last RNR): it must be 0. */
  off += SRD_ACK_MAX_ECHO * SRD_PKT_ACK_ECHO_LEN;
  for (i = 9; i <= 11; ++i) {
    n = make_ack(&a);
    buf[off + i] = 1;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
    n = make_ack(&a);
    buf[off + (SRD_ACK_MAX_NACK - 1) * SRD_PKT_ACK_NACK_LEN + i] = 0x80;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_ack_range_zero(void **state) {
  srd_pkt_ack a;
  size_t n;
  uint32_t i;
  (void)state;

  for (i = 0; i < SRD_ACK_MAX_RANGES; i += SRD_ACK_MAX_RANGES - 1) {
    fill_ack_max(&a);
    a.ranges[i].gap = 0;
    n = make_ack(&a);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
    fill_ack_max(&a);
    a.ranges[i].len = 0;
    n = make_ack(&a);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
    fill_ack_max(&a);
    a.ranges[i].gap = 1;
    a.ranges[i].len = 1;
    n = make_ack(&a);
    EXPECT_OK(buf, n, n);
  }
  /* first_range 0 is one packet, not an empty range. */
  memset(&a, 0, sizeof(a));
  a.largest = 1;
  a.first_range = 0;
  n = make_ack(&a);
  EXPECT_OK(buf, n, n);
}

static void test_pkt_ack_echo_path(void **state) {
  srd_pkt_ack a;
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n;
  (void)state;

  fill_ack_max(&a);
  a.echo[SRD_ACK_MAX_ECHO - 1].path = SRD_MAX_PATHS;
  n = make_ack(&a);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  fill_ack_max(&a);
  a.echo[0].path = 0xFFFF;
  n = make_ack(&a);
  EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  fill_ack_max(&a);
  a.echo[0].path = SRD_MAX_PATHS - 1;
  a.echo[1].path = 0;
  n = make_ack(&a);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  assert_int_equal(pkt.u.ack.echo[0].path, SRD_MAX_PATHS - 1);
  assert_int_equal(pkt.u.ack.echo[1].path, 0);
}

static void test_pkt_ack_nack_reason(void **state) {
  static const uint8_t bad[] = {0, SRD_NACK_MAX + 1, 0x81, 0xFF};
  srd_pkt_ack a;
  size_t n, i;
  (void)state;

  for (i = 0; i < sizeof(bad); ++i) {
    fill_ack_max(&a);
    a.nack[SRD_ACK_MAX_NACK - 1].reason = bad[i];
    n = make_ack(&a);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
    fill_ack_max(&a);
    a.nack[0].reason = bad[i];
    n = make_ack(&a);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
  fill_ack_max(&a);
  a.nack[0].reason = SRD_NACK_RNR;
  a.nack[1].reason = SRD_NACK_TRUNCATED;
  a.nack[2].reason = SRD_NACK_DONE;
  a.nack[3].reason = SRD_NACK_HAVE;
  a.nack[3].frag = 7;
  n = make_ack(&a);
  EXPECT_OK(buf, n, n);
}

/* The notices among the NACKs: DONE, and HAVE with its 24-bit fragment
   index; only a HAVE names a fragment. */
static void test_pkt_ack_nack_notices(void **state) {
  static const uint8_t others[] = {SRD_NACK_RNR, SRD_NACK_TRUNCATED,
                                   SRD_NACK_DONE};
  static const uint32_t frags[] = {1, 0x80, 0x8000, 0x800000, 0xFFFFFF};
  srd_pkt_ack a;
  srd_pkt pkt;
  srd_drop_reason why;
  size_t n, off, i, j;
  (void)state;

  memset(&a, 0, sizeof(a));
  a.largest = 9;
  a.n_nack = 6;
  a.nack[0] = (srd_pkt_nack){.seq = 1, .msg_id = 0x10, .reason = SRD_NACK_DONE};
  a.nack[1] = (srd_pkt_nack){.seq = 2, .msg_id = 0x11, .reason = SRD_NACK_HAVE};
  a.nack[2] = (srd_pkt_nack){
      .seq = 3, .msg_id = 0x12, .reason = SRD_NACK_HAVE, .frag = 0xFFFFFF};
  a.nack[3] = (srd_pkt_nack){
      .seq = 4, .msg_id = 0x13, .reason = SRD_NACK_HAVE, .frag = 0x123456};
  a.nack[4] = (srd_pkt_nack){.seq = 5, .msg_id = 0x14, .reason = SRD_NACK_RNR};
  a.nack[5] = (srd_pkt_nack){
      .seq = 6, .msg_id = 0xFFFFFFFFu, .reason = SRD_NACK_TRUNCATED};
  n = make_ack(&a);
  assert_int_equal(n, SRD_PKT_ACK_HDR_LEN + 6 * SRD_PKT_ACK_NACK_LEN);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);
  /* On the wire: u32 seq, u32 msg_id, u8 reason, 24-bit frag. */
  off = SRD_PKT_ACK_HDR_LEN + 3 * SRD_PKT_ACK_NACK_LEN;
  assert_int_equal(rd32(buf + off), 4);
  assert_int_equal(rd32(buf + off + 4), 0x13);
  assert_int_equal(buf[off + 8], SRD_NACK_HAVE);
  assert_int_equal(buf[off + 9], 0x12);
  assert_int_equal(buf[off + 10], 0x34);
  assert_int_equal(buf[off + 11], 0x56);

  /* Notices in an ACK that acknowledges nothing. */
  a.empty = 1;
  a.largest = 0;
  n = make_ack(&a);
  assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
  check_ack_equal(&pkt.u.ack, &a);

  /* A fragment index on any other reason; the last NACK or the first. */
  for (i = 0; i < sizeof(others); ++i) {
    for (j = 0; j < srd_arraylen(frags); ++j) {
      fill_ack_max(&a);
      a.nack[0].reason = others[i];
      a.nack[0].frag = frags[j];
      n = make_ack(&a);
      EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
      fill_ack_max(&a);
      a.nack[SRD_ACK_MAX_NACK - 1].reason = others[i];
      a.nack[SRD_ACK_MAX_NACK - 1].frag = frags[j];
      n = make_ack(&a);
      EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
      /* The same index on a HAVE. */
      a.nack[SRD_ACK_MAX_NACK - 1].reason = SRD_NACK_HAVE;
      n = make_ack(&a);
      assert_int_equal(srd_pkt_decode(&pkt, buf, n, n, &why), 0);
      assert_int_equal(pkt.u.ack.nack[SRD_ACK_MAX_NACK - 1].frag, frags[j]);
    }
  }
  /* A reason past HAVE, with a fragment index or without. */
  for (j = 0; j < 2; ++j) {
    fill_ack_max(&a);
    a.nack[1].reason = SRD_NACK_MAX + 1;
    a.nack[1].frag = (uint32_t)j;
    n = make_ack(&a);
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
}

/* hs_case encodes |type| with |hs| and checks whether it is accepted. */
static void hs_case(uint8_t type, const srd_pkt_hs *hs, int ok) {
  size_t n = make_hs(type, hs);

  if (ok) {
    EXPECT_OK(buf, n, n);
  } else {
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_hs_params(void **state) {
  static const uint8_t types[] = {SRD_PKT_HS_REQ, SRD_PKT_HS_RESP};
  static const struct {
    uint32_t mtu;
    int ok;
  } mtus[] = {{0, 0},
              {SRD_PKT_MIN_MTU - 1, 0},
              {SRD_PKT_MIN_MTU, 1},
              {SRD_PKT_MAX_MTU, 1},
              {SRD_PKT_MAX_MTU + 1, 0},
              {0xFFFFFFFFu, 0}};
  static const struct {
    uint32_t w;
    int ok;
  } windows[] = {{0, 0},     {1, 1},      {2, 1},           {3, 0},
                 {6, 0},     {1000, 0},   {1024, 1},        {65535, 0},
                 {65536, 1}, {131072, 0}, {0x80000000u, 0}, {0xFFFFFFFFu, 0}};
  static const struct {
    uint32_t m;
    int ok;
  } sizes[] = {{0, 0},
               {1, 1},
               {SRD_PKT_MAX_MSG_SIZE, 1},
               {SRD_PKT_MAX_MSG_SIZE + 1, 0},
               {0xFFFFFFFFu, 0}};
  srd_pkt_hs hs;
  size_t t, i, n;
  (void)state;

  for (t = 0; t < sizeof(types); ++t) {
    for (i = 0; i < srd_arraylen(mtus); ++i) {
      hs = hs_params();
      hs.mtu = mtus[i].mtu;
      hs_case(types[t], &hs, mtus[i].ok);
    }
    for (i = 0; i < srd_arraylen(windows); ++i) {
      hs = hs_params();
      hs.msg_window = windows[i].w;
      hs_case(types[t], &hs, windows[i].ok);
    }
    for (i = 0; i < srd_arraylen(sizes); ++i) {
      hs = hs_params();
      hs.max_msg_size = sizes[i].m;
      hs_case(types[t], &hs, sizes[i].ok);
    }
    hs = hs_params();
    hs.nonce = 0;
    hs_case(types[t], &hs, 0);
    /* The reserved word at the end. */
    hs = hs_params();
    n = make_hs(types[t], &hs);
    buf[n - 1] = 1;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
    n = make_hs(types[t], &hs);
    buf[n - 4] = 0x80;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_hs_echo_zero(void **state) {
  srd_pkt_hs hs = hs_params();
  (void)state;

  hs.echo = 0;
  hs_case(SRD_PKT_HS_RESP, &hs, 0);
  hs_case(SRD_PKT_HS_CONFIRM, &hs, 0);
  /* A REQ carries no echo. */
  hs_case(SRD_PKT_HS_REQ, &hs, 1);
  hs.echo = 1;
  hs_case(SRD_PKT_HS_RESP, &hs, 1);
  hs_case(SRD_PKT_HS_CONFIRM, &hs, 1);
}

static void test_pkt_sync_reserved(void **state) {
  size_t n, i;
  (void)state;

  for (i = 24; i < SRD_PKT_SYNC_LEN; ++i) {
    n = make_sync(5);
    buf[i] = 1;
    EXPECT_DROP(buf, n, n, SRD_DROP_BAD_FIELD);
  }
}

static void test_pkt_split_data(void **state) {
  static uint8_t hdr[SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN];
  srd_pkt_data d = data_hdr();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t total, hlen;
  uint16_t flags;
  (void)state;

  for (flags = 0; flags <= SRD_DATA_FLAG_HS_ECHO; ++flags) {
    d.hs_echo = flags ? 0x42 : 0;
    total = make_data(flags, &d);
    hlen = srd_pkt_data_hdrlen(flags);
    /* Only the header is in the buffer; the payload lies elsewhere.  A
       copy proves that the decoder reads nothing past |len|. */
    memcpy(hdr, buf, hlen);
    memset(buf, 0xEE, total);
    assert_int_equal(srd_pkt_decode(&pkt, hdr, hlen, total, &why), 0);
    assert_int_equal(pkt.hdrlen, hlen);
    assert_int_equal(pkt.u.data.payload_len, d.payload_len);
    assert_int_equal(pkt.u.data.seq, d.seq);
    assert_true(pkt.u.data.hs_echo == d.hs_echo);
    /* The total must match the header's payload length exactly. */
    EXPECT_DROP(hdr, hlen, total - 1, SRD_DROP_TRUNCATED);
    EXPECT_DROP(hdr, hlen, total + 1, SRD_DROP_BAD_FIELD);
    /* The header itself must be whole. */
    EXPECT_DROP(hdr, hlen - 1, total, SRD_DROP_TRUNCATED);
    EXPECT_DROP(hdr, SRD_PKT_COMMON_LEN, total, SRD_DROP_TRUNCATED);

    /* Part of the payload in the first buffer. */
    total = make_data(flags, &d);
    assert_int_equal(srd_pkt_decode(&pkt, buf, hlen + 100, total, &why), 0);
    assert_int_equal(pkt.hdrlen, hlen);
  }
}

static void test_pkt_split_fixed(void **state) {
  int k;
  size_t n;
  (void)state;

  /* Packets of a fixed size have no payload: a longer total is a packet
     with trailing bytes. */
  for (k = K_ACK_MIN; k < K_COUNT; ++k) {
    n = make_kind(k);
    EXPECT_OK(buf, n, n);
    EXPECT_DROP(buf, n, n + 5, SRD_DROP_BAD_FIELD);
    EXPECT_DROP(buf, n - 1, n + 5, SRD_DROP_TRUNCATED);
  }
}

/* span_bit says whether bit |bit| of byte |byte| of the packet of kind |k|
   sets the length of the header it claims (srd_pkt_span): the HS_ECHO and
   ACK flags of a DATA, the counts of an ACK, riding or not. */
static int span_bit(int k, size_t byte, int bit) {
  size_t counts;

  switch (k) {
  case K_DATA:
  case K_DATA_ECHO:
  case K_DATA_EMPTY:
  case K_DATA_ACK:
    if (byte == 3) {
      return (1u << bit) & (SRD_DATA_FLAG_HS_ECHO | SRD_DATA_FLAG_ACK);
    }
    if (k != K_DATA_ACK) {
      return 0;
    }
    counts = SRD_PKT_DATA_HDR_LEN + 6;
    break;
  case K_ACK_MIN:
  case K_ACK_MAX:
    counts = SRD_PKT_COMMON_LEN + 6;
    break;
  default:
    return 0;
  }
  return byte >= counts && byte < counts + 3;
}

/* Every single bit flipped in every header, not resealed: the header CRC
   refuses it; so do the version and type checks before it, and a flag or
   count that makes the header claim more bytes than there are.  No flip
   is ever accepted, by the decoder or by srd_pkt_peek. */
static void test_pkt_bit_flips(void **state) {
  static uint8_t orig[BUFLEN];
  srd_pkt pkt;
  srd_pkt_info info;
  srd_drop_reason why;
  size_t total, hdrlen, byte, flips;
  int k, bit, rv;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    total = make_kind(k);
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
    hdrlen = pkt.hdrlen;
    /* The encoders seal what they write, over what the header claims. */
    assert_int_equal(srd_pkt_span(buf, total), hdrlen);
    assert_int_equal(rd32(buf + SRD_PKT_HCRC_OFF), srd_pkt_hcrc(buf, hdrlen));
    memcpy(orig, buf, total);
    flips = 0;
    for (byte = 0; byte < hdrlen; ++byte) {
      for (bit = 0; bit < 8; ++bit) {
        buf[byte] ^= (uint8_t)(1u << bit);
        why = SRD_DROP_REASONS;
        rv = srd_pkt_decode(&pkt, buf, total, total, &why);
        assert_int_equal(rv, SRD_ERR_PROTO);
        assert_int_equal(srd_pkt_peek(buf, total, &info), SRD_ERR_PROTO);
        ++flips;
        if (byte == 0) {
          assert_int_equal(why, SRD_DROP_BAD_VERSION);
        } else if (byte == 1) {
          if (buf[1] == 0 || buf[1] > SRD_PKT_TYPE_MAX) {
            assert_int_equal(why, SRD_DROP_BAD_TYPE);
          } else {
            /* Another type: another span, beyond the datagram or under a
               CRC that does not match. */
            assert_true(why == SRD_DROP_TRUNCATED ||
                        why == SRD_DROP_CORRUPT_HDR);
          }
        } else if (span_bit(k, byte, bit)) {
          assert_int_not_equal(srd_pkt_span(buf, total), hdrlen);
          assert_true(why == SRD_DROP_TRUNCATED || why == SRD_DROP_CORRUPT_HDR);
        } else {
          assert_int_equal(srd_pkt_span(buf, total), hdrlen);
          assert_int_equal(why, SRD_DROP_CORRUPT_HDR);
        }
        buf[byte] ^= (uint8_t)(1u << bit);
      }
    }
    assert_memory_equal(buf, orig, total);
    assert_int_equal(flips, 8 * hdrlen);
    /* Flipped back, it is whole again. */
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  }
}

/* pattern_crc returns the CRC32C of the |n|-byte payload make_data
   writes. */
static uint32_t pattern_crc(size_t n) {
  uint8_t p[1024];
  size_t i;

  assert_true(n <= sizeof(p));
  for (i = 0; i < n; ++i) {
    p[i] = (uint8_t)(i * 7 + 1);
  }
  return srd_crc32c(0, p, n);
}

static void test_pkt_data_pcrc(void **state) {
  static const uint16_t others[] = {0, SRD_DATA_FLAG_HS_ECHO, SRD_DATA_FLAG_ACK,
                                    SRD_DATA_FLAG_HS_ECHO | SRD_DATA_FLAG_ACK};
  static const size_t cuts[] = {0, 1, 3, 4, 8, 255, 256, 511, 512};
  srd_pkt_data d = data_hdr();
  srd_pkt_ack a = piggy_ack();
  srd_pkt pkt;
  srd_drop_reason why;
  size_t total, hdr, i;
  uint16_t flags;
  uint32_t crc;
  const uint8_t *pay;
  (void)state;

  d.msg_len = 1000;
  d.offset = 0;
  d.payload_len = 512;
  d.hs_echo = 0x77;
  crc = pattern_crc(d.payload_len);
  d.pcrc = crc;
  for (i = 0; i < srd_arraylen(others); ++i) {
    flags = (uint16_t)(SRD_DATA_FLAG_PCRC | others[i]);
    total = (flags & SRD_DATA_FLAG_ACK) ? make_data_ack(flags, &d, &a)
                                        : make_data(flags, &d);
    hdr = total - d.payload_len;
    assert_int_equal(rd32(buf + 52), crc);
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
    assert_int_equal(pkt.c.flags, flags);
    assert_int_equal(pkt.hdrlen, hdr);
    assert_int_equal(pkt.u.data.pcrc, crc);
    assert_int_equal(pkt.u.data.payload_len, d.payload_len);
    assert_true(pkt.u.data.hs_echo ==
                ((flags & SRD_DATA_FLAG_HS_ECHO) ? d.hs_echo : 0));
    /* The payload in one piece or in two, cut anywhere. */
    pay = buf + hdr;
    assert_true(srd_pkt_payload_ok(&pkt, pay, d.payload_len, NULL, 0));
    for (i = 0; i < srd_arraylen(cuts); ++i) {
      assert_true(srd_pkt_payload_ok(&pkt, pay, cuts[i], pay + cuts[i],
                                     d.payload_len - cuts[i]));
    }
  }

  /* Any single bit flipped in the payload: the header CRC does not cover
     it, the payload CRC does. */
  total = make_data(SRD_DATA_FLAG_PCRC, &d);
  hdr = total - d.payload_len;
  pay = buf + hdr;
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  for (i = 0; i < 8 * (size_t)d.payload_len; ++i) {
    buf[hdr + i / 8] ^= (uint8_t)(1u << (i % 8));
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
    assert_false(srd_pkt_payload_ok(&pkt, pay, d.payload_len, NULL, 0));
    assert_false(
        srd_pkt_payload_ok(&pkt, pay, 100, pay + 100, d.payload_len - 100u));
    /* A second piece given by length alone cannot be checked: it passes,
       while a NULL piece of length 0 is just nothing. */
    assert_true(srd_pkt_payload_ok(&pkt, pay, 100, NULL, d.payload_len - 100u));
    if (i / 8 < 100) {
      assert_false(srd_pkt_payload_ok(&pkt, pay, 100, NULL, 0));
    }
    buf[hdr + i / 8] ^= (uint8_t)(1u << (i % 8));
  }
  assert_true(srd_pkt_payload_ok(&pkt, pay, d.payload_len, NULL, 0));
  /* Too little or too much payload. */
  assert_false(srd_pkt_payload_ok(&pkt, pay, d.payload_len - 1u, NULL, 0));
  assert_false(srd_pkt_payload_ok(&pkt, pay, d.payload_len, pay, 1));

  /* A forger's wrong payload CRC under a good header CRC: the header is
     accepted, the payload is not.  A CRC of 0 is a CRC like any other. */
  wr32(buf + 52, crc ^ 1);
  srd_pkt_seal(buf, hdr);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_false(srd_pkt_payload_ok(&pkt, pay, d.payload_len, NULL, 0));
  wr32(buf + 52, 0);
  srd_pkt_seal(buf, hdr);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.u.data.pcrc, 0);
  assert_false(srd_pkt_payload_ok(&pkt, pay, d.payload_len, NULL, 0));

  /* Without the flag the encoder writes pcrc 0, and there is nothing to
     check. */
  total = make_data(0, &d);
  assert_int_equal(rd32(buf + 52), 0);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_int_equal(pkt.u.data.pcrc, 0);
  buf[hdr] ^= 1;
  assert_true(srd_pkt_payload_ok(&pkt, buf + hdr, d.payload_len, NULL, 0));
  /* ...and a nonzero pcrc is a bad field. */
  total = make_data(0, &d);
  wr32(buf + 52, crc);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  wr32(buf + 52, 1);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data(SRD_DATA_FLAG_HS_ECHO, &d);
  wr32(buf + 52, 0x80000000u);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);
  total = make_data_ack(0, &d, &a);
  wr32(buf + 52, crc);
  EXPECT_DROP(buf, total, total, SRD_DROP_BAD_FIELD);

  /* An empty message: the CRC of nothing. */
  d.msg_len = d.offset = d.payload_len = 0;
  d.pcrc = srd_crc32c(0, NULL, 0);
  total = make_data(SRD_DATA_FLAG_PCRC, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_true(srd_pkt_payload_ok(&pkt, NULL, 0, NULL, 0));
  d.pcrc = 1;
  total = make_data(SRD_DATA_FLAG_PCRC, &d);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_false(srd_pkt_payload_ok(&pkt, NULL, 0, NULL, 0));

  /* Other packets have no payload CRC. */
  total = make_kind(K_SYNC);
  assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
  assert_true(srd_pkt_payload_ok(&pkt, buf, 7, NULL, 0));
}

static void test_pkt_peek(void **state) {
  static uint8_t orig[BUFLEN];
  srd_pkt pkt;
  srd_pkt_info info;
  srd_drop_reason why;
  size_t total, hdrlen, len;
  int k, is_data, is_hs;
  (void)state;

  for (k = 0; k < K_COUNT; ++k) {
    total = make_kind(k);
    assert_int_equal(srd_pkt_decode(&pkt, buf, total, total, &why), 0);
    hdrlen = pkt.hdrlen;
    memcpy(orig, buf, total);
    is_data = pkt.c.type == SRD_PKT_DATA;
    is_hs = k == K_HS_REQ || k == K_HS_RESP || k == K_HS_CONFIRM;
    /* The whole datagram, or its header alone. */
    for (len = hdrlen; len <= total; len += total - hdrlen + 1) {
      memset(&info, 0xA5, sizeof(info));
      assert_int_equal(srd_pkt_peek(buf, len, &info), 0);
      assert_int_equal(info.type, pkt.c.type);
      assert_int_equal(info.flags, pkt.c.flags);
      assert_int_equal(info.src_conn, 0x11223344u);
      assert_int_equal(info.dst_conn, 0x55667788u);
      assert_int_equal(info.path, 63);
      assert_int_equal(info.hdrlen, hdrlen);
      assert_int_equal(!!info.handshake, is_hs);
      assert_int_equal(!!info.hs_echo,
                       k == K_HS_CONFIRM ||
                           (is_data && (pkt.c.flags & SRD_DATA_FLAG_HS_ECHO)));
      assert_int_equal(info.msg_id, is_data ? pkt.u.data.msg_id : 0);
      assert_int_equal(info.msg_len, is_data ? pkt.u.data.msg_len : 0);
      assert_int_equal(info.offset, is_data ? pkt.u.data.offset : 0);
      assert_int_equal(info.payload_len, is_data ? pkt.u.data.payload_len : 0);
      if (hdrlen == total) {
        break;
      }
    }
    /* A buffer short of the header. */
    assert_int_equal(srd_pkt_peek(buf, hdrlen - 1, &info), SRD_ERR_PROTO);
    for (len = 0; len <= SRD_PKT_COMMON_LEN; ++len) {
      assert_int_equal(srd_pkt_peek(buf, len, &info), SRD_ERR_PROTO);
    }
    /* A flipped bit: in the CRC, a connection id, the last header byte. */
    buf[SRD_PKT_HCRC_OFF + 2] ^= 0x10;
    assert_int_equal(srd_pkt_peek(buf, total, &info), SRD_ERR_PROTO);
    buf[SRD_PKT_HCRC_OFF + 2] ^= 0x10;
    buf[5] ^= 0x01;
    assert_int_equal(srd_pkt_peek(buf, total, &info), SRD_ERR_PROTO);
    buf[5] ^= 0x01;
    buf[hdrlen - 1] ^= 0x80;
    assert_int_equal(srd_pkt_peek(buf, total, &info), SRD_ERR_PROTO);
    buf[hdrlen - 1] ^= 0x80;
    /* Another version, resealed. */
    buf[0] = 1;
    srd_pkt_seal(buf, hdrlen);
    assert_int_equal(srd_pkt_peek(buf, total, &info), SRD_ERR_PROTO);
    buf[0] = SRD_PROTO_VERSION;
    srd_pkt_seal(buf, hdrlen);
    /* peek changes nothing. */
    assert_memory_equal(buf, orig, total);
  }

  /* The values themselves, for a DATA. */
  total = make_kind(K_DATA);
  assert_int_equal(srd_pkt_peek(buf, total, &info), 0);
  assert_int_equal(info.type, SRD_PKT_TYPE_DATA);
  assert_int_equal(info.hdrlen, SRD_PKT_DATA_HDR_LEN);
  assert_int_equal(info.msg_id, 0x80000001u);
  assert_int_equal(info.msg_len, 10000);
  assert_int_equal(info.offset, 4096);
  assert_int_equal(info.payload_len, 4096);
  assert_int_equal(info.handshake, 0);
  /* It checks the version, the type and the CRC, not the other fields
     (srd_ep_read_pkt does): a sealed header with src_conn 0. */
  wr32(buf + 4, 0);
  srd_pkt_seal(buf, SRD_PKT_DATA_HDR_LEN);
  assert_int_equal(srd_pkt_peek(buf, total, &info), 0);
  assert_int_equal(info.src_conn, 0);

  /* A first HS_REQ: no receiver id yet. */
  {
    srd_pkt_common c = common();
    srd_pkt_hs hs = hs_params();
    srd_ssize n;

    c.dst_conn = 0;
    n = srd_pkt_encode_hs(buf, sizeof(buf), SRD_PKT_HS_REQ, &c, &hs);
    assert_int_equal(n, SRD_PKT_HS_REQ_LEN);
    assert_int_equal(srd_pkt_peek(buf, (size_t)n, &info), 0);
    assert_int_equal(info.type, SRD_PKT_TYPE_HS_REQ);
    assert_int_equal(info.dst_conn, 0);
    assert_int_not_equal(info.handshake, 0);
    assert_int_equal(info.hdrlen, SRD_PKT_HS_REQ_LEN);
  }

  assert_int_equal(srd_pkt_peek(NULL, total, &info), SRD_ERR_INVALID_ARGUMENT);
  assert_int_equal(srd_pkt_peek(buf, total, NULL), SRD_ERR_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pkt_data_roundtrip),
      cmocka_unit_test(test_pkt_data_echo_roundtrip),
      cmocka_unit_test(test_pkt_data_ack_roundtrip),
      cmocka_unit_test(test_pkt_data_ack_malformed),
      cmocka_unit_test(test_pkt_ack_roundtrip),
      cmocka_unit_test(test_pkt_ack_empty),
      cmocka_unit_test(test_pkt_hs_req_roundtrip),
      cmocka_unit_test(test_pkt_hs_resp_roundtrip),
      cmocka_unit_test(test_pkt_hs_confirm_roundtrip),
      cmocka_unit_test(test_pkt_hs_req_padded),
      cmocka_unit_test(test_pkt_sync_roundtrip),
      cmocka_unit_test(test_pkt_encode_nobuf),
      cmocka_unit_test(test_pkt_truncated_prefixes),
      cmocka_unit_test(test_pkt_trailing_bytes),
      cmocka_unit_test(test_pkt_bad_version),
      cmocka_unit_test(test_pkt_bad_type),
      cmocka_unit_test(test_pkt_common_fields),
      cmocka_unit_test(test_pkt_unknown_flags),
      cmocka_unit_test(test_pkt_dst_conn_zero),
      cmocka_unit_test(test_pkt_data_payload_len_mismatch),
      cmocka_unit_test(test_pkt_data_offset_bounds),
      cmocka_unit_test(test_pkt_data_empty_rules),
      cmocka_unit_test(test_pkt_data_msg_floor),
      cmocka_unit_test(test_pkt_data_bad_header_fields),
      cmocka_unit_test(test_pkt_ack_counts_above_max),
      cmocka_unit_test(test_pkt_ack_reserved),
      cmocka_unit_test(test_pkt_ack_range_zero),
      cmocka_unit_test(test_pkt_ack_echo_path),
      cmocka_unit_test(test_pkt_ack_nack_reason),
      cmocka_unit_test(test_pkt_ack_nack_notices),
      cmocka_unit_test(test_pkt_hs_params),
      cmocka_unit_test(test_pkt_hs_echo_zero),
      cmocka_unit_test(test_pkt_sync_reserved),
      cmocka_unit_test(test_pkt_split_data),
      cmocka_unit_test(test_pkt_split_fixed),
      cmocka_unit_test(test_pkt_bit_flips),
      cmocka_unit_test(test_pkt_data_pcrc),
      cmocka_unit_test(test_pkt_peek),
  };

  return cmocka_run_group_tests_name("pkt", tests, NULL, NULL);
}
