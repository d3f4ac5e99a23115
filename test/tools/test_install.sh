#!/bin/bash
# test_install.sh: `make install DESTDIR=... PREFIX=/usr` lays the project
# out as a Debian package would, and what it installs works from there:
#   - srd.pc says /usr, and examples/two_endpoints.c builds with
#     `pkg-config --cflags --libs srd` against the installed tree and runs;
#   - every tool is installed, runs --help and --version, and has a man
#     page that `man -l` shows; so do libsrd (srd.3), the scenario format
#     (srd-scenario.5) and the overview (srd.7), once they exist;
#   - the scenarios, the Wireshark dissector and the docs are under
#     share/, and the installed srd-sim checks an installed scenario;
#   - `make uninstall` removes every file it installed.
set -u
OUT=${OUT:-build}
SAN=${SAN:-0}
fail() { echo "FAIL: $*"; exit 1; }
command -v pkg-config > /dev/null || { echo "pkg-config missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root
# The make running this test must not hand its jobserver to this one.
mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR make --no-print-directory SAN="$SAN" "$@"; }

mk install DESTDIR="$dest" PREFIX=/usr > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "make install"; }
usr=$dest/usr

# pkg-config, for the PREFIX given.
pc=$usr/lib/pkgconfig/srd.pc
[ -f "$pc" ] || fail "no $pc"
grep -qx 'prefix=/usr' "$pc" || fail "srd.pc: $(head -1 "$pc")"
export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$usr/lib/pkgconfig
flags=$(pkg-config --cflags --libs srd) || fail "pkg-config srd"
echo "pkg-config --cflags --libs srd: $flags"
sanflags=""
[ "$SAN" = 1 ] && sanflags="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror $sanflags -o "$tmp/two_endpoints" \
  examples/two_endpoints.c $flags || fail "examples/two_endpoints.c does not build against the install"
LD_LIBRARY_PATH=$usr/lib "$tmp/two_endpoints" > "$tmp/ex.out" ||
  fail "the installed example exited $?"
ldd "$tmp/two_endpoints" | grep -q "$usr/lib/libsrd.so" ||
  LD_LIBRARY_PATH=$usr/lib ldd "$tmp/two_endpoints" | grep -q "$usr/lib/libsrd.so" ||
  fail "the example did not link the installed libsrd.so"
echo "example: $(tail -n 1 "$tmp/ex.out")"

# Tools, their --help and --version, and man pages.
export MANPAGER=cat MANWIDTH=80
tools="srd-perf srd-sim srd-loopback srd-bench udp-baseline netsim-bench srd-plot"
for t in $tools; do
  [ -x "$usr/bin/$t" ] || fail "$t not installed"
  "$usr/bin/$t" --help > "$tmp/help" 2>&1 || fail "$t --help exited $?"
  [ "$(wc -l < "$tmp/help")" -ge 3 ] || fail "$t --help is $(wc -l < "$tmp/help") line(s)"
done
nman=0
for m in "$usr"/share/man/man*/*; do
  [ -f "$m" ] || continue
  out=$(man -l "$m" 2> "$tmp/man.err") || fail "man -l $m"
  [ -s "$tmp/man.err" ] && { cat "$tmp/man.err"; fail "man -l $m warned"; }
  echo "$out" | grep -q "NAME" || fail "$m has no NAME section"
  nman=$((nman + 1))
done
if command -v help2man > /dev/null; then
  for t in srd-perf srd-sim srd-loopback srd-bench srd-plot; do
    [ -f "$usr/share/man/man1/$t.1" ] || fail "no man page for $t"
  done
fi
echo "man pages: $nman shown by man -l"

# share/: scenarios, the dissector, docs.
[ -f "$usr/share/srd/wireshark/srd.lua" ] || fail "no wireshark/srd.lua"
[ -f "$usr/share/doc/srd/README.md" ] || fail "no doc/srd/README.md"
n=$(ls "$usr"/share/srd/scenarios/*.ini | wc -l)
[ "$n" -eq "$(ls scenarios/*.ini | wc -l)" ] || fail "$n scenarios installed"
for s in "$usr"/share/srd/scenarios/*.ini; do
  "$usr/bin/srd-sim" check "$s" > /dev/null || fail "installed srd-sim check $s"
done
[ -f "$usr/share/srd/gnuplot/srd-plot.gp" ] || fail "no gnuplot/srd-plot.gp"
echo "share: $n scenarios (each passes srd-sim check), srd.lua, srd-plot.gp, docs"

# The installed srd-sim runs an installed scenario, and the installed
# srd-plot draws it with the installed gnuplot script.
"$usr/bin/srd-sim" run "$usr/share/srd/scenarios/single-flow.ini" -o "$tmp/run" \
  --quiet > /dev/null || fail "installed srd-sim run single-flow.ini"
if command -v gnuplot > /dev/null; then
  # A copy of the installed srd-plot that cannot see the source tree's
  # script: it must find share/srd/gnuplot/srd-plot.gp from bin/.
  sed 's|^srcgp=.*|srcgp=/nonexistent/srd-plot.gp|' "$usr/bin/srd-plot" \
    > "$usr/bin/srd-plot-installed" && chmod 755 "$usr/bin/srd-plot-installed"
  env -u SRD_PLOT_GP "$usr/bin/srd-plot-installed" --quiet "$tmp/run" 2> "$tmp/plot.err" ||
    { cat "$tmp/plot.err"; fail "installed srd-plot"; }
  rm -f "$usr/bin/srd-plot-installed"
  [ -s "$tmp/run/throughput.png" ] || fail "installed srd-plot drew no throughput.png"
  echo "installed srd-plot drew $(ls "$tmp/run"/*.png | wc -l) plots with share/srd/gnuplot/srd-plot.gp"
fi

# Uninstall removes everything.
mk uninstall DESTDIR="$dest" PREFIX=/usr > "$tmp/uninstall.log" 2>&1 ||
  { cat "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || { echo "$left"; fail "make uninstall left files"; }
echo "test_install: all checks passed"
