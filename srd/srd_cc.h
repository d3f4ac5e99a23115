/*
 * srd_cc.h: pluggable congestion control (after ngtcp2_cc and picoquic's
 * congestion algorithm table).  An algorithm is a table of functions; a
 * registry finds it by name, so a scenario picks one with a string.  The
 * algorithm reads and writes the shared per-peer srd_cc_stat.
 *
 * srd_cc.c defines the registry and both algorithms.  The engine
 * (srd_ep.c, srd_tx.c) calls an algorithm's functions; they run inside
 * engine calls, so they may not call back into the engine, allocate or
 * fail, and they touch only their |cc| and |st|.  Adding an algorithm:
 * a srd_cc_ops in srd_cc.c, listed in its registry and names.
 */
#ifndef SRD_CC_H
#define SRD_CC_H

#include <stdint.h>

#include <srd/srd.h>

/* srd_cc_target_cfg says how the delay target follows the path (the
   srd_settings cc_target_* fields; docs/protocol.md). */
typedef struct srd_cc_target_cfg {
  /* rtt_pct is the queueing allowance in percent of the base RTT. */
  uint32_t rtt_pct;
  /* hops (0: unknown) and hop_qdelay: Swift's per-hop term. */
  uint32_t hops;
  srd_duration hop_qdelay;
  /* min and max bound the target; max is also the fixed target, taken
     when rtt_pct and hops are both 0. */
  srd_duration min;
  srd_duration max;
} srd_cc_target_cfg;

/* srd_cc_target returns the queueing delay target for a path whose base
   RTT is |base_rtt| (UINT64_MAX or 0 before a sample): cfg->max if the
   target is fixed (rtt_pct and hops 0) or there is no sample yet, else
   base_rtt * rtt_pct / 100 + hops * hop_qdelay, clamped to [min, max].
   A pure function: nothing fails, nothing is kept.  Defined in
   srd_cc.c. */
srd_duration srd_cc_target(const srd_cc_target_cfg *cfg, srd_duration base_rtt);

/* srd_cc_flow_scaling returns Swift's flow-based term for a window of
   |cwnd| bytes of |pkt_bytes| packets: range_pct percent of |target|
   times (1/sqrt(w) - 1/sqrt(max)) / (1/sqrt(0.1) - 1/sqrt(max)), w =
   cwnd / pkt_bytes clamped to [0.1, max = max_pkts]; 0 if max_pkts or
   range_pct is 0, or max_pkts is below 1.  Pure (and free of libm).
   Defined in srd_cc.c. */
srd_duration srd_cc_flow_scaling(uint64_t cwnd, uint32_t pkt_bytes,
                                 uint32_t max_pkts, uint32_t range_pct,
                                 srd_duration target);

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
  /* target_qdelay is the queueing delay over min_rtt to aim for:
     srd_cc_target(&target_cfg, min_rtt), kept by the engine whenever
     min_rtt changes. */
  srd_duration target_qdelay;
  srd_cc_target_cfg target_cfg;
  /* fs_max_pkts and fs_range_pct: Swift's flow-based scaling
     (srd_cc_flow_scaling), off if either is 0. */
  uint32_t fs_max_pkts;
  uint32_t fs_range_pct;
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
  /* init sets the initial window (swift: st->init_cwnd; fixed:
     st->fixed_cwnd) and its own state in |cc|. */
  void (*init)(srd_cc *cc, srd_cc_stat *st, srd_tstamp now);
  /* on_ack reacts to acknowledged data and an RTT sample; the engine calls
     it when an ACK acknowledged packets or gave a sample, with
     st->inflight already updated. */
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

/* srd_cc is one peer's controller state (in srd_peer). */
struct srd_cc {
  const srd_cc_ops *ops; /* the algorithm; set before ops->init */
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

/* srd_cc_find returns the algorithm named |name| (a static table, never
   freed), the default "swift" if |name| is NULL, or NULL if no algorithm
   has that name (srd_ep_new then returns SRD_ERR_INVALID_ARGUMENT).  The
   names are srd_cc_names() (srd.h).  Defined in srd_cc.c. */
const srd_cc_ops *srd_cc_find(const char *name);

/* srd_cc_swift is the delay-based default (Swift, SIGCOMM 2020, with the
   connection-wide congestion rule for sprayed traffic, srd_cc.c). */
extern const srd_cc_ops srd_cc_swift;
/* srd_cc_fixed keeps cwnd at st->fixed_cwnd whatever happens: the
   teaching baseline. */
extern const srd_cc_ops srd_cc_fixed;

#endif /* SRD_CC_H */
