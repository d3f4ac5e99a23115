/*
 * scn_compile.c: compiling a scenario's raw entries into a sim_scn:
 * defaults first, then every entry in order ([scenario], [topology],
 * [workload], [faults]), the transports once the list of them is known,
 * then the checks of the whole (scn_check.c) and the sweep
 * (scn_sweep.c).  Each key's value is checked here, with a message that
 * names the file, the line, the key and what was expected.
 * docs/scenarios.md documents every key this file accepts.
 */
#include "scn_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Messages, and each kind of value checked against its key's bounds      */

int scn_fail(scn_cc *c, const scn_entry *e, const char *fmt, ...) {
  char what[256];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (e == NULL) {
    snprintf(c->err, c->errlen, "%s: %s", c->r->file, what);
  } else if (e->line > 0) {
    snprintf(c->err, c->errlen, "%s:%d: [%s] %s = %s: %s", e->src, e->line,
             e->section, e->key, e->value, what);
  } else {
    snprintf(c->err, c->errlen, "%s %s.%s=%s: %s", e->src, e->section, e->key,
             e->value, what);
  }
  return -1;
}

/* expect fails the current entry with "expected |why|".  Returns -1. */
static int expect(scn_cc *c, const char *why) {
  return scn_fail(c, c->cur, "expected %s", why);
}

#define V (c->cur->value)

/* get_u64 and the get_* below read the current entry's value into |*out|,
   each a kind of value within its key's bounds (|lo| to |hi| where they
   take them).  Each returns 0, or -1 with the message saying what was
   expected (|*out| is then unspecified). */
static int get_u64(scn_cc *c, uint64_t lo, uint64_t hi, uint64_t *out) {
  uint64_t x;
  const char *why;

  if (sim_parse_uint(V, hi, &x, &why) != 0 || x < lo) {
    char buf[96];
    snprintf(buf, sizeof(buf), "a whole number from %llu to %llu",
             (unsigned long long)lo, (unsigned long long)hi);
    return expect(c, buf);
  }
  *out = x;
  return 0;
}

/* get_uint is get_u64 for a 32-bit field (|hi| fits in one). */
static int get_uint(scn_cc *c, uint64_t lo, uint64_t hi, uint32_t *out) {
  uint64_t x;

  if (get_u64(c, lo, hi, &x) != 0) {
    return -1;
  }
  *out = (uint32_t)x;
  return 0;
}

static int get_size(scn_cc *c, uint64_t lo, uint64_t hi, uint64_t *out) {
  const char *why;
  uint64_t x;

  if (sim_parse_size(V, &x, &why) != 0) {
    return expect(c, why);
  }
  if (x < lo || x > hi) {
    char buf[128];
    snprintf(buf, sizeof(buf), "a size from %llu to %llu bytes",
             (unsigned long long)lo, (unsigned long long)hi);
    return expect(c, buf);
  }
  *out = x;
  return 0;
}

static int get_rate(scn_cc *c, uint64_t *out) {
  const char *why;

  if (sim_parse_rate(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_time(scn_cc *c, uint64_t lo, uint64_t *out) {
  const char *why;

  if (sim_parse_time(V, out, &why) != 0) {
    return expect(c, why);
  }
  if (*out < lo) {
    char buf[64], t[32];
    sim_fmt_time(lo, t, sizeof(t));
    snprintf(buf, sizeof(buf), "a time of at least %s", t);
    return expect(c, buf);
  }
  return 0;
}

static int get_bool(scn_cc *c, int *out) {
  const char *why;

  if (scn_parse_bool(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_prob(scn_cc *c, double *out) {
  const char *why;

  if (sim_parse_prob(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_dup_delay(scn_cc *c, uint64_t *out) {
  const char *why;

  if (sim_parse_dup_delay(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_ber(scn_cc *c, double *out) {
  const char *why;

  if (sim_parse_ber(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Sections, one entry at a time                                            */

/* unknown_key fails the current entry as a key its section does not have,
   listing the |keys| it does.  Returns -1. */
static int unknown_key(scn_cc *c, const char *keys) {
  return scn_fail(c, c->cur, "unknown key '%s' in [%s]; expected one of: %s",
                  c->cur->key, c->cur->section, keys);
}

#define KEY(name) (strcmp(c->cur->key, (name)) == 0)

static const char *const builtin_names[] = {
    "srd",       "srd-ordered", "srd-blind",   "srd-1path",    "tcp",
    "tcp-tuned", "dctcp",       "dctcp-tuned", "tcp-over-srd", NULL};

/* transport_defaults sets up |t| as transport |name| of |type|: the
   engine's and the TCP model's defaults, then what a built-in name
   changes (srd-ordered, srd-blind, srd-1path, tcp-tuned, dctcp,
   dctcp-tuned). */
static void transport_defaults(scn_transport *t, const char *name, int type,
                               uint64_t seed) {
  memset(t, 0, sizeof(*t));
  snprintf(t->name, sizeof(t->name), "%s", name);
  t->type = type;
  sim_srd_cfg_default(&t->srd);
  sim_tcp_cfg_default(&t->tcp);
  t->srd.seed = seed;
  t->tcp.seed = seed;
  snprintf(t->cc_name, sizeof(t->cc_name), "swift");
  if (type == SCN_XPORT_TOS) {
    /* TCP's segments one SRD packet each, delivered in order. */
    sim_tos_cfg d;
    sim_tos_cfg_default(&d);
    t->tcp.mss = d.tcp.mss;
    t->srd.peer.ordered = 1;
  }
  if (!strcmp(name, "srd-ordered")) {
    t->srd.peer.ordered = 1;
  } else if (!strcmp(name, "srd-blind")) {
    t->srd.ep.path_steering = 0;
  } else if (!strcmp(name, "srd-1path")) {
    t->srd.peer.n_paths = 1;
  } else if (!strcmp(name, "tcp-tuned")) {
    t->tcp.rto_min = 1 * NETSIM_MS;
  } else if (!strcmp(name, "dctcp")) {
    t->tcp.cc = SIM_TCP_CC_DCTCP;
    t->tcp.ecn = 1;
  } else if (!strcmp(name, "dctcp-tuned")) {
    t->tcp.cc = SIM_TCP_CC_DCTCP;
    t->tcp.ecn = 1;
    t->tcp.rto_min = 1 * NETSIM_MS;
  }
}

/* builtin_type is the type of a built-in transport name: srd* are SRD,
   tcp-over-srd is TCP over SRD, the rest TCP. */
static int builtin_type(const char *name) {
  if (!strcmp(name, "tcp-over-srd")) {
    return SCN_XPORT_TOS;
  }
  if (!strncmp(name, "srd", 3)) {
    return SCN_XPORT_SRD;
  }
  return SCN_XPORT_TCP;
}

/* is_builtin says whether |name| is one of builtin_names. */
static int is_builtin(const char *name) {
  int i;

  for (i = 0; builtin_names[i]; ++i) {
    if (!strcmp(builtin_names[i], name)) {
      return 1;
    }
  }
  return 0;
}

/* find_tr returns the listed transport called |name|, or NULL. */
static scn_transport *find_tr(sim_scn *s, const char *name) {
  uint32_t i;

  for (i = 0; i < s->n_tr; ++i) {
    if (!strcmp(s->tr[i].name, name)) {
      return &s->tr[i];
    }
  }
  return NULL;
}

int sim_scn_valid_name(const char *n) {
  size_t i, len = strlen(n);

  if (len == 0 || len >= SCN_NAME_MAX) {
    return 0;
  }
  for (i = 0; i < len; ++i) {
    if (!isalnum((unsigned char)n[i]) && n[i] != '-' && n[i] != '_') {
      return 0;
    }
  }
  return 1;
}

static int get_pcap(scn_cc *c);

/* do_scenario and the do_* below compile the current entry of their
   section (or, for do_srd_key and do_tcp_key, of transport |t|'s
   section) into c->s.  Keys read only once everything is known
   (transports, sweep) are remembered in c->at_*.  Each returns 0, or -1
   with the message (an unknown key lists the section's keys). */
static int do_scenario(scn_cc *c) {
  sim_scn *s = c->s;

  if (KEY("name")) {
    if (!sim_scn_valid_name(V)) {
      return expect(c, "a name of letters, digits, '-' and '_' "
                       "(at most 47 characters)");
    }
    snprintf(s->name, sizeof(s->name), "%s", V);
  } else if (KEY("description")) {
    /* Documentation only. */
  } else if (KEY("seed")) {
    return get_u64(c, 0, UINT64_MAX, &s->seed);
  } else if (KEY("transports")) {
    c->at_transports = c->cur; /* read after everything else */
  } else if (KEY("duration")) {
    return get_time(c, NETSIM_US, &s->duration);
  } else if (KEY("warmup")) {
    return get_time(c, 0, &s->warmup);
  } else if (KEY("sample")) {
    return get_time(c, NETSIM_NS, &s->sample);
  } else if (KEY("capacity")) {
    return get_rate(c, &s->capacity_bps);
  } else if (KEY("pkts_per_host")) {
    return get_uint(c, 16, 1u << 20, &s->pkts_per_host);
  } else if (KEY("sweep")) {
    c->at_sweep = c->cur;
  } else if (KEY("pcap")) {
    return get_pcap(c);
  } else {
    return unknown_key(c, "name, description, seed, transports, duration, "
                          "warmup, sample, capacity, pkts_per_host, sweep, "
                          "pcap");
  }
  return 0;
}

/* get_lanes reads a comma list of rates, one per dumbbell path or spine
   (checked against the topology by scn_check). */
static int get_lanes(scn_cc *c) {
  char buf[1024], *items[SCN_MAX_LANES];
  uint32_t n, i;
  sim_scn *s = c->s;

  snprintf(buf, sizeof(buf), "%s", V);
  n = scn_split_list(buf, items, SCN_MAX_LANES, ',');
  if (n > SCN_MAX_LANES) {
    return expect(c, "at most 64 rates, separated by commas");
  }
  for (i = 0; i < n; ++i) {
    const char *why;
    if (sim_parse_rate(items[i], &s->lane_rate[i], &why) != 0) {
      return scn_fail(c, c->cur, "item %u ('%s'): expected %s", i + 1, items[i],
                      why);
    }
  }
  s->n_lanes = n;
  c->at_lanes = c->cur;
  return 0;
}

static int do_topology(scn_cc *c) {
  sim_scn *s = c->s;

  if (KEY("type")) {
    c->at_topo = c->cur;
    if (!strcmp(V, "dumbbell") || !strcmp(V, "paths")) {
      s->topo = SCN_TOPO_DUMBBELL;
    } else if (!strcmp(V, "leafspine") || !strcmp(V, "leaf-spine")) {
      s->topo = SCN_TOPO_LEAFSPINE;
    } else if (!strcmp(V, "fattree") || !strcmp(V, "fat-tree")) {
      s->topo = SCN_TOPO_FATTREE;
    } else {
      return expect(c, "dumbbell, leafspine or fattree");
    }
  } else if (KEY("k")) {
    c->at_k = c->cur;
    if (get_uint(c, 2, 64, &s->k) != 0) {
      return -1;
    }
    if (s->k % 2) {
      return expect(c, "an even number from 2 to 64");
    }
  } else if (KEY("spines")) {
    return get_uint(c, 1, 256, &s->spines);
  } else if (KEY("leaves")) {
    return get_uint(c, 1, 1024, &s->leaves);
  } else if (KEY("hosts_per_leaf")) {
    return get_uint(c, 1, 1024, &s->hosts_per_leaf);
  } else if (KEY("paths")) {
    return get_uint(c, 1, 256, &s->paths);
  } else if (KEY("hosts_per_side")) {
    return get_uint(c, 1, 4096, &s->hosts_per_side);
  } else if (KEY("rate") || KEY("host_rate")) {
    return get_rate(c, &s->host_rate);
  } else if (KEY("fabric_rate")) {
    return get_rate(c, &s->fabric_rate);
  } else if (KEY("delay")) {
    return get_time(c, 0, &s->delay);
  } else if (KEY("queue")) {
    return get_size(c, 1500, 1ull << 34, &s->queue);
  } else if (KEY("nic_queue")) {
    return get_size(c, 1500, 1ull << 34, &s->nic_queue);
  } else if (KEY("ecn")) {
    return get_size(c, 0, 1ull << 34, &s->ecn);
  } else if (KEY("oversub")) {
    double x;
    if (scn_parse_num(V, &x) != 0 || x < 0.01 || x > 1000) {
      return expect(c, "an oversubscription ratio from 0.01 to 1000 "
                       "(1 = none)");
    }
    s->oversub = x;
  } else if (KEY("spine_rates") || KEY("path_rates")) {
    return get_lanes(c);
  } else if (KEY("reconverge")) {
    return get_time(c, 0, &s->reconverge);
  } else if (KEY("send_jitter")) {
    if (get_time(c, 0, &s->send_jitter) != 0) {
      return -1;
    }
    if (s->send_jitter > NETSIM_MS) {
      return expect(c, "a time from 0 to 1ms");
    }
  } else {
    return unknown_key(c, "type, k, spines, leaves, hosts_per_leaf, paths, "
                          "hosts_per_side, rate, fabric_rate, delay, queue, "
                          "nic_queue, ecn, oversub, spine_rates, path_rates, "
                          "reconverge, send_jitter");
  }
  return 0;
}

/* get_pairs reads "SRC>DST, ..." host pairs, or "leaves" (also "sides",
   "cross"): host i of the first leaf or side to host i of the second. */
static int get_pairs(scn_cc *c) {
  char buf[4096], *items[SCN_MAX_PAIRS];
  uint32_t n, i;
  sim_scn *s = c->s;

  c->at_pairs = c->cur;
  if (!strcmp(V, "leaves") || !strcmp(V, "sides") || !strcmp(V, "cross")) {
    s->pairs_leaf = 1;
    s->n_pairs = 0;
    return 0;
  }
  s->pairs_leaf = 0;
  if (strlen(V) >= sizeof(buf)) {
    return expect(c, "a shorter list");
  }
  snprintf(buf, sizeof(buf), "%s", V);
  n = scn_split_list(buf, items, SCN_MAX_PAIRS, ',');
  if (n > SCN_MAX_PAIRS) {
    return expect(c, "at most 256 pairs");
  }
  for (i = 0; i < n; ++i) {
    char *gt = strchr(items[i], '>');
    uint64_t a, b;
    const char *why;
    if (gt == NULL) {
      return scn_fail(c, c->cur,
                      "item %u ('%s'): expected SRC>DST host indices, or "
                      "'leaves'",
                      i + 1, items[i]);
    }
    *gt = '\0';
    scn_trim(items[i]);
    scn_trim(gt + 1);
    if (sim_parse_uint(items[i], 1u << 24, &a, &why) != 0 ||
        sim_parse_uint(gt + 1, 1u << 24, &b, &why) != 0) {
      return scn_fail(c, c->cur, "item %u: expected SRC>DST host indices",
                      i + 1);
    }
    s->pairs[i][0] = (uint32_t)a;
    s->pairs[i][1] = (uint32_t)b;
  }
  s->n_pairs = n;
  return 0;
}

static int do_workload(scn_cc *c) {
  sim_scn *s = c->s;

  if (KEY("type")) {
    static const char *const names[] = {"single",  "pairs",  "permutation",
                                        "shuffle", "incast", "random",
                                        "stream",  NULL};
    int i;
    c->at_wl = c->cur;
    for (i = 0; names[i]; ++i) {
      if (!strcmp(V, names[i])) {
        s->wl = i;
        return 0;
      }
    }
    return expect(c, "single, pairs, permutation, shuffle, incast, random "
                     "or stream");
  } else if (KEY("bytes")) {
    c->at_bytes = c->cur;
    return get_size(c, 0, 1ull << 50, &s->bytes);
  } else if (KEY("message")) {
    c->at_message = c->cur;
    return get_size(c, 1, 1ull << 30, &s->message);
  } else if (KEY("window")) {
    return get_uint(c, 1, 65536, &s->window);
  } else if (KEY("src")) {
    c->at_src = c->cur;
    return get_uint(c, 0, 1u << 24, &s->src);
  } else if (KEY("dst")) {
    c->at_dst = c->cur;
    s->dst_set = 1;
    return get_uint(c, 0, 1u << 24, &s->dst);
  } else if (KEY("pairs")) {
    return get_pairs(c);
  } else if (KEY("ranks")) {
    c->at_ranks = c->cur;
    return get_uint(c, 2, 1u << 16, &s->ranks);
  } else if (KEY("senders")) {
    c->at_senders = c->cur;
    return get_uint(c, 1, 1u << 16, &s->senders);
  } else if (KEY("receiver")) {
    c->at_receiver = c->cur;
    return get_uint(c, 0, 1u << 24, &s->receiver);
  } else if (KEY("rounds")) {
    return get_uint(c, 1, 1u << 20, &s->rounds);
  } else if (KEY("cdf")) {
    c->at_cdf = c->cur;
    if (V[0] == '\0' || strlen(V) >= SCN_PATH_MAX - 1) {
      return expect(c, "a file name");
    }
    if (V[0] == '/') {
      snprintf(s->cdf, sizeof(s->cdf), "%s", V);
    } else {
      int n = snprintf(s->cdf, sizeof(s->cdf), "%s/%s", c->r->dir, V);
      if (n < 0 || (size_t)n >= sizeof(s->cdf)) {
        return expect(c, "a shorter file name");
      }
    }
  } else if (KEY("load")) {
    /* A fraction or a percentage, as probabilities are written. */
    double x;
    const char *why;
    if (sim_parse_prob(V, &x, &why) != 0 || x <= 0) {
      return expect(c, "a load from 0 (excluded) to 1, of the hosts' link "
                       "capacity (e.g. 0.5 or 50%)");
    }
    s->load = x;
  } else if (KEY("flows")) {
    return get_uint(c, 1, 1u << 24, &s->flows);
  } else if (KEY("count")) {
    c->at_count = c->cur;
    return get_uint(c, 1, 1u << 24, &s->count);
  } else if (KEY("interval")) {
    return get_time(c, NETSIM_NS, &s->interval);
  } else if (KEY("rate")) {
    uint64_t r;
    if (get_rate(c, &r) != 0) {
      return -1;
    }
    /* Turned into an interval once the message size is known: keep the
       rate in |interval| with the top bit set. */
    s->interval = r | (1ull << 63);
  } else if (KEY("poisson")) {
    return get_bool(c, &s->poisson);
  } else if (KEY("start")) {
    return get_time(c, 0, &s->start);
  } else if (KEY("start_spread")) {
    if (get_time(c, 0, &s->start_spread) != 0) {
      return -1;
    }
    if (s->start_spread > NETSIM_S) {
      return expect(c, "a time from 0 to 1s");
    }
  } else if (KEY("rpc_min") || KEY("rpc_max")) {
    return get_size(c, 1, 1ull << 40,
                    KEY("rpc_min") ? &s->rpc_min : &s->rpc_max);
  } else {
    return unknown_key(c, "type, bytes, message, window, src, dst, pairs, "
                          "ranks, senders, receiver, rounds, cdf, load, "
                          "flows, count, interval, rate, poisson, start, "
                          "start_spread, rpc_min, rpc_max");
  }
  return 0;
}

/* parse_link reads a link name (docs/scenarios.md, "Naming links"). */
static int parse_link(const char *t, scn_linkref *l) {
  unsigned a, b, c2, d;
  int n = 0;

  memset(l, 0, sizeof(*l));
  snprintf(l->text, sizeof(l->text), "%s", t);
  if (sscanf(t, "host%u%n", &a, &n) == 1 && t[n] == '\0') {
    l->kind = 0;
    l->a = a;
  } else if (sscanf(t, "path%u%n", &a, &n) == 1 && t[n] == '\0') {
    l->kind = 1;
    l->a = a;
  } else if (sscanf(t, "leaf%u-spine%u%n", &a, &b, &n) == 2 && t[n] == '\0') {
    l->kind = 2;
    l->a = a;
    l->b = b;
  } else if (sscanf(t, "spine%u%n", &a, &n) == 1 && t[n] == '\0') {
    l->kind = 3;
    l->a = a;
  } else if (sscanf(t, "edge%u.%u-agg%u.%u%n", &a, &b, &c2, &d, &n) == 4 &&
             t[n] == '\0') {
    l->kind = 4;
    l->a = a;
    l->b = b;
    l->c = c2;
    l->d = d;
  } else if (sscanf(t, "agg%u.%u-core%u%n", &a, &b, &c2, &n) == 3 &&
             t[n] == '\0') {
    l->kind = 5;
    l->a = a;
    l->b = b;
    l->c = c2;
  } else if (sscanf(t, "core%u%n", &a, &n) == 1 && t[n] == '\0') {
    l->kind = 6;
    l->a = a;
  } else if (sscanf(t, "tcpflow%u%n", &a, &n) == 1 && t[n] == '\0') {
    l->kind = 7;
    l->a = a;
  } else {
    return -1;
  }
  return 0;
}

#define LINK_NAMES                                                             \
  "a link name (hostH, pathI, leafL-spineS, spineS, edgeP.E-aggP.A, "          \
  "aggP.A-coreC, coreC or tcpflowN)"

/* get_pcap reads the cables to capture: a comma list of links (an empty
   value is none, so that "--set scenario.pcap=" removes the file's). */
static int get_pcap(scn_cc *c) {
  char buf[1024], *items[SCN_MAX_PCAP + 1];
  uint32_t n, i;
  sim_scn *s = c->s;

  s->n_pcap = 0;
  s->pcap_line = c->cur->line;
  if (V[0] == '\0') {
    return 0;
  }
  if (strlen(V) >= sizeof(buf)) {
    return expect(c, "a shorter list");
  }
  snprintf(buf, sizeof(buf), "%s", V);
  n = scn_split_list(buf, items, SCN_MAX_PCAP + 1, ',');
  if (n > SCN_MAX_PCAP) {
    return scn_fail(c, c->cur, "too many links to capture (at most %d)",
                    SCN_MAX_PCAP);
  }
  for (i = 0; i < n; ++i) {
    if (parse_link(items[i], &s->pcap[i]) != 0) {
      return scn_fail(c, c->cur, "item %u ('%s'): expected %s", i + 1, items[i],
                      LINK_NAMES);
    }
  }
  s->n_pcap = n;
  return 0;
}

/* do_fault_list reads the current entry's comma list of faults of kind
   |op| into c->s->faults: LINK@TIME (down, up), LINK@TIME:RATE
   (degrade), LINK:PROBABILITY (link_loss), LINK:BER (link_ber) or
   LINK:PROBABILITY[:DELAY] (link_dup); an empty value is none (so that
   "--set faults.down=" removes the file's).  Returns 0, or -1 with the
   message naming the item. */
static int do_fault_list(scn_cc *c, int op) {
  char buf[2048], *items[SCN_MAX_FAULTS];
  uint32_t n, i;
  sim_scn *s = c->s;

  if (V[0] == '\0') {
    return 0;
  }
  if (strlen(V) >= sizeof(buf)) {
    return expect(c, "a shorter list");
  }
  snprintf(buf, sizeof(buf), "%s", V);
  n = scn_split_list(buf, items, SCN_MAX_FAULTS, ',');
  for (i = 0; i < n && i < SCN_MAX_FAULTS; ++i) {
    scn_fault *f;
    char *at, *colon = NULL;
    const char *why;
    if (s->n_faults == SCN_MAX_FAULTS) {
      return scn_fail(c, c->cur, "too many faults (at most %d)",
                      SCN_MAX_FAULTS);
    }
    f = &s->faults[s->n_faults];
    memset(f, 0, sizeof(*f));
    f->op = op;
    f->line = c->cur->line;
    if (op == SCN_FAULT_LOSS || op == SCN_FAULT_BER) {
      int ber = op == SCN_FAULT_BER;
      colon = strrchr(items[i], ':');
      if (colon == NULL) {
        return scn_fail(c, c->cur, "item %u ('%s'): expected LINK:%s", i + 1,
                        items[i], ber ? "BER" : "PROBABILITY");
      }
      *colon = '\0';
      if ((ber ? sim_parse_ber(colon + 1, &f->p, &why)
               : sim_parse_prob(colon + 1, &f->p, &why)) != 0) {
        return scn_fail(c, c->cur, "item %u: expected %s after ':'", i + 1,
                        why);
      }
      scn_trim(items[i]);
    } else if (op == SCN_FAULT_DUP) {
      /* LINK:PROBABILITY[:DELAY]; link names have no ':'. */
      char *second;
      colon = strchr(items[i], ':');
      if (colon == NULL) {
        return scn_fail(c, c->cur,
                        "item %u ('%s'): expected LINK:PROBABILITY[:DELAY]",
                        i + 1, items[i]);
      }
      *colon = '\0';
      second = strchr(colon + 1, ':');
      if (second != NULL) {
        *second = '\0';
        if (sim_parse_dup_delay(second + 1, &f->delay_ps, &why) != 0) {
          return scn_fail(c, c->cur,
                          "item %u: expected %s after the second ':'", i + 1,
                          why);
        }
        f->delay_set = 1;
      }
      if (sim_parse_prob(colon + 1, &f->p, &why) != 0) {
        return scn_fail(c, c->cur, "item %u: expected %s after ':'", i + 1,
                        why);
      }
      scn_trim(items[i]);
    } else {
      at = strchr(items[i], '@');
      if (at == NULL) {
        return scn_fail(c, c->cur, "item %u ('%s'): expected LINK@TIME%s",
                        i + 1, items[i],
                        op == SCN_FAULT_DEGRADE ? ":RATE" : "");
      }
      *at = '\0';
      if (op == SCN_FAULT_DEGRADE) {
        colon = strchr(at + 1, ':');
        if (colon == NULL) {
          return scn_fail(c, c->cur, "item %u: expected LINK@TIME:RATE", i + 1);
        }
        *colon = '\0';
        if (sim_parse_rate(colon + 1, &f->rate_bps, &why) != 0) {
          return scn_fail(c, c->cur, "item %u: expected %s after ':'", i + 1,
                          why);
        }
      }
      if (sim_parse_time(at + 1, &f->at_ps, &why) != 0) {
        return scn_fail(c, c->cur, "item %u: expected %s after '@'", i + 1,
                        why);
      }
      scn_trim(items[i]);
    }
    if (parse_link(items[i], &f->link) != 0) {
      return scn_fail(c, c->cur, "item %u ('%s'): expected %s", i + 1, items[i],
                      LINK_NAMES);
    }
    ++s->n_faults;
  }
  if (n > SCN_MAX_FAULTS) {
    return scn_fail(c, c->cur, "too many faults (at most %d)", SCN_MAX_FAULTS);
  }
  return 0;
}

static int do_faults(scn_cc *c) {
  sim_scn *s = c->s;

  if (KEY("down")) {
    return do_fault_list(c, SCN_FAULT_DOWN);
  } else if (KEY("up")) {
    return do_fault_list(c, SCN_FAULT_UP);
  } else if (KEY("degrade")) {
    return do_fault_list(c, SCN_FAULT_DEGRADE);
  } else if (KEY("link_loss")) {
    return do_fault_list(c, SCN_FAULT_LOSS);
  } else if (KEY("loss")) {
    return get_prob(c, &s->loss);
  } else if (KEY("loss_scope") || KEY("ber_scope") || KEY("dup_scope")) {
    int *scope = KEY("loss_scope")  ? &s->loss_scope
                 : KEY("ber_scope") ? &s->ber_scope
                                    : &s->dup_scope;
    if (!strcmp(V, "fabric")) {
      *scope = SCN_LOSS_FABRIC;
    } else if (!strcmp(V, "all")) {
      *scope = SCN_LOSS_ALL;
    } else {
      return expect(c, "fabric (switch-to-switch links) or all");
    }
  } else if (KEY("link_ber")) {
    return do_fault_list(c, SCN_FAULT_BER);
  } else if (KEY("ber")) {
    return get_ber(c, &s->ber);
  } else if (KEY("link_dup")) {
    return do_fault_list(c, SCN_FAULT_DUP);
  } else if (KEY("dup")) {
    return get_prob(c, &s->dup);
  } else if (KEY("dup_delay")) {
    return get_dup_delay(c, &s->dup_delay);
  } else {
    return unknown_key(c, "down, up, degrade, link_loss, loss, loss_scope, "
                          "link_ber, ber, ber_scope, link_dup, dup, "
                          "dup_delay, dup_scope");
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* [transport.NAME] sections, and the list of transports                    */

static int do_srd_key(scn_cc *c, scn_transport *t) {
  sim_srd_cfg *r = &t->srd;
  uint64_t x;
  uint32_t u;

  if (KEY("paths")) {
    return get_uint(c, 1, SRD_MAX_PATHS, &r->peer.n_paths);
  } else if (KEY("ordered")) {
    return get_bool(c, &r->peer.ordered);
  } else if (KEY("steering")) {
    return get_bool(c, &r->ep.path_steering);
  } else if (KEY("cc")) {
    const char *const *names = srd_cc_names();
    int i;
    for (i = 0; names[i]; ++i) {
      if (!strcmp(names[i], V)) {
        snprintf(t->cc_name, sizeof(t->cc_name), "%s", V);
        return 0;
      }
    }
    {
      char buf[160] = "one of the engine's controllers:";
      for (i = 0; names[i]; ++i) {
        strncat(buf, " ", sizeof(buf) - strlen(buf) - 1);
        strncat(buf, names[i], sizeof(buf) - strlen(buf) - 1);
      }
      return expect(c, buf);
    }
  } else if (KEY("mtu")) {
    if (get_size(c, 256, 65000, &x) != 0) {
      return -1;
    }
    r->ep.mtu = (uint32_t)x;
  } else if (KEY("target_rtt_pct")) {
    return get_uint(c, 0, 1000, &r->ep.cc_target_rtt_pct);
  } else if (KEY("target_hops")) {
    return get_uint(c, 0, 64, &r->ep.cc_target_hops);
  } else if (KEY("fs_max_window")) {
    return get_uint(c, 0, 65536, &r->ep.cc_fs_max_window);
  } else if (KEY("fs_range_pct")) {
    return get_uint(c, 0, 10000, &r->ep.cc_fs_range_pct);
  } else if (KEY("target_hop_qdelay") || KEY("target_min")) {
    if (get_time(c, NETSIM_NS, &x) != 0) {
      return -1;
    }
    if (KEY("target_min")) {
      r->ep.cc_target_min = x / NETSIM_NS;
    } else {
      r->ep.cc_target_hop_qdelay = x / NETSIM_NS;
    }
  } else if (KEY("rto_min") || KEY("rto_max") || KEY("rto_initial") ||
             KEY("target_qdelay") || KEY("ack_delay")) {
    if (get_time(c, KEY("ack_delay") ? 0 : NETSIM_NS, &x) != 0) {
      return -1;
    }
    x /= NETSIM_NS;
    if (KEY("rto_min")) {
      r->ep.rto_min = x;
    } else if (KEY("rto_max")) {
      r->ep.rto_max = x;
    } else if (KEY("rto_initial")) {
      r->ep.rto_initial = x;
    } else if (KEY("target_qdelay")) {
      r->ep.cc_target_qdelay = x;
    } else {
      r->ep.ack_delay = x;
    }
  } else if (KEY("init_window") || KEY("fixed_window") || KEY("unexp_bytes")) {
    if (get_size(c, KEY("unexp_bytes") ? 0 : 1, 1u << 30, &x) != 0) {
      return -1;
    }
    if (KEY("init_window")) {
      r->ep.cc_init_window = (uint32_t)x;
    } else if (KEY("fixed_window")) {
      r->ep.cc_fixed_window = (uint32_t)x;
    } else {
      r->ep.unexp_bytes = (uint32_t)x;
    }
  } else if (KEY("pkt_window") || KEY("msg_window")) {
    if (get_uint(c, KEY("pkt_window") ? 16 : 1,
                 KEY("pkt_window") ? 32768 : 65536, &u) != 0) {
      return -1;
    }
    if (u & (u - 1)) {
      return expect(c, "a power of two");
    }
    if (KEY("pkt_window")) {
      r->ep.pkt_window = u;
    } else {
      r->ep.msg_window = u;
    }
  } else if (KEY("ack_freq")) {
    return get_uint(c, 1, 1024, &r->ep.ack_freq);
  } else if (KEY("max_retries")) {
    return get_uint(c, 0, 250, &r->ep.max_retries);
  } else if (KEY("recv_depth")) {
    return get_uint(c, 1, 1u << 16, &r->recv_depth);
  } else if (KEY("unexp_msgs")) {
    return get_uint(c, 0, 1u << 16, &r->ep.unexp_msgs);
  } else if (KEY("max_sends")) {
    return get_uint(c, 1, 65000, &r->ep.max_sends);
  } else {
    return unknown_key(c,
                       "type, paths, ordered, steering, cc, mtu, rto_min, "
                       "rto_max, rto_initial, target_qdelay, target_rtt_pct, "
                       "target_hops, target_hop_qdelay, target_min, "
                       "fs_max_window, fs_range_pct, ack_delay, "
                       "ack_freq, init_window, fixed_window, pkt_window, "
                       "msg_window, max_retries, recv_depth, unexp_msgs, "
                       "unexp_bytes, max_sends");
  }
  return 0;
}

static int do_tcp_key(scn_cc *c, scn_transport *t) {
  sim_tcp_cfg *p = &t->tcp;
  uint64_t x;

  if (KEY("mss")) {
    if (get_size(c, 64, 65000, &x) != 0) {
      return -1;
    }
    p->mss = (uint32_t)x;
  } else if (KEY("init_cwnd")) {
    return get_uint(c, 1, 1000, &p->init_cwnd);
  } else if (KEY("rwnd")) {
    return get_size(c, 1024, 1ull << 32, &p->rwnd);
  } else if (KEY("rto_min")) {
    return get_time(c, NETSIM_US, &p->rto_min);
  } else if (KEY("rto_initial")) {
    return get_time(c, NETSIM_US, &p->rto_initial);
  } else if (KEY("rto_max")) {
    return get_time(c, NETSIM_US, &p->rto_max);
  } else if (KEY("timer_slack")) {
    return get_time(c, 0, &p->timer_slack);
  } else if (KEY("delack")) {
    return get_time(c, NETSIM_US, &p->delack);
  } else if (KEY("cc")) {
    if (!strcmp(V, "cubic")) {
      p->cc = SIM_TCP_CC_CUBIC;
    } else if (!strcmp(V, "reno") || !strcmp(V, "newreno")) {
      p->cc = SIM_TCP_CC_RENO;
    } else if (!strcmp(V, "dctcp")) {
      p->cc = SIM_TCP_CC_DCTCP;
      p->ecn = 1;
    } else {
      return expect(c, "cubic, reno (NewReno) or dctcp");
    }
  } else if (KEY("ecn")) {
    return get_bool(c, &p->ecn);
  } else if (KEY("sack")) {
    return get_bool(c, &p->sack);
  } else if (KEY("rack")) {
    return get_bool(c, &p->rack);
  } else if (KEY("tlp")) {
    return get_bool(c, &p->tlp);
  } else if (KEY("delayed_ack")) {
    return get_bool(c, &p->delayed_ack);
  } else if (KEY("handshake")) {
    return get_bool(c, &p->handshake);
  } else if (KEY("quickack")) {
    return get_uint(c, 0, 1u << 20, &p->quickack);
  } else if (KEY("dupthresh")) {
    return get_uint(c, 1, 1000, &p->dupthresh);
  } else if (KEY("dctcp_g")) {
    double g;
    if (scn_parse_num(V, &g) != 0 || g <= 0 || g > 1) {
      return expect(c, "a gain from 0 (excluded) to 1, e.g. 0.0625");
    }
    p->dctcp_g = g;
  } else {
    return unknown_key(c, "type, mss, init_cwnd, rwnd, rto_min, rto_initial, "
                          "rto_max, timer_slack, cc, ecn, sack, rack, tlp, "
                          "dupthresh, delayed_ack, delack, quickack, "
                          "handshake, dctcp_g");
  }
  return 0;
}

/* do_tos_key reads a key of TCP over SRD: queue, srd_KEY (the SRD
   layer's KEY, as do_srd_key reads it) or a TCP key. */
static int do_tos_key(scn_cc *c, scn_transport *t) {
  if (KEY("queue")) {
    return get_uint(c, 1, 65000, &t->tos_queue);
  }
  if (!strncmp(c->cur->key, "srd_", 4)) {
    scn_entry e = *c->cur;
    const scn_entry *at = c->cur;
    int rv;
    if (!strcmp(e.key + 4, "ordered")) {
      return expect(c, "no srd_ordered: TCP over SRD is always ordered");
    }
    e.key += 4;
    c->cur = &e;
    rv = do_srd_key(c, t);
    c->cur = at;
    if (rv != 0 && !c->nomem) {
      /* The message names the key as it was written (srd_KEY). */
      static const char *const pre[3] = {"] ", ".", "'"};
      static const char *const post[3] = {" = ", "=", "'"};
      int i;
      for (i = 0; i < 3; ++i) {
        char want[SCN_NAME_MAX * 2 + 8], *p;
        snprintf(want, sizeof(want), "%s%s%s", pre[i], e.key, post[i]);
        p = strstr(c->err, want);
        if (p != NULL && strlen(c->err) + 5 < c->errlen) {
          p += strlen(pre[i]);
          memmove(p + 4, p, strlen(p) + 1);
          memcpy(p, "srd_", 4);
        }
      }
      if (strstr(c->err, ": unknown key '") != NULL &&
          strlen(c->err) + 24 < c->errlen) {
        strcat(c->err, " (each with srd_)");
      }
    }
    return rv;
  }
  if (do_tcp_key(c, t) != 0) {
    if (strstr(c->err, ": unknown key '") != NULL) {
      size_t n = strlen(c->err);
      snprintf(c->err + n, c->errlen > n ? c->errlen - n : 0,
               "; or queue, or srd_KEY for an SRD key");
    }
    return -1;
  }
  return 0;
}

/* scn_defaults sets |s| to the defaults docs/scenarios.md lists. */
static void scn_defaults(sim_scn *s) {
  memset(s, 0, sizeof(*s));
  snprintf(s->name, sizeof(s->name), "scenario");
  s->seed = 1;
  s->duration = 10 * NETSIM_MS;
  s->pkts_per_host = 512;
  s->topo = SCN_TOPO_LEAFSPINE;
  s->k = 4;
  s->spines = 4;
  s->leaves = 2;
  s->hosts_per_leaf = 4;
  s->paths = 4;
  s->hosts_per_side = 1;
  s->host_rate = NETSIM_GBPS(100);
  s->delay = 1 * NETSIM_US;
  s->queue = 200000;
  s->nic_queue = 1u << 20;
  s->oversub = 1;
  s->reconverge = 10 * NETSIM_MS;
  /* A datacenter host's timing noise (docs/scenarios.md, "Timing
     noise"). */
  s->send_jitter = 100 * NETSIM_NS;
  s->start_spread = 1 * NETSIM_US;
  s->wl = SCN_WL_SINGLE;
  s->message = 256 * 1024;
  s->window = 4;
  s->rounds = 1;
  s->load = 0.5;
  s->count = 1000;
  s->loss_scope = SCN_LOSS_FABRIC;
  s->ber_scope = SCN_LOSS_ALL;
  s->dup_scope = SCN_LOSS_ALL;
}

/* The transports list, and every [transport.NAME] section. */
static int do_transports(scn_cc *c) {
  sim_scn *s = c->s;
  size_t i;
  char buf[1024], *items[SCN_MAX_TRANSPORTS + 1];
  uint32_t n, j;
  const char *list = "srd, tcp";
  const scn_entry *at = c->at_transports;

  if (at != NULL) {
    list = at->value;
  }
  snprintf(buf, sizeof(buf), "%s", list);
  n = scn_split_list(buf, items, SCN_MAX_TRANSPORTS + 1, ',');
  c->cur = at;
  if (n > SCN_MAX_TRANSPORTS) {
    return scn_fail(c, at, "expected at most %d transports",
                    SCN_MAX_TRANSPORTS);
  }
  for (j = 0; j < n; ++j) {
    int type = -1;
    if (!sim_scn_valid_name(items[j])) {
      return scn_fail(c, at, "item %u ('%s'): expected a transport name", j + 1,
                      items[j]);
    }
    if (find_tr(s, items[j])) {
      return scn_fail(c, at, "'%s' is listed twice", items[j]);
    }
    if (is_builtin(items[j])) {
      type = builtin_type(items[j]);
    }
    /* A section may set (or change) the type. */
    for (i = 0; i < c->r->n; ++i) {
      const scn_entry *e = &c->r->e[i];
      if (!strncmp(e->section, "transport.", 10) &&
          !strcmp(e->section + 10, items[j]) && !strcmp(e->key, "type")) {
        if (!strcmp(e->value, "srd")) {
          type = SCN_XPORT_SRD;
        } else if (!strcmp(e->value, "tcp")) {
          type = SCN_XPORT_TCP;
        } else if (!strcmp(e->value, "tcp-over-srd")) {
          type = SCN_XPORT_TOS;
        } else {
          c->cur = e;
          return expect(c, "srd, tcp or tcp-over-srd");
        }
      }
    }
    if (type < 0) {
      return scn_fail(
          c, at,
          "'%s' is neither a built-in transport (srd, srd-ordered, "
          "srd-blind, srd-1path, tcp, tcp-tuned, dctcp, dctcp-tuned, "
          "tcp-over-srd) "
          "nor defined by a [transport.%s] section with a type",
          items[j], items[j]);
    }
    transport_defaults(&s->tr[s->n_tr], items[j], type, s->seed);
    s->tr[s->n_tr].type = type;
    ++s->n_tr;
  }
  if (s->n_tr == 0) {
    return scn_fail(c, at, "expected at least one transport");
  }
  for (i = 0; i < c->r->n; ++i) {
    const scn_entry *e = &c->r->e[i];
    scn_transport *t;
    int rv;
    if (strncmp(e->section, "transport.", 10) != 0) {
      continue;
    }
    c->cur = e;
    t = find_tr(s, e->section + 10);
    if (t == NULL) {
      if (!sim_scn_valid_name(e->section + 10)) {
        return scn_fail(c, e, "expected a section name transport.NAME");
      }
      continue; /* defined but not listed: not run, still checked below */
    }
    if (!strcmp(e->key, "type")) {
      continue;
    }
    rv = t->type == SCN_XPORT_SRD   ? do_srd_key(c, t)
         : t->type == SCN_XPORT_TOS ? do_tos_key(c, t)
                                    : do_tcp_key(c, t);
    if (rv != 0) {
      return rv;
    }
  }
  for (j = 0; j < s->n_tr; ++j) {
    s->tr[j].srd.ep.cc = s->tr[j].cc_name;
    s->tr[j].srd.seed = s->seed;
    s->tr[j].tcp.seed = s->seed;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The compiler                                                             */

int sim_scn_compile(const scn_raw *r, sim_scn *s, char *err, size_t errlen) {
  scn_cc c;
  size_t i;
  int rv = 0;

  memset(&c, 0, sizeof(c));
  c.s = s;
  c.r = r;
  c.err = err;
  c.errlen = errlen;
  scn_defaults(s);
  snprintf(s->file, sizeof(s->file), "%s", r->file);
  for (i = 0; i < r->n && rv == 0; ++i) {
    const char *sec = r->e[i].section;
    c.cur = &r->e[i];
    if (!strcmp(sec, "scenario")) {
      rv = do_scenario(&c);
    } else if (!strcmp(sec, "topology")) {
      rv = do_topology(&c);
    } else if (!strcmp(sec, "workload")) {
      rv = do_workload(&c);
    } else if (!strcmp(sec, "faults")) {
      rv = do_faults(&c);
    } else if (!strncmp(sec, "transport.", 10)) {
      /* After the list of transports is known. */
    } else {
      rv = scn_fail(&c, c.cur,
                    "unknown section [%s]; expected [scenario], [topology], "
                    "[workload], [faults] or [transport.NAME]",
                    sec);
    }
  }
  if (rv == 0) {
    rv = do_transports(&c);
  }
  if (rv == 0) {
    rv = scn_check(&c);
  }
  if (rv == 0) {
    rv = scn_sweep(&c);
  }
  if (rv != 0) {
    sim_scn_fini(s);
    return c.nomem ? SIM_SCN_NOMEM : -1;
  }
  return 0;
}

int sim_scn_has_ber(const sim_scn *s) {
  uint32_t i;

  if (s->ber > 0) {
    return 1;
  }
  for (i = 0; i < s->n_faults; ++i) {
    if (s->faults[i].op == SCN_FAULT_BER && s->faults[i].p > 0) {
      return 1;
    }
  }
  return 0;
}

int sim_scn_has_dup(const sim_scn *s) {
  uint32_t i;

  if (s->dup > 0) {
    return 1;
  }
  for (i = 0; i < s->n_faults; ++i) {
    if (s->faults[i].op == SCN_FAULT_DUP && s->faults[i].p > 0) {
      return 1;
    }
  }
  return 0;
}

void sim_scn_fini(sim_scn *s) {
  uint32_t i, j;

  for (i = 0; i < SCN_MAX_SWEEP_KEYS; ++i) {
    for (j = 0; j < SCN_MAX_SWEEP_POINTS; ++j) {
      free(s->sweep_val[i][j]);
      s->sweep_val[i][j] = NULL;
    }
  }
  s->n_sweep_keys = s->n_sweep_points = 0;
}
