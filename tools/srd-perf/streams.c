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
  result r;
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

int run_streams(const opts *o, const struct sockaddr_storage *srv,
                socklen_t srv_len) {
  uint32_t n = o->streams, k;
  stream *st = calloc(n, sizeof(*st));
  pthread_t *th = calloc(n, sizeof(*th));
  result sum;
  double worst_p50 = 0, worst_p99 = 0, worst_max = 0, secs = 0;
  int rc = 0, all_complete = 1;

  if (st == NULL || th == NULL) {
    tool_die("out of memory");
  }
  for (k = 0; k < n; ++k) {
    st[k].o = *o;
    st[k].o.streams = 1;
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
  memset(&sum, 0, sizeof(sum));
  for (k = 0; k < n; ++k) {
    result *r = &st[k].r;
    pthread_join(th[k], NULL);
    fclose(st[k].f);
    rc = worse(rc, st[k].rc);
    sum.iters += r->iters;
    sum.mbps += r->mbps;
    sum.gbps += r->gbps;
    sum.msg_rate += r->msg_rate;
    sum.retransmits += r->retransmits;
    sum.srv_received += r->srv_received;
    sum.srv_dups += r->srv_dups;
    sum.srv_corrupt += r->srv_corrupt;
    all_complete &= r->complete;
    worst_p50 = r->p50 > worst_p50 ? r->p50 : worst_p50;
    worst_p99 = r->p99 > worst_p99 ? r->p99 : worst_p99;
    worst_max = r->max > worst_max ? r->max : worst_max;
    secs = r->seconds > secs ? r->seconds : secs;
  }
  if (o->json) {
    printf("{\"streams\": [");
    for (k = 0; k < n; ++k) {
      size_t l = st[k].len;
      while (l > 0 && st[k].buf[l - 1] == '\n') {
        --l;
      }
      printf("%s%.*s", k ? ", " : "", (int)l, l ? st[k].buf : "null");
    }
    printf("], \"sum\": {\"streams\": %u, \"test\": \"%s\", \"size\": %" PRIu64
           ", \"iterations\": %" PRIu64 ", \"seconds\": %.6f, \"mbps\": %.3f, "
           "\"gbps\": %.4f, \"msg_rate\": %.1f, \"lat_us_worst\": {\"p50\": "
           "%.2f, \"p99\": %.2f, \"max\": %.2f}, \"retransmits\": %" PRIu64
           ", \"complete\": %s, \"server\": {\"received\": %" PRIu64
           ", \"duplicates\": %" PRIu64 ", \"corrupted\": %" PRIu64 "}}}\n",
           n, test_names[o->test], o->size, sum.iters, secs, sum.mbps, sum.gbps,
           sum.msg_rate, worst_p50, worst_p99, worst_max, sum.retransmits,
           all_complete ? "true" : "false", sum.srv_received, sum.srv_dups,
           sum.srv_corrupt);
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
    printf("[SUM] %u streams, %s %" PRIu64 " B: %" PRIu64
           " iterations, %.1f MB/s, %.3f Gbit/s, %.0f msg/s; latency (worst "
           "stream) p50 %.2f us, p99 %.2f us, max %.2f us; %" PRIu64
           " retransmits%s\n",
           n, test_names[o->test], o->size, sum.iters, sum.mbps, sum.gbps,
           sum.msg_rate, worst_p50, worst_p99, worst_max, sum.retransmits,
           all_complete ? "" : " (incomplete)");
  }
  fflush(stdout);
  for (k = 0; k < n; ++k) {
    free(st[k].buf);
  }
  free(st);
  free(th);
  return rc;
}
