#!/bin/bash
# run-tests.sh: run every test program under $OUT/test and the tool tests,
# each with a time limit; exit status 77 means "skipped".  Prints one line
# per test and a summary; fails if any test failed.
set -u
OUT=${OUT:-build}
SAN=${SAN:-0}
LIMIT=${TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0 failed=""
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/test/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The sanitizer build runs fewer property-test iterations (slower code);
# the plain build runs the full count.
if [ "$SAN" = 1 ]; then export SRD_PROP_RUNS=${SRD_PROP_RUNS:-250}; fi

run() {
  local name=$1; shift
  local log=$OUT/test/$name.log start end rc
  start=$(date +%s.%N)
  timeout "$LIMIT" "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local t
  t=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
  case $rc in
    0) pass=$((pass+1)); printf '  PASS   %-28s %6ss\n' "$name" "$t" ;;
    77) skip=$((skip+1)); printf '  SKIP   %-28s %s\n' "$name" "$(tail -n1 "$log")" ;;
    *) fail=$((fail+1)); failed="$failed $name"
       printf '  FAIL   %-28s (exit %d) log: %s\n' "$name" "$rc" "$log"
       tail -n 40 "$log" | sed 's/^/         /' ;;
  esac
}

# TESTS (from make test) lists the binaries this configuration built;
# without it, every binary under $OUT.
if [ -z "${TESTS:-}" ]; then
  TESTS=$(ls "$OUT"/test/test_* "$OUT"/test/replay_* "$OUT"/bin/example-* \
    2>/dev/null | grep -v '\.log$')
fi
for t in $TESTS; do
  [ -x "$t" ] || { echo "run-tests: $t was not built"; fail=$((fail+1)); continue; }
  name=$(basename "$t")
  case $name in
    replay_*) run "$name" "$t" "test/fuzz/corpus/${name#replay_}" ;;
    *) run "$name" "$t" ;;
  esac
done
for t in test/tools/test_*.sh; do
  [ -x "$t" ] || continue
  run "$(basename "$t" .sh)" env OUT="$OUT" "$t"
done

# The golden outputs: what the tools print, byte for byte.
run golden env OUT="$OUT" SAN="$SAN" test/golden/golden.sh

echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
