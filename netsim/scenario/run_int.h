/*
 * run_int.h: what the files of the scenario runner share (internal; the
 * public interface is sim_run.h).
 *
 *   run_workload.c  the flows of a workload, their messages, the timers
 *                   that start and pace them, the transport's reports
 *   run_build.c     the topology, the faults on its links, the names of
 *                   its nodes and links, and the pools sized to the run
 *   run_measure.c   the series sampled while it runs, and what the run
 *                   measured at its end (sim_result)
 *   run.c           one run (sim_run), the benchmark (sim_bench)
 *
 * One run is a run_ctx that sim_run owns from start to end; the other
 * files work on it.  Errors: a function that can fail returns 0 or -1
 * with the message in r->err (NUL-terminated, truncated to r->errlen).
 */
#ifndef RUN_INT_H
#define RUN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim_run.h"

/* run_ctx is one run: a scenario, one of its transports, the simulation
   they run in and what it measures. */
typedef struct run_ctx {
  const sim_scn *s;
  const scn_transport *tr;
  const sim_run_opts *o;
  netsim_sim *sim;
  netsim_topo_info info;
  simx *x;
  sim_result *res;
  netsim_rng rng;
  sim_flow *flows;
  uint32_t n_flows, cap_flows;
  /* Flows in start order, and the next to start. */
  uint32_t *order;
  uint32_t next_start;
  netsim_timer start_tm;
  /* Open-loop posting (stream): the flow and its next message time. */
  netsim_timer stream_tm;
  uint32_t stream_flow;
  /* armed: run_workload_arm initialised the two timers. */
  int armed;
  /* Message records. */
  simx_msg **blocks;
  uint32_t n_blocks, cap_blocks;
  uint64_t n_msgs;
  uint64_t n_posted;
  simx_msg **free_msgs;
  uint32_t n_free, cap_free;
  /* Latency and slowdown samples (ps). */
  uint64_t *lat;
  size_t n_lat, cap_lat;
  /* Incast rounds. */
  uint32_t round, rounds, round_left, senders;
  /* Work left: bounded flows not done. */
  uint32_t bounded_left;
  /* done: every bounded flow completed; failed: run_fail was called;
     interrupted: o->interrupt stopped the run before its duration. */
  int done;
  int failed;
  int interrupted;
  char *err;
  size_t errlen;
  netsim_time first_post, last_read;
  uint64_t total_bytes;
  uint64_t hol_n;
  double hol_sum, hol_max;
  /* The capture (run_capture.c; NULL: none) and its cables' links. */
  struct srd_pcap *pcap;
  uint8_t *pcap_links; /* per link id: 1 if captured */
  uint32_t n_links;
  /* The queue sampler (NULL: none) and the |n_q| links it samples. */
  netsim_sampler *smp;
  uint32_t *qids;
  uint32_t n_q;
  /* Every flow's throughput bins while the run goes (with o->records;
     NULL: none): n_flows x res->n_fbins bytes, res->fbin_ps wide. */
  double *fbins;
} run_ctx;

/* ------------------------------------------------------------------------ */
/* The run (run.c)                                                          */

/* run_resolve_link writes into |ids| (room for |cap|) the ids of the
   cables (one link of each) that link name |l| stands for, |*n| of them
   (docs/scenarios.md, "Naming links").  Returns 0, or -1 when the
   topology has no such link (run_build.c). */
int run_resolve_link(run_ctx *r, const scn_linkref *l, uint32_t *ids,
                     uint32_t cap, uint32_t *n);

/* run_capture_start opens o->pcap (when the scenario names links to
   capture) and taps the simulation: every packet that reaches the end of
   one of those cables, either way, is written as a real capture would
   show it (Ethernet, IPv4, UDP with SRD's header, or TCP's header as a
   stack would send it; payloads only as lengths).  run_capture_stop
   closes the file.  Both return 0, or -1 with run_fail's message
   (run_capture.c). */
int run_capture_start(run_ctx *r);
int run_capture_stop(run_ctx *r);

/* run_fail ends the run with an error: it writes |fmt| into r->err, marks
   the run failed and stops the event loop after the current event (it
   may be called from a callback).  Returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int run_fail(run_ctx *r, const char *fmt, ...);

/* ------------------------------------------------------------------------ */
/* The workload (run_workload.c)                                            */

/* run_workload_gen makes the flows of the scenario's workload in r->flows
   (drawing from r->rng, seeded from the scenario: every transport gets
   the same flows).  Returns 0, or -1: out of memory (r->err may be
   empty: the caller says so), or the CDF file no longer reads. */
int run_workload_gen(run_ctx *r);

/* run_workload_app points |app| at the callbacks through which the
   transport reports to the workload (arrived, readable, sent, progress),
   with |r| as their user pointer. */
void run_workload_app(run_ctx *r, simx_app *app);

/* run_workload_arm orders the flows by start time and arms the timers
   that start them (and post a stream's messages); call it once the
   transport exists.  Returns 0, or -1 when out of memory. */
int run_workload_arm(run_ctx *r);

/* run_workload_fini stops the workload's timers and frees its flows and
   message records (except those handed to r->res by run_measure).  Call
   it after the transport is deleted and before the simulation is. */
void run_workload_fini(run_ctx *r);

/* ------------------------------------------------------------------------ */
/* The network (run_build.c)                                                */

/* run_build_topo builds the scenario's topology in r->sim and fills
   r->info.  Returns 0, or -1 with the message. */
int run_build_topo(run_ctx *r);

/* run_build_faults puts the scenario's faults on the links they name:
   loss, bit errors and duplication everywhere in their scope, then each
   [faults] entry (tcpflowN needs r->flows).  Returns 0, or -1 with the
   message naming the file and line of the fault. */
int run_build_faults(run_ctx *r);

/* run_port_link writes the id of the link out of port |port| of switch
   |sw| to |*id|.  Returns 0, or -1 when there is no such switch, port or
   link. */
int run_port_link(run_ctx *r, uint32_t sw, uint32_t port, uint32_t *id);

/* run_link_name writes link |id|'s name as docs/scenarios.md writes it
   ("leaf0->spine1", "path2:left->right") into |buf| of |len| bytes. */
void run_link_name(run_ctx *r, uint32_t id, char *buf, size_t len);

/* run_dup_headroom is how many packets to add to the pool for links that
   duplicate packets in |s| (0 without duplication). */
uint32_t run_dup_headroom(const sim_scn *s);

/* run_size_srd fills what the scenario leaves 0 in SRD configuration |c|
   (peers, receive depth, sends, message and packet windows, unexpected
   pool) from the workload in r->flows and the topology. */
void run_size_srd(run_ctx *r, sim_srd_cfg *c);

/* ------------------------------------------------------------------------ */
/* Measuring (run_measure.c)                                                */

/* run_measure_init sets up the series measured while the run goes: the
   throughput bins in r->res and, with o->sample_queues, a sampler of
   every switch port's queue.  A series it cannot allocate is left out
   (the run goes on without it). */
void run_measure_init(run_ctx *r);

/* run_measure fills r->res with what the run measured up to now (its
   end, or where it was interrupted): completion times, latencies,
   throughput, fairness, drops, counters, path shares, the busiest
   queues.  With o->records it hands the flows and message records over
   to r->res (sim_result_fini frees them). */
void run_measure(run_ctx *r);

/* run_measure_fini frees the sampler and its list of links; call it while
   the simulation lives. */
void run_measure_fini(run_ctx *r);

#endif /* RUN_INT_H */
