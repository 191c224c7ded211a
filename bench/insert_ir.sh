#!/usr/bin/env bash
# bench/insert_ir.sh: the instructions bench_insert executes per row in its
# timed loop, against the C loop of bench/ref_insert.c in the same run.
#
# Wall-clock rates (bench/insert.sh) move by 2x from run to run on a machine
# shared with other work; instruction counts do not.  Each program runs once
# under callgrind with collection only inside its writer loop (bench_insert's
# benchWriterLoop, ref_insert's writerLoop, and everything they call: SQLite's
# work, the clock reads, the latency records) and a deadline far away, so the
# count covers every row of the run and nothing before or after it.  Printed:
# instructions per row and their ratio to ref_insert's (1.000: the same work;
# bench_insert also reads the clock and records a latency per row).
#   default      bench_insert's built-in INSERT
#   statement    statement set to the same INSERT ('Some title' a literal)
#   base         with BASE=<git revision>: that revision's bench_insert, built
#                from `git archive` in a temporary directory
#
#   bash bench/insert_ir.sh                 (from anywhere; `make bench`
#                                            saves the output as insert_ir.txt)
#   BASE=main bash bench/insert_ir.sh       (this build against main's)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "insert_ir.sh: valgrind not found"; exit 1; }
make --no-print-directory -s dist/acorn.so build/ref_insert
tmp=$(mktemp -d "${TMPDIR:-/tmp}/acorn-insert-ir.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/d"

base_so=""
if [ -n "${BASE:-}" ]; then
  mkdir "$tmp/base"
  git archive "$BASE" | tar -x -C "$tmp/base"
  make --no-print-directory -s -C "$tmp/base" dist/acorn.so >/dev/null
  base_so="$tmp/base/dist/acorn"
fi

# ir FILE: the total of a callgrind output file.
ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }

STATEMENT="INSERT INTO posts(title,content) VALUES(''Some title'',?3)"

# bench SO BATCH ROWS [STATEMENT]: instructions per row of one bench_insert run.
bench() {
  local extra="" rows
  [ -z "${4:-}" ] || extra=" AND statement='$4'"
  rows=$(valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=benchWriterLoop \
    sqlite3 -batch -bail :memory: ".load $1" \
    "SELECT rows_written FROM bench_insert WHERE batch=$2 AND rows=$3 AND seconds=86400 AND dir='$tmp/d'$extra;")
  [ "$rows" = "$3" ] || { echo "insert_ir.sh: a run wrote $rows rows of $3" >&2; exit 1; }
  echo $(( $(ir "$tmp/cg") / $3 ))
}

# ref BATCH ROWS: instructions per row of one ref_insert run.
ref() {
  valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=writerLoop \
    ./build/ref_insert "$tmp/d" batch="$1" rows="$2" synchronous=normal journal=wal >/dev/null
  echo $(( $(ir "$tmp/cg") / $2 ))
}

div() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "acorn: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)${BASE:+, base $BASE ($(git rev-parse --short "$BASE"))}"
echo "sqlite3 $(sqlite3 --version | cut -d' ' -f1); valgrind $(valgrind --version); synchronous=normal journal=wal id=integer"
printf '%-22s %10s %10s %10s %10s %8s %8s %8s\n' scenario ref_insert default statement base \
  default/ref stmt/ref base/ref
for sc in "1 thread, autocommit:1:10000" "1 thread, batch 1000:1000:100000"; do
  IFS=: read -r name batch rows <<< "$sc"
  r=$(ref "$batch" "$rows")
  d=$(bench ./dist/acorn "$batch" "$rows")
  s=$(bench ./dist/acorn "$batch" "$rows" "$STATEMENT")
  b=-; bq=-
  if [ -n "$base_so" ]; then b=$(bench "$base_so" "$batch" "$rows"); bq=$(div "$b" "$r"); fi
  printf '%-22s %10s %10s %10s %10s %8s %8s %8s\n' "$name" "$r" "$d" "$s" "$b" \
    "$(div "$d" "$r")" "$(div "$s" "$r")" "$bq"
done
if ls "$tmp/d" | grep -q .; then echo "scratch files left behind:"; ls -la "$tmp/d"; exit 1; fi
