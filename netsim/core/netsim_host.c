/*
 * netsim_host.c: hosts.  A host is where a transport lives: it sends
 * through its one NIC port (a link and queue into its ToR) and receives
 * through a callback.  netsim never looks at what the packets carry.
 */
#include "netsim_host.h"

#include "netsim_link.h"

int netsim_host_send(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt) {
  if (pkt->size == 0) {
    netsim_pkt_free(sim->pool, pkt);
    return NETSIM_ERR_INVAL;
  }
  pkt->uid = ++sim->next_uid;
  pkt->t_sent = sim->evl->now;
  pkt->hops = 0;
  pkt->flags &= (uint8_t) ~(NETSIM_PKT_BITERR | NETSIM_PKT_DUP);
  ++sim->st.sent;
  if (host->nic == NULL) {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_NO_ROUTE, NULL);
    return NETSIM_ERR_DROPPED;
  }
  return netsim_link_send(sim, host->nic, pkt);
}

void netsim_host_deliver(netsim_sim *sim, netsim_host *host, netsim_pkt *pkt) {
  if (pkt->key.dst != host->addr) {
    /* Hosts do not forward. */
    netsim_sim_drop(sim, pkt, NETSIM_DROP_NO_ROUTE, NULL);
    return;
  }
  ++sim->st.delivered;
  sim->st.delivered_bytes += pkt->size;
  ++host->rx_pkts;
  if (host->rx_cb) {
    host->rx_cb(sim, host, pkt, host->rx_user);
  } else {
    netsim_pkt_free(sim->pool, pkt);
  }
}

void netsim_host_set_rx(netsim_host *host, netsim_host_rx_cb cb, void *user) {
  host->rx_cb = cb;
  host->rx_user = user;
}

uint32_t netsim_host_index(const netsim_host *host) {
  return host->index;
}

uint32_t netsim_host_node(const netsim_host *host) {
  return host->node.id;
}

netsim_addr netsim_host_addr(const netsim_host *host) {
  return host->addr;
}

netsim_link *netsim_host_nic(netsim_host *host) {
  return host->nic;
}

netsim_time netsim_host_tx_free_at(const netsim_host *host) {
  netsim_time now;

  if (host->nic == NULL) {
    return 0;
  }
  now = host->nic->sim->evl->now;
  return host->nic->busy_until > now ? host->nic->busy_until : now;
}

int netsim_host_set_tx_jitter(netsim_host *host, netsim_time jitter) {
  if (jitter > NETSIM_MS) {
    return NETSIM_ERR_INVAL;
  }
  if (host->nic == NULL) {
    return NETSIM_ERR_STATE;
  }
  host->nic->jitter = jitter;
  return 0;
}

uint64_t netsim_host_rx_pkts(const netsim_host *host) {
  return host->rx_pkts;
}
