#!/bin/bash
# Description: srd-sim sweep and merge end to end: every run's figures
# are what `srd-sim run --seed S` measures; the mean, sd and 95% interval
# in stats.csv are recomputed from runs.csv; the same sweep gives the same
# bytes run alone with -j 2, under `mpirun -np 2`, as a faked two-task
# Slurm array (the last task merges), as two --share halves in separate
# folders merged by srd-sim merge, and after an interruption (SIGTERM:
# exit 143, the finished runs kept) finished by the same command; a
# folder of another sweep, a missing, corrupted or disagreeing run, an
# edited scenario and every bad flag or launcher variable get a clear
# message and exit 1 or 2; srd-plot draws the summary plots.
set -u
OUT=${OUT:-build}
SIM=$OUT/bin/srd-sim
PLOT=$OUT/bin/srd-plot
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$SIM" ] || fail "no $SIM"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

scn=scenarios/ecmp-collision.ini
# 3 points x 3 transports x 4 seeds = 36 runs of 1 ms each.
args=(sweep "$scn" --seeds 1-4 --set scenario.duration=1ms -q)
files="table.txt runs.csv stats.csv stats.json"
same() { # same DIR_A DIR_B WHAT: the merged outputs are the same bytes
  for f in $files; do
    cmp -s "$1/$f" "$2/$f" || fail "$3: $f differs from the local sweep's"
  done
}

# --- Alone, two processes at a time.
"$SIM" "${args[@]}" -j 2 -o "$tmp/local" > "$tmp/local.out" ||
  fail "local sweep exited $?"
for f in $files sweep.manifest; do
  [ -s "$tmp/local/$f" ] || fail "no $f"
done
[ "$(ls "$tmp/local/runs" | wc -l)" = 36 ] || fail "expected 36 run files"
cmp -s "$tmp/local.out" "$tmp/local/table.txt" || fail "table.txt differs from stdout"
grep -q "^ecmp-collision: 3 points x 4 seeds (1-4): 36 runs" "$tmp/local.out" ||
  fail "table heading: $(head -1 "$tmp/local.out")"
grep -q "of capacity (%) .* ± " "$tmp/local.out" || fail "no mean ± interval row"
echo "local sweep: ok"

# --- Each run is what srd-sim run measures at that seed.
for s in 1 4; do
  "$SIM" run "$scn" --set scenario.duration=1ms --seed $s --json -q > "$tmp/run$s.json" ||
    fail "run --seed $s"
done
python3 - "$tmp" <<'PY' || fail "runs.csv against srd-sim run"
import csv, json, sys
tmp = sys.argv[1]
rows = list(csv.DictReader(open(f"{tmp}/local/runs.csv")))
assert len(rows) == 36, len(rows)
for s in (1, 4):
    d = json.load(open(f"{tmp}/run{s}.json"))
    for t in d["transports"]:
        r = [r for r in rows if r["transport"] == t["name"]
             and r["point"] == t["point"] and r["seed"] == str(s)]
        assert len(r) == 1, (t["name"], t["point"], s)
        r = r[0]
        for k, j in [("throughput_gbps", t["throughput_gbps"]),
                     ("throughput_fraction", t["throughput_fraction"]),
                     ("jain", t["jain"]),
                     ("msg_p99_us", t["msg_latency_us"]["p99"])]:
            assert abs(float(r[k]) - j) <= 1e-5 * max(1, abs(j)), (k, r[k], j)
        for k in ("retransmits", "timeouts"):
            assert float(r[k]) == t[k], (k, r[k], t[k])
PY
echo "runs match srd-sim run: ok"

# --- The statistics, recomputed (Student's t for 3 degrees of freedom).
python3 - "$tmp/local" <<'PY' || fail "stats.csv against runs.csv"
import csv, math, sys
d = sys.argv[1]
runs = list(csv.DictReader(open(f"{d}/runs.csv")))
stats = list(csv.DictReader(open(f"{d}/stats.csv")))
t3 = 3.182446305
checked = 0
for st in stats:
    xs = [float(r[st["figure"]]) for r in runs
          if r["point_idx"] == st["point_idx"] and r["transport"] == st["transport"]
          and r[st["figure"]] != ""]
    assert int(st["n"]) == len(xs), st
    m = sum(xs) / len(xs)
    assert abs(float(st["mean"]) - m) <= 1e-5 * max(1, abs(m)), (st, m)
    if len(xs) == 4:
        sd = math.sqrt(sum((x - m) ** 2 for x in xs) / 3)
        assert abs(float(st["sd"]) - sd) <= 1e-5 * max(1, sd), (st, sd)
        ci = t3 * sd / 2
        assert abs(float(st["ci95"]) - ci) <= 1e-5 * max(1, ci), (st, ci)
        checked += 1
    assert float(st["min"]) == min(xs) or abs(float(st["min"]) - min(xs)) < 1e-5 * max(1, abs(min(xs)))
assert checked > 100, checked
PY
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['n_seeds']==4 and len(d['cells'])==9" \
  "$tmp/local/stats.json" || fail "stats.json"
echo "statistics: ok"

# --- Under mpirun -np 2: each rank half of the runs, one merges.
if command -v mpirun >/dev/null; then
  mpi=(mpirun -np 2 --oversubscribe)
  [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
  "${mpi[@]}" "$SIM" "${args[@]}" -o "$tmp/mpi" > "$tmp/mpi.out" 2> "$tmp/mpi.err" ||
    fail "mpirun sweep exited $?: $(tail -3 "$tmp/mpi.err")"
  same "$tmp/local" "$tmp/mpi" "mpirun -np 2"
  [ "$(grep -c "^ecmp-collision: 3 points" "$tmp/mpi.out")" = 1 ] ||
    fail "mpirun: expected one table, from the rank that merged"
  echo "mpirun -np 2: ok"
else
  echo "mpirun -np 2: skipped (no mpirun)"
fi

# --- A Slurm array of two tasks (indexes 5 and 6), one after the other:
# the first leaves its half, the second finds every run and merges.
for id in 5 6; do
  SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=6 \
    SLURM_ARRAY_JOB_ID=4242 "$SIM" "${args[@]}" -o "$tmp/slurm" \
    > "$tmp/slurm$id.out" 2> "$tmp/slurm$id.err" || fail "array task $id exited $?"
done
[ "$(ls "$tmp/slurm/runs" | wc -l)" = 36 ] || fail "array: not every run"
[ -s "$tmp/slurm5.out" ] && fail "array task 5 printed a table before every run was there"
same "$tmp/local" "$tmp/slurm" "Slurm array"
echo "Slurm array (faked): ok"

# --- Two shares in separate folders (no shared file system), merged.
"$SIM" "${args[@]}" --share 0/2 -o "$tmp/half0" > /dev/null 2>&1 || fail "share 0/2"
"$SIM" "${args[@]}" --share 1/2 -o "$tmp/half1" > /dev/null 2>&1 || fail "share 1/2"
[ "$(ls "$tmp/half0/runs" | wc -l)" = 18 ] || fail "share 0/2: expected 18 runs"
"$SIM" merge -q "$tmp/half0" 2> "$tmp/m.err" > /dev/null
rc=$?
[ $rc = 1 ] || fail "merge of one half: exit $rc, expected 1"
grep -q "18 of 36 runs missing" "$tmp/m.err" || fail "merge of one half: $(cat "$tmp/m.err")"
"$SIM" merge -q -o "$tmp/merged" "$tmp/half0" "$tmp/half1" > "$tmp/merged.out" ||
  fail "merge exited $?"
same "$tmp/local" "$tmp/merged" "merge of two shares"
[ -s "$tmp/merged/sweep.manifest" ] || fail "merge -o OUT: no manifest in OUT"
# A merged folder holds the manifest but no runs/: merged with the
# folders of the runs, it is the same sweep.
"$SIM" merge -q -o "$tmp/merged2" "$tmp/merged" "$tmp/half1" "$tmp/half0" > /dev/null ||
  fail "merge of a merged folder and the shares: exit $?"
same "$tmp/local" "$tmp/merged2" "merge again"
echo "shares and merge: ok"

# --- Bad folders.
cp -r "$tmp/local" "$tmp/bad"
printf 'srd-sim run 1\npoint 0\ntransport srd\nseed 1\njain 2x\n' > "$tmp/bad/runs/p0-srd-s1"
"$SIM" merge -q -o "$tmp/o1" "$tmp/bad" > /dev/null 2> "$tmp/e"
[ $? = 1 ] && grep -q "p0-srd-s1:5: jain: expected a finite number" "$tmp/e" ||
  fail "corrupted run: $(cat "$tmp/e")"
cp "$tmp/local/runs/p0-srd-s1" "$tmp/bad/runs/p0-srd-s1"
sed -i 's/^jain .*/jain 0.5/' "$tmp/bad/runs/p0-srd-s2"
"$SIM" merge -q -o "$tmp/o2" "$tmp/bad" "$tmp/local" > /dev/null 2> "$tmp/e"
[ $? = 1 ] && grep -q "p0-srd-s2 differs from the same run" "$tmp/e" ||
  fail "disagreeing run: $(cat "$tmp/e")"
"$SIM" sweep "$scn" --seeds 1-5 --set scenario.duration=1ms -q -o "$tmp/local" > /dev/null 2> "$tmp/e"
[ $? = 1 ] && grep -q "holds another sweep" "$tmp/e" || fail "another sweep's folder: $(cat "$tmp/e")"
"$SIM" merge -q "$tmp" > /dev/null 2> "$tmp/e"
[ $? = 1 ] && grep -q "without sweep.manifest" "$tmp/e" || fail "not a sweep folder: $(cat "$tmp/e")"
"$SIM" merge -q "$tmp/local" "$tmp/half0" "$tmp/nosuch" > /dev/null 2> "$tmp/e"
[ $? = 1 ] || fail "merge of a missing folder"
# An edited scenario is another sweep.
cp "$scn" "$tmp/edited.ini"
"$SIM" sweep "$tmp/edited.ini" --seeds 1-4 --set scenario.duration=1ms -q --share 0/2 \
  -o "$tmp/ed" > /dev/null 2>&1 || fail "share of the copy"
echo "; a comment" >> "$tmp/edited.ini"
"$SIM" sweep "$tmp/edited.ini" --seeds 1-4 --set scenario.duration=1ms -q --share 1/2 \
  -o "$tmp/ed" > /dev/null 2> "$tmp/e"
[ $? = 1 ] && grep -q "holds another sweep" "$tmp/e" || fail "edited scenario: $(cat "$tmp/e")"
echo "bad folders: ok"

# --- Bad usage: exit 2, a message naming what is wrong.
bad() { # bad "WANT" ARGS...: exit 2 and WANT in the message
  local want=$1
  shift
  "$@" > /dev/null 2> "$tmp/e"
  local rc=$?
  [ $rc = 2 ] || fail "$*: exit $rc, expected 2 ($(cat "$tmp/e"))"
  grep -q -- "$want" "$tmp/e" || fail "$*: expected '$want' in: $(cat "$tmp/e")"
}
bad "needs --seeds" "$SIM" sweep "$scn"
bad "ends before it starts" "$SIM" sweep "$scn" --seeds 5-1
bad "expected seeds" "$SIM" sweep "$scn" --seeds x
bad "unexpected ';'" "$SIM" sweep "$scn" --seeds "1;2"
bad "more than 100000 seeds" "$SIM" sweep "$scn" --seeds 1-200000
bad "not --seed" "$SIM" sweep "$scn" --seed 3
bad "pcap is run's" "$SIM" sweep "$scn" --seeds 1 --pcap h0
bad "expected I/N" "$SIM" sweep "$scn" --seeds 1 --share 2/2 -o "$tmp/x"
bad "expected I/N" "$SIM" sweep "$scn" --seeds 1 --share 1 -o "$tmp/x"
bad "expected a number of processes" "$SIM" sweep "$scn" --seeds 1 -j 0
bad "needs -o DIR" "$SIM" sweep "$scn" --seeds 1 --share 0/2
bad "no scenario file" "$SIM" sweep --seeds 1
bad "no folder" "$SIM" merge
bad "SLURM_ARRAY_TASK_ID=abc" env SLURM_ARRAY_TASK_ID=abc "$SIM" sweep "$scn" --seeds 1 -o "$tmp/x"
bad "not a task of the array" env SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_COUNT=2 \
  "$SIM" sweep "$scn" --seeds 1 -o "$tmp/x"
bad "OMPI_COMM_WORLD_RANK without" env OMPI_COMM_WORLD_RANK=0 "$SIM" sweep "$scn" --seeds 1 -o "$tmp/x"
bad "not a rank of the job" env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=2 \
  "$SIM" sweep "$scn" --seeds 1 -o "$tmp/x"
printf '[scenario]\nname = s\nsweep = scenario.seed=1,2\n[topology]\ntype = dumbbell\n' > "$tmp/seedsweep.ini"
bad "sweeps scenario.seed" "$SIM" sweep "$tmp/seedsweep.ini" --seeds 1-2
bad "no such file\|cannot" "$SIM" sweep "$tmp/nosuch.ini" --seeds 1
echo "bad usage: ok"

# --- Interrupted (SIGTERM once the first run is in), then finished by the
# same command: the same bytes as a sweep never interrupted.
iargs=(sweep "$scn" --seeds 1-3 --only srd -j 1 -q --set scenario.duration=150ms
  --set "scenario.sweep=topology.spines=4,8|topology.hosts_per_leaf=4,8")
"$SIM" "${iargs[@]}" -o "$tmp/int" > /dev/null 2> "$tmp/int.err" &
pid=$!
for _ in $(seq 1 600); do
  [ -n "$(ls "$tmp/int/runs" 2>/dev/null)" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
pid=""
n=$(ls "$tmp/int/runs" | wc -l)
if [ $rc = 0 ]; then
  echo "interrupt: the sweep ended before the signal (a fast machine): not checked"
else
  [ $rc = 143 ] || fail "SIGTERM: exit $rc, expected 143 ($(cat "$tmp/int.err"))"
  grep -q "interrupted by SIGTERM" "$tmp/int.err" || fail "SIGTERM: $(cat "$tmp/int.err")"
  [ "$n" -ge 1 ] && [ "$n" -lt 6 ] || fail "SIGTERM: $n of 6 runs kept"
  [ -e "$tmp/int/stats.csv" ] && fail "SIGTERM: merged although runs were missing"
  ls -a "$tmp/int/runs" | grep -q "\.tmp\." && fail "SIGTERM: a half-written run left"
fi
"$SIM" "${iargs[@]}" -o "$tmp/int" > /dev/null 2> "$tmp/int2.err" || fail "the rest: exit $?"
"$SIM" "${iargs[@]}" -o "$tmp/whole" > /dev/null 2>&1 || fail "uninterrupted: exit $?"
same "$tmp/whole" "$tmp/int" "interrupted and finished"
echo "interrupt ($n of 6 runs kept) and resume: ok"

# --- Without -o: a temporary folder, removed after the table.
before=$(ls "${TMPDIR:-/tmp}" | grep -c '^srd-sim-sweep-')
"$SIM" sweep "$scn" --seeds 1-2 --only tcp -q --set scenario.duration=1ms > "$tmp/noo.out" ||
  fail "sweep without -o"
grep -q "± " "$tmp/noo.out" || fail "sweep without -o: no table"
after=$(ls "${TMPDIR:-/tmp}" | grep -c '^srd-sim-sweep-')
[ "$before" = "$after" ] || fail "sweep without -o left its temporary folder"
echo "without -o: ok"

# --- The plots.
if command -v gnuplot >/dev/null; then
  "$PLOT" -q "$tmp/local" || fail "srd-plot on a sweep exited $?"
  for p in seeds_throughput seeds_jain seeds_msg_p99 seeds_retransmits seeds_queue; do
    [ -s "$tmp/local/$p.png" ] || fail "srd-plot: no $p.png"
  done
  echo "plots: ok"
else
  echo "plots: skipped (no gnuplot)"
fi
echo "PASS"
