/*
 * run_build.c: the network of a run: the topology the scenario names,
 * the faults on its links (link names resolved to cable ids), the names
 * of nodes and links as the reports print them, and the pools sized to
 * the run (packets for duplicating links, the SRD endpoint's windows and
 * queues for the workload).
 */
#include "run_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "tool_hist.h"

/* ------------------------------------------------------------------------ */
/* Topology                                                                 */

/* linkcfg sets |c| to a link of |rate| with the scenario's delay, queue
   and ECN threshold. */
static void linkcfg(const sim_scn *s, netsim_linkcfg *c, uint64_t rate) {
  netsim_linkcfg_default(c);
  c->rate_bps = rate;
  c->delay = s->delay;
  c->queue_bytes = s->queue;
  c->ecn_bytes = s->ecn;
}

int run_build_topo(run_ctx *r) {
  const sim_scn *s = r->s;
  uint64_t fab = s->fabric_rate ? s->fabric_rate : s->host_rate;
  int rv;

  if (s->topo == SCN_TOPO_DUMBBELL) {
    netsim_dumbbell_settings d;
    netsim_dumbbell_settings_default(&d, s->paths);
    d.hosts_per_side = s->hosts_per_side;
    linkcfg(s, &d.host, s->host_rate);
    linkcfg(s, &d.path, fab);
    d.nic_queue_bytes = s->nic_queue;
    d.path_rate_bps = s->n_lanes ? s->lane_rate : NULL;
    rv = netsim_topo_dumbbell(r->sim, &d, &r->info);
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    netsim_leafspine_settings l;
    netsim_leafspine_settings_default(&l, s->spines, s->leaves,
                                      s->hosts_per_leaf);
    linkcfg(s, &l.host, s->host_rate);
    linkcfg(s, &l.fabric, s->fabric_rate);
    l.oversub = s->oversub;
    l.nic_queue_bytes = s->nic_queue;
    l.spine_rate_bps = s->n_lanes ? s->lane_rate : NULL;
    rv = netsim_topo_leafspine(r->sim, &l, &r->info);
  } else {
    netsim_fattree_settings f;
    netsim_fattree_settings_default(&f, s->k);
    linkcfg(s, &f.host, s->host_rate);
    linkcfg(s, &f.edge_agg, fab);
    linkcfg(s, &f.agg_core, fab);
    f.nic_queue_bytes = s->nic_queue;
    rv = netsim_topo_fattree(r->sim, &f, &r->info);
  }
  if (rv != 0) {
    return run_fail(r, "building the topology failed: %s", netsim_strerror(rv));
  }
  if (s->send_jitter) {
    uint32_t i;
    for (i = 0; i < s->n_hosts; ++i) {
      rv =
          netsim_host_set_tx_jitter(netsim_sim_host(r->sim, i), s->send_jitter);
      if (rv != 0) {
        return run_fail(r, "setting host %u's send jitter failed: %s", i,
                        netsim_strerror(rv));
      }
    }
  }
  return 0;
}

/* sw_at returns switch |idx| (0 is the first switch), or NULL. */
static netsim_switch *sw_at(run_ctx *r, uint32_t idx) {
  return netsim_sim_switch(r->sim, idx);
}

int run_port_link(run_ctx *r, uint32_t sw, uint32_t port, uint32_t *id) {
  netsim_switch *x = sw_at(r, sw);
  netsim_link *l = x ? netsim_switch_port_link(x, port) : NULL;

  if (l == NULL) {
    return -1;
  }
  *id = netsim_link_id(l);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Faults                                                                   */

int run_resolve_link(run_ctx *r, const scn_linkref *l, uint32_t *ids,
                     uint32_t cap, uint32_t *n) {
  const sim_scn *s = r->s;
  uint32_t h = s->k / 2, i;

  *n = 0;
  switch (l->kind) {
  case 0:
    ids[(*n)++] = 2 * l->a;
    return 0;
  case 1:
    ids[(*n)++] = r->info.uplink_first + 2 * l->a;
    return 0;
  case 2:
    return run_port_link(r, l->a, s->hosts_per_leaf + l->b, &ids[(*n)++]);
  case 3:
    for (i = 0; i < s->leaves && *n < cap; ++i) {
      if (run_port_link(r, s->leaves + l->a, i, &ids[(*n)++]) != 0) {
        return -1;
      }
    }
    return 0;
  case 4:
    return run_port_link(r, l->a * h + l->b, h + l->d, &ids[(*n)++]);
  case 5:
    return run_port_link(r, r->info.tier_first[1] + l->a * h + l->b,
                         h + l->c % h, &ids[(*n)++]);
  case 6:
    for (i = 0; i < s->k && *n < cap; ++i) {
      if (run_port_link(r, r->info.tier_first[2] + l->a, i, &ids[(*n)++]) !=
          0) {
        return -1;
      }
    }
    return 0;
  case 7: {
    /* The fabric cable flow N's TCP connection hashes onto at its first
       switch (whichever transport runs: the path is a physical one). */
    sim_tcp_cfg tc;
    netsim_flowkey key;
    netsim_link_info li;
    netsim_switch *sw;
    netsim_link *out;
    int port;
    uint32_t k;
    const sim_flow *f;
    if (l->a >= r->n_flows) {
      return -1;
    }
    f = &r->flows[l->a];
    sim_tcp_cfg_default(&tc);
    tc.seed = s->seed;
    for (k = 0; k < s->n_tr; ++k) {
      if (s->tr[k].type == SCN_XPORT_TCP) {
        tc = s->tr[k].tcp;
        break;
      }
    }
    sim_tcp_flowkey(&tc, f->src, f->dst, f->conn, &key);
    netsim_link_get_info(netsim_sim_link(r->sim, 2 * f->src), &li);
    sw = sw_at(r, li.to_node - s->n_hosts);
    port = sw ? netsim_switch_route(sw, &key) : -1;
    out = port >= 0 ? netsim_switch_port_link(sw, (uint32_t)port) : NULL;
    if (out == NULL) {
      return -1;
    }
    ids[(*n)++] = netsim_link_id(out);
    return 0;
  }
  default:
    return -1;
  }
}

/* record_fault adds [faults] entry |f|, which stands for the |n| cables
   of |ids|, to the run's result (faults.csv). */
static void record_fault(run_ctx *r, const scn_fault *f, const uint32_t *ids,
                         uint32_t n) {
  static const char *const kinds[] = {"down", "up",  "degrade",
                                      "loss", "ber", "dup"};
  sim_result *res = r->res;
  sim_faultrec *x;

  if (res->n_faults >= SCN_MAX_FAULTS) {
    return;
  }
  x = &res->faults[res->n_faults++];
  snprintf(x->kind, sizeof(x->kind), "%s",
           f->op >= 0 && f->op <= SCN_FAULT_DUP ? kinds[f->op] : "?");
  snprintf(x->link, sizeof(x->link), "%s", f->link.text);
  x->cable[0] = '\0';
  if (n > 0) {
    run_link_name(r, ids[0], x->cable, sizeof(x->cable));
  }
  x->n_cables = n;
  x->at = f->op <= SCN_FAULT_DEGRADE ? f->at_ps : 0;
  x->routed = f->op == SCN_FAULT_DOWN || f->op == SCN_FAULT_UP
                  ? f->at_ps + r->s->reconverge
                  : NETSIM_TIME_NONE;
  x->value = f->op == SCN_FAULT_DEGRADE ? (double)f->rate_bps / 1e9
             : f->op >= SCN_FAULT_LOSS  ? f->p
                                        : 0;
}

int run_build_faults(run_ctx *r) {
  const sim_scn *s = r->s;
  uint32_t i, j, ids[256], n;
  int rv = 0;

  if (s->loss > 0) {
    rv = netsim_fault_loss_all(r->sim, s->loss,
                               s->loss_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return run_fail(r, "loss: %s", netsim_strerror(rv));
    }
  }
  if (s->ber > 0) {
    rv = netsim_fault_ber_all(r->sim, s->ber, s->ber_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return run_fail(r, "ber: %s", netsim_strerror(rv));
    }
  }
  if (s->dup > 0) {
    rv = netsim_fault_dup_all(r->sim, s->dup, s->dup_delay,
                              s->dup_scope == SCN_LOSS_FABRIC);
    if (rv != 0) {
      return run_fail(r, "dup: %s", netsim_strerror(rv));
    }
  }
  for (i = 0; i < s->n_faults; ++i) {
    const scn_fault *f = &s->faults[i];
    if (run_resolve_link(r, &f->link, ids, 256, &n) != 0) {
      return run_fail(r,
                      "%s:%d: [faults] link '%s' does not exist in this "
                      "topology",
                      s->file, f->line, f->link.text);
    }
    record_fault(r, f, ids, n);
    for (j = 0; j < n && rv == 0; ++j) {
      switch (f->op) {
      case SCN_FAULT_DOWN:
        rv = netsim_fault_link_down(r->sim, ids[j], f->at_ps);
        break;
      case SCN_FAULT_UP:
        rv = netsim_fault_link_up(r->sim, ids[j], f->at_ps);
        break;
      case SCN_FAULT_DEGRADE:
        rv = netsim_fault_degrade(r->sim, ids[j], f->rate_bps, f->at_ps);
        break;
      case SCN_FAULT_BER:
        rv = netsim_fault_ber(r->sim, ids[j], f->p);
        break;
      case SCN_FAULT_DUP:
        rv = netsim_fault_dup(r->sim, ids[j], f->p,
                              f->delay_set ? f->delay_ps : s->dup_delay);
        break;
      default:
        rv = netsim_fault_loss(r->sim, ids[j], f->p);
        break;
      }
    }
    if (rv != 0) {
      return run_fail(r, "%s:%d: [faults] %s: %s", s->file, f->line,
                      f->link.text, netsim_strerror(rv));
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */

/* node_name names a node as docs/scenarios.md does. */
static void node_name(run_ctx *r, uint32_t node, char *buf, size_t len) {
  const sim_scn *s = r->s;
  uint32_t h = s->k / 2, sw;

  if (node < s->n_hosts) {
    snprintf(buf, len, "host%u", node);
    return;
  }
  sw = node - s->n_hosts;
  if (s->topo == SCN_TOPO_DUMBBELL) {
    snprintf(buf, len, "%s", sw == 0 ? "left" : "right");
  } else if (s->topo == SCN_TOPO_LEAFSPINE) {
    if (sw < s->leaves) {
      snprintf(buf, len, "leaf%u", sw);
    } else {
      snprintf(buf, len, "spine%u", sw - s->leaves);
    }
  } else if (sw < r->info.tier_first[1]) {
    snprintf(buf, len, "edge%u.%u", sw / h, sw % h);
  } else if (sw < r->info.tier_first[2]) {
    sw -= r->info.tier_first[1];
    snprintf(buf, len, "agg%u.%u", sw / h, sw % h);
  } else {
    snprintf(buf, len, "core%u", sw - r->info.tier_first[2]);
  }
}

void run_link_name(run_ctx *r, uint32_t id, char *buf, size_t len) {
  netsim_link_info li;
  char a[40], b[40];

  netsim_link_get_info(netsim_sim_link(r->sim, id), &li);
  node_name(r, li.from_node, a, sizeof(a));
  node_name(r, li.to_node, b, sizeof(b));
  if (r->s->topo == SCN_TOPO_DUMBBELL && li.from_node >= r->s->n_hosts &&
      li.to_node >= r->s->n_hosts) {
    /* The parallel paths join the same two switches. */
    snprintf(buf, len, "path%u:%s->%s", li.from_port - r->s->hosts_per_side, a,
             b);
  } else {
    snprintf(buf, len, "%s->%s", a, b);
  }
}

/* ------------------------------------------------------------------------ */
/* Pools sized to the run                                                   */

/* run_dup_headroom is how many packets duplicating links may hold at once in
   the pool (each copy waits there dup_delay), so that the copies do not
   starve the hosts of packets: every host sending at its line rate,
   every packet copied on each link of its path (3, or 5 in a fat tree)
   with the largest probability configured, 2000 bytes a packet on
   average (full data packets and their small acknowledgements); at most
   2^22 (the pools are touched only as far as they are used).  0 without
   duplication, so that no other run changes.  A copy that still finds
   the pool empty is skipped and counted (dup_skipped). */
uint32_t run_dup_headroom(const sim_scn *s) {
  double p = s->dup, n;
  uint64_t delay = s->dup_delay;
  uint32_t i;

  if (!sim_scn_has_dup(s)) {
    return 0;
  }
  for (i = 0; i < s->n_faults; ++i) {
    const scn_fault *f = &s->faults[i];
    if (f->op == SCN_FAULT_DUP) {
      p = f->p > p ? f->p : p;
      if (f->delay_set && f->delay_ps > delay) {
        delay = f->delay_ps;
      }
    }
  }
  n = p * ((double)delay / 1e12) * (double)s->n_hosts * (double)s->host_rate *
      (s->topo == SCN_TOPO_FATTREE ? 5 : 3) / (8.0 * 2000);
  return n < (double)(1u << 22) ? (uint32_t)n + 1024 : 1u << 22;
}

/* run_size_srd fits the SRD endpoint's pools to the workload. */
void run_size_srd(run_ctx *r, sim_srd_cfg *c) {
  const sim_scn *s = r->s;
  uint32_t *peers = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t *in = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t *out = calloc(s->n_hosts, sizeof(uint32_t));
  uint32_t i, maxp = 1, maxin = 1, maxout = 1;
  uint64_t *seen = NULL;
  uint32_t n_seen = 0;

  if (peers && in && out) {
    /* Distinct peers per host: sort the (host, other) pairs. */
    seen = malloc((size_t)r->n_flows * 2 * sizeof(uint64_t) + 8);
    if (seen) {
      for (i = 0; i < r->n_flows; ++i) {
        seen[n_seen++] = (uint64_t)r->flows[i].src << 32 | r->flows[i].dst;
        seen[n_seen++] = (uint64_t)r->flows[i].dst << 32 | r->flows[i].src;
      }
      tool_sort_u64(seen, n_seen);
      for (i = 0; i < n_seen; ++i) {
        if (i == 0 || seen[i] != seen[i - 1]) {
          ++peers[seen[i] >> 32];
        }
      }
      free(seen);
    }
    for (i = 0; i < r->n_flows; ++i) {
      uint32_t w = r->flows[i].open_loop ? 64 : s->window;
      if (r->flows[i].n_msgs && r->flows[i].n_msgs < w) {
        w = r->flows[i].n_msgs;
      }
      if (r->flows[i].round == 0) {
        in[r->flows[i].dst] += w;
        out[r->flows[i].src] += w;
      }
    }
    for (i = 0; i < s->n_hosts; ++i) {
      maxp = peers[i] > maxp ? peers[i] : maxp;
      maxin = in[i] > maxin ? in[i] : maxin;
      maxout = out[i] > maxout ? out[i] : maxout;
    }
  }
  free(peers);
  free(in);
  free(out);
  if (c->ep.max_peers == 0) {
    c->ep.max_peers = maxp + 1;
  }
  if (c->recv_depth == 0) {
    c->recv_depth = 2 * maxin + 8 < 4096 ? 2 * maxin + 8 : 4096;
    c->recv_depth = c->recv_depth < 16 ? 16 : c->recv_depth;
  }
  if (c->ep.max_sends == 0) {
    c->ep.max_sends = maxout + 8 < 16 ? 16 : maxout + 8;
  }
  c->ep.max_msg_size = (uint32_t)s->message;
  if (c->ep.msg_window == 0) {
    uint32_t w = 16;
    while (w < 2 * s->window) {
      w <<= 1;
    }
    c->ep.msg_window = w;
  }
  if (c->ep.pkt_window == 0) {
    /* Enough packets for the bandwidth-delay product of the longest
       path, with room to spare: a smaller ring is less memory per peer. */
    uint32_t hops = s->topo == SCN_TOPO_FATTREE     ? 6
                    : s->topo == SCN_TOPO_LEAFSPINE ? 4
                                                    : 3;
    double ser = (double)(c->ep.mtu + 100) * 8.0 / (double)s->host_rate;
    double rtt = 2.0 * hops * ((double)s->delay / 1e12 + ser) +
                 (double)c->ep.ack_delay / 1e9;
    double pkts = (double)s->host_rate * rtt / 8.0 / c->ep.mtu + 16;
    uint32_t w = 32;
    while (w < pkts && w < 4096) {
      w <<= 1;
    }
    c->ep.pkt_window = w;
  }
  if (c->peer.ordered) {
    /* Ordered delivery parks early messages in the unexpected pool. */
    if (c->ep.unexp_msgs == 0) {
      c->ep.unexp_msgs = 256;
    }
    if (c->ep.unexp_bytes == 0) {
      uint64_t b = 64 * s->message;
      b = b < (4u << 20) ? (4u << 20) : b;
      b = b > (256u << 20) ? (256u << 20) : b;
      c->ep.unexp_bytes = (uint32_t)b;
    }
  }
  if (c->ep.unexp_msgs > 0 && c->ep.unexp_bytes < c->ep.mtu) {
    c->ep.unexp_bytes = c->ep.mtu;
  }
}
