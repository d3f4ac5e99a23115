#!/bin/bash
# leafspine.sh: a leaf-spine ECMP fabric of real hosts in network
# namespaces, for srd-perf, srd-coll and kernel TCP between several hosts.
#
#   tools/leafspine.sh up [OPTION]...      build it (removes an old one first)
#   tools/leafspine.sh down [--name N]     remove every namespace it made
#   tools/leafspine.sh status [--name N]   hosts, addresses, queue counters
#   tools/leafspine.sh exec [--name N] HOST CMD...
#                                          run CMD on host HOST (0, 1, ...)
#   tools/leafspine.sh spine-bytes [--name N]
#                                          bytes each spine sent down, so far
#   tools/leafspine.sh loss SPINE PCT [--name N]
#                                          drop PCT% of what SPINE forwards
#                                          (100: a blackhole, 0: none)
#
# The fabric (the defaults: 2 leaves, 2 hosts a leaf, 4 spines):
#
#        spine0   spine1   spine2   spine3        every leaf to every spine,
#          | \  /   |  \  /  |   \  / |           FABRIC_RATE each way
#        leaf0 ------------------- leaf1          (kernel L4 multipath hash:
#        /    \                    /    \          fib_multipath_hash_policy=1)
#      h0      h1                h2      h3       HOST_RATE each way
#
# Each namespace is a node: $NAME-h<j> (hosts), $NAME-l<l> (leaves),
# $NAME-s<s> (spines).  Host j has the address 198.19.0.<j+1> and leaf
# 0 holds hosts 0..H-1, leaf 1 the next H, and so on.  A leaf forwards
# toward a host of another leaf over a multipath route across every
# spine, hashing the 5-tuple (so one TCP connection takes one spine, and
# srd's source ports spread its packets over all).  Every switch egress
# port (leaf to host, leaf to spine, spine to leaf) is shaped by tc tbf at
# its link's rate with a drop-tail queue of QUEUE bytes (the fabric's
# shallow switch buffers); a host's own egress is shaped at HOST_RATE
# with a NIC queue of NIC_QUEUE bytes.  Addresses are from 198.18.0.0/15
# only: links 198.18.<64+j>.0/24 (host j to its leaf) and
# 198.18.<128+16l+s>.0/24 (leaf l to spine s).
#
# Options of up (also from the environment, as NAME=... and so on):
#   --name N           namespace prefix [srdls]
#   --leaves N         leaves, 2..8 [2]
#   --hosts-per-leaf N hosts under each leaf, 1..8 [2]
#   --spines N         spines, 1..16 [4]
#   --host-rate R      host links, tc units (1gbit, 500mbit) [1gbit]
#   --fabric-rate R    leaf-spine links [500mbit: 2:1 oversubscribed with
#                      the defaults, so that the spines are the bottleneck]
#   --queue BYTES      switch port buffer, bytes [131072]
#   --nic-queue BYTES  a host's NIC queue, bytes [1048576]
#   --mtu N            every link's MTU [9000]
#
# Needs root, iproute2 and tc (and nft for `loss`).  Exit status: 0, 1 on
# failure, 2 for bad usage, 77 when namespaces cannot be made here (a
# container without CAP_NET_ADMIN), with the reason.
set -u

NAME=${NAME:-srdls}
LEAVES=${LEAVES:-2}
HOSTS_PER_LEAF=${HOSTS_PER_LEAF:-2}
SPINES=${SPINES:-4}
HOST_RATE=${HOST_RATE:-1gbit}
FABRIC_RATE=${FABRIC_RATE:-500mbit}
QUEUE=${QUEUE:-131072}
NIC_QUEUE=${NIC_QUEUE:-1048576}
MTU=${MTU:-9000}
# The token bucket: a little more than one jumbo frame.
BURST=${BURST:-16kb}

usage() {
  sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"
  exit "${1:-2}"
}
# die during up removes what up made so far.
UPPING=0
die() {
  echo "leafspine: $*" >&2
  [ $UPPING = 1 ] && down
  exit 1
}
bad() { echo "leafspine: $*" >&2; echo "Try 'tools/leafspine.sh --help'." >&2; exit 2; }
skip() { echo "leafspine: $*" >&2; exit 77; }
ns() { ip netns exec "$@"; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

host_ns() { echo "$NAME-h$1"; }
host_ip() { echo "198.19.0.$(($1 + 1))"; }
leaf_of() { echo $(($1 / HOSTS_PER_LEAF)); }
n_hosts() { echo $((LEAVES * HOSTS_PER_LEAF)); }

parse() {
  while [ $# -gt 0 ]; do
    case $1 in
      --help | -h) usage 0 ;;
      --name | --leaves | --hosts-per-leaf | --spines | --host-rate | \
        --fabric-rate | --queue | --nic-queue | --mtu)
        [ $# -ge 2 ] || bad "$1 needs a value"
        case $1 in
          --name) NAME=$2 ;;
          --leaves) LEAVES=$2 ;;
          --hosts-per-leaf) HOSTS_PER_LEAF=$2 ;;
          --spines) SPINES=$2 ;;
          --host-rate) HOST_RATE=$2 ;;
          --fabric-rate) FABRIC_RATE=$2 ;;
          --queue) QUEUE=$2 ;;
          --nic-queue) NIC_QUEUE=$2 ;;
          --mtu) MTU=$2 ;;
        esac
        shift 2 ;;
      *) bad "unknown option '$1'" ;;
    esac
  done
  [[ $NAME =~ ^[a-z][a-z0-9]{0,7}$ ]] ||
    bad "--name '$NAME': 1 to 8 lower-case letters and digits, a letter first"
  is_uint "$LEAVES" && [ "$LEAVES" -ge 2 ] && [ "$LEAVES" -le 8 ] ||
    bad "--leaves '$LEAVES': 2 to 8"
  is_uint "$HOSTS_PER_LEAF" && [ "$HOSTS_PER_LEAF" -ge 1 ] &&
    [ "$HOSTS_PER_LEAF" -le 8 ] || bad "--hosts-per-leaf '$HOSTS_PER_LEAF': 1 to 8"
  is_uint "$SPINES" && [ "$SPINES" -ge 1 ] && [ "$SPINES" -le 16 ] ||
    bad "--spines '$SPINES': 1 to 16"
  for r in "$HOST_RATE" "$FABRIC_RATE"; do
    [[ $r =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit)$ ]] ||
      bad "rate '$r': a number and kbit, mbit or gbit (tc's units), e.g. 1gbit"
  done
  is_uint "$QUEUE" && [ "$QUEUE" -ge 16384 ] || bad "--queue '$QUEUE': bytes, at least 16384"
  is_uint "$NIC_QUEUE" && [ "$NIC_QUEUE" -ge 16384 ] ||
    bad "--nic-queue '$NIC_QUEUE': bytes, at least 16384"
  is_uint "$MTU" && [ "$MTU" -ge 1280 ] && [ "$MTU" -le 9000 ] ||
    bad "--mtu '$MTU': 1280 to 9000"
}

mine() { ip netns list 2> /dev/null | awk '{print $1}' | grep -E "^$NAME-[hls][0-9]+$"; }

# discover: the sizes of the fabric named $NAME, from its namespaces.
discover() {
  local m
  m=$(mine)
  [ -n "$m" ] || die "no fabric named $NAME (tools/leafspine.sh up)"
  LEAVES=$(grep -c -- "^$NAME-l" <<< "$m")
  SPINES=$(grep -c -- "^$NAME-s" <<< "$m")
  HOSTS_PER_LEAF=$(($(grep -c -- "^$NAME-h" <<< "$m") / LEAVES))
}

down() {
  local n
  for n in $(mine); do
    ip netns del "$n" 2> /dev/null
  done
  return 0
}

# shape NS DEV RATE LIMIT: a tbf egress port.
shape() {
  ns "$1" tc qdisc add dev "$2" root tbf rate "$3" burst "$BURST" limit "$4" ||
    die "tc tbf on $1 $2 failed"
}

# node NS: a namespace with lo up and no reverse-path filter.
node() {
  ip netns add "$1" || die "cannot add namespace $1"
  ip -n "$1" link set lo up
  ns "$1" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0 net.ipv4.ip_forward=1 ||
    die "sysctl in $1"
}

# link NS1 DEV1 ADDR1 NS2 DEV2 ADDR2: a veth pair with /24 addresses.
link() {
  ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" ||
    die "veth $1:$2 - $4:$5"
  ip -n "$1" addr add "$3/24" dev "$2"
  ip -n "$4" addr add "$6/24" dev "$5"
  ip -n "$1" link set "$2" mtu "$MTU" up
  ip -n "$4" link set "$5" mtu "$MTU" up
}

up() {
  local j l s H err
  H=$(n_hosts)
  [ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
  for t in ip tc; do
    command -v $t > /dev/null || skip "$t is not installed (make deps)"
  done
  down
  err=$(ip netns add "$NAME-probe" 2>&1) ||
    skip "cannot create network namespaces here: $err"
  ip netns del "$NAME-probe"
  UPPING=1
  trap 'down; exit 1' INT TERM
  for ((l = 0; l < LEAVES; l++)); do
    node "$NAME-l$l"
    ns "$NAME-l$l" sysctl -qw net.ipv4.fib_multipath_hash_policy=1 ||
      die "no L4 multipath hashing here (net.ipv4.fib_multipath_hash_policy)"
  done
  for ((s = 0; s < SPINES; s++)); do
    node "$NAME-s$s"
  done
  for ((j = 0; j < H; j++)); do
    l=$(leaf_of $j)
    node "$NAME-h$j"
    ip -n "$NAME-h$j" addr add "$(host_ip $j)/32" dev lo
    link "$NAME-h$j" up0 "198.18.$((64 + j)).1" "$NAME-l$l" "h$j" "198.18.$((64 + j)).2"
    ip -n "$NAME-h$j" route add 198.19.0.0/24 via "198.18.$((64 + j)).2" \
      src "$(host_ip $j)" || die "route on host $j"
    ip -n "$NAME-l$l" route add "$(host_ip $j)/32" via "198.18.$((64 + j)).1" ||
      die "route to host $j"
    shape "$NAME-h$j" up0 "$HOST_RATE" "$NIC_QUEUE"
    shape "$NAME-l$l" "h$j" "$HOST_RATE" "$QUEUE"
  done
  for ((l = 0; l < LEAVES; l++)); do
    for ((s = 0; s < SPINES; s++)); do
      local sub=$((128 + 16 * l + s))
      link "$NAME-l$l" "s$s" "198.18.$sub.1" "$NAME-s$s" "l$l" "198.18.$sub.2"
      shape "$NAME-l$l" "s$s" "$FABRIC_RATE" "$QUEUE"
      shape "$NAME-s$s" "l$l" "$FABRIC_RATE" "$QUEUE"
    done
  done
  # Spines: each host through its leaf.  Leaves: hosts of other leaves
  # over every spine (one multipath route per host).
  for ((j = 0; j < H; j++)); do
    l=$(leaf_of $j)
    for ((s = 0; s < SPINES; s++)); do
      ip -n "$NAME-s$s" route add "$(host_ip $j)/32" \
        via "198.18.$((128 + 16 * l + s)).1" || die "route on spine $s"
    done
    local m nh
    for ((m = 0; m < LEAVES; m++)); do
      [ $m = "$l" ] && continue
      nh=""
      for ((s = 0; s < SPINES; s++)); do
        nh+=" nexthop via 198.18.$((128 + 16 * m + s)).2 dev s$s weight 1"
      done
      # shellcheck disable=SC2086
      ip -n "$NAME-l$m" route add "$(host_ip $j)/32" $nh ||
        die "multipath route on leaf $m"
    done
  done
  reach_check

  trap - INT TERM
  UPPING=0
  echo "leafspine: up: $LEAVES leaves x $HOSTS_PER_LEAF hosts, $SPINES spines;" \
    "hosts at $HOST_RATE, leaf-spine links at $FABRIC_RATE;" \
    "switch queues $QUEUE B, NIC queues $NIC_QUEUE B, MTU $MTU"
  for ((j = 0; j < H; j++)); do
    echo "  host $j: namespace $(host_ns $j), address $(host_ip $j), leaf $(leaf_of $j)"
  done
}

# reach_check: every host reaches host 0 and hears its answer, over UDP
# (python3; ping is not always installed): host 0 echoes, every other
# host sends a datagram every 50 ms until answered, for at most 3 s.
reach_check() {
  local j pid rc=0 port=$((20000 + RANDOM % 20000)) H
  H=$(n_hosts)
  command -v python3 > /dev/null || return 0
  ns "$NAME-h0" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.settimeout(0.2)
end = time.time() + 4
while time.time() < end:
    try:
        d, a = s.recvfrom(64)
        s.sendto(d, a)
    except socket.timeout:
        pass
' "$(host_ip 0)" $port &
  pid=$!
  for ((j = 1; j < H; j++)); do
    ns "$NAME-h$j" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.settimeout(0.05)
end = time.time() + 3
while time.time() < end:
    s.sendto(b"leafspine", (sys.argv[2], int(sys.argv[3])))
    try:
        if s.recv(64) == b"leafspine":
            sys.exit(0)
    except socket.timeout:
        pass
sys.exit(1)
' "$(host_ip $j)" "$(host_ip 0)" $port || { rc=1; break; }
  done
  kill "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  [ $rc = 0 ] || die "host $j and host 0 cannot reach each other"
}

# spine_bytes: one line, the bytes each spine has sent toward the leaves.
spine_bytes() {
  local s l b out=""
  for ((s = 0; s < SPINES; s++)); do
    b=0
    for ((l = 0; l < LEAVES; l++)); do
      b=$((b + $(ns "$NAME-s$s" tc -s qdisc show dev "l$l" |
        awk '/Sent/ {print $2; exit}')))
    done
    out+="$b "
  done
  echo "${out% }"
}

status() {
  local j s
  for j in $(mine | grep -- "-h" | sed "s/^$NAME-h//" | sort -n); do
    echo "host $j: $(host_ns "$j") $(host_ip "$j")"
  done
  for s in $(mine | grep -- "-s" | sed "s/^$NAME-s//" | sort -n); do
    echo "spine $s:"
    ns "$NAME-s$s" tc -s qdisc show | awk '/^qdisc/ {d=$5} /Sent/ {print "  " d ": " $0}'
  done
}

loss() {
  local s=$1 pct=$2 match
  is_uint "$s" && [ "$s" -lt "$SPINES" ] || bad "loss: no spine '$s'"
  is_uint "$pct" && [ "$pct" -le 100 ] || bad "loss: PCT '$pct': 0 to 100"
  command -v nft > /dev/null || skip "nft is not installed (make deps)"
  ns "$NAME-s$s" nft delete table inet leafspine 2> /dev/null
  [ "$pct" = 0 ] && return 0
  match="numgen random mod 100 < $pct"
  [ "$pct" = 100 ] && match=""
  ns "$NAME-s$s" nft -f - << EOF || die "nft on spine $s"
table inet leafspine {
  chain fwd {
    type filter hook forward priority 0; policy accept;
    $match counter drop
  }
}
EOF
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
  up) parse "$@"; up ;;
  down) parse "$@"; down ;;
  status) parse "$@"; discover; status ;;
  spine-bytes) parse "$@"; discover; spine_bytes ;;
  exec)
    if [ "${1:-}" = --name ]; then
      [ $# -ge 2 ] || bad "--name needs a value"
      NAME=$2
      shift 2
    fi
    [ $# -ge 2 ] || bad "exec HOST CMD..."
    is_uint "$1" || bad "exec: HOST is a host number, not '$1'"
    h=$1
    shift
    ip netns list | awk '{print $1}' | grep -qx "$(host_ns "$h")" ||
      die "no host $h in fabric $NAME"
    exec ip netns exec "$(host_ns "$h")" "$@" ;;
  loss) [ $# -ge 2 ] || bad "loss SPINE PCT"; s=$1 p=$2; shift 2; parse "$@"; discover; loss "$s" "$p" ;;
  -h | --help) usage 0 ;;
  "") bad "no command (up, down, status, exec, spine-bytes, loss)" ;;
  *) bad "unknown command '$cmd'" ;;
esac
