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
** Two environment variables change the table and the set:
**
**   CACHE_IR_POLICY=fifo   the table is made with policy = fifo
**   CACHE_IR_SET=function  the set is SELECT cache_set('t', ?, ?) instead
**                          of the INSERT (the fill too)
**   CACHE_IR_GET=function  the get is SELECT cache_get('t', ?) instead of
**                          the SELECT
**
** After the loop it checks what the operations did (hits, or evictions
** and entries, from cache_stats: none evicted by set-stored) and prints N.  Nothing is timed here: the
** count of instructions is the measure.
*/
#define BENCH_NAME "cache_ir"
#include "bench_util.h"
#include <string.h>

#define VALUE_BYTES 1024
#define TXN_SETS 100

static unsigned char aValue[VALUE_BYTES];

static int rcSet = SQLITE_DONE;    /* what a set's step returns */

static void stepDone(sqlite3 *db, sqlite3_stmt *p, int rcWant){
  if( sqlite3_step(p)!=rcWant ) benchDie(db, sqlite3_sql(p));
}

/* The measured loop: N operations of one kind, nothing else.  Not inlined,
** so callgrind can collect exactly it. */
__attribute__((noinline)) long long opLoop(sqlite3 *db, sqlite3_stmt *pGet,
    sqlite3_stmt *pSet, sqlite3_stmt *pBegin, sqlite3_stmt *pCommit,
    int bGet, int bTxn, int bStored, long long nOp, long long nEntry){
  long long i, nByte = 0;
  for(i=0; i<nOp; i++){
    if( bGet ){
      benchBindKey(pGet, benchPermute(i, nEntry));
      stepDone(db, pGet, SQLITE_ROW);
      nByte += sqlite3_column_bytes(pGet, 0);
      sqlite3_reset(pGet);
    }else{
      if( bTxn && i%TXN_SETS==0 ){ stepDone(db, pBegin, SQLITE_DONE); sqlite3_reset(pBegin); }
      benchBindKey(pSet, bStored ? benchPermute(i, nEntry) : nEntry + i);
      stepDone(db, pSet, rcSet);
      sqlite3_reset(pSet);
      if( bTxn && (i%TXN_SETS==TXN_SETS-1 || i==nOp-1) ){
        stepDone(db, pCommit, SQLITE_DONE); sqlite3_reset(pCommit);
      }
    }
  }
  return nByte;
}

int main(int argc, char **argv){
  sqlite3 *db;
  sqlite3_stmt *pGet, *pSet, *pBegin, *pCommit;
  char *zPath;
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
  db = benchOpenWal(zPath);
  benchLoad(db, argv[1]);
  {
    const char *zPolicy = getenv("CACHE_IR_POLICY");
    const char *zSet = getenv("CACHE_IR_SET");
    char *zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE t USING cache(policy = %s,"
        " recency_buffer = 1000000)", zPolicy && zPolicy[0] ? zPolicy : "lru");
    benchExec(db, zSql);
    sqlite3_free(zSql);
    if( zSet && strcmp(zSet, "function")==0 ){
      pSet = benchPrepare(db, "SELECT cache_set('t', ?, ?)");
      rcSet = SQLITE_ROW;
    }else{
      pSet = benchPrepare(db, "INSERT INTO t(key, value) VALUES(?, ?)");
    }
  }
  pGet = benchPrepare(db, getenv("CACHE_IR_GET")
                          && strcmp(getenv("CACHE_IR_GET"), "function")==0
                          ? "SELECT cache_get('t', ?)"
                          : "SELECT value FROM t WHERE key=?");
  pBegin = benchPrepare(db, "BEGIN");
  pCommit = benchPrepare(db, "COMMIT");
  sqlite3_bind_blob(pSet, 2, aValue, VALUE_BYTES, SQLITE_STATIC);

  benchExec(db, "BEGIN");
  for(i=0; i<nEntry; i++){
    benchBindKey(pSet, i);
    stepDone(db, pSet, rcSet);
    sqlite3_reset(pSet);
  }
  benchExec(db, "COMMIT");
  {
    char *zSql = sqlite3_mprintf(
        "INSERT INTO t(t, value) VALUES('capacity', %lld)",
        benchInt64(db, "SELECT bytes FROM cache_stats('t')"));
    benchExec(db, zSql);
    sqlite3_free(zSql);
  }
  if( bUsed ){
    for(i=0; i<nEntry; i++){
      benchBindKey(pGet, benchPermute(i, nEntry));
      stepDone(db, pGet, SQLITE_ROW);
      sqlite3_reset(pGet);
    }
    benchExec(db, "INSERT INTO t(t) VALUES('flush')");
  }
  if( benchInt64(db, "SELECT entries FROM cache_stats('t')")!=nEntry ){
    benchDie(0, "the fill did not store every entry");
  }
  nEvict0 = benchInt64(db, "SELECT evictions FROM cache_stats('t')");
  nHit0 = benchInt64(db, "SELECT hits FROM cache_stats('t')");

  nByte = opLoop(db, pGet, pSet, pBegin, pCommit, bGet, bTxn, bStored, nOp,
                 nEntry);

  if( bGet ){
    if( nByte!=nOp*VALUE_BYTES ) benchDie(0, "a get did not read its value");
    /* (fifo counts no hits: NULL) */
    if( benchInt64(db, "SELECT count(*) FROM cache_stats('t') WHERE hits IS NULL")==0
     && benchInt64(db, "SELECT hits FROM cache_stats('t')")-nHit0!=nOp ){
      benchDie(0, "gets were not all hits");
    }
  }else if( bStored ){
    if( benchInt64(db, "SELECT evictions FROM cache_stats('t')")!=nEvict0 ){
      benchDie(0, "a set of a stored key evicted");
    }
    if( benchInt64(db, "SELECT entries FROM cache_stats('t')")!=nEntry ){
      benchDie(0, "the cache is no longer full");
    }
  }else{
    if( benchInt64(db, "SELECT evictions FROM cache_stats('t')")-nEvict0!=nOp ){
      benchDie(0, "a set did not evict exactly one entry");
    }
    if( benchInt64(db, "SELECT entries FROM cache_stats('t')")!=nEntry ){
      benchDie(0, "the cache is no longer full");
    }
  }
  sqlite3_finalize(pGet);
  sqlite3_finalize(pSet);
  sqlite3_finalize(pBegin);
  sqlite3_finalize(pCommit);
  if( sqlite3_close(db)!=SQLITE_OK ) benchDie(db, "close");
  sqlite3_free(zPath);
  printf("%lld\n", nOp);
  return 0;
}
