/*
 * netsim_queue.h: a link's output queue (drop-tail with a byte limit and an
 * optional ECN threshold) and the FIFO of packets on the link.
 *
 * The queue is a FIFO served at the link's rate, so a packet's departure
 * time is known the moment it is admitted: netsim computes it then
 * (netsim_link_send) and needs no event when serialisation ends.  The FIFO
 * therefore holds every packet the link owns, in order: those on the wire
 * (t_fin <= now < t_arr), then the queue proper (t_fin > now), whose head
 * is |qhead|.  Occupancy is brought up to date lazily, by
 * netsim_queue_advance, whenever it is read or could decide an admission
 * (netsim_link_send); until then |qhead| may lag behind packets already on
 * the wire, and bytes and pkts count them too.
 */
#ifndef NETSIM_QUEUE_H
#define NETSIM_QUEUE_H

#include <netsim/netsim.h>

typedef struct netsim_queue {
  /* head and tail: every packet on the link, oldest first. */
  netsim_pkt *head;
  netsim_pkt *tail;
  /* qhead is the first packet not yet fully serialised, or one before it
     (see above; NULL: none), and qhead_fin when its serialisation
     ends. */
  netsim_pkt *qhead;
  netsim_time qhead_fin;
  /* bytes and pkts: the occupancy from qhead on. */
  uint32_t bytes;
  uint32_t pkts;
  /* limit is the byte limit; ecn the marking threshold (0: none). */
  uint32_t limit;
  uint32_t ecn;
  /* max_bytes is the deepest occupancy seen (at admission). */
  uint32_t max_bytes;
} netsim_queue;

/* netsim_queue_init empties |q| and sets its limits (in bytes, up to
   UINT32_MAX: larger values are clamped, i.e. no limit). */
void netsim_queue_init(netsim_queue *q, uint64_t limit, uint64_t ecn);

/* netsim_queue_set_limits sets the limits as netsim_queue_init does. */
void netsim_queue_set_limits(netsim_queue *q, uint64_t limit, uint64_t ecn);

/* netsim_queue_advance retires from the occupancy every packet whose
   serialisation ended at or before |now|. */
static inline void netsim_queue_advance(netsim_queue *q, netsim_time now) {
  while (q->qhead && q->qhead_fin <= now) {
    netsim_pkt *p = q->qhead;
    q->bytes -= p->size;
    --q->pkts;
    q->qhead = p->next;
    q->qhead_fin = p->t_next_fin;
  }
}

/* Verdicts of netsim_queue_admit. */
#define NETSIM_QUEUE_ADMIT 0
#define NETSIM_QUEUE_MARK 1
#define NETSIM_QUEUE_FULL 2

/* netsim_queue_admit decides the fate of |pkt| arriving at |now| (after
   netsim_queue_advance): NETSIM_QUEUE_FULL if it does not fit under the
   limit (drop-tail), NETSIM_QUEUE_MARK if it is ECT and more than ecn bytes
   are queued ahead of it (the caller sets CE), else NETSIM_QUEUE_ADMIT. */
static inline int netsim_queue_admit(const netsim_queue *q,
                                     const netsim_pkt *pkt) {
  if ((uint64_t)q->bytes + pkt->size > q->limit) {
    return NETSIM_QUEUE_FULL;
  }
  if (q->ecn && q->bytes > q->ecn && (pkt->flags & NETSIM_PKT_ECT)) {
    return NETSIM_QUEUE_MARK;
  }
  return NETSIM_QUEUE_ADMIT;
}

/* netsim_queue_push appends |pkt|, whose serialisation ends at |fin|
   (t_arr set). */
static inline void netsim_queue_push(netsim_queue *q, netsim_pkt *pkt,
                                     netsim_time fin) {
  pkt->next = NULL;
  if (q->tail) {
    q->tail->next = pkt;
    q->tail->t_next_fin = fin;
    q->tail->t_next_arr = pkt->t_arr;
  } else {
    q->head = pkt;
  }
  q->tail = pkt;
  if (q->qhead == NULL) {
    q->qhead = pkt;
    q->qhead_fin = fin;
  }
  q->bytes += pkt->size;
  ++q->pkts;
  if (q->bytes > q->max_bytes) {
    q->max_bytes = q->bytes;
  }
}

/* netsim_queue_pop removes and returns the FIFO's head, which has arrived
   and so finished serialising: if the occupancy still counts it, it is
   retired first. */
static inline netsim_pkt *netsim_queue_pop(netsim_queue *q) {
  netsim_pkt *p = q->head;

  if (q->qhead == p) {
    q->bytes -= p->size;
    --q->pkts;
    q->qhead = p->next;
    q->qhead_fin = p->t_next_fin;
  }
  q->head = p->next;
  if (q->head == NULL) {
    q->tail = NULL;
  }
  p->next = NULL;
  return p;
}

/* netsim_queue_take_all detaches and returns the whole FIFO (a link went
   down) and empties the occupancy. */
netsim_pkt *netsim_queue_take_all(netsim_queue *q);

#endif /* NETSIM_QUEUE_H */
