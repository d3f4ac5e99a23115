#!/bin/bash
# Description: the docs cannot drift: every figure README.md and docs/
# quote with a marker (tools/figures.py) is what the code prints now
# (the sanitizer build skips the sources marked slow, which the plain
# build runs); and the checker itself fails on a doc that says something
# else, names the file, line and both values, and --update repairs it.
set -u
OUT=${OUT:-build}
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || { echo "python3 missing: skip"; exit 77; }
[ -x "$OUT/bin/srd-sim" ] || fail "no $OUT/bin/srd-sim"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fast=()
[ "${SAN:-0}" = 1 ] && fast=(--fast)

docs=(README.md docs/*.md)
n=$(cat "${docs[@]}" | grep -c '<!-- \(v\|figure\) ')
[ "$n" -ge 10 ] || fail "only $n figure markers in the docs"
python3 tools/figures.py --check --bin "$OUT/bin" "${fast[@]}" "${docs[@]}" \
  2> "$tmp/check.err" || { cat "$tmp/check.err"; fail "the docs differ from what the code prints (make figures)"; }
tail -1 "$tmp/check.err"

# The checker: a doc with a wrong value and a wrong block fails by name,
# --update repairs both, and a bad marker is exit 2.
cat > "$tmp/doc.md" <<'MD'
<!-- source s: srd-sim run scenarios/single-flow.ini --json -q -->
<!-- source t: srd-sim run scenarios/single-flow.ini --only tcp -q -->
SRD <!-- v s transports[name=srd].throughput_gbps {:.2f} -->99.99<!-- /v --> Gb/s,
<!-- v s transports[name=srd].throughput_gbps/transports[name=tcp].throughput_gbps {:.1f} -->1.0<!-- /v -->x TCP.
<!-- figure t lines 1,...,8-9 -->
```
stale
```
<!-- /figure -->
MD
python3 tools/figures.py --check --bin "$OUT/bin" "$tmp/doc.md" 2> "$tmp/e"
[ $? = 1 ] || fail "a wrong value passed the check"
grep -q "doc.md:3: s transports\[name=srd\].throughput_gbps: the doc says 99.99" "$tmp/e" ||
  fail "the check does not name the value: $(cat "$tmp/e")"
grep -q "doc.md:5: figure t: the block differs" "$tmp/e" || fail "the check does not name the block"
python3 tools/figures.py --update --bin "$OUT/bin" "$tmp/doc.md" 2> /dev/null || fail "--update"
python3 tools/figures.py --check --bin "$OUT/bin" "$tmp/doc.md" 2> /dev/null || fail "--update did not repair"
grep -q "99.99" "$tmp/doc.md" && fail "--update kept the wrong value"
grep -q "^  \.\.\.$" "$tmp/doc.md" || fail "lines 1,...,8-9: no ... line"
grep -q "^srd-sim: single-flow" "$tmp/doc.md" || fail "the block's first line"
# A number in a path is an array's element (path_share.0: the first path).
{ head -2 "$tmp/doc.md"; echo '<!-- v s transports[name=srd].path_share.0 {:.3f} -->x<!-- /v -->'; } > "$tmp/idx.md"
python3 tools/figures.py --update --bin "$OUT/bin" "$tmp/idx.md" 2> /dev/null || fail "--update with an array index"
grep -q -- '-->0\.[0-9][0-9][0-9]<!-- /v -->' "$tmp/idx.md" || fail "path_share.0 was not read: $(tail -1 "$tmp/idx.md")"
for bad in '<!-- v nosuch a.b {:.1f} -->1<!-- /v -->' \
           '<!-- v s transports[name=nosuch].jain {:.1f} -->1<!-- /v -->' \
           '<!-- v s transports[name=srd].nokey {:.1f} -->1<!-- /v -->' \
           '<!-- v s transports[name=srd].path_share.99 {:.1f} -->1<!-- /v -->'; do
  { head -2 "$tmp/doc.md"; echo "$bad"; } > "$tmp/bad.md"
  python3 tools/figures.py --check --bin "$OUT/bin" "$tmp/bad.md" 2> "$tmp/e"
  [ $? = 2 ] || fail "bad marker $bad: not exit 2"
done
echo "PASS"
