#!/usr/bin/env bats
# The long run of tests/cache_crash.bats: 100 kills per journal mode and
# eviction setting, each writer living up to 150 ms.

load ../test_helper

crash() {
  local seed=${ACORN_CRASH_SEED:-$RANDOM$RANDOM}
  run wrap "$BUILD/cache_crash" "$ACORN" "$BATS_TEST_TMPDIR/c.db" "$BATS_TEST_TMPDIR/c.log" \
    "$1" "$2" "$(big 100)" "$seed" 150
  assert_success
  assert_output_contains "ok $(big 100) kills ($1, $2; seed $seed)"
  echo "# $output" >&3
}

@test "100 kills, WAL, nothing evicted: every acknowledged entry is there, exactly" {
  crash keep wal
}

@test "100 kills, rollback journal, nothing evicted: every acknowledged entry is there, exactly" {
  crash keep delete
}

@test "100 kills, WAL, evicting: the entries are exactly those an LRU of the acknowledged operations keeps" {
  crash evict wal
}

@test "100 kills, rollback journal, evicting: the entries are exactly those an LRU of the acknowledged operations keeps" {
  crash evict delete
}

@test "100 kills, WAL, policy fifo: the entries are exactly those kept in set order" {
  crash fifo wal
}

@test "100 kills, rollback journal, policy fifo: the entries are exactly those kept in set order" {
  crash fifo delete
}

pieces_crash() {
  local seed=${ACORN_CRASH_SEED:-$RANDOM$RANDOM}
  run wrap "$BUILD/cache_pieces_crash" "$ACORN" "$BATS_TEST_TMPDIR/p.db" "$BATS_TEST_TMPDIR/p.log" \
    "$1" "$(big 300)" "$seed" 150
  assert_success
  assert_output_contains "ok $(big 300) kills ($1; seed $seed)"
  echo "# $output" >&3
}

@test "300 kills of a writer of pieces, WAL: every acknowledged block is there, a block or transaction in flight all old or all new" {
  pieces_crash wal
}

@test "300 kills of a writer of pieces, rollback journal: every acknowledged block is there, a block or transaction in flight all old or all new" {
  pieces_crash delete
}
