#!/usr/bin/env bats
# Allocation failures (tests/c/acorn_oom.c: acorn built in, a wrapped
# allocator that fails the Nth allocation).  Every failure must surface as
# SQLITE_NOMEM "out of memory", leave every cache table's invariants
# intact, and leak nothing (under make test-asan).

load test_helper

@test "every allocation of cache_read's and cache_stats' lookups and of UPDATE failed in turn: SQLITE_NOMEM, invariants intact" {
  mkdir "$BATS_TEST_TMPDIR/oom"
  run wrap "$BUILD/acorn_oom" "$BATS_TEST_TMPDIR/oom" -mode once -stride "${ACORN_SCALE:-1}" \
    -phase cache-lookup,cache-update
  assert_success
  assert_output_contains "cache-lookup, once: "
  assert_output_contains "cache-update, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}
