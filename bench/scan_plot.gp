# bench/scan_plot.gp: minidb/heap per scan kind and data set, median of the
# per-pair ratios with the interquartile range, and each kind's target.
# Input: bench/out/scan.dat, written by bench/scan.sh; columns: label,
# median, Q1, Q3, target (NaN: none).
# Usage: gnuplot -e "datafile='...'; outfile='...'; subtitle='...'" bench/scan_plot.gp
if (!exists("datafile")) datafile = 'bench/out/scan.dat'
if (!exists("outfile")) outfile = 'bench/out/scan.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo size 1100,600 font ",11"
set output outfile
set title "minidb\\_am: scans of many rows, minidb / heap (ABBA pairs, median and IQR)\n{/*0.8 ".subtitle."}"
set ylabel "minidb time / heap time"
set yrange [0:*]
set grid ytics
set key left top
set style fill solid 0.6 border -1
set boxwidth 0.6
set xtics rotate by -30 font ",9" noenhanced

plot datafile using 0:2:xtic(1) with boxes lc rgb '#2ca02c' title 'minidb / heap (median)', \
     ''       using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1 lw 2 title 'IQR', \
     ''       using 0:5 with points pt 7 ps 1.5 lc rgb '#d62728' title 'target', \
     1.0 with lines lc rgb '#1f77b4' dt 2 lw 2 title 'heap'
