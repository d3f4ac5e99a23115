/*
 * perf.h: srd-perf's internal header, the types and functions its files
 * share.  main.c describes the tool; the files are:
 *
 *   main.c    the process: signals, buffers, CPU pinning,
 *             the loopback mode (a server thread and a client), main
 *   opts.c    the command line: parsing, defaults, validation, and the
 *             xport_config the options make
 *   ctl.c     the wire format of the messages between client and server
 *             (docs/transports.md, "The control protocol")
 *   server.c  the server: follows each client's control messages in a
 *             session of its own, counts and checks their data, echoes
 *             for lat
 *   client.c  the client: drives the tests, measures, asks for RESULT
 *   report.c  the output: text table, CSV, JSON
 *
 * Everything not declared here is static to its file.
 */
#ifndef PERF_H
#define PERF_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "srd/srd.h" /* srd_drop_reason, for xport_stats.drops */
#include "tool_json.h"
#include "tool_opt.h"
#include "xport.h"

/* Messages and fatal errors go through tool_opt.h: tool_name() starts
   every line on stderr, tool_die() (exit 1) and tool_usage_error() (exit
   2) end the process.  The loopback server's thread calls them too: they
   only read the tool_info that parse_args set before any thread
   started. */

/* CTL_SIZE is the length of every control message (ctl.c). */
#define CTL_SIZE 256
/* NDROPS is how many of the engine's drop reasons xport_stats and the
   RESULT message carry. */
#define NDROPS (SRD_DROP_REASONS < 16 ? SRD_DROP_REASONS : 16)
/* MIN_SIZE is the smallest message: a data message's magic and index. */
#define MIN_SIZE 8
/* SWEEP_MAX is -a's largest size, and the server's default --max-size. */
#define SWEEP_MAX (8u << 20)

/* The control message types, in the order of a session:
   HELLO -> HELLO_OK, then per size: START -> READY(drains),
   [DRAIN x drains], data..., DONE(count) -> RESULT, and at last BYE ->
   BYE_OK.  ERROR answers anything the server refuses.  A reply's type is
   its request's plus one (client.c names the request from it). */
enum {
  C_HELLO = 1,
  C_HELLO_OK,
  C_START,
  C_READY,
  C_DRAIN,
  C_DONE,
  C_RESULT,
  C_BYE,
  C_BYE_OK,
  C_ERROR
};

/* test_kind is the test: its value travels in START. */
typedef enum test_kind { T_BW = 0, T_LAT = 1, T_RATE = 2 } test_kind;

/* dir_kind is which way a bw or rate test's data flows: the client
   sends (forward), the server does (-R, reverse), or both at once
   (--bidir).  Its value travels in START; a result's is forward or
   reverse, or bidir for the sum of a --bidir run's two. */
typedef enum dir_kind { D_FWD = 0, D_REV = 1, D_BIDIR = 2 } dir_kind;

/* dir_names names each dir_kind, as the output prints it (opts.c). */
extern const char *const dir_names[];

/* test_names names each test_kind, as -T takes it and the output prints
   it (opts.c). */
extern const char *const test_names[];

/* interrupted is set by SIGINT and SIGTERM (main.c); the server and the
   client stop at their next check. */
extern atomic_int interrupted;

/* ------------------------------------------------------------------------ */
/* Options (opts.c)                                                         */

/* opts is the parsed command line.  parse_args fills every field; the
   *_set fields say the user gave the value (its default depends on the
   test or the sweep). */
typedef struct opts {
  int server, loopback;
  const char *host;    /* client: the server */
  const char *bind;    /* local address */
  uint16_t port;       /* server port */
  uint16_t local_port; /* client's first local port */
  const char *transport;
  int transport_set; /* -t given: a server without it serves tcp too */
  test_kind test;
  dir_kind dir; /* -R, --bidir */
  uint64_t size;
  int size_set, sweep;
  uint64_t iters;
  int iters_set;
  double duration;
  uint64_t warmup;
  int warmup_set;
  uint32_t window;
  int window_set;
  uint32_t paths, burst, mtu;
  int busy, busy_set;
  int impair_on;
  xport_impair imp;
  uint64_t imp_mask;       /* paths the impairments apply to */
  uint64_t blackhole_mask; /* paths that drop everything */
  uint64_t seed;
  int family;
  int cpu[2], ncpu;
  double time_limit, idle_timeout;
  int verify, json, csv, once, verbose;
  uint32_t max_clients; /* server: sessions at once (--max-clients) */
  uint32_t streams;     /* client: parallel streams (-P) */
  uint32_t stream_id;   /* a -P stream's number, 1..N (0: not one) */
  int no_gso, no_gro, no_multishot;
  const char *cc;
  const char *provider; /* fabric: --provider, else FI_PROVIDER or NULL */
  uint64_t rto_min_ns;
  uint64_t tq_ns;
  uint64_t max_size;
  const char *pcap; /* --pcap FILE */
  uint32_t pcap_snaplen;
  int pcap_snaplen_set;
  xport_mem mem; /* -m: where messages live */
  int cuda_device, cuda_device_set;
} opts;

/* parse_args makes srd-perf the program tool_opt.h describes
   (tool_init: its name in messages, its --help and --version), then
   fills |o| from the command line, with every default applied.  It does
   not return on bad usage (tool_usage_error: exit 2), on -h, --help or
   --version (stdout, exit 0), or when the transport is not built in
   (tool_die: exit 1).  |argv| is only read; *o points into it. */
void parse_args(opts *o, int argc, char **argv);

/* log_cb is the xport log sink: it prints |msg| on stderr after the
   program's name and |ud| (a "who: " prefix string, or NULL). */
void log_cb(void *ud, const char *msg);

/* make_config fills |cfg| for one end of the run described by |o|:
   |server| says which end, |family| is the address family, |who| the
   log prefix (kept by pointer: it must outlive the xport).  The
   impairments apply to the client, to a -s server, and to both ends in
   --loopback; the log sink is set for the client and a -s server, and
   for the loopback server only with -v. */
void make_config(const opts *o, xport_config *cfg, int server, int family,
                 const char *who);

/* capture_open opens --pcap's file, if any (capture.c); on failure it
   says why and exits 1.  capture_tap is the xport tap (xport_tap_fn)
   that writes each datagram there.  capture_close closes it, says how
   many packets it holds, and returns 0, or 1 when writing failed (said
   on stderr). */
void capture_open(const opts *o);
void capture_tap(void *user, int out, const struct sockaddr *src,
                 const struct sockaddr *dst, const uint8_t *hdr, size_t hdrlen,
                 const uint8_t *payload, size_t paylen, uint64_t ts_ns);
int capture_close(void);

/* open_xport opens the xport make_config describes into *px.  Returns 0,
   or xport_open's negative errno after saying why on stderr. */
int open_xport(const opts *o, xport **px, int server, int family,
               const char *who);

/* ------------------------------------------------------------------------ */
/* Messages (ctl.c)                                                         */

/* ctl is a control message, decoded.  Which fields a type uses is the
   sender's business (server.c, client.c); unused ones are zero. */
typedef struct ctl {
  uint32_t type;  /* C_* */
  uint32_t test;  /* START: the test_kind; HELLO: too, informational */
  uint32_t flags; /* START: CTL_F_* */
  uint32_t proto; /* decoded: the sender's control protocol */
  /* proto_error (encode): an ERROR refusing another protocol, framed as
     HELLO is, so that a version 2 peer reads its text */
  int proto_error;
  uint64_t size;  /* HELLO: the largest size; START: the size */
  uint64_t count; /* START: messages in the phase (0: timed); DONE: sent */
  /* per type (v[6..10] share the bytes of |text|, which only ERROR has):
     START v[0] window, v[1] direction (dir_kind), v[2] the warm-up count,
     v[3] the client's posted receives too small for |size|;
     READY v[0] drains; DONE v[0] messages the client received;
     RESULT v[0..5] counts, v[6] messages the server sent, v[7] ns from
     the warm-up's end to the last message received, v[8] messages
     received in that time */
  uint64_t v[11];
  char text[40]; /* ERROR: why, NUL-terminated */
  /* drops (RESULT): the server engine's drops over the phase, by
     srd_drop_reason; zero in the other messages. */
  uint64_t drops[16];
} ctl;

/* CTL_F_VERIFY (START's flags): --verify. */
#define CTL_F_VERIFY 1u

/* ctl_init reads SRD_PERF_PROTO, a stand-in protocol number for this
   end (the tests' other release); call it before any thread starts.
   ctl_proto returns this end's protocol. */
void ctl_init(void);
uint32_t ctl_proto(void);

/* ctl_encode writes |c| into |b| as a control message of exactly
   CTL_SIZE bytes (|b| must hold that many).  A |text| longer than 39
   bytes is cut. */
void ctl_encode(uint8_t *b, const ctl *c);

/* ctl_decode reads the control message of |len| bytes at |b| into |c|.
   Returns 0; -2 for a control message of another protocol (c->proto
   says which; c->type and, for ERROR, c->text are its own, the rest
   unspecified); or -1 if |b| is not a control message at all (wrong
   length or magic; |c| unspecified). */
int ctl_decode(const uint8_t *b, size_t len, ctl *c);

/* data_fill writes a data message's head (magic and the low 32 bits of
   |index|) into the |len| bytes at |b| (|len| >= MIN_SIZE) and, when
   |pattern|, fills the rest with the pattern of |index| that data_check
   verifies. */
void data_fill(uint8_t *b, size_t len, uint64_t index, int pattern);

/* data_peek reads the index of the data message of |len| bytes at |b|
   into *index without checking its pattern.  Returns 0, or -1 if it is
   not a data message (shorter than MIN_SIZE, or another magic). */
int data_peek(const uint8_t *b, size_t len, uint32_t *index);

/* data_check reads the index as data_peek does and checks every byte
   after the head against its pattern.  Returns 0, -1 if it is not a data
   message (*index untouched), or -2 if the pattern does not match. */
int data_check(const uint8_t *b, size_t len, uint32_t *index);

/* seen_mark marks index |idx| in the bitmap *seen of *bits bits (grown
   as needed; free(3) it), or dies out of memory.  Returns 1 if it was
   marked already (a duplicate), else 0. */
int seen_mark(uint8_t **seen, uint64_t *bits, uint32_t idx);

/* ------------------------------------------------------------------------ */
/* The process (main.c)                                                     */

/* ------------------------------------------------------------------------ */
/* Message buffers where -m puts them (mem.c)                               */

/* msgmem allocates, writes and reads one end's message buffers: host
   memory, or the xport's CUDA device memory.  One per thread (its
   scratch buffer is the thread's). */
typedef struct msgmem {
  xport *x;
  xport_mem mem;
  uint8_t *scratch; /* host copies of device messages */
  size_t cap;
} msgmem;

void msgmem_init(msgmem *m, xport *x, xport_mem mem);
void msgmem_fini(msgmem *m);

/* msg_alloc returns a message buffer of |len| bytes holding a data
   message of index 0 with its pattern (data_fill), or dies. */
uint8_t *msg_alloc(msgmem *m, size_t len);

/* msg_free frees a msg_alloc buffer; |closed|: the xport is closed (its
   device memory went with it). */
void msg_free(msgmem *m, void *p, int closed);

/* msg_fill is data_fill on a message buffer (a host copy and a
   synchronous copy to the device with -m cuda). */
void msg_fill(msgmem *m, uint8_t *b, size_t len, uint64_t index, int pattern);

/* msg_refill writes message |index| before it is sent again: every byte
   with |verify|; without, a host message's head, and nothing on a device
   (its head stays index 0: nobody reads it). */
void msg_refill(msgmem *m, uint8_t *b, size_t len, uint64_t index, int verify);

/* msg_read returns |len| bytes of message buffer |b| readable by the
   host: |b| itself, or a copy (valid until the next msg_* call). */
const uint8_t *msg_read(msgmem *m, const uint8_t *b, size_t len);

/* xalloc returns |n| bytes aligned to 4096 (free(3) them), or dies. */
void *xalloc(size_t n);

/* pin pins the calling thread to CPU |cpu|; a failure is said on stderr
   and otherwise ignored. */
void pin(int cpu);

/* ------------------------------------------------------------------------ */
/* Server (server.c)                                                        */

/* run_server runs the server of -s until --once is done or a signal;
   returns the exit status (0, or 1 when the transport does not open).
   A bad -s ADDR is a usage error (exit 2). */
int run_server(const opts *o);

/* lb_server is the handshake between run_loopback and its server
   thread. */
typedef struct lb_server {
  const opts *o;    /* the run's options (the thread copies them) */
  int family;       /* AF_INET or AF_INET6: the server binds ::1 or
                       127.0.0.1 */
  atomic_int ready; /* set by the thread: 1 listening, -1 failed */
  atomic_int stop;  /* set by run_loopback: end the thread */
  uint16_t port;    /* the port it listens on, once ready is 1 */
} lb_server;

/* lb_server_main is the loopback server's thread (pthread_create's
   |arg| is an lb_server that outlives it): a --once server on a free
   port of the loopback address, quiet unless -v.  It returns NULL when
   its one session is over or |stop| is set, having closed its xport. */
void *lb_server_main(void *arg);

/* ------------------------------------------------------------------------ */
/* Client and report (client.c, report.c)                                   */

/* result is what one size measured in one direction (or, D_BIDIR, the
   sum of both), and what its receiver counted. */
typedef struct result {
  test_kind test;
  dir_kind dir;
  uint64_t size, iters, warmup, window;
  double seconds;
  double mbps, gbps, msg_rate;
  double p50, p99, p999, max, avg;
  uint64_t retransmits, bad_in, errors;
  uint64_t srv_received, srv_dups, srv_corrupt, srv_errors;
  /* the sender's messages sent; the receiver's (forward: the server's,
     reverse: this client's) counts */
  uint64_t sent, rx_received, rx_dups, rx_corrupt, rx_errors;
  uint64_t path_pkts[XPORT_MAX_PATHS];
  uint32_t n_paths;
  double avg_burst;
  uint64_t imp_lost, imp_dup, imp_delayed, imp_qdrops, imp_blackholed;
  uint64_t imp_corrupted, imp_dup_delayed;
  /* the engines' drops over the run, by srd_drop_reason (srd) */
  uint64_t cli_drops[16], srv_drops[16];
  int complete;
  int warm_cut;         /* a timed phase whose warm-up outlasted -D */
  int ctl_failed;       /* the server's RESULT never came */
  uint32_t ports_heard; /* udp: the server's ports anything came from */
  const char *stopped;  /* why it stopped early, or NULL */
} result;

/* run_client runs the tests of |o| against the server at |srv| and
   prints a row per size on stdout; returns the exit status: 0, 1 (the
   peer vanished, was unreachable, answered garbage, or --verify failed)
   or 130 (interrupted). */
int run_client(const opts *o, const struct sockaddr_storage *srv,
               socklen_t srv_len);

/* MAX_ROWS bounds a run's rows: -a's 21 sizes, each up to three (bidir:
   forward, reverse, their sum). */
#define MAX_ROWS 66

/* results is every row a run printed, in order. */
typedef struct results {
  result row[MAX_ROWS];
  int n;
} results;

/* run_client_to is run_client printing to |f| and, unless NULL, storing
   every row it printed in *all (none: all->n is 0). */
int run_client_to(const opts *o, const struct sockaddr_storage *srv,
                  socklen_t srv_len, FILE *f, results *all);

/* run_streams runs -P N: N clients of |o| on threads of their own, each
   its own xport and server session (and with --local-port, the ports
   after the last one's), then prints each stream's output, prefixed
   "[k] ", and their sum: bytes, messages and rates added, the latency
   the worst stream's (with --json one document: "streams", each stream's
   object, and "sum").  Returns the worst exit status. */
int run_streams(const opts *o, const struct sockaddr_storage *srv,
                socklen_t srv_len);

/* report is the state of one run's output: which of its parts are
   printed. */
typedef struct report {
  const opts *o;  /* the options the run uses (as the client adjusted
                     them: its mtu) */
  int first_row;  /* no row printed yet (CSV: the header line is due) */
  int json_first; /* no JSON object printed yet */
  tool_json j;    /* --json: the document, from the first row on */
  /* stream: the CSV "stream" column's value (-P: the stream's number, or
     "sum"); empty: no such column */
  char stream[16];
} report;

/* report_init starts the output of a run with options |o| (kept by
   pointer). */
void report_init(report *rp, const opts *o);

/* report_header prints the text table's header to |f|: the run, |x|'s
   description, the impairments, the column names; nothing for --json
   and --csv.  |peer| names the server. */
void report_header(const report *rp, const char *peer, xport *x, FILE *f);

/* report_row prints |r| to |f| as a table row (and its notes), a CSV line
   (the header line first) or a JSON object (an array's element with -a),
   and flushes |f|. */
void report_row(report *rp, const result *r, FILE *f);

/* report_rows prints the |n| rows one size made: report_row's for one;
   for --bidir's three (forward, reverse, their sum) a row each in the
   table and CSV, and in JSON one object, the sum's, holding "forward"
   and "reverse". */
void report_rows(report *rp, const result *rows, int n, FILE *f);

/* result_add adds |r| into |sum|: counts, bytes and rates; the
   latencies the worse; seconds the longer; complete only if both. */
void result_add(result *sum, const result *r);

/* report_end ends the JSON document report_row started (with -a the
   array's end, then the newline) and flushes it; nothing when no row
   was printed or the output is not JSON.  Returns 0, or
   tool_json_finish's negative errno (-EIO: the output could not be
   written). */
int report_end(report *rp);

/* report_drops prints the nonzero counts of |drops| (NDROPS of them, by
   srd_drop_reason) to |f| as " name n, name n", or " none". */
void report_drops(FILE *f, const uint64_t *drops);

#endif /* PERF_H */
