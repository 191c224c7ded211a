/*
** cache_bench.c: the cache virtual table against a plain table, in one run.
**
**   build/cache_bench EXTENSION DIR [RUNS] [KEYS]
**
** Both sides: a file in DIR, journal_mode=WAL, synchronous=NORMAL, one
** connection, statements prepared once (bind, step, reset).  The plain side
** is kv(k TEXT PRIMARY KEY, v BLOB); the cache side is
** CREATE VIRTUAL TABLE c USING cache (default options; CACHE_OPTS in the
** environment adds some).  Everything runs RUNS times; the table shows the
** median rates and the median of the per-run cache/plain ratios.
**
** Both databases are open at once and every phase runs in 10 slices,
** alternating plain and cache (the one that goes first alternating too),
** with the same key sequence on both sides; a side's rate is its ops over
** the sum of its slices' time.  This keeps background writeback of one
** side's data from landing on the other's measurement.
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

static unsigned long long rnd(unsigned long long *pState){
  unsigned long long x = *pState;
  x ^= x<<13; x ^= x>>7; x ^= x<<17;
  return *pState = x;
}

static void key(char *z, long long i){ snprintf(z, 32, "key%09lld", i); }

/* One side of the comparison: its connection, statements and key stream. */
typedef struct side side;
struct side {
  sqlite3 *db;
  int bCache;
  sqlite3_stmt *pSet, *pGet;
  unsigned long long rng;
  long long iNext;           /* next sequential key */
  double t;                  /* seconds spent in the current phase */
};

static void side_open(side *p, int bCache, long long nCapacity){
  memset(p, 0, sizeof(*p));
  p->bCache = bCache;
  p->db = open_db(bCache ? "cache.db" : "plain.db", bCache, nCapacity);
  p->pSet = prep(p->db, bCache
      ? "INSERT INTO c(key, value) VALUES(?1, ?2)"
      : "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)");
  p->pGet = prep(p->db, bCache ? "SELECT value FROM c WHERE key=?1"
                               : "SELECT v FROM kv WHERE k=?1");
}

static void side_close(side *p){
  sqlite3_finalize(p->pSet);
  sqlite3_finalize(p->pGet);
  sqlite3_close(p->db);
}

/* n sets in transactions of nTxn (0: autocommit): sequential keys if
** nSpace is 0, else random keys out of [0, nSpace).  Adds to p->t. */
static void do_sets(side *p, long long n, int nTxn, const unsigned char *aVal,
                    int nVal, long long nSpace){
  char z[32];
  long long i;
  double t0 = now_s();
  for(i=0; i<n; i++){
    if( nTxn && i%nTxn==0 ) exec(p->db, "BEGIN");
    key(z, nSpace ? (long long)(rnd(&p->rng)%(unsigned long long)nSpace)
                  : p->iNext++);
    sqlite3_bind_text(p->pSet, 1, z, -1, SQLITE_STATIC);
    sqlite3_bind_blob(p->pSet, 2, aVal, nVal, SQLITE_STATIC);
    check(sqlite3_step(p->pSet), p->db, "set");
    sqlite3_reset(p->pSet);
    if( nTxn && (i%nTxn==nTxn-1 || i==n-1) ) exec(p->db, "COMMIT");
  }
  p->t += now_s()-t0;
}

/* n random gets of keys out of [0, nKeys); every one must be found. */
static void do_gets(side *p, long long nKeys, long long n){
  char z[32];
  long long i, nFound = 0, nBytes = 0;
  double t0 = now_s();
  for(i=0; i<n; i++){
    key(z, (long long)(rnd(&p->rng)%(unsigned long long)nKeys));
    sqlite3_bind_text(p->pGet, 1, z, -1, SQLITE_STATIC);
    if( sqlite3_step(p->pGet)==SQLITE_ROW ){
      const void *v = sqlite3_column_blob(p->pGet, 0);
      nBytes += sqlite3_column_bytes(p->pGet, 0) + (v!=0);
      nFound++;
    }
    sqlite3_reset(p->pGet);
  }
  p->t += now_s()-t0;
  if( nFound!=n ){
    fprintf(stderr, "cache_bench: %lld of %lld gets found\n", nFound, n);
    exit(1);
  }
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
#define NSLICE 10
enum { P_LOAD, P_GET, P_SETAUTO, P_SETTXN, P_BIGW, P_BIGR, P_BIGP, NPHASE };
static double aRate[NPHASE][2][MAXRUN];
static char zStats[300];

/* Run a phase on both sides in NSLICE interleaved slices, the side that
** goes first alternating, so that background I/O and noise fall on both
** alike.  X is the statement doing one slice on side S. */
#define INTERLEAVE(A, X) do{ \
    int iSl_; side *S; \
    (A)[0].t = (A)[1].t = 0; \
    for(iSl_=0; iSl_<NSLICE; iSl_++){ \
      S = &(A)[iSl_%2]; X; \
      S = &(A)[1-iSl_%2]; X; \
    } \
  }while(0)

static void run_small(int iRun, long long nKeys){
  static unsigned char aVal[1024];
  long long nData = nKeys*(1024+12);
  side a[2];
  int i;
  for(i=0; i<1024; i++) aVal[i] = (unsigned char)(i*7+iRun);
  side_open(&a[0], 0, 0);
  side_open(&a[1], 1, nData*2);

  INTERLEAVE(a, do_sets(S, nKeys/NSLICE, 1000, aVal, 1024, 0));
  for(i=0; i<2; i++) aRate[P_LOAD][i][iRun] = nKeys/a[i].t;

  a[0].rng = a[1].rng = 88172645463325252ULL + (unsigned)iRun;
  INTERLEAVE(a, do_gets(S, nKeys, 2*nKeys/NSLICE));
  {
    /* The gets are charged with writing their recency: the cache's buffer
    ** is flushed inside the timed part. */
    double t0 = now_s();
    exec(a[1].db, "INSERT INTO c(c) VALUES('flush')");
    if( getenv("CACHE_BENCH_VERBOSE") ){
      fprintf(stderr, "gets: plain %.2f s, cache %.2f s + final flush %.2f s\n",
              a[0].t, a[1].t, now_s()-t0);
    }
    a[1].t += now_s()-t0;
  }
  for(i=0; i<2; i++) aRate[P_GET][i][iRun] = 2*nKeys/a[i].t;

  {
    char *zSql = sqlite3_mprintf(
        "INSERT INTO c(c, value) VALUES('capacity', %lld)", nData/2);
    exec(a[1].db, zSql);
    sqlite3_free(zSql);
  }
  a[0].rng = a[1].rng = 1181783497276652981ULL + (unsigned)iRun;
  INTERLEAVE(a, do_sets(S, nKeys/5/NSLICE, 0, aVal, 1024, nKeys));
  for(i=0; i<2; i++) aRate[P_SETAUTO][i][iRun] = nKeys/5/a[i].t;
  INTERLEAVE(a, do_sets(S, nKeys/NSLICE, 1000, aVal, 1024, nKeys));
  for(i=0; i<2; i++) aRate[P_SETTXN][i][iRun] = nKeys/a[i].t;

  if( iRun==0 ){
    /* Show that the cache did the work: evictions, capacity held. */
    sqlite3_stmt *p = prep(a[1].db, "SELECT capacity, entries, bytes, hits,"
                                    " misses, evictions FROM cache_stats('c')");
    check(sqlite3_step(p), a[1].db, "cache_stats");
    snprintf(zStats, sizeof(zStats), "cache_stats after run 1: capacity %lld,"
             " entries %lld, bytes %lld, hits %lld, misses %lld, evictions %lld",
             sqlite3_column_int64(p, 0), sqlite3_column_int64(p, 1),
             sqlite3_column_int64(p, 2), sqlite3_column_int64(p, 3),
             sqlite3_column_int64(p, 4), sqlite3_column_int64(p, 5));
    sqlite3_finalize(p);
  }
  side_close(&a[0]);
  side_close(&a[1]);
}

#define BIG (1<<20)
#define NBIG 64
#define PIECE 16384

/* 1 MiB values: NBIG/NSLICE-ish values per slice, both sides interleaved. */
static void big_write(side *p, int i0, int n, const unsigned char *aVal){
  p->iNext = i0;
  do_sets(p, n, 0, aVal, BIG, 0);
}

static void big_read(side *p, int i0, int n, long long *pBytes){
  char z[32];
  int i;
  double t0 = now_s();
  for(i=i0; i<i0+n; i++){
    key(z, i);
    sqlite3_bind_text(p->pGet, 1, z, -1, SQLITE_STATIC);
    check(sqlite3_step(p->pGet), p->db, "read whole");
    if( sqlite3_column_blob(p->pGet, 0) ) *pBytes += sqlite3_column_bytes(p->pGet, 0);
    sqlite3_reset(p->pGet);
  }
  p->t += now_s()-t0;
}

static void big_pieces(side *p, int i0, int n, unsigned char *aBuf,
                       long long *pBytes){
  char z[32];
  int i, off;
  double t0 = now_s();
  if( p->bCache ){
    sqlite3_stmt *q = prep(p->db, "SELECT cache_read('c', ?1, ?2, 16384)");
    for(i=i0; i<i0+n; i++){
      key(z, i);
      sqlite3_bind_text(q, 1, z, -1, SQLITE_STATIC);
      for(off=0; off<BIG; off+=PIECE){
        sqlite3_bind_int(q, 2, off);
        check(sqlite3_step(q), p->db, "cache_read");
        if( sqlite3_column_blob(q, 0) ) *pBytes += sqlite3_column_bytes(q, 0);
        sqlite3_reset(q);
      }
    }
    sqlite3_finalize(q);
  }else{
    sqlite3_stmt *q = prep(p->db, "SELECT rowid FROM kv WHERE k=?1");
    for(i=i0; i<i0+n; i++){
      sqlite3_int64 id;
      key(z, i);
      sqlite3_bind_text(q, 1, z, -1, SQLITE_STATIC);
      check(sqlite3_step(q), p->db, "rowid");
      id = sqlite3_column_int64(q, 0);
      sqlite3_reset(q);
      for(off=0; off<BIG; off+=PIECE){
        sqlite3_blob *pBlob = 0;
        check(sqlite3_blob_open(p->db, "main", "kv", "v", id, 0, &pBlob),
              p->db, "blob_open");
        check(sqlite3_blob_read(pBlob, aBuf, PIECE, off), p->db, "blob_read");
        sqlite3_blob_close(pBlob);
        *pBytes += PIECE;
      }
    }
    sqlite3_finalize(q);
  }
  p->t += now_s()-t0;
}

static void run_big(int iRun){
  unsigned char *aVal = malloc(BIG), *aBuf = malloc(PIECE);
  unsigned long long r = 42 + (unsigned)iRun;
  long long aBytes[2] = {0, 0};
  side a[2];
  int i, n = NBIG/8;
  for(i=0; i<BIG; i++) aVal[i] = (unsigned char)(rnd(&r)>>24);
  side_open(&a[0], 0, 0);
  side_open(&a[1], 1, 256LL<<20);
  a[0].t = a[1].t = 0;
  for(i=0; i<8; i++){
    big_write(&a[i%2], i*n, n, aVal);
    big_write(&a[1-i%2], i*n, n, aVal);
  }
  for(i=0; i<2; i++) aRate[P_BIGW][i][iRun] = NBIG*(double)BIG/1e6/a[i].t;
  a[0].t = a[1].t = 0;
  for(i=0; i<8; i++){
    big_read(&a[i%2], i*n, n, &aBytes[i%2]);
    big_read(&a[1-i%2], i*n, n, &aBytes[1-i%2]);
  }
  for(i=0; i<2; i++) aRate[P_BIGR][i][iRun] = aBytes[i]/1e6/a[i].t;
  a[0].t = a[1].t = 0;
  aBytes[0] = aBytes[1] = 0;
  for(i=0; i<8; i++){
    big_pieces(&a[i%2], i*n, n, aBuf, &aBytes[i%2]);
    big_pieces(&a[1-i%2], i*n, n, aBuf, &aBytes[1-i%2]);
  }
  for(i=0; i<2; i++) aRate[P_BIGP][i][iRun] = aBytes[i]/1e6/a[i].t;
  side_close(&a[0]);
  side_close(&a[1]);
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
    run_small(r, nKeys);
    run_big(r);
    fprintf(stderr, "run %d of %d, plain/cache:", r+1, nRun);
    for(i=0; i<NPHASE; i++){
      fprintf(stderr, " %.0f/%.0f", aRate[i][0][r], aRate[i][1][r]);
    }
    fprintf(stderr, "\n");
  }
  printf("SQLite %s, %lld keys, 1 KiB values, WAL, synchronous=NORMAL,"
         " median of %d runs; ratio = median of the per-run cache/plain"
         " ratios\n\n", sqlite3_libversion(), nKeys, nRun);
  printf("| %-38s | %12s | %12s | %5s | %6s |\n", "phase", "plain", "cache",
         "ratio", "target");
  printf("|%s|%s|%s|%s|%s|\n", "----------------------------------------",
         "-------------:", "-------------:", "------:", "-------:");
  for(i=0; i<NPHASE; i++){
    double aRatio[MAXRUN];
    double a, b;
    for(r=0; r<nRun; r++) aRatio[r] = aRate[i][1][r]/aRate[i][0][r];
    a = median(aRate[i][0], nRun);
    b = median(aRate[i][1], nRun);
    char zTarget[16];
    if( aPhase[i].target>0 ){
      snprintf(zTarget, sizeof(zTarget), ">= %.1f", aPhase[i].target);
    }else{
      snprintf(zTarget, sizeof(zTarget), "-");
    }
    printf("| %-38s | %7.0f %-4s | %7.0f %-4s | %5.2f | %6s |\n", aPhase[i].zName,
           a, aPhase[i].zUnit, b, aPhase[i].zUnit, median(aRatio, nRun), zTarget);
  }
  printf("\n%s\n", zStats);
  return 0;
}
