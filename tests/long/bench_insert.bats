#!/usr/bin/env bats
# bench_insert: runs too long for `make test` (make test-long).

load ../test_helper
load ../bench_insert

@test "a run of more than 1,000,000 rows reports its percentiles from histograms: ordered, and every row written" {
  # 1,000,000 rows keep every latency (exact); one more counts them in
  # histograms (see tests/c/bench_hist.c for their precision)
  run acorn_sql "SELECT rows, rows_written, p50_us > 0, p50_us <= p99_us, p99_us <= max_us,
       typeof(p50_us), typeof(max_us)
  FROM bench_insert WHERE rows IN (1000000, 1000001) AND batch=10000 AND storage='memory'
   AND synchronous='off' AND dir='$D';"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$output" = "1000000|1000000|1|1|1|real|real
1000001|1000001|1|1|1|real|real" ] || { echo "$output"; return 1; }
}

@test "busy counts the busy handler's calls: an 8-second run kept waiting for its commit by another connection's read lock" {
  check_busy 8
}
