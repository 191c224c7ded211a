/*
** cache_bench.c: the cache virtual table against a plain table, in one run.
**
**   build/cache_bench EXTENSION DIR [RUNS] [KEYS]
**
** Both sides: a file in DIR, journal_mode=WAL, synchronous=NORMAL, one
** connection, statements prepared once (bind, step, reset).  The plain side
** is kv(k TEXT PRIMARY KEY, v BLOB); the cache side is
** CREATE VIRTUAL TABLE c USING cache.  Every phase runs RUNS times,
** alternating which side goes first, and the median rate is reported.
**
**   load         KEYS sets of 1 KiB values in transactions of 1000
**                (plain INSERT OR REPLACE; cache capacity above the data)
**   get          2*KEYS random gets of loaded keys, autocommit; the cache's
**                time includes a final 'flush' of its buffered recency
**   set-auto     KEYS/5 autocommit sets of random keys out of the KEYS (plain:
**                INSERT OR REPLACE); the cache's capacity is now half the
**                data, so a set either replaces a stored key or evicts
**   set-txn1000  KEYS such sets in transactions of 1000
**   1MiB write / read whole / read 16KiB pieces: 64 values of 1 MiB; the
**                pieces are cache_read() on the cache side and
**                sqlite3_blob_read() on the plain side
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *zExt;
static const char *zDir;

static double now_s(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec*1e-9;
}

static void check(int rc, sqlite3 *db, const char *zWhat){
  if( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
    fprintf(stderr, "cache_bench: %s: %s\n", zWhat, sqlite3_errmsg(db));
    exit(1);
  }
}

static void exec(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "cache_bench: %s: %s\n", zSql, zErr);
    exit(1);
  }
}

static sqlite3_stmt *prep(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  check(sqlite3_prepare_v2(db, zSql, -1, &p, 0), db, zSql);
  return p;
}

static sqlite3 *open_db(const char *zName, int bCache, long long nCapacity){
  char zPath[4096];
  sqlite3 *db;
  char *zErr = 0;
  snprintf(zPath, sizeof(zPath), "%s/%s", zDir, zName);
  remove(zPath);
  {
    char zAux[4200];
    snprintf(zAux, sizeof(zAux), "%s-wal", zPath); remove(zAux);
    snprintf(zAux, sizeof(zAux), "%s-shm", zPath); remove(zAux);
  }
  check(sqlite3_open(zPath, &db), db, "open");
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  if( bCache ){
    char *zSql;
    sqlite3_enable_load_extension(db, 1);
    if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
      fprintf(stderr, "cache_bench: load %s: %s\n", zExt, zErr);
      exit(1);
    }
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE c USING cache(capacity=%lld%s%s)",
                           nCapacity, getenv("CACHE_OPTS") ? ", " : "",
                           getenv("CACHE_OPTS") ? getenv("CACHE_OPTS") : "");
    exec(db, zSql);
    sqlite3_free(zSql);
  }else{
    exec(db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
  }
  return db;
}

static unsigned long long gRng = 88172645463325252ULL;
unsigned long long rnd(void){
  gRng ^= gRng<<13; gRng ^= gRng>>7; gRng ^= gRng<<17;
  return gRng;
}

static void key(char *z, long long i){ snprintf(z, 32, "key%09lld", i); }

/* n sets in transactions of nTxn (0: autocommit): keys i0, i0+1, ... if
** nSpace is 0, else random keys from [0, nSpace). */
unsigned long long rnd(void);
static double do_sets(sqlite3 *db, int bCache, long long i0, long long n,
                      int nTxn, const unsigned char *aVal, int nVal,
                      long long nSpace){
  sqlite3_stmt *p = prep(db, bCache
      ? "INSERT INTO c(key, value) VALUES(?1, ?2)"
      : "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)");
  char z[32];
  long long i;
  double t0 = now_s();
  for(i=0; i<n; i++){
    if( nTxn && i%nTxn==0 ) exec(db, "BEGIN");
    key(z, nSpace ? (long long)(rnd()%(unsigned long long)nSpace) : i0+i);
    sqlite3_bind_text(p, 1, z, -1, SQLITE_STATIC);
    sqlite3_bind_blob(p, 2, aVal, nVal, SQLITE_STATIC);
    check(sqlite3_step(p), db, "set");
    sqlite3_reset(p);
    if( nTxn && (i%nTxn==nTxn-1 || i==n-1) ) exec(db, "COMMIT");
  }
  sqlite3_finalize(p);
  return n/(now_s()-t0);
}

static double do_gets(sqlite3 *db, int bCache, long long nKeys, long long n){
  sqlite3_stmt *p = prep(db, bCache ? "SELECT value FROM c WHERE key=?1"
                                    : "SELECT v FROM kv WHERE k=?1");
  char z[32];
  long long i, nFound = 0, nBytes = 0;
  double t0 = now_s();
  for(i=0; i<n; i++){
    key(z, (long long)(rnd()%(unsigned long long)nKeys));
    sqlite3_bind_text(p, 1, z, -1, SQLITE_STATIC);
    if( sqlite3_step(p)==SQLITE_ROW ){
      const void *v = sqlite3_column_blob(p, 0);
      nBytes += sqlite3_column_bytes(p, 0) + (v!=0);
      nFound++;
    }
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  if( nFound!=n ){
    fprintf(stderr, "cache_bench: %lld of %lld gets found\n", nFound, n);
    exit(1);
  }
  return n/(now_s()-t0);
}

static int cmp_double(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x<y ? -1 : x>y;
}
static double median(double *a, int n){
  qsort(a, n, sizeof(double), cmp_double);
  return n%2 ? a[n/2] : (a[n/2-1]+a[n/2])/2;
}

#define MAXRUN 15
enum { P_LOAD, P_GET, P_SETAUTO, P_SETTXN, P_BIGW, P_BIGR, P_BIGP, NPHASE };
static double aRate[NPHASE][2][MAXRUN];

static void run_small(int iRun, int bCache, long long nKeys){
  static unsigned char aVal[1024];
  long long nData = nKeys*(1024+12);
  sqlite3 *db;
  int i;
  for(i=0; i<1024; i++) aVal[i] = (unsigned char)(i*7+iRun);
  db = open_db(bCache ? "cache.db" : "plain.db", bCache, nData*2);
  aRate[P_LOAD][bCache][iRun] = do_sets(db, bCache, 0, nKeys, 1000, aVal, 1024, 0);
  gRng = 88172645463325252ULL + (unsigned)iRun;
  {
    /* The gets are charged with writing their recency: the cache's buffer
    ** is flushed inside the timed part. */
    double t0 = now_s();
    do_gets(db, bCache, nKeys, 2*nKeys);
    if( bCache ) exec(db, "INSERT INTO c(c) VALUES('flush')");
    aRate[P_GET][bCache][iRun] = 2*nKeys/(now_s()-t0);
  }
  if( bCache ){
    char *zSql = sqlite3_mprintf(
        "INSERT INTO c(c, value) VALUES('capacity', %lld)", nData/2);
    exec(db, zSql);
    sqlite3_free(zSql);
  }
  gRng = 1181783497276652981ULL + (unsigned)iRun;
  aRate[P_SETAUTO][bCache][iRun] =
      do_sets(db, bCache, 0, nKeys/5, 0, aVal, 1024, nKeys);
  aRate[P_SETTXN][bCache][iRun] =
      do_sets(db, bCache, 0, nKeys, 1000, aVal, 1024, nKeys);
  sqlite3_close(db);
}

#define BIG (1<<20)
#define NBIG 64
#define PIECE 16384

static void run_big(int iRun, int bCache){
  unsigned char *aVal = malloc(BIG), *aBuf = malloc(PIECE);
  sqlite3 *db = open_db(bCache ? "cache.db" : "plain.db", bCache, 256LL<<20);
  sqlite3_stmt *p;
  char z[32];
  int i, off;
  double t0;
  long long nBytes = 0;
  for(i=0; i<BIG; i++) aVal[i] = (unsigned char)(rnd()>>24);
  t0 = now_s();
  do_sets(db, bCache, 0, NBIG, 0, aVal, BIG, 0);
  aRate[P_BIGW][bCache][iRun] = NBIG*(double)BIG/1e6/(now_s()-t0);

  p = prep(db, bCache ? "SELECT value FROM c WHERE key=?1"
                      : "SELECT v FROM kv WHERE k=?1");
  t0 = now_s();
  for(i=0; i<NBIG; i++){
    key(z, i);
    sqlite3_bind_text(p, 1, z, -1, SQLITE_STATIC);
    check(sqlite3_step(p), db, "read whole");
    if( sqlite3_column_blob(p, 0) ) nBytes += sqlite3_column_bytes(p, 0);
    sqlite3_reset(p);
  }
  aRate[P_BIGR][bCache][iRun] = nBytes/1e6/(now_s()-t0);
  sqlite3_finalize(p);

  nBytes = 0;
  t0 = now_s();
  if( bCache ){
    p = prep(db, "SELECT cache_read('c', ?1, ?2, 16384)");
    for(i=0; i<NBIG; i++){
      key(z, i);
      sqlite3_bind_text(p, 1, z, -1, SQLITE_STATIC);
      for(off=0; off<BIG; off+=PIECE){
        sqlite3_bind_int(p, 2, off);
        check(sqlite3_step(p), db, "cache_read");
        if( sqlite3_column_blob(p, 0) ) nBytes += sqlite3_column_bytes(p, 0);
        sqlite3_reset(p);
      }
    }
    sqlite3_finalize(p);
  }else{
    sqlite3_stmt *pId = prep(db, "SELECT rowid FROM kv WHERE k=?1");
    for(i=0; i<NBIG; i++){
      sqlite3_int64 id;
      key(z, i);
      sqlite3_bind_text(pId, 1, z, -1, SQLITE_STATIC);
      check(sqlite3_step(pId), db, "rowid");
      id = sqlite3_column_int64(pId, 0);
      sqlite3_reset(pId);
      for(off=0; off<BIG; off+=PIECE){
        sqlite3_blob *pBlob = 0;
        check(sqlite3_blob_open(db, "main", "kv", "v", id, 0, &pBlob), db, "blob_open");
        check(sqlite3_blob_read(pBlob, aBuf, PIECE, off), db, "blob_read");
        sqlite3_blob_close(pBlob);
        nBytes += PIECE;
      }
    }
    sqlite3_finalize(pId);
  }
  aRate[P_BIGP][bCache][iRun] = nBytes/1e6/(now_s()-t0);
  sqlite3_close(db);
  free(aVal);
  free(aBuf);
}

int main(int argc, char **argv){
  static const struct { const char *zName, *zUnit; double target; } aPhase[] = {
    { "sets, transactions of 1000 (load)", "ops/s", 0.6 },
    { "random gets",                       "ops/s", 0.8 },
    { "autocommit sets, evicting",         "ops/s", 0.6 },
    { "sets, transactions of 1000, evicting", "ops/s", 0.6 },
    { "1 MiB values: write whole",         "MB/s",  0 },
    { "1 MiB values: read whole",          "MB/s",  0 },
    { "1 MiB values: read 16 KiB pieces",  "MB/s",  0 },
  };
  int nRun, i, r;
  long long nKeys;
  if( argc<3 ){
    fprintf(stderr, "usage: %s EXTENSION DIR [RUNS] [KEYS]\n", argv[0]);
    return 2;
  }
  zExt = argv[1];
  zDir = argv[2];
  nRun = argc>3 ? atoi(argv[3]) : 5;
  nKeys = argc>4 ? atoll(argv[4]) : 100000;
  if( nRun<1 || nRun>MAXRUN || nKeys<1000 ){
    fprintf(stderr, "cache_bench: RUNS must be 1..%d, KEYS at least 1000\n", MAXRUN);
    return 2;
  }
  for(r=0; r<nRun; r++){
    int first = r%2;
    run_small(r, first, nKeys);
    run_small(r, !first, nKeys);
    run_big(r, first);
    run_big(r, !first);
    fprintf(stderr, "run %d of %d done\n", r+1, nRun);
  }
  printf("SQLite %s, %lld keys, 1 KiB values, WAL, synchronous=NORMAL,"
         " median of %d runs\n\n", sqlite3_libversion(), nKeys, nRun);
  printf("| %-38s | %12s | %12s | %5s | %6s |\n", "phase", "plain", "cache",
         "ratio", "target");
  printf("|%s|%s|%s|%s|%s|\n", "----------------------------------------",
         "-------------:", "-------------:", "------:", "-------:");
  for(i=0; i<NPHASE; i++){
    double a = median(aRate[i][0], nRun), b = median(aRate[i][1], nRun);
    char zTarget[16];
    if( aPhase[i].target>0 ){
      snprintf(zTarget, sizeof(zTarget), ">= %.1f", aPhase[i].target);
    }else{
      snprintf(zTarget, sizeof(zTarget), "-");
    }
    printf("| %-38s | %7.0f %-4s | %7.0f %-4s | %5.2f | %6s |\n", aPhase[i].zName,
           a, aPhase[i].zUnit, b, aPhase[i].zUnit, b/a, zTarget);
  }
  return 0;
}
