/*
 * netsim_switch.c: output-queued switches with ECMP, and routing.
 *
 * Forwarding: a switch looks up the destination host's ECMP set (a group
 * of equal-cost output ports) and, when the set has more than one port,
 * picks one by hashing the packet's 5-tuple with the switch's own seed, as
 * real switches do (a per-switch seed avoids hash polarisation: the same
 * flow's choice at one tier says nothing about its choice at the next).
 * The hash (netsim_ecmp_hash) packs (src, dst) and (sport, dport, proto)
 * into two words and runs each through a full 64-bit finalizer after
 * xoring it into the state; the port is the high 32 bits times the set
 * size, shifted down.  SRD's per-packet entropy in the UDP source port
 * thus fans out over every next hop, while a TCP connection's fixed
 * 5-tuple stays on one path.
 *
 * Routing: shortest paths over the links routing considers up (|routed|),
 * found by one breadth-first search per top-of-rack switch (the switch a
 * host's NIC reaches); a switch's next hops towards that ToR are the ports
 * whose far end is one hop closer.  Hosts never forward.  Equal sets are
 * shared (deduplicated per switch), so a table is one uint16_t per
 * destination host plus a handful of groups.  The whole computation is
 * redone when routing reconverges after a fault (netsim_fault.c).
 */
#include "netsim_switch.h"

#include <assert.h>
#include <string.h>

#include "netsim_host.h"
#include "netsim_link.h"

uint64_t netsim_ecmp_hash(uint64_t seed, const netsim_flowkey *key) {
  uint64_t a = ((uint64_t)key->src << 32) | key->dst;
  uint64_t b =
      ((uint64_t)key->sport << 32) | ((uint64_t)key->dport << 16) | key->proto;
  uint64_t h = netsim_mix64(seed ^ a);

  return netsim_mix64(h ^ b ^ 0x9E3779B97F4A7C15ULL);
}

void netsim_switch_forward(netsim_sim *sim, netsim_switch *sw,
                           netsim_pkt *pkt) {
  uint32_t h = pkt->key.dst - NETSIM_ADDR_BASE, port;
  const netsim_group *g;

  if (pkt->hops >= sim->set.max_hops) {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_TTL, NULL);
    return;
  }
  if (h >= sw->n_route) {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_NO_ROUTE, NULL);
    return;
  }
  g = &sw->groups[sw->route[h]];
  if (g->n == 1) {
    port = sw->gports[g->off];
  } else if (g->n > 1) {
    port =
        sw->gports[g->off + netsim_ecmp_pick(
                                netsim_ecmp_hash(sw->seed, &pkt->key), g->n)];
  } else {
    netsim_sim_drop(sim, pkt, NETSIM_DROP_NO_ROUTE, NULL);
    return;
  }
  netsim_link_send(sim, sw->node.out[port], pkt);
}

int netsim_switch_route(const netsim_switch *sw, const netsim_flowkey *key) {
  uint32_t h = key->dst - NETSIM_ADDR_BASE;
  const netsim_group *g;

  if (h >= sw->n_route) {
    return NETSIM_ERR_NOENT;
  }
  g = &sw->groups[sw->route[h]];
  if (g->n == 0) {
    return NETSIM_ERR_NOENT;
  }
  return sw
      ->gports[g->off + (g->n > 1 ? netsim_ecmp_pick(
                                        netsim_ecmp_hash(sw->seed, key), g->n)
                                  : 0)];
}

uint32_t netsim_switch_next_hops(const netsim_switch *sw, uint32_t dst_host,
                                 uint32_t *ports, uint32_t cap) {
  const netsim_group *g;
  uint32_t i;

  if (dst_host >= sw->n_route) {
    return 0;
  }
  g = &sw->groups[sw->route[dst_host]];
  for (i = 0; i < g->n && i < cap; ++i) {
    ports[i] = sw->gports[g->off + i];
  }
  return g->n;
}

uint32_t netsim_switch_node(const netsim_switch *sw) {
  return sw->node.id;
}

uint32_t netsim_switch_index(const netsim_switch *sw) {
  return sw->index;
}

uint32_t netsim_switch_n_ports(const netsim_switch *sw) {
  return sw->node.n_ports;
}

uint64_t netsim_switch_seed(const netsim_switch *sw) {
  return sw->seed;
}

void netsim_switch_set_seed(netsim_switch *sw, uint64_t seed) {
  sw->seed = seed;
}

netsim_link *netsim_switch_port_link(netsim_switch *sw, uint32_t port) {
  return port < sw->node.n_ports ? sw->node.out[port] : NULL;
}

void netsim_switch_free(netsim_sim *sim, netsim_switch *sw) {
  const netsim_mem *mem = &sim->mem;

  mem->free(sw->node.out, mem->user_data);
  mem->free(sw->route, mem->user_data);
  mem->free(sw->groups, mem->user_data);
  mem->free(sw->gports, mem->user_data);
}

/* find_group returns the id of the group of |sw| holding exactly
   |ports[0..n-1]|, adding it if new, or a negative error. */
static int find_group(netsim_sim *sim, netsim_switch *sw, const uint16_t *ports,
                      uint32_t n, uint32_t *hint) {
  uint32_t g;
  int rv;

  if (n == 0) {
    return 0;
  }
  if (*hint < sw->n_groups && sw->groups[*hint].n == n &&
      memcmp(&sw->gports[sw->groups[*hint].off], ports, n * 2) == 0) {
    return (int)*hint;
  }
  for (g = 1; g < sw->n_groups; ++g) {
    if (sw->groups[g].n == n &&
        memcmp(&sw->gports[sw->groups[g].off], ports, n * 2) == 0) {
      *hint = g;
      return (int)g;
    }
  }
  if (sw->n_groups >= 65535) {
    return NETSIM_ERR_NOMEM;
  }
  rv = netsim_sim_grow(&sim->mem, (void **)&sw->groups, &sw->cap_groups,
                       sizeof(*sw->groups), sw->n_groups + 1);
  if (rv == 0) {
    rv = netsim_sim_grow(&sim->mem, (void **)&sw->gports, &sw->cap_gports,
                         sizeof(*sw->gports), sw->n_gports + n);
  }
  if (rv != 0) {
    return rv;
  }
  g = sw->n_groups++;
  sw->groups[g].off = sw->n_gports;
  sw->groups[g].n = n;
  memcpy(&sw->gports[sw->n_gports], ports, n * 2);
  sw->n_gports += n;
  *hint = g;
  return (int)g;
}

/* reset_tables gives |sw| an all-empty table for |nh| hosts. */
static int reset_tables(netsim_sim *sim, netsim_switch *sw, uint32_t nh) {
  const netsim_mem *mem = &sim->mem;
  int rv;

  if (sw->route == NULL || sw->n_route != nh) {
    mem->free(sw->route, mem->user_data);
    sw->n_route = 0;
    sw->route = mem->malloc(sizeof(*sw->route) * (nh ? nh : 1), mem->user_data);
    if (sw->route == NULL) {
      return NETSIM_ERR_NOMEM;
    }
    sw->n_route = nh;
  }
  memset(sw->route, 0, sizeof(*sw->route) * nh);
  rv = netsim_sim_grow(mem, (void **)&sw->groups, &sw->cap_groups,
                       sizeof(*sw->groups), 1);
  if (rv != 0) {
    return rv;
  }
  sw->groups[0].off = 0;
  sw->groups[0].n = 0;
  sw->n_groups = 1;
  sw->n_gports = 0;
  return 0;
}

int netsim_routes_build(netsim_sim *sim) {
  const netsim_mem *mem = &sim->mem;
  uint32_t nn = sim->n_nodes, ns = sim->n_switches, nh = sim->n_hosts;
  uint32_t *dist = NULL, *queue = NULL, *tor = NULL, *first = NULL;
  uint32_t *order = NULL, maxp = 1, i, s, t;
  uint16_t *ports = NULL;
  int rv = 0;

  for (i = 0; i < nh; ++i) {
    netsim_link *l = sim->hosts[i]->nic;
    if (l == NULL || l->to->kind != NETSIM_NODE_SWITCH) {
      return NETSIM_ERR_STATE;
    }
  }
  for (s = 0; s < ns; ++s) {
    if (sim->switches[s]->node.n_ports > maxp) {
      maxp = sim->switches[s]->node.n_ports;
    }
  }
  dist = mem->malloc(sizeof(*dist) * (nn + 1), mem->user_data);
  queue = mem->malloc(sizeof(*queue) * (nn + 1), mem->user_data);
  tor = mem->malloc(sizeof(*tor) * (nh + 1), mem->user_data);
  first = mem->calloc(ns + 2, sizeof(*first), mem->user_data);
  order = mem->malloc(sizeof(*order) * (nh + 1), mem->user_data);
  ports = mem->malloc(sizeof(*ports) * maxp, mem->user_data);
  if (!dist || !queue || !tor || !first || !order || !ports) {
    rv = NETSIM_ERR_NOMEM;
    goto out;
  }
  for (s = 0; s < ns; ++s) {
    rv = reset_tables(sim, sim->switches[s], nh);
    if (rv != 0) {
      goto out;
    }
  }
  /* Hosts grouped by their ToR's switch index (a counting sort). */
  for (i = 0; i < nh; ++i) {
    tor[i] = ((netsim_switch *)sim->hosts[i]->nic->to)->index;
    ++first[tor[i] + 1];
  }
  for (s = 0; s < ns; ++s) {
    first[s + 1] += first[s];
  }
  for (i = 0; i < nh; ++i) {
    order[first[tor[i]]++] = i;
  }
  for (s = ns; s > 0; --s) {
    first[s] = first[s - 1];
  }
  first[0] = 0;

  for (t = 0; t < ns; ++t) {
    netsim_switch *ts = sim->switches[t];
    uint32_t head = 0, tail = 0, k;

    if (first[t] == first[t + 1]) {
      continue;
    }
    /* Distances to ToR t over routed links, walking them backwards. */
    for (i = 0; i < nn; ++i) {
      dist[i] = UINT32_MAX;
    }
    dist[ts->node.id] = 0;
    queue[tail++] = ts->node.id;
    while (head < tail) {
      netsim_node *u = sim->nodes[queue[head++]];
      uint32_t p;
      for (p = 0; p < u->n_ports; ++p) {
        netsim_link *l = u->out[p], *rl;
        netsim_node *x;
        if (l == NULL) {
          continue;
        }
        rl = sim->links[l->peer];
        x = l->to;
        if (!rl->routed || x->kind != NETSIM_NODE_SWITCH ||
            dist[x->id] != UINT32_MAX) {
          continue;
        }
        dist[x->id] = dist[u->id] + 1;
        queue[tail++] = x->id;
      }
    }
    for (s = 0; s < ns; ++s) {
      netsim_switch *sw = sim->switches[s];
      uint32_t d = dist[sw->node.id], np = 0, p, hint = 0;
      int gid;

      if (s == t || d == UINT32_MAX) {
        continue;
      }
      for (p = 0; p < sw->node.n_ports; ++p) {
        netsim_link *l = sw->node.out[p];
        if (l && l->routed && l->to->kind == NETSIM_NODE_SWITCH &&
            dist[l->to->id] + 1 == d) {
          ports[np++] = (uint16_t)p;
        }
      }
      gid = find_group(sim, sw, ports, np, &hint);
      if (gid < 0) {
        rv = gid;
        goto out;
      }
      for (k = first[t]; k < first[t + 1]; ++k) {
        sw->route[order[k]] = (uint16_t)gid;
      }
    }
    for (k = first[t]; k < first[t + 1]; ++k) {
      netsim_host *h = sim->hosts[order[k]];
      uint32_t hint = 0;
      uint16_t port = (uint16_t)h->nic->to_port;
      netsim_link *l = ts->node.out[port];
      int gid = 0;
      if (l && l->routed) {
        gid = find_group(sim, ts, &port, 1, &hint);
        if (gid < 0) {
          rv = gid;
          goto out;
        }
      }
      ts->route[h->index] = (uint16_t)gid;
    }
  }
out:
  mem->free(dist, mem->user_data);
  mem->free(queue, mem->user_data);
  mem->free(tor, mem->user_data);
  mem->free(first, mem->user_data);
  mem->free(order, mem->user_data);
  mem->free(ports, mem->user_data);
  return rv;
}
