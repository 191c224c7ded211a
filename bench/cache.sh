#!/usr/bin/env bash
# bench/cache.sh: the cache virtual table against plain tables (C,
# bench/cache_bench.c) at several sizes, then against Python's diskcache
# (bench/cache_diskcache.py), each side by side in one process.
#
#   CACHE_SIZES   entries, default "1000 10000 100000" (make bench-cache-1m
#                 runs 1000000: ~3 GB of databases, minutes)
#   CACHE_RUNS    runs of each size, default 3 (the table shows medians)
#   CACHE_DISKCACHE_KEYS  keys of the diskcache comparison, default 20000;
#                 0 skips it
# Databases go to a temporary directory under $TMPDIR (default /tmp),
# removed at the end; the tables go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s dist/acorn.so build/cache_bench
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-cache-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "bench/cache.sh: $(nproc) cores, $(uname -r), databases in $dir ($(df -T "$dir" | awk 'NR==2{print $2}')), $(date -u +%Y-%m-%dT%H:%MZ)"
for n in ${CACHE_SIZES:-1000 10000 100000}; do
  echo
  ./build/cache_bench ./dist/acorn "$dir" "$n" "${CACHE_RUNS:-3}"
done
keys=${CACHE_DISKCACHE_KEYS:-20000}
if [ "$keys" -gt 0 ]; then
  echo
  "${ACORN_PYTHON:-/usr/bin/python3}" bench/cache_diskcache.py ./dist/acorn "$dir" "$keys" "${CACHE_RUNS:-3}"
fi
