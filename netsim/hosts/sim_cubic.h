/*
 * sim_cubic.h: CUBIC congestion control as Linux runs it by default
 * (net/ipv4/tcp_cubic.c), for the TCP model (sim_tcp.c).
 *
 * Kept apart from the model so that it can be driven, and tested, one ACK
 * at a time.  The arithmetic is the kernel's: windows in segments, the
 * cubic clock in jiffies (HZ 1000, the model's kernel) scaled to 1/1024 s
 * (BICTCP_HZ), HyStart's clock in microseconds.  What it holds:
 *   - beta 717/1024: on a loss the slow-start threshold is 0.7 of the
 *     window (cubictcp_recalc_ssthresh), at least 2;
 *   - fast convergence: a loss below the last maximum remembers
 *     W_max = cwnd * (1 + beta) / 2 instead of cwnd;
 *   - the cubic function W(t) = C (t - K)^3 + W_max with C = 0.4
 *     (bic_scale 41/1024 times 10), K = cbrt(W_max (1 - beta) / C), t the
 *     time since the epoch began (the first ACK in congestion avoidance
 *     after a reduction) plus the minimum RTT, evaluated at most once a
 *     millisecond and, with an unchanged window, at most 32 times a
 *     second (bictcp_update with last_time in microseconds, Linux 6.11);
 *   - the TCP-friendly region: an emulated Reno window growing by
 *     3 (1 - beta) / (1 + beta) segments per RTT (beta_scale, integer
 *     15/8 ACKs per segment); when it is ahead, CUBIC grows at least as
 *     fast as it;
 *   - growth at most one segment per two ACKed (cnt >= 2), and before the
 *     first loss at least 5% per RTT (cnt <= 20);
 *   - HyStart (hystart_low_window 16, both detectors on): the ACK train
 *     (ACKs spaced by at most 2 ms that run on for more than half of
 *     delay_min plus hystart_ack_delay after a round began) and the delay
 *     increase (the round's least RTT over 8 samples above delay_min +
 *     clamp(delay_min / 8, 4 ms, 16 ms)) end slow start by setting
 *     ssthresh to cwnd; delay samples within a second of an epoch's start
 *     are ignored;
 *   - an RTO (the Loss state) forgets everything: W_max 0, HyStart armed
 *     again (cubictcp_state);
 *   - after an idle period the epoch moves by the idle time
 *     (cubictcp_cwnd_event, CA_EVENT_TX_START).
 * The caller does slow start (cwnd < ssthresh) and the additive increase
 * (tcp_cong_avoid_ai with sim_cubic_update's count); this module keeps
 * only CUBIC's own state.  No function allocates or fails.
 */
#ifndef SIM_CUBIC_H
#define SIM_CUBIC_H

#include <stdint.h>

#include <netsim/netsim.h>

/* sim_cubic is one connection's CUBIC state (struct bictcp); the caller
   owns the storage.  Fields are the kernel's and are read by the tests. */
typedef struct sim_cubic {
  uint32_t cnt;           /* ACKs per one-segment increase */
  uint32_t last_max_cwnd; /* W_max; 0: no loss yet (or since an RTO) */
  uint32_t last_cwnd;     /* the window when cnt was last computed */
  uint32_t last_time;     /* ... and when, in jiffies */
  uint32_t origin;        /* bic_origin_point */
  uint32_t k;             /* bic_K, in 1/1024 s */
  uint32_t delay_min;     /* the least RTT seen, us (0: none) */
  uint32_t epoch_start;   /* jiffies; 0: no epoch */
  uint32_t ack_cnt;       /* segments ACKed in this epoch */
  uint32_t tcp_cwnd;      /* the emulated Reno window */
  /* HyStart. */
  uint32_t found;       /* slow start's exit was found */
  uint32_t sample_cnt;  /* RTT samples in this round */
  uint32_t round_start; /* us */
  uint32_t last_ack;    /* us: the latest ACK of the train */
  uint32_t curr_rtt;    /* the round's least RTT, us */
  uint64_t end_seq;     /* the round ends when snd_una passes this */
  /* The counts of HyStart exits (LINUX_MIB_TCPHYSTART*DETECT). */
  uint32_t train_exits;
  uint32_t delay_exits;
} sim_cubic;

/* sim_cubic_init sets up |ca| for a new connection at time |now| whose
   next sequence number is |snd_nxt| (cubictcp_init). */
void sim_cubic_init(sim_cubic *ca, uint64_t snd_nxt, netsim_time now);

/* sim_cubic_ssthresh is the slow-start threshold after a loss seen with
   window |cwnd| (> 0): max(cwnd * 717 / 1024, 2).  It ends the epoch and
   sets W_max, with fast convergence (cubictcp_recalc_ssthresh). */
uint32_t sim_cubic_ssthresh(sim_cubic *ca, uint32_t cwnd);

/* sim_cubic_on_rto is the Loss state's reset after a retransmission
   timeout at |now| with |snd_nxt| (cubictcp_state(TCP_CA_Loss)); call it
   after sim_cubic_ssthresh. */
void sim_cubic_on_rto(sim_cubic *ca, uint64_t snd_nxt, netsim_time now);

/* sim_cubic_tx_start tells |ca| that data is sent at |now| with nothing in
   flight, the last data having been sent at |last_send|: an epoch under
   way moves on by the idle time, at most to now. */
void sim_cubic_tx_start(sim_cubic *ca, netsim_time now, netsim_time last_send);

/* sim_cubic_acked takes an ACK's RTT sample (cubictcp_acked, with
   HyStart's hystart_update): |rtt| the sample (NETSIM_TIME_NONE: none),
   |cwnd| and |*ssthresh| the window and threshold (HyStart may set
   |*ssthresh| to |cwnd|), |snd_una| and |snd_nxt| after the ACK,
   |pacing_bps| the rate Linux would pace at (sk_pacing_rate in bytes per
   second, for hystart_ack_delay; 0: none), all at |now|. */
void sim_cubic_acked(sim_cubic *ca, netsim_time rtt, uint32_t cwnd,
                     uint32_t *ssthresh, uint64_t snd_una, uint64_t snd_nxt,
                     uint64_t pacing_bps, netsim_time now);

/* sim_cubic_update returns the number of ACKed segments that should grow
   the window |cwnd| (> 0) by one, given |acked| segments ACKed now in
   congestion avoidance at |now| (bictcp_update; the result is also
   ca->cnt, >= 2). */
uint32_t sim_cubic_update(sim_cubic *ca, uint32_t cwnd, uint32_t acked,
                          netsim_time now);

/* sim_cubic_ai is tcp_cong_avoid_ai, the additive increase CUBIC shares
   with Reno (which passes w = cwnd): |*cwnd| grows by one segment for
   every |w| (> 0) segments ACKed, counted in |*cwnd_cnt|, with |acked|
   segments ACKed now; never above |clamp|. */
void sim_cubic_ai(uint32_t *cwnd, uint32_t *cwnd_cnt, uint32_t w,
                  uint32_t acked, uint32_t clamp);

#endif /* SIM_CUBIC_H */
