#!/usr/bin/env bats
# Allocation failures (tests/c/acorn_oom.c: acorn built in, a wrapped
# allocator that fails the Nth allocation).  Every failure must surface as
# SQLITE_NOMEM "out of memory" (or, for bench_insert's own scratch
# connections, as its run's error saying so), leave every cache table's
# invariants intact, and leak nothing.  `make test-oom` fails every
# allocation in turn under ASan; this suite runs a sample of them,
# tests/long/oom.bats the small phases in full.

load test_helper
load oom

@test "a sample of allocation failures across every feature: SQLITE_NOMEM, invariants intact" {
  local stride=$(( 307 * ${ACORN_SCALE:-1} ))
  oom_dir
  run wrap "$BUILD/acorn_oom" "$OOM_DIR" -stride "$stride" \
    -start "$(( RANDOM % stride + 1 ))"
  assert_success
  assert_output_contains "uuid, persist: "
  assert_output_contains "cache-ddl, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}

@test "a savepoint that cannot begin while a transaction holds an unwritten config row leaves the row as it was" {
  # statements that open a savepoint of their own (several rows, a DROP)
  # after a set in the same transaction; a failure as the savepoint began
  # used to drop the transaction's counters (entries 0, one row stored)
  oom_dir
  run wrap "$BUILD/acorn_oom" "$OOM_DIR" -mode once -phase cache-stmt \
    -stride 5 -start "$(( RANDOM % 5 + 1 ))"
  assert_success
  assert_output_contains "cache-stmt, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}
