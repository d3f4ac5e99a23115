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
 *   - slow start and congestion avoidance in segments (tcp_slow_start,
 *     tcp_cong_avoid_ai) with CUBIC, Linux's default (sim_cubic.h:
 *     beta 717/1024, C 0.4, fast convergence, the TCP-friendly region,
 *     HyStart), NewReno (tcp_reno_cong_avoid) or DCTCP (Reno's growth;
 *     alpha with g = 1/16, cut cwnd * (1 - alpha/2) once per window on
 *     ECN echo);
 *   - SACK scoreboard; loss marking by RACK (RFC 8985, reordering window
 *     min_rtt/4, 0 once three segments are SACKed; the reorder timer adds
 *     the 2 ms timer slack of the kernel) or, with rack off, by three
 *     duplicate ACKs (RFC 6675 DupThresh); without SACK, NewReno partial
 *     ACKs;
 *   - fast recovery with proportional rate reduction (RFC 6937, as Linux);
 *   - tail loss probes (RFC 8985 TLP as tcp_schedule_loss_probe: 2 srtt +
 *     2 ms, + rto_min when one segment is out, capped at the RTO, in Open
 *     and CWR only; rescheduled after each new segment, as
 *     tcp_write_xmit does);
 *   - the retransmission timeout as Linux computes it: srtt + max(4 rttvar,
 *     rto_min), initial 1 s, doubling, capped at 120 s; on expiry cwnd 1,
 *     every unSACKed segment lost (tcp_enter_loss);
 *   - the receiver's ACK policy as Linux's (on by default; off: an ACK
 *     for every segment): an ACK once more than one rcv_mss is
 *     unacknowledged (every second full segment), at once in quick-ACK
 *     mode (16 ACKs at the start, after an idle gap over rto_min and
 *     after a duplicate), for out-of-order data, for the segment that
 *     fills a hole, for CE and once the application has read a pushed
 *     segment (short, or ending a write), else after delack (40 ms);
 *     docs/netsim.md says what is simplified;
 *   - duplicates: a segment already received is answered at once with a
 *     D-SACK-flagged ACK and not delivered again, and never moves the
 *     echoed timestamp back (PAWS keeps ts_recent); an ACK below snd_una
 *     takes tcp_ack's old_ack path (its SACK blocks only: no RTT sample,
 *     no duplicate ACK, no ECN echo, timers untouched).
 *
 * The functions below are defined in sim_tcp.c and return netsim's codes
 * (NETSIM_ERR_*).  The model never fails a message: it retransmits until
 * the run ends, so simx_msg.status stays 0.  Reports to the application
 * are deferred until the model is done with the packet or timer at hand
 * (or with simx_post), so a callback may post new messages.
 */
#ifndef SIM_TCP_H
#define SIM_TCP_H

#include "simx.h"

/* Congestion controllers. */
#define SIM_TCP_CC_RENO 0
#define SIM_TCP_CC_DCTCP 1
#define SIM_TCP_CC_CUBIC 2

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
  /* cc is SIM_TCP_CC_CUBIC (the default, as Linux's), SIM_TCP_CC_RENO
     or SIM_TCP_CC_DCTCP (which turns ecn on). */
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
  /* delayed_ack: Linux's receiver ACK policy (1, the default: an ACK
     once more than one segment's worth is unacknowledged, at once for
     out-of-order data, in quick-ACK mode and for a message's last
     segment, else after |delack|); 0: an ACK for every segment at
     once. */
  int delayed_ack;
  netsim_time delack;
  /* quickack is how many ACKs go at once in quick-ACK mode (Linux's
     TCP_MAX_QUICKACKS, 16): at the start of a connection, after an idle
     gap longer than rto_min and after a duplicate segment. */
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
   MTU), IW10, 6 MiB window, RTO 200 ms / 1 s / 120 s, CUBIC, SACK,
   RACK, TLP, delayed ACK (40 ms, 16 quick ACKs), handshake on. */
void sim_tcp_cfg_default(sim_tcp_cfg *c);

/* sim_tcp_new attaches TCP to every host of |sim| (after the topology is
   built), reporting to |app|, and stores it in |*px| (only on success).
   |c| and |app| are copied; |sim| is kept and must outlive the instance:
   simx_del it before netsim_sim_del.  It takes over each host's receive
   callback.  Connections open when the first message of a (src, dst,
   conn) is posted.

   Returns 0, or one of (|err|, if not NULL, gets a message of at most
   |errlen| bytes where one is given):
   NETSIM_ERR_INVAL  a setting out of range (mss 64..65000, init_cwnd >=
                     1, rwnd >= mss, rto_min > 0, rto_initial > 0,
                     rto_max >= rto_min, dupthresh >= 1, 0 < dctcp_g <=
                     1: message), the simulation's payload buffers are
                     smaller than a TCP header (message), a host without
                     a NIC (message)
   NETSIM_ERR_NOMEM  allocation failed */
int sim_tcp_new(simx **px, netsim_sim *sim, const sim_tcp_cfg *c,
                const simx_app *app, char *err, size_t errlen);

/* sim_tcp_flowkey writes to |key| the 5-tuple of the data direction of
   the connection |conn| from host |src| to host |dst| would use: the
   ephemeral source port is a function of the seed and the three numbers,
   so the runner can name the path a connection will hash onto before it
   opens.  It needs no instance, changes nothing and cannot fail. */
void sim_tcp_flowkey(const sim_tcp_cfg *c, uint32_t src, uint32_t dst,
                     uint32_t conn, netsim_flowkey *key);

/* SIM_TCP_WIRE_MAX is the longest TCP header sim_tcp_wire_header writes. */
#define SIM_TCP_WIRE_MAX 60u

/* sim_tcp_wire_header writes the TCP header a real stack would have sent
   for |p|, a packet of the TCP model (its key's protocol 6, its payload
   the model's header), into |out|: ports from the 5-tuple, 32-bit
   sequence and acknowledgement numbers (the SYN takes number 0, data
   starts at 1, as relative numbers in Wireshark; a data segment, whose
   flow goes one way, acknowledges the other side's SYN), the flags, a window of
   65535, and the options the model's sizes count: timestamps (TSval the
   send time in microseconds, TSecr the echoed one), SACK blocks; a SYN's
   MSS, SACK-permitted and window scale.  The checksum is left 0 (the
   payload is a length, not bytes).  Returns the header's length, or 0
   when |p| is not a packet of the model. */
size_t sim_tcp_wire_header(const netsim_pkt *p, uint8_t *out);

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
  /* CUBIC's W_max in segments (0: no loss yet, or an RTO since) and the
     times HyStart ended slow start (ACK train, delay increase). */
  uint32_t w_max;
  uint32_t hystart_train;
  uint32_t hystart_delay;
} sim_tcp_conn_info;

/* sim_tcp_n_conns returns the number of connections opened so far (the
   indices sim_tcp_conn_get takes are below it).  |x| is a sim_tcp
   instance. */
uint32_t sim_tcp_n_conns(simx *x);

/* sim_tcp_conn_get fills |info| (caller storage) for connection |i|, in
   the order connections opened; |x| is a sim_tcp instance.  Returns 0, or
   NETSIM_ERR_NOENT if |i| >= sim_tcp_n_conns(x) (|info| untouched). */
int sim_tcp_conn_get(simx *x, uint32_t i, sim_tcp_conn_info *info);

/* sim_tcp_lower is a layer below TCP that carries its segments instead of
   the hosts' NICs (sim_tos, TCP over SRD, is the one there is).  With a
   lower layer set, every packet TCP makes (data, ACKs, SYNs) goes to
   |send| instead of netsim_host_send, the lower layer hands what it
   carried back with sim_tcp_input, and TCP paces itself by |busy|
   instead of the NIC's queue. */
typedef struct sim_tcp_lower {
  /* user is passed to both calls. */
  void *user;
  /* send carries packet |p| (its key names the two hosts, its size is on
     the wire as TCP would send it) from host |host|; it owns |p| from
     then on.  It may not call back into the instance (sim_tcp_input,
     sim_tcp_wake) before it returns. */
  void (*send)(void *user, uint32_t host, netsim_pkt *p);
  /* busy says whether host |host| should stop handing segments down (a
     device queue full); NULL: never.  After it said so, the lower layer
     calls sim_tcp_wake for |host| when it has room again. */
  int (*busy)(void *user, uint32_t host);
} sim_tcp_lower;

/* sim_tcp_set_lower puts |lower| (copied) under the TCP instance |x|,
   right after sim_tcp_new and before any message is posted.  The hosts'
   receive callbacks stay TCP's until the lower layer takes them. */
void sim_tcp_set_lower(simx *x, const sim_tcp_lower *lower);

/* sim_tcp_input gives TCP at host |host| packet |p| that the lower layer
   carried (a packet its send was given), as if it had reached the host's
   NIC; TCP frees it.  The caller must not be inside a call from the
   instance (its lower send): a lower layer defers what arrives then.
   A |host| that is not a host frees |p|. */
void sim_tcp_input(simx *x, uint32_t host, netsim_pkt *p);

/* sim_tcp_wake tells TCP at host |host| that the lower layer has room
   again (after busy said it had none).  Same rule as sim_tcp_input. */
void sim_tcp_wake(simx *x, uint32_t host);

#endif /* SIM_TCP_H */
