# Shared by every tests/*.bats suite: `load test_helper` at the top.
#
# The suites run SQL through the real sqlite3 CLI with dist/acorn.so loaded.
# The same suites serve every build and every SQLite, chosen by the
# environment (the Makefile sets it):
#   make test        ACORN=dist/acorn, the system's sqlite3
#   make test-asan   ACORN=dist/asan/acorn, ACORN_PRELOAD = the ASan and UBSan
#                    runtimes, preloaded into sqlite3, Python and the C test
#                    programs
#   make memcheck    ACORN_VALGRIND=1: every sqlite3 and C test program runs
#                    under valgrind; ACORN_SCALE divides the big counts
#   make test-matrix SQLITE3 = a sqlite3 shell built from another SQLite
#                    version, LD_LIBRARY_PATH = the directory of its
#                    libsqlite3.so.0 (so Python loads that library too),
#                    ACORN = acorn built against that version's headers (or
#                    the system's), ACORN_BIN = the C test programs built
#                    the same way
# So: never call sqlite3, python3 or build/ programs by name; use $SQLITE3,
# $PYTHON (through python_run) and $BUILD.
# Sanitizer and valgrind reports go to files in $BATS_TEST_TMPDIR; the
# shared teardown fails the test if any report is there.

export LC_ALL=C
# Suites live in tests/ (make test) and tests/long/ (make test-long, the
# long runs); both load this file, so paths start from here.
TESTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$TESTS/.." && pwd)"
ACORN="${ACORN:-$ROOT/dist/acorn}"
BUILD="${ACORN_BIN:-$ROOT/build}"
SQLITE3="${SQLITE3:-sqlite3}"
# Debian's python3: the pyenv one on PATH cannot load extensions.
PYTHON="${ACORN_PYTHON:-/usr/bin/python3}"

# Run a program the way this build wants: plain, preloaded, or in valgrind.
# valgrind runs one thread at a time; --fair-sched=yes hands the CPU round
# the threads in turn, or a reader thread that never sleeps can keep a
# writer off it past a run's time limit.
wrap() {
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    valgrind -q --fair-sched=yes --error-exitcode=97 --leak-check=full \
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

# python_run SCRIPT ARGS...: run a Python test script (- : from stdin) with Debian's python3
# (its sqlite3 module loads the libsqlite3.so.0 that LD_LIBRARY_PATH names,
# if any).  With ACORN_PRELOAD (make test-asan) the sanitizer runtimes are
# preloaded, reports go to $BATS_TEST_TMPDIR as for sqlite3, and leaks are
# checked when the script ends, before the interpreter shuts down: at exit
# Python leaves memory of its own that LeakSanitizer would report, while at
# that point all of Python's memory is still reachable (PYTHONMALLOC=malloc
# puts its objects where LeakSanitizer looks), so whatever is unreachable
# was leaked by acorn or SQLite.  The check also ends LeakSanitizer's own
# at exit.  Under valgrind (make memcheck) Python runs plain.
python_run() {
  if [ "${1:-}" = - ]; then
    # the script on stdin: into a file, which both ways below can run
    cat >"$BATS_TEST_TMPDIR/stdin.$$.py"
    shift
    set -- "$BATS_TEST_TMPDIR/stdin.$$.py" "$@"
  fi
  if [ -n "${ACORN_PRELOAD:-}" ]; then
    PYTHONMALLOC=malloc LD_PRELOAD="$ACORN_PRELOAD" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.asan" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.ubsan" \
      "$PYTHON" -c '
import ctypes, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    ctypes.CDLL(None).__lsan_do_leak_check()
' "$@"
  else
    "$PYTHON" "$@"
  fi
}

# acorn_sql SQL [DB]: run SQL in sqlite3 (batch, -bail) with acorn loaded,
# on DB (default :memory:).  Output is list mode with '|' separators.
acorn_sql() {
  printf '.load %s\n%s\n' "$ACORN" "$1" | wrap "$SQLITE3" -batch -bail "${2:-:memory:}"
}

# sqlite3 without acorn, wrapped the same way.
plain_sql() {
  printf '%s\n' "$1" | wrap "$SQLITE3" -batch -bail "${2:-:memory:}"
}

# runtime_error N: how this sqlite3 shell starts the report of an error
# raised while a statement ran, in batch mode, at line N of its input
# (the shells of 3.38 and 3.40 print "Runtime error near line N:", that of
# 3.52 "Error near line N:").  Asked of the shell, with an integer overflow.
runtime_error() {
  local p
  p=$(printf 'SELECT abs(-9223372036854775807 - 1);\n' | "$SQLITE3" -batch 2>&1)
  echo "${p% near line 1: integer overflow} near line $1:"
}

# shell_error N MESSAGE CODE: the line this sqlite3 shell prints, in batch
# mode, for an error of result code CODE (not SQLITE_ERROR) with MESSAGE at
# line N: the shells of 3.38 and 3.40 add " (CODE)", that of 3.52 does not.
# Asked of the shell, with a write refused by query_only (SQLITE_READONLY).
shell_error() {
  local p
  p=$(printf 'PRAGMA query_only = 1;\nCREATE TABLE x(a);\n' | "$SQLITE3" -batch 2>&1)
  if [[ "$p" == *" (8)" ]]; then
    echo "$(runtime_error "$1") $2 ($3)"
  else
    echo "$(runtime_error "$1") $2"
  fi
}

# skip_unless_sqlite X.Y.Z WHAT: skip the test unless acorn is built
# against SQLite X.Y.Z or later and runs on X.Y.Z or later (acorn uses WHAT,
# new in X.Y.Z, only then).
skip_unless_sqlite() {
  local out h l
  out=$(acorn_sql "SELECT acorn_debug();")
  h=$(sed -n 's/^sqlite headers: //p' <<<"$out")
  l=$(sed -n 's/^sqlite library: //p' <<<"$out")
  [ -n "$h" ] && [ -n "$l" ] || fail "acorn_debug() did not give the SQLite versions: $out"
  if (( $(sqlite_number "$h") < $(sqlite_number "$1") || $(sqlite_number "$l") < $(sqlite_number "$1") )); then
    skip "$2 needs SQLite $1 in the headers and the library; acorn is built against $h and runs on $l"
  fi
}

# sqlite_number X.Y.Z: the version as SQLITE_VERSION_NUMBER writes it.
sqlite_number() {
  local a b c
  IFS=. read -r a b c <<<"$1"
  echo $(( a * 1000000 + b * 1000 + ${c:-0} ))
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

# wait_pid PID [SECONDS]: wait for background process PID (default 300 s),
# setting status to its exit status.  A process still running then is a
# hang: its and its children's stacks go to the test's output
# (tests/stacks), they are killed, and the test fails, instead of the suite
# waiting for ever.
wait_pid() {
  local pid=$1 limit=${2:-300} i
  for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    local procs stacks
    procs=("$pid" $(pgrep -P "$pid" 2>/dev/null))
    stacks=$("$TESTS/stacks" "${procs[@]}")
    kill -KILL "${procs[@]}" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    status=137
    fail "process $pid still running after $limit s, killed; its stacks:
$stacks"
    return 1
  fi
  status=0
  wait "$pid" || status=$?
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

# python_pkg DIR: the Python package sqlite_acorn from the source tree
# (ext/packages/python), laid out in DIR as the wheel lays it out, with the
# build under test ($ACORN.so) as its acorn.so; put DIR on PYTHONPATH.
python_pkg() {
  local src="$ROOT/ext/packages/python/sqlite_acorn" f
  mkdir -p "$1/sqlite_acorn"
  for f in "$src"/*.py; do
    sed "s/@VERSION@/$(cat "$ROOT/VERSION")/g" "$f" >"$1/sqlite_acorn/${f##*/}"
  done
  cp "$ACORN.so" "$1/sqlite_acorn/acorn.so"
}
