/*
 * fuzz_acktr.c: libFuzzer target for the receive-side packet tracker
 * (srd_acktr): an input is a sequence of operations on one tracker,
 * checked against a shadow model.
 *
 * Input: byte 0 picks the window (64 << (b % 7) below 224, 64 .. 4096;
 * else 8192 << (b % 4), .. 65536, the larger ones being slower) and the
 * ACK frequency (4, 1, 2 or 16 by bits 3-4), byte 1 the low byte of the
 * first packet number (0xFFFFFF00 | byte 1, so that the numbers wrap past
 * 2^32 early, as the engine's do).  Then records of an op byte and its
 * arguments, at most MAX_OPS of them:
 *   record near the base, ahead of the largest, or at any distance
 *   (check first, record only what check calls NEW, as the engine does);
 *   record a run of up to a window of consecutive numbers (runs record
 *   two windows' worth at most, and the window slides by SLIDE_WINDOWS
 *   at most per input: past that nothing new is recorded ahead of the
 *   largest); check only;
 *   move the base (also by about 2^31); add a NACK; advance the clock;
 *   build an ACK, whole or with at most n ranges (as one riding on a data
 *   packet); reset; start again after failed allocations.
 *
 * The shadow model is the set of recorded packet numbers still inside the
 * window below the largest (full numbers in slots, evicted as the window
 * slides), the echoes and the NACKs not yet sent, and the acknowledgement
 * clock (numbers unacknowledged, the first one's arrival, whether an ACK
 * is wanted now).  Checks (abort() on failure):
 *   - srd_acktr_check answers as the model does (NEW, DUP, OLD);
 *   - every built ACK names the largest recorded number, acknowledges only
 *     recorded numbers inside the window, each once, and all of them
 *     unless its range list is full (then all of them down to where the
 *     list ends); its gaps are really missing; its echoes are the pending
 *     ones (number, timestamp, path, hold time), in order, the newest 16
 *     at most; its NACKs the oldest 8 pending (the queue holds a window's
 *     worth);
 *   - every built ACK encodes (srd_pkt_encode_ack) and decodes
 *     (srd_pkt_decode) back to the same fields, and one that fits a data
 *     packet rides on one (srd_pkt_encode_data) and comes back the same;
 *   - srd_acktr_ack_due and srd_acktr_deadline answer as the model's
 *     clock does after every step;
 *   - srd_acktr_init reports SRD_ERR_NOMEM, keeping nothing, when its
 *     first or second allocation fails.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
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
#define MAX_WINDOW 65536
#define ACK_DELAY (5 * SRD_US)
/* What bounds the work of one input, in windows (and a floor that small
   windows never reach): how far the window may slide in all (the tracker
   and the model both clear every number it slides past, up to a window
   per packet), how many numbers runs may record, and how many recorded
   numbers the ACKs are checked against one by one (past that only their
   other fields are). */
#define SLIDE_WINDOWS 8
#define RUN_WINDOWS 2
#define VERIFY_WINDOWS 64
#define BUDGET_FLOOR 65536

/* The shadow model. */
typedef struct model {
  uint32_t window;
  uint32_t ack_freq;
  int have_largest;
  uint32_t largest;
  /* The recorded numbers inside the window (largest - s < window): slot
     s % window holds s (two numbers inside the window never share one),
     and live[0 .. n_live - 1] lists them, live[pos[s % window]] == s. */
  uint32_t slot[MAX_WINDOW];
  uint8_t used[MAX_WINDOW];
  uint32_t live[MAX_WINDOW];
  uint32_t pos[MAX_WINDOW];
  uint32_t n_live;
  /* The last 16 numbers recorded (number n_recorded - 1 - i at
     (n_recorded - 1 - i) % 16); the newest n_echo of them are the echoes
     not yet sent. */
  srd_pkt_echo echo[SRD_ACK_MAX_ECHO];
  srd_tstamp echo_rx[SRD_ACK_MAX_ECHO];
  uint64_t n_recorded;
  uint32_t n_echo;
  /* NACKs not yet sent, oldest first, from nack[nack_first % window]: a
     queue as large as the window; each ACK takes up to SRD_ACK_MAX_NACK
     of them. */
  srd_pkt_nack nack[MAX_WINDOW];
  uint32_t nack_first;
  uint32_t n_nack;
  /* The acknowledgement clock: numbers recorded since the last ACK, when
     the first of them arrived, whether an ACK is wanted now. */
  uint32_t unacked;
  srd_tstamp first_unacked;
  int immediate;
} model;

static void model_reset(model *m) {
  m->have_largest = 0;
  m->largest = 0;
  memset(m->used, 0, m->window);
  m->n_live = 0;
  m->n_echo = 0;
  m->n_nack = 0;
  m->nack_first = 0;
  m->unacked = 0;
  m->first_unacked = 0;
  m->immediate = 0;
}

static int model_has(const model *m, uint32_t seq) {
  uint32_t i = seq % m->window;

  return m->have_largest && m->largest - seq < m->window && m->used[i] &&
         m->slot[i] == seq;
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

/* model_evict forgets |seq| if it is recorded. */
static void model_evict(model *m, uint32_t seq) {
  uint32_t i = seq % m->window;

  if (m->used[i] && m->slot[i] == seq) {
    uint32_t j = m->pos[i], last = m->live[--m->n_live];
    m->used[i] = 0;
    m->live[j] = last;
    m->pos[last % m->window] = j;
  }
}

static void model_record(model *m, uint32_t seq, uint64_t tx_ts, uint16_t path,
                         srd_tstamp now) {
  uint32_t i;

  if (!m->have_largest) {
    m->have_largest = 1;
    m->largest = seq;
  } else if (srd_seq_gt(seq, m->largest)) {
    /* Forget what the window slides past: from the old bottom up to
       below the new one. */
    uint32_t adv = seq - m->largest, s;
    if (adv >= m->window) {
      memset(m->used, 0, m->window);
      m->n_live = 0;
    } else {
      for (s = m->largest - m->window + 1; s != seq - m->window + 1; ++s) {
        model_evict(m, s);
      }
    }
    m->largest = seq;
  }
  i = seq % m->window;
  CHECK(!m->used[i] && m->n_live < m->window);
  m->used[i] = 1;
  m->slot[i] = seq;
  m->pos[i] = m->n_live;
  m->live[m->n_live++] = seq;
  i = (uint32_t)(m->n_recorded++ % SRD_ACK_MAX_ECHO);
  m->echo[i].seq = seq;
  m->echo[i].tx_ts = tx_ts;
  m->echo[i].path = path;
  m->echo_rx[i] = now;
  m->n_echo = srd_min(m->n_echo + 1, SRD_ACK_MAX_ECHO);
  if (m->unacked++ == 0) {
    m->first_unacked = now;
  }
}

/* model_due and model_deadline: what the model's clock wants. */
static int model_due(const model *m, srd_tstamp now) {
  if (m->immediate || m->n_nack > 0) {
    return 1;
  }
  return m->unacked > 0 &&
         (m->unacked >= m->ack_freq || now >= m->first_unacked + ACK_DELAY);
}

static srd_tstamp model_deadline(const model *m) {
  if (m->unacked == 0 || m->immediate || m->n_nack > 0 ||
      m->unacked >= m->ack_freq) {
    return SRD_TSTAMP_NONE;
  }
  return m->first_unacked + ACK_DELAY;
}

/* verify_ack checks built ACK |a|, of at most |max_ranges| ranges,
   against the model (before the model forgets the pending echoes and
   NACKs); the numbers it acknowledges, one by one, only if |full|. */
static void verify_ack(const model *m, const srd_pkt_ack *a, srd_tstamp now,
                       uint32_t max_ranges, int full) {
  uint32_t i, k, n_acked = 0, in_span = 0, hi, lo, s;

  CHECK(a->n_ranges <= max_ranges);
  CHECK(a->n_echo == m->n_echo);
  CHECK(a->n_nack == srd_min(m->n_nack, SRD_ACK_MAX_NACK));
  for (i = 0; i < a->n_echo; ++i) {
    uint32_t j = (uint32_t)((m->n_recorded - m->n_echo + i) % SRD_ACK_MAX_ECHO);
    srd_duration hold = now - m->echo_rx[j];
    CHECK(a->echo[i].seq == m->echo[j].seq);
    CHECK(a->echo[i].tx_ts == m->echo[j].tx_ts);
    CHECK(a->echo[i].path == m->echo[j].path);
    CHECK(a->echo[i].hold_ns == (uint32_t)srd_min(hold, UINT32_MAX));
  }
  for (i = 0; i < a->n_nack; ++i) {
    const srd_pkt_nack *n = &m->nack[(m->nack_first + i) % m->window];
    CHECK(a->nack[i].seq == n->seq);
    CHECK(a->nack[i].msg_id == n->msg_id);
    CHECK(a->nack[i].reason == n->reason);
  }
  CHECK(a->empty == !m->have_largest);
  if (!m->have_largest) {
    CHECK(a->largest == 0 && a->first_range == 0 && a->n_ranges == 0);
    return;
  }
  CHECK(a->largest == m->largest);

  if (!full) {
    return;
  }

  /* Expand the ranges, QUIC style: each acknowledged number is recorded
     and inside the window; each range lies below the previous one, so no
     number is named twice. */
  hi = a->largest;
  CHECK(a->first_range < m->window);
  lo = hi - a->first_range;
  for (k = 0;; ++k) {
    for (s = lo;; ++s) {
      CHECK(model_has(m, s));
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
    lo = hi - (a->ranges[k].len - 1u);
  }
  /* Every recorded number from the largest down to where the list ends is
     acknowledged: the gaps are really missing... */
  for (i = 0; i < m->n_live; ++i) {
    in_span += m->largest - m->live[i] <= m->largest - lo;
  }
  CHECK(in_span == n_acked);
  /* ...and the list ends at the bottom unless it is full. */
  CHECK(a->n_ranges == max_ranges || n_acked == m->n_live);
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

/* piggy_roundtrip carries |a| on a data packet and decodes it back. */
static void piggy_roundtrip(const srd_pkt_ack *a) {
  uint8_t buf[SRD_PKT_MAX_HDR];
  srd_pkt_common c = {SRD_PROTO_VERSION, SRD_PKT_DATA, SRD_DATA_FLAG_ACK,
                      0x01020304u,       0x05060708u,  1};
  srd_pkt_data d;
  srd_pkt pkt;
  srd_drop_reason why = SRD_DROP_REASONS;
  srd_ssize n;
  uint32_t i;

  memset(&d, 0, sizeof(d));
  d.seq = 7;
  d.msg_id = 9;
  d.tx_count = 1;
  d.ack = a;
  n = srd_pkt_encode_data(buf, sizeof(buf), &c, &d);
  CHECK(n > 0 &&
        (size_t)n == srd_pkt_data_hdrlen(c.flags) + srd_pkt_piggy_len(a));
  CHECK(srd_pkt_decode(&pkt, buf, (size_t)n, (size_t)n, &why) == 0);
  CHECK(pkt.c.type == SRD_PKT_DATA && pkt.u.data.ack != NULL);
  CHECK(pkt.u.data.ack->largest == a->largest);
  CHECK(pkt.u.data.ack->first_range == a->first_range);
  CHECK(pkt.u.data.ack->n_ranges == a->n_ranges &&
        pkt.u.data.ack->n_echo == a->n_echo && pkt.u.data.ack->n_nack == 0);
  for (i = 0; i < a->n_ranges; ++i) {
    CHECK(pkt.u.data.ack->ranges[i].gap == a->ranges[i].gap);
    CHECK(pkt.u.data.ack->ranges[i].len == a->ranges[i].len);
  }
  for (i = 0; i < a->n_echo; ++i) {
    CHECK(pkt.u.data.ack->echo[i].seq == a->echo[i].seq);
    CHECK(pkt.u.data.ack->echo[i].tx_ts == a->echo[i].tx_ts);
    CHECK(pkt.u.data.ack->echo[i].hold_ns == a->echo[i].hold_ns);
    CHECK(pkt.u.data.ack->echo[i].path == a->echo[i].path);
  }
}

static void check_due(const srd_acktr *at, const model *m, srd_tstamp now) {
  CHECK(srd_acktr_ack_due(at, now, m->ack_freq, ACK_DELAY) ==
        model_due(m, now));
  CHECK(srd_acktr_deadline(at, m->ack_freq, ACK_DELAY) == model_deadline(m));
}

/* build_and_verify builds an ACK of at most |max_ranges| ranges and
   checks it, number by number while *budget lasts. */
static void build_and_verify(srd_acktr *at, model *m, srd_tstamp now,
                             uint32_t max_ranges, uint64_t *budget) {
  srd_pkt_ack a;
  uint64_t cost;

  if (max_ranges == SRD_ACK_MAX_RANGES) {
    srd_acktr_build(at, &a, now);
  } else {
    srd_acktr_build_max(at, &a, now, max_ranges);
  }
  cost = (uint64_t)m->n_live * 2 + 1;
  verify_ack(m, &a, now, max_ranges, cost <= *budget);
  *budget -= srd_min(cost, *budget);
  roundtrip(&a, (uint16_t)(now % SRD_MAX_PATHS));
  if (!a.empty && a.n_nack == 0 && a.n_ranges <= SRD_PIGGY_MAX_RANGES &&
      a.n_echo <= SRD_PIGGY_MAX_ECHO) {
    piggy_roundtrip(&a);
  }
  m->n_echo = 0;
  m->n_nack -= a.n_nack;
  m->nack_first += a.n_nack;
  m->unacked = 0;
  /* NACKs that did not fit keep the next ACK due. */
  m->immediate = m->n_nack > 0;
}

/* init_failing checks that srd_acktr_init reports the failed allocation
   and keeps nothing. */
static void init_failing(uint32_t window, int fail_at) {
  failing f = {0, fail_at, 0};
  srd_mem mem = {&f, f_malloc, f_free, f_calloc};
  srd_acktr at;

  CHECK(srd_acktr_init(&at, window, &mem) == SRD_ERR_NOMEM);
  CHECK(f.live == 0 && f.calls == fail_at);
}

/* slide says whether recording |seq| keeps the window's slides within
   the budget, and counts them in *slid. */
static int slide(const model *m, uint32_t seq, uint64_t *slid) {
  uint32_t adv;

  if (!m->have_largest || !srd_seq_gt(seq, m->largest)) {
    return 1;
  }
  adv = srd_min(seq - m->largest, m->window);
  if (*slid + adv > (uint64_t)SLIDE_WINDOWS * m->window + BUDGET_FLOOR) {
    return 0;
  }
  *slid += adv;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint32_t freqs[4] = {4, 1, 2, 16};
  static model m;
  reader r = {data, size};
  srd_acktr at;
  srd_tstamp now = 0;
  uint32_t base, ops = 0;
  uint64_t slid = 0, in_runs = 0, budget;
  uint8_t b0 = rd8(&r);

  m.window = b0 < 224 ? 64u << (b0 % 7) : 8192u << (b0 % 4);
  m.ack_freq = freqs[(b0 >> 3) & 3];
  model_reset(&m);
  budget = (uint64_t)VERIFY_WINDOWS * m.window + BUDGET_FLOOR;
  base = 0xFFFFFF00u | rd8(&r);
  CHECK(srd_acktr_init(&at, m.window, srd_mem_default()) == 0);

  while (r.left > 0 && ops++ < MAX_OPS) {
    uint8_t op = rd8(&r);
    uint32_t seq;
    int res, want;

    switch (op % 12) {
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
      if (res == SRD_ACKTR_NEW && slide(&m, seq, &slid)) {
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
        srd_pkt_nack *n = &m.nack[(m.nack_first + m.n_nack) % m.window];
        n->seq = nseq;
        n->msg_id = msg_id;
        n->reason = reason;
        ++m.n_nack;
      }
      m.immediate = 1;
      break;
    }
    case 7: { /* advance the clock: ns to about 4 s */
      uint16_t d = rd16(&r);
      now += (d & 0x8000u) ? (srd_duration)(d & 0x7FFFu) * 128 * SRD_US
                           : (srd_duration)d;
      break;
    }
    case 8: /* build an ACK */
      build_and_verify(&at, &m, now, SRD_ACK_MAX_RANGES, &budget);
      break;
    case 9: /* reset, rarely; or start again after failed allocations */
      switch (rd8(&r) & 7) {
      case 0:
        srd_acktr_reset(&at);
        model_reset(&m);
        break;
      case 1:
        init_failing(m.window, 1);
        init_failing(m.window, 2);
        srd_acktr_fini(&at);
        CHECK(srd_acktr_init(&at, m.window, srd_mem_default()) == 0);
        model_reset(&m);
        break;
      default:
        break;
      }
      break;
    case 10: { /* record a run of consecutive numbers from the base up */
      uint32_t n = rd16(&r) % m.window + 1u, i;
      uint16_t path = (uint16_t)(rd8(&r) % SRD_MAX_PATHS);
      if (in_runs + n > (uint64_t)RUN_WINDOWS * m.window) {
        break;
      }
      in_runs += n;
      for (i = 0; i < n; ++i, ++base) {
        res = srd_acktr_check(&at, base);
        CHECK(res == model_check(&m, base));
        if (res == SRD_ACKTR_NEW && slide(&m, base, &slid)) {
          srd_acktr_record(&at, base, i, path, now);
          model_record(&m, base, i, path, now);
        }
      }
      break;
    }
    default: /* 11: an ACK of a few ranges, as one riding on data */
      build_and_verify(&at, &m, now, rd8(&r) % (SRD_ACK_MAX_RANGES + 1),
                       &budget);
      break;
    }
    check_due(&at, &m, now);
  }
  build_and_verify(&at, &m, now, SRD_ACK_MAX_RANGES, &budget);
  check_due(&at, &m, now);
  srd_acktr_fini(&at);
  return 0;
}
