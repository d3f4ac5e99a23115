/*
 * server.c: the srd-perf server.  It follows many clients at once, each
 * its own session, through the control protocol (ctl.c), all over one
 * xport: it keeps a shared pool of receives posted for the phases under
 * way, hands each completion to its peer's session, counts (and with
 * --verify checks) the data, echoes it for lat, and answers DONE with
 * RESULT.  A session that ends (BYE, a failed send, silence) frees its
 * slot at once; past --max-clients a HELLO gets ERROR "server full".  In
 * a reverse or bidir phase (-R, --bidir) it also sends: a window of data
 * messages kept full, as the client's run_stream does, until the count
 * or the client's DONE.  A HELLO of another control protocol gets an
 * ERROR that says so, in a frame any version reads (ctl.c).  It runs as
 * -s (run_server) or as the loopback mode's thread (lb_server_main).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <pthread.h>

#include "perf.h"

/* rbuf is a receive buffer of the shared pool (or, while it echoes a
   lat message, that echo's send buffer), or a send buffer of a session's
   phase (|src|). */
typedef struct rbuf {
  uint8_t *p;
  size_t cap;
  int dev;                  /* in device memory (-m cuda) */
  int posted;               /* a receive the transport holds */
  int echo;                 /* lat: being echoed */
  int src;                  /* a send buffer: SRC_DATA or SRC_DRAIN */
  uint64_t gen;             /* the session it was echoed or sent in */
  uint64_t phase;           /* src: the phase of that session */
  struct rbuf *nfree;       /* src: the session's next idle one */
  struct rbuf *prev, *next; /* every live buffer, freed at the end */
} rbuf;

/* A send buffer's kind: a data message the server sends (-R, --bidir),
   or a DRAIN for a receive of the client's too small for the phase. */
enum { SRC_DATA = 1, SRC_DRAIN = 2 };

/* session is one client's state, from its HELLO to its end. */
typedef struct session {
  int used;
  xport_peer peer;
  uint64_t gen; /* which session this is (1, 2, ...): tells a completion
                   of an earlier session of the same peer from its own */
  uint64_t last_heard;
  /* the phase */
  int in_phase;
  test_kind test;
  uint64_t size, cap, depth;
  int verify;
  uint64_t received, bytes, dups, corrupt, rerr, garbage;
  uint64_t drops0[16]; /* the engine's drops when the phase started */
  uint64_t retr0;      /* and its retransmissions */
  uint8_t *seen;       /* --verify: the indexes seen */
  uint64_t seen_bits;
  uint64_t done_count;
  uint64_t done_at;
  int done_seen; /* the phase's DONE came */
  dir_kind dir;
  /* receiver timing: the warm-up's count (START), when it ended (or the
     phase began, without one), the last message since, how many */
  uint64_t warm, t0, t_last, measured;
  /* the sending side (reverse, bidir) */
  uint64_t phase; /* phases so far: tells a send buffer's own */
  int sending;    /* this phase sends data */
  int s_stop;     /* DONE came: post no more */
  int ready_due;  /* READY waits for the drains' completions */
  uint64_t ready_drains;
  uint64_t s_total; /* messages to send (0: until DONE) */
  uint64_t s_next;  /* posted so far */
  uint64_t s_drains;
  rbuf *s_free; /* idle send buffers */
} session;

/* creply is a control reply's send buffer. */
typedef struct creply {
  uint8_t *b;
  int busy;
  uint64_t gen;    /* the session it was sent in (0: none) */
  xport_peer peer; /* whom to */
  int forget_peer; /* the peer has no session: forget it once sent */
} creply;

/* server is one xport's server: its sessions share the xport and its pool
   of receives.  A receive matches the next message from any peer, so the
   pool holds buffers of the largest size any session's phase needs, as
   many as the phases' windows together, and each completion goes to the
   session of its peer. */
typedef struct server {
  const opts *o;
  xport *x;
  int quiet;
  session *sess;
  int max_sess, nactive;
  uint64_t sessions; /* started so far */
  uint64_t ended;    /* ended so far */
  rbuf *live;        /* buffers the transport may hold */
  uint64_t posted_now;
  /* drained_at: when a round last took every posted receive.  A client
     may be silent then only because others took them (tcp reads its
     connections in turn, the first ones first): no one is idle while it
     lasts. */
  uint64_t drained_at;
  creply *cr;
  int ncr;
  msgmem mm; /* the receive buffers (-m) */
  /* --once counts sessions over every transport of the process: these
     point to counts shared with the other server, or to own_*. */
  atomic_int *all_active, own_active;
  atomic_ullong *all_ended, own_ended;
} server;

/* POOL_MAX bounds the receives posted at once (the backends' default
   max_recvs is 1024). */
#define POOL_MAX 1000
/* KEEP_SMALL: a buffer of at most this many bytes is posted again for any
   smaller need; a larger one only for its own size. */
#define KEEP_SMALL 65536

static void free_mem(server *s, rbuf *r, int closed);

/* pool_cap is the size every receive must have now: the largest phase's,
   at least a control message's. */
static size_t pool_cap(const server *s) {
  size_t cap = CTL_SIZE;

  for (int i = 0; i < s->max_sess; ++i) {
    if (s->sess[i].used && s->sess[i].in_phase && s->sess[i].cap > cap) {
      cap = s->sess[i].cap;
    }
  }
  return cap;
}

/* pool_target is how many receives should be posted: a few for control
   messages, one more per session, and each phase's depth. */
static uint64_t pool_target(const server *s) {
  uint64_t n = 4 + (uint64_t)s->nactive;

  for (int i = 0; i < s->max_sess; ++i) {
    if (s->sess[i].used && s->sess[i].in_phase) {
      n += s->sess[i].depth;
    }
  }
  return n > POOL_MAX ? POOL_MAX : n;
}

/* pool_keeps says whether |r| may be posted again for receives of
   |cap| bytes. */
static int pool_keeps(const rbuf *r, size_t cap) {
  return r->cap >= cap && (r->cap == cap || r->cap <= KEEP_SMALL);
}

static int post_rbuf(server *s, size_t cap) {
  rbuf *r = malloc(sizeof(*r));
  int rv;

  if (r == NULL) {
    return -ENOMEM;
  }
  r->cap = cap;
  r->echo = 0;
  r->src = 0;
  /* With -m cuda every receive is in device memory: any of them may take
     a phase's data.  A control message is read back (server_step). */
  r->dev = s->mm.mem != XPORT_MEM_HOST;
  r->p = r->dev ? msg_alloc(&s->mm, cap) : xalloc(cap);
  rv = xport_post_recv(s->x, r->p, cap, r);
  if (rv != 0) {
    free_mem(s, r, 0);
    free(r);
    return rv;
  }
  r->posted = 1;
  r->prev = NULL;
  r->next = s->live;
  if (s->live) {
    s->live->prev = r;
  }
  s->live = r;
  ++s->posted_now;
  return 0;
}

/* free_mem frees |r|'s memory; |closed|: after xport_close. */
static void free_mem(server *s, rbuf *r, int closed) {
  if (r->dev) {
    msg_free(&s->mm, r->p, closed);
  } else {
    free(r->p);
  }
}

static void free_rbuf(server *s, rbuf *r, int closed) {
  if (r->prev) {
    r->prev->next = r->next;
  } else {
    s->live = r->next;
  }
  if (r->next) {
    r->next->prev = r->prev;
  }
  free_mem(s, r, closed);
  free(r);
}

/* new_src returns a send buffer of |len| bytes for |ss|'s phase, on the
   live list, or dies. */
static rbuf *new_src(server *s, session *ss, size_t len, int src) {
  rbuf *r = calloc(1, sizeof(*r));

  if (r == NULL) {
    tool_die("out of memory");
  }
  r->cap = len;
  r->src = src;
  r->gen = ss->gen;
  r->phase = ss->phase;
  r->dev = src == SRC_DATA && s->mm.mem != XPORT_MEM_HOST;
  r->p = src == SRC_DATA ? msg_alloc(&s->mm, len) : xalloc(len);
  r->next = s->live;
  if (s->live) {
    s->live->prev = r;
  }
  s->live = r;
  return r;
}

/* src_release frees |ss|'s idle send buffers and ends its sending side;
   those the transport holds are freed as they complete. */
static void src_release(server *s, session *ss) {
  while (ss->s_free) {
    rbuf *r = ss->s_free;
    ss->s_free = r->nfree;
    free_rbuf(s, r, 0);
  }
  ss->sending = 0;
  ss->ready_due = 0;
}

/* find_session returns |peer|'s session, or NULL. */
static session *find_session(server *s, xport_peer peer) {
  for (int i = 0; i < s->max_sess; ++i) {
    if (s->sess[i].used && s->sess[i].peer == peer) {
      return &s->sess[i];
    }
  }
  return NULL;
}

/* srv_reply sends |c| to |peer| in session |ss| (NULL: none; the peer is
   then forgotten once the reply is sent). */
static void srv_reply(server *s, session *ss, xport_peer peer, const ctl *c) {
  int i;

  for (i = 0; i < s->ncr && s->cr[i].busy; ++i) {
  }
  if (i == s->ncr) {
    return; /* peers that ignore our replies: drop this one */
  }
  ctl_encode(s->cr[i].b, c);
  if (xport_post_send(s->x, peer, s->cr[i].b, CTL_SIZE,
                      (void *)(uintptr_t)(i + 1)) == 0) {
    s->cr[i].busy = 1;
    s->cr[i].gen = ss ? ss->gen : 0;
    s->cr[i].peer = peer;
    s->cr[i].forget_peer = ss == NULL;
  }
}

/* peer_in_flight says whether a reply to |peer| is still being sent. */
static int peer_in_flight(const server *s, xport_peer peer) {
  for (int i = 0; i < s->ncr; ++i) {
    if (s->cr[i].busy && s->cr[i].peer == peer) {
      return 1;
    }
  }
  return 0;
}

/* srv_end_session ends |ss| at once: its slot is free for the next
   client.  The peer is forgotten unless |keep_peer| (a client restarted
   on the same ports, a new incarnation, has taken it over) or a reply to
   it is still being sent (forgotten when that completes). */
static void srv_end_session(server *s, session *ss, const char *why,
                            int keep_peer) {
  char a[80];
  struct sockaddr_storage st;
  socklen_t l;

  if (!ss->used) {
    return;
  }
  if (why && !s->quiet) {
    if (xport_peer_addr(s->x, ss->peer, &st, &l) == 0) {
      xport_format_addr((struct sockaddr *)&st, a, sizeof(a));
    } else {
      strcpy(a, "?");
    }
    fprintf(stderr, "%s: client %s: %s\n", tool_name(), a, why);
  }
  ss->used = 0;
  ss->in_phase = 0;
  src_release(s, ss);
  free(ss->seen);
  ss->seen = NULL;
  --s->nactive;
  ++s->ended;
  atomic_fetch_sub(s->all_active, 1);
  atomic_fetch_add(s->all_ended, 1);
  if (keep_peer) {
    return;
  }
  if (peer_in_flight(s, ss->peer)) {
    for (int i = 0; i < s->ncr; ++i) {
      if (s->cr[i].busy && s->cr[i].peer == ss->peer) {
        s->cr[i].forget_peer = 1;
      }
    }
  } else {
    xport_remove_peer(s->x, ss->peer);
  }
}

/* srv_fill_posted keeps pool_target receives of pool_cap bytes posted. */
static void srv_fill_posted(server *s) {
  uint64_t target = pool_target(s);
  size_t cap = pool_cap(s);

  while (s->posted_now < target) {
    if (post_rbuf(s, cap) != 0) {
      break;
    }
  }
}

/* repost_or_free posts |r| again for the pool, or frees it (too small
   now, too large, or more than the pool needs). */
static void repost_or_free(server *s, rbuf *r) {
  if (pool_keeps(r, pool_cap(s)) && s->posted_now < pool_target(s) &&
      xport_post_recv(s->x, r->p, r->cap, r) == 0) {
    r->posted = 1;
    ++s->posted_now;
  } else {
    free_rbuf(s, r, 0);
  }
}

static void srv_result(server *s, session *ss) {
  ctl r;
  xport_stats st;

  memset(&r, 0, sizeof(r));
  xport_get_stats(s->x, &st);
  r.type = C_RESULT;
  r.v[0] = ss->received;
  r.v[1] = ss->bytes;
  r.v[2] = ss->dups;
  r.v[3] = ss->corrupt;
  r.v[4] = ss->rerr + ss->garbage;
  r.v[5] = st.retransmits - ss->retr0;
  r.v[6] = ss->s_next;
  r.v[7] = ss->t0 && ss->t_last > ss->t0 ? ss->t_last - ss->t0 : 0;
  r.v[8] = ss->measured;
  for (int d = 0; d < NDROPS; ++d) {
    r.drops[d] = st.drops[d] - ss->drops0[d];
  }
  srv_reply(s, ss, ss->peer, &r);
  src_release(s, ss);
  ss->in_phase = 0;
  ss->done_count = 0;
  ss->done_seen = 0;
  free(ss->seen);
  ss->seen = NULL;
}

/* srv_hello starts |peer|'s session (its HELLO). */
static void srv_hello(server *s, session *ss, xport_peer peer, const ctl *c) {
  ctl r;
  xport_stats st;

  memset(&r, 0, sizeof(r));
  if (ss) {
    if (!s->quiet) {
      fprintf(stderr, "%s: session %" PRIu64 " restarted by a new HELLO\n",
              tool_name(), ss->gen);
    }
    /* The same peer again: a client restarted on the same ports before
       its last session ended here (no BYE).  That session is over; the
       peer is the new one's. */
    srv_end_session(s, ss, NULL, 1);
  }
  if (c->size > s->o->max_size) {
    r.type = C_ERROR;
    snprintf(r.text, sizeof(r.text), "size above the server's --max-size");
    srv_reply(s, NULL, peer, &r);
    return;
  }
  if (s->nactive >= s->max_sess) {
    r.type = C_ERROR;
    snprintf(r.text, sizeof(r.text), "server full: %d clients", s->max_sess);
    srv_reply(s, NULL, peer, &r);
    return;
  }
  for (ss = s->sess; ss->used; ++ss) {
  }
  memset(ss, 0, sizeof(*ss));
  ss->used = 1;
  ss->peer = peer;
  ss->gen = ++s->sessions;
  ss->last_heard = xport_now();
  ++s->nactive;
  atomic_fetch_add(s->all_active, 1);
  if (!s->quiet) {
    char a[80];
    struct sockaddr_storage pa;
    socklen_t l;
    if (xport_peer_addr(s->x, peer, &pa, &l) == 0) {
      xport_format_addr((struct sockaddr *)&pa, a, sizeof(a));
    } else {
      strcpy(a, "?");
    }
    fprintf(stderr, "%s: client %s: session %" PRIu64 " (%d of %d at once)\n",
            tool_name(), a, ss->gen, s->nactive, s->max_sess);
  }
  xport_get_stats(s->x, &st);
  r.type = C_HELLO_OK;
  r.v[0] = st.n_paths;
  r.v[1] = s->o->max_size;
  srv_reply(s, ss, peer, &r);
}

/* srv_start starts a phase of |ss| (its START). */
static void srv_start(server *s, session *ss, const ctl *c) {
  ctl r;
  xport_stats st;
  dir_kind dir = (dir_kind)c->v[1];
  /* reverse: the client sends control messages only */
  size_t cap = c->size < CTL_SIZE || dir == D_REV ? CTL_SIZE : (size_t)c->size;
  int small = 0;

  memset(&r, 0, sizeof(r));
  src_release(s, ss); /* a phase cut short by this START */
  ss->in_phase = 1;
  ss->dir = dir;
  ++ss->phase;
  ss->done_seen = 0;
  ss->warm = c->v[2];
  ss->t0 = ss->warm ? 0 : xport_now();
  ss->t_last = ss->measured = 0;
  ss->test = (test_kind)c->test;
  ss->size = c->size;
  ss->cap = cap;
  ss->verify = (c->flags & 1) != 0;
  ss->received = ss->bytes = ss->dups = ss->corrupt = ss->rerr = 0;
  ss->garbage = 0;
  xport_get_stats(s->x, &st);
  memcpy(ss->drops0, st.drops, sizeof(ss->drops0));
  ss->retr0 = st.retransmits;
  ss->done_count = 0;
  ss->depth = ss->test == T_LAT ? 16
              : dir == D_REV    ? 0
                                : (c->v[0] ? c->v[0] : 2) + 2;
  if (ss->depth > POOL_MAX) {
    ss->depth = POOL_MAX;
  }
  free(ss->seen);
  ss->seen = NULL;
  ss->seen_bits = 0;
  /* Receives posted before this phase that are too small for it match
     first (posting order, whoever sends): the client fills every receive
     posted now with DRAIN messages before it sends data.  Messages of
     other clients meanwhile only take some of them sooner. */
  for (rbuf *b = s->live; b; b = b->next) {
    small |= b->posted && b->cap < cap;
  }
  r.v[0] = small ? s->posted_now : 0;
  srv_fill_posted(s);
  r.type = C_READY;
  if (dir != D_FWD) {
    /* The sending side: a window of buffers, and first a DRAIN for each
       receive of the client's too small for this size (posted for an
       earlier phase, they take the next messages first).  The data and
       READY wait until the drains completed, as the client's data waits
       for its drains (client.c, send_drains). */
    uint64_t w = c->v[0] ? c->v[0] : 2, k;
    ctl d;
    ss->sending = 1;
    ss->s_stop = 0;
    ss->s_total = c->count;
    ss->s_next = 0;
    ss->s_drains = 0;
    for (k = 0; k < w; ++k) {
      rbuf *b = new_src(s, ss, (size_t)c->size, SRC_DATA);
      b->nfree = ss->s_free;
      ss->s_free = b;
    }
    memset(&d, 0, sizeof(d));
    d.type = C_DRAIN;
    for (k = 0; k < c->v[3]; ++k) {
      rbuf *b = new_src(s, ss, CTL_SIZE, SRC_DRAIN);
      ctl_encode(b->p, &d);
      if (xport_post_send(s->x, ss->peer, b->p, CTL_SIZE, b) != 0) {
        free_rbuf(s, b, 0);
        break;
      }
      ++ss->s_drains;
    }
    if (ss->s_drains) {
      ss->ready_due = 1;
      ss->ready_drains = r.v[0];
      return;
    }
  }
  srv_reply(s, ss, ss->peer, &r);
}

/* srv_pump keeps |ss|'s window of data sends full (reverse, bidir). */
static void srv_pump(server *s, session *ss) {
  if (!ss->in_phase || !ss->sending || ss->ready_due || ss->s_stop) {
    return;
  }
  while (ss->s_free && (ss->s_total == 0 || ss->s_next < ss->s_total)) {
    rbuf *r = ss->s_free;
    msg_refill(&s->mm, r->p, (size_t)ss->size, ss->s_next, ss->verify);
    if (xport_post_send(s->x, ss->peer, r->p, (size_t)ss->size, r) != 0) {
      break; /* -EAGAIN: the next round */
    }
    ss->s_free = r->nfree;
    ++ss->s_next;
  }
}

/* srv_src_done takes back the send buffer |r| whose send completed:
   into its phase's window, or freed when that phase is over. */
static void srv_src_done(server *s, rbuf *r, const xport_cqe *c) {
  session *ss = find_session(s, c->peer);

  if (ss == NULL || ss->gen != r->gen || ss->phase != r->phase ||
      !ss->sending) {
    free_rbuf(s, r, 0);
    return;
  }
  if (r->src == SRC_DRAIN) {
    free_rbuf(s, r, 0);
    if (--ss->s_drains == 0 && ss->ready_due) {
      ctl m;
      memset(&m, 0, sizeof(m));
      m.type = C_READY;
      m.v[0] = ss->ready_drains;
      ss->ready_due = 0;
      srv_reply(s, ss, ss->peer, &m);
    }
    return;
  }
  r->nfree = ss->s_free;
  ss->s_free = r;
}

/* srv_proto answers a control message of another protocol |c| from
   |peer|: an ERROR any version reads, and a line here for its HELLO. */
static void srv_proto(server *s, xport_peer peer, const ctl *c) {
  ctl r;
  char a[80];
  struct sockaddr_storage pa;
  socklen_t l;

  if (c->type != C_HELLO) {
    return;
  }
  if (xport_peer_addr(s->x, peer, &pa, &l) == 0) {
    xport_format_addr((struct sockaddr *)&pa, a, sizeof(a));
  } else {
    strcpy(a, "?");
  }
  fprintf(stderr,
          "%s: client %s speaks control protocol %u, this server %u: run "
          "the same srd-perf version on both ends\n",
          tool_name(), a, c->proto, ctl_proto());
  memset(&r, 0, sizeof(r));
  r.type = C_ERROR;
  r.proto_error = 1;
  snprintf(r.text, sizeof(r.text), "server speaks control protocol %u",
           ctl_proto());
  srv_reply(s, NULL, peer, &r);
}

static void srv_ctl(server *s, xport_peer peer, const ctl *c) {
  session *ss = find_session(s, peer);
  ctl r;

  memset(&r, 0, sizeof(r));
  if (c->type == C_HELLO) {
    srv_hello(s, ss, peer, c);
    return;
  }
  if (ss == NULL) {
    /* No session: a client that never said HELLO, or one whose session
       ended (silent past --idle-timeout). */
    if (c->type == C_START) {
      r.type = C_ERROR;
      snprintf(r.text, sizeof(r.text), "bad START");
      srv_reply(s, NULL, peer, &r);
    } else if (c->type == C_BYE) {
      r.type = C_BYE_OK;
      srv_reply(s, NULL, peer, &r);
    }
    return;
  }
  switch (c->type) {
  case C_START:
    if (c->test > T_RATE || c->size < MIN_SIZE || c->size > s->o->max_size ||
        c->v[1] > D_BIDIR || (c->v[1] != D_FWD && c->test == T_LAT)) {
      r.type = C_ERROR;
      snprintf(r.text, sizeof(r.text), "bad START");
      srv_reply(s, ss, peer, &r);
      break;
    }
    srv_start(s, ss, c);
    break;
  case C_DRAIN:
    break;
  case C_DONE:
    ss->done_count = c->count;
    ss->done_at = xport_now();
    ss->done_seen = 1;
    ss->s_stop = 1;
    if (ss->in_phase && ss->received >= ss->done_count) {
      srv_result(s, ss);
    }
    break;
  case C_BYE:
    /* The session is over now: its slot serves the next client at once;
       the peer is forgotten once BYE_OK is sent. */
    r.type = C_BYE_OK;
    srv_reply(s, ss, peer, &r);
    srv_end_session(s, ss, NULL, 0);
    if (!s->quiet) {
      fprintf(stderr, "%s: client done (%" PRIu64 " sessions so far)\n",
              tool_name(), s->sessions);
    }
    break;
  default:
    break;
  }
}

static void srv_data(server *s, session *ss, rbuf *r, size_t len) {
  uint32_t idx = 0;
  int rv;

  if (ss == NULL) {
    return; /* from no session: nobody to count it for */
  }
  if (!ss->in_phase) {
    ++ss->garbage;
    return;
  }
  if (ss->verify) {
    rv = data_check(msg_read(&s->mm, r->p, len), len, &idx);
  } else if (r->dev) {
    rv = 0; /* device memory is read back only to check it */
  } else {
    rv = data_peek(r->p, len, &idx);
  }
  if (rv == -1) {
    ++ss->garbage;
    return;
  }
  if (rv == -2 || len != ss->size) {
    ++ss->corrupt;
  }
  if (ss->verify && seen_mark(&ss->seen, &ss->seen_bits, idx)) {
    ++ss->dups;
    return;
  }
  ++ss->received;
  ss->bytes += len;
  if (ss->received >= ss->warm) {
    uint64_t now = xport_now();
    if (ss->received == ss->warm) {
      ss->t0 = now;
    } else {
      ss->t_last = now;
      ++ss->measured;
    }
  }
  if (ss->test == T_LAT) {
    /* Echo from the buffer it arrived in; repost it when the echo is
       done. */
    if (xport_post_send(s->x, ss->peer, r->p, len, r) == 0) {
      r->echo = 1;
      r->gen = ss->gen;
    }
  }
}

/* srv_send_done handles the completion of a send: a control reply or a
   lat echo. */
static void srv_send_done(server *s, const xport_cqe *c) {
  uintptr_t k = (uintptr_t)c->ctx;
  uint64_t gen;
  session *ss;

  if (k >= 1 && k <= (uintptr_t)s->ncr) {
    creply *cr = &s->cr[k - 1];
    cr->busy = 0;
    gen = cr->gen;
    /* A reply to a peer without a session (refused, or said goodbye):
       forget the peer now, unless it has a session again (a new client on
       the same ports) or restarted (ECONNRESET: the new incarnation owns
       the peer). */
    if (cr->forget_peer && find_session(s, c->peer) == NULL &&
        c->status != -ECONNRESET && !peer_in_flight(s, c->peer)) {
      xport_remove_peer(s->x, c->peer);
    }
  } else {
    rbuf *r = c->ctx;
    gen = r->gen;
    if (r->src) {
      srv_src_done(s, r, c);
    } else {
      r->echo = 0;
      repost_or_free(s, r);
    }
  }
  /* A send of this session failed: the session is over.  If the client
     restarted (ECONNRESET), its new incarnation owns the peer now.  A
     send of an earlier session says nothing about this one. */
  ss = find_session(s, c->peer);
  if (c->status != 0 && ss && ss->gen == gen) {
    srv_end_session(s, ss, xport_strerror(c), c->status == -ECONNRESET);
  }
}

/* server_step runs one round; returns 0, or 1 when --once is done. */
static int server_step(server *s, uint64_t timeout) {
  xport_cqe cq[64];
  size_t n, i;
  uint64_t now, idle = (uint64_t)(s->o->idle_timeout * 1e9);
  uint64_t posted0 = s->posted_now, nrecv = 0;
  int rv = xport_progress(s->x, timeout);

  if (rv != 0) {
    tool_die("transport failure: %s", strerror(-rv));
  }
  while ((n = xport_poll_cq(s->x, cq, 64)) > 0) {
    for (i = 0; i < n; ++i) {
      xport_cqe *c = &cq[i];
      if (c->op == XPORT_OP_SEND) {
        srv_send_done(s, c);
        continue;
      }
      /* a receive */
      rbuf *r = c->ctx;
      session *ss = find_session(s, c->peer);
      ctl m;
      --s->posted_now;
      ++nrecv;
      r->posted = 0;
      if (c->status == 0) {
        if (ss) {
          ss->last_heard = xport_now();
        }
        /* A control message may land in a device buffer: one of its
           length is read back to tell. */
        const uint8_t *h = !r->dev ? r->p
                           : c->len == CTL_SIZE
                               ? msg_read(&s->mm, r->p, CTL_SIZE)
                               : NULL;
        int dv = h ? ctl_decode(h, c->len, &m) : -1;
        if (dv == 0) {
          srv_ctl(s, c->peer, &m);
        } else if (dv == -2) {
          srv_proto(s, c->peer, &m);
        } else {
          srv_data(s, ss, r, c->len);
        }
      } else if (ss) {
        ++ss->rerr;
      }
      if (!r->echo) {
        repost_or_free(s, r); /* an echoed one waits for its send */
      }
    }
  }
  now = xport_now();
  if (posted0 > 0 && nrecv >= posted0) {
    s->drained_at = now;
  }
  for (int k = 0; k < s->max_sess; ++k) {
    session *ss = &s->sess[k];
    if (!ss->used) {
      continue;
    }
    if (ss->in_phase && ss->done_seen &&
        (ss->received >= ss->done_count || now - ss->done_at > 1000000000ull)) {
      srv_result(s, ss);
    }
    srv_pump(s, ss);
    if (now - ss->last_heard > idle && now - s->drained_at > idle) {
      srv_end_session(s, ss, "vanished (silent past --idle-timeout)", 0);
    }
  }
  srv_fill_posted(s);
  /* --once: a session is over, however it ended (a goodbye, a failed
     send, silence), and no other is left (on any transport). */
  return s->o->once && atomic_load(s->all_ended) > 0 &&
         atomic_load(s->all_active) == 0;
}

static void server_init(server *s, const opts *o, xport *x, int quiet) {
  memset(s, 0, sizeof(*s));
  s->o = o;
  s->x = x;
  msgmem_init(&s->mm, x, o->mem);
  s->quiet = quiet;
  s->all_active = &s->own_active;
  s->all_ended = &s->own_ended;
  s->max_sess = (int)o->max_clients;
  s->sess = calloc((size_t)s->max_sess, sizeof(session));
  /* A few replies in flight per session, and some for refusals. */
  s->ncr = 4 * s->max_sess + 8;
  s->cr = calloc((size_t)s->ncr, sizeof(creply));
  if (s->sess == NULL || s->cr == NULL) {
    tool_die("out of memory");
  }
  for (int i = 0; i < s->ncr; ++i) {
    s->cr[i].b = xalloc(CTL_SIZE);
  }
  srv_fill_posted(s);
}

/* server_fini frees the server's buffers; call it after xport_close. */
static void server_fini(server *s) {
  for (int i = 0; i < s->ncr; ++i) {
    free(s->cr[i].b);
  }
  free(s->cr);
  while (s->live) {
    free_rbuf(s, s->live, 1);
  }
  msgmem_fini(&s->mm);
  for (int i = 0; i < s->max_sess; ++i) {
    free(s->sess[i].seen);
  }
  free(s->sess);
}

/* served is one transport's server in run_server: its options (the
   tcp one's a copy with -t tcp), xport and loop. */
typedef struct served {
  opts o;
  xport *x;
  server s;
  atomic_int *stop; /* shared: set when any loop ends */
} served;

/* serve_loop runs |sv|'s server until a signal, --once, or another
   loop's end. */
static void *serve_loop(void *arg) {
  served *sv = arg;

  while (!atomic_load(&interrupted) && !atomic_load(sv->stop)) {
    if (server_step(&sv->s, 100000000ull)) {
      break;
    }
  }
  atomic_store(sv->stop, 1);
  return NULL;
}

/* serve_open opens |sv|'s xport and says where it listens; returns 0 or
   xport_open's negative errno (said on stderr). */
static int serve_open(served *sv, int family) {
  struct sockaddr_storage ss;
  socklen_t l;
  char a[80];
  int rv = open_xport(&sv->o, &sv->x, 1, family, "server: ");

  if (rv != 0) {
    return rv;
  }
  xport_local_addr(sv->x, &ss, &l);
  fprintf(stderr, "%s: server listening on %s (%s)\n", tool_name(),
          xport_format_addr((struct sockaddr *)&ss, a, sizeof(a)),
          xport_describe(sv->x));
  return 0;
}

int run_server(const opts *o) {
  /* udp without -t: tcp too, on the same port number (TCP), from a
     thread of its own (one xport per thread). */
  int both = !o->transport_set && strcmp(o->transport, "udp") == 0;
  served sv[2];
  atomic_int stop = 0;
  pthread_t th;
  int family = o->family == AF_UNSPEC ? AF_INET : o->family, n = 1;
  struct sockaddr_storage ss;
  socklen_t l;

  if (o->bind) {
    /* The address decides the family. */
    if (xport_parse_addr(o->bind, o->port, o->family, &ss, &l) != 0) {
      tool_usage_error("bad server address '%s'", o->bind);
    }
    family = ss.ss_family;
  }
  memset(sv, 0, sizeof(sv));
  sv[0].o = *o;
  sv[0].stop = &stop;
  if (serve_open(&sv[0], family) != 0) {
    return 1;
  }
  if (both) {
    sv[1].o = *o;
    sv[1].o.transport = "tcp";
    sv[1].o.pcap = NULL;   /* the kernel's segments: tcpdump's */
    sv[1].o.impair_on = 0; /* no userspace layer under TCP */
    sv[1].stop = &stop;
    if (serve_open(&sv[1], family) == 0) {
      n = 2;
    } else {
      fprintf(stderr, "%s: serving udp only\n", tool_name());
    }
  }
  server_init(&sv[0].s, &sv[0].o, sv[0].x, 0);
  if (n == 2) {
    server_init(&sv[1].s, &sv[1].o, sv[1].x, 0);
    sv[1].s.all_active = sv[0].s.all_active;
    sv[1].s.all_ended = sv[0].s.all_ended;
    if (pthread_create(&th, NULL, serve_loop, &sv[1]) != 0) {
      tool_die("cannot start the tcp server's thread");
    }
  }
  serve_loop(&sv[0]);
  if (n == 2) {
    pthread_join(th, NULL);
  }
  for (int i = 0; i < n; ++i) {
    if (atomic_load(&interrupted)) {
      xport_stats st;
      fprintf(stderr, "%s: %s server interrupted after %" PRIu64 " sessions\n",
              tool_name(), sv[i].o.transport, sv[i].s.sessions);
      xport_get_stats(sv[i].x, &st);
      if (st.hs_answered || st.peers_max) {
        /* What strangers cost (docs/transports.md, "Handshake floods"). */
        fprintf(stderr,
                "%s: %s server: %" PRIu64 " handshake requests answered "
                "without state, at most %u peers at once, %" PRIu64
                " proven clients refused (table full), %" PRIu64
                " datagrams from unknown addresses dropped\n",
                tool_name(), sv[i].o.transport, st.hs_answered, st.peers_max,
                st.hs_full, st.unknown_src);
      }
    }
    xport_close(sv[i].x);
    server_fini(&sv[i].s);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Loopback: the server on a thread of its own                              */

void *lb_server_main(void *arg) {
  lb_server *ls = arg;
  opts o = *ls->o;
  xport *x;
  server s;
  struct sockaddr_storage ss;
  socklen_t l;

  o.port = 0;
  /* One session, or -P N's streams: those end when run_loopback says. */
  o.once = o.streams <= 1;
  if (o.max_clients < o.streams) {
    o.max_clients = o.streams;
  }
  o.bind = ls->family == AF_INET6 ? "::1" : "127.0.0.1";
  if (o.ncpu > 1) {
    pin(o.cpu[1]);
  }
  {
    xport_config cfg;
    make_config(&o, &cfg, 1, ls->family, "server: ");
    cfg.port = 0;
    cfg.log = o.verbose ? log_cb : NULL;
    if (xport_open(&x, &cfg) != 0) {
      fprintf(stderr, "%s: cannot open the loopback server\n", tool_name());
      atomic_store(&ls->ready, -1);
      return NULL;
    }
  }
  xport_local_addr(x, &ss, &l);
  ls->port = ss.ss_family == AF_INET
                 ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                 : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  server_init(&s, &o, x, !o.verbose);
  atomic_store(&ls->ready, 1);
  while (!atomic_load(&ls->stop)) {
    if (server_step(&s, o.busy ? 0 : 50000000ull)) {
      break;
    }
  }
  xport_close(x);
  server_fini(&s);
  return NULL;
}
