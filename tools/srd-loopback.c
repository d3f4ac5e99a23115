/*
 * srd-loopback: two libsrd endpoints in one process over an in-memory wire
 * driven by a virtual clock.  A sends messages to B over 1..64 paths with
 * the impairments you ask for; the tool checks every delivered byte and
 * reports completions, deliveries, duplicates, goodput (virtual time),
 * latency percentiles and how the packets spread over the paths.  With
 * --corrupt or --dup-delay it also reports what the wire corrupted and
 * duplicated and what the engines dropped, by reason.
 *
 * Same flags and seed, same output, byte for byte.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <srd/srd.h>

#include "srd_loop.h"
#include "srd_pcap.h"

static const char *prog = "srd-loopback";

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: %s [options]\n"
      "\n"
      "Send messages between two SRD endpoints over an impaired in-memory wire "
      "in\n"
      "virtual time, and check that every one arrives intact exactly once.\n"
      "\n"
      "Wire (per path; both directions unless noted):\n"
      "  --paths N            paths (entropy values) to spray over, 1..64 [8]\n"
      "  --delay US[,US...]   one-way delay in microseconds, one value for "
      "all\n"
      "                       paths or one per path [10]\n"
      "  --jitter US          extra delay, uniform in [0, US] [0]\n"
      "  --rate GBPS          each path's rate in Gb/s, 0 for unlimited [100]\n"
      "  --queue BYTES        each path's queue at that rate (K/M suffixes) "
      "[256K]\n"
      "  --loss PCT           random loss in percent [0]\n"
      "  --loss-paths LIST    apply --loss only to these paths, e.g. 0,3\n"
      "  --dup PCT            duplication in percent [0]\n"
      "  --dup-delay US       a duplicate's copy arrives this much later "
      "than\n"
      "                       the original [0: right behind it]\n"
      "  --corrupt PCT        percent of delivered packets with one bit "
      "flipped,\n"
      "                       uniformly over all their bits [0]\n"
      "  --reorder PCT        percent of packets held back by --reorder-delay "
      "[0]\n"
      "  --reorder-delay US   how long a held-back packet waits [2 x delay]\n"
      "  --blackhole LIST     paths that drop everything, e.g. 3,5\n"
      "  --blackhole-at US    when the blackhole starts [0]\n"
      "  --dead-at US         every path dies at this time (a vanished peer)\n"
      "\n"
      "Traffic:\n"
      "  --messages N         messages from A to B [1000]\n"
      "  --size BYTES         bytes per message, K/M suffixes [64K]\n"
      "  --random-sizes       sizes uniform in [0, --size]\n"
      "  --inflight N         sends A keeps posted [64]\n"
      "  --window N           receives B keeps posted (its receive window) "
      "[64]\n"
      "  --unexp N            messages B queues without a posted receive [64]\n"
      "  --ordered            B delivers in send order (the reorder layer)\n"
      "\n"
      "Engine:\n"
      "  --cc NAME            congestion control: swift, fixed [swift]\n"
      "  --cc-window BYTES    the window of --cc fixed [256K]\n"
      "  --target-qdelay US   delay target over the base RTT [25]\n"
      "  --no-steering        blind round-robin spraying\n"
      "  --mtu BYTES          payload bytes per packet [8192]\n"
      "  --rto-min US         retransmission timeout floor [100]\n"
      "  --max-retries N      sends of one packet before giving up [16]\n"
      "  --time-limit MS      virtual time limit [10000]\n"
      "\n"
      "Output:\n"
      "  --seed N             seed of the wire and the endpoints [1]\n"
      "  --json               one JSON object instead of the summary\n"
      "  --log                print the engines' events to stderr\n"
      "  --pcap FILE          write every packet to a pcap capture (Ethernet,\n"
      "                       IPv4, UDP; A is 198.18.0.1, B 198.18.0.2, "
      "source\n"
      "                       port 49152 + path); tools/wireshark/srd.lua\n"
      "                       decodes it\n"
      "  --pcap-at WHERE      send: as sent, before the wire's impairments;\n"
      "                       recv: as received, after them [send]\n"
      "  --pcap-snaplen N     bytes kept of each frame, 0 for all [1024]\n"
      "  --help, --version\n"
      "\n"
      "Exit status: 0 when every message completed and arrived intact once,\n"
      "1 when a send failed or a check did not hold, 2 for bad usage.\n",
      prog);
}

static void die_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '%s --help'.\n", prog);
  exit(2);
}

/* parse_u64 reads a non-negative integer with an optional K, M or G
   (binary) suffix. */
static uint64_t parse_size(const char *opt, const char *s, uint64_t max) {
  char *end;
  unsigned long long v;
  uint64_t mult = 1;

  errno = 0;
  if (*s == '-' || *s == '\0') {
    die_usage("bad value for %s: expected a non-negative number", opt);
  }
  v = strtoull(s, &end, 10);
  if (errno != 0 || end == s) {
    die_usage("bad value for %s: expected a non-negative number", opt);
  }
  if (*end == 'K' || *end == 'k') {
    mult = 1024;
    ++end;
  } else if (*end == 'M' || *end == 'm') {
    mult = 1024 * 1024;
    ++end;
  } else if (*end == 'G' || *end == 'g') {
    mult = 1024ULL * 1024 * 1024;
    ++end;
  }
  if (*end != '\0' || v > max / mult) {
    die_usage("bad value for %s: out of range", opt);
  }
  return (uint64_t)v * mult;
}

static double parse_double(const char *opt, const char *s, double lo,
                           double hi) {
  char *end;
  double v;

  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) {
    die_usage("bad value for %s: expected a number in [%g, %g]", opt, lo, hi);
  }
  return v;
}

/* parse_list reads comma-separated path indices below |n| into |set|. */
static void parse_list(const char *opt, const char *s, int *set, uint32_t n) {
  char buf[1024], *tok, *save = NULL;

  if (strlen(s) >= sizeof(buf)) {
    die_usage("bad value for %s: list too long", opt);
  }
  strcpy(buf, s);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    uint64_t v = parse_size(opt, tok, UINT32_MAX);
    if (v >= n) {
      die_usage("bad value for %s: path index not below --paths", opt);
    }
    set[v] = 1;
  }
}

static srd_duration us_to_ns(double us) {
  return (srd_duration)llround(us * 1e3);
}

static void log_event(void *ud, const srd_log_record *r) {
  fprintf(stderr,
          "%12.3f us  %c  %-10s peer %u path %d  a=%" PRIu64 " b=%" PRIu64 "\n",
          (double)r->ts / 1e3, ud ? 'B' : 'A', srd_log_event_name(r->event),
          r->peer, (int)r->path, r->a, r->b);
}

static const char *err_name(int code) {
  /* code is -status - 200 */
  return srd_strerror(-(code + 200));
}

/* wire_sums adds up the corruption and duplication counters of every link
   of both directions. */
static void wire_sums(const srd_loop_result *res, uint64_t *corrupted,
                      uint64_t *duplicated, uint64_t *dup_delayed) {
  uint32_t i;

  *corrupted = *duplicated = *dup_delayed = 0;
  for (i = 0; i < res->n_paths; ++i) {
    *corrupted += res->ab[i].corrupted + res->ba[i].corrupted;
    *duplicated += res->ab[i].duplicated + res->ba[i].duplicated;
    *dup_delayed += res->ab[i].dup_delayed + res->ba[i].dup_delayed;
  }
}

/* print_drops_json prints |st|'s drops, every reason the engine has. */
static void print_drops_json(const srd_ep_stats *st) {
  int d;

  printf("{");
  for (d = 0; d < SRD_DROP_REASONS; ++d) {
    printf("%s\"%s\":%" PRIu64, d ? "," : "",
           srd_drop_reason_name((srd_drop_reason)d), st->drops[d]);
  }
  printf("}");
}

/* print_json_extra ends the object print_json began with what --corrupt
   and --dup-delay add: the wire's counts, what became of the corrupted
   packets, and both engines' drops by reason. */
static void print_json_extra(const srd_loop_result *res) {
  uint64_t corrupted, duplicated, dup_delayed;

  wire_sums(res, &corrupted, &duplicated, &dup_delayed);
  printf(",\"impairments\":{\"corrupted\":%" PRIu64 ",\"duplicated\":%" PRIu64
         ",\"dup_delayed\":%" PRIu64 "}",
         corrupted, duplicated, dup_delayed);
  printf(",\"corruption\":{\"on_wire\":%" PRIu64 ",\"dropped_corrupt\":%" PRIu64
         ",\"dropped_other\":%" PRIu64 ",\"accepted\":%" PRIu64
         ",\"delivered_corrupted\":%" PRIu64 "}",
         corrupted, res->corrupt_dropped, res->corrupt_dropped_other,
         res->corrupt_accepted, res->corrupted);
  printf(",\"drops\":{\"a\":");
  print_drops_json(&res->a);
  printf(",\"b\":");
  print_drops_json(&res->b);
  printf("}");
}

static void print_json(const srd_loop_cfg *cfg, const srd_loop_result *res,
                       int extra) {
  uint64_t total = 0, delivered = 0;
  uint32_t i;
  int first = 1;

  for (i = 0; i < res->n_paths; ++i) {
    total += res->path_pkts[i];
  }
  printf("{\"seed\":%" PRIu64 ",\"paths\":%u,\"messages\":%u,\"size\":%u,",
         cfg->seed, cfg->n_paths, cfg->messages, cfg->size);
  printf("\"sent\":%" PRIu64 ",\"completed_ok\":%" PRIu64
         ",\"completed_err\":%" PRIu64 ",",
         res->sent, res->completed_ok, res->completed_err);
  printf("\"errors\":{");
  for (i = 0; i < 32; ++i) {
    if (res->errors_by_code[i]) {
      printf("%s\"%s\":%" PRIu64, first ? "" : ",", err_name((int)i),
             res->errors_by_code[i]);
      first = 0;
    }
  }
  printf("},");
  printf("\"delivered\":%" PRIu64 ",\"duplicates_delivered\":%" PRIu64
         ",\"corrupted\":%" PRIu64 ",\"double_completions\":%" PRIu64
         ",\"recv_errors\":%" PRIu64 ",\"out_of_order\":%" PRIu64 ",",
         res->delivered, res->duplicates_delivered, res->corrupted,
         res->double_completions, res->recv_errors, res->out_of_order);
  printf("\"retransmits\":%" PRIu64 ",\"losses_rack\":%" PRIu64
         ",\"losses_rto\":%" PRIu64 ",\"spurious_losses\":%" PRIu64
         ",\"rto_fired\":%" PRIu64 ",\"rnr_sent\":%" PRIu64 ",",
         res->retransmits, res->a.losses_rack, res->a.losses_rto,
         res->a.spurious_losses, res->a.rto_fired, res->b.rnr_sent);
  printf("\"goodput_gbps\":%.3f,\"virtual_time_us\":%.3f,", res->goodput_gbps,
         (double)(res->end - res->start) / 1e3);
  printf("\"msg_latency_us\":{\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f,"
         "\"max\":%.3f},",
         res->lat_p50_us, res->lat_p99_us, res->lat_p999_us, res->lat_max_us);
  printf("\"srtt_us\":%.3f,\"min_rtt_us\":%.3f,\"cwnd\":%" PRIu64 ",",
         (double)res->a_peer.srtt / 1e3, (double)res->a_peer.min_rtt / 1e3,
         res->a_peer.cwnd);
  /* Packets each endpoint wrote, by kind, and what the wire delivered
     (a capture at --pcap-at recv holds exactly the delivered ones). */
  for (i = 0; i < 2; ++i) {
    const srd_ep_stats *st = i == 0 ? &res->a : &res->b;
    printf("\"%s_pkts_out\":{\"data\":%" PRIu64 ",\"ack\":%" PRIu64
           ",\"ctrl\":%" PRIu64 "},",
           i == 0 ? "a" : "b", st->data_pkts_out, st->ack_pkts_out,
           st->ctrl_pkts_out);
  }
  for (i = 0; i < res->n_paths; ++i) {
    delivered += res->ab[i].delivered + res->ba[i].delivered;
  }
  printf("\"wire_delivered\":%" PRIu64 ",", delivered);
  printf("\"path_share\":[");
  for (i = 0; i < res->n_paths; ++i) {
    printf("%s%.4f", i ? "," : "",
           total ? (double)res->path_pkts[i] / (double)total : 0.0);
  }
  printf("],\"finished\":%s", res->finished ? "true" : "false");
  if (extra) {
    print_json_extra(res);
  }
  printf("}\n");
}

/* print_drops prints |st|'s nonzero drops, by reason, as "name n, ...". */
static void print_drops(const srd_ep_stats *st) {
  int d, any = 0;

  for (d = 0; d < SRD_DROP_REASONS; ++d) {
    if (st->drops[d]) {
      printf("%s%s %" PRIu64, any ? ", " : " ",
             srd_drop_reason_name((srd_drop_reason)d), st->drops[d]);
      any = 1;
    }
  }
  if (!any) {
    printf(" none");
  }
}

static void print_summary(const srd_loop_cfg *cfg, const srd_loop_result *res,
                          double loss, double dup, double reorder,
                          double corrupt, double dup_delay, int extra) {
  uint64_t total = 0;
  uint32_t i;

  for (i = 0; i < res->n_paths; ++i) {
    total += res->path_pkts[i];
  }
  printf("srd-loopback: %u messages of %u B%s, %u paths, seed %" PRIu64 "\n",
         cfg->messages, cfg->size, cfg->random_sizes ? " (at most)" : "",
         cfg->n_paths, cfg->seed);
  if (extra) {
    printf("  wire          loss %g%%, dup %g%% (copies %g us late), reorder "
           "%g%%, corrupt %g%%, %s\n",
           loss, dup, dup_delay, reorder, corrupt,
           cfg->ordered ? "ordered delivery" : "unordered delivery");
  } else {
    printf("  wire          loss %g%%, dup %g%%, reorder %g%%, %s\n", loss, dup,
           reorder, cfg->ordered ? "ordered delivery" : "unordered delivery");
  }
  printf("  completed     %" PRIu64 " ok, %" PRIu64 " error%s\n",
         res->completed_ok, res->completed_err,
         res->finished ? "" : " (run did not finish)");
  for (i = 0; i < 32; ++i) {
    if (res->errors_by_code[i]) {
      printf("                %" PRIu64 " x %s\n", res->errors_by_code[i],
             err_name((int)i));
    }
  }
  printf("  delivered     %" PRIu64 " (%" PRIu64 " duplicates, %" PRIu64
         " corrupted, %" PRIu64 " out of order)\n",
         res->delivered, res->duplicates_delivered, res->corrupted,
         res->out_of_order);
  printf("  goodput       %.3f Gb/s over %.3f us of virtual time\n",
         res->goodput_gbps, (double)(res->end - res->start) / 1e3);
  printf("  latency       p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f us "
         "(post to delivery)\n",
         res->lat_p50_us, res->lat_p99_us, res->lat_p999_us, res->lat_max_us);
  printf("  rtt           srtt %.1f us, base %.1f us, cwnd %" PRIu64 " B\n",
         (double)res->a_peer.srtt / 1e3, (double)res->a_peer.min_rtt / 1e3,
         res->a_peer.cwnd);
  printf("  retransmits   %" PRIu64 " (lost by reordering time %" PRIu64
         ", by timeout %" PRIu64 ", spurious %" PRIu64 "; %" PRIu64
         " timeouts)\n",
         res->retransmits, res->a.losses_rack, res->a.losses_rto,
         res->a.spurious_losses, res->a.rto_fired);
  printf("  receiver      %" PRIu64 " unexpected, %" PRIu64
         " not-ready answers, %" PRIu64 " duplicate packets dropped\n",
         res->b.unexp_msgs, res->b.rnr_sent,
         res->b.drops[SRD_DROP_DUP_PKT] + res->b.drops[SRD_DROP_DUP_MSG]);
  if (extra) {
    uint64_t corrupted, duplicated, dup_delayed;
    wire_sums(res, &corrupted, &duplicated, &dup_delayed);
    printf("  corruption    %" PRIu64 " packets corrupted on the wire: %" PRIu64
           " dropped by the engine as corrupt, %" PRIu64
           " dropped for another reason, %" PRIu64 " accepted; %" PRIu64
           " messages delivered corrupted\n",
           corrupted, res->corrupt_dropped, res->corrupt_dropped_other,
           res->corrupt_accepted, res->corrupted);
    printf("  duplication   %" PRIu64 " extra copies, %" PRIu64
           " of them %g us late\n",
           duplicated, dup_delayed, dup_delay);
    printf("  drops         A:");
    print_drops(&res->a);
    printf("\n                B:");
    print_drops(&res->b);
    printf("\n");
  }
  printf("  path share   ");
  for (i = 0; i < res->n_paths; ++i) {
    if (i && i % 16 == 0) {
      printf("\n               ");
    }
    printf(" %4.1f",
           total ? 100.0 * (double)res->path_pkts[i] / (double)total : 0.0);
  }
  printf("  (%% of A's data packets)\n");
}

enum {
  OPT_PATHS = 256,
  OPT_DELAY,
  OPT_JITTER,
  OPT_RATE,
  OPT_QUEUE,
  OPT_LOSS,
  OPT_LOSS_PATHS,
  OPT_DUP,
  OPT_DUP_DELAY,
  OPT_CORRUPT,
  OPT_REORDER,
  OPT_REORDER_DELAY,
  OPT_BLACKHOLE,
  OPT_BLACKHOLE_AT,
  OPT_DEAD_AT,
  OPT_MESSAGES,
  OPT_SIZE,
  OPT_RANDOM_SIZES,
  OPT_INFLIGHT,
  OPT_WINDOW,
  OPT_UNEXP,
  OPT_ORDERED,
  OPT_CC,
  OPT_CC_WINDOW,
  OPT_TARGET,
  OPT_NO_STEERING,
  OPT_MTU,
  OPT_RTO_MIN,
  OPT_MAX_RETRIES,
  OPT_TIME_LIMIT,
  OPT_SEED,
  OPT_JSON,
  OPT_LOG,
  OPT_PCAP,
  OPT_PCAP_AT,
  OPT_PCAP_SNAPLEN,
  OPT_HELP,
  OPT_VERSION
};

/* pcap_tap writes one packet of the wire: A is 198.18.0.1, B 198.18.0.2
   (the benchmarking range of RFC 2544). */
static void pcap_tap(void *user, int from, uint32_t path, srd_tstamp ts,
                     const uint8_t *pkt, size_t len) {
  static const srd_pcap_host hosts[2] = {{0xC6120001u, 1}, {0xC6120002u, 2}};
  (void)srd_pcap_write(user, ts, &hosts[from], &hosts[!from], path, pkt, len,
                       NULL, 0);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"paths", required_argument, 0, OPT_PATHS},
      {"delay", required_argument, 0, OPT_DELAY},
      {"jitter", required_argument, 0, OPT_JITTER},
      {"rate", required_argument, 0, OPT_RATE},
      {"queue", required_argument, 0, OPT_QUEUE},
      {"loss", required_argument, 0, OPT_LOSS},
      {"loss-paths", required_argument, 0, OPT_LOSS_PATHS},
      {"dup", required_argument, 0, OPT_DUP},
      {"dup-delay", required_argument, 0, OPT_DUP_DELAY},
      {"corrupt", required_argument, 0, OPT_CORRUPT},
      {"reorder", required_argument, 0, OPT_REORDER},
      {"reorder-delay", required_argument, 0, OPT_REORDER_DELAY},
      {"blackhole", required_argument, 0, OPT_BLACKHOLE},
      {"blackhole-at", required_argument, 0, OPT_BLACKHOLE_AT},
      {"dead-at", required_argument, 0, OPT_DEAD_AT},
      {"messages", required_argument, 0, OPT_MESSAGES},
      {"size", required_argument, 0, OPT_SIZE},
      {"random-sizes", no_argument, 0, OPT_RANDOM_SIZES},
      {"inflight", required_argument, 0, OPT_INFLIGHT},
      {"window", required_argument, 0, OPT_WINDOW},
      {"unexp", required_argument, 0, OPT_UNEXP},
      {"ordered", no_argument, 0, OPT_ORDERED},
      {"cc", required_argument, 0, OPT_CC},
      {"cc-window", required_argument, 0, OPT_CC_WINDOW},
      {"target-qdelay", required_argument, 0, OPT_TARGET},
      {"no-steering", no_argument, 0, OPT_NO_STEERING},
      {"mtu", required_argument, 0, OPT_MTU},
      {"rto-min", required_argument, 0, OPT_RTO_MIN},
      {"max-retries", required_argument, 0, OPT_MAX_RETRIES},
      {"time-limit", required_argument, 0, OPT_TIME_LIMIT},
      {"seed", required_argument, 0, OPT_SEED},
      {"json", no_argument, 0, OPT_JSON},
      {"log", no_argument, 0, OPT_LOG},
      {"pcap", required_argument, 0, OPT_PCAP},
      {"pcap-at", required_argument, 0, OPT_PCAP_AT},
      {"pcap-snaplen", required_argument, 0, OPT_PCAP_SNAPLEN},
      {"help", no_argument, 0, OPT_HELP},
      {"version", no_argument, 0, OPT_VERSION},
      {0, 0, 0, 0}};
  srd_loop_cfg cfg;
  srd_loop_result res;
  double delays[SRD_LOOP_MAX_PATHS],
      jitter = 0, loss = 0, dup = 0, reorder = 0, reorder_delay = -1,
      rate = 100, blackhole_at = 0, dead_at = -1, corrupt = 0, dup_delay = 0;
  uint64_t queue = 256 * 1024;
  int n_delays = 0, loss_paths[SRD_LOOP_MAX_PATHS] = {0}, any_loss_path = 0;
  int blackhole[SRD_LOOP_MAX_PATHS] = {0}, json = 0, c, rv;
  /* extra: --corrupt or --dup-delay was given, and the output says what
     they did (without them it is what it always was, byte for byte). */
  int extra = 0;
  const char *loss_paths_arg = NULL, *blackhole_arg = NULL, *delay_arg = NULL;
  const char *pcap_path = NULL;
  uint32_t pcap_snaplen = 1024;
  srd_pcap *pcap = NULL;
  uint64_t pcap_count = 0;
  char err[256];
  const char *const *names;
  uint32_t i;

  srd_loop_cfg_default(&cfg);
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case OPT_PATHS:
      cfg.n_paths = (uint32_t)parse_size("--paths", optarg, SRD_MAX_PATHS);
      if (cfg.n_paths < 1) {
        die_usage("bad value for %s: expected 1..64", "--paths");
      }
      break;
    case OPT_DELAY:
      delay_arg = optarg;
      break;
    case OPT_JITTER:
      jitter = parse_double("--jitter", optarg, 0, 1e7);
      break;
    case OPT_RATE:
      rate = parse_double("--rate", optarg, 0, 1e5);
      break;
    case OPT_QUEUE:
      queue = parse_size("--queue", optarg, 1ULL << 34);
      break;
    case OPT_LOSS:
      loss = parse_double("--loss", optarg, 0, 100);
      break;
    case OPT_LOSS_PATHS:
      loss_paths_arg = optarg;
      break;
    case OPT_DUP:
      dup = parse_double("--dup", optarg, 0, 100);
      break;
    case OPT_DUP_DELAY:
      dup_delay = parse_double("--dup-delay", optarg, 0, 1e7);
      extra = 1;
      break;
    case OPT_CORRUPT:
      corrupt = parse_double("--corrupt", optarg, 0, 100);
      extra = 1;
      break;
    case OPT_REORDER:
      reorder = parse_double("--reorder", optarg, 0, 100);
      break;
    case OPT_REORDER_DELAY:
      reorder_delay = parse_double("--reorder-delay", optarg, 0, 1e7);
      break;
    case OPT_BLACKHOLE:
      blackhole_arg = optarg;
      break;
    case OPT_BLACKHOLE_AT:
      blackhole_at = parse_double("--blackhole-at", optarg, 0, 1e12);
      break;
    case OPT_DEAD_AT:
      dead_at = parse_double("--dead-at", optarg, 0.001, 1e12);
      break;
    case OPT_MESSAGES:
      cfg.messages = (uint32_t)parse_size("--messages", optarg, 100000000);
      break;
    case OPT_SIZE:
      cfg.size = (uint32_t)parse_size("--size", optarg, 1u << 30);
      break;
    case OPT_RANDOM_SIZES:
      cfg.random_sizes = 1;
      break;
    case OPT_INFLIGHT:
      cfg.inflight = (uint32_t)parse_size("--inflight", optarg, 1u << 20);
      if (cfg.inflight < 1) {
        die_usage("bad value for %s: expected at least 1", "--inflight");
      }
      break;
    case OPT_WINDOW:
      cfg.recv_window = (uint32_t)parse_size("--window", optarg, 1u << 20);
      if (cfg.recv_window < 1) {
        die_usage("bad value for %s: expected at least 1", "--window");
      }
      break;
    case OPT_UNEXP:
      cfg.settings.unexp_msgs =
          (uint32_t)parse_size("--unexp", optarg, 1u << 20);
      break;
    case OPT_ORDERED:
      cfg.ordered = 1;
      break;
    case OPT_CC:
      for (names = srd_cc_names(); *names; ++names) {
        if (strcmp(*names, optarg) == 0) {
          break;
        }
      }
      if (*names == NULL) {
        die_usage("unknown congestion control '%s' (try swift or fixed)",
                  optarg);
      }
      cfg.settings.cc = *names;
      break;
    case OPT_CC_WINDOW:
      cfg.settings.cc_fixed_window =
          (uint32_t)parse_size("--cc-window", optarg, UINT32_MAX);
      if (cfg.settings.cc_fixed_window < 1) {
        die_usage("bad value for %s: expected at least 1", "--cc-window");
      }
      break;
    case OPT_TARGET:
      cfg.settings.cc_target_qdelay =
          us_to_ns(parse_double("--target-qdelay", optarg, 0.001, 1e7));
      break;
    case OPT_NO_STEERING:
      cfg.settings.path_steering = 0;
      break;
    case OPT_MTU:
      cfg.settings.mtu = (uint32_t)parse_size("--mtu", optarg, 65000);
      if (cfg.settings.mtu < 256) {
        die_usage("bad value for %s: expected 256..65000", "--mtu");
      }
      break;
    case OPT_RTO_MIN:
      cfg.settings.rto_min =
          us_to_ns(parse_double("--rto-min", optarg, 1, 1e7));
      if (cfg.settings.rto_max < cfg.settings.rto_min) {
        cfg.settings.rto_max = cfg.settings.rto_min;
      }
      break;
    case OPT_MAX_RETRIES:
      cfg.settings.max_retries =
          (uint32_t)parse_size("--max-retries", optarg, 250);
      break;
    case OPT_TIME_LIMIT:
      cfg.time_limit =
          (srd_duration)(parse_double("--time-limit", optarg, 0.001, 1e9) *
                         1e6);
      break;
    case OPT_SEED:
      cfg.seed = parse_size("--seed", optarg, UINT64_MAX);
      break;
    case OPT_JSON:
      json = 1;
      break;
    case OPT_LOG:
      cfg.log = log_event;
      break;
    case OPT_PCAP:
      pcap_path = optarg;
      break;
    case OPT_PCAP_AT:
      if (strcmp(optarg, "send") == 0) {
        cfg.tap_at = SRD_LOOP_TAP_SEND;
      } else if (strcmp(optarg, "recv") == 0) {
        cfg.tap_at = SRD_LOOP_TAP_RECV;
      } else {
        die_usage("bad value for %s: expected send or recv", "--pcap-at");
      }
      break;
    case OPT_PCAP_SNAPLEN:
      pcap_snaplen = (uint32_t)parse_size("--pcap-snaplen", optarg, 65549);
      break;
    case OPT_HELP:
      usage(stdout);
      return 0;
    case OPT_VERSION:
      printf("%s %s (wire protocol %d)\n", prog, SRD_VERSION_STR,
             SRD_PROTO_VERSION);
      return 0;
    default:
      if (optopt) {
        char o[3] = {'-', (char)optopt, 0};
        die_usage("unknown or incomplete option '%s'", o);
      }
      die_usage("unknown or incomplete option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) {
    die_usage("unexpected argument '%s'", argv[optind]);
  }
  if (cfg.size > cfg.settings.max_msg_size) {
    cfg.settings.max_msg_size = cfg.size;
  }

  /* Per-path delays: one value for all, or one per path. */
  if (delay_arg) {
    char buf[2048], *tok, *save = NULL;
    if (strlen(delay_arg) >= sizeof(buf)) {
      die_usage("bad value for %s: list too long", "--delay");
    }
    strcpy(buf, delay_arg);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      if (n_delays == SRD_LOOP_MAX_PATHS) {
        die_usage("bad value for %s: more values than paths", "--delay");
      }
      delays[n_delays++] = parse_double("--delay", tok, 0, 1e7);
    }
    if (n_delays != 1 && (uint32_t)n_delays != cfg.n_paths) {
      die_usage("bad value for %s: give one delay, or one per path", "--delay");
    }
  } else {
    delays[0] = 10;
    n_delays = 1;
  }
  if (loss_paths_arg) {
    parse_list("--loss-paths", loss_paths_arg, loss_paths, cfg.n_paths);
    any_loss_path = 1;
  }
  if (blackhole_arg) {
    parse_list("--blackhole", blackhole_arg, blackhole, cfg.n_paths);
  }
  for (i = 0; i < SRD_LOOP_MAX_PATHS; ++i) {
    srd_loop_link *l[2] = {&cfg.ab[i], &cfg.ba[i]};
    double d =
        n_delays == 1 ? delays[0] : delays[i < (uint32_t)n_delays ? i : 0];
    int k;
    for (k = 0; k < 2; ++k) {
      l[k]->delay = us_to_ns(d);
      l[k]->jitter = us_to_ns(jitter);
      l[k]->rate_bps = (uint64_t)llround(rate * 1e9);
      l[k]->queue_bytes = rate > 0 ? queue : 0;
      l[k]->loss = (!any_loss_path || loss_paths[i]) ? loss / 100.0 : 0.0;
      l[k]->dup = dup / 100.0;
      l[k]->dup_delay = us_to_ns(dup_delay);
      l[k]->corrupt = corrupt / 100.0;
      l[k]->reorder = reorder / 100.0;
      l[k]->reorder_delay =
          us_to_ns(reorder_delay >= 0 ? reorder_delay : 2 * d);
      l[k]->blackhole = blackhole[i];
      l[k]->blackhole_from = us_to_ns(blackhole_at);
    }
  }
  if (dead_at > 0) {
    cfg.dead_from = us_to_ns(dead_at);
  }

  if (pcap_path) {
    if (srd_pcap_open(&pcap, pcap_path, pcap_snaplen, err, sizeof(err)) != 0) {
      fprintf(stderr, "%s: cannot write the capture: %s\n", prog, err);
      return 1;
    }
    cfg.tap = pcap_tap;
    cfg.tap_user = pcap;
  }
  rv = srd_loop_run(&cfg, &res);
  pcap_count = pcap ? srd_pcap_count(pcap) : 0;
  if (pcap && srd_pcap_close(pcap, err, sizeof(err)) != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, pcap_path, err);
    return 1;
  }
  if (rv != 0) {
    fprintf(stderr, "%s: cannot run: %s\n", prog, srd_strerror(rv));
    return rv == SRD_ERR_INVALID_ARGUMENT ? 2 : 1;
  }
  if (json) {
    print_json(&cfg, &res, extra);
  } else {
    print_summary(&cfg, &res, loss, dup, reorder, corrupt, dup_delay, extra);
    if (pcap_path) {
      printf("  capture       %" PRIu64 " packets to %s (as %s)\n", pcap_count,
             pcap_path, cfg.tap_at == SRD_LOOP_TAP_SEND ? "sent" : "received");
    }
  }
  if (!res.finished) {
    fprintf(stderr,
            "%s: the run did not finish: %" PRIu64
            " of %u sends completed within the time limit\n",
            prog, res.completed_ok + res.completed_err, cfg.messages);
    return 1;
  }
  if (res.completed_err || res.duplicates_delivered || res.corrupted ||
      res.double_completions || res.unmatched) {
    fprintf(stderr,
            "%s: %" PRIu64 " sends failed, %" PRIu64 " duplicates, %" PRIu64
            " corrupted\n",
            prog, res.completed_err, res.duplicates_delivered, res.corrupted);
    return 1;
  }
  return 0;
}
