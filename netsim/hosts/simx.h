/*
 * simx.h: transports inside netsim hosts, as the scenario runner sees them.
 *
 * A transport in the simulator (the SRD engine through sim_srd, the TCP
 * model in sim_tcp) carries messages between hosts.  The runner posts a
 * message (simx_msg) and the transport reports, through the runner's
 * simx_app callbacks, when all of its bytes reached the receiver
 * (arrived), when the receiving application could read it (readable:
 * later than arrived when TCP holds it behind a hole), and when the sender
 * learned it was delivered (sent).  Everything happens in virtual time,
 * inside netsim events; no callback may run the event list.
 *
 * See docs/scenarios.md for what the runner measures with this.
 *
 * This header defines only types and the three static inline calls;
 * sim_srd.c and sim_tcp.c implement the table.  Calls return netsim's
 * codes (NETSIM_ERR_*); a message's status is the transport's own code.
 */
#ifndef SIMX_H
#define SIMX_H

#include <stdint.h>

#include <netsim/netsim.h>

/* simx_msg is one message of a workload.  The runner owns it; the
   transport holds a pointer to it from simx_post until its "sent"
   callback (and until "readable", which may come later). */
typedef struct simx_msg {
  /* id is the message's index in the runner's table. */
  uint32_t id;
  /* flow is the index of the flow the message belongs to. */
  uint32_t flow;
  /* src and dst are host indices. */
  uint32_t src;
  uint32_t dst;
  /* conn names the connection a connection-oriented transport (TCP)
     carries the message on: messages with equal (src, dst, conn) share a
     byte stream, in posting order. */
  uint32_t conn;
  /* status is 0, or a negative error of the transport (a failed send):
     sim_srd's are SRD_ERR_* (srd_strerror), sim_tcp never fails one. */
  int32_t status;
  /* bytes is the message length (>= 1). */
  uint64_t bytes;
  /* t_post is when the runner posted it. */
  netsim_time t_post;
  /* t_arrive is when its last missing byte reached the receiver
     (NETSIM_TIME_NONE until then). */
  netsim_time t_arrive;
  /* t_read is when the receiving application got it. */
  netsim_time t_read;
  /* t_sent is when the sender learned it was delivered. */
  netsim_time t_sent;
  /* offset and acc are the transport's (TCP: the stream offset of the
     first byte and the bytes arrived so far). */
  uint64_t offset;
  uint64_t acc;
  /* reads is the runner's: how many times the transport reported the
     message readable (more than once: delivered twice). */
  uint32_t reads;
} simx_msg;

/* simx_app is how a transport reports back to the runner.  Every callback
   runs inside a netsim event at the current time, possibly before the
   simx_post that handed the message over has returned (a message the
   transport refuses at once, or reports that fell due meanwhile).  A
   callback may call simx_post; it may not run the event list or call
   simx_del.  A NULL callback is not called. */
typedef struct simx_app {
  /* user is passed to every callback. */
  void *user;
  /* arrived: every byte of |m| is at the receiver. */
  void (*arrived)(void *user, simx_msg *m);
  /* readable: the receiving application has |m| (after arrived, or at
     the same time). */
  void (*readable)(void *user, simx_msg *m);
  /* sent: the sender's completion of |m|, |status| 0 or an error. */
  void (*sent)(void *user, simx_msg *m, int status);
  /* progress: |bytes| more bytes of flow |flow| became readable. */
  void (*progress)(void *user, uint32_t flow, uint64_t bytes);
} simx_app;

/* simx_counters is what a transport counts over a run. */
typedef struct simx_counters {
  /* data_pkts counts data packets sent, retransmissions included. */
  uint64_t data_pkts;
  /* ctrl_pkts counts acknowledgements and handshake packets. */
  uint64_t ctrl_pkts;
  /* retransmits counts data packets sent again. */
  uint64_t retransmits;
  /* timeouts counts retransmission timeouts. */
  uint64_t timeouts;
  /* fast_recoveries counts loss recoveries without a timeout (TCP: fast
     recovery episodes; SRD: packets declared lost by RACK). */
  uint64_t fast_recoveries;
  /* probes counts tail loss probes (TCP). */
  uint64_t probes;
  /* bytes_sent counts bytes handed to the NIC, headers included. */
  uint64_t bytes_sent;
  /* local_drops counts packets the transport could not send because the
     simulation's packet pool was empty. */
  uint64_t local_drops;
  /* send_errors counts messages that failed. */
  uint64_t send_errors;
  /* recv_errors counts failed receives and unmatched deliveries. */
  uint64_t recv_errors;
  /* Bit errors (netsim_link_set_ber) as the receivers met them.
     corrupt_rx counts packets that reached their host marked
     (NETSIM_PKT_BITERR); corrupt_in_hdr those of them with flipped bits
     in the header the packet carries (the others were hit only in bytes
     it does not carry: the payload or the framing). */
  uint64_t corrupt_rx;
  uint64_t corrupt_in_hdr;
  /* corrupt_dropped counts packets the receiver found corrupted and
     dropped (SRD: the engine's corrupt_hdr and corrupt_payload drop
     reasons; TCP: its checksum, modelled as always detecting). */
  uint64_t corrupt_dropped;
  /* corrupt_other counts corrupted packets the receiver dropped for
     another reason (a damaged field failed another check), and
     corrupt_accepted those it took as valid: corruption that got
     through. */
  uint64_t corrupt_other;
  uint64_t corrupt_accepted;
  /* dup_rx counts copies made by duplicating links (NETSIM_PKT_DUP) that
     reached their host; the transport handled each as the packet it
     copies. */
  uint64_t dup_rx;
  /* unmatched counts successful receive completions that matched no
     message in flight: a message delivered a second time, or (with bit
     errors) a message id damaged on the way.  It is part of
     recv_errors. */
  uint64_t unmatched;
} simx_counters;

/* simx is a transport instance attached to every host of a simulation. */
typedef struct simx simx;

/* simx_ops is what every transport implements. */
typedef struct simx_ops {
  /* kind is "srd" or "tcp". */
  const char *kind;
  /* post hands |m| to the transport at the current time; the transport
     keeps the pointer as simx_msg says.  Returns 0, or
     NETSIM_ERR_INVAL (src or dst not a host, src == dst, bytes 0, or,
     for srd, bytes above ep.max_msg_size: nothing is reported) or
     NETSIM_ERR_NOMEM.  A message the transport takes and fails later
     (srd: the engine refused it or gave up) is reported through sent
     with its status. */
  int (*post)(simx *x, simx_msg *m);
  /* counters copies the transport's counters into |c|. */
  void (*counters)(simx *x, simx_counters *c);
  /* del detaches the transport from the hosts and frees it, without
     reporting the messages still in flight (the runner owns them); call
     it before netsim_sim_del. */
  void (*del)(simx *x);
} simx_ops;

/* Every transport's instance starts with this. */
struct simx {
  /* ops is the transport's table. */
  const simx_ops *ops;
  /* sim is the simulation it runs in. */
  netsim_sim *sim;
  /* app receives the reports. */
  simx_app app;
};

/* simx_post, simx_counters_get and simx_del call the transport's table
   (simx_del accepts NULL). */
static inline int simx_post(simx *x, simx_msg *m) {
  return x->ops->post(x, m);
}
static inline void simx_counters_get(simx *x, simx_counters *c) {
  x->ops->counters(x, c);
}
static inline void simx_del(simx *x) {
  if (x) {
    x->ops->del(x);
  }
}

/* Bytes a packet carries on the wire around the transport's own header
   and payload: Ethernet (14 header, 4 FCS, 8 preamble, 12 inter-frame
   gap) and IPv4 (20). */
#define SIMX_ETH_IP_OVERHEAD 58u

#endif /* SIMX_H */
