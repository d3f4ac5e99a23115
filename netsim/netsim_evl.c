/*
 * netsim_evl.c: the event list.
 *
 * A 4-ary min-heap keyed by (time, insertion sequence).  The sequence
 * number comes from one counter each time a timer is armed, so events at
 * equal times fire in the order they were scheduled, never in pointer order
 * (shared/style.md 2.9; htsim leaves this to std::multimap).
 *
 * Layout, for speed (docs/netsim.md, "Performance"):
 * - A heap entry is 16 bytes: the time, and seq << 24 | slot, so one
 *   integer comparison settles ties and names the timer.  The array is
 *   offset so that the four children of a node share one cache line.
 * - An armed timer holds a slot; slot_tm[] maps slots to timers and pos[]
 *   to heap indices.  Sifting updates pos[], a dense array that stays in
 *   cache, instead of writing an index into each timer it moves (timers
 *   live inside links all over memory; those writes were a third of the
 *   heap's cost).
 * - A firing timer keeps its entry at the root while its callback runs
 *   (its key, the current time with an older sequence number, is still
 *   the smallest).  If the callback re-arms it, as a link does for the next
 *   packet of its FIFO, the new key replaces the root and sinks from there:
 *   one sift instead of a pop and a push.  Otherwise the entry is removed
 *   afterwards, without touching the timer, whose owner may have freed it.
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

static inline int hless(const netsim_hent *a, const netsim_hent *b) {
  return a->at < b->at || (a->at == b->at && a->key < b->key);
}

static void sift_up(netsim_evl *evl, uint32_t i, netsim_hent e) {
  netsim_hent *h = evl->heap;
  uint32_t *pos = evl->pos;

  while (i > 0) {
    uint32_t p = (i - 1) >> 2;
    if (!hless(&e, &h[p])) {
      break;
    }
    h[i] = h[p];
    pos[h[i].key & SLOT_MASK] = i;
    i = p;
  }
  h[i] = e;
  pos[e.key & SLOT_MASK] = i;
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

/* sift_down places |e| in the hole at |i| and below.  It is Floyd's
   bottom-up variant: the hole first descends along the smallest children
   to a leaf, then |e| rises from there.  A sinking key usually belongs
   near the leaves (a link's next arrival is late in the window of pending
   events), so this saves the comparison with |e| at every level. */
static void sift_down(netsim_evl *evl, uint32_t i, netsim_hent e) {
  netsim_hent *h = evl->heap;
  uint32_t *pos = evl->pos;
  uint32_t n = evl->n, hole = i, c, best;

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
    pos[h[hole].key & SLOT_MASK] = hole;
    hole = best;
  }
  while (hole > i) {
    uint32_t p = (hole - 1) >> 2;
    if (!hless(&e, &h[p])) {
      break;
    }
    h[hole] = h[p];
    pos[h[hole].key & SLOT_MASK] = hole;
    hole = p;
  }
  h[hole] = e;
  pos[e.key & SLOT_MASK] = hole;
}

static void heap_remove(netsim_evl *evl, uint32_t i) {
  netsim_hent last;
  uint32_t n = --evl->n;

  if (i == n) {
    return;
  }
  last = evl->heap[n];
  if (i > 0 && hless(&last, &evl->heap[(i - 1) >> 2])) {
    sift_up(evl, i, last);
  } else {
    sift_down(evl, i, last);
  }
}

int netsim_evl_reserve(netsim_evl *evl, uint32_t n) {
  const netsim_mem *mem = &evl->mem;
  uint32_t cap = evl->n_slots ? evl->n_slots : 16, i;
  netsim_timer **stm;
  uint32_t *pos, *sfree;
  void *hm;
  netsim_hent *h;
  uintptr_t a;

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
  hm = mem->malloc(sizeof(netsim_hent) * (size_t)cap + 64, mem->user_data);
  stm = mem->malloc(sizeof(*stm) * cap, mem->user_data);
  pos = mem->malloc(sizeof(*pos) * cap, mem->user_data);
  sfree = mem->malloc(sizeof(*sfree) * cap, mem->user_data);
  if (!hm || !stm || !pos || !sfree) {
    mem->free(hm, mem->user_data);
    mem->free(stm, mem->user_data);
    mem->free(pos, mem->user_data);
    mem->free(sfree, mem->user_data);
    return NETSIM_ERR_NOMEM;
  }
  /* heap + 1 on a 64-byte boundary: children 4i+1..4i+4 share a line. */
  a = ((uintptr_t)hm + sizeof(netsim_hent) + 63) & ~(uintptr_t)63;
  h = (netsim_hent *)(a - sizeof(netsim_hent));
  if (evl->n) {
    memcpy(h, evl->heap, sizeof(*h) * evl->n);
  }
  if (evl->n_slots) {
    memcpy(stm, evl->slot_tm, sizeof(*stm) * evl->n_slots);
    memcpy(pos, evl->pos, sizeof(*pos) * evl->n_slots);
    memcpy(sfree, evl->slot_free, sizeof(*sfree) * evl->nfree_slots);
  }
  /* New slots go on the free stack, lowest on top. */
  for (i = cap; i > evl->n_slots; --i) {
    sfree[evl->nfree_slots++] = i - 1;
  }
  mem->free(evl->heap_mem, mem->user_data);
  mem->free(evl->slot_tm, mem->user_data);
  mem->free(evl->pos, mem->user_data);
  mem->free(evl->slot_free, mem->user_data);
  evl->heap_mem = hm;
  evl->heap = h;
  evl->slot_tm = stm;
  evl->pos = pos;
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
  for (i = 0; i < evl->n; ++i) {
    evl->slot_tm[evl->heap[i].key & SLOT_MASK]->slot = NETSIM_TIMER_IDLE;
  }
  mem->free(evl->heap_mem, mem->user_data);
  mem->free(evl->slot_tm, mem->user_data);
  mem->free(evl->pos, mem->user_data);
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
  uint32_t j;

  if (evl->firing == NULL) {
    return evl->n ? evl->heap[0].at : NETSIM_TIME_NONE;
  }
  /* Slot 0 is the firing timer's: the next event is one of its
     children. */
  for (j = 1; j <= 4 && j < evl->n; ++j) {
    if (evl->heap[j].at < t) {
      t = evl->heap[j].at;
    }
  }
  return t;
}

size_t netsim_evl_pending(const netsim_evl *evl) {
  return evl->n - (evl->firing != NULL);
}

uint64_t netsim_evl_count(const netsim_evl *evl) {
  return evl->count;
}

netsim_time netsim_evl_timer_expiry(const netsim_evl *evl,
                                    const netsim_timer *tm) {
  if (tm->slot == NETSIM_TIMER_IDLE) {
    return NETSIM_TIME_NONE;
  }
  return evl->heap[evl->pos[tm->slot]].at;
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
  uint32_t i;

  /* A sorted array is a heap, and the firing entry, the smallest, stays at
     the root. */
  qsort(evl->heap, evl->n, sizeof(*evl->heap), hent_cmp);
  for (i = 0; i < evl->n; ++i) {
    uint32_t slot = (uint32_t)(evl->heap[i].key & SLOT_MASK);
    evl->heap[i].key = ((uint64_t)(i + 1) << NETSIM_EVL_SLOT_BITS) | slot;
    evl->pos[slot] = i;
  }
  evl->seq = evl->n;
}

int netsim_evl_timer_set(netsim_evl *evl, netsim_timer *tm, netsim_time at) {
  netsim_hent e;
  uint32_t slot;

  if (at < evl->now) {
    return NETSIM_ERR_INVAL;
  }
  if (evl->seq + 1 >= NETSIM_EVL_SEQ_LIMIT) {
    netsim_evl_renumber(evl);
  }
  ++evl->seq;
  if (tm == evl->firing) {
    /* Re-armed from its own callback: reuse the root entry. */
    evl->firing = NULL;
    slot = evl->firing_slot;
    tm->slot = slot;
    e.at = at;
    e.key = (evl->seq << NETSIM_EVL_SLOT_BITS) | slot;
    sift_down(evl, 0, e);
    return 0;
  }
  if (tm->slot != NETSIM_TIMER_IDLE) {
    uint32_t i;
    slot = tm->slot;
    i = evl->pos[slot];
    e.at = at;
    e.key = (evl->seq << NETSIM_EVL_SLOT_BITS) | slot;
    if (i > 0 && hless(&e, &evl->heap[(i - 1) >> 2])) {
      sift_up(evl, i, e);
    } else {
      sift_down(evl, i, e);
    }
    return 0;
  }
  if (evl->nfree_slots == 0) {
    int rv = netsim_evl_reserve(evl, evl->n_slots + 1);
    if (rv != 0) {
      return rv;
    }
  }
  slot = evl->slot_free[--evl->nfree_slots];
  evl->slot_tm[slot] = tm;
  tm->slot = slot;
  e.at = at;
  e.key = (evl->seq << NETSIM_EVL_SLOT_BITS) | slot;
  sift_up(evl, evl->n++, e);
  return 0;
}

void netsim_evl_timer_stop(netsim_evl *evl, netsim_timer *tm) {
  uint32_t slot = tm->slot;

  if (slot == NETSIM_TIMER_IDLE) {
    return;
  }
  assert(slot < evl->n_slots && evl->slot_tm[slot] == tm);
  heap_remove(evl, evl->pos[slot]);
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

/* fire_top runs the earliest event.  The timer is idle (not pending) while
   its callback runs, which may re-arm it; nothing touches a caller's timer
   after the callback (its owner may be gone). */
static void fire_top(netsim_evl *evl) {
  netsim_hent e = evl->heap[0];
  uint32_t slot = (uint32_t)(e.key & SLOT_MASK);
  netsim_timer *tm = evl->slot_tm[slot];
  uint32_t gen = tm->pool_gen;

  tm->slot = NETSIM_TIMER_IDLE;
  evl->firing = tm;
  evl->firing_slot = slot;
  evl->now = e.at;
  ++evl->count;
  tm->cb(evl, tm, tm->ctx, tm->arg);
  if (evl->firing == NULL) {
    /* Re-armed in place (and maybe stopped or cancelled since). */
    return;
  }
  evl->firing = NULL;
  heap_remove(evl, 0);
  evl->slot_free[evl->nfree_slots++] = slot;
  /* A pooled event returns to the pool unless re-armed. */
  if (gen != 0) {
    pool_release(evl, tm);
  }
}

uint64_t netsim_evl_run_until(netsim_evl *evl, netsim_time until) {
  uint64_t n0 = evl->count;

  evl->stop = 0;
  while (evl->n && evl->heap[0].at <= until) {
    fire_top(evl);
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
  if (evl->n == 0) {
    return 0;
  }
  fire_top(evl);
  return 1;
}

void netsim_evl_stop(netsim_evl *evl) {
  evl->stop = 1;
}
