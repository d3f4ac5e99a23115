#!/bin/bash
# Description: the twin check (tools/twin.sh), short: netsim against a
# kernel fabric in network namespaces.  Asserts:
#   1. bad usage exits 2 naming the problem; --help prints the usage;
#   2. collision (4 flows over 4 spines, 2 s, one srd run and two kernel
#      TCP trials, netsim at seeds 1-2) and loss (cubic and reno at 0%
#      and 5%, 2 s each, netsim at seeds 1-2) complete, print both tables
#      with every row, and write twin.csv and twin.json;
#   3. the numbers are sane: every throughput fraction, kernel and netsim,
#      in (0, 1.2]; the lossless kernel TCP flow gets more than half the
#      1 Gb/s link; netsim's lossless flow more than 90%;
#   4. nothing is left behind: no namespace, no srd-perf process.
# The kernel-netsim agreement (collision within 15%, loss within 30%) is
# printed, not asserted: it is timing on a shared machine, which belongs
# in benchmarks (docs/netsim.md, "The twin").  Needs root (ip netns), tc,
# nft, nstat and python3; exits 77 with the reason where namespaces
# cannot be made.  Every run is bounded by srd-perf's --time-limit and
# timeout(1) (about 40 s in all).
set -u
OUT=${OUT:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
TWIN=$TOP/tools/twin.sh
BIN=$(cd "$OUT/bin" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN/srd-perf" ] && [ -x "$BIN/srd-sim" ] || fail "no srd-perf or srd-sim in $BIN"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 1. usage -------------------------------------------------------------
expect_usage() { # DESCRIPTION PATTERN ARG...
  local what=$1 pat=$2 rc
  shift 2
  "$TWIN" --bin "$BIN" "$@" > "$tmp/u.out" 2> "$tmp/u.err"
  rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, not 2: $(cat "$tmp/u.err")"
  grep -q -- "$pat" "$tmp/u.err" || fail "$what: no '$pat' in: $(cat "$tmp/u.err")"
}
expect_usage "no part" "no part (collision, loss or all)"
expect_usage "two parts" "not 'loss' and 'collision'" loss collision
expect_usage "unknown argument" "unknown argument '--bogus'" --bogus loss
expect_usage "--secs 0" "--secs '0'" --secs 0 loss
expect_usage "--flows 9" "--flows '9': 2 to 8" --flows 9 collision
expect_usage "bad rate" "tc's units" --rate 1G collision
expect_usage "bad cc" "'bbr' is not cubic or reno" --ccs cubic,bbr loss
expect_usage "bad loss" "'1.5' is not a whole percent" --losses 0,1.5 loss
expect_usage "bad seeds" "--seeds '3-1'" --seeds 3-1 loss
expect_usage "no value" "-o needs a value" loss -o
"$TWIN" --help | grep -q "tools/twin.sh \[OPTION\]... collision|loss|all" ||
  fail "--help prints no usage"
echo "  usage errors exit 2 with the reason; --help prints the usage"

# --- 2. both parts, short --------------------------------------------------
d=$tmp/run
timeout 240 "$TWIN" --bin "$BIN" --secs 2 --trials 2 --seeds 1-2 \
  --losses 0,5 --ccs cubic,reno -o "$d" all > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc = 77 ] && skip "$(tail -1 "$tmp/err")"
if [ $rc != 0 ]; then
  cat "$tmp/out" "$tmp/err"
  fail "twin.sh all: exit $rc"
fi
sed 's/^/    /' "$d/table.txt"

# --- 3. the numbers ---------------------------------------------------------
python3 - "$d" << 'PY' || fail "the results are not sane (above)"
import csv, json, sys
d = sys.argv[1]
t = open(d + "/table.txt").read()
for w in ("collision: 4 flows", "tcp by the spines ECMP used", "loss: one TCP flow"):
    assert w in t, ("no %r in the tables" % w)
lines = t.splitlines()
for tr in ("srd", "tcp"):
    for f in ("0", "1", "2", "3", "aggregate"):
        assert any(l.split()[:2] == [tr, f] for l in lines if l.strip()), (tr, f)
for cc in ("cubic", "reno"):
    for p in ("0%", "5%"):
        assert any(l.split()[:2] == [cc, p] for l in lines if l.strip()), (cc, p)
j = json.load(open(d + "/twin.json"))
c = j["collision"]
for tr in ("srd", "tcp"):
    for f, v in c[tr].items():
        if not f.startswith("spines_used"):
            assert len(v["kernel"]) == (1 if tr == "srd" else 2), (tr, f, v)
            assert len(v["netsim"]) == 2, (tr, f, v)
        for side in ("kernel", "netsim"):
            for x in v[side]:
                assert 0 < x <= 1.2, ("%s flow %s, %s: fraction %s" % (tr, f, side, x))
l = j["loss"]
for cc in ("cubic", "reno"):
    for p in ("0", "5"):
        v = l[cc][p]
        assert len(v["kernel_mbps"]) == 1 and len(v["netsim_mbps"]) == 2, (cc, p, v)
        for x in v["kernel_mbps"] + v["netsim_mbps"]:
            assert 0 < x <= 1200, ("%s at %s%%: %s Mb/s" % (cc, p, x))
    k, n = l[cc]["0"]["kernel_mbps"][0], min(l[cc]["0"]["netsim_mbps"])
    assert k > 500, ("the lossless kernel %s flow got %.0f Mb/s of 1000" % (cc, k))
    assert n > 900, ("netsim's lossless %s flow got %.0f Mb/s of 1000" % (cc, n))
rows = list(csv.DictReader(open(d + "/twin.csv")))
assert {r["part"] for r in rows} == {"collision", "loss"}, "twin.csv parts"
assert {r["side"] for r in rows} == {"kernel", "netsim"}, "twin.csv sides"
for f in ("collision.ini", "loss.ini", "sim/loss/stats.csv",
          "sim/collision-s1/flows.csv", "kernel/udp.1.0.json"):
    open(d + "/" + f).close()
print("  fractions in (0, 1.2]; lossless kernel TCP %.0f / %.0f Mb/s (cubic / reno)"
      % (l["cubic"]["0"]["kernel_mbps"][0], l["reno"]["0"]["kernel_mbps"][0]))
PY

# --- 4. nothing left behind ---------------------------------------------------
pfx=$(sed -n 's/^twin: namespaces \(tw[0-9]*\)-\*.*/\1/p' "$tmp/out")
[ -n "$pfx" ] || fail "twin.sh did not say its namespaces' prefix"
n=$(ip netns list | awk '{print $1}' | grep -c "^$pfx-")
[ "$n" = 0 ] || fail "twin.sh left $n namespaces ($pfx-*)"
ps -eo args | grep -F -- "$BIN/srd-perf" | grep -v grep | grep -qE -- "-s 198\.1[89]\." &&
  fail "twin.sh left an srd-perf server running"
echo ok
