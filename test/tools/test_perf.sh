#!/bin/bash
# Description: srd-perf end to end on loopback: bw, lat and rate over srd
# and tcp with the JSON keys the docs promise, a bounded -a sweep, CSV,
# byte-exact exactly-once delivery under impairments (--verify), server
# and client as separate processes, a server that vanishes mid-run (exit
# 1, clear message), an unreachable server, a peer that answers garbage,
# Ctrl-C (a summary, exit 130), bad usage (exit 2), and corruption with
# late duplicates (dropped by the engine, never delivered).
#
# Processes this script starts are ended by PID; every run is bounded by
# srd-perf's own --time-limit and by timeout(1).
set -u
. "$(dirname "$0")/tool_lib.sh"
OUT=${OUT:-build}
BIN=$OUT/bin/srd-perf
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
if ! "$BIN" --help | grep -q "udp|tcp"; then fail "--help"; fi
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
# The sanitizer build is slower: smaller counts.
big=1; [ "${SAN:-0}" = 1 ] && big=0
n1m=$((big ? 300 : 40))
# A base port for this run, away from the ephemeral range's usual start.
port=$((21000 + (RANDOM % 4000) * 8))

check_json() { # file test transport size iterations
  python3 - "$@" <<'PY' || fail "JSON check of $2 over $3"
import json, sys
f, test, transport, size, iters = sys.argv[1:]
d = json.load(open(f))
for k in ["transport", "test", "size", "iterations", "mbps", "msg_rate",
          "lat_us", "retransmits", "paths", "burst", "path_share",
          "complete", "server"]:
    assert k in d, k
for k in ["p50", "p99", "p999", "max"]:
    assert k in d["lat_us"], k
assert d["transport"] == transport and d["test"] == test, d
assert d["size"] == int(size) and d["iterations"] == int(iters), d
assert d["complete"] is True and d["errors"] == 0, d
assert d["mbps"] > 0 and d["msg_rate"] > 0, d
assert 0 < d["lat_us"]["p50"] <= d["lat_us"]["p99"] <= d["lat_us"]["max"], d
if test != "lat":
    assert d["server"]["received"] == int(iters) + d["warmup"], d
print(f"  {transport} {test} {size} B: {d['gbps']:.2f} Gbit/s, "
      f"{d['msg_rate']:.0f} msg/s, p50 {d['lat_us']['p50']} us, "
      f"{d['retransmits']} retransmits")
PY
}

# --- bw, lat, rate over both transports, --json --------------------------
for t in udp tcp; do
  timeout 60 "$BIN" --loopback -t $t -T bw -s 1M -n $n1m --paths 4 --json \
    > "$tmp/bw.json" || fail "$t bw exited $?"
  check_json "$tmp/bw.json" bw $t 1048576 $n1m
  timeout 60 "$BIN" --loopback -t $t -T lat -s 64 -n 2000 --paths 4 --json \
    > "$tmp/lat.json" || fail "$t lat exited $?"
  check_json "$tmp/lat.json" lat $t 64 2000
  timeout 60 "$BIN" --loopback -t $t -T rate -n 20000 --paths 4 --json \
    > "$tmp/rate.json" || fail "$t rate exited $?"
  check_json "$tmp/rate.json" rate $t 64 20000
done
python3 - "$tmp/bw.json" <<'PY' || fail "tcp has one path"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["paths"] == 1 and d["path_share"] == [1.0], d
PY

# --- spraying: every path carries a share --------------------------------
timeout 60 "$BIN" --loopback -T bw -s 256K -n 200 --paths 8 --mtu 8192 --json \
  > "$tmp/spray.json" || fail "spray run"
python3 - "$tmp/spray.json" <<'PY' || fail "spraying"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["paths"] == 8 and len(d["path_share"]) == 8, d
# Every path carries packets, and most carry about their share.  A path
# that lost packets is avoided for up to 40 ms at a time, a good part of
# this short run: on a loaded machine one path fell to 2.9% (of 12.5%).
share = sorted(d["path_share"])
assert share[0] > 0.125 / 8 and share[4] > 0.75 / 8, d["path_share"]
assert d["avg_burst"] >= 1, d
PY

# --- the -a sweep: 8 B .. 8 MiB, bounded ---------------------------------
timeout 120 "$BIN" --loopback -a -n 3 -w 0 --paths 4 --time-limit 60 --json \
  > "$tmp/sweep.json" || fail "sweep exited $?"
python3 - "$tmp/sweep.json" <<'PY' || fail "sweep JSON"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["size"] for r in rows] == [8 << i for i in range(21)], rows
assert all(r["iterations"] == 3 and r["complete"] for r in rows), rows
print(f"  sweep: {len(rows)} sizes, 8 MiB at {rows[-1]['gbps']:.2f} Gbit/s")
PY

# --- CSV -----------------------------------------------------------------
timeout 60 "$BIN" --loopback -t tcp -T bw -s 64K -n 100 --csv > "$tmp/out.csv" \
  || fail "csv run"
head -1 "$tmp/out.csv" | grep -q "^transport,test,size,iterations,window,seconds,mbps,gbps,msg_rate,lat_p50_us" \
  || fail "csv header: $(head -1 "$tmp/out.csv")"
[ "$(wc -l < "$tmp/out.csv")" = 2 ] || fail "csv rows"
grep -q "^tcp,bw,65536,100," "$tmp/out.csv" || fail "csv row"

# --- kernel TCP's congestion control: --cc with -t tcp ------------------
# reno is always built in; an unknown name fails the run and says why.
timeout 60 "$BIN" --loopback -t tcp -T bw -s 64K -n 100 --cc reno > /dev/null \
  || fail "-t tcp --cc reno"
timeout 60 "$BIN" -t tcp --cc no-such-cc -T bw -s 64K -n 10 --time-limit 5 \
  127.0.0.1 > /dev/null 2> "$tmp/cc.err" && fail "-t tcp --cc no-such-cc ran"
grep -q "congestion control 'no-such-cc'" "$tmp/cc.err" \
  || fail "--cc no-such-cc: $(cat "$tmp/cc.err")"

# --- the table, with the burst shown -------------------------------------
timeout 60 "$BIN" --loopback -T bw -s 64K -n 100 --paths 4 --burst 8 > "$tmp/t.txt" \
  || fail "table run"
grep -q "burst 8" "$tmp/t.txt" || fail "burst not shown"
grep -qE "^ +65536 +100 " "$tmp/t.txt" || fail "table row"

# --- durations and rates with units: the same settings as bare numbers --
for args in "--delay 50 --jitter 2 --rate 0.8" \
  "--delay 0.05ms --jitter 2000ns --rate 800M --time-limit 20s"; do
  # shellcheck disable=SC2086
  timeout 60 "$BIN" --loopback -T lat -s 64 -n 50 --paths 2 $args > "$tmp/u.txt" \
    || fail "units run ($args) exited $?"
  grep -q "delay 50 us, jitter 2 us, rate 0.8 Gb/s" "$tmp/u.txt" \
    || fail "units ($args): $(grep impairments "$tmp/u.txt")"
done

# --- exactly once, intact, under loss, duplication and reordering --------
timeout 60 "$BIN" --loopback -T bw -s 40K -n 400 --paths 8 --mtu 4000 --verify \
  --loss 2 --dup 2 --reorder 5 --reorder-delay 100 --jitter 20 --seed 7 \
  --json > "$tmp/imp.json" || fail "impaired run exited $?"
python3 - "$tmp/imp.json" <<'PY' || fail "impaired exactly-once"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["server"]
assert d["verify"] and d["complete"], d
assert s["received"] == 400 + d["warmup"], s
assert s["duplicates"] == 0 and s["corrupted"] == 0 and s["errors"] == 0, s
assert d["impairments"]["lost"] > 0 and d["impairments"]["duplicated"] > 0, d
assert d["retransmits"] > 0, d
print(f"  impaired: {s['received']} intact once; lost "
      f"{d['impairments']['lost']}, duplicated "
      f"{d['impairments']['duplicated']}, {d['retransmits']} retransmits")
PY

# --- server and client as two processes (IPv4 and IPv6) ------------------
for fam in 4 6; do
  addr=127.0.0.1; [ $fam = 6 ] && addr=::1
  if [ $fam = 6 ] && ! python3 -c "import socket; s=socket.socket(socket.AF_INET6); s.bind(('::1',0))" 2>/dev/null; then
    echo "  no IPv6 loopback: IPv6 case skipped"; continue
  fi
  : > "$tmp/srv.err"  # before it starts: no earlier run's lines
  "$BIN" -s $addr -p $port --paths 4 --once 2> "$tmp/srv.err" & pids+=($!)
  wait_for "$tmp/srv.err" "listening" || fail "server did not start: $(cat "$tmp/srv.err")"
  timeout 60 "$BIN" $addr -p $port --paths 4 -T bw -s 128K -n 200 --verify --json \
    > "$tmp/cs.json" || fail "client (IPv$fam) exited $?"
  wait "${pids[-1]}" || fail "server exit status"
  python3 -c "import json,sys; d=json.load(open('$tmp/cs.json')); assert d['server']['received'] == 200 + d['warmup'], d" \
    || fail "two-process run (IPv$fam)"
  port=$((port + 8))
done

# --- clients restarted on the same ports: every one is served -------------
# Each new client is a new incarnation on the old one's ports, often while
# the server still waits for its last session's BYE_OK to be acknowledged;
# every other one has 4 of its 16 paths blackholed.  The server must hand
# the peer to the new incarnation (not remove it, not drop it as a stale
# handshake), and the ports must be free the moment a client exits.
: > "$tmp/srv.err"  # before it starts: no earlier run's lines
"$BIN" -s 127.0.0.1 -p $port --paths 4 2> "$tmp/srv.err" & spid=$!; pids+=($spid)
wait_for "$tmp/srv.err" "listening" || fail "server did not start"
lport=$((port + 100))
for i in 1 2 3 4 5 6 7 8; do
  bh=""; [ $((i % 2)) = 0 ] && bh="--blackhole 2,6,10,14"
  timeout 60 "$BIN" 127.0.0.1 -p $port --paths 16 --local-port $lport -T bw \
    -s 64K -n 100 --verify $bh --json > "$tmp/re.json" 2> "$tmp/re.err" \
    || fail "restarted client $i (${bh:-no blackhole}) exited $?: $(cat "$tmp/re.err")"
  python3 -c "import json; d=json.load(open('$tmp/re.json')); assert d['server']['received'] == 100 + d['warmup'] and d['server']['duplicates'] == 0 and d['server']['corrupted'] == 0, d" \
    || fail "restarted client $i: not every message arrived intact once"
done
echo "  8 clients restarted on ports $lport-$((lport + 15)): all served"
# A script looping bw, lat and rate with new clients (new ports) each
# time: each is served at once, also while the server still waits for the
# previous client's BYE_OK to be acknowledged (it said goodbye: the next
# one need not wait for that).
for t in bw lat rate bw lat rate; do
  timeout 60 "$BIN" 127.0.0.1 -p $port --paths 4 -T $t -s 4K -n 50 --json \
    > "$tmp/loop.json" 2> "$tmp/loop.err" || fail "looped $t client exited $?: $(cat "$tmp/loop.err")"
  grep -q "busy" "$tmp/loop.err" && fail "looped $t client: $(cat "$tmp/loop.err")"
done
echo "  6 clients in a row (bw, lat, rate twice): all served"
kill $spid; wait $spid 2>/dev/null
port=$((port + 8))

# --- the server vanishes mid-run: error completions, exit 1 --------------
: > "$tmp/srv.err"  # before it starts: no earlier run's lines
"$BIN" -s 127.0.0.1 -p $port --paths 4 2> "$tmp/srv.err" & spid=$!; pids+=($spid)
wait_for "$tmp/srv.err" "listening" || fail "server did not start"
# The server dies once the client's capture shows the stream under way
# (at the header alone a slow machine may not have sent a message yet,
# and the client then fails on a control reply, not a send).
: > "$tmp/v.out"; : > "$tmp/v.err"  # before it starts: no earlier run's lines
timeout 60 "$BIN" 127.0.0.1 -p $port --paths 4 -T bw -s 64K -D 30 -w 0 --time-limit 40 \
  --pcap "$tmp/v.pcap" > "$tmp/v.out" 2> "$tmp/v.err" & cpid=$!; pids+=($cpid)
wait_for "$tmp/v.out" "size" || fail "client did not start: $(cat "$tmp/v.err")"
for ((i = 0; i < 600; i++)); do
  [ "$(stat -c %s "$tmp/v.pcap" 2> /dev/null || echo 0)" -gt 262144 ] && break
  sleep 0.05
done
kill -9 $spid
wait $spid 2>/dev/null
wait $cpid; rc=$?
[ $rc = 1 ] || fail "vanished server: client exit $rc, expected 1: $(cat "$tmp/v.err")"
grep -q "peer vanished" "$tmp/v.err" || fail "vanished server: no message: $(cat "$tmp/v.err")"
grep -q "retry budget" "$tmp/v.err" || fail "vanished server: error not named"
grep -qE "^ +65536 " "$tmp/v.out" || fail "vanished server: no partial row"
port=$((port + 8))

# --- nobody there --------------------------------------------------------
timeout 30 "$BIN" 127.0.0.1 -p $port --paths 4 -n 10 > /dev/null 2> "$tmp/u.err"
rc=$?
[ $rc = 1 ] || fail "unreachable: exit $rc"
grep -q "unreachable" "$tmp/u.err" || fail "unreachable: $(cat "$tmp/u.err")"
timeout 30 "$BIN" -t tcp 127.0.0.1 -p $port -n 10 > /dev/null 2> "$tmp/u.err"
[ $? = 1 ] || fail "tcp refused: exit"
grep -q "refused" "$tmp/u.err" || fail "tcp refused: $(cat "$tmp/u.err")"

# --- a peer that answers garbage (a UDP echo service; an HTTP server) ----
# http_400 PORT: an HTTP server (in the background) that answers its one
# connection with a 400, for up to 20 s.
http_400() {
  python3 - "$1" <<'PY' & pids+=($!)
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4); s.settimeout(20)
try:
    c, a = s.accept(); c.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n"); time.sleep(3)
except socket.timeout:
    pass
PY
}

python3 - $port <<'PY' & pids+=($!)
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.2)
end = time.time() + 20
while time.time() < end:
    try:
        d, a = s.recvfrom(70000)
        s.sendto(d, a)
    except socket.timeout:
        pass
PY
http_400 $((port + 1))
# Wait (bounded) for both to listen.
for ((i = 0; i < 100; i++)); do
  python3 -c "import socket; s=socket.socket(); s.settimeout(0.2); s.connect(('127.0.0.1', $((port + 1))))" 2>/dev/null && break
  sleep 0.05
done
timeout 30 "$BIN" 127.0.0.1 -p $port --paths 4 -n 10 > /dev/null 2> "$tmp/g.err"
[ $? = 1 ] || fail "udp echo peer: exit"
grep -q "not an srd-perf server" "$tmp/g.err" || fail "udp echo peer: $(cat "$tmp/g.err")"
# (the connect probe above used the HTTP server's one accept; start another)
http_400 $((port + 2))
for ((i = 0; i < 100; i++)); do
  ss -ltn 2>/dev/null | grep -q ":$((port + 2)) " && break
  sleep 0.05
done
timeout 30 "$BIN" -t tcp 127.0.0.1 -p $((port + 2)) -n 10 > /dev/null 2> "$tmp/g.err"
[ $? = 1 ] || fail "tcp garbage peer: exit"
grep -q "answered garbage" "$tmp/g.err" || fail "tcp garbage peer: $(cat "$tmp/g.err")"
port=$((port + 8))

# --- Ctrl-C: a summary and exit 130 --------------------------------------
: > "$tmp/srv.err"  # before it starts: no earlier run's lines
"$BIN" -s 127.0.0.1 -p $port --paths 4 --once 2> "$tmp/srv.err" & spid=$!; pids+=($spid)
wait_for "$tmp/srv.err" "listening" || fail "server did not start"
# No warm-up, and the signal once the client's capture shows the stream
# under way (a fixed delay, or the header alone, can come before the
# first message on a loaded machine).
: > "$tmp/c.out"; : > "$tmp/c.err"  # before it starts: no earlier run's lines
timeout 60 "$BIN" 127.0.0.1 -p $port --paths 4 -T bw -s 64K -D 30 -w 0 --time-limit 40 \
  --pcap "$tmp/c.pcap" > "$tmp/c.out" 2> "$tmp/c.err" & cpid=$!; pids+=($cpid)
wait_for "$tmp/c.out" "size" || fail "client did not start"
for ((i = 0; i < 600; i++)); do
  [ "$(stat -c %s "$tmp/c.pcap" 2> /dev/null || echo 0)" -gt 262144 ] && break
  sleep 0.05
done
kill -INT $cpid
wait $cpid; rc=$?
[ $rc = 130 ] || fail "Ctrl-C: exit $rc: $(cat "$tmp/c.err")"
grep -q "stopped early: interrupted" "$tmp/c.out" || fail "Ctrl-C: no summary row"
grep -qE "^ +65536 +[1-9]" "$tmp/c.out" || fail "Ctrl-C: no measurement"
# The client said goodbye, so the --once server ends promptly by itself.
for ((i = 0; i < 100; i++)); do kill -0 $spid 2>/dev/null || break; sleep 0.05; done
kill -0 $spid 2>/dev/null && fail "server still running after the client's BYE"
wait $spid || fail "server exit status after BYE"

# --- bad usage -----------------------------------------------------------
bad() {
  "$BIN" "$@" > /dev/null 2> "$tmp/err"
  local rc=$?
  [ $rc = 2 ] || fail "'$*' exited $rc, expected 2"
  grep -q "srd-perf:" "$tmp/err" || fail "'$*' printed no message"
}
bad
bad --loopback -t srd
bad --loopback -t quic
bad --loopback -T bandwidth
bad --loopback -s 4
bad --loopback -s 12X
bad --loopback --paths 0
bad --loopback --paths 65
bad --loopback -P 0
bad --loopback -P 129
bad -s -P 4
bad --loopback -R --bidir
bad --loopback -T lat -R
bad --loopback -T lat --bidir
bad -s -R
bad --loopback --burst 0
bad --loopback -a -s 1M
bad --loopback -t tcp --loss 1
bad --loopback --loss 101
bad --loopback --blackhole 64
bad --loopback --json --csv
bad -s --loopback
bad --loopback stray
bad --bogus
bad --loopback -t tcp --corrupt 1
bad --loopback --corrupt 101
bad --loopback --dup-delay -5
# Refused since srd-perf reads its values with libsrdtool (tool_parse.h):
# empty list items, a blank before a number, a negative CPU.
bad --loopback --blackhole 1,,2
bad --loopback --impair-paths 3,
bad --loopback --loss " 5"
bad --loopback --cpu -1
bad --loopback --delay 5x
bad --loopback -D 1h
bad --loopback --rate 2T

# --- corruption and late duplicates: dropped, never delivered ------------
# Both ends flip one bit in 2% of what they send and send 2% twice, the
# copy 500 us late (past the retransmission floor the test sets).  Every
# message must still arrive once and intact, and the server's engine must
# have dropped what the client corrupted as corrupt.  (Over UDP there is
# no exact count to match: the kernel can drop datagrams too, and the
# server counts from START to RESULT while the client's counters cover
# the measured run.)  Last in this script: on an engine without a CRC it
# fails, with the corrupted deliveries in the message.
timeout 60 "$BIN" --loopback -T bw -s 40K -n 200 --paths 4 --mtu 4000 --verify \
  --corrupt 2 --dup 2 --dup-delay 500 --rto-min 200 --seed 7 \
  --time-limit 40 --json > "$tmp/cor.json" 2> "$tmp/cor.err"
rc=$?
python3 - "$tmp/cor.json" <<'PY' || fail "corruption: $(cat "$tmp/cor.err")"
import json, sys
d = json.load(open(sys.argv[1]))
s, imp, dr = d["server"], d["impairments"], d["drops"]
corrupt = lambda side: sum(v for k, v in dr[side].items() if k.startswith("corrupt"))
print(f"  corruption: {imp['corrupted']} datagrams corrupted, "
      f"{imp['dup_delayed']} duplicates late; server dropped "
      f"{corrupt('server')} as corrupt; {s['received']} received, "
      f"{s['corrupted']} corrupted, {s['duplicates']} duplicates")
assert imp["corrupted"] > 0 and imp["dup_delayed"] > 0, imp
assert d["complete"] and s["received"] == 200 + d["warmup"], d
assert s["duplicates"] == 0 and s["corrupted"] == 0 and s["errors"] == 0, s
assert corrupt("server") > 0, dr
PY
[ $rc = 0 ] || fail "corruption run exited $rc: $(cat "$tmp/cor.err")"

# --- --pcap: the datagrams as they crossed the wire ------------------------
# Every frame is SRD (the dissector finds it on any port by its header
# CRC), with good IP/UDP and header checksums; every message the server
# counted is in the capture, from the client's 16 ports to the server's
# base port; IPv6 too.  -t tcp refuses --pcap (exit 2), and a file that
# cannot be created is named (exit 1).
LUA=tools/wireshark/srd.lua
if command -v tshark > /dev/null; then
  timeout 60 "$BIN" --loopback -T bw -s 64K -n 100 --seed 3 --pcap "$tmp/p.pcap" \
    --pcap-snaplen 0 --json > "$tmp/p.json" 2> "$tmp/p.err" || fail "--pcap run: $(cat "$tmp/p.err")"
  grep -q "^srd-perf: wrote [0-9]* packets to $tmp/p.pcap$" "$tmp/p.err" || fail "--pcap: $(cat "$tmp/p.err")"
  timeout 60 "$BIN" --loopback -6 -T lat -n 50 --pcap "$tmp/p6.pcap" \
    --json > "$tmp/p6.json" 2> "$tmp/p6.err" || fail "--pcap -6 run: $(cat "$tmp/p6.err")"
  for f in p p6; do
    # The heuristic first: a random loopback port that another dissector
    # owns (37008 is TZSP's) would otherwise decode as that protocol.
    tshark -X "lua_script:$LUA" -r "$tmp/$f.pcap" -o udp.check_checksum:TRUE \
      -o udp.try_heuristic_first:TRUE -T fields \
      -e frame.protocols -e udp.srcport -e udp.dstport -e srd.type -e srd.hcrc.status \
      -e srd.pcrc.status -e udp.checksum.status -e srd.msg_id -e srd.msg_len \
      > "$tmp/$f.txt" 2> /dev/null || fail "tshark on $f.pcap"
  done
  python3 - "$tmp" <<'PY' || fail "--pcap capture"
import json, sys
tmp = sys.argv[1]
for name, fam in [("p", "ip"), ("p6", "ipv6")]:
    d = json.load(open(f"{tmp}/{name}.json"))
    rows = [l.rstrip("\n").split("\t") for l in open(f"{tmp}/{name}.txt")]
    assert rows, name
    for r in rows:
        assert r[0].startswith(f"eth:ethertype:{fam}:udp:srd"), (name, r)
        assert r[4] == "1" and r[6] == "1" and r[5] in ("", "1"), (name, r)
    assert rows[0][3] == "3", rows[0]  # HS_REQ, to the server's base port
    srv = rows[0][2]
    out = [r for r in rows if r[2] == srv and r[3] == "1"]
    ports = {r[1] for r in out}
    if name == "p":
        msgs = {r[7] for r in out if r[8] == "65536"}
        assert len(msgs) == d["server"]["received"], (len(msgs), d["server"])
        assert len(ports) == 16, ports
    print(f"  --pcap ({fam}): {len(rows)} frames, all SRD with good checksums, "
          f"{len(out)} DATA from {len(ports)} client ports")
PY
else
  echo "  tshark missing: --pcap's capture not decoded"
fi
"$BIN" --loopback -t tcp --pcap "$tmp/t.pcap" > /dev/null 2> "$tmp/t.err"
rc=$?
[ $rc = 2 ] && grep -q "use tcpdump" "$tmp/t.err" || fail "-t tcp --pcap: exit $rc: $(cat "$tmp/t.err")"
"$BIN" --loopback -n 5 --pcap "$tmp/no/such/dir/x.pcap" > /dev/null 2> "$tmp/n.err"
rc=$?
[ $rc = 1 ] && grep -q "no/such/dir/x.pcap" "$tmp/n.err" || fail "unwritable --pcap: exit $rc: $(cat "$tmp/n.err")"

# A count within the window (all posted at once) is timed from its first
# post: it used to report 0 s and 0 MB/s.
for t in udp tcp; do
  "$BIN" --version | grep -q "transports:.*\b$t\b" || continue
  timeout 60 "$BIN" --loopback -t $t -T bw -s 64K -n 50 --json > "$tmp/w.json" ||
    fail "$t -n 50: exit $?"
  python3 -c "
import json; d = json.load(open('$tmp/w.json'))
assert d['window'] > 50 and d['iterations'] == 50, d
assert d['seconds'] > 0 and d['mbps'] > 0, d
" || fail "$t: -n 50 within a window of $(python3 -c "import json; print(json.load(open('$tmp/w.json'))['window'])") timed nothing"
done
echo "  bw -n 50 (within the window): timed from the first post, not 0 s"

echo "test_perf: all checks passed"
