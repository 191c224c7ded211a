#!/usr/bin/env bats
# The cache table after its writer is killed (SIGKILL) at random moments:
# tests/c/cache_crash.c (and cache_pieces_crash.c, for cache_write) starts a
# writer process, kills it, and compares the
# database with the writer's log of acknowledged operations, through SQL
# only (PRAGMA integrity_check, the integrity_check command, the listing,
# the values, cache_stats).  tests/long/cache_crash.bats runs more kills.
# The seed is random unless ACORN_CRASH_SEED is set; a failure prints it.

load test_helper

crash() {
  local seed=${ACORN_CRASH_SEED:-$RANDOM$RANDOM}
  run wrap "$BUILD/cache_crash" "$ACORN" "$BATS_TEST_TMPDIR/c.db" "$BATS_TEST_TMPDIR/c.log" \
    "$1" "$2" "$(big 30)" "$seed" 30
  assert_success
  assert_output_contains "ok $(big 30) kills ($1, $2; seed $seed)"
}

@test "a writer killed at random moments, WAL, nothing evicted: every acknowledged entry is there, exactly" {
  crash keep wal
}

@test "a writer killed at random moments, rollback journal, nothing evicted: every acknowledged entry is there, exactly" {
  crash keep delete
}

@test "a writer killed at random moments, WAL, evicting: the entries are exactly those an LRU of the acknowledged operations keeps" {
  crash evict wal
}

@test "a writer killed at random moments, rollback journal, evicting: the entries are exactly those an LRU of the acknowledged operations keeps" {
  crash evict delete
}

@test "a writer killed at random moments, WAL, policy fifo: the entries are exactly those kept in set order" {
  crash fifo wal
}

# tests/c/cache_pieces_crash.c: a writer of blocks into pieces (cache_write,
# alone and in transactions of a few, some rolled back), killed at random
pieces_crash() {
  local seed=${ACORN_CRASH_SEED:-$RANDOM$RANDOM}
  run wrap "$BUILD/cache_pieces_crash" "$ACORN" "$BATS_TEST_TMPDIR/p.db" "$BATS_TEST_TMPDIR/p.log" \
    "$1" "$(big 30)" "$seed" 30
  assert_success
  assert_output_contains "ok $(big 30) kills ($1; seed $seed)"
}

@test "a writer of pieces killed at random moments, WAL: every acknowledged block is there, a block or transaction in flight all old or all new" {
  pieces_crash wal
}

@test "a writer of pieces killed at random moments, rollback journal: every acknowledged block is there, a block or transaction in flight all old or all new" {
  pieces_crash delete
}
