# benchmark/plot.gp - bar chart of the iperf3 matrix, one cluster per
# (MTU, direction) cell and one bar per driver.
#
#   gnuplot -e "datafile='iperf3.dat'; outfile='iperf3.png'; ncols=5; \
#               subtitle='...'" benchmark/plot.gp
#
# datafile (written by run-matrix.sh): a header line "cell DRIVER...",
# then one line per cell: a quoted label and Gbit/s per driver, "-" where
# the cell failed or was refused.

set terminal pngcairo size 1100,600 font "sans,11" noenhanced
set output outfile
set title "iperf3 TCP throughput, namespace <-> host, Gbit/s (higher is better)\n".subtitle
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set datafile missing "-"
set ylabel "Gbit/s"
set yrange [0:*]
set grid ytics
set key top left
set xtics nomirror
set ytics nomirror
# With N drivers and gap 1, bar j (0-based) of cluster k is centred at
# k + (j - (N - 1) / 2) / (N + 1); N + 1 = ncols.
set key autotitle columnheader
plot for [i=2:ncols] datafile using i:xtic(1), \
     for [i=2:ncols] datafile \
         using ($0 + (i - 2 - (ncols - 2) / 2.0) / ncols):(column(i)):(sprintf("%.2g", column(i))) \
         with labels offset 0,0.7 font ",9" notitle
