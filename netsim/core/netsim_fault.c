/*
 * netsim_fault.c: faults.
 *
 * A cable that goes down stops carrying packets at once, and everything
 * queued on or flying over it is lost.  Routing, though, learns of it only
 * settings.reconverge later (failure detection plus route propagation in a
 * real fabric takes tens of milliseconds to seconds): until then switches
 * keep hashing flows onto the dead port and those packets vanish, a
 * blackhole.  At the reconvergence time the link leaves routing and every
 * switch's ECMP sets are recomputed, so traffic avoids it.  Coming back up
 * is the mirror image: the cable carries packets at once but routing
 * returns to it only after the same delay.  Each change is a pooled
 * one-shot event scheduled when the fault is declared, so a run with
 * faults is as deterministic as one without.
 */
#include <netsim/netsim.h>

#include "netsim_link.h"
#include "netsim_sim.h"
#include "netsim_switch.h"

static void reroute(netsim_sim *sim) {
  if (netsim_routes_build(sim) != 0) {
    ++sim->route_errors;
  }
  ++sim->st.reroutes;
}

static void fault_fire(netsim_evl *evl, netsim_timer *tm, void *ctx,
                       uint64_t arg) {
  netsim_sim *sim = ctx;
  const netsim_fault_rec *f = &sim->faults[arg];
  netsim_link *a = sim->links[f->link], *b = sim->links[a->peer];

  (void)tm;
  netsim_sim_trace(sim, evl->now, ((uint64_t)f->op << 56) ^ f->link);
  switch (f->op) {
  case NETSIM_FAULT_OP_DOWN:
    netsim_link_set_up(sim, a, 0);
    netsim_link_set_up(sim, b, 0);
    break;
  case NETSIM_FAULT_OP_UP:
    netsim_link_set_up(sim, a, 1);
    netsim_link_set_up(sim, b, 1);
    break;
  case NETSIM_FAULT_OP_ROUTE_DOWN:
    a->routed = b->routed = 0;
    reroute(sim);
    break;
  case NETSIM_FAULT_OP_ROUTE_UP:
    a->routed = b->routed = 1;
    reroute(sim);
    break;
  case NETSIM_FAULT_OP_DEGRADE:
    netsim_link_set_rate(sim, a, f->rate_bps);
    netsim_link_set_rate(sim, b, f->rate_bps);
    break;
  default:
    break;
  }
}

static int add_fault(netsim_sim *sim, uint32_t link, uint32_t op,
                     uint64_t rate_bps, netsim_time at, netsim_evid *pid) {
  netsim_fault_rec *f;
  int rv;

  rv = netsim_sim_grow(&sim->mem, (void **)&sim->faults, &sim->cap_faults,
                       sizeof(*sim->faults), sim->n_faults + 1);
  if (rv != 0) {
    return rv;
  }
  f = &sim->faults[sim->n_faults];
  f->link = link;
  f->op = op;
  f->rate_bps = rate_bps;
  if (at < sim->evl->now) {
    at = sim->evl->now;
  }
  rv = netsim_evl_schedule(sim->evl, at, fault_fire, sim, sim->n_faults, pid);
  if (rv != 0) {
    return rv;
  }
  ++sim->n_faults;
  return 0;
}

/* change schedules |op| at |at| and its routing consequence |rop| one
   reconvergence delay later. */
static int change(netsim_sim *sim, uint32_t link_id, uint32_t op, uint32_t rop,
                  netsim_time at) {
  netsim_evid id;
  int rv;

  if (link_id >= sim->n_links) {
    return NETSIM_ERR_NOENT;
  }
  if (at < sim->evl->now) {
    at = sim->evl->now;
  }
  rv = add_fault(sim, link_id, op, 0, at, &id);
  if (rv != 0) {
    return rv;
  }
  rv = add_fault(sim, link_id, rop, 0, at + sim->set.reconverge, NULL);
  if (rv != 0) {
    netsim_evl_cancel(sim->evl, id);
  }
  return rv;
}

int netsim_fault_link_down(netsim_sim *sim, uint32_t link_id, netsim_time at) {
  return change(sim, link_id, NETSIM_FAULT_OP_DOWN, NETSIM_FAULT_OP_ROUTE_DOWN,
                at);
}

int netsim_fault_link_up(netsim_sim *sim, uint32_t link_id, netsim_time at) {
  return change(sim, link_id, NETSIM_FAULT_OP_UP, NETSIM_FAULT_OP_ROUTE_UP, at);
}

int netsim_fault_degrade(netsim_sim *sim, uint32_t link_id, uint64_t rate_bps,
                         netsim_time at) {
  if (link_id >= sim->n_links) {
    return NETSIM_ERR_NOENT;
  }
  if (rate_bps > NETSIM_RATE_MAX) {
    return NETSIM_ERR_INVAL;
  }
  return add_fault(sim, link_id, NETSIM_FAULT_OP_DEGRADE, rate_bps, at, NULL);
}

int netsim_fault_loss(netsim_sim *sim, uint32_t link_id, double p) {
  netsim_link *a;
  int rv;

  if (link_id >= sim->n_links) {
    return NETSIM_ERR_NOENT;
  }
  a = sim->links[link_id];
  rv = netsim_link_set_loss(a, p);
  if (rv == 0) {
    rv = netsim_link_set_loss(sim->links[a->peer], p);
  }
  return rv;
}

int netsim_fault_loss_all(netsim_sim *sim, double p, int fabric_only) {
  uint32_t i;

  if (!(p >= 0.0 && p <= 1.0)) {
    return NETSIM_ERR_INVAL;
  }
  for (i = 0; i < sim->n_links; ++i) {
    if (!fabric_only || sim->links[i]->fabric) {
      netsim_link_set_loss(sim->links[i], p);
    }
  }
  return 0;
}

int netsim_fault_ber(netsim_sim *sim, uint32_t link_id, double ber) {
  netsim_link *a;
  int rv;

  if (link_id >= sim->n_links) {
    return NETSIM_ERR_NOENT;
  }
  a = sim->links[link_id];
  rv = netsim_link_set_ber(a, ber);
  if (rv == 0) {
    rv = netsim_link_set_ber(sim->links[a->peer], ber);
  }
  return rv;
}

int netsim_fault_ber_all(netsim_sim *sim, double ber, int fabric_only) {
  uint32_t i;

  if (!(ber >= 0.0 && ber <= 1.0)) {
    return NETSIM_ERR_INVAL;
  }
  for (i = 0; i < sim->n_links; ++i) {
    if (!fabric_only || sim->links[i]->fabric) {
      netsim_link_set_ber(sim->links[i], ber);
    }
  }
  return 0;
}

int netsim_fault_dup(netsim_sim *sim, uint32_t link_id, double p,
                     netsim_time delay) {
  netsim_link *a;
  int rv;

  if (link_id >= sim->n_links) {
    return NETSIM_ERR_NOENT;
  }
  a = sim->links[link_id];
  rv = netsim_link_set_dup(a, p, delay);
  if (rv == 0) {
    rv = netsim_link_set_dup(sim->links[a->peer], p, delay);
  }
  return rv;
}

int netsim_fault_dup_all(netsim_sim *sim, double p, netsim_time delay,
                         int fabric_only) {
  uint32_t i;
  int rv;

  if (!(p >= 0.0 && p <= 1.0) || delay > 1000 * NETSIM_S) {
    return NETSIM_ERR_INVAL;
  }
  for (i = 0; i < sim->n_links; ++i) {
    if (!fabric_only || sim->links[i]->fabric) {
      rv = netsim_link_set_dup(sim->links[i], p, delay);
      if (rv != 0) {
        return rv;
      }
    }
  }
  return 0;
}
