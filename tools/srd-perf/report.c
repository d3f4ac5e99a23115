/*
 * report.c: srd-perf's output: the text table (a header, a row per
 * size, notes under a row), CSV (a header line, a line per size) and
 * JSON (an object per size, an array with -a; docs/transports.md lists
 * the keys), written with tool_json in its spaced style.  A --bidir size
 * makes three rows: forward, reverse, and their sum ("bidir").
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "perf.h"
#include "tool_srd.h"

void report_init(report *rp, const opts *o) {
  memset(rp, 0, sizeof(*rp));
  rp->o = o;
  rp->first_row = 1;
  rp->json_first = 1;
  if (o->stream_id) {
    snprintf(rp->stream, sizeof(rp->stream), "%u", o->stream_id);
  }
}

void result_add(result *sum, const result *r) {
  sum->iters += r->iters;
  sum->mbps += r->mbps;
  sum->gbps += r->gbps;
  sum->msg_rate += r->msg_rate;
  sum->retransmits += r->retransmits;
  sum->srv_received += r->srv_received;
  sum->srv_dups += r->srv_dups;
  sum->srv_corrupt += r->srv_corrupt;
  sum->srv_errors += r->srv_errors;
  sum->sent += r->sent;
  sum->rx_received += r->rx_received;
  sum->rx_dups += r->rx_dups;
  sum->rx_corrupt += r->rx_corrupt;
  sum->rx_errors += r->rx_errors;
  sum->complete &= r->complete;
  sum->p50 = r->p50 > sum->p50 ? r->p50 : sum->p50;
  sum->p99 = r->p99 > sum->p99 ? r->p99 : sum->p99;
  sum->p999 = r->p999 > sum->p999 ? r->p999 : sum->p999;
  sum->max = r->max > sum->max ? r->max : sum->max;
  sum->seconds = r->seconds > sum->seconds ? r->seconds : sum->seconds;
}

void report_header(const report *rp, const char *peer, xport *x, FILE *f) {
  const opts *o = rp->o;

  if (o->json || o->csv) {
    return;
  }
  fprintf(f, "%s: %s %s%s to %s, %s, %s%s%s\n", tool_name(), o->transport,
          test_names[o->test],
          o->dir == D_REV     ? " reverse (the server sends)"
          : o->dir == D_BIDIR ? " both ways"
                              : "",
          peer, o->duration > 0 ? "timed" : "counted",
          o->busy ? "busy-poll" : "blocking", o->verify ? ", verify" : "",
          o->mem == XPORT_MEM_CUDA ? ", CUDA device memory" : "");
  fprintf(f, "  transport: %s\n", xport_describe(x));
  if (o->impair_on) {
    fprintf(f,
            "  impairments: loss %.3g%%, dup %.3g%%, reorder %.3g%%, delay "
            "%.3g us, jitter %.3g us, rate %.3g Gb/s, blackhole 0x%" PRIx64
            "\n",
            o->imp.loss * 100, o->imp.dup * 100, o->imp.reorder * 100,
            (double)o->imp.delay_ns / 1e3, (double)o->imp.jitter_ns / 1e3,
            (double)o->imp.rate_bps / 1e9, o->blackhole_mask);
    if (o->imp.corrupt > 0 || o->imp.dup_delay_ns) {
      fprintf(f, "  corruption: %.3g%% of datagrams, duplicates %.3g us late\n",
              o->imp.corrupt * 100, (double)o->imp.dup_delay_ns / 1e3);
    }
  }
  fprintf(f, "%10s %9s %6s %10s %8s %10s %9s %9s %9s %9s %8s %-7s  %s\n",
          "size", "iters", "window", "MB/s", "Gbit/s", "msg/s",
          o->test == T_LAT ? "rtt p50" : "p50 us", "p99 us", "p99.9 us",
          "max us", "retrans", "dir", "path share %");
}

static void path_share(const result *r, char *buf, size_t cap) {
  uint64_t tot = 0;
  uint32_t i;
  size_t k = 0;

  for (i = 0; i < r->n_paths; ++i) {
    tot += r->path_pkts[i];
  }
  buf[0] = 0;
  for (i = 0; i < r->n_paths && k + 8 < cap; ++i) {
    k += (size_t)snprintf(buf + k, cap - k, "%s%.0f", i ? "/" : "",
                          tot ? 100.0 * (double)r->path_pkts[i] / (double)tot
                              : 0.0);
  }
}

/* json_keys writes |r|'s keys into the object begun. */
static void json_keys(report *rp, const result *r) {
  const opts *o = rp->o;
  tool_json *j = &rp->j;
  uint64_t tot = 0;
  uint32_t i;

  for (i = 0; i < r->n_paths; ++i) {
    tot += r->path_pkts[i];
  }
  tool_json_kv_str(j, "transport", o->transport);
  tool_json_kv_str(j, "mem", o->mem == XPORT_MEM_CUDA ? "cuda" : "host");
  tool_json_kv_str(j, "test", test_names[r->test]);
  tool_json_kv_str(j, "direction", dir_names[r->dir]);
  tool_json_kv_u64(j, "size", r->size);
  tool_json_kv_u64(j, "iterations", r->iters);
  tool_json_kv_u64(j, "warmup", r->warmup);
  tool_json_kv_u64(j, "window", r->window);
  tool_json_kv_numf(j, "seconds", "%.6f", r->seconds);
  tool_json_kv_numf(j, "mbps", "%.3f", r->mbps);
  tool_json_kv_numf(j, "gbps", "%.4f", r->gbps);
  tool_json_kv_numf(j, "msg_rate", "%.1f", r->msg_rate);
  tool_json_kv_str(j, "lat_kind", r->test == T_LAT ? "rtt" : "completion");
  tool_json_key(j, "lat_us");
  tool_json_obj_begin(j);
  tool_json_kv_numf(j, "p50", "%.2f", r->p50);
  tool_json_kv_numf(j, "p99", "%.2f", r->p99);
  tool_json_kv_numf(j, "p999", "%.2f", r->p999);
  tool_json_kv_numf(j, "max", "%.2f", r->max);
  tool_json_kv_numf(j, "avg", "%.2f", r->avg);
  tool_json_obj_end(j);
  tool_json_kv_u64(j, "retransmits", r->retransmits);
  tool_json_kv_u64(j, "paths", r->n_paths);
  tool_json_kv_u64(j, "burst", strcmp(o->transport, "udp") == 0 ? o->burst : 0);
  tool_json_kv_numf(j, "avg_burst", "%.2f", r->avg_burst);
  tool_json_kv_u64(j, "mtu", o->mtu);
  tool_json_kv_bool(j, "busy_poll", o->busy);
  tool_json_key(j, "path_pkts");
  tool_json_arr_begin(j);
  for (i = 0; i < r->n_paths; ++i) {
    tool_json_u64(j, r->path_pkts[i]);
  }
  tool_json_arr_end(j);
  tool_json_key(j, "path_share");
  tool_json_arr_begin(j);
  for (i = 0; i < r->n_paths; ++i) {
    tool_json_numf(j, "%.4f",
                   tot ? (double)r->path_pkts[i] / (double)tot : 0.0);
  }
  tool_json_arr_end(j);
  tool_json_kv_u64(j, "bad_in", r->bad_in);
  tool_json_kv_u64(j, "errors", r->errors);
  tool_json_key(j, "server");
  tool_json_obj_begin(j);
  if (r->dir != D_REV) {
    tool_json_kv_u64(j, "received", r->srv_received);
    tool_json_kv_u64(j, "duplicates", r->srv_dups);
    tool_json_kv_u64(j, "corrupted", r->srv_corrupt);
    tool_json_kv_u64(j, "errors", r->srv_errors);
  }
  if (r->dir == D_REV) {
    tool_json_kv_u64(j, "sent", r->sent);
  }
  tool_json_obj_end(j);
  /* whichever end received: the server forward, this client reverse */
  tool_json_key(j, "receiver");
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "sent", r->sent);
  tool_json_kv_u64(j, "received", r->rx_received);
  tool_json_kv_u64(j, "duplicates", r->rx_dups);
  tool_json_kv_u64(j, "corrupted", r->rx_corrupt);
  tool_json_kv_u64(j, "errors", r->rx_errors);
  tool_json_obj_end(j);
  tool_json_key(j, "impairments");
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "lost", r->imp_lost);
  tool_json_kv_u64(j, "duplicated", r->imp_dup);
  tool_json_kv_u64(j, "delayed", r->imp_delayed);
  tool_json_kv_u64(j, "queue_drops", r->imp_qdrops);
  tool_json_kv_u64(j, "blackholed", r->imp_blackholed);
  tool_json_kv_u64(j, "corrupted", r->imp_corrupted);
  tool_json_kv_u64(j, "dup_delayed", r->imp_dup_delayed);
  tool_json_obj_end(j);
  tool_json_kv_bool(j, "verify", o->verify);
  tool_json_kv_bool(j, "complete", r->complete);
  tool_json_key(j, "stopped");
  if (r->stopped) {
    tool_json_str(j, r->stopped);
  } else {
    tool_json_null(j);
  }
  tool_json_key(j, "drops");
  if (strcmp(o->transport, "udp") == 0) {
    tool_json_obj_begin(j);
    tool_json_key(j, "client");
    tool_json_drops(j, r->cli_drops, NDROPS);
    tool_json_key(j, "server");
    tool_json_drops(j, r->srv_drops, NDROPS);
    tool_json_obj_end(j);
  } else {
    tool_json_null(j);
  }
}

/* json_row writes |r| (and, for a --bidir sum, the |fwd| and |rev| rows
   inside it) as one JSON object: the document itself, or with -a the
   next element of its array, on a line of its own. */
static void json_row(report *rp, const result *r, const result *fwd,
                     const result *rev, FILE *f) {
  tool_json *j = &rp->j;

  if (rp->json_first) {
    tool_json_init(j, f, TOOL_JSON_SPACED);
    if (rp->o->sweep) {
      tool_json_arr_begin(j);
    }
  }
  if (rp->o->sweep) {
    tool_json_ws(j, "\n");
  }
  tool_json_obj_begin(j);
  json_keys(rp, r);
  if (fwd && rev) {
    tool_json_key(j, "forward");
    tool_json_obj_begin(j);
    json_keys(rp, fwd);
    tool_json_obj_end(j);
    tool_json_key(j, "reverse");
    tool_json_obj_begin(j);
    json_keys(rp, rev);
    tool_json_obj_end(j);
  }
  tool_json_obj_end(j);
}

void report_drops(FILE *f, const uint64_t *drops) {
  int d, any = 0;

  for (d = 0; d < NDROPS; ++d) {
    if (drops[d]) {
      fprintf(f, "%s%s %" PRIu64, any ? ", " : " ",
              srd_drop_reason_name((srd_drop_reason)d), drops[d]);
      any = 1;
    }
  }
  if (!any) {
    fprintf(f, " none");
  }
}

/* row_out prints |r| as report_row does; a --bidir sum's JSON holds
   |fwd| and |rev|. */
static void row_out(report *rp, const result *r, const result *fwd,
                    const result *rev, FILE *f) {
  const opts *o = rp->o;
  char share[600];

  path_share(r, share, sizeof(share));
  if (o->csv) {
    if (rp->first_row) {
      fprintf(f,
              "transport,test,size,iterations,window,seconds,mbps,gbps,"
              "msg_rate,lat_p50_us,lat_p99_us,lat_p999_us,lat_max_us,"
              "retransmits,paths,burst,complete,direction%s\n",
              rp->stream[0] ? ",stream" : "");
    }
    fprintf(f,
            "%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.3f,%.4f,%.1f,"
            "%.2f,%.2f,%.2f,%.2f,%" PRIu64 ",%u,%u,%d,%s%s%s\n",
            o->transport, test_names[r->test], r->size, r->iters, r->window,
            r->seconds, r->mbps, r->gbps, r->msg_rate, r->p50, r->p99, r->p999,
            r->max, r->retransmits, r->n_paths,
            strcmp(o->transport, "udp") == 0 ? o->burst : 0, r->complete,
            dir_names[r->dir], rp->stream[0] ? "," : "", rp->stream);
  } else if (o->json) {
    json_row(rp, r, fwd, rev, f);
  } else {
    fprintf(f,
            "%10" PRIu64 " %9" PRIu64 " %6" PRIu64 " %10.1f %8.3f %10.0f %9.2f "
            "%9.2f %9.2f %9.2f %8" PRIu64 " %-7s  %s\n",
            r->size, r->iters, r->window, r->mbps, r->gbps, r->msg_rate, r->p50,
            r->p99, r->p999, r->max, r->retransmits, dir_names[r->dir], share);
    if (r->stopped) {
      fprintf(f, "%10s stopped early: %s\n", "", r->stopped);
    }
    if (o->imp.corrupt > 0 || o->imp.dup_delay_ns) {
      fprintf(f,
              "%10s impaired here: %" PRIu64 " datagrams corrupted, %" PRIu64
              " duplicates late; engine drops: client",
              "", r->imp_corrupted, r->imp_dup_delayed);
      report_drops(f, r->cli_drops);
      fprintf(f, "; server");
      report_drops(f, r->srv_drops);
      fprintf(f, "\n");
    }
  }
  rp->first_row = 0;
  rp->json_first = 0;
  fflush(f);
}

void report_row(report *rp, const result *r, FILE *f) {
  row_out(rp, r, NULL, NULL, f);
}

void report_rows(report *rp, const result *rows, int n, FILE *f) {
  if (n == 3 && rp->o->json) {
    row_out(rp, &rows[2], &rows[0], &rows[1], f);
    return;
  }
  for (int i = 0; i < n; ++i) {
    row_out(rp, &rows[i], NULL, NULL, f);
  }
}

int report_end(report *rp) {
  if (!rp->o->json || rp->json_first) {
    return 0;
  }
  if (rp->o->sweep) {
    tool_json_ws(&rp->j, "\n");
    tool_json_arr_end(&rp->j);
  }
  return tool_json_finish(&rp->j);
}
