#!/bin/bash
# scenario_lib.sh: what the scenario tests share (sourced, not run).
# Each test_scenario_*.sh runs a small version of one of scenarios/*.ini
# with srd-sim --json and checks, in Python, the qualitative result the
# scenario exists to show, computed from the run.  Runs are deterministic
# (the scenario's seed); SRD_TEST_SEED, if set, replaces it, and the seed
# is printed so that a failure can be rerun exactly.
set -u
OUT=${OUT:-build}
SIM=$OUT/bin/srd-sim
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$SIM" ] || fail "no $SIM"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SEED_ARGS=()
if [ -n "${SRD_TEST_SEED:-}" ]; then
  SEED_ARGS=(--seed "$SRD_TEST_SEED")
  echo "seed=$SRD_TEST_SEED (SRD_TEST_SEED)"
else
  echo "seed: the scenario's own (rerun with SRD_TEST_SEED=N to change it)"
fi

# sim NAME.json SCENARIO ARGS...: run srd-sim --json --quiet into
# $tmp/NAME.json, failing the test on a non-zero exit.
sim() {
  local out=$1 scn=$2
  shift 2
  echo "\$ srd-sim run scenarios/$scn.ini $* --json"
  "$SIM" run "scenarios/$scn.ini" --json --quiet "${SEED_ARGS[@]}" "$@" \
    > "$tmp/$out" || fail "srd-sim exited $? on $scn"
}
