#!/usr/bin/env bash
# bench/get_ir.sh: the instructions a cache get executes, in its two forms,
# against a plain table's get of the same keys and values in the same file,
# for this build and for another revision's build, in the same run.
#
# Instruction counts (callgrind), not wall-clock time: they do not move with
# the machine's other work.  For each size, build/get_ir (bench/get_ir.c)
# fills one file, outside valgrind, with a cache table t and a plain table
# kv(k TEXT PRIMARY KEY, v BLOB) holding the same ENTRIES keys 'k%08d' and
# values (journal_mode=WAL, synchronous=NORMAL, lru, autoflush=off so no run
# writes); then each run opens it, does 16 gets to warm up and N gets of
# stored keys in a pseudo-random order in opLoop, the only function
# callgrind collects (--toggle-collect=opLoop).  Forms:
#   plain    SELECT v FROM kv WHERE k=?            (the reference)
#   select   SELECT value FROM t WHERE key=?
#   func     SELECT cache_get('t', ?)               (not in builds without it)
# Printed per size: instructions per get of each, and each cache form's
# speed relative to the plain get (plain ir / form ir: 1.000 is as fast as
# the plain table, higher is better), for this build and the base build.
#
#   bash bench/get_ir.sh                       (BASE: the commit that made
#                                               VERSION 0.2.0)
#   BASE=0b33636 bash bench/get_ir.sh
#   GET_IR_SIZES="1000 100000" GET_IR_OPS=500 GET_IR_VALUE=100 bash bench/get_ir.sh
# Defaults: sizes 1000 10000 100000 1000000, 2000 gets a run (fewer if the
# size is smaller), 1 KiB values; the 10^6 file takes about 2 GB in $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "get_ir.sh: valgrind not found (tests/install-deps bench)"; exit 1; }
if [ -z "${BASE:-}" ]; then
  BASE=$(git log -1 --format=%h --grep='^VERSION 0\.2\.0:' 2>/dev/null || true)
  [ -n "$BASE" ] || { echo "get_ir.sh: no commit 'VERSION 0.2.0:' in this history; give BASE=<rev>"; exit 1; }
fi
base_rev=$(git rev-parse --short "$BASE^{commit}") || { echo "get_ir.sh: BASE=$BASE is not a revision"; exit 1; }
make --no-print-directory -s dist/acorn.so build/get_ir
tmp=$(mktemp -d "${TMPDIR:-/tmp}/acorn-get-ir.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/d" "$tmp/base"
git archive "$BASE" | tar -x -C "$tmp/base"
make --no-print-directory -s -C "$tmp/base" dist/acorn.so >/dev/null
base_so="$tmp/base/dist/acorn"
base_has_func=0
if git grep -q '"cache_get"' "$BASE" -- ext 2>/dev/null; then base_has_func=1; fi

SIZES=${GET_IR_SIZES:-1000 10000 100000 1000000}
OPS=${GET_IR_OPS:-2000}
VALUE=${GET_IR_VALUE:-1024}

ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }

# run SO FORM N ENTRIES: instructions per get of one run.
run() {
  local n total
  n=$(valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=opLoop \
    ./build/get_ir run "$1" "$tmp/d" "$2" "$3" "$4")
  [ "$n" = "$3" ] || { echo "get_ir.sh: a $2 run did $n gets of $3" >&2; exit 1; }
  total=$(ir "$tmp/cg")
  echo $(( total / $3 ))
}

div() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "acorn: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- ext 2>/dev/null || echo ' (ext/ modified)'), base $BASE ($base_rev)"
echo "sqlite3 $(sqlite3 --version | cut -d' ' -f1); valgrind $(valgrind --version); values of $VALUE bytes, journal=wal synchronous=normal policy=lru"
printf '%-9s %-6s %9s %9s %9s %9s   %12s %12s\n' entries build "plain" "select" "func" gets \
  "plain/select" "plain/func"
for size in $SIZES; do
  rm -f "$tmp/d"/*
  ./build/get_ir fill ./dist/acorn "$tmp/d" "$size" "$VALUE" >/dev/null
  n=$OPS
  [ "$n" -le $(( size - 16 )) ] || n=$(( size - 16 ))
  for b in this base; do
    if [ $b = this ]; then so=./dist/acorn; hf=1; else so=$base_so; hf=$base_has_func; fi
    p=$(run "$so" plain "$n" "$size")
    s=$(run "$so" select "$n" "$size")
    if [ "$hf" = 1 ]; then f=$(run "$so" func "$n" "$size"); rf=$(div "$p" "$f"); else f=-; rf=-; fi
    printf '%-9s %-6s %9s %9s %9s %9s   %12s %12s\n' "$size" "$b" "$p" "$s" "$f" "$n" \
      "$(div "$p" "$s")" "$rf"
  done
done
