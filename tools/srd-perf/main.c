/*
 * srd-perf: a perftest in the manner of ib_send_bw, fi_pingpong and
 * ucx_perftest for the transports of transports/xport.h: emulated SRD over
 * UDP (io_uring) and kernel TCP, side by side.
 *
 *   srd-perf -s [ADDR]             server (any address when ADDR is absent)
 *   srd-perf [options] SERVER      client: runs the tests against SERVER
 *   srd-perf --loopback [options]  both ends in this process, one thread each
 *
 * Tests: bw (streaming with a window of outstanding messages), lat (ping
 * pong: round-trip times), rate (small messages, a deep window).  The
 * client drives; the server follows the client's control messages, which
 * travel over the transport under test:
 *
 *   HELLO -> HELLO_OK, then per size: START -> READY(drains),
 *   [DRAIN x drains], data..., DONE(count) -> RESULT, and at last BYE.
 *
 * Every message starts with a 4-byte magic ("SRPC" control, "SRPD"
 * data), so a peer that answers anything else is named as not being an
 * srd-perf server.  A data message carries its index; --verify fills it
 * with a pattern of that index and the server checks every byte and that
 * each index arrives once.  Timing uses CLOCK_MONOTONIC after the
 * warm-up.  A run stops at the iteration count, the duration, the time
 * limit or Ctrl-C, whichever comes first, and prints what it measured.
 *
 * Exit status: 0 success; 1 the peer vanished, was unreachable, answered
 * garbage, or a check failed; 2 bad usage; 130 interrupted (client).
 *
 * This file is the process: its signals, buffers, CPU pinning, the
 * loopback mode and main.  perf.h lists the other files.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

atomic_int interrupted;

static void on_signal(int sig) {
  (void)sig;
  atomic_store(&interrupted, 1);
}

void *xalloc(size_t n) {
  void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
  if (p == NULL) {
    tool_die("out of memory (%zu bytes)", n);
  }
  return p;
}

void pin(int cpu) {
  cpu_set_t cs;

  CPU_ZERO(&cs);
  CPU_SET(cpu, &cs);
  if (pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs) != 0) {
    fprintf(stderr, "%s: cannot pin to CPU %d (ignored)\n", tool_name(), cpu);
  }
}

/* ------------------------------------------------------------------------ */
/* Loopback: the server on a thread of its own (server.c), the client here  */

static int run_loopback(const opts *o) {
  lb_server ls;
  pthread_t th;
  struct sockaddr_storage ss;
  socklen_t l;
  int rc, family = o->family == AF_INET6 ? AF_INET6 : AF_INET;

  memset(&ls, 0, sizeof(ls));
  ls.o = o;
  ls.family = family;
  if (pthread_create(&th, NULL, lb_server_main, &ls) != 0) {
    tool_die("cannot start the server thread");
  }
  while (atomic_load(&ls.ready) == 0) {
    sched_yield();
  }
  if (atomic_load(&ls.ready) < 0) {
    pthread_join(th, NULL);
    return 1;
  }
  if (o->ncpu > 0) {
    pin(o->cpu[0]);
  }
  xport_parse_addr(family == AF_INET6 ? "::1" : "127.0.0.1", ls.port, family,
                   &ss, &l);
  rc = o->streams > 1 ? run_streams(o, &ss, l) : run_client(o, &ss, l);
  atomic_store(&ls.stop, 1);
  pthread_join(th, NULL);
  return rc;
}

int main(int argc, char **argv) {
  opts o;
  struct sigaction sa;
  int rc;

  parse_args(&o, argc, argv);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  capture_open(&o);
  if (o.server) {
    rc = run_server(&o);
  } else if (o.loopback) {
    rc = run_loopback(&o);
  } else {
    struct sockaddr_storage ss;
    socklen_t l;
    if (xport_parse_addr(o.host, o.port, o.family, &ss, &l) != 0) {
      tool_usage_error("cannot resolve '%s'", o.host);
    }
    rc = o.streams > 1 ? run_streams(&o, &ss, l) : run_client(&o, &ss, l);
  }
  /* A capture that could not be written fails a run that did not. */
  if (capture_close() != 0 && rc == 0) {
    rc = 1;
  }
  return rc;
}
