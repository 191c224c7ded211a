#!/usr/bin/env bats
# acorn on a 3-node dqlite cluster (Raft, WAL frames replicated), with the
# leader killed: `make test-cluster`.  The tests run in order and share one
# cluster; state that must outlive a test is kept in files in $CLUSTER_DIR.
#
# The data: a cache table c of capacity 10000 bytes whose entries all take
# 100 bytes (an INTEGER key counts 8, the value is 92 characters), so it
# holds exactly 100 entries and eviction is easy to predict; a WITHOUT ROWID
# table of uuid7 ids numbered in the order they were made.

load ../test_helper
load cluster

setup_file() {
  export CLUSTER_DIR="${ACORN_CLUSTER_DIR:-$BATS_FILE_TMPDIR/cluster}"
  export ACORN_AUTO="$ROOT/dist/acorn-auto.so"
  [ -f "$ACORN_AUTO" ] || { echo "$ACORN_AUTO missing: run make auto" >&2; return 1; }
  command -v dqlite-demo >/dev/null || { echo "dqlite-demo missing: tests/install-deps cluster" >&2; return 1; }
  cluster_start 3
}

teardown_file() {
  cluster_stop
}

# Make dqlite replicate what the leader committed outside a client's write.
# dqlite sends a transaction's pages to the followers when an exec request
# (a statement that is not a SELECT) finishes; the cache writes recency in
# transactions of its own when a connection closes, and those pages go out
# with the next exec request on the leader.
settle() {
  cluster_sql "DELETE FROM ids WHERE 0"
}

# snapshot FILE: everything the failover tests compare.  Nothing here reads
# a cache value, so taking it is not a use and changes nothing.
snapshot() {
  {
    cluster_sql "SELECT key, size, created, last_used, hits, expires FROM c ORDER BY key"
    cluster_sql "SELECT * FROM cache_stats('c')"
    cluster_sql "SELECT hex(id), n FROM ids ORDER BY n"
  } > "$1"
}

leader_node() {
  cluster_node "$(cluster_leader)"
}

@test "the leader runs acorn's functions, registered by the preload library" {
  run cluster_sql "SELECT uuid_version(uuid7()), acorn_version() = 'v$(cat "$ROOT/VERSION")'"
  assert_success
  assert_output "7|1"
}

@test "a cache table filled past capacity through the cluster evicts down to capacity" {
  cluster_sql "CREATE VIRTUAL TABLE c USING cache(capacity = 10000)"
  cluster_sql "INSERT INTO c(key, value) WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 300) SELECT x, printf('%092d', x) FROM s"
  run cluster_sql "SELECT * FROM cache_stats('c')"
  assert_success
  assert_output "10000|100|10000|0|0|200|0"
  run cluster_sql "SELECT min(key), max(key), count(*) FROM c"
  assert_output "201|300|100"
  # The ten oldest entries are used: they become the most recent.
  run cluster_sql "SELECT count(value) FROM c WHERE key IN (201, 202, 203, 204, 205, 206, 207, 208, 209, 210)"
  assert_output "10"
}

@test "uuid7_blob() ids go into a WITHOUT ROWID table through the cluster, in order" {
  cluster_sql "CREATE TABLE ids(id BLOB PRIMARY KEY, n INTEGER UNIQUE) WITHOUT ROWID"
  cluster_sql "INSERT INTO ids(id, n) WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < 1000) SELECT uuid7_blob(), x FROM s"
  local i
  for i in $(seq 1001 1020); do
    cluster_sql "INSERT INTO ids(id, n) VALUES (uuid7_blob(), $i)"
  done
  run cluster_sql "SELECT count(*), count(DISTINCT id), sum(uuid_version(id) = 7) FROM ids"
  assert_output "1020|1020|1020"
  run cluster_sql "SELECT count(*) FROM ids a JOIN ids b ON b.n = a.n + 1 WHERE b.id <= a.id"
  assert_output "0"
}

@test "bench_insert runs on the leader, in scratch files of its own, and replicates nothing" {
  local schema
  schema=$(cluster_sql "SELECT type, name FROM sqlite_master ORDER BY name")
  run cluster_sql "SELECT rows_written, writes_per_sec > 0 FROM bench_insert WHERE rows = 2000"
  assert_success
  assert_output "2000|1"
  run cluster_sql "SELECT type, name FROM sqlite_master ORDER BY name"
  assert_output "$schema"
  run bash -c "ls '$CLUSTER_DIR'/n*/tmp | grep -c acorn-bench"
  assert_output "0"
}

@test "kill -9 of the leader: another node takes over" {
  settle
  snapshot "$CLUSTER_DIR/before-kill"
  leader_node > "$CLUSTER_DIR/killed"
  cluster_kill "$(cat "$CLUSTER_DIR/killed")" KILL
  cluster_wait_leader
  run leader_node
  assert_success
  [ "$output" != "$(cat "$CLUSTER_DIR/killed")" ] || fail "node $output still leads"
}

@test "the new leader has every committed entry and id, with the same recency and counters" {
  snapshot "$CLUSTER_DIR/after-kill"
  run diff "$CLUSTER_DIR/before-kill" "$CLUSTER_DIR/after-kill"
  assert_success
  run grep -c . "$CLUSTER_DIR/after-kill"
  assert_output "1121"    # 100 entries, 1 stats row, 1020 ids
}

@test "on the new leader every cache invariant and SQLite's integrity check hold" {
  run cluster_sql "INSERT INTO c(c) VALUES ('integrity_check')"
  assert_success
  run cluster_sql "SELECT * FROM pragma_integrity_check"
  assert_output "ok"
  run cluster_sql "SELECT bytes <= capacity FROM cache_stats('c')"
  assert_output "1"
}

@test "new sets on the new leader evict the least recently used entries" {
  cluster_sql "INSERT INTO c(key, value) WITH RECURSIVE s(x) AS (SELECT 1001 UNION ALL SELECT x + 1 FROM s WHERE x < 1050) SELECT x, printf('%092d', x) FROM s"
  # 50 new entries push out the 50 least recently used: 211..260 (201..210
  # were used after they were set, so they are newer than 211..300).
  run cluster_sql "SELECT group_concat(key, ' ') FROM (SELECT key FROM c ORDER BY key)"
  assert_output "$(echo $(seq 201 210) $(seq 261 300) $(seq 1001 1050))"
  run cluster_sql "SELECT * FROM cache_stats('c')"
  assert_output "10000|100|10000|10|0|250|0"
  run cluster_sql "INSERT INTO c(c) VALUES ('integrity_check')"
  assert_success
}

@test "ids made by the new leader sort after the old leader's (one machine, one clock)" {
  cluster_sql "INSERT INTO ids(id, n) WITH RECURSIVE s(x) AS (SELECT 2001 UNION ALL SELECT x + 1 FROM s WHERE x < 2100) SELECT uuid7_blob(), x FROM s"
  run cluster_sql "SELECT (SELECT min(id) FROM ids WHERE n > 2000) > (SELECT max(id) FROM ids WHERE n <= 2000)"
  assert_output "1"
}

@test "the killed node restarts and rejoins as a voter" {
  local k
  k=$(cat "$CLUSTER_DIR/killed")
  cluster_node_start "$k"
  cluster_wait cluster_knows_leader "$k"
  cluster_wait cluster_voters_are 3
}

@test "uses buffered in a connection cut off by the leader's crash are lost: recency only, never entries" {
  local l
  settle
  mkfifo "$CLUSTER_DIR/session.in"
  cluster_shell "$(cluster_servers)" < "$CLUSTER_DIR/session.in" > "$CLUSTER_DIR/session.out" 2>&1 3>&- &
  echo $! > "$CLUSTER_DIR/session.pid"
  exec 7> "$CLUSTER_DIR/session.in"
  echo "SELECT count(value) FROM c WHERE key IN (261, 262, 263);" >&7
  cluster_wait grep -q '3$' "$CLUSTER_DIR/session.out"
  # That connection holds three uses in memory; no other connection sees them.
  run cluster_sql "SELECT sum(hits) FROM c WHERE key IN (261, 262, 263)"
  assert_output "0"
  snapshot "$CLUSTER_DIR/before-crash"
  l=$(leader_node)
  cluster_kill "$l" KILL
  cluster_wait_leader
  exec 7>&-
  snapshot "$CLUSTER_DIR/after-crash"
  run diff "$CLUSTER_DIR/before-crash" "$CLUSTER_DIR/after-crash"
  assert_success
  run cluster_sql "SELECT count(*), sum(hits) FROM c WHERE key IN (261, 262, 263)"
  assert_output "3|0"
  cluster_node_start "$l"
  cluster_wait cluster_knows_leader "$l"
  cluster_wait cluster_voters_are 3
}

@test "the restarted node caught up: once it leads it has everything, and eviction goes on" {
  local k i l
  k=$(cat "$CLUSTER_DIR/killed")
  # dqlite serves SQL only from the leader: fail the leader over (it restarts
  # as a follower) until node k leads.  Each failover must lose nothing.
  for (( i = 0; i < 12; i++ )); do
    l=$(leader_node)
    [ "$l" = "$k" ] && break
    settle
    snapshot "$CLUSTER_DIR/before-$i"
    cluster_kill "$l" KILL
    cluster_wait_leader
    snapshot "$CLUSTER_DIR/after-$i"
    run diff "$CLUSTER_DIR/before-$i" "$CLUSTER_DIR/after-$i"
    assert_success
    cluster_node_start "$l"
    cluster_wait cluster_knows_leader "$l"
  done
  run leader_node
  assert_output "$k"
  run cluster_sql "SELECT count(*), min(n), max(n) FROM ids"
  assert_output "1120|1|2100"
  run cluster_sql "SELECT * FROM cache_stats('c')"
  assert_output "10000|100|10000|10|0|250|0"
  cluster_sql "INSERT INTO c(key, value) VALUES (5000, printf('%092d', 5000))"
  run cluster_sql "SELECT count(*), min(key) FROM c"
  assert_output "100|201"
  run cluster_sql "SELECT key FROM c WHERE key BETWEEN 261 AND 262"
  assert_output "262"
  run cluster_sql "INSERT INTO c(c) VALUES ('integrity_check')"
  assert_success
  run cluster_sql "SELECT * FROM pragma_integrity_check"
  assert_output "ok"
}
