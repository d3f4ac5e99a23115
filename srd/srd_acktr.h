/*
 * srd_acktr.h: receive-side packet tracking and acknowledgement building.
 *
 * Packet numbers are never reused (a retransmission gets a new one), so
 * there is no cumulative point to hold back: like QUIC (RFC 9000 19.3) an
 * ACK names the largest packet received and the ranges below it.  The
 * tracker keeps a bitmap of the last |window| packet numbers below the
 * largest; older ones are neither tracked nor acknowledged.
 *
 * Every data packet's send timestamp is echoed with how long the receiver
 * held it before acknowledging, so the sender gets one RTT sample per data
 * packet, free of acknowledgement delay.
 *
 * Every function below is defined in srd_acktr.c.  A tracker lives in
 * caller storage (one per peer, in srd_peer); only srd_acktr_init and
 * srd_acktr_fini allocate and free, through the srd_mem they are given.
 * None of the others can fail.
 */
#ifndef SRD_ACKTR_H
#define SRD_ACKTR_H

#include <stdint.h>

#include <srd/srd.h>

#include "srd_pkt.h"

/* srd_acktr_check results. */
#define SRD_ACKTR_NEW 0 /* never seen: accept and then record it */
#define SRD_ACKTR_DUP 1 /* already recorded */
#define SRD_ACKTR_OLD 2 /* below the tracked window */

/* srd_acktr_echo is a received data packet whose timestamp waits to be
   echoed. */
typedef struct srd_acktr_echo {
  uint64_t tx_ts;   /* the data packet's tx_ts */
  uint32_t seq;     /* its packet number */
  srd_tstamp rx_ts; /* when it arrived */
  uint16_t path;    /* the path it came on */
} srd_acktr_echo;

/* srd_acktr is one peer's receive-side tracker. */
typedef struct srd_acktr {
  /* bits has one bit per packet number, indexed seq & mask. */
  uint64_t *bits;
  uint32_t window; /* packet numbers tracked, a power of two */
  uint32_t mask;   /* window - 1 */
  /* largest is the largest packet number recorded, if have_largest. */
  uint32_t largest;
  int have_largest;
  /* echo holds timestamps to return, oldest first (a ring). */
  srd_acktr_echo echo[SRD_ACK_MAX_ECHO];
  uint32_t echo_head; /* the oldest echo */
  uint32_t n_echo;    /* echoes waiting */
  /* nack is a ring of rejections to send, as large as the window: a
     refused packet is never forgotten (the sender would count it lost). */
  srd_pkt_nack *nack;
  uint32_t nack_head; /* the oldest */
  uint32_t n_nack;    /* waiting */
  /* unacked counts packets recorded since the last ACK. */
  uint32_t unacked;
  /* first_unacked_ts is when the oldest of them arrived. */
  srd_tstamp first_unacked_ts;
  /* immediate asks for an ACK without waiting (duplicates, NACKs). */
  int immediate;
  const srd_mem *mem; /* what init allocated with (kept) */
} srd_acktr;

/* srd_acktr_init makes |at| (caller storage, any contents) track |window|
   packet numbers, a power of two from 64 to 65536 (asserted), allocating
   its bitmap and NACK ring from |mem|, which it keeps: |mem| must outlive
   |at|.

   Returns 0, or SRD_ERR_NOMEM (nothing is left allocated; srd_acktr_fini
   is still safe to call). */
int srd_acktr_init(srd_acktr *at, uint32_t window, const srd_mem *mem);

/* srd_acktr_fini frees |at|'s storage.  Calling it again, or after a
   failed srd_acktr_init, is harmless. */
void srd_acktr_fini(srd_acktr *at);

/* srd_acktr_reset forgets every packet, echo and NACK (a new session),
   keeping its storage. */
void srd_acktr_reset(srd_acktr *at);

/* srd_acktr_check says whether |seq| is SRD_ACKTR_NEW (above the largest
   recorded, or below it inside the window and not recorded), _DUP
   (recorded) or _OLD (a window or more below the largest).  It changes
   nothing. */
int srd_acktr_check(const srd_acktr *at, uint32_t seq);

/* srd_acktr_record records |seq| (which srd_acktr_check found new) as
   received at |now|, with the data packet's |tx_ts| and |path| to echo:
   a |seq| above the largest slides the window up to it.  When
   SRD_ACK_MAX_ECHO echoes already wait, the oldest is dropped (the sender
   gets one sample fewer).  Precondition: |seq| is new (recording one
   twice would count it twice towards ack_freq and echo it twice). */
void srd_acktr_record(srd_acktr *at, uint32_t seq, uint64_t tx_ts,
                      uint16_t path, srd_tstamp now);

/* srd_acktr_add_nack queues a rejection of packet |seq| of message
   |msg_id| for |reason| and asks for an immediate ACK.  The queue holds a
   window's worth; each ACK carries SRD_ACK_MAX_NACK of them, and ACKs stay
   due until the queue is empty.  (Only a sender exceeding the window can
   overflow it; the overflow is then left to its loss detection: a NACK
   that finds the queue full is dropped silently.) */
void srd_acktr_add_nack(srd_acktr *at, uint32_t seq, uint32_t msg_id,
                        uint8_t reason);

/* srd_acktr_add_note queues, in the same queue, a notice about message
   |msg_id| that a retransmission (packet |seq|) found complete
   (SRD_NACK_DONE, |frag| 0) or holding fragment |frag| (SRD_NACK_HAVE),
   and asks for an immediate ACK.  |reason| is any SRD_NACK_*:
   srd_acktr_add_nack is this function with |frag| 0.  A full queue drops
   the notice, as srd_acktr_add_nack does. */
void srd_acktr_add_note(srd_acktr *at, uint32_t seq, uint32_t msg_id,
                        uint8_t reason, uint32_t frag);

/* srd_acktr_ack_due returns nonzero if an ACK should be sent now: one was
   asked for at once (a duplicate, a NACK waiting), |ack_freq| packets wait
   for one, or the oldest has waited |ack_delay|.  It changes nothing. */
int srd_acktr_ack_due(const srd_acktr *at, srd_tstamp now, uint32_t ack_freq,
                      srd_duration ack_delay);

/* srd_acktr_deadline returns when a delayed ACK falls due, or
   SRD_TSTAMP_NONE if none is waiting or one is due regardless of time
   (immediate, NACKs waiting, |ack_freq| reached).  It changes nothing. */
srd_tstamp srd_acktr_deadline(const srd_acktr *at, uint32_t ack_freq,
                              srd_duration ack_delay);

/* srd_acktr_build fills |a| (caller storage) with the current state at
   |now|: the largest packet and up to SRD_ACK_MAX_RANGES ranges below it
   (empty if nothing was ever recorded), every waiting echo with how long
   its packet was held, and up to SRD_ACK_MAX_NACK NACKs.  It clears what
   it took (echoes, those NACKs, the unacked count); NACKs left over keep
   the next ACK due at once. */
void srd_acktr_build(srd_acktr *at, srd_pkt_ack *a, srd_tstamp now);

/* srd_acktr_build_max is srd_acktr_build with at most |max_ranges| ranges
   (an acknowledgement riding on data), |max_ranges| <=
   SRD_ACK_MAX_RANGES.  The caller checks that what it builds may ride
   (no NACKs, few enough echoes: srd_tx.c's piggy_ok). */
void srd_acktr_build_max(srd_acktr *at, srd_pkt_ack *a, srd_tstamp now,
                         uint32_t max_ranges);

#endif /* SRD_ACKTR_H */
