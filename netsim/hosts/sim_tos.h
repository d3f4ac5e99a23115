/*
 * sim_tos.h: TCP over SRD in netsim hosts, as ENA Express puts SRD under
 * unmodified TCP.
 *
 * A composition of the two transports there are, neither copied: the TCP
 * model (sim_tcp) runs in every host as it does alone, but its packets
 * (data segments, ACKs, SYNs) do not go to the host's NIC; each becomes
 * one message of the SRD engine (sim_srd, with ordered delivery) from its
 * host to the other end's.  SRD sprays the message's packets over its
 * paths, retransmits what the fabric loses within microseconds and hands
 * the messages to the receiving host in the order they were sent, where
 * the TCP packet each carries goes up to TCP (sim_tcp_input).  TCP above
 * sees its segments in order and rarely lost; what it loses is what SRD
 * gave up on.  The message is the IP packet TCP would have sent: its
 * length is the TCP packet's wire size less Ethernet (SIMX_ETH_IP_OVERHEAD
 * holds IPv4's 20 bytes too, which stay).
 *
 * The device queue.  TCP stops handing segments down while a host has
 * |queue| SRD messages not yet acknowledged by the SRD layer (the ENA
 * queue's backpressure: TSQ and the qdisc stop TCP until the device
 * drains), and resumes when one completes.
 *
 * Deferral.  The SRD driver may report a delivery while TCP is sending
 * (its send posts into the engine, whose completions come out at once);
 * TCP is never entered from inside itself: such deliveries wait in a FIFO
 * that a zero-delay timer (or the delivery in progress) empties, in the
 * order SRD delivered them.
 *
 * The functions below are defined in sim_tos.c and return netsim's codes
 * (NETSIM_ERR_*).  The instance is a simx whose messages are TCP's (the
 * runner posts to TCP through it), whose counters are TCP's view
 * (sim_tos_srd_counters gives the SRD layer's).
 */
#ifndef SIM_TOS_H
#define SIM_TOS_H

#include "sim_srd.h"
#include "sim_tcp.h"

/* sim_tos_cfg configures both layers. */
typedef struct sim_tos_cfg {
  /* tcp is the TCP model above (its mss should leave the IP packet, mss
     + 52 bytes, within srd.ep.mtu: one SRD packet per segment). */
  sim_tcp_cfg tcp;
  /* srd is the SRD layer below; peer.ordered is always set.  Pools the
     caller left smaller get a floor fit for a TCP connection's segments
     in flight: max_sends 64, recv_depth 512, msg_window 256, unexp_msgs
     256; ep.max_msg_size becomes tcp.mss + 64 (a segment and its
     headers). */
  sim_srd_cfg srd;
  /* queue is how many SRD messages a host may have unacknowledged before
     TCP stops handing it segments (0: srd's max_sends). */
  uint32_t queue;
} sim_tos_cfg;

/* sim_tos_cfg_default fills |c|: sim_tcp_cfg_default with mss 8140 (an
   8192-byte IP packet: one SRD packet at the engine's default mtu),
   sim_srd_cfg_default with ordered delivery, queue 0. */
void sim_tos_cfg_default(sim_tos_cfg *c);

/* sim_tos_new attaches TCP over SRD to every host of |sim| (after the
   topology is built), reporting TCP's messages to |app|, and stores it in
   |*px| (only on success).  |c| and |app| are copied; |sim| is kept and
   must outlive the instance: simx_del it before netsim_sim_del.  The SRD
   layer takes each host's receive callback (and chains the simulation's
   drop and duplicate callbacks, as sim_srd_new).

   Returns 0, or one of (|err|, if not NULL, gets a message of at most
   |errlen| bytes where one is given, naming the layer):
   NETSIM_ERR_INVAL  sim_tcp_new's or sim_srd_new's (message)
   NETSIM_ERR_NOMEM  allocation failed */
int sim_tos_new(simx **px, netsim_sim *sim, const sim_tos_cfg *c,
                const simx_app *app, char *err, size_t errlen);

/* sim_tos_srd_counters fills |c| (caller storage) with the SRD layer's
   counters of instance |x| (a sim_tos): its data and control packets,
   retransmissions, timeouts and RACK losses, what its receivers met
   (corruption, duplicates).  sim_tos' own counters are TCP's. */
void sim_tos_srd_counters(simx *x, simx_counters *c);

/* sim_tos_tcp returns the TCP instance inside |x| (a sim_tos), for
   sim_tcp_n_conns and sim_tcp_conn_get; sim_tos_srd the SRD one, for
   sim_srd_ep and sim_srd_peer.  Read them; never post to or delete
   them.  Both are valid until simx_del(x). */
simx *sim_tos_tcp(simx *x);
simx *sim_tos_srd(simx *x);

#endif /* SIM_TOS_H */
