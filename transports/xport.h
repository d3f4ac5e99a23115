/*
 * xport.h: one small message API over several transports, so that a tool
 * runs the same traffic over each and puts the results side by side.
 *
 *   xport_open(&x, &cfg)            cfg.backend: "udp" or "tcp"
 *   xport_add_peer(x, addr, &peer)  a remote endpoint (an address vector)
 *   xport_post_send / post_recv     buffers stay the caller's again only
 *   xport_poll_cq                   when their completion is polled
 *   xport_progress(x, timeout)      does the I/O; sleeps up to timeout
 *   xport_close(x)
 *
 * Backends (design.md, transports/):
 *   udp  libsrd over UDP with io_uring: one socket per path, each bound to
 *        its own source port so that an ECMP fabric hashes the paths apart;
 *        GSO bursts, GRO, multishot receive into a provided buffer ring;
 *        an optional seeded impairment layer per path (transports/udp/,
 * netsim/impair/). tcp  kernel TCP, one connection per peer, length-prefixed
 * messages: the baseline (transports/tcp/).
 *   fabric  libfabric RDM endpoints (FI_EP_RDM, FI_MSG), the provider from
 *        cfg.provider or FI_PROVIDER: efa on AWS (real SRD), tcp;ofi_rxm
 *        or udp;ofi_rxd elsewhere; endpoint names are traded out of band
 *        over TCP on cfg.port (transports/fabric/, docs/transports.md).
 * CUDA device memory (xport_config.mem = XPORT_MEM_CUDA, srd-perf -m cuda):
 *        buffers from xport_mem_alloc live on the GPU; every backend
 *        stages them through pinned host buffers with asynchronous copies
 *        on their own streams (device to host, send; receive, host to
 *        device), so that the staging is measured, not hidden
 *        (transports/cuda/, docs/transports.md).
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
#include <stdio.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* XPORT_MAX_PATHS is the most paths (sockets) of the udp backend. */
#define XPORT_MAX_PATHS 64

/* xport_peer names a peer of one xport. */
typedef uint32_t xport_peer;

/* xport_mem is where an xport's message buffers may live: host memory
   only, or also CUDA device memory (ucx_perftest -m cuda). */
typedef enum xport_mem { XPORT_MEM_HOST = 0, XPORT_MEM_CUDA = 1 } xport_mem;

/* xport_impair describes what the udp backend's impairment layer does to
   one path's outgoing datagrams (this kernel has no netem, and studying
   loss should not need root): the impairment model of netsim/impair, the
   one srd-loopback and netsim use.  All zero means a clean path. */
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
/* xport_tap_fn sees each datagram the udp backend exchanges with its
   peers (srd-perf --pcap): |out| 1 as one leaves (after the impairment
   layer: each copy, as corrupted, when it really leaves), 0 as one
   arrives from a peer (each segment of a GRO train, before the engine
   checks it), with its source and destination address and port, at
   |ts_ns| on xport_now()'s clock.  The datagram is |hdr| + |payload|;
   the tap must not keep either, nor call into the xport. */
typedef void (*xport_tap_fn)(void *user, int out, const struct sockaddr *src,
                             const struct sockaddr *dst, const uint8_t *hdr,
                             size_t hdrlen, const uint8_t *payload,
                             size_t paylen, uint64_t ts_ns);

typedef struct xport_config {
  /* backend is "udp", "tcp" or "fabric". */
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
     takes the largest (65000) for the endpoint and, for each peer added
     with xport_add_peer, what the route to it carries unfragmented
     (xport_path_mtu()); the handshake settles both ends on the smaller
     offer. */
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
  /* srd engine knobs (0 or NULL keeps the engine's default).  cc is
     also tcp's: the kernel's congestion control for every connection
     (TCP_CONGESTION: "cubic", "reno", ...), NULL for the system's. */
  const char *cc;
  uint64_t rto_min_ns;          /* default 5 ms over UDP */
  uint64_t cc_target_qdelay_ns; /* default 200 us over UDP */
  uint32_t max_retries;
  /* provider (fabric) is the libfabric provider, e.g. "tcp;ofi_rxm",
     "udp;ofi_rxd" or "efa"; NULL or "" takes FI_PROVIDER from the
     environment, else libfabric's first RDM provider. */
  const char *provider;
  /* peer_timeout_ns (fabric): a peer whose sends see no completion this
     long is dead when it is the xport's only peer: the endpoint is
     reopened to take its sends back from the provider, and they complete
     with -ETIMEDOUT (udp;ofi_rxd never gives up by itself).  0: 5 s;
     UINT64_MAX: never. */
  uint64_t peer_timeout_ns;
  /* mem: XPORT_MEM_CUDA lets buffers live in CUDA device memory: those
     that xport_mem_alloc returned or xport_mem_register marked are
     staged through pinned host buffers (any other buffer is host
     memory).  xport_open then fails with -ENOTSUP (no CUDA in this
     build), -ENOENT (no CUDA runtime library) or -ENODEV (no device),
     saying why to |log|. */
  xport_mem mem;
  /* cuda_device is the CUDA device's ordinal (XPORT_MEM_CUDA). */
  int cuda_device;
  /* stage_bytes bounds the pinned host memory staging holds per
     direction (sends, receives); 0: 256 MiB.  One message always fits,
     however large.  Past it, post_send and post_recv say -EAGAIN. */
  size_t stage_bytes;
  /* log, if not NULL, receives one-line diagnostics (fallbacks, dropped
     peers); user_data is passed back. */
  void (*log)(void *user_data, const char *msg);
  void *user_data;
  /* tap, if not NULL, sees every datagram (udp only: tcp's open refuses
     one with -EOPNOTSUPP, the kernel owning its segments; fabric's
     ignores it, the provider owning its packets); tap_user is passed
     back. */
  xport_tap_fn tap;
  void *tap_user;
} xport_config;

/* xport_config_default fills |cfg|: backend "udp", IPv4, any address,
   port 0, 16 paths, burst 64, mtu 0 (65000, or the peer's if smaller),
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
  /* detail is the backend's own code (srd: SRD_ERR_*; a failed staging
     copy of CUDA memory: XPORT_DETAIL_CUDA - the CUDA error), 0 if
     none. */
  int detail;
  /* peer is the peer the message went to or came from. */
  xport_peer peer;
  /* buf, ctx: as posted. */
  void *buf;
  void *ctx;
  /* len is the message length. */
  size_t len;
} xport_cqe;

/* XPORT_DETAIL_CUDA: a completion's detail at or below it is a CUDA
   error (status -EIO), named by xport_strerror. */
#define XPORT_DETAIL_CUDA (-100000)

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
  /* srd: packets the engine declared lost by reordering time and by
     timeout, and of those the ones later acknowledged after all
     (spurious: reordering or a held ACK, not loss); timeouts fired. */
  uint64_t losses_rack, losses_rto, spurious_losses, rto_fired;
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
  /* ports_heard (udp): how many of that peer's ports (its paths) a valid
     datagram came from: fewer than its paths behind a firewall that
     passes only some. */
  uint32_t ports_heard;
  /* udp, a server: handshake requests from unknown addresses answered
     without keeping state (hs_answered), clients that proved their
     address but found every peer slot held by an established peer
     (hs_full), and the most peers held at once (peers_max). */
  uint64_t hs_answered;
  uint64_t hs_full;
  uint32_t peers_max;
  /* rx_restamped (udp): datagrams whose kernel arrival time was earlier
     than the engine's clock when they reached it, so they were given the
     clock's time, and their wait in the socket counted as path delay. */
  uint64_t rx_restamped;
  /* staged_out, staged_in (XPORT_MEM_CUDA): bytes copied device to host
     before sending and host to device after receiving. */
  uint64_t staged_out, staged_in;
  uint64_t rnr_sent, rnr_received;
  uint64_t drops[16];
} xport_stats;

typedef struct xport xport;

/* xport_ops is what a backend implements (Redis ae's seven aeApi
   functions, as a runtime table).  Each op has the contract of the
   xport_* function of its name below (what it does, who owns the
   buffers, the error codes); the functions only dispatch, except where
   an entry says what they do first.  An op is never called with a NULL
   xport, nor from two threads, nor from inside another op. */
typedef struct xport_ops {
  /* name is the backend's cfg.backend, e.g. "udp". */
  const char *name;
  /* open: xport_open, called once xport_open found the backend and
     checked cfg.mem and cfg.family (AF_INET or AF_INET6).  cfg.mem is
     host memory, except for a backend with mem_alloc, which may get
     XPORT_MEM_CUDA and returns -ENOTSUP when it cannot take device
     memory itself (xport_open then stages it in front of a host-memory
     open).  It stores the new xport, whose head's ops is this table, in
     *px only when it returns 0; on an error nothing is left open. */
  int (*open)(xport **px, const xport_config *cfg);
  /* close: xport_close, never with NULL.  Posted operations end without
     completions; their buffers are the caller's again when it returns. */
  void (*close)(xport *x);
  /* add_peer, remove_peer: xport_add_peer, xport_remove_peer. */
  int (*add_peer)(xport *x, const struct sockaddr *addr, socklen_t len,
                  xport_peer *ppeer);
  int (*remove_peer)(xport *x, xport_peer peer);
  /* post_send, post_recv: xport_post_send, xport_post_recv.  A buffer
     posted with 0 returned is the backend's (read, or written) until its
     completion is polled; with an error returned, it never was. */
  int (*post_send)(xport *x, xport_peer peer, const void *buf, size_t len,
                   void *ctx);
  int (*post_recv)(xport *x, void *buf, size_t cap, void *ctx);
  /* poll_cq: xport_poll_cq.  No I/O. */
  size_t (*poll_cq)(xport *x, xport_cqe *cqes, size_t n);
  /* progress: xport_progress. */
  int (*progress)(xport *x, uint64_t timeout_ns);
  /* get_stats: xport_get_stats, which zeroes |st| first: a backend fills
     the counters it keeps and leaves the others. */
  void (*get_stats)(xport *x, xport_stats *st);
  /* local_addr, peer_addr, describe: xport_local_addr, xport_peer_addr,
     xport_describe. */
  int (*local_addr)(xport *x, struct sockaddr_storage *ss, socklen_t *len);
  int (*peer_addr)(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                   socklen_t *len);
  const char *(*describe)(xport *x);
  /* mem_alloc, mem_free, mem_register, mem_unregister, mem_copy:
     xport_mem_*.  NULL in a backend of host memory only: xport.c then
     allocates host memory, copies with memcpy and refuses to register. */
  void *(*mem_alloc)(xport *x, size_t len);
  void (*mem_free)(xport *x, void *p);
  int (*mem_register)(xport *x, void *buf, size_t len);
  int (*mem_unregister)(xport *x, void *buf);
  int (*mem_copy)(xport *x, void *dst, const void *src, size_t len);
} xport_ops;

/* xport is the head of every backend's object. */
struct xport {
  const xport_ops *ops;
};

/* xport_backend finds a backend by |name|, or returns NULL. */
const xport_ops *xport_backend(const char *name);

/* xport_backend_names lists the backends built in, NULL-terminated. */
const char *const *xport_backend_names(void);

/* xport_backend_missing says, for a tool to print, why backend |name| is
   not in this build (xport_open returned -ENOENT): the package that was
   missing when it was built, or that no backend has that name.  Never
   NULL. */
const char *xport_backend_missing(const char *name);

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

/* xport_local_addr stores the local address (srd: the first port) in
   |ss| and its length in *len.  Returns 0, or a negative errno: what
   getsockname(2) returned, or -ENOTCONN (tcp: neither listening nor
   connected yet). */
int xport_local_addr(xport *x, struct sockaddr_storage *ss, socklen_t *len);

/* xport_peer_addr stores |peer|'s address (srd: its first port) in |ss|
   and its length in *len.  Returns 0 or -EINVAL (no such peer). */
int xport_peer_addr(xport *x, xport_peer peer, struct sockaddr_storage *ss,
                    socklen_t *len);

/* xport_describe returns a one-line summary of the xport's settings and
   the kernel features it uses (valid until the next call or close). */
const char *xport_describe(xport *x);

/* xport_mem_probe says whether memory |mem| can be used here (CUDA: the
   build has it, a runtime library loads and sees device |device|),
   before any xport is opened.  Returns 0, or a negative errno with |why|
   (|len| bytes) saying what is missing: -ENOTSUP (no CUDA in this
   build), -ENOENT (no CUDA runtime), -ENODEV ("no CUDA device ..."),
   -EINVAL. */
int xport_mem_probe(xport_mem mem, int device, char *why, size_t len);

/* xport_mem_alloc returns |len| bytes of the xport's memory (cfg.mem:
   host memory, 64-byte aligned; CUDA: device memory on cfg.cuda_device,
   registered as by xport_mem_register), or NULL when there is none
   left.  Free it with xport_mem_free before xport_close. */
void *xport_mem_alloc(xport *x, size_t len);

/* xport_mem_free frees what xport_mem_alloc returned; NULL is ignored.
   No operation may still hold it.  Device memory still allocated when
   the xport closes is freed by xport_close (host memory is not: free(3)
   it, after xport_close where the transport may still hold it). */
void xport_mem_free(xport *x, void *p);

/* xport_mem_register marks [buf, buf + len), memory the caller allocated
   on the xport's CUDA device (cudaMalloc), as device memory: posted
   buffers that lie inside it are staged.  Regions must not overlap.
   Returns 0, or -ENOTSUP (a host-memory xport), -EEXIST (overlaps a
   region), -ENOMEM. */
int xport_mem_register(xport *x, void *buf, size_t len);

/* xport_mem_unregister forgets the region that starts at |buf|.  No
   operation may still hold it.  Returns 0, -ENOENT or -ENOTSUP. */
int xport_mem_unregister(xport *x, void *buf);

/* xport_mem_copy copies |len| bytes between any two of host and the
   xport's device memory, synchronously (srd-perf fills and checks
   messages with it).  Returns 0, or -EIO (the copy failed: the log says
   why). */
int xport_mem_copy(xport *x, void *dst, const void *src, size_t len);

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

/* xport_logf formats a one-line diagnostic (at most 511 bytes) and hands
   it to |cfg|'s log sink; nothing without one.  For the backends. */
void xport_logf(const xport_config *cfg, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* xport_format_addr writes "a.b.c.d:port" or "[v6]:port" into |buf|. */
const char *xport_format_addr(const struct sockaddr *sa, char *buf, size_t cap);

/* Backends (defined in transports/<backend>/). */
extern const xport_ops xport_udp_ops;
extern const xport_ops xport_tcp_ops;
extern const xport_ops xport_fabric_ops;

/* xport_fabric_providers lists what fi_getinfo offers the fabric backend
   (FI_EP_RDM with FI_MSG and FI_SOURCE, for |family|) from |provider|
   (NULL: every provider; FI_PROVIDER in the environment filters too), one
   block per endpoint as fi_info prints it (provider, fabric, domain,
   endpoint type, the capabilities it has of those used, ordering,
   progress, MTU, max message and inject sizes), to |f| unless NULL.

   Returns how many it found (0: none, e.g. no provider of that name), or
   -ENOENT when the fabric backend is not built in, or another negative
   errno of fi_getinfo. */
int xport_fabric_providers(const char *provider, int family, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* XPORT_H */
