#!/usr/bin/env bash
# bench/py_readthrough.sh: sqlite_acorn.Cache as a read-through cache under
# Zipf traffic (s = 0.99 and 0.7, 10^4 and 10^5 keys, 1 KiB values, a
# capacity of 10% of the keys' bytes) against diskcache.Cache with its
# default policy and with least-recently-used, sides interleaved in one
# Python process; then Cache.get against the raw SELECT cache_get(?, ?) on
# the same connection.  bench/py_readthrough.py says what each line is.
#
#   PY_READTHROUGH_SIZES     keys, default "10000 100000"
#   PY_READTHROUGH_REQUESTS  measured requests per side and point (20000)
#   PY_READTHROUGH_WARMUP    requests per side before measuring (20000)
#   PY_READTHROUGH_GETS      gets per form in the wrapper's test (200000)
# The package is the source tree's (ext/packages/python) with dist/acorn.so;
# databases go to a temporary directory under $TMPDIR, removed at the end.
# Every side of every point also goes to $BENCH_OUT/py_readthrough.csv
# (default build/bench, as bench/experiments.sh), and, when gnuplot (or
# $GNUPLOT) is found, a picture of the requests a second to
# $BENCH_OUT/py_readthrough.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
PYTHON=${ACORN_PYTHON:-/usr/bin/python3}
make -s dist/acorn.so
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
GNUPLOT=${GNUPLOT:-gnuplot}
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-py-readthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/pkg/sqlite_acorn"
for f in ext/packages/python/sqlite_acorn/*.py; do
  sed "s/@VERSION@/$(cat VERSION)/g" "$f" >"$dir/pkg/sqlite_acorn/${f##*/}"
done
cp dist/acorn.so "$dir/pkg/sqlite_acorn/acorn.so"
bench_start bench/py_readthrough.sh "$dir"
# shellcheck disable=SC2086  # the sizes are words
PYTHONPATH="$dir/pkg" "$PYTHON" bench/py_readthrough.py "$dir" ${PY_READTHROUGH_SIZES:-10000 100000} \
  | tee "$dir/out.txt"

# "N keys, Zipf s=S, ..." then a row per side: | name | requests/s | hits |
csv=$out/py_readthrough.csv
awk -F' *[|] *' '
  BEGIN { print "keys,s,side,requests_per_sec,hit_ratio" }
  /^[0-9]+ keys, Zipf s=/ { n = $0; sub(/ keys.*/, "", n)
                            s = $0; sub(/.*Zipf s=/, "", s); sub(/,.*/, "", s) }
  /^[|] (acorn|dc-default|dc-lru) [|]/ && n != "" { r = $3; gsub(/,/, "", r); print n "," s "," $2 "," r "," $4 }
' "$dir/out.txt" > "$csv.tmp"
mv "$csv.tmp" "$csv"
echo
echo "Every side of every point: $csv"

command -v "$GNUPLOT" >/dev/null 2>&1 || {
  echo "No picture: $GNUPLOT not found (tests/install-deps bench installs gnuplot-nox)"
  exit 0
}
awk -F, '
  NR == 1 { next }
  { p = ($1 == 10000 ? "10^4" : $1 == 100000 ? "10^5" : $1) " keys, s=" $2
    if (!(p in seen)) { seen[p] = 1; pt[++np] = p }
    r[p, $3] = $4 }
  END { for (i = 1; i <= np; i++) { p = pt[i]
          printf "\"%s\" %s %s %s\n", p, r[p,"acorn"], r[p,"dc-default"], r[p,"dc-lru"] } }
' "$csv" > "$dir/plot.dat"
pyver=$("$PYTHON" -c 'import sys, diskcache; print("Python", sys.version.split()[0] + ", diskcache", diskcache.__version__)')
label=$(bench_label "$pyver; SQLite $("$PYTHON" -c 'import sqlite3; print(sqlite3.sqlite_version)')")
xmax=$(awk 'END { print NR - 0.4 }' "$dir/plot.dat")
"$GNUPLOT" <<GP
set terminal pngcairo size 900,540 font 'DejaVu Sans,10'
set termoption noenhanced
set output '$out/py_readthrough.png'
set title 'Python read-through cache under Zipf traffic, 1 KiB values, capacity 10% of the data: requests/s'
set label 99 "$label" at screen 0.01,0.015 font ',7'
set bmargin 5
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key inside top right vertical samplen 2 opaque
set offsets 0, 0, graph 0.22, 0
set yrange [0:*]
set xrange [-0.6:$xmax]
set ylabel 'requests/s'
plot '$dir/plot.dat' using 2:xtic(1) title 'sqlite_acorn.Cache' lc rgb '#1f4e9c', \\
  '' using 3 title 'diskcache.Cache, default policy' lc rgb '#7f7f7f', \\
  '' using 4 title 'diskcache.Cache, least-recently-used' lc rgb '#c7c7c7'
GP
echo "Picture: $out/py_readthrough.png"
