/*
 * scn_int.h: what the files of the scenario compiler share (internal; the
 * public interface is sim_scn.h).
 *
 *   scn_load.c     reading: libinih into a scn_raw, --set, CDF files
 *   scn_units.c    values with units (sizes, times, rates, probabilities)
 *                  and the text helpers every step uses
 *   scn_compile.c  the raw entries into a sim_scn, section by section
 *   scn_check.c    the checks that need the whole scenario, and the
 *                  defaults that follow from it
 *   scn_sweep.c    the sweep key, and the raw list of each sweep point
 *
 * Errors: a function that can fail returns 0 or -1; where it takes
 * |err|/|errlen| or a scn_cc, the message is written there (always
 * NUL-terminated, truncated to fit).  "Out of memory" is the only error
 * that does not name a file, a line and a key; a step that runs out sets
 * scn_cc.nomem, so that sim_scn_compile returns SIM_SCN_NOMEM.
 */
#ifndef SCN_INT_H
#define SCN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim_scn.h"

/* ------------------------------------------------------------------------ */
/* Raw entries (scn_load.c)                                                 */

/* scn_strdup returns a malloc'd copy of |s| (the caller frees it), or NULL
   when out of memory. */
char *scn_strdup(const char *s);

/* scn_raw_add appends the entry |sec|.|key| = |val| to |r|, copying the
   three strings; |src| is not copied and must outlive |r| (a file name
   held by a scn_raw, or a string literal such as "--set").  Returns 0, or
   -1 when out of memory (|r| is unchanged). */
int scn_raw_add(scn_raw *r, const char *sec, const char *key, const char *val,
                const char *src, int line);

/* ------------------------------------------------------------------------ */
/* Text and values without a unit (scn_units.c)                             */

/* scn_trim removes leading and trailing white space from |s| in place. */
void scn_trim(char *s);

/* scn_split_list cuts |buf| at every |sep| (writing NULs into it), trims
   each item and points |items| at the first |max| of them.  Returns how
   many items there are, which may exceed |max| (the caller reports "too
   many"); an empty |buf| is one empty item. */
uint32_t scn_split_list(char *buf, char **items, uint32_t max, char sep);

/* scn_parse_num reads |v|, a finite decimal number without a sign or a
   unit, blanks around it allowed (tool_parse_unit with the scenario
   files' rules), into |*x|.  Returns 0, or -1 when |v| is anything else
   (|*x| is then unspecified). */
int scn_parse_num(const char *v, double *x);

/* scn_parse_bool reads 0/1, yes/no, on/off or true/false (any case).
   Returns 0, or -1 with what was expected in |*why| (a static string). */
int scn_parse_bool(const char *v, int *out, const char **why);

/* ------------------------------------------------------------------------ */
/* The compiler's context (scn_compile.c)                                   */

/* scn_cc is one compilation: the scenario being filled, the entries it
   comes from, where the message goes, and the entries of keys that are
   checked once everything is read (so that their errors can name the
   line).  sim_scn_compile owns it; scn_check and scn_sweep borrow it. */
typedef struct scn_cc {
  sim_scn *s;
  const scn_raw *r;
  char *err;
  size_t errlen;
  /* cur is the entry being compiled. */
  const scn_entry *cur;
  /* Lines of keys checked after all entries are read (NULL: not given). */
  const scn_entry *at_transports, *at_src, *at_dst, *at_pairs, *at_ranks,
      *at_senders, *at_receiver, *at_cdf, *at_topo, *at_wl, *at_lanes,
      *at_sweep, *at_k, *at_bytes, *at_count, *at_message;
  /* nomem: the failure was memory, not the scenario (SIM_SCN_NOMEM). */
  int nomem;
} scn_cc;

/* scn_fail writes the message of a bad scenario into c->err: "FILE:LINE:
   [SECTION] KEY = VALUE: WHAT" for an entry of a file, "--set
   SECTION.KEY=VALUE: WHAT" for one from the command line, "FILE: WHAT"
   when |e| is NULL (a problem of the whole scenario).  WHAT is |fmt|
   formatted, truncated to 255 characters.  Returns -1, so that callers
   can write "return scn_fail(...)". */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int scn_fail(scn_cc *c, const scn_entry *e, const char *fmt, ...);

/* ------------------------------------------------------------------------ */
/* After every entry is read (scn_check.c, scn_sweep.c)                     */

/* scn_check checks what only the whole scenario can tell (hosts named by
   the workload and faults exist in the topology, src differs from dst,
   rto_max is not below rto_min, the random workload's CDF file reads)
   and fills the defaults that depend on it: n_hosts, dst (the last
   host), ranks and senders (every host), flows (1000), a stream's
   interval (10 us, or from its rate), and a warmup of a tenth of the
   duration for unbounded flows.  Returns 0, or -1 with the message in
   c->err. */
int scn_check(scn_cc *c);

/* scn_sweep reads [scenario] sweep (c->at_sweep; none, or an empty value,
   is no sweep) into c->s: its keys and, for each, the same number of
   values, which it allocates (sim_scn_fini frees them).  The values are
   checked only when a point is compiled.  Returns 0, or -1 with the
   message in c->err (too many keys or values, a key without a section,
   unequal counts, an empty value, out of memory). */
int scn_sweep(scn_cc *c);

#endif /* SCN_INT_H */
