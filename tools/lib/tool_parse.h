/*
 * tool_parse.h: the values the tools read from their command lines:
 * whole numbers, sizes with K/M/G suffixes, bounded decimals, durations
 * and rates with units, and comma-separated lists.
 *
 * Every function here is pure: it never prints, never exits and keeps no
 * state, so that a program can phrase its own message (tool_opt.h's
 * tool_arg_* functions do that for command-line flags) and so that other
 * readers of values with units (the scenario files' parser) can be built
 * on tool_parse_unit() and its unit tables.  Each returns 0 on success
 * and a negative errno value on failure, and leaves |*out| untouched on
 * failure:
 *
 *   -EINVAL  the text is not a value of that kind (a syntax error);
 *   -ERANGE  it is one, but outside [min, max] (or beyond 64 bits).
 *
 * Syntax shared by all of them: no blanks anywhere (" 5" and "5 " are
 * errors) unless TOOL_UNIT_SPACE is given to tool_parse_unit().
 */
#ifndef TOOL_PARSE_H
#define TOOL_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* tool_parse_u64 reads a whole number: one or more decimal digits and
   nothing else (no sign, no blanks, no 0x).  Returns 0 and the number in
   |*out| if it lies in [|min|, |max|], -ERANGE if it does not (or does
   not fit 64 bits), -EINVAL if |s| is not a number. */
int tool_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* tool_parse_size reads a size: a whole number as tool_parse_u64 reads
   it, optionally followed by one of the binary suffixes K (2^10), M
   (2^20) or G (2^30), either case ("64K", "1m").  The product is exact
   (no floating point): every 64-bit value can be written.  Returns 0 and
   the size in |*out|, -ERANGE if it is outside [|min|, |max|] or does not
   fit 64 bits, -EINVAL for anything else ("1.5K", "12X", "K", ""). */
int tool_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* tool_parse_double reads a decimal number the way strtod(3) does
   ("1", "-0.5", "1e3", ".5"; hexadecimal floats too), which must be the
   whole of |s| and finite.  Returns 0 and the number in |*out| if it lies
   in [|min|, |max|], -ERANGE if it does not (or overflows), -EINVAL if
   |s| is not a number ("inf" and "nan" are not). */
int tool_parse_double(const char *s, double min, double max, double *out);

/* tool_unit is one suffix a number may carry and what it multiplies the
   number by.  A table of them ends with {NULL, 0}. */
typedef struct tool_unit {
  const char *name; /* the suffix, e.g. "us"; "" stands for no suffix */
  double scale;     /* what one of it is worth in the table's base unit */
} tool_unit;

/* tool_parse_unit flags. */
/* TOOL_UNIT_NOCASE matches suffixes without regard to case ("MS" is
   "ms"; a table that has both "M" and "m" must not use it). */
#define TOOL_UNIT_NOCASE 0x1u
/* TOOL_UNIT_SPACE allows blanks before the number, between the number
   and its suffix and after the suffix ("  64 K "). */
#define TOOL_UNIT_SPACE 0x2u
/* TOOL_UNIT_UNSIGNED rejects a sign ("+1", "-1", "-0"). */
#define TOOL_UNIT_UNSIGNED 0x4u

/* tool_parse_unit is the reader every value with a unit is built on: a
   finite decimal number as tool_parse_double reads it, then either
   nothing or exactly one suffix of |units| (the longest suffix is not
   searched for: the rest of the text must equal a suffix).  |flags| is
   a combination of the TOOL_UNIT_* flags.  It returns 0 with the number
   as written in |*num| and the matched entry in |*unit|: the entry whose
   name is "" when there was no suffix, or NULL when there was none and
   the table has no "" entry (the caller decides whether a bare number is
   allowed; the scale is not applied, so that the caller can keep an
   exact value or round as it needs).  Returns -EINVAL if |s| is not a
   number followed by one of the suffixes, and -ERANGE if the number
   overflows a double.  |unit| may be NULL when the caller needs only the
   number. */
int tool_parse_unit(const char *s, const tool_unit *units, unsigned flags,
                    double *num, const tool_unit **unit);

/* tool_units_time is the table of durations in nanoseconds: ns (1), us
   (1e3), ms (1e6), s (1e9).  Case matters ("Ms" is not a unit). */
extern const tool_unit tool_units_time[];

/* tool_units_rate is the table of rates in bits per second, decimal
   multiples: bps, K and Kbps (1e3), M and Mbps (1e6), G and Gbps (1e9),
   T and Tbps (1e12); "Gb/s" and the like too.  Case matters. */
extern const tool_unit tool_units_rate[];

/* Scales of the caller's unit for tool_parse_duration (nanoseconds in
   one of it) and tool_parse_rate (bits per second in one of it). */
#define TOOL_NS 1.0
#define TOOL_US 1e3
#define TOOL_MS 1e6
#define TOOL_SEC 1e9
#define TOOL_BPS 1.0
#define TOOL_GBPS 1e9

/* tool_parse_duration reads a duration: a number, with a suffix of
   tool_units_time or none, and returns it in the caller's unit, |unit|
   nanoseconds (TOOL_US for a flag documented in microseconds): "10" and
   "10us" are 10 with |unit| TOOL_US, "1ms" is 1000 and "500ns" 0.5.  A
   bare number is exactly what tool_parse_double reads.  Returns 0 and
   the value in |*out| if it lies in [|min|, |max|] (in the caller's
   unit), -ERANGE if it does not, -EINVAL if |s| is not a duration. */
int tool_parse_duration(const char *s, double unit, double min, double max,
                        double *out);

/* tool_parse_rate reads a rate with a suffix of tool_units_rate or none,
   and returns it in the caller's unit, |unit| bits per second
   (TOOL_GBPS for a flag documented in Gb/s: "100" and "100G" are 100,
   "800M" is 0.8).  Returns as tool_parse_duration does. */
int tool_parse_rate(const char *s, double unit, double min, double max,
                    double *out);

/* tool_list_next splits a comma-separated list.  |*cursor| starts at
   the list's text; each call copies the next item into |item| (|cap|
   bytes, with its terminating NUL) and moves |*cursor| past it, to NULL
   after the last item.  Items are never empty: "", "1,,2", ",1" and "1,"
   are errors.  Returns 1 when it produced an item, 0 when |*cursor| is
   NULL (the list is done), -EINVAL for an empty item, -ERANGE for an item
   of |cap| bytes or more; after an error |*cursor| is NULL. */
int tool_list_next(const char **cursor, char *item, size_t cap);

/* tool_parse_mask reads a list of indices below |n| (at most 64), such
   as the paths "0,3,17", as a bit mask: bit i set for index i (an index
   given twice is set once).  Every item is a whole number as
   tool_parse_u64 reads it.  Returns 0 and the mask in |*out|, -EINVAL if
   an item is not a number or the list is empty or has an empty item,
   -ERANGE if an index is not below |n|. */
int tool_parse_mask(const char *s, unsigned n, uint64_t *out);

#endif /* TOOL_PARSE_H */
