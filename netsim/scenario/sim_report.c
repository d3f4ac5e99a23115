/*
 * sim_report.c: the table, JSON and CSV outputs of srd-sim.
 */
#include "sim_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_tbl.h"
#include "tool_json.h"

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
  int spread;

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
  if (s->rpc_max > 0) {
    fmt_size(s->rpc_min, a, sizeof(a));
    fmt_size(s->rpc_max, b, sizeof(b));
    fprintf(f, "; RPCs: flows of %s to %s", a, b);
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
  /* The timing noise (docs/scenarios.md, "Timing noise"): a flow start
     spread applies to the flows that start with the workload. */
  fprintf(f, "\n  noise      ");
  spread = s->start_spread && s->wl != SCN_WL_RANDOM && s->wl != SCN_WL_STREAM;
  if (s->send_jitter == 0 && !spread) {
    fprintf(f, "none");
  }
  if (s->send_jitter) {
    sim_fmt_time(s->send_jitter, a, sizeof(a));
    fprintf(f, "send jitter up to %s per host", a);
  }
  if (spread) {
    sim_fmt_time(s->start_spread, a, sizeof(a));
    fprintf(f, "%sflow starts spread over %s", s->send_jitter ? ", " : "", a);
  }
  sim_fmt_time(s->duration, a, sizeof(a));
  sim_fmt_time(s->warmup, b, sizeof(b));
  fprintf(f, "\n  run        up to %s simulated", a);
  if (s->warmup) {
    fprintf(f, ", throughput after %s", b);
  }
  fprintf(f, "\n");
}

/* A sweep's header: each point's header text (sim_report_header_text),
   the lines every point shares printed once, the others under each
   point's heading. */

char *sim_report_header_text(const sim_scn *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  if (f == NULL) {
    return NULL;
  }
  sim_report_header(f, s);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* nth_line points |*len| at the length of line |i| of |text| (without
   its newline) and returns its start, or NULL when |text| has fewer. */
static const char *nth_line(const char *text, uint32_t i, size_t *len) {
  const char *nl;

  while (i > 0) {
    nl = strchr(text, '\n');
    if (nl == NULL) {
      return NULL;
    }
    text = nl + 1;
    --i;
  }
  if (*text == '\0') {
    return NULL;
  }
  nl = strchr(text, '\n');
  *len = nl ? (size_t)(nl - text) : strlen(text);
  return text;
}

/* line_shared returns line |i| of hdr[0] (its length in |*len|), or NULL
   when hdr[0] has no line |i|, and sets |*shared| to whether it is line
   |i| of every one of the |n| headers.  (Every point's header has the
   same lines, sim_report_header's five; lines beyond hdr[0]'s are not
   compared.) */
static const char *line_shared(char *const *hdr, uint32_t n, uint32_t i,
                               size_t *len, int *shared) {
  const char *l0 = nth_line(hdr[0], i, len);
  uint32_t p;

  *shared = 1;
  for (p = 1; l0 && p < n; ++p) {
    size_t lp;
    const char *l = nth_line(hdr[p], i, &lp);
    if (l == NULL || lp != *len || memcmp(l, l0, lp) != 0) {
      *shared = 0;
    }
  }
  return l0;
}

void sim_report_header_common(FILE *f, char *const *hdr, uint32_t n) {
  uint32_t i, p;
  size_t len;
  int shared;
  const char *l0;

  for (i = 0; (l0 = line_shared(hdr, n, i, &len, &shared)) != NULL; ++i) {
    size_t common = len;
    if (shared) {
      fprintf(f, "%.*s\n", (int)len, l0);
      continue;
    }
    /* What every point's line begins with, back to a blank. */
    for (p = 1; p < n; ++p) {
      size_t lp, k = 0;
      const char *l = nth_line(hdr[p], i, &lp);
      if (l == NULL) {
        common = 0;
        break;
      }
      while (k < common && k < lp && l[k] == l0[k]) {
        ++k;
      }
      common = k;
    }
    while (common > 0 && l0[common - 1] != ' ') {
      --common;
    }
    fprintf(f, "%.*s(varies: see each sweep point)\n", (int)common, l0);
  }
}

char *sim_report_header_own(char *const *hdr, uint32_t n, uint32_t p) {
  char *buf = NULL;
  size_t len = 0, ll;
  FILE *f = open_memstream(&buf, &len);
  uint32_t i;
  int shared;

  if (f == NULL) {
    return NULL;
  }
  for (i = 0; line_shared(hdr, n, i, &ll, &shared) != NULL; ++i) {
    const char *l = nth_line(hdr[p], i, &ll);
    if (!shared && l != NULL) {
      fprintf(f, "%.*s\n", (int)ll, l);
    }
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static void cell_d(sim_tbl *t, double v, int prec) {
  char b[TBL_CELL];
  snprintf(b, sizeof(b), "%.*f", prec, v);
  sim_tbl_cell(t, b);
}

static void cell_u64(sim_tbl *t, uint64_t v) {
  char b[32];
  snprintf(b, sizeof(b), "%llu", (unsigned long long)v);
  sim_tbl_cell(t, b);
}

static void cell_pair(sim_tbl *t, uint64_t a, uint64_t b) {
  char s[48];
  snprintf(s, sizeof(s), "%llu / %llu", (unsigned long long)a,
           (unsigned long long)b);
  sim_tbl_cell(t, s);
}

/* any_rpc says whether any of the |n| results measured an RPC class
   (the scenario's rpc_max): the table then adds its rows. */
static int any_rpc(const sim_result *res, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (res[i].rpc_on) {
      return 1;
    }
  }
  return 0;
}

/* any_lower says whether any of the |n| results ran over a lower layer
   (TCP over SRD): the table then adds that layer's repairs. */
static int any_lower(const sim_result *res, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (res[i].has_lower) {
      return 1;
    }
  }
  return 0;
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

static void cell_us(sim_tbl *t, double us) {
  char b[32];

  if (us >= 1e6) {
    snprintf(b, sizeof(b), "%.3g s", us / 1e6);
  } else if (us >= 1e3) {
    snprintf(b, sizeof(b), "%.4g ms", us / 1e3);
  } else {
    snprintf(b, sizeof(b), "%.4g us", us);
  }
  sim_tbl_cell(t, b);
}

/* run_bound says whether result |r| has bounded flows that did not all
   finish: its throughput is then the run's, not the transport's. */
static int run_bound(const sim_result *r) {
  uint32_t bounded = r->n_flows - r->n_flows_unbounded;

  return bounded > 0 && r->n_flows_done < bounded;
}

/* table_part fills |t| with the rows of the |n| results (at most
   SCN_MAX_TRANSPORTS) and prints it. */
static void table_part(FILE *f, sim_tbl *t, const sim_result *res, uint32_t n) {
  uint32_t i, q;
  static const char *const pn[4] = {"p50", "p99", "p99.9", "max"};
  int any_fct = 0, any_msg = 0, any_hol = 0, any_bound = 0;

  memset(t, 0, sizeof(*t));
  sim_tbl_row(t, "");
  for (i = 0; i < n; ++i) {
    sim_tbl_cell(t, res[i].transport);
  }
  for (i = 0; i < n; ++i) {
    any_fct |= res[i].n_flows_done > 0;
    any_msg |= res[i].n_msgs_done > 0;
    any_hol |= res[i].hol_msgs > 0;
  }
  sim_tbl_row(t, "throughput (Gb/s)");
  for (i = 0; i < n; ++i) {
    char b[TBL_CELL];
    if (run_bound(&res[i])) {
      /* The run ended first: say how much of the work it measured. */
      snprintf(b, sizeof(b), "%.2f (%u/%u done)", res[i].tput_gbps,
               res[i].n_flows_done, res[i].n_flows - res[i].n_flows_unbounded);
      any_bound = 1;
    } else {
      snprintf(b, sizeof(b), "%.2f", res[i].tput_gbps);
    }
    sim_tbl_cell(t, b);
  }
  sim_tbl_row(t, "  of capacity");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%.1f%% of %g", res[i].tput_fraction * 100,
             res[i].capacity_gbps);
    sim_tbl_cell(t, b);
  }
  sim_tbl_row(t, "Jain's fairness");
  for (i = 0; i < n; ++i) {
    cell_d(t, res[i].jain, 3);
  }
  sim_tbl_row(t, "flows done");
  for (i = 0; i < n; ++i) {
    char b[32];
    if (res[i].n_flows_unbounded == res[i].n_flows) {
      snprintf(b, sizeof(b), "%u unbounded", res[i].n_flows);
    } else {
      snprintf(b, sizeof(b), "%u/%u", res[i].n_flows_done,
               res[i].n_flows - res[i].n_flows_unbounded);
    }
    sim_tbl_cell(t, b);
  }
  if (any_fct) {
    for (q = 0; q < 4; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "flow completion %s", pn[q]);
      sim_tbl_row(t, l);
      for (i = 0; i < n; ++i) {
        cell_us(t, res[i].fct_us[q]);
      }
    }
    sim_tbl_row(t, "slowdown p50 / p99");
    for (i = 0; i < n; ++i) {
      char b[32];
      snprintf(b, sizeof(b), "%.2f / %.2f", res[i].slowdown[0],
               res[i].slowdown[1]);
      sim_tbl_cell(t, b);
    }
  }
  if (any_rpc(res, n)) {
    sim_tbl_row(t, "RPCs done");
    for (i = 0; i < n; ++i) {
      char b[32];
      snprintf(b, sizeof(b), "%u/%u", res[i].n_rpcs_done, res[i].n_rpcs);
      sim_tbl_cell(t, b);
    }
    for (q = 0; q < 3; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "RPC completion %s", pn[q]);
      sim_tbl_row(t, l);
      for (i = 0; i < n; ++i) {
        cell_us(t, res[i].rpc_us[q]);
      }
    }
    for (q = 0; q < 3; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "RPC slowdown %s", pn[q]);
      sim_tbl_row(t, l);
      for (i = 0; i < n; ++i) {
        cell_d(t, res[i].rpc_slowdown[q], 2);
      }
    }
  }
  if (any_msg) {
    sim_tbl_row(t, "messages done");
    for (i = 0; i < n; ++i) {
      char b[32];
      snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].n_msgs_done);
      sim_tbl_cell(t, b);
    }
    for (q = 0; q < 4; ++q) {
      char l[48];
      snprintf(l, sizeof(l), "message latency %s", pn[q]);
      sim_tbl_row(t, l);
      for (i = 0; i < n; ++i) {
        cell_us(t, res[i].lat_us[q]);
      }
    }
  }
  if (any_hol) {
    sim_tbl_row(t, "unreadable behind a hole");
    for (i = 0; i < n; ++i) {
      cell_us(t, res[i].hol_total_us);
    }
    sim_tbl_row(t, "  messages / longest");
    for (i = 0; i < n; ++i) {
      char b[40];
      snprintf(b, sizeof(b), "%llu / %.3g ms",
               (unsigned long long)res[i].hol_msgs, res[i].hol_max_us / 1e3);
      sim_tbl_cell(t, b);
    }
  }
  sim_tbl_row(t, "longest stall of a flow");
  for (i = 0; i < n; ++i) {
    cell_us(t, res[i].max_stall_us);
  }
  sim_tbl_row(t, "retransmitted packets");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].cnt.retransmits);
    sim_tbl_cell(t, b);
  }
  sim_tbl_row(t, "timeouts");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].cnt.timeouts);
    sim_tbl_cell(t, b);
  }
  if (any_lower(res, n)) {
    sim_tbl_row(t, "  by SRD below TCP: rtx / RTO");
    for (i = 0; i < n; ++i) {
      if (res[i].has_lower) {
        cell_pair(t, res[i].lower.retransmits, res[i].lower.timeouts);
      } else {
        sim_tbl_cell(t, "-");
      }
    }
  }
  sim_tbl_row(t, "drops (queue/down/loss)");
  for (i = 0; i < n; ++i) {
    char b[48];
    snprintf(b, sizeof(b), "%llu/%llu/%llu",
             (unsigned long long)res[i].drops_by[NETSIM_DROP_QUEUE],
             (unsigned long long)res[i].drops_by[NETSIM_DROP_LINK_DOWN],
             (unsigned long long)res[i].drops_by[NETSIM_DROP_LOSS]);
    sim_tbl_cell(t, b);
  }
  if (any_ber(res, n)) {
    sim_tbl_row(t, "corrupted on links");
    for (i = 0; i < n; ++i) {
      cell_u64(t, res[i].corrupted);
    }
    sim_tbl_row(t, "  at receiver / in header");
    for (i = 0; i < n; ++i) {
      cell_pair(t, res[i].cnt.corrupt_rx, res[i].cnt.corrupt_in_hdr);
    }
    sim_tbl_row(t, "  detected, dropped");
    for (i = 0; i < n; ++i) {
      cell_u64(t, res[i].cnt.corrupt_dropped);
    }
    sim_tbl_row(t, "  other drop / accepted");
    for (i = 0; i < n; ++i) {
      cell_pair(t, res[i].cnt.corrupt_other, res[i].cnt.corrupt_accepted);
    }
    sim_tbl_row(t, "unmatched deliveries");
    for (i = 0; i < n; ++i) {
      cell_u64(t, res[i].cnt.recv_errors);
    }
  }
  if (any_dup(res, n)) {
    sim_tbl_row(t, "duplicated on links");
    for (i = 0; i < n; ++i) {
      cell_u64(t, res[i].duplicated);
    }
    sim_tbl_row(t, "  copies at receivers");
    for (i = 0; i < n; ++i) {
      cell_u64(t, res[i].cnt.dup_rx);
    }
    sim_tbl_row(t, "  delivered twice / unmatched");
    for (i = 0; i < n; ++i) {
      cell_pair(t, res[i].dup_reads, res[i].cnt.unmatched);
    }
  }
  sim_tbl_row(t, "deepest queue (KB)");
  for (i = 0; i < n; ++i) {
    cell_d(t, (double)res[i].max_queue_bytes / 1000.0, 1);
  }
  sim_tbl_row(t, "path share min / max");
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
    sim_tbl_cell(t, b);
  }
  sim_tbl_row(t, "simulated until");
  for (i = 0; i < n; ++i) {
    cell_us(t, (double)res[i].end / 1e6);
  }
  sim_tbl_row(t, "packet-hops");
  for (i = 0; i < n; ++i) {
    char b[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)res[i].hops);
    sim_tbl_cell(t, b);
  }
  sim_tbl_print(f, t, n);
  if (any_bound) {
    fprintf(f, "  (N/M done): the run ended before its flows did; that "
               "throughput is bounded by the run length\n");
  }
}

void sim_report_table(FILE *f, const sim_result *res, uint32_t n,
                      const char *own) {
  sim_tbl *t;
  uint32_t i;

  if (n == 0) {
    return;
  }
  if (res[0].point[0]) {
    fprintf(f, "\n  -- %s\n", res[0].point);
  } else {
    fprintf(f, "\n");
  }
  if (own != NULL) {
    fputs(own, f);
  }
  t = malloc(sizeof(*t));
  if (t == NULL) {
    fprintf(f, "  (no table: out of memory)\n");
    return;
  }
  for (i = 0; i < n; i += SCN_MAX_TRANSPORTS) {
    table_part(f, t, res + i,
               n - i < SCN_MAX_TRANSPORTS ? n - i : SCN_MAX_TRANSPORTS);
  }
  free(t);
}
/* cut_short returns the result of the |n| that was interrupted, or NULL. */
static const sim_result *cut_short(const sim_result *res, uint32_t n) {
  uint32_t i;

  for (i = 0; i < n; ++i) {
    if (res[i].interrupted) {
      return &res[i];
    }
  }
  return NULL;
}

void sim_report_stopped(FILE *f, const sim_scn *s, const sim_result *res,
                        uint32_t n, const sim_report_stop *stop) {
  const sim_result *cut = cut_short(res, n);
  uint32_t i;

  if (cut) {
    char a[32], b[32];
    sim_fmt_time(cut->end, a, sizeof(a));
    sim_fmt_time(s->duration, b, sizeof(b));
    fprintf(f,
            "interrupted: %s%s%s stopped at %s of %s simulated; its column "
            "covers only that\n",
            cut->transport, cut->point[0] ? " at " : "", cut->point, a, b);
  } else {
    fprintf(f, "interrupted between runs\n");
  }
  if (stop->n_not_run == 0) {
    return;
  }
  fprintf(f, "not run:");
  for (i = 0; i < stop->n_not_run; ++i) {
    const sim_report_skip *k = &stop->not_run[i];
    int same = i > 0 && stop->not_run[i - 1].point_idx == k->point_idx;
    int last = i + 1 == stop->n_not_run ||
               stop->not_run[i + 1].point_idx != k->point_idx;
    fprintf(f, "%s%s", same ? ", " : i ? "; " : " ", k->transport);
    if (last && k->point[0]) {
      fprintf(f, " at %s", k->point);
    }
  }
  fprintf(f, "\n");
}

/* The JSON summary (tools/lib/tool_json.h, spaced: {"a": 1, "b": [1, 2]},
   one result per line). */

/* json_val writes |v| with six significant digits, or null for a NaN or
   a magnitude beyond 1e300, as the summary always had it. */
static void json_val(tool_json *j, double v) {
  if (v != v || v > 1e300 || v < -1e300) {
    tool_json_null(j);
  } else {
    tool_json_numf(j, "%.6g", v);
  }
}

/* json_num writes key |k| and the number |v| (json_val). */
static void json_num(tool_json *j, const char *k, double v) {
  tool_json_key(j, k);
  json_val(j, v);
}

/* json_pcts writes key |k| and the object of percentiles |v| (p50, p99,
   p99.9 and the largest). */
static void json_pcts(tool_json *j, const char *k, const double *v) {
  static const char *const names[4] = {"p50", "p99", "p999", "max"};
  int q;

  tool_json_key(j, k);
  tool_json_obj_begin(j);
  for (q = 0; q < 4; ++q) {
    json_num(j, names[q], v[q]);
  }
  tool_json_obj_end(j);
}

/* json_result writes result |r| as one object; |ber| and |dup| add the
   corruption and duplicate counts (see any_ber, any_dup). */
static void json_result(tool_json *j, const sim_result *r, int ber, int dup) {
  uint32_t p;

  tool_json_obj_begin(j);
  tool_json_kv_str(j, "name", r->transport);
  tool_json_kv_str(j, "kind", r->kind);
  tool_json_kv_str(j, "point", r->point);
  json_num(j, "throughput_gbps", r->tput_gbps);
  json_num(j, "throughput_fraction", r->tput_fraction);
  json_num(j, "capacity_gbps", r->capacity_gbps);
  json_pcts(j, "fct_us", r->fct_us);
  json_pcts(j, "slowdown", r->slowdown);
  json_pcts(j, "msg_latency_us", r->lat_us);
  if (r->rpc_on) {
    tool_json_kv_u64(j, "rpcs", r->n_rpcs);
    tool_json_kv_u64(j, "rpcs_done", r->n_rpcs_done);
    json_pcts(j, "rpc_us", r->rpc_us);
    json_pcts(j, "rpc_slowdown", r->rpc_slowdown);
  }
  json_num(j, "jain", r->jain);
  tool_json_kv_u64(j, "flows", r->n_flows);
  tool_json_kv_u64(j, "flows_done", r->n_flows_done);
  tool_json_kv_u64(j, "flows_unbounded", r->n_flows_unbounded);
  tool_json_kv_u64(j, "messages", r->n_msgs);
  tool_json_kv_u64(j, "messages_done", r->n_msgs_done);
  tool_json_kv_u64(j, "retransmits", r->cnt.retransmits);
  tool_json_kv_u64(j, "timeouts", r->cnt.timeouts);
  tool_json_kv_u64(j, "fast_recoveries", r->cnt.fast_recoveries);
  tool_json_kv_u64(j, "probes", r->cnt.probes);
  tool_json_kv_u64(j, "data_pkts", r->cnt.data_pkts);
  tool_json_kv_u64(j, "ctrl_pkts", r->cnt.ctrl_pkts);
  tool_json_kv_u64(j, "send_errors", r->cnt.send_errors);
  tool_json_kv_u64(j, "local_drops", r->cnt.local_drops);
  if (r->has_lower) {
    /* TCP over SRD: the counters above are TCP's; these the SRD layer's
       under it. */
    tool_json_key(j, "srd_below");
    tool_json_obj_begin(j);
    tool_json_kv_u64(j, "retransmits", r->lower.retransmits);
    tool_json_kv_u64(j, "timeouts", r->lower.timeouts);
    tool_json_kv_u64(j, "fast_recoveries", r->lower.fast_recoveries);
    tool_json_kv_u64(j, "data_pkts", r->lower.data_pkts);
    tool_json_kv_u64(j, "ctrl_pkts", r->lower.ctrl_pkts);
    tool_json_kv_u64(j, "send_errors", r->lower.send_errors);
    tool_json_obj_end(j);
  }
  tool_json_kv_u64(j, "drops", r->drops);
  tool_json_key(j, "drops_by_reason");
  tool_json_obj_begin(j);
  for (p = 0; p < NETSIM_DROP_REASONS; ++p) {
    tool_json_kv_u64(j, drop_names[p], r->drops_by[p]);
  }
  tool_json_obj_end(j);
  tool_json_kv_u64(j, "ecn_marks", r->ecn_marks);
  json_num(j, "hol_blocked_us_total", r->hol_total_us);
  json_num(j, "hol_blocked_us_max", r->hol_max_us);
  tool_json_kv_u64(j, "hol_blocked_msgs", r->hol_msgs);
  json_num(j, "max_stall_us", r->max_stall_us);
  tool_json_kv_u64(j, "max_queue_bytes", r->max_queue_bytes);
  tool_json_key(j, "path_share");
  tool_json_arr_begin(j);
  for (p = 0; p < r->n_paths; ++p) {
    json_val(j, r->path_share[p]);
  }
  tool_json_arr_end(j);
  tool_json_key(j, "busiest_queues");
  tool_json_arr_begin(j);
  for (p = 0; p < r->n_q; ++p) {
    tool_json_obj_begin(j);
    tool_json_kv_str(j, "link", r->q[p].name);
    tool_json_kv_u64(j, "max_bytes", r->q[p].max_bytes);
    json_num(j, "mean_bytes", r->q[p].mean_bytes);
    tool_json_obj_end(j);
  }
  tool_json_arr_end(j);
  json_num(j, "sim_end_us", (double)r->end / 1e6);
  tool_json_kv_bool(j, "completed", r->stopped_early);
  tool_json_kv_u64(j, "events", r->events);
  tool_json_kv_u64(j, "packet_hops", r->hops);
  tool_json_key(j, "trace_hash");
  tool_json_strf(j, "%016llx", (unsigned long long)r->trace_hash);
  if (r->interrupted) {
    tool_json_kv_bool(j, "interrupted", 1);
  }
  if (ber) {
    tool_json_key(j, "corruption");
    tool_json_obj_begin(j);
    tool_json_kv_u64(j, "corrupted", r->corrupted);
    tool_json_kv_u64(j, "bit_errors", r->bit_errors);
    tool_json_kv_u64(j, "received", r->cnt.corrupt_rx);
    tool_json_kv_u64(j, "in_header", r->cnt.corrupt_in_hdr);
    tool_json_kv_u64(j, "detected", r->cnt.corrupt_dropped);
    tool_json_kv_u64(j, "other_drops", r->cnt.corrupt_other);
    tool_json_kv_u64(j, "accepted", r->cnt.corrupt_accepted);
    tool_json_kv_u64(j, "unmatched_deliveries", r->cnt.recv_errors);
    tool_json_obj_end(j);
  }
  if (dup) {
    tool_json_key(j, "duplicates");
    tool_json_obj_begin(j);
    tool_json_kv_u64(j, "duplicated", r->duplicated);
    tool_json_kv_u64(j, "skipped", r->dup_skipped);
    tool_json_kv_u64(j, "received", r->cnt.dup_rx);
    tool_json_kv_u64(j, "delivered_twice", r->dup_reads);
    tool_json_kv_u64(j, "unmatched_deliveries", r->cnt.unmatched);
    tool_json_obj_end(j);
  }
  tool_json_obj_end(j);
}

int sim_report_json(FILE *f, const sim_scn *s, const sim_result *res,
                    uint32_t n, const sim_report_stop *stop) {
  int ber = any_ber(res, n), dup = any_dup(res, n);
  tool_json j;
  uint32_t i;

  tool_json_init(&j, f, TOOL_JSON_SPACED);
  tool_json_obj_begin(&j);
  tool_json_kv_str(&j, "scenario", s->name);
  tool_json_kv_str(&j, "file", s->file);
  tool_json_kv_u64(&j, "seed", s->seed);
  json_num(&j, "duration_us", (double)s->duration / 1e6);
  tool_json_kv_u64(&j, "hosts", s->n_hosts);
  tool_json_key(&j, "transports");
  tool_json_arr_begin(&j);
  for (i = 0; i < n; ++i) {
    tool_json_ws(&j, "\n  ");
    json_result(&j, &res[i], ber, dup);
  }
  tool_json_ws(&j, "\n");
  tool_json_arr_end(&j);
  if (stop) {
    const sim_result *cut = cut_short(res, n);
    tool_json_kv_bool(&j, "interrupted", 1);
    tool_json_key(&j, "interrupted_at");
    if (cut) {
      tool_json_obj_begin(&j);
      tool_json_kv_str(&j, "transport", cut->transport);
      tool_json_kv_str(&j, "point", cut->point);
      json_num(&j, "sim_time_us", (double)cut->end / 1e6);
      tool_json_obj_end(&j);
    } else {
      tool_json_null(&j);
    }
    tool_json_key(&j, "not_run");
    tool_json_arr_begin(&j);
    for (i = 0; i < stop->n_not_run; ++i) {
      tool_json_obj_begin(&j);
      tool_json_kv_str(&j, "transport", stop->not_run[i].transport);
      tool_json_kv_str(&j, "point", stop->not_run[i].point);
      tool_json_obj_end(&j);
    }
    tool_json_arr_end(&j);
  }
  tool_json_obj_end(&j);
  /* The calls above are well formed: an error is the stream's. */
  return tool_json_finish(&j) == 0 ? 0 : -1;
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

/* csv_field writes |v| as one CSV field: as it is, or in double quotes
   (each quote doubled) when it holds a comma, a quote or a line break
   (RFC 4180). */
static void csv_field(FILE *f, const char *v) {
  if (strpbrk(v, ",\"\r\n") == NULL) {
    fputs(v, f);
    return;
  }
  fputc('"', f);
  for (; *v; ++v) {
    if (*v == '"') {
      fputc('"', f);
    }
    fputc(*v, f);
  }
  fputc('"', f);
}

/* csv_runs writes runs.csv, faults.csv and flow_throughput.csv: what
   srd-plot needs besides the series (each run's capacity and sweep
   point, the faults it applied, the per-flow series).  Returns 0, or -1
   with a message in |err|. */
static int csv_runs(const char *dir, const sim_result *res, uint32_t n,
                    char *err, size_t errlen) {
  FILE *f;
  uint32_t i, j, k;

  if ((f = open_out(dir, "runs.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,kind,capacity_gbps,throughput_gbps,sim_end_us,"
             "label\n");
  for (i = 0; i < n; ++i) {
    fprintf(f, "%u,%s,%s,%.4f,%.4f,%.3f,", res[i].point_idx, res[i].transport,
            res[i].kind, res[i].capacity_gbps, res[i].tput_gbps,
            (double)res[i].end / 1e6);
    csv_field(f, res[i].point);
    fputc('\n', f);
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/runs.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "faults.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,fault,kind,link,cable,cables,at_us,routed_us,"
             "value\n");
  for (i = 0; i < n; ++i) {
    for (j = 0; j < res[i].n_faults; ++j) {
      const sim_faultrec *x = &res[i].faults[j];
      fprintf(f, "%u,%s,%u,%s,%s,%s,%u", res[i].point_idx, res[i].transport, j,
              x->kind, x->link, x->cable, x->n_cables);
      tm_us(f, x->at);
      tm_us(f, x->routed);
      fprintf(f, ",%g\n", x->value);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/faults.csv: write failed", dir);
    return -1;
  }
  if ((f = open_out(dir, "flow_throughput.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,flow,time_us,gbps\n");
  for (i = 0; i < n; ++i) {
    for (k = 0; res[i].fbins && k < res[i].n_fseries; ++k) {
      for (j = 0; j < res[i].n_fbins; ++j) {
        fprintf(f, "%u,%s,%u,%.3f,%.4f\n", res[i].point_idx, res[i].transport,
                res[i].fseries_flow[k],
                (double)((uint64_t)j * res[i].fbin_ps) / 1e6,
                res[i].fbins[(size_t)k * res[i].n_fbins + j]);
      }
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/flow_throughput.csv: write failed", dir);
    return -1;
  }
  return 0;
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
  if ((f = open_out(dir, "links.csv", err, errlen)) == NULL) {
    return -1;
  }
  fprintf(f, "point,transport,link,bytes,load,queue_drops,max_queue_bytes,"
             "mean_queue_bytes\n");
  for (i = 0; i < n; ++i) {
    for (j = 0; res[i].links && j < res[i].n_links; ++j) {
      const sim_linkstat *l = &res[i].links[j];
      fprintf(f, "%u,%s,%s,%llu,%.4f,%llu,%llu,%.0f\n", res[i].point_idx,
              res[i].transport, l->name, (unsigned long long)l->bytes, l->load,
              (unsigned long long)l->queue_drops,
              (unsigned long long)l->max_q_bytes, l->mean_q_bytes);
    }
  }
  if (fclose(f) != 0) {
    snprintf(err, errlen, "%s/links.csv: write failed", dir);
    return -1;
  }
  if (csv_runs(dir, res, n, err, errlen) != 0) {
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
