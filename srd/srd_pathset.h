/*
 * srd_pathset.h: the paths of one peer, and how packets are sprayed over
 * them.
 *
 * A path is an entropy value: the driver turns its index into whatever
 * the fabric hashes (a UDP source port; an ECMP hash input in netsim), so
 * different indexes take different routes through an ECMP fabric.  Packets
 * go over the paths in cycles, each path once per cycle, in a fresh random
 * order every cycle (as Ultra Ethernet's oblivious spraying does): a fixed
 * rotation aliases with periodic traffic, so that, say, every 16th packet
 * always lands on the same few paths.  With steering on, a path is skipped
 * for a while when
 *   - it loses a packet (avoided for 2 smoothed RTTs, doubling with each
 *     further loss in a row, to 1024x but at most twice rto_max; after a
 *     timeout the base is the RTO), so a dead path is re-probed ever more
 *     rarely, yet still found again when it heals;
 *   - its recent delay is above the congestion target and well above the
 *     peer's average (delay outlier), for one smoothed RTT.
 * When the time is up the path carries packets again: that is the probe,
 * and its first acknowledgement clears the loss streak.  As in Ultra
 * Ethernet's path-aware spraying, soft avoidance (one loss, a delay
 * outlier) applies only while fewer than half of the paths are avoided:
 * past that, the trouble is not a path's, and funnelling everything into
 * the few paths left (which may be the next to fail) is worse than
 * spraying on.  A path whose probes keep failing (a streak of two or more)
 * stays avoided regardless, unless nothing else is left.
 *
 * Loss detection runs per path (RACK, RFC 8985, within one path): a packet
 * is lost when a packet sent later on the same path has been acknowledged
 * and a reordering window has passed.  Reordering across paths is the
 * normal state of a sprayed flow and never counts as loss.
 */
#ifndef SRD_PATHSET_H
#define SRD_PATHSET_H

#include <stdint.h>

#include <srd/srd.h>

#include "srd_pcg.h"
#include "srd_rtt.h"

/* Why a path is avoided (srd_log_record.b for SRD_LOG_PATH_AVOID). */
#define SRD_AVOID_LOSS 0
#define SRD_AVOID_DELAY 1
#define SRD_AVOID_TIMEOUT 2

typedef struct srd_pathinfo {
  srd_rtt rtt;
  /* recent is a fast average of delay samples (gain 1/4), for steering. */
  srd_duration recent;
  uint64_t sent;
  uint64_t acked;
  uint64_t lost;
  uint64_t retransmits;
  uint64_t bytes_sent;
  /* avoid_until: the path is skipped while now < avoid_until. */
  srd_tstamp avoid_until;
  /* loss_streak counts failed probes: losses of packets sent after the
     path's previous loss was found, with no acknowledgement between. */
  uint32_t loss_streak;
  /* last_loss_at is when the path's latest loss was found. */
  srd_tstamp last_loss_at;
  /* hot: recent delay is above base RTT + target (counted in n_hot). */
  int hot;
  /* delay_streak counts avoidances for delay since the path was last
     seen cool: each doubles the next. */
  uint32_t delay_streak;
  /* RACK state: the latest (send time, packet number) among acknowledged
     packets, and the RTT of that packet. */
  srd_tstamp rack_xmit_ts;
  uint32_t rack_seq;
  srd_duration rack_rtt;
  int rack_valid;
  /* reo_mult scales the reordering window; it grows on spurious losses. */
  uint32_t reo_mult;
  /* reo_quiet counts losses since reo_mult last changed; at 16 it
     shrinks a step. */
  uint32_t reo_quiet;
} srd_pathinfo;

typedef struct srd_pathset {
  srd_pathinfo p[SRD_MAX_PATHS];
  uint32_t n;
  /* order is this cycle's permutation of the paths; cursor the position
     of the next path for data in it (a new cycle reshuffles), ctl_cursor
     the position for control packets. */
  uint8_t order[SRD_MAX_PATHS];
  uint32_t cursor;
  uint32_t ctl_cursor;
  srd_pcg *pcg;
  /* steering enables avoidance; 0 is blind round-robin spraying. */
  int steering;
  /* n_hot counts hot paths; n_sampled paths with at least one sample. */
  uint32_t n_hot;
  uint32_t n_sampled;
  /* avoid_max is at least every path's avoid_until: before it, a pick
     must look at avoidance; from it on, none is avoided and a pick is the
     next path of the order. */
  srd_tstamp avoid_max;
} srd_pathset;

/* srd_pathset_avoid sets path |i| avoided until |until|. */
static inline void srd_pathset_avoid(srd_pathset *ps, uint32_t i,
                                     srd_tstamp until) {
  ps->p[i].avoid_until = until;
  if (until > ps->avoid_max) {
    ps->avoid_max = until;
  }
}

/* srd_pathset_init sets up |n| paths (1..SRD_MAX_PATHS); |pcg| (kept)
   draws the spraying order. */
void srd_pathset_init(srd_pathset *ps, uint32_t n, int steering, srd_pcg *pcg);

/* srd_pathset_pick returns the path for the next packet at |now|, never
   |exclude| when another path exists (pass UINT32_MAX for none), and
   advances |cursor| (&ps->cursor for data, &ps->ctl_cursor for control
   packets). */
static inline uint32_t srd_pathset_pick(srd_pathset *ps, uint32_t *cursor,
                                        srd_tstamp now, uint32_t exclude);

/* srd_pathset_pick_slow is srd_pathset_pick when a path may be avoided or
   excluded. */
uint32_t srd_pathset_pick_slow(srd_pathset *ps, uint32_t *cursor,
                               srd_tstamp now, uint32_t exclude);

/* srd_pathset_new_cycle reshuffles the data order and restarts its
   cursor. */
void srd_pathset_new_cycle(srd_pathset *ps);

static inline uint32_t srd_pathset_pick(srd_pathset *ps, uint32_t *cursor,
                                        srd_tstamp now, uint32_t exclude) {
  /* The common pick: no path avoided, none excluded, so the next path of
     the order (a new cycle reshuffles it). */
  if (now >= ps->avoid_max && exclude == UINT32_MAX && ps->n > 1 &&
      cursor == &ps->cursor) {
    if (ps->cursor >= ps->n) {
      srd_pathset_new_cycle(ps);
    }
    return ps->order[ps->cursor++];
  }
  return srd_pathset_pick_slow(ps, cursor, now, exclude);
}

/* srd_pathset_pick_retx is srd_pathset_pick for a retransmission: with
   steering it takes the least suspicious usable path, one with a clean
   record (not avoided, no loss since its last acknowledgement) if there is
   one, else the shortest loss streak, so that a lost packet is never what
   probes a suspect path again. */
uint32_t srd_pathset_pick_retx(srd_pathset *ps, srd_tstamp now,
                               uint32_t exclude);

/* srd_pathset_on_sample folds an RTT |sample| for path |i| and updates
   its hot and avoided state.  |base| is the peer's base RTT, |target| the
   queueing delay target, |avg| the peer's smoothed RTT over all paths.
   Returns nonzero if the path became avoided. */
int srd_pathset_on_sample(srd_pathset *ps, uint32_t i, srd_duration sample,
                          srd_duration base, srd_duration target,
                          srd_duration avg, srd_tstamp now);

/* srd_pathset_on_ack records acknowledged packet |seq| sent at |tx_ts| on
   path |i| with RTT |rtt| (RACK state; ends a loss streak). */
void srd_pathset_on_ack(srd_pathset *ps, uint32_t i, srd_tstamp tx_ts,
                        uint32_t seq, srd_duration rtt);

/* srd_pathset_rack_older returns nonzero if a packet sent at |tx_ts| as
   |seq| on path |i| was sent before the newest acknowledged one there. */
static inline int srd_pathset_rack_older(const srd_pathset *ps, uint32_t i,
                                         srd_tstamp tx_ts, uint32_t seq) {
  const srd_pathinfo *p = &ps->p[i];
  return p->rack_valid &&
         (tx_ts < p->rack_xmit_ts ||
          (tx_ts == p->rack_xmit_ts && (int32_t)(seq - p->rack_seq) < 0));
}

/* srd_pathset_on_loss records the loss of a packet sent at |tx_ts| on
   path |i| and, with steering, avoids the path for |base| << min(streak -
   1, 10), at most |cap|.  Losses of packets sent before the path's
   previous loss was found belong to that loss: they neither lengthen the
   streak nor the avoidance.  Returns the time until which the path is
   avoided (0 without steering). */
srd_tstamp srd_pathset_on_loss(srd_pathset *ps, uint32_t i, srd_tstamp tx_ts,
                               srd_tstamp now, srd_duration base,
                               srd_duration cap);

/* srd_pathset_on_spurious widens path |i|'s reordering window after a
   packet declared lost was acknowledged (RFC 8985 6.2.3). */
void srd_pathset_on_spurious(srd_pathset *ps, uint32_t i);

/* srd_pathset_reo_wnd returns path |i|'s reordering window: min_rtt/4
   times reo_mult, at most its srtt (at least |floor|). */
srd_duration srd_pathset_reo_wnd(const srd_pathset *ps, uint32_t i,
                                 srd_duration floor);

/* srd_pathset_avoided counts paths avoided at |now|. */
uint32_t srd_pathset_avoided(const srd_pathset *ps, srd_tstamp now);

/* srd_pathset_congested returns nonzero if most sampled paths are hot: the
   congestion is connection-wide (incast), not one bad path. */
static inline int srd_pathset_congested(const srd_pathset *ps) {
  return ps->n_sampled > 0 && 2 * ps->n_hot > ps->n_sampled;
}

#endif /* SRD_PATHSET_H */
