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
 */
#ifndef SIM_SRD_H
#define SIM_SRD_H

#include <srd/srd.h>

#include "simx.h"

/* sim_srd_cfg configures SRD in every host. */
typedef struct sim_srd_cfg {
  /* ep is the engine's settings; seed is replaced per host (derived from
     |seed| and the host index), max_sends and max_recvs are raised to
     what the driver needs. */
  srd_settings ep;
  /* peer is every peer's settings (paths, ordered delivery). */
  srd_peer_settings peer;
  /* seed is the run's seed. */
  uint64_t seed;
  /* recv_depth is how many receives each host keeps posted. */
  uint32_t recv_depth;
  /* sport_base is the UDP source port of path 0; dport the destination
     port. */
  uint16_t sport_base;
  uint16_t dport;
  /* nic_limit_bytes: the driver stops writing while the NIC queue holds
     this many bytes (a NIC ring's backpressure), and resumes when half of
     it has drained. */
  uint32_t nic_limit_bytes;
} sim_srd_cfg;

/* sim_srd_cfg_default fills |c|: the engine's defaults with a window and
   pools sized for a simulated host, 64 paths, unordered. */
void sim_srd_cfg_default(sim_srd_cfg *c);

/* sim_srd_new attaches SRD to every host of |sim| (after the topology is
   built), reporting to |app|, and stores it in |*px|.  Returns 0,
   NETSIM_ERR_INVAL (an engine setting was refused: the message says
   which in |err| if not NULL, |errlen| bytes) or NETSIM_ERR_NOMEM. */
int sim_srd_new(simx **px, netsim_sim *sim, const sim_srd_cfg *c,
                const simx_app *app, char *err, size_t errlen);

/* sim_srd_ep returns host |idx|'s endpoint (for statistics), or NULL. */
srd_ep *sim_srd_ep(simx *x, uint32_t idx);

/* sim_srd_peer returns host |idx|'s peer id for host |other|, or
   UINT32_MAX if they never talked. */
uint32_t sim_srd_peer(simx *x, uint32_t idx, uint32_t other);

/* sim_srd_side_held returns how many side buffers (the headers too large
   for a pool payload buffer) packets in the network hold now: 0 once it
   is empty, and never below (each packet, copies included, returns its
   own once). */
int64_t sim_srd_side_held(simx *x);

#endif /* SIM_SRD_H */
