/*
 * <netsim/link.h>: links and their output queues: what a link reports and
 * the changes a run may make to it (docs/netsim.md, "Links and queues").
 * Part of netsim's API: include <netsim/netsim.h>, which includes this
 * header after the ones whose types it uses.
 */
#ifndef NETSIM_LINK_API_H
#define NETSIM_LINK_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/link.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_link_info describes a link (one direction of a cable). */
typedef struct netsim_link_info {
  /* id is the link's id; its reverse direction is |peer|. */
  uint32_t id;
  /* peer is the id of the link in the other direction. */
  uint32_t peer;
  /* from_node and from_port: where the link (and its queue) starts. */
  uint32_t from_node;
  uint32_t from_port;
  /* to_node and to_port: where it ends. */
  uint32_t to_node;
  uint32_t to_port;
  /* rate_bps is the current rate (degraded or not). */
  uint64_t rate_bps;
  /* base_rate_bps is the configured rate. */
  uint64_t base_rate_bps;
  /* delay is the propagation delay. */
  netsim_time delay;
  /* queue_bytes is the queue's byte limit. */
  uint64_t queue_bytes;
  /* ecn_bytes is the marking threshold (0: none). */
  uint64_t ecn_bytes;
  /* loss is the random loss probability. */
  double loss;
  /* ber is the bit-error rate (netsim_link_set_ber). */
  double ber;
  /* dup is the duplication probability and dup_delay how much later a
     copy follows its original (netsim_link_set_dup). */
  double dup;
  netsim_time dup_delay;
  /* up is 1 if the link carries packets. */
  int up;
  /* routed is 1 if routing uses the link (lags |up| by reconvergence). */
  int routed;
} netsim_link_info;

/* netsim_link_stats counts one link and its queue. */
typedef struct netsim_link_stats {
  /* enq_pkts and enq_bytes: packets admitted to the queue. */
  uint64_t enq_pkts;
  uint64_t enq_bytes;
  /* rx_pkts and rx_bytes: packets that reached the far end (before
     random loss is applied there). */
  uint64_t rx_pkts;
  uint64_t rx_bytes;
  /* drops counts drops on this link by netsim_drop_reason. */
  uint64_t drops[NETSIM_DROP_REASONS];
  /* ecn_marked is the number of packets this queue marked. */
  uint64_t ecn_marked;
  /* q_bytes and q_pkts: the queue now (not yet fully serialised). */
  uint64_t q_bytes;
  uint32_t q_pkts;
  /* max_q_bytes is the deepest the queue has been. */
  uint64_t max_q_bytes;
  /* q_byte_ps is the integral of the queue depth over time (bytes x ps)
     for the packets admitted so far: divide by a duration for the mean. */
  double q_byte_ps;
  /* busy_until is when the link finishes serialising what it holds. */
  netsim_time busy_until;
  /* corrupted counts packets that reached the far end hit by at least one
     bit error, bit_errors the errors (a packet may take several). */
  uint64_t corrupted;
  uint64_t bit_errors;
  /* duplicated counts the copies the link made (netsim_link_set_dup),
     dup_skipped those it drew but could not make (no packet or payload
     buffer in the pool, or the dup callback refused); dup_pending is how
     many copies are waiting for their time now. */
  uint64_t duplicated;
  uint64_t dup_skipped;
  uint32_t dup_pending;
} netsim_link_stats;

/* netsim_link_get_info describes |link| in |info|. */
void netsim_link_get_info(const netsim_link *link, netsim_link_info *info);

/* netsim_link_get_stats copies |link|'s counters, as of the current time,
   into |st|. */
void netsim_link_get_stats(netsim_link *link, netsim_link_stats *st);

/* netsim_link_id returns |link|'s id. */
uint32_t netsim_link_id(const netsim_link *link);

/* netsim_link_queue_bytes returns the bytes queued on |link| now
   (including the packet being serialised). */
uint64_t netsim_link_queue_bytes(netsim_link *link);

/* netsim_link_set_up brings one direction up or down now.  Going down
   drops every packet queued on or in flight on it; routing is not told
   (use netsim_fault_* for a failure that routing reacts to). */
void netsim_link_set_up(netsim_sim *sim, netsim_link *link, int up);

/* netsim_link_set_rate changes one direction's rate now (0 restores the
   configured rate).  Packets already queued keep the departure times they
   were given; later ones use the new rate.  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_link_set_rate(netsim_sim *sim, netsim_link *link, uint64_t rate_bps);

/* netsim_link_set_loss sets one direction's random loss probability |p|
   (drawn from the link's own stream).  Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_loss(netsim_link *link, double p);

/* netsim_link_set_ber sets one direction's bit-error rate |ber| (0 to 1;
   0 turns errors off).  Errors hit the bits of the packets that reach the
   far end independently, each with probability |ber|: a packet of B
   bytes is hit with probability 1 - (1 - ber)^(8 B).  The link draws
   where the next error falls in its stream of bits (a geometric gap,
   from its own random stream NETSIM_STREAM_CORRUPT): an error in a
   carried byte flips that bit (NETSIM_PKT_FLIPPED), one beyond them sets
   NETSIM_PKT_CORRUPT.  The packet is delivered; the link counts it.
   Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_ber(netsim_link *link, double ber);

/* netsim_link_set_dup makes one direction duplicate packets: each packet
   that reaches the far end (and is not lost there) is duplicated with
   probability |p| (0 to 1; 0 turns duplication off), drawn from the
   link's own random stream NETSIM_STREAM_DUP, and the copy is delivered
   to the same next hop (switch or host) exactly |delay| (up to 1000 s)
   after the original.  The copy models a duplicate made in the fabric
   after the link (a switch or a link layer that sends a frame twice): it
   bypasses the link's queue and rate, so it takes no room and no time on
   the link, and it is neither lost nor hit by bit errors again (a packet
   corrupted on the link is copied as it arrived).  It is a clone of the
   packet from the pool, its carried bytes copied and NETSIM_PKT_DUP set;
   if the pool has no packet or payload buffer for it, the copy is
   skipped and counted (dup_skipped).  Copies keep their order in time
   whatever |delay| becomes later; those already made keep their time.
   The dup callback (netsim_sim_set_dup_cb) sees each copy.  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM (the event list could not make
   room for the link's copy timer). */
int netsim_link_set_dup(netsim_link *link, double p, netsim_time delay);

/* netsim_link_set_queue sets the queue's byte limit and ECN threshold (0:
   none).  Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_queue(netsim_link *link, uint64_t queue_bytes,
                          uint64_t ecn_bytes);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_LINK_API_H */
