/*
 * libnetsim: a deterministic, packet-level, discrete-event simulator of
 * datacenter fabrics (docs/netsim.md).
 *
 * Time is an integer count of picoseconds.  Events sit in a heap ordered by
 * (time, insertion sequence), so that equal-time events run in the order
 * they were scheduled and a run never depends on pointer values.  Packets
 * and one-shot events come from pools sized when the simulation is created:
 * nothing is allocated per event or per packet.  Every random stream (loss
 * on a link, the ECMP seed of a switch) is derived from the master seed and
 * the component's id, so the same topology, traffic and seed give the same
 * run, bit for bit, and netsim_sim_trace_hash() proves it.
 *
 * netsim moves opaque packets: it never looks inside a payload and knows
 * nothing of the transports that run in its hosts.  A transport attaches to
 * a host with netsim_host_set_rx() (packets in), netsim_host_send()
 * (packets out) and timers on the event list (netsim_sim_evl()).
 */
#ifndef NETSIM_H
#define NETSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NETSIM_ALIGN64 aligns a member (and its structure) on a cache line. */
#ifdef __cplusplus
#  define NETSIM_ALIGN64 alignas(64)
#else
#  define NETSIM_ALIGN64 _Alignas(64)
#endif

/* ------------------------------------------------------------------------ */
/* Time and rates                                                           */

/* netsim_time is a point in or span of virtual time in picoseconds. */
typedef uint64_t netsim_time;

#define NETSIM_PS ((netsim_time)1ULL)
#define NETSIM_NS ((netsim_time)1000ULL)
#define NETSIM_US ((netsim_time)1000000ULL)
#define NETSIM_MS ((netsim_time)1000000000ULL)
#define NETSIM_S ((netsim_time)1000000000000ULL)
/* NETSIM_TIME_NONE means "never" or "no event". */
#define NETSIM_TIME_NONE UINT64_MAX

/* Rates are uint64_t bits per second. */
#define NETSIM_KBPS(x) ((uint64_t)(x)*1000ULL)
#define NETSIM_MBPS(x) ((uint64_t)(x)*1000000ULL)
#define NETSIM_GBPS(x) ((uint64_t)(x)*1000000000ULL)

/* NETSIM_RATE_MAX is the highest rate the exact integer arithmetic below
   accepts (18 Tb/s). */
#define NETSIM_RATE_MAX ((uint64_t)18000000000000ULL)

/* netsim_time_tx returns the time |bytes| bytes take on a wire of
   |rate_bps| bits per second: ceil(bytes * 8 * 10^12 / rate_bps) ps,
   computed exactly in 64-bit integers (no overflow for any byte count a
   link can send in 200 days).  |rate_bps| is in (0, NETSIM_RATE_MAX]. */
netsim_time netsim_time_tx(uint64_t bytes, uint64_t rate_bps);

/* netsim_time_bytes returns how many whole bytes a wire of |rate_bps|
   sends in |dt|: floor(dt * rate_bps / (8 * 10^12)). */
uint64_t netsim_time_bytes(netsim_time dt, uint64_t rate_bps);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

/* An argument is out of range. */
#define NETSIM_ERR_INVAL (-301)
/* The id or handle names nothing (a cancelled or fired event, a link or
   host that does not exist). */
#define NETSIM_ERR_NOENT (-302)
/* A pool (packets, payload buffers, one-shot events) is exhausted.  Not
   fatal: free something and retry. */
#define NETSIM_ERR_POOL (-303)
/* The packet was dropped (and returned to the pool). */
#define NETSIM_ERR_DROPPED (-304)
/* The operation does not fit the current state (e.g. a topology built
   twice, routes asked for before the network has hosts). */
#define NETSIM_ERR_STATE (-305)
/* Fatal errors are below NETSIM_ERR_FATAL. */
#define NETSIM_ERR_FATAL (-500)
/* Memory allocation failed. */
#define NETSIM_ERR_NOMEM (-501)

/* netsim_strerror returns a static description of |err|. */
const char *netsim_strerror(int err);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* netsim_mem is the allocator netsim uses, only while a simulation is
   built, changed (routing recomputed after a fault) or deleted; never per
   event or per packet. */
typedef struct netsim_mem {
  /* user_data is passed to every function below. */
  void *user_data;
  /* malloc allocates |size| bytes, like malloc(3). */
  void *(*malloc)(size_t size, void *user_data);
  /* free releases |ptr|, like free(3); |ptr| may be NULL. */
  void (*free)(void *ptr, void *user_data);
  /* calloc allocates zeroed memory, like calloc(3). */
  void *(*calloc)(size_t nmemb, size_t size, void *user_data);
} netsim_mem;

/* netsim_mem_default returns an allocator backed by the C library. */
const netsim_mem *netsim_mem_default(void);

/* ------------------------------------------------------------------------ */
/* Random streams                                                           */

/* netsim_rng is one random stream (splitmix64: one word of state). */
typedef struct netsim_rng {
  /* state advances by the golden gamma on every draw. */
  uint64_t state;
} netsim_rng;

/* Stream classes: a component's stream is (master seed, class, id), so
   adding a link leaves every other component's stream unchanged. */
#define NETSIM_STREAM_LINK 1u
#define NETSIM_STREAM_SWITCH 2u
#define NETSIM_STREAM_TRAFFIC 3u
/* NETSIM_STREAM_CORRUPT is a link's bit-error stream, apart from its loss
   stream (NETSIM_STREAM_LINK) so that turning bit errors on leaves the
   loss draws as they were. */
#define NETSIM_STREAM_CORRUPT 4u
/* NETSIM_STREAM_DUP is a link's duplication stream, apart from the other
   two so that turning duplication on leaves the loss and bit-error draws
   as they were. */
#define NETSIM_STREAM_DUP 5u
#define NETSIM_STREAM_USER 16u

/* netsim_rng_init seeds |rng| with the stream |id| of class |cls| derived
   from |master|. */
void netsim_rng_init(netsim_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id);

/* netsim_rng_next returns the next 64 random bits of |rng|. */
uint64_t netsim_rng_next(netsim_rng *rng);

/* netsim_rng_below returns a uniform value in [0, |n|), |n| > 0. */
uint32_t netsim_rng_below(netsim_rng *rng, uint32_t n);

/* netsim_rng_threshold converts probability |p| into the threshold that
   netsim_rng_next() values fall below with probability |p| (0 for p <= 0,
   UINT64_MAX for p >= 1). */
uint64_t netsim_rng_threshold(double p);

/* netsim_mix64 is a 64-bit finalizer (splitmix64/Stafford variant 13):
   every input bit affects every output bit. */
uint64_t netsim_mix64(uint64_t x);

/* ------------------------------------------------------------------------ */
/* Event list                                                               */

typedef struct netsim_evl netsim_evl;
typedef struct netsim_timer netsim_timer;

/* netsim_timer_cb is called when timer |tm| fires; |ctx| and |arg| are the
   two user words given to netsim_timer_init or netsim_evl_schedule.  The
   callback may set, stop or schedule any timer, |tm| included. */
typedef void (*netsim_timer_cb)(netsim_evl *evl, netsim_timer *tm, void *ctx,
                                uint64_t arg);

/* netsim_timer is an event in caller storage (a link's, a host's).  It is
   armed at most once at a time; netsim_evl_timer_set moves it.  Its time
   and sequence number live in the event list (netsim_evl_timer_expiry). */
struct netsim_timer {
  /* cb is the function called when the timer fires. */
  netsim_timer_cb cb;
  /* ctx is the first user word. */
  void *ctx;
  /* arg is the second user word. */
  uint64_t arg;
  /* slot is the event list's handle for the armed timer, or UINT32_MAX
     when idle. */
  uint32_t slot;
  /* pool_gen is 0 for a caller's timer; a pooled event's generation. */
  uint32_t pool_gen;
};

/* netsim_evid names a pooled one-shot event; 0 is never a valid id. */
typedef uint64_t netsim_evid;

/* netsim_evl_settings sizes an event list. */
typedef struct netsim_evl_settings {
  /* max_pooled is the number of one-shot events netsim_evl_schedule can
     have pending at once. */
  uint32_t max_pooled;
  /* heap_hint is the number of heap slots to reserve at creation (the
     heap grows, by doubling, only past its high-water mark). */
  uint32_t heap_hint;
} netsim_evl_settings;

/* netsim_evl_new creates an empty event list at time 0 in |*pevl|.
   Returns 0, or NETSIM_ERR_NOMEM. */
int netsim_evl_new(netsim_evl **pevl, const netsim_evl_settings *s,
                   const netsim_mem *mem);

/* netsim_evl_del frees |evl| (NULL is fine); pending timers are dropped
   without being called. */
void netsim_evl_del(netsim_evl *evl);

/* netsim_evl_now returns the current virtual time of |evl|. */
netsim_time netsim_evl_now(const netsim_evl *evl);

/* netsim_evl_next_time returns when the earliest pending event fires, or
   NETSIM_TIME_NONE. */
netsim_time netsim_evl_next_time(const netsim_evl *evl);

/* netsim_evl_pending returns the number of pending events. */
size_t netsim_evl_pending(const netsim_evl *evl);

/* netsim_evl_count returns the number of events fired so far. */
uint64_t netsim_evl_count(const netsim_evl *evl);

/* netsim_timer_init prepares caller storage |tm| as an idle timer calling
   |cb| with |ctx| and |arg|. */
void netsim_timer_init(netsim_timer *tm, netsim_timer_cb cb, void *ctx,
                       uint64_t arg);

/* netsim_timer_pending returns nonzero if |tm| is armed. */
static inline int netsim_timer_pending(const netsim_timer *tm) {
  return tm->slot != UINT32_MAX;
}

/* netsim_evl_timer_expiry returns when |tm| fires, or NETSIM_TIME_NONE if
   it is idle. */
netsim_time netsim_evl_timer_expiry(const netsim_evl *evl,
                                    const netsim_timer *tm);

/* netsim_evl_timer_set arms |tm| to fire at |at| (>= now), or moves it
   there if it is already armed; either way it takes a fresh sequence
   number, so it runs after every event already scheduled for |at|.
   Returns 0, NETSIM_ERR_INVAL (|at| in the past), or NETSIM_ERR_NOMEM
   (the heap could not grow). */
int netsim_evl_timer_set(netsim_evl *evl, netsim_timer *tm, netsim_time at);

/* netsim_evl_timer_stop disarms |tm| (no effect if idle). */
void netsim_evl_timer_stop(netsim_evl *evl, netsim_timer *tm);

/* netsim_evl_schedule schedules a one-shot pooled event calling |cb| with
   |ctx| and |arg| at |at|, and writes its id to |*pid| (|pid| may be
   NULL).  Returns 0, NETSIM_ERR_INVAL (|at| in the past), NETSIM_ERR_POOL
   (max_pooled events are pending) or NETSIM_ERR_NOMEM. */
int netsim_evl_schedule(netsim_evl *evl, netsim_time at, netsim_timer_cb cb,
                        void *ctx, uint64_t arg, netsim_evid *pid);

/* netsim_evl_cancel cancels the pending pooled event |id|.  Returns 0, or
   NETSIM_ERR_NOENT if it already fired or was cancelled. */
int netsim_evl_cancel(netsim_evl *evl, netsim_evid id);

/* netsim_evl_run_until fires, in (time, sequence) order, every event due at
   or before |until|, then sets the clock to |until| (unless
   netsim_evl_stop was called).  Returns the number of events fired. */
uint64_t netsim_evl_run_until(netsim_evl *evl, netsim_time until);

/* netsim_evl_step fires the earliest event.  Returns 1, or 0 if none.
   Neither it nor netsim_evl_run_until may be called from a callback. */
int netsim_evl_step(netsim_evl *evl);

/* netsim_evl_stop makes the running netsim_evl_run_until return after the
   current event, with the clock left at that event's time. */
void netsim_evl_stop(netsim_evl *evl);

/* ------------------------------------------------------------------------ */
/* Packets                                                                  */

/* netsim_addr is an IPv4-style host address, host byte order. */
typedef uint32_t netsim_addr;

/* Host i has address NETSIM_ADDR_BASE + i: 10.0.0.1, 10.0.0.2, ... */
#define NETSIM_ADDR_BASE ((netsim_addr)0x0A000001u)

/* netsim_flowkey is the 5-tuple switches hash for ECMP. */
typedef struct netsim_flowkey {
  /* src is the sender's address. */
  netsim_addr src;
  /* dst is the receiver's address; switches route on it. */
  netsim_addr dst;
  /* sport is the source port (SRD carries its path entropy here). */
  uint16_t sport;
  /* dport is the destination port. */
  uint16_t dport;
  /* proto is the IP protocol number (17 UDP, 6 TCP). */
  uint8_t proto;
} netsim_flowkey;

/* Packet flags. */
/* NETSIM_PKT_ECT: the sender is ECN-capable; queues may mark the packet. */
#define NETSIM_PKT_ECT 0x01u
/* NETSIM_PKT_CE: a queue marked the packet (Congestion Experienced). */
#define NETSIM_PKT_CE 0x02u
/* Bit errors (netsim_link_set_ber).  A link counts a packet's bits as its
   min(payload_len, size) carried bytes (netsim_pkt_data) followed by the
   bytes it does not carry, which are only a length; an error flips a
   carried bit, or marks an error the packet cannot show.  Corrupted
   packets are delivered, never dropped by netsim: the receiver must find
   the damage, as a transport's checksum would.  netsim_host_send clears
   both flags. */
/* NETSIM_PKT_FLIPPED: bit errors flipped bits of the carried bytes. */
#define NETSIM_PKT_FLIPPED 0x04u
/* NETSIM_PKT_CORRUPT: a bit error fell in bytes the packet does not carry
   (a payload given by length): the receiver decides what that means. */
#define NETSIM_PKT_CORRUPT 0x08u
/* NETSIM_PKT_BITERR is either: the packet was hit by a bit error. */
#define NETSIM_PKT_BITERR (NETSIM_PKT_FLIPPED | NETSIM_PKT_CORRUPT)
/* NETSIM_PKT_DUP: the packet is a copy a duplicating link made
   (netsim_link_set_dup).  It is for counting only: a receiver must treat
   the copy as the packet it copies, as a real one cannot tell them apart.
   netsim_host_send clears it. */
#define NETSIM_PKT_DUP 0x10u

/* NETSIM_PKT_INLINE is how many payload bytes a packet carries in itself
   (a transport's header, typically), with no pool buffer. */
#define NETSIM_PKT_INLINE 88

/* netsim_pkt is one packet.  It has exactly one owner at a time: the
   caller between netsim_pkt_alloc and netsim_host_send, then netsim (queue,
   wire, switch), then the receiving host's rx callback, which frees it,
   keeps it or sends it again. */
typedef struct netsim_pkt {
  /* Line 0, the 64 bytes a hop touches (packets are 64-byte aligned). */
  /* key is the 5-tuple. */
  NETSIM_ALIGN64 netsim_flowkey key;
  /* flags holds NETSIM_PKT_ECT, NETSIM_PKT_CE, the bit-error flags
     (NETSIM_PKT_FLIPPED, NETSIM_PKT_CORRUPT) and NETSIM_PKT_DUP. */
  uint8_t flags;
  /* hops counts the links the packet has crossed since it was sent. */
  uint16_t hops;
  /* size is the packet's length on the wire in bytes (>= 1); it sets the
     serialisation time and the queue occupancy, not the payload. */
  uint32_t size;
  /* next links the packet into its link's FIFO (netsim's while it owns the
     packet, like every field up to uid). */
  struct netsim_pkt *next;
  /* t_arr is when it reaches the far end of the current link. */
  netsim_time t_arr;
  /* t_next_fin and t_next_arr are the successor's serialisation end and
     t_arr, copied when the successor is queued, so that a hop reads one
     packet. */
  netsim_time t_next_fin;
  netsim_time t_next_arr;
  /* uid numbers packets in the order hosts sent them (set by
     netsim_host_send). */
  uint64_t uid;

  /* Line 1, what a receiver reads: no hop touches it, and with an inline
     payload of up to 48 bytes (an SRD data header) the receiver reads
     nothing else (netsim_pkt_data). */
  /* payload_len is the number of payload bytes used. */
  uint32_t payload_len;
  /* payload_idx is the pool slot of |payload|, or UINT32_MAX if the
     packet holds no pool buffer (netsim's). */
  uint32_t payload_idx;
  /* flow is a tag for the transport (a flow or connection number). */
  uint32_t flow;
  /* state is the pool's (free or in use), for assertions. */
  uint32_t state;
  /* inl holds the payload when it fits (netsim_pkt_payload), in the lines
     the receiver reads anyway instead of a buffer elsewhere.
     netsim_pkt_alloc does not clear it. */
  uint8_t inl[NETSIM_PKT_INLINE];

  /* Line 2 (after the end of inl). */
  /* payload is |inl|, a pool buffer of the pool's payload_max bytes, or
     NULL (see netsim_pkt_payload). */
  uint8_t *payload;
  /* tag is a free word for the transport (a sequence number, say). */
  uint64_t tag;
  /* t_sent is when the packet was handed to netsim_host_send. */
  netsim_time t_sent;
} netsim_pkt;

/* netsim_pkt_data returns |pkt|'s payload, or NULL if it has none (or an
   empty one).  Unlike |payload| it reads only line 1 when the payload is
   inline. */
static inline const uint8_t *netsim_pkt_data(const netsim_pkt *pkt) {
  if (pkt->payload_idx != UINT32_MAX) {
    return pkt->payload;
  }
  return pkt->payload_len ? pkt->inl : NULL;
}

typedef struct netsim_pktpool netsim_pktpool;

/* netsim_pktpool_new creates a pool of |n_pkts| packets and |n_payloads|
   payload buffers of |payload_max| bytes each (both may be 0).  Returns
   0, NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_pktpool_new(netsim_pktpool **ppool, uint32_t n_pkts,
                       uint32_t payload_max, uint32_t n_payloads,
                       const netsim_mem *mem);

/* netsim_pktpool_del frees |pool| (NULL is fine); all packets die. */
void netsim_pktpool_del(netsim_pktpool *pool);

/* netsim_pktpool_in_use returns how many packets are allocated. */
uint32_t netsim_pktpool_in_use(const netsim_pktpool *pool);

/* netsim_pkt_alloc takes a zeroed packet (size 0, no payload) from
   |pool|.  Returns 0, or NETSIM_ERR_POOL if the pool is empty. */
int netsim_pkt_alloc(netsim_pktpool *pool, netsim_pkt **ppkt);

/* netsim_pkt_free returns |pkt| and its payload buffer to |pool|. */
void netsim_pkt_free(netsim_pktpool *pool, netsim_pkt *pkt);

/* netsim_pkt_payload gives |pkt| a payload buffer of at least |len| bytes
   (if it has none large enough), sets payload_len to |len| and stores the
   buffer in |*pbuf| for the caller to fill.  The buffer is the packet's
   own |inl| when |len| <= NETSIM_PKT_INLINE and the packet holds no pool
   buffer, else a pool buffer of payload_max bytes; growing an inline
   payload past NETSIM_PKT_INLINE moves its bytes to a pool buffer.
   Returns 0, NETSIM_ERR_INVAL (|len| > payload_max and too long for
   |inl|) or NETSIM_ERR_POOL (no free payload buffer). */
int netsim_pkt_payload(netsim_pktpool *pool, netsim_pkt *pkt, uint32_t len,
                       uint8_t **pbuf);

/* ------------------------------------------------------------------------ */
/* Simulation                                                               */

typedef struct netsim_sim netsim_sim;
typedef struct netsim_link netsim_link;
typedef struct netsim_host netsim_host;
typedef struct netsim_switch netsim_switch;

/* netsim_settings configures a simulation. */
typedef struct netsim_settings {
  /* seed is the master seed of every random stream and ECMP hash seed. */
  uint64_t seed;
  /* max_pkts is the packet pool size. */
  uint32_t max_pkts;
  /* payload_max is the size of a payload buffer (0: no payloads). */
  uint32_t payload_max;
  /* max_payloads is the number of payload buffers. */
  uint32_t max_payloads;
  /* max_events is the number of pending one-shot events (faults, delayed
     sends, user events). */
  uint32_t max_events;
  /* reconverge is how long routing keeps using a link after it went down
     (a blackhole) or ignoring it after it came back up. */
  netsim_time reconverge;
  /* max_hops drops a packet that crosses more links (a loop guard). */
  uint16_t max_hops;
} netsim_settings;

/* netsim_settings_default fills |s|: seed 1, 65536 packets, no payloads,
   4096 events, reconvergence 10 ms, 64 hops. */
void netsim_settings_default(netsim_settings *s);

/* netsim_linkcfg is one direction of a cable. */
typedef struct netsim_linkcfg {
  /* rate_bps is the line rate (0 < rate <= NETSIM_RATE_MAX). */
  uint64_t rate_bps;
  /* delay is the propagation delay. */
  netsim_time delay;
  /* queue_bytes is the output queue's byte limit (drop-tail; values of
     4 GiB and more mean no limit). */
  uint64_t queue_bytes;
  /* ecn_bytes marks ECT packets that arrive while more than this many
     bytes are queued; 0 disables marking. */
  uint64_t ecn_bytes;
} netsim_linkcfg;

/* netsim_linkcfg_default fills |c|: 100 Gb/s, 1 us, 200 KB queue, no
   ECN. */
void netsim_linkcfg_default(netsim_linkcfg *c);

/* netsim_sim_new creates an empty simulation at time 0.  |mem| may be NULL
   for netsim_mem_default().  Returns 0, NETSIM_ERR_INVAL or
   NETSIM_ERR_NOMEM. */
int netsim_sim_new(netsim_sim **psim, const netsim_settings *s,
                   const netsim_mem *mem);

/* netsim_sim_del frees |sim| and everything in it (NULL is fine). */
void netsim_sim_del(netsim_sim *sim);

/* netsim_sim_evl returns the simulation's event list, for timers. */
netsim_evl *netsim_sim_evl(netsim_sim *sim);

/* netsim_sim_pool returns the simulation's packet pool. */
netsim_pktpool *netsim_sim_pool(netsim_sim *sim);

/* netsim_sim_now returns the current virtual time. */
netsim_time netsim_sim_now(const netsim_sim *sim);

/* netsim_sim_seed returns the master seed. */
uint64_t netsim_sim_seed(const netsim_sim *sim);

/* netsim_sim_run_until runs the simulation up to |until|.  Returns the
   number of events fired. */
uint64_t netsim_sim_run_until(netsim_sim *sim, netsim_time until);

/* netsim_sim_pkt_alloc takes a zeroed packet from the simulation's pool
   for the caller to fill and send.  Returns 0, or NETSIM_ERR_POOL. */
int netsim_sim_pkt_alloc(netsim_sim *sim, netsim_pkt **ppkt);

/* netsim_sim_pkt_free returns |pkt| to the simulation's pool. */
void netsim_sim_pkt_free(netsim_sim *sim, netsim_pkt *pkt);

/* Building a network by hand (the topology builders use the same calls).
   Node ids number hosts and switches together in creation order. */

/* netsim_sim_add_host adds a host with one NIC port; its address is
   NETSIM_ADDR_BASE + its host index.  Returns 0, NETSIM_ERR_STATE (routes
   were already built) or NETSIM_ERR_NOMEM. */
int netsim_sim_add_host(netsim_sim *sim, netsim_host **phost);

/* netsim_sim_add_switch adds a switch with |n_ports| ports (1..65535);
   its ECMP seed is derived from the master seed and its switch index.
   Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_sim_add_switch(netsim_sim *sim, uint32_t n_ports,
                          netsim_switch **psw);

/* netsim_sim_connect joins port |port_a| of node |a| and port |port_b| of
   node |b| with a cable: link a->b configured by |ab| and link b->a by
   |ba|.  The a->b link gets id |*plink| (if not NULL), b->a the next id.
   Returns 0, NETSIM_ERR_INVAL (bad node, port already used, bad config),
   NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_sim_connect(netsim_sim *sim, uint32_t a, uint32_t port_a, uint32_t b,
                       uint32_t port_b, const netsim_linkcfg *ab,
                       const netsim_linkcfg *ba, uint32_t *plink);

/* netsim_sim_build_routes computes every switch's ECMP next-hop sets by
   breadth-first search over the links routing considers up.  The builders
   call it; call it after building by hand.  Returns 0, NETSIM_ERR_STATE
   (a host has no NIC link) or NETSIM_ERR_NOMEM. */
int netsim_sim_build_routes(netsim_sim *sim);

/* netsim_sim_n_hosts, _n_switches, _n_links and _n_nodes count them. */
uint32_t netsim_sim_n_hosts(const netsim_sim *sim);
uint32_t netsim_sim_n_switches(const netsim_sim *sim);
uint32_t netsim_sim_n_links(const netsim_sim *sim);
uint32_t netsim_sim_n_nodes(const netsim_sim *sim);

/* netsim_sim_host returns host |idx|, or NULL. */
netsim_host *netsim_sim_host(netsim_sim *sim, uint32_t idx);

/* netsim_sim_switch returns switch |idx| (creation order), or NULL. */
netsim_switch *netsim_sim_switch(netsim_sim *sim, uint32_t idx);

/* netsim_sim_link returns link |id|, or NULL. */
netsim_link *netsim_sim_link(netsim_sim *sim, uint32_t id);

/* netsim_sim_host_by_addr returns the host with address |addr|, or
   NULL. */
netsim_host *netsim_sim_host_by_addr(netsim_sim *sim, netsim_addr addr);

/* netsim_sim_count_paths returns the number of distinct equal-cost paths
   routing offers from host |src| to host |dst| (the product of ECMP
   fan-outs along the shortest-path DAG, counted as paths), or 0 if there is
   none. */
uint64_t netsim_sim_count_paths(netsim_sim *sim, uint32_t src, uint32_t dst);

/* netsim_sim_trace_hash returns the running hash of every packet event
   (arrival at the end of a link, drop) with its time, link and packet: two
   runs with equal hashes did the same thing in the same order. */
uint64_t netsim_sim_trace_hash(const netsim_sim *sim);

/* Why a packet was dropped. */
typedef enum netsim_drop_reason {
  /* NETSIM_DROP_QUEUE: the output queue was full (drop-tail). */
  NETSIM_DROP_QUEUE = 0,
  /* NETSIM_DROP_LINK_DOWN: sent onto, queued on or in flight on a link
     that is down (the blackhole before reconvergence). */
  NETSIM_DROP_LINK_DOWN,
  /* NETSIM_DROP_LOSS: random loss on the link. */
  NETSIM_DROP_LOSS,
  /* NETSIM_DROP_NO_ROUTE: no next hop for the destination. */
  NETSIM_DROP_NO_ROUTE,
  /* NETSIM_DROP_TTL: the packet crossed max_hops links. */
  NETSIM_DROP_TTL,
  NETSIM_DROP_REASONS
} netsim_drop_reason;

/* netsim_drop_cb is told of each drop before the packet returns to the
   pool; it must not keep |pkt|.  |link| is where it happened (NULL for a
   switch's routing drops). */
typedef void (*netsim_drop_cb)(netsim_sim *sim, const netsim_pkt *pkt,
                               netsim_drop_reason why, netsim_link *link,
                               void *user);

/* netsim_sim_set_drop_cb installs |cb| (NULL to remove) and returns the
   previous one in |*prev| and |*prev_user| (either may be NULL), so that
   hooks can chain. */
void netsim_sim_set_drop_cb(netsim_sim *sim, netsim_drop_cb cb, void *user,
                            netsim_drop_cb *prev, void **prev_user);

/* netsim_tap_cb sees every packet as it reaches the end of |link| (for
   pcap and tracing), and a duplicating link's copy when it is delivered
   (NETSIM_PKT_DUP set); it must not keep or change |pkt|. */
typedef void (*netsim_tap_cb)(netsim_sim *sim, const netsim_pkt *pkt,
                              const netsim_link *link, void *user);

/* netsim_sim_set_tap installs |cb| (NULL to remove). */
void netsim_sim_set_tap(netsim_sim *sim, netsim_tap_cb cb, void *user);

/* netsim_dup_cb is told of each copy a duplicating link makes
   (netsim_link_set_dup), when it makes it: |copy| is a clone of |orig|
   (every field a transport fills, and the carried bytes, copied;
   NETSIM_PKT_DUP set).  A transport whose packets refer to state of its
   own outside them (|flow| or |tag| naming a buffer, say) duplicates that
   state here, or refuses the copy.  Return 0 to let the copy go; anything
   else has netsim free it unsent, counted as dup_skipped (the drop
   callback is not told).  It must not keep |copy| or send either packet,
   and it passes the packets it does not own to the previous callback. */
typedef int (*netsim_dup_cb)(netsim_sim *sim, const netsim_pkt *orig,
                             netsim_pkt *copy, void *user);

/* netsim_sim_set_dup_cb installs |cb| (NULL to remove) and returns the
   previous one in |*prev| and |*prev_user| (either may be NULL), so that
   hooks can chain. */
void netsim_sim_set_dup_cb(netsim_sim *sim, netsim_dup_cb cb, void *user,
                           netsim_dup_cb *prev, void **prev_user);

/* netsim_sim_stats counts what happened in the whole network. */
typedef struct netsim_sim_stats {
  /* events is the number of events fired. */
  uint64_t events;
  /* hops is the number of packets that reached the end of a link. */
  uint64_t hops;
  /* sent is the number of packets hosts handed to netsim_host_send. */
  uint64_t sent;
  /* delivered is the number of packets that reached their host. */
  uint64_t delivered;
  /* delivered_bytes is their size in bytes. */
  uint64_t delivered_bytes;
  /* drops counts drops by netsim_drop_reason. */
  uint64_t drops[NETSIM_DROP_REASONS];
  /* ecn_marked is the number of CE marks applied. */
  uint64_t ecn_marked;
  /* pkts_in_use is the number of packets allocated now. */
  uint32_t pkts_in_use;
  /* reroutes counts routing recomputations after faults. */
  uint32_t reroutes;
  /* corrupted counts packets hit by bit errors, once per link that hit
     them (netsim_link_set_ber); they were delivered, not dropped. */
  uint64_t corrupted;
  /* duplicated counts the copies duplicating links made
     (netsim_link_set_dup), dup_skipped the copies they drew but could not
     make (the packet pool was empty, or the dup callback refused). */
  uint64_t duplicated;
  uint64_t dup_skipped;
} netsim_sim_stats;

/* netsim_sim_get_stats copies the counters into |st|. */
void netsim_sim_get_stats(const netsim_sim *sim, netsim_sim_stats *st);

/* ------------------------------------------------------------------------ */
/* Links and their output queues                                            */

/* netsim_link_info describes a link (one direction of a cable). */
typedef struct netsim_link_info {
  /* id is the link's id; its reverse direction is |peer|. */
  uint32_t id;
  /* peer is the id of the link in the other direction. */
  uint32_t peer;
  /* from_node and from_port: where the link (and its queue) starts. */
  uint32_t from_node;
  uint32_t from_port;
  /* to_node and to_port: where it ends. */
  uint32_t to_node;
  uint32_t to_port;
  /* rate_bps is the current rate (degraded or not). */
  uint64_t rate_bps;
  /* base_rate_bps is the configured rate. */
  uint64_t base_rate_bps;
  /* delay is the propagation delay. */
  netsim_time delay;
  /* queue_bytes is the queue's byte limit. */
  uint64_t queue_bytes;
  /* ecn_bytes is the marking threshold (0: none). */
  uint64_t ecn_bytes;
  /* loss is the random loss probability. */
  double loss;
  /* ber is the bit-error rate (netsim_link_set_ber). */
  double ber;
  /* dup is the duplication probability and dup_delay how much later a
     copy follows its original (netsim_link_set_dup). */
  double dup;
  netsim_time dup_delay;
  /* up is 1 if the link carries packets. */
  int up;
  /* routed is 1 if routing uses the link (lags |up| by reconvergence). */
  int routed;
} netsim_link_info;

/* netsim_link_stats counts one link and its queue. */
typedef struct netsim_link_stats {
  /* enq_pkts and enq_bytes: packets admitted to the queue. */
  uint64_t enq_pkts;
  uint64_t enq_bytes;
  /* rx_pkts and rx_bytes: packets that reached the far end (before
     random loss is applied there). */
  uint64_t rx_pkts;
  uint64_t rx_bytes;
  /* drops counts drops on this link by netsim_drop_reason. */
  uint64_t drops[NETSIM_DROP_REASONS];
  /* ecn_marked is the number of packets this queue marked. */
  uint64_t ecn_marked;
  /* q_bytes and q_pkts: the queue now (not yet fully serialised). */
  uint64_t q_bytes;
  uint32_t q_pkts;
  /* max_q_bytes is the deepest the queue has been. */
  uint64_t max_q_bytes;
  /* q_byte_ps is the integral of the queue depth over time (bytes x ps)
     for the packets admitted so far: divide by a duration for the mean. */
  double q_byte_ps;
  /* busy_until is when the link finishes serialising what it holds. */
  netsim_time busy_until;
  /* corrupted counts packets that reached the far end hit by at least one
     bit error, bit_errors the errors (a packet may take several). */
  uint64_t corrupted;
  uint64_t bit_errors;
  /* duplicated counts the copies the link made (netsim_link_set_dup),
     dup_skipped those it drew but could not make (no packet or payload
     buffer in the pool, or the dup callback refused); dup_pending is how
     many copies are waiting for their time now. */
  uint64_t duplicated;
  uint64_t dup_skipped;
  uint32_t dup_pending;
} netsim_link_stats;

/* netsim_link_get_info describes |link| in |info|. */
void netsim_link_get_info(const netsim_link *link, netsim_link_info *info);

/* netsim_link_get_stats copies |link|'s counters, as of the current time,
   into |st|. */
void netsim_link_get_stats(netsim_link *link, netsim_link_stats *st);

/* netsim_link_id returns |link|'s id. */
uint32_t netsim_link_id(const netsim_link *link);

/* netsim_link_queue_bytes returns the bytes queued on |link| now
   (including the packet being serialised). */
uint64_t netsim_link_queue_bytes(netsim_link *link);

/* netsim_link_set_up brings one direction up or down now.  Going down
   drops every packet queued on or in flight on it; routing is not told
   (use netsim_fault_* for a failure that routing reacts to). */
void netsim_link_set_up(netsim_sim *sim, netsim_link *link, int up);

/* netsim_link_set_rate changes one direction's rate now (0 restores the
   configured rate).  Packets already queued keep the departure times they
   were given; later ones use the new rate.  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_link_set_rate(netsim_sim *sim, netsim_link *link, uint64_t rate_bps);

/* netsim_link_set_loss sets one direction's random loss probability |p|
   (drawn from the link's own stream).  Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_loss(netsim_link *link, double p);

/* netsim_link_set_ber sets one direction's bit-error rate |ber| (0 to 1;
   0 turns errors off).  Errors hit the bits of the packets that reach the
   far end independently, each with probability |ber|: a packet of B
   bytes is hit with probability 1 - (1 - ber)^(8 B).  The link draws
   where the next error falls in its stream of bits (a geometric gap,
   from its own random stream NETSIM_STREAM_CORRUPT): an error in a
   carried byte flips that bit (NETSIM_PKT_FLIPPED), one beyond them sets
   NETSIM_PKT_CORRUPT.  The packet is delivered; the link counts it.
   Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_ber(netsim_link *link, double ber);

/* netsim_link_set_dup makes one direction duplicate packets: each packet
   that reaches the far end (and is not lost there) is duplicated with
   probability |p| (0 to 1; 0 turns duplication off), drawn from the
   link's own random stream NETSIM_STREAM_DUP, and the copy is delivered
   to the same next hop (switch or host) exactly |delay| (up to 1000 s)
   after the original.  The copy models a duplicate made in the fabric
   after the link (a switch or a link layer that sends a frame twice): it
   bypasses the link's queue and rate, so it takes no room and no time on
   the link, and it is neither lost nor hit by bit errors again (a packet
   corrupted on the link is copied as it arrived).  It is a clone of the
   packet from the pool, its carried bytes copied and NETSIM_PKT_DUP set;
   if the pool has no packet or payload buffer for it, the copy is
   skipped and counted (dup_skipped).  Copies keep their order in time
   whatever |delay| becomes later; those already made keep their time.
   The dup callback (netsim_sim_set_dup_cb) sees each copy.  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM (the event list could not make
   room for the link's copy timer). */
int netsim_link_set_dup(netsim_link *link, double p, netsim_time delay);

/* netsim_link_set_queue sets the queue's byte limit and ECN threshold (0:
   none).  Returns 0 or NETSIM_ERR_INVAL. */
int netsim_link_set_queue(netsim_link *link, uint64_t queue_bytes,
                          uint64_t ecn_bytes);

/* ------------------------------------------------------------------------ */
/* Switches                                                                 */

/* netsim_ecmp_hash hashes 5-tuple |key| with switch seed |seed|: the
   fields are packed into two 64-bit words, each xored into the state and
   run through netsim_mix64.  Equal keys and seeds give equal hashes; any
   change of a field or the seed changes about half the bits. */
uint64_t netsim_ecmp_hash(uint64_t seed, const netsim_flowkey *key);

/* netsim_ecmp_pick maps hash |h| onto [0, |n|) by the high 32 bits
   (multiply-shift, no modulo bias worth measuring). */
static inline uint32_t netsim_ecmp_pick(uint64_t h, uint32_t n) {
  return (uint32_t)(((h >> 32) * (uint64_t)n) >> 32);
}

/* netsim_switch_node returns the switch's node id. */
uint32_t netsim_switch_node(const netsim_switch *sw);

/* netsim_switch_index returns the switch's index among switches. */
uint32_t netsim_switch_index(const netsim_switch *sw);

/* netsim_switch_n_ports returns the number of ports. */
uint32_t netsim_switch_n_ports(const netsim_switch *sw);

/* netsim_switch_seed and netsim_switch_set_seed read and replace the ECMP
   hash seed. */
uint64_t netsim_switch_seed(const netsim_switch *sw);
void netsim_switch_set_seed(netsim_switch *sw, uint64_t seed);

/* netsim_switch_port_link returns the link leaving |port|, or NULL. */
netsim_link *netsim_switch_port_link(netsim_switch *sw, uint32_t port);

/* netsim_switch_next_hops writes up to |cap| ports of the ECMP set
   towards host |dst_host| into |ports| and returns the set's size. */
uint32_t netsim_switch_next_hops(const netsim_switch *sw, uint32_t dst_host,
                                 uint32_t *ports, uint32_t cap);

/* netsim_switch_route returns the port the switch forwards a packet with
   5-tuple |key| to, or -1 (no route). */
int netsim_switch_route(const netsim_switch *sw, const netsim_flowkey *key);

/* ------------------------------------------------------------------------ */
/* Hosts                                                                    */

/* netsim_host_rx_cb receives a packet that reached |host|; the callback
   owns |pkt| (free it, keep it, or send it again). */
typedef void (*netsim_host_rx_cb)(netsim_sim *sim, netsim_host *host,
                                  netsim_pkt *pkt, void *user);

/* netsim_host_set_rx installs the receive callback (NULL: packets are
   counted and freed). */
void netsim_host_set_rx(netsim_host *host, netsim_host_rx_cb cb, void *user);

/* netsim_host_send queues |pkt| on the host's NIC; ownership passes to
   netsim whatever happens.  The caller fills key, size (>= 1), flags, flow,
   tag and payload; the bit-error flags and NETSIM_PKT_DUP are cleared.  Returns
   0, NETSIM_ERR_INVAL (size 0: the packet is freed), or NETSIM_ERR_DROPPED (NIC
   queue full or link down: counted, the drop callback told, the packet freed).
 */
int netsim_host_send(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt);

/* netsim_host_index returns the host's index (0..n_hosts-1). */
uint32_t netsim_host_index(const netsim_host *host);

/* netsim_host_node returns the host's node id. */
uint32_t netsim_host_node(const netsim_host *host);

/* netsim_host_addr returns the host's address. */
netsim_addr netsim_host_addr(const netsim_host *host);

/* netsim_host_nic returns the link from the host into its switch. */
netsim_link *netsim_host_nic(netsim_host *host);

/* netsim_host_tx_free_at returns when the NIC will have serialised all it
   holds (now, if idle): a transport paces itself by it. */
netsim_time netsim_host_tx_free_at(const netsim_host *host);

/* netsim_host_rx_pkts returns the packets delivered to the host. */
uint64_t netsim_host_rx_pkts(const netsim_host *host);

/* ------------------------------------------------------------------------ */
/* Topologies                                                               */

/* netsim_topo_info says what a builder made.  Host i is node i; switches
   are numbered (netsim_sim_switch) in the order listed per builder. */
typedef struct netsim_topo_info {
  /* n_hosts, n_switches and n_links count what the builder added. */
  uint32_t n_hosts;
  uint32_t n_switches;
  uint32_t n_links;
  /* tier_first[t] is the index of the first switch of tier t (0: ToR or
     edge or the left switch, 1: aggregation or spine or the right switch,
     2: core) and tier_count[t] how many there are. */
  uint32_t tier_first[3];
  uint32_t tier_count[3];
  /* uplink_first is the id of the first switch-to-switch link. */
  uint32_t uplink_first;
} netsim_topo_info;

/* netsim_fattree_settings describes a k-ary three-tier fat tree (Al-Fares
   et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation switches,
   (k/2)^2 core switches, k^3/4 hosts. */
typedef struct netsim_fattree_settings {
  /* k is even, 2..64. */
  uint32_t k;
  /* host is the host<->edge cable; host.queue_bytes is also the NIC
     queue (see nic_queue_bytes). */
  netsim_linkcfg host;
  /* edge_agg is the edge<->aggregation cable. */
  netsim_linkcfg edge_agg;
  /* agg_core is the aggregation<->core cable. */
  netsim_linkcfg agg_core;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
} netsim_fattree_settings;

/* netsim_fattree_settings_default fills |s| for |k| with
   netsim_linkcfg_default() everywhere and a 1 MiB NIC queue. */
void netsim_fattree_settings_default(netsim_fattree_settings *s, uint32_t k);

/* netsim_topo_fattree builds a fat tree into the empty |sim| and its
   routes.  Host h sits in pod h / (k^2/4), under edge switch
   (h / (k/2)) % (k/2) of that pod, at edge port h % (k/2).  Switches:
   edges pod by pod, then aggregations pod by pod, then cores.  Edge ports
   0..k/2-1 face hosts, k/2..k-1 aggregation j at port k/2+j; aggregation
   ports 0..k/2-1 face edges, k/2+c core j*(k/2)+c; core port p faces pod
   p.  Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE (|sim| not empty) or
   NETSIM_ERR_NOMEM; |info| may be NULL. */
int netsim_topo_fattree(netsim_sim *sim, const netsim_fattree_settings *s,
                        netsim_topo_info *info);

/* netsim_leafspine_settings describes a two-tier leaf-spine fabric. */
typedef struct netsim_leafspine_settings {
  /* spines, leaves and hosts_per_leaf size the fabric (each >= 1). */
  uint32_t spines;
  uint32_t leaves;
  uint32_t hosts_per_leaf;
  /* host is the host<->leaf cable. */
  netsim_linkcfg host;
  /* fabric is the leaf<->spine cable; if fabric.rate_bps is 0, it is set
     from |oversub|: hosts_per_leaf * host rate / (spines * oversub). */
  netsim_linkcfg fabric;
  /* oversub is the oversubscription ratio (host capacity of a leaf over
     its uplink capacity) used when fabric.rate_bps is 0; 1 = none. */
  double oversub;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
  /* spine_rate_bps, if not NULL, gives each spine's cables a rate of its
     own (spines entries; 0 keeps fabric.rate_bps): an asymmetric fabric. */
  const uint64_t *spine_rate_bps;
} netsim_leafspine_settings;

/* netsim_leafspine_settings_default fills |s| (defaults for links, no
   oversubscription). */
void netsim_leafspine_settings_default(netsim_leafspine_settings *s,
                                       uint32_t spines, uint32_t leaves,
                                       uint32_t hosts_per_leaf);

/* netsim_topo_leafspine builds a leaf-spine fabric into the empty |sim|.
   Host h is under leaf h / hosts_per_leaf at port h % hosts_per_leaf;
   leaf ports hosts_per_leaf + s face spine s; spine port l faces leaf l.
   Switches: leaves, then spines.  Returns 0, NETSIM_ERR_INVAL,
   NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_topo_leafspine(netsim_sim *sim, const netsim_leafspine_settings *s,
                          netsim_topo_info *info);

/* netsim_dumbbell_settings describes two switches joined by N parallel
   links, with hosts on either side: the "parallel paths" fabric. */
typedef struct netsim_dumbbell_settings {
  /* paths is the number of parallel links between the switches (>= 1). */
  uint32_t paths;
  /* hosts_per_side is the number of hosts on each switch (>= 1). */
  uint32_t hosts_per_side;
  /* host is the host<->switch cable. */
  netsim_linkcfg host;
  /* path is every parallel cable's configuration. */
  netsim_linkcfg path;
  /* path_rate_bps, if not NULL, gives path i its own rate (0: path). */
  const uint64_t *path_rate_bps;
  /* path_delay, if not NULL, gives path i its own delay. */
  const netsim_time *path_delay;
  /* nic_queue_bytes is the host NIC's queue (0: host.queue_bytes). */
  uint64_t nic_queue_bytes;
} netsim_dumbbell_settings;

/* netsim_dumbbell_settings_default fills |s|. */
void netsim_dumbbell_settings_default(netsim_dumbbell_settings *s,
                                      uint32_t paths);

/* netsim_topo_dumbbell builds the parallel-paths fabric into the empty
   |sim|: hosts 0..H-1 on switch 0 (left), H..2H-1 on switch 1 (right);
   host ports come first (0..H-1), path i is port H+i on both switches,
   and link ids uplink_first + 2i (left to right) and + 2i+1 (back).
   Returns 0, NETSIM_ERR_INVAL, NETSIM_ERR_STATE or NETSIM_ERR_NOMEM. */
int netsim_topo_dumbbell(netsim_sim *sim, const netsim_dumbbell_settings *s,
                         netsim_topo_info *info);

/* ------------------------------------------------------------------------ */
/* Faults                                                                   */

/* netsim_fault_link_down takes the cable of link |link_id| (both
   directions) down at |at| (now if in the past): packets queued or in
   flight on it are lost, and packets sent onto it are lost until routing
   reconverges, settings.reconverge later, and stops using it.  Returns 0,
   NETSIM_ERR_NOENT or NETSIM_ERR_POOL (no free event). */
int netsim_fault_link_down(netsim_sim *sim, uint32_t link_id, netsim_time at);

/* netsim_fault_link_up brings the cable back up at |at|; routing uses it
   again settings.reconverge later.  Returns as netsim_fault_link_down. */
int netsim_fault_link_up(netsim_sim *sim, uint32_t link_id, netsim_time at);

/* netsim_fault_degrade sets both directions of the cable to |rate_bps| at
   |at| (0 restores the configured rates).  Returns 0, NETSIM_ERR_NOENT,
   NETSIM_ERR_INVAL or NETSIM_ERR_POOL. */
int netsim_fault_degrade(netsim_sim *sim, uint32_t link_id, uint64_t rate_bps,
                         netsim_time at);

/* netsim_fault_loss sets random loss |p| on both directions of the cable
   now.  Returns 0, NETSIM_ERR_NOENT or NETSIM_ERR_INVAL. */
int netsim_fault_loss(netsim_sim *sim, uint32_t link_id, double p);

/* netsim_fault_loss_all sets random loss |p| on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_fault_loss_all(netsim_sim *sim, double p, int fabric_only);

/* netsim_fault_ber sets bit-error rate |ber| (netsim_link_set_ber) on both
   directions of the cable now.  Returns 0, NETSIM_ERR_NOENT or
   NETSIM_ERR_INVAL. */
int netsim_fault_ber(netsim_sim *sim, uint32_t link_id, double ber);

/* netsim_fault_ber_all sets bit-error rate |ber| on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0 or
   NETSIM_ERR_INVAL. */
int netsim_fault_ber_all(netsim_sim *sim, double ber, int fabric_only);

/* netsim_fault_dup makes both directions of the cable duplicate packets
   with probability |p|, each copy |delay| after its original
   (netsim_link_set_dup), now.  Returns 0, NETSIM_ERR_NOENT,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_fault_dup(netsim_sim *sim, uint32_t link_id, double p,
                     netsim_time delay);

/* netsim_fault_dup_all does the same on every link now (with
   |fabric_only|, only on switch-to-switch links).  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_fault_dup_all(netsim_sim *sim, double p, netsim_time delay,
                         int fabric_only);

/* ------------------------------------------------------------------------ */
/* Built-in traffic (tests and the benchmark; transports come later)        */

typedef struct netsim_traffic netsim_traffic;

/* netsim_flow_settings describes one flow of fixed 5-tuple packets from
   host src to host dst.  Exactly one of |rate_bps| (constant bit rate) and
   |window| (closed loop) is nonzero. */
typedef struct netsim_flow_settings {
  /* src and dst are host indices. */
  uint32_t src;
  uint32_t dst;
  /* sport, dport and proto complete the 5-tuple. */
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  /* ect marks the packets ECN-capable. */
  uint8_t ect;
  /* pkt_bytes is each packet's size on the wire. */
  uint32_t pkt_bytes;
  /* rate_bps: send at this constant rate (departure times computed from
     cumulative bytes, so they do not drift). */
  uint64_t rate_bps;
  /* window: keep this many packets outstanding; a delivered packet lets
     the source send one more |ack_delay| later (0: at once, an ideal
     feedback), a dropped one |retry| later. */
  uint32_t window;
  /* ack_delay and retry: see |window|. */
  netsim_time ack_delay;
  netsim_time retry;
  /* max_pkts stops the flow after this many packets (0: no limit). */
  uint64_t max_pkts;
  /* start and stop bound when the flow sends (stop 0: never stops). */
  netsim_time start;
  netsim_time stop;
} netsim_flow_settings;

/* netsim_flow_settings_default fills |s|: UDP, 1500 B packets, window 16,
   retry 10 us, from 0 forever. */
void netsim_flow_settings_default(netsim_flow_settings *s);

/* netsim_flow_stats counts one flow. */
typedef struct netsim_flow_stats {
  /* sent and sent_bytes: packets the source handed to its NIC. */
  uint64_t sent;
  uint64_t sent_bytes;
  /* delivered and delivered_bytes: packets that reached dst. */
  uint64_t delivered;
  uint64_t delivered_bytes;
  /* dropped: packets lost anywhere (queues, links, routing). */
  uint64_t dropped;
  /* ecn_marked: delivered packets carrying CE. */
  uint64_t ecn_marked;
  /* no_pkt: sends skipped because the packet pool was empty. */
  uint64_t no_pkt;
  /* first_rx and last_rx: when the first and last packets arrived. */
  netsim_time first_rx;
  netsim_time last_rx;
  /* latency_sum: the sum of one-way delays of delivered packets. */
  netsim_time latency_sum;
  /* dup_rx: copies made by duplicating links (NETSIM_PKT_DUP) that
     reached dst; they are not counted above, and a window flow takes no
     credit from them (nor from a copy's drop). */
  uint64_t dup_rx;
} netsim_flow_stats;

/* netsim_traffic_new creates a traffic generator for up to |max_flows|
   flows on |sim|.  It owns the receive callback of every host a flow
   ends at and chains the simulation's drop callback.  Returns 0,
   NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_traffic_new(netsim_traffic **ptr, netsim_sim *sim,
                       uint32_t max_flows);

/* netsim_traffic_del frees |tr| (NULL is fine), cancels its pending events
   and restores the drop callback it chained; call it before
   netsim_sim_del. */
void netsim_traffic_del(netsim_traffic *tr);

/* netsim_traffic_add_flow adds a flow (starting at s->start) and writes
   its id to |*pid| (may be NULL).  Packets carry proto s->proto, flow =
   the flow id and tag = the per-flow sequence number.  Returns 0,
   NETSIM_ERR_INVAL, NETSIM_ERR_POOL (max_flows reached) or
   NETSIM_ERR_NOMEM. */
int netsim_traffic_add_flow(netsim_traffic *tr, const netsim_flow_settings *s,
                            uint32_t *pid);

/* netsim_traffic_permutation adds one flow per host, from each host to a
   distinct other host (a random derangement drawn from the simulation's
   traffic stream |stream|), each shaped by |tmpl| (its src, dst and sport
   are replaced: sport = 1024 + src).  Returns as add_flow. */
int netsim_traffic_permutation(netsim_traffic *tr,
                               const netsim_flow_settings *tmpl,
                               uint64_t stream);

/* netsim_traffic_n_flows returns the number of flows. */
uint32_t netsim_traffic_n_flows(const netsim_traffic *tr);

/* netsim_traffic_flow_stats copies flow |id|'s counters into |st|.
   Returns 0 or NETSIM_ERR_NOENT. */
int netsim_traffic_flow_stats(const netsim_traffic *tr, uint32_t id,
                              netsim_flow_stats *st);

/* netsim_traffic_flow_dst returns flow |id|'s destination host, or
   UINT32_MAX. */
uint32_t netsim_traffic_flow_dst(const netsim_traffic *tr, uint32_t id);

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */

/* netsim_stats_share writes to |share[i]| the fraction of the bytes sent
   on links |ids[0..n-1]| that went over link ids[i] (all 0 if none did)
   and returns the total bytes.  Use it on a switch's uplinks to see how
   ECMP spread the load. */
uint64_t netsim_stats_share(netsim_sim *sim, const uint32_t *ids, uint32_t n,
                            double *share);

/* What netsim_stats_busiest ranks links by. */
typedef enum netsim_busy_by {
  /* NETSIM_BUSY_BYTES: bytes that reached the far end. */
  NETSIM_BUSY_BYTES = 0,
  /* NETSIM_BUSY_QUEUE: mean queue depth (q_byte_ps). */
  NETSIM_BUSY_QUEUE,
  /* NETSIM_BUSY_MAX_QUEUE: deepest queue. */
  NETSIM_BUSY_MAX_QUEUE
} netsim_busy_by;

/* netsim_stats_busiest writes the ids of the up to |n| busiest links by
   |by| into |ids|, busiest first (ties by lower id), and returns how many.
   Returns 0 if the work array cannot be allocated. */
uint32_t netsim_stats_busiest(netsim_sim *sim, netsim_busy_by by, uint32_t n,
                              uint32_t *ids);

typedef struct netsim_sampler netsim_sampler;

/* netsim_sampler_new samples the queue depth of links |ids[0..n-1]| every
   |period| from |start| until |max_samples| samples are taken.  Returns
   0, NETSIM_ERR_INVAL, NETSIM_ERR_NOENT (bad link id) or
   NETSIM_ERR_NOMEM. */
int netsim_sampler_new(netsim_sampler **psmp, netsim_sim *sim,
                       const uint32_t *ids, uint32_t n, netsim_time start,
                       netsim_time period, uint32_t max_samples);

/* netsim_sampler_del stops and frees |smp| (NULL is fine); call it before
   netsim_sim_del. */
void netsim_sampler_del(netsim_sampler *smp);

/* netsim_sampler_count returns the number of samples taken. */
uint32_t netsim_sampler_count(const netsim_sampler *smp);

/* netsim_sampler_time returns when sample |i| was taken. */
netsim_time netsim_sampler_time(const netsim_sampler *smp, uint32_t i);

/* netsim_sampler_bytes returns link j's (|ids[j]|) queue depth in bytes
   at sample |i|. */
uint64_t netsim_sampler_bytes(const netsim_sampler *smp, uint32_t i,
                              uint32_t j);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_H */
