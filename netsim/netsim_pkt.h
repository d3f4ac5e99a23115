/*
 * netsim_pkt.h: the packet pool.
 */
#ifndef NETSIM_PKT_H
#define NETSIM_PKT_H

#include "netsim.h"

/* Values of netsim_pkt.state. */
#define NETSIM_PKT_STATE_FREE 0x46524545u
#define NETSIM_PKT_STATE_USED 0x55534544u

struct netsim_pktpool {
  /* mem allocated the arrays below. */
  netsim_mem mem;
  /* pkts is the array of |n| packets, aligned, in pkts_mem. */
  netsim_pkt *pkts;
  void *pkts_mem;
  uint32_t n;
  /* free is a stack of |nfree| free packets (last freed, first reused:
     its memory is still in cache). */
  netsim_pkt **free;
  uint32_t nfree;
  /* payloads is |n_payloads| buffers of |payload_max| bytes; pfree is the
     stack of |npfree| free buffer indices. */
  uint8_t *payloads;
  uint32_t payload_max;
  uint32_t n_payloads;
  uint32_t *pfree;
  uint32_t npfree;
};

#endif /* NETSIM_PKT_H */
