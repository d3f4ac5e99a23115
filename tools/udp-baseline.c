/*
 * udp-baseline: what plain UDP sockets do on this machine, the reference
 * that `make bench` holds srd-perf against in the same run.
 *
 *   udp-baseline rate [-s SIZE] [-t SECS] [-n COUNT] [--gso N]
 *       one sender thread (sendmmsg, batches of 32) to one receiver thread
 *       (recvmmsg) over 127.0.0.1: datagrams per second received.  --gso N
 *       sends N datagrams per message with UDP GSO and receives with GRO,
 *       the batching srd-perf's udp backend uses (its --burst), so that a
 *       ratio against it compares the transports, not the batching.
 *   udp-baseline pingpong [-s SIZE] [-n COUNT]
 *       two threads bounce a datagram, both spinning on non-blocking
 *       recv (busy-poll): round-trip percentiles (nearest rank).
 *
 * Prints one line of key=value pairs.  Bounded by COUNT and by SECS (or
 * 10 s for pingpong).  Wall-clock timing belongs here, in a benchmark.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#  define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#  define UDP_GRO 104
#endif

#include "tool_clock.h"
#include "tool_hist.h"
#include "tool_opt.h"

#define BATCH 32

static size_t size = 64;
static uint32_t gso = 0; /* --gso: datagrams per GSO send (0: none) */
static double secs = 2;
static uint64_t count = 0;
static atomic_int ready, done;
static struct sockaddr_in rx_addr, tx_addr;

static void help(FILE *f) {
  fputs(
      "Usage: udp-baseline rate [OPTION]...\n"
      "  or:  udp-baseline pingpong [OPTION]...\n"
      "Measure what plain UDP sockets do on this machine over 127.0.0.1, the\n"
      "reference that `make bench` holds srd-perf against in the same run.\n"
      "\n"
      "  rate      one sender thread (sendmmsg, batches of 32) to one "
      "receiver\n"
      "            thread (recvmmsg): datagrams per second received\n"
      "  pingpong  two threads bounce a datagram, both busy-polling a\n"
      "            non-blocking recv: round-trip percentiles (nearest rank)\n"
      "\n"
      "Options:\n"
      "  -s, --size BYTES     datagram payload, 1..65000, K suffix allowed "
      "[64]\n"
      "  -t, --time SECS      how long rate sends, at most 60 s, units ns, "
      "us,\n"
      "                       ms, s allowed [2]\n"
      "  -n, --count N        rate: stop after N datagrams [0: no limit];\n"
      "                       pingpong: N round trips "
      "[20000]\n"
      "      --gso N          rate: N datagrams per send with UDP GSO, "
      "received\n"
      "                       with GRO (srd-perf's batching) [0: "
      "none]\n" TOOL_OPT_HELP_TEXT "\n"
      "Prints one line of key=value pairs: test, size, then tx_pkts, "
      "rx_pkts,\n"
      "seconds, rx_pps, rx_gbps and loss_pct (rate), or iters and "
      "rtt_p50_us,\n"
      "rtt_p99_us, rtt_p999_us, rtt_max_us (pingpong).  pingpong stops after "
      "10 s\n"
      "whatever the count.\n"
      "\n"
      "Exit status: 0, 1 if a socket failed or no round trip completed, 2 "
      "for\n"
      "bad usage.\n",
      f);
}

static const tool_info info = {"udp-baseline", help, NULL};

static int udp_socket(struct sockaddr_in *a) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 8 << 20;
  socklen_t l = sizeof(*a);

  if (fd < 0) {
    tool_die("socket: %s", strerror(errno));
  }
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
  }
  memset(a, 0, sizeof(*a));
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0) {
    tool_die("bind: %s", strerror(errno));
  }
  getsockname(fd, (struct sockaddr *)a, &l);
  return fd;
}

/* ------------------------------------------------------------------------ */
/* rate                                                                     */

static int rx_fd, tx_fd;
static uint64_t rx_pkts, tx_pkts;
static uint64_t rx_t0, rx_t1;

/* gro_segs is how many datagrams message |h| of |len| bytes holds: a GRO
   train says its segment size in a control message. */
static uint64_t gro_segs(struct msghdr *h, unsigned len) {
  struct cmsghdr *c;

  for (c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int seg;
      memcpy(&seg, CMSG_DATA(c), sizeof(seg));
      return seg > 0 ? ((uint64_t)len + (unsigned)seg - 1) / (unsigned)seg : 1;
    }
  }
  return 1;
}

static void *rate_rx(void *arg) {
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  char *buf = malloc(BATCH * 65536);
  static char ctl[BATCH][CMSG_SPACE(sizeof(int))];
  struct timeval tv = {0, 100000};
  int i, one = 1;

  (void)arg;
  if (buf == NULL) {
    tool_die("out of memory");
  }
  setsockopt(rx_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (gso && setsockopt(rx_fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) != 0) {
    tool_die("UDP_GRO: %s", strerror(errno));
  }
  for (i = 0; i < BATCH; ++i) {
    iov[i].iov_base = buf + (size_t)i * 65536;
    iov[i].iov_len = 65536;
    memset(&m[i], 0, sizeof(m[i]));
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  atomic_store(&ready, 1);
  for (;;) {
    int n;
    for (i = 0; gso && i < BATCH; ++i) {
      m[i].msg_hdr.msg_control = ctl[i];
      m[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
    }
    n = recvmmsg(rx_fd, m, BATCH, 0, NULL);
    if (n > 0) {
      uint64_t t = tool_now_ns();
      if (rx_pkts == 0) {
        rx_t0 = t;
      }
      for (i = 0; i < n; ++i) {
        rx_pkts += gso ? gro_segs(&m[i].msg_hdr, m[i].msg_len) : 1;
      }
      rx_t1 = t;
    } else if (atomic_load(&done)) {
      break;
    }
  }
  free(buf);
  return NULL;
}

static int run_rate(void) {
  struct mmsghdr m[BATCH];
  struct iovec iov;
  uint32_t per = gso ? gso : 1; /* datagrams per message */
  char *buf = calloc(per, size);
  static char ctl[CMSG_SPACE(sizeof(uint16_t))];
  pthread_t th;
  uint64_t t0, end;
  int i;

  rx_fd = udp_socket(&rx_addr);
  tx_fd = udp_socket(&tx_addr);
  if (buf == NULL) {
    tool_die("out of memory");
  }
  if (connect(tx_fd, (struct sockaddr *)&rx_addr, sizeof(rx_addr)) != 0) {
    tool_die("connect: %s", strerror(errno));
  }
  iov.iov_base = buf;
  iov.iov_len = size * per;
  if (gso) {
    /* Every message one GSO send of |gso| datagrams of |size| bytes. */
    struct msghdr h = {0};
    struct cmsghdr *c;
    uint16_t seg = (uint16_t)size;
    h.msg_control = ctl;
    h.msg_controllen = sizeof(ctl);
    c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(seg));
    memcpy(CMSG_DATA(c), &seg, sizeof(seg));
  }
  for (i = 0; i < BATCH; ++i) {
    memset(&m[i], 0, sizeof(m[i]));
    m[i].msg_hdr.msg_iov = &iov;
    m[i].msg_hdr.msg_iovlen = 1;
    if (gso) {
      m[i].msg_hdr.msg_control = ctl;
      m[i].msg_hdr.msg_controllen = sizeof(ctl);
    }
  }
  pthread_create(&th, NULL, rate_rx, NULL);
  while (!atomic_load(&ready)) {
    usleep(1000);
  }
  t0 = tool_now_ns();
  end = t0 + (uint64_t)(secs * 1e9);
  while (tool_now_ns() < end && (count == 0 || tx_pkts < count)) {
    int n = sendmmsg(tx_fd, m, BATCH, 0);
    if (n > 0) {
      tx_pkts += (uint64_t)n * per;
    } else if (n < 0 && gso && errno != EAGAIN && errno != ENOBUFS) {
      tool_die("UDP GSO send: %s", strerror(errno));
    }
  }
  atomic_store(&done, 1);
  pthread_join(th, NULL);
  {
    double dt = (double)(rx_t1 - rx_t0) / 1e9;
    double rate = dt > 0 ? (double)rx_pkts / dt : 0;
    printf("test=rate size=%zu gso=%u tx_pkts=%llu rx_pkts=%llu seconds=%.3f "
           "rx_pps=%.0f rx_gbps=%.3f loss_pct=%.2f\n",
           size, gso, (unsigned long long)tx_pkts, (unsigned long long)rx_pkts,
           dt, rate, rate * (double)size * 8 / 1e9,
           tx_pkts ? 100.0 * (double)(tx_pkts - rx_pkts) / (double)tx_pkts
                   : 0.0);
  }
  free(buf);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* pingpong                                                                 */

static void *pp_echo(void *arg) {
  char *buf = malloc(65536);
  uint64_t limit = tool_now_ns() + 15000000000ull;

  (void)arg;
  if (buf == NULL) {
    tool_die("out of memory");
  }
  atomic_store(&ready, 1);
  while (!atomic_load(&done) && tool_now_ns() < limit) {
    ssize_t n = recv(rx_fd, buf, 65536, MSG_DONTWAIT);
    if (n > 0) {
      send(rx_fd, buf, (size_t)n, 0);
    }
  }
  free(buf);
  return NULL;
}

static int run_pingpong(void) {
  char *buf = calloc(1, size < 65536 ? 65536 : size);
  uint64_t n = count ? count : 20000, warm = n / 10, i, k = 0;
  uint64_t *rtt = calloc(n, sizeof(uint64_t));
  uint64_t limit = tool_now_ns() + 10000000000ull;
  pthread_t th;

  if (buf == NULL || rtt == NULL) {
    tool_die("out of memory (%llu round trips)", (unsigned long long)n);
  }
  rx_fd = udp_socket(&rx_addr);
  tx_fd = udp_socket(&tx_addr);
  connect(tx_fd, (struct sockaddr *)&rx_addr, sizeof(rx_addr));
  connect(rx_fd, (struct sockaddr *)&tx_addr, sizeof(tx_addr));
  pthread_create(&th, NULL, pp_echo, NULL);
  while (!atomic_load(&ready)) {
    usleep(1000);
  }
  for (i = 0; i < warm + n && tool_now_ns() < limit; ++i) {
    uint64_t t = tool_now_ns();
    ssize_t r;
    send(tx_fd, buf, size, 0);
    while ((r = recv(tx_fd, buf, 65536, MSG_DONTWAIT)) < 0 &&
           tool_now_ns() < limit) {
    }
    if (i >= warm) {
      rtt[k++] = tool_now_ns() - t;
    }
  }
  atomic_store(&done, 1);
  pthread_join(th, NULL);
  if (k == 0) {
    tool_die("no round trip completed");
  }
  tool_sort_u64(rtt, k);
  printf("test=pingpong size=%zu iters=%llu rtt_p50_us=%.2f rtt_p99_us=%.2f "
         "rtt_p999_us=%.2f rtt_max_us=%.2f\n",
         size, (unsigned long long)k, (double)tool_pct_u64(rtt, k, 0.5) / 1e3,
         (double)tool_pct_u64(rtt, k, 0.99) / 1e3,
         (double)tool_pct_u64(rtt, k, 0.999) / 1e3, (double)rtt[k - 1] / 1e3);
  free(rtt);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"size", required_argument, 0, 's'},
                                       {"time", required_argument, 0, 't'},
                                       {"count", required_argument, 0, 'n'},
                                       {"gso", required_argument, 0, 'G'},
                                       TOOL_OPT_STD,
                                       {0, 0, 0, 0}};
  const char *mode;
  int c;

  tool_init(&info);
  while ((c = tool_getopt(argc, argv, "s:t:n:", opts)) != -1) {
    switch (c) {
    case 's':
      size = (size_t)tool_arg_size("-s", optarg, 1, 65000);
      break;
    case 't':
      secs = tool_arg_duration("-t", optarg, TOOL_SEC, 1e-9, 60);
      break;
    case 'n':
      count = tool_arg_u64("-n", optarg, 0, 1000000000);
      break;
    case 'G':
      gso = (uint32_t)tool_arg_u64("--gso", optarg, 0, 64);
      break;
    }
  }
  if (optind == argc) {
    tool_usage_error("no test given (rate or pingpong)");
  }
  mode = argv[optind];
  if (strcmp(mode, "rate") != 0 && strcmp(mode, "pingpong") != 0) {
    tool_usage_error("unknown test '%s' (rate or pingpong)", mode);
  }
  if (optind + 1 < argc) {
    tool_usage_error("unexpected argument '%s'", argv[optind + 1]);
  }
  if (gso && (size_t)gso * size > 65000) {
    tool_usage_error("--gso %u of %zu bytes: more than one UDP datagram's "
                     "65000 bytes",
                     gso, size);
  }
  return strcmp(mode, "rate") == 0 ? run_rate() : run_pingpong();
}
