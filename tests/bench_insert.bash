# Shared by tests/bench_insert.bats and tests/long/bench_insert.bats (after
# test_helper): the scratch directory, background runs, a lock holder.

# A fresh scratch directory for the run's files, per test.
setup() {
  D="$BATS_TEST_TMPDIR/d"
  mkdir -p "$D"
}

# bi SQL: run SQL with acorn loaded (list mode, '|' separators).
bi() {
  acorn_sql "$1"
}

# The scratch directory holds nothing.
assert_dir_empty() {
  local left
  left=$(ls -A "$1")
  if [ -n "$left" ]; then
    fail "files left in $1: $left"
  fi
}

W="synchronous='off'"

# skip_under_valgrind: skip a test of writer threads beside reader threads
# in make memcheck.  valgrind runs one thread at a time, and there the
# readers starve the writers until the run's time limit ends it with rows
# unwritten (seen in one run out of two); make test-asan runs these tests
# with every thread watched.
skip_under_valgrind() {
  [ -z "${ACORN_VALGRIND:-}" ] || skip "writers beside readers under valgrind run into the time limit (make test-asan covers it)"
}

# sql_cmd: SQLCMD=(the sqlite3 command line as wrap would run it: plain,
# preloaded or in valgrind), for callers that exec it or hand it to timeout.
# Under valgrind without the leak check: a process that dies of a signal
# in the middle of a statement leaves its heap as it was, and valgrind
# reports SQLite's own memory of that statement (sqlite3 alone shows it);
# memory errors are still reported.
sql_cmd() {
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    SQLCMD=(valgrind -q --fair-sched=yes --error-exitcode=97 --leak-check=no
      "--log-file=$BATS_TEST_TMPDIR/report.valgrind.%p" "$SQLITE3" -batch -bail :memory:)
  elif [ -n "${ACORN_PRELOAD:-}" ]; then
    SQLCMD=(env "LD_PRELOAD=$ACORN_PRELOAD"
      "ASAN_OPTIONS=${ASAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.asan"
      "UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.ubsan"
      "$SQLITE3" -batch -bail :memory:)
  else
    SQLCMD=("$SQLITE3" -batch -bail :memory:)
  fi
}

# start_sql SQL: run SQL in sqlite3 with acorn loaded, in the background, as
# wrap would, exec'd so that $! is the sqlite3 (or valgrind) process itself;
# with IGNORE_SIG set, that signal is ignored (SIG_IGN) from the start.
# Output in $BATS_TEST_TMPDIR/out.
start_sql() {
  local in="$BATS_TEST_TMPDIR/script.sql" out="$BATS_TEST_TMPDIR/out"
  printf '.load %s\n%s\n' "$ACORN" "$1" > "$in"
  sql_cmd
  (
    [ -z "${IGNORE_SIG:-}" ] || trap '' "$IGNORE_SIG"
    exec "${SQLCMD[@]}" < "$in" > "$out" 2>&1
  ) &
}

# wait_for_file GLOB: wait (up to 60 s) until a file matching GLOB exists.
wait_for_file() {
  local i
  for ((i = 0; i < 600; i++)); do
    compgen -G "$1" > /dev/null && return 0
    sleep 0.1
  done
  fail "no file $1 appeared"
}

# hold_write_lock DIR: wait for a run's scratch database in DIR (its -wal
# appears with the setup connection's CREATE TABLE), open it (mode=rw: never
# create it) from this other process, wait until a row is there (the clock
# runs: busy counts only the timed part, and on a loaded machine the writers'
# setup can take longer than any fixed pause), then hold its write lock
# (BEGIN IMMEDIATE) for 0.5 s.  Prints "held".  The lock
# is tried every 0.2 ms: with SQLite's own busy handler (retries 1 to 100 ms
# apart) a writer that holds the lock most of the time, as it does on a
# loaded machine, could keep it from us for seconds.
hold_write_lock() {
  "$PYTHON" - "$1" <<'PY'
import glob, sqlite3, sys, time
d = sys.argv[1]
end = time.time() + 60
while True:
    w = glob.glob(d + "/acorn-bench-*.db-wal")
    if w:
        break
    if time.time() > end:
        sys.exit("no scratch database appeared in " + d)
    time.sleep(0.01)
con = sqlite3.connect("file:" + w[0][:-4] + "?mode=rw", uri=True, timeout=0,
                      isolation_level=None)
while True:
    try:
        if con.execute("SELECT 1 FROM posts LIMIT 1").fetchone():
            break
    except sqlite3.OperationalError:
        pass
    if time.time() > end:
        sys.exit("no row was written in " + d)
    time.sleep(0.001)
while True:
    try:
        con.execute("BEGIN IMMEDIATE")
        break
    except sqlite3.OperationalError:
        if time.time() > end:
            raise
        time.sleep(0.0002)
time.sleep(0.5)
con.execute("COMMIT")
con.close()
print("held")
PY
}

# check_busy SECONDS: a run of SECONDS (cut by seconds) during which another
# process holds the write lock for 0.5 s, starting about 0.5 s after the run's
# database appears: the writer must wait in its busy handler, and busy counts
# those waits.
check_busy() {
  local pid status
  start_sql "SELECT rows_written > 0, busy > 0, busy < 1000 FROM bench_insert
 WHERE rows=10000000 AND seconds=$1 AND busy_timeout=60000 AND $W AND dir='$D';"
  pid=$!
  run hold_write_lock "$D"
  status=0
  wait "$pid" || status=$?
  [ "$output" = "held" ] || fail "the lock holder failed: $output"
  [ "$status" -eq 0 ] || fail "sqlite3 failed: $(cat "$BATS_TEST_TMPDIR/out")"
  [ "$(cat "$BATS_TEST_TMPDIR/out")" = "1|1|1" ] || fail "got $(cat "$BATS_TEST_TMPDIR/out")"
  assert_dir_empty "$D"
}
