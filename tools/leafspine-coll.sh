#!/bin/bash
# leafspine-coll.sh: one collective workload across the hosts of a
# leaf-spine fabric in network namespaces (tools/leafspine.sh), over srd
# (libsrd over UDP) and kernel TCP in turn, and the same workload, sizes
# and rates in netsim (srd-sim), printed in one table:
#
#   tools/leafspine-coll.sh [OPTION]... [shuffle|incast|permutation]
#
# One srd-coll process per host (rank r on host r, started from a host
# list: rank 0 bootstraps the others over TCP), every rank's bytes checked
# with --verify when asked.  For each transport it prints the exchange's
# completion time (median over the measured iterations), the global
# throughput, the retransmissions, and the share of the cross-leaf bytes
# each spine carried (from the spines' tbf counters: the ECMP picture);
# netsim's rows are the same workload on a simulated twin of the fabric
# (srd-sim's leafspine topology with these rates, queues and sizes).
#
# Options:
#   --bytes-per-rank SIZE  each rank's input [256M]
#   --partition SIZE       input partition [64M]
#   --outputs N            shuffle: output partitions [2 x ranks]
#   --msg-size SIZE        largest message [1M]
#   --window N             sends in flight per destination [16]
#   --warmup N, --iters N  iterations, unmeasured and measured [1, 3]
#   --transports LIST      of udp, tcp, comma-separated [udp,tcp]
#   --verify               check every byte and exactly-once delivery
#   --no-sim               leave netsim out
#   --seed N               srd-coll's and srd-sim's seed [1]
#   --time-limit SECS      each run's bound [120]
#   -o DIR                 keep everything here (JSON of every run, the
#                          scenario file, srd-sim's output, table.txt)
#                          [a temporary folder, removed]
#   --bin DIR              the built tools [build/bin]
#   --keep-fabric          leave the fabric up (tools/leafspine.sh down)
#   and tools/leafspine.sh up's options: --leaves, --hosts-per-leaf,
#   --spines, --host-rate, --fabric-rate, --queue, --nic-queue, --mtu
#   (--name is fixed per run).
#
# Needs root (network namespaces), iproute2, tc and python3.  Exit
# status: 0 when every run completed, 1 when one failed (its output is
# printed), 2 for bad usage, 77 when namespaces cannot be made here.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FABRIC=$HERE/leafspine.sh
BIN=build/bin
WL=shuffle
BPR=256M PART=64M OUTPUTS="" MSG=1M WINDOW=16 WARMUP=1 ITERS=3
TRANSPORTS=udp,tcp VERIFY="" SIM=1 SEED=1 TLIMIT=120 ODIR="" KEEP=0
fab=()
usage() {
  sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"
  exit "${1:-2}"
}
bad() { echo "leafspine-coll: $*" >&2; echo "Try 'tools/leafspine-coll.sh --help'." >&2; exit 2; }
die() { echo "leafspine-coll: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage 0 ;;
    --verify) VERIFY=--verify; shift ;;
    --no-sim) SIM=0; shift ;;
    --keep-fabric) KEEP=1; shift ;;
    shuffle | incast | permutation) WL=$1; shift ;;
    --bytes-per-rank | --partition | --outputs | --msg-size | --window | \
      --warmup | --iters | --transports | --seed | --time-limit | -o | --bin | \
      --leaves | --hosts-per-leaf | --spines | --host-rate | --fabric-rate | \
      --queue | --nic-queue | --mtu)
      [ $# -ge 2 ] || bad "$1 needs a value"
      case $1 in
        --bytes-per-rank) BPR=$2 ;;
        --partition) PART=$2 ;;
        --outputs) OUTPUTS=$2 ;;
        --msg-size) MSG=$2 ;;
        --window) WINDOW=$2 ;;
        --warmup) WARMUP=$2 ;;
        --iters) ITERS=$2 ;;
        --transports) TRANSPORTS=$2 ;;
        --seed) SEED=$2 ;;
        --time-limit) TLIMIT=$2 ;;
        -o) ODIR=$2 ;;
        --bin) BIN=$2 ;;
        *) fab+=("$1" "$2") ;;
      esac
      shift 2 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
COLL=$BIN/srd-coll
SIMBIN=$BIN/srd-sim
[ -x "$COLL" ] || die "no $COLL (run make first)"
[ $SIM = 0 ] || [ -x "$SIMBIN" ] || die "no $SIMBIN (run make first, or --no-sim)"
command -v python3 > /dev/null || die "python3 is not installed (make deps)"
IFS=, read -ra TLIST <<< "$TRANSPORTS"
for t in "${TLIST[@]}"; do
  case $t in udp | tcp) ;; *) bad "--transports: '$t' is not udp or tcp" ;; esac
done
[[ $SEED =~ ^[0-9]+$ ]] || bad "--seed '$SEED': a number"
[[ $TLIMIT =~ ^[0-9]+$ ]] || bad "--time-limit '$TLIMIT': whole seconds"

NAME=lc$(($$ % 100000))
if [ -n "$ODIR" ]; then
  mkdir -p "$ODIR" || die "cannot make $ODIR"
  O=$(cd "$ODIR" && pwd)
else
  O=$(mktemp -d)
fi
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2> /dev/null; done
  [ $KEEP = 1 ] || NAME=$NAME "$FABRIC" down
  [ -n "$ODIR" ] || rm -rf "$O"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

NAME=$NAME "$FABRIC" up "${fab[@]}" > "$O/fabric.txt" 2>&1
rc=$?
if [ $rc != 0 ]; then
  cat "$O/fabric.txt" >&2
  exit $rc
fi
head -1 "$O/fabric.txt"
N=$(grep -c '^  host ' "$O/fabric.txt")
# The fabric's parameters, as up printed them.
read -r LEAVES HPL SPINES HRATE FRATE QUEUE NICQ MTU < <(python3 - "$O/fabric.txt" << 'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"up: (\d+) leaves x (\d+) hosts, (\d+) spines; hosts at (\S+), "
              r"leaf-spine links at (\S+); switch queues (\d+) B, NIC queues (\d+) B, MTU (\d+)", t)
print(*m.groups())
PY
)
IPS=""
for ((r = 0; r < N; r++)); do IPS+="${IPS:+,}198.19.0.$((r + 1))"; done
params=(--bytes-per-rank "$BPR" --partition "$PART" --msg-size "$MSG"
  --window "$WINDOW" --warmup "$WARMUP" --iters "$ITERS" --seed "$SEED"
  --time-limit "$TLIMIT" --idle-timeout 5)
[ -n "$OUTPUTS" ] && params+=(--outputs "$OUTPUTS")
[ -n "$VERIFY" ] && params+=("$VERIFY")

# run_coll T: every rank of $WL over transport T; rank 0's JSON into
# $O/T.json, the spines' byte counts before and after into $O/T.spines.
run_coll() {
  local t=$1 r rc=0 p rp=() bport=$((18600 + RANDOM % 1000))
  NAME=$NAME "$FABRIC" spine-bytes > "$O/$t.spines"
  for ((r = 1; r < N; r++)); do
    ip netns exec "$NAME-h$r" timeout $((TLIMIT + 30)) "$COLL" --hosts "$IPS" \
      --rank $r --bind "198.19.0.$((r + 1))" --bootstrap-port $bport -t "$t" \
      "${params[@]}" "$WL" > "$O/$t.$r.out" 2> "$O/$t.$r.err" &
    rp+=($!)
    pids+=($!)
  done
  ip netns exec "$NAME-h0" timeout $((TLIMIT + 30)) "$COLL" --hosts "$IPS" \
    --rank 0 --bind 198.19.0.1 --bootstrap-port $bport -t "$t" --json \
    "${params[@]}" "$WL" > "$O/$t.json" 2> "$O/$t.0.err" || rc=$?
  for p in "${rp[@]}"; do
    wait "$p" || rc=$((rc ? rc : 1))
  done
  NAME=$NAME "$FABRIC" spine-bytes >> "$O/$t.spines"
  if [ $rc != 0 ]; then
    echo "leafspine-coll: $WL over $t failed (exit $rc):" >&2
    cat "$O/$t".*.err >&2
    return 1
  fi
}

failed=0
for t in "${TLIST[@]}"; do
  echo "running $WL over $t: $N ranks, $BPR per rank ..."
  run_coll "$t" || failed=1
done

# The twin: the same fabric and workload in netsim.  Rates in netsim's
# units; a veth hop's delay (a few microseconds) as the links' delay.
if [ $SIM = 1 ]; then
  python3 - "$O/twin.ini" "$WL" "$N" "$LEAVES" "$HPL" "$SPINES" "$HRATE" \
    "$FRATE" "$QUEUE" "$NICQ" "$MTU" "$BPR" "$PART" "$MSG" "$WINDOW" \
    "${OUTPUTS:-0}" "$SEED" << 'PY' || die "cannot write the netsim scenario"
import re, sys
(out, wl, n, leaves, hpl, spines, hrate, frate, queue, nicq, mtu, bpr, part,
 msg, window, outputs, seed) = sys.argv[1:]
n = int(n)
def size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    if not m:
        sys.exit("size %r: a number with K, M or G" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]
def rate(s):  # tc units (decimal) to netsim's
    m = re.fullmatch(r"([\d.]+)([kmg]?)bit", s)
    return m.group(1) + {"": "", "k": "K", "m": "M", "g": "G"}[m.group(2)]
def bps(s):
    m = re.fullmatch(r"([\d.]+)([kmg]?)bit", s)
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
B = size(bpr)
if wl == "shuffle":
    # srd-coll: output o on rank o mod N, each partition cut into one piece
    # per output: B / N to every other rank (what netsim's shuffle sends
    # per pair).
    work = "type = shuffle\nranks = %d\nbytes = %d\n" % (n, B // n)
elif wl == "incast":
    work = "type = incast\nsenders = %d\nreceiver = 0\nbytes = %d\n" % (n - 1, B)
else:
    work = "type = pairs\npairs = %s\nbytes = %d\n" % (
        ", ".join("%d>%d" % (i, (i + 1) % n) for i in range(n)), B)
# SRD as srd-coll runs it: 16 paths, packets as large as the route allows
# (xport_path_mtu: the MTU less IP, UDP and the largest srd header).  Its
# delay target scaled to the links as Swift scales it with the path: the
# engine's 25 us (a 100 Gb/s fabric's few packets) is under one packet's
# time at these rates, which would hold every window near one packet;
# four packets at the fabric rate instead.
srd_mtu = int(mtu) - 20 - 8 - 176
slowest = min(bps(hrate), bps(frate))
target_us = max(25, int(4 * int(mtu) * 8 / slowest * 1e6))
open(out, "w").write("""; the netsim twin of tools/leafspine-coll.sh's namespace fabric
[scenario]
name = leafspine-%s
transports = srd, tcp
duration = 60s
seed = %s

[topology]
type = leafspine
leaves = %s
hosts_per_leaf = %s
spines = %s
rate = %s
fabric_rate = %s
delay = 5us
queue = %s
nic_queue = %s

[transport.srd]
paths = 16
mtu = %d
target_qdelay = %dus

[workload]
%smessage = %d
window = %s
""" % (wl, seed, leaves, hpl, spines, rate(hrate), rate(frate), queue, nicq,
       srd_mtu, target_us, work, min(size(msg), B), window))
PY
  echo "running $WL in netsim (srd-sim run $O/twin.ini) ..."
  "$SIMBIN" run "$O/twin.ini" --json --quiet > "$O/sim.json" 2> "$O/sim.err" || {
    cat "$O/sim.err" >&2
    die "srd-sim failed on the twin scenario"
  }
fi

python3 - "$O" "$WL" "$N" "$SPINES" "${TLIST[*]}" "$SIM" << 'PY' | tee "$O/table.txt"
import json, os, sys
o, wl, n, spines, tlist, sim = sys.argv[1:]
n, spines = int(n), int(spines)
rows = []
def shares(path):
    try:
        a, b = [list(map(int, l.split())) for l in open(path)][:2]
    except (OSError, ValueError):
        return ""
    d = [y - x for x, y in zip(a, b)]
    t = sum(d) or 1
    return " ".join("%.2f" % (x / t) for x in d)
for t in tlist.split():
    f = os.path.join(o, t + ".json")
    try:
        d = json.load(open(f))
    except (OSError, ValueError):
        rows.append(("namespaces", "srd" if t == "udp" else "tcp", "failed", "", "", "", ""))
        continue
    rows.append(("namespaces", "srd" if t == "udp" else "tcp (kernel)",
                 "%.1f" % d["exchange_ms"]["median"],
                 "%.3f" % (d["gbps"]),
                 str(d["retransmits"]), "yes" if d["complete"] else "no",
                 shares(os.path.join(o, t + ".spines"))))
if sim == "1":
    s = json.load(open(os.path.join(o, "sim.json")))
    for e in s["transports"]:
        share = e.get("path_share") or []
        rows.append(("netsim", e["name"] + (" (model)" if e["kind"] == "tcp" else ""),
                     "%.1f" % (e["fct_us"]["max"] / 1000.0),
                     "%.3f" % e["throughput_gbps"], str(e["retransmits"]),
                     "yes" if e["flows_done"] == e["flows"] else
                     "%d/%d flows" % (e["flows_done"], e["flows"]),
                     " ".join("%.2f" % x for x in share)))
hdr = ("where", "transport", "time ms", "Gbit/s", "retrans", "complete",
       "spine shares")
w = [max(len(r[i]) for r in rows + [hdr]) for i in range(len(hdr))]
print("%s on %d hosts: exchange time (namespaces: median of the measured "
      "iterations; netsim: the last flow's completion), global goodput, "
      "retransmissions, each spine's share of the cross-leaf bytes" % (wl, n))
for r in [hdr] + rows:
    print("  ".join(c.ljust(w[i]) if i < 2 else c.rjust(w[i])
                    for i, c in enumerate(r)).rstrip())
PY
[ -n "$ODIR" ] && echo "leafspine-coll: everything is in $O"
exit $failed
