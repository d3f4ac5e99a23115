#!/bin/sh
# demo-sim.sh: the simulator's flagship comparison, SRD against TCP in the
# same fabric (what `make demo` runs after the loopback demonstrations).
# Each scenario's table goes to stdout, and with its CSV files and plots
# (when gnuplot is installed) into DIR/<scenario>/ (default build/demo).
#
#   tools/demo-sim.sh [BIN [DIR]]
set -eu
BIN=${1:-build/bin}
DIR=${2:-$(dirname "$BIN")/demo}
plot=--plot
command -v gnuplot >/dev/null 2>&1 || {
  plot=""
  echo "(gnuplot is not installed: tables and CSV files only)"
}
for s in single-flow ecmp-collision random-loss incast link-failure; do
  echo
  echo "\$ srd-sim run scenarios/$s.ini -o $DIR/$s $plot"
  sed -n '1,/^\[/p' "scenarios/$s.ini" | grep '^;' | sed 's/^; \{0,1\}/    /'
  "$BIN/srd-sim" run "scenarios/$s.ini" -o "$DIR/$s" $plot --quiet
done
echo
echo "Tables, CSV files and plots: $DIR/<scenario>/ (docs/scenarios.md explains them)."
