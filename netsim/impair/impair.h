/*
 * impair.h: the impairment model, the one every place that impairs packets
 * uses: srd_loop's in-memory wire (netsim/wire), the UDP driver's
 * impairment layer (transports/udp) and netsim's links (netsim/core).
 *
 * The model is sans-I/O, like libsrd: it reads no clock (time is an
 * argument, in nanoseconds), sends nothing, depends on nothing but the C
 * library and allocates nothing per packet.  Every draw comes from seeded
 * streams, so what it does is a function of its seed, its configuration
 * and the packets offered to it.  It has three parts:
 *
 * - Random streams (impair_rng): splitmix64, one word of state.  A stream
 *   is named by (master seed, class, id), so a component's draws depend on
 *   its own identity only: adding a link shifts no other stream.  netsim
 *   draws all its random numbers from this generator.
 *
 * - The link (impair_link): what one direction of one path does to the
 *   packets it carries.  impair_link_send() decides an offered packet's
 *   fate: dropped, and why (a blackhole, random loss, the rate cap's full
 *   queue), or delivered at a time T after delay, jitter, reordering and
 *   the rate cap, perhaps twice (a duplicate, at T2).  As the caller
 *   delivers each copy it asks which bits flip (impair_link_corrupt(), or
 *   impair_link_flips() to walk them).  A caller with physics of its own
 *   (netsim's links have their rate, propagation and switch queues) uses
 *   only the draws it needs: impair_link_lose(), impair_link_dup() and the
 *   flips.
 *
 * - The delay queue (impair_q): packets waiting for their time, in slots
 *   of a size the caller chooses, popped in time order (ties in the order
 *   they were pushed).  srd_loop's wire and the UDP driver hold their
 *   delayed packets in one.
 *
 * Draws.  Each impairment draws from a stream of its own (loss,
 * duplication, reordering, jitter, corruption), so that turning one on, or
 * changing it, leaves every other impairment's draws as they were: with
 * and without corruption the same packets are lost, duplicated, reordered
 * and delayed alike.  A probability p is compared as an integer: a draw
 * hits when its 64 bits fall below impair_threshold(p), and p = 0 or
 * p = 1 draws nothing.
 */
#ifndef IMPAIR_H
#define IMPAIR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* impair_time is a point in time or a span, in nanoseconds. */
typedef uint64_t impair_time;

/* IMPAIR_NONE means "no time" (an empty queue) or "no bit" (no more
   flips). */
#define IMPAIR_NONE UINT64_MAX

/* Errors.  The functions that can fail return 0 or a negative errno, as
   liburing's calls do (docs/errors.md): -EINVAL (an argument is out of
   range) or -ENOMEM (out of memory); strerror(-rv) names it.  Each
   caller translates at its own boundary: netsim's links into
   NETSIM_ERR_*, srd_loop into SRD_ERR_*, the UDP driver not at all. */

/* ------------------------------------------------------------------------ */
/* Random streams                                                           */

/* impair_rng is one random stream (splitmix64, Steele, Lea and Flood,
   OOPSLA 2014): state advances by the golden gamma on every draw. */
typedef struct impair_rng {
  uint64_t state;
} impair_rng;

/* Stream classes.  A link's streams are (seed, IMPAIR_STREAM_*, the
   link's id).  Classes 2 and 3 are netsim's (switches, traffic), 16 and
   up are free for any other user.  Loss, corruption and duplication have
   the classes netsim's links have always drawn them from. */
#define IMPAIR_STREAM_LOSS 1u
#define IMPAIR_STREAM_CORRUPT 4u
#define IMPAIR_STREAM_DUP 5u
#define IMPAIR_STREAM_REORDER 6u
#define IMPAIR_STREAM_JITTER 7u

/* impair_mix64 is a 64-bit finalizer (splitmix64, Stafford's variant 13):
   every input bit affects every output bit. */
static inline uint64_t impair_mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* impair_rng_init seeds |rng| with stream |id| of class |cls| derived
   from |master|: mix(master ^ mix(cls << 56 ^ id ^ a constant)). */
void impair_rng_init(impair_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id);

/* impair_rng_next returns the next 64 random bits of |rng|. */
static inline uint64_t impair_rng_next(impair_rng *rng) {
  rng->state += 0x9E3779B97F4A7C15ULL;
  return impair_mix64(rng->state);
}

/* impair_rng_below returns a value in [0, |n|), |n| > 0, from one draw
   (the high half of draw * n: a bias below n / 2^64). */
static inline uint64_t impair_rng_below(impair_rng *rng, uint64_t n) {
  __extension__ typedef unsigned __int128 u128;

  return (uint64_t)(((u128)impair_rng_next(rng) * n) >> 64);
}

/* impair_threshold converts probability |p| into the threshold that
   impair_rng_next() values fall below with probability |p|: 0 for p <= 0
   (and NaN), UINT64_MAX for p >= 1. */
uint64_t impair_threshold(double p);

/* impair_rng_chance draws whether an event of threshold |thr|
   (impair_threshold) happens.  Thresholds 0 (never) and UINT64_MAX
   (always) draw nothing. */
static inline int impair_rng_chance(impair_rng *rng, uint64_t thr) {
  return thr != 0 && (thr == UINT64_MAX || impair_rng_next(rng) < thr);
}

/* ------------------------------------------------------------------------ */
/* The link                                                                 */

/* impair_cfg configures one direction of one path.  All zero is a clean
   link that delivers every packet at once. */
typedef struct impair_cfg {
  impair_time delay;         /* one-way propagation delay */
  impair_time jitter;        /* extra delay, uniform in [0, jitter]; the link
                                stays FIFO (only reorder reorders) */
  double loss;               /* probability a packet is lost, 0..1 */
  double dup;                /* probability a packet is duplicated, 0..1 */
  double reorder;            /* probability a copy is held back, 0..1 */
  impair_time reorder_delay; /* how long a held-back copy waits */
  uint64_t rate_bps;         /* serialisation rate, 0 for none */
  uint64_t queue_bytes;      /* queue limit at that rate, 0 for none */
  int blackhole;             /* drop every packet from blackhole_from on */
  impair_time blackhole_from;
  /* dup_delay: a duplicate's copy arrives this much later than the
     original would (outside the FIFO, like a reordered copy), so that it
     can outlive every timer; 0 sends it right behind the original. */
  impair_time dup_delay;
  /* corrupt: the probability that a delivered copy has one bit flipped,
     chosen uniformly among all its bits (header and payload alike). */
  double corrupt;
  /* ber: the bit-error rate: every bit of a delivered copy is hit
     independently with this probability (a packet of n bits is hit with
     probability 1 - (1 - ber)^n), 0..1. */
  double ber;
} impair_cfg;

/* impair_stats counts what one link did.  Every copy offered (sent +
   duplicated) is blackholed, lost, a queue drop, or arrives. */
typedef struct impair_stats {
  uint64_t sent;        /* packets offered to impair_link_send */
  uint64_t blackholed;  /* dropped by the blackhole */
  uint64_t lost;        /* dropped by random loss (impair_link_lose) */
  uint64_t queue_drops; /* copies dropped by the rate cap's full queue */
  uint64_t duplicated;  /* extra copies drawn (impair_link_dup) */
  uint64_t dup_delayed; /* extra copies queued dup_delay late */
  uint64_t reordered;   /* copies held back reorder_delay */
  uint64_t delayed;     /* copies that arrive later than they were sent */
  uint64_t corrupted;   /* copies with at least one bit flipped */
  uint64_t bit_errors;  /* bits flipped */
} impair_stats;

/* Bits of impair_link.flags: which impairments draw.  A caller may test
   them before a draw (netsim keeps a copy in its link's hottest line). */
#define IMPAIR_F_LOSS 0x1u
#define IMPAIR_F_BER 0x2u
#define IMPAIR_F_DUP 0x4u
#define IMPAIR_F_CORRUPT 0x8u
#define IMPAIR_F_REORDER 0x10u

/* impair_link is one direction of one path.  Read cfg, flags and st;
   change the configuration only with impair_link_init and
   impair_link_set_*. */
typedef struct impair_link {
  impair_cfg cfg;
  uint32_t flags; /* IMPAIR_F_* */
  /* Thresholds of cfg's probabilities (impair_threshold). */
  uint64_t loss_thr, dup_thr, reorder_thr, corrupt_thr;
  /* ber_scale is -1 / ln(1 - ber), which turns an exponential draw into
     a geometric gap in bits; ber_left is how many error-free bits come
     before the next bit error (the bits of the copies delivered, as one
     stream in the order they are delivered). */
  double ber_scale;
  uint64_t ber_left;
  impair_rng loss_rng, dup_rng, reorder_rng, jitter_rng, corrupt_rng;
  /* busy_until: the rate cap's serialiser is free from then; the busy
     period it ends began at epoch_start and has carried epoch_bytes;
     last_at: the latest arrival of a copy kept in order (the FIFO). */
  impair_time busy_until;
  impair_time epoch_start;
  uint64_t epoch_bytes;
  impair_time last_at;
  impair_stats st;
} impair_link;

/* impair_cfg_check returns 0 if |cfg| is usable (every probability in
   [0, 1], jitter not IMPAIR_NONE), else -EINVAL (also for a NULL
   |cfg|). */
int impair_cfg_check(const impair_cfg *cfg);

/* impair_link_init sets |l| up as link |id| configured by |cfg| (which
   must pass impair_cfg_check), with streams derived from |seed| and |id|,
   and zeroed counters.  A nonzero ber draws where the first bit error
   falls. */
void impair_link_init(impair_link *l, const impair_cfg *cfg, uint64_t seed,
                      uint64_t id);

/* impair_link_set_loss, impair_link_set_dup and impair_link_set_ber change
   one probability of |l| during a run (netsim's faults).  Setting a
   nonzero ber draws afresh where the next bit error falls.  Each returns 0,
   or -EINVAL (|p| outside [0, 1]; |l| is unchanged). */
int impair_link_set_loss(impair_link *l, double p);
int impair_link_set_dup(impair_link *l, double p);
int impair_link_set_ber(impair_link *l, double ber);

/* impair_link_lose draws whether a packet is lost (cfg.loss, the loss
   stream) and counts it in st.lost. */
static inline int impair_link_lose(impair_link *l) {
  if (!impair_rng_chance(&l->loss_rng, l->loss_thr)) {
    return 0;
  }
  ++l->st.lost;
  return 1;
}

/* impair_link_dup draws whether a packet is duplicated (cfg.dup, the
   duplication stream) and counts it in st.duplicated. */
static inline int impair_link_dup(impair_link *l) {
  if (!impair_rng_chance(&l->dup_rng, l->dup_thr)) {
    return 0;
  }
  ++l->st.duplicated;
  return 1;
}

/* Why impair_link_send dropped a packet or one of its copies. */
typedef enum impair_drop {
  IMPAIR_DROP_NONE = 0,
  IMPAIR_DROP_BLACKHOLE = 1, /* the link is a blackhole now */
  IMPAIR_DROP_LOSS = 2,      /* random loss */
  IMPAIR_DROP_QUEUE = 3      /* the rate cap's queue was full */
} impair_drop;

/* impair_fate is what happens to one packet offered to a link. */
typedef struct impair_fate {
  /* copies is how many copies arrive: 0 (dropped), 1, or 2 (a
     duplicate); copy k arrives at at[k], k < copies, never before the
     packet was sent. */
  uint32_t copies;
  impair_time at[2];
  /* drop says why the packet (copies 0) or the copy of a duplicate
     (copies 1, the duplicate's copy found the queue full) was dropped;
     IMPAIR_DROP_NONE if nothing was. */
  impair_drop drop;
} impair_fate;

/* impair_link_send decides the fate of a packet of |len| bytes offered to
   |l| at |now| and writes it to |f|, in this order:

   1. From cfg.blackhole_from on, a blackhole link drops it.
   2. Random loss drops it (impair_link_lose).
   3. It is duplicated (impair_link_dup): two copies, else one.
   4. For each copy: it is held back cfg.reorder_delay with probability
      cfg.reorder (the reordering stream), and a duplicate's copy comes
      cfg.dup_delay late; at a rate cap it leaves when the serialiser
      has sent it (a busy period that began at t0 and has carried B bytes
      with this copy ends at t0 + B * 8 / rate_bps, rounded down to the
      nanosecond, so the rate is never exceeded), unless the bytes queued
      ahead of it (the serialiser's backlog) and its own would exceed
      cfg.queue_bytes, which drops it and any copy after it; then come
      cfg.delay and a jitter uniform in [0, cfg.jitter] (the jitter
      stream).  A copy that is neither held
      back nor a late duplicate never arrives before the one in order
      before it (the FIFO): jitter varies the delay, it does not reorder.

   It counts what it decided in l->st.  Corruption is not decided here:
   see impair_link_flips. */
void impair_link_send(impair_link *l, size_t len, impair_time now,
                      impair_fate *f);

/* impair_flips walks the bits of one delivered copy that flip. */
typedef struct impair_flips {
  uint64_t bits; /* the copy's length in bits */
  uint64_t one;  /* cfg.corrupt's bit, IMPAIR_NONE once returned */
  uint64_t pos;  /* the next bit error, IMPAIR_NONE once past the copy */
  int hit;       /* a bit was returned */
} impair_flips;

/* impair_link_flips starts the walk over the flips of a copy of |bits|
   bits that |l| delivers now: with probability cfg.corrupt one bit,
   uniform over all of them, and each bit cfg.ber hits (the corruption
   stream; a copy that cfg.ber leaves clean costs no draw).  Call
   impair_flips_next until it returns IMPAIR_NONE: only then has the link
   moved past the copy.  The caller decides when a copy is delivered (at
   arrival in srd_loop and netsim, as the UDP driver commits it to the
   wire, at once or held for later); since
   the corruption stream is its own, that choice changes no other draw. */
void impair_link_flips(impair_link *l, impair_flips *f, uint64_t bits);

/* impair_flips_next returns the next bit of the copy to flip, counted
   from the first bit on the wire (impair_flip_bit), or IMPAIR_NONE when
   there are no more.  It counts st.corrupted (at a copy's first flip)
   and st.bit_errors.  Bits come in increasing order, except that
   cfg.corrupt's comes first; with both cfg.corrupt and cfg.ber a bit may
   come twice (two errors that undo each other). */
uint64_t impair_flips_next(impair_link *l, impair_flips *f);

/* impair_flip_bit flips bit |bit| of |data|: bit 7 - bit % 8 of byte
   bit / 8, the order in which the bits go on the wire. */
static inline void impair_flip_bit(uint8_t *data, uint64_t bit) {
  data[bit >> 3] ^= (uint8_t)(0x80u >> (bit & 7));
}

/* impair_link_corrupt applies the flips of the copy of |len| bytes at
   |data| that |l| delivers now (impair_link_flips) and returns how many
   bits it flipped. */
uint64_t impair_link_corrupt(impair_link *l, uint8_t *data, size_t len);

/* ------------------------------------------------------------------------ */
/* The delay queue                                                          */

/* impair_q_ent is one queued slot (internal). */
typedef struct impair_q_ent {
  impair_time at;
  uint64_t seq;
  void *slot;
} impair_q_ent;

/* impair_q holds packets waiting for their time: the caller takes a slot
   of slot_size bytes (its own structure, say a header and the packet's
   bytes), fills it and pushes it with its time; impair_q_pop hands it
   back when the time has come.  Slots are allocated in chunks as the
   queue grows (or all at once, at init), never per packet, and stay put:
   a slot's address is valid from impair_q_get to impair_q_put. */
typedef struct impair_q {
  impair_q_ent *heap; /* min-heap on (at, seq) */
  size_t len;         /* slots queued */
  size_t n_slots;     /* slots allocated; the heap has room for all */
  size_t max_slots;   /* 0: no limit */
  size_t stride;      /* bytes per slot, aligned */
  void *free;         /* free slots, linked through their first word */
  void *chunks;       /* allocations, linked through their first word */
  uint64_t seq;       /* pushes so far: the tie-break */
} impair_q;

/* impair_q_init sets |q| up for slots of |slot_size| bytes (aligned for
   any type), |prealloc| of them allocated now, at most |max_slots| ever
   (0 for no limit).  Returns 0 or -ENOMEM (|q| is then empty and
   impair_q_fini is still safe). */
int impair_q_init(impair_q *q, size_t slot_size, size_t prealloc,
                  size_t max_slots);

/* impair_q_fini frees every slot, queued or not. */
void impair_q_fini(impair_q *q);

/* impair_q_get returns a free slot, or NULL if max_slots are in use or
   memory ran out. */
void *impair_q_get(impair_q *q);

/* impair_q_put returns |slot| (from impair_q_get or impair_q_pop, not
   queued) to the free slots. */
void impair_q_put(impair_q *q, void *slot);

/* impair_q_push queues |slot| (from impair_q_get) until |at|.  It cannot
   fail: the heap has room for every slot. */
void impair_q_push(impair_q *q, void *slot, impair_time at);

/* impair_q_next returns when the first queued slot is due, or
   IMPAIR_NONE if none is queued. */
static inline impair_time impair_q_next(const impair_q *q) {
  return q->len ? q->heap[0].at : IMPAIR_NONE;
}

/* impair_q_pop removes and returns the first slot due at |now| (its time
   is <= now; of equal times, the one pushed first), or NULL if none is.
   If |at| is not NULL it receives the slot's time.  Hand the slot back
   with impair_q_put. */
void *impair_q_pop(impair_q *q, impair_time now, impair_time *at);

#ifdef __cplusplus
}
#endif

#endif /* IMPAIR_H */
