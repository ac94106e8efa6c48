# bench/bloat_plot.gp: total relation size of pgbench's tables against
# time, heap and minidb, one run each (bench/bloat.sh writes the inputs:
# "seconds bytes" per line).
# Usage: gnuplot -e "heapfile='...'; minidbfile='...'; outfile='...'; subtitle='...'" bench/bloat_plot.gp
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo size 1000,600 font ",11"
set output outfile
set title "Total size of pgbench's tables (indexes included) during a run\n{/*0.8 ".subtitle."}"
set xlabel "seconds into the run"
set ylabel "MB"
set grid
set key left top
set style data linespoints
plot heapfile using 1:($2/1048576) title "heap" lw 2 pt 7, \
     minidbfile using 1:($2/1048576) title "minidb" lw 2 pt 5
