#!/bin/bash
# Description: srd-perf -R (the server sends, the client receives and
# measures) and --bidir (both ways at once) for bw and rate, over udp,
# tcp and libfabric (tcp;ofi_rxm) where built.  In reverse the data flows
# server to client: the server's "sent" count is what the client's
# receiver counted, exactly, with --verify clean; nothing is counted as
# received at the server.  --bidir gives a forward row, a reverse row
# (both non-zero, each exact) and their sum.  A timed -R run ends with
# every message the server sent received; -a -R --csv has a reverse line
# per size.  A client and a server of different control protocols
# (SRD_PERF_PROTO stands in for the other release) both say so.
#
# Every run is bounded by srd-perf's --time-limit and by timeout(1); the
# server this script starts is ended by PID; no test depends on timing.
set -u
. "$(dirname "$0")/tool_lib.sh"
OUT=${OUT:-build}
BIN=$OUT/bin/srd-perf
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
spid=
cleanup() {
  [ -n "$spid" ] && { kill -9 "$spid" && wait "$spid"; } 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
big=1; [ "${SAN:-0}" = 1 ] && big=0
nbw=$((big ? 300 : 60)); nrate=$((big ? 20000 : 2000))

# check FILE DIR TEST ITERS: a complete row of direction DIR whose every
# message reached its receiver intact, exactly once (reverse: the client).
check() {
  python3 - "$@" <<'PY' || fail "$1: $(cat "$1")"
import json, sys
f, dr, test, iters = sys.argv[1:]
d = json.load(open(f))
rows = [d] if dr != "bidir" else [d, d["forward"], d["reverse"]]
assert d["direction"] == dr, d
for r in rows:
    assert r["test"] == test and r["complete"] is True and r["errors"] == 0, r
    rx = r["receiver"]
    assert rx["duplicates"] == 0 and rx["corrupted"] == 0 and rx["errors"] == 0, r
    assert r["mbps"] > 0 and r["msg_rate"] > 0, r
for r in rows[-2:] if dr == "bidir" else rows:
    rx = r["receiver"]
    assert r["iterations"] == int(iters), r
    assert rx["received"] == int(iters) + r["warmup"] == rx["sent"], r
    if r["direction"] == "reverse":
        # server -> client: the server sent it, the client received it
        assert r["server"] == {"sent": rx["received"]}, r
    else:
        assert r["server"]["received"] == rx["received"], r
if dr == "bidir":
    assert d["iterations"] == 2 * int(iters), d
    assert abs(d["mbps"] - d["forward"]["mbps"] - d["reverse"]["mbps"]) < 0.01, d
PY
}

run() {
  local name=$1
  shift
  timeout 120 "$BIN" --loopback --time-limit 60 --json "$@" > "$tmp/$name.json" \
    2> "$tmp/$name.err" || fail "$name: exit $?: $(cat "$tmp/$name.err")"
}

transports="udp tcp"
if "$BIN" --version | grep -q "transports:.* fabric" &&
  "$BIN" --list-providers 2> /dev/null | grep -q "tcp;ofi_rxm"; then
  transports="$transports fabric"
fi
for t in $transports; do
  xo=(-t $t)
  [ $t = fabric ] && xo+=(--provider "tcp;ofi_rxm")
  run $t-rbw "${xo[@]}" -R -T bw -s 64K -n $nbw --verify
  check "$tmp/$t-rbw.json" reverse bw $nbw
  run $t-rrate "${xo[@]}" -R -T rate -n $nrate --verify
  check "$tmp/$t-rrate.json" reverse rate $nrate
  run $t-bbw "${xo[@]}" --bidir -T bw -s 16K -n $nbw --verify
  check "$tmp/$t-bbw.json" bidir bw $nbw
  run $t-brate "${xo[@]}" --bidir -T rate -n $nrate --verify
  check "$tmp/$t-brate.json" bidir rate $nrate
  echo "  $t: -R bw and rate, --bidir bw and rate: exact at each receiver, verified"
done

# --- timed: every message the server sent arrives -------------------------
run timed -R -T bw -s 32K -D 0.2 --verify
python3 - "$tmp/timed.json" <<'PY' || fail "timed -R: $(cat "$tmp/timed.json")"
import json, sys
d = json.load(open(sys.argv[1]))
rx = d["receiver"]
assert d["direction"] == "reverse" and d["complete"] and d["iterations"] > 0, d
assert rx["received"] == rx["sent"] == d["server"]["sent"] > 0, d
assert rx["duplicates"] == 0 and rx["corrupted"] == 0, d
PY
run timedb --bidir -T rate -D 0.2 --verify
python3 - "$tmp/timedb.json" <<'PY' || fail "timed --bidir: $(cat "$tmp/timedb.json")"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["forward"], d["reverse"]:
    assert r["complete"] and r["iterations"] > 0, r
    assert r["receiver"]["received"] == r["receiver"]["sent"] > 0, r
PY
echo "  timed: -R and --bidir, every message sent received, verified"

# --- -a: a reverse row for every size, in CSV ------------------------------
timeout 120 "$BIN" --loopback -R -a -n 20 --verify --csv --time-limit 60 \
  > "$tmp/a.csv" 2> "$tmp/a.err" || fail "-R -a: $(cat "$tmp/a.err")"
python3 - "$tmp/a.csv" <<'PY' || fail "-R -a --csv: $(cat "$tmp/a.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [int(r["size"]) for r in rows] == [8 << i for i in range(21)], rows
assert all(r["direction"] == "reverse" and r["complete"] == "1" for r in rows), rows
PY
echo "  -R -a --csv: a complete reverse line for each of 21 sizes"

# --- the text table names the direction -----------------------------------
timeout 60 "$BIN" --loopback --bidir -T rate -n 1000 --time-limit 40 > "$tmp/b.txt" \
  2> "$tmp/b.err" || fail "--bidir text: $(cat "$tmp/b.err")"
grep -q "rate both ways" "$tmp/b.txt" || fail "--bidir header: $(cat "$tmp/b.txt")"
for d in forward reverse bidir; do
  grep -q "^ *64 .* $d " "$tmp/b.txt" || fail "--bidir: no $d row: $(cat "$tmp/b.txt")"
done

# --- another control protocol: both ends say so ----------------------------
port=$((25000 + (RANDOM % 4000) * 8))
SRD_PERF_PROTO=2 "$BIN" -s 127.0.0.1 -p $port -t udp --paths 2 2> "$tmp/old.err" & spid=$!
wait_for "$tmp/old.err" "listening" || fail "server did not start: $(cat "$tmp/old.err")"
timeout 30 "$BIN" 127.0.0.1 -p $port -t udp --paths 2 -n 10 --time-limit 20 \
  > /dev/null 2> "$tmp/new.err"
rc=$?
[ $rc = 1 ] || fail "protocol mismatch: exit $rc: $(cat "$tmp/new.err")"
grep -q "the server speaks control protocol 2, this client 3: run the same srd-perf version on both ends" \
  "$tmp/new.err" || fail "client's mismatch message: $(cat "$tmp/new.err")"
wait_for "$tmp/old.err" "speaks control protocol 3, this server 2: run the same" ||
  fail "server's mismatch message: $(cat "$tmp/old.err")"
kill $spid; wait $spid 2>/dev/null; spid=
echo "  control protocol 3 against 2: the client and the server both name it"
echo "PASS"
