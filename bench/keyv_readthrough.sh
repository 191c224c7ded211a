#!/usr/bin/env bash
# bench/keyv_readthrough.sh: Keyv as a read-through cache under Zipf traffic
# (s = 0.99 and 0.7, 10^4 and 10^5 keys, 1 KiB values, get then set on a
# miss) on acorn's Keyv store against @keyv/sqlite, sides interleaved; and
# Cache.get against a bare cache_get statement (bench/keyv_readthrough.js
# says how).  Needs tests/bindings/node's packages (npm ci there).
#
#   KEYV_SIZES     keys, default "10000 100000"
#   KEYV_REQUESTS  measured requests per side and point, default 40000
#   KEYV_WARMUP    requests per side before measuring, default 20000
#   KEYV_GETS      gets per side in the wrapper's part, default 200000
# Databases go to a temporary directory under $TMPDIR (default /tmp),
# removed at the end; the tables go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
nm=$root/tests/bindings/node/node_modules
for f in better-sqlite3/build/Release/better_sqlite3.node sqlite3/build/Release/node_sqlite3.node \
         keyv/package.json @keyv/sqlite/package.json; do
  [ -f "$nm/$f" ] || { echo "bench/keyv_readthrough.sh: $nm/$f missing: run npm ci in tests/bindings/node" >&2; exit 1; }
done
make -s dist/acorn.so
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-keyv.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# the npm package as make dist-npm lays it out, with this build's acorn.so,
# beside tests/bindings/node's packages
pkg=$dir/node_modules/sqlite-acorn
mkdir -p "$pkg/lib/linux-x64" "$dir/db"
cp ext/packages/npm/*.js "$pkg/"
sed "s/@VERSION@/$(cat VERSION)/g" ext/packages/npm/package.json >"$pkg/package.json"
ln -s "$root/dist/acorn.so" "$pkg/lib/linux-x64/acorn.so"
for e in "$nm"/*; do ln -s "$e" "$dir/node_modules/${e##*/}"; done
cp bench/keyv_readthrough.js "$dir/"
echo "bench/keyv_readthrough.sh: $(nproc) cores, $(uname -r), databases in $dir" \
     "($(df -T "$dir" | awk 'NR==2{print $2}')), $(date -u +%Y-%m-%dT%H:%MZ)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # the sizes are words
node "$dir/keyv_readthrough.js" "$dir/db" ${KEYV_SIZES:-10000 100000}
