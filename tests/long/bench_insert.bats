#!/usr/bin/env bats
# bench_insert, the long runs (make test-long).

load ../test_helper
load ../bench_insert

@test "busy counts the busy handler's calls: an 8-second run kept waiting by another connection's write lock" {
  check_busy 8
}
