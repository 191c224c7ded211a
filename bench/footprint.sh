#!/usr/bin/env bash
# bench/footprint.sh: 1, 4 and 16 processes on one file doing get-then-set
# under Zipf traffic, through SQL, Python's sqlite_acorn.Cache and Node's
# Cache, against a plain table written by hand and diskcache, sides
# interleaved: requests a second, failed requests, the peak size of the
# -wal file and the database's size (bench/footprint.py says how).  Needs
# /usr/bin/python3 with diskcache and tests/bindings/node's packages.
#
#   FOOTPRINT_PROCS    process counts, default "1 4 16"
#   FOOTPRINT_SECONDS  seconds a side at each count, default 60
#   FOOTPRINT_ROUNDS   rounds those seconds are split in, default 3
#   FOOTPRINT_THREADS  threads a Python process, default 4
#   FOOTPRINT_SIDES    default "plain sql python node diskcache"
#   ACORN_SO           the acorn.so to load (default dist/acorn.so, built)
#   FOOTPRINT_OLD_SO   another build's acorn.so: sides sql-old and python-old
#                      run it in the same run (before and after a change)
# Databases go to a temporary directory under $TMPDIR, removed at the end;
# the table to stdout, every row to $BENCH_OUT/footprint.csv (default
# build/bench) and, with gnuplot, the peak -wal sizes to footprint.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
root=$PWD
PYTHON=${ACORN_PYTHON:-/usr/bin/python3}
GNUPLOT=${GNUPLOT:-gnuplot}
nm=$root/tests/bindings/node/node_modules
[ -f "$nm/better-sqlite3/build/Release/better_sqlite3.node" ] ||
  { echo "bench/footprint.sh: $nm/better-sqlite3 missing: run npm ci in tests/bindings/node" >&2; exit 1; }
"$PYTHON" -c 'import diskcache' 2>/dev/null ||
  { echo "bench/footprint.sh: $PYTHON has no diskcache (Debian: python3-diskcache)" >&2; exit 1; }
if [ -z "${ACORN_SO:-}" ]; then make -s dist/acorn.so; ACORN_SO=$root/dist/acorn.so; fi
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-footprint.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# the Python and npm packages as make dist lays them out, with ACORN_SO
mkdir -p "$dir/py/sqlite_acorn" "$dir/node_modules/sqlite-acorn/lib/linux-x64" "$dir/db"
for f in ext/packages/python/sqlite_acorn/*.py; do
  sed "s/@VERSION@/$(cat VERSION)/g" "$f" >"$dir/py/sqlite_acorn/${f##*/}"
done
cp "$ACORN_SO" "$dir/py/sqlite_acorn/acorn.so"
if [ -n "${FOOTPRINT_OLD_SO:-}" ]; then
  mkdir -p "$dir/py-old"
  cp -r "$dir/py/sqlite_acorn" "$dir/py-old/"
  cp "$FOOTPRINT_OLD_SO" "$dir/py-old/sqlite_acorn/acorn.so"
  export FOOTPRINT_OLD=$dir/py-old
fi
pkg=$dir/node_modules/sqlite-acorn
cp ext/packages/npm/*.js "$pkg/"
sed "s/@VERSION@/$(cat VERSION)/g" ext/packages/npm/package.json >"$pkg/package.json"
cp "$ACORN_SO" "$pkg/lib/linux-x64/acorn.so"
for e in "$nm"/*; do ln -s "$e" "$dir/node_modules/${e##*/}"; done
cp bench/footprint.js "$dir/"
bench_start bench/footprint.sh "$dir" \
  ", acorn $(git rev-parse --short HEAD 2>/dev/null || echo unknown) ($ACORN_SO)"
PYTHONPATH="$dir/py" "$PYTHON" bench/footprint.py "$dir/db" "$dir/footprint.js"
cp "$dir/db/footprint.csv" "$out/footprint.csv"
echo
echo "Every row: $out/footprint.csv"
command -v "$GNUPLOT" >/dev/null 2>&1 || { echo "No picture: $GNUPLOT not found"; exit 0; }
# (the picture shows this build against the others; the -old sides stay in the CSV)
awk -F, 'NR > 1 && $2 !~ /-old$/ { if (!($1 in seen)) { seen[$1] = 1; p[++n] = $1 }
                  if (!($2 in sseen)) { sseen[$2] = 1; s[++m] = $2 }
                  w[$1, $2] = $5 / 1048576 }
         END { printf "procs"; for (j = 1; j <= m; j++) printf " %s", s[j]; print ""
               for (i = 1; i <= n; i++) { printf "\"%s process%s\"", p[i], (p[i] > 1 ? "es" : "")
                 for (j = 1; j <= m; j++) printf " %.2f", w[p[i], s[j]]; print "" } }' \
  "$out/footprint.csv" > "$dir/plot.dat"
ncol=$(head -1 "$dir/plot.dat" | wc -w)
label=$(bench_label "SQLite $("$PYTHON" -c 'import sqlite3; print(sqlite3.sqlite_version)')")
"$GNUPLOT" <<GP
set terminal pngcairo size 900,540 font 'DejaVu Sans,10'
set termoption noenhanced
set output '$out/footprint.png'
set title 'Peak size of the -wal file, processes doing get-then-set on one file (~200 KB kept)'
set label 99 "$label" at screen 0.01,0.015 font ',7'
set bmargin 5
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set grid ytics
set key inside top left vertical samplen 2 opaque autotitle columnheader
set offsets 0, 0, graph 0.08, 0
set yrange [0:*]
set ylabel 'MiB'
plot for [c=2:$ncol] '$dir/plot.dat' using c:xtic(1)
GP
echo "Picture: $out/footprint.png"
