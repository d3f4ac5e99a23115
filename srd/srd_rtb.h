/*
 * srd_rtb.h: the sent-packet ring of one peer.  Data packets get
 * consecutive packet numbers, so the ring is indexed by number: O(1) to
 * add, find and retire.  The live span [head, next) holds every packet
 * still in flight; it never exceeds the ring's size, which bounds the
 * packets in flight per peer.
 *
 * The functions below are defined in srd_rtb.c (the static inline ones
 * here).  A ring lives in caller storage (srd_peer.rtb); only
 * srd_rtb_init and srd_rtb_fini allocate and free.  Packet numbers
 * compare with wrap-around (srd_seq_lt): a session starts just below the
 * wrap on purpose (srd_wrap_early).
 */
#ifndef SRD_RTB_H
#define SRD_RTB_H

#include <stdint.h>

#include <srd/srd.h>

/* Entry states. */
#define SRD_RTB_FREE 0     /* not a live entry */
#define SRD_RTB_INFLIGHT 1 /* sent, neither acknowledged nor lost */
#define SRD_RTB_ACKED 2    /* acknowledged */
#define SRD_RTB_LOST 3     /* declared lost (a late ACK is spurious) */
#define SRD_RTB_NACKED 4   /* rejected by the receiver (RNR) */

/* srd_rtb_ent is one data packet sent (the ring's entry for its number). */
typedef struct srd_rtb_ent {
  srd_tstamp tx_ts; /* when it was sent */
  uint32_t seq;     /* its packet number */
  uint32_t slot;    /* the send slot of its message */
  uint32_t msg_id;  /* its message (to detect a reused slot) */
  uint32_t frag;    /* fragment index in the message */
  uint32_t bytes;   /* datagram bytes, counted in flight */
  uint16_t path;    /* path it went out on */
  uint8_t state;    /* SRD_RTB_* */
  uint8_t tx_count; /* transmissions of this fragment so far */
} srd_rtb_ent;

/* srd_rtb is the sent-packet ring of one peer. */
typedef struct srd_rtb {
  srd_rtb_ent *ents; /* size entries, indexed by packet number & mask */
  uint32_t size;     /* a power of two: settings.pkt_window */
  uint32_t mask;     /* size - 1 */
  /* head is the oldest live packet number; next the next one to use. */
  uint32_t head;
  uint32_t next;
  /* inflight_pkts and inflight_bytes count INFLIGHT entries. */
  uint32_t inflight_pkts;
  uint64_t inflight_bytes;
  const srd_mem *mem; /* what init allocated with (kept) */
} srd_rtb;

/* srd_rtb_init makes |rtb| (caller storage, any contents) an empty ring
   of |size| entries (a power of two, asserted), numbering from 0,
   allocated from |mem|, which it keeps: |mem| must outlive |rtb|.

   Returns 0, or SRD_ERR_NOMEM (nothing is left allocated; srd_rtb_fini
   is still safe to call). */
int srd_rtb_init(srd_rtb *rtb, uint32_t size, const srd_mem *mem);

/* srd_rtb_fini frees the ring's entries.  Calling it again, or after a
   failed srd_rtb_init, is harmless. */
void srd_rtb_fini(srd_rtb *rtb);

/* srd_rtb_reset empties the ring (every entry FREE, nothing in flight)
   and starts numbering at |first_seq|, keeping its storage. */
void srd_rtb_reset(srd_rtb *rtb, uint32_t first_seq);

/* srd_rtb_full returns nonzero if no packet number is free. */
static inline int srd_rtb_full(const srd_rtb *rtb) {
  return rtb->next - rtb->head >= rtb->size;
}

/* srd_rtb_add takes the next packet number for a packet of |bytes|
   datagram bytes and returns its entry, INFLIGHT and counted in flight,
   with seq, state and bytes set; the caller fills the rest (tx_ts, slot,
   msg_id, frag, path, tx_count).  The entry stays valid until it is
   retired.  Precondition: the ring is not full (srd_rtb_full; asserted). */
srd_rtb_ent *srd_rtb_add(srd_rtb *rtb, uint32_t bytes);

/* srd_rtb_get returns the live entry for |seq|, or NULL if |seq| is
   outside [head, next) or its entry was retired.  Any |seq| is allowed
   (it may come from the wire). */
static inline srd_rtb_ent *srd_rtb_get(srd_rtb *rtb, uint32_t seq) {
  srd_rtb_ent *e;

  if (seq - rtb->head >= rtb->next - rtb->head) {
    return NULL;
  }
  e = &rtb->ents[seq & rtb->mask];
  return e->seq == seq && e->state != SRD_RTB_FREE ? e : NULL;
}

/* srd_rtb_leave_flight moves INFLIGHT entry |e| to |state| (ACKED, LOST
   or NACKED) and takes its bytes out of flight.  Precondition (asserted):
   |e| is INFLIGHT and |state| is not. */
void srd_rtb_leave_flight(srd_rtb *rtb, srd_rtb_ent *e, uint8_t state);

/* srd_rtb_retire frees entries at the head that are no longer in flight.
   LOST entries sent at or after |keep_lost_from| are kept, so that a late
   acknowledgement still finds them and counts as a spurious loss; the
   ring drops them anyway when it is full. */
void srd_rtb_retire(srd_rtb *rtb, srd_tstamp keep_lost_from);

/* srd_rtb_oldest returns the oldest INFLIGHT entry, or NULL if nothing is
   in flight (a scan from head: O(1) in the common case, where the head is
   in flight). */
srd_rtb_ent *srd_rtb_oldest(srd_rtb *rtb);

#endif /* SRD_RTB_H */
