/*
 * srd_acktr.c: receive-side packet tracking.
 */
#include "srd_acktr.h"

#include <assert.h>
#include <string.h>

#include "srd_macro.h"

int srd_acktr_init(srd_acktr *at, uint32_t window, const srd_mem *mem) {
  assert(srd_is_pow2(window) && window >= 64 && window <= 65536);
  memset(at, 0, sizeof(*at));
  at->mem = mem;
  at->window = window;
  at->mask = window - 1;
  at->bits = mem->calloc(window / 64, sizeof(uint64_t), mem->user_data);
  if (at->bits == NULL) {
    return SRD_ERR_NOMEM;
  }
  at->nack = mem->calloc(window, sizeof(srd_pkt_nack), mem->user_data);
  if (at->nack == NULL) {
    mem->free(at->bits, mem->user_data);
    at->bits = NULL;
    return SRD_ERR_NOMEM;
  }
  return 0;
}

void srd_acktr_fini(srd_acktr *at) {
  if (at->bits) {
    at->mem->free(at->bits, at->mem->user_data);
    at->bits = NULL;
  }
  if (at->nack) {
    at->mem->free(at->nack, at->mem->user_data);
    at->nack = NULL;
  }
}

void srd_acktr_reset(srd_acktr *at) {
  memset(at->bits, 0, at->window / 8);
  at->largest = 0;
  at->have_largest = 0;
  at->echo_head = at->n_echo = 0;
  at->nack_head = at->n_nack = 0;
  at->unacked = 0;
  at->first_unacked_ts = 0;
  at->immediate = 0;
}

static inline int test_bit(const srd_acktr *at, uint32_t seq) {
  uint32_t i = seq & at->mask;
  return (int)((at->bits[i >> 6] >> (i & 63)) & 1);
}

static inline void set_bit(srd_acktr *at, uint32_t seq) {
  uint32_t i = seq & at->mask;
  at->bits[i >> 6] |= 1ULL << (i & 63);
}

static inline void clear_bit(srd_acktr *at, uint32_t seq) {
  uint32_t i = seq & at->mask;
  at->bits[i >> 6] &= ~(1ULL << (i & 63));
}

int srd_acktr_check(const srd_acktr *at, uint32_t seq) {
  uint32_t behind;

  if (!at->have_largest || srd_seq_gt(seq, at->largest)) {
    return SRD_ACKTR_NEW;
  }
  behind = at->largest - seq;
  if (behind >= at->window) {
    return SRD_ACKTR_OLD;
  }
  return test_bit(at, seq) ? SRD_ACKTR_DUP : SRD_ACKTR_NEW;
}

void srd_acktr_record(srd_acktr *at, uint32_t seq, uint64_t tx_ts,
                      uint16_t path, srd_tstamp now) {
  srd_acktr_echo *e;

  if (!at->have_largest) {
    at->have_largest = 1;
    at->largest = seq;
  } else if (srd_seq_gt(seq, at->largest)) {
    uint32_t adv = seq - at->largest;
    if (adv >= at->window) {
      memset(at->bits, 0, at->window / 8);
    } else {
      /* Forget the numbers that the window slides past. */
      uint32_t s;
      for (s = at->largest + 1; s != seq; ++s) {
        clear_bit(at, s);
      }
    }
    at->largest = seq;
  }
  set_bit(at, seq);

  if (at->n_echo == SRD_ACK_MAX_ECHO) {
    /* Full: drop the oldest echo; the sender gets fewer samples. */
    at->echo_head = (at->echo_head + 1) % SRD_ACK_MAX_ECHO;
    --at->n_echo;
  }
  e = &at->echo[(at->echo_head + at->n_echo) % SRD_ACK_MAX_ECHO];
  e->tx_ts = tx_ts;
  e->seq = seq;
  e->rx_ts = now;
  e->path = path;
  ++at->n_echo;

  if (at->unacked++ == 0) {
    at->first_unacked_ts = now;
  }
}

void srd_acktr_add_nack(srd_acktr *at, uint32_t seq, uint32_t msg_id,
                        uint8_t reason) {
  srd_acktr_add_note(at, seq, msg_id, reason, 0);
}

void srd_acktr_add_note(srd_acktr *at, uint32_t seq, uint32_t msg_id,
                        uint8_t reason, uint32_t frag) {
  srd_pkt_nack *n;

  at->immediate = 1;
  if (at->n_nack == at->window) {
    return;
  }
  n = &at->nack[(at->nack_head + at->n_nack) & at->mask];
  n->seq = seq;
  n->msg_id = msg_id;
  n->reason = reason;
  n->frag = frag;
  ++at->n_nack;
}

int srd_acktr_ack_due(const srd_acktr *at, srd_tstamp now, uint32_t ack_freq,
                      srd_duration ack_delay) {
  if (at->immediate || at->n_nack) {
    return 1;
  }
  if (at->unacked == 0) {
    return 0;
  }
  return at->unacked >= ack_freq || now >= at->first_unacked_ts + ack_delay;
}

srd_tstamp srd_acktr_deadline(const srd_acktr *at, uint32_t ack_freq,
                              srd_duration ack_delay) {
  if (at->unacked == 0 || at->immediate || at->n_nack ||
      at->unacked >= ack_freq) {
    return SRD_TSTAMP_NONE;
  }
  return at->first_unacked_ts + ack_delay;
}

/* run_down counts consecutive packet numbers from |from| downward whose
   bit equals |want|, at most |max|, a 64-bit word at a time. */
static uint32_t run_down(const srd_acktr *at, uint32_t from, int want,
                         uint32_t max) {
  uint32_t n = 0;

  while (n < max) {
    uint32_t i = (from - n) & at->mask;
    uint32_t bit = i & 63;
    uint64_t w = at->bits[i >> 6];
    uint64_t range = bit == 63 ? ~0ULL : ((1ULL << (bit + 1)) - 1);
    uint64_t other = (want ? ~w : w) & range;
    uint32_t run;

    if (other == 0) {
      run = bit + 1;
    } else {
      run = bit - (63 - (uint32_t)__builtin_clzll(other));
    }
    if (run > max - n) {
      run = max - n;
    }
    n += run;
    if (other != 0) {
      break;
    }
  }
  return n;
}

void srd_acktr_build(srd_acktr *at, srd_pkt_ack *a, srd_tstamp now) {
  srd_acktr_build_max(at, a, now, SRD_ACK_MAX_RANGES);
}

void srd_acktr_build_max(srd_acktr *at, srd_pkt_ack *a, srd_tstamp now,
                         uint32_t max_ranges) {
  uint32_t i, left, seq, run;

  memset(a, 0, offsetof(srd_pkt_ack, ranges));
  a->empty = !at->have_largest;
  if (at->have_largest) {
    a->largest = at->largest;
    /* The largest itself may be absent only if never recorded. */
    left = at->window;
    run = run_down(at, at->largest, 1, left);
    assert(run >= 1);
    a->first_range = (uint16_t)srd_min(run - 1, UINT16_MAX);
    /* Continue below what the first range covered. */
    run = (uint32_t)a->first_range + 1;
    seq = at->largest - run;
    left -= run;
    while (left > 0 && a->n_ranges < max_ranges) {
      uint32_t gap = run_down(at, seq, 0, srd_min(left, UINT16_MAX));
      uint32_t len;
      if (gap == 0 || gap == left) {
        break; /* nothing missing (capped first range), or nothing left */
      }
      seq -= gap;
      left -= gap;
      len = run_down(at, seq, 1, srd_min(left, UINT16_MAX));
      if (gap > UINT16_MAX || len == 0) {
        break;
      }
      a->ranges[a->n_ranges].gap = (uint16_t)gap;
      a->ranges[a->n_ranges].len = (uint16_t)len;
      ++a->n_ranges;
      seq -= len;
      left -= len;
    }
  }
  for (i = 0; i < at->n_echo; ++i) {
    const srd_acktr_echo *e = &at->echo[(at->echo_head + i) % SRD_ACK_MAX_ECHO];
    srd_duration hold = now - e->rx_ts;
    a->echo[i].tx_ts = e->tx_ts;
    a->echo[i].seq = e->seq;
    a->echo[i].hold_ns = (uint32_t)srd_min(hold, UINT32_MAX);
    a->echo[i].path = e->path;
  }
  a->n_echo = (uint8_t)at->n_echo;
  while (at->n_nack > 0 && a->n_nack < SRD_ACK_MAX_NACK) {
    a->nack[a->n_nack++] = at->nack[at->nack_head];
    at->nack_head = (at->nack_head + 1) & at->mask;
    --at->n_nack;
  }

  at->echo_head = at->n_echo = 0;
  at->unacked = 0;
  /* NACKs that did not fit keep the next ACK due. */
  at->immediate = at->n_nack > 0;
}
