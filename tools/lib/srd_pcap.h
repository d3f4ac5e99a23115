/*
 * srd_pcap.h: write SRD packets to a pcap file (libpcap), as a capture on
 * the wire would show them: Ethernet, IPv4 and UDP around each SRD packet.
 *
 * SRD's path index becomes the UDP source port (SRD_PCAP_SPORT_BASE +
 * path), the way ENA Express varies its encapsulation to steer packets
 * onto ECMP paths, so Wireshark's conversation and I/O graph views show
 * the spraying.  Timestamps have nanosecond resolution: pass the driver's
 * clock (virtual or real).  tools/wireshark/srd.lua decodes the SRD
 * header; docs/pcap.md shows how.
 */
#ifndef SRD_PCAP_H
#define SRD_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* SRD_PCAP_UDP_PORT is the destination port of the packets written and
   the one the Wireshark dissector registers on. */
#define SRD_PCAP_UDP_PORT 21316
/* SRD_PCAP_SPORT_BASE + path is a packet's source port. */
#define SRD_PCAP_SPORT_BASE 49152
/* SRD_PCAP_HDR_LEN is what precedes the SRD packet in a frame:
   Ethernet (14), IPv4 (20), UDP (8). */
#define SRD_PCAP_HDR_LEN 42

typedef struct srd_pcap srd_pcap;

/* srd_pcap_open creates |path| (truncating it) as a pcap file of Ethernet
   frames with nanosecond timestamps.  Each frame keeps at most |snaplen|
   bytes (0: whole frames; headers are always kept whole); the frame's
   full length is recorded.  Returns 0 and the writer in |*pw|, or a
   negative errno with a message in |err| (|errlen| bytes; |*pw| is then
   NULL): what creating the file failed with (-ENOENT, -EACCES, -EISDIR,
   -ENOSPC, ...; -EIO where it gave none), or -ENOMEM. */
int srd_pcap_open(srd_pcap **pw, const char *path, uint32_t snaplen, char *err,
                  size_t errlen);

/* srd_pcap_host is one end of a capture: an IPv4 address (host order)
   and its MAC address's last byte (the rest is 02:00:00:00:00). */
typedef struct srd_pcap_host {
  uint32_t addr;
  uint8_t mac;
} srd_pcap_host;

/* srd_pcap_write records one SRD packet, the concatenation of |hdr|
   (|hdrlen| bytes) and |payload| (|paylen| bytes, may be NULL if 0), sent
   from |src| to |dst| on entropy |path| at |ts_ns| nanoseconds.  The IPv4
   and UDP checksums are computed over the whole packet.  Returns 0, or
   -EMSGSIZE (nothing written) if the packet is too large for one IPv4
   datagram.  A failed write is reported by srd_pcap_close. */
int srd_pcap_write(srd_pcap *w, uint64_t ts_ns, const srd_pcap_host *src,
                   const srd_pcap_host *dst, uint32_t path, const uint8_t *hdr,
                   size_t hdrlen, const uint8_t *payload, size_t paylen);

/* srd_pcap_write_udp records one datagram as it crossed a real network:
   |hdr| + |payload| in UDP from |src| to |dst| (their addresses and
   ports; both AF_INET or both AF_INET6, so IPv4 or IPv6 frames), at
   |ts_ns| (the wall clock, CLOCK_REALTIME, for a real capture).  The
   snap length cuts the datagram's contents, never the headers before it.
   Returns 0, -EMSGSIZE (too large for one IP datagram) or -EAFNOSUPPORT
   (another family, or two families); nothing is written then. */
int srd_pcap_write_udp(srd_pcap *w, uint64_t ts_ns, const struct sockaddr *src,
                       const struct sockaddr *dst, const uint8_t *hdr,
                       size_t hdrlen, const uint8_t *payload, size_t paylen);

/* srd_pcap_write_sim records a packet of a simulation, which carries its
   headers but not its payload: an IPv4 packet of |iplen| bytes from |src|
   to |dst| (host order; the MACs' last bytes are theirs), protocol
   |proto|, whose transport header |l4| (|l4len| bytes, lengths filled in,
   checksum 0: not computed) is followed by |data| (|datalen| bytes, the
   transport's own header: SRD's).  The frame records the full length;
   what the simulation did not carry is not captured.  Returns 0, or
   -EMSGSIZE (|iplen| above 65535 or below what it must hold). */
int srd_pcap_write_sim(srd_pcap *w, uint64_t ts_ns, uint32_t src, uint32_t dst,
                       uint8_t proto, const uint8_t *l4, size_t l4len,
                       const uint8_t *data, size_t datalen, size_t iplen);

/* srd_pcap_count returns how many packets |w| has written. */
uint64_t srd_pcap_count(const srd_pcap *w);

/* srd_pcap_close flushes and closes |w| (NULL is fine); |w| is freed
   either way.  Returns 0, or a negative errno with a message in |err| if
   writing the file failed (-ENOSPC for a full disk; -EIO where the
   failed write left none). */
int srd_pcap_close(srd_pcap *w, char *err, size_t errlen);

#endif /* SRD_PCAP_H */
