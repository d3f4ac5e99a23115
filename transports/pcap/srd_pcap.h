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
   full length is recorded.  Returns 0 and the writer in |*pw|, or -1
   with a message in |err| (|errlen| bytes). */
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
   and UDP checksums are computed over the whole packet.  Returns 0, or -1
   if the packet is too large for one IPv4 datagram. */
int srd_pcap_write(srd_pcap *w, uint64_t ts_ns, const srd_pcap_host *src,
                   const srd_pcap_host *dst, uint32_t path, const uint8_t *hdr,
                   size_t hdrlen, const uint8_t *payload, size_t paylen);

/* srd_pcap_count returns how many packets |w| has written. */
uint64_t srd_pcap_count(const srd_pcap *w);

/* srd_pcap_close flushes and closes |w| (NULL is fine).  Returns 0, or -1
   with a message in |err| if writing the file failed (a full disk). */
int srd_pcap_close(srd_pcap *w, char *err, size_t errlen);

#endif /* SRD_PCAP_H */
