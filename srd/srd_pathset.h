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
 * Avoidance is for trouble; an uneven hash needs less.  Sixty-four
 * entropies hashed onto a few physical routes give some routes more
 * entropies than others (16 +- 4 each over 4 routes), so even spraying
 * overloads some links of a fully loaded fabric and leaves others idle.
 * So each path also has a weight, its share of new data packets (from an
 * eighth of an even share to a full one): a path whose forward delay sits
 * above the other paths' by more than a margin (an eighth of the base
 * RTT) gives up an eighth of its weight per RTT, and takes it back two
 * 64ths per RTT while it does not.  The forward delay comes from the
 * packets one acknowledgement tells of: they came back together on one
 * reverse path, so their RTTs differ only by their forward paths, and
 * each one's excess over their mean is free of the reverse path's noise.
 * Control packets ignore weights, and a retransmission takes the
 * cleanest path whatever its weight.
 *
 * A path whose reverse direction is dead falls to the floor weight at
 * once: many of its packets were acknowledged, but by acknowledgements
 * that came on other paths, never on it (the peer sends its ACKs on the
 * path of the newest data packet, so a live path gets its share).  Its
 * forward direction works, so it is not avoided (avoiding it funnels the
 * data into the paths left, whose queues then cut the window); carrying an
 * eighth of its share, it draws an eighth of the peer's ACKs, and its
 * weight climbs back as the ordinary rule allows once the peer's packets
 * arrive on it again (docs/protocol.md, "Paths of control packets").
 *
 * Loss detection runs per path (RACK, RFC 8985, within one path): a packet
 * is lost when a packet sent later on the same path has been acknowledged
 * and a reordering window has passed.  Reordering across paths is the
 * normal state of a sprayed flow and never counts as loss.
 *
 * The functions below are defined in srd_pathset.c (the static inline
 * ones here).  A pathset lives in caller storage (srd_peer.paths) and
 * allocates nothing; none of its functions fails.  Every path index |i|
 * given to them is below ps->n; every one they return is too.
 */
#ifndef SRD_PATHSET_H
#define SRD_PATHSET_H

#include <stdint.h>

#include <srd/srd.h>

#include "srd_pcg.h"
#include "srd_rtt.h"

/* A path's weight runs from SRD_PATH_WEIGHT_MIN (an eighth of a full
   share) to SRD_PATH_WEIGHT_FULL. */
#define SRD_PATH_WEIGHT_FULL 64
#define SRD_PATH_WEIGHT_MIN 8

/* Why a path is avoided (srd_log_record.b for SRD_LOG_PATH_AVOID). */
#define SRD_AVOID_LOSS 0
#define SRD_AVOID_DELAY 1
#define SRD_AVOID_TIMEOUT 2
/* (not an avoidance: the path's weight fell to the floor, its reverse
   direction being dead) */
#define SRD_AVOID_REVERSE 3

/* srd_pathinfo is what a peer knows of one path (srd_path_stats shows
   it). */
typedef struct srd_pathinfo {
  srd_rtt rtt; /* the path's own RTT estimator */
  /* recent is a fast average of delay samples (gain 1/4), for steering. */
  srd_duration recent;
  uint64_t sent;        /* data packets sent on it (srd_tx.c counts) */
  uint64_t acked;       /* of which acknowledged (srd_pathset_on_ack) */
  uint64_t lost;        /* of which declared lost (srd_pathset_on_loss) */
  uint64_t retransmits; /* retransmissions sent on it (srd_tx.c) */
  uint64_t bytes_sent;  /* datagram bytes sent on it (srd_tx.c) */
  /* avoid_until: the path is skipped while now < avoid_until. */
  srd_tstamp avoid_until;
  /* loss_streak counts failed probes: losses of packets sent after the
     path's previous loss was found, with no acknowledgement between. */
  uint32_t loss_streak;
  /* loss_floored: losses in a row put the weight at its floor
     (srd_pathset_on_loss); the next acknowledgement restores it. */
  uint8_t loss_floored;
  /* last_loss_at is when the path's latest loss was found. */
  srd_tstamp last_loss_at;
  /* hot: recent delay is above base RTT + target (counted in n_hot). */
  int hot;
  /* delay_streak counts avoidances for delay since the path was last
     seen cool: each doubles the next. */
  uint32_t delay_streak;
  /* weight is the path's share of data picks in SRD_PATH_WEIGHT_FULLths
     (SRD_PATH_WEIGHT_MIN..SRD_PATH_WEIGHT_FULL): a path whose forward
     delay sits above the other paths' gives up some of its share, one
     that does not takes it back (srd_pathset_on_rel).  credit accumulates the
     weight each time the data cursor passes the path; the path carries a
     packet when it reaches SRD_PATH_WEIGHT_FULL. */
  uint16_t weight;
  uint16_t credit;
  /* weighed_at is when the weight last moved (at most once per RTT). */
  srd_tstamp weighed_at;
  /* rel is a fast average (gain 1/4) of the path's forward delay relative
     to the other paths acknowledged together with it (ns, signed). */
  int64_t rel;
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
  /* unechoed counts packets sent on the path and acknowledged since a
     packet from the peer last came on it (srd_pathset_on_unechoed);
     rev_streak counts the times in a row that reached the limit: the
     path's reverse direction is dead while it is nonzero. */
  uint32_t unechoed;
  uint32_t rev_streak;
} srd_pathinfo;

/* SRD_RUN_SHARES caps a run of packets on one path (burst) at this many
   paths' shares of the congestion window, cwnd / n each.  Measured on
   the namespace fabric of test/tools/test_fabric.sh (4 spines, 16 paths,
   157 KB queues): uncapped 64 KB runs cost half the goodput there; 4
   keeps it, and keeps the runs a fast single link needs. */
#define SRD_RUN_SHARES 4

/* srd_pathset is the paths of one peer. */
typedef struct srd_pathset {
  srd_pathinfo p[SRD_MAX_PATHS]; /* the first n are in use */
  uint32_t n;                    /* paths, 1..SRD_MAX_PATHS */
  /* order is this cycle's permutation of the paths; cursor the position
     of the next path for data in it (a new cycle reshuffles), ctl_cursor
     the position for control packets. */
  uint8_t order[SRD_MAX_PATHS];
  uint32_t cursor;
  uint32_t ctl_cursor;
  srd_pcg *pcg; /* the endpoint's generator (not owned) */
  /* steering enables avoidance; 0 is blind round-robin spraying. */
  int steering;
  /* n_hot counts hot paths; n_sampled paths with at least one sample. */
  uint32_t n_hot;
  uint32_t n_sampled;
  /* n_light counts paths whose weight is below SRD_PATH_WEIGHT_FULL: while
     it is 0 a pick never looks at weights. */
  uint32_t n_light;
  /* avoid_max is at least every path's avoid_until: before it, a pick
     must look at avoidance; from it on, none is avoided and a pick is the
     next path of the order. */
  srd_tstamp avoid_max;
  /* burst is how many data packets in a row one pick of the data cursor
     puts on its path (1: every packet picks): the engine sets it before
     each pick, from srd_settings.path_burst_bytes (burst_max, in
     packets) capped at SRD_RUN_SHARES paths' shares of the congestion
     window.  last is the path picked and burst_left how many more
     packets it carries before the next pick. */
  uint32_t burst;
  uint32_t burst_max;
  uint32_t burst_left;
  uint32_t last;
} srd_pathset;

/* srd_pathset_avoid sets path |i| avoided until |until| (0 or a time
   already past: not avoided) and keeps avoid_max above it. */
static inline void srd_pathset_avoid(srd_pathset *ps, uint32_t i,
                                     srd_tstamp until) {
  ps->p[i].avoid_until = until;
  if (until > ps->avoid_max) {
    ps->avoid_max = until;
  }
}

/* srd_pathset_init sets up |ps| (caller storage, any contents) with |n|
   paths (1..SRD_MAX_PATHS, asserted), no samples, none avoided, steering
   on if |steering| is nonzero.  |pcg| (kept, not owned: it must outlive
   |ps|) draws the spraying order; init draws the first cycle's order and
   the control cursor's start from it. */
void srd_pathset_init(srd_pathset *ps, uint32_t n, int steering, srd_pcg *pcg);

/* srd_pathset_pick returns the path for the next packet at |now|, never
   |exclude| when another path exists (pass UINT32_MAX for none), and
   advances |cursor| (&ps->cursor for data, &ps->ctl_cursor for control
   packets).  The data cursor reshuffles the order (drawing from ps->pcg)
   when a cycle ends; the control cursor goes round the current order.
   A data pick of a path in good standing (srd_pathset_runs_ok) holds for
   ps->burst packets: the next burst - 1 data picks return the same path
   while it is not |exclude| and not avoided.  A path under suspicion
   gets one packet per pick, as without runs. */
static inline uint32_t srd_pathset_pick(srd_pathset *ps, uint32_t *cursor,
                                        srd_tstamp now, uint32_t exclude);

/* srd_pathset_pick_slow is srd_pathset_pick when a path may be avoided or
   excluded: the first path of the order from |cursor| that is not
   |exclude| and not avoided (avoidance applies while fewer than half the
   paths are avoided, and always to a path with a loss streak of two or
   more); if every other path is avoided, the one that recovers first.
   With one path it returns 0.  Called only through srd_pathset_pick. */
uint32_t srd_pathset_pick_slow(srd_pathset *ps, uint32_t *cursor,
                               srd_tstamp now, uint32_t exclude);

/* srd_pathset_new_cycle reshuffles the data order (drawing from ps->pcg)
   and restarts its cursor; the control cursor keeps its place. */
void srd_pathset_new_cycle(srd_pathset *ps);

/* srd_pathset_runs_ok says whether path |i| may carry a run: it has had
   a packet acknowledged, and fewer than two losses found on it since
   its last acknowledgement.  A path not yet proven, or one that lost
   its last packets (a blackhole, probed again once its avoidance ends),
   gets single packets, so that a run does not pour a GSO send's worth
   into it before the loss signal can act; one loss (most often a packet
   overtaken, found spurious) does not stop runs, for without them the
   packets of a round interleave more and more look lost. */
static inline int srd_pathset_runs_ok(const srd_pathset *ps, uint32_t i) {
  return ps->p[i].acked > 0 && ps->p[i].loss_streak < 2;
}

static inline uint32_t srd_pathset_pick(srd_pathset *ps, uint32_t *cursor,
                                        srd_tstamp now, uint32_t exclude) {
  uint32_t idx;

  if (cursor != &ps->cursor) {
    return srd_pathset_pick_slow(ps, cursor, now, exclude);
  }
  /* A burst goes on while its path is neither excluded nor avoided. */
  if (ps->burst_left > 0 && ps->last != exclude &&
      ps->p[ps->last].avoid_until <= now) {
    --ps->burst_left;
    return ps->last;
  }
  /* The common pick: no path avoided or light, none excluded, so the
     next path of the order (a new cycle reshuffles it). */
  if (now >= ps->avoid_max && exclude == UINT32_MAX && ps->n > 1 &&
      ps->n_light == 0) {
    if (ps->cursor >= ps->n) {
      srd_pathset_new_cycle(ps);
    }
    idx = ps->order[ps->cursor++];
  } else {
    idx = srd_pathset_pick_slow(ps, cursor, now, exclude);
  }
  ps->last = idx;
  ps->burst_left =
      ps->burst > 1 && srd_pathset_runs_ok(ps, idx) ? ps->burst - 1 : 0;
  return idx;
}
/* srd_pathset_pick_retx is srd_pathset_pick for a retransmission: with
   steering it takes the least suspicious usable path, one with a clean
   record (not avoided, no loss since its last acknowledgement) if there is
   one, else the shortest loss streak, so that a lost packet is never what
   probes a suspect path again.  With every path but |exclude| avoided it
   takes the shortest loss streak among them (the soonest recovered on a
   tie), or |exclude| itself if its streak is shorter still: never blind
   alternation onto a path that keeps failing.  It moves the data cursor.
   Without steering or with one path it is srd_pathset_pick on the data
   cursor. */
uint32_t srd_pathset_pick_retx(srd_pathset *ps, srd_tstamp now,
                               uint32_t exclude);

/* srd_pathset_on_sample folds an RTT |sample| for path |i| and updates
   its hot and avoided state.  |base| is the peer's base RTT, |target| the
   queueing delay target, |avg| the peer's smoothed RTT over all paths.
   A path's first sample counts it as sampled (srd_pathset_congested);
   the first sample after an avoidance ended replaces the path's recent
   delay rather than averaging with it.  Returns nonzero if the path
   became avoided for delay (steering on, more than one path), else 0. */
int srd_pathset_on_sample(srd_pathset *ps, uint32_t i, srd_duration sample,
                          srd_duration base, srd_duration target,
                          srd_duration avg, srd_tstamp now);

/* srd_pathset_on_rel folds |rel|, a packet's forward delay on path |i|
   relative to the mean of the packets one acknowledgement told of, into
   the path's relative delay, and with steering moves the path's weight
   (at most once per |srtt|): down by an eighth while the relative delay
   is above |margin|, up by a step while it is below a quarter of it. */
void srd_pathset_on_rel(srd_pathset *ps, uint32_t i, int64_t rel,
                        srd_duration margin, srd_duration srtt, srd_tstamp now);

/* srd_pathset_on_ack records acknowledged packet |seq| sent at |tx_ts| on
   path |i| with RTT |rtt|: counts it, keeps the newest acknowledged
   (send time, packet number) as the path's RACK state, and ends its loss
   streak. */
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
   streak nor the avoidance.  Every loss counts in the path's lost count;
   each new one also counts towards shrinking its reordering window (a
   step per 16).  Returns the time until
   which the path is avoided (0 without steering or with one path). */
srd_tstamp srd_pathset_on_loss(srd_pathset *ps, uint32_t i, srd_tstamp tx_ts,
                               srd_tstamp now, srd_duration base,
                               srd_duration cap);

/* srd_pathset_on_unechoed records that a packet sent on path |i| was
   acknowledged (called once per packet, after srd_pathset_on_ack).  When
   |limit| (at least 1) such packets pile up with no packet from the peer
   arriving on path |i| in between (srd_pathset_on_rx), the path's reverse
   direction is taken for dead: rev_streak grows, the count starts again
   and, with steering and more than one path, the path's weight falls to
   SRD_PATH_WEIGHT_MIN at |now| (it is not avoided: its forward direction
   works).  While the reverse streak is nonzero, |limit| / 4 packets (at
   least 1) suffice, so a path still dead is floored again long before its
   weight is back.  Returns 1 when the weight was set to the floor, else
   0. */
int srd_pathset_on_unechoed(srd_pathset *ps, uint32_t i, uint32_t limit,
                            srd_tstamp now);

/* srd_pathset_on_rx records that a packet from the peer arrived on path
   |i|: its reverse direction works, so the unechoed count and the reverse
   streak restart (a weight already cut climbs back as srd_pathset_on_rel
   allows). */
static inline void srd_pathset_on_rx(srd_pathset *ps, uint32_t i) {
  ps->p[i].unechoed = 0;
  ps->p[i].rev_streak = 0;
}

/* srd_pathset_on_spurious widens path |i|'s reordering window after a
   packet declared lost was acknowledged (RFC 8985 6.2.3). */
void srd_pathset_on_spurious(srd_pathset *ps, uint32_t i);

/* srd_pathset_reo_wnd returns path |i|'s reordering window: min_rtt/4
   times reo_mult, at most its srtt (at least |floor|). */
srd_duration srd_pathset_reo_wnd(const srd_pathset *ps, uint32_t i,
                                 srd_duration floor);

/* srd_pathset_avoided counts paths avoided at |now| (O(n); the common
   pick never calls it). */
uint32_t srd_pathset_avoided(const srd_pathset *ps, srd_tstamp now);

/* srd_pathset_congested returns nonzero if most sampled paths are hot: the
   congestion is connection-wide (incast), not one bad path. */
static inline int srd_pathset_congested(const srd_pathset *ps) {
  return ps->n_sampled > 0 && 2 * ps->n_hot > ps->n_sampled;
}

#endif /* SRD_PATHSET_H */
