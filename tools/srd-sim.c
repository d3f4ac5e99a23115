/*
 * srd-sim: run scenarios in the fabric simulator, SRD (the libsrd engine)
 * side by side with TCP, and benchmark the simulator.
 *
 *   srd-sim run SCENARIO.ini [-o DIR] [--seed N] [--set section.key=value]...
 *                            [--json] [--quiet] [--plot] [--only NAME,...]
 *   srd-sim check SCENARIO.ini [--set ...]
 *   srd-sim bench [--k 8|16] [--ms N] [--seed N] [--json]
 *
 * docs/scenarios.md describes the scenario format and every output.
 * Exit status: 0 done, 1 a run failed, 2 bad usage or a bad scenario.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim_report.h"
#include "sim_run.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: srd-sim run SCENARIO.ini [-o DIR] [--seed N]\n"
          "                   [--set section.key=value]... [--json] "
          "[--quiet] [--plot]\n"
          "                   [--only NAME[,NAME...]]\n"
          "       srd-sim check SCENARIO.ini [--set section.key=value]...\n"
          "       srd-sim bench [--k K] [--ms MS] [--seed N] [--json]\n"
          "\n"
          "run     runs every transport the scenario lists (and every sweep\n"
          "        point) on the same topology, workload, faults and seed,\n"
          "        and prints them side by side; -o DIR writes CSV files,\n"
          "        the table and summary.json there; --plot draws them\n"
          "        (srd-plot, gnuplot); --json prints one JSON object.\n"
          "check   reads and checks a scenario without running it.\n"
          "bench   the simulator's speed: a k-ary fat tree at 100 Gb/s,\n"
          "        permutation traffic with SRD in every host (default: k=8\n"
          "        for 5 ms and k=16 for 1 ms).\n"
          "See docs/scenarios.md.\n");
}

static double wall_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static int mkdir_p(const char *dir, char *err, size_t errlen) {
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
static int plot(const char *argv0, const char *dir, int quiet) {
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

static int in_list(const char *list, const char *name) {
  char buf[512], *p, *save = NULL;

  if (list == NULL) {
    return 1;
  }
  snprintf(buf, sizeof(buf), "%s", list);
  for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
    if (!strcmp(p, name)) {
      return 1;
    }
  }
  return 0;
}

static int cmd_run(int argc, char **argv, int check_only) {
  const char *file = NULL, *outdir = NULL, *only = NULL;
  int json = 0, quiet = 0, do_plot = 0, i, rc = 0;
  scn_raw raw;
  sim_scn base;
  char err[1024];
  sim_result *res = NULL;
  uint32_t n_res = 0, cap_res = 0, p, t, n_points;
  sim_run_opts o;
  FILE *table = NULL;

  sim_scn_raw_init(&raw);
  for (i = 2; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      quiet = 1;
    } else if (!strcmp(a, "--plot")) {
      do_plot = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      sim_scn_raw_fini(&raw);
      return 0;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--seed") ||
               !strcmp(a, "--set") || !strcmp(a, "--only")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "srd-sim: %s needs a value\n", a);
        sim_scn_raw_fini(&raw);
        return 2;
      }
      ++i;
      if (!strcmp(a, "-o")) {
        outdir = argv[i];
      } else if (!strcmp(a, "--only")) {
        only = argv[i];
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "srd-sim: unknown option %s\n", a);
      usage(stderr);
      sim_scn_raw_fini(&raw);
      return 2;
    } else if (file == NULL) {
      file = a;
    } else {
      fprintf(stderr, "srd-sim: one scenario file at a time (got %s and %s)\n",
              file, a);
      sim_scn_raw_fini(&raw);
      return 2;
    }
  }
  if (file == NULL) {
    fprintf(stderr, "srd-sim: no scenario file\n");
    usage(stderr);
    sim_scn_raw_fini(&raw);
    return 2;
  }
  if (sim_scn_load(&raw, file, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_raw_fini(&raw);
    return 2;
  }
  /* --seed and --set come after the file: they win. */
  for (i = 2; i < argc; ++i) {
    char buf[600];
    if (!strcmp(argv[i], "--seed")) {
      uint64_t v;
      const char *why;
      if (sim_parse_uint(argv[i + 1], UINT64_MAX, &v, &why) != 0) {
        fprintf(stderr, "srd-sim: --seed %s: expected %s\n", argv[i + 1], why);
        sim_scn_raw_fini(&raw);
        return 2;
      }
      snprintf(buf, sizeof(buf), "scenario.seed=%s", argv[i + 1]);
      if (sim_scn_set(&raw, buf, "--seed", 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "srd-sim: %s\n", err);
        sim_scn_raw_fini(&raw);
        return 2;
      }
      ++i;
    } else if (!strcmp(argv[i], "--set")) {
      if (sim_scn_set(&raw, argv[i + 1], "--set", 0, err, sizeof(err)) != 0) {
        fprintf(stderr, "srd-sim: %s\n", err);
        sim_scn_raw_fini(&raw);
        return 2;
      }
      ++i;
    } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--only")) {
      ++i;
    }
  }
  if (sim_scn_compile(&raw, &base, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_raw_fini(&raw);
    return 2;
  }
  n_points = base.n_sweep_points ? base.n_sweep_points : 1;
  /* Check every sweep point before running anything. */
  for (p = 0; p < base.n_sweep_points; ++p) {
    scn_raw pr;
    sim_scn ps;
    sim_scn_raw_init(&pr);
    if (sim_scn_point(&raw, &base, p, &pr, err, sizeof(err)) != 0 ||
        sim_scn_compile(&pr, &ps, err, sizeof(err)) != 0) {
      char label[256];
      sim_scn_point_label(&base, p, label, sizeof(label));
      fprintf(stderr, "srd-sim: sweep point %s: %s\n", label, err);
      sim_scn_raw_fini(&pr);
      sim_scn_fini(&base);
      sim_scn_raw_fini(&raw);
      return 2;
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
  if (only) {
    uint32_t hits = 0;
    for (t = 0; t < base.n_tr; ++t) {
      hits += in_list(only, base.tr[t].name);
    }
    if (hits == 0) {
      fprintf(stderr,
              "srd-sim: --only %s names none of the scenario's "
              "transports\n",
              only);
      sim_scn_fini(&base);
      sim_scn_raw_fini(&raw);
      return 2;
    }
  }
  if (check_only) {
    printf("%s: ok (%u hosts, %u transport(s), %u point(s))\n", file,
           base.n_hosts, base.n_tr, n_points);
    sim_scn_fini(&base);
    sim_scn_raw_fini(&raw);
    return 0;
  }
  if (outdir && mkdir_p(outdir, err, sizeof(err)) != 0) {
    fprintf(stderr, "srd-sim: %s\n", err);
    sim_scn_fini(&base);
    sim_scn_raw_fini(&raw);
    return 2;
  }
  if (outdir) {
    char path[1200];
    snprintf(path, sizeof(path), "%s/table.txt", outdir);
    table = fopen(path, "w");
    if (table == NULL) {
      fprintf(stderr, "srd-sim: %s: cannot write: %s\n", path, strerror(errno));
      sim_scn_fini(&base);
      sim_scn_raw_fini(&raw);
      return 2;
    }
  }
  memset(&o, 0, sizeof(o));
  o.records = outdir != NULL;
  o.progress = !quiet && isatty(STDERR_FILENO);
  o.sample_queues = 1;
  if (!json) {
    sim_report_header(stdout, &base);
  }
  if (table) {
    sim_report_header(table, &base);
  }
  for (p = 0; p < n_points && rc == 0; ++p) {
    scn_raw pr;
    sim_scn ps;
    uint32_t first = n_res;
    char label[256] = "";
    sim_scn_raw_init(&pr);
    if (base.n_sweep_points) {
      sim_scn_point_label(&base, p, label, sizeof(label));
      if (sim_scn_point(&raw, &base, p, &pr, err, sizeof(err)) != 0 ||
          sim_scn_compile(&pr, &ps, err, sizeof(err)) != 0) {
        fprintf(stderr, "srd-sim: %s\n", err);
        rc = 2;
        sim_scn_raw_fini(&pr);
        break;
      }
    } else if (sim_scn_compile(&raw, &ps, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      rc = 2;
      sim_scn_raw_fini(&pr);
      break;
    }
    for (t = 0; t < ps.n_tr; ++t) {
      double w0;
      if (!in_list(only, ps.tr[t].name)) {
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
      w0 = wall_now();
      if (sim_run(&ps, t, &o, &res[n_res], err, sizeof(err)) != 0) {
        fprintf(stderr, "srd-sim: %s%s%s: %s\n", ps.tr[t].name,
                label[0] ? " at " : "", label, err);
        rc = 1;
        break;
      }
      snprintf(res[n_res].point, sizeof(res[n_res].point), "%s", label);
      res[n_res].point_idx = p;
      if (!quiet) {
        fprintf(stderr, "  %s%s%s: %.2f s of wall time, %llu events\n",
                ps.tr[t].name, label[0] ? " at " : "", label, wall_now() - w0,
                (unsigned long long)res[n_res].events);
      }
      ++n_res;
    }
    if (rc == 0) {
      if (!json) {
        sim_report_table(stdout, res + first, n_res - first);
        fflush(stdout);
      }
      if (table) {
        sim_report_table(table, res + first, n_res - first);
      }
    }
    sim_scn_fini(&ps);
    sim_scn_raw_fini(&pr);
  }
  if (rc == 0 && json) {
    sim_report_json(stdout, &base, res, n_res);
  }
  if (table) {
    fclose(table);
  }
  if (rc == 0 && outdir) {
    char path[1200];
    FILE *f;
    snprintf(path, sizeof(path), "%s/summary.json", outdir);
    f = fopen(path, "w");
    if (f == NULL) {
      fprintf(stderr, "srd-sim: %s: cannot write\n", path);
      rc = 1;
    } else {
      sim_report_json(f, &base, res, n_res);
      fclose(f);
    }
    if (rc == 0 && sim_report_csv(outdir, res, n_res, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim: %s\n", err);
      rc = 1;
    }
    if (rc == 0 && !quiet) {
      fprintf(stderr,
              "  wrote %s/{table.txt,summary.json,flows.csv,"
              "messages.csv,throughput.csv,queues.csv,paths.csv}\n",
              outdir);
    }
    if (rc == 0 && do_plot && plot(argv[0], outdir, quiet) != 0) {
      rc = 1;
    }
  } else if (rc == 0 && do_plot) {
    fprintf(stderr, "srd-sim: --plot needs -o DIR\n");
    rc = 2;
  }
  for (p = 0; p < n_res; ++p) {
    sim_result_fini(&res[p]);
  }
  free(res);
  sim_scn_fini(&base);
  sim_scn_raw_fini(&raw);
  return rc;
}

static int cmd_bench(int argc, char **argv) {
  uint32_t k = 0;
  double ms = 0;
  uint64_t seed = 1;
  int json = 0, i, rc = 0, first = 1;
  uint32_t ks[2] = {8, 16}, nk = 2, j;
  double mss[2] = {5, 1};

  for (i = 2; i < argc; ++i) {
    const char *a = argv[i];
    const char *why;
    uint64_t v;
    if (!strcmp(a, "--json")) {
      json = 1;
      continue;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "srd-sim bench: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--k")) {
      if (sim_parse_uint(argv[i + 1], 64, &v, &why) != 0 || v < 2 || v % 2) {
        fprintf(stderr,
                "srd-sim bench: --k %s: expected an even number "
                "from 2 to 64\n",
                argv[i + 1]);
        return 2;
      }
      k = (uint32_t)v;
    } else if (!strcmp(a, "--ms")) {
      char *end;
      ms = strtod(argv[i + 1], &end);
      if (*end || !(ms > 0) || ms > 1e6) {
        fprintf(stderr,
                "srd-sim bench: --ms %s: expected a positive number "
                "of milliseconds\n",
                argv[i + 1]);
        return 2;
      }
    } else if (!strcmp(a, "--seed")) {
      if (sim_parse_uint(argv[i + 1], UINT64_MAX, &seed, &why) != 0) {
        fprintf(stderr, "srd-sim bench: --seed %s: expected %s\n", argv[i + 1],
                why);
        return 2;
      }
    } else {
      fprintf(stderr, "srd-sim bench: unknown option %s\n", a);
      usage(stderr);
      return 2;
    }
    ++i;
  }
  if (k) {
    ks[0] = k;
    mss[0] = ms > 0 ? ms : (k <= 8 ? 5 : 1);
    nk = 1;
  } else if (ms > 0) {
    mss[0] = mss[1] = ms;
  }
  if (json && nk > 1) {
    printf("[");
  }
  for (j = 0; j < nk; ++j) {
    sim_result res;
    char err[512];
    double sim_s = mss[j] / 1e3, rss;
    uint32_t hosts = ks[j] * ks[j] * ks[j] / 4;
    if (sim_bench(ks[j], mss[j], seed, &res, err, sizeof(err)) != 0) {
      fprintf(stderr, "srd-sim bench: %s\n", err);
      rc = 1;
      break;
    }
    rss = peak_rss_mb();
    if (json) {
      printf("%s{\"k\": %u, \"hosts\": %u, \"ms\": %g, \"transport\": \"srd\""
             ", \"events\": %llu, \"packet_hops\": %llu, \"wall_s\": %.4f"
             ", \"events_per_s\": %.0f, \"packet_hops_per_s\": %.0f"
             ", \"sim_to_wall\": %.6f, \"peak_rss_mb\": %.1f"
             ", \"throughput_fraction\": %.4f, \"drops\": %llu"
             ", \"trace_hash\": \"%016llx\"}",
             first ? "" : ",\n ", ks[j], hosts, mss[j],
             (unsigned long long)res.events, (unsigned long long)res.hops,
             res.wall_s, (double)res.events / res.wall_s,
             (double)res.hops / res.wall_s, sim_s / res.wall_s, rss,
             res.tput_fraction, (unsigned long long)res.drops,
             (unsigned long long)res.trace_hash);
    } else {
      printf("k=%u fat tree: %u hosts, 100 Gb/s, 1 us links, 200 KB queues; "
             "SRD in every host\n",
             ks[j], hosts);
      printf("  permutation, 64 KiB messages x 4 per flow, MTU 4096, %g ms "
             "simulated, seed %llu\n",
             mss[j], (unsigned long long)seed);
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
    }
    first = 0;
    sim_result_fini(&res);
  }
  if (json) {
    printf(nk > 1 ? "]\n" : "\n");
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "run")) {
    return cmd_run(argc, argv, 0);
  }
  if (!strcmp(argv[1], "check")) {
    return cmd_run(argc, argv, 1);
  }
  if (!strcmp(argv[1], "bench")) {
    return cmd_bench(argc, argv);
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "srd-sim: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
