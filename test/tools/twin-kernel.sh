#!/usr/bin/env bash
# twin-kernel.sh: the kernel's half of the TCP comparison in docs/netsim.md
# ("The TCP model against the kernel"); test/tools/twin-dumbbell.ini is
# srd-sim's.  One TCP flow for SECS seconds, namespaces tcpcc-a -> tcpcc-s
# -> tcpcc-b (198.18.200.0/24, 198.18.201.0/24), MTU 9000, one segment per
# skb (gso_max_segs 1, so a drop is one segment), tcpcc-s's egress ports
# shaped by tbf rate 1gbit burst 32kb latency 1ms (a 158 KB queue), and
# nftables dropping PCT% of data packets and APCT% of ACKs in tcpcc-s's
# forward hook.  Prints the goodput and the sender's nstat counters, and
# deletes the namespaces.  Needs root, gcc, iproute2, tc, nft, nstat.
#
#   Usage: twin-kernel.sh CC PCT [SECS [APCT]]     e.g. twin-kernel.sh cubic 5 10 5
set -euo pipefail
CC=$1 PCT=$2 SECS=${3:-10} APCT=${4:-0}
A=tcpcc-a S=tcpcc-s B=tcpcc-b
work=$(mktemp -d)
ns() { ip netns exec "$@"; }
down() { for n in $A $S $B; do ip netns del $n 2>/dev/null || true; done; }
trap 'down; rm -rf "$work"' EXIT
cat > "$work/bulk.c" <<'C'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv) {
  static char buf[1 << 20];
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(5001);
  inet_pton(AF_INET, argv[2], &a.sin_addr);
  if (!strcmp(argv[1], "s")) {
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;
    long long n = 0;
    ssize_t r;
    double t0 = 0, t1 = 0;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(l, (void *)&a, sizeof a) || listen(l, 1)) {
      perror("bind");
      return 1;
    }
    c = accept(l, 0, 0);
    while ((r = read(c, buf, sizeof buf)) > 0) {
      if (!n) t0 = now();
      n += r;
      t1 = now();
    }
    printf("goodput %.1f Mb/s (%lld bytes in %.3f s)\n",
           n * 8 / (t1 - t0) / 1e6, n, t1 - t0);
    return 0;
  }
  {
    double dur = atof(argv[3]), t0;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, argv[4], strlen(argv[4]))) {
      perror("TCP_CONGESTION");
      return 1;
    }
    if (connect(s, (void *)&a, sizeof a)) {
      perror("connect");
      return 1;
    }
    t0 = now();
    while (now() - t0 < dur && write(s, buf, sizeof buf) > 0) {
    }
    close(s);
  }
  return 0;
}
C
gcc -O2 -o "$work/bulk" "$work/bulk.c"
down
for n in $A $S $B; do ip netns add $n; ip -n $n link set lo up; done
ip link add a0 netns $A type veth peer name s0 netns $S
ip link add s1 netns $S type veth peer name b0 netns $B
ip -n $A addr add 198.18.200.1/24 dev a0
ip -n $S addr add 198.18.200.2/24 dev s0
ip -n $S addr add 198.18.201.1/24 dev s1
ip -n $B addr add 198.18.201.2/24 dev b0
for d in "$A a0" "$S s0" "$S s1" "$B b0"; do
  set -- $d
  ip -n "$1" link set "$2" mtu 9000 gso_max_segs 1 up
done
ip -n $A route add 198.18.201.0/24 via 198.18.200.2
ip -n $B route add 198.18.200.0/24 via 198.18.201.1
ns $S sysctl -qw net.ipv4.ip_forward=1
ns $S tc qdisc add dev s1 root tbf rate 1gbit burst 32kb latency 1ms
ns $S tc qdisc add dev s0 root tbf rate 1gbit burst 32kb latency 1ms
ns $S nft -f - <<NFT
table inet tcpccloss {
  chain f {
    type filter hook forward priority 0; policy accept;
    ip daddr 198.18.201.2 tcp dport 5001 numgen random mod 100 < $PCT counter drop
    ip daddr 198.18.200.1 tcp sport 5001 numgen random mod 100 < $APCT counter drop
  }
}
NFT
ns $B "$work/bulk" s 198.18.201.2 > "$work/srv.out" &
srv=$!
sleep 0.3
ns $A "$work/bulk" c 198.18.201.2 "$SECS" "$CC"
wait $srv
echo "$CC, data loss $PCT%, ACK loss $APCT%, $SECS s: $(cat "$work/srv.out")"
ns $A nstat -asz TcpRetransSegs TcpExtTCPTimeouts TcpExtTCPSackRecoveryFail \
  TcpExtTCPSackRecovery TcpExtTCPLossProbes TcpExtTCPLostRetransmit \
  TcpExtTCPSpuriousRTOs TcpExtTCPHystartTrainDetect | grep -v '^#'
