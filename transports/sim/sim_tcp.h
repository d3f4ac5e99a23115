/*
 * sim_tcp.h: a TCP model for netsim hosts, faithful to Linux where it
 * decides what a datacenter transport comparison shows.
 *
 * What it models (docs/netsim.md, "The TCP model", has the detail and the
 * kernel functions each part follows):
 *   - a byte stream per connection, delivered to the application strictly
 *     in order; messages are byte ranges of it, and for every message the
 *     model records when its bytes arrived and when they became readable,
 *     so head-of-line blocking is measured, not inferred;
 *   - a three-way handshake (SYN lost: the 1 s initial RTO);
 *   - MSS-sized segments (a short one only at the end of written data:
 *     TCP_NODELAY), a receive window, initial window 10 segments;
 *   - slow start and congestion avoidance in segments (tcp_reno_cong_avoid,
 *     tcp_cong_avoid_ai), NewReno; DCTCP as an option (alpha with g =
 *     1/16, cut cwnd * (1 - alpha/2) once per window on ECN echo);
 *   - SACK scoreboard; loss marking by RACK (RFC 8985, reordering window
 *     min_rtt/4, 0 once three segments are SACKed; the reorder timer adds
 *     the 2 ms timer slack of the kernel) or, with rack off, by three
 *     duplicate ACKs (RFC 6675 DupThresh); without SACK, NewReno partial
 *     ACKs;
 *   - fast recovery with proportional rate reduction (RFC 6937, as Linux);
 *   - tail loss probes (RFC 8985 TLP as tcp_schedule_loss_probe: 2 srtt +
 *     2 ms, + rto_min when one segment is out, capped at the RTO);
 *   - the retransmission timeout as Linux computes it: srtt + max(4 rttvar,
 *     rto_min), initial 1 s, doubling, capped at 120 s; on expiry cwnd 1,
 *     every unSACKed segment lost (tcp_enter_loss);
 *   - delayed ACK as an option (every second segment, else after delack,
 *     40 ms; at once for out-of-order data; quick ACKs at the start);
 *   - duplicates: a segment already received is answered at once with a
 *     D-SACK-flagged ACK and not delivered again, and never moves the
 *     echoed timestamp back (PAWS keeps ts_recent); an ACK below snd_una
 *     takes tcp_ack's old_ack path (its SACK blocks only: no RTT sample,
 *     no duplicate ACK, no ECN echo, timers untouched).
 */
#ifndef SIM_TCP_H
#define SIM_TCP_H

#include "simx.h"

/* Congestion controllers. */
#define SIM_TCP_CC_RENO 0
#define SIM_TCP_CC_DCTCP 1

/* sim_tcp_cfg configures TCP in every host. */
typedef struct sim_tcp_cfg {
  /* seed is the run's seed (ephemeral ports). */
  uint64_t seed;
  /* mss is the payload of a full segment in bytes. */
  uint32_t mss;
  /* init_cwnd is the initial window in segments (Linux: 10). */
  uint32_t init_cwnd;
  /* rwnd is the receive window in bytes (caps bytes in flight). */
  uint64_t rwnd;
  /* rto_min, rto_initial and rto_max: Linux 200 ms, 1 s, 120 s. */
  netsim_time rto_min;
  netsim_time rto_initial;
  netsim_time rto_max;
  /* timer_slack is what the kernel adds to the probe and reorder timers
     (TCP_TIMEOUT_MIN, 2 jiffies: 2 ms). */
  netsim_time timer_slack;
  /* cc is SIM_TCP_CC_RENO or SIM_TCP_CC_DCTCP. */
  int cc;
  /* ecn: data segments are ECN-capable and the receiver echoes marks
     (implied by DCTCP). */
  int ecn;
  /* dctcp_g is DCTCP's gain (1/16). */
  double dctcp_g;
  /* sack, rack and tlp turn those mechanisms on (Linux: all on). */
  int sack;
  int rack;
  int tlp;
  /* dupthresh is the duplicate-ACK threshold (3). */
  uint32_t dupthresh;
  /* delayed_ack: ACK every second full segment or after |delack|. */
  int delayed_ack;
  netsim_time delack;
  /* quickack is how many segments are ACKed at once at the start of a
     connection even with delayed ACKs. */
  uint32_t quickack;
  /* handshake: open connections with SYN, SYN-ACK (else they start
     established). */
  int handshake;
  /* dport is the server port. */
  uint16_t dport;
  /* nic_limit_bytes: the host stops handing segments to its NIC while its
     queue holds this many bytes (TCP small queues and qdisc
     backpressure); 0: four full segments. */
  uint32_t nic_limit_bytes;
} sim_tcp_cfg;

/* sim_tcp_cfg_default fills |c| with Linux's defaults: MSS 8948 (9000
   MTU), IW10, 6 MiB window, RTO 200 ms / 1 s / 120 s, NewReno, SACK,
   RACK, TLP, no delayed ACK, handshake on. */
void sim_tcp_cfg_default(sim_tcp_cfg *c);

/* sim_tcp_new attaches TCP to every host of |sim|, reporting to |app|.
   Returns 0, NETSIM_ERR_INVAL (a setting out of range: |err| says which)
   or NETSIM_ERR_NOMEM. */
int sim_tcp_new(simx **px, netsim_sim *sim, const sim_tcp_cfg *c,
                const simx_app *app, char *err, size_t errlen);

/* sim_tcp_flowkey writes to |key| the 5-tuple of the data direction of
   the connection |conn| from host |src| to host |dst| would use: the
   ephemeral source port is a function of the seed and the three numbers,
   so the runner can name the path a connection will hash onto before it
   opens. */
void sim_tcp_flowkey(const sim_tcp_cfg *c, uint32_t src, uint32_t dst,
                     uint32_t conn, netsim_flowkey *key);

/* sim_tcp_conn_info describes one connection. */
typedef struct sim_tcp_conn_info {
  /* src, dst and key: the hosts and the data direction's 5-tuple. */
  uint32_t src;
  uint32_t dst;
  netsim_flowkey key;
  /* cwnd and ssthresh in segments. */
  uint32_t cwnd;
  uint32_t ssthresh;
  /* srtt and rto; max_rtt is the largest RTT sample taken. */
  netsim_time srtt;
  netsim_time rto;
  netsim_time max_rtt;
  /* snd_una, snd_nxt and rcv_nxt are stream offsets. */
  uint64_t snd_una;
  uint64_t snd_nxt;
  uint64_t rcv_nxt;
  /* retransmits and timeouts of this connection. */
  uint64_t retransmits;
  uint64_t timeouts;
  /* alpha is DCTCP's estimate (0..1). */
  double alpha;
} sim_tcp_conn_info;

/* sim_tcp_n_conns returns the number of connections opened so far. */
uint32_t sim_tcp_n_conns(simx *x);

/* sim_tcp_conn_get describes connection |i|.  Returns 0 or
   NETSIM_ERR_NOENT. */
int sim_tcp_conn_get(simx *x, uint32_t i, sim_tcp_conn_info *info);

#endif /* SIM_TCP_H */
