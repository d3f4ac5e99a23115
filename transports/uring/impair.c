/*
 * impair.c: per-path loss, duplication, delay, jitter, reordering, rate
 * cap, blackhole and corruption for outgoing datagrams (impair.h).  The model
 * is the loop wire's (transports/loop/srd_loop.c), moved to real time.
 */
#include "impair.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) {
  return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0);
}

int impair_init(impair *imp, const xport_impair *cfg, uint32_t n_paths,
                uint64_t seed, size_t pool_pkts, size_t buf_size) {
  uint32_t i;
  size_t k;

  memset(imp, 0, sizeof(*imp));
  if (n_paths > XPORT_MAX_PATHS) {
    n_paths = XPORT_MAX_PATHS;
  }
  imp->n_paths = n_paths;
  for (i = 0; i < n_paths; ++i) {
    uint64_t s = seed ^ (0xA0761D6478BD642FULL * (i + 1));
    imp->path[i].cfg = cfg[i];
    /* Stir, so that neighbouring seeds give unrelated streams. */
    imp->path[i].rng = splitmix(&s);
    imp->path[i].crng = splitmix(&s);
  }
  imp->cap = pool_pkts;
  imp->buf_size = buf_size;
  imp->heap = calloc(pool_pkts ? pool_pkts : 1, sizeof(*imp->heap));
  imp->free_bufs = calloc(pool_pkts ? pool_pkts : 1, sizeof(uint8_t *));
  imp->pool = malloc(pool_pkts * buf_size + 1);
  if (imp->heap == NULL || imp->free_bufs == NULL || imp->pool == NULL) {
    impair_fini(imp);
    return -ENOMEM;
  }
  for (k = 0; k < pool_pkts; ++k) {
    imp->free_bufs[k] = imp->pool + k * buf_size;
  }
  imp->n_free = pool_pkts;
  return 0;
}

void impair_fini(impair *imp) {
  free(imp->heap);
  free(imp->free_bufs);
  free(imp->pool);
  imp->heap = NULL;
  imp->free_bufs = NULL;
  imp->pool = NULL;
}

int impair_path_delays(const impair *imp, uint16_t path) {
  const xport_impair *c = &imp->path[path].cfg;

  return c->delay_ns || c->jitter_ns || c->reorder > 0 || c->rate_bps ||
         (c->dup > 0 && c->dup_delay_ns);
}

void impair_judge(impair *imp, uint16_t path, size_t len, uint64_t now,
                  impair_verdict *v) {
  impair_path *p = &imp->path[path];
  const xport_impair *c = &p->cfg;
  uint64_t at = now;

  v->copies = 0;
  v->at = v->dup_at = now;
  v->flip[0] = v->flip[1] = 0;
  if (c->blackhole) {
    ++imp->blackholed;
    return;
  }
  if (c->loss > 0 && uniform(&p->rng) < c->loss) {
    ++imp->lost;
    return;
  }
  v->copies = 1;
  if (c->dup > 0 && uniform(&p->rng) < c->dup) {
    v->copies = 2;
    ++imp->dup;
  }
  if (c->rate_bps) {
    /* A serialiser at rate_bps behind a queue of queue_bytes: what is
       queued is the serialiser's backlog; past the limit, tail drop. */
    uint64_t start = p->busy_until > now ? p->busy_until : now;
    uint64_t backlog = (start - now) * c->rate_bps / 8000000000ull;
    uint64_t tx_ns =
        ((uint64_t)len * v->copies * 8000000000ull + c->rate_bps - 1) /
        c->rate_bps;

    if (c->queue_bytes && backlog + len > c->queue_bytes) {
      ++imp->queue_drops;
      v->copies = 0;
      return;
    }
    p->busy_until = start + tx_ns;
    at = p->busy_until;
  }
  at += c->delay_ns;
  if (c->jitter_ns) {
    at += (uint64_t)(uniform(&p->rng) * (double)c->jitter_ns);
  }
  /* Jitter keeps the path FIFO (a link does not reorder by itself); only
     the reorder knob lets a datagram be overtaken. */
  if (at < p->last_at) {
    at = p->last_at;
  }
  p->last_at = at;
  if (c->reorder > 0 && uniform(&p->rng) < c->reorder) {
    at += c->reorder_delay_ns;
  }
  if (at > now) {
    ++imp->delayed;
  }
  v->at = v->dup_at = at;
  /* The copy of a duplicate comes dup_delay_ns late, outside the FIFO
     (last_at is the original's). */
  if (v->copies == 2 && c->dup_delay_ns) {
    v->dup_at = at + c->dup_delay_ns;
    ++imp->dup_delayed;
  }
  if (c->corrupt > 0 && len > 0) {
    for (int k = 0; k < v->copies; ++k) {
      if (uniform(&p->crng) < c->corrupt) {
        /* Uniform over the bits (the modulo's bias is below 2^-40). */
        v->flip[k] = 1 + splitmix(&p->crng) % ((uint64_t)len * 8);
      }
    }
  }
}

static int heap_less(const impair_pkt *a, const impair_pkt *b) {
  return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int impair_hold(impair *imp, uint16_t path, uint32_t peer,
                const struct iovec *iov, size_t n, uint64_t at, uint64_t flip) {
  impair_pkt pkt;
  size_t i, len = 0, k;

  for (i = 0; i < n; ++i) {
    len += iov[i].iov_len;
  }
  if (imp->n_free == 0 || len > imp->buf_size) {
    ++imp->queue_drops;
    return -ENOBUFS;
  }
  pkt.data = imp->free_bufs[--imp->n_free];
  for (i = 0, k = 0; i < n; ++i) {
    if (iov[i].iov_len) {
      memcpy(pkt.data + k, iov[i].iov_base, iov[i].iov_len);
      k += iov[i].iov_len;
    }
  }
  if (flip && flip <= (uint64_t)len * 8) {
    pkt.data[(flip - 1) / 8] ^= (uint8_t)(1u << ((flip - 1) % 8));
    ++imp->corrupted;
  }
  pkt.at = at;
  pkt.seq = imp->seq++;
  pkt.len = (uint32_t)len;
  pkt.path = path;
  pkt.peer = peer;
  /* sift up */
  k = imp->len++;
  while (k > 0) {
    size_t up = (k - 1) / 2;
    if (!heap_less(&pkt, &imp->heap[up])) {
      break;
    }
    imp->heap[k] = imp->heap[up];
    k = up;
  }
  imp->heap[k] = pkt;
  return 0;
}

uint64_t impair_next(const impair *imp) {
  return imp->len ? imp->heap[0].at : UINT64_MAX;
}

int impair_pop(impair *imp, uint64_t now, impair_pkt *out) {
  impair_pkt last;
  size_t k = 0;

  if (imp->len == 0 || imp->heap[0].at > now) {
    return 0;
  }
  *out = imp->heap[0];
  last = imp->heap[--imp->len];
  /* sift down */
  for (;;) {
    size_t c = 2 * k + 1;
    if (c >= imp->len) {
      break;
    }
    if (c + 1 < imp->len && heap_less(&imp->heap[c + 1], &imp->heap[c])) {
      ++c;
    }
    if (!heap_less(&imp->heap[c], &last)) {
      break;
    }
    imp->heap[k] = imp->heap[c];
    k = c;
  }
  if (imp->len) {
    imp->heap[k] = last;
  }
  return 1;
}

void impair_release(impair *imp, uint8_t *data) {
  imp->free_bufs[imp->n_free++] = data;
}
