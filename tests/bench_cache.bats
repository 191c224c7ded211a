#!/usr/bin/env bats
# bench_insert on cache tables: every scratch connection of a run has acorn's
# cache, so a schema or a template can hold a cache table and the statement
# can write and read it.  Counts only, never speed.

load test_helper
load bench_insert

# sq TEXT: TEXT as an SQL string literal.
sq() {
  printf "'%s'" "${1//\'/\'\'}"
}

CACHE="CREATE VIRTUAL TABLE c USING cache(capacity = '64MiB')"
PUT='INSERT INTO c(key, value) VALUES (?1, ?3)'

@test "a schema creates a cache table and the statement sets its keys, in every journal mode" {
  run bi "SELECT journal, rows_written, busy_errors FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$PUT")
   AND journal IN ('wal', 'delete', 'truncate', 'persist', 'memory', 'off')
   AND content=100 AND rows=300 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|300|0
delete|300|0
truncate|300|0
persist|300|0
memory|300|0
off|300|0"
  assert_dir_empty "$D"
}

@test "each set finds the entries before it: the table holds row - 1 entries when row is set, so rows at the end" {
  # a value NULL is refused by the cache (values are TEXT or BLOB): a count
  # that is not row - 1 fails the run at that row
  local st="INSERT INTO c(key, value) VALUES (?1,
    CASE WHEN (SELECT entries FROM cache_stats('c')) = ?1 - 1 THEN ?3 END)"
  run bi "SELECT journal, storage, batch, rows_written FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$st")
   AND journal IN ('wal', 'delete') AND storage IN ('file', 'memory') AND batch IN (1, 7)
   AND rows=200 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|file|1|200
wal|memory|1|200
wal|file|7|200
wal|memory|7|200
delete|file|1|200
delete|memory|1|200
delete|file|7|200
delete|memory|7|200"
  # and the check does fail when the count is not the one expected
  st="INSERT INTO c(key, value) VALUES (?1,
    CASE WHEN (SELECT entries FROM cache_stats('c')) = ?1 - 1 AND ?1 < 50 THEN ?3 END)"
  run bi "SELECT rows_written FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$st") AND rows=200 AND $W AND dir='$D';"
  assert_failure
  assert_output_contains "bench_insert: statement failed at row 50: "
  assert_dir_empty "$D"
}

@test "a capacity smaller than the rows evicts: the table keeps what fits, every set counted" {
  # an entry of an integer key (8 bytes) and 1000 bytes is 1008 bytes: 100
  # fit in 101,000, 101 do not; the count at row n is min(n - 1, 100)
  local st="INSERT INTO c(key, value) VALUES (?1,
    CASE WHEN (SELECT entries FROM cache_stats('c')) = min(?1 - 1, 100) THEN ?3 END)"
  run bi "SELECT rows_written, busy_errors FROM bench_insert
 WHERE schema='CREATE VIRTUAL TABLE c USING cache(capacity = 101000)' AND statement=$(sq "$st")
   AND content=1000 AND rows=400 AND $W AND dir='$D';"
  assert_success
  assert_output "400|0"
  assert_dir_empty "$D"
}

@test "several writer threads set keys of one cache table without errors, in WAL and with a rollback journal" {
  run bi "SELECT journal, threads, mutex, rows_written, busy_errors FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$PUT")
   AND journal IN ('wal', 'delete') AND threads IN (2, 3, 4) AND mutex IN (0, 1)
   AND busy_timeout=60000 AND content=200 AND rows=400 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|2|0|400|0
wal|2|1|400|0
wal|3|0|400|0
wal|3|1|400|0
wal|4|0|400|0
wal|4|1|400|0
delete|2|0|400|0
delete|2|1|400|0
delete|3|0|400|0
delete|3|1|400|0
delete|4|0|400|0
delete|4|1|400|0"
  # each key is new when it is set: no row number runs twice
  local st="INSERT INTO c(key, value) VALUES (?1, CASE WHEN cache_get('c', ?1) IS NULL THEN ?3 END)"
  run bi "SELECT threads, batch, rows_written FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$st") AND threads=4 AND batch IN (1, 10)
   AND begin='immediate' AND busy_timeout=60000 AND rows=400 AND $W AND dir='$D';"
  assert_success
  assert_output "4|1|400
4|10|400"
  assert_dir_empty "$D"
}

@test "a template holding a cache table is copied with its entries; the statement reads and writes them" {
  # (the template in a directory of its own: under valgrind, report files
  # appear beside it in $BATS_TEST_TMPDIR)
  local T="$BATS_TEST_TMPDIR/tpl/tpl.db" before
  mkdir -p "$BATS_TEST_TMPDIR/tpl"
  acorn_sql "CREATE VIRTUAL TABLE c USING cache(capacity = '1MiB');
INSERT INTO c(key, value) VALUES ('kept', 'from the template');" "$T"
  before=$(cksum "$T"; stat -c "%s %Y" "$T"; ls -A "$BATS_TEST_TMPDIR/tpl")
  # cache_get of the template's entry is NULL, refused as a value, if the
  # copy lost it
  local st="INSERT INTO c(key, value) VALUES (?1, cache_get('c', 'kept'))"
  run bi "SELECT journal, storage, rows_written FROM bench_insert
 WHERE template='$T' AND statement=$(sq "$st") AND journal IN ('wal', 'delete')
   AND storage IN ('file', 'memory') AND rows=50 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|file|50
wal|memory|50
delete|file|50
delete|memory|50"
  # a schema can add to the copy: a second cache table
  run bi "SELECT rows_written FROM bench_insert
 WHERE template='$T' AND schema='CREATE VIRTUAL TABLE d USING cache'
   AND statement='INSERT INTO d(key, value) SELECT ?1, value FROM c WHERE key = ''kept'''
   AND rows=20 AND $W AND dir='$D';"
  assert_success
  assert_output "20"
  [ "$(cksum "$T"; stat -c "%s %Y" "$T"; ls -A "$BATS_TEST_TMPDIR/tpl")" = "$before" ]
  assert_dir_empty "$D"
}

@test "the writers keep bench_insert's WAL hook: its checkpoints are counted for a cache table, as for any table" {
  # the cache puts its own -wal hook only where SQLite's is; a writer's
  # connection has bench_insert's, which then counts every checkpoint
  run bi "SELECT wal_autocheckpoint, checkpoints > 0, checkpoints_blocked,
       (wal_bytes_max - 32) % (24 + 4096), wal_bytes_max = wal_bytes_end
  FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$PUT") AND wal_autocheckpoint IN (0, 100)
   AND page_size=4096 AND content=1000 AND rows=1000 AND $W AND dir='$D';"
  assert_success
  assert_output "0|0|0|0|1
100|1|0|0|1"
  # several writers: each has the hook
  run bi "SELECT threads, checkpoints > 0, rows_written FROM bench_insert
 WHERE schema=$(sq "$CACHE") AND statement=$(sq "$PUT") AND wal_autocheckpoint=100 AND threads=3
   AND busy_timeout=60000 AND content=1000 AND rows=1000 AND $W AND dir='$D';"
  assert_success
  assert_output "3|1|1000"
  assert_dir_empty "$D"
}

@test "the cache's functions are on every scratch connection: cache_get, cache_read, cache_stats, cache_evictions" {
  local schema="$CACHE; INSERT INTO c(key, value) VALUES ('k', x'00010203040506070809')"
  run bi "SELECT rows_written FROM bench_insert WHERE schema=$(sq "$schema")
   AND statement='INSERT INTO c(key, value) SELECT ?1, cache_read(''c'', ''k'', ?1 % 10, 1)
                  || cache_get(''c'', ''k'') || (SELECT count(*) FROM cache_evictions(''c''))'
   AND threads IN (1, 2) AND rows=30 AND $W AND dir='$D';"
  assert_success
  assert_output "30
30"
  assert_dir_empty "$D"
}

@test "with acorn on every connection (acorn-auto.so) the scratch connections still get the cache once: a cache table runs" {
  run auto_sql "SELECT threads, rows_written FROM bench_insert WHERE schema=$(sq "$CACHE")
   AND statement=$(sq "$PUT") AND threads IN (1, 2) AND rows=30 AND $W AND dir='$D';"
  assert_success
  assert_output "1|30
2|30"
  assert_dir_empty "$D"
}

@test "a SELECT of cache_read times reads of a stored value: every read a hit, from one writer or several" {
  # a miss (NULL) would overflow abs() and fail the run at that row
  local schema="$CACHE; INSERT INTO c(key, value) VALUES ('page', randomblob(65536))"
  local st="SELECT abs(-9223372036854775807 - (length(cache_read('c', 'page', (?1 % 16) * 4096, 4096)) IS NOT 4096))"
  run bi "SELECT threads, rows_written, busy_errors FROM bench_insert
 WHERE schema=$(sq "$schema") AND statement=$(sq "$st") AND threads IN (1, 3)
   AND busy_timeout=60000 AND rows=300 AND $W AND dir='$D';"
  assert_success
  assert_output "1|300|0
3|300|0"
  # and the same check fails on a key that is not there
  run bi "SELECT rows_written FROM bench_insert
 WHERE schema=$(sq "$schema") AND statement=$(sq "${st/\'page\'/\'nope\'}") AND rows=5 AND $W AND dir='$D';"
  assert_failure
  assert_output_contains "bench_insert: statement failed at row 1: integer overflow"
  assert_dir_empty "$D"
}

@test "content_mb_per_sec of a cache table: the value's bytes a second when the statement sets ?3, NULL for a read without it" {
  local mb_ok="abs(content_mb_per_sec - rows_written * content / elapsed / 1e6) <= 0.0005 + content_mb_per_sec * 1e-6 / elapsed"
  local schema="$CACHE; INSERT INTO c(key, value) VALUES ('page', zeroblob(65536))"
  run bi "SELECT statement = $(sq "$PUT"), threads, typeof(content_mb_per_sec), $mb_ok IS 1 FROM bench_insert
 WHERE schema=$(sq "$schema") AND statement IN ($(sq "$PUT"), 'SELECT cache_read(''c'', ''page'', ?1 * 16, 16)')
   AND threads IN (1, 2) AND busy_timeout=60000 AND content=16384 AND rows=200 AND $W AND dir='$D';"
  assert_success
  assert_output "1|1|real|1
0|1|null|0
1|2|real|1
0|2|null|0"
  assert_dir_empty "$D"
}

# PIECES: 4 pieces of 64 KiB reserved in a cache table, in a database with
# pointer maps; WRITE: row i's 4096-byte block into piece ((i-1)/16) % 4 at
# offset ((i-1) % 16) * 4096, checked: cache_write returns the bytes it
# wrote, and cache_read then reads the block back (json() of 'bad' fails the
# run at that row otherwise).  64 rows write each block once.
PIECES="PRAGMA auto_vacuum = INCREMENTAL; $CACHE;
WITH RECURSIVE p(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM p WHERE k < 3)
INSERT INTO c(key, value) SELECT k, zeroblob(65536) FROM p"
WRITE="SELECT json(CASE
  WHEN cache_write('c', ((?1-1)/16)%4, ((?1-1)%16)*4096, CAST(?3 AS BLOB)) = 4096
   AND cache_read('c', ((?1-1)/16)%4, ((?1-1)%16)*4096, 4096) = CAST(?3 AS BLOB)
  THEN 1 ELSE 'bad' END)"

@test "the statement writes blocks into reserved pieces with cache_write, in place, in every journal mode, on file and in memory" {
  local mb_ok="abs(content_mb_per_sec - rows_written * content / elapsed / 1e6) <= 0.0005 + content_mb_per_sec * 1e-6 / elapsed"
  run bi "SELECT journal, storage, locking, rows_written, busy_errors, $mb_ok FROM bench_insert
 WHERE schema=$(sq "$PIECES") AND statement=$(sq "$WRITE")
   AND journal IN ('wal', 'delete', 'off') AND storage IN ('file', 'memory') AND locking IN ('normal', 'exclusive')
   AND content=4096 AND rows=64 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|file|normal|64|0|1
wal|memory|normal|64|0|1
wal|file|exclusive|64|0|1
wal|memory|exclusive|64|0|1
delete|file|normal|64|0|1
delete|memory|normal|64|0|1
delete|file|exclusive|64|0|1
delete|memory|exclusive|64|0|1
off|file|normal|64|0|1
off|memory|normal|64|0|1
off|file|exclusive|64|0|1
off|memory|exclusive|64|0|1"
  # the check fails where the block does not fit: past the end of a piece
  local past="SELECT cache_write('c', 0, 65536 - 4096 + (?1 = 3), CAST(?3 AS BLOB))"
  run bi "SELECT rows_written FROM bench_insert WHERE schema=$(sq "$PIECES") AND statement=$(sq "$past")
   AND content=4096 AND rows=5 AND $W AND dir='$D';"
  assert_failure
  assert_output_contains "bench_insert: statement failed at row 3: cache_write: "
  assert_dir_empty "$D"
}

@test "two to four writer threads write the blocks of the same pieces with cache_write: every block once, no errors" {
  run bi "SELECT journal, threads, batch, rows_written, busy_errors FROM bench_insert
 WHERE schema=$(sq "$PIECES") AND statement=$(sq "$WRITE")
   AND journal IN ('wal', 'delete') AND threads IN (2, 4) AND batch IN (1, 8)
   AND begin='immediate' AND busy_timeout=60000 AND content=4096 AND rows=64 AND $W AND dir='$D';"
  assert_success
  assert_output "wal|2|1|64|0
wal|2|8|64|0
wal|4|1|64|0
wal|4|8|64|0
delete|2|1|64|0
delete|2|8|64|0
delete|4|1|64|0
delete|4|8|64|0"
  assert_dir_empty "$D"
}
