/*
 * <netsim/sim.h>: the simulation: settings, building a network, running it,
 * callbacks and counters (docs/netsim.md, "A first simulation"). Part of
 * netsim's API: include <netsim/netsim.h>, which includes this header after
 * the ones whose types it uses.
 */
#ifndef NETSIM_SIM_API_H
#define NETSIM_SIM_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/sim.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct netsim_sim netsim_sim;
typedef struct netsim_link netsim_link;
typedef struct netsim_host netsim_host;
typedef struct netsim_switch netsim_switch;

/* netsim_settings configures a simulation. */
typedef struct netsim_settings {
  /* seed is the master seed of every random stream and ECMP hash seed. */
  uint64_t seed;
  /* max_pkts is the packet pool size. */
  uint32_t max_pkts;
  /* payload_max is the size of a payload buffer (0: no payloads). */
  uint32_t payload_max;
  /* max_payloads is the number of payload buffers. */
  uint32_t max_payloads;
  /* max_events is the number of pending one-shot events (faults, delayed
     sends, user events). */
  uint32_t max_events;
  /* reconverge is how long routing keeps using a link after it went down
     (a blackhole) or ignoring it after it came back up. */
  netsim_time reconverge;
  /* max_hops drops a packet that crosses more links (a loop guard). */
  uint16_t max_hops;
} netsim_settings;

/* netsim_settings_default fills |s|: seed 1, 65536 packets, no payloads,
   4096 events, reconvergence 10 ms, 64 hops. */
void netsim_settings_default(netsim_settings *s);

/* netsim_linkcfg is one direction of a cable. */
typedef struct netsim_linkcfg {
  /* rate_bps is the line rate (0 < rate <= NETSIM_RATE_MAX). */
  uint64_t rate_bps;
  /* delay is the propagation delay. */
  netsim_time delay;
  /* queue_bytes is the output queue's byte limit (drop-tail; values of
     4 GiB and more mean no limit). */
  uint64_t queue_bytes;
  /* ecn_bytes marks ECT packets that arrive while more than this many
     bytes are queued; 0 disables marking. */
  uint64_t ecn_bytes;
} netsim_linkcfg;

/* netsim_linkcfg_default fills |c|: 100 Gb/s, 1 us, 200 KB queue, no
   ECN. */
void netsim_linkcfg_default(netsim_linkcfg *c);

/* netsim_sim_new creates an empty simulation at time 0.  |mem| may be NULL
   for netsim_mem_default().  Returns 0, NETSIM_ERR_INVAL or
   NETSIM_ERR_NOMEM. */
int netsim_sim_new(netsim_sim **psim, const netsim_settings *s,
                   const netsim_mem *mem);

/* netsim_sim_del frees |sim| and everything in it (NULL is fine). */
void netsim_sim_del(netsim_sim *sim);

/* netsim_sim_evl returns the simulation's event list, for timers. */
netsim_evl *netsim_sim_evl(netsim_sim *sim);

/* netsim_sim_pool returns the simulation's packet pool. */
netsim_pktpool *netsim_sim_pool(netsim_sim *sim);

/* netsim_sim_now returns the current virtual time. */
netsim_time netsim_sim_now(const netsim_sim *sim);

/* netsim_sim_seed returns the master seed. */
uint64_t netsim_sim_seed(const netsim_sim *sim);

/* netsim_sim_run_until runs the simulation up to |until|.  Returns the
   number of events fired. */
uint64_t netsim_sim_run_until(netsim_sim *sim, netsim_time until);

/* netsim_sim_pkt_alloc takes a zeroed packet from the simulation's pool
   for the caller to fill and send.  Returns 0, or NETSIM_ERR_POOL. */
int netsim_sim_pkt_alloc(netsim_sim *sim, netsim_pkt **ppkt);

/* netsim_sim_pkt_free returns |pkt| to the simulation's pool. */
void netsim_sim_pkt_free(netsim_sim *sim, netsim_pkt *pkt);

/* Building a network by hand (the topology builders use the same calls).
   Node ids number hosts and switches together in creation order. */

/* netsim_sim_add_host adds a host with one NIC port; its address is
   NETSIM_ADDR_BASE + its host index.  Returns 0, NETSIM_ERR_STATE (routes
   were already built) or NETSIM_ERR_NOMEM. */
int netsim_sim_add_host(netsim_sim *sim, netsim_host **phost);

/* netsim_sim_add_switch adds a switch with |n_ports| ports (1..65535);
   its ECMP seed is derived from the master seed and its switch index.
   Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_sim_add_switch(netsim_sim *sim, uint32_t n_ports,
                          netsim_switch **psw);

/* netsim_sim_connect joins port |port_a| of node |a| and port |port_b| of
   node |b| with a cable: link a->b configured by |ab| and link b->a by
   |ba|.  The a->b link gets id |*plink| (if not NULL), b->a the next id.
   Returns 0, NETSIM_ERR_INVAL (bad node, port already used, bad config),
   NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_sim_connect(netsim_sim *sim, uint32_t a, uint32_t port_a, uint32_t b,
                       uint32_t port_b, const netsim_linkcfg *ab,
                       const netsim_linkcfg *ba, uint32_t *plink);

/* netsim_sim_build_routes computes every switch's ECMP next-hop sets by
   breadth-first search over the links routing considers up.  The builders
   call it; call it after building by hand.  Returns 0, NETSIM_ERR_STATE
   (a host has no NIC link) or NETSIM_ERR_NOMEM. */
int netsim_sim_build_routes(netsim_sim *sim);

/* netsim_sim_n_hosts, _n_switches, _n_links and _n_nodes count them. */
uint32_t netsim_sim_n_hosts(const netsim_sim *sim);
uint32_t netsim_sim_n_switches(const netsim_sim *sim);
uint32_t netsim_sim_n_links(const netsim_sim *sim);
uint32_t netsim_sim_n_nodes(const netsim_sim *sim);

/* netsim_sim_host returns host |idx|, or NULL. */
netsim_host *netsim_sim_host(netsim_sim *sim, uint32_t idx);

/* netsim_sim_switch returns switch |idx| (creation order), or NULL. */
netsim_switch *netsim_sim_switch(netsim_sim *sim, uint32_t idx);

/* netsim_sim_link returns link |id|, or NULL. */
netsim_link *netsim_sim_link(netsim_sim *sim, uint32_t id);

/* netsim_sim_host_by_addr returns the host with address |addr|, or
   NULL. */
netsim_host *netsim_sim_host_by_addr(netsim_sim *sim, netsim_addr addr);

/* netsim_sim_count_paths returns the number of distinct equal-cost paths
   routing offers from host |src| to host |dst| (the product of ECMP
   fan-outs along the shortest-path DAG, counted as paths), or 0 if there is
   none. */
uint64_t netsim_sim_count_paths(netsim_sim *sim, uint32_t src, uint32_t dst);

/* netsim_sim_trace_hash returns the running hash of every packet event
   (arrival at the end of a link, drop) with its time, link and packet: two
   runs with equal hashes did the same thing in the same order. */
uint64_t netsim_sim_trace_hash(const netsim_sim *sim);

/* Why a packet was dropped. */
typedef enum netsim_drop_reason {
  /* NETSIM_DROP_QUEUE: the output queue was full (drop-tail). */
  NETSIM_DROP_QUEUE = 0,
  /* NETSIM_DROP_LINK_DOWN: sent onto, queued on or in flight on a link
     that is down (the blackhole before reconvergence). */
  NETSIM_DROP_LINK_DOWN,
  /* NETSIM_DROP_LOSS: random loss on the link. */
  NETSIM_DROP_LOSS,
  /* NETSIM_DROP_NO_ROUTE: no next hop for the destination. */
  NETSIM_DROP_NO_ROUTE,
  /* NETSIM_DROP_TTL: the packet crossed max_hops links. */
  NETSIM_DROP_TTL,
  NETSIM_DROP_REASONS
} netsim_drop_reason;

/* netsim_drop_cb is told of each drop before the packet returns to the
   pool; it must not keep |pkt|.  |link| is where it happened (NULL for a
   switch's routing drops). */
typedef void (*netsim_drop_cb)(netsim_sim *sim, const netsim_pkt *pkt,
                               netsim_drop_reason why, netsim_link *link,
                               void *user);

/* netsim_sim_set_drop_cb installs |cb| (NULL to remove) and returns the
   previous one in |*prev| and |*prev_user| (either may be NULL), so that
   hooks can chain. */
void netsim_sim_set_drop_cb(netsim_sim *sim, netsim_drop_cb cb, void *user,
                            netsim_drop_cb *prev, void **prev_user);

/* netsim_tap_cb sees every packet as it reaches the end of |link| (for
   pcap and tracing), and a duplicating link's copy when it is delivered
   (NETSIM_PKT_DUP set); it must not keep or change |pkt|. */
typedef void (*netsim_tap_cb)(netsim_sim *sim, const netsim_pkt *pkt,
                              const netsim_link *link, void *user);

/* netsim_sim_set_tap installs |cb| (NULL to remove). */
void netsim_sim_set_tap(netsim_sim *sim, netsim_tap_cb cb, void *user);

/* netsim_dup_cb is told of each copy a duplicating link makes
   (netsim_link_set_dup), when it makes it: |copy| is a clone of |orig|
   (every field a transport fills, and the carried bytes, copied;
   NETSIM_PKT_DUP set).  A transport whose packets refer to state of its
   own outside them (|flow| or |tag| naming a buffer, say) duplicates that
   state here, or refuses the copy.  Return 0 to let the copy go; anything
   else has netsim free it unsent, counted as dup_skipped (the drop
   callback is not told).  It must not keep |copy| or send either packet,
   and it passes the packets it does not own to the previous callback. */
typedef int (*netsim_dup_cb)(netsim_sim *sim, const netsim_pkt *orig,
                             netsim_pkt *copy, void *user);

/* netsim_sim_set_dup_cb installs |cb| (NULL to remove) and returns the
   previous one in |*prev| and |*prev_user| (either may be NULL), so that
   hooks can chain. */
void netsim_sim_set_dup_cb(netsim_sim *sim, netsim_dup_cb cb, void *user,
                           netsim_dup_cb *prev, void **prev_user);

/* netsim_sim_stats counts what happened in the whole network. */
typedef struct netsim_sim_stats {
  /* events is the number of events fired. */
  uint64_t events;
  /* hops is the number of packets that reached the end of a link. */
  uint64_t hops;
  /* sent is the number of packets hosts handed to netsim_host_send. */
  uint64_t sent;
  /* delivered is the number of packets that reached their host. */
  uint64_t delivered;
  /* delivered_bytes is their size in bytes. */
  uint64_t delivered_bytes;
  /* drops counts drops by netsim_drop_reason. */
  uint64_t drops[NETSIM_DROP_REASONS];
  /* ecn_marked is the number of CE marks applied. */
  uint64_t ecn_marked;
  /* pkts_in_use is the number of packets allocated now. */
  uint32_t pkts_in_use;
  /* reroutes counts routing recomputations after faults. */
  uint32_t reroutes;
  /* corrupted counts packets hit by bit errors, once per link that hit
     them (netsim_link_set_ber); they were delivered, not dropped. */
  uint64_t corrupted;
  /* duplicated counts the copies duplicating links made
     (netsim_link_set_dup), dup_skipped the copies they drew but could not
     make (the packet pool was empty, or the dup callback refused). */
  uint64_t duplicated;
  uint64_t dup_skipped;
} netsim_sim_stats;

/* netsim_sim_get_stats copies the counters into |st|. */
void netsim_sim_get_stats(const netsim_sim *sim, netsim_sim_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_SIM_API_H */
