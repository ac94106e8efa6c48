# bench/plot.gp: ns/op against chain depth, per path and heap, newest
# (solid) and oldest (dashed).  Input: bench/out/curve.dat, written by
# bench/chain_depth.sh; columns: depth, then ns/op for
#   copy_eager copy_lazy view_lazy heap (newest), the same four (oldest).
# Usage: gnuplot -e "datafile='...'; outfile='...'; subtitle='...'" bench/plot.gp
if (!exists("datafile")) datafile = 'bench/out/curve.dat'
if (!exists("outfile")) outfile = 'bench/out/chain_depth.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo size 1000,650 font ",11"
set output outfile
set title "minidb\\_am: fetch by TID of one row against its chain depth\n{/*0.8 ".subtitle."}"
set xlabel "chain depth (versions)"
set ylabel "ns per fetch (median)"
set logscale xy
set xrange [0.8:150]
set xtics (1, 2, 4, 8, 16, 32, 60, 120)
set grid xtics ytics mytics
set key left top
set style data linespoints

set style line 1 lc rgb '#d62728' lw 2 pt 7
set style line 2 lc rgb '#ff7f0e' lw 2 pt 5
set style line 3 lc rgb '#2ca02c' lw 2 pt 9
set style line 4 lc rgb '#1f77b4' lw 2 pt 13
set style line 5 lc rgb '#d62728' lw 2 pt 6 dt 2
set style line 6 lc rgb '#ff7f0e' lw 2 pt 4 dt 2
set style line 7 lc rgb '#2ca02c' lw 2 pt 8 dt 2
set style line 8 lc rgb '#1f77b4' lw 2 pt 12 dt 2

plot datafile using 1:2 ls 1 title 'copy\_eager newest', \
     ''       using 1:3 ls 2 title 'copy\_lazy newest', \
     ''       using 1:4 ls 3 title 'view\_lazy newest', \
     ''       using 1:5 ls 4 title 'heap newest', \
     ''       using 1:6 ls 5 title 'copy\_eager oldest', \
     ''       using 1:7 ls 6 title 'copy\_lazy oldest', \
     ''       using 1:8 ls 7 title 'view\_lazy oldest', \
     ''       using 1:9 ls 8 title 'heap oldest'
