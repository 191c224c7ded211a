/*
** cache_feed.c: the feed of removals as a table-valued function (docs/cache.md
** specifies it).  The rows are <t>_feed's, written by the store
** (cache_store.c says what they hold and when they are written):
**
**   SELECT seq, key, size, reason, at FROM cache_evictions('t')
**       [WHERE seq > ?]      the feed, in order of seq; seq > ?, >= ?
**                            and = ? are ranges of the primary key.
*/
#include "cacheInt.h"

/* ----------------------------------------------- cache_evictions(table) */

#define CACHE_EV_SEQ    0
#define CACHE_EV_TABLE  5     /* the hidden argument column */

#define CACHE_EV_ARG    1     /* idxNum bits: the table's name given */
#define CACHE_EV_GT     2     /* seq > ? */
#define CACHE_EV_GE     4     /* seq >= ? */
#define CACHE_EV_EQ     8     /* seq = ? */

typedef struct cache_ev_cursor cache_ev_cursor;
struct cache_ev_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pStmt;  /* the rows of <t>_feed, or 0 */
  char *zTable;
  int bEof;
};

static int cacheEvConnect(sqlite3 *db, void *pAux, int argc,
                          const char *const*argv, sqlite3_vtab **ppVtab,
                          char **pzErr){
  (void)argc; (void)argv; (void)pzErr;
  return acornCacheTvfConnect(db, pAux, "CREATE TABLE x(seq INTEGER, key,"
                              " size INTEGER, reason TEXT, at INTEGER,"
                              " tbl HIDDEN)", ppVtab);
}

/* tbl = ? is required; one of seq > ?, >= ?, = ? is a range of the feed's
** primary key.  argv: the table's name, then the seq bound. */
static int cacheEvBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  int i, iArg = -1, iSeq = -1, bSeen = 0, idxNum = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn==CACHE_EV_TABLE && pC->op==SQLITE_INDEX_CONSTRAINT_EQ ){
      bSeen = 1;
      if( pC->usable && iArg<0 ) iArg = i;
    }else if( pC->iColumn==CACHE_EV_SEQ && pC->usable && iSeq<0 ){
      if( pC->op==SQLITE_INDEX_CONSTRAINT_GT ) idxNum = CACHE_EV_GT;
      else if( pC->op==SQLITE_INDEX_CONSTRAINT_GE ) idxNum = CACHE_EV_GE;
      else if( pC->op==SQLITE_INDEX_CONSTRAINT_EQ ) idxNum = CACHE_EV_EQ;
      if( idxNum ) iSeq = i;
    }
  }
  assert( (iSeq>=0)==(idxNum!=0) && iSeq<pInfo->nConstraint );
  assert( idxNum==0 || idxNum==CACHE_EV_GT || idxNum==CACHE_EV_GE
       || idxNum==CACHE_EV_EQ );
  assert( iArg<pInfo->nConstraint && (iArg<0 || iArg!=iSeq) );
  if( iArg<0 ){
    /* No name: a plan SQLite takes only if there is no other (it also
    ** asks for each term of an OR alone, without the name, and an error
    ** here would end the statement); its xFilter says what is missing. */
    if( bSeen ) return SQLITE_CONSTRAINT;
    pInfo->idxNum = 0;
    pInfo->estimatedCost = 1e99;
    return SQLITE_OK;
  }
  pInfo->aConstraintUsage[iArg].argvIndex = 1;
  pInfo->aConstraintUsage[iArg].omit = 1;
  if( iSeq>=0 ){
    pInfo->aConstraintUsage[iSeq].argvIndex = 2;
    pInfo->aConstraintUsage[iSeq].omit = 1;
  }
  pInfo->idxNum = CACHE_EV_ARG | idxNum;
  pInfo->estimatedCost = iSeq>=0 ? 10.0 : 1000.0;
  pInfo->estimatedRows = iSeq>=0 ? 10 : 1000;
  if( pInfo->nOrderBy==1 && pInfo->aOrderBy[0].iColumn==CACHE_EV_SEQ
   && !pInfo->aOrderBy[0].desc ){
    pInfo->orderByConsumed = 1;
  }
  return SQLITE_OK;
}

static int cacheEvOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_ev_cursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static int cacheEvClose(sqlite3_vtab_cursor *cur){
  cache_ev_cursor *pCur = (cache_ev_cursor*)cur;
  assert( pCur->bEof || pCur->pStmt!=0 );
  sqlite3_finalize(pCur->pStmt);
  sqlite3_free(pCur->zTable);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int cacheEvNext(sqlite3_vtab_cursor *cur){
  cache_ev_cursor *pCur = (cache_ev_cursor*)cur;
  int rc;
  if( pCur->pStmt==0 ){
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  rc = sqlite3_step(pCur->pStmt);
  pCur->bEof = rc!=SQLITE_ROW;
  assert( pCur->bEof || pCur->pStmt!=0 );
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) return SQLITE_OK;
  acorn_vtab_error(cur->pVtab, "cache_evictions: %s",
                   sqlite3_errmsg(sqlite3_db_handle(pCur->pStmt)));
  return rc;
}

/* The feed of the table named argv[0], from the seq bound in argv[1]. */
static int cacheEvFilter(sqlite3_vtab_cursor *cur, int idxNum,
                         const char *idxStr, int argc, sqlite3_value **argv){
  cache_ev_cursor *pCur = (cache_ev_cursor*)cur;
  cache_tvf *pV = (cache_tvf*)cur->pVtab;
  const char *zTab;
  cache_table *p;
  cache_op op;
  char *zSql;
  int rc, iFormat;
  (void)idxStr;
  sqlite3_finalize(pCur->pStmt);
  pCur->pStmt = 0;
  pCur->bEof = 1;
  sqlite3_free(pCur->zTable);
  pCur->zTable = 0;
  if( !(idxNum & CACHE_EV_ARG) || argc<1 ){
    acorn_vtab_error(cur->pVtab, "cache_evictions: missing argument: the name"
                     " of a cache table, as in SELECT * FROM"
                     " cache_evictions('t')");
    return SQLITE_ERROR;
  }
  /* idxNum is a plan of cacheEvBestIndex: the name, then at most one bound
  ** on seq (argv[1]) */
  assert( (idxNum & ~(CACHE_EV_ARG|CACHE_EV_GT|CACHE_EV_GE|CACHE_EV_EQ))==0 );
  assert( (idxNum & (CACHE_EV_GT|CACHE_EV_GE|CACHE_EV_EQ))==0 || argc>=2 );
  p = acornCacheTvfTable(cur->pVtab, argv[0], "cache_evictions", &zTab, &op,
                         &rc);
  if( p==0 ) return rc;
  iFormat = p->iFormat;
  if( iFormat<3 ){
    /* (an older table has no feed, unless another connection converted
    ** it since this one last wrote it) */
    rc = acornCacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
    if( rc ){
      acornCacheTableUnref(p);
      return rc;
    }
  }
  assert( iFormat>=1 && iFormat<=CACHE_FORMAT_NEW );
  zSql = iFormat<3 ? 0 : sqlite3_mprintf(
      "SELECT seq, key, size, CASE reason WHEN 1 THEN 'capacity' WHEN 2"
      " THEN 'entries' ELSE 'expired' END, at FROM \"%w\".\"%w_feed\"%s"
      " ORDER BY seq", p->zDb, p->zName,
      (idxNum & CACHE_EV_GT) ? " WHERE seq>?1" : (idxNum & CACHE_EV_GE)
      ? " WHERE seq>=?1" : (idxNum & CACHE_EV_EQ) ? " WHERE seq=?1" : "");
  acornCacheTableUnref(p);
  pCur->zTable = sqlite3_mprintf("%s", zTab);
  if( pCur->zTable==0 || (iFormat>=3 && zSql==0) ){
    sqlite3_free(zSql);
    return SQLITE_NOMEM;
  }
  if( zSql==0 ) return SQLITE_OK;       /* (an older table: no feed yet) */
  rc = sqlite3_prepare_v3(pV->pConn->db, zSql, -1, SQLITE_PREPARE_NO_VTAB,
                          &pCur->pStmt, 0);
  sqlite3_free(zSql);
  if( rc ){
    acorn_vtab_error(cur->pVtab, "cache_evictions: %s",
                     sqlite3_errmsg(pV->pConn->db));
    return rc;
  }
  assert( pCur->pStmt!=0 && pCur->zTable!=0 );
  if( idxNum & (CACHE_EV_GT|CACHE_EV_GE|CACHE_EV_EQ) ){
    sqlite3_bind_value(pCur->pStmt, 1, argv[1]);
  }
  return cacheEvNext(cur);
}

static int cacheEvEof(sqlite3_vtab_cursor *cur){
  return ((cache_ev_cursor*)cur)->bEof;
}

static int cacheEvColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                         int i){
  cache_ev_cursor *pCur = (cache_ev_cursor*)cur;
  assert( i>=0 && i<=CACHE_EV_TABLE );      /* the columns declared */
  if( i==CACHE_EV_TABLE ){
    sqlite3_result_text(ctx, pCur->zTable, -1, SQLITE_TRANSIENT);
  }else{
    sqlite3_result_value(ctx, sqlite3_column_value(pCur->pStmt, i));
  }
  return SQLITE_OK;
}

static int cacheEvRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = sqlite3_column_int64(((cache_ev_cursor*)cur)->pStmt, 0);
  return SQLITE_OK;
}

static sqlite3_module cacheEvModule = CACHE_TVF_MODULE(
  cacheEvConnect, cacheEvBestIndex, cacheEvOpen, cacheEvClose, cacheEvFilter,
  cacheEvNext, cacheEvEof, cacheEvColumn, cacheEvRowid);

/* cache_evictions() on db, with its reference on pConn (given back by its
** destructor). */
int acornCacheFeedRegister(sqlite3 *db, cache_conn *pConn){
  assert( db!=0 && pConn!=0 && pConn->db==db );
  acornCacheConnAcquire(db);
  return sqlite3_create_module_v2(db, "cache_evictions", &cacheEvModule,
                                  pConn, acornCacheConnRelease);
}
