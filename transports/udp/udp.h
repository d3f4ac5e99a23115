/*
 * udp.h: the "udp" backend's internal header: libsrd over UDP with
 * io_uring.  The backend's state (xport_udp) and the functions its files
 * share; everything else is static to its file.
 *
 *   udp_ops.c    the xport_ops table and its op functions, the progress
 *                loop; the log and the errno mapping every file uses
 *   udp_setup.c  open and close: the engine, the sockets, the ring, the
 *                receive buffers (buffer ring, one-shot slots, busy poll)
 *   udp_peer.c   the peer map: addresses to srd peers and back
 *   udp_recv.c   the receive path: arming receives, their completions,
 *                the busy poll's recvmmsg, datagrams into the engine
 *   udp_send.c   the send path: packets out of the engine, GSO groups,
 *                held (impaired) datagrams, and the ring's completions
 *
 * Paths and ports.  An endpoint binds n_paths consecutive UDP ports
 * base..base+n-1, one socket each.  Path i leaves from socket i (i mod n
 * for an ACK that answers a peer with more paths) and always goes to the
 * peer's base port, so the 5-tuple, which an ECMP fabric hashes, differs
 * per path in both directions: the entropy is the source port, as in
 * ENA Express and RoCEv2.  A datagram from (ip, port) belongs to the peer
 * at that ip with the largest base <= port < base + 64: ranges of bound
 * ports are contiguous and disjoint, so the answer is unique.  A server
 * (cfg.listen) answers a handshake request from an unknown source without
 * keeping anything (srd_ep_answer_hs, a cookie), and adds a peer only
 * when a datagram from there echoes a valid cookie (srd_ep_accept_cookie;
 * docs/transports.md, "Handshake floods"): its base is the source port
 * minus the header's path.  Anything else from nowhere is dropped and
 * counted, never given a peer slot.
 *
 * I/O.  Output pulls up to TX_BATCH packets from the engine with
 * srd_ep_write_pktv (header here, payload pointing into the user's send
 * buffer: no copy), groups each path's packets into UDP GSO sends of at
 * most cfg.burst segments and 64 KB, and submits all the sendmsg requests
 * in one io_uring_enter.  It waits for their completions before
 * returning, because a payload pointer is valid only until the next
 * completion poll (docs/programmers-guide.md, Buffer ownership).  Input
 * is one multishot recvmsg per socket into a shared provided-buffer ring
 * (GRO on: buffers of 64 KiB, split into segments by the UDP_GRO
 * cmsg).  Timers come from srd_ep_get_expiry: blocking progress sleeps in
 * io_uring_submit_and_wait_timeout until the next datagram or deadline;
 * busy-poll progress only enters the kernel to reap.
 *
 * Fallbacks, each said once through cfg.log: no DEFER_TASKRUN or
 * COOP_TASKRUN ring flags; no buffer rings or multishot recvmsg (Linux
 * < 5.19 / 6.0): one-shot recvmsg into the driver's own buffers; no
 * UDP_SEGMENT or UDP_GRO: one datagram per packet; a GSO send the route
 * refuses (segment above the path MTU): the group is resent datagram by
 * datagram and GSO is turned off.
 *
 * Threads: none of its own.  Every function here runs on the thread that
 * owns the xport (xport.h).
 */
#ifndef UDP_H
#define UDP_H

#include "xport.h"
#include "impair.h"

#include <liburing.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <srd/srd.h>

#ifndef UDP_SEGMENT
#  define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#  define UDP_GRO 104
#endif

/* Packets pulled from the engine per output round (udp_send.c has the
   rounds per progress call). */
#define TX_BATCH 256
/* Room for a header, or a whole packet without payload (the largest ACK
   is 572 bytes). */
#define HDR_CAP 640
/* A GSO send carries at most 64 segments, and at most this many bytes
   (the kernel's limit is 64 KiB of IP datagram). */
#define GSO_MAX_SEGS 64
#define GSO_MAX_BYTES 65000
/* The provided buffer ring's group id. */
#define BGID 7
/* Datagrams one recvmmsg(2) of the busy poll reads. */
#define DIRECT_BATCH 8

/* Control space of a receive: the GRO segment size and the arrival time. */
#define RX_CTL_SPACE                                                           \
  (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec)))

/* A ring request's user_data: its kind in the top byte, an index below. */
#define UD_KIND(u) ((u) >> 56)
#define UD_IDX(u) ((u)&0xffffffffu)
#define UD_RXM 1ull /* multishot recvmsg on socket IDX */
#define UD_RX1 2ull /* one-shot recvmsg, slot IDX */
#define UD_TX 3ull  /* sendmsg of tx message IDX */
#define UD_TXH 4ull /* sendmsg of a held (impaired) datagram, slot IDX */
#define UD(k, i) (((k) << 56) | (uint64_t)(i))

/* upeer is a slot of the peer map, indexed by srd_peer_id. */
typedef struct upeer {
  int used;                     /* the slot holds a peer */
  int passive;                  /* added by its handshake (a server's) */
  struct sockaddr_storage addr; /* the peer's base port */
  socklen_t alen;               /* addr's length */
  /* tap_local (cfg.tap only): our address towards the peer, as the
     kernel routes to it (the port is each socket's). */
  struct sockaddr_storage tap_local;
  /* ports_ok: the ports (offsets from addr's) a datagram came from that
     named the matching path (udp_peer_find). */
  uint64_t ports_ok;
  uint64_t last_rx; /* the last datagram from it (or its creation) */
} upeer;

/* txpkt is one packet of an output round. */
typedef struct txpkt {
  uint8_t hdr[HDR_CAP]; /* the engine's header (or a whole ACK) */
  uint32_t hdrlen;      /* bytes of hdr */
  srd_iovec payload;    /* into the user's send buffer; may be empty */
  srd_path path;        /* the peer and path the engine chose */
  uint32_t len;         /* hdrlen + payload.len */
} txpkt;

/* txmsg is one sendmsg of an output round: a GSO group of one socket's
   packets to one peer, or a single datagram. */
typedef struct txmsg {
  struct msghdr mh;                   /* what the kernel is given */
  struct iovec iov[2 * GSO_MAX_SEGS]; /* header and payload per packet */
  union {
    char buf[CMSG_SPACE(sizeof(uint16_t))];
    struct cmsghdr align;
  } ctl;                  /* the UDP_SEGMENT control message */
  uint32_t peer;          /* the destination (srd_peer_id) */
  uint16_t sock;          /* the socket it leaves from (path mod nfd) */
  uint16_t nseg;          /* packets in it */
  uint32_t seg;           /* GSO segment size: the first packet's length */
  uint32_t bytes;         /* their total length */
  int closed;             /* a shorter last segment ends a GSO group */
  int pkts[GSO_MAX_SEGS]; /* their indices in xport_udp.tx */
} txmsg;

/* rxslot is a receive buffer with its own msghdr: a one-shot receive, or
   one datagram of the busy poll's recvmmsg. */
typedef struct rxslot {
  struct msghdr mh;             /* one-shot: the request's */
  struct iovec iov;             /* buf, bufsz */
  struct sockaddr_storage name; /* the source address */
  union {
    char buf[RX_CTL_SPACE];
    struct cmsghdr align;
  } ctl;         /* GRO segment size, arrival time */
  uint16_t sock; /* the socket it receives on */
  uint8_t *buf;  /* bufsz bytes of xport_udp.rxmem or dmem */
} rxslot;

/* hpkt is a datagram the impairment model holds back (a slot of
   xport_udp.held): due later, or corrupted (a copy of the user's bytes). */
typedef struct hpkt {
  uint32_t len;
  uint16_t path; /* the socket it leaves on */
  uint32_t peer;
  uint8_t data[];
} hpkt;

/* HELD_MAX is how many datagrams the layer holds at most; past it, a
   datagram that must wait is a queue drop. */
#define HELD_MAX 8192

/* held_send is the sendmsg of a datagram the impairment layer held (a
   delayed, duplicated or corrupted copy), from the held queue. */
typedef struct held_send {
  struct msghdr mh;
  struct iovec iov;
  hpkt *pkt; /* the queue's slot, returned on completion */
  int busy;  /* in the ring */
} held_send;

/* xport_udp is the backend's xport. */
typedef struct xport_udp {
  xport base;              /* the head every backend starts with */
  xport_config cfg;        /* as opened, with the seed drawn */
  struct io_uring ring;    /* one ring for every socket's I/O */
  unsigned ring_flags;     /* the IORING_SETUP_* flags it got */
  int family;              /* AF_INET or AF_INET6 */
  uint32_t nfd;            /* sockets: the paths */
  int fd[XPORT_MAX_PATHS]; /* socket i is bound to port0 + i, or -1 */
  uint16_t port0;          /* the base port */
  srd_ep *ep;              /* the engine */
  size_t max_pkt;          /* the largest packet the engine writes */
  /* peers, indexed by srd_peer_id */
  upeer *peers;
  uint32_t max_peers; /* slots in peers: the engine's max_peers */
  uint32_t last_hit;  /* the peer of the last datagram (the fast path) */
  /* receive */
  int multishot; /* multishot recvmsg into the buffer ring (or one-shot) */
  int gro;       /* UDP_GRO is on */
  struct io_uring_buf_ring *br; /* the provided buffer ring, mmap'ed */
  size_t br_bytes;              /* its size */
  unsigned nbuf;                /* buffers in it */
  size_t bufsz;   /* one receive buffer: recvmsg_out, name, control, data */
  uint8_t *rxmem; /* the buffer ring's or one-shot slots' memory */
  struct msghdr rx_tmpl;         /* multishot: the name and control lengths */
  int rx_armed[XPORT_MAX_PATHS]; /* socket i has a multishot receive */
  rxslot *slots;                 /* one-shot receives */
  unsigned nslots;
  unsigned buf_adds; /* buffers given back since the ring's last advance */
  /* send */
  int gso;              /* UDP GSO sends (cleared when the route refuses) */
  uint32_t burst;       /* most packets per GSO send */
  txpkt *tx;            /* TX_BATCH packets of a round */
  txmsg *msgs;          /* 2 * TX_BATCH sendmsg of a round */
  unsigned tx_inflight; /* sends in the ring, not completed */
  int gso_failed;       /* a GSO send was refused (said once) */
  uint32_t mtu;         /* the engine's mtu setting */
  held_send *hs;        /* held datagrams' sends */
  unsigned nhs;
  /* impairments: the model's link per path, the datagrams held back, and
     those dropped for want of room there */
  int impair_on;
  impair_link imp[XPORT_MAX_PATHS];
  impair_q held;
  uint64_t held_drops;
  /* counters the engine does not keep */
  uint64_t sends, gso_sends, pkts_out, bytes_out, pkts_in, bytes_in;
  uint64_t unknown_src, rx_truncated, driver_bad;
  uint64_t last_gc; /* when udp_peer_gc last looked */
  /* The stateless handshake (udp_recv.c): requests from unknown
     addresses answered, proven clients refused for a full table, the
     most peers held at once, and when the cookie key was last drawn. */
  uint64_t hs_answered, hs_full;
  uint32_t peers_max;
  uint64_t hs_key_at;
  /* datagrams whose kernel arrival time the engine's clock had passed:
     given the clock's time, their wait counts as path delay */
  uint64_t rx_restamped;
  /* Kernel receive timestamps (SO_TIMESTAMPNS, CLOCK_REALTIME) and the
     offset that turns them into CLOCK_MONOTONIC; last_now keeps the time
     given to the engine from going backwards. */
  int rx_tstamp;
  int rt_valid; /* rt_off measured in this progress call */
  int64_t rt_off;
  uint64_t last_now;
  /* peek: the ring raises IORING_SQ_TASKRUN when completions wait to be
     run (TASKRUN_FLAG), so a poll enters the kernel only then. */
  int peek;
  unsigned rx_disarmed;  /* sockets whose multishot receive ended */
  uint64_t direct_sends; /* sendmsg(2) calls of our own (submit_msg) */
  /* direct_rx (busy-poll): socket 0, where every peer sends, is read with
     recvmmsg(2) on every poll instead of through the ring
     (udp_rx_direct_poll); the other sockets, which only send, keep their
     ring receive. */
  int direct_rx;
  unsigned rx_hits; /* direct poll: polls in a row that found datagrams */
  /* With a single peer, the sockets but the base one (which hears every
     peer) are connected to it, and their sends name no address: the
     kernel then reuses the socket's route instead of looking one up per
     datagram (about half a microsecond on loopback).  conn_peer is that
     peer, or -1; npeers counts the peers. */
  int conn_peer;
  uint32_t npeers;
  rxslot *dslots;      /* the busy poll's DIRECT_BATCH receive slots */
  struct mmsghdr *dmm; /* their recvmmsg(2) vector */
  uint8_t *dmem;       /* their buffers */
  char desc[512];      /* udp_describe's text */
} xport_udp;

/* ------------------------------------------------------------------------ */
/* udp_ops.c                                                                */

/* udp_log formats a one-line diagnostic for cfg.log; nothing without
   one (xport_logf). */
#define udp_log(x, ...) xport_logf(&(x)->cfg, __VA_ARGS__)

/* udp_errno maps libsrd's |e| (0 or an SRD_ERR_*) to 0 or the negative
   errno xport.h promises; a code without a closer match is -EPROTO. */
int udp_errno(int e);

/* ------------------------------------------------------------------------ */
/* udp_setup.c                                                              */

/* udp_open and udp_close are the table's open and close (xport.h's
   xport_open and xport_close).  udp_open also returns -EINVAL for
   n_paths or burst out of range or max_msg_size 0; on failure nothing is
   left open.  udp_close drops posted operations without completions and
   frees everything, the ring's requests cancelled first so that the
   ports are free when it returns. */
int udp_open(xport **px, const xport_config *cfg);
void udp_close(xport *xp);

/* ------------------------------------------------------------------------ */
/* udp_peer.c                                                               */

/* udp_sa_port returns the port of |ss| (AF_INET or AF_INET6), host
   order. */
uint16_t udp_sa_port(const struct sockaddr_storage *ss);

/* udp_sa_set_port sets the port of |ss| (AF_INET or AF_INET6). */
void udp_sa_set_port(struct sockaddr_storage *ss, uint16_t port);

/* udp_peer_find returns the index of the peer that datagram |pkt| (|len|
   bytes, its first segment) from source address |sa| (a struct sockaddr
   of any family) belongs to: the peer whose port range holds |sa|, the
   first datagram from each of its ports checked against the path its
   header names (srd_pkt_peek); or -ENOENT if none (or |sa| is neither
   AF_INET nor AF_INET6). */
int udp_peer_find(xport_udp *x, const void *sa, const uint8_t *pkt, size_t len);

/* udp_peer_new adds an engine peer for the base address |ss| (|len|
   bytes; copied), |passive| when its handshake brought it, and stores its
   id in *ppeer.  With a single peer the sending sockets are connected to
   it.  Returns 0, -EAGAIN (no slot), or the engine's refusal as
   udp_errno maps it. */
int udp_peer_new(xport_udp *x, const struct sockaddr_storage *ss, socklen_t len,
                 int passive, xport_peer *ppeer);

/* udp_peer_drop removes peer |id| (a used slot) from the engine at time
   |now| (its posted sends complete with SRD_ERR_CANCELED) and from the
   map, and connects or disconnects the sending sockets to match. */
void udp_peer_drop(xport_udp *x, srd_peer_id id, uint64_t now);

/* udp_peer_gc drops, at most every 100 ms and only while the peer table
   is at least three quarters full, the passive peers whose handshake
   never completed and that have been silent for PASSIVE_HS_TIMEOUT_NS (a
   forged or abandoned handshake then holds no slot for long); a
   listening xport calls it from progress.  Below that, a half-open peer
   keeps its slot: a client whose HS_CONFIRM was lost and that has
   nothing to send for a while (a rank of a collective waiting for the
   others) is still proved by the cookie its first data echoes, and a
   newcomer that needs the slot evicts it (udp_peer_evict_halfopen). */
void udp_peer_gc(xport_udp *x, uint64_t now);

/* udp_peer_passive_settings fills |ps| with the settings of a peer that
   contacts us (a server's): the ones srd_ep_answer_hs offers and
   srd_ep_accept_cookie creates it with. */
void udp_peer_passive_settings(const xport_udp *x, srd_peer_settings *ps);

/* udp_peer_adopt maps engine peer |id|, which srd_ep_accept_cookie just
   created for the base address |ss| (|len| bytes; copied), to that
   address.  Returns 0, or -EAGAIN (the id is past the driver's table: the
   engine peer is removed). */
int udp_peer_adopt(xport_udp *x, srd_peer_id id,
                   const struct sockaddr_storage *ss, socklen_t len);

/* udp_hs_rekey draws a fresh cookie key for the engine from the system's
   random source (srd_ep_set_hs_secret), now and then once a minute (the
   key it replaces verifies cookies until the next one). */
void udp_hs_rekey(xport_udp *x, uint64_t now);

/* ------------------------------------------------------------------------ */
/* udp_recv.c                                                               */

/* udp_rx_arm_multishot arms socket |sock|'s multishot recvmsg into the
   buffer ring (submitted with the next enter).  Returns 0, or -EBUSY when
   the ring has no free entry even after a submit. */
int udp_rx_arm_multishot(xport_udp *x, uint16_t sock);

/* udp_rx_setup_oneshot switches the receive path to one-shot recvmsg:
   ONESHOT_DEPTH slots on socket 0 (none when the busy poll reads it) and
   one on each other socket, each of bufsz bytes, all armed.  Returns 0,
   -ENOMEM, or -EBUSY (the ring is full). */
int udp_rx_setup_oneshot(xport_udp *x);

/* udp_rx_on_multishot and udp_rx_on_oneshot handle a receive's ring
   completion |cqe| (UD_RXM, UD_RX1): the datagram goes to the engine,
   the buffer back to the ring, the one-shot slot is armed again, and a
   multishot receive that ended is marked for udp_reap to re-arm.  A
   kernel without multishot recvmsg switches the xport to one-shot
   receives (said once). */
void udp_rx_on_multishot(xport_udp *x, struct io_uring_cqe *cqe, uint64_t now);
void udp_rx_on_oneshot(xport_udp *x, struct io_uring_cqe *cqe, uint64_t now);

/* udp_rx_direct_poll reads the datagrams waiting on socket 0 with
   recvmsg(2)/recvmmsg(2), without blocking, into the engine (direct_rx:
   the busy poll). */
void udp_rx_direct_poll(xport_udp *x, uint64_t now);

/* ------------------------------------------------------------------------ */
/* udp_send.c                                                               */

/* udp_tx_output sends what the engine has due at |now|, in rounds of up to
   TX_BATCH packets, through the impairment layer when it is on, and
   waits until every send it submitted completed (a payload points into
   a user's buffer, which is the user's again at the next poll).  Returns
   how many packets the engine wrote. */
unsigned udp_tx_output(xport_udp *x, uint64_t now);

/* udp_tx_send_held submits the sends of the held datagrams due at |now|,
   as many as free held_send slots allow; udp_reap releases each to the
   layer when its send completes. */
void udp_tx_send_held(xport_udp *x, uint64_t now);

/* udp_reap handles every completion waiting in the ring (receives, sends,
   held sends) and re-arms the multishot receives that ended. */
void udp_reap(xport_udp *x, uint64_t now);

/* ------------------------------------------------------------------------ */
/* Small helpers, inline for the fast paths                                 */

/* udp_tap shows the tap (cfg.tap) a datagram between peer |pi| and our
   socket |sock|: |out| 1 as it leaves, 0 as it arrives (|from|: the
   address it came from; NULL for the peer's base port). */
void udp_tap(xport_udp *x, int out, uint32_t pi, uint16_t sock,
             const struct sockaddr *from, const uint8_t *hdr, size_t hdrlen,
             const uint8_t *payload, size_t paylen);

/* udp_tnow keeps the engine's clock monotonic: returns |now|, or a later
   arrival time already given to the engine. */
static inline uint64_t udp_tnow(xport_udp *x, uint64_t now) {
  if (now < x->last_now) {
    now = x->last_now;
  }
  x->last_now = now;
  return now;
}

/* udp_get_sqe returns a free submission entry, submitting the queued ones
   to make room if need be; NULL if the ring is still full. */
static inline struct io_uring_sqe *udp_get_sqe(xport_udp *x) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&x->ring);

  if (sqe == NULL) {
    io_uring_submit(&x->ring);
    sqe = io_uring_get_sqe(&x->ring);
  }
  return sqe;
}

#endif /* UDP_H */
