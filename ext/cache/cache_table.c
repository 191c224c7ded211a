/*
** cache_table.c: how a connection holds its cache tables.
**
** HOW A CONNECTION HOLDS A TABLE
**
**   Reads never write.  A use is recorded in the connection's recency
**   buffer for the table (cache_uses.c), and written by a flush: at the
**   start of every write to the table by this connection, inside its
**   transaction (so eviction sees it); when the buffer holds recency_buffer
**   keys, in a short transaction of its own if the connection is in
**   autocommit mode and no writing statement runs (unless autoflush=off);
**   at the last disconnect of the table, under the same conditions, when
**   the schema in memory is known to be the file's (cacheSchemaCurrent);
**   and by the 'flush' command.  Uses written inside a transaction are
**   mirrored (cache_txn) so that a rollback puts them back.
**
**   That state belongs to the table on the connection, not to a vtab
**   instance: SQLite connects a table again after any schema change while
**   the old instance lives on in the open transaction, and DETACH or a
**   failed statement disconnects an instance whose uses are not written.
**   So a connection keeps one cache_table per (schema, uid), found from
**   the cache_conn that every registration of the module on the connection
**   shares (acornCacheConnAcquire), and every instance is a handle on one.
**   Both an old and a new instance may deliver the same transaction event:
**   each handler is idempotent.  A cache_table outlives its instances while
**   it holds anything not written or the state of an open transaction, for
**   the next instance of the table (or the connection's close) to finish.
**
**   DROP TABLE inside a transaction: a ROLLBACK or ROLLBACK TO brings the
**   table back (same uid).  What was held of the transaction goes, as in a
**   rollback of it (no xRollback reaches a dropped table), and txn.bDrop
**   marks the table until the connection is seen outside that transaction:
**   no config row is held, no use of an entry the transaction may have made
**   is kept (acornCacheDropEnd).
**
**   A uid read from the config row that is not the table's means another
**   table has the name (dropped and created again by another connection):
**   the old state is retired, never written (acornCacheTableSwitch).
**
** WHICH READS HAPPEN WHERE
**
**   A write must wait for the write lock as a plain table's does, and
**   SQLite waits (calls the busy handler) only for a transaction that has
**   not read yet: one that holds a read snapshot when it first writes gets
**   SQLITE_BUSY (or SQLITE_BUSY_SNAPSHOT, in WAL mode, when another
**   connection committed since) at once.  A write statement on a cache
**   table takes the write lock as it begins (OP_Transaction, before
**   xBegin), so every read the cache makes from xBegin on is under it.
**   What runs before that, as the statement is prepared, is xConnect: it
**   reads the table's format and config row (acornCacheVtabBind) only
**   when that starts no snapshot the user's transaction did not have: in
**   autocommit mode (the read ends with it), or when the transaction has
**   already read that schema.  Inside a transaction that has not, the
**   instance is bound at its first use: under the write lock for a write,
**   as part of the read for a read.  xBestIndex reads nothing.  The
**   functions (cache_get, cache_read, cache_stats) read: they are reads.
**   A flush of buffered uses in a transaction of its own (autocommit
**   only) begins with a read, and its write may then meet SQLITE_BUSY: it
**   is given up, the uses kept (acornCacheFlushStandalone).
**
** THE -WAL FILE
**
**   In WAL mode a checkpoint copies the log into the database, and the log
**   starts again from its beginning only when no reader still uses a
**   snapshot in it.  SQLite's own hook (wal_autocheckpoint) runs a
**   checkpoint that waits for nobody after every commit that leaves the
**   log longer than 1000 pages; with several processes reading all the
**   time there is always a reader in the log, so it never starts again and
**   grows without bound.  A connection that writes a cache table
**   (acornCacheWalHook, at the start of its first write, and of the first
**   after each cache_wal_limit()) puts acorn's hook in place of SQLite's,
**   if SQLite's is the one in place (PRAGMA wal_autocheckpoint reads more
**   than 0; another hook, or none, is left alone; acorn's is never taken
**   away, since what a hook is cannot be read without replacing it).  It
**   does what SQLite's does, and when the log comes within 8 MiB of the
**   bound (cache_wal_limit(), 64 MiB by default; within half of a bound
**   under 16 MiB) it runs a checkpoint that waits for the writers and
**   readers in the log (SQLITE_CHECKPOINT_TRUNCATE, within the
**   connection's busy timeout), copies all of it and truncates the file;
**   the rest is for the commits other connections make before it has the
**   write lock.  Each such checkpoint holds every writer up while it
**   waits for the readers, so it runs as seldom as the bound allows.  One
**   that readers kept from finishing is tried again once the log has grown
**   by another half of the bound; one that found another checkpoint
**   running waits for it.  The hook's argument is the
**   wal_autocheckpoint it replaced, and the bound is found from the
**   connection through the process-wide list: a hook left behind by a
**   connection whose registration went (sqlite3_drop_modules) does what
**   SQLite's does.
*/
#include "cacheInt.h"

#include <pthread.h>

/* -------------------------------------------------------- connections */

/* The cache_conn of each connection that registered the module: found by
** the connection at registration, so that loading acorn twice on one
** connection (the preload library and load_extension, say) still gives
** every table one state, and by acorn's -wal hook.  Nothing else takes
** this mutex. */
static pthread_mutex_t gCacheConnMutex = PTHREAD_MUTEX_INITIALIZER;
static cache_conn *gCacheConnList = 0;

static void cacheTableFree(cache_table *p);

/* db's cache_conn, with a reference for the caller; 0 if out of memory. */
cache_conn *acornCacheConnAcquire(sqlite3 *db){
  cache_conn *p;
  pthread_mutex_lock(&gCacheConnMutex);
  for(p=gCacheConnList; p && p->db!=db; p=p->pNext){}
  if( p==0 ){
    p = sqlite3_malloc64(sizeof(*p));
    if( p ){
      memset(p, 0, sizeof(*p));
      p->db = db;
      p->wal.nLimit = CACHE_DEFAULT_WAL_LIMIT;
      p->pNext = gCacheConnList;
      gCacheConnList = p;
    }
  }
  if( p ) p->nRef++;
  pthread_mutex_unlock(&gCacheConnMutex);
  return p;
}

/* One more reference on p (an instance of a cache table holds one). */
void acornCacheConnRef(cache_conn *p){
  pthread_mutex_lock(&gCacheConnMutex);
  p->nRef++;
  pthread_mutex_unlock(&gCacheConnMutex);
}

/* Give back a reference (the destructor of each registration, and each
** instance as it goes).  The last
** goes as the connection closes, after every instance is disconnected:
** the tables left then (uses that could not be written) go with it. */
void acornCacheConnRelease(void *pArg){
  cache_conn *p = (cache_conn*)pArg, **pp;
  int bFree = 0;
  pthread_mutex_lock(&gCacheConnMutex);
  if( --p->nRef==0 ){
    for(pp=&gCacheConnList; *pp!=p; pp=&(*pp)->pNext){}
    *pp = p->pNext;
    bFree = 1;
  }
  pthread_mutex_unlock(&gCacheConnMutex);
  if( bFree ){
    assert( p->pVtabList==0 );
    while( p->pTabList ){
      cache_table *pTab = p->pTabList;
      p->pTabList = pTab->pNext;
      cacheTableFree(pTab);
    }
    acornCacheNameForget(p, 0);
    sqlite3_free(p);
  }
}

/* ------------------------------------------------------ the -wal file */

/* Bytes of log nFrame frames take in schema zDb of p's connection (p->wal
** keeps the page size of the schema last asked about). */
static i64 cacheWalBytes(cache_conn *p, const char *zDb, int nFrame){
  cache_wal *w = &p->wal;
  if( w->nPage==0 || strcmp(w->zPageDb, zDb)!=0 ){
    i64 nPage = 0;
    acornCacheQueryInt(p->db, sqlite3_mprintf("PRAGMA \"%w\".page_size", zDb),
                       &nPage, 0);
    if( nPage<512 || strlen(zDb)>=sizeof(w->zPageDb) ) return -1;
    w->nPage = (int)nPage;
    memcpy(w->zPageDb, zDb, strlen(zDb)+1);
  }
  return 32 + (i64)nFrame*(w->nPage + 24);
}

/* The busy handler of a bounding checkpoint: SQLite's (sqlite3_busy_timeout)
** sleeps longer the longer it waits, up to 100 ms, and a checkpoint that
** waits so for the write lock loses it to writer after writer while the
** log grows.  This one looks again every 100 us until the connection's
** busy timeout has passed. */
typedef struct cache_wal_wait cache_wal_wait;
struct cache_wal_wait {
  sqlite3_vfs *pVfs;    /* whose xSleep waits */
  i64 iDeadline;        /* unix ms */
};
static int cacheWalBusy(void *pArg, int nCall){
  cache_wal_wait *w = (cache_wal_wait*)pArg;
  (void)nCall;
  if( acornCacheNowMs()>=w->iDeadline ) return 0;
  w->pVfs->xSleep(w->pVfs, 100);
  return 1;
}

/* The log length (bytes) at which a commit under the bound nLimit runs the
** bounding checkpoint: 8 MiB short of it, or half of a bound under 16 MiB.
** What is left is for the commits of other connections that come before
** the checkpoint has the write lock (under 16 processes writing at once,
** well under 1 MiB). */
#define CACHE_WAL_HEADROOM ((i64)8<<20)
static i64 cacheWalTrigger(i64 nLimit){
  return nLimit - (nLimit/2<CACHE_WAL_HEADROOM ? nLimit/2 : CACHE_WAL_HEADROOM);
}

/* The bounding checkpoint of p's connection db on schema zDb, whose log
** holds nFrame frames.  It waits, within the connection's busy timeout, for
** the write lock and for the readers in the log (cacheWalBusy), and for
** another connection's checkpoint to end (SQLite answers that one at once,
** without the busy handler: looked at again every 100 us, this writer
** meanwhile not adding to the log). */
static void cacheWalTruncate(cache_conn *p, sqlite3 *db, const char *zDb,
                             int nFrame){
  int nLog = -1, nDone = -1, rc;
  i64 nTimeout = 0;
  cache_wal_wait w;
  /* Only SQLite's own timeout handler is swapped (PRAGMA busy_timeout reads
  ** more than 0 only while it is in place), and put back as it was; a
  ** handler of the application's is left to wait as it does. */
  acornCacheQueryInt(db, sqlite3_mprintf("PRAGMA busy_timeout"), &nTimeout, 0);
  w.pVfs = sqlite3_vfs_find(0);
  if( nTimeout>0 && nTimeout<=INT_MAX && w.pVfs ){
    w.iDeadline = acornCacheNowMs() + nTimeout;
    sqlite3_busy_handler(db, cacheWalBusy, &w);
  }else{
    nTimeout = 0;
  }
  do{
    nLog = nDone = -1;
    rc = sqlite3_wal_checkpoint_v2(db, zDb, SQLITE_CHECKPOINT_TRUNCATE,
                                   &nLog, &nDone);
  }while( rc==SQLITE_BUSY && nLog<0 && nTimeout>0 && cacheWalBusy(&w, 0) );
  if( nTimeout>0 ) sqlite3_busy_timeout(db, (int)nTimeout);
  if( rc==SQLITE_OK ){
    p->wal.iRetry = 0;
  }else if( nLog>=0 ){
    /* readers outlasted the busy timeout: not again for another half */
    i64 nStep = p->wal.nLimit/2/(p->wal.nPage + 24);
    p->wal.iRetry = (i64)nFrame + (nStep>0 ? nStep : 1);
  }          /* else another checkpoint outlasted it: at the next commit */
}

/* acorn's -wal hook (THE -WAL FILE, above).  pArg is the
** wal_autocheckpoint it replaced. */
static int cacheWalCallback(void *pArg, sqlite3 *db, const char *zDb,
                            int nFrame){
  int nAuto = (int)(sqlite3_int64)(size_t)pArg;
  cache_conn *p;
  pthread_mutex_lock(&gCacheConnMutex);
  for(p=gCacheConnList; p && p->db!=db; p=p->pNext){}
  pthread_mutex_unlock(&gCacheConnMutex);
  /* p is db's own: only db's thread frees it, and db is here, committing */
  if( p && p->wal.nLimit>0 && nFrame>=p->wal.iRetry
   && cacheWalBytes(p, zDb, nFrame)>=cacheWalTrigger(p->wal.nLimit) ){
    cacheWalTruncate(p, db, zDb, nFrame);
  }else if( nFrame>=nAuto ){
    sqlite3_wal_checkpoint_v2(db, zDb, SQLITE_CHECKPOINT_PASSIVE, 0, 0);
  }
  return SQLITE_OK;     /* the commit is done, whatever the checkpoint did */
}

/* At the start of a write to a cache table: put acorn's -wal hook in place
** of SQLite's own, if the bound is on and SQLite's is the one there (PRAGMA
** wal_autocheckpoint reads the number only while it is: it reads 0 with
** acorn's in place, or another, or none, and those are left).  Looked at
** once each time the bound is set. */
void acornCacheWalHook(cache_conn *p){
  i64 nAuto = 0;
  int rc;
  if( p->wal.bLooked || p->wal.nLimit==0 ) return;
  rc = acornCacheQueryInt(p->db, sqlite3_mprintf("PRAGMA wal_autocheckpoint"),
                          &nAuto, 0);
  if( rc ) return;                      /* out of memory: the next write */
  p->wal.bLooked = 1;
  if( nAuto>=1 && nAuto<=INT_MAX ){
    sqlite3_wal_hook(p->db, cacheWalCallback, (void*)(size_t)nAuto);
  }
}

/* cache_wal_limit(n): the bound set to nLimit bytes (0: none; acorn's hook,
** if in place, then does what SQLite's does).  The next write to a cache
** table looks at the hook in place again (the application may have put
** SQLite's back since). */
void acornCacheWalLimit(cache_conn *p, i64 nLimit){
  assert( nLimit>=0 && nLimit<=CACHE_MAX_CAPACITY );
  p->wal.nLimit = nLimit;
  p->wal.iRetry = 0;
  p->wal.bLooked = 0;
}

/* ------------------------------------------------------------- tables */

#ifndef NDEBUG
void acornCacheTableCheck(const cache_table *p){
  acornCacheUsesCheck(&p->uses);
  acornCacheTxnCheck(&p->txn);
  assert( p->txn.bOpen || p->held.eCfg!=CACHE_CFG_DIRTY );
  assert( p->txn.bOpen || !p->bSetBroken );
  assert( !p->txn.bDrop || p->held.eCfg==CACHE_CFG_NONE );
  assert( p->held.nCfgSaved>=0 && p->held.nCfgSaved<=p->held.nCfgSavedAlloc );
  assert( p->held.nCfgSaved<=p->txn.iLevel+1 );
  assert( p->held.eCfg==CACHE_CFG_NONE || p->held.eCfg==CACHE_CFG_CLEAN
       || p->held.eCfg==CACHE_CFG_DIRTY );
  assert( p->held.iChunkNext>=0 && p->held.iChunkNext<CACHE_NCHUNK );
  assert( !p->st.bCfgBound || p->st.aStmt[CACHE_STMT_CONFIG_WRITE]!=0 );
  assert( p->nRef>=0 );
  assert( p->iFormat>=1 && p->iFormat<=CACHE_FORMAT_NEW );
  assert( p->ePolicy==CACHE_POLICY_LRU || p->ePolicy==CACHE_POLICY_FIFO );
  assert( p->opts.nBufferMax>=1 && p->opts.nBufferMax<=CACHE_MAX_BUFFER );
  assert( p->nNextFlush>=1 );
  {
    int i;
    for(i=0; i<CACHE_NREAD; i++){
      assert( !p->st.aReadBusy[i] || p->st.aRead[i]!=0 );
    }
  }
}
#endif

static void cacheTableFree(cache_table *p){
  int i;
  acornCacheNameForget(p->pConn, p);
  acornCacheFinalizeAll(p);
  for(i=0; i<CACHE_NCHUNK; i++) sqlite3_free(p->held.aChunk[i].aRec);
  acornCacheUsesFree(&p->uses);
  acornCacheTxnFree(&p->txn);
  sqlite3_free(p->held.aCfgSaved);
  sqlite3_free(p->zDb);
  sqlite3_free(p->zName);
  sqlite3_free(p);
}

/* Must p outlive its instances?  While it holds anything not written, or
** the state of an open transaction (a config row not written yet, the
** mirror), or a DROP's mark; never once retired. */
static int cacheTableKeep(const cache_table *p){
  return !p->bGone && (acornCacheUsesUnwritten(&p->uses) || p->txn.bOpen
                       || p->held.eCfg==CACHE_CFG_DIRTY || p->txn.bDrop);
}

void acornCacheTableRef(cache_table *p){
  p->nRef++;
}

/* A table nobody uses any more goes, unless it must be kept; then its
** statements go (sqlite3_close() refuses to close a connection that has
** statements, and it disconnects virtual tables before it looks). */
void acornCacheTableUnref(cache_table *p){
  assert( p->nRef>0 );
  if( --p->nRef>0 ) return;
  if( cacheTableKeep(p) ){
    acornCacheFinalizeAll(p);
  }else{
    cache_table **pp;
    for(pp=&p->pConn->pTabList; *pp!=p; pp=&(*pp)->pNext){}
    *pp = p->pNext;
    cacheTableFree(p);
  }
}

/* p is no longer the table under its name: nothing it holds is written. */
void acornCacheTableRetire(cache_table *p){
  p->bGone = 1;
  p->uses.nUse = 0;
  p->uses.nHit = p->uses.nMiss = p->uses.nHitLoose = 0;
  if( p->uses.nHash ) memset(p->uses.aHash, 0, sizeof(int)*(size_t)p->uses.nHash);
  acornCacheTxnEnd(&p->txn);
  acornCacheHeldForget(p);
  acornCacheChunkDropAll(p);
}

/* The live table (zDb, uid) of pConn, or 0.  Tables made before uids
** existed all have uid 0: those are told apart by name. */
static cache_table *cacheTableFind(cache_conn *pConn, const char *zDb,
                                   const char *zName, i64 uid){
  cache_table *p;
  for(p=pConn->pTabList; p; p=p->pNext){
    if( !p->bGone && p->uid==uid && sqlite3_stricmp(p->zDb, zDb)==0
     && (uid!=0 || sqlite3_stricmp(p->zName, zName)==0) ){
      return p;
    }
  }
  return 0;
}

/* The text encoding and page size of pTab's schema.  The plain pragmas,
** not pragma_encoding and pragma_page_size: those are virtual tables of
** main, and a statement using them makes SQLite reload main's schema if it
** is out of date (after a CREATE refused in this transaction), which also
** drops temp's: in xCreate of a temp table, the table being created. */
static int cacheTableProbe(cache_table *p){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc = sqlite3_prepare_v2(p->db, "PRAGMA encoding", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zEnc = (const char*)sqlite3_column_text(pStmt, 0);
    p->bUtf16 = zEnc && sqlite3_strnicmp(zEnc, "UTF-16", 6)==0;
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  p->nChunkMax = 4096 - 200;
  zSql = sqlite3_mprintf("PRAGMA \"%w\".page_size", p->zDb);
  if( rc==SQLITE_OK ){
    rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  }
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int nPage = sqlite3_column_int(pStmt, 0);
    if( nPage>=512 ) p->nChunkMax = nPage - nPage/16 - 64;
  }
  /* A step that failed (out of memory) may have rolled back the whole
  ** transaction, a CREATE's included: say so, never succeed. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pStmt);
  }else{
    sqlite3_finalize(pStmt);
  }
  return rc;
}

/* A new cache_table for table zDb.zName, *pId, in pConn, in *ppTab. */
static int cacheTableNew(cache_conn *pConn, const char *zDb,
                         const char *zName, const cache_ident *pId,
                         cache_table **ppTab){
  cache_table *p = sqlite3_malloc64(sizeof(*p));
  int rc;
  *ppTab = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  assert( pId->iFormat>=1 && pId->iFormat<=CACHE_FORMAT_NEW );
  p->pConn = pConn;
  p->db = pConn->db;
  p->zDb = sqlite3_mprintf("%s", zDb);
  p->zName = sqlite3_mprintf("%s", zName);
  p->uid = pId->uid;
  p->iFormat = pId->iFormat;
  p->ePolicy = pId->ePolicy;
  p->opts.nBufferMax = p->nNextFlush = CACHE_DEFAULT_BUFFER;
  p->opts.bAutoflush = 1;
  p->seen.iDataVersion = p->seen.iSchemaVersion = p->seen.iNotedVersion = -1;
  p->seen.iForeignOk = -1;
  acornCacheTxnInit(&p->txn);
  rc = (p->zDb && p->zName) ? cacheTableProbe(p) : SQLITE_NOMEM;
  if( rc ){
    cacheTableFree(p);
    return rc;
  }
  p->pNext = pConn->pTabList;
  pConn->pTabList = p;
  *ppTab = p;
  return SQLITE_OK;
}

/* The table zDb.zName, *pId, of pConn with a reference for the caller in
** *ppTab: the one the connection holds, or a new one (*pOpts: the options
** of the instance that asks, which it takes). */
static int cacheTableGet(cache_conn *pConn, const char *zDb, const char *zName,
                         const cache_ident *pId, const cache_opts *pOpts,
                         cache_table **ppTab){
  cache_table *p = cacheTableFind(pConn, zDb, zName, pId->uid);
  assert( pOpts->nBufferMax>=1 && pOpts->nBufferMax<=CACHE_MAX_BUFFER );
  if( p==0 ){
    int rc = cacheTableNew(pConn, zDb, zName, pId, &p);
    if( rc ) return rc;
    p->opts.nBufferMax = p->nNextFlush = pOpts->nBufferMax;
  }else{
    if( sqlite3_stricmp(p->zName, zName)!=0 ){
      /* The schema names it so now (a RENAME that failed after xRename
      ** was rolled back): its statements go with the old name. */
      char *zNew = sqlite3_mprintf("%s", zName);
      if( zNew==0 ) return SQLITE_NOMEM;
      acornCacheFinalizeAll(p);
      sqlite3_free(p->zName);
      p->zName = zNew;
    }
    if( p->opts.nBufferMax!=pOpts->nBufferMax ){
      p->opts.nBufferMax = pOpts->nBufferMax;
      p->nNextFlush = p->uses.nUse + p->opts.nBufferMax;
    }
  }
  p->opts.bAutoflush = pOpts->bAutoflush;
  acornCacheTableRef(p);
  *ppTab = p;
  return SQLITE_OK;
}

/* Bind instance pVtab to the table (its schema and name, *pId). */
int acornCacheVtabAttach(cache_vtab *pVtab, const cache_ident *pId){
  assert( pVtab->pTab==0 );
  return cacheTableGet(pVtab->pConn, pVtab->zDb, pVtab->zName, pId,
                       &pVtab->opts, &pVtab->pTab);
}

/* The table zDb.zName as stored now, with a reference for the caller: its
** uid, policy and format read from the stored table.  The queries may make
** SQLite reload the schema and disconnect instances: nothing here is an
** instance's.  An error (the config row cannot be read) comes with a
** message in *pzErr. */
int acornCacheTableOpen(cache_conn *pConn, const char *zDb, const char *zName,
                        const cache_opts *pOpts, cache_table **ppTab,
                        char **pzErr){
  sqlite3 *db = pConn->db;
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  cache_ident id;
  int rc, bRow = 0;
  *ppTab = 0;
  id.uid = 0;
  id.iFormat = 2;
  id.ePolicy = CACHE_POLICY_LRU;
  rc = acornCacheFormatProbe(db, zDb, zName, &id.iFormat);
  if( rc ) return rc;
  zSql = sqlite3_mprintf("SELECT uid, %s FROM \"%w\".\"%w_config\" WHERE id=1",
                         id.iFormat>=2 ? "policy" : "0", zDb, zName);
  rc = zSql ? sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB,
                                 &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    bRow = 1;
    id.uid = sqlite3_column_int64(pStmt, 0);
    if( sqlite3_column_int(pStmt, 1)==CACHE_POLICY_FIFO ){
      id.ePolicy = CACHE_POLICY_FIFO;
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && !bRow ){
    *pzErr = sqlite3_mprintf("cache: the row of \"%w\".\"%w_config\" is"
                             " missing", zDb, zName);
    return SQLITE_CORRUPT_VTAB;
  }
  if( rc ){
    *pzErr = sqlite3_mprintf("cache: %s", (rc&0xff)==SQLITE_NOMEM
                             ? sqlite3_errstr(rc) : sqlite3_errmsg(db));
    return rc;
  }
  return cacheTableGet(pConn, zDb, zName, &id, pOpts, ppTab);
}

/* Bind p to its table if it is not yet (its method runs: SQLite keeps it
** while the queries run).  An error leaves p unbound, with a message in
** *pzErr. */
int acornCacheVtabBind(cache_vtab *p, char **pzErr){
  if( p->pTab ) return SQLITE_OK;
  return acornCacheTableOpen(p->pConn, p->zDb, p->zName, &p->opts, &p->pTab,
                             pzErr);
}

/* op read a uid that is not its table's (see acornCacheConfigLoad): retire the
** table; an op for an instance carries on with the instance bound to the
** table that has the uid now, in its transaction if the old one was in
** one; an op for a function says so (bChanged) and its caller looks the
** name up again. */
int acornCacheTableSwitch(cache_op *op, i64 uid){
  cache_table *pOld = op->pTab;
  cache_vtab *pVtab = op->pVtab;
  int bOpen = pOld->txn.bOpen, iLevel = pOld->txn.iLevel, rc;
  cache_ident id;
  acornCacheTableRetire(pOld);
  if( pVtab==0 || pVtab->pTab!=pOld ){
    op->bChanged = 1;
    return SQLITE_OK;
  }
  pVtab->pTab = 0;
  id.uid = uid;
  id.iFormat = pOld->iFormat;
  id.ePolicy = pOld->ePolicy;
  rc = acornCacheVtabAttach(pVtab, &id);
  if( rc ){
    pVtab->pTab = pOld;                /* retired: writes nothing */
    return acornCacheOpError(op, rc);
  }
  acornCacheTableUnref(pOld);
  op->pTab = pVtab->pTab;
  if( bOpen && !op->pTab->txn.bOpen ){
    acornCacheTableJoin(op->pTab);
    op->pTab->txn.iLevel = iLevel;
  }
  return SQLITE_OK;
}

/* Is p still under the mark of a DROP TABLE (txn.bDrop)?  Not once the
** connection is seen outside a transaction: it is past that one, which
** may have been rolled back with no xRollback of this table, so the
** chunks read under the mark go (acornCacheHeldValidate). */
int acornCacheDropEnd(cache_table *p){
  if( p->txn.bDrop && sqlite3_get_autocommit(p->db) ){
    p->txn.bDrop = 0;
    p->txn.iDropSeq = LLONG_MAX;
    acornCacheHeldForget(p);
  }
  return p->txn.bDrop;
}

/* ------------------------------------------ names cache_get() looked up */

/* Forget the names that name pTab (every name if pTab is 0). */
void acornCacheNameForget(cache_conn *pConn, cache_table *pTab){
  int i;
  for(i=0; i<CACHE_NNAME; i++){
    cache_name *n = &pConn->aName[i];
    if( n->zName && (pTab==0 || n->pTab==pTab) ){
      sqlite3_free(n->zName);
      memset(n, 0, sizeof(*n));
    }
  }
}

/* Remember that zTab names p (found by the functions' lookup just now),
** if what it names can be known again cheaply (cache_func.c,
** cacheNameKnown); nReprepare: of p's statement of kind eKind
** (CACHE_NAME_*) when it last stepped. */
void acornCacheNameNote(cache_conn *pConn, const char *zTab, cache_table *p,
                        int eKind, int nReprepare){
  const char *zDot = strchr(zTab, '.');
  cache_name *n = 0;
  int i, eWhere = 0;
  if( zDot==0 ){
    if( sqlite3_stricmp(p->zDb, "temp")==0 ) eWhere = CACHE_NAME_TEMP;
    if( sqlite3_stricmp(p->zDb, "main")==0 ) eWhere = CACHE_NAME_MAIN;
  }else if( zDot-zTab==4 && sqlite3_strnicmp(zTab, "main", 4)==0
         && sqlite3_stricmp(p->zDb, "main")==0
         && sqlite3_stricmp(p->zName, zDot+1)==0
         && SQLITE_VERSION_NUMBER>=3039000
         && sqlite3_libversion_number()>=3039000 ){
    eWhere = CACHE_NAME_ALONE;
  }
  if( eWhere==0 ) return;
  for(i=0; i<CACHE_NNAME && n==0; i++){
    if( pConn->aName[i].zName && strcmp(pConn->aName[i].zName, zTab)==0 ){
      n = &pConn->aName[i];
    }
  }
  assert( eKind>=0 && eKind<CACHE_NAME_NKIND && nReprepare>=0 );
  if( n==0 ){
    char *zCopy = sqlite3_mprintf("%s", zTab);
    if( zCopy==0 ) return;               /* looked up again next time */
    n = &pConn->aName[pConn->iNameNext];
    pConn->iNameNext = (pConn->iNameNext+1) % CACHE_NNAME;
    sqlite3_free(n->zName);
    n->zName = zCopy;
    n->pTab = 0;
  }
  if( n->pTab!=p || n->iStmtGen!=p->st.iGen ){
    /* (what other kinds noted was of another table or statements) */
    for(i=0; i<CACHE_NAME_NKIND; i++) n->anReprepare[i] = -1;
  }
  n->pTab = p;
  n->iStmtGen = p->st.iGen;
  n->anReprepare[eKind] = nReprepare;
  n->eWhere = eWhere;
}

/* ------------------------------------------------- the start of a write */

/* The error of every write, and of the commit, of a transaction in which a
** cache_set() failed halfway and could not be rolled back (bSetBroken). */
int acornCacheSetBroken(cache_op *op){
  return acornCacheOpFail(op, SQLITE_ERROR, "%s: a cache_set on \"%w\" failed"
      " halfway in this transaction and could not be undone (out of memory,"
      " on SQLite before 3.40); roll the transaction back",
      op->zWho ? op->zWho : "cache", op->pTab->zName);
}

/* The config row into op->cfg: the copy the table holds if it holds one,
** else the row as stored (a format a rollback may have changed probed
** again first).  A uid that is not the table's means another table has
** the name now (dropped and created again by another connection, or a row
** edited by hand): acornCacheTableSwitch() retires this table's state and
** moves op on. */
int acornCacheConfigLoad(cache_op *op){
  cache_table *p = op->pTab;
  int rc;
  if( p->held.eCfg!=CACHE_CFG_NONE ){
    op->cfg = p->held.cfg;
    return SQLITE_OK;
  }
  acornCacheDropEnd(p);
  rc = acornCacheFormatRecheck(op);
  if( rc==SQLITE_OK ) rc = acornCacheConfigRead(op);
  if( rc==SQLITE_OK && op->cfg.uid!=p->uid ){
    rc = acornCacheTableSwitch(op, op->cfg.uid);
    p = op->pTab;
  }
  if( rc==SQLITE_OK && !op->bChanged ){
    p->ePolicy = op->cfg.ePolicy;
    /* (under a DROP's mark the row may be a transaction's that no
    ** rollback of it would take from the table: read each time) */
    if( p->iFormat>=2 && !p->txn.bDrop ){
      p->held.cfg = op->cfg;
      p->held.eCfg = CACHE_CFG_CLEAN;
    }
  }
  return rc;
}

/* The start of every write (pVtab: the instance it runs for, or 0; zWho
** the function that writes, or 0 for the table): the -wal hook, the config
** row, no foreign object on the shadow tables, and a table of an older
** format converted. */
int acornCacheOpBegin(cache_op *op, cache_table *pTab, cache_vtab *pVtab,
                      const char *zWho){
  int rc;
  /* (the cheap invariants: acornCacheTableCheck's walk of the buffered
  ** uses is for the points where they change in bulk) */
  assert( pTab->nRef>0 && pTab->iFormat>=1
          && pTab->iFormat<=CACHE_FORMAT_NEW );
  assert( pTab->txn.bOpen || pTab->held.eCfg!=CACHE_CFG_DIRTY );
  acornCacheOpInit(op, pTab, pVtab);
  op->zWho = zWho;
  op->now = acornCacheNowMs();
  if( pTab->bSetBroken ) return acornCacheSetBroken(op);
  acornCacheWalHook(pTab->pConn);
  acornCacheHeldCheck(pTab);
  rc = acornCacheConfigLoad(op);
  if( rc==SQLITE_OK && op->bChanged ) rc = SQLITE_ABORT;
  if( rc==SQLITE_OK ) rc = acornCacheForeignCheck(op);
  if( rc==SQLITE_OK && op->pTab->iFormat<3 ){
    rc = acornCacheUpgrade(op);
    if( rc==SQLITE_OK ) rc = acornCacheConfigLoad(op);
  }
  if( rc==SQLITE_OK ) acornCacheTxnNoteWrite(&op->pTab->txn, op->cfg.seq);
  return rc;
}

/* ------------------------------------------------- flushing on its own */

/* Is a statement running on db (that writes, with bWrite)? */
int acornCacheStmtBusy(sqlite3 *db, int bWrite){
  sqlite3_stmt *pStmt = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    if( sqlite3_stmt_busy(pStmt) && (!bWrite || !sqlite3_stmt_readonly(pStmt)) ){
      return 1;
    }
  }
  return 0;
}

/* Is the schema of p->zDb that the connection holds in memory the one in
** the file?  If not, the next statement on it makes SQLite drop and load
** that schema again, which a flush at the last disconnect must not cause:
** sqlite3_close() disconnects virtual tables while it walks the schema's
** tables.  SQLite has no interface to the cookie of the schema in memory,
** so this is reasoned from two versions noted the last time a statement on
** the table ran (it checked the schema then: acornCacheHeldValidate), read now
** with pragmas that do not check it: the schema in memory is the file's if
** no other connection committed since (PRAGMA data_version is the same;
** this connection's own DDL keeps the schema in memory current), or if
** nobody changed any schema since (PRAGMA schema_version is the same).
** Otherwise it may be out of date, and the flush waits.  Called inside the
** flush's transaction, so the answer holds while it runs. */
static int cacheSchemaCurrent(cache_table *p){
  i64 iData = -1, iSchema = -1;
  acornCacheQueryInt(p->db, sqlite3_mprintf("PRAGMA \"%w\".data_version", p->zDb),
                &iData, 0);
  acornCacheQueryInt(p->db, sqlite3_mprintf("PRAGMA \"%w\".schema_version",
                                       p->zDb), &iSchema, 0);
  return (iData>=0 && iData==p->seen.iDataVersion)
      || (iSchema>=0 && iSchema==p->seen.iSchemaVersion);
}

/* Flush in a short transaction of its own, only when that cannot join or
** disturb the user's: autocommit mode, no writing statement running.  With
** bIdle (the last disconnect: no statement at all is running) nothing is
** written unless the schema in memory is current, and a table of format 1
** or 2 is not converted.  The transaction is ours, so a failure ends it with a
** whole ROLLBACK, prepared before anything is written: a RELEASE can fail
** (busy, with a reader on a rollback journal; out of memory) and would
** leave the transaction open, with the connection's next statements in it.
**
** Without bIdle the flush runs inside the step of another statement (a
** read of the table, cache_read).  Before SQLite 3.40, after an allocation
** fails there no statement steps (not even that ROLLBACK) until the outer
** one ends, and an outer statement that reads no table (SELECT
** cache_read(...)) then ends without rolling back: the transaction would
** stay open.  There the uses wait for the table's next write, 'flush' or
** close. */
int acornCacheFlushStandalone(cache_table *p, int bIdle){
  sqlite3_stmt *pRollback = 0;
  cache_op op;
  int rc;
  if( !acornCacheUsesUnwritten(&p->uses) || p->bGone ) return SQLITE_OK;
  if( !sqlite3_get_autocommit(p->db) || acornCacheStmtBusy(p->db, 1) ){
    return SQLITE_BUSY;
  }
  acornCacheDropEnd(p);              /* outside a transaction: past a DROP's */
  if( !bIdle && sqlite3_libversion_number()<3040000 ) return SQLITE_BUSY;
  /* A table of format 1 or 2 is converted by the flush's write (a change
  ** of the schema).  At a disconnect SQLite is closing the connection or
  ** resetting its schema, and a change of it there uses freed memory: the
  ** uses of a table only read are given up instead, as the table stays as
  ** it is until its first write. */
  if( p->iFormat==1 && !bIdle ) return SQLITE_BUSY;
  if( p->iFormat<3 && bIdle ) return SQLITE_BUSY;
  acornCacheOpInit(&op, p, 0);
  rc = sqlite3_prepare_v2(p->db, "ROLLBACK", -1, &pRollback, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(p->db, "SAVEPOINT acorn_cache_flush", 0, 0, 0);
  }
  if( rc==SQLITE_OK && bIdle && !cacheSchemaCurrent(p) ) rc = SQLITE_SCHEMA;
  if( rc==SQLITE_OK ) rc = acornCacheOpBegin(&op, p, 0, 0);
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(&op);
  if( rc==SQLITE_OK ) rc = acornCacheConfigSave(&op);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(p->db, "RELEASE acorn_cache_flush", 0, 0, 0);
  }
  if( rc==SQLITE_OK ){
    acornCacheTxnWritten(&p->txn, &p->uses);
  }else{
    if( pRollback && !sqlite3_get_autocommit(p->db) ) sqlite3_step(pRollback);
    acornCacheChunkDropAll(p);
    acornCacheHeldForget(p);
  }
  sqlite3_finalize(pRollback);
  sqlite3_free(op.zErr);       /* nobody reads it: the caller carries on */
  return rc;
}

/* Record a use of entry id at time ms (lru only). */
void acornCacheTouch(cache_table *p, i64 id, i64 ms){
  if( p->ePolicy==CACHE_POLICY_FIFO || p->bGone ) return;
  /* A use of an entry that the transaction a DROP TABLE took from this
  ** table may have made would outlive a rollback of it unseen, and land on
  ** the entry given that id next: not kept. */
  if( acornCacheDropEnd(p) && id>p->txn.iDropSeq ) return;
  if( !acornCacheUsesAdd(&p->uses, id, ms) ) return;
  if( p->uses.nUse>=p->nNextFlush && p->opts.bAutoflush ){
    if( acornCacheFlushStandalone(p, 0)==SQLITE_OK ){
      p->nNextFlush = p->opts.nBufferMax;
    }else{
      p->nNextFlush = p->uses.nUse + p->opts.nBufferMax;
    }
  }
}

/* -------------------------------------------------------- transactions */

/* p joins the connection's transaction.  What the last transaction left
** held is good if nobody wrote since.  The mark a DROP TABLE left
** (iDropSeq) becomes the transaction's first write: a rollback of it drops
** the uses of entries made after that (it may be the same transaction). */
void acornCacheTableJoin(cache_table *p){
  acornCacheHeldValidate(p);
  p->txn.bOpen = 1;
  p->txn.iLevel = -1;
  p->held.nCfgSaved = 0;
  if( acornCacheDropEnd(p) ){
    i64 iDropSeq = p->txn.iDropSeq;
    p->txn.bDrop = 0;
    p->txn.iDropSeq = LLONG_MAX;
    if( iDropSeq<0 ){
      p->txn.bLevelLost = 1;
    }else if( iDropSeq<LLONG_MAX ){
      acornCacheTxnNoteWrite(&p->txn, iDropSeq);
    }
  }
  acornCacheTableCheck(p);
}

/* The transaction is over.  Committed, the config row and the chunks held
** stay good as long as the file's data version stays what it is now. */
void acornCacheTableTxnEnd(cache_table *p, int bCommit){
  if( bCommit ){
    if( p->held.eCfg==CACHE_CFG_DIRTY ) p->held.eCfg = CACHE_CFG_NONE;  /* not synced */
    if( sqlite3_file_control(p->db, p->zDb, SQLITE_FCNTL_DATA_VERSION,
                             &p->seen.iVersion) ){
      acornCacheHeldForget(p);
    }else if( p->seen.iNotedVersion>=0 ){
      p->seen.iNotedVersion = p->seen.iVersion;   /* our own commit: see
                                        ** cacheNoteVersions */
    }
  }else{
    acornCacheHeldForget(p);
  }
  acornCacheFormatStale(p, 1);
  if( bCommit ) p->bFormatStale = 0;
  p->bSetBroken = 0;
  p->held.nCfgSaved = 0;
  acornCacheTxnEnd(&p->txn);
  acornCacheTableCheck(p);
}

/* DROP TABLE inside a transaction: a ROLLBACK or ROLLBACK TO brings the
** table back (same uid), and its next instance finds the uses not written
** yet.  What the table held of the transaction goes, as in a rollback of
** it, since no xRollback may reach it now: the config row it changed (the
** restored table has the stored one), and every use of an entry made in
** the transaction (a rollback would give its id to a new entry).  A
** ROLLBACK TO brings the table back inside the transaction, which the
** mirror no longer follows: txn.bDrop says so, and iDropSeq where its
** entries begin.  Uses and counts written earlier in the transaction are
** not put back: whether the rollback undoes them is not known here. */
void acornCacheTableDropInTxn(cache_table *p){
  i64 iDropSeq = p->txn.iDropSeq;      /* an earlier DROP's, or LLONG_MAX */
  i64 iMaxId;
  p->txn.nFlushed = 0;
  p->txn.nCount = 0;
  iMaxId = acornCacheTxnRollback(&p->txn, &p->uses, -1);
  if( iMaxId<iDropSeq ) iDropSeq = iMaxId;
  acornCacheTableTxnEnd(p, 0);
  p->txn.bDrop = 1;
  p->txn.iDropSeq = iDropSeq;
}

