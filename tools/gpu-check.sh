#!/bin/bash
# gpu-check.sh: on a machine with an NVIDIA GPU, build srd-perf with CUDA,
# run the CUDA tests on the real runtime, and measure -m cuda against
# -m host on loopback, over udp (this project's SRD) and tcp (the kernel),
# for 1 MiB and 100 MiB messages: GB/s each way and the staging share
# (the part of the device run's time that staging through pinned host
# buffers added: 1 - cuda/host).  One prepared script, because GPU time
# is scarce: issue 11, docs/transports.md "CUDA device memory".
#
#   tools/gpu-check.sh [-o DIR] [--no-build] [--quick] [--runtime LIB]
#
#   -o DIR         write gpu-check.txt (what it printed) and gpu-check.csv
#                  there [build/gpu-check]
#   --no-build     use the build/ there is (make tools tests otherwise)
#   --quick        small sizes and short runs (64 KiB, 1 MiB; 0.3 s each):
#                  the script's own test, test_gpu_check.sh
#   --runtime LIB  the CUDA runtime library to load (SRD_CUDART), e.g.
#                  the fake one, build/test/libfakecudart.so
#
# Exit status: 0 every check passed; 1 a check or build failed; 2 bad
# usage; 77 no CUDA device here (nothing to check; it says why).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
dir=$OUT/gpu-check
build=1 quick=0
while [ $# -gt 0 ]; do
  case "$1" in
  -o) [ $# -ge 2 ] || { echo "gpu-check: -o needs a directory" >&2; exit 2; }
      dir=$2; shift ;;
  --no-build) build=0 ;;
  --quick) quick=1 ;;
  --runtime) [ $# -ge 2 ] || { echo "gpu-check: --runtime needs a library" >&2; exit 2; }
      [ -f "$2" ] || { echo "gpu-check: no library $2" >&2; exit 2; }
      export SRD_CUDART=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift ;;
  -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "gpu-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$dir" || exit 1
log=$dir/gpu-check.txt
csv=$dir/gpu-check.csv
: > "$log"
say() { echo "$*" | tee -a "$log"; }
BIN=$OUT/bin/srd-perf

say "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs"
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi -L 2>&1 | sed 's/^/  /' | tee -a "$log"
  nvidia-smi --query-gpu=driver_version,pcie.link.gen.current,pcie.link.width.current \
    --format=csv,noheader 2>/dev/null | sed 's/^/  driver, PCIe gen, width: /' | tee -a "$log"
fi

# --- build ------------------------------------------------------------------
if [ $build = 1 ]; then
  # CUDA's headers: Debian's (/usr/include) or CUDA_HOME's or
  # /usr/local/cuda's; tools/configure.sh looks in that order.
  say "gpu-check: building (make -j$(nproc) tools tests)"
  if ! make -j"$(nproc)" tools tests > "$dir/build.log" 2>&1; then
    tail -n 20 "$dir/build.log" | tee -a "$log"
    say "gpu-check: FAIL: the build failed (its log: $dir/build.log); tools/install-deps.sh --cuda installs what it needs"
    exit 1
  fi
  grep "^build: without" "$dir/build.log" | sed 's/^/  /' | tee -a "$log"
fi
[ -x "$BIN" ] || { say "gpu-check: FAIL: no $BIN"; exit 1; }

# --- is there a device? -------------------------------------------------------
if ! "$BIN" --loopback -t tcp -m cuda -n 1 --time-limit 30 > "$dir/probe.out" 2> "$dir/probe.err"; then
  if grep -qE "no CUDA device|no CUDA runtime|no CUDA support" "$dir/probe.err"; then
    say "gpu-check: no CUDA device to check: $(head -1 "$dir/probe.err")"
    exit 77
  fi
  cat "$dir/probe.err" | tee -a "$log"
  say "gpu-check: FAIL: -m cuda does not run"
  exit 1
fi
say "gpu-check: $(grep -o 'cuda: [^;]*' "$dir/probe.out" | head -1)"

# --- the CUDA tests on this runtime ------------------------------------------
failed=0
run_test() { # NAME COMMAND...
  local name=$1 rc; shift
  "$@" > "$dir/$name.log" 2>&1; rc=$?
  case $rc in
  0) say "  PASS  $name" ;;
  77) say "  SKIP  $name: $(tail -n 1 "$dir/$name.log")" ;;
  *) say "  FAIL  $name (exit $rc): $dir/$name.log"; tail -n 15 "$dir/$name.log" | tee -a "$log"; failed=1 ;;
  esac
}
say "gpu-check: the CUDA tests"
run_test test_xport_stage "$OUT/test/test_xport_stage"
run_test test_perf_cuda env OUT="$OUT" test/tools/test_perf_cuda.sh

# --- -m cuda against -m host ---------------------------------------------------
if [ $quick = 1 ]; then
  sizes="64K 1M" dur=0.3
else
  sizes="1M 100M" dur=3
fi
transports=$("$BIN" --version | sed -n 's/.*transports: *//p')
echo "transport,size,host_gbytes_s,cuda_gbytes_s,staging_share,host_p50_us,cuda_p50_us" > "$csv"
say "gpu-check: bw on loopback, -D $dur s a point (GB/s = 10^9 bytes/s)"
say "$(printf '%-9s %10s %10s %10s %8s %12s %12s' transport size "host GB/s" "cuda GB/s" staging "host p50 us" "cuda p50 us")"
measure() { # TRANSPORT SIZE MEM -> "gbytes p50" or nothing
  "$BIN" --loopback -t "$1" -m "$3" -T bw -s "$2" -D "$dur" --max-size 128M \
    --time-limit 90 --json 2> "$dir/run.err" |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f %.1f" % (d["mbps"]/1e3, d["lat_us"]["p50"]))' 2>/dev/null
}
for t in $transports; do
  [ "$t" = fabric ] && continue # staged the same way; efa-check.sh is its check
  for s in $sizes; do
    h=$(measure "$t" "$s" host) c=$(measure "$t" "$s" cuda)
    if [ -z "$h" ] || [ -z "$c" ]; then
      say "  FAIL  $t $s: a run failed: $(tail -n 2 "$dir/run.err")"
      failed=1
      continue
    fi
    set -- $h $c
    share=$(python3 -c "print('%.2f' % max(0.0, 1 - $3 / $1) if $1 > 0 else 'nan')")
    say "$(printf '%-9s %10s %10s %10s %8s %12s %12s' "$t" "$s" "$1" "$3" "$share" "$2" "$4")"
    echo "$t,$s,$1,$3,$share,$2,$4" >> "$csv"
  done
done
say "gpu-check: the table as CSV: $csv; everything it printed: $log"
[ $failed = 0 ] && say "gpu-check: ok" || say "gpu-check: FAIL"
exit $failed
