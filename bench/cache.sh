#!/usr/bin/env bash
# bench/cache.sh [RUNS] [KEYS]: the cache virtual table against a plain
# table (see bench/cache_bench.c).  Databases go to a temporary directory on
# the same file system as /tmp; the table goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s dist/acorn.so build/cache_bench
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-cache-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "bench/cache.sh: $(nproc) cores, $(uname -r), databases in $dir ($(df -T "$dir" | awk 'NR==2{print $2}'))"
./build/cache_bench ./dist/acorn "$dir" "${1:-5}" "${2:-100000}"
