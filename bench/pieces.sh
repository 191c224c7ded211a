#!/usr/bin/env bash
# bench/pieces.sh: a torrent's pieces (2 MiB) written in 16 KiB blocks at
# their offsets and read back block by block, checked, in one C process
# (bench/pieces.c): a cache table (cache_write, cache_read) against
# squirrel's design by hand on plain SQLite (a blob opened, written or read,
# and closed in a transaction per block, its key's last use updated) and
# against plain files (pwrite, pread), the three taking turns.  Each run
# prints its table; then the runs side by side and their ratios; then the
# cost of one block at the start and at the end of a piece, with and
# without pointer-map pages (--offsets).
#
#   PIECES_RUNS     runs of the program, default 3
#   PIECES_ROUNDS   rounds in a run (each: in order and shuffled, every
#                   side), default 30; the table shows the median round
#   PIECES_OFFSET_N blocks per batch of --offsets, default 200 (0 skips it)
#   PIECES_SIDES    only these sides, e.g. "squirrel" (see bench/pieces.c)
#   PIECES_IR=1     then count with callgrind (valgrind) the instructions
#                   of a block written and read on each SQLite side (one
#                   round, 2048 blocks each way; about 20 s more)
# Databases and files go to a temporary directory under $TMPDIR (default
# /tmp), removed at the end; under 100 MB while it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.bash
make -s dist/acorn.so build/pieces
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-pieces.XXXXXX")
trap 'rm -rf "$dir"' EXIT
runs=${PIECES_RUNS:-3}
rounds=${PIECES_ROUNDS:-30}
offset_n=${PIECES_OFFSET_N:-200}
bench_start bench/pieces.sh "$dir" ", acorn $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
results=()
for i in $(seq 1 "$runs"); do
  echo
  echo "Run $i of $runs:"
  echo
  res=$(./build/pieces ./dist/acorn "$dir" "$rounds")
  printf '%s\n' "$res" | grep -v '^result: '
  while read -r side w0 w1 rd; do
    results+=("$i $side $w0 $w1 $rd")
  done < <(printf '%s\n' "$res" | sed -n 's/^result: //p')
done

echo
echo "MB/s (10^6 bytes a second), the median round of each run:"
echo
printf '%s\n' "${results[@]}" | awk '
  { run[$1] = 1; side[$2] = 1; w0[$1, $2] = $3; w1[$1, $2] = $4; rd[$1, $2] = $5 }
  END {
    n = split("acorn squirrel files", order, " ")
    print "| side | write in order | write shuffled | read |"
    print "|---|--:|--:|--:|"
    for (s = 1; s <= n; s++) {
      if (!(order[s] in side)) continue
      a = b = c = ""
      for (r = 1; (r in run); r++) {
        sep = (r > 1 ? ", " : "")
        a = a sep w0[r, order[s]]; b = b sep w1[r, order[s]]; c = c sep rd[r, order[s]]
      }
      print "| " order[s] " | " a " | " b " | " c " |"
    }
    pairs = "acorn/squirrel acorn/files squirrel/files"
    np = split(pairs, pair, " ")
    head = 0
    for (p = 1; p <= np; p++) {
      split(pair[p], ab, "/")
      if (!(ab[1] in side) || !(ab[2] in side)) continue
      if (!head) {
        print ""
        print "Ratios of MB/s, each run:"
        print ""
        print "| ratio | write in order | write shuffled | read |"
        print "|---|--:|--:|--:|"
        head = 1
      }
      a = b = c = ""
      for (r = 1; (r in run); r++) {
        sep = (r > 1 ? ", " : "")
        a = a sep sprintf("%.2f", w0[r, ab[1]] / w0[r, ab[2]])
        b = b sep sprintf("%.2f", w1[r, ab[1]] / w1[r, ab[2]])
        c = c sep sprintf("%.2f", rd[r, ab[1]] / rd[r, ab[2]])
      }
      print "| " pair[p] " | " a " | " b " | " c " |"
    }
  }'

if [ "$offset_n" -gt 0 ]; then
  echo
  ./build/pieces --offsets ./dist/acorn "$dir" "$offset_n"
fi
# ir FILE FUNCTION: FUNCTION's inclusive instructions in callgrind's FILE
# (the program's total without FUNCTION).
ir() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v f="$2" '
    n { next }      # (read to the end: callgrind_annotate must not get SIGPIPE)
    f == "" && /PROGRAM TOTALS/ { gsub(",", "", $1); print $1; n = 1 }
    f != "" && $0 ~ (":" f " ") { gsub(",", "", $1); print $1; n = 1 }'
}
if [ "${PIECES_IR:-0}" = 1 ]; then
  command -v valgrind >/dev/null || { echo "pieces.sh: PIECES_IR=1 needs valgrind (tests/install-deps bench)"; exit 1; }
  echo
  echo "Instructions per block (callgrind $(valgrind --version | sed 's/valgrind-//'), one round:" \
       "2048 blocks written and 2048 read on each side; the part in SQLite's" \
       "sqlite3_blob_write or sqlite3_blob_read, and the rest):"
  echo
  echo "| side | written | in sqlite3_blob_write | the rest | read | in sqlite3_blob_read | the rest |"
  echo "|---|--:|--:|--:|--:|--:|--:|"
  for side in acorn squirrel; do
    row="| $side"
    for op in Write Read; do
      out="$dir/callgrind.$side.$op"
      PIECES_SIDES=$side valgrind --tool=callgrind --callgrind-out-file="$out" \
        "--toggle-collect=$side$op*" ./build/pieces ./dist/acorn "$dir" 1 \
        >/dev/null 2>"$dir/valgrind.log" || { cat "$dir/valgrind.log"; exit 1; }
      fn=sqlite3_blob_$(echo "$op" | tr 'WR' 'wr')
      total=$(ir "$out" "")
      part=$(ir "$out" "$fn")
      row="$row | $((total / 2048)) | $((part / 2048)) | $(((total - part) / 2048))"
    done
    echo "$row |"
  done
fi

echo
echo "bench/pieces.sh: done, $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
