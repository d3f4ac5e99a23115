/*
 * netsim_evl.h: the event list, timers keyed by (time, insertion
 * sequence) in a timing wheel with a sorted array for the current bucket
 * and a heap for the far future, and a pool of one-shot events.
 */
#ifndef NETSIM_EVL_H
#define NETSIM_EVL_H

#include <netsim/netsim.h>

/* NETSIM_TIMER_IDLE is the slot of a timer that is not armed. */
#define NETSIM_TIMER_IDLE UINT32_MAX

/* A heap key's low NETSIM_EVL_SLOT_BITS bits are the slot, the rest the
   sequence number. */
#define NETSIM_EVL_SLOT_BITS 24
#define NETSIM_EVL_MAX_SLOTS (1u << NETSIM_EVL_SLOT_BITS)
#define NETSIM_EVL_SEQ_LIMIT (1ULL << (64 - NETSIM_EVL_SLOT_BITS))

/* The wheel has 2^NETSIM_EVL_WHEEL_BITS buckets, each 2^wshift ps wide;
   wshift adapts to the event rate between NETSIM_EVL_WSHIFT_MIN and
   NETSIM_EVL_WSHIFT_MAX, from NETSIM_EVL_WSHIFT_INIT (8.2 ns). */
#define NETSIM_EVL_WHEEL_BITS 12
#define NETSIM_EVL_WHEEL (1u << NETSIM_EVL_WHEEL_BITS)
#define NETSIM_EVL_WSHIFT_MIN 8
#define NETSIM_EVL_WSHIFT_MAX 40
#define NETSIM_EVL_WSHIFT_INIT 13

/* netsim_hent is one event: when, and in what order among equals. */
typedef struct netsim_hent {
  /* at is the firing time. */
  netsim_time at;
  /* key is seq << NETSIM_EVL_SLOT_BITS | slot: it orders equal times by
     sequence and names the timer. */
  uint64_t key;
} netsim_hent;

/* netsim_evslot is what the event list keeps per slot (32 bytes). */
typedef struct netsim_evslot {
  /* e is the armed timer's event.  Its time says where it is: in near,
     the wheel or far (see netsim_evl). */
  netsim_hent e;
  /* tm is the timer armed in the slot (meaningless while it is free). */
  netsim_timer *tm;
  /* next links the wheel bucket's list (NETSIM_TIMER_IDLE ends it). */
  uint32_t next;
  /* far is the event's index in the far heap while it is there. */
  uint32_t far;
} netsim_evslot;

/* netsim_evheap is a 4-ary min-heap of events; h + 1 starts a cache
   line. */
typedef struct netsim_evheap {
  /* h holds |n| events; mem is the allocation it points into. */
  netsim_hent *h;
  void *mem;
  uint32_t n;
} netsim_evheap;

/* netsim_evnear is a sorted array of events, h[head..n), earliest first
   (head = n = 0 when empty). */
typedef struct netsim_evnear {
  /* h is the array (cap entries); mem is the allocation. */
  netsim_hent *h;
  void *mem;
  uint32_t head;
  uint32_t n;
} netsim_evnear;

struct netsim_evl {
  /* mem allocates the arrays and the pool. */
  netsim_mem mem;
  /* now is the current virtual time. */
  netsim_time now;
  /* seq is the last sequence number handed out. */
  uint64_t seq;
  /* count is the number of events fired. */
  uint64_t count;
  /* An event of bucket b = at >> wshift is in near if b <= cur, in the
     wheel if cur < b < cur + NETSIM_EVL_WHEEL (in the list whead[b %
     NETSIM_EVL_WHEEL], unordered; bit b % NETSIM_EVL_WHEEL of wbits is set
     while that list is not empty), else in far.  n_wheel counts the
     wheel's events. */
  netsim_evnear near;
  netsim_evheap far;
  uint32_t *whead;
  uint64_t *wbits;
  uint32_t n_wheel;
  uint32_t wshift;
  uint64_t cur;
  /* mark_count and mark_time: the event count and the time when the bucket
     width was last reviewed. */
  uint64_t mark_count;
  netsim_time mark_time;
  /* slots holds |n_slots| slots; slot_free is a stack of |nfree_slots|
     free ones.  cap is n_slots (what reserve made room for). */
  netsim_evslot *slots;
  uint32_t *slot_free;
  uint32_t n_slots;
  uint32_t nfree_slots;
  uint32_t cap;
  /* firing is the timer whose callback runs, which keeps its slot
     firing_slot until it returns (a re-arm from the callback, as a link
     does for its next packet, reuses it); NULL when none or once
     re-armed. */
  netsim_timer *firing;
  uint32_t firing_slot;
  /* pool holds |pool_n| one-shot events; pool_free lists the |pool_nfree|
     free ones (a stack). */
  netsim_timer *pool;
  uint32_t *pool_free;
  uint32_t pool_n;
  uint32_t pool_nfree;
  /* stop is set by netsim_evl_stop. */
  int stop;
  /* intr is netsim_evl_set_interrupt's flag (NULL: none). */
  const volatile sig_atomic_t *intr;
};

/* netsim_evl_next_timer returns the timer of the event that fires after
   the one firing now if the list already knows it (it is sorted among
   the current bucket's events), else NULL: for prefetching what it will
   touch. */
static inline const netsim_timer *netsim_evl_next_timer(const netsim_evl *evl) {
  return evl->near.head < evl->near.n
             ? evl->slots[evl->near.h[evl->near.head].key &
                          (NETSIM_EVL_MAX_SLOTS - 1)]
                   .tm
             : NULL;
}

/* netsim_evl_reserve makes room for |n| pending timers so that arming them
   later never allocates.  Returns 0, or NETSIM_ERR_NOMEM. */
int netsim_evl_reserve(netsim_evl *evl, uint32_t n);

/* netsim_evl_renumber gives the pending events fresh sequence numbers
   1..n in their current order (called when the sequence space runs out;
   exposed for tests). */
void netsim_evl_renumber(netsim_evl *evl);

/* netsim_evl_set_width sets the wheel's bucket width to 2^|wshift| ps
   (clamped to the bounds above) and redistributes the pending events.
   The width changes nothing observable, only speed; the list adapts it by
   itself (exposed for tests). */
void netsim_evl_set_width(netsim_evl *evl, uint32_t wshift);

#endif /* NETSIM_EVL_H */
