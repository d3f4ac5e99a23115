/*
 * test_scn.c: scenario files (netsim/scenario/scn_*.c): values with
 * units, a whole scenario compiled, errors that name file, line, key and
 * what was expected, --set overriding the file, built-in and defined
 * transports (TCP over SRD's keys), sweep points, bit-error rates,
 * duplication, the RPC class.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "sim_scn.h"

static int load(scn_raw *r, const char *text, char *err, size_t n) {
  sim_scn_raw_init(r);
  return sim_scn_load_string(r, "t.ini", text, strlen(text), err, n);
}

/* compile_err compiles |text| and returns its error message. */
static const char *compile_err(const char *text) {
  static char err[1024];
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));

  err[0] = '\0';
  assert_non_null(s);
  if (load(&r, text, err, sizeof(err)) == 0) {
    assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), -1);
  }
  sim_scn_raw_fini(&r);
  free(s);
  return err;
}

static void test_scn_values(void **state) {
  uint64_t v;
  double p;
  const char *why;

  (void)state;
  assert_int_equal(sim_parse_size("9000", &v, &why), 0);
  assert_int_equal(v, 9000);
  assert_int_equal(sim_parse_size("64K", &v, &why), 0);
  assert_int_equal(v, 65536);
  assert_int_equal(sim_parse_size("1.5 MiB", &v, &why), 0);
  assert_int_equal(v, 1572864);
  assert_int_equal(sim_parse_size("200KB", &v, &why), 0);
  assert_int_equal(v, 200000);
  assert_int_equal(sim_parse_size("1.5", &v, &why), -1);
  assert_int_equal(sim_parse_size("-1", &v, &why), -1);
  assert_int_equal(sim_parse_size("12 apples", &v, &why), -1);
  assert_int_equal(sim_parse_rate("100G", &v, &why), 0);
  assert_int_equal(v, NETSIM_GBPS(100));
  assert_int_equal(sim_parse_rate("2.5 Gbps", &v, &why), 0);
  assert_int_equal(v, 2500000000ULL);
  assert_int_equal(sim_parse_rate("800Mb/s", &v, &why), 0);
  assert_int_equal(v, NETSIM_MBPS(800));
  assert_int_equal(sim_parse_rate("100", &v, &why), -1); /* no unit */
  assert_int_equal(sim_parse_rate("20T", &v, &why), -1); /* too fast */
  assert_int_equal(sim_parse_time("10us", &v, &why), 0);
  assert_int_equal(v, 10 * NETSIM_US);
  assert_int_equal(sim_parse_time("1.5ms", &v, &why), 0);
  assert_int_equal(v, 1500 * NETSIM_US);
  assert_int_equal(sim_parse_time("2 s", &v, &why), 0);
  assert_int_equal(v, 2 * NETSIM_S);
  assert_int_equal(sim_parse_time("0", &v, &why), 0);
  assert_int_equal(v, 0);
  assert_int_equal(sim_parse_time("5", &v, &why), -1); /* no unit */
  assert_int_equal(sim_parse_prob("0.001", &p, &why), 0);
  assert_true(p == 0.001);
  assert_int_equal(sim_parse_prob("1%", &p, &why), 0);
  assert_true(p == 0.01);
  /* A percentage is divided by 100: 35 * 0.01 would be 0.35000000000000003
     and 3.1 * 0.01 0.031000000000000003, one unit in the last place above
     the double the text names. */
  assert_int_equal(sim_parse_prob("35%", &p, &why), 0);
  assert_true(p == 0.35);
  assert_int_equal(sim_parse_prob(" 3.1 % ", &p, &why), 0);
  assert_true(p == 0.031);
  assert_int_equal(sim_parse_prob("100%", &p, &why), 0);
  assert_true(p == 1);
  assert_int_equal(sim_parse_prob("101%", &p, &why), -1);
  assert_int_equal(sim_parse_prob("1%%", &p, &why), -1);
  assert_int_equal(sim_parse_prob("%", &p, &why), -1);
  assert_int_equal(sim_parse_prob("2", &p, &why), -1);
  assert_int_equal(sim_parse_ber("1e-6", &p, &why), 0);
  assert_true(p == 1e-6);
  assert_int_equal(sim_parse_ber("0.0001", &p, &why), 0);
  assert_true(p == 1e-4);
  assert_int_equal(sim_parse_ber("0", &p, &why), 0);
  assert_true(p == 0);
  assert_int_equal(sim_parse_ber("1", &p, &why), 0);
  assert_int_equal(sim_parse_ber("1.5", &p, &why), -1);
  assert_int_equal(sim_parse_ber("-1e-6", &p, &why), -1);
  assert_int_equal(sim_parse_ber("1e-6%", &p, &why), -1);
  assert_int_equal(sim_parse_ber("1e-999", &p, &why), -1); /* underflows */
  assert_int_equal(sim_parse_ber("nan", &p, &why), -1);
  assert_int_equal(sim_parse_ber("", &p, &why), -1);
  assert_string_equal(why, "a bit-error rate from 0 to 1, errors per bit, e.g. "
                           "1e-6");
  assert_int_equal(sim_parse_uint("42", 100, &v, &why), 0);
  assert_int_equal(v, 42);
  assert_int_equal(sim_parse_uint("420", 100, &v, &why), -1);
  assert_string_equal(why, "a whole number up to 100");
  assert_int_equal(sim_parse_uint("4x", 100, &v, &why), -1);
  assert_string_equal(why, "a whole number");
  /* Blanks around it are trimmed; leading zeros, however many, are the
     number's; beyond 64 bits is not a number. */
  assert_int_equal(sim_parse_uint(" \t7 ", 100, &v, &why), 0);
  assert_int_equal(v, 7);
  assert_int_equal(
      sim_parse_uint("000000000000000000000000000000000009", 100, &v, &why), 0);
  assert_int_equal(v, 9);
  assert_int_equal(sim_parse_uint("18446744073709551615", UINT64_MAX, &v, &why),
                   0);
  assert_true(v == UINT64_MAX);
  assert_int_equal(sim_parse_uint("18446744073709551616", UINT64_MAX, &v, &why),
                   -1);
  assert_string_equal(why, "a whole number");
  assert_int_equal(sim_parse_uint("4 2", 100, &v, &why), -1);
  assert_int_equal(sim_parse_uint("+4", 100, &v, &why), -1);
  assert_int_equal(sim_parse_uint("", 100, &v, &why), -1);
  /* Sizes: any case, blanks inside; whole bytes only; hexadecimal as
     strtod reads it. */
  assert_int_equal(sim_parse_size(" 64 k ", &v, &why), 0);
  assert_int_equal(v, 65536);
  assert_int_equal(sim_parse_size("2kb", &v, &why), 0);
  assert_int_equal(v, 2000);
  assert_int_equal(sim_parse_size("1.1B", &v, &why), -1);
  assert_int_equal(sim_parse_size("0x10", &v, &why), 0);
  assert_int_equal(v, 16);
  assert_int_equal(sim_parse_size("inf", &v, &why), -1);
  assert_int_equal(sim_parse_time("0.0", &v, &why), 0);
  assert_int_equal(v, 0);
  assert_int_equal(sim_parse_time("1 MS", &v, &why), 0);
  assert_int_equal(v, NETSIM_MS);
  assert_int_equal(sim_parse_time("200000s", &v, &why), -1);
  assert_string_equal(why, "a time up to 100000 s");
}

/* load_of compiles a random workload with "load = |v|" and returns its
   load, or -1 when the value is refused (with the message checked). */
static double load_of(const char *v) {
  char text[256], err[512];
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  double x = -1;

  assert_non_null(s);
  /* The CDF file is read from the tests' folder, the source tree's. */
  snprintf(text, sizeof(text),
           "[workload]\ntype = random\ncdf = scenarios/cdf/websearch.cdf\n"
           "load = %s\n",
           v);
  assert_int_equal(load(&r, text, err, sizeof(err)), 0);
  if (sim_scn_compile(&r, s, err, sizeof(err)) == 0) {
    x = s->load;
    sim_scn_fini(s);
  } else {
    assert_non_null(strstr(err, "expected a load from 0 (excluded) to 1"));
  }
  sim_scn_raw_fini(&r);
  free(s);
  return x;
}

/* A load is a fraction or a percentage, as its message says ("e.g. 0.5
   or 50%"): "50%" was refused, its number checked before the percent. */
static void test_scn_load(void **state) {
  (void)state;
  assert_true(load_of("0.5") == 0.5);
  assert_true(load_of("50%") == 0.5);
  assert_true(load_of(" 30 % ") == 0.3);
  assert_true(load_of("100%") == 1);
  assert_true(load_of("0.5%") == 0.005);
  assert_true(load_of("1") == 1);
  assert_true(load_of("0") == -1);
  assert_true(load_of("0%") == -1);
  assert_true(load_of("101%") == -1);
  assert_true(load_of("1.5") == -1);
  assert_true(load_of("0.5x") == -1);
  assert_true(load_of("-0.5") == -1);
}

static void test_scn_compile(void **state) {
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  char err[512];
  const char *text = "; a comment\n"
                     "[scenario]\n"
                     "name = demo\n"
                     "seed = 9\n"
                     "transports = srd, tcp, mine, srd-blind\n"
                     "duration = 5ms\n"
                     "[topology]\n"
                     "type = leafspine\n"
                     "spines = 4\n"
                     "leaves = 3\n"
                     "hosts_per_leaf = 2\n"
                     "rate = 25G\n"
                     "spine_rates = 10G, 25G, 25G, 25G\n"
                     "queue = 100K\n"
                     "ecn = 30K\n"
                     "[workload]\n"
                     "type = pairs\n"
                     "pairs = 0>2, 1>5\n"
                     "message = 64K\n"
                     "[faults]\n"
                     "down = leaf0-spine1@1ms, spine2@2ms\n"
                     "link_loss = host3:0.5%\n"
                     "loss = 0.0001\n"
                     "[transport.mine]\n"
                     "type = tcp\n"
                     "cc = dctcp\n"
                     "rto_min = 5ms\n"
                     "[transport.srd]\n"
                     "paths = 16\n"
                     "ordered = yes\n";

  (void)state;
  assert_int_equal(load(&r, text, err, sizeof(err)), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_string_equal(s->name, "demo");
  assert_int_equal(s->seed, 9);
  assert_int_equal(s->duration, 5 * NETSIM_MS);
  assert_int_equal(s->warmup, s->duration / 10); /* unbounded flows */
  assert_int_equal(s->topo, SCN_TOPO_LEAFSPINE);
  assert_int_equal(s->n_hosts, 6);
  assert_int_equal(s->n_lanes, 4);
  assert_int_equal(s->lane_rate[0], NETSIM_GBPS(10));
  assert_int_equal(s->queue, 102400);
  assert_int_equal(s->ecn, 30720);
  assert_int_equal(s->wl, SCN_WL_PAIRS);
  assert_int_equal(s->n_pairs, 2);
  assert_int_equal(s->pairs[1][0], 1);
  assert_int_equal(s->pairs[1][1], 5);
  assert_int_equal(s->n_faults, 3);
  assert_int_equal(s->faults[1].op, SCN_FAULT_DOWN);
  assert_int_equal(s->faults[1].link.kind, 3);
  assert_int_equal(s->faults[1].at_ps, 2 * NETSIM_MS);
  assert_int_equal(s->faults[2].op, SCN_FAULT_LOSS);
  assert_true(s->faults[2].p == 0.005);
  assert_int_equal(s->n_tr, 4);
  assert_int_equal(s->tr[0].type, SCN_XPORT_SRD);
  assert_int_equal(s->tr[0].srd.peer.n_paths, 16);
  assert_int_equal(s->tr[0].srd.peer.ordered, 1);
  assert_int_equal(s->tr[1].type, SCN_XPORT_TCP);
  assert_int_equal(s->tr[1].tcp.rto_min, 200 * NETSIM_MS);
  assert_int_equal(s->tr[2].type, SCN_XPORT_TCP);
  assert_int_equal(s->tr[2].tcp.cc, SIM_TCP_CC_DCTCP);
  assert_int_equal(s->tr[2].tcp.ecn, 1);
  assert_int_equal(s->tr[2].tcp.rto_min, 5 * NETSIM_MS);
  assert_int_equal(s->tr[3].srd.ep.path_steering, 0);
  assert_string_equal(s->tr[3].srd.ep.cc, "swift");
  sim_scn_fini(s);
  /* --set comes after the file and wins. */
  assert_int_equal(
      sim_scn_set(&r, "topology.leaves=4", "--set", 0, err, sizeof(err)), 0);
  assert_int_equal(
      sim_scn_set(&r, "transport.mine.rto_min=1ms", "--set", 0, err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_hosts, 8);
  assert_int_equal(s->tr[2].tcp.rto_min, 1 * NETSIM_MS);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  free(s);
}

static void test_scn_errors(void **state) {
  (void)state;
  assert_string_equal(
      compile_err("[scenario]\nname = ok\n\n[topology]\ntype = torus\n"),
      "t.ini:5: [topology] type = torus: expected dumbbell, leafspine or "
      "fattree");
  assert_string_equal(compile_err("[topology]\nk = 5\n"),
                      "t.ini:2: [topology] k = 5: expected an even number "
                      "from 2 to 64");
  assert_non_null(strstr(compile_err("[workload]\nwindow = 0\n"),
                         "t.ini:2: [workload] window = 0: expected a whole "
                         "number from 1 to 65536"));
  assert_non_null(strstr(compile_err("[faults]\ndegrade = spine0@1ms\n"),
                         "t.ini:2: [faults] degrade = spine0@1ms: item 1: "
                         "expected LINK@TIME:RATE"));
  assert_non_null(strstr(compile_err("[faults]\ndown = rack3@1ms\n"),
                         "expected a link name"));
  assert_non_null(strstr(compile_err("[topology]\ntype = dumbbell\npaths = 2\n"
                                     "[faults]\ndown = path2@1ms\n"),
                         "t.ini:5: [faults] down = path2@1ms: link 'path2': "
                         "path index beyond"));
  assert_non_null(strstr(compile_err("[scenario]\ntransports = tcp\n"
                                     "[transport.tcp]\npaths = 4\n"),
                         "t.ini:4: [transport.tcp] paths = 4: unknown key "
                         "'paths' in [transport.tcp]"));
  assert_non_null(strstr(compile_err("[scenario]\ntransports = a\n"
                                     "[transport.a]\ntype = quic\n"),
                         "t.ini:4: [transport.a] type = quic: expected srd, "
                         "tcp or tcp-over-srd"));
  assert_non_null(strstr(compile_err("[scenario]\nsweep = topology.k=4,6 | "
                                     "workload.window=1\n"),
                         "every key needs as many values"));
  assert_non_null(strstr(compile_err("[workload]\ntype = shuffle\n"),
                         "a shuffle needs bytes > 0"));
  assert_non_null(strstr(compile_err("[topology]\ntype = leafspine\nspines = "
                                     "2\nspine_rates = 1G\n"),
                         "expected one rate per spine (2), got 1"));
  assert_non_null(strstr(compile_err("[scenario]\nnot an assignment\n"),
                         "t.ini:2: syntax error"));
}

/* TCP over SRD: the built-in and a defined one, TCP keys as they are, the
   SRD layer's as srd_KEY, queue; and the RPC class of the workload. */
static void test_scn_tos(void **state) {
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  char err[512];
  const char *text = "[scenario]\n"
                     "transports = tcp-over-srd, mine\n"
                     "[workload]\n"
                     "rpc_min = 4K\n"
                     "rpc_max = 64K\n"
                     "[transport.mine]\n"
                     "type = tcp-over-srd\n"
                     "rto_min = 1ms\n"
                     "srd_rto_min = 50us\n"
                     "srd_paths = 16\n"
                     "queue = 8\n";

  (void)state;
  assert_int_equal(load(&r, text, err, sizeof(err)), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_tr, 2);
  assert_int_equal(s->tr[0].type, SCN_XPORT_TOS);
  assert_int_equal(s->tr[0].tcp.mss, 8140);
  assert_int_equal(s->tr[0].tcp.rto_min, 200 * NETSIM_MS);
  assert_int_equal(s->tr[0].srd.peer.ordered, 1);
  assert_int_equal(s->tr[0].srd.peer.n_paths, 64);
  assert_int_equal(s->tr[0].tos_queue, 0);
  assert_int_equal(s->tr[1].type, SCN_XPORT_TOS);
  assert_int_equal(s->tr[1].tcp.rto_min, 1 * NETSIM_MS);
  assert_int_equal(s->tr[1].srd.ep.rto_min, 50000);
  assert_int_equal(s->tr[1].srd.peer.n_paths, 16);
  assert_int_equal(s->tr[1].srd.peer.ordered, 1);
  assert_int_equal(s->tr[1].tos_queue, 8);
  assert_int_equal(s->rpc_min, 4096);
  assert_int_equal(s->rpc_max, 65536);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  free(s);
  assert_non_null(strstr(compile_err("[scenario]\ntransports = tcp-over-srd\n"
                                     "[transport.tcp-over-srd]\n"
                                     "srd_ordered = 0\n"),
                         "TCP over SRD is always ordered"));
  assert_non_null(strstr(compile_err("[scenario]\ntransports = tcp-over-srd\n"
                                     "[transport.tcp-over-srd]\n"
                                     "paths = 4\n"),
                         "unknown key 'paths'"));
  assert_non_null(strstr(compile_err("[scenario]\ntransports = tcp-over-srd\n"
                                     "[transport.tcp-over-srd]\n"
                                     "paths = 4\n"),
                         "; or queue, or srd_KEY for an SRD key"));
  assert_non_null(strstr(compile_err("[scenario]\ntransports = tcp-over-srd\n"
                                     "[transport.tcp-over-srd]\n"
                                     "srd_paths = 0\n"),
                         "t.ini:4: [transport.tcp-over-srd] srd_paths = 0: "
                         "expected a whole number from 1"));
  assert_non_null(strstr(compile_err("[workload]\nrpc_min = 64K\n"
                                     "rpc_max = 4K\n"),
                         "rpc_min is above rpc_max"));
  assert_non_null(
      strstr(compile_err("[workload]\nrpc_min = 4K\n"), "rpc_min needs"));
}

static void test_scn_ber(void **state) {
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  char err[512];

  (void)state;
  /* No key: no bit errors. */
  assert_int_equal(load(&r, "[topology]\ntype = dumbbell\n", err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->ber == 0);
  assert_int_equal(s->ber_scope, SCN_LOSS_ALL);
  assert_int_equal(sim_scn_has_ber(s), 0);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* Every link, the fabric's, or chosen cables. */
  assert_int_equal(load(&r,
                        "[topology]\ntype = dumbbell\npaths = 4\n"
                        "[faults]\nber = 1e-7\nber_scope = fabric\n"
                        "link_ber = path1:1e-5, host0 : 2e-6\n"
                        "link_loss = path2:1%\n",
                        err, sizeof(err)),
                   0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->ber == 1e-7);
  assert_int_equal(s->ber_scope, SCN_LOSS_FABRIC);
  assert_int_equal(s->loss_scope, SCN_LOSS_FABRIC);
  assert_int_equal(s->n_faults, 3);
  assert_int_equal(s->faults[0].op, SCN_FAULT_BER);
  assert_int_equal(s->faults[0].link.kind, 1);
  assert_int_equal(s->faults[0].link.a, 1);
  assert_true(s->faults[0].p == 1e-5);
  assert_int_equal(s->faults[1].op, SCN_FAULT_BER);
  assert_int_equal(s->faults[1].link.kind, 0);
  assert_true(s->faults[1].p == 2e-6);
  assert_int_equal(s->faults[2].op, SCN_FAULT_LOSS);
  assert_int_equal(sim_scn_has_ber(s), 1);
  sim_scn_fini(s);
  /* Only chosen cables (a --set turns the global rate off). */
  assert_int_equal(sim_scn_set(&r, "faults.ber=0", "--set", 0, err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->ber == 0);
  assert_int_equal(sim_scn_has_ber(s), 1);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* link_ber entries of 0 put no bit errors anywhere. */
  assert_int_equal(load(&r, "[faults]\nlink_ber = host0:0\n", err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(sim_scn_has_ber(s), 0);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* Errors name the file, the line, the key and what was expected. */
  assert_string_equal(compile_err("[faults]\nber = 1e-3%\n"),
                      "t.ini:2: [faults] ber = 1e-3%: expected a bit-error "
                      "rate from 0 to 1, errors per bit, e.g. 1e-6");
  assert_string_equal(compile_err("[faults]\nber = 2\n"),
                      "t.ini:2: [faults] ber = 2: expected a bit-error "
                      "rate from 0 to 1, errors per bit, e.g. 1e-6");
  assert_string_equal(compile_err("[faults]\n\nber = -1e-9\n"),
                      "t.ini:3: [faults] ber = -1e-9: expected a bit-error "
                      "rate from 0 to 1, errors per bit, e.g. 1e-6");
  assert_string_equal(compile_err("[faults]\nber_scope = some\n"),
                      "t.ini:2: [faults] ber_scope = some: expected fabric "
                      "(switch-to-switch links) or all");
  assert_string_equal(compile_err("[faults]\nlink_ber = host0\n"),
                      "t.ini:2: [faults] link_ber = host0: item 1 "
                      "('host0'): expected LINK:BER");
  assert_string_equal(compile_err("[faults]\nlink_ber = host0:1e-6, "
                                  "host1:lots\n"),
                      "t.ini:2: [faults] link_ber = host0:1e-6, host1:lots: "
                      "item 2: expected a bit-error rate from 0 to 1, errors "
                      "per bit, e.g. 1e-6 after ':'");
  assert_non_null(strstr(compile_err("[faults]\nlink_ber = rack1:1e-6\n"),
                         "item 1 ('rack1'): expected a link name"));
  assert_non_null(strstr(compile_err("[topology]\ntype = dumbbell\npaths = "
                                     "2\n[faults]\nlink_ber = path5:1e-6\n"),
                         "t.ini:5: [faults] link_ber = path5:1e-6: link "
                         "'path5': path index beyond"));
  assert_non_null(strstr(compile_err("[faults]\nbit_error_rate = 1e-6\n"),
                         "unknown key 'bit_error_rate' in [faults]; expected "
                         "one of: down, up, degrade, link_loss, loss, "
                         "loss_scope, link_ber, ber, ber_scope"));
  free(s);
}

static void test_scn_dup(void **state) {
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  char err[512];
  uint64_t v;
  const char *why;

  (void)state;
  assert_int_equal(sim_parse_dup_delay("300ms", &v, &why), 0);
  assert_int_equal(v, 300 * NETSIM_MS);
  assert_int_equal(sim_parse_dup_delay("0", &v, &why), 0);
  assert_int_equal(v, 0);
  assert_int_equal(sim_parse_dup_delay("1000s", &v, &why), 0);
  assert_int_equal(sim_parse_dup_delay("1001s", &v, &why), -1);
  assert_int_equal(sim_parse_dup_delay("300", &v, &why), -1); /* no unit */
  assert_int_equal(sim_parse_dup_delay("-1ms", &v, &why), -1);
  assert_string_equal(why, "a delay from 0 to 1000s, e.g. 0, 50us or 300ms");
  /* No key: no duplication. */
  assert_int_equal(load(&r, "[topology]\ntype = dumbbell\n", err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->dup == 0 && s->dup_delay == 0);
  assert_int_equal(s->dup_scope, SCN_LOSS_ALL);
  assert_int_equal(sim_scn_has_dup(s), 0);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* Every link, the fabric's, or chosen cables, with or without a delay
     of their own. */
  assert_int_equal(load(&r,
                        "[topology]\ntype = dumbbell\npaths = 4\n"
                        "[faults]\ndup = 1%\ndup_delay = 300ms\n"
                        "dup_scope = fabric\n"
                        "link_dup = path1:0.5:20us, host0 : 2%\n"
                        "link_ber = path2:1e-6\n",
                        err, sizeof(err)),
                   0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->dup == 0.01);
  assert_int_equal(s->dup_delay, 300 * NETSIM_MS);
  assert_int_equal(s->dup_scope, SCN_LOSS_FABRIC);
  assert_int_equal(s->ber_scope, SCN_LOSS_ALL);
  assert_int_equal(s->n_faults, 3);
  assert_int_equal(s->faults[0].op, SCN_FAULT_DUP);
  assert_int_equal(s->faults[0].link.kind, 1);
  assert_int_equal(s->faults[0].link.a, 1);
  assert_true(s->faults[0].p == 0.5);
  assert_int_equal(s->faults[0].delay_set, 1);
  assert_int_equal(s->faults[0].delay_ps, 20 * NETSIM_US);
  assert_int_equal(s->faults[1].op, SCN_FAULT_DUP);
  assert_int_equal(s->faults[1].link.kind, 0);
  assert_true(s->faults[1].p == 0.02);
  assert_int_equal(s->faults[1].delay_set, 0);
  assert_int_equal(s->faults[2].op, SCN_FAULT_BER);
  assert_int_equal(sim_scn_has_dup(s), 1);
  assert_int_equal(sim_scn_has_ber(s), 1);
  sim_scn_fini(s);
  /* Only chosen cables (a --set turns the global probability off). */
  assert_int_equal(sim_scn_set(&r, "faults.dup=0", "--set", 0, err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_true(s->dup == 0);
  assert_int_equal(sim_scn_has_dup(s), 1);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* link_dup entries of 0 duplicate nothing anywhere. */
  assert_int_equal(load(&r, "[faults]\nlink_dup = host0:0:1s\n", err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(sim_scn_has_dup(s), 0);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  /* Errors name the file, the line, the key and what was expected. */
  assert_string_equal(compile_err("[faults]\ndup = 150%\n"),
                      "t.ini:2: [faults] dup = 150%: expected a probability, "
                      "0 to 1 (e.g. 0.001) or a percentage (0.1%)");
  assert_string_equal(compile_err("[faults]\n\ndup = -0.1\n"),
                      "t.ini:3: [faults] dup = -0.1: expected a probability, "
                      "0 to 1 (e.g. 0.001) or a percentage (0.1%)");
  assert_string_equal(compile_err("[faults]\ndup_delay = 300\n"),
                      "t.ini:2: [faults] dup_delay = 300: expected a delay "
                      "from 0 to 1000s, e.g. 0, 50us or 300ms");
  assert_string_equal(compile_err("[faults]\ndup_delay = 2000s\n"),
                      "t.ini:2: [faults] dup_delay = 2000s: expected a delay "
                      "from 0 to 1000s, e.g. 0, 50us or 300ms");
  assert_string_equal(compile_err("[faults]\ndup_scope = some\n"),
                      "t.ini:2: [faults] dup_scope = some: expected fabric "
                      "(switch-to-switch links) or all");
  assert_string_equal(compile_err("[faults]\nlink_dup = host0\n"),
                      "t.ini:2: [faults] link_dup = host0: item 1 "
                      "('host0'): expected LINK:PROBABILITY[:DELAY]");
  assert_string_equal(compile_err("[faults]\nlink_dup = host0:1%, "
                                  "host1:lots\n"),
                      "t.ini:2: [faults] link_dup = host0:1%, host1:lots: "
                      "item 2: expected a probability, 0 to 1 (e.g. 0.001) "
                      "or a percentage (0.1%) after ':'");
  assert_string_equal(compile_err("[faults]\nlink_dup = host1:1%:soon\n"),
                      "t.ini:2: [faults] link_dup = host1:1%:soon: item 1: "
                      "expected a delay from 0 to 1000s, e.g. 0, 50us or "
                      "300ms after the second ':'");
  assert_string_equal(compile_err("[faults]\nlink_dup = host1:1%:1ms:2ms\n"),
                      "t.ini:2: [faults] link_dup = host1:1%:1ms:2ms: item "
                      "1: expected a delay from 0 to 1000s, e.g. 0, 50us or "
                      "300ms after the second ':'");
  assert_non_null(strstr(compile_err("[faults]\nlink_dup = rack1:1%\n"),
                         "item 1 ('rack1'): expected a link name"));
  assert_non_null(strstr(compile_err("[topology]\ntype = dumbbell\npaths = "
                                     "2\n[faults]\nlink_dup = path5:1%\n"),
                         "t.ini:5: [faults] link_dup = path5:1%: link "
                         "'path5': path index beyond"));
  assert_non_null(strstr(compile_err("[faults]\nduplicate = 1%\n"),
                         "unknown key 'duplicate' in [faults]; expected "
                         "one of: down, up, degrade, link_loss, loss, "
                         "loss_scope, link_ber, ber, ber_scope, link_dup, "
                         "dup, dup_delay, dup_scope"));
  free(s);
}

/* Allocations fail on request: the test binary is linked with
   -Wl,--wrap=malloc,--wrap=realloc (test/test.mk), so that every call the
   scenario layer makes comes here.  |fail_at| is the call to fail (-1:
   none), |n_allocs| counts the calls. */
void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_realloc(void *p, size_t n);
static long fail_at = -1, n_allocs;

void *__wrap_malloc(size_t n) {
  if (fail_at >= 0 && n_allocs++ == fail_at) {
    return NULL;
  }
  return __real_malloc(n);
}

void *__wrap_realloc(void *p, size_t n) {
  if (fail_at >= 0 && n_allocs++ == fail_at) {
    return NULL;
  }
  return __real_realloc(p, n);
}

/* read_all reads and compiles |text| as srd-sim does (load, --set, every
   sweep point), stopping at the first failure.  Returns 0 or that
   failure's code, with its message in |err|. */
static int read_all(const char *text, char *err, size_t errlen) {
  scn_raw r, p;
  sim_scn *s = malloc(sizeof(*s)), *q = malloc(sizeof(*q));
  uint32_t i;
  int rv;

  if (s == NULL || q == NULL) {
    free(s);
    free(q);
    snprintf(err, errlen, "out of memory");
    return SIM_SCN_NOMEM;
  }
  sim_scn_raw_init(&r);
  rv = sim_scn_load_string(&r, "t.ini", text, strlen(text), err, errlen);
  if (rv == 0) {
    rv = sim_scn_set(&r, "workload.flows=50", "--set", 0, err, errlen);
  }
  if (rv == 0) {
    rv = sim_scn_compile(&r, s, err, errlen);
  }
  if (rv == 0) {
    for (i = 0; i < s->n_sweep_points && rv == 0; ++i) {
      sim_scn_raw_init(&p);
      rv = sim_scn_point(&r, s, i, &p, err, errlen);
      if (rv == 0) {
        rv = sim_scn_compile(&p, q, err, errlen);
      }
      if (rv == 0) {
        sim_scn_fini(q);
      }
      sim_scn_raw_fini(&p);
    }
    sim_scn_fini(s);
  }
  sim_scn_raw_fini(&r);
  free(s);
  free(q);
  return rv;
}

/* Out of memory is told apart from a bad scenario: failing each
   allocation in turn (the entries, --set, the sweep's values, its
   points, the CDF file's points) returns SIM_SCN_NOMEM, never -1, with
   "out of memory" in the message; srd-sim exits 1 on it, not 2. */
static void test_scn_nomem(void **state) {
  static const char text[] =
      "[scenario]\nsweep = workload.window=1,2,4\n[workload]\n"
      "type = random\ncdf = scenarios/cdf/websearch.cdf\nload = 0.3\n";
  char err[512];
  long at, failures = 0;
  int rv;

  (void)state;
  for (at = 0;; ++at) {
    n_allocs = 0;
    fail_at = at;
    rv = read_all(text, err, sizeof(err));
    fail_at = -1;
    if (n_allocs <= at) { /* nothing failed: every allocation was made */
      assert_int_equal(rv, 0);
      break;
    }
    assert_int_equal(rv, SIM_SCN_NOMEM);
    assert_non_null(strstr(err, "out of memory"));
    ++failures;
  }
  /* The entries, the sweep values and points and the CDF all allocate. */
  assert_true(failures >= 10);
  /* A bad scenario is still -1. */
  assert_int_equal(read_all("[workload]\nload = 2\n", err, sizeof(err)), -1);
}

static void test_scn_sweep(void **state) {
  scn_raw r, p;
  sim_scn *s = malloc(sizeof(*s)), *q = malloc(sizeof(*q));
  char err[512], label[256];
  uint32_t i;

  (void)state;
  assert_int_equal(
      load(&r,
           "[scenario]\nsweep = topology.spines=2,4,8 | "
           "topology.hosts_per_leaf=2,4,8\n[topology]\ntype = leafspine\n",
           err, sizeof(err)),
      0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_sweep_keys, 2);
  assert_int_equal(s->n_sweep_points, 3);
  for (i = 0; i < 3; ++i) {
    sim_scn_raw_init(&p);
    assert_int_equal(sim_scn_point(&r, s, i, &p, err, sizeof(err)), 0);
    assert_int_equal(sim_scn_compile(&p, q, err, sizeof(err)), 0);
    assert_int_equal(q->spines, 2u << i);
    assert_int_equal(q->n_hosts, 2 * (2u << i));
    assert_int_equal(q->n_sweep_points, 0); /* a point sweeps nothing */
    sim_scn_fini(q);
    sim_scn_raw_fini(&p);
  }
  sim_scn_point_label(s, 1, label, sizeof(label));
  assert_string_equal(label, "topology.spines=4 topology.hosts_per_leaf=4");
  sim_scn_fini(s);
  /* "sweep =" (e.g. from --set) turns it off. */
  assert_int_equal(sim_scn_set(&r, "scenario.sweep=", "--set", 0, err, 512), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_sweep_points, 0);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  free(s);
  free(q);
}

static void test_scn_files(void **state) {
  /* Every shipped scenario compiles. */
  static const char *const names[] = {
      "ecmp-collision", "single-flow", "random-loss",  "link-failure",
      "incast",         "shuffle",     "hol-blocking", "asymmetric",
      "corruption",     "duplicates"};
  size_t i;

  (void)state;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    char path[128], err[512];
    scn_raw r;
    sim_scn *s = malloc(sizeof(*s));
    snprintf(path, sizeof(path), "scenarios/%s.ini", names[i]);
    sim_scn_raw_init(&r);
    if (sim_scn_load(&r, path, err, sizeof(err)) != 0 ||
        sim_scn_compile(&r, s, err, sizeof(err)) != 0) {
      fail_msg("%s", err);
    }
    assert_string_equal(s->name, names[i]);
    sim_scn_fini(s);
    sim_scn_raw_fini(&r);
    free(s);
  }
}

/* Strict files: an empty path or a folder is no scenario (a folder read
   as nothing, every key its default), a key said twice is an error naming
   both lines, a bare probability above 1 asks whether a percentage was
   meant, and --set replaces a list instead of adding to it. */
static void test_scn_strict(void **state) {
  scn_raw r;
  sim_scn *s = malloc(sizeof(*s));
  char err[512];
  double p;
  const char *why;

  (void)state;
  assert_non_null(s);
  sim_scn_raw_init(&r);
  assert_int_equal(sim_scn_load(&r, "", err, sizeof(err)), -1);
  assert_string_equal(err, "expected a scenario file, got an empty path");
  sim_scn_raw_fini(&r);
  assert_int_equal(sim_scn_load(&r, "scenarios", err, sizeof(err)), -1);
  assert_string_equal(err,
                      "scenarios: is a directory: expected a scenario file");
  sim_scn_raw_fini(&r);

  /* Twice in one section, also when the section is headed again. */
  assert_int_equal(load(&r,
                        "[faults]\nloss = 1%\n[topology]\nk = 4\n"
                        "[faults]\nloss = 2%\n",
                        err, sizeof(err)),
                   -1);
  assert_string_equal(err, "t.ini:6: [faults] loss is given twice in its "
                           "section (first at t.ini:2): give each key once "
                           "(--set changes a value)");
  sim_scn_raw_fini(&r);
  assert_int_equal(load(&r,
                        "[faults]\nlink_loss = host0:1%\nlink_loss = "
                        "host1:1%\nlink_loss = host2:1%\n",
                        err, sizeof(err)),
                   -1);
  assert_non_null(strstr(err, "t.ini:3: [faults] link_loss is given twice"));
  sim_scn_raw_fini(&r);
  /* The same key in two sections is two keys. */
  assert_int_equal(load(&r,
                        "[transport.a]\ntype = tcp\n[transport.b]\ntype = "
                        "tcp\n",
                        err, sizeof(err)),
                   0);
  sim_scn_raw_fini(&r);
  /* An indented line continues the value before it. */
  assert_int_equal(load(&r, "[faults]\nlink_loss = host0:1%,\n  host1:2%\n",
                        err, sizeof(err)),
                   0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_faults, 2);
  assert_true(s->faults[1].p == 0.02);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);

  /* 1 is certain, 1% is 0.01, 2 is a question. */
  assert_int_equal(sim_parse_prob("1", &p, &why), 0);
  assert_true(p == 1);
  assert_int_equal(sim_parse_prob("1%", &p, &why), 0);
  assert_true(p == 0.01);
  assert_int_equal(sim_parse_prob("0.5", &p, &why), 0);
  assert_true(p == 0.5);
  assert_int_equal(sim_parse_prob("2", &p, &why), -1);
  assert_non_null(strstr(why, "did you mean 2%?"));
  assert_int_equal(sim_parse_prob("12.5", &p, &why), -1);
  assert_non_null(strstr(why, "did you mean 12.5%?"));
  assert_non_null(strstr(compile_err("[faults]\nlink_loss = host0:5\n"),
                         "t.ini:2: [faults] link_loss = host0:5: item 1: "
                         "expected a probability from 0 to 1 (a bare number "
                         "is a fraction): did you mean 5%?"));

  /* --set replaces every list the file gives, and an earlier --set. */
  assert_int_equal(load(&r,
                        "[faults]\ndown = host0@1ms, host1@2ms\n"
                        "link_loss = host2:1%, host3:2%\n"
                        "link_dup = host4:1%\nlink_ber = host5:1e-6\n"
                        "[workload]\ntype = pairs\npairs = 0>1, 2>3\n",
                        err, sizeof(err)),
                   0);
  assert_int_equal(
      sim_scn_set(&r, "faults.link_loss=host6:3%", "--set", 0, err, 512), 0);
  assert_int_equal(
      sim_scn_set(&r, "faults.down=host7@3ms", "--set", 0, err, sizeof(err)),
      0);
  assert_int_equal(sim_scn_set(&r, "faults.link_dup=", "--set", 0, err, 512),
                   0);
  assert_int_equal(
      sim_scn_set(&r, "faults.link_dup=host1:5%", "--set", 0, err, sizeof(err)),
      0);
  assert_int_equal(
      sim_scn_set(&r, "workload.pairs=4>5", "--set", 0, err, sizeof(err)), 0);
  assert_int_equal(sim_scn_compile(&r, s, err, sizeof(err)), 0);
  assert_int_equal(s->n_faults, 4);
  {
    uint32_t i, loss = 0, down = 0, dup = 0, ber = 0;
    for (i = 0; i < s->n_faults; ++i) {
      const scn_fault *f = &s->faults[i];
      if (f->op == SCN_FAULT_LOSS) {
        ++loss;
        assert_string_equal(f->link.text, "host6");
        assert_true(f->p == 0.03);
      } else if (f->op == SCN_FAULT_DOWN) {
        ++down;
        assert_string_equal(f->link.text, "host7");
      } else if (f->op == SCN_FAULT_DUP) {
        ++dup;
        assert_string_equal(f->link.text, "host1");
      } else if (f->op == SCN_FAULT_BER) {
        ++ber;
        assert_string_equal(f->link.text, "host5");
      }
    }
    assert_int_equal(loss, 1);
    assert_int_equal(down, 1);
    assert_int_equal(dup, 1);
    assert_int_equal(ber, 1);
  }
  assert_int_equal(s->n_pairs, 1);
  assert_int_equal(s->pairs[0][0], 4);
  sim_scn_fini(s);
  sim_scn_raw_fini(&r);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scn_values),  cmocka_unit_test(test_scn_load),
      cmocka_unit_test(test_scn_compile), cmocka_unit_test(test_scn_errors),
      cmocka_unit_test(test_scn_ber),     cmocka_unit_test(test_scn_dup),
      cmocka_unit_test(test_scn_sweep),   cmocka_unit_test(test_scn_files),
      cmocka_unit_test(test_scn_nomem),   cmocka_unit_test(test_scn_strict),
      cmocka_unit_test(test_scn_tos),
  };
  return cmocka_run_group_tests_name("sim_scn", tests, NULL, NULL);
}
