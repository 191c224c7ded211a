#!/usr/bin/env bats
# The cache table, the long runs (make test-long).

load ../test_helper
load ../cache

@test "the model-based LRU test agrees with a reference LRU over 10 sequences of 20,000 random operations" {
  check_model "$(big 20000)" "1 7 memory" "2 10000 memory" "3 3 wal" "4 50 delete" "5 1 memory" \
    "6 7 memory" "7 16 wal" "8 2 memory" "9 100 memory" "10 5 delete"
}

@test "the model test agrees under policy = fifo too over 3 sequences of 20,000 random operations" {
  check_model "$(big 20000)" "11 7 wal fifo" "13 7 memory fifo" "14 7 delete fifo"
}

@test "two processes writing one WAL file, 3,000 sets each: capacity holds after every commit and no entry is lost but by eviction" {
  check_two_writers "$(big 3000)"
}

@test "twelve sqlite3 processes each BEGIN, INSERT into a cache table, COMMIT with .timeout 5000, 50 rounds: none fails" {
  twelve_writers "$BATS_TEST_TMPDIR/r.db" "$(big 50)"
}
