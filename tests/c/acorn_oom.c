/*
** acorn_oom.c: every feature of acorn under allocation failure.
**
**   build/acorn_oom DIR [-mode once|persist|both] [-stride K] [-start S]
**                       [-end E] [-phase NAME,...]
**
** Built from the sources in ext/ with -DSQLITE_CORE, so that acorn's
** allocations go through SQLite's allocator (plain as build/acorn_oom, with
** ASan and UBSan as build/acorn_oom_asan).  Before SQLite starts, an
** allocator is installed (SQLITE_CONFIG_MALLOC) that wraps the default one
** and fails allocation number N, in one of two modes:
**   once     only the Nth fails
**   persist  the Nth and every one after it fail
** Lookaside is off, so that every allocation goes through it.
**
** Each phase below is a workload that opens a database (in DIR, or
** :memory:), registers acorn and runs its statements (after a setup that
** runs without failures, if the phase has one); for each mode, N runs from
** S (default 1) in steps of K (default 1) until the phase completes without
** any allocation failing, or past E (-mode picks the modes, default both).
** `make test-oom` runs every N once and every 5th persist; `make test` the
** small phases in full, once, and a sample of the rest (a stride, from a
** random start).
** After each run with a failure, allocations succeed again and:
**   - the first statement that failed must have failed with SQLITE_NOMEM
**     and a message that says "out of memory" (see clearNomem() for the
**     two other clear forms); or, where a failure is absorbed (acorn drops
**     a use it cannot buffer), the run completes with the results of a run
**     without failures (no phase prints hits where a lost use shows);
**   - on the same connection, every cache table passes the cache's
**     integrity_check command and PRAGMA integrity_check passes, and a set
**     and a get still work;
**   - a phase that opens no transaction leaves none open;
**   - the connection closes with SQLITE_OK; nothing is left in DIR but the
**     phase's own database (bench_insert's scratch files are gone).
** Leaks are LeakSanitizer's to report at exit (build/acorn_oom_asan, or
** the runtime preloaded by make test-asan).  Prints one line per phase and
** mode, then "ok", and exits 0; or what failed, and exits 1.
*/
#include "acorn.h"
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sqlite3_acorn_init(sqlite3*, char**, const sqlite3_api_routines*);

/* Under ASan: shorter allocation stacks, a smaller quarantine: the sweep
** allocates millions of times. */
const char *__asan_default_options(void);
const char *__asan_default_options(void){
  return "malloc_context_size=6:quarantine_size_mb=32";
}

/* ------------------------------------------------------------ allocator */

static sqlite3_mem_methods gDefault;
static long gnAlloc;            /* allocations so far in this run */
static long gnFailAt;           /* fail this one (0: none) */
static int gbPersist;           /* and every one after it */
static long gnFailed;           /* allocations failed in this run */
static long gnArmed;            /* allocations while armed, last run */

static int oomFail(void){
  long n = __atomic_add_fetch(&gnAlloc, 1, __ATOMIC_RELAXED);
  long at = __atomic_load_n(&gnFailAt, __ATOMIC_RELAXED);
  if( at>0 && (n==at || (gbPersist && n>at)) ){
    __atomic_add_fetch(&gnFailed, 1, __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}
static void *oomMalloc(int n){
  return oomFail() ? 0 : gDefault.xMalloc(n);
}
static void *oomRealloc(void *p, int n){
  return oomFail() ? 0 : gDefault.xRealloc(p, n);
}
static void oomFree(void *p){ gDefault.xFree(p); }
static int oomSize(void *p){ return gDefault.xSize(p); }
static int oomRoundup(int n){ return gDefault.xRoundup(n); }
static int oomInit(void *p){ return gDefault.xInit(p); }
static void oomShutdown(void *p){ gDefault.xShutdown(p); }

static void oomArm(long nAt, int bPersist){
  __atomic_store_n(&gnAlloc, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&gnFailed, 0, __ATOMIC_RELAXED);
  gbPersist = bPersist;
  __atomic_store_n(&gnFailAt, nAt, __ATOMIC_RELAXED);
}
static void oomDisarm(void){
  __atomic_store_n(&gnFailAt, 0, __ATOMIC_RELAXED);
  gnArmed = __atomic_load_n(&gnAlloc, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ phases */

static const char *zDir;          /* scratch directory */
static char zDbPath[4096];

/* A phase: its database (a file in DIR, or :memory:), its setup and
** statements, and the cache tables it creates (checked after a failure). */
typedef struct phase phase;
struct phase {
  const char *zName;
  int bFile;
  const char *const *azSetup;     /* run before failures are armed */
  const char *const *azSql;
  const char *const *azTable;
};

static const char *const azUuidSql[] = {
  "SELECT length(uuid4()), length(gen_random_uuid()), length(uuid4_blob())",
  "SELECT uuid_version(uuid7()), uuid_version(uuid7_blob()), uuid_version(uuid8()),"
  " uuid_version(uuid8_blob())",
  "SELECT substr(uuid7(1700000000000), 1, 13), hex(substr(uuid8_blob(1700000000000), 1, 6))",
  "SELECT uuid_str(x'0123abcdef4577898abcdef012345678'),"
  " hex(uuid_blob('{0123ABCD-EF45-7789-8ABC-DEF012345678}')),"
  " uuid_version('0123abcd-ef45-7789-8abc-def012345678'),"
  " uuid_timestamp('018bcfe5-6800-791e-90cc-1bd06acaba4c'),"
  " quote(uuid_str('nope')), quote(uuid_blob(x'01'))",
  "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<200)"
  " SELECT count(DISTINCT uuid7()), count(DISTINCT uuid8_blob()),"
  " count(DISTINCT uuid_str(uuid4_blob())) FROM s",
  "SELECT length(uuid()), length(uuidv4()), length(uuid4_str()), uuid_version(uuidv7()),"
  " uuid_version(uuid7_str()), length(ulid()), uuid_version(ulid_blob()),"
  " uuid_version(uuidv7('-1 hour')), uuid_nil(), uuid_max(), hex(uuid_nil_blob()),"
  " hex(uuid_max_blob())",
  "SELECT uuid5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org'),"
  " hex(uuid5_blob(uuid_nil_blob(), 42)), quote(uuid5(uuid_nil(), NULL)),"
  " uuid_extract_timestamp('C232AB00-9414-11EC-B3C8-9F6BDECED846'),"
  " uuid_extract_version(gen_random_uuid()), uuid7_timestamp_ms('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'),"
  " uuid_to_ulid(x'0185f0dc8ec7613cfa43034128935a60'), ulid_to_uuid('01GQRDS3P7C4YFMGR384M96PK0'),"
  " ulid_timestamp('01ARZ3NDEKTSV4RRFFQ69G5FAV')",
  "SELECT acorn_version() LIKE 'v%', length(acorn_debug()) > 0",
  0
};
static const char *const azNoTable[] = { 0 };

/* The cache phases share one setup: a table with entries (one expired),
** and a use buffered on the connection. */
#define CACHE_SETUP \
  "CREATE VIRTUAL TABLE c USING cache(capacity = 2000, recency_buffer = 3)", \
  "INSERT INTO c(key, value) VALUES ('a', zeroblob(100)), (1, x'0102')," \
  " (x'ff', 'text value'), ('b', randomblob(300))", \
  "INSERT INTO c(key, value, expires) VALUES ('e1', zeroblob(10), 1000)," \
  " ('e2', zeroblob(10), 4102444800000)", \
  "SELECT length(value) FROM c WHERE key = 'b'"

static const char *const azCacheCreate[] = {
  "CREATE VIRTUAL TABLE c USING cache(capacity = 2000, recency_buffer = 3)",
  "INSERT INTO c(key, value) VALUES ('a', zeroblob(100)), (1, x'0102'),"
  " (x'ff', 'text value'), ('b', randomblob(300))",
  "INSERT INTO c(key, value, expires) VALUES ('e1', zeroblob(10), 1000),"
  " ('e2', zeroblob(10), 4102444800000)",
  "SELECT key, size, hits, expires FROM c ORDER BY key",
  0
};
static const char *const azCacheSetup[] = { CACHE_SETUP, 0 };
static const char *const azCacheRead[] = {
  "SELECT length(value) FROM c WHERE key = 'a'",
  "SELECT key, length(value) FROM c WHERE key IN ('a', 1, x'ff', 'zz') ORDER BY 2",
  "SELECT hex(cache_read('c', 1, 0, 2)), quote(cache_read('c', 'zz', 0, 1))",
  "SELECT length(value) FROM c WHERE key = 'e2'",      /* fills the buffer */
  "SELECT key, size, hits, expires FROM c ORDER BY key",
  "SELECT capacity, entries, bytes, misses, evictions, expired FROM cache_stats('c')",
  0
};
/* Small phases that make test runs in full: the lookups of cache_read,
** cache_get and cache_stats, and the UPDATEs (which copy the old row). */
static const char *const azCacheLookup[] = {
  "SELECT hex(cache_read('c', 1, 0, 2)), quote(cache_read('main.c', 'zz', 0, 1))",
  "SELECT entries, bytes FROM cache_stats('main.c')",
  "SELECT hex(cache_get('c', 1)), quote(cache_get('main.c', 'zz')),"
  " length(cache_get('c', 'a'))",
  0
};
/* Values written in place: in autocommit (a savepoint of its own), and
** inside a transaction. */
static const char *const azCachePieces[] = {
  "SELECT cache_write('c', 'a', 10, x'0102'), cache_write('main.c', 'a', 98, x'03')",
  "BEGIN",
  "SELECT cache_write('c', 'a', 0, zeroblob(5))",
  "COMMIT",
  "SELECT hex(cache_read('c', 'a', 8, 4)), hex(cache_read('c', 'a', 97, 3))",
  0
};
/* cache_set: in autocommit (a savepoint of its own, ended whatever fails
** in it), inside a transaction (joined), rolled back to a savepoint, and
** from a statement that writes; sets that evict and expire. */
static const char *const azCacheSet[] = {
  "SELECT cache_set('c', 's1', zeroblob(120)), cache_set('c', 's2', 'v', 60, 'g')",
  "BEGIN",
  "SELECT cache_set('c', 's3', zeroblob(200), 0)",
  "SAVEPOINT p",
  "SELECT cache_set('c', 'a', 'again')",
  "ROLLBACK TO p",
  "COMMIT",
  "CREATE TABLE log(x)",
  "INSERT INTO log SELECT cache_set('main.c', 'l' || value, zeroblob(90))"
  " FROM json_each('[1,2,3]')",
  "SELECT key, size FROM c ORDER BY key",
  "SELECT capacity, entries, bytes, evictions, expired FROM cache_stats('c')",
  0
};
static const char *const azCacheUpdate[] = {
  "UPDATE c SET value = zeroblob(150), expires = NULL WHERE key = 'a'",
  "UPDATE c SET key = 'a2' WHERE key = 'b'",
  0
};
/* The third use fills recency_buffer: the get writes the uses in a
** transaction of its own, which must end whatever fails in it. */
static const char *const azCacheFlush[] = {
  "SELECT length(value) FROM c WHERE key = 'a'",
  "SELECT hex(cache_read('c', 1, 0, 2))",
  "SELECT key, size FROM c ORDER BY key",
  0
};
/* A table made and read back: a CREATE that fails must say so. */
static const char *const azCacheNew[] = {
  "CREATE VIRTUAL TABLE c USING cache(capacity = 2000)",
  "SELECT count(*) FROM c",
  0
};
/* The listing of hits reads the stored recency records (a rollback drops
** what the connection holds of them, so they are read again). */
static const char *const azCacheListSetup[] = {
  CACHE_SETUP,
  "INSERT INTO c(c) VALUES ('flush')",
  "BEGIN",
  "DELETE FROM c WHERE key = 'a'",
  "ROLLBACK",
  0
};
static const char *const azCacheList[] = {
  "SELECT key, size, hits, last_used > 0 FROM c ORDER BY key",
  0
};
static const char *const azBenchFile[] = {
  "SELECT rows_written FROM bench_insert WHERE rows = 20 AND dir = ?",
  0
};
static const char *const azBenchMemory[] = {
  "SELECT rows_written FROM bench_insert WHERE rows = 20 AND batch = 5"
  " AND storage = 'memory' AND dir = ?",
  0
};

static const char *const azCacheWrite[] = {
  "UPDATE c SET value = zeroblob(150), expires = NULL WHERE key = 'a'",
  "UPDATE c SET key = 'a2' WHERE key = 'b'",
  "DELETE FROM c WHERE key = x'ff'",
  "INSERT INTO c(key, value) VALUES ('big', zeroblob(1500))",   /* evicts */
  "INSERT INTO c(c, value) VALUES ('capacity', '1kB')",
  "INSERT INTO c(c) VALUES ('purge')",
  "INSERT INTO c(c) VALUES ('flush')",
  "INSERT INTO c(c) VALUES ('integrity_check')",
  "SELECT key, size, hits, expires FROM c ORDER BY key",
  "SELECT capacity, entries, bytes, misses, evictions, expired FROM cache_stats('c')",
  0
};
static const char *const azCacheTxn[] = {
  "BEGIN",
  "INSERT INTO c(key, value) VALUES ('t1', zeroblob(400))",
  "SAVEPOINT s1",
  "INSERT INTO c(key, value) VALUES ('t2', zeroblob(400))",
  "SELECT length(value) FROM c WHERE key = 'a'",
  "INSERT INTO c(key, value) VALUES ('t3', zeroblob(400))",
  "ROLLBACK TO s1",
  "SAVEPOINT s2",
  "INSERT INTO c(key, value) VALUES ('t4', zeroblob(900))",
  "RELEASE s2",
  "RELEASE s1",
  "COMMIT",
  "BEGIN",
  "DELETE FROM c WHERE key = 't1'",
  "INSERT INTO c(c, value) VALUES ('capacity', 1200)",
  "ROLLBACK",
  "SELECT key, size, hits FROM c ORDER BY key",
  "SELECT capacity, entries, bytes, misses, evictions, expired FROM cache_stats('c')",
  0
};
/* Statements that open a savepoint of their own (several rows, a DROP)
** while the transaction holds a config row it has not written: a savepoint
** that cannot begin must leave that row as it is. */
static const char *const azCacheStmtSetup[] = {
  "CREATE VIRTUAL TABLE c USING cache(capacity = 2000)",
  0
};
static const char *const azCacheStmt[] = {
  "BEGIN",
  "INSERT INTO c(key, value) VALUES ('s1', zeroblob(10))",
  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<3)"
  " INSERT INTO c(key, value) SELECT 'm' || i, zeroblob(10) FROM n",
  "SAVEPOINT d",
  "INSERT INTO c(key, value) VALUES ('s2', zeroblob(10))",
  "DROP TABLE c",
  "ROLLBACK TO d",
  "RELEASE d",
  "COMMIT",
  "SELECT key, size FROM c ORDER BY key",
  "SELECT capacity, entries, bytes, misses, evictions, expired FROM cache_stats('c')",
  0
};
static const char *const azCacheDdl[] = {
  "CREATE TABLE other(x)",                             /* a schema reset */
  "SELECT length(value) FROM c WHERE key = 'a'",
  "BEGIN",
  "DROP TABLE c",
  "ROLLBACK",
  "SELECT key, size, hits FROM c ORDER BY key",
  "DROP TABLE c",
  0
};
/* ALTER TABLE RENAME parses the whole schema for each shadow table: a
** table of its own keeps that schema small. */
static const char *const azCacheRenameSetup[] = {
  "CREATE VIRTUAL TABLE d USING cache(capacity = '1MiB')",
  "INSERT INTO d(key, value) VALUES ('x', 'y')",
  "SELECT value FROM d WHERE key = 'x'",
  0
};
static const char *const azCacheRename[] = {
  "ALTER TABLE d RENAME TO d2",
  "SELECT key, value FROM d2",      /* not hits: a use may be lost */
  0
};
static const char *const azCacheFileSetup[] = {
  "PRAGMA journal_mode = WAL",
  "CREATE VIRTUAL TABLE c USING cache(capacity = 3000)",
  /* a use, so that the buffer exists: one that cannot be buffered is
  ** lost, as documented, and would change what the eviction below takes */
  "INSERT INTO c(key, value) VALUES ('z', x'00')",
  "SELECT value FROM c WHERE key = 'z'",
  0
};
static const char *const azCacheFile[] = {
  "INSERT INTO c(key, value) VALUES ('a', zeroblob(1000)), ('b', zeroblob(1000))",
  "SELECT length(value) FROM c WHERE key = 'a'",
  "BEGIN",
  "INSERT INTO c(key, value) VALUES ('c', zeroblob(1500))",   /* evicts b */
  "SAVEPOINT s",
  "DELETE FROM c WHERE key = 'a'",
  "ROLLBACK TO s",
  "COMMIT",
  "SELECT key, size FROM c ORDER BY key",
  0
};
/* ttl, default_ttl, max_entries, tags and the feed: sets with and without
** a tag, lookups and a delete by tag, a renewal, commands that evict and
** trim, and cache_evictions. */
static const char *const azCacheFeaturesSetup[] = {
  "CREATE VIRTUAL TABLE c USING cache(capacity = 2000, max_entries = 5,"
  " feed = 3, default_ttl = '1h')",
  "INSERT INTO c(key, value, tag) VALUES ('a', zeroblob(100), 'g'),"
  " (1, x'0102', 'g'), ('b', 'x', NULL)",
  0
};
static const char *const azCacheFeatures[] = {
  "INSERT INTO c(key, value, ttl, tag) VALUES ('t', 'v', 0, 'h'),"
  " ('u', 'w', 60, 'g')",
  "SELECT key, tag FROM c WHERE tag = 'g' ORDER BY 1",
  "UPDATE c SET ttl = 30, tag = 'h' WHERE key = 'a'",
  "DELETE FROM c WHERE tag = 'g'",
  "INSERT INTO c(key, value) VALUES ('v', 'x'), ('w', 'y'), ('x', 'z')",
  "INSERT INTO c(c, value) VALUES ('max_entries', 1)",
  "INSERT INTO c(c, value) VALUES ('feed', 2)",
  "SELECT seq, key, reason FROM cache_evictions('c') WHERE seq > 0",
  0
};

static const char *const azCacheTable[] = { "c", 0 };
static const char *const azCacheRenameTable[] = { "d", "d2", 0 };

static const char *const azBenchSql[] = {
  "SELECT rows_written FROM bench_insert WHERE rows = 20 AND dir = ?",
  "SELECT rows_written FROM bench_insert WHERE rows = 20 AND threads = 2"
  " AND readers = 1 AND journal = 'delete' AND id = 'uuid7_text' AND dir = ?",
  "SELECT rows_written FROM bench_insert WHERE rows = 20 AND batch = 5"
  " AND storage = 'memory' AND id = 'shortid' AND dir = ?",
  0
};

static const phase aPhase[] = {
  { "uuid",          0, 0, azUuidSql,  azNoTable },
  { "cache-create",  0, 0, azCacheCreate, azCacheTable },
  { "cache-read",    0, azCacheSetup, azCacheRead, azCacheTable },
  { "cache-write",   0, azCacheSetup, azCacheWrite, azCacheTable },
  { "cache-txn",     0, azCacheSetup, azCacheTxn, azCacheTable },
  { "cache-ddl",     0, azCacheSetup, azCacheDdl, azCacheTable },
  { "cache-rename",  0, azCacheRenameSetup, azCacheRename, azCacheRenameTable },
  { "cache-file",    1, azCacheFileSetup, azCacheFile, azCacheTable },
  { "bench_insert",  0, 0, azBenchSql, azNoTable },
  { "cache-lookup",  0, azCacheSetup, azCacheLookup, azCacheTable },
  { "cache-update",  0, azCacheSetup, azCacheUpdate, azCacheTable },
  { "cache-flush",   0, azCacheSetup, azCacheFlush, azCacheTable },
  { "bench-memory",  0, azNoTable, azBenchMemory, azNoTable },
  { "bench-file",    0, azNoTable, azBenchFile, azNoTable },
  { "cache-new",     0, azNoTable, azCacheNew, azCacheTable },
  { "cache-list",    0, azCacheListSetup, azCacheList, azCacheTable },
  { "cache-stmt",    0, azCacheStmtSetup, azCacheStmt, azCacheTable },
  { "cache-features", 0, azCacheFeaturesSetup, azCacheFeatures, azCacheTable },
  { "cache-pieces",  0, azCacheSetup, azCachePieces, azCacheTable },
  { "cache-set",     0, azCacheSetup, azCacheSet, azCacheTable },
};

/* ------------------------------------------------------------ one run */

typedef struct outcome outcome;
struct outcome {
  char *zOut;           /* transcript: rows, one line each */
  size_t nOut, nAlloc;
  int rc;               /* first error, or SQLITE_OK */
  char zErr[300];       /* its message */
  const char *zWhere;   /* the statement, "open" or "init" */
};

static void outAdd(outcome *o, const char *zFmt, ...){
  char z[2000];
  int n;
  va_list ap;
  va_start(ap, zFmt);
  n = vsnprintf(z, sizeof(z), zFmt, ap);
  va_end(ap);
  if( n<0 ) return;
  if( (size_t)n >= sizeof(z) ) n = sizeof(z)-1;
  if( o->nOut + (size_t)n + 1 > o->nAlloc ){
    o->nAlloc = (o->nOut + (size_t)n + 1)*2;
    o->zOut = realloc(o->zOut, o->nAlloc);
    if( o->zOut==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  }
  memcpy(o->zOut + o->nOut, z, (size_t)n + 1);
  o->nOut += (size_t)n;
}

/* Run statements azSql on db until one fails. */
static void runStatements(sqlite3 *db, const char *const *azSql, outcome *o){
  int i;
  for(i=0; azSql[i] && o->rc==SQLITE_OK; i++){
    sqlite3_stmt *pStmt = 0;
    int rc = sqlite3_prepare_v2(db, azSql[i], -1, &pStmt, 0);
    if( rc==SQLITE_OK && sqlite3_bind_parameter_count(pStmt)>0 ){
      rc = sqlite3_bind_text(pStmt, 1, zDir, -1, SQLITE_STATIC);
    }
    while( rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      int j;
      for(j=0; j<sqlite3_column_count(pStmt); j++){
        const char *z = (const char*)sqlite3_column_text(pStmt, j);
        outAdd(o, "%s%s", j ? "|" : "", z ? z : "NULL");
      }
      outAdd(o, "\n");
      rc = SQLITE_OK;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    if( rc!=SQLITE_OK ){
      o->rc = sqlite3_extended_errcode(db);
      if( o->rc==SQLITE_OK ) o->rc = rc;
      snprintf(o->zErr, sizeof(o->zErr), "%s", sqlite3_errmsg(db));
      o->zWhere = azSql[i];
    }
    sqlite3_finalize(pStmt);
  }
}

static int failures = 0;
static void report(const phase *ph, const char *zMode, long n, const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "%s, %s, allocation %ld: ", ph->zName, zMode, n);
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  failures++;
}

/* Is DIR empty but for the phase's database files? */
static int dirClean(char *zLeft, size_t nLeft){
  DIR *d = opendir(zDir);
  struct dirent *e;
  int bClean = 1;
  zLeft[0] = 0;
  if( d==0 ) return 0;
  while( (e = readdir(d))!=0 ){
    if( strcmp(e->d_name, ".")==0 || strcmp(e->d_name, "..")==0 ) continue;
    if( strncmp(e->d_name, "oom.db", 6)==0 ) continue;
    bClean = 0;
    snprintf(zLeft, nLeft, "%s", e->d_name);
  }
  closedir(d);
  return bClean;
}

static void removeDb(void){
  static const char *azSuffix[] = { "", "-journal", "-wal", "-shm" };
  char z[4200];
  size_t i;
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    snprintf(z, sizeof(z), "%s%s", zDbPath, azSuffix[i]);
    unlink(z);
  }
}

/* After a run: the invariants hold, the connection works and closes.  A
** run stopped inside a transaction is checked there, then again after a
** ROLLBACK. */
static void checkState(const phase *ph, const char *zMode, long n, sqlite3 *db,
                       int bInTxn);
static void checkAfter(const phase *ph, const char *zMode, long n, sqlite3 *db){
  if( !sqlite3_get_autocommit(db) ){
    checkState(ph, zMode, n, db, 1);
    if( sqlite3_exec(db, "ROLLBACK", 0, 0, 0)!=SQLITE_OK ){
      report(ph, zMode, n, "after: ROLLBACK: %s", sqlite3_errmsg(db));
    }
  }
  checkState(ph, zMode, n, db, 0);
}

/* The invariants of every cache table of ph that exists, and of the
** database; a set and a get work.  Inside the transaction a failure left
** open (bInTxn), a table may refuse every write until it is rolled back,
** saying so: a cache_set that failed halfway on SQLite before 3.40, which
** runs no statement after an allocation failed inside another, so the set
** cannot roll back what it wrote (the check after the ROLLBACK must pass). */
static void checkState(const phase *ph, const char *zMode, long n, sqlite3 *db,
                       int bInTxn){
  int i;
  char *zErr = 0;
  char zSql[200];
  for(i=0; ph->azTable[i]; i++){
    sqlite3_stmt *pStmt = 0;
    int rc;
    /* Only tables the run got as far as creating. */
    snprintf(zSql, sizeof(zSql), "SELECT 1 FROM sqlite_schema WHERE name = '%s'",
             ph->azTable[i]);
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    rc = rc==SQLITE_OK ? sqlite3_step(pStmt) : rc;
    sqlite3_finalize(pStmt);
    if( rc==SQLITE_DONE ) continue;
    if( rc!=SQLITE_ROW ){
      report(ph, zMode, n, "after: schema lookup: %s", sqlite3_errmsg(db));
      continue;
    }
    snprintf(zSql, sizeof(zSql),
             "INSERT INTO \"%s\"(\"%s\") VALUES('integrity_check');"
             "INSERT INTO \"%s\"(key, value) VALUES('after', x'0102');"
             "SELECT value FROM \"%s\" WHERE key = 'after';",
             ph->azTable[i], ph->azTable[i], ph->azTable[i], ph->azTable[i]);
    if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK
     && !(bInTxn && sqlite3_libversion_number()<3040000 && zErr
          && strstr(zErr, "roll the transaction back")) ){
      report(ph, zMode, n, "after: %s: %s", ph->azTable[i], zErr ? zErr : "?");
      sqlite3_free(zErr);
      zErr = 0;
    }
  }
  {
    sqlite3_stmt *pStmt = 0;
    int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pStmt, 0);
    rc = rc==SQLITE_OK ? sqlite3_step(pStmt) : rc;
    if( rc!=SQLITE_ROW || strcmp((const char*)sqlite3_column_text(pStmt, 0), "ok")!=0 ){
      report(ph, zMode, n, "after: PRAGMA integrity_check: %s",
             rc==SQLITE_ROW ? (const char*)sqlite3_column_text(pStmt, 0)
                            : sqlite3_errmsg(db));
    }
    sqlite3_finalize(pStmt);
  }
}

/* Does phase ph open transactions of its own? */
static int phaseHasTxn(const phase *ph){
  int i;
  for(i=0; ph->azSql[i]; i++){
    if( sqlite3_strnicmp(ph->azSql[i], "BEGIN", 5)==0
     || sqlite3_strnicmp(ph->azSql[i], "SAVEPOINT", 9)==0 ){
      return 1;
    }
  }
  return 0;
}

/* Is the error of o a clear report of the failed allocation?
** SQLITE_NOMEM with "out of memory" (SQLite's words for the same code in
** one place: the temporary database an ALTER TABLE needs); bench_insert
** reports a failure of its own scratch connections as its run's error
** (SQLITE_ERROR), with SQLite's message and the run's parameters. */
static int clearNomem(const outcome *o){
  if( (o->rc&0xff)==SQLITE_NOMEM ){
    return strstr(o->zErr, "out of memory")!=0
        || strcmp(o->zErr, "unable to open a temporary database file for"
                           " storing temporary tables")==0;
  }
  return o->rc==SQLITE_ERROR && strncmp(o->zErr, "bench_insert: ", 14)==0
      && strstr(o->zErr, "out of memory")!=0;
}

/* Run phase ph once with allocation nAt failing; 1 if an allocation
** failed. */
static int runOnce(const phase *ph, const char *zMode, long nAt, int bPersist,
                   outcome *o, const outcome *pRef){
  sqlite3 *db = 0;
  char *zErr = 0;
  char zLeft[300];
  int rc, bFailed;
  memset(o, 0, sizeof(*o));
  removeDb();
  /* Without a setup, the open and the registration fail too. */
  if( ph->azSetup==0 ) oomArm(nAt, bPersist);
  rc = sqlite3_open_v2(ph->bFile ? zDbPath : ":memory:", &db,
                       SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  if( rc!=SQLITE_OK ){
    o->rc = rc;
    snprintf(o->zErr, sizeof(o->zErr), "%s", db ? sqlite3_errmsg(db) : "out of memory");
    o->zWhere = "open";
  }else{
    rc = sqlite3_acorn_init(db, &zErr, 0);
    if( rc!=SQLITE_OK ){
      o->rc = rc;
      /* no message if even that could not be allocated: then the code's */
      snprintf(o->zErr, sizeof(o->zErr), "%s", zErr ? zErr : sqlite3_errstr(rc));
      o->zWhere = "init";
      sqlite3_free(zErr);
    }else if( ph->azSetup ){
      runStatements(db, ph->azSetup, o);
      if( o->rc!=SQLITE_OK ){
        report(ph, zMode, nAt, "setup failed: %s: %s", o->zWhere, o->zErr);
      }
      o->nOut = 0;
      oomArm(nAt, bPersist);
    }
    if( o->rc==SQLITE_OK ) runStatements(db, ph->azSql, o);
  }
  oomDisarm();
  bFailed = gnFailed>0;
  if( !bFailed ){
    if( o->rc!=SQLITE_OK ){
      report(ph, zMode, nAt, "failed with no allocation failure: %s: %s",
             o->zWhere, o->zErr);
    }
  }else if( o->rc!=SQLITE_OK ){
    if( !clearNomem(o) ){
      report(ph, zMode, nAt, "%s: error %d '%s', not SQLITE_NOMEM 'out of memory'",
             o->zWhere, o->rc, o->zErr);
    }
  }else if( pRef && (o->nOut!=pRef->nOut
                   || (o->nOut && memcmp(o->zOut, pRef->zOut, o->nOut)!=0)) ){
    report(ph, zMode, nAt, "completed with an allocation failed, and a"
           " different result:\n%s\ninstead of:\n%s", o->zOut, pRef->zOut);
  }
  if( db && !sqlite3_get_autocommit(db) && !phaseHasTxn(ph) ){
    /* e.g. a failure inside acorn's own short transaction left it open:
    ** the connection's next statements would run inside it */
    report(ph, zMode, nAt, "a transaction was left open (%s)",
           o->zWhere ? o->zWhere : "the run completed");
  }
  if( db ){
    if( o->zWhere==0 || strcmp(o->zWhere, "init")!=0 ) checkAfter(ph, zMode, nAt, db);
    rc = sqlite3_close(db);
    if( rc!=SQLITE_OK ) report(ph, zMode, nAt, "close: %s", sqlite3_errstr(rc));
  }
  if( !dirClean(zLeft, sizeof(zLeft)) ){
    report(ph, zMode, nAt, "left behind in %s: %s", zDir, zLeft);
  }
  return bFailed;
}

/* Is zName one of the comma-separated names in zList? */
static int inList(const char *zList, const char *zName){
  size_t n = strlen(zName);
  const char *z = zList;
  while( (z = strstr(z, zName))!=0 ){
    if( (z==zList || z[-1]==',') && (z[n]==0 || z[n]==',') ) return 1;
    z += n;
  }
  return 0;
}

int main(int argc, char **argv){
  static sqlite3_mem_methods oom = {
    oomMalloc, oomFree, oomRealloc, oomSize, oomRoundup, oomInit, oomShutdown, 0
  };
  size_t i;
  int iMode, iArg;
  long nStride = 1, nStart = 1, nEnd = 0;
  const char *zPhase = 0, *zModes = "both";
  if( argc<2 || argc%2!=0 ){
    fprintf(stderr, "usage: %s DIR [-mode once|persist|both] [-stride K] [-start S]"
            " [-end E] [-phase NAME,...]\n", argv[0]);
    return 2;
  }
  zDir = argv[1];
  for(iArg=2; iArg+1<argc; iArg+=2){
    if( strcmp(argv[iArg], "-stride")==0 ) nStride = atol(argv[iArg+1]);
    else if( strcmp(argv[iArg], "-start")==0 ) nStart = atol(argv[iArg+1]);
    else if( strcmp(argv[iArg], "-end")==0 ) nEnd = atol(argv[iArg+1]);
    else if( strcmp(argv[iArg], "-phase")==0 ) zPhase = argv[iArg+1];
    else if( strcmp(argv[iArg], "-mode")==0 ) zModes = argv[iArg+1];
    else{
      fprintf(stderr, "unknown option %s\n", argv[iArg]);
      return 2;
    }
  }
  if( nStride<1 || nStart<1 ){
    fprintf(stderr, "-stride and -start must be positive\n");
    return 2;
  }
  snprintf(zDbPath, sizeof(zDbPath), "%s/oom.db", zDir);
  if( sqlite3_config(SQLITE_CONFIG_GETMALLOC, &gDefault)
   || sqlite3_config(SQLITE_CONFIG_MALLOC, &oom)
   || sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0) ){
    fprintf(stderr, "sqlite3_config failed\n");
    return 2;
  }
  for(i=0; i<sizeof(aPhase)/sizeof(aPhase[0]); i++){
    const phase *ph = &aPhase[i];
    outcome ref;
    if( zPhase && !inList(zPhase, ph->zName) ) continue;
    runOnce(ph, "reference", 0, 0, &ref, 0);
    if( ref.rc!=SQLITE_OK ){
      fprintf(stderr, "%s: fails without allocation failures: %s: %s\n",
              ph->zName, ref.zWhere, ref.zErr);
      return 1;
    }
    for(iMode=0; iMode<2; iMode++){
      const char *zMode = iMode ? "persist" : "once";
      if( strcmp(zModes, "both")!=0 && strcmp(zModes, zMode)!=0 ) continue;
      long n, nRun = 0, nNomem = 0, nAbsorbed = 0;
      for(n=nStart; ; n+=nStride){
        outcome o;
        int bFailed = runOnce(ph, zMode, n, iMode, &o, &ref);
        if( bFailed ){
          if( o.rc ) nNomem++; else nAbsorbed++;
        }
        free(o.zOut);
        if( !bFailed ) break;
        nRun++;
        if( nEnd>0 && n+nStride>nEnd ) break;
        if( failures>20 ){
          free(ref.zOut);
          return 1;
        }
      }
      printf("%s, %s: %ld of %ld allocations failed, one per run: %ld runs"
             " stopped with SQLITE_NOMEM, %ld completed\n", ph->zName, zMode,
             nRun, gnArmed, nNomem, nAbsorbed);
      fflush(stdout);
    }
    free(ref.zOut);
  }
  sqlite3_shutdown();
  if( failures ){
    fprintf(stderr, "%d problems\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
