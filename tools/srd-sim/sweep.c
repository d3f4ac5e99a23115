/*
 * sweep.c: srd-sim sweep and srd-sim merge (docs/scenarios.md, "Sweeps
 * over seeds").
 *
 *   srd-sim sweep SCENARIO.ini --seeds 1-30 [-o DIR] [-j N] [--share I/N]
 *                 [--set ...] [--only ...] [--json] [--quiet] [--plot]
 *   srd-sim merge [-o OUT] [--json] [--quiet] [--plot] DIR...
 *
 * A sweep runs every (sweep point, transport) of a scenario at every
 * seed of the list, each run in a child process of its own (-j at a
 * time), and writes each finished run as one file in DIR/runs/
 * (sim_sweep.h).  Whoever runs a share of the runs -- this process
 * alone, an MPI rank (mpirun sets OMPI_COMM_WORLD_RANK and _SIZE, or
 * PMI_RANK and PMI_SIZE), a Slurm task (SLURM_PROCID, SLURM_NTASKS), a
 * Slurm array task (SLURM_ARRAY_TASK_ID and its _MIN, _STEP and _COUNT)
 * or --share I/N on a plain host list -- takes runs I, I+N, I+2N, ...
 * of them; the share that finishes when every run is in DIR merges them:
 * the table across seeds, runs.csv, stats.csv, stats.json (sim_sweep.h).
 * MPI and Slurm only start the processes and say which share is whose;
 * nothing is exchanged but the files in DIR, which every share must see
 * (one machine, or a shared file system; otherwise copy the folders
 * together and merge them with srd-sim merge).
 *
 * A run already in DIR is not run again, so the same command after an
 * interruption (or a failed array task) finishes what is missing; a
 * DIR that holds another sweep (another scenario, file content, --set,
 * seeds or transports) is refused.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_run.h"
#include "sim_sweep.h"
#include "tool_clock.h"
#include "tool_opt.h"

#include "srd-sim.h"

#define MAX_RUNS SIM_SWEEP_MAX_RUNS

enum { OPT_SEEDS = 300, OPT_SET, OPT_ONLY, OPT_JSON, OPT_PLOT, OPT_SHARE };

/* sweep_args are sweep's command line (|run| what load() reads). */
typedef struct sweep_args {
  run_args run;
  const char *seeds, *share;
  long jobs;
} sweep_args;

/* share is the part of the runs this process takes: runs idx, idx + n,
   ... (|what| says who said so, |job| names the launcher's job, "" when
   none). */
typedef struct share {
  uint64_t idx, n;
  char what[160];
  char job[160];
} share;

/* ------------------------------------------------------------------------ */
/* Files                                                                    */

/* read_all reads file |path| (at most |max| bytes) into a malloc'd
   buffer.  Returns 0, 1 when it does not exist, or -1 with the message
   in |err|. */
static int read_all(const char *path, size_t max, char **buf, size_t *len,
                    char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  char *b;
  size_t n;

  *buf = NULL;
  *len = 0;
  if (f == NULL) {
    if (errno == ENOENT) {
      return 1;
    }
    snprintf(err, errlen, "%.900s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  b = malloc(max + 1);
  if (b == NULL) {
    fclose(f);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  n = fread(b, 1, max + 1, f);
  if (ferror(f) || n > max) {
    snprintf(err, errlen, "%.900s: %s", path,
             n > max ? "too large" : "cannot read");
    fclose(f);
    free(b);
    return -1;
  }
  fclose(f);
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

/* write_atomic writes |len| bytes of |data| to |path| through a
   temporary file beside it and a rename, so that a reader never sees
   half of it.  Returns 0, or -1 with the message in |err|. */
static int write_atomic(const char *path, const char *data, size_t len,
                        char *err, size_t errlen) {
  char tmp[PATH_MAX + 64];
  FILE *f;

  snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
  f = fopen(tmp, "wb");
  if (f == NULL) {
    snprintf(err, errlen, "%.900s: cannot write: %s", tmp, strerror(errno));
    return -1;
  }
  if ((fwrite(data, 1, len, f) != len) | (fclose(f) != 0)) {
    snprintf(err, errlen, "%.900s: write failed", tmp);
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "%.900s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* fnv1a64 hashes |len| bytes (the scenario file's, in the manifest). */
static uint64_t fnv1a64(const char *p, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i;

  for (i = 0; i < len; ++i) {
    h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
  }
  return h;
}

/* ------------------------------------------------------------------------ */
/* Merging                                                                  */

/* merge_opts say where the merged outputs go and what is printed. */
typedef struct merge_opts {
  const char *out, *argv0;
  int json, quiet, plot;
} merge_opts;

/* put_file writes |name| into staging folder |stage| with |fn|. */
static int put_file(const char *stage, const char *name,
                    int (*fn)(FILE *, const sim_sweep *, const double *),
                    const sim_sweep *sw, const double *v, char *err,
                    size_t errlen) {
  char path[PATH_MAX + 64];
  FILE *f;
  int rv;

  snprintf(path, sizeof(path), "%s/%s", stage, name);
  if ((f = fopen(path, "w")) == NULL) {
    snprintf(err, errlen, "%.900s: cannot write: %s", path, strerror(errno));
    return -1;
  }
  rv = fn(f, sw, v);
  if ((fclose(f) != 0) | (rv != 0)) {
    snprintf(err, errlen, "%.900s: write failed", path);
    return -1;
  }
  return 0;
}

/* merge reads the |n| sweep folders |dirs| (their manifests must be
   identical), checks that every run is in one of them (the same bytes
   where two have it), and writes the merged outputs into o->out
   (table.txt, runs.csv, stats.csv, stats.json, and the manifest where
   o->out is not one of |dirs|) through a staging folder, then prints the
   table (or the JSON).  Returns the exit status (0, 1: a run missing,
   a file bad or an output not written). */
static int merge(char *const *dirs, int n, const merge_opts *o) {
  char err[1024], path[PATH_MAX + 128], stage[PATH_MAX + 32];
  char *mf = NULL;
  size_t mlen = 0;
  sim_sweep sw;
  double *v = NULL;
  uint64_t u, runs, missing = 0;
  char first_missing[4][128];
  int i, rv, rc = 1, out_is_dir = 0;

  sim_sweep_init(&sw);
  for (i = 0; i < n; ++i) {
    char *m;
    size_t len;
    snprintf(path, sizeof(path), "%s/sweep.manifest", dirs[i]);
    rv = read_all(path, 8 << 20, &m, &len, err, sizeof(err));
    if (rv != 0) {
      fprintf(stderr, "srd-sim: %s\n",
              rv > 0 ? "a folder without sweep.manifest: not a sweep's" : err);
      if (rv > 0) {
        fprintf(stderr, "srd-sim: (looked for %s)\n", path);
      }
      goto out;
    }
    if (i == 0) {
      mf = m;
      mlen = len;
      rv = sim_sweep_parse_manifest(&sw, path, mf, mlen, err, sizeof(err));
      if (rv != 0) {
        fprintf(stderr, "srd-sim: %s\n",
                rv == SIM_SCN_NOMEM ? "out of memory" : err);
        goto out;
      }
      continue;
    }
    if (len != mlen || memcmp(m, mf, len)) {
      fprintf(stderr,
              "srd-sim: %s/sweep.manifest differs from %s's: the folders "
              "hold different sweeps\n",
              dirs[i], dirs[0]);
      free(m);
      goto out;
    }
    free(m);
  }
  runs = sim_sweep_n_runs(&sw);
  if (runs > MAX_RUNS) {
    fprintf(stderr, "srd-sim: %s: %" PRIu64 " runs (at most %u)\n", dirs[0],
            runs, MAX_RUNS);
    goto out;
  }
  v = malloc(runs * SIM_SWEEP_NFIG * sizeof(*v));
  if (v == NULL) {
    fprintf(stderr, "srd-sim: out of memory\n");
    goto out;
  }
  for (u = 0; u < runs; ++u) {
    char name[128], *first = NULL;
    size_t first_len = 0;
    sim_sweep_run_name(&sw, u, name, sizeof(name));
    for (i = 0; i < n; ++i) {
      char *b;
      size_t len;
      snprintf(path, sizeof(path), "%s/runs/%s", dirs[i], name);
      rv = read_all(path, 1 << 16, &b, &len, err, sizeof(err));
      if (rv < 0) {
        fprintf(stderr, "srd-sim: %s\n", err);
        free(first);
        goto out;
      }
      if (rv > 0) {
        continue;
      }
      if (first == NULL) {
        rv = sim_sweep_parse_run(&sw, u, path, b, len, v + u * SIM_SWEEP_NFIG,
                                 err, sizeof(err));
        if (rv != 0) {
          fprintf(stderr, "srd-sim: %s\n", err);
          free(b);
          goto out;
        }
        first = b;
        first_len = len;
      } else {
        /* The same run twice (two shares, or a copy): the simulator is
           deterministic, so the bytes must agree. */
        if (len != first_len || memcmp(b, first, len)) {
          fprintf(stderr,
                  "srd-sim: %s differs from the same run in another "
                  "folder: not the same simulator, or a file was changed\n",
                  path);
          free(b);
          free(first);
          goto out;
        }
        free(b);
      }
    }
    if (first == NULL) {
      if (missing < 4) {
        snprintf(first_missing[missing], sizeof(first_missing[0]), "%s", name);
      }
      ++missing;
    }
    free(first);
  }
  if (missing > 0) {
    uint64_t k;
    fprintf(stderr, "srd-sim: %" PRIu64 " of %" PRIu64 " runs missing (",
            missing, runs);
    for (k = 0; k < missing && k < 4; ++k) {
      fprintf(stderr, "%s%s", k ? ", " : "", first_missing[k]);
    }
    fprintf(stderr,
            "%s): the same srd-sim sweep command runs only what is "
            "missing\n",
            missing > 4 ? ", ..." : "");
    goto out;
  }
  /* The outputs: staged, then renamed into place. */
  if (mkdir_p(o->out, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    goto out;
  }
  for (i = 0; i < n; ++i) {
    struct stat a, b;
    if (stat(o->out, &a) == 0 && stat(dirs[i], &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      out_is_dir = 1;
    }
  }
  snprintf(stage, sizeof(stage), "%s/.srd-sim-XXXXXX", o->out);
  if (mkdtemp(stage) == NULL) {
    fprintf(stderr, "srd-sim: %s: cannot create a folder there: %s\n", o->out,
            strerror(errno));
    goto out;
  }
  if (put_file(stage, "table.txt", sim_sweep_table, &sw, v, err, sizeof(err)) !=
          0 ||
      put_file(stage, "runs.csv", sim_sweep_runs_csv, &sw, v, err,
               sizeof(err)) != 0 ||
      put_file(stage, "stats.csv", sim_sweep_stats_csv, &sw, v, err,
               sizeof(err)) != 0 ||
      put_file(stage, "stats.json", sim_sweep_json, &sw, v, err, sizeof(err)) !=
          0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    remove_stage(stage);
    goto out;
  }
  if (!out_is_dir) {
    /* The manifest goes with the outputs: srd-plot titles from it, and
       the merged folder can be merged again. */
    snprintf(path, sizeof(path), "%s/sweep.manifest", stage);
    if (write_atomic(path, mf, mlen, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      remove_stage(stage);
      goto out;
    }
  }
  if (publish(stage, o->out, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    goto out;
  }
  if ((o->json ? sim_sweep_json(stdout, &sw, v)
               : sim_sweep_table(stdout, &sw, v)) != 0) {
    fprintf(stderr, "srd-sim: standard output: write failed\n");
    goto out;
  }
  if (!o->quiet) {
    fprintf(stderr,
            "  wrote %s/{table.txt,runs.csv,stats.csv,stats.json} (%" PRIu64
            " runs)\n",
            o->out, runs);
  }
  rc = 0;
  if (o->plot && plot(o->argv0, o->out, o->quiet) != 0) {
    rc = 1;
  }
out:
  free(v);
  free(mf);
  sim_sweep_fini(&sw);
  return rc;
}

int cmd_merge(int argc, char **argv) {
  static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                       {"json", no_argument, NULL, OPT_JSON},
                                       {"quiet", no_argument, NULL, 'q'},
                                       {"plot", no_argument, NULL, OPT_PLOT},
                                       TOOL_OPT_STD,
                                       {NULL, 0, NULL, 0}};
  merge_opts o;
  int c;

  memset(&o, 0, sizeof(o));
  o.argv0 = argv[0];
  optind = 0;
  while ((c = next_opt(argc, argv, "o:qh", opts)) != -1) {
    switch (c) {
    case 'o':
      o.out = optarg;
      break;
    case OPT_JSON:
      o.json = 1;
      break;
    case 'q':
      o.quiet = 1;
      break;
    case OPT_PLOT:
      o.plot = 1;
      break;
    case 'h':
      help();
    }
  }
  if (optind >= argc) {
    tool_usage_error("merge: no folder (the -o DIR of srd-sim sweep)");
  }
  if (o.out == NULL) {
    o.out = argv[optind];
  }
  return merge(argv + optind, argc - optind, &o);
}

/* ------------------------------------------------------------------------ */
/* Who runs what                                                            */

/* env_u64 reads environment variable |name| as a number into |*v|.
   Returns 1 when it is set, 0 when not; a value that is not a number is
   bad usage (exit 2). */
static int env_u64(const char *name, uint64_t *v) {
  const char *s = getenv(name), *why;

  if (s == NULL || s[0] == '\0') {
    return 0;
  }
  if (sim_parse_uint(s, UINT64_MAX, v, &why) != 0) {
    tool_usage_error("%s=%s: expected %s", name, s, why);
  }
  return 1;
}

/* launcher_share reads which share the launcher gave this process: an
   MPI rank (Open MPI, or PMI's MPICH and Hydra), else a Slurm task of a
   multi-task step.  Returns 1 with |idx| and |n| set, or 0 when there is
   none. */
static int launcher_share(uint64_t *idx, uint64_t *n, const char **what,
                          const char **job) {
  *job = NULL;
  if (env_u64("OMPI_COMM_WORLD_RANK", idx)) {
    if (!env_u64("OMPI_COMM_WORLD_SIZE", n)) {
      tool_usage_error("OMPI_COMM_WORLD_RANK without OMPI_COMM_WORLD_SIZE");
    }
    *what = "Open MPI rank";
    /* One job id per mpirun: PMIx's namespace, or ORTE's. */
    *job = getenv("PMIX_NAMESPACE");
    if (*job == NULL) {
      *job = getenv("OMPI_MCA_ess_base_jobid");
    }
    return 1;
  }
  if (env_u64("PMI_RANK", idx)) {
    if (!env_u64("PMI_SIZE", n)) {
      tool_usage_error("PMI_RANK without PMI_SIZE");
    }
    *what = "MPI rank";
    return 1;
  }
  if (env_u64("SLURM_PROCID", idx) && env_u64("SLURM_NTASKS", n) && *n > 1) {
    *what = "Slurm task";
    *job = getenv("SLURM_STEP_ID") ? getenv("SLURM_JOB_ID") : NULL;
    return 1;
  }
  return 0;
}

/* find_share fills |s|: --share I/N when given (|flag|), else the Slurm
   array task (the array's index, counted from SLURM_ARRAY_TASK_MIN in
   steps of SLURM_ARRAY_TASK_STEP) times the launcher's share within it,
   else all of it.  Bad values are bad usage (exit 2). */
static void find_share(share *s, const char *flag) {
  uint64_t a_id, a_min = 0, a_step = 1, a_count = 0, a_max, m_idx, m_n;
  const char *what = NULL, *job = NULL, *ajob;
  int array, mpi;

  memset(s, 0, sizeof(*s));
  s->n = 1;
  if (flag != NULL) {
    const char *why;
    char buf[64], *slash;
    uint64_t i, n;
    snprintf(buf, sizeof(buf), "%s", flag);
    slash = strchr(buf, '/');
    if (slash == NULL || strlen(flag) >= sizeof(buf)) {
      tool_usage_error("--share %s: expected I/N (share I of N, from 0)", flag);
    }
    *slash = '\0';
    if (sim_parse_uint(buf, UINT64_MAX, &i, &why) != 0 ||
        sim_parse_uint(slash + 1, MAX_RUNS, &n, &why) != 0 || n == 0 ||
        i >= n) {
      tool_usage_error("--share %s: expected I/N with 0 <= I < N <= %u", flag,
                       MAX_RUNS);
    }
    s->idx = i;
    s->n = n;
    snprintf(s->what, sizeof(s->what), "--share %" PRIu64 "/%" PRIu64, i, n);
    return;
  }
  array = env_u64("SLURM_ARRAY_TASK_ID", &a_id);
  mpi = launcher_share(&m_idx, &m_n, &what, &job);
  if (mpi && (m_n == 0 || m_idx >= m_n)) {
    tool_usage_error("%s %" PRIu64 " of %" PRIu64 ": not a rank of the job",
                     what, m_idx, m_n);
  }
  if (array) {
    env_u64("SLURM_ARRAY_TASK_MIN", &a_min);
    env_u64("SLURM_ARRAY_TASK_STEP", &a_step);
    if (!env_u64("SLURM_ARRAY_TASK_COUNT", &a_count)) {
      if (!env_u64("SLURM_ARRAY_TASK_MAX", &a_max) || a_max < a_min ||
          a_step == 0) {
        tool_usage_error("SLURM_ARRAY_TASK_ID without SLURM_ARRAY_TASK_COUNT "
                         "or SLURM_ARRAY_TASK_MAX");
      }
      a_count = (a_max - a_min) / a_step + 1;
    }
    if (a_step == 0 || a_id < a_min || (a_id - a_min) % a_step != 0 ||
        (a_id - a_min) / a_step >= a_count || a_count > MAX_RUNS) {
      tool_usage_error("SLURM_ARRAY_TASK_ID=%" PRIu64
                       ": not a task of the array (min %" PRIu64
                       ", step %" PRIu64 ", count %" PRIu64 ")",
                       a_id, a_min, a_step, a_count);
    }
    s->idx = (a_id - a_min) / a_step;
    s->n = a_count;
    snprintf(s->what, sizeof(s->what),
             "Slurm array task %" PRIu64 " (%" PRIu64 " of %" PRIu64 ")", a_id,
             s->idx, s->n);
    ajob = getenv("SLURM_ARRAY_JOB_ID");
    if (ajob != NULL) {
      snprintf(s->job, sizeof(s->job), "slurm-%s", ajob);
    }
  }
  if (mpi) {
    char w[400];
    if (m_n > MAX_RUNS || s->n > MAX_RUNS / m_n) {
      tool_usage_error("%s: %" PRIu64 " shares (at most %u)", what, s->n * m_n,
                       MAX_RUNS);
    }
    s->idx = s->idx * m_n + m_idx;
    s->n *= m_n;
    snprintf(w, sizeof(w), "%.150s%s%s %" PRIu64 " of %" PRIu64, s->what,
             array ? ", " : "", what, m_idx, m_n);
    snprintf(s->what, sizeof(s->what), "%.159s", w);
    if (job != NULL) {
      char j[400];
      snprintf(j, sizeof(j), "%.150s%s%.150s", s->job, s->job[0] ? "-" : "",
               job);
      snprintf(s->job, sizeof(s->job), "%.159s", j);
    }
  }
}

/* ------------------------------------------------------------------------ */
/* The sweep                                                                */

static void parse_sweep(int argc, char **argv, sweep_args *a) {
  static const struct option opts[] = {
      {"output", required_argument, NULL, 'o'},
      {"seeds", required_argument, NULL, OPT_SEEDS},
      {"jobs", required_argument, NULL, 'j'},
      {"share", required_argument, NULL, OPT_SHARE},
      {"set", required_argument, NULL, OPT_SET},
      {"only", required_argument, NULL, OPT_ONLY},
      {"json", no_argument, NULL, OPT_JSON},
      {"quiet", no_argument, NULL, 'q'},
      {"plot", no_argument, NULL, OPT_PLOT},
      {"seed", required_argument, NULL, 's'},
      {"pcap", required_argument, NULL, 'P'},
      TOOL_OPT_STD,
      {NULL, 0, NULL, 0}};
  const char *why;
  uint64_t j;
  int c;

  memset(a, 0, sizeof(*a));
  a->run.sets = calloc((size_t)argc + 1, sizeof(*a->run.sets));
  if (a->run.sets == NULL) {
    tool_die("out of memory");
  }
  optind = 0;
  while ((c = next_opt(argc, argv, "o:j:qh", opts)) != -1) {
    switch (c) {
    case 'o':
      a->run.outdir = optarg;
      break;
    case OPT_SEEDS:
      a->seeds = optarg;
      break;
    case 'j':
      if (sim_parse_uint(optarg, 1024, &j, &why) != 0 || j == 0) {
        tool_usage_error("-j %s: expected a number of processes from 1 to "
                         "1024",
                         optarg);
      }
      a->jobs = (long)j;
      break;
    case OPT_SHARE:
      a->share = optarg;
      break;
    case OPT_SET:
      a->run.sets[a->run.n_sets++].val = optarg;
      break;
    case OPT_ONLY:
      a->run.only = optarg;
      break;
    case OPT_JSON:
      a->run.json = 1;
      break;
    case 'q':
      a->run.quiet = 1;
      break;
    case OPT_PLOT:
      a->run.plot = 1;
      break;
    case 's':
      tool_usage_error("sweep takes --seeds LIST (e.g. --seeds 1-30), not "
                       "--seed");
    case 'P':
      tool_usage_error("--pcap is run's (a capture of one run): sweep writes "
                       "figures only");
    case 'h':
      help();
    }
  }
  if (optind + 1 < argc) {
    tool_usage_error("one scenario file at a time (got %s and %s)",
                     argv[optind], argv[optind + 1]);
  }
  if (optind < argc) {
    a->run.file = argv[optind];
  }
  if (a->run.file == NULL) {
    tool_usage_error("no scenario file");
  }
  if (a->seeds == NULL) {
    tool_usage_error("sweep needs --seeds LIST (e.g. --seeds 1-30)");
  }
  if (a->run.only != NULL) {
    const char *cur = a->run.only;
    char item[SCN_NAME_MAX];
    int rv;
    while ((rv = tool_list_next(&cur, item, sizeof(item))) > 0) {
      continue;
    }
    if (rv < 0) {
      tool_usage_error("--only %s: expected transport names separated by "
                       "commas",
                       a->run.only);
    }
  }
}

/* kind_name is a transport type's kind, as sim_result.kind says it. */
static const char *kind_name(int type) {
  return type == SCN_XPORT_SRD   ? "srd"
         : type == SCN_XPORT_TCP ? "tcp"
                                 : "tcp-over-srd";
}

/* describe fills |sw| from the loaded scenario: its points, the
   transports of each that --only keeps, the seeds, the --set values and
   the file's hash.  Returns 0 or the exit status (said on stderr). */
static int describe(const sweep_args *a, const scn_raw *raw,
                    const sim_scn *base, sim_sweep *sw) {
  char err[1024], *text;
  size_t len;
  uint32_t p, t, k, n_points = base->n_sweep_points ? base->n_sweep_points : 1;
  int rv, i;

  for (k = 0; k < base->n_sweep_keys; ++k) {
    if (!strcmp(base->sweep_key[k], "scenario.seed")) {
      fprintf(stderr, "srd-sim: the scenario sweeps scenario.seed: a sweep "
                      "over seeds takes them from --seeds\n");
      return 2;
    }
  }
  rv = sim_sweep_parse_seeds(sw, a->seeds, err, sizeof(err));
  if (rv != 0) {
    if (rv == SIM_SCN_NOMEM) {
      fprintf(stderr, "srd-sim: out of memory\n");
      return 1;
    }
    tool_usage_error("--%s", err);
  }
  snprintf(sw->scenario, sizeof(sw->scenario), "%s", base->name);
  snprintf(sw->file, sizeof(sw->file), "%s", a->run.file);
  snprintf(sw->only, sizeof(sw->only), "%s", a->run.only ? a->run.only : "");
  for (i = 0; i < a->run.n_sets; ++i) {
    if (sw->n_sets == SIM_SWEEP_MAX_SETS) {
      tool_usage_error("at most %u --set values in a sweep",
                       SIM_SWEEP_MAX_SETS);
    }
    if ((sw->sets[sw->n_sets++] = strdup(a->run.sets[i].val)) == NULL) {
      fprintf(stderr, "srd-sim: out of memory\n");
      return 1;
    }
  }
  sw->n_points = n_points;
  for (p = 0; p < n_points; ++p) {
    scn_raw pr;
    sim_scn ps;
    sim_scn_raw_init(&pr);
    if (base->n_sweep_points) {
      sim_scn_point_label(base, p, sw->label[p], sizeof(sw->label[p]));
    }
    if ((rv = compile_point(raw, base, p, &pr, &ps, err, sizeof(err))) != 0) {
      /* Every point was compiled once by load(): only memory can fail. */
      fprintf(stderr, "srd-sim: %s\n", err);
      sim_scn_raw_fini(&pr);
      return scn_status(rv);
    }
    for (t = 0; t < ps.n_tr; ++t) {
      sim_sweep_cell *c;
      if (!in_list(a->run.only, ps.tr[t].name)) {
        continue;
      }
      c = &sw->cell[sw->n_cells++];
      c->point = p;
      snprintf(c->transport, sizeof(c->transport), "%s", ps.tr[t].name);
      snprintf(c->kind, sizeof(c->kind), "%s", kind_name(ps.tr[t].type));
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
  if (sim_sweep_n_runs(sw) > MAX_RUNS) {
    tool_usage_error("%" PRIu64 " runs (%u cells x %u seeds): at most %u",
                     sim_sweep_n_runs(sw), sw->n_cells, sw->n_seeds, MAX_RUNS);
  }
  /* The file's bytes: a share that read an edited file is another
     sweep. */
  rv = read_all(a->run.file, 64 << 20, &text, &len, err, sizeof(err));
  if (rv != 0) {
    fprintf(stderr, "srd-sim: %s\n",
            rv > 0 ? "the scenario file vanished" : err);
    return 1;
  }
  sw->file_hash = fnv1a64(text, len);
  free(text);
  return 0;
}

/* manifest_text is |sw|'s manifest in a malloc'd string (NULL: a value
   holds a line break, or out of memory; said on stderr). */
static char *manifest_text(const sim_sweep *sw, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);

  if (f == NULL) {
    fprintf(stderr, "srd-sim: out of memory\n");
    return NULL;
  }
  if ((sim_sweep_manifest(f, sw) != 0) | (fclose(f) != 0)) {
    free(buf);
    fprintf(stderr, "srd-sim: a scenario name, file name, --set or "
                    "--only value holds a line break\n");
    return NULL;
  }
  return buf;
}

/* claim_manifest writes the manifest into |dir|, or checks that the one
   there is the same.  Returns 0 or the exit status (said). */
static int claim_manifest(const char *dir, const char *text, size_t len) {
  char path[PATH_MAX + 32], err[1024], *old;
  size_t olen;
  int rv;

  snprintf(path, sizeof(path), "%s/sweep.manifest", dir);
  rv = read_all(path, 8 << 20, &old, &olen, err, sizeof(err));
  if (rv < 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    return 1;
  }
  if (rv == 0) {
    int same = olen == len && !memcmp(old, text, len);
    free(old);
    if (!same) {
      fprintf(stderr,
              "srd-sim: %s holds another sweep (its sweep.manifest differs: "
              "another scenario, file, --set, --only or seeds): use another "
              "-o DIR\n",
              dir);
      return 1;
    }
    return 0;
  }
  if (write_atomic(path, text, len, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    return 1;
  }
  return 0;
}

/* run_file is the path of run |u|'s file in |dir|. */
static void run_file(const sim_sweep *sw, const char *dir, uint64_t u,
                     char *buf, size_t len) {
  char name[128];

  sim_sweep_run_name(sw, u, name, sizeof(name));
  snprintf(buf, len, "%s/runs/%s", dir, name);
}

/* child runs run |u| of |sw| and writes its file into |dir|; it never
   returns: exit 0, 1 (failed, said on stderr), or 128 + the signal that
   cut it short (nothing written). */
static void child(const sim_sweep *sw, uint64_t u, scn_raw *raw,
                  const char *dir) __attribute__((noreturn));

static void child(const sim_sweep *sw, uint64_t u, scn_raw *raw,
                  const char *dir) {
  const sim_sweep_cell *c = &sw->cell[u / sw->n_seeds];
  char set[64], err[1024], path[PATH_MAX + 160], *text = NULL;
  size_t len = 0;
  sim_scn base, ps;
  scn_raw pr;
  sim_run_opts o;
  sim_result r;
  double v[SIM_SWEEP_NFIG];
  uint32_t t;
  FILE *f;
  int rv;

  snprintf(set, sizeof(set), "scenario.seed=%" PRIu64,
           sw->seeds[u % sw->n_seeds]);
  rv = sim_scn_set(raw, set, "--seeds", 0, err, sizeof(err));
  if (rv == 0) {
    rv = sim_scn_compile(raw, &base, err, sizeof(err));
  }
  sim_scn_raw_init(&pr);
  if (rv == 0) {
    rv = compile_point(raw, &base, c->point, &pr, &ps, err, sizeof(err));
  }
  if (rv != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    _exit(1);
  }
  for (t = 0; t < ps.n_tr && strcmp(ps.tr[t].name, c->transport); ++t) {
    continue;
  }
  if (t == ps.n_tr) {
    fprintf(stderr, "srd-sim: %s: no such transport at point %u\n",
            c->transport, c->point);
    _exit(1);
  }
  memset(&o, 0, sizeof(o));
  o.sample_queues = 1;
  o.interrupt = &stop_signal;
  if (sim_run(&ps, t, &o, &r, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s%s%s seed %" PRIu64 ": %s\n", c->transport,
            sw->label[c->point][0] ? " at " : "", sw->label[c->point],
            sw->seeds[u % sw->n_seeds], err);
    _exit(1);
  }
  if (r.interrupted) {
    _exit(128 + (stop_signal ? stop_signal : SIGINT));
  }
  sim_sweep_figures(&r, v);
  f = open_memstream(&text, &len);
  if (f == NULL || sim_sweep_write_run(f, sw, u, v) != 0 || fclose(f) != 0) {
    fprintf(stderr, "srd-sim: out of memory\n");
    _exit(1);
  }
  run_file(sw, dir, u, path, sizeof(path));
  if (write_atomic(path, text, len, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    _exit(1);
  }
  _exit(0);
}

/* slot is a child at work. */
typedef struct slot {
  pid_t pid;
  uint64_t u;
  double t0;
} slot;

/* run_share runs the runs |todo| (|n| of them) with at most |jobs|
   children at a time, printing each as it ends (not with |quiet|).
   Returns 0, 1 when one failed (no new one is started after it), or
   128 + the signal that stopped them. */
static int run_share(const sim_sweep *sw, const uint64_t *todo, uint64_t n,
                     long jobs, scn_raw *raw, const char *dir, const share *s,
                     int quiet) {
  slot *sl = calloc((size_t)jobs, sizeof(*sl));
  uint64_t next = 0, done = 0;
  long running = 0, i;
  int failed = 0, forwarded = 0;

  if (sl == NULL) {
    fprintf(stderr, "srd-sim: out of memory\n");
    return 1;
  }
  while (next < n || running > 0) {
    int st;
    pid_t pid;
    while (!stop_signal && !failed && running < jobs && next < n) {
      for (i = 0; sl[i].pid != 0; ++i) {
        continue;
      }
      fflush(stdout);
      fflush(stderr);
      pid = fork();
      if (pid < 0) {
        fprintf(stderr, "srd-sim: fork: %s\n", strerror(errno));
        failed = 1;
        break;
      }
      if (pid == 0) {
        child(sw, todo[next], raw, dir);
      }
      sl[i].pid = pid;
      sl[i].u = todo[next++];
      sl[i].t0 = tool_now_s();
      ++running;
    }
    if (running == 0) {
      break;
    }
    pid = waitpid(-1, &st, 0);
    if (pid < 0) {
      if (errno == EINTR) {
        if (stop_signal && !forwarded) {
          /* A signal to this process alone (a terminal's reaches every
             child itself): pass it on, so the runs stop too. */
          for (i = 0; i < jobs; ++i) {
            if (sl[i].pid) {
              kill(sl[i].pid, stop_signal);
            }
          }
          forwarded = 1;
        }
        continue;
      }
      fprintf(stderr, "srd-sim: waitpid: %s\n", strerror(errno));
      failed = 1;
      break;
    }
    for (i = 0; i < jobs && sl[i].pid != pid; ++i) {
      continue;
    }
    if (i == jobs) {
      continue;
    }
    --running;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      ++done;
      if (!quiet) {
        const sim_sweep_cell *c = &sw->cell[sl[i].u / sw->n_seeds];
        fprintf(
            stderr,
            "  %s%s[%" PRIu64 "/%" PRIu64 "] %s%s%s seed %" PRIu64 ": %.2f s\n",
            s->n > 1 ? s->what : "", s->n > 1 ? " " : "", done, n, c->transport,
            sw->label[c->point][0] ? " at " : "", sw->label[c->point],
            sw->seeds[sl[i].u % sw->n_seeds], tool_now_s() - sl[i].t0);
      }
    } else if (!(stop_signal && ((WIFEXITED(st) && WEXITSTATUS(st) > 128) ||
                                 WIFSIGNALED(st)))) {
      char name[128];
      sim_sweep_run_name(sw, sl[i].u, name, sizeof(name));
      fprintf(stderr, "srd-sim: run %s failed (%s %d)\n", name,
              WIFEXITED(st) ? "exit status" : "signal",
              WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
      failed = 1;
    }
    sl[i].pid = 0;
  }
  free(sl);
  if (failed) {
    return 1;
  }
  if (stop_signal && done < n) {
    fprintf(stderr,
            "srd-sim: interrupted by %s: %" PRIu64 " of %" PRIu64
            " runs done and kept in %s/runs; the same command runs the "
            "rest\n",
            signal_name(stop_signal), done, n, dir);
    return 128 + stop_signal;
  }
  return 0;
}

/* count_present counts the runs of |sw| whose files are in |dir|. */
static uint64_t count_present(const sim_sweep *sw, const char *dir) {
  char path[PATH_MAX + 160];
  uint64_t u, n = 0;

  for (u = 0; u < sim_sweep_n_runs(sw); ++u) {
    run_file(sw, dir, u, path, sizeof(path));
    n += access(path, F_OK) == 0;
  }
  return n;
}

/* first_to_merge says whether this share is the one to merge: with a
   launcher's job id, the first to create DIR/.merged-JOB (another share
   may see every run at the same moment); without one, every share that
   sees every run merges (the same bytes, renamed into place). */
static int first_to_merge(const char *dir, const share *s) {
  char path[PATH_MAX + 200], job[160];
  size_t i;
  int fd;

  if (s->job[0] == '\0') {
    return 1;
  }
  snprintf(job, sizeof(job), "%s", s->job);
  for (i = 0; job[i]; ++i) {
    if (job[i] == '/' || job[i] == ' ') {
      job[i] = '_';
    }
  }
  snprintf(path, sizeof(path), "%s/.merged-%s", dir, job);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    return 0;
  }
  close(fd);
  return 1;
}

/* remove_tree removes the sweep folder srd-sim made itself (no -o):
   runs/, the manifest and the merged files. */
static void remove_tree(const char *dir) {
  char path[PATH_MAX + 32];

  snprintf(path, sizeof(path), "%.4000s/runs", dir);
  remove_stage(path);
  remove_stage(dir);
}

int cmd_sweep(int argc, char **argv) {
  sweep_args a;
  scn_raw raw;
  sim_scn base;
  sim_sweep sw;
  share s;
  char err[1024], tmpdir[PATH_MAX] = "", path[PATH_MAX + 160], seeds[128];
  const char *dir;
  char *manifest = NULL;
  size_t mlen = 0;
  uint64_t u, n_todo = 0, n_mine = 0, runs, present;
  uint64_t *todo = NULL;
  int rc;

  parse_sweep(argc, argv, &a);
  find_share(&s, a.share);
  catch_signals();
  sim_scn_raw_init(&raw);
  if ((rc = load(&a.run, &raw, &base)) != 0) {
    free(a.run.sets);
    return rc;
  }
  sim_sweep_init(&sw);
  if ((rc = describe(&a, &raw, &base, &sw)) != 0) {
    goto out;
  }
  if (a.run.outdir == NULL && s.n > 1) {
    tool_usage_error("a share of a sweep (%s) needs -o DIR, a folder every "
                     "share sees",
                     s.what);
  }
  if (a.run.plot && a.run.outdir == NULL) {
    tool_usage_error("--plot needs -o DIR");
  }
  if (a.jobs == 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* A launcher's shares are its parallelism; alone, every core. */
    a.jobs = s.n > 1 ? 1 : cpus > 0 ? cpus : 1;
  }
  rc = 1;
  if (a.run.outdir) {
    dir = a.run.outdir;
    if (mkdir_p(dir, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      goto out;
    }
  } else {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof(tmpdir), "%s/srd-sim-sweep-XXXXXX",
             t && t[0] ? t : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
      fprintf(stderr, "srd-sim: %s: cannot create: %s\n", tmpdir,
              strerror(errno));
      tmpdir[0] = '\0';
      goto out;
    }
    dir = tmpdir;
  }
  if ((manifest = manifest_text(&sw, &mlen)) == NULL) {
    goto out;
  }
  if ((rc = claim_manifest(dir, manifest, mlen)) != 0) {
    goto out;
  }
  rc = 1;
  snprintf(path, sizeof(path), "%s/runs", dir);
  if (mkdir(path, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "srd-sim: %s: cannot create: %s\n", path, strerror(errno));
    goto out;
  }
  runs = sim_sweep_n_runs(&sw);
  todo = malloc((runs / s.n + 1) * sizeof(*todo));
  if (todo == NULL) {
    fprintf(stderr, "srd-sim: out of memory\n");
    goto out;
  }
  for (u = s.idx; u < runs; u += s.n) {
    ++n_mine;
    run_file(&sw, dir, u, path, sizeof(path));
    if (access(path, F_OK) != 0) {
      todo[n_todo++] = u;
    }
  }
  sim_sweep_fmt_seeds(&sw, seeds, sizeof(seeds));
  if (!a.run.quiet) {
    fprintf(stderr,
            "srd-sim sweep %s: %u cell%s x %u seed%s (%s) = %" PRIu64
            " runs%s%s: %" PRIu64 " here, %" PRIu64
            " already in %s, %ld at a time\n",
            sw.scenario, sw.n_cells, sw.n_cells == 1 ? "" : "s", sw.n_seeds,
            sw.n_seeds == 1 ? "" : "s", seeds, runs, s.n > 1 ? "; " : "",
            s.n > 1 ? s.what : "", n_mine, n_mine - n_todo,
            a.run.outdir ? dir : "a temporary folder", a.jobs);
  }
  rc = run_share(&sw, todo, n_todo, a.jobs, &raw, dir, &s, a.run.quiet);
  if (rc != 0) {
    goto out;
  }
  present = count_present(&sw, dir);
  if (present < runs) {
    if (!a.run.quiet) {
      fprintf(stderr,
              "  %s: done; %s has %" PRIu64 " of the %" PRIu64
              " runs: the share that finishes last merges them (or: "
              "srd-sim merge %s)\n",
              s.what, dir, present, runs, dir);
    }
    rc = 0;
    goto out;
  }
  if (!first_to_merge(dir, &s)) {
    if (!a.run.quiet) {
      fprintf(stderr, "  %s: done; another share merges %s\n", s.what, dir);
    }
    rc = 0;
    goto out;
  }
  {
    merge_opts o;
    char *dirs[1];
    memset(&o, 0, sizeof(o));
    o.out = dir;
    o.argv0 = argv[0];
    o.json = a.run.json;
    o.quiet = a.run.quiet || tmpdir[0];
    o.plot = a.run.plot;
    dirs[0] = (char *)dir;
    rc = merge(dirs, 1, &o);
  }
out:
  if (tmpdir[0]) {
    remove_tree(tmpdir);
  }
  free(todo);
  free(manifest);
  sim_sweep_fini(&sw);
  sim_scn_fini(&base);
  sim_scn_raw_fini(&raw);
  free(a.run.sets);
  return rc;
}
