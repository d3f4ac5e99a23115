/*
 * netsim_pkt.c: the packet pool.
 *
 * Packets and payload buffers live in two arrays allocated at creation; a
 * stack of free packets (not a list threaded through them) lets ASan poison
 * every free packet whole, so a packet used after it was freed is caught in
 * the sanitizer build even though the memory never returns to malloc.
 */
#include "netsim_pkt.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#  define NETSIM_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define NETSIM_ASAN 1
#  endif
#endif

#ifdef NETSIM_ASAN
#  include <sanitizer/asan_interface.h>
#  define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#  define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#  define POISON(p, n) ((void)(p), (void)(n))
#  define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* The layout <netsim/pkt.h> describes: a hop touches line 0, a receiver line 1
   (an SRD data header fits in line 1 inline). */
_Static_assert(offsetof(netsim_pkt, payload_len) == 64, "line 1");
_Static_assert(offsetof(netsim_pkt, inl) + 48 == 128, "inline in line 1");
_Static_assert(sizeof(netsim_pkt) == 192, "three lines");

int netsim_pktpool_new(netsim_pktpool **ppool, uint32_t n_pkts,
                       uint32_t payload_max, uint32_t n_payloads,
                       const netsim_mem *mem) {
  netsim_pktpool *pool;

  if (mem == NULL) {
    mem = netsim_mem_default();
  }
  if ((payload_max == 0) != (n_payloads == 0)) {
    return NETSIM_ERR_INVAL;
  }
  pool = mem->calloc(1, sizeof(*pool), mem->user_data);
  if (pool == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  pool->mem = *mem;
  if (n_pkts) {
    /* Packets are 64-byte aligned (their first line is all a hop reads). */
    pool->pkts_mem =
        mem->calloc((size_t)n_pkts + 1, sizeof(*pool->pkts), mem->user_data);
    pool->free = mem->malloc(sizeof(*pool->free) * n_pkts, mem->user_data);
    if (pool->pkts_mem == NULL || pool->free == NULL) {
      netsim_pktpool_del(pool);
      return NETSIM_ERR_NOMEM;
    }
    pool->pkts =
        (netsim_pkt *)(((uintptr_t)pool->pkts_mem + 63) & ~(uintptr_t)63);
  }
  pool->n = n_pkts;
  if (n_payloads) {
    pool->payloads =
        mem->malloc((size_t)payload_max * n_payloads, mem->user_data);
    pool->pfree =
        mem->malloc(sizeof(*pool->pfree) * n_payloads, mem->user_data);
    if (pool->payloads == NULL || pool->pfree == NULL) {
      netsim_pktpool_del(pool);
      return NETSIM_ERR_NOMEM;
    }
  }
  pool->payload_max = payload_max;
  pool->n_payloads = n_payloads;
  /* Nothing is written to the arrays here (see netsim_pktpool): fresh
     packets and buffers are handed out from low addresses up. */
  POISON(pool->pkts, sizeof(*pool->pkts) * n_pkts);
  POISON(pool->payloads, (size_t)payload_max * n_payloads);
  *ppool = pool;
  return 0;
}

void netsim_pktpool_del(netsim_pktpool *pool) {
  if (pool == NULL) {
    return;
  }
  UNPOISON(pool->pkts, sizeof(*pool->pkts) * pool->n);
  UNPOISON(pool->payloads, (size_t)pool->payload_max * pool->n_payloads);
  pool->mem.free(pool->pkts_mem, pool->mem.user_data);
  pool->mem.free(pool->free, pool->mem.user_data);
  pool->mem.free(pool->payloads, pool->mem.user_data);
  pool->mem.free(pool->pfree, pool->mem.user_data);
  pool->mem.free(pool, pool->mem.user_data);
}

uint32_t netsim_pktpool_in_use(const netsim_pktpool *pool) {
  return pool->fresh - pool->nfree;
}

int netsim_pkt_alloc(netsim_pktpool *pool, netsim_pkt **ppkt) {
  netsim_pkt *p;

  if (pool->nfree) {
    p = pool->free[--pool->nfree];
    UNPOISON(p, sizeof(*p));
    assert(p->state == NETSIM_PKT_STATE_FREE);
  } else if (pool->fresh < pool->n) {
    p = &pool->pkts[pool->fresh++];
    UNPOISON(p, sizeof(*p));
  } else {
    return NETSIM_ERR_POOL;
  }
  memset(p, 0, offsetof(netsim_pkt, inl));
  p->state = NETSIM_PKT_STATE_USED;
  p->payload_idx = UINT32_MAX;
  p->payload = NULL;
  p->tag = 0;
  p->t_sent = 0;
  *ppkt = p;
  return 0;
}

void netsim_pkt_free(netsim_pktpool *pool, netsim_pkt *pkt) {
  assert(pkt >= pool->pkts && pkt < pool->pkts + pool->n);
  assert(pkt->state == NETSIM_PKT_STATE_USED);
  if (pkt->payload_idx != UINT32_MAX) {
    pool->pfree[pool->npfree++] = pkt->payload_idx;
    POISON(pkt->payload, pool->payload_max);
  }
  pkt->state = NETSIM_PKT_STATE_FREE;
  pool->free[pool->nfree++] = pkt;
  POISON(pkt, sizeof(*pkt));
}

int netsim_pkt_payload(netsim_pktpool *pool, netsim_pkt *pkt, uint32_t len,
                       uint8_t **pbuf) {
  if (pkt->payload_idx == UINT32_MAX && len <= NETSIM_PKT_INLINE) {
    pkt->payload = pkt->inl;
  } else if (len > pool->payload_max) {
    return NETSIM_ERR_INVAL;
  } else if (pkt->payload_idx == UINT32_MAX) {
    uint32_t idx;
    uint8_t *buf;
    if (pool->npfree) {
      idx = pool->pfree[--pool->npfree];
    } else if (pool->pfresh < pool->n_payloads) {
      idx = pool->pfresh++;
    } else {
      return NETSIM_ERR_POOL;
    }
    buf = pool->payloads + (size_t)idx * pool->payload_max;
    UNPOISON(buf, pool->payload_max);
    if (pkt->payload == pkt->inl) {
      memcpy(buf, pkt->inl, pkt->payload_len);
    }
    pkt->payload_idx = idx;
    pkt->payload = buf;
  }
  pkt->payload_len = len;
  if (pbuf) {
    *pbuf = pkt->payload;
  }
  return 0;
}

int netsim_pkt_clone(netsim_pktpool *pool, const netsim_pkt *src,
                     netsim_pkt **pdst) {
  const uint8_t *data = netsim_pkt_data(src);
  netsim_pkt *p;
  uint8_t *buf;
  int rv;

  rv = netsim_pkt_alloc(pool, &p);
  if (rv != 0) {
    return rv;
  }
  p->key = src->key;
  p->flags = src->flags;
  p->hops = src->hops;
  p->size = src->size;
  p->uid = src->uid;
  p->flow = src->flow;
  p->tag = src->tag;
  p->t_sent = src->t_sent;
  if (src->payload != NULL) {
    /* A payload that fits inline goes there, wherever the original's is:
       netsim_pkt_data finds it either way. */
    rv = netsim_pkt_payload(pool, p, src->payload_len, &buf);
    if (rv != 0) {
      netsim_pkt_free(pool, p);
      return rv;
    }
    if (data != NULL && src->payload_len > 0) {
      memcpy(buf, data, src->payload_len);
    }
  }
  *pdst = p;
  return 0;
}
