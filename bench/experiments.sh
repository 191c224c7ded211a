#!/usr/bin/env bash
# bench/experiments.sh: run the five experiments in sql/ (writers, ids,
# journals, batching, readers) with their SQL unchanged except the output
# mode, save each as CSV, and draw each as a PNG with gnuplot.
#
#   bash bench/experiments.sh          (from anywhere; `make bench` runs it)
#   ONLY="writers ids" bash bench/experiments.sh   (a subset)
#   PLOT_ONLY=1 bash bench/experiments.sh          (redraw from the CSV)
#   PLOT_ONLY=1 BENCH_OUT=bench/results bash bench/experiments.sh
#
# Files go to $BENCH_OUT (default build/bench; `make bench-record` copies a
# complete run to bench/results/).  The scratch databases go to $TMPDIR (else
# /tmp), as bench_insert's `dir` defaults.  machine.txt records where the
# numbers come from.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
GNUPLOT=${GNUPLOT:-gnuplot}
command -v "$GNUPLOT" >/dev/null || {
  echo "experiments: $GNUPLOT not found (tests/install-deps bench installs gnuplot-nox)" >&2
  exit 1
}
ALL="writers ids journals batching readers"
ONLY=${ONLY:-$ALL}

if [ -z "${PLOT_ONLY:-}" ]; then
  make --no-print-directory -s dist/acorn.so
  d=${TMPDIR:-/tmp}
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus"
    echo "memory: $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
    echo "kernel: $(uname -sr)"
    echo "dir: $d on $(df -T "$d" | awk 'NR==2{print $2}')"
    echo "sqlite: $(sqlite3 --version | cut -d' ' -f1)"
    echo "acorn: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  } > "$out/machine.txt"
  n=$(echo $ONLY | wc -w); i=0
  for e in $ONLY; do
    i=$((i + 1))
    echo "step $i/$n: $e (sql/$e.sql; $(sed -n 's/.*(from the project root; \(.*\)).*/\1/p' "sql/$e.sql"))"
    sync; sleep 2   # let writeback from earlier work settle first
    start=$(date +%s)
    sed -e 's/^\.mode box$/.mode csv\n.headers on/' "sql/$e.sql" \
      | sqlite3 -batch -bail | tr -d '\r' > "$out/$e.csv.tmp"
    mv "$out/$e.csv.tmp" "$out/$e.csv"
    echo "   $(( $(wc -l < "$out/$e.csv") - 1 )) rows in $(( $(date +%s) - start )) s -> $out/$e.csv"
  done
  fsync=$(awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="fsync_us") c=i} NR==2&&c{print $c}' "$out/writers.csv" 2>/dev/null || true)
  [ -n "$fsync" ] && echo "fsync_us: $fsync" >> "$out/machine.txt"
fi

echo "step: drawing the pictures with $GNUPLOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
machine=$(awk -F': ' '/^cpu|^dir|^sqlite|^fsync_us/{printf "%s%s: %s", s, $1, $2; s="; "}' "$out/machine.txt")

# col FILE NAME: the number of the column called NAME in a CSV header.
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }

# pivot FILE ROWKEY COLKEY VALUE [FILTERKEY FILTERVALUE]: a table with one
# line per ROWKEY value (in file order) and one column per COLKEY value.
pivot() {
  local f=$1 rk ck vk fk=0 fv=${6:-}
  rk=$(col "$f" "$2"); ck=$(col "$f" "$3"); vk=$(col "$f" "$4")
  [ -n "${5:-}" ] && fk=$(col "$f" "$5")
  awk -F, -v rk="$rk" -v ck="$ck" -v vk="$vk" -v fk="$fk" -v fv="$fv" '
    NR==1 {next}
    fk && $fk != fv {next}
    { gsub(/"/, "");
      if (!($rk in seenr)) { seenr[$rk]=1; rows[++nr]=$rk }
      if (!($ck in seenc)) { seenc[$ck]=1; cols[++nc]=$ck }
      v[$rk SUBSEP $ck]=$vk }
    END {
      printf "key"; for (j=1;j<=nc;j++) printf " %s", cols[j]; print ""
      for (i=1;i<=nr;i++) { printf "%s", rows[i]
        for (j=1;j<=nc;j++) printf " %s", ((rows[i] SUBSEP cols[j]) in v) ? v[rows[i] SUBSEP cols[j]] : "NaN"
        print "" } }' "$f"
}

common="set terminal pngcairo size 900,540 font 'DejaVu Sans,10'
set datafile columnheaders
set termoption noenhanced
set grid ytics
set key top left
set label 99 \"$machine\" at screen 0.01,0.015 font ',7'
set bmargin 5"

if [ -s "$out/writers.csv" ]; then
  pivot "$out/writers.csv" threads mutex writes_per_sec > "$tmp/writers.dat"
  pivot "$out/writers.csv" threads mutex p99_us > "$tmp/writers99.dat"
  "$GNUPLOT" <<GP
$common
set terminal pngcairo size 900,800 font 'DejaVu Sans,10'
set termoption noenhanced
set output '$out/writers.png'
set multiplot layout 2,1 title 'Writers, with and without an application mutex (WAL, synchronous=normal, autocommit)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside top center horizontal
set xlabel 'writer threads (one connection each)'
set title 'throughput'
set ylabel 'writes/s'
set yrange [0:*]
plot '$tmp/writers.dat' using 2:xtic(1) title 'mutex=0', '' using 3 title 'mutex=1 (around every insert)'
set title '99th percentile latency of one insert (log scale)'
set ylabel 'p99 (us)'
set logscale y
set yrange [10:*]
plot '$tmp/writers99.dat' using 2:xtic(1) title 'mutex=0', '' using 3 title 'mutex=1'
unset multiplot
GP
fi

if [ -s "$out/ids.csv" ]; then
  pivot "$out/ids.csv" id content writes_per_sec > "$tmp/ids.dat"
  "$GNUPLOT" <<GP
$common
set output '$out/ids.png'
set title 'Primary key type: writes/s (1 writer, WAL, synchronous=normal; ids made before timing)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set key outside top center horizontal
set ylabel 'writes/s'
set yrange [0:*]
plot '$tmp/ids.dat' using 2:xtic(1) title 'content 12 bytes', '' using 3 title 'content 1000 bytes'
GP
fi

if [ -s "$out/journals.csv" ]; then
  pivot "$out/journals.csv" journal synchronous writes_per_sec locking normal > "$tmp/jn.dat"
  pivot "$out/journals.csv" journal synchronous writes_per_sec locking exclusive > "$tmp/jx.dat"
  "$GNUPLOT" <<GP
$common
set terminal pngcairo size 1000,800 font 'DejaVu Sans,10'
set termoption noenhanced
set output '$out/journals.png'
set multiplot layout 2,1 title 'Journal mode x synchronous: writes/s, 1 writer, autocommit (log scale)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [10:*]
set ylabel 'writes/s'
set key top left horizontal
set title 'locking_mode=normal'
plot for [i=2:5] '$tmp/jn.dat' using i:xtic(1) title columnheader(i)
set title 'locking_mode=exclusive'
plot for [i=2:5] '$tmp/jx.dat' using i:xtic(1) title columnheader(i)
unset multiplot
GP
fi

if [ -s "$out/batching.csv" ]; then
  pivot "$out/batching.csv" batch prepare writes_per_sec > "$tmp/batch.dat"
  "$GNUPLOT" <<GP
$common
set output '$out/batching.png'
set title 'Rows per transaction and statement preparation: rows/s (1 writer, WAL, synchronous=normal)'
set logscale xy
set xlabel 'batch (rows per transaction; 1 = autocommit)'
set ylabel 'rows written/s'
set xrange [0.7:14000]
plot for [i=2:4] '$tmp/batch.dat' using 1:i with linespoints lw 2 pt 7 title 'prepare='.columnheader(i)
GP
fi

if [ -s "$out/readers.csv" ]; then
  r=$(col "$out/readers.csv" readers); w=$(col "$out/readers.csv" writes_per_sec)
  rr=$(col "$out/readers.csv" reads_per_sec)
  awk -F, -v a="$r" -v b="$w" -v c="$rr" '{print $a, $b, $c}' "$out/readers.csv" > "$tmp/readers.dat"
  "$GNUPLOT" <<GP
$common
set output '$out/readers.png'
set title 'One writer with 0-4 reader threads doing point SELECTs by id (WAL, synchronous=normal)'
set xlabel 'reader threads'
set ylabel 'writes/s'
set y2label 'reads/s (all readers)'
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set xtics 1
plot '$tmp/readers.dat' using 1:2 with linespoints lw 2 pt 7 title 'writes/s', '' using 1:3 axes x1y2 with linespoints lw 2 pt 5 title 'reads/s (right axis)'
GP
fi
ls -la "$out"
