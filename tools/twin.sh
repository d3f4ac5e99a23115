#!/bin/bash
# twin.sh: the twin check.  The same scenario on a real kernel fabric in
# network namespaces and in netsim (srd-sim), printed side by side:
#
#   tools/twin.sh [OPTION]... collision|loss|all
#
# collision: N long flows over N spines.  A leaf-spine of namespaces
#   (tools/leafspine.sh: 2 leaves of N hosts, the spines, kernel L4 ECMP,
#   every port shaped by tc tbf at --rate), one flow from host i of
#   leaf 0 to host i of leaf 1 for each i, all at once for --secs: SRD
#   (srd-perf -t udp, sprayed over 16 source ports) once, kernel TCP
#   (srd-perf -t tcp, one connection, so one spine) --trials times with
#   fresh connections (new source ports: a new ECMP draw each time).
#   netsim runs the same fabric and flows (srd-sim's leafspine, pairs =
#   leaves) at every seed of --seeds.  Printed: each flow's and the
#   aggregate throughput as a fraction of capacity, kernel against
#   netsim and their ratio; for TCP the mean over trials and seeds with
#   their range, and the same grouped by how many spines the hash used.
# loss: one TCP flow through a 1 Gb/s bottleneck with a 158 KB buffer,
#   MTU 9000, one segment per skb (gso_max_segs 1, so a drop is one
#   segment), nftables dropping PCT% of the data and of the ACKs, for
#   each congestion control of --ccs (the kernel's, given to the
#   connection by srd-perf --cc: TCP_CONGESTION) and each loss rate of
#   --losses; netsim's TCP model (cubic, reno) on a dumbbell of the same
#   rate, buffer and RTT, at every seed of --seeds.  Printed: goodput,
#   kernel against netsim (mean and range over seeds), the ratio, and
#   the RTOs each side counted.
#
# What the twin cannot match is in docs/netsim.md, "The twin: netsim
# against a kernel fabric".
#
# Options:
#   --secs S         each kernel run's length, and netsim's [5]
#   --trials N       collision: kernel TCP trials [3]
#   --loss-trials N  loss: kernel runs per point (mean and range) [1]
#   --seeds LIST     netsim's seeds: N, A-B, or a comma list of them [1-10]
#   --flows N        collision: flows = hosts per leaf = spines, 2..8 [4]
#   --rate R         collision: every link, tc units [250mbit: four
#                    flows at 1gbit need more CPU than two cores have for
#                    the namespaces' forwarding, and the kernel side then
#                    measures the CPU, not the fabric]
#   --queue BYTES    collision: every switch port's buffer [131072]
#   --losses LIST    loss: loss rates in percent, integers 0..50 [0,1,5]
#   --ccs LIST       loss: cubic, reno [cubic,reno]
#   -o DIR           keep everything here: every run's JSON, the scenario
#                    files, srd-sim's outputs, the tables (table.txt),
#                    twin.csv (one row per figure) and twin.json
#                    [a temporary folder, removed]
#   --bin DIR        the built tools [build/bin]
#   -h, --help       this text
#
# Needs root (network namespaces), iproute2, tc, nft and nstat (loss),
# python3.  Exit status: 0 when every run completed, 1 when one failed
# (its output is printed), 2 for bad usage, 77 when namespaces cannot
# be made here (the reason on one line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
FABRIC=$HERE/leafspine.sh
BIN=build/bin
SECS=5 TRIALS=3 LTRIALS=1 SEEDS=1-10 FLOWS=4 RATE=250mbit QUEUE=131072
LOSSES=0,1,5 CCS=cubic,reno ODIR="" WHAT=""
MTU=9000
PORT=18515

usage() {
  sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"
  exit "${1:-2}"
}
bad() { echo "twin: $*" >&2; echo "Try 'tools/twin.sh --help'." >&2; exit 2; }
die() { echo "twin: $*" >&2; exit 1; }
skip() { echo "twin: skipped: $*" >&2; exit 77; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage 0 ;;
    collision | loss | all)
      [ -z "$WHAT" ] || bad "one of collision, loss or all, not '$WHAT' and '$1'"
      WHAT=$1
      shift ;;
    --secs | --trials | --loss-trials | --seeds | --flows | --rate | --queue | \
      --losses | --ccs | -o | --bin)
      [ $# -ge 2 ] || bad "$1 needs a value"
      case $1 in
        --secs) SECS=$2 ;;
        --trials) TRIALS=$2 ;;
        --loss-trials) LTRIALS=$2 ;;
        --seeds) SEEDS=$2 ;;
        --flows) FLOWS=$2 ;;
        --rate) RATE=$2 ;;
        --queue) QUEUE=$2 ;;
        --losses) LOSSES=$2 ;;
        --ccs) CCS=$2 ;;
        -o) ODIR=$2 ;;
        --bin) BIN=$2 ;;
      esac
      shift 2 ;;
    *) bad "unknown argument '$1'" ;;
  esac
done
[ -n "$WHAT" ] || bad "no part (collision, loss or all)"
is_uint "$SECS" && [ "$SECS" -ge 1 ] && [ "$SECS" -le 600 ] ||
  bad "--secs '$SECS': whole seconds, 1 to 600"
is_uint "$TRIALS" && [ "$TRIALS" -ge 1 ] && [ "$TRIALS" -le 100 ] ||
  bad "--trials '$TRIALS': 1 to 100"
is_uint "$LTRIALS" && [ "$LTRIALS" -ge 1 ] && [ "$LTRIALS" -le 100 ] ||
  bad "--loss-trials '$LTRIALS': 1 to 100"
is_uint "$FLOWS" && [ "$FLOWS" -ge 2 ] && [ "$FLOWS" -le 8 ] ||
  bad "--flows '$FLOWS': 2 to 8"
[[ $RATE =~ ^[0-9]+(\.[0-9]+)?([kmg]bit)$ ]] ||
  bad "--rate '$RATE': a number and kbit, mbit or gbit (tc's units), e.g. 1gbit"
is_uint "$QUEUE" && [ "$QUEUE" -ge 16384 ] || bad "--queue '$QUEUE': bytes, at least 16384"
[[ $SEEDS =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
  bad "--seeds '$SEEDS': N, A-B, or a comma list of them (1-10, 1,5,9)"
IFS=, read -ra LLIST <<< "$LOSSES"
[ ${#LLIST[@]} -ge 1 ] || bad "--losses: no loss rate"
for p in "${LLIST[@]}"; do
  is_uint "$p" && [ "$p" -le 50 ] || bad "--losses: '$p' is not a whole percent 0..50"
done
IFS=, read -ra CLIST <<< "$CCS"
[ ${#CLIST[@]} -ge 1 ] || bad "--ccs: no congestion control"
for c in "${CLIST[@]}"; do
  case $c in cubic | reno) ;; *) bad "--ccs: '$c' is not cubic or reno" ;; esac
done
# The seeds, one per line (the list's ranges expanded, at most 1000).
SEEDLIST=$(tr , '\n' <<< "$SEEDS" | while IFS=- read -r a b; do
  [ $((10#${b:-$a} - 10#$a)) -le 1000 ] && seq "$((10#$a))" "$((10#${b:-$a}))"
done)
n=$(grep -c . <<< "$SEEDLIST")
if [ "$n" -lt 1 ] || [ "$n" -gt 1000 ] || grep -qx 0 <<< "$SEEDLIST"; then
  bad "--seeds '$SEEDS': 1 to 1000 seeds, each at least 1"
fi

PERF=$BIN/srd-perf
SIMBIN=$BIN/srd-sim
[ -x "$PERF" ] || die "no $PERF (run make first)"
[ -x "$SIMBIN" ] || die "no $SIMBIN (run make first)"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
need="ip tc python3 timeout"
[ "$WHAT" = collision ] || need+=" nft nstat"
for t in $need; do
  command -v "$t" > /dev/null || skip "$t is not installed (make deps)"
done

# Every namespace this run makes starts with $P: the collision fabric is
# $P-{h,l,s}<i> (tools/leafspine.sh --name $P), the loss dumbbell
# $P-a, $P-r, $P-b.
P=tw$(($$ % 100000))
err=$(ip netns add "$P-probe" 2>&1) || skip "cannot create network namespaces here: $err"
ip netns del "$P-probe"

if [ -n "$ODIR" ]; then
  mkdir -p "$ODIR" || die "cannot make $ODIR"
  O=$(cd "$ODIR" && pwd)
else
  O=$(mktemp -d) || die "mktemp failed"
fi
echo "twin: namespaces $P-*, results in ${ODIR:-a temporary folder}"
pids=()
dumbbell_down() {
  local n
  for n in "$P-a" "$P-r" "$P-b"; do ip netns del "$n" 2> /dev/null; done
  return 0
}
# reap PID...: end these processes (each a timeout(1) running srd-perf):
# SIGTERM, which timeout passes to srd-perf, then at most 2 s for them to
# go, then SIGKILL to what is left and its child.
reap() {
  local p i left
  for p in "$@"; do kill "$p" 2> /dev/null; done
  for ((i = 0; i < 20; i++)); do
    left=0
    for p in "$@"; do kill -0 "$p" 2> /dev/null && left=1; done
    [ $left = 0 ] && break
    sleep 0.1
  done
  for p in "$@"; do
    if kill -0 "$p" 2> /dev/null; then
      pkill -KILL -P "$p" 2> /dev/null
      kill -KILL "$p" 2> /dev/null
    fi
    wait "$p" 2> /dev/null
  done
  return 0
}
# cleanup runs on every exit; a second signal (timeout(1) signals its
# whole process group, a second Ctrl-C) must not cut it short.
cleanup() {
  trap '' INT TERM
  [ ${#pids[@]} = 0 ] || reap "${pids[@]}"
  NAME=$P "$FABRIC" down
  dumbbell_down
  [ -n "$ODIR" ] || rm -rf "$O"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ns() { ip netns exec "$@"; }

# serve NS ADDR LOG: an srd-perf server (udp and tcp on $PORT) in NS, in
# the background; returns once it listens on both (polled, at most 5 s).
serve() {
  local i
  ip netns exec "$1" timeout $((SECS * 2 * (TRIALS + LTRIALS) + 120)) "$PERF" -s "$2" \
    -p $PORT --max-size 8M > "$3" 2>&1 &
  pids+=($!)
  for ((i = 0; i < 100; i++)); do
    [ "$(grep -c 'server listening' "$3" 2> /dev/null)" = 2 ] && return 0
    kill -0 $! 2> /dev/null || break
    sleep 0.05
  done
  cat "$3" >&2
  die "the srd-perf server in $1 did not start"
}

# stop_servers: end every background process of this run (the servers;
# the clients have ended), SIGTERM and wait.
stop_servers() {
  [ ${#pids[@]} = 0 ] || reap "${pids[@]}"
  pids=()
}

# client NS DST OUT TRANSPORT [OPTION]...: one bounded bw run to DST (1 MiB
# messages, 8 in flight, as netsim's workloads here), in the background;
# its pid in $CLIENT (for finish) and in pids (for the cleanup).  Started
# from the script itself, not a subshell, so that the pid is
# timeout(1)'s (ip netns exec execs it), which passes a signal on.
client() {
  local n=$1 dst=$2 out=$3 t=$4
  shift 4
  ip netns exec "$n" timeout $((SECS + 60)) "$PERF" -t "$t" -p $PORT -D "$SECS" \
    -s 1M -W 8 -w 2 --time-limit $((SECS + 30)) --json "$@" "$dst" \
    > "$out" 2> "${out%.json}.err" &
  CLIENT=$!
  pids+=($!)
}

# finish PID: wait for the client PID and forget it (so that the cleanup
# never signals a pid that may have been reused); returns its status.
finish() {
  local p rc keep=()
  wait "$1"
  rc=$?
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=("${keep[@]}")
  return $rc
}

# spine_down: the bytes each spine has sent down to leaf 1 so far (the
# cross-leaf data; tc's counter of that port's tbf), one line.
spine_down() {
  local s out=""
  for ((s = 0; s < FLOWS; s++)); do
    out+="$(ns "$P-s$s" tc -s qdisc show dev l1 | awk '/Sent/ {print $2; exit}') "
  done
  echo "${out% }"
}

# -- collision -----------------------------------------------------------
# SRD's delay target, on both sides: four packets' time at the link rate
# (as tools/leafspine-coll.sh scales it), at least srd-perf's 200 us.  At
# 1 Gb/s and below a packet of 9000 bytes takes 72 us or more, so the
# engine's targets (25 us in netsim, 200 us in srd-perf) would hold every
# window near one packet.
TQ_US=$(awk -v r="$RATE" -v m=$MTU 'BEGIN {
  n = r + 0; u = substr(r, length(r) - 3, 1)
  n *= (u == "k") ? 1e3 : (u == "m") ? 1e6 : 1e9
  t = int(4 * m * 8 / n * 1e6); print (t > 200) ? t : 200 }')
collision_kernel() {
  local i j t trial rc=0 cp=()
  NAME=$P "$FABRIC" up --leaves 2 --hosts-per-leaf "$FLOWS" --spines "$FLOWS" \
    --host-rate "$RATE" --fabric-rate "$RATE" --queue "$QUEUE" --mtu $MTU \
    > "$O/fabric.txt" 2>&1
  rc=$?
  if [ $rc != 0 ]; then
    cat "$O/fabric.txt" >&2
    [ $rc = 77 ] && exit 77
    die "the namespace fabric did not come up"
  fi
  mkdir -p "$O/kernel"
  for ((i = 0; i < FLOWS; i++)); do
    j=$((FLOWS + i))
    serve "$P-h$j" "198.19.0.$((j + 1))" "$O/kernel/server$j.log"
  done
  # SRD with the delay target netsim's twin gets; TCP with CUBIC, the
  # model's (this kernel's default may be another, e.g. bbr).
  for t in udp tcp; do
    local n=1 xargs=(--target-qdelay "${TQ_US}us")
    [ $t = tcp ] && n=$TRIALS xargs=(--cc cubic)
    for ((trial = 1; trial <= n; trial++)); do
      echo "collision: $FLOWS flows over $t on the namespace fabric, trial $trial of $n, $SECS s ..."
      spine_down > "$O/kernel/$t.$trial.spines"
      cp=()
      for ((i = 0; i < FLOWS; i++)); do
        client "$P-h$i" "198.19.0.$((FLOWS + i + 1))" "$O/kernel/$t.$trial.$i.json" \
          $t --bind "198.19.0.$((i + 1))" "${xargs[@]}"
        cp+=("$CLIENT")
      done
      for ((i = 0; i < FLOWS; i++)); do
        if ! finish "${cp[$i]}"; then
          echo "twin: flow $i over $t (trial $trial) failed:" >&2
          cat "$O/kernel/$t.$trial.$i.err" >&2
          rc=1
        fi
      done
      spine_down >> "$O/kernel/$t.$trial.spines"
    done
  done
  stop_servers
  NAME=$P "$FABRIC" down
  return $rc
}

# The netsim twin: srd-sim's leafspine with the fabric's rates, queues
# and MTU; 5 us links (a veth hop and its softirq are a few
# microseconds); SRD as srd-perf runs it (16 paths, packets of the MTU
# less IP, UDP and the largest srd header, the delay target $TQ_US, a
# 5 ms RTO floor); TCP the model's Linux defaults.
collision_sim() {
  local s
  python3 - "$O/collision.ini" "$FLOWS" "$RATE" "$QUEUE" "$MTU" "$SECS" "$TQ_US" \
    << 'PY' ||
import re, sys
out, flows, rate, queue, mtu, secs, tq = sys.argv[1:]
m = re.fullmatch(r"([\d.]+)([kmg])bit", rate)
r = m.group(1) + m.group(2).upper()
open(out, "w").write("""; the netsim twin of tools/twin.sh collision's namespace fabric
[scenario]
name = twin-collision
transports = srd, tcp
duration = %ss
seed = 1

[topology]
type = leafspine
leaves = 2
hosts_per_leaf = %s
spines = %s
rate = %s
fabric_rate = %s
delay = 5us
queue = %s
nic_queue = 1048576

[transport.srd]
paths = 16
mtu = %d
target_qdelay = %sus
rto_min = 5ms

[workload]
; host i of leaf 0 sends to host i of leaf 1, for the whole run
type = pairs
pairs = leaves
message = 1M
window = 8
""" % (secs, flows, flows, r, r, queue, int(mtu) - 20 - 8 - 176, tq))
PY
    die "cannot write the netsim scenario"
  echo "collision: netsim, seeds $SEEDS ..."
  for s in $SEEDLIST; do
    nice -n 5 "$SIMBIN" run "$O/collision.ini" --seed "$s" -q -o "$O/sim/collision-s$s" \
      > /dev/null 2> "$O/sim/collision-s$s.err" || {
      cat "$O/sim/collision-s$s.err" >&2
      die "srd-sim failed on $O/collision.ini at seed $s"
    }
  done
}

# -- loss ----------------------------------------------------------------
# dumbbell_up PCT: $P-a -> $P-r -> $P-b (198.18.200.0/24, 198.18.201.0/24;
# the collision fabric uses 198.18.64+ and 198.18.128-159 and is gone by
# now), MTU 9000, gso_max_segs 1 everywhere, $P-r's two egress ports
# shaped by tbf rate 1gbit burst 32kb latency 1ms (a 158 KB queue), and
# nftables in $P-r's forward hook dropping PCT% of each direction.
dumbbell_up() {
  local pct=$1 d
  dumbbell_down
  for d in a r b; do
    ip netns add "$P-$d" || die "cannot add namespace $P-$d"
    ip -n "$P-$d" link set lo up
  done
  ip link add a0 netns "$P-a" type veth peer name r0 netns "$P-r" &&
    ip link add r1 netns "$P-r" type veth peer name b0 netns "$P-b" || die "veth"
  ip -n "$P-a" addr add 198.18.200.1/24 dev a0
  ip -n "$P-r" addr add 198.18.200.2/24 dev r0
  ip -n "$P-r" addr add 198.18.201.1/24 dev r1
  ip -n "$P-b" addr add 198.18.201.2/24 dev b0
  for d in "a a0" "r r0" "r r1" "b b0"; do
    set -- $d
    ip -n "$P-$1" link set "$2" mtu $MTU gso_max_segs 1 up || die "link $P-$1 $2"
  done
  ip -n "$P-a" route add 198.18.201.0/24 via 198.18.200.2 &&
    ip -n "$P-b" route add 198.18.200.0/24 via 198.18.201.1 || die "routes"
  ns "$P-r" sysctl -qw net.ipv4.ip_forward=1 || die "ip_forward in $P-r"
  for d in r0 r1; do
    ns "$P-r" tc qdisc add dev $d root tbf rate 1gbit burst 32kb latency 1ms ||
      die "tc tbf on $P-r $d"
  done
  ns "$P-r" nft -f - << NFT || die "nft in $P-r"
table inet twinloss {
  chain f {
    type filter hook forward priority 0; policy accept;
    ip daddr 198.18.201.2 tcp dport $PORT numgen random mod 100 < $pct counter drop
    ip daddr 198.18.200.1 tcp sport $PORT numgen random mod 100 < $pct counter drop
  }
}
NFT
}

loss_kernel() {
  local cc pct trial f rc=0
  mkdir -p "$O/kernel"
  for cc in "${CLIST[@]}"; do
    for pct in "${LLIST[@]}"; do
      for ((trial = 1; trial <= LTRIALS; trial++)); do
        f=$O/kernel/loss-$cc-$pct.$trial
        echo "loss: kernel $cc, $pct% loss, trial $trial of $LTRIALS, $SECS s ..."
        dumbbell_up "$pct"
        serve "$P-b" 198.18.201.2 "$f.server.log"
        client "$P-a" 198.18.201.2 "$f.json" tcp --cc "$cc"
        if ! finish "$CLIENT"; then
          echo "twin: the $cc flow at $pct% loss failed:" >&2
          cat "$f.err" >&2
          rc=1
        fi
        ns "$P-a" nstat -asz TcpRetransSegs TcpExtTCPTimeouts \
          TcpExtTCPSackRecoveryFail TcpExtTCPLossProbes | grep -v '^#' > "$f.nstat"
        stop_servers
        dumbbell_down
      done
    done
  done
  return $rc
}

# The netsim twin of the dumbbell: one path of 1 Gb/s with a 158 KB
# buffer (tbf's latency 1ms at 1 Gb/s plus its 32 KB burst), 4 us links
# (about the namespaces' 25 us idle RTT), MTU 9000, link_loss on the
# path (both directions, as the nftables rules), one bulk flow.
loss_sim() {
  local pts="" p tr=""
  for p in "${LLIST[@]}"; do
    if [ "$p" = 0 ]; then pts+="${pts:+,}path0:0"; else pts+="${pts:+,}path0:$p%"; fi
  done
  for c in "${CLIST[@]}"; do
    case $c in cubic) tr+="${tr:+, }tcp" ;; reno) tr+="${tr:+, }tcp-reno" ;; esac
  done
  cat > "$O/loss.ini" << INI
; the netsim twin of tools/twin.sh loss's namespace dumbbell
[scenario]
name = twin-loss
transports = $tr
duration = ${SECS}s
sweep = faults.link_loss=$pts

[topology]
type = dumbbell
paths = 1
rate = 10G
fabric_rate = 1G
delay = 4us
queue = 158K

[workload]
type = single
message = 1M
window = 8

[faults]
link_loss = path0:0

[transport.tcp-reno]
type = tcp
cc = reno
INI
  echo "loss: netsim, seeds $SEEDS ..."
  nice -n 5 "$SIMBIN" sweep "$O/loss.ini" --seeds "$SEEDS" -j 1 -q -o "$O/sim/loss" \
    > /dev/null 2> "$O/sim/loss.err" || {
    cat "$O/sim/loss.err" >&2
    die "srd-sim sweep failed on $O/loss.ini"
  }
}

failed=0
mkdir -p "$O/sim"
if [ "$WHAT" != loss ]; then
  collision_kernel || failed=1
  collision_sim
fi
if [ "$WHAT" != collision ]; then
  loss_kernel || failed=1
  loss_sim
fi

# The tables, twin.csv and twin.json.
python3 - "$O" "$WHAT" "$FLOWS" "$RATE" "$SECS" "$SEEDS" "$CCS" "$LOSSES" \
  << 'PY' | tee "$O/table.txt"
import csv, glob, json, os, re, sys
o, what, flows, rate, secs, seeds, ccs, losses = sys.argv[1:]
F, secs = int(flows), float(secs)
m = re.fullmatch(r"([\d.]+)([kmg])bit", rate)
rate_bps = float(m.group(1)) * {"k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
rows = []   # twin.csv: part, transport, item, side, n, mean, min, max
out = {"collision": None, "loss": None}
bad = []

def stat(v):
    return (sum(v) / len(v), min(v), max(v)) if v else None

def cell(v, fmt):
    s = stat(v)
    if s is None:
        return "-"
    if len(v) == 1 or s[1] == s[2]:
        return fmt % s[0]
    return (fmt + " (" + fmt + "-" + fmt + ")") % s

def ratio(k, n):
    if not k or not n or stat(n)[0] == 0:
        return "-"
    return "%.2f" % (stat(k)[0] / stat(n)[0])

def table(hdr, body, left=2):
    w = [max(len(r[i]) for r in body + [hdr]) for i in range(len(hdr))]
    for r in [hdr] + body:
        print("  ".join(c.ljust(w[i]) if i < left else c.rjust(w[i])
                        for i, c in enumerate(r)).rstrip())

def used(shares):
    return sum(1 for x in shares if x > 0.02)

def record(part, tr, item, side, v):
    s = stat(v)
    if s:
        rows.append((part, tr, item, side, len(v), "%.4f" % s[0], "%.4f" % s[1], "%.4f" % s[2]))

if what in ("collision", "all"):
    kern = {"srd": [], "tcp": []}   # per trial: (per-flow fractions, spines used)
    for t, name in (("udp", "srd"), ("tcp", "tcp")):
        for sp in sorted(glob.glob("%s/kernel/%s.*.spines" % (o, t))):
            trial = sp.split(".")[-2]
            fr = []
            for i in range(F):
                try:
                    d = json.load(open("%s/kernel/%s.%s.%d.json" % (o, t, trial, i)))
                    fr.append(d["gbps"] * 1e9 / rate_bps)
                except (OSError, ValueError, KeyError):
                    fr.append(None)
            try:
                a, b = [list(map(int, l.split())) for l in open(sp)][:2]
                dl = [y - x for x, y in zip(a, b)]
                k = used([x / (sum(dl) or 1) for x in dl])
            except (OSError, ValueError):
                k = None
            if None in fr:
                bad.append("kernel %s trial %s: a flow has no result" % (name, trial))
                continue
            kern[name].append((fr, k))
    sim = {"srd": [], "tcp": []}
    for d in sorted(glob.glob(o + "/sim/collision-s*/")):
        s = json.load(open(d + "summary.json"))
        share = {e["name"]: e.get("path_share") or [] for e in s["transports"]}
        fr = {"srd": [None] * F, "tcp": [None] * F}
        for r in csv.DictReader(open(d + "flows.csv")):
            if r["transport"] in fr:
                fr[r["transport"]][int(r["flow"])] = \
                    int(r["delivered_bytes"]) * 8 / (secs * rate_bps)
        for t in sim:
            sim[t].append((fr[t], used(share.get(t, []))))
    body = []
    res = {}
    for t in ("srd", "tcp"):
        for i in list(range(F)) + ["aggregate"]:
            def pick(runs):
                if i == "aggregate":
                    return [sum(f) / F for f, _ in runs]
                return [f[i] for f, _ in runs]
            kv, nv = pick(kern[t]), pick(sim[t])
            body.append((t, str(i), cell(kv, "%.3f"), cell(nv, "%.3f"), ratio(kv, nv)))
            record("collision", t, "flow %s" % i if i != "aggregate" else i, "kernel", kv)
            record("collision", t, "flow %s" % i if i != "aggregate" else i, "netsim", nv)
            res.setdefault(t, {})[str(i)] = {"kernel": kv, "netsim": nv}
    print("collision: %d flows, host i of leaf 0 -> host i of leaf 1, %d spines, "
          "every link %s, %g s; throughput as a fraction of capacity (a flow: its "
          "link; aggregate: %d links); kernel: %d srd run(s), %d tcp trial(s); "
          "netsim: seeds %s; mean (min-max); ratio kernel / netsim"
          % (F, F, rate, secs, F, len(kern["srd"]), len(kern["tcp"]), seeds))
    table(("transport", "flow", "kernel", "netsim", "ratio"), body)
    print()
    print("tcp by the spines ECMP used (the hash's draw set aside): aggregate "
          "fraction; ideal = spines used / %d" % F)
    body = []
    for k in range(1, F + 1):
        kv = [sum(f) / F for f, u in kern["tcp"] if u == k]
        nv = [sum(f) / F for f, u in sim["tcp"] if u == k]
        if kv or nv:
            body.append((str(k), str(len(kv)), cell(kv, "%.3f"), str(len(nv)),
                         cell(nv, "%.3f"), ratio(kv, nv), "%.3f" % (k / F)))
            record("collision", "tcp", "%d spines used" % k, "kernel", kv)
            record("collision", "tcp", "%d spines used" % k, "netsim", nv)
            res["tcp"]["spines_used_%d" % k] = {"kernel": kv, "netsim": nv}
    table(("spines used", "kernel trials", "kernel", "netsim seeds", "netsim",
           "ratio", "ideal"), body, left=1)
    out["collision"] = res
    if what == "all":
        print()

if what in ("loss", "all"):
    LL = losses.split(",")
    CL = ccs.split(",")
    simname = {"cubic": "tcp", "reno": "tcp-reno"}
    sv = {}
    for r in csv.DictReader(open(o + "/sim/loss/runs.csv")):
        sv.setdefault((r["point_idx"], r["transport"]), []).append(
            (float(r["throughput_gbps"]) * 1e3, float(r["timeouts"])))
    body = []
    res = {}
    for cc in CL:
        for pi, pct in enumerate(LL):
            kv, kr = [], []
            for f in sorted(glob.glob("%s/kernel/loss-%s-%s.*.json" % (o, cc, pct))):
                try:
                    kv.append(json.load(open(f))["gbps"] * 1e3)
                except (OSError, ValueError, KeyError):
                    bad.append("kernel %s at %s%%: no result in %s" % (cc, pct, f))
                    continue
                n = {}
                for l in open(f[:-5] + ".nstat"):
                    p = l.split()
                    if len(p) >= 2:
                        n[p[0]] = int(p[1])
                kr.append(n.get("TcpExtTCPTimeouts", 0))
            s = sv.get((str(pi), simname[cc]), [])
            nv, nr = [x for x, _ in s], [y for _, y in s]
            body.append((cc, pct + "%", cell(kv, "%.0f"), cell(nv, "%.0f"),
                         ratio(kv, nv), cell(kr, "%.1f"), cell(nr, "%.1f")))
            record("loss", cc, "%s%% goodput Mb/s" % pct, "kernel", kv)
            record("loss", cc, "%s%% goodput Mb/s" % pct, "netsim", nv)
            record("loss", cc, "%s%% RTOs" % pct, "kernel", kr)
            record("loss", cc, "%s%% RTOs" % pct, "netsim", nr)
            res.setdefault(cc, {})[pct] = {"kernel_mbps": kv, "netsim_mbps": nv,
                                           "kernel_rtos": kr, "netsim_rtos": nr}
    print("loss: one TCP flow, 1 Gb/s bottleneck, 158 KB buffer, MTU 9000, "
          "loss on data and ACKs, %g s; goodput in Mb/s, mean (min-max); "
          "netsim: seeds %s; ratio kernel / netsim" % (secs, seeds))
    table(("cc", "loss", "kernel", "netsim", "ratio", "kernel RTOs",
           "netsim RTOs"), body)
    out["loss"] = res

with open(o + "/twin.csv", "w") as f:
    f.write("part,transport,item,side,n,mean,min,max\n")
    for r in rows:
        f.write(",".join(map(str, r)) + "\n")
json.dump(out, open(o + "/twin.json", "w"), indent=1)
for b in bad:
    print("twin: " + b, file=sys.stderr)
PY
[ "${PIPESTATUS[0]}" = 0 ] || die "the results could not be read (see $O)"
[ -n "$ODIR" ] && echo "twin: everything is in $O"
exit $failed
