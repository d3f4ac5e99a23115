#!/bin/bash
# Description: srd-perf behind firewalls (nftables, in network namespaces
# this script creates: 198.18.7.0/24): a server that lets in only its base
# port serves srd; a client behind a stateful firewall (only established
# flows back in) fails within -D's bound, exit 1, naming the ports whose
# answers it never got, where kernel TCP works; with the rule
# docs/transports.md gives (the server's ports in) srd works.  Exits 77
# (skip) with the reason where namespaces or nft are not available.
# Processes are ended by PID; every run is bounded by timeout(1).
set -u
OUT=${OUT:-build}
BIN=$(realpath "$OUT/bin/srd-perf")
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN" ] || fail "no $BIN"
command -v nft > /dev/null || skip "nft missing (tools/install-deps.sh installs nftables)"
[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
A=srdfwA$$ B=srdfwB$$
ip netns add $A 2> /dev/null || skip "cannot create network namespaces"
tmp=$(mktemp -d)
spid=""
cleanup() {
  [ -n "$spid" ] && { kill "$spid" && wait "$spid"; } 2> /dev/null
  ip netns del $A 2> /dev/null
  ip netns del $B 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add $B || fail "netns $B"
ip link add fa$$ netns $A type veth peer name fb$$ netns $B || fail "veth"
ip -n $A addr add 198.18.7.1/24 dev fa$$
ip -n $B addr add 198.18.7.2/24 dev fb$$
for n in $A $B; do ip -n $n link set lo up; done
ip -n $A link set fa$$ up
ip -n $B link set fb$$ up

# rules NS EXTRA: an input chain that drops all but loopback, established
# flows and EXTRA.
rules() {
  ip netns exec "$1" nft -f - << NFT || fail "nft in $1"
flush ruleset
table inet fw {
  chain input {
    type filter hook input priority 0; policy drop;
    iif lo accept
    ct state established,related accept
    $2
  }
}
NFT
}
server() { # server ARGS...: start one, wait until it listens
  : > "$tmp/srv.err"  # before it starts: no earlier run's lines
  ip netns exec $B "$BIN" -s 198.18.7.2 "$@" 2> "$tmp/srv.err" &
  spid=$!
  for ((i = 0; i < 200; i++)); do
    grep -q listening "$tmp/srv.err" && return 0
    sleep 0.05
  done
  fail "server did not start: $(cat "$tmp/srv.err")"
}
stop_server() { kill "$spid" && wait "$spid" 2> /dev/null; spid=""; }

# 1. The server lets in only UDP to its base port (and TCP to it): every
# peer sends there, so that is all it needs.
rules $B "udp dport 18515 accept
    tcp dport 18515 accept"
server
timeout 60 ip netns exec $A "$BIN" 198.18.7.2 -T bw -s 64K -D 1 --json > "$tmp/s.json" 2> "$tmp/s.err" ||
  fail "srd through the server's firewall: exit $?: $(cat "$tmp/s.err")"
python3 -c "import json; d=json.load(open('$tmp/s.json')); assert d['complete'] and d['iterations'] > 0, d" ||
  fail "srd through the server's firewall: nothing measured"
stop_server
echo "  server firewall with only UDP 18515 open: srd served"

# 2. A stateful firewall on the client: the server's answers come from
# its other ports, which no flow of the client's established.  srd fails
# within -D's bound (not the 60 s time limit), exit 1, and says so; TCP,
# whose answers are on the connection, works.
rules $B "udp dport 18515 accept
    tcp dport 18515 accept"
rules $A ""
server
start=$SECONDS
timeout 60 ip netns exec $A "$BIN" 198.18.7.2 -T bw -s 64K -D 2 > "$tmp/c.out" 2> "$tmp/c.err"
rc=$?
took=$((SECONDS - start))
[ $rc = 1 ] || fail "stateful client firewall: exit $rc, expected 1: $(cat "$tmp/c.err")"
[ $took -le 30 ] || fail "stateful client firewall: took $took s for -D 2"
grep -q "answers came from [0-9]* of the server's 16 ports" "$tmp/c.err" ||
  fail "stateful client firewall: no diagnosis: $(cat "$tmp/c.err")"
grep -q "18515-18530" "$tmp/c.err" || fail "the diagnosis names no ports: $(cat "$tmp/c.err")"
stop_server
server -t tcp
timeout 60 ip netns exec $A "$BIN" 198.18.7.2 -t tcp -T bw -s 64K -D 1 > /dev/null 2> "$tmp/t.err" ||
  fail "tcp through the stateful client firewall: $(cat "$tmp/t.err")"
stop_server
echo "  stateful client firewall: srd ends in $took s naming the ports; tcp works"

# 3. The client's rule docs/transports.md gives: the server's ports in.
rules $A "ip saddr 198.18.7.2 udp sport 18515-18530 accept"
server
timeout 60 ip netns exec $A "$BIN" 198.18.7.2 -T bw -s 64K -D 1 --json > "$tmp/o.json" 2> "$tmp/o.err" ||
  fail "srd with the documented client rule: exit $?: $(cat "$tmp/o.err")"
python3 -c "import json; d=json.load(open('$tmp/o.json')); assert d['complete'] and d['iterations'] > 0, d" ||
  fail "srd with the documented client rule: nothing measured"
stop_server
echo "  client rule 'udp sport 18515-18530 accept': srd works"
echo "test_firewall: all checks passed"
