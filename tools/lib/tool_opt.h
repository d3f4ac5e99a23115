/*
 * tool_opt.h: what every program in tools/ does the same way: its name in
 * messages, fatal errors (exit status 1), usage errors (exit status 2,
 * with "Try 'PROG --help' for more information."), --help and --version,
 * and reading flag values with tool_parse.h, exiting with a message that
 * names the flag when a value is bad.
 *
 * --help and --version follow the GNU coding standards, so that
 * help2man(1) can make a man page of any tool:
 *
 *   --version   "PROG (srd) 0.1.0" on the first line (the version is the
 *               Makefile's VERSION), then what the tool adds;
 *   --help      "Usage: PROG ..." first, then a description, the options
 *               in sections that end in a colon ("Options:"), each option
 *               indented with its description beside it, and the help and
 *               version options (TOOL_OPT_HELP_TEXT) last.
 *
 * Both print to stdout and exit with status 0.  A program calls
 * tool_init() first; the functions below are for the program's one
 * thread (they keep the tool_info in a static).
 */
#ifndef TOOL_OPT_H
#define TOOL_OPT_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "tool_parse.h" /* TOOL_US and the other units of tool_arg_* */

/* tool_info describes a program. */
typedef struct tool_info {
  /* name is the program's name in every message ("srd-loopback"). */
  const char *name;
  /* help prints the whole of --help to |f|. */
  void (*help)(FILE *f);
  /* version_extra, if not NULL, prints more lines of --version after the
     first ("libsrd 0.1.0, wire protocol 2"). */
  void (*version_extra)(FILE *f);
} tool_info;

/* tool_init makes |info| (which must outlive every call below) the
   program's description. */
void tool_init(const tool_info *info);

/* tool_name returns the program's name. */
const char *tool_name(void);

/* tool_version_string returns the version every tool reports (the
   Makefile's VERSION, "0.1.0"). */
const char *tool_version_string(void);

/* tool_print_version prints --version's text to |f|: "PROG (srd) VERSION"
   and then the tool's version_extra lines. */
void tool_print_version(FILE *f);

/* tool_die prints "PROG: " and the message |fmt| to stderr, and exits
   with status 1 (a run that failed). */
void tool_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* tool_usage_error prints "PROG: " and the message |fmt|, then "Try 'PROG
   --help' for more information." to stderr, and exits with status 2 (bad
   usage). */
void tool_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* TOOL_OPT_HELP and TOOL_OPT_VERSION are the getopt values of --help and
   --version; a program's own long-only options use values from 256 up
   and below these. */
#define TOOL_OPT_HELP 0x7f00
#define TOOL_OPT_VERSION 0x7f01

/* TOOL_OPT_STD is the long-option table's entries for --help and
   --version: put it before the {0, 0, 0, 0} that ends the table. */
#define TOOL_OPT_STD                                                           \
  {"help", no_argument, NULL, TOOL_OPT_HELP}, {                                \
    "version", no_argument, NULL, TOOL_OPT_VERSION                             \
  }

/* TOOL_OPT_HELP_TEXT is the two lines --help ends its options with,
   their descriptions at column 23 as the tools' own options have them. */
#define TOOL_OPT_HELP_TEXT                                                     \
  "  --help               display this help and exit\n"                        \
  "  --version            output version information and exit\n"

/* tool_getopt is getopt_long(3) (|shortopts|, |longopts|; argv may be
   permuted as getopt_long does) that answers what every tool answers
   alike: --help prints the help to stdout and exits 0, --version prints
   the version and exits 0, and an unknown option, a missing argument or
   an argument given to an option that takes none is a usage error
   (tool_usage_error: exit 2, naming the option).  It returns the next
   option's value as getopt_long does, with optarg set, and -1 when the
   options are done (optind is then the first operand).  getopt's own
   messages are off (opterr is set to 0). */
int tool_getopt(int argc, char **argv, const char *shortopts,
                const struct option *longopts);

/* tool_opt_error says what was wrong with an option (tool_getopt_r). */
typedef struct tool_opt_error {
  /* kind is one of the TOOL_OPT_ERR_* below. */
  int kind;
  /* word is, for a long option, the command-line word at fault as typed
     ("--json=1", "--bogus"); NULL for a short one. */
  const char *word;
  /* name is the option as a message names it: a long one's word up to
     any '=' ("--json"; cut at 63 bytes), a short one "-" and its letter
     ("-x", also from inside a group such as "-qx"). */
  char name[64];
} tool_opt_error;

/* TOOL_OPT_ERR_UNKNOWN: an option the program does not have (or a long
   prefix that matches several). */
#define TOOL_OPT_ERR_UNKNOWN 1
/* TOOL_OPT_ERR_MISSING: an option without the argument it requires. */
#define TOOL_OPT_ERR_MISSING 2
/* TOOL_OPT_ERR_UNWANTED: a long option that takes no argument given one
   ("--json=1"). */
#define TOOL_OPT_ERR_UNWANTED 3

/* tool_getopt_r is tool_getopt for a program that words its own usage
   errors: --help and --version are answered the same way (exit 0), but
   bad usage returns '?' with |*e| saying what and which option, instead
   of exiting; the program then reports it (tool_usage_error, exit 2).
   tool_getopt is tool_getopt_r with GNU getopt's messages. */
int tool_getopt_r(int argc, char **argv, const char *shortopts,
                  const struct option *longopts, tool_opt_error *e);

/* The tool_arg_* functions read the value |s| of flag |opt| ("--queue")
   with the tool_parse_* function of the same name, and return it; a bad
   value is a usage error (exit 2) that names the flag, the value and what
   was expected, e.g. "srd-loopback: bad value for --paths: '65'
   (expected a whole number in 1..64)". */

/* tool_arg_u64: a whole number in [|min|, |max|] (tool_parse_u64). */
uint64_t tool_arg_u64(const char *opt, const char *s, uint64_t min,
                      uint64_t max);

/* tool_arg_size: a size with K/M/G suffixes in [|min|, |max|]
   (tool_parse_size). */
uint64_t tool_arg_size(const char *opt, const char *s, uint64_t min,
                       uint64_t max);

/* tool_arg_double: a number in [|min|, |max|] (tool_parse_double). */
double tool_arg_double(const char *opt, const char *s, double min, double max);

/* tool_arg_duration: a duration in the caller's unit, |unit| nanoseconds
   (TOOL_US), within [|min|, |max|] of that unit (tool_parse_duration). */
double tool_arg_duration(const char *opt, const char *s, double unit,
                         double min, double max);

/* tool_arg_rate: a rate in the caller's unit, |unit| bits per second
   (TOOL_GBPS), within [|min|, |max|] of that unit (tool_parse_rate). */
double tool_arg_rate(const char *opt, const char *s, double unit, double min,
                     double max);

/* tool_arg_mask: a comma-separated list of indices below |n| as a bit
   mask (tool_parse_mask). */
uint64_t tool_arg_mask(const char *opt, const char *s, unsigned n);

#endif /* TOOL_OPT_H */
