#!/bin/bash
# Description: tools/efa-check.sh end to end on 127.0.0.1 with libfabric's
# tcp;ofi_rxm standing in for efa: the table has the three transports'
# bandwidth and latency for every size, its ratios (and the CSV's) are
# what the raw JSON it wrote gives (recomputed here), the srd-sim
# prediction columns are there with --predict, the plot is drawn (when
# gnuplot is installed), and the servers it started are gone when it
# exits; the ssh path (--via-ssh, with a stand-in ssh that runs the
# command here) starts and stops the servers the same way; bad usage (an
# unknown option, no srd-perf, a provider fi_info does not list, a bad
# -m) exits 2 with a message; servers that never answer (none running
# with --servers-running, one that never listens, an ssh that cannot
# reach HOST_B) exit 1 with a message and leave nothing running.  Exits 77 (skip) when srd-perf was
# built without libfabric or python3 is missing.
#
# Processes this script starts are ended by PID; every run is bounded by
# timeout(1) and the script's own limits.
set -u
OUT=${OUT:-build}
BIN=$OUT/bin/srd-perf
CHECK=tools/efa-check.sh
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN" ] || fail "no $BIN"
[ -x "$CHECK" ] || fail "no $CHECK"
command -v python3 > /dev/null || skip "python3 missing"
"$BIN" --version | grep -q "transports:.* fabric" ||
  skip "libfabric was not built in ($("$BIN" -t fabric --loopback 2>&1 | head -1))"
"$BIN" --list-providers | grep -qxF "provider: tcp;ofi_rxm" ||
  skip "libfabric offers no tcp;ofi_rxm here"
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
# A base port whose next 96 UDP and TCP ports nobody here uses (other
# tests on this machine pick theirs at random too): udp takes 16 from it,
# tcp one, fabric the next; the three runs below take 32 each.
port=""
for ((i = 0; i < 50; i++)); do
  p=$((26000 + (RANDOM % 900) * 32))
  if ! command -v ss > /dev/null ||
    ! ss -Hltun 2> /dev/null | awk -v lo=$p -v hi=$((p + 128)) '{ n = split($5, a, ":"); if (a[n] >= lo && a[n] < hi) f = 1 } END { exit !f }'; then
    port=$p
    break
  fi
done
[ -n "$port" ] || fail "no free port range"
sizes=64,4K,64K
common=(--srd-perf "$BIN" --provider "tcp;ofi_rxm" --server-poll blocking
        --time-limit 20 --server-wait 10)

# servers_gone PORT: no srd-perf server of this run on PORT or PORT+1.
servers_gone() {
  local i
  for ((i = 0; i < 20; i++)); do
    pgrep -f -- "srd-perf -s.* -p ($1|$(($1 + 1))) " > /dev/null || return 0
    sleep 0.1
  done
  return 1
}

# --- End to end, with the prediction.
o=$tmp/out
timeout 120 "$CHECK" 127.0.0.1 "${common[@]}" -p $port --sizes $sizes -n 300 \
  --predict --link-gbps 25 -o "$o" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
[ $rc = 0 ] || { cat "$tmp/stderr"; fail "efa-check exited $rc"; }
servers_gone $port || fail "servers still running after efa-check exited"
for f in table.txt table.csv sweep.csv fabric-bw.json fabric-lat.json \
  udp-bw.json udp-lat.json tcp-bw.json tcp-lat.json; do
  [ -s "$o/$f" ] || fail "no $o/$f"
done
cmp -s "$tmp/stdout" "$o/table.txt" || fail "the table printed is not table.txt"
grep -q "fabric = -t fabric --provider tcp;ofi_rxm" "$o/table.txt" ||
  fail "the table does not name the provider"
python3 - "$o" $sizes <<'PY' || fail "the table and the CSV do not follow from the JSON"
import csv, json, math, os, sys
o = sys.argv[1]
def size(s):
    return int(s[:-1]) * 1024 if s.endswith("K") else int(s)
sizes = [size(s) for s in sys.argv[2].split(",")]
ts = ["fabric", "udp", "tcp"]
j = {}
for t in ts:
    for test in ("bw", "lat"):
        rows = json.load(open(os.path.join(o, "%s-%s.json" % (t, test))))
        assert [r["size"] for r in rows] == sizes, (t, test, rows)
        for r in rows:
            assert r["transport"] == t and r["test"] == test, r
            assert r["complete"] is True and r["errors"] == 0, r
            assert r["iterations"] == 300, r
            j[(t, test, r["size"])] = r
bw = {(t, s): j[(t, "bw", s)]["mbps"] / 1000 for t in ts for s in sizes}
lat = {(t, s): j[(t, "lat", s)]["lat_us"]["p50"] for t in ts for s in sizes}
for k in list(bw) + list(lat):
    assert (bw if k in bw else lat)[k] > 0, k

# The table: a row per size, 11 cells and 4 of the prediction.
rows = {}
for line in open(os.path.join(o, "table.txt")):
    cells = line.replace("|", " ").split()
    if cells and cells[0] in ("64", "4K", "64K"):
        rows[size(cells[0])] = cells[1:]
assert sorted(rows) == sorted(sizes), rows
def close(printed, value, decimals):
    return abs(float(printed.rstrip("x")) - value) <= 0.5 * 10 ** -decimals + 1e-9
for s in sizes:
    c = rows[s]
    assert len(c) == 14, (s, c)
    for i, t in enumerate(ts):
        assert close(c[i], bw[(t, s)], 3), (s, t, c[i], bw[(t, s)])
        assert close(c[5 + i], lat[(t, s)], 2), (s, t, c[5 + i], lat[(t, s)])
    assert close(c[3], bw[("udp", s)] / bw[("fabric", s)], 2), (s, c)
    assert close(c[4], bw[("tcp", s)] / bw[("fabric", s)], 2), (s, c)
    assert close(c[8], lat[("udp", s)] / lat[("fabric", s)], 2), (s, c)
    assert close(c[9], lat[("tcp", s)] / lat[("fabric", s)], 2), (s, c)
    assert all(x != "-" and float(x) > 0 for x in c[10:14]), (s, c)

# The CSV: the same figures, unrounded.
r = list(csv.DictReader(open(os.path.join(o, "table.csv"))))
assert [int(x["size"]) for x in r] == sizes, r
def same(a, b):
    return math.isclose(float(a), b, rel_tol=1e-5)
for x in r:
    s = int(x["size"])
    for t in ts:
        assert same(x[t + "_GBps"], bw[(t, s)]), (x, t)
        assert same(x[t + "_lat_p50_us"], lat[(t, s)]), (x, t)
    for t in ("udp", "tcp"):
        assert same(x[t + "_over_fabric_bw"], bw[(t, s)] / bw[("fabric", s)]), x
        assert same(x[t + "_over_fabric_lat"], lat[(t, s)] / lat[("fabric", s)]), x
    # A 25 Gbit/s link carries at most 3.125 GB/s.
    assert 0 < float(x["sim_srd_GBps"]) <= 3.125 and 0 < float(x["sim_tcp_GBps"]) <= 3.125, x
sw = list(csv.DictReader(open(os.path.join(o, "sweep.csv"))))
assert sorted({x["transport"] for x in sw}) == ["fabric", "sim-srd", "sim-tcp", "tcp", "udp"], sw
for x in sw:
    if not x["transport"].startswith("sim-"):
        assert same(x["GBps"], bw[(x["transport"], int(x["size"]))]), x
print("table and CSV follow from the JSON: %d sizes, 3 transports" % len(sizes))
PY
if command -v gnuplot > /dev/null; then
  [ -s "$o/sweep.png" ] || fail "no $o/sweep.png"
  echo "plot: $o/sweep.png drawn"
else
  echo "plot: gnuplot not installed, not checked"
fi
sed -n '4,$p' "$o/table.txt"

# --- The ssh path: a stand-in ssh that runs the command here.
cat > "$tmp/ssh" <<'EOF'
#!/bin/sh
# ssh HOST COMMAND: run COMMAND here, as sshd would on HOST.
shift
exec sh -c "$*"
EOF
chmod +x "$tmp/ssh"
p2=$((port + 32))
SSH=$tmp/ssh timeout 60 "$CHECK" 127.0.0.1 --via-ssh "${common[@]}" -p $p2 \
  --sizes 64 -n 300 --no-plot -q -o "$tmp/ssh-out" > "$tmp/ssh.out" 2>&1 ||
  { cat "$tmp/ssh.out"; fail "efa-check over ssh exited $?"; }
grep -q "^ *64 |" "$tmp/ssh-out/table.txt" || fail "no row over ssh"
servers_gone $p2 || fail "the servers started over ssh are still running"
echo "ssh: servers started and stopped"

# --- Bad usage: exit 2 and a message.
expect() { # rc pattern args...
  local want=$1 pat=$2 rc
  shift 2
  timeout 60 "$CHECK" "$@" > "$tmp/bad.out" 2> "$tmp/bad.err"
  rc=$?
  [ $rc = "$want" ] || { cat "$tmp/bad.err"; fail "efa-check $* exited $rc, not $want"; }
  grep -q -- "$pat" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "efa-check $*: no '$pat'"; }
}
expect 2 "unrecognized option '--bogus'" 127.0.0.1 --bogus
expect 2 "no HOST_B given" --provider "tcp;ofi_rxm"
expect 2 "no srd-perf there" 127.0.0.1 --srd-perf "$tmp/nope"
expect 2 "provider 'nosuch' is not offered here" 127.0.0.1 --srd-perf "$BIN" --provider nosuch
expect 2 "-m: 'gpu' is not host or cuda" 127.0.0.1 "${common[@]}" -m gpu
expect 2 "is not a size" 127.0.0.1 "${common[@]}" --sizes 64,lots
if ! "$BIN" --help | grep -q -- "-m.*cuda"; then
  expect 2 "no -m host|cuda" 127.0.0.1 "${common[@]}" -m cuda
fi
echo "bad usage: exit 2 with a message"

# --- Servers that never answer: exit 1, nothing left running.
p3=$((port + 64))
expect 1 "no fabric server answers on 127.0.0.1" 127.0.0.1 "${common[@]}" -p $p3 \
  --servers-running --server-wait 2
grep -q -- "-p $((p3 + 1)) -t fabric --provider 'tcp;ofi_rxm'" "$tmp/bad.out" ||
  fail "--servers-running did not print the commands to run"
cat > "$tmp/silent" <<EOF
#!/bin/sh
# A server that never says it listens: it records its PID and waits.
echo \$\$ >> "$tmp/silent.pids"
exec sleep 300
EOF
chmod +x "$tmp/silent"
expect 1 "did not answer within 2 s" 127.0.0.1 "${common[@]}" -p $p3 \
  --remote-srd-perf "$tmp/silent" --server-wait 2
[ "$(wc -l < "$tmp/silent.pids")" = 3 ] || fail "not three servers started"
while read -r p; do
  ! kill -0 "$p" 2> /dev/null || { pids+=("$p"); fail "server $p left running"; }
done < "$tmp/silent.pids"
# An ssh that cannot reach HOST_B: exit 1 at once, with what ssh said.
cat > "$tmp/ssh-down" <<'EOF'
#!/bin/sh
echo "ssh: connect to host $1 port 22: Connection refused" >&2
exit 255
EOF
chmod +x "$tmp/ssh-down"
SECONDS=0
SSH=$tmp/ssh-down expect 1 "Connection refused" 127.0.0.1 --via-ssh "${common[@]}" -p $p3
[ $SECONDS -lt 8 ] || fail "an ssh that exited at once took ${SECONDS} s to notice"
echo "dead servers: exit 1, nothing left running"
# -m cuda reaches both ends of every transport: on the fake CUDA runtime
# (test/transports/fake_cudart.c) where the build has CUDA.
FAKE=$PWD/$OUT/test/libfakecudart.so
if [ -f "$FAKE" ] && ! "$BIN" --loopback -m cuda -n 1 2>&1 | grep -q "no CUDA support"; then
  o4=$tmp/cuda
  SRD_CUDART=$FAKE timeout 120 "$CHECK" 127.0.0.1 "${common[@]}" -p $((port + 96)) \
    --sizes 4K,64K -n 300 -m cuda -o "$o4" > "$tmp/stdout" 2> "$tmp/stderr"
  rc=$?
  [ $rc = 0 ] || { cat "$tmp/stderr"; fail "efa-check -m cuda exited $rc"; }
  python3 - "$o4" << 'PY' || fail "-m cuda did not reach every run"
import json, os, sys
for t in ("fabric", "udp", "tcp"):
    for test in ("bw", "lat"):
        rows = json.load(open(os.path.join(sys.argv[1], "%s-%s.json" % (t, test))))
        rows = rows if isinstance(rows, list) else [rows]
        assert rows and all(r["mem"] == "cuda" for r in rows), (t, test)
PY
  echo "-m cuda (fake CUDA runtime): every transport's runs in device memory"
else
  echo "-m cuda: skipped (no CUDA in this build)"
fi
echo "efa-check: ok"
