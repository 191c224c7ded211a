#!/usr/bin/env bats
# The id functions, the long runs (make test-long).

load ../test_helper
load ../uuid

@test "no generator repeats a value in 1,000,000" {
  check_unique "$(big 1000000)"
}

@test "uuid7() and uuid8() strictly increase over 1,000,000 values made in one statement" {
  check_increasing "$(big 1000000)"
}
