#!/bin/bash
# Description: the multi-host leaf-spine fabric in network namespaces
# (tools/leafspine.sh: 2 leaves of 2 hosts, 4 spines, L4 multipath
# hashing, tbf-shaped ports) and srd-coll across its 4 hosts from a host
# list (tools/leafspine-coll.sh), beside its netsim twin.  Asserts:
#   1. bad usage of both scripts exits 2 naming the problem; up builds
#      the fabric (every host reaches every other), down removes every
#      namespace it made;
#   2. shuffle, incast and permutation over srd (udp) and kernel TCP with
#      --verify: every rank completes, every byte intact exactly once, and
#      rank 0's totals are what the parameters say;
#   3. srd sprays the cross-leaf bytes over all four spines, as its
#      paths promise (in the shuffle each spine carries at least a tenth;
#      with the two cross-leaf flows of incast and permutation, whose 32
#      source ports the leaves hash like balls into bins, a fiftieth);
#   4. the netsim twin runs the same workload: its rows are in the table,
#      every flow done.
# No timing is asserted (the comparison is what the table is for).
# Needs root (ip netns), tc and python3; exits 77 with the reason when it
# cannot build the fabric.  Every run is bounded by srd-coll's
# --time-limit and timeout(1); the fabric is removed on every exit.
set -u
OUT=${OUT:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
FAB=$TOP/tools/leafspine.sh
RUN=$TOP/tools/leafspine-coll.sh
BIN=$(cd "$OUT/bin" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN/srd-coll" ] || fail "no $BIN/srd-coll"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
for t in ip tc python3; do
  command -v $t > /dev/null || skip "$t is not installed (make deps)"
done
tmp=$(mktemp -d)
NAME=tls$(($$ % 10000))
cleanup() {
  NAME=$NAME "$FAB" down
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- 1. usage, up, down ----------------------------------------------------
expect_usage() { # DESCRIPTION PATTERN CMD...
  local what=$1 pat=$2 rc
  shift 2
  "$@" > "$tmp/u.out" 2> "$tmp/u.err"
  rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, not 2: $(cat "$tmp/u.err")"
  grep -q -- "$pat" "$tmp/u.err" || fail "$what: no '$pat' in: $(cat "$tmp/u.err")"
}
expect_usage "no command" "no command" "$FAB"
expect_usage "unknown command" "unknown command 'sideways'" "$FAB" sideways
expect_usage "--spines 0" "--spines '0': 1 to 16" "$FAB" up --spines 0
expect_usage "bad rate" "tc's units" "$FAB" up --host-rate 1G
expect_usage "bad name" "--name 'Bad-Name'" "$FAB" up --name Bad-Name
expect_usage "unknown workload" "unknown argument 'gather'" "$RUN" gather
expect_usage "bad transport" "'quic' is not udp or tcp" "$RUN" --transports udp,quic

NAME=$NAME "$FAB" up > "$tmp/up.out" 2> "$tmp/up.err"
rc=$?
[ $rc = 77 ] && skip "$(cat "$tmp/up.err")"
[ $rc = 0 ] || fail "leafspine up: exit $rc: $(cat "$tmp/up.err")"
n=$(ip netns list | awk '{print $1}' | grep -cE "^$NAME-[hls][0-9]+$")
[ "$n" = 10 ] || fail "up made $n namespaces, not 10 (4 hosts, 2 leaves, 4 spines)"
grep -q "host 3: namespace $NAME-h3, address 198.19.0.4, leaf 1" "$tmp/up.out" ||
  fail "up did not list host 3: $(cat "$tmp/up.out")"
NAME=$NAME "$FAB" exec 3 ip route get 198.19.0.1 | grep -q "via 198.18.67.2" ||
  fail "host 3 has no route to host 0 through its leaf"
[ "$(NAME=$NAME "$FAB" spine-bytes | wc -w)" = 4 ] || fail "spine-bytes: not 4 counts"
NAME=$NAME "$FAB" down
n=$(ip netns list | awk '{print $1}' | grep -cE "^$NAME-")
[ "$n" = 0 ] || fail "down left $n namespaces"
echo "  usage errors exit 2; up builds 10 namespaces, routes to each other; down removes them"

# --- 2-4. the workloads ------------------------------------------------------
# check RUNDIR WORKLOAD: the JSON totals, srd's spine shares, the twin's
# rows.  4 ranks, 32 MiB per rank in 8 MiB partitions to 8 outputs, 1 +
# 2 iterations.
check() {
  python3 - "$1" "$2" << 'PY' || fail "$2: the results are not what the parameters say"
import json, sys
d, wl = sys.argv[1:]
N, B, P, O, iters = 4, 32 << 20, 8 << 20, 8, 3
def expect(r):  # bytes rank r receives per iteration
    if wl == "shuffle":
        return (N - 1) * (B // P) * (O // N) * (P // O)
    if wl == "incast":
        return (N - 1) * B if r == 0 else 0
    return B
for t in ("udp", "tcp"):
    j = json.load(open("%s/%s.json" % (d, t)))
    assert j["complete"] and j["iterations_done"] == iters - 1, (t, j["complete"])
    assert j["errors"] == 0, (t, j["errors"])
    for p in j["per_rank"]:
        r = p["rank"]
        assert not p["failed"], (t, r, p["error"])
        assert p["verified"] or expect(r) == 0, (t, r, "not verified")
        assert p["bytes_recv"] == expect(r), (t, r, p["bytes_recv"], expect(r))
        assert p["recv_bytes_total"] >= expect(r) * iters, (t, r)
    a, b = [list(map(int, l.split())) for l in open("%s/%s.spines" % (d, t))]
    sh = [y - x for x, y in zip(a, b)]
    if t == "udp":
        # Every spine carries srd's bytes; the shuffle's 8 cross-leaf
        # flows (128 source ports) spread evenly, the 2 of incast and
        # permutation (32 ports, hashed like balls into bins) less so.
        tot = sum(sh)
        floor = tot / 10 if wl == "shuffle" else tot / 50
        assert tot > 0 and min(sh) >= floor, ("srd's spine bytes", sh)
    print("    %s: spine bytes %s" % (t, sh))
s = json.load(open(d + "/sim.json"))
names = [e["name"] for e in s["transports"]]
assert names == ["srd", "tcp"], names
for e in s["transports"]:
    assert e["flows_done"] == e["flows"] > 0, (e["name"], e["flows_done"], e["flows"])
table = open(d + "/table.txt").read()
for w in ("namespaces  srd", "namespaces  tcp (kernel)", "netsim      srd",
          "netsim      tcp (model)"):
    assert w in table, (w, table)
PY
}
# The sanitizer build runs the shuffle only: it checks memory, not the
# workloads again.
wls="shuffle incast permutation"
[ "${SAN:-0}" = 1 ] && wls=shuffle
for wl in $wls; do
  d=$tmp/$wl
  timeout 300 "$RUN" --bin "$BIN" --bytes-per-rank 32M --partition 8M \
    --warmup 1 --iters 2 --verify --time-limit 60 -o "$d" "$wl" \
    > "$tmp/$wl.out" 2> "$tmp/$wl.err"
  rc=$?
  [ $rc = 77 ] && skip "$(cat "$tmp/$wl.err")"
  if [ $rc != 0 ]; then
    cat "$tmp/$wl.out" "$tmp/$wl.err"
    fail "leafspine-coll $wl: exit $rc"
  fi
  echo "  $wl over srd and tcp on 4 hosts, verified, and in netsim:"
  sed 's/^/    /' "$d/table.txt"
  check "$d" "$wl"
done
n=$(ip netns list | awk '{print $1}' | grep -cE "^lc[0-9]+-")
[ "$n" = 0 ] || fail "leafspine-coll left $n namespaces"
echo ok
