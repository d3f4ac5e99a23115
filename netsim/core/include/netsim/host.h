/*
 * <netsim/host.h>: hosts: where a transport sends and receives
 * (docs/netsim.md, "How a transport attaches to a host"). Part of netsim's
 * API: include <netsim/netsim.h>, which includes this header after the ones
 * whose types it uses.
 */
#ifndef NETSIM_HOST_API_H
#define NETSIM_HOST_API_H

#ifndef NETSIM_H
#  error "include <netsim/netsim.h>, not <netsim/host.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* netsim_host_rx_cb receives a packet that reached |host|; the callback
   owns |pkt| (free it, keep it, or send it again). */
typedef void (*netsim_host_rx_cb)(netsim_sim *sim, netsim_host *host,
                                  netsim_pkt *pkt, void *user);

/* netsim_host_set_rx installs the receive callback (NULL: packets are
   counted and freed). */
void netsim_host_set_rx(netsim_host *host, netsim_host_rx_cb cb, void *user);

/* netsim_host_send queues |pkt| on the host's NIC; ownership passes to
   netsim whatever happens.  The caller fills key, size (>= 1), flags, flow,
   tag and payload; the bit-error flags and NETSIM_PKT_DUP are cleared.  Returns
   0, NETSIM_ERR_INVAL (size 0: the packet is freed), or NETSIM_ERR_DROPPED (NIC
   queue full or link down: counted, the drop callback told, the packet freed).
 */
int netsim_host_send(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt);

/* netsim_host_index returns the host's index (0..n_hosts-1). */
uint32_t netsim_host_index(const netsim_host *host);

/* netsim_host_node returns the host's node id. */
uint32_t netsim_host_node(const netsim_host *host);

/* netsim_host_addr returns the host's address. */
netsim_addr netsim_host_addr(const netsim_host *host);

/* netsim_host_nic returns the link from the host into its switch. */
netsim_link *netsim_host_nic(netsim_host *host);

/* netsim_host_tx_free_at returns when the NIC will have serialised all it
   holds (now, if idle): a transport paces itself by it. */
netsim_time netsim_host_tx_free_at(const netsim_host *host);

/* netsim_host_set_tx_jitter makes every packet the host sends reach its
   switch up to |jitter| later than the NIC's serialisation and the
   cable's delay say: uniform in [0, jitter], drawn from the NIC link's
   jitter stream (NETSIM_STREAM_JITTER, the link's id, the simulation's
   seed), and never before the host's previous packet, so that the host's
   own packets stay in order.  It models the timing noise of a real
   host's NIC (DMA, PCIe, doorbells); the NIC's rate, its queue and
   netsim_host_tx_free_at are unchanged.  0 (the default) turns it off.
   Returns 0, NETSIM_ERR_INVAL (|jitter| above 1 ms; nothing changes) or
   NETSIM_ERR_STATE (the host has no NIC yet: build the topology
   first). */
int netsim_host_set_tx_jitter(netsim_host *host, netsim_time jitter);

/* netsim_host_rx_pkts returns the packets delivered to the host. */
uint64_t netsim_host_rx_pkts(const netsim_host *host);

#ifdef __cplusplus
}
#endif

#endif /* NETSIM_HOST_API_H */
