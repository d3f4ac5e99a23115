/*
 * srd_loop.c: an in-memory, virtual-time wire between two endpoints, and
 * the transfer that srd-loopback and the property tests run over it.
 */
#include "srd_loop.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "impair.h"

void srd_loop_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t index) {
  uint64_t x = seed ^ (index * 0xD6E8FEB86659FD93ULL), w;
  size_t i = 0;

  for (; i < len && i < 8; ++i) {
    buf[i] = (uint8_t)(index >> (8 * i));
  }
  /* A cheap counter-based pattern, a word at a time: every message's
     bytes differ from every other's, which is all the checks need. */
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ULL;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ULL;
    memcpy(buf + i, &w, 8);
  }
  if (i < len) {
    x += 0x9E3779B97F4A7C15ULL;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ULL;
    memcpy(buf + i, &w, len - i);
  }
}

/* ------------------------------------------------------------------------ */
/* The wire                                                                 */

/* wpkt is a packet on the wire: a slot of the delay queue, its bytes
   after it. */
typedef struct wpkt {
  uint32_t len;
  uint16_t path;
  uint8_t to; /* 0 = A, 1 = B */
  uint8_t data[];
} wpkt;

/* wlink is one direction of one path: the impairment model's link, and
   what it delivered. */
typedef struct wlink {
  impair_link imp;
  uint64_t delivered;
  uint64_t bytes;
} wlink;

typedef struct wire {
  wlink links[2][SRD_LOOP_MAX_PATHS]; /* [from][path] */
  uint32_t n_paths;
  impair_q q; /* the packets on their way */
} wire;

/* wire_send offers a packet that endpoint |from| sent on |path| at |now|
   to its link and queues the copies that will arrive; returns 0, or
   SRD_ERR_NOMEM if the delay queue could not take a copy. */
static int wire_send(wire *w, int from, uint16_t path, const uint8_t *pkt,
                     size_t len, srd_tstamp now) {
  wlink *l = &w->links[from][path % w->n_paths];
  impair_fate f;
  uint32_t k;

  impair_link_send(&l->imp, len, now, &f);
  for (k = 0; k < f.copies; ++k) {
    wpkt *p = impair_q_get(&w->q);
    if (p == NULL) {
      return SRD_ERR_NOMEM;
    }
    p->len = (uint32_t)len;
    p->path = path;
    p->to = (uint8_t)!from;
    memcpy(p->data, pkt, len);
    impair_q_push(&w->q, p, f.at[k]);
  }
  return 0;
}

/* link_stats reports what |l| did in |st|. */
static void link_stats(srd_loop_link_stats *st, const wlink *l) {
  memset(st, 0, sizeof(*st));
  st->sent = l->imp.st.sent;
  st->delivered = l->delivered;
  st->lost = l->imp.st.lost;
  st->blackholed = l->imp.st.blackholed;
  st->queue_drops = l->imp.st.queue_drops;
  st->duplicated = l->imp.st.duplicated;
  st->reordered = l->imp.st.reordered;
  st->bytes = l->bytes;
  st->dup_delayed = l->imp.st.dup_delayed;
  st->corrupted = l->imp.st.corrupted;
}

int srd_loop_drop_is_corrupt(int r) {
  return r == SRD_DROP_CORRUPT_HDR || r == SRD_DROP_CORRUPT_PAYLOAD;
}

/* ------------------------------------------------------------------------ */
/* The transfer                                                             */

void srd_loop_cfg_default(srd_loop_cfg *cfg) {
  uint32_t i;

  memset(cfg, 0, sizeof(*cfg));
  cfg->seed = 1;
  cfg->n_paths = 8;
  for (i = 0; i < SRD_LOOP_MAX_PATHS; ++i) {
    cfg->ab[i].delay = cfg->ba[i].delay = 10 * SRD_US;
    cfg->ab[i].reorder_delay = cfg->ba[i].reorder_delay = 20 * SRD_US;
    cfg->ab[i].rate_bps = cfg->ba[i].rate_bps = 100000000000ULL;
    cfg->ab[i].queue_bytes = cfg->ba[i].queue_bytes = 256 * 1024;
  }
  cfg->messages = 1000;
  cfg->size = 64 * 1024;
  cfg->inflight = 64;
  cfg->recv_window = 64;
  srd_settings_default(&cfg->settings);
  cfg->time_limit = 10 * SRD_S;
}

/* Per-message bookkeeping. */
typedef struct mrec {
  uint32_t len;
  srd_tstamp post_ts;
  uint32_t msg_id;
  int status;    /* send completion status */
  int completed; /* send completed */
  int started;   /* its packets left: msg_id is valid */
  uint32_t deliveries;
} mrec;

/* Per-delivery bookkeeping, joined with the senders' by message id. */
typedef struct drec {
  uint32_t msg_id;
  uint32_t len;
  srd_tstamp ts;
  uint64_t index_in_data; /* from the first 8 bytes, if len >= 8 */
  int intact_as_index;    /* the bytes match srd_loop_fill(index_in_data) */
  uint8_t *copy;          /* the bytes, for messages under 8 bytes */
} drec;

typedef struct run {
  const srd_loop_cfg *cfg;
  srd_loop_result *res;
  srd_ep *ep[2];
  srd_peer_id peer[2]; /* ep[i]'s id for the other */
  wire w;
  mrec *msgs;
  uint8_t *sendbuf;    /* one buffer per in-flight slot */
  uint8_t *recvbuf;    /* one buffer per posted receive */
  uint32_t *free_send; /* free send buffer slots */
  uint32_t n_free_send;
  uint32_t next_msg;
  uint32_t n_done;
  drec *dels;
  size_t n_dels, cap_dels;
  uint8_t *scratch;
  srd_tstamp now;
} run;

static uint32_t msg_len(const run *r, uint32_t index) {
  impair_rng g;

  if (!r->cfg->random_sizes) {
    return r->cfg->size;
  }
  g.state = r->cfg->seed ^ (0xA5A5A5A5ULL + index * 0x9E3779B97F4A7C15ULL);
  return (uint32_t)(impair_rng_next(&g) % ((uint64_t)r->cfg->size + 1));
}

static void log_a(void *ud, const srd_log_record *rec) {
  const srd_loop_cfg *cfg = ud;
  cfg->log((void *)0, rec);
}

static void log_b(void *ud, const srd_log_record *rec) {
  const srd_loop_cfg *cfg = ud;
  cfg->log((void *)1, rec);
}

static int post_sends(run *r) {
  while (r->n_free_send > 0 && r->next_msg < r->cfg->messages) {
    uint32_t slot = r->free_send[r->n_free_send - 1];
    uint32_t idx = r->next_msg;
    uint8_t *buf = r->sendbuf + (size_t)slot * r->cfg->size;
    mrec *m = &r->msgs[idx];
    int rv;

    m->len = msg_len(r, idx);
    srd_loop_fill(buf, m->len, r->cfg->seed, idx);
    rv = srd_ep_post_send(r->ep[0], r->peer[0], buf, m->len,
                          (void *)(uintptr_t)((uint64_t)idx << 20 | slot),
                          r->now);
    if (rv == SRD_ERR_AGAIN) {
      break;
    }
    if (rv != 0) {
      return rv;
    }
    m->post_ts = r->now;
    if (r->res->sent == 0) {
      r->res->start = r->now;
    }
    ++r->res->sent;
    --r->n_free_send;
    ++r->next_msg;
  }
  return 0;
}

static int post_recv(run *r, uint32_t slot) {
  return srd_ep_post_recv(r->ep[1], r->recvbuf + (size_t)slot * r->cfg->size,
                          r->cfg->size, (void *)(uintptr_t)slot, r->now);
}

static int record_delivery(run *r, const srd_cqe *e) {
  drec *d;
  const uint8_t *data = e->buf;

  if (r->n_dels == r->cap_dels) {
    size_t ncap = r->cap_dels ? 2 * r->cap_dels : 1024;
    drec *n = realloc(r->dels, ncap * sizeof(*n));
    if (n == NULL) {
      return SRD_ERR_NOMEM;
    }
    r->dels = n;
    r->cap_dels = ncap;
  }
  d = &r->dels[r->n_dels++];
  memset(d, 0, sizeof(*d));
  d->msg_id = e->msg_id;
  d->len = (uint32_t)e->len;
  d->ts = e->ts;
  if (e->len >= 8) {
    uint64_t idx = 0;
    int k;
    for (k = 7; k >= 0; --k) {
      idx = idx << 8 | data[k];
    }
    d->index_in_data = idx;
    d->intact_as_index = 0;
    if (idx < r->cfg->messages) {
      srd_loop_fill(r->scratch, e->len, r->cfg->seed, idx);
      d->intact_as_index = memcmp(r->scratch, data, e->len) == 0;
    }
  } else if (e->len > 0) {
    d->copy = malloc(e->len);
    if (d->copy == NULL) {
      return SRD_ERR_NOMEM;
    }
    memcpy(d->copy, data, e->len);
  }
  r->res->bytes_delivered += e->len;
  r->res->last_delivery = e->ts;
  return 0;
}

/* poll drains both completion queues; returns how many it saw, or a
   negative error. */
static int poll(run *r) {
  srd_cqe cq[64];
  size_t n, i;
  int seen = 0, rv;

  while ((n = srd_ep_poll_cq(r->ep[0], cq, 64)) > 0) {
    for (i = 0; i < n; ++i) {
      uint64_t ctx = (uint64_t)(uintptr_t)cq[i].user_ctx;
      uint32_t idx = (uint32_t)(ctx >> 20), slot = (uint32_t)(ctx & 0xFFFFF);
      mrec *m = &r->msgs[idx];
      if (m->completed) {
        ++r->res->double_completions;
        continue;
      }
      m->completed = 1;
      m->status = cq[i].status;
      m->msg_id = cq[i].msg_id;
      m->started = (cq[i].flags & SRD_CQE_F_STARTED) != 0;
      if (cq[i].status == 0) {
        ++r->res->completed_ok;
      } else {
        int code = -cq[i].status - 200;
        srd_tstamp from =
            m->post_ts > r->cfg->dead_from ? m->post_ts : r->cfg->dead_from;
        if (r->res->completed_err++ == 0) {
          r->res->first_err = cq[i].ts;
        }
        if (cq[i].ts > from && cq[i].ts - from > r->res->max_err_wait) {
          r->res->max_err_wait = cq[i].ts - from;
        }
        if (code >= 0 && code < 32) {
          ++r->res->errors_by_code[code];
        }
      }
      r->res->end = cq[i].ts;
      r->free_send[r->n_free_send++] = slot;
      ++r->n_done;
    }
    seen += (int)n;
  }
  while ((n = srd_ep_poll_cq(r->ep[1], cq, 64)) > 0) {
    for (i = 0; i < n; ++i) {
      uint32_t slot = (uint32_t)(uintptr_t)cq[i].user_ctx;
      if (cq[i].status == 0) {
        rv = record_delivery(r, &cq[i]);
        if (rv != 0) {
          return rv;
        }
      } else if (cq[i].status != SRD_ERR_CANCELED) {
        ++r->res->recv_errors;
      }
      if (cq[i].status != SRD_ERR_CANCELED) {
        rv = post_recv(r, slot);
        if (rv != 0) {
          return rv;
        }
      }
    }
    seen += (int)n;
  }
  rv = post_sends(r);
  return rv != 0 ? rv : seen;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_msgid(const void *a, const void *b) {
  uint32_t x = ((const mrec *const *)a)[0]->msg_id;
  uint32_t y = ((const mrec *const *)b)[0]->msg_id;
  return x < y ? -1 : x > y;
}

/* join matches deliveries to messages by message id, checks their bytes,
   and computes latencies. */
static int join(run *r) {
  srd_loop_result *res = r->res;
  uint32_t n = r->cfg->messages, i, k;
  mrec **byid = malloc((n ? n : 1) * sizeof(*byid));
  uint64_t *lat = malloc((r->n_dels ? r->n_dels : 1) * sizeof(*lat));
  size_t n_lat = 0, nb = 0;
  uint64_t max_index = 0;
  int have_max = 0;

  if (byid == NULL || lat == NULL) {
    free(byid);
    free(lat);
    return SRD_ERR_NOMEM;
  }
  for (i = 0; i < n; ++i) {
    /* Only a started message can have been delivered. */
    if (r->msgs[i].completed && r->msgs[i].started) {
      byid[nb++] = &r->msgs[i];
    }
  }
  qsort(byid, nb, sizeof(*byid), cmp_msgid);
  for (k = 0; k < r->n_dels; ++k) {
    drec *d = &r->dels[k];
    mrec key, *kp = &key, **hit;
    uint32_t index;

    key.msg_id = d->msg_id;
    hit = bsearch(&kp, byid, nb, sizeof(*byid), cmp_msgid);
    if (hit == NULL) {
      ++res->unmatched;
      continue;
    }
    index = (uint32_t)(*hit - r->msgs);
    if ((*hit)->deliveries++ > 0) {
      ++res->duplicates_delivered;
    }
    if (d->len != (*hit)->len) {
      ++res->corrupted;
    } else if (d->len >= 8) {
      if (d->index_in_data != index || !d->intact_as_index) {
        ++res->corrupted;
      }
    } else if (d->len > 0) {
      srd_loop_fill(r->scratch, d->len, r->cfg->seed, index);
      if (memcmp(r->scratch, d->copy, d->len) != 0) {
        ++res->corrupted;
      }
    }
    if (have_max && index < max_index) {
      ++res->out_of_order;
    }
    if (!have_max || index > max_index) {
      max_index = index;
      have_max = 1;
    }
    ++res->delivered;
    if ((*hit)->deliveries == 1) {
      lat[n_lat++] = d->ts - (*hit)->post_ts;
    }
  }
  for (i = 0; i < n; ++i) {
    if (r->msgs[i].completed && r->msgs[i].status == 0 &&
        r->msgs[i].deliveries == 0) {
      ++res->ok_not_delivered;
    }
  }
  if (n_lat > 0 && r->cfg->lat_ns != NULL) {
    qsort(lat, n_lat, sizeof(*lat), cmp_u64);
    memcpy(r->cfg->lat_ns, lat, n_lat * sizeof(*lat));
    res->n_lat = n_lat;
  }
  free(byid);
  free(lat);
  return 0;
}

static srd_tstamp tmin(srd_tstamp a, srd_tstamp b) {
  return a < b ? a : b;
}

int srd_loop_run(const srd_loop_cfg *cfg, srd_loop_result *res) {
  run r;
  srd_settings s;
  srd_peer_settings ps;
  uint8_t *pkt = NULL;
  size_t cap;
  uint32_t i;
  int rv = 0, k;
  uint64_t steps = 0;

  memset(&r, 0, sizeof(r));
  memset(res, 0, sizeof(*res));
  r.cfg = cfg;
  r.res = res;
  res->n_paths = cfg->n_paths;
  if (cfg->n_paths < 1 || cfg->n_paths > SRD_LOOP_MAX_PATHS ||
      cfg->inflight < 1 || cfg->recv_window < 1) {
    return SRD_ERR_INVALID_ARGUMENT;
  }
  for (k = 0; k < 2; ++k) {
    s = cfg->settings;
    /* Distinct seeds: two endpoints must not share an incarnation id. */
    s.seed = cfg->seed * 2 + (uint64_t)k + 0x1234;
    if (s.max_sends < cfg->inflight) {
      s.max_sends = cfg->inflight;
    }
    if (s.max_recvs < cfg->recv_window) {
      s.max_recvs = cfg->recv_window;
    }
    if (cfg->log) {
      s.log = k == 0 ? log_a : log_b;
      s.user_data = (void *)cfg;
    }
    rv = srd_ep_new(&r.ep[k], &s, srd_mem_default());
    if (rv != 0) {
      goto out;
    }
    srd_peer_settings_default(&ps);
    ps.n_paths = cfg->n_paths;
    ps.ordered = k == 1 && cfg->ordered;
    rv = srd_ep_add_peer(r.ep[k], &ps, &r.peer[k]);
    if (rv != 0) {
      goto out;
    }
  }
  r.w.n_paths = cfg->n_paths;
  cap = srd_ep_max_pkt_size(r.ep[0]);
  if (srd_ep_max_pkt_size(r.ep[1]) > cap) {
    cap = srd_ep_max_pkt_size(r.ep[1]);
  }
  for (i = 0; i < cfg->n_paths; ++i) {
    for (k = 0; k < 2; ++k) {
      impair_cfg c = k == 0 ? cfg->ab[i] : cfg->ba[i];
      if (cfg->dead_from) {
        c.blackhole = 1;
        c.blackhole_from = cfg->dead_from;
      }
      if (impair_cfg_check(&c) != 0) {
        rv = SRD_ERR_INVALID_ARGUMENT;
        goto out;
      }
      impair_link_init(&r.w.links[k][i].imp, &c, cfg->seed,
                       (uint64_t)k * SRD_LOOP_MAX_PATHS + i);
    }
  }
  if (impair_q_init(&r.w.q, sizeof(wpkt) + cap, 0, 0) != 0) {
    rv = SRD_ERR_NOMEM;
    goto out;
  }
  pkt = malloc(cap);
  r.msgs = calloc(cfg->messages ? cfg->messages : 1, sizeof(mrec));
  r.sendbuf = malloc((size_t)cfg->inflight * (cfg->size ? cfg->size : 1));
  r.recvbuf = malloc((size_t)cfg->recv_window * (cfg->size ? cfg->size : 1));
  r.free_send = malloc(cfg->inflight * sizeof(uint32_t));
  r.scratch = malloc(cfg->size ? cfg->size : 1);
  if (!pkt || !r.msgs || !r.sendbuf || !r.recvbuf || !r.free_send ||
      !r.scratch) {
    rv = SRD_ERR_NOMEM;
    goto out;
  }
  for (i = 0; i < cfg->inflight; ++i) {
    r.free_send[r.n_free_send++] = cfg->inflight - 1 - i;
  }
  for (i = 0; i < cfg->recv_window; ++i) {
    rv = post_recv(&r, i);
    if (rv != 0) {
      goto out;
    }
  }
  rv = post_sends(&r);
  if (rv != 0) {
    goto out;
  }

  /* The packet loop: write what is due, read completions, then jump to
     the next event (an arrival or an endpoint's deadline). */
  for (;;) {
    int activity = 0;
    srd_tstamp next;
    wpkt *p;

    if (cfg->stop && *cfg->stop) {
      res->interrupted = 1;
      break;
    }
    for (k = 0; k < 2; ++k) {
      srd_path path;
      srd_ssize n;
      while ((n = srd_ep_write_pkt(r.ep[k], &path, pkt, cap, r.now)) > 0) {
        if (k == 0) {
          ++res->path_pkts[path.path % SRD_LOOP_MAX_PATHS];
        }
        if (cfg->tap && cfg->tap_at == SRD_LOOP_TAP_SEND) {
          cfg->tap(cfg->tap_user, k, path.path % cfg->n_paths, r.now, pkt,
                   (size_t)n);
        }
        rv = wire_send(&r.w, k, path.path, pkt, (size_t)n, r.now);
        if (rv != 0) {
          goto out;
        }
        activity = 1;
      }
      if (n < 0) {
        rv = (int)n;
        goto out;
      }
    }
    rv = poll(&r);
    if (rv < 0) {
      goto out;
    }
    if (rv > 0) {
      continue;
    }
    rv = 0;
    if (activity) {
      continue;
    }
    if (r.n_done == cfg->messages && r.w.q.len == 0) {
      res->finished = 1;
      break;
    }
    next = tmin(srd_ep_get_expiry(r.ep[0]), srd_ep_get_expiry(r.ep[1]));
    next = tmin(next, impair_q_next(&r.w.q));
    if (next == SRD_TSTAMP_NONE) {
      res->stuck = r.n_done != cfg->messages;
      res->finished = !res->stuck;
      break;
    }
    if (next > cfg->time_limit) {
      break;
    }
    if (next > r.now) {
      r.now = next;
    }
    while ((p = impair_q_pop(&r.w.q, r.now, NULL)) != NULL) {
      srd_path path;
      wlink *l;
      srd_ep_stats before, after;
      int flipped, rrv;
      l = &r.w.links[!p->to][p->path];
      path.peer = r.peer[p->to];
      path.path = p->path;
      ++l->delivered;
      l->bytes += p->len;
      flipped = impair_link_corrupt(&l->imp, p->data, p->len) > 0;
      if (cfg->tap && cfg->tap_at == SRD_LOOP_TAP_RECV) {
        cfg->tap(cfg->tap_user, !p->to, p->path, r.now, p->data, p->len);
      }
      if (flipped) {
        srd_ep_get_stats(r.ep[p->to], &before);
      }
      /* Protocol errors are counted by the engine; the loop goes on. */
      rrv = srd_ep_read_pkt(r.ep[p->to], &path, p->data, p->len, r.now);
      if (flipped) {
        int d, as_corrupt = 0, other = rrv < 0;
        srd_ep_get_stats(r.ep[p->to], &after);
        for (d = 0; d < SRD_DROP_REASONS; ++d) {
          if (after.drops[d] == before.drops[d]) {
            continue;
          }
          if (srd_loop_drop_is_corrupt(d)) {
            as_corrupt = 1;
          } else {
            other = 1;
          }
        }
        if (as_corrupt) {
          ++res->corrupt_dropped;
        } else if (other) {
          ++res->corrupt_dropped_other;
        } else {
          ++res->corrupt_accepted;
        }
      }
      impair_q_put(&r.w.q, p);
    }
    for (k = 0; k < 2; ++k) {
      if (srd_ep_get_expiry(r.ep[k]) <= r.now) {
        srd_ep_handle_expiry(r.ep[k], r.now);
      }
    }
    if (++steps > 2000000000ULL) {
      break;
    }
  }

  rv = join(&r);
  if (rv != 0) {
    goto out;
  }
  srd_ep_get_stats(r.ep[0], &res->a);
  srd_ep_get_stats(r.ep[1], &res->b);
  srd_ep_get_peer_stats(r.ep[0], r.peer[0], &res->a_peer);
  res->retransmits = res->a.retransmits;
  for (i = 0; i < cfg->n_paths; ++i) {
    link_stats(&res->ab[i], &r.w.links[0][i]);
    link_stats(&res->ba[i], &r.w.links[1][i]);
  }
  if (res->last_delivery > res->start) {
    res->goodput_gbps = (double)res->bytes_delivered * 8.0 /
                        (double)(res->last_delivery - res->start);
  }

out:
  for (i = 0; i < r.n_dels; ++i) {
    free(r.dels[i].copy);
  }
  free(r.dels);
  srd_ep_del(r.ep[0]);
  srd_ep_del(r.ep[1]);
  impair_q_fini(&r.w.q);
  free(pkt);
  free(r.msgs);
  free(r.sendbuf);
  free(r.recvbuf);
  free(r.free_send);
  free(r.scratch);
  return rv;
}
