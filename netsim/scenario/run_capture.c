/*
 * run_capture.c: a run's packet capture ([scenario] pcap, srd-sim --pcap).
 * netsim's tap sees every packet at the end of every link; the packets of
 * the chosen cables are written, in virtual time, as a capture on them
 * would show them: Ethernet and IPv4 from the 5-tuple (hosts are 10.0.0.1
 * up), then UDP (to SRD_PCAP_UDP_PORT, from the entropy's port) and the
 * SRD packet's header (the engine's real bytes), or
 * the TCP header a stack would have sent (sim_tcp_wire_header).  Payloads
 * are only lengths in the simulation: frames record them, do not hold them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run_int.h"
#include "sim_tcp.h"
#include "srd_pcap.h"

/* Ethernet's preamble (8), FCS (4) and inter-frame gap (12), which a
   packet's wire size counts and a capture does not; its 14-byte header
   is the other part of SIMX_ETH_IP_OVERHEAD. */
#define NOT_CAPTURED 24u
#define ETH_HDR 14u

static void put16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

static void on_tap(netsim_sim *sim, const netsim_pkt *p,
                   const netsim_link *link, void *user) {
  run_ctx *r = user;
  uint8_t l4[SIM_TCP_WIRE_MAX];
  size_t l4len, iplen, datalen = 0;
  const uint8_t *data = NULL;
  uint32_t id = netsim_link_id(link);

  if (id >= r->n_links || !r->pcap_links[id] ||
      p->size < NOT_CAPTURED + ETH_HDR + 20) {
    return;
  }
  iplen = p->size - NOT_CAPTURED - ETH_HDR;
  if (p->key.proto == 6) {
    l4len = sim_tcp_wire_header(p, l4);
    if (l4len == 0 || l4len + 20 > iplen) {
      return;
    }
  } else {
    /* UDP: SRD's (sim_srd; tcp-over-srd's lower layer) header is what
       the packet carries. */
    l4len = 8;
    memset(l4, 0, 8);
    put16(l4, p->key.sport);
    /* On SRD's capture port (srd-loopback's, which the dissector knows)
       rather than the simulation's (4791 by default, RoCEv2's, which
       Wireshark would take for RoCE); the source port is the entropy. */
    put16(l4 + 2, SRD_PCAP_UDP_PORT);
    put16(l4 + 4, (uint32_t)(iplen - 20));
    data = netsim_pkt_data(p);
    datalen = data ? p->payload_len : 0;
    if (datalen > iplen - 28) {
      datalen = iplen - 28;
    }
  }
  /* Picoseconds to nanoseconds; a write that fails shows at the close. */
  (void)srd_pcap_write_sim(r->pcap, netsim_sim_now(sim) / NETSIM_NS, p->key.src,
                           p->key.dst, p->key.proto, l4, l4len, data, datalen,
                           iplen);
}

int run_capture_start(run_ctx *r) {
  const sim_scn *s = r->s;
  uint32_t i, j, n, ids[256];
  char err[256];

  if (r->o->pcap == NULL || s->n_pcap == 0) {
    return 0;
  }
  r->n_links = netsim_sim_n_links(r->sim);
  r->pcap_links = calloc(r->n_links ? r->n_links : 1, 1);
  if (r->pcap_links == NULL) {
    return run_fail(r, "out of memory");
  }
  for (i = 0; i < s->n_pcap; ++i) {
    if (run_resolve_link(r, &s->pcap[i], ids, 256, &n) != 0) {
      return run_fail(r,
                      "%s:%d: [scenario] pcap: link '%s' does not exist in "
                      "this topology",
                      s->file, s->pcap_line, s->pcap[i].text);
    }
    for (j = 0; j < n; ++j) {
      netsim_link_info li;
      netsim_link_get_info(netsim_sim_link(r->sim, ids[j]), &li);
      r->pcap_links[li.id] = 1;
      if (li.peer < r->n_links) {
        r->pcap_links[li.peer] = 1;
      }
    }
  }
  /* Whole frames: what a packet carries is headers only. */
  if (srd_pcap_open(&r->pcap, r->o->pcap, 0, err, sizeof(err)) != 0) {
    return run_fail(r, "--pcap: %s", err);
  }
  netsim_sim_set_tap(r->sim, on_tap, r);
  return 0;
}

int run_capture_stop(run_ctx *r) {
  char err[256];
  int rv = 0;

  if (r->pcap != NULL) {
    netsim_sim_set_tap(r->sim, NULL, NULL);
    r->res->pcap_pkts = srd_pcap_count(r->pcap);
    if (srd_pcap_close(r->pcap, err, sizeof(err)) != 0) {
      rv = run_fail(r, "--pcap %s: %s", r->o->pcap, err);
    }
    r->pcap = NULL;
  }
  free(r->pcap_links);
  r->pcap_links = NULL;
  return rv;
}
