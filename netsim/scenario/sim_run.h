/*
 * sim_run.h: running a compiled scenario with one transport, and what the
 * run measured (docs/scenarios.md, "What is measured").
 */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <signal.h>
#include <stdio.h>

#include "sim_scn.h"

/* sim_flow is one flow of a run: messages from |src| to |dst|. */
typedef struct sim_flow {
  uint32_t src;
  uint32_t dst;
  uint32_t conn;
  /* bytes is the flow's size; 0: unbounded (runs until the end). */
  uint64_t bytes;
  /* n_msgs is how many messages it has (0 when unbounded). */
  uint32_t n_msgs;
  uint32_t posted, done, failed, outstanding;
  uint64_t posted_bytes;
  /* start and end (NETSIM_TIME_NONE until it completes). */
  netsim_time start;
  netsim_time end;
  /* delivered counts readable bytes; win_bytes those after the warmup. */
  uint64_t delivered;
  uint64_t win_bytes;
  /* last_progress and max_gap: the longest the flow went without a
     readable byte while it was active. */
  netsim_time last_progress;
  netsim_time max_gap;
  /* round is the incast round (0 otherwise). */
  uint32_t round;
  /* open_loop: messages are posted at given times (stream). */
  int open_loop;
  int started;
} sim_flow;

/* sim_qseries is a sampled queue (one of the busiest ports). */
typedef struct sim_qseries {
  char name[100];
  uint32_t link;
  uint64_t max_bytes;
  double mean_bytes;
} sim_qseries;

#define SIM_MAX_QSERIES 4

/* sim_linkstat is one link (one direction of a cable) over a run: its
   name (docs/scenarios.md, "Naming links"), the bytes that reached its
   far end, their share of what its base rate could carry in the run
   (load), its queue drops and its queue's deepest and mean depth. */
typedef struct sim_linkstat {
  char name[100];
  uint64_t bytes;
  double load;
  uint64_t queue_drops;
  uint64_t max_q_bytes;
  double mean_q_bytes;
} sim_linkstat;

/* sim_faultrec is one [faults] entry as a run applied it (faults.csv):
   its kind ("down", "up", "degrade", "loss", "ber" or "dup"), the link
   as the scenario wrote it, the first of the |n_cables| cables it stands
   for (one direction's name, as links.csv names it: "leaf0->spine2" for
   tcpflow0), when it applies (0 for the kinds without a time: from the
   start), when routing follows (down: stops using the cable; up: uses it
   again; NETSIM_TIME_NONE for the other kinds) and its value (degrade:
   the rate in Gb/s; loss and dup: the probability; ber: the bit-error
   rate; 0 otherwise). */
typedef struct sim_faultrec {
  char kind[8];
  char link[SCN_NAME_MAX];
  char cable[100];
  uint32_t n_cables;
  netsim_time at;
  netsim_time routed;
  double value;
} sim_faultrec;

/* Per-flow throughput series (flow_throughput.csv) are kept for every
   flow when a run has at most SIM_FSERIES_ALL flows; otherwise for the
   SIM_FSERIES_LEAST flows that delivered the fewest bytes and the
   SIM_FSERIES_MOST that delivered the most (flows that started before
   those that did not, ties to the lower index).  While the run goes
   every flow has bins, at most SIM_FBIN_CELLS of them in all (each flow
   gets a whole number of throughput bins per bin, as few as fit). */
#define SIM_FSERIES_ALL 32u
#define SIM_FSERIES_LEAST 16u
#define SIM_FSERIES_MOST 8u
#define SIM_FBIN_CELLS (1u << 21)

/* sim_result is what one run (one transport, one sweep point) measured. */
typedef struct sim_result {
  char transport[SCN_NAME_MAX];
  /* kind is "srd", "tcp" or "tcp-over-srd". */
  char kind[16];
  char point[256];
  uint32_t point_idx;
  /* pcap_pkts: the packets the run's capture holds (sim_run_opts.pcap). */
  uint64_t pcap_pkts;
  /* Flows (bounded ones have completion times). */
  uint32_t n_flows, n_flows_done, n_flows_unbounded;
  double fct_us[4]; /* p50, p99, p99.9, max */
  double slowdown[4];
  /* RPCs: the bounded flows of the scenario's RPC sizes (rpc_min ..
     rpc_max; rpc_on 0: the scenario has no RPC class), their number, how
     many completed, and those completions' times and slowdowns (p50,
     p99, p99.9, max), as fct_us and slowdown. */
  int rpc_on;
  uint32_t n_rpcs, n_rpcs_done;
  double rpc_us[4];
  double rpc_slowdown[4];
  /* Messages: post to readable. */
  uint64_t n_msgs, n_msgs_done;
  double lat_us[4];
  /* Throughput. */
  double tput_gbps;
  double capacity_gbps;
  double tput_fraction;
  double jain;
  /* Per path (dumbbell paths, spines, cores) share of fabric bytes. */
  double path_share[256];
  uint32_t n_paths;
  /* Drops in the network, by netsim_drop_reason, and in all. */
  uint64_t drops_by[NETSIM_DROP_REASONS];
  uint64_t drops;
  uint64_t ecn_marks;
  /* Bit errors: ber_on says the run put bit errors on some link
     (sim_scn_has_ber); corrupted counts the packets links corrupted (once
     per link that hit one), bit_errors the errors. */
  int ber_on;
  uint64_t corrupted;
  uint64_t bit_errors;
  /* Duplication: dup_on says the run made some link duplicate packets
     (sim_scn_has_dup); duplicated and dup_skipped count the copies links
     made and could not make (netsim_sim_stats); dup_reads counts
     messages reported readable again after their first time (delivered
     twice).  A transport that delivers a message twice without the
     runner seeing it again counts an unmatched completion
     (cnt.unmatched). */
  int dup_on;
  uint64_t duplicated;
  uint64_t dup_skipped;
  uint64_t dup_reads;
  simx_counters cnt;
  /* has_lower: the transport runs over another (TCP over SRD): |cnt| is
     TCP's view, |lower| the SRD layer's counters below it. */
  int has_lower;
  simx_counters lower;
  /* Head-of-line blocking: time messages sat arrived but unreadable. */
  double hol_total_us;
  double hol_max_us;
  uint64_t hol_msgs;
  double max_stall_us;
  /* Every link of the run (n_links of them; NULL if out of memory):
     links.csv. */
  sim_linkstat *links;
  uint32_t n_links;
  /* Queues. */
  sim_qseries q[SIM_MAX_QSERIES];
  uint32_t n_q;
  uint64_t max_queue_bytes;
  /* The run. */
  netsim_time end;
  uint64_t events, hops;
  double wall_s;
  uint64_t trace_hash;
  int stopped_early; /* all work completed before the duration */
  /* interrupted: the run was cut short by sim_run_opts.interrupt at |end|
     (before the duration, its work not done); everything above is what
     it measured from 0 to |end|. */
  int interrupted;
  /* Series and records (see sim_run_opts.records). */
  uint64_t bin_ps;
  uint32_t n_bins;
  double *tput_bins; /* Gb/s per bin */
  uint32_t n_samples;
  netsim_time *q_time;
  uint64_t *q_bytes; /* n_samples x n_q */
  /* Per-flow throughput (with records; see SIM_FSERIES_ALL): n_fseries
     flows, fseries_flow[k] the index of the k-th (ascending), each with
     n_fbins bins of fbin_ps, fbins[k * n_fbins + b] in Gb/s. */
  uint64_t fbin_ps;
  uint32_t n_fbins;
  uint32_t n_fseries;
  uint32_t *fseries_flow;
  double *fbins;
  /* The [faults] entries the run applied (faults.csv). */
  sim_faultrec faults[SCN_MAX_FAULTS];
  uint32_t n_faults;
  sim_flow *flows;
  simx_msg **msgs; /* blocks of SIM_MSG_BLOCK */
  uint64_t n_msg_recs;
} sim_result;

#define SIM_MSG_BLOCK 4096u

/* sim_run_opts says how to run. */
typedef struct sim_run_opts {
  /* records keeps every flow and message for CSV output. */
  int records;
  /* progress draws a progress bar on stderr. */
  int progress;
  /* sample_queues samples the busiest ports' queues. */
  int sample_queues;
  /* interrupt, when not NULL, is a flag a signal handler sets: once it
     is nonzero the run stops before its next event (the event list
     checks it: netsim_evl_set_interrupt), and what it measured until
     then is its result. */
  const volatile sig_atomic_t *interrupt;
  /* pcap, when not NULL and the scenario names links to capture
     ([scenario] pcap), is the file the run's capture is written to. */
  const char *pcap;
} sim_run_opts;

/* sim_run runs scenario |s| (one point) with transport |tr| and fills
   |res|.  Returns 0 (res->interrupted says whether o->interrupt cut it
   short), or -1 with a message in |err|; either way free |res| with
   sim_result_fini. */
int sim_run(const sim_scn *s, uint32_t tr, const sim_run_opts *o,
            sim_result *res, char *err, size_t errlen);

/* sim_result_fini frees what a run allocated in |res|. */
void sim_result_fini(sim_result *res);

/* sim_result_msg returns message record |i| of |res|. */
static inline simx_msg *sim_result_msg(const sim_result *res, uint64_t i) {
  return &res->msgs[i / SIM_MSG_BLOCK][i % SIM_MSG_BLOCK];
}

/* sim_bench runs the speed benchmark: a k-ary fat tree at 100 Gb/s,
   permutation traffic with SRD for |ms| milliseconds of simulated time.
   Fills |res| (events, hops, wall) and |peak_rss_mb|.  Returns 0 or -1. */
int sim_bench(uint32_t k, double ms, uint64_t seed, sim_result *res, char *err,
              size_t errlen);

#endif /* SIM_RUN_H */
