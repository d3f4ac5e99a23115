/*
 * fuzz_input.h: what the fuzz targets share for driving the engine from
 * an input: a reader that yields zeros once the input runs out, and an
 * allocator whose |fail_at|th allocation fails (for srd_mem).
 */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Input reader: zeros once the input runs out. */
typedef struct reader {
  const uint8_t *p;
  size_t left;
} reader;

static inline uint8_t rd8(reader *r) {
  if (r->left == 0) {
    return 0;
  }
  --r->left;
  return *r->p++;
}

static inline uint16_t rd16(reader *r) {
  uint16_t v = (uint16_t)(rd8(r) << 8);
  return (uint16_t)(v | rd8(r));
}

static inline uint32_t rd32(reader *r) {
  uint32_t v = (uint32_t)rd16(r) << 16;
  return v | rd16(r);
}

/* An allocator whose |fail_at|th allocation fails; |live| counts what it
   handed out and got back. */
typedef struct failing {
  int calls, fail_at, live;
} failing;

static inline void *f_malloc(size_t size, void *ud) {
  failing *f = ud;
  void *p;

  if (++f->calls == f->fail_at) {
    return NULL;
  }
  p = malloc(size);
  f->live += p != NULL;
  return p;
}

static inline void f_free(void *p, void *ud) {
  failing *f = ud;

  if (p != NULL) {
    --f->live;
    free(p);
  }
}

static inline void *f_calloc(size_t n, size_t size, void *ud) {
  failing *f = ud;
  void *p;

  if (++f->calls == f->fail_at) {
    return NULL;
  }
  p = calloc(n, size);
  f->live += p != NULL;
  return p;
}

#endif /* FUZZ_INPUT_H */
