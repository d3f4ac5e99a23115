#!/bin/bash
# Description: srd-loopback end to end: the issue's headline command,
# byte-for-byte determinism per seed, the JSON keys, a vanished peer, and
# bad flags (clear message, exit status 2).
set -u
OUT=${OUT:-build}
BIN=$OUT/bin/srd-loopback
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The headline command (a smaller count under the sanitizers).
n=20000
[ "${SAN:-0}" = 1 ] && n=3000
args=(--paths 64 --loss 5 --dup 2 --reorder 10 --messages $n --size 64K --seed 7 --json)
"$BIN" "${args[@]}" > "$tmp/a.json" || fail "headline run exited $?"
"$BIN" "${args[@]}" > "$tmp/b.json" || fail "second run exited $?"
cmp -s "$tmp/a.json" "$tmp/b.json" || fail "same seed, different output"
python3 - "$tmp/a.json" $n <<'PY' || fail "JSON check"
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
for k in ["sent", "completed_ok", "completed_err", "delivered",
          "duplicates_delivered", "corrupted", "retransmits", "goodput_gbps",
          "msg_latency_us", "path_share"]:
    assert k in d, k
for k in ["p50", "p99", "p999", "max"]:
    assert k in d["msg_latency_us"], k
assert d["sent"] == n and d["completed_ok"] == n, d
assert d["delivered"] == n and d["duplicates_delivered"] == 0, d
assert d["corrupted"] == 0 and d["completed_err"] == 0, d
assert d["retransmits"] > 0, "5% loss but no retransmission?"
assert len(d["path_share"]) == 64 and abs(sum(d["path_share"]) - 1) < 0.01
assert min(d["path_share"]) > 0.5 / 64, "a path was left out"
assert d["goodput_gbps"] > 0
print("headline:", d["completed_ok"], "ok,", d["retransmits"], "retransmits,",
      d["goodput_gbps"], "Gb/s")
PY
# A different seed gives a different run.
"$BIN" "${args[@]/--seed/--seed}" --seed 8 > "$tmp/c.json" || fail "seed 8"
cmp -s "$tmp/a.json" "$tmp/c.json" && fail "seeds 7 and 8 gave the same run"

# The readable summary.
"$BIN" --paths 4 --messages 100 --size 8K > "$tmp/s.txt" || fail "summary run"
grep -q "completed     100 ok, 0 error" "$tmp/s.txt" || fail "summary text"

# A peer that vanishes: every send ends in an error, exit status 1.
"$BIN" --paths 8 --messages 500 --size 64K --dead-at 200 --json \
  > "$tmp/d.json" 2> "$tmp/d.err"
rc=$?
[ $rc = 1 ] || fail "dead peer: exit $rc, expected 1"
grep -q "sends failed" "$tmp/d.err" || fail "dead peer: no message"
python3 - "$tmp/d.json" <<'PY' || fail "dead peer JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["completed_ok"] + d["completed_err"] == d["sent"] == 500, d
assert d["completed_err"] > 0 and d["duplicates_delivered"] == 0, d
assert list(d["errors"]) == ["peer unresponsive (retry budget exhausted)"], d
PY

# Bad usage: a clear message on stderr and exit status 2.
bad() {
  "$BIN" "$@" > /dev/null 2> "$tmp/err"
  local rc=$?
  [ $rc = 2 ] || fail "'$*' exited $rc, expected 2"
  grep -q "srd-loopback:" "$tmp/err" || fail "'$*' printed no message"
}
bad --paths 0
bad --paths 65
bad --loss 101
bad --loss abc
bad --size 12X
bad --bogus
bad --paths
bad --cc reno
bad --delay 1,2,3 --paths 4
bad --blackhole 9 --paths 4
bad stray-argument
"$BIN" --help | grep -q "usage: srd-loopback" || fail "--help"
echo "test_loopback: all checks passed"
