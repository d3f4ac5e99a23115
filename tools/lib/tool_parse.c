/*
 * tool_parse.c: values on command lines (tool_parse.h).
 *
 * Sizes and whole numbers are read with strtoull and multiplied in
 * integers, so that a seed or a size is exact to the last bit; numbers
 * with units go through strtod once, in tool_parse_unit, so that every
 * reader of units accepts the same numbers.
 */
#include "tool_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const tool_unit tool_units_time[] = {
    {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {NULL, 0}};

const tool_unit tool_units_rate[] = {
    {"bps", 1.0},  {"K", 1e3},     {"Kbps", 1e3},  {"Kb/s", 1e3}, {"M", 1e6},
    {"Mbps", 1e6}, {"Mb/s", 1e6},  {"G", 1e9},     {"Gbps", 1e9}, {"Gb/s", 1e9},
    {"T", 1e12},   {"Tbps", 1e12}, {"Tb/s", 1e12}, {NULL, 0}};

static const tool_unit no_units[] = {{NULL, 0}};

/* read_digits reads the whole number at the start of |s| (at least one
   digit, nothing before it) and points |*end| past it. */
static int read_digits(const char *s, uint64_t *v, const char **end) {
  char *e;
  unsigned long long x;

  if (!isdigit((unsigned char)*s)) {
    return -EINVAL;
  }
  errno = 0;
  x = strtoull(s, &e, 10);
  if (errno == ERANGE) {
    return -ERANGE;
  }
  *v = x;
  *end = e;
  return 0;
}

int tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
  const char *end;
  uint64_t v;
  int rv = read_digits(s, &v, &end);

  if (rv != 0) {
    return rv;
  }
  if (*end != '\0') {
    return -EINVAL;
  }
  if (v < min || v > max) {
    return -ERANGE;
  }
  *out = v;
  return 0;
}

int tool_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
  const char *end;
  uint64_t v, mult = 1;
  int rv = read_digits(s, &v, &end);

  if (rv != 0) {
    return rv;
  }
  switch (*end) {
  case 'K':
  case 'k':
    mult = 1ull << 10;
    ++end;
    break;
  case 'M':
  case 'm':
    mult = 1ull << 20;
    ++end;
    break;
  case 'G':
  case 'g':
    mult = 1ull << 30;
    ++end;
    break;
  }
  if (*end != '\0') {
    return -EINVAL;
  }
  if (v > UINT64_MAX / mult) {
    return -ERANGE;
  }
  v *= mult;
  if (v < min || v > max) {
    return -ERANGE;
  }
  *out = v;
  return 0;
}

static const char *skip_blanks(const char *s) {
  while (isspace((unsigned char)*s)) {
    ++s;
  }
  return s;
}

/* suffix_is says whether |s| is |name| (then only blanks, with
   TOOL_UNIT_SPACE). */
static int suffix_is(const char *s, const char *name, unsigned flags) {
  size_t n = strlen(name);

  if ((flags & TOOL_UNIT_NOCASE) ? strncasecmp(s, name, n) != 0
                                 : strncmp(s, name, n) != 0) {
    return 0;
  }
  s += n;
  if (flags & TOOL_UNIT_SPACE) {
    s = skip_blanks(s);
  }
  return *s == '\0';
}

int tool_parse_unit(const char *s, const tool_unit *units, unsigned flags,
                    double *num, const tool_unit **unit) {
  const tool_unit *u, *bare = NULL;
  const char *rest;
  char *end;
  double x;

  if (flags & TOOL_UNIT_SPACE) {
    s = skip_blanks(s);
  }
  /* strtod would skip blanks itself, and read "inf" and "nan". */
  if (*s == '\0' || isspace((unsigned char)*s)) {
    return -EINVAL;
  }
  if ((flags & TOOL_UNIT_UNSIGNED) && (*s == '-' || *s == '+')) {
    return -EINVAL;
  }
  errno = 0;
  x = strtod(s, &end);
  if (end == s) {
    return -EINVAL;
  }
  if (errno == ERANGE) {
    return -ERANGE;
  }
  if (!isfinite(x)) {
    return -EINVAL;
  }
  rest = end;
  if (flags & TOOL_UNIT_SPACE) {
    rest = skip_blanks(rest);
  }
  for (u = units; u->name; ++u) {
    if (u->name[0] == '\0') {
      bare = u;
    } else if (*rest != '\0' && suffix_is(rest, u->name, flags)) {
      break;
    }
  }
  if (u->name == NULL) {
    if (*rest != '\0') {
      return -EINVAL;
    }
    u = bare;
  }
  *num = x;
  if (unit) {
    *unit = u;
  }
  return 0;
}

int tool_parse_double(const char *s, double min, double max, double *out) {
  double x;
  int rv = tool_parse_unit(s, no_units, 0, &x, NULL);

  if (rv != 0) {
    return rv;
  }
  if (!(x >= min && x <= max)) {
    return -ERANGE;
  }
  *out = x;
  return 0;
}

/* scaled reads a number with a unit of |units| or none and converts it
   to the caller's unit, |unit| of the table's base unit. */
static int scaled(const char *s, const tool_unit *units, double unit,
                  double min, double max, double *out) {
  const tool_unit *u;
  double x;
  int rv = tool_parse_unit(s, units, 0, &x, &u);

  if (rv != 0) {
    return rv;
  }
  /* A bare number, or one in the caller's unit, is kept exactly as
     written; another unit is converted by the ratio of the two. */
  if (u != NULL && u->scale != unit) {
    x *= u->scale / unit;
  }
  if (!(x >= min && x <= max)) {
    return -ERANGE;
  }
  *out = x;
  return 0;
}

int tool_parse_duration(const char *s, double unit, double min, double max,
                        double *out) {
  return scaled(s, tool_units_time, unit, min, max, out);
}

int tool_parse_rate(const char *s, double unit, double min, double max,
                    double *out) {
  return scaled(s, tool_units_rate, unit, min, max, out);
}

int tool_list_next(const char **cursor, char *item, size_t cap) {
  const char *s = *cursor, *comma;
  size_t n;

  if (s == NULL) {
    return 0;
  }
  comma = strchr(s, ',');
  n = comma ? (size_t)(comma - s) : strlen(s);
  if (n == 0 || n >= cap) {
    *cursor = NULL;
    return n == 0 ? -EINVAL : -ERANGE;
  }
  memcpy(item, s, n);
  item[n] = '\0';
  *cursor = comma ? comma + 1 : NULL;
  return 1;
}

int tool_parse_mask(const char *s, unsigned n, uint64_t *out) {
  const char *cur = s;
  char item[128];
  uint64_t mask = 0, v;
  int rv;

  if (n > 64) {
    n = 64;
  }
  while ((rv = tool_list_next(&cur, item, sizeof(item))) > 0) {
    rv = tool_parse_u64(item, 0, UINT64_MAX, &v);
    if (rv != 0) {
      return rv;
    }
    if (v >= n) {
      return -ERANGE;
    }
    mask |= 1ull << v;
  }
  if (rv < 0) {
    return rv;
  }
  *out = mask;
  return 0;
}
