#!/bin/bash
# Description: what srd-sim writes for srd-plot and what srd-plot draws
# from it (issue 10).  runs.csv: one row per run, its capacity as
# summary.json says and its sweep point's label; faults.csv: link-failure's
# fault, its cable and when routing reconverges; flow_throughput.csv: one
# row per kept flow and bin, the bins of throughput.csv, adding up to it,
# the stalled TCP flow at zero; with more than 32 flows only the 16 that
# delivered the fewest bytes and the 8 that delivered the most.  srd-plot,
# when gnuplot is installed: every PNG, the capacity line and the fault
# markers labelled (read from an SVG), and a sweep point's label in its
# files' names and titles.
set -u
OUT=${OUT:-build}
SIM=$OUT/bin/srd-sim
PLOT=$OUT/bin/srd-plot
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$SIM" ] || fail "no $SIM"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- link-failure, small (as test_scenario_link_failure.sh): the cable
# under TCP's flow 0 dies at 20 ms, routing notices 200 ms later.
"$SIM" run scenarios/link-failure.ini --set scenario.duration=400ms \
  --set topology.reconverge=200ms --set faults.down=tcpflow0@20ms \
  -o "$tmp/lf" --quiet > /dev/null || fail "link-failure exited $?"
python3 - "$tmp/lf" <<'PY' || fail "link-failure's files"
import csv, json, re, sys
d = sys.argv[1]
def rows(name, header):
    with open(d + "/" + name) as f:
        r = list(csv.reader(f))
    assert r[0] == header.split(","), (name, r[0])
    return [dict(zip(r[0], x)) for x in r[1:]]
summ = {t["name"]: t for t in json.load(open(d + "/summary.json"))["transports"]}
runs = rows("runs.csv", "point,transport,kind,capacity_gbps,throughput_gbps,sim_end_us,label")
assert [r["transport"] for r in runs] == ["srd", "tcp"], runs
for r in runs:
    t = summ[r["transport"]]
    assert abs(float(r["capacity_gbps"]) - t["capacity_gbps"]) < 1e-3, r
    assert abs(float(r["throughput_gbps"]) - t["throughput_gbps"]) < 1e-3, r
    assert r["kind"] == t["kind"] and r["label"] == "" and r["point"] == "0", r
faults = rows("faults.csv", "point,transport,fault,kind,link,cable,cables,at_us,routed_us,value")
assert [f["transport"] for f in faults] == ["srd", "tcp"], faults
for f in faults:
    assert f["kind"] == "down" and f["link"] == "tcpflow0", f
    assert re.fullmatch(r"leaf0->spine[0-3]", f["cable"]) and f["cables"] == "1", f
    assert float(f["at_us"]) == 20000 and float(f["routed_us"]) == 220000, f
assert faults[0]["cable"] == faults[1]["cable"], "the same cable in every run"
flows = rows("flows.csv", "point,transport,flow,src,dst,bytes,start_us,end_us,fct_us,delivered_bytes,max_stall_us")
thr = rows("throughput.csv", "point,transport,time_us,gbps")
ft = rows("flow_throughput.csv", "point,transport,flow,time_us,gbps")
for tr in ("srd", "tcp"):
    mine = [x for x in ft if x["transport"] == tr]
    ids = sorted({int(x["flow"]) for x in mine})
    assert ids == sorted(int(f["flow"]) for f in flows if f["transport"] == tr), ids
    bins = [x for x in thr if x["transport"] == tr]
    per = {}
    for x in mine:
        per.setdefault(int(x["flow"]), []).append(x)
    for f, xs in per.items():
        # One row per bin, the bins of throughput.csv, in time order.
        assert [x["time_us"] for x in xs] == [b["time_us"] for b in bins], (tr, f)
    for i, b in enumerate(bins):
        s = sum(float(per[f][i]["gbps"]) for f in per)
        assert abs(s - float(b["gbps"])) < 1e-3 * len(per) + 1e-6, (tr, i, s, b)
    if tr == "tcp":
        # The flow on the dead cable delivers nothing from the fault
        # until well after routing reconverges (its RTO backs off).
        dead = [f for f, xs in per.items()
                if all(float(x["gbps"]) == 0 for x in xs
                       if 30000 <= float(x["time_us"]) < 220000)]
        assert dead, "no stalled TCP flow in flow_throughput.csv"
print("link-failure: runs, faults and flow_throughput ok")
PY

# --- Many flows (a k = 8 fat tree: 128): 24 series, the 16 fewest bytes
# and the 8 most; a scenario without faults has a faults.csv header only.
"$SIM" run scenarios/permutation.ini --set scenario.sweep= --set topology.k=8 \
  --set scenario.duration=300us --only srd -o "$tmp/pm" --quiet > /dev/null \
  || fail "permutation exited $?"
python3 - "$tmp/pm" <<'PY' || fail "permutation's flow_throughput.csv"
import csv, sys
d = sys.argv[1]
flows = list(csv.DictReader(open(d + "/flows.csv")))
ft = list(csv.DictReader(open(d + "/flow_throughput.csv")))
assert len(flows) == 128
key = sorted(flows, key=lambda f: (f["start_us"] == "", int(f["delivered_bytes"]), int(f["flow"])))
want = sorted({int(f["flow"]) for f in key[:16] + key[-8:]})
got = sorted({int(x["flow"]) for x in ft})
assert got == want, (got, want)
n = len(list(csv.DictReader(open(d + "/throughput.csv"))))
assert len(ft) == 24 * n, (len(ft), n)
assert open(d + "/faults.csv").read().count("\n") == 1
print("permutation: 24 of 128 flows kept, as documented")
PY

# --- A sweep: every point's label in runs.csv (quoted when it holds a
# comma: not here).
"$SIM" run scenarios/ecmp-collision.ini --set scenario.duration=1ms \
  --only srd,tcp -o "$tmp/ec" --quiet > /dev/null || fail "ecmp-collision exited $?"
grep -q '^1,tcp,tcp,[0-9.]*,[0-9.]*,[0-9.]*,topology.spines=8 topology.hosts_per_leaf=8$' \
  "$tmp/ec/runs.csv" || fail "runs.csv: no label for point 1"

# --- srd-plot (pixels are not compared: the files, and an SVG's words).
if command -v gnuplot >/dev/null 2>&1; then
  png() {
    head -c 8 "$1" | od -An -tx1 | grep -q "89 50 4e 47" || fail "$1 is not a PNG"
  }
  "$PLOT" --quiet "$tmp/lf" || fail "srd-plot exited $?"
  for f in latency_cdf latency_ccdf throughput flows paths queues; do
    png "$tmp/lf/$f.png"
  done
  "$PLOT" --quiet --format svg "$tmp/lf" || fail "srd-plot --format svg exited $?"
  for w in "capacity 40 Gb/s" "link down: leaf0->spine" "routing reconverges (+200 ms)" \
           "Goodput over time (readable bytes) - link-failure"; do
    grep -qF "$w" "$tmp/lf/throughput.svg" || fail "throughput.svg lacks '$w'"
  done
  for w in "link down: leaf0->spine" "flow 0: host0->host4, longest stall" tcp srd; do
    grep -qF "$w" "$tmp/lf/flows.svg" || fail "flows.svg lacks '$w'"
  done
  "$PLOT" --quiet "$tmp/ec" || fail "srd-plot on a sweep exited $?"
  for p in spines4-hosts_per_leaf4 spines8-hosts_per_leaf8 spines16-hosts_per_leaf16; do
    for f in latency_cdf latency_ccdf throughput flows paths queues; do
      png "$tmp/ec/$f-$p.png"
    done
  done
  ls "$tmp/ec" | grep -q -- '-p[0-9]' && fail "a sweep's file named by index"
  "$PLOT" --quiet --format svg "$tmp/ec" || fail "srd-plot --format svg on a sweep"
  grep -qF "(spines=8 hosts_per_leaf=8)" "$tmp/ec/throughput-spines8-hosts_per_leaf8.svg" \
    || fail "a sweep point's title lacks its label"
  # Bounded flows: the FCT CDF and CCDF.
  "$SIM" run scenarios/incast.ini --set scenario.sweep= --set workload.rounds=2 \
    --only srd -o "$tmp/in" --quiet > /dev/null || fail "incast exited $?"
  "$PLOT" --quiet "$tmp/in" || fail "srd-plot on incast exited $?"
  for f in fct_cdf fct_ccdf; do png "$tmp/in/$f.png"; done
  echo "srd-plot: ok"
else
  echo "srd-plot: gnuplot not installed, not drawn"
fi
echo "ok"
