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
#   READTHROUGH_RETURNING=1  the hand-written sides with UPDATE/DELETE ...
#                         RETURNING (slower) instead of SELECT, then write
# Databases go to a temporary directory under $TMPDIR (default /tmp),
# removed at the end; the tables go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s dist/acorn.so build/readthrough
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-readthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
sizes=${READTHROUGH_SIZES:-10000 100000}
[ "${READTHROUGH_1M:-0}" = 1 ] && sizes="$sizes 1000000"
value=${READTHROUGH_VALUE:-1024}
echo "bench/readthrough.sh: $(nproc) cores, $(uname -r), databases in $dir" \
     "($(df -T "$dir" | awk 'NR==2{print $2}')), $(date -u +%Y-%m-%dT%H:%MZ)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for n in $sizes; do
  for s in 0.99 0.7; do
    for mode in auto txn; do
      if [ "$mode" = auto ]; then req=${READTHROUGH_REQUESTS:-40000}
      else req=${READTHROUGH_REQUESTS_TXN:-200000}; fi
      echo
      out=$(./build/readthrough ./dist/acorn "$dir" "$n" "$s" "$mode" "$value" "$req")
      printf '%s\n' "$out" | grep -v '^ratios: '
      ratios+=("$(printf '%s\n' "$out" | sed -n 's/^ratios: //p')")
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
