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
 *
 * Not a pass/fail test: `make` builds it, nobody runs it automatically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "netsim.h"

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

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
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

  t0 = wall_now();
  if ((rv = netsim_sim_new(&sim, &set, NULL)) != 0 ||
      (rv = netsim_topo_fattree(sim, &ft, &info)) != 0 ||
      (rv = netsim_traffic_new(&tr, sim, hosts)) != 0 ||
      (rv = netsim_traffic_permutation(tr, &fl, 0)) != 0) {
    fprintf(stderr, "netsim-bench: setup failed: %s\n", netsim_strerror(rv));
    netsim_traffic_del(tr);
    netsim_sim_del(sim);
    return 1;
  }
  t1 = wall_now();
  netsim_sim_run_until(sim, until);
  t2 = wall_now();
  wall = t2 - t1;
  netsim_sim_get_stats(sim, &st);
  util = (double)st.delivered_bytes * 8.0 /
         ((double)hosts * 100e9 * ((double)until / (double)NETSIM_S));

  if (o->json) {
    printf("{\"k\": %u, \"hosts\": %u, \"ms\": %g, \"events\": %" PRIu64
           ", \"packet_hops\": %" PRIu64 ", \"wall_s\": %.4f"
           ", \"events_per_s\": %.0f, \"packet_hops_per_s\": %.0f"
           ", \"sim_to_wall\": %.6f, \"peak_rss_mb\": %.1f"
           ", \"setup_s\": %.4f, \"delivered_fraction\": %.4f"
           ", \"drops\": %" PRIu64 ", \"trace_hash\": \"%016" PRIx64 "\"}\n",
           k, hosts, ms, st.events, st.hops, wall, (double)st.events / wall,
           (double)st.hops / wall, ((double)until / (double)NETSIM_S) / wall,
           peak_rss_mb(), t1 - t0, util, st.drops[NETSIM_DROP_QUEUE],
           netsim_sim_trace_hash(sim));
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
    printf("  peak RSS      %.1f MB\n", peak_rss_mb());
    printf("  delivered     %.1f%% of host capacity; %" PRIu64
           " queue drops; trace %016" PRIx64 "\n",
           util * 100.0, st.drops[NETSIM_DROP_QUEUE],
           netsim_sim_trace_hash(sim));
  }
  netsim_traffic_del(tr);
  netsim_sim_del(sim);
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: netsim-bench [--k K --ms MS] [--mtu BYTES] [--window PKTS]\n"
          "                    [--queue BYTES] [--delay-ns NS] [--seed N] "
          "[--json]\n");
}

int main(int argc, char **argv) {
  bench_opts o;
  int i, rv = 0;

  memset(&o, 0, sizeof(o));
  o.mtu = 4096;
  o.window = 32;
  o.queue = 200000;
  o.delay_ns = 1000;
  o.seed = 1;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--json") == 0) {
      o.json = 1;
      continue;
    }
    if (v == NULL) {
      usage();
      return 2;
    }
    if (strcmp(a, "--k") == 0) {
      o.k = (uint32_t)strtoul(v, NULL, 0);
    } else if (strcmp(a, "--ms") == 0) {
      o.ms = strtod(v, NULL);
    } else if (strcmp(a, "--mtu") == 0) {
      o.mtu = (uint32_t)strtoul(v, NULL, 0);
    } else if (strcmp(a, "--window") == 0) {
      o.window = (uint32_t)strtoul(v, NULL, 0);
    } else if (strcmp(a, "--queue") == 0) {
      o.queue = strtoull(v, NULL, 0);
    } else if (strcmp(a, "--delay-ns") == 0) {
      o.delay_ns = strtoull(v, NULL, 0);
    } else if (strcmp(a, "--seed") == 0) {
      o.seed = strtoull(v, NULL, 0);
    } else {
      usage();
      return 2;
    }
    ++i;
  }
  if (o.mtu == 0 || o.window == 0 || (o.k && (o.k % 2 || o.k < 2))) {
    usage();
    return 2;
  }
  if (o.k) {
    return run_one(&o, o.k, o.ms > 0 ? o.ms : 1.0);
  }
  rv |= run_one(&o, 8, o.ms > 0 ? o.ms : 5.0);
  rv |= run_one(&o, 16, o.ms > 0 ? o.ms : 1.0);
  return rv;
}
