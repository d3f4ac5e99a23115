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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "srd/srd.h" /* srd_drop_reason, for xport_stats.drops */
#include "xport.h"

static const char *prog = "srd-perf";

#define DEFAULT_PORT 18515
#define CTL_SIZE 256
#define MAGIC_CTL 0x53525043u  /* "SRPC" */
#define MAGIC_DATA 0x53525044u /* "SRPD" */
/* 2: control messages of 256 bytes; RESULT carries the server engine's
   drops by reason. */
#define PROTO_VERSION 2
/* NDROPS is how many of the engine's drop reasons xport_stats and the
   RESULT message carry. */
#define NDROPS (SRD_DROP_REASONS < 16 ? SRD_DROP_REASONS : 16)
#define MIN_SIZE 8
#define SWEEP_MAX (8u << 20)

enum {
  C_HELLO = 1,
  C_HELLO_OK,
  C_START,
  C_READY,
  C_DRAIN,
  C_DONE,
  C_RESULT,
  C_BYE,
  C_BYE_OK,
  C_ERROR
};

typedef enum test_kind { T_BW = 0, T_LAT = 1, T_RATE = 2 } test_kind;
static const char *const test_names[] = {"bw", "lat", "rate"};

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

typedef struct opts {
  int server, loopback;
  const char *host;    /* client: the server */
  const char *bind;    /* local address */
  uint16_t port;       /* server port */
  uint16_t local_port; /* client's first local port */
  const char *transport;
  test_kind test;
  uint64_t size;
  int size_set, sweep;
  uint64_t iters;
  int iters_set;
  double duration;
  uint64_t warmup;
  int warmup_set;
  uint32_t window;
  int window_set;
  uint32_t paths, burst, mtu;
  int busy, busy_set;
  int impair_on;
  xport_impair imp;
  uint64_t imp_mask;       /* paths the impairments apply to */
  uint64_t blackhole_mask; /* paths that drop everything */
  uint64_t seed;
  int family;
  int cpu[2], ncpu;
  double time_limit, idle_timeout;
  int verify, json, csv, once, verbose;
  int no_gso, no_gro, no_multishot;
  const char *cc;
  uint64_t rto_min_ns;
  uint64_t tq_ns;
  uint64_t max_size;
} opts;

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: %s -s [ADDR]               run the server\n"
      "       %s [options] SERVER        run the tests against SERVER\n"
      "       %s --loopback [options]    both ends here, one thread each\n"
      "\n"
      "Measure emulated SRD (libsrd over UDP with io_uring) against kernel "
      "TCP.\n"
      "\n"
      "Test:\n"
      "  -t, --transport srd|tcp  transport [srd]\n"
      "  -T, --test bw|lat|rate   streaming bandwidth, ping-pong latency, or\n"
      "                           small-message rate [bw]\n"
      "  -s SIZE                  message size, K/M suffixes (-s alone or\n"
      "                           -s ADDR runs the server) [bw 64K, lat 64,\n"
      "                           rate 64]\n"
      "  -a, --all                every power of two from 8 B to 8 MiB\n"
      "  -n, --iters N            measured iterations per size [bw 1000,\n"
      "                           lat 10000, rate 100000; -a: fewer]\n"
      "  -D, --duration SECS      run each size this long instead of -n\n"
      "  -w, --warmup N           unmeasured iterations first [n/10, <= 1000]\n"
      "  -W, --window N           messages outstanding (bw, rate) [bw: 16 MiB\n"
      "                           worth, 2..128; rate 256]\n"
      "  --verify                 check every byte, and that each message\n"
      "                           arrives exactly once, at the server\n"
      "\n"
      "Transport:\n"
      "  -p, --port PORT          server port [%d]\n"
      "  --bind ADDR              local address\n"
      "  --local-port PORT        client's (first) local port [any free]\n"
      "  -4, -6                   IPv4 or IPv6 [from the address; 4]\n"
      "  -P, --paths N            srd: sockets (source ports) to spray over,\n"
      "                           1..64 [16]\n"
      "  --burst N                srd: packets per path per UDP GSO send, "
      "1..64\n"
      "                           (1 = per-packet spraying) [16]\n"
      "  -m, --mtu BYTES          srd: payload bytes per packet [the route's\n"
      "                           MTU less headers, at most 32000 for bw,\n"
      "                           8192 for lat and rate]\n"
      "  --busy-poll, --blocking  spin, or sleep in the kernel [lat: "
      "busy-poll,\n"
      "                           bw and rate: blocking]\n"
      "  --no-gso, --no-gro, --no-multishot   srd: turn kernel features off\n"
      "  --cc NAME, --rto-min US, --target-qdelay US\n"
      "                           srd engine settings [swift, 1000, 200]\n"
      "  --max-size SIZE          server: largest message accepted [8M]\n"
      "\n"
      "Impairments (srd, on what this process sends; --loopback: both ends):\n"
      "  --loss PCT, --dup PCT, --reorder PCT, --reorder-delay US,\n"
      "  --delay US, --jitter US, --rate GBPS, --queue BYTES,\n"
      "  --blackhole LIST (paths, e.g. 2,5), --impair-paths LIST [all]\n"
      "  --dup-delay US           a duplicate's copy leaves this much later "
      "[0]\n"
      "  --corrupt PCT            datagrams sent with one bit flipped, "
      "uniformly\n"
      "                           over their bits (a copy: never the "
      "buffer) [0]\n"
      "  --seed N                 seeds the engines and impairments [random]\n"
      "\n"
      "Run:\n"
      "  --time-limit SECS        stop the whole run after this [60]\n"
      "  --idle-timeout SECS      a peer silent this long has vanished [5]\n"
      "  --cpu A[,B]              pin the client (and --loopback server) "
      "thread\n"
      "  --once                   server: exit after one client\n"
      "  --json, --csv            machine-readable output\n"
      "  -v, --verbose            transport diagnostics on stderr\n"
      "  -h, --help\n"
      "\n"
      "Exit status: 0 ok; 1 the peer vanished, was unreachable or answered\n"
      "garbage, or a check failed; 2 bad usage; 130 interrupted.\n",
      prog, prog, prog, DEFAULT_PORT);
}

/* parsed_argv is the argument vector parse_args rewrites, while it
   exists: a usage error frees it on the way out. */
static char **parsed_argv;

static void die_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '%s --help'.\n", prog);
  free(parsed_argv);
  exit(2);
}

static void die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(1);
}

/* try_size parses a non-negative integer with an optional K, M or G
   (binary) suffix; returns 0 if |s| is not one. */
static int try_size(const char *s, uint64_t *out) {
  char *end;
  unsigned long long v;
  uint64_t mult = 1;

  if (*s < '0' || *s > '9') {
    return 0;
  }
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0 || end == s) {
    return 0;
  }
  if (*end == 'K' || *end == 'k') {
    mult = 1024;
    ++end;
  } else if (*end == 'M' || *end == 'm') {
    mult = 1024 * 1024;
    ++end;
  } else if (*end == 'G' || *end == 'g') {
    mult = 1024ull * 1024 * 1024;
    ++end;
  }
  if (*end != '\0' || v > UINT64_MAX / mult) {
    return 0;
  }
  *out = v * mult;
  return 1;
}

static uint64_t parse_size(const char *opt, const char *s, uint64_t min,
                           uint64_t max) {
  uint64_t v;

  if (!try_size(s, &v)) {
    die_usage("bad value for %s: '%s' (a number, K/M/G suffixes allowed)", opt,
              s);
  }
  if (v < min || v > max) {
    die_usage("%s must be in %" PRIu64 "..%" PRIu64 ", not %" PRIu64, opt, min,
              max, v);
  }
  return v;
}

static double parse_num(const char *opt, const char *s, double min,
                        double max) {
  char *end;
  double v;

  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max)) {
    die_usage("bad value for %s: '%s' (a number in %g..%g)", opt, s, min, max);
  }
  return v;
}

static uint64_t parse_list(const char *opt, const char *s) {
  uint64_t mask = 0;
  char buf[256], *tok, *save = NULL;

  if (strlen(s) >= sizeof(buf)) {
    die_usage("bad value for %s", opt);
  }
  strcpy(buf, s);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    uint64_t v;
    if (!try_size(tok, &v) || v >= XPORT_MAX_PATHS) {
      die_usage("bad value for %s: '%s' (path numbers 0..63, comma "
                "separated)",
                opt, tok);
    }
    mask |= 1ull << v;
  }
  if (mask == 0) {
    die_usage("bad value for %s: empty list", opt);
  }
  return mask;
}

enum {
  O_LOOPBACK = 256,
  O_BIND,
  O_LOCAL_PORT,
  O_BURST,
  O_BUSY,
  O_BLOCKING,
  O_NO_GSO,
  O_NO_GRO,
  O_NO_MULTISHOT,
  O_CC,
  O_RTO_MIN,
  O_MAX_SIZE,
  O_LOSS,
  O_DUP,
  O_DUP_DELAY,
  O_CORRUPT,
  O_REORDER,
  O_REORDER_DELAY,
  O_DELAY,
  O_JITTER,
  O_RATE,
  O_QUEUE,
  O_BLACKHOLE,
  O_IMPAIR_PATHS,
  O_SEED,
  O_TIME_LIMIT,
  O_IDLE,
  O_CPU,
  O_ONCE,
  O_JSON,
  O_CSV,
  O_VERIFY,
  O_SERVER,
  O_SIZE,
  O_TQ
};

static const struct option long_opts[] = {
    {"loopback", no_argument, 0, O_LOOPBACK},
    {"server", optional_argument, 0, O_SERVER},
    {"size", required_argument, 0, O_SIZE},
    {"transport", required_argument, 0, 't'},
    {"test", required_argument, 0, 'T'},
    {"all", no_argument, 0, 'a'},
    {"iters", required_argument, 0, 'n'},
    {"duration", required_argument, 0, 'D'},
    {"warmup", required_argument, 0, 'w'},
    {"window", required_argument, 0, 'W'},
    {"port", required_argument, 0, 'p'},
    {"bind", required_argument, 0, O_BIND},
    {"local-port", required_argument, 0, O_LOCAL_PORT},
    {"paths", required_argument, 0, 'P'},
    {"burst", required_argument, 0, O_BURST},
    {"mtu", required_argument, 0, 'm'},
    {"busy-poll", no_argument, 0, O_BUSY},
    {"blocking", no_argument, 0, O_BLOCKING},
    {"no-gso", no_argument, 0, O_NO_GSO},
    {"no-gro", no_argument, 0, O_NO_GRO},
    {"no-multishot", no_argument, 0, O_NO_MULTISHOT},
    {"cc", required_argument, 0, O_CC},
    {"rto-min", required_argument, 0, O_RTO_MIN},
    {"target-qdelay", required_argument, 0, O_TQ},
    {"max-size", required_argument, 0, O_MAX_SIZE},
    {"loss", required_argument, 0, O_LOSS},
    {"dup", required_argument, 0, O_DUP},
    {"dup-delay", required_argument, 0, O_DUP_DELAY},
    {"corrupt", required_argument, 0, O_CORRUPT},
    {"reorder", required_argument, 0, O_REORDER},
    {"reorder-delay", required_argument, 0, O_REORDER_DELAY},
    {"delay", required_argument, 0, O_DELAY},
    {"jitter", required_argument, 0, O_JITTER},
    {"rate", required_argument, 0, O_RATE},
    {"queue", required_argument, 0, O_QUEUE},
    {"blackhole", required_argument, 0, O_BLACKHOLE},
    {"impair-paths", required_argument, 0, O_IMPAIR_PATHS},
    {"seed", required_argument, 0, O_SEED},
    {"time-limit", required_argument, 0, O_TIME_LIMIT},
    {"idle-timeout", required_argument, 0, O_IDLE},
    {"cpu", required_argument, 0, O_CPU},
    {"once", no_argument, 0, O_ONCE},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
    {"verify", no_argument, 0, O_VERIFY},
    {"verbose", no_argument, 0, 'v'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static void parse_args(opts *o, int argc, char **argv) {
  int c, i;
  char **av = parsed_argv = calloc((size_t)argc + 2, sizeof(char *));
  int ac = 0;

  memset(o, 0, sizeof(*o));
  o->port = DEFAULT_PORT;
  o->transport = "srd";
  o->paths = 16;
  o->burst = 16;
  o->mtu = 0;
  o->time_limit = 60;
  o->idle_timeout = 5;
  o->imp_mask = ~0ull;
  o->max_size = SWEEP_MAX;
  o->family = AF_UNSPEC;
  /* "-s" is both the size (-s 1M) and, as in the and perftest's
     usage, the server switch (-s alone, or -s ADDR).  A value that reads
     as a size is a size; anything else makes this the server. */
  for (i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "-s") == 0) {
      uint64_t v;
      if (i + 1 < argc && try_size(argv[i + 1], &v)) {
        av[ac++] = "--size";
      } else {
        o->server = 1;
        if (i + 1 < argc && argv[i + 1][0] != '-') {
          o->bind = argv[++i];
        }
        continue;
      }
    } else {
      av[ac++] = argv[i];
    }
  }
  optind = 1;
  while ((c = getopt_long(ac, av, "t:T:an:D:w:W:p:P:m:46vh", long_opts,
                          NULL)) != -1) {
    switch (c) {
    case 't':
      if (strcmp(optarg, "srd") != 0 && strcmp(optarg, "tcp") != 0) {
        die_usage("unknown transport '%s' (srd or tcp)", optarg);
      }
      o->transport = optarg;
      break;
    case 'T':
      for (i = 0; i < 3 && strcmp(optarg, test_names[i]) != 0; ++i) {
      }
      if (i == 3) {
        die_usage("unknown test '%s' (bw, lat or rate)", optarg);
      }
      o->test = (test_kind)i;
      break;
    case O_SIZE:
      o->size = parse_size("-s", optarg, MIN_SIZE, 1u << 30);
      o->size_set = 1;
      break;
    case O_SERVER:
      o->server = 1;
      if (optarg) {
        o->bind = optarg;
      }
      break;
    case 'a':
      o->sweep = 1;
      break;
    case 'n':
      o->iters = parse_size("-n", optarg, 1, 1000000000);
      o->iters_set = 1;
      break;
    case 'D':
      o->duration = parse_num("-D", optarg, 0.001, 3600);
      break;
    case 'w':
      o->warmup = parse_size("-w", optarg, 0, 1000000000);
      o->warmup_set = 1;
      break;
    case 'W':
      o->window = (uint32_t)parse_size("-W", optarg, 1, 1000);
      o->window_set = 1;
      break;
    case 'p':
      o->port = (uint16_t)parse_size("-p", optarg, 1, 65535 - 63);
      break;
    case O_BIND:
      o->bind = optarg;
      break;
    case O_LOCAL_PORT:
      o->local_port = (uint16_t)parse_size("--local-port", optarg, 1, 65535);
      break;
    case 'P':
      o->paths = (uint32_t)parse_size("-P", optarg, 1, XPORT_MAX_PATHS);
      break;
    case O_BURST:
      o->burst = (uint32_t)parse_size("--burst", optarg, 1, 64);
      break;
    case 'm':
      o->mtu = (uint32_t)parse_size("-m", optarg, 256, 65000);
      break;
    case '4':
      o->family = AF_INET;
      break;
    case '6':
      o->family = AF_INET6;
      break;
    case O_BUSY:
      o->busy = 1;
      o->busy_set = 1;
      break;
    case O_BLOCKING:
      o->busy = 0;
      o->busy_set = 1;
      break;
    case O_NO_GSO:
      o->no_gso = 1;
      break;
    case O_NO_GRO:
      o->no_gro = 1;
      break;
    case O_NO_MULTISHOT:
      o->no_multishot = 1;
      break;
    case O_CC:
      o->cc = optarg;
      break;
    case O_RTO_MIN:
      o->rto_min_ns = (uint64_t)(parse_num("--rto-min", optarg, 1, 1e7) * 1e3);
      break;
    case O_TQ:
      o->tq_ns = (uint64_t)(parse_num("--target-qdelay", optarg, 1, 1e7) * 1e3);
      break;
    case O_MAX_SIZE:
      o->max_size = parse_size("--max-size", optarg, CTL_SIZE, 1u << 30);
      break;
    case O_LOSS:
      o->imp.loss = parse_num("--loss", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_DUP:
      o->imp.dup = parse_num("--dup", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_DUP_DELAY:
      o->imp.dup_delay_ns =
          (uint64_t)(parse_num("--dup-delay", optarg, 0, 1e7) * 1e3);
      o->impair_on = 1;
      break;
    case O_CORRUPT:
      o->imp.corrupt = parse_num("--corrupt", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_REORDER:
      o->imp.reorder = parse_num("--reorder", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_REORDER_DELAY:
      o->imp.reorder_delay_ns =
          (uint64_t)(parse_num("--reorder-delay", optarg, 0, 1e7) * 1e3);
      o->impair_on = 1;
      break;
    case O_DELAY:
      o->imp.delay_ns = (uint64_t)(parse_num("--delay", optarg, 0, 1e7) * 1e3);
      o->impair_on = 1;
      break;
    case O_JITTER:
      o->imp.jitter_ns =
          (uint64_t)(parse_num("--jitter", optarg, 0, 1e7) * 1e3);
      o->impair_on = 1;
      break;
    case O_RATE:
      o->imp.rate_bps =
          (uint64_t)(parse_num("--rate", optarg, 0.001, 1000) * 1e9);
      o->impair_on = 1;
      break;
    case O_QUEUE:
      o->imp.queue_bytes = parse_size("--queue", optarg, 1, 1ull << 32);
      o->impair_on = 1;
      break;
    case O_BLACKHOLE:
      o->blackhole_mask = parse_list("--blackhole", optarg);
      o->impair_on = 1;
      break;
    case O_IMPAIR_PATHS:
      o->imp_mask = parse_list("--impair-paths", optarg);
      break;
    case O_SEED:
      o->seed = parse_size("--seed", optarg, 0, UINT64_MAX);
      if (o->seed == 0) {
        die_usage("--seed must be nonzero");
      }
      break;
    case O_TIME_LIMIT:
      o->time_limit = parse_num("--time-limit", optarg, 0.01, 86400);
      break;
    case O_IDLE:
      o->idle_timeout = parse_num("--idle-timeout", optarg, 0.01, 3600);
      break;
    case O_CPU: {
      char *end;
      o->ncpu = 0;
      o->cpu[o->ncpu++] = (int)strtol(optarg, &end, 10);
      if (end == optarg || (*end && *end != ',')) {
        die_usage("bad value for --cpu: '%s' (A or A,B)", optarg);
      }
      if (*end == ',') {
        char *e2;
        o->cpu[o->ncpu++] = (int)strtol(end + 1, &e2, 10);
        if (e2 == end + 1 || *e2) {
          die_usage("bad value for --cpu: '%s' (A or A,B)", optarg);
        }
      }
      break;
    }
    case O_ONCE:
      o->once = 1;
      break;
    case O_JSON:
      o->json = 1;
      break;
    case O_CSV:
      o->csv = 1;
      break;
    case O_VERIFY:
      o->verify = 1;
      break;
    case O_LOOPBACK:
      o->loopback = 1;
      break;
    case 'v':
      o->verbose = 1;
      break;
    case 'h':
      usage(stdout);
      exit(0);
    default:
      die_usage("bad option");
    }
  }
  if (optind < ac) {
    if (o->server || o->loopback || optind + 1 < ac) {
      die_usage("unexpected argument '%s'", av[optind]);
    }
    o->host = av[optind];
  }
  free(av);
  parsed_argv = NULL;
  if (!o->server && !o->loopback && o->host == NULL) {
    die_usage("no server given: srd-perf SERVER, srd-perf -s, or "
              "srd-perf --loopback");
  }
  if (o->server && o->loopback) {
    die_usage("-s and --loopback exclude each other");
  }
  if (o->json && o->csv) {
    die_usage("--json and --csv exclude each other");
  }
  if (o->sweep && o->size_set) {
    die_usage("-a and -s SIZE exclude each other");
  }
  if (o->impair_on && strcmp(o->transport, "srd") != 0) {
    die_usage("impairments need -t srd (kernel TCP has no userspace layer)");
  }
  if (!o->size_set) {
    o->size = o->test == T_BW ? 65536 : 64;
  }
  if (!o->busy_set) {
    o->busy = o->test == T_LAT;
  }
}

/* ------------------------------------------------------------------------ */
/* Control messages                                                         */

typedef struct ctl {
  uint32_t type;
  uint32_t test;
  uint32_t flags;
  uint64_t size;
  uint64_t count;
  uint64_t v[6];
  char text[40];
  /* drops (RESULT): the server engine's drops over the phase, by
     srd_drop_reason; zero in the other messages. */
  uint64_t drops[16];
} ctl;

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    p[i] = (uint8_t)(v >> (24 - 8 * i));
  }
}

static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v >> 32));
  put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static uint64_t get64(const uint8_t *p) {
  return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void ctl_encode(uint8_t *b, const ctl *c) {
  memset(b, 0, CTL_SIZE);
  put32(b, MAGIC_CTL);
  put32(b + 4, PROTO_VERSION);
  put32(b + 8, c->type);
  put32(b + 12, c->test);
  put32(b + 16, c->flags);
  put64(b + 24, c->size);
  put64(b + 32, c->count);
  for (int i = 0; i < 6; ++i) {
    put64(b + 40 + 8 * i, c->v[i]);
  }
  memcpy(b + 88, c->text, sizeof(c->text));
  b[88 + sizeof(c->text) - 1] = 0;
  for (int i = 0; i < 16; ++i) {
    put64(b + 128 + 8 * i, c->drops[i]);
  }
}

/* ctl_decode returns 0, or -1 if |b| is not a control message of ours. */
static int ctl_decode(const uint8_t *b, size_t len, ctl *c) {
  if (len != CTL_SIZE || get32(b) != MAGIC_CTL ||
      get32(b + 4) != PROTO_VERSION) {
    return -1;
  }
  c->type = get32(b + 8);
  c->test = get32(b + 12);
  c->flags = get32(b + 16);
  c->size = get64(b + 24);
  c->count = get64(b + 32);
  for (int i = 0; i < 6; ++i) {
    c->v[i] = get64(b + 40 + 8 * i);
  }
  memcpy(c->text, b + 88, sizeof(c->text));
  c->text[sizeof(c->text) - 1] = 0;
  for (int i = 0; i < 16; ++i) {
    c->drops[i] = get64(b + 128 + 8 * i);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Data messages: magic, index, then (with --verify) a pattern of both.    */

static void fill(uint8_t *b, size_t len, uint64_t index, int pattern) {
  uint64_t x = 0x243F6A8885A308D3ull ^ (index * 0xD6E8FEB86659FD93ull), w;
  size_t i = 8;

  put32(b, MAGIC_DATA);
  put32(b + 4, (uint32_t)index);
  if (!pattern) {
    return;
  }
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    memcpy(b + i, &w, 8);
  }
  if (i < len) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    memcpy(b + i, &w, len - i);
  }
}

static int check(const uint8_t *b, size_t len, uint32_t *index) {
  uint64_t x, w;
  size_t i = 8;

  if (len < 8 || get32(b) != MAGIC_DATA) {
    return -1;
  }
  *index = get32(b + 4);
  x = 0x243F6A8885A308D3ull ^ ((uint64_t)*index * 0xD6E8FEB86659FD93ull);
  for (; i + 8 <= len; i += 8) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    if (memcmp(b + i, &w, 8) != 0) {
      return -2;
    }
  }
  if (i < len) {
    x += 0x9E3779B97F4A7C15ull;
    w = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
    if (memcmp(b + i, &w, len - i) != 0) {
      return -2;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Shared plumbing                                                          */

static atomic_int interrupted;

static void on_signal(int sig) {
  (void)sig;
  atomic_store(&interrupted, 1);
}

static void log_cb(void *ud, const char *msg) {
  const char *who = ud;
  fprintf(stderr, "%s: %s%s\n", prog, who ? who : "", msg);
}

static void *xalloc(size_t n) {
  void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
  if (p == NULL) {
    die("out of memory (%zu bytes)", n);
  }
  return p;
}

static void pin(int cpu) {
  cpu_set_t cs;

  CPU_ZERO(&cs);
  CPU_SET(cpu, &cs);
  if (pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs) != 0) {
    fprintf(stderr, "%s: cannot pin to CPU %d (ignored)\n", prog, cpu);
  }
}

static void make_config(const opts *o, xport_config *cfg, int server,
                        int family, const char *who) {
  uint32_t i;

  xport_config_default(cfg);
  cfg->backend = o->transport;
  cfg->family = family;
  cfg->bind_addr = o->bind;
  cfg->listen = server;
  cfg->port = server ? o->port : o->local_port;
  cfg->n_paths = o->paths;
  cfg->burst = o->burst;
  cfg->mtu = o->mtu;
  cfg->max_msg_size = (uint32_t)(server               ? o->max_size
                                 : o->sweep           ? SWEEP_MAX
                                 : o->size < CTL_SIZE ? CTL_SIZE
                                                      : o->size);
  if (cfg->max_msg_size < CTL_SIZE) {
    cfg->max_msg_size = CTL_SIZE;
  }
  cfg->busy_poll = o->busy;
  if (o->seed) {
    cfg->seed = o->seed * 2 + (uint64_t)server;
  }
  cfg->no_gso = o->no_gso;
  cfg->no_gro = o->no_gro;
  cfg->no_multishot = o->no_multishot;
  cfg->cc = o->cc;
  cfg->rto_min_ns = o->rto_min_ns;
  cfg->cc_target_qdelay_ns = o->tq_ns;
  if (o->impair_on && (!server || o->loopback || o->server)) {
    cfg->impair_on = 1;
    for (i = 0; i < XPORT_MAX_PATHS; ++i) {
      if (o->imp_mask & (1ull << i)) {
        cfg->impair[i] = o->imp;
      }
      if (o->blackhole_mask & (1ull << i)) {
        cfg->impair[i].blackhole = 1;
      }
    }
  }
  cfg->log = o->verbose || !server || o->server ? log_cb : NULL;
  cfg->user_data = (void *)who;
}

static int open_xport(const opts *o, xport **px, int server, int family,
                      const char *who) {
  xport_config cfg;
  int rv;

  make_config(o, &cfg, server, family, who);
  rv = xport_open(px, &cfg);
  if (rv == -ENOENT) {
    fprintf(stderr,
            "%s: transport '%s' is not built in (liburing missing "
            "at build time?)\n",
            prog, o->transport);
  } else if (rv != 0) {
    fprintf(stderr, "%s: cannot open the %s transport: %s\n", prog,
            o->transport, strerror(-rv));
  }
  return rv;
}

/* ------------------------------------------------------------------------ */
/* Server                                                                   */

typedef struct rbuf {
  uint8_t *p;
  size_t cap;
  int echo;                 /* lat: being echoed */
  uint64_t gen;             /* the session it was echoed in */
  struct rbuf *prev, *next; /* every live buffer, freed at the end */
} rbuf;

typedef struct server {
  const opts *o;
  xport *x;
  int quiet;
  int active;
  xport_peer peer;
  uint64_t last_heard;
  uint64_t sessions;
  /* the phase */
  int in_phase;
  test_kind test;
  uint64_t size, cap, need, depth, posted_phase, posted_now;
  int verify;
  uint64_t received, bytes, dups, corrupt, rerr, garbage;
  uint64_t drops0[16]; /* the engine's drops when the phase started */
  uint8_t *seen;
  uint64_t seen_bits;
  uint64_t done_count;
  uint64_t done_at;
  rbuf *live; /* buffers the transport may hold */
  /* control replies */
  uint8_t *cbuf[8];
  int cbusy[8];
  uint64_t cgen[8]; /* the session each reply was sent in */
  int bye;
} server;

static int post_rbuf(server *s, size_t cap) {
  rbuf *r = malloc(sizeof(*r));
  int rv;

  if (r == NULL) {
    return -ENOMEM;
  }
  r->cap = cap;
  r->echo = 0;
  r->p = xalloc(cap);
  rv = xport_post_recv(s->x, r->p, cap, r);
  if (rv != 0) {
    free(r->p);
    free(r);
    return rv;
  }
  r->prev = NULL;
  r->next = s->live;
  if (s->live) {
    s->live->prev = r;
  }
  s->live = r;
  ++s->posted_now;
  return 0;
}

static void free_rbuf(server *s, rbuf *r) {
  if (r->prev) {
    r->prev->next = r->next;
  } else {
    s->live = r->next;
  }
  if (r->next) {
    r->next->prev = r->prev;
  }
  free(r->p);
  free(r);
}

static void srv_reply(server *s, xport_peer peer, const ctl *c) {
  int i;

  for (i = 0; i < 8 && s->cbusy[i]; ++i) {
  }
  if (i == 8) {
    return; /* a peer that ignores our replies: drop this one */
  }
  ctl_encode(s->cbuf[i], c);
  if (xport_post_send(s->x, peer, s->cbuf[i], CTL_SIZE,
                      (void *)(uintptr_t)(i + 1)) == 0) {
    s->cbusy[i] = 1;
    s->cgen[i] = s->sessions;
  }
}

/* srv_end_session ends the session; the peer is forgotten unless
   |keep_peer|: a client restarted on the same ports (a new incarnation)
   has taken it over. */
static void srv_end_session(server *s, const char *why, int keep_peer) {
  char a[80];
  struct sockaddr_storage ss;
  socklen_t l;

  s->bye = 0;
  if (!s->active) {
    return;
  }
  if (why && !s->quiet) {
    if (xport_peer_addr(s->x, s->peer, &ss, &l) == 0) {
      xport_format_addr((struct sockaddr *)&ss, a, sizeof(a));
    } else {
      strcpy(a, "?");
    }
    fprintf(stderr, "%s: client %s: %s\n", prog, a, why);
  }
  if (!keep_peer) {
    xport_remove_peer(s->x, s->peer);
  }
  s->active = 0;
  s->in_phase = 0;
  free(s->seen);
  s->seen = NULL;
}

/* srv_client_done ends a session the client closed with BYE. */
static void srv_client_done(server *s, int keep_peer) {
  srv_end_session(s, NULL, keep_peer);
  if (!s->quiet) {
    fprintf(stderr, "%s: client done (%" PRIu64 " sessions so far)\n", prog,
            s->sessions);
  }
}

/* srv_fill_posted keeps the phase's receives posted: at most depth at
   once and need in all; outside a phase, one for the next control
   message. */
static void srv_fill_posted(server *s) {
  if (s->in_phase) {
    while (s->posted_phase < s->need && s->posted_now < s->depth) {
      if (post_rbuf(s, s->cap) != 0) {
        break;
      }
      ++s->posted_phase;
    }
  } else if (s->posted_now == 0) {
    post_rbuf(s, CTL_SIZE);
  }
}

/* repost_or_free posts |r| again for the phase, or frees it. */
static void repost_or_free(server *s, rbuf *r) {
  if (s->in_phase && r->cap == s->cap && s->posted_phase < s->need &&
      s->posted_now < s->depth && xport_post_recv(s->x, r->p, r->cap, r) == 0) {
    ++s->posted_now;
    ++s->posted_phase;
  } else {
    free_rbuf(s, r);
  }
}

static void srv_result(server *s) {
  ctl r;
  xport_stats st;

  memset(&r, 0, sizeof(r));
  xport_get_stats(s->x, &st);
  r.type = C_RESULT;
  r.v[0] = s->received;
  r.v[1] = s->bytes;
  r.v[2] = s->dups;
  r.v[3] = s->corrupt;
  r.v[4] = s->rerr + s->garbage;
  r.v[5] = st.retransmits;
  for (int d = 0; d < NDROPS; ++d) {
    r.drops[d] = st.drops[d] - s->drops0[d];
  }
  srv_reply(s, s->peer, &r);
  s->in_phase = 0;
  s->done_count = 0;
  free(s->seen);
  s->seen = NULL;
}

static void srv_ctl(server *s, xport_peer peer, const ctl *c) {
  ctl r;

  memset(&r, 0, sizeof(r));
  if (s->active && peer != s->peer) {
    r.type = C_ERROR;
    snprintf(r.text, sizeof(r.text), "server busy with another client");
    srv_reply(s, peer, &r);
    return;
  }
  switch (c->type) {
  case C_HELLO: {
    xport_stats st;
    /* The same peer again: a client restarted on the same ports before
       its last session ended here (its BYE_OK unacknowledged, or no
       BYE). That session is over; the peer is the new one's. */
    srv_end_session(s, NULL, 1);
    s->active = 1;
    s->peer = peer;
    ++s->sessions;
    xport_get_stats(s->x, &st);
    r.type = C_HELLO_OK;
    r.v[0] = st.n_paths;
    r.v[1] = s->o->max_size;
    if (c->size > s->o->max_size) {
      r.type = C_ERROR;
      snprintf(r.text, sizeof(r.text), "size above the server's --max-size");
    }
    srv_reply(s, peer, &r);
    break;
  }
  case C_START:
    if (!s->active || c->test > T_RATE || c->size < MIN_SIZE ||
        c->size > s->o->max_size) {
      r.type = C_ERROR;
      snprintf(r.text, sizeof(r.text), "bad START");
      srv_reply(s, peer, &r);
      break;
    }
    s->in_phase = 1;
    s->test = (test_kind)c->test;
    s->size = c->size;
    s->cap = c->size < CTL_SIZE ? CTL_SIZE : c->size;
    s->verify = (c->flags & 1) != 0;
    s->received = s->bytes = s->dups = s->corrupt = s->rerr = 0;
    s->garbage = 0;
    {
      xport_stats st;
      xport_get_stats(s->x, &st);
      memcpy(s->drops0, st.drops, sizeof(s->drops0));
    }
    s->done_count = 0;
    /* Receives still posted from an earlier phase (a timed phase leaves
       some) are older than the ones posted now, so they match first: the
       client fills them with DRAIN messages before it sends data. */
    r.v[0] = s->posted_now;
    /* count 0 is a timed phase: receives are posted without end. */
    s->need = c->count ? c->count + 1 : UINT64_MAX;
    s->depth = s->test == T_LAT ? 16 : (c->v[0] ? c->v[0] : 2) + 2;
    if (s->depth > 1000) {
      s->depth = 1000;
    }
    s->posted_phase = 0;
    free(s->seen);
    s->seen = NULL;
    s->seen_bits = 0;
    srv_fill_posted(s);
    r.type = C_READY;
    srv_reply(s, peer, &r);
    break;
  case C_DRAIN:
    break;
  case C_DONE:
    s->done_count = c->count;
    s->done_at = xport_now();
    if (s->received >= s->done_count) {
      srv_result(s);
    }
    break;
  case C_BYE:
    r.type = C_BYE_OK;
    srv_reply(s, peer, &r);
    s->bye = 1;
    break;
  default:
    break;
  }
}

static void srv_data(server *s, xport_peer peer, rbuf *r, size_t len) {
  uint32_t idx = 0;
  int rv;

  if (!s->active || peer != s->peer || !s->in_phase) {
    ++s->garbage;
    return;
  }
  if (s->verify) {
    rv = check(r->p, len, &idx);
  } else {
    rv = len >= 8 && get32(r->p) == MAGIC_DATA ? 0 : -1;
    if (rv == 0) {
      idx = get32(r->p + 4);
    }
  }
  if (rv == -1) {
    ++s->garbage;
    return;
  }
  if (rv == -2 || len != s->size) {
    ++s->corrupt;
  }
  if (s->verify) {
    if (idx >= s->seen_bits) {
      uint64_t nb = s->seen_bits ? s->seen_bits : 4096;
      while (nb <= idx) {
        nb *= 2;
      }
      s->seen = realloc(s->seen, nb / 8);
      if (s->seen == NULL) {
        die("out of memory");
      }
      memset(s->seen + s->seen_bits / 8, 0, (nb - s->seen_bits) / 8);
      s->seen_bits = nb;
    }
    if (s->seen[idx / 8] & (1u << (idx % 8))) {
      ++s->dups;
      return;
    }
    s->seen[idx / 8] |= (uint8_t)(1u << (idx % 8));
  }
  ++s->received;
  s->bytes += len;
  if (s->test == T_LAT) {
    /* Echo from the buffer it arrived in; repost it when the echo is
       done. */
    if (xport_post_send(s->x, peer, r->p, len, r) == 0) {
      r->echo = 1;
      r->gen = s->sessions;
    }
  }
}

/* server_step runs one round; returns 0, or 1 when --once is done. */
static int server_step(server *s, uint64_t timeout) {
  xport_cqe cq[64];
  size_t n, i;
  uint64_t now;
  int rv = xport_progress(s->x, timeout);

  if (rv != 0) {
    die("transport failure: %s", strerror(-rv));
  }
  while ((n = xport_poll_cq(s->x, cq, 64)) > 0) {
    for (i = 0; i < n; ++i) {
      xport_cqe *c = &cq[i];
      if (c->op == XPORT_OP_SEND) {
        uintptr_t k = (uintptr_t)c->ctx;
        uint64_t gen;
        if (k >= 1 && k <= 8) {
          s->cbusy[k - 1] = 0;
          gen = s->cgen[k - 1];
        } else {
          rbuf *r = c->ctx;
          r->echo = 0;
          gen = r->gen;
          repost_or_free(s, r);
        }
        /* A send of this session failed: the session is over.  If the
           client restarted (ECONNRESET), its new incarnation owns the
           peer now.  A send of an earlier session says nothing about
           this one. */
        if (c->status != 0 && s->active && c->peer == s->peer &&
            gen == s->sessions) {
          if (s->bye) {
            /* The client said goodbye and left before acknowledging our
               BYE_OK: a normal end. */
            srv_client_done(s, c->status == -ECONNRESET);
          } else {
            srv_end_session(s, xport_strerror(c), c->status == -ECONNRESET);
          }
        }
        continue;
      }
      /* a receive */
      rbuf *r = c->ctx;
      ctl m;
      --s->posted_now;
      if (c->status == 0) {
        if (c->peer == s->peer && s->active) {
          s->last_heard = xport_now();
        }
        if (ctl_decode(r->p, c->len, &m) == 0) {
          srv_ctl(s, c->peer, &m);
          if (m.type == C_HELLO) {
            s->last_heard = xport_now();
          }
        } else {
          srv_data(s, c->peer, r, c->len);
        }
      } else {
        ++s->rerr;
      }
      if (!r->echo) {
        repost_or_free(s, r); /* an echoed one waits for its send */
      }
    }
  }
  if (s->in_phase && s->done_count &&
      (s->received >= s->done_count ||
       xport_now() - s->done_at > 1000000000ull)) {
    srv_result(s);
  }
  srv_fill_posted(s);
  now = xport_now();
  if (s->bye) {
    /* Let the BYE_OK leave before forgetting the peer. */
    int busy = 0;
    for (i = 0; i < 8; ++i) {
      busy |= s->cbusy[i];
    }
    if (!busy || now - s->last_heard > 1000000000ull) {
      srv_client_done(s, 0);
    }
  }
  if (s->active && now - s->last_heard > (uint64_t)(s->o->idle_timeout * 1e9)) {
    srv_end_session(s, "vanished (silent past --idle-timeout)", 0);
  }
  /* --once: the first session is over, however it ended (a goodbye, a
     failed send, silence). */
  return s->o->once && s->sessions > 0 && !s->active;
}

static void server_init(server *s, const opts *o, xport *x, int quiet) {
  memset(s, 0, sizeof(*s));
  s->o = o;
  s->x = x;
  s->quiet = quiet;
  for (int i = 0; i < 8; ++i) {
    s->cbuf[i] = xalloc(CTL_SIZE);
  }
  srv_fill_posted(s);
}

/* server_fini frees the server's buffers; call it after xport_close. */
static void server_fini(server *s) {
  for (int i = 0; i < 8; ++i) {
    free(s->cbuf[i]);
  }
  while (s->live) {
    free_rbuf(s, s->live);
  }
  free(s->seen);
}

static int run_server(const opts *o) {
  xport *x;
  server s;
  int family = o->family == AF_UNSPEC ? AF_INET : o->family;
  struct sockaddr_storage ss;
  socklen_t l;
  char a[80];

  if (o->bind) {
    /* The address decides the family. */
    if (xport_parse_addr(o->bind, o->port, o->family, &ss, &l) != 0) {
      die_usage("bad server address '%s'", o->bind);
    }
    family = ss.ss_family;
  }
  if (open_xport(o, &x, 1, family, "server: ") != 0) {
    return 1;
  }
  xport_local_addr(x, &ss, &l);
  fprintf(stderr, "%s: server listening on %s (%s)\n", prog,
          xport_format_addr((struct sockaddr *)&ss, a, sizeof(a)),
          xport_describe(x));
  server_init(&s, o, x, 0);
  while (!atomic_load(&interrupted)) {
    if (server_step(&s, 100000000ull)) {
      break;
    }
  }
  if (atomic_load(&interrupted)) {
    fprintf(stderr, "%s: server interrupted after %" PRIu64 " sessions\n", prog,
            s.sessions);
  }
  xport_close(x);
  server_fini(&s);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Client                                                                   */

typedef struct result {
  test_kind test;
  uint64_t size, iters, warmup, window;
  double seconds;
  double mbps, gbps, msg_rate;
  double p50, p99, p999, max, avg;
  uint64_t retransmits, bad_in, errors;
  uint64_t srv_received, srv_dups, srv_corrupt, srv_errors;
  uint64_t path_pkts[XPORT_MAX_PATHS];
  uint32_t n_paths;
  double avg_burst;
  uint64_t imp_lost, imp_dup, imp_delayed, imp_qdrops, imp_blackholed;
  uint64_t imp_corrupted, imp_dup_delayed;
  /* the engines' drops over the run, by srd_drop_reason (srd) */
  uint64_t cli_drops[16], srv_drops[16];
  int complete;
  const char *stopped; /* why it stopped early, or NULL */
} result;

typedef struct client {
  const opts *o;
  xport *x;
  xport_peer peer;
  char peer_name[80];
  uint64_t deadline; /* the whole run's time limit */
  uint8_t *cbuf, *rbuf_ctl;
  uint64_t sent_ok, failed;
  int failed_status;
  char fail_msg[200];
  /* latencies of the measured iterations, in microseconds */
  float *lat;
  uint64_t nlat, lat_cap;
  int first_row;
  int json_first;
  /* Buffers a failed run left with the transport: freed after close. */
  void **orphans;
  size_t n_orphans, orphans_cap;
} client;

/* orphan hands |p| to be freed once the transport is closed. */
static void orphan(client *c, void *p) {
  if (c->n_orphans == c->orphans_cap) {
    size_t cap = c->orphans_cap ? 2 * c->orphans_cap : 64;
    void **n = realloc(c->orphans, cap * sizeof(void *));
    if (n == NULL) {
      return; /* leak rather than free what the kernel may still read */
    }
    c->orphans = n;
    c->orphans_cap = cap;
  }
  c->orphans[c->n_orphans++] = p;
}

static void free_orphans(client *c) {
  size_t i;

  for (i = 0; i < c->n_orphans; ++i) {
    free(c->orphans[i]);
  }
  free(c->orphans);
  c->orphans = NULL;
  c->n_orphans = c->orphans_cap = 0;
}

static void lat_add(client *c, double us) {
  if (c->nlat == c->lat_cap) {
    uint64_t cap = c->lat_cap ? c->lat_cap * 2 : 65536;
    float *p = realloc(c->lat, cap * sizeof(float));
    if (p == NULL) {
      return;
    }
    c->lat = p;
    c->lat_cap = cap;
  }
  c->lat[c->nlat++] = (float)us;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static double pct(const float *v, uint64_t n, double p) {
  uint64_t k;

  if (n == 0) {
    return 0;
  }
  k = (uint64_t)ceil(p * (double)n);
  if (k > 0) {
    --k;
  }
  if (k >= n) {
    k = n - 1;
  }
  return v[k];
}

/* client_fail records a failed completion (the peer vanished, refused,
   or is unreachable). */
static void client_fail(client *c, const xport_cqe *q) {
  if (c->failed++ == 0) {
    c->failed_status = q->status;
    snprintf(c->fail_msg, sizeof(c->fail_msg), "%s", xport_strerror(q));
  }
}

static int stop_now(client *c) {
  return atomic_load(&interrupted) || xport_now() >= c->deadline || c->failed;
}

static const char *const ctl_names[] = {"?",     "HELLO",  "HELLO_OK", "START",
                                        "READY", "DRAIN",  "DONE",     "RESULT",
                                        "BYE",   "BYE_OK", "ERROR"};

/* malformed_in counts the datagrams (srd) or frames (tcp) that were not
   our protocol at all. */
static uint64_t malformed_in(const client *c, const xport_stats *st) {
  if (strcmp(c->o->transport, "srd") != 0) {
    return st->bad_in;
  }
  return st->rx_truncated + st->drops[SRD_DROP_TRUNCATED] +
         st->drops[SRD_DROP_BAD_VERSION] + st->drops[SRD_DROP_BAD_TYPE] +
         st->drops[SRD_DROP_BAD_FIELD];
}

/* wait_ctl sends |req| (unless NULL) and waits for the control reply of
   type |expect|, bounded by |timeout_s|; returns 0 or -1 (c->fail_msg
   says why). */
static int wait_ctl(client *c, const ctl *req, ctl *rep, uint32_t expect,
                    double timeout_s) {
  uint64_t until = xport_now() + (uint64_t)(timeout_s * 1e9);
  int got = 0, sent = req == NULL;
  int rv;
  xport_stats st;
  uint64_t bad0, in0, mal0, t0 = xport_now(), last_check = 0;

  xport_get_stats(c->x, &st);
  bad0 = st.bad_in;
  in0 = st.pkts_in;
  mal0 = malformed_in(c, &st);

  rv = xport_post_recv(c->x, c->rbuf_ctl, CTL_SIZE, c->rbuf_ctl);
  if (rv != 0) {
    snprintf(c->fail_msg, sizeof(c->fail_msg), "post_recv: %s", strerror(-rv));
    return -1;
  }
  if (req) {
    ctl_encode(c->cbuf, req);
    rv = xport_post_send(c->x, c->peer, c->cbuf, CTL_SIZE, c->cbuf);
    if (rv != 0) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "post_send: %s",
               strerror(-rv));
      return -1;
    }
  }
  while (!(got && sent)) {
    xport_cqe q[8];
    size_t n, i;
    if (atomic_load(&interrupted)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "interrupted");
      return -1;
    }
    if (xport_now() > until) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no answer from %s within %.1f s (is an srd-perf server with "
               "-t %s running there?)",
               c->peer_name, timeout_s, c->o->transport);
      return -1;
    }
    rv = xport_progress(c->x, 50000000ull);
    if (rv != 0) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "transport: %s",
               strerror(-rv));
      return -1;
    }
    if (xport_now() - last_check > 50000000ull) {
      /* Something that is not our protocol came back: say so now rather
         than after the timeout.  Malformed datagrams say it at once; so
         does, after 100 ms, a peer all of whose datagrams were rejected
         (an echo service reflects our own).  Rejected packets alongside
         valid ones are no sign: a client restarted on the ports of an
         earlier one gets what the server still sends that one. */
      last_check = xport_now();
      xport_get_stats(c->x, &st);
      if (!got && st.bad_in > bad0 &&
          (malformed_in(c, &st) > mal0 ||
           (last_check - t0 > 100000000ull &&
            st.pkts_in - in0 <= st.bad_in - bad0))) {
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered garbage (%" PRIu64 " malformed %s): not an "
                 "srd-perf server with -t %s",
                 c->peer_name, st.bad_in - bad0,
                 strcmp(c->o->transport, "tcp") == 0 ? "frames" : "datagrams",
                 c->o->transport);
        c->failed = 1;
        c->failed_status = -EPROTO;
        return -1;
      }
    }
    n = xport_poll_cq(c->x, q, 8);
    for (i = 0; i < n; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
        if (q[i].status == -EPROTO) {
          snprintf(c->fail_msg, sizeof(c->fail_msg),
                   "%s answered garbage (not the framing of srd-perf's "
                   "tcp transport): not an srd-perf server",
                   c->peer_name);
        }
        return -1;
      }
      if (q[i].op == XPORT_OP_SEND) {
        sent = 1;
        continue;
      }
      if (ctl_decode(q[i].buf, q[i].len, rep) != 0) {
        const uint8_t *b = q[i].buf;
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered garbage (%zu bytes starting %02x %02x %02x "
                 "%02x): not an srd-perf server",
                 c->peer_name, q[i].len, q[i].len > 0 ? b[0] : 0,
                 q[i].len > 1 ? b[1] : 0, q[i].len > 2 ? b[2] : 0,
                 q[i].len > 3 ? b[3] : 0);
        c->failed = 1;
        return -1;
      }
      if (rep->type == C_ERROR) {
        snprintf(c->fail_msg, sizeof(c->fail_msg), "server: %s", rep->text);
        c->failed = 1;
        return -1;
      }
      if (rep->type != expect) {
        /* A reflector (a UDP echo service, or a loop back to ourselves)
           returns our own requests. */
        snprintf(c->fail_msg, sizeof(c->fail_msg),
                 "%s answered %s to %s: not an srd-perf server (an echo "
                 "service?)",
                 c->peer_name,
                 rep->type < sizeof(ctl_names) / sizeof(ctl_names[0])
                     ? ctl_names[rep->type]
                     : "an unknown message",
                 ctl_names[expect - 1 < 10 ? expect - 1 : 0]);
        c->failed = 1;
        return -1;
      }
      got = 1;
    }
  }
  return 0;
}

static void record_stats(client *c, result *r, const xport_stats *a,
                         const xport_stats *b) {
  uint32_t i;

  r->retransmits = b->retransmits - a->retransmits;
  r->bad_in = b->bad_in - a->bad_in;
  r->n_paths = b->n_paths;
  for (i = 0; i < b->n_paths && i < XPORT_MAX_PATHS; ++i) {
    r->path_pkts[i] = b->path_pkts[i] - a->path_pkts[i];
  }
  r->avg_burst = b->sends > a->sends ? (double)(b->pkts_out - a->pkts_out) /
                                           (double)(b->sends - a->sends)
                                     : 0;
  r->imp_lost = b->imp_lost - a->imp_lost;
  r->imp_dup = b->imp_dup - a->imp_dup;
  r->imp_delayed = b->imp_delayed - a->imp_delayed;
  r->imp_qdrops = b->imp_queue_drops - a->imp_queue_drops;
  r->imp_blackholed = b->imp_blackholed - a->imp_blackholed;
  r->imp_corrupted = b->imp_corrupted - a->imp_corrupted;
  r->imp_dup_delayed = b->imp_dup_delayed - a->imp_dup_delayed;
  for (i = 0; i < NDROPS; ++i) {
    r->cli_drops[i] = b->drops[i] - a->drops[i];
  }
  (void)c;
}

/* run_stream runs bw or rate: a window of sends kept full. */
static void run_stream(client *c, result *r, uint64_t total, uint64_t warm) {
  const opts *o = c->o;
  uint32_t w = (uint32_t)r->window, i;
  uint8_t **bufs = calloc(w, sizeof(uint8_t *));
  uint64_t *posted_at = calloc(w, sizeof(uint64_t));
  uint64_t next = 0, done = 0, t0 = 0, t_end = 0, last_progress;
  uint64_t dur_end = UINT64_MAX, outstanding = 0, stop_at = 0;
  int timed = o->duration > 0;
  xport_cqe q[64];

  if (bufs == NULL || posted_at == NULL) {
    die("out of memory");
  }
  for (i = 0; i < w; ++i) {
    bufs[i] = xalloc(r->size);
    fill(bufs[i], r->size, 0, 1);
  }
  last_progress = xport_now();
  if (warm == 0) {
    t0 = xport_now();
    if (timed) {
      dur_end = t0 + (uint64_t)(o->duration * 1e9);
    }
  }
  /* Fill the window. */
  for (;;) {
    uint64_t now;
    size_t n, k;
    int stopping = stop_now(c) || (timed && t0 && xport_now() >= dur_end);

    for (i = 0; !stopping && outstanding < w && (timed || next < total);) {
      uint32_t slot = (uint32_t)(next % w);
      if (posted_at[slot]) {
        break; /* its previous send is not done */
      }
      fill(bufs[slot], r->size, next, o->verify);
      posted_at[slot] = xport_now();
      if (xport_post_send(c->x, c->peer, bufs[slot], r->size,
                          (void *)(uintptr_t)slot) != 0) {
        posted_at[slot] = 0;
        break;
      }
      ++next;
      ++outstanding;
    }
    if (outstanding == 0 && (stopping || (!timed && next >= total))) {
      break;
    }
    if (stopping && stop_at == 0) {
      stop_at = xport_now();
    }
    if (stop_at &&
        xport_now() - stop_at >
            (c->failed ? (uint64_t)(o->idle_timeout * 1e9) : 1000000000ull)) {
      break; /* stopping, and the rest does not complete: give up */
    }
    if (xport_progress(c->x, 100000000ull) != 0) {
      break;
    }
    now = xport_now();
    while ((n = xport_poll_cq(c->x, q, 64)) > 0) {
      for (k = 0; k < n; ++k) {
        uint32_t slot = (uint32_t)(uintptr_t)q[k].ctx;
        if (q[k].op != XPORT_OP_SEND || slot >= w) {
          continue;
        }
        --outstanding;
        if (q[k].status != 0) {
          client_fail(c, &q[k]);
        } else {
          ++done;
          if (done > warm) {
            lat_add(c, (double)(now - posted_at[slot]) / 1e3);
          }
        }
        posted_at[slot] = 0;
        if (done == warm && t0 == 0) {
          t0 = now;
          c->nlat = 0;
          if (timed) {
            dur_end = t0 + (uint64_t)(o->duration * 1e9);
          }
        }
        t_end = now;
        last_progress = now;
      }
    }
    if (!stopping && now - last_progress > (uint64_t)(o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no send completed for %.1f s: %s stalled", o->idle_timeout,
               c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
    }
  }
  r->iters = done > warm ? done - warm : 0;
  r->seconds = t0 && t_end > t0 ? (double)(t_end - t0) / 1e9 : 0;
  c->sent_ok = done;
  for (i = 0; i < w; ++i) {
    /* A buffer whose send never completed stays with the transport. */
    if (posted_at[i]) {
      orphan(c, bufs[i]);
    } else {
      free(bufs[i]);
    }
  }
  free(bufs);
  free(posted_at);
}

/* run_pingpong runs lat: one message out, its echo back, repeat.  The
   round trip is from posting the message to its echo's completion.  A
   send completes when the peer acknowledged it (srd), which may come
   after the echo, so sends rotate over a few buffers and the next ping
   does not wait for the previous one's acknowledgement. */
#define PING_BUFS 8
static void run_pingpong(client *c, result *r, uint64_t total, uint64_t warm) {
  const opts *o = c->o;
  size_t cap = r->size < CTL_SIZE ? CTL_SIZE : r->size;
  uint8_t *sbuf[PING_BUFS], *rb = xalloc(cap);
  int busy[PING_BUFS] = {0}, nbusy = 0, recv_out = 0, k;
  uint64_t it, t0 = 0, t_end = 0, dur_end = UINT64_MAX, ts = 0, last;
  int timed = o->duration > 0;
  xport_cqe q[16];

  for (k = 0; k < PING_BUFS; ++k) {
    sbuf[k] = xalloc(r->size);
    fill(sbuf[k], r->size, 0, 1);
  }
  last = xport_now();
  for (it = 0;;) {
    size_t n, i;
    uint64_t now;

    if (!recv_out) {
      /* The previous echo is in: start the next round trip. */
      if (it == warm && t0 == 0) {
        t0 = xport_now();
        c->nlat = 0;
        if (timed) {
          dur_end = t0 + (uint64_t)(o->duration * 1e9);
        }
      }
      if (stop_now(c) || (t0 && xport_now() >= dur_end) ||
          (!timed && it >= total)) {
        if (nbusy == 0 || stop_now(c)) {
          break;
        }
      } else {
        for (k = 0; k < PING_BUFS && busy[k]; ++k) {
        }
        if (k < PING_BUFS) {
          fill(sbuf[k], r->size, it, o->verify);
          if (xport_post_recv(c->x, rb, cap, rb) != 0) {
            break;
          }
          recv_out = 1;
          ts = xport_now();
          if (xport_post_send(c->x, c->peer, sbuf[k], r->size,
                              (void *)(uintptr_t)(k + 1)) != 0) {
            break;
          }
          busy[k] = 1;
          ++nbusy;
        }
      }
    }
    if (xport_progress(c->x, 100000000ull) != 0) {
      c->failed = 1;
      break;
    }
    n = xport_poll_cq(c->x, q, 16);
    now = xport_now();
    for (i = 0; i < n; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
      }
      last = now;
      if (q[i].op == XPORT_OP_SEND) {
        k = (int)(uintptr_t)q[i].ctx - 1;
        if (k >= 0 && k < PING_BUFS && busy[k]) {
          busy[k] = 0;
          --nbusy;
        }
        continue;
      }
      recv_out = 0;
      if (q[i].status == 0) {
        uint32_t idx;
        if (o->verify ? check(rb, q[i].len, &idx) != 0 || idx != (uint32_t)it
                      : q[i].len < 8 || get32(rb) != MAGIC_DATA) {
          snprintf(c->fail_msg, sizeof(c->fail_msg),
                   "%s echoed a wrong message", c->peer_name);
          c->failed = 1;
        }
        if (it >= warm) {
          lat_add(c, (double)(now - ts) / 1e3);
        }
        t_end = now;
        ++it;
      }
    }
    if (c->failed) {
      break;
    }
    if (now - last > (uint64_t)(o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg),
               "no echo for %.1f s: %s stalled", o->idle_timeout, c->peer_name);
      c->failed = 1;
      c->failed_status = -ETIMEDOUT;
      break;
    }
  }
  r->iters = it > warm ? it - warm : 0;
  r->seconds = t0 && t_end > t0 ? (double)(t_end - t0) / 1e9 : 0;
  c->sent_ok = it;
  /* Buffers the transport still holds (a failed run) stay with it. */
  for (k = 0; k < PING_BUFS; ++k) {
    if (busy[k]) {
      orphan(c, sbuf[k]);
    } else {
      free(sbuf[k]);
    }
  }
  if (recv_out) {
    orphan(c, rb);
  } else {
    free(rb);
  }
}

static void print_header(client *c, FILE *f) {
  const opts *o = c->o;

  if (o->json || o->csv) {
    return;
  }
  fprintf(f, "%s: %s %s to %s, %s, %s%s\n", prog, o->transport,
          test_names[o->test], c->peer_name,
          o->duration > 0 ? "timed" : "counted",
          o->busy ? "busy-poll" : "blocking", o->verify ? ", verify" : "");
  fprintf(f, "  transport: %s\n", xport_describe(c->x));
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
  fprintf(f, "%10s %9s %6s %10s %8s %10s %9s %9s %9s %9s %8s  %s\n", "size",
          "iters", "window", "MB/s", "Gbit/s", "msg/s",
          o->test == T_LAT ? "rtt p50" : "p50 us", "p99 us", "p99.9 us",
          "max us", "retrans", "path share %");
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

/* print_drops_json prints every drop reason of |drops| as a JSON object. */
static void print_drops_json(FILE *f, const uint64_t *drops) {
  int d;

  fprintf(f, "{");
  for (d = 0; d < NDROPS; ++d) {
    fprintf(f, "%s\"%s\": %" PRIu64, d ? ", " : "",
            srd_drop_reason_name((srd_drop_reason)d), drops[d]);
  }
  fprintf(f, "}");
}

/* print_drops prints the nonzero drops of |drops| as " name n, ...", or
   " none". */
static void print_drops(FILE *f, const uint64_t *drops) {
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

static void print_row(client *c, const result *r, FILE *f) {
  const opts *o = c->o;
  char share[600];
  uint64_t tot = 0;
  uint32_t i;

  path_share(r, share, sizeof(share));
  for (i = 0; i < r->n_paths; ++i) {
    tot += r->path_pkts[i];
  }
  if (o->csv) {
    if (c->first_row) {
      fprintf(f, "transport,test,size,iterations,window,seconds,mbps,gbps,"
                 "msg_rate,lat_p50_us,lat_p99_us,lat_p999_us,lat_max_us,"
                 "retransmits,paths,burst,complete\n");
    }
    fprintf(f,
            "%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.3f,%.4f,%.1f,"
            "%.2f,%.2f,%.2f,%.2f,%" PRIu64 ",%u,%u,%d\n",
            o->transport, test_names[r->test], r->size, r->iters, r->window,
            r->seconds, r->mbps, r->gbps, r->msg_rate, r->p50, r->p99, r->p999,
            r->max, r->retransmits, r->n_paths,
            strcmp(o->transport, "srd") == 0 ? o->burst : 0, r->complete);
  } else if (o->json) {
    fprintf(f,
            "%s{\"transport\": \"%s\", \"test\": \"%s\", \"size\": %" PRIu64
            ", \"iterations\": %" PRIu64 ", \"warmup\": %" PRIu64
            ", \"window\": %" PRIu64 ", \"seconds\": %.6f, \"mbps\": %.3f"
            ", \"gbps\": %.4f, \"msg_rate\": %.1f, \"lat_kind\": \"%s\""
            ", \"lat_us\": {\"p50\": %.2f, \"p99\": %.2f, \"p999\": %.2f"
            ", \"max\": %.2f, \"avg\": %.2f}, \"retransmits\": %" PRIu64
            ", \"paths\": %u, \"burst\": %u, \"avg_burst\": %.2f"
            ", \"mtu\": %u, \"busy_poll\": %s, \"path_pkts\": [",
            c->json_first ? (o->sweep ? "[\n" : "") : ",\n", o->transport,
            test_names[r->test], r->size, r->iters, r->warmup, r->window,
            r->seconds, r->mbps, r->gbps, r->msg_rate,
            r->test == T_LAT ? "rtt" : "completion", r->p50, r->p99, r->p999,
            r->max, r->avg, r->retransmits, r->n_paths,
            strcmp(o->transport, "srd") == 0 ? o->burst : 0, r->avg_burst,
            o->mtu, o->busy ? "true" : "false");
    for (i = 0; i < r->n_paths; ++i) {
      fprintf(f, "%s%" PRIu64, i ? ", " : "", r->path_pkts[i]);
    }
    fprintf(f, "], \"path_share\": [");
    for (i = 0; i < r->n_paths; ++i) {
      fprintf(f, "%s%.4f", i ? ", " : "",
              tot ? (double)r->path_pkts[i] / (double)tot : 0.0);
    }
    fprintf(f,
            "], \"bad_in\": %" PRIu64 ", \"errors\": %" PRIu64
            ", \"server\": {\"received\": %" PRIu64 ", \"duplicates\": %" PRIu64
            ", \"corrupted\": %" PRIu64 ", \"errors\": %" PRIu64
            "}, \"impairments\": {\"lost\": %" PRIu64
            ", \"duplicated\": %" PRIu64 ", \"delayed\": %" PRIu64
            ", \"queue_drops\": %" PRIu64 ", \"blackholed\": %" PRIu64
            ", \"corrupted\": %" PRIu64 ", \"dup_delayed\": %" PRIu64
            "}, \"verify\": %s, \"complete\": %s"
            ", \"stopped\": %s%s%s",
            r->bad_in, r->errors, r->srv_received, r->srv_dups, r->srv_corrupt,
            r->srv_errors, r->imp_lost, r->imp_dup, r->imp_delayed,
            r->imp_qdrops, r->imp_blackholed, r->imp_corrupted,
            r->imp_dup_delayed, o->verify ? "true" : "false",
            r->complete ? "true" : "false", r->stopped ? "\"" : "",
            r->stopped ? r->stopped : "null", r->stopped ? "\"" : "");
    if (strcmp(o->transport, "srd") == 0) {
      fprintf(f, ", \"drops\": {\"client\": ");
      print_drops_json(f, r->cli_drops);
      fprintf(f, ", \"server\": ");
      print_drops_json(f, r->srv_drops);
      fprintf(f, "}}");
    } else {
      fprintf(f, ", \"drops\": null}");
    }
  } else {
    fprintf(f,
            "%10" PRIu64 " %9" PRIu64 " %6" PRIu64 " %10.1f %8.3f %10.0f %9.2f "
            "%9.2f %9.2f %9.2f %8" PRIu64 "  %s\n",
            r->size, r->iters, r->window, r->mbps, r->gbps, r->msg_rate, r->p50,
            r->p99, r->p999, r->max, r->retransmits, share);
    if (r->stopped) {
      fprintf(f, "%10s stopped early: %s\n", "", r->stopped);
    }
    if (o->imp.corrupt > 0 || o->imp.dup_delay_ns) {
      fprintf(f,
              "%10s impaired here: %" PRIu64 " datagrams corrupted, %" PRIu64
              " duplicates late; engine drops: client",
              "", r->imp_corrupted, r->imp_dup_delayed);
      print_drops(f, r->cli_drops);
      fprintf(f, "; server");
      print_drops(f, r->srv_drops);
      fprintf(f, "\n");
    }
  }
  c->first_row = 0;
  c->json_first = 0;
  fflush(f);
}

static uint64_t default_iters(const opts *o, uint64_t size) {
  if (o->iters_set) {
    return o->iters;
  }
  if (o->test == T_LAT) {
    return o->sweep ? 1000 : 10000;
  }
  if (o->test == T_RATE) {
    return o->sweep ? 10000 : 100000;
  }
  if (o->sweep) {
    uint64_t n = (256ull << 20) / size;
    return n < 64 ? 64 : n > 10000 ? 10000 : n;
  }
  return 1000;
}

static uint32_t default_window(const opts *o, uint64_t size) {
  uint64_t w;

  if (o->window_set) {
    return o->window;
  }
  if (o->test == T_LAT) {
    return 1;
  }
  if (o->test == T_RATE) {
    return 256;
  }
  w = (16ull << 20) / size;
  return (uint32_t)(w < 2 ? 2 : w > 128 ? 128 : w);
}

/* send_drains sends |n| DRAIN messages and waits until all are done. */
static int send_drains(client *c, uint64_t n) {
  uint8_t *b = xalloc(CTL_SIZE);
  uint64_t posted = 0, done = 0, last = xport_now();
  ctl d;

  memset(&d, 0, sizeof(d));
  d.type = C_DRAIN;
  ctl_encode(b, &d);
  while (done < n && !c->failed) {
    xport_cqe q[16];
    size_t k, i;
    while (posted < n &&
           xport_post_send(c->x, c->peer, b, CTL_SIZE, NULL) == 0) {
      ++posted;
    }
    xport_progress(c->x, 10000000ull);
    k = xport_poll_cq(c->x, q, 16);
    for (i = 0; i < k; ++i) {
      if (q[i].status != 0) {
        client_fail(c, &q[i]);
      }
      ++done;
      last = xport_now();
    }
    if (atomic_load(&interrupted) ||
        xport_now() - last > (uint64_t)(c->o->idle_timeout * 1e9)) {
      snprintf(c->fail_msg, sizeof(c->fail_msg), "%s stalled (drain)",
               c->peer_name);
      c->failed = 1;
    }
  }
  if (done == posted) {
    free(b);
  } else {
    orphan(c, b);
  }
  return c->failed ? -1 : 0;
}

/* run_size runs one size: START, drains, the test, DONE, RESULT.
   Returns 0, or -1 when the run must stop. */
static int run_size(client *c, uint64_t size, result *r) {
  const opts *o = c->o;
  ctl req, rep;
  xport_stats a, b;
  uint64_t total, warm, k;

  memset(r, 0, sizeof(*r));
  r->test = o->test;
  r->size = size;
  r->window = default_window(o, size);
  total = default_iters(o, size);
  warm = o->warmup_set ? o->warmup : total / 10 > 1000 ? 1000 : total / 10;
  r->warmup = warm;
  if (o->duration > 0) {
    total = 0;
  } else {
    total += warm;
  }
  memset(&req, 0, sizeof(req));
  req.type = C_START;
  req.test = o->test;
  req.flags = o->verify ? 1 : 0;
  req.size = size;
  req.count = total;
  req.v[0] = r->window;
  if (wait_ctl(c, &req, &rep, C_READY, o->idle_timeout) != 0) {
    return -1;
  }
  /* Fill the server's receives left from a timed phase (see srv_ctl). */
  if (rep.v[0] && send_drains(c, rep.v[0]) != 0) {
    return -1;
  }
  xport_get_stats(c->x, &a);
  c->nlat = 0;
  if (o->test == T_LAT) {
    run_pingpong(c, r, total, warm);
  } else {
    run_stream(c, r, total, warm);
  }
  xport_get_stats(c->x, &b);
  record_stats(c, r, &a, &b);
  if (o->verbose && strcmp(o->transport, "srd") == 0) {
    fprintf(stderr,
            "%s: engine: srtt %.1f us, min rtt %.1f us, rto %.1f us, cwnd "
            "%" PRIu64 " B, rnr %" PRIu64 "/%" PRIu64 ", %" PRIu64
            " packets in %" PRIu64 " sends; drops (all time):",
            prog, (double)b.srtt_ns / 1e3, (double)b.min_rtt_ns / 1e3,
            (double)b.rto_ns / 1e3, b.cwnd_bytes, b.rnr_sent, b.rnr_received,
            b.pkts_out - a.pkts_out, b.sends - a.sends);
    print_drops(stderr, b.drops);
    fprintf(stderr, "\n");
  }
  r->errors = c->failed;
  if (c->nlat) {
    double sum = 0;
    qsort(c->lat, c->nlat, sizeof(float), cmp_float);
    r->p50 = pct(c->lat, c->nlat, 0.50);
    r->p99 = pct(c->lat, c->nlat, 0.99);
    r->p999 = pct(c->lat, c->nlat, 0.999);
    r->max = c->lat[c->nlat - 1];
    for (k = 0; k < c->nlat; ++k) {
      sum += c->lat[k];
    }
    r->avg = sum / (double)c->nlat;
  }
  if (r->seconds > 0) {
    r->msg_rate = (double)r->iters / r->seconds;
    r->mbps = r->msg_rate * (double)size / 1e6;
    r->gbps = r->mbps * 8 / 1e3;
  }
  r->complete = o->duration > 0 ? !c->failed && !atomic_load(&interrupted)
                                : r->iters + warm == total;
  if (c->failed) {
    r->stopped = "peer failed";
    return -1;
  }
  if (atomic_load(&interrupted)) {
    r->stopped = "interrupted";
    return -1;
  }
  if (!r->complete) {
    r->stopped = "time limit";
  }
  memset(&req, 0, sizeof(req));
  req.type = C_DONE;
  req.count = c->sent_ok;
  if (wait_ctl(c, &req, &rep, C_RESULT, o->idle_timeout) != 0) {
    return -1;
  }
  r->srv_received = rep.v[0];
  r->srv_dups = rep.v[2];
  r->srv_corrupt = rep.v[3];
  r->srv_errors = rep.v[4];
  memcpy(r->srv_drops, rep.drops, sizeof(r->srv_drops));
  if (o->test == T_LAT) {
    r->retransmits += rep.v[5];
  }
  return r->complete ? 0 : -1;
}

typedef struct client_args {
  const opts *o;
  struct sockaddr_storage server;
  socklen_t server_len;
  int rc;
} client_args;

static int run_client(const opts *o, const struct sockaddr_storage *srv,
                      socklen_t srv_len) {
  opts mtu_opts;
  client c;
  ctl req, rep;
  result r;
  uint64_t sizes[32];
  int nsizes = 0, rc = 0, i;
  FILE *f = stdout;

  memset(&c, 0, sizeof(c));
  c.o = o;
  c.first_row = 1;
  c.json_first = 1;
  c.deadline = xport_now() + (uint64_t)(o->time_limit * 1e9);
  xport_format_addr((const struct sockaddr *)srv, c.peer_name,
                    sizeof(c.peer_name));
  if (o->mtu == 0 && strcmp(o->transport, "srd") == 0) {
    int m = xport_path_mtu((const struct sockaddr *)srv, srv_len);
    if (m < 0) {
      fprintf(stderr, "%s: no route to %s: %s\n", prog, c.peer_name,
              strerror(-m));
      return 1;
    }
    /* At most 32000 for bw, 8192 for lat and rate: the engine's
       congestion control paces one packet per round trip whenever its
       window is under one MTU-sized packet, and small messages keep the
       window small, so a large MTU would pace 64-byte messages.  Bulk
       transfers keep most of the large-packet gain on loopback
       (docs/transports.md). */
    uint32_t cap = o->test == T_BW ? 32000 : 8192;
    mtu_opts = *o;
    mtu_opts.mtu = (uint32_t)m > cap ? cap : (uint32_t)m;
    o = &mtu_opts;
    c.o = o;
  }
  if (open_xport(o, &c.x, 0, srv->ss_family, "") != 0) {
    return 1;
  }
  if (xport_add_peer(c.x, (const struct sockaddr *)srv, srv_len, &c.peer) !=
      0) {
    fprintf(stderr, "%s: cannot add peer %s\n", prog, c.peer_name);
    xport_close(c.x);
    return 1;
  }
  c.cbuf = xalloc(CTL_SIZE);
  c.rbuf_ctl = xalloc(CTL_SIZE);
  memset(&req, 0, sizeof(req));
  req.type = C_HELLO;
  req.test = o->test;
  req.size = o->sweep ? SWEEP_MAX : o->size;
  if (wait_ctl(&c, &req, &rep, C_HELLO_OK, o->idle_timeout) != 0) {
    xport_stats st;
    xport_get_stats(c.x, &st);
    if (c.failed_status == -EHOSTUNREACH && st.pkts_in > 0) {
      fprintf(stderr,
              "%s: %s did not answer the SRD handshake; %" PRIu64
              " datagrams came back from it, none a valid SRD packet "
              "(%" PRIu64 " dropped as malformed): not an srd-perf server?\n",
              prog, c.peer_name, st.pkts_in, st.bad_in);
    } else if (c.failed_status == -EHOSTUNREACH) {
      fprintf(stderr,
              "%s: %s is unreachable: no answer to the SRD handshake (%s). "
              "Is srd-perf -s running there, and are UDP ports %u-%u "
              "open?\n",
              prog, c.peer_name, c.fail_msg, o->port, o->port + o->paths - 1);
    } else if (c.failed_status == -ECONNREFUSED) {
      fprintf(stderr,
              "%s: %s refused the connection: is srd-perf -s -t tcp running "
              "there?\n",
              prog, c.peer_name);
    } else {
      fprintf(stderr, "%s: %s\n", prog,
              c.fail_msg[0] ? c.fail_msg : "no answer");
    }
    xport_close(c.x);
    free(c.cbuf);
    free(c.rbuf_ctl);
    free_orphans(&c);
    return atomic_load(&interrupted) ? 130 : 1;
  }
  print_header(&c, f);
  if (o->sweep) {
    uint64_t s;
    for (s = MIN_SIZE; s <= SWEEP_MAX; s *= 2) {
      sizes[nsizes++] = s;
    }
  } else {
    sizes[nsizes++] = o->size;
  }
  for (i = 0; i < nsizes; ++i) {
    int rv = run_size(&c, sizes[i], &r);
    if (r.iters || r.stopped || rv == 0) {
      print_row(&c, &r, f);
    }
    if (rv != 0) {
      break;
    }
  }
  if (o->json && !c.json_first) {
    fprintf(f, "%s\n", o->sweep ? "\n]" : "");
  }
  if (c.failed) {
    fprintf(stderr, "%s: %s: %s%s\n", prog, c.peer_name,
            c.fail_msg[0] ? c.fail_msg : "failed",
            c.failed > 1 ? " (and more failed operations)" : "");
    if (c.failed_status == -ETIMEDOUT || c.failed_status == -ECONNRESET ||
        c.failed_status == -EHOSTUNREACH || c.failed_status == -EPIPE) {
      fprintf(stderr, "%s: the peer vanished mid-run\n", prog);
    }
    rc = 1;
  } else if (atomic_load(&interrupted)) {
    /* Say goodbye (briefly), so that the server moves on at once. */
    uint64_t until = xport_now() + 300000000ull;
    memset(&req, 0, sizeof(req));
    req.type = C_BYE;
    ctl_encode(c.cbuf, &req);
    if (xport_post_send(c.x, c.peer, c.cbuf, CTL_SIZE, c.cbuf) == 0) {
      xport_cqe q[8];
      int bye_done = 0;
      while (!bye_done && xport_now() < until) {
        size_t n, k;
        xport_progress(c.x, 10000000ull);
        n = xport_poll_cq(c.x, q, 8);
        for (k = 0; k < n; ++k) {
          bye_done |= q[k].op == XPORT_OP_SEND && q[k].buf == c.cbuf;
        }
      }
    }
    fprintf(stderr,
            "%s: interrupted; the rows above hold what was "
            "measured\n",
            prog);
    rc = 130;
  } else {
    memset(&req, 0, sizeof(req));
    req.type = C_BYE;
    wait_ctl(&c, &req, &rep, C_BYE_OK, 1.0);
    if (r.stopped) {
      fprintf(stderr, "%s: stopped at the time limit (--time-limit %.0f)\n",
              prog, o->time_limit);
    }
    if (o->verify && (r.srv_dups || r.srv_corrupt ||
                      (o->test != T_LAT && r.srv_received != c.sent_ok))) {
      fprintf(stderr,
              "%s: verification failed: sent %" PRIu64 ", server received "
              "%" PRIu64 ", %" PRIu64 " duplicates, %" PRIu64 " corrupted\n",
              prog, c.sent_ok, r.srv_received, r.srv_dups, r.srv_corrupt);
      rc = 1;
    }
  }
  xport_close(c.x);
  free(c.cbuf);
  free(c.rbuf_ctl);
  free(c.lat);
  free_orphans(&c);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Loopback: the server on a thread of its own                              */

typedef struct lb_server {
  const opts *o;
  int family;
  atomic_int ready; /* 1 listening, -1 failed */
  atomic_int stop;
  uint16_t port;
} lb_server;

static void *lb_server_main(void *arg) {
  lb_server *ls = arg;
  opts o = *ls->o;
  xport *x;
  server s;
  struct sockaddr_storage ss;
  socklen_t l;

  o.port = 0;
  o.once = 1;
  o.bind = ls->family == AF_INET6 ? "::1" : "127.0.0.1";
  if (o.ncpu > 1) {
    pin(o.cpu[1]);
  }
  {
    xport_config cfg;
    make_config(&o, &cfg, 1, ls->family, "server: ");
    cfg.port = 0;
    cfg.log = o.verbose ? log_cb : NULL;
    if (xport_open(&x, &cfg) != 0) {
      fprintf(stderr, "%s: cannot open the loopback server\n", prog);
      atomic_store(&ls->ready, -1);
      return NULL;
    }
  }
  xport_local_addr(x, &ss, &l);
  ls->port = ss.ss_family == AF_INET
                 ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                 : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  server_init(&s, &o, x, !o.verbose);
  atomic_store(&ls->ready, 1);
  while (!atomic_load(&ls->stop)) {
    if (server_step(&s, o.busy ? 0 : 50000000ull)) {
      break;
    }
  }
  xport_close(x);
  server_fini(&s);
  return NULL;
}

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
    die("cannot start the server thread");
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
  rc = run_client(o, &ss, l);
  atomic_store(&ls.stop, 1);
  pthread_join(th, NULL);
  return rc;
}

int main(int argc, char **argv) {
  opts o;
  struct sigaction sa;

  parse_args(&o, argc, argv);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (o.server) {
    return run_server(&o);
  }
  if (o.loopback) {
    return run_loopback(&o);
  }
  {
    struct sockaddr_storage ss;
    socklen_t l;
    if (xport_parse_addr(o.host, o.port, o.family, &ss, &l) != 0) {
      die_usage("cannot resolve '%s'", o.host);
    }
    return run_client(&o, &ss, l);
  }
}
