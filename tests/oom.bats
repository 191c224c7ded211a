#!/usr/bin/env bats
# Allocation failures (tests/c/acorn_oom.c: acorn built in, a wrapped
# allocator that fails the Nth allocation).  Every failure must surface as
# SQLITE_NOMEM "out of memory" (or, for bench_insert's own scratch
# connections, as its run's error saying so), leave every cache table's
# invariants intact, and leak nothing (under make test-asan).

load test_helper

@test "every allocation of cache_read, cache_stats, UPDATE and a bench_insert run failed in turn: SQLITE_NOMEM, invariants intact" {
  mkdir "$BATS_TEST_TMPDIR/oom"
  run wrap "$BUILD/acorn_oom" "$BATS_TEST_TMPDIR/oom" -mode once -stride "${ACORN_SCALE:-1}" \
    -phase cache-lookup,cache-update,bench-memory
  assert_success
  assert_output_contains "cache-lookup, once: "
  assert_output_contains "cache-update, once: "
  assert_output_contains "bench-memory, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}
