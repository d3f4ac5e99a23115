/*
 * run_workload.c: the workload of a run: its flows (made from the
 * scenario and its seed, the same for every transport), the messages
 * they post, the timers that start flows and pace an open-loop stream,
 * and what the transport reports back (a message arrived, became
 * readable, was sent; bytes became readable), which is all the runner
 * measures from.
 */
#include "run_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* now_of is the simulation's clock. */
static netsim_time now_of(const run_ctx *r) {
  return netsim_sim_now(r->sim);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

/* msg_new returns a zeroed message record: a new one (numbered in order,
   kept for o->records), or without records one that was released.
   Returns NULL when out of memory. */
static simx_msg *msg_new(run_ctx *r) {
  simx_msg *m;

  if (!r->o->records && r->n_free > 0) {
    m = r->free_msgs[--r->n_free];
    memset(m, 0, sizeof(*m));
    m->id = UINT32_MAX;
    return m;
  }
  if (r->n_msgs % SIM_MSG_BLOCK == 0) {
    uint32_t b = (uint32_t)(r->n_msgs / SIM_MSG_BLOCK);
    if (b == r->cap_blocks) {
      uint32_t ncap = r->cap_blocks ? r->cap_blocks * 2 : 16;
      simx_msg **n = realloc(r->blocks, (size_t)ncap * sizeof(*n));
      if (n == NULL) {
        return NULL;
      }
      r->blocks = n;
      r->cap_blocks = ncap;
    }
    r->blocks[b] = calloc(SIM_MSG_BLOCK, sizeof(simx_msg));
    if (r->blocks[b] == NULL) {
      return NULL;
    }
    r->n_blocks = b + 1;
  }
  m = &r->blocks[r->n_msgs / SIM_MSG_BLOCK][r->n_msgs % SIM_MSG_BLOCK];
  memset(m, 0, sizeof(*m));
  m->id = (uint32_t)r->n_msgs;
  ++r->n_msgs;
  return m;
}

/* msg_release makes |m| reusable by msg_new (not with o->records, which
   keeps every record).  A record it cannot keep is simply not reused. */
static void msg_release(run_ctx *r, simx_msg *m) {
  if (r->o->records) {
    return;
  }
  if (r->n_free == r->cap_free) {
    uint32_t ncap = r->cap_free ? r->cap_free * 2 : 256;
    simx_msg **n = realloc(r->free_msgs, (size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return; /* kept: only memory */
    }
    r->free_msgs = n;
    r->cap_free = ncap;
  }
  r->free_msgs[r->n_free++] = m;
}

/* lat_add records one message latency (ps); one it cannot keep (out of
   memory) is left out. */
static void lat_add(run_ctx *r, uint64_t v) {
  if (r->n_lat == r->cap_lat) {
    size_t ncap = r->cap_lat ? r->cap_lat * 2 : 1024;
    uint64_t *n = realloc(r->lat, ncap * sizeof(*n));
    if (n == NULL) {
      return;
    }
    r->lat = n;
    r->cap_lat = ncap;
  }
  r->lat[r->n_lat++] = v;
}

/* post_one posts flow |fi|'s next message (at most the bytes it has left)
   to the transport.  Returns 0, or -1 through run_fail. */
static int post_one(run_ctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];
  simx_msg *m;
  uint64_t len = r->s->message;
  int rv;

  if (f->bytes) {
    uint64_t left = f->bytes - f->posted_bytes;
    if (left == 0) {
      return 0;
    }
    if (len > left) {
      len = left;
    }
  }
  m = msg_new(r);
  if (m == NULL) {
    return run_fail(r, "out of memory (message records)");
  }
  m->flow = fi;
  m->src = f->src;
  m->dst = f->dst;
  m->conn = f->conn;
  m->bytes = len;
  m->t_post = now_of(r);
  m->t_arrive = m->t_read = m->t_sent = NETSIM_TIME_NONE;
  ++f->posted;
  ++r->n_posted;
  ++f->outstanding;
  f->posted_bytes += len;
  if (r->first_post == NETSIM_TIME_NONE) {
    r->first_post = m->t_post;
  }
  rv = simx_post(r->x, m);
  if (rv != 0) {
    return run_fail(r, "the %s transport refused a message: %s", r->tr->name,
                    netsim_strerror(rv));
  }
  return 0;
}

/* fill keeps a closed-loop flow's window of messages outstanding. */
static void fill(run_ctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];

  while (!r->failed && !f->open_loop && f->outstanding < r->s->window &&
         (f->bytes == 0 || f->posted_bytes < f->bytes)) {
    if (post_one(r, fi) != 0) {
      return;
    }
  }
}

/* start_flow starts flow |fi| now: a closed-loop flow fills its window,
   an open-loop one (stream) arms the stream timer. */
static void start_flow(run_ctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];

  f->started = 1;
  f->start = now_of(r);
  f->last_progress = f->start;
  if (f->open_loop) {
    r->stream_flow = fi;
    netsim_evl_timer_set(netsim_sim_evl(r->sim), &r->stream_tm, now_of(r));
  } else {
    fill(r, fi);
  }
}

/* flow_done records that flow |fi| completed now; the last bounded flow
   ends the run (when no flow is unbounded), the last flow of an incast
   round starts the next round. */
static void flow_done(run_ctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];
  uint32_t i;

  f->end = now_of(r);
  if (f->end > f->last_progress && f->end - f->last_progress > f->max_gap) {
    f->max_gap = f->end - f->last_progress;
  }
  if (r->bounded_left > 0 && --r->bounded_left == 0 &&
      r->res->n_flows_unbounded == 0) {
    r->done = 1;
    netsim_evl_stop(netsim_sim_evl(r->sim));
  }
  if (r->s->wl == SCN_WL_INCAST && f->round == r->round &&
      --r->round_left == 0 && r->round + 1 < r->rounds) {
    /* The next synchronised round: every sender answers at once. */
    ++r->round;
    r->round_left = r->senders;
    for (i = 0; i < r->n_flows; ++i) {
      if (r->flows[i].round == r->round) {
        start_flow(r, i);
      }
    }
  }
}

/* check_flow calls flow_done once every message of flow |fi| is done or
   failed. */
static void check_flow(run_ctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];

  if (f->end == NETSIM_TIME_NONE && f->n_msgs > 0 &&
      f->done + f->failed == f->n_msgs) {
    flow_done(r, fi);
  }
}

/* ------------------------------------------------------------------------ */
/* Reports from the transport                                               */

/* on_arrived, on_readable, on_sent and on_progress are the transport's
   reports (simx_app): a message's last byte arrived; it became readable
   (a second time is a duplicate delivery, counted only); its send
   completed with |status| (not 0: failed); |bytes| of flow |flow| became
   readable. */
static void on_arrived(void *user, simx_msg *m) {
  run_ctx *r = user;

  if (m->t_arrive == NETSIM_TIME_NONE) {
    m->t_arrive = now_of(r);
  }
}

/* maybe_release releases |m| once it is both read and sent. */
static void maybe_release(run_ctx *r, simx_msg *m) {
  if (m->t_read != NETSIM_TIME_NONE && m->t_sent != NETSIM_TIME_NONE) {
    msg_release(r, m);
  }
}

static void on_readable(void *user, simx_msg *m) {
  run_ctx *r = user;
  sim_flow *f = &r->flows[m->flow];
  netsim_time now = now_of(r);

  if (m->reads++ > 0) {
    /* Delivered twice: counted, and measured only the first time. */
    ++r->res->dup_reads;
    return;
  }
  m->t_read = now;
  if (m->t_arrive == NETSIM_TIME_NONE) {
    m->t_arrive = now;
  }
  lat_add(r, now - m->t_post);
  if (m->t_read > m->t_arrive) {
    double h = (double)(m->t_read - m->t_arrive);
    r->hol_sum += h;
    ++r->hol_n;
    if (h > r->hol_max) {
      r->hol_max = h;
    }
  }
  r->last_read = now;
  ++f->done;
  r->total_bytes += m->bytes;
  check_flow(r, m->flow);
  maybe_release(r, m);
}

static void on_sent(void *user, simx_msg *m, int status) {
  run_ctx *r = user;
  sim_flow *f = &r->flows[m->flow];
  uint32_t fi = m->flow;

  m->t_sent = now_of(r);
  if (f->outstanding > 0) {
    --f->outstanding;
  }
  if (status != 0 && m->t_read == NETSIM_TIME_NONE) {
    m->status = status;
    ++f->failed;
    m->t_read = NETSIM_TIME_NONE;
    check_flow(r, fi);
    if (!r->o->records) {
      msg_release(r, m);
    }
  } else {
    maybe_release(r, m);
  }
  if (!r->failed && f->end == NETSIM_TIME_NONE) {
    fill(r, fi);
  }
}

static void on_progress(void *user, uint32_t flow, uint64_t bytes) {
  run_ctx *r = user;
  sim_flow *f = &r->flows[flow];
  netsim_time now = now_of(r);
  sim_result *res = r->res;

  f->delivered += bytes;
  if (now >= r->s->warmup) {
    f->win_bytes += bytes;
  }
  if (now > f->last_progress && now - f->last_progress > f->max_gap) {
    f->max_gap = now - f->last_progress;
  }
  f->last_progress = now;
  if (res->tput_bins && res->bin_ps) {
    uint64_t b = now / res->bin_ps;
    if (b < res->n_bins) {
      res->tput_bins[b] += (double)bytes;
    }
  }
  if (r->fbins && res->fbin_ps) {
    uint64_t b = now / res->fbin_ps;
    if (b < res->n_fbins) {
      r->fbins[(size_t)flow * res->n_fbins + b] += (double)bytes;
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Timers: flow starts and open-loop posting                                */

/* on_start is the flow-start timer: it starts every flow due now (in
   start order; incast rounds after the first start from flow_done) and
   re-arms itself for the next. */
static void on_start(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  run_ctx *r = ctx;
  netsim_time now = now_of(r);

  (void)arg;
  while (r->next_start < r->n_flows && !r->failed) {
    sim_flow *f = &r->flows[r->order[r->next_start]];
    if (f->start > now || f->round != 0) {
      break;
    }
    start_flow(r, r->order[r->next_start]);
    ++r->next_start;
  }
  if (r->next_start < r->n_flows) {
    sim_flow *f = &r->flows[r->order[r->next_start]];
    if (f->round == 0 && f->start != NETSIM_TIME_NONE) {
      netsim_evl_timer_set(evl, tm, f->start);
    }
  }
}

/* exp_draw draws from an exponential distribution of |mean|. */
static double exp_draw(netsim_rng *rng, double mean) {
  double u =
      ((double)(netsim_rng_next(rng) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  return -log(u) * mean;
}

/* on_stream is the stream timer: it posts the stream's next message and
   re-arms itself after the interval (exponential with poisson). */
static void on_stream(netsim_evl *evl, netsim_timer *tm, void *ctx,
                      uint64_t arg) {
  run_ctx *r = ctx;
  sim_flow *f = &r->flows[r->stream_flow];
  netsim_time gap;

  (void)arg;
  if (r->failed || f->posted >= f->n_msgs) {
    return;
  }
  if (post_one(r, r->stream_flow) != 0) {
    return;
  }
  if (f->posted < f->n_msgs) {
    gap = r->s->poisson ? (netsim_time)exp_draw(&r->rng, (double)r->s->interval)
                        : r->s->interval;
    netsim_evl_timer_set(evl, tm, now_of(r) + (gap ? gap : 1));
  }
}

/* ------------------------------------------------------------------------ */
/* Workloads                                                                */

/* add_flow appends a flow of |bytes| (0: unbounded) from |src| to |dst|
   on connection |conn|, starting at |start| (NETSIM_TIME_NONE: started
   later by its incast round).  Returns it, or NULL when out of memory. */
static sim_flow *add_flow(run_ctx *r, uint32_t src, uint32_t dst,
                          uint64_t bytes, netsim_time start, uint32_t conn) {
  sim_flow *f;

  if (r->n_flows == r->cap_flows) {
    uint32_t ncap = r->cap_flows ? r->cap_flows * 2 : 64;
    sim_flow *n = realloc(r->flows, (size_t)ncap * sizeof(*n));
    if (n == NULL) {
      return NULL;
    }
    r->flows = n;
    r->cap_flows = ncap;
  }
  f = &r->flows[r->n_flows++];
  memset(f, 0, sizeof(*f));
  f->src = src;
  f->dst = dst;
  f->conn = conn;
  f->bytes = bytes;
  f->n_msgs =
      bytes ? (uint32_t)((bytes + r->s->message - 1) / r->s->message) : 0;
  f->start = start;
  f->end = NETSIM_TIME_NONE;
  return f;
}

/* cdf_mean is the mean flow size of the CDF |p| of |n| points (linear
   between points). */
static double cdf_mean(const cdf_pt *p, uint32_t n) {
  double m = p[0].size * p[0].p;
  uint32_t i;

  for (i = 1; i < n; ++i) {
    m += (p[i].p - p[i - 1].p) * (p[i].size + p[i - 1].size) / 2;
  }
  return m;
}

/* cdf_draw draws a flow size (at least 1 byte) from the CDF |p|. */
static uint64_t cdf_draw(const cdf_pt *p, uint32_t n, netsim_rng *rng) {
  double u = (double)(netsim_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
  uint32_t i;
  double sz;

  for (i = 0; i < n && p[i].p < u; ++i) {
  }
  if (i == 0) {
    sz = p[0].size;
  } else if (i >= n) {
    sz = p[n - 1].size;
  } else {
    double span = p[i].p - p[i - 1].p;
    double f = span > 0 ? (u - p[i - 1].p) / span : 1;
    sz = p[i - 1].size + f * (p[i].size - p[i - 1].size);
  }
  return sz < 1 ? 1 : (uint64_t)llround(sz);
}

int run_workload_gen(run_ctx *r) {
  const sim_scn *s = r->s;
  uint32_t n = s->n_hosts, i, j;
  netsim_time t0 = s->start;

  netsim_rng_init(&r->rng, s->seed, NETSIM_STREAM_USER + 1, (uint64_t)s->wl);
  switch (s->wl) {
  case SCN_WL_SINGLE:
    if (!add_flow(r, s->src, s->dst, s->bytes, t0, 0)) {
      return -1;
    }
    break;
  case SCN_WL_STREAM: {
    sim_flow *f = add_flow(r, s->src, s->dst, s->message * s->count, t0, 0);
    if (f == NULL) {
      return -1;
    }
    f->open_loop = 1;
    break;
  }
  case SCN_WL_PAIRS:
    if (s->pairs_leaf) {
      uint32_t half =
          s->topo == SCN_TOPO_DUMBBELL ? s->hosts_per_side : s->hosts_per_leaf;
      for (i = 0; i < half && half + i < n; ++i) {
        if (!add_flow(r, i, half + i, s->bytes, t0, 0)) {
          return -1;
        }
      }
    } else {
      for (i = 0; i < s->n_pairs; ++i) {
        if (!add_flow(r, s->pairs[i][0], s->pairs[i][1], s->bytes, t0, i)) {
          return -1;
        }
      }
    }
    break;
  case SCN_WL_PERMUTATION: {
    /* A random derangement: Sattolo's algorithm makes one cycle. */
    uint32_t *perm = malloc(n * sizeof(*perm));
    if (perm == NULL) {
      return -1;
    }
    for (i = 0; i < n; ++i) {
      perm[i] = i;
    }
    for (i = n - 1; i > 0; --i) {
      uint32_t k = netsim_rng_below(&r->rng, i);
      uint32_t t = perm[i];
      perm[i] = perm[k];
      perm[k] = t;
    }
    for (i = 0; i < n; ++i) {
      if (!add_flow(r, i, perm[i], s->bytes, t0, 0)) {
        free(perm);
        return -1;
      }
    }
    free(perm);
    break;
  }
  case SCN_WL_SHUFFLE:
    for (i = 0; i < s->ranks; ++i) {
      uint32_t src = (uint32_t)((uint64_t)i * n / s->ranks);
      for (j = 1; j < s->ranks; ++j) {
        uint32_t dr = (i + j) % s->ranks;
        uint32_t dst = (uint32_t)((uint64_t)dr * n / s->ranks);
        if (!add_flow(r, src, dst, s->bytes, t0, 0)) {
          return -1;
        }
      }
    }
    break;
  case SCN_WL_INCAST: {
    uint32_t rd;
    r->rounds = s->rounds;
    r->senders = s->senders;
    r->round_left = s->senders;
    for (rd = 0; rd < s->rounds; ++rd) {
      for (i = 0; i < s->senders; ++i) {
        /* Senders spread evenly over the other hosts. */
        uint32_t k = (uint32_t)((uint64_t)i * (n - 1) / s->senders);
        uint32_t src = (s->receiver + 1 + k) % n;
        sim_flow *f = add_flow(r, src, s->receiver, s->bytes,
                               rd == 0 ? t0 : NETSIM_TIME_NONE, src);
        if (f == NULL) {
          return -1;
        }
        f->round = rd;
      }
    }
    break;
  }
  case SCN_WL_RANDOM: {
    cdf_pt *pts;
    uint32_t np;
    double mean, lambda, t = (double)t0;
    if (sim_cdf_load(s->cdf, &pts, &np, r->err, r->errlen) != 0) {
      r->failed = 1;
      return -1;
    }
    mean = cdf_mean(pts, np);
    /* Flows per picosecond, over all hosts, for the load asked. */
    lambda = s->load * (double)n * (double)s->host_rate / (8.0 * mean) / 1e12;
    for (i = 0; i < s->flows; ++i) {
      uint32_t src, dst;
      uint64_t size;
      t += exp_draw(&r->rng, 1.0 / lambda);
      if (t >= (double)s->duration) {
        break;
      }
      src = netsim_rng_below(&r->rng, n);
      dst = netsim_rng_below(&r->rng, n - 1);
      if (dst >= src) {
        ++dst;
      }
      size = cdf_draw(pts, np, &r->rng);
      if (!add_flow(r, src, dst, size, (netsim_time)t, i)) {
        free(pts);
        return -1;
      }
    }
    free(pts);
    break;
  }
  default:
    break;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Arming and ending                                                        */

/* The run being sorted (qsort has no context argument in C11). */
static const run_ctx *sort_ctx;

/* cmp_start_q orders flow indices by start time, then index. */
static int cmp_start_q(const void *a, const void *b) {
  const run_ctx *r = sort_ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  netsim_time tx = r->flows[x].start, ty = r->flows[y].start;

  if (tx != ty) {
    return tx < ty ? -1 : 1;
  }
  return x < y ? -1 : x > y;
}

void run_workload_app(run_ctx *r, simx_app *app) {
  app->user = r;
  app->arrived = on_arrived;
  app->readable = on_readable;
  app->sent = on_sent;
  app->progress = on_progress;
}

/* spread_starts moves each flow that starts with the workload (at
   [workload] start: not a random workload's arrivals, not an open-loop
   stream, not a later incast round) to a random time up to start_spread
   later, from a stream of its own (so that the spread leaves every other
   draw as it was): real hosts never start together to the picosecond,
   and flows that do can stay in lock step (docs/scenarios.md, "Timing
   noise"). */
static void spread_starts(run_ctx *r) {
  const sim_scn *s = r->s;
  netsim_rng rng;
  uint32_t i;

  if (s->start_spread == 0 || s->wl == SCN_WL_RANDOM ||
      s->wl == SCN_WL_STREAM) {
    return;
  }
  netsim_rng_init(&rng, s->seed, NETSIM_STREAM_USER + 2, 0);
  for (i = 0; i < r->n_flows; ++i) {
    sim_flow *f = &r->flows[i];
    if (f->round == 0 && f->start == s->start) {
      f->start += impair_rng_below(&rng, s->start_spread + 1);
    }
  }
}

int run_workload_arm(run_ctx *r) {
  uint32_t i;

  r->order = malloc((r->n_flows + 1) * sizeof(uint32_t));
  if (r->order == NULL) {
    snprintf(r->err, r->errlen, "out of memory");
    return -1;
  }
  spread_starts(r);
  for (i = 0; i < r->n_flows; ++i) {
    r->order[i] = i;
    if (r->flows[i].bytes) {
      ++r->bounded_left;
    }
  }
  sort_ctx = r;
  qsort(r->order, r->n_flows, sizeof(uint32_t), cmp_start_q);
  netsim_timer_init(&r->start_tm, on_start, r, 0);
  netsim_timer_init(&r->stream_tm, on_stream, r, 0);
  r->armed = 1;
  if (r->n_flows > 0) {
    netsim_evl_timer_set(netsim_sim_evl(r->sim), &r->start_tm,
                         r->flows[r->order[0]].start);
  }
  for (i = 0; i < r->n_flows; ++i) {
    if (r->flows[i].bytes == 0) {
      ++r->res->n_flows_unbounded;
    }
  }
  return 0;
}

void run_workload_fini(run_ctx *r) {
  uint32_t i;

  if (r->armed) {
    /* Only initialised timers: a run that failed before (a transport
       that refused its settings) has none to stop. */
    netsim_evl_timer_stop(netsim_sim_evl(r->sim), &r->start_tm);
    netsim_evl_timer_stop(netsim_sim_evl(r->sim), &r->stream_tm);
  }
  free(r->order);
  free(r->flows);
  if (r->blocks) {
    for (i = 0; i < r->n_blocks; ++i) {
      free(r->blocks[i]);
    }
    free(r->blocks);
  }
  free(r->free_msgs);
  free(r->lat);
  r->order = NULL;
  r->flows = NULL;
  r->blocks = NULL;
  r->free_msgs = NULL;
  r->lat = NULL;
}
