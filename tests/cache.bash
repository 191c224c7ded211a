# Shared by tests/cache.bats, tests/cache_multi.bats and tests/long/cache.bats
# (after test_helper).

# cache_sql OPTIONS SQL [DB]: like acorn_sql, with sqlite3 OPTIONS instead of
# -bail (so a failing statement is reported and the script goes on); stdout
# first, then stderr, so that the order does not depend on buffering.
cache_sql() {
  local err="$BATS_TEST_TMPDIR/stderr.$$"
  printf '.load %s\n%s\n' "$ACORN" "$2" | wrap "$SQLITE3" -batch $1 "${3:-:memory:}" 2>"$err"
  local rc=$?
  cat "$err"
  rm -f "$err"
  return $rc
}

# check_model N SPEC...: the model-based test (tests/cache_model.py) with N
# random operations for each SPEC "RANDOM RECENCY_BUFFER JOURNAL [POLICY]"
# (RANDOM: which random sequence cache_model.py makes; JOURNAL memory: an
# in-memory database; POLICY: the table's, lru if not given): the sqlite3
# shell must print exactly what the model expects, after every operation.
check_model() {
  local n=$1 spec seed buf journal policy db
  shift
  for spec in "$@"; do
    set -- $spec
    seed=$1; buf=$2; journal=$3; policy=${4:-}
    mkdir -p "$BATS_TEST_TMPDIR/m$seed"
    python_run "$TESTS/cache_model.py" "$seed" "$n" "$buf" "$BATS_TEST_TMPDIR/m$seed" \
      $( [ "$journal" = memory ] || echo "$journal" ) $policy
    db=":memory:"
    [ "$journal" = memory ] || db="$BATS_TEST_TMPDIR/m$seed/c.db"
    { echo ".load $ACORN"; cat "$BATS_TEST_TMPDIR/m$seed/script.sql"; } \
      | wrap "$SQLITE3" -batch "$db" >"$BATS_TEST_TMPDIR/m$seed/got.out" 2>"$BATS_TEST_TMPDIR/m$seed/got.err" || true
    # the model writes "Runtime error: ", as the shells of 3.38 and 3.40 say
    # (without the line); that of 3.52 says "Error: "
    sed -E -e 's/ near line [0-9]+:/:/' -e 's/^Error: /Runtime error: /' \
      "$BATS_TEST_TMPDIR/m$seed/got.err" >"$BATS_TEST_TMPDIR/m$seed/got.err2"
    diff "$BATS_TEST_TMPDIR/m$seed/expected.out" "$BATS_TEST_TMPDIR/m$seed/got.out" | head -20
    diff -q "$BATS_TEST_TMPDIR/m$seed/expected.out" "$BATS_TEST_TMPDIR/m$seed/got.out"
    diff "$BATS_TEST_TMPDIR/m$seed/expected.err" "$BATS_TEST_TMPDIR/m$seed/got.err2"
    # the script really exercised the cache
    [ "$(grep -c . "$BATS_TEST_TMPDIR/m$seed/expected.out")" -gt "$n" ]
  done
  # and the runs together did each thing the model counts (deletes by tag
  # that removed entries, tagged entries evicted into the feed, renewals,
  # tag updates), when long enough to (not the short runs of make memcheck)
  local what total
  [ "$n" -ge 500 ] || return 0
  for what in "tag deletes" "tagged in feed" "renewals" "tag updates"; do
    total=$(awk -F': ' -v w="$what" '$1 == w { s += $2 } END { print s + 0 }' \
              "$BATS_TEST_TMPDIR"/m*/covered)
    [ "$total" -gt 0 ] || fail "the model runs made no $what"
  done
}

# writer_script P N: N sets of unique keys by process P, each followed by a
# get of an older key and a check of the capacity after the commit.
writer_script() {
  local p=$1 n=$2 i
  echo ".timeout 20000"
  for (( i = 1; i <= n; i++ )); do
    echo "INSERT INTO t(key, value) VALUES ('p$p-$i', zeroblob(100 + ($i * 37 + $p * 11) % 300));"
    echo "SELECT 1 FROM t WHERE key = 'p$p-$(( i - 1 ))' AND length(value) < 0;"
    echo "SELECT 'OVER ' || s FROM (SELECT total(size) AS s, count(*) AS c FROM t) WHERE s > (SELECT capacity FROM cache_stats('t')) OR s <> (SELECT bytes FROM cache_stats('t')) OR c <> (SELECT entries FROM cache_stats('t'));"
  done
}

# run_two_writers DB N: two sqlite3 processes each run writer_script's N
# sets (and gets) on the cache table t of DB at once; both must succeed and
# print nothing: no capacity breach, no error (busy or otherwise).
run_two_writers() {
  local db=$1 n=$2 p pids=() rc1=0 rc2=0
  for p in 1 2; do
    writer_script "$p" "$n" >"$BATS_TEST_TMPDIR/p$p.sql"
  done
  for p in 1 2; do
    ( printf '.load %s\n' "$ACORN"; cat "$BATS_TEST_TMPDIR/p$p.sql" ) \
      | wrap "$SQLITE3" -batch "$db" >"$BATS_TEST_TMPDIR/p$p.out" 2>&1 &
    pids+=($!)
  done
  # (a failing wait must not end the test before the outputs are shown)
  wait_pid "${pids[0]}" || true; rc1=$status
  wait_pid "${pids[1]}" || true; rc2=$status
  [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] || fail "exit $rc1 $rc2: $(head -3 "$BATS_TEST_TMPDIR/p1.out" "$BATS_TEST_TMPDIR/p2.out")"
  [ ! -s "$BATS_TEST_TMPDIR/p1.out" ] || fail "p1: $(head "$BATS_TEST_TMPDIR/p1.out")"
  [ ! -s "$BATS_TEST_TMPDIR/p2.out" ] || fail "p2: $(head "$BATS_TEST_TMPDIR/p2.out")"
}

# check_two_writers N: two sqlite3 processes each make N sets (and gets) on
# one WAL file at once; after every commit the capacity holds, and at the
# end every entry is accounted for as stored or evicted.
check_two_writers() {
  local db="$BATS_TEST_TMPDIR/w.db" n=$1
  run acorn_sql "PRAGMA journal_mode=WAL;
CREATE VIRTUAL TABLE t USING cache(capacity = 20000, recency_buffer = 16);" "$db"
  assert_success
  run_two_writers "$db" "$n"
  run acorn_sql "SELECT entries + evictions, bytes <= capacity, bytes = (SELECT total(size) FROM t), expired FROM cache_stats('t');
SELECT hits > 0 FROM cache_stats('t');
PRAGMA integrity_check;" "$db"
  assert_success
  assert_output "$(( 2 * n ))|1|1|0
1
ok"
}

# twelve_writers DB ROUNDS: ROUNDS times, twelve sqlite3 processes at once,
# each `BEGIN; INSERT INTO t ...; COMMIT` with .timeout 5000 on one fresh
# connection, in WAL mode and then with a rollback journal: every one must
# succeed (a plain table's would: its write waits for the lock), and every
# entry be there.
twelve_writers() {
  local db=$1 rounds=$2 mode r i pids rc bad
  for mode in wal delete; do
    rm -f "$db" "$db"-*
    run acorn_sql "PRAGMA journal_mode=$mode; CREATE VIRTUAL TABLE t USING cache;" "$db"
    assert_success
    for (( r = 1; r <= rounds; r++ )); do
      pids=()
      for i in $(seq 1 12); do
        printf '.load %s\n.timeout 5000\nBEGIN;\nINSERT INTO t(key, value) VALUES (%d, %s);\nCOMMIT;\n' \
          "$ACORN" $(( r * 100 + i )) "'v$i'" \
          | wrap "$SQLITE3" -batch -bail "$db" >"$BATS_TEST_TMPDIR/w$i.out" 2>&1 &
        pids+=($!)
      done
      bad=0
      for i in $(seq 1 12); do
        wait_pid "${pids[$((i - 1))]}" || true; rc=$status
        if [ "$rc" -ne 0 ] || [ -s "$BATS_TEST_TMPDIR/w$i.out" ]; then
          echo "$mode, round $r, process $i: exit $rc: $(cat "$BATS_TEST_TMPDIR/w$i.out")" >&2
          bad=1
        fi
      done
      [ "$bad" -eq 0 ] || return 1
    done
    run acorn_sql "SELECT count(*) FROM t; INSERT INTO t(t) VALUES ('integrity_check');" "$db"
    assert_success
    assert_output "$(( 12 * rounds ))"
  done
}

# two_connections_py: the start of a Python test script (run by python_run
# with ACORN and a database path, then any arguments of its own):
# connections a and b to the database, acorn loaded, each with a busy
# timeout of 5 s, and q(conn, sql, *args), the rows of a query.
two_connections_py() {
  cat <<'PY'
import sqlite3, sys
ext, path = sys.argv[1], sys.argv[2]
def conn():
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.execute("PRAGMA busy_timeout = 5000")
    return c
a, b = conn(), conn()
q = lambda c, sql, *args: c.execute(sql, args).fetchall()
PY
}
