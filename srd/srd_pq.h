/*
 * srd_pq.h: an intrusive binary min-heap with fixed capacity.  Entries are
 * embedded in their owners (srd_pq_entry), keyed by a timestamp with a
 * tie-breaking id, so the order never depends on pointers.  Push, pop,
 * remove and update are O(log n) and never allocate.
 *
 * The functions are defined in srd_pq.c (the static inline ones here).
 * The heap holds pointers to entries it does not own: an entry must stay
 * where it is, and be removed before its owner is freed.  The engine has
 * one heap, ep->timers, of peers by deadline.
 */
#ifndef SRD_PQ_H
#define SRD_PQ_H

#include <stddef.h>
#include <stdint.h>

#include <srd/srd.h>

/* SRD_PQ_BAD_INDEX is the index of an entry in no heap. */
#define SRD_PQ_BAD_INDEX SIZE_MAX

/* srd_pq_entry is the part of an owner that the heap orders. */
typedef struct srd_pq_entry {
  /* key orders the heap (smallest first). */
  uint64_t key;
  /* id breaks ties between equal keys. */
  uint32_t id;
  /* index is the entry's place in the heap, SRD_PQ_BAD_INDEX if absent. */
  size_t index;
} srd_pq_entry;

/* srd_pq is a heap of at most cap entries. */
typedef struct srd_pq {
  srd_pq_entry **q;   /* the heap array, cap pointers */
  size_t len;         /* entries in it */
  size_t cap;         /* its capacity */
  const srd_mem *mem; /* what init allocated with (kept) */
} srd_pq;

/* srd_pq_init makes |pq| (caller storage) an empty heap able to hold
   |cap| entries (0 is allowed), allocated from |mem|, which it keeps:
   |mem| must outlive |pq|.

   Returns 0, or SRD_ERR_NOMEM (nothing allocated; srd_pq_fini is safe). */
int srd_pq_init(srd_pq *pq, size_t cap, const srd_mem *mem);

/* srd_pq_fini frees |pq|'s array; the entries are the owners'.  Calling
   it again is harmless. */
void srd_pq_fini(srd_pq *pq);

/* srd_pq_entry_init marks |e| as not in any heap, with tie-break |id|. */
static inline void srd_pq_entry_init(srd_pq_entry *e, uint32_t id) {
  e->key = 0;
  e->id = id;
  e->index = SRD_PQ_BAD_INDEX;
}

/* srd_pq_push inserts |e| (not in the heap) with |key|.  The heap must have
   room: capacity is a precondition, not a runtime error (both are
   asserted). */
void srd_pq_push(srd_pq *pq, srd_pq_entry *e, uint64_t key);

/* srd_pq_remove removes |e| if it is in the heap (it must then be in
   |pq|, not another heap; asserted), else does nothing. */
void srd_pq_remove(srd_pq *pq, srd_pq_entry *e);

/* srd_pq_update sets |e|'s key to |key|, inserting it if absent (then
   as srd_pq_push: the heap must have room). */
void srd_pq_update(srd_pq *pq, srd_pq_entry *e, uint64_t key);

/* srd_pq_top returns the smallest entry (by key, then id), or NULL if
   empty.  It stays in the heap. */
static inline srd_pq_entry *srd_pq_top(const srd_pq *pq) {
  return pq->len ? pq->q[0] : NULL;
}

/* srd_pq_empty returns nonzero if |pq| is empty. */
static inline int srd_pq_empty(const srd_pq *pq) {
  return pq->len == 0;
}

#endif /* SRD_PQ_H */
