#!/bin/sh
# install-deps.sh: install the Debian packages the build, the tests and the
# tools need, if they are missing.  Safe to run again: it installs nothing
# when everything is there.  Runs apt-get as root, or through sudo.
#
#   tools/install-deps.sh           install what is missing
#   tools/install-deps.sh --check   only list what is missing (exit 1 if any)
set -eu

# Build and test: compiler, make, pkg-config, CMocka, clang with its
# libFuzzer and sanitizer runtimes, clang-format 14, binutils (nm), the
# JSON and plotting helpers the tool tests use, libpcap for captures and
# tshark to test the Wireshark dissector on them.
PKGS="gcc make pkg-config libc6-dev binutils libcmocka-dev clang \
libclang-rt-14-dev clang-format python3 libpcap-dev tshark"

# The simulator's scenario files are read with libinih; srd-plot draws
# with gnuplot (its test draws only when gnuplot is there).
PKGS="$PKGS libinih-dev gnuplot-nox"

# The srd transport runs over io_uring with liburing (Debian 12 ships
# 2.3); the ECMP fabric test builds namespaces with iproute2 (ip netns, tc
# tbf), drops packets with nftables and sets sysctls with procps.
PKGS="$PKGS liburing-dev iproute2 nftables procps"

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-deps: missing:$missing"
  exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install-deps: need root (or sudo) to install:$missing" >&2
  exit 1
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends $missing; then
  # A fresh machine may have no package lists yet.
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends $missing
fi
