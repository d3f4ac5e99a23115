#!/bin/sh
# install-deps.sh: install the Debian packages the build, the tests and the
# tools need, if they are missing.  Safe to run again: it installs nothing
# when everything is there.  Runs apt-get as root, or through sudo.
#
#   tools/install-deps.sh           install what is missing
#   tools/install-deps.sh --check   only list what is missing (exit 1 if any)
#   tools/install-deps.sh --cuda    also CUDA (srd-perf -m cuda), from
#                                   Debian's non-free component, which it
#                                   enables if it is not (about 2 GB)
set -eu

check=0
cuda=0
for a in "$@"; do
  case "$a" in
  --check) check=1 ;;
  --cuda) cuda=1 ;;
  *) echo "install-deps: unknown option '$a' (--check, --cuda)" >&2; exit 2 ;;
  esac
done

# Build and test: compiler, make, pkg-config, CMocka, clang with its
# libFuzzer and sanitizer runtimes, clang-format 14, binutils (nm), the
# JSON and plotting helpers the tool tests use, libpcap for captures and
# tshark to test the Wireshark dissector on them.
PKGS="gcc make pkg-config libc6-dev binutils libcmocka-dev clang \
libclang-rt-14-dev clang-format python3 libpcap-dev tshark"

# The simulator's scenario files are read with libinih; srd-plot draws
# with gnuplot (its test draws only when gnuplot is there).
PKGS="$PKGS libinih-dev gnuplot-nox"

# The udp transport (libsrd over UDP) runs over io_uring with liburing (Debian 12 ships
# 2.3); the ECMP fabric test builds namespaces with iproute2 (ip netns, tc
# tbf), drops packets with nftables and sets sysctls with procps.
PKGS="$PKGS liburing-dev iproute2 nftables procps"

# The fabric transport (srd-perf -t fabric) runs over libfabric's RDM
# endpoints (Debian 12 ships 1.17 with the tcp;ofi_rxm and udp;ofi_rxd
# providers its tests use; efa on AWS); fi_info (libfabric-bin) lists the
# providers a machine has.
PKGS="$PKGS libfabric-dev libfabric-bin"

# The tools' man pages are made from their --help by help2man; man-db
# shows them (man -l).
PKGS="$PKGS help2man man-db"

# srd-coll's ranks can be started by mpirun (Open MPI: only the bootstrap,
# the data goes over the transports); its host-list mode needs nothing.
PKGS="$PKGS libopenmpi-dev openmpi-bin"

# CUDA (opt-in): srd-perf -m cuda compiles against the CUDA runtime's
# headers (nvidia-cuda-dev, CUDA 11.8 in Debian 12's non-free) and loads
# libcudart at run time, so that a build with CUDA still runs where
# there is none.  No nvcc: the project has no kernels of its own.
CUDA_PKGS="nvidia-cuda-dev libcudart11.0"
if [ "$cuda" = 1 ]; then
  PKGS="$PKGS $CUDA_PKGS"
fi

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
if [ "$check" = 1 ]; then
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

# enable_non_free adds Debian's contrib and non-free components (the
# driver's libcuda1 needs a package from contrib) on the suites and mirror
# of the machine's main one, when no source has nvidia-cuda-dev yet.
enable_non_free() {
  if apt-cache policy nvidia-cuda-dev 2>/dev/null | grep -q "Candidate: [0-9]"; then
    return 0
  fi
  . /etc/os-release
  d=/etc/apt/sources.list.d
  if [ -f $d/debian.sources ]; then
    # deb822: the same mirror and key as the main component (apt refuses
    # one source with two keys).
    mirror=$(sed -n 's/^URIs: *\([^ ]*\/debian\)\/\{0,1\}$/\1/p' $d/debian.sources | head -n 1)
    key=$(sed -n 's/^Signed-By: *//p' $d/debian.sources | head -n 1)
    suites=$(sed -n 's/^Suites: *//p' $d/debian.sources | head -n 1)
    f=$d/srd-non-free.sources
    echo "install-deps: enabling Debian's non-free component for CUDA ($f)"
    printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: contrib non-free non-free-firmware\n%s' \
      "${mirror:-http://deb.debian.org/debian}" "${suites:-$VERSION_CODENAME}" \
      "${key:+Signed-By: $key
}" | $SUDO tee $f > /dev/null
  else
    # One-line sources: each main "deb" line of the Debian mirror again,
    # with its options ([signed-by=...]), mirror and suite, for the other
    # components.
    lines=$(sed -n 's|^\(deb \(\[[^]]*\] \)\{0,1\}[^ ]*/debian/\{0,1\} [^ ]*\) .*|\1 contrib non-free non-free-firmware|p' \
      /etc/apt/sources.list 2> /dev/null)
    [ -n "$lines" ] || lines="deb http://deb.debian.org/debian $VERSION_CODENAME contrib non-free non-free-firmware"
    f=$d/srd-non-free.list
    echo "install-deps: enabling Debian's non-free component for CUDA ($f)"
    echo "$lines" | $SUDO tee $f > /dev/null
  fi
  $SUDO apt-get update
}

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
if [ "$cuda" = 1 ]; then
  enable_non_free
fi
if ! $SUDO apt-get install -y --no-install-recommends $missing; then
  # A fresh machine may have no package lists yet.
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends $missing
fi
