/*
 * netsim_sim.c: the simulation object: settings, building the network node
 * by node, the packet pool wrappers, drops, counters and the trace hash.
 */
#include "netsim_sim.h"

#include <assert.h>
#include <string.h>

#include "netsim_host.h"
#include "netsim_link.h"
#include "netsim_switch.h"

void netsim_settings_default(netsim_settings *s) {
  memset(s, 0, sizeof(*s));
  s->seed = 1;
  s->max_pkts = 65536;
  s->max_events = 4096;
  s->reconverge = 10 * NETSIM_MS;
  s->max_hops = 64;
}

void netsim_linkcfg_default(netsim_linkcfg *c) {
  memset(c, 0, sizeof(*c));
  c->rate_bps = NETSIM_GBPS(100);
  c->delay = 1 * NETSIM_US;
  c->queue_bytes = 200000;
  c->ecn_bytes = 0;
}

int netsim_sim_grow(const netsim_mem *mem, void **arr, uint32_t *cap,
                    size_t elt, uint32_t need) {
  uint32_t ncap = *cap ? *cap : 8;
  void *a;

  if (need <= *cap) {
    return 0;
  }
  while (ncap < need) {
    if (ncap > UINT32_MAX / 2) {
      return NETSIM_ERR_NOMEM;
    }
    ncap *= 2;
  }
  a = mem->malloc(elt * ncap, mem->user_data);
  if (a == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  if (*cap) {
    memcpy(a, *arr, elt * *cap);
  }
  mem->free(*arr, mem->user_data);
  *arr = a;
  *cap = ncap;
  return 0;
}

int netsim_sim_new(netsim_sim **psim, const netsim_settings *s,
                   const netsim_mem *mem) {
  netsim_evl_settings es;
  netsim_sim *sim;
  int rv;

  if (mem == NULL) {
    mem = netsim_mem_default();
  }
  if (s->max_pkts == 0 || s->max_hops == 0 ||
      (s->payload_max == 0) != (s->max_payloads == 0)) {
    return NETSIM_ERR_INVAL;
  }
  sim = mem->calloc(1, sizeof(*sim), mem->user_data);
  if (sim == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  sim->mem = *mem;
  sim->set = *s;
  es.max_pooled = s->max_events;
  es.heap_hint = 1024;
  rv = netsim_evl_new(&sim->evl, &es, mem);
  if (rv == 0) {
    rv = netsim_pktpool_new(&sim->pool, s->max_pkts, s->payload_max,
                            s->max_payloads, mem);
  }
  if (rv != 0) {
    netsim_sim_del(sim);
    return rv;
  }
  sim->trace = 0xCBF29CE484222325ULL;
  *psim = sim;
  return 0;
}

void netsim_sim_del(netsim_sim *sim) {
  const netsim_mem *mem;
  uint32_t i;

  if (sim == NULL) {
    return;
  }
  mem = &sim->mem;
  /* The event list first: it resets the links' timers, which must still
     exist. */
  netsim_evl_del(sim->evl);
  for (i = 0; i < sim->n_links; ++i) {
    netsim_link_del(mem, sim->links[i]);
  }
  for (i = 0; i < sim->n_switches; ++i) {
    netsim_switch_free(sim, sim->switches[i]);
    mem->free(sim->switches[i], mem->user_data);
  }
  for (i = 0; i < sim->n_hosts; ++i) {
    mem->free(sim->hosts[i], mem->user_data);
  }
  mem->free(sim->links, mem->user_data);
  mem->free(sim->switches, mem->user_data);
  mem->free(sim->hosts, mem->user_data);
  mem->free(sim->nodes, mem->user_data);
  mem->free(sim->faults, mem->user_data);
  netsim_pktpool_del(sim->pool);
  mem->free(sim, mem->user_data);
}

netsim_evl *netsim_sim_evl(netsim_sim *sim) {
  return sim->evl;
}

netsim_pktpool *netsim_sim_pool(netsim_sim *sim) {
  return sim->pool;
}

netsim_time netsim_sim_now(const netsim_sim *sim) {
  return sim->evl->now;
}

uint64_t netsim_sim_seed(const netsim_sim *sim) {
  return sim->set.seed;
}

uint64_t netsim_sim_run_until(netsim_sim *sim, netsim_time until) {
  return netsim_evl_run_until(sim->evl, until);
}

int netsim_sim_pkt_alloc(netsim_sim *sim, netsim_pkt **ppkt) {
  return netsim_pkt_alloc(sim->pool, ppkt);
}

void netsim_sim_pkt_free(netsim_sim *sim, netsim_pkt *pkt) {
  netsim_pkt_free(sim->pool, pkt);
}

static int add_node(netsim_sim *sim, netsim_node *node) {
  int rv = netsim_sim_grow(&sim->mem, (void **)&sim->nodes, &sim->cap_nodes,
                           sizeof(*sim->nodes), sim->n_nodes + 1);
  if (rv != 0) {
    return rv;
  }
  node->id = sim->n_nodes;
  sim->nodes[sim->n_nodes++] = node;
  return 0;
}

int netsim_sim_add_host(netsim_sim *sim, netsim_host **phost) {
  const netsim_mem *mem = &sim->mem;
  netsim_host *h;
  int rv;

  if (sim->routed) {
    return NETSIM_ERR_STATE;
  }
  if (sim->n_hosts >= 0x00FFFFFEu) {
    return NETSIM_ERR_INVAL;
  }
  rv = netsim_sim_grow(mem, (void **)&sim->hosts, &sim->cap_hosts,
                       sizeof(*sim->hosts), sim->n_hosts + 1);
  if (rv != 0) {
    return rv;
  }
  h = mem->calloc(1, sizeof(*h), mem->user_data);
  if (h == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  h->node.kind = NETSIM_NODE_HOST;
  h->node.n_ports = 1;
  h->node.out = &h->nic;
  rv = add_node(sim, &h->node);
  if (rv != 0) {
    mem->free(h, mem->user_data);
    return rv;
  }
  h->index = sim->n_hosts;
  h->addr = NETSIM_ADDR_BASE + h->index;
  sim->hosts[sim->n_hosts++] = h;
  if (phost) {
    *phost = h;
  }
  return 0;
}

int netsim_sim_add_switch(netsim_sim *sim, uint32_t n_ports,
                          netsim_switch **psw) {
  const netsim_mem *mem = &sim->mem;
  netsim_switch *sw;
  int rv;

  if (sim->routed) {
    return NETSIM_ERR_STATE;
  }
  if (n_ports == 0 || n_ports > 65535) {
    return NETSIM_ERR_INVAL;
  }
  rv = netsim_sim_grow(mem, (void **)&sim->switches, &sim->cap_switches,
                       sizeof(*sim->switches), sim->n_switches + 1);
  if (rv != 0) {
    return rv;
  }
  sw = mem->calloc(1, sizeof(*sw), mem->user_data);
  if (sw == NULL) {
    return NETSIM_ERR_NOMEM;
  }
  sw->node.kind = NETSIM_NODE_SWITCH;
  sw->node.n_ports = n_ports;
  sw->node.out = mem->calloc(n_ports, sizeof(*sw->node.out), mem->user_data);
  if (sw->node.out == NULL) {
    mem->free(sw, mem->user_data);
    return NETSIM_ERR_NOMEM;
  }
  rv = add_node(sim, &sw->node);
  if (rv != 0) {
    mem->free(sw->node.out, mem->user_data);
    mem->free(sw, mem->user_data);
    return rv;
  }
  sw->index = sim->n_switches;
  {
    netsim_rng r;
    netsim_rng_init(&r, sim->set.seed, NETSIM_STREAM_SWITCH, sw->index);
    sw->seed = netsim_rng_next(&r);
  }
  sim->switches[sim->n_switches++] = sw;
  if (psw) {
    *psw = sw;
  }
  return 0;
}

int netsim_sim_connect(netsim_sim *sim, uint32_t a, uint32_t port_a, uint32_t b,
                       uint32_t port_b, const netsim_linkcfg *ab,
                       const netsim_linkcfg *ba, uint32_t *plink) {
  const netsim_mem *mem = &sim->mem;
  netsim_node *na, *nb;
  netsim_link *lab, *lba;
  uint32_t id;
  int rv;

  if (sim->routed) {
    return NETSIM_ERR_STATE;
  }
  if (a >= sim->n_nodes || b >= sim->n_nodes || a == b) {
    return NETSIM_ERR_INVAL;
  }
  na = sim->nodes[a];
  nb = sim->nodes[b];
  if (port_a >= na->n_ports || port_b >= nb->n_ports || na->out[port_a] ||
      nb->out[port_b]) {
    return NETSIM_ERR_INVAL;
  }
  if (na->kind == NETSIM_NODE_HOST && nb->kind == NETSIM_NODE_HOST) {
    return NETSIM_ERR_INVAL;
  }
  if (netsim_linkcfg_check(ab) != 0 || netsim_linkcfg_check(ba) != 0) {
    return NETSIM_ERR_INVAL;
  }
  rv = netsim_sim_grow(mem, (void **)&sim->links, &sim->cap_links,
                       sizeof(*sim->links), sim->n_links + 2);
  if (rv != 0) {
    return rv;
  }
  lab = netsim_link_new(mem);
  lba = netsim_link_new(mem);
  if (lab == NULL || lba == NULL) {
    netsim_link_del(mem, lab);
    netsim_link_del(mem, lba);
    return NETSIM_ERR_NOMEM;
  }
  id = sim->n_links;
  netsim_link_init(lab, sim, id, ab);
  netsim_link_init(lba, sim, id + 1, ba);
  lab->peer = id + 1;
  lba->peer = id;
  lab->from_node = a;
  lab->from_port = port_a;
  lab->to_node = b;
  lab->to_port = port_b;
  lab->to = nb;
  lba->from_node = b;
  lba->from_port = port_b;
  lba->to_node = a;
  lba->to_port = port_a;
  lba->to = na;
  lab->fabric = lba->fabric =
      na->kind == NETSIM_NODE_SWITCH && nb->kind == NETSIM_NODE_SWITCH;
  na->out[port_a] = lab;
  nb->out[port_b] = lba;
  sim->links[sim->n_links++] = lab;
  sim->links[sim->n_links++] = lba;
  if (plink) {
    *plink = id;
  }
  return 0;
}

int netsim_sim_reserve_events(netsim_sim *sim) {
  return netsim_evl_reserve(sim->evl, sim->n_links + sim->n_dup_links +
                                          2 * sim->n_hosts + sim->evl->pool_n +
                                          64);
}

int netsim_sim_build_routes(netsim_sim *sim) {
  int rv;

  if (sim->n_hosts == 0) {
    return NETSIM_ERR_STATE;
  }
  /* Arming the timers never allocates afterwards. */
  rv = netsim_sim_reserve_events(sim);
  if (rv != 0) {
    return rv;
  }
  rv = netsim_routes_build(sim);
  if (rv != 0) {
    return rv;
  }
  sim->routed = 1;
  return 0;
}

uint32_t netsim_sim_n_hosts(const netsim_sim *sim) {
  return sim->n_hosts;
}

uint32_t netsim_sim_n_switches(const netsim_sim *sim) {
  return sim->n_switches;
}

uint32_t netsim_sim_n_links(const netsim_sim *sim) {
  return sim->n_links;
}

uint32_t netsim_sim_n_nodes(const netsim_sim *sim) {
  return sim->n_nodes;
}

netsim_host *netsim_sim_host(netsim_sim *sim, uint32_t idx) {
  return idx < sim->n_hosts ? sim->hosts[idx] : NULL;
}

netsim_switch *netsim_sim_switch(netsim_sim *sim, uint32_t idx) {
  return idx < sim->n_switches ? sim->switches[idx] : NULL;
}

netsim_link *netsim_sim_link(netsim_sim *sim, uint32_t id) {
  return id < sim->n_links ? sim->links[id] : NULL;
}

netsim_host *netsim_sim_host_by_addr(netsim_sim *sim, netsim_addr addr) {
  uint32_t idx = addr - NETSIM_ADDR_BASE;
  return idx < sim->n_hosts ? sim->hosts[idx] : NULL;
}

uint64_t netsim_sim_trace_hash(const netsim_sim *sim) {
  return sim->trace;
}

void netsim_sim_set_drop_cb(netsim_sim *sim, netsim_drop_cb cb, void *user,
                            netsim_drop_cb *prev, void **prev_user) {
  if (prev) {
    *prev = sim->drop_cb;
  }
  if (prev_user) {
    *prev_user = sim->drop_user;
  }
  sim->drop_cb = cb;
  sim->drop_user = user;
}

void netsim_sim_set_tap(netsim_sim *sim, netsim_tap_cb cb, void *user) {
  sim->tap_cb = cb;
  sim->tap_user = user;
}

void netsim_sim_set_dup_cb(netsim_sim *sim, netsim_dup_cb cb, void *user,
                           netsim_dup_cb *prev, void **prev_user) {
  if (prev) {
    *prev = sim->dup_cb;
  }
  if (prev_user) {
    *prev_user = sim->dup_user;
  }
  sim->dup_cb = cb;
  sim->dup_user = user;
}

void netsim_sim_get_stats(const netsim_sim *sim, netsim_sim_stats *st) {
  *st = sim->st;
  st->events = sim->evl->count;
  st->pkts_in_use = netsim_pktpool_in_use(sim->pool);
}

void netsim_sim_drop(netsim_sim *sim, netsim_pkt *pkt, netsim_drop_reason why,
                     netsim_link *link) {
  assert((unsigned)why < NETSIM_DROP_REASONS);
  ++sim->st.drops[why];
  if (link) {
    ++link->drops[why];
  }
  netsim_sim_trace(sim, sim->evl->now,
                   ((uint64_t)(why + 1) << 60) ^ (pkt->uid << 24) ^
                       (link ? link->id : 0xFFFFFFu));
  if (sim->drop_cb) {
    sim->drop_cb(sim, pkt, why, link, sim->drop_user);
  }
  netsim_pkt_free(sim->pool, pkt);
}
