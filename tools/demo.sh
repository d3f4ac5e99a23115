#!/bin/sh
# demo.sh: the demonstration that README points to.  First srd-loopback:
# the same 2,000 messages of 64 KiB cross 64 sprayed paths and then one
# pinned path, both with 1% loss, duplication and reordering.  Then the
# simulator's flagship comparison, SRD against TCP in the same fabric
# (tools/demo-sim.sh: tables, CSV files and plots under build/demo/).
set -eu
BIN=${1:-build/bin}
run() {
  echo "\$ srd-loopback $*"
  "$BIN/srd-loopback" "$@"
  echo
}
run --paths 64 --loss 1 --dup 1 --reorder 5 --messages 2000 --size 64K --seed 7
run --paths 1 --loss 1 --dup 1 --reorder 5 --messages 2000 --size 64K --seed 7
run --paths 64 --blackhole 3,17,40 --messages 2000 --size 64K --seed 7
"$(dirname "$0")/demo-sim.sh" "$BIN"
