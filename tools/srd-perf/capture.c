/*
 * capture.c: srd-perf --pcap.  The udp backend shows every datagram it
 * exchanges to a tap (xport_config.tap); this writes them to a pcap file
 * with their real addresses and ports, on the wall clock, through the
 * pcap writer srd-loopback and srd-sim use (tools/lib/srd_pcap.h).  The
 * client's xport is tapped, or a server's, not the loopback server's
 * thread's; with -P every stream's, each on a thread of its own, into the
 * one file: a lock keeps their records whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perf.h"
#include "srd_pcap.h"

static srd_pcap *cap;
static const char *cap_path;
/* rt_off turns xport_now()'s monotonic clock into the wall clock a
   capture's timestamps are read in. */
static int64_t rt_off;
static uint64_t cap_skipped;
static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;

void capture_open(const opts *o) {
  char err[256];
  struct timespec rt;

  if (o->pcap == NULL) {
    return;
  }
  if (srd_pcap_open(&cap, o->pcap, o->pcap_snaplen, err, sizeof(err)) != 0) {
    tool_die("--pcap %s", err);
  }
  cap_path = o->pcap;
  clock_gettime(CLOCK_REALTIME, &rt);
  rt_off = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - (int64_t)xport_now();
}

void capture_tap(void *user, int out, const struct sockaddr *src,
                 const struct sockaddr *dst, const uint8_t *hdr, size_t hdrlen,
                 const uint8_t *payload, size_t paylen, uint64_t ts_ns) {
  (void)user, (void)out;
  pthread_mutex_lock(&cap_lock);
  if (cap == NULL ||
      srd_pcap_write_udp(cap, (uint64_t)((int64_t)ts_ns + rt_off), src, dst,
                         hdr, hdrlen, payload, paylen) != 0) {
    ++cap_skipped;
  }
  pthread_mutex_unlock(&cap_lock);
}

int capture_close(void) {
  char err[256];
  uint64_t n;

  if (cap == NULL) {
    return 0;
  }
  n = srd_pcap_count(cap);
  if (srd_pcap_close(cap, err, sizeof(err)) != 0) {
    cap = NULL;
    fprintf(stderr, "%s: --pcap %s: %s\n", tool_name(), cap_path, err);
    return 1;
  }
  cap = NULL;
  fprintf(stderr, "%s: wrote %" PRIu64 " packets to %s", tool_name(), n,
          cap_path);
  if (cap_skipped) {
    fprintf(stderr, " (%" PRIu64 " left out: not IP, or too large)",
            cap_skipped);
  }
  fprintf(stderr, "\n");
  return 0;
}
