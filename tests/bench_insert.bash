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
# Otherwise SIGTERM and SIGHUP have their default action whatever the test
# run inherited (under nohup, or a runner that ignores SIGHUP, the process
# would inherit SIG_IGN, which a shell cannot undo, and the tests that send
# them would test an ignored signal).  Output in $BATS_TEST_TMPDIR/out.
start_sql() {
  local in="$BATS_TEST_TMPDIR/script.sql" out="$BATS_TEST_TMPDIR/out"
  printf '.load %s\n%s\n' "$ACORN" "$1" > "$in"
  sql_cmd
  (
    if [ -n "${IGNORE_SIG:-}" ]; then
      trap '' "$IGNORE_SIG"
      exec "${SQLCMD[@]}" < "$in" > "$out" 2>&1
    fi
    exec env --default-signal=HUP,TERM "${SQLCMD[@]}" < "$in" > "$out" 2>&1
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

# scratch_db_py: Python that the lock holders below put before their own
# code: wait_scratch_db(d, end) waits (reading bytes, taking no lock) until
# the change counter of the run's scratch database in d is at least 1 (its
# setup has made its first write) and returns the database's path; past
# time end it exits with an error.
scratch_db_py() {
  cat <<'PY'
import glob, struct, sys, time
def wait_scratch_db(d, end):
    def counter():
        for p in glob.glob(d + "/acorn-bench-*.db"):
            try:
                with open(p, "rb") as f:
                    h = f.read(28)
            except OSError:
                continue
            if len(h) == 28:
                return p, struct.unpack(">I", h[24:28])[0]
        return None, 0
    while True:
        db, n = counter()
        if n >= 1:
            return db
        if time.time() > end:
            sys.exit("no scratch database was set up in " + d)
        time.sleep(0.001)
PY
}

# hold_read_lock DIR: keep a run's writer waiting in its busy handler, with
# no pause and no race the writer can win for the whole run.  The run uses
# journal=delete, where a commit needs every other connection's SHARED lock
# gone, and takes a PENDING lock, which keeps new readers out, while it
# waits for them.  So:
#   1. wait (reading bytes, taking no lock) until the scratch database's
#      change counter shows the setup's CREATE TABLE committed: after it the
#      setup connection writes nothing, so no lock taken here can fail it;
#   2. BEGIN and read: a SHARED lock.  A writer keeps it out only while it
#      commits (PENDING, EXCLUSIVE), never between commits: tried again every
#      0.1 ms until it is in;
#   3. from a second connection, read until a read is refused: that is the
#      writer's PENDING lock, taken for a commit that this SHARED lock stops,
#      so its busy handler has run (the run is in its timed part: it has
#      written);
#   4. COMMIT: the writer goes on.  Prints "held".
hold_read_lock() {
  { scratch_db_py; cat; } <<'PY' | "$PYTHON" - "$1"
import sqlite3, subprocess, sys, time
d = sys.argv[1]
end = time.time() + 600
db = wait_scratch_db(d, end)
uri = "file:" + db + "?mode=rw"
# tried every 0.1 ms, not with SQLite's busy handler, which waits up to 100 ms
# between tries: it must get in before the run's seconds are up, whatever
# the load, and it can whenever the writer is not committing
con = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
con.execute("BEGIN")
while True:
    try:
        con.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        break
    except sqlite3.OperationalError as e:
        if "locked" not in str(e) or time.time() > end:
            raise
    time.sleep(0.0001)
# (another process: within one, SQLite grants a SHARED lock that the
# process already holds without asking the file system)
probe = subprocess.run([sys.executable, "-c", """
import sqlite3, sys, time
probe = sqlite3.connect(sys.argv[1], uri=True, timeout=0, isolation_level=None)
end = time.time() + 600
while time.time() < end:
    try:
        probe.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.OperationalError as e:
        if "locked" in str(e):
            sys.exit(0)
        raise
    time.sleep(0.0005)
sys.exit("the writer never waited")
""", uri])
if probe.returncode != 0:
    sys.exit("the probe failed in " + d)
con.execute("COMMIT")
con.close()
print("held")
PY
}

# check_busy SECONDS: a run of SECONDS (cut by seconds; the writer waits for
# hold_read_lock, however long that takes, without it counting against the
# run) during which another process keeps the writer waiting for a lock:
# busy counts those waits.
check_busy() {
  local pid status
  start_sql "SELECT rows_written > 0, busy > 0, busy < 1000 FROM bench_insert
 WHERE rows=10000000 AND seconds=$1 AND journal='delete' AND busy_timeout=600000 AND $W AND dir='$D';"
  pid=$!
  run hold_read_lock "$D"
  wait_pid "$pid"
  [ "$output" = "held" ] || fail "the lock holder failed: $output"
  [ "$status" -eq 0 ] || fail "sqlite3 failed: $(cat "$BATS_TEST_TMPDIR/out")"
  [ "$(cat "$BATS_TEST_TMPDIR/out")" = "1|1|1" ] || fail "got $(cat "$BATS_TEST_TMPDIR/out")"
  assert_dir_empty "$D"
}

# hold_wal_lock DIR MODE: in another process, from a moment during the run
# until the run has removed its scratch database, hold its WAL write lock
# (MODE write, so every write of the run meets it) or a read snapshot
# (MODE read: BEGIN and a read, so no checkpoint of the run gets past it).
# The order is made certain:
#   1. wait (reading bytes, taking no lock) until the scratch database's
#      header shows it in WAL mode (the setup sets it after it made posts,
#      and writes nothing more), then (reading, which in WAL mode stops no
#      writer) until posts is seen: no lock taken here can fail the setup;
#   2. take the lock.  The write lock is the byte of the -shm file every
#      connection locks with fcntl() to write (WALINDEX_LOCK_OFFSET 120 +
#      WAL_WRITE_LOCK 0), waited for in the kernel (F_SETLKW), so it is
#      ours at the first moment no writer of the run holds it.  (A BEGIN
#      IMMEDIATE, tried again and again, had to fall in the gap between
#      two autocommit inserts with no commit between its read and its write
#      lock, and could miss every one of a run's gaps on a loaded machine.)
#      The snapshot is a BEGIN and a read, tried again every 0.1 ms;
#   3. hold it until the database file is gone: the run has ended, so every
#      write and checkpoint it made after step 2 met the lock.
# Prints "held".
hold_wal_lock() {
  { scratch_db_py; cat; } <<'PY' | "$PYTHON" - "$1" "$2"
import fcntl, os, sqlite3, sys, time
d, mode = sys.argv[1], sys.argv[2]
end = time.time() + 600
db = wait_scratch_db(d, end)
# the setup sets WAL mode after it made posts: wait (reading bytes, no
# lock) for the file's WAL mark, bytes 18 and 19 of its header
while True:
    with open(db, "rb") as f:
        h = f.read(20)
    if len(h) == 20 and h[18] == 2 and h[19] == 2:
        break
    if time.time() > end:
        sys.exit("the setup never set WAL mode in " + d)
    time.sleep(0.001)
con = sqlite3.connect("file:" + db + "?mode=rw", uri=True, timeout=0,
                      isolation_level=None)
while True:
    try:
        if con.execute("SELECT count(*) FROM sqlite_schema"
                       " WHERE name='posts'").fetchone()[0]:
            break
    except sqlite3.OperationalError as e:
        if "locked" not in str(e):
            raise
    if time.time() > end:
        sys.exit("the setup never made posts in " + d)
    time.sleep(0.001)
if mode == "write":
    shm = os.open(db + "-shm", os.O_RDWR)
    fcntl.lockf(shm, fcntl.LOCK_EX, 1, 120)
while mode != "write":
    try:
        con.execute("BEGIN")
        con.execute("SELECT count(*) FROM posts").fetchone()
        break
    except sqlite3.OperationalError as e:
        if "locked" not in str(e) or time.time() > end:
            raise
        if con.in_transaction:
            con.execute("ROLLBACK")
    time.sleep(0.0001)
while os.path.exists(db):
    if time.time() > end:
        sys.exit("the run never ended")
    time.sleep(0.01)
if mode == "write":
    fcntl.lockf(shm, fcntl.LOCK_UN, 1, 120)
    os.close(shm)
else:
    con.execute("ROLLBACK")
con.close()
print("held")
PY
}

# check_wal_hold MODE SECONDS WHERE: a run of SECONDS (cut by seconds) in WAL
# mode with WHERE, while hold_wal_lock MODE holds its lock from a moment of
# the run to its end.  Its row, in $BATS_TEST_TMPDIR/out: for MODE write,
# busy_errors > 0 and busy > 0; for MODE read, checkpoints > 0 and
# checkpoints_blocked > 0.
check_wal_hold() {
  local pid status cols="busy_errors > 0, busy > 0"
  [ "$1" = write ] || cols="checkpoints > 0, checkpoints_blocked > 0"
  start_sql "SELECT $cols FROM bench_insert
 WHERE rows=10000000 AND seconds=$2 AND $3 AND $W AND dir='$D';"
  pid=$!
  run hold_wal_lock "$D" "$1"
  wait_pid "$pid"
  [ "$output" = "held" ] || fail "the lock holder failed: $output"
  [ "$status" -eq 0 ] || fail "sqlite3 failed: $(cat "$BATS_TEST_TMPDIR/out")"
  assert_dir_empty "$D"
}

# auto_sql SQL: SQL in sqlite3 with acorn-auto.so preloaded (acorn on every
# connection, the scratch connections too), as this build runs programs.
auto_sql() {
  local auto
  auto="$(dirname "$ACORN")/acorn-auto.so"
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    printf '%s\n' "$1" | LD_PRELOAD="$auto" wrap "$SQLITE3" -batch -bail :memory:
  else
    printf '%s\n' "$1" | ACORN_PRELOAD="${ACORN_PRELOAD:+$ACORN_PRELOAD }$auto" wrap "$SQLITE3" -batch -bail :memory:
  fi
}
