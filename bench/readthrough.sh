#!/usr/bin/env bash
# bench/readthrough.sh: a read-through cache under Zipf-skewed traffic, the
# cache table (lru and fifo) against the same cache written by hand in plain
# SQLite, all sides interleaved in one C process (bench/readthrough.c): for
# each number of keys, Zipf exponent s = 0.99 and 0.7, autocommit and 100
# requests per transaction.  Each point prints a table and its ratios; a
# summary of the ratios comes last.
#
#   READTHROUGH_SIZES     keys, default "10000 100000"
#   READTHROUGH_1M=1      adds 1000000 keys (about 1 GB of databases)
#   READTHROUGH_VALUE     bytes of a value, default 1024 (16384 for 16 KiB)
#   READTHROUGH_REQUESTS  measured requests per point, autocommit, default
#                         40000 (a multiple of 1000)
#   READTHROUGH_REQUESTS_TXN  the same in transactions of 100, default 200000
#   READTHROUGH_GET=select  the cache's get as SELECT value FROM c WHERE key=?
#                         instead of SELECT cache_get('c', ?)
#   READTHROUGH_SET=function  the cache's set as SELECT cache_set('c', ?, ?)
#                         instead of INSERT INTO c(key, value) VALUES(?, ?)
#   READTHROUGH_RETURNING=1  the hand-written sides with UPDATE/DELETE ...
#                         RETURNING (slower) instead of SELECT, then write
# Databases go to a temporary directory under $TMPDIR (default /tmp),
# removed at the end; the tables go to stdout.  Every side of every point
# also goes to $BENCH_OUT/readthrough.csv (default build/bench, as
# bench/experiments.sh), and, when gnuplot (or $GNUPLOT) is found, a picture
# of the requests a second of every side to $BENCH_OUT/readthrough.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
make -s dist/acorn.so build/readthrough
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
GNUPLOT=${GNUPLOT:-gnuplot}
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-readthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
sizes=${READTHROUGH_SIZES:-10000 100000}
[ "${READTHROUGH_1M:-0}" = 1 ] && sizes="$sizes 1000000"
value=${READTHROUGH_VALUE:-1024}
bench_start bench/readthrough.sh "$dir"
ratios=()
csv=$out/readthrough.csv
echo "keys,s,mode,value_bytes,side,requests_per_sec,hit_ratio,pages_per_request" > "$csv.tmp"
for n in $sizes; do
  for s in 0.99 0.7; do
    for mode in auto txn; do
      if [ "$mode" = auto ]; then req=${READTHROUGH_REQUESTS:-40000}
      else req=${READTHROUGH_REQUESTS_TXN:-200000}; fi
      echo
      res=$(./build/readthrough ./dist/acorn "$dir" "$n" "$s" "$mode" "$value" "$req")
      printf '%s\n' "$res" | grep -v '^ratios: '
      ratios+=("$(printf '%s\n' "$res" | sed -n 's/^ratios: //p')")
      # the table's rows come in the program's order of the sides
      printf '%s\n' "$res" | awk -F' *[|] *' -v n="$n" -v s="$s" -v m="$mode" -v v="$value" '
        BEGIN { split("lru fifo a1 a2 b1 b2", side, " ") }
        /^[|] (acorn|[ab][12]:)/ { k++; print n "," s "," m "," v "," side[k] "," $3 "," $4 "," $5 }
        END { if (k != 6) exit 1 }' >> "$csv.tmp"
    done
  done
done
echo
echo "Summary, $value-byte values: requests/s of acorn over the hand-written side"
echo
echo "| keys | s | mode | lru/a1 | lru/a2 | fifo/b1 | fifo/b2 |"
echo "|--:|--:|---|--:|--:|--:|--:|"
for r in "${ratios[@]}"; do
  read -r n s mode _ la a2 fb b2 <<<"$r"
  m=$([ "$mode" = auto ] && echo autocommit || echo "100 per transaction")
  echo "| $n | $s | $m | $la | $a2 | $fb | $b2 |"
done
mv "$csv.tmp" "$csv"
echo
echo "Every side of every point: $csv"

command -v "$GNUPLOT" >/dev/null 2>&1 || {
  echo "No picture: $GNUPLOT not found (tests/install-deps bench installs gnuplot-nox)"
  exit 0
}
tmp=$(mktemp -d)
trap 'rm -rf "$dir" "$tmp"' EXIT
# one line per (keys, s) and one column per side, for each mode
for mode in auto txn; do
  awk -F, -v m="$mode" '
    NR == 1 || $3 != m { next }
    { p = ($1 == 10000 ? "10^4" : $1 == 100000 ? "10^5" : $1 == 1000000 ? "10^6" : $1) " keys, s=" $2
      if (!(p in seen)) { seen[p] = 1; pt[++np] = p }
      r[p, $5] = $6 }
    END {
          for (i = 1; i <= np; i++) { p = pt[i]
            printf "\"%s\" %s %s %s %s %s %s\n", p, r[p,"lru"], r[p,"a1"], r[p,"a2"], r[p,"fifo"], r[p,"b1"], r[p,"b2"] } }
  ' "$csv" > "$tmp/$mode.dat"
done
label=$(bench_label "SQLite $(sqlite3 --version | cut -d' ' -f1)")
xmax=$(awk 'END { print NR - 0.4 }' "$tmp/auto.dat")
"$GNUPLOT" <<GP
set terminal pngcairo size 1000,800 font 'DejaVu Sans,10'
set termoption noenhanced
set output '$out/readthrough.png'
set multiplot layout 2,1 title 'Read-through cache under Zipf traffic, $value-byte values, capacity 10% of the data: requests/s (WAL, synchronous=normal)'
set label 99 "$label" at screen 0.01,0.012 font ',7'
set bmargin 4
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key outside top center vertical maxrows 3 width 2
set yrange [0:*]
set xrange [-0.6:$xmax]
set ylabel 'requests/s'
set title 'autocommit'
plot '$tmp/auto.dat' using 2:xtic(1) title 'acorn lru' lc rgb '#1f4e9c', \\
  '' using 3 title 'LRU by hand, total in memory' lc rgb '#6f9fd8', \\
  '' using 4 title 'LRU by hand, total in a table' lc rgb '#b9d2ee', \\
  '' using 5 title 'acorn fifo' lc rgb '#a33a0b', \\
  '' using 6 title 'FIFO by hand, total in memory' lc rgb '#e58a4e', \\
  '' using 7 title 'FIFO by hand, total in a table' lc rgb '#f5c9a6'
set title '100 requests per transaction'
unset label 99
plot '$tmp/txn.dat' using 2:xtic(1) notitle lc rgb '#1f4e9c', \\
  '' using 3 notitle lc rgb '#6f9fd8', '' using 4 notitle lc rgb '#b9d2ee', \\
  '' using 5 notitle lc rgb '#a33a0b', '' using 6 notitle lc rgb '#e58a4e', \\
  '' using 7 notitle lc rgb '#f5c9a6'
unset multiplot
GP
echo "Picture: $out/readthrough.png"
