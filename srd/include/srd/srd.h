/*
 * libsrd: a sans-I/O engine with the semantics of SRD, the Scalable
 * Reliable Datagram transport under AWS EFA and ENA Express.
 *
 * The engine never reads a clock, opens a socket, starts a thread, prints or
 * allocates on the per-packet path.  Time comes in as an argument to every
 * call that needs it; datagrams come in through srd_ep_read_pkt() and go out
 * through srd_ep_write_pkt(); srd_ep_get_expiry() says when the engine next
 * needs srd_ep_handle_expiry().  Users post sends and receives and read their
 * completions from a bounded completion queue with srd_ep_poll_cq().  Every
 * posted operation ends in exactly one completion.
 *
 * See docs/programmers-guide.md for the packet loop a driver writes and
 * docs/protocol.md for the wire format and the algorithms.
 */
#ifndef SRD_H
#define SRD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(SRD_STATICLIB)
#  define SRD_EXTERN __attribute__((visibility("default")))
#else
#  define SRD_EXTERN
#endif

#define SRD_VERSION_STR "0.1.0"
/* SRD_PROTO_VERSION is the wire format version carried in every packet. */
#define SRD_PROTO_VERSION 3

/* srd_tstamp is a point in time in nanoseconds on the driver's clock. */
typedef uint64_t srd_tstamp;
/* srd_duration is a span of time in nanoseconds. */
typedef uint64_t srd_duration;
/* srd_ssize is a byte count, or a negative SRD_ERR_* code. */
typedef int64_t srd_ssize;
/* srd_peer_id names a peer of one endpoint (returned by srd_ep_add_peer). */
typedef uint32_t srd_peer_id;

/* SRD_TSTAMP_NONE means "no deadline". */
#define SRD_TSTAMP_NONE UINT64_MAX
#define SRD_NS ((srd_duration)1ULL)
#define SRD_US ((srd_duration)1000ULL)
#define SRD_MS ((srd_duration)1000000ULL)
#define SRD_S ((srd_duration)1000000000ULL)

/* SRD_MAX_PATHS is the most paths (entropy values) a peer's packets are
   sprayed over, as on AWS's SRD ("64 paths at a time"). */
#define SRD_MAX_PATHS 64

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

/* Argument errors returned by API calls. */
#define SRD_ERR_INVALID_ARGUMENT (-201)
/* The caller's output buffer is too small for the next packet. */
#define SRD_ERR_NOBUF (-202)
/* A received packet was malformed or violated the protocol; it was dropped
   and counted.  Not fatal. */
#define SRD_ERR_PROTO (-203)
/* No free send or receive slot: poll the completion queue and retry. */
#define SRD_ERR_AGAIN (-204)
/* The message is longer than the negotiated maximum message size. */
#define SRD_ERR_MSG_TOO_LONG (-205)
/* The peer id does not name a peer of this endpoint. */
#define SRD_ERR_BAD_PEER (-206)
/* The peer answered before but stopped answering: the retry budget of a
   packet of this message ran out (EFA: LOCAL_ERROR_UNRESP_REMOTE). */
#define SRD_ERR_PEER_UNRESPONSIVE (-207)
/* The peer never answered the handshake (EFA: LOCAL_ERROR_UNREACH_REMOTE). */
#define SRD_ERR_PEER_UNREACHABLE (-208)
/* The receiver had no buffer for the message, past the RNR retry budget
   (EFA: REMOTE_RNR). */
#define SRD_ERR_RNR (-209)
/* The peer restarted (a new incarnation) while the message was in flight;
   whether the old incarnation received it is unknown. */
#define SRD_ERR_PEER_RESET (-210)
/* The operation was flushed: peer removed or endpoint flushed. */
#define SRD_ERR_CANCELED (-211)
/* Receive side: the posted buffer was smaller than the message.  No bytes
   were placed; the completion's len is the message length. */
#define SRD_ERR_TRUNCATED (-212)
/* Send side: the receiver's posted buffer was too small for the message
   (EFA: REMOTE_BAD_LENGTH). */
#define SRD_ERR_REMOTE_TRUNCATED (-213)
/* Receive side: the sender gave up on a message after part of it had been
   placed in this buffer. */
#define SRD_ERR_ABORTED (-214)
/* A received packet belongs to another incarnation of this endpoint or of
   the peer (stale, replayed or foreign); it was dropped and counted. */
#define SRD_ERR_STALE (-215)
/* Fatal errors are below SRD_ERR_FATAL. */
#define SRD_ERR_FATAL (-500)
/* Memory allocation failed. */
#define SRD_ERR_NOMEM (-501)

/* srd_strerror returns a static, human-readable description of |err|. */
SRD_EXTERN const char *srd_strerror(int err);

/* srd_err_is_fatal returns nonzero if |err| is a fatal error. */
SRD_EXTERN int srd_err_is_fatal(int err);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* srd_mem is the allocator the engine uses; it is only called from
   srd_ep_new, srd_ep_add_peer, srd_ep_remove_peer and srd_ep_del, never
   while packets are processed. */
typedef struct srd_mem {
  /* user_data is passed to every function below. */
  void *user_data;
  /* malloc allocates |size| bytes, like malloc(3). */
  void *(*malloc)(size_t size, void *user_data);
  /* free releases |ptr|, like free(3); |ptr| may be NULL. */
  void (*free)(void *ptr, void *user_data);
  /* calloc allocates zeroed memory, like calloc(3). */
  void *(*calloc)(size_t nmemb, size_t size, void *user_data);
} srd_mem;

static inline void *srd_mem_default_malloc_(size_t size, void *user_data) {
  (void)user_data;
  return malloc(size);
}
static inline void srd_mem_default_free_(void *ptr, void *user_data) {
  (void)user_data;
  free(ptr);
}
static inline void *srd_mem_default_calloc_(size_t nmemb, size_t size,
                                            void *user_data) {
  (void)user_data;
  return calloc(nmemb, size);
}

/* srd_mem_default returns an allocator backed by the C library.  It is
   defined in this header, so that libsrd itself links no allocator. */
static inline const srd_mem *srd_mem_default(void) {
  static const srd_mem mem = {NULL, srd_mem_default_malloc_,
                              srd_mem_default_free_, srd_mem_default_calloc_};
  return &mem;
}

/* ------------------------------------------------------------------------ */
/* Logging and packet taps (the only callbacks)                             */

/* srd_log_event names what happened in a log record. */
typedef enum srd_log_event {
  SRD_LOG_PEER_STATE, /* a: old state, b: new state */
  SRD_LOG_HANDSHAKE,  /* a: packet type, b: peer's conn id */
  SRD_LOG_DROP,       /* a: srd_drop_reason, b: packet type */
  SRD_LOG_LOSS,       /* a: packet seq, b: 0 reorder (RACK), 1 timeout */
  SRD_LOG_SPURIOUS,   /* a: packet seq declared lost but acknowledged */
  SRD_LOG_RTO,        /* a: backoff exponent, b: rto in ns */
  SRD_LOG_PATH_AVOID, /* a: until (ns), b: 0 loss, 1 delay, 2 timeout;
                         b 3: reverse direction dead, the path's weight
                         cut to the floor, not avoided (a: 0) */
  SRD_LOG_PATH_OK,    /* a: srtt of the path */
  SRD_LOG_CC,         /* a: cwnd in bytes, b: 0 increase, 1 decrease,
                         2 connection-wide decrease, 3 loss, 4 timeout */
  SRD_LOG_RNR_SENT,   /* a: message id */
  SRD_LOG_RNR_RECV,   /* a: message id, b: backoff in ns */
  SRD_LOG_MSG_FAILED, /* a: message id, b: -error */
  SRD_LOG_PEER_RESET  /* a: old conn id, b: new conn id */
} srd_log_event;

/* srd_log_record is one structured log record.  The engine formats no
   text; srd_log_event_name() names the event. */
typedef struct srd_log_record {
  /* ts is the time of the event. */
  srd_tstamp ts;
  /* event says what happened. */
  srd_log_event event;
  /* peer is the peer concerned, or UINT32_MAX. */
  srd_peer_id peer;
  /* path is the path concerned, or -1. */
  int32_t path;
  /* a and b are event-specific values (see srd_log_event). */
  uint64_t a, b;
} srd_log_record;

/* srd_log_event_name returns the name of |ev|, e.g. "loss". */
SRD_EXTERN const char *srd_log_event_name(srd_log_event ev);

/* srd_path names where a datagram goes to or comes from. */
typedef struct srd_path {
  /* peer is the remote endpoint. */
  srd_peer_id peer;
  /* path is the entropy index, 0..n_paths-1.  A driver maps it to what a
     fabric hashes: a UDP source port, an ECMP hash input.  On input it is
     informational; the engine reads the sender's path from the packet. */
  uint16_t path;
} srd_path;

/* srd_pkt_dir says which way a tapped packet went. */
typedef enum srd_pkt_dir { SRD_PKT_IN, SRD_PKT_OUT } srd_pkt_dir;

/* ------------------------------------------------------------------------ */
/* Settings                                                                 */

/* srd_settings configures an endpoint; srd_settings_default() fills the
   defaults, which docs/protocol.md justifies. */
typedef struct srd_settings {
  /* seed seeds the endpoint's random generator (incarnation id, handshake
     nonces, path order).  A driver should pass a fresh random value, so
     that a restarted process gets a new incarnation; tools pass the user's
     --seed for reproducible runs. */
  uint64_t seed;
  /* mtu is the most payload bytes per data packet (default 8192). */
  uint32_t mtu;
  /* max_msg_size is the largest message this endpoint sends or receives
     (default 1 MiB). */
  uint32_t max_msg_size;
  /* max_peers is the most peers at once (default 64). */
  uint32_t max_peers;
  /* max_sends is the most posted sends not yet polled (default 1024). */
  uint32_t max_sends;
  /* max_recvs is the most posted receives not yet polled (default 1024). */
  uint32_t max_recvs;
  /* unexp_msgs bounds messages that arrive before a receive is posted
     (default 64); past it (or past unexp_bytes) the receiver answers
     "receiver not ready". 0 disables the queue. */
  uint32_t unexp_msgs;
  /* unexp_bytes bounds the bytes held by such messages (default 4 MiB). */
  uint32_t unexp_bytes;
  /* msg_window is the most messages in flight per peer and direction, a
     power of two (default 1024).  The smaller of both sides' is used. */
  uint32_t msg_window;
  /* pkt_window is the most data packets in flight per peer, a power of
     two from 16 to 32768 (default 512). */
  uint32_t pkt_window;
  /* rto_min is the floor of the retransmission timeout (default 100 us). */
  srd_duration rto_min;
  /* rto_max caps the backed-off retransmission timeout (default 20 ms). */
  srd_duration rto_max;
  /* rto_initial is the timeout before any RTT sample (default 1 ms). */
  srd_duration rto_initial;
  /* max_retries is how many times one packet is retransmitted before its
     message fails with SRD_ERR_PEER_UNRESPONSIVE, and how many handshake
     attempts are made before SRD_ERR_PEER_UNREACHABLE (default 16). */
  uint32_t max_retries;
  /* rnr_retries is how many RNR backoff epochs in a row the peer may
     refuse without taking any data before a refused message fails with
     SRD_ERR_RNR (default 32); UINT32_MAX retries forever (EFA's rnr_retry
     7).  A receiver that takes some messages is never past its budget. */
  uint32_t rnr_retries;
  /* rnr_backoff_min and rnr_backoff_max bound the random exponential
     backoff after an RNR (defaults 10 us and 10 ms). */
  srd_duration rnr_backoff_min;
  srd_duration rnr_backoff_max;
  /* ack_freq: acknowledge at least every ack_freq data packets
     (default 4). */
  uint32_t ack_freq;
  /* ack_delay is the longest an acknowledgement waits (default 5 us). */
  srd_duration ack_delay;
  /* cc names the congestion controller (default "swift"); see
     srd_cc_names(). */
  const char *cc;
  /* cc_target_qdelay is the queueing delay over the base RTT that the
     delay-based controller aims for when the target is fixed
     (cc_target_rtt_pct and cc_target_hops both 0), and the most the
     path-derived target may be otherwise (default 25 us). */
  srd_duration cc_target_qdelay;
  /* cc_target_rtt_pct makes the target follow the path, as Swift scales
     its target with the path: target = clamp(base_rtt * pct / 100 +
     cc_target_hops * cc_target_hop_qdelay, cc_target_min,
     cc_target_qdelay), where base_rtt is the least RTT the engine has
     measured to the peer (default 0; docs/protocol.md).  0 with
     cc_target_hops 0 (the defaults) selects the fixed
     cc_target_qdelay. */
  uint32_t cc_target_rtt_pct;
  /* cc_target_hops is the number of switch hops to the peer, if the
     driver knows it (default 0: unknown, the base RTT's share stands for
     it); each adds cc_target_hop_qdelay (default 1 us), Swift's per-hop
     term. */
  uint32_t cc_target_hops;
  srd_duration cc_target_hop_qdelay;
  /* cc_target_min is the least path-derived target (default 2 us): a few
     packets' worth of queue that sprayed arrivals build by chance.  If
     above cc_target_qdelay, cc_target_qdelay wins. */
  srd_duration cc_target_min;
  /* cc_fs_max_window and cc_fs_range_pct are Swift's flow-based scaling:
     a flow whose window is small (one of many sharing a bottleneck) aims
     for a longer delay, so that a flow whose base RTT was measured under
     the others' standing queue, and whose every sample is then above its
     own target, is not held at the floor while they grow.  The target
     gains cc_fs_range_pct percent of the delay target times
     (1/sqrt(w) - 1/sqrt(max)) / (1/sqrt(0.1) - 1/sqrt(max)), w the window
     in packets, clamped to [0.1, max = cc_fs_max_window]: the whole range
     at a tenth of a packet, nothing from cc_fs_max_window packets up
     (defaults 16 packets and 400%; docs/protocol.md).  cc_fs_max_window 0
     or cc_fs_range_pct 0 turns it off. */
  uint32_t cc_fs_max_window;
  uint32_t cc_fs_range_pct;
  /* cc_init_window is the initial congestion window in bytes
     (default 64 KiB). */
  uint32_t cc_init_window;
  /* cc_fixed_window is the window of the "fixed" controller in bytes
     (default 256 KiB). */
  uint32_t cc_fixed_window;
  /* payload_crc: nonzero (the default) puts a CRC32C of each data
     packet's payload in its header and checks the ones that come with
     one, so that a corrupted payload is dropped, never delivered.  0
     neither computes nor checks it (for benchmarks of the bare engine);
     the header's own CRC32C is always there.  docs/protocol.md,
     "Integrity", has its cost. */
  int payload_crc;
  /* path_steering: nonzero steers packets away from paths whose delay
     rises above the others' or that lose packets (default 1).  0 gives
     blind round-robin spraying. */
  int path_steering;
  /* path_burst_bytes: data packets go on one path in runs of up to this
     many bytes (headers counted; at least one packet) before the next
     path is picked, up to 1 MiB.  A run is also capped at four paths'
     shares of the congestion window (4 * cwnd / paths), so that where
     the window is tight for the paths (a shallow fabric) every packet
     picks again, and runs go only on paths that have been acknowledged
     and have not lost their last packets (srd_pathset_runs_ok).
     Default 0: every packet picks its path, as SRD sprays.
     A driver whose sends cost per datagram, not per byte, sets its
     batch: the udp transport one UDP GSO send (64 KB), so that a send
     round leaves in full sends, one per socket, not a packet or two on
     each path (docs/transports.md, "The GSO burst"). */
  uint32_t path_burst_bytes;
  /* tx_regroups: nonzero says the driver does not send the packets it
     writes with one |now| in the order written, but gathered per path
     (one UDP GSO send per path, as the udp transport does): a packet
     written after another on another path may then leave before it.
     Loss detection then orders packets of the same time by number only
     within a path; across paths only an earlier time makes a packet
     older.  Default 0: packets leave in the order written (a NIC's FIFO,
     the simulator). */
  int tx_regroups;
  /* log, if not NULL, receives structured log records.  It must not call
     srd_ep_* functions. */
  void (*log)(void *user_data, const srd_log_record *rec);
  /* pkt_tap, if not NULL, sees every datagram read or written (for pcap
     writers), whole: header and payload in one piece, also for
     srd_ep_write_pktv and srd_ep_read_pktv (the engine assembles a copy;
     a payload given by length only is tapped as zeros).  It must not call
     srd_ep_* functions. */
  void (*pkt_tap)(void *user_data, srd_pkt_dir dir, const srd_path *path,
                  const uint8_t *pkt, size_t len, srd_tstamp ts);
  /* user_data is passed to log and pkt_tap. */
  void *user_data;
  /* hs_cookie_period is the time bucket of the stateless handshake's
     cookies (srd_ep_answer_hs): a cookie is accepted in the bucket it was
     made in and the next, so it lives from one to two periods (default
     2 s, far longer than a handshake's retries take). */
  srd_duration hs_cookie_period;
} srd_settings;

/* srd_settings_default fills |settings| with the defaults. */
SRD_EXTERN void srd_settings_default(srd_settings *settings);

/* srd_peer_settings configures one peer. */
typedef struct srd_peer_settings {
  /* n_paths is how many paths (entropy values) this endpoint sprays its
     packets to the peer over, 1..SRD_MAX_PATHS.  1 pins the peer to one
     ECMP path, like a TCP connection. */
  uint32_t n_paths;
  /* ordered: nonzero delivers this peer's messages in the order they were
     sent (a reorder layer above the unordered core). */
  int ordered;
  /* mtu is the payload bytes per packet toward this peer, as the route to
     it allows (256 or more), or 0 for the endpoint's settings.mtu; a value
     above settings.mtu is settings.mtu.  The handshake offers it, and the
     session's packets carry the smaller of both ends' offers, so one end
     that knows its route is enough. */
  uint32_t mtu;
} srd_peer_settings;

/* srd_peer_settings_default fills |ps| with 64 paths, unordered, the
   endpoint's mtu. */
SRD_EXTERN void srd_peer_settings_default(srd_peer_settings *ps);

/* ------------------------------------------------------------------------ */
/* Endpoint                                                                 */

typedef struct srd_ep srd_ep;

/* srd_ep_new creates an endpoint with |settings| (copied) and allocator
   |mem| (kept; it must outlive the endpoint).  Every pool is sized here.
   On success *pep holds the endpoint.

   Returns 0, or one of:
   SRD_ERR_INVALID_ARGUMENT  a setting is out of range or cc is unknown
   SRD_ERR_NOMEM             allocation failed */
SRD_EXTERN int srd_ep_new(srd_ep **pep, const srd_settings *settings,
                          const srd_mem *mem);

/* srd_ep_del frees |ep| and everything it holds.  Operations still posted
   produce no completions: call srd_ep_flush() and drain the completion
   queue first if the buffers matter.  |ep| may be NULL. */
SRD_EXTERN void srd_ep_del(srd_ep *ep);

/* srd_ep_conn_id returns this endpoint's incarnation id, a random nonzero
   value drawn from the seed.  Each peer's session gets its own id, drawn
   at srd_ep_add_peer (srd_peer_stats.local_conn_id), so that a peer
   removed and added again starts a session the remote cannot mistake for
   the old one; packets carry the session's ids. */
SRD_EXTERN uint32_t srd_ep_conn_id(const srd_ep *ep);

/* srd_ep_add_peer adds a peer (like inserting an address into an address
   vector) and stores its id in *ppeer.  The driver maps peer ids to
   addresses.  No packet is sent until the first send to the peer or the
   first packet from it.

   Returns 0, or one of:
   SRD_ERR_INVALID_ARGUMENT  bad n_paths, or an mtu below 256
   SRD_ERR_AGAIN             max_peers peers exist
   SRD_ERR_NOMEM             allocation failed */
SRD_EXTERN int srd_ep_add_peer(srd_ep *ep, const srd_peer_settings *ps,
                               srd_peer_id *ppeer);

/* srd_ep_remove_peer removes |peer| (like destroying an address handle).
   Its posted sends and the receives holding its partial messages complete
   with SRD_ERR_CANCELED; its partial messages are discarded.  Messages
   from it that arrived whole and wait for a receive buffer were
   acknowledged (their sender completed them), so they stay and are
   delivered later with peer UINT32_MAX.  Its id may be reused by a later
   srd_ep_add_peer, which starts a new session: the remote sees it as a
   restart of this side (SRD_ERR_PEER_RESET for what it had in flight).

   Returns 0, or SRD_ERR_BAD_PEER. */
SRD_EXTERN int srd_ep_remove_peer(srd_ep *ep, srd_peer_id peer, srd_tstamp now);

/* srd_ep_flush completes every posted send and receive with
   SRD_ERR_CANCELED and discards messages waiting for a receive buffer.
   The endpoint stays usable. */
SRD_EXTERN void srd_ep_flush(srd_ep *ep, srd_tstamp now);

/* srd_ep_post_send posts a message of |len| bytes at |buf| to |peer|.  The
   engine reads |buf| until the send's completion is polled; it never
   writes it.  |user_ctx| comes back in the completion.  The message is
   split into packets of at most the negotiated MTU and sprayed over the
   peer's paths.

   Returns 0, or one of:
   SRD_ERR_INVALID_ARGUMENT  buf is NULL with len > 0
   SRD_ERR_BAD_PEER          no such peer
   SRD_ERR_MSG_TOO_LONG      len > max_msg_size
   SRD_ERR_AGAIN             max_sends sends are posted and not polled */
SRD_EXTERN int srd_ep_post_send(srd_ep *ep, srd_peer_id peer, const void *buf,
                                size_t len, void *user_ctx, srd_tstamp now);

/* srd_ep_post_recv posts a receive buffer of |cap| bytes.  Receives match
   arriving messages from any peer in posting order.  The engine writes
   |buf| until the receive's completion is polled.

   Returns 0, or one of:
   SRD_ERR_INVALID_ARGUMENT  buf is NULL with cap > 0
   SRD_ERR_AGAIN             max_recvs receives are posted and not polled */
SRD_EXTERN int srd_ep_post_recv(srd_ep *ep, void *buf, size_t cap,
                                void *user_ctx, srd_tstamp now);

/* srd_op says which operation a completion is for. */
typedef enum srd_op { SRD_OP_SEND = 1, SRD_OP_RECV = 2 } srd_op;

/* SRD_CQE_F_STARTED (sends): the message got its id and packets of it
   left, so even a failed send may have been delivered (at most once).
   Without it a failed send was never seen by the peer. */
#define SRD_CQE_F_STARTED 0x1u

/* srd_cqe is a completion. */
typedef struct srd_cqe {
  /* op is SRD_OP_SEND or SRD_OP_RECV. */
  srd_op op;
  /* status is 0 for success, or a negative SRD_ERR_* naming the cause. */
  int status;
  /* peer is the peer the message went to or came from. */
  srd_peer_id peer;
  /* msg_id is the message's per-peer sequence number; for a send, valid
     only with SRD_CQE_F_STARTED. */
  uint32_t msg_id;
  /* flags: SRD_CQE_F_* */
  uint32_t flags;
  /* buf is the buffer given when the operation was posted. */
  void *buf;
  /* len is the message length. */
  size_t len;
  /* user_ctx is the value given when the operation was posted. */
  void *user_ctx;
  /* ts is when the operation completed. */
  srd_tstamp ts;
} srd_cqe;

/* srd_ep_poll_cq moves up to |n| completions into |cqes| and returns how
   many.  Polling a completion hands its buffer back to the caller and
   frees its slot.  The queue holds max_sends + max_recvs entries, so it
   never overflows. */
SRD_EXTERN size_t srd_ep_poll_cq(srd_ep *ep, srd_cqe *cqes, size_t n);

/* srd_ep_read_pkt processes one datagram |pkt| of |len| bytes that came
   from |path->peer|.  The engine does not keep |pkt|.  A packet that fails
   a check is dropped and counted in srd_ep_stats.

   Returns 0, or one of (none is fatal; the packet was dropped):
   SRD_ERR_INVALID_ARGUMENT  bad peer id or NULL pointers
   SRD_ERR_PROTO             malformed or protocol-violating packet
   SRD_ERR_STALE             packet of another incarnation */
SRD_EXTERN int srd_ep_read_pkt(srd_ep *ep, const srd_path *path,
                               const uint8_t *pkt, size_t len, srd_tstamp now);

/* srd_ep_read_pktv is srd_ep_read_pkt for a datagram in two pieces: |hdr|
   holds at least the whole packet header and |payload| the rest (a driver
   whose packet header and payload lie apart, as the engine benchmark's).
   A simulator that models sizes but not contents may pass a NULL
   |payload| with |payloadlen| > 0: the engine handles the packet as if
   those bytes were there, without copying them, and the bytes they would
   fill in the receive buffer are left unspecified.  Returns as
   srd_ep_read_pkt. */
SRD_EXTERN int srd_ep_read_pktv(srd_ep *ep, const srd_path *path,
                                const uint8_t *hdr, size_t hdrlen,
                                const uint8_t *payload, size_t payloadlen,
                                srd_tstamp now);

/* srd_ep_write_pkt writes the next datagram that is due into |buf| (|cap|
   bytes; srd_ep_max_pkt_size() is always enough) and stores where it goes
   in *path.  Call it until it returns 0.

   Returns the datagram's length, 0 if nothing is due now, or one of:
   SRD_ERR_NOBUF             cap is smaller than the next datagram
   SRD_ERR_INVALID_ARGUMENT  NULL pointers */
SRD_EXTERN srd_ssize srd_ep_write_pkt(srd_ep *ep, srd_path *path, uint8_t *buf,
                                      size_t cap, srd_tstamp now);

/* srd_iovec is a span of memory. */
typedef struct srd_iovec {
  const void *base;
  size_t len;
} srd_iovec;

/* srd_ep_write_pktv is srd_ep_write_pkt without the payload copy: it
   writes the packet header into |hdr| (|cap| bytes: SRD_PKT_MAX_CTL never
   gets SRD_ERR_NOBUF; see SRD_PKT_MAX_HDR) and points |payload| into the
   posted send buffer.  The
   datagram is the header followed by the payload.  The driver must be done
   with |payload| (e.g. its sendmsg completed) before it next polls the
   completion queue, since a completed send hands its buffer back.

   Returns the header length, 0, SRD_ERR_NOBUF or SRD_ERR_INVALID_ARGUMENT
   as srd_ep_write_pkt. */
SRD_EXTERN srd_ssize srd_ep_write_pktv(srd_ep *ep, srd_path *path, uint8_t *hdr,
                                       size_t cap, srd_iovec *payload,
                                       srd_tstamp now);

/* SRD_PKT_MAX_HDR bounds the header of any packet that carries payload,
   an acknowledgement riding on it included.  With a |hdr| smaller than
   this (at least 76 bytes), acknowledgements do not ride on data. */
#define SRD_PKT_MAX_HDR 184
/* SRD_PKT_MAX_CTL bounds every packet without payload: a standalone
   acknowledgement with all its ranges, echoes and notices is the largest.
   A |hdr| smaller than this gets SRD_ERR_NOBUF whenever a standalone
   acknowledgement is due, however short it would be. */
#define SRD_PKT_MAX_CTL 576

/* srd_ep_max_pkt_size returns the largest datagram the endpoint writes. */
SRD_EXTERN size_t srd_ep_max_pkt_size(const srd_ep *ep);

/* srd_ep_get_expiry returns when srd_ep_handle_expiry() must next be
   called, or SRD_TSTAMP_NONE. */
SRD_EXTERN srd_tstamp srd_ep_get_expiry(srd_ep *ep);

/* srd_ep_handle_expiry runs the timers due at |now| (acknowledgement
   delay, loss detection, retransmission timeout, pacing, RNR backoff,
   handshake retries).  Call srd_ep_write_pkt() afterwards. */
SRD_EXTERN void srd_ep_handle_expiry(srd_ep *ep, srd_tstamp now);

/* ------------------------------------------------------------------------ */
/* Stateless handshake (for servers)                                        */

/* A server that adds a peer for every handshake request from an unknown
   address can have its peer table filled by a flood of forged requests.
   These calls answer such requests without any per-peer state, as TCP's
   SYN cookies do (docs/protocol.md, "Stateless responder"): the answer's
   cookie is a SipHash-2-4 MAC, under a secret key of the endpoint, over
   the requester's address (|addr|: whatever bytes the driver uses to
   name it, at most SRD_HS_ADDR_MAX; the same bytes must come with the
   echo), its incarnation id, its request's parameters, the incarnation id
   offered to it and a time bucket (hs_cookie_period).  A peer is created
   only when a packet from that address echoes a valid cookie. */

/* SRD_HS_ADDR_MAX is the longest address the stateless calls take. */
#define SRD_HS_ADDR_MAX 64
/* SRD_HS_ANSWER_LEN is the length of every answer srd_ep_answer_hs
   writes (an HS_RESP), and so the least length of a request it answers. */
#define SRD_HS_ANSWER_LEN 52

/* srd_ep_answer_hs answers the HS_REQ |pkt| (|len| bytes, contiguous)
   from the unknown address |addr| (|addrlen| bytes) with an HS_RESP
   written into |out| (|cap| bytes; SRD_PKT_HS_RESP_LEN is enough), to be
   sent back to that address on path *out_path (if not NULL): the path the
   request came on, modulo ps->n_paths.  |ps| is the peer settings that
   srd_ep_accept_cookie will be given (its mtu is offered).  No peer is
   created and nothing is kept.  The answer is never longer than the
   request (a request shorter than the answer is refused), so a forged
   source address gains no amplification.  The engine never sends an
   HS_RESP again: the requester retries its HS_REQ.  Neither the log's
   handshake records nor pkt_tap see these packets; drops are counted.

   Returns the answer's length, or one of:
   SRD_ERR_INVALID_ARGUMENT  NULL pointers, |addrlen| > SRD_HS_ADDR_MAX,
                             bad ps->n_paths or ps->mtu
   SRD_ERR_PROTO             not an intact HS_REQ, or shorter than the
                             answer (dropped and counted)
   SRD_ERR_STALE             it carries one of this endpoint's own
                             incarnation ids: our own request reflected
   SRD_ERR_NOBUF             |cap| is too small */
SRD_EXTERN srd_ssize srd_ep_answer_hs(srd_ep *ep, const srd_peer_settings *ps,
                                      const void *addr, size_t addrlen,
                                      const uint8_t *pkt, size_t len,
                                      uint8_t *out, size_t cap,
                                      uint32_t *out_path, srd_tstamp now);

/* srd_ep_accept_cookie takes the datagram |pkt| (|len| bytes,
   contiguous) from the unknown address |addr|, an HS_CONFIRM or a DATA
   carrying the handshake echo, and if it echoes a cookie that
   srd_ep_answer_hs made for that address in this or the previous time
   bucket (under the current key or the one srd_ep_set_hs_secret
   replaced), adds a peer with settings |ps| (as srd_ep_add_peer) whose
   session with the sender is established, and stores its id in *ppeer.
   The driver then maps the address to the peer and passes the same
   datagram to srd_ep_read_pkt for it, as any other: a DATA's payload is
   taken in then (the first data is not lost), an HS_CONFIRM consumed.
   An echo is accepted once: a replay after its peer exists, or after the
   peer was removed (the last SRD_HS_SPENT sessions opened so are
   remembered), creates nothing.

   Returns 0, or one of (on error no peer was created):
   SRD_ERR_INVALID_ARGUMENT  NULL pointers, |addrlen| > SRD_HS_ADDR_MAX,
                             bad ps->n_paths or ps->mtu
   SRD_ERR_PROTO             malformed, or not an echo (dropped, counted)
   SRD_ERR_STALE             a forged, modified or expired cookie, one
                             made for another address, or a replay
                             (dropped, counted as bad_conn)
   SRD_ERR_AGAIN             max_peers peers exist
   SRD_ERR_NOMEM             allocation failed */
SRD_EXTERN int srd_ep_accept_cookie(srd_ep *ep, const srd_peer_settings *ps,
                                    const void *addr, size_t addrlen,
                                    const uint8_t *pkt, size_t len,
                                    srd_peer_id *ppeer, srd_tstamp now);

/* SRD_HS_SPENT is how many sessions opened by cookies an endpoint
   remembers, against replays of their echoes. */
#define SRD_HS_SPENT 64

/* srd_ep_set_hs_secret makes the |len| bytes at |key| (16 are used; fewer
   are repeated) the cookie key; the key it replaces still verifies
   cookies until the next call (rotation: call it every so often, at
   least two hs_cookie_period apart).  An endpoint starts with a key drawn
   from settings.seed, which is only as secret as the seed: a driver
   facing a network should set one from the system's random source.
   Returns 0, or SRD_ERR_INVALID_ARGUMENT for a NULL or empty key. */
SRD_EXTERN int srd_ep_set_hs_secret(srd_ep *ep, const void *key, size_t len);

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */

/* srd_drop_reason says why a received packet was dropped. */
typedef enum srd_drop_reason {
  SRD_DROP_TRUNCATED,       /* shorter than its header or stated length */
  SRD_DROP_BAD_VERSION,     /* unknown protocol version */
  SRD_DROP_BAD_TYPE,        /* unknown packet type */
  SRD_DROP_BAD_FIELD,       /* a field out of range, unknown flags */
  SRD_DROP_BAD_CONN,        /* foreign, stale or replayed incarnation */
  SRD_DROP_NO_SESSION,      /* data before the handshake completed */
  SRD_DROP_DUP_PKT,         /* payload already received (acknowledged) */
  SRD_DROP_DUP_MSG,         /* message already delivered (acknowledged) */
  SRD_DROP_OUT_OF_WINDOW,   /* sequence or message id outside the window */
  SRD_DROP_RNR,             /* no receive buffer (answered with an RNR) */
  SRD_DROP_BAD_ACK,         /* acknowledges a packet never sent */
  SRD_DROP_BAD_PEER,        /* the driver named no such peer */
  SRD_DROP_CORRUPT_HDR,     /* the header's CRC32C does not match */
  SRD_DROP_CORRUPT_PAYLOAD, /* the payload's CRC32C does not match */
  SRD_DROP_REASONS
} srd_drop_reason;

/* srd_drop_reason_name returns the name of |r|, e.g. "dup_msg". */
SRD_EXTERN const char *srd_drop_reason_name(srd_drop_reason r);

/* srd_ep_stats counts what an endpoint did. */
typedef struct srd_ep_stats {
  uint64_t pkts_in;  /* datagrams given to read_pkt */
  uint64_t pkts_out; /* datagrams written */
  uint64_t bytes_in; /* their bytes */
  uint64_t bytes_out;
  uint64_t data_pkts_out;   /* data packets, including retransmissions */
  uint64_t ack_pkts_out;    /* acknowledgements in packets of their own */
  uint64_t acks_on_data;    /* acknowledgements that rode on data packets */
  uint64_t ctrl_pkts_out;   /* handshake and other control packets */
  uint64_t retransmits;     /* data packets sent again */
  uint64_t losses_rack;     /* packets declared lost by reordering time */
  uint64_t losses_rto;      /* packets declared lost by timeout */
  uint64_t spurious_losses; /* declared lost, then acknowledged */
  uint64_t rto_fired;       /* retransmission timeouts */
  uint64_t rnr_sent;        /* "receiver not ready" answers sent */
  uint64_t rnr_received;
  uint64_t msgs_sent_ok;            /* send completions, success */
  uint64_t msgs_sent_err;           /* send completions, error */
  uint64_t msgs_recv_ok;            /* receive completions, success */
  uint64_t msgs_recv_err;           /* receive completions, error */
  uint64_t unexp_msgs;              /* messages that arrived before a receive */
  uint64_t drops[SRD_DROP_REASONS]; /* dropped packets by reason */
  /* The stateless handshake: requests answered by srd_ep_answer_hs,
     sessions opened by srd_ep_accept_cookie, and packets either refused
     (also counted in drops). */
  uint64_t hs_answered;
  uint64_t hs_accepted;
  uint64_t hs_refused;
} srd_ep_stats;

/* srd_ep_get_stats copies the endpoint's counters into |st|. */
SRD_EXTERN void srd_ep_get_stats(const srd_ep *ep, srd_ep_stats *st);

/* srd_peer_state is the handshake state of a peer. */
typedef enum srd_peer_state {
  SRD_PEER_STATE_IDLE,        /* no session, nothing sent */
  SRD_PEER_STATE_HS_SENT,     /* handshake request sent, no answer yet */
  SRD_PEER_STATE_ESTABLISHED, /* both incarnation ids known and proven */
  SRD_PEER_STATE_UNREACHABLE  /* the handshake ran out of retries */
} srd_peer_state;

/* srd_peer_stats describes one peer. */
typedef struct srd_peer_stats {
  srd_peer_state state;
  uint32_t peer_conn_id;  /* the peer's incarnation id, 0 if unknown */
  uint32_t local_conn_id; /* ours for this peer's session */
  uint32_t n_paths;
  uint32_t mtu;      /* negotiated payload bytes per packet */
  srd_duration srtt; /* smoothed RTT over all paths */
  srd_duration rttvar;
  srd_duration min_rtt; /* the base RTT */
  srd_duration rto;     /* current retransmission timeout */
  uint64_t cwnd;        /* congestion window, bytes */
  uint64_t inflight;    /* bytes in flight */
  uint64_t pkts_sent;   /* data packets sent, including retransmits */
  uint64_t pkts_acked;
  uint64_t retransmits;
  uint64_t rtt_samples;
  uint64_t cc_decreases;      /* multiplicative decreases */
  uint64_t cc_wide_decreases; /* of which connection-wide (most paths) */
  uint64_t rnr_received;
  uint64_t msgs_sent;     /* send completions (ok + error) */
  uint64_t msgs_received; /* receive completions (ok + error) */
} srd_peer_stats;

/* srd_ep_get_peer_stats fills |st| for |peer|.

   Returns 0, or SRD_ERR_BAD_PEER. */
SRD_EXTERN int srd_ep_get_peer_stats(const srd_ep *ep, srd_peer_id peer,
                                     srd_peer_stats *st);

/* srd_path_stats describes one path of a peer. */
typedef struct srd_path_stats {
  uint64_t sent;        /* data packets sent on this path */
  uint64_t acked;       /* of which acknowledged */
  uint64_t lost;        /* of which declared lost */
  uint64_t retransmits; /* retransmissions sent on this path */
  uint64_t bytes_sent;
  srd_duration srtt; /* smoothed RTT of this path, 0 before a sample */
  srd_duration rttvar;
  srd_duration min_rtt;
  srd_duration last_rtt;
  int avoided;            /* being steered around now */
  srd_tstamp avoid_until; /* until when */
  /* weight is the path's share of new data packets, in 64ths of an even
     share (8..64): steering lowers it while the path's forward delay
     sits above the other paths'. */
  uint32_t weight;
} srd_path_stats;

/* srd_ep_get_path_stats fills |st| for path |path| of |peer|.

   Returns 0, or one of:
   SRD_ERR_BAD_PEER          no such peer
   SRD_ERR_INVALID_ARGUMENT  path >= n_paths */
SRD_EXTERN int srd_ep_get_path_stats(const srd_ep *ep, srd_peer_id peer,
                                     uint32_t path, srd_tstamp now,
                                     srd_path_stats *st);

/* ------------------------------------------------------------------------ */
/* Looking at a datagram (for drivers)                                      */

/* srd_pkt_type is the type of a datagram. */
typedef enum srd_pkt_type {
  SRD_PKT_TYPE_DATA = 1,
  SRD_PKT_TYPE_ACK = 2,
  SRD_PKT_TYPE_HS_REQ = 3,
  SRD_PKT_TYPE_HS_RESP = 4,
  SRD_PKT_TYPE_HS_CONFIRM = 5,
  SRD_PKT_TYPE_SYNC = 6
} srd_pkt_type;

/* srd_pkt_info is what a driver may need to know about a datagram before
   it hands it to an endpoint: which peer it is from (by its connection
   ids and whether it opens a session), the path it took, and for data the
   message and fragment it carries. */
typedef struct srd_pkt_info {
  srd_pkt_type type;
  uint16_t flags;
  uint32_t src_conn; /* the sender's session id */
  uint32_t dst_conn; /* the receiver's, 0 in a first HS_REQ */
  uint16_t path;     /* the entropy index the sender used */
  int handshake;     /* HS_REQ, HS_RESP or HS_CONFIRM */
  /* hs_echo: it echoes a handshake cookie (an HS_CONFIRM, or a DATA
     that carries the echo): from an unknown address, one for
     srd_ep_accept_cookie. */
  int hs_echo;
  size_t hdrlen; /* header bytes; a DATA's payload follows */
  /* DATA only, else 0: */
  uint32_t msg_id;
  uint32_t msg_len;
  uint32_t offset;
  uint16_t payload_len;
} srd_pkt_info;

/* srd_pkt_peek fills |info| from the first |len| bytes of datagram |pkt|
   (its header at least) without an endpoint and without changing
   anything.  It checks the version, the type and the header's CRC32C, so
   what it returns was written by an endpoint; the other fields are
   checked by srd_ep_read_pkt.

   Returns 0, or one of:
   SRD_ERR_INVALID_ARGUMENT  NULL pointers
   SRD_ERR_PROTO             not a (whole, intact) header of this
                             protocol version */
SRD_EXTERN int srd_pkt_peek(const uint8_t *pkt, size_t len, srd_pkt_info *info);

/* srd_crc32c extends |crc| (0 to start) over |len| bytes at |buf| and
   returns the CRC32C (Castagnoli, as iSCSI) of everything so far, like
   zlib's crc32(): the check in every header (docs/protocol.md,
   "Integrity").  "123456789" gives 0xE3069283. */
SRD_EXTERN uint32_t srd_crc32c(uint32_t crc, const void *buf, size_t len);

/* srd_crc32c_impl names the implementation in use: "vpclmulqdq+sse4.2"
   (long buffers folded with AVX-512 carry-less multiplies, the rest with
   the CPU's CRC32 instruction), "sse4.2" (the CRC32 instruction) or
   "software" (slicing-by-8). */
SRD_EXTERN const char *srd_crc32c_impl(void);

/* srd_cc_names returns the names of the congestion controllers, ending in
   NULL. */
SRD_EXTERN const char *const *srd_cc_names(void);

#ifdef __cplusplus
}
#endif

#endif /* SRD_H */
