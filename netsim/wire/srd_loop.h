/*
 * srd_loop.h: two libsrd endpoints joined by an in-memory wire in virtual
 * time.  Each direction has n paths; each path is a link of the
 * impairment model (netsim/impair/impair.h): propagation delay, jitter, a
 * rate with a drop-tail queue, random loss, duplication (optionally
 * delayed), reordering, bit corruption and an optional blackhole, all drawn
 * from seeded streams, so a run is a pure function of its configuration.
 *
 * srd_loop_run() drives a whole transfer (A sends, B receives) with the
 * packet loop every driver writes (docs/programmers-guide.md), checks every
 * delivered byte and counts what happened.  srd-loopback prints it; the
 * property tests assert on it.
 */
#ifndef SRD_LOOP_H
#define SRD_LOOP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <srd/srd.h>

#include "impair.h"

#define SRD_LOOP_MAX_PATHS SRD_MAX_PATHS

/* srd_loop_link configures one direction of one path: the impairment
   model's link (impair.h: delay, jitter with the FIFO kept, loss,
   duplication, late duplicates, reordering, a rate cap with a queue, a
   blackhole from a time; corruption and bit errors drawn as each copy
   arrives).  Times are nanoseconds. */
typedef impair_cfg srd_loop_link;

/* srd_loop_link_stats counts what one link did. */
typedef struct srd_loop_link_stats {
  uint64_t sent;        /* packets offered to the link */
  uint64_t delivered;   /* packets handed to the far end */
  uint64_t lost;        /* dropped by random loss */
  uint64_t blackholed;  /* dropped by the blackhole */
  uint64_t queue_drops; /* dropped by the full queue */
  uint64_t duplicated;  /* extra copies made */
  uint64_t reordered;   /* held back */
  uint64_t bytes;       /* bytes delivered */
  uint64_t dup_delayed; /* extra copies sent dup_delay late */
  uint64_t corrupted;   /* delivered with a flipped bit */
} srd_loop_link_stats;

/* Where srd_loop_cfg.tap looks at the wire. */
typedef enum srd_loop_tap_at {
  /* As an endpoint sends a packet, before the wire loses, duplicates or
     delays it: a capture at the sender's NIC. */
  SRD_LOOP_TAP_SEND = 0,
  /* As a packet reaches the other endpoint, after the wire did its work
     (duplicates twice, reordered packets late, lost ones never, corrupted
     ones with their flipped bit). */
  SRD_LOOP_TAP_RECV = 1
} srd_loop_tap_at;

/* srd_loop_tap_fn sees one packet of |len| bytes that endpoint |from| (0 =
   A, 1 = B) sent on |path|, at virtual time |ts|. */
typedef void (*srd_loop_tap_fn)(void *tap_user, int from, uint32_t path,
                                srd_tstamp ts, const uint8_t *pkt, size_t len);

/* srd_loop_cfg is a whole run. */
typedef struct srd_loop_cfg {
  uint64_t seed;
  uint32_t n_paths;                     /* 1..64 */
  srd_loop_link ab[SRD_LOOP_MAX_PATHS]; /* A to B, per path */
  srd_loop_link ba[SRD_LOOP_MAX_PATHS]; /* B to A, per path */
  uint32_t messages;                    /* messages A sends to B */
  uint32_t size;                        /* bytes per message */
  int random_sizes;                     /* if set, sizes uniform in [0, size] */
  uint32_t inflight;                    /* sends A keeps posted */
  uint32_t recv_window;                 /* receives B keeps posted */
  int ordered;                          /* B delivers A's messages in order */
  srd_settings settings;                /* both endpoints (seed is derived) */
  srd_duration time_limit;              /* virtual time limit */
  /* dead_from: if nonzero, every link of both directions turns into a
     blackhole at this time (a peer that vanishes). */
  srd_tstamp dead_from;
  /* log, if not NULL, receives both endpoints' log records; user_data is
     the endpoint (0 = A, 1 = B) cast to a pointer. */
  void (*log)(void *user_data, const srd_log_record *rec);
  /* tap, if not NULL, sees every packet at |tap_at| (a pcap capture). */
  srd_loop_tap_fn tap;
  srd_loop_tap_at tap_at;
  void *tap_user;
  /* stop, if not NULL, is read at every step of the run: once it is
     nonzero (a signal handler set it), the run ends where it is and
     |res| holds what was measured so far, marked interrupted. */
  volatile sig_atomic_t *stop;
  /* lat_ns, if not NULL, has room for |messages| values: the run writes
     there the latency (post to first delivery, in ns) of every message
     delivered, sorted ascending, and res->n_lat says how many.  The wire
     computes no percentile: the tools do, with the one definition
     (tools/lib/tool_hist.h). */
  uint64_t *lat_ns;
} srd_loop_cfg;

/* srd_loop_result is what a run measured. */
typedef struct srd_loop_result {
  uint64_t sent;                 /* sends posted */
  uint64_t completed_ok;         /* send completions, success */
  uint64_t completed_err;        /* send completions, error */
  uint64_t double_completions;   /* a send completed more than once */
  uint64_t errors_by_code[32];   /* completed_err by -code - 200 */
  uint64_t delivered;            /* receive completions with a message */
  uint64_t duplicates_delivered; /* a message delivered again */
  uint64_t corrupted;            /* delivered bytes that differ from sent */
  uint64_t recv_errors;          /* receive completions in error */
  uint64_t unmatched;            /* deliveries of no known message */
  uint64_t out_of_order;         /* deliveries below the highest seen id */
  uint64_t ok_not_delivered;     /* send success, never delivered */
  uint64_t retransmits;
  uint64_t bytes_delivered;
  srd_tstamp first_err; /* first error completion, 0 if none */
  /* max_err_wait: the longest a failed send took to fail, counted from
     when it was posted or the wire died, whichever was later. */
  srd_duration max_err_wait;
  srd_tstamp start; /* first post */
  srd_tstamp end;   /* last completion */
  srd_tstamp last_delivery;
  double goodput_gbps; /* delivered bytes over (last delivery - start) */
  size_t n_lat;        /* latencies written to cfg->lat_ns */
  uint32_t n_paths;
  uint64_t path_pkts[SRD_LOOP_MAX_PATHS]; /* A's data packets per path */
  srd_loop_link_stats ab[SRD_LOOP_MAX_PATHS];
  srd_loop_link_stats ba[SRD_LOOP_MAX_PATHS];
  /* What the receiving endpoints made of the packets the wire corrupted
     (links' corrupted, both directions): each is watched through the
     endpoint's drop counters as it is read, and counted once, as
     dropped under a reason whose name begins with "corrupt" (the
     engine's integrity check caught it), dropped under another reason
     (a check that came first caught it), or accepted (the engine took it
     for a good packet: corruption it cannot see).  The three add up to
     the corrupted packets delivered. */
  uint64_t corrupt_dropped;
  uint64_t corrupt_dropped_other;
  uint64_t corrupt_accepted;
  srd_ep_stats a, b;     /* endpoint counters */
  srd_peer_stats a_peer; /* A's view of B */
  int finished;          /* every send completed in time */
  int stuck;             /* nothing left to do, sends outstanding */
  int interrupted;       /* cfg->stop ended the run */
} srd_loop_result;

/* srd_loop_cfg_default fills |cfg|: 8 paths of 10 us one-way delay at
   100 Gb/s each with a 256 KiB queue, no impairments, 1000 messages of
   64 KiB, 64 in flight, 64 receives posted, default settings, 10 s
   virtual time limit. */
void srd_loop_cfg_default(srd_loop_cfg *cfg);

/* srd_loop_run runs |cfg| and fills |res|.

   Returns 0, or a negative SRD_ERR_* if the run could not be set up
   (SRD_ERR_INVALID_ARGUMENT for bad settings or a link's probability
   outside [0, 1], SRD_ERR_NOMEM). */
int srd_loop_run(const srd_loop_cfg *cfg, srd_loop_result *res);

/* srd_loop_fill writes the bytes of message |index| of run |seed| into
   |buf| (|len| bytes): its index first, then a seeded pattern. */
void srd_loop_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t index);

/* srd_loop_drop_is_corrupt says whether drop reason |r| is one of the
   engine's integrity checks (its name begins with "corrupt"). */
int srd_loop_drop_is_corrupt(int r);

#endif /* SRD_LOOP_H */
