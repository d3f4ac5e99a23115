/*
 * scn_sweep.c: sweeps.  [scenario] sweep = section.key=V1,V2,... [|
 * section.key=...] names up to SCN_MAX_SWEEP_KEYS keys with the same
 * number of values; point i of the sweep is the scenario's raw entries
 * with every key set to its i-th value, compiled like any scenario (so a
 * bad value is reported as the key's own error would be).
 */
#include "scn_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The sweep key                                                            */

int scn_sweep(scn_cc *c) {
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
    return scn_fail(c, e, "expected a shorter sweep");
  }
  snprintf(buf, sizeof(buf), "%s", e->value);
  n = scn_split_list(buf, keys, SCN_MAX_SWEEP_KEYS + 1, '|');
  if (n > SCN_MAX_SWEEP_KEYS) {
    return scn_fail(c, e, "expected at most %d keys separated by '|'",
                    SCN_MAX_SWEEP_KEYS);
  }
  for (i = 0; i < n; ++i) {
    char *eq = strchr(keys[i], '='), *dot, *vals[SCN_MAX_SWEEP_POINTS + 1];
    uint32_t m, j;
    if (eq != NULL) {
      *eq = '\0';
    }
    if (eq == NULL || (dot = strrchr(keys[i], '.')) == NULL || dot == keys[i]) {
      return scn_fail(c, e,
                      "expected section.key=V1,V2,... [| section.key=...]");
    }
    scn_trim(keys[i]);
    if (strlen(keys[i]) >= sizeof(s->sweep_key[0])) {
      return scn_fail(c, e, "expected a shorter key");
    }
    snprintf(s->sweep_key[i], sizeof(s->sweep_key[i]), "%s", keys[i]);
    m = scn_split_list(eq + 1, vals, SCN_MAX_SWEEP_POINTS + 1, ',');
    if (m > SCN_MAX_SWEEP_POINTS) {
      return scn_fail(c, e, "expected at most %d values per key",
                      SCN_MAX_SWEEP_POINTS);
    }
    if (i > 0 && m != s->n_sweep_points) {
      return scn_fail(c, e, "every key needs as many values (%u)",
                      s->n_sweep_points);
    }
    s->n_sweep_points = m;
    for (j = 0; j < m; ++j) {
      if (vals[j][0] == '\0') {
        return scn_fail(c, e, "an empty value");
      }
      s->sweep_val[i][j] = scn_strdup(vals[j]);
      if (s->sweep_val[i][j] == NULL) {
        c->nomem = 1;
        return scn_fail(c, e, "out of memory");
      }
    }
    s->n_sweep_keys = i + 1;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Sweep points                                                             */

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
    if (scn_raw_add(out, e->section, e->key, e->value, e->src, e->line) != 0) {
      snprintf(err, errlen, "out of memory");
      return SIM_SCN_NOMEM;
    }
  }
  for (k = 0; k < s->n_sweep_keys; ++k) {
    char a[512];
    int rv;
    snprintf(a, sizeof(a), "%s=%s", s->sweep_key[k], s->sweep_val[k][p]);
    rv = sim_scn_set(out, a, r->file, s->sweep_line, err, errlen);
    if (rv != 0) {
      return rv;
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
