/*
** cache_uses.c: a connection's recency buffer for one cache table, in two
** parts that run no SQL (tests/c/cache_uses.c drives them directly):
**
**   cache_uses  the pending uses: reads record a use of an entry here (one
**               probe of an open hash, no allocation once warm); a flush
**               numbers them in use order and writes them.
**   cache_txn   the transaction mirror: the uses a flush wrote inside the
**               open transaction, by savepoint level, so that ROLLBACK and
**               ROLLBACK TO put them back (the database forgot them), and
**               the seq each level began at, so that uses of entries the
**               rollback took away are dropped, never written onto the
**               entries that get their ids next.
**
** The invariants are written beside the structs in cacheInt.h and asserted
** by acornCacheUsesCheck() and acornCacheTxnCheck() in builds without NDEBUG.
*/
#include "cacheInt.h"

static unsigned cacheHashSlot(const cache_uses *u, i64 id){
  u64 h = (u64)id * 0x9E3779B97F4A7C15ULL;
  return (unsigned)(h>>32) & (unsigned)(u->nHash-1);
}

#ifndef NDEBUG
/* O(n): called where the uses change wholesale, not on every use. */
void acornCacheUsesCheck(const cache_uses *u){
  int i, n = 0;
  i64 nHit = 0;
  assert( u->nUse>=0 && u->nUse<=u->nAlloc );
  assert( u->nHash==0 || ((u->nHash & (u->nHash-1))==0
                          && u->nHash>=2*u->nUse) );
  assert( u->nHash>0 || u->nUse==0 );
  for(i=0; i<u->nUse; i++){
    const cache_use *p = &u->aUse[i];
    int j;
    assert( p->nHit>=1 );
    assert( p->iSeq<=u->iUseSeq );
    nHit += p->nHit;
    for(j=u->aHash[cacheHashSlot(u, p->id)]; j && j!=i+1;
        j=u->aUse[j-1].iNext){
      assert( u->aUse[j-1].id!=p->id );
    }
    assert( j==i+1 );
  }
  for(i=0; u->nUse>0 && i<u->nHash; i++){
    int j;
    for(j=u->aHash[i]; j; j=u->aUse[j-1].iNext){
      assert( j>=1 && j<=u->nUse );
      n++;
    }
  }
  assert( n==u->nUse );
  assert( nHit==u->nHit );
  assert( u->nMiss>=0 && u->nHitLoose>=0 );
}

void acornCacheTxnCheck(const cache_txn *t){
  int i;
  if( !t->bOpen ){
    assert( t->nFlushed==0 && t->nCount==0 && t->iLevel==-1 );
    for(i=0; i<t->nLevelSeq; i++) assert( t->aLevelSeq[i]<0 );
  }else{
    assert( !t->bDrop );
  }
  assert( t->bDrop || t->iDropSeq==LLONG_MAX );
  for(i=t->iLevel+2; i<t->nLevelSeq; i++) assert( t->aLevelSeq[i]<0 );
  for(i=0; i<t->nFlushed; i++) assert( t->aFlushed[i].iLevel<=t->iLevel );
  for(i=0; i<t->nCount; i++) assert( t->aCount[i].iLevel<=t->iLevel );
}
#endif

/* ------------------------------------------------------------ pending uses */

void acornCacheUsesFree(cache_uses *u){
  sqlite3_free(u->aUse);
  sqlite3_free(u->aHash);
  memset(u, 0, sizeof(*u));
}

cache_use *acornCacheUsesFind(const cache_uses *u, i64 id){
  int i;
  if( u->nHash==0 ) return 0;
  for(i=u->aHash[cacheHashSlot(u, id)]; i; i=u->aUse[i-1].iNext){
    if( u->aUse[i-1].id==id ) return &u->aUse[i-1];
  }
  return 0;
}

/* Rebuild the hash over aUse, with at least nWant slots (0: the slots it
** has, which cannot fail). */
static int cacheHashRebuild(cache_uses *u, int nWant){
  int i;
  if( nWant>u->nHash ){
    int nNew = u->nHash ? u->nHash : 64;
    int *aNew;
    while( nNew<nWant ) nNew *= 2;
    aNew = sqlite3_malloc64(sizeof(int)*(size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    sqlite3_free(u->aHash);
    u->aHash = aNew;
    u->nHash = nNew;
  }
  if( u->nHash ) memset(u->aHash, 0, sizeof(int)*(size_t)u->nHash);
  for(i=0; i<u->nUse; i++){
    unsigned h = cacheHashSlot(u, u->aUse[i].id);
    u->aUse[i].iNext = u->aHash[h];
    u->aHash[h] = i+1;
  }
  return SQLITE_OK;
}

/* A new use for id (not among them yet), zeroed but for id, or 0 if out of
** memory. */
static cache_use *cacheUsesNew(cache_uses *u, i64 id){
  cache_use *pNew;
  unsigned h;
  if( u->nUse>=u->nAlloc ){
    int nNew = u->nAlloc ? u->nAlloc*2 : 64;
    cache_use *aNew = sqlite3_realloc64(u->aUse, sizeof(cache_use)*(size_t)nNew);
    if( aNew==0 ) return 0;
    u->aUse = aNew;
    u->nAlloc = nNew;
  }
  if( (u->nUse+1)*2 > u->nHash && cacheHashRebuild(u, (u->nUse+1)*2) ){
    return 0;
  }
  pNew = &u->aUse[u->nUse++];
  memset(pNew, 0, sizeof(*pNew));
  pNew->id = id;
  h = cacheHashSlot(u, id);
  pNew->iNext = u->aHash[h];
  u->aHash[h] = u->nUse;
  return pNew;
}

/* Record a use of entry id at time ms.  0 if out of memory (the use is
** lost, nothing else). */
int acornCacheUsesAdd(cache_uses *u, i64 id, i64 ms){
  cache_use *p = acornCacheUsesFind(u, id);
  if( p==0 ){
    p = cacheUsesNew(u, id);
    if( p==0 ) return 0;
  }
  p->ms = ms;
  p->nHit++;
  p->iSeq = ++u->iUseSeq;
  u->nHit++;
  return 1;
}

/* Does u hold anything not written yet? */
int acornCacheUsesUnwritten(const cache_uses *u){
  return u->nUse || u->nMiss || u->nHitLoose;
}

static int cacheUseCmpSeq(const void *a, const void *b){
  i64 x = ((const cache_use*)a)->iSeq, y = ((const cache_use*)b)->iSeq;
  return x<y ? -1 : x>y;
}
static int cacheUseCmpId(const void *a, const void *b){
  i64 x = ((const cache_use*)a)->id, y = ((const cache_use*)b)->id;
  return x<y ? -1 : x>y;
}

/* Before a flush: give the uses the recency numbers iSeq+1, iSeq+2, ... in
** the order they were made (iUsed), and leave them in id order, so that
** each chunk of records is read and written once. */
int acornCacheUsesNumber(cache_uses *u, i64 iSeq){
  int i;
  acornCacheUsesCheck(u);
  qsort(u->aUse, (size_t)u->nUse, sizeof(cache_use), cacheUseCmpSeq);
  for(i=0; i<u->nUse; i++) u->aUse[i].iUsed = iSeq + 1 + i;
  qsort(u->aUse, (size_t)u->nUse, sizeof(cache_use), cacheUseCmpId);
  return cacheHashRebuild(u, 0);
}

/* Drop the uses of entries with ids above iMaxId (a rollback took those
** entries away); their hits stay counted, in nHitLoose. */
void acornCacheUsesDropAbove(cache_uses *u, i64 iMaxId){
  int i, j;
  for(i=j=0; i<u->nUse; i++){
    if( u->aUse[i].id<=iMaxId ){
      u->aUse[j++] = u->aUse[i];
    }else{
      u->nHit -= u->aUse[i].nHit;
      u->nHitLoose += u->aUse[i].nHit;
    }
  }
  if( j<u->nUse ){
    u->nUse = j;
    cacheHashRebuild(u, 0);
  }
}

/* Put use *pF, written earlier and rolled back, back among the pending
** ones: with its own use counter, older than any use since, so the next
** flush writes it first; merged with a pending use of the same id (the
** latest wins, hits add).  Out of memory, its recency is lost but its hits
** stay counted. */
static void cacheUsesPutBack(cache_uses *u, const cache_use *pF){
  cache_use *pSame = acornCacheUsesFind(u, pF->id);
  if( pSame==0 ){
    pSame = cacheUsesNew(u, pF->id);
    if( pSame==0 ){
      u->nHitLoose += pF->nHit;
      return;
    }
    pSame->ms = pF->ms;
    pSame->iSeq = pF->iSeq;
  }
  if( pF->iSeq>pSame->iSeq ){
    pSame->iSeq = pF->iSeq;
    pSame->ms = pF->ms;
  }
  pSame->nHit += pF->nHit;
  u->nHit += pF->nHit;
}

/* ------------------------------------------------- the transaction mirror */

void acornCacheTxnInit(cache_txn *t){
  memset(t, 0, sizeof(*t));
  t->iLevel = -1;
  t->iDropSeq = LLONG_MAX;
}

void acornCacheTxnFree(cache_txn *t){
  sqlite3_free(t->aFlushed);
  sqlite3_free(t->aCount);
  sqlite3_free(t->aLevelSeq);
  acornCacheTxnInit(t);
}

/* Keep a copy of what a flush wrote in the open transaction.  If there is
** no room (out of memory) a rollback loses these uses' recency; their hits
** and the misses are always kept. */
static void cacheTxnKeep(cache_txn *t, const cache_uses *u){
  int i;
  if( t->nFlushed+u->nUse > t->nFlushedAlloc ){
    int nNew = t->nFlushedAlloc ? t->nFlushedAlloc : 64;
    cache_use *aNew;
    while( nNew<t->nFlushed+u->nUse ) nNew *= 2;
    aNew = sqlite3_realloc64(t->aFlushed, sizeof(cache_use)*(size_t)nNew);
    if( aNew ){
      t->aFlushed = aNew;
      t->nFlushedAlloc = nNew;
    }
  }
  if( t->nFlushed+u->nUse <= t->nFlushedAlloc ){
    for(i=0; i<u->nUse; i++){
      t->aFlushed[t->nFlushed] = u->aUse[i];
      t->aFlushed[t->nFlushed].iLevel = t->iLevel;
      t->nFlushed++;
    }
  }
  if( u->nMiss || u->nHitLoose ){
    if( t->nCount==t->nCountAlloc ){
      int nNew = t->nCountAlloc ? t->nCountAlloc*2 : 8;
      cache_count *aNew = sqlite3_realloc64(t->aCount,
                                            sizeof(cache_count)*(size_t)nNew);
      if( aNew ){
        t->aCount = aNew;
        t->nCountAlloc = nNew;
      }
    }
    if( t->nCount<t->nCountAlloc ){
      t->aCount[t->nCount].iLevel = t->iLevel;
      t->aCount[t->nCount].nMiss = u->nMiss;
      t->aCount[t->nCount].nHit = u->nHitLoose;
      t->nCount++;
    }
  }
}

/* The uses in u were written (the caller's write succeeded): they are part
** of the database now.  Inside a transaction the mirror keeps them until it
** ends; u is emptied. */
void acornCacheTxnWritten(cache_txn *t, cache_uses *u){
  if( t->bOpen ) cacheTxnKeep(t, u);
  if( u->nUse ){
    u->nUse = 0;
    memset(u->aHash, 0, sizeof(int)*(size_t)u->nHash);
  }
  u->nHit = 0;
  u->nMiss = 0;
  u->nHitLoose = 0;
  acornCacheUsesCheck(u);
  acornCacheTxnCheck(t);
}

/* A write is starting at seq: the first at its savepoint level notes it
** (the start of what a rollback to that level undoes). */
void acornCacheTxnNoteWrite(cache_txn *t, i64 seq){
  int k;
  if( !t->bOpen ) return;
  k = t->iLevel + 1;
  if( k>=t->nLevelSeq ){
    int nNew = k + 8, i;
    i64 *aNew = sqlite3_realloc64(t->aLevelSeq, sizeof(i64)*(size_t)nNew);
    if( aNew==0 ){
      t->bLevelLost = 1;
      return;
    }
    for(i=t->nLevelSeq; i<nNew; i++) aNew[i] = -1;
    t->aLevelSeq = aNew;
    t->nLevelSeq = nNew;
  }
  if( t->aLevelSeq[k]<0 ) t->aLevelSeq[k] = seq;
}

/* Forget what savepoint levels iLevel and deeper noted; the least of it, or
** -1 if none. */
static i64 cacheTxnLevelSeq(cache_txn *t, int iLevel){
  i64 s = -1;
  int k;
  for(k=iLevel+1; k<t->nLevelSeq; k++){
    if( k>=0 && t->aLevelSeq[k]>=0 ){
      if( s<0 || t->aLevelSeq[k]<s ) s = t->aLevelSeq[k];
      t->aLevelSeq[k] = -1;
    }
  }
  return s;
}

/* A rollback to savepoint level iLevel (-1: of the transaction): put the
** uses written at that level or deeper back in u, and drop every use of an
** entry made in the part rolled back (id above the seq it began at).
** Returns that bound: LLONG_MAX if nothing was written there, -1 if it is
** not known (every use dropped).  A second call for the same rollback
** finds nothing to do. */
i64 acornCacheTxnRollback(cache_txn *t, cache_uses *u, int iLevel){
  i64 iMaxId = cacheTxnLevelSeq(t, iLevel);
  int i, j;
  if( iMaxId<0 ) iMaxId = LLONG_MAX;   /* nothing was written there */
  if( t->bLevelLost ) iMaxId = -1;     /* not known: keep none */
  for(i=j=0; i<t->nFlushed; i++){
    cache_use *pF = &t->aFlushed[i];
    if( pF->iLevel<iLevel ){
      t->aFlushed[j++] = *pF;
    }else if( pF->id>iMaxId ){
      u->nHitLoose += pF->nHit;        /* its entry is gone; reads stay */
    }else{
      cacheUsesPutBack(u, pF);
    }
  }
  t->nFlushed = j;
  acornCacheUsesDropAbove(u, iMaxId);
  for(i=j=0; i<t->nCount; i++){
    if( t->aCount[i].iLevel>=iLevel ){
      u->nMiss += t->aCount[i].nMiss;
      u->nHitLoose += t->aCount[i].nHit;
    }else{
      t->aCount[j++] = t->aCount[i];
    }
  }
  t->nCount = j;
  if( iLevel>=0 && t->bOpen ) t->iLevel = iLevel;
  acornCacheUsesCheck(u);
  acornCacheTxnCheck(t);
  return iMaxId;
}

/* RELEASE of savepoint level iLevel: what was written at it or deeper now
** belongs to the level around it. */
void acornCacheTxnRelease(cache_txn *t, int iLevel){
  i64 s;
  int i;
  for(i=0; i<t->nFlushed; i++){
    if( t->aFlushed[i].iLevel>=iLevel ) t->aFlushed[i].iLevel = iLevel-1;
  }
  for(i=0; i<t->nCount; i++){
    if( t->aCount[i].iLevel>=iLevel ) t->aCount[i].iLevel = iLevel-1;
  }
  s = cacheTxnLevelSeq(t, iLevel);
  t->iLevel = iLevel-1;
  if( s>=0 && iLevel>=0 && iLevel<t->nLevelSeq
   && (t->aLevelSeq[iLevel]<0 || s<t->aLevelSeq[iLevel]) ){
    t->aLevelSeq[iLevel] = s;
  }
  acornCacheTxnCheck(t);
}

/* The transaction is over (committed, or rolled back after
** acornCacheTxnRollback): the mirror is empty again. */
void acornCacheTxnEnd(cache_txn *t){
  t->nFlushed = 0;
  t->nCount = 0;
  t->bOpen = 0;
  t->iLevel = -1;
  t->bLevelLost = 0;
  t->bDrop = 0;
  t->iDropSeq = LLONG_MAX;
  cacheTxnLevelSeq(t, -1);
  acornCacheTxnCheck(t);
}
