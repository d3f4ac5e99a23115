/*
 * <netsim/traffic.h>: built-in traffic: flows and permutations for the tests
 * and the benchmark (docs/netsim.md, "Built-in traffic"). Part of netsim's
 * API: include <netsim/netsim.h>, which includes this header after the ones
 * whose types it uses.
 */
#ifndef NETSIM_TRAFFIC_API_H
#define NETSIM_TRAFFIC_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/traffic.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netsim_traffic netsim_traffic;

/* netsim_flow_settings describes one flow of fixed 5-tuple packets from
   host src to host dst.  Exactly one of |rate_bps| (constant bit rate) and
   |window| (closed loop) is nonzero. */
typedef struct netsim_flow_settings {
  /* src and dst are host indices. */
  uint32_t src;
  uint32_t dst;
  /* sport, dport and proto complete the 5-tuple. */
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  /* ect marks the packets ECN-capable. */
  uint8_t ect;
  /* pkt_bytes is each packet's size on the wire. */
  uint32_t pkt_bytes;
  /* rate_bps: send at this constant rate (departure times computed from
     cumulative bytes, so they do not drift). */
  uint64_t rate_bps;
  /* window: keep this many packets outstanding; a delivered packet lets
     the source send one more |ack_delay| later (0: at once, an ideal
     feedback), a dropped one |retry| later. */
  uint32_t window;
  /* ack_delay and retry: see |window|. */
  netsim_time ack_delay;
  netsim_time retry;
  /* max_pkts stops the flow after this many packets (0: no limit). */
  uint64_t max_pkts;
  /* start and stop bound when the flow sends (stop 0: never stops). */
  netsim_time start;
  netsim_time stop;
} netsim_flow_settings;

/* netsim_flow_settings_default fills |s|: UDP, 1500 B packets, window 16,
   retry 10 us, from 0 forever. */
void netsim_flow_settings_default(netsim_flow_settings *s);

/* netsim_flow_stats counts one flow. */
typedef struct netsim_flow_stats {
  /* sent and sent_bytes: packets the source handed to its NIC. */
  uint64_t sent;
  uint64_t sent_bytes;
  /* delivered and delivered_bytes: packets that reached dst. */
  uint64_t delivered;
  uint64_t delivered_bytes;
  /* dropped: packets lost anywhere (queues, links, routing). */
  uint64_t dropped;
  /* ecn_marked: delivered packets carrying CE. */
  uint64_t ecn_marked;
  /* no_pkt: sends skipped because the packet pool was empty. */
  uint64_t no_pkt;
  /* first_rx and last_rx: when the first and last packets arrived. */
  netsim_time first_rx;
  netsim_time last_rx;
  /* latency_sum: the sum of one-way delays of delivered packets. */
  netsim_time latency_sum;
  /* dup_rx: copies made by duplicating links (NETSIM_PKT_DUP) that
     reached dst; they are not counted above, and a window flow takes no
     credit from them (nor from a copy's drop). */
  uint64_t dup_rx;
} netsim_flow_stats;

/* netsim_traffic_new creates a traffic generator for up to |max_flows|
   flows on |sim|.  It owns the receive callback of every host a flow
   ends at and chains the simulation's drop callback.  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_traffic_new(netsim_traffic **ptr, netsim_sim *sim,
                       uint32_t max_flows);

/* netsim_traffic_del frees |tr| (NULL is fine), cancels its pending events
   and restores the drop callback it chained; call it before
   netsim_sim_del. */
void netsim_traffic_del(netsim_traffic *tr);

/* netsim_traffic_add_flow adds a flow (starting at s->start) and writes
   its id to |*pid| (may be NULL).  Packets carry proto s->proto, flow =
   the flow id and tag = the per-flow sequence number.  Returns 0,
   NETSIM_ERR_INVAL, NETSIM_ERR_POOL (max_flows reached) or
   NETSIM_ERR_NOMEM. */
int netsim_traffic_add_flow(netsim_traffic *tr, const netsim_flow_settings *s,
                            uint32_t *pid);

/* netsim_traffic_permutation adds one flow per host, from each host to a
   distinct other host (a random derangement drawn from the simulation's
   traffic stream |stream|), each shaped by |tmpl| (its src, dst and sport
   are replaced: sport = 1024 + src).  Returns as add_flow. */
int netsim_traffic_permutation(netsim_traffic *tr,
                               const netsim_flow_settings *tmpl,
                               uint64_t stream);

/* netsim_traffic_n_flows returns the number of flows. */
uint32_t netsim_traffic_n_flows(const netsim_traffic *tr);

/* netsim_traffic_flow_stats copies flow |id|'s counters into |st|.
   Returns 0 or NETSIM_ERR_NOENT. */
int netsim_traffic_flow_stats(const netsim_traffic *tr, uint32_t id,
                              netsim_flow_stats *st);

/* netsim_traffic_flow_dst returns flow |id|'s destination host, or
   UINT32_MAX. */
uint32_t netsim_traffic_flow_dst(const netsim_traffic *tr, uint32_t id);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_TRAFFIC_API_H */
