# hack/soak.gp - tapir's RSS, fds and CPU over a `make soak` run, in the
# style of benchmark/plot.gp: RSS and fds on top (fds on the right axis),
# CPU below, the churn's end and the warm-up marked.
#
#   gnuplot -e "datafile='soak.csv'; outfile='soak.png'; churn_end=120; \
#               warmup=30; subtitle='...'" hack/soak.gp
#
# datafile (written by hack/soak.sh): a header line, then
# t_s,phase,rss_kb,fds,cpu_pct per sample; phase is churn or settle.

set terminal pngcairo size 1200,700 font "sans,11" noenhanced
set output outfile
set datafile separator ","
set key outside right top
set grid ytics
set xtics nomirror
set xrange [0:*]
set arrow 1 from churn_end, graph 0 to churn_end, graph 1 nohead dt 2 lc "gray40"
set arrow 2 from warmup, graph 0 to warmup, graph 1 nohead dt 3 lc "gray60"

set multiplot layout 2,1 title "tapir under churn (make soak)\n".subtitle

set ylabel "RSS (MiB)"
set y2label "open fds"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set xlabel ""
plot datafile using 1:($3 / 1024.0) skip 1 with linespoints pt 7 ps 0.5 lw 2 title "RSS", \
     datafile using 1:4 skip 1 axes x1y2 with linespoints pt 5 ps 0.5 lw 2 title "fds"

unset y2label
unset y2tics
set ylabel "CPU (% of one core)"
set xlabel "seconds (dashed: end of churn; dotted: end of warm-up)"
plot datafile using 1:5 skip 1 with linespoints pt 7 ps 0.5 lw 2 lc "dark-red" title "CPU"

unset multiplot
