/*
 * opts.c: srd-perf's command line (usage, parsing, defaults, validation)
 * and the xport_config the options make.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "perf.h"
#include "tool_opt.h"
#include "tool_parse.h"

#define DEFAULT_PORT 18515

const char *const test_names[] = {"bw", "lat", "rate"};
const char *const dir_names[] = {"forward", "reverse", "bidir"};

static void usage(FILE *f) {
  fprintf(
      f,
      "Usage: srd-perf -s [ADDR] [OPTION]...\n"
      "  or:  srd-perf [OPTION]... SERVER\n"
      "  or:  srd-perf --loopback [OPTION]...\n"
      "Measure emulated SRD (libsrd over UDP with io_uring) against kernel "
      "TCP.\n"
      "-s [ADDR] runs the server, SERVER runs the tests against SERVER, and\n"
      "--loopback runs both ends here, one thread each.\n"
      "\n"
      "Test:\n"
      "  -t, --transport udp|tcp|fabric  transport [udp; a server without -t\n"
      "                           serves udp and tcp, on the same port]\n"
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
      "  -R, --reverse            bw, rate: the server sends, the client\n"
      "                           receives and measures (as iperf3's -R)\n"
      "  --bidir                  bw, rate: both ways at once; a row for each\n"
      "                           direction, measured at its receiver, and\n"
      "                           their sum (direction \"bidir\")\n"
      "  -P, --parallel N         parallel streams, as iperf3's -P: N clients\n"
      "                           in this process, each its own transport and\n"
      "                           session, a row each and their sum [1]; with\n"
      "                           -a a sum per size, --csv a \"stream\" "
      "column\n"
      "                           and \"sum\" lines, --pcap one capture of "
      "all\n"
      "                           (srd paths are --paths, no longer -P)\n"
      "  --verify                 check every byte, and that each message\n"
      "                           arrives exactly once, at the receiver (the\n"
      "                           server; with -R the client)\n"
      "  -m, --mem host|cuda      where messages live: host memory, or CUDA\n"
      "                           device memory, staged through pinned host\n"
      "                           buffers (as ucx_perftest -m cuda) [host]\n"
      "  --cuda-device N          -m cuda: the device's ordinal [0]\n"
      "\n"
      "Transport:\n"
      "  -p, --port PORT          server port [%d]\n"
      "  --bind ADDR              local address\n"
      "  --local-port PORT        client's (first) local port [any free]\n"
      "  -4, -6                   IPv4 or IPv6 [from the address; 4]\n"
      "  --paths N                srd: sockets (source ports) to spray over,\n"
      "                           1..64 [16]\n"
      "  --burst N                srd: packets per path per UDP GSO send, "
      "1..64\n"
      "                           (1 = per-packet spraying) [64]\n"
      "  --mtu BYTES              srd: payload bytes per packet [the route's\n"
      "                           MTU less headers, at most 32000 for bw,\n"
      "                           8192 for lat and rate]\n"
      "  --busy-poll, --blocking  spin, or sleep in the kernel [lat: "
      "busy-poll,\n"
      "                           bw and rate: blocking]\n"
      "  --no-gso, --no-gro, --no-multishot   srd: turn kernel features off\n"
      "  --cc NAME                srd: congestion control [swift]; tcp: the\n"
      "                           kernel's (TCP_CONGESTION: cubic, reno, bbr\n"
      "                           ...) [the system's]\n"
      "  --rto-min US             srd: retransmission timeout floor [5000]\n"
      "  --target-qdelay US       srd: queueing delay target [200]\n"
      "  --provider NAME          fabric: the libfabric provider, e.g.\n"
      "                           tcp;ofi_rxm, udp;ofi_rxd, efa [FI_PROVIDER,\n"
      "                           else libfabric's first RDM provider]\n"
      "  --list-providers         list the libfabric providers -t fabric can\n"
      "                           use here (as fi_info does), and exit\n"
      "  --max-size SIZE          server: largest message accepted [8M]\n"
      "\n"
      "Impairments (srd, on what this process sends; --loopback: both ends):\n"
      "  --loss PCT               datagrams dropped, in percent [0]\n"
      "  --dup PCT                datagrams sent twice, in percent [0]\n"
      "  --dup-delay US           a duplicate's copy leaves this much later "
      "[0]\n"
      "  --reorder PCT            datagrams held back by --reorder-delay, in\n"
      "                           percent [0]\n"
      "  --reorder-delay US       how long a held-back datagram waits [0]\n"
      "  --delay US               added one-way delay [0]\n"
      "  --jitter US              extra delay, uniform in [0, US] [0]\n"
      "  --rate GBPS              rate cap, in Gb/s [none]\n"
      "  --queue BYTES            queue in front of the rate cap, K/M "
      "suffixes\n"
      "                           [unlimited]\n"
      "  --blackhole LIST         paths that drop everything, e.g. 2,5\n"
      "  --impair-paths LIST      the paths impaired, e.g. 0,3 [all]\n"
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
      "  --once                   server: exit once a client's session ended\n"
      "                           and no other is under way\n"
      "  --max-clients N          server: clients served at once; past it a\n"
      "                           client is refused (\"server full\") [16]\n"
      "  --json, --csv            machine-readable output\n"
      "  --pcap FILE              udp: write the datagrams this process sends\n"
      "                           and receives to FILE (pcap; --loopback: the\n"
      "                           client's, which are the whole exchange; -P:\n"
      "                           every stream's)\n"
      "  --pcap-snaplen N         bytes kept of each frame, 0 for all [1024:\n"
      "                           every header whole]\n"
      "  -v, --verbose            transport diagnostics on stderr\n"
      "  -h, --help               display this help and exit\n"
      "  --version                output version information and exit\n"
      "\n"
      "Durations (SECS, US) take a unit, ns, us, ms or s (--delay 1ms), and\n"
      "--rate one of K, M, G or T (bits per second, --rate 800M); a bare\n"
      "number is in the unit shown.  Sizes and counts take K, M and G "
      "(binary).\n"
      "\n"
      "Exit status: 0 ok; 1 the peer vanished, was unreachable or answered\n"
      "garbage, or a check failed; 2 bad usage; 130 interrupted.\n",
      DEFAULT_PORT);
}

/* version_extra adds the engine and the transports built in to
   --version: two hosts' srd-perf talk when their wire protocols match. */
static void version_extra(FILE *f) {
  fprintf(f, "libsrd %s, wire protocol %d; transports:%s%s%s\n",
          SRD_VERSION_STR, SRD_PROTO_VERSION,
          xport_backend("udp") ? " udp" : "",
          xport_backend("tcp") ? " tcp" : "",
          xport_backend("fabric") ? " fabric" : "");
}

static const tool_info info = {"srd-perf", usage, version_extra};

/* parsed_argv is the argument vector parse_args rewrites, while it
   exists: a static, so that the leak checker finds it reachable when a
   usage error exits. */
static char **parsed_argv;

/* is_size says whether |s| reads as a size (-s SIZE rather than -s ADDR). */
static int is_size(const char *s) {
  uint64_t v;

  return tool_parse_size(s, 0, UINT64_MAX, &v) == 0;
}

/* arg_us_ns reads the value |s| of |opt|, a duration in microseconds
   (or with a unit) within [|min|, |max|] us, and returns it in
   nanoseconds. */
static uint64_t arg_us_ns(const char *opt, const char *s, double min,
                          double max) {
  return (uint64_t)(tool_arg_duration(opt, s, TOOL_US, min, max) * 1e3);
}

/* parse_cpus reads --cpu A[,B] into o->cpu and o->ncpu. */
static void parse_cpus(opts *o, const char *s) {
  const char *cur = s;
  char item[32];
  int rv;

  o->ncpu = 0;
  while ((rv = tool_list_next(&cur, item, sizeof(item))) > 0 && o->ncpu < 2) {
    o->cpu[o->ncpu++] = (int)tool_arg_u64("--cpu", item, 0, CPU_SETSIZE - 1);
  }
  if (rv != 0 || cur != NULL) {
    tool_usage_error("bad value for --cpu: '%s' (expected A or A,B: CPU "
                     "numbers)",
                     s);
  }
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
  O_PATHS,
  O_MAX_CLIENTS,
  O_JSON,
  O_CSV,
  O_VERIFY,
  O_SERVER,
  O_SIZE,
  O_TQ,
  O_PCAP,
  O_PCAP_SNAPLEN,
  O_PROVIDER,
  O_LIST_PROVIDERS,
  O_MTU,
  O_CUDA_DEVICE,
  O_BIDIR
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
    {"paths", required_argument, 0, O_PATHS},
    {"parallel", required_argument, 0, 'P'},
    {"reverse", no_argument, 0, 'R'},
    {"bidir", no_argument, 0, O_BIDIR},
    {"burst", required_argument, 0, O_BURST},
    {"mtu", required_argument, 0, O_MTU},
    {"mem", required_argument, 0, 'm'},
    {"cuda-device", required_argument, 0, O_CUDA_DEVICE},
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
    {"max-clients", required_argument, 0, O_MAX_CLIENTS},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
    {"verify", no_argument, 0, O_VERIFY},
    {"pcap", required_argument, 0, O_PCAP},
    {"pcap-snaplen", required_argument, 0, O_PCAP_SNAPLEN},
    {"provider", required_argument, 0, O_PROVIDER},
    {"list-providers", no_argument, 0, O_LIST_PROVIDERS},
    {"verbose", no_argument, 0, 'v'},
    TOOL_OPT_STD,
    {0, 0, 0, 0},
};

/* list_providers_exit is --list-providers: what fi_getinfo offers -t
   fabric (of |provider|, NULL for all), then exit 0; exit 1 when fabric
   is not built in or nothing is offered. */
static void list_providers_exit(const char *provider, int family) {
  int n;

  if (xport_backend("fabric") == NULL) {
    tool_die("transport 'fabric' is not built in: %s",
             xport_backend_missing("fabric"));
  }
  n = xport_fabric_providers(provider, family, stdout);
  if (n < 0) {
    tool_die("fi_getinfo failed: %s", strerror(-n));
  }
  if (n == 0) {
    tool_die("no libfabric provider%s%s%s offers FI_EP_RDM with FI_MSG and "
             "FI_SOURCE here",
             provider ? " '" : "", provider ? provider : "",
             provider ? "'" : "");
  }
  exit(0);
}

/* check_provider makes a --provider (or FI_PROVIDER) that no endpoint here
   is offered by a usage error, with the names there are. */
static void check_provider(const opts *o) {
  const char *p = o->provider ? o->provider : getenv("FI_PROVIDER");
  int family = o->family == AF_INET6 ? AF_INET6 : AF_INET;

  if (p == NULL || *p == '\0' || xport_fabric_providers(p, family, NULL) > 0) {
    return;
  }
  tool_usage_error("unknown libfabric provider '%s'%s: none of that name "
                   "offers FI_EP_RDM with FI_MSG and FI_SOURCE for %s here "
                   "(srd-perf --list-providers lists those that do)",
                   p, o->provider ? "" : " (from FI_PROVIDER)",
                   family == AF_INET6 ? "IPv6" : "IPv4");
}

void parse_args(opts *o, int argc, char **argv) {
  int c, i, list_providers = 0;
  char **av;
  int ac = 0;

  tool_init(&info);
  ctl_init();
  av = parsed_argv = calloc((size_t)argc + 2, sizeof(char *));
  if (av == NULL) {
    tool_die("out of memory");
  }
  memset(o, 0, sizeof(*o));
  o->port = DEFAULT_PORT;
  o->transport = "udp";
  o->paths = 16;
  o->max_clients = 16;
  o->streams = 1;
  o->burst = 64;
  o->mtu = 0;
  o->time_limit = 60;
  o->idle_timeout = 5;
  o->imp_mask = ~0ull;
  o->max_size = SWEEP_MAX;
  o->family = AF_UNSPEC;
  /* "-s" is both the size (-s 1M) and, as in the issue's and perftest's
     usage, the server switch (-s alone, or -s ADDR).  A value that reads
     as a size is a size; anything else makes this the server. */
  for (i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "-s") == 0) {
      if (i + 1 < argc && is_size(argv[i + 1])) {
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
  while ((c = tool_getopt(ac, av, "t:T:an:D:w:W:p:P:Rm:46vh", long_opts)) !=
         -1) {
    switch (c) {
    case 't':
      if (strcmp(optarg, "srd") == 0) {
        tool_usage_error(
            "-t srd is now -t udp (libsrd over UDP; the name says "
            "what carries SRD, as -t tcp and a future -t fabric do)");
      }
      if (strcmp(optarg, "udp") != 0 && strcmp(optarg, "tcp") != 0 &&
          strcmp(optarg, "fabric") != 0) {
        tool_usage_error("unknown transport '%s' (udp, tcp or fabric)", optarg);
      }
      o->transport = optarg;
      o->transport_set = 1;
      break;
    case 'T':
      for (i = 0; i < 3 && strcmp(optarg, test_names[i]) != 0; ++i) {
      }
      if (i == 3) {
        tool_usage_error("unknown test '%s' (bw, lat or rate)", optarg);
      }
      o->test = (test_kind)i;
      break;
    case O_SIZE:
      o->size = tool_arg_size("-s", optarg, MIN_SIZE, 1u << 30);
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
      o->iters = tool_arg_size("-n", optarg, 1, 1000000000);
      o->iters_set = 1;
      break;
    case 'D':
      o->duration = tool_arg_duration("-D", optarg, TOOL_SEC, 0.001, 3600);
      break;
    case 'w':
      o->warmup = tool_arg_size("-w", optarg, 0, 1000000000);
      o->warmup_set = 1;
      break;
    case 'W':
      o->window = (uint32_t)tool_arg_size("-W", optarg, 1, 1000);
      o->window_set = 1;
      break;
    case 'p':
      o->port = (uint16_t)tool_arg_size("-p", optarg, 1, 65535 - 63);
      break;
    case O_BIND:
      o->bind = optarg;
      break;
    case O_LOCAL_PORT:
      o->local_port = (uint16_t)tool_arg_size("--local-port", optarg, 1, 65535);
      break;
    case 'P':
      o->streams = (uint32_t)tool_arg_size("-P", optarg, 1, 128);
      break;
    case 'R':
      if (o->dir == D_BIDIR) {
        tool_usage_error("-R and --bidir exclude each other");
      }
      o->dir = D_REV;
      break;
    case O_BIDIR:
      if (o->dir == D_REV) {
        tool_usage_error("-R and --bidir exclude each other");
      }
      o->dir = D_BIDIR;
      break;
    case O_PATHS:
      o->paths = (uint32_t)tool_arg_size("--paths", optarg, 1, XPORT_MAX_PATHS);
      break;
    case O_BURST:
      o->burst = (uint32_t)tool_arg_size("--burst", optarg, 1, 64);
      break;
    case O_MTU:
      o->mtu = (uint32_t)tool_arg_size("--mtu", optarg, 256, 65000);
      break;
    case 'm':
      if (strcmp(optarg, "host") == 0) {
        o->mem = XPORT_MEM_HOST;
      } else if (strcmp(optarg, "cuda") == 0) {
        o->mem = XPORT_MEM_CUDA;
      } else if (optarg[0] >= '0' && optarg[0] <= '9') {
        tool_usage_error("-m is where messages live (host or cuda), as in "
                         "ucx_perftest; the payload per packet is --mtu %s",
                         optarg);
      } else {
        tool_usage_error("unknown memory type '%s' for -m (host or cuda)",
                         optarg);
      }
      break;
    case O_CUDA_DEVICE:
      o->cuda_device = (int)tool_arg_size("--cuda-device", optarg, 0, 1023);
      o->cuda_device_set = 1;
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
      o->rto_min_ns = arg_us_ns("--rto-min", optarg, 1, 1e7);
      break;
    case O_TQ:
      o->tq_ns = arg_us_ns("--target-qdelay", optarg, 1, 1e7);
      break;
    case O_MAX_SIZE:
      o->max_size = tool_arg_size("--max-size", optarg, CTL_SIZE, 1u << 30);
      break;
    case O_LOSS:
      o->imp.loss = tool_arg_double("--loss", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_DUP:
      o->imp.dup = tool_arg_double("--dup", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_DUP_DELAY:
      o->imp.dup_delay_ns = arg_us_ns("--dup-delay", optarg, 0, 1e7);
      o->impair_on = 1;
      break;
    case O_CORRUPT:
      o->imp.corrupt = tool_arg_double("--corrupt", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_REORDER:
      o->imp.reorder = tool_arg_double("--reorder", optarg, 0, 100) / 100;
      o->impair_on = 1;
      break;
    case O_REORDER_DELAY:
      o->imp.reorder_delay_ns = arg_us_ns("--reorder-delay", optarg, 0, 1e7);
      o->impair_on = 1;
      break;
    case O_DELAY:
      o->imp.delay_ns = arg_us_ns("--delay", optarg, 0, 1e7);
      o->impair_on = 1;
      break;
    case O_JITTER:
      o->imp.jitter_ns = arg_us_ns("--jitter", optarg, 0, 1e7);
      o->impair_on = 1;
      break;
    case O_RATE:
      o->imp.rate_bps =
          (uint64_t)(tool_arg_rate("--rate", optarg, TOOL_GBPS, 0.001, 1000) *
                     1e9);
      o->impair_on = 1;
      break;
    case O_QUEUE:
      o->imp.queue_bytes = tool_arg_size("--queue", optarg, 1, 1ull << 32);
      o->impair_on = 1;
      break;
    case O_BLACKHOLE:
      o->blackhole_mask = tool_arg_mask("--blackhole", optarg, XPORT_MAX_PATHS);
      o->impair_on = 1;
      break;
    case O_IMPAIR_PATHS:
      o->imp_mask = tool_arg_mask("--impair-paths", optarg, XPORT_MAX_PATHS);
      break;
    case O_SEED:
      o->seed = tool_arg_size("--seed", optarg, 1, UINT64_MAX);
      break;
    case O_TIME_LIMIT:
      o->time_limit =
          tool_arg_duration("--time-limit", optarg, TOOL_SEC, 0.01, 86400);
      break;
    case O_IDLE:
      o->idle_timeout =
          tool_arg_duration("--idle-timeout", optarg, TOOL_SEC, 0.01, 3600);
      break;
    case O_CPU:
      parse_cpus(o, optarg);
      break;
    case O_MAX_CLIENTS:
      o->max_clients =
          (uint32_t)tool_arg_size("--max-clients", optarg, 1, 1024);
      break;
    case O_ONCE:
      o->once = 1;
      break;
    case O_JSON:
      o->json = 1;
      break;
    case O_CSV:
      o->csv = 1;
      break;
    case O_PROVIDER:
      if (*optarg == '\0') {
        tool_usage_error("--provider needs a name (srd-perf --list-providers "
                         "lists them)");
      }
      o->provider = optarg;
      break;
    case O_LIST_PROVIDERS:
      list_providers = 1;
      break;
    case O_VERIFY:
      o->verify = 1;
      break;
    case O_PCAP:
      o->pcap = optarg;
      break;
    case O_PCAP_SNAPLEN:
      o->pcap_snaplen =
          (uint32_t)tool_arg_size("--pcap-snaplen", optarg, 0, 1u << 20);
      o->pcap_snaplen_set = 1;
      break;
    case O_LOOPBACK:
      o->loopback = 1;
      break;
    case 'v':
      o->verbose = 1;
      break;
    case 'h': /* -h is --help, as srd-perf has always had it */
      usage(stdout);
      exit(fflush(stdout) == 0 ? 0 : 1);
    default: /* tool_getopt answers the options not in long_opts */
      abort();
    }
  }
  if (optind < ac) {
    if (o->server || o->loopback || optind + 1 < ac) {
      tool_usage_error("unexpected argument '%s'", av[optind]);
    }
    o->host = av[optind];
  }
  free(av);
  parsed_argv = NULL;
  if (list_providers) {
    list_providers_exit(o->provider, o->family);
  }
  if (!o->server && !o->loopback && o->host == NULL) {
    tool_usage_error("no server given: srd-perf SERVER, srd-perf -s, or "
                     "srd-perf --loopback");
  }
  if (o->server && o->loopback) {
    tool_usage_error("-s and --loopback exclude each other");
  }
  if (o->json && o->csv) {
    tool_usage_error("--json and --csv exclude each other");
  }
  if (o->streams > 1 && o->server) {
    tool_usage_error("-P N (parallel streams) is a client's");
  }
  if (o->dir != D_FWD && o->server) {
    tool_usage_error("%s is a client's: the client tells the server",
                     o->dir == D_REV ? "-R" : "--bidir");
  }
  if (o->dir != D_FWD && o->test == T_LAT) {
    tool_usage_error("%s is for bw and rate (lat is a round trip already)",
                     o->dir == D_REV ? "-R" : "--bidir");
  }
  if (o->sweep && o->size_set) {
    tool_usage_error("-a and -s SIZE exclude each other");
  }
  if (xport_backend(o->transport) == NULL) {
    tool_die("transport '%s' is not built in: %s", o->transport,
             xport_backend_missing(o->transport));
  }
  if (o->pcap && strcmp(o->transport, "udp") != 0) {
    tool_usage_error("--pcap captures the udp backend's datagrams (-t udp); "
                     "kernel TCP's segments are the kernel's: use tcpdump");
  }
  if (o->pcap_snaplen_set && o->pcap == NULL) {
    tool_usage_error("--pcap-snaplen needs --pcap FILE");
  }
  if (!o->pcap_snaplen_set) {
    o->pcap_snaplen = 1024;
  }
  if (o->provider && strcmp(o->transport, "fabric") != 0) {
    tool_usage_error("--provider needs -t fabric");
  }
  if (strcmp(o->transport, "fabric") == 0) {
    check_provider(o);
  }
  if (o->impair_on && strcmp(o->transport, "udp") != 0) {
    tool_usage_error(
        "impairments need -t udp (kernel TCP has no userspace layer)");
  }
  if (o->cuda_device_set && o->mem != XPORT_MEM_CUDA) {
    tool_usage_error("--cuda-device needs -m cuda");
  }
  if (o->mem == XPORT_MEM_CUDA) {
    char why[256];
    if (xport_mem_probe(XPORT_MEM_CUDA, o->cuda_device, why, sizeof(why)) !=
        0) {
      tool_die("-m cuda: %s", why);
    }
  }
  if (!o->size_set) {
    o->size = o->test == T_BW ? 65536 : 64;
  }
  if (!o->busy_set) {
    o->busy = o->test == T_LAT;
  }
}

/* ------------------------------------------------------------------------ */
/* The transport the options describe                                       */

void log_cb(void *ud, const char *msg) {
  const char *who = ud;
  fprintf(stderr, "%s: %s%s\n", tool_name(), who ? who : "", msg);
}

void make_config(const opts *o, xport_config *cfg, int server, int family,
                 const char *who) {
  uint32_t i;

  xport_config_default(cfg);
  cfg->backend = o->transport;
  cfg->family = family;
  cfg->bind_addr = o->bind;
  /* A libfabric endpoint binds one interface (its domain): in --loopback
     the client's is the loopback one too, as the server's is, not
     whichever interface libfabric lists first. */
  if (o->loopback && !o->bind && strcmp(o->transport, "fabric") == 0) {
    cfg->bind_addr = family == AF_INET6 ? "::1" : "127.0.0.1";
  }
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
  cfg->provider = o->provider;
  cfg->mem = o->mem;
  cfg->cuda_device = o->cuda_device;
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
  /* One capture per process: the loopback server's thread has none (its
     datagrams are the client's, the other way round). */
  if (o->pcap && (!server || o->server)) {
    cfg->tap = capture_tap;
  }
}

int open_xport(const opts *o, xport **px, int server, int family,
               const char *who) {
  xport_config cfg;
  int rv;

  make_config(o, &cfg, server, family, who);
  rv = xport_open(px, &cfg);
  if (rv == -ENOENT) {
    fprintf(stderr, "%s: transport '%s' is not built in: %s\n", tool_name(),
            o->transport, xport_backend_missing(o->transport));
  } else if (rv != 0) {
    fprintf(stderr, "%s: cannot open the %s transport: %s\n", tool_name(),
            o->transport, strerror(-rv));
  }
  return rv;
}
