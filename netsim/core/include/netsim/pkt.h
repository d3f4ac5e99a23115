/*
 * <netsim/pkt.h>: packets: addresses, the 5-tuple, the packet and its pool
 * (docs/netsim.md, "Packets"). Part of netsim's API: include
 * <netsim/netsim.h>, which includes this header after the ones whose types
 * it uses.
 */
#ifndef NETSIM_PKT_API_H
#define NETSIM_PKT_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/pkt.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_addr is an IPv4-style host address, host byte order. */
typedef uint32_t netsim_addr;

/* Host i has address NETSIM_ADDR_BASE + i: 10.0.0.1, 10.0.0.2, ... */
#define NETSIM_ADDR_BASE ((netsim_addr)0x0A000001u)

/* netsim_flowkey is the 5-tuple switches hash for ECMP. */
typedef struct netsim_flowkey {
  /* src is the sender's address. */
  netsim_addr src;
  /* dst is the receiver's address; switches route on it. */
  netsim_addr dst;
  /* sport is the source port (SRD carries its path entropy here). */
  uint16_t sport;
  /* dport is the destination port. */
  uint16_t dport;
  /* proto is the IP protocol number (17 UDP, 6 TCP). */
  uint8_t proto;
} netsim_flowkey;

/* Packet flags. */
/* NETSIM_PKT_ECT: the sender is ECN-capable; queues may mark the packet. */
#define NETSIM_PKT_ECT 0x01u
/* NETSIM_PKT_CE: a queue marked the packet (Congestion Experienced). */
#define NETSIM_PKT_CE 0x02u
/* Bit errors (netsim_link_set_ber).  A link counts a packet's bits as its
   min(payload_len, size) carried bytes (netsim_pkt_data) followed by the
   bytes it does not carry, which are only a length; an error flips a
   carried bit, or marks an error the packet cannot show.  Corrupted
   packets are delivered, never dropped by netsim: the receiver must find
   the damage, as a transport's checksum would.  netsim_host_send clears
   both flags. */
/* NETSIM_PKT_FLIPPED: bit errors flipped bits of the carried bytes. */
#define NETSIM_PKT_FLIPPED 0x04u
/* NETSIM_PKT_CORRUPT: a bit error fell in bytes the packet does not carry
   (a payload given by length): the receiver decides what that means. */
#define NETSIM_PKT_CORRUPT 0x08u
/* NETSIM_PKT_BITERR is either: the packet was hit by a bit error. */
#define NETSIM_PKT_BITERR (NETSIM_PKT_FLIPPED | NETSIM_PKT_CORRUPT)
/* NETSIM_PKT_DUP: the packet is a copy a duplicating link made
   (netsim_link_set_dup).  It is for counting only: a receiver must treat
   the copy as the packet it copies, as a real one cannot tell them apart.
   netsim_host_send clears it. */
#define NETSIM_PKT_DUP 0x10u

/* NETSIM_PKT_INLINE is how many payload bytes a packet carries in itself
   (a transport's header, typically), with no pool buffer. */
#define NETSIM_PKT_INLINE 88

/* netsim_pkt is one packet.  It has exactly one owner at a time: the
   caller between netsim_pkt_alloc and netsim_host_send, then netsim (queue,
   wire, switch), then the receiving host's rx callback, which frees it,
   keeps it or sends it again. */
typedef struct netsim_pkt {
  /* Line 0, the 64 bytes a hop touches (packets are 64-byte aligned). */
  /* key is the 5-tuple. */
  NETSIM_ALIGN64 netsim_flowkey key;
  /* flags holds NETSIM_PKT_ECT, NETSIM_PKT_CE, the bit-error flags
     (NETSIM_PKT_FLIPPED, NETSIM_PKT_CORRUPT) and NETSIM_PKT_DUP. */
  uint8_t flags;
  /* hops counts the links the packet has crossed since it was sent. */
  uint16_t hops;
  /* size is the packet's length on the wire in bytes (>= 1); it sets the
     serialisation time and the queue occupancy, not the payload. */
  uint32_t size;
  /* next links the packet into its link's FIFO (netsim's while it owns the
     packet, like every field up to uid). */
  struct netsim_pkt *next;
  /* t_arr is when it reaches the far end of the current link. */
  netsim_time t_arr;
  /* t_next_fin and t_next_arr are the successor's serialisation end and
     t_arr, copied when the successor is queued, so that a hop reads one
     packet. */
  netsim_time t_next_fin;
  netsim_time t_next_arr;
  /* uid numbers packets in the order hosts sent them (set by
     netsim_host_send). */
  uint64_t uid;

  /* Line 1, what a receiver reads: no hop touches it, and with an inline
     payload of up to 48 bytes (an SRD data header) the receiver reads
     nothing else (netsim_pkt_data). */
  /* payload_len is the number of payload bytes used. */
  uint32_t payload_len;
  /* payload_idx is the pool slot of |payload|, or UINT32_MAX if the
     packet holds no pool buffer (netsim's). */
  uint32_t payload_idx;
  /* flow is a tag for the transport (a flow or connection number). */
  uint32_t flow;
  /* state is the pool's (free or in use), for assertions. */
  uint32_t state;
  /* inl holds the payload when it fits (netsim_pkt_payload), in the lines
     the receiver reads anyway instead of a buffer elsewhere.
     netsim_pkt_alloc does not clear it. */
  uint8_t inl[NETSIM_PKT_INLINE];

  /* Line 2 (after the end of inl). */
  /* payload is |inl|, a pool buffer of the pool's payload_max bytes, or
     NULL (see netsim_pkt_payload). */
  uint8_t *payload;
  /* tag is a free word for the transport (a sequence number, say). */
  uint64_t tag;
  /* t_sent is when the packet was handed to netsim_host_send. */
  netsim_time t_sent;
} netsim_pkt;

/* netsim_pkt_data returns |pkt|'s payload, or NULL if it has none (or an
   empty one).  Unlike |payload| it reads only line 1 when the payload is
   inline. */
static inline const uint8_t *netsim_pkt_data(const netsim_pkt *pkt) {
  if (pkt->payload_idx != UINT32_MAX) {
    return pkt->payload;
  }
  return pkt->payload_len ? pkt->inl : NULL;
}

typedef struct netsim_pktpool netsim_pktpool;

/* netsim_pktpool_new creates a pool of |n_pkts| packets and |n_payloads|
   payload buffers of |payload_max| bytes each (both may be 0).  Returns
   0, NETSIM_ERR_INVAL or NETSIM_ERR_NOMEM. */
int netsim_pktpool_new(netsim_pktpool **ppool, uint32_t n_pkts,
                       uint32_t payload_max, uint32_t n_payloads,
                       const netsim_mem *mem);

/* netsim_pktpool_del frees |pool| (NULL is fine); all packets die. */
void netsim_pktpool_del(netsim_pktpool *pool);

/* netsim_pktpool_in_use returns how many packets are allocated. */
uint32_t netsim_pktpool_in_use(const netsim_pktpool *pool);

/* netsim_pkt_alloc takes a zeroed packet (size 0, no payload) from
   |pool|.  Returns 0, or NETSIM_ERR_POOL if the pool is empty. */
int netsim_pkt_alloc(netsim_pktpool *pool, netsim_pkt **ppkt);

/* netsim_pkt_free returns |pkt| and its payload buffer to |pool|. */
void netsim_pkt_free(netsim_pktpool *pool, netsim_pkt *pkt);

/* netsim_pkt_payload gives |pkt| a payload buffer of at least |len| bytes
   (if it has none large enough), sets payload_len to |len| and stores the
   buffer in |*pbuf| for the caller to fill.  The buffer is the packet's
   own |inl| when |len| <= NETSIM_PKT_INLINE and the packet holds no pool
   buffer, else a pool buffer of payload_max bytes; growing an inline
   payload past NETSIM_PKT_INLINE moves its bytes to a pool buffer.
   Returns 0, NETSIM_ERR_INVAL (|len| > payload_max and too long for
   |inl|) or NETSIM_ERR_POOL (no free payload buffer). */
int netsim_pkt_payload(netsim_pktpool *pool, netsim_pkt *pkt, uint32_t len,
                       uint8_t **pbuf);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_PKT_API_H */
