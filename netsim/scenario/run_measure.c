/*
 * run_measure.c: what a run measures: the series sampled while it runs
 * (throughput bins, the switch ports' queues) and, at its end, the
 * result: completion times and slowdowns with nearest-rank percentiles
 * (tools/lib/tool_hist.h, the definition every tool reports),
 * message latencies, throughput against what the workload's hosts can
 * use, Jain's fairness, head-of-line blocking, drops, ECN marks, bit
 * errors and duplicates, the transport's counters, path shares and the
 * busiest queues (docs/scenarios.md, "What is measured").
 */
#include "run_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool_hist.h"

/* ------------------------------------------------------------------------ */
/* Series                                                                   */

void run_measure_init(run_ctx *r) {
  const sim_scn *s = r->s;
  sim_result *res = r->res;
  uint32_t i;

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
  if (r->o->records && r->n_flows > 0) {
    /* Per-flow bins: a whole number of throughput bins each, so that the
       two series line up, and SIM_FBIN_CELLS at most in all. */
    uint64_t per_flow = SIM_FBIN_CELLS / r->n_flows, f;
    if (per_flow > 0) {
      f = (res->n_bins + per_flow - 1) / per_flow;
      res->fbin_ps = res->bin_ps * (f ? f : 1);
      res->n_fbins = (uint32_t)((res->n_bins + f - 1) / (f ? f : 1));
      r->fbins = calloc((size_t)r->n_flows * res->n_fbins, sizeof(double));
    }
    if (r->fbins == NULL) {
      res->fbin_ps = 0;
      res->n_fbins = 0;
    }
  }
  if (r->o->sample_queues) {
    uint32_t nsw = netsim_sim_n_switches(r->sim), cap = 0;
    uint64_t samples = s->duration / res->bin_ps + 2;
    for (i = 0; i < nsw; ++i) {
      cap += netsim_switch_n_ports(netsim_sim_switch(r->sim, i));
    }
    r->qids = malloc((cap + 1) * sizeof(uint32_t));
    for (i = 0; r->qids && i < nsw; ++i) {
      netsim_switch *sw = netsim_sim_switch(r->sim, i);
      uint32_t p;
      for (p = 0; p < netsim_switch_n_ports(sw); ++p) {
        netsim_link *l = netsim_switch_port_link(sw, p);
        if (l) {
          r->qids[r->n_q++] = netsim_link_id(l);
        }
      }
    }
    if (samples * r->n_q > (1u << 23)) {
      samples = (1u << 23) / (r->n_q ? r->n_q : 1);
    }
    if (r->qids && r->n_q > 0 &&
        netsim_sampler_new(&r->smp, r->sim, r->qids, r->n_q, 0,
                           s->duration / (samples > 2 ? samples - 2 : 1) + 1,
                           (uint32_t)samples) != 0) {
      r->smp = NULL;
    }
  }
}

void run_measure_fini(run_ctx *r) {
  netsim_sampler_del(r->smp);
  free(r->qids);
  free(r->fbins);
  r->fbins = NULL;
  r->smp = NULL;
  r->qids = NULL;
  r->n_q = 0;
}

/* ------------------------------------------------------------------------ */
/* Measuring                                                                */

/* hops_between is how many links a packet from host |a| to host |b|
   crosses in |s|'s topology. */
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
static double capacity(run_ctx *r) {
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

/* path_share fills res->path_share with each fabric path's share of the
   bytes the fabric carried: the dumbbell's paths, the leaf-spine's
   spines, the fat tree's cores. */
static void path_share(run_ctx *r) {
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
        if (run_port_link(r, j, s->hosts_per_leaf + i, &id) == 0) {
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
        if (run_port_link(r, r->info.tier_first[2] + i, j, &id) == 0) {
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

/* fkey is a flow as the per-flow series rank it: started before not
   started, then fewer delivered bytes first, then the lower index
   (flow_cmp). */
typedef struct fkey {
  uint64_t delivered;
  uint32_t idx;
  int started;
} fkey;

static int flow_cmp(const void *a, const void *b) {
  const fkey *x = a, *y = b;

  if (x->started != y->started) {
    return x->started ? -1 : 1;
  }
  if (x->delivered != y->delivered) {
    return x->delivered < y->delivered ? -1 : 1;
  }
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int u32_cmp(const void *a, const void *b) {
  uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
  return i < j ? -1 : i > j;
}

/* flow_series keeps in res the per-flow series of the flows that
   SIM_FSERIES_ALL says (fseries_flow, fbins in Gb/s) and frees the
   rest.  Out of memory, it keeps none. */
static void flow_series(run_ctx *r, netsim_time end) {
  sim_result *res = r->res;
  uint32_t n = r->n_flows, keep, i, k, used, stride = res->n_fbins;
  fkey *key;

  if (r->fbins == NULL || stride == 0) {
    return;
  }
  key = malloc(n * sizeof(*key));
  keep = n <= SIM_FSERIES_ALL ? n : SIM_FSERIES_LEAST + SIM_FSERIES_MOST;
  res->fseries_flow = malloc(keep * sizeof(uint32_t));
  res->fbins = malloc((size_t)keep * stride * sizeof(double));
  if (key == NULL || res->fseries_flow == NULL || res->fbins == NULL) {
    free(key);
    free(res->fseries_flow);
    free(res->fbins);
    res->fseries_flow = NULL;
    res->fbins = NULL;
    res->n_fbins = 0;
    return;
  }
  for (i = 0; i < n; ++i) {
    key[i].delivered = r->flows[i].delivered;
    key[i].idx = i;
    key[i].started = r->flows[i].started != 0;
  }
  if (n > SIM_FSERIES_ALL) {
    /* The fewest bytes at the front, the most at the back: keep both
       ends. */
    qsort(key, n, sizeof(*key), flow_cmp);
    for (k = 0; k < SIM_FSERIES_MOST; ++k) {
      key[SIM_FSERIES_LEAST + k] = key[n - SIM_FSERIES_MOST + k];
    }
  }
  for (k = 0; k < keep; ++k) {
    res->fseries_flow[k] = key[k].idx;
  }
  free(key);
  qsort(res->fseries_flow, keep, sizeof(uint32_t), u32_cmp);
  used = (uint32_t)((end + res->fbin_ps - 1) / res->fbin_ps);
  if (used < res->n_fbins) {
    res->n_fbins = used;
  }
  for (k = 0; k < keep; ++k) {
    const double *from = &r->fbins[(size_t)res->fseries_flow[k] * stride];
    for (i = 0; i < res->n_fbins; ++i) {
      res->fbins[(size_t)k * res->n_fbins + i] =
          from[i] * 8.0 / ((double)res->fbin_ps / 1e3);
    }
  }
  res->n_fseries = keep;
  free(r->fbins);
  r->fbins = NULL;
}

/* pcts sorts the |n| (> 0) values of |v| and writes their p50, p99,
   p99.9 (tool_pct_double's nearest rank) and largest to |out|. */
static void pcts(double *v, uint32_t n, double out[4]) {
  tool_sort_double(v, n);
  out[0] = tool_pct_double(v, n, 0.5);
  out[1] = tool_pct_double(v, n, 0.99);
  out[2] = tool_pct_double(v, n, 0.999);
  out[3] = v[n - 1];
}

/* link_stats fills res->links with every link's load, drops and queue
   (left NULL, and links.csv empty, if memory runs out). */
static void link_stats(run_ctx *r) {
  sim_result *res = r->res;
  netsim_time end = netsim_sim_now(r->sim);
  uint32_t i, n = netsim_sim_n_links(r->sim);

  res->n_links = 0;
  res->links = n ? calloc(n, sizeof(*res->links)) : NULL;
  if (res->links == NULL) {
    return;
  }
  for (i = 0; i < n; ++i) {
    sim_linkstat *l = &res->links[i];
    netsim_link *link = netsim_sim_link(r->sim, i);
    netsim_link_info li;
    netsim_link_stats st;
    netsim_link_get_info(link, &li);
    netsim_link_get_stats(link, &st);
    run_link_name(r, i, l->name, sizeof(l->name));
    l->bytes = st.rx_bytes;
    l->load = end > 0 && li.base_rate_bps > 0
                  ? (double)st.rx_bytes * 8.0 /
                        ((double)li.base_rate_bps * ((double)end / 1e12))
                  : 0;
    l->queue_drops = st.drops[NETSIM_DROP_QUEUE];
    l->max_q_bytes = st.max_q_bytes;
    l->mean_q_bytes = end > 0 ? st.q_byte_ps / (double)end : 0;
  }
  res->n_links = n;
}

void run_measure(run_ctx *r) {
  netsim_sampler *smp = r->smp;
  const uint32_t *ids = r->qids;
  uint32_t n_ids = r->n_q;
  const sim_scn *s = r->s;
  sim_result *res = r->res;
  netsim_sim_stats st;
  netsim_time end = netsim_sim_now(r->sim);
  uint32_t i, nf = 0;
  double *fct = NULL, *slow = NULL, *rpc = NULL, *rslow = NULL, sum = 0,
         sum2 = 0, cap;
  uint32_t nj = 0, nr = 0;

  res->end = end;
  res->n_flows = r->n_flows;
  res->n_msgs = r->n_posted;
  res->n_msgs_done = r->n_lat;
  /* Message latency. */
  if (r->n_lat > 0) { /* qsort (of NULL, even of nothing) is undefined */
    tool_sort_u64(r->lat, r->n_lat);
  }
  res->lat_us[0] = (double)tool_pct_u64(r->lat, r->n_lat, 0.5) / 1e6;
  res->lat_us[1] = (double)tool_pct_u64(r->lat, r->n_lat, 0.99) / 1e6;
  res->lat_us[2] = (double)tool_pct_u64(r->lat, r->n_lat, 0.999) / 1e6;
  res->lat_us[3] = r->n_lat ? (double)r->lat[r->n_lat - 1] / 1e6 : 0;
  /* Flows. */
  fct = malloc((r->n_flows + 1) * sizeof(double));
  slow = malloc((r->n_flows + 1) * sizeof(double));
  res->rpc_on = s->rpc_max > 0;
  if (res->rpc_on) {
    rpc = malloc((r->n_flows + 1) * sizeof(double));
    rslow = malloc((r->n_flows + 1) * sizeof(double));
  }
  for (i = 0; i < r->n_flows; ++i) {
    sim_flow *f = &r->flows[i];
    double x = 0;
    int is_rpc = res->rpc_on && f->bytes >= s->rpc_min && f->bytes > 0 &&
                 f->bytes <= s->rpc_max;
    res->n_rpcs += is_rpc;
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
      if (is_rpc) {
        ++res->n_rpcs_done;
        if (rpc && rslow) {
          rpc[nr] = t / 1e6;
          rslow[nr] = t / ideal;
          ++nr;
        }
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
    pcts(fct, nf, res->fct_us);
    pcts(slow, nf, res->slowdown);
  }
  if (rpc && rslow && nr > 0) {
    pcts(rpc, nr, res->rpc_us);
    pcts(rslow, nr, res->rpc_slowdown);
  }
  free(fct);
  free(slow);
  free(rpc);
  free(rslow);
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
  if (r->tr->type == SCN_XPORT_TOS) {
    res->has_lower = 1;
    sim_tos_srd_counters(r->x, &res->lower);
  }
  path_share(r);
  link_stats(r);
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
  flow_series(r, end);
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
      run_link_name(r, q->link, q->name, sizeof(q->name));
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
