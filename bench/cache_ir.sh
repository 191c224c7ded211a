#!/usr/bin/env bash
# bench/cache_ir.sh: the instructions the cache's two hot operations execute,
# a get and an evicting set, for this build against another revision's build
# in the same run.
#
# Wall-clock rates (bench/cache.sh) move by 2x from run to run on a machine
# shared with other work; instruction counts do not.  Each run of
# build/cache_ir (bench/cache_ir.c) loads one acorn.so, fills a cache table
# with 4000 entries of 1 KiB (keys 'k%08d', journal_mode=WAL,
# synchronous=NORMAL, lru), sets its capacity to exactly what they hold, and
# does N operations of one kind in opLoop, the only function callgrind
# collects (--toggle-collect=opLoop: SQLite's work and acorn's under it,
# nothing of the fill or the close).  Operations:
#   get          SELECT value FROM t WHERE key=? of a stored key (a hit),
#                prepared once, stepped and reset; its recency stays
#                buffered, so it writes nothing
#   set          INSERT INTO t(key, value) VALUES(?, ?) of a new key,
#                autocommit; each evicts one entry (one never read)
#   set, txn     the same in transactions of 100 (BEGIN/COMMIT counted)
#   set, used    as set, after every entry was read once and that recency
#                written: each eviction takes an entry with a recency record
#   set, stored  INSERT of a stored key, autocommit: each replaces an entry
#                of the same size, evicting none
#   fifo set, fifo set txn   set and set, txn on a table with policy = fifo
#   cache_set, cache_set txn, fifo cache_set txn   the same sets made by
#                SELECT cache_set('t', ?, ?): this build's function against
#                the base build's INSERT (a base without cache_set has only
#                the INSERT)
# Then this build against a FIFO cache written by hand in plain SQLite
# (build/hand_ir, bench/hand_ir.c: the b1 side of bench/readthrough.sh) on
# the same operations under policy = fifo: a get (SELECT and cache_get
# against SELECT v FROM kv WHERE k = ?), an evicting set in autocommit and
# in transactions of 100.
# Printed: instructions per operation of this build, of the base build, and
# their ratio (this/base: below 1.000 this build does less work); then the
# same without the C library's allocator (the instructions inside malloc,
# free, realloc and calloc).  The allocator's cost per call depends on the
# heap's layout, which any change of what the library allocates at setup
# shifts: two builds that make exactly the same calls (counted with
# callgrind) differed by up to 0.5% in total, all of it inside malloc.  The
# second ratio is the work acorn and SQLite do.
# The noise floor of the totals: BASE=HEAD (the same source, built again in
# the temporary directory, with another commit string and date) gave
# 0.995..1.000.
#
#   bash bench/cache_ir.sh                (this build against the commit that
#                                          made VERSION 0.2.0)
#   BASE=main bash bench/cache_ir.sh      (against main's build)
#   CACHE_IR_OPS=4000 bash bench/cache_ir.sh   (operations per run, default
#                                          2000, at most 4000)
# The base is built from `git archive BASE` in a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "cache_ir.sh: valgrind not found (tests/install-deps bench)"; exit 1; }
if [ -z "${BASE:-}" ]; then
  BASE=$(git log -1 --format=%h --grep='^VERSION 0\.2\.0:' 2>/dev/null || true)
  [ -n "$BASE" ] || { echo "cache_ir.sh: no commit 'VERSION 0.2.0:' in this history; give BASE=<rev>"; exit 1; }
fi
base_rev=$(git rev-parse --short "$BASE^{commit}") || { echo "cache_ir.sh: BASE=$BASE is not a revision"; exit 1; }
make --no-print-directory -s dist/acorn.so build/cache_ir build/hand_ir
tmp=$(mktemp -d "${TMPDIR:-/tmp}/acorn-cache-ir.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/d" "$tmp/base"
git archive "$BASE" | tar -x -C "$tmp/base"
make --no-print-directory -s -C "$tmp/base" dist/acorn.so >/dev/null
base_so="$tmp/base/dist/acorn"

N=${CACHE_IR_OPS:-2000}
ENTRIES=4000

# ir FILE: the total of a callgrind output file.
ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }

# run SO OP POLICY SET: instructions per operation of one cache_ir run (a
# fresh database; POLICY lru or fifo, SET insert or function).
run() {
  local n
  rm -f "$tmp/d"/*
  n=$(CACHE_IR_POLICY=$3 CACHE_IR_SET=$4 CACHE_IR_GET=${CACHE_IR_GET:-select} valgrind -q --tool=callgrind \
    --callgrind-out-file="$tmp/cg" --toggle-collect=opLoop \
    ./build/cache_ir "$1" "$tmp/d" "$2" "$N" "$ENTRIES")
  [ "$n" = "$N" ] || { echo "cache_ir.sh: a $2 run did $n operations of $N" >&2; exit 1; }
  local total alloc
  total=$(ir "$tmp/cg")
  alloc=$(callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null \
    | awk '/malloc\.c:(malloc|free|realloc|calloc) \[/ {gsub(",", "", $1); s += $1} END {print s+0}')
  echo "$(( total / N )) $(( (total - alloc) / N ))"
}

div() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "acorn: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- ext 2>/dev/null || echo ' (ext/ modified)'), base $BASE ($base_rev)"
echo "sqlite3 $(sqlite3 --version | cut -d' ' -f1); valgrind $(valgrind --version); $ENTRIES entries of 1 KiB, $N operations a run, journal=wal synchronous=normal policy=lru"
printf '%-20s %12s %12s %10s   %13s %13s %10s\n' operation "this ir/op" "base ir/op" this/base \
  "this ex-alloc" "base ex-alloc" this/base
for sc in "get:get:lru:insert" "set:set:lru:insert" "set, txn:set-txn:lru:insert" \
          "set, used:set-used:lru:insert" "set, stored:set-stored:lru:insert" \
          "fifo set:set:fifo:insert" "fifo set txn:set-txn:fifo:insert" \
          "cache_set:set:lru:function" "cache_set txn:set-txn:lru:function" \
          "fifo cache_set txn:set-txn:fifo:function"; do
  IFS=: read -r name op policy set <<< "$sc"
  read -r t tn <<< "$(run ./dist/acorn "$op" "$policy" "$set")"
  read -r b bn <<< "$(run "$base_so" "$op" "$policy" insert)"
  printf '%-20s %12s %12s %10s   %13s %13s %10s\n' "$name" "$t" "$b" "$(div "$t" "$b")" \
    "$tn" "$bn" "$(div "$tn" "$bn")"
done

# hand OP: instructions per operation of one hand_ir run (a fresh database).
hand() {
  local n
  rm -f "$tmp/d"/*
  n=$(valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect=opLoop \
    ./build/hand_ir "$tmp/d" "$1" "$N" "$ENTRIES")
  [ "$n" = "$N" ] || { echo "cache_ir.sh: a hand $1 run did $n operations of $N" >&2; exit 1; }
  echo $(( $(ir "$tmp/cg") / N ))
}

echo
echo "this build under policy = fifo against a FIFO written by hand (hand/this: below 1.000 the cache does more work)"
printf '%-20s %12s %12s %10s\n' operation "this ir/op" "hand ir/op" hand/this
for sc in "get, SELECT:get:fifo:insert:select" "get, cache_get:get:fifo:insert:function" \
          "set:set:fifo:insert:select" "set, txn:set-txn:fifo:insert:select"; do
  IFS=: read -r name op policy set get <<< "$sc"
  read -r t _ <<< "$(CACHE_IR_GET=$get run ./dist/acorn "$op" "$policy" "$set")"
  h=$(hand "$op")
  printf '%-20s %12s %12s %10s\n' "$name" "$t" "$h" "$(div "$h" "$t")"
done
