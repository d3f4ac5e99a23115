/*
 * srd_pathset.c: spraying and path steering.
 */
#include "srd_pathset.h"

#include <assert.h>
#include <string.h>

#include "srd_macro.h"

/* Longest avoidance, as a multiple of the base penalty (2^10). */
#define MAX_PENALTY_SHIFT 10
/* Longest avoidance for delay, as a multiple of the path's delay (2^6). */
#define MAX_DELAY_SHIFT 6
/* A light path takes back WEIGHT_STEP 64ths of a share per RTT while its
   delay is not above the others': from the floor to full in 28 RTTs. */
#define WEIGHT_STEP 2
/* reo_mult cap: the window may grow to 16 x min_rtt/4 (bounded by srtt). */
#define MAX_REO_MULT 16

/* below draws a uniform value in [0, |bound|), 1 <= |bound| <= 64, from
   16 bits of |*bits| (refilled from the generator every four draws):
   Lemire's multiply-shift with its rejection step, so without bias. */
static inline uint32_t below(srd_pcg *pcg, uint64_t *bits, uint32_t *left,
                             uint32_t bound) {
  for (;;) {
    uint32_t m, l;
    if (*left == 0) {
      *bits = srd_pcg_u64(pcg);
      *left = 4;
    }
    m = (uint32_t)(*bits & 0xffff) * bound;
    *bits >>= 16;
    --*left;
    l = m & 0xffff;
    if (l >= bound || l >= (65536u - bound) % bound) {
      return m >> 16;
    }
  }
}

static void shuffle(srd_pathset *ps) {
  uint64_t bits = 0;
  uint32_t i, left = 0;

  /* Fisher-Yates, four draws per 64 random bits: a cycle of 64 paths
     costs 16 generator steps. */
  for (i = ps->n - 1; i > 0; --i) {
    uint32_t j = below(ps->pcg, &bits, &left, i + 1);
    uint8_t t = ps->order[i];
    ps->order[i] = ps->order[j];
    ps->order[j] = t;
  }
}

void srd_pathset_init(srd_pathset *ps, uint32_t n, int steering, srd_pcg *pcg) {
  uint32_t i;

  assert(n >= 1 && n <= SRD_MAX_PATHS);
  memset(ps, 0, sizeof(*ps));
  ps->n = n;
  ps->steering = steering;
  ps->pcg = pcg;
  for (i = 0; i < n; ++i) {
    srd_rtt_init(&ps->p[i].rtt);
    ps->p[i].reo_mult = 1;
    ps->p[i].weight = SRD_PATH_WEIGHT_FULL;
    ps->order[i] = (uint8_t)i;
  }
  shuffle(ps);
  ps->ctl_cursor = srd_pcg_bounded(pcg, n);
  ps->burst = 1;
  ps->burst_max = 1;
}

/* cycle_start reshuffles when |cursor| has gone through the whole order:
   a new cycle.  Only the data cursor reshuffles; a pick then scans the
   current order from the cursor without reshuffling, so that one scan
   sees every path exactly once. */
static void cycle_start(srd_pathset *ps, uint32_t *cursor) {
  if (*cursor >= ps->n) {
    if (cursor == &ps->cursor) {
      shuffle(ps);
    }
    *cursor = 0;
  }
}

/* wrap brings position |pos| (at most 2n - 1) back into the order: a
   compare, not a division, on the per-packet path. */
static inline uint32_t wrap(const srd_pathset *ps, uint32_t pos) {
  return pos >= ps->n ? pos - ps->n : pos;
}

/* take moves |cursor| past position |pos| and returns the path there. */
static uint32_t take(srd_pathset *ps, uint32_t *cursor, uint32_t pos) {
  *cursor = pos + 1;
  return ps->order[pos];
}

/* steer_now says whether avoidance applies at |now|: fewer than half of
   the paths avoided (Ultra Ethernet's 50% rule).  Counted only when a
   pick meets an avoided path, so the common pick stays O(1). */
static int steer_now(const srd_pathset *ps, srd_tstamp now) {
  return ps->steering && 2 * srd_pathset_avoided(ps, now) < ps->n;
}

/* hard says whether path |idx| is avoided after failed probes (two or
   more losses in a row): evidence of a broken route, which the 50% rule
   does not override. */
static int hard(const srd_pathset *ps, uint32_t idx, srd_tstamp now) {
  return ps->p[idx].avoid_until > now && ps->p[idx].loss_streak >= 2;
}

void srd_pathset_new_cycle(srd_pathset *ps) {
  shuffle(ps);
  ps->cursor = 0;
}

/* weighed says whether path |idx|, met by the data cursor, carries the
   next packet by its weight: its credit grows by its weight and pays a
   full share when it has one.  Control picks and paths at full weight
   always do. */
static int weighed(srd_pathset *ps, const uint32_t *cursor, uint32_t idx) {
  srd_pathinfo *p = &ps->p[idx];

  if (cursor != &ps->cursor || p->weight >= SRD_PATH_WEIGHT_FULL) {
    return 1;
  }
  p->credit = (uint16_t)(p->credit + p->weight);
  if (p->credit < SRD_PATH_WEIGHT_FULL) {
    return 0;
  }
  p->credit = (uint16_t)(p->credit - SRD_PATH_WEIGHT_FULL);
  return 1;
}

uint32_t srd_pathset_pick_slow(srd_pathset *ps, uint32_t *cursor,
                               srd_tstamp now, uint32_t exclude) {
  uint32_t i, pos, idx, best = UINT32_MAX, best_pos = 0, usable = 0;
  int steer = -1;

  if (ps->n == 1) {
    return 0;
  }
  cycle_start(ps, cursor);
  /* Light paths may be passed over: the scan goes round the order until
     one pays (each pass adds at least SRD_PATH_WEIGHT_MIN to every light
     path's credit, so within FULL / MIN passes). */
  for (i = 0, pos = *cursor;; ++i, pos = wrap(ps, pos + 1)) {
    if (i == ps->n) {
      if (usable == 0) {
        break;
      }
      i = 0;
    }
    idx = ps->order[pos];
    if (idx == exclude) {
      continue;
    }
    if (ps->p[idx].avoid_until > now && steer < 0) {
      steer = steer_now(ps, now);
    }
    if (ps->p[idx].avoid_until <= now || !ps->steering ||
        (!steer && !hard(ps, idx, now))) {
      ++usable;
      if (weighed(ps, cursor, idx)) {
        return take(ps, cursor, pos);
      }
      continue;
    }
    if (best == UINT32_MAX ||
        ps->p[idx].avoid_until < ps->p[best].avoid_until) {
      best = idx;
      best_pos = pos;
    }
  }
  /* Every other path is avoided: take the one that recovers first. */
  assert(best != UINT32_MAX);
  return take(ps, cursor, best_pos);
}

uint32_t srd_pathset_pick_retx(srd_pathset *ps, srd_tstamp now,
                               uint32_t exclude) {
  uint32_t i, pos, idx, best = UINT32_MAX, best_pos = 0;

  if (ps->steering && ps->n > 1) {
    /* The least suspicious usable path: a clean one if any, else the one
       with the shortest loss streak, so a dead path whose avoidance just
       ran out is never re-probed with a lost packet. */
    cycle_start(ps, &ps->cursor);
    for (i = 0, pos = ps->cursor; i < ps->n; ++i, pos = wrap(ps, pos + 1)) {
      idx = ps->order[pos];
      if (idx == exclude || ps->p[idx].avoid_until > now) {
        continue;
      }
      if (best == UINT32_MAX ||
          ps->p[idx].loss_streak < ps->p[best].loss_streak) {
        best = idx;
        best_pos = pos;
        if (ps->p[idx].loss_streak == 0) {
          break;
        }
      }
    }
    if (best != UINT32_MAX) {
      return take(ps, &ps->cursor, best_pos);
    }
    /* Every path but |exclude| is avoided.  Their avoidance times say
       little by now (a timeout avoids a live path as long as a dead one:
       both reach the cap), their loss streaks a lot: the retransmission
       takes the shortest streak, soonest recovered on a tie, and goes
       back on |exclude| only if every other path has failed more often
       in a row.  Alternating blindly would spend half of a packet's tries
       on a path that has been dead all along. */
    for (i = 0, pos = ps->cursor; i < ps->n; ++i, pos = wrap(ps, pos + 1)) {
      idx = ps->order[pos];
      if (idx == exclude) {
        continue;
      }
      if (best == UINT32_MAX ||
          ps->p[idx].loss_streak < ps->p[best].loss_streak ||
          (ps->p[idx].loss_streak == ps->p[best].loss_streak &&
           ps->p[idx].avoid_until < ps->p[best].avoid_until)) {
        best = idx;
        best_pos = pos;
      }
    }
    if (exclude < ps->n &&
        ps->p[exclude].loss_streak < ps->p[best].loss_streak) {
      best_pos = 0;
      while (ps->order[best_pos] != exclude) {
        ++best_pos;
      }
    }
    return take(ps, &ps->cursor, best_pos);
  }
  return srd_pathset_pick(ps, &ps->cursor, now, exclude);
}

/* set_weight moves |p|'s weight to |w| at |now|, keeping n_light. */
static void set_weight(srd_pathset *ps, srd_pathinfo *p, uint32_t w,
                       srd_tstamp now) {
  if (w == p->weight) {
    return;
  }
  if (p->weight == SRD_PATH_WEIGHT_FULL) {
    ++ps->n_light;
  } else if (w == SRD_PATH_WEIGHT_FULL) {
    --ps->n_light;
    p->credit = 0;
  }
  p->weight = (uint16_t)w;
  p->weighed_at = now ? now : 1;
}

void srd_pathset_on_rel(srd_pathset *ps, uint32_t i, int64_t rel,
                        srd_duration margin, srd_duration srtt,
                        srd_tstamp now) {
  srd_pathinfo *p = &ps->p[i];
  uint32_t w = p->weight;

  p->rel += (rel - p->rel) / 4;
  if (!ps->steering || ps->n == 1 || srtt == 0 ||
      (p->weighed_at != 0 && now - p->weighed_at < srtt)) {
    return;
  }
  if (p->rel > (int64_t)margin) {
    w -= srd_max(w / 8, 1u);
    w = srd_max(w, (uint32_t)SRD_PATH_WEIGHT_MIN);
  } else if (p->rel < (int64_t)margin / 4) {
    w = srd_min(w + WEIGHT_STEP, (uint32_t)SRD_PATH_WEIGHT_FULL);
  } else {
    return;
  }
  set_weight(ps, p, w, now);
}

int srd_pathset_on_sample(srd_pathset *ps, uint32_t i, srd_duration sample,
                          srd_duration base, srd_duration target,
                          srd_duration avg, srd_tstamp now) {
  srd_pathinfo *p = &ps->p[i];
  int hot;

  if (p->rtt.samples == 0) {
    ++ps->n_sampled;
    p->recent = sample;
  } else if (p->avoid_until != 0 && p->avoid_until <= now) {
    /* Back from avoidance: judge it on fresh evidence.  Averaged with the
       stale delay that got it avoided, one probe would barely move it and
       the path would be avoided again and again. */
    p->recent = sample;
    srd_pathset_avoid(ps, i, 0);
  } else {
    p->recent = (3 * p->recent + sample) / 4;
  }
  srd_rtt_update(&p->rtt, sample);

  hot = p->recent > base + target;
  if (!hot) {
    p->delay_streak = 0;
  }
  if (hot != p->hot) {
    p->hot = hot;
    if (hot) {
      ++ps->n_hot;
    } else {
      --ps->n_hot;
    }
  }
  /* A delay outlier: queueing above target here, and clearly above the
     other paths (which share the same endpoints), so the congestion is on
     this path's route, not at either end. */
  if (ps->steering && hot && ps->n > 1 && p->recent > avg + target / 2 &&
      p->avoid_until <= now) {
    /* A path that is an outlier again as soon as it is back (a slower
       spine, a degraded link) is avoided for longer each time, so that
       its share falls until its queue stays short. */
    srd_duration d = srd_max(avg, p->recent)
                     << srd_min(p->delay_streak, MAX_DELAY_SHIFT);
    if (p->delay_streak < UINT32_MAX) {
      ++p->delay_streak;
    }
    srd_pathset_avoid(ps, i, now + d);
    return 1;
  }
  return 0;
}

void srd_pathset_on_ack(srd_pathset *ps, uint32_t i, srd_tstamp tx_ts,
                        uint32_t seq, srd_duration rtt) {
  srd_pathinfo *p = &ps->p[i];

  ++p->acked;
  if (!p->rack_valid || tx_ts > p->rack_xmit_ts ||
      (tx_ts == p->rack_xmit_ts && (int32_t)(seq - p->rack_seq) > 0)) {
    p->rack_xmit_ts = tx_ts;
    p->rack_seq = seq;
    p->rack_rtt = rtt;
    p->rack_valid = 1;
  }
  p->loss_streak = 0;
  if (p->loss_floored) {
    p->loss_floored = 0;
    if (p->weight == SRD_PATH_WEIGHT_MIN) {
      set_weight(ps, p, SRD_PATH_WEIGHT_FULL, p->weighed_at);
    }
  }
}

srd_tstamp srd_pathset_on_loss(srd_pathset *ps, uint32_t i, srd_tstamp tx_ts,
                               srd_tstamp now, srd_duration base,
                               srd_duration cap) {
  srd_pathinfo *p = &ps->p[i];
  uint32_t shift;

  ++p->lost;
  if (p->loss_streak > 0 && tx_ts < p->last_loss_at) {
    /* Sent before the last loss was found: the same episode. */
    return ps->steering && ps->n > 1 ? p->avoid_until : 0;
  }
  p->last_loss_at = now;
  if (p->loss_streak < UINT32_MAX) {
    ++p->loss_streak;
  }
  /* RFC 8985 6.2.4 lets the window shrink back after 16 recoveries
     without a spurious loss; losses here are single packets, so the
     window shrinks one step per 16 of them. */
  if (++p->reo_quiet >= 16) {
    if (p->reo_mult > 1) {
      --p->reo_mult;
    }
    p->reo_quiet = 0;
  }
  if (!ps->steering || ps->n == 1) {
    return 0;
  }
  shift = srd_min(p->loss_streak - 1, MAX_PENALTY_SHIFT);
  srd_pathset_avoid(ps, i,
                    srd_max(p->avoid_until, now + srd_min(base << shift, cap)));
  /* A third loss in a row (a dead path, not a random or spurious loss): when
     the avoidance ends the path comes back at the lowest share, so that its
     probes cost little while it stays dead (rather than a full share
     that sends it a window's worth before the next loss is found); the
     first packet acknowledged on it again gives the share back
     (srd_pathset_on_ack): a path that routing repaired carries its part
     at once. */
  if (p->loss_streak >= 3 && p->weight > SRD_PATH_WEIGHT_MIN) {
    set_weight(ps, p, SRD_PATH_WEIGHT_MIN, now);
    p->loss_floored = 1;
  }
  return p->avoid_until;
}

int srd_pathset_on_unechoed(srd_pathset *ps, uint32_t i, uint32_t limit,
                            srd_tstamp now) {
  srd_pathinfo *p = &ps->p[i];

  /* A path already found dead this way needs less evidence again: while
     its weight climbs back, a few more lost ACKs floor it again. */
  if (++p->unechoed < (p->rev_streak > 0 ? srd_max(limit / 4, 1u) : limit)) {
    return 0;
  }
  p->unechoed = 0;
  if (p->rev_streak < UINT32_MAX) {
    ++p->rev_streak;
  }
  if (!ps->steering || ps->n == 1) {
    return 0;
  }
  /* The floor, not avoidance: the path's forward direction works, and
     the data it still carries is what finds the way back healed. */
  set_weight(ps, p, SRD_PATH_WEIGHT_MIN, now);
  return 1;
}

void srd_pathset_on_spurious(srd_pathset *ps, uint32_t i) {
  srd_pathinfo *p = &ps->p[i];

  if (p->reo_mult < MAX_REO_MULT) {
    ++p->reo_mult;
  }
  p->reo_quiet = 0;
  /* The loss was not real: it does not extend the streak. */
  p->loss_streak = 0;
}

srd_duration srd_pathset_reo_wnd(const srd_pathset *ps, uint32_t i,
                                 srd_duration floor) {
  const srd_pathinfo *p = &ps->p[i];
  srd_duration w;

  if (p->rtt.samples == 0) {
    return floor;
  }
  w = p->rtt.min_rtt / 4 * p->reo_mult;
  w = srd_min(w, p->rtt.srtt);
  return srd_max(w, floor);
}

uint32_t srd_pathset_avoided(const srd_pathset *ps, srd_tstamp now) {
  uint32_t i, n = 0;

  for (i = 0; i < ps->n; ++i) {
    n += ps->p[i].avoid_until > now;
  }
  return n;
}
