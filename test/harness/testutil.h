/*
 * testutil.h: what the CMocka tests share.
 *
 * Seeds: a randomised test calls tu_seed(), which takes SRD_TEST_SEED from
 * the environment or draws one, and prints "seed=0x..." before the test
 * runs; tu_assert() prints it again on failure, so that
 *   SRD_TEST_SEED=0x... build/test/test_x
 * reproduces the run bit for bit.
 *
 * tpair: two endpoints, A (0) and B (1), joined by a queue of datagrams
 * that the test controls packet by packet: deliver, drop, duplicate or
 * reorder exactly the ones it names (the deterministic loss masks of
 * picoquic's and ngtcp2's tests).  Time is set by the test.
 */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <srd/srd.h>

extern uint64_t tu_current_seed;

/* tu_seed returns the test's seed (SRD_TEST_SEED or a fresh one) and
   prints it with |name|. */
uint64_t tu_seed(const char *name);

/* tu_rand is a splitmix64 step on |*s|. */
uint64_t tu_rand(uint64_t *s);

#define tu_assert(cond)                                                        \
  do {                                                                         \
    if (!(cond)) {                                                             \
      print_error("failed with seed=0x%016" PRIx64                             \
                  " (rerun: SRD_TEST_SEED=0x%016" PRIx64 ")\n",                \
                  tu_current_seed, tu_current_seed);                           \
      fail_msg("%s:%d: %s", __FILE__, __LINE__, #cond);                        \
    }                                                                          \
  } while (0)

/* A datagram between the endpoints of a tpair. */
typedef struct tpkt {
  uint8_t data[70000];
  size_t len;
  int from;      /* 0 = A, 1 = B */
  uint16_t path; /* the path the sender chose */
  uint8_t type;  /* data[1]: the packet type */
} tpkt;

/* tpair_filter decides the fate of each packet: return TP_DELIVER,
   TP_DROP or TP_DUP (deliver twice). */
#define TP_DELIVER 0
#define TP_DROP 1
#define TP_DUP 2
typedef int (*tpair_filter)(void *arg, const tpkt *p, uint64_t n);

typedef struct tpair {
  srd_ep *ep[2];
  srd_peer_id peer[2]; /* ep[i]'s id for the other endpoint */
  srd_tstamp now;
  srd_duration delay; /* one-way delay applied by tpair_run */
  tpkt *q;            /* written, not yet delivered */
  size_t n, cap;
  tpair_filter filter;
  void *filter_arg;
  uint64_t n_seen; /* packets passed to the filter so far */
  uint64_t dropped;
} tpair;

/* tpair_init creates both endpoints with |sa| and |sb| (NULL for the
   defaults; seeds are made distinct), adds each as the other's peer with
   |n_paths| paths, B ordered if |ordered_b|. */
void tpair_init(tpair *tp, const srd_settings *sa, const srd_settings *sb,
                uint32_t n_paths, int ordered_b);

void tpair_fini(tpair *tp);

/* tpair_collect writes every due packet of both endpoints into the queue;
   returns how many. */
size_t tpair_collect(tpair *tp);

/* tpair_deliver passes the queued packets through the filter to their
   receivers, oldest first; returns how many were delivered. */
size_t tpair_deliver(tpair *tp);

/* tpair_run alternates collect and deliver, advancing time by tp->delay
   per exchange and to the next deadline when idle, until nothing is left
   to do or time passes |until|.  Returns the number of exchanges. */
size_t tpair_run(tpair *tp, srd_tstamp until);

/* tpair_poll reads up to |n| completions of endpoint |i|. */
size_t tpair_poll(tpair *tp, int i, srd_cqe *cqes, size_t n);

#endif /* TESTUTIL_H */
