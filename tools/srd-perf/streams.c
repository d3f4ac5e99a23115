/*
 * streams.c: -P N, parallel streams (iperf3's -P): N clients of the same
 * options in this process, each on a thread of its own with its own
 * xport and its own session at the server, run at once; then each
 * stream's output, and their sum.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

typedef struct stream {
  opts o;
  const struct sockaddr_storage *srv;
  socklen_t srv_len;
  FILE *f; /* its output, into buf */
  char *buf;
  size_t len;
  results r;
  int rc;
} stream;

static void *stream_main(void *arg) {
  stream *st = arg;

  st->rc = run_client_to(&st->o, st->srv, st->srv_len, st->f, &st->r);
  return NULL;
}

/* worse says which of two exit statuses is the worse: 1 (failed) over 130
   (interrupted) over 0. */
static int worse(int a, int b) {
  if (a == 1 || b == 1) {
    return 1;
  }
  return a > b ? a : b;
}

/* sum_row adds row |i| of every stream that has one of the same size and
   direction into *sum; returns how many did. */
static uint32_t sum_row(const stream *st, uint32_t n, int i, result *sum) {
  const result *ref = NULL;
  uint32_t k, m = 0;

  for (k = 0; k < n && ref == NULL; ++k) {
    if (i < st[k].r.n) {
      ref = &st[k].r.row[i];
    }
  }
  memset(sum, 0, sizeof(*sum));
  if (ref == NULL) {
    return 0;
  }
  sum->test = ref->test;
  sum->dir = ref->dir;
  sum->size = ref->size;
  sum->window = ref->window;
  sum->n_paths = ref->n_paths;
  sum->complete = 1;
  for (k = 0; k < n; ++k) {
    const result *r = &st[k].r.row[i];
    if (i < st[k].r.n && r->size == ref->size && r->dir == ref->dir) {
      result_add(sum, r);
      ++m;
    }
  }
  sum->complete &= m == n;
  return m;
}

/* json_sum prints |s|, the sum of |n| streams' rows, as one JSON object. */
static void json_sum(const result *s, uint32_t n) {
  printf("{\"streams\": %u, \"test\": \"%s\", \"direction\": \"%s\", "
         "\"size\": %" PRIu64 ", \"iterations\": %" PRIu64
         ", \"seconds\": %.6f, \"mbps\": %.3f, \"gbps\": %.4f, \"msg_rate\": "
         "%.1f, \"lat_us_worst\": {\"p50\": %.2f, \"p99\": %.2f, \"max\": "
         "%.2f}, \"retransmits\": %" PRIu64 ", \"complete\": %s, "
         "\"server\": {\"received\": %" PRIu64 ", \"duplicates\": %" PRIu64
         ", \"corrupted\": %" PRIu64 "}, \"receiver\": {\"sent\": %" PRIu64
         ", \"received\": %" PRIu64 ", \"duplicates\": %" PRIu64
         ", \"corrupted\": %" PRIu64 "}}",
         n, test_names[s->test], dir_names[s->dir], s->size, s->iters,
         s->seconds, s->mbps, s->gbps, s->msg_rate, s->p50, s->p99, s->max,
         s->retransmits, s->complete ? "true" : "false", s->srv_received,
         s->srv_dups, s->srv_corrupt, s->sent, s->rx_received, s->rx_dups,
         s->rx_corrupt);
}

int run_streams(const opts *o, const struct sockaddr_storage *srv,
                socklen_t srv_len) {
  uint32_t n = o->streams, k;
  stream *st = calloc(n, sizeof(*st));
  pthread_t *th = calloc(n, sizeof(*th));
  result sum;
  report rp;
  int rc = 0, i, nrows = 0;

  if (st == NULL || th == NULL) {
    tool_die("out of memory");
  }
  for (k = 0; k < n; ++k) {
    st[k].o = *o;
    st[k].o.streams = 1;
    st[k].o.stream_id = k + 1;
    if (o->local_port) {
      /* each stream its own ports (udp: --paths of them) */
      st[k].o.local_port = (uint16_t)(o->local_port + k * o->paths);
    }
    if (o->seed) {
      st[k].o.seed = o->seed + 7919ull * k;
    }
    st[k].srv = srv;
    st[k].srv_len = srv_len;
    st[k].f = open_memstream(&st[k].buf, &st[k].len);
    if (st[k].f == NULL) {
      tool_die("out of memory");
    }
  }
  for (k = 0; k < n; ++k) {
    if (pthread_create(&th[k], NULL, stream_main, &st[k]) != 0) {
      tool_die("cannot start stream %u's thread", k + 1);
    }
  }
  for (k = 0; k < n; ++k) {
    pthread_join(th[k], NULL);
    fclose(st[k].f);
    rc = worse(rc, st[k].rc);
    nrows = st[k].r.n > nrows ? st[k].r.n : nrows;
  }
  if (o->json) {
    /* "sum": one object, or with several rows (-a, --bidir) an array */
    printf("{\"streams\": [");
    for (k = 0; k < n; ++k) {
      size_t l = st[k].len;
      while (l > 0 && st[k].buf[l - 1] == '\n') {
        --l;
      }
      printf("%s%.*s", k ? ", " : "", (int)l, l ? st[k].buf : "null");
    }
    printf("], \"sum\": %s", nrows > 1 ? "[" : "");
    for (i = 0; i < nrows || (i == 0 && nrows == 0); ++i) {
      sum_row(st, n, i, &sum);
      if (nrows == 0) {
        sum.test = o->test;
        sum.dir = o->dir == D_BIDIR ? D_FWD : o->dir;
        sum.size = o->size;
      }
      printf("%s", i ? ", " : "");
      json_sum(&sum, n);
    }
    printf("%s}\n", nrows > 1 ? "]" : "");
  } else if (o->csv) {
    /* the first stream's header line, every stream's rows, the sums */
    for (k = 0; k < n; ++k) {
      char *line = st[k].buf, *nl;
      for (; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL) {
          break;
        }
        if (line != st[k].buf || k == 0 || strncmp(line, "transport,", 10)) {
          printf("%.*s\n", (int)(nl - line), line);
        }
      }
    }
    report_init(&rp, o);
    rp.first_row = 0;
    snprintf(rp.stream, sizeof(rp.stream), "sum");
    for (i = 0; i < nrows; ++i) {
      sum_row(st, n, i, &sum);
      report_row(&rp, &sum, stdout);
    }
  } else {
    for (k = 0; k < n; ++k) {
      char *line = st[k].buf, *nl;
      for (; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl == NULL) {
          printf("[%u] %s\n", k + 1, line);
          break;
        }
        printf("[%u] %.*s\n", k + 1, (int)(nl - line), line);
      }
    }
    for (i = 0; i < nrows || (i == 0 && nrows == 0); ++i) {
      sum_row(st, n, i, &sum);
      if (nrows == 0) {
        sum.test = o->test;
        sum.size = o->size;
      }
      printf("[SUM] %u streams, %s %" PRIu64 " B%s%s: %" PRIu64
             " iterations, %.1f MB/s, %.3f Gbit/s, %.0f msg/s; latency (worst "
             "stream) p50 %.2f us, p99 %.2f us, max %.2f us; %" PRIu64
             " retransmits%s\n",
             n, test_names[sum.test], sum.size, sum.dir ? " " : "",
             sum.dir ? dir_names[sum.dir] : "", sum.iters, sum.mbps, sum.gbps,
             sum.msg_rate, sum.p50, sum.p99, sum.max, sum.retransmits,
             sum.complete ? "" : " (incomplete)");
    }
  }
  fflush(stdout);
  for (k = 0; k < n; ++k) {
    free(st[k].buf);
  }
  free(st);
  free(th);
  return rc;
}
