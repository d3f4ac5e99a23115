/*
 * coll.h: srd-coll, multi-rank collective workloads over the real
 * transports (docs/transports.md, "Multi-rank workloads: srd-coll").
 *
 * N ranks, each one process with one xport (udp, tcp or fabric), run an
 * exchange in which every rank sends its messages to its destinations at
 * once and receives what it expects from its sources:
 *
 *   shuffle      all-to-all, after RapidsMPF's shuffle benchmark: each
 *                rank's input (--bytes-per-rank) is cut into partitions
 *                (--partition), each partition into one piece per output
 *                partition (--outputs, output o lives on rank o mod N);
 *                a piece for another rank is sent, one for itself stays;
 *   incast       ranks 1..N-1 send --bytes-per-rank to rank 0;
 *   permutation  rank i sends --bytes-per-rank to rank (i + k) mod N.
 *
 * Every message is at most --msg-size bytes and starts with a 16-byte
 * header (coll_hdr) that names its source, iteration and index, so that a
 * receive, which matches a message from any peer, is counted for the
 * right source and iteration; --verify checks every other byte against a
 * pattern of (source, index) and that each message arrives exactly once.
 *
 * The files: main.c (options, the run), plan.c (who sends what, the
 * pattern), xchg.c (the exchange over the xport), boot.c (the host-list
 * bootstrap over TCP), boot_mpi.c (the MPI bootstrap), report.c (table,
 * CSV, JSON).  Everything runs on the process's one thread.
 */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tool_hist.h"
#include "tool_opt.h"
#include "xport.h"

/* COLL_MAX_RANKS bounds N (the udp backend's engine has 64 peers). */
#define COLL_MAX_RANKS 64
/* COLL_MAX_ITERS bounds --warmup + --iters (the results carry each). */
#define COLL_MAX_ITERS 256
/* COLL_HDR_LEN is the header every message starts with. */
#define COLL_HDR_LEN 16
/* COLL_HIST_BITS is the latency histogram's precision (0.79%). */
#define COLL_HIST_BITS 7
/* COLL_ADDR_LEN holds "host:port" of a rank's xport. */
#define COLL_ADDR_LEN 96

typedef enum coll_workload {
  W_SHUFFLE = 0,
  W_INCAST = 1,
  W_PERMUTATION = 2
} coll_workload;

extern const char *const coll_workload_names[];

/* coll_opts is the command line. */
typedef struct coll_opts {
  coll_workload workload;
  const char *transport; /* "udp", "tcp", "fabric" */
  const char *provider;  /* fabric */
  xport_mem mem;
  int cuda_device;
  uint32_t paths;
  uint64_t bytes_per_rank;
  uint64_t partition;
  uint64_t msg_size;
  uint32_t outputs;
  uint32_t shift; /* permutation's k */
  uint32_t warmup, iters;
  uint32_t window; /* sends in flight per destination */
  int verify, json, csv, verbose;
  uint64_t idle_timeout_ns;
  uint64_t time_limit_ns;
  uint64_t seed;
  /* Bootstrap: --hosts and --rank (or SLURM_PROCID/SLURM_NTASKS), or
     --mpi; --bootstrap-port is rank 0's TCP port; --bind the address
     this rank binds (and, under MPI, advertises). */
  const char *hosts;
  int rank; /* -1: not given */
  int mpi;
  uint16_t boot_port;
  uint16_t port; /* the xport's base port; 0 picks free ones */
  const char *bind;
} coll_opts;

/* coll_msg is one message a rank sends in each iteration. */
typedef struct coll_msg {
  uint32_t dst;
  uint32_t idx;    /* its index among this rank's messages to dst */
  uint64_t off;    /* where it lies in the send region */
  uint32_t len;    /* bytes, header included */
  uint64_t t_post; /* when it was posted (this iteration) */
} coll_msg;

/* coll_plan is what one rank sends and expects, the same every
   iteration. */
typedef struct coll_plan {
  uint32_t n, rank;
  coll_msg *msgs; /* grouped by destination, in index order */
  size_t n_msgs;
  size_t first[COLL_MAX_RANKS];    /* msgs[first[d]..] go to d */
  uint32_t n_to[COLL_MAX_RANKS];   /* messages to each destination */
  uint32_t n_from[COLL_MAX_RANKS]; /* messages expected from each source */
  uint64_t bytes_from[COLL_MAX_RANKS];
  uint64_t send_bytes;  /* the send region, headers included */
  uint64_t recv_bytes;  /* expected per iteration */
  uint64_t local_bytes; /* shuffle pieces kept on this rank */
  uint32_t recv_msgs;   /* expected per iteration */
} coll_plan;

/* plan_build fills |p| for rank |rank| of |n| from |o|: the messages it
   sends and, computed by the same rules for every other rank, what it
   receives.  Returns 0, or -EINVAL with |why| (|cap| bytes) saying what
   is wrong with the parameters (a piece under the header, a permutation
   onto itself).  plan_free releases the message list. */
int plan_build(coll_plan *p, const coll_opts *o, uint32_t n, uint32_t rank,
               char *why, size_t cap);
void plan_free(coll_plan *p);

/* coll_hdr is a message's first COLL_HDR_LEN bytes (little-endian on the
   wire as on the hosts this runs on). */
typedef struct coll_hdr {
  uint32_t magic; /* COLL_MAGIC_DATA, _HELLO or _CTL */
  uint16_t src;
  uint16_t pad;
  uint32_t iter;
  uint32_t idx;
} coll_hdr;

#define COLL_MAGIC_DATA 0x53524443u /* "SRDC" */
#define COLL_MAGIC_HELLO                                                       \
  0x53524448u /* "SRDH": the first message a rank                              \
                 sends a peer it added */
/* COLL_MAGIC_CTL: a control message; idx is its kind (COLL_CTL_*), iter
   the barrier (DONE, GO) or the rank blamed (ABORT). */
#define COLL_MAGIC_CTL 0x5352444bu /* "SRDK" */
#define COLL_CTL_DONE 0
#define COLL_CTL_GO 1
#define COLL_CTL_ABORT 2

/* pat_fill writes the pattern of (|src|, |idx|) over |len| bytes of |b|
   past the header; pat_check returns the offset of the first byte that
   differs from it, or -1 when all match. */
void pat_fill(uint8_t *b, size_t len, uint32_t src, uint32_t idx);
long pat_check(const uint8_t *b, size_t len, uint32_t src, uint32_t idx);

/* coll_peer is one other rank as the exchange sees it. */
typedef struct coll_rank_addr {
  char addr[COLL_ADDR_LEN]; /* "host:port" of its xport */
} coll_rank_addr;

/* coll_result is what a rank reports to rank 0 (sent as bytes over the
   bootstrap: the same build on every rank). */
typedef struct coll_result {
  int32_t rank;
  int32_t failed;  /* 0: the exchange completed */
  char error[200]; /* the failure, named ("rank 2 (...) vanished") */
  char addr[COLL_ADDR_LEN];
  char describe[200];               /* xport_describe, rank 0's is printed */
  uint32_t iters_done;              /* measured iterations completed */
  uint64_t iter_ns[COLL_MAX_ITERS]; /* each iteration, warm-ups first:
                                       this rank's part */
  uint64_t xch_ns[COLL_MAX_ITERS];  /* rank 0: the whole exchange, from
                                       its GO to the last DONE */
  uint64_t bytes_sent, bytes_recv;  /* per iteration, by the plan */
  uint64_t local_bytes;
  uint64_t msgs_sent, msgs_recv; /* all iterations, counted */
  uint64_t recv_bytes_total;     /* all iterations, counted */
  uint64_t retransmits, errors, bad_in;
  uint64_t rnr_sent, rnr_received;    /* receiver-not-ready, each way */
  uint64_t paths_avoided, cwnd_bytes; /* udp: the engine's, at the end */
  uint64_t verified, corrupt, dups;
  /* The latency histogram (post to send completion, measured
     iterations): its total, min, max, sum, then counts[] follow the
     struct when sent. */
  uint64_t lat_total, lat_min, lat_max;
  double lat_sum;
} coll_result;

/* coll_xchg runs the workload over |x| as rank |rank| of |n|, whose
   xport peers are |addrs| (|addrs[rank]| is its own), and fills |res|
   and |lat| (initialised by the caller).  It adds the peers of higher
   rank and learns those of lower rank from their hello.  Returns 0, or
   -1 with res->error naming the failure (a rank that vanished, the idle
   timeout, the time limit, a corrupt or duplicated message). */
int coll_xchg(const coll_opts *o, xport *x, uint32_t n, uint32_t rank,
              const coll_rank_addr *addrs, coll_result *res, tool_hist *lat);

/* coll_boot is a bootstrap: rank, size, the address table and the
   gathering of results. */
typedef struct coll_boot {
  uint32_t rank, n;
  int mpi;
  /* host list */
  char **hosts;
  int *fds; /* rank 0: a socket per rank (-1 for itself); others: [0] */
} coll_boot;

/* boot_hosts_init: the host-list bootstrap's rank and size, from
   --hosts and --rank or SLURM_PROCID and SLURM_NTASKS; usage errors
   exit 2. */
void boot_hosts_init(coll_boot *b, const coll_opts *o);

/* boot_exchange trades addresses: |mine| is this rank's xport address
   (host:port), |all| receives every rank's.  Returns 0, or -1 with
   |why| set (a rank that never came, a timeout). */
int boot_exchange(coll_boot *b, const coll_opts *o, const char *mine,
                  coll_rank_addr *all, char *why, size_t cap);

/* boot_gather hands |res| and its histogram to rank 0, which stores
   every rank's in |all| and |hists| (n of each, initialised); a rank
   that does not report in time is filled in as failed, naming it.  On
   rank 0 it then sends every rank the verdict; on the others it stores
   it in |verdict| ("" when the run succeeded).  Returns 0 or -1 (the
   bootstrap itself failed). */
int boot_gather(coll_boot *b, const coll_opts *o, const coll_result *res,
                const tool_hist *lat, coll_result *all, tool_hist *hists,
                char *verdict, size_t cap);

/* boot_send_verdict (rank 0) tells every rank the run's outcome. */
void boot_send_verdict(coll_boot *b, const char *verdict);

/* boot_fini closes what the bootstrap holds. */
void boot_fini(coll_boot *b);

/* The MPI bootstrap (boot_mpi.c; without MPI in the build,
   boot_mpi_available returns 0 and the others are never called). */
int boot_mpi_available(void);
void boot_mpi_init(coll_boot *b, int *argc, char ***argv);
int boot_mpi_exchange(coll_boot *b, const char *mine, coll_rank_addr *all);
int boot_mpi_gather(coll_boot *b, const coll_result *res, const tool_hist *lat,
                    coll_result *all, tool_hist *hists);
void boot_mpi_fini(coll_boot *b, int failed);

/* hist_pack / hist_unpack move a histogram's counts in and out of a
   flat array of h->n_buckets counts plus the result's lat_* fields. */
void hist_pack(const tool_hist *h, coll_result *r, uint64_t *counts);
void hist_unpack(tool_hist *h, const coll_result *r, const uint64_t *counts);

/* report_print writes rank 0's output: the table (or --json, --csv) of
   every rank's |all| and the merged latency |hists|. */
void report_print(const coll_opts *o, uint32_t n, const coll_result *all,
                  const tool_hist *hists, FILE *f);

/* xmalloc is malloc that dies when memory runs out. */
void *xmalloc(size_t n);

#endif /* COLL_H */
