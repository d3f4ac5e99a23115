#!/bin/bash
# golden.sh: byte-for-byte regression of what the tools print and write,
# in the manner of htsim's expected-output tests.  Each case is a
# deterministic command (scenario files, srd-loopback, the simulator's
# benchmark trace); its output is reduced to a SHA-256 and compared with
# test/golden/hashes.txt.  A change that is meant to alter results
# regenerates the file and says why in its commit:
#
#   OUT=build test/golden/golden.sh --regen
#
# Any other difference fails, naming the case and the first lines that
# changed (the outputs are kept under $OUT/golden/ for a diff).
set -u
OUT=${OUT:-build}
SAN=${SAN:-0}
HERE=$(dirname "$0")
HASHES=$HERE/hashes.txt
SIM=$OUT/bin/srd-sim
LOOP=$OUT/bin/srd-loopback
DIR=$OUT/golden
regen=0
[ "${1:-}" = "--regen" ] && regen=1
for b in "$SIM" "$LOOP"; do
  [ -x "$b" ] || { echo "golden: no $b (build first)"; exit 1; }
done
rm -rf "$DIR" && mkdir -p "$DIR"

# Every case writes its output to $DIR/<name> (a file or a folder).
cases=()
add() { cases+=("$1"); }

# The scenarios: every file srd-sim writes with -o, and its --json.  The
# three longest are left to the plain build (the sanitizer build is ~10x
# slower and checks memory, not results).
for s in scenarios/*.ini; do
  n=$(basename "$s" .ini)
  if [ "$SAN" = 1 ] && { [ "$n" = shuffle ] || [ "$n" = link-failure ] ||
    [ "$n" = tail-latency ]; }; then
    continue
  fi
  add "scenario-$n"
done
add loopback-sprayed
add loopback-pinned
add loopback-blackhole
add loopback-corrupt
add sim-bench-trace

run_case() {
  local c=$1 o=$DIR/$1
  case $c in
    scenario-*)
      local n=${c#scenario-}
      "$SIM" run "scenarios/$n.ini" -o "$o" --quiet > /dev/null &&
        "$SIM" run "scenarios/$n.ini" --json --quiet > "$o/stdout.json" ;;
    loopback-sprayed)
      "$LOOP" --paths 64 --loss 1 --dup 1 --reorder 5 --messages 500 \
        --size 64K --seed 7 --json > "$o" ;;
    loopback-pinned)
      "$LOOP" --paths 1 --loss 1 --dup 1 --reorder 5 --messages 500 \
        --size 64K --seed 7 --json > "$o" ;;
    loopback-blackhole)
      "$LOOP" --paths 64 --blackhole 3,17,40 --messages 500 --size 64K \
        --seed 7 --json > "$o" ;;
    loopback-corrupt)
      "$LOOP" --paths 8 --corrupt 2 --dup 1 --dup-delay 500 --jitter 5 \
        --random-sizes --messages 500 --size 16K --seed 11 --json > "$o" ;;
    sim-bench-trace)
      # The benchmark's timing varies; its trace hash and counts do not.
      "$SIM" bench --k 4 --ms 1 --seed 1 --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); [print(k, d[k]) for k in ("events","packet_hops","drops","throughput_fraction","trace_hash")]' > "$o" ;;
  esac
}

digest() {
  local o=$1
  if [ -d "$o" ]; then
    (cd "$o" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
  else
    sha256sum < "$o" | cut -d' ' -f1
  fi
}

fail=0
new=$(mktemp)
trap 'rm -f "$new"' EXIT
for c in "${cases[@]}"; do
  if ! run_case "$c"; then
    echo "golden: $c: the command failed"
    fail=1
    continue
  fi
  h=$(digest "$DIR/$c")
  echo "$h  $c" >> "$new"
  [ $regen = 1 ] && continue
  want=$(awk -v c="$c" '$2 == c {print $1}' "$HASHES")
  if [ -z "$want" ]; then
    echo "golden: $c: no recorded hash (run with --regen and commit it)"
    fail=1
  elif [ "$h" != "$want" ]; then
    echo "golden: $c: output changed (kept in $DIR/$c)"
    fail=1
  else
    echo "  ok   $c $h"
  fi
done
if [ $regen = 1 ]; then
  [ $fail = 0 ] || exit 1
  # Keep the hashes of cases this build skipped (SAN=1).
  awk 'NR == FNR {have[$2] = 1; next} !($2 in have)' "$new" "$HASHES" \
    2> /dev/null >> "$new"
  LC_ALL=C sort -k2 "$new" > "$HASHES"
  echo "golden: wrote $HASHES"
  exit 0
fi
[ $fail = 0 ] && echo "golden: ${#cases[@]} cases byte-identical"
exit $fail
