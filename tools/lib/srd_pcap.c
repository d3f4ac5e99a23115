/*
 * srd_pcap.c: SRD packets into pcap files, through libpcap.
 */
#include "srd_pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pcap/pcap.h>

/* The largest frame: an IPv6 header and a datagram of 65535 bytes
   behind Ethernet. */
#define MAX_FRAME (14 + 40 + 65535)
/* The longest headers before the SRD packet: Ethernet, IPv6, UDP. */
#define MAX_HDRS (14 + 40 + 8)

struct srd_pcap {
  pcap_t *pcap;
  pcap_dumper_t *dumper;
  uint32_t snaplen; /* as asked (>= SRD_PCAP_HDR_LEN) */
  uint16_t ip_id;
  uint64_t count;
  uint8_t frame[MAX_FRAME];
};

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v) {
  put16(p, (uint16_t)(v >> 16));
  put16(p + 2, (uint16_t)v);
}

/* sum adds |len| bytes of |p| to a ones'-complement sum (RFC 1071);
   |odd| says whether the bytes before them had an odd length. */
static uint32_t sum(uint32_t acc, const uint8_t *p, size_t len, int *odd) {
  size_t i = 0;

  if (*odd && len > 0) {
    acc += p[0];
    i = 1;
  }
  for (; i + 1 < len; i += 2) {
    acc += (uint32_t)p[i] << 8 | p[i + 1];
  }
  if (i < len) {
    acc += (uint32_t)p[i] << 8;
  }
  *odd ^= (int)(len & 1);
  return acc;
}

static uint16_t fold(uint32_t acc) {
  while (acc >> 16) {
    acc = (acc & 0xffff) + (acc >> 16);
  }
  return (uint16_t)~acc;
}

int srd_pcap_open(srd_pcap **pw, const char *path, uint32_t snaplen, char *err,
                  size_t errlen) {
  srd_pcap *w;

  *pw = NULL;
  w = calloc(1, sizeof(*w));
  if (w == NULL) {
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
  }
  w->snaplen = snaplen == 0 || snaplen > MAX_FRAME ? MAX_FRAME : snaplen;
  if (w->snaplen < SRD_PCAP_HDR_LEN) {
    w->snaplen = SRD_PCAP_HDR_LEN;
  }
  /* The file's snap length leaves room for an IPv6 frame's headers, which
     are always kept whole. */
  w->pcap = pcap_open_dead_with_tstamp_precision(
      DLT_EN10MB, (int)(w->snaplen < MAX_HDRS ? MAX_HDRS : w->snaplen),
      PCAP_TSTAMP_PRECISION_NANO);
  if (w->pcap == NULL) {
    /* It fails only where its allocation does. */
    snprintf(err, errlen, "pcap_open_dead failed");
    free(w);
    return -ENOMEM;
  }
  /* pcap_dump_open fails where fopen(3) or the header's write does, with
     their errno; 0 is left only by what has none (EIO stands in). */
  errno = 0;
  w->dumper = pcap_dump_open(w->pcap, path);
  if (w->dumper == NULL) {
    int e = errno ? errno : EIO;
    /* libpcap's message names the path already ("PATH: why"). */
    snprintf(err, errlen, "%s", pcap_geterr(w->pcap));
    pcap_close(w->pcap);
    free(w);
    return -e;
  }
  *pw = w;
  return 0;
}

/* ip_end is one end of a frame: the address (4 or 16 bytes), the MAC's
   last byte, the UDP port. */
typedef struct ip_end {
  const uint8_t *addr;
  uint8_t mac;
  uint16_t port;
} ip_end;

/* write_udp records the SRD packet |hdr| + |payload| in a UDP datagram
   from |src| to |dst| over IPv4 (|alen| 4) or IPv6 (16), behind Ethernet
   (MAC 02:00:00:00:00:xx), with the IP and UDP checksums over the whole
   datagram, including what the snap length leaves out. */
static int write_udp(srd_pcap *w, uint64_t ts_ns, int alen, const ip_end *src,
                     const ip_end *dst, const uint8_t *hdr, size_t hdrlen,
                     const uint8_t *payload, size_t paylen) {
  size_t iplen = alen == 4 ? 20 : 40, hlen = 14 + iplen + 8;
  size_t srd_len = hdrlen + paylen, cap;
  uint8_t *ip = w->frame + 14, *udp = ip + iplen, pseudo[40];
  struct pcap_pkthdr ph;
  uint32_t acc;
  int odd = 0;

  if (srd_len > 65535 - (alen == 4 ? 28 : 8)) {
    return -EMSGSIZE;
  }
  memset(w->frame, 0, hlen);
  w->frame[0] = w->frame[6] = 0x02;
  w->frame[5] = dst->mac;
  w->frame[11] = src->mac;
  if (alen == 4) {
    put16(w->frame + 12, 0x0800);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + 8 + srd_len));
    put16(ip + 4, w->ip_id++);
    put16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = 17;
    memcpy(ip + 12, src->addr, 4);
    memcpy(ip + 16, dst->addr, 4);
    put16(ip + 10, fold(sum(0, ip, 20, &odd)));
    /* The pseudo-header: addresses, zero, protocol, UDP length. */
    memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = 17;
    put16(pseudo + 10, (uint16_t)(8 + srd_len));
  } else {
    put16(w->frame + 12, 0x86dd);
    ip[0] = 0x60;
    put16(ip + 4, (uint16_t)(8 + srd_len));
    ip[6] = 17;
    ip[7] = 64;
    memcpy(ip + 8, src->addr, 16);
    memcpy(ip + 24, dst->addr, 16);
    /* The pseudo-header: addresses, UDP length (32 bits), next header. */
    memcpy(pseudo, ip + 8, 32);
    put32(pseudo + 32, (uint32_t)(8 + srd_len));
    put32(pseudo + 36, 17);
  }
  put16(udp, src->port);
  put16(udp + 2, dst->port);
  put16(udp + 4, (uint16_t)(8 + srd_len));
  odd = 0;
  acc = sum(0, pseudo, alen == 4 ? 12 : 40, &odd);
  acc = sum(acc, udp, 8, &odd);
  acc = sum(acc, hdr, hdrlen, &odd);
  if (paylen > 0) {
    acc = sum(acc, payload, paylen, &odd);
  }
  acc = fold(acc);
  put16(udp + 6, (uint16_t)(acc == 0 ? 0xffff : acc));

  /* The snap length cuts the SRD packet, never the headers before it. */
  ph.len = (bpf_u_int32)(hlen + srd_len);
  cap = w->snaplen < SRD_PCAP_HDR_LEN + srd_len ? w->snaplen - SRD_PCAP_HDR_LEN
                                                : srd_len;
  ph.caplen = (bpf_u_int32)(hlen + cap);
  if (cap <= hdrlen) {
    memcpy(w->frame + hlen, hdr, cap);
  } else {
    memcpy(w->frame + hlen, hdr, hdrlen);
    memcpy(w->frame + hlen + hdrlen, payload, cap - hdrlen);
  }
  /* With nanosecond precision, tv_usec carries nanoseconds. */
  ph.ts.tv_sec = (time_t)(ts_ns / 1000000000u);
  ph.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000u);
  pcap_dump((u_char *)w->dumper, &ph, w->frame);
  ++w->count;
  return 0;
}

int srd_pcap_write(srd_pcap *w, uint64_t ts_ns, const srd_pcap_host *src,
                   const srd_pcap_host *dst, uint32_t path, const uint8_t *hdr,
                   size_t hdrlen, const uint8_t *payload, size_t paylen) {
  uint8_t sa[4], da[4];
  ip_end s = {sa, src->mac, (uint16_t)(SRD_PCAP_SPORT_BASE + path)};
  ip_end d = {da, dst->mac, SRD_PCAP_UDP_PORT};

  put32(sa, src->addr);
  put32(da, dst->addr);
  return write_udp(w, ts_ns, 4, &s, &d, hdr, hdrlen, payload, paylen);
}

/* sock_end fills |e| from |sa| (AF_INET or AF_INET6); returns the address
   length, or 0 for another family. */
static int sock_end(const struct sockaddr *sa, ip_end *e) {
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
    e->addr = (const uint8_t *)&a->sin_addr;
    e->port = ntohs(a->sin_port);
    e->mac = e->addr[3];
    return 4;
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
    e->addr = (const uint8_t *)&a->sin6_addr;
    e->port = ntohs(a->sin6_port);
    e->mac = e->addr[15];
    return 16;
  }
  return 0;
}

int srd_pcap_write_udp(srd_pcap *w, uint64_t ts_ns, const struct sockaddr *src,
                       const struct sockaddr *dst, const uint8_t *hdr,
                       size_t hdrlen, const uint8_t *payload, size_t paylen) {
  ip_end s, d;
  int a = sock_end(src, &s);

  if (a == 0 || sock_end(dst, &d) != a) {
    return -EAFNOSUPPORT;
  }
  return write_udp(w, ts_ns, a, &s, &d, hdr, hdrlen, payload, paylen);
}

int srd_pcap_write_sim(srd_pcap *w, uint64_t ts_ns, uint32_t src, uint32_t dst,
                       uint8_t proto, const uint8_t *l4, size_t l4len,
                       const uint8_t *data, size_t datalen, size_t iplen) {
  uint8_t *ip = w->frame + 14;
  size_t have = 20 + l4len + datalen, cap;
  struct pcap_pkthdr ph;
  int odd = 0;

  if (iplen > 65535 || have > iplen) {
    return -EMSGSIZE;
  }
  memset(w->frame, 0, 14 + 20);
  w->frame[0] = w->frame[6] = 0x02;
  w->frame[5] = (uint8_t)dst;
  w->frame[11] = (uint8_t)src;
  put16(w->frame + 12, 0x0800);
  ip[0] = 0x45;
  put16(ip + 2, (uint16_t)iplen);
  put16(ip + 4, w->ip_id++);
  put16(ip + 6, 0x4000); /* DF */
  ip[8] = 64;
  ip[9] = proto;
  put32(ip + 12, src);
  put32(ip + 16, dst);
  put16(ip + 10, fold(sum(0, ip, 20, &odd)));
  memcpy(ip + 20, l4, l4len);
  if (datalen > 0) {
    memcpy(ip + 20 + l4len, data, datalen);
  }
  /* What was simulated is captured (up to the snap length, the headers
     always); the rest of the packet is only its length. */
  cap = 14 + have;
  if (cap > w->snaplen && w->snaplen >= 14 + 20 + l4len) {
    cap = w->snaplen;
  }
  ph.len = (bpf_u_int32)(14 + iplen);
  ph.caplen = (bpf_u_int32)cap;
  ph.ts.tv_sec = (time_t)(ts_ns / 1000000000u);
  ph.ts.tv_usec = (suseconds_t)(ts_ns % 1000000000u);
  pcap_dump((u_char *)w->dumper, &ph, w->frame);
  ++w->count;
  return 0;
}

uint64_t srd_pcap_count(const srd_pcap *w) {
  return w->count;
}

int srd_pcap_close(srd_pcap *w, char *err, size_t errlen) {
  int rv = 0;

  if (w == NULL) {
    return 0;
  }
  if (pcap_dump_flush(w->dumper) != 0 || ferror(pcap_dump_file(w->dumper))) {
    /* fflush's errno, or that of the write that failed before it. */
    int e = errno ? errno : EIO;
    snprintf(err, errlen, "writing the capture failed: %s", strerror(e));
    rv = -e;
  }
  pcap_dump_close(w->dumper);
  pcap_close(w->pcap);
  free(w);
  return rv;
}
