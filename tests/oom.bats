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
