/*
 * impair.c: the impairment model's random streams and links (impair.h).
 */
#include "impair.h"

#include <math.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

void impair_rng_init(impair_rng *rng, uint64_t master, uint32_t cls,
                     uint64_t id) {
  uint64_t who =
      impair_mix64(((uint64_t)cls << 56) ^ id ^ 0xD1B54A32D192ED03ULL);

  rng->state = impair_mix64(master ^ who);
}

uint64_t impair_threshold(double p) {
  double v;

  if (!(p > 0.0)) {
    return 0;
  }
  if (p >= 1.0) {
    return UINT64_MAX;
  }
  v = p * 18446744073709551616.0;
  if (v >= 18446744073709549568.0) {
    return UINT64_MAX - 1;
  }
  return (uint64_t)v;
}

static int prob_ok(double p) {
  return p >= 0.0 && p <= 1.0;
}

int impair_cfg_check(const impair_cfg *cfg) {
  if (cfg == NULL || !prob_ok(cfg->loss) || !prob_ok(cfg->dup) ||
      !prob_ok(cfg->reorder) || !prob_ok(cfg->corrupt) || !prob_ok(cfg->ber) ||
      cfg->jitter == IMPAIR_NONE) {
    return -EINVAL;
  }
  return 0;
}

/* set_flag turns |bit| of l->flags on if |thr| ever hits, else off. */
static void set_flag(impair_link *l, uint32_t bit, uint64_t thr) {
  l->flags = (l->flags & ~bit) | (thr ? bit : 0);
}

/* ber_gap draws how many error-free bits come before the next bit error:
   with U uniform in (0, 1], -ln U is exponential with mean 1 and
   floor(-ln U / -ln(1 - ber)) is geometric, P(gap >= k) = (1 - ber)^k.
   So a clean copy costs a subtraction and no draw, and the gaps have no
   memory: each packet is hit independently of those before it. */
static uint64_t ber_gap(impair_link *l) {
  double u = (double)((impair_rng_next(&l->corrupt_rng) >> 11) + 1) * 0x1p-53;
  double x = -log(u) * l->ber_scale;

  if (!(x < 9.0e18)) {
    return UINT64_MAX; /* beyond any run: no more errors */
  }
  return x > 0 ? (uint64_t)x : 0;
}

void impair_link_init(impair_link *l, const impair_cfg *cfg, uint64_t seed,
                      uint64_t id) {
  memset(l, 0, sizeof(*l));
  l->cfg = *cfg;
  impair_rng_init(&l->loss_rng, seed, IMPAIR_STREAM_LOSS, id);
  impair_rng_init(&l->dup_rng, seed, IMPAIR_STREAM_DUP, id);
  impair_rng_init(&l->reorder_rng, seed, IMPAIR_STREAM_REORDER, id);
  impair_rng_init(&l->jitter_rng, seed, IMPAIR_STREAM_JITTER, id);
  impair_rng_init(&l->corrupt_rng, seed, IMPAIR_STREAM_CORRUPT, id);
  l->loss_thr = impair_threshold(cfg->loss);
  l->dup_thr = impair_threshold(cfg->dup);
  l->reorder_thr = impair_threshold(cfg->reorder);
  l->corrupt_thr = impair_threshold(cfg->corrupt);
  set_flag(l, IMPAIR_F_LOSS, l->loss_thr);
  set_flag(l, IMPAIR_F_DUP, l->dup_thr);
  set_flag(l, IMPAIR_F_REORDER, l->reorder_thr);
  set_flag(l, IMPAIR_F_CORRUPT, l->corrupt_thr);
  if (cfg->ber > 0) {
    impair_link_set_ber(l, cfg->ber);
  }
}

int impair_link_set_loss(impair_link *l, double p) {
  if (!prob_ok(p)) {
    return -EINVAL;
  }
  l->cfg.loss = p;
  l->loss_thr = impair_threshold(p);
  set_flag(l, IMPAIR_F_LOSS, l->loss_thr);
  return 0;
}

int impair_link_set_dup(impair_link *l, double p) {
  if (!prob_ok(p)) {
    return -EINVAL;
  }
  l->cfg.dup = p;
  l->dup_thr = impair_threshold(p);
  set_flag(l, IMPAIR_F_DUP, l->dup_thr);
  return 0;
}

int impair_link_set_ber(impair_link *l, double ber) {
  if (!prob_ok(ber)) {
    return -EINVAL;
  }
  l->cfg.ber = ber;
  if (ber == 0.0) {
    l->flags &= ~IMPAIR_F_BER;
    l->ber_scale = 0;
    l->ber_left = 0;
    return 0;
  }
  /* ber = 1: -1 / ln 0 = 0, every gap is 0 and every bit is hit. */
  l->ber_scale = -1.0 / log1p(-ber);
  l->ber_left = ber_gap(l);
  l->flags |= IMPAIR_F_BER;
  return 0;
}

void impair_link_send(impair_link *l, size_t len, impair_time now,
                      impair_fate *f) {
  const impair_cfg *c = &l->cfg;
  uint32_t n = 1, k;

  f->copies = 0;
  f->at[0] = f->at[1] = now;
  f->drop = IMPAIR_DROP_NONE;
  ++l->st.sent;
  if (c->blackhole && now >= c->blackhole_from) {
    ++l->st.blackholed;
    f->drop = IMPAIR_DROP_BLACKHOLE;
    return;
  }
  if (impair_link_lose(l)) {
    f->drop = IMPAIR_DROP_LOSS;
    return;
  }
  if (impair_link_dup(l)) {
    n = 2;
  }
  for (k = 0; k < n; ++k) {
    impair_time extra = 0, depart = now, at;

    if (impair_rng_chance(&l->reorder_rng, l->reorder_thr)) {
      ++l->st.reordered;
      extra = c->reorder_delay;
    }
    /* The copy of a duplicate comes dup_delay late (a stale copy that
       some buffer on the way held on to); without it, right behind the
       original. */
    if (k == 1) {
      extra += c->dup_delay;
    }
    if (c->rate_bps) {
      /* A serialiser at rate_bps behind a queue of queue_bytes: what is
         queued is the serialiser's backlog; past the limit, tail drop. */
      impair_time start = l->busy_until > now ? l->busy_until : now;
      if (c->queue_bytes) {
        u128 backlog = (u128)(start - now) * c->rate_bps / 8000000000u;
        if (backlog + len > c->queue_bytes) {
          /* This copy and any after it (they would not fit either). */
          l->st.queue_drops += n - k;
          f->drop = IMPAIR_DROP_QUEUE;
          return;
        }
      }
      if (start == now) {
        /* Idle: a new busy period starts now. */
        l->epoch_start = now;
        l->epoch_bytes = 0;
      }
      /* From the bytes of the busy period so far, not copy by copy: the
         rounding never adds up, and the rate is never exceeded. */
      l->epoch_bytes += len;
      l->busy_until = l->epoch_start + (impair_time)((u128)l->epoch_bytes *
                                                     8000000000u / c->rate_bps);
      depart = l->busy_until;
    }
    at = depart + c->delay + extra;
    if (c->jitter) {
      at += impair_rng_below(&l->jitter_rng, c->jitter + 1);
    }
    /* A link is FIFO: jitter (queueing) varies the delay but never lets
       a copy overtake the one before it.  Only a copy held back, or a
       late duplicate, arrives out of order. */
    if (extra == 0) {
      if (at < l->last_at) {
        at = l->last_at;
      }
      l->last_at = at;
    }
    if (k == 1 && c->dup_delay) {
      ++l->st.dup_delayed;
    }
    if (at > now) {
      ++l->st.delayed;
    }
    f->at[f->copies++] = at;
  }
}

void impair_link_flips(impair_link *l, impair_flips *f, uint64_t bits) {
  f->bits = bits;
  f->one = f->pos = IMPAIR_NONE;
  f->hit = 0;
  if (bits > 0 && impair_rng_chance(&l->corrupt_rng, l->corrupt_thr)) {
    f->one = impair_rng_below(&l->corrupt_rng, bits);
  }
  if (l->flags & IMPAIR_F_BER) {
    if (l->ber_left >= bits) {
      l->ber_left -= bits;
    } else {
      f->pos = l->ber_left;
    }
  }
}

uint64_t impair_flips_next(impair_link *l, impair_flips *f) {
  uint64_t r, gap;

  if (f->one != IMPAIR_NONE) {
    r = f->one;
    f->one = IMPAIR_NONE;
  } else if (f->pos != IMPAIR_NONE) {
    r = f->pos;
    gap = ber_gap(l);
    if (gap >= f->bits - r - 1) {
      l->ber_left = gap - (f->bits - r - 1);
      f->pos = IMPAIR_NONE;
    } else {
      f->pos = r + gap + 1;
    }
  } else {
    return IMPAIR_NONE;
  }
  if (!f->hit) {
    f->hit = 1;
    ++l->st.corrupted;
  }
  ++l->st.bit_errors;
  return r;
}

uint64_t impair_link_corrupt(impair_link *l, uint8_t *data, size_t len) {
  impair_flips f;
  uint64_t bit, n = 0;

  impair_link_flips(l, &f, (uint64_t)len * 8);
  while ((bit = impair_flips_next(l, &f)) != IMPAIR_NONE) {
    impair_flip_bit(data, bit);
    ++n;
  }
  return n;
}
