/*
 * test_acksteer.c: acknowledgements avoid a path whose reverse direction
 * is dead.  ECMP hashes the two directions of a path apart, so a failed
 * link kills path x from A to B and path y from B to A; B (a pure
 * receiver) sends its ACKs on the path of the newest data packet, and A's
 * steering must move most of its data, and with it B's ACKs, off path y
 * although every data packet on y arrives (its loss is never seen: later ACKs
 * acknowledge its packets by range).  A cuts path y's weight to the floor
 * (it does not avoid it: its forward direction works).
 */
#include <stdlib.h>
#include <string.h>

#include "srd_loop.h"
#include "testutil.h"

#define N_PATHS 8
#define DEAD_AB 1 /* A to B dead on this path */
#define DEAD_BA 5 /* B to A dead on this one */

typedef struct acks {
  srd_tstamp from;            /* count what B sends from this time on */
  uint64_t per_path[N_PATHS]; /* B's packets by path */
  uint64_t total;
} acks;

/* count sees what an endpoint sends, before the wire drops it. */
static void count(void *user, int from, uint32_t path, srd_tstamp ts,
                  const uint8_t *pkt, size_t len) {
  acks *a = user;
  (void)pkt;
  (void)len;
  /* B sends no data: everything from it is control (ACKs, repeats). */
  if (from == 1 && ts >= a->from && path < N_PATHS) {
    ++a->per_path[path];
    ++a->total;
  }
}

static void run(uint64_t seed, int same_index, acks *a, srd_loop_result *res) {
  srd_loop_cfg cfg;
  uint32_t dead_ba = same_index ? DEAD_AB : DEAD_BA;

  srd_loop_cfg_default(&cfg);
  /* B acknowledges every packet on that packet's path, and A keeps a few
     messages in flight (so that no per-path queue builds up): every path
     then carries its share of the ACKs, which is what A's judgement of a
     path's way back rests on (docs/protocol.md, "Paths of control
     packets"). */
  cfg.settings.ack_freq = 1;
  cfg.inflight = 8;
  cfg.seed = seed;
  cfg.n_paths = N_PATHS;
  cfg.messages = 2000;
  cfg.size = 64 * 1024;
  /* One link fails in both directions from the start: a path each way. */
  cfg.ab[DEAD_AB].blackhole = 1;
  cfg.ab[DEAD_AB].blackhole_from = 0;
  cfg.ba[dead_ba].blackhole = 1;
  cfg.ba[dead_ba].blackhole_from = 0;
  memset(a, 0, sizeof(*a));
  /* Steering has had the first 300 us (a tenth of the transfer) to react. */
  a->from = 300 * SRD_US;
  cfg.tap = count;
  cfg.tap_at = SRD_LOOP_TAP_SEND;
  cfg.tap_user = a;
  assert_int_equal(srd_loop_run(&cfg, res), 0);
}

static void check(int same_index) {
  uint64_t seed = tu_seed(same_index ? "acksteer_same_path" : "acksteer_apart");
  uint32_t dead_ba = same_index ? DEAD_AB : DEAD_BA;
  int r;

  for (r = 0; r < 4; ++r) {
    srd_loop_result res;
    acks a;
    double share;

    run(seed + (uint64_t)r, same_index, &a, &res);
    /* Every message exactly once. */
    assert_true(res.finished);
    assert_int_equal(res.completed_ok, 2000);
    assert_int_equal(res.completed_err, 0);
    assert_int_equal(res.double_completions, 0);
    assert_int_equal(res.delivered, 2000);
    assert_int_equal(res.duplicates_delivered, 0);
    assert_int_equal(res.corrupted, 0);
    assert_int_equal(res.ok_not_delivered, 0);
    assert_true(a.total > 500);
    /* Unsteered, the dead path carries 29-39% of B's packets (its ACKs
       die, and the repeats and timer ACKs that follow go back on it);
       steered, its weight is at the floor and it carries 4-8% (40 runs
       each). */
    share = (double)a.per_path[dead_ba] / (double)a.total;
    if (share >= 0.15) {
      print_error("seed %llu: %llu of %llu ACKs on dead path %u (%.3f)\n",
                  (unsigned long long)(seed + (uint64_t)r),
                  (unsigned long long)a.per_path[dead_ba],
                  (unsigned long long)a.total, dead_ba, share);
    }
    assert_true(share < 0.15);
  }
}

/* The failed link is path 1 one way and path 5 the other. */
static void test_acksteer_reverse_path_apart(void **state) {
  (void)state;
  check(0);
}

/* The same path index dead both ways. */
static void test_acksteer_same_path(void **state) {
  (void)state;
  check(1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_acksteer_reverse_path_apart),
      cmocka_unit_test(test_acksteer_same_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
