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
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${ACORN_PYTHON:-/usr/bin/python3}
make -s dist/acorn.so
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-py-readthrough.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/pkg/sqlite_acorn"
for f in ext/packages/python/sqlite_acorn/*.py; do
  sed "s/@VERSION@/$(cat VERSION)/g" "$f" >"$dir/pkg/sqlite_acorn/${f##*/}"
done
cp dist/acorn.so "$dir/pkg/sqlite_acorn/acorn.so"
echo "bench/py_readthrough.sh: $(nproc) cores, $(uname -r), databases in $dir" \
     "($(df -T "$dir" | awk 'NR==2{print $2}')), $(date -u +%Y-%m-%dT%H:%MZ)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086  # the sizes are words
PYTHONPATH="$dir/pkg" "$PYTHON" bench/py_readthrough.py "$dir" ${PY_READTHROUGH_SIZES:-10000 100000}
