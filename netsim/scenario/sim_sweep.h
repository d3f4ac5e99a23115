/*
 * sim_sweep.h: a scenario over many seeds (srd-sim sweep and merge,
 * docs/scenarios.md "Sweeps over seeds"): which runs a sweep holds, the
 * two files a sweep leaves in its folder, the figures each run
 * contributes, and the summaries across seeds.
 *
 * A sweep is every (sweep point, transport) pair of a scenario -- a
 * "cell" -- run at every seed of a list.  Run u of the n_cells x n_seeds
 * is cell u / n_seeds at seed u % n_seeds, so that whoever runs a share
 * of them (a process, an MPI rank, a Slurm array task) takes every
 * n-th run and the expensive cells spread over the shares.
 *
 * Its folder holds:
 *   sweep.manifest  what the sweep is: the scenario, its file (name and
 *                   a hash of its bytes) and every --set, the seeds, each cell
 * (point label, transport name and kind); every share writes the same bytes, so
 *                   that a folder can only ever hold one sweep's runs
 *   runs/RUN        one file per finished run, "p<POINT>-<TRANSPORT>-
 *                   s<SEED>": its cell, seed and figures
 * Both are line-based text ("KEY VALUE"), written here and read back by
 * the parsers below, which reject anything they did not write (fuzzed:
 * test/fuzz/fuzz_sweep.c).  Numbers are written with 17 significant
 * digits, so a figure read back is the double that was measured, and a
 * sweep merged from any number of shares, processes or machines gives
 * the same bytes as one run in one process.
 */
#ifndef SIM_SWEEP_H
#define SIM_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "sim_run.h"
#include "tool_stats.h"

/* At most this many seeds, and this many --set values recorded. */
#define SIM_SWEEP_MAX_SEEDS 100000u
#define SIM_SWEEP_MAX_SETS 64u
/* At most this many runs (cells x seeds): their figures are held in
   memory to be merged, 200 MB. */
#define SIM_SWEEP_MAX_RUNS 1000000u
#define SIM_SWEEP_MAX_CELLS (SCN_MAX_SWEEP_POINTS * SCN_MAX_TRANSPORTS)

/* sim_sweep_fig is one figure a run contributes: its key in the files,
   its row in the table (|label|, the value times |scale| with |prec|
   decimals). */
typedef struct sim_sweep_fig {
  const char *key;
  const char *label;
  double scale;
  int prec;
} sim_sweep_fig;

extern const sim_sweep_fig sim_sweep_figs[];
#define SIM_SWEEP_NFIG 25u

/* sim_sweep_cell is one (sweep point, transport) of a sweep. */
typedef struct sim_sweep_cell {
  uint32_t point;
  char transport[SCN_NAME_MAX];
  char kind[16];
} sim_sweep_cell;

/* sim_sweep is what a sweep.manifest says. */
typedef struct sim_sweep {
  char scenario[SCN_NAME_MAX];
  char file[SCN_PATH_MAX];
  /* file_hash: FNV-1a (64 bits) of the file's bytes when the sweep
     began, so that a share that read an edited file is another sweep. */
  uint64_t file_hash;
  /* sets: the --set values, in order (each malloc'd). */
  char *sets[SIM_SWEEP_MAX_SETS];
  uint32_t n_sets;
  /* only: --only's list ("" when none). */
  char only[256];
  /* seeds: n_seeds of them, ascending, no repeats (malloc'd). */
  uint64_t *seeds;
  uint32_t n_seeds;
  /* points: their labels ("" without a sweep: one point). */
  char label[SCN_MAX_SWEEP_POINTS][256];
  uint32_t n_points;
  sim_sweep_cell cell[SIM_SWEEP_MAX_CELLS];
  uint32_t n_cells;
} sim_sweep;

/* sim_sweep_init and sim_sweep_fini set up and free |sw|. */
void sim_sweep_init(sim_sweep *sw);
void sim_sweep_fini(sim_sweep *sw);

/* sim_sweep_parse_seeds reads a seed list, "A-B", "A,B,C" or any mix
   ("1-10,20,30-32"), into |sw|'s seeds (sorted, each once).  Returns 0,
   or -1 with what was wrong in |err| (a bad number, B below A, more
   than SIM_SWEEP_MAX_SEEDS), or SIM_SCN_NOMEM. */
int sim_sweep_parse_seeds(sim_sweep *sw, const char *list, char *err,
                          size_t errlen);

/* sim_sweep_fmt_seeds writes |sw|'s seeds as the shortest list of
   ranges ("1-30", "1-10,20"); a list that does not fit ends "...". */
void sim_sweep_fmt_seeds(const sim_sweep *sw, char *buf, size_t len);

/* sim_sweep_n_runs is n_cells x n_seeds. */
uint64_t sim_sweep_n_runs(const sim_sweep *sw);

/* sim_sweep_run_name writes run |u|'s file name ("p0-srd-s7"). */
void sim_sweep_run_name(const sim_sweep *sw, uint64_t u, char *buf, size_t len);

/* sim_sweep_manifest writes |sw| as sweep.manifest's text to |f|.
   Returns 0, or -1 when a value holds a line break (it could not be
   read back; the caller says which) or the write failed. */
int sim_sweep_manifest(FILE *f, const sim_sweep *sw);

/* sim_sweep_parse_manifest reads sweep.manifest's |len| bytes of |text|
   (named |name| in messages) into |sw| (initialised; free it after a
   failure too).  Returns 0, -1 with a message naming the line, or
   SIM_SCN_NOMEM. */
int sim_sweep_parse_manifest(sim_sweep *sw, const char *name, const char *text,
                             size_t len, char *err, size_t errlen);

/* sim_sweep_figures fills |v| (SIM_SWEEP_NFIG values) with what result
   |r| measured, NaN where it measured nothing (no bounded flows: no
   completion times; no RPC class: no RPC figures). */
void sim_sweep_figures(const sim_result *r, double *v);

/* sim_sweep_write_run writes run |u|'s file: its cell, seed and the
   figures |v| (NaNs left out).  Returns 0 or -1 (the write failed). */
int sim_sweep_write_run(FILE *f, const sim_sweep *sw, uint64_t u,
                        const double *v);

/* sim_sweep_parse_run reads a run file's |len| bytes of |text| (named
   |name| in messages) that must be run |u| of |sw|: its cell and seed
   must be u's, every figure known, none twice, each a finite number.
   Fills |v| (NaN for the figures it does not have).  Returns 0, or -1
   with a message. */
int sim_sweep_parse_run(const sim_sweep *sw, uint64_t u, const char *name,
                        const char *text, size_t len, double *v, char *err,
                        size_t errlen);

/* The outputs of a complete sweep, from |v|: n_runs x SIM_SWEEP_NFIG
   figures, run u's at v[u * SIM_SWEEP_NFIG].  Each returns 0 or -1 (a
   write failed), and flushes |f| (never closes it).
   sim_sweep_table: per point, a column per transport, a row per figure
   measured: "mean ± ci95" over the seeds.
   sim_sweep_runs_csv: runs.csv, one row per run.
   sim_sweep_stats_csv: stats.csv, one row per cell and figure.
   sim_sweep_json: one JSON object (stats.json), every cell's figures'
   n, mean, sd, ci95, min and max. */
int sim_sweep_table(FILE *f, const sim_sweep *sw, const double *v);
int sim_sweep_runs_csv(FILE *f, const sim_sweep *sw, const double *v);
int sim_sweep_stats_csv(FILE *f, const sim_sweep *sw, const double *v);
int sim_sweep_json(FILE *f, const sim_sweep *sw, const double *v);

/* sim_sweep_cell_stats summarises figure |fig| of cell |c| over the
   seeds (tool_stats_of). */
tool_stats sim_sweep_cell_stats(const sim_sweep *sw, const double *v,
                                uint32_t c, uint32_t fig);

#endif /* SIM_SWEEP_H */
