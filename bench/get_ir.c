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
#define BENCH_NAME "get_ir"
#include "bench_util.h"
#include <string.h>

#define WARM_GETS 16

/* Not benchOpenWal: the path is freed before the pragmas run.  malloc's
** instructions inside opLoop depend on the heap's layout, and this order
** is the one the counts in docs/performance.md were measured with. */
static sqlite3 *openDb(const char *zDir, const char *zExt){
  sqlite3 *db = 0;
  char *zPath = sqlite3_mprintf("%s/g.db", zDir);
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) benchDie(db, "open");
  sqlite3_free(zPath);
  benchExec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  benchLoad(db, zExt);
  return db;
}

static int fill(const char *zExt, const char *zDir, long long nEntry,
                int nValue){
  sqlite3 *db = openDb(zDir, zExt);
  sqlite3_stmt *pSet, *pKv;
  unsigned char *aValue = malloc((size_t)nValue);
  long long i;
  if( aValue==0 ) benchDie(0, "out of memory");
  benchExec(db, "CREATE VIRTUAL TABLE t USING cache(policy = lru,"
                " recency_buffer = 1000000, autoflush = off)");
  benchExec(db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
  pSet = benchPrepare(db, "INSERT INTO t(key, value) VALUES(?1, ?2)");
  pKv = benchPrepare(db, "INSERT INTO kv(k, v) VALUES(?1, ?2)");
  benchExec(db, "BEGIN");
  for(i=0; i<nEntry; i++){
    int j;
    for(j=0; j<nValue; j++) aValue[j] = (unsigned char)(i*31 + j*7 + 1);
    benchBindKey(pSet, i);
    benchBindKey(pKv, i);
    sqlite3_bind_blob(pSet, 2, aValue, nValue, SQLITE_STATIC);
    sqlite3_bind_blob(pKv, 2, aValue, nValue, SQLITE_STATIC);
    if( sqlite3_step(pSet)!=SQLITE_DONE ) benchDie(db, "set");
    if( sqlite3_step(pKv)!=SQLITE_DONE ) benchDie(db, "kv insert");
    sqlite3_reset(pSet);
    sqlite3_reset(pKv);
    if( i%100000==99999 ){ benchExec(db, "COMMIT"); benchExec(db, "BEGIN"); }
  }
  benchExec(db, "COMMIT");
  sqlite3_finalize(pSet);
  sqlite3_finalize(pKv);
  benchExec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  if( sqlite3_close(db)!=SQLITE_OK ) benchDie(db, "close");
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
    benchBindKey(pGet, benchPermute(i, nEntry));
    if( sqlite3_step(pGet)!=SQLITE_ROW ) benchDie(db, sqlite3_sql(pGet));
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
    pGet = benchPrepare(db, "SELECT v FROM kv WHERE k=?1");
  }else if( strcmp(zForm, "select")==0 ){
    pGet = benchPrepare(db, "SELECT value FROM t WHERE key=?1");
  }else if( strcmp(zForm, "func")==0 ){
    pGet = benchPrepare(db, "SELECT cache_get('t', ?1)");
  }else{
    fprintf(stderr, "get_ir: unknown form '%s'\n", zForm);
    return 2;
  }
  if( nOp<1 || nOp+WARM_GETS>nEntry ){
    fprintf(stderr, "get_ir: need 1 <= N <= ENTRIES-%d\n", WARM_GETS);
    return 2;
  }
  nValue = benchInt64(db, "SELECT length(v) FROM kv LIMIT 1");
  if( bCache ) nHit0 = benchInt64(db, "SELECT hits FROM cache_stats('t')");
  if( opLoop(db, pGet, 0, WARM_GETS, nEntry)!=WARM_GETS*nValue ){
    benchDie(0, "a warm-up get did not read its value");
  }
  nByte = opLoop(db, pGet, WARM_GETS, nOp, nEntry);
  if( nByte!=nOp*nValue ) benchDie(0, "a get did not read its value");
  if( bCache && benchInt64(db, "SELECT hits FROM cache_stats('t')")-nHit0
                  != nOp+WARM_GETS ){
    benchDie(0, "gets were not all counted as hits");
  }
  sqlite3_finalize(pGet);
  if( sqlite3_close(db)!=SQLITE_OK ) benchDie(db, "close");
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
