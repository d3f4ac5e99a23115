/*
 * plan.c: who sends what to whom.  Every rank computes the same rules for
 * every rank, so that it knows before the exchange how many messages and
 * bytes it expects from each source; and the payload pattern.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

const char *const coll_workload_names[] = {"shuffle", "incast", "permutation"};

void *xmalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);

  if (p == NULL) {
    tool_die("out of memory (%zu bytes)", n);
  }
  return p;
}

/* visit calls |fn| for every message rank |src| of |n| sends, in the
   order it sends them to each destination: (dst, len). */
typedef void (*visit_fn)(void *u, uint32_t dst, uint64_t len);

static void chunks(visit_fn fn, void *u, uint32_t dst, uint64_t len,
                   uint64_t msg) {
  while (len > 0) {
    uint64_t l = len < msg ? len : msg;
    /* A tail shorter than the header goes with the chunk before it. */
    if (len - l > 0 && len - l < COLL_HDR_LEN) {
      l = len;
    }
    fn(u, dst, l);
    len -= l;
  }
}

static uint64_t visit(const coll_opts *o, uint32_t n, uint32_t src, visit_fn fn,
                      void *u) {
  uint64_t off, local = 0;
  uint32_t k;

  for (off = 0; off < o->bytes_per_rank; off += o->partition) {
    uint64_t plen = o->bytes_per_rank - off < o->partition
                        ? o->bytes_per_rank - off
                        : o->partition;
    switch (o->workload) {
    case W_SHUFFLE:
      for (k = 0; k < o->outputs; ++k) {
        uint64_t piece = plen / o->outputs + (k < plen % o->outputs);
        uint32_t dst = k % n;
        if (dst == src) {
          local += piece;
        } else {
          chunks(fn, u, dst, piece, o->msg_size);
        }
      }
      break;
    case W_INCAST:
      if (src != 0) {
        chunks(fn, u, 0, plen, o->msg_size);
      }
      break;
    case W_PERMUTATION:
      chunks(fn, u, (src + o->shift) % n, plen, o->msg_size);
      break;
    }
  }
  return local;
}

typedef struct counter {
  coll_plan *p;
  uint32_t src;
  uint32_t n_to[COLL_MAX_RANKS];
  uint64_t bytes;
  uint64_t shortest;
} counter;

static void count_fn(void *u, uint32_t dst, uint64_t len) {
  counter *c = u;

  c->n_to[dst]++;
  c->bytes += len;
  if (len < c->shortest) {
    c->shortest = len;
  }
  if (dst == c->p->rank) {
    c->p->n_from[c->src]++;
    c->p->bytes_from[c->src] += len;
  }
}

typedef struct filler {
  coll_plan *p;
  size_t next[COLL_MAX_RANKS];
  uint64_t off;
} filler;

static void fill_fn(void *u, uint32_t dst, uint64_t len) {
  filler *f = u;
  coll_msg *m = &f->p->msgs[f->next[dst]];

  m->dst = dst;
  m->idx = (uint32_t)(f->next[dst] - f->p->first[dst]);
  m->len = (uint32_t)len;
  m->off = f->off;
  f->off += len;
  f->next[dst]++;
}

int plan_build(coll_plan *p, const coll_opts *o, uint32_t n, uint32_t rank,
               char *why, size_t cap) {
  uint32_t s, d;
  size_t at = 0;
  filler fl;

  memset(p, 0, sizeof(*p));
  p->n = n;
  p->rank = rank;
  if (o->workload == W_PERMUTATION && o->shift % n == 0) {
    snprintf(why, cap, "--shift %u sends every rank to itself with %u ranks",
             o->shift, n);
    return -EINVAL;
  }
  for (s = 0; s < n; ++s) {
    counter c;
    memset(&c, 0, sizeof(c));
    c.p = p;
    c.src = s;
    c.shortest = UINT64_MAX;
    if (s == rank) {
      p->local_bytes = visit(o, n, s, count_fn, &c);
      memcpy(p->n_to, c.n_to, sizeof(p->n_to));
      p->send_bytes = c.bytes;
    } else {
      (void)visit(o, n, s, count_fn, &c);
    }
    if (c.shortest < COLL_HDR_LEN) {
      snprintf(why, cap,
               "a message of %llu bytes is shorter than the %d-byte header: "
               "larger --partition or fewer --outputs",
               (unsigned long long)c.shortest, COLL_HDR_LEN);
      return -EINVAL;
    }
  }
  for (d = 0; d < n; ++d) {
    p->first[d] = at;
    at += p->n_to[d];
    p->recv_msgs += p->n_from[d];
    p->recv_bytes += p->bytes_from[d];
  }
  p->n_msgs = at;
  p->msgs = xmalloc(at * sizeof(coll_msg));
  memset(&fl, 0, sizeof(fl));
  fl.p = p;
  memcpy(fl.next, p->first, sizeof(fl.next));
  (void)visit(o, n, rank, fill_fn, &fl);
  return 0;
}

void plan_free(coll_plan *p) {
  free(p->msgs);
  p->msgs = NULL;
}

/* The pattern: word w of a message is splitmix64 of (src, idx, w). */
static uint64_t pat_word(uint32_t src, uint32_t idx, uint64_t w) {
  uint64_t z =
      ((uint64_t)src << 56 ^ (uint64_t)idx << 24 ^ w) + 0x9e3779b97f4a7c15ull;

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void pat_fill(uint8_t *b, size_t len, uint32_t src, uint32_t idx) {
  size_t k;

  for (k = COLL_HDR_LEN; k < len; k += 8) {
    uint64_t v = pat_word(src, idx, k / 8);
    memcpy(b + k, &v, len - k < 8 ? len - k : 8);
  }
}

long pat_check(const uint8_t *b, size_t len, uint32_t src, uint32_t idx) {
  size_t k;

  for (k = COLL_HDR_LEN; k < len; k += 8) {
    uint64_t v = pat_word(src, idx, k / 8);
    size_t l = len - k < 8 ? len - k : 8;
    if (memcmp(b + k, &v, l) != 0) {
      size_t i;
      for (i = 0; i < l && b[k + i] == ((const uint8_t *)&v)[i]; ++i) {
      }
      return (long)(k + i);
    }
  }
  return -1;
}
