/*
 * netsim_host.h: hosts, each with one NIC port into its switch.
 */
#ifndef NETSIM_HOST_H
#define NETSIM_HOST_H

#include <netsim/netsim.h>
#include "netsim_sim.h"

struct netsim_host {
  /* node is the node header (must be first). */
  netsim_node node;
  /* nic is node.out[0]'s storage: a host has one port. */
  netsim_link *nic;
  /* index is the host index; addr its address. */
  uint32_t index;
  netsim_addr addr;
  /* rx_cb and rx_user receive packets. */
  netsim_host_rx_cb rx_cb;
  void *rx_user;
  /* rx_pkts counts packets delivered here. */
  uint64_t rx_pkts;
};

/* netsim_host_deliver hands |pkt|, which reached |host|, to its receive
   callback (or frees it). */
void netsim_host_deliver(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt);

#endif /* NETSIM_HOST_H */
