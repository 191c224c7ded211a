#!/usr/bin/env bats
# The long run of tests/oom.bats: every allocation of the small phases
# (CREATE, cache_read, cache_stats, UPDATE, a listing of hits, bench_insert's
# setup, a get that writes the buffered uses) failed in turn, on the plain
# build.  `make test-oom` runs every phase so under ASan.

load ../test_helper
load ../oom

@test "every allocation of CREATE, cache_read, cache_stats, UPDATE, a listing of hits and bench_insert's setup failed in turn: SQLITE_NOMEM, invariants intact" {
  oom_dir
  run wrap "$BUILD/acorn_oom" "$OOM_DIR" -mode once -stride "${ACORN_SCALE:-1}" \
    -phase cache-new,cache-lookup,cache-update,cache-list
  assert_success
  assert_output_contains "cache-lookup, once: "
  assert_output_contains "cache-new, once: "
  assert_output_contains "cache-list, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
  # bench_insert runs in memory and on files: the first 600 allocations
  # hold the parameters, the fsync probe in dir and the scratch schema
  run wrap "$BUILD/acorn_oom" "$OOM_DIR" -mode once -stride "${ACORN_SCALE:-1}" -end 600 \
    -phase bench-memory,bench-file
  assert_success
  assert_output_contains "bench-memory, once: "
  assert_output_contains "bench-file, once: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}

@test "every allocation of a get that writes the buffered uses failed in turn, once and for good: the flush's transaction always ends" {
  oom_dir
  run wrap "$BUILD/acorn_oom" "$OOM_DIR" -stride "${ACORN_SCALE:-1}" -phase cache-flush
  assert_success
  assert_output_contains "cache-flush, persist: "
  [[ "$output" == *$'\nok' ]] || fail "no ok line: $output"
}
