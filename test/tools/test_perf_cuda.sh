#!/bin/bash
# Description: srd-perf -m cuda (messages in CUDA device memory, staged
# through pinned host buffers) end to end.  Without a GPU, -m cuda exits
# 1 with the reason ("no CUDA device", or no CUDA in this build) and
# nothing else runs; -m 8192 (the old -m, now --mtu) is bad usage (exit
# 2) naming --mtu.  Then, on the fake CUDA runtime (test/transports/
# fake_cudart.c, loaded as the real one would be, through SRD_CUDART),
# whose device memory faults on any host access but its own copies and
# whose copies run late: bw, lat and rate with --verify over every
# transport built in (every byte intact, exactly once, at the server),
# the 256-byte messages that share a control message's length, a sweep,
# the header and JSON naming the memory, and copies that fail ending the
# run with exit 1 naming the CUDA error, never a hang.  On a machine with
# a GPU the real runtime gets the same checks (tools/gpu-check.sh also
# measures it).  Exits 77 only when the build has no CUDA support.
#
# Every run is bounded by srd-perf's --time-limit and by timeout(1).
set -u
OUT=${OUT:-build}
BIN=$OUT/bin/srd-perf
FAKE=$PWD/$OUT/test/libfakecudart.so
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$BIN" ] || fail "no $BIN"
command -v python3 >/dev/null || { echo "skip: python3 missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- the old -m is --mtu now: bad usage, naming it --------------------------
"$BIN" --loopback -m 8192 -n 1 2> "$tmp/e"; rc=$?
[ $rc = 2 ] || fail "-m 8192: exit $rc, expected 2"
grep -q -- "--mtu 8192" "$tmp/e" || fail "-m 8192 does not name --mtu: $(cat "$tmp/e")"
"$BIN" --loopback -m gpu -n 1 2> "$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "unknown memory type 'gpu'" "$tmp/e" ||
  fail "-m gpu: exit $rc: $(cat "$tmp/e")"
"$BIN" --loopback --cuda-device 1 -n 1 2> "$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "needs -m cuda" "$tmp/e" || fail "--cuda-device alone: exit $rc"
echo "  -m 8192, -m gpu, --cuda-device without -m cuda: exit 2 with the reason"

# --- this machine's own CUDA ------------------------------------------------
gpu=0
env -u SRD_CUDART timeout 60 "$BIN" --loopback -m cuda -n 10 --time-limit 30 \
  > "$tmp/real.out" 2> "$tmp/real.err"; rc=$?
if [ $rc = 0 ]; then
  gpu=1
  echo "  a CUDA device is here: $(grep -o 'cuda: [^;]*' "$tmp/real.out" | head -1)"
else
  [ $rc = 1 ] || fail "-m cuda without a device: exit $rc, expected 1: $(cat "$tmp/real.err")"
  grep -qE "no CUDA device|no CUDA support|no CUDA runtime" "$tmp/real.err" ||
    fail "-m cuda without a device: no reason given: $(cat "$tmp/real.err")"
  echo "  no GPU here: '$(head -1 "$tmp/real.err")', exit 1"
fi
if grep -q "no CUDA support" "$tmp/real.err" 2>/dev/null; then
  echo "skip: this build has no CUDA support (tools/install-deps.sh --cuda, then make)"
  exit 77
fi

# --- every transport, on the fake runtime (and the real one with a GPU) ----
runtimes="fake"
[ $gpu = 1 ] && runtimes="fake real"
transports=$("$BIN" --version | sed -n 's/.*transports: *//p')
big=1; [ "${SAN:-0}" = 1 ] && big=0

check_json() { # FILE TEST SIZE COUNT
  python3 - "$@" << 'EOF' || exit 1
import json, sys
f, test, size, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = json.load(open(f))
rows = d if isinstance(d, list) else [d]
for r in rows:
    assert r["mem"] == "cuda", r
    assert r["test"] == test, r
    assert r["complete"] == 1, r
    s = r["server"]
    assert s["duplicates"] == 0 and s["corrupted"] == 0 and s["errors"] == 0, r
    if test != "lat" and size:
        assert s["received"] == count + r["warmup"], r
EOF
}

for rt in $runtimes; do
  if [ $rt = fake ]; then export SRD_CUDART=$FAKE; else unset SRD_CUDART; fi
  for t in $transports; do
    prov=()
    [ $t = fabric ] && prov=(--provider "tcp;ofi_rxm")
    n=$((big ? 200 : 40))
    timeout 120 "$BIN" --loopback -t $t "${prov[@]}" -m cuda -T bw -s 256K \
      -n $n --verify --json --time-limit 60 > "$tmp/bw.json" 2> "$tmp/err" ||
      fail "$rt $t bw -m cuda exited $?: $(cat "$tmp/err")"
    check_json "$tmp/bw.json" bw 262144 $n || fail "$rt $t bw: $(cat "$tmp/bw.json")"
    # 256 B: a control message's length, so a device buffer of that size is
    # read back to tell the two apart.
    timeout 120 "$BIN" --loopback -t $t "${prov[@]}" -m cuda -T rate -s 256 \
      -n $((n * 10)) --verify --json --time-limit 60 > "$tmp/rate.json" 2> "$tmp/err" ||
      fail "$rt $t rate -m cuda exited $?: $(cat "$tmp/err")"
    check_json "$tmp/rate.json" rate 256 $((n * 10)) || fail "$rt $t rate"
    timeout 120 "$BIN" --loopback -t $t "${prov[@]}" -m cuda -T lat -s 4K \
      -n $n --verify --json --time-limit 60 > "$tmp/lat.json" 2> "$tmp/err" ||
      fail "$rt $t lat -m cuda exited $?: $(cat "$tmp/err")"
    check_json "$tmp/lat.json" lat 4096 $n || fail "$rt $t lat"
    echo "  $rt runtime, -t $t: bw 256K, rate 256 B and lat 4K with --verify: intact, once each"
  done
  # The header says where messages live.
  timeout 60 "$BIN" --loopback -t tcp -m cuda -n 20 --time-limit 30 > "$tmp/h.out" 2>&1 ||
    fail "$rt header run"
  grep -q "CUDA device memory" "$tmp/h.out" && grep -q "staged through pinned host buffers" "$tmp/h.out" ||
    fail "$rt: the header does not name the memory: $(head -3 "$tmp/h.out")"
  # A sweep, timed, without --verify (device messages are not read back).
  timeout 120 "$BIN" --loopback -t tcp -m cuda -a -D 0.05 --json --time-limit 90 \
    > "$tmp/sweep.json" 2> "$tmp/err" || fail "$rt sweep exited $?: $(cat "$tmp/err")"
  python3 -c "
import json; d = json.load(open('$tmp/sweep.json'))
assert len(d) >= 20 and all(r['mem'] == 'cuda' and r['iterations'] > 0 for r in d), d
" || fail "$rt sweep"
  echo "  $rt runtime: the header names the memory; a timed sweep 8 B..8 MiB runs"
done

# --- fabric: device memory the provider takes (FI_HMEM), or staged ---------
# tcp;ofi_rxm has no FI_HMEM; shm offers it, and with no real CUDA behind
# libfabric its registration fails: both must fall back to staging and
# say so.  (A provider that registers device memory, efa on a GPU
# instance, is not here.)
if echo "$transports" | grep -qw fabric; then
  export SRD_CUDART=$FAKE
  for p in "tcp;ofi_rxm" shm; do
    "$BIN" --list-providers 2> /dev/null | grep -qxF "provider: $p" || continue
    timeout 60 "$BIN" --loopback -t fabric --provider "$p" -m cuda -T bw -s 64K -n 200 \
      --verify --time-limit 30 > "$tmp/f.out" 2> "$tmp/f.err" ||
      fail "fabric $p -m cuda exited $?: $(cat "$tmp/f.err")"
    if grep -q "FI_HMEM: device memory registered" "$tmp/f.out"; then
      echo "  fabric $p: device memory registered with the provider (FI_HMEM)"
    else
      grep -q "staged through pinned host buffers" "$tmp/f.out" ||
        fail "fabric $p: the header says neither FI_HMEM nor staged"
      grep -qE "takes no device memory|cannot register" "$tmp/f.err" ||
        fail "fabric $p: staged without saying why: $(cat "$tmp/f.err")"
      echo "  fabric $p: staged, and says why: '$(grep -m1 -E "takes no device|cannot register" "$tmp/f.err")'"
    fi
  done
fi

# --- copies that fail: exit 1 naming the error, never a hang ----------------
export SRD_CUDART=$FAKE
FAKE_CUDA_FAIL=0.02 timeout 60 "$BIN" --loopback -t tcp -m cuda -T bw -s 64K -n 500 \
  --time-limit 30 --idle-timeout 3 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 1 ] || fail "failing copies: exit $rc, expected 1: $(cat "$tmp/err")"
grep -q "cudaErrorIllegalAddress" "$tmp/err" ||
  fail "failing copies: the error is not named: $(cat "$tmp/err")"
echo "  2% of copies failing: exit 1, '$(grep -m1 cudaErrorIllegalAddress "$tmp/err")'"
[ $gpu = 1 ] || echo "  (no GPU here: the real runtime's runs are tools/gpu-check.sh's)"
echo "ok"
