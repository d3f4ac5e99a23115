/*
 * sim_report.h: what srd-sim prints and writes: the side-by-side table,
 * the JSON summary and the CSV files (docs/scenarios.md, "Output").
 * Everything here is a function of the results only, never of the wall
 * clock, so two runs with the same seed write identical bytes.
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdio.h>

#include "sim_run.h"

/* sim_report_header prints what the scenario is. */
void sim_report_header(FILE *f, const sim_scn *s);

/* sim_report_header_text returns sim_report_header's text for |s| in a
   malloc'd string (the caller frees it), or NULL when out of memory. */
char *sim_report_header_text(const sim_scn *s);

/* A sweep's header.  |hdr| holds the header text of each of the |n|
   sweep points (sim_report_header_text of each point compiled), so that
   what is printed is what each point runs, not the file's values before
   the sweep.  sim_report_header_common prints the lines every point
   shares, and for a line that differs what they all begin with and
   "(varies: see each sweep point)".  sim_report_header_own returns the
   lines of point |p| that not every point shares, in a malloc'd string
   ("" when none; the caller frees it), or NULL when out of memory. */
void sim_report_header_common(FILE *f, char *const *hdr, uint32_t n);
char *sim_report_header_own(char *const *hdr, uint32_t n, uint32_t p);

/* sim_report_table prints |n| results side by side (one sweep point):
   the point's heading, then |own| (the point's own header lines,
   sim_report_header_own; NULL or "" for none), then the table, every
   column as wide as its widest value. */
void sim_report_table(FILE *f, const sim_result *res, uint32_t n,
                      const char *own);

/* sim_report_skip names a run that never started: a transport, and its
   sweep point (label "" and index 0 without a sweep). */
typedef struct sim_report_skip {
  char transport[SCN_NAME_MAX];
  char point[256];
  uint32_t point_idx;
} sim_report_skip;

#define SIM_REPORT_MAX_SKIPS (SCN_MAX_SWEEP_POINTS * SCN_MAX_TRANSPORTS)

/* sim_report_stop says how srd-sim was stopped early (a signal): the
   results it has are what ran (the last one may be res->interrupted),
   and |n_not_run| runs never started. */
typedef struct sim_report_stop {
  sim_report_skip not_run[SIM_REPORT_MAX_SKIPS];
  uint32_t n_not_run;
} sim_report_stop;

/* sim_report_json prints one JSON object with a "transports" array of
   all |n| results.  With |stop| (NULL: every run completed, and the
   object is as it always was) the object also says "interrupted": true,
   "interrupted_at" (the transport, point and simulated time where a run
   was cut short, or null when none was) and "not_run", and the result
   that was cut short says "interrupted": true.  Every string is escaped
   (tools/lib/tool_json.h), so that the object is valid JSON whatever the
   scenario's names hold.  Flushes |f| (never closes it).  Returns 0, or
   -1 when writing to |f| failed. */
int sim_report_json(FILE *f, const sim_scn *s, const sim_result *res,
                    uint32_t n, const sim_report_stop *stop);

/* sim_report_stopped prints, under the table, what an interrupted run of
   srd-sim measured and left out: which of the |n| results was cut short
   and at what simulated time of |s|'s duration, and the runs in |stop|
   that never started. */
void sim_report_stopped(FILE *f, const sim_scn *s, const sim_result *res,
                        uint32_t n, const sim_report_stop *stop);

/* sim_report_csv writes flows.csv, messages.csv, throughput.csv,
   flow_throughput.csv, queues.csv, paths.csv, links.csv, runs.csv and
   faults.csv into directory |dir|, corruption.csv when a result ran
   with bit errors and duplicates.csv when one ran with duplication.
   Returns 0, or -1 with a message in |err|. */
int sim_report_csv(const char *dir, const sim_result *res, uint32_t n,
                   char *err, size_t errlen);

#endif /* SIM_REPORT_H */
