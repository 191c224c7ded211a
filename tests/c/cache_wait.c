/*
** cache_wait.c: a write to a cache table inside a deferred transaction
** waits for the write lock where a plain table's write would, with the
** order of events made certain (no timing, no race).
**
**   build/cache_wait EXT DIR
**
** For each journal mode (wal, delete) and each write statement (a set, a
** set if absent, an UPDATE of the value, a renewal, a DELETE, a command),
** on a fresh file DIR/w-<mode>.db holding a cache table t (and a plain
** table p for the other connection to write), with two connections: X (a
** new connection, acorn loaded, the table not yet used on it, unless the
** case says warm) and Y.
**
**   held:      Y holds the write lock (BEGIN IMMEDIATE and a write).  X runs
**              BEGIN, then the statement.  X's busy handler must be called
**              (a plain table's write would wait there): on its first call it
**              commits Y's transaction and says try again; the statement
**              must then succeed, and X's COMMIT with it.
**   snapshot:  X runs BEGIN and prepares the statement (SQLite connects the
**              cache table as it prepares).  Y then commits a write (in WAL
**              mode, a commit after any snapshot X might hold; in rollback
**              mode, a commit that needs X to hold no lock).  X steps the
**              statement: it must succeed.
**   warm:      as snapshot, on a connection that has used the table, after
**              Y changed the schema (so SQLite connects the table again as
**              X prepares).
**
** After each case the table's integrity_check command passes and the
** entry the statement wrote is what it should be.  Then the -wal hooks
** (caseHooks).  Prints "ok N cases" and
** exits 0, or the case that failed and exits 1.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *gExt;
static int gFail = 0;

static void die(const char *zCase, const char *zWhat, sqlite3 *db){
  printf("FAIL %s: %s: %s\n", zCase, zWhat, db ? sqlite3_errmsg(db) : "");
  gFail = 1;
}

static sqlite3 *openDb(const char *zPath){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open(zPath, &db) ){
    printf("FAIL open %s: %s\n", zPath, sqlite3_errmsg(db));
    exit(1);
  }
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, gExt, 0, &zErr) ){
    printf("FAIL load %s: %s\n", gExt, zErr);
    exit(1);
  }
  return db;
}

static int exec(sqlite3 *db, const char *zSql){
  return sqlite3_exec(db, zSql, 0, 0, 0);
}

/* The first column of the first row of zSql as text, in a static buffer
** ("" for none). */
static const char *query(sqlite3 *db, const char *zSql){
  static char aBuf[256];
  sqlite3_stmt *pStmt = 0;
  aBuf[0] = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    const unsigned char *z = sqlite3_column_text(pStmt, 0);
    snprintf(aBuf, sizeof(aBuf), "%s", z ? (const char*)z : "NULL");
  }else{
    snprintf(aBuf, sizeof(aBuf), "error: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  return aBuf;
}

/* X's busy handler in the held case: the first call commits Y. */
typedef struct held held;
struct held {
  sqlite3 *pY;
  int nCall;
  int rcCommit;
};
static int heldBusy(void *pArg, int nPrior){
  held *h = (held*)pArg;
  (void)nPrior;
  if( h->nCall++==0 ) h->rcCommit = exec(h->pY, "COMMIT");
  return h->nCall<1000;
}

/* A write statement on t and what t must hold after it. */
typedef struct write_case write_case;
struct write_case {
  const char *zName;
  const char *zSql;
  const char *zCheck;   /* a query on t */
  const char *zWant;    /* its answer */
  int bAutocommit;      /* X runs it outside BEGIN ... COMMIT */
};
static const write_case aWrite[] = {
  { "set", "INSERT INTO t(key, value) VALUES ('k', 'new')",
    "SELECT value FROM t WHERE key = 'k'", "new", 0 },
  { "set if absent", "INSERT OR IGNORE INTO t(key, value) VALUES ('n', 'v')",
    "SELECT value FROM t WHERE key = 'n'", "v", 0 },
  { "update", "UPDATE t SET value = 'upd' WHERE key = 'a'",
    "SELECT value FROM t WHERE key = 'a'", "upd", 0 },
  { "renew", "UPDATE t SET ttl = 3600 WHERE key = 'a'",
    "SELECT expires IS NOT NULL FROM t WHERE key = 'a'", "1", 0 },
  { "delete", "DELETE FROM t WHERE key = 'a'",
    "SELECT count(*) FROM t WHERE key = 'a'", "0", 0 },
  { "command", "INSERT INTO t(t, value) VALUES ('capacity', '2MiB')",
    "SELECT capacity FROM cache_stats('t')", "2097152", 0 },
  { "cache_write", "SELECT cache_write('t', 'w', 1, x'ab')",
    "SELECT hex(value) FROM t WHERE key = 'w'", "00AB0000", 0 },
  { "cache_write in autocommit", "SELECT cache_write('t', 'w', 2, x'cd')",
    "SELECT hex(value) FROM t WHERE key = 'w'", "0000CD00", 1 },
  { "cache_write in a write", "INSERT INTO p SELECT cache_write('t', 'w', 3,"
    " x'ef')", "SELECT hex(value) FROM t WHERE key = 'w'", "000000EF", 0 },
};

static void setUp(const char *zPath, const char *zMode){
  char *zSql;
  sqlite3 *db;
  char azSide[2][300];
  snprintf(azSide[0], sizeof(azSide[0]), "%s-wal", zPath);
  snprintf(azSide[1], sizeof(azSide[1]), "%s-journal", zPath);
  unlink(zPath); unlink(azSide[0]); unlink(azSide[1]);
  db = openDb(zPath);
  zSql = sqlite3_mprintf(
      "PRAGMA journal_mode=%s;"
      "CREATE VIRTUAL TABLE t USING cache(capacity = '1MiB');"
      "INSERT INTO t(key, value) VALUES ('a', 'old'), ('k', 'old'),"
      " ('w', zeroblob(4));"
      "CREATE TABLE p(x);", zMode);
  if( exec(db, zSql) ) die("setup", zMode, db);
  sqlite3_free(zSql);
  sqlite3_close(db);
}

static void checkAfter(const char *zCase, sqlite3 *db, const write_case *w){
  const char *z;
  if( exec(db, "INSERT INTO t(t) VALUES ('integrity_check')") ){
    die(zCase, "integrity_check", db);
  }
  z = query(db, w->zCheck);
  if( strcmp(z, w->zWant)!=0 ){
    printf("FAIL %s: %s gave %s, not %s\n", zCase, w->zCheck, z, w->zWant);
    gFail = 1;
  }
}

/* The held case: Y holds the write lock; X's write must wait for it. */
static void caseHeld(const char *zPath, const char *zMode, const write_case *w){
  char zCase[200];
  sqlite3 *pX, *pY;
  held h;
  int rc;
  snprintf(zCase, sizeof(zCase), "%s, held, %s", zMode, w->zName);
  setUp(zPath, zMode);
  pY = openDb(zPath);
  pX = openDb(zPath);
  memset(&h, 0, sizeof(h));
  h.pY = pY;
  sqlite3_busy_handler(pX, heldBusy, &h);
  if( exec(pY, "BEGIN IMMEDIATE; INSERT INTO p VALUES (1)") ) die(zCase, "Y begins", pY);
  if( !w->bAutocommit && exec(pX, "BEGIN") ) die(zCase, "X begins", pX);
  rc = exec(pX, w->zSql);
  if( rc ){
    printf("FAIL %s: the write failed (%d, %s) after %d calls of the busy"
           " handler\n", zCase, rc, sqlite3_errmsg(pX), h.nCall);
    gFail = 1;
  }else if( h.nCall==0 ){
    printf("FAIL %s: the write never waited\n", zCase);
    gFail = 1;
  }
  if( h.rcCommit ) die(zCase, "Y's commit from the busy handler", pY);
  if( rc==SQLITE_OK && !w->bAutocommit && exec(pX, "COMMIT") ){
    die(zCase, "X commits", pX);
  }
  if( !sqlite3_get_autocommit(pX) ) exec(pX, "ROLLBACK");
  if( rc==SQLITE_OK ) checkAfter(zCase, pY, w);
  sqlite3_close(pX);
  sqlite3_close(pY);
}

/* The snapshot and warm cases: Y commits after X prepared its write. */
static void caseSnapshot(const char *zPath, const char *zMode,
                         const write_case *w, int bWarm){
  char zCase[200];
  sqlite3 *pX, *pY;
  sqlite3_stmt *pStmt = 0;
  int rc;
  snprintf(zCase, sizeof(zCase), "%s, %s, %s", zMode,
           bWarm ? "warm" : "snapshot", w->zName);
  setUp(zPath, zMode);
  pY = openDb(zPath);
  pX = openDb(zPath);
  sqlite3_busy_timeout(pX, 10000);
  if( bWarm ){
    /* X uses the table, then Y changes the schema */
    if( strcmp(query(pX, "SELECT value FROM t WHERE key = 'k'"), "old") ){
      die(zCase, "X's first read", pX);
    }
    if( exec(pY, "CREATE TABLE q(y)") ) die(zCase, "Y changes the schema", pY);
  }
  if( !w->bAutocommit && exec(pX, "BEGIN") ) die(zCase, "X begins", pX);
  if( sqlite3_prepare_v2(pX, w->zSql, -1, &pStmt, 0) ) die(zCase, "X prepares", pX);
  /* Y has no busy handler: in rollback mode any lock X held would fail it */
  if( exec(pY, "INSERT INTO p VALUES (2)") ) die(zCase, "Y commits", pY);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ) rc = sqlite3_step(pStmt);   /* (a SELECT's one row) */
  if( rc!=SQLITE_DONE ){
    printf("FAIL %s: the write failed (%d, %s)\n", zCase,
           sqlite3_extended_errcode(pX), sqlite3_errmsg(pX));
    gFail = 1;
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE && !w->bAutocommit && exec(pX, "COMMIT") ){
    die(zCase, "X commits", pX);
  }
  if( !sqlite3_get_autocommit(pX) ) exec(pX, "ROLLBACK");
  if( rc==SQLITE_DONE ) checkAfter(zCase, pY, w);
  sqlite3_close(pX);
  sqlite3_close(pY);
}

/* acorn's -wal hook and the application's: an application's hook stays
** (acorn puts its own only in place of SQLite's), and acorn's, left behind
** when everything acorn registered on the connection is gone, does what
** SQLite's does without touching what went. */
static int gHookCalls = 0;
static int appHook(void *pArg, sqlite3 *db, const char *zDb, int nFrame){
  (void)pArg; (void)db; (void)zDb; (void)nFrame;
  gHookCalls++;
  return SQLITE_OK;
}
static void caseHooks(const char *zPath){
  sqlite3 *db;
  int i, nLog = -1, nDone = -1;
  setUp(zPath, "wal");
  db = openDb(zPath);
  sqlite3_wal_hook(db, appHook, 0);
  if( exec(db, "INSERT INTO t(key, value) VALUES ('h', 'v')") ) die("hooks", "a set", db);
  if( gHookCalls!=1 ){
    printf("FAIL hooks: the application's hook ran %d times, not once\n", gHookCalls);
    gFail = 1;
  }
  sqlite3_close(db);
  /* acorn's hook in place, then every module and function of acorn dropped */
  db = openDb(zPath);
  if( exec(db, "SELECT cache_wal_limit('16KiB');"
               "INSERT INTO t(key, value) VALUES ('h2', 'v')") ){
    die("hooks", "a set with a bound", db);
  }
  if( strcmp(query(db, "PRAGMA wal_autocheckpoint"), "0") ){
    die("hooks", "acorn's hook is not in place", db);
  }
  sqlite3_drop_modules(db, 0);
  sqlite3_create_function(db, "cache_get", 2, SQLITE_UTF8, 0, 0, 0, 0);
  sqlite3_create_function(db, "cache_read", 4, SQLITE_UTF8, 0, 0, 0, 0);
  sqlite3_create_function(db, "cache_wal_limit", 0, SQLITE_UTF8, 0, 0, 0, 0);
  sqlite3_create_function(db, "cache_wal_limit", 1, SQLITE_UTF8, 0, 0, 0, 0);
  /* commits that pass the old bound and SQLite's 1000 frames: the hook
  ** left behind checkpoints as SQLite's own (the log starts again), and
  ** touches nothing of what went (ASan and valgrind would see it) */
  if( exec(db, "CREATE TABLE big(x)") ) die("hooks", "create", db);
  for(i=0; i<300; i++){
    if( exec(db, "INSERT INTO big VALUES (zeroblob(20000))") ){
      die("hooks", "a plain insert after the drop", db);
      break;
    }
  }
  sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, &nLog, &nDone);
  if( nLog<0 || nLog>=1500 ){
    printf("FAIL hooks: the log holds %d frames after 1500 pages of commits\n", nLog);
    gFail = 1;
  }
  sqlite3_close(db);
}

int main(int argc, char **argv){
  static const char *azMode[] = { "wal", "delete" };
  char zPath[512];
  int i, j, n = 0;
  if( argc!=3 ){
    fprintf(stderr, "usage: %s EXT DIR\n", argv[0]);
    return 2;
  }
  gExt = argv[1];
  for(i=0; i<2; i++){
    snprintf(zPath, sizeof(zPath), "%s/w-%s.db", argv[2], azMode[i]);
    for(j=0; j<(int)(sizeof(aWrite)/sizeof(aWrite[0])); j++){
      caseHeld(zPath, azMode[i], &aWrite[j]);
      caseSnapshot(zPath, azMode[i], &aWrite[j], 0);
      caseSnapshot(zPath, azMode[i], &aWrite[j], 1);
      n += 3;
    }
  }
  snprintf(zPath, sizeof(zPath), "%s/hooks.db", argv[2]);
  caseHooks(zPath);
  n++;
  if( gFail ) return 1;
  printf("ok %d cases\n", n);
  return 0;
}
