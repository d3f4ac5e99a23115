/*
 * sim_tbl.h: the tables srd-sim prints (sim_report.c's per run,
 * sim_sweep.c's across seeds), built first and then printed with every
 * column as wide as its widest value (at least 13 characters, and one
 * more than the widest so that neighbours never touch): no value is cut,
 * and columns stay apart however long the numbers grow (k=16's counts,
 * "45.2% of 1280").  Widths count characters, not bytes ("±" is one).
 * A table holds at most SCN_MAX_TRANSPORTS columns (the callers print
 * more as several tables).
 */
#ifndef SIM_TBL_H
#define SIM_TBL_H

#include <stdint.h>
#include <stdio.h>

#include "sim_scn.h"

#define TBL_ROWS 48
#define TBL_CELL 64
#define TBL_MIN_WIDTH 13
#define TBL_LABEL_WIDTH 30

typedef struct sim_tbl {
  uint32_t rows, col;
  char label[TBL_ROWS][TBL_CELL];
  char cell[TBL_ROWS][SCN_MAX_TRANSPORTS][TBL_CELL];
} sim_tbl;

/* sim_tbl_row starts a row labelled |l| (rows beyond TBL_ROWS are
   dropped: the table has fewer). */
void sim_tbl_row(sim_tbl *t, const char *l);

/* sim_tbl_cell puts |s| in the next column of the current row. */
void sim_tbl_cell(sim_tbl *t, const char *s);

/* sim_tbl_print writes |t|'s |n| columns to |f|, each as wide as it
   needs. */
void sim_tbl_print(FILE *f, const sim_tbl *t, uint32_t n);

#endif /* SIM_TBL_H */
