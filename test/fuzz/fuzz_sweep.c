/*
 * fuzz_sweep.c: libFuzzer target for the sweep folder's two parsers
 * (netsim/scenario/sim_sweep.c): sweep.manifest and a run file, what
 * srd-sim merge reads from folders that other machines wrote.
 *
 * The input's first byte picks the parser; the rest is the file's text.
 *   even: sweep.manifest.  A manifest that parses is within bounds (at
 *         least one point, cell and seed, every cell's point listed, at
 *         most SIM_SWEEP_MAX_RUNS runs, seeds ascending without repeats),
 *         and written back and parsed again it gives the same bytes.
 *   odd:  a run file, parsed as run u = byte / 2 of a fixed manifest (2
 *         points, 3 cells, seeds 1-3 and 7).  One that parses has only
 *         finite figures; written back and parsed again it gives the
 *         same figures.
 * Either parser, failing, says why in a message that names the file.
 *
 * Build: make fuzz-build (clang -fsanitize=fuzzer), run: make fuzz; the
 * gcc build replays test/fuzz/corpus/fuzz_sweep under make test.
 */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static const char fixed[] = "srd-sim sweep 1\n"
                            "scenario fuzz\n"
                            "file fuzz.ini\n"
                            "hash 0123456789abcdef\n"
                            "seeds 1-3,7\n"
                            "point 0 topology.spines=4\n"
                            "point 1 topology.spines=8\n"
                            "cell 0 srd srd\n"
                            "cell 0 tcp tcp\n"
                            "cell 1 srd-x srd\n";

/* text_of writes |sw|'s manifest into a malloc'd buffer. */
static char *text_of(const sim_sweep *sw, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);

  CHECK(f != NULL);
  CHECK(sim_sweep_manifest(f, sw) == 0);
  CHECK(fclose(f) == 0);
  return buf;
}

static void fuzz_manifest(const char *text, size_t len) {
  sim_sweep a, b;
  char err[1024], *out, *again;
  size_t n, n2;
  uint32_t i;

  sim_sweep_init(&a);
  err[0] = '\0';
  if (sim_sweep_parse_manifest(&a, "m", text, len, err, sizeof(err)) != 0) {
    CHECK(err[0] == 'm' || err[0] == '\0'); /* '\0': out of memory */
    sim_sweep_fini(&a);
    return;
  }
  CHECK(a.n_points >= 1 && a.n_points <= SCN_MAX_SWEEP_POINTS);
  CHECK(a.n_cells >= 1 && a.n_seeds >= 1);
  CHECK(sim_sweep_n_runs(&a) <= SIM_SWEEP_MAX_RUNS);
  for (i = 0; i < a.n_cells; ++i) {
    CHECK(a.cell[i].point < a.n_points);
  }
  for (i = 1; i < a.n_seeds; ++i) {
    CHECK(a.seeds[i] > a.seeds[i - 1]);
  }
  out = text_of(&a, &n);
  sim_sweep_init(&b);
  CHECK(sim_sweep_parse_manifest(&b, "m", out, n, err, sizeof(err)) == 0);
  again = text_of(&b, &n2);
  CHECK(n == n2 && memcmp(out, again, n) == 0);
  free(out);
  free(again);
  sim_sweep_fini(&a);
  sim_sweep_fini(&b);
}

static void fuzz_run(uint8_t sel, const char *text, size_t len) {
  sim_sweep sw;
  char err[1024], *out = NULL;
  double v[SIM_SWEEP_NFIG], w[SIM_SWEEP_NFIG];
  size_t n = 0;
  uint64_t u;
  uint32_t i;
  FILE *f;

  sim_sweep_init(&sw);
  CHECK(sim_sweep_parse_manifest(&sw, "fixed", fixed, sizeof(fixed) - 1, err,
                                 sizeof(err)) == 0);
  u = (uint64_t)(sel / 2) % sim_sweep_n_runs(&sw);
  err[0] = '\0';
  if (sim_sweep_parse_run(&sw, u, "r", text, len, v, err, sizeof(err)) != 0) {
    CHECK(err[0] == 'r');
    sim_sweep_fini(&sw);
    return;
  }
  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    CHECK(v[i] != v[i] || isfinite(v[i]));
  }
  f = open_memstream(&out, &n);
  CHECK(f != NULL);
  CHECK(sim_sweep_write_run(f, &sw, u, v) == 0);
  CHECK(fclose(f) == 0);
  CHECK(sim_sweep_parse_run(&sw, u, "r", out, n, w, err, sizeof(err)) == 0);
  for (i = 0; i < SIM_SWEEP_NFIG; ++i) {
    CHECK((v[i] != v[i] && w[i] != w[i]) || v[i] == w[i]);
  }
  free(out);
  sim_sweep_fini(&sw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 64 * 1024) {
    return 0;
  }
  if (data[0] % 2 == 0) {
    fuzz_manifest((const char *)data + 1, size - 1);
  } else {
    fuzz_run(data[0], (const char *)data + 1, size - 1);
  }
  return 0;
}
