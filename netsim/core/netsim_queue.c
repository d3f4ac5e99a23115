/*
 * netsim_queue.c: the out-of-line part of the output queue; the hot path
 * is inline in netsim_queue.h.
 */
#include "netsim_queue.h"

#include <string.h>

void netsim_queue_set_limits(netsim_queue *q, uint64_t limit, uint64_t ecn) {
  q->limit = limit > UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
  q->ecn = ecn > UINT32_MAX ? UINT32_MAX : (uint32_t)ecn;
}

void netsim_queue_init(netsim_queue *q, uint64_t limit, uint64_t ecn) {
  memset(q, 0, sizeof(*q));
  netsim_queue_set_limits(q, limit, ecn);
}

netsim_pkt *netsim_queue_take_all(netsim_queue *q) {
  netsim_pkt *p = q->head;

  q->head = q->tail = q->qhead = NULL;
  q->bytes = 0;
  q->pkts = 0;
  return p;
}
