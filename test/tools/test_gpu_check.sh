#!/bin/bash
# Description: tools/gpu-check.sh, the one script a GPU machine runs,
# checked here so that it works the day a GPU is there: without a device
# it exits 77 saying why; with the fake CUDA runtime standing in
# (--runtime, test/transports/fake_cudart.c) and --quick it runs the CUDA
# tests and the host-against-cuda table end to end, exit 0, a CSV row per
# transport and size with both rates and the staging share; a bad option
# is exit 2.  Exits 77 when the build has no CUDA support.
set -u
OUT=${OUT:-build}
fail() { echo "FAIL: $*"; exit 1; }
FAKE=$OUT/test/libfakecudart.so
[ -f "$FAKE" ] || fail "no $FAKE"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if "$OUT/bin/srd-perf" --loopback -m cuda -n 1 2>&1 | grep -q "no CUDA support"; then
  echo "skip: this build has no CUDA support (tools/install-deps.sh --cuda, then make)"
  exit 77
fi

OUT=$OUT tools/gpu-check.sh --bogus > "$tmp/o" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "unknown option '--bogus'" "$tmp/o" || fail "--bogus: exit $rc: $(cat "$tmp/o")"

env -u SRD_CUDART OUT=$OUT tools/gpu-check.sh --no-build -o "$tmp/real" > "$tmp/o" 2>&1; rc=$?
if [ $rc = 77 ]; then
  grep -q "no CUDA device to check" "$tmp/o" || fail "no device: no reason: $(cat "$tmp/o")"
  echo "  no GPU here: exit 77, '$(grep -m1 'no CUDA device to check' "$tmp/o")'"
else
  [ $rc = 0 ] || fail "a GPU is here, and gpu-check failed: $(tail -n 20 "$tmp/o")"
  echo "  a GPU is here: gpu-check passed on it"
fi

OUT=$OUT tools/gpu-check.sh --no-build --quick --runtime "$FAKE" -o "$tmp/fake" > "$tmp/o" 2>&1; rc=$?
[ $rc = 0 ] || fail "gpu-check on the fake runtime: exit $rc: $(tail -n 25 "$tmp/o")"
grep -q "PASS  test_xport_stage" "$tmp/o" && grep -q "PASS  test_perf_cuda" "$tmp/o" ||
  fail "the CUDA tests did not pass: $(cat "$tmp/o")"
python3 - "$tmp/fake/gpu-check.csv" "$("$OUT/bin/srd-perf" --version | sed -n 's/.*transports: *//p')" << 'PY' || fail "the CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = {(t, s) for t in sys.argv[2].split() if t != "fabric" for s in ("64K", "1M")}
got = {(r["transport"], r["size"]) for r in rows}
assert got == want, (got, want)
for r in rows:
    h, c, share = float(r["host_gbytes_s"]), float(r["cuda_gbytes_s"]), float(r["staging_share"])
    assert h > 0 and c > 0, r
    assert abs(share - max(0.0, 1 - c / h)) < 0.006, r
PY
echo "  the fake runtime standing in: the CUDA tests pass, the table has every transport and size:"
sed -n '/bw on loopback/,/as CSV/p' "$tmp/o" | sed 's/^/    /'
echo "ok"
