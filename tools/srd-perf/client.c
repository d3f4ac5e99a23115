/*
 * client.c: the srd-perf client.  It says HELLO, then for each size
 * START, the test (run_stream for bw and rate, run_pingpong for lat),
 * DONE and RESULT, and at last BYE; it measures, and hands each size's
 * result to report.c.  In reverse and bidir phases (-R, --bidir) it
 * receives too (rxside): the server's data, measured here, at the
 * receiver, as iperf3 reports its receiver's throughput.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "perf.h"
#include "tool_hist.h"

/* rxslot is a receive of the client's pool: its buffer, of |cap| bytes,
   and whether the transport holds it. */
typedef struct rxslot {
  uint8_t *buf;
  size_t cap;
  int posted;
} rxslot;

/* rxside is the client's receiving side (reverse, bidir): a pool of
   receives that takes the server's data and, once it is on, every
   control reply too, until the run ends. */
typedef struct rxside {
  int on;
  rxslot *slot;
  uint32_t nslot;
  uint32_t depth; /* receives of the phase's size kept posted */
  uint64_t size, warm;
  int verify;
  /* the phase: data messages (duplicates not counted), DRAINs, those
     measured and when: from the warm-up's last arrival (or START) to the
     last arrival while |timing| */
  uint64_t data, drains, measured, t0, t_last, last_heard;
  int timing;
  uint64_t dups, corrupt, garbage;
  uint8_t *seen;
  uint64_t seen_bits;
} rxside;

typedef struct client {
  const opts *o;
  xport *x;
  xport_peer peer;
  char peer_name[80];
  uint64_t deadline; /* the whole run's time limit */
  uint8_t *cbuf, *rbuf_ctl;
  uint64_t sent_ok, failed;
  int failed_status;
  char fail_msg[200];
  uint32_t srv_paths; /* the server's paths (HELLO_OK) */
  /* latencies of the measured iterations, in microseconds */
  float *lat;
  uint64_t nlat, lat_cap;
  /* Buffers a failed run left with the transport: freed after close. */
  void **orphans;
  size_t n_orphans, orphans_cap;
  msgmem mm; /* the message buffers (-m) */
  rxside rx; /* -R, --bidir */
  int verify_failed;
} client;

/* orphan hands |p| to be freed once the transport is closed. */
static void orphan(client *c, void *p) {
  if (c->n_orphans == c->orphans_cap) {
    size_t cap = c->orphans_cap ? 2 * c->orphans_cap : 64;
    void **n = realloc(c->orphans, cap * sizeof(void *));
    if (n == NULL) {
      return; /* leak rather than free what the kernel may still read */
    }
    c->orphans = n;
    c->orphans_cap = cap;
  }
  c->orphans[c->n_orphans++] = p;
}

/* orphan_msg is orphan for a message buffer: host memory waits for the
   close; device memory goes with the xport. */
static void orphan_msg(client *c, void *p) {
  if (c->mm.mem == XPORT_MEM_HOST) {
    orphan(c, p);
  }
}

static void free_orphans(client *c) {
  size_t i;

  for (i = 0; i < c->n_orphans; ++i) {
    free(c->orphans[i]);
  }
  free(c->orphans);
  c->orphans = NULL;
  c->n_orphans = c->orphans_cap = 0;
}

static void lat_add(client *c, double us) {
  if (c->nlat == c->lat_cap) {
    uint64_t cap = c->lat_cap ? c->lat_cap * 2 : 65536;
    float *p = realloc(c->lat, cap * sizeof(float));
    if (p == NULL) {
      return;
    }
    c->lat = p;
    c->lat_cap = cap;
  }
  c->lat[c->nlat++] = (float)us;
}

/* client_fail records a failed completion (the peer vanished, refused,
   or is unreachable). */
static void client_fail(client *c, const xport_cqe *q) {
  if (c->failed++ == 0) {
    c->failed_status = q->status;
    snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", xport_strerror(q));
  }
}

static int stop_now(client *c) {
  return atomic_load(&interrupted) || xport_now() >= c->deadline || c->failed;
}

static const char *const ctl_names[] = {"?",     "HELLO",  "HELLO_OK", "START",
                                        "READY", "DRAIN",  "DONE",     "RESULT",
                                        "BYE",   "BYE_OK", "ERROR"};

/* malformed_in counts the datagrams (srd) or frames (tcp) that were not
   our protocol at all. */
static uint64_t malformed_in(const client *c, const xport_stats *st) {
  if (strcmp(c->o->transport, "udp") != 0) {
    return st->bad_in;
  }
  return st->rx_truncated + st->drops[SRD_DROP_TRUNCATED] +
         st->drops[SRD_DROP_BAD_VERSION] + st->drops[SRD_DROP_BAD_TYPE] +
         st->drops[SRD_DROP_BAD_FIELD];
}

/* rx_fill keeps c->rx.depth receives of the phase's size posted. */
static void rx_fill(client *c) {
  rxside *rx = &c->rx;
  size_t cap = rx->size < CTL_SIZE ? CTL_SIZE : (size_t)rx->size;
  uint32_t good = 0, i;

  for (i = 0; i < rx->nslot; ++i) {
    good += rx->slot[i].posted && rx->slot[i].cap >= cap;
  }
  for (i = 0; good < rx->depth; ++i) {
    rxslot *sl;
    if (i == rx->nslot) {
      rxslot *n = realloc(rx->slot, (rx->nslot + 64) * sizeof(*n));
      if (n == NULL) {
        return;
      }
      memset(n + rx->nslot, 0, 64 * sizeof(*n));
      rx->slot = n;
      rx->nslot += 64;
    }
    sl = &rx->slot[i];
    if (sl->posted) {
      continue;
    }
    if (sl->buf && sl->cap < cap) {
      msg_free(&c->mm, sl->buf, 0);
      sl->buf = NULL;
    }
    if (sl->buf == NULL) {
      sl->buf = msg_alloc(&c->mm, cap);
      sl->cap = cap;
    }
    if (xport_post_recv(c->x, sl->buf, sl->cap, (void *)(uintptr_t)i) != 0) {
      return; /* max_recvs: fewer this time */
    }
    sl->posted = 1;
    ++good;
  }
}

/* rx_begin starts the receiving side of a phase of |size| with a window
   of |window| and |warm| messages of warm-up, and posts its receives.
   Returns how many receives posted earlier are too small for it (START
   asks the server to fill those with DRAINs first). */
static uint64_t rx_begin(client *c, uint64_t size, uint64_t window,
                         uint64_t warm) {
  rxside *rx = &c->rx;
  uint64_t small = 0;
  uint32_t i;

  rx->on = 1;
  rx->size = size;
  rx->warm = warm;
  rx->verify = c->o->verify;
  rx->depth = (uint32_t)(window + 8 > 512 ? 512 : window + 8);
  rx->data = rx->drains = rx->measured = rx->t_last = 0;
  rx->dups = rx->corrupt = rx->garbage = 0;
  rx->timing = 1;
  rx->t0 = warm ? 0 : xport_now();
  rx->last_heard = xport_now();
  free(rx->seen);
  rx->seen = NULL;
  rx->seen_bits = 0;
  for (i = 0; i < rx->nslot; ++i) {
    small += rx->slot[i].posted && rx->slot[i].cap < size;
  }
  rx_fill(c);
  return small;
}

/* rx_recv takes the receive completion |q| of the pool: counts (and with
   --verify checks) a data message, and posts the receive again.  Returns
   0 for data or a DRAIN, 1 for another control message (in *rep unless
   NULL; with NULL, an ERROR fails the run), 2 for a control message of
   another protocol (in *rep, or NULL). */
static int rx_recv(client *c, const xport_cqe *q, ctl *rep) {
  rxside *rx = &c->rx;
  uint32_t i = (uint32_t)(uintptr_t)q->ctx, idx = 0;
  rxslot *sl = &rx->slot[i];
  uint64_t now = xport_now();
  const uint8_t *h;
  ctl m;
  int dv, rv = 0, dev = c->mm.mem != XPORT_MEM_HOST;

  sl->posted = 0;
  rx->last_heard = now;
  h = q->len == CTL_SIZE ? msg_read(&c->mm, sl->buf, CTL_SIZE) : NULL;
  dv = h ? ctl_decode(h, CTL_SIZE, &m) : -1;
  if (dv == 0 && m.type == C_DRAIN) {
    ++rx->drains;
  } else if (dv != -1) {
    rv = dv == 0 ? 1 : 2;
    if (rep) {
      *rep = m;
    } else if (dv == 0 && m.type == C_ERROR) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "server: %s", m.text);
      c->failed = 1;
    }
  } else {
    int d = rx->verify
                ? data_check(msg_read(&c->mm, sl->buf, q->len), q->len, &idx)
            : dev ? 0
                  : data_peek(sl->buf, q->len, &idx);
    if (d == -1) {
      ++rx->garbage;
    } else if (rx->verify && seen_mark(&rx->seen, &rx->seen_bits, idx)) {
      ++rx->dups;
    } else {
      rx->corrupt += d == -2 || q->len != rx->size;
      if (++rx->data == rx->warm) {
        rx->t0 = now;
      } else if (rx->data > rx->warm && rx->timing) {
        rx->t_last = now;
        ++rx->measured;
      }
    }
  }
  if (sl->cap < rx->size) {
    /* posted for an earlier, smaller phase: not again */
    msg_free(&c->mm, sl->buf, 0);
    sl->buf = NULL;
  }
  rx_fill(c);
  return rv;
}

/* rx_wait receives until the phase's data is in: |total| messages (a
   counted phase), or -D from the warm-up's end (a timed one, |total| 0),
   or, with |upto|, until that many came (the server's count, after its
   RESULT).  Returns 0, or -1 when the run must stop (c->fail_msg says
   why, unless interrupted). */
static int rx_wait(client *c, uint64_t total, uint64_t upto) {
  const opts *o = c->o;
  rxside *rx = &c->rx;
  uint64_t idle = (uint64_t)(o->idle_timeout * 1e9);
  uint64_t dur = (uint64_t)(o->duration * 1e9);

  for (;;) {
    xport_cqe q[64];
    size_t n, k;
    uint64_t now = xport_now();
    if (upto    ? rx->data + rx->dups + rx->garbage >= upto
        : total ? rx->data >= total
                : rx->t0 && now - rx->t0 >= dur) {
      rx->timing = 0;
      return 0;
    }
    if (c->failed || atomic_load(&interrupted) ||
        (!upto && now >= c->deadline)) {
      rx->timing = 0;
      return c->failed || upto ? -1 : 0;
    }
    if (now - rx->last_heard > idle) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no data for %.1f s: %s stalled", o->idle_timeout, c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
      return -1;
    }
    if (xport_progress(c->x, 100000000ull) != 0) {
      return -1;
    }
    while ((n = xport_poll_cq(c->x, q, 64)) > 0) {
      for (k = 0; k < n; ++k) {
        if (q[k].status != 0) {
          client_fail(c, &q[k]);
          continue;
        }
        if (q[k].op == XPORT_OP_RECV) {
          rx_recv(c, &q[k], NULL);
        }
      }
    }
  }
}

/* wait_ctl sends |req| (unless NULL) and waits for the control reply of
   type |expect|, bounded by |timeout_s|; returns 0 or -1 (c->fail_msg
   says why). */
static int wait_ctl(client *c, const ctl *req, ctl *rep, uint32_t expect,
                    double timeout_s) {
  uint64_t until = xport_now() + (uint64_t)(timeout_s * 1e9);
  int got = 0, sent = req == NULL;
  int rv;
  xport_stats st;
  uint64_t bad0, in0, mal0, t0 = xport_now(), last_check = 0;

  xport_get_stats(c->x, &st);
  bad0 = st.bad_in;
  in0 = st.pkts_in;
  mal0 = malformed_in(c, &st);

  /* With the receiving side on, the reply lands in its pool. */
  rv = c->rx.on ? 0 : xport_post_recv(c->x, c->rbuf_ctl, CTL_SIZE, c->rbuf_ctl);
  if (rv != 0) {
    snprintf(c->fail_msg, sizeof(c->fail_msg), "post_recv: %s", strerror(-rv));
    return -1;
  }
  if (req) {
    ctl_encode(c->cbuf, req);
    rv = xport_post_send(c->x, c->peer, c->cbuf, CTL_SIZE, c->cbuf);
    if (rv != 0) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "post_send: %s",
               strerror(-rv));
      return -1;
    }
  }
  while (!(got && sent)) {
    xport_cqe q[8];
    size_t n, i;
    if (atomic_load(&interrupted)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "interrupted");
      return -1;
    }
    if (xport_now() > until) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no answer from %s within %.1f s (is an srd-perf server with "
               "-t %s running there?)",
               c->peer_name, timeout_s, c->o->transport);
      return -1;
    }
    rv = xport_progress(c->x, 50000000ull);
    if (rv != 0) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "transport: %s",
               strerror(-rv));
      return -1;
    }
    if (xport_now() - last_check > 50000000ull) {
      /* Something that is not our protocol came back: say so now rather
         than after the timeout.  Malformed datagrams say it at once; so
         does, after 100 ms, a peer all of whose datagrams were rejected
         (an echo service reflects our own).  Rejected packets alongside
         valid ones are no sign: a client restarted on the ports of an
         earlier one gets what the server still sends that one. */
      last_check = xport_now();
      xport_get_stats(c->x, &st);
      if (!got && st.bad_in > bad0 &&
          (malformed_in(c, &st) > mal0 ||
           (last_check - t0 > 100000000ull &&
            st.pkts_in - in0 <= st.bad_in - bad0))) {
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered garbage (%" PRIu64 " malformed %s): not an "
                 "srd-perf server with -t %s",
                 c->peer_name, st.bad_in - bad0,
                 strcmp(c->o->transport, "tcp") == 0 ? "frames" : "datagrams",
                 c->o->transport);
        c->failed = 1;
        c->failed_status = -EPROTO;
        return -1;
      }
    }
    n = xport_poll_cq(c->x, q, 8);
    for (i = 0; i < n; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
        if (q[i].status == -EPROTO) {
          snprintf(c->fail_msg, sizeof(c->fail_msg),
                   "%s answered garbage (not the framing of srd-perf's "
                   "tcp transport): not an srd-perf server",
                   c->peer_name);
        }
        return -1;
      }
      if (q[i].op == XPORT_OP_SEND) {
        sent |= q[i].buf == c->cbuf;
        continue;
      }
      int dv = c->rx.on ? rx_recv(c, &q[i], rep)
                        : ctl_decode(q[i].buf, q[i].len, rep);
      if (c->rx.on && dv == 0) {
        continue; /* data, or a DRAIN */
      }
      if (c->rx.on) {
        dv = dv == 2 ? -2 : 0;
      }
      if (dv == -2) {
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "the server speaks control protocol %u, this client %u: run "
                 "the same srd-perf version on both ends",
                 rep->proto, ctl_proto());
        c->failed = 1;
        c->failed_status = -EPROTO;
        return -1;
      }
      if (dv != 0) {
        const uint8_t *b = q[i].buf;
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered garbage (%zu bytes starting %02x %02x %02x "
                 "%02x): not an srd-perf server",
                 c->peer_name, q[i].len, q[i].len > 0 ? b[0] : 0,
                 q[i].len > 1 ? b[1] : 0, q[i].len > 2 ? b[2] : 0,
                 q[i].len > 3 ? b[3] : 0);
        c->failed = 1;
        return -1;
      }
      if (rep->type == C_ERROR) {
        snprintf(c->fail_msg, sizeof(c->fail_msg), "server: %s", rep->text);
        c->failed = 1;
        return -1;
      }
      if (rep->type != expect) {
        /* A reflector (a UDP echo service, or a loop back to ourselves)
           returns our own requests. */
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered %s to %s: not an srd-perf server (an echo "
                 "service?)",
                 c->peer_name,
                 rep->type < sizeof(ctl_names) / sizeof(ctl_names[0])
                     ? ctl_names[rep->type]
                     : "an unknown message",
                 ctl_names[expect - 1 < 10 ? expect - 1 : 0]);
        c->failed = 1;
        return -1;
      }
      got = 1;
    }
  }
  return 0;
}

static void record_stats(client *c, result *r, const xport_stats *a,
                         const xport_stats *b) {
  uint32_t i;

  r->retransmits = b->retransmits - a->retransmits;
  r->bad_in = b->bad_in - a->bad_in;
  r->n_paths = b->n_paths;
  for (i = 0; i < b->n_paths && i < XPORT_MAX_PATHS; ++i) {
    r->path_pkts[i] = b->path_pkts[i] - a->path_pkts[i];
  }
  r->avg_burst = b->sends > a->sends ? (double)(b->pkts_out - a->pkts_out) /
                                           (double)(b->sends - a->sends)
                                     : 0;
  r->imp_lost = b->imp_lost - a->imp_lost;
  r->imp_dup = b->imp_dup - a->imp_dup;
  r->imp_delayed = b->imp_delayed - a->imp_delayed;
  r->imp_qdrops = b->imp_queue_drops - a->imp_queue_drops;
  r->imp_blackholed = b->imp_blackholed - a->imp_blackholed;
  r->imp_corrupted = b->imp_corrupted - a->imp_corrupted;
  r->imp_dup_delayed = b->imp_dup_delayed - a->imp_dup_delayed;
  for (i = 0; i < NDROPS; ++i) {
    r->cli_drops[i] = b->drops[i] - a->drops[i];
  }
  (void)c;
}

/* cut_warmup bounds a timed phase's warm-up by -D too: one that began at
   |start| and outlasts it (a path far slower than the warm-up's count
   assumed) ends now, after |done| messages, and the measured part starts
   (|*t0|, |*dur_end|), so that a timed run takes about twice -D at most. */
static void cut_warmup(client *c, result *r, uint64_t start, uint64_t done,
                       uint64_t *warm, uint64_t *t0, uint64_t *dur_end) {
  uint64_t d = (uint64_t)(c->o->duration * 1e9), now = xport_now();

  if (now - start < d) {
    return;
  }
  r->warm_cut = 1;
  *warm = done;
  r->warmup = done;
  *t0 = now;
  c->nlat = 0;
  *dur_end = now + d;
}

/* run_stream runs bw or rate: a window of sends kept full. */
static void run_stream(client *c, result *r, uint64_t total, uint64_t warm) {
  const opts *o = c->o;
  uint32_t w = (uint32_t)r->window, i;
  uint8_t **bufs = calloc(w, sizeof(uint8_t *));
  uint64_t *posted_at = calloc(w, sizeof(uint64_t));
  uint64_t next = 0, done = 0, t0 = 0, t_end = 0, last_progress;
  uint64_t dur_end = UINT64_MAX, outstanding = 0, stop_at = 0, last_start;
  /* t_post_warm: when the first measured message was posted; burst: every
     message was posted before the warm-up's last completion (a count
     within the window), so that completions alone cannot time them */
  uint64_t t_post_warm = 0;
  int timed = o->duration > 0, burst = 0;
  xport_cqe q[64];

  if (bufs == NULL || posted_at == NULL) {
    tool_die("out of memory");
  }
  for (i = 0; i < w; ++i) {
    bufs[i] = msg_alloc(&c->mm, r->size);
  }
  last_progress = last_start = xport_now();
  if (warm == 0) {
    t0 = xport_now();
    if (timed) {
      dur_end = t0 + (uint64_t)(o->duration * 1e9);
    }
  }
  /* Fill the window. */
  for (;;) {
    uint64_t now;
    size_t n, k;
    int stopping = stop_now(c) || (timed && t0 && xport_now() >= dur_end);

    if (timed && t0 == 0 && !stopping) {
      cut_warmup(c, r, last_start, done, &warm, &t0, &dur_end);
    }

    for (i = 0; !stopping && outstanding < w && (timed || next < total);) {
      uint32_t slot = (uint32_t)(next % w);
      if (posted_at[slot]) {
        break; /* its previous send is not done */
      }
      msg_refill(&c->mm, bufs[slot], r->size, next, o->verify);
      posted_at[slot] = xport_now();
      if (next == warm) {
        t_post_warm = posted_at[slot];
      }
      if (xport_post_send(c->x, c->peer, bufs[slot], r->size,
                          (void *)(uintptr_t)slot) != 0) {
        posted_at[slot] = 0;
        break;
      }
      ++next;
      ++outstanding;
    }
    if (outstanding == 0 && (stopping || (!timed && next >= total))) {
      break;
    }
    if (stopping && stop_at == 0) {
      stop_at = xport_now();
    }
    if (stop_at &&
        xport_now() - stop_at >
            (c->failed ? (uint64_t)(o->idle_timeout * 1e9) : 1000000000ull)) {
      break; /* stopping, and the rest does not complete: give up */
    }
    if (xport_progress(c->x, 100000000ull) != 0) {
      break;
    }
    now = xport_now();
    while ((n = xport_poll_cq(c->x, q, 64)) > 0) {
      for (k = 0; k < n; ++k) {
        uint32_t slot = (uint32_t)(uintptr_t)q[k].ctx;
        if (q[k].op == XPORT_OP_RECV && c->rx.on) {
          /* --bidir: the server's data, meanwhile */
          if (q[k].status != 0) {
            client_fail(c, &q[k]);
          } else {
            rx_recv(c, &q[k], NULL);
          }
          continue;
        }
        if (q[k].op != XPORT_OP_SEND || slot >= w) {
          continue;
        }
        --outstanding;
        if (q[k].status != 0) {
          client_fail(c, &q[k]);
        } else {
          ++done;
          if (done > warm) {
            lat_add(c, (double)(now - posted_at[slot]) / 1e3);
          }
        }
        posted_at[slot] = 0;
        if (done == warm && t0 == 0) {
          t0 = now;
          burst = !timed && next >= total;
          c->nlat = 0;
          if (timed) {
            dur_end = t0 + (uint64_t)(o->duration * 1e9);
          }
        }
        t_end = now;
        last_progress = now;
      }
    }
    if (!stopping && now - last_progress > (uint64_t)(o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no send completed for %.1f s: %s stalled", o->idle_timeout,
               c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
    }
  }
  r->iters = done > warm ? done - warm : 0;
  /* A count within the window went out at once and completes in a few
     batches: from the warm-up's end it would time nothing (0 s).  Time it
     from its first post to its last completion, as perftest's bw does. */
  if (burst && t_post_warm && t_post_warm < t0) {
    t0 = t_post_warm;
  }
  r->seconds = t0 && t_end > t0 ? (double)(t_end - t0) / 1e9 : 0;
  c->sent_ok = done;
  for (i = 0; i < w; ++i) {
    /* A buffer whose send never completed stays with the transport. */
    if (posted_at[i]) {
      orphan_msg(c, bufs[i]);
    } else {
      msg_free(&c->mm, bufs[i], 0);
    }
  }
  free(bufs);
  free(posted_at);
}

/* run_pingpong runs lat: one message out, its echo back, repeat.  The
   round trip is from posting the message to its echo's completion.  A
   send completes when the peer acknowledged it (srd), which may come
   after the echo, so sends rotate over a few buffers and the next ping
   does not wait for the previous one's acknowledgement. */
#define PING_BUFS 8
static void run_pingpong(client *c, result *r, uint64_t total, uint64_t warm) {
  const opts *o = c->o;
  size_t cap = r->size < CTL_SIZE ? CTL_SIZE : r->size;
  uint8_t *sbuf[PING_BUFS], *rb = msg_alloc(&c->mm, cap);
  int busy[PING_BUFS] = {0}, nbusy = 0, recv_out = 0, k;
  uint64_t it, t0 = 0, t_end = 0, dur_end = UINT64_MAX, ts = 0, last, start;
  int timed = o->duration > 0;
  xport_cqe q[16];

  for (k = 0; k < PING_BUFS; ++k) {
    sbuf[k] = msg_alloc(&c->mm, r->size);
  }
  last = start = xport_now();
  for (it = 0;;) {
    size_t n, i;
    uint64_t now;

    if (!recv_out) {
      /* The previous echo is in: start the next round trip. */
      if (it == warm && t0 == 0) {
        t0 = xport_now();
        c->nlat = 0;
        if (timed) {
          dur_end = t0 + (uint64_t)(o->duration * 1e9);
        }
      }
      if (timed && t0 == 0) {
        cut_warmup(c, r, start, it, &warm, &t0, &dur_end);
      }
      if (stop_now(c) || (t0 && xport_now() >= dur_end) ||
          (!timed && it >= total)) {
        if (nbusy == 0 || stop_now(c)) {
          break;
        }
      } else {
        for (k = 0; k < PING_BUFS && busy[k]; ++k) {
        }
        if (k < PING_BUFS) {
          msg_refill(&c->mm, sbuf[k], r->size, it, o->verify);
          if (xport_post_recv(c->x, rb, cap, rb) != 0) {
            break;
          }
          recv_out = 1;
          ts = xport_now();
          if (xport_post_send(c->x, c->peer, sbuf[k], r->size,
                              (void *)(uintptr_t)(k + 1)) != 0) {
            break;
          }
          busy[k] = 1;
          ++nbusy;
        }
      }
    }
    if (xport_progress(c->x, 100000000ull) != 0) {
      c->failed = 1;
      break;
    }
    n = xport_poll_cq(c->x, q, 16);
    now = xport_now();
    for (i = 0; i < n; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
      }
      last = now;
      if (q[i].op == XPORT_OP_SEND) {
        k = (int)(uintptr_t)q[i].ctx - 1;
        if (k >= 0 && k < PING_BUFS && busy[k]) {
          busy[k] = 0;
          --nbusy;
        }
        continue;
      }
      recv_out = 0;
      if (q[i].status == 0) {
        uint32_t idx;
        /* An echo in device memory is read back only to check it. */
        const uint8_t *e = o->verify || c->mm.mem == XPORT_MEM_HOST
                               ? msg_read(&c->mm, rb, q[i].len)
                               : NULL;
        if (e && (o->verify ? data_check(e, q[i].len, &idx) != 0 ||
                                  idx != (uint32_t)it
                            : data_peek(e, q[i].len, &idx) != 0)) {
          snprintf(c->fail_msg, sizeof(c->fail_msg),
                   "%s echoed a wrong message", c->peer_name);
          c->failed = 1;
        }
        if (it >= warm) {
          lat_add(c, (double)(now - ts) / 1e3);
        }
        t_end = now;
        ++it;
      }
    }
    if (c->failed) {
      break;
    }
    if (now - last > (uint64_t)(o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no echo for %.1f s: %s stalled", o->idle_timeout, c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
      break;
    }
  }
  r->iters = it > warm ? it - warm : 0;
  r->seconds = t0 && t_end > t0 ? (double)(t_end - t0) / 1e9 : 0;
  c->sent_ok = it;
  /* Buffers the transport still holds (a failed run) stay with it. */
  for (k = 0; k < PING_BUFS; ++k) {
    if (busy[k]) {
      orphan_msg(c, sbuf[k]);
    } else {
      msg_free(&c->mm, sbuf[k], 0);
    }
  }
  if (recv_out) {
    orphan_msg(c, rb);
  } else {
    msg_free(&c->mm, rb, 0);
  }
}

static uint64_t default_iters(const opts *o, uint64_t size) {
  if (o->iters_set) {
    return o->iters;
  }
  if (o->test == T_LAT) {
    return o->sweep ? 1000 : 10000;
  }
  if (o->test == T_RATE) {
    return o->sweep ? 10000 : 100000;
  }
  if (o->sweep) {
    uint64_t n = (256ull << 20) / size;
    return n < 64 ? 64 : n > 10000 ? 10000 : n;
  }
  return 1000;
}

static uint32_t default_window(const opts *o, uint64_t size) {
  uint64_t w;

  if (o->window_set) {
    return o->window;
  }
  if (o->test == T_LAT) {
    return 1;
  }
  if (o->test == T_RATE) {
    return 256;
  }
  w = (16ull << 20) / size;
  return (uint32_t)(w < 2 ? 2 : w > 128 ? 128 : w);
}

/* send_drains sends |n| DRAIN messages and waits until all are done. */
static int send_drains(client *c, uint64_t n) {
  uint8_t *b = xalloc(CTL_SIZE);
  uint64_t posted = 0, done = 0, last = xport_now();
  ctl d;

  memset(&d, 0, sizeof(d));
  d.type = C_DRAIN;
  ctl_encode(b, &d);
  while (done < n && !c->failed) {
    xport_cqe q[16];
    size_t k, i;
    while (posted < n &&
           xport_post_send(c->x, c->peer, b, CTL_SIZE, NULL) == 0) {
      ++posted;
    }
    xport_progress(c->x, 10000000ull);
    k = xport_poll_cq(c->x, q, 16);
    for (i = 0; i < k; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
      }
      if (q[i].op == XPORT_OP_RECV && c->rx.on) {
        if (q[i].status == 0) {
          rx_recv(c, &q[i], NULL); /* --bidir: the server's data */
        }
        continue;
      }
      ++done;
      last = xport_now();
    }
    if (atomic_load(&interrupted)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "interrupted");
      break; /* not a failure (as in wait_ctl): the caller sees why */
    }
    if (!c->failed &&
        xport_now() - last > (uint64_t)(c->o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no drain completed for %.1f s: %s stalled", c->o->idle_timeout,
               c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
    }
  }
  if (done == posted) {
    free(b);
  } else {
    orphan(c, b);
  }
  return c->failed || done < n ? -1 : 0;
}

/* finish_row computes |r|'s rates and percentiles from its iterations,
   seconds and c's latencies (none: zero). */
static void finish_row(client *c, result *r) {
  uint64_t k;

  if (c->nlat) {
    double sum = 0;
    tool_sort_float(c->lat, c->nlat);
    r->p50 = tool_pct_float(c->lat, c->nlat, 0.50);
    r->p99 = tool_pct_float(c->lat, c->nlat, 0.99);
    r->p999 = tool_pct_float(c->lat, c->nlat, 0.999);
    r->max = c->lat[c->nlat - 1];
    for (k = 0; k < c->nlat; ++k) {
      sum += c->lat[k];
    }
    r->avg = sum / (double)c->nlat;
  }
  if (r->seconds > 0) {
    r->msg_rate = (double)r->iters / r->seconds;
    r->mbps = r->msg_rate * (double)r->size / 1e6;
    r->gbps = r->mbps * 8 / 1e3;
  }
}

/* rev_row fills |rv|, the reverse direction's row of a phase of |fw|'s
   size, from the receiving side's counts and the server's RESULT |rep|:
   measured here, at the receiver. */
static void rev_row(client *c, const result *fw, result *rv, const ctl *rep) {
  const rxside *rx = &c->rx;

  *rv = *fw;
  rv->dir = D_REV;
  rv->iters = rx->measured;
  rv->seconds =
      rx->t0 && rx->t_last > rx->t0 ? (double)(rx->t_last - rx->t0) / 1e9 : 0;
  rv->p50 = rv->p99 = rv->p999 = rv->max = rv->avg = 0;
  rv->mbps = rv->gbps = rv->msg_rate = 0;
  rv->retransmits = rep->v[5]; /* the sender's: the server's */
  rv->sent = rep->v[6];
  rv->rx_received = rx->data;
  rv->rx_dups = rx->dups;
  rv->rx_corrupt = rx->corrupt;
  rv->rx_errors = rx->garbage;
  rv->srv_received = rv->srv_dups = rv->srv_corrupt = rv->srv_errors = 0;
  rv->complete = fw->complete && rx->data >= rep->v[6] && rx->measured > 0;
  rv->stopped = fw->stopped;
  c->nlat = 0;
  finish_row(c, rv);
}

/* run_size runs one size: START, drains, the test, DONE, RESULT, and the
   rows it makes into |rows| (*nrows of them: one, or with --bidir the
   forward row, the reverse row and their sum).  Returns 0, or -1 when
   the run must stop. */
static int run_size(client *c, uint64_t size, result *rows, int *nrows) {
  const opts *o = c->o;
  result *r = &rows[0];
  ctl req, rep;
  xport_stats a, b;
  uint64_t total, warm;
  dir_kind dir = o->test == T_LAT ? D_FWD : o->dir;

  *nrows = 1;
  memset(r, 0, sizeof(*r));
  r->test = o->test;
  r->dir = dir == D_BIDIR ? D_FWD : dir;
  r->size = size;
  r->window = default_window(o, size);
  total = default_iters(o, size);
  warm = o->warmup_set ? o->warmup : total / 10 > 1000 ? 1000 : total / 10;
  r->warmup = warm;
  if (o->duration > 0) {
    total = 0;
  } else {
    total += warm;
  }
  memset(&req, 0, sizeof(req));
  req.type = C_START;
  req.test = o->test;
  req.flags = o->verify ? CTL_F_VERIFY : 0;
  req.size = size;
  req.count = total;
  req.v[0] = r->window;
  req.v[1] = dir;
  req.v[2] = warm;
  if (dir != D_FWD) {
    /* Receives for the server's data before it sends any. */
    req.v[3] = rx_begin(c, size, r->window, warm);
  }
  if (wait_ctl(c, &req, &rep, C_READY, o->idle_timeout) != 0) {
    return -1;
  }
  /* Fill the server's receives left from a timed phase (see srv_ctl). */
  if (rep.v[0] && send_drains(c, rep.v[0]) != 0) {
    return -1;
  }
  xport_get_stats(c->x, &a);
  c->nlat = 0;
  c->sent_ok = 0;
  if (o->test == T_LAT) {
    run_pingpong(c, r, total, warm);
  } else if (dir == D_REV) {
    rx_wait(c, total, 0);
  } else {
    run_stream(c, r, total, warm);
    if (dir == D_BIDIR && !c->failed) {
      rx_wait(c, total, 0);
    }
  }
  xport_get_stats(c->x, &b);
  record_stats(c, r, &a, &b);
  r->ports_heard = b.ports_heard;
  if (o->verbose && strcmp(o->transport, "udp") == 0) {
    fprintf(stderr,
            "%s: engine: srtt %.1f us, min rtt %.1f us, rto %.1f us, cwnd "
            "%" PRIu64 " B, rnr %" PRIu64 "/%" PRIu64 ", %" PRIu64
            " packets in %" PRIu64 " sends; lost %" PRIu64
            " by reordering, %" PRIu64 " by %" PRIu64 " timeouts, %" PRIu64
            " of them spurious; %" PRIu64 " arrivals restamped; drops (all "
            "time):",
            tool_name(), (double)b.srtt_ns / 1e3, (double)b.min_rtt_ns / 1e3,
            (double)b.rto_ns / 1e3, b.cwnd_bytes, b.rnr_sent, b.rnr_received,
            b.pkts_out - a.pkts_out, b.sends - a.sends,
            b.losses_rack - a.losses_rack, b.losses_rto - a.losses_rto,
            b.rto_fired - a.rto_fired, b.spurious_losses - a.spurious_losses,
            b.rx_restamped - a.rx_restamped);
    report_drops(stderr, b.drops);
    fprintf(stderr, "\n");
  }
  r->errors = c->failed;
  if (dir != D_REV) {
    finish_row(c, r);
  }
  if (dir == D_REV) {
    /* rev_row times it: here, whether it ran */
    r->complete =
        total ? c->rx.data >= total
              : !c->failed && !atomic_load(&interrupted) && c->rx.measured > 0;
  } else if (o->duration > 0) {
    r->complete = !c->failed && !atomic_load(&interrupted) && r->seconds > 0;
  } else {
    r->complete = r->iters + warm == total;
  }
  if (c->failed) {
    r->stopped = "peer failed";
    return -1;
  }
  if (atomic_load(&interrupted)) {
    r->stopped = "interrupted";
    return -1;
  }
  if (r->warm_cut) {
    fprintf(stderr,
            "%s: the warm-up outlasted -D %g s (%" PRIu64 " of %" PRIu64
            " messages): measured from there\n",
            tool_name(), o->duration, r->warmup, warm);
  }
  if (!r->complete) {
    r->stopped = "time limit";
  }
  memset(&req, 0, sizeof(req));
  req.type = C_DONE;
  req.count = c->sent_ok;
  req.v[0] = c->rx.data;
  if (wait_ctl(c, &req, &rep, C_RESULT, o->idle_timeout) != 0) {
    r->ctl_failed = 1; /* whatever stopped the phase, the peer is gone */
    return -1;
  }
  r->srv_received = rep.v[0];
  r->srv_dups = rep.v[2];
  r->srv_corrupt = rep.v[3];
  r->srv_errors = rep.v[4];
  r->sent = c->sent_ok;
  r->rx_received = rep.v[0];
  r->rx_dups = rep.v[2];
  r->rx_corrupt = rep.v[3];
  r->rx_errors = rep.v[4];
  memcpy(r->srv_drops, rep.drops, sizeof(r->srv_drops));
  if (o->test == T_LAT) {
    r->retransmits += rep.v[5];
  }
  if (dir == D_BIDIR && rep.v[7] > 0) {
    /* The forward half measured at its receiver, the server. */
    r->iters = rep.v[8];
    r->seconds = (double)rep.v[7] / 1e9;
    r->mbps = r->gbps = r->msg_rate = 0;
    finish_row(c, r);
  }
  if (dir != D_FWD) {
    /* What the server sent that is still on its way (a timed phase). */
    if (rx_wait(c, 0, rep.v[6]) != 0) {
      r->ctl_failed = 1;
      return -1;
    }
    if (dir == D_REV) {
      result fw = *r;
      rev_row(c, &fw, &rows[0], &rep);
    } else {
      rev_row(c, r, &rows[1], &rep);
      rows[2] = rows[0];
      rows[2].dir = D_BIDIR;
      result_add(&rows[2], &rows[1]);
      *nrows = 3;
    }
    if (o->verify && (c->rx.dups || c->rx.corrupt || c->rx.garbage ||
                      c->rx.data != rep.v[6])) {
      fprintf(stderr,
              "%s: verification failed (reverse, %" PRIu64
              " B): server sent %" PRIu64 ", client received %" PRIu64
              ", %" PRIu64 " duplicates, %" PRIu64 " corrupted, %" PRIu64
              " not data\n",
              tool_name(), size, rep.v[6], c->rx.data, c->rx.dups,
              c->rx.corrupt, c->rx.garbage);
      c->verify_failed = 1;
    }
  }
  return rows[0].complete ? 0 : -1;
}

/* blocked_paths_hint says, when answers came from only some of the
   server's ports, that a firewall passing only some UDP ports is the
   likely cause, and what it must let through. */
static void blocked_paths_hint(client *c, const result *r) {
  struct sockaddr_storage ss;
  socklen_t l = sizeof(ss);
  uint16_t lport = 0;

  if (strcmp(c->o->transport, "udp") != 0 || c->srv_paths < 2 ||
      r->ports_heard == 0 || r->ports_heard >= c->srv_paths) {
    return;
  }
  if (xport_local_addr(c->x, &ss, &l) == 0) {
    lport = ss.ss_family == AF_INET6
                ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                : ntohs(((struct sockaddr_in *)&ss)->sin_port);
  }
  fprintf(stderr,
          "%s: answers came from %u of the server's %u ports: a firewall "
          "that passes only some UDP ports? The server answers from its "
          "ports %u-%u to this client's port %u; a stateful firewall here "
          "must let those in (docs/transports.md, \"Firewalls\")\n",
          tool_name(), r->ports_heard, c->srv_paths, c->o->port,
          c->o->port + c->srv_paths - 1, lport);
}

int run_client(const opts *o, const struct sockaddr_storage *srv,
               socklen_t srv_len) {
  return run_client_to(o, srv, srv_len, stdout, NULL);
}

/* close_client closes |c|'s transport and frees what it held. */
static void close_client(client *c) {
  xport_close(c->x);
  for (uint32_t i = 0; i < c->rx.nslot; ++i) {
    if (c->rx.slot[i].buf) {
      msg_free(&c->mm, c->rx.slot[i].buf, 1);
    }
  }
  free(c->rx.slot);
  free(c->rx.seen);
  free(c->cbuf);
  free(c->rbuf_ctl);
  free(c->lat);
  free_orphans(c);
  msgmem_fini(&c->mm);
}

int run_client_to(const opts *o, const struct sockaddr_storage *srv,
                  socklen_t srv_len, FILE *f, results *all) {
  opts mtu_opts;
  client c;
  report out;
  ctl req, rep;
  result rows[3], r;
  uint64_t sizes[32];
  int nsizes = 0, rc = 0, i, size_failed = 0, nrows = 0;

  memset(&r, 0, sizeof(r));
  if (all) {
    all->n = 0;
  }

  memset(&c, 0, sizeof(c));
  c.o = o;
  c.deadline = xport_now() + (uint64_t)(o->time_limit * 1e9);
  xport_format_addr((const struct sockaddr *)srv, c.peer_name,
                    sizeof(c.peer_name));
  if (o->mtu == 0 && strcmp(o->transport, "udp") == 0) {
    int m = xport_path_mtu((const struct sockaddr *)srv, srv_len);
    if (m < 0) {
      fprintf(stderr, "%s: no route to %s: %s\n", tool_name(), c.peer_name,
              strerror(-m));
      return 1;
    }
    /* At most 32000 for bw, 8192 for lat and rate: the engine's
       congestion control paces one packet per round trip whenever its
       window is under one MTU-sized packet, and small messages keep the
       window small, so a large MTU would pace 64-byte messages.  Bulk
       transfers keep most of the large-packet gain on loopback
       (docs/transports.md). */
    uint32_t cap = o->test == T_BW ? 32000 : 8192;
    mtu_opts = *o;
    mtu_opts.mtu = (uint32_t)m > cap ? cap : (uint32_t)m;
    o = &mtu_opts;
    c.o = o;
  }
  if (open_xport(o, &c.x, 0, srv->ss_family, "") != 0) {
    return 1;
  }
  if (xport_add_peer(c.x, (const struct sockaddr *)srv, srv_len, &c.peer) !=
      0) {
    fprintf(stderr, "%s: cannot add peer %s\n", tool_name(), c.peer_name);
    xport_close(c.x);
    return 1;
  }
  msgmem_init(&c.mm, c.x, o->mem);
  c.cbuf = xalloc(CTL_SIZE);
  c.rbuf_ctl = xalloc(CTL_SIZE);
  memset(&req, 0, sizeof(req));
  req.type = C_HELLO;
  req.test = o->test;
  req.size = o->sweep ? SWEEP_MAX : o->size;
  if (wait_ctl(&c, &req, &rep, C_HELLO_OK, o->idle_timeout) != 0) {
    xport_stats st;
    xport_get_stats(c.x, &st);
    if (c.failed_status == -EHOSTUNREACH && st.pkts_in > 0) {
      fprintf(stderr,
              "%s: %s did not answer the SRD handshake; %" PRIu64
              " datagrams came back from it, none a valid SRD packet "
              "(%" PRIu64 " dropped as malformed): not an srd-perf server?\n",
              tool_name(), c.peer_name, st.pkts_in, st.bad_in);
    } else if (c.failed_status == -EHOSTUNREACH) {
      fprintf(stderr,
              "%s: %s is unreachable: no answer to the SRD handshake (%s). "
              "Is srd-perf -s running there, and are UDP ports %u-%u "
              "open?\n",
              tool_name(), c.peer_name, c.fail_msg, o->port,
              o->port + o->paths - 1);
    } else if (c.failed_status == -ECONNREFUSED) {
      fprintf(stderr,
              "%s: %s refused the connection: is srd-perf -s -t %s running "
              "there?\n",
              tool_name(), c.peer_name, o->transport);
    } else {
      fprintf(stderr, "%s: %s\n", tool_name(),
              c.fail_msg[0] ? c.fail_msg : "no answer");
    }
    close_client(&c);
    return atomic_load(&interrupted) ? 130 : 1;
  }
  c.srv_paths = (uint32_t)rep.v[0];
  report_init(&out, o);
  report_header(&out, c.peer_name, c.x, f);
  if (o->sweep) {
    uint64_t s;
    for (s = MIN_SIZE; s <= SWEEP_MAX; s *= 2) {
      sizes[nsizes++] = s;
    }
  } else {
    sizes[nsizes++] = o->size;
  }
  for (i = 0; i < nsizes; ++i) {
    int rv = run_size(&c, sizes[i], rows, &nrows);
    r = rows[0];
    if (r.iters || r.stopped || rv == 0) {
      report_rows(&out, rows, nrows, f);
      for (int k = 0; all && k < nrows && all->n < MAX_ROWS; ++k) {
        all->row[all->n++] = rows[k];
      }
    }
    if (rv != 0) {
      size_failed = r.stopped == NULL || r.ctl_failed;
      /* A control reply that never came (no completion in error: a
         transport whose sends complete before the peer has them, as
         udp;ofi_rxd's do) is a vanished peer too. */
      if (!c.failed && size_failed && !atomic_load(&interrupted)) {
        c.failed = 1;
        c.failed_status = -ETIMEDOUT;
      }
      break;
    }
  }
  if (report_end(&out) != 0) {
    fprintf(stderr, "%s: cannot write the JSON output\n", tool_name());
    rc = 1;
  }
  if (c.failed) {
    fprintf(stderr, "%s: %s: %s%s\n", tool_name(), c.peer_name,
            c.fail_msg[0] ? c.fail_msg : "failed",
            c.failed > 1 ? " (and more failed operations)" : "");
    if (c.failed_status == -ETIMEDOUT || c.failed_status == -ECONNRESET ||
        c.failed_status == -EHOSTUNREACH || c.failed_status == -EPIPE) {
      fprintf(stderr, "%s: the peer vanished mid-run\n", tool_name());
    }
    blocked_paths_hint(&c, &r);
    rc = 1;
  } else if (atomic_load(&interrupted)) {
    /* Say goodbye (briefly), so that the server moves on at once. */
    uint64_t until = xport_now() + 300000000ull;
    memset(&req, 0, sizeof(req));
    req.type = C_BYE;
    ctl_encode(c.cbuf, &req);
    if (xport_post_send(c.x, c.peer, c.cbuf, CTL_SIZE, c.cbuf) == 0) {
      xport_cqe q[8];
      int bye_done = 0;
      while (!bye_done && xport_now() < until) {
        size_t n, k;
        xport_progress(c.x, 10000000ull);
        n = xport_poll_cq(c.x, q, 8);
        for (k = 0; k < n; ++k) {
          bye_done |= q[k].op == XPORT_OP_SEND && q[k].buf == c.cbuf;
        }
      }
    }
    fprintf(stderr,
            "%s: interrupted; the rows above hold what was "
            "measured\n",
            tool_name());
    rc = 130;
  } else {
    if (size_failed) {
      /* A phase that could not run or end (its control exchange, or a
         warm-up that outlasted -D): say what, and what may be why. */
      fprintf(stderr, "%s: %s: %s\n", tool_name(), c.peer_name,
              c.fail_msg[0] ? c.fail_msg : "the test did not complete");
      blocked_paths_hint(&c, &r);
      rc = 1;
    }
    memset(&req, 0, sizeof(req));
    req.type = C_BYE;
    wait_ctl(&c, &req, &rep, C_BYE_OK, size_failed ? 0.3 : 1.0);
    if (!size_failed && r.stopped) {
      fprintf(stderr, "%s: stopped at the time limit (--time-limit %.0f)\n",
              tool_name(), o->time_limit);
      blocked_paths_hint(&c, &r);
    } else if (!size_failed &&
               (r.warm_cut ||
                (r.iters >= 64 && 2 * r.ports_heard <= c.srv_paths))) {
      /* It ran, but answers came from few of the server's ports: worth
         saying even so (a firewall halving the paths is slow, not dead). */
      blocked_paths_hint(&c, &r);
    }
    if (c.verify_failed) {
      rc = 1;
    }
    if (o->verify && o->dir != D_REV &&
        (r.srv_dups || r.srv_corrupt ||
         (o->test != T_LAT && r.srv_received != c.sent_ok))) {
      fprintf(stderr,
              "%s: verification failed: sent %" PRIu64 ", server received "
              "%" PRIu64 ", %" PRIu64 " duplicates, %" PRIu64 " corrupted\n",
              tool_name(), c.sent_ok, r.srv_received, r.srv_dups,
              r.srv_corrupt);
      rc = 1;
    }
  }
  close_client(&c);
  return rc;
}
