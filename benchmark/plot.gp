# benchmark/plot.gp - bar chart of the iperf3 matrix, one cluster per
# (MTU, direction) cell and one bar per driver: the median over the rounds,
# with an error bar from the lowest to the highest round.
#
#   gnuplot -e "datafile='iperf3.dat'; outfile='iperf3.png'; ndrivers=6; \
#               subtitle='...'" benchmark/plot.gp
#
# datafile (written by run-matrix.sh from benchmark/report.jq): a header
# line "cell D D_min D_max ..." with three columns per driver, then one
# line per cell: a quoted label, then median, min and max Gbit/s per
# driver, "-" where the cell failed or was refused in every round.

set terminal pngcairo size 1200,600 font "sans,11" noenhanced
set output outfile
set title "iperf3 TCP throughput, namespace <-> host, Gbit/s (higher is better)\n".subtitle
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set datafile missing "-"
set ylabel "Gbit/s"
set yrange [0:*]
set grid ytics
set key outside right top
set xtics nomirror
set ytics nomirror
# The header line is the titles' in every plot, labels included: so $0
# counts cells from 0, as the histogram's clusters do.
set key autotitle columnheader
# With N drivers and gap 1, bar j (0-based) of cluster k is centred at
# k + (j - (N - 1) / 2) / (N + 1). Driver j's median is column 2 + 3j,
# the label sits on the top of its error bar.
plot for [j=0:ndrivers-1] datafile \
         using (column(2 + 3 * j)):(column(3 + 3 * j)):(column(4 + 3 * j)):xtic(1) \
         title columnheader(2 + 3 * j), \
     for [j=0:ndrivers-1] datafile \
         using ($0 + (j - (ndrivers - 1) / 2.0) / (ndrivers + 1)):(column(4 + 3 * j)):(sprintf("%.2g", column(2 + 3 * j))) \
         with labels offset 0,0.7 font ",8" notitle
