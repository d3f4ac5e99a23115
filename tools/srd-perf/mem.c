/*
 * mem.c: message buffers where -m puts them.  With -m host they are
 * plain host memory; with -m cuda, device memory from the xport
 * (xport_mem_alloc), which the transports stage through pinned host
 * buffers.  The tool itself writes and reads device messages only where
 * it must: their head once when allocated, every byte with --verify
 * (through a host copy, outside the transport's staging), and a message
 * the size of a control message, to tell the two apart.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

void msgmem_init(msgmem *m, xport *x, xport_mem mem) {
  memset(m, 0, sizeof(*m));
  m->x = x;
  m->mem = mem;
}

void msgmem_fini(msgmem *m) {
  free(m->scratch);
  m->scratch = NULL;
  m->cap = 0;
}

static uint8_t *scratch(msgmem *m, size_t len) {
  if (len > m->cap) {
    free(m->scratch);
    m->scratch = xalloc(len);
    m->cap = len;
  }
  return m->scratch;
}

uint8_t *msg_alloc(msgmem *m, size_t len) {
  uint8_t *p;

  if (m->mem == XPORT_MEM_HOST) {
    p = xalloc(len);
    data_fill(p, len, 0, 1);
    return p;
  }
  p = xport_mem_alloc(m->x, len);
  if (p == NULL) {
    tool_die("out of CUDA device memory (%zu bytes)", len);
  }
  msg_fill(m, p, len, 0, 1);
  return p;
}

void msg_free(msgmem *m, void *p, int closed) {
  if (m->mem == XPORT_MEM_HOST) {
    free(p);
  } else if (!closed) {
    xport_mem_free(m->x, p); /* a closed xport freed its device memory */
  }
}

void msg_fill(msgmem *m, uint8_t *b, size_t len, uint64_t index, int pattern) {
  uint8_t *h;

  if (m->mem == XPORT_MEM_HOST) {
    data_fill(b, len, index, pattern);
    return;
  }
  h = scratch(m, len);
  data_fill(h, len, index, pattern);
  if (xport_mem_copy(m->x, b, h, len) != 0) {
    tool_die("cannot write a message into CUDA device memory");
  }
}

void msg_refill(msgmem *m, uint8_t *b, size_t len, uint64_t index, int verify) {
  /* Device messages keep the head written when allocated unless every
     byte is checked: writing each one's index would put a synchronous
     copy per message into the measurement. */
  if (m->mem == XPORT_MEM_HOST || verify) {
    msg_fill(m, b, len, index, verify);
  }
}

const uint8_t *msg_read(msgmem *m, const uint8_t *b, size_t len) {
  uint8_t *h;

  if (m->mem == XPORT_MEM_HOST) {
    return b;
  }
  h = scratch(m, len);
  if (xport_mem_copy(m->x, h, b, len) != 0) {
    tool_die("cannot read a message from CUDA device memory");
  }
  return h;
}
