/*
 * report.c: rank 0's output, in srd-perf's table style (a header, a row
 * per rank, an "all" row and the exchange's times under it), or CSV (a
 * header line, a line per rank and "all") or JSON (one object; the keys
 * are listed in docs/transports.md).
 *
 * Times: a rank's part of an iteration runs from its first post to its
 * last completion; the exchange's time of an iteration is rank 0's, from
 * the barrier that starts it to the last rank's DONE (one clock, so that
 * hosts need no common one).  Throughput as RapidsMPF's benchmark gives it:
 * "local" is
 * --bytes-per-rank over the median exchange time, "global" that times
 * the ranks; Gbit/s counts the bytes that crossed the network (received).
 */
#include <inttypes.h>
#include <string.h>

#include "coll.h"
#include "tool_json.h"

typedef struct summary {
  uint32_t n_iters; /* measured iterations every rank completed */
  uint64_t xch[COLL_MAX_ITERS];
  uint64_t xch_min, xch_med, xch_max;
  uint64_t recv_bytes, sent_bytes;
  double gbps, local_gibps, global_gibps;
  int complete;
} summary;

static uint64_t median_of(const uint64_t *v, size_t n) {
  uint64_t s[COLL_MAX_ITERS];

  if (n == 0) {
    return 0;
  }
  memcpy(s, v, n * sizeof(*s));
  tool_sort_u64(s, n);
  return tool_pct_u64(s, n, 0.5);
}

static void summarize(const coll_opts *o, uint32_t n, const coll_result *all,
                      summary *sm) {
  uint32_t r, k;

  memset(sm, 0, sizeof(*sm));
  sm->complete = 1;
  sm->n_iters = o->iters;
  for (r = 0; r < n; ++r) {
    if (all[r].failed) {
      sm->complete = 0;
    }
    if (all[r].iters_done < sm->n_iters) {
      sm->n_iters = all[r].iters_done;
    }
    sm->recv_bytes += all[r].bytes_recv;
    sm->sent_bytes += all[r].bytes_sent;
  }
  for (k = 0; k < sm->n_iters; ++k) {
    sm->xch[k] = all[0].xch_ns[o->warmup + k];
  }
  if (sm->n_iters) {
    uint64_t s[COLL_MAX_ITERS];
    memcpy(s, sm->xch, sm->n_iters * sizeof(*s));
    tool_sort_u64(s, sm->n_iters);
    sm->xch_min = s[0];
    sm->xch_max = s[sm->n_iters - 1];
    sm->xch_med = tool_pct_u64(s, sm->n_iters, 0.5);
  }
  if (sm->xch_med) {
    double sec = (double)sm->xch_med / 1e9;
    sm->gbps = (double)sm->recv_bytes * 8 / sec / 1e9;
    sm->local_gibps = (double)o->bytes_per_rank / sec / (1u << 30);
    sm->global_gibps = sm->local_gibps * n;
  }
}

static uint64_t rank_median(const coll_opts *o, const coll_result *r) {
  return median_of(r->iter_ns + o->warmup, r->iters_done);
}

static double rank_gbps(const coll_opts *o, const coll_result *r) {
  uint64_t med = rank_median(o, r);

  return med ? (double)r->bytes_recv * 8 / ((double)med / 1e9) / 1e9 : 0.0;
}

static double us(uint64_t ns) {
  return (double)ns / 1e3;
}

static void table(const coll_opts *o, uint32_t n, const coll_result *all,
                  const tool_hist *hists, const tool_hist *merged,
                  const summary *sm, FILE *f) {
  uint32_t r;
  uint64_t retr = 0, errs = 0;

  fprintf(f,
          "%s: %s over %s, %u ranks, %" PRIu64 " bytes per rank in %" PRIu64
          "-byte partitions",
          tool_name(), coll_workload_names[o->workload], o->transport, n,
          o->bytes_per_rank, o->partition);
  if (o->workload == W_SHUFFLE) {
    fprintf(f, " to %u outputs", o->outputs);
  } else if (o->workload == W_PERMUTATION) {
    fprintf(f, ", shift %u", o->shift);
  }
  fprintf(f, ", %" PRIu64 "-byte messages, window %u, %u warm-up + %u, %s%s\n",
          o->msg_size, o->window, o->warmup, o->iters,
          o->verify ? "verify" : "no verify",
          o->mem == XPORT_MEM_CUDA ? ", CUDA device memory" : "");
  fprintf(f, "  transport (rank 0): %s\n", all[0].describe);
  fprintf(f, "%4s %-22s %9s %9s %8s %9s %9s %9s %9s %9s %8s %6s\n", "rank",
          "address", "sent MB", "recv MB", "Gbit/s", "p50 ms", "lat p50",
          "p99 us", "p99.9 us", "max us", "retrans", "errors");
  for (r = 0; r < n; ++r) {
    const coll_result *x = &all[r];
    const tool_hist *h = &hists[r];
    fprintf(
        f,
        "%4u %-22s %9.3f %9.3f %8.3f %9.3f %9.1f %9.1f %9.1f %9.1f %8" PRIu64
        " %6" PRIu64 "\n",
        r, x->addr, (double)x->bytes_sent / 1e6, (double)x->bytes_recv / 1e6,
        rank_gbps(o, x), (double)rank_median(o, x) / 1e6,
        us(tool_hist_pct(h, 0.5)), us(tool_hist_pct(h, 0.99)),
        us(tool_hist_pct(h, 0.999)), us(h->max), x->retransmits, x->errors);
    retr += x->retransmits;
    errs += x->errors;
  }
  fprintf(f,
          "%4s %-22s %9.3f %9.3f %8.3f %9.3f %9.1f %9.1f %9.1f %9.1f %8" PRIu64
          " %6" PRIu64 "\n",
          "all", "", (double)sm->sent_bytes / 1e6, (double)sm->recv_bytes / 1e6,
          sm->gbps, (double)sm->xch_med / 1e6, us(tool_hist_pct(merged, 0.5)),
          us(tool_hist_pct(merged, 0.99)), us(tool_hist_pct(merged, 0.999)),
          us(merged->max), retr, errs);
  fprintf(f,
          "exchange (barrier to barrier, %u iterations): min %.3f ms, "
          "median %.3f ms, max %.3f ms\n",
          sm->n_iters, (double)sm->xch_min / 1e6, (double)sm->xch_med / 1e6,
          (double)sm->xch_max / 1e6);
  fprintf(f, "throughput: local %.3f GiB/s (per rank), global %.3f GiB/s\n",
          sm->local_gibps, sm->global_gibps);
  for (r = 0; r < n; ++r) {
    if (all[r].failed) {
      fprintf(f, "rank %u FAILED: %s\n", r, all[r].error);
    }
  }
}

static void csv(const coll_opts *o, uint32_t n, const coll_result *all,
                const tool_hist *hists, const tool_hist *merged,
                const summary *sm, FILE *f) {
  uint32_t r;

  fprintf(f, "workload,transport,rank,address,bytes_sent,bytes_recv,gbps,"
             "time_ms_p50,lat_us_p50,lat_us_p99,lat_us_p999,lat_us_max,"
             "retransmits,errors,failed\n");
  for (r = 0; r <= n; ++r) {
    const tool_hist *h = r < n ? &hists[r] : merged;
    uint64_t sent = r < n ? all[r].bytes_sent : sm->sent_bytes;
    uint64_t recv = r < n ? all[r].bytes_recv : sm->recv_bytes;
    uint64_t retr = 0, errs = 0;
    uint32_t q;
    for (q = 0; q < n; ++q) {
      if (r == n || q == r) {
        retr += all[q].retransmits;
        errs += all[q].errors;
      }
    }
    if (r < n) {
      fprintf(f, "%s,%s,%u,%s,", coll_workload_names[o->workload], o->transport,
              r, all[r].addr);
    } else {
      fprintf(f, "%s,%s,all,,", coll_workload_names[o->workload], o->transport);
    }
    fprintf(f,
            "%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,%" PRIu64
            ",%" PRIu64 ",%d\n",
            sent, recv, r < n ? rank_gbps(o, &all[r]) : sm->gbps,
            (double)(r < n ? rank_median(o, &all[r]) : sm->xch_med) / 1e6,
            us(tool_hist_pct(h, 0.5)), us(tool_hist_pct(h, 0.99)),
            us(tool_hist_pct(h, 0.999)), us(h->max), retr, errs,
            r < n ? all[r].failed : !sm->complete);
  }
}

static void json_lat(tool_json *j, const tool_hist *h) {
  tool_json_key(j, "lat_us");
  tool_json_obj_begin(j);
  tool_json_kv_numf(j, "p50", "%.2f", us(tool_hist_pct(h, 0.5)));
  tool_json_kv_numf(j, "p99", "%.2f", us(tool_hist_pct(h, 0.99)));
  tool_json_kv_numf(j, "p999", "%.2f", us(tool_hist_pct(h, 0.999)));
  tool_json_kv_numf(j, "max", "%.2f", us(h->max));
  tool_json_kv_u64(j, "samples", h->total);
  tool_json_obj_end(j);
}

static void json(const coll_opts *o, uint32_t n, const coll_result *all,
                 const tool_hist *hists, const tool_hist *merged,
                 const summary *sm, FILE *f) {
  tool_json j;
  uint32_t r, k;
  uint64_t retr = 0, errs = 0;

  for (r = 0; r < n; ++r) {
    retr += all[r].retransmits;
    errs += all[r].errors;
  }
  tool_json_init(&j, f, TOOL_JSON_SPACED);
  tool_json_obj_begin(&j);
  tool_json_kv_str(&j, "workload", coll_workload_names[o->workload]);
  tool_json_kv_str(&j, "transport", o->transport);
  tool_json_kv_str(&j, "mem", o->mem == XPORT_MEM_CUDA ? "cuda" : "host");
  tool_json_kv_u64(&j, "ranks", n);
  tool_json_kv_u64(&j, "bytes_per_rank", o->bytes_per_rank);
  tool_json_kv_u64(&j, "partition", o->partition);
  tool_json_kv_u64(&j, "outputs", o->outputs);
  tool_json_kv_u64(&j, "shift", o->shift);
  tool_json_kv_u64(&j, "msg_size", o->msg_size);
  tool_json_kv_u64(&j, "window", o->window);
  tool_json_kv_u64(&j, "paths", o->paths);
  tool_json_kv_u64(&j, "warmup", o->warmup);
  tool_json_kv_u64(&j, "iterations", o->iters);
  tool_json_kv_u64(&j, "iterations_done", sm->n_iters);
  tool_json_kv_bool(&j, "verify", o->verify);
  tool_json_kv_bool(&j, "complete", sm->complete);
  tool_json_key(&j, "exchange_ms");
  tool_json_obj_begin(&j);
  tool_json_kv_numf(&j, "min", "%.4f", (double)sm->xch_min / 1e6);
  tool_json_kv_numf(&j, "median", "%.4f", (double)sm->xch_med / 1e6);
  tool_json_kv_numf(&j, "max", "%.4f", (double)sm->xch_max / 1e6);
  tool_json_obj_end(&j);
  tool_json_key(&j, "iter_ms");
  tool_json_arr_begin(&j);
  for (k = 0; k < sm->n_iters; ++k) {
    tool_json_numf(&j, "%.4f", (double)sm->xch[k] / 1e6);
  }
  tool_json_arr_end(&j);
  tool_json_kv_u64(&j, "bytes_sent", sm->sent_bytes);
  tool_json_kv_u64(&j, "bytes_recv", sm->recv_bytes);
  tool_json_kv_numf(&j, "gbps", "%.4f", sm->gbps);
  tool_json_kv_numf(&j, "local_gibps", "%.4f", sm->local_gibps);
  tool_json_kv_numf(&j, "global_gibps", "%.4f", sm->global_gibps);
  json_lat(&j, merged);
  tool_json_kv_u64(&j, "retransmits", retr);
  tool_json_kv_u64(&j, "errors", errs);
  tool_json_key(&j, "per_rank");
  tool_json_arr_begin(&j);
  for (r = 0; r < n; ++r) {
    const coll_result *x = &all[r];
    tool_json_ws(&j, "\n  ");
    tool_json_obj_begin(&j);
    tool_json_kv_u64(&j, "rank", r);
    tool_json_kv_str(&j, "address", x->addr);
    tool_json_kv_u64(&j, "bytes_sent", x->bytes_sent);
    tool_json_kv_u64(&j, "bytes_recv", x->bytes_recv);
    tool_json_kv_u64(&j, "local_bytes", x->local_bytes);
    tool_json_kv_u64(&j, "msgs_sent", x->msgs_sent);
    tool_json_kv_u64(&j, "msgs_recv", x->msgs_recv);
    tool_json_kv_u64(&j, "recv_bytes_total", x->recv_bytes_total);
    tool_json_kv_u64(&j, "verified", x->verified);
    tool_json_kv_numf(&j, "gbps", "%.4f", rank_gbps(o, x));
    tool_json_kv_numf(&j, "time_ms_p50", "%.4f",
                      (double)rank_median(o, x) / 1e6);
    json_lat(&j, &hists[r]);
    tool_json_kv_u64(&j, "retransmits", x->retransmits);
    tool_json_kv_u64(&j, "errors", x->errors);
    tool_json_kv_bool(&j, "failed", x->failed);
    tool_json_kv_str(&j, "error", x->error);
    tool_json_obj_end(&j);
  }
  tool_json_ws(&j, "\n");
  tool_json_arr_end(&j);
  tool_json_obj_end(&j);
  (void)tool_json_finish(&j);
}

void report_print(const coll_opts *o, uint32_t n, const coll_result *all,
                  const tool_hist *hists, FILE *f) {
  tool_hist merged;
  summary sm;
  uint32_t r;

  if (tool_hist_init(&merged, COLL_HIST_BITS) != 0) {
    tool_die("out of memory");
  }
  for (r = 0; r < n; ++r) {
    (void)tool_hist_merge(&merged, &hists[r]);
  }
  summarize(o, n, all, &sm);
  if (o->json) {
    json(o, n, all, hists, &merged, &sm, f);
  } else if (o->csv) {
    csv(o, n, all, hists, &merged, &sm, f);
  } else {
    table(o, n, all, hists, &merged, &sm, f);
  }
  tool_hist_fini(&merged);
}
