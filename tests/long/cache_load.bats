#!/usr/bin/env bats
# The long run of tests/cache_load.bats.

load ../test_helper

@test "4 processes on one WAL file for 20 s: every read verified, invariants hold after" {
  run wrap "$BUILD/cache_load" "$ACORN" "$BATS_TEST_TMPDIR/l.db" 4 20 "${ACORN_LOAD_SEED:-$RANDOM}"
  assert_success
  assert_output_contains "ok 4 processes"
  echo "# $output" >&3
}
