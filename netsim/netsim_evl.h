/*
 * netsim_evl.h: the event list, a 4-ary min-heap of timers keyed by (time,
 * insertion sequence), with a pool of one-shot events.
 */
#ifndef NETSIM_EVL_H
#define NETSIM_EVL_H

#include "netsim.h"

/* NETSIM_TIMER_IDLE is the slot of a timer that is not armed. */
#define NETSIM_TIMER_IDLE UINT32_MAX

/* A heap key's low NETSIM_EVL_SLOT_BITS bits are the slot, the rest the
   sequence number. */
#define NETSIM_EVL_SLOT_BITS 24
#define NETSIM_EVL_MAX_SLOTS (1u << NETSIM_EVL_SLOT_BITS)
#define NETSIM_EVL_SEQ_LIMIT (1ULL << (64 - NETSIM_EVL_SLOT_BITS))

/* netsim_hent is one heap slot (16 bytes: a node's four children fill one
   cache line). */
typedef struct netsim_hent {
  /* at is the firing time. */
  netsim_time at;
  /* key is seq << NETSIM_EVL_SLOT_BITS | slot: it orders equal times by
     sequence and names the timer. */
  uint64_t key;
} netsim_hent;

struct netsim_evl {
  /* mem allocates the heap, the slots and the pool. */
  netsim_mem mem;
  /* now is the current virtual time. */
  netsim_time now;
  /* seq is the last sequence number handed out. */
  uint64_t seq;
  /* count is the number of events fired. */
  uint64_t count;
  /* heap holds |n| pending timers in |cap| slots; heap_mem is the
     allocation it points into (aligned so that heap + 1 starts a cache
     line). */
  netsim_hent *heap;
  void *heap_mem;
  uint32_t n;
  uint32_t cap;
  /* slot_tm[s] is the timer armed in slot s and pos[s] its heap index;
     slot_free is a stack of |nfree_slots| free slots; |n_slots| exist. */
  netsim_timer **slot_tm;
  uint32_t *pos;
  uint32_t *slot_free;
  uint32_t n_slots;
  uint32_t nfree_slots;
  /* pool holds |pool_n| one-shot events; pool_free lists the |pool_nfree|
     free ones (a stack). */
  netsim_timer *pool;
  uint32_t *pool_free;
  uint32_t pool_n;
  uint32_t pool_nfree;
  /* firing is the timer whose callback is running while its entry still
     holds heap slot 0 (see fire_top), and firing_slot its slot; NULL once
     the callback re-armed it. */
  netsim_timer *firing;
  uint32_t firing_slot;
  /* stop is set by netsim_evl_stop. */
  int stop;
};

/* netsim_evl_reserve makes room for |n| pending timers so that arming them
   later never allocates.  Returns 0, or NETSIM_ERR_NOMEM. */
int netsim_evl_reserve(netsim_evl *evl, uint32_t n);

/* netsim_evl_renumber gives the pending events fresh sequence numbers
   1..n in their current order (called when the sequence space runs out;
   exposed for tests). */
void netsim_evl_renumber(netsim_evl *evl);

#endif /* NETSIM_EVL_H */
