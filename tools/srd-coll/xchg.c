/*
 * xchg.c: the exchange over one xport.  Every iteration each rank posts
 * its messages to all its destinations at once, at most --window in
 * flight per destination, while enough receives stay posted for what
 * every source may have in flight; a rank's part ends when its sends have
 * completed and it has received what the plan says.  The exchange ends
 * with a barrier over the transport: each rank tells rank 0 it is done
 * (DONE b), rank 0 answers every rank once all are (GO b); barrier 0
 * starts the first iteration.  Rank 0's time from one GO to the next
 * barrier's last DONE is the exchange's completion time.  A rank that has
 * passed a barrier may send the next iteration's messages to one that has
 * not yet seen its GO: they count for the next iteration.
 *
 * A rank that stops answering ends the run with a failure that names it:
 * an error completion of a send to it, or nothing from it for
 * --idle-timeout.  The rank that notices tells every other (ABORT, with
 * the rank it blames), so that they name the same rank rather than the
 * one that just closed.
 */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define BATCH 64

typedef struct rbuf {
  uint8_t *b;
} rbuf;

typedef struct xstate {
  const coll_opts *o;
  xport *x;
  uint32_t n, rank;
  const coll_rank_addr *addrs;
  coll_plan plan;
  coll_result *res;
  tool_hist *lat;
  uint8_t *sendmem; /* the send region (host or device memory) */
  uint8_t *host;    /* a host copy of a message (-m cuda) */
  rbuf *rb;
  size_t n_rb;
  size_t rcap;
  /* peers: xport id of each rank (known: added, or heard its hello) */
  int known[COLL_MAX_RANKS];
  xport_peer peer[COLL_MAX_RANKS];
  uint64_t last_rx[COLL_MAX_RANKS];
  int send_err[COLL_MAX_RANKS];
  /* receives */
  uint64_t recv_posted, recv_total;
  uint32_t got[2][COLL_MAX_RANKS]; /* this iteration's and the next's */
  uint8_t *seen[2];                /* --verify: per source, per index */
  size_t seen_len;
  size_t seen_off[COLL_MAX_RANKS];
  /* sends, this iteration */
  uint32_t next[COLL_MAX_RANKS];
  uint32_t inflight[COLL_MAX_RANKS];
  uint32_t done_sends;
  uint32_t hellos_inflight;
  /* barriers: the next one, DONEs for it (rank 0), GOs seen (others) */
  uint32_t barrier, dones, go_seen;
  int in_barrier;
  uint8_t done_from[COLL_MAX_RANKS]; /* rank 0: DONEs of this barrier */
  uint32_t ctl_inflight;
  uint8_t *ctl; /* a header per barrier and kind (DONE, GO) and ABORT */
  int culprit;  /* the rank a failure blames, -1 for none */
  uint32_t iter;
  int measured;
  uint64_t last_event;
} xstate;

static int fail(xstate *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail(xstate *s, const char *fmt, ...) {
  va_list ap;

  if (!s->res->failed) {
    s->culprit = -1;
    va_start(ap, fmt);
    vsnprintf(s->res->error, sizeof(s->res->error), fmt, ap);
    va_end(ap);
    s->res->failed = 1;
  }
  return -1;
}

static int rank_of(const xstate *s, xport_peer p) {
  uint32_t r;

  for (r = 0; r < s->n; ++r) {
    if (s->known[r] && s->peer[r] == p) {
      return (int)r;
    }
  }
  return -1;
}

static void mem_put(xstate *s, uint8_t *dst, const void *src, size_t len) {
  if (s->o->mem == XPORT_MEM_HOST) {
    memcpy(dst, src, len);
  } else if (xport_mem_copy(s->x, dst, src, len) != 0) {
    tool_die("cannot write into CUDA device memory");
  }
}

static const uint8_t *mem_get(xstate *s, const uint8_t *src, size_t len) {
  if (s->o->mem == XPORT_MEM_HOST) {
    return src;
  }
  if (xport_mem_copy(s->x, s->host, src, len) != 0) {
    tool_die("cannot read from CUDA device memory");
  }
  return s->host;
}

static uint8_t *mem_new(xstate *s, size_t len) {
  uint8_t *p;

  if (s->o->mem == XPORT_MEM_HOST) {
    return xmalloc(len);
  }
  p = xport_mem_alloc(s->x, len);
  if (p == NULL) {
    tool_die("out of CUDA device memory (%zu bytes)", len);
  }
  return p;
}

static int post_recv(xstate *s, size_t i) {
  int rv;

  if (s->recv_posted >= s->recv_total) {
    return 0;
  }
  rv = xport_post_recv(s->x, s->rb[i].b, s->rcap, &s->rb[i]);
  if (rv != 0) {
    return fail(s, "cannot post a receive: %s", strerror(-rv));
  }
  s->recv_posted++;
  return 0;
}

static int send_hello(xstate *s, uint32_t r) {
  static coll_hdr hello; /* the same bytes for every peer */
  static uint8_t dev_hello_done;
  static uint8_t *dev_hello;
  const void *buf = &hello;
  int rv;

  hello.magic = COLL_MAGIC_HELLO;
  hello.src = (uint16_t)s->rank;
  if (s->o->mem == XPORT_MEM_CUDA) {
    if (!dev_hello_done) {
      dev_hello = mem_new(s, COLL_HDR_LEN);
      mem_put(s, dev_hello, &hello, COLL_HDR_LEN);
      dev_hello_done = 1;
    }
    buf = dev_hello;
  }
  rv = xport_post_send(s->x, s->peer[r], buf, COLL_HDR_LEN, NULL);
  if (rv != 0) {
    return fail(s, "cannot send to rank %u (%s): %s", r, s->addrs[r].addr,
                strerror(-rv));
  }
  s->hellos_inflight++;
  return 0;
}

static void set_iter(xstate *s, uint32_t it) {
  size_t i;
  coll_hdr h;

  h.magic = COLL_MAGIC_DATA;
  h.src = (uint16_t)s->rank;
  h.pad = 0;
  h.iter = it;
  for (i = 0; i < s->plan.n_msgs; ++i) {
    h.idx = s->plan.msgs[i].idx;
    mem_put(s, s->sendmem + s->plan.msgs[i].off, &h, sizeof(h));
  }
}

/* post_sends posts what the windows allow, destinations in turn. */
static int post_sends(xstate *s) {
  uint32_t k, more = !s->in_barrier;

  while (more) {
    more = 0;
    for (k = 1; k <= s->n; ++k) {
      uint32_t d = (s->rank + k) % s->n;
      coll_msg *m;
      int rv;
      if (!s->known[d] || s->next[d] >= s->plan.n_to[d] ||
          s->inflight[d] >= s->o->window) {
        continue;
      }
      m = &s->plan.msgs[s->plan.first[d] + s->next[d]];
      m->t_post = xport_now();
      rv = xport_post_send(s->x, s->peer[d], s->sendmem + m->off, m->len, m);
      if (rv == -EAGAIN) {
        return 0;
      }
      if (rv != 0) {
        return fail(s, "cannot send to rank %u (%s): %s", d, s->addrs[d].addr,
                    strerror(-rv));
      }
      s->next[d]++;
      s->inflight[d]++;
      more = 1;
    }
  }
  return 0;
}

/* ctl_hdr returns the header of control message |kind| for barrier (or
   blamed rank) |b|: each its own bytes, as sends of earlier ones may
   still read theirs. */
static uint8_t *ctl_hdr(xstate *s, uint32_t kind, uint32_t b) {
  uint32_t slots = s->o->warmup + s->o->iters + 1;
  size_t at = kind == COLL_CTL_ABORT ? 2 * (size_t)slots : (size_t)b * 2 + kind;
  uint8_t *p = s->ctl + at * COLL_HDR_LEN;
  coll_hdr h;

  h.magic = COLL_MAGIC_CTL;
  h.src = (uint16_t)s->rank;
  h.pad = 0;
  h.iter = b;
  h.idx = kind;
  mem_put(s, p, &h, sizeof(h));
  return p;
}

static int send_ctl(xstate *s, uint32_t r, uint32_t kind, uint32_t b) {
  int rv = xport_post_send(s->x, s->peer[r], ctl_hdr(s, kind, b), COLL_HDR_LEN,
                           &s->ctl);
  if (rv != 0) {
    return fail(s, "cannot send to rank %u (%s): %s", r, s->addrs[r].addr,
                strerror(-rv));
  }
  s->ctl_inflight++;
  return 0;
}

static int blame(xstate *s, int r, int rv) {
  if (s->culprit < 0) {
    s->culprit = r;
  }
  return rv;
}

static int on_ctl(xstate *s, const coll_hdr *h, size_t rbi) {
  switch (h->idx) {
  case COLL_CTL_DONE:
    if (s->rank != 0 || h->iter != s->barrier) {
      return fail(s, "a DONE of barrier %u from rank %u at barrier %u", h->iter,
                  h->src, s->barrier);
    }
    s->dones++;
    s->done_from[h->src] = 1;
    break;
  case COLL_CTL_GO:
    if (h->src != 0 || h->iter != s->barrier) {
      return fail(s, "a GO of barrier %u from rank %u at barrier %u", h->iter,
                  h->src, s->barrier);
    }
    s->go_seen = h->iter + 1;
    break;
  case COLL_CTL_ABORT:
    if (h->iter < s->n && h->iter != s->rank) {
      return blame(s, (int)h->iter,
                   fail(s, "rank %u (%s) vanished (rank %u saw it go)", h->iter,
                        s->addrs[h->iter].addr, h->src));
    }
    return fail(s, "rank %u gave up", h->src);
  default:
    return fail(s, "a control message of unknown kind %u", h->idx);
  }
  return post_recv(s, rbi);
}

static int on_recv(xstate *s, const xport_cqe *c) {
  rbuf *rb = c->ctx;
  const uint8_t *b;
  coll_hdr h;
  uint32_t slot;

  if (c->len < COLL_HDR_LEN) {
    return fail(s, "a message of %zu bytes, shorter than the header", c->len);
  }
  b = mem_get(s, rb->b, s->o->verify ? c->len : COLL_HDR_LEN);
  memcpy(&h, b, sizeof(h));
  if ((h.magic != COLL_MAGIC_DATA && h.magic != COLL_MAGIC_HELLO &&
       h.magic != COLL_MAGIC_CTL) ||
      h.src >= s->n || h.src == s->rank) {
    s->res->corrupt++;
    return fail(s, "a message with a bad header (magic 0x%08x, source %u)",
                h.magic, h.src);
  }
  s->last_rx[h.src] = s->last_event;
  /* A peer of lower rank is learned from its first message whose source
     the backend knows (fabric: (xport_peer)-1 until its address exchange
     is done here). */
  if (!s->known[h.src] && c->peer != (xport_peer)-1) {
    s->known[h.src] = 1;
    s->peer[h.src] = c->peer;
  }
  if (h.magic == COLL_MAGIC_HELLO) {
    return post_recv(s, (size_t)(rb - s->rb));
  }
  if (h.magic == COLL_MAGIC_CTL) {
    return on_ctl(s, &h, (size_t)(rb - s->rb));
  }
  if (h.iter != s->iter && h.iter != s->iter + 1) {
    return fail(s, "a message of iteration %u from rank %u during %u", h.iter,
                h.src, s->iter);
  }
  slot = h.iter & 1;
  if (h.idx >= s->plan.n_from[h.src]) {
    return fail(s, "message %u from rank %u: only %u expected", h.idx, h.src,
                s->plan.n_from[h.src]);
  }
  if (s->o->verify) {
    uint8_t *seen = &s->seen[slot][s->seen_off[h.src] + h.idx];
    long bad;
    if (*seen) {
      s->res->dups++;
      return fail(s, "message %u of iteration %u from rank %u received twice",
                  h.idx, h.iter, h.src);
    }
    *seen = 1;
    bad = pat_check(b, c->len, h.src, h.idx);
    if (bad >= 0) {
      s->res->corrupt++;
      return fail(s,
                  "message %u of iteration %u from rank %u differs at byte "
                  "%ld of %zu",
                  h.idx, h.iter, h.src, bad, c->len);
    }
    s->res->verified++;
  }
  s->got[slot][h.src]++;
  s->res->msgs_recv++;
  s->res->recv_bytes_total += c->len;
  return post_recv(s, (size_t)(rb - s->rb));
}

static int on_send(xstate *s, const xport_cqe *c) {
  coll_msg *m = c->ctx;

  if (m == NULL || c->ctx == &s->ctl) { /* a hello or a control message */
    if (m == NULL) {
      s->hellos_inflight--;
    } else {
      s->ctl_inflight--;
    }
    if (c->status != 0) {
      int r = rank_of(s, c->peer);
      s->res->errors++;
      return blame(s, r,
                   fail(s, "rank %d (%s) vanished: %s", r,
                        r >= 0 ? s->addrs[r].addr : "?", xport_strerror(c)));
    }
    return 0;
  }
  if (c->status != 0) {
    s->res->errors++;
    return blame(s, (int)m->dst,
                 fail(s, "rank %u (%s) vanished: %s", m->dst,
                      s->addrs[m->dst].addr, xport_strerror(c)));
  }
  s->inflight[m->dst]--;
  s->done_sends++;
  s->res->msgs_sent++;
  if (s->measured) {
    tool_hist_record(s->lat, s->last_event - m->t_post);
  }
  return 0;
}

/* on_recv_error: a receive that failed names its rank when it has one
   (tcp: the connection from it broke); otherwise it is posted again. */
static int on_recv_error(xstate *s, const xport_cqe *c) {
  int r = rank_of(s, c->peer);

  s->res->errors++;
  if (r >= 0) {
    return blame(s, r,
                 fail(s, "rank %d (%s) vanished: %s", r, s->addrs[r].addr,
                      xport_strerror(c)));
  }
  s->recv_posted--;
  return post_recv(s, (size_t)((rbuf *)c->ctx - s->rb));
}

/* waits_on says whether this rank still waits for rank |r|: messages of
   this iteration, sends to it, its hello, its DONE (rank 0) or the GO
   (rank 0, to the others). */
static int waits_on(const xstate *s, uint32_t r) {
  if (r == s->rank) {
    return 0;
  }
  if (s->in_barrier) {
    return s->rank == 0 ? !s->done_from[r] : r == 0;
  }
  return s->got[s->iter & 1][r] < s->plan.n_from[r] || s->inflight[r] > 0 ||
         !s->known[r];
}

/* idle_fail names the ranks this one still waits for, the one silent
   longest first. */
static int idle_fail(xstate *s, uint64_t now) {
  uint32_t r, worst = UINT32_MAX;
  char also[160] = "";
  size_t k = 0;

  for (r = 0; r < s->n; ++r) {
    if (!waits_on(s, r)) {
      continue;
    }
    if (worst == UINT32_MAX || s->last_rx[r] < s->last_rx[worst]) {
      worst = r;
    }
  }
  if (worst == UINT32_MAX) {
    return fail(s, "no progress for %.1f s",
                (double)s->o->idle_timeout_ns / 1e9);
  }
  for (r = 0; r < s->n && k + 16 < sizeof(also); ++r) {
    if (r != worst && waits_on(s, r)) {
      k += (size_t)snprintf(also + k, sizeof(also) - k, "%s%u",
                            k ? "," : "; also waiting on rank ", r);
    }
  }
  return blame(
      s, (int)worst,
      fail(s,
           "rank %u (%s) vanished: nothing from it for %.1f s "
           "(--idle-timeout)%s [iteration %u%s: %u of %u messages from it, "
           "%u sends to it in flight, %u of %zu sends done]",
           worst, s->addrs[worst].addr, (double)(now - s->last_rx[worst]) / 1e9,
           also, s->iter, s->in_barrier ? ", in its barrier" : "",
           s->got[s->iter & 1][worst], s->plan.n_from[worst],
           s->inflight[worst], s->done_sends, s->plan.n_msgs));
}

static int data_done(const xstate *s) {
  uint32_t r;

  if (s->done_sends < s->plan.n_msgs) {
    return 0;
  }
  for (r = 0; r < s->n; ++r) {
    if (s->got[s->iter & 1][r] < s->plan.n_from[r]) {
      return 0;
    }
  }
  return 1;
}

static int all_dones(const xstate *s) {
  return s->dones == s->n - 1;
}

static int go_arrived(const xstate *s) {
  return s->go_seen > s->barrier;
}

static int knows_root(const xstate *s) {
  return s->known[0];
}

/* pump moves messages (posting what the windows allow) until |until|
   holds, or fails: a failed completion, the idle timeout, the time
   limit. */
static int pump(xstate *s, int (*until)(const xstate *), uint64_t t_start) {
  xport_cqe cq[BATCH];

  for (;;) {
    size_t i, nc;
    int rv;
    uint64_t now;
    if (post_sends(s) != 0) {
      return -1;
    }
    if (until(s)) {
      return 0;
    }
    rv = xport_progress(s->x, 2000000);
    if (rv != 0) {
      return fail(s, "the transport failed: %s", strerror(-rv));
    }
    now = xport_now();
    while ((nc = xport_poll_cq(s->x, cq, BATCH)) > 0) {
      s->last_event = now;
      for (i = 0; i < nc; ++i) {
        if (cq[i].op == XPORT_OP_SEND) {
          rv = on_send(s, &cq[i]);
        } else if (cq[i].status == 0) {
          rv = on_recv(s, &cq[i]);
        } else {
          rv = on_recv_error(s, &cq[i]);
        }
        if (rv != 0) {
          return -1;
        }
      }
    }
    /* A rank at work waits one idle timeout, rank 0 in its barrier one
       and a half, the others in theirs (waiting for GO) two.  Rank 0
       waits for the late ranks' DONE, and a late rank may be alive,
       waiting on the one that died: after one timeout that rank names it
       to every other (ABORT), and only after that does rank 0 guess from
       who was silent longest (a live rank that finished its messages to
       rank 0 early had been).  The ranks in their barrier hear rank 0
       name it within its one and a half. */
    if (now - s->last_event > s->o->idle_timeout_ns *
                                  (s->in_barrier ? (s->rank != 0 ? 4 : 3) : 2) /
                                  2) {
      return idle_fail(s, now);
    }
    if (now - t_start > s->o->time_limit_ns) {
      return fail(s,
                  "the time limit (--time-limit %.1f s) ran out in "
                  "iteration %u",
                  (double)s->o->time_limit_ns / 1e9, s->iter);
    }
  }
}

/* barrier runs barrier |s->barrier|: every rank's DONE to rank 0, rank
   0's GO to every rank.  Rank 0 stores when the last DONE came in
   *|t_all|. */
static int barrier(xstate *s, uint64_t t_start, uint64_t *t_all) {
  uint32_t r;

  s->in_barrier = 1;
  if (s->rank == 0) {
    if (pump(s, all_dones, t_start) != 0) {
      return -1;
    }
    *t_all = xport_now();
    for (r = 1; r < s->n; ++r) {
      if (send_ctl(s, r, COLL_CTL_GO, s->barrier) != 0) {
        return -1;
      }
    }
  } else if (pump(s, knows_root, t_start) != 0 ||
             send_ctl(s, 0, COLL_CTL_DONE, s->barrier) != 0 ||
             pump(s, go_arrived, t_start) != 0) {
    return -1;
  }
  s->in_barrier = 0;
  s->dones = 0;
  memset(s->done_from, 0, sizeof(s->done_from));
  s->barrier++;
  return 0;
}

static int run_iter(xstate *s, uint64_t t_start) {
  memset(s->next, 0, sizeof(s->next));
  memset(s->inflight, 0, sizeof(s->inflight));
  s->done_sends = 0;
  return pump(s, data_done, t_start);
}

/* give_up tells every rank it knows which rank this one blames, and lets
   those messages out for a moment before the xport closes. */
static void give_up(xstate *s) {
  uint64_t t0 = xport_now();
  uint32_t r;
  xport_cqe cq[BATCH];

  if (s->culprit < 0) {
    return;
  }
  for (r = 0; r < s->n; ++r) {
    if (r != s->rank && (int)r != s->culprit && s->known[r]) {
      (void)xport_post_send(s->x, s->peer[r],
                            ctl_hdr(s, COLL_CTL_ABORT, (uint32_t)s->culprit),
                            COLL_HDR_LEN, NULL);
    }
  }
  while (xport_now() - t0 < 200000000ull) {
    xport_progress(s->x, 5000000);
    (void)xport_poll_cq(s->x, cq, BATCH);
  }
}

int coll_xchg(const coll_opts *o, xport *x, uint32_t n, uint32_t rank,
              const coll_rank_addr *addrs, coll_result *res, tool_hist *lat) {
  xstate *s = xmalloc(sizeof(*s));
  char why[200];
  uint32_t r, it, total_iters = o->warmup + o->iters;
  uint64_t t_start = xport_now(), t_all = 0, t_go;
  size_t i;
  int rv = 0;

  s->o = o;
  s->x = x;
  s->n = n;
  s->rank = rank;
  s->addrs = addrs;
  s->res = res;
  s->lat = lat;
  if (plan_build(&s->plan, o, n, rank, why, sizeof(why)) != 0) {
    tool_die("%s", why);
  }
  res->bytes_sent = s->plan.send_bytes;
  res->bytes_recv = s->plan.recv_bytes;
  res->local_bytes = s->plan.local_bytes;
  /* The send region, the pattern written once; headers per iteration. */
  s->rcap = o->msg_size + COLL_HDR_LEN;
  s->host = xmalloc(s->rcap);
  s->sendmem = mem_new(s, s->plan.send_bytes ? s->plan.send_bytes : 1);
  for (i = 0; i < s->plan.n_msgs; ++i) {
    const coll_msg *m = &s->plan.msgs[i];
    if (o->mem == XPORT_MEM_HOST) {
      pat_fill(s->sendmem + m->off, m->len, rank, m->idx);
    } else {
      pat_fill(s->host, m->len, rank, m->idx);
      mem_put(s, s->sendmem + m->off, s->host, m->len);
    }
  }
  /* Receives: enough for every source's window, and the hellos. */
  for (r = 0; r < n; ++r) {
    s->seen_off[r] = s->seen_len;
    s->seen_len += s->plan.n_from[r];
  }
  s->seen[0] = xmalloc(s->seen_len);
  s->seen[1] = xmalloc(s->seen_len);
  /* Expected: the data, the hellos of lower ranks, and per barrier the
     DONEs (rank 0) or the GO. */
  s->recv_total = (uint64_t)s->plan.recv_msgs * total_iters + rank +
                  (uint64_t)(total_iters + 1) * (rank == 0 ? n - 1 : 1);
  s->culprit = -1;
  s->ctl = mem_new(s, (size_t)(2 * (total_iters + 1) + 1) * COLL_HDR_LEN);
  s->n_rb = (size_t)o->window * (n - 1) + 2 * n;
  if (s->n_rb > s->recv_total) {
    s->n_rb = (size_t)s->recv_total;
  }
  s->rb = xmalloc((s->n_rb ? s->n_rb : 1) * sizeof(rbuf));
  for (i = 0; i < s->n_rb; ++i) {
    s->rb[i].b = mem_new(s, s->rcap);
    if (post_recv(s, i) != 0) {
      rv = -1;
      goto out;
    }
  }
  /* Peers: add those of higher rank and greet them; the others greet us. */
  s->last_event = xport_now();
  for (r = 0; r < n; ++r) {
    s->last_rx[r] = s->last_event;
  }
  for (r = rank + 1; r < n; ++r) {
    struct sockaddr_storage ss;
    socklen_t len;
    char host[COLL_ADDR_LEN], *colon;
    memcpy(host, addrs[r].addr, sizeof(host));
    host[sizeof(host) - 1] = 0;
    colon = strrchr(host, ':');
    if (colon == NULL) {
      rv = fail(s, "rank %u's address '%s' has no port", r, addrs[r].addr);
      goto out;
    }
    *colon = 0;
    if (host[0] == '[') { /* [v6]:port */
      memmove(host, host + 1, strlen(host));
      host[strlen(host) - 1] = 0;
    }
    if (xport_parse_addr(host, (uint16_t)atoi(colon + 1), AF_INET, &ss, &len) !=
            0 ||
        xport_add_peer(x, (struct sockaddr *)&ss, len, &s->peer[r]) != 0) {
      rv = fail(s, "cannot add rank %u at %s", r, addrs[r].addr);
      goto out;
    }
    s->known[r] = 1;
    if (send_hello(s, r) != 0) {
      rv = -1;
      goto out;
    }
  }
  /* Barrier 0 starts the first iteration together. */
  if (barrier(s, t_start, &t_all) != 0) {
    rv = -1;
  }
  if (rv == 0 && o->verbose) {
    fprintf(stderr,
            "%s: rank %u of %u: every rank is here, exchange under way\n",
            tool_name(), rank, n);
  }
  t_go = xport_now();
  for (it = 0; rv == 0 && it < total_iters; ++it) {
    uint64_t t0 = xport_now();
    s->iter = it;
    s->measured = it >= o->warmup;
    set_iter(s, it);
    if (run_iter(s, t_start) != 0) {
      rv = -1;
      break;
    }
    res->iter_ns[it] = xport_now() - t0;
    if (barrier(s, t_start, &t_all) != 0) {
      rv = -1;
      break;
    }
    res->xch_ns[it] = t_all - t_go;
    t_go = xport_now();
    if (s->measured) {
      res->iters_done++;
    }
    /* The next iteration's slot becomes this one's. */
    memset(s->got[it & 1], 0, sizeof(s->got[0]));
    memset(s->seen[it & 1], 0, s->seen_len);
  }
  /* Let the last GOs and hellos out before closing. */
  while (rv == 0 && s->hellos_inflight + s->ctl_inflight > 0 &&
         xport_now() - s->last_event < o->idle_timeout_ns) {
    xport_cqe cq[BATCH];
    size_t nc;
    xport_progress(x, 1000000);
    while ((nc = xport_poll_cq(x, cq, BATCH)) > 0) {
      s->last_event = xport_now();
      for (i = 0; i < nc; ++i) {
        if (cq[i].op == XPORT_OP_SEND) {
          (void)on_send(s, &cq[i]);
        }
      }
    }
  }
  /* The others got their last GO: linger a moment so that the engine
     acknowledges it (udp), or rank 0 retries it until its retry budget
     runs out and takes this rank for dead. */
  if (rv == 0 && rank != 0) {
    uint64_t t0 = xport_now(), linger = o->idle_timeout_ns / 20;
    xport_cqe cq[BATCH];
    while (xport_now() - t0 < (linger < 100000000ull ? linger : 100000000ull)) {
      xport_progress(x, 1000000);
      (void)xport_poll_cq(x, cq, BATCH);
    }
  }
  if (rv != 0) {
    give_up(s);
  }
out:;
  {
    xport_stats st;
    xport_get_stats(x, &st);
    res->retransmits = st.retransmits;
    res->bad_in = st.bad_in;
    res->rnr_sent = st.rnr_sent;
    res->rnr_received = st.rnr_received;
    res->paths_avoided = st.path_avoided_mask;
    res->cwnd_bytes = st.cwnd_bytes;
  }
  /* Closing the xport gives every posted buffer back (and frees device
     memory); host memory goes after it. */
  xport_close(x);
  if (o->mem == XPORT_MEM_HOST) {
    for (i = 0; i < s->n_rb; ++i) {
      free(s->rb[i].b);
    }
    free(s->sendmem);
    free(s->ctl);
  }
  free(s->rb);
  plan_free(&s->plan);
  free(s->seen[0]);
  free(s->seen[1]);
  free(s->host);
  free(s);
  return rv;
}
