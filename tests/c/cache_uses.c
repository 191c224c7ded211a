/*
** tests/c/cache_uses.c: the cache's recency buffer (ext/cache/cache_uses.c)
** driven directly, with no SQL: the pending uses and the transaction
** mirror, their invariants asserted after every step (built without
** NDEBUG), and allocation failures from an allocator that fails on
** request.  Prints one line per case; exit status 1 if any check failed.
**
**   build/cache_uses
*/
#include "cache/cacheInt.h"

#include <stdio.h>

static int nFail = 0;
#define CHECK(X) do{ if( !(X) ){ \
  printf("  failed: %s (line %d)\n", #X, __LINE__); nFail++; } }while(0)

/* ------------------------------------------- an allocator that can fail */
static sqlite3_mem_methods gReal;
static int nAllocLeft = -1;         /* fail when it reaches 0; -1: never */

static void *failMalloc(int n){
  if( nAllocLeft==0 ) return 0;
  if( nAllocLeft>0 ) nAllocLeft--;
  return gReal.xMalloc(n);
}
static void *failRealloc(void *p, int n){
  if( nAllocLeft==0 ) return 0;
  if( nAllocLeft>0 ) nAllocLeft--;
  return gReal.xRealloc(p, n);
}

static void installFailing(void){
  sqlite3_mem_methods m;
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &gReal);
  m = gReal;
  m.xMalloc = failMalloc;
  m.xRealloc = failRealloc;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
}

/* ------------------------------------------------------------ helpers */

static void usesInit(cache_uses *u){ memset(u, 0, sizeof(*u)); }

static i64 hitsOf(const cache_uses *u, i64 id){
  const cache_use *p = acornCacheUsesFind(u, id);
  return p ? p->nHit : 0;
}

/* ---------------------------------------------------------------- cases */

static void caseUses(void){
  cache_uses u;
  int i;
  printf("pending uses: one per id, hits add, the latest time wins\n");
  usesInit(&u);
  CHECK( acornCacheUsesAdd(&u, 7, 100) );
  CHECK( acornCacheUsesAdd(&u, 9, 101) );
  CHECK( acornCacheUsesAdd(&u, 7, 102) );
  acornCacheUsesCheck(&u);
  CHECK( u.nUse==2 && u.nHit==3 && u.iUseSeq==3 );
  CHECK( hitsOf(&u, 7)==2 && acornCacheUsesFind(&u, 7)->ms==102 );
  CHECK( acornCacheUsesFind(&u, 7)->iSeq==3 && acornCacheUsesFind(&u, 9)->iSeq==2 );
  CHECK( acornCacheUsesFind(&u, 8)==0 );
  CHECK( acornCacheUsesUnwritten(&u) );
  printf("pending uses: 100000 ids, the hash grows, every id is found\n");
  for(i=1; i<=100000; i++) CHECK( acornCacheUsesAdd(&u, (i64)i*7919, i) );
  acornCacheUsesCheck(&u);
  for(i=1; i<=100000; i+=997) CHECK( acornCacheUsesFind(&u, (i64)i*7919)!=0 );
  acornCacheUsesFree(&u);
}

static void caseNumber(void){
  cache_uses u;
  int i;
  printf("a flush numbers uses in the order they were made, leaves them by id\n");
  usesInit(&u);
  acornCacheUsesAdd(&u, 30, 1);
  acornCacheUsesAdd(&u, 10, 2);
  acornCacheUsesAdd(&u, 20, 3);
  acornCacheUsesAdd(&u, 30, 4);          /* 30 is now the latest */
  CHECK( acornCacheUsesNumber(&u, 1000)==SQLITE_OK );
  acornCacheUsesCheck(&u);
  CHECK( u.aUse[0].id==10 && u.aUse[1].id==20 && u.aUse[2].id==30 );
  CHECK( u.aUse[0].iUsed==1001 && u.aUse[1].iUsed==1002
         && u.aUse[2].iUsed==1003 );
  for(i=0; i<3; i++) CHECK( acornCacheUsesFind(&u, u.aUse[i].id)==&u.aUse[i] );
  acornCacheUsesFree(&u);
}

static void caseRollback(void){
  cache_uses u;
  cache_txn t;
  printf("rollback: written uses come back older than later ones, merged\n");
  usesInit(&u);
  acornCacheTxnInit(&t);
  t.bOpen = 1;
  acornCacheTxnNoteWrite(&t, 50);        /* the first write of the transaction */
  acornCacheUsesAdd(&u, 5, 10);
  acornCacheUsesAdd(&u, 6, 11);
  u.nMiss = 2;
  acornCacheTxnWritten(&t, &u);          /* a flush wrote them */
  CHECK( u.nUse==0 && u.nHit==0 && u.nMiss==0 );
  CHECK( t.nFlushed==2 && t.nCount==1 );
  acornCacheUsesAdd(&u, 6, 20);          /* used again since */
  CHECK( acornCacheTxnRollback(&t, &u, -1)==50 );
  acornCacheUsesCheck(&u);
  CHECK( u.nUse==2 && u.nHit==3 && u.nMiss==2 );
  CHECK( hitsOf(&u, 6)==2 && acornCacheUsesFind(&u, 6)->ms==20 );
  CHECK( acornCacheUsesFind(&u, 5)->iSeq < acornCacheUsesFind(&u, 6)->iSeq );
  CHECK( acornCacheTxnRollback(&t, &u, -1)==LLONG_MAX );   /* twice: nothing */
  CHECK( u.nHit==3 && u.nMiss==2 );
  acornCacheTxnEnd(&t);
  acornCacheTxnCheck(&t);
  acornCacheUsesFree(&u);
  acornCacheTxnFree(&t);
}

static void caseReusedIds(void){
  cache_uses u;
  cache_txn t;
  printf("rollback to a savepoint drops uses of entries it took away\n");
  usesInit(&u);
  acornCacheTxnInit(&t);
  t.bOpen = 1;
  acornCacheTxnNoteWrite(&t, 10);        /* level -1 began at seq 10 */
  t.iLevel = 0;                     /* SAVEPOINT: level 0 */
  acornCacheTxnNoteWrite(&t, 20);        /* its first write at seq 20 */
  acornCacheUsesAdd(&u, 15, 1);          /* an entry made before the savepoint */
  acornCacheUsesAdd(&u, 21, 2);          /* one made after it */
  CHECK( acornCacheTxnRollback(&t, &u, 0)==20 );
  acornCacheUsesCheck(&u);
  CHECK( u.nUse==1 && hitsOf(&u, 15)==1 && hitsOf(&u, 21)==0 );
  CHECK( u.nHit==1 && u.nHitLoose==1 );   /* the read still counts */
  CHECK( t.iLevel==0 );
  printf("release: what a level wrote belongs to the level around it\n");
  t.iLevel = 1;
  acornCacheTxnNoteWrite(&t, 30);
  acornCacheUsesAdd(&u, 31, 3);
  acornCacheTxnWritten(&t, &u);
  acornCacheTxnRelease(&t, 1);
  CHECK( t.iLevel==0 && t.aFlushed[0].iLevel==0 );
  CHECK( acornCacheTxnRollback(&t, &u, 0)==30 );   /* 31 was made at level 1 */
  CHECK( hitsOf(&u, 31)==0 );
  acornCacheTxnEnd(&t);
  acornCacheUsesFree(&u);
  acornCacheTxnFree(&t);
}

static void caseOom(void){
  cache_uses u;
  cache_txn t;
  int i, bLost = 0;
  printf("out of memory: a use is lost, never half-made; a lost level drops all\n");
  usesInit(&u);
  acornCacheTxnInit(&t);
  nAllocLeft = 0;
  CHECK( acornCacheUsesAdd(&u, 1, 1)==0 );
  acornCacheUsesCheck(&u);
  CHECK( u.nUse==0 && u.nHit==0 );
  nAllocLeft = -1;
  for(i=1; i<=64; i++) acornCacheUsesAdd(&u, i, i);
  nAllocLeft = 0;                   /* the 65th needs more room */
  CHECK( acornCacheUsesAdd(&u, 65, 65)==0 );
  acornCacheUsesCheck(&u);
  CHECK( u.nUse==64 && u.nHit==64 );
  t.bOpen = 1;
  acornCacheTxnNoteWrite(&t, 5);         /* cannot note: the level is lost */
  bLost = t.bLevelLost;
  CHECK( bLost );
  nAllocLeft = -1;
  CHECK( acornCacheTxnRollback(&t, &u, -1)==-1 );
  CHECK( u.nUse==0 && u.nHitLoose==64 );
  acornCacheTxnEnd(&t);
  acornCacheUsesFree(&u);
  acornCacheTxnFree(&t);
}

int main(void){
  installFailing();
  caseUses();
  caseNumber();
  caseRollback();
  caseReusedIds();
  caseOom();
  printf("%s\n", nFail ? "FAILED" : "ok");
  return nFail!=0;
}
