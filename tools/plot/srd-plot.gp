# srd-plot.gp: the plots of one sweep point of an srd-sim output directory.
#
# srd-plot (tools/srd-plot) turns srd-sim's CSV files into the data files
# below and runs this script; it is installed as
# share/srd/gnuplot/srd-plot.gp so that a figure can be restyled or
# redrawn by hand:
#
#   gnuplot -e "data='DIR'; out='OUTDIR/'; sfx=''; fmt='png'; \
#               term='pngcairo size 960,600 noenhanced'; \
#               transports='srd tcp'; lat_ts='srd tcp'; fct_ts=''; \
#               npaths=8; ql1='leaf0->spine0 ...'; ql2='...'" srd-plot.gp
#
# Variables (all strings unless noted):
#   data        folder of the data files:
#                 lat-T.dat, fct-T.dat  "value cdf" rows, sorted (per transport T)
#                 thr-T.dat             "time_ms gbps" rows
#                 paths.dat             header "path T1 T2 ...", then "index share..."
#                 q-I-J.dat             "time_ms kbytes" of port J of transport I
#   out, sfx, fmt  each plot is written to out.NAME.sfx.fmt
#   term        the gnuplot terminal (with its size and font)
#   transports  the transports, in srd-sim's order
#   lat_ts, fct_ts  the transports that have latency / flow-time samples
#   npaths      (integer) rows of paths.dat
#   qlI         the names of transport I's busiest ports, one word each
#
# It writes latency_cdf, fct_cdf (when a transport has flow times),
# throughput, paths (when there are paths) and queues.
#
# With mode='sweep' (a size sweep, srd-plot DIR where DIR has sweep.csv)
# it writes one plot instead, sweep: bandwidth and p50 latency against
# message size, one line per transport.  Variables: data (the folder of
# sweep-T.dat, "size_bytes GBps lat_us" rows sorted by size, one file
# per transport T), out, sfx, fmt, term as above, transports.
#
# With mode='seeds' (a sweep over seeds, srd-plot DIR where DIR has
# stats.csv: srd-sim sweep or merge) it writes one plot, seeds_NAME: a
# figure's mean against the sweep point, one line per transport, with
# the 95% confidence interval of the mean as error bars.  Variables:
# data (the folder of seeds-T.dat, "point_idx mean ci95" rows, one
# file per transport T), name, ttl (the title), ylab, logy (1: a log
# axis), cap (when not empty, a line at that value: the capacity),
# xlab, xt (the xtics: '("label" 0, "label" 1, ...)'), rot (1: slanted
# labels), out, fmt, term, transports.

eval "set terminal ".term
set datafile missing '?'
set grid
set key bottom right
file(name) = sprintf('%s%s%s.%s', out, name, sfx, fmt)

if (exists("mode") && mode eq 'sweep') {
  set output file('sweep')
  set multiplot layout 1,2
  set logscale x 2
  set format x '%.0b%B'
  set xlabel 'message size (bytes)'
  set key top left
  set title 'Bandwidth (srd-perf -T bw)'
  set ylabel 'GB/s (10^9 bytes/s)'; set yrange [0:*]
  plot for [t in transports] sprintf('%s/sweep-%s.dat', data, t) using 1:2 with linespoints lw 2 title t
  set title 'Latency (srd-perf -T lat, round trip p50)'
  set logscale y; set ylabel 'us'; set autoscale y
  plot for [t in transports] sprintf('%s/sweep-%s.dat', data, t) using 1:3 with linespoints lw 2 title t
  unset multiplot
  exit
}

if (exists("mode") && mode eq 'seeds') {
  set output sprintf('%s%s.%s', out, name, fmt)
  set title ttl
  set ylabel ylab
  set xlabel xlab
  set key outside right top
  set offsets 0.3, 0.3, 0, 0
  eval "set xtics ".xt
  if (rot) { set xtics rotate by -20 }
  if (logy) { set logscale y } else { set yrange [0:*] }
  nt = words(transports)
  # Each transport a little to the side, so that the bars never overlap.
  dx(i) = nt > 1 ? (i - (nt + 1) / 2.0) * 0.25 / nt : 0
  if (strlen(cap) > 0) {
    plot for [i = 1:nt] sprintf('%s/seeds-%s.dat', data, word(transports, i)) \
           using ($1 + dx(i)):2:3 with yerrorlines lw 2 pt 7 title word(transports, i), \
         cap + 0 with lines dt 2 lc 'black' title 'capacity'
  } else {
    plot for [i = 1:nt] sprintf('%s/seeds-%s.dat', data, word(transports, i)) \
           using ($1 + dx(i)):2:3 with yerrorlines lw 2 pt 7 title word(transports, i)
  }
  exit
}

if (strlen(lat_ts) > 0) {
  set output file('latency_cdf')
  set title 'Message latency (post to readable)'
  set logscale x; set xlabel 'latency (us)'; set ylabel 'CDF'; set yrange [0:1.02]
  plot for [t in lat_ts] sprintf('%s/lat-%s.dat', data, t) using 1:2 with steps lw 2 title t
}
if (strlen(fct_ts) > 0) {
  set output file('fct_cdf')
  set title 'Flow completion time'
  set logscale x; set xlabel 'flow completion time (us)'; set ylabel 'CDF'; set yrange [0:1.02]
  plot for [t in fct_ts] sprintf('%s/fct-%s.dat', data, t) using 1:2 with steps lw 2 title t
}

unset logscale x; set autoscale y; set yrange [0:*]
set output file('throughput')
set title 'Goodput over time (readable bytes)'
set key top right
set xlabel 'time (ms)'; set ylabel 'Gb/s'
plot for [t in transports] sprintf('%s/thr-%s.dat', data, t) using 1:2 with lines lw 2 title t

if (npaths > 0) {
  set output file('paths')
  set title 'Share of the fabric bytes per path (spine, core or parallel path)'
  set style data histograms; set style histogram clustered gap 1
  set style fill solid 0.8 border -1; set boxwidth 0.9
  set xlabel 'path'; set ylabel 'share'; set yrange [0:*]
  plot for [i=2:words(transports) + 1] data.'/paths.dat' using i:xtic(1) title columnheader(i)
  set style data lines
}

set output file('queues')
set multiplot layout words(transports),1
set xlabel 'time (ms)'; set ylabel 'KB'; set yrange [0:*]; set key top right
do for [i=1:words(transports)] {
  ql = value(sprintf('ql%d', i))
  set title word(transports, i).': busiest ports'
  if (words(ql) > 0) {
    plot for [j=1:words(ql)] sprintf('%s/q-%d-%d.dat', data, i, j) using 1:2 with lines lw 1.5 title word(ql, j)
  } else {
    plot 1/0 notitle
  }
}
unset multiplot
