/*
 * srd_pcap.c: SRD packets into pcap files, through libpcap.
 */
#include "srd_pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

/* The largest frame: an IPv4 datagram of 65535 bytes behind Ethernet. */
#define MAX_FRAME (14 + 65535)

struct srd_pcap {
  pcap_t *pcap;
  pcap_dumper_t *dumper;
  uint32_t snaplen;
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
    return -1;
  }
  w->snaplen = snaplen == 0 || snaplen > MAX_FRAME ? MAX_FRAME : snaplen;
  if (w->snaplen < SRD_PCAP_HDR_LEN) {
    w->snaplen = SRD_PCAP_HDR_LEN;
  }
  w->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)w->snaplen,
                                                 PCAP_TSTAMP_PRECISION_NANO);
  if (w->pcap == NULL) {
    snprintf(err, errlen, "pcap_open_dead failed");
    free(w);
    return -1;
  }
  w->dumper = pcap_dump_open(w->pcap, path);
  if (w->dumper == NULL) {
    snprintf(err, errlen, "%s: %s", path, pcap_geterr(w->pcap));
    pcap_close(w->pcap);
    free(w);
    return -1;
  }
  /* Fixed parts of every frame: MAC addresses 02:00:00:00:00:xx,
     EtherType IPv4, IPv4 version/IHL, DF, TTL, protocol UDP. */
  memset(w->frame, 0, SRD_PCAP_HDR_LEN);
  w->frame[0] = w->frame[6] = 0x02;
  put16(w->frame + 12, 0x0800);
  w->frame[14] = 0x45;
  put16(w->frame + 20, 0x4000);
  w->frame[22] = 64;
  w->frame[23] = 17;
  *pw = w;
  return 0;
}

int srd_pcap_write(srd_pcap *w, uint64_t ts_ns, const srd_pcap_host *src,
                   const srd_pcap_host *dst, uint32_t path, const uint8_t *hdr,
                   size_t hdrlen, const uint8_t *payload, size_t paylen) {
  uint8_t *ip = w->frame + 14, *udp = ip + 20, pseudo[12];
  size_t srd_len = hdrlen + paylen, cap;
  struct pcap_pkthdr ph;
  uint32_t acc;
  int odd = 0;

  if (srd_len > 65535 - 28) {
    return -1;
  }
  w->frame[5] = dst->mac;
  w->frame[11] = src->mac;
  put16(ip + 2, (uint16_t)(20 + 8 + srd_len));
  put16(ip + 4, w->ip_id++);
  put16(ip + 10, 0);
  put32(ip + 12, src->addr);
  put32(ip + 16, dst->addr);
  put16(ip + 10, fold(sum(0, ip, 20, &odd)));

  put16(udp, (uint16_t)(SRD_PCAP_SPORT_BASE + path));
  put16(udp + 2, SRD_PCAP_UDP_PORT);
  put16(udp + 4, (uint16_t)(8 + srd_len));
  put16(udp + 6, 0);
  /* The UDP checksum covers a pseudo-header, the UDP header and all of
     the data, including what the snap length leaves out. */
  memcpy(pseudo, ip + 12, 8);
  pseudo[8] = 0;
  pseudo[9] = 17;
  put16(pseudo + 10, (uint16_t)(8 + srd_len));
  odd = 0;
  acc = sum(0, pseudo, sizeof(pseudo), &odd);
  acc = sum(acc, udp, 8, &odd);
  acc = sum(acc, hdr, hdrlen, &odd);
  if (paylen > 0) {
    acc = sum(acc, payload, paylen, &odd);
  }
  acc = fold(acc);
  put16(udp + 6, (uint16_t)(acc == 0 ? 0xffff : acc));

  ph.len = (bpf_u_int32)(SRD_PCAP_HDR_LEN + srd_len);
  ph.caplen = ph.len < w->snaplen ? ph.len : w->snaplen;
  cap = ph.caplen - SRD_PCAP_HDR_LEN;
  if (cap <= hdrlen) {
    memcpy(w->frame + SRD_PCAP_HDR_LEN, hdr, cap);
  } else {
    memcpy(w->frame + SRD_PCAP_HDR_LEN, hdr, hdrlen);
    memcpy(w->frame + SRD_PCAP_HDR_LEN + hdrlen, payload, cap - hdrlen);
  }
  /* With nanosecond precision, tv_usec carries nanoseconds. */
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
    snprintf(err, errlen, "writing the capture failed: %s", strerror(errno));
    rv = -1;
  }
  pcap_dump_close(w->dumper);
  pcap_close(w->pcap);
  free(w);
  return rv;
}
