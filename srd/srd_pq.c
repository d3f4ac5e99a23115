/*
 * srd_pq.c: intrusive binary min-heap.
 */
#include "srd_pq.h"

#include <assert.h>

int srd_pq_init(srd_pq *pq, size_t cap, const srd_mem *mem) {
  pq->mem = mem;
  pq->len = 0;
  pq->cap = cap;
  pq->q = mem->malloc((cap ? cap : 1) * sizeof(*pq->q), mem->user_data);
  if (pq->q == NULL) {
    return SRD_ERR_NOMEM;
  }
  return 0;
}

void srd_pq_fini(srd_pq *pq) {
  if (pq->q) {
    pq->mem->free(pq->q, pq->mem->user_data);
    pq->q = NULL;
  }
}

static inline int less(const srd_pq_entry *a, const srd_pq_entry *b) {
  return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static void place(srd_pq *pq, size_t i, srd_pq_entry *e) {
  pq->q[i] = e;
  e->index = i;
}

static void sift_up(srd_pq *pq, size_t i) {
  srd_pq_entry *e = pq->q[i];

  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!less(e, pq->q[parent])) {
      break;
    }
    place(pq, i, pq->q[parent]);
    i = parent;
  }
  place(pq, i, e);
}

static void sift_down(srd_pq *pq, size_t i) {
  srd_pq_entry *e = pq->q[i];

  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const srd_pq_entry *best = e;

    if (l < pq->len && less(pq->q[l], best)) {
      m = l;
      best = pq->q[l];
    }
    if (r < pq->len && less(pq->q[r], best)) {
      m = r;
    }
    if (m == i) {
      break;
    }
    place(pq, i, pq->q[m]);
    i = m;
  }
  place(pq, i, e);
}

void srd_pq_push(srd_pq *pq, srd_pq_entry *e, uint64_t key) {
  assert(e->index == SRD_PQ_BAD_INDEX);
  assert(pq->len < pq->cap);
  e->key = key;
  place(pq, pq->len++, e);
  sift_up(pq, e->index);
}

void srd_pq_remove(srd_pq *pq, srd_pq_entry *e) {
  size_t i = e->index;
  srd_pq_entry *last;

  if (i == SRD_PQ_BAD_INDEX) {
    return;
  }
  assert(i < pq->len && pq->q[i] == e);
  e->index = SRD_PQ_BAD_INDEX;
  last = pq->q[--pq->len];
  if (i == pq->len) {
    return;
  }
  place(pq, i, last);
  if (i > 0 && less(last, pq->q[(i - 1) / 2])) {
    sift_up(pq, i);
  } else {
    sift_down(pq, i);
  }
}

void srd_pq_update(srd_pq *pq, srd_pq_entry *e, uint64_t key) {
  uint64_t old;

  if (e->index == SRD_PQ_BAD_INDEX) {
    srd_pq_push(pq, e, key);
    return;
  }
  old = e->key;
  e->key = key;
  if (key < old) {
    sift_up(pq, e->index);
  } else if (key > old) {
    sift_down(pq, e->index);
  }
}
