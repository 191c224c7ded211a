#!/usr/bin/env bash
# bench/as_readthrough.sh: ActiveSupport's cache as a read-through cache
# under Zipf traffic (s = 0.99 and 0.7, 10^4 and 10^5 keys, 1 KiB values,
# read then write on a miss) on AcornStore, bounded at 10% of the keys'
# bytes, against ActiveSupport's FileStore (no bound; its size on disk is
# reported), sides interleaved (bench/as_readthrough.rb says how).  Needs
# Debian's ruby, ruby-sqlite3 and ruby-activesupport (tests/install-deps bench).
#
#   AS_SIZES     keys, default "10000 100000"
#   AS_REQUESTS  measured requests per side and point, default 20000
#   AS_WARMUP    requests per side before measuring, default 10000
# Databases and FileStore directories go to a temporary directory under
# $TMPDIR (default /tmp), removed at the end; the tables go to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ruby -rsqlite3 -ractive_support -e '' 2>/dev/null ||
  { echo "bench/as_readthrough.sh: needs ruby with sqlite3 and activesupport (apt-get install ruby ruby-sqlite3 ruby-activesupport)" >&2; exit 1; }
make -s dist/acorn.so
dir=$(mktemp -d "${TMPDIR:-/tmp}/acorn-as.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# the gem's lib/ as make dist-gem lays it out, with this build's acorn.so
lib=$dir/lib
mkdir -p "$lib/sqlite_acorn" "$lib/active_support/cache" "$dir/db"
sed "s/@VERSION@/$(cat VERSION)/g" ext/packages/ruby/lib/sqlite_acorn.rb >"$lib/sqlite_acorn.rb"
cp ext/packages/ruby/lib/active_support/cache/acorn_store.rb "$lib/active_support/cache/"
ln -s "$root/dist/acorn.so" "$lib/sqlite_acorn/acorn.so"
echo "bench/as_readthrough.sh: $(nproc) cores, $(uname -r), files in $dir" \
     "($(df -T "$dir" | awk 'NR==2{print $2}')), $(date -u +%Y-%m-%dT%H:%MZ)," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # the sizes are words
ruby -I "$lib" bench/as_readthrough.rb "$dir/db" ${AS_SIZES:-10000 100000}
