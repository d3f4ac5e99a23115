/*
 * netsim_sim.h: the simulation object, nodes, and the internal calls the
 * modules make on each other (drop, trace).
 */
#ifndef NETSIM_SIM_H
#define NETSIM_SIM_H

#include <netsim/netsim.h>
#include "netsim_evl.h"
#include "netsim_pkt.h"

/* Node kinds. */
#define NETSIM_NODE_HOST 1u
#define NETSIM_NODE_SWITCH 2u

/* netsim_node is what hosts and switches share; it is their first
   member. */
typedef struct netsim_node {
  /* kind is NETSIM_NODE_HOST or NETSIM_NODE_SWITCH. */
  uint32_t kind;
  /* id is the node id (creation order over hosts and switches). */
  uint32_t id;
  /* n_ports is the number of ports (1 for a host). */
  uint32_t n_ports;
  /* out[p] is the link leaving port p, or NULL if unconnected. */
  netsim_link **out;
} netsim_node;

/* What a scheduled fault does (netsim_fault_rec.op). */
#define NETSIM_FAULT_OP_DOWN 1u
#define NETSIM_FAULT_OP_UP 2u
#define NETSIM_FAULT_OP_ROUTE_DOWN 3u
#define NETSIM_FAULT_OP_ROUTE_UP 4u
#define NETSIM_FAULT_OP_DEGRADE 5u

/* netsim_fault_rec is one scheduled fault (see netsim_fault.c). */
typedef struct netsim_fault_rec {
  /* link is a link of the cable concerned. */
  uint32_t link;
  /* op is what to do (NETSIM_FAULT_OP_*). */
  uint32_t op;
  /* rate_bps is the new rate of a degrade. */
  uint64_t rate_bps;
} netsim_fault_rec;

struct netsim_sim {
  /* mem is the allocator for everything below. */
  netsim_mem mem;
  /* set is the validated settings. */
  netsim_settings set;
  /* evl is the event list (and the clock). */
  netsim_evl *evl;
  /* pool is the packet pool. */
  netsim_pktpool *pool;
  /* nodes, hosts, switches and links, with counts and capacities. */
  netsim_node **nodes;
  uint32_t n_nodes, cap_nodes;
  netsim_host **hosts;
  uint32_t n_hosts, cap_hosts;
  netsim_switch **switches;
  uint32_t n_switches, cap_switches;
  netsim_link **links;
  uint32_t n_links, cap_links;
  /* faults holds |n_faults| scheduled faults. */
  netsim_fault_rec *faults;
  uint32_t n_faults, cap_faults;
  /* routed is set once routes are built (no more nodes then). */
  int routed;
  /* trace is the running event-trace hash. */
  uint64_t trace;
  /* next_uid numbers sent packets. */
  uint64_t next_uid;
  /* st holds the counters (st.events is read from the event list). */
  netsim_sim_stats st;
  /* route_errors counts reconvergences that failed to allocate. */
  uint32_t route_errors;
  /* drop_cb and tap_cb, with their user pointers. */
  netsim_drop_cb drop_cb;
  void *drop_user;
  netsim_tap_cb tap_cb;
  void *tap_user;
  /* dup_cb and dup_user: the dup callback (netsim_sim_set_dup_cb). */
  netsim_dup_cb dup_cb;
  void *dup_user;
  /* n_dup_links counts links that reserved an event slot for their copy
     timer (netsim_link_set_dup). */
  uint32_t n_dup_links;
};

/* netsim_sim_drop counts the drop of |pkt| for |why| at |link| (may be
   NULL), tells the drop callback and frees the packet. */
void netsim_sim_drop(netsim_sim *sim, netsim_pkt *pkt, netsim_drop_reason why,
                     netsim_link *link);

/* netsim_sim_trace folds two words describing an event into the trace
   hash. */
static inline void netsim_sim_trace(netsim_sim *sim, uint64_t a, uint64_t b) {
  uint64_t h = sim->trace;

  h = (h ^ a) * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 29;
  h = (h ^ b) * 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 32;
  sim->trace = h;
}

/* netsim_sim_reserve_events makes the event list hold every timer that
   may be pending at once: one per link (its FIFO head) and one per
   duplicating link (its copies), two per host (a transport's), and the
   pool.  Returns 0 or NETSIM_ERR_NOMEM. */
int netsim_sim_reserve_events(netsim_sim *sim);

/* netsim_sim_grow makes |*arr| (elements of |elt| bytes, capacity |*cap|)
   hold at least |need| elements, doubling.  Returns 0 or
   NETSIM_ERR_NOMEM. */
int netsim_sim_grow(const netsim_mem *mem, void **arr, uint32_t *cap,
                    size_t elt, uint32_t need);

#endif /* NETSIM_SIM_H */
