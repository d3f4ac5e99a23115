/*
 * netsim_switch.h: output-queued switches, ECMP, and routing (the
 * shortest-path next-hop sets of every switch).
 */
#ifndef NETSIM_SWITCH_H
#define NETSIM_SWITCH_H

#include <netsim/netsim.h>
#include "netsim_sim.h"

/* netsim_group is an ECMP set: |n| ports at gports[off..off+n-1]. */
typedef struct netsim_group {
  /* off is the first port's index in gports. */
  uint32_t off;
  /* n is the number of ports (0: no route). */
  uint32_t n;
} netsim_group;

struct netsim_switch {
  /* node is the node header (must be first). */
  netsim_node node;
  /* index is the switch's index among switches. */
  uint32_t index;
  /* seed is the ECMP hash seed. */
  uint64_t seed;
  /* route[h] is the group towards host h (n_route entries; group 0 is
     always the empty set). */
  uint16_t *route;
  uint32_t n_route;
  /* groups holds n_groups sets; gports their ports. */
  netsim_group *groups;
  uint32_t n_groups, cap_groups;
  uint16_t *gports;
  uint32_t n_gports, cap_gports;
};

/* netsim_switch_forward routes |pkt|, which just arrived at |sw|, onto
   the output link its ECMP set and hash choose, or drops it. */
void netsim_switch_forward(netsim_sim *sim, netsim_switch *sw, netsim_pkt *pkt);

/* netsim_switch_free frees what |sw| owns (not |sw|). */
void netsim_switch_free(netsim_sim *sim, netsim_switch *sw);

/* netsim_routes_build recomputes every switch's route table from the
   links whose |routed| flag is set.  Returns 0, NETSIM_ERR_STATE or
   NETSIM_ERR_NOMEM (tables may then be partly stale). */
int netsim_routes_build(netsim_sim *sim);

#endif /* NETSIM_SWITCH_H */
