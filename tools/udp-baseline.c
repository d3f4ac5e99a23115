/*
 * udp-baseline: what plain UDP sockets do on this machine, the reference
 * that `make bench` holds srd-perf against in the same run.
 *
 *   udp-baseline rate [-s SIZE] [-t SECS] [-n COUNT]
 *       one sender thread (sendmmsg, batches of 32) to one receiver thread
 *       (recvmmsg) over 127.0.0.1: datagrams per second received.
 *   udp-baseline pingpong [-s SIZE] [-n COUNT]
 *       two threads bounce a datagram, both spinning on non-blocking
 *       recv (busy-poll): round-trip percentiles.
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 32

static size_t size = 64;
static double secs = 2;
static uint64_t count = 0;
static atomic_int ready, done;
static struct sockaddr_in rx_addr, tx_addr;

static uint64_t now_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int udp_socket(struct sockaddr_in *a) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 8 << 20;
  socklen_t l = sizeof(*a);

  if (fd < 0) {
    perror("socket");
    exit(1);
  }
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
  }
  memset(a, 0, sizeof(*a));
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0) {
    perror("bind");
    exit(1);
  }
  getsockname(fd, (struct sockaddr *)a, &l);
  return fd;
}

/* ------------------------------------------------------------------------ */
/* rate                                                                     */

static int rx_fd, tx_fd;
static uint64_t rx_pkts, tx_pkts;
static uint64_t rx_t0, rx_t1;

static void *rate_rx(void *arg) {
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  char *buf = malloc(BATCH * 65536);
  struct timeval tv = {0, 100000};
  int i;

  (void)arg;
  setsockopt(rx_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  for (i = 0; i < BATCH; ++i) {
    iov[i].iov_base = buf + (size_t)i * 65536;
    iov[i].iov_len = 65536;
    memset(&m[i], 0, sizeof(m[i]));
    m[i].msg_hdr.msg_iov = &iov[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  atomic_store(&ready, 1);
  for (;;) {
    int n = recvmmsg(rx_fd, m, BATCH, 0, NULL);
    if (n > 0) {
      uint64_t t = now_ns();
      if (rx_pkts == 0) {
        rx_t0 = t;
      }
      rx_pkts += (uint64_t)n;
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
  char *buf = calloc(1, size);
  pthread_t th;
  uint64_t t0, end;
  int i;

  rx_fd = udp_socket(&rx_addr);
  tx_fd = udp_socket(&tx_addr);
  if (connect(tx_fd, (struct sockaddr *)&rx_addr, sizeof(rx_addr)) != 0) {
    perror("connect");
    return 1;
  }
  iov.iov_base = buf;
  iov.iov_len = size;
  for (i = 0; i < BATCH; ++i) {
    memset(&m[i], 0, sizeof(m[i]));
    m[i].msg_hdr.msg_iov = &iov;
    m[i].msg_hdr.msg_iovlen = 1;
  }
  pthread_create(&th, NULL, rate_rx, NULL);
  while (!atomic_load(&ready)) {
    usleep(1000);
  }
  t0 = now_ns();
  end = t0 + (uint64_t)(secs * 1e9);
  while (now_ns() < end && (count == 0 || tx_pkts < count)) {
    int n = sendmmsg(tx_fd, m, BATCH, 0);
    if (n > 0) {
      tx_pkts += (uint64_t)n;
    }
  }
  atomic_store(&done, 1);
  pthread_join(th, NULL);
  {
    double dt = (double)(rx_t1 - rx_t0) / 1e9;
    double rate = dt > 0 ? (double)rx_pkts / dt : 0;
    printf("test=rate size=%zu tx_pkts=%llu rx_pkts=%llu seconds=%.3f "
           "rx_pps=%.0f rx_gbps=%.3f loss_pct=%.2f\n",
           size, (unsigned long long)tx_pkts, (unsigned long long)rx_pkts, dt,
           rate, rate * (double)size * 8 / 1e9,
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
  uint64_t limit = now_ns() + 15000000000ull;

  (void)arg;
  atomic_store(&ready, 1);
  while (!atomic_load(&done) && now_ns() < limit) {
    ssize_t n = recv(rx_fd, buf, 65536, MSG_DONTWAIT);
    if (n > 0) {
      send(rx_fd, buf, (size_t)n, 0);
    }
  }
  free(buf);
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int run_pingpong(void) {
  char *buf = calloc(1, size < 65536 ? 65536 : size);
  uint64_t n = count ? count : 20000, warm = n / 10, i, k = 0;
  uint64_t *rtt = calloc(n, sizeof(uint64_t));
  uint64_t limit = now_ns() + 10000000000ull;
  pthread_t th;

  rx_fd = udp_socket(&rx_addr);
  tx_fd = udp_socket(&tx_addr);
  connect(tx_fd, (struct sockaddr *)&rx_addr, sizeof(rx_addr));
  connect(rx_fd, (struct sockaddr *)&tx_addr, sizeof(tx_addr));
  pthread_create(&th, NULL, pp_echo, NULL);
  while (!atomic_load(&ready)) {
    usleep(1000);
  }
  for (i = 0; i < warm + n && now_ns() < limit; ++i) {
    uint64_t t = now_ns();
    ssize_t r;
    send(tx_fd, buf, size, 0);
    while ((r = recv(tx_fd, buf, 65536, MSG_DONTWAIT)) < 0 &&
           now_ns() < limit) {
    }
    if (i >= warm) {
      rtt[k++] = now_ns() - t;
    }
  }
  atomic_store(&done, 1);
  pthread_join(th, NULL);
  if (k == 0) {
    fprintf(stderr, "udp-baseline: no round trip completed\n");
    return 1;
  }
  qsort(rtt, k, sizeof(uint64_t), cmp_u64);
  printf("test=pingpong size=%zu iters=%llu rtt_p50_us=%.2f rtt_p99_us=%.2f "
         "rtt_p999_us=%.2f rtt_max_us=%.2f\n",
         size, (unsigned long long)k, (double)rtt[k / 2] / 1e3,
         (double)rtt[k * 99 / 100] / 1e3, (double)rtt[k * 999 / 1000] / 1e3,
         (double)rtt[k - 1] / 1e3);
  free(rtt);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int c;
  const char *mode;

  if (argc < 2 ||
      (strcmp(argv[1], "rate") != 0 && strcmp(argv[1], "pingpong") != 0)) {
    fprintf(stderr, "usage: udp-baseline rate|pingpong [-s SIZE] [-t SECS] "
                    "[-n COUNT]\n");
    return 2;
  }
  mode = argv[1];
  optind = 2;
  while ((c = getopt(argc, argv, "s:t:n:")) != -1) {
    switch (c) {
    case 's':
      size = strtoul(optarg, NULL, 10);
      break;
    case 't':
      secs = atof(optarg);
      break;
    case 'n':
      count = strtoull(optarg, NULL, 10);
      break;
    default:
      return 2;
    }
  }
  if (size < 1 || size > 65000 || secs <= 0 || secs > 60) {
    fprintf(stderr, "udp-baseline: -s 1..65000, -t 0..60\n");
    return 2;
  }
  return strcmp(mode, "rate") == 0 ? run_rate() : run_pingpong();
}
