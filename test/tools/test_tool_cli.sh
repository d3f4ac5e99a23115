#!/bin/bash
# Description: what every tool converted to libsrdtool answers alike
# (tools/lib/tool_opt.h): --help (exit 0, GNU style: "Usage: NAME" first,
# --help and --version listed; help2man makes a man page of it), --version
# ("NAME (srd) VERSION", the Makefile's VERSION), and bad usage (exit 2, a
# message that names the tool, "Try 'NAME --help' for more information.");
# their JSON outputs parse (python3 -m json.tool).
#
#   test/tools/test_tool_cli.sh      (OUT=BUILD_DIR; default build)
set -u
OUT=${OUT:-build}
BIN=$OUT/bin
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VERSION=$(awk '$1 == "VERSION" && $2 == ":=" {print $3}' Makefile)
[ -n "$VERSION" ] || fail "no VERSION in the Makefile"

# Each tool with an invocation that is bad usage.
tools=(srd-perf srd-loopback srd-bench udp-baseline netsim-bench srd-plot srd-sim)
declare -A bad=(
  [srd-perf]="--loopback -P 0"
  [srd-loopback]="--paths 0"
  [srd-bench]="--reps 16"
  [udp-baseline]="pingpong -s 0"
  [netsim-bench]="--k 3"
  [srd-plot]="--format gif dir"
  [srd-sim]="bench --k 3"
)
for t in "${tools[@]}"; do
  b=$BIN/$t
  [ -x "$b" ] || fail "no $b"
  "$b" --help > "$tmp/help" 2> "$tmp/err" || fail "$t --help exited $?"
  [ -s "$tmp/err" ] && fail "$t --help wrote to stderr: $(cat "$tmp/err")"
  head -1 "$tmp/help" | grep -q "^Usage: $t " || fail "$t --help: $(head -1 "$tmp/help")"
  grep -q "^  \(-., \)\?--help  *display this help and exit" "$tmp/help" || fail "$t --help: no --help line"
  grep -q "^  \(-., \)\?--version  *output version information and exit" "$tmp/help" ||
    fail "$t --help: no --version line"
  grep -q "^Exit status: " "$tmp/help" || fail "$t --help: no exit status"
  "$b" --version > "$tmp/ver" || fail "$t --version exited $?"
  [ "$(head -1 "$tmp/ver")" = "$t (srd) $VERSION" ] || fail "$t --version: $(head -1 "$tmp/ver")"
  for args in "--no-such-flag" "${bad[$t]}"; do
    # shellcheck disable=SC2086
    "$b" $args > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc = 2 ] || fail "$t $args: exit $rc, expected 2"
    grep -q "^$t: " "$tmp/err" || fail "$t $args: no message naming $t: $(cat "$tmp/err")"
    grep -qx "Try '$t --help' for more information." "$tmp/err" ||
      fail "$t $args: no pointer to --help: $(cat "$tmp/err")"
  done
  if command -v help2man > /dev/null; then
    help2man --no-info --no-discard-stderr "$b" > "$tmp/$t.1" 2> "$tmp/err" ||
      fail "help2man $t: $(cat "$tmp/err")"
    for s in NAME SYNOPSIS DESCRIPTION; do
      grep -q "^\.SH $s" "$tmp/$t.1" || fail "help2man $t: no $s section"
    done
    grep -q "$VERSION" "$tmp/$t.1" || fail "help2man $t: no version"
  fi
  echo "  $t: --help, --version, bad usage: ok"
done
command -v help2man > /dev/null || echo "  help2man not installed: man pages not made"

# The JSON outputs are JSON.
"$BIN/srd-loopback" --messages 20 --size 1K --corrupt 5 --dup 5 --dup-delay 50 --json \
  | python3 -m json.tool > /dev/null || fail "srd-loopback --json"
"$BIN/netsim-bench" --k 2 --ms 0.02 --json > "$tmp/nb.json" || fail "netsim-bench exited $?"
python3 -m json.tool "$tmp/nb.json" > /dev/null || fail "netsim-bench --json: $(cat "$tmp/nb.json")"
# srd-perf over kernel TCP on loopback (always built; test_perf.sh checks
# every shape of its JSON, over both transports).
timeout 60 "$BIN/srd-perf" --loopback -t tcp -n 20 --json > "$tmp/sp.json" ||
  fail "srd-perf --json exited $?"
python3 -m json.tool "$tmp/sp.json" > /dev/null || fail "srd-perf --json: $(cat "$tmp/sp.json")"
"$BIN/srd-sim" bench --k 2 --ms 0.02 --json > "$tmp/sb.json" || fail "srd-sim bench exited $?"
python3 -m json.tool "$tmp/sb.json" > /dev/null || fail "srd-sim bench --json: $(cat "$tmp/sb.json")"
"$BIN/srd-sim" bench --ms 0.01 --json > "$tmp/sb2.json" || fail "srd-sim bench (two runs) exited $?"
python3 -m json.tool "$tmp/sb2.json" > /dev/null || fail "srd-sim bench --json, two runs: $(cat "$tmp/sb2.json")"
"$BIN/srd-sim" run scenarios/single-flow.ini --json --quiet \
  | python3 -m json.tool > /dev/null || fail "srd-sim run --json"
echo "test_tool_cli: all checks passed"
