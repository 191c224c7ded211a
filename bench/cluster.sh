#!/usr/bin/env bash
# bench/cluster.sh [ROUNDS] [OPS]: acorn through a 3-node dqlite cluster on
# 127.0.0.1 (dqlite-demo nodes with dist/acorn-auto.so preloaded, as in
# make test-cluster), timed from a client: the dqlite shell.
#
# What runs, each kind timed ROUNDS times (default 3), interleaved (the order
# of the two kinds flips every round), in the same cluster:
#   sets, one per transaction   OPS (default 200) statements
#       cache:  INSERT INTO c(key, value) VALUES (k, randomblob(100))
#       plain:  INSERT OR REPLACE INTO p(key, value) VALUES (k, randomblob(100))
#   sets, 100 per transaction   OPS*10 rows, 100 per statement:
#       ... SELECT value, randomblob(100) FROM json_each('[k1,k2,...]')
#   ids, one per transaction    OPS statements
#       uuid7:  INSERT INTO i7(id) VALUES (uuid7_blob())
#       random: INSERT INTO i4(id) VALUES (randomblob(16))
#   ids, 10000 per transaction  ROUNDS statements of 10000 rows each way
# Keys are drawn from 1..2000, the same sequence for cache and plain in a
# round.  The cache holds 1000 of the 2000 keys (capacity 108000 bytes,
# 108 bytes an entry), and both tables start full, so cache sets evict in
# about half the cases and plain sets replace.  Each line the shell reads is
# one transaction on the leader and one Raft commit; the time of a batch
# includes starting the shell (the "round trip" line gives that cost).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds=${1:-3}
ops=${2:-200}

tests/install-deps cluster      # go-dqlite: dqlite-demo and the dqlite shell
make -s dist/acorn.so dist/acorn-auto.so

export CLUSTER_DIR ACORN_AUTO="$root/dist/acorn-auto.so"
CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/acorn-cluster-bench.XXXXXX")
# shellcheck source=tests/cluster/cluster.bash
. "$root/tests/cluster/cluster.bash"
trap 'cluster_stop; rm -rf "$CLUSTER_DIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
trap 'exit 141' PIPE

cluster_start 3

# keys SEED N: N keys in 1..2000, the same for the same SEED.
keys() {
  awk -v seed="$1" -v n="$2" 'BEGIN { srand(seed); for (i = 0; i < n; i++) print int(rand() * 2000) + 1 }'
}

lines() {  # lines N TEXT: TEXT N times
  awk -v n="$1" -v t="$2" 'BEGIN { for (i = 0; i < n; i++) print t }'
}

# timed FILE: feed FILE to one shell on the cluster; print nanoseconds.
timed() {
  local t0 t1 out
  t0=$(date +%s%N)
  out=$(cluster_shell "$(cluster_servers)" < "$1" 2>&1)
  t1=$(date +%s%N)
  if grep -q 'Error' <<< "$out"; then
    echo "bench/cluster.sh: $(grep -m1 Error <<< "$out")" >&2
    return 1
  fi
  echo $(( t1 - t0 ))
}

all=$(seq -s, 1 2000)
cluster_sql "CREATE VIRTUAL TABLE c USING cache(capacity = 108000)"
cluster_sql "CREATE TABLE p(key INTEGER PRIMARY KEY, value BLOB)"
cluster_sql "CREATE TABLE i7(id BLOB PRIMARY KEY) WITHOUT ROWID"
cluster_sql "CREATE TABLE i4(id BLOB PRIMARY KEY) WITHOUT ROWID"
cluster_sql "INSERT INTO c(key, value) SELECT value, randomblob(100) FROM json_each('[$all]')"
cluster_sql "INSERT INTO p(key, value) SELECT value, randomblob(100) FROM json_each('[$all]')"

w="$CLUSTER_DIR/work"
mkdir -p "$w"
declare -A ns=() count=()
add() {   # add NAME NANOSECONDS COUNT
  ns[$1]=$(( ${ns[$1]:-0} + $2 ))
  count[$1]=$(( ${count[$1]:-0} + $3 ))
}

for (( r = 1; r <= rounds; r++ )); do
  # One statement per line: one transaction each.
  keys "$r" "$ops" | awk '{ print "INSERT INTO c(key, value) VALUES (" $1 ", randomblob(100))" }' > "$w/cache1"
  keys "$r" "$ops" | awk '{ print "INSERT OR REPLACE INTO p(key, value) VALUES (" $1 ", randomblob(100))" }' > "$w/plain1"
  # 100 keys per statement.
  keys "$(( r + 1000 ))" "$(( ops * 10 ))" |
    awk '{ printf "%s%s", (NR % 100 == 1 ? "" : ","), $1; if (NR % 100 == 0) print "" }' > "$w/keys100"
  awk '{ print "INSERT INTO c(key, value) SELECT value, randomblob(100) FROM json_each(\x27[" $0 "]\x27)" }' "$w/keys100" > "$w/cache100"
  awk '{ print "INSERT OR REPLACE INTO p(key, value) SELECT value, randomblob(100) FROM json_each(\x27[" $0 "]\x27)" }' "$w/keys100" > "$w/plain100"
  lines "$ops" "INSERT INTO i7(id) VALUES (uuid7_blob())" > "$w/id7"
  lines "$ops" "INSERT INTO i4(id) VALUES (randomblob(16))" > "$w/id4"
  echo "INSERT INTO i7(id) WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 10000) SELECT uuid7_blob() FROM s" > "$w/bulk7"
  echo "INSERT INTO i4(id) WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 10000) SELECT randomblob(16) FROM s" > "$w/bulk4"
  lines "$ops" "SELECT 1" > "$w/noop"

  if (( r % 2 )); then order=(a b); else order=(b a); fi
  for o in "${order[@]}"; do
    if [ "$o" = a ]; then
      add cache1 "$(timed "$w/cache1")" "$ops"
      add cache100 "$(timed "$w/cache100")" "$(( ops * 10 ))"
      add id7 "$(timed "$w/id7")" "$ops"
      add bulk7 "$(timed "$w/bulk7")" 10000
    else
      add plain1 "$(timed "$w/plain1")" "$ops"
      add plain100 "$(timed "$w/plain100")" "$(( ops * 10 ))"
      add id4 "$(timed "$w/id4")" "$ops"
      add bulk4 "$(timed "$w/bulk4")" 10000
    fi
  done
  add noop "$(timed "$w/noop")" "$ops"
done

# The cache is still exact after all that.
cluster_sql "INSERT INTO c(c) VALUES ('integrity_check')"
stats=$(cluster_sql "SELECT entries, bytes, capacity, evictions FROM cache_stats('c')")

rate() { awk -v c="${count[$1]}" -v t="${ns[$1]}" 'BEGIN { printf "%.0f", c * 1e9 / t }'; }
ratio() {
  awk -v c1="${count[$1]}" -v t1="${ns[$1]}" -v c2="${count[$2]}" -v t2="${ns[$2]}" \
    'BEGIN { printf "%.2f", (c1 / t1) / (c2 / t2) }'
}

echo "bench/cluster.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, $(uname -r)," \
     "dqlite-demo from go-dqlite $(dpkg-query -W -f='${Version}' go-dqlite 2>/dev/null || echo '?')," \
     "libdqlite0 $(dpkg-query -W -f='${Version}' libdqlite0 2>/dev/null || echo '?')," \
     "SQLite $(sqlite3 --version | cut -d' ' -f1), 3 nodes on 127.0.0.1, data in $(df -T "$CLUSTER_DIR" | awk 'NR==2{print $2}')"
echo "rounds $rounds, interleaved; per round: $ops single-statement transactions per kind, $(( ops * 10 )) rows in statements of 100, 10000 ids in one statement"
printf '%-44s %8s %9s %7s\n' "workload (through the leader)" "ops" "ops/s" "ratio"
printf '%-44s %8s %9s %7s\n' "cache set, 1 per transaction" "${count[cache1]}" "$(rate cache1)" "$(ratio cache1 plain1)"
printf '%-44s %8s %9s %7s\n' "plain INSERT OR REPLACE, 1 per transaction" "${count[plain1]}" "$(rate plain1)" "1.00"
printf '%-44s %8s %9s %7s\n' "cache set, 100 per transaction" "${count[cache100]}" "$(rate cache100)" "$(ratio cache100 plain100)"
printf '%-44s %8s %9s %7s\n' "plain INSERT OR REPLACE, 100 per transaction" "${count[plain100]}" "$(rate plain100)" "1.00"
printf '%-44s %8s %9s %7s\n' "uuid7_blob() id, 1 per transaction" "${count[id7]}" "$(rate id7)" "$(ratio id7 id4)"
printf '%-44s %8s %9s %7s\n' "randomblob(16) id, 1 per transaction" "${count[id4]}" "$(rate id4)" "1.00"
printf '%-44s %8s %9s %7s\n' "uuid7_blob() id, 10000 per transaction" "${count[bulk7]}" "$(rate bulk7)" "$(ratio bulk7 bulk4)"
printf '%-44s %8s %9s %7s\n' "randomblob(16) id, 10000 per transaction" "${count[bulk4]}" "$(rate bulk4)" "1.00"
printf '%-44s %8s %9s %7s\n' "round trip: SELECT 1, no Raft commit" "${count[noop]}" "$(rate noop)" ""
echo "cache after the run (entries|bytes|capacity|evictions): $stats; integrity_check passed"
