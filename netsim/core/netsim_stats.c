/*
 * netsim_stats.c: what the simulator reports beyond the raw counters:
 * the share of bytes per port in a set (how evenly ECMP spread the load
 * over a switch's uplinks), the busiest links, and queue depth sampled
 * over time.
 */
#include <netsim/netsim.h>

#include <stdlib.h>

#include "netsim_evl.h"
#include "netsim_link.h"
#include "netsim_sim.h"

uint64_t netsim_stats_share(netsim_sim *sim, const uint32_t *ids, uint32_t n,
                            double *share) {
  uint64_t total = 0;
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (ids[i] < sim->n_links) {
      total += sim->links[ids[i]]->rx_bytes;
    }
  }
  for (i = 0; i < n; ++i) {
    share[i] = total && ids[i] < sim->n_links
                   ? (double)sim->links[ids[i]]->rx_bytes / (double)total
                   : 0.0;
  }
  return total;
}

typedef struct rank {
  /* v is the value ranked by; id the link. */
  double v;
  uint32_t id;
} rank;

static int rank_cmp(const void *a, const void *b) {
  const rank *x = a, *y = b;

  if (x->v != y->v) {
    return x->v > y->v ? -1 : 1;
  }
  return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t netsim_stats_busiest(netsim_sim *sim, netsim_busy_by by, uint32_t n,
                              uint32_t *ids) {
  const netsim_mem *mem = &sim->mem;
  uint32_t i, m = sim->n_links;
  rank *r;

  if (m == 0 || n == 0) {
    return 0;
  }
  r = mem->malloc(sizeof(*r) * m, mem->user_data);
  if (r == NULL) {
    return 0;
  }
  for (i = 0; i < m; ++i) {
    const netsim_link *l = sim->links[i];
    r[i].id = i;
    switch (by) {
    case NETSIM_BUSY_QUEUE:
      r[i].v = l->byte_ps;
      break;
    case NETSIM_BUSY_MAX_QUEUE:
      r[i].v = (double)l->q.max_bytes;
      break;
    default:
      r[i].v = (double)l->rx_bytes;
      break;
    }
  }
  qsort(r, m, sizeof(*r), rank_cmp);
  if (n > m) {
    n = m;
  }
  for (i = 0; i < n; ++i) {
    ids[i] = r[i].id;
  }
  mem->free(r, mem->user_data);
  return n;
}

struct netsim_sampler {
  /* sim is the simulation sampled. */
  netsim_sim *sim;
  /* tm fires at each sample. */
  netsim_timer tm;
  /* period is the time between samples. */
  netsim_time period;
  /* links are the |n| links sampled. */
  netsim_link **links;
  uint32_t n;
  /* times and bytes: |count| of |max| samples (bytes is count x n). */
  netsim_time *times;
  uint64_t *bytes;
  uint32_t count, max;
};

static void sample(netsim_evl *evl, netsim_timer *tm, void *ctx, uint64_t arg) {
  netsim_sampler *smp = ctx;
  uint32_t j;

  (void)arg;
  smp->times[smp->count] = evl->now;
  for (j = 0; j < smp->n; ++j) {
    netsim_queue *q = &smp->links[j]->q;
    netsim_queue_advance(q, evl->now);
    smp->bytes[(size_t)smp->count * smp->n + j] = q->bytes;
  }
  if (++smp->count < smp->max) {
    netsim_evl_timer_set(evl, tm, evl->now + smp->period);
  }
}

int netsim_sampler_new(netsim_sampler **psmp, netsim_sim *sim,
                       const uint32_t *ids, uint32_t n, netsim_time start,
                       netsim_time period, uint32_t max_samples) {
  const netsim_mem *mem = &sim->mem;
  netsim_sampler *smp;
  uint32_t j;
  int rv;

  if (n == 0 || period == 0 || max_samples == 0) {
    return NETSIM_ERR_INVAL;
  }
  for (j = 0; j < n; ++j) {
    if (ids[j] >= sim->n_links) {
      return NETSIM_ERR_NOENT;
    }
  }
  smp = mem->calloc(1, sizeof(*smp), mem->user_data);
  if (smp == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  smp->sim = sim;
  smp->links = mem->malloc(sizeof(*smp->links) * n, mem->user_data);
  smp->times = mem->malloc(sizeof(*smp->times) * max_samples, mem->user_data);
  smp->bytes = mem->malloc(sizeof(*smp->bytes) * n * (size_t)max_samples,
                           mem->user_data);
  netsim_timer_init(&smp->tm, sample, smp, 0);
  if (smp->links == NULL || smp->times == NULL || smp->bytes == NULL) {
    netsim_sampler_del(smp);
    return NETSIM_ERR_NOMEM;
  }
  for (j = 0; j < n; ++j) {
    smp->links[j] = sim->links[ids[j]];
  }
  smp->n = n;
  smp->period = period;
  smp->max = max_samples;
  rv = netsim_evl_timer_set(sim->evl, &smp->tm,
                            start > sim->evl->now ? start : sim->evl->now);
  if (rv != 0) {
    netsim_sampler_del(smp);
    return rv;
  }
  *psmp = smp;
  return 0;
}

void netsim_sampler_del(netsim_sampler *smp) {
  const netsim_mem *mem;

  if (smp == NULL) {
    return;
  }
  mem = &smp->sim->mem;
  netsim_evl_timer_stop(smp->sim->evl, &smp->tm);
  mem->free(smp->links, mem->user_data);
  mem->free(smp->times, mem->user_data);
  mem->free(smp->bytes, mem->user_data);
  mem->free(smp, mem->user_data);
}

uint32_t netsim_sampler_count(const netsim_sampler *smp) {
  return smp->count;
}

netsim_time netsim_sampler_time(const netsim_sampler *smp, uint32_t i) {
  return i < smp->count ? smp->times[i] : NETSIM_TIME_NONE;
}

uint64_t netsim_sampler_bytes(const netsim_sampler *smp, uint32_t i,
                              uint32_t j) {
  if (i >= smp->count || j >= smp->n) {
    return 0;
  }
  return smp->bytes[(size_t)i * smp->n + j];
}
