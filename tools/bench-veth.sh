#!/bin/bash
# bench-veth.sh BINDIR: issue 12's real-link figures.  Two network
# namespaces joined by a veth, at MTU 1500 and 9001 (AWS's), and between
# them srd-perf -t udp against kernel TCP (srd-perf -t tcp) for 1 MiB
# bandwidth, both from one srd-perf server process, REPS alternating pairs
# per MTU so that both sides see the same machine; the medians, their
# ratio and srd's retransmissions (of which spurious: the server took the
# packet before).  A report, not a pass/fail test: exits 0 unless a tool
# is missing; needs root (says so and exits 0 without it).  Every run is
# bounded by -D and a timeout.  Last, 64 B busy-poll round trips, srd
# against kernel TCP, over the same veth.
set -u
BIN=${1:-build/bin}
REPS=${REPS:-5}
DUR=${DUR:-3}
SRD_ARGS=${SRD_ARGS:-} # extra srd-perf options for the srd side, e.g. --rto-min 1000
PERF=$BIN/srd-perf
[ -x "$PERF" ] || { echo "bench-veth: no $PERF (make tools)"; exit 1; }
if [ "$(id -u)" != 0 ]; then
  echo "bench-veth: skipped: network namespaces need root"; exit 0
fi
A=srdbvA$$ B=srdbvB$$ SP=""
cleanup() {
  [ -n "$SP" ] && { kill -INT "$SP"; wait "$SP"; } 2>/dev/null
  ip netns del $A 2>/dev/null; ip netns del $B 2>/dev/null
}
trap cleanup EXIT
if ! ip netns add $A 2>/dev/null || ! ip netns add $B 2>/dev/null; then
  echo "bench-veth: skipped: cannot create network namespaces here"; exit 0
fi
ip link add bva$$ type veth peer name bvb$$
ip link set bva$$ netns $A; ip link set bvb$$ netns $B
ip -n $A addr add 198.18.60.1/24 dev bva$$
ip -n $B addr add 198.18.60.2/24 dev bvb$$
for n in $A $B; do ip -n $n link set lo up; done
ip -n $A link set bva$$ up; ip -n $B link set bvb$$ up
ip netns exec $B "$PERF" -s 198.18.60.2 >/dev/null 2>&1 & SP=$!
for ((i = 0; i < 50; i++)); do
  ip netns exec $A timeout 5 "$PERF" -t tcp -T bw -s 64K -n 10 198.18.60.2 \
    >/dev/null 2>&1 && break
  sleep 0.1
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  if (!NR) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
run() { # run TRANSPORT: prints "MB/s retransmits duplicates-at-the-server"
  ip netns exec $A timeout $((DUR + 30)) "$PERF" -t "$1" -T bw -s 1M -D "$DUR" \
    $([ "$1" = udp ] && echo "$SRD_ARGS") --json 198.18.60.2 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    dr = (d.get("drops") or {}).get("server") or {}
    print(d["mbps"], d.get("retransmits", 0), dr.get("dup_pkt", 0) + dr.get("dup_msg", 0))
except Exception:
    print("nan 0 0")'
}

echo "bench-veth: two namespaces over a veth, $(nproc) CPUs, 1 MiB bw for ${DUR} s, median of $REPS pairs"
printf '%-6s %12s %12s %8s %10s %10s   %s\n' mtu "srd MB/s" "tcp MB/s" ratio "srd retx" "spurious" "goal: >= 1.0x, 0 retransmissions"
for mtu in 1500 9001; do
  ip -n $A link set bva$$ mtu $mtu; ip -n $B link set bvb$$ mtu $mtu
  s=(); t=(); rx=(); du=(); sr=(); tr=()
  for ((r = 0; r < REPS; r++)); do
    read -r v x d <<<"$(run udp)"; s+=("$v"); rx+=("$x"); du+=("$d"); sr+=("$v/$x")
    read -r v x d <<<"$(run tcp)"; t+=("$v"); tr+=("$v")
  done
  S=$(median "${s[@]}"); T=$(median "${t[@]}")
  printf '%-6s %12.1f %12.1f %7.2fx %10s %10s\n' $mtu "$S" "$T" \
    "$(awk -v a="$S" -v b="$T" 'BEGIN { print (b > 0) ? a / b : 0 }')" \
    "$(median "${rx[@]}")" "$(median "${du[@]}")"
  echo "   runs: srd MB/s/retransmits ${sr[*]} | tcp MB/s ${tr[*]}"
done

# 64 B busy-poll round trips over the same veth (MTU 9001 left set), srd
# against kernel TCP (srd-perf -t tcp, TCP_NODELAY): the p50 of each run.
lat() {
  ip netns exec $A timeout 40 "$PERF" -t "$1" -T lat -s 64 -n 20000 --busy-poll \
    --json 198.18.60.2 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["lat_us"]["p50"])
except Exception:
    print("nan")'
}
s=(); t=()
for ((r = 0; r < REPS; r++)); do s+=("$(lat udp)"); t+=("$(lat tcp)"); done
S=$(median "${s[@]}"); T=$(median "${t[@]}")
printf '64 B busy-poll RTT p50: srd %.2f us, kernel TCP %.2f us (%.2fx)\n' "$S" "$T" \
  "$(awk -v a="$S" -v b="$T" 'BEGIN { print (b > 0) ? a / b : 0 }')"
echo "   runs: srd ${s[*]} | tcp ${t[*]}"
exit 0
