#!/bin/bash
# Description: srd-perf -t fabric end to end on loopback, on each of
# Debian's libfabric RDM providers (tcp;ofi_rxm, udp;ofi_rxd): bw, lat and
# rate with --verify (every message intact, exactly once, at the server)
# and the JSON keys test_perf.sh checks; the header names the provider,
# fabric and domain; --list-providers prints what fi_info would; a
# provider name nobody offers (--provider or FI_PROVIDER) is bad usage
# (exit 2) with a clear message; server and client as two processes (the
# address exchange over TCP on the server's port, IPv4 and IPv6); a server
# that vanishes mid-run ends the client with exit 1 and a message, on both
# providers.  Exits 77 (skip) with the reason when libfabric is not built
# in.
#
# Processes this script starts are ended by PID; every run is bounded by
# srd-perf's own --time-limit and by timeout(1).
set -u
. "$(dirname "$0")/tool_lib.sh"
OUT=${OUT:-build}
BIN=$OUT/bin/srd-perf
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || skip "python3 missing"
"$BIN" --version | grep -q "transports:.* fabric" ||
  skip "libfabric was not built in ($("$BIN" -t fabric --loopback 2>&1 | head -1))"
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do { kill -9 "$p" && wait "$p"; } 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
big=1; [ "${SAN:-0}" = 1 ] && big=0
n1m=$((big ? 100 : 20))
port=$((25000 + (RANDOM % 4000) * 8))

check_json() { # file test size iterations
  python3 - "$@" <<'PY' || fail "JSON check of $2 over $PROV"
import json, os, sys
f, test, size, iters = sys.argv[1:]
d = json.load(open(f))
for k in ["transport", "test", "size", "iterations", "mbps", "msg_rate",
          "lat_us", "complete", "server", "verify"]:
    assert k in d, k
assert d["transport"] == "fabric" and d["test"] == test, d
assert d["size"] == int(size) and d["iterations"] == int(iters), d
assert d["complete"] is True and d["errors"] == 0 and d["verify"], d
assert d["mbps"] > 0 and d["msg_rate"] > 0, d
assert 0 < d["lat_us"]["p50"] <= d["lat_us"]["p99"] <= d["lat_us"]["max"], d
s = d["server"]
assert s["duplicates"] == 0 and s["corrupted"] == 0 and s["errors"] == 0, s
if test != "lat":
    assert s["received"] == int(iters) + d["warmup"], d
print(f"  {os.environ['PROV']} {test} {size} B: {d['gbps']:.2f} Gbit/s, "
      f"{d['msg_rate']:.0f} msg/s, p50 {d['lat_us']['p50']} us")
PY
}

# --- --list-providers ------------------------------------------------------
"$BIN" --list-providers > "$tmp/list.txt" || fail "--list-providers exited $?"
for k in "provider: tcp;ofi_rxm" "type: FI_EP_RDM" "caps: FI_MSG FI_SOURCE" \
  "max_msg_size:" "inject_size:" "fabric: 127.0.0.1/32" "domain: lo" "order:"; do
  grep -qF "$k" "$tmp/list.txt" || fail "--list-providers lacks '$k'"
done
"$BIN" --list-providers --provider "udp;ofi_rxd" > "$tmp/list2.txt" ||
  fail "--list-providers --provider udp;ofi_rxd"
grep -q "^provider: " "$tmp/list2.txt" || fail "no udp;ofi_rxd listed"
grep "^provider: " "$tmp/list2.txt" | grep -qv "udp;ofi_rxd" &&
  fail "--provider did not filter the list"

# --- bad provider names: exit 2, a clear message ---------------------------
"$BIN" --loopback -t fabric --provider nosuch 2> "$tmp/bad.err"; rc=$?
[ $rc = 2 ] || fail "bad --provider: exit $rc, expected 2"
grep -q "unknown libfabric provider 'nosuch'" "$tmp/bad.err" ||
  fail "bad --provider: $(cat "$tmp/bad.err")"
grep -q "list-providers" "$tmp/bad.err" || fail "bad --provider: no hint"
FI_PROVIDER=nosuch "$BIN" --loopback -t fabric 2> "$tmp/bad.err"; rc=$?
[ $rc = 2 ] || fail "bad FI_PROVIDER: exit $rc, expected 2"
grep -q "'nosuch' (from FI_PROVIDER)" "$tmp/bad.err" ||
  fail "bad FI_PROVIDER: $(cat "$tmp/bad.err")"
"$BIN" --loopback -t tcp --provider "tcp;ofi_rxm" 2> "$tmp/bad.err"; rc=$?
[ $rc = 2 ] || fail "--provider without -t fabric: exit $rc"

# --- bw, lat, rate on each provider, --verify --json -----------------------
for PROV in "tcp;ofi_rxm" "udp;ofi_rxd"; do
  export PROV
  f=(-t fabric --provider "$PROV" --time-limit 50)
  timeout 60 "$BIN" --loopback "${f[@]}" -T bw -s 64K -n 200 > "$tmp/h.txt" ||
    fail "$PROV table run exited $?"
  head -2 "$tmp/h.txt" | grep -q "^srd-perf: fabric bw to 127.0.0.1:" ||
    fail "$PROV header: $(head -1 "$tmp/h.txt")"
  grep -qE "transport: libfabric 1\.[0-9]+ provider $PROV, fabric [^,]+, domain [^:]+: FI_EP_RDM FI_MSG, order (SAS|none)" \
    "$tmp/h.txt" || fail "$PROV header: $(sed -n 2p "$tmp/h.txt")"
  timeout 60 "$BIN" --loopback "${f[@]}" -T bw -s 1M -n $n1m --verify --json \
    > "$tmp/bw.json" || fail "$PROV bw exited $?"
  check_json "$tmp/bw.json" bw 1048576 $n1m
  timeout 60 "$BIN" --loopback "${f[@]}" -T lat -s 64 -n 2000 --verify --json \
    > "$tmp/lat.json" || fail "$PROV lat exited $?"
  check_json "$tmp/lat.json" lat 64 2000
  timeout 60 "$BIN" --loopback "${f[@]}" -T rate -n 20000 --verify --json \
    > "$tmp/rate.json" || fail "$PROV rate exited $?"
  check_json "$tmp/rate.json" rate 64 20000
done

# --- server and client as two processes (IPv4 and IPv6) --------------------
PROV="tcp;ofi_rxm"
for fam in 4 6; do
  addr=127.0.0.1; [ $fam = 6 ] && addr=::1
  if [ $fam = 6 ] && ! python3 -c "import socket; s=socket.socket(socket.AF_INET6); s.bind(('::1',0))" 2>/dev/null; then
    echo "  no IPv6 loopback: IPv6 case skipped"; continue
  fi
  : > "$tmp/srv.err"  # before it starts: no earlier run's lines
  "$BIN" -s $addr -p $port -t fabric --provider "$PROV" --once 2> "$tmp/srv.err" & pids+=($!)
  wait_for "$tmp/srv.err" "listening" || fail "server did not start: $(cat "$tmp/srv.err")"
  timeout 60 "$BIN" $addr -p $port -t fabric --provider "$PROV" -T bw -s 128K \
    -n 200 --verify --json > "$tmp/cs.json" || fail "client (IPv$fam) exited $?"
  wait "${pids[-1]}" || fail "server exit status"
  python3 -c "import json,sys; d=json.load(open('$tmp/cs.json')); assert d['server']['received'] == 200 + d['warmup'], d" \
    || fail "two-process run (IPv$fam)"
  echo "  two processes over IPv$fam: 200 messages intact once"
  port=$((port + 8))
done

# --- the server vanishes mid-run: exit 1 with a message, each provider -----
for PROV in "tcp;ofi_rxm" "udp;ofi_rxd"; do
  : > "$tmp/srv.err"  # before it starts: no earlier run's lines
  "$BIN" -s 127.0.0.1 -p $port -t fabric --provider "$PROV" 2> "$tmp/srv.err" &
  spid=$!; pids+=($spid)
  wait_for "$tmp/srv.err" "listening" || fail "server did not start"
  # A sweep prints a row per size: once the first is out, the run is
  # under way (the address exchange done, data flowing).
  : > "$tmp/v.out"; : > "$tmp/v.err"  # before it starts: no earlier run's lines
  timeout 60 "$BIN" 127.0.0.1 -p $port -t fabric --provider "$PROV" -T bw \
    -a -D 1 --time-limit 40 --idle-timeout 2 > "$tmp/v.out" 2> "$tmp/v.err" &
  cpid=$!; pids+=($cpid)
  wait_for "$tmp/v.out" "^ *8 " || fail "client did not start: $(cat "$tmp/v.err")"
  kill -9 $spid
  wait $spid 2>/dev/null
  wait $cpid; rc=$?
  [ $rc = 1 ] || fail "$PROV vanished server: client exit $rc, expected 1: $(cat "$tmp/v.err")"
  grep -qE "peer vanished|peer failed|fabric: send to peer" "$tmp/v.err" ||
    fail "$PROV vanished server: no message: $(cat "$tmp/v.err")"
  echo "  $PROV: a vanished server: exit 1, '$(grep -m1 -E "vanished|failed|send to" "$tmp/v.err")'"
  port=$((port + 8))
done
echo "ok"
