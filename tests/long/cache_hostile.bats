#!/usr/bin/env bats
# Crafted files over every column of every shadow table (tests/cache_hostile.py):
# no statement hangs, dies or fails without saying what is wrong.

load ../test_helper

@test "every column of every shadow table edited to extreme values: every statement returns, and fails only saying what is wrong" {
  run python_run "$TESTS/cache_hostile.py" "$SQLITE3" "$ACORN" "$BATS_TEST_TMPDIR"
  assert_success
  [[ "${lines[-1]}" == "checked "*" runs" ]] || fail "$output"
  [ "${#lines[@]}" -eq 1 ] || fail "$output"
  echo "# ${lines[-1]}" >&3
}
