/*
** cache_ir.c: one kind of cache operation, N times, inside one function,
** for bench/cache_ir.sh to count under callgrind (--toggle-collect=opLoop).
**
**   build/cache_ir EXTENSION DIR OP N [ENTRIES]
**
** Loads EXTENSION (sqlite3_load_extension, entry point from the file name),
** makes DIR/c.db (journal_mode=WAL, synchronous=NORMAL, one connection),
** CREATE VIRTUAL TABLE t USING cache(policy = lru, recency_buffer = 1000000)
** and fills it with ENTRIES (default 4000) keys 'k%08d' of 1 KiB values in
** one transaction; then sets the capacity to the bytes stored, so the cache
** is exactly full.  Only then, in opLoop, N operations of one kind:
**
**   get       SELECT value FROM t WHERE key=? of stored keys in a fixed
**             pseudo-random order (hits), prepared once, stepped and reset;
**             N <= ENTRIES, so the recency of every get stays buffered and
**             nothing is written
**   set       INSERT INTO t(key, value) VALUES(?, ?) of a new key,
**             autocommit: each evicts the least recently used entry
**   set-txn   the same sets, in transactions of 100 (BEGIN and COMMIT
**             inside the loop, so counted)
**   set-used  as set, but every entry was read once (in the same order as
**             get) and that recency flushed before the loop: each eviction
**             takes an entry that has a recency record
**   set-stored  INSERT INTO t(key, value) VALUES(?, ?) of a stored key (in
**             the same order as get), autocommit: each replaces an entry
**             of the same size and evicts none
**
** After the loop it checks what the operations did (hits, or evictions
** and entries, from cache_stats: none evicted by set-stored) and prints N.  Nothing is timed here: the
** count of instructions is the measure.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_BYTES 1024
#define TXN_SETS 100

static void die(sqlite3 *db, const char *zWhat){
  fprintf(stderr, "cache_ir: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

static void exec(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "cache_ir: %s: %s\n", zSql, zErr);
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

static unsigned char aValue[VALUE_BYTES];

static void bindKey(sqlite3_stmt *p, long long i){
  char z[32];
  snprintf(z, sizeof(z), "k%08lld", i);
  sqlite3_bind_text(p, 1, z, -1, SQLITE_TRANSIENT);
}

static void stepDone(sqlite3 *db, sqlite3_stmt *p, int rcWant){
  if( sqlite3_step(p)!=rcWant ) die(db, sqlite3_sql(p));
}

/* The measured loop: N operations of one kind, nothing else.  Not inlined,
** so callgrind can collect exactly it. */
__attribute__((noinline)) long long opLoop(sqlite3 *db, sqlite3_stmt *pGet,
    sqlite3_stmt *pSet, sqlite3_stmt *pBegin, sqlite3_stmt *pCommit,
    int bGet, int bTxn, int bStored, long long nOp, long long nEntry){
  long long i, nByte = 0;
  for(i=0; i<nOp; i++){
    if( bGet ){
      bindKey(pGet, perm(i, nEntry));
      stepDone(db, pGet, SQLITE_ROW);
      nByte += sqlite3_column_bytes(pGet, 0);
      sqlite3_reset(pGet);
    }else{
      if( bTxn && i%TXN_SETS==0 ){ stepDone(db, pBegin, SQLITE_DONE); sqlite3_reset(pBegin); }
      bindKey(pSet, bStored ? perm(i, nEntry) : nEntry + i);
      stepDone(db, pSet, SQLITE_DONE);
      sqlite3_reset(pSet);
      if( bTxn && (i%TXN_SETS==TXN_SETS-1 || i==nOp-1) ){
        stepDone(db, pCommit, SQLITE_DONE); sqlite3_reset(pCommit);
      }
    }
  }
  return nByte;
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  sqlite3_stmt *pGet, *pSet, *pBegin, *pCommit;
  char *zErr = 0, *zPath;
  const char *zOp;
  long long nOp, nEntry = 4000, i, nByte, nEvict0, nHit0;
  int bGet, bTxn, bUsed, bStored;

  if( argc<5 || argc>6 ){
    fprintf(stderr, "usage: cache_ir EXTENSION DIR get|set|set-txn|set-used|set-stored N [ENTRIES]\n");
    return 2;
  }
  zOp = argv[3];
  nOp = atoll(argv[4]);
  if( argc==6 ) nEntry = atoll(argv[5]);
  bGet = strcmp(zOp, "get")==0;
  bTxn = strcmp(zOp, "set-txn")==0;
  bUsed = strcmp(zOp, "set-used")==0;
  bStored = strcmp(zOp, "set-stored")==0;
  if( !bGet && !bTxn && !bUsed && !bStored && strcmp(zOp, "set")!=0 ){
    fprintf(stderr, "cache_ir: unknown operation '%s'\n", zOp);
    return 2;
  }
  if( nOp<1 || nEntry<2 || (bGet && nOp>nEntry) ){
    fprintf(stderr, "cache_ir: need N >= 1, ENTRIES >= 2, and N <= ENTRIES for get\n");
    return 2;
  }
  for(i=0; i<VALUE_BYTES; i++) aValue[i] = (unsigned char)(i*7 + 1);

  zPath = sqlite3_mprintf("%s/c.db", argv[2]);
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) die(db, "open");
  exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, argv[1], 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "cache_ir: load %s: %s\n", argv[1], zErr);
    return 1;
  }
  exec(db, "CREATE VIRTUAL TABLE t USING cache(policy = lru, recency_buffer = 1000000)");
  pGet = prep(db, "SELECT value FROM t WHERE key=?");
  pSet = prep(db, "INSERT INTO t(key, value) VALUES(?, ?)");
  pBegin = prep(db, "BEGIN");
  pCommit = prep(db, "COMMIT");
  sqlite3_bind_blob(pSet, 2, aValue, VALUE_BYTES, SQLITE_STATIC);

  exec(db, "BEGIN");
  for(i=0; i<nEntry; i++){
    bindKey(pSet, i);
    stepDone(db, pSet, SQLITE_DONE);
    sqlite3_reset(pSet);
  }
  exec(db, "COMMIT");
  {
    char *zSql = sqlite3_mprintf("INSERT INTO t(t, value) VALUES('capacity', %lld)",
                                 int1(db, "SELECT bytes FROM cache_stats('t')"));
    exec(db, zSql);
    sqlite3_free(zSql);
  }
  if( bUsed ){
    for(i=0; i<nEntry; i++){
      bindKey(pGet, perm(i, nEntry));
      stepDone(db, pGet, SQLITE_ROW);
      sqlite3_reset(pGet);
    }
    exec(db, "INSERT INTO t(t) VALUES('flush')");
  }
  if( int1(db, "SELECT entries FROM cache_stats('t')")!=nEntry ) die(0, "the fill did not store every entry");
  nEvict0 = int1(db, "SELECT evictions FROM cache_stats('t')");
  nHit0 = int1(db, "SELECT hits FROM cache_stats('t')");

  nByte = opLoop(db, pGet, pSet, pBegin, pCommit, bGet, bTxn, bStored, nOp,
                 nEntry);

  if( bGet ){
    if( nByte!=nOp*VALUE_BYTES ) die(0, "a get did not read its value");
    if( int1(db, "SELECT hits FROM cache_stats('t')")-nHit0!=nOp ) die(0, "gets were not all hits");
  }else if( bStored ){
    if( int1(db, "SELECT evictions FROM cache_stats('t')")!=nEvict0 ) die(0, "a set of a stored key evicted");
    if( int1(db, "SELECT entries FROM cache_stats('t')")!=nEntry ) die(0, "the cache is no longer full");
  }else{
    if( int1(db, "SELECT evictions FROM cache_stats('t')")-nEvict0!=nOp ) die(0, "a set did not evict exactly one entry");
    if( int1(db, "SELECT entries FROM cache_stats('t')")!=nEntry ) die(0, "the cache is no longer full");
  }
  sqlite3_finalize(pGet);
  sqlite3_finalize(pSet);
  sqlite3_finalize(pBegin);
  sqlite3_finalize(pCommit);
  if( sqlite3_close(db)!=SQLITE_OK ) die(db, "close");
  sqlite3_free(zPath);
  printf("%lld\n", nOp);
  return 0;
}
