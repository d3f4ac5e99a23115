#!/bin/bash
# bench-transports.sh BINDIR: issue 4's ratios, measured side by side in
# one run on loopback: srd-perf -t udp against kernel TCP (srd-perf -t tcp,
# and iperf3 when installed), raw UDP (udp-baseline: sendmmsg/recvmmsg
# datagram rate, busy-polling ping-pong) and, when fi_pingpong is
# installed (Debian: libfabric-bin) and namespaces are allowed, libfabric's
# udp;ofi_rxd provider; when srd-perf has the fabric transport, srd-perf
# -t fabric on tcp;ofi_rxm and udp;ofi_rxd too (the same tool, the same
# tests, libfabric's RDM endpoints).  Each figure is the median of $REPS runs, the two
# sides of a ratio alternating so that both see the same machine.  A
# report, not a pass/fail test: it always exits 0 unless a tool is
# missing.  Every run is bounded by count and time.
set -u
BIN=${1:-build/bin}
REPS=${REPS:-5}
PERF=$BIN/srd-perf
UDP=$BIN/udp-baseline
for b in "$PERF" "$UDP"; do
  [ -x "$b" ] || { echo "bench-transports: no $b (make tools)"; exit 1; }
done
NICE=""
[ "$(id -u)" = 0 ] && NICE="nice -n -10"

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
  if (!NR) { print "nan"; exit } print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
jkey() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>/dev/null || echo nan; }
kv() { grep -oE "$1=[^ ]*" | head -1 | cut -d= -f2; }

perf() { timeout 60 $NICE "$PERF" --loopback "$@" --json 2>/dev/null; }

echo "bench-transports: loopback, $(nproc) CPUs, median of $REPS runs each"
echo

srd_bw=(); tcp_bw=(); srd_lat=(); udp_lat=(); srd_rate=(); udp_rate=(); udp_rate_gso=()
srd_bw_rtx=(); tcp_lat=()
rxm_bw=(); rxd_bw=(); rxm_lat=(); rxd_lat=()
fabric=0
"$PERF" --version 2>/dev/null | grep -q "transports:.* fabric" && fabric=1
for ((r = 0; r < REPS; r++)); do
  srd_bw+=("$(perf -t udp -T bw -s 1M -n 2000 | jkey "d['mbps']")")
  tcp_bw+=("$(perf -t tcp -T bw -s 1M -n 2000 | jkey "d['mbps']")")
  srd_lat+=("$(perf -t udp -T lat -s 64 -n 20000 --busy-poll | jkey "d['lat_us']['p50']")")
  udp_lat+=("$(timeout 30 $NICE "$UDP" pingpong -s 64 -n 20000 | kv rtt_p50_us)")
  tcp_lat+=("$(perf -t tcp -T lat -s 64 -n 20000 --busy-poll | jkey "d['lat_us']['p50']")")
  srd_rate+=("$(perf -t udp -T rate -s 64 -n 300000 | jkey "d['msg_rate']")")
  udp_rate+=("$(timeout 30 $NICE "$UDP" rate -s 64 -t 2 | kv rx_pps)")
  # Batching as srd has it (UDP GSO sends of 16, GRO receives).
  udp_rate_gso+=("$(timeout 30 $NICE "$UDP" rate -s 64 -t 2 --gso 16 | kv rx_pps)")
  if [ $fabric = 1 ]; then
    rxm_bw+=("$(perf -t fabric --provider "tcp;ofi_rxm" -T bw -s 1M -n 2000 | jkey "d['mbps']")")
    rxd_bw+=("$(perf -t fabric --provider "udp;ofi_rxd" -T bw -s 1M -n 200 | jkey "d['mbps']")")
    rxm_lat+=("$(perf -t fabric --provider "tcp;ofi_rxm" -T lat -s 64 -n 20000 --busy-poll | jkey "d['lat_us']['p50']")")
    rxd_lat+=("$(perf -t fabric --provider "udp;ofi_rxd" -T lat -s 64 -n 20000 --busy-poll | jkey "d['lat_us']['p50']")")
  fi
done

iperf=""
if command -v iperf3 >/dev/null; then
  port=$((40000 + RANDOM % 10000))
  $NICE iperf3 -s -1 -p $port -B 127.0.0.1 >/dev/null 2>&1 & ip=$!
  for ((i = 0; i < 50; i++)); do
    iperf3 -c 127.0.0.1 -p $port -t 3 -J 2>/dev/null > /tmp/bench-iperf.$$ && break
    sleep 0.1
  done
  iperf=$(python3 -c "import json; d=json.load(open('/tmp/bench-iperf.$$')); print(d['end']['sum_received']['bits_per_second'] / 8e6)" 2>/dev/null)
  rm -f /tmp/bench-iperf.$$
  { kill $ip && wait $ip; } 2>/dev/null
fi

# libfabric udp;ofi_rxd (fi_pingpong; MB/s there counts both directions of
# the ping-pong, as fi_pingpong prints it), in a private namespace with
# only lo: its providers otherwise bind the host's external address.
rxd=""
if command -v fi_pingpong >/dev/null && [ "$(id -u)" = 0 ]; then
  ns=srdbench$$
  if ip netns add $ns 2>/dev/null; then
    ip -n $ns link set lo up
    port=$((47000 + RANDOM % 1000))
    vals=()
    for ((r = 0; r < REPS; r++)); do
      timeout 60 ip netns exec $ns fi_pingpong -p "udp;ofi_rxd" -e rdm -S 1048576 \
        -I 100 -B $port > /dev/null 2>&1 & sp=$!
      sleep 0.7
      out=$(timeout 50 ip netns exec $ns fi_pingpong -p "udp;ofi_rxd" -e rdm \
        -S 1048576 -I 100 -P $port 127.0.0.1 2>/dev/null)
      wait $sp 2>/dev/null
      v=$(awk '/^bytes/ {getline; print $6}' <<<"$out" | tail -1)
      [ -n "$v" ] && vals+=("$v")
      port=$((port + 1))
    done
    ip netns del $ns
    [ ${#vals[@]} -gt 0 ] && rxd=$(median "${vals[@]}")
  fi
fi

SB=$(median "${srd_bw[@]}"); TB=$(median "${tcp_bw[@]}")
SL=$(median "${srd_lat[@]}"); UL=$(median "${udp_lat[@]}"); TL=$(median "${tcp_lat[@]}")
SR=$(median "${srd_rate[@]}"); UR=$(median "${udp_rate[@]}"); URG=$(median "${udp_rate_gso[@]}")
FMB=nan; FDB=nan; FML=nan; FDL=nan
if [ $fabric = 1 ]; then
  FMB=$(median "${rxm_bw[@]}"); FDB=$(median "${rxd_bw[@]}")
  FML=$(median "${rxm_lat[@]}"); FDL=$(median "${rxd_lat[@]}")
fi

python3 - "$SB" "$TB" "$SL" "$UL" "$TL" "$SR" "$UR" "${iperf:-nan}" "${rxd:-nan}" \
  "$FMB" "$FDB" "$FML" "$FDL" "$URG" \
  "${srd_bw[*]}" "${tcp_bw[*]}" "${srd_lat[*]}" "${udp_lat[*]}" "${srd_rate[*]}" "${udp_rate[*]}" \
  "${rxm_bw[*]}" "${rxd_bw[*]}" "${rxm_lat[*]}" "${rxd_lat[*]}" "${udp_rate_gso[*]}" <<'PY'
import math, sys
sb, tb, sl, ul, tl, sr, ur, ip, rxd, fmb, fdb, fml, fdl, urg = (
    float(x) for x in sys.argv[1:15])
runs = sys.argv[15:]
def row(what, a, an, b, bn, ratio, goal, ok):
    r = "n/a" if math.isnan(ratio) else f"{ratio:.2f}x"
    verdict = "" if math.isnan(ratio) or not goal else ("met" if ok else "NOT met")
    print(f"{what:<34} {an:>22} {a:>10.4g}  {bn:>24} {b:>10.4g}  {r:>7}  {goal:<10} {verdict}")
print(f"{'ratio':<34} {'srd-perf -t udp':>22} {'':>10}  {'against':>24} {'':>10}  {'':>7}  goal")
print("-" * 124)
row("1 MiB bw, MB/s", sb, "srd", tb, "kernel TCP (srd-perf)", sb / tb, ">= 1.0x", sb >= tb)
if not math.isnan(ip):
    row("1 MiB bw, MB/s (reference)", sb, "srd", ip, "kernel TCP (iperf3 1 str)", sb / ip, "(1.25x)", sb >= 1.25 * ip)
if not math.isnan(rxd):
    row("1 MiB, MB/s", sb, "srd bw", rxd, "udp;ofi_rxd fi_pingpong", sb / rxd, ">= 10x", sb >= 10 * rxd)
else:
    print(f"{'1 MiB vs libfabric udp;ofi_rxd':<34} skipped: fi_pingpong (libfabric-bin) not installed, or not root")
if not math.isnan(fdb):
    row("1 MiB bw, MB/s", sb, "srd", fdb, "-t fabric udp;ofi_rxd", sb / fdb, ">= 10x", sb >= 10 * fdb)
    row("1 MiB bw, MB/s", sb, "srd", fmb, "-t fabric tcp;ofi_rxm", sb / fmb, "(ref)", sb >= fmb)
else:
    print(f"{'srd-perf -t fabric':<34} skipped: libfabric not built in")
row("64 B lat, RTT p50 us, busy-poll", sl, "srd", ul, "raw UDP ping-pong", sl / ul, "<= 1.5x", sl <= 1.5 * ul)
row("64 B lat, RTT p50 us, busy-poll", sl, "srd", tl, "kernel TCP (srd-perf)", sl / tl, "(below)", sl < tl)
if not math.isnan(fdl):
    row("64 B lat, RTT p50 us, busy-poll", sl, "srd", fdl, "-t fabric udp;ofi_rxd", sl / fdl, "(ref)", sl <= fdl)
    row("64 B lat, RTT p50 us, busy-poll", sl, "srd", fml, "-t fabric tcp;ofi_rxm", sl / fml, "(ref)", sl <= fml)
row("64 B rate, messages/s", sr, "srd", urg, "raw UDP, GSO/GRO 16", sr / urg, ">= 0.8x", sr >= 0.8 * urg)
row("64 B rate, messages/s (reference)", sr, "srd", ur, "raw UDP, no GSO", sr / ur, "", True)
print()
print("runs: srd bw MB/s", runs[0], "| tcp bw MB/s", runs[1])
print("      srd lat us", runs[2], "| udp lat us", runs[3])
print("      srd rate msg/s", runs[4], "| udp rate pps", runs[5], "| with GSO/GRO", runs[10])
if runs[6].strip():
    print("      fabric bw MB/s: tcp;ofi_rxm", runs[6], "| udp;ofi_rxd", runs[7])
    print("      fabric lat us: tcp;ofi_rxm", runs[8], "| udp;ofi_rxd", runs[9])
PY
exit 0
