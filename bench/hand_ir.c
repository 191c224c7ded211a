/*
** hand_ir.c: bench/cache_ir.c's operations on a FIFO cache written by hand
** in plain SQLite (the b1 side of bench/readthrough.c), for bench/cache_ir.sh
** to count under callgrind (--toggle-collect=opLoop) next to the cache
** table's.
**
**   build/hand_ir DIR OP N [ENTRIES]
**
** Makes DIR/h.db (journal_mode=WAL, synchronous=NORMAL, one connection)
** with kv(k TEXT PRIMARY KEY, v BLOB), fills it with ENTRIES (default 4000)
** keys 'k%08d' of 1 KiB values in one transaction, and takes the bytes
** stored (length(k) + length(v) of every row) as the capacity, so the cache
** is exactly full.  Only then, in opLoop, N operations of one kind:
**
**   get       SELECT v FROM kv WHERE k=? of stored keys in cache_ir's
**             order (hits), prepared once, stepped and reset
**   set       of a new key, autocommit: BEGIN IMMEDIATE, INSERT INTO
**             kv(k, v) VALUES(?, ?), then, while the total (kept in the
**             process) is over the capacity, SELECT rowid,
**             length(k)+length(v) FROM kv ORDER BY rowid LIMIT 1 and
**             DELETE FROM kv WHERE rowid=? of it, COMMIT
**   set-txn   the same sets in transactions of 100 (BEGIN and COMMIT
**             inside the loop, counted), without a transaction each
**
** After the loop it checks what the operations did (every get read its
** value; every set evicted exactly one row and the table still holds
** ENTRIES rows) and prints N.  Nothing is timed here.
*/
#define BENCH_NAME "hand_ir"
#include "bench_util.h"

#include <string.h>

#define VALUE_BYTES 1024
#define TXN_SETS 100

static unsigned char aValue[VALUE_BYTES];

typedef struct hand hand;
struct hand {
  sqlite3 *db;
  sqlite3_stmt *pGet, *pSet, *pOldest, *pEvict, *pBegin, *pBeginImm, *pCommit;
  long long nTotal, nCapacity, nEvicted;
};

static void stepDone(sqlite3 *db, sqlite3_stmt *p, int rcWant){
  if( sqlite3_step(p)!=rcWant ) benchDie(db, sqlite3_sql(p));
  if( rcWant==SQLITE_DONE ) sqlite3_reset(p);
}

/* A set of key number iKey with the evictions it needs (bOwn: in a
** transaction of its own). */
static void handSet(hand *h, long long iKey, int bOwn){
  if( bOwn ) stepDone(h->db, h->pBeginImm, SQLITE_DONE);
  benchBindKey(h->pSet, iKey);
  stepDone(h->db, h->pSet, SQLITE_DONE);
  h->nTotal += 9 + VALUE_BYTES;       /* the key 'k%08d' and the value */
  while( h->nTotal>h->nCapacity ){
    stepDone(h->db, h->pOldest, SQLITE_ROW);
    sqlite3_bind_int64(h->pEvict, 1, sqlite3_column_int64(h->pOldest, 0));
    h->nTotal -= sqlite3_column_int64(h->pOldest, 1);
    sqlite3_reset(h->pOldest);
    stepDone(h->db, h->pEvict, SQLITE_DONE);
    h->nEvicted++;
  }
  if( bOwn ) stepDone(h->db, h->pCommit, SQLITE_DONE);
}

/* The measured loop: N operations of one kind, nothing else.  Not inlined,
** so callgrind can collect exactly it. */
__attribute__((noinline)) long long opLoop(hand *h, int bGet, int bTxn,
                                           long long nOp, long long nEntry){
  long long i, nByte = 0;
  for(i=0; i<nOp; i++){
    if( bGet ){
      benchBindKey(h->pGet, benchPermute(i, nEntry));
      stepDone(h->db, h->pGet, SQLITE_ROW);
      nByte += sqlite3_column_bytes(h->pGet, 0);
      sqlite3_reset(h->pGet);
    }else{
      if( bTxn && i%TXN_SETS==0 ) stepDone(h->db, h->pBegin, SQLITE_DONE);
      handSet(h, nEntry + i, !bTxn);
      if( bTxn && (i%TXN_SETS==TXN_SETS-1 || i==nOp-1) ){
        stepDone(h->db, h->pCommit, SQLITE_DONE);
      }
    }
  }
  return nByte;
}

int main(int argc, char **argv){
  hand h;
  char *zPath;
  const char *zOp;
  long long nOp, nEntry = 4000, i, nByte;
  int bGet, bTxn;
  if( argc<4 || argc>5 ){
    fprintf(stderr, "usage: hand_ir DIR get|set|set-txn N [ENTRIES]\n");
    return 2;
  }
  zOp = argv[2];
  nOp = atoll(argv[3]);
  if( argc==5 ) nEntry = atoll(argv[4]);
  bGet = strcmp(zOp, "get")==0;
  bTxn = strcmp(zOp, "set-txn")==0;
  if( !bGet && !bTxn && strcmp(zOp, "set")!=0 ){
    fprintf(stderr, "hand_ir: unknown operation '%s'\n", zOp);
    return 2;
  }
  if( nOp<1 || nEntry<2 || (bGet && nOp>nEntry) ){
    fprintf(stderr, "hand_ir: need N >= 1, ENTRIES >= 2, and N <= ENTRIES for get\n");
    return 2;
  }
  for(i=0; i<VALUE_BYTES; i++) aValue[i] = (unsigned char)(i*7 + 1);
  memset(&h, 0, sizeof(h));
  zPath = sqlite3_mprintf("%s/h.db", argv[1]);
  h.db = benchOpenWal(zPath);
  benchExec(h.db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
  h.pGet = benchPrepare(h.db, "SELECT v FROM kv WHERE k=?");
  h.pSet = benchPrepare(h.db, "INSERT INTO kv(k, v) VALUES(?, ?)");
  h.pOldest = benchPrepare(h.db, "SELECT rowid, length(k)+length(v) FROM kv"
                                  " ORDER BY rowid LIMIT 1");
  h.pEvict = benchPrepare(h.db, "DELETE FROM kv WHERE rowid=?");
  h.pBegin = benchPrepare(h.db, "BEGIN");
  h.pBeginImm = benchPrepare(h.db, "BEGIN IMMEDIATE");
  h.pCommit = benchPrepare(h.db, "COMMIT");
  sqlite3_bind_blob(h.pSet, 2, aValue, VALUE_BYTES, SQLITE_STATIC);
  benchExec(h.db, "BEGIN");
  for(i=0; i<nEntry; i++){
    benchBindKey(h.pSet, i);
    stepDone(h.db, h.pSet, SQLITE_DONE);
  }
  benchExec(h.db, "COMMIT");
  h.nCapacity = h.nTotal = benchInt64(h.db,
      "SELECT sum(length(k)+length(v)) FROM kv");
  if( h.nTotal!=nEntry*(9 + VALUE_BYTES) ){
    benchDie(0, "the keys are not 9 bytes each");
  }

  nByte = opLoop(&h, bGet, bTxn, nOp, nEntry);

  if( bGet ){
    if( nByte!=nOp*VALUE_BYTES ) benchDie(0, "a get did not read its value");
  }else{
    if( h.nEvicted!=nOp ) benchDie(0, "a set did not evict exactly one row");
    if( benchInt64(h.db, "SELECT count(*) FROM kv")!=nEntry ){
      benchDie(0, "the cache is no longer full");
    }
  }
  sqlite3_finalize(h.pGet);
  sqlite3_finalize(h.pSet);
  sqlite3_finalize(h.pOldest);
  sqlite3_finalize(h.pEvict);
  sqlite3_finalize(h.pBegin);
  sqlite3_finalize(h.pBeginImm);
  sqlite3_finalize(h.pCommit);
  if( sqlite3_close(h.db)!=SQLITE_OK ) benchDie(h.db, "close");
  sqlite3_free(zPath);
  printf("%lld\n", nOp);
  return 0;
}
