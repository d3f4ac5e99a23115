/*
 * srd_cc.c: the congestion control registry and the two algorithms.
 *
 * "swift" follows Swift (Kumar et al., SIGCOMM 2020, Algorithm 1): the
 * signal is end-to-end delay against a target of base RTT plus a queueing
 * allowance; below it the window grows additively (ai per RTT; ai/cwnd per
 * packet, or ai per packet when the window is below one packet); above it
 * the window shrinks in proportion to the excess, max(1 - beta (delay -
 * target) / delay, 1 - max_mdf), at most once per RTT.  Windows below one
 * packet are paced by the engine.  The allowance is the path's
 * (srd_cc_target) plus Swift's flow-based term, which grows as the window
 * shrinks (srd_cc_flow_scaling): with many flows at one bottleneck, the
 * one whose base RTT was measured under the others' queue would otherwise
 * see every sample above its target and stay at the floor while they
 * grow.
 *
 * What is specific to spraying: a flow's delay samples come from many
 * paths.  One hot path is the path's problem, and steering (srd_pathset)
 * moves traffic off it; cutting the whole window for it would starve the
 * healthy paths (arXiv 2509.07907 shows single-path controllers collapse on
 * sprayed feedback).  So the window is only cut when the congestion is
 * connection-wide: most sampled paths hot (incast at the receiver, or the
 * sender's own uplink), or a peer with one path.  Loss is handled the same
 * way, plus a loss-rate check per round trip: more than 5% of a round's
 * packets lost while even the round's fastest RTT sample sits a quarter
 * of the target above the base RTT is congestion (a buffer too shallow to
 * ever build the target delay); loss without queueing is not, nor is
 * reordering, which adds outliers above the RTT floor but does not raise
 * it.
 *
 * "fixed" keeps a constant window: the teaching baseline.
 */
#include "srd_cc.h"

#include <string.h>

#include "srd_macro.h"

/* Swift's parameters (paper, and open implementations: beta 0.8, max_mdf
   0.5, retx reset threshold 5). */
#define SWIFT_BETA 0.8
#define SWIFT_MAX_MDF 0.5
#define SWIFT_RETX_RESET 5
/* A round with more than 1/LOSS_ROUND_DIV of its packets lost is
   congested. */
#define LOSS_ROUND_DIV 20

srd_duration srd_cc_target(const srd_cc_target_cfg *cfg,
                           srd_duration base_rtt) {
  srd_duration t;

  if ((cfg->rtt_pct == 0 && cfg->hops == 0) || base_rtt == 0 ||
      base_rtt == UINT64_MAX) {
    return cfg->max;
  }
  /* rtt_pct <= 1000 (settings_valid): no overflow below 584 years. */
  t = base_rtt / 100 * cfg->rtt_pct + base_rtt % 100 * cfg->rtt_pct / 100 +
      (srd_duration)cfg->hops * cfg->hop_qdelay;
  return srd_min(srd_max(t, cfg->min), cfg->max);
}

/* inv_sqrt returns 1/sqrt(x) for x > 0 without libm (libsrd links
   none): x = m 4^k with m in [0.5, 2), then Newton's iteration for
   1/sqrt(m) from 1, which converges over that interval (six steps: under
   1e-9 relative error), times 2^-k. */
static double inv_sqrt(double x) {
  double scale = 1.0, y = 1.0;
  int i;

  while (x >= 2.0) {
    x *= 0.25;
    scale *= 0.5;
  }
  while (x < 0.5) {
    x *= 4.0;
    scale *= 2.0;
  }
  for (i = 0; i < 6; ++i) {
    y *= 1.5 - 0.5 * x * y * y;
  }
  return y * scale;
}

/* Swift's fs_min_cwnd: the window, in packets, that gets the whole
   range. */
#define FS_MIN_PKTS 0.1

srd_duration srd_cc_flow_scaling(uint64_t cwnd, uint32_t pkt_bytes,
                                 uint32_t max_pkts, uint32_t range_pct,
                                 srd_duration target) {
  double w, lo, hi, f;

  if (max_pkts < 1 || range_pct == 0 || pkt_bytes == 0) {
    return 0;
  }
  w = (double)cwnd / (double)pkt_bytes;
  if (w >= (double)max_pkts) {
    return 0;
  }
  if (w < FS_MIN_PKTS) {
    w = FS_MIN_PKTS;
  }
  lo = inv_sqrt((double)max_pkts);
  hi = inv_sqrt(FS_MIN_PKTS);
  f = (inv_sqrt(w) - lo) / (hi - lo);
  return (srd_duration)(f * (double)target * (double)range_pct / 100.0);
}

static uint64_t clamp_cwnd(const srd_cc_stat *st, double w) {
  if (w < (double)st->min_cwnd) {
    return st->min_cwnd;
  }
  if (w > (double)st->max_cwnd) {
    return st->max_cwnd;
  }
  return (uint64_t)w;
}

static int can_decrease(const srd_cc *cc, const srd_cc_stat *st,
                        srd_tstamp now) {
  return cc->last_decrease == 0 || now - cc->last_decrease >= st->srtt;
}

static void decrease(srd_cc *cc, srd_cc_stat *st, double factor, int wide,
                     srd_tstamp now) {
  st->cwnd = clamp_cwnd(st, (double)st->cwnd * factor);
  cc->last_decrease = now ? now : 1;
  cc->slow_start = 0;
  ++st->decreases;
  if (wide) {
    ++st->wide_decreases;
  }
}

static void swift_init(srd_cc *cc, srd_cc_stat *st, srd_tstamp now) {
  (void)now;
  cc->last_decrease = 0;
  cc->slow_start = 1;
  cc->round_start = now;
  cc->round_lost = cc->round_acked = 0;
  cc->round_min_rtt = UINT64_MAX;
  st->cwnd = st->init_cwnd;
}

/* end_round closes a loss-rate round when one RTT has passed; returns
   nonzero if it was congested: more than 1/LOSS_ROUND_DIV of its packets
   lost while even its fastest sample sat a quarter of the target above
   the base RTT (a buffer too shallow to ever build the target delay).
   Random loss without queueing does not qualify, nor does reordering,
   which inflates the average RTT but not its floor. */
static int end_round(srd_cc *cc, const srd_cc_stat *st, srd_tstamp now) {
  int congested;

  if (st->srtt == 0 || now - cc->round_start < st->srtt) {
    return 0;
  }
  congested = cc->round_lost >= 2 &&
              (uint64_t)cc->round_lost * LOSS_ROUND_DIV >
                  (uint64_t)cc->round_lost + cc->round_acked &&
              st->min_rtt != UINT64_MAX && cc->round_min_rtt != UINT64_MAX &&
              cc->round_min_rtt > st->min_rtt + st->target_qdelay / 4;
  cc->round_start = now;
  cc->round_lost = cc->round_acked = 0;
  cc->round_min_rtt = UINT64_MAX;
  return congested;
}

static void swift_on_ack(srd_cc *cc, srd_cc_stat *st, const srd_cc_ack *ack,
                         srd_tstamp now) {
  srd_duration target;

  cc->round_acked += ack->pkts_acked;
  if (ack->rtt != 0 && ack->rtt < cc->round_min_rtt) {
    cc->round_min_rtt = ack->rtt;
  }
  if (end_round(cc, st, now) && can_decrease(cc, st, now)) {
    decrease(cc, st, 1.0 - SWIFT_MAX_MDF, 0, now);
    return;
  }
  if (ack->rtt == 0 || st->min_rtt == UINT64_MAX) {
    return;
  }
  /* Swift's flow-based scaling: a small window (one of many flows at a
     bottleneck) aims higher. */
  target = st->min_rtt + st->target_qdelay +
           srd_cc_flow_scaling(st->cwnd, st->pkt_bytes, st->fs_max_pkts,
                               st->fs_range_pct, st->target_qdelay);
  if (ack->rtt < target) {
    double w = (double)st->cwnd;
    /* Grow only while the window is what limits the sender. */
    if (st->inflight + ack->bytes_acked < st->cwnd / 2) {
      return;
    }
    if (cc->slow_start) {
      w += (double)ack->bytes_acked;
    } else if (st->cwnd >= st->pkt_bytes) {
      w += (double)st->pkt_bytes * (double)ack->bytes_acked / w;
    } else {
      /* Below one packet the paper adds ai per packet acknowledged, which
         turns a window of 0.01 packets into 1.01 on one ACK; an eighth of
         a packet keeps many-to-one incast windows near their fair share. */
      w += (double)st->pkt_bytes * ack->pkts_acked / 8.0;
    }
    st->cwnd = clamp_cwnd(st, w);
    return;
  }
  cc->slow_start = 0;
  if (ack->congested && can_decrease(cc, st, now)) {
    double f =
        1.0 - SWIFT_BETA * (double)(ack->rtt - target) / (double)ack->rtt;
    decrease(cc, st, srd_max(f, 1.0 - SWIFT_MAX_MDF), 1, now);
  }
}

static void swift_on_loss(srd_cc *cc, srd_cc_stat *st, int congested,
                          srd_tstamp now) {
  ++cc->round_lost;
  if (congested && can_decrease(cc, st, now)) {
    decrease(cc, st, 1.0 - SWIFT_MAX_MDF, 1, now);
  }
}

static void swift_on_timeout(srd_cc *cc, srd_cc_stat *st, uint32_t consecutive,
                             int congested, srd_tstamp now) {
  ++cc->round_lost;
  if (consecutive >= SWIFT_RETX_RESET) {
    /* Down to one packet, never up to it. */
    st->cwnd = clamp_cwnd(st, (double)srd_min(st->cwnd, st->pkt_bytes));
    cc->last_decrease = now ? now : 1;
    cc->slow_start = 0;
    ++st->decreases;
  } else if ((congested || consecutive >= 2) && can_decrease(cc, st, now)) {
    decrease(cc, st, 1.0 - SWIFT_MAX_MDF, congested, now);
  }
}

static void swift_reset(srd_cc *cc, srd_cc_stat *st, srd_tstamp now) {
  swift_init(cc, st, now);
}

const srd_cc_ops srd_cc_swift = {
    .name = "swift",
    .init = swift_init,
    .on_ack = swift_on_ack,
    .on_loss = swift_on_loss,
    .on_timeout = swift_on_timeout,
    .reset = swift_reset,
};

static void fixed_init(srd_cc *cc, srd_cc_stat *st, srd_tstamp now) {
  (void)now;
  memset(cc, 0, sizeof(*cc));
  cc->ops = &srd_cc_fixed;
  st->cwnd = st->fixed_cwnd;
}

static void fixed_on_ack(srd_cc *cc, srd_cc_stat *st, const srd_cc_ack *ack,
                         srd_tstamp now) {
  (void)cc, (void)st, (void)ack, (void)now;
}

static void fixed_on_loss(srd_cc *cc, srd_cc_stat *st, int congested,
                          srd_tstamp now) {
  (void)cc, (void)st, (void)congested, (void)now;
}

static void fixed_on_timeout(srd_cc *cc, srd_cc_stat *st, uint32_t consecutive,
                             int congested, srd_tstamp now) {
  (void)cc, (void)st, (void)consecutive, (void)congested, (void)now;
}

const srd_cc_ops srd_cc_fixed = {
    .name = "fixed",
    .init = fixed_init,
    .on_ack = fixed_on_ack,
    .on_loss = fixed_on_loss,
    .on_timeout = fixed_on_timeout,
    .reset = fixed_init,
};

static const srd_cc_ops *const registry[] = {&srd_cc_swift, &srd_cc_fixed};
static const char *const names[] = {"swift", "fixed", NULL};

/* streq compares C strings (libsrd links no string functions). */
static int streq(const char *a, const char *b) {
  while (*a && *a == *b) {
    ++a, ++b;
  }
  return *a == *b;
}

const srd_cc_ops *srd_cc_find(const char *name) {
  size_t i;

  if (name == NULL) {
    return &srd_cc_swift;
  }
  for (i = 0; i < srd_arraylen(registry); ++i) {
    if (streq(registry[i]->name, name)) {
      return registry[i];
    }
  }
  return NULL;
}

const char *const *srd_cc_names(void) {
  return names;
}
