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

/* sim_report_table prints |n| results side by side (one sweep point). */
void sim_report_table(FILE *f, const sim_result *res, uint32_t n);

/* sim_report_json prints one JSON object with a "transports" array of
   all |n| results. */
void sim_report_json(FILE *f, const sim_scn *s, const sim_result *res,
                     uint32_t n);

/* sim_report_csv writes flows.csv, messages.csv, throughput.csv,
   queues.csv and paths.csv into directory |dir|, corruption.csv when a
   result ran with bit errors and duplicates.csv when one ran with
   duplication.  Returns 0, or -1 with
   a message in |err|. */
int sim_report_csv(const char *dir, const sim_result *res, uint32_t n,
                   char *err, size_t errlen);

#endif /* SIM_REPORT_H */
