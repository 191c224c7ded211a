/*
** cache_func.c: the functions on cache tables, named by a string:
**
**   cache_get(table, key)                    a value, as SELECT value FROM
**                                            table WHERE key = ? reads it
**   cache_read(table, key, offset, length)   bytes of a value, read with
**                                            incremental blob I/O
**   SELECT * FROM cache_stats('table')       the table's counters
**
** (docs/cache.md specifies them.)  A name is looked up as SQL looks up a
** table name, the table connected if it is not yet, and its cache_table
** used with a reference held: SQLite may disconnect the instance while the
** function runs (another connection's DDL makes it prepare its statements
** again), the cache_table stays.
**
** cache_get is a get, so it must cost about what a get costs: looking the
** name up (a metadata query per schema, the config row) would double it.
** The connection remembers what a few names named (cache_conn.aName) and
** uses that again while nothing can have changed it: the table is live and
** its statements are the same, no schema searched before the table's can
** hold a table of that name (cacheNameKnown), and its own schema did not
** change, which SQLite reports by preparing the table's GET statement again
** as it steps (SQLITE_STMTSTATUS_REPREPARE: then the result is dropped and
** the name looked up).  Anything else goes the long way, as cache_read.
*/
#include "cacheInt.h"

static cache_vtab *cacheLookup(cache_conn *pConn, const char *zDb, int nDb,
                               const char *zName){
  cache_vtab *p;
  assert( zDb!=0 && nDb>=0 && zName!=0 );
  for(p=pConn->pVtabList; p; p=p->pNext){     /* newest first */
    assert( p->zDb!=0 && p->zName!=0 );  /* (an instance is listed whole) */
    if( sqlite3_strnicmp(p->zDb, zDb, nDb)==0 && p->zDb[nDb]==0
     && sqlite3_stricmp(p->zName, zName)==0 ){
      break;
    }
  }
  return p;
}

/* What a name that is no cache table names, found by cacheFind(): the
** schema of the table or view of that name SQL would take (0 if none),
** and the error of connecting it, if connecting failed. */
typedef struct cache_found cache_found;
struct cache_found {
  char *zDb;            /* schema of the object found, or 0 */
  const char *zName;    /* its name as given (in the caller's string) */
  char *zErr;           /* why it could not be connected, or 0 */
  int bExists;          /* a table (or view) of the name looked for exists */
  int rc;               /* SQLITE_NOMEM, or the error of reading a schema */
};

static void cacheFoundClear(cache_found *pF){
  sqlite3_free(pF->zDb);
  sqlite3_free(pF->zErr);
  memset(pF, 0, sizeof(*pF));
}

/* Is there a view named zName in schema zDb?  sqlite3_table_column_metadata
** does not see views, while SQL takes one as it takes a table.  *pRc is
** set to SQLITE_NOMEM if the query ran out of memory. */
static int cacheViewIn(sqlite3 *db, const char *zDb, const char *zName,
                       int *pRc){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema"
      " WHERE type='view' AND name=%Q COLLATE NOCASE", zDb, zName);
  int rc, bView = 0;
  assert( db!=0 && zDb!=0 && zName!=0 && pRc!=0 );
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    bView = sqlite3_step(pStmt)==SQLITE_ROW;
    rc = sqlite3_finalize(pStmt);
  }
  if( (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
  sqlite3_free(zSql);
  return bView;
}

/* The cache table zDb.zName, connected first if need be (preparing a
** statement that names it calls xConnect), or 0 if that is no cache table.
** pF->bExists is set if there is a table of that name (with bView, a view
** too); then pF says where, and why connecting failed if it did.  pF->rc
** is set to SQLITE_NOMEM if the lookup ran out of memory, or to the error
** of reading the schema, with its message in pF->zErr (then 0 says
** nothing). */
static cache_vtab *cacheFindIn(cache_conn *pConn, const char *zDb, int nDb,
                               const char *zName, int bView, cache_found *pF){
  sqlite3 *db = pConn->db;
  cache_vtab *p = 0;
  char *zSchema = sqlite3_mprintf("%.*s", nDb, zDb);
  int *pbExists = &pF->bExists, *pRc = &pF->rc;
  int rc;
  /* (cacheFind looks on only while nothing is found and nothing failed) */
  assert( *pRc==SQLITE_OK );
  assert( pF->zDb==0 && pF->zErr==0 );
  *pbExists = 0;
  if( zSchema==0 ){
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  rc = sqlite3_table_column_metadata(db, zSchema, zName, 0, 0, 0, 0, 0, 0);
  if( rc==SQLITE_OK ){
    *pbExists = 1;
    p = cacheLookup(pConn, zDb, nDb, zName);
    if( p==0 ){
      char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" LIMIT 0",
                                   zSchema, zName);
      sqlite3_stmt *pStmt = 0;
      rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      p = cacheLookup(pConn, zDb, nDb, zName);
      if( p==0 && (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
      if( p==0 && rc!=SQLITE_OK ){
        pF->zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
      }
    }
  }else if( (rc&0xff)==SQLITE_NOMEM ){
    *pRc = SQLITE_NOMEM;
  }else if( rc!=SQLITE_ERROR ){
    /* not a missing table: the schema could not be read (a WAL file whose
    ** -shm cannot be made, a locked or corrupt file, ...) */
    pF->zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    *pRc = pF->zErr ? rc : SQLITE_NOMEM;
  }else if( bView ){
    *pbExists = cacheViewIn(db, zSchema, zName, pRc);
  }
  if( *pbExists && p==0 ){
    pF->zDb = zSchema;
    pF->zName = zName;
    zSchema = 0;
  }
  assert( p==0 || (*pbExists && *pRc==SQLITE_OK) );
  sqlite3_free(zSchema);
  return p;
}

/* The cache table that SQL would take for zName: a bare name is looked up
** as SQLite does (temp, main, then attached databases in order), and
** names a cache table only if the table or view found is one; then
** "schema.name".  0 if there is none, or if the lookup failed: then *pRc
** says why (SQLITE_NOMEM, or a schema that could not be read, the message
** in pF->zErr; it is SQLITE_OK after a plain miss), and pF what the name
** names instead, if anything.  Views are looked for (a
** query: tables are found without one) in a temp schema that is open and
** in the others, but only for a name without a dot: for 'aux.t', a view
** named so is seen only when no cache table aux.t exists. */
static cache_vtab *cacheFind(cache_conn *pConn, const char *zName,
                             cache_found *pF, int *pRc){
  sqlite3 *db = pConn->db;
  const char *zDot = strchr(zName, '.');
  sqlite3_stmt *pList = 0;
  int i, rc, bTempFirst = 0;
  cache_vtab *p = 0;
  assert( zName!=0 && pF!=0 && pRc!=0 );  /* (cacheResolve: a name given) */
  *pRc = SQLITE_OK;
  memset(pF, 0, sizeof(*pF));
  if( SQLITE_VERSION_NUMBER<3039000 || sqlite3_libversion_number()<3039000 ){
    /* sqlite3_db_name() is 3.39: its slot in an older library's API table
    ** is NULL (calling it would jump to address 0).  The pragma lists the
    ** same schemas: main, temp (once it exists), then attached ones, in
    ** the order of their index; temp is looked in first, below.  (The
    ** pragma itself: the table-valued pragma_database_list would begin a
    ** read transaction, before a cache_write's write lock.) */
    bTempFirst = sqlite3_db_filename(db, "temp")!=0;
    rc = sqlite3_prepare_v2(db, "PRAGMA database_list", -1, &pList, 0);
    if( rc ){
      /* (the schema could not be read: a statement on a table of its own
      ** says so as it is prepared) */
      sqlite3_finalize(pList);
      if( (rc&0xff)!=SQLITE_NOMEM ){
        pF->zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
        if( pF->zErr==0 ) rc = SQLITE_NOMEM;
      }
      *pRc = rc;
      return 0;
    }
  }
  for(i=0; ; i++){
    const char *zDb;
    int bView;
    if( pList && i==0 && bTempFirst ){
      zDb = "temp";
    }else if( pList ){
      do{
        rc = sqlite3_step(pList);
        zDb = rc==SQLITE_ROW ? (const char*)sqlite3_column_text(pList, 1) : 0;
      }while( zDb && sqlite3_stricmp(zDb, "temp")==0 );
      if( (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
    }else{
#if SQLITE_VERSION_NUMBER>=3039000
      zDb = sqlite3_db_name(db, i<2 ? i^1 : i);
#else
      zDb = 0;
#endif
    }
    if( zDb==0 ) break;
    assert( *pRc==SQLITE_OK && pF->rc==SQLITE_OK );
    bView = zDot==0 && (sqlite3_stricmp(zDb, "temp")!=0
                        || sqlite3_db_filename(db, "temp")!=0);
    p = cacheFindIn(pConn, zDb, (int)strlen(zDb), zName, bView, pF);
    *pRc = pF->rc;
    if( pF->bExists || *pRc ) break;
  }
  sqlite3_finalize(pList);
  if( pF->bExists || *pRc ) return p;
  if( zDot ){
    assert( zDot>=zName && *pRc==SQLITE_OK );
    p = cacheFindIn(pConn, zName, (int)(zDot-zName), zDot+1, 1, pF);
    *pRc = pF->rc;
  }
  assert( p==0 || *pRc==SQLITE_OK );
  return p;
}

/* Does SQL find a table (or view, or table-valued function) named zTab,
** "name" or "schema.name"?  Preparing a statement that names it loads the
** schemas again if they changed since this connection read them. */
static int cacheNameInSql(sqlite3 *db, const char *zTab){
  const char *zDot = strchr(zTab, '.');
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc;
  if( zDot ){
    zSql = sqlite3_mprintf("SELECT 1 FROM \"%.*w\".\"%w\" LIMIT 0",
                           (int)(zDot-zTab), zTab, zDot+1);
  }else{
    zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 0", zTab);
  }
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return rc==SQLITE_OK;
}

/* The message for a name zTab that names no cache table, as pF found it:
** what the name names, or that it names nothing.  0 if memory ran out. */
static char *cacheNotFoundMsg(sqlite3 *db, const char *zWho, const char *zTab,
                              const cache_found *pF){
  sqlite3_stmt *pStmt = 0;
  const char *zWhat = "a table";
  char *zSql, *zMsg;
  int rc;
  assert( db!=0 && zWho!=0 && pF!=0 );
  assert( pF->zDb==0 || pF->zName!=0 );    /* cacheFindIn sets both */
  if( pF->zErr ){
    return sqlite3_mprintf("%s: cannot open %Q: %s", zWho, zTab, pF->zErr);
  }
  if( pF->zDb==0 ){
    /* nothing in a schema; a table-valued function (bench_insert,
    ** pragma_table_info ...) is no table of one, but SQL takes it */
    zSql = zTab && strchr(zTab, '.')==0
         ? sqlite3_mprintf("SELECT 1 FROM \"%w\" LIMIT 0", zTab) : 0;
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_ERROR;
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK ){
      return sqlite3_mprintf("%s: %Q is a table-valued function, not a cache"
                             " table", zWho, zTab);
    }
    return sqlite3_mprintf("%s: no such table: %Q", zWho, zTab);
  }
  zSql = sqlite3_mprintf("SELECT type, sql LIKE 'CREATE VIRTUAL TABLE%%'"
      " FROM \"%w\".sqlite_schema WHERE type IN ('table', 'view')"
      " AND name=%Q COLLATE NOCASE", pF->zDb, pF->zName);
  rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    if( zType && strcmp(zType, "view")==0 ){
      zWhat = "a view";
    }else if( sqlite3_column_int(pStmt, 1) ){
      zWhat = "a virtual table of another module";
    }
  }
  zMsg = sqlite3_mprintf("%s: %Q is %s, not a cache table", zWho, zTab, zWhat);
  sqlite3_finalize(pStmt);
  return zMsg;
}

/* What a cache_write() did to write under the write lock: whether it began
** a savepoint (in autocommit: the call's own transaction). */
typedef struct cache_lock cache_lock;
struct cache_lock {
  int bSavepoint;       /* SAVEPOINT acorn_cache_write is open: the caller
                        ** releases it (or rolls it back) */
};

/* Run statement iStmt of the table p (its prepared one, kept), or, with
** no p (an instance not bound yet, a table not found), the same text run
** once, for the table zDb.zName (0 for a savepoint's statement or
** ROLLBACK). */
static int cacheRunFor(sqlite3 *db, cache_table *p, const char *zDb,
                       const char *zName, int iStmt){
  int rc;
  if( p ){
    cache_op op;
    sqlite3_stmt *pStmt = 0;
    acornCacheOpInit(&op, p, 0);
    rc = acornCacheStmt(&op, iStmt, &pStmt);
    if( rc==SQLITE_OK ) rc = acornCacheRun(&op, pStmt);
    sqlite3_free(op.zErr);         /* (the caller reads sqlite3_errmsg) */
  }else{
    char *z;
    assert( iStmt!=CACHE_STMT_WRITE_LOCK || (zDb!=0 && zName!=0) );
    z = acornCacheStmtSql(iStmt, zDb ? zDb : "", zName ? zName : "");
    rc = z ? sqlite3_exec(db, z, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(z);
  }
  return rc;
}

/* In autocommit, with no writing statement running, begin the savepoint
** that makes a cache_write() a transaction of its own (*pLock notes it). */
static int cacheWriteBegin(sqlite3 *db, cache_table *p, cache_lock *pLock){
  int rc = SQLITE_OK;
  if( !pLock->bSavepoint && sqlite3_get_autocommit(db)
   && !acornCacheStmtBusy(db, 1) ){
    rc = cacheRunFor(db, p, 0, 0, CACHE_STMT_WRITE_BEGIN);
    if( rc==SQLITE_OK ) pLock->bSavepoint = 1;
  }
  return rc;
}

/* Take the write lock of the schema of the cache table pVtab before
** anything of it is read, as an UPDATE's statement does as it begins:
** under the busy handler.  A read first would start a transaction on a
** snapshot that a write may not extend (SQLITE_BUSY_SNAPSHOT in WAL mode,
** a deadlock refused at once with a rollback journal): SQLite refuses it
** without calling the busy handler.  In autocommit, with no writing
** statement running, the call gets its own transaction (a savepoint) so
** that the lookup and the write are one; a write statement running (an
** INSERT ... SELECT cache_write(...)) already holds a transaction it joins.
** SQLITE_OK, or the error with its message in *pzErr (0 if out of memory). */
static int cacheWriteLock(sqlite3 *db, cache_vtab *pVtab, const char *zWho,
                          cache_lock *pLock, char **pzErr){
  cache_table *p = pVtab->pTab;
  char *zDb = sqlite3_mprintf("%s", pVtab->zDb);
  char *zName = sqlite3_mprintf("%s", pVtab->zName);
  int rc = zDb && zName ? SQLITE_OK : SQLITE_NOMEM;
  assert( p==0 || !p->bGone );
  assert( sqlite3_txn_state(db, pVtab->zDb)!=SQLITE_TXN_WRITE );
  /* Statements may reload the schema and disconnect pVtab: from here on
  ** only p (a reference held) and the copies of its names are used. */
  if( p ) acornCacheTableRef(p);
  if( rc==SQLITE_OK ) rc = cacheWriteBegin(db, p, pLock);
  if( rc==SQLITE_OK ){
    rc = cacheRunFor(db, p, zDb, zName, CACHE_STMT_WRITE_LOCK);
  }
  if( rc!=SQLITE_OK && (rc&0xff)!=SQLITE_NOMEM ){
    *pzErr = sqlite3_mprintf("%s: %s", zWho, sqlite3_errmsg(db));
  }
  if( p ) acornCacheTableUnref(p);
  sqlite3_free(zDb);
  sqlite3_free(zName);
  return rc;
}

/* The cache_table of the instance pVtab in *pp, with a reference for the
** caller: the one it is bound to, or the stored table opened (read: which
** may make SQLite load the schema again and disconnect pVtab, so only
** copies of what it holds are used).  SQLITE_OK, or the error with its
** message in *pzErr. */
static int cacheVtabTable(cache_conn *pConn, cache_vtab *pVtab,
                          cache_table **pp, char **pzErr){
  char *zDb, *zName;
  cache_opts opts = pVtab->opts;
  int rc;
  assert( pVtab->pTab==0 || !pVtab->pTab->bGone );
  if( pVtab->pTab ){
    *pp = pVtab->pTab;
    acornCacheTableRef(*pp);
    return SQLITE_OK;
  }
  zDb = sqlite3_mprintf("%s", pVtab->zDb);
  zName = sqlite3_mprintf("%s", pVtab->zName);
  rc = zDb && zName ? acornCacheTableOpen(pConn, zDb, zName, &opts, pp, pzErr)
                    : SQLITE_NOMEM;
  sqlite3_free(zDb);
  sqlite3_free(zName);
  return rc;
}

/* The cache table named zTab, bound, with its config row read into op->cfg
** (op is begun for it) and a reference for the caller, who gives it back
** with acornCacheTableUnref().  A table whose name another table has now
** (dropped, or dropped and created again, by another connection) is
** retired and the name looked up once more.  0 with op->zErr if there is
** none; 0 without a message if memory ran out. */
static cache_table *cacheResolve(cache_conn *pConn, const char *zTab,
                                 const char *zWho, cache_op *op,
                                 cache_lock *pLock){
  cache_found found;
  int i, nLock = 0, bFresh = 0, rc = SQLITE_OK;
  char *zErr = 0;
  assert( pConn!=0 && zWho!=0 && op!=0 );
  acornCacheOpInit(op, 0, 0);
  memset(&found, 0, sizeof(found));
  for(i=0; i<2; i++){
    cache_vtab *pVtab;
    cache_table *p = 0;
    cacheFoundClear(&found);
    pVtab = zTab ? cacheFind(pConn, zTab, &found, &rc) : 0;
    if( pVtab==0 && rc ){
      /* what kept the name from being looked up */
      zErr = sqlite3_mprintf("%s: %s", zWho, found.zErr);
      goto resolve_failed;
    }
    if( pVtab==0 && !found.bExists && !bFresh && zTab ){
      /* Nothing of that name in the schemas as this connection holds
      ** them, which may be out of date (another connection made the table
      ** since): preparing a statement that names it checks, and loads
      ** them again if so. */
      bFresh = 1;
      if( cacheNameInSql(pConn->db, zTab) ){
        i--;
        continue;
      }
    }
    if( pVtab==0 ) break;
    assert( zTab!=0 && rc==SQLITE_OK );
    if( pVtab->pTab && pVtab->pTab->bGone ){
      /* (an instance SQLite has not disconnected yet, of the table that had
      ** the name: bound again at its next use) */
      acornCacheTableUnref(pVtab->pTab);
      pVtab->pTab = 0;
    }
    if( pLock && nLock<2
     && sqlite3_txn_state(pConn->db, pVtab->zDb)!=SQLITE_TXN_WRITE ){
      /* The write lock first; the step that takes it may make SQLite load
      ** the schema again and disconnect pVtab: look the name up again. */
      nLock++;
      rc = cacheWriteLock(pConn->db, pVtab, zWho, pLock, &zErr);
      if( rc ) goto resolve_failed;
      i--;
      continue;
    }
    rc = cacheVtabTable(pConn, pVtab, &p, &zErr);
    if( rc ) goto resolve_failed;
    assert( p!=0 && p->nRef>0 && !p->bGone );
    acornCacheOpInit(op, p, 0);
    op->zWho = zWho;
    op->now = acornCacheNowMs();
    acornCacheHeldCheck(p);
    rc = acornCacheConfigLoad(op);
    /* (an op of no instance is not moved to another table: bChanged) */
    assert( op->pTab==p && op->pVtab==0 );
    if( rc==SQLITE_OK && !op->bChanged ) return p;
    acornCacheTableUnref(p);
    if( (rc&0xff)==SQLITE_NOMEM ){
      sqlite3_free(op->zErr);
      op->zErr = 0;
      return 0;
    }
    if( rc!=SQLITE_OK && (rc&0xff)!=SQLITE_ERROR ) return 0;
    sqlite3_free(op->zErr);      /* gone or another table: look again */
    op->zErr = 0;
  }
  /* no cache table of that name now, or still another one after looking
  ** again */
  sqlite3_free(op->zErr);
  op->zErr = cacheNotFoundMsg(pConn->db, zWho, zTab, &found);
  op->rcErr = SQLITE_ERROR;
  cacheFoundClear(&found);
  return 0;

resolve_failed:
  /* out of memory: no message */
  assert( rc!=SQLITE_OK && op->zErr==0 );
  if( (rc&0xff)==SQLITE_NOMEM ){
    sqlite3_free(zErr);
  }else{
    op->zErr = zErr;
    op->rcErr = rc;
  }
  cacheFoundClear(&found);
  return 0;
}

/* The table argument of a function (zWho) in *pzTab: a name as SQL
** writes it, taken whole.  NULL and numbers go on as their text (NULL names
** nothing: "no such table"); a BLOB, or TEXT with a NUL byte inside (which
** would name the table before the NUL), is an error with its message in
** *pzErr; SQLITE_NOMEM. */
static int cacheTableArg(sqlite3_value *v, const char *zWho, const char **pzTab,
                         char **pzErr){
  int e = sqlite3_value_type(v), rc;
  assert( v!=0 && zWho!=0 && pzTab!=0 && pzErr!=0 );
  *pzTab = 0;
  *pzErr = 0;
  if( e==SQLITE_NULL ) return SQLITE_OK;
  if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ){
    *pzTab = (const char*)sqlite3_value_text(v);
    return *pzTab ? SQLITE_OK : SQLITE_NOMEM;
  }
  rc = acornCacheTextArg(v, pzTab);
  if( rc==SQLITE_MISMATCH ){
    *pzErr = sqlite3_mprintf(e==SQLITE_BLOB
        ? "%s: the table must be named by TEXT, got a BLOB"
        : "%s: a table name cannot hold a NUL byte", zWho);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  assert( (rc==SQLITE_OK)==(*pzTab!=0) );
  return rc;
}

/* Set the error of a function from cacheTableArg() (or any rc with a
** message or none). */
static void cacheResultError(sqlite3_context *ctx, int rc, char *zErr){
  assert( rc!=SQLITE_OK );
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    if( zErr ) sqlite3_result_error(ctx, zErr, -1);
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zErr);
}

/* ------------------------------------------------------- names known */

/* The table zTab named when cache_get() or cache_write() (eKind) last
** looked it up, if it surely names that table still, as cacheFind() would
** find it now: the table is not retired, its statements were not
** finalized (a rename, a drop, a conversion) and no table can have taken
** the name in a schema searched before it (eWhere).  A change of its own
** schema is seen as the function's statement steps (SQLite prepares it
** again: cacheGetStep, cacheWriteKnown).  In *ppName the slot.  (The slots
** are cache_table.c's, which notes and forgets them: this only reads them,
** here, where cache_get inlines it.) */
static cache_table *cacheNameKnown(cache_conn *pConn, const char *zTab,
                                   int eKind, cache_name **ppName){
  int i;
  if( zTab==0 ) return 0;
  for(i=0; i<CACHE_NNAME; i++){
    cache_name *n = &pConn->aName[i];
    cache_table *p = n->pTab;
    if( n->zName==0 || strcmp(n->zName, zTab)!=0 ) continue;
    static const int aStmtOf[CACHE_NAME_NKIND] = {
      CACHE_STMT_GET, CACHE_STMT_WRITE_LOCK, CACHE_STMT_FIND_LIVE
    };
    if( p->bGone || p->st.iGen!=n->iStmtGen || n->anReprepare[eKind]<0
     || p->st.aStmt[aStmtOf[eKind]]==0 ){
      return 0;
    }
    if( n->eWhere!=CACHE_NAME_TEMP
     && sqlite3_db_filename(pConn->db, "temp")!=0 ){
      return 0;                          /* temp is open: it may have one */
    }
#if SQLITE_VERSION_NUMBER>=3039000
    if( n->eWhere==CACHE_NAME_ALONE && sqlite3_db_name(pConn->db, 2)!=0 ){
      return 0;
    }
#endif
    *ppName = n;
    return p;
  }
  return 0;
}

/* ----------------------------------------------------------- cache_read */

/* The key and offset arguments of cache_read and cache_write (zWho): the
** key checked, the offset a non-negative integer.  0 if they are good,
** else the error is set on ctx. */
static int cacheKeyOffsetArgs(sqlite3_context *ctx, const char *zWho,
                              sqlite3_value **argv, i64 *piOff){
  char *zErr = 0;
  int rc = acornCacheCheckKey(zWho, argv[1], &zErr);
  assert( piOff!=0 );
  if( rc ){
    if( zErr ) sqlite3_result_error(ctx, zErr, -1);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zErr);
    return 1;
  }
  if( !acornCacheWholeNumber(argv[2], piOff) || *piOff<0 ){
    acorn_result_error(ctx, "%s: offset must be a non-negative integer", zWho);
    return 1;
  }
  return 0;
}

/* The arguments of cache_read: the key checked, offset and length as
** integers.  0 if they are good, else the error is set on ctx. */
static int cacheReadArgs(sqlite3_context *ctx, sqlite3_value **argv,
                         i64 *piOff, i64 *pnLen){
  assert( piOff!=0 && pnLen!=0 );
  if( cacheKeyOffsetArgs(ctx, "cache_read", argv, piOff) ) return 1;
  if( !acornCacheWholeNumber(argv[3], pnLen) || *pnLen<0 ){
    acorn_result_error(ctx, "cache_read: length must be a non-negative integer");
    return 1;
  }
  assert( *piOff>=0 && *pnLen>=0 );
  return 0;
}

/* The result of cache_read: bytes iOff..iOff+nLen-1 of the value of entry
** id, read with incremental blob I/O.  SQLITE_OK on success (a result is
** set either way). */
static int cacheReadBlob(sqlite3_context *ctx, cache_table *p, i64 id,
                         i64 iOff, i64 nLen){
  sqlite3_blob *pBlob = 0;
  unsigned char *aBuf;
  char *zData = sqlite3_mprintf("%s_data", p->zName);
  i64 nTotal;
  int rc;
  assert( p!=0 && id!=0 && iOff>=0 && nLen>=0 );   /* (cacheReadArgs) */
  if( zData==0 ){
    sqlite3_result_error_nomem(ctx);
    return SQLITE_NOMEM;
  }
  rc = sqlite3_blob_open(p->db, p->zDb, zData, "value", id, 0, &pBlob);
  sqlite3_free(zData);
  if( rc ){
    acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(p->db));
    sqlite3_blob_close(pBlob);
    return rc;
  }
  nTotal = sqlite3_blob_bytes(pBlob);
  if( iOff>=nTotal ){
    nLen = 0;
  }else if( nLen>nTotal-iOff ){
    nLen = nTotal-iOff;
  }
  /* what is read lies inside the value: the int casts below are exact */
  assert( nLen>=0 && (nLen==0 || (iOff<nTotal && nLen<=nTotal-iOff)) );
  assert( nTotal<=INT_MAX );
  if( nLen==0 ){
    sqlite3_result_zeroblob(ctx, 0);
  }else if( (aBuf = sqlite3_malloc64((sqlite3_uint64)nLen))==0 ){
    rc = SQLITE_NOMEM;
    sqlite3_result_error_nomem(ctx);
  }else if( (rc = sqlite3_blob_read(pBlob, aBuf, (int)nLen, (int)iOff))!=0 ){
    sqlite3_free(aBuf);
    acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(p->db));
  }else{
    sqlite3_result_blob64(ctx, aBuf, (sqlite3_uint64)nLen, sqlite3_free);
  }
  sqlite3_blob_close(pBlob);
  return rc;
}

/* cache_read's lookup of pKey in the table zTab names: that table (with a
** reference for the caller, op begun for it), its FIND_LIVE stepped and
** not reset in *ppStmt (its read transaction keeps the entry until the
** value is read), the live entry's id in *pId (0: none).  The table the
** name named last time is used again if cacheNameKnown() says it may be
** and FIND_LIVE, as it steps, shows that the schema did not change (SQLite
** did not prepare it again) and that the table is the same (its uid);
** else the name is looked up.  The error in *pRc and op->zErr (none: out
** of memory); the table may be returned with it. */
static cache_table *cacheReadFind(cache_conn *pConn, const char *zTab,
                                  sqlite3_value *pKey, cache_op *op,
                                  sqlite3_stmt **ppStmt, i64 *pId, int *pRc){
  cache_name *n = 0;
  cache_table *p = cacheNameKnown(pConn, zTab, CACHE_NAME_READ, &n);
  int i;
  *pId = 0;
  *ppStmt = 0;
  acornCacheOpInit(op, 0, 0);
  for(i=p ? 0 : 1; i<2; i++){
    int nKnown = -1, nBefore, rc;
    if( i==0 ){
      assert( p!=0 && n!=0 && n->pTab==p );
      nKnown = n->anReprepare[CACHE_NAME_READ];
      acornCacheTableRef(p);
      acornCacheOpInit(op, p, 0);
      op->zWho = "cache_read";
      op->now = acornCacheNowMs();
    }else if( (p = cacheResolve(pConn, zTab, "cache_read", op, 0))==0 ){
      *pRc = op->zErr ? op->rcErr : SQLITE_NOMEM;
      return 0;
    }
    rc = acornCacheStmt(op, CACHE_STMT_FIND_LIVE, ppStmt);
    if( rc ){
      *pRc = rc;
      return p;
    }
    nBefore = sqlite3_stmt_status(*ppStmt, SQLITE_STMTSTATUS_REPREPARE, 0);
    acornCacheBindKey(*ppStmt, 1, pKey);
    sqlite3_bind_int64(*ppStmt, 2, op->now);
    rc = sqlite3_step(*ppStmt);
    if( i==0 && (rc!=SQLITE_ROW || nBefore!=nKnown
     || sqlite3_stmt_status(*ppStmt, SQLITE_STMTSTATUS_REPREPARE, 0)!=nKnown
     || sqlite3_column_int64(*ppStmt, 0)!=p->uid) ){
      /* the schema changed, or the table, or the step failed: the name is
      ** looked up (a failure that stays is reported then) */
      sqlite3_reset(*ppStmt);
      *ppStmt = 0;
      acornCacheTableUnref(p);
      p = 0;
      continue;
    }
    if( rc==SQLITE_ROW ){
      *pId = sqlite3_column_int64(*ppStmt, 1);
      if( i==1 ){
        acornCacheNameNote(pConn, zTab, p, CACHE_NAME_READ, nBefore);
      }
      rc = SQLITE_OK;
    }else{
      rc = acornCacheOpError(op, sqlite3_reset(*ppStmt));
    }
    *pRc = rc;
    return p;
  }
  return 0;         /* not reached */
}

/* cache_read(table, key, offset, length): a use of the entry, or a miss. */
static void cacheReadFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  cache_conn *pConn = (cache_conn*)sqlite3_user_data(ctx);
  cache_table *p;
  cache_op op;
  sqlite3_stmt *pStmt = 0;
  i64 iOff, nLen, id = 0;
  int rc;
  (void)argc;
  const char *zTab = 0;
  char *zErr = 0;
  assert( argc==4 && pConn!=0 );       /* as registered */
  if( cacheReadArgs(ctx, argv, &iOff, &nLen) ) return;
  rc = cacheTableArg(argv[0], "cache_read", &zTab, &zErr);
  if( rc ){
    cacheResultError(ctx, rc, zErr);
    return;
  }
  p = cacheReadFind(pConn, zTab, argv[1], &op, &pStmt, &id, &rc);
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc ){
    if( op.zErr ) sqlite3_result_error(ctx, op.zErr, -1);
    sqlite3_result_error_code(ctx, rc);
  }else if( id==0 ){
    assert( p!=0 && p->nRef>0 );
    if( p->ePolicy==CACHE_POLICY_LRU ) p->uses.nMiss++;  /* NULL: a miss */
  }else if( cacheReadBlob(ctx, p, id, iOff, nLen)==SQLITE_OK ){
    acornCacheTouch(p, id, op.now);
  }
  /* FIND_LIVE is reset only now: its read transaction kept the entry from
  ** being deleted by another connection until the value was read. */
  if( pStmt ) sqlite3_reset(pStmt);
  sqlite3_free(op.zErr);
  if( p ) acornCacheTableUnref(p);
}

/* ---------------------------------------------------------- cache_write */

/* The arguments of cache_write: the key checked, the offset an integer,
** the data a BLOB.  0 if they are good, else the error is set on ctx. */
static int cacheWriteArgs(sqlite3_context *ctx, sqlite3_value **argv,
                          i64 *piOff){
  int eData = sqlite3_value_type(argv[3]);
  if( cacheKeyOffsetArgs(ctx, "cache_write", argv, piOff) ) return 1;
  if( eData!=SQLITE_BLOB ){
    acorn_result_error(ctx, "cache_write: data must be a BLOB, got %s",
                       acornCacheTypeName(eData));
    return 1;
  }
  return 0;
}

/* Write data at iOff into the value of entry id of p, in place, with
** incremental blob I/O: only the pages the bytes fall on are written.
** The value's size does not change: a write past its end is refused.
** SQLITE_OK, or the error on op. */
static int cacheWriteBlob(cache_op *op, i64 id, i64 iOff,
                          sqlite3_value *pData){
  cache_table *p = op->pTab;
  sqlite3_blob *pBlob = 0;
  char *zData = sqlite3_mprintf("%s_data", p->zName);
  int nData = sqlite3_value_bytes(pData);
  const void *aData = sqlite3_value_blob(pData);
  i64 nTotal;
  int rc;
  assert( id!=0 && iOff>=0 && nData>=0 );
  if( zData==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  if( nData>0 && aData==0 ){
    sqlite3_free(zData);
    return acornCacheOpError(op, SQLITE_NOMEM);
  }
  rc = sqlite3_blob_open(p->db, p->zDb, zData, "value", id, 1, &pBlob);
  sqlite3_free(zData);
  if( rc ){
    rc = acornCacheOpError(op, rc);
  }else if( iOff>(nTotal = sqlite3_blob_bytes(pBlob))-nData ){
    /* (not iOff+nData>nTotal: iOff may be as large as an i64 holds) */
    rc = acornCacheOpFail(op, SQLITE_ERROR, "cache_write: cannot write %d"
        " bytes at offset %lld: the value holds %lld bytes (a value keeps"
        " the size it was set with)", nData, iOff, nTotal);
  }else if( nData>0 ){
    /* inside the value: the int cast is exact */
    assert( iOff<=nTotal-nData && nTotal<=INT_MAX );
    rc = acornCacheOpError(op, sqlite3_blob_write(pBlob, aData, nData,
                                                  (int)iOff));
  }
  sqlite3_blob_close(pBlob);
  return rc;
}

/* The fast way to the table zTab names for cache_write: the table the name
** named last time, if cacheNameKnown() says it is still, and its schema
** did not change since, which its WRITE_LOCK statement, stepped to take
** the write lock, says (SQLite prepared it again if the schema changed).
** Then the table, with a reference for the caller, op begun for it.  0 if
** the name must be looked up (cacheResolve: the lock may be held already,
** the savepoint begun, as *pLock says), or on an error: *pRc, the message
** in op->zErr. */
static cache_table *cacheWriteKnown(cache_conn *pConn, const char *zTab,
                                    const char *zWho, cache_op *op,
                                    cache_lock *pLock, int *pRc){
  sqlite3 *db = pConn->db;
  cache_name *n = 0;
  cache_table *p = cacheNameKnown(pConn, zTab, CACHE_NAME_WRITE, &n);
  int nReprepare, rc;
  u64 iGen;
  *pRc = SQLITE_OK;
  acornCacheOpInit(op, 0, 0);
  if( p==0 ) return 0;
  assert( n!=0 && n->pTab==p && !p->bGone );
  nReprepare = n->anReprepare[CACHE_NAME_WRITE];
  iGen = n->iStmtGen;
  acornCacheTableRef(p);       /* (the steps below may disconnect its vtab) */
  if( p->txn.bOpen && sqlite3_txn_state(db, p->zDb)==SQLITE_TXN_WRITE ){
    /* The table is in this write transaction already: the lock is held, so
    ** only this connection could have changed the schema since, and what
    ** of that could make the name name another table (a rename, a drop, a
    ** table in temp or an attached database) cacheNameKnown() sees. */
    acornCacheOpInit(op, p, 0);
    op->zWho = zWho;
    op->now = acornCacheNowMs();
    return p;
  }
  rc = cacheWriteBegin(db, p, pLock);
  if( rc==SQLITE_OK ) rc = cacheRunFor(db, p, 0, 0, CACHE_STMT_WRITE_LOCK);
  if( rc==SQLITE_OK && !p->bGone && p->st.iGen==iGen
   && sqlite3_stmt_status(p->st.aStmt[CACHE_STMT_WRITE_LOCK],
                          SQLITE_STMTSTATUS_REPREPARE, 0)==nReprepare ){
    acornCacheOpInit(op, p, 0);
    op->zWho = zWho;
    op->now = acornCacheNowMs();
    return p;
  }
  acornCacheTableUnref(p);
  if( rc==SQLITE_ERROR ){
    /* the statement names what is gone (a rename, a drop by another
    ** connection): the name is looked up */
    rc = SQLITE_OK;
  }else if( rc!=SQLITE_OK && (rc&0xff)!=SQLITE_NOMEM ){
    op->zErr = sqlite3_mprintf("%s: %s", zWho, sqlite3_errmsg(db));
    op->rcErr = rc;
  }
  *pRc = rc;
  return 0;
}

/* The table zTab names for a function that writes (zWho: cache_write,
** cache_set), with a reference for the caller, under the write lock of its
** schema (taken before anything was read; in autocommit, in the call's own
** savepoint, as *pLock says), op begun for it.  0 with op->zErr (or none:
** out of memory) if there is none. */
static cache_table *cacheWriteTable(cache_conn *pConn, const char *zTab,
                                    const char *zWho, cache_op *op,
                                    cache_lock *pLock){
  int rc;
  cache_table *p = cacheWriteKnown(pConn, zTab, zWho, op, pLock, &rc);
  if( p || rc ) return p;
  p = cacheResolve(pConn, zTab, zWho, op, pLock);
  if( p ){
    /* Note the name, with the REPREPARE count of the statement the next
    ** call steps first (stepped now: under the lock it changes nothing). */
    sqlite3_stmt *pStmt = 0;
    rc = acornCacheStmt(op, CACHE_STMT_WRITE_LOCK, &pStmt);
    if( rc==SQLITE_OK ) rc = acornCacheRun(op, pStmt);
    if( rc==SQLITE_OK ){
      acornCacheNameNote(pConn, zTab, p, CACHE_NAME_WRITE,
          sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_REPREPARE, 0));
    }else{
      acornCacheTableUnref(p);
      p = 0;
    }
  }
  return p;
}

/* cache_write(table, key, offset, data): data written into the value of a
** live entry at offset, in place, in the caller's transaction; the number
** of bytes written.  Under lru, a use of the entry. */
static void cacheWriteFunc(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv){
  cache_conn *pConn = (cache_conn*)sqlite3_user_data(ctx);
  cache_table *p;
  cache_op op;
  cache_lock lock;
  sqlite3_stmt *pStmt = 0;
  i64 iOff, id = 0;
  int rc, eType = SQLITE_BLOB;
  const char *zTab = 0;
  char *zErr = 0;
  (void)argc;
  assert( argc==4 && pConn!=0 );       /* as registered */
  if( cacheWriteArgs(ctx, argv, &iOff) ) return;
  rc = cacheTableArg(argv[0], "cache_write", &zTab, &zErr);
  if( rc ){
    cacheResultError(ctx, rc, zErr);
    return;
  }
  memset(&lock, 0, sizeof(lock));
  p = cacheWriteTable(pConn, zTab, "cache_write", &op, &lock);
  rc = p ? acornCacheStmt(&op, CACHE_STMT_FIND_WRITE, &pStmt)
         : op.zErr ? op.rcErr : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    /* (cacheWriteTable took the write lock first) */
    assert( pStmt!=0 && sqlite3_txn_state(p->db, p->zDb)==SQLITE_TXN_WRITE );
    acornCacheBindKey(pStmt, 1, argv[1]);
    sqlite3_bind_int64(pStmt, 2, op.now);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      id = sqlite3_column_int64(pStmt, 0);
      eType = sqlite3_column_int(pStmt, 1);
    }
    rc = acornCacheOpError(&op, sqlite3_reset(pStmt));
  }
  if( rc==SQLITE_OK && id==0 ){
    rc = acornCacheOpFail(&op, SQLITE_ERROR, "cache_write: no live entry"
        " has that key in %Q (write into a value set first, e.g. INSERT"
        " ... VALUES (key, zeroblob(size)))", zTab);
  }else if( rc==SQLITE_OK && eType!=SQLITE_BLOB ){
    rc = acornCacheOpFail(&op, SQLITE_ERROR, "cache_write: the value is"
        " %s; only a BLOB value is written in place",
        acornCacheTypeName(eType));
  }else if( rc==SQLITE_OK ){
    rc = cacheWriteBlob(&op, id, iOff, argv[3]);
  }
  if( lock.bSavepoint ){
    /* the call's own transaction: committed, or undone whole */
    sqlite3 *db = pConn->db;
    int rc2;
    if( rc ) cacheRunFor(db, p, 0, 0, CACHE_STMT_WRITE_UNDO);
    rc2 = cacheRunFor(db, p, 0, 0, CACHE_STMT_WRITE_END);
    if( rc==SQLITE_OK && rc2 ){
      rc = rc2==SQLITE_NOMEM ? rc2 : acornCacheOpFail(&op, rc2,
                                  "cache_write: %s", sqlite3_errmsg(db));
    }
  }
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc ){
    if( op.zErr ) sqlite3_result_error(ctx, op.zErr, -1);
    sqlite3_result_error_code(ctx, rc);
  }else{
    sqlite3_result_int(ctx, sqlite3_value_bytes(argv[3]));
    acornCacheTouch(p, id, op.now);
  }
  sqlite3_free(op.zErr);
  if( p ) acornCacheTableUnref(p);
}

/* ------------------------------------------------------------ cache_set */

/* cache_set's table p joins the transaction the call runs in, as a write
** to the virtual table would, so that what the table holds of it (the
** config row written at the end, the recency written, undone by a
** rollback) follows it as for an INSERT.
**
** In the call's own transaction (pLock->bSavepoint: autocommit, no
** writing statement) it joins here (*pbSim), and cacheSetEnd() ends it as
** xSync and xCommit (or xRollback) would.  In a transaction of the
** caller's (a BEGIN, or a writing statement's: INSERT ... SELECT
** cache_set(...)), SQLite must call those methods when that transaction
** ends: a statement that writes the table and changes nothing (DELETE ...
** WHERE 0) makes it call xBegin now.  It is prepared each time, once a
** transaction at most: a statement kept would hold the virtual table, and
** keep the connection from closing.  So is the call's own transaction
** before SQLite 3.40, where a set that fails out of memory cannot roll it
** back (no statement steps after an allocation failed inside another):
** SQLite's own call of xSync then refuses its commit (bSetBroken). */
static int cacheSetJoin(sqlite3 *db, cache_table *p, const cache_lock *pLock,
                        cache_op *op, int *pbSim){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc;
  *pbSim = 0;
  if( p->txn.bOpen ) return SQLITE_OK;
  if( pLock->bSavepoint && sqlite3_libversion_number()>=3040000 ){
    acornCacheTableJoin(p);
    *pbSim = 1;
    return SQLITE_OK;
  }
  zSql = sqlite3_mprintf("DELETE FROM \"%w\".\"%w\" WHERE 0", p->zDb, p->zName);
  if( zSql==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt);
  }
  rc = acornCacheOpError(op, rc);
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && (!p->txn.bOpen || p->bGone) ){
    /* the name now names another table (the statement loaded the
    ** schema again): nothing was written */
    rc = acornCacheOpFail(op, SQLITE_ERROR, "cache_set: %Q changed while"
                          " the call ran; call it again", p->zName);
  }
  return rc;
}

/* The set of cache_set(): the arguments checked as an INSERT's, then
** written in op (acornCacheSetGiven); the new entry's id in *pId.  On an
** error, *pbHalf says whether it may have written part of the set: it
** failed after its checks (or as op began, which converts a table of an
** older format). */
static int cacheSetWrite(cache_table *p, cache_op *op, int argc,
                         sqlite3_value **argv, i64 *pId, int *pbHalf){
  cache_new new;
  i64 nTtlMs = -1;
  int bIgnored = 0;
  int rc = acornCacheOpBegin(op, p, 0, "cache_set");
  memset(&new, 0, sizeof(new));
  new.pKey = argv[1];
  new.pValue = argv[2];
  new.pTag = argc>4 ? argv[4] : 0;
  *pbHalf = rc!=SQLITE_OK;
  if( rc==SQLITE_OK ){
    rc = acornCacheCheckValues(op, &new, 0, argc>3 ? argv[3] : 0, &nTtlMs);
  }
  if( rc==SQLITE_OK ) rc = acornCacheCheckTag(op, new.pTag);
  if( rc==SQLITE_OK ){
    rc = acornCacheSetGiven(op, &new, nTtlMs, 0, pId, &bIgnored);
    assert( !bIgnored );
    /* (a set too large for the capacity is refused before any write) */
    *pbHalf = rc!=SQLITE_OK && op->cfg.capacity>=new.nSize;
  }
  return acornCacheOpCommit(op, rc);
}

/* The end of a cache_set() (rc: how its set went; bHalf: it may have
** written part of it).
**
** In the call's own transaction (bOwn: a savepoint begun in autocommit):
** kept if the set succeeded, the savepoint released, which commits; else,
** or if that fails (SQLITE_BUSY with a rollback journal), the transaction
** rolled back whole.  If the table joined it here (bSim, cacheSetJoin),
** the config row is written first and p's transaction ended after, as
** xSync and xCommit or xRollback would.
**
** In the caller's transaction, a set that failed halfway rolls that
** transaction back whole, as SQLite does when a statement that writes
** fails out of memory or on an I/O error: SQLite itself rolls back nothing
** for a statement that reads no table, as SELECT cache_set(...) is, and a
** savepoint around each call would cost more than the set (every page it
** writes copied to the statement journal).  A set refused by its checks
** has written nothing and leaves the transaction as it was.
**
** The ROLLBACK is prepared before anything is written (cacheSetFunc): it
** steps without allocating, after an allocation failed, from SQLite 3.40.
** Where it cannot run, the table refuses every write and the commit of
** that transaction (bSetBroken) until it is rolled back.  p is 0 if the
** table was not found after the own savepoint began. */
static int cacheSetEnd(sqlite3 *db, cache_table *p, cache_op *op, int bOwn,
                       int bSim, int bHalf, int rc){
  int bRollback = 0;
  assert( p!=0 || (rc!=SQLITE_OK && bOwn) );
  assert( bOwn || !bSim );
  if( bOwn ){
    int rc2;
    if( rc==SQLITE_OK && bSim ) rc = acornCacheConfigSync(op);
    if( rc==SQLITE_OK ){
      rc2 = cacheRunFor(db, p, 0, 0, CACHE_STMT_WRITE_END);
      if( rc2 ){
        rc = rc2==SQLITE_NOMEM ? rc2 : acornCacheOpFail(op, rc2,
                                      "cache_set: %s", sqlite3_errmsg(db));
      }
    }
    bRollback = rc!=SQLITE_OK;
  }else{
    bRollback = rc!=SQLITE_OK && bHalf;
  }
  if( bRollback && !sqlite3_get_autocommit(db) ){
    cacheRunFor(db, p, 0, 0, CACHE_STMT_ROLLBACK);
    if( p && !bSim && p->txn.bOpen && !sqlite3_get_autocommit(db) ){
      p->bSetBroken = 1;
    }
  }
  if( bSim && p && p->txn.bOpen ){
    if( rc ) acornCacheTxnRollback(&p->txn, &p->uses, -1);
    acornCacheTableTxnEnd(p, rc==SQLITE_OK);
  }
  return rc;
}

/* cache_set(table, key, value [, ttl [, tag]]): what INSERT INTO
** table(key, value, ttl, tag) VALUES(key, value, ttl, tag) does, through
** the table's own statements (no statement of the virtual table): the
** same checks and errors (named cache_set), counters, eviction, expiry
** and feed, in the caller's transaction, or in autocommit in one of its
** own.  The new entry's rowid.  last_insert_rowid() is left as it was. */
static void cacheSetFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  cache_conn *pConn = (cache_conn*)sqlite3_user_data(ctx);
  sqlite3 *db = pConn->db;
  i64 iLastRowid = sqlite3_last_insert_rowid(db), id = 0;
  cache_table *p;
  cache_op op;
  cache_lock lock;
  const char *zTab = 0;
  char *zErr = 0;
  int rc, bHalf = 0, bSim = 0;
  assert( argc>=3 && argc<=5 && pConn!=0 );       /* as registered */
  rc = cacheTableArg(argv[0], "cache_set", &zTab, &zErr);
  if( rc ){
    cacheResultError(ctx, rc, zErr);
    return;
  }
  memset(&lock, 0, sizeof(lock));
  p = cacheWriteTable(pConn, zTab, "cache_set", &op, &lock);
  rc = p ? SQLITE_OK : op.zErr ? op.rcErr : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    /* the statement that ends a transaction cacheSetEnd() cannot end any
    ** other way, prepared before anything is written */
    sqlite3_stmt *pRollback = 0;
    rc = acornCacheStmt(&op, CACHE_STMT_ROLLBACK, &pRollback);
  }
  if( rc==SQLITE_OK ) rc = cacheSetJoin(db, p, &lock, &op, &bSim);
  if( rc==SQLITE_OK ) rc = cacheSetWrite(p, &op, argc, argv, &id, &bHalf);
  if( lock.bSavepoint || p ){
    rc = cacheSetEnd(db, p, &op, lock.bSavepoint, bSim, bHalf, rc);
  }
  sqlite3_set_last_insert_rowid(db, iLastRowid);
  if( rc ){
    cacheResultError(ctx, rc, op.zErr);     /* (it frees the message) */
  }else{
    sqlite3_result_int64(ctx, id);
    sqlite3_free(op.zErr);
  }
  if( p ) acornCacheTableUnref(p);
}

/* ------------------------------------------------------------ cache_get */


/* Step p's GET for key pKey at time now, and reset it: the value
** as ctx's result and its entry's id in *pId, or none (*pId 0).  With
** nReprepare >= 0, SQLITE_SCHEMA if SQLite prepared the statement again as
** it stepped (the schema changed: the name may name another table now),
** with no result set.  Else SQLITE_OK or the error of the step. */
static int cacheGetStep(sqlite3_context *ctx, cache_table *p,
                        sqlite3_value *pKey, i64 now, int nReprepare,
                        i64 *pId){
  sqlite3_stmt *pStmt = p->st.aStmt[CACHE_STMT_GET];
  int rc, rc2;
  /* GET: the statement whose key buffer aGetKey is, prepared */
  assert( pStmt!=0 );
  assert( pKey!=0 && pId!=0 && nReprepare>=-1 );
  *pId = 0;
  acornCacheBindKeyIn(pStmt, 1, pKey, p->bUtf16, p->st.aGetKey,
                      (int)sizeof(p->st.aGetKey));
  sqlite3_bind_int64(pStmt, 2, now);
  rc = sqlite3_step(pStmt);
  if( nReprepare>=0
   && sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_REPREPARE, 0)!=nReprepare ){
    rc = SQLITE_SCHEMA;
  }else if( rc==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 0);
    sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 1));  /* a copy */
  }
  rc2 = sqlite3_reset(pStmt);
  assert( *pId==0 || rc==SQLITE_ROW );
  return rc==SQLITE_SCHEMA ? rc : rc2;
}

/* A get's use of entry id, or (id 0) its miss. */
static void cacheGetCount(cache_table *p, i64 id, i64 now){
  assert( p!=0 && p->nRef>0 );              /* the caller's reference */
  assert( p->ePolicy==CACHE_POLICY_LRU || p->ePolicy==CACHE_POLICY_FIFO );
  if( id ){
    acornCacheTouch(p, id, now);
  }else if( p->ePolicy==CACHE_POLICY_LRU ){
    p->uses.nMiss++;
  }
}

/* cache_get for a name looked up: the table found and its config row read
** (so its uid checked) by cacheResolve, as cache_read does. */
static void cacheGetResolved(sqlite3_context *ctx, cache_conn *pConn,
                             const char *zTab, sqlite3_value *pKey){
  cache_table *p;
  cache_op op;
  sqlite3_stmt *pStmt = 0;
  i64 id = 0;
  int rc;
  p = cacheResolve(pConn, zTab, "cache_get", &op, 0);
  rc = p ? acornCacheStmt(&op, CACHE_STMT_GET, &pStmt)
         : op.zErr ? op.rcErr : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    int nReprepare = sqlite3_stmt_status(pStmt, SQLITE_STMTSTATUS_REPREPARE, 0);
    assert( p!=0 && op.pTab==p && pStmt!=0 );
    assert( pStmt==p->st.aStmt[CACHE_STMT_GET] );
    rc = acornCacheOpError(&op, cacheGetStep(ctx, p, pKey, op.now, -1, &id));
    if( rc==SQLITE_OK ){
      acornCacheNameNote(pConn, zTab, p, CACHE_NAME_GET, nReprepare);
      cacheGetCount(p, id, op.now);
    }
  }
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc ){
    if( op.zErr ) sqlite3_result_error(ctx, op.zErr, -1);
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(op.zErr);
  if( p ) acornCacheTableUnref(p);
}

/* cache_get(table, key): the value of a live entry, a use of it; NULL for
** a missing or expired key, a miss.  What SELECT value FROM t WHERE key = ?
** does, with one statement of the table's, prepared once; the name is
** looked up only when what it names may have changed. */
static void cacheGetFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  cache_conn *pConn = (cache_conn*)sqlite3_user_data(ctx);
  char *zErr = 0;
  int rcKey = acornCacheCheckKey("cache_get", argv[1], &zErr);
  const char *zTab;
  cache_name *n = 0;
  cache_table *p;
  (void)argc;
  assert( argc==2 && pConn!=0 );       /* as registered */
  if( rcKey ){
    if( zErr ) sqlite3_result_error(ctx, zErr, -1);
    else if( rcKey==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
    else sqlite3_result_error_code(ctx, rcKey);
    sqlite3_free(zErr);
    return;
  }
  rcKey = cacheTableArg(argv[0], "cache_get", &zTab, &zErr);
  if( rcKey ){
    cacheResultError(ctx, rcKey, zErr);
    return;
  }
  p = cacheNameKnown(pConn, zTab, CACHE_NAME_GET, &n);
  if( p ){
    i64 id, now = acornCacheNowMs();
    int rc;
    /* as cacheNameKnown() found it: live, its GET prepared */
    assert( n!=0 && n->pTab==p && !p->bGone );
    assert( p->st.aStmt[CACHE_STMT_GET]!=0 );
    acornCacheTableRef(p);
    rc = cacheGetStep(ctx, p, argv[1], now, n->anReprepare[CACHE_NAME_GET], &id);
    if( rc==SQLITE_OK ) cacheGetCount(p, id, now);
    else acornCacheNameForget(pConn, p);      /* look it up (again) */
    acornCacheTableUnref(p);
    if( rc==SQLITE_OK ) return;
  }
  cacheGetResolved(ctx, pConn, zTab, argv[1]);
}

#define CACHE_STATS_NCOL   7
#define CACHE_STATS_TABLE  7     /* the hidden argument column */

typedef struct cache_stats_cursor cache_stats_cursor;
struct cache_stats_cursor {
  sqlite3_vtab_cursor base;
  i64 a[CACHE_STATS_NCOL];
  int bFifo;            /* hits and misses are not counted: NULL */
  char *zTable;
  int bEof;
};

/* ------------------------------------- table-valued functions' skeleton */

/* xConnect of cache_stats and cache_evictions: schema zSchema (its last
** column: tbl HIDDEN), an instance that knows pAux, the cache_conn. */
int acornCacheTvfConnect(sqlite3 *db, void *pAux, const char *zSchema,
                         sqlite3_vtab **ppVtab){
  cache_tvf *pNew;
  int rc;
  assert( pAux!=0 && ppVtab!=0 && zSchema!=0 );
  rc = sqlite3_declare_vtab(db, zSchema);
  if( rc ) return rc;
  pNew = sqlite3_malloc64(sizeof(*pNew));
  if( pNew==0 ) return SQLITE_NOMEM;
  memset(pNew, 0, sizeof(*pNew));
  pNew->pConn = (cache_conn*)pAux;
  *ppVtab = &pNew->base;
  return SQLITE_OK;
}

int acornCacheTvfDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* The cache table that pArg (the tbl argument of xFilter) names, with its
** config row in op->cfg and a reference for the caller, its name in
** *pzTab; 0 with the error (named for zWho) on pVtab and its code in
** *pRc. */
cache_table *acornCacheTvfTable(sqlite3_vtab *pVtab, sqlite3_value *pArg,
                                const char *zWho, const char **pzTab,
                                cache_op *op, int *pRc){
  cache_tvf *pV = (cache_tvf*)pVtab;
  cache_table *p;
  char *zErr = 0;
  *pRc = cacheTableArg(pArg, zWho, pzTab, &zErr);
  if( *pRc ){
    acorn_vtab_error_take(pVtab, zErr);
    return 0;
  }
  p = cacheResolve(pV->pConn, *pzTab, zWho, op, 0);
  if( p==0 ){
    *pRc = op->zErr ? op->rcErr : SQLITE_NOMEM;
    acorn_vtab_error_take(pVtab, op->zErr);
    op->zErr = 0;
    return 0;
  }
  assert( op->pTab==p && p->nRef>0 );     /* with a reference of ours */
  return p;
}

/* ------------------------------------------------------- cache_stats */

static int cacheStatsConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const*argv, sqlite3_vtab **ppVtab,
                             char **pzErr){
  (void)argc; (void)argv; (void)pzErr;
  return acornCacheTvfConnect(db, pAux, "CREATE TABLE x(capacity, entries,"
                              " bytes, hits, misses, evictions, expired,"
                              " tbl HIDDEN)", ppVtab);
}

/* tbl = ? is the argument.  Without a usable one, a plan that xFilter
** refuses, naming what is missing, rather than an error here: SQLite also
** asks for each term of an OR alone (WHERE entries = 1 OR bytes = 5 with
** the argument given, or tbl = 'a' OR tbl = 'b'), and an error here would
** end the statement even where another plan has the argument.  SQLite
** takes that plan only if there is no other.  idxNum 1: the argument is
** argv[0]. */
static int cacheStatsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, bSeen = 0;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=CACHE_STATS_TABLE || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ){
      continue;
    }
    bSeen = 1;
    if( !pC->usable ) continue;
    pInfo->aConstraintUsage[i].argvIndex = 1;
    pInfo->aConstraintUsage[i].omit = 1;
    pInfo->idxNum = 1;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
    return SQLITE_OK;
  }
  /* (the argument from a table not yet joined: not this plan) */
  if( bSeen ) return SQLITE_CONSTRAINT;
  pInfo->idxNum = 0;
  pInfo->estimatedCost = 1e99;
  return SQLITE_OK;
}

static int cacheStatsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_stats_cursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static int cacheStatsClose(sqlite3_vtab_cursor *cur){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  sqlite3_free(pCur->zTable);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int cacheStatsFilter(sqlite3_vtab_cursor *cur, int idxNum,
                            const char *idxStr, int argc,
                            sqlite3_value **argv){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  const char *zTab;
  cache_table *p;
  cache_op op;
  int rc;
  (void)idxStr;
  pCur->bEof = 1;
  sqlite3_free(pCur->zTable);
  pCur->zTable = 0;
  if( idxNum!=1 || argc<1 ){
    acorn_vtab_error(cur->pVtab, "cache_stats: missing argument: the name of"
                     " a cache table, as in SELECT * FROM"
                     " cache_stats('thumbs')");
    return SQLITE_ERROR;
  }
  assert( argc==1 );          /* cacheStatsBestIndex's plan: the name alone */
  p = acornCacheTvfTable(cur->pVtab, argv[0], "cache_stats", &zTab, &op, &rc);
  if( p==0 ) return rc;
  assert( op.pTab==p && p->nRef>0 );
  assert( op.cfg.ePolicy==CACHE_POLICY_LRU
       || op.cfg.ePolicy==CACHE_POLICY_FIFO );   /* (cacheConfigColumns) */
  assert( p->uses.nHit>=0 && p->uses.nMiss>=0 && p->uses.nHitLoose>=0 );
  pCur->a[0] = op.cfg.capacity;
  pCur->a[1] = op.cfg.entries;
  pCur->a[2] = op.cfg.bytes;
  pCur->a[3] = op.cfg.hits + p->uses.nHit + p->uses.nHitLoose;
  pCur->a[4] = op.cfg.misses + p->uses.nMiss;
  pCur->a[5] = op.cfg.evictions;
  pCur->a[6] = op.cfg.expired;
  pCur->bFifo = op.cfg.ePolicy==CACHE_POLICY_FIFO;
  acornCacheTableUnref(p);
  pCur->zTable = sqlite3_mprintf("%s", zTab);
  if( pCur->zTable==0 ) return SQLITE_NOMEM;
  pCur->bEof = 0;
  return SQLITE_OK;
}

static int cacheStatsNext(sqlite3_vtab_cursor *cur){
  ((cache_stats_cursor*)cur)->bEof = 1;
  return SQLITE_OK;
}

static int cacheStatsEof(sqlite3_vtab_cursor *cur){
  return ((cache_stats_cursor*)cur)->bEof;
}

static int cacheStatsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                            int i){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  assert( i>=0 && i<=CACHE_STATS_TABLE );    /* the columns declared */
  if( i>=CACHE_STATS_NCOL ){
    sqlite3_result_text(ctx, pCur->zTable, -1, SQLITE_TRANSIENT);
  }else if( !(pCur->bFifo && (i==3 || i==4)) ){
    sqlite3_result_int64(ctx, pCur->a[i]);
  }
  return SQLITE_OK;
}

static int cacheStatsRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  (void)cur;
  *pRowid = 1;
  return SQLITE_OK;
}

static sqlite3_module cacheStatsModule = CACHE_TVF_MODULE(
  cacheStatsConnect, cacheStatsBestIndex, cacheStatsOpen, cacheStatsClose,
  cacheStatsFilter, cacheStatsNext, cacheStatsEof, cacheStatsColumn,
  cacheStatsRowid);

/* --------------------------------------------------- cache_wal_limit */

/* cache_wal_limit([bytes]): the connection's bound on the -wal file (THE
** -WAL FILE in cache_table.c), set first if bytes is given: a whole number
** 0 (no bound) .. 2^62, or a size as capacity takes it ('64MiB').  NULL
** and anything else is an error naming the allowed values. */
static void cacheWalLimitFunc(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv){
  cache_conn *pConn = (cache_conn*)sqlite3_user_data(ctx);
  assert( (argc==0 || argc==1) && pConn!=0 );     /* as registered */
  if( argc==1 ){
    i64 n = -1;
    int e = sqlite3_value_type(argv[0]);
    if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ){
      if( !acornCacheWholeNumber(argv[0], &n) ) n = -1;
    }else if( e==SQLITE_TEXT ){
      const char *z = 0;
      int rc = acornCacheTextArg(argv[0], &z);
      if( rc==SQLITE_NOMEM ){
        sqlite3_result_error_nomem(ctx);
        return;
      }
      if( rc || (acornCacheParseCount(z, 0, &n) && acornCacheParseSize(z, &n)) ){
        n = -1;                           /* ('0', or a size, whole) */
      }
    }
    if( n<0 || n>CACHE_MAX_CAPACITY ){
      acorn_result_error(ctx, "cache_wal_limit: bad bound; expected 0 (no"
                         " bound) or a number of bytes, optionally with a unit"
                         " B, kB, MB, GB, KiB, MiB or GiB (e.g. 67108864 or"
                         " '64MiB'), at most 4611686018427387904 bytes");
      return;
    }
    acornCacheWalLimit(pConn, n);
  }
  assert( pConn->wal.nLimit>=0 && pConn->wal.nLimit<=CACHE_MAX_CAPACITY );
  sqlite3_result_int64(ctx, pConn->wal.nLimit);
}

/* cache_read() and cache_stats() on db, each with its reference on pConn
** (given back by its destructor). */
int acorn_cache_func_register(sqlite3 *db, cache_conn *pConn){
  int rc, i;
  assert( db!=0 && pConn!=0 && pConn->db==db );
  acornCacheConnAcquire(db);
  rc = sqlite3_create_module_v2(db, "cache_stats", &cacheStatsModule, pConn,
                                acornCacheConnRelease);
  if( rc==SQLITE_OK ){
    acornCacheConnAcquire(db);
    rc = sqlite3_create_function_v2(db, "cache_read", 4, SQLITE_UTF8, pConn,
                                    cacheReadFunc, 0, 0, acornCacheConnRelease);
  }
  if( rc==SQLITE_OK ){
    acornCacheConnAcquire(db);
    rc = sqlite3_create_function_v2(db, "cache_get", 2, SQLITE_UTF8, pConn,
                                    cacheGetFunc, 0, 0, acornCacheConnRelease);
  }
  for(i=3; rc==SQLITE_OK && i<=5; i++){
    /* it writes: not for a schema's views and triggers */
    acornCacheConnAcquire(db);
    rc = sqlite3_create_function_v2(db, "cache_set", i,
                                    SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    pConn, cacheSetFunc, 0, 0,
                                    acornCacheConnRelease);
  }
  if( rc==SQLITE_OK ){
    /* it writes: not for a schema's views and triggers */
    acornCacheConnAcquire(db);
    rc = sqlite3_create_function_v2(db, "cache_write", 4,
                                    SQLITE_UTF8|SQLITE_DIRECTONLY,
                                    pConn, cacheWriteFunc, 0, 0,
                                    acornCacheConnRelease);
  }
  for(i=0; rc==SQLITE_OK && i<2; i++){
    /* it changes how the connection checkpoints: not for a schema's views
    ** and triggers */
    acornCacheConnAcquire(db);
    rc = sqlite3_create_function_v2(db, "cache_wal_limit", i,
                                    SQLITE_UTF8|SQLITE_DIRECTONLY, pConn,
                                    cacheWalLimitFunc, 0, 0,
                                    acornCacheConnRelease);
  }
  return rc;
}
