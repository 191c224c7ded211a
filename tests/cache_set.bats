#!/usr/bin/env bats
# cache_set(table, key, value [, ttl [, tag]]): a set by a function, which
# must do what INSERT INTO table(key, value, ttl, tag) does (the same checks,
# counters, eviction, expiry, tags and feed), in the caller's transaction or
# in one of its own, alone and with another process holding the write lock.

load test_helper
load cache

# set_sql MODE KEY VALUE [TTL [TAG]]: one set of the SQL expressions given,
# on one line (so that an error is reported at the same line number both
# ways): MODE insert, the INSERT of the columns given and the rowid it made
# (last_insert_rowid()); MODE function, the cache_set call with as many
# arguments, which returns that rowid.
set_sql() {
  local mode=$1 cols="key, value" vals="$2, $3" args="'t', $2, $3"
  shift 3
  if [ $# -ge 1 ]; then cols+=", ttl"; vals+=", $1"; args+=", $1"; fi
  if [ $# -ge 2 ]; then cols+=", tag"; vals+=", $2"; args+=", $2"; fi
  if [ "$mode" = insert ]; then
    echo "INSERT INTO t($cols) VALUES ($vals); SELECT last_insert_rowid();"
  else
    echo "SELECT cache_set($args);"
  fi
}

# sets_script MODE: a sequence of sets on the cache table t made by MODE
# (set_sql), with gets between them (uses under lru), an entry too large,
# then what the table holds, its stats and its feed.  The sets give keys of
# each type (a whole REAL key is the INTEGER), ttls INTEGER, REAL, 0 (expired
# at once) and NULL (default_ttl, if the table has one), tags and NULL tags,
# replace a stored key, and evict for the capacity and for max_entries.
sets_script() {
  local m=$1
  set_sql "$m" "'a'" "zeroblob(40)"
  set_sql "$m" "'b'" "'text value'" 10
  set_sql "$m" 3 "x'0102'" NULL "'img'"
  set_sql "$m" "'c'" "zeroblob(60)" 0.5 "'img'"
  echo "SELECT quote(cache_get('t', 'a')) = quote(zeroblob(40));"
  set_sql "$m" "'d'" "zeroblob(80)" NULL NULL
  set_sql "$m" 4 "zeroblob(50)" 0 "'gone'"
  set_sql "$m" "'b'" "'replaced'" 20 "'txt'"
  set_sql "$m" "x'ff00'" "zeroblob(70)"
  set_sql "$m" 2.0 "'two'" 1.25
  echo "SELECT quote(cache_get('t', 3));"
  set_sql "$m" "'e'" "'e'" NULL "'small'"
  set_sql "$m" "'f'" "'f'"
  set_sql "$m" "'g'" "'g'" 5
  # (refused: one statement alone on its line either way, as a shell may
  # or may not run the rest of a line after an error)
  if [ "$m" = insert ]; then
    echo "INSERT INTO t(key, value) VALUES ('big', zeroblob(300));"
  else
    echo "SELECT cache_set('t', 'big', zeroblob(300));"
  fi
  set_sql "$m" "'h'" "'h'" NULL "'small'"
  echo "SELECT rowid, quote(key), iif(length(value) > 8, 'zeroblob(' || length(value) || ')', quote(value)),
       size, quote(tag), expires IS NOT NULL, expires - created FROM t ORDER BY rowid;"
  echo "SELECT * FROM cache_stats('t');"
  echo "SELECT seq, reason, quote(key), size FROM cache_evictions('t');"
  echo "INSERT INTO t(t) VALUES ('integrity_check');"
}

# same_sets OPTIONS: sets_script by INSERT and by cache_set, each on a fresh
# table made with OPTIONS; both runs must print the same (an error's
# message named "cache" in one and "cache_set" in the other; cache_sql
# prints sqlite3's stderr last), which is left in $output for the caller to
# compare with what it expects.
same_sets() {
  local by_insert
  # (sqlite3 exits 1 after the script for the one set refused)
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache($1);
$(sets_script insert)"
  [ "$status" -eq 1 ] || fail "sqlite3 exited $status: $output"
  by_insert=$output
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache($1);
$(sets_script function)"
  [ "$status" -eq 1 ] || fail "sqlite3 exited $status: $output"
  [[ "$output" == *"cache_set: entry of 303 bytes"* ]] || fail "cache_set's error does not name it: $output"
  output=${output//cache_set: /cache: }
  [ "$output" = "$by_insert" ] || fail "INSERT printed:
$by_insert
cache_set printed:
$output"
}

@test "the same sets by INSERT and by cache_set give the same rows, stats and feed: lru, default_ttl, max_entries, feed" {
  same_sets "capacity = 200, feed = 20, max_entries = 6, default_ttl = 3600"
  local e
  e=$(runtime_error 17)
  assert_output "1
2
3
4
1
6
7
8
9
10
NULL
11
12
13
14
9|X'FF00'|zeroblob(70)|72|NULL|1|3600000
10|2|'two'|11|NULL|1|1250
11|'e'|'e'|2|'small'|1|3600000
12|'f'|'f'|2|NULL|1|3600000
13|'g'|'g'|2|NULL|1|5000
14|'h'|'h'|2|'small'|1|3600000
200|6|91|7|1|6|1
1|capacity|'b'|11
2|capacity|3|10
3|capacity|'c'|61
4|expired|4|58
5|capacity|'a'|41
6|entries|'d'|81
7|entries|'b'|9
$e cache: entry of 303 bytes exceeds capacity of 200 bytes"
}

@test "the same sets by INSERT and by cache_set give the same rows, stats and feed: fifo, max_entries, a short feed" {
  same_sets "capacity = 200, policy = fifo, feed = 3, max_entries = 5"
  local e
  e=$(runtime_error 17)
  assert_output "1
2
3
4
1
5
6
7
8
9
NULL
10
11
12
13
9|2|'two'|11|NULL|1|1250
10|'e'|'e'|2|'small'|0|
11|'f'|'f'|2|NULL|0|
12|'g'|'g'|2|NULL|1|5000
13|'h'|'h'|2|'small'|0|
200|5|19|||7|1
6|entries|'d'|81
7|entries|'b'|9
8|entries|X'FF00'|72
$e cache: entry of 303 bytes exceeds capacity of 200 bytes"
}

@test "cache_set returns the new entry's rowid and leaves last_insert_rowid() as it was" {
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache;
CREATE TABLE plain(x);
CREATE TABLE log(id);
INSERT INTO plain VALUES (1), (2), (3);
SELECT cache_set('t', 'a', 'v');
SELECT last_insert_rowid();
SELECT cache_set('t', 'b', x'00', 60, 'tg') = (SELECT rowid FROM t WHERE key = 'b');
SELECT last_insert_rowid();
SELECT cache_set('t', 'a', 'w');
SELECT rowid FROM t WHERE key = 'a';
BEGIN;
SELECT cache_set('t', 'c', 'v');
SELECT last_insert_rowid();
COMMIT;
INSERT INTO log SELECT cache_set('t', 'd', 'v');
SELECT last_insert_rowid(), (SELECT id FROM log), (SELECT rowid FROM t WHERE key = 'd');
INSERT INTO t(key, value) VALUES ('e', 'v');
SELECT last_insert_rowid();
SELECT cache_set('t', 'f', 'v'), last_insert_rowid();
SELECT rowid, key FROM t ORDER BY rowid;"
  assert_success
  assert_output "1
3
1
3
3
3
4
3
1|5|5
6
7|6
2|b
3|a
4|c
5|d
6|e
7|f"
}

@test "cache_set's errors name it, as INSERT's name cache: table, key, value, ttl, tag, size" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache(capacity = 64);
CREATE TABLE plain(x);
CREATE VIEW v AS SELECT 1;
SELECT cache_set(NULL, 'k', 'v');
SELECT cache_set(x'74', 'k', 'v');
SELECT cache_set('t' || char(0) || 'x', 'k', 'v');
SELECT cache_set('nope', 'k', 'v');
SELECT cache_set('plain', 'k', 'v');
SELECT cache_set('v', 'k', 'v');
SELECT cache_set('t', NULL, 'v');
SELECT cache_set('t', 1.5, 'v');
SELECT cache_set('t', 'k', NULL);
SELECT cache_set('t', 'k', 'v', 'ten');
SELECT cache_set('t', 'k', 'v', '10');
SELECT cache_set('t', 'k', 'v', x'0a');
SELECT cache_set('t', 'k', 'v', -1);
SELECT cache_set('t', 'k', 'v', -0.5);
SELECT cache_set('t', 'k', 'v', 1000000000001);
SELECT cache_set('t', 'k', 'v', 1e300);
SELECT cache_set('t', 'k', 'v', 10, 7);
SELECT cache_set('t', 'k', 'v', 10, x'01');
SELECT cache_set('t', 'k', 'v', 10, 1.5);
SELECT cache_set('t', 'k', zeroblob(64));
SELECT cache_set('t', 'k', zeroblob(63));
SELECT cache_set('t', 'k', 'v', 1000000000000, 'longest');
SELECT key, size, tag FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
INSERT INTO t(key, value, ttl) VALUES ('k', 'v', 'ten');
INSERT INTO t(key, value) VALUES ('k', zeroblob(64));"
  local e
  e=$(runtime_error 0); e=${e% 0:}
  assert_output "1
2
k|2|longest
1|2|0
$e 5: cache_set: no such table: NULL
$e 6: cache_set: the table must be named by TEXT, got a BLOB
$e 7: cache_set: a table name cannot hold a NUL byte
$e 8: cache_set: no such table: 'nope'
$e 9: cache_set: 'plain' is a table, not a cache table
$e 10: cache_set: 'v' is a view, not a cache table
$e 11: cache_set: key must not be NULL; expected TEXT, BLOB or INTEGER
$e 12: cache_set: key must be TEXT, BLOB or INTEGER, got REAL
$e 13: cache_set: value must not be NULL; expected BLOB, TEXT, INTEGER or REAL
$e 14: cache_set: ttl must be a number of seconds (INTEGER or REAL) or NULL, got TEXT
$e 15: cache_set: ttl must be a number of seconds (INTEGER or REAL) or NULL, got TEXT
$e 16: cache_set: ttl must be a number of seconds (INTEGER or REAL) or NULL, got BLOB
$e 17: cache_set: bad ttl -1; expected seconds from 0 to 1000000000000
$e 18: cache_set: bad ttl -0.5; expected seconds from 0 to 1000000000000
$e 19: cache_set: bad ttl 1000000000001; expected seconds from 0 to 1000000000000
$e 20: cache_set: bad ttl 1.0e+300; expected seconds from 0 to 1000000000000
$e 21: cache_set: tag must be TEXT or NULL, got INTEGER
$e 22: cache_set: tag must be TEXT or NULL, got BLOB
$e 23: cache_set: tag must be TEXT or NULL, got REAL
$e 24: cache_set: entry of 65 bytes exceeds capacity of 64 bytes
$e 29: cache: ttl must be a number of seconds (INTEGER or REAL) or NULL, got TEXT
$e 30: cache: entry of 65 bytes exceeds capacity of 64 bytes"
}

@test "a refused cache_set writes nothing and counts nothing, in autocommit and inside a transaction" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache(capacity = 100, feed = 10);
INSERT INTO t(key, value) VALUES ('a', zeroblob(50)), ('b', zeroblob(40));
SELECT cache_set('t', 'c', zeroblob(100));
BEGIN;
SELECT cache_set('t', 'c', zeroblob(20));
SELECT cache_set('t', 'd', zeroblob(20), 'x');
SELECT cache_set('t', 'd', zeroblob(20), 10, 5);
SELECT cache_set('t', 'd', zeroblob(200));
COMMIT;
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
SELECT seq, key, reason FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');"
  local e
  e=$(runtime_error 0); e=${e% 0:}
  assert_output "3
b,c
2|62|1
1|a|capacity
$e 4: cache_set: entry of 101 bytes exceeds capacity of 100 bytes
$e 7: cache_set: ttl must be a number of seconds (INTEGER or REAL) or NULL, got TEXT
$e 8: cache_set: tag must be TEXT or NULL, got INTEGER
$e 9: cache_set: entry of 201 bytes exceeds capacity of 100 bytes"
}

@test "cache_set takes 3 to 5 arguments: other counts are SQLite's wrong number of arguments" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
SELECT cache_set('t', 'k');
SELECT cache_set('t', 'k', 'v', 1, 'tag', 6);
SELECT cache_set('t');
SELECT cache_set('t', 'k', 'v'), cache_set('t', 'k', 'v', 1), cache_set('t', 'k', 'v', 1, 'tag');"
  # (the shells of 3.38 and later then show the statement and where in it
  # the error is: those lines start with a space)
  output=$(grep -v '^ ' <<<"$output")
  assert_output "1|2|3
Parse error near line 3: wrong number of arguments to function cache_set()
Parse error near line 4: wrong number of arguments to function cache_set()
Parse error near line 5: wrong number of arguments to function cache_set()"
}

@test "cache_set finds its table as the other functions do: bare name, main., temp., an attached schema" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
CREATE VIRTUAL TABLE temp.t USING cache;
ATTACH ':memory:' AS aux;
CREATE VIRTUAL TABLE aux.c USING cache;
SELECT cache_set('t', 'bare', 'v'), cache_set('temp.t', 'temp', 'v'), cache_set('main.t', 'main', 'v');
SELECT cache_set('c', 'bare', 'v'), cache_set('aux.c', 'aux', 'v');
SELECT group_concat(key) FROM temp.t;
SELECT group_concat(key) FROM main.t;
SELECT group_concat(key) FROM aux.c;
SELECT cache_set('aux.t', 'k', 'v');
SELECT cache_set('main.c', 'k', 'v');
SELECT cache_set('nodb.t', 'k', 'v');"
  local e
  e=$(runtime_error 0); e=${e% 0:}
  assert_output "1|2|1
1|2
bare,temp
main
bare,aux
$e 11: cache_set: no such table: 'aux.t'
$e 12: cache_set: no such table: 'main.c'
$e 13: cache_set: no such table: 'nodb.t'"
}

@test "cache_set in BEGIN ... ROLLBACK leaves nothing, the stats as before; in BEGIN ... COMMIT it stays" {
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache(capacity = 100, feed = 100);
INSERT INTO t(key, value) VALUES ('a', zeroblob(39)), ('b', zeroblob(39));
SELECT * FROM cache_stats('t');
BEGIN;
SELECT cache_set('t', 'c', zeroblob(39));
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
ROLLBACK;
SELECT group_concat(key) FROM t;
SELECT * FROM cache_stats('t');
SELECT count(*) FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');
BEGIN;
SELECT cache_set('t', 'c', zeroblob(39));
COMMIT;
SELECT group_concat(key) FROM t;
SELECT * FROM cache_stats('t');
SELECT seq, key, reason FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');"
  assert_success
  assert_output "100|2|80|0|0|0|0
3
b,c
2|80|1
a,b
100|2|80|0|0|0|0
0
3
b,c
100|2|80|0|0|1|0
1|a|capacity"
}

@test "savepoints in a transaction mixing INSERT and cache_set: ROLLBACK TO undoes both, the counters follow" {
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache(capacity = 100, feed = 100);
INSERT INTO t(key, value) VALUES ('a', zeroblob(39)), ('b', zeroblob(39));
BEGIN;
INSERT INTO t(key, value) VALUES ('d', 'd1');
SAVEPOINT s;
SELECT cache_set('t', 'e', zeroblob(60));
INSERT INTO t(key, value) VALUES ('f', 'f1');
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
ROLLBACK TO s;
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
SELECT cache_set('t', 'g', 'g1');
SAVEPOINT inner;
SELECT cache_set('t', 'h', zeroblob(90));
ROLLBACK TO inner;
RELEASE s;
COMMIT;
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
SELECT seq, key, reason FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');
SAVEPOINT outer;
SELECT cache_set('t', 'k4', 'v');
RELEASE outer;
SAVEPOINT outer;
SELECT cache_set('t', 'k5', 'v');
ROLLBACK TO outer;
RELEASE outer;
SELECT group_concat(key) FROM t;
SELECT entries, bytes, evictions FROM cache_stats('t');
INSERT INTO t(t) VALUES ('integrity_check');"
  assert_success
  assert_output "4
d,e,f
3|67|2
a,b,d
3|83|0
4
5
a,b,d,g
4|86|0
5
6
a,b,d,g,k4
5|89|0"
}

@test "INSERT INTO log SELECT cache_set(...) FROM src: one transaction, evicting, in autocommit and inside BEGIN; a failing statement undoes its sets" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache(capacity = 100, feed = 100);
CREATE TABLE log(id INTEGER NOT NULL);
CREATE TABLE src(k, v);
INSERT INTO src VALUES ('a', zeroblob(39)), ('b', zeroblob(39)), ('c', zeroblob(39)), ('d', zeroblob(39));
INSERT INTO log SELECT cache_set('t', k, v) FROM src;
SELECT group_concat(id) FROM log;
SELECT group_concat(key), group_concat(rowid) FROM t;
SELECT * FROM cache_stats('t');
SELECT seq, key, reason FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');
INSERT INTO log SELECT cache_set('t', 'x' || k, v) FROM src UNION ALL SELECT NULL;
SELECT group_concat(id) FROM log;
SELECT group_concat(key) FROM t;
SELECT * FROM cache_stats('t');
INSERT INTO t(t) VALUES ('integrity_check');
BEGIN;
INSERT INTO log SELECT cache_set('t', 'y' || k, v) FROM src;
SELECT group_concat(key) FROM t;
INSERT INTO log SELECT cache_set('t', 'z' || k, v) FROM src UNION ALL SELECT NULL;
SELECT group_concat(id) FROM log;
SELECT group_concat(key) FROM t;
INSERT INTO t(t) VALUES ('integrity_check');
COMMIT;
SELECT * FROM cache_stats('t');
SELECT seq, key, reason FROM cache_evictions('t') WHERE seq > 2;
INSERT INTO t(t) VALUES ('integrity_check');
BEGIN;
INSERT INTO log SELECT cache_set('t', 'w' || k, v) FROM src;
ROLLBACK;
SELECT group_concat(key) FROM t;
SELECT count(*) FROM log;
SELECT * FROM cache_stats('t');
INSERT INTO t(t) VALUES ('integrity_check');"
  assert_output "1,2,3,4
c,d|3,4
100|2|80|0|0|2|0
1|a|capacity
2|b|capacity
1,2,3,4
c,d
100|2|80|0|0|2|0
yc,yd
1,2,3,4,5,6,7,8
yc,yd
100|2|82|0|0|6|0
3|c|capacity
4|d|capacity
5|ya|capacity
6|yb|capacity
yc,yd
8
100|2|82|0|0|6|0
$(shell_error 12 'NOT NULL constraint failed: log.id' 19)
$(shell_error 20 'NOT NULL constraint failed: log.id' 19)"
}

@test "a failing statement that is the first to call cache_set in a transaction undoes its sets; the transaction goes on" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache(capacity = 100, feed = 100);
CREATE TABLE log(id INTEGER NOT NULL);
CREATE TABLE src(k, v);
INSERT INTO src VALUES ('a', zeroblob(39)), ('b', zeroblob(39)), ('c', zeroblob(39));
INSERT INTO t(key, value) VALUES ('p', 'q');
BEGIN;
INSERT INTO log SELECT cache_set('t', k, v) FROM src UNION ALL SELECT NULL;
SELECT count(*) FROM log;
SELECT group_concat(key) FROM t;
SELECT * FROM cache_stats('t');
SELECT count(*) FROM cache_evictions('t');
INSERT INTO t(t) VALUES ('integrity_check');
SELECT cache_set('t', 'k', 'v');
COMMIT;
SELECT group_concat(key) FROM t;
SELECT * FROM cache_stats('t');
INSERT INTO t(t) VALUES ('integrity_check');"
  assert_output "0
p
100|1|2|0|0|0|0
0
2
p,k
100|2|4|0|0|0|0
$(shell_error 8 'NOT NULL constraint failed: log.id' 19)"
}

@test "cache_set writes, so a view or trigger of the schema cannot call it" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
CREATE TABLE log(n);
CREATE TRIGGER w AFTER INSERT ON log BEGIN SELECT cache_set('t', 'trigger', 'v'); END;
CREATE VIEW v AS SELECT cache_set('t', 'view', 'v');
INSERT INTO log VALUES (1);
SELECT * FROM v;
SELECT count(*) FROM log;
SELECT count(*) FROM t;"
  # (the INSERT's trigger, and the view, are refused as they are prepared)
  assert_output "0
0
Parse error near line 6: unsafe use of cache_set()
Parse error near line 7: unsafe use of cache_set()"
}

# busy_py: a Python script run as python_run - ACORN DB MODE VARIANT.
# Connection b (this process) makes the cache table t (capacity 100, the
# entry 'old' of 40 bytes) in journal mode MODE, then holds the write lock:
# BEGIN IMMEDIATE and a set of 'from b' (40 bytes).  Process a (a child
# Python, PRAGMA busy_timeout = 5000) then calls cache_set('t', 'from a',
# 45 bytes): in autocommit (VARIANT autocommit) or after a deferred BEGIN
# that read nothing (VARIANT deferred, and COMMIT after it).  a must wait
# for b and then succeed (its set evicting 'old', which shows it ran after
# b's commit); with no busy handler called it would fail at once with
# "database is locked".
#
# The order of events is made certain without sleeping for it: a prints
# "calling" just before its call, and b reads that line; from then on the
# only way a's process can sleep is in SQLite's busy handler (the busy
# timeout sleeps with nanosleep: /proc/PID/wchan names hrtimer_nanosleep),
# so b polls a's wchan until it shows a sleeping there, and only then
# commits.  Had a failed instead of waiting, it ends, and b commits once it
# sees a's process gone: a's output then shows the error.  The polling has
# no bound of its own: a gives up after its busy timeout anyway.
busy_py() {
  cat <<'PY'
import os, sqlite3, subprocess, sys, time
ext, path, mode, variant = sys.argv[1:5]
A = r'''
import ctypes, sqlite3, sys
ext, path, variant = sys.argv[1:4]
a = sqlite3.connect(path, isolation_level=None)
a.enable_load_extension(True)
a.load_extension(ext)
a.execute("PRAGMA busy_timeout = 5000")
if variant == "deferred":
    a.execute("BEGIN")
print("calling", flush=True)
try:
    print("a set", a.execute("SELECT cache_set('t', 'from a', zeroblob(39))").fetchall())
    if variant == "deferred":
        a.execute("COMMIT")
except sqlite3.Error as e:
    print("a failed:", e)
a.close()
# under make test-asan this process inherits the sanitizers: leaks are
# checked here, as python_run does for the parent, not at exit
lsan = getattr(ctypes.CDLL(None), "__lsan_do_leak_check", None)
if lsan:
    lsan()
'''
b = sqlite3.connect(path, isolation_level=None)
b.enable_load_extension(True)
b.load_extension(ext)
b.execute("PRAGMA busy_timeout = 5000")
print(b.execute("PRAGMA journal_mode = " + mode).fetchall())
b.executescript("CREATE VIRTUAL TABLE t USING cache(capacity = 100);"
                " INSERT INTO t(key, value) VALUES ('old', zeroblob(37));")
b.execute("BEGIN IMMEDIATE")
b.execute("INSERT INTO t(key, value) VALUES ('from b', zeroblob(34))")
p = subprocess.Popen([sys.executable, "-c", A, ext, path, variant],
                     stdout=subprocess.PIPE, text=True)
first = p.stdout.readline()
if first != "calling\n":
    sys.exit("a did not start: %r" % first)
while p.poll() is None:
    try:
        with open("/proc/%d/wchan" % p.pid) as f:
            if "nanosleep" in f.read():
                print("a waits")
                break
    except FileNotFoundError:
        pass
    time.sleep(0.0001)
b.execute("COMMIT")
print(p.communicate(timeout=60)[0].strip(), "exit", p.returncode)
print(b.execute("SELECT key, size FROM t ORDER BY key").fetchall())
print(b.execute("SELECT entries, bytes, evictions FROM cache_stats('t')").fetchall())
b.execute("INSERT INTO t(t) VALUES ('integrity_check')")
PY
}

# check_busy MODE VARIANT: busy_py on a fresh file, and what it must print.
check_busy() {
  run python_run - "$ACORN" "$BATS_TEST_TMPDIR/b.db" "$1" "$2" < <(busy_py)
  assert_success
  assert_output "[('$1',)]
a waits
a set [(3,)] exit 0
[('from a', 45), ('from b', 40)]
[(2, 85, 1)]"
}

@test "cache_set in autocommit waits for another process's write transaction, then succeeds: WAL" {
  check_busy wal autocommit
}

@test "cache_set in autocommit waits for another process's write transaction, then succeeds: rollback journal" {
  check_busy delete autocommit
}

@test "cache_set first in a deferred BEGIN waits for another process's write transaction, then succeeds: WAL" {
  check_busy wal deferred
}

@test "cache_set first in a deferred BEGIN waits for another process's write transaction, then succeeds: rollback journal" {
  check_busy delete deferred
}

# After a read inside a deferred BEGIN, a write needs the write lock while
# the transaction holds a read lock (a snapshot, in WAL mode): SQLite then
# does not call the busy handler (waiting could deadlock, or the snapshot be
# out of date once the other writer commits) and answers SQLITE_BUSY at
# once, for a plain table's INSERT as for a cache table's.  cache_set is no
# different: "cache_set: database is locked" at once, no wait, the caller's
# transaction still open.  In WAL mode, once b has committed, the snapshot
# is out of date and a retry in the same transaction fails again; only a
# new transaction succeeds.  With a rollback journal b cannot commit while
# a holds its read lock, so a rolls back first.  Nothing here waits (a's
# error comes at once), so one process with two connections makes the
# order certain.
@test "cache_set after a read in a deferred BEGIN, while another connection holds the write lock: database is locked at once, as an INSERT" {
  local mode stmt
  for mode in wal delete; do
    for stmt in "SELECT cache_set('t', 'from a', 'x')" \
                "INSERT INTO t(key, value) VALUES ('from a', 'x')"; do
      rm -f "$BATS_TEST_TMPDIR"/s.db*
      run python_run - "$ACORN" "$BATS_TEST_TMPDIR/s.db" "$mode" "$stmt" \
        < <(two_connections_py; cat <<'PY'
mode, stmt = sys.argv[3:5]
b.execute("PRAGMA journal_mode = " + mode)
b.executescript("CREATE VIRTUAL TABLE t USING cache; CREATE TABLE plain(x);"
                " INSERT INTO t(key, value) VALUES ('old', 'v');")
def attempt():
    try:
        return a.execute(stmt).fetchall()
    except sqlite3.OperationalError as e:
        # (the primary code: the extended one differs, see the report)
        return "%s (%d), in a transaction: %s" % (e, e.sqlite_errorcode & 0xff, a.in_transaction)
a.execute("BEGIN")
print(a.execute("SELECT count(*) FROM t").fetchall())
b.execute("BEGIN IMMEDIATE")
b.execute("INSERT INTO plain VALUES (1)")
print(attempt())
if mode == "wal":
    b.execute("COMMIT")
    print(attempt())
    a.execute("ROLLBACK")
else:
    a.execute("ROLLBACK")
    b.execute("COMMIT")
a.execute("BEGIN")
print(a.execute("SELECT count(*) FROM t").fetchall())
a.execute(stmt)
a.execute("COMMIT")
print(b.execute("SELECT key FROM t ORDER BY key").fetchall(),
      b.execute("SELECT entries FROM cache_stats('t')").fetchall())
b.execute("INSERT INTO t(t) VALUES ('integrity_check')")
PY
)
      assert_success
      local name="database is locked"
      [[ "$stmt" == SELECT* ]] && name="cache_set: database is locked"
      if [ "$mode" = wal ]; then
        assert_output "[(1,)]
$name (5), in a transaction: True
$name (5), in a transaction: True
[(1,)]
[('from a',), ('old',)] [(2,)]"
      else
        assert_output "[(1,)]
$name (5), in a transaction: True
[(1,)]
[('from a',), ('old',)] [(2,)]"
      fi
    done
  done
}

# wal_size HOW N: the size of the -wal file of a fresh WAL database after N
# sets of 500 bytes into a 64 KiB cache table, each in autocommit, by HOW
# (insert: INSERT; function: cache_set), read while the connection is open
# (its close checkpoints and removes the file).
wal_size() {
  local i db="$BATS_TEST_TMPDIR/$1.db"
  {
    echo "PRAGMA journal_mode = WAL;"
    echo "CREATE VIRTUAL TABLE t USING cache(capacity = '64KiB');"
    echo ".output /dev/null"
    for (( i = 1; i <= $2; i++ )); do
      if [ "$1" = insert ]; then
        echo "INSERT INTO t(key, value) VALUES ($i, zeroblob(500));"
      else
        echo "SELECT cache_set('t', $i, zeroblob(500));"
      fi
    done
    echo ".output stdout"
    echo "SELECT entries, evictions FROM cache_stats('t');"
    echo "SELECT length(readfile('$db-wal'));"
  } >"$BATS_TEST_TMPDIR/$1.sql"
  acorn_sql ".read $BATS_TEST_TMPDIR/$1.sql" "$db"
}

@test "2000 cache_set calls in autocommit keep the -wal file within twice what 2000 INSERTs leave" {
  local n by_insert by_function
  n=$(big 2000)
  run wal_size insert "$n"
  assert_success
  by_insert=$output
  run wal_size function "$n"
  assert_success
  by_function=$output
  # the same entries and evictions both ways (the first two lines)
  [ "$(head -2 <<<"$by_function")" = "$(head -2 <<<"$by_insert")" ] ||
    fail "INSERT: $by_insert; cache_set: $by_function"
  local wi=${by_insert##*$'\n'} wf=${by_function##*$'\n'}
  echo "# -wal after $n sets: INSERT $wi bytes, cache_set $wf bytes" >&3
  [ "$wi" -gt 0 ] && [ "$wf" -gt 0 ] || fail "no -wal file: $wi $wf"
  [ "$wf" -le $(( 2 * wi )) ] || fail "cache_set's -wal $wf bytes, INSERT's $wi"
}

# cache_set in autocommit that cannot take the write lock (the busy timeout
# runs out, the database is read-only) fails as cache_write does, with its
# savepoint undone and the connection usable.
@test "cache_set in autocommit whose busy timeout runs out fails with database is locked and leaves the connection usable" {
  local mode
  for mode in wal delete; do
    rm -f "$BATS_TEST_TMPDIR"/l.db*
    run python_run - "$ACORN" "$BATS_TEST_TMPDIR/l.db" "$mode" <<'PY'
import sqlite3, sys
ext, path, mode = sys.argv[1:4]
def conn(timeout_ms):
    c = sqlite3.connect(path, isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.execute("PRAGMA busy_timeout = %d" % timeout_ms)
    return c
# a gives up at once: nothing waits, so one process makes the order certain
a, b = conn(0), conn(5000)
b.execute("PRAGMA journal_mode = " + mode)
b.executescript("CREATE VIRTUAL TABLE t USING cache; CREATE TABLE plain(x);")
b.execute("BEGIN IMMEDIATE")
b.execute("INSERT INTO plain VALUES (1)")
try:
    print(a.execute("SELECT cache_set('t', 'a', 'x')").fetchall())
except sqlite3.OperationalError as e:
    print(e, e.sqlite_errorcode & 0xff, "in a transaction:", a.in_transaction)
b.execute("COMMIT")
print(a.execute("SELECT cache_set('t', 'a', 'x')").fetchall(), a.in_transaction)
print(b.execute("SELECT key FROM t").fetchall())
b.execute("INSERT INTO t(t) VALUES ('integrity_check')")
PY
    assert_success
    assert_output "cache_set: database is locked 5 in a transaction: False
[(1,)] False
[('a',)]"
  done
}

@test "cache_set on a read-only database fails with attempt to write a readonly database, as cache_write does" {
  local db="$BATS_TEST_TMPDIR/ro.db"
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache; INSERT INTO t(key, value) VALUES ('k', zeroblob(2));" "$db"
  assert_success
  run cache_sql "-readonly" "SELECT cache_write('t', 'k', 0, x'01');
SELECT cache_set('t', 'a', 'x');
SELECT cache_get('t', 'k') IS NOT NULL;" "$db"
  assert_output "1
$(shell_error 2 'cache_write: attempt to write a readonly database' 8)
$(shell_error 3 'cache_set: attempt to write a readonly database' 8)"
}
