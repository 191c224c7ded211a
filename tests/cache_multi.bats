#!/usr/bin/env bats
# The cache table with several connections and processes on one file.

load test_helper
load cache

@test "another connection's uses arrive late, at its next write, flush or close; its gets never lock" {
  local j
  for j in wal delete; do
    rm -f "$BATS_TEST_TMPDIR"/m.db*
    run python_run "$TESTS/cache_multi.py" "$ACORN" "$BATS_TEST_TMPDIR/m.db" "$j"
    assert_success
    assert_output "late: b,c,d
flushed: b,d,e
gets while A writes: 150 B's hits 152
after A commits: b,e,f
hits after B closed: b=52,e=50,f=0
stats: (30, 3, 30, 153, 0, 3)"
  done
}

# (tests/long/cache.bats runs 3,000 sets per process)
@test "two processes writing one WAL file: capacity holds after every commit and no entry is lost but by eviction" {
  check_two_writers "$(big 300)"
}

@test "uses made in one process move entries ahead of the other process's evictions once flushed" {
  local db="$BATS_TEST_TMPDIR/r.db"
  run acorn_sql "PRAGMA journal_mode=WAL;
CREATE VIRTUAL TABLE t USING cache(capacity = 40);
INSERT INTO t(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9)), ('c', zeroblob(9)), ('d', zeroblob(9));" "$db"
  assert_success
  # another process reads 'a' and exits: its use is written at close
  run acorn_sql "SELECT length(value) FROM t WHERE key = 'a';" "$db"
  assert_success
  assert_output "9"
  run acorn_sql "INSERT INTO t(key, value) VALUES ('e', zeroblob(9));
SELECT group_concat(key), (SELECT hits FROM cache_stats('t')) FROM t;" "$db"
  assert_success
  assert_output "a,c,d,e|1"
}

@test "another connection's DDL: a connection's buffered uses follow its table, and only its table" {
  run python_run "$TESTS/cache_reset.py" "$ACORN" "$BATS_TEST_TMPDIR"
  assert_success
  assert_output "other's DDL: a,c,d
other's DDL, write in BEGIN: a,c,e 3
hits after B closed: a=2,c=1,e=0
B's stats after re-create: (3, 0)
A's listing after B closed: p=0,q=0,r=0
after DROP: cache_read: no such cache table: 't'
after DROP: cache_stats: no such cache table: 't'"
}
