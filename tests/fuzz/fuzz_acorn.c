/*
** fuzz_acorn.c: a libFuzzer target for acorn's whole SQL surface.
**
**   make fuzz                        build build/fuzz/fuzz_acorn (clang,
**                                    libFuzzer, ASan, UBSan) and run it for
**                                    FUZZ_SECONDS seconds
**   make fuzz-repro FILE=crash-...   run one saved input again, printing
**                                    every statement it executes and what
**                                    each returned
**   ACORN_FUZZ_TRACE=1 build/fuzz/fuzz_acorn FILE   the same by hand
**
** Built from the sources in ext/ with -DSQLITE_CORE and -DACORN_TESTING (the
** clock hook: every input sees a clock that stands still unless the input
** moves it), and linked against the system libsqlite3, which ASan does not
** instrument: freed memory is filled with garbage (__asan_default_options)
** so that SQLite reading memory acorn made it free crashes.  make fuzz
** FUZZ_SQLITE=.../sqlite3.c links an instrumented amalgamation instead.
**
** EACH INPUT
**
** runs on a fresh in-memory database, "/acorn-fuzz.db" on the memdb VFS,
** through two connections (the operation '2' runs the next operation on the
** second one: DDL and writes of another connection, against the first one's
** buffered uses).  memdb is the connections' VFS, so ATTACH and VACUUM INTO
** of any name stay in memory too.  SQLITE_DBCONFIG_DEFENSIVE is on;
** SQLITE_LIMIT_LENGTH is 1 MB and SQLITE_LIMIT_SQL_LENGTH 100 kB; a progress
** handler interrupts any statement after FUZZ_STEP_BUDGET callbacks (the
** handler also runs inside acorn's own statements on the connection); at
** most FUZZ_MAX_ROWS rows are stepped per statement.  The 'q' operation
** gives the next statement a budget of a few callbacks, and 'o' makes one
** of its allocations fail (or all from one on), so interrupts and
** out-of-memory errors land inside acorn's own work.  A statement that
** fails must fail with an error acorn may give (fuzzEnd): not CORRUPT,
** INTERNAL or MISUSE, not NOMEM unless 'o' made an allocation fail, never
** with the message "not an error".  Then, with the clock still stopped, no
** budget and no failing allocation:
**   1. every held statement is finalized; the second connection ends its
**      transaction and closes (writing its buffered uses);
**   2. for every cache table (main, temp, attached), the integrity_check
**      command must succeed;
**   3. an open transaction is committed (rolled back if COMMIT fails) and
**      step 2 runs again;
**   4. for every cache table: 'purge' (which also writes the buffered
**      uses), then SELECT sum(size), count(*) FROM t must equal bytes and
**      entries of cache_stats('schema.t'), sum(hits) must be at most its
**      hits; the entries with a tag, counted by a scan, must be the sum of
**      the entries found through the tag index for each tag, every tag row
**      must name an entry that exists and each tag count as many there as
**      in the table; the feed (cache_evictions) must hold at most feed
**      rows, in increasing seq with no gap, none above the config row's,
**      each with a reason of capacity, entries or expired, a size >= 0
**      (an empty key with an empty value counts 0) and a time; and
**      integrity_check must succeed again;
**   5. sqlite3_close() must return SQLITE_OK on both connections, and
**      sqlite3_memory_used() must be back where it was before the opens
**      (acorn allocates with sqlite3_malloc: a buffer or instance kept
**      after its connection closed shows up here).
** A failure prints what broke and the statements of the input, then calls
** abort(), so libFuzzer saves the input as a crash.
**
** INPUT FORMAT: a program of one-byte operations
**
** Raw SQL mutated at random is mostly syntax errors, and deep states (a
** few cache tables in several schemas, full to capacity, with buffered uses,
** inside nested savepoints, then DDL) need long correct sequences.  So an
** input is a program: every byte sequence is a valid one, and a mutation
** changes one statement or one operand.  The first byte of an operation
** names a statement template (the letters in aOp[] below; any other byte
** selects aOp[byte % FUZZ_NOP_ANY], one of the first ones); each %X in the template takes the next byte to
** pick from a table of operands (keys, values, capacities, table names,
** schemas, ...: every SQLite type, extremes and wrong types included).
** Operand bytes '0'-'9', 'a'-'z', 'A'-'Z' are positions 0-61 in their table
** (then modulo its size), so hand-written programs read as mnemonics.  Space,
** tab, CR and LF between operations are skipped; '#' starts a comment that
** runs to the end of the line.  '>' takes the rest of the line as raw SQL
** (libFuzzer's dictionary tokens land there), so anything the templates do
** not say can still be tried.  Raw SQL that names bench_insert is skipped:
** bench_insert runs only through the 'b' template, which always says
** storage='memory' and rows of at most 20, with at most 2 threads and 1
** reader, so no run touches the disk or takes long; acorn itself is built
** unchanged.
**
** Operands are taken in the order the placeholders appear; %R (a table
** reference) takes two, schema then name, and %O (CREATE options) two,
** capacity then recency_buffer.  Example (tests/fuzz/corpus/ has more):
**   C0010        CREATE VIRTUAL TABLE "t" USING cache(capacity=100)
**   i00000       INSERT INTO "t"(key, value) VALUES('a', 'v')
**   P0 s001 T0   SAVEPOINT a; SELECT value FROM "t" WHERE key='b';
**                ROLLBACK TO a
*/
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acorn.h"
#include "bench/benchInt.h"

int sqlite3_acorn_init(sqlite3*, char**, const sqlite3_api_routines*);

#define FUZZ_BASE_MS      1700000000000LL  /* the clock at the start */
#define FUZZ_STEP_BUDGET  20000     /* progress callbacks per statement */
#define FUZZ_PROGRESS_N   16        /* VM steps per progress callback */
#define FUZZ_MAX_ROWS     1000      /* rows stepped per statement */
#define FUZZ_MAX_DEPTH    4         /* nesting of operand templates */
#define FUZZ_NHOLD        2         /* statements held open at once */
#define FUZZ_DB_NAME      "/acorn-fuzz.db"  /* memdb: shared by name */

/* ---------------------------------------------------------------- tables */

#define N(a) ((unsigned)(sizeof(a)/sizeof(a[0])))

/* Schemas of a table reference: "" means unqualified. */
static const char *const azSchema[] = { "", "main", "temp", "aux", "aux2" };

/* Table names, written quoted by %R/%n/%N. */
static const char *const azName[] = {
  "t", "u", "T", "a b", "v", "value", "key", "t_data", "x\"y", "w",
};

/* Keys: the first few repeat often, so sets collide. */
static const char *const azKey[] = {
  "'a'", "'b'", "'c'", "1", "2", "x'61'", "'1'", "'d'", "0", "-1",
  "9223372036854775807", "-9223372036854775808", "NULL", "1.5", "''", "x''",
  "'A'", "zeroblob(20)", "uuid7()", "printf('%%.60c','k')", "'\xc3\xa9'",
  "'a'||char(0)||'b'", "randomblob(4)", "3", "'e'", "CAST(1 AS TEXT)",
  "1.0", "-0.0", "9.2233720368547758e18",
};

/* Values. */
static const char *const azValue[] = {
  "'v'", "x'0102'", "zeroblob(10)", "zeroblob(40)", "'hello'", "zeroblob(90)",
  "''", "x''", "zeroblob(200)", "zeroblob(1000)", "randomblob(30)", "NULL",
  "1", "1.5", "'\xc3\xbcn\xc3\xaf'", "printf('%%.300c','v')", "uuid4_blob()",
  "'a'||char(0)||'b'", "zeroblob(5000)", "x'00'", "-1", "zeroblob(95)",
};

/* Expiry times: "@d" is the input's clock plus d ms. */
static const char *const azExpires[] = {
  "NULL", "@1", "@1000", "@-1", "@0", "@5", "@100000", "0", "-1",
  "9223372036854775807", "-9223372036854775808", "'x'", "1.5", "'123'",
  "x'00'", "@60000",
};

/* Capacity option, then the others (joined by %O). */
static const char *const azCapOpt[] = {
  "", "capacity=100", "capacity=50", "capacity=1000", "capacity='1KiB'",
  "capacity=20", "capacity=1", "capacity = ' 2 kB '", "capacity=0",
  "capacity=4611686018427387904", "capacity='4294967296GiB'",
  "capacity=4611686018427387905", "capacity=1.5", "capacty=1", "capacity",
  "capacity=-1", "capacity=10MiB", "capacity=\"300\"", "capacity=''",
  "capacity=5000", "capacity=1GB", "capacity=200",
};
static const char *const azBufOpt[] = {
  "", "recency_buffer=1", "recency_buffer=2", "recency_buffer=3",
  "recency_buffer=100000", "recency_buffer=0", "recency_buffer=1000000",
  "recency_buffer=1000001", "recency_buffer=x", "recency_buffer=10",
  "recency_buffer=99999999999999999999", "recency_buffer=-1",
  "policy=fifo", "policy=lru", "policy=x", "autoflush=off", "autoflush=on",
  "autoflush=maybe", "recency_buffer=2, policy=fifo",
  "autoflush=off, recency_buffer=1", "policy=fifo, policy=lru",
  "recency_buffer='2.0'", "policy=fifo, autoflush=off",
  "default_ttl='15m'", "default_ttl=0", "default_ttl=1", "default_ttl='1w'",
  "default_ttl='2h', policy=fifo", "max_entries=1", "max_entries=3",
  "max_entries=0", "max_entries=-1", "max_entries=2, policy=fifo",
  "max_entries='5', default_ttl=1", "feed=3", "feed=0", "feed=1000001",
  "feed=2, max_entries=2", "feed=100, policy=fifo", "feed=x",
};

/* Commands and their argument. */
static const char *const azCommand[] = {
  "'capacity'", "'purge'", "'flush'", "'integrity_check'", "'CAPACITY'",
  "'vacuum'", "NULL", "1", "'Flush'", "'default_ttl'", "'DEFAULT_TTL'",
  "'max_entries'", "'feed'",
};
static const char *const azCapArg[] = {
  "NULL", "100", "50", "1000", "'1KiB'", "20", "1", "10", "0", "-1", "'x'",
  "1.5", "4611686018427387904", "4611686018427387905", "'4294967296GiB'",
  "' 3 kb '", "9223372036854775807", "x'31'", "''", "200", "5000", "'10'",
  "'15m'", "'2h'", "'7d'", "'90s'", "'1w'", "1000000000000", "'1000000000001'",
};

/* Small integers and wrong types (offsets, lengths, limits). */
static const char *const azInt[] = {
  "0", "1", "2", "3", "10", "100", "-1", "NULL", "1.5", "'1'", "2147483647",
  "2147483648", "9223372036854775807", "-9223372036854775808", "5", "1000",
};

/* Table names as strings, for cache_get, cache_read and cache_stats. */
static const char *const azTabStr[] = {
  "'t'", "'u'", "'main.t'", "'temp.t'", "'aux.t'", "'T'", "'a b'", "'nope'",
  "NULL", "''", "'main.a b'", "'aux2.u'", "'main.'", "'.t'", "'temp.u'",
  "'aux.u'", "1", "'main.nope'", "'x\"y'", "'v'", "'main.u'", "x'74'",
};

static const char *const azSavepoint[] = {
  "a", "b", "c", "acorn_cache_flush", "A",
};
static const char *const azAttach[] = { "aux", "aux2", "main", "temp" };
static const char *const azAttachFile[] = { "':memory:'", "''" };
static const char *const azVerb[] = {
  "INSERT", "INSERT OR REPLACE", "INSERT OR IGNORE", "REPLACE",
  "INSERT OR ROLLBACK", "INSERT OR ABORT", "INSERT OR FAIL",
};
static const char *const azBegin[] = {
  "BEGIN", "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "BEGIN DEFERRED", "END",
};

/* Functions: every SQL function of acorn, with and without arguments. */
static const char *const azFunc[] = {
  "uuid4()", "gen_random_uuid()", "uuid4_blob()", "uuid7()", "uuid7(%X)",
  "uuid7_blob()", "uuid7_blob(%X)", "uuid8()", "uuid8(%X)", "uuid8_blob()",
  "uuid8_blob(%X)", "uuid_str(%X)", "uuid_blob(%X)", "uuid_version(%X)",
  "uuid_timestamp(%X)", "acorn_version()", "acorn_debug()",
  "cache_read(%T, %K, %I, %I)", "uuid4(%X)", "uuid_str()",
  "uuid_str(%X, %X)", "uuid7(%X, %X)", "acorn_version(%X)",
  "cache_read(%T, %K, %I)", "hex(%X)", "length(%X)",
  "cache_get(%T, %K)", "cache_get(%T)", "cache_wal_limit()",
  "cache_wal_limit(%X)",
};

/* Arguments of functions: values, uuid spellings, or another call. */
static const char *const azArg[] = {
  "NULL", "0", "1700000000000", "281474976710655", "281474976710656", "-1",
  "1.0", "1.5", "1e300", "'018bcfe5-6800-7abc-8def-0123456789ab'",
  "'{018BCFE568007ABC8DEF0123456789AB}'",
  "'018bcfe56800-7abc8def0123456789ab'",
  "x'018bcfe568007abc8def0123456789ab'", "x'00'", "'abc'", "''",
  "9223372036854775807", "-9223372036854775808", "'1700000000000'",
  "1700000000000.0", "'018bcfe5-6800-7abc-8def-0123456789a'",
  "'018bcfe5--6800-7abc-8def-0123456789ab'", "zeroblob(16)", "%F", "%F",
  "%K", "'018bcfe5-6800-7abc-8def-0123456789abx'",
  "'{018bcfe5-6800-7abc-8def-0123456789ab'", "-0.0", "281474976710655.5",
};

/* Reads. */
static const char *const azRead[] = {
  "SELECT key, value FROM %R WHERE key IN (%K, %K, %K)",
  "SELECT * FROM %R",
  "SELECT key, size, created, last_used, hits, expires FROM %R",
  "SELECT count(*), sum(size) FROM %R",
  "SELECT value FROM %R WHERE key>%K",
  "SELECT value FROM %R WHERE key=%K COLLATE NOCASE",
  "SELECT a.key, b.value FROM %R a JOIN %R b ON a.key=b.key",
  "SELECT value FROM %R WHERE key=(SELECT key FROM %R ORDER BY hits DESC)",
  "SELECT rowid, hits, last_used FROM %R WHERE key=%K",
  "SELECT value FROM %R WHERE key IS %K",
  "SELECT value FROM %R WHERE key IN (SELECT key FROM %R)",
  "SELECT value, hits FROM %R WHERE key=%K OR key=%K",
  "SELECT value FROM %R LIMIT %I",
  "SELECT %n FROM %R",
  "SELECT key, length(value) FROM %R WHERE key=%K AND key=%K",
  "SELECT value FROM %R WHERE key IN (%K)",
  "SELECT value FROM %R WHERE rowid=%I",
  "SELECT hits, value, hits FROM %R WHERE key IN (%K, %K) ORDER BY key",
  "EXPLAIN QUERY PLAN SELECT value FROM %R WHERE key=%K",
  "SELECT value FROM %R WHERE key=%K AND expires IS NULL",
  "SELECT key, ttl FROM %R WHERE ttl IS NULL",
  "SELECT key, tag FROM %R WHERE tag=%K",
  "SELECT value, tag FROM %R WHERE tag IN (%K, %K)",
  "SELECT key FROM %R WHERE tag=%K AND key=%K",
  "SELECT count(*), tag FROM %R GROUP BY tag",
  "SELECT * FROM cache_evictions(%T)",
  "SELECT seq, key, reason FROM cache_evictions(%T) WHERE seq>%I",
  "SELECT count(*) FROM cache_evictions(%T) WHERE seq>=%I OR size>%I",
  "SELECT * FROM cache_evictions",
  "SELECT e.key FROM cache_evictions(%T) e JOIN %R t ON t.key=e.key",
  "SELECT cache_get(%T, %K), cache_get(%T, %K)",
  "SELECT key, cache_get(%T, key) FROM %R",
  "SELECT cache_get(%T, key) FROM %R WHERE key IN (%K, %K)",
};

/* UPDATE t SET ... */
static const char *const azUpdate[] = {
  "key=%K WHERE key=%K",
  "expires=%E WHERE key=%K",
  "value=%V, expires=%E",
  "value=value||%V WHERE key IN (%K, %K)",
  "hits=1",
  "size=1 WHERE key=%K",
  "rowid=rowid+1",
  "%n='flush'",
  "key=%K",
  "expires=%E WHERE key>%K",
  "value=(SELECT value FROM %R WHERE key=%K) WHERE key=%K",
  "key=key||'x' WHERE key=%K",
  "value=%V, key=%K WHERE key=%K",
  "expires=NULL",
  "value=%V WHERE rowid=%I",
  "created=1 WHERE key=%K",
  "last_used=%I",
  "ttl=%I WHERE key=%K",
  "ttl=%I, expires=%E WHERE key=%K",
  "ttl=%I, value=%V",
  "ttl=NULL, expires=%E WHERE key=%K",
  "tag=%K WHERE key=%K",
  "tag=NULL WHERE tag=%K",
  "value=%V WHERE tag=%K",
  "tag=%K, ttl=%I",
  "expires=%E WHERE key=%K",
  "ttl=%I, tag=%K WHERE key=%K",
  "expires=NULL, tag=NULL WHERE key IN (%K, %K)",
  "ttl=%I WHERE tag=%K",
};

/* DELETE FROM t ... */
static const char *const azDelete[] = {
  "", " WHERE key IN (%K, %K)", " WHERE size>%I", " WHERE rowid=%I",
  " WHERE hits>0", " WHERE expires IS NOT NULL", " WHERE value=%V",
  " WHERE key=(SELECT key FROM %R LIMIT 1)", " WHERE key=%K RETURNING key",
  " WHERE tag=%K", " WHERE tag IN (%K, %K)", " WHERE tag IS NULL",
};

/* cache_stats. */
static const char *const azStats[] = {
  "SELECT * FROM cache_stats(%T)",
  "SELECT * FROM cache_stats",
  "SELECT * FROM cache_stats WHERE tbl=%T OR tbl=%T",
  "SELECT * FROM cache_stats(%T) WHERE entries=%I OR bytes>%I",
  "SELECT * FROM cache_stats WHERE tbl=%T OR entries=%I",
  "SELECT capacity, tbl FROM cache_stats WHERE tbl IN (%T, %T)",
  "SELECT * FROM cache_stats WHERE tbl=%T",
  "SELECT * FROM cache_stats(%T) a JOIN cache_stats(%T) b",
  "SELECT * FROM cache_stats WHERE tbl>%T",
  "SELECT (SELECT bytes FROM cache_stats(%T)), (SELECT sum(size) FROM %R)",
};

/* Insert forms beyond the plain set. */
static const char *const azInsert[] = {
  "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i<%I)"
  " INSERT INTO %R(key, value) SELECT i, zeroblob(i*%I) FROM s",
  "INSERT INTO %R(key, value) SELECT key, value FROM %R",
  "INSERT INTO %R(key, value, expires) SELECT key||'x', value, expires"
  " FROM %R WHERE key IN (%K, %K)",
  "INSERT INTO %R(key, value) SELECT uuid7(), randomblob(%I)",
  "INSERT INTO %R(key, value) SELECT key, value FROM %R WHERE key=%K",
  "INSERT INTO %R(key, value, size) VALUES(%K, %V, 1)",
  "INSERT INTO %R(rowid, key, value) VALUES(%I, %K, %V)",
  "INSERT INTO %R(key, value, hits) VALUES(%K, %V, 1)",
  "INSERT INTO %R(key, value, created) VALUES(%K, %V, 1)",
  "INSERT INTO %R(key, value, last_used) VALUES(%K, %V, %I)",
  "INSERT INTO %R(key, value) VALUES(%K, %V) RETURNING key, size, hits",
  "INSERT INTO %R(key, value) VALUES(%K, %V) ON CONFLICT DO NOTHING",
  "INSERT INTO %R(key, value) VALUES(%K, cache_read(%T, %K, 0, 100))",
  "INSERT INTO %R SELECT * FROM %R",
  "UPDATE OR IGNORE %R SET key=%K WHERE key=%K",
  "UPDATE OR REPLACE %R SET key=%K WHERE key=%K",
  "UPDATE OR ROLLBACK %R SET key=%K",
  "INSERT OR IGNORE INTO %R(key, value, expires) VALUES(%K, %V, %E)",
  "%Q INTO %R(key, value, ttl) VALUES(%K, %V, %I)",
  "INSERT INTO %R(key, value, ttl, expires) VALUES(%K, %V, %I, %E)",
  "INSERT INTO %R(key, value, ttl) SELECT key, value, %I FROM %R",
  "%Q INTO %R(key, value, tag) VALUES(%K, %V, %K)",
  "INSERT INTO %R(key, value, tag) VALUES(%K, %V, %K), (%K, %V, %K)",
  "INSERT INTO %R(key, value, tag, ttl) SELECT key, value, %K, %I FROM %R",
};

/* Other DDL, views, triggers, pragmas. */
static const char *const azOther[] = {
  "CREATE TABLE IF NOT EXISTS plain(x)",
  "DROP TABLE IF EXISTS plain",
  "CREATE TEMP TABLE IF NOT EXISTS tplain(x)",
  "CREATE INDEX IF NOT EXISTS plain_x ON plain(x)",
  "CREATE TABLE IF NOT EXISTS %A.plain(x)",
  "CREATE TEMP VIEW IF NOT EXISTS vw AS SELECT key, value FROM %R",
  "SELECT * FROM vw",
  "DROP VIEW IF EXISTS vw",
  "CREATE TEMP TRIGGER IF NOT EXISTS tr AFTER INSERT ON plain BEGIN"
  " INSERT INTO %R(key, value) VALUES(new.x, %V); END",
  "INSERT INTO plain VALUES(%K)",
  "DROP TRIGGER IF EXISTS tr",
  "CREATE TRIGGER IF NOT EXISTS tr2 AFTER INSERT ON plain BEGIN"
  " SELECT value FROM %R WHERE key=new.x; END",
  "ANALYZE",
  "VACUUM",
  "PRAGMA encoding='UTF-16le'",
  "PRAGMA integrity_check",
  "REINDEX",
  "PRAGMA recursive_triggers=ON",
  "PRAGMA temp_store=MEMORY",
  "SELECT name, sql FROM %A.sqlite_schema",
  "DELETE FROM plain",
  "CREATE TEMP TRIGGER IF NOT EXISTS tr3 AFTER DELETE ON plain BEGIN"
  " DELETE FROM %R WHERE key=old.x; END",
  "PRAGMA %A.cache_size=10",
  "VACUUM %A",
  "PRAGMA schema_version",
  "SELECT * FROM pragma_table_xinfo(%N)",
  "CREATE TEMP TRIGGER IF NOT EXISTS tr4 BEFORE INSERT ON plain BEGIN"
  " UPDATE %R SET value=%V WHERE key=new.x; END",
  "PRAGMA encoding='UTF-16be'",
  /* bench_insert is eponymous only: no schema can name it (fuzzEnd) */
  "CREATE VIRTUAL TABLE IF NOT EXISTS %A.hb USING bench_insert",
};

/* bench_insert: rows, selected columns, extra constraints. */
static const char *const azBenchRows[] = {
  "1", "2", "3", "5", "10", "20", "0", "-1", "NULL", "'x'", "1.5",
};
static const char *const azBenchCols[] = {
  "*", "rows_written, busy, db_bytes, sqlite_version, fsync_us",
  "busy_errors, wal_bytes_max, wal_bytes_end, checkpoints, checkpoints_blocked",
  "content_mb_per_sec, elapsed",
  "id, journal, storage, rows_written", "count(*)",
};
static const char *const azBenchWhere[] = {
  "", " AND id IN ('integer','uuid7_blob')", " AND id='shortid'",
  " AND id='uuid4_text'", " AND id='uuid8_blob'", " AND id='bogus'",
  " AND journal IN ('wal','delete','off')", " AND journal='memory'",
  " AND journal='x'", " AND synchronous IN ('off','full','extra')",
  " AND synchronous='x'", " AND threads=2", " AND threads IN (1,2)",
  " AND threads=0", " AND threads=65", " AND mutex=1", " AND mutex=2",
  " AND batch=3", " AND batch=0", " AND begin='immediate'", " AND begin='x'",
  " AND prepare IN ('each','exec')", " AND prepare='x'",
  " AND locking='exclusive'", " AND locking='exclusive' AND threads=2",
  " AND page_size=512", " AND page_size=1000", " AND page_size IS NULL",
  " AND cache_size=-100", " AND cache_size=2000000000", " AND mmap_size=0",
  " AND mmap_size=-1", " AND readers=1", " AND readers=65",
  " AND seconds=0.001", " AND seconds=0", " AND content IN (0, 100)",
  " AND content=1000001", " AND busy_timeout=0", " AND busy_timeout=-1",
  " AND dir='/nonexistent'", " AND dir=NULL", " AND dir='.'",
  " AND threads>1", " AND id=NULL", " AND id IN ('uuid7_text','uuid8_text')",
  " AND id IN ('uuid4_blob', %X)",
  (" AND schema='CREATE TABLE ev(id INTEGER PRIMARY KEY, kind, body)'"
   " AND statement='INSERT INTO ev(kind, body) VALUES(?1 %% 7, ?3)'"),
  " AND statement='UPDATE posts SET content=?3 WHERE rowid=?1'",
  " AND statement='DELETE FROM posts WHERE rowid=?1'",
  " AND statement='SELECT 1'",
  " AND schema='CREATE TABLE x('",
  " AND template='/nonexistent.db' AND statement='DELETE FROM posts'",
  " AND prepare='exec' AND statement='DELETE FROM posts'",
  " AND schema='CREATE INDEX pc ON posts(content)'",
  /* what schema and statement may not do: each is refused */
  (" AND schema='CREATE TABLE t(x); ATTACH ''file:/acorn-fuzz.db?vfs=memdb''"
   " AS src; INSERT INTO src.plain VALUES(666)'"
   " AND statement='INSERT INTO t VALUES(?1)'"),
  (" AND schema='CREATE TABLE t(x); VACUUM INTO ''file:/elsewhere?vfs=memdb'''"
   " AND statement='INSERT INTO t VALUES(?1)'"),
  (" AND statement='INSERT INTO posts(title, content)"
   " VALUES(load_extension(''x''), ?3)'"),
  (" AND schema='CREATE TABLE t(x); SELECT * FROM bench_insert"
   " WHERE storage=''memory'' AND rows=1'"
   " AND statement='INSERT INTO t VALUES(?1)'"),
  (" AND schema='CREATE TABLE t(x);' || char(0) || 'DROP TABLE t'"
   " AND statement='INSERT INTO t VALUES(?1)'"),
  " AND template='/proc/self/status' AND statement='DELETE FROM t'",
  (" AND seconds=0.01 AND statement='INSERT INTO posts(title, content)"
   " SELECT x, ?3 FROM (WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL"
   " SELECT x+1 FROM s) SELECT x FROM s)'"),
  (" AND schema='CREATE TABLE t(x); PRAGMA temp_store_directory=''/'''"
   " AND statement='INSERT INTO t VALUES(?1)'"),
  /* BUSY and WAL: each parameter, a bad value of each, and read_first
  ** where it cannot read posts */
  " AND read_first=1", " AND read_first IN (0, 1) AND begin='immediate'",
  " AND read_first=2", " AND read_first=1 AND batch=3 AND threads=2",
  " AND read_first=1 AND schema='CREATE TABLE t(x)'",
  " AND wal_autocheckpoint=0", " AND wal_autocheckpoint IN (1, 10)",
  " AND wal_autocheckpoint=-1", " AND wal_autocheckpoint=NULL",
  " AND journal_size_limit=0", " AND journal_size_limit=-1",
  " AND journal_size_limit=-2", " AND journal_size_limit=4096",
  " AND reader_hold_ms=1 AND readers=1", " AND reader_hold_ms=3600001",
  " AND reader_hold_ms IN (0, 2) AND readers=2 AND wal_autocheckpoint=1",
  /* keyword values in any case are the lowercase ones */
  " AND journal IN ('WAL', 'wal', 'Delete')", " AND synchronous='OFF'",
  " AND id IN ('UUID7_Blob', 'integer')", " AND begin='Immediate'",
  " AND prepare='EACH'", " AND locking='Exclusive'", " AND storage='MEMORY'",
};

/* How far 'w' moves the clock, in ms. */
static const long long aClockStep[] = {
  1, 10, 999, 1000, 60000, 3600000, 0, -1000, 86400000, 2,
};

/* ------------------------------------------------------------ operations */

/* Operations: a letter and its template; special ones have no template. */
static const struct {
  char c;
  const char *zTpl;
} aOp[] = {
  { 'C', "CREATE VIRTUAL TABLE %R USING cache(%O)" },
  { 'c', "CREATE VIRTUAL TABLE IF NOT EXISTS %R USING cache" },
  { 'D', "DROP TABLE %R" },
  { 'd', "DROP TABLE IF EXISTS %R" },
  { 'N', "ALTER TABLE %R RENAME TO %N" },
  { 'A', "ATTACH %Z AS %A" },
  { 'a', "DETACH %A" },
  { 'i', "%Q INTO %R(key, value) VALUES(%K, %V)" },
  { 'I', "%Q INTO %R(key, value, expires) VALUES(%K, %V, %E)" },
  { 'm', "%Q INTO %R(key, value) VALUES(%K, %V), (%K, %V), (%K, %V)" },
  { 'g', "%Y" },
  { 'x', "INSERT INTO %R(%n, value) VALUES(%M, %C)" },
  { 'u', "UPDATE %R SET value=%V WHERE key=%K" },
  { 'U', "UPDATE %R SET %U" },
  { 'r', "DELETE FROM %R WHERE key=%K" },
  { 'R', "DELETE FROM %R%W" },
  { 's', "SELECT value FROM %R WHERE key=%K" },
  { 'S', "%G" },
  { 'k', "SELECT cache_read(%T, %K, %I, %I)" },
  { 'j', "SELECT cache_get(%T, %K)" },
  { 'K', "%L" },
  { 'f', "SELECT %F" },
  { 'F', "SELECT %F, %F, %F" },
  { 'b', "SELECT %j FROM bench_insert WHERE storage='memory' AND rows=%r%B%B" },
  { 'B', "%b" },
  { 'O', "COMMIT" },
  { 'X', "ROLLBACK" },
  { 'P', "SAVEPOINT %P" },
  { 'L', "RELEASE %P" },
  { 'T', "ROLLBACK TO %P" },
  { 'e', "%D" },
  { 'w', 0 },     /* move the clock: one operand, aClockStep */
  { 'h', 0 },     /* hold: prepare %G into a slot, step once */
  { 'H', 0 },     /* step the held statement of a slot once */
  { 'z', 0 },     /* finalize the held statement of a slot */
  { 'q', 0 },     /* the next statement gets a budget of one byte's worth */
  { 'o', 0 },     /* an allocation of the next statement fails (see below) */
  { '>', 0 },     /* raw SQL to the end of the line */
  { '2', 0 },     /* the next operation runs on the second connection */
  /* Operations added later are named by their letter only: a byte that is
  ** no letter keeps selecting what it did (aOp[byte % FUZZ_NOP_ANY]), so
  ** the inputs kept in tests/fuzz/corpus/ still run what they ran. */
  { 'W', "SELECT cache_write(%T, %K, %I, %V)" },
};
#define FUZZ_NOP_ANY 39

/* ------------------------------------------------------------ state */

typedef struct fuzz_state fuzz_state;
struct fuzz_state {
  const unsigned char *a;   /* the input */
  size_t n, i;              /* its size, the read position */
  sqlite3 *aDb[2];          /* two connections to one database */
  sqlite3 *db;              /* the one the current operation uses */
  int iName;                /* azName index of the latest %R or %N */
  long long iBudget;        /* progress callbacks left for this statement */
  long long iNextBudget;    /* budget of the next statement, 0: default */
  int iNextOom;             /* 'o' operand for the next statement, or -1 */
  sqlite3_stmt *apHold[FUZZ_NHOLD];
  char *zLog;               /* every statement run, for failure reports */
  size_t nLog, nLogAlloc;   /* (malloc, not sqlite3_malloc: the memory
                            ** check at the end counts sqlite3_malloc) */
  int bTrace;               /* print statements as they run */
};

static long long iFakeMs;   /* the input's clock */
static int64_t fuzzClock(void){ return (int64_t)iFakeMs*1000000; }

/* Allocation failures.  The 'o' operand b arms the next statement: its
** (b&0x3f)+1-th allocation after it is prepared fails, and with b&0x40
** every one after that too (until the statement ends).  SQLite's
** allocator is wrapped once, before SQLite is initialized. */
static sqlite3_mem_methods sMemDefault;
static int nOomCountdown = 0;     /* allocations until the failure, 0: off */
static int bOomSticky = 0;        /* keep failing after the first */
static int bOomFailed = 0;        /* the armed failure happened */

static int fuzzOomNow(void){
  if( __atomic_load_n(&nOomCountdown, __ATOMIC_RELAXED)==0 ) return 0;
  if( __atomic_load_n(&bOomFailed, __ATOMIC_RELAXED) ) return bOomSticky;
  if( __atomic_sub_fetch(&nOomCountdown, 1, __ATOMIC_RELAXED)==0 ){
    __atomic_store_n(&bOomFailed, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&nOomCountdown, 1, __ATOMIC_RELAXED);  /* stay armed */
    return 1;
  }
  return 0;
}
static void *fuzzMalloc(int n){
  return fuzzOomNow() ? 0 : sMemDefault.xMalloc(n);
}
static void *fuzzRealloc(void *p, int n){
  return fuzzOomNow() ? 0 : sMemDefault.xRealloc(p, n);
}
static void fuzzOomArm(int b){
  __atomic_store_n(&bOomFailed, 0, __ATOMIC_RELAXED);
  bOomSticky = (b & 0x40)!=0;
  __atomic_store_n(&nOomCountdown, b<0 ? 0 : (b & 0x3f)+1, __ATOMIC_RELAXED);
}

int LLVMFuzzerInitialize(int *pArgc, char ***pArgv){
  sqlite3_mem_methods m;
  (void)pArgc; (void)pArgv;
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sMemDefault);
  m = sMemDefault;
  m.xMalloc = fuzzMalloc;
  m.xRealloc = fuzzRealloc;
  if( sqlite3_config(SQLITE_CONFIG_MALLOC, &m)!=SQLITE_OK ){
    fprintf(stderr, "acorn fuzz: cannot wrap SQLite's allocator\n");
    abort();
  }
  return 0;
}

static unsigned fuzzByte(fuzz_state *s){
  return s->i<s->n ? s->a[s->i++] : 0;
}

/* An operand: '0'-'9', 'a'-'z', 'A'-'Z' are 0..61, other bytes
** themselves; modulo n. */
static unsigned fuzzPick(fuzz_state *s, unsigned n){
  unsigned b = fuzzByte(s);
  if( b>='0' && b<='9' ) b -= '0';
  else if( b>='a' && b<='z' ) b = 10 + b - 'a';
  else if( b>='A' && b<='Z' ) b = 36 + b - 'A';
  return b % n;
}

static void fuzzRender(fuzz_state *s, sqlite3_str *pOut, const char *zTpl,
                       int iDepth);

/* Append azTab[pick] rendered (it may hold placeholders). */
static void fuzzFrom(fuzz_state *s, sqlite3_str *pOut,
                     const char *const *azTab, unsigned nTab, int iDepth){
  fuzzRender(s, pOut, azTab[fuzzPick(s, nTab)], iDepth+1);
}

static void fuzzName(fuzz_state *s, sqlite3_str *pOut){
  s->iName = (int)fuzzPick(s, N(azName));
  sqlite3_str_appendf(pOut, "\"%w\"", azName[s->iName]);
}

/* Expand the placeholders of zTpl into pOut, taking operands from s. */
static void fuzzRender(fuzz_state *s, sqlite3_str *pOut, const char *zTpl,
                       int iDepth){
  const char *z;
  if( iDepth>FUZZ_MAX_DEPTH ){
    sqlite3_str_appendall(pOut, "NULL");
    return;
  }
  for(z=zTpl; *z; z++){
    if( z[0]!='%' || z[1]==0 ){
      sqlite3_str_appendchar(pOut, 1, z[0]);
      continue;
    }
    z++;
    switch( *z ){
      case 'R': {
        const char *zSchema = azSchema[fuzzPick(s, N(azSchema))];
        if( zSchema[0] ) sqlite3_str_appendf(pOut, "%s.", zSchema);
        fuzzName(s, pOut);
        break;
      }
      case 'n':
        sqlite3_str_appendf(pOut, "\"%w\"", azName[s->iName]);
        break;
      case 'N': fuzzName(s, pOut); break;
      case 'K': fuzzFrom(s, pOut, azKey, N(azKey), iDepth); break;
      case 'V': fuzzFrom(s, pOut, azValue, N(azValue), iDepth); break;
      case 'E': {
        const char *zE = azExpires[fuzzPick(s, N(azExpires))];
        if( zE[0]=='@' ){
          sqlite3_str_appendf(pOut, "%lld", iFakeMs + atoll(zE+1));
        }else{
          sqlite3_str_appendall(pOut, zE);
        }
        break;
      }
      case 'O': {
        const char *zCap = azCapOpt[fuzzPick(s, N(azCapOpt))];
        const char *zBuf = azBufOpt[fuzzPick(s, N(azBufOpt))];
        sqlite3_str_appendf(pOut, "%s%s%s", zCap,
                            zCap[0] && zBuf[0] ? ", " : "", zBuf);
        break;
      }
      case 'M': fuzzFrom(s, pOut, azCommand, N(azCommand), iDepth); break;
      case 'C': fuzzFrom(s, pOut, azCapArg, N(azCapArg), iDepth); break;
      case 'I': fuzzFrom(s, pOut, azInt, N(azInt), iDepth); break;
      case 'T': fuzzFrom(s, pOut, azTabStr, N(azTabStr), iDepth); break;
      case 'P': fuzzFrom(s, pOut, azSavepoint, N(azSavepoint), iDepth); break;
      case 'A': fuzzFrom(s, pOut, azAttach, N(azAttach), iDepth); break;
      case 'Z': fuzzFrom(s, pOut, azAttachFile, N(azAttachFile), iDepth); break;
      case 'Q': fuzzFrom(s, pOut, azVerb, N(azVerb), iDepth); break;
      case 'b': fuzzFrom(s, pOut, azBegin, N(azBegin), iDepth); break;
      case 'F': fuzzFrom(s, pOut, azFunc, N(azFunc), iDepth); break;
      case 'X': fuzzFrom(s, pOut, azArg, N(azArg), iDepth); break;
      case 'G': fuzzFrom(s, pOut, azRead, N(azRead), iDepth); break;
      case 'U': fuzzFrom(s, pOut, azUpdate, N(azUpdate), iDepth); break;
      case 'W': fuzzFrom(s, pOut, azDelete, N(azDelete), iDepth); break;
      case 'L': fuzzFrom(s, pOut, azStats, N(azStats), iDepth); break;
      case 'Y': fuzzFrom(s, pOut, azInsert, N(azInsert), iDepth); break;
      case 'D': fuzzFrom(s, pOut, azOther, N(azOther), iDepth); break;
      case 'r': fuzzFrom(s, pOut, azBenchRows, N(azBenchRows), iDepth); break;
      case 'j': fuzzFrom(s, pOut, azBenchCols, N(azBenchCols), iDepth); break;
      case 'B': fuzzFrom(s, pOut, azBenchWhere, N(azBenchWhere), iDepth); break;
      default:
        sqlite3_str_appendchar(pOut, 1, *z);
        break;
    }
  }
}

/* ------------------------------------------------------------ running */

static int fuzzProgress(void *pArg){
  fuzz_state *s = (fuzz_state*)pArg;
  return --s->iBudget < 0;
}

/* Start the budget of the next top-level statement. */
static void fuzzBudget(fuzz_state *s){
  s->iBudget = s->iNextBudget ? s->iNextBudget : FUZZ_STEP_BUDGET;
  s->iNextBudget = 0;
}

/* A statement is prepared and about to run: arm its allocation failure,
** if 'o' asked for one (failures while parsing are SQLite's business). */
static void fuzzArm(fuzz_state *s){
  fuzzOomArm(s->iNextOom);
  s->iNextOom = -1;
}

/* Append to the log (and print it when tracing). */
static void fuzzLogf(fuzz_state *s, const char *zFmt, ...){
  va_list ap;
  int n;
  char aBuf[200];
  va_start(ap, zFmt);
  n = vsnprintf(aBuf, sizeof(aBuf), zFmt, ap);
  va_end(ap);
  if( n<0 ) return;
  if( (size_t)n>=sizeof(aBuf) ) n = (int)sizeof(aBuf)-1;
  if( s->nLog+n+1>s->nLogAlloc ){
    size_t nNew = s->nLogAlloc ? 2*s->nLogAlloc : 4096;
    char *zNew;
    while( nNew<s->nLog+n+1 ) nNew *= 2;
    zNew = realloc(s->zLog, nNew);
    if( zNew==0 ) return;
    s->zLog = zNew;
    s->nLogAlloc = nNew;
  }
  memcpy(s->zLog+s->nLog, aBuf, (size_t)n+1);
  s->nLog += n;
  if( s->bTrace ) fputs(aBuf, stderr);
}

static void fuzzLog(fuzz_state *s, const char *zSql, int n){
  /* long statements are cut at 190 bytes in the log */
  fuzzLogf(s, "%s %.*s;\n", s->db==s->aDb[0] ? "sql>" : "sql2>",
           n>190 ? 190 : n, zSql);
}

static void fuzzFail(fuzz_state *s, const char *zFmt, ...);

/* Does zSql (n bytes) contain zWord, in any case? */
static int fuzzContains(const char *zSql, int n, const char *zWord){
  int i, nWord = (int)strlen(zWord);
  for(i=0; zSql && i+nWord<=n; i++){
    if( sqlite3_strnicmp(zSql+i, zWord, nWord)==0 ) return 1;
  }
  return 0;
}

/* A top-level statement ended with rc: no allocation fails after it.  Its
** error, if any, must be one acorn may give: not CORRUPT, INTERNAL or
** MISUSE, not NOMEM unless an allocation was made to fail, and with a
** message ("not an error" is the text of SQLITE_OK: an error code was
** passed on without its message, and the message ends with it; unless the
** statement zSql, n bytes, says those words itself, for an error message
** to quote). */
static void fuzzEnd(fuzz_state *s, int rc, const char *zSql, int n){
  static const char zNotAnError[] = "not an error";
  const int nNot = (int)sizeof(zNotAnError)-1;
  const char *zMsg = sqlite3_errmsg(s->db);
  int bQuoted;
  int bOom = __atomic_load_n(&nOomCountdown, __ATOMIC_RELAXED)!=0;
  int e = rc & 0xff;
  fuzzOomArm(-1);
  if( (rc==SQLITE_OK || rc==SQLITE_DONE)
   && fuzzContains(zSql, n, "USING bench_insert") ){
    fuzzFail(s, "a table USING bench_insert was created");
  }
  if( s->bTrace ){
    if( rc==SQLITE_OK || rc==SQLITE_DONE || rc==SQLITE_ROW ){
      fprintf(stderr, "     ok\n");
    }else{
      fprintf(stderr, "     error %d: %s\n", rc, zMsg);
    }
  }
  if( rc==SQLITE_OK || rc==SQLITE_DONE || rc==SQLITE_ROW ) return;
  bQuoted = fuzzContains(zSql, n, zNotAnError);
  if( e==SQLITE_CORRUPT || e==SQLITE_INTERNAL || e==SQLITE_MISUSE
   || (e==SQLITE_NOMEM && !bOom)
   || (!bQuoted && strlen(zMsg)>=(size_t)nNot
       && sqlite3_stricmp(zMsg+strlen(zMsg)-nNot, zNotAnError)==0) ){
    fuzzFail(s, "a statement failed with code %d: %s", rc, zMsg);
  }
}

/* Read every column of the current row: that is what calls xColumn. */
static void fuzzReadRow(fuzz_state *s, sqlite3_stmt *pStmt){
  int i, n = sqlite3_column_count(pStmt);
  for(i=0; i<n; i++){
    int e = sqlite3_column_type(pStmt, i);
    if( e==SQLITE_TEXT ) (void)sqlite3_column_text(pStmt, i);
    if( e==SQLITE_BLOB ) (void)sqlite3_column_blob(pStmt, i);
    (void)sqlite3_column_bytes(pStmt, i);
  }
  if( s->bTrace && n>0 ){
    fprintf(stderr, "     row:");
    for(i=0; i<n; i++){
      const char *z = (const char*)sqlite3_column_text(pStmt, i);
      if( sqlite3_column_type(pStmt, i)==SQLITE_BLOB ){
        fprintf(stderr, " blob(%d)", sqlite3_column_bytes(pStmt, i));
      }else{
        fprintf(stderr, " %.60s", z ? z : "NULL");
      }
    }
    fprintf(stderr, "\n");
  }
}

/* Run every statement of zSql (n bytes), stepping each to the end or to
** FUZZ_MAX_ROWS rows. */
static void fuzzExec(fuzz_state *s, const char *zSql, int n){
  const char *zTail = zSql;
  const char *zEnd = zSql + n;
  while( zTail<zEnd ){
    sqlite3_stmt *pStmt = 0;
    const char *zStart = zTail;
    int rc, nRow = 0;
    fuzzBudget(s);
    rc = sqlite3_prepare_v2(s->db, zStart, (int)(zEnd-zStart), &pStmt, &zTail);
    if( rc!=SQLITE_OK || pStmt==0 ){
      if( rc!=SQLITE_OK ){
        int nSql = (int)((zTail && zTail>zStart ? zTail : zEnd)-zStart);
        fuzzLog(s, zStart, nSql);
        fuzzEnd(s, rc, zStart, nSql);
      }
      fuzzOomArm(-1);
      if( rc!=SQLITE_OK || zTail==0 || zTail<=zStart ) break;
      continue;
    }
    fuzzLog(s, zStart, (int)(zTail-zStart));
    fuzzArm(s);
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW && ++nRow<FUZZ_MAX_ROWS ){
      fuzzReadRow(s, pStmt);
    }
    fuzzEnd(s, rc, zStart, (int)(zTail-zStart));
    sqlite3_finalize(pStmt);
  }
}

static void fuzzExecStr(fuzz_state *s, sqlite3_str *pStr){
  int n = sqlite3_str_length(pStr);
  char *z = sqlite3_str_finish(pStr);
  if( z==0 ) return;
  fuzzExec(s, z, n);
  sqlite3_free(z);
}

/* Does raw SQL name bench_insert (in any case, quoted or not)?  It only
** runs from the 'b' template, which keeps it small and in memory. */
static int fuzzNamesBench(const char *z, int n){
  static const char zBench[] = "bench_insert";
  int i, nBench = (int)sizeof(zBench)-1;
  for(i=0; i+nBench<=n; i++){
    if( sqlite3_strnicmp(z+i, zBench, nBench)==0 ) return 1;
  }
  return 0;
}

/* The held-statement operations. */
static void fuzzHold(fuzz_state *s, char c){
  int iSlot = (int)fuzzPick(s, FUZZ_NHOLD);
  sqlite3_stmt **pp = &s->apHold[iSlot];
  int rc;
  if( c=='h' ){
    sqlite3_str *pStr = sqlite3_str_new(s->db);
    char *z;
    int n;
    sqlite3_finalize(*pp);
    *pp = 0;
    fuzzRender(s, pStr, "%G", 0);
    n = sqlite3_str_length(pStr);
    z = sqlite3_str_finish(pStr);
    if( z==0 ) return;
    fuzzBudget(s);
    fuzzLog(s, z, n);
    if( s->bTrace ) fprintf(stderr, "     (held in slot %d)\n", iSlot);
    rc = sqlite3_prepare_v2(s->db, z, n, pp, 0);
    if( rc==SQLITE_OK && *pp ){
      fuzzArm(s);
      rc = sqlite3_step(*pp);
      if( rc==SQLITE_ROW ) fuzzReadRow(s, *pp);
    }
    fuzzEnd(s, rc, z, n);
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) sqlite3_reset(*pp);  /* see 'H' */
    sqlite3_free(z);
  }else if( *pp ){
    fuzzLogf(s, "sql> -- %s slot %d\n", c=='H' ? "step" : "finalize", iSlot);
    if( c=='H' ){
      const char *zSql = sqlite3_sql(*pp);
      s->db = sqlite3_db_handle(*pp);
      fuzzBudget(s);
      fuzzArm(s);
      rc = sqlite3_step(*pp);
      if( rc==SQLITE_ROW ) fuzzReadRow(s, *pp);
      fuzzEnd(s, rc, zSql, zSql ? (int)strlen(zSql) : 0);
      /* A failed step is reset, as an application does.  It matters after
      ** an allocation failure: when the schema changed since the statement
      ** last ran, sqlite3_step() prepares it again, and if that runs out of
      ** memory SQLite returns SQLITE_NOMEM without clearing the
      ** connection's failed-allocation flag (sqlite3_step's "Reprepare"
      ** branch skips sqlite3ApiExit then, in every version from 3.38 to
      ** 3.52), so the next statement prepared on the connection fails with
      ** SQLITE_NOMEM as well, with plain tables and no acorn loaded.  A
      ** reset or finalize of the statement clears the flag. */
      if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) sqlite3_reset(*pp);
    }else{
      sqlite3_finalize(*pp);
      *pp = 0;
    }
  }
}

static void fuzzRun(fuzz_state *s){
  int bSecond = 0;          /* the operation after '2' */
  while( s->i<s->n ){
    unsigned b = fuzzByte(s);
    unsigned iOp;
    if( b==' ' || b=='\t' || b=='\n' || b=='\r' ) continue;
    s->db = s->aDb[bSecond];
    bSecond = 0;
    if( b=='#' ){
      while( s->i<s->n && s->a[s->i]!='\n' ) s->i++;
      continue;
    }
    for(iOp=0; iOp<N(aOp) && aOp[iOp].c!=(char)b; iOp++){}
    if( iOp==N(aOp) ) iOp = b % FUZZ_NOP_ANY;
    if( aOp[iOp].zTpl ){
      sqlite3_str *pStr = sqlite3_str_new(s->db);
      fuzzRender(s, pStr, aOp[iOp].zTpl, 0);
      fuzzExecStr(s, pStr);
      continue;
    }
    switch( aOp[iOp].c ){
      case 'w': {
        iFakeMs += aClockStep[fuzzPick(s, N(aClockStep))];
        fuzzLogf(s, "sql> -- clock %lld\n", iFakeMs);
        break;
      }
      case 'h': case 'H': case 'z':
        fuzzHold(s, aOp[iOp].c);
        break;
      case 'q':
        s->iNextBudget = 1 + fuzzByte(s);
        break;
      case '2':
        bSecond = 1;
        break;
      case 'o':
        s->iNextOom = (int)fuzzByte(s);
        fuzzLogf(s, "sql> -- allocation %d of the next statement fails%s\n",
                 (s->iNextOom & 0x3f)+1,
                 s->iNextOom & 0x40 ? ", and all after" : "");
        break;
      case '>': {
        size_t iStart = s->i;
        while( s->i<s->n && s->a[s->i]!='\n' ) s->i++;
        if( !fuzzNamesBench((const char*)s->a+iStart, (int)(s->i-iStart)) ){
          fuzzExec(s, (const char*)s->a+iStart, (int)(s->i-iStart));
        }
        break;
      }
    }
  }
}

/* ------------------------------------------------------------ checks */

static void fuzzFail(fuzz_state *s, const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "\nacorn fuzz: INVARIANT BROKEN: ");
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fprintf(stderr, "\nstatements of this input:\n%s\n",
          s->zLog ? s->zLog : "");
  abort();
}

/* Run zSql (one statement) and return its first row's integer columns in
** a[0..nCol-1]; SQLITE_OK or the error code. */
static int fuzzQuery(fuzz_state *s, const char *zSql, long long *a, int nCol){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(s->db, zSql, -1, &pStmt, 0);
  int i;
  if( s->bTrace ) fprintf(stderr, "check> %s\n", zSql);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      for(i=0; i<nCol; i++) a[i] = sqlite3_column_int64(pStmt, i);
      rc = SQLITE_OK;
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* Skip spaces and SQL comments. */
static const char *fuzzSkipSpace(const char *z){
  for(;;){
    while( *z==' ' || *z=='\t' || *z=='\n' || *z=='\r' || *z=='\f' ) z++;
    if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      const char *zEnd = strstr(z+2, "*/");
      z = zEnd ? zEnd+2 : z+strlen(z);
    }else{
      return z;
    }
  }
}

/* Skip one identifier, quoted or bare; n is its length unquoted-ish. */
static const char *fuzzSkipIdent(const char *z){
  char cEnd = 0;
  if( *z=='"' || *z=='`' || *z=='\'' ) cEnd = *z;
  if( *z=='[' ) cEnd = ']';
  if( cEnd ){
    for(z++; *z; z++){
      if( *z==cEnd ){
        if( cEnd!=']' && z[1]==cEnd ){ z++; continue; }
        return z+1;
      }
    }
    return z;
  }
  while( *z && (*z=='_' || *z=='$' || (*z&0x80)
             || (*z>='0' && *z<='9') || (*z>='a' && *z<='z')
             || (*z>='A' && *z<='Z')) ){
    z++;
  }
  return z;
}

/* Is zSql, as kept in sqlite_schema, a CREATE VIRTUAL TABLE ... USING
** cache?  The stored text is "CREATE VIRTUAL TABLE " then the name as
** written (no schema) and the rest as written. */
static int fuzzIsCacheSql(const char *zSql){
  const char *z;
  static const char zHead[] = "CREATE VIRTUAL TABLE ";
  if( zSql==0 || sqlite3_strnicmp(zSql, zHead, (int)sizeof(zHead)-1) ) return 0;
  z = fuzzSkipSpace(zSql + sizeof(zHead)-1);
  z = fuzzSkipIdent(z);
  z = fuzzSkipSpace(z);
  if( sqlite3_strnicmp(z, "USING", 5) ) return 0;
  z = fuzzSkipSpace(z+5);
  if( sqlite3_strnicmp(z, "cache", 5)==0 ){
    z += 5;
  }else if( (z[0]=='"' || z[0]=='`' || z[0]=='\'' || z[0]=='[')
         && sqlite3_strnicmp(z+1, "cache", 5)==0
         && z[6]==(z[0]=='[' ? ']' : z[0]) ){
    z += 7;
  }else{
    return 0;
  }
  z = fuzzSkipSpace(z);
  return *z=='(' || *z==0 || *z==';';
}

typedef struct fuzz_table fuzz_table;
struct fuzz_table { char *zDb; char *zName; };

/* Every cache table of every schema.  *pn of them, sqlite3_free each
** string and the array. */
static fuzz_table *fuzzCacheTables(fuzz_state *s, int *pn){
  sqlite3_stmt *pDbs = 0;
  fuzz_table *a = 0;
  int n = 0, nAlloc = 0, rc;
  rc = sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_database_list",
                          -1, &pDbs, 0);
  if( rc && strstr(sqlite3_errmsg(s->db), "same text encoding") ){
    /* The other connection made main first, in another encoding than a
    ** database this one made after PRAGMA encoding (temp, or attached):
    ** SQLite then refuses to load this connection's schema at all, for a
    ** reason of its own.  Nothing can be checked through it. */
    *pn = 0;
    return 0;
  }
  if( rc ) fuzzFail(s, "cannot list schemas: %s", sqlite3_errmsg(s->db));
  while( sqlite3_step(pDbs)==SQLITE_ROW ){
    const char *zDb = (const char*)sqlite3_column_text(pDbs, 0);
    char *zSql = sqlite3_mprintf("SELECT name, sql FROM \"%w\".sqlite_schema"
                                 " WHERE type='table'", zDb);
    sqlite3_stmt *pTabs = 0;
    rc = sqlite3_prepare_v2(s->db, zSql, -1, &pTabs, 0);
    sqlite3_free(zSql);
    if( rc ){
      fuzzFail(s, "cannot list tables of %s: %s", zDb, sqlite3_errmsg(s->db));
    }
    while( sqlite3_step(pTabs)==SQLITE_ROW ){
      const char *zTabSql = (const char*)sqlite3_column_text(pTabs, 1);
      if( !fuzzIsCacheSql(zTabSql) ) continue;
      if( n==nAlloc ){
        nAlloc = nAlloc ? 2*nAlloc : 8;
        a = sqlite3_realloc(a, nAlloc*(int)sizeof(a[0]));
        if( a==0 ) fuzzFail(s, "out of memory");
      }
      a[n].zDb = sqlite3_mprintf("%s", zDb);
      a[n].zName = sqlite3_mprintf("%s", sqlite3_column_text(pTabs, 0));
      n++;
    }
    sqlite3_finalize(pTabs);
  }
  sqlite3_finalize(pDbs);
  *pn = n;
  return a;
}

static void fuzzFreeTables(fuzz_table *a, int n){
  int i;
  for(i=0; i<n; i++){
    sqlite3_free(a[i].zDb);
    sqlite3_free(a[i].zName);
  }
  sqlite3_free(a);
}

/* Run command zCmd on table p; it must succeed. */
static void fuzzCommand(fuzz_state *s, const fuzz_table *p, const char *zCmd,
                        const char *zWhen){
  char *zSql = sqlite3_mprintf("INSERT INTO \"%w\".\"%w\"(\"%w\") VALUES(%Q)",
                               p->zDb, p->zName, p->zName, zCmd);
  int rc;
  if( s->bTrace ) fprintf(stderr, "check> %s\n", zSql);
  rc = sqlite3_exec(s->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    fuzzFail(s, "%s on %s.%s %s: %s", zCmd, p->zDb, p->zName, zWhen,
             sqlite3_errmsg(s->db));
  }
}

static void fuzzCheckAll(fuzz_state *s, const char *zWhen){
  int i, n;
  fuzz_table *a = fuzzCacheTables(s, &n);
  for(i=0; i<n; i++) fuzzCommand(s, &a[i], "integrity_check", zWhen);
  fuzzFreeTables(a, n);
}

/* Tags and the feed of table p (after 'purge': nothing expired is left).
** Tags: the entries with a tag, counted by a scan, are the sum of the
** entries found through the tag index for each tag; every row of <t>_tag
** names an entry that exists, their number is the config row's tagged,
** and each tag counts as many rows there as entries in the table.  The
** feed holds at most feed rows, in increasing seq with no gap, none above
** the config row's fseq; each has a reason of capacity, entries or
** expired, an INTEGER size > 0 and an INTEGER time. */
static void fuzzCheckTagsFeed(fuzz_state *s, const fuzz_table *p){
  long long aTag[5] = {-1, -2, -1, -1, -1}, aFeed[4] = {-1, -1, -1, -1};
  char *zSql = sqlite3_mprintf(
      "SELECT (SELECT count(*) FROM \"%w\".\"%w\" WHERE tag IS NOT NULL),"
      " (SELECT coalesce(sum((SELECT count(*) FROM \"%w\".\"%w\" u"
      " WHERE u.tag=g.tag)), 0) FROM (SELECT DISTINCT tag"
      " FROM \"%w\".\"%w\" WHERE tag IS NOT NULL) g),"
      " (SELECT count(*) FROM \"%w\".\"%w_tag\" WHERE id NOT IN"
      " (SELECT id FROM \"%w\".\"%w_data\")),"
      " (SELECT count(*) FROM \"%w\".\"%w_tag\")"
      " = (SELECT tagged FROM \"%w\".\"%w_config\"),"
      " (SELECT count(*) FROM (SELECT tag, count(*) FROM \"%w\".\"%w_tag\""
      " GROUP BY tag EXCEPT SELECT tag, count(*) FROM \"%w\".\"%w\""
      " WHERE tag IS NOT NULL GROUP BY tag))",
      p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName,
      p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName,
      p->zDb, p->zName);
  int rc = fuzzQuery(s, zSql, aTag, 5);
  sqlite3_free(zSql);
  if( rc ) fuzzFail(s, "tags of %s.%s: %s", p->zDb, p->zName,
                    sqlite3_errmsg(s->db));
  if( aTag[0]!=aTag[1] ){
    fuzzFail(s, "%s.%s has %lld tagged entries, its tags' lookups find %lld",
             p->zDb, p->zName, aTag[0], aTag[1]);
  }
  if( aTag[2]!=0 || aTag[3]!=1 || aTag[4]!=0 ){
    fuzzFail(s, "the tags of %s.%s: %lld tag rows of no entry, tagged %s the"
             " tag rows, %lld tags counted otherwise than the table counts"
             " them", p->zDb, p->zName, aTag[2],
             aTag[3]==1 ? "is" : "is not", aTag[4]);
  }
  zSql = sqlite3_mprintf(
      "SELECT count(*) <= (SELECT feed FROM \"%w\".\"%w_config\"),"
      " count(*)=0 OR max(seq)-min(seq)+1=count(*),"
      " count(*)=0 OR max(seq) <= (SELECT fseq FROM \"%w\".\"%w_config\"),"
      " sum(reason NOT IN ('capacity', 'entries', 'expired')"
      " OR typeof(size)<>'integer' OR size<0 OR typeof(at)<>'integer'"
      " OR seq<=prev)"
      " FROM (SELECT seq, size, reason, at, lag(seq, 1, 0) OVER () AS prev"
      " FROM cache_evictions('%q.%q'))",
      p->zDb, p->zName, p->zDb, p->zName, p->zDb, p->zName);
  rc = fuzzQuery(s, zSql, aFeed, 4);
  sqlite3_free(zSql);
  if( rc ) fuzzFail(s, "feed of %s.%s: %s", p->zDb, p->zName,
                    sqlite3_errmsg(s->db));
  if( aFeed[0]!=1 || aFeed[1]!=1 || aFeed[2]!=1 || aFeed[3]>0 ){
    fuzzFail(s, "the feed of %s.%s holds more rows than feed (%lld), a gap"
             " (%lld), a seq above fseq (%lld) or %lld rows out of order or"
             " with a bad reason, size or time", p->zDb, p->zName,
             !aFeed[0], !aFeed[1], !aFeed[2], aFeed[3]);
  }
}

/* After 'purge' nothing expired is left: the listing's sum(size) and
** count(*) must be cache_stats' bytes and entries.  Each hit is counted
** once for the table and once for its entry, and entries lose theirs when
** they go, so the listing's sum(hits) is at most cache_stats' hits. */
static void fuzzCheckSums(fuzz_state *s){
  int i, n, rc;
  fuzz_table *a = fuzzCacheTables(s, &n);
  for(i=0; i<n; i++){
    long long aList[3] = {-1, -1, -1}, aStats[3] = {-2, -2, -2};
    long long nDotted = 0;
    char *zSql;
    fuzzCommand(s, &a[i], "purge", "at the end");
    /* cache_stats('main.t') means a table named "main.t" if there is one
    ** (names are found as SQL finds them); then it is not this table. */
    zSql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_list"
                           " WHERE name='%q.%q'", a[i].zDb, a[i].zName);
    rc = fuzzQuery(s, zSql, &nDotted, 1);
    sqlite3_free(zSql);
    if( rc ) fuzzFail(s, "pragma_table_list: %s", sqlite3_errmsg(s->db));
    if( nDotted==0 ){
      zSql = sqlite3_mprintf("SELECT coalesce(sum(size),0), count(*),"
                             " coalesce(sum(hits),0) FROM \"%w\".\"%w\"",
                             a[i].zDb, a[i].zName);
      rc = fuzzQuery(s, zSql, aList, 3);
      sqlite3_free(zSql);
      if( rc ) fuzzFail(s, "listing %s.%s: %s", a[i].zDb, a[i].zName,
                        sqlite3_errmsg(s->db));
      zSql = sqlite3_mprintf("SELECT bytes, entries, hits"
                             " FROM cache_stats('%q.%q')",
                             a[i].zDb, a[i].zName);
      rc = fuzzQuery(s, zSql, aStats, 3);
      sqlite3_free(zSql);
      if( rc ) fuzzFail(s, "cache_stats of %s.%s: %s", a[i].zDb, a[i].zName,
                        sqlite3_errmsg(s->db));
      if( aList[0]!=aStats[0] || aList[1]!=aStats[1] || aList[2]>aStats[2] ){
        fuzzFail(s, "%s.%s lists %lld entries of %lld bytes with %lld hits,"
                 " cache_stats says %lld entries of %lld bytes, %lld hits",
                 a[i].zDb, a[i].zName, aList[1], aList[0], aList[2],
                 aStats[1], aStats[0], aStats[2]);
      }
    }
    if( nDotted==0 ) fuzzCheckTagsFeed(s, &a[i]);
    fuzzCommand(s, &a[i], "integrity_check", "after purge");
  }
  fuzzFreeTables(a, n);
}

/* Close connection db; it must close cleanly. */
static void fuzzClose(fuzz_state *s, sqlite3 *db){
  int rc = sqlite3_close(db);
  if( rc!=SQLITE_OK ){
    sqlite3_stmt *p = 0;
    while( (p = sqlite3_next_stmt(db, p))!=0 ){
      fprintf(stderr, "unfinalized: %s\n", sqlite3_sql(p));
    }
    fuzzFail(s, "sqlite3_close: %s", sqlite3_errmsg(db));
  }
}

/* End the transaction of s->db: COMMIT, or ROLLBACK if that fails. */
static void fuzzEndTxn(fuzz_state *s){
  if( sqlite3_get_autocommit(s->db) ) return;
  if( s->bTrace ) fprintf(stderr, "check> COMMIT\n");
  if( sqlite3_exec(s->db, "COMMIT", 0, 0, 0)!=SQLITE_OK ){
    if( s->bTrace ) fprintf(stderr, "check> ROLLBACK\n");
    if( sqlite3_exec(s->db, "ROLLBACK", 0, 0, 0)!=SQLITE_OK ){
      fuzzFail(s, "neither COMMIT nor ROLLBACK ends the transaction: %s",
               sqlite3_errmsg(s->db));
    }
  }
}

/* Drop every trigger and index an input made (any but SQLite's automatic
** indexes and acorn's own): while one is on a cache table's shadow table,
** the table takes no write (it would run inside them), and the checks
** below write.  That refusal is the input's to meet, tested as it ran. */
static void fuzzDropPlanted(fuzz_state *s){
  sqlite3_stmt *pList = 0;
  char **azDrop = 0;
  int nDrop = 0, i;
  /* (listed by one statement over every schema, and dropped once it is
  ** done: a DROP while a statement reads the schema is "database table is
  ** locked") */
  if( sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_database_list",
                         -1, &pList, 0)==SQLITE_OK ){
    char *zUnion = 0;
    while( sqlite3_step(pList)==SQLITE_ROW ){
      const char *zDb = (const char*)sqlite3_column_text(pList, 0);
      zUnion = sqlite3_mprintf("%z%s SELECT 'DROP ' || type || ' IF EXISTS \"'"
          " || replace(%Q, '\"', '\"\"') || '\".\"' || replace(name, '\"', '\"\"')"
          " || '\"' FROM \"%w\".sqlite_schema WHERE type IN ('trigger', 'index')"
          " AND name NOT LIKE 'sqlite^_autoindex^_%%' ESCAPE '^'"
          " AND name NOT LIKE 'acorn^_cache^_%%' ESCAPE '^'",
          zUnion, zUnion ? " UNION ALL" : "", zDb, zDb);
      if( zUnion==0 ) break;
    }
    sqlite3_finalize(pList);
    pList = 0;
    if( zUnion && sqlite3_prepare_v2(s->db, zUnion, -1, &pList, 0)==SQLITE_OK ){
      while( sqlite3_step(pList)==SQLITE_ROW ){
        char **aNew = sqlite3_realloc64(azDrop, sizeof(char*)*(nDrop+1));
        if( aNew==0 ) break;
        azDrop = aNew;
        azDrop[nDrop] = sqlite3_mprintf("%s", sqlite3_column_text(pList, 0));
        if( azDrop[nDrop] ) nDrop++;
      }
    }
    sqlite3_finalize(pList);
    sqlite3_free(zUnion);
  }
  for(i=0; i<nDrop; i++){
    if( s->bTrace ) fprintf(stderr, "check> %s\n", azDrop[i]);
    if( sqlite3_exec(s->db, azDrop[i], 0, 0, 0) && s->bTrace ){
      fprintf(stderr, "     error: %s\n", sqlite3_errmsg(s->db));
    }
    sqlite3_free(azDrop[i]);
  }
  sqlite3_free(azDrop);
}

static void fuzzCheck(fuzz_state *s){
  int i;
  for(i=0; i<FUZZ_NHOLD; i++){
    sqlite3_finalize(s->apHold[i]);
    s->apHold[i] = 0;
  }
  sqlite3_progress_handler(s->aDb[0], 0, 0, 0);
  sqlite3_progress_handler(s->aDb[1], 0, 0, 0);
  fuzzOomArm(-1);
  /* The second connection ends its transaction and closes (writing its
  ** buffered uses), so that it holds no lock the checks would wait for. */
  s->db = s->aDb[1];
  fuzzEndTxn(s);
  fuzzClose(s, s->aDb[1]);
  s->aDb[1] = 0;
  s->db = s->aDb[0];
  fuzzDropPlanted(s);
  fuzzCheckAll(s, "as the input left it");
  if( !sqlite3_get_autocommit(s->db) ){
    fuzzEndTxn(s);
    fuzzCheckAll(s, "after the transaction ended");
  }
  fuzzCheckSums(s);
}

/* ------------------------------------------------------------ entry */

/* ASan's defaults for this program (ASAN_OPTIONS adds to them): freed
** memory is overwritten, so that the system libsqlite3, which ASan does
** not instrument, crashes on garbage when acorn makes it read memory it
** freed, instead of reading what was still there. */
const char *__asan_default_options(void){
  return "max_free_fill_size=4096:free_fill_byte=85";
}

int LLVMFuzzerTestOneInput(const uint8_t *aData, size_t nData){
  static int bTrace = -1;
  fuzz_state s;
  sqlite3_int64 nMemBefore;
  char *zErr = 0;
  int rc, i;

  if( bTrace<0 ){
    const char *z = getenv("ACORN_FUZZ_TRACE");
    bTrace = z && z[0] && z[0]!='0';
    acorn_test_clock = fuzzClock;
    /* a run whose writer retries BUSY goes on until `seconds` (60 by
    ** default): bounded here, as the per-input timeout would stop it */
    acorn_test_bench_max_ns = 250000000;
  }
  memset(&s, 0, sizeof(s));
  s.a = aData;
  s.n = nData;
  s.bTrace = bTrace;
  s.iNextOom = -1;
  iFakeMs = FUZZ_BASE_MS;

  nMemBefore = sqlite3_memory_used();
  for(i=0; i<2; i++){
    sqlite3 *db = 0;
    rc = sqlite3_open_v2(FUZZ_DB_NAME, &db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, "memdb");
    if( rc ){
      fprintf(stderr, "acorn fuzz: cannot open: %s\n", sqlite3_errmsg(db));
      abort();
    }
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0);
    /* No lookaside: every allocation goes to ASan, so acorn reading a
    ** small SQLite buffer after it was freed is caught, not served
    ** recycled. */
    sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, 0, 0, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000000);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 100000);
    rc = sqlite3_acorn_init(db, &zErr, 0);
    if( rc ){
      fprintf(stderr, "acorn fuzz: init failed: %s\n", zErr ? zErr : "?");
      abort();
    }
    sqlite3_progress_handler(db, FUZZ_PROGRESS_N, fuzzProgress, &s);
    s.aDb[i] = db;
  }
  s.db = s.aDb[0];

  fuzzRun(&s);
  fuzzCheck(&s);
  fuzzClose(&s, s.aDb[0]);
  if( sqlite3_memory_used()!=nMemBefore ){
    fuzzFail(&s, "%lld bytes of sqlite3_malloc memory outlive the connection",
             (long long)(sqlite3_memory_used()-nMemBefore));
  }
  free(s.zLog);
  return 0;
}
