#!/bin/bash
# Description: srd-sim and srd-plot end to end: identical output for the
# same seed (table, JSON and every CSV), another seed another run; the JSON
# keys the issue names, and valid JSON whatever a file name holds; the CSV
# files; every kind of bad input gets a clear message naming file, line
# and key, and exit status 2; GNU-style flags, --help and --version
# (help2man reads them); SIGINT stops a run and what ran is printed and
# written, marked interrupted, exit status 130; a run that fails leaves no
# empty table, and an output that cannot be written exits 1; srd-plot
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
         flow_throughput.csv queues.csv paths.csv links.csv runs.csv \
         faults.csv; do
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
# The interrupted marker is only for interrupted runs.
for x in [d, e]:
    assert "interrupted" not in x and "not_run" not in x
    assert all("interrupted" not in t for t in x["transports"])
PY
# Every string is escaped: a scenario whose path holds a quote, a
# backslash, a tab and a byte that is not UTF-8 still gives valid JSON.
odd="$tmp/$(printf 'a"b\\c\td\377')"
mkdir -p "$odd" && cp scenarios/single-flow.ini "$odd/s.ini"
"$SIM" run "$odd/s.ini" --json --quiet > "$tmp/odd.json" || fail "odd path: exited $?"
python3 - "$tmp/odd.json" <<'PY' || fail "odd path: not valid JSON"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert d["file"].endswith('a"b\\c\td\ufffd/s.ini'), repr(d["file"])
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
bad "-o needs a value" run scenarios/incast.ini -o
bad "--set needs a value" run scenarios/incast.ini --set
bad "--json takes no value" run scenarios/incast.ini --json=yes
bad "unknown option -x" run scenarios/incast.ini -x
bad "one scenario file at a time" run scenarios/incast.ini scenarios/shuffle.ini
bad "--plot needs -o DIR" run scenarios/incast.ini --plot
bad "--ms needs a value" bench --ms
bad "unknown option --frobnicate" bench --frobnicate

printf '[workload]\ntype = random\ncdf = %s\n' "$tmp/bad.cdf" > "$s"
printf '0 0\n100 0.5\n50 1\n' > "$tmp/bad.cdf"
bad "$s:3: [workload] cdf = $tmp/bad.cdf: $tmp/bad.cdf:3: expected sizes and probabilities that never decrease" run "$s"
# Strict files: a folder or an empty path is no scenario, a key given
# twice names both lines, a bare probability above 1 asks about a percent.
bad "scenarios: is a directory: expected a scenario file" run scenarios
bad "scenarios: is a directory" check scenarios
bad "expected a scenario file, got an empty path" run ""
printf '[faults]\nloss = 1%%\n[topology]\nk = 4\n[faults]\nloss = 2%%\n' > "$s"
bad "$s:6: [faults] loss is given twice in its section (first at $s:2)" check "$s"
printf '[faults]\nloss = 2\n' > "$s"
bad "$s:2: [faults] loss = 2: expected a probability from 0 to 1 (a bare number is a fraction): did you mean 2%?" check "$s"
bad "--set faults.link_loss=host0:5: item 1: expected a probability from 0 to 1 (a bare number is a fraction): did you mean 5%?" \
  check scenarios/single-flow.ini --set faults.link_loss=host0:5
echo "bad input: ok"

# --- --set replaces a list (faults.link_loss and every fault list), as
# it does any value: the file's faults are not run beside the new ones.
printf '[scenario]\nduration = 50us\n[topology]\ntype = dumbbell\n[faults]\nlink_loss = path0:1%%, path1:2%%\ndown = path2@10us\n' > "$s"
"$SIM" run "$s" --quiet --set faults.link_loss=path3:3% > "$tmp/set.txt" || fail "--set link_loss exited $?"
grep -q '^  faults     path2 down at 10 us; loss 3% on path3 (routing' "$tmp/set.txt" \
  || { cat "$tmp/set.txt"; fail "--set faults.link_loss did not replace the file's list"; }
"$SIM" run "$s" --quiet --set faults.down= --set faults.link_loss= > "$tmp/set.txt" || fail "--set down= exited $?"
grep -q '^  faults     none$' "$tmp/set.txt" || { cat "$tmp/set.txt"; fail "an empty --set list kept the file's"; }
echo "--set lists: ok"

# --- Tables never cut a value and keep their columns apart: a fat tree
# of k=16 has 1024 unbounded flows and a capacity of 102400 Gb/s, longer
# than the 13 characters cells once had; every row of a table is as long
# as its header, and cells are at least two blanks apart.
printf '[scenario]\nduration = 2us\ntransports = srd, tcp\n[topology]\ntype = fattree\nk = 16\n[workload]\ntype = permutation\n' > "$s"
"$SIM" run "$s" --quiet -o "$tmp/k16" > "$tmp/k16.txt" || fail "k=16 exited $?"
python3 - "$tmp/k16.txt" <<'PY' || fail "k=16 table"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
start = next(i for i, l in enumerate(lines) if re.match(r"^ +srd +tcp$", l))
rows = []
for l in lines[start:]:
    if not l.strip():
        break
    rows.append(l)
assert len(rows) > 10, rows
assert all(len(r) == len(rows[0]) for r in rows), "\n".join(rows)
for r in rows[1:]:
    cells = re.split(r"  +", r.strip())
    assert len(cells) == 3, r
flows = next(r for r in rows if r.lstrip().startswith("flows done"))
assert re.search(r"1024 unbounded +1024 unbounded$", flows), flows
cap = next(r for r in rows if "of capacity" in r)
assert cap.count("of 102400") == 2, cap
PY
cmp -s "$tmp/k16.txt" "$tmp/k16/table.txt" || fail "k=16: table.txt differs from stdout"
echo "wide tables: ok"

# --- A run that ends before its flows: the throughput says how many
# flows finished ("N/M done"), with a note, and summary.json carries
# flows and flows_done per transport.
"$SIM" run scenarios/incast.ini --set scenario.sweep= --set scenario.duration=300us \
  --only srd,tcp --quiet -o "$tmp/inc" > "$tmp/inc.txt" || fail "short incast exited $?"
python3 - "$tmp/inc.txt" "$tmp/inc/summary.json" <<'PY' || fail "run-bound table"
import json, re, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
tput = next(l for l in text.split("\n") if l.lstrip().startswith("throughput"))
for t in d["transports"]:
    assert t["flows"] == 320 and t["flows_done"] < t["flows"], t
want = " ".join(r"[0-9.]+ \(%d/%d done\)" % (t["flows_done"], t["flows"])
                for t in d["transports"])
assert re.search(want.replace(" ", " +"), tput), (want, tput)
assert "(N/M done): the run ended before its flows did" in text
PY
# A run whose flows all finish has no such mark.
"$SIM" run scenarios/single-flow.ini --quiet --set workload.bytes=1M --set scenario.sweep= > "$tmp/sf.txt" || fail "single-flow exited $?"
grep -q "done)" "$tmp/sf.txt" && { cat "$tmp/sf.txt"; fail "finished flows marked as bounded by the run"; }
echo "run-bound: ok"

# --- The header says what each sweep point runs: ecmp-collision sweeps
# the spines and the hosts per leaf, so the header's topology line is not
# the file's (4 spines, 4 hosts per leaf, which only the first point
# runs) but each point's, under its heading; lines every point shares
# stay in the header.
"$SIM" run scenarios/ecmp-collision.ini --set scenario.duration=50us --quiet \
  -o "$tmp/sw" > "$tmp/sw.txt" || fail "sweep exited $?"
python3 - "$tmp/sw.txt" <<'PY' || fail "sweep header"
import re, sys
text = open(sys.argv[1]).read()
head, _, rest = text.partition("\n\n")
assert "  topology   leafspine: (varies: see each sweep point)" in head, head
assert re.search(r"^  workload   pairs, unbounded flows", head, re.M), head
assert "spines" not in head, head
points = re.findall(r"^  -- topology.spines=(\d+) topology.hosts_per_leaf=(\d+)\n"
                    r"  topology   leafspine: (\d+) spines, 2 leaves x (\d+) hosts,",
                    text, re.M)
assert points == [("4", "4", "4", "4"), ("8", "8", "8", "8"),
                  ("16", "16", "16", "16")], points
PY
cmp -s "$tmp/sw.txt" "$tmp/sw/table.txt" || fail "sweep: table.txt differs from stdout"
# A swept seed is said per point too.
"$SIM" run scenarios/single-flow.ini --set scenario.duration=20us --quiet \
  --set scenario.sweep=scenario.seed=3,4 > "$tmp/sw2.txt" || fail "seed sweep exited $?"
head -1 "$tmp/sw2.txt" | grep -q "), seed (varies: see each sweep point)$" || fail "seed sweep header: $(head -1 "$tmp/sw2.txt")"
grep -q "^srd-sim: single-flow (scenarios/single-flow.ini), seed 4$" "$tmp/sw2.txt" || fail "seed sweep: no seed 4 line"
echo "sweep header: ok"

# The header says what timing noise the run has: the defaults, none, or
# what --set gave; a random workload's flows are not spread.
noise() { "$SIM" run "$@" --set scenario.duration=20us --quiet | grep '^  noise  '; }
[ "$(noise scenarios/single-flow.ini)" = "  noise      send jitter up to 100 ns per host, flow starts spread over 1 us" ] ||
  fail "noise line: $(noise scenarios/single-flow.ini)"
[ "$(noise scenarios/single-flow.ini --set topology.send_jitter=0 --set workload.start_spread=0)" = "  noise      none" ] ||
  fail "noise line without noise"
[ "$(noise scenarios/single-flow.ini --set topology.send_jitter=250ns --set workload.start_spread=0)" = "  noise      send jitter up to 250 ns per host" ] ||
  fail "noise line with --set"
echo "noise header: ok"

# --pcap LINKS: every packet that crossed those cables, in virtual time,
# one file per run in -o DIR; tshark decodes SRD (header CRCs correct) and
# TCP; each capture holds exactly what reached the ends of host0's cable
# (its frames' wire sizes add up to the bytes links.csv counts there).
"$SIM" run scenarios/single-flow.ini --set workload.bytes=2M --pcap host0 \
  -o "$tmp/pc" > /dev/null 2> "$tmp/pc.err" || fail "--pcap run: $(cat "$tmp/pc.err")"
for t in srd tcp tcp-over-srd; do
  [ -s "$tmp/pc/$t.pcap" ] || fail "--pcap: no $t.pcap"
  grep -q "^  $t: .*, [0-9]* packets captured in $t.pcap$" "$tmp/pc.err" || fail "--pcap note: $(cat "$tmp/pc.err")"
done
if command -v tshark > /dev/null; then
  for t in srd tcp tcp-over-srd; do
    tshark -X lua_script:tools/wireshark/srd.lua -r "$tmp/pc/$t.pcap" -T fields \
      -e frame.protocols -e srd.hcrc.status -e frame.len \
      > "$tmp/pc-$t.txt" 2> /dev/null || fail "tshark on $t.pcap"
  done
  python3 - "$tmp" <<'PY' || fail "--pcap captures"
import csv, sys
tmp = sys.argv[1]
cable = {}
for row in csv.DictReader(open(tmp + "/pc/links.csv")):
    if row["link"] in ("host0->left", "left->host0"):
        cable[row["transport"]] = cable.get(row["transport"], 0) + int(row["bytes"])
for t, proto in [("srd", "udp:srd"), ("tcp", "tcp"), ("tcp-over-srd", "udp:srd")]:
    rows = [l.rstrip("\n").split("\t") for l in open(f"{tmp}/pc-{t}.txt")]
    assert rows, t
    for r in rows:
        assert r[0] == "eth:ethertype:ip:" + proto, (t, r)
        assert proto == "tcp" or r[1] == "1", (t, r)
    # A frame is the wire size less preamble, FCS and inter-frame gap.
    wire = sum(int(r[2]) + 24 for r in rows)
    assert wire == cable[t], (t, wire, cable[t])
    print(f"  --pcap {t}: {len(rows)} frames, {wire} bytes: all that crossed host0")
PY
fi
# A sweep writes a capture per point; bad links and a missing -o are
# refused.
"$SIM" run scenarios/ecmp-collision.ini --set scenario.duration=50us --only srd \
  --pcap leaf0-spine1 -o "$tmp/pcs" > /dev/null 2>&1 || fail "--pcap sweep"
for p in 0 1 2; do [ -s "$tmp/pcs/srd.$p.pcap" ] || fail "--pcap sweep: no srd.$p.pcap"; done
"$SIM" run scenarios/single-flow.ini --pcap host0 > /dev/null 2> "$tmp/pcx.err"
[ $? = 2 ] && grep -q "needs -o DIR" "$tmp/pcx.err" || fail "--pcap without -o: $(cat "$tmp/pcx.err")"
"$SIM" run scenarios/single-flow.ini --pcap bogus -o "$tmp/pcy" > /dev/null 2> "$tmp/pcy.err"
[ $? = 2 ] && grep -q "expected a link name" "$tmp/pcy.err" || fail "--pcap bogus: $(cat "$tmp/pcy.err")"
"$SIM" run scenarios/single-flow.ini --pcap spine3 -o "$tmp/pcz" > /dev/null 2> "$tmp/pcz.err"
[ $? = 1 ] && grep -q "pcap: link 'spine3' does not exist" "$tmp/pcz.err" || fail "--pcap spine3: $(cat "$tmp/pcz.err")"
echo "pcap: ok"

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

# --- GNU-style flags: before or after the file, --name=value, --.
"$SIM" run --seed=99 --json --quiet --set=workload.count=500 -- \
  scenarios/hol-blocking.ini > "$tmp/j4.json" || fail "run with --seed=99"
cmp -s "$tmp/j3.json" "$tmp/j4.json" || fail "--seed=99 before the file differs from --seed 99 after it"
"$SIM" --version > "$tmp/v" || fail "--version exited $?"
grep -qE '^srd-sim \(srd\) [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/v" || fail "--version: $(cat "$tmp/v")"
for h in --help "run --help" "bench --help"; do
  # shellcheck disable=SC2086
  "$SIM" $h > "$tmp/h" || fail "$h exited $?"
  head -1 "$tmp/h" | grep -q "^Usage: srd-sim run SCENARIO.ini" || fail "$h: no usage"
  grep -q "^Exit status:" "$tmp/h" || fail "$h: no exit status"
done
if command -v help2man > /dev/null 2>&1; then
  help2man --no-info -N "$SIM" > "$tmp/srd-sim.1" || fail "help2man"
  grep -q '^\.SH SYNOPSIS' "$tmp/srd-sim.1" && grep -qF -- '\-\-output' "$tmp/srd-sim.1" \
    || fail "help2man's page lacks the synopsis or the options"
fi
echo "flags: ok"

# --- SIGINT: the run under way stops before its next event, what ran is
# printed and written, marked interrupted, exit status 130.
# complete_csv checks that every CSV has its header, rows, and lines all
# as long as the header, the last one ended (flushed: nothing cut off).
complete_csv() {
  local d=$1 f
  for f in flows.csv messages.csv throughput.csv flow_throughput.csv \
           queues.csv paths.csv links.csv runs.csv; do
    [ -s "$d/$f" ] || fail "$d/$f missing or empty"
    [ "$(tail -c 1 "$d/$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$d/$f: last line cut"
    [ "$(wc -l < "$d/$f")" -ge 2 ] || fail "$d/$f: no rows"
    awk -F, 'NR == 1 {n = NF} NF != n {exit 1}' "$d/$f" || fail "$d/$f: a line of another length"
  done
  for f in "$d"/.srd-sim*; do
    [ -e "$f" ] && fail "$d: the staging folder was left behind"
  done
  return 0
}
# A shuffle of 64 MiB per pair: its first sweep point (4 ranks) takes a
# fraction of a second, its second (16 ranks) seconds, its third minutes.
long=(run scenarios/shuffle.ini --set workload.bytes=64M)

# 1. One long run (16 ranks, 1 GiB each: minutes), SIGINT once it has
# drawn its progress bar (a slice of it has run, however slow the
# machine): it is cut short and measured so far.
python3 "$(dirname "$0")/sigint_on_output.py" "$tmp/int1.err" \
  "$SIM" run scenarios/shuffle.ini \
  --set workload.bytes=1G --set scenario.sweep= --only srd -o "$tmp/int1" \
  > "$tmp/int1.out"
rc=$?
[ $rc -eq 130 ] || { cat "$tmp/int1.err"; fail "interrupted run exited $rc, not 130"; }
grep -q "interrupted by SIGINT" "$tmp/int1.err" || fail "no interruption message"
for f in table.txt summary.json; do [ -s "$tmp/int1/$f" ] || fail "interrupted: no $f"; done
complete_csv "$tmp/int1"
grep -q "^interrupted: srd stopped at .* of 3 s simulated" "$tmp/int1.out" \
  || fail "the table does not say where the run was interrupted"
cmp -s "$tmp/int1.out" "$tmp/int1/table.txt" || fail "table.txt differs from stdout"
python3 - "$tmp/int1/summary.json" <<'PY' || fail "interrupted summary.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True and d["not_run"] == []
[t] = d["transports"]
assert t["name"] == "srd" and t["interrupted"] is True and t["completed"] is False
at = d["interrupted_at"]
assert (at["transport"], at["point"]) == ("srd", "")
assert 0 < at["sim_time_us"] == t["sim_end_us"] < d["duration_us"]
assert t["events"] > 0
PY

# 2. A sweep, SIGINT once its first run has reported (the note on
# stderr): what ran is reported, every other run is listed as not run.
interrupt() { # interrupt NAME ARGS...
  local name=$1 line pid
  shift
  rm -f "$tmp/fifo" && mkfifo "$tmp/fifo"
  "$SIM" "$@" > "$tmp/$name.out" 2> "$tmp/fifo" &
  pid=$!
  exec 3< "$tmp/fifo"
  IFS= read -r line <&3 || fail "$name: srd-sim said nothing"
  case $line in "  srd at workload.ranks=4: "*) ;; *) fail "$name: first note '$line'" ;; esac
  kill -INT "$pid"
  timeout 60 cat <&3 > "$tmp/$name.err" || { kill -KILL "$pid"; fail "$name: SIGINT did not stop it"; }
  exec 3<&-
  wait "$pid"
  echo $? > "$tmp/$name.rc"
}
interrupt int2 "${long[@]}" -o "$tmp/int2"
[ "$(cat "$tmp/int2.rc")" -eq 130 ] || { cat "$tmp/int2.err"; fail "interrupted sweep exited $(cat "$tmp/int2.rc"), not 130"; }
complete_csv "$tmp/int2"
grep -q "^not run: .*workload.ranks=64" "$tmp/int2.out" || fail "the table does not list the points not run"
grep -q "^not run: .*workload.ranks=64" "$tmp/int2/table.txt" || fail "table.txt does not list the points not run"
check_sweep='
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True
names = [(t["name"], t["point"]) for t in d["transports"]]
assert names[0] == ("srd", "workload.ranks=4"), names
skipped = [(k["transport"], k["point"]) for k in d["not_run"]]
for tr in ["srd", "tcp", "tcp-tuned"]:
    assert (tr, "workload.ranks=64") in skipped, skipped
    for p in ["workload.ranks=4", "workload.ranks=16", "workload.ranks=64"]:
        # every run is reported or listed as not run, never both
        assert ((tr, p) in names) != ((tr, p) in skipped), (tr, p)
cut = [t for t in d["transports"] if t.get("interrupted")]
assert len(cut) <= 1
if cut:  # the signal came during a run: the last one reported
    assert cut[0] is d["transports"][-1]
    at = d["interrupted_at"]
    assert (at["transport"], at["point"]) == (cut[0]["name"], cut[0]["point"])
    assert at["sim_time_us"] == cut[0]["sim_end_us"] < d["duration_us"]
else:    # between two runs
    assert d["interrupted_at"] is None
'
python3 -c "$check_sweep" "$tmp/int2/summary.json" || fail "interrupted sweep's summary.json"
# 3. The same with --json: the object on stdout says the same.
interrupt int3 "${long[@]}" --json
[ "$(cat "$tmp/int3.rc")" -eq 130 ] || fail "interrupted --json run exited $(cat "$tmp/int3.rc")"
python3 -c "$check_sweep" "$tmp/int3.out" || fail "interrupted --json output"
echo "interrupt: ok"

# --- A failing run with -o leaves no empty table: nothing measured,
# nothing written (and what DIR held stays); a run failing after another
# keeps that one's table, and only it.  (The TCP model refuses rwnd < mss.)
refuse=(--set transport.tcp.mss=9000 --set transport.tcp.rwnd=2K --quiet)
"$SIM" run scenarios/single-flow.ini "${refuse[@]}" --only tcp -o "$tmp/f1" \
  > /dev/null 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "a refused transport exited $rc, not 1"; }
grep -q "TCP settings out of range" "$tmp/err" || fail "no reason given"
[ -z "$(ls -A "$tmp/f1")" ] || fail "a run that measured nothing left $(ls -A "$tmp/f1")"
"$SIM" run scenarios/single-flow.ini --quiet -o "$tmp/f2" > /dev/null || fail "single-flow"
cp "$tmp/f2/table.txt" "$tmp/good.txt"
"$SIM" run scenarios/single-flow.ini "${refuse[@]}" --only tcp -o "$tmp/f2" \
  > /dev/null 2>&1
cmp -s "$tmp/good.txt" "$tmp/f2/table.txt" || fail "a failed run changed the table already there"
"$SIM" run scenarios/single-flow.ini "${refuse[@]}" -o "$tmp/f3" > /dev/null 2>&1
[ $? -eq 1 ] || fail "srd then a refused tcp: not exit 1"
grep -q "throughput (Gb/s)" "$tmp/f3/table.txt" || fail "the table of the run before the failure is missing"
[ "$(ls -A "$tmp/f3")" = table.txt ] || fail "a failed run wrote $(ls -A "$tmp/f3")"
# An output that cannot be written is a failed run (1), not bad usage (2):
# -o DIR that cannot be made, stdout on a full disk.
"$SIM" run scenarios/single-flow.ini --quiet -o /dev/null/out > /dev/null 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "-o DIR that cannot be made exited $rc, not 1"; }
grep -q "^srd-sim: -o /dev/null/out: cannot create" "$tmp/err" || fail "-o: $(cat "$tmp/err")"
if [ -w /dev/full ]; then
  for args in "--json" ""; do
    # shellcheck disable=SC2086
    "$SIM" run scenarios/single-flow.ini --quiet $args > /dev/full 2> "$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "run $args to a full disk exited $rc, not 1"
    grep -q "write failed" "$tmp/err" || fail "run $args to a full disk: $(cat "$tmp/err")"
  done
  "$SIM" bench --k 2 --ms 0.01 --json > /dev/full 2> "$tmp/err"
  [ $? -eq 1 ] || fail "bench --json to a full disk: not exit 1"
fi
echo "failure: ok"

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
