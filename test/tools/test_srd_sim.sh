#!/bin/bash
# Description: srd-sim and srd-plot end to end: identical output for the
# same seed (table, JSON and every CSV), another seed another run; the JSON
# keys the issue names; the CSV files; every kind of bad input gets a
# clear message naming file, line and key, and exit status 2; srd-plot
# draws PNGs when gnuplot is installed; srd-sim bench's JSON.
set -u
OUT=${OUT:-build}
SIM=$OUT/bin/srd-sim
PLOT=$OUT/bin/srd-plot
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$SIM" ] || fail "no $SIM"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- Determinism: two runs, identical output, byte for byte.
args=(run scenarios/hol-blocking.ini --set workload.count=500 --quiet)
"$SIM" "${args[@]}" -o "$tmp/a" > "$tmp/a.txt" || fail "run a exited $?"
"$SIM" "${args[@]}" -o "$tmp/b" > "$tmp/b.txt" || fail "run b exited $?"
cmp -s "$tmp/a.txt" "$tmp/b.txt" || fail "same seed, different table"
for f in table.txt summary.json flows.csv messages.csv throughput.csv \
         queues.csv paths.csv; do
  [ -s "$tmp/a/$f" ] || fail "no $f written"
  cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "same seed, different $f"
done
cmp -s "$tmp/a.txt" "$tmp/a/table.txt" || fail "table.txt differs from stdout"
"$SIM" "${args[@]}" --json > "$tmp/j1.json" || fail "json run"
"$SIM" "${args[@]}" --json > "$tmp/j2.json" || fail "json run 2"
cmp -s "$tmp/j1.json" "$tmp/j2.json" || fail "same seed, different JSON"
"$SIM" "${args[@]}" --json --seed 99 > "$tmp/j3.json" || fail "seed 99"
echo "determinism: ok"

# --- The JSON summary.
python3 - "$tmp/j1.json" "$tmp/j3.json" <<'PY' || fail "JSON check"
import json, sys
d = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
assert [t["name"] for t in d["transports"]] == ["srd", "srd-ordered", "tcp"]
for t in d["transports"]:
    for k in ["name", "throughput_gbps", "throughput_fraction", "fct_us",
              "msg_latency_us", "jain", "retransmits", "drops",
              "hol_blocked_us_total", "path_share"]:
        assert k in t, k
    for k in ["fct_us", "msg_latency_us"]:
        assert set(t[k]) == {"p50", "p99", "p999", "max"}, t[k]
    assert t["messages_done"] == 500
    assert len(t["path_share"]) == 4 and abs(sum(t["path_share"]) - 1) < 1e-3
h1 = [t["trace_hash"] for t in d["transports"]]
h2 = [t["trace_hash"] for t in e["transports"]]
assert all(a != b for a, b in zip(h1, h2)), "seed 99 gave the same runs"
assert e["seed"] == 99
PY
head -1 "$tmp/a/messages.csv" | grep -q "^point,transport,msg,flow,bytes,post_us,arrive_us,read_us,latency_us,hol_us,status$" \
  || fail "messages.csv header"
[ "$(grep -c ',srd,' "$tmp/a/messages.csv")" -eq 500 ] || fail "messages.csv rows"
head -1 "$tmp/a/flows.csv" | grep -q "^point,transport,flow,src,dst,bytes" || fail "flows.csv header"
echo "outputs: ok"

# --- Bad input: a clear message, exit status 2.
bad() {
  local want=$1
  shift
  "$SIM" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || { cat "$tmp/err"; fail "'$*' exited $rc, not 2"; }
  grep -qF -- "$want" "$tmp/err" || { cat "$tmp/err"; fail "'$*': no '$want' in the message"; }
}
s="$tmp/s.ini"
printf '[scenario]\nname = x\n[topology]\ntype = ring\n' > "$s"
bad "$s:4: [topology] type = ring: expected dumbbell, leafspine or fattree" run "$s"
printf '[scenario]\nduration = 10 parsecs\n' > "$s"
bad "$s:2: [scenario] duration = 10 parsecs: expected a time with a unit" run "$s"
printf '[scenario]\ncolour = blue\n' > "$s"
bad "$s:2: [scenario] colour = blue: unknown key 'colour' in [scenario]; expected one of:" run "$s"
printf '[scenery]\nx = 1\n' > "$s"
bad "$s:2: [scenery] x = 1: unknown section [scenery]" run "$s"
printf '[scenario]\nthis line has no equals sign\n' > "$s"
bad "$s:2: syntax error" run "$s"
printf '[workload]\ntype = single\nsrc = 9\n' > "$s"
bad "$s:3: [workload] src = 9: src 9: expected a host index below 8" run "$s"
printf '[scenario]\ntransports = srd, quic\n' > "$s"
bad "$s:2: [scenario] transports = srd, quic: 'quic' is neither a built-in transport" run "$s"
printf '[faults]\ndown = path9@1ms\n' > "$s"
bad "link 'path9': pathI names a dumbbell's paths" run "$s"
printf '[transport.tcp]\nrto_min = fast\n' > "$s"
bad "$s:2: [transport.tcp] rto_min = fast: expected a time with a unit" run "$s"
printf '[scenario]\nname = %0300d\n' 0 > "$s"
bad "$s:2: line too long" run "$s"
bad "--set topology.queue=lots: expected a size in bytes" run scenarios/incast.ini --set topology.queue=lots
bad "--set nodot: expected section.key=value" run scenarios/incast.ini --set nodot
bad "cannot open" run "$tmp/missing.ini"
bad "unknown option --frobnicate" run scenarios/incast.ini --frobnicate
bad "--seed x: expected a whole number" run scenarios/incast.ini --seed x
bad "no scenario file" run
bad "unknown command 'fly'" fly
bad "--k 7: expected an even number" bench --k 7
bad "--only nothing names none" run scenarios/incast.ini --only nothing

printf '[workload]\ntype = random\ncdf = %s\n' "$tmp/bad.cdf" > "$s"
printf '0 0\n100 0.5\n50 1\n' > "$tmp/bad.cdf"
bad "$s:3: [workload] cdf = $tmp/bad.cdf: $tmp/bad.cdf:3: expected sizes and probabilities that never decrease" run "$s"
echo "bad input: ok"

# --- Random pairs from the shipped CDF, Poisson arrivals at a load.
cat > "$tmp/r.ini" <<EOT
[scenario]
duration = 5ms
[topology]
type = fattree
k = 4
[workload]
type = random
cdf = $PWD/scenarios/cdf/websearch.cdf
load = 0.3
flows = 300
EOT
"$SIM" run "$tmp/r.ini" --json --quiet > "$tmp/r.json" || fail "random run"
python3 - "$tmp/r.json" <<'PY' || fail "random workload"
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["transports"]:
    # Flows arrive over the 5 ms; most of them finish.
    assert 150 <= t["flows"] <= 300, t["flows"]
    assert t["flows_done"] >= 0.8 * t["flows"], (t["name"], t["flows_done"])
    assert t["fct_us"]["p50"] < t["fct_us"]["p99"] <= t["fct_us"]["max"]
    assert t["slowdown"]["p50"] >= 1.0
PY
echo "random: ok"

# --- check.
"$SIM" check scenarios/shuffle.ini | grep -q "ok (128 hosts, 3 transport(s), 3 point(s))" \
  || fail "check"

# --- srd-plot (pixels are not compared: the script must run and write PNGs).
if command -v gnuplot >/dev/null 2>&1; then
  "$PLOT" --quiet "$tmp/a" || fail "srd-plot exited $?"
  for f in latency_cdf throughput paths queues; do
    head -c 8 "$tmp/a/$f.png" | od -An -tx1 | grep -q "89 50 4e 47" \
      || fail "$f.png is not a PNG"
  done
  echo "srd-plot: ok"
else
  echo "srd-plot: gnuplot not installed, not drawn"
fi
"$PLOT" "$tmp/nowhere" 2> "$tmp/err"; [ $? -eq 2 ] || fail "srd-plot on a missing dir"

# --- The benchmark's JSON (a tiny run; speed is not tested).
"$SIM" bench --k 4 --ms 0.2 --json > "$tmp/bench.json" || fail "bench"
python3 - "$tmp/bench.json" <<'PY' || fail "bench JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["events", "packet_hops", "wall_s", "events_per_s",
          "packet_hops_per_s", "sim_to_wall", "peak_rss_mb"]:
    assert k in d, k
assert d["packet_hops"] > 10000 and d["hosts"] == 16
PY
echo "ok"
