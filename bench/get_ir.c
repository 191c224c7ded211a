/*
** get_ir.c: gets of one form, N times, inside one function, for
** bench/get_ir.sh to count under callgrind (--toggle-collect=opLoop).
**
**   build/get_ir fill EXTENSION DIR ENTRIES VALUE_BYTES
**   build/get_ir run EXTENSION DIR FORM N ENTRIES
**
** fill makes DIR/g.db (journal_mode=WAL, synchronous=NORMAL) with a cache
** table t (policy = lru, autoflush = off, recency_buffer = 1000000: a run's
** uses stay buffered and are dropped at close, so every run reads the same
** file) and a plain table kv(k TEXT PRIMARY KEY, v BLOB), each holding
** ENTRIES keys 'k%08d' with the same VALUE_BYTES-byte values.  It runs
** outside valgrind.
**
** run opens that file, loads EXTENSION, prepares the get of FORM
**
**   plain   SELECT v FROM kv WHERE k=?1
**   select  SELECT value FROM t WHERE key=?1
**   func    SELECT cache_get('t', ?1)
**
** does 16 gets to warm up (the statements acorn prepares once per
** connection), then in opLoop N gets of stored keys in a fixed
** pseudo-random order, each bound, stepped and reset.  After the loop it
** checks that every get read its value and, for the cache, counted a hit;
** prints N.  Nothing is timed: the count of instructions is the measure.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARM_GETS 16

static void die(sqlite3 *db, const char *zWhat){
  fprintf(stderr, "get_ir: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "get_ir: %s: %s\n", zSql, zErr);
    exit(1);
  }
}

static sqlite3_stmt *prep(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &p, 0)!=SQLITE_OK ) die(db, zSql);
  return p;
}

static long long int1(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = prep(db, zSql);
  long long v;
  if( sqlite3_step(p)!=SQLITE_ROW ) die(db, zSql);
  v = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  return v;
}

/* The i-th key of a fixed permutation of 0..n-1 (i*step mod n, step coprime
** to n), so gets land all over the table and every key is distinct. */
static long long perm(long long i, long long n){
  long long step = 2654435761LL % n;
  while( step<2 ) step += 1;
  for(;;){
    long long a = step, b = n;
    while( b ){ long long t = a % b; a = b; b = t; }
    if( a==1 ) break;
    step++;
  }
  return (i * step) % n;
}

static void bindKey(sqlite3_stmt *p, int i, long long k){
  char z[32];
  snprintf(z, sizeof(z), "k%08lld", k);
  sqlite3_bind_text(p, i, z, -1, SQLITE_TRANSIENT);
}

static sqlite3 *openDb(const char *zDir, const char *zExt){
  sqlite3 *db = 0;
  char *zErr = 0;
  char *zPath = sqlite3_mprintf("%s/g.db", zDir);
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) die(db, "open");
  sqlite3_free(zPath);
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "get_ir: load %s: %s\n", zExt, zErr);
    exit(1);
  }
  return db;
}

static int fill(const char *zExt, const char *zDir, long long nEntry,
                int nValue){
  sqlite3 *db = openDb(zDir, zExt);
  sqlite3_stmt *pSet, *pKv;
  unsigned char *aValue = malloc((size_t)nValue);
  long long i;
  if( aValue==0 ) die(0, "out of memory");
  exec(db, "CREATE VIRTUAL TABLE t USING cache(policy = lru,"
           " recency_buffer = 1000000, autoflush = off)");
  exec(db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
  pSet = prep(db, "INSERT INTO t(key, value) VALUES(?1, ?2)");
  pKv = prep(db, "INSERT INTO kv(k, v) VALUES(?1, ?2)");
  exec(db, "BEGIN");
  for(i=0; i<nEntry; i++){
    int j;
    for(j=0; j<nValue; j++) aValue[j] = (unsigned char)(i*31 + j*7 + 1);
    bindKey(pSet, 1, i);
    bindKey(pKv, 1, i);
    sqlite3_bind_blob(pSet, 2, aValue, nValue, SQLITE_STATIC);
    sqlite3_bind_blob(pKv, 2, aValue, nValue, SQLITE_STATIC);
    if( sqlite3_step(pSet)!=SQLITE_DONE ) die(db, "set");
    if( sqlite3_step(pKv)!=SQLITE_DONE ) die(db, "kv insert");
    sqlite3_reset(pSet);
    sqlite3_reset(pKv);
    if( i%100000==99999 ){ exec(db, "COMMIT"); exec(db, "BEGIN"); }
  }
  exec(db, "COMMIT");
  sqlite3_finalize(pSet);
  sqlite3_finalize(pKv);
  exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  if( sqlite3_close(db)!=SQLITE_OK ) die(db, "close");
  free(aValue);
  printf("%lld\n", nEntry);
  return 0;
}

/* The measured loop: N gets, nothing else.  Not inlined, so callgrind can
** collect exactly it. */
__attribute__((noinline)) long long opLoop(sqlite3 *db, sqlite3_stmt *pGet,
                                           long long iFirst, long long nOp,
                                           long long nEntry){
  long long i, nByte = 0;
  for(i=iFirst; i<iFirst+nOp; i++){
    bindKey(pGet, 1, perm(i, nEntry));
    if( sqlite3_step(pGet)!=SQLITE_ROW ) die(db, sqlite3_sql(pGet));
    nByte += sqlite3_column_bytes(pGet, 0);
    sqlite3_reset(pGet);
  }
  return nByte;
}

static int run(const char *zExt, const char *zDir, const char *zForm,
               long long nOp, long long nEntry){
  sqlite3 *db = openDb(zDir, zExt);
  sqlite3_stmt *pGet;
  long long nByte, nHit0 = 0, nValue;
  int bCache = strcmp(zForm, "plain")!=0;
  if( strcmp(zForm, "plain")==0 ){
    pGet = prep(db, "SELECT v FROM kv WHERE k=?1");
  }else if( strcmp(zForm, "select")==0 ){
    pGet = prep(db, "SELECT value FROM t WHERE key=?1");
  }else if( strcmp(zForm, "func")==0 ){
    pGet = prep(db, "SELECT cache_get('t', ?1)");
  }else{
    fprintf(stderr, "get_ir: unknown form '%s'\n", zForm);
    return 2;
  }
  if( nOp<1 || nOp+WARM_GETS>nEntry ){
    fprintf(stderr, "get_ir: need 1 <= N <= ENTRIES-%d\n", WARM_GETS);
    return 2;
  }
  nValue = int1(db, "SELECT length(v) FROM kv LIMIT 1");
  if( bCache ) nHit0 = int1(db, "SELECT hits FROM cache_stats('t')");
  if( opLoop(db, pGet, 0, WARM_GETS, nEntry)!=WARM_GETS*nValue ){
    die(0, "a warm-up get did not read its value");
  }
  nByte = opLoop(db, pGet, WARM_GETS, nOp, nEntry);
  if( nByte!=nOp*nValue ) die(0, "a get did not read its value");
  if( bCache && int1(db, "SELECT hits FROM cache_stats('t')")-nHit0
                != nOp+WARM_GETS ){
    die(0, "gets were not all counted as hits");
  }
  sqlite3_finalize(pGet);
  if( sqlite3_close(db)!=SQLITE_OK ) die(db, "close");
  printf("%lld\n", nOp);
  return 0;
}

int main(int argc, char **argv){
  if( argc==6 && strcmp(argv[1], "fill")==0 ){
    return fill(argv[2], argv[3], atoll(argv[4]), atoi(argv[5]));
  }
  if( argc==7 && strcmp(argv[1], "run")==0 ){
    return run(argv[2], argv[3], argv[4], atoll(argv[5]), atoll(argv[6]));
  }
  fprintf(stderr, "usage: get_ir fill EXTENSION DIR ENTRIES VALUE_BYTES\n"
                  "       get_ir run EXTENSION DIR plain|select|func N ENTRIES\n");
  return 2;
}
