/*
 * sim_run.c: one run of a scenario with one transport: build the
 * topology, schedule the faults, generate the workload, attach the
 * transport, run, and measure (docs/scenarios.md, "What is measured").
 *
 * Every transport of a scenario runs in its own simulation built from
 * the same seed: the same topology, ECMP seeds, faults, loss streams and
 * workload, so the only difference between two runs is the transport.
 */
#include "sim_run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct rctx {
  const sim_scn *s;
  const scn_transport *tr;
  const sim_run_opts *o;
  netsim_sim *sim;
  netsim_topo_info info;
  simx *x;
  sim_result *res;
  netsim_rng rng;
  sim_flow *flows;
  uint32_t n_flows, cap_flows;
  /* Flows in start order, and the next to start. */
  uint32_t *order;
  uint32_t next_start;
  netsim_timer start_tm;
  /* Open-loop posting (stream): the flow and its next message time. */
  netsim_timer stream_tm;
  uint32_t stream_flow;
  /* Message records. */
  simx_msg **blocks;
  uint32_t n_blocks, cap_blocks;
  uint64_t n_msgs;
  uint64_t n_posted;
  simx_msg **free_msgs;
  uint32_t n_free, cap_free;
  /* Latency and slowdown samples (ps). */
  uint64_t *lat;
  size_t n_lat, cap_lat;
  /* Incast rounds. */
  uint32_t round, rounds, round_left, senders;
  /* Work left: bounded flows not done. */
  uint32_t bounded_left;
  int done;
  int failed;
  char *err;
  size_t errlen;
  netsim_time first_post, last_read;
  uint64_t total_bytes;
  uint64_t hol_n;
  double hol_sum, hol_max;
} rctx;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
rfail(rctx *r, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(r->err, r->errlen, fmt, ap);
  va_end(ap);
  r->failed = 1;
  netsim_evl_stop(netsim_sim_evl(r->sim));
  return -1;
}

static netsim_time now_of(const rctx *r) {
  return netsim_sim_now(r->sim);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */

static simx_msg *msg_new(rctx *r) {
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

static void msg_release(rctx *r, simx_msg *m) {
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

static void lat_add(rctx *r, uint64_t v) {
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

static int post_one(rctx *r, uint32_t fi) {
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
    return rfail(r, "out of memory (message records)");
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
    return rfail(r, "the %s transport refused a message: %s", r->tr->name,
                 netsim_strerror(rv));
  }
  return 0;
}

/* fill keeps a closed-loop flow's window of messages outstanding. */
static void fill(rctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];

  while (!r->failed && !f->open_loop && f->outstanding < r->s->window &&
         (f->bytes == 0 || f->posted_bytes < f->bytes)) {
    if (post_one(r, fi) != 0) {
      return;
    }
  }
}

static void start_flow(rctx *r, uint32_t fi) {
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

static void flow_done(rctx *r, uint32_t fi) {
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

static void check_flow(rctx *r, uint32_t fi) {
  sim_flow *f = &r->flows[fi];

  if (f->end == NETSIM_TIME_NONE && f->n_msgs > 0 &&
      f->done + f->failed == f->n_msgs) {
    flow_done(r, fi);
  }
}

/* ------------------------------------------------------------------------ */
/* Reports from the transport                                               */

static void on_arrived(void *user, simx_msg *m) {
  rctx *r = user;

  if (m->t_arrive == NETSIM_TIME_NONE) {
    m->t_arrive = now_of(r);
  }
}

static void maybe_release(rctx *r, simx_msg *m) {
  if (m->t_read != NETSIM_TIME_NONE && m->t_sent != NETSIM_TIME_NONE) {
    msg_release(r, m);
  }
}

static void on_readable(void *user, simx_msg *m) {
  rctx *r = user;
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
  rctx *r = user;
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
  rctx *r = user;
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
}

/* dup_headroom is how many packets duplicating links may hold at once in
   the pool (each copy waits there dup_delay), so that the copies do not
   starve the hosts of packets: every host sending at its line rate,
   every packet copied on each link of its path (3, or 5 in a fat tree)
   with the largest probability configured, 2000 bytes a packet on
   average (full data packets and their small acknowledgements); at most
   2^22 (the pools are touched only as far as they are used).  0 without
   duplication, so that no other run changes.  A copy that still finds
   the pool empty is skipped and counted (dup_skipped). */
static uint32_t dup_headroom(const sim_scn *s) {
  double p = s->dup, n;
  uint64_t delay = s->dup_delay;
  uint32_t i;

  if (!sim_scn_has_dup(s)) {
    return 0;
  }
  for (i = 0; i < s->n_faults; ++i) {
    const scn_fault *f = &s->faults[i];
    if (f->op == SCN_FAULT_DUP) {
      p = f->p > p ? f->p : p;
      if (f->delay_set && f->delay_ps > delay) {
        delay = f->delay_ps;
      }
    }
  }
  n = p * ((double)delay / 1e12) * (double)s->n_hosts * (double)s->host_rate *
      (s->topo == SCN_TOPO_FATTREE ? 5 : 3) / (8.0 * 2000);
  return n < (double)(1u << 22) ? (uint32_t)n + 1024 : 1u << 22;
}

/* ------------------------------------------------------------------------ */
/* Timers: flow starts and open-loop posting                                */

static void on_start(netsim_evl *evl, netsim_timer *tm, void *ctx,
                     uint64_t arg) {
  rctx *r = ctx;
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

static double exp_draw(netsim_rng *rng, double mean) {
  double u =
      ((double)(netsim_rng_next(rng) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  return -log(u) * mean;
}

static void on_stream(netsim_evl *evl, netsim_timer *tm, void *ctx,
                      uint64_t arg) {
  rctx *r = ctx;
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

static sim_flow *add_flow(rctx *r, uint32_t src, uint32_t dst, uint64_t bytes,
                          netsim_time start, uint32_t conn) {
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

static double cdf_mean(const cdf_pt *p, uint32_t n) {
  double m = p[0].size * p[0].p;
  uint32_t i;

  for (i = 1; i < n; ++i) {
    m += (p[i].p - p[i - 1].p) * (p[i].size + p[i - 1].size) / 2;
  }
  return m;
}

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

static int gen_workload(rctx *r) {
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
/* Topology                                                                 */

static void linkcfg(const sim_scn *s, netsim_linkcfg *c, uint64_t rate) {
  netsim_linkcfg_default(c);
  c->rate_bps = rate;
  c->delay = s->delay;
  c->queue_bytes = s->queue;
  c->ecn_bytes = s->ecn;
}

static int build_topo(rctx *r) {
  const sim_scn *s = r->s;
  uint64_t fab = s->fabric_rate ? s->fabric_rate : s->host_rate;
  int rv;

  if (s->topo == SCN_TOPO_DUMBBELL) {
    netsim_dumbbell_settings d;
    netsim_dumbbell_settings_default(&d, s->paths);
    d.hosts_per_side = s->hosts_per_side;
    linkcfg(s, &d.host, s->host_rate);
    linkcfg(s, &d.path, fab);
    d.nic_queue_bytes = s->nic_queue;
    d.path_rate_bps = s->n_lanes ? s->lane_rate : NULL;
    rv = netsim_topo_dumbbell(r->sim, &d, &r->info);
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    netsim_leafspine_settings l;
    netsim_leafspine_settings_default(&l, s->spines, s->leaves,
                                      s->hosts_per_leaf);
    linkcfg(s, &l.host, s->host_rate);
    linkcfg(s, &l.fabric, s->fabric_rate);
    l.oversub = s->oversub;
    l.nic_queue_bytes = s->nic_queue;
    l.spine_rate_bps = s->n_lanes ? s->lane_rate : NULL;
    rv = netsim_topo_leafspine(r->sim, &l, &r->info);
  } else {
    netsim_fattree_settings f;
    netsim_fattree_settings_default(&f, s->k);
    linkcfg(s, &f.host, s->host_rate);
    linkcfg(s, &f.edge_agg, fab);
    linkcfg(s, &f.agg_core, fab);
    f.nic_queue_bytes = s->nic_queue;
    rv = netsim_topo_fattree(r->sim, &f, &r->info);
  }
  if (rv != 0) {
    return rfail(r, "building the topology failed: %s", netsim_strerror(rv));
  }
  return 0;
}

static netsim_switch *sw_at(rctx *r, uint32_t idx) {
  return netsim_sim_switch(r->sim, idx);
}

static int port_link(rctx *r, uint32_t sw, uint32_t port, uint32_t *id) {
  netsim_switch *x = sw_at(r, sw);
  netsim_link *l = x ? netsim_switch_port_link(x, port) : NULL;

  if (l == NULL) {
    return -1;
  }
  *id = netsim_link_id(l);
  return 0;
}

/* resolve writes the cable ids a link name stands for. */
static int resolve(rctx *r, const scn_linkref *l, uint32_t *ids, uint32_t cap,
                   uint32_t *n) {
  const sim_scn *s = r->s;
  uint32_t h = s->k / 2, i;

  *n = 0;
  switch (l->kind) {
  case 0:
    ids[(*n)++] = 2 * l->a;
    return 0;
  case 1:
    ids[(*n)++] = r->info.uplink_first + 2 * l->a;
    return 0;
  case 2:
    return port_link(r, l->a, s->hosts_per_leaf + l->b, &ids[(*n)++]);
  case 3:
    for (i = 0; i < s->leaves && *n < cap; ++i) {
      if (port_link(r, s->leaves + l->a, i, &ids[(*n)++]) != 0) {
        return -1;
      }
    }
    return 0;
  case 4:
    return port_link(r, l->a * h + l->b, h + l->d, &ids[(*n)++]);
  case 5:
    return port_link(r, r->info.tier_first[1] + l->a * h + l->b, h + l->c % h,
                     &ids[(*n)++]);
  case 6:
    for (i = 0; i < s->k && *n < cap; ++i) {
      if (port_link(r, r->info.tier_first[2] + l->a, i, &ids[(*n)++]) != 0) {
        return -1;
      }
    }
    return 0;
  case 7: {
    /* The fabric cable flow N's TCP connection hashes onto at its first
       switch (whichever transport runs: the path is a physical one). */
    sim_tcp_cfg tc;
    netsim_flowkey key;
    netsim_link_info li;
    netsim_switch *sw;
    netsim_link *out;
    int port;
    uint32_t k;
    const sim_flow *f;
    if (l->a >= r->n_flows) {
      return -1;
    }
    f = &r->flows[l->a];
    sim_tcp_cfg_default(&tc);
    tc.seed = s->seed;
    for (k = 0; k < s->n_tr; ++k) {
      if (s->tr[k].type == SCN_XPORT_TCP) {
        tc = s->tr[k].tcp;
        break;
      }
    }
    sim_tcp_flowkey(&tc, f->src, f->dst, f->conn, &key);
    netsim_link_get_info(netsim_sim_link(r->sim, 2 * f->src), &li);
    sw = sw_at(r, li.to_node - s->n_hosts);
    port = sw ? netsim_switch_route(sw, &key) : -1;
    out = port >= 0 ? netsim_switch_port_link(sw, (uint32_t)port) : NULL;
    if (out == NULL) {
      return -1;
    }
    ids[(*n)++] = netsim_link_id(out);
    return 0;
  }
  default:
    return -1;
  }
}

static int apply_faults(rctx *r) {
  const sim_scn *s = r->s;
  uint32_t i, j, ids[256], n;
  int rv = 0;

  if (s->loss > 0) {
    rv = netsim_fault_loss_all(r->sim, s->loss,
                               s->loss_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return rfail(r, "loss: %s", netsim_strerror(rv));
    }
  }
  if (s->ber > 0) {
    rv = netsim_fault_ber_all(r->sim, s->ber, s->ber_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return rfail(r, "ber: %s", netsim_strerror(rv));
    }
  }
  if (s->dup > 0) {
    rv = netsim_fault_dup_all(r->sim, s->dup, s->dup_delay,
                              s->dup_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return rfail(r, "dup: %s", netsim_strerror(rv));
    }
  }
  for (i = 0; i < s->n_faults; ++i) {
    const scn_fault *f = &s->faults[i];
    if (resolve(r, &f->link, ids, 256, &n) != 0) {
      return rfail(r,
                   "%s:%d: [faults] link '%s' does not exist in this "
                   "topology",
                   s->file, f->line, f->link.text);
    }
    for (j = 0; j < n && rv == 0; ++j) {
      switch (f->op) {
      case SCN_FAULT_DOWN:
        rv = netsim_fault_link_down(r->sim, ids[j], f->at_ps);
        break;
      case SCN_FAULT_UP:
        rv = netsim_fault_link_up(r->sim, ids[j], f->at_ps);
        break;
      case SCN_FAULT_DEGRADE:
        rv = netsim_fault_degrade(r->sim, ids[j], f->rate_bps, f->at_ps);
        break;
      case SCN_FAULT_BER:
        rv = netsim_fault_ber(r->sim, ids[j], f->p);
        break;
      case SCN_FAULT_DUP:
        rv = netsim_fault_dup(r->sim, ids[j], f->p,
                              f->delay_set ? f->delay_ps : s->dup_delay);
        break;
      default:
        rv = netsim_fault_loss(r->sim, ids[j], f->p);
        break;
      }
    }
    if (rv != 0) {
      return rfail(r, "%s:%d: [faults] %s: %s", s->file, f->line, f->link.text,
                   netsim_strerror(rv));
    }
  }
  return 0;
}

/* node_name names a node as docs/scenarios.md does. */
static void node_name(rctx *r, uint32_t node, char *buf, size_t len) {
  const sim_scn *s = r->s;
  uint32_t h = s->k / 2, sw;

  if (node < s->n_hosts) {
    snprintf(buf, len, "host%u", node);
    return;
  }
  sw = node - s->n_hosts;
  if (s->topo == SCN_TOPO_DUMBBELL) {
    snprintf(buf, len, "%s", sw == 0 ? "left" : "right");
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    if (sw < s->leaves) {
      snprintf(buf, len, "leaf%u", sw);
    } else {
      snprintf(buf, len, "spine%u", sw - s->leaves);
    }
  } else if (sw < r->info.tier_first[1]) {
    snprintf(buf, len, "edge%u.%u", sw / h, sw % h);
  } else if (sw < r->info.tier_first[2]) {
    sw -= r->info.tier_first[1];
    snprintf(buf, len, "agg%u.%u", sw / h, sw % h);
  } else {
    snprintf(buf, len, "core%u", sw - r->info.tier_first[2]);
  }
}

static void link_name(rctx *r, uint32_t id, char *buf, size_t len) {
  netsim_link_info li;
  char a[40], b[40];

  netsim_link_get_info(netsim_sim_link(r->sim, id), &li);
  node_name(r, li.from_node, a, sizeof(a));
  node_name(r, li.to_node, b, sizeof(b));
  if (r->s->topo == SCN_TOPO_DUMBBELL && li.from_node >= r->s->n_hosts &&
      li.to_node >= r->s->n_hosts) {
    /* The parallel paths join the same two switches. */
    snprintf(buf, len, "path%u:%s->%s", li.from_port - r->s->hosts_per_side, a,
             b);
  } else {
    snprintf(buf, len, "%s->%s", a, b);
  }
}

/* ------------------------------------------------------------------------ */
/* Measuring                                                                */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* pct_index is the 0-based index of the nearest-rank percentile |q| (0..1] of
   |n| > 0 sorted values. */
static size_t pct_index(size_t n, double q) {
  size_t i = (size_t)ceil(q * (double)n);

  return i < 1 ? 0 : i - 1;
}

/* pct_* are the nearest-rank percentile |q| of sorted |v|, 0 if empty. */
static double pct_u64(const uint64_t *v, size_t n, double q) {
  return n ? (double)v[pct_index(n, q)] : 0;
}

static double pct_dbl(const double *v, size_t n, double q) {
  return n ? v[pct_index(n, q)] : 0;
}

static uint32_t hops_between(const sim_scn *s, uint32_t a, uint32_t b) {
  uint32_t h = s->k / 2;

  switch (s->topo) {
  case SCN_TOPO_DUMBBELL:
    return (a < s->hosts_per_side) == (b < s->hosts_per_side) ? 2 : 3;
  case SCN_TOPO_LEAFSPINE:
    return a / s->hosts_per_leaf == b / s->hosts_per_leaf ? 2 : 4;
  default:
    if (a / h == b / h) {
      return 2;
    }
    return a / (h * h) == b / (h * h) ? 4 : 6;
  }
}

/* capacity: what the workload's hosts can use (docs/scenarios.md). */
static double capacity(rctx *r) {
  const sim_scn *s = r->s;
  uint8_t *snd = calloc(s->n_hosts, 1), *rcv = calloc(s->n_hosts, 1);
  double out = 0, in = 0, cap;
  uint32_t i, cross = 0;

  if (s->capacity_bps) {
    free(snd);
    free(rcv);
    return (double)s->capacity_bps;
  }
  if (snd == NULL || rcv == NULL) {
    free(snd);
    free(rcv);
    return (double)s->host_rate;
  }
  for (i = 0; i < r->n_flows; ++i) {
    snd[r->flows[i].src] = 1;
    rcv[r->flows[i].dst] = 1;
    cross += hops_between(s, r->flows[i].src, r->flows[i].dst) > 2;
  }
  for (i = 0; i < s->n_hosts; ++i) {
    out += snd[i] ? (double)s->host_rate : 0;
    in += rcv[i] ? (double)s->host_rate : 0;
  }
  cap = out < in ? out : in;
  if (cross > 0 && s->topo != SCN_TOPO_FATTREE) {
    /* The fabric between the sides or leaves. */
    double fab = 0;
    uint32_t n_lanes = s->topo == SCN_TOPO_DUMBBELL ? s->paths : s->spines;
    uint32_t groups = 1;
    uint64_t base = s->fabric_rate;
    if (s->topo == SCN_TOPO_LEAFSPINE) {
      /* Leaves that send across. */
      uint8_t *lv = calloc(s->leaves, 1);
      groups = 0;
      if (lv) {
        for (i = 0; i < r->n_flows; ++i) {
          uint32_t L = r->flows[i].src / s->hosts_per_leaf;
          if (hops_between(s, r->flows[i].src, r->flows[i].dst) > 2 && !lv[L]) {
            lv[L] = 1;
            ++groups;
          }
        }
        free(lv);
      }
      if (base == 0) {
        base = (uint64_t)((double)s->hosts_per_leaf * (double)s->host_rate /
                          ((double)s->spines * s->oversub));
      }
    } else if (base == 0) {
      base = s->host_rate;
    }
    for (i = 0; i < n_lanes; ++i) {
      fab += (double)(s->n_lanes ? s->lane_rate[i] : base);
    }
    fab *= groups;
    if (fab < cap) {
      cap = fab;
    }
  }
  free(snd);
  free(rcv);
  return cap;
}

static void path_share(rctx *r) {
  const sim_scn *s = r->s;
  sim_result *res = r->res;
  double total = 0;
  uint32_t i, j, n = 0;

  memset(res->path_share, 0, sizeof(res->path_share));
  if (s->topo == SCN_TOPO_DUMBBELL) {
    n = s->paths;
    for (i = 0; i < n && i < 256; ++i) {
      netsim_link_stats a, b;
      netsim_link_get_stats(
          netsim_sim_link(r->sim, r->info.uplink_first + 2 * i), &a);
      netsim_link_get_stats(
          netsim_sim_link(r->sim, r->info.uplink_first + 2 * i + 1), &b);
      res->path_share[i] = (double)(a.rx_bytes + b.rx_bytes);
    }
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    n = s->spines;
    for (i = 0; i < n && i < 256; ++i) {
      for (j = 0; j < s->leaves; ++j) {
        uint32_t id;
        netsim_link_stats st;
        if (port_link(r, j, s->hosts_per_leaf + i, &id) == 0) {
          netsim_link_get_stats(netsim_sim_link(r->sim, id), &st);
          res->path_share[i] += (double)st.rx_bytes;
        }
      }
    }
  } else {
    n = r->info.tier_count[2];
    for (i = 0; i < n && i < 256; ++i) {
      for (j = 0; j < s->k; ++j) {
        uint32_t id;
        netsim_link_info li;
        netsim_link_stats st;
        if (port_link(r, r->info.tier_first[2] + i, j, &id) == 0) {
          netsim_link_get_info(netsim_sim_link(r->sim, id), &li);
          netsim_link_get_stats(netsim_sim_link(r->sim, li.peer), &st);
          res->path_share[i] += (double)st.rx_bytes;
        }
      }
    }
  }
  if (n > 256) {
    n = 256;
  }
  for (i = 0; i < n; ++i) {
    total += res->path_share[i];
  }
  for (i = 0; i < n; ++i) {
    res->path_share[i] = total > 0 ? res->path_share[i] / total : 0;
  }
  res->n_paths = n;
}

static void measure(rctx *r, netsim_sampler *smp, const uint32_t *ids,
                    uint32_t n_ids) {
  const sim_scn *s = r->s;
  sim_result *res = r->res;
  netsim_sim_stats st;
  netsim_time end = netsim_sim_now(r->sim);
  uint32_t i, nf = 0;
  double *fct = NULL, *slow = NULL, sum = 0, sum2 = 0, cap;
  uint32_t nj = 0;

  res->end = end;
  res->n_flows = r->n_flows;
  res->n_msgs = r->n_posted;
  res->n_msgs_done = r->n_lat;
  /* Message latency. */
  if (r->n_lat > 0) { /* qsort of NULL, even of nothing, is undefined */
    qsort(r->lat, r->n_lat, sizeof(*r->lat), cmp_u64);
  }
  res->lat_us[0] = pct_u64(r->lat, r->n_lat, 0.5) / 1e6;
  res->lat_us[1] = pct_u64(r->lat, r->n_lat, 0.99) / 1e6;
  res->lat_us[2] = pct_u64(r->lat, r->n_lat, 0.999) / 1e6;
  res->lat_us[3] = r->n_lat ? (double)r->lat[r->n_lat - 1] / 1e6 : 0;
  /* Flows. */
  fct = malloc((r->n_flows + 1) * sizeof(double));
  slow = malloc((r->n_flows + 1) * sizeof(double));
  for (i = 0; i < r->n_flows; ++i) {
    sim_flow *f = &r->flows[i];
    double x = 0;
    if (f->bytes == 0) {
      ++res->n_flows_unbounded;
      if (end > s->warmup) {
        x = (double)f->win_bytes * 8.0 / ((double)(end - s->warmup) / 1e12);
      }
      if (f->started && end > f->last_progress &&
          end - f->last_progress > f->max_gap) {
        f->max_gap = end - f->last_progress;
      }
    } else if (f->end != NETSIM_TIME_NONE) {
      double t = (double)(f->end - f->start);
      double ideal = 2.0 * hops_between(s, f->src, f->dst) * (double)s->delay +
                     (double)f->bytes * 8.0 / (double)s->host_rate * 1e12;
      ++res->n_flows_done;
      if (fct && slow) {
        fct[nf] = t / 1e6;
        slow[nf] = t / ideal;
        ++nf;
      }
      x = t > 0 ? (double)f->bytes * 8.0 / (t / 1e12) : 0;
    } else if (f->started) {
      if (end > f->last_progress && end - f->last_progress > f->max_gap) {
        f->max_gap = end - f->last_progress;
      }
    }
    if (f->started && (double)f->max_gap / 1e6 > res->max_stall_us) {
      res->max_stall_us = (double)f->max_gap / 1e6;
    }
    if (f->started && (f->bytes == 0 || f->end != NETSIM_TIME_NONE)) {
      sum += x;
      sum2 += x * x;
      ++nj;
    }
  }
  if (fct && slow && nf > 0) {
    qsort(fct, nf, sizeof(double), cmp_dbl);
    qsort(slow, nf, sizeof(double), cmp_dbl);
    res->fct_us[0] = pct_dbl(fct, nf, 0.5);
    res->fct_us[1] = pct_dbl(fct, nf, 0.99);
    res->fct_us[2] = pct_dbl(fct, nf, 0.999);
    res->fct_us[3] = fct[nf - 1];
    res->slowdown[0] = pct_dbl(slow, nf, 0.5);
    res->slowdown[1] = pct_dbl(slow, nf, 0.99);
    res->slowdown[2] = pct_dbl(slow, nf, 0.999);
    res->slowdown[3] = slow[nf - 1];
  }
  free(fct);
  free(slow);
  res->jain = (nj > 0 && sum2 > 0) ? sum * sum / ((double)nj * sum2) : 0;
  /* Throughput: over the measuring window for unbounded flows, else from
     the first post to the last delivery. */
  if (res->n_flows_unbounded > 0) {
    uint64_t b = 0;
    for (i = 0; i < r->n_flows; ++i) {
      b += r->flows[i].win_bytes;
    }
    res->tput_gbps = end > s->warmup
                         ? (double)b * 8.0 / ((double)(end - s->warmup) / 1e3)
                         : 0;
  } else {
    uint64_t b = 0;
    netsim_time t1 = r->done ? r->last_read : end;
    for (i = 0; i < r->n_flows; ++i) {
      b += r->flows[i].delivered;
    }
    if (r->first_post != NETSIM_TIME_NONE && t1 > r->first_post) {
      res->tput_gbps = (double)b * 8.0 / ((double)(t1 - r->first_post) / 1e3);
    }
  }
  cap = capacity(r);
  res->capacity_gbps = cap / 1e9;
  res->tput_fraction = cap > 0 ? res->tput_gbps / res->capacity_gbps : 0;
  /* Head-of-line blocking. */
  res->hol_total_us = r->hol_sum / 1e6;
  res->hol_max_us = r->hol_max / 1e6;
  res->hol_msgs = r->hol_n;
  /* The network. */
  netsim_sim_get_stats(r->sim, &st);
  for (i = 0; i < NETSIM_DROP_REASONS; ++i) {
    res->drops_by[i] = st.drops[i];
    res->drops += st.drops[i];
  }
  res->ecn_marks = st.ecn_marked;
  res->dup_on = sim_scn_has_dup(s);
  res->duplicated = st.duplicated;
  res->dup_skipped = st.dup_skipped;
  res->ber_on = sim_scn_has_ber(s);
  res->corrupted = st.corrupted;
  for (i = 0; res->ber_on && i < netsim_sim_n_links(r->sim); ++i) {
    netsim_link_stats ls;
    netsim_link_get_stats(netsim_sim_link(r->sim, i), &ls);
    res->bit_errors += ls.bit_errors;
  }
  res->events = st.events;
  res->hops = st.hops;
  res->trace_hash = netsim_sim_trace_hash(r->sim);
  simx_counters_get(r->x, &res->cnt);
  path_share(r);
  /* Throughput bins to Gb/s. */
  if (res->tput_bins) {
    uint32_t used = (uint32_t)((end + res->bin_ps - 1) / res->bin_ps);
    if (used < res->n_bins) {
      res->n_bins = used;
    }
    for (i = 0; i < res->n_bins; ++i) {
      res->tput_bins[i] = res->tput_bins[i] * 8.0 / ((double)res->bin_ps / 1e3);
    }
  }
  /* The busiest queues. */
  if (smp && n_ids > 0) {
    uint32_t best[SIM_MAX_QSERIES], nb = 0, k;
    uint64_t bmax[SIM_MAX_QSERIES];
    for (i = 0; i < n_ids; ++i) {
      netsim_link_stats ls;
      netsim_link_get_stats(netsim_sim_link(r->sim, ids[i]), &ls);
      if (ls.max_q_bytes > res->max_queue_bytes) {
        res->max_queue_bytes = ls.max_q_bytes;
      }
      if (ls.max_q_bytes == 0) {
        continue;
      }
      for (k = nb; k > 0 && bmax[k - 1] < ls.max_q_bytes; --k) {
        if (k < SIM_MAX_QSERIES) {
          best[k] = best[k - 1];
          bmax[k] = bmax[k - 1];
        }
      }
      if (k < SIM_MAX_QSERIES) {
        best[k] = i;
        bmax[k] = ls.max_q_bytes;
        if (nb < SIM_MAX_QSERIES) {
          ++nb;
        }
      }
    }
    res->n_q = nb;
    res->n_samples = netsim_sampler_count(smp);
    res->q_time = malloc((res->n_samples + 1) * sizeof(netsim_time));
    res->q_bytes = malloc(((size_t)res->n_samples * nb + 1) * sizeof(uint64_t));
    for (k = 0; k < nb; ++k) {
      netsim_link_stats ls;
      double acc = 0;
      sim_qseries *q = &res->q[k];
      q->link = ids[best[k]];
      link_name(r, q->link, q->name, sizeof(q->name));
      netsim_link_get_stats(netsim_sim_link(r->sim, q->link), &ls);
      q->max_bytes = ls.max_q_bytes;
      q->mean_bytes = end > 0 ? ls.q_byte_ps / (double)end : 0;
      for (i = 0; i < res->n_samples && res->q_bytes; ++i) {
        uint64_t v = netsim_sampler_bytes(smp, i, best[k]);
        res->q_bytes[(size_t)i * nb + k] = v;
        acc += (double)v;
      }
      (void)acc;
    }
    for (i = 0; i < res->n_samples && res->q_time; ++i) {
      res->q_time[i] = netsim_sampler_time(smp, i);
    }
  }
  if (r->o->records) {
    res->flows = r->flows;
    r->flows = NULL;
    res->msgs = r->blocks;
    r->blocks = NULL;
    res->n_msg_recs = r->n_msgs;
  }
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The run being sorted (qsort has no context argument in C11). */
static const rctx *sort_ctx;

static int cmp_start_q(const void *a, const void *b) {
  const rctx *r = sort_ctx;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  netsim_time tx = r->flows[x].start, ty = r->flows[y].start;

  if (tx != ty) {
    return tx < ty ? -1 : 1;
  }
  return x < y ? -1 : x > y;
}

/* size_transport fits the SRD endpoint's pools to the workload. */
static void size_srd(rctx *r, sim_srd_cfg *c) {
  const sim_scn *s = r->s;
  uint32_t *peers = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t *in = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t *out = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t i, maxp = 1, maxin = 1, maxout = 1;
  uint64_t *seen = NULL;
  uint32_t n_seen = 0;

  if (peers && in && out) {
    /* Distinct peers per host: sort the (host, other) pairs. */
    seen = malloc((size_t)r->n_flows * 2 * sizeof(uint64_t) + 8);
    if (seen) {
      for (i = 0; i < r->n_flows; ++i) {
        seen[n_seen++] = (uint64_t)r->flows[i].src << 32 | r->flows[i].dst;
        seen[n_seen++] = (uint64_t)r->flows[i].dst << 32 | r->flows[i].src;
      }
      qsort(seen, n_seen, sizeof(uint64_t), cmp_u64);
      for (i = 0; i < n_seen; ++i) {
        if (i == 0 || seen[i] != seen[i - 1]) {
          ++peers[seen[i] >> 32];
        }
      }
      free(seen);
    }
    for (i = 0; i < r->n_flows; ++i) {
      uint32_t w = r->flows[i].open_loop ? 64 : s->window;
      if (r->flows[i].n_msgs && r->flows[i].n_msgs < w) {
        w = r->flows[i].n_msgs;
      }
      if (r->flows[i].round == 0) {
        in[r->flows[i].dst] += w;
        out[r->flows[i].src] += w;
      }
    }
    for (i = 0; i < s->n_hosts; ++i) {
      maxp = peers[i] > maxp ? peers[i] : maxp;
      maxin = in[i] > maxin ? in[i] : maxin;
      maxout = out[i] > maxout ? out[i] : maxout;
    }
  }
  free(peers);
  free(in);
  free(out);
  if (c->ep.max_peers == 0) {
    c->ep.max_peers = maxp + 1;
  }
  if (c->recv_depth == 0) {
    c->recv_depth = 2 * maxin + 8 < 4096 ? 2 * maxin + 8 : 4096;
    c->recv_depth = c->recv_depth < 16 ? 16 : c->recv_depth;
  }
  if (c->ep.max_sends == 0) {
    c->ep.max_sends = maxout + 8 < 16 ? 16 : maxout + 8;
  }
  c->ep.max_msg_size = (uint32_t)s->message;
  if (c->ep.msg_window == 0) {
    uint32_t w = 16;
    while (w < 2 * s->window) {
      w <<= 1;
    }
    c->ep.msg_window = w;
  }
  if (c->ep.pkt_window == 0) {
    /* Enough packets for the bandwidth-delay product of the longest
       path, with room to spare: a smaller ring is less memory per peer. */
    uint32_t hops = s->topo == SCN_TOPO_FATTREE     ? 6
                    : s->topo == SCN_TOPO_LEAFSPINE ? 4
                                                    : 3;
    double ser = (double)(c->ep.mtu + 100) * 8.0 / (double)s->host_rate;
    double rtt = 2.0 * hops * ((double)s->delay / 1e12 + ser) +
                 (double)c->ep.ack_delay / 1e9;
    double pkts = (double)s->host_rate * rtt / 8.0 / c->ep.mtu + 16;
    uint32_t w = 32;
    while (w < pkts && w < 4096) {
      w <<= 1;
    }
    c->ep.pkt_window = w;
  }
  if (c->peer.ordered) {
    /* Ordered delivery parks early messages in the unexpected pool. */
    if (c->ep.unexp_msgs == 0) {
      c->ep.unexp_msgs = 256;
    }
    if (c->ep.unexp_bytes == 0) {
      uint64_t b = 64 * s->message;
      b = b < (4u << 20) ? (4u << 20) : b;
      b = b > (256u << 20) ? (256u << 20) : b;
      c->ep.unexp_bytes = (uint32_t)b;
    }
  }
  if (c->ep.unexp_msgs > 0 && c->ep.unexp_bytes < c->ep.mtu) {
    c->ep.unexp_bytes = c->ep.mtu;
  }
}

static void progress_bar(const rctx *r, netsim_time t, netsim_time until,
                         int final) {
  int w = 30, i, fill;
  double f = until ? (double)t / (double)until : 1;
  char a[24], b[24];

  if (final) {
    fprintf(stderr, "\r%*s\r", 79, "");
    return;
  }
  fill = (int)(f * w);
  sim_fmt_time(t, a, sizeof(a));
  sim_fmt_time(until, b, sizeof(b));
  fprintf(stderr, "\r  %-12.12s [", r->tr->name);
  for (i = 0; i < w; ++i) {
    fputc(i < fill ? '#' : '.', stderr);
  }
  fprintf(stderr, "] %3.0f%%  %s of %s ", f * 100, a, b);
  fflush(stderr);
}

int sim_run(const sim_scn *s, uint32_t tri, const sim_run_opts *o,
            sim_result *res, char *err, size_t errlen) {
  rctx r;
  netsim_settings set;
  netsim_sampler *smp = NULL;
  uint32_t *qids = NULL, n_q = 0, i;
  simx_app app;
  int rv = 0;
  double w0;
  netsim_time t, slice;

  memset(&r, 0, sizeof(r));
  memset(res, 0, sizeof(*res));
  r.s = s;
  r.tr = &s->tr[tri];
  r.o = o;
  r.res = res;
  r.err = err;
  r.errlen = errlen;
  r.first_post = NETSIM_TIME_NONE;
  snprintf(res->transport, sizeof(res->transport), "%s", r.tr->name);
  snprintf(res->kind, sizeof(res->kind), "%s",
           r.tr->type == SCN_XPORT_SRD ? "srd" : "tcp");
  err[0] = '\0';

  netsim_settings_default(&set);
  set.seed = s->seed;
  set.max_pkts = s->n_hosts * s->pkts_per_host + 4096 + dup_headroom(s);
  /* Payloads are transport headers: SRD data headers travel inline in the
     packet; ACKs (up to about 180 bytes with their echoes) and TCP's
     96-byte header use a pool buffer, which is touched only when used. */
  set.payload_max = 192;
  set.max_payloads = set.max_pkts;
  set.max_events = 4096 + 4 * SCN_MAX_FAULTS * 64;
  set.reconverge = s->reconverge;
  rv = netsim_sim_new(&r.sim, &set, NULL);
  if (rv != 0) {
    snprintf(err, errlen, "creating the simulation failed: %s",
             netsim_strerror(rv));
    return -1;
  }
  if (build_topo(&r) != 0 || gen_workload(&r) != 0 || apply_faults(&r) != 0) {
    if (err[0] == '\0') {
      snprintf(err, errlen, "out of memory");
    }
    rv = -1;
    goto out;
  }
  app.user = &r;
  app.arrived = on_arrived;
  app.readable = on_readable;
  app.sent = on_sent;
  app.progress = on_progress;
  if (r.tr->type == SCN_XPORT_SRD) {
    sim_srd_cfg c = r.tr->srd;
    size_srd(&r, &c);
    rv = sim_srd_new(&r.x, r.sim, &c, &app, err, errlen);
  } else {
    rv = sim_tcp_new(&r.x, r.sim, &r.tr->tcp, &app, err, errlen);
  }
  if (rv != 0) {
    char why[256];
    snprintf(why, sizeof(why), "%s", err[0] ? err : netsim_strerror(rv));
    snprintf(err, errlen, "[transport.%s]: %s", r.tr->name, why);
    rv = -1;
    goto out;
  }
  /* Series. */
  res->bin_ps = s->sample ? s->sample : s->duration / 200;
  if (res->bin_ps == 0) {
    res->bin_ps = 1;
  }
  res->n_bins = (uint32_t)((s->duration + res->bin_ps - 1) / res->bin_ps);
  if (res->n_bins > 1000000) {
    res->n_bins = 1000000;
    res->bin_ps = (s->duration + res->n_bins - 1) / res->n_bins;
  }
  res->tput_bins = calloc(res->n_bins + 1, sizeof(double));
  if (o->sample_queues) {
    uint32_t nsw = netsim_sim_n_switches(r.sim), cap = 0;
    uint64_t samples = s->duration / res->bin_ps + 2;
    for (i = 0; i < nsw; ++i) {
      cap += netsim_switch_n_ports(netsim_sim_switch(r.sim, i));
    }
    qids = malloc((cap + 1) * sizeof(uint32_t));
    for (i = 0; qids && i < nsw; ++i) {
      netsim_switch *sw = netsim_sim_switch(r.sim, i);
      uint32_t p;
      for (p = 0; p < netsim_switch_n_ports(sw); ++p) {
        netsim_link *l = netsim_switch_port_link(sw, p);
        if (l) {
          qids[n_q++] = netsim_link_id(l);
        }
      }
    }
    if (samples * n_q > (1u << 23)) {
      samples = (1u << 23) / (n_q ? n_q : 1);
    }
    if (qids && n_q > 0 &&
        netsim_sampler_new(&smp, r.sim, qids, n_q, 0,
                           s->duration / (samples > 2 ? samples - 2 : 1) + 1,
                           (uint32_t)samples) != 0) {
      smp = NULL;
    }
  }
  /* Flow starts. */
  r.order = malloc((r.n_flows + 1) * sizeof(uint32_t));
  if (r.order == NULL) {
    snprintf(err, errlen, "out of memory");
    rv = -1;
    goto out;
  }
  for (i = 0; i < r.n_flows; ++i) {
    r.order[i] = i;
    if (r.flows[i].bytes) {
      ++r.bounded_left;
    }
  }
  sort_ctx = &r;
  qsort(r.order, r.n_flows, sizeof(uint32_t), cmp_start_q);
  netsim_timer_init(&r.start_tm, on_start, &r, 0);
  netsim_timer_init(&r.stream_tm, on_stream, &r, 0);
  if (r.n_flows > 0) {
    netsim_evl_timer_set(netsim_sim_evl(r.sim), &r.start_tm,
                         r.flows[r.order[0]].start);
  }
  for (i = 0; i < r.n_flows; ++i) {
    if (r.flows[i].bytes == 0) {
      ++res->n_flows_unbounded;
    }
  }
  /* Run in slices (for the progress bar) until the duration or until all
     the work is done. */
  slice = s->duration / 100 ? s->duration / 100 : 1;
  w0 = wall_now();
  for (t = 0; t < s->duration && !r.done && !r.failed;) {
    netsim_time until = t + slice < s->duration ? t + slice : s->duration;
    netsim_sim_run_until(r.sim, until);
    t = netsim_sim_now(r.sim);
    if (t < until && !r.done && !r.failed) {
      t = until; /* stopped by nothing: move on */
    }
    if (o->progress) {
      progress_bar(&r, t, s->duration, 0);
    }
  }
  res->wall_s = wall_now() - w0;
  if (o->progress) {
    progress_bar(&r, t, s->duration, 1);
  }
  if (r.failed) {
    rv = -1;
    goto out;
  }
  res->stopped_early = r.done;
  res->n_flows_unbounded = 0;
  measure(&r, smp, qids, n_q);
out:
  netsim_sampler_del(smp);
  if (r.sim) {
    netsim_evl_timer_stop(netsim_sim_evl(r.sim), &r.start_tm);
    netsim_evl_timer_stop(netsim_sim_evl(r.sim), &r.stream_tm);
  }
  simx_del(r.x);
  netsim_sim_del(r.sim);
  free(qids);
  free(r.order);
  free(r.flows);
  if (r.blocks) {
    for (i = 0; i < r.n_blocks; ++i) {
      free(r.blocks[i]);
    }
    free(r.blocks);
  }
  free(r.free_msgs);
  free(r.lat);
  return rv;
}

void sim_result_fini(sim_result *res) {
  uint64_t i, nb;

  free(res->tput_bins);
  free(res->q_time);
  free(res->q_bytes);
  free(res->flows);
  if (res->msgs) {
    nb = (res->n_msg_recs + SIM_MSG_BLOCK - 1) / SIM_MSG_BLOCK;
    for (i = 0; i < nb; ++i) {
      free(res->msgs[i]);
    }
    free(res->msgs);
  }
  memset(res, 0, sizeof(*res));
}

int sim_bench(uint32_t k, double ms, uint64_t seed, sim_result *res, char *err,
              size_t errlen) {
  scn_raw raw;
  sim_scn s;
  sim_run_opts o;
  char buf[128];
  int rv;

  sim_scn_raw_init(&raw);
  snprintf(raw.file, sizeof(raw.file), "bench");
  snprintf(raw.dir, sizeof(raw.dir), ".");
  /* htsim's benchmark: a k-ary fat tree at 100 Gb/s, permutation traffic
     keeping the network full (issue 3, "Speed"). */
  rv = sim_scn_set(&raw, "scenario.transports=srd", "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "scenario.seed=%llu", (unsigned long long)seed);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "scenario.duration=%gms", ms);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "scenario.warmup=0", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "scenario.pkts_per_host=96", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.type=fattree", "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "topology.k=%u", k);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.rate=100G", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.delay=1us", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.queue=200K", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.type=permutation", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.message=64K", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.window=8", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "transport.srd.mtu=8192", "bench", 0, err, errlen);
  if (rv != 0 || sim_scn_compile(&raw, &s, err, errlen) != 0) {
    sim_scn_raw_fini(&raw);
    return -1;
  }
  s.warmup = 0;
  memset(&o, 0, sizeof(o));
  rv = sim_run(&s, 0, &o, res, err, errlen);
  sim_scn_fini(&s);
  sim_scn_raw_fini(&raw);
  return rv;
}
