/*
 * netsim_pkt.h: the packet pool.
 */
#ifndef NETSIM_PKT_H
#define NETSIM_PKT_H

#include <netsim/netsim.h>

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
  /* free is a stack of |nfree| freed packets (last freed, first reused:
     its memory is still in cache); packets from |fresh| on were never
     used, and are handed out in order when the stack is empty.  Memory
     is thus written only as far as the pool is used: a pool sized for the
     worst case costs address space, not resident memory. */
  netsim_pkt **free;
  uint32_t nfree;
  uint32_t fresh;
  /* payloads is |n_payloads| buffers of |payload_max| bytes; pfree is the
     stack of |npfree| freed buffer indices, and buffers from |pfresh| on
     were never used (as for packets). */
  uint8_t *payloads;
  uint32_t payload_max;
  uint32_t n_payloads;
  uint32_t *pfree;
  uint32_t npfree;
  uint32_t pfresh;
};

/* netsim_pkt_clone takes a packet from |pool| and makes it a copy of
   |src|: the 5-tuple, size, flags, hop count, uid, flow, tag, send time
   and the payload_len carried bytes (inline if they fit, else in a pool
   buffer of its own); the FIFO fields are not copied.  Returns 0, or
   NETSIM_ERR_POOL (no packet or payload buffer: nothing is taken). */
int netsim_pkt_clone(netsim_pktpool *pool, const netsim_pkt *src,
                     netsim_pkt **pdst);

#endif /* NETSIM_PKT_H */
