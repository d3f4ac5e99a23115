/*
 * sim_srd.h: the SRD engine (libsrd, unmodified) in every host of a
 * netsim simulation.
 *
 * Each host runs one srd_ep driven by the packet loop of
 * docs/programmers-guide.md in virtual time: packets that reach the host
 * go to srd_ep_read_pktv, packets the engine writes with
 * srd_ep_write_pktv leave through the host's NIC, and one netsim timer
 * per host sits at srd_ep_get_expiry().  The engine's path index becomes
 * the UDP source port of the packet's 5-tuple (sport_base + path), so
 * the switches' ECMP hashing fans a peer's packets out over the fabric.
 * See docs/netsim.md, "SRD in the hosts".
 *
 * The functions below are defined in sim_srd.c.  They return netsim's
 * codes (NETSIM_ERR_*, netsim_strerror names them); a message the engine
 * fails carries the engine's code instead (simx_msg.status, a negative
 * SRD_ERR_*: srd_strerror names it).  The instance is driven from netsim
 * events in one thread, like the simulation it is attached to.
 */
#ifndef SIM_SRD_H
#define SIM_SRD_H

#include <srd/srd.h>

#include "simx.h"

/* sim_srd_cfg configures SRD in every host. */
typedef struct sim_srd_cfg {
  /* ep is the engine's settings; seed is replaced per host (derived from
     |seed| and the host index), and max_recvs is set to recv_depth.  Pool
     sizes left 0 get a size for a host with a few peers: max_peers 8,
     max_sends 64 (at most mtu - 1: send slots double as payload
     offsets), msg_window 64, pkt_window 128; the scenario runner sizes
     them from the workload instead.  ep.cc is only read, during
     sim_srd_new. */
  srd_settings ep;
  /* peer is every peer's settings (paths, ordered delivery). */
  srd_peer_settings peer;
  /* seed is the run's seed. */
  uint64_t seed;
  /* recv_depth is how many receives each host keeps posted (0: 32). */
  uint32_t recv_depth;
  /* sport_base is the UDP source port of path 0; dport the destination
     port. */
  uint16_t sport_base;
  uint16_t dport;
  /* nic_limit_bytes: the driver stops writing while the NIC queue holds
     this many bytes (a NIC ring's backpressure), and resumes when half of
     it has drained (0: four of the largest packets, 4 x (mtu + 128)). */
  uint32_t nic_limit_bytes;
} sim_srd_cfg;

/* sim_srd_cfg_default fills |c|: the engine's defaults (srd_settings_default)
   with every pool size 0 (sized by sim_srd_new, or the runner), no
   payload CRC (payloads travel by length only: there are no bytes to
   check; the header CRC stays), 64 paths, unordered, seed 1, recv_depth
   0, UDP ports 49152 + path to 4791, nic_limit_bytes 0. */
void sim_srd_cfg_default(sim_srd_cfg *c);

/* sim_srd_new attaches SRD to every host of |sim| (after the topology is
   built), reporting to |app|, and stores it in |*px| (only on success).
   |c| and |app| are copied; |sim| is kept and must outlive the instance:
   simx_del it before netsim_sim_del.  It takes over each host's receive
   callback and chains itself before the simulation's drop and
   duplicate callbacks, giving them back at simx_del.

   Returns 0, or one of (|err|, if not NULL, gets a message of at most
   |errlen| bytes where one is given):
   NETSIM_ERR_INVAL  ep.mtu below 256 (message); a host without a NIC
                     (message); the engine refused its settings
                     (message: srd_strerror's); a host's initial
                     receives could not be posted (message)
   NETSIM_ERR_NOMEM  allocation failed */
int sim_srd_new(simx **px, netsim_sim *sim, const sim_srd_cfg *c,
                const simx_app *app, char *err, size_t errlen);

/* sim_srd_ep returns host |idx|'s endpoint, or NULL if |idx| is not a
   host.  It is the instance's: read its statistics, never drive it or
   free it; it is valid until simx_del. */
srd_ep *sim_srd_ep(simx *x, uint32_t idx);

/* sim_srd_peer returns host |idx|'s peer id for host |other| (to pass
   to srd_ep_get_peer_stats on sim_srd_ep(x, idx)), or UINT32_MAX if
   they never talked or |idx| is not a host. */
uint32_t sim_srd_peer(simx *x, uint32_t idx, uint32_t other);

/* sim_srd_side_held returns how many side buffers (the headers too large
   for a pool payload buffer) packets in the network hold now: 0 once it
   is empty, and never below (each packet, copies included, returns its
   own once). */
int64_t sim_srd_side_held(simx *x);

#endif /* SIM_SRD_H */
