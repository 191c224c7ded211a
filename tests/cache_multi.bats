#!/usr/bin/env bats
# The cache table with several connections and processes on one file.

load test_helper
load cache

@test "another connection's uses arrive late, at its next write, flush or close; its gets never lock" {
  local j
  for j in wal delete; do
    rm -f "$BATS_TEST_TMPDIR"/m.db*
    run python_run "$TESTS/cache_multi.py" "$ACORN" "$BATS_TEST_TMPDIR/m.db" "$j"
    assert_success
    assert_output "late: b,c,d
flushed: b,d,e
gets while A writes: 150 B's hits 152
after A commits: b,e,f
hits after B closed: b=52,e=50,f=0
stats: (30, 3, 30, 153, 0, 3)"
  done
}

# (tests/long/cache.bats runs 3,000 sets per process)
@test "two processes writing one WAL file: capacity holds after every commit and no entry is lost but by eviction" {
  check_two_writers "$(big 300)"
}

@test "uses made in one process move entries ahead of the other process's evictions once flushed" {
  local db="$BATS_TEST_TMPDIR/r.db"
  run acorn_sql "PRAGMA journal_mode=WAL;
CREATE VIRTUAL TABLE t USING cache(capacity = 40);
INSERT INTO t(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9)), ('c', zeroblob(9)), ('d', zeroblob(9));" "$db"
  assert_success
  # another process reads 'a' and exits: its use is written at close
  run acorn_sql "SELECT length(value) FROM t WHERE key = 'a';" "$db"
  assert_success
  assert_output "9"
  run acorn_sql "INSERT INTO t(key, value) VALUES ('e', zeroblob(9));
SELECT group_concat(key), (SELECT hits FROM cache_stats('t')) FROM t;" "$db"
  assert_success
  assert_output "a,c,d,e|1"
}

@test "another connection's DDL: a connection's buffered uses follow its table, and only its table" {
  run python_run "$TESTS/cache_reset.py" "$ACORN" "$BATS_TEST_TMPDIR"
  assert_success
  assert_output "other's DDL: a,c,d
other's DDL, write in BEGIN: a,c,e 3
hits after B closed: a=2,c=1,e=0
B's stats after re-create: (3, 0)
A's listing after B closed: p=0,q=0,r=0
after DROP: cache_read: no such table: 't'
after DROP: cache_stats: no such table: 't'
cache_get before: ('xxxxxxxx', 'xxxxxxxx')
cache_get after re-create: ('new', None) (1, 1, 1)
A's listing after B closed: a=1 1
after RENAME: cache_get: no such table: 't'
after RENAME: ('new',)
after DROP: cache_get: no such table: 'u'"
}

@test "a connection with buffered uses closes safely after another connection changed the schema" {
  local db="$BATS_TEST_TMPDIR/s.db"
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES (1, x'02');" "$db"
  assert_success
  # Connection 1 buffers a use; connection 0 creates a table, so the schema
  # connection 1 holds is out of date when it closes.  Closing disconnects
  # the cache table while SQLite walks that schema: the buffered use is not
  # written then (writing would make SQLite reload the schema it is walking).
  run acorn_sql ".connection 1
.open $db
.load $ACORN
SELECT hex(value) FROM t WHERE key = 1;
.connection 0
CREATE TABLE other(x);
.connection close 1
SELECT hits, misses FROM cache_stats('t');
INSERT INTO t(t) VALUES ('integrity_check');" "$db"
  assert_success
  assert_output "02
0|0"
}

@test "cache_read and cache_stats after another connection changed the schema use the new instance" {
  local db="$BATS_TEST_TMPDIR/r.db"
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('k', x'0102');" "$db"
  assert_success
  # Connection 0 reads through cache_read (which keeps an instance of t);
  # connection 1 changes the schema; connection 0 reads again, then after a
  # drop and re-create by connection 1 finds the new, empty table.
  run acorn_sql "SELECT hex(cache_read('t', 'k', 0, 2));
.connection 1
.open $db
.load $ACORN
CREATE TABLE other(x);
.connection 0
SELECT hex(cache_read('t', 'k', 1, 1));
SELECT entries, hits FROM cache_stats('t');
.connection 1
DROP TABLE t;
CREATE VIRTUAL TABLE t USING cache;
.connection 0
SELECT quote(cache_read('t', 'k', 0, 2));
SELECT entries, hits, misses FROM cache_stats('t');" "$db"
  assert_success
  assert_output "0102
02
1|2
NULL
0|0|1"
}

@test "a table of acorn 0.2 converted by one connection: another that only read it sees the tags, options and feed at once" {
  local db="$BATS_TEST_TMPDIR/v020.db"
  cp "$TESTS/data/cache-v0.2.0.db" "$db"
  run python_run - "$ACORN" "$db" <<'PY'
import sqlite3, sys
def conn():
    c = sqlite3.connect(sys.argv[2], isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(sys.argv[1])
    return c
a, b = conn(), conn()
# a reads the unconverted table, tags and feed included: nothing yet
print(a.execute("SELECT count(*) FROM pages WHERE tag = 'x'").fetchone()[0],
      a.execute("SELECT count(*) FROM cache_evictions('pages')").fetchone()[0])
b.execute("INSERT INTO pages(pages, value) VALUES ('feed', 10)")
b.execute("INSERT INTO pages(pages, value) VALUES ('default_ttl', '1h')")
# (pages is fifo: a renewal keeps the entry's place, so one of the newest)
b.execute("UPDATE pages SET tag = 'x' WHERE key = 'p12'")
b.execute("INSERT INTO pages(pages, value) VALUES ('max_entries', 5)")
print(a.execute("SELECT group_concat(key) FROM pages WHERE tag = 'x'").fetchone()[0],
      a.execute("SELECT count(*), min(reason) FROM cache_evictions('pages')").fetchone())
# a's own write now sees b's options
a.execute("INSERT INTO pages(key, value) VALUES ('n', 'v')")
print(a.execute("SELECT expires - created FROM pages WHERE key = 'n'").fetchone()[0],
      a.execute("SELECT entries FROM cache_stats('pages')").fetchone()[0])
a.execute("INSERT INTO pages(pages) VALUES ('integrity_check')")
print("ok")
PY
  assert_success
  assert_output "0 0
p12 (8, 'entries')
3600000 5
ok"
}

@test "an expiry set by one connection lowers the bound every connection reads: another's next write reclaims the entry once expired" {
  local db="$BATS_TEST_TMPDIR/x.db" j
  for j in wal delete; do
    rm -f "$db"*
    run python_run - "$ACORN" "$db" "$j" <<'PY'
import sqlite3, sys
def conn():
    c = sqlite3.connect(sys.argv[2], isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(sys.argv[1])
    return c
a, b = conn(), conn()
a.execute("PRAGMA journal_mode=" + sys.argv[3])
a.execute("CREATE VIRTUAL TABLE t USING cache(feed = 5)")
# b writes first: it holds the config row, with no expiry in the table
b.execute("INSERT INTO t(key, value) VALUES ('b1', 'v')")
a.execute("INSERT INTO t(key, value, expires) VALUES ('a1', 'v', 1)")
b.execute("INSERT INTO t(key, value) VALUES ('b2', 'v')")
print(b.execute("SELECT group_concat(key || ' ' || reason) FROM cache_evictions('t')").fetchone()[0],
      b.execute("SELECT expired, entries FROM cache_stats('t')").fetchone())
b.execute("INSERT INTO t(t) VALUES ('integrity_check')")
print("ok")
PY
    assert_success
    assert_output "a1 expired (1, 2)
ok"
  done
}

@test "a write in a deferred transaction on a fresh connection waits for the write lock as a plain table's does, and succeeds" {
  # tests/c/cache_wait.c: the order of events is set by the program (a busy
  # handler that commits the other connection; a commit between prepare and
  # step), for every kind of write, WAL and rollback journal
  run wrap "$BUILD/cache_wait" "$ACORN" "$BATS_TEST_TMPDIR"
  assert_success
  assert_output "ok 55 cases"
}

@test "twelve sqlite3 processes each BEGIN, INSERT into a cache table, COMMIT with .timeout 5000: none fails" {
  # tests/long/cache.bats runs it 50 times
  twelve_writers "$BATS_TEST_TMPDIR/r.db" 1
}

# wal_sets N BOUND: a WAL file with a cache table, then N sets of 1000
# bytes, each followed by a line "OVER <size>" if the -wal file passed
# BOUND plus what one commit writes (4 frames of 4 KiB pages and their
# headers), then the -wal file's size at the end: a script for sqlite3.
wal_sets() {
  local n=$1 bound=$2 i
  for (( i = 1; i <= n; i++ )); do
    echo "INSERT INTO t(key, value) VALUES ($i, zeroblob(1000));"
    echo "SELECT 'OVER ' || length(readfile('$BATS_TEST_TMPDIR/w.db-wal')) WHERE length(readfile('$BATS_TEST_TMPDIR/w.db-wal')) > $bound + 4 * 4120;"
  done
  echo "SELECT 'end ' || (length(readfile('$BATS_TEST_TMPDIR/w.db-wal')) <= $bound + 4 * 4120);"
}

@test "a connection that writes a cache table keeps the -wal file under cache_wal_limit; with 0 it grows as SQLite lets it" {
  local db="$BATS_TEST_TMPDIR/w.db"
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;" "$db"
  assert_success
  run acorn_sql "SELECT cache_wal_limit('64KiB');
$(wal_sets 300 65536)" "$db"
  assert_success
  assert_output "65536
end 1"
  rm -f "$db"*
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;" "$db"
  run acorn_sql "SELECT cache_wal_limit(0);
$(wal_sets 300 65536)" "$db"
  assert_success
  # SQLite's own checkpoints start at 1000 pages: the log passes 64 KiB
  [[ "$output" == *"OVER "* ]] || fail "the log stayed under 64 KiB: $output"
}

@test "acorn's -wal hook takes the place of SQLite's own only; PRAGMA wal_autocheckpoint = N puts SQLite's back" {
  local db="$BATS_TEST_TMPDIR/w.db"
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;
PRAGMA wal_autocheckpoint;
SELECT cache_wal_limit();
INSERT INTO t(key, value) VALUES (1, 'a');
PRAGMA wal_autocheckpoint;
SELECT cache_wal_limit(0);
INSERT INTO t(key, value) VALUES (2, 'b');
PRAGMA wal_autocheckpoint;
PRAGMA wal_autocheckpoint = 500;
INSERT INTO t(key, value) VALUES (3, 'c');
PRAGMA wal_autocheckpoint;
SELECT cache_wal_limit('1MB');
INSERT INTO t(key, value) VALUES (4, 'd');
PRAGMA wal_autocheckpoint;" "$db"
  assert_success
  # SQLite reads the number only while its own hook is in place: 0 while
  # acorn's is (with no bound too); set again, SQLite's is back until the
  # next bound is set and a write looks
  assert_output "wal
1000
67108864
0
0
0
500
500
1000000
0"
  # turned off first (wal_autocheckpoint = 0): acorn puts no hook there
  rm -f "$db"*
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;" "$db"
  run acorn_sql "PRAGMA wal_autocheckpoint = 0;
SELECT cache_wal_limit('64KiB');
$(wal_sets 30 65536)
PRAGMA wal_autocheckpoint;" "$db"
  assert_success
  assert_output_contains "OVER "
  assert_output_contains "end 0
0"
}

@test "a reader that keeps its snapshot: the bounding checkpoint gives up without failing the commit, and truncates the log once the reader is gone" {
  local db="$BATS_TEST_TMPDIR/w.db" i
  run acorn_sql "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t USING cache;" "$db"
  assert_success
  {
    echo ".connection 1"
    echo ".open $db"
    echo "BEGIN; SELECT count(*) FROM t_data;"   # the reader's snapshot
    echo ".connection 0"
    echo "SELECT cache_wal_limit('64KiB');"
    echo "INSERT INTO t(key, value) VALUES (0, zeroblob(100000));"
    echo "SELECT 'wal ' || (length(readfile('$db-wal')) > 100000);"
    echo ".connection 1"
    echo "COMMIT;"
    echo ".connection 0"
    # the next try comes once the log has grown by another 64 KiB
    for (( i = 1; i <= 20; i++ )); do
      echo "INSERT INTO t(key, value) VALUES ($i, zeroblob(1000));"
      echo "SELECT $i || ' ' || length(readfile('$db-wal')) WHERE length(readfile('$db-wal')) < 65536;"
    done
    echo "SELECT count(*) FROM t;"
  } >"$BATS_TEST_TMPDIR/c.sql"
  run acorn_sql "$(cat "$BATS_TEST_TMPDIR/c.sql")" "$db"
  assert_success
  # the connection has no busy timeout: the checkpoint that the reader
  # kept from finishing gave up at once, and the sets went on
  assert_output_contains "0
65536
wal 1"
  [[ "$output" == *$'\n'[0-9]*" 0"$'\n'* ]] || fail "the log was never truncated: $output"
  # not at the first commit after the reader went: that waits for the log
  # to grow by another bound
  [[ "$output" != *$'\n'"1 "* ]] || fail "tried again at once: $output"
  assert_output_contains $'\n21'
}

@test "cache_wal_limit takes 0 or a size as capacity does, refuses anything else by name, and no view or trigger may call it" {
  local msg="cache_wal_limit: bad bound; expected 0 (no bound) or a number of bytes, optionally with a unit B, kB, MB, GB, KiB, MiB or GiB (e.g. 67108864 or '64MiB'), at most 4611686018427387904 bytes"
  run acorn_sql "SELECT cache_wal_limit();
SELECT cache_wal_limit(1048576.0), cache_wal_limit('2MiB'), cache_wal_limit('1.5kB'), cache_wal_limit('0'), cache_wal_limit(4611686018427387904), cache_wal_limit(0);"
  assert_success
  assert_output "67108864
1048576|2097152|1500|0|4611686018427387904|0"
  local v
  for v in NULL -1 1.5 "x'00'" "'1'||char(0)||'0'" "'0MiB'" 4611686018427387905 "''" "'64 XB'"; do
    run acorn_sql "SELECT cache_wal_limit($v);"
    assert_failure "$msg"
  done
  run acorn_sql "CREATE VIEW v AS SELECT cache_wal_limit('1MiB'); SELECT * FROM v;"
  assert_failure "unsafe use of cache_wal_limit()"
}
