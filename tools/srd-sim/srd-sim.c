/*
 * srd-sim: run scenarios in the fabric simulator, SRD (the libsrd engine)
 * side by side with TCP, and benchmark the simulator.
 *
 *   srd-sim run SCENARIO.ini [-o DIR] [--seed N] [--set section.key=value]...
 *                            [--json] [--quiet] [--plot] [--only NAME,...]
 *   srd-sim check SCENARIO.ini [--set ...]
 *   srd-sim sweep SCENARIO.ini --seeds LIST [-o DIR] [-j N] [--share I/N] ...
 *   srd-sim merge [-o OUT] DIR...
 *   srd-sim bench [--k 8|16] [--ms N] [--seed N] [--json]
 *
 * docs/scenarios.md describes the scenario format and every output.
 * Exit status (docs/errors.md): 0 done, 1 a run failed (its outputs, or
 * -o DIR itself, could not be written, or memory ran out), 2 bad usage
 * or a bad scenario, 128 + N when signal N stopped it (130 for SIGINT,
 * 143 for SIGTERM): the run under way stops before its next event, what
 * ran is printed and written, marked interrupted, and the runs not
 * started are listed.
 *
 * Options, values, --help and --version, the clock and the JSON are
 * libsrdtool's (tools/lib); the usage errors keep srd-sim's words.
 *
 * With -o DIR the files are written into a fresh folder inside DIR and
 * renamed into DIR once complete, so that DIR never holds a half-written
 * or empty table: a run that fails or is interrupted before anything was
 * measured leaves DIR as it was.
 */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_report.h"
#include "sim_run.h"
#include "tool_clock.h"
#include "tool_json.h"
#include "tool_opt.h"
#include "tool_parse.h"

#include "srd-sim.h"

/* usage is --help, in the form help2man reads. */
static void usage(FILE *f) {
  fputs("Usage: srd-sim run SCENARIO.ini [OPTION]...\n"
        "  or:  srd-sim check SCENARIO.ini [--set SECTION.KEY=VALUE]...\n"
        "  or:  srd-sim sweep SCENARIO.ini --seeds LIST [OPTION]...\n"
        "  or:  srd-sim merge [-o OUT] [--json] [--plot] DIR...\n"
        "  or:  srd-sim bench [--k K] [--ms MS] [--seed N] [--json]\n"
        "Run scenarios in the fabric simulator: the libsrd engine (SRD) side "
        "by side\n"
        "with TCP on the same topology, workload, faults and seed.\n"
        "\n"
        "Commands:\n"
        "  run      run every transport the scenario lists (and every sweep "
        "point)\n"
        "           and print them side by side\n"
        "  check    read and check a scenario (and every sweep point) without "
        "running it\n"
        "  sweep    run every transport and sweep point at every seed of a "
        "list, in\n"
        "           parallel processes (or a share of them under mpirun, srun, "
        "a Slurm\n"
        "           array or --share), and print each figure's mean and 95% "
        "confidence\n"
        "           interval across the seeds\n"
        "  merge    merge the folders of a sweep's shares (e.g. from several "
        "machines)\n"
        "  bench    the simulator's speed: a k-ary fat tree at 100 Gb/s, "
        "permutation\n"
        "           traffic with SRD in every host (default: k=8 for 5 ms and "
        "k=16\n"
        "           for 1 ms)\n"
        "\n"
        "Options of run and check:\n"
        "  -o, --output=DIR     also write table.txt, summary.json and the CSV "
        "files\n"
        "                       into DIR\n"
        "      --seed=N         replace the scenario's seed\n"
        "      --set=SECTION.KEY=VALUE\n"
        "                       set any key, after the file (it wins); "
        "repeatable\n"
        "      --only=NAME[,NAME...]\n"
        "                       run only these transports\n"
        "      --json           print one JSON object instead of the tables\n"
        "  -q, --quiet          no progress bar, no per-run notes\n"
        "      --plot           draw the outputs of -o DIR with srd-plot "
        "(gnuplot)\n"
        "      --pcap=LINK[,LINK...]\n"
        "                       capture every packet that crosses these "
        "cables\n"
        "                       into DIR/TRANSPORT.pcap (a sweep: "
        "TRANSPORT.P.pcap);\n"
        "                       needs -o DIR (docs/pcap.md)\n"
        "Options of sweep (also --set, --only, --json, -q, --plot as run's):\n"
        "      --seeds=LIST     the seeds: N, A-B, or a list of them (1-30, "
        "1,5,9)\n"
        "  -o, --output=DIR     keep the runs and write the summaries in DIR "
        "(needed\n"
        "                       for shares); a run already there is not run "
        "again\n"
        "  -j, --jobs=N         processes at a time [the cores; 1 under a "
        "launcher]\n"
        "      --share=I/N      take runs I, I+N, ... (from 0): a share by "
        "hand, on a\n"
        "                       host list; else MPI's or Slurm's rank, or "
        "all\n"
        "Options of merge:\n"
        "  -o, --output=OUT     write the summaries in OUT [the first DIR]\n"
        "      --json, -q, --plot  as sweep's\n"
        "Options of bench:\n"
        "      --k=K            the fat tree's k (even, 2 to 64)\n"
        "      --ms=MS          simulated milliseconds (units ns, us, ms, s "
        "allowed)\n"
        "      --seed=N         the seed [1]\n"
        "      --json           print JSON\n"
        "Everywhere:\n"
        "  -h                   the same as --help\n" TOOL_OPT_HELP_TEXT "\n"
        "Ctrl-C (SIGINT) or SIGTERM stops a run before its next event: what "
        "ran is\n"
        "printed (and written with -o), marked interrupted; a second one ends "
        "srd-sim\n"
        "at once.\n"
        "\n"
        "Exit status: 0 when every run completed, 1 when a run failed or its "
        "outputs\n"
        "(or -o DIR) could not be written or memory ran out, 2 for bad usage "
        "or a\n"
        "bad scenario, 128 + N when signal N stopped it (130: SIGINT, 143: "
        "SIGTERM).\n"
        "\n"
        "The scenario format and every output: docs/scenarios.md (sweeps: "
        "\"Sweeps over\n"
        "seeds\").\n",
        f);
}

static const tool_info info = {"srd-sim", usage, NULL};

/* help prints --help to stdout and exits, for -h and "srd-sim help" (the
   lib answers --help itself). */
void help(void) {
  usage(stdout);
  exit(fflush(stdout) == 0 ? 0 : 1);
}

/* stop_signal is the signal that asked srd-sim to stop (0: none); the
   runs watch it through sim_run_opts.interrupt. */
volatile sig_atomic_t stop_signal;

static void on_signal(int sig) {
  stop_signal = sig;
}

/* catch_signals has SIGINT and SIGTERM stop the runs.  SA_RESTART keeps
   the writes of the outputs going; SA_RESETHAND lets a second signal end
   srd-sim at once. */
void catch_signals(void) {
  struct sigaction sa;

  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

const char *signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* next_opt is tool_getopt_r (--help and --version answered, exit 0)
   with srd-sim's words for bad usage (exit 2). */
int next_opt(int argc, char **argv, const char *shortopts,
             const struct option *longopts) {
  tool_opt_error e;
  int c = tool_getopt_r(argc, argv, shortopts, longopts, &e);

  if (c != '?') {
    return c;
  }
  switch (e.kind) {
  case TOOL_OPT_ERR_MISSING:
    tool_usage_error("%s needs a value", e.name);
  case TOOL_OPT_ERR_UNWANTED:
    tool_usage_error("%s takes no value", e.name);
  default:
    tool_usage_error("unknown option %s", e.name);
  }
}

int mkdir_p(const char *dir, char *err, size_t errlen) {
  char buf[1024];
  size_t i, n = strlen(dir);

  if (n == 0 || n >= sizeof(buf)) {
    snprintf(err, errlen, "-o: bad directory name");
    return -1;
  }
  memcpy(buf, dir, n + 1);
  for (i = 1; i <= n; ++i) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "-o %s: cannot create %s: %s", dir, buf,
                 strerror(errno));
        return -1;
      }
      buf[i] = c;
    }
  }
  return 0;
}

/* plot runs srd-plot on |dir|: the one beside this program, else PATH. */
int plot(const char *argv0, const char *dir, int quiet) {
  char self[PATH_MAX], cmd[PATH_MAX * 2 + 64];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const char *tool = "srd-plot";
  char beside[PATH_MAX + 16];
  int rv;

  (void)argv0;
  if (n > 0) {
    char *slash;
    self[n] = '\0';
    slash = strrchr(self, '/');
    if (slash) {
      *slash = '\0';
      snprintf(beside, sizeof(beside), "%s/srd-plot", self);
      if (access(beside, X_OK) == 0) {
        tool = beside;
      }
    }
  }
  snprintf(cmd, sizeof(cmd), "'%s' %s'%s'", tool, quiet ? "--quiet " : "", dir);
  rv = system(cmd);
  if (rv != 0) {
    fprintf(stderr, "srd-sim: srd-plot failed (is gnuplot installed?)\n");
    return -1;
  }
  return 0;
}

/* in_list says whether |name| is an item of comma list |list| (checked
   by parse_run: no empty item, none longer than a transport's name); a
   NULL list holds every name. */
int in_list(const char *list, const char *name) {
  const char *cur = list;
  char item[SCN_NAME_MAX];

  if (list == NULL) {
    return 1;
  }
  while (tool_list_next(&cur, item, sizeof(item)) > 0) {
    if (!strcmp(item, name)) {
      return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* run and check                                                            */

enum {
  OPT_SEED = 256,
  OPT_SET,
  OPT_ONLY,
  OPT_JSON,
  OPT_PLOT,
  OPT_K,
  OPT_MS,
  OPT_PCAP
};

/* parse_run reads run's (or check's) flags in |argv| (argv[0] is the
   command) into |a| (the caller frees a->sets).  -h, --help and
   --version are answered (exit 0), bad usage exits 2 and out of memory
   1. */
static void parse_run(int argc, char **argv, run_args *a) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"seed", required_argument, NULL, OPT_SEED},
      {"set", required_argument, NULL, OPT_SET},
      {"only", required_argument, NULL, OPT_ONLY},
      {"json", no_argument, NULL, OPT_JSON},
      {"quiet", no_argument, NULL, 'q'},
      {"plot", no_argument, NULL, OPT_PLOT},
      {"pcap", required_argument, NULL, OPT_PCAP},
      TOOL_OPT_STD,
      {NULL, 0, NULL, 0}};
  const char *cur, *why;
  char item[SCN_NAME_MAX];
  uint64_t seed;
  int c, rv;

  memset(a, 0, sizeof(*a));
  a->sets = calloc((size_t)argc + 1, sizeof(*a->sets));
  if (a->sets == NULL) {
    tool_die("out of memory");
  }
  optind = 0; /* a fresh scan: main's stopped at the command */
  while ((c = next_opt(argc, argv, "o:qh", opts)) != -1) {
    switch (c) {
    case 'o':
      a->outdir = optarg;
      break;
    case OPT_SEED:
    case OPT_SET:
      /* --seed N is --set scenario.seed=N, its value read as that key's. */
      if (c == OPT_SEED && sim_parse_uint(optarg, UINT64_MAX, &seed, &why)) {
        tool_usage_error("--seed %s: expected %s", optarg, why);
      }
      a->sets[a->n_sets].seed = c == OPT_SEED;
      a->sets[a->n_sets++].val = optarg;
      break;
    case OPT_ONLY:
      a->only = optarg;
      break;
    case OPT_JSON:
      a->json = 1;
      break;
    case 'q':
      a->quiet = 1;
      break;
    case OPT_PLOT:
      a->plot = 1;
      break;
    case OPT_PCAP:
      /* --pcap LINKS is --set scenario.pcap=LINKS. */
      free(a->pcap_set);
      if (asprintf(&a->pcap_set, "scenario.pcap=%s", optarg) < 0) {
        tool_die("out of memory");
      }
      a->sets[a->n_sets].seed = 0;
      a->sets[a->n_sets++].val = a->pcap_set;
      break;
    case 'h':
      help();
    }
  }
  if (a->pcap_set && a->outdir == NULL) {
    tool_usage_error("--pcap needs -o DIR (the captures are written there)");
  }
  if (optind < argc) {
    a->file = argv[optind];
  }
  if (optind + 1 < argc) {
    tool_usage_error("one scenario file at a time (got %s and %s)",
                     argv[optind], argv[optind + 1]);
  }
  if (a->file == NULL) {
    tool_usage_error("no scenario file");
  }
  cur = a->only;
  while ((rv = tool_list_next(&cur, item, sizeof(item))) > 0) {
    continue;
  }
  if (rv < 0) {
    tool_usage_error("--only %s: expected transport names separated by "
                     "commas",
                     a->only);
  }
}

/* scn_status is the exit status of a scenario call's failure |rv|: 1
   when memory ran out, 2 for a bad scenario. */
int scn_status(int rv) {
  return rv == SIM_SCN_NOMEM ? 1 : 2;
}

/* load reads |a|'s scenario into |raw|, applies --seed and --set in order
   and compiles it into |base|, then checks every sweep point and --only.
   Returns 0, or the exit status, 2 or 1 (scn_status; said on stderr;
   |raw| and |base| are then freed). */
int load(const run_args *a, scn_raw *raw, sim_scn *base) {
  char err[1024];
  int i, rv;
  uint32_t p, t, hits = 0;

  if ((rv = sim_scn_load(raw, a->file, err, sizeof(err))) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_raw_fini(raw);
    return scn_status(rv);
  }
  /* --seed and --set come after the file: they win. */
  for (i = 0; i < a->n_sets; ++i) {
    char buf[600];
    const char *v = a->sets[i].val;
    if (a->sets[i].seed) {
      snprintf(buf, sizeof(buf), "scenario.seed=%s", v);
      v = buf;
    }
    rv = sim_scn_set(raw, v, a->sets[i].seed ? "--seed" : "--set", 0, err,
                     sizeof(err));
    if (rv != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      sim_scn_raw_fini(raw);
      return scn_status(rv);
    }
  }
  if ((rv = sim_scn_compile(raw, base, err, sizeof(err))) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_raw_fini(raw);
    return scn_status(rv);
  }
  /* Check every sweep point before running anything. */
  for (p = 0; p < base->n_sweep_points; ++p) {
    scn_raw pr;
    sim_scn ps;
    sim_scn_raw_init(&pr);
    rv = sim_scn_point(raw, base, p, &pr, err, sizeof(err));
    if (rv == 0) {
      rv = sim_scn_compile(&pr, &ps, err, sizeof(err));
    }
    if (rv != 0) {
      char label[256];
      sim_scn_point_label(base, p, label, sizeof(label));
      fprintf(stderr, "srd-sim: sweep point %s: %s\n", label, err);
      sim_scn_raw_fini(&pr);
      sim_scn_fini(base);
      sim_scn_raw_fini(raw);
      return scn_status(rv);
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
  if (a->only) {
    for (t = 0; t < base->n_tr; ++t) {
      hits += in_list(a->only, base->tr[t].name);
    }
    if (hits == 0) {
      fprintf(stderr,
              "srd-sim: --only %s names none of the scenario's "
              "transports\n",
              a->only);
      sim_scn_fini(base);
      sim_scn_raw_fini(raw);
      return 2;
    }
  }
  return 0;
}

/* compile_point compiles sweep point |p| of |base| (or |raw| itself
   without a sweep) into |ps|, its raw list in |pr| (initialised by the
   caller; free both).  Returns 0, or what the failing scenario call
   returned (-1 or SIM_SCN_NOMEM) with the message in |err|. */
int compile_point(const scn_raw *raw, const sim_scn *base, uint32_t p,
                  scn_raw *pr, sim_scn *ps, char *err, size_t errlen) {
  int rv;

  if (base->n_sweep_points == 0) {
    return sim_scn_compile(raw, ps, err, errlen);
  }
  if ((rv = sim_scn_point(raw, base, p, pr, err, errlen)) != 0) {
    return rv;
  }
  return sim_scn_compile(pr, ps, err, errlen);
}

/* not_run lists in |stop| every run of the scenario (each point, each
   transport --only keeps) that has no result among the |n| of |res|. */
static void not_run(const run_args *a, const scn_raw *raw, const sim_scn *base,
                    const sim_result *res, uint32_t n, sim_report_stop *stop) {
  uint32_t n_points = base->n_sweep_points ? base->n_sweep_points : 1;
  uint32_t p, t, i;
  char err[1024];

  stop->n_not_run = 0;
  for (p = 0; p < n_points; ++p) {
    scn_raw pr;
    sim_scn ps;
    sim_scn_raw_init(&pr);
    if (compile_point(raw, base, p, &pr, &ps, err, sizeof(err)) != 0) {
      sim_scn_raw_fini(&pr);
      continue; /* checked before the runs: cannot happen */
    }
    for (t = 0; t < ps.n_tr; ++t) {
      sim_report_skip *k;
      if (!in_list(a->only, ps.tr[t].name)) {
        continue;
      }
      for (i = 0; i < n; ++i) {
        if (res[i].point_idx == p && !strcmp(res[i].transport, ps.tr[t].name)) {
          break;
        }
      }
      if (i < n || stop->n_not_run == SIM_REPORT_MAX_SKIPS) {
        continue;
      }
      k = &stop->not_run[stop->n_not_run++];
      snprintf(k->transport, sizeof(k->transport), "%s", ps.tr[t].name);
      k->point[0] = '\0';
      if (base->n_sweep_points) {
        sim_scn_point_label(base, p, k->point, sizeof(k->point));
      }
      k->point_idx = p;
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
}

/* ------------------------------------------------------------------------ */
/* The outputs of -o DIR                                                    */

/* remove_stage deletes staging folder |stage| and the files in it. */
void remove_stage(const char *stage) {
  DIR *d = opendir(stage);
  struct dirent *e;

  if (d != NULL) {
    while ((e = readdir(d)) != NULL) {
      char path[PATH_MAX + 300];
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
        continue;
      }
      snprintf(path, sizeof(path), "%s/%s", stage, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(stage);
}

/* publish renames every file of staging folder |stage| into |dir| (each
   rename replaces the file of that name at once) and removes |stage|.
   Returns 0, or -1 with the message in |err|. */
int publish(const char *stage, const char *dir, char *err, size_t errlen) {
  DIR *d = opendir(stage);
  struct dirent *e;
  int rv = 0;

  if (d == NULL) {
    snprintf(err, errlen, "%.900s: cannot read: %s", stage, strerror(errno));
    return -1;
  }
  while (rv == 0 && (e = readdir(d)) != NULL) {
    char from[PATH_MAX + 300], to[PATH_MAX + 300];
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
      continue;
    }
    snprintf(from, sizeof(from), "%s/%s", stage, e->d_name);
    snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
    if (rename(from, to) != 0) {
      snprintf(err, errlen, "%.900s: cannot write: %s", to, strerror(errno));
      rv = -1;
    }
  }
  closedir(d);
  remove_stage(stage);
  return rv;
}

/* write_outputs writes summary.json and the CSV files of the |n| results
   into |stage|.  Returns 0, or -1 with the message in |err|. */
static int write_outputs(const char *stage, const sim_scn *base,
                         const sim_result *res, uint32_t n,
                         const sim_report_stop *stop, char *err,
                         size_t errlen) {
  char path[PATH_MAX + 32];
  FILE *f;

  snprintf(path, sizeof(path), "%s/summary.json", stage);
  f = fopen(path, "w");
  if (f == NULL) {
    snprintf(err, errlen, "%.900s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  if ((sim_report_json(f, base, res, n, stop) != 0) | (fclose(f) != 0)) {
    snprintf(err, errlen, "%.900s: write failed", path);
    return -1;
  }
  return sim_report_csv(stage, res, n, err, errlen);
}

/* point_headers returns the header text of each of |base|'s sweep points
   (compiled from |raw|), in a malloc'd array of malloc'd strings
   (free_headers frees it), so that the header says what each point
   runs; NULL without a sweep, or when out of memory (then |*nomem|). */
static char **point_headers(const scn_raw *raw, const sim_scn *base,
                            int *nomem) {
  char **hdr;
  uint32_t p;
  char err[1024];

  *nomem = 0;
  if (base->n_sweep_points == 0) {
    return NULL;
  }
  hdr = calloc(base->n_sweep_points, sizeof(*hdr));
  if (hdr == NULL) {
    *nomem = 1;
    return NULL;
  }
  for (p = 0; p < base->n_sweep_points; ++p) {
    scn_raw pr;
    sim_scn ps;
    sim_scn_raw_init(&pr);
    if (compile_point(raw, base, p, &pr, &ps, err, sizeof(err)) != 0) {
      /* Every point was compiled once by load(): only memory can fail. */
      sim_scn_raw_fini(&pr);
      break;
    }
    hdr[p] = sim_report_header_text(&ps);
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
    if (hdr[p] == NULL) {
      break;
    }
  }
  if (p < base->n_sweep_points) {
    uint32_t i;
    for (i = 0; i < p; ++i) {
      free(hdr[i]);
    }
    free(hdr);
    *nomem = 1;
    return NULL;
  }
  return hdr;
}

/* free_headers frees point_headers' |hdr| of |n| strings (NULL: none). */
static void free_headers(char **hdr, uint32_t n) {
  uint32_t i;

  for (i = 0; hdr && i < n; ++i) {
    free(hdr[i]);
  }
  free(hdr);
}

/* print_header prints the scenario's header to |f|: |base|'s, or with a
   sweep the lines its points share (the others go under each point). */
static void print_header(FILE *f, const sim_scn *base, char *const *hdr) {
  if (hdr) {
    sim_report_header_common(f, hdr, base->n_sweep_points);
  } else {
    sim_report_header(f, base);
  }
}

/* ------------------------------------------------------------------------ */
/* The runs                                                                 */

static int cmd_run(int argc, char **argv, int check_only) {
  run_args a;
  scn_raw raw;
  sim_scn base;
  char err[1024], stage[PATH_MAX] = "", pcap[PATH_MAX + 80];
  int pcap_noted = 0;
  sim_result *res = NULL;
  sim_report_stop *stop = NULL;
  uint32_t n_res = 0, cap_res = 0, p, t, n_points;
  sim_run_opts o;
  FILE *table = NULL;
  char **hdr = NULL;
  int rc, failed_write = 0, nomem;

  parse_run(argc, argv, &a);
  if (!check_only) {
    /* Caught from the start: a signal while the scenario loads stops
       the runs before the first one (not the default's silent end). */
    catch_signals();
  }
  sim_scn_raw_init(&raw);
  if ((rc = load(&a, &raw, &base)) != 0) {
    free(a.sets);
    free(a.pcap_set);
    return rc;
  }
  free(a.sets);
  free(a.pcap_set);
  a.sets = NULL;
  a.pcap_set = NULL;
  n_points = base.n_sweep_points ? base.n_sweep_points : 1;
  if (check_only) {
    printf("%s: ok (%u hosts, %u transport(s), %u point(s))\n", a.file,
           base.n_hosts, base.n_tr, n_points);
    sim_scn_fini(&base);
    sim_scn_raw_fini(&raw);
    return 0;
  }
  if (a.plot && a.outdir == NULL) {
    tool_usage_error("--plot needs -o DIR");
  }
  /* From here on a failure is the run's (exit 1): -o DIR, its files and
     memory. */
  if (a.outdir && mkdir_p(a.outdir, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_fini(&base);
    sim_scn_raw_fini(&raw);
    return 1;
  }
  if (a.outdir) {
    /* Everything is written here first, and renamed into DIR once
       complete. */
    char path[PATH_MAX + 32];
    int n = snprintf(stage, sizeof(stage), "%s/.srd-sim-XXXXXX", a.outdir);
    if (n < 0 || (size_t)n >= sizeof(stage) || mkdtemp(stage) == NULL) {
      fprintf(stderr, "srd-sim: -o %s: cannot create a folder there: %s\n",
              a.outdir, strerror(errno));
      sim_scn_fini(&base);
      sim_scn_raw_fini(&raw);
      return 1;
    }
    snprintf(path, sizeof(path), "%s/table.txt", stage);
    table = fopen(path, "w");
    if (table == NULL) {
      fprintf(stderr, "srd-sim: %s: cannot write: %s\n", path, strerror(errno));
      remove_stage(stage);
      sim_scn_fini(&base);
      sim_scn_raw_fini(&raw);
      return 1;
    }
  }
  memset(&o, 0, sizeof(o));
  o.records = a.outdir != NULL;
  o.progress = !a.quiet && isatty(STDERR_FILENO);
  o.sample_queues = 1;
  o.interrupt = &stop_signal;
  hdr = point_headers(&raw, &base, &nomem);
  if (nomem) {
    fprintf(stderr, "srd-sim: out of memory\n");
    rc = 1;
  }
  if (!a.json && rc == 0) {
    print_header(stdout, &base, hdr);
  }
  if (table && rc == 0) {
    print_header(table, &base, hdr);
  }
  for (p = 0; p < n_points && rc == 0 && !stop_signal; ++p) {
    scn_raw pr;
    sim_scn ps;
    uint32_t first = n_res;
    char label[256] = "";
    sim_scn_raw_init(&pr);
    if (base.n_sweep_points) {
      sim_scn_point_label(&base, p, label, sizeof(label));
    }
    if ((rc = compile_point(&raw, &base, p, &pr, &ps, err, sizeof(err))) != 0) {
      /* Every point was compiled once by load(): only memory can fail. */
      fprintf(stderr, "srd-sim: %s\n", err);
      rc = scn_status(rc);
      sim_scn_raw_fini(&pr);
      break;
    }
    for (t = 0; t < ps.n_tr && !stop_signal; ++t) {
      double w0;
      sim_result *r;
      if (!in_list(a.only, ps.tr[t].name)) {
        continue;
      }
      if (n_res == cap_res) {
        uint32_t ncap = cap_res ? 2 * cap_res : 8;
        sim_result *nr = realloc(res, ncap * sizeof(*nr));
        if (nr == NULL) {
          fprintf(stderr, "srd-sim: out of memory\n");
          rc = 1;
          break;
        }
        res = nr;
        cap_res = ncap;
      }
      r = &res[n_res];
      /* The run's capture: TRANSPORT.pcap, or TRANSPORT.P.pcap at sweep
         point P (from 0), in DIR.  Without -o there is nowhere to put it
         (--pcap refuses that; a file's key is skipped, said once). */
      o.pcap = NULL;
      if (ps.n_pcap > 0 && stage[0]) {
        if (base.n_sweep_points) {
          snprintf(pcap, sizeof(pcap), "%s/%s.%u.pcap", stage, ps.tr[t].name,
                   p);
        } else {
          snprintf(pcap, sizeof(pcap), "%s/%s.pcap", stage, ps.tr[t].name);
        }
        o.pcap = pcap;
      } else if (ps.n_pcap > 0 && !pcap_noted) {
        fprintf(stderr, "srd-sim: [scenario] pcap needs -o DIR: no capture\n");
        pcap_noted = 1;
      }
      w0 = tool_now_s();
      if (sim_run(&ps, t, &o, r, err, sizeof(err)) != 0) {
        fprintf(stderr, "srd-sim: %s%s%s: %s\n", ps.tr[t].name,
                label[0] ? " at " : "", label, err);
        sim_result_fini(r);
        rc = 1;
        break;
      }
      if (r->interrupted && r->events == 0) {
        /* Stopped before its first event: it never ran, and is listed
           with the runs not started. */
        sim_result_fini(r);
        break;
      }
      snprintf(r->point, sizeof(r->point), "%s", label);
      r->point_idx = p;
      ++n_res;
      if (!a.quiet) {
        char at[32] = "";
        if (r->interrupted) {
          sim_fmt_time(r->end, at, sizeof(at));
        }
        fprintf(stderr, "  %s%s%s: %.2f s of wall time, %llu events%s%s",
                ps.tr[t].name, label[0] ? " at " : "", label, tool_now_s() - w0,
                (unsigned long long)r->events,
                r->interrupted ? ", interrupted at " : "", at);
        if (o.pcap) {
          fprintf(stderr, ", %llu packets captured in %s",
                  (unsigned long long)r->pcap_pkts, strrchr(o.pcap, '/') + 1);
        }
        fprintf(stderr, "\n");
      }
      if (r->interrupted) {
        break;
      }
    }
    /* The table of what the point measured, also when a run failed or a
       signal stopped it (but none for a point with nothing measured). */
    if (n_res > first || (rc == 0 && !stop_signal)) {
      char *own = hdr ? sim_report_header_own(hdr, n_points, p) : NULL;
      if (hdr && own == NULL) {
        fprintf(stderr, "srd-sim: out of memory\n");
        rc = 1;
      }
      if (!a.json) {
        sim_report_table(stdout, res + first, n_res - first, own);
        fflush(stdout);
      }
      if (table) {
        sim_report_table(table, res + first, n_res - first, own);
      }
      free(own);
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
  if (stop_signal && rc == 0) {
    /* Say what was cut short and what never ran, wherever the tables
       went; a signal after the last run cut nothing and marks nothing. */
    uint32_t i, cut = 0;
    stop = malloc(sizeof(*stop));
    if (stop == NULL) {
      fprintf(stderr, "srd-sim: out of memory\n");
      rc = 1;
    } else {
      not_run(&a, &raw, &base, res, n_res, stop);
      for (i = 0; i < n_res; ++i) {
        cut += res[i].interrupted;
      }
      if (cut == 0 && stop->n_not_run == 0) {
        free(stop);
        stop = NULL;
      }
    }
    if (stop) {
      sim_report_stopped(a.json ? stderr : stdout, &base, res, n_res, stop);
      if (table) {
        sim_report_stopped(table, &base, res, n_res, stop);
      }
    }
  }
  if ((rc == 0 && a.json && n_res > 0 &&
       sim_report_json(stdout, &base, res, n_res, stop) != 0) |
      (fflush(stdout) != 0) | ferror(stdout)) {
    fprintf(stderr, "srd-sim: standard output: write failed\n");
    rc = 1;
  }
  if (table && fclose(table) != 0) {
    fprintf(stderr, "srd-sim: %s/table.txt: write failed\n", a.outdir);
    rc = 1;
    failed_write = 1;
  }
  if (a.outdir && n_res > 0 && rc == 0) {
    if (write_outputs(stage, &base, res, n_res, stop, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      rc = 1;
      failed_write = 1;
    }
  }
  if (a.outdir) {
    /* Nothing measured, or not all of it written: DIR stays as it was.
       A run that failed keeps the table of what ran before it. */
    if (n_res == 0 || failed_write) {
      remove_stage(stage);
    } else if (publish(stage, a.outdir, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      rc = 1;
    } else if (rc == 0 && !a.quiet) {
      fprintf(stderr,
              "  wrote %s/{table.txt,summary.json,flows.csv,"
              "messages.csv,throughput.csv,queues.csv,paths.csv,"
              "links.csv}\n",
              a.outdir);
    }
  }
  if (rc == 0 && a.plot && !stop_signal &&
      plot(argv[0], a.outdir, a.quiet) != 0) {
    rc = 1;
  }
  if (stop_signal) {
    fprintf(stderr, "srd-sim: interrupted by %s: %s\n",
            signal_name(stop_signal),
            n_res == 0     ? "nothing was measured, nothing written"
            : stop == NULL ? "after every run completed (nothing left out)"
            : a.outdir ? "what ran is printed and written, marked interrupted"
                       : "what ran is printed, marked interrupted");
    if (rc == 0) {
      rc = 128 + stop_signal;
    }
  }
  for (p = 0; p < n_res; ++p) {
    sim_result_fini(&res[p]);
  }
  free(res);
  free(stop);
  free_headers(hdr, base.n_sweep_points);
  sim_scn_fini(&base);
  sim_scn_raw_fini(&raw);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* bench                                                                    */

/* bench_json writes one benchmark run |res| (k |k|, |ms| simulated
   milliseconds, peak memory |rss| MiB) as an object. */
static void bench_json(tool_json *j, uint32_t k, double ms, double rss,
                       const sim_result *res) {
  tool_json_obj_begin(j);
  tool_json_kv_u64(j, "k", k);
  tool_json_kv_u64(j, "hosts", k * k * k / 4);
  tool_json_kv_numf(j, "ms", "%g", ms);
  tool_json_kv_str(j, "transport", "srd");
  tool_json_kv_u64(j, "events", res->events);
  tool_json_kv_u64(j, "packet_hops", res->hops);
  tool_json_kv_numf(j, "wall_s", "%.4f", res->wall_s);
  tool_json_kv_numf(j, "events_per_s", "%.0f",
                    (double)res->events / res->wall_s);
  tool_json_kv_numf(j, "packet_hops_per_s", "%.0f",
                    (double)res->hops / res->wall_s);
  tool_json_kv_numf(j, "sim_to_wall", "%.6f", ms / 1e3 / res->wall_s);
  tool_json_kv_numf(j, "peak_rss_mb", "%.1f", rss);
  tool_json_kv_numf(j, "throughput_fraction", "%.4f", res->tput_fraction);
  tool_json_kv_u64(j, "drops", res->drops);
  tool_json_key(j, "trace_hash");
  tool_json_strf(j, "%016llx", (unsigned long long)res->trace_hash);
  tool_json_obj_end(j);
}

static int cmd_bench(int argc, char **argv) {
  static const struct option opts[] = {
      {"k", required_argument, NULL, OPT_K},
      {"ms", required_argument, NULL, OPT_MS},
      {"seed", required_argument, NULL, OPT_SEED},
      {"json", no_argument, NULL, OPT_JSON},
      TOOL_OPT_STD,
      {NULL, 0, NULL, 0}};
  uint32_t k = 0;
  double ms = 0;
  uint64_t seed = 1, v;
  int json = 0, rc = 0, c;
  uint32_t ks[2] = {8, 16}, nk = 2, i;
  double mss[2] = {5, 1};
  tool_json j;

  optind = 0; /* a fresh scan: main's stopped at the command */
  while ((c = next_opt(argc, argv, "h", opts)) != -1) {
    switch (c) {
    case OPT_K:
      if (tool_parse_u64(optarg, 2, 64, &v) != 0 || v % 2) {
        tool_usage_error("--k %s: expected an even number from 2 to 64",
                         optarg);
      }
      k = (uint32_t)v;
      break;
    case OPT_MS:
      ms = tool_arg_duration("--ms", optarg, TOOL_MS, 1e-6, 1e6);
      break;
    case OPT_SEED:
      seed = tool_arg_u64("--seed", optarg, 0, UINT64_MAX);
      break;
    case OPT_JSON:
      json = 1;
      break;
    case 'h':
      help();
    }
  }
  if (optind < argc) {
    tool_usage_error("bench: unexpected argument %s", argv[optind]);
  }
  if (k) {
    ks[0] = k;
    mss[0] = ms > 0 ? ms : (k <= 8 ? 5 : 1);
    nk = 1;
  } else if (ms > 0) {
    mss[0] = mss[1] = ms;
  }
  if (json) {
    /* One object, or an array of them one per line. */
    tool_json_init(&j, stdout, TOOL_JSON_SPACED);
    if (nk > 1) {
      tool_json_arr_begin(&j);
    }
  }
  for (i = 0; i < nk; ++i) {
    sim_result res;
    char err[512];
    double sim_s = mss[i] / 1e3, rss;
    uint32_t hosts = ks[i] * ks[i] * ks[i] / 4;
    if (sim_bench(ks[i], mss[i], seed, &res, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: bench: %s\n", err);
      sim_result_fini(&res);
      rc = 1;
      break;
    }
    rss = tool_peak_rss_mb();
    if (json) {
      if (i > 0) {
        tool_json_ws(&j, "\n ");
      }
      bench_json(&j, ks[i], mss[i], rss, &res);
    } else {
      printf("k=%u fat tree: %u hosts, 100 Gb/s, 1 us links, 200 KB queues; "
             "SRD in every host\n",
             ks[i], hosts);
      printf("  permutation, 64 KiB messages x 8 per flow, MTU 4096, %g ms "
             "simulated, seed %llu\n",
             mss[i], (unsigned long long)seed);
      printf("  events        %llu\n", (unsigned long long)res.events);
      printf("  packet-hops   %llu\n", (unsigned long long)res.hops);
      printf("  wall          %.3f s\n", res.wall_s);
      printf("  events/s      %.3f M\n", (double)res.events / res.wall_s / 1e6);
      printf("  packet-hops/s %.3f M\n", (double)res.hops / res.wall_s / 1e6);
      printf("  sim/wall      %.5f  (1 s simulated takes %.1f s)\n",
             sim_s / res.wall_s, res.wall_s / sim_s);
      printf("  peak RSS      %.1f MB\n", rss);
      printf("  delivered     %.1f%% of host capacity; %llu drops; trace "
             "%016llx\n",
             res.tput_fraction * 100, (unsigned long long)res.drops,
             (unsigned long long)res.trace_hash);
      if (ks[i] == 8 || ks[i] == 16) {
        /* Issue 9's reference: htsim's EQDS (per-packet spraying) on this
           machine, the same shape, a hop counted the same way. */
        double ref = ks[i] == 8 ? 2.13 : 0.54, ref_mb = ks[i] == 8 ? 15.3 : 121;
        printf(
            "  htsim (ref.)  %.2f M packet-hops/s in %.1f MB: this run %.1fx "
            "its rate in %.2fx its memory\n",
            ref, ref_mb, (double)res.hops / res.wall_s / 1e6 / ref,
            rss / ref_mb);
      }
    }
    sim_result_fini(&res);
  }
  if (json) {
    if (nk > 1) {
      tool_json_arr_end(&j);
    }
    /* A run that failed leaves the document unfinished: finish closes it
       (and reports the misuse, which rc already says). */
    if (tool_json_finish(&j) == -EIO) {
      fprintf(stderr, "srd-sim: standard output: write failed\n");
      rc = 1;
    }
  } else if ((fflush(stdout) != 0) | ferror(stdout)) {
    fprintf(stderr, "srd-sim: standard output: write failed\n");
    rc = 1;
  }
  return rc;
}

static const char *const commands = "run, check, sweep, merge or bench";

int main(int argc, char **argv) {
  static const struct option opts[] = {TOOL_OPT_STD, {NULL, 0, NULL, 0}};
  const char *cmd;
  int c;

  tool_init(&info);
  /* The options before the command ('+': stop at the first operand). */
  while ((c = next_opt(argc, argv, "+h", opts)) != -1) {
    if (c == 'h') {
      help();
    }
  }
  if (optind >= argc) {
    tool_usage_error("no command: expected %s", commands);
  }
  cmd = argv[optind];
  argc -= optind;
  argv += optind;
  if (!strcmp(cmd, "run")) {
    return cmd_run(argc, argv, 0);
  }
  if (!strcmp(cmd, "check")) {
    return cmd_run(argc, argv, 1);
  }
  if (!strcmp(cmd, "bench")) {
    return cmd_bench(argc, argv);
  }
  if (!strcmp(cmd, "sweep")) {
    return cmd_sweep(argc, argv);
  }
  if (!strcmp(cmd, "merge")) {
    return cmd_merge(argc, argv);
  }
  if (!strcmp(cmd, "help")) {
    help();
  }
  tool_usage_error("unknown command '%s': expected %s", cmd, commands);
}
