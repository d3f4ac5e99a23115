/*
 * sim_scn.c: scenario files: reading (libinih), values with units, and
 * compiling the entries into a sim_scn with errors that name the file,
 * the line, the key and what was expected.  docs/scenarios.md documents
 * every key this file accepts.
 */
#include "sim_scn.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

/* ------------------------------------------------------------------------ */
/* Raw entries                                                              */

void sim_scn_raw_init(scn_raw *r) {
  memset(r, 0, sizeof(*r));
}

void sim_scn_raw_fini(scn_raw *r) {
  size_t i;

  for (i = 0; i < r->n; ++i) {
    free(r->e[i].section);
    free(r->e[i].key);
    free(r->e[i].value);
  }
  free(r->e);
  memset(r, 0, sizeof(*r));
}

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);

  if (d) {
    memcpy(d, s, n);
  }
  return d;
}

static int raw_add(scn_raw *r, const char *sec, const char *key,
                   const char *val, const char *src, int line) {
  scn_entry *e;

  if (r->n == r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 32;
    scn_entry *n = realloc(r->e, ncap * sizeof(*n));
    if (n == NULL) {
      return -1;
    }
    r->e = n;
    r->cap = ncap;
  }
  e = &r->e[r->n];
  e->section = xstrdup(sec);
  e->key = xstrdup(key);
  e->value = xstrdup(val);
  e->src = src;
  e->line = line;
  if (!e->section || !e->key || !e->value) {
    free(e->section);
    free(e->key);
    free(e->value);
    return -1;
  }
  ++r->n;
  return 0;
}

/* The reader counts lines, so that every entry knows its line, and
   refuses lines longer than libinih's buffer instead of letting it split
   them. */
typedef struct rd {
  FILE *f;
  const char *buf;
  size_t len, pos;
  int line;
  int long_line;
  scn_raw *r;
  int oom;
} rd;

static int rd_getc(rd *s) {
  if (s->f) {
    return fgetc(s->f);
  }
  if (s->pos >= s->len) {
    return EOF;
  }
  return (unsigned char)s->buf[s->pos++];
}

static char *reader(char *str, int num, void *stream) {
  rd *s = stream;
  int n = 0, ch = EOF;

  if (num < 2) {
    return NULL;
  }
  while (n < num - 1) {
    ch = rd_getc(s);
    if (ch == EOF) {
      break;
    }
    if (ch == '\0') {
      ch = ' '; /* a NUL would end the line early */
    }
    str[n++] = (char)ch;
    if (ch == '\n') {
      break;
    }
  }
  if (n == 0 && ch == EOF) {
    return NULL;
  }
  ++s->line;
  if (n == num - 1 && str[n - 1] != '\n') {
    /* Too long: swallow the rest and hand libinih a blank line. */
    int c2;
    do {
      c2 = rd_getc(s);
    } while (c2 != EOF && c2 != '\n');
    if (s->long_line == 0) {
      s->long_line = s->line;
    }
    str[0] = '\n';
    n = 1;
  }
  str[n] = '\0';
  return str;
}

static int handler(void *user, const char *section, const char *name,
                   const char *value) {
  rd *s = user;

  if (raw_add(s->r, section, name, value, s->r->file, s->line) != 0) {
    s->oom = 1;
    return 0;
  }
  return 1;
}

static void set_dir(scn_raw *r, const char *path) {
  const char *slash = strrchr(path, '/');

  snprintf(r->file, sizeof(r->file), "%s", path);
  if (slash == NULL) {
    snprintf(r->dir, sizeof(r->dir), ".");
  } else {
    size_t n = (size_t)(slash - path);
    if (n >= sizeof(r->dir)) {
      n = sizeof(r->dir) - 1;
    }
    memcpy(r->dir, path, n);
    r->dir[n] = '\0';
    if (n == 0) {
      snprintf(r->dir, sizeof(r->dir), "/");
    }
  }
}

static int parse_stream(scn_raw *r, rd *s, char *err, size_t errlen) {
  int rv;

  s->r = r;
  rv = ini_parse_stream(reader, s, handler, s);
  if (s->oom) {
    snprintf(err, errlen, "%s: out of memory", r->file);
    return -1;
  }
  if (s->long_line && (rv <= 0 || s->long_line <= rv)) {
    snprintf(err, errlen,
             "%s:%d: line too long: expected at most %d characters per line",
             r->file, s->long_line, 198);
    return -1;
  }
  if (rv > 0) {
    snprintf(err, errlen,
             "%s:%d: syntax error: expected '[section]', 'key = value', or "
             "a comment starting with ';' or '#'",
             r->file, rv);
    return -1;
  }
  if (rv < 0) {
    snprintf(err, errlen, "%s: cannot read", r->file);
    return -1;
  }
  return 0;
}

int sim_scn_load(scn_raw *r, const char *path, char *err, size_t errlen) {
  rd s;
  int rv;

  memset(&s, 0, sizeof(s));
  set_dir(r, path);
  s.f = fopen(path, "r");
  if (s.f == NULL) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  rv = parse_stream(r, &s, err, errlen);
  fclose(s.f);
  return rv;
}

int sim_scn_load_string(scn_raw *r, const char *name, const char *text,
                        size_t len, char *err, size_t errlen) {
  rd s;

  memset(&s, 0, sizeof(s));
  set_dir(r, name);
  s.buf = text;
  s.len = len;
  return parse_stream(r, &s, err, errlen);
}

static void trim(char *s) {
  size_t n = strlen(s), i = 0;

  while (n > 0 && isspace((unsigned char)s[n - 1])) {
    s[--n] = '\0';
  }
  while (s[i] && isspace((unsigned char)s[i])) {
    ++i;
  }
  memmove(s, s + i, n - i + 1);
}

int sim_scn_set(scn_raw *r, const char *a, const char *src, int line, char *err,
                size_t errlen) {
  char buf[512], *eq, *dot;

  if (strlen(a) >= sizeof(buf)) {
    snprintf(err, errlen, "%s %.40s...: too long", src, a);
    return -1;
  }
  snprintf(buf, sizeof(buf), "%s", a);
  eq = strchr(buf, '=');
  if (eq == NULL) {
    snprintf(err, errlen, "%s %s: expected section.key=value", src, a);
    return -1;
  }
  *eq = '\0';
  dot = strrchr(buf, '.');
  if (dot == NULL || dot == buf || dot[1] == '\0') {
    snprintf(err, errlen, "%s %s: expected section.key=value", src, a);
    return -1;
  }
  *dot = '\0';
  trim(buf);
  trim(dot + 1);
  trim(eq + 1);
  if (raw_add(r, buf, dot + 1, eq + 1, src, line) != 0) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

static int parse_num(const char *v, double *x, const char **rest) {
  char *end;

  errno = 0;
  while (isspace((unsigned char)*v)) {
    ++v;
  }
  if (*v == '\0' || *v == '-' || *v == '+') {
    return -1;
  }
  *x = strtod(v, &end);
  if (end == v || errno == ERANGE || !isfinite(*x) || *x < 0) {
    return -1;
  }
  while (isspace((unsigned char)*end)) {
    ++end;
  }
  *rest = end;
  return 0;
}

static int suffix_is(const char *s, const char *w) {
  size_t n = strlen(w);

  if (strncasecmp(s, w, n) != 0) {
    return 0;
  }
  s += n;
  while (isspace((unsigned char)*s)) {
    ++s;
  }
  return *s == '\0';
}

int sim_parse_uint(const char *v, uint64_t max, uint64_t *out,
                   const char **why) {
  char *end;
  unsigned long long x;

  *why = "a whole number";
  while (isspace((unsigned char)*v)) {
    ++v;
  }
  if (!isdigit((unsigned char)*v)) {
    return -1;
  }
  errno = 0;
  x = strtoull(v, &end, 10);
  while (isspace((unsigned char)*end)) {
    ++end;
  }
  if (errno == ERANGE || *end != '\0') {
    return -1;
  }
  if (x > max) {
    static char buf[64];
    snprintf(buf, sizeof(buf), "a whole number up to %llu",
             (unsigned long long)max);
    *why = buf;
    return -1;
  }
  *out = x;
  return 0;
}

int sim_parse_size(const char *v, uint64_t *out, const char **why) {
  double x, mul = 1;
  const char *r;

  *why = "a size in bytes, e.g. 9000, 64K, 1M or 2G (K = 1024; "
         "kB/MB/GB = 1000s)";
  if (parse_num(v, &x, &r) != 0) {
    return -1;
  }
  if (*r == '\0' || suffix_is(r, "B")) {
    mul = 1;
  } else if (suffix_is(r, "K") || suffix_is(r, "KiB")) {
    mul = 1024;
  } else if (suffix_is(r, "M") || suffix_is(r, "MiB")) {
    mul = 1048576;
  } else if (suffix_is(r, "G") || suffix_is(r, "GiB")) {
    mul = 1073741824.0;
  } else if (suffix_is(r, "kB") || suffix_is(r, "KB")) {
    mul = 1e3;
  } else if (suffix_is(r, "MB")) {
    mul = 1e6;
  } else if (suffix_is(r, "GB")) {
    mul = 1e9;
  } else {
    return -1;
  }
  x *= mul;
  if (x > 1e15 || x != floor(x)) {
    return -1;
  }
  *out = (uint64_t)x;
  return 0;
}

int sim_parse_rate(const char *v, uint64_t *out, const char **why) {
  double x, mul;
  const char *r;

  *why = "a rate, e.g. 100G, 25Gbps, 500M or 800Mbps (bits per second)";
  if (parse_num(v, &x, &r) != 0) {
    return -1;
  }
  if (suffix_is(r, "T") || suffix_is(r, "Tbps")) {
    mul = 1e12;
  } else if (suffix_is(r, "G") || suffix_is(r, "Gbps") ||
             suffix_is(r, "Gb/s")) {
    mul = 1e9;
  } else if (suffix_is(r, "M") || suffix_is(r, "Mbps") ||
             suffix_is(r, "Mb/s")) {
    mul = 1e6;
  } else if (suffix_is(r, "K") || suffix_is(r, "Kbps") ||
             suffix_is(r, "kbps")) {
    mul = 1e3;
  } else if (suffix_is(r, "bps")) {
    mul = 1;
  } else {
    return -1;
  }
  x *= mul;
  if (x < 1000 || x > 1.8e13) {
    *why = "a rate between 1 Kbps and 18 Tbps";
    return -1;
  }
  *out = (uint64_t)llround(x);
  return 0;
}

int sim_parse_time(const char *v, uint64_t *out, const char **why) {
  double x, mul;
  const char *r;

  *why = "a time with a unit, e.g. 500ns, 10us, 200ms or 2s";
  if (parse_num(v, &x, &r) != 0) {
    return -1;
  }
  if (*r == '\0' && x == 0) {
    *out = 0;
    return 0;
  }
  if (suffix_is(r, "ps")) {
    mul = 1;
  } else if (suffix_is(r, "ns")) {
    mul = 1e3;
  } else if (suffix_is(r, "us")) {
    mul = 1e6;
  } else if (suffix_is(r, "ms")) {
    mul = 1e9;
  } else if (suffix_is(r, "s")) {
    mul = 1e12;
  } else {
    return -1;
  }
  x *= mul;
  if (x > 1e17) {
    *why = "a time up to 100000 s";
    return -1;
  }
  *out = (uint64_t)llround(x);
  return 0;
}

int sim_parse_prob(const char *v, double *out, const char **why) {
  double x;
  const char *r;

  *why = "a probability, 0 to 1 (e.g. 0.001) or a percentage (0.1%)";
  if (parse_num(v, &x, &r) != 0) {
    return -1;
  }
  if (*r == '%') {
    x /= 100;
    ++r;
    while (isspace((unsigned char)*r)) {
      ++r;
    }
  }
  if (*r != '\0' || x > 1) {
    return -1;
  }
  *out = x;
  return 0;
}

int sim_parse_ber(const char *v, double *out, const char **why) {
  double x;
  const char *r;

  *why = "a bit-error rate from 0 to 1, errors per bit, e.g. 1e-6";
  if (parse_num(v, &x, &r) != 0 || *r != '\0' || x > 1) {
    return -1;
  }
  *out = x;
  return 0;
}

int sim_parse_dup_delay(const char *v, uint64_t *out_ps, const char **why) {
  uint64_t t;

  if (sim_parse_time(v, &t, why) != 0 || t > 1000 * NETSIM_S) {
    *why = "a delay from 0 to 1000s, e.g. 0, 50us or 300ms";
    return -1;
  }
  *out_ps = t;
  return 0;
}

static int parse_bool(const char *v, int *out, const char **why) {
  *why = "a boolean (0/1, yes/no, on/off, true/false)";
  if (!strcasecmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") ||
      !strcasecmp(v, "true")) {
    *out = 1;
    return 0;
  }
  if (!strcasecmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") ||
      !strcasecmp(v, "false")) {
    *out = 0;
    return 0;
  }
  return -1;
}

void sim_fmt_time(uint64_t ps, char *buf, size_t len) {
  if (ps >= NETSIM_S && ps % (NETSIM_S / 1000) == 0) {
    snprintf(buf, len, "%g s", (double)ps / 1e12);
  } else if (ps >= NETSIM_MS) {
    snprintf(buf, len, "%g ms", (double)ps / 1e9);
  } else if (ps >= NETSIM_US) {
    snprintf(buf, len, "%g us", (double)ps / 1e6);
  } else {
    snprintf(buf, len, "%g ns", (double)ps / 1e3);
  }
}

/* ------------------------------------------------------------------------ */
/* Compiling                                                                */

typedef struct cc {
  sim_scn *s;
  const scn_raw *r;
  char *err;
  size_t errlen;
  const scn_entry *cur;
  /* Lines of keys checked after all entries are read. */
  const scn_entry *at_transports, *at_src, *at_dst, *at_pairs, *at_ranks,
      *at_senders, *at_receiver, *at_cdf, *at_topo, *at_wl, *at_lanes,
      *at_sweep, *at_k, *at_bytes, *at_count, *at_message;
} cc;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(cc *c, const scn_entry *e, const char *fmt, ...) {
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

static int expect(cc *c, const char *why) {
  return fail(c, c->cur, "expected %s", why);
}

#define V (c->cur->value)

static int get_u64(cc *c, uint64_t lo, uint64_t hi, uint64_t *out) {
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
static int get_uint(cc *c, uint64_t lo, uint64_t hi, uint32_t *out) {
  uint64_t x;

  if (get_u64(c, lo, hi, &x) != 0) {
    return -1;
  }
  *out = (uint32_t)x;
  return 0;
}

static int get_size(cc *c, uint64_t lo, uint64_t hi, uint64_t *out) {
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

static int get_rate(cc *c, uint64_t *out) {
  const char *why;

  if (sim_parse_rate(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_time(cc *c, uint64_t lo, uint64_t *out) {
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

static int get_bool(cc *c, int *out) {
  const char *why;

  if (parse_bool(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_prob(cc *c, double *out) {
  const char *why;

  if (sim_parse_prob(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_dup_delay(cc *c, uint64_t *out) {
  const char *why;

  if (sim_parse_dup_delay(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

static int get_ber(cc *c, double *out) {
  const char *why;

  if (sim_parse_ber(V, out, &why) != 0) {
    return expect(c, why);
  }
  return 0;
}

/* Splits a comma list into |items| (pointers into |buf|). */
static uint32_t split_list(char *buf, char **items, uint32_t max, char sep) {
  uint32_t n = 0;
  char *p = buf;

  for (;;) {
    char *q = strchr(p, sep);
    if (q) {
      *q = '\0';
    }
    trim(p);
    if (n < max) {
      items[n] = p;
    }
    ++n;
    if (q == NULL) {
      break;
    }
    p = q + 1;
  }
  return n;
}

static int unknown_key(cc *c, const char *keys) {
  return fail(c, c->cur, "unknown key '%s' in [%s]; expected one of: %s",
              c->cur->key, c->cur->section, keys);
}

#define KEY(name) (strcmp(c->cur->key, (name)) == 0)

static const char *const builtin_names[] = {
    "srd",       "srd-ordered", "srd-blind",   "srd-1path", "tcp",
    "tcp-tuned", "dctcp",       "dctcp-tuned", NULL};

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

static int builtin_type(const char *name) {
  if (!strncmp(name, "srd", 3)) {
    return SCN_XPORT_SRD;
  }
  return SCN_XPORT_TCP;
}

static int is_builtin(const char *name) {
  int i;

  for (i = 0; builtin_names[i]; ++i) {
    if (!strcmp(builtin_names[i], name)) {
      return 1;
    }
  }
  return 0;
}

static scn_transport *find_tr(sim_scn *s, const char *name) {
  uint32_t i;

  for (i = 0; i < s->n_tr; ++i) {
    if (!strcmp(s->tr[i].name, name)) {
      return &s->tr[i];
    }
  }
  return NULL;
}

static int valid_name(const char *n) {
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

static int do_scenario(cc *c) {
  sim_scn *s = c->s;

  if (KEY("name")) {
    if (!valid_name(V)) {
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
  } else {
    return unknown_key(c, "name, description, seed, transports, duration, "
                          "warmup, sample, capacity, pkts_per_host, sweep");
  }
  return 0;
}

static int get_lanes(cc *c) {
  char buf[1024], *items[SCN_MAX_LANES];
  uint32_t n, i;
  sim_scn *s = c->s;

  snprintf(buf, sizeof(buf), "%s", V);
  n = split_list(buf, items, SCN_MAX_LANES, ',');
  if (n > SCN_MAX_LANES) {
    return expect(c, "at most 64 rates, separated by commas");
  }
  for (i = 0; i < n; ++i) {
    const char *why;
    if (sim_parse_rate(items[i], &s->lane_rate[i], &why) != 0) {
      return fail(c, c->cur, "item %u ('%s'): expected %s", i + 1, items[i],
                  why);
    }
  }
  s->n_lanes = n;
  c->at_lanes = c->cur;
  return 0;
}

static int do_topology(cc *c) {
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
    const char *r;
    if (parse_num(V, &x, &r) != 0 || *r || x < 0.01 || x > 1000) {
      return expect(c, "an oversubscription ratio from 0.01 to 1000 "
                       "(1 = none)");
    }
    s->oversub = x;
  } else if (KEY("spine_rates") || KEY("path_rates")) {
    return get_lanes(c);
  } else if (KEY("reconverge")) {
    return get_time(c, 0, &s->reconverge);
  } else {
    return unknown_key(c, "type, k, spines, leaves, hosts_per_leaf, paths, "
                          "hosts_per_side, rate, fabric_rate, delay, queue, "
                          "nic_queue, ecn, oversub, spine_rates, path_rates, "
                          "reconverge");
  }
  return 0;
}

static int get_pairs(cc *c) {
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
  n = split_list(buf, items, SCN_MAX_PAIRS, ',');
  if (n > SCN_MAX_PAIRS) {
    return expect(c, "at most 256 pairs");
  }
  for (i = 0; i < n; ++i) {
    char *gt = strchr(items[i], '>');
    uint64_t a, b;
    const char *why;
    if (gt == NULL) {
      return fail(c, c->cur,
                  "item %u ('%s'): expected SRC>DST host indices, or "
                  "'leaves'",
                  i + 1, items[i]);
    }
    *gt = '\0';
    trim(items[i]);
    trim(gt + 1);
    if (sim_parse_uint(items[i], 1u << 24, &a, &why) != 0 ||
        sim_parse_uint(gt + 1, 1u << 24, &b, &why) != 0) {
      return fail(c, c->cur, "item %u: expected SRC>DST host indices", i + 1);
    }
    s->pairs[i][0] = (uint32_t)a;
    s->pairs[i][1] = (uint32_t)b;
  }
  s->n_pairs = n;
  return 0;
}

static int do_workload(cc *c) {
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
    double x;
    const char *r;
    if (parse_num(V, &x, &r) != 0 || x <= 0 || x > 1) {
      return expect(c, "a load from 0 (excluded) to 1, of the hosts' link "
                       "capacity (e.g. 0.5 or 50%)");
    }
    if (*r == '%') {
      x /= 100;
      ++r;
    }
    if (*r) {
      return expect(c, "a load from 0 to 1 (e.g. 0.5 or 50%)");
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
  } else {
    return unknown_key(c, "type, bytes, message, window, src, dst, pairs, "
                          "ranks, senders, receiver, rounds, cdf, load, "
                          "flows, count, interval, rate, poisson, start");
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

static int do_fault_list(cc *c, int op) {
  char buf[2048], *items[SCN_MAX_FAULTS];
  uint32_t n, i;
  sim_scn *s = c->s;

  if (strlen(V) >= sizeof(buf)) {
    return expect(c, "a shorter list");
  }
  snprintf(buf, sizeof(buf), "%s", V);
  n = split_list(buf, items, SCN_MAX_FAULTS, ',');
  for (i = 0; i < n && i < SCN_MAX_FAULTS; ++i) {
    scn_fault *f;
    char *at, *colon = NULL;
    const char *why;
    if (s->n_faults == SCN_MAX_FAULTS) {
      return fail(c, c->cur, "too many faults (at most %d)", SCN_MAX_FAULTS);
    }
    f = &s->faults[s->n_faults];
    memset(f, 0, sizeof(*f));
    f->op = op;
    f->line = c->cur->line;
    if (op == SCN_FAULT_LOSS || op == SCN_FAULT_BER) {
      int ber = op == SCN_FAULT_BER;
      colon = strrchr(items[i], ':');
      if (colon == NULL) {
        return fail(c, c->cur, "item %u ('%s'): expected LINK:%s", i + 1,
                    items[i], ber ? "BER" : "PROBABILITY");
      }
      *colon = '\0';
      if ((ber ? sim_parse_ber(colon + 1, &f->p, &why)
               : sim_parse_prob(colon + 1, &f->p, &why)) != 0) {
        return fail(c, c->cur, "item %u: expected %s after ':'", i + 1, why);
      }
      trim(items[i]);
    } else if (op == SCN_FAULT_DUP) {
      /* LINK:PROBABILITY[:DELAY]; link names have no ':'. */
      char *second;
      colon = strchr(items[i], ':');
      if (colon == NULL) {
        return fail(c, c->cur,
                    "item %u ('%s'): expected LINK:PROBABILITY[:DELAY]", i + 1,
                    items[i]);
      }
      *colon = '\0';
      second = strchr(colon + 1, ':');
      if (second != NULL) {
        *second = '\0';
        if (sim_parse_dup_delay(second + 1, &f->delay_ps, &why) != 0) {
          return fail(c, c->cur, "item %u: expected %s after the second ':'",
                      i + 1, why);
        }
        f->delay_set = 1;
      }
      if (sim_parse_prob(colon + 1, &f->p, &why) != 0) {
        return fail(c, c->cur, "item %u: expected %s after ':'", i + 1, why);
      }
      trim(items[i]);
    } else {
      at = strchr(items[i], '@');
      if (at == NULL) {
        return fail(c, c->cur, "item %u ('%s'): expected LINK@TIME%s", i + 1,
                    items[i], op == SCN_FAULT_DEGRADE ? ":RATE" : "");
      }
      *at = '\0';
      if (op == SCN_FAULT_DEGRADE) {
        colon = strchr(at + 1, ':');
        if (colon == NULL) {
          return fail(c, c->cur, "item %u: expected LINK@TIME:RATE", i + 1);
        }
        *colon = '\0';
        if (sim_parse_rate(colon + 1, &f->rate_bps, &why) != 0) {
          return fail(c, c->cur, "item %u: expected %s after ':'", i + 1, why);
        }
      }
      if (sim_parse_time(at + 1, &f->at_ps, &why) != 0) {
        return fail(c, c->cur, "item %u: expected %s after '@'", i + 1, why);
      }
      trim(items[i]);
    }
    if (parse_link(items[i], &f->link) != 0) {
      return fail(c, c->cur, "item %u ('%s'): expected %s", i + 1, items[i],
                  LINK_NAMES);
    }
    ++s->n_faults;
  }
  if (n > SCN_MAX_FAULTS) {
    return fail(c, c->cur, "too many faults (at most %d)", SCN_MAX_FAULTS);
  }
  return 0;
}

static int do_faults(cc *c) {
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

static int do_srd_key(cc *c, scn_transport *t) {
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
    return unknown_key(c, "type, paths, ordered, steering, cc, mtu, rto_min, "
                          "rto_max, rto_initial, target_qdelay, ack_delay, "
                          "ack_freq, init_window, fixed_window, pkt_window, "
                          "msg_window, max_retries, recv_depth, unexp_msgs, "
                          "unexp_bytes, max_sends");
  }
  return 0;
}

static int do_tcp_key(cc *c, scn_transport *t) {
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
    if (!strcmp(V, "reno") || !strcmp(V, "newreno")) {
      p->cc = SIM_TCP_CC_RENO;
    } else if (!strcmp(V, "dctcp")) {
      p->cc = SIM_TCP_CC_DCTCP;
      p->ecn = 1;
    } else {
      return expect(c, "reno (NewReno) or dctcp");
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
    const char *r;
    if (parse_num(V, &g, &r) != 0 || *r || g <= 0 || g > 1) {
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
static int do_transports(cc *c) {
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
  n = split_list(buf, items, SCN_MAX_TRANSPORTS + 1, ',');
  c->cur = at;
  if (n > SCN_MAX_TRANSPORTS) {
    return fail(c, at, "expected at most %d transports", SCN_MAX_TRANSPORTS);
  }
  for (j = 0; j < n; ++j) {
    int type = -1;
    if (!valid_name(items[j])) {
      return fail(c, at, "item %u ('%s'): expected a transport name", j + 1,
                  items[j]);
    }
    if (find_tr(s, items[j])) {
      return fail(c, at, "'%s' is listed twice", items[j]);
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
        } else {
          c->cur = e;
          return expect(c, "srd or tcp");
        }
      }
    }
    if (type < 0) {
      return fail(c, at,
                  "'%s' is neither a built-in transport (srd, srd-ordered, "
                  "srd-blind, srd-1path, tcp, tcp-tuned, dctcp, dctcp-tuned) "
                  "nor defined by a [transport.%s] section with a type",
                  items[j], items[j]);
    }
    transport_defaults(&s->tr[s->n_tr], items[j], type, s->seed);
    s->tr[s->n_tr].type = type;
    ++s->n_tr;
  }
  if (s->n_tr == 0) {
    return fail(c, at, "expected at least one transport");
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
      if (!valid_name(e->section + 10)) {
        return fail(c, e, "expected a section name transport.NAME");
      }
      continue; /* defined but not listed: not run, still checked below */
    }
    if (!strcmp(e->key, "type")) {
      continue;
    }
    rv = t->type == SCN_XPORT_SRD ? do_srd_key(c, t) : do_tcp_key(c, t);
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

int sim_cdf_load(const char *path, cdf_pt **pts, uint32_t *n, char *err,
                 size_t errlen) {
  FILE *fp = fopen(path, "r");
  struct stat st;
  char line[256];
  int ln = 0;
  uint32_t cap = 0;

  *pts = NULL;
  *n = 0;
  if (fp != NULL && (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode))) {
    fclose(fp);
    snprintf(err, errlen, "%s: expected a regular file of flow sizes", path);
    return -1;
  }
  if (fp == NULL) {
    snprintf(err, errlen, "%s: cannot open the flow-size CDF: %s", path,
             strerror(errno));
    return -1;
  }
  while (fgets(line, sizeof(line), fp)) {
    double sz, p;
    char *h = strchr(line, '#');
    char extra[8];
    if (++ln > 100000) {
      snprintf(err, errlen, "%s: more than 100000 lines", path);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (h) {
      *h = '\0';
    }
    if (sscanf(line, " %7s", extra) != 1) {
      continue;
    }
    if (sscanf(line, "%lf %lf %7s", &sz, &p, extra) != 2 || !(sz >= 0) ||
        !(p >= 0) || p > 1 || sz > 1e13) {
      snprintf(err, errlen,
               "%s:%d: expected 'SIZE_BYTES CUMULATIVE_PROBABILITY' with a "
               "probability from 0 to 1",
               path, ln);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (*n > 0 && (sz < (*pts)[*n - 1].size || p < (*pts)[*n - 1].p)) {
      snprintf(err, errlen,
               "%s:%d: expected sizes and probabilities that never decrease",
               path, ln);
      fclose(fp);
      free(*pts);
      return -1;
    }
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      cdf_pt *np = realloc(*pts, cap * sizeof(*np));
      if (np == NULL) {
        fclose(fp);
        free(*pts);
        snprintf(err, errlen, "out of memory");
        return -1;
      }
      *pts = np;
    }
    (*pts)[*n].size = sz;
    (*pts)[*n].p = p;
    ++*n;
  }
  fclose(fp);
  if (*n == 0 || fabs((*pts)[*n - 1].p - 1.0) > 1e-9) {
    snprintf(err, errlen,
             "%s: expected points ending at cumulative probability 1", path);
    free(*pts);
    return -1;
  }
  return 0;
}

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

static int check_link(cc *c, const sim_scn *s, const scn_linkref *l,
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
    return fail(c, e, "link '%s': %s", l->text, bad);
  }
  return 0;
}

static int check_host(cc *c, const sim_scn *s, uint32_t h, const scn_entry *e,
                      const char *what) {
  if (h >= s->n_hosts) {
    return fail(c, e,
                "%s %u: expected a host index below %u (the topology "
                "has %u hosts)",
                what, h, s->n_hosts, s->n_hosts);
  }
  return 0;
}

static int check(cc *c) {
  sim_scn *s = c->s;
  uint32_t i;

  /* Topology. */
  if (s->topo == SCN_TOPO_FATTREE && s->k < 2) {
    return fail(c, c->at_k, "expected k >= 2");
  }
  s->n_hosts = n_hosts_of(s);
  if (s->n_hosts < 2) {
    return fail(c, c->at_topo,
                "the topology has %u host(s); expected at "
                "least 2",
                s->n_hosts);
  }
  if (s->n_hosts > 65536) {
    return fail(c, c->at_topo,
                "the topology has %u hosts; at most 65536 are "
                "supported",
                s->n_hosts);
  }
  if (s->n_lanes) {
    uint32_t want = s->topo == SCN_TOPO_DUMBBELL    ? s->paths
                    : s->topo == SCN_TOPO_LEAFSPINE ? s->spines
                                                    : 0;
    if (want == 0 || s->n_lanes != want) {
      return fail(c, c->at_lanes, "expected one rate per %s (%u), got %u",
                  s->topo == SCN_TOPO_DUMBBELL ? "path" : "spine", want,
                  s->n_lanes);
    }
  }
  if (s->warmup >= s->duration) {
    return fail(c, NULL, "[scenario] warmup must be shorter than duration");
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
      return fail(c, c->at_dst ? c->at_dst : c->at_src,
                  "src and dst must differ");
    }
    break;
  case SCN_WL_PAIRS:
    if (!s->pairs_leaf && s->n_pairs == 0) {
      return fail(c, c->at_wl,
                  "type pairs needs a 'pairs' key "
                  "(SRC>DST, ... or 'leaves')");
    }
    if (s->pairs_leaf && s->topo == SCN_TOPO_FATTREE) {
      return fail(c, c->at_pairs,
                  "'leaves' pairs need a leafspine or "
                  "dumbbell topology");
    }
    for (i = 0; i < s->n_pairs; ++i) {
      if (check_host(c, s, s->pairs[i][0], c->at_pairs, "host") ||
          check_host(c, s, s->pairs[i][1], c->at_pairs, "host")) {
        return -1;
      }
      if (s->pairs[i][0] == s->pairs[i][1]) {
        return fail(c, c->at_pairs, "pair %u sends to itself", i + 1);
      }
    }
    break;
  case SCN_WL_SHUFFLE:
    if (s->ranks == 0) {
      s->ranks = s->n_hosts;
    }
    if (s->ranks > s->n_hosts) {
      return fail(c, c->at_ranks, "expected at most %u ranks (one per host)",
                  s->n_hosts);
    }
    if (s->bytes == 0) {
      return fail(c, c->at_bytes ? c->at_bytes : c->at_wl,
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
      return fail(c, c->at_senders, "expected at most %u senders",
                  s->n_hosts - 1);
    }
    if (s->bytes == 0) {
      return fail(c, c->at_bytes ? c->at_bytes : c->at_wl,
                  "an incast needs bytes > 0 (each sender's response)");
    }
    break;
  case SCN_WL_RANDOM:
    if (s->cdf[0] == '\0') {
      return fail(c, c->at_wl,
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
      if (sim_cdf_load(s->cdf, &pts, &np, why, sizeof(why)) != 0) {
        return fail(c, c->at_cdf, "%s", why);
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
  for (i = 0; i < s->n_tr; ++i) {
    scn_transport *t = &s->tr[i];
    if (t->type == SCN_XPORT_SRD && s->message > (1u << 30)) {
      return fail(c, c->at_message, "SRD messages are at most 1 GiB");
    }
    if (t->type == SCN_XPORT_SRD && t->srd.ep.rto_max < t->srd.ep.rto_min) {
      return fail(c, NULL, "[transport.%s] rto_max is below rto_min", t->name);
    }
    if (t->type == SCN_XPORT_TCP && t->tcp.rto_max < t->tcp.rto_min) {
      return fail(c, NULL, "[transport.%s] rto_max is below rto_min", t->name);
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
        return fail(c, e,
                    "link '%s': only tcpflow0 exists for this "
                    "workload",
                    f->link.text);
      }
    }
  }
  return 0;
}

static int do_sweep(cc *c) {
  sim_scn *s = c->s;
  char buf[1024], *keys[SCN_MAX_SWEEP_KEYS + 1];
  uint32_t n, i;
  const scn_entry *e = c->at_sweep;

  if (e == NULL) {
    return 0;
  }
  {
    const char *v = e->value;
    while (isspace((unsigned char)*v)) {
      ++v;
    }
    if (*v == '\0') {
      return 0; /* "sweep =" turns a sweep off (e.g. with --set) */
    }
  }
  s->sweep_line = e->line;
  if (strlen(e->value) >= sizeof(buf)) {
    return fail(c, e, "expected a shorter sweep");
  }
  snprintf(buf, sizeof(buf), "%s", e->value);
  n = split_list(buf, keys, SCN_MAX_SWEEP_KEYS + 1, '|');
  if (n > SCN_MAX_SWEEP_KEYS) {
    return fail(c, e, "expected at most %d keys separated by '|'",
                SCN_MAX_SWEEP_KEYS);
  }
  for (i = 0; i < n; ++i) {
    char *eq = strchr(keys[i], '='), *dot, *vals[SCN_MAX_SWEEP_POINTS + 1];
    uint32_t m, j;
    if (eq != NULL) {
      *eq = '\0';
    }
    if (eq == NULL || (dot = strrchr(keys[i], '.')) == NULL || dot == keys[i]) {
      return fail(c, e, "expected section.key=V1,V2,... [| section.key=...]");
    }
    trim(keys[i]);
    if (strlen(keys[i]) >= sizeof(s->sweep_key[0])) {
      return fail(c, e, "expected a shorter key");
    }
    snprintf(s->sweep_key[i], sizeof(s->sweep_key[i]), "%s", keys[i]);
    m = split_list(eq + 1, vals, SCN_MAX_SWEEP_POINTS + 1, ',');
    if (m > SCN_MAX_SWEEP_POINTS) {
      return fail(c, e, "expected at most %d values per key",
                  SCN_MAX_SWEEP_POINTS);
    }
    if (i > 0 && m != s->n_sweep_points) {
      return fail(c, e, "every key needs as many values (%u)",
                  s->n_sweep_points);
    }
    s->n_sweep_points = m;
    for (j = 0; j < m; ++j) {
      if (vals[j][0] == '\0') {
        return fail(c, e, "an empty value");
      }
      s->sweep_val[i][j] = xstrdup(vals[j]);
      if (s->sweep_val[i][j] == NULL) {
        return fail(c, e, "out of memory");
      }
    }
    s->n_sweep_keys = i + 1;
  }
  return 0;
}

int sim_scn_compile(const scn_raw *r, sim_scn *s, char *err, size_t errlen) {
  cc c;
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
      rv = fail(&c, c.cur,
                "unknown section [%s]; expected [scenario], [topology], "
                "[workload], [faults] or [transport.NAME]",
                sec);
    }
  }
  if (rv == 0) {
    rv = do_transports(&c);
  }
  if (rv == 0) {
    rv = check(&c);
  }
  if (rv == 0) {
    rv = do_sweep(&c);
  }
  if (rv != 0) {
    sim_scn_fini(s);
  }
  return rv;
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

int sim_scn_point(const scn_raw *r, const sim_scn *s, uint32_t p, scn_raw *out,
                  char *err, size_t errlen) {
  size_t i;
  uint32_t k;

  snprintf(out->file, sizeof(out->file), "%s", r->file);
  snprintf(out->dir, sizeof(out->dir), "%s", r->dir);
  for (i = 0; i < r->n; ++i) {
    const scn_entry *e = &r->e[i];
    if (!strcmp(e->section, "scenario") && !strcmp(e->key, "sweep")) {
      continue;
    }
    if (raw_add(out, e->section, e->key, e->value, e->src, e->line) != 0) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
  }
  for (k = 0; k < s->n_sweep_keys; ++k) {
    char a[512];
    snprintf(a, sizeof(a), "%s=%s", s->sweep_key[k], s->sweep_val[k][p]);
    if (sim_scn_set(out, a, r->file, s->sweep_line, err, errlen) != 0) {
      return -1;
    }
  }
  return 0;
}

void sim_scn_point_label(const sim_scn *s, uint32_t p, char *buf, size_t len) {
  uint32_t k;
  size_t used = 0;

  buf[0] = '\0';
  for (k = 0; k < s->n_sweep_keys && used < len; ++k) {
    int n = snprintf(buf + used, len - used, "%s%s=%s", k ? " " : "",
                     s->sweep_key[k], s->sweep_val[k][p]);
    if (n < 0) {
      break;
    }
    used += (size_t)n;
  }
}
