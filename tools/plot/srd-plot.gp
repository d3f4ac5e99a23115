# srd-plot.gp: the plots of one sweep point of an srd-sim output directory.
#
# srd-plot (tools/srd-plot) turns srd-sim's CSV files into the data files
# below and runs this script; it is installed as
# share/srd/gnuplot/srd-plot.gp so that a figure can be restyled or
# redrawn by hand:
#
#   gnuplot -e "data='DIR'; out='OUTDIR/'; sfx=''; fmt='png'; \
#               term='pngcairo size 1000,620 noenhanced'; \
#               transports='srd tcp'; lat_ts='srd tcp'; fct_ts=''; \
#               caps='40 40'; nft=0; \
#               npaths=8; ql1='leaf0->spine0 ...'; ql2='...'" srd-plot.gp
#
# Variables (all strings unless noted):
#   data        folder of the data files:
#                 lat-T.dat, fct-T.dat  "value cdf ccdf" rows, sorted (per
#                                       transport T; ccdf is P(X >= value))
#                 thr-T.dat             "time_ms gbps" rows
#                 fI-J.dat              "time_ms gbps" of flow J of transport I
#                 paths.dat             header "path T1 T2 ...", then "index share..."
#                 q-I-J.dat             "time_ms kbytes" of port J of transport I
#   out, sfx, fmt  each plot is written to out.NAME.sfx.fmt
#   term, tallterm  the gnuplot terminals (with size and font) of the
#               plots with one panel, and with a panel per transport
#   ttail       the titles' tail (" - scenario (point label)")
#   transports  the transports, in srd-sim's order
#   lat_ts, fct_ts  the transports that have latency / flow-time samples
#   caps        each transport's capacity in Gb/s ('' for none)
#   marks       a gnuplot file of set arrow / set label lines: the fault
#               markers ('' or an empty file for none)
#   nft         (integer) transports with per-flow series (0: no flows plot)
#   ffI, fsI, fdI, fmI  transport I's flows, their sources, destinations
#               and longest stalls ("52.2_us"), one word each
#   fwin        the per-flow lines' averaging window in ms
#   npaths      (integer) rows of paths.dat
#   qlI         the names of transport I's busiest ports, one word each
#
# It writes latency_cdf and latency_ccdf, fct_cdf and fct_ccdf (when a
# transport has flow times), throughput, flows (when nft > 0), paths
# (when there are paths) and queues.
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

# The plots of one sweep point.  Every title ends with ttail (the
# scenario and the point); keys sit outside the plot area, below it or
# to its right, so that they never cover a trace.
if (!exists("ttail")) { ttail = '' }
if (!exists("tallterm")) { tallterm = term }
if (!exists("marks")) { marks = '' }
if (!exists("caps")) { caps = '' }
if (!exists("nft")) { nft = 0 }
set key below horizontal
set style line 99 dt 2 lw 2 lc rgb 'black'
set style textbox opaque noborder

if (strlen(lat_ts) > 0) {
  set output file('latency_cdf')
  set title 'Message latency (post to readable), CDF'.ttail
  set logscale x; set xlabel 'latency (us)'; set ylabel 'fraction of messages'; set yrange [0:1.02]
  plot for [t in lat_ts] sprintf('%s/lat-%s.dat', data, t) using 1:2 with steps lw 2 title t
  set output file('latency_ccdf')
  set title 'Message latency tail, P(latency >= x)'.ttail
  set logscale xy; set ylabel 'fraction of messages at least x'; set yrange [*:1.5]
  set format y '%g'
  plot for [t in lat_ts] sprintf('%s/lat-%s.dat', data, t) using 1:3 with steps lw 2 title t
  unset logscale y; set format y '% h'
}
if (strlen(fct_ts) > 0) {
  set output file('fct_cdf')
  set title 'Flow completion time, CDF'.ttail
  set logscale x; set xlabel 'flow completion time (us)'; set ylabel 'fraction of flows'; set yrange [0:1.02]
  plot for [t in fct_ts] sprintf('%s/fct-%s.dat', data, t) using 1:2 with steps lw 2 title t
  set output file('fct_ccdf')
  set title 'Flow completion time tail, P(FCT >= x)'.ttail
  set logscale xy; set ylabel 'fraction of flows at least x'; set yrange [*:1.5]
  set format y '%g'
  plot for [t in fct_ts] sprintf('%s/fct-%s.dat', data, t) using 1:3 with steps lw 2 title t
  unset logscale y; set format y '% h'
}

# The fault markers (srd-plot writes them as set arrow / set label).
if (strlen(marks) > 0) { load marks }

unset logscale x; set autoscale y; set yrange [0:*]
set output file('throughput')
set title 'Goodput over time (readable bytes)'.ttail
set xlabel 'time (ms)'; set ylabel 'Gb/s'
# The capacity: one line when every transport's is the same, else one
# per transport.
nt = words(transports)
samecap = 1
if (words(caps) == nt) {
  do for [i = 2:nt] { if (word(caps, i) + 0 != word(caps, 1) + 0) { samecap = 0 } }
}
if (words(caps) != nt) {
  plot for [t in transports] sprintf('%s/thr-%s.dat', data, t) using 1:2 with lines lw 2 title t
} else {
  set yrange [0:word(caps, 1) * 1.3 > 0 ? word(caps, 1) * 1.3 : 1]
  if (samecap) {
    plot for [t in transports] sprintf('%s/thr-%s.dat', data, t) using 1:2 with lines lw 2 title t, \
         word(caps, 1) + 0 with lines ls 99 title sprintf('capacity %g Gb/s', word(caps, 1) + 0)
  } else {
    set yrange [0:*]
    plot for [i = 1:nt] sprintf('%s/thr-%s.dat', data, word(transports, i)) using 1:2 with lines lw 2 lc i title word(transports, i), \
         for [i = 1:nt] word(caps, i) + 0 with lines dt 2 lw 2 lc i title sprintf('%s capacity %g Gb/s', word(transports, i), word(caps, i) + 0)
  }
}
set yrange [0:*]

# Per-flow goodput: a panel per transport, a line per flow that
# flow_throughput.csv keeps (ffI its flows, fsI and fdI their hosts,
# fmI their longest stalls, "52.2_us" or "602.8_ms"), the key below
# them or, with more than 8 flows, to their right.
if (nft > 0) {
  eval "set terminal ".tallterm
  set output file('flows')
  set multiplot layout nft,1 title 'Goodput of each flow over time'.ttail
  set xlabel 'time (ms)'
  set ylabel (exists("fwin") && fwin + 0 > 0 ? sprintf('Gb/s (mean over %g ms)', fwin + 0) : 'Gb/s')
  # Room at the top for the markers' labels, and a little below 0 so
  # that a stalled flow's line shows above the axis.
  set autoscale y; set offsets 0, 0, graph 0.3, graph 0.04
  do for [i = 1:nft] {
    ff = value(sprintf('ff%d', i)); fs = value(sprintf('fs%d', i))
    fd = value(sprintf('fd%d', i)); fm = value(sprintf('fm%d', i))
    # Up to 8 flows: a key below, in words; more: a narrow one to the
    # right, one flow a line.
    many = words(ff) > 8
    if (!many) {
      set key below horizontal maxcols 2 maxrows 4 font ',11' samplen 4 title ''
    } else {
      set key outside right top vertical maxcols 1 font ',9' samplen 2 title 'flow: hosts, longest stall'
    }
    stall(j) = strstrt(word(fm, j), '_') ? word(fm, j)[1:strstrt(word(fm, j), '_') - 1].' '.word(fm, j)[strstrt(word(fm, j), '_') + 1:] : word(fm, j)
    set title word(transports, i)
    if (words(ff) > 0) {
      plot for [j = 1:words(ff)] sprintf('%s/f%d-%d.dat', data, i, j) using 1:2 with lines lw 2 \
        title (many ? sprintf('%s: %s->%s, %s', word(ff, j), word(fs, j), word(fd, j), stall(j)) \
                    : sprintf('flow %s: host%s->host%s, longest stall %s', word(ff, j), word(fs, j), word(fd, j), stall(j)))
    } else {
      plot 1/0 notitle
    }
  }
  unset multiplot
  set offsets 0, 0, 0, 0; set yrange [0:*]
  set key below horizontal noinvert font '' title '' samplen 4
  eval "set terminal ".term
}
unset arrow; unset label
set key below horizontal

if (npaths > 0) {
  set output file('paths')
  set title 'Share of the fabric bytes per path (spine, core or parallel path)'.ttail
  set style data histograms; set style histogram clustered gap 1
  set style fill solid 0.8 border -1; set boxwidth 0.9
  set xlabel 'path'; set ylabel 'share'; set yrange [0:*]
  plot for [i=2:words(transports) + 1] data.'/paths.dat' using i:xtic(1) title columnheader(i)
  set style data lines
}

eval "set terminal ".tallterm
set output file('queues')
set multiplot layout words(transports),1 title 'Busiest ports'.ttail
set xlabel 'time (ms)'; set ylabel 'KB'; set yrange [0:*]; set key outside right top vertical
set offsets 0, 0, graph 0.3, 0
if (strlen(marks) > 0) { load marks }
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
