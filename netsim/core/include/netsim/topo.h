/*
 * <netsim/topo.h>: topologies: fat trees, leaf-spine fabrics and dumbbells
 * (docs/netsim.md, "Topologies and addressing"). Part of netsim's API:
 * include <netsim/netsim.h>, which includes this header after the ones whose
 * types it uses.
 */
#ifndef NETSIM_TOPO_API_H
#define NETSIM_TOPO_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/topo.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_topo_info says what a builder made.  Host i is node i; switches
   are numbered (netsim_sim_switch) in the order listed per builder. */
typedef struct netsim_topo_info {
  /* n_hosts, n_switches and n_links count what the builder added. */
  uint32_t n_hosts;
  uint32_t n_switches;
  uint32_t n_links;
  /* tier_first[t] is the index of the first switch of tier t (0: ToR or
     edge or the left switch, 1: aggregation or spine or the right switch,
     2: core) and tier_count[t] how many there are. */
  uint32_t tier_first[3];
  uint32_t tier_count[3];
  /* uplink_first is the id of the first switch-to-switch link. */
  uint32_t uplink_first;
} netsim_topo_info;

/* netsim_fattree_settings describes a k-ary three-tier fat tree (Al-Fares
   et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation switches,
   (k/2)^2 core switches, k^3/4 hosts. */
typedef struct netsim_fattree_settings {
  /* k is even, 2..64. */
  uint32_t k;
  /* host is the host<->edge cable; host.queue_bytes is also the NIC
     queue (see nic_queue_bytes). */
  netsim_linkcfg host;
  /* edge_agg is the edge<->aggregation cable. */
  netsim_linkcfg edge_agg;
  /* agg_core is the aggregation<->core cable. */
  netsim_linkcfg agg_core;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
} netsim_fattree_settings;

/* netsim_fattree_settings_default fills |s| for |k| with
   netsim_linkcfg_default() everywhere and a 1 MiB NIC queue. */
void netsim_fattree_settings_default(netsim_fattree_settings *s, uint32_t k);

/* netsim_topo_fattree builds a fat tree into the empty |sim| and its
   routes.  Host h sits in pod h / (k^2/4), under edge switch
   (h / (k/2)) % (k/2) of that pod, at edge port h % (k/2).  Switches:
   edges pod by pod, then aggregations pod by pod, then cores.  Edge ports
   0..k/2-1 face hosts, k/2..k-1 aggregation j at port k/2+j; aggregation
   ports 0..k/2-1 face edges, k/2+c core j*(k/2)+c; core port p faces pod
   p.  Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE (|sim| not empty) or
   NETSIM_ERR_NOMEM; |info| may be NULL. */
int netsim_topo_fattree(netsim_sim *sim, const netsim_fattree_settings *s,
                        netsim_topo_info *info);

/* netsim_leafspine_settings describes a two-tier leaf-spine fabric. */
typedef struct netsim_leafspine_settings {
  /* spines, leaves and hosts_per_leaf size the fabric (each >= 1). */
  uint32_t spines;
  uint32_t leaves;
  uint32_t hosts_per_leaf;
  /* host is the host<->leaf cable. */
  netsim_linkcfg host;
  /* fabric is the leaf<->spine cable; if fabric.rate_bps is 0, it is set
     from |oversub|: hosts_per_leaf * host rate / (spines * oversub). */
  netsim_linkcfg fabric;
  /* oversub is the oversubscription ratio (host capacity of a leaf over
     its uplink capacity) used when fabric.rate_bps is 0; 1 = none. */
  double oversub;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
  /* spine_rate_bps, if not NULL, gives each spine's cables a rate of its
     own (spines entries; 0 keeps fabric.rate_bps): an asymmetric fabric. */
  const uint64_t *spine_rate_bps;
} netsim_leafspine_settings;

/* netsim_leafspine_settings_default fills |s| (defaults for links, no
   oversubscription). */
void netsim_leafspine_settings_default(netsim_leafspine_settings *s,
                                       uint32_t spines, uint32_t leaves,
                                       uint32_t hosts_per_leaf);

/* netsim_topo_leafspine builds a leaf-spine fabric into the empty |sim|.
   Host h is under leaf h / hosts_per_leaf at port h % hosts_per_leaf;
   leaf ports hosts_per_leaf + s face spine s; spine port l faces leaf l.
   Switches: leaves, then spines.  Returns 0, NETSIM_ERR_INVAL,
   NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_topo_leafspine(netsim_sim *sim, const netsim_leafspine_settings *s,
                          netsim_topo_info *info);

/* netsim_dumbbell_settings describes two switches joined by N parallel
   links, with hosts on either side: the "parallel paths" fabric. */
typedef struct netsim_dumbbell_settings {
  /* paths is the number of parallel links between the switches (>= 1). */
  uint32_t paths;
  /* hosts_per_side is the number of hosts on each switch (>= 1). */
  uint32_t hosts_per_side;
  /* host is the host<->switch cable. */
  netsim_linkcfg host;
  /* path is every parallel cable's configuration. */
  netsim_linkcfg path;
  /* path_rate_bps, if not NULL, gives path i its own rate (0: path). */
  const uint64_t *path_rate_bps;
  /* path_delay, if not NULL, gives path i its own delay. */
  const netsim_time *path_delay;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
} netsim_dumbbell_settings;

/* netsim_dumbbell_settings_default fills |s|. */
void netsim_dumbbell_settings_default(netsim_dumbbell_settings *s,
                                      uint32_t paths);

/* netsim_topo_dumbbell builds the parallel-paths fabric into the empty
   |sim|: hosts 0..H-1 on switch 0 (left), H..2H-1 on switch 1 (right);
   host ports come first (0..H-1), path i is port H+i on both switches,
   and link ids uplink_first + 2i (left to right) and + 2i+1 (back).
   Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_topo_dumbbell(netsim_sim *sim, const netsim_dumbbell_settings *s,
                         netsim_topo_info *info);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_TOPO_API_H */
