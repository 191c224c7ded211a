/*
** cache_load.c: several processes on one WAL cache file, with eviction,
** every read verified.
**
**   build/cache_load EXT DB NPROC SECONDS SEED [CAPACITY]
**
** Creates DB afresh (WAL, a table t USING cache(capacity=CAPACITY,
** recency_buffer=16); the default 48000 holds about a hundred entries of
** the ~250 keys used, so sets keep evicting, and gets write their recency
** in short transactions of their own), then forks NPROC workers that for SECONDS do random
** operations on it, each on its own connection (busy_timeout 10 s):
**   sets (INSERT; UPDATE of value), deletes, gets (key = ?, key IN (...),
**   cache_read, cache_get), flush, and transactions (BEGIN IMMEDIATE) of several sets
**   and deletes that end in COMMIT or ROLLBACK, now and then a check that
**   bytes <= capacity in cache_stats.
** Keys: 64 shared ones ("s<n>"), and 48 per worker ("p<w>-<n>") that only
** that worker writes.  A value is derived from its key and a version:
** "<key>|<version>|" then bytes from a stream seeded by both, of a length
** they decide.  Every value read is verified byte for byte against its key;
** for its own keys a worker knows the version it last committed, and a read
** must return exactly that or nothing (evicted, or deleted by itself).
**
** When all workers are done: PRAGMA integrity_check, the cache's
** integrity_check command, bytes <= capacity, entries and bytes of
** cache_stats equal count(*) and sum(size) of the listing, every stored
** value verified, evictions happened.  Prints "ok ..." with counts and exits
** 0, or prints what failed and exits 1.
*/
#include <sqlite3.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "splitmix.h"

typedef sqlite3_int64 i64;

#define NSHARED   64
#define NOWN      48
#define MAXPROC   16
#define CAPACITY  48000     /* default */

/* Counters shared by the workers (an anonymous shared mapping). */
typedef struct counts counts;
struct counts {
  i64 nSet, nDel, nGet, nHit, nTxn, nRollback, nStats;
  int bFailed;
};
static counts *gCounts;
#define COUNT(f) __atomic_fetch_add(&gCounts->f, 1, __ATOMIC_RELAXED)

static unsigned long long hashKey(const char *z){
  unsigned long long h = 1469598103934665603ULL;
  while( *z ){ h ^= (unsigned char)*z++; h *= 1099511628211ULL; }
  return h;
}

/* The value of (key, version) into a; returns its length. */
static int valueMake(const char *zKey, i64 v, unsigned char *a){
  unsigned long long s = splitmix(hashKey(zKey) ^ (unsigned long long)v);
  int nHead = snprintf((char*)a, 64, "%s|%lld|", zKey, v);
  int n = nHead + 1 + (int)(s % 700), i;
  if( s%16==0 ) n += 1500;                 /* now and then an overflow page */
  for(i=nHead; i<n; i++){
    if( ((i-nHead)&7)==0 ) s = splitmix(s);
    a[i] = (unsigned char)(s >> (((i-nHead)&7)*8));
  }
  return n;
}

/* The version of value a (n bytes) stored under zKey, or -1 if it is not
** exactly the value of (zKey, some version). */
static i64 valueCheck(const char *zKey, const unsigned char *a, int n){
  unsigned char aWant[2400];
  size_t nKey = strlen(zKey);
  i64 v;
  if( a==0 || (size_t)n<nKey+3 || memcmp(a, zKey, nKey)!=0 || a[nKey]!='|' ) return -1;
  v = strtoll((const char*)a + nKey + 1, 0, 10);
  if( v<=0 || valueMake(zKey, v, aWant)!=n || memcmp(a, aWant, (size_t)n)!=0 ) return -1;
  return v;
}

static void failf(const char *zWho, const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "%s: ", zWho);
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if( gCounts ) gCounts->bFailed = 1;
  exit(1);
}

static sqlite3 *openDb(const char *zWho, const char *zPath, const char *zExt){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ){
    failf(zWho, "open %s: %s", zPath, db ? sqlite3_errmsg(db) : "out of memory");
  }
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    failf(zWho, "load %s: %s", zExt, zErr ? zErr : sqlite3_errmsg(db));
  }
  sqlite3_busy_timeout(db, 10000);
  return db;
}

static void execOrFail(const char *zWho, sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    failf(zWho, "%s: %s", zSql, zErr ? zErr : sqlite3_errmsg(db));
  }
}

static i64 nowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (i64)ts.tv_sec*1000 + ts.tv_nsec/1000000;
}

/* ------------------------------------------------------------ a worker */

enum { LOAD_SET, LOAD_UPD, LOAD_DEL, LOAD_GET, LOAD_IN, LOAD_READ, LOAD_FLUSH, LOAD_STATS,
       LOAD_GETF, LOAD_NSTMT };
static const char *azLoadSql[LOAD_NSTMT] = {
  "INSERT INTO t(key, value) VALUES(?1, ?2)",
  "UPDATE t SET value = ?2 WHERE key = ?1",
  "DELETE FROM t WHERE key = ?1",
  "SELECT value FROM t WHERE key = ?1",
  "SELECT key, value FROM t WHERE key IN (?1, ?2, ?3, ?4)",
  "SELECT cache_read('t', ?1, 0, 1000000)",
  "INSERT INTO t(t) VALUES('flush')",
  "SELECT bytes <= capacity, bytes, capacity FROM cache_stats('t')",
  "SELECT cache_get('t', ?1)",
};

typedef struct worker worker;
struct worker {
  char zWho[32];
  sqlite3 *db;
  sqlite3_stmt *aStmt[LOAD_NSTMT];
  int iWorker;
  i64 nVer;
  i64 aOwn[NOWN];       /* version last committed per own key, 0: none */
  i64 aOwnTxn[NOWN];    /* the same inside the open transaction */
};

static void keyName(const worker *w, int bOwn, int i, char *z, size_t n){
  if( bOwn ) snprintf(z, n, "p%d-%d", w->iWorker, i);
  else snprintf(z, n, "s%d", i);
}

static void stepDone(worker *w, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_DONE ) failf(w->zWho, "%s: %s", sqlite3_sql(pStmt), sqlite3_errmsg(w->db));
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
}

/* A read of key (own index iOwn, or -1) returned column i of pStmt. */
static void verifyRead(worker *w, sqlite3_stmt *pStmt, int i, const char *zKey,
                       int iOwn, const i64 *aOwn){
  i64 v = 0;
  if( sqlite3_column_type(pStmt, i)!=SQLITE_NULL ){
    v = valueCheck(zKey, sqlite3_column_blob(pStmt, i), sqlite3_column_bytes(pStmt, i));
    if( v<0 ) failf(w->zWho, "the value read for %s is not a value of that key", zKey);
    COUNT(nHit);
  }
  COUNT(nGet);
  if( iOwn>=0 && v!=0 && v!=aOwn[iOwn] ){
    failf(w->zWho, "%s read version %lld, but the last one committed is %lld",
          zKey, v, aOwn[iOwn]);
  }
}

/* One random operation; aOwn is the own keys' state it must agree with
** and update. */
static void workerOp(worker *w, i64 *aOwn, int bTxn){
  unsigned char aVal[2400];
  char zKey[32];
  unsigned r = rnd(100);
  int bOwn = rnd(2), i = bOwn ? (int)rnd(NOWN) : (int)rnd(NSHARED), n;
  int iOwn = bOwn ? i : -1;
  sqlite3_stmt *pStmt;
  keyName(w, bOwn, i, zKey, sizeof(zKey));
  if( bTxn && r>=45 ) r = r%45;       /* transactions write */
  if( r<30 ){
    i64 v = (i64)w->iWorker*1000000000LL + ++w->nVer;
    pStmt = w->aStmt[LOAD_SET];
    n = valueMake(zKey, v, aVal);
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(pStmt, 2, aVal, n, SQLITE_TRANSIENT);
    stepDone(w, pStmt);
    if( bOwn ) aOwn[i] = v;
    COUNT(nSet);
  }else if( r<35 ){
    i64 v = (i64)w->iWorker*1000000000LL + ++w->nVer;
    pStmt = w->aStmt[LOAD_UPD];
    n = valueMake(zKey, v, aVal);
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(pStmt, 2, aVal, n, SQLITE_TRANSIENT);
    stepDone(w, pStmt);
    /* an UPDATE of an evicted key changes nothing */
    if( bOwn && sqlite3_changes(w->db)>0 ) aOwn[i] = v;
    COUNT(nSet);
  }else if( r<45 ){
    pStmt = w->aStmt[LOAD_DEL];
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_TRANSIENT);
    stepDone(w, pStmt);
    if( bOwn ) aOwn[i] = 0;
    COUNT(nDel);
  }else if( r<75 ){
    int rc;
    pStmt = w->aStmt[LOAD_GET];
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      verifyRead(w, pStmt, 0, zKey, iOwn, aOwn);
      rc = sqlite3_step(pStmt);
    }else{
      COUNT(nGet);
    }
    if( rc!=SQLITE_DONE ) failf(w->zWho, "get %s: %s", zKey, sqlite3_errmsg(w->db));
    sqlite3_reset(pStmt);
  }else if( r<85 ){
    char azIn[4][32];
    int j, rc;
    pStmt = w->aStmt[LOAD_IN];
    for(j=0; j<4; j++){
      int b = j<2 ? bOwn : !bOwn;
      keyName(w, b, b ? (int)rnd(NOWN) : (int)rnd(NSHARED), azIn[j], sizeof(azIn[j]));
      sqlite3_bind_text(pStmt, j+1, azIn[j], -1, SQLITE_TRANSIENT);
    }
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      const char *zGot = (const char*)sqlite3_column_text(pStmt, 0);
      int iO = -1;
      if( zGot[0]=='p' ){
        char zMine[16];
        int nMine = snprintf(zMine, sizeof(zMine), "p%d-", w->iWorker);
        if( strncmp(zGot, zMine, (size_t)nMine)!=0 ){
          failf(w->zWho, "IN returned %s, not asked for", zGot);
        }
        iO = atoi(zGot + nMine);
      }
      verifyRead(w, pStmt, 1, zGot, iO, aOwn);
    }
    if( rc!=SQLITE_DONE ) failf(w->zWho, "get IN: %s", sqlite3_errmsg(w->db));
    sqlite3_reset(pStmt);
  }else if( r<95 ){
    int bGetF = rnd(2)==0;
    pStmt = w->aStmt[bGetF ? LOAD_GETF : LOAD_READ];
    sqlite3_bind_text(pStmt, 1, zKey, -1, SQLITE_TRANSIENT);
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      failf(w->zWho, "%s %s: %s", bGetF ? "cache_get" : "cache_read", zKey,
            sqlite3_errmsg(w->db));
    }
    verifyRead(w, pStmt, 0, zKey, iOwn, aOwn);
    sqlite3_reset(pStmt);
  }else if( r<97 ){
    stepDone(w, w->aStmt[LOAD_FLUSH]);
  }else{
    pStmt = w->aStmt[LOAD_STATS];
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      failf(w->zWho, "cache_stats: %s", sqlite3_errmsg(w->db));
    }
    if( !sqlite3_column_int(pStmt, 0) ){
      failf(w->zWho, "bytes %lld > capacity %lld", sqlite3_column_int64(pStmt, 1),
            sqlite3_column_int64(pStmt, 2));
    }
    sqlite3_reset(pStmt);
    COUNT(nStats);
  }
}

static void workerMain(const char *zExt, const char *zDb, int iWorker,
                       unsigned long long iSeed, i64 tEnd){
  worker w;
  int i;
  memset(&w, 0, sizeof(w));
  snprintf(w.zWho, sizeof(w.zWho), "worker %d", iWorker);
  w.iWorker = iWorker;
  gRand = splitmix(iSeed*7919ULL + (unsigned long long)iWorker);
  w.db = openDb(w.zWho, zDb, zExt);
  execOrFail(w.zWho, w.db, "PRAGMA synchronous=NORMAL");
  for(i=0; i<LOAD_NSTMT; i++){
    if( sqlite3_prepare_v2(w.db, azLoadSql[i], -1, &w.aStmt[i], 0) ){
      failf(w.zWho, "prepare %s: %s", azLoadSql[i], sqlite3_errmsg(w.db));
    }
  }
  while( nowMs()<tEnd && !gCounts->bFailed ){
    if( rnd(100)<10 ){
      int nOp = 2 + (int)rnd(6);
      memcpy(w.aOwnTxn, w.aOwn, sizeof(w.aOwn));
      execOrFail(w.zWho, w.db, "BEGIN IMMEDIATE");
      for(i=0; i<nOp; i++) workerOp(&w, w.aOwnTxn, 1);
      if( rnd(100)<80 ){
        execOrFail(w.zWho, w.db, "COMMIT");
        memcpy(w.aOwn, w.aOwnTxn, sizeof(w.aOwn));
      }else{
        execOrFail(w.zWho, w.db, "ROLLBACK");
        COUNT(nRollback);
      }
      COUNT(nTxn);
    }else{
      workerOp(&w, w.aOwn, 0);
    }
  }
  for(i=0; i<LOAD_NSTMT; i++) sqlite3_finalize(w.aStmt[i]);
  if( sqlite3_close(w.db)!=SQLITE_OK ) failf(w.zWho, "close failed");
}

/* ------------------------------------------------------------ the check */

static void checkAll(const char *zExt, const char *zDb, i64 *pnEvict,
                     i64 *pnEntries){
  const char *zWho = "check";
  sqlite3 *db = openDb(zWho, zDb, zExt);
  sqlite3_stmt *pStmt = 0;
  i64 nRows = 0, nSum = 0;
  if( sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pStmt, 0)
   || sqlite3_step(pStmt)!=SQLITE_ROW
   || strcmp((const char*)sqlite3_column_text(pStmt, 0), "ok")!=0 ){
    failf(zWho, "PRAGMA integrity_check: %s", pStmt && sqlite3_column_text(pStmt, 0)
          ? (const char*)sqlite3_column_text(pStmt, 0) : sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  execOrFail(zWho, db, "INSERT INTO t(t) VALUES('integrity_check')");
  if( sqlite3_prepare_v2(db, "SELECT count(*), total(size) FROM"
                         " (SELECT size FROM t)", -1, &pStmt, 0)
   || sqlite3_step(pStmt)!=SQLITE_ROW ){
    failf(zWho, "listing: %s", sqlite3_errmsg(db));
  }
  nRows = sqlite3_column_int64(pStmt, 0);
  nSum = sqlite3_column_int64(pStmt, 1);
  sqlite3_finalize(pStmt);
  if( sqlite3_prepare_v2(db, "SELECT capacity, entries, bytes, evictions"
                         " FROM cache_stats('t')", -1, &pStmt, 0)
   || sqlite3_step(pStmt)!=SQLITE_ROW ){
    failf(zWho, "cache_stats: %s", sqlite3_errmsg(db));
  }
  if( sqlite3_column_int64(pStmt, 2)>sqlite3_column_int64(pStmt, 0) ){
    failf(zWho, "bytes %lld > capacity %lld", sqlite3_column_int64(pStmt, 2),
          sqlite3_column_int64(pStmt, 0));
  }
  if( sqlite3_column_int64(pStmt, 1)!=nRows || sqlite3_column_int64(pStmt, 2)!=nSum ){
    failf(zWho, "cache_stats says %lld entries and %lld bytes, the listing %lld"
          " and %lld", sqlite3_column_int64(pStmt, 1), sqlite3_column_int64(pStmt, 2),
          nRows, nSum);
  }
  *pnEvict = sqlite3_column_int64(pStmt, 3);
  *pnEntries = nRows;
  sqlite3_finalize(pStmt);
  if( sqlite3_prepare_v2(db, "SELECT key, value FROM t", -1, &pStmt, 0) ){
    failf(zWho, "values: %s", sqlite3_errmsg(db));
  }
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zKey = (const char*)sqlite3_column_text(pStmt, 0);
    if( valueCheck(zKey, sqlite3_column_blob(pStmt, 1), sqlite3_column_bytes(pStmt, 1))<0 ){
      failf(zWho, "the stored value of %s is not a value of that key", zKey);
    }
  }
  if( sqlite3_finalize(pStmt)!=SQLITE_OK ) failf(zWho, "values: %s", sqlite3_errmsg(db));
  if( sqlite3_close(db)!=SQLITE_OK ) failf(zWho, "close failed");
}

int main(int argc, char **argv){
  const char *zExt, *zDb;
  int nProc, i, nFailed = 0;
  double rSeconds;
  unsigned long long iSeed;
  pid_t aPid[MAXPROC];
  i64 tEnd, nEvict = 0, nEntries = 0;
  int nCapacity = CAPACITY;
  if( argc!=6 && argc!=7 ){
    fprintf(stderr, "usage: %s EXT DB NPROC SECONDS SEED [CAPACITY]\n", argv[0]);
    return 2;
  }
  if( argc==7 ) nCapacity = atoi(argv[6]);
  if( nCapacity<4000 ){
    fprintf(stderr, "CAPACITY must be at least 4000 (the largest entry is ~2300)\n");
    return 2;
  }
  zExt = argv[1]; zDb = argv[2];
  nProc = atoi(argv[3]);
  rSeconds = atof(argv[4]);
  iSeed = strtoull(argv[5], 0, 10);
  if( nProc<1 || nProc>MAXPROC ){
    fprintf(stderr, "NPROC must be 1..%d\n", MAXPROC);
    return 2;
  }
  gCounts = mmap(0, sizeof(counts), PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
  if( gCounts==MAP_FAILED ){ perror("mmap"); return 2; }
  memset(gCounts, 0, sizeof(*gCounts));
  {
    static const char *azSuffix[] = { "", "-wal", "-shm", "-journal" };
    char zSql[200];
    sqlite3 *db;
    for(i=0; i<4; i++){
      char *z = sqlite3_mprintf("%s%s", zDb, azSuffix[i]);
      unlink(z);
      sqlite3_free(z);
    }
    db = openDb("setup", zDb, zExt);
    snprintf(zSql, sizeof(zSql), "PRAGMA journal_mode=WAL; CREATE VIRTUAL TABLE t"
             " USING cache(capacity=%d, recency_buffer=16)", nCapacity);
    execOrFail("setup", db, zSql);
    sqlite3_close(db);
  }
  tEnd = nowMs() + (i64)(rSeconds*1000);
  for(i=0; i<nProc; i++){
    aPid[i] = fork();
    if( aPid[i]<0 ){ perror("fork"); return 2; }
    if( aPid[i]==0 ){
      workerMain(zExt, zDb, i+1, iSeed, tEnd);
      exit(0);
    }
  }
  for(i=0; i<nProc; i++){
    int st = 0;
    waitpid(aPid[i], &st, 0);
    if( !WIFEXITED(st) || WEXITSTATUS(st)!=0 ){
      fprintf(stderr, "worker %d ended with status %d\n", i+1, st);
      nFailed++;
    }
  }
  if( nFailed ) return 1;
  checkAll(zExt, zDb, &nEvict, &nEntries);
  if( nEvict==0 ) failf("check", "nothing was evicted: the load did not fill the cache");
  printf("ok %d processes, %.0f s (seed %llu): %lld sets, %lld deletes,"
         " %lld gets verified (%lld found), %lld transactions (%lld rolled back),"
         " %lld stats checks; at the end %lld entries, %lld evictions\n",
         nProc, rSeconds, iSeed, gCounts->nSet, gCounts->nDel, gCounts->nGet,
         gCounts->nHit, gCounts->nTxn, gCounts->nRollback, gCounts->nStats,
         nEntries, nEvict);
  return 0;
}
