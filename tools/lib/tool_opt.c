/*
 * tool_opt.c: names, errors, --help, --version and flag values
 * (tool_opt.h).  The wording of the messages follows GNU getopt's and
 * coreutils' ("Try 'ls --help' for more information.").
 */
#include "tool_opt.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tool_parse.h"

#ifndef SRD_VERSION
#  error "SRD_VERSION (the Makefile's VERSION) must be defined"
#endif

static const tool_info *info;

void tool_init(const tool_info *i) {
  assert(i != NULL && i->name != NULL && i->help != NULL);
  info = i;
}

const char *tool_name(void) {
  return info ? info->name : "?";
}

const char *tool_version_string(void) {
  return SRD_VERSION;
}

void tool_print_version(FILE *f) {
  fprintf(f, "%s (srd) %s\n", tool_name(), SRD_VERSION);
  if (info && info->version_extra) {
    info->version_extra(f);
  }
}

static void vsay(const char *fmt, va_list ap) {
  fflush(stdout);
  fprintf(stderr, "%s: ", tool_name());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void tool_die(const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
  exit(1);
}

void tool_usage_error(const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsay(fmt, ap);
  va_end(ap);
  fprintf(stderr, "Try '%s --help' for more information.\n", tool_name());
  exit(2);
}

/* takes_no_arg says whether |val| is the value of a long option without
   an argument. */
static int takes_no_arg(const struct option *longopts, int val) {
  const struct option *o;

  for (o = longopts; o && o->name; ++o) {
    if (o->val == val && o->flag == NULL && o->has_arg == no_argument) {
      return 1;
    }
  }
  return 0;
}

/* long_error fills |e| for the long option typed as |word|. */
static void long_error(tool_opt_error *e, int kind, const char *word) {
  e->kind = kind;
  e->word = word;
  snprintf(e->name, sizeof(e->name), "%.*s", (int)strcspn(word, "="), word);
}

/* short_error fills |e| for short option |c|. */
static void short_error(tool_opt_error *e, int kind, int c) {
  e->kind = kind;
  e->word = NULL;
  snprintf(e->name, sizeof(e->name), "-%c", c);
}

int tool_getopt_r(int argc, char **argv, const char *shortopts,
                  const struct option *longopts, tool_opt_error *e) {
  /* A leading ':' makes getopt tell a missing argument (':') from an
     unknown option ('?'); it goes after GNU's '+' or '-' mode. */
  char opts[256];
  size_t mode = (shortopts[0] == '+' || shortopts[0] == '-') ? 1 : 0;
  const char *arg;
  int c, is_long;

  assert(strlen(shortopts) + 2 <= sizeof(opts));
  memcpy(opts, shortopts, mode);
  opts[mode] = ':';
  strcpy(opts + mode + 1, shortopts + mode);
  opterr = 0;
  c = getopt_long(argc, argv, opts, longopts, NULL);
  /* The argument that went wrong: getopt has moved past it, except for a
     short option inside a group ("-xq"), where optopt says which. */
  arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
  is_long = strncmp(arg, "--", 2) == 0;
  switch (c) {
  case TOOL_OPT_HELP:
    info->help(stdout);
    exit(fflush(stdout) == 0 ? 0 : 1);
  case TOOL_OPT_VERSION:
    tool_print_version(stdout);
    exit(fflush(stdout) == 0 ? 0 : 1);
  case ':':
    if (is_long) {
      long_error(e, TOOL_OPT_ERR_MISSING, arg);
    } else {
      short_error(e, TOOL_OPT_ERR_MISSING, optopt);
    }
    return '?';
  case '?':
    if (optopt == 0) {
      long_error(e, TOOL_OPT_ERR_UNKNOWN, arg);
    } else if (is_long && strchr(arg, '=') && takes_no_arg(longopts, optopt)) {
      long_error(e, TOOL_OPT_ERR_UNWANTED, arg);
    } else if (optopt > 0 && optopt < 128) {
      short_error(e, TOOL_OPT_ERR_UNKNOWN, optopt);
    } else {
      long_error(e, TOOL_OPT_ERR_UNKNOWN, arg);
    }
    return '?';
  default:
    return c;
  }
}

int tool_getopt(int argc, char **argv, const char *shortopts,
                const struct option *longopts) {
  tool_opt_error e;
  int c = tool_getopt_r(argc, argv, shortopts, longopts, &e);

  if (c != '?') {
    return c;
  }
  switch (e.kind) {
  case TOOL_OPT_ERR_MISSING:
    if (e.word) {
      tool_usage_error("option '%s' requires an argument", e.word);
    }
    tool_usage_error("option requires an argument -- '%c'", e.name[1]);
  case TOOL_OPT_ERR_UNWANTED:
    tool_usage_error("option '%s' doesn't allow an argument", e.name);
  default:
    if (e.word) {
      tool_usage_error("unrecognized option '%s'", e.word);
    }
    tool_usage_error("invalid option -- '%c'", e.name[1]);
  }
}

/* bad_value reports |rv| for |s| of |opt|: |what| says what was expected
   ("a whole number in 1..64"). */
static void bad_value(const char *opt, const char *s, const char *what)
    __attribute__((noreturn));

static void bad_value(const char *opt, const char *s, const char *what) {
  tool_usage_error("bad value for %s: '%s' (expected %s)", opt, s, what);
}

uint64_t tool_arg_u64(const char *opt, const char *s, uint64_t min,
                      uint64_t max) {
  char what[96];
  uint64_t v;

  if (tool_parse_u64(s, min, max, &v) != 0) {
    snprintf(what, sizeof(what), "a whole number in %" PRIu64 "..%" PRIu64, min,
             max);
    bad_value(opt, s, what);
  }
  return v;
}

uint64_t tool_arg_size(const char *opt, const char *s, uint64_t min,
                       uint64_t max) {
  char what[128];
  uint64_t v;

  if (tool_parse_size(s, min, max, &v) != 0) {
    snprintf(what, sizeof(what),
             "a whole number in %" PRIu64 "..%" PRIu64
             ", with an optional K, M or G suffix",
             min, max);
    bad_value(opt, s, what);
  }
  return v;
}

double tool_arg_double(const char *opt, const char *s, double min, double max) {
  char what[96];
  double v;

  if (tool_parse_double(s, min, max, &v) != 0) {
    snprintf(what, sizeof(what), "a number in [%g, %g]", min, max);
    bad_value(opt, s, what);
  }
  return v;
}

static const char *time_unit_name(double unit) {
  return unit == TOOL_NS   ? "ns"
         : unit == TOOL_US ? "us"
         : unit == TOOL_MS ? "ms"
                           : "s";
}

double tool_arg_duration(const char *opt, const char *s, double unit,
                         double min, double max) {
  char what[128];
  double v;

  if (tool_parse_duration(s, unit, min, max, &v) != 0) {
    snprintf(what, sizeof(what),
             "a duration in [%g, %g] %s; suffixes ns, us, ms, s allowed", min,
             max, time_unit_name(unit));
    bad_value(opt, s, what);
  }
  return v;
}

static const char *rate_unit_name(double unit) {
  return unit == TOOL_GBPS ? "Gb/s"
         : unit == 1e6     ? "Mb/s"
         : unit == 1e3     ? "Kb/s"
                           : "b/s";
}

double tool_arg_rate(const char *opt, const char *s, double unit, double min,
                     double max) {
  char what[128];
  double v;

  if (tool_parse_rate(s, unit, min, max, &v) != 0) {
    snprintf(what, sizeof(what),
             "a rate in [%g, %g] %s; suffixes K, M, G, T (bits/s) allowed", min,
             max, rate_unit_name(unit));
    bad_value(opt, s, what);
  }
  return v;
}

uint64_t tool_arg_mask(const char *opt, const char *s, unsigned n) {
  char what[96];
  uint64_t v;

  if (tool_parse_mask(s, n, &v) != 0) {
    snprintf(what, sizeof(what), "indices 0..%u, comma separated",
             n ? n - 1 : 0);
    bad_value(opt, s, what);
  }
  return v;
}
