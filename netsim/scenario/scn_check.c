/*
 * scn_check.c: the checks of a compiled scenario that need all of it
 * (every host a workload or a fault names exists in its topology, every
 * link name fits it, the CDF file of a random workload reads), and the
 * defaults that follow from the topology and the workload.
 */
#include "scn_int.h"

#include <stdlib.h>
#include <string.h>

/* n_hosts_of is how many hosts the topology of |s| has. */
static uint32_t n_hosts_of(const sim_scn *s) {
  switch (s->topo) {
  case SCN_TOPO_DUMBBELL:
    return 2 * s->hosts_per_side;
  case SCN_TOPO_LEAFSPINE:
    return s->leaves * s->hosts_per_leaf;
  default:
    return s->k * s->k * s->k / 4;
  }
}

/* check_link checks that link name |l| (from entry |e|, NULL if unknown)
   names cables of |s|'s topology.  Returns 0, or -1 with the message. */
static int check_link(scn_cc *c, const sim_scn *s, const scn_linkref *l,
                      const scn_entry *e) {
  uint32_t h = s->k / 2;
  const char *bad = NULL;

  switch (l->kind) {
  case 0:
    if (l->a >= s->n_hosts) {
      bad = "host index beyond the topology";
    }
    break;
  case 1:
    if (s->topo != SCN_TOPO_DUMBBELL) {
      bad = "pathI names a dumbbell's paths";
    } else if (l->a >= s->paths) {
      bad = "path index beyond the topology's paths";
    }
    break;
  case 2:
  case 3:
    if (s->topo != SCN_TOPO_LEAFSPINE) {
      bad = "leaf and spine names need a leafspine topology";
    } else if ((l->kind == 2 && (l->a >= s->leaves || l->b >= s->spines)) ||
               (l->kind == 3 && l->a >= s->spines)) {
      bad = "leaf or spine index beyond the topology";
    }
    break;
  case 4:
  case 5:
  case 6:
    if (s->topo != SCN_TOPO_FATTREE) {
      bad = "edge, agg and core names need a fattree topology";
    } else if ((l->kind == 4 &&
                (l->a >= s->k || l->b >= h || l->c != l->a || l->d >= h)) ||
               (l->kind == 5 && (l->a >= s->k || l->b >= h || l->c >= h * h ||
                                 l->c / h != l->b)) ||
               (l->kind == 6 && l->a >= h * h)) {
      bad = "pod, switch or core index beyond the topology (aggP.A-coreC "
            "needs C / (k/2) = A; edgeP.E-aggP.A the same pod)";
    }
    break;
  default:
    break;
  }
  if (bad) {
    return scn_fail(c, e, "link '%s': %s", l->text, bad);
  }
  return 0;
}

/* check_host checks that host index |h|, the workload's |what| (from entry
   |e|), exists.  Returns 0, or -1 with the message. */
static int check_host(scn_cc *c, const sim_scn *s, uint32_t h,
                      const scn_entry *e, const char *what) {
  if (h >= s->n_hosts) {
    return scn_fail(c, e,
                    "%s %u: expected a host index below %u (the topology "
                    "has %u hosts)",
                    what, h, s->n_hosts, s->n_hosts);
  }
  return 0;
}

int scn_check(scn_cc *c) {
  sim_scn *s = c->s;
  uint32_t i;

  /* Topology. */
  if (s->topo == SCN_TOPO_FATTREE && s->k < 2) {
    return scn_fail(c, c->at_k, "expected k >= 2");
  }
  s->n_hosts = n_hosts_of(s);
  if (s->n_hosts < 2) {
    return scn_fail(c, c->at_topo,
                    "the topology has %u host(s); expected at "
                    "least 2",
                    s->n_hosts);
  }
  if (s->n_hosts > 65536) {
    return scn_fail(c, c->at_topo,
                    "the topology has %u hosts; at most 65536 are "
                    "supported",
                    s->n_hosts);
  }
  if (s->n_lanes) {
    uint32_t want = s->topo == SCN_TOPO_DUMBBELL    ? s->paths
                    : s->topo == SCN_TOPO_LEAFSPINE ? s->spines
                                                    : 0;
    if (want == 0 || s->n_lanes != want) {
      return scn_fail(c, c->at_lanes, "expected one rate per %s (%u), got %u",
                      s->topo == SCN_TOPO_DUMBBELL ? "path" : "spine", want,
                      s->n_lanes);
    }
  }
  if (s->warmup >= s->duration) {
    return scn_fail(c, NULL, "[scenario] warmup must be shorter than duration");
  }
  /* Workload. */
  if (s->dst_set == 0) {
    s->dst = s->n_hosts - 1;
  }
  switch (s->wl) {
  case SCN_WL_SINGLE:
  case SCN_WL_STREAM:
    if (check_host(c, s, s->src, c->at_src, "src") ||
        check_host(c, s, s->dst, c->at_dst, "dst")) {
      return -1;
    }
    if (s->src == s->dst) {
      return scn_fail(c, c->at_dst ? c->at_dst : c->at_src,
                      "src and dst must differ");
    }
    break;
  case SCN_WL_PAIRS:
    if (!s->pairs_leaf && s->n_pairs == 0) {
      return scn_fail(c, c->at_wl,
                      "type pairs needs a 'pairs' key "
                      "(SRC>DST, ... or 'leaves')");
    }
    if (s->pairs_leaf && s->topo == SCN_TOPO_FATTREE) {
      return scn_fail(c, c->at_pairs,
                      "'leaves' pairs need a leafspine or "
                      "dumbbell topology");
    }
    for (i = 0; i < s->n_pairs; ++i) {
      if (check_host(c, s, s->pairs[i][0], c->at_pairs, "host") ||
          check_host(c, s, s->pairs[i][1], c->at_pairs, "host")) {
        return -1;
      }
      if (s->pairs[i][0] == s->pairs[i][1]) {
        return scn_fail(c, c->at_pairs, "pair %u sends to itself", i + 1);
      }
    }
    break;
  case SCN_WL_SHUFFLE:
    if (s->ranks == 0) {
      s->ranks = s->n_hosts;
    }
    if (s->ranks > s->n_hosts) {
      return scn_fail(c, c->at_ranks,
                      "expected at most %u ranks (one per host)", s->n_hosts);
    }
    if (s->bytes == 0) {
      return scn_fail(c, c->at_bytes ? c->at_bytes : c->at_wl,
                      "a shuffle needs bytes > 0 (sent to every other rank)");
    }
    break;
  case SCN_WL_INCAST:
    if (check_host(c, s, s->receiver, c->at_receiver, "receiver")) {
      return -1;
    }
    if (s->senders == 0) {
      s->senders = s->n_hosts - 1;
    }
    if (s->senders > s->n_hosts - 1) {
      return scn_fail(c, c->at_senders, "expected at most %u senders",
                      s->n_hosts - 1);
    }
    if (s->bytes == 0) {
      return scn_fail(c, c->at_bytes ? c->at_bytes : c->at_wl,
                      "an incast needs bytes > 0 (each sender's response)");
    }
    break;
  case SCN_WL_RANDOM:
    if (s->cdf[0] == '\0') {
      return scn_fail(c, c->at_wl,
                      "type random needs a 'cdf' file of flow "
                      "sizes");
    }
    if (s->flows == 0) {
      s->flows = 1000;
    }
    {
      /* Read it now: a bad file is a bad scenario, found before any run. */
      cdf_pt *pts;
      uint32_t np;
      char why[600];
      int rv = sim_cdf_load(s->cdf, &pts, &np, why, sizeof(why));
      if (rv != 0) {
        c->nomem = rv == SIM_SCN_NOMEM;
        return scn_fail(c, c->at_cdf, "%s", why);
      }
      free(pts);
    }
    break;
  default:
    break;
  }
  if (s->wl == SCN_WL_STREAM && s->interval == 0) {
    s->interval = 10 * NETSIM_US;
  }
  if (s->interval >> 63) {
    uint64_t rate = s->interval & ~(1ull << 63);
    s->interval = netsim_time_tx(s->message, rate);
    if (s->interval == 0) {
      s->interval = 1;
    }
  }
  if ((s->wl == SCN_WL_SINGLE || s->wl == SCN_WL_PAIRS ||
       s->wl == SCN_WL_PERMUTATION || s->wl == SCN_WL_STREAM) &&
      s->bytes == 0 && s->wl != SCN_WL_STREAM && s->warmup == 0) {
    /* Unbounded flows are measured after a warmup of a tenth. */
    s->warmup = s->duration / 10;
  }
  if (s->rpc_max > 0 && s->rpc_min > s->rpc_max) {
    return scn_fail(c, NULL, "[workload] rpc_min is above rpc_max");
  }
  if (s->rpc_min > 0 && s->rpc_max == 0) {
    return scn_fail(c, NULL, "[workload] rpc_min needs rpc_max");
  }
  for (i = 0; i < s->n_tr; ++i) {
    scn_transport *t = &s->tr[i];
    if (t->type == SCN_XPORT_SRD && s->message > (1u << 30)) {
      return scn_fail(c, c->at_message, "SRD messages are at most 1 GiB");
    }
    if (t->type == SCN_XPORT_SRD && t->srd.ep.rto_max < t->srd.ep.rto_min) {
      return scn_fail(c, NULL, "[transport.%s] rto_max is below rto_min",
                      t->name);
    }
    if (t->type == SCN_XPORT_TOS && t->srd.ep.rto_max < t->srd.ep.rto_min) {
      return scn_fail(
          c, NULL, "[transport.%s] srd_rto_max is below srd_rto_min", t->name);
    }
    if (t->type != SCN_XPORT_SRD && t->tcp.rto_max < t->tcp.rto_min) {
      return scn_fail(c, NULL, "[transport.%s] rto_max is below rto_min",
                      t->name);
    }
  }
  /* Faults name links of this topology. */
  for (i = 0; i < s->n_faults; ++i) {
    scn_fault *f = &s->faults[i];
    const scn_entry *e = NULL;
    size_t j;
    for (j = 0; j < c->r->n; ++j) {
      if (!strcmp(c->r->e[j].section, "faults") && c->r->e[j].line == f->line &&
          strstr(c->r->e[j].value, f->link.text)) {
        e = &c->r->e[j];
      }
    }
    if (check_link(c, s, &f->link, e) != 0) {
      return -1;
    }
    if (f->link.kind == 7) {
      uint32_t nf = s->wl == SCN_WL_PAIRS && !s->pairs_leaf ? s->n_pairs : 1;
      if (f->link.a >= nf && s->wl != SCN_WL_PAIRS) {
        return scn_fail(c, e,
                        "link '%s': only tcpflow0 exists for this "
                        "workload",
                        f->link.text);
      }
    }
  }
  return 0;
}
