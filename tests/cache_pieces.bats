#!/usr/bin/env bats
# Values written in pieces: cache_write(table, key, offset, data), with
# cache_read, alone and from several processes on one file.

load test_helper
load cache

# block P B N: the SQL of block B of piece P, N bytes: one letter repeated
# (printf's precision repeats a %c), different for each (P, B).
block() {
  echo "CAST(printf('%.*c', $3, char(65 + ($1 * 7 + $2) % 26)) AS BLOB)"
}

@test "a piece written in blocks in any order reads back as written, block by block and whole" {
  run acorn_sql "PRAGMA auto_vacuum = INCREMENTAL;
CREATE TABLE src(n INTEGER PRIMARY KEY, block BLOB);
WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < 127)
INSERT INTO src SELECT n, randomblob(16384) FROM s;
CREATE VIRTUAL TABLE pieces USING cache(capacity = '8MiB');
INSERT INTO pieces(key, value) VALUES (x'0102', zeroblob(2097152)), (7, zeroblob(100));
SELECT sum(w) FROM (SELECT cache_write('pieces', x'0102', n * 16384, block) AS w
                    FROM src ORDER BY (n * 37) % 128);
SELECT count(*) FROM src WHERE cache_read('pieces', x'0102', n * 16384, 16384) = block;
SELECT (SELECT hex(value) FROM pieces WHERE key = x'0102')
     = (SELECT group_concat(hex(block), '') FROM (SELECT block FROM src ORDER BY n));
SELECT quote(key), size FROM pieces ORDER BY size;
SELECT cache_write('pieces', 7, 99, x'ee'), hex(cache_read('pieces', 7, 98, 5));
SELECT cache_write('pieces', 7, 100, x''), cache_write('pieces', 7, 0, zeroblob(3));
SELECT entries, bytes FROM cache_stats('pieces');
INSERT INTO pieces(pieces) VALUES ('integrity_check');
PRAGMA integrity_check;"
  assert_success
  assert_output "2097152
128
1
7|108
X'0102'|2097154
1|00EE
0|3
2|2097262
ok"
}

@test "cache_write's errors name it and the allowed values, and leave the value as it was" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache(default_ttl = 3600);
INSERT INTO t(key, value) VALUES ('k', zeroblob(8)), ('txt', 'hello');
INSERT INTO t(key, value, expires) VALUES ('old', zeroblob(8), 1);
CREATE TABLE plain(x);
SELECT cache_write('t', 'k', 7, x'aabb');
SELECT cache_write('t', 'k', 9, x'');
SELECT cache_write('t', 'nope', 0, x'00');
SELECT cache_write('t', 'old', 0, x'00');
SELECT cache_write('t', 'k', 0, 'text');
SELECT cache_write('t', 'k', 0, 12);
SELECT cache_write('t', 'k', 0, NULL);
SELECT cache_write('t', 'txt', 0, x'00');
SELECT cache_write('t', 'k', -1, x'00');
SELECT cache_write('t', 'k', 1.5, x'00');
SELECT cache_write('t', 'k', 'x', x'00');
SELECT cache_write('t', NULL, 0, x'00');
SELECT cache_write('t', 1.5, 0, x'00');
SELECT cache_write('nope', 'k', 0, x'00');
SELECT cache_write('plain', 'k', 0, x'00');
SELECT cache_write(x'74', 'k', 0, x'00');
SELECT hex(value) FROM t WHERE key = 'k';
SELECT value FROM t WHERE key = 'txt';"
  local e
  e=$(runtime_error 0); e=${e% 0:}
  assert_output "0000000000000000
hello
$e 6: cache_write: cannot write 2 bytes at offset 7: the value holds 8 bytes (a value keeps the size it was set with)
$e 7: cache_write: cannot write 0 bytes at offset 9: the value holds 8 bytes (a value keeps the size it was set with)
$e 8: cache_write: no live entry has that key in 't' (write into a value set first, e.g. INSERT ... VALUES (key, zeroblob(size)))
$e 9: cache_write: no live entry has that key in 't' (write into a value set first, e.g. INSERT ... VALUES (key, zeroblob(size)))
$e 10: cache_write: data must be a BLOB, got TEXT
$e 11: cache_write: data must be a BLOB, got INTEGER
$e 12: cache_write: data must be a BLOB, got NULL
$e 13: cache_write: the value is TEXT; only a BLOB value is written in place
$e 14: cache_write: offset must be a non-negative integer
$e 15: cache_write: offset must be a non-negative integer
$e 16: cache_write: offset must be a non-negative integer
$e 17: cache_write: key must not be NULL; expected TEXT, BLOB or INTEGER
$e 18: cache_write: key must be TEXT, BLOB or INTEGER, got REAL
$e 19: cache_write: no such table: 'nope'
$e 20: cache_write: 'plain' is a table, not a cache table
$e 21: cache_write: the table must be named by TEXT, got a BLOB"
}

@test "cache_write and cache_read take offsets up to the largest integer: past the value, an error or no bytes" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('k', x'0102030405060708');
SELECT quote(cache_read('t', 'k', 9223372036854775807, 1));
SELECT quote(cache_read('t', 'k', 9223372036854775807, 9223372036854775807));
SELECT quote(cache_read('t', 'k', 7, 9223372036854775807));
SELECT cache_write('t', 'k', 9223372036854775807, x'aabb');
SELECT cache_write('t', 'k', 9223372036854775807 - 1, x'aabb');
SELECT cache_write('t', 'k', 9223372036854775807, x'');
SELECT hex(value) FROM t WHERE key = 'k';"
  local e
  e=$(runtime_error 0); e=${e% 0:}
  assert_output "X''
X''
X'08'
0102030405060708
$e 7: cache_write: cannot write 2 bytes at offset 9223372036854775807: the value holds 8 bytes (a value keeps the size it was set with)
$e 8: cache_write: cannot write 2 bytes at offset 9223372036854775806: the value holds 8 bytes (a value keeps the size it was set with)
$e 9: cache_write: cannot write 0 bytes at offset 9223372036854775807: the value holds 8 bytes (a value keeps the size it was set with)"
}

@test "cache_write is in the caller's transaction: a rollback undoes it, a write statement's rollback too, and a savepoint's" {
  run acorn_sql "CREATE VIRTUAL TABLE t USING cache;
CREATE TABLE log(n INTEGER NOT NULL);
INSERT INTO t(key, value) VALUES ('k', zeroblob(4));
BEGIN;
SELECT cache_write('t', 'k', 0, x'01');
ROLLBACK;
BEGIN;
SELECT cache_write('t', 'k', 1, x'02');
SAVEPOINT s;
SELECT cache_write('t', 'k', 2, x'03');
ROLLBACK TO s;
COMMIT;
INSERT INTO log SELECT cache_write('t', 'k', 3, x'04');
SELECT hex(value) FROM t;
SELECT * FROM log;"
  assert_success
  assert_output "1
1
1
00020004
1"
  # a statement that fails after its cache_write undoes the write with the rest
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
CREATE TABLE log(n INTEGER NOT NULL);
INSERT INTO t(key, value) VALUES ('k', zeroblob(4));
INSERT INTO log SELECT cache_write('t', 'k', 0, x'ff') UNION ALL SELECT NULL;
SELECT hex(value) FROM t;
SELECT count(*) FROM log;"
  assert_output "00000000
0
$(shell_error 5 'NOT NULL constraint failed: log.n' 19)"
}

@test "cache_write writes, so a view or trigger of the schema cannot call it" {
  run cache_sql "" "CREATE VIRTUAL TABLE t USING cache;
INSERT INTO t(key, value) VALUES ('k', zeroblob(4));
CREATE TABLE log(n);
CREATE TRIGGER w AFTER INSERT ON log BEGIN SELECT cache_write('t', 'k', 0, x'ff'); END;
CREATE VIEW v AS SELECT cache_write('t', 'k', 0, x'ff');
INSERT INTO log VALUES (1);
SELECT * FROM v;
SELECT hex(value) FROM t;"
  # (the INSERT's trigger, and the view, are refused as they are prepared)
  assert_output "00000000
Parse error near line 7: unsafe use of cache_write()
Parse error near line 8: unsafe use of cache_write()"
}

@test "under lru a cache_write is a use; under fifo it is not" {
  run acorn_sql "CREATE VIRTUAL TABLE l USING cache(capacity = 35);
CREATE VIRTUAL TABLE f USING cache(capacity = 35, policy = fifo);
INSERT INTO l(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9)), ('c', zeroblob(9));
INSERT INTO f(key, value) VALUES ('a', zeroblob(9)), ('b', zeroblob(9)), ('c', zeroblob(9));
SELECT cache_write('l', 'a', 0, x'01'), cache_write('f', 'a', 0, x'01');
INSERT INTO l(key, value) VALUES ('d', zeroblob(9));
INSERT INTO f(key, value) VALUES ('d', zeroblob(9));
SELECT group_concat(key) FROM l;
SELECT group_concat(key) FROM f;
SELECT hits FROM l WHERE key = 'a';"
  assert_success
  assert_output "1|1
a,c,d
b,c,d
1"
}

@test "cache_write in temp, in an attached schema by name, and into a table made by acorn 0.1, left in its format" {
  local db="$BATS_TEST_TMPDIR/old.db"
  cp "$TESTS/data/cache-v0.1.0.db" "$db"
  run acorn_sql "CREATE VIRTUAL TABLE temp.t USING cache;
INSERT INTO temp.t(key, value) VALUES (1, zeroblob(2));
SELECT cache_write('t', 1, 1, x'aa'), hex(cache_read('temp.t', 1, 0, 2));
ATTACH '$db' AS old;
SELECT cache_write('old.thumbs', 'a', 98, x'bbcc'), hex(cache_read('old.thumbs', 'a', 97, 10));
SELECT count(*) FROM old.sqlite_schema WHERE name = 'thumbs_lru';
INSERT INTO old.thumbs(thumbs) VALUES ('integrity_check');"
  assert_success
  assert_output "1|00AA
2|00BBCC
1"
}

# pieces_processes DB MODE: eight sqlite3 processes at once, each writing its
# own blocks (one transaction each: a deferred BEGIN that reads nothing
# before its cache_write, with .timeout 5000) into four 64 KiB pieces; every
# one must succeed whatever the order the processes run in, each piece then
# read back as its blocks were written, and the -wal file stays within a
# small multiple of what the blocks are.
pieces_processes() {
  local db=$1 mode=$2 i p b pids rc bad sql check
  rm -f "$db" "$db"-*
  run acorn_sql "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = $mode;
CREATE VIRTUAL TABLE pieces USING cache(capacity = '4MiB');
INSERT INTO pieces(key, value) VALUES (0, zeroblob(65536)), (1, zeroblob(65536)),
  (2, zeroblob(65536)), (3, zeroblob(65536));" "$db"
  assert_success
  pids=()
  for i in $(seq 0 7); do
    # process i writes blocks 2i and 2i+1 of every piece (16 blocks of 4 KiB)
    sql=".load $ACORN
.timeout 5000"
    for p in 0 1 2 3; do
      for b in $(( 2 * i )) $(( 2 * i + 1 )); do
        sql+="
BEGIN;
SELECT cache_write('pieces', $p, $b * 4096, $(block $p $b 4096)) != 4096;
COMMIT;"
      done
    done
    printf '%s\n' "$sql" | wrap "$SQLITE3" -batch -bail "$db" >"$BATS_TEST_TMPDIR/p$i.out" 2>&1 &
    pids+=($!)
  done
  bad=0
  for i in $(seq 0 7); do
    wait_pid "${pids[$i]}" || true; rc=$status
    if [ "$rc" -ne 0 ] || [ "$(sort -u "$BATS_TEST_TMPDIR/p$i.out")" != "0" ]; then
      echo "$mode, process $i: exit $rc: $(cat "$BATS_TEST_TMPDIR/p$i.out")" >&2
      bad=1
    fi
  done
  [ "$bad" -eq 0 ]
  check="SELECT count(*) FROM pieces WHERE 0"
  for p in 0 1 2 3; do
    sql="(SELECT group_concat(hex(column2), '') FROM (SELECT column2 FROM (VALUES"
    for b in $(seq 0 15); do
      sql+="$( [ "$b" -gt 0 ] && echo ,)($b, $(block $p $b 4096))"
    done
    sql+=") ORDER BY column1))"
    check+=" OR (key = $p AND hex(value) = $sql)"
  done
  run acorn_sql "$check;
INSERT INTO pieces(pieces) VALUES ('integrity_check');
SELECT entries, bytes FROM cache_stats('pieces');" "$db"
  assert_success
  assert_output "4
4|262176"
  if [ "$mode" = wal ] && [ -e "$db-wal" ]; then
    # 128 blocks of 4 KiB: each commit appends the page it wrote and few others
    [ "$(stat -c %s "$db-wal")" -lt $(( 4 * 1024 * 1024 )) ]
  fi
}

@test "eight processes writing blocks of the same pieces in deferred transactions all wait and succeed: WAL" {
  pieces_processes "$BATS_TEST_TMPDIR/p.db" wal
}

@test "eight processes writing blocks of the same pieces in deferred transactions all wait and succeed: rollback journal" {
  pieces_processes "$BATS_TEST_TMPDIR/p.db" delete
}

@test "cache_write follows its table's name as another connection drops, creates again and renames it" {
  run python_run - "$ACORN" "$BATS_TEST_TMPDIR/n.db" < <(two_connections_py; cat <<'PY'
b.executescript("PRAGMA journal_mode = WAL;"
                " CREATE VIRTUAL TABLE p USING cache;"
                " INSERT INTO p(key, value) VALUES ('k', zeroblob(4));")
print(q(a, "SELECT cache_write('p', 'k', 0, x'01'), cache_write('p', 'k', 1, x'02')"))
# b drops p and makes another p: a's next write goes into the new one
b.executescript("DROP TABLE p; CREATE VIRTUAL TABLE p USING cache;"
                " INSERT INTO p(key, value) VALUES ('k', zeroblob(2)), ('j', zeroblob(2));")
print(q(a, "SELECT cache_write('p', 'k', 1, x'03')"))
# (the uses of the old table's entries went with it: only the new one's count)
print(q(b, "SELECT key, size FROM p ORDER BY key"))
# b renames it: the old name names nothing, the new one the table
b.execute("ALTER TABLE p RENAME TO r")
try:
    q(a, "SELECT cache_write('p', 'j', 0, x'04')")
except sqlite3.OperationalError as e:
    print(e)
print(q(a, "SELECT cache_write('r', 'j', 0, x'04')"))
a.close()
# (hits: a's one write of each, and this listing's read of each value)
print(q(b, "SELECT key, hex(value), hits FROM r ORDER BY key"))
b.execute("INSERT INTO r(r) VALUES ('integrity_check')")
PY
)
  assert_success
  assert_output "[(1, 1)]
[(1,)]
[('j', 3), ('k', 3)]
cache_write: no such table: 'p'
[(1,)]
[('j', '0400', 2), ('k', '0003', 2)]"
}

@test "cache_read follows its table's name as another connection drops, creates again and renames it" {
  run python_run - "$ACORN" "$BATS_TEST_TMPDIR/n.db" < <(two_connections_py; cat <<'PY'
b.executescript("PRAGMA journal_mode = WAL;"
                " CREATE VIRTUAL TABLE p USING cache;"
                " INSERT INTO p(key, value) VALUES ('k', x'0102');")
print(q(a, "SELECT hex(cache_read('p', 'k', 0, 2)), hex(cache_read('p', 'k', 1, 1))"))
b.executescript("DROP TABLE p; CREATE VIRTUAL TABLE p USING cache;"
                " INSERT INTO p(key, value) VALUES ('k', x'0304'), ('j', x'05');")
print(q(a, "SELECT hex(cache_read('p', 'k', 0, 2)), quote(cache_read('p', 'x', 0, 2))"))
b.execute("ALTER TABLE p RENAME TO r")
try:
    q(a, "SELECT cache_read('p', 'j', 0, 1)")
except sqlite3.OperationalError as e:
    print(e)
print(q(a, "SELECT hex(cache_read('r', 'j', 0, 1))"))
# another table takes the old name: it is that one that is read
b.executescript("CREATE VIRTUAL TABLE p USING cache; INSERT INTO p(key, value) VALUES ('j', x'06');")
print(q(a, "SELECT hex(cache_read('p', 'j', 0, 1)), hex(cache_read('r', 'j', 0, 1))"))
a.close()
# (a's uses of the first p went with it: r counts a's three reads and a miss)
print(q(b, "SELECT hits, misses FROM cache_stats('r')"), q(b, "SELECT key, hits FROM r ORDER BY key"))
b.execute("INSERT INTO r(r) VALUES ('integrity_check')")
PY
)
  assert_success
  assert_output "[('0102', '02')]
[('0304', 'NULL')]
cache_read: no such table: 'p'
[('05',)]
[('06', '05')]
[(3, 1)] [('j', 2), ('k', 1)]"
}
