/*
 * run.c: one run of a scenario with one transport: create the
 * simulation, build the topology, make the workload, put the faults on,
 * attach the transport, run in slices until the duration or until the
 * work is done, and measure (docs/scenarios.md, "What is measured");
 * and the simulator's speed benchmark.
 *
 * Every transport of a scenario runs in its own simulation built from
 * the same seed: the same topology, ECMP seeds, faults, loss streams and
 * workload, so the only difference between two runs is the transport.
 */
#include "run_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_clock.h"

int run_fail(run_ctx *r, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(r->err, r->errlen, fmt, ap);
  va_end(ap);
  r->failed = 1;
  netsim_evl_stop(netsim_sim_evl(r->sim));
  return -1;
}

/* progress_bar draws (or, when |final|, clears) the progress of run |r| at
   simulated time |t| of |until| on stderr. */
static void progress_bar(const run_ctx *r, netsim_time t, netsim_time until,
                         int final) {
  int w = 30, i, fill;
  double f = until ? (double)t / (double)until : 1;
  char a[24], b[24];

  if (final) {
    fprintf(stderr, "\r%*s\r", 79, "");
    return;
  }
  fill = (int)(f * w);
  sim_fmt_time(t, a, sizeof(a));
  sim_fmt_time(until, b, sizeof(b));
  fprintf(stderr, "\r  %-12.12s [", r->tr->name);
  for (i = 0; i < w; ++i) {
    fputc(i < fill ? '#' : '.', stderr);
  }
  fprintf(stderr, "] %3.0f%%  %s of %s ", f * 100, a, b);
  fflush(stderr);
}

int sim_run(const sim_scn *s, uint32_t tri, const sim_run_opts *o,
            sim_result *res, char *err, size_t errlen) {
  run_ctx r;
  netsim_settings set;
  simx_app app;
  int rv = 0;
  double w0;
  netsim_time t, slice;

  memset(&r, 0, sizeof(r));
  memset(res, 0, sizeof(*res));
  r.s = s;
  r.tr = &s->tr[tri];
  r.o = o;
  r.res = res;
  r.err = err;
  r.errlen = errlen;
  r.first_post = NETSIM_TIME_NONE;
  snprintf(res->transport, sizeof(res->transport), "%s", r.tr->name);
  snprintf(res->kind, sizeof(res->kind), "%s",
           r.tr->type == SCN_XPORT_SRD   ? "srd"
           : r.tr->type == SCN_XPORT_TOS ? "tcp-over-srd"
                                         : "tcp");
  err[0] = '\0';

  netsim_settings_default(&set);
  set.seed = s->seed;
  set.max_pkts = s->n_hosts * s->pkts_per_host + 4096 + run_dup_headroom(s);
  /* Payloads are transport headers: SRD data headers travel inline in the
     packet; ACKs (up to about 180 bytes with their echoes) and TCP's
     96-byte header use a pool buffer, which is touched only when used. */
  set.payload_max = 192;
  set.max_payloads = set.max_pkts;
  set.max_events = 4096 + 4 * SCN_MAX_FAULTS * 64;
  set.reconverge = s->reconverge;
  rv = netsim_sim_new(&r.sim, &set, NULL);
  if (rv != 0) {
    snprintf(err, errlen, "creating the simulation failed: %s",
             netsim_strerror(rv));
    return -1;
  }
  if (run_build_topo(&r) != 0 || run_workload_gen(&r) != 0 ||
      run_build_faults(&r) != 0 || run_capture_start(&r) != 0) {
    if (err[0] == '\0') {
      snprintf(err, errlen, "out of memory");
    }
    rv = -1;
    goto out;
  }
  run_workload_app(&r, &app);
  if (r.tr->type == SCN_XPORT_SRD) {
    sim_srd_cfg c = r.tr->srd;
    run_size_srd(&r, &c);
    rv = sim_srd_new(&r.x, r.sim, &c, &app, err, errlen);
  } else if (r.tr->type == SCN_XPORT_TOS) {
    sim_tos_cfg c;
    c.tcp = r.tr->tcp;
    c.srd = r.tr->srd;
    c.queue = r.tr->tos_queue;
    run_size_srd(&r, &c.srd);
    rv = sim_tos_new(&r.x, r.sim, &c, &app, err, errlen);
  } else {
    rv = sim_tcp_new(&r.x, r.sim, &r.tr->tcp, &app, err, errlen);
  }
  if (rv != 0) {
    char why[256];
    snprintf(why, sizeof(why), "%s", err[0] ? err : netsim_strerror(rv));
    snprintf(err, errlen, "[transport.%s]: %s", r.tr->name, why);
    rv = -1;
    goto out;
  }
  run_measure_init(&r);
  if (run_workload_arm(&r) != 0) {
    rv = -1;
    goto out;
  }
  /* Run in slices (for the progress bar) until the duration, until all
     the work is done, or until o->interrupt is set (the event list checks
     it before each event). */
  netsim_evl_set_interrupt(netsim_sim_evl(r.sim), o->interrupt);
  slice = s->duration / 100 ? s->duration / 100 : 1;
  w0 = tool_now_s(); /* for res->wall_s only: nothing measured reads it */
  for (t = 0; t < s->duration && !r.done && !r.failed && !r.interrupted;) {
    netsim_time until = t + slice < s->duration ? t + slice : s->duration;
    netsim_sim_run_until(r.sim, until);
    t = netsim_sim_now(r.sim);
    if (o->interrupt && *o->interrupt && !r.done && !r.failed &&
        t < s->duration) {
      r.interrupted = 1; /* measured as far as it got */
    } else if (t < until && !r.done && !r.failed) {
      t = until; /* stopped by nothing: move on */
    }
    if (o->progress) {
      progress_bar(&r, t, s->duration, 0);
    }
  }
  res->wall_s = tool_now_s() - w0;
  if (o->progress) {
    progress_bar(&r, t, s->duration, 1);
  }
  if (r.failed) {
    rv = -1;
    goto out;
  }
  res->stopped_early = r.done;
  res->interrupted = r.interrupted;
  res->n_flows_unbounded = 0;
  run_measure(&r);
out:
  if (run_capture_stop(&r) != 0) {
    rv = -1;
  }
  run_measure_fini(&r);
  simx_del(r.x);
  run_workload_fini(&r);
  netsim_sim_del(r.sim);
  return rv;
}

void sim_result_fini(sim_result *res) {
  uint64_t i, nb;

  free(res->tput_bins);
  free(res->q_time);
  free(res->q_bytes);
  free(res->flows);
  free(res->links);
  free(res->fseries_flow);
  free(res->fbins);
  if (res->msgs) {
    nb = (res->n_msg_recs + SIM_MSG_BLOCK - 1) / SIM_MSG_BLOCK;
    for (i = 0; i < nb; ++i) {
      free(res->msgs[i]);
    }
    free(res->msgs);
  }
  memset(res, 0, sizeof(*res));
}

int sim_bench(uint32_t k, double ms, uint64_t seed, sim_result *res, char *err,
              size_t errlen) {
  scn_raw raw;
  sim_scn s;
  sim_run_opts o;
  char buf[128];
  int rv;

  sim_scn_raw_init(&raw);
  snprintf(raw.file, sizeof(raw.file), "bench");
  snprintf(raw.dir, sizeof(raw.dir), ".");
  /* htsim's benchmark: a k-ary fat tree at 100 Gb/s, permutation traffic
     keeping the network full (issue 3, "Speed"). */
  rv = sim_scn_set(&raw, "scenario.transports=srd", "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "scenario.seed=%llu", (unsigned long long)seed);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "scenario.duration=%gms", ms);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "scenario.warmup=0", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "scenario.pkts_per_host=96", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.type=fattree", "bench", 0, err, errlen);
  snprintf(buf, sizeof(buf), "topology.k=%u", k);
  rv |= sim_scn_set(&raw, buf, "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.rate=100G", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.delay=1us", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "topology.queue=200K", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.type=permutation", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.message=64K", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "workload.window=8", "bench", 0, err, errlen);
  rv |= sim_scn_set(&raw, "transport.srd.mtu=8192", "bench", 0, err, errlen);
  if (rv != 0 || sim_scn_compile(&raw, &s, err, errlen) != 0) {
    sim_scn_raw_fini(&raw);
    return -1;
  }
  s.warmup = 0;
  memset(&o, 0, sizeof(o));
  rv = sim_run(&s, 0, &o, res, err, errlen);
  sim_scn_fini(&s);
  sim_scn_raw_fini(&raw);
  return rv;
}
