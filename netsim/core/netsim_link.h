/*
 * netsim_link.h: one direction of a cable: its output queue, the
 * serialiser at the link's rate and the propagation delay.
 */
#ifndef NETSIM_LINK_H
#define NETSIM_LINK_H

#include <netsim/netsim.h>
#include "netsim_queue.h"
#include "netsim_sim.h"

/* The fields are grouped by cache line (the structure is 64-byte aligned):
   an arrival touches lines 0 and 1, a send lines 1 and 2 (and 0 when the
   link was idle); the rest is cold (docs/netsim.md, "Performance"). */
struct netsim_link {
  /* Line 0: what an arrival needs. */
  /* tm fires when the FIFO's head reaches the far end; its arg is the
     link's id. */
  NETSIM_ALIGN64 netsim_timer tm;
  /* to is the node at the far end. */
  netsim_node *to;
  /* sim is the owning simulation. */
  netsim_sim *sim;
  /* impair is imp.flags (IMPAIR_F_LOSS, IMPAIR_F_BER, IMPAIR_F_DUP):
     whether an arrival must look at the cold fields below (0 on a clean
     link). */
  uint32_t impair;
  /* rx_bytes counts bytes that reached the far end. */
  uint64_t rx_bytes;

  /* Line 1: the output queue and the FIFO of packets on the link. */
  netsim_queue q;
  /* rx_pkts counts packets that reached the far end (before random loss
     is applied there). */
  uint64_t rx_pkts;

  /* Line 2: the serialiser. */
  /* busy_until is when the serialiser finishes what it holds. */
  NETSIM_ALIGN64 netsim_time busy_until;
  /* epoch_start and epoch_bytes: the current busy period started at
     epoch_start and has carried epoch_bytes bytes, so the next packet of
     B bytes finishes at epoch_start + tx(epoch_bytes + B): computed from
     cumulative bytes, departure times never drift. */
  netsim_time epoch_start;
  uint64_t epoch_bytes;
  /* ps_per_byte is the exact per-byte time at rate_bps, or 0. */
  uint64_t ps_per_byte;
  /* delay is the propagation delay. */
  netsim_time delay;
  /* byte_ps integrates the queue's occupancy over time: each admitted
     packet adds size * (t_fin - admission time). */
  double byte_ps;
  /* jitter: each packet arrives up to this much later than its
     serialisation and |delay| say, uniform in [0, jitter] from the
     impairment model's jitter stream (imp.jitter_rng), never before the
     packet ahead of it (netsim_host_set_tx_jitter; 0: none). */
  netsim_time jitter;
  /* up: the link carries packets; routed: routing uses it. */
  uint8_t up;
  uint8_t routed;
  /* fabric is set on switch-to-switch links. */
  uint8_t fabric;

  /* Cold. */
  /* id is the link's id. */
  uint32_t id;
  /* rate_bps is the current rate; base_rate_bps the configured one. */
  NETSIM_ALIGN64 uint64_t rate_bps;
  uint64_t base_rate_bps;
  /* imp is the link's impairment model (netsim/impair): its loss,
     bit-error and duplication draws, each from its own stream (link |id|
     of the master seed), and their probabilities and counts (corrupted,
     bit_errors).  netsim's physics (rate, propagation, queues) are the
     link's own: the model's rate, delay and jitter stay zero. */
  impair_link imp;
  /* dup_delay is how much later a copy follows its original
     (netsim_link_set_dup). */
  netsim_time dup_delay;
  /* dup_head and dup_tail are the copies waiting for their time, in time
     order (linked by |next|, due at |t_arr|), dup_n how many; dup_tm
     fires for the head (arg: the link's id).  dup_slot says the event
     list has room for dup_tm (reserved when duplication is first set). */
  netsim_pkt *dup_head;
  netsim_pkt *dup_tail;
  uint32_t dup_n;
  uint8_t dup_slot;
  netsim_timer dup_tm;
  /* duplicated and dup_skipped count copies made and copies drawn but not
     made. */
  uint64_t duplicated;
  uint64_t dup_skipped;
  /* peer is the reverse direction's id. */
  uint32_t peer;
  /* from_node, from_port, to_node, to_port: the endpoints. */
  uint32_t from_node;
  uint32_t from_port;
  uint32_t to_node;
  uint32_t to_port;
  /* marked counts CE marks. */
  uint64_t marked;
  /* flushed_pkts and flushed_bytes: queued packets lost when the link
     went down. */
  uint64_t flushed_pkts;
  uint64_t flushed_bytes;
  /* drops counts drops on this link by reason. */
  uint64_t drops[NETSIM_DROP_REASONS];
  /* mem_base is the allocation the aligned link lives in. */
  void *mem_base;
};

/* netsim_link_new allocates a zeroed, 64-byte aligned link with |mem|.
   Returns NULL if out of memory. */
netsim_link *netsim_link_new(const netsim_mem *mem);

/* netsim_link_del frees a link from netsim_link_new (NULL is fine). */
void netsim_link_del(const netsim_mem *mem, netsim_link *l);

/* netsim_link_init prepares |l| as link |id| of |sim| from |cfg|
   (validated by the caller). */
void netsim_link_init(netsim_link *l, netsim_sim *sim, uint32_t id,
                      const netsim_linkcfg *cfg);

/* netsim_linkcfg_check returns 0 if |cfg| is usable, else
   NETSIM_ERR_INVAL. */
int netsim_linkcfg_check(const netsim_linkcfg *cfg);

/* netsim_link_send offers |pkt| to the link at the current time: drops it
   if the link is down or the queue is full, else queues it (marking it if
   over the ECN threshold) with its departure and arrival times.  Returns
   0, or NETSIM_ERR_DROPPED. */
int netsim_link_send(netsim_sim *sim, netsim_link *l, netsim_pkt *pkt);

#endif /* NETSIM_LINK_H */
