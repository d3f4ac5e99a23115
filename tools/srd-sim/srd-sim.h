/*
 * srd-sim.h: what srd-sim's commands share (srd-sim.c: run, check and
 * bench; sweep.c: sweep and merge).
 */
#ifndef SRD_SIM_H
#define SRD_SIM_H

#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_scn.h"

/* run_args are run's and check's command line. */
typedef struct run_args {
  const char *file, *outdir, *only;
  int json, quiet, plot;
  /* pcap_set is --pcap's "scenario.pcap=LINKS" (freed with sets). */
  char *pcap_set;
  /* sets are the |n_sets| --seed (seed 1) and --set values, in order. */
  struct {
    int seed;
    const char *val;
  } * sets;
  int n_sets;
} run_args;

/* stop_signal is the signal that asked srd-sim to stop (0: none); the
   runs watch it through sim_run_opts.interrupt. */
extern volatile sig_atomic_t stop_signal;

/* catch_signals has SIGINT and SIGTERM set stop_signal (a second one
   ends srd-sim at once); signal_name names |sig|. */
void catch_signals(void);
const char *signal_name(int sig);

/* help prints --help to stdout and exits. */
void help(void) __attribute__((noreturn));

/* next_opt is tool_getopt_r (--help and --version answered, exit 0)
   with srd-sim's words for bad usage (exit 2). */
int next_opt(int argc, char **argv, const char *shortopts,
             const struct option *longopts);

/* in_list says whether |name| is an item of comma list |list| (NULL:
   every name). */
int in_list(const char *list, const char *name);

/* scn_status is the exit status of a scenario call's failure |rv|: 1
   when memory ran out, 2 for a bad scenario. */
int scn_status(int rv);

/* load reads |a|'s scenario into |raw|, applies --seed and --set in
   order, compiles it into |base| and checks every sweep point and
   --only.  Returns 0, or the exit status (said on stderr; |raw| and
   |base| are then freed). */
int load(const run_args *a, scn_raw *raw, sim_scn *base);

/* compile_point compiles sweep point |p| of |base| (or |raw| itself
   without a sweep) into |ps|, its raw list in |pr| (initialised by the
   caller; free both).  Returns 0, or the failing scenario call's value
   with the message in |err|. */
int compile_point(const scn_raw *raw, const sim_scn *base, uint32_t p,
                  scn_raw *pr, sim_scn *ps, char *err, size_t errlen);

/* mkdir_p creates |dir| and its parents.  Returns 0, or -1 with the
   message in |err|. */
int mkdir_p(const char *dir, char *err, size_t errlen);

/* remove_stage deletes staging folder |stage| and the files in it;
   publish renames every file of |stage| into |dir| and removes it
   (0, or -1 with the message in |err|). */
void remove_stage(const char *stage);
int publish(const char *stage, const char *dir, char *err, size_t errlen);

/* plot runs srd-plot on |dir|: the one beside this program, else PATH
   (0, or -1 said on stderr). */
int plot(const char *argv0, const char *dir, int quiet);

/* cmd_sweep and cmd_merge are "srd-sim sweep" and "srd-sim merge"
   (sweep.c); argv[0] is the command.  They return the exit status. */
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif /* SRD_SIM_H */
