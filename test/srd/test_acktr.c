/*
 * test_acktr.c: the receive-side ack tracker: NEW/DUP/OLD checks, the
 * sliding window, ACK ranges for contiguous, holey and wrapping patterns
 * (checked by expanding the built ACK back into packet numbers), the echo
 * ring, NACKs, when an ACK is due, and a seeded randomized comparison
 * against a plain model.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "srd_acktr.h"
#include "srd_macro.h"
#include "srd_pkt.h"

/* expand_ack writes every packet number |a| acknowledges into |out|
   (largest first) and returns how many; at most |cap|. */
static size_t expand_ack(const srd_pkt_ack *a, uint32_t *out, size_t cap) {
  size_t n = 0;
  uint32_t hi = a->largest, lo = hi - a->first_range, s, i;

  if (a->empty) {
    assert_true(a->largest == 0 && a->first_range == 0 && a->n_ranges == 0);
    return 0;
  }
  for (s = hi;; --s) {
    assert_true(n < cap);
    out[n++] = s;
    if (s == lo) {
      break;
    }
  }
  for (i = 0; i < a->n_ranges; ++i) {
    assert_true(a->ranges[i].gap >= 1 && a->ranges[i].len >= 1);
    hi = lo - a->ranges[i].gap - 1;
    lo = hi - (a->ranges[i].len - 1u);
    for (s = hi;; --s) {
      assert_true(n < cap);
      out[n++] = s;
      if (s == lo) {
        break;
      }
    }
  }
  return n;
}

/* roundtrip encodes |a| as an ACK and decodes it again: what the tracker
   builds must pass the decoder's checks unchanged. */
static void roundtrip(const srd_pkt_ack *a) {
  static uint8_t wire[SRD_PKT_ACK_MAX_LEN];
  srd_pkt_common c;
  srd_pkt pkt;
  srd_drop_reason why = SRD_DROP_REASONS;
  srd_ssize n;
  uint32_t i;

  memset(&c, 0, sizeof(c));
  c.src_conn = 7;
  c.dst_conn = 9;
  c.path = 3;
  n = srd_pkt_encode_ack(wire, sizeof(wire), &c, a);
  tu_assert(n == (srd_ssize)srd_pkt_ack_len(a));
  tu_assert(srd_pkt_decode(&pkt, wire, (size_t)n, (size_t)n, &why) == 0);
  tu_assert(pkt.c.type == SRD_PKT_ACK);
  tu_assert(pkt.u.ack.empty == a->empty);
  tu_assert(pkt.u.ack.largest == a->largest);
  tu_assert(pkt.u.ack.first_range == a->first_range);
  tu_assert(pkt.u.ack.n_ranges == a->n_ranges);
  tu_assert(pkt.u.ack.n_echo == a->n_echo);
  tu_assert(pkt.u.ack.n_nack == a->n_nack);
  for (i = 0; i < a->n_ranges; ++i) {
    tu_assert(pkt.u.ack.ranges[i].gap == a->ranges[i].gap);
    tu_assert(pkt.u.ack.ranges[i].len == a->ranges[i].len);
  }
  for (i = 0; i < a->n_echo; ++i) {
    tu_assert(pkt.u.ack.echo[i].tx_ts == a->echo[i].tx_ts);
    tu_assert(pkt.u.ack.echo[i].seq == a->echo[i].seq);
    tu_assert(pkt.u.ack.echo[i].hold_ns == a->echo[i].hold_ns);
    tu_assert(pkt.u.ack.echo[i].path == a->echo[i].path);
  }
  for (i = 0; i < a->n_nack; ++i) {
    tu_assert(pkt.u.ack.nack[i].seq == a->nack[i].seq);
    tu_assert(pkt.u.ack.nack[i].msg_id == a->nack[i].msg_id);
    tu_assert(pkt.u.ack.nack[i].reason == a->nack[i].reason);
  }
}

static void init(srd_acktr *at, uint32_t window) {
  assert_int_equal(srd_acktr_init(at, window, srd_mem_default()), 0);
}

static void rec(srd_acktr *at, uint32_t seq, srd_tstamp now) {
  assert_int_equal(srd_acktr_check(at, seq), SRD_ACKTR_NEW);
  srd_acktr_record(at, seq, 1000 + seq, (uint16_t)(seq % SRD_MAX_PATHS), now);
  assert_int_equal(srd_acktr_check(at, seq), SRD_ACKTR_DUP);
}

/* build_expand builds an ACK, round-trips it through the codec, and
   expands it into |out|. */
static size_t build_expand(srd_acktr *at, srd_pkt_ack *a, uint32_t *out,
                           size_t cap, srd_tstamp now) {
  srd_acktr_build(at, a, now);
  roundtrip(a);
  return expand_ack(a, out, cap);
}

static void test_acktr_check_record(void **state) {
  srd_acktr at;
  (void)state;

  init(&at, 64);
  /* Nothing recorded: everything is new. */
  assert_int_equal(srd_acktr_check(&at, 0), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 0xFFFFFFFFu), SRD_ACKTR_NEW);
  rec(&at, 100, 1);
  assert_int_equal(at.largest, 100);
  assert_int_equal(srd_acktr_check(&at, 101), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 99), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 100 + 1000), SRD_ACKTR_NEW);
  /* The window reaches 63 below the largest. */
  assert_int_equal(srd_acktr_check(&at, 100 - 63), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 100 - 64), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 0), SRD_ACKTR_OLD);
  /* Below the largest but inside the window: recorded out of order. */
  rec(&at, 37, 2);
  assert_int_equal(at.largest, 100);
  rec(&at, 99, 3);
  assert_int_equal(srd_acktr_check(&at, 98), SRD_ACKTR_NEW);
  /* A far-away number half the space behind counts as ahead. */
  assert_int_equal(srd_acktr_check(&at, 100 + 0x7FFFFFFFu), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 100 - 0x7FFFFFFFu), SRD_ACKTR_OLD);
  srd_acktr_fini(&at);
}

static void test_acktr_window_slides(void **state) {
  srd_acktr at;
  uint32_t w = 128, alias;
  (void)state;

  init(&at, w);
  rec(&at, 10, 0);
  rec(&at, 11, 0);
  /* Advance so that 10 is the oldest tracked number. */
  rec(&at, 10 + w - 1, 0);
  assert_int_equal(srd_acktr_check(&at, 10), SRD_ACKTR_DUP);
  assert_int_equal(srd_acktr_check(&at, 11), SRD_ACKTR_DUP);
  /* One more: 10 falls out, 11 is the oldest. */
  rec(&at, 10 + w, 0);
  assert_int_equal(srd_acktr_check(&at, 10), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 11), SRD_ACKTR_DUP);
  /* The numbers the window slid over are new, even those whose bit slot
     held an old recorded number (10 + w shares 10's slot, 11 + w 11's). */
  assert_int_equal(srd_acktr_check(&at, 11 + w), SRD_ACKTR_NEW);
  rec(&at, 11 + w + 5, 0);
  assert_int_equal(srd_acktr_check(&at, 11 + w), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 11), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 12 + w), SRD_ACKTR_NEW);

  /* A jump of more than the window forgets everything. */
  rec(&at, 5000, 0);
  assert_int_equal(srd_acktr_check(&at, 10 + w), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 5000 - w), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 5000 - w + 1), SRD_ACKTR_NEW);
  /* A number inside the new window that shares the bit slot of 11 + w +
     5, recorded before the jump, is new. */
  alias = 5000 - w + 1;
  while ((alias & (w - 1)) != ((11 + w + 5) & (w - 1))) {
    ++alias;
  }
  assert_int_equal(srd_acktr_check(&at, alias), SRD_ACKTR_NEW);

  /* Reset forgets the largest and every bit. */
  srd_acktr_reset(&at);
  assert_false(at.have_largest);
  assert_int_equal(srd_acktr_check(&at, 5000), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 0), SRD_ACKTR_NEW);
  rec(&at, 3, 0);
  assert_int_equal(srd_acktr_check(&at, 5000), SRD_ACKTR_NEW);
  srd_acktr_fini(&at);
}

static void test_acktr_build_contiguous(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  static uint32_t out[70000];
  uint32_t s;
  size_t n, i;
  (void)state;

  init(&at, 1024);
  for (s = 1000; s < 1010; ++s) {
    rec(&at, s, s);
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 2000);
  assert_int_equal(a.largest, 1009);
  assert_int_equal(a.first_range, 9);
  assert_int_equal(a.n_ranges, 0);
  assert_int_equal(n, 10);
  for (i = 0; i < n; ++i) {
    assert_int_equal(out[i], 1009 - i);
  }
  /* Recorded out of order, the same. */
  srd_acktr_reset(&at);
  for (s = 0; s < 10; ++s) {
    rec(&at, 1000 + (s * 7) % 10, s);
  }
  srd_acktr_build(&at, &a, 100);
  roundtrip(&a);
  assert_int_equal(a.largest, 1009);
  assert_int_equal(a.first_range, 9);
  assert_int_equal(a.n_ranges, 0);
  /* One packet alone. */
  srd_acktr_reset(&at);
  rec(&at, 0, 0);
  srd_acktr_build(&at, &a, 0);
  assert_int_equal(a.largest, 0);
  assert_int_equal(a.first_range, 0);
  assert_int_equal(a.n_ranges, 0);
  srd_acktr_fini(&at);

  /* A whole window of the largest size: the first range spans it all. */
  init(&at, 65536);
  for (s = 0; s < 70000; ++s) {
    srd_acktr_record(&at, s, 0, 0, 0);
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 0);
  assert_int_equal(a.largest, 69999);
  assert_int_equal(a.first_range, 65535);
  assert_int_equal(a.n_ranges, 0);
  assert_int_equal(n, 65536);
  assert_int_equal(out[n - 1], 69999 - 65535);
  srd_acktr_fini(&at);
}

static void test_acktr_build_holes(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  static const uint32_t got[] = {1, 2, 3, 6, 7, 10};
  uint32_t out[256];
  size_t n, i;
  (void)state;

  init(&at, 64);
  for (i = 0; i < srd_arraylen(got); ++i) {
    rec(&at, got[i], i);
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 10);
  assert_int_equal(a.largest, 10);
  assert_int_equal(a.first_range, 0);
  assert_int_equal(a.n_ranges, 2);
  assert_int_equal(a.ranges[0].gap, 2); /* 9, 8 */
  assert_int_equal(a.ranges[0].len, 2); /* 7, 6 */
  assert_int_equal(a.ranges[1].gap, 2); /* 5, 4 */
  assert_int_equal(a.ranges[1].len, 3); /* 3, 2, 1 */
  assert_int_equal(n, srd_arraylen(got));
  for (i = 0; i < n; ++i) {
    assert_int_equal(out[i], got[srd_arraylen(got) - 1 - i]);
  }

  /* A hole right below the largest, and a run crossing a 64-bit word of
     the bitmap. */
  srd_acktr_fini(&at);
  init(&at, 256);
  for (i = 50; i < 150; ++i) {
    rec(&at, (uint32_t)i, 0);
  }
  rec(&at, 200, 0);
  n = build_expand(&at, &a, out, srd_arraylen(out), 10);
  (void)n;
  assert_int_equal(a.largest, 200);
  assert_int_equal(a.first_range, 0);
  assert_int_equal(a.n_ranges, 1);
  assert_int_equal(a.ranges[0].gap, 50);
  assert_int_equal(a.ranges[0].len, 100);
  srd_acktr_fini(&at);
}

static void test_acktr_build_many_holes(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t out[256], s;
  size_t n, i;
  (void)state;

  /* Every other packet: more holes than an ACK has ranges.  The ACK
     keeps the newest: the first range and SRD_ACK_MAX_RANGES below. */
  init(&at, 256);
  for (s = 0; s <= 200; s += 2) {
    rec(&at, s, s);
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 300);
  assert_int_equal(a.largest, 200);
  assert_int_equal(a.first_range, 0);
  assert_int_equal(a.n_ranges, SRD_ACK_MAX_RANGES);
  assert_int_equal(n, SRD_ACK_MAX_RANGES + 1);
  for (i = 0; i < a.n_ranges; ++i) {
    assert_int_equal(a.ranges[i].gap, 1);
    assert_int_equal(a.ranges[i].len, 1);
  }
  for (i = 0; i < n; ++i) {
    assert_int_equal(out[i], 200 - 2 * i);
  }
  /* Exactly as many holes as ranges: all of them fit. */
  srd_acktr_reset(&at);
  for (s = 0; s <= 2 * SRD_ACK_MAX_RANGES; s += 2) {
    rec(&at, 1000 + s, s);
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 300);
  assert_int_equal(a.n_ranges, SRD_ACK_MAX_RANGES);
  assert_int_equal(n, SRD_ACK_MAX_RANGES + 1);
  assert_int_equal(out[n - 1], 1000);
  srd_acktr_fini(&at);
}

static void test_acktr_build_wrap(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t out[128], s, want[128];
  size_t n, nw = 0, i;
  (void)state;

  init(&at, 128);
  /* 0xFFFFFFE0 .. 0x0000001F, with holes on both sides of the wrap. */
  for (s = 0xFFFFFFE0u; s != 0x20u; ++s) {
    if (s == 0xFFFFFFFFu || s == 0 || s == 5 || s == 0xFFFFFFF0u ||
        s == 0xFFFFFFF1u) {
      continue;
    }
    rec(&at, s, 0);
  }
  for (s = 0x1Fu; s != 0xFFFFFFDFu; --s) {
    if (!(s == 0xFFFFFFFFu || s == 0 || s == 5 || s == 0xFFFFFFF0u ||
          s == 0xFFFFFFF1u)) {
      want[nw++] = s;
    }
  }
  n = build_expand(&at, &a, out, srd_arraylen(out), 0);
  assert_int_equal(a.largest, 0x1F);
  assert_int_equal(a.first_range, 0x1F - 6);
  assert_int_equal(a.n_ranges, 3);
  assert_int_equal(a.ranges[0].gap, 1); /* 5 */
  assert_int_equal(a.ranges[0].len, 4); /* 4..1 */
  assert_int_equal(a.ranges[1].gap, 2); /* 0, 0xFFFFFFFF */
  assert_int_equal(a.ranges[1].len, 0xFFFFFFFEu - 0xFFFFFFF2u + 1);
  assert_int_equal(a.ranges[2].gap, 2);
  assert_int_equal(a.ranges[2].len, 0xFFFFFFEFu - 0xFFFFFFE0u + 1);
  assert_int_equal(n, nw);
  for (i = 0; i < n; ++i) {
    assert_int_equal(out[i], want[i]);
  }
  /* The window slides across the wrap too. */
  assert_int_equal(srd_acktr_check(&at, 0x1Fu - 127), SRD_ACKTR_NEW);
  assert_int_equal(srd_acktr_check(&at, 0x1Fu - 128), SRD_ACKTR_OLD);
  assert_int_equal(srd_acktr_check(&at, 0xFFFFFFE0u), SRD_ACKTR_DUP);
  assert_int_equal(srd_acktr_check(&at, 0xFFFFFFFFu), SRD_ACKTR_NEW);
  srd_acktr_fini(&at);
}

static void test_acktr_build_window_edge(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t out[128];
  size_t n;
  (void)state;

  /* Recorded packets fall out of the ACK as the window passes them. */
  init(&at, 64);
  rec(&at, 1, 0);
  rec(&at, 2, 0);
  rec(&at, 64, 0); /* 1 is the oldest tracked */
  n = build_expand(&at, &a, out, srd_arraylen(out), 0);
  assert_int_equal(n, 3);
  assert_int_equal(a.n_ranges, 1);
  assert_int_equal(a.ranges[0].gap, 61);
  assert_int_equal(a.ranges[0].len, 2);
  rec(&at, 65, 0); /* 1 falls out, 2 is the oldest */
  n = build_expand(&at, &a, out, srd_arraylen(out), 0);
  assert_int_equal(n, 3);
  assert_int_equal(out[2], 2);
  rec(&at, 66, 0); /* 2 falls out */
  n = build_expand(&at, &a, out, srd_arraylen(out), 0);
  assert_int_equal(n, 3);
  assert_int_equal(a.first_range, 2);
  assert_int_equal(a.n_ranges, 0);
  srd_acktr_fini(&at);
}

static void test_acktr_build_keeps_bitmap(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t out[64];
  (void)state;

  /* Building clears what is pending, not what was received: the next ACK
     still acknowledges everything in the window. */
  init(&at, 64);
  rec(&at, 5, 0);
  rec(&at, 7, 0);
  srd_acktr_build(&at, &a, 0);
  rec(&at, 9, 0);
  assert_int_equal(build_expand(&at, &a, out, srd_arraylen(out), 0), 3);
  assert_int_equal(a.n_echo, 1);
  assert_int_equal(build_expand(&at, &a, out, srd_arraylen(out), 0), 3);
  assert_int_equal(a.n_echo, 0);
  assert_int_equal(srd_acktr_check(&at, 5), SRD_ACKTR_DUP);
  srd_acktr_fini(&at);
}

static void test_acktr_echo_ring(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t i, total = SRD_ACK_MAX_ECHO + 4;
  (void)state;

  init(&at, 64);
  for (i = 0; i < total; ++i) {
    srd_acktr_record(&at, 100 + i, 5000 + i, (uint16_t)(i % SRD_MAX_PATHS),
                     10 * i);
  }
  srd_acktr_build(&at, &a, 1000);
  roundtrip(&a);
  /* The newest SRD_ACK_MAX_ECHO, oldest first, with their hold times. */
  assert_int_equal(a.n_echo, SRD_ACK_MAX_ECHO);
  for (i = 0; i < SRD_ACK_MAX_ECHO; ++i) {
    uint32_t k = total - SRD_ACK_MAX_ECHO + i;
    assert_true(a.echo[i].tx_ts == 5000 + k);
    assert_int_equal(a.echo[i].seq, 100 + k); /* it acknowledges its packet */
    assert_int_equal(a.echo[i].hold_ns, 1000 - 10 * k);
    assert_int_equal(a.echo[i].path, k % SRD_MAX_PATHS);
  }
  /* Emptied by the build. */
  srd_acktr_build(&at, &a, 2000);
  assert_int_equal(a.n_echo, 0);

  /* Fewer than the maximum: all of them; the ring restarts at the head. */
  for (i = 0; i < 3; ++i) {
    srd_acktr_record(&at, 200 + i, 7000 + i, 9, 3000);
  }
  srd_acktr_build(&at, &a, 3000 + 5);
  assert_int_equal(a.n_echo, 3);
  for (i = 0; i < 3; ++i) {
    assert_true(a.echo[i].tx_ts == 7000 + i);
    assert_int_equal(a.echo[i].hold_ns, 5);
    assert_int_equal(a.echo[i].path, 9);
  }

  /* A hold beyond 32 bits saturates. */
  srd_acktr_record(&at, 300, 1, 0, 0);
  srd_acktr_build(&at, &a, 10 * SRD_S);
  assert_int_equal(a.n_echo, 1);
  assert_int_equal(a.echo[0].hold_ns, UINT32_MAX);
  srd_acktr_fini(&at);
}

static void test_acktr_nack(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t i;
  (void)state;

  init(&at, 64);
  rec(&at, 10, 0);
  srd_acktr_build(&at, &a, 0);
  assert_false(srd_acktr_ack_due(&at, 0, 1000, SRD_S));

  srd_acktr_add_nack(&at, 11, 3, SRD_NACK_RNR);
  assert_true(at.immediate);
  assert_true(srd_acktr_ack_due(&at, 0, 1000, SRD_S));
  assert_true(srd_acktr_deadline(&at, 1000, SRD_S) == SRD_TSTAMP_NONE);
  /* More than one ACK carries: the first SRD_ACK_MAX_NACK, in order. */
  for (i = 1; i < SRD_ACK_MAX_NACK + 3; ++i) {
    srd_acktr_add_nack(&at, 11 + i, 3 + i,
                       i % 2 ? SRD_NACK_TRUNCATED : SRD_NACK_RNR);
  }
  srd_acktr_build(&at, &a, 0);
  roundtrip(&a);
  assert_false(a.empty);
  assert_int_equal(a.n_nack, SRD_ACK_MAX_NACK);
  for (i = 0; i < SRD_ACK_MAX_NACK; ++i) {
    assert_int_equal(a.nack[i].seq, 11 + i);
    assert_int_equal(a.nack[i].msg_id, 3 + i);
    assert_int_equal(a.nack[i].reason,
                     i % 2 ? SRD_NACK_TRUNCATED : SRD_NACK_RNR);
  }
  /* A NACK does not record the packet. */
  assert_int_equal(srd_acktr_check(&at, 11), SRD_ACKTR_NEW);
  assert_int_equal(a.largest, 10);
  /* The rest keep the next ACK due, and go in it. */
  assert_true(srd_acktr_ack_due(&at, 0, 1000, SRD_S));
  srd_acktr_build(&at, &a, 0);
  roundtrip(&a);
  assert_int_equal(a.n_nack, 3);
  for (i = 0; i < 3; ++i) {
    assert_int_equal(a.nack[i].seq, 11 + SRD_ACK_MAX_NACK + i);
  }
  /* Then nothing is pending. */
  assert_false(at.immediate);
  assert_false(srd_acktr_ack_due(&at, 0, 1000, SRD_S));
  srd_acktr_build(&at, &a, 0);
  assert_int_equal(a.n_nack, 0);
  srd_acktr_fini(&at);
}

static void test_acktr_nack_queue_bound(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t i, got = 0, builds = 0;
  (void)state;

  /* The queue holds a window's worth; the overflow is dropped (the
     sender's loss detection covers it), and draining takes one ACK per
     SRD_ACK_MAX_NACK. */
  init(&at, 64);
  rec(&at, 1, 0);
  for (i = 0; i < 64 + 10; ++i) {
    srd_acktr_add_nack(&at, 100 + i, i, SRD_NACK_RNR);
  }
  while (srd_acktr_ack_due(&at, 0, 1000, SRD_S)) {
    srd_acktr_build(&at, &a, 0);
    roundtrip(&a);
    for (i = 0; i < a.n_nack; ++i) {
      assert_int_equal(a.nack[i].seq, 100 + got + i);
    }
    got += a.n_nack;
    ++builds;
    assert_true(builds <= 64);
  }
  assert_int_equal(got, 64);
  assert_int_equal(builds, 64 / SRD_ACK_MAX_NACK);
  /* The ring wraps: queue more after the head has moved. */
  for (i = 0; i < 60; ++i) {
    srd_acktr_add_nack(&at, 1000 + i, i, SRD_NACK_TRUNCATED);
  }
  got = 0;
  while (srd_acktr_ack_due(&at, 0, 1000, SRD_S)) {
    srd_acktr_build(&at, &a, 0);
    for (i = 0; i < a.n_nack; ++i) {
      assert_int_equal(a.nack[i].seq, 1000 + got + i);
      assert_int_equal(a.nack[i].reason, SRD_NACK_TRUNCATED);
    }
    got += a.n_nack;
  }
  assert_int_equal(got, 60);
  srd_acktr_fini(&at);
}

static void test_acktr_nack_before_any_packet(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  uint32_t out[8];
  (void)state;

  /* A session whose first packet is refused: the ACK carries the NACK
     and acknowledges no packet at all (not packet 0). */
  init(&at, 64);
  srd_acktr_add_nack(&at, 0xFFFFFFF0u, 7, SRD_NACK_RNR);
  assert_true(srd_acktr_ack_due(&at, 0, 1000, SRD_S));
  assert_int_equal(build_expand(&at, &a, out, srd_arraylen(out), 0), 0);
  assert_true(a.empty);
  assert_int_equal(a.largest, 0);
  assert_int_equal(a.first_range, 0);
  assert_int_equal(a.n_ranges, 0);
  assert_int_equal(a.n_nack, 1);
  assert_int_equal(a.nack[0].seq, 0xFFFFFFF0u);
  assert_int_equal(srd_acktr_check(&at, 0), SRD_ACKTR_NEW);
  /* Once a packet is recorded, ACKs are not empty. */
  rec(&at, 0xFFFFFFF1u, 0);
  assert_int_equal(build_expand(&at, &a, out, srd_arraylen(out), 0), 1);
  assert_false(a.empty);
  assert_int_equal(out[0], 0xFFFFFFF1u);
  /* After a reset (a new session), empty again. */
  srd_acktr_reset(&at);
  srd_acktr_add_nack(&at, 5, 1, SRD_NACK_TRUNCATED);
  assert_int_equal(build_expand(&at, &a, out, srd_arraylen(out), 0), 0);
  assert_true(a.empty);
  assert_int_equal(a.n_nack, 1);
  srd_acktr_fini(&at);
}

static void test_acktr_ack_due(void **state) {
  srd_acktr at;
  srd_pkt_ack a;
  srd_tstamp t = 0;
  const uint32_t freq = 3;
  const srd_duration delay = 1000;
  (void)state;

  init(&at, 64);
  assert_false(srd_acktr_ack_due(&at, t, freq, delay));
  assert_true(srd_acktr_deadline(&at, freq, delay) == SRD_TSTAMP_NONE);

  t = 500;
  rec(&at, 1, t);
  assert_false(srd_acktr_ack_due(&at, t, freq, delay));
  /* The delay counts from the first unacknowledged packet. */
  assert_true(srd_acktr_deadline(&at, freq, delay) == 1500);
  t = 900;
  rec(&at, 2, t);
  assert_true(srd_acktr_deadline(&at, freq, delay) == 1500);
  assert_false(srd_acktr_ack_due(&at, 1499, freq, delay));
  assert_true(srd_acktr_ack_due(&at, 1500, freq, delay));
  /* With ack_freq 2 the second packet is enough. */
  assert_true(srd_acktr_ack_due(&at, t, 2, delay));
  assert_true(srd_acktr_deadline(&at, 2, delay) == SRD_TSTAMP_NONE);
  /* The third reaches ack_freq 3. */
  rec(&at, 3, t);
  assert_true(srd_acktr_ack_due(&at, t, freq, delay));
  assert_true(srd_acktr_deadline(&at, freq, delay) == SRD_TSTAMP_NONE);

  /* Building clears the count; the next packet starts a new delay. */
  srd_acktr_build(&at, &a, t);
  assert_false(srd_acktr_ack_due(&at, 100000, freq, delay));
  assert_true(srd_acktr_deadline(&at, freq, delay) == SRD_TSTAMP_NONE);
  t = 5000;
  rec(&at, 4, t);
  assert_true(srd_acktr_deadline(&at, freq, delay) == 6000);
  assert_false(srd_acktr_ack_due(&at, 5999, freq, delay));
  assert_true(srd_acktr_ack_due(&at, 6000, freq, delay));
  /* ack_freq 1: every packet is acknowledged at once. */
  assert_true(srd_acktr_ack_due(&at, t, 1, delay));

  /* A duplicate asks for an immediate ACK through |immediate|. */
  srd_acktr_build(&at, &a, t);
  at.immediate = 1;
  assert_true(srd_acktr_ack_due(&at, t, freq, delay));
  assert_true(srd_acktr_deadline(&at, freq, delay) == SRD_TSTAMP_NONE);
  srd_acktr_build(&at, &a, t);
  assert_false(srd_acktr_ack_due(&at, t, freq, delay));
  srd_acktr_fini(&at);
}

/* The randomized comparison: a model set of recorded numbers. */
#define SPAN 3000

static uint32_t prop_runs(uint32_t dflt) {
  const char *s = getenv("SRD_PROP_RUNS");
  long v = s ? strtol(s, NULL, 0) : 0;

  return v > 0 ? (uint32_t)v : dflt;
}

static void check_against_model(srd_acktr *at, const uint8_t *got,
                                uint32_t base, uint32_t window,
                                uint32_t largest, uint32_t *since_build,
                                srd_tstamp now) {
  static uint32_t out[65536];
  srd_pkt_ack a;
  size_t n, i;
  uint32_t lowest, off, expected = 0;

  srd_acktr_build(at, &a, now);
  roundtrip(&a);
  tu_assert(!a.empty);
  tu_assert(a.largest == largest);
  n = expand_ack(&a, out, srd_arraylen(out));
  /* Everything acknowledged was recorded and is inside the window,
     listed once, in descending order. */
  for (i = 0; i < n; ++i) {
    off = out[i] - base;
    tu_assert(off < SPAN);
    tu_assert(got[off]);
    tu_assert(largest - out[i] < window);
    if (i > 0) {
      tu_assert(srd_seq_lt(out[i], out[i - 1]));
    }
  }
  /* Everything recorded inside the window is acknowledged, down to the
     lowest range when the ranges ran out. */
  lowest =
      a.n_ranges < SRD_ACK_MAX_RANGES ? largest - (window - 1) : out[n - 1];
  for (off = 0; off < SPAN; ++off) {
    uint32_t s = base + off;
    if (got[off] && srd_seq_le(s, largest) && largest - s < window &&
        srd_seq_ge(s, lowest)) {
      ++expected;
    }
  }
  tu_assert(n == expected);
  /* The echoes of the packets recorded since the last ACK, the newest
     SRD_ACK_MAX_ECHO of them. */
  tu_assert(a.n_echo == srd_min(*since_build, SRD_ACK_MAX_ECHO));
  *since_build = 0;
}

static void test_acktr_random(void **state) {
  static const uint32_t windows[] = {64, 128, 256, 1024, 4096};
  static uint8_t got[SPAN];
  uint64_t s = tu_seed("test_acktr_random");
  uint32_t runs = prop_runs(400), r;
  (void)state;

  for (r = 0; r < runs; ++r) {
    srd_acktr at;
    uint32_t window = windows[tu_rand(&s) % srd_arraylen(windows)];
    /* Start anywhere, often just below the wrap. */
    uint32_t base = tu_rand(&s) % 2 ? (uint32_t)(0u - 1 - tu_rand(&s) % SPAN)
                                    : (uint32_t)tu_rand(&s);
    uint32_t density = 1 + (uint32_t)(tu_rand(&s) % 100);
    uint32_t ops = 1 + (uint32_t)(tu_rand(&s) % (2 * SPAN));
    uint32_t largest = 0, since_build = 0, i;
    int have = 0;
    srd_tstamp t = 0;

    init(&at, window);
    memset(got, 0, sizeof(got));
    for (i = 0; i < ops; ++i) {
      /* Mostly forward, with reordering of up to a window and a bit. */
      uint32_t off;
      uint32_t seq;
      int want, c;
      if (have && tu_rand(&s) % 4 != 0) {
        uint32_t back = (uint32_t)(tu_rand(&s) % (window + window / 4));
        off = largest - base + 8 - (uint32_t)(tu_rand(&s) % 8);
        off = off >= back ? off - back : 0;
      } else {
        off = (uint32_t)(tu_rand(&s) % SPAN);
      }
      if (off >= SPAN) {
        off = SPAN - 1;
      }
      seq = base + off;
      if (!have || srd_seq_gt(seq, largest)) {
        want = SRD_ACKTR_NEW;
      } else if (largest - seq >= window) {
        want = SRD_ACKTR_OLD;
      } else {
        want = got[off] ? SRD_ACKTR_DUP : SRD_ACKTR_NEW;
      }
      c = srd_acktr_check(&at, seq);
      tu_assert(c == want);
      /* Record a fraction of the new ones (the others are "lost"). */
      if (c == SRD_ACKTR_NEW && tu_rand(&s) % 100 < density) {
        t += 1 + tu_rand(&s) % 1000;
        srd_acktr_record(&at, seq, t, (uint16_t)(seq % SRD_MAX_PATHS), t);
        got[off] = 1;
        ++since_build;
        if (!have || srd_seq_gt(seq, largest)) {
          largest = seq;
          have = 1;
        }
        tu_assert(at.largest == largest);
      }
      if (have && tu_rand(&s) % 64 == 0) {
        check_against_model(&at, got, base, window, largest, &since_build, t);
      }
    }
    if (have) {
      check_against_model(&at, got, base, window, largest, &since_build, t);
    }
    srd_acktr_fini(&at);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_acktr_check_record),
      cmocka_unit_test(test_acktr_window_slides),
      cmocka_unit_test(test_acktr_build_contiguous),
      cmocka_unit_test(test_acktr_build_holes),
      cmocka_unit_test(test_acktr_build_many_holes),
      cmocka_unit_test(test_acktr_build_wrap),
      cmocka_unit_test(test_acktr_build_window_edge),
      cmocka_unit_test(test_acktr_build_keeps_bitmap),
      cmocka_unit_test(test_acktr_echo_ring),
      cmocka_unit_test(test_acktr_nack),
      cmocka_unit_test(test_acktr_nack_queue_bound),
      cmocka_unit_test(test_acktr_nack_before_any_packet),
      cmocka_unit_test(test_acktr_ack_due),
      cmocka_unit_test(test_acktr_random),
  };

  return cmocka_run_group_tests_name("acktr", tests, NULL, NULL);
}
