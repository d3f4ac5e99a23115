/*
 * netsim_evl.c: the event list.
 *
 * Events are ordered by (time, insertion sequence).  The sequence number
 * comes from one counter each time a timer is armed, so events at equal
 * times fire in the order they were scheduled, never in pointer order
 * (shared/style.md 2.9; htsim leaves this to std::multimap).  The order is
 * total, so the structure below decides only the speed, never the order.
 *
 * Structure (docs/netsim.md, "Performance"): a timing wheel of
 * NETSIM_EVL_WHEEL buckets, each 2^wshift ps of time, between a sorted
 * array and a heap.
 * - near, a sorted array, holds the events of the current bucket |cur|
 *   (and any earlier one, see advance).  Events fire from its front.
 * - The wheel holds the events of the next NETSIM_EVL_WHEEL - 1 buckets,
 *   each bucket an unordered list threaded through the slots, with a
 *   bitmap of the buckets that are not empty.  Arming a timer there is
 *   O(1).
 * - far, a 4-ary heap, holds what lies beyond the wheel.
 * When near runs dry, the next non-empty bucket (found in the bitmap) is
 * sorted into it, and far's events that the wheel now covers move into the
 * wheel.  A link's next arrival is a few hundred ns to a few us ahead, so
 * nearly every event is armed into the wheel in O(1) and sorted only among
 * the few events of its bucket, where the single heap this replaced
 * sifted every event through all of them (a third of srd-sim bench's
 * instructions).  The bucket width adapts to the event rate, aiming at
 * about TARGET events a bucket, every NETSIM_EVL_REVIEW events:
 * deterministic, since it depends only on the events.
 *
 * An armed timer holds a slot, which keeps its event (16 bytes: the time,
 * and seq << 24 | slot, so one 128-bit comparison settles ties and names
 * the timer).  The event's time says where it is, so stopping or moving a
 * timer finds it without an index kept up to date as events move: in the
 * wheel by walking its bucket, in near by binary search, in far by the
 * index the heap keeps in the slot.  A timer is idle while its callback
 * runs, but keeps its slot until the callback returns: a link re-arming
 * its timer for its next packet takes it back at once.
 *
 * Sequence numbers have 40 bits; when they run out (after 10^12 armings)
 * the pending events are renumbered in order, which changes nothing
 * observable.
 *
 * One-shot events come from a fixed pool; their ids carry a generation so
 * that cancelling a fired or reused event is a clean NETSIM_ERR_NOENT.
 */
#include "netsim_evl.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_MASK ((uint64_t)NETSIM_EVL_MAX_SLOTS - 1)
#define NONE NETSIM_TIMER_IDLE
#define WMASK (NETSIM_EVL_WHEEL - 1)
#define WWORDS (NETSIM_EVL_WHEEL / 64)
/* The bucket width is reviewed every NETSIM_EVL_REVIEW events... */
#define NETSIM_EVL_REVIEW 8192
/* ...to bring a bucket's events near TARGET. */
#define TARGET 8

static inline uint32_t slot_of(const netsim_hent *e) {
  return (uint32_t)(e->key & SLOT_MASK);
}

/* ------------------------------------------------------------------------ */
/* The far heap (4-ary)                                                     */

static inline int hless(const netsim_hent *a, const netsim_hent *b) {
  return a->at < b->at || (a->at == b->at && a->key < b->key);
}

/* lt is hless without branches: which child is smallest is a coin toss,
   and mispredicted branches cost more than the comparisons. */
static inline uint32_t lt(const netsim_hent *a, const netsim_hent *b) {
#ifdef __SIZEOF_INT128__
  /* One 128-bit comparison: cmp and sbb, no branch. */
  __extension__ typedef unsigned __int128 u128;
  return ((u128)a->at << 64 | a->key) < ((u128)b->at << 64 | b->key);
#else
  return (uint32_t)(a->at < b->at) |
         ((uint32_t)(a->at == b->at) & (uint32_t)(a->key < b->key));
#endif
}

static void sift_up(netsim_evl *evl, uint32_t i, netsim_hent e) {
  netsim_hent *h = evl->far.h;

  while (i > 0) {
    uint32_t p = (i - 1) >> 2;
    if (!hless(&e, &h[p])) {
      break;
    }
    h[i] = h[p];
    evl->slots[slot_of(&h[i])].far = i;
    i = p;
  }
  h[i] = e;
  evl->slots[slot_of(&e)].far = i;
}

/* sift_down places |e| in the hole at |i| and below.  It is Floyd's
   bottom-up variant: the hole first descends along the smallest children
   to a leaf, then |e| rises from there (a heap's last entry, which fills
   the root's hole after a pop, belongs near the leaves). */
static void sift_down(netsim_evl *evl, uint32_t i, netsim_hent e) {
  netsim_hent *h = evl->far.h;
  uint32_t n = evl->far.n, hole = i, c, best;

  while ((c = 4 * hole + 1) < n) {
    if (c + 3 < n) {
      uint32_t b0 = c + lt(&h[c + 1], &h[c]);
      uint32_t b1 = c + 2 + lt(&h[c + 3], &h[c + 2]);
      /* best = b1 if h[b1] < h[b0], else b0, as arithmetic (a select that
         the compiler would turn into an unpredictable branch). */
      best = b0 ^ ((b0 ^ b1) & (0u - lt(&h[b1], &h[b0])));
    } else {
      uint32_t j;
      best = c;
      for (j = c + 1; j < n; ++j) {
        best = best ^ ((best ^ j) & (0u - lt(&h[j], &h[best])));
      }
    }
    h[hole] = h[best];
    evl->slots[slot_of(&h[hole])].far = hole;
    hole = best;
  }
  while (hole > i) {
    uint32_t p = (hole - 1) >> 2;
    if (!hless(&e, &h[p])) {
      break;
    }
    h[hole] = h[p];
    evl->slots[slot_of(&h[hole])].far = hole;
    hole = p;
  }
  h[hole] = e;
  evl->slots[slot_of(&e)].far = hole;
}

static void far_remove(netsim_evl *evl, uint32_t i) {
  netsim_hent last;
  uint32_t n = --evl->far.n;

  if (i == n) {
    return;
  }
  last = evl->far.h[n];
  if (i > 0 && hless(&last, &evl->far.h[(i - 1) >> 2])) {
    sift_up(evl, i, last);
  } else {
    sift_down(evl, i, last);
  }
}

/* ------------------------------------------------------------------------ */
/* The near array                                                           */

/* sort_entries sorts |h[0..n-1]|: by insertion when short (a bucket holds
   a handful of events), else by heapsort (a burst of events at one time
   lands in one bucket however narrow; no allocation either way). */
static void sort_entries(netsim_hent *h, uint32_t n) {
  uint32_t i, j;

  if (n <= 32) {
    for (i = 1; i < n; ++i) {
      netsim_hent e = h[i];
      for (j = i; j > 0 && lt(&e, &h[j - 1]); --j) {
        h[j] = h[j - 1];
      }
      h[j] = e;
    }
    return;
  }
  /* A binary max-heap, then the largest moved to the end one by one. */
  for (i = n / 2; i-- > 0;) {
    netsim_hent e = h[i];
    uint32_t k = i, c;
    while ((c = 2 * k + 1) < n) {
      c += c + 1 < n && lt(&h[c], &h[c + 1]);
      if (!lt(&e, &h[c])) {
        break;
      }
      h[k] = h[c];
      k = c;
    }
    h[k] = e;
  }
  for (i = n; i-- > 1;) {
    netsim_hent e = h[i];
    uint32_t k = 0, c;
    h[i] = h[0];
    while ((c = 2 * k + 1) < i) {
      c += c + 1 < i && lt(&h[c], &h[c + 1]);
      if (!lt(&e, &h[c])) {
        break;
      }
      h[k] = h[c];
      k = c;
    }
    h[k] = e;
  }
}

/* near_insert puts |e| in its place in near's sorted array.  Events armed
   into the current bucket are rare (most are armed a link's delay ahead),
   and usually the latest, found at once from the end. */
static void near_insert(netsim_evl *evl, netsim_hent e) {
  netsim_evnear *nr = &evl->near;
  netsim_hent *h = nr->h;
  uint32_t lo = nr->head, i = nr->n;

  if (lo > 0 && (lo == i || lt(&e, &h[lo]))) {
    /* The earliest: into the room a pop left at the front. */
    h[--nr->head] = e;
    return;
  }
  if (i == evl->cap) {
    /* At the end of the array: slide the events to its start (there is
       room: the new event's slot counts among the cap). */
    memmove(h, h + lo, sizeof(*h) * (i - lo));
    nr->n = i = i - lo;
    nr->head = lo = 0;
  }
  for (; i > lo && lt(&e, &h[i - 1]); --i) {
    h[i] = h[i - 1];
  }
  h[i] = e;
  ++nr->n;
}

/* near_remove removes |e| from near, closing the gap from the nearer
   end. */
static void near_remove(netsim_evl *evl, const netsim_hent *e) {
  netsim_evnear *nr = &evl->near;
  netsim_hent *h = nr->h;
  uint32_t lo = nr->head, hi = nr->n, i;

  /* Binary search: the first event not before |e|, which is |e|. */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (lt(&h[mid], e)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  i = lo;
  assert(i < nr->n && h[i].key == e->key);
  if (i - nr->head < nr->n - 1 - i) {
    memmove(h + nr->head + 1, h + nr->head, sizeof(*h) * (i - nr->head));
    ++nr->head;
  } else {
    memmove(h + i, h + i + 1, sizeof(*h) * (nr->n - 1 - i));
    --nr->n;
  }
  if (nr->head == nr->n) {
    nr->head = nr->n = 0;
  }
}

/* ------------------------------------------------------------------------ */
/* The wheel                                                                */

static inline void wheel_add(netsim_evl *evl, uint32_t slot, uint64_t b) {
  uint32_t w = (uint32_t)b & WMASK, head = evl->whead[w];

  evl->slots[slot].next = head;
  if (head == NONE) {
    evl->wbits[w >> 6] |= 1ULL << (w & 63);
  }
  evl->whead[w] = slot;
  ++evl->n_wheel;
}

/* wheel_del unlinks |slot|: the list is singly linked (arming, the common
   case, then writes one slot), so this walks the bucket, which holds a
   handful of events. */
static void wheel_del(netsim_evl *evl, uint32_t slot) {
  uint32_t w = (uint32_t)(evl->slots[slot].e.at >> evl->wshift) & WMASK;
  uint32_t *link = &evl->whead[w];

  while (*link != slot) {
    assert(*link != NONE);
    link = &evl->slots[*link].next;
  }
  *link = evl->slots[slot].next;
  if (evl->whead[w] == NONE) {
    evl->wbits[w >> 6] &= ~(1ULL << (w & 63));
  }
  --evl->n_wheel;
}

/* next_bucket returns the first bucket after |cur| that holds events (the
   wheel must not be empty). */
static uint64_t next_bucket(const netsim_evl *evl) {
  uint32_t start = (uint32_t)(evl->cur + 1) & WMASK, w = start >> 6, i;
  uint64_t bits = evl->wbits[w] & (~0ULL << (start & 63));

  /* WWORDS + 1 words: the first one may be visited twice, for the bits
     below |start| the second time. */
  for (i = 0; i <= WWORDS; ++i) {
    if (bits) {
      uint32_t b = (w << 6) | (uint32_t)__builtin_ctzll(bits);
      return evl->cur + 1 + ((b - start) & WMASK);
    }
    w = (w + 1) & (WWORDS - 1);
    bits = evl->wbits[w];
  }
  assert(0);
  return evl->cur + 1;
}

/* ------------------------------------------------------------------------ */
/* Placing events                                                           */

/* place puts armed |slot|'s event where its time belongs. */
static inline void place(netsim_evl *evl, uint32_t slot) {
  const netsim_hent *e = &evl->slots[slot].e;
  uint64_t b = e->at >> evl->wshift;

  if (b - evl->cur - 1 < NETSIM_EVL_WHEEL - 1) {
    /* cur < b < cur + WHEEL (as one unsigned comparison). */
    wheel_add(evl, slot, b);
  } else if (b <= evl->cur) {
    near_insert(evl, *e);
  } else {
    sift_up(evl, evl->far.n++, *e);
  }
}

/* unplace removes armed |slot|'s event from wherever it is. */
static void unplace(netsim_evl *evl, uint32_t slot) {
  const netsim_hent *e = &evl->slots[slot].e;
  uint64_t b = e->at >> evl->wshift;

  if (b <= evl->cur) {
    near_remove(evl, e);
  } else if (b - evl->cur < NETSIM_EVL_WHEEL) {
    wheel_del(evl, slot);
  } else {
    far_remove(evl, evl->slots[slot].far);
  }
}

/* gather moves every pending event to the start of near's array (not
   sorted then) and empties the wheel and far; returns how many there
   are. */
static uint32_t gather(netsim_evl *evl) {
  netsim_hent *h = evl->near.h;
  uint32_t n = evl->near.n - evl->near.head, b, i;

  memmove(h, h + evl->near.head, sizeof(*h) * n);
  for (b = 0; evl->n_wheel && b < NETSIM_EVL_WHEEL; ++b) {
    uint32_t s = evl->whead[b];
    for (; s != NONE; s = evl->slots[s].next) {
      h[n++] = evl->slots[s].e;
      --evl->n_wheel;
    }
    evl->whead[b] = NONE;
  }
  memset(evl->wbits, 0, sizeof(*evl->wbits) * WWORDS);
  for (i = 0; i < evl->far.n; ++i) {
    h[n++] = evl->far.h[i];
  }
  evl->far.n = 0;
  evl->near.n = evl->near.head = 0;
  return n;
}

/* spread places the |n| events gather left in near's array, with the
   current bucket at now. */
static void spread(netsim_evl *evl, uint32_t n) {
  netsim_hent *h = evl->near.h;
  uint32_t i, m = 0;

  /* Every pending event is due at or after now. */
  evl->cur = evl->now >> evl->wshift;
  for (i = 0; i < n; ++i) {
    uint64_t b = h[i].at >> evl->wshift;
    if (b <= evl->cur) {
      h[m++] = h[i];
    } else if (b - evl->cur < NETSIM_EVL_WHEEL) {
      wheel_add(evl, slot_of(&h[i]), b);
    } else {
      sift_up(evl, evl->far.n++, h[i]);
    }
  }
  sort_entries(h, m);
  evl->near.n = m;
}

void netsim_evl_set_width(netsim_evl *evl, uint32_t wshift) {
  uint32_t n;

  if (wshift < NETSIM_EVL_WSHIFT_MIN) {
    wshift = NETSIM_EVL_WSHIFT_MIN;
  }
  if (wshift > NETSIM_EVL_WSHIFT_MAX) {
    wshift = NETSIM_EVL_WSHIFT_MAX;
  }
  n = gather(evl);
  evl->wshift = wshift;
  spread(evl, n);
}

/* review sets the bucket width from the event rate since the last review:
   about TARGET events a bucket, within a factor of 2 (or 4: hysteresis). */
static void review(netsim_evl *evl) {
  uint64_t n = evl->count - evl->mark_count;
  netsim_time dt = evl->now - evl->mark_time, ideal;
  uint32_t want = NETSIM_EVL_WSHIFT_MIN;

  evl->mark_count = evl->count;
  evl->mark_time = evl->now;
  ideal = dt / n;
  ideal =
      ideal < ((netsim_time)1 << 50) ? ideal * TARGET : (netsim_time)1 << 50;
  if (ideal >= (netsim_time)1 << evl->wshift && ideal < (netsim_time)4
                                                            << evl->wshift) {
    return;
  }
  while (want < NETSIM_EVL_WSHIFT_MAX && ((netsim_time)2 << want) <= ideal) {
    ++want;
  }
  if (want != evl->wshift) {
    netsim_evl_set_width(evl, want);
  }
}

/* advance makes near hold the earliest pending events if it is empty:
   the next bucket that holds events, sorted; far's events that the wheel
   then covers move into it.  Returns 0 if no event is pending. */
static int advance(netsim_evl *evl) {
  uint64_t next;

  if (evl->count - evl->mark_count >= NETSIM_EVL_REVIEW) {
    review(evl);
  }
  if (evl->near.n) {
    return 1;
  }
  if (evl->n_wheel) {
    netsim_hent *h = evl->near.h;
    uint32_t b, s, m = 0;
    next = next_bucket(evl);
    b = (uint32_t)next & WMASK;
    s = evl->whead[b];
    evl->whead[b] = NONE;
    evl->wbits[b >> 6] &= ~(1ULL << (b & 63));
    for (; s != NONE; s = evl->slots[s].next) {
      h[m++] = evl->slots[s].e;
    }
    evl->n_wheel -= m;
    sort_entries(h, m);
    evl->near.n = m;
  } else if (evl->far.n) {
    /* Far's earliest bucket: the wheel is empty, so jump there. */
    next = evl->far.h[0].at >> evl->wshift;
  } else {
    return 0;
  }
  evl->cur = next;
  /* Far holds buckets >= the old cur + WHEEL > next. */
  while (evl->far.n &&
         (evl->far.h[0].at >> evl->wshift) - next < NETSIM_EVL_WHEEL) {
    uint32_t slot = slot_of(&evl->far.h[0]);
    far_remove(evl, 0);
    place(evl, slot);
  }
  return 1;
}

/* ------------------------------------------------------------------------ */
/* The list                                                                 */

/* alloc_array allocates an array of |cap| events with h + 1 on a 64-byte
   boundary (a far heap node's children 4i+1..4i+4 share a line). */
static netsim_hent *alloc_array(const netsim_mem *mem, uint32_t cap,
                                void **pmem) {
  uintptr_t a;

  *pmem = mem->malloc(sizeof(netsim_hent) * (size_t)cap + 64, mem->user_data);
  if (*pmem == NULL) {
    return NULL;
  }
  a = ((uintptr_t)*pmem + sizeof(netsim_hent) + 63) & ~(uintptr_t)63;
  return (netsim_hent *)(a - sizeof(netsim_hent));
}

int netsim_evl_reserve(netsim_evl *evl, uint32_t n) {
  const netsim_mem *mem = &evl->mem;
  uint32_t cap = evl->n_slots ? evl->n_slots : 16, i;
  netsim_evslot *slots;
  uint32_t *sfree;
  void *nm, *fm;
  netsim_hent *nh, *fh;

  if (n <= evl->n_slots) {
    return 0;
  }
  while (cap < n) {
    cap *= 2;
  }
  if (cap > NETSIM_EVL_MAX_SLOTS) {
    if (n > NETSIM_EVL_MAX_SLOTS) {
      return NETSIM_ERR_NOMEM;
    }
    cap = NETSIM_EVL_MAX_SLOTS;
  }
  nh = alloc_array(mem, cap, &nm);
  fh = alloc_array(mem, cap, &fm);
  slots = mem->malloc(sizeof(*slots) * cap, mem->user_data);
  sfree = mem->malloc(sizeof(*sfree) * cap, mem->user_data);
  if (!nh || !fh || !slots || !sfree) {
    mem->free(nm, mem->user_data);
    mem->free(fm, mem->user_data);
    mem->free(slots, mem->user_data);
    mem->free(sfree, mem->user_data);
    return NETSIM_ERR_NOMEM;
  }
  if (evl->near.n) {
    memcpy(nh, evl->near.h, sizeof(*nh) * evl->near.n);
  }
  if (evl->far.n) {
    memcpy(fh, evl->far.h, sizeof(*fh) * evl->far.n);
  }
  if (evl->n_slots) {
    memcpy(slots, evl->slots, sizeof(*slots) * evl->n_slots);
    memcpy(sfree, evl->slot_free, sizeof(*sfree) * evl->nfree_slots);
  }
  /* New slots go on the free stack, lowest on top (the arrays are written
     only as far as slots are used: a large reserve costs address space,
     not memory). */
  for (i = cap; i > evl->n_slots; --i) {
    sfree[evl->nfree_slots++] = i - 1;
  }
  mem->free(evl->near.mem, mem->user_data);
  mem->free(evl->far.mem, mem->user_data);
  mem->free(evl->slots, mem->user_data);
  mem->free(evl->slot_free, mem->user_data);
  evl->near.h = nh;
  evl->near.mem = nm;
  evl->far.h = fh;
  evl->far.mem = fm;
  evl->slots = slots;
  evl->slot_free = sfree;
  evl->n_slots = cap;
  evl->cap = cap;
  return 0;
}

int netsim_evl_new(netsim_evl **pevl, const netsim_evl_settings *s,
                   const netsim_mem *mem) {
  netsim_evl *evl;
  uint32_t i;

  if (mem == NULL) {
    mem = netsim_mem_default();
  }
  evl = mem->calloc(1, sizeof(*evl), mem->user_data);
  if (evl == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  evl->mem = *mem;
  evl->wshift = NETSIM_EVL_WSHIFT_INIT;
  evl->whead =
      mem->malloc(sizeof(*evl->whead) * NETSIM_EVL_WHEEL, mem->user_data);
  evl->wbits = mem->calloc(WWORDS, sizeof(*evl->wbits), mem->user_data);
  if (evl->whead == NULL || evl->wbits == NULL) {
    netsim_evl_del(evl);
    return NETSIM_ERR_NOMEM;
  }
  for (i = 0; i < NETSIM_EVL_WHEEL; ++i) {
    evl->whead[i] = NONE;
  }
  if (s->max_pooled) {
    evl->pool = mem->calloc(s->max_pooled, sizeof(*evl->pool), mem->user_data);
    evl->pool_free =
        mem->malloc(sizeof(*evl->pool_free) * s->max_pooled, mem->user_data);
    if (evl->pool == NULL || evl->pool_free == NULL) {
      netsim_evl_del(evl);
      return NETSIM_ERR_NOMEM;
    }
  }
  evl->pool_n = s->max_pooled;
  for (i = 0; i < evl->pool_n; ++i) {
    evl->pool[i].slot = NETSIM_TIMER_IDLE;
    evl->pool[i].pool_gen = 1;
    evl->pool_free[i] = evl->pool_n - 1 - i;
  }
  evl->pool_nfree = evl->pool_n;
  if (netsim_evl_reserve(evl, s->heap_hint > 16 ? s->heap_hint : 16) != 0) {
    netsim_evl_del(evl);
    return NETSIM_ERR_NOMEM;
  }
  *pevl = evl;
  return 0;
}

void netsim_evl_del(netsim_evl *evl) {
  const netsim_mem *mem;
  uint32_t i;

  if (evl == NULL) {
    return;
  }
  mem = &evl->mem;
  /* Leave the caller's timers idle, so that their owners may inspect or
     re-arm them on another list. */
  for (i = evl->near.head; i < evl->near.n; ++i) {
    evl->slots[slot_of(&evl->near.h[i])].tm->slot = NETSIM_TIMER_IDLE;
  }
  for (i = 0; i < evl->far.n; ++i) {
    evl->slots[slot_of(&evl->far.h[i])].tm->slot = NETSIM_TIMER_IDLE;
  }
  for (i = 0; evl->n_wheel && i < NETSIM_EVL_WHEEL; ++i) {
    uint32_t s;
    for (s = evl->whead[i]; s != NONE; s = evl->slots[s].next) {
      evl->slots[s].tm->slot = NETSIM_TIMER_IDLE;
    }
  }
  mem->free(evl->near.mem, mem->user_data);
  mem->free(evl->far.mem, mem->user_data);
  mem->free(evl->whead, mem->user_data);
  mem->free(evl->wbits, mem->user_data);
  mem->free(evl->slots, mem->user_data);
  mem->free(evl->slot_free, mem->user_data);
  mem->free(evl->pool, mem->user_data);
  mem->free(evl->pool_free, mem->user_data);
  mem->free(evl, mem->user_data);
}

netsim_time netsim_evl_now(const netsim_evl *evl) {
  return evl->now;
}

netsim_time netsim_evl_next_time(const netsim_evl *evl) {
  netsim_time t = NETSIM_TIME_NONE;
  uint32_t s;

  if (evl->near.n) {
    return evl->near.h[evl->near.head].at;
  }
  if (evl->n_wheel == 0) {
    return evl->far.n ? evl->far.h[0].at : NETSIM_TIME_NONE;
  }
  /* The earliest event is in the next bucket, which is not sorted. */
  s = evl->whead[(uint32_t)next_bucket(evl) & WMASK];
  for (; s != NONE; s = evl->slots[s].next) {
    if (evl->slots[s].e.at < t) {
      t = evl->slots[s].e.at;
    }
  }
  return t;
}

size_t netsim_evl_pending(const netsim_evl *evl) {
  return (size_t)(evl->near.n - evl->near.head) + evl->far.n + evl->n_wheel;
}

uint64_t netsim_evl_count(const netsim_evl *evl) {
  return evl->count;
}

netsim_time netsim_evl_timer_expiry(const netsim_evl *evl,
                                    const netsim_timer *tm) {
  if (tm->slot == NETSIM_TIMER_IDLE) {
    return NETSIM_TIME_NONE;
  }
  return evl->slots[tm->slot].e.at;
}

void netsim_timer_init(netsim_timer *tm, netsim_timer_cb cb, void *ctx,
                       uint64_t arg) {
  tm->cb = cb;
  tm->ctx = ctx;
  tm->arg = arg;
  tm->slot = NETSIM_TIMER_IDLE;
  tm->pool_gen = 0;
}

static int hent_cmp(const void *a, const void *b) {
  const netsim_hent *x = a, *y = b;

  if (x->at != y->at) {
    return x->at < y->at ? -1 : 1;
  }
  return x->key < y->key ? -1 : x->key > y->key;
}

void netsim_evl_renumber(netsim_evl *evl) {
  uint32_t n = gather(evl), i;
  netsim_hent *h = evl->near.h;

  qsort(h, n, sizeof(*h), hent_cmp);
  for (i = 0; i < n; ++i) {
    uint32_t slot = slot_of(&h[i]);
    h[i].key = ((uint64_t)(i + 1) << NETSIM_EVL_SLOT_BITS) | slot;
    evl->slots[slot].e.key = h[i].key;
  }
  evl->seq = n;
  spread(evl, n);
}

int netsim_evl_timer_set(netsim_evl *evl, netsim_timer *tm, netsim_time at) {
  netsim_evslot *sl;
  uint32_t slot;

  if (at < evl->now) {
    return NETSIM_ERR_INVAL;
  }
  if (tm == evl->firing) {
    /* Re-armed from its own callback: it still holds its slot. */
    evl->firing = NULL;
    slot = evl->firing_slot;
    tm->slot = slot;
  } else if (tm->slot != NETSIM_TIMER_IDLE) {
    slot = tm->slot;
    unplace(evl, slot);
  } else {
    if (evl->nfree_slots == 0) {
      int rv = netsim_evl_reserve(evl, evl->n_slots + 1);
      if (rv != 0) {
        return rv;
      }
    }
    slot = evl->slot_free[--evl->nfree_slots];
    evl->slots[slot].tm = tm;
    tm->slot = slot;
  }
  if (evl->seq + 1 >= NETSIM_EVL_SEQ_LIMIT) {
    netsim_evl_renumber(evl);
  }
  sl = &evl->slots[slot];
  sl->e.at = at;
  sl->e.key = (++evl->seq << NETSIM_EVL_SLOT_BITS) | slot;
  place(evl, slot);
  return 0;
}

void netsim_evl_timer_stop(netsim_evl *evl, netsim_timer *tm) {
  uint32_t slot = tm->slot;

  if (slot == NETSIM_TIMER_IDLE) {
    return;
  }
  assert(slot < evl->n_slots && evl->slots[slot].tm == tm);
  unplace(evl, slot);
  evl->slot_free[evl->nfree_slots++] = slot;
  tm->slot = NETSIM_TIMER_IDLE;
}

static void pool_release(netsim_evl *evl, netsim_timer *tm) {
  uint32_t idx = (uint32_t)(tm - evl->pool);

  ++tm->pool_gen;
  if (tm->pool_gen == 0) {
    tm->pool_gen = 1;
  }
  evl->pool_free[evl->pool_nfree++] = idx;
}

int netsim_evl_schedule(netsim_evl *evl, netsim_time at, netsim_timer_cb cb,
                        void *ctx, uint64_t arg, netsim_evid *pid) {
  netsim_timer *tm;
  uint32_t idx;
  int rv;

  if (at < evl->now || cb == NULL) {
    return NETSIM_ERR_INVAL;
  }
  if (evl->pool_nfree == 0) {
    return NETSIM_ERR_POOL;
  }
  idx = evl->pool_free[evl->pool_nfree - 1];
  tm = &evl->pool[idx];
  tm->cb = cb;
  tm->ctx = ctx;
  tm->arg = arg;
  rv = netsim_evl_timer_set(evl, tm, at);
  if (rv != 0) {
    return rv;
  }
  --evl->pool_nfree;
  if (pid) {
    *pid = ((uint64_t)tm->pool_gen << 32) | (uint64_t)(idx + 1);
  }
  return 0;
}

int netsim_evl_cancel(netsim_evl *evl, netsim_evid id) {
  uint32_t idx = (uint32_t)(id & 0xFFFFFFFFu), gen = (uint32_t)(id >> 32);
  netsim_timer *tm;

  if (idx == 0 || idx > evl->pool_n) {
    return NETSIM_ERR_NOENT;
  }
  tm = &evl->pool[idx - 1];
  if (tm->pool_gen != gen || tm->slot == NETSIM_TIMER_IDLE) {
    return NETSIM_ERR_NOENT;
  }
  netsim_evl_timer_stop(evl, tm);
  pool_release(evl, tm);
  return 0;
}

/* fire_first runs the earliest event, the first of the non-empty near
   array.  The timer is idle while its callback runs, which may re-arm it;
   nothing touches a caller's timer after the callback (its owner may be
   gone). */
static inline void fire_first(netsim_evl *evl) {
  netsim_hent e = evl->near.h[evl->near.head];
  uint32_t slot = slot_of(&e);
  netsim_timer *tm = evl->slots[slot].tm;
  uint32_t gen = tm->pool_gen;

  if (++evl->near.head == evl->near.n) {
    evl->near.head = evl->near.n = 0;
  } else if (evl->near.head + 1 < evl->near.n) {
    /* The timer two events ahead, and the line after it: a timer lives at
       the start of its owner, whose state follows (a link's queue).  The
       misses are then taken behind this event's work, and the owner's
       callback can prefetch further (link_arrive does). */
    const char *ahead =
        (const char *)evl->slots[slot_of(&evl->near.h[evl->near.head + 1])].tm;
    __builtin_prefetch(ahead);
    __builtin_prefetch(ahead + 64);
  }
  tm->slot = NETSIM_TIMER_IDLE;
  evl->firing = tm;
  evl->firing_slot = slot;
  evl->now = e.at;
  ++evl->count;
  tm->cb(evl, tm, tm->ctx, tm->arg);
  if (evl->firing == tm) {
    /* Not re-armed: the slot is free. */
    evl->firing = NULL;
    evl->slot_free[evl->nfree_slots++] = slot;
  }
  /* A pooled event returns to the pool unless it was re-armed (or
     cancelled, which returned it already). */
  if (gen != 0 && tm->slot == NETSIM_TIMER_IDLE && tm->pool_gen == gen) {
    pool_release(evl, tm);
  }
}

uint64_t netsim_evl_run_until(netsim_evl *evl, netsim_time until) {
  uint64_t n0 = evl->count;

  evl->stop = 0;
  for (;;) {
    if (evl->intr != NULL && *evl->intr) {
      return evl->count - n0;
    }
    if (evl->near.n == 0 && !advance(evl)) {
      break;
    }
    if (evl->near.h[evl->near.head].at > until) {
      break;
    }
    fire_first(evl);
    if (evl->stop) {
      return evl->count - n0;
    }
  }
  if (until != NETSIM_TIME_NONE && until > evl->now) {
    evl->now = until;
  }
  return evl->count - n0;
}

int netsim_evl_step(netsim_evl *evl) {
  if (evl->near.n == 0 && !advance(evl)) {
    return 0;
  }
  fire_first(evl);
  return 1;
}

void netsim_evl_stop(netsim_evl *evl) {
  evl->stop = 1;
}

void netsim_evl_set_interrupt(netsim_evl *evl,
                              const volatile sig_atomic_t *flag) {
  evl->intr = flag;
}
