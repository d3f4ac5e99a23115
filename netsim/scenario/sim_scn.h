/*
 * sim_scn.h: scenario files (INI, parsed with libinih) and what they
 * describe: a topology, a workload, faults, the transports to compare and
 * an optional sweep.  docs/scenarios.md is the reference of every key.
 *
 * A scenario is read in two steps.  sim_scn_load reads the file into a
 * list of (section, key, value, line) entries; --set adds entries after
 * it (later entries win); sim_scn_compile turns the list into a sim_scn,
 * checking every value.  A sweep point is the same list with the sweep's
 * entries appended.  Every error names the file (or "--set"), the line,
 * the key and what was expected.
 *
 * Errors: the functions that read or compile a scenario return 0, -1
 * when the scenario is wrong (the message in |err|), or SIM_SCN_NOMEM
 * when memory ran out (|err| then says "out of memory"), so that a
 * caller can tell its user's mistake from its own failure.
 */
#ifndef SIM_SCN_H
#define SIM_SCN_H

#include <stddef.h>
#include <stdint.h>

#include "sim_srd.h"
#include "sim_tcp.h"
#include "sim_tos.h"

#define SCN_MAX_TRANSPORTS 8
#define SCN_MAX_PAIRS 256
#define SCN_MAX_FAULTS 32
#define SCN_MAX_PCAP 16
#define SCN_MAX_LANES 64
#define SCN_MAX_SWEEP_KEYS 4
#define SCN_MAX_SWEEP_POINTS 16
#define SCN_NAME_MAX 48
#define SCN_PATH_MAX 512

/* SIM_SCN_NOMEM: out of memory (see "Errors" above). */
#define SIM_SCN_NOMEM (-2)

/* One raw entry of a scenario. */
typedef struct scn_entry {
  char *section;
  char *key;
  char *value;
  /* src is the file name or "--set"; line is 0 for --set. */
  const char *src;
  int line;
} scn_entry;

/* scn_raw is a scenario as read: its entries in order. */
typedef struct scn_raw {
  scn_entry *e;
  size_t n, cap;
  /* file is the scenario's path; dir its directory (for relative cdf
     files). */
  char file[SCN_PATH_MAX];
  char dir[SCN_PATH_MAX];
} scn_raw;

enum { SCN_TOPO_DUMBBELL, SCN_TOPO_LEAFSPINE, SCN_TOPO_FATTREE };
enum {
  SCN_WL_SINGLE,
  SCN_WL_PAIRS,
  SCN_WL_PERMUTATION,
  SCN_WL_SHUFFLE,
  SCN_WL_INCAST,
  SCN_WL_RANDOM,
  SCN_WL_STREAM
};
enum {
  SCN_FAULT_DOWN,
  SCN_FAULT_UP,
  SCN_FAULT_DEGRADE,
  SCN_FAULT_LOSS,
  SCN_FAULT_BER,
  SCN_FAULT_DUP
};
enum { SCN_LOSS_FABRIC, SCN_LOSS_ALL };
/* SCN_XPORT_TOS is TCP over SRD (sim_tos.h): |tcp| above |srd|. */
enum { SCN_XPORT_SRD, SCN_XPORT_TCP, SCN_XPORT_TOS };

/* A link name as written in [faults]: which cables it means. */
typedef struct scn_linkref {
  /* kind: 0 host H's cable, 1 dumbbell path, 2 leaf-spine cable, 3 every
     cable of a spine, 4 edge-agg cable, 5 agg-core cable, 6 every cable
     of a core, 7 the fabric cable flow |a|'s TCP connection hashes onto
     at its first switch. */
  int kind;
  uint32_t a, b, c, d;
  char text[SCN_NAME_MAX];
} scn_linkref;

typedef struct scn_fault {
  int op;
  scn_linkref link;
  uint64_t at_ps;
  uint64_t rate_bps;
  /* p is the loss probability (SCN_FAULT_LOSS), the bit-error rate
     (SCN_FAULT_BER) or the duplication probability (SCN_FAULT_DUP). */
  double p;
  /* delay_ps is how much later a duplicate's copy follows its original
     (SCN_FAULT_DUP) when delay_set; otherwise the scenario's dup_delay
     applies. */
  uint64_t delay_ps;
  int delay_set;
  int line;
} scn_fault;

typedef struct scn_transport {
  char name[SCN_NAME_MAX];
  int type;
  sim_srd_cfg srd;
  sim_tcp_cfg tcp;
  /* cc_name holds the SRD controller's name (srd.ep.cc points here). */
  char cc_name[SCN_NAME_MAX];
  /* tos_queue is TCP over SRD's device queue (sim_tos_cfg.queue). */
  uint32_t tos_queue;
} scn_transport;

/* sim_scn is a compiled scenario. */
typedef struct sim_scn {
  char name[SCN_NAME_MAX];
  char file[SCN_PATH_MAX];
  uint64_t seed;
  uint64_t duration; /* ps */
  uint64_t warmup;   /* ps */
  uint64_t sample;   /* ps; 0: duration / 200 */
  uint64_t capacity_bps;
  uint32_t pkts_per_host;
  /* [topology] */
  int topo;
  uint32_t k, spines, leaves, hosts_per_leaf, paths, hosts_per_side;
  uint64_t host_rate, fabric_rate;
  uint64_t delay;
  uint64_t queue, nic_queue, ecn;
  double oversub;
  uint64_t lane_rate[SCN_MAX_LANES];
  uint32_t n_lanes;
  uint64_t reconverge;
  /* send_jitter: every host's NIC delays each packet by up to this much
     (netsim_host_set_tx_jitter), ps; 0: none. */
  uint64_t send_jitter;
  /* [workload] */
  int wl;
  uint64_t bytes, message;
  uint32_t window;
  uint32_t src, dst;
  int dst_set;
  uint32_t pairs[SCN_MAX_PAIRS][2];
  uint32_t n_pairs;
  int pairs_leaf; /* pairs = leaves / sides: host i of the first leaf or
                     side to host i of the second */
  uint32_t ranks;
  uint32_t senders, receiver, rounds;
  char cdf[SCN_PATH_MAX];
  double load;
  uint32_t flows;
  uint32_t count;
  uint64_t interval;
  int poisson;
  uint64_t start;
  /* start_spread: flows that start together (at |start|) start instead
     at |start| plus a random time in [0, start_spread], ps; 0: all at
     once. */
  uint64_t start_spread;
  /* rpc_min and rpc_max (bytes; rpc_max 0: no RPC class): the bounded
     flows whose size lies between them, both included, are measured
     apart as RPCs (sim_result's rpc_*). */
  uint64_t rpc_min, rpc_max;
  /* [faults] */
  scn_fault faults[SCN_MAX_FAULTS];
  uint32_t n_faults;
  /* pcap: the cables whose packets a run captures ([scenario] pcap, or
     srd-sim --pcap), read at line pcap_line. */
  scn_linkref pcap[SCN_MAX_PCAP];
  uint32_t n_pcap;
  int pcap_line;
  double loss;
  int loss_scope;
  /* ber is the bit-error rate on every link in ber_scope (SCN_LOSS_*). */
  double ber;
  int ber_scope;
  /* dup is the duplication probability on every link in dup_scope
     (SCN_LOSS_*), each copy dup_delay (ps) after its original. */
  double dup;
  uint64_t dup_delay;
  int dup_scope;
  /* transports */
  scn_transport tr[SCN_MAX_TRANSPORTS];
  uint32_t n_tr;
  /* sweep: |n_sweep_keys| keys, each with |n_sweep_points| values. */
  char sweep_key[SCN_MAX_SWEEP_KEYS][SCN_NAME_MAX * 2];
  char *sweep_val[SCN_MAX_SWEEP_KEYS][SCN_MAX_SWEEP_POINTS];
  uint32_t n_sweep_keys, n_sweep_points;
  int sweep_line;
  /* n_hosts is what the topology makes. */
  uint32_t n_hosts;
} sim_scn;

/* sim_scn_raw_init and sim_scn_raw_fini set up and free |r|. */
void sim_scn_raw_init(scn_raw *r);
void sim_scn_raw_fini(scn_raw *r);

/* sim_scn_load reads scenario file |path| into |r|.  Returns 0, -1 with
   a message in |err| (file, line, what is wrong: an empty |path|, a
   directory, a file that cannot be opened or read, a syntax error, a key
   given twice in its section, naming both lines), or SIM_SCN_NOMEM.  An
   indented line that continues a key's value is joined to it with a
   blank. */
int sim_scn_load(scn_raw *r, const char *path, char *err, size_t errlen);

/* sim_scn_load_string reads scenario text |text| of |len| bytes, named
   |name| in messages, into |r| (the fuzz target's entry).  Returns as
   sim_scn_load. */
int sim_scn_load_string(scn_raw *r, const char *name, const char *text,
                        size_t len, char *err, size_t errlen);

/* sim_scn_set sets "section.key=value" (|src| names where it came from,
   e.g. "--set"): the value replaces every earlier entry of the key in
   |r|, the file's or an earlier sim_scn_set's, a list included (a list
   of faults is not added to).  Returns 0, -1 with a message (not an assignment,
   too long), or SIM_SCN_NOMEM. */
int sim_scn_set(scn_raw *r, const char *assignment, const char *src, int line,
                char *err, size_t errlen);

/* sim_scn_compile checks every entry of |r| and fills |s|; sweep values
   are kept but not applied.  Returns 0, -1 with a message naming the
   file, line, key and what was expected, or SIM_SCN_NOMEM (|s| holds
   nothing then).  Free with sim_scn_fini. */
int sim_scn_compile(const scn_raw *r, sim_scn *s, char *err, size_t errlen);

/* sim_scn_has_ber says whether |s| puts bit errors on any link (the
   reports add their corruption counts only then, so that every other
   scenario's outputs stay as they were). */
int sim_scn_has_ber(const sim_scn *s);

/* sim_scn_has_dup says whether |s| makes any link duplicate packets (the
   reports add their duplicate counts only then). */
int sim_scn_has_dup(const sim_scn *s);

/* sim_scn_valid_name says whether |n| is a name a scenario may give a
   transport or link: 1 to SCN_NAME_MAX - 1 letters, digits, '-' and
   '_'.  The sweep folder's parsers hold names to the same rule. */
int sim_scn_valid_name(const char *n);

/* sim_scn_fini frees what sim_scn_compile allocated in |s|. */
void sim_scn_fini(sim_scn *s);

/* sim_scn_point makes the raw list of sweep point |i| of |s| from |r|
   into |out| (initialised by the caller; free it also after a failure).
   Returns 0, -1 with a message (a sweep value too long for an entry), or
   SIM_SCN_NOMEM. */
int sim_scn_point(const scn_raw *r, const sim_scn *s, uint32_t i, scn_raw *out,
                  char *err, size_t errlen);

/* sim_scn_point_label writes "key=value ..." for sweep point |i|. */
void sim_scn_point_label(const sim_scn *s, uint32_t i, char *buf, size_t len);

/* Value parsers, shared with the tool's flags.  Each returns 0, or -1
   with what was expected in |why|. */
int sim_parse_size(const char *v, uint64_t *out, const char **why);
int sim_parse_rate(const char *v, uint64_t *out, const char **why);
int sim_parse_time(const char *v, uint64_t *out_ps, const char **why);
/* sim_parse_prob: a bare number from 0 to 1 is a fraction ("1" is
   certain), "N%" is N / 100; a bare number above 1 (up to 100) is refused
   with "did you mean N%?" in |why| (a static buffer, valid until the next
   call). */
int sim_parse_prob(const char *v, double *out, const char **why);
int sim_parse_ber(const char *v, double *out, const char **why);
int sim_parse_dup_delay(const char *v, uint64_t *out_ps, const char **why);
int sim_parse_uint(const char *v, uint64_t max, uint64_t *out,
                   const char **why);

/* cdf_pt is one point of a flow-size distribution. */
typedef struct cdf_pt {
  double size;
  double p;
} cdf_pt;

/* sim_cdf_load reads a flow-size CDF file (lines "SIZE_BYTES
   CUMULATIVE_PROBABILITY", '#' comments, never decreasing, ending at 1)
   into |*pts| (|*n| points; the caller frees it).  Returns 0, -1 with a
   message naming the file and line, or SIM_SCN_NOMEM (nothing to free
   after a failure). */
int sim_cdf_load(const char *path, cdf_pt **pts, uint32_t *n, char *err,
                 size_t errlen);

/* sim_fmt_time writes |ps| with a readable unit ("1.5 ms"). */
void sim_fmt_time(uint64_t ps, char *buf, size_t len);

#endif /* SIM_SCN_H */
