/*
 * srd_cc.h: pluggable congestion control (after ngtcp2_cc and picoquic's
 * congestion algorithm table).  An algorithm is a table of functions; a
 * registry finds it by name, so a scenario picks one with a string.  The
 * algorithm reads and writes the shared per-peer srd_cc_stat.
 */
#ifndef SRD_CC_H
#define SRD_CC_H

#include <stdint.h>

#include <srd/srd.h>

/* srd_cc_stat is the state congestion control shares with the engine. */
typedef struct srd_cc_stat {
  /* cwnd is the congestion window in bytes; it may be below one packet,
     and then the engine paces one packet per srtt * pkt / cwnd. */
  uint64_t cwnd;
  /* inflight is the bytes in flight. */
  uint64_t inflight;
  /* srtt and min_rtt are the peer's smoothed and base RTT (0 and
     UINT64_MAX before a sample). */
  srd_duration srtt;
  srd_duration min_rtt;
  /* pkt_bytes is the size of a full data packet. */
  uint32_t pkt_bytes;
  /* target_qdelay is the queueing delay over min_rtt to aim for. */
  srd_duration target_qdelay;
  /* init_cwnd, min_cwnd and max_cwnd bound the window. */
  uint64_t init_cwnd;
  uint64_t min_cwnd;
  uint64_t max_cwnd;
  /* fixed_cwnd is the window of the "fixed" controller. */
  uint64_t fixed_cwnd;
  /* decreases and wide_decreases count multiplicative decreases, and
     those taken because most paths were congested. */
  uint64_t decreases;
  uint64_t wide_decreases;
} srd_cc_stat;

/* srd_cc_ack describes one acknowledgement to on_ack. */
typedef struct srd_cc_ack {
  /* bytes_acked is the bytes newly acknowledged. */
  uint64_t bytes_acked;
  /* pkts_acked is the packets newly acknowledged. */
  uint32_t pkts_acked;
  /* rtt is the latest RTT sample, 0 if the ACK brought none. */
  srd_duration rtt;
  /* congested is nonzero if most paths are above the delay target (or the
     peer has one path): connection-wide congestion such as incast. */
  int congested;
} srd_cc_ack;

typedef struct srd_cc srd_cc;

/* srd_cc_ops is one algorithm. */
typedef struct srd_cc_ops {
  /* name selects the algorithm (srd_settings.cc). */
  const char *name;
  /* init sets the initial window. */
  void (*init)(srd_cc *cc, srd_cc_stat *st, srd_tstamp now);
  /* on_ack reacts to acknowledged data and an RTT sample. */
  void (*on_ack)(srd_cc *cc, srd_cc_stat *st, const srd_cc_ack *ack,
                 srd_tstamp now);
  /* on_loss reacts to a packet declared lost by reordering time;
     |congested| as in srd_cc_ack. */
  void (*on_loss)(srd_cc *cc, srd_cc_stat *st, int congested, srd_tstamp now);
  /* on_timeout reacts to a retransmission timeout, the |consecutive|-th
     in a row without progress. */
  void (*on_timeout)(srd_cc *cc, srd_cc_stat *st, uint32_t consecutive,
                     int congested, srd_tstamp now);
  /* reset starts over (a new session). */
  void (*reset)(srd_cc *cc, srd_cc_stat *st, srd_tstamp now);
} srd_cc_ops;

/* srd_cc is one peer's controller state. */
struct srd_cc {
  const srd_cc_ops *ops;
  /* last_decrease is when the window was last cut (at most once per
     RTT). */
  srd_tstamp last_decrease;
  /* slow_start: grow by the bytes acknowledged until the first sign of
     congestion. */
  int slow_start;
  /* A loss-rate round: losses and acks since round_start, and the
     smallest RTT sample in it (queueing raises the floor of the RTT,
     reordering only adds outliers above it). */
  srd_tstamp round_start;
  uint32_t round_lost;
  uint32_t round_acked;
  srd_duration round_min_rtt;
};

/* srd_cc_find returns the algorithm named |name|, or NULL. */
const srd_cc_ops *srd_cc_find(const char *name);

extern const srd_cc_ops srd_cc_swift;
extern const srd_cc_ops srd_cc_fixed;

#endif /* SRD_CC_H */
