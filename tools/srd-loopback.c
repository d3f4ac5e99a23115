/*
 * srd-loopback: two libsrd endpoints in one process over an in-memory wire
 * driven by a virtual clock.  A sends messages to B over 1..64 paths with
 * the impairments you ask for; the tool checks every delivered byte and
 * reports completions, deliveries, duplicates, goodput (virtual time),
 * latency percentiles and how the packets spread over the paths.  With
 * --corrupt or --dup-delay it also reports what the wire corrupted and
 * duplicated and what the engines dropped, by reason.
 *
 * Same flags and seed, same output, byte for byte.  Ctrl-C stops the run
 * and prints what it measured so far (exit status 130).
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <srd/srd.h>

#include "srd_loop.h"
#include "srd_pcap.h"
#include "tool_hist.h"
#include "tool_json.h"
#include "tool_opt.h"
#include "tool_parse.h"
#include "tool_srd.h"

static void help(FILE *f) {
  fputs(
      "Usage: srd-loopback [OPTION]...\n"
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
      "  --pcap-snaplen N     bytes kept of each frame, 0 for all "
      "[1024]\n" TOOL_OPT_HELP_TEXT "\n"
      "Times (US, MS) take a unit suffix, ns, us, ms or s (--delay 1ms), and\n"
      "--rate one of K, M, G or T (bits per second); a bare number is in the\n"
      "unit shown.  Sizes and counts take K, M and G (binary).\n"
      "\n"
      "Ctrl-C (SIGINT) stops the run and prints what was measured so far,\n"
      "marked interrupted.\n"
      "\n"
      "Exit status: 0 when every message completed and arrived intact once,\n"
      "1 when a send failed or a check did not hold, 2 for bad usage, 130\n"
      "when interrupted.\n",
      f);
}

static void version_extra(FILE *f) {
  fprintf(f, "libsrd %s, wire protocol %d\n", SRD_VERSION_STR,
          SRD_PROTO_VERSION);
}

static const tool_info info = {"srd-loopback", help, version_extra};

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

/* json_extra writes what --corrupt and --dup-delay add: the wire's
   counts, what became of the corrupted packets, and both engines' drops
   by reason. */
static void json_extra(tool_json *j, const srd_loop_result *res) {
  uint64_t corrupted, duplicated, dup_delayed;

  wire_sums(res, &corrupted, &duplicated, &dup_delayed);
  tool_json_key(j, "impairments");
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "corrupted", corrupted);
  tool_json_kv_u64(j, "duplicated", duplicated);
  tool_json_kv_u64(j, "dup_delayed", dup_delayed);
  tool_json_obj_end(j);
  tool_json_key(j, "corruption");
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "on_wire", corrupted);
  tool_json_kv_u64(j, "dropped_corrupt", res->corrupt_dropped);
  tool_json_kv_u64(j, "dropped_other", res->corrupt_dropped_other);
  tool_json_kv_u64(j, "accepted", res->corrupt_accepted);
  tool_json_kv_u64(j, "delivered_corrupted", res->corrupted);
  tool_json_obj_end(j);
  tool_json_key(j, "drops");
  tool_json_obj_begin(j);
  tool_json_key(j, "a");
  tool_json_drops(j, res->a.drops, SRD_DROP_REASONS);
  tool_json_key(j, "b");
  tool_json_drops(j, res->b.drops, SRD_DROP_REASONS);
  tool_json_obj_end(j);
}

/* json_pkts_out writes the packets |st|'s endpoint wrote, by kind. */
static void json_pkts_out(tool_json *j, const char *key,
                          const srd_ep_stats *st) {
  tool_json_key(j, key);
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "data", st->data_pkts_out);
  tool_json_kv_u64(j, "ack", st->ack_pkts_out);
  tool_json_kv_u64(j, "ctrl", st->ctrl_pkts_out);
  tool_json_obj_end(j);
}

/* print_json prints the run as one compact JSON object.  The keys of
   --corrupt and --dup-delay (|extra|) and "interrupted" appear only when
   they apply, so that other runs print what they always printed. */
/* lat_us is percentile |p| of the run's message latencies in
   microseconds (the nearest rank, tools/lib/tool_hist.h); 0 if nothing was
   delivered. */
static double lat_us(const srd_loop_cfg *cfg, const srd_loop_result *res,
                     double p) {
  return res->n_lat ? (double)tool_pct_u64(cfg->lat_ns, res->n_lat, p) / 1e3
                    : 0;
}

static void print_json(const srd_loop_cfg *cfg, const srd_loop_result *res,
                       int extra) {
  uint64_t total = 0, delivered = 0;
  uint32_t i;
  tool_json j;

  for (i = 0; i < res->n_paths; ++i) {
    total += res->path_pkts[i];
    delivered += res->ab[i].delivered + res->ba[i].delivered;
  }
  tool_json_init(&j, stdout, TOOL_JSON_COMPACT);
  tool_json_obj_begin(&j);
  tool_json_kv_u64(&j, "seed", cfg->seed);
  tool_json_kv_u64(&j, "paths", cfg->n_paths);
  tool_json_kv_u64(&j, "messages", cfg->messages);
  tool_json_kv_u64(&j, "size", cfg->size);
  tool_json_kv_u64(&j, "sent", res->sent);
  tool_json_kv_u64(&j, "completed_ok", res->completed_ok);
  tool_json_kv_u64(&j, "completed_err", res->completed_err);
  tool_json_key(&j, "errors");
  tool_json_obj_begin(&j);
  for (i = 0; i < 32; ++i) {
    if (res->errors_by_code[i]) {
      tool_json_kv_u64(&j, err_name((int)i), res->errors_by_code[i]);
    }
  }
  tool_json_obj_end(&j);
  tool_json_kv_u64(&j, "delivered", res->delivered);
  tool_json_kv_u64(&j, "duplicates_delivered", res->duplicates_delivered);
  tool_json_kv_u64(&j, "corrupted", res->corrupted);
  tool_json_kv_u64(&j, "double_completions", res->double_completions);
  tool_json_kv_u64(&j, "recv_errors", res->recv_errors);
  tool_json_kv_u64(&j, "out_of_order", res->out_of_order);
  tool_json_kv_u64(&j, "retransmits", res->retransmits);
  tool_json_kv_u64(&j, "losses_rack", res->a.losses_rack);
  tool_json_kv_u64(&j, "losses_rto", res->a.losses_rto);
  tool_json_kv_u64(&j, "spurious_losses", res->a.spurious_losses);
  tool_json_kv_u64(&j, "rto_fired", res->a.rto_fired);
  tool_json_kv_u64(&j, "rnr_sent", res->b.rnr_sent);
  tool_json_kv_numf(&j, "goodput_gbps", "%.3f", res->goodput_gbps);
  tool_json_kv_numf(&j, "virtual_time_us", "%.3f",
                    (double)(res->end - res->start) / 1e3);
  tool_json_key(&j, "msg_latency_us");
  tool_json_obj_begin(&j);
  tool_json_kv_numf(&j, "p50", "%.3f", lat_us(cfg, res, 0.50));
  tool_json_kv_numf(&j, "p99", "%.3f", lat_us(cfg, res, 0.99));
  tool_json_kv_numf(&j, "p999", "%.3f", lat_us(cfg, res, 0.999));
  tool_json_kv_numf(&j, "max", "%.3f", lat_us(cfg, res, 1.0));
  tool_json_obj_end(&j);
  tool_json_kv_numf(&j, "srtt_us", "%.3f", (double)res->a_peer.srtt / 1e3);
  tool_json_kv_numf(&j, "min_rtt_us", "%.3f",
                    (double)res->a_peer.min_rtt / 1e3);
  tool_json_kv_u64(&j, "cwnd", res->a_peer.cwnd);
  /* Packets each endpoint wrote, by kind, and what the wire delivered
     (a capture at --pcap-at recv holds exactly the delivered ones). */
  json_pkts_out(&j, "a_pkts_out", &res->a);
  json_pkts_out(&j, "b_pkts_out", &res->b);
  tool_json_kv_u64(&j, "wire_delivered", delivered);
  tool_json_key(&j, "path_share");
  tool_json_arr_begin(&j);
  for (i = 0; i < res->n_paths; ++i) {
    tool_json_numf(&j, "%.4f",
                   total ? (double)res->path_pkts[i] / (double)total : 0.0);
  }
  tool_json_arr_end(&j);
  tool_json_kv_bool(&j, "finished", res->finished);
  if (extra) {
    json_extra(&j, res);
  }
  if (res->interrupted) {
    tool_json_kv_bool(&j, "interrupted", 1);
  }
  tool_json_obj_end(&j);
  if (tool_json_finish(&j) != 0) {
    tool_die("cannot write the JSON output");
  }
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
         res->finished      ? ""
         : res->interrupted ? " (interrupted)"
                            : " (run did not finish)");
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
         lat_us(cfg, res, 0.50), lat_us(cfg, res, 0.99),
         lat_us(cfg, res, 0.999), lat_us(cfg, res, 1.0));
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
  OPT_PCAP_SNAPLEN
};

/* interrupted is set by the first SIGINT; srd_loop_run reads it at every
   step. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

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
      TOOL_OPT_STD,
      {0, 0, 0, 0}};
  srd_loop_cfg cfg;
  srd_loop_result res;
  int status = 0;
  double delays[SRD_LOOP_MAX_PATHS],
      jitter = 0, loss = 0, dup = 0, reorder = 0, reorder_delay = -1,
      rate = 100, blackhole_at = 0, dead_at = -1, corrupt = 0, dup_delay = 0;
  uint64_t queue = 256 * 1024, loss_paths = ~0ull, blackhole = 0;
  int n_delays = 0, json = 0, c, rv;
  /* extra: --corrupt or --dup-delay was given, and the output says what
     they did (without them it is what it always was, byte for byte). */
  int extra = 0;
  const char *loss_paths_arg = NULL, *blackhole_arg = NULL, *delay_arg = NULL;
  struct sigaction sa;
  const char *pcap_path = NULL;
  uint32_t pcap_snaplen = 1024;
  srd_pcap *pcap = NULL;
  uint64_t pcap_count = 0;
  char err[256];
  const char *const *names;
  uint32_t i;

  /* Ctrl-C ends the run where it is and prints what it measured, as
     srd-perf does; a second one ends the program at once.  Caught from
     the start, so that a Ctrl-C while the run is being set up (2 million
     messages take a while) is one too, not the default's silent end. */
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  tool_init(&info);
  srd_loop_cfg_default(&cfg);
  while ((c = tool_getopt(argc, argv, "", opts)) != -1) {
    switch (c) {
    case OPT_PATHS:
      cfg.n_paths =
          (uint32_t)tool_arg_size("--paths", optarg, 1, SRD_MAX_PATHS);
      break;
    case OPT_DELAY:
      delay_arg = optarg;
      break;
    case OPT_JITTER:
      jitter = tool_arg_duration("--jitter", optarg, TOOL_US, 0, 1e7);
      break;
    case OPT_RATE:
      rate = tool_arg_rate("--rate", optarg, TOOL_GBPS, 0, 1e5);
      break;
    case OPT_QUEUE:
      queue = tool_arg_size("--queue", optarg, 0, 1ULL << 34);
      break;
    case OPT_LOSS:
      loss = tool_arg_double("--loss", optarg, 0, 100);
      break;
    case OPT_LOSS_PATHS:
      loss_paths_arg = optarg;
      break;
    case OPT_DUP:
      dup = tool_arg_double("--dup", optarg, 0, 100);
      break;
    case OPT_DUP_DELAY:
      dup_delay = tool_arg_duration("--dup-delay", optarg, TOOL_US, 0, 1e7);
      extra = 1;
      break;
    case OPT_CORRUPT:
      corrupt = tool_arg_double("--corrupt", optarg, 0, 100);
      extra = 1;
      break;
    case OPT_REORDER:
      reorder = tool_arg_double("--reorder", optarg, 0, 100);
      break;
    case OPT_REORDER_DELAY:
      reorder_delay =
          tool_arg_duration("--reorder-delay", optarg, TOOL_US, 0, 1e7);
      break;
    case OPT_BLACKHOLE:
      blackhole_arg = optarg;
      break;
    case OPT_BLACKHOLE_AT:
      blackhole_at =
          tool_arg_duration("--blackhole-at", optarg, TOOL_US, 0, 1e12);
      break;
    case OPT_DEAD_AT:
      dead_at = tool_arg_duration("--dead-at", optarg, TOOL_US, 0.001, 1e12);
      break;
    case OPT_MESSAGES:
      cfg.messages =
          (uint32_t)tool_arg_size("--messages", optarg, 0, 100000000);
      break;
    case OPT_SIZE:
      cfg.size = (uint32_t)tool_arg_size("--size", optarg, 0, 1u << 30);
      break;
    case OPT_RANDOM_SIZES:
      cfg.random_sizes = 1;
      break;
    case OPT_INFLIGHT:
      cfg.inflight = (uint32_t)tool_arg_size("--inflight", optarg, 1, 1u << 20);
      break;
    case OPT_WINDOW:
      cfg.recv_window =
          (uint32_t)tool_arg_size("--window", optarg, 1, 1u << 20);
      break;
    case OPT_UNEXP:
      cfg.settings.unexp_msgs =
          (uint32_t)tool_arg_size("--unexp", optarg, 0, 1u << 20);
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
        tool_usage_error("unknown congestion control '%s' (try swift or fixed)",
                         optarg);
      }
      cfg.settings.cc = *names;
      break;
    case OPT_CC_WINDOW:
      cfg.settings.cc_fixed_window =
          (uint32_t)tool_arg_size("--cc-window", optarg, 1, UINT32_MAX);
      break;
    case OPT_TARGET:
      cfg.settings.cc_target_qdelay = us_to_ns(
          tool_arg_duration("--target-qdelay", optarg, TOOL_US, 0.001, 1e7));
      break;
    case OPT_NO_STEERING:
      cfg.settings.path_steering = 0;
      break;
    case OPT_MTU:
      cfg.settings.mtu = (uint32_t)tool_arg_size("--mtu", optarg, 256, 65000);
      break;
    case OPT_RTO_MIN:
      cfg.settings.rto_min =
          us_to_ns(tool_arg_duration("--rto-min", optarg, TOOL_US, 1, 1e7));
      if (cfg.settings.rto_max < cfg.settings.rto_min) {
        cfg.settings.rto_max = cfg.settings.rto_min;
      }
      break;
    case OPT_MAX_RETRIES:
      cfg.settings.max_retries =
          (uint32_t)tool_arg_size("--max-retries", optarg, 0, 250);
      break;
    case OPT_TIME_LIMIT:
      cfg.time_limit = (srd_duration)(tool_arg_duration("--time-limit", optarg,
                                                        TOOL_MS, 0.001, 1e9) *
                                      1e6);
      break;
    case OPT_SEED:
      cfg.seed = tool_arg_size("--seed", optarg, 0, UINT64_MAX);
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
        tool_usage_error("bad value for %s: expected send or recv",
                         "--pcap-at");
      }
      break;
    case OPT_PCAP_SNAPLEN:
      pcap_snaplen =
          (uint32_t)tool_arg_size("--pcap-snaplen", optarg, 0, 65549);
      break;
    }
  }
  if (optind < argc) {
    tool_usage_error("unexpected argument '%s'", argv[optind]);
  }
  if (cfg.size > cfg.settings.max_msg_size) {
    cfg.settings.max_msg_size = cfg.size;
  }

  /* Per-path delays: one value for all, or one per path. */
  if (delay_arg) {
    const char *cur = delay_arg;
    char item[64];
    while ((rv = tool_list_next(&cur, item, sizeof(item))) > 0 &&
           n_delays < SRD_LOOP_MAX_PATHS) {
      delays[n_delays++] = tool_arg_duration("--delay", item, TOOL_US, 0, 1e7);
    }
    if (rv != 0 || (n_delays != 1 && (uint32_t)n_delays != cfg.n_paths)) {
      tool_usage_error("bad value for --delay: '%s' (expected one delay, or "
                       "one per path, comma separated)",
                       delay_arg);
    }
  } else {
    delays[0] = 10;
    n_delays = 1;
  }
  if (loss_paths_arg) {
    loss_paths = tool_arg_mask("--loss-paths", loss_paths_arg, cfg.n_paths);
  }
  if (blackhole_arg) {
    blackhole = tool_arg_mask("--blackhole", blackhole_arg, cfg.n_paths);
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
      l[k]->loss = (loss_paths >> i & 1) ? loss / 100.0 : 0.0;
      l[k]->dup = dup / 100.0;
      l[k]->dup_delay = us_to_ns(dup_delay);
      l[k]->corrupt = corrupt / 100.0;
      l[k]->reorder = reorder / 100.0;
      l[k]->reorder_delay =
          us_to_ns(reorder_delay >= 0 ? reorder_delay : 2 * d);
      l[k]->blackhole = (int)(blackhole >> i & 1);
      l[k]->blackhole_from = us_to_ns(blackhole_at);
    }
  }
  if (dead_at > 0) {
    cfg.dead_from = us_to_ns(dead_at);
  }

  if (pcap_path) {
    if (srd_pcap_open(&pcap, pcap_path, pcap_snaplen, err, sizeof(err)) != 0) {
      tool_die("cannot write the capture: %s", err);
    }
    cfg.tap = pcap_tap;
    cfg.tap_user = pcap;
  }
  cfg.stop = &interrupted;
  cfg.lat_ns = malloc((cfg.messages ? cfg.messages : 1) * sizeof(uint64_t));
  if (cfg.lat_ns == NULL) {
    tool_die("out of memory for %u latencies", cfg.messages);
  }
  rv = srd_loop_run(&cfg, &res);
  pcap_count = pcap ? srd_pcap_count(pcap) : 0;
  if (pcap && srd_pcap_close(pcap, err, sizeof(err)) != 0) {
    tool_die("%s: %s", pcap_path, err);
  }
  if (rv != 0) {
    fprintf(stderr, "%s: cannot run: %s\n", tool_name(), srd_strerror(rv));
    free(cfg.lat_ns);
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
  if (res.interrupted) {
    fflush(stdout);
    fprintf(stderr,
            "%s: interrupted after %" PRIu64
            " of %u sends completed; the output above holds what was "
            "measured\n",
            tool_name(), res.completed_ok + res.completed_err, cfg.messages);
    status = 130;
  } else if (!res.finished) {
    fprintf(stderr,
            "%s: the run did not finish: %" PRIu64
            " of %u sends completed within the time limit\n",
            tool_name(), res.completed_ok + res.completed_err, cfg.messages);
    status = 1;
  } else if (res.completed_err || res.duplicates_delivered || res.corrupted ||
             res.double_completions || res.unmatched) {
    fprintf(stderr,
            "%s: %" PRIu64 " sends failed, %" PRIu64 " duplicates, %" PRIu64
            " corrupted\n",
            tool_name(), res.completed_err, res.duplicates_delivered,
            res.corrupted);
    status = 1;
  }
  free(cfg.lat_ns);
  return status;
}
