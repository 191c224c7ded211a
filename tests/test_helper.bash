# Shared by every tests/*.bats suite: `load test_helper` at the top.
#
# The suites run SQL through the real sqlite3 CLI with dist/acorn.so loaded.
# The same suites serve three builds, chosen by the environment (the Makefile
# sets it):
#   make test       ACORN=dist/acorn, plain sqlite3
#   make test-asan  ACORN=dist/asan/acorn, ACORN_PRELOAD = the ASan and UBSan
#                   runtimes, preloaded into sqlite3 and the C test programs
#   make memcheck   ACORN_VALGRIND=1: every sqlite3 and C test program runs
#                   under valgrind; ACORN_SCALE divides the big counts
# Sanitizer and valgrind reports go to files in $BATS_TEST_TMPDIR; the
# shared teardown fails the test if any report is there.

export LC_ALL=C
# Suites live in tests/ (make test) and tests/long/ (make test-long, the
# long runs); both load this file, so paths start from here.
TESTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$TESTS/.." && pwd)"
ACORN="${ACORN:-$ROOT/dist/acorn}"
BUILD="$ROOT/build"

# Run a program the way this build wants: plain, preloaded, or in valgrind.
wrap() {
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    valgrind -q --error-exitcode=97 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite \
      --log-file="$BATS_TEST_TMPDIR/report.valgrind.%p" "$@"
  elif [ -n "${ACORN_PRELOAD:-}" ]; then
    LD_PRELOAD="$ACORN_PRELOAD" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.asan" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.ubsan" \
      "$@"
  else
    "$@"
  fi
}

# acorn_sql SQL [DB]: run SQL in sqlite3 (batch, -bail) with acorn loaded,
# on DB (default :memory:).  Output is list mode with '|' separators.
acorn_sql() {
  printf '.load %s\n%s\n' "$ACORN" "$1" | wrap sqlite3 -batch -bail "${2:-:memory:}"
}

# sqlite3 without acorn, wrapped the same way.
plain_sql() {
  printf '%s\n' "$1" | wrap sqlite3 -batch -bail "${2:-:memory:}"
}

# big N: N, divided by ACORN_SCALE under valgrind.
big() {
  echo $(( $1 / ${ACORN_SCALE:-1} ))
}

# check_reports: fail if a sanitizer or valgrind report was written.  A
# suite that needs its own teardown calls it at the end of it.
check_reports() {
  local f found=0
  for f in "$BATS_TEST_TMPDIR"/report.*; do
    [ -s "$f" ] || continue
    echo "# sanitizer/valgrind report $f:" >&3
    sed 's/^/#   /' "$f" >&3
    found=1
  done
  [ "$found" -eq 0 ]
}

teardown() {
  check_reports
}

fail() {
  echo "$@" >&2
  return 1
}

assert_success() {
  if [ "$status" -ne 0 ]; then
    fail "expected success, got status $status; output:
$output"
  fi
}

# assert_failure [TEXT]: nonzero status and, if given, TEXT in the output.
assert_failure() {
  if [ "$status" -eq 0 ]; then
    fail "expected failure, got success; output:
$output"
    return 1
  fi
  if [ $# -gt 0 ] && [[ "$output" != *"$1"* ]]; then
    fail "expected output to contain:
$1
got:
$output"
  fi
}

assert_output() {
  if [ "$output" != "$1" ]; then
    fail "expected output:
$1
got:
$output"
  fi
}

assert_output_contains() {
  if [[ "$output" != *"$1"* ]]; then
    fail "expected output to contain:
$1
got:
$output"
  fi
}
