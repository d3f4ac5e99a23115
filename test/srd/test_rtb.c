/*
 * test_rtb.c: the sent-packet ring: adding, finding, leaving flight,
 * retiring (with LOST entries kept for late acknowledgements until their
 * horizon or until the ring is full), the oldest packet in flight, a full
 * ring, and packet numbers that wrap past 2^32.
 */
#include "testutil.h"

#include "srd_rtb.h"

static void init(srd_rtb *rtb, uint32_t size, uint32_t first) {
  assert_int_equal(srd_rtb_init(rtb, size, srd_mem_default()), 0);
  srd_rtb_reset(rtb, first);
}

static srd_rtb_ent *add(srd_rtb *rtb, uint32_t bytes, srd_tstamp ts) {
  uint32_t seq = rtb->next;
  srd_rtb_ent *e = srd_rtb_add(rtb, bytes);

  assert_non_null(e);
  assert_int_equal(e->seq, seq);
  assert_int_equal(e->state, SRD_RTB_INFLIGHT);
  assert_int_equal(e->bytes, bytes);
  assert_int_equal(rtb->next, seq + 1);
  e->tx_ts = ts;
  return e;
}

static void test_rtb_add_get(void **state) {
  srd_rtb rtb;
  srd_rtb_ent *e;
  uint32_t s;
  (void)state;

  init(&rtb, 8, 100);
  assert_int_equal(rtb.head, 100);
  assert_int_equal(rtb.next, 100);
  assert_false(srd_rtb_full(&rtb));
  assert_null(srd_rtb_get(&rtb, 100));
  assert_null(srd_rtb_oldest(&rtb));

  add(&rtb, 10, 1);
  add(&rtb, 20, 2);
  add(&rtb, 30, 3);
  assert_int_equal(rtb.inflight_pkts, 3);
  assert_true(rtb.inflight_bytes == 60);
  for (s = 100; s < 103; ++s) {
    e = srd_rtb_get(&rtb, s);
    assert_non_null(e);
    assert_int_equal(e->seq, s);
    assert_true(e->tx_ts == s - 99);
  }
  /* Outside [head, next). */
  assert_null(srd_rtb_get(&rtb, 99));
  assert_null(srd_rtb_get(&rtb, 103));
  assert_null(srd_rtb_get(&rtb, 100 + 8));
  assert_null(srd_rtb_get(&rtb, 100 - 8));
  assert_null(srd_rtb_get(&rtb, 100 + 0x80000000u));
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 100));
  srd_rtb_fini(&rtb);
}

static void test_rtb_leave_flight(void **state) {
  srd_rtb rtb;
  srd_rtb_ent *e;
  (void)state;

  init(&rtb, 8, 0);
  add(&rtb, 10, 1);
  add(&rtb, 20, 2);
  add(&rtb, 30, 3);
  add(&rtb, 40, 4);

  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1), SRD_RTB_ACKED);
  assert_int_equal(rtb.inflight_pkts, 3);
  assert_true(rtb.inflight_bytes == 80);
  /* Still found, in its new state. */
  e = srd_rtb_get(&rtb, 1);
  assert_non_null(e);
  assert_int_equal(e->state, SRD_RTB_ACKED);
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 0));

  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 0), SRD_RTB_LOST);
  /* The oldest in flight skips entries that left it. */
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 2));
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 2), SRD_RTB_NACKED);
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 3));
  assert_int_equal(rtb.inflight_pkts, 1);
  assert_true(rtb.inflight_bytes == 40);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 3), SRD_RTB_ACKED);
  assert_int_equal(rtb.inflight_pkts, 0);
  assert_true(rtb.inflight_bytes == 0);
  assert_null(srd_rtb_oldest(&rtb));
  srd_rtb_fini(&rtb);
}

static void test_rtb_retire(void **state) {
  srd_rtb rtb;
  (void)state;

  init(&rtb, 16, 1000);
  add(&rtb, 1, 10); /* 1000: ACKED */
  add(&rtb, 1, 20); /* 1001: NACKED */
  add(&rtb, 1, 30); /* 1002: LOST at 30 */
  add(&rtb, 1, 40); /* 1003: ACKED */
  add(&rtb, 1, 50); /* 1004: LOST at 50 */
  add(&rtb, 1, 60); /* 1005: INFLIGHT */
  add(&rtb, 1, 70); /* 1006: ACKED */
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1000), SRD_RTB_ACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1001), SRD_RTB_NACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1002), SRD_RTB_LOST);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1003), SRD_RTB_ACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1004), SRD_RTB_LOST);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1006), SRD_RTB_ACKED);

  /* ACKED and NACKED go; a LOST one sent at or after the horizon stays,
     and everything behind it with it. */
  srd_rtb_retire(&rtb, 30);
  assert_int_equal(rtb.head, 1002);
  assert_null(srd_rtb_get(&rtb, 1000));
  assert_null(srd_rtb_get(&rtb, 1001));
  assert_non_null(srd_rtb_get(&rtb, 1002));
  assert_non_null(srd_rtb_get(&rtb, 1003));
  /* The horizon passes it: retired; the next LOST (50) is kept. */
  srd_rtb_retire(&rtb, 31);
  assert_int_equal(rtb.head, 1004);
  assert_null(srd_rtb_get(&rtb, 1002));
  assert_int_equal(srd_rtb_get(&rtb, 1004)->state, SRD_RTB_LOST);
  /* Past both: retiring stops at the packet in flight. */
  srd_rtb_retire(&rtb, SRD_TSTAMP_NONE);
  assert_int_equal(rtb.head, 1005);
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 1005));
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 1005), SRD_RTB_ACKED);
  srd_rtb_retire(&rtb, 0);
  assert_int_equal(rtb.head, 1007);
  assert_int_equal(rtb.next, 1007);
  assert_null(srd_rtb_oldest(&rtb));
  /* Retiring an empty ring does nothing. */
  srd_rtb_retire(&rtb, 0);
  assert_int_equal(rtb.head, 1007);
  /* Retired entries are FREE. */
  assert_int_equal(rtb.ents[1000 & rtb.mask].state, SRD_RTB_FREE);
  srd_rtb_fini(&rtb);
}

static void test_rtb_full(void **state) {
  srd_rtb rtb;
  uint32_t s;
  (void)state;

  init(&rtb, 8, 50);
  for (s = 0; s < 8; ++s) {
    assert_false(srd_rtb_full(&rtb));
    add(&rtb, 100, 1000 + s);
  }
  assert_true(srd_rtb_full(&rtb));
  assert_int_equal(rtb.inflight_pkts, 8);
  for (s = 50; s < 58; ++s) {
    assert_non_null(srd_rtb_get(&rtb, s));
  }
  /* In flight: nothing retires. */
  srd_rtb_retire(&rtb, 0);
  assert_true(srd_rtb_full(&rtb));

  /* All declared lost, all inside the horizon: the full ring drops just
     enough (one) to make room, and keeps the rest. */
  for (s = 50; s < 58; ++s) {
    srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, s), SRD_RTB_LOST);
  }
  srd_rtb_retire(&rtb, 0);
  assert_int_equal(rtb.head, 51);
  assert_false(srd_rtb_full(&rtb));
  assert_null(srd_rtb_get(&rtb, 50));
  assert_non_null(srd_rtb_get(&rtb, 51));
  /* A new packet takes the freed slot; the ring is full again. */
  add(&rtb, 100, 2000);
  assert_true(srd_rtb_full(&rtb));
  assert_int_equal(srd_rtb_get(&rtb, 58)->state, SRD_RTB_INFLIGHT);
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 58));
  srd_rtb_retire(&rtb, 0);
  assert_int_equal(rtb.head, 52);
  /* The horizon passes the rest: they all go, up to the one in flight. */
  srd_rtb_retire(&rtb, 1008);
  assert_int_equal(rtb.head, 58);
  assert_int_equal(rtb.inflight_pkts, 1);
  srd_rtb_fini(&rtb);
}

static void test_rtb_wrap(void **state) {
  srd_rtb rtb;
  srd_rtb_ent *e;
  uint32_t s, i;
  (void)state;

  init(&rtb, 8, UINT32_MAX - 2);
  for (i = 0; i < 8; ++i) {
    add(&rtb, i + 1, i);
  }
  assert_int_equal(rtb.next, 5);
  assert_true(srd_rtb_full(&rtb));
  for (i = 0, s = UINT32_MAX - 2; i < 8; ++i, ++s) {
    e = srd_rtb_get(&rtb, s);
    assert_non_null(e);
    assert_int_equal(e->seq, s);
    assert_int_equal(e->bytes, i + 1);
  }
  assert_null(srd_rtb_get(&rtb, UINT32_MAX - 3));
  assert_null(srd_rtb_get(&rtb, 5));
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, UINT32_MAX - 2));

  /* Retire across the wrap. */
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, UINT32_MAX - 2), SRD_RTB_ACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, UINT32_MAX - 1), SRD_RTB_ACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, UINT32_MAX), SRD_RTB_ACKED);
  srd_rtb_leave_flight(&rtb, srd_rtb_get(&rtb, 0), SRD_RTB_NACKED);
  srd_rtb_retire(&rtb, 0);
  assert_int_equal(rtb.head, 1);
  assert_null(srd_rtb_get(&rtb, UINT32_MAX));
  assert_null(srd_rtb_get(&rtb, 0));
  assert_ptr_equal(srd_rtb_oldest(&rtb), srd_rtb_get(&rtb, 1));
  assert_int_equal(rtb.inflight_pkts, 4);
  assert_true(rtb.inflight_bytes == 5 + 6 + 7 + 8);

  /* The freed slots take the next numbers; the old numbers in the same
     slots are not found. */
  for (i = 0; i < 4; ++i) {
    add(&rtb, 100, 100 + i);
  }
  assert_true(srd_rtb_full(&rtb));
  assert_int_equal(rtb.next, 9);
  assert_int_equal(srd_rtb_get(&rtb, 5)->bytes, 100);
  assert_null(srd_rtb_get(&rtb, UINT32_MAX - 2));
  assert_null(srd_rtb_get(&rtb, UINT32_MAX - 2 + 8 + 8));
  srd_rtb_fini(&rtb);
}

static void test_rtb_reset(void **state) {
  srd_rtb rtb;
  (void)state;

  init(&rtb, 4, 7);
  add(&rtb, 10, 1);
  add(&rtb, 10, 1);
  srd_rtb_reset(&rtb, UINT32_MAX);
  assert_int_equal(rtb.head, UINT32_MAX);
  assert_int_equal(rtb.next, UINT32_MAX);
  assert_int_equal(rtb.inflight_pkts, 0);
  assert_true(rtb.inflight_bytes == 0);
  assert_null(srd_rtb_get(&rtb, 7));
  assert_null(srd_rtb_oldest(&rtb));
  add(&rtb, 3, 1);
  add(&rtb, 4, 1);
  assert_int_equal(rtb.next, 1);
  assert_int_equal(srd_rtb_get(&rtb, 0)->bytes, 4);
  srd_rtb_fini(&rtb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rtb_add_get),
      cmocka_unit_test(test_rtb_leave_flight),
      cmocka_unit_test(test_rtb_retire),
      cmocka_unit_test(test_rtb_full),
      cmocka_unit_test(test_rtb_wrap),
      cmocka_unit_test(test_rtb_reset),
  };

  return cmocka_run_group_tests_name("rtb", tests, NULL, NULL);
}
