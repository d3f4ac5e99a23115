/*
 * impair_q.c: the delay queue (impair.h): a binary min-heap on (time,
 * push order) over slots carved from chunks that are never moved.
 */
#include "impair.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Slots and the chunk header are aligned for any type. */
#define ALIGN alignof(max_align_t)
#define ROUND(n) (((n) + ALIGN - 1) / ALIGN * ALIGN)
/* The first chunk's slots when nothing was preallocated; each later chunk
   doubles the slots. */
#define FIRST_CHUNK 64

/* grow adds a chunk of |n| slots to the free list and room for them in
   the heap.  Returns 0 or -ENOMEM. */
static int grow(impair_q *q, size_t n) {
  impair_q_ent *heap;
  uint8_t *chunk, *s;
  size_t i;

  heap = realloc(q->heap, (q->n_slots + n) * sizeof(*heap));
  if (heap == NULL) {
    return -ENOMEM;
  }
  q->heap = heap;
  chunk = malloc(ROUND(sizeof(void *)) + n * q->stride);
  if (chunk == NULL) {
    return -ENOMEM;
  }
  memcpy(chunk, &q->chunks, sizeof(void *));
  q->chunks = chunk;
  s = chunk + ROUND(sizeof(void *));
  for (i = 0; i < n; ++i, s += q->stride) {
    memcpy(s, &q->free, sizeof(void *));
    q->free = s;
  }
  q->n_slots += n;
  return 0;
}

int impair_q_init(impair_q *q, size_t slot_size, size_t prealloc,
                  size_t max_slots) {
  memset(q, 0, sizeof(*q));
  q->stride = ROUND(slot_size > sizeof(void *) ? slot_size : sizeof(void *));
  q->max_slots = max_slots;
  if (max_slots && prealloc > max_slots) {
    prealloc = max_slots;
  }
  return prealloc ? grow(q, prealloc) : 0;
}

void impair_q_fini(impair_q *q) {
  void *c = q->chunks, *next;

  while (c != NULL) {
    memcpy(&next, c, sizeof(void *));
    free(c);
    c = next;
  }
  free(q->heap);
  memset(q, 0, sizeof(*q));
}

void *impair_q_get(impair_q *q) {
  void *s;

  if (q->free == NULL) {
    size_t n = q->n_slots ? q->n_slots : FIRST_CHUNK;
    if (q->max_slots && n > q->max_slots - q->n_slots) {
      n = q->max_slots - q->n_slots;
    }
    if (n == 0 || grow(q, n) != 0) {
      return NULL;
    }
  }
  s = q->free;
  memcpy(&q->free, s, sizeof(void *));
  return s;
}

void impair_q_put(impair_q *q, void *slot) {
  memcpy(slot, &q->free, sizeof(void *));
  q->free = slot;
}

static int before(const impair_q_ent *a, const impair_q_ent *b) {
  return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

void impair_q_push(impair_q *q, void *slot, impair_time at) {
  impair_q_ent e = {at, q->seq++, slot};
  size_t i = q->len++;

  while (i > 0 && before(&e, &q->heap[(i - 1) / 2])) {
    q->heap[i] = q->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  q->heap[i] = e;
}

void *impair_q_pop(impair_q *q, impair_time now, impair_time *at) {
  impair_q_ent top, last;
  size_t i = 0;

  if (q->len == 0 || q->heap[0].at > now) {
    return NULL;
  }
  top = q->heap[0];
  last = q->heap[--q->len];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= q->len) {
      break;
    }
    if (c + 1 < q->len && before(&q->heap[c + 1], &q->heap[c])) {
      ++c;
    }
    if (!before(&q->heap[c], &last)) {
      break;
    }
    q->heap[i] = q->heap[c];
    i = c;
  }
  if (q->len > 0) {
    q->heap[i] = last;
  }
  if (at != NULL) {
    *at = top.at;
  }
  return top.slot;
}
