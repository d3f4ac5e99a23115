/*
 * test_rtt.c: the RTT estimator: the first sample, the exact RFC 6298
 * smoothing in integer nanoseconds, the minimum, and the RTO with its
 * floor, initial value, granularity and acknowledgement delay.
 */
#include "testutil.h"

#include "srd_rtt.h"

static void test_rtt_init(void **state) {
  srd_rtt r;
  (void)state;

  r.srtt = r.rttvar = r.latest = 99;
  r.min_rtt = 1;
  r.samples = 5;
  srd_rtt_init(&r);
  assert_true(r.srtt == 0);
  assert_true(r.rttvar == 0);
  assert_true(r.latest == 0);
  assert_true(r.samples == 0);
  assert_true(r.min_rtt == UINT64_MAX);
}

static void test_rtt_first_sample(void **state) {
  srd_rtt r;
  (void)state;

  srd_rtt_init(&r);
  srd_rtt_update(&r, 100 * SRD_US);
  assert_true(r.srtt == 100 * SRD_US);
  assert_true(r.rttvar == 50 * SRD_US);
  assert_true(r.min_rtt == 100 * SRD_US);
  assert_true(r.latest == 100 * SRD_US);
  assert_true(r.samples == 1);

  /* An odd sample: rttvar rounds down. */
  srd_rtt_init(&r);
  srd_rtt_update(&r, 7);
  assert_true(r.srtt == 7);
  assert_true(r.rttvar == 3);

  /* The first sample is taken as is, however far from 0. */
  srd_rtt_init(&r);
  srd_rtt_update(&r, 10 * SRD_S);
  assert_true(r.srtt == 10 * SRD_S);
  assert_true(r.rttvar == 5 * SRD_S);
}

static void test_rtt_smoothing(void **state) {
  srd_rtt r;
  (void)state;

  srd_rtt_init(&r);
  srd_rtt_update(&r, 100000);
  /* Above: dev 100000; rttvar (3*50000 + 100000)/4, srtt (7*100000 +
     200000)/8. */
  srd_rtt_update(&r, 200000);
  assert_true(r.rttvar == 62500);
  assert_true(r.srtt == 112500);
  assert_true(r.min_rtt == 100000);
  assert_true(r.latest == 200000);
  /* Below: dev 62500; rttvar (187500 + 62500)/4; srtt 837500/8 rounded
     down. */
  srd_rtt_update(&r, 50000);
  assert_true(r.rttvar == 62500);
  assert_true(r.srtt == 104687);
  assert_true(r.min_rtt == 50000);
  assert_true(r.latest == 50000);
  assert_true(r.samples == 3);
  /* Equal to srtt: dev 0, rttvar shrinks by a quarter. */
  srd_rtt_update(&r, 104687);
  assert_true(r.rttvar == 46875);
  assert_true(r.srtt == 104687);
  assert_true(r.min_rtt == 50000);

  /* Small values: integer division truncates at each step. */
  srd_rtt_init(&r);
  srd_rtt_update(&r, 7);  /* srtt 7, rttvar 3 */
  srd_rtt_update(&r, 10); /* dev 3: rttvar 12/4, srtt 59/8 */
  assert_true(r.rttvar == 3);
  assert_true(r.srtt == 7);
  srd_rtt_update(&r, 0); /* dev 7: rttvar 16/4, srtt 49/8 */
  assert_true(r.rttvar == 4);
  assert_true(r.srtt == 6);
  assert_true(r.min_rtt == 0);

  /* A constant sample: rttvar decays to 0 and srtt stays put. */
  srd_rtt_init(&r);
  for (int i = 0; i < 100; ++i) {
    srd_rtt_update(&r, 8000);
  }
  assert_true(r.srtt == 8000);
  assert_true(r.rttvar == 0);
  assert_true(r.samples == 100);

  /* A step: srtt approaches the new value from below, never above. */
  for (int i = 0; i < 200; ++i) {
    srd_rtt_update(&r, 16000);
    assert_true(r.srtt <= 16000 && r.srtt >= 8000);
  }
  assert_true(r.srtt >= 16000 - 8);
  assert_true(r.min_rtt == 8000);
}

static void test_rtt_min(void **state) {
  static const srd_duration s[] = {500, 700, 300, 300, 900, 301, 299, 1000};
  static const srd_duration min[] = {500, 500, 300, 300, 300, 300, 299, 299};
  srd_rtt r;
  size_t i;
  (void)state;

  srd_rtt_init(&r);
  for (i = 0; i < sizeof(s) / sizeof(s[0]); ++i) {
    srd_rtt_update(&r, s[i]);
    assert_true(r.min_rtt == min[i]);
    assert_true(r.latest == s[i]);
  }
}

static void test_rtt_rto(void **state) {
  srd_rtt r;
  (void)state;

  srd_rtt_init(&r);
  /* No sample: the initial RTO, at least the floor; granularity and ACK
     delay do not apply. */
  assert_true(srd_rtt_rto(&r, 1000, 5000, 100, 10) == 5000);
  assert_true(srd_rtt_rto(&r, 8000, 5000, 100, 10) == 8000);
  assert_true(srd_rtt_rto(&r, 5000, 5000, 100, 10) == 5000);

  /* srtt 100 us, rttvar 50 us: srtt + 4 rttvar. */
  srd_rtt_update(&r, 100 * SRD_US);
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 0, 1) == 300 * SRD_US);
  /* Plus the peer's ACK delay. */
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 7, 1) == 300 * SRD_US + 7);
  /* The granularity when it exceeds 4 rttvar (and not when equal). */
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 0, 500 * SRD_US) == 600 * SRD_US);
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 0, 200 * SRD_US) == 300 * SRD_US);
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 3, 200 * SRD_US + 1) ==
              300 * SRD_US + 4);
  /* The floor wins when larger; the initial value is no longer used. */
  assert_true(srd_rtt_rto(&r, SRD_MS, SRD_S, 5, 1) == SRD_MS);
  assert_true(srd_rtt_rto(&r, 300 * SRD_US, SRD_S, 5, 1) == 300 * SRD_US + 5);
  assert_true(srd_rtt_rto(&r, 300 * SRD_US + 6, SRD_S, 5, 1) ==
              300 * SRD_US + 6);

  /* rttvar decayed to 0: the granularity keeps the RTO above srtt. */
  for (int i = 0; i < 100; ++i) {
    srd_rtt_update(&r, 100 * SRD_US);
  }
  assert_true(r.rttvar == 0);
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 0, 1000) == 100 * SRD_US + 1000);
  assert_true(srd_rtt_rto(&r, 0, SRD_S, 0, 0) == 100 * SRD_US);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rtt_init),
      cmocka_unit_test(test_rtt_first_sample),
      cmocka_unit_test(test_rtt_smoothing),
      cmocka_unit_test(test_rtt_min),
      cmocka_unit_test(test_rtt_rto),
  };

  return cmocka_run_group_tests_name("rtt", tests, NULL, NULL);
}
