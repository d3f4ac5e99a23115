/*
 * impair.h: the srd backend's userspace impairment layer.  Per path, on
 * the sending side: random loss, duplication (the copy optionally
 * dup_delay_ns late), delay with jitter (the path stays FIFO), reordering
 * (a held-back datagram overtakes nothing but is overtaken), a rate cap
 * with a bounded queue (tail drop), a blackhole, and corruption (one bit
 * flipped, uniformly over the datagram's bits).  Every draw comes from a
 * splitmix64 stream per path derived from the seed and the path index
 * (corruption from a second one, so that turning it on leaves the other
 * draws alone), so a run's impairments are a function of its seed and
 * traffic.  Time is an argument: the layer reads no clock,
 * so its tests run in virtual time.
 *
 * A datagram that must wait, or be corrupted, is copied into a
 * preallocated pool (the engine's zero-copy payload pointer is only valid
 * until the next completion poll, and points into the user's buffer,
 * which corruption must not touch); a full pool is a queue drop.
 */
#ifndef IMPAIR_H
#define IMPAIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "xport.h"

/* impair_pkt is a datagram waiting in the layer. */
typedef struct impair_pkt {
  uint64_t at;   /* when it leaves */
  uint64_t seq;  /* tie-break: order of arrival in the layer */
  uint32_t len;  /* bytes at data */
  uint16_t path; /* the path (socket) it leaves on */
  uint32_t peer; /* the peer it goes to */
  uint8_t *data;
} impair_pkt;

/* impair_verdict is what happens to one outgoing datagram. */
typedef struct impair_verdict {
  int copies;  /* 0 (dropped), 1, or 2 (duplicated) */
  uint64_t at; /* when the first copy leaves; <= now means at once */
  /* dup_at: when the second copy leaves: at, or dup_delay_ns after it. */
  uint64_t dup_at;
  /* flip[k]: 0 if copy k leaves intact, else 1 + the index of the bit to
     flip: bit (flip - 1) % 8 (0 = least significant) of byte
     (flip - 1) / 8.  A flipped copy must go through impair_hold. */
  uint64_t flip[2];
} impair_verdict;

typedef struct impair_path {
  xport_impair cfg;
  uint64_t rng;
  uint64_t crng;       /* corruption's own stream */
  uint64_t busy_until; /* the rate cap's serialiser is free from here */
  uint64_t last_at;    /* latest in-order departure (FIFO under jitter) */
} impair_path;

typedef struct impair {
  impair_path path[XPORT_MAX_PATHS];
  uint32_t n_paths;
  impair_pkt *heap; /* min-heap on (at, seq) */
  size_t len, cap;
  uint8_t **free_bufs;
  size_t n_free;
  uint8_t *pool;
  size_t buf_size;
  uint64_t seq;
  /* counters; corrupted counts datagrams impair_hold flipped a bit of,
     dup_delayed duplicates whose copy was given dup_at > at */
  uint64_t lost, dup, delayed, queue_drops, blackholed;
  uint64_t corrupted, dup_delayed;
} impair;

/* impair_init sets |imp| up for |n_paths| paths configured by |cfg|,
   drawing from |seed|, with room for |pool_pkts| waiting datagrams of at
   most |buf_size| bytes.  Returns 0 or -ENOMEM. */
int impair_init(impair *imp, const xport_impair *cfg, uint32_t n_paths,
                uint64_t seed, size_t pool_pkts, size_t buf_size);

/* impair_fini frees what impair_init allocated. */
void impair_fini(impair *imp);

/* impair_path_delays says whether |path| ever holds datagrams back. */
int impair_path_delays(const impair *imp, uint16_t path);

/* impair_judge decides the fate of a datagram of |len| bytes sent on
   |path| at |now| and fills |v|.  It counts losses, duplicates (and
   delayed ones) and queue drops; corruption is counted when applied, by
   impair_hold. */
void impair_judge(impair *imp, uint16_t path, size_t len, uint64_t now,
                  impair_verdict *v);

/* impair_hold copies a datagram (|n| pieces in |iov|) to leave at |at|,
   and if |flip| is nonzero (an impair_verdict.flip) flips that bit of the
   copy; |iov|'s bytes are only read.  Returns 0, or -ENOBUFS when the
   pool is full (counted as a queue drop; nothing is corrupted). */
int impair_hold(impair *imp, uint16_t path, uint32_t peer,
                const struct iovec *iov, size_t n, uint64_t at, uint64_t flip);

/* impair_next returns when the next held datagram leaves, or UINT64_MAX. */
uint64_t impair_next(const impair *imp);

/* impair_pop removes the next datagram due at |now| into |out| and
   returns 1, or returns 0 if none is due.  Hand out->data back with
   impair_release once it has been sent. */
int impair_pop(impair *imp, uint64_t now, impair_pkt *out);

/* impair_release returns a popped datagram's buffer to the pool. */
void impair_release(impair *imp, uint8_t *data);

#endif /* IMPAIR_H */
