/*
 * netsim_topo.c: topology builders and equal-cost path counting.
 *
 * Every builder adds the hosts first, so host i is node i and has address
 * NETSIM_ADDR_BASE + i (10.0.0.1 upwards), then the switches tier by tier,
 * then the cables host tier first, and finally computes the routes.  The
 * layouts (which host hangs off which switch port) are documented with
 * each builder in <netsim/topo.h> and in docs/netsim.md.
 */
#include <netsim/netsim.h>

#include <string.h>

#include "netsim_host.h"
#include "netsim_link.h"
#include "netsim_sim.h"
#include "netsim_switch.h"

void netsim_fattree_settings_default(netsim_fattree_settings *s, uint32_t k) {
  memset(s, 0, sizeof(*s));
  s->k = k;
  netsim_linkcfg_default(&s->host);
  netsim_linkcfg_default(&s->edge_agg);
  netsim_linkcfg_default(&s->agg_core);
  s->nic_queue_bytes = 1u << 20;
}

void netsim_leafspine_settings_default(netsim_leafspine_settings *s,
                                       uint32_t spines, uint32_t leaves,
                                       uint32_t hosts_per_leaf) {
  memset(s, 0, sizeof(*s));
  s->spines = spines;
  s->leaves = leaves;
  s->hosts_per_leaf = hosts_per_leaf;
  netsim_linkcfg_default(&s->host);
  netsim_linkcfg_default(&s->fabric);
  s->oversub = 1.0;
  s->nic_queue_bytes = 1u << 20;
}

void netsim_dumbbell_settings_default(netsim_dumbbell_settings *s,
                                      uint32_t paths) {
  memset(s, 0, sizeof(*s));
  s->paths = paths;
  s->hosts_per_side = 1;
  netsim_linkcfg_default(&s->host);
  netsim_linkcfg_default(&s->path);
  s->nic_queue_bytes = 1u << 20;
}

/* nic_cfg is the host->switch direction: the host cable with the NIC
   queue. */
static netsim_linkcfg nic_cfg(const netsim_linkcfg *host, uint64_t nic_q) {
  netsim_linkcfg c = *host;
  if (nic_q) {
    c.queue_bytes = nic_q;
  }
  return c;
}

static void info_begin(netsim_sim *sim, netsim_topo_info *info) {
  memset(info, 0, sizeof(*info));
  (void)sim;
}

static void info_end(netsim_sim *sim, netsim_topo_info *info,
                     netsim_topo_info *out) {
  info->n_hosts = sim->n_hosts;
  info->n_switches = sim->n_switches;
  info->n_links = sim->n_links;
  if (out) {
    *out = *info;
  }
}

static int add_hosts(netsim_sim *sim, uint32_t n) {
  uint32_t i;
  int rv;

  for (i = 0; i < n; ++i) {
    rv = netsim_sim_add_host(sim, NULL);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

static int add_switches(netsim_sim *sim, uint32_t n, uint32_t ports) {
  uint32_t i;
  int rv;

  for (i = 0; i < n; ++i) {
    rv = netsim_sim_add_switch(sim, ports, NULL);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

int netsim_topo_fattree(netsim_sim *sim, const netsim_fattree_settings *s,
                        netsim_topo_info *out) {
  uint32_t k = s->k, h = k / 2, nh, ne, na, nc, i, p, e, j, c;
  netsim_linkcfg nic;
  netsim_topo_info info;
  int rv;

  if (k < 2 || k > 64 || k % 2 != 0 || netsim_linkcfg_check(&s->host) ||
      netsim_linkcfg_check(&s->edge_agg) ||
      netsim_linkcfg_check(&s->agg_core)) {
    return NETSIM_ERR_INVAL;
  }
  if (sim->n_nodes != 0) {
    return NETSIM_ERR_STATE;
  }
  nh = k * k * k / 4;
  ne = k * h;
  na = k * h;
  nc = h * h;
  nic = nic_cfg(&s->host, s->nic_queue_bytes);
  info_begin(sim, &info);
  info.tier_first[0] = 0;
  info.tier_count[0] = ne;
  info.tier_first[1] = ne;
  info.tier_count[1] = na;
  info.tier_first[2] = ne + na;
  info.tier_count[2] = nc;
#define EDGE(p, e) (nh + (p)*h + (e))
#define AGG(p, j) (nh + ne + (p)*h + (j))
#define CORE(c) (nh + ne + na + (c))
  if ((rv = add_hosts(sim, nh)) != 0 ||
      (rv = add_switches(sim, ne + na + nc, k)) != 0) {
    return rv;
  }
  for (i = 0; i < nh; ++i) {
    p = i / (h * h);
    e = (i / h) % h;
    rv = netsim_sim_connect(sim, i, 0, EDGE(p, e), i % h, &nic, &s->host, NULL);
    if (rv != 0) {
      return rv;
    }
  }
  info.uplink_first = sim->n_links;
  for (p = 0; p < k; ++p) {
    for (e = 0; e < h; ++e) {
      for (j = 0; j < h; ++j) {
        rv = netsim_sim_connect(sim, EDGE(p, e), h + j, AGG(p, j), e,
                                &s->edge_agg, &s->edge_agg, NULL);
        if (rv != 0) {
          return rv;
        }
      }
    }
  }
  for (p = 0; p < k; ++p) {
    for (j = 0; j < h; ++j) {
      for (c = 0; c < h; ++c) {
        rv = netsim_sim_connect(sim, AGG(p, j), h + c, CORE(j * h + c), p,
                                &s->agg_core, &s->agg_core, NULL);
        if (rv != 0) {
          return rv;
        }
      }
    }
  }
#undef EDGE
#undef AGG
#undef CORE
  rv = netsim_sim_build_routes(sim);
  if (rv != 0) {
    return rv;
  }
  info_end(sim, &info, out);
  return 0;
}

int netsim_topo_leafspine(netsim_sim *sim, const netsim_leafspine_settings *s,
                          netsim_topo_info *out) {
  uint32_t S = s->spines, L = s->leaves, H = s->hosts_per_leaf, nh, i, l, sp;
  netsim_linkcfg nic, fab = s->fabric;
  netsim_topo_info info;
  int rv;

  if (S == 0 || L == 0 || H == 0 || H + S > 65535 || L > 65535 ||
      (uint64_t)L * H >= 0x00FFFFFEu || netsim_linkcfg_check(&s->host)) {
    return NETSIM_ERR_INVAL;
  }
  if (fab.rate_bps == 0) {
    double r;
    if (!(s->oversub > 0.0)) {
      return NETSIM_ERR_INVAL;
    }
    r = (double)H * (double)s->host.rate_bps / ((double)S * s->oversub);
    if (!(r >= 1.0) || r > (double)NETSIM_RATE_MAX) {
      return NETSIM_ERR_INVAL;
    }
    fab.rate_bps = (uint64_t)(r + 0.5);
  }
  if (netsim_linkcfg_check(&fab) != 0) {
    return NETSIM_ERR_INVAL;
  }
  if (s->spine_rate_bps) {
    for (sp = 0; sp < S; ++sp) {
      if (s->spine_rate_bps[sp] > NETSIM_RATE_MAX) {
        return NETSIM_ERR_INVAL;
      }
    }
  }
  if (sim->n_nodes != 0) {
    return NETSIM_ERR_STATE;
  }
  nh = L * H;
  nic = nic_cfg(&s->host, s->nic_queue_bytes);
  info_begin(sim, &info);
  info.tier_first[0] = 0;
  info.tier_count[0] = L;
  info.tier_first[1] = L;
  info.tier_count[1] = S;
  if ((rv = add_hosts(sim, nh)) != 0 ||
      (rv = add_switches(sim, L, H + S)) != 0 ||
      (rv = add_switches(sim, S, L)) != 0) {
    return rv;
  }
  for (i = 0; i < nh; ++i) {
    rv = netsim_sim_connect(sim, i, 0, nh + i / H, i % H, &nic, &s->host, NULL);
    if (rv != 0) {
      return rv;
    }
  }
  info.uplink_first = sim->n_links;
  for (l = 0; l < L; ++l) {
    for (sp = 0; sp < S; ++sp) {
      netsim_linkcfg c = fab;
      if (s->spine_rate_bps && s->spine_rate_bps[sp]) {
        c.rate_bps = s->spine_rate_bps[sp];
      }
      rv =
          netsim_sim_connect(sim, nh + l, H + sp, nh + L + sp, l, &c, &c, NULL);
      if (rv != 0) {
        return rv;
      }
    }
  }
  rv = netsim_sim_build_routes(sim);
  if (rv != 0) {
    return rv;
  }
  info_end(sim, &info, out);
  return 0;
}

int netsim_topo_dumbbell(netsim_sim *sim, const netsim_dumbbell_settings *s,
                         netsim_topo_info *out) {
  uint32_t N = s->paths, H = s->hosts_per_side, i;
  netsim_linkcfg nic;
  netsim_topo_info info;
  int rv;

  if (N == 0 || H == 0 || N + H > 65535 || netsim_linkcfg_check(&s->host) ||
      netsim_linkcfg_check(&s->path)) {
    return NETSIM_ERR_INVAL;
  }
  for (i = 0; s->path_rate_bps && i < N; ++i) {
    if (s->path_rate_bps[i] > NETSIM_RATE_MAX) {
      return NETSIM_ERR_INVAL;
    }
  }
  if (sim->n_nodes != 0) {
    return NETSIM_ERR_STATE;
  }
  nic = nic_cfg(&s->host, s->nic_queue_bytes);
  info_begin(sim, &info);
  info.tier_first[0] = 0;
  info.tier_count[0] = 1;
  info.tier_first[1] = 1;
  info.tier_count[1] = 1;
  if ((rv = add_hosts(sim, 2 * H)) != 0 ||
      (rv = add_switches(sim, 2, H + N)) != 0) {
    return rv;
  }
  for (i = 0; i < 2 * H; ++i) {
    rv = netsim_sim_connect(sim, i, 0, 2 * H + i / H, i % H, &nic, &s->host,
                            NULL);
    if (rv != 0) {
      return rv;
    }
  }
  info.uplink_first = sim->n_links;
  for (i = 0; i < N; ++i) {
    netsim_linkcfg c = s->path;
    if (s->path_rate_bps && s->path_rate_bps[i]) {
      c.rate_bps = s->path_rate_bps[i];
    }
    if (s->path_delay) {
      c.delay = s->path_delay[i];
    }
    rv = netsim_sim_connect(sim, 2 * H, H + i, 2 * H + 1, H + i, &c, &c, NULL);
    if (rv != 0) {
      return rv;
    }
  }
  rv = netsim_sim_build_routes(sim);
  if (rv != 0) {
    return rv;
  }
  info_end(sim, &info, out);
  return 0;
}

/* count_from returns the number of routed paths from node |u| to host
   |dst|, memoised per node in |memo|. */
static uint64_t count_from(netsim_sim *sim, netsim_node *u, uint32_t dst,
                           uint64_t *memo, uint32_t depth) {
  const netsim_switch *sw;
  const netsim_group *g;
  uint64_t sum = 0;
  uint32_t i;

  if (u->kind == NETSIM_NODE_HOST) {
    return ((netsim_host *)u)->index == dst;
  }
  if (memo[u->id] != UINT64_MAX) {
    return memo[u->id];
  }
  if (depth > sim->set.max_hops) {
    return 0;
  }
  sw = (const netsim_switch *)u;
  if (dst >= sw->n_route) {
    return 0;
  }
  g = &sw->groups[sw->route[dst]];
  for (i = 0; i < g->n; ++i) {
    netsim_link *l = sw->node.out[sw->gports[g->off + i]];
    sum += count_from(sim, l->to, dst, memo, depth + 1);
  }
  memo[u->id] = sum;
  return sum;
}

uint64_t netsim_sim_count_paths(netsim_sim *sim, uint32_t src, uint32_t dst) {
  const netsim_mem *mem = &sim->mem;
  netsim_link *l;
  uint64_t *memo, n;
  uint32_t i;

  if (src >= sim->n_hosts || dst >= sim->n_hosts || !sim->routed) {
    return 0;
  }
  l = sim->hosts[src]->nic;
  if (l == NULL || !l->routed) {
    return 0;
  }
  memo = mem->malloc(sizeof(*memo) * sim->n_nodes, mem->user_data);
  if (memo == NULL) {
    return 0;
  }
  for (i = 0; i < sim->n_nodes; ++i) {
    memo[i] = UINT64_MAX;
  }
  n = count_from(sim, l->to, dst, memo, 1);
  mem->free(memo, mem->user_data);
  return n;
}
