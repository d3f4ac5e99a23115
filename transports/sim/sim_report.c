/*
 * sim_report.c: the table, JSON and CSV outputs of srd-sim.
 */
#include "sim_report.h"

#include <errno.h>
#include <string.h>

static const char *const drop_names[NETSIM_DROP_REASONS] = {
    "queue", "link_down", "loss", "no_route", "ttl"};

static const char *topo_name(int t) {
  return t == SCN_TOPO_DUMBBELL    ? "dumbbell"
         : t == SCN_TOPO_LEAFSPINE ? "leafspine"
                                   : "fattree";
}

static const char *wl_name(int w) {
  static const char *const n[] = {"single", "pairs",  "permutation", "shuffle",
                                  "incast", "random", "stream"};
  return w >= 0 && w <= SCN_WL_STREAM ? n[w] : "?";
}

static void fmt_size(uint64_t b, char *buf, size_t len) {
  if (b >= (1u << 20) && b % (1u << 20) == 0) {
    snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
  } else if (b >= 1024 && b % 1024 == 0) {
    snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
  } else {
    snprintf(buf, len, "%llu B", (unsigned long long)b);
  }
}

/* faults_besides_ber says whether |s| has a fault other than a bit-error
   rate or duplication (the header notes the reconvergence delay for
   those). */
static int faults_besides_ber(const sim_scn *s) {
  uint32_t i;

  for (i = 0; i < s->n_faults; ++i) {
    if (s->faults[i].op != SCN_FAULT_BER && s->faults[i].op != SCN_FAULT_DUP) {
      return 1;
    }
  }
  return 0;
}

void sim_report_header(FILE *f, const sim_scn *s) {
  char a[32], b[32], c[32], d[32];
  uint32_t i;

  fprintf(f, "srd-sim: %s (%s), seed %llu\n", s->name, s->file,
          (unsigned long long)s->seed);
  sim_fmt_time(s->delay, a, sizeof(a));
  fmt_size(s->queue, b, sizeof(b));
  fprintf(f, "  topology   %s", topo_name(s->topo));
  if (s->topo == SCN_TOPO_DUMBBELL) {
    fprintf(f, ": %u paths, %u host(s) per side", s->paths, s->hosts_per_side);
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    fprintf(f, ": %u spines, %u leaves x %u hosts", s->spines, s->leaves,
            s->hosts_per_leaf);
  } else {
    fprintf(f, ": k=%u, %u hosts", s->k, s->n_hosts);
  }
  fprintf(f, ", hosts %g Gb/s", (double)s->host_rate / 1e9);
  if (s->n_lanes) {
    fprintf(f, ", %s", s->topo == SCN_TOPO_DUMBBELL ? "paths" : "spines");
    for (i = 0; i < s->n_lanes; ++i) {
      fprintf(f, "%s%g", i ? "/" : " ", (double)s->lane_rate[i] / 1e9);
    }
    fprintf(f, " Gb/s");
  } else if (s->fabric_rate) {
    fprintf(f, ", fabric %g Gb/s", (double)s->fabric_rate / 1e9);
  }
  fprintf(f, ", %s links, %s queues", a, b);
  if (s->ecn) {
    fmt_size(s->ecn, c, sizeof(c));
    fprintf(f, ", ECN above %s", c);
  }
  fprintf(f, "\n");
  fmt_size(s->message, a, sizeof(a));
  fprintf(f, "  workload   %s", wl_name(s->wl));
  if (s->bytes && s->wl != SCN_WL_STREAM) {
    fmt_size(s->bytes, b, sizeof(b));
    fprintf(f, ", %s per flow", b);
  } else if (s->wl != SCN_WL_STREAM && s->wl != SCN_WL_RANDOM) {
    fprintf(f, ", unbounded flows");
  }
  if (s->wl == SCN_WL_STREAM) {
    sim_fmt_time(s->interval, b, sizeof(b));
    fprintf(f, ", %u messages of %s every %s%s", s->count, a, b,
            s->poisson ? " (Poisson)" : "");
  } else {
    fprintf(f, ", %s messages, window %u", a, s->window);
  }
  if (s->wl == SCN_WL_INCAST) {
    fprintf(f, ", %u senders -> host %u, %u round(s)", s->senders, s->receiver,
            s->rounds);
  } else if (s->wl == SCN_WL_SHUFFLE) {
    fprintf(f, ", %u ranks", s->ranks);
  } else if (s->wl == SCN_WL_RANDOM) {
    fprintf(f, ", load %g, up to %u flows", s->load, s->flows);
  }
  fprintf(f, "\n  faults     ");
  if (s->n_faults == 0 && s->loss == 0 && s->ber == 0 && s->dup == 0) {
    fprintf(f, "none");
  }
  if (s->loss > 0) {
    fprintf(f, "loss %g%% on %s links", s->loss * 100,
            s->loss_scope == SCN_LOSS_FABRIC ? "fabric" : "all");
  }
  if (s->ber > 0) {
    fprintf(f, "%sbit-error rate %g on %s links", s->loss > 0 ? "; " : "",
            s->ber, s->ber_scope == SCN_LOSS_FABRIC ? "fabric" : "all");
  }
  if (s->dup > 0) {
    sim_fmt_time(s->dup_delay, c, sizeof(c));
    fprintf(f, "%sduplication %g%% on %s links, copies %s later",
            s->loss > 0 || s->ber > 0 ? "; " : "", s->dup * 100,
            s->dup_scope == SCN_LOSS_FABRIC ? "fabric" : "all", c);
  }
  for (i = 0; i < s->n_faults; ++i) {
    const scn_fault *x = &s->faults[i];
    fprintf(f, "%s",
            (i || s->loss > 0 || s->ber > 0 || s->dup > 0) ? "; " : "");
    sim_fmt_time(x->at_ps, c, sizeof(c));
    switch (x->op) {
    case SCN_FAULT_DOWN:
      fprintf(f, "%s down at %s", x->link.text, c);
      break;
    case SCN_FAULT_UP:
      fprintf(f, "%s up at %s", x->link.text, c);
      break;
    case SCN_FAULT_DEGRADE:
      fprintf(f, "%s at %g Gb/s from %s", x->link.text,
              (double)x->rate_bps / 1e9, c);
      break;
    case SCN_FAULT_BER:
      fprintf(f, "bit-error rate %g on %s", x->p, x->link.text);
      break;
    case SCN_FAULT_DUP:
      sim_fmt_time(x->delay_set ? x->delay_ps : s->dup_delay, c, sizeof(c));
      fprintf(f, "duplication %g%% on %s, copies %s later", x->p * 100,
              x->link.text, c);
      break;
    default:
      fprintf(f, "loss %g%% on %s", x->p * 100, x->link.text);
      break;
    }
  }
  if (faults_besides_ber(s)) {
    sim_fmt_time(s->reconverge, d, sizeof(d));
    fprintf(f, " (routing reconverges after %s)", d);
  }
  sim_fmt_time(s->duration, a, sizeof(a));
  sim_fmt_time(s->warmup, b, sizeof(b));
  fprintf(f, "\n  run        up to %s simulated", a);
  if (s->warmup) {
    fprintf(f, ", throughput after %s", b);
  }
  fprintf(f, "\n");
}

/* Table rows. */
static void row_label(FILE *f, const char *l) {
  fprintf(f, "  %-30s", l);
}

static void cell_d(FILE *f, double v, int prec) {
  char b[32];
  snprintf(b, sizeof(b), "%.*f", prec, v);
  fprintf(f, " %13s", b);
}

static void cell_s(FILE *f, const char *s) {
  fprintf(f, " %13.13s", s);
}

static void cell_u64(FILE *f, uint64_t v) {
  char b[32];
  snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
  cell_s(f, b);
}

static void cell_pair(FILE *f, uint64_t a, uint64_t b) {
  char s[48];
  snprintf(s, sizeof(s), "%llu / %llu", (unsigned long long)a,
           (unsigned long long)b);
  cell_s(f, s);
}

/* any_ber says whether any of the |n| results ran with bit errors: the
   corruption rows, keys and file appear only then, so that the outputs
   of a scenario without bit errors are what they always were. */
static int any_ber(const sim_result *res, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (res[i].ber_on) {
      return 1;
    }
  }
  return 0;
}

/* any_dup says whether any of the |n| results ran with duplication: the
   duplicate rows, keys and file appear only then. */
static int any_dup(const sim_result *res, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (res[i].dup_on) {
      return 1;
    }
  }
  return 0;
}

static void cell_us(FILE *f, double us) {
  char b[32];

  if (us >= 1e6) {
    snprintf(b, sizeof(b), "%.3g s", us / 1e6);
  } else if (us >= 1e3) {
    snprintf(b, sizeof(b), "%.4g ms", us / 1e3);
  } else {
    snprintf(b, sizeof(b), "%.4g us", us);
  }
  fprintf(f, " %13s", b);
}

void sim_report_table(FILE *f, const sim_result *res, uint32_t n) {
  uint32_t i, q;
  static const char *const pn[4] = {"p50", "p99", "p99.9", "max"};
  int any_fct = 0, any_msg = 0, any_hol = 0;

  if (n == 0) {
    return;
  }
  if (res[0].point[0]) {
    fprintf(f, "\n  -- %s\n", res[0].point);
  } else {
    fprintf(f, "\n");
  }
  row_label(f, "");
  for (i = 0; i < n; ++i) {
    cell_s(f, res[i].transport);
  }
  fprintf(f, "\n");
  for (i = 0; i < n; ++i) {
    any_fct |= res[i].n_flows_done > 0;
    any_msg |= res[i].n_msgs_done > 0;
    any_hol |= res[i].hol_msgs > 0;
  }
  row_label(f, "throughput (Gb/s)");
  for (i = 0; i < n; ++i) {
    cell_d(f, res[i].tput_gbps, 2);
  }
  fprintf(f, "\n");
  row_label(f, "  of capacity");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%.1f%% of %g", res[i].tput_fraction * 100,
             res[i].capacity_gbps);
    cell_s(f, b);
  }
  fprintf(f, "\n");
  row_label(f, "Jain's fairness");
  for (i = 0; i < n; ++i) {
    cell_d(f, res[i].jain, 3);
  }
  fprintf(f, "\n");
  row_label(f, "flows done");
  for (i = 0; i < n; ++i) {
    char b[32];
    if (res[i].n_flows_unbounded == res[i].n_flows) {
      snprintf(b, sizeof(b), "%u unbounded", res[i].n_flows);
    } else {
      snprintf(b, sizeof(b), "%u/%u", res[i].n_flows_done,
               res[i].n_flows - res[i].n_flows_unbounded);
    }
    cell_s(f, b);
  }
  fprintf(f, "\n");
  if (any_fct) {
    for (q = 0; q < 4; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "flow completion %s", pn[q]);
      row_label(f, l);
      for (i = 0; i < n; ++i) {
        cell_us(f, res[i].fct_us[q]);
      }
      fprintf(f, "\n");
    }
    row_label(f, "slowdown p50 / p99");
    for (i = 0; i < n; ++i) {
      char b[32];
      snprintf(b, sizeof(b), "%.2f / %.2f", res[i].slowdown[0],
               res[i].slowdown[1]);
      cell_s(f, b);
    }
    fprintf(f, "\n");
  }
  if (any_msg) {
    row_label(f, "messages done");
    for (i = 0; i < n; ++i) {
      char b[32];
      snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].n_msgs_done);
      cell_s(f, b);
    }
    fprintf(f, "\n");
    for (q = 0; q < 4; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "message latency %s", pn[q]);
      row_label(f, l);
      for (i = 0; i < n; ++i) {
        cell_us(f, res[i].lat_us[q]);
      }
      fprintf(f, "\n");
    }
  }
  if (any_hol) {
    row_label(f, "unreadable behind a hole");
    for (i = 0; i < n; ++i) {
      cell_us(f, res[i].hol_total_us);
    }
    fprintf(f, "\n");
    row_label(f, "  messages / longest");
    for (i = 0; i < n; ++i) {
      char b[40];
      snprintf(b, sizeof(b), "%llu / %.3g ms",
               (unsigned long long)res[i].hol_msgs, res[i].hol_max_us / 1e3);
      cell_s(f, b);
    }
    fprintf(f, "\n");
  }
  row_label(f, "longest stall of a flow");
  for (i = 0; i < n; ++i) {
    cell_us(f, res[i].max_stall_us);
  }
  fprintf(f, "\n");
  row_label(f, "retransmitted packets");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].cnt.retransmits);
    cell_s(f, b);
  }
  fprintf(f, "\n");
  row_label(f, "timeouts");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].cnt.timeouts);
    cell_s(f, b);
  }
  fprintf(f, "\n");
  row_label(f, "drops (queue/down/loss)");
  for (i = 0; i < n; ++i) {
    char b[48];
    snprintf(b, sizeof(b), "%llu/%llu/%llu",
             (unsigned long long)res[i].drops_by[NETSIM_DROP_QUEUE],
             (unsigned long long)res[i].drops_by[NETSIM_DROP_LINK_DOWN],
             (unsigned long long)res[i].drops_by[NETSIM_DROP_LOSS]);
    cell_s(f, b);
  }
  fprintf(f, "\n");
  if (any_ber(res, n)) {
    row_label(f, "corrupted on links");
    for (i = 0; i < n; ++i) {
      cell_u64(f, res[i].corrupted);
    }
    fprintf(f, "\n");
    row_label(f, "  at receiver / in header");
    for (i = 0; i < n; ++i) {
      cell_pair(f, res[i].cnt.corrupt_rx, res[i].cnt.corrupt_in_hdr);
    }
    fprintf(f, "\n");
    row_label(f, "  detected, dropped");
    for (i = 0; i < n; ++i) {
      cell_u64(f, res[i].cnt.corrupt_dropped);
    }
    fprintf(f, "\n");
    row_label(f, "  other drop / accepted");
    for (i = 0; i < n; ++i) {
      cell_pair(f, res[i].cnt.corrupt_other, res[i].cnt.corrupt_accepted);
    }
    fprintf(f, "\n");
    row_label(f, "unmatched deliveries");
    for (i = 0; i < n; ++i) {
      cell_u64(f, res[i].cnt.recv_errors);
    }
    fprintf(f, "\n");
  }
  if (any_dup(res, n)) {
    row_label(f, "duplicated on links");
    for (i = 0; i < n; ++i) {
      cell_u64(f, res[i].duplicated);
    }
    fprintf(f, "\n");
    row_label(f, "  copies at receivers");
    for (i = 0; i < n; ++i) {
      cell_u64(f, res[i].cnt.dup_rx);
    }
    fprintf(f, "\n");
    row_label(f, "  delivered twice / unmatched");
    for (i = 0; i < n; ++i) {
      cell_pair(f, res[i].dup_reads, res[i].cnt.unmatched);
    }
    fprintf(f, "\n");
  }
  row_label(f, "deepest queue (KB)");
  for (i = 0; i < n; ++i) {
    cell_d(f, (double)res[i].max_queue_bytes / 1000.0, 1);
  }
  fprintf(f, "\n");
  row_label(f, "path share min / max");
  for (i = 0; i < n; ++i) {
    double lo = 1, hi = 0;
    char b[32];
    uint32_t p;
    for (p = 0; p < res[i].n_paths; ++p) {
      lo = res[i].path_share[p] < lo ? res[i].path_share[p] : lo;
      hi = res[i].path_share[p] > hi ? res[i].path_share[p] : hi;
    }
    if (res[i].n_paths == 0 || hi == 0) {
      snprintf(b, sizeof(b), "-");
    } else {
      snprintf(b, sizeof(b), "%.3f / %.3f", lo, hi);
    }
    cell_s(f, b);
  }
  fprintf(f, "\n");
  row_label(f, "simulated until");
  for (i = 0; i < n; ++i) {
    cell_us(f, (double)res[i].end / 1e6);
  }
  fprintf(f, "\n");
  row_label(f, "packet-hops");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].hops);
    cell_s(f, b);
  }
  fprintf(f, "\n");
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      fprintf(f, "\\%c", c);
    } else if (c < 0x20) {
      fprintf(f, "\\u%04x", c);
    } else {
      fputc(c, f);
    }
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v) {
  if (v != v || v > 1e300 || v < -1e300) {
    fprintf(f, "null");
  } else {
    fprintf(f, "%.6g", v);
  }
}

static void json_pcts(FILE *f, const char *key, const double *v) {
  fprintf(f, "\"%s\": {\"p50\": ", key);
  json_num(f, v[0]);
  fprintf(f, ", \"p99\": ");
  json_num(f, v[1]);
  fprintf(f, ", \"p999\": ");
  json_num(f, v[2]);
  fprintf(f, ", \"max\": ");
  json_num(f, v[3]);
  fprintf(f, "}");
}

void sim_report_json(FILE *f, const sim_scn *s, const sim_result *res,
                     uint32_t n) {
  uint32_t i, p;
  int ber = any_ber(res, n), dup = any_dup(res, n);

  fprintf(f, "{\"scenario\": ");
  json_str(f, s->name);
  fprintf(f, ", \"file\": ");
  json_str(f, s->file);
  fprintf(f,
          ", \"seed\": %llu, \"duration_us\": ", (unsigned long long)s->seed);
  json_num(f, (double)s->duration / 1e6);
  fprintf(f, ", \"hosts\": %u, \"transports\": [", s->n_hosts);
  for (i = 0; i < n; ++i) {
    const sim_result *r = &res[i];
    fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
    json_str(f, r->transport);
    fprintf(f, ", \"kind\": ");
    json_str(f, r->kind);
    fprintf(f, ", \"point\": ");
    json_str(f, r->point);
    fprintf(f, ", \"throughput_gbps\": ");
    json_num(f, r->tput_gbps);
    fprintf(f, ", \"throughput_fraction\": ");
    json_num(f, r->tput_fraction);
    fprintf(f, ", \"capacity_gbps\": ");
    json_num(f, r->capacity_gbps);
    fprintf(f, ", ");
    json_pcts(f, "fct_us", r->fct_us);
    fprintf(f, ", ");
    json_pcts(f, "slowdown", r->slowdown);
    fprintf(f, ", ");
    json_pcts(f, "msg_latency_us", r->lat_us);
    fprintf(f, ", \"jain\": ");
    json_num(f, r->jain);
    fprintf(f,
            ", \"flows\": %u, \"flows_done\": %u, \"flows_unbounded\": %u"
            ", \"messages\": %llu, \"messages_done\": %llu",
            r->n_flows, r->n_flows_done, r->n_flows_unbounded,
            (unsigned long long)r->n_msgs, (unsigned long long)r->n_msgs_done);
    fprintf(f,
            ", \"retransmits\": %llu, \"timeouts\": %llu"
            ", \"fast_recoveries\": %llu, \"probes\": %llu"
            ", \"data_pkts\": %llu, \"ctrl_pkts\": %llu"
            ", \"send_errors\": %llu, \"local_drops\": %llu",
            (unsigned long long)r->cnt.retransmits,
            (unsigned long long)r->cnt.timeouts,
            (unsigned long long)r->cnt.fast_recoveries,
            (unsigned long long)r->cnt.probes,
            (unsigned long long)r->cnt.data_pkts,
            (unsigned long long)r->cnt.ctrl_pkts,
            (unsigned long long)r->cnt.send_errors,
            (unsigned long long)r->cnt.local_drops);
    fprintf(f, ", \"drops\": %llu, \"drops_by_reason\": {",
            (unsigned long long)r->drops);
    for (p = 0; p < NETSIM_DROP_REASONS; ++p) {
      fprintf(f, "%s\"%s\": %llu", p ? ", " : "", drop_names[p],
              (unsigned long long)r->drops_by[p]);
    }
    fprintf(f, "}, \"ecn_marks\": %llu, \"hol_blocked_us_total\": ",
            (unsigned long long)r->ecn_marks);
    json_num(f, r->hol_total_us);
    fprintf(f, ", \"hol_blocked_us_max\": ");
    json_num(f, r->hol_max_us);
    fprintf(f, ", \"hol_blocked_msgs\": %llu, \"max_stall_us\": ",
            (unsigned long long)r->hol_msgs);
    json_num(f, r->max_stall_us);
    fprintf(f, ", \"max_queue_bytes\": %llu, \"path_share\": [",
            (unsigned long long)r->max_queue_bytes);
    for (p = 0; p < r->n_paths; ++p) {
      if (p) {
        fprintf(f, ", ");
      }
      json_num(f, r->path_share[p]);
    }
    fprintf(f, "], \"busiest_queues\": [");
    for (p = 0; p < r->n_q; ++p) {
      fprintf(f, "%s{\"link\": ", p ? ", " : "");
      json_str(f, r->q[p].name);
      fprintf(f, ", \"max_bytes\": %llu, \"mean_bytes\": ",
              (unsigned long long)r->q[p].max_bytes);
      json_num(f, r->q[p].mean_bytes);
      fprintf(f, "}");
    }
    fprintf(f, "], \"sim_end_us\": ");
    json_num(f, (double)r->end / 1e6);
    fprintf(f,
            ", \"completed\": %s, \"events\": %llu, \"packet_hops\": %llu"
            ", \"trace_hash\": \"%016llx\"",
            r->stopped_early ? "true" : "false", (unsigned long long)r->events,
            (unsigned long long)r->hops, (unsigned long long)r->trace_hash);
    if (ber) {
      fprintf(f,
              ", \"corruption\": {\"corrupted\": %llu, \"bit_errors\": %llu"
              ", \"received\": %llu, \"in_header\": %llu"
              ", \"detected\": %llu, \"other_drops\": %llu"
              ", \"accepted\": %llu, \"unmatched_deliveries\": %llu}",
              (unsigned long long)r->corrupted,
              (unsigned long long)r->bit_errors,
              (unsigned long long)r->cnt.corrupt_rx,
              (unsigned long long)r->cnt.corrupt_in_hdr,
              (unsigned long long)r->cnt.corrupt_dropped,
              (unsigned long long)r->cnt.corrupt_other,
              (unsigned long long)r->cnt.corrupt_accepted,
              (unsigned long long)r->cnt.recv_errors);
    }
    if (dup) {
      fprintf(
          f,
          ", \"duplicates\": {\"duplicated\": %llu, \"skipped\": %llu"
          ", \"received\": %llu, \"delivered_twice\": %llu"
          ", \"unmatched_deliveries\": %llu}",
          (unsigned long long)r->duplicated, (unsigned long long)r->dup_skipped,
          (unsigned long long)r->cnt.dup_rx, (unsigned long long)r->dup_reads,
          (unsigned long long)r->cnt.unmatched);
    }
    fprintf(f, "}");
  }
  fprintf(f, "\n]}\n");
}

static FILE *open_out(const char *dir, const char *name, char *err,
                      size_t errlen) {
  char path[1024];
  FILE *f;

  snprintf(path, sizeof(path), "%s/%s", dir, name);
  f = fopen(path, "w");
  if (f == NULL) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
  }
  return f;
}

static void tm_us(FILE *f, netsim_time t) {
  if (t == NETSIM_TIME_NONE) {
    fprintf(f, ",");
  } else {
    fprintf(f, ",%.3f", (double)t / 1e6);
  }
}

int sim_report_csv(const char *dir, const sim_result *res, uint32_t n,
                   char *err, size_t errlen) {
  FILE *f;
  uint32_t i, j;
  uint64_t m;

  if ((f = open_out(dir, "flows.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,flow,src,dst,bytes,start_us,end_us,fct_us,"
             "delivered_bytes,max_stall_us\n");
  for (i = 0; i < n; ++i) {
    for (j = 0; res[i].flows && j < res[i].n_flows; ++j) {
      const sim_flow *x = &res[i].flows[j];
      fprintf(f, "%u,%s,%u,%u,%u,%llu", res[i].point_idx, res[i].transport, j,
              x->src, x->dst, (unsigned long long)x->bytes);
      tm_us(f, x->started ? x->start : NETSIM_TIME_NONE);
      tm_us(f, x->end);
      if (x->end != NETSIM_TIME_NONE) {
        fprintf(f, ",%.3f", (double)(x->end - x->start) / 1e6);
      } else {
        fprintf(f, ",");
      }
      fprintf(f, ",%llu,%.3f\n", (unsigned long long)x->delivered,
              (double)x->max_gap / 1e6);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/flows.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "messages.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,msg,flow,bytes,post_us,arrive_us,read_us,"
             "latency_us,hol_us,status\n");
  for (i = 0; i < n; ++i) {
    for (m = 0; res[i].msgs && m < res[i].n_msg_recs; ++m) {
      const simx_msg *x = sim_result_msg(&res[i], m);
      fprintf(f, "%u,%s,%llu,%u,%llu", res[i].point_idx, res[i].transport,
              (unsigned long long)m, x->flow, (unsigned long long)x->bytes);
      tm_us(f, x->t_post);
      tm_us(f, x->t_arrive);
      tm_us(f, x->t_read);
      if (x->t_read != NETSIM_TIME_NONE) {
        fprintf(f, ",%.3f,%.3f", (double)(x->t_read - x->t_post) / 1e6,
                x->t_arrive != NETSIM_TIME_NONE
                    ? (double)(x->t_read - x->t_arrive) / 1e6
                    : 0.0);
      } else {
        fprintf(f, ",,");
      }
      fprintf(f, ",%d\n", x->status);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/messages.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "throughput.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,time_us,gbps\n");
  for (i = 0; i < n; ++i) {
    for (j = 0; res[i].tput_bins && j < res[i].n_bins; ++j) {
      fprintf(f, "%u,%s,%.3f,%.4f\n", res[i].point_idx, res[i].transport,
              (double)((uint64_t)j * res[i].bin_ps) / 1e6, res[i].tput_bins[j]);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/throughput.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "queues.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,link,time_us,bytes\n");
  for (i = 0; i < n; ++i) {
    uint32_t q;
    for (q = 0; q < res[i].n_q; ++q) {
      for (j = 0; res[i].q_bytes && res[i].q_time && j < res[i].n_samples;
           ++j) {
        fprintf(f, "%u,%s,%s,%.3f,%llu\n", res[i].point_idx, res[i].transport,
                res[i].q[q].name, (double)res[i].q_time[j] / 1e6,
                (unsigned long long)res[i].q_bytes[(size_t)j * res[i].n_q + q]);
      }
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/queues.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "paths.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,path,share\n");
  for (i = 0; i < n; ++i) {
    for (j = 0; j < res[i].n_paths; ++j) {
      fprintf(f, "%u,%s,%u,%.6f\n", res[i].point_idx, res[i].transport, j,
              res[i].path_share[j]);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/paths.csv: write failed", dir);
    return -1;
  }
  if (any_dup(res, n)) {
    if ((f = open_out(dir, "duplicates.csv", err, errlen)) == NULL) {
      return -1;
    }
    fprintf(f, "point,transport,duplicated,skipped,received,delivered_twice,"
               "unmatched_deliveries\n");
    for (i = 0; i < n; ++i) {
      fprintf(f, "%u,%s,%llu,%llu,%llu,%llu,%llu\n", res[i].point_idx,
              res[i].transport, (unsigned long long)res[i].duplicated,
              (unsigned long long)res[i].dup_skipped,
              (unsigned long long)res[i].cnt.dup_rx,
              (unsigned long long)res[i].dup_reads,
              (unsigned long long)res[i].cnt.unmatched);
    }
    if (fclose(f) != 0) {
      snprintf(err, errlen, "%s/duplicates.csv: write failed", dir);
      return -1;
    }
  }
  if (!any_ber(res, n)) {
    return 0;
  }
  if ((f = open_out(dir, "corruption.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,corrupted,bit_errors,received,in_header,"
             "detected,other_drops,accepted,unmatched_deliveries\n");
  for (i = 0; i < n; ++i) {
    const simx_counters *c = &res[i].cnt;
    fprintf(f, "%u,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n",
            res[i].point_idx, res[i].transport,
            (unsigned long long)res[i].corrupted,
            (unsigned long long)res[i].bit_errors,
            (unsigned long long)c->corrupt_rx,
            (unsigned long long)c->corrupt_in_hdr,
            (unsigned long long)c->corrupt_dropped,
            (unsigned long long)c->corrupt_other,
            (unsigned long long)c->corrupt_accepted,
            (unsigned long long)c->recv_errors);
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/corruption.csv: write failed", dir);
    return -1;
  }
  return 0;
}
