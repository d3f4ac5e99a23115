/*
 * sim_cubic.c: CUBIC as Linux's tcp_cubic.c computes it (see sim_cubic.h).
 *
 * The constants are the kernel's defaults: beta 717/1024, bic_scale 41
 * (C = 41 * 10 / 1024 = 0.4), HZ 1000, BICTCP_HZ 10, HyStart with both
 * detectors, hystart_low_window 16, hystart_ack_delta_us 2000.
 */
#include "sim_cubic.h"

#define BETA 717u
#define BETA_SCALE 1024u
#define BIC_SCALE 41u
#define HZ 1000u
#define BICTCP_HZ 10
/* 1024 * C / rtt with the kernel's 100 ms reference: bic_scale * 10. */
#define CUBE_RTT_SCALE (BIC_SCALE * 10u)
/* ACKs per emulated-Reno segment, times 8: 8 (1 + beta) / (3 (1 - beta)),
   in the kernel's integer steps (15). */
#define FRIENDLY_SCALE (8u * (BETA_SCALE + BETA) / 3u / (BETA_SCALE - BETA))
#define LOW_WINDOW 16u
#define ACK_DELTA_US 2000u
#define MIN_SAMPLES 8u
#define DELAY_MIN_US 4000u
#define DELAY_MAX_US 16000u
/* GSO_LEGACY_MAX_SIZE: the largest TSO packet hystart_ack_delay allows
   for. */
#define GSO_MAX 65536u

/* cube_factor: 2^(10 + 3 BICTCP_HZ) / (bic_scale * 10), so that
   K = cbrt(cube_factor * (W_max - cwnd)) is in 1/1024 s. */
static const uint64_t cube_factor =
    (1ull << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

static uint32_t jiffies(netsim_time now) {
  /* One past the tick so that 0 stays "no epoch". */
  return (uint32_t)(now / NETSIM_MS) + 1;
}

static uint32_t usecs(netsim_time now) {
  return (uint32_t)(now / NETSIM_US);
}

static uint32_t us_to_jiffies(uint32_t us) {
  return (us + 999u) / 1000u; /* usecs_to_jiffies rounds up */
}

/* icbrt is the integer cube root of |a|, rounded down (the kernel uses a
   table and one Newton step, within 0.2% of this). */
static uint32_t icbrt(uint64_t a) {
  uint64_t y = 0;
  int s;

  for (s = 63; s >= 0; s -= 3) {
    uint64_t b;
    y <<= 1;
    b = 3 * y * (y + 1) + 1;
    if ((a >> s) >= b) {
      a -= b << s;
      ++y;
    }
  }
  return (uint32_t)y;
}

static void hystart_reset(sim_cubic *ca, uint64_t snd_nxt, netsim_time now) {
  ca->round_start = ca->last_ack = usecs(now);
  ca->end_seq = snd_nxt;
  ca->curr_rtt = UINT32_MAX;
  ca->sample_cnt = 0;
}

/* bictcp_reset: everything but the HyStart counters. */
static void reset(sim_cubic *ca) {
  uint32_t te = ca->train_exits, de = ca->delay_exits;

  *ca = (sim_cubic){0};
  ca->train_exits = te;
  ca->delay_exits = de;
}

void sim_cubic_init(sim_cubic *ca, uint64_t snd_nxt, netsim_time now) {
  *ca = (sim_cubic){0};
  hystart_reset(ca, snd_nxt, now);
}

uint32_t sim_cubic_ssthresh(sim_cubic *ca, uint32_t cwnd) {
  uint32_t s;

  ca->epoch_start = 0;
  if (cwnd < ca->last_max_cwnd) {
    /* Fast convergence: yield to newer flows. */
    ca->last_max_cwnd =
        (uint32_t)((uint64_t)cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE));
  } else {
    ca->last_max_cwnd = cwnd;
  }
  s = (uint32_t)((uint64_t)cwnd * BETA / BETA_SCALE);
  return s > 2 ? s : 2;
}

void sim_cubic_on_rto(sim_cubic *ca, uint64_t snd_nxt, netsim_time now) {
  reset(ca);
  hystart_reset(ca, snd_nxt, now);
}

void sim_cubic_tx_start(sim_cubic *ca, netsim_time now, netsim_time last_send) {
  uint32_t j = jiffies(now);
  int32_t delta = (int32_t)(j - jiffies(last_send));

  if (ca->epoch_start && delta > 0) {
    ca->epoch_start += (uint32_t)delta;
    if ((int32_t)(ca->epoch_start - j) > 0) {
      ca->epoch_start = j;
    }
  }
}

/* ack_delay is hystart_ack_delay: the time a TSO packet and another in
   the qdisc take at the pacing rate, at most 1 ms. */
static uint32_t ack_delay(uint64_t pacing_bps) {
  uint64_t d;

  if (pacing_bps == 0) {
    return 0;
  }
  d = (uint64_t)GSO_MAX * 4 * 1000000u / pacing_bps;
  return d < 1000 ? (uint32_t)d : 1000;
}

static void hystart_update(sim_cubic *ca, uint32_t delay, uint32_t cwnd,
                           uint32_t *ssthresh, uint64_t snd_una,
                           uint64_t snd_nxt, uint64_t pacing_bps,
                           netsim_time now) {
  uint32_t n = usecs(now);

  if (snd_una > ca->end_seq) {
    hystart_reset(ca, snd_nxt, now);
  }
  if (cwnd < LOW_WINDOW) {
    return;
  }
  /* The ACK train: ACKs close together for longer than half the least
     RTT (halved as Linux does when nothing paces the flow) mean the pipe
     is full. */
  if ((int32_t)(n - ca->last_ack) <= (int32_t)ACK_DELTA_US) {
    uint32_t threshold = (ca->delay_min + ack_delay(pacing_bps)) >> 1;
    ca->last_ack = n;
    if ((int32_t)(n - ca->round_start) > (int32_t)threshold) {
      ca->found = 1;
      ++ca->train_exits;
      *ssthresh = cwnd;
    }
  }
  /* The delay increase. */
  if (ca->curr_rtt > delay) {
    ca->curr_rtt = delay;
  }
  if (ca->sample_cnt < MIN_SAMPLES) {
    ++ca->sample_cnt;
  } else {
    uint32_t t = ca->delay_min >> 3;
    t = t < DELAY_MIN_US ? DELAY_MIN_US : t > DELAY_MAX_US ? DELAY_MAX_US : t;
    if (ca->curr_rtt > ca->delay_min + t) {
      ca->found = 1;
      ++ca->delay_exits;
      *ssthresh = cwnd;
    }
  }
}

void sim_cubic_acked(sim_cubic *ca, netsim_time rtt, uint32_t cwnd,
                     uint32_t *ssthresh, uint64_t snd_una, uint64_t snd_nxt,
                     uint64_t pacing_bps, netsim_time now) {
  uint32_t delay;

  if (rtt == NETSIM_TIME_NONE) {
    return;
  }
  /* Samples right after a reduction are discarded. */
  if (ca->epoch_start && (int32_t)(jiffies(now) - ca->epoch_start) < (int)HZ) {
    return;
  }
  delay = usecs(rtt);
  if (delay == 0) {
    delay = 1;
  }
  if (ca->delay_min == 0 || ca->delay_min > delay) {
    ca->delay_min = delay;
  }
  if (!ca->found && cwnd < *ssthresh) {
    hystart_update(ca, delay, cwnd, ssthresh, snd_una, snd_nxt, pacing_bps,
                   now);
  }
}

uint32_t sim_cubic_update(sim_cubic *ca, uint32_t cwnd, uint32_t acked,
                          netsim_time now) {
  uint32_t j = jiffies(now), gap, delta, target, max_cnt;
  uint64_t t, offs;

  ca->ack_cnt += acked;
  /* With an unchanged window, recompute at most 32 times a second; and
     never more than once a millisecond (a reduction, which ends the
     epoch, forces it).  last_time is in microseconds (Linux 6.11's
     "tcp_cubic: switch ca->last_time to usec resolution"). */
  gap = usecs(now) - ca->last_time;
  if (ca->last_cwnd == cwnd && gap <= 1000000u / 32) {
    return ca->cnt;
  }
  if (!(ca->epoch_start && gap < 1000u)) {
    ca->last_cwnd = cwnd;
    ca->last_time = usecs(now);
    if (ca->epoch_start == 0) {
      ca->epoch_start = j;
      ca->ack_cnt = acked;
      ca->tcp_cwnd = cwnd;
      if (ca->last_max_cwnd <= cwnd) {
        ca->k = 0;
        ca->origin = cwnd;
      } else {
        ca->k = icbrt(cube_factor * (ca->last_max_cwnd - cwnd));
        ca->origin = ca->last_max_cwnd;
      }
    }
    /* t, in 1/1024 s: the epoch's age plus the least RTT. */
    t = (uint64_t)(int32_t)(j - ca->epoch_start) + us_to_jiffies(ca->delay_min);
    t = (t << BICTCP_HZ) / HZ;
    offs = t < ca->k ? ca->k - t : t - ca->k;
    delta = (uint32_t)((CUBE_RTT_SCALE * offs * offs * offs) >>
                       (10 + 3 * BICTCP_HZ));
    if (t < ca->k) {
      target = ca->origin > delta ? ca->origin - delta : 0; /* concave */
    } else {
      target = ca->origin + delta; /* convex */
    }
    if (target > cwnd) {
      ca->cnt = cwnd / (target - cwnd);
    } else {
      ca->cnt = 100 * cwnd; /* very slow growth at the plateau */
    }
    if (ca->last_max_cwnd == 0 && ca->cnt > 20) {
      ca->cnt = 20; /* 5% per RTT before the first loss */
    }
  }
  /* The TCP-friendly region: the Reno window CUBIC would emulate. */
  delta = (cwnd * FRIENDLY_SCALE) >> 3;
  if (delta == 0) {
    delta = 1;
  }
  while (ca->ack_cnt > delta) {
    ca->ack_cnt -= delta;
    ++ca->tcp_cwnd;
  }
  if (ca->tcp_cwnd > cwnd) {
    max_cnt = cwnd / (ca->tcp_cwnd - cwnd);
    if (ca->cnt > max_cnt) {
      ca->cnt = max_cnt;
    }
  }
  if (ca->cnt < 2) {
    ca->cnt = 2;
  }
  return ca->cnt;
}

void sim_cubic_ai(uint32_t *cwnd, uint32_t *cwnd_cnt, uint32_t w,
                  uint32_t acked, uint32_t clamp) {
  /* A window that shrank since the count began steps once first. */
  if (*cwnd_cnt >= w) {
    *cwnd_cnt = 0;
    ++*cwnd;
  }
  *cwnd_cnt += acked;
  if (*cwnd_cnt >= w) {
    uint32_t delta = *cwnd_cnt / w;
    *cwnd_cnt -= delta * w;
    *cwnd += delta;
  }
  if (*cwnd > clamp) {
    *cwnd = clamp;
  }
}
