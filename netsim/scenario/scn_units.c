/*
 * scn_units.c: values with units, as scenario files and srd-sim's flags
 * write them: sizes (9000, 64K, 2MB), rates (100G, 800Mbps), times
 * (500ns, 2s), probabilities (0.001, 0.1%), bit-error rates, whole
 * numbers, booleans; and the text helpers every step shares (trimming,
 * splitting lists).  docs/scenarios.md, "Values", is the reference.  The
 * numbers and their units are read by tools/lib/tool_parse, as every
 * tool's flags are; this file holds the scenario files' unit tables and
 * bounds.
 */
#include "scn_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tool_parse.h"

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

/* Every value is read by tool_parse_unit (tools/lib/tool_parse.h), as the
   flags of every tool are: a decimal number as strtod reads it, then
   nothing or one suffix of the value's table.  The scenario files' rules
   are its flags: blanks allowed around the number and its unit, units in
   any case, no sign. */
#define SCN_UNIT_FLAGS (TOOL_UNIT_NOCASE | TOOL_UNIT_SPACE | TOOL_UNIT_UNSIGNED)

/* Sizes in bytes: K, M, G (and KiB, MiB, GiB) binary, kB, MB, GB
   decimal. */
static const tool_unit size_units[] = {
    {"", 1},        {"B", 1},         {"K", 1024},       {"KiB", 1024},
    {"M", 1048576}, {"MiB", 1048576}, {"G", 1073741824}, {"GiB", 1073741824},
    {"kB", 1e3},    {"MB", 1e6},      {"GB", 1e9},       {NULL, 0}};

/* Rates in bits per second; a unit is required. */
static const tool_unit rate_units[] = {
    {"T", 1e12},   {"Tbps", 1e12}, {"G", 1e9},    {"Gbps", 1e9},
    {"Gb/s", 1e9}, {"M", 1e6},     {"Mbps", 1e6}, {"Mb/s", 1e6},
    {"K", 1e3},    {"Kbps", 1e3},  {"bps", 1},    {NULL, 0}};

/* Times in picoseconds (netsim's unit); a unit is required but for 0. */
static const tool_unit time_units[] = {{"ps", 1},   {"ns", 1e3}, {"us", 1e6},
                                       {"ms", 1e9}, {"s", 1e12}, {NULL, 0}};

/* Probabilities: a fraction, or a percentage. */
static const tool_unit prob_units[] = {{"", 1}, {"%", 0.01}, {NULL, 0}};

/* Plain numbers (bit-error rates, ratios, gains): no unit. */
static const tool_unit no_units[] = {{"", 1}, {NULL, 0}};

/* read_value reads |v| with |units| into |*x|, the unit applied: a scale
   of 1 or more multiplies, a scale below 1 (the percent) divides by its
   reciprocal, a whole number, so that "35%" is 35 / 100, the double
   nearest 0.35, and not 35 * 0.01, one unit in the last place above it
   (0.01 is not exact in binary).  Returns 0, or -1 when |v| is not a
   number with one of the units or without one where |units| has no ""
   entry (then |*bare| is set, if not NULL, and |*x| holds the number). */
static int read_value(const char *v, const tool_unit *units, double *x,
                      int *bare) {
  const tool_unit *u;

  if (bare) {
    *bare = 0;
  }
  if (tool_parse_unit(v, units, SCN_UNIT_FLAGS, x, &u) != 0) {
    return -1;
  }
  if (u == NULL) {
    if (bare) {
      *bare = 1;
    }
    return -1;
  }
  if (u->scale < 1) {
    *x /= round(1 / u->scale);
  } else {
    *x *= u->scale;
  }
  return 0;
}

int scn_parse_num(const char *v, double *x) {
  return read_value(v, no_units, x, NULL);
}

int sim_parse_uint(const char *v, uint64_t max, uint64_t *out,
                   const char **why) {
  char buf[24];
  const char *end;
  size_t n;
  uint64_t x;

  *why = "a whole number";
  /* Blanks around it are trimmed, and leading zeros, which the value
     does not need: a 64-bit number then has at most 20 digits. */
  while (isspace((unsigned char)*v)) {
    ++v;
  }
  while (v[0] == '0' && isdigit((unsigned char)v[1])) {
    ++v;
  }
  end = v + strlen(v);
  while (end > v && isspace((unsigned char)end[-1])) {
    --end;
  }
  n = (size_t)(end - v);
  if (n >= sizeof(buf)) {
    return -1;
  }
  memcpy(buf, v, n);
  buf[n] = '\0';
  if (tool_parse_u64(buf, 0, UINT64_MAX, &x) != 0) {
    return -1;
  }
  if (x > max) {
    static char msg[64];
    snprintf(msg, sizeof(msg), "a whole number up to %llu",
             (unsigned long long)max);
    *why = msg;
    return -1;
  }
  *out = x;
  return 0;
}

int sim_parse_size(const char *v, uint64_t *out, const char **why) {
  double x;

  *why = "a size in bytes, e.g. 9000, 64K, 1M or 2G (K = 1024; "
         "kB/MB/GB = 1000s)";
  if (read_value(v, size_units, &x, NULL) != 0 || x > 1e15 || x != floor(x)) {
    return -1;
  }
  *out = (uint64_t)x;
  return 0;
}

int sim_parse_rate(const char *v, uint64_t *out, const char **why) {
  double x;

  *why = "a rate, e.g. 100G, 25Gbps, 500M or 800Mbps (bits per second)";
  if (read_value(v, rate_units, &x, NULL) != 0) {
    return -1;
  }
  if (x < 1000 || x > 1.8e13) {
    *why = "a rate between 1 Kbps and 18 Tbps";
    return -1;
  }
  *out = (uint64_t)llround(x);
  return 0;
}

int sim_parse_time(const char *v, uint64_t *out, const char **why) {
  double x;
  int bare;

  *why = "a time with a unit, e.g. 500ns, 10us, 200ms or 2s";
  if (read_value(v, time_units, &x, &bare) != 0) {
    if (bare && x == 0) {
      *out = 0;
      return 0;
    }
    return -1;
  }
  if (x > 1e17) {
    *why = "a time up to 100000 s";
    return -1;
  }
  *out = (uint64_t)llround(x);
  return 0;
}

int sim_parse_prob(const char *v, double *out, const char **why) {
  static char hint[96];
  double x;
  int bare;

  *why = "a probability, 0 to 1 (e.g. 0.001) or a percentage (0.1%)";
  if (read_value(v, prob_units, &x, NULL) != 0 || x > 1) {
    /* A bare number is a fraction, so "1" is certain; "2" is not a
       probability, and was most likely meant as a percentage. */
    bare = read_value(v, no_units, &x, NULL) == 0;
    if (bare && x > 1 && x <= 100) {
      snprintf(hint, sizeof(hint),
               "a probability from 0 to 1 (a bare number is a fraction): "
               "did you mean %g%%?",
               x);
      *why = hint;
    }
    return -1;
  }
  *out = x;
  return 0;
}

int sim_parse_ber(const char *v, double *out, const char **why) {
  double x;

  *why = "a bit-error rate from 0 to 1, errors per bit, e.g. 1e-6";
  if (scn_parse_num(v, &x) != 0 || x > 1) {
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

int scn_parse_bool(const char *v, int *out, const char **why) {
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
/* Text                                                                     */

void scn_trim(char *s) {
  size_t n = strlen(s), i = 0;

  while (n > 0 && isspace((unsigned char)s[n - 1])) {
    s[--n] = '\0';
  }
  while (s[i] && isspace((unsigned char)s[i])) {
    ++i;
  }
  memmove(s, s + i, n - i + 1);
}

/* Splits a comma list into |items| (pointers into |buf|). */
uint32_t scn_split_list(char *buf, char **items, uint32_t max, char sep) {
  uint32_t n = 0;
  char *p = buf;

  for (;;) {
    char *q = strchr(p, sep);
    if (q) {
      *q = '\0';
    }
    scn_trim(p);
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
