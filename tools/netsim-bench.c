/*
 * netsim-bench: the speed of the simulator core.
 *
 * Builds a k-ary fat tree at 100 Gb/s with shallow queues, runs permutation
 * traffic (every host sends to one other host, a random derangement) with
 * window flows that keep many packets in flight, so that the network stays
 * full, and prints the events and packet-hops processed per wall-clock
 * second, the simulated-to-wall time ratio and the peak memory.  Without
 * options it runs k=8 for 5 ms and k=16 for 1 ms of simulated time.
 *
 *   netsim-bench [--k K --ms MS] [--mtu BYTES] [--window PKTS]
 *                [--queue BYTES] [--delay-ns NS] [--seed N] [--json]
 *   netsim-bench --help | --version
 *
 * Not a pass/fail test: `make` builds it, nobody runs it automatically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netsim/netsim.h>

#include "tool_clock.h"
#include "tool_json.h"
#include "tool_opt.h"

typedef struct bench_opts {
  uint32_t k;
  double ms;
  uint32_t mtu;
  uint32_t window;
  uint64_t queue;
  uint64_t delay_ns;
  uint64_t seed;
  int json;
} bench_opts;

static void help(FILE *f) {
  fputs("Usage: netsim-bench [OPTION]...\n"
        "Measure the speed of the simulator core: a k-ary fat tree at 100 "
        "Gb/s with\n"
        "shallow queues, permutation traffic of window flows that keep the "
        "network\n"
        "full; events and packet-hops per wall-clock second, the "
        "simulated-to-wall\n"
        "time ratio and the peak memory.  Without --k it runs k=8 for 5 ms "
        "and\n"
        "k=16 for 1 ms of simulated time.\n"
        "\n"
        "Options:\n"
        "  --k K                the fat tree's k, even, 2..64\n"
        "  --ms MS              simulated time, units ns, us, ms, s allowed\n"
        "                       [5 for k=8, else 1]\n"
        "  --mtu BYTES          packet size on the wire, 1..65536 [4096]\n"
        "  --window PKTS        packets each flow keeps in flight, 1..4096 "
        "[32]\n"
        "  --queue BYTES        every port's queue, K/M/G suffixes [200000]\n"
        "  --delay-ns NS        every link's propagation delay [1000]\n"
        "  --seed N             the simulation's seed [1]\n"
        "  --json               one JSON object per run, one per "
        "line\n" TOOL_OPT_HELP_TEXT "\n"
        "A benchmark, not a pass/fail test.\n"
        "\n"
        "Exit status: 0, 1 if a run could not be set up, 2 for bad usage.\n",
        f);
}

static const tool_info bench_info = {"netsim-bench", help, NULL};

static void print_json(uint32_t k, uint32_t hosts, double ms,
                       const netsim_sim_stats *st, double wall, double setup,
                       double util, double sim_s, uint64_t trace) {
  tool_json j;

  tool_json_init(&j, stdout, TOOL_JSON_SPACED);
  tool_json_obj_begin(&j);
  tool_json_kv_u64(&j, "k", k);
  tool_json_kv_u64(&j, "hosts", hosts);
  tool_json_kv_numf(&j, "ms", "%g", ms);
  tool_json_kv_u64(&j, "events", st->events);
  tool_json_kv_u64(&j, "packet_hops", st->hops);
  tool_json_kv_numf(&j, "wall_s", "%.4f", wall);
  tool_json_kv_numf(&j, "events_per_s", "%.0f", (double)st->events / wall);
  tool_json_kv_numf(&j, "packet_hops_per_s", "%.0f", (double)st->hops / wall);
  tool_json_kv_numf(&j, "sim_to_wall", "%.6f", sim_s / wall);
  tool_json_kv_numf(&j, "peak_rss_mb", "%.1f", tool_peak_rss_mb());
  tool_json_kv_numf(&j, "setup_s", "%.4f", setup);
  tool_json_kv_numf(&j, "delivered_fraction", "%.4f", util);
  tool_json_kv_u64(&j, "drops", st->drops[NETSIM_DROP_QUEUE]);
  tool_json_key(&j, "trace_hash");
  tool_json_strf(&j, "%016" PRIx64, trace);
  tool_json_obj_end(&j);
  if (tool_json_finish(&j) != 0) {
    tool_die("cannot write the JSON output");
  }
}

static int run_one(const bench_opts *o, uint32_t k, double ms) {
  netsim_settings set;
  netsim_fattree_settings ft;
  netsim_flow_settings fl;
  netsim_topo_info info;
  netsim_sim_stats st;
  netsim_sim *sim = NULL;
  netsim_traffic *tr = NULL;
  netsim_time until = (netsim_time)(ms * (double)NETSIM_MS);
  double t0, t1, t2, wall, util;
  uint32_t hosts = k * k * k / 4;
  int rv;

  netsim_settings_default(&set);
  set.seed = o->seed;
  set.max_pkts = hosts * o->window + 4096;
  netsim_fattree_settings_default(&ft, k);
  ft.host.queue_bytes = ft.edge_agg.queue_bytes = ft.agg_core.queue_bytes =
      o->queue;
  ft.host.delay = ft.edge_agg.delay = ft.agg_core.delay =
      o->delay_ns * NETSIM_NS;
  netsim_flow_settings_default(&fl);
  fl.pkt_bytes = o->mtu;
  fl.window = o->window;
  fl.retry = 20 * NETSIM_US;

  t0 = tool_now_s();
  if ((rv = netsim_sim_new(&sim, &set, NULL)) != 0 ||
      (rv = netsim_topo_fattree(sim, &ft, &info)) != 0 ||
      (rv = netsim_traffic_new(&tr, sim, hosts)) != 0 ||
      (rv = netsim_traffic_permutation(tr, &fl, 0)) != 0) {
    fprintf(stderr, "%s: setup failed: %s\n", tool_name(), netsim_strerror(rv));
    netsim_traffic_del(tr);
    netsim_sim_del(sim);
    return 1;
  }
  t1 = tool_now_s();
  netsim_sim_run_until(sim, until);
  t2 = tool_now_s();
  wall = t2 - t1;
  netsim_sim_get_stats(sim, &st);
  util = (double)st.delivered_bytes * 8.0 /
         ((double)hosts * 100e9 * ((double)until / (double)NETSIM_S));

  if (o->json) {
    print_json(k, hosts, ms, &st, wall, t1 - t0, util,
               (double)until / (double)NETSIM_S, netsim_sim_trace_hash(sim));
  } else {
    printf("k=%u fat tree: %u hosts, %u switches, %u links; 100 Gb/s, "
           "%" PRIu64 " B queues, %" PRIu64 " ns links\n",
           k, info.n_hosts, info.n_switches, info.n_links, o->queue,
           o->delay_ns);
    printf("  permutation, window %u x %u B, %g ms simulated, seed %" PRIu64
           "\n",
           o->window, o->mtu, ms, o->seed);
    printf("  setup         %.3f s\n", t1 - t0);
    printf("  events        %" PRIu64 "\n", st.events);
    printf("  packet-hops   %" PRIu64 "\n", st.hops);
    printf("  wall          %.3f s\n", wall);
    printf("  events/s      %.3f M\n", (double)st.events / wall / 1e6);
    printf("  packet-hops/s %.3f M\n", (double)st.hops / wall / 1e6);
    printf("  sim/wall      %.5f  (1 s simulated takes %.1f s)\n",
           ((double)until / (double)NETSIM_S) / wall,
           wall / ((double)until / (double)NETSIM_S));
    printf("  peak RSS      %.1f MB\n", tool_peak_rss_mb());
    printf("  delivered     %.1f%% of host capacity; %" PRIu64
           " queue drops; trace %016" PRIx64 "\n",
           util * 100.0, st.drops[NETSIM_DROP_QUEUE],
           netsim_sim_trace_hash(sim));
  }
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
  return 0;
}

int main(int argc, char **argv) {
  enum {
    O_K = 256,
    O_MS,
    O_MTU,
    O_WINDOW,
    O_QUEUE,
    O_DELAY_NS,
    O_SEED,
    O_JSON
  };
  static const struct option opts[] = {
      {"k", required_argument, 0, O_K},
      {"ms", required_argument, 0, O_MS},
      {"mtu", required_argument, 0, O_MTU},
      {"window", required_argument, 0, O_WINDOW},
      {"queue", required_argument, 0, O_QUEUE},
      {"delay-ns", required_argument, 0, O_DELAY_NS},
      {"seed", required_argument, 0, O_SEED},
      {"json", no_argument, 0, O_JSON},
      TOOL_OPT_STD,
      {0, 0, 0, 0}};
  bench_opts o;
  int c, rv = 0;

  tool_init(&bench_info);
  memset(&o, 0, sizeof(o));
  o.mtu = 4096;
  o.window = 32;
  o.queue = 200000;
  o.delay_ns = 1000;
  o.seed = 1;
  while ((c = tool_getopt(argc, argv, "", opts)) != -1) {
    switch (c) {
    case O_K:
      o.k = (uint32_t)tool_arg_u64("--k", optarg, 2, 64);
      if (o.k % 2) {
        tool_usage_error("bad value for --k: '%s' (expected an even number)",
                         optarg);
      }
      break;
    case O_MS:
      o.ms = tool_arg_duration("--ms", optarg, TOOL_MS, 1e-6, 1e6);
      break;
    case O_MTU:
      o.mtu = (uint32_t)tool_arg_size("--mtu", optarg, 1, 65536);
      break;
    case O_WINDOW:
      o.window = (uint32_t)tool_arg_u64("--window", optarg, 1, 4096);
      break;
    case O_QUEUE:
      o.queue = tool_arg_size("--queue", optarg, 0, UINT64_MAX);
      break;
    case O_DELAY_NS:
      o.delay_ns = tool_arg_u64("--delay-ns", optarg, 0, 1000000000000ull);
      break;
    case O_SEED:
      o.seed = tool_arg_size("--seed", optarg, 0, UINT64_MAX);
      break;
    case O_JSON:
      o.json = 1;
      break;
    }
  }
  if (optind < argc) {
    tool_usage_error("unexpected argument '%s'", argv[optind]);
  }
  if (o.k) {
    return run_one(&o, o.k, o.ms > 0 ? o.ms : 1.0);
  }
  rv |= run_one(&o, 8, o.ms > 0 ? o.ms : 5.0);
  rv |= run_one(&o, 16, o.ms > 0 ? o.ms : 1.0);
  return rv;
}
