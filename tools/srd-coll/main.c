/*
 * main.c: srd-coll's command line and the run: bootstrap (host list or
 * MPI), the exchange, the results gathered on rank 0 and printed there.
 *
 * Exit status: 0 when every rank completed the exchange, 1 when one
 * failed (each rank prints what it saw, rank 0 names every failure), 2
 * for bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "tool_parse.h"

#define DEFAULT_BOOT_PORT 18600

static void usage(FILE *f) {
  fprintf(
      f,
      "Usage: srd-coll --hosts H0,H1,... [--rank R] [OPTION]... [WORKLOAD]\n"
      "  or:  mpirun -np N srd-coll --mpi [OPTION]... [WORKLOAD]\n"
      "Run a multi-rank collective workload over SRD (libsrd over UDP), "
      "kernel\n"
      "TCP or libfabric: each rank is one process with one transport "
      "endpoint;\n"
      "every rank sends to all its destinations at once and the exchange "
      "ends\n"
      "when every rank has received what it expects.  Rank 0 prints per-rank "
      "and\n"
      "global throughput, the exchange's completion time per iteration, "
      "message\n"
      "latency percentiles (post to send completion) and retransmissions.\n"
      "\n"
      "WORKLOAD is shuffle (all-to-all, as RapidsMPF's shuffle benchmark), "
      "incast\n"
      "(ranks 1..N-1 send to rank 0) or permutation (rank i sends to rank\n"
      "(i + k) mod N) [shuffle].\n"
      "\n"
      "Workload:\n"
      "  --bytes-per-rank SIZE    each rank's input, K/M/G suffixes [64M]\n"
      "  --partition SIZE         input partition size [16M]\n"
      "  --outputs N              shuffle: output partitions, output o on "
      "rank\n"
      "                           o mod N; each input partition is cut into "
      "one\n"
      "                           piece per output [2 x ranks]\n"
      "  --shift K                permutation: rank i sends to (i + K) mod N "
      "[1]\n"
      "  --msg-size SIZE          largest message: pieces and partitions are\n"
      "                           sent in chunks of it [1M]\n"
      "  --window N               sends in flight per destination [16]\n"
      "  --warmup N               unmeasured iterations first [1]\n"
      "  --iters N                measured iterations [5]\n"
      "  --verify                 check every byte (a pattern of source rank\n"
      "                           and message index) and that each message\n"
      "                           arrives exactly once\n"
      "\n"
      "Transport:\n"
      "  -t, --transport udp|tcp|fabric  transport [udp]\n"
      "  --provider NAME          fabric: the libfabric provider "
      "[FI_PROVIDER]\n"
      "  -m, --mem host|cuda      where messages live (as srd-perf -m) [host]\n"
      "  --cuda-device N          -m cuda: the device's ordinal [0]\n"
      "  --paths N                udp: sockets (source ports) to spray over,\n"
      "                           1..64 [16]\n"
      "  --port PORT              this rank's transport port (udp: the first\n"
      "                           of --paths) [any free]\n"
      "  --bind ADDR              this rank's local address (under --mpi also\n"
      "                           the one it advertises) [any; --mpi: the\n"
      "                           host name's]\n"
      "  --seed N                 seeds the engines (rank r: N*64 + r + 1)\n"
      "                           [fresh]\n"
      "\n"
      "Ranks:\n"
      "  --hosts LIST             one host per rank, rank 0 first; rank 0\n"
      "                           listens on the bootstrap port, the others\n"
      "                           connect to it\n"
      "  --rank R                 this process's rank [SLURM_PROCID]; under\n"
      "                           srun SLURM_NTASKS must match --hosts\n"
      "  --bootstrap-port PORT    rank 0's TCP bootstrap port [%d]\n"
      "  --mpi                    take rank, size and the addresses from MPI\n"
      "                           (mpirun); the data goes over -t%s\n"
      "  --idle-timeout SECS      nothing received or completed this long:\n"
      "                           fail, naming the rank waited for [5]\n"
      "  --time-limit SECS        the whole run's bound [60]\n"
      "\n"
      "Output:\n"
      "  --json                   JSON on rank 0 (docs/transports.md)\n"
      "  --csv                    CSV on rank 0, a line per rank and 'all'\n"
      "  -v, --verbose            each rank says on stderr when the exchange\n"
      "                           is under way\n" TOOL_OPT_HELP_TEXT "\n"
      "Exit status: 0 when every rank completed, 1 when one failed (every "
      "rank\n"
      "names the rank that vanished), 2 for bad usage.\n",
      DEFAULT_BOOT_PORT,
      boot_mpi_available() ? "" : " (not in this build: no MPI)");
}

static void version_extra(FILE *f) {
  fprintf(f, "MPI bootstrap: %s\n", boot_mpi_available() ? "yes" : "no");
}

static const tool_info info = {"srd-coll", usage, version_extra};

enum {
  O_BYTES = 256,
  O_PARTITION,
  O_OUTPUTS,
  O_SHIFT,
  O_MSG,
  O_WINDOW,
  O_WARMUP,
  O_ITERS,
  O_VERIFY,
  O_PROVIDER,
  O_CUDA,
  O_PATHS,
  O_PORT,
  O_BIND,
  O_SEED,
  O_HOSTS,
  O_RANK,
  O_BOOT,
  O_MPI,
  O_IDLE,
  O_LIMIT,
  O_JSON,
  O_CSV
};

static const struct option long_opts[] = {
    {"bytes-per-rank", required_argument, 0, O_BYTES},
    {"partition", required_argument, 0, O_PARTITION},
    {"outputs", required_argument, 0, O_OUTPUTS},
    {"shift", required_argument, 0, O_SHIFT},
    {"msg-size", required_argument, 0, O_MSG},
    {"window", required_argument, 0, O_WINDOW},
    {"warmup", required_argument, 0, O_WARMUP},
    {"iters", required_argument, 0, O_ITERS},
    {"verify", no_argument, 0, O_VERIFY},
    {"transport", required_argument, 0, 't'},
    {"provider", required_argument, 0, O_PROVIDER},
    {"mem", required_argument, 0, 'm'},
    {"cuda-device", required_argument, 0, O_CUDA},
    {"paths", required_argument, 0, O_PATHS},
    {"port", required_argument, 0, O_PORT},
    {"bind", required_argument, 0, O_BIND},
    {"seed", required_argument, 0, O_SEED},
    {"hosts", required_argument, 0, O_HOSTS},
    {"rank", required_argument, 0, O_RANK},
    {"bootstrap-port", required_argument, 0, O_BOOT},
    {"mpi", no_argument, 0, O_MPI},
    {"idle-timeout", required_argument, 0, O_IDLE},
    {"time-limit", required_argument, 0, O_LIMIT},
    {"json", no_argument, 0, O_JSON},
    {"csv", no_argument, 0, O_CSV},
    {"verbose", no_argument, 0, 'v'},
    TOOL_OPT_STD,
    {0, 0, 0, 0}};

static void parse(coll_opts *o, int argc, char **argv, int *outputs_given) {
  int c;

  memset(o, 0, sizeof(*o));
  o->transport = "udp";
  o->paths = 16;
  o->bytes_per_rank = 64ull << 20;
  o->partition = 16ull << 20;
  o->msg_size = 1u << 20;
  o->shift = 1;
  o->warmup = 1;
  o->iters = 5;
  o->window = 16;
  o->idle_timeout_ns = 5000000000ull;
  o->time_limit_ns = 60000000000ull;
  o->rank = -1;
  o->boot_port = DEFAULT_BOOT_PORT;
  *outputs_given = 0;
  while ((c = tool_getopt(argc, argv, "t:m:v", long_opts)) != -1) {
    switch (c) {
    case O_BYTES:
      o->bytes_per_rank =
          tool_arg_size("--bytes-per-rank", optarg, 1, 1ull << 40);
      break;
    case O_PARTITION:
      o->partition = tool_arg_size("--partition", optarg, 1, 1ull << 40);
      break;
    case O_OUTPUTS:
      o->outputs = (uint32_t)tool_arg_u64("--outputs", optarg, 1, 4096);
      *outputs_given = 1;
      break;
    case O_SHIFT:
      o->shift = (uint32_t)tool_arg_u64("--shift", optarg, 1, 4096);
      break;
    case O_MSG:
      o->msg_size = tool_arg_size("--msg-size", optarg, 64, 64u << 20);
      break;
    case O_WINDOW:
      o->window = (uint32_t)tool_arg_u64("--window", optarg, 1, 256);
      break;
    case O_WARMUP:
      o->warmup = (uint32_t)tool_arg_u64("--warmup", optarg, 0, 64);
      break;
    case O_ITERS:
      o->iters =
          (uint32_t)tool_arg_u64("--iters", optarg, 1, COLL_MAX_ITERS - 64);
      break;
    case O_VERIFY:
      o->verify = 1;
      break;
    case 't':
      o->transport = optarg;
      break;
    case O_PROVIDER:
      o->provider = optarg;
      break;
    case 'm':
      if (strcmp(optarg, "host") == 0) {
        o->mem = XPORT_MEM_HOST;
      } else if (strcmp(optarg, "cuda") == 0) {
        o->mem = XPORT_MEM_CUDA;
      } else {
        tool_usage_error("unknown memory type '%s' for -m (host or cuda)",
                         optarg);
      }
      break;
    case O_CUDA:
      o->cuda_device = (int)tool_arg_u64("--cuda-device", optarg, 0, 1023);
      break;
    case O_PATHS:
      o->paths = (uint32_t)tool_arg_u64("--paths", optarg, 1, XPORT_MAX_PATHS);
      break;
    case O_PORT:
      o->port = (uint16_t)tool_arg_u64("--port", optarg, 1, 65535);
      break;
    case O_BIND:
      o->bind = optarg;
      break;
    case O_SEED:
      o->seed = tool_arg_u64("--seed", optarg, 1, UINT64_MAX >> 8);
      break;
    case O_HOSTS:
      o->hosts = optarg;
      break;
    case O_RANK:
      o->rank = (int)tool_arg_u64("--rank", optarg, 0, COLL_MAX_RANKS - 1);
      break;
    case O_BOOT:
      o->boot_port =
          (uint16_t)tool_arg_u64("--bootstrap-port", optarg, 1, 65535);
      break;
    case O_MPI:
      o->mpi = 1;
      break;
    case O_IDLE:
      /* SECS: a bare number is seconds, a unit may be given ("500ms") */
      o->idle_timeout_ns =
          (uint64_t)(tool_arg_duration("--idle-timeout", optarg, TOOL_SEC, 0.01,
                                       3600) *
                     1e9);
      break;
    case O_LIMIT:
      o->time_limit_ns = (uint64_t)(tool_arg_duration("--time-limit", optarg,
                                                      TOOL_SEC, 0.1, 86400) *
                                    1e9);
      break;
    case O_JSON:
      o->json = 1;
      break;
    case O_CSV:
      o->csv = 1;
      break;
    case 'v':
      o->verbose = 1;
      break;
    }
  }
  if (optind < argc) {
    int w;
    for (w = 0; w < 3 && strcmp(argv[optind], coll_workload_names[w]); ++w) {
    }
    if (w == 3) {
      tool_usage_error("unknown workload '%s' (shuffle, incast or permutation)",
                       argv[optind]);
    }
    o->workload = (coll_workload)w;
    if (optind + 1 < argc) {
      tool_usage_error("one workload only ('%s' is extra)", argv[optind + 1]);
    }
  }
  if (xport_backend(o->transport) == NULL) {
    tool_usage_error("unknown transport '%s' (%s)", o->transport,
                     xport_backend_missing(o->transport));
  }
  if (o->json && o->csv) {
    tool_usage_error("--json and --csv exclude each other");
  }
  if (o->mpi == (o->hosts != NULL)) {
    tool_usage_error(o->mpi ? "--mpi and --hosts exclude each other"
                            : "say how ranks find each other: --hosts LIST "
                              "(with --rank or under srun) or --mpi");
  }
}

static void log_line(void *u, const char *msg) {
  (void)u;
  fprintf(stderr, "%s: %s\n", tool_name(), msg);
}

/* my_host is the address this rank advertises: its --hosts entry, or
   under MPI --bind or the address of its host name. */
static void my_host(const coll_opts *o, const coll_boot *b, char *buf,
                    size_t cap) {
  char name[256];
  struct addrinfo hints, *ai = NULL;

  if (!b->mpi) {
    snprintf(buf, cap, "%s", b->hosts[b->rank]);
    return;
  }
  if (o->bind) {
    snprintf(buf, cap, "%s", o->bind);
    return;
  }
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_INET;
  if (gethostname(name, sizeof(name)) != 0 ||
      getaddrinfo(name, NULL, &hints, &ai) != 0 || ai == NULL) {
    snprintf(buf, cap, "127.0.0.1");
  } else {
    char a[64];
    xport_format_addr(ai->ai_addr, a, sizeof(a));
    *strrchr(a, ':') = 0;
    snprintf(buf, cap, "%s", a);
  }
  if (ai) {
    freeaddrinfo(ai);
  }
}

int main(int argc, char **argv) {
  coll_opts o;
  coll_boot b;
  xport_config cfg;
  xport *x = NULL;
  coll_rank_addr *addrs;
  coll_result *res, *all = NULL;
  tool_hist lat, *hists = NULL;
  char host[COLL_ADDR_LEN], mine[COLL_ADDR_LEN], why[256], verdict[256];
  struct sockaddr_storage ss;
  socklen_t sl = sizeof(ss);
  int outputs_given, rv, failed;
  uint32_t r;

  tool_init(&info);
  parse(&o, argc, argv, &outputs_given);
  if (o.mem != XPORT_MEM_HOST &&
      xport_mem_probe(o.mem, o.cuda_device, why, sizeof(why)) != 0) {
    tool_die("-m cuda: %s", why); /* every rank alike, before the bootstrap */
  }
  if (o.mpi) {
    boot_mpi_init(&b, &argc, &argv);
  } else {
    boot_hosts_init(&b, &o);
  }
  if (!outputs_given) {
    o.outputs = 2 * b.n;
  }
  {
    coll_plan p;
    if (plan_build(&p, &o, b.n, b.rank, why, sizeof(why)) != 0) {
      tool_usage_error("%s", why);
    }
    plan_free(&p);
  }
  xport_config_default(&cfg);
  cfg.backend = o.transport;
  cfg.bind_addr = o.bind;
  cfg.port = o.port;
  cfg.listen = 1;
  cfg.n_paths = o.paths;
  cfg.max_msg_size = (uint32_t)(o.msg_size + COLL_HDR_LEN);
  cfg.max_sends = o.window * b.n + b.n;
  cfg.max_recvs = o.window * b.n + b.n;
  cfg.seed = o.seed ? o.seed * 64 + b.rank + 1 : 0;
  /* udp: the engine gives a peer up after max_retries retransmissions of
     one packet (at most 20 ms apart): as long as --idle-timeout, so that
     a rank the scheduler keeps off a loaded machine's cores for a moment
     is not taken for dead, and a dead one is named by both alike. */
  cfg.max_retries = (uint32_t)(o.idle_timeout_ns / 20000000ull);
  cfg.max_retries = cfg.max_retries < 16    ? 16
                    : cfg.max_retries > 250 ? 250
                                            : cfg.max_retries;
  cfg.provider = o.provider;
  cfg.mem = o.mem;
  cfg.cuda_device = o.cuda_device;
  cfg.log = log_line;
  rv = xport_open(&x, &cfg);
  if (rv != 0) {
    tool_die("rank %u: cannot open the %s transport: %s", b.rank, o.transport,
             strerror(-rv));
  }
  if (xport_local_addr(x, &ss, &sl) != 0) {
    tool_die("rank %u: the transport has no local address", b.rank);
  }
  my_host(&o, &b, host, sizeof(host));
  {
    char a[64], *colon;
    xport_format_addr((struct sockaddr *)&ss, a, sizeof(a));
    colon = strrchr(a, ':');
    snprintf(mine, sizeof(mine), "%.72s%.16s", host, colon ? colon : ":0");
  }
  addrs = xmalloc(b.n * sizeof(*addrs));
  if (boot_exchange(&b, &o, mine, addrs, why, sizeof(why)) != 0) {
    tool_die("rank %u: %s", b.rank, why);
  }
  res = xmalloc(sizeof(*res));
  res->rank = (int32_t)b.rank;
  snprintf(res->addr, sizeof(res->addr), "%s", mine);
  snprintf(res->describe, sizeof(res->describe), "%s", xport_describe(x));
  if (tool_hist_init(&lat, COLL_HIST_BITS) != 0) {
    tool_die("out of memory");
  }
  /* coll_xchg closes the xport. */
  failed = coll_xchg(&o, x, b.n, b.rank, addrs, res, &lat) != 0;
  if (failed) {
    fprintf(stderr,
            "%s: rank %u: %s (transport: %" PRIu64 " retransmits, %" PRIu64
            " RNR sent, %" PRIu64 " RNR received, %" PRIu64
            " bad in, paths avoided 0x%" PRIx64 ", cwnd %" PRIu64 ")\n",
            tool_name(), b.rank, res->error, res->retransmits, res->rnr_sent,
            res->rnr_received, res->bad_in, res->paths_avoided,
            res->cwnd_bytes);
  }
  if (b.rank == 0) {
    all = xmalloc(b.n * sizeof(*all));
    hists = xmalloc(b.n * sizeof(*hists));
    for (r = 0; r < b.n; ++r) {
      if (tool_hist_init(&hists[r], COLL_HIST_BITS) != 0) {
        tool_die("out of memory");
      }
    }
  }
  verdict[0] = 0;
  if (boot_gather(&b, &o, res, &lat, all, hists, verdict, sizeof(verdict)) !=
      0) {
    failed = 1;
  }
  if (b.rank == 0) {
    report_print(&o, b.n, all, hists, stdout);
    fflush(stdout);
    boot_send_verdict(&b, verdict);
    for (r = 0; r < b.n; ++r) {
      if (all[r].failed) {
        failed = 1;
        if (r != 0) {
          fprintf(stderr, "%s: rank %u: %s\n", tool_name(), r, all[r].error);
        }
      }
      tool_hist_fini(&hists[r]);
    }
    free(all);
    free(hists);
  } else if (verdict[0]) {
    if (!failed) {
      fprintf(stderr, "%s: rank %u: the run failed: %s\n", tool_name(), b.rank,
              verdict);
    }
    failed = 1;
  }
  tool_hist_fini(&lat);
  free(res);
  free(addrs);
  if (b.mpi) {
    boot_mpi_fini(&b, failed);
  } else {
    boot_fini(&b);
  }
  return failed ? 1 : 0;
}
