/*
 * xport_stage.c: CUDA device memory staged through pinned host buffers,
 * in front of any backend (xport_stage.h).
 */
#define _GNU_SOURCE
#include "xport_stage.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xcuda.h"
#include "xregion.h"

#define MIN_CLASS 12 /* 4 KiB: the smallest pinned buffer */
#define NCLASS 48
#define DIR_SEND 0
#define DIR_RECV 1

/* hbuf is a pinned host buffer of 2^cls bytes. */
typedef struct hbuf {
  struct hbuf *next; /* its free list */
  struct hbuf *all;  /* every buffer, freed with the xport */
  uint8_t *p;
  int cls;
} hbuf;

/* sop is one posted operation; the backend's ctx for it is the sop. */
typedef struct sop {
  struct sop *next; /* a FIFO, or the free list */
  struct sop *all;  /* every sop, freed with the xport */
  xport_op kind;
  int staged;    /* its bytes go through hb */
  int copied;    /* a send: its device-to-host copy is done */
  int cancelled; /* a send: its peer was removed before it was posted */
  int failed;    /* a receive: completes without a copy */
  xport_peer peer;
  void *ubuf, *uctx;
  size_t len; /* a send's length; a receive's capacity, then its length */
  hbuf *hb;
  void *ev; /* made on first use, kept with the sop */
  int status, detail;
} sop;

typedef struct fifo {
  sop *head, *tail;
} fifo;

typedef struct stage {
  xport head;
  xport_ops ops; /* the inner backend's name, the layer's calls */
  xport *in;
  xport_config cfg;
  const xcuda_api *cu;
  xcuda_info info;
  void *s_out, *s_in; /* device-to-host and host-to-device streams */
  /* pinned buffers: free lists per size class, bytes held per direction */
  hbuf *free_hb[2][NCLASS];
  size_t held[2];
  uint64_t inflight[2]; /* posted operations not yet completed */
  size_t budget;
  /* sends: copying, or copied and waiting for the backend to take them
     (in posting order); receives: completed by the backend, copying to
     the device or waiting behind one that is */
  fifo out, in_q;
  sop *free_sops;
  sop *all_sops; /* the backend may hold some at close */
  hbuf *all_hb;
  /* completions ready for the caller */
  xport_cqe *ready;
  size_t rhead, rcount, rcap;
  /* device regions (owned: xport_mem_alloc's, freed with the xport) */
  xregions reg;
  uint64_t staged_out, staged_in;
  char desc[512];
} stage;

static const xport_ops stage_ops_template;

static void fifo_push(fifo *f, sop *o) {
  o->next = NULL;
  if (f->tail) {
    f->tail->next = o;
  } else {
    f->head = o;
  }
  f->tail = o;
}

static sop *fifo_pop(fifo *f) {
  sop *o = f->head;
  if (o) {
    f->head = o->next;
    if (f->head == NULL) {
      f->tail = NULL;
    }
  }
  return o;
}

static void logf_cuda(stage *s, const char *what, int e) {
  xport_logf(&s->cfg, "cuda: %s: %s", what, xcuda_strerror(e));
}

/* is_device says whether [buf, buf + len) lies in a device region. */
static int is_device(const stage *s, const void *buf, size_t len) {
  return xregions_find(&s->reg, buf, len ? len : 1) != NULL;
}

/* ------------------------------------------------------------------ */
/* pinned buffers and operations                                       */

static int class_of(size_t n) {
  int c = MIN_CLASS;
  while (c < NCLASS - 1 && ((size_t)1 << c) < n) {
    ++c;
  }
  return c;
}

/* release_idle frees unused pinned buffers of |dir| until |need| more
   bytes fit the budget. */
static void release_idle(stage *s, int dir, size_t need) {
  int c;
  for (c = NCLASS - 1; c >= MIN_CLASS && s->held[dir] + need > s->budget; --c) {
    while (s->free_hb[dir][c] && s->held[dir] + need > s->budget) {
      hbuf *h = s->free_hb[dir][c];
      s->free_hb[dir][c] = h->next;
      s->cu->host_free(h->p);
      s->held[dir] -= (size_t)1 << c;
      h->p = NULL; /* the struct stays on the all list */
    }
  }
}

/* get_hbuf returns a pinned buffer of at least |n| bytes for |dir|, or
   NULL (-EAGAIN: the budget is spent by buffers in use; -ENOMEM). */
static hbuf *get_hbuf(stage *s, int dir, size_t n, int *err) {
  int c = class_of(n);
  size_t sz = (size_t)1 << c;
  hbuf *h = s->free_hb[dir][c];
  void *p = NULL;
  int e;

  if (h) {
    s->free_hb[dir][c] = h->next;
    return h;
  }
  if (s->held[dir] + sz > s->budget) {
    release_idle(s, dir, sz);
  }
  /* Over the budget with buffers in use: wait for them.  With none in
     use, one message always gets its buffer. */
  if (s->held[dir] + sz > s->budget && s->inflight[dir] > 0) {
    *err = -EAGAIN;
    return NULL;
  }
  h = malloc(sizeof(*h));
  if (h == NULL) {
    *err = -ENOMEM;
    return NULL;
  }
  e = s->cu->host_alloc(&p, sz);
  if (e != 0) {
    logf_cuda(s, "pinned host buffer", e);
    free(h);
    *err = s->inflight[dir] > 0 ? -EAGAIN : -ENOMEM;
    return NULL;
  }
  h->p = p;
  h->cls = c;
  h->all = s->all_hb;
  s->all_hb = h;
  s->held[dir] += sz;
  return h;
}

static void put_hbuf(stage *s, int dir, hbuf *h) {
  if (h) {
    h->next = s->free_hb[dir][h->cls];
    s->free_hb[dir][h->cls] = h;
  }
}

static sop *get_sop(stage *s) {
  sop *o = s->free_sops;
  if (o) {
    s->free_sops = o->next;
  } else {
    o = calloc(1, sizeof(*o));
    if (o == NULL) {
      return NULL;
    }
    o->all = s->all_sops;
    s->all_sops = o;
  }
  {
    void *ev = o->ev;
    sop *all = o->all;
    memset(o, 0, sizeof(*o));
    o->ev = ev;
    o->all = all;
  }
  return o;
}

static void put_sop(stage *s, sop *o) {
  o->next = s->free_sops;
  s->free_sops = o;
}

/* record puts |o|'s event behind the copy just queued on |stream|. */
static int record(stage *s, sop *o, void *stream) {
  int e = 0;
  if (o->ev == NULL) {
    e = s->cu->event_create(&o->ev);
    if (e != 0) {
      o->ev = NULL;
      return e;
    }
  }
  return s->cu->event_record(o->ev, stream);
}

/* complete hands |o|'s completion to the caller and recycles it. */
static void complete(stage *s, sop *o, int status, int detail) {
  xport_cqe *q;

  if (s->rcount == s->rcap) {
    size_t nc = s->rcap ? s->rcap * 2 : 256, i;
    xport_cqe *n = malloc(nc * sizeof(*n));
    if (n == NULL) {
      return; /* cannot happen short of memory exhaustion */
    }
    for (i = 0; i < s->rcount; ++i) {
      n[i] = s->ready[(s->rhead + i) % s->rcap];
    }
    free(s->ready);
    s->ready = n;
    s->rhead = 0;
    s->rcap = nc;
  }
  q = &s->ready[(s->rhead + s->rcount) % s->rcap];
  ++s->rcount;
  memset(q, 0, sizeof(*q));
  q->op = o->kind;
  q->status = status;
  q->detail = detail;
  q->peer = o->peer;
  q->buf = o->ubuf;
  q->ctx = o->uctx;
  q->len = o->len;
  --s->inflight[o->kind == XPORT_OP_SEND ? DIR_SEND : DIR_RECV];
  put_hbuf(s, o->kind == XPORT_OP_SEND ? DIR_SEND : DIR_RECV, o->hb);
  o->hb = NULL;
  put_sop(s, o);
}

static int cuda_detail(int e) {
  return XPORT_DETAIL_CUDA - e;
}

/* ------------------------------------------------------------------ */
/* the pump                                                             */

/* take_inner moves the backend's completions in: sends complete; a
   staged receive starts its copy to the device; every receive completes
   in the order the backend gave them. */
static void take_inner(stage *s) {
  xport_cqe q[64];
  size_t n, i;

  while ((n = xport_poll_cq(s->in, q, 64)) > 0) {
    for (i = 0; i < n; ++i) {
      sop *o = q[i].ctx;
      if (o->kind == XPORT_OP_SEND) {
        complete(s, o, q[i].status, q[i].detail);
        continue;
      }
      o->peer = q[i].peer;
      o->len = q[i].len;
      o->status = q[i].status;
      o->detail = q[i].detail;
      if (o->staged && q[i].status == 0 && q[i].len > 0) {
        int e = s->cu->memcpy_async(o->ubuf, o->hb->p, q[i].len, s->s_in);
        if (e == 0) {
          e = record(s, o, s->s_in);
        }
        if (e != 0) {
          logf_cuda(s, "copy to the device", e);
          o->failed = 1;
          o->status = -EIO;
          o->detail = cuda_detail(e);
        } else {
          s->staged_in += q[i].len;
        }
      } else {
        o->failed = 1; /* nothing to copy: an error, or a host buffer */
      }
      if (o->failed && s->in_q.head == NULL) {
        complete(s, o, o->status, o->detail);
      } else {
        fifo_push(&s->in_q, o);
      }
    }
  }
}

/* finish_recvs completes the receives whose copies are done, in order. */
static void finish_recvs(stage *s) {
  sop *o;
  while ((o = s->in_q.head) != NULL) {
    if (!o->failed) {
      int e = s->cu->event_query(o->ev);
      if (e == XCUDA_PENDING) {
        return;
      }
      if (e != 0) {
        logf_cuda(s, "copy to the device", e);
        o->status = -EIO;
        o->detail = cuda_detail(e);
      }
    }
    fifo_pop(&s->in_q);
    complete(s, o, o->status, o->detail);
  }
}

/* check_sends marks the sends whose copies are done (in order), or
   completes those that failed or were cancelled. */
static void check_sends(stage *s) {
  sop *o;
  for (o = s->out.head; o; o = o->next) {
    if (o->copied) {
      continue;
    }
    int e = s->cu->event_query(o->ev);
    if (e == XCUDA_PENDING) {
      return;
    }
    if (e != 0) {
      logf_cuda(s, "copy from the device", e);
      o->status = -EIO;
      o->detail = cuda_detail(e);
    }
    o->copied = 1;
  }
}

/* post_sends hands the copied sends to the backend, in order. */
static void post_sends(stage *s) {
  sop *o;
  check_sends(s);
  while ((o = s->out.head) != NULL && o->copied) {
    int rv = 0;
    if (o->cancelled) {
      rv = -ECANCELED;
    } else if (o->status == 0) {
      rv = xport_post_send(s->in, o->peer, o->staged ? o->hb->p : o->ubuf,
                           o->len, o);
      if (rv == -EAGAIN) {
        return;
      }
    }
    fifo_pop(&s->out);
    if (o->status != 0) {
      complete(s, o, o->status, o->detail);
    } else if (rv != 0) {
      complete(s, o, rv, 0);
    }
  }
}

/* ------------------------------------------------------------------ */
/* the ops                                                              */

static stage *S(xport *x) {
  return (stage *)x;
}

static int st_post_send(xport *x, xport_peer peer, const void *buf, size_t len,
                        void *ctx) {
  stage *s = S(x);
  int dev = is_device(s, buf, len), err = 0, e;
  sop *o;

  if (s->inflight[DIR_SEND] >= s->cfg.max_sends) {
    return -EAGAIN;
  }
  if (len > s->cfg.max_msg_size) {
    return -EMSGSIZE;
  }
  o = get_sop(s);
  if (o == NULL) {
    return -ENOMEM;
  }
  o->kind = XPORT_OP_SEND;
  o->peer = peer;
  o->ubuf = (void *)buf;
  o->uctx = ctx;
  o->len = len;
  if (!dev && s->out.head == NULL) {
    /* A host buffer with nothing staged ahead of it: straight through. */
    e = xport_post_send(s->in, peer, buf, len, o);
    if (e != 0) {
      put_sop(s, o);
      return e;
    }
    ++s->inflight[DIR_SEND];
    return 0;
  }
  if (dev) {
    o->hb = get_hbuf(s, DIR_SEND, len, &err);
    if (o->hb == NULL) {
      put_sop(s, o);
      return err;
    }
    o->staged = 1;
    e = len ? s->cu->memcpy_async(o->hb->p, buf, len, s->s_out) : 0;
    if (e == 0) {
      e = record(s, o, s->s_out);
    }
    if (e != 0) {
      logf_cuda(s, "copy from the device", e);
      put_hbuf(s, DIR_SEND, o->hb);
      put_sop(s, o);
      return -EIO;
    }
    s->staged_out += len;
  } else {
    o->copied = 1; /* a host buffer behind staged ones keeps its place */
  }
  ++s->inflight[DIR_SEND];
  fifo_push(&s->out, o);
  return 0;
}

static int st_post_recv(xport *x, void *buf, size_t cap, void *ctx) {
  stage *s = S(x);
  int dev = is_device(s, buf, cap), err = 0, e;
  sop *o;

  if (s->inflight[DIR_RECV] >= s->cfg.max_recvs) {
    return -EAGAIN;
  }
  o = get_sop(s);
  if (o == NULL) {
    return -ENOMEM;
  }
  o->kind = XPORT_OP_RECV;
  o->ubuf = buf;
  o->uctx = ctx;
  o->len = cap;
  if (dev) {
    o->hb = get_hbuf(s, DIR_RECV, cap, &err);
    if (o->hb == NULL) {
      put_sop(s, o);
      return err;
    }
    o->staged = 1;
  }
  e = xport_post_recv(s->in, dev ? o->hb->p : buf, cap, o);
  if (e != 0) {
    put_hbuf(s, DIR_RECV, o->hb);
    o->hb = NULL;
    put_sop(s, o);
    return e;
  }
  ++s->inflight[DIR_RECV];
  return 0;
}

static size_t st_poll_cq(xport *x, xport_cqe *cqes, size_t n) {
  stage *s = S(x);
  size_t k = 0;

  take_inner(s);
  finish_recvs(s);
  while (k < n && s->rcount > 0) {
    cqes[k++] = s->ready[s->rhead];
    s->rhead = (s->rhead + 1) % s->rcap;
    --s->rcount;
  }
  return k;
}

static int st_progress(xport *x, uint64_t timeout_ns) {
  stage *s = S(x);
  int rv;

  post_sends(s);
  take_inner(s);
  finish_recvs(s);
  /* Copies end without waking the backend's wait: look again soon. */
  if (s->rcount > 0) {
    timeout_ns = 0;
  } else if ((s->out.head || s->in_q.head) &&
             (timeout_ns == 0 || timeout_ns > 20000)) {
    timeout_ns = 20000;
  }
  rv = xport_progress(s->in, timeout_ns);
  if (rv != 0) {
    return rv;
  }
  take_inner(s);
  finish_recvs(s);
  post_sends(s);
  return 0;
}

static int st_add_peer(xport *x, const struct sockaddr *addr, socklen_t len,
                       xport_peer *ppeer) {
  return xport_add_peer(S(x)->in, addr, len, ppeer);
}

static int st_remove_peer(xport *x, xport_peer peer) {
  stage *s = S(x);
  int rv = xport_remove_peer(s->in, peer);
  sop *o;

  if (rv == 0) {
    for (o = s->out.head; o; o = o->next) {
      if (o->peer == peer) {
        o->cancelled = 1;
      }
    }
  }
  return rv;
}

static void st_get_stats(xport *x, xport_stats *st) {
  stage *s = S(x);
  xport_get_stats(s->in, st);
  st->staged_out = s->staged_out;
  st->staged_in = s->staged_in;
}

static int st_local_addr(xport *x, struct sockaddr_storage *ss,
                         socklen_t *len) {
  return xport_local_addr(S(x)->in, ss, len);
}

static int st_peer_addr(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                        socklen_t *len) {
  return xport_peer_addr(S(x)->in, peer, ss, len);
}

static const char *st_describe(xport *x) {
  stage *s = S(x);
  snprintf(s->desc, sizeof(s->desc),
           "%s; cuda: %s (device %d), staged through pinned host buffers",
           xport_describe(s->in), s->info.name, s->info.device);
  return s->desc;
}

static void *st_mem_alloc(xport *x, size_t len) {
  stage *s = S(x);
  void *p = NULL;
  int e = s->cu->dev_alloc(&p, len ? len : 1);

  if (e != 0) {
    logf_cuda(s, "device memory", e);
    return NULL;
  }
  if (xregions_add(&s->reg, p, len ? len : 1, 1, NULL) != 0) {
    s->cu->dev_free(p);
    return NULL;
  }
  return p;
}

static void st_mem_free(xport *x, void *p) {
  stage *s = S(x);
  xregion r;
  if (xregions_del(&s->reg, p, &r) == 0 && r.owned) {
    s->cu->dev_free(p);
  }
}

static int st_mem_register(xport *x, void *buf, size_t len) {
  return xregions_add(&S(x)->reg, buf, len, 0, NULL);
}

static int st_mem_unregister(xport *x, void *buf) {
  return xregions_del(&S(x)->reg, buf, NULL);
}

static int st_mem_copy(xport *x, void *dst, const void *src, size_t len) {
  stage *s = S(x);
  int e = len ? s->cu->memcpy_sync(dst, src, len) : 0;
  if (e != 0) {
    logf_cuda(s, "copy", e);
    return -EIO;
  }
  return 0;
}

/* free_all frees everything the layer made: every pinned buffer and
   sop, the backend's or not (it has been closed). */
static void free_all(stage *s) {
  sop *o;
  hbuf *h;
  size_t i;

  while ((h = s->all_hb) != NULL) {
    s->all_hb = h->all;
    if (h->p) {
      s->cu->host_free(h->p);
    }
    free(h);
  }
  while ((o = s->all_sops) != NULL) {
    s->all_sops = o->all;
    if (o->ev) {
      s->cu->event_destroy(o->ev);
    }
    free(o);
  }
  for (i = 0; i < s->reg.n; ++i) {
    if (s->reg.r[i].owned) {
      s->cu->dev_free((void *)s->reg.r[i].lo);
    }
  }
  if (s->s_out) {
    s->cu->stream_destroy(s->s_out);
  }
  if (s->s_in) {
    s->cu->stream_destroy(s->s_in);
  }
  xregions_free(&s->reg);
  free(s->ready);
  free(s);
}

static void st_close(xport *x) {
  stage *s = S(x);

  /* Copies into the caller's device memory end before it is theirs. */
  s->cu->stream_sync(s->s_out);
  s->cu->stream_sync(s->s_in);
  xport_close(s->in);
  /* The backend dropped what it held without completions; what it held
     and what waits here is on the all lists. */
  free_all(s);
}

int xport_stage_open(xport **px, const xport_ops *inner,
                     const xport_config *cfg) {
  stage *s = calloc(1, sizeof(*s));
  xport_config icfg = *cfg;
  char err[256] = "";
  int rv, e;

  if (s == NULL) {
    return -ENOMEM;
  }
  s->cfg = *cfg;
  rv = xcuda_open(cfg->cuda_device, &s->cu, &s->info, err, sizeof(err));
  if (rv != 0) {
    xport_logf(cfg, "%s", err);
    free(s);
    return rv;
  }
  s->budget = cfg->stage_bytes ? cfg->stage_bytes : (size_t)256 << 20;
  if ((e = s->cu->stream_create(&s->s_out)) != 0 ||
      (e = s->cu->stream_create(&s->s_in)) != 0) {
    logf_cuda(s, "stream", e);
    free_all(s);
    return -EIO;
  }
  icfg.mem = XPORT_MEM_HOST;
  rv = inner->open(&s->in, &icfg);
  if (rv != 0) {
    free_all(s);
    return rv;
  }
  s->ops = stage_ops_template;
  s->ops.name = inner->name;
  s->head.ops = &s->ops;
  *px = &s->head;
  return 0;
}

static const xport_ops stage_ops_template = {
    .name = "stage",
    .open = NULL,
    .close = st_close,
    .add_peer = st_add_peer,
    .remove_peer = st_remove_peer,
    .post_send = st_post_send,
    .post_recv = st_post_recv,
    .poll_cq = st_poll_cq,
    .progress = st_progress,
    .get_stats = st_get_stats,
    .local_addr = st_local_addr,
    .peer_addr = st_peer_addr,
    .describe = st_describe,
    .mem_alloc = st_mem_alloc,
    .mem_free = st_mem_free,
    .mem_register = st_mem_register,
    .mem_unregister = st_mem_unregister,
    .mem_copy = st_mem_copy,
};
