/*
 * fuzz_acktr.c: libFuzzer target for the receive-side packet tracker
 * (srd_acktr): an input is a sequence of operations on one tracker,
 * checked against a shadow model.
 *
 * Input: byte 0 picks the window (64 << (b % 7), 64 .. 4096) and the low
 * byte of the first packet number (0xFFFFFF00 | byte 1, so that the
 * numbers wrap past 2^32 early, as the engine's do).  Then records of an
 * op byte and its arguments, at most MAX_OPS of them:
 *   record near the base, ahead of the largest, or at any distance
 *   (check first, record only what check calls NEW, as the engine does);
 *   check only; move the base (also by about 2^31); add a NACK; advance
 *   the clock; build an ACK; reset.
 *
 * The shadow model is the set of recorded packet numbers still inside the
 * window below the largest, the echoes not yet sent and the NACKs not yet
 * sent.  Checks (abort() on failure):
 *   - srd_acktr_check answers as the model does (NEW, DUP, OLD);
 *   - every built ACK names the largest recorded number, acknowledges only
 *     recorded numbers inside the window, and all of them unless its
 *     range list is full; its echoes are the pending ones (number,
 *     timestamp, path), in order, the newest 16 at most; its NACKs the oldest 8
 * pending (the queue holds a window's worth), and an ACK stays due while NACKs
 * are left;
 *   - every built ACK encodes (srd_pkt_encode_ack) and decodes
 *     (srd_pkt_decode) back to the same fields;
 *   - srd_acktr_ack_due and srd_acktr_deadline agree.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "srd_acktr.h"
#include "srd_macro.h"
#include "srd_pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

#define MAX_OPS 1024
#define MAX_WINDOW 4096
#define ACK_FREQ 4
#define ACK_DELAY (5 * SRD_US)

/* Input reader: zeros once the input runs out. */
typedef struct reader {
  const uint8_t *p;
  size_t left;
} reader;

static uint8_t rd8(reader *r) {
  if (r->left == 0) {
    return 0;
  }
  --r->left;
  return *r->p++;
}

static uint16_t rd16(reader *r) {
  uint16_t v = (uint16_t)(rd8(r) << 8);
  return (uint16_t)(v | rd8(r));
}

static uint32_t rd32(reader *r) {
  uint32_t v = (uint32_t)rd16(r) << 16;
  return v | rd16(r);
}

/* The shadow model. */
typedef struct model {
  uint32_t window;
  int have_largest;
  uint32_t largest;
  /* Recorded numbers inside the window (largest - s < window), unordered;
     at most |window| of them. */
  uint32_t seqs[MAX_WINDOW];
  uint32_t n_seqs;
  /* Echoes not yet sent, oldest first (only the newest 16 survive). */
  srd_pkt_echo echo[SRD_ACK_MAX_ECHO];
  srd_tstamp echo_rx[SRD_ACK_MAX_ECHO];
  uint32_t n_echo;
  /* NACKs not yet sent, oldest first: a queue as large as the window;
     each ACK takes up to SRD_ACK_MAX_NACK of them. */
  srd_pkt_nack nack[MAX_WINDOW];
  uint32_t n_nack;
} model;

static int model_has(const model *m, uint32_t seq) {
  uint32_t i;

  for (i = 0; i < m->n_seqs; ++i) {
    if (m->seqs[i] == seq) {
      return 1;
    }
  }
  return 0;
}

static int model_check(const model *m, uint32_t seq) {
  if (!m->have_largest || srd_seq_gt(seq, m->largest)) {
    return SRD_ACKTR_NEW;
  }
  if (m->largest - seq >= m->window) {
    return SRD_ACKTR_OLD;
  }
  return model_has(m, seq) ? SRD_ACKTR_DUP : SRD_ACKTR_NEW;
}

static void model_record(model *m, uint32_t seq, uint64_t tx_ts, uint16_t path,
                         srd_tstamp now) {
  uint32_t i, j;

  if (!m->have_largest || srd_seq_gt(seq, m->largest)) {
    m->have_largest = 1;
    m->largest = seq;
    /* Forget what the window slid past. */
    for (i = j = 0; i < m->n_seqs; ++i) {
      if (m->largest - m->seqs[i] < m->window) {
        m->seqs[j++] = m->seqs[i];
      }
    }
    m->n_seqs = j;
  }
  CHECK(m->n_seqs < m->window);
  m->seqs[m->n_seqs++] = seq;
  if (m->n_echo == SRD_ACK_MAX_ECHO) {
    memmove(m->echo, m->echo + 1, sizeof(m->echo[0]) * (SRD_ACK_MAX_ECHO - 1));
    memmove(m->echo_rx, m->echo_rx + 1,
            sizeof(m->echo_rx[0]) * (SRD_ACK_MAX_ECHO - 1));
    --m->n_echo;
  }
  m->echo[m->n_echo].seq = seq;
  m->echo[m->n_echo].tx_ts = tx_ts;
  m->echo[m->n_echo].path = path;
  m->echo_rx[m->n_echo] = now;
  ++m->n_echo;
}

/* verify_ack checks built ACK |a| against the model (before the model
   forgets the pending echoes and NACKs). */
static void verify_ack(const model *m, const srd_pkt_ack *a, srd_tstamp now) {
  static uint8_t acked[MAX_WINDOW], rec[MAX_WINDOW];
  uint32_t i, k, n_acked = 0, hi, lo, s;

  CHECK(a->n_ranges <= SRD_ACK_MAX_RANGES);
  CHECK(a->n_echo == m->n_echo);
  CHECK(a->n_nack == srd_min(m->n_nack, SRD_ACK_MAX_NACK));
  for (i = 0; i < a->n_echo; ++i) {
    srd_duration hold = now - m->echo_rx[i];
    CHECK(a->echo[i].seq == m->echo[i].seq);
    CHECK(a->echo[i].tx_ts == m->echo[i].tx_ts);
    CHECK(a->echo[i].path == m->echo[i].path);
    CHECK(a->echo[i].hold_ns == (uint32_t)srd_min(hold, UINT32_MAX));
  }
  for (i = 0; i < a->n_nack; ++i) {
    CHECK(a->nack[i].seq == m->nack[i].seq);
    CHECK(a->nack[i].msg_id == m->nack[i].msg_id);
    CHECK(a->nack[i].reason == m->nack[i].reason);
  }
  CHECK(a->empty == !m->have_largest);
  if (!m->have_largest) {
    CHECK(a->largest == 0 && a->first_range == 0 && a->n_ranges == 0);
    return;
  }
  CHECK(a->largest == m->largest);
  memset(acked, 0, m->window);
  /* rec[b]: the number b below the largest was recorded. */
  memset(rec, 0, m->window);
  for (i = 0; i < m->n_seqs; ++i) {
    CHECK(m->largest - m->seqs[i] < m->window);
    rec[m->largest - m->seqs[i]] = 1;
  }

  /* Expand the ranges, QUIC style: each acknowledged number is recorded,
     inside the window, and named once. */
  hi = a->largest;
  lo = hi - a->first_range;
  for (k = 0;; ++k) {
    CHECK(hi - lo < m->window);
    for (s = lo;; ++s) {
      uint32_t behind = m->largest - s;
      CHECK(behind < m->window);
      CHECK(rec[behind]);
      CHECK(!acked[behind]);
      acked[behind] = 1;
      ++n_acked;
      if (s == hi) {
        break;
      }
    }
    if (k == a->n_ranges) {
      break;
    }
    CHECK(a->ranges[k].gap >= 1 && a->ranges[k].len >= 1);
    /* The gap and the range lie below |lo|, inside the window. */
    CHECK((uint64_t)(m->largest - lo) + a->ranges[k].gap + a->ranges[k].len <
          m->window);
    hi = lo - a->ranges[k].gap - 1;
    /* The gap, hi + 1 .. lo - 1, is really missing. */
    for (s = hi + 1; s != lo; ++s) {
      CHECK(!rec[m->largest - s]);
    }
    lo = hi - (a->ranges[k].len - 1u);
  }
  /* Everything, unless the range list ran out. */
  if (a->n_ranges < SRD_ACK_MAX_RANGES) {
    CHECK(n_acked == m->n_seqs);
  }
}

/* roundtrip encodes |a| and decodes it back. */
static void roundtrip(const srd_pkt_ack *a, uint16_t path) {
  uint8_t buf[SRD_PKT_ACK_MAX_LEN];
  srd_pkt_common c = {SRD_PROTO_VERSION, SRD_PKT_ACK, 0,
                      0x01020304u,       0x05060708u, path};
  srd_pkt pkt;
  srd_drop_reason why = SRD_DROP_REASONS;
  srd_ssize n;
  uint32_t i;

  n = srd_pkt_encode_ack(buf, sizeof(buf), &c, a);
  CHECK(n > 0 && (size_t)n == srd_pkt_ack_len(a));
  CHECK(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why) == 0);
  CHECK(pkt.c.type == SRD_PKT_ACK && pkt.hdrlen == (size_t)n);
  CHECK(pkt.c.src_conn == c.src_conn && pkt.c.dst_conn == c.dst_conn);
  CHECK(pkt.c.path == c.path);
  CHECK(pkt.u.ack.empty == a->empty);
  CHECK(pkt.u.ack.largest == a->largest);
  CHECK(pkt.u.ack.first_range == a->first_range);
  CHECK(pkt.u.ack.n_ranges == a->n_ranges && pkt.u.ack.n_echo == a->n_echo &&
        pkt.u.ack.n_nack == a->n_nack);
  for (i = 0; i < a->n_ranges; ++i) {
    CHECK(pkt.u.ack.ranges[i].gap == a->ranges[i].gap);
    CHECK(pkt.u.ack.ranges[i].len == a->ranges[i].len);
  }
  for (i = 0; i < a->n_echo; ++i) {
    CHECK(pkt.u.ack.echo[i].seq == a->echo[i].seq);
    CHECK(pkt.u.ack.echo[i].tx_ts == a->echo[i].tx_ts);
    CHECK(pkt.u.ack.echo[i].hold_ns == a->echo[i].hold_ns);
    CHECK(pkt.u.ack.echo[i].path == a->echo[i].path);
  }
  for (i = 0; i < a->n_nack; ++i) {
    CHECK(pkt.u.ack.nack[i].seq == a->nack[i].seq);
    CHECK(pkt.u.ack.nack[i].msg_id == a->nack[i].msg_id);
    CHECK(pkt.u.ack.nack[i].reason == a->nack[i].reason);
  }
}

static void build_and_verify(srd_acktr *at, model *m, srd_tstamp now) {
  srd_pkt_ack a;

  srd_acktr_build(at, &a, now);
  verify_ack(m, &a, now);
  roundtrip(&a, (uint16_t)(now % SRD_MAX_PATHS));
  m->n_echo = 0;
  m->n_nack -= a.n_nack;
  memmove(m->nack, m->nack + a.n_nack, m->n_nack * sizeof(m->nack[0]));
  /* Nothing is due right after an ACK, unless NACKs are left. */
  CHECK(srd_acktr_ack_due(at, now, ACK_FREQ, ACK_DELAY) == (m->n_nack > 0));
  CHECK(srd_acktr_deadline(at, ACK_FREQ, ACK_DELAY) == SRD_TSTAMP_NONE);
}

static void check_due(const srd_acktr *at, srd_tstamp now) {
  srd_tstamp d = srd_acktr_deadline(at, ACK_FREQ, ACK_DELAY);
  int due = srd_acktr_ack_due(at, now, ACK_FREQ, ACK_DELAY);

  if (d != SRD_TSTAMP_NONE) {
    /* A delayed ACK is waiting: due exactly from its deadline on. */
    CHECK(due == (now >= d));
    CHECK(!srd_acktr_ack_due(at, d - 1, ACK_FREQ, ACK_DELAY) || d == 0);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static model m;
  reader r = {data, size};
  srd_acktr at;
  srd_tstamp now = 0;
  uint32_t base, ops = 0;
  uint8_t b0 = rd8(&r);

  memset(&m, 0, sizeof(m));
  m.window = 64u << (b0 % 7);
  base = 0xFFFFFF00u | rd8(&r);
  CHECK(srd_acktr_init(&at, m.window, srd_mem_default()) == 0);

  while (r.left > 0 && ops++ < MAX_OPS) {
    uint8_t op = rd8(&r);
    uint32_t seq;
    int res, want;

    switch (op % 10) {
    case 0: /* record close to the base, either side */
      seq = base + (uint32_t)(int32_t)(int8_t)rd8(&r);
      goto record;
    case 1: /* record ahead of the largest (a small jump) */
      seq = (m.have_largest ? m.largest : base) + 1u + rd8(&r);
      goto record;
    case 2: /* record at any distance from the base */
      seq = base + rd32(&r);
      goto record;
    case 3: /* record just past or at the edge of the window */
      seq = (m.have_largest ? m.largest : base) -
            (m.window - 2u + (rd8(&r) % 4u));
      goto record;
    record : {
      uint64_t tx_ts = rd32(&r);
      uint16_t path = (uint16_t)(rd8(&r) % SRD_MAX_PATHS);
      res = srd_acktr_check(&at, seq);
      want = model_check(&m, seq);
      CHECK(res == want);
      if (res == SRD_ACKTR_NEW) {
        srd_acktr_record(&at, seq, tx_ts, path, now);
        model_record(&m, seq, tx_ts, path, now);
        CHECK(srd_acktr_check(&at, seq) == SRD_ACKTR_DUP);
      }
      base = seq;
      break;
    }
    case 4: /* check only */
      seq = base + (uint32_t)(int32_t)(int16_t)rd16(&r);
      CHECK(srd_acktr_check(&at, seq) == model_check(&m, seq));
      break;
    case 5: /* move the base: forward, back, or about half the space */
      switch (rd8(&r) % 4) {
      case 0:
        base += rd16(&r);
        break;
      case 1:
        base -= rd16(&r);
        break;
      case 2:
        base += 0x80000000u - 2u + (rd8(&r) % 4u);
        break;
      default:
        base = m.have_largest ? m.largest : base;
        break;
      }
      break;
    case 6: { /* NACK */
      uint32_t nseq = base + (uint32_t)(int32_t)(int8_t)rd8(&r);
      uint32_t msg_id = rd32(&r);
      uint8_t reason =
          (rd8(&r) & 1) ? SRD_NACK_TRUNCATED : (uint8_t)SRD_NACK_RNR;
      srd_acktr_add_nack(&at, nseq, msg_id, reason);
      if (m.n_nack < m.window) {
        m.nack[m.n_nack].seq = nseq;
        m.nack[m.n_nack].msg_id = msg_id;
        m.nack[m.n_nack].reason = reason;
        ++m.n_nack;
      }
      CHECK(srd_acktr_ack_due(&at, now, ACK_FREQ, ACK_DELAY));
      break;
    }
    case 7: { /* advance the clock: ns to about 4 s */
      uint16_t d = rd16(&r);
      now += (d & 0x8000u) ? (srd_duration)(d & 0x7FFFu) * 128 * SRD_US
                           : (srd_duration)d;
      break;
    }
    case 8: /* build an ACK */
      build_and_verify(&at, &m, now);
      break;
    default: /* 9: reset, rarely */
      if ((rd8(&r) & 7) == 0) {
        srd_acktr_reset(&at);
        m.have_largest = 0;
        m.largest = 0;
        m.n_seqs = 0;
        m.n_echo = 0;
        m.n_nack = 0;
      }
      break;
    }
    check_due(&at, now);
  }
  build_and_verify(&at, &m, now);
  srd_acktr_fini(&at);
  return 0;
}
