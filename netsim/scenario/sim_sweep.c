/*
 * sim_sweep.c: a scenario over many seeds: the manifest, the run files,
 * the figures and the summaries (sim_sweep.h).
 */
#define _GNU_SOURCE /* memmem */
#include "sim_sweep.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim_tbl.h"
#include "tool_json.h"

/* The figures, in the order of the files' columns and the table's rows.
   Their meaning is docs/scenarios.md's ("What is measured"). */
const sim_sweep_fig sim_sweep_figs[SIM_SWEEP_NFIG] = {
    {"throughput_gbps", "throughput (Gb/s)", 1, 2},
    {"throughput_fraction", "  of capacity (%)", 100, 1},
    {"jain", "Jain's fairness", 1, 3},
    {"flows_done", "bounded flows done (%)", 100, 1},
    {"fct_p50_us", "flow completion p50 (us)", 1, 1},
    {"fct_p99_us", "flow completion p99 (us)", 1, 1},
    {"fct_p999_us", "flow completion p99.9 (us)", 1, 1},
    {"slowdown_p50", "slowdown p50", 1, 2},
    {"slowdown_p99", "slowdown p99", 1, 2},
    {"msg_p50_us", "message latency p50 (us)", 1, 1},
    {"msg_p99_us", "message latency p99 (us)", 1, 1},
    {"msg_p999_us", "message latency p99.9 (us)", 1, 1},
    {"rpc_p50_us", "RPC completion p50 (us)", 1, 1},
    {"rpc_p99_us", "RPC completion p99 (us)", 1, 1},
    {"rpc_p999_us", "RPC completion p99.9 (us)", 1, 1},
    {"rpc_slowdown_p99", "RPC slowdown p99", 1, 2},
    {"retransmits", "retransmissions", 1, 1},
    {"timeouts", "timeouts", 1, 1},
    {"drops", "drops in the network", 1, 1},
    {"max_queue_bytes", "deepest queue (KB)", 1e-3, 1},
    {"max_stall_us", "longest stall (us)", 1, 1},
    {"hol_max_us", "head-of-line wait max (us)", 1, 1},
    {"data_pkts", "data packets", 1, 0},
    {"ctrl_pkts", "control packets", 1, 0},
    {"ecn_marks", "ECN marks", 1, 0},
};

/* fail writes a message to |err| and returns -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

void sim_sweep_init(sim_sweep *sw) {
  memset(sw, 0, sizeof(*sw));
}

void sim_sweep_fini(sim_sweep *sw) {
  uint32_t i;

  for (i = 0; i < sw->n_sets; ++i) {
    free(sw->sets[i]);
  }
  free(sw->seeds);
  memset(sw, 0, sizeof(*sw));
}

/* ------------------------------------------------------------------------ */
/* Seeds                                                                    */

/* read_u64 reads a decimal number at |*p| (digits only) and moves |*p|
   past it.  Returns 0, or -1 when there is none or it overflows. */
static int read_u64(const char **p, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;

  if (!isdigit((unsigned char)*s)) {
    return -1;
  }
  for (; isdigit((unsigned char)*s); ++s) {
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) {
      return -1;
    }
    v = v * 10 + d;
  }
  *p = s;
  *out = v;
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int sim_sweep_parse_seeds(sim_sweep *sw, const char *list, char *err,
                          size_t errlen) {
  const char *p = list;
  uint64_t *seeds = NULL, total = 0;
  uint32_t n = 0, i, j;

  /* Count first, so that "1-18446744073709551615" is refused before
     anything is allocated. */
  for (;;) {
    uint64_t a, b;
    if (read_u64(&p, &a) != 0) {
      return fail(err, errlen,
                  "seeds '%.200s': expected seeds (N, A-B, or a list of them "
                  "separated by commas, e.g. 1-30 or 1,5,9)",
                  list);
    }
    b = a;
    if (*p == '-') {
      ++p;
      if (read_u64(&p, &b) != 0) {
        return fail(err, errlen, "seeds '%.200s': expected a number after '-'",
                    list);
      }
      if (b < a) {
        return fail(err, errlen,
                    "seeds '%.200s': %" PRIu64 "-%" PRIu64
                    " ends before it starts",
                    list, a, b);
      }
    }
    if (b - a >= SIM_SWEEP_MAX_SEEDS ||
        (total += b - a + 1) > SIM_SWEEP_MAX_SEEDS) {
      return fail(err, errlen, "seeds '%.200s': more than %u seeds", list,
                  SIM_SWEEP_MAX_SEEDS);
    }
    if (*p == '\0') {
      break;
    }
    if (*p != ',') {
      return fail(err, errlen,
                  "seeds '%.200s': unexpected '%c' (ranges A-B separated by "
                  "commas)",
                  list, *p);
    }
    ++p;
  }
  seeds = malloc(total * sizeof(*seeds));
  if (seeds == NULL) {
    return SIM_SCN_NOMEM;
  }
  for (p = list;;) {
    uint64_t a, b, s;
    read_u64(&p, &a);
    b = a;
    if (*p == '-') {
      ++p;
      read_u64(&p, &b);
    }
    for (s = a;; ++s) {
      seeds[n++] = s;
      if (s == b) {
        break;
      }
    }
    if (*p++ == '\0') {
      break;
    }
  }
  qsort(seeds, n, sizeof(*seeds), cmp_u64);
  for (i = j = 0; i < n; ++i) {
    if (j == 0 || seeds[i] != seeds[j - 1]) {
      seeds[j++] = seeds[i];
    }
  }
  free(sw->seeds);
  sw->seeds = seeds;
  sw->n_seeds = j;
  return 0;
}

void sim_sweep_fmt_seeds(const sim_sweep *sw, char *buf, size_t len) {
  size_t at = 0;
  uint32_t i = 0, j;

  if (len == 0) {
    return;
  }
  buf[0] = '\0';
  while (i < sw->n_seeds) {
    char item[48];
    int n;
    for (j = i; j + 1 < sw->n_seeds && sw->seeds[j + 1] == sw->seeds[j] + 1;
         ++j) {
      continue;
    }
    if (j == i) {
      n = snprintf(item, sizeof(item), "%s%" PRIu64, i ? "," : "",
                   sw->seeds[i]);
    } else {
      n = snprintf(item, sizeof(item), "%s%" PRIu64 "-%" PRIu64, i ? "," : "",
                   sw->seeds[i], sw->seeds[j]);
    }
    if (at + (size_t)n + 4 > len) {
      snprintf(buf + at, len - at, "%s", len - at > 3 ? "..." : "");
      return;
    }
    memcpy(buf + at, item, (size_t)n + 1);
    at += (size_t)n;
    i = j + 1;
  }
}

uint64_t sim_sweep_n_runs(const sim_sweep *sw) {
  return (uint64_t)sw->n_cells * sw->n_seeds;
}

void sim_sweep_run_name(const sim_sweep *sw, uint64_t u, char *buf,
                        size_t len) {
  const sim_sweep_cell *c = &sw->cell[u / sw->n_seeds];

  snprintf(buf, len, "p%u-%s-s%" PRIu64, c->point, c->transport,
           sw->seeds[u % sw->n_seeds]);
}

/* ------------------------------------------------------------------------ */
/* The manifest                                                             */

#define MANIFEST_MAGIC "srd-sim sweep 1"
#define RUN_MAGIC "srd-sim run 1"

/* has_break says whether |s| holds a line break. */
static int has_break(const char *s) {
  return strpbrk(s, "\r\n") != NULL;
}

int sim_sweep_manifest(FILE *f, const sim_sweep *sw) {
  char seeds[1 << 16];
  uint32_t i;

  if (has_break(sw->scenario) || has_break(sw->file) || has_break(sw->only)) {
    return -1;
  }
  for (i = 0; i < sw->n_sets; ++i) {
    if (has_break(sw->sets[i])) {
      return -1;
    }
  }
  for (i = 0; i < sw->n_points; ++i) {
    if (has_break(sw->label[i])) {
      return -1;
    }
  }
  sim_sweep_fmt_seeds(sw, seeds, sizeof(seeds));
  fprintf(f, MANIFEST_MAGIC "\n");
  fprintf(f, "scenario %s\n", sw->scenario);
  fprintf(f, "file %s\n", sw->file);
  fprintf(f, "hash %016" PRIx64 "\n", sw->file_hash);
  for (i = 0; i < sw->n_sets; ++i) {
    fprintf(f, "set %s\n", sw->sets[i]);
  }
  if (sw->only[0]) {
    fprintf(f, "only %s\n", sw->only);
  }
  fprintf(f, "seeds %s\n", seeds);
  for (i = 0; i < sw->n_points; ++i) {
    fprintf(f, "point %u%s%s\n", i, sw->label[i][0] ? " " : "", sw->label[i]);
  }
  for (i = 0; i < sw->n_cells; ++i) {
    fprintf(f, "cell %u %s %s\n", sw->cell[i].point, sw->cell[i].transport,
            sw->cell[i].kind);
  }
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* A line reader over a text of known length: each line without its
   '\n', which every line must end with; NUL bytes and carriage returns
   are refused. */
typedef struct lines {
  const char *name, *p, *end;
  uint32_t no;
  char buf[4096];
} lines;

/* next_line copies the next line into |l|->buf.  Returns 1, 0 at the
   end, or -1 with a message (a line too long, no final line break, a
   NUL). */
static int next_line(lines *l, char *err, size_t errlen) {
  const char *nl;
  size_t n;

  if (l->p == l->end) {
    return 0;
  }
  ++l->no;
  nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
  if (nl == NULL) {
    return fail(err, errlen, "%s:%u: the last line has no line break", l->name,
                l->no);
  }
  n = (size_t)(nl - l->p);
  if (n >= sizeof(l->buf)) {
    return fail(err, errlen, "%s:%u: line too long", l->name, l->no);
  }
  if (memchr(l->p, '\0', n) != NULL) {
    return fail(err, errlen, "%s:%u: a NUL byte", l->name, l->no);
  }
  /* What these files hold never has a carriage return (the writer
     refuses one), so a value read back can always be written again. */
  if (memchr(l->p, '\r', n) != NULL) {
    return fail(err, errlen, "%s:%u: a carriage return", l->name, l->no);
  }
  memcpy(l->buf, l->p, n);
  l->buf[n] = '\0';
  l->p = nl + 1;
  return 1;
}

/* split cuts |line| at its first blank: the key, and |*val| the rest
   ("" when none). */
static const char *split(char *line, const char **val) {
  char *sp = strchr(line, ' ');

  *val = "";
  if (sp != NULL) {
    *sp = '\0';
    *val = sp + 1;
  }
  return line;
}

/* read_index reads a point number "N" at the start of |s| below |limit|
   and moves |*s| past it.  Returns 0 or -1. */
static int read_index(const char **s, uint32_t limit, uint32_t *out) {
  uint64_t v;

  if (read_u64(s, &v) != 0 || v >= limit) {
    return -1;
  }
  *out = (uint32_t)v;
  return 0;
}

int sim_sweep_parse_manifest(sim_sweep *sw, const char *name, const char *text,
                             size_t len, char *err, size_t errlen) {
  lines l;
  int rv, have_scn = 0, have_file = 0, have_seeds = 0, have_hash = 0;
  uint32_t i;

  memset(&l, 0, sizeof(l));
  l.name = name;
  l.p = text;
  l.end = text + len;
  if ((rv = next_line(&l, err, errlen)) <= 0 || strcmp(l.buf, MANIFEST_MAGIC)) {
    return rv < 0 ? -1
                  : fail(err, errlen,
                         "%s:1: not a sweep manifest (expected '" MANIFEST_MAGIC
                         "')",
                         name);
  }
  while ((rv = next_line(&l, err, errlen)) > 0) {
    const char *val, *key = split(l.buf, &val);
    if (!strcmp(key, "scenario") && !have_scn) {
      if (!sim_scn_valid_name(val)) {
        return fail(err, errlen, "%s:%u: expected a scenario name", name, l.no);
      }
      snprintf(sw->scenario, sizeof(sw->scenario), "%s", val);
      have_scn = 1;
    } else if (!strcmp(key, "file") && !have_file) {
      if (val[0] == '\0' || strlen(val) >= sizeof(sw->file)) {
        return fail(err, errlen, "%s:%u: expected the scenario's file", name,
                    l.no);
      }
      snprintf(sw->file, sizeof(sw->file), "%s", val);
      have_file = 1;
    } else if (!strcmp(key, "hash") && !have_hash) {
      char *end;
      if (strlen(val) != 16 || strspn(val, "0123456789abcdef") != 16) {
        return fail(err, errlen, "%s:%u: expected 16 hexadecimal digits", name,
                    l.no);
      }
      sw->file_hash = strtoull(val, &end, 16);
      have_hash = 1;
    } else if (!strcmp(key, "set")) {
      if (sw->n_sets == SIM_SWEEP_MAX_SETS || strchr(val, '=') == NULL) {
        return fail(err, errlen,
                    "%s:%u: expected SECTION.KEY=VALUE (at most %u)", name,
                    l.no, SIM_SWEEP_MAX_SETS);
      }
      if ((sw->sets[sw->n_sets] = strdup(val)) == NULL) {
        return SIM_SCN_NOMEM;
      }
      ++sw->n_sets;
    } else if (!strcmp(key, "only") && !sw->only[0]) {
      if (val[0] == '\0' || strlen(val) >= sizeof(sw->only)) {
        return fail(err, errlen, "%s:%u: expected transport names", name, l.no);
      }
      snprintf(sw->only, sizeof(sw->only), "%s", val);
    } else if (!strcmp(key, "seeds") && !have_seeds) {
      char why[600];
      if ((rv = sim_sweep_parse_seeds(sw, val, why, sizeof(why))) != 0) {
        return rv == SIM_SCN_NOMEM
                   ? rv
                   : fail(err, errlen, "%s:%u: %s", name, l.no, why);
      }
      have_seeds = 1;
    } else if (!strcmp(key, "point")) {
      uint32_t p;
      if (read_index(&val, SCN_MAX_SWEEP_POINTS, &p) != 0 ||
          p != sw->n_points || (*val != '\0' && *val != ' ') ||
          (*val == ' ' && val[1] == '\0') ||
          strlen(val) >= sizeof(sw->label[0])) {
        return fail(err, errlen,
                    "%s:%u: expected 'point %u' and its label (points are "
                    "numbered from 0, at most %u)",
                    name, l.no, sw->n_points, SCN_MAX_SWEEP_POINTS);
      }
      snprintf(sw->label[p], sizeof(sw->label[p]), "%s",
               *val == ' ' ? val + 1 : val);
      ++sw->n_points;
    } else if (!strcmp(key, "cell")) {
      sim_sweep_cell *c = &sw->cell[sw->n_cells];
      char tr[SCN_NAME_MAX], kind[16];
      uint32_t p;
      if (sw->n_cells == SIM_SWEEP_MAX_CELLS ||
          read_index(&val, sw->n_points, &p) != 0 ||
          sscanf(val, " %47s %15s", tr, kind) != 2 || !sim_scn_valid_name(tr) ||
          (strcmp(kind, "srd") && strcmp(kind, "tcp") &&
           strcmp(kind, "tcp-over-srd"))) {
        return fail(err, errlen,
                    "%s:%u: expected 'cell POINT TRANSPORT KIND' of a point "
                    "listed above (KIND srd, tcp or tcp-over-srd)",
                    name, l.no);
      }
      for (i = 0; i < sw->n_cells; ++i) {
        if (sw->cell[i].point == p && !strcmp(sw->cell[i].transport, tr)) {
          return fail(err, errlen, "%s:%u: cell %u %s is listed twice", name,
                      l.no, p, tr);
        }
      }
      /* Normalised: "cell 0 srd srd extra" must not read as "cell 0 srd
         srd". */
      {
        char again[160];
        snprintf(again, sizeof(again), " %s %s", tr, kind);
        if (strcmp(val, again)) {
          return fail(err, errlen,
                      "%s:%u: expected 'cell POINT TRANSPORT KIND', one "
                      "blank apart",
                      name, l.no);
        }
      }
      c->point = p;
      snprintf(c->transport, sizeof(c->transport), "%s", tr);
      snprintf(c->kind, sizeof(c->kind), "%s", kind);
      ++sw->n_cells;
    } else {
      return fail(err, errlen,
                  "%s:%u: unexpected '%.40s' (a key given twice, or not one "
                  "of scenario, file, hash, set, only, seeds, point, cell)",
                  name, l.no, key);
    }
  }
  if (rv < 0) {
    return -1;
  }
  if (!have_scn || !have_file || !have_hash || !have_seeds ||
      sw->n_points == 0 || sw->n_cells == 0) {
    return fail(err, errlen,
                "%s: incomplete (it needs scenario, file, hash, seeds, a "
                "point and a cell)",
                name);
  }
  if (sim_sweep_n_runs(sw) > SIM_SWEEP_MAX_RUNS) {
    return fail(err, errlen, "%s: more than %u runs", name, SIM_SWEEP_MAX_RUNS);
  }
  for (i = 0; i < sw->n_points; ++i) {
    uint32_t c;
    for (c = 0; c < sw->n_cells && sw->cell[c].point != i; ++c) {
      continue;
    }
    if (c == sw->n_cells) {
      return fail(err, errlen, "%s: point %u has no cell", name, i);
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Runs                                                                     */

void sim_sweep_figures(const sim_result *r, double *v) {
  uint32_t bounded = r->n_flows - r->n_flows_unbounded;
  int fct = r->n_flows_done > 0, msg = r->n_msgs_done > 0;
  int rpc = r->rpc_on && r->n_rpcs_done > 0;
  uint32_t i;

  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    v[i] = NAN;
  }
  v[0] = r->tput_gbps;
  v[1] = r->tput_fraction;
  v[2] = r->jain;
  if (bounded > 0) {
    v[3] = (double)r->n_flows_done / bounded;
  }
  if (fct) {
    v[4] = r->fct_us[0];
    v[5] = r->fct_us[1];
    v[6] = r->fct_us[2];
    v[7] = r->slowdown[0];
    v[8] = r->slowdown[1];
  }
  if (msg) {
    v[9] = r->lat_us[0];
    v[10] = r->lat_us[1];
    v[11] = r->lat_us[2];
  }
  if (rpc) {
    v[12] = r->rpc_us[0];
    v[13] = r->rpc_us[1];
    v[14] = r->rpc_us[2];
    v[15] = r->rpc_slowdown[1];
  }
  v[16] = (double)r->cnt.retransmits;
  v[17] = (double)r->cnt.timeouts;
  v[18] = (double)r->drops;
  v[19] = (double)r->max_queue_bytes;
  v[20] = r->max_stall_us;
  if (r->hol_msgs > 0) {
    v[21] = r->hol_max_us;
  }
  v[22] = (double)r->cnt.data_pkts;
  v[23] = (double)r->cnt.ctrl_pkts;
  v[24] = (double)r->ecn_marks;
  /* A figure the run could not compute (0/0) is one it did not measure. */
  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    if (!isfinite(v[i])) {
      v[i] = NAN;
    }
  }
}

int sim_sweep_write_run(FILE *f, const sim_sweep *sw, uint64_t u,
                        const double *v) {
  const sim_sweep_cell *c = &sw->cell[u / sw->n_seeds];
  uint32_t i;

  fprintf(f, RUN_MAGIC "\npoint %u\ntransport %s\nseed %" PRIu64 "\n", c->point,
          c->transport, sw->seeds[u % sw->n_seeds]);
  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    if (v[i] == v[i]) {
      fprintf(f, "%s %.17g\n", sim_sweep_figs[i].key, v[i]);
    }
  }
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int sim_sweep_parse_run(const sim_sweep *sw, uint64_t u, const char *name,
                        const char *text, size_t len, double *v, char *err,
                        size_t errlen) {
  const sim_sweep_cell *c = &sw->cell[u / sw->n_seeds];
  uint64_t seed = sw->seeds[u % sw->n_seeds];
  char want[3][128];
  lines l;
  int rv, k;
  uint32_t i;

  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    v[i] = NAN;
  }
  snprintf(want[0], sizeof(want[0]), "point %u", c->point);
  snprintf(want[1], sizeof(want[1]), "transport %s", c->transport);
  snprintf(want[2], sizeof(want[2]), "seed %" PRIu64, seed);
  memset(&l, 0, sizeof(l));
  l.name = name;
  l.p = text;
  l.end = text + len;
  if ((rv = next_line(&l, err, errlen)) <= 0 || strcmp(l.buf, RUN_MAGIC)) {
    return rv < 0
               ? -1
               : fail(err, errlen,
                      "%s:1: not a run of a sweep (expected '" RUN_MAGIC "')",
                      name);
  }
  for (k = 0; k < 3; ++k) {
    if ((rv = next_line(&l, err, errlen)) <= 0 || strcmp(l.buf, want[k])) {
      return rv < 0 ? -1
                    : fail(err, errlen,
                           "%s:%u: expected '%s' (the file's name says which "
                           "run it is)",
                           name, l.no, want[k]);
    }
  }
  while ((rv = next_line(&l, err, errlen)) > 0) {
    const char *val, *key = split(l.buf, &val);
    char *end;
    double x;
    for (i = 0; i < SIM_SWEEP_NFIG && strcmp(key, sim_sweep_figs[i].key); ++i) {
      continue;
    }
    if (i == SIM_SWEEP_NFIG) {
      return fail(err, errlen, "%s:%u: unknown figure '%.40s'", name, l.no,
                  key);
    }
    if (v[i] == v[i]) {
      return fail(err, errlen, "%s:%u: %s given twice", name, l.no, key);
    }
    errno = 0;
    x = strtod(val, &end);
    if (val[0] == '\0' || isspace((unsigned char)val[0]) || *end != '\0' ||
        !isfinite(x) || errno == ERANGE) {
      return fail(err, errlen, "%s:%u: %s: expected a finite number", name,
                  l.no, key);
    }
    v[i] = x;
  }
  return rv < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Summaries                                                                */

tool_stats sim_sweep_cell_stats(const sim_sweep *sw, const double *v,
                                uint32_t c, uint32_t fig) {
  return tool_stats_of(v + (uint64_t)c * sw->n_seeds * SIM_SWEEP_NFIG + fig,
                       sw->n_seeds, SIM_SWEEP_NFIG);
}

/* fmt_num writes |x| with |prec| decimals (six significant digits from
   1e15 on, where decimals no longer fit a cell), or "-" for NaN. */
static void fmt_num(char *buf, size_t len, double x, int prec) {
  if (x != x) {
    snprintf(buf, len, "-");
  } else if (fabs(x) >= 1e15) {
    snprintf(buf, len, "%.6g", x);
  } else {
    snprintf(buf, len, "%.*f", prec, x);
  }
}

int sim_sweep_table(FILE *f, const sim_sweep *sw, const double *v) {
  sim_tbl *t = malloc(sizeof(*t));
  char seeds[256];
  uint32_t p, c, fig;

  if (t == NULL) {
    return -1;
  }
  sim_sweep_fmt_seeds(sw, seeds, sizeof(seeds));
  fprintf(f,
          "%s: %u point%s x %u seed%s (%s): %" PRIu64 " runs\n"
          "each cell: the mean over the seeds ± the 95%% confidence "
          "interval of the\n"
          "mean (Student's t); (n=K) where only K seeds measured the "
          "figure\n",
          sw->scenario, sw->n_points, sw->n_points == 1 ? "" : "s", sw->n_seeds,
          sw->n_seeds == 1 ? "" : "s", seeds, sim_sweep_n_runs(sw));
  for (p = 0; p < sw->n_points; ++p) {
    uint32_t cells[SCN_MAX_TRANSPORTS], n = 0, first;
    for (c = 0; c < sw->n_cells; ++c) {
      if (sw->cell[c].point == p && n < SCN_MAX_TRANSPORTS) {
        cells[n++] = c;
      }
    }
    fprintf(f, "\n");
    if (sw->label[p][0]) {
      fprintf(f, "  -- %s\n", sw->label[p]);
    }
    memset(t, 0, sizeof(*t));
    sim_tbl_row(t, "");
    for (first = 0; first < n; ++first) {
      sim_tbl_cell(t, sw->cell[cells[first]].transport);
    }
    for (fig = 0; fig < SIM_SWEEP_NFIG; ++fig) {
      const sim_sweep_fig *fg = &sim_sweep_figs[fig];
      tool_stats st[SCN_MAX_TRANSPORTS];
      uint32_t any = 0, i;
      for (i = 0; i < n; ++i) {
        st[i] = sim_sweep_cell_stats(sw, v, cells[i], fig);
        any += st[i].n > 0;
      }
      if (!any) {
        continue;
      }
      sim_tbl_row(t, fg->label);
      for (i = 0; i < n; ++i) {
        char m[22], ci[22], cell[TBL_CELL];
        fmt_num(m, sizeof(m), st[i].mean * fg->scale, fg->prec);
        if (st[i].n == 0) {
          snprintf(cell, sizeof(cell), "-");
        } else if (st[i].n == 1) {
          snprintf(cell, sizeof(cell), "%s%s", m,
                   sw->n_seeds > 1 ? " (n=1)" : "");
        } else {
          /* One more decimal for an interval that would print as 0. */
          int prec = fg->prec;
          double half = st[i].ci95 * fg->scale;
          if (half > 0 && half < 0.5 * pow(10, -prec) && prec < 4) {
            ++prec;
          }
          fmt_num(ci, sizeof(ci), half, prec);
          if (st[i].n < sw->n_seeds) {
            snprintf(cell, sizeof(cell), "%s ± %s (n=%zu)", m, ci, st[i].n);
          } else {
            snprintf(cell, sizeof(cell), "%s ± %s", m, ci);
          }
        }
        sim_tbl_cell(t, cell);
      }
    }
    sim_tbl_print(f, t, n);
  }
  free(t);
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* csv_str writes |s| as a CSV field: quoted (RFC 4180) when it holds a
   comma, a quote or a blank at either end. */
static void csv_str(FILE *f, const char *s) {
  size_t n = strlen(s);

  if (strpbrk(s, ",\"") == NULL &&
      (n == 0 || (s[0] != ' ' && s[n - 1] != ' '))) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') {
      fputc('"', f);
    }
    fputc(*s, f);
  }
  fputc('"', f);
}

/* csv_num writes |x| with |digits| significant digits, or nothing for
   NaN. */
static void csv_num(FILE *f, int digits, double x) {
  if (x == x) {
    fprintf(f, "%.*g", digits, x);
  }
}

/* cell_head writes "POINT_IDX,POINT,TRANSPORT,KIND," of cell |c|. */
static void cell_head(FILE *f, const sim_sweep *sw, uint32_t c) {
  const sim_sweep_cell *cl = &sw->cell[c];

  fprintf(f, "%u,", cl->point);
  csv_str(f, sw->label[cl->point]);
  fprintf(f, ",%s,%s,", cl->transport, cl->kind);
}

int sim_sweep_runs_csv(FILE *f, const sim_sweep *sw, const double *v) {
  uint64_t u;
  uint32_t i;

  fprintf(f, "point_idx,point,transport,kind,seed");
  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    fprintf(f, ",%s", sim_sweep_figs[i].key);
  }
  fprintf(f, "\n");
  for (u = 0; u < sim_sweep_n_runs(sw); ++u) {
    cell_head(f, sw, (uint32_t)(u / sw->n_seeds));
    fprintf(f, "%" PRIu64, sw->seeds[u % sw->n_seeds]);
    for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
      fputc(',', f);
      csv_num(f, 17, v[u * SIM_SWEEP_NFIG + i]);
    }
    fprintf(f, "\n");
  }
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

int sim_sweep_stats_csv(FILE *f, const sim_sweep *sw, const double *v) {
  uint32_t c, fig;

  fprintf(f, "point_idx,point,transport,kind,figure,n,mean,sd,ci95,min,max\n");
  for (c = 0; c < sw->n_cells; ++c) {
    for (fig = 0; fig < SIM_SWEEP_NFIG; ++fig) {
      tool_stats st = sim_sweep_cell_stats(sw, v, c, fig);
      if (st.n == 0) {
        continue;
      }
      cell_head(f, sw, c);
      fprintf(f, "%s,%zu,", sim_sweep_figs[fig].key, st.n);
      csv_num(f, 6, st.mean);
      fputc(',', f);
      csv_num(f, 6, st.sd);
      fputc(',', f);
      csv_num(f, 6, st.ci95);
      fputc(',', f);
      csv_num(f, 6, st.min);
      fputc(',', f);
      csv_num(f, 6, st.max);
      fprintf(f, "\n");
    }
  }
  return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* json_num writes key |k| and |x| (six digits), or null for NaN. */
static void json_num(tool_json *j, const char *k, double x) {
  tool_json_key(j, k);
  if (x == x) {
    tool_json_numf(j, "%.6g", x);
  } else {
    tool_json_null(j);
  }
}

int sim_sweep_json(FILE *f, const sim_sweep *sw, const double *v) {
  char seeds[1 << 16];
  tool_json j;
  uint32_t c, fig, i;

  sim_sweep_fmt_seeds(sw, seeds, sizeof(seeds));
  tool_json_init(&j, f, TOOL_JSON_SPACED);
  tool_json_obj_begin(&j);
  tool_json_kv_str(&j, "scenario", sw->scenario);
  tool_json_kv_str(&j, "file", sw->file);
  tool_json_key(&j, "sets");
  tool_json_arr_begin(&j);
  for (i = 0; i < sw->n_sets; ++i) {
    tool_json_str(&j, sw->sets[i]);
  }
  tool_json_arr_end(&j);
  tool_json_kv_str(&j, "seeds", seeds);
  tool_json_kv_u64(&j, "n_seeds", sw->n_seeds);
  tool_json_kv_u64(&j, "runs", sim_sweep_n_runs(sw));
  tool_json_kv_str(&j, "interval",
                   "95% confidence interval of the mean, "
                   "Student's t: mean +- ci95");
  tool_json_key(&j, "cells");
  tool_json_arr_begin(&j);
  for (c = 0; c < sw->n_cells; ++c) {
    const sim_sweep_cell *cl = &sw->cell[c];
    tool_json_ws(&j, "\n  ");
    tool_json_obj_begin(&j);
    tool_json_kv_u64(&j, "point_idx", cl->point);
    tool_json_kv_str(&j, "point", sw->label[cl->point]);
    tool_json_kv_str(&j, "transport", cl->transport);
    tool_json_kv_str(&j, "kind", cl->kind);
    tool_json_key(&j, "figures");
    tool_json_obj_begin(&j);
    for (fig = 0; fig < SIM_SWEEP_NFIG; ++fig) {
      tool_stats st = sim_sweep_cell_stats(sw, v, c, fig);
      if (st.n == 0) {
        continue;
      }
      tool_json_key(&j, sim_sweep_figs[fig].key);
      tool_json_obj_begin(&j);
      tool_json_kv_u64(&j, "n", st.n);
      json_num(&j, "mean", st.mean);
      json_num(&j, "sd", st.sd);
      json_num(&j, "ci95", st.ci95);
      json_num(&j, "min", st.min);
      json_num(&j, "max", st.max);
      tool_json_obj_end(&j);
    }
    tool_json_obj_end(&j);
    tool_json_obj_end(&j);
  }
  tool_json_ws(&j, "\n");
  tool_json_arr_end(&j);
  tool_json_obj_end(&j);
  return tool_json_finish(&j) == 0 ? 0 : -1;
}
