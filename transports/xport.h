/*
 * xport.h: one small message API over several transports, so that a tool
 * runs the same traffic over each and puts the results side by side.
 *
 *   xport_open(&x, &cfg)            cfg.backend: "srd" or "tcp"
 *   xport_add_peer(x, addr, &peer)  a remote endpoint (an address vector)
 *   xport_post_send / post_recv     buffers stay the caller's again only
 *   xport_poll_cq                   when their completion is polled
 *   xport_progress(x, timeout)      does the I/O; sleeps up to timeout
 *   xport_close(x)
 *
 * Backends (design.md, transports/):
 *   srd  libsrd over UDP with io_uring: one socket per path, each bound to
 *        its own source port so that an ECMP fabric hashes the paths apart;
 *        GSO bursts, GRO, multishot receive into a provided buffer ring;
 *        an optional seeded impairment layer per path (transports/uring/).
 *   tcp  kernel TCP, one connection per peer, length-prefixed messages:
 *        the baseline (transports/tcp/).
 * A libfabric backend ("fabric", FI_EP_RDM) and CUDA device memory
 * (xport_config.mem) are later work: the table below has room for both.
 *
 * Semantics shared by every backend, in the libfabric RDM style: reliable
 * messages; every posted operation ends in exactly one completion; a
 * receive matches the next message from any peer, in posting order;
 * delivery order is the backend's (srd: as messages complete; tcp: per
 * peer, in order).  One xport per thread, no locks (like an srd_ep).
 *
 * Errors are negative errno values (liburing style); a completion's
 * |detail| keeps the backend's own code where it has one.
 */
#ifndef XPORT_H
#define XPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XPORT_MAX_PATHS is the most paths (sockets) of the srd backend. */
#define XPORT_MAX_PATHS 64

/* xport_peer names a peer of one xport. */
typedef uint32_t xport_peer;

/* xport_mem is where message buffers live.  Only host memory today; CUDA
   device memory (staged through pinned host buffers, like ucx_perftest
   -m cuda) is later work. */
typedef enum xport_mem { XPORT_MEM_HOST = 0, XPORT_MEM_CUDA = 1 } xport_mem;

/* xport_impair describes what the srd backend's impairment layer does to
   one path's outgoing datagrams (this kernel has no netem, and studying
   loss should not need root).  All zero means a clean path. */
typedef struct xport_impair {
  double loss;    /* probability a datagram is dropped, 0..1 */
  double dup;     /* probability a datagram is sent twice */
  double reorder; /* probability a datagram is held back reorder_delay_ns */
  uint64_t reorder_delay_ns;
  uint64_t delay_ns;    /* added one-way delay */
  uint64_t jitter_ns;   /* extra delay, uniform in [0, jitter]; FIFO kept */
  uint64_t rate_bps;    /* rate cap, 0 for none */
  uint64_t queue_bytes; /* queue in front of the rate cap; past it, drops */
  int blackhole;        /* drop everything */
  /* dup_delay_ns: a duplicate's copy leaves this much later than the
     original (outside the FIFO), so that it can outlive the receiver's
     timers; 0 sends it with the original. */
  uint64_t dup_delay_ns;
  /* corrupt: the probability that a datagram (each copy of a duplicate
     drawn for apart) leaves with one bit flipped, chosen uniformly over
     all its bits, header and payload.  The layer flips a copy of the
     datagram, never the caller's buffer. */
  double corrupt;
} xport_impair;

/* xport_config configures an xport; xport_config_default() fills it. */
typedef struct xport_config {
  /* backend is "srd" or "tcp". */
  const char *backend;
  /* family is AF_INET or AF_INET6. */
  int family;
  /* bind_addr is the local address (numeric), NULL for any. */
  const char *bind_addr;
  /* port is the local port (srd: the first of n_paths consecutive ports);
     0 picks free ones. */
  uint16_t port;
  /* listen: accept peers that contact us (a server). */
  int listen;
  /* n_paths (srd) is how many sockets, each its own source port, the
     packets are sprayed over, 1..XPORT_MAX_PATHS. */
  uint32_t n_paths;
  /* burst (srd) is the most packets sent back to back on one path as one
     UDP GSO send, 1..64 (1 = per-packet spraying, as the hardware does).
     docs/transports.md explains the trade-off and the default. */
  uint32_t burst;
  /* mtu (srd) is the payload bytes per packet (the engine's mtu); 0
     takes the largest (65000) and lets the handshake settle on the
     peer's if smaller.  xport_path_mtu() gives a route's. */
  uint32_t mtu;
  /* max_msg_size is the largest message sent or received. */
  uint32_t max_msg_size;
  /* max_sends and max_recvs bound posted, not yet polled operations. */
  uint32_t max_sends;
  uint32_t max_recvs;
  /* busy_poll: xport_progress never sleeps (latency mode); otherwise it
     sleeps in the kernel (io_uring, poll) until work or the timeout.  The
     srd backend's busy poll also sends a message inside xport_post_send
     (latency over batching) and reads its base port with recvmmsg(2)
     rather than through the ring (docs/transports.md). */
  int busy_poll;
  /* seed seeds the srd engine and the impairment layer; 0 draws a fresh
     one from getrandom(2).  Two endpoints that talk to each other need
     different seeds: alike, they draw the same incarnation id and each
     drops the other's packets as its own reflected (srd-perf seeds the
     server with 2*seed+1 and the client with 2*seed). */
  uint64_t seed;
  /* Feature switches (srd), for old kernels and to test the fallbacks:
     no_gso sends one datagram per packet, no_gro receives unmerged
     datagrams, no_multishot arms one-shot receives instead of a multishot
     receive into a provided buffer ring. */
  int no_gso;
  int no_gro;
  int no_multishot;
  /* impair_on enables the impairment layer with impair[path]. */
  int impair_on;
  xport_impair impair[XPORT_MAX_PATHS];
  /* srd engine knobs (0 or NULL keeps the engine's default). */
  const char *cc;
  uint64_t rto_min_ns;          /* default 1 ms over UDP */
  uint64_t cc_target_qdelay_ns; /* default 200 us over UDP */
  uint32_t max_retries;
  /* mem is where buffers live (XPORT_MEM_HOST). */
  xport_mem mem;
  /* log, if not NULL, receives one-line diagnostics (fallbacks, dropped
     peers); user_data is passed back. */
  void (*log)(void *user_data, const char *msg);
  void *user_data;
} xport_config;

/* xport_config_default fills |cfg|: backend "srd", IPv4, any address,
   port 0, 16 paths, burst 16, mtu 0 (65000, or the peer's if smaller),
   1 MiB messages, 1024 sends and receives, blocking progress, fresh
   seed. */
void xport_config_default(xport_config *cfg);

/* xport_op says which operation a completion is for. */
typedef enum xport_op { XPORT_OP_SEND = 1, XPORT_OP_RECV = 2 } xport_op;

/* xport_cqe is a completion. */
typedef struct xport_cqe {
  /* op is XPORT_OP_SEND or XPORT_OP_RECV. */
  xport_op op;
  /* status is 0, or a negative errno: ETIMEDOUT (the peer stopped
     answering), EHOSTUNREACH (it never answered), ECONNREFUSED,
     ECONNRESET (it restarted or closed), ENOBUFS (it had no receive
     buffer), EMSGSIZE (a buffer was too small), ECANCELED, EPROTO. */
  int status;
  /* detail is the backend's own code (srd: SRD_ERR_*), 0 if none. */
  int detail;
  /* peer is the peer the message went to or came from. */
  xport_peer peer;
  /* buf, ctx: as posted. */
  void *buf;
  void *ctx;
  /* len is the message length. */
  size_t len;
} xport_cqe;

/* xport_stats counts what an xport did.  Counters only grow. */
typedef struct xport_stats {
  uint64_t msgs_sent; /* send completions, success */
  uint64_t msgs_recv; /* receive completions, success */
  uint64_t msgs_err;  /* completions in error */
  uint64_t pkts_out;  /* datagrams (srd) or segments (tcp, estimated) */
  uint64_t pkts_in;
  uint64_t bytes_out; /* on the wire, headers of the backend included */
  uint64_t bytes_in;
  uint64_t sends;     /* send system calls or io_uring send requests */
  uint64_t gso_sends; /* of which UDP GSO sends of several packets */
  uint64_t retransmits;
  /* bad_in counts received datagrams dropped as malformed, foreign,
     stale or from no known peer (srd: the engine's drops plus the
     driver's); tcp: malformed frames. */
  uint64_t bad_in;
  uint64_t unknown_src;  /* of which from an address that is no peer */
  uint64_t rx_truncated; /* datagrams longer than the receive buffer */
  /* impairment layer (srd); imp_corrupted: datagrams sent with a flipped
     bit; imp_dup_delayed: duplicates whose copy left dup_delay_ns late */
  uint64_t imp_lost, imp_dup, imp_delayed, imp_queue_drops, imp_blackholed;
  uint64_t imp_corrupted, imp_dup_delayed;
  /* n_paths, path_pkts: data packets sent per path, summed over peers. */
  uint32_t n_paths;
  uint64_t path_pkts[XPORT_MAX_PATHS];
  /* path_avoided: paths the srd engine steers around now (any peer). */
  uint64_t path_avoided_mask;
  /* The srd engine's view of the peer it sent most to: smoothed and
     minimum RTT, retransmission timeout, congestion window; the
     engine's drops by reason (srd_drop_reason order). */
  uint64_t srtt_ns, min_rtt_ns, rto_ns, cwnd_bytes;
  uint64_t rnr_sent, rnr_received;
  uint64_t drops[16];
} xport_stats;

typedef struct xport xport;

/* xport_ops is what a backend implements (Redis ae's seven aeApi
   functions, as a runtime table). */
typedef struct xport_ops {
  const char *name;
  int (*open)(xport **px, const xport_config *cfg);
  void (*close)(xport *x);
  int (*add_peer)(xport *x, const struct sockaddr *addr, socklen_t len,
                  xport_peer *ppeer);
  int (*remove_peer)(xport *x, xport_peer peer);
  int (*post_send)(xport *x, xport_peer peer, const void *buf, size_t len,
                   void *ctx);
  int (*post_recv)(xport *x, void *buf, size_t cap, void *ctx);
  size_t (*poll_cq)(xport *x, xport_cqe *cqes, size_t n);
  int (*progress)(xport *x, uint64_t timeout_ns);
  void (*get_stats)(xport *x, xport_stats *st);
  int (*local_addr)(xport *x, struct sockaddr_storage *ss, socklen_t *len);
  int (*peer_addr)(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                   socklen_t *len);
  const char *(*describe)(xport *x);
} xport_ops;

/* xport is the head of every backend's object. */
struct xport {
  const xport_ops *ops;
};

/* xport_backend finds a backend by |name|, or returns NULL. */
const xport_ops *xport_backend(const char *name);

/* xport_backend_names lists the backends built in, NULL-terminated. */
const char *const *xport_backend_names(void);

/* xport_open opens an xport with |cfg| (copied).

   Returns 0, or a negative errno: EINVAL (bad setting), ENOENT (no such
   backend), ENOTSUP (memory type or feature missing), EADDRINUSE, ENOMEM,
   ENOSYS or EPERM (io_uring unavailable), or what socket(2), bind(2) or
   io_uring_queue_init(3) returned.  The log callback says why. */
int xport_open(xport **px, const xport_config *cfg);

/* xport_close closes |x|; posted operations are dropped without
   completions.  |x| may be NULL. */
void xport_close(xport *x);

/* xport_add_peer adds the remote endpoint at |addr| (for srd: its first
   port) and stores its id in *ppeer.  tcp starts connecting.

   Returns 0, or -EINVAL (address of another family), -EAGAIN (too many
   peers), -ENOMEM. */
int xport_add_peer(xport *x, const struct sockaddr *addr, socklen_t len,
                   xport_peer *ppeer);

/* xport_remove_peer forgets |peer|; its posted sends complete with
   -ECANCELED.  Returns 0 or -EINVAL. */
int xport_remove_peer(xport *x, xport_peer peer);

/* xport_post_send posts |len| bytes at |buf| to |peer|.  The transport
   reads |buf| until the send's completion is polled.

   Returns 0, or -EAGAIN (max_sends posted: poll, then retry), -EMSGSIZE,
   -EINVAL (no such peer). */
int xport_post_send(xport *x, xport_peer peer, const void *buf, size_t len,
                    void *ctx);

/* xport_post_recv posts a receive of |cap| bytes at |buf|.  The transport
   writes |buf| until the receive's completion is polled.

   Returns 0, or -EAGAIN (max_recvs posted), -EINVAL. */
int xport_post_recv(xport *x, void *buf, size_t cap, void *ctx);

/* xport_poll_cq moves up to |n| completions into |cqes|; returns how many.
   It does no I/O: call xport_progress. */
size_t xport_poll_cq(xport *x, xport_cqe *cqes, size_t n);

/* xport_progress reads what arrived, runs timers and sends what is due.
   With nothing to do it waits, at most |timeout_ns| (0: never; busy_poll
   xports never wait).  Returns 0, or a negative errno for a failure of
   the xport itself (not of one message). */
int xport_progress(xport *x, uint64_t timeout_ns);

/* xport_get_stats fills |st|. */
void xport_get_stats(xport *x, xport_stats *st);

/* xport_local_addr stores the local address (srd: the first port). */
int xport_local_addr(xport *x, struct sockaddr_storage *ss, socklen_t *len);

/* xport_peer_addr stores |peer|'s address. */
int xport_peer_addr(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                    socklen_t *len);

/* xport_describe returns a one-line summary of the xport's settings and
   the kernel features it uses (valid until the next call or close). */
const char *xport_describe(xport *x);

/* xport_strerror describes completion |cqe|'s error. */
const char *xport_strerror(const xport_cqe *cqe);

/* xport_now returns CLOCK_MONOTONIC in nanoseconds. */
uint64_t xport_now(void);

/* xport_parse_addr resolves numeric or named |host| and |port| for
   |family| (AF_UNSPEC: either) into |ss|.  Returns 0 or -EINVAL. */
int xport_parse_addr(const char *host, uint16_t port, int family,
                     struct sockaddr_storage *ss, socklen_t *len);

/* xport_path_mtu returns the payload bytes per srd packet that fit the
   route to |addr| without fragmentation (the route's MTU less the IP, UDP
   and srd headers, at most 65000), or a negative errno. */
int xport_path_mtu(const struct sockaddr *addr, socklen_t len);

/* xport_format_addr writes "a.b.c.d:port" or "[v6]:port" into |buf|. */
const char *xport_format_addr(const struct sockaddr *sa, char *buf, size_t cap);

/* Backends (defined in transports/<backend>/). */
extern const xport_ops xport_uring_ops;
extern const xport_ops xport_tcp_ops;

#ifdef __cplusplus
}
#endif

#endif /* XPORT_H */
