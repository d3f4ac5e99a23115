#!/bin/bash
# Description: a server that strangers cannot lock out (docs/transports.md,
# "Handshake floods").  In network namespaces this script creates (S the
# server, C a real client on 198.18.40.0/24, F a flooder on
# 198.18.41.0/24, forging sources in 198.18.42.0/23), F sends a bounded
# flood of well-formed handshake requests (test/tools/hs_flood.py: at most
# 2,000,000 and 40 s at 20,000 a second, ended by SIGTERM once the
# client is done; most from forged addresses through a raw socket, a
# quarter from 256 real UDP sockets) while C runs srd-perf against
# srd-perf -s on S.  Checks: the client's run completes; the server never
# held more peers than its one real client (its exit line); it answered
# the flood (stateless), and the answers to the flood's addresses are no
# more packets and no more bytes than the requests from them (nftables
# counters on S).  No timing threshold decides the outcome; the rate and
# the figures are printed.  Exits 77 (skip) with the reason where
# namespaces, nft or python3 are not available.  Processes are ended by
# PID; every run is bounded by timeout(1).
#
# The flood is paced below what the server can answer: a flood faster than
# that fills the server's socket buffer, and the kernel then drops the real
# client's packets with the flood's (a sanitizer build on a loaded machine
# answered too few of them for the client's handshake to finish in 5 s).
# That is a capacity limit, which no per-address state can fix; this test
# is about state (peer slots, memory, amplification), which a stateful
# server would exhaust within the first second at this rate.
set -u
OUT=${OUT:-build}
BIN=$(realpath "$OUT/bin/srd-perf")
FLOOD=$(realpath "$(dirname "$0")/hs_flood.py")
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 > /dev/null || skip "python3 missing"
command -v nft > /dev/null || skip "nft missing (tools/install-deps.sh installs nftables)"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
S=srdhsS$$ C=srdhsC$$ F=srdhsF$$
ip netns add $S 2> /dev/null || skip "cannot create network namespaces"
tmp=$(mktemp -d)
spid="" fpid=""
cleanup() {
  [ -n "$fpid" ] && { kill "$fpid" && wait "$fpid"; } 2> /dev/null
  [ -n "$spid" ] && { kill "$spid" && wait "$spid"; } 2> /dev/null
  ip netns del $S 2> /dev/null
  ip netns del $C 2> /dev/null
  ip netns del $F 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $C || fail "netns $C"
ip netns add $F || fail "netns $F"
ip link add hc$$ netns $S type veth peer name hc$$ netns $C || fail "veth"
ip link add hf$$ netns $S type veth peer name hf$$ netns $F || fail "veth"
ip -n $S addr add 198.18.40.2/24 dev hc$$
ip -n $C addr add 198.18.40.1/24 dev hc$$
ip -n $S addr add 198.18.41.1/24 dev hf$$
ip -n $F addr add 198.18.41.2/24 dev hf$$
for a in 10 11 12 13; do ip -n $F addr add 198.18.41.$a/24 dev hf$$; done
for n in $S $C $F; do
  ip -n $n link set lo up
  ip netns exec $n sysctl -qw net.ipv4.conf.all.rp_filter=0
  ip netns exec $n sysctl -qw net.ipv4.conf.default.rp_filter=0
done
ip -n $S link set hc$$ up
ip -n $S link set hf$$ up
ip -n $C link set hc$$ up
ip -n $F link set hf$$ up
ip netns exec $S sysctl -qw net.ipv4.conf.hf$$.rp_filter=0
# The forged sources are routed back to F (which drops the answers), the
# server's address is reached from F through S's other link.
ip -n $S route add 198.18.42.0/23 via 198.18.41.2
ip -n $F route add 198.18.40.0/24 via 198.18.41.1

# Counters of what the flood's addresses send the server's ports and get
# back from them (IP and UDP headers are the same size both ways).
ip netns exec $S nft -f - << 'NFT' || fail "nft in $S"
table inet hs {
  counter req {}
  counter resp {}
  chain in {
    type filter hook input priority 0; policy accept;
    ip saddr { 198.18.41.0/24, 198.18.42.0/23 } udp dport 18515-18530 counter name req
  }
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr { 198.18.41.0/24, 198.18.42.0/23 } udp sport 18515-18530 counter name resp
  }
}
NFT

ip netns exec $S "$BIN" -s 198.18.40.2 2> "$tmp/srv.err" &
spid=$!
for ((i = 0; i < 200; i++)); do
  grep -q listening "$tmp/srv.err" && break
  sleep 0.05
done
grep -q listening "$tmp/srv.err" || fail "server did not start: $(cat "$tmp/srv.err")"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$spid/status"; }
rss0=$(rss)

timeout 60 ip netns exec $F python3 "$FLOOD" 198.18.40.2 18515 2000000 40 20000 \
  198.18.42.0/23 198.18.41.10 198.18.41.11 198.18.41.12 198.18.41.13 \
  > "$tmp/flood.out" 2> "$tmp/flood.err" &
fpid=$!
sleep 1 # the flood is under way before the client starts
rssf=$(rss)
timeout 60 ip netns exec $C "$BIN" 198.18.40.2 -T bw -s 64K -D 2 --json \
  > "$tmp/c.json" 2> "$tmp/c.err"
crc=$?
rss1=$(rss)
kill -0 "$fpid" 2> /dev/null || fail "the flood ended before the client did: $(cat "$tmp/flood.out" "$tmp/flood.err")"
kill -TERM "$fpid" # timeout(1) passes it on; the flooder prints its count and exits 0
wait "$fpid"
frc=$?
fpid=""
[ $crc = 0 ] || fail "client under the flood: exit $crc: $(cat "$tmp/c.err")"
python3 -c "import json; d=json.load(open('$tmp/c.json')); assert d['complete'] and d['iterations'] > 0, d" ||
  fail "client under the flood: run not complete"
[ $frc = 0 ] || fail "flooder: exit $frc: $(cat "$tmp/flood.err")"
kill "$spid" && wait "$spid" 2> /dev/null
spid=""

read -r _ sent _ fbytes _ fsecs < "$tmp/flood.out"
line=$(grep "answered without state" "$tmp/srv.err") ||
  fail "no server summary: $(cat "$tmp/srv.err")"
answered=$(sed -E 's/.*: ([0-9]+) handshake requests.*/\1/' <<< "$line")
peers=$(sed -E 's/.*at most ([0-9]+) peers.*/\1/' <<< "$line")
ip netns exec $S nft -j list counters table inet hs > "$tmp/cnt.json" ||
  fail "nft list counters"
read -r qp qb rp rb < <(python3 -c "
import json
c = {o['counter']['name']: o['counter'] for o in json.load(open('$tmp/cnt.json'))['nftables'] if 'counter' in o}
print(c['req']['packets'], c['req']['bytes'], c['resp']['packets'], c['resp']['bytes'])")
mbps=$(python3 -c "import json; print(round(json.load(open('$tmp/c.json'))['mbps']))")
echo "  flood: $sent requests ($fbytes bytes of SRD) in $fsecs s, $(python3 -c "print(round($sent / $fsecs))")/s"
echo "  server: $answered answered statelessly, at most $peers peer(s) at once; RSS ${rss0} kB idle, ${rssf} kB after 1 s of flood alone, ${rss1} kB after the client's run"
echo "  wire at the server: in $qp packets $qb bytes from the flood's addresses, out $rp packets $rb bytes to them"
echo "  client under the flood: complete, $mbps Mb/s"
[ "$peers" -le 1 ] || fail "the flood took peer slots: at most $peers peers at once"
[ "$answered" -gt 0 ] && [ "$rp" -gt 0 ] || fail "the flood was not answered (answered $answered, out $rp)"
[ "$rp" -le "$qp" ] && [ "$rb" -le "$qb" ] ||
  fail "amplification: out $rp packets $rb bytes for in $qp packets $qb bytes"
echo "ok: the flood held no peer slot, the client completed, no amplification"
