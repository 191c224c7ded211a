#!/usr/bin/env bats
# The cache table under load from several processes on one WAL file:
# tests/c/cache_load.c runs 4 processes of random sets, gets and deletes
# with eviction, every read verified against its key, then checks the
# invariants.  tests/long/cache_load.bats runs it for 20 seconds.

load test_helper

@test "cache_read while another process sets and deletes the key: the value or NULL, never an error" {
  local db="$BATS_TEST_TMPDIR/r.db" n
  n=$(big 2000)
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;" "$db"
  assert_success
  {
    printf '.load %s\n.timeout 10000\nPRAGMA synchronous=OFF;\n' "$ACORN"
    yes "INSERT INTO t(key, value) VALUES ('k', zeroblob(100)); DELETE FROM t WHERE key = 'k';" \
      | head -n "$n"
  } >"$BATS_TEST_TMPDIR/w.sql"
  {
    printf '.load %s\n.timeout 10000\n' "$ACORN"
    yes "SELECT quote(length(cache_read('t', 'k', 0, 1000)));" | head -n $(( 5 * n ))
  } >"$BATS_TEST_TMPDIR/r.sql"
  wrap "$SQLITE3" -batch "$db" <"$BATS_TEST_TMPDIR/w.sql" >"$BATS_TEST_TMPDIR/w.out" 2>&1 &
  local pid=$!
  run wrap "$SQLITE3" -batch "$db" <"$BATS_TEST_TMPDIR/r.sql"
  local reader=$status
  wait_pid "$pid"
  [ "$status" -eq 0 ] || fail "writer: $(head "$BATS_TEST_TMPDIR/w.out")"
  status=$reader
  # a line per read: the value's length or NULL (e.g. no "no such rowid")
  [ -z "$(grep -v -x -e 100 -e NULL <<<"$output" | head -5)" ] \
    || fail "$(grep -v -x -e 100 -e NULL <<<"$output" | head -5)"
  [ "$status" -eq 0 ] || fail "status $status"
  [ "$(wc -l <<<"$output")" -eq $(( 5 * n )) ]
}

@test "4 processes on one WAL file for 3 s: every read verified, invariants hold after" {
  # a smaller table where the work is slower (valgrind), so it still evicts
  local cap=$(( 48000 / ${ACORN_SCALE:-1} ))
  [ "$cap" -ge 4000 ] || cap=4000
  run wrap "$BUILD/cache_load" "$ACORN" "$BATS_TEST_TMPDIR/l.db" 4 3 "${ACORN_LOAD_SEED:-$RANDOM}" "$cap"
  assert_success
  assert_output_contains "ok 4 processes"
}
