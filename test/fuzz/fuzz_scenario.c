/*
 * fuzz_scenario.c: libFuzzer target for the scenario parser
 * (netsim/scenario/scn_*.c): libinih with the line-counting reader, the
 * value parsers, the compiler and the sweep points.
 *
 * The input is the text of a scenario file.  It is read, then compiled;
 * if it has a sweep, every point is compiled too.  Checks (abort() on
 * failure):
 *   - reading or compiling either succeeds or fails with a message that
 *     names the file ("fuzz.ini"), never an empty one;
 *   - a compiled scenario is within the documented bounds: at least 2
 *     hosts and at most 65536, one to SCN_MAX_TRANSPORTS transports, each
 *     srd or tcp, a duration of at least 1 us, a warmup below it, a
 *     message size of at least 1 byte, sweep points within bounds;
 *   - compiling the same entries twice gives the same scenario.
 * Nothing is simulated.
 *
 * Build: make fuzz-build (clang -fsanitize=fuzzer), run: make fuzz; the
 * gcc build replays test/fuzz/corpus/fuzz_scenario under make test.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_scn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static void check_scn(const sim_scn *s) {
  uint32_t i;

  CHECK(s->n_hosts >= 2 && s->n_hosts <= 65536);
  CHECK(s->n_tr >= 1 && s->n_tr <= SCN_MAX_TRANSPORTS);
  for (i = 0; i < s->n_tr; ++i) {
    CHECK(s->tr[i].type == SCN_XPORT_SRD || s->tr[i].type == SCN_XPORT_TCP);
    CHECK(s->tr[i].name[0] != '\0');
  }
  CHECK(s->duration >= NETSIM_US);
  CHECK(s->warmup < s->duration);
  CHECK(s->message >= 1);
  CHECK(s->window >= 1);
  CHECK(s->n_faults <= SCN_MAX_FAULTS);
  CHECK(s->n_sweep_keys <= SCN_MAX_SWEEP_KEYS);
  CHECK(s->n_sweep_points <= SCN_MAX_SWEEP_POINTS);
  CHECK(s->n_sweep_keys == 0 || s->n_sweep_points >= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  scn_raw raw;
  sim_scn *a, *b;
  char err[1024];
  uint32_t p;

  if (size > 64 * 1024) {
    return 0;
  }
  a = malloc(sizeof(*a));
  b = malloc(sizeof(*b));
  CHECK(a != NULL && b != NULL);
  sim_scn_raw_init(&raw);
  err[0] = '\0';
  if (sim_scn_load_string(&raw, "fuzz.ini", (const char *)data, size, err,
                          sizeof(err)) != 0) {
    CHECK(strncmp(err, "fuzz.ini", 8) == 0);
    goto out;
  }
  err[0] = '\0';
  if (sim_scn_compile(&raw, a, err, sizeof(err)) != 0) {
    CHECK(err[0] != '\0');
    goto out;
  }
  check_scn(a);
  CHECK(sim_scn_compile(&raw, b, err, sizeof(err)) == 0);
  CHECK(a->n_hosts == b->n_hosts && a->n_tr == b->n_tr &&
        a->duration == b->duration && a->seed == b->seed &&
        a->n_sweep_points == b->n_sweep_points);
  sim_scn_fini(b);
  for (p = 0; p < a->n_sweep_points; ++p) {
    scn_raw pr;
    char label[256];
    sim_scn_raw_init(&pr);
    sim_scn_point_label(a, p, label, sizeof(label));
    if (sim_scn_point(&raw, a, p, &pr, err, sizeof(err)) == 0) {
      if (sim_scn_compile(&pr, b, err, sizeof(err)) == 0) {
        check_scn(b);
        sim_scn_fini(b);
      } else {
        CHECK(err[0] != '\0');
      }
    }
    sim_scn_raw_fini(&pr);
  }
  sim_scn_fini(a);
out:
  sim_scn_raw_fini(&raw);
  free(a);
  free(b);
  return 0;
}
