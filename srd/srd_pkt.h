/*
 * srd_pkt.h: the wire format, encode and decode.  Pure functions with no
 * endpoint state; docs/protocol.md documents every field.
 *
 * All integers are big-endian (network order).  Every packet starts with
 * the 20-byte common header:
 *
 *   0  u8  version      SRD_PROTO_VERSION
 *   1  u8  type         SRD_PKT_*
 *   2  u16 flags        per type; unknown bits are rejected
 *   4  u32 src_conn     sender's incarnation id (never 0)
 *   8  u32 dst_conn     receiver's incarnation id, 0 in a first HS_REQ
 *   12 u16 path         entropy index the sender used, < SRD_MAX_PATHS
 *   14 u16 reserved     0
 *   16 u32 hcrc         CRC32C of the header (everything but the payload)
 *                       except this field (srd_pkt_seal)
 *
 * Every function below is defined in srd_pkt.c (the static inline ones
 * here).  None keeps a pointer to a buffer it is given, none allocates,
 * and all are safe to call from any thread on distinct arguments.  The
 * decoder is the engine's first line against hostile input: it never
 * asserts on what a packet holds and reports every refusal as
 * SRD_ERR_PROTO with a srd_drop_reason.
 */
#ifndef SRD_PKT_H
#define SRD_PKT_H

#include <stddef.h>
#include <stdint.h>

#include <srd/srd.h>

/* Packet types (srd_pkt_type in srd.h). */
#define SRD_PKT_DATA SRD_PKT_TYPE_DATA
#define SRD_PKT_ACK SRD_PKT_TYPE_ACK
#define SRD_PKT_HS_REQ SRD_PKT_TYPE_HS_REQ
#define SRD_PKT_HS_RESP SRD_PKT_TYPE_HS_RESP
#define SRD_PKT_HS_CONFIRM SRD_PKT_TYPE_HS_CONFIRM
#define SRD_PKT_SYNC SRD_PKT_TYPE_SYNC
#define SRD_PKT_TYPE_MAX 6

/* SRD_DATA_FLAG_HS_ECHO: the data header carries the 8-byte handshake
   cookie of the receiver, proving the sender's incarnation is live, and
   the sender's handshake parameters (mtu, max_msg_size, msg_window, as in
   its HS_REQ), so that a stateless responder (srd_ep_accept_cookie) that
   kept nothing can open the session from this packet alone. */
#define SRD_DATA_FLAG_HS_ECHO 0x0001u
/* SRD_DATA_FLAG_ACK: an acknowledgement rides on the data packet: the
   fields of an ACK after its common header (without NACKs, with at most
   SRD_PIGGY_MAX_RANGES ranges and SRD_PIGGY_MAX_ECHO echoes) follow the
   data header, before the payload. */
#define SRD_DATA_FLAG_ACK 0x0002u
/* SRD_DATA_FLAG_PCRC: pcrc holds the CRC32C of the payload. */
#define SRD_DATA_FLAG_PCRC 0x0004u
/* SRD_PIGGY_MAX_RANGES and SRD_PIGGY_MAX_ECHO bound the ranges and echoes
   of an acknowledgement riding on a DATA (it never carries NACKs). */
#define SRD_PIGGY_MAX_RANGES 4
#define SRD_PIGGY_MAX_ECHO 4

/* SRD_ACK_FLAG_EMPTY: the ACK acknowledges no packet (it carries only
   NACKs); largest, first_range and n_ranges are 0. */
#define SRD_ACK_FLAG_EMPTY 0x0001u

/* NACK reasons in an ACK packet.  DONE and HAVE are not refusals but
   notices keyed by message id, so that they reach the sender even when the
   packet they answer has left its sent-packet ring. */
#define SRD_NACK_RNR 1       /* no receive buffer: back off, retry */
#define SRD_NACK_TRUNCATED 2 /* receive buffer too small: fail the send */
#define SRD_NACK_DONE 3      /* the whole message is in: it succeeded */
#define SRD_NACK_HAVE 4      /* fragment |frag| of the message is in */
/* SRD_NACK_MAX is the largest reason the decoder accepts. */
#define SRD_NACK_MAX 4

/* Encoded lengths in bytes (docs/protocol.md has the layouts): the common
   header and the offset of its hcrc field; a DATA header without and the
   cookie echo it may add; an ACK header and each of its ranges, echoes
   and NACKs; the fixed-size handshake and SYNC packets. */
#define SRD_PKT_COMMON_LEN 20
#define SRD_PKT_HCRC_OFF 16
#define SRD_PKT_DATA_HDR_LEN 56
#define SRD_PKT_DATA_ECHO_LEN 20
#define SRD_PKT_ACK_HDR_LEN 32
#define SRD_PKT_ACK_RANGE_LEN 4
#define SRD_PKT_ACK_ECHO_LEN 20
#define SRD_PKT_ACK_NACK_LEN 12
/* SRD_PKT_PIGGY_MAX_LEN: the longest acknowledgement a DATA carries. */
#define SRD_PKT_PIGGY_MAX_LEN                                                  \
  (SRD_PKT_ACK_HDR_LEN - SRD_PKT_COMMON_LEN +                                  \
   SRD_PIGGY_MAX_RANGES * SRD_PKT_ACK_RANGE_LEN +                              \
   SRD_PIGGY_MAX_ECHO * SRD_PKT_ACK_ECHO_LEN)
/* An HS_REQ is padded to the length of the HS_RESP it asks for, so that
   an answer is never larger than its request (no amplification towards a
   forged source address); a stateless responder refuses anything shorter
   (srd_ep_answer_hs). */
#define SRD_PKT_HS_REQ_LEN 52
#define SRD_PKT_HS_RESP_LEN 52
#define SRD_PKT_HS_CONFIRM_LEN 40
#if SRD_HS_ANSWER_LEN != SRD_PKT_HS_RESP_LEN ||                                \
    SRD_PKT_HS_REQ_LEN < SRD_PKT_HS_RESP_LEN
#  error "an HS_REQ must be at least as long as its answer, srd.h's length"
#endif
#define SRD_PKT_SYNC_LEN 28

/* Bounds on the arrays of one ACK. */
#define SRD_ACK_MAX_RANGES 32
#define SRD_ACK_MAX_ECHO 16
#define SRD_ACK_MAX_NACK 8
/* SRD_PKT_ACK_MAX_LEN is the longest ACK packet (srd.h's SRD_PKT_MAX_CTL
   is this bound, as the largest packet without payload). */
#define SRD_PKT_ACK_MAX_LEN                                                    \
  (SRD_PKT_ACK_HDR_LEN + SRD_ACK_MAX_RANGES * SRD_PKT_ACK_RANGE_LEN +          \
   SRD_ACK_MAX_ECHO * SRD_PKT_ACK_ECHO_LEN +                                   \
   SRD_ACK_MAX_NACK * SRD_PKT_ACK_NACK_LEN)

/* Limits every decoder enforces, whatever the endpoint's settings. */
#define SRD_PKT_MIN_MTU 256
#define SRD_PKT_MAX_MTU 65000
#define SRD_PKT_MAX_MSG_SIZE (1u << 30)
#define SRD_PKT_MAX_MSG_WINDOW 65536

/* srd_pkt_common is the common header (the table at the top); the
   encoders write version, reserved and hcrc themselves. */
typedef struct srd_pkt_common {
  uint8_t version;   /* SRD_PROTO_VERSION */
  uint8_t type;      /* SRD_PKT_* */
  uint16_t flags;    /* SRD_DATA_FLAG_* or SRD_ACK_FLAG_*, else 0 */
  uint32_t src_conn; /* the sender's session id, never 0 */
  uint32_t dst_conn; /* the receiver's, 0 only in a first HS_REQ */
  uint16_t path;     /* the sender's entropy index, < SRD_MAX_PATHS */
} srd_pkt_common;

/* srd_pkt_data is a DATA header: one fragment of one message. */
typedef struct srd_pkt_data {
  uint32_t seq;         /* packet number, new for every transmission */
  uint32_t msg_id;      /* per-peer message sequence number */
  uint32_t msg_floor;   /* every message id below is finished at sender */
  uint32_t msg_len;     /* total message length */
  uint32_t offset;      /* offset of this fragment in the message */
  uint16_t payload_len; /* bytes of payload after the header */
  uint8_t tx_count;     /* 1 for the first transmission of the fragment */
  uint64_t tx_ts;       /* sender's clock when sent, echoed in the ACK */
  uint32_t pcrc;        /* with SRD_DATA_FLAG_PCRC: CRC32C of the payload */
  uint64_t hs_echo;     /* with SRD_DATA_FLAG_HS_ECHO: the cookie */
  /* with SRD_DATA_FLAG_HS_ECHO: the sender's handshake parameters (its
     HS_REQ's mtu, max_msg_size and msg_window), else 0 */
  uint32_t hs_mtu, hs_max_msg_size, hs_msg_window;
  /* ack: with SRD_DATA_FLAG_ACK, the acknowledgement it carries (decoded
     into srd_pkt.piggy). */
  const struct srd_pkt_ack *ack;
} srd_pkt_data;

/* srd_pkt_ack_range: below the previous range, |gap| packets are missing
   and then |len| packets were received. */
typedef struct srd_pkt_ack_range {
  uint16_t gap; /* packets missing, >= 1 */
  uint16_t len; /* packets received below them, >= 1 */
} srd_pkt_ack_range;

/* srd_pkt_echo returns one data packet's timestamp and acknowledges it,
   whatever the ranges manage to report. */
typedef struct srd_pkt_echo {
  uint64_t tx_ts;   /* the data packet's tx_ts */
  uint32_t seq;     /* the data packet's packet number */
  uint32_t hold_ns; /* how long the receiver held it before this ACK */
  uint16_t path;    /* the data packet's path */
} srd_pkt_echo;

/* srd_pkt_nack rejects one data packet. */
typedef struct srd_pkt_nack {
  uint32_t seq;    /* the packet number it answers */
  uint32_t msg_id; /* that packet's message */
  uint8_t reason;  /* SRD_NACK_* */
  uint32_t frag;   /* SRD_NACK_HAVE: the fragment (24 bits); else 0 */
} srd_pkt_nack;

/* srd_pkt_ack is an ACK: packets |largest| - |first_range| .. |largest|
   were received, then the ranges below, QUIC style (RFC 9000 19.3). */
typedef struct srd_pkt_ack {
  uint8_t empty;        /* SRD_ACK_FLAG_EMPTY: no packet acknowledged */
  uint32_t largest;     /* the largest packet number received */
  uint16_t first_range; /* packets received just below it */
  uint8_t n_ranges;     /* ranges[] in use, <= SRD_ACK_MAX_RANGES */
  uint8_t n_echo;       /* echo[] in use, <= SRD_ACK_MAX_ECHO */
  uint8_t n_nack;       /* nack[] in use, <= SRD_ACK_MAX_NACK */
  srd_pkt_ack_range ranges[SRD_ACK_MAX_RANGES];
  srd_pkt_echo echo[SRD_ACK_MAX_ECHO];
  srd_pkt_nack nack[SRD_ACK_MAX_NACK];
} srd_pkt_ack;

/* srd_pkt_hs is a handshake packet (HS_REQ, HS_RESP or HS_CONFIRM). */
typedef struct srd_pkt_hs {
  uint64_t nonce; /* REQ, RESP: fresh random value to be echoed */
  uint64_t echo;  /* RESP, CONFIRM: the nonce being answered */
  /* REQ, RESP, CONFIRM (a CONFIRM repeats its sender's REQ values): */
  uint32_t mtu;          /* sender's payload bytes per packet */
  uint32_t max_msg_size; /* largest message it sends or takes */
  uint32_t msg_window;   /* messages in flight it accepts */
} srd_pkt_hs;

/* srd_pkt_sync tells the receiver the sender's message floor. */
typedef struct srd_pkt_sync {
  uint32_t msg_floor; /* every message id below is finished at the sender */
} srd_pkt_sync;

/* srd_pkt is a decoded packet.  It holds no pointer into the buffer it
   was decoded from; u.data.ack points at its own piggy member, so a copy
   of a srd_pkt must not outlive the original. */
typedef struct srd_pkt {
  srd_pkt_common c; /* the common header */
  union {           /* by c.type */
    srd_pkt_data data;
    srd_pkt_ack ack;
    srd_pkt_hs hs;
    srd_pkt_sync sync;
  } u;
  /* piggy is the acknowledgement a DATA with SRD_DATA_FLAG_ACK carries. */
  srd_pkt_ack piggy;
  /* hdrlen is the length of the header (everything but the payload). */
  size_t hdrlen;
} srd_pkt;

/* srd_pkt_decode decodes the packet in |buf| (|len| bytes, of which the
   header) whose total length, payload included, is |total|; |total| >=
   |len|, equal for a contiguous packet.  The header CRC is checked before
   anything else (SRD_DROP_CORRUPT_HDR), then every field; the payload CRC
   is the caller's (srd_pkt_payload_ok).  |buf| is only read and not
   kept; |pkt| is the caller's and is meaningful only on success (on
   failure it may be partly written).  Any bytes at all are allowed:
   hostile input is refused, never asserted on.

   Returns 0, or SRD_ERR_PROTO with *why set to the drop reason
   (SRD_DROP_TRUNCATED, _BAD_VERSION, _BAD_TYPE, _CORRUPT_HDR or
   _BAD_FIELD). */
int srd_pkt_decode(srd_pkt *pkt, const uint8_t *buf, size_t len, size_t total,
                   srd_drop_reason *why);

/* srd_pkt_span returns the header length that |buf| (|len| bytes, at
   least the common header, of a known type) claims by its type, flags and
   counts, or 0 if those lie beyond |len|: the bytes hcrc covers.  The
   claim is not checked against |len| otherwise: it may exceed it.
   Preconditions: |len| >= SRD_PKT_COMMON_LEN and buf[1] is a type 1 to
   SRD_PKT_TYPE_MAX (srd_pkt_decode checks both first); an unknown type
   reads as a SYNC. */
size_t srd_pkt_span(const uint8_t *buf, size_t len);

/* srd_pkt_hcrc returns the CRC32C of the |hdrlen|-byte header at |buf|,
   its hcrc field left out.  Precondition: |hdrlen| >= SRD_PKT_COMMON_LEN. */
uint32_t srd_pkt_hcrc(const uint8_t *buf, size_t hdrlen);

/* srd_pkt_seal writes the hcrc field of the |hdrlen|-byte header at
   |buf|.  The encoders seal what they write; tests and fuzzers that forge
   a header call it after changing one.  Precondition: |hdrlen| >=
   SRD_PKT_COMMON_LEN. */
void srd_pkt_seal(uint8_t *buf, size_t hdrlen);

/* srd_pkt_payload_ok returns nonzero unless |pkt| is a DATA whose payload
   CRC (SRD_DATA_FLAG_PCRC) disagrees with its payload, given in two
   pieces; a NULL second piece of nonzero length (a simulator's payload by
   length) cannot be checked and passes.  The pieces are only read. */
int srd_pkt_payload_ok(const srd_pkt *pkt, const uint8_t *pay1, size_t len1,
                       const uint8_t *pay2, size_t len2);

/* The encoders write a packet header into |buf| (|cap| bytes), sealed
   (srd_pkt_seal), and return its length; they only read their other
   arguments.  c->flags is written as given for DATA (which also decides
   which of d's optional fields go out) and as 0 for the others; an ACK's
   SRD_ACK_FLAG_EMPTY comes from a->empty; srd_pkt_encode_hs takes the
   handshake |type|.  They check only what would make the header
   unencodable, not whether its values make sense (the decoder does).

   Each returns the header's length, or one of:
   SRD_ERR_NOBUF             |cap| is smaller than the header
   SRD_ERR_INVALID_ARGUMENT  srd_pkt_encode_data: SRD_DATA_FLAG_ACK with
                             d->ack NULL, empty, with NACKs or with more
                             than SRD_PIGGY_MAX_RANGES ranges or
                             SRD_PIGGY_MAX_ECHO echoes;
                             srd_pkt_encode_ack: a count above its
                             SRD_ACK_MAX_*; srd_pkt_encode_hs: |type| not
                             a handshake type
   srd_pkt_encode_sync returns only SRD_ERR_NOBUF. */
srd_ssize srd_pkt_encode_data(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                              const srd_pkt_data *d);
srd_ssize srd_pkt_encode_ack(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                             const srd_pkt_ack *a);
srd_ssize srd_pkt_encode_hs(uint8_t *buf, size_t cap, uint8_t type,
                            const srd_pkt_common *c, const srd_pkt_hs *hs);
srd_ssize srd_pkt_encode_sync(uint8_t *buf, size_t cap, const srd_pkt_common *c,
                              const srd_pkt_sync *s);

#if SRD_PKT_DATA_HDR_LEN + SRD_PKT_DATA_ECHO_LEN + SRD_PKT_PIGGY_MAX_LEN >     \
    SRD_PKT_MAX_HDR
#  error "SRD_PKT_MAX_HDR is too small for a DATA header with an ACK"
#endif

/* srd_pkt_data_hdrlen returns the length of the DATA header proper for
   |flags|: without the acknowledgement it may carry. */
static inline size_t srd_pkt_data_hdrlen(uint16_t flags) {
  return SRD_PKT_DATA_HDR_LEN +
         ((flags & SRD_DATA_FLAG_HS_ECHO) ? SRD_PKT_DATA_ECHO_LEN : 0);
}

/* srd_pkt_ack_len returns the encoded length of |a| as an ACK packet,
   from its counts (which it does not check against their bounds). */
static inline size_t srd_pkt_ack_len(const srd_pkt_ack *a) {
  return SRD_PKT_ACK_HDR_LEN + (size_t)a->n_ranges * SRD_PKT_ACK_RANGE_LEN +
         (size_t)a->n_echo * SRD_PKT_ACK_ECHO_LEN +
         (size_t)a->n_nack * SRD_PKT_ACK_NACK_LEN;
}

/* srd_pkt_piggy_len returns the encoded length of |a| riding on a DATA
   packet (the ACK without its common header). */
static inline size_t srd_pkt_piggy_len(const srd_pkt_ack *a) {
  return srd_pkt_ack_len(a) - SRD_PKT_COMMON_LEN;
}

/* srd_pkt_type_name returns a static name for packet type |type|:
   "data", "ack", "hs_req", "hs_resp", "hs_confirm", "sync", or "unknown". */
const char *srd_pkt_type_name(uint8_t type);

#endif /* SRD_PKT_H */
