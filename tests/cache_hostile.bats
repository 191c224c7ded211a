#!/usr/bin/env bats
# A database file from a stranger: files crafted here (shadow tables
# edited by hand, objects planted on them), then opened as a victim would
# open them, with trusted_schema OFF and DEFENSIVE on.  Whatever the file
# holds, a statement on the cache table returns, fails with an error that
# names what is wrong, and never runs what the file planted.  A statement
# that does not return fails the test after 60 s (a bound for a failing
# run only: a passing one never waits on it).

load test_helper

# craft DB SQL: run SQL on DB with acorn loaded and DEFENSIVE off, as a
# program writing the shadow tables by hand would.
craft() {
  printf '.load %s\n.dbconfig defensive off\n%s\n' "$ACORN" "$2" \
    | wrap "$SQLITE3" -batch -bail "$1" >/dev/null
}

# victim DB SQL: SQL on DB as a careful application runs it (trusted_schema
# OFF, DEFENSIVE on), each statement on its own (-bail off: every one is
# tried and reported), within 60 s (300 under valgrind); stdout then stderr
# in $output.
victim() {
  printf '.load %s\n.output /dev/null\n.dbconfig defensive on\n.output stdout\nPRAGMA trusted_schema = OFF;\n%s\n' \
    "$ACORN" "$2" >"$BATS_TEST_TMPDIR/victim.sql"
  run victim_exec "$1" "$BATS_TEST_TMPDIR/victim.sql"
  [ "$status" -ne 124 ] || fail "a statement did not return in time: $output"
}

# victim_exec DB SCRIPT: the shell on DB reading SCRIPT, wrapped as this
# build wants (as wrap does), under timeout.
victim_exec() {
  if [ -n "${ACORN_VALGRIND:-}" ]; then
    timeout 300 valgrind -q --fair-sched=yes --error-exitcode=97 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite \
      --log-file="$BATS_TEST_TMPDIR/report.valgrind.%p" "$SQLITE3" -batch "$1" <"$2" 2>&1
  elif [ -n "${ACORN_PRELOAD:-}" ]; then
    timeout 60 env LD_PRELOAD="$ACORN_PRELOAD" \
      ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.asan" \
      UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$BATS_TEST_TMPDIR/report.ubsan" \
      "$SQLITE3" -batch "$1" <"$2" 2>&1
  else
    timeout 60 "$SQLITE3" -batch "$1" <"$2" 2>&1
  fi
}

# SQLite 3.52 and later refuse, in DEFENSIVE mode, to read a schema that
# has a trigger on a shadow table ("malformed database schema ... cannot
# create triggers on shadow tables"): a statement that would read it fails
# before the cache sees it.  refused_by_sqlite: whether this run's output
# says so.
refused_by_sqlite() {
  [[ "$output" == *"cannot create triggers on shadow tables"* ]]
}

@test "an entry id edited to 2^63-1: renewals, writes, gets and close fail with SQLITE_CORRUPT_VTAB naming it, and return" {
  local db="$BATS_TEST_TMPDIR/h.db" msg
  craft "$db" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('a', 'x');
UPDATE t_data SET id = 9223372036854775807;"
  msg='cache: "main"."t_data" names entry 9223372036854775807, an id the table never gave (they go from 1 to its seq)'
  victim "$db" "UPDATE t SET ttl = 5 WHERE key = 'a';
UPDATE t SET tag = 'g' WHERE key = 'a';
SELECT cache_get('t', 'a');
INSERT INTO t(t) VALUES ('flush');
INSERT INTO t(t) VALUES ('integrity_check');"
  # the get reads the value; its use cannot be written (the flush, and the
  # close, say why or give up: neither hangs)
  assert_output "$(shell_error 6 "$msg" 11)
$(shell_error 7 "$msg" 11)
x
$(shell_error 9 "$msg" 11)
$(shell_error 10 'cache: integrity_check of "t": seq 1 is below the id 9223372036854775807' 11)"
  # deleting the entry that holds it repairs the table
  victim "$db" "DELETE FROM t WHERE key = 'a';
INSERT INTO t(key, value) VALUES ('a', 'y');
SELECT cache_get('t', 'a');
INSERT INTO t(t) VALUES ('integrity_check');"
  assert_output "y"
}

@test "a trigger planted on a shadow table never runs: every write refuses, naming it, and works once it is dropped" {
  local db="$BATS_TEST_TMPDIR/h.db" body
  for body in "DELETE FROM accounts;" "DELETE FROM c_data WHERE id <> new.id;"; do
    rm -f "$db"*
    craft "$db" "CREATE TABLE accounts(x); INSERT INTO accounts VALUES (1), (2);
CREATE VIRTUAL TABLE c USING cache;
INSERT INTO c(key, value) VALUES ('a', 'b');
CREATE TRIGGER evil AFTER INSERT ON c_data BEGIN $body END;"
    victim "$db" "INSERT INTO c(key, value) VALUES ('k', 'v');
UPDATE c SET value = 'w' WHERE key = 'a';
SELECT value FROM c WHERE key = 'a';
SELECT cache_get('c', 'a');
INSERT INTO c(c) VALUES ('flush');
SELECT count(*) FROM accounts;"
    if refused_by_sqlite; then
      # SQLite itself kept the trigger from running: the accounts stay
      [ "${lines[-1]}" = 2 ] || fail "$output"
      continue
    fi
    assert_output "$(runtime_error 6) cache: \"main\".\"c\" is not written while trigger \"evil\" is on its shadow table \"c_data\": acorn did not make it, and it would run inside the cache's writes; DROP TRIGGER \"main\".\"evil\" to use the table
$(runtime_error 7) cache: \"main\".\"c\" is not written while trigger \"evil\" is on its shadow table \"c_data\": acorn did not make it, and it would run inside the cache's writes; DROP TRIGGER \"main\".\"evil\" to use the table
b
b
$(runtime_error 10) cache: \"main\".\"c\" is not written while trigger \"evil\" is on its shadow table \"c_data\": acorn did not make it, and it would run inside the cache's writes; DROP TRIGGER \"main\".\"evil\" to use the table
2"
    victim "$db" "DROP TRIGGER evil;
INSERT INTO c(key, value) VALUES ('k', 'v');
SELECT count(*) FROM c;
SELECT count(*) FROM accounts;
INSERT INTO c(c) VALUES ('integrity_check');"
    assert_output "2
2"
  done
}

@test "an index planted on a shadow table (a UNIQUE one would make sets fail): writes refuse, naming it" {
  local db="$BATS_TEST_TMPDIR/h.db"
  craft "$db" "CREATE VIRTUAL TABLE c USING cache;
INSERT INTO c(key, value) VALUES ('a', 'b');
CREATE UNIQUE INDEX trap ON c_data(created);"
  victim "$db" "INSERT INTO c(key, value) VALUES ('k', 'v');
DROP INDEX trap;
INSERT INTO c(key, value) VALUES ('k', 'v');
SELECT count(*) FROM c;"
  assert_output "$(runtime_error 6) cache: \"main\".\"c\" is not written while index \"trap\" is on its shadow table \"c_data\": acorn did not make it, and the cache's writes would update it; DROP INDEX \"main\".\"trap\" to use the table
2"
}

@test "a cache table in temp with the name of one in main still writes after a VACUUM copies main's indexes onto it" {
  local db="$BATS_TEST_TMPDIR/h.db"
  victim "$db" "CREATE VIRTUAL TABLE temp.\"a b\" USING cache;
CREATE VIRTUAL TABLE main.\"a b\" USING cache;
VACUUM;
SELECT count(*) > 2 FROM temp.sqlite_schema WHERE type = 'index' AND name LIKE 'acorn^_cache^_%' ESCAPE '^';
INSERT INTO temp.\"a b\"(key, value) VALUES ('k', 'v');
INSERT INTO temp.\"a b\"(\"a b\") VALUES ('integrity_check');
SELECT key, value FROM temp.\"a b\";"
  assert_output "1
k|v"
}

@test "a trigger planted by another connection while the victim is open is seen at the victim's next write" {
  local db="$BATS_TEST_TMPDIR/h.db"
  craft "$db" "PRAGMA journal_mode = WAL; CREATE TABLE accounts(x); INSERT INTO accounts VALUES (1);
CREATE VIRTUAL TABLE c USING cache;"
  victim "$db" "INSERT INTO c(key, value) VALUES ('a', 'b');
.shell printf '.load %s\n.dbconfig defensive off\nCREATE TRIGGER evil AFTER INSERT ON c_data BEGIN DELETE FROM accounts; END;\n' '$ACORN' | '$SQLITE3' -batch '$db' >/dev/null
INSERT INTO c(key, value) VALUES ('k', 'v');
SELECT count(*) FROM accounts;"
  # (where SQLite itself refuses the schema, nothing of it runs: done)
  refused_by_sqlite && return 0
  assert_output_contains "is not written while trigger \"evil\" is on its shadow table \"c_data\""
  [ "${lines[-1]}" = 1 ] || fail "$output"
}

@test "counters out of range: every statement that reads them fails with SQLITE_CORRUPT_VTAB; listings and gets by key still read" {
  local db="$BATS_TEST_TMPDIR/h.db" msg
  craft "$db" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value, tag) VALUES ('a', 'x', 'g');
UPDATE t_config SET seq = 9223372036854775807;"
  msg='cache: "main"."t_config": a counter is out of range: capacity 1073741824, bytes 2, entries 1, seq 9223372036854775807, hits 0, misses 0, evictions 0, expired 0, head 0, low 0, dead 0, default_ttl 0, max_entries 0, feed 0, feed_seq 0, tagged 1, expiry_low NULL, expiry_seq 1'
  victim "$db" "INSERT INTO t(key, value) VALUES ('k', 'v');
SELECT cache_get('t', 'a');
SELECT cache_read('t', 'a', 0, 1);
SELECT * FROM cache_stats('t');
SELECT * FROM cache_evictions('t');
SELECT key FROM t;
SELECT value FROM t WHERE key = 'a';
SELECT key FROM t WHERE tag = 'g';"
  assert_output "$(shell_error 6 "$msg" 11)
$(shell_error 7 "cache_get: ${msg#cache: }" 11)
$(shell_error 8 "cache_read: ${msg#cache: }" 11)
$(shell_error 9 "cache_stats: ${msg#cache: }" 11)
$(shell_error 10 "cache_evictions: ${msg#cache: }" 11)
a
x
a"
}

@test "a default_ttl beyond the longest ttl: a write refuses it as a counter out of range, before it turns it into ms" {
  local db="$BATS_TEST_TMPDIR/h.db"
  craft "$db" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('a', 'x');
UPDATE t_config SET dttl = 10000000000000;"
  victim "$db" "INSERT INTO t(key, value) VALUES ('b', 'y');
SELECT key, quote(expires) FROM t;"
  assert_output "$(shell_error 6 'cache: "main"."t_config": a counter is out of range: capacity 1073741824, bytes 2, entries 1, seq 1, hits 0, misses 0, evictions 0, expired 0, head 0, low 0, dead 0, default_ttl 10000000000000, max_entries 0, feed 0, feed_seq 0, tagged 0, expiry_low NULL, expiry_seq 1' 11)
a|NULL"
}

@test "a <t>_rec whose lo is no INTEGER PRIMARY KEY: reads and writes fail naming the records, and return" {
  local db="$BATS_TEST_TMPDIR/h.db" idx
  craft "$db" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('a', 'x'), ('b', 'y'), ('c', 'z');
SELECT value FROM t WHERE key = 'a';"
  idx=$("$SQLITE3" "$db" "SELECT name FROM sqlite_schema WHERE tbl_name = 't_rec' AND type = 'index'")
  craft "$db" "DROP TABLE t_rec;
CREATE TABLE t_rec(lo PRIMARY KEY, minused INTEGER, recs BLOB NOT NULL);
CREATE INDEX \"$idx\" ON t_rec(minused);
INSERT INTO t_rec VALUES (0, NULL, x''), (1.5, NULL, x'');"
  victim "$db" "SELECT value FROM t WHERE key = 'b';
INSERT INTO t(key, value) VALUES ('e', 'w');"
  assert_output "y
$(shell_error 7 'cache: the recency records of "t" at 1 are corrupt' 11)"
}

@test "counters in range but wrong: a write that would store one out of range, or leave bytes over capacity, fails and stores nothing" {
  local db="$BATS_TEST_TMPDIR/h.db"
  craft "$db" "CREATE VIRTUAL TABLE t USING cache(capacity = 1000);
INSERT INTO t(key, value) VALUES ('a', zeroblob(20)), ('b', zeroblob(25));
UPDATE t_config SET bytes = 0;"
  victim "$db" "INSERT INTO t(key, value) VALUES ('a', 'x');
SELECT capacity, entries, bytes FROM cache_stats('t');"
  assert_output "$(shell_error 6 'cache: "main"."t": the counters do not match the entries (bytes would be -19): integrity_check says more' 11)
1000|2|0"
  rm -f "$db"*
  craft "$db" "CREATE VIRTUAL TABLE t USING cache(capacity = 1000);
INSERT INTO t(key, value) VALUES ('a', zeroblob(20)), ('b', zeroblob(25));
DELETE FROM t_data;"
  victim "$db" "INSERT INTO t(t, value) VALUES ('capacity', 10);
SELECT capacity, entries, bytes FROM cache_stats('t');"
  assert_output "$(shell_error 6 'cache: "main"."t": the counters do not match the entries (bytes 47, entries 2 with no entry left to evict under capacity 10, max_entries 0): integrity_check says more' 11)
1000|2|47"
}
