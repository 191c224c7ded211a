/*
** cache_vtab.c: a capacity-bounded blob store inside the database, evicting the
** least recently used entry (or the oldest set, with policy = fifo):
**
**   CREATE VIRTUAL TABLE thumbs USING cache(capacity = '64MiB');
**   INSERT INTO thumbs(key, value, expires) VALUES(?, ?, ?);     -- a set
**   SELECT value FROM thumbs WHERE key = ?;                      -- a get
**
** docs/cache.md is the specification: columns, options, statements,
** commands, what a read counts, what every write guarantees, and the
** functions.  This file is the virtual table's methods; cacheInt.h lists the
** other files, and cache_table.c says how a connection holds a table.
*/
#include "cacheInt.h"

#include <pthread.h>

#define CACHE_SCHEMA \
  "CREATE TABLE x(key, value BLOB, size INTEGER, created INTEGER," \
  " last_used INTEGER, hits INTEGER, expires INTEGER, \"%w\" TEXT HIDDEN," \
  " \"%w\" HIDDEN, \"%w\" HIDDEN)"

#define CACHE_IDX_EQ     1
#define CACHE_IDX_IN     2
#define CACHE_IDX_VALUE  4
#define CACHE_IDX_LRU    8
#define CACHE_IDX_SIZE   32
#define CACHE_IDX_MORE   64
#define CACHE_IDX_TAG    128    /* tag = ? (when no key = ? or key IN) */
#define CACHE_IDX_TAGCOL 256    /* tag is read */

/* End of an operation run for a vtab method: its error goes to zErrMsg. */
static int cacheOpFinish(cache_op *op, int rc){
  assert( op->zErr==0 || rc!=SQLITE_OK || op->rcErr==SQLITE_OK );
  if( op->pVtab ){
    acorn_vtab_error_take(&op->pVtab->base, op->zErr);
  }else{
    sqlite3_free(op->zErr);
  }
  op->zErr = 0;
  return rc;
}

/* Bind the instance of a vtab method, its error on the vtab. */
static cache_table *cacheVtabTable(cache_vtab *p, int *pRc){
  char *zErr = 0;
  if( p->pTab ){
    *pRc = SQLITE_OK;
    return p->pTab;
  }
  *pRc = acornCacheVtabBind(p, &zErr);
  acorn_vtab_error_take(&p->base, zErr);
  assert( (*pRc==SQLITE_OK)==(p->pTab!=0) );
  return p->pTab;
}

/* ------------------------------------------------------------ options */

static const char *const azCacheColumn[] = {
  "key", "value", "size", "created", "last_used", "hits", "expires", "tag",
  "ttl"
};

/* Is zName a name no cache table may take?  *pzErr says why. */
static int cacheBadName(const char *zName, char **pzErr){
  static const char *const azAlias[] = { "rowid", "oid", "_rowid_" };
  size_t i;
  for(i=0; i<sizeof(azCacheColumn)/sizeof(azCacheColumn[0]); i++){
    if( sqlite3_stricmp(zName, azCacheColumn[i])==0 ){
      *pzErr = sqlite3_mprintf("cache: a cache table cannot be named '%s':"
                               " that is the name of a column", zName);
      return 1;
    }
  }
  for(i=0; i<sizeof(azAlias)/sizeof(azAlias[0]); i++){
    if( sqlite3_stricmp(zName, azAlias[i])==0 ){
      *pzErr = sqlite3_mprintf("cache: a cache table cannot be named '%s':"
                               " it would hide the rowid alias of that name",
                               zName);
      return 1;
    }
  }
  return 0;
}

/* Split "name = value"; strip spaces and one pair of quotes from value. */
static int cacheSplitArg(const char *zArg, char **pzName, char **pzValue){
  const char *zEq;
  const char *z0, *z1;
  assert( zArg!=0 );
  zEq = strchr(zArg, '=');
  if( zEq==0 ) return 1;
  z0 = zArg; z1 = zEq;
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  *pzName = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  z0 = zEq+1; z1 = zEq + strlen(zEq);
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  if( z1-z0>=2 && (*z0=='\'' || *z0=='"') && z1[-1]==*z0 ){ z0++; z1--; }
  assert( z0<=z1 );
  *pzValue = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  return 0;
}

/* The options of CREATE VIRTUAL TABLE, parsed. */
typedef struct cache_options cache_options;
struct cache_options {
  i64 nCapacity;
  int nBuffer;
  int ePolicy;
  int bAutoflush;
  i64 nDefaultTtl;      /* seconds, 0 for none */
  i64 nMaxEntries;      /* 0 for no bound */
  i64 nFeed;            /* removals the feed keeps, 0 for off */
};

#define CACHE_OPTION_NAMES "capacity, recency_buffer, policy, autoflush," \
  " default_ttl, max_entries and feed"

/* Messages of the options that commands set too (%s: the value). */
#define CACHE_TTL_HELP "expected whole seconds, optionally with a unit s, m," \
  " h or d (e.g. 90, '15m' or '1.5h'; a fraction needs a unit above s), at" \
  " most 1000000000000 seconds; 0 for none"
#define CACHE_MAXENT_HELP "expected a whole number of entries from 0 (no" \
  " bound) to 4611686018427387904"
#define CACHE_FEED_HELP "expected a whole number of removals to keep from 0" \
  " (off) to 1000000"

/* Option k of azCacheOpt[] set to zValue in *pOpt; an error in *pzErr. */
static int cacheParseOption(int k, const char *zValue, cache_options *pOpt,
                            char **pzErr){
  i64 n = 0;
  assert( k>=0 && k<7 && zValue!=0 );
  switch( k ){
    case 0:
      if( acornCacheParseSize(zValue, &pOpt->nCapacity)==0 ) return SQLITE_OK;
      *pzErr = sqlite3_mprintf("cache: bad capacity '%s'; " CACHE_SIZE_HELP,
                               zValue);
      break;
    case 1:
      if( acornCacheParseCount(zValue, CACHE_MAX_BUFFER, &n)==0 && n>=1 ){
        pOpt->nBuffer = (int)n;
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("cache: bad recency_buffer '%s'; expected"
                               " an integer from 1 to %d", zValue,
                               CACHE_MAX_BUFFER);
      break;
    case 2:
      if( sqlite3_stricmp(zValue, "lru")==0 || sqlite3_stricmp(zValue, "fifo")==0 ){
        pOpt->ePolicy = sqlite3_stricmp(zValue, "fifo")==0;
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("cache: bad policy '%s'; expected lru or"
                               " fifo", zValue);
      break;
    case 3:
      if( sqlite3_stricmp(zValue, "on")==0 || sqlite3_stricmp(zValue, "off")==0 ){
        pOpt->bAutoflush = sqlite3_stricmp(zValue, "on")==0;
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("cache: bad autoflush '%s'; expected on or"
                               " off", zValue);
      break;
    case 4:
      if( acornCacheParseDuration(zValue, &pOpt->nDefaultTtl)==0 ) return SQLITE_OK;
      *pzErr = sqlite3_mprintf("cache: bad default_ttl '%s'; " CACHE_TTL_HELP,
                               zValue);
      break;
    case 5:
      if( acornCacheParseCount(zValue, CACHE_MAX_COUNTER, &pOpt->nMaxEntries)==0 ){
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("cache: bad max_entries '%s'; "
                               CACHE_MAXENT_HELP, zValue);
      break;
    default:
      if( acornCacheParseCount(zValue, CACHE_MAX_FEED, &pOpt->nFeed)==0 ){
        return SQLITE_OK;
      }
      *pzErr = sqlite3_mprintf("cache: bad feed '%s'; " CACHE_FEED_HELP,
                               zValue);
      break;
  }
  return SQLITE_ERROR;
}

static int cacheParseOptions(int argc, const char *const*argv,
                             cache_options *pOpt, char **pzErr){
  static const char *const azOpt[] = {
    "capacity", "recency_buffer", "policy", "autoflush", "default_ttl",
    "max_entries", "feed"
  };
  int aSeen[7] = {0, 0, 0, 0, 0, 0, 0};
  int i;
  memset(pOpt, 0, sizeof(*pOpt));
  pOpt->nCapacity = CACHE_DEFAULT_CAPACITY;
  pOpt->nBuffer = CACHE_DEFAULT_BUFFER;
  pOpt->ePolicy = CACHE_POLICY_LRU;
  pOpt->bAutoflush = 1;
  for(i=3; i<argc; i++){
    char *zName = 0, *zValue = 0;
    int rc = SQLITE_OK, k;
    if( cacheSplitArg(argv[i], &zName, &zValue) ){
      *pzErr = sqlite3_mprintf("cache: bad argument '%s': expected"
          " name = value, with name capacity, recency_buffer, policy,"
          " autoflush, default_ttl, max_entries or feed", argv[i]);
      return SQLITE_ERROR;
    }
    if( zName==0 || zValue==0 ){
      sqlite3_free(zName);
      sqlite3_free(zValue);
      return SQLITE_NOMEM;
    }
    for(k=0; k<7 && sqlite3_stricmp(zName, azOpt[k])!=0; k++){}
    if( k==7 ){
      *pzErr = sqlite3_mprintf("cache: unknown option '%s'; accepted options"
                               " are " CACHE_OPTION_NAMES, zName);
      rc = SQLITE_ERROR;
    }else if( aSeen[k]++ ){
      *pzErr = sqlite3_mprintf("cache: option %s is given twice", azOpt[k]);
      rc = SQLITE_ERROR;
    }else{
      rc = cacheParseOption(k, zValue, pOpt, pzErr);
    }
    sqlite3_free(zName);
    sqlite3_free(zValue);
    if( rc ) return rc;
  }
  assert( pOpt->nCapacity>=1 && pOpt->nCapacity<=CACHE_MAX_CAPACITY );
  assert( pOpt->nBuffer>=1 && pOpt->nBuffer<=CACHE_MAX_BUFFER );
  assert( pOpt->ePolicy==CACHE_POLICY_LRU || pOpt->ePolicy==CACHE_POLICY_FIFO );
  assert( pOpt->nDefaultTtl>=0 && pOpt->nDefaultTtl<=(i64)CACHE_MAX_TTL );
  assert( pOpt->nMaxEntries>=0 && pOpt->nMaxEntries<=CACHE_MAX_COUNTER );
  assert( pOpt->nFeed>=0 && pOpt->nFeed<=CACHE_MAX_FEED );
  return SQLITE_OK;
}


/* ----------------------------------------------------- create, connect */

/* The shadow tables of any format: format 1 had <t>_lru, which a
** converted table keeps, empty.  Every one of these names belongs to the
** cache table (xShadowName), so CREATE and RENAME refuse a name whose
** shadow names another object has taken; of <t>_lru, only the table
** acorn 0.1 made is ever dropped or renamed (cacheLruOwned). */
static const char *const azCacheShadow[] = {
  "config", "data", "expiry", "rec", "tag", "feed", "lru"
};
#define CACHE_NSHADOW (int)(sizeof(azCacheShadow)/sizeof(azCacheShadow[0]))

/* The columns of <t>_lru as acorn 0.1 declared them. */
#define CACHE_LRU_COLUMNS "(id INTEGER PRIMARY KEY, used INTEGER NOT NULL" \
  " UNIQUE, last_used INTEGER NOT NULL, hits INTEGER NOT NULL," \
  " size INTEGER NOT NULL)"

/* Is any shadow name of table zName in schema zDb taken?  Then *pzErr
** names the object and the names a cache needs, and the result is
** SQLITE_ERROR: a cache never adopts a table it did not make. */
static int cacheShadowFree(sqlite3 *db, const char *zDb, const char *zName,
                           const char *zVerb, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT type, name FROM \"%w\".sqlite_schema WHERE name COLLATE NOCASE"
      " IN ('%q_config', '%q_data', '%q_expiry', '%q_rec', '%q_tag',"
      " '%q_feed', '%q_lru') ORDER BY name LIMIT 1", zDb, zName, zName, zName,
      zName, zName, zName, zName);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    *pzErr = sqlite3_mprintf("cache: cannot %s \"%s\": %s %s named \"%s\""
        " exists; a cache table \"%s\" keeps its data in the tables"
        " %s_config, %s_data, %s_expiry, %s_rec, %s_tag, %s_feed and %s_lru",
        zVerb, zName, zType && zType[0]=='i' ? "an" : "a", zType,
        sqlite3_column_text(pStmt, 1), zName, zName, zName, zName, zName,
        zName, zName, zName);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pStmt);
  }else{
    sqlite3_finalize(pStmt);
  }
  if( rc && (rc&0xff)!=SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
  }
  return rc;
}

/* Is <t>_lru the recency table acorn 0.1 made for this cache?  Only then
** may DROP TABLE and RENAME take it.  A table of that name with other
** columns is someone else's; one with 0.1's columns is the cache's while
** the table is format 1, and after the conversion only while it is empty
** (the conversion empties it): a user's table of the same shape that holds
** rows is never dropped. */
static int cacheLruOwned(sqlite3 *db, const char *zDb, const char *zName,
                         int *pbOwned){
  i64 bShape = 0;
  int rc, iFormat = 2, bRow = 0;
  *pbOwned = 0;
  rc = acornCacheQueryInt(db, sqlite3_mprintf("SELECT substr(sql, instr(sql, '('))"
                     "=%Q FROM \"%w\".sqlite_schema WHERE type='table' AND"
                     " name='%q_lru' COLLATE NOCASE", CACHE_LRU_COLUMNS, zDb,
                     zName), &bShape, 0);
  if( rc || !bShape ) return rc;
  rc = acornCacheFormatProbe(db, zDb, zName, &iFormat);
  if( rc || iFormat==1 ){
    *pbOwned = rc==SQLITE_OK;
    return rc;
  }
  rc = acornCacheQueryInt(db, sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w_lru\""
                                         " LIMIT 1", zDb, zName), &bShape, &bRow);
  *pbOwned = rc==SQLITE_OK && !bRow;
  return rc;
}

/* Is shadow table zSuffix the cache's, to drop or rename with it?  <t>_lru
** only if acorn 0.1 made it for the cache (bLru); <t>_tag and <t>_feed
** only once the table is format 3 (a table of those names next to an
** older cache is someone else's). */
static int cacheShadowOwned(const char *zSuffix, int bLru, int iFormat){
  assert( iFormat>=1 && iFormat<=CACHE_FORMAT_NEW );
  if( strcmp(zSuffix, "lru")==0 ) return bLru;
  if( strcmp(zSuffix, "tag")==0 || strcmp(zSuffix, "feed")==0 ){
    return iFormat>=3;
  }
  return 1;
}

/* Make the shadow tables of a new cache table zDb.zName. */
static int cacheCreateTables(sqlite3 *db, const char *zDb, const char *zName,
                             const cache_options *pOpt, i64 uid, char **pzErr){
  const char *d = zDb, *n = zName;
  char *zSql;
  int rc;
  assert( uid>0 );
  rc = cacheShadowFree(db, d, n, "create", pzErr);
  if( rc ) return rc;       /* *pzErr says which name is taken */
  zSql = sqlite3_mprintf(
    "CREATE TABLE \"%w\".\"%w_config\"(id INTEGER PRIMARY KEY,"
    " capacity INTEGER NOT NULL, bytes INTEGER NOT NULL,"
    " entries INTEGER NOT NULL, seq INTEGER NOT NULL, hits INTEGER NOT NULL,"
    " misses INTEGER NOT NULL, evictions INTEGER NOT NULL,"
    " expired INTEGER NOT NULL, uid INTEGER NOT NULL DEFAULT 0,"
    " policy INTEGER NOT NULL DEFAULT 0, head INTEGER NOT NULL DEFAULT 0,"
    " low INTEGER NOT NULL DEFAULT 0, dead INTEGER NOT NULL DEFAULT 0,"
    " dttl INTEGER NOT NULL DEFAULT 0, maxent INTEGER NOT NULL DEFAULT 0,"
    " feed INTEGER NOT NULL DEFAULT 0, tagged INTEGER NOT NULL DEFAULT 0,"
    " fseq INTEGER NOT NULL DEFAULT 0, elow INTEGER,"
    " eseq INTEGER NOT NULL DEFAULT -1);"
    "INSERT INTO \"%w\".\"%w_config\" VALUES(1, %lld, 0, 0, 0, 0, 0, 0, 0,"
    " %lld, %d, 0, 0, 0, %lld, %lld, %lld, 0, 0, NULL, 0);"
    "CREATE TABLE \"%w\".\"%w_data\"(id INTEGER PRIMARY KEY,"
    " key NOT NULL UNIQUE, created INTEGER NOT NULL, expires INTEGER,"
    " size INTEGER, value NOT NULL);"
    "CREATE TABLE \"%w\".\"%w_expiry\"(expires INTEGER NOT NULL,"
    " id INTEGER NOT NULL, PRIMARY KEY(expires, id)) WITHOUT ROWID;"
    CACHE_REC_DDL CACHE_V3_DDL,
    d, n, d, n, pOpt->nCapacity, uid, pOpt->ePolicy, pOpt->nDefaultTtl,
    pOpt->nMaxEntries, pOpt->nFeed, d, n, d, n,
    d, n, d, uid, n, d, n, d, n, d, uid, n, d, n);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc ) *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
  return rc;
}

/* Free instance p and give back its reference on its connection's
** cache_conn (an instance may outlive the module's registration:
** sqlite3_drop_modules ends that while tables are connected). */
static void cacheVtabFree(cache_vtab *p){
  if( p ){
    cache_conn *pConn = p->pConn;
    sqlite3_free(p->pSpare);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p->base.zErrMsg);
    sqlite3_free(p);
    acornCacheConnRelease(pConn);
  }
}

/* Take instance p off its connection's list and its table. */
static void cacheVtabRelease(cache_vtab *p){
  cache_vtab **pp;
  for(pp=&p->pConn->pVtabList; *pp && *pp!=p; pp=&(*pp)->pNext){}
  if( *pp ) *pp = p->pNext;
  if( p->pTab ) acornCacheTableUnref(p->pTab);
  p->pTab = 0;
  cacheVtabFree(p);
}

static int cacheInit(
  sqlite3 *db, cache_conn *pConn, int argc, const char *const*argv,
  sqlite3_vtab **ppVtab, char **pzErr, int bCreate
){
  cache_vtab *p;
  cache_options opt;
  int rc;
  char *zSql;

  *ppVtab = 0;
  rc = cacheParseOptions(argc, argv, &opt, pzErr);
  if( rc ) return rc;
  if( bCreate || (sqlite3_stricmp(argv[2], "tag") && sqlite3_stricmp(argv[2], "ttl")) ){
    if( cacheBadName(argv[2], pzErr) ) return SQLITE_ERROR;
  }
  /* A table that older versions let be named tag or ttl: its command
  ** column takes the name, that column is called cache_tag or cache_ttl */
  zSql = sqlite3_mprintf(CACHE_SCHEMA,
                         sqlite3_stricmp(argv[2], "tag") ? "tag" : "cache_tag",
                         sqlite3_stricmp(argv[2], "ttl") ? "ttl" : "cache_ttl",
                         argv[2]);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSql);
  sqlite3_free(zSql);
  if( rc ){
    *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
    return rc;
  }
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->pConn = pConn;
  acornCacheConnRef(pConn);
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  p->opts.nBufferMax = opt.nBuffer;
  p->opts.bAutoflush = opt.bAutoflush;
  if( p->zDb==0 || p->zName==0 ){
    rc = SQLITE_NOMEM;
  }else if( bCreate ){
    /* A random identity: a table dropped and created again under the same
    ** name is another table to the other connections. */
    cache_ident id;
    do{
      sqlite3_randomness(sizeof(id.uid), &id.uid);
      id.uid &= LLONG_MAX;
    }while( id.uid==0 );
    id.iFormat = CACHE_FORMAT_NEW;
    id.ePolicy = opt.ePolicy;
    rc = cacheCreateTables(db, p->zDb, p->zName, &opt, id.uid, pzErr);
    if( rc==SQLITE_OK ) rc = acornCacheVtabAttach(p, &id);
  }else if( sqlite3_get_autocommit(db)
         || sqlite3_txn_state(db, p->zDb)!=SQLITE_TXN_NONE ){
    /* If the config row cannot be read now (a lock, or a schema reload
    ** inside a statement), p is bound at its first use.  Inside a
    ** transaction that has not read this schema yet, it is not read now:
    ** see "WHICH READS HAPPEN WHERE" in cache_table.c. */
    char *zErr = 0;
    rc = acornCacheVtabBind(p, &zErr);
    sqlite3_free(zErr);
    if( (rc&0xff)!=SQLITE_NOMEM ) rc = SQLITE_OK;
  }
  if( rc ){
    if( *pzErr==0 && (rc&0xff)!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
    }
    if( p->pTab ) acornCacheTableUnref(p->pTab);
    cacheVtabFree(p);
    return rc;
  }
  p->pNext = pConn->pVtabList;
  pConn->pVtabList = p;
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int cacheCreate(sqlite3 *db, void *pAux, int argc,
                       const char *const*argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  return cacheInit(db, (cache_conn*)pAux, argc, argv, ppVtab, pzErr, 1);
}

static int cacheConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const*argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  return cacheInit(db, (cache_conn*)pAux, argc, argv, ppVtab, pzErr, 0);
}

/* The last instance of a table to go writes its buffered recency, if that
** can be done safely: autoflush on, no statement running (DEFENSIVE lets a
** vtab write its shadow tables only from inside a statement; at close
** there is none: it is lifted around this flush, where only our statements
** run, and put back).  Otherwise the table keeps it for the next instance
** (as after DETACH, where the schema is already gone) or the close. */
static int cacheDisconnect(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_table *pTab = p->pTab;
  if( pTab && pTab->nRef==1 && pTab->opts.bAutoflush && !pTab->bGone
   && acornCacheUsesUnwritten(&pTab->uses) && !acornCacheStmtBusy(pTab->db, 0) ){
    int bDefensive = 0;
    sqlite3_db_config(pTab->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &bDefensive);
    if( bDefensive ) sqlite3_db_config(pTab->db, SQLITE_DBCONFIG_DEFENSIVE, 0, 0);
    acornCacheFlushStandalone(pTab, 1);
    if( bDefensive ) sqlite3_db_config(pTab->db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0);
  }
  cacheVtabRelease(p);
  return SQLITE_OK;
}

static int cacheDestroy(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_table *pTab = p->pTab;
  const char *zName = pTab ? pTab->zName : p->zName;
  int i, rc, bLru = 0, iFormat = 3;
  if( pTab ) acornCacheFinalizeAll(pTab);
  rc = cacheLruOwned(p->pConn->db, p->zDb, zName, &bLru);
  if( rc==SQLITE_OK ) rc = acornCacheFormatProbe(p->pConn->db, p->zDb, zName,
                                                 &iFormat);
  for(i=0; rc==SQLITE_OK && i<CACHE_NSHADOW; i++){
    char *zSql;
    if( !cacheShadowOwned(azCacheShadow[i], bLru, iFormat) ) continue;
    zSql = sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_%s\"",
                           p->zDb, zName, azCacheShadow[i]);
    rc = zSql ? sqlite3_exec(p->pConn->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc ){
    acorn_vtab_error(pVtab, "cache: %s", sqlite3_errmsg(p->pConn->db));
    return rc;
  }
  if( pTab ){
    if( !sqlite3_get_autocommit(pTab->db)
     && (acornCacheUsesUnwritten(&pTab->uses) || pTab->txn.bOpen
         || pTab->txn.bDrop) ){
      acornCacheTableDropInTxn(pTab);
    }else{
      acornCacheTableRetire(pTab);
    }
  }
  cacheVtabRelease(p);
  return SQLITE_OK;
}

static int cacheRename(sqlite3_vtab *pVtab, const char *zNew){
  cache_vtab *p = (cache_vtab*)pVtab;
  sqlite3 *db = p->pConn->db;
  cache_table *pTab = p->pTab;
  const char *zOld = pTab ? pTab->zName : p->zName;
  char *zErr = 0, *zName1, *zName2;
  int i, rc, bLru = 0, iFormat = 3;
  rc = cacheBadName(zNew, &zErr) ? SQLITE_ERROR
     : cacheShadowFree(db, p->zDb, zNew, "rename to", &zErr);
  if( rc ){
    acorn_vtab_error_take(pVtab, zErr);
    return rc;
  }
  if( pTab ) acornCacheFinalizeAll(pTab);
  rc = cacheLruOwned(db, p->zDb, zOld, &bLru);
  if( rc==SQLITE_OK ) rc = acornCacheFormatProbe(db, p->zDb, zOld, &iFormat);
  for(i=0; rc==SQLITE_OK && i<CACHE_NSHADOW; i++){
    char *zShadow, *zSql;
    if( !cacheShadowOwned(azCacheShadow[i], bLru, iFormat) ) continue;
    zShadow = sqlite3_mprintf("%s_%s", zOld, azCacheShadow[i]);
    if( zShadow==0 ){ rc = SQLITE_NOMEM; break; }
    if( sqlite3_table_column_metadata(db, p->zDb, zShadow, 0, 0, 0, 0, 0, 0)
        ==SQLITE_OK ){
      zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w\" RENAME TO \"%w_%s\"",
                             p->zDb, zShadow, zNew, azCacheShadow[i]);
      rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
      sqlite3_free(zSql);
    }
    sqlite3_free(zShadow);
  }
  if( rc ){
    acorn_vtab_error(pVtab, "cache: %s", rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                          : sqlite3_errmsg(db));
    return rc;
  }
  zName1 = sqlite3_mprintf("%s", zNew);
  zName2 = sqlite3_mprintf("%s", zNew);
  if( zName1==0 || zName2==0 ){
    sqlite3_free(zName1);
    sqlite3_free(zName2);
    return SQLITE_NOMEM;
  }
  sqlite3_free(p->zName);
  p->zName = zName1;
  if( pTab ){
    sqlite3_free(pTab->zName);
    pTab->zName = zName2;
  }else{
    sqlite3_free(zName2);
  }
  return SQLITE_OK;
}

static int cacheShadowName(const char *zSuffix){
  int i;
  for(i=0; i<CACHE_NSHADOW; i++){
    if( sqlite3_stricmp(zSuffix, azCacheShadow[i])==0 ) return 1;
  }
  return 0;
}

/* -------------------------------------------------------- transactions */

static int cacheBegin(sqlite3_vtab *pVtab){
  int rc;
  cache_table *p = cacheVtabTable((cache_vtab*)pVtab, &rc);
  if( p && !p->txn.bOpen ) acornCacheTableJoin(p);
  assert( p==0 || p->txn.bOpen );
  return rc;
}

/* Write the held config row (before the commit, and as a savepoint
** begins).  Idempotent. */
static int cacheSync(sqlite3_vtab *pVtab){
  cache_vtab *pV = (cache_vtab*)pVtab;
  cache_op op;
  if( pV->pTab==0 ) return SQLITE_OK;
  acornCacheOpInit(&op, pV->pTab, pV);
  if( pV->pTab->bSetBroken ){
    /* a half-written set that could not be undone is never committed */
    return cacheOpFinish(&op, acornCacheSetBroken(&op));
  }
  return cacheOpFinish(&op, acornCacheConfigSync(&op));
}

static int cacheCommit(sqlite3_vtab *pVtab){
  cache_table *p = ((cache_vtab*)pVtab)->pTab;
  if( p ) acornCacheTableTxnEnd(p, 1);
  return SQLITE_OK;
}

static int cacheRollback(sqlite3_vtab *pVtab){
  cache_table *p = ((cache_vtab*)pVtab)->pTab;
  if( p ){
    acornCacheTxnRollback(&p->txn, &p->uses, -1);
    acornCacheTableTxnEnd(p, 0);
  }
  return SQLITE_OK;
}

/* The config row goes to the table as a savepoint begins, so that the
** b-tree holds, for every savepoint, the row as it began: ROLLBACK TO
** (SQLite rolls the b-trees back before it calls xRollbackTo) then reads
** it again.  A DROP TABLE rolled back to a savepoint brings the counters
** back with the table that way too.  Between savepoints (the writes of one
** statement) the row stays held.
**
** A level whose xSavepoint did not write the row: ours failed (the
** savepoint fails with it), or another table's failed before SQLite came
** to this one (SQLite stops at the first error, then rolls every table in
** the transaction back to the level).  Either way the level ends at once
** with nothing done in it, so what is held is how it began, and ROLLBACK
** TO it keeps that: the b-tree has an older row.  So does a savepoint
** opened by the config row's own write (a trigger on the config table
** makes it one, and other tables' writes of theirs may open more inside
** it): the row is not written again from inside that write (bCfgWriting).
**
** aCfgSaved[k] says, for each open level k this table knows of, whether
** the b-tree holds the row as the level began: the row was written then,
** or was not newer than the b-tree's (held clean, or not held).  A level
** it was not told of is one of the levels just described, known the same
** way: was the row newer when it began?  It still is, since nothing was
** done in it.  Levels that began before the table joined the transaction,
** when it had written nothing, are known so too, and so is the
** transaction's own start (level -1: ROLLBACK TO the savepoint that began
** it). */
static int cacheLevelSaved(const cache_table *p, int iLevel){
  if( iLevel<0 ) return 1;
  if( iLevel<p->held.nCfgSaved ) return p->held.aCfgSaved[iLevel];
  return p->held.eCfg!=CACHE_CFG_DIRTY;
}

static int cacheSavepoint(sqlite3_vtab *pVtab, int iSavepoint){
  cache_table *p = ((cache_vtab*)pVtab)->pTab;
  int rc, k;
  if( p==0 ) return SQLITE_OK;
  if( !p->txn.bOpen ) acornCacheTableJoin(p);
  if( iSavepoint<0 ) return cacheSync(pVtab);   /* (not made by SQLite) */
  if( iSavepoint>=p->held.nCfgSavedAlloc ){
    int nNew = iSavepoint + 8;
    unsigned char *aNew = sqlite3_realloc64(p->held.aCfgSaved, (size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;   /* the level fails, not known */
    p->held.aCfgSaved = aNew;
    p->held.nCfgSavedAlloc = nNew;
  }
  assert( iSavepoint<p->held.nCfgSavedAlloc );
  for(k=p->held.nCfgSaved; k<iSavepoint; k++){
    p->held.aCfgSaved[k] = (unsigned char)cacheLevelSaved(p, k);
  }
  if( iSavepoint>p->txn.iLevel ) p->txn.iLevel = iSavepoint;
  rc = cacheSync(pVtab);
  if( p->txn.bOpen ){     /* (a write that failed out of memory may have
                          ** rolled the whole transaction back) */
    p->held.aCfgSaved[iSavepoint] = (unsigned char)(p->held.eCfg!=CACHE_CFG_DIRTY);
    p->held.nCfgSaved = iSavepoint+1;
  }
  acornCacheTableCheck(p);
  return rc;
}

static int cacheRelease(sqlite3_vtab *pVtab, int iSavepoint){
  cache_table *p = ((cache_vtab*)pVtab)->pTab;
  /* not in the transaction (a DROP TABLE in it ended what the table held
  ** of it, cacheDestroy): nothing to move */
  if( p==0 || !p->txn.bOpen ) return SQLITE_OK;
  acornCacheTxnRelease(&p->txn, iSavepoint);
  if( p->held.nCfgSaved>iSavepoint ) p->held.nCfgSaved = iSavepoint<0 ? 0 : iSavepoint;
  acornCacheTableCheck(p);
  return SQLITE_OK;
}

static int cacheRollbackTo(sqlite3_vtab *pVtab, int iSavepoint){
  cache_table *p = ((cache_vtab*)pVtab)->pTab;
  int bSaved;
  if( p==0 ) return SQLITE_OK;
  p->held.iGen++;
  acornCacheChunkDropAll(p);
  acornCacheFormatStale(p, 0);
  /* not in the transaction (a DROP TABLE in it ended what the table held
  ** of it): what is held of the table may be out of date now */
  if( !p->txn.bOpen ) return SQLITE_OK;
  bSaved = cacheLevelSaved(p, iSavepoint);
  acornCacheTxnRollback(&p->txn, &p->uses, iSavepoint);
  if( p->held.nCfgSaved>iSavepoint+1 ) p->held.nCfgSaved = iSavepoint+1;
  if( bSaved ) p->held.eCfg = CACHE_CFG_NONE;  /* the b-tree has it as it began */
  acornCacheTableCheck(p);
  return SQLITE_OK;
}

/* ------------------------------------------------------------- reads */

typedef struct cache_cursor cache_cursor;
struct cache_cursor {
  sqlite3_vtab_cursor base;
  cache_table *pTab;    /* the table read (a reference), or 0 */
  sqlite3_stmt *pStmt;  /* the read statement, from a slot or private */
  int iSlot;            /* slot of pStmt in pTab->st.aRead[], -1 if private */
  int bStepped;         /* pStmt was stepped since its last reset */
  int idxNum;
  int bEof;
  int bTouched;         /* this row's use is recorded */
  i64 now;              /* unix ms at xFilter: expiry cut-off */
  sqlite3_value **apIn; /* IN values */
  int nIn, iIn;
  /* A point lookup (key = ?, or each value of key IN (...)) runs the
  ** exact statement, then, for an INTEGER or REAL value, the numeric one:
  ** the TEXT keys that NUMERIC affinity makes that number, which SQLite
  ** keeps when the other side of the comparison has a numeric affinity
  ** (t.key = ints.i) and drops when not (key = 3) as it checks them. */
  int bNumPhase;        /* pStmt is the numeric statement */
  sqlite3_value *pNum;  /* key = ?'s value, if it is a number (a copy) */
  int bFound;           /* the exact statement found the value's row */
  int bHit;             /* a row of the value's lookup had its value read */
  int bInNext;          /* IN: the lookup of the next value comes next */
  char aKey[CACHE_KEY_BUF];  /* a key=? lookup's key, if short, bound from
                        ** here (acornCacheBindKeyIn) */
};

static const char *const azCacheIdxStr[16] = {
  "scan",         "key=?",         "key IN (...)",         "?",
  "scan value",   "key=? value",   "key IN (...) value",   "?",
  "scan lru",     "key=? lru",     "key IN (...) lru",     "?",
  "scan value lru", "key=? value lru", "key IN (...) value lru", "?",
};

/* The idxStr of a plan with a tag bit: the plan's words with "tag=?" in
** place of "scan" and " tag" after them if the tag is read. */
static void cacheIdxStrTag(sqlite3_index_info *pInfo, int idxNum){
  const char *zBase = azCacheIdxStr[idxNum & 15];
  char *z;
  assert( idxNum & (CACHE_IDX_TAG|CACHE_IDX_TAGCOL) );
  assert( !(idxNum & CACHE_IDX_TAG) || strncmp(zBase, "scan", 4)==0 );
  if( idxNum & CACHE_IDX_TAG ) zBase += 4;      /* (the plan is a scan) */
  z = sqlite3_mprintf("%s%s%s", (idxNum & CACHE_IDX_TAG) ? "tag=?" : "",
                      zBase, (idxNum & CACHE_IDX_TAGCOL) ? " tag" : "");
  if( z ){
    pInfo->idxStr = z;
    pInfo->needToFreeIdxStr = 1;
  }
}

static int cacheBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, iEq = -1, iIn = -1, iTag = -1, idxNum = 0;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    const char *zColl;
    if( (pC->iColumn!=CACHE_COLUMN_KEY && pC->iColumn!=CACHE_COLUMN_TAG)
     || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ || !pC->usable ) continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
    if( pC->iColumn==CACHE_COLUMN_TAG ){
      if( iTag<0 ) iTag = i;      /* (an IN list: one xFilter per value) */
    }else if( sqlite3_vtab_in(pInfo, i, -1) ){
      if( iIn<0 ) iIn = i;
    }else if( iEq<0 ){
      iEq = i;
    }
  }
  /* A point lookup on key returns every row the comparison may match
  ** (cacheCursorAdvance): SQLite checks each (omit 0) with the affinity
  ** the other side brings, so the answer is a plain table's whatever the
  ** plan; and it is no unique scan. */
  if( iEq>=0 ){
    pInfo->aConstraintUsage[iEq].argvIndex = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 1;
    idxNum = CACHE_IDX_EQ;
  }else if( iIn>=0 ){
    sqlite3_vtab_in(pInfo, iIn, 1);
    pInfo->aConstraintUsage[iIn].argvIndex = 1;
    pInfo->estimatedCost = 100.0;
    pInfo->estimatedRows = 10;
    idxNum = CACHE_IDX_IN;
  }else if( iTag>=0 ){
    pInfo->aConstraintUsage[iTag].argvIndex = 1;
    pInfo->aConstraintUsage[iTag].omit = 1;
    pInfo->estimatedCost = 1000.0;
    pInfo->estimatedRows = 100;
    idxNum = CACHE_IDX_TAG;
  }else{
    pInfo->estimatedCost = 1000000.0;
    pInfo->estimatedRows = 1000000;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_VALUE) ){
    idxNum |= CACHE_IDX_VALUE;
  }
  if( pInfo->colUsed & (((sqlite3_uint64)1<<CACHE_COLUMN_LAST_USED)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_HITS)) ){
    idxNum |= CACHE_IDX_LRU;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_SIZE) ){
    idxNum |= CACHE_IDX_SIZE;
  }
  if( pInfo->colUsed & (((sqlite3_uint64)1<<CACHE_COLUMN_CREATED)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_EXPIRES)) ){
    idxNum |= CACHE_IDX_MORE;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_TAG) ){
    idxNum |= CACHE_IDX_TAGCOL;
  }
  assert( (idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN|CACHE_IDX_TAG))==0
       || ((idxNum & CACHE_IDX_EQ)!=0) + ((idxNum & CACHE_IDX_IN)!=0)
          + ((idxNum & CACHE_IDX_TAG)!=0)==1 );
  pInfo->idxNum = idxNum;
  pInfo->idxStr = (char*)azCacheIdxStr[idxNum & 15];
  if( idxNum & (CACHE_IDX_TAG|CACHE_IDX_TAGCOL) ) cacheIdxStrTag(pInfo, idxNum);
  return SQLITE_OK;
}

/* A cursor: the one a close of this instance kept, or a new one. */
static int cacheOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_cursor *pCur = (cache_cursor*)p->pSpare;
  p->pSpare = 0;
  if( pCur==0 ) pCur = sqlite3_malloc64(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->iSlot = -1;
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void cacheCursorFreeIn(cache_cursor *pCur){
  int i;
  assert( pCur->nIn>=0 && pCur->iIn<=pCur->nIn );
  for(i=0; i<pCur->nIn; i++) sqlite3_value_free(pCur->apIn[i]);
  sqlite3_free(pCur->apIn);
  pCur->apIn = 0;
  pCur->nIn = pCur->iIn = 0;
  sqlite3_value_free(pCur->pNum);
  pCur->pNum = 0;
}

/* Give back the cursor's statement: reset into its slot, or finalize. */
static void cacheCursorRelease(cache_cursor *pCur){
  cache_table *p = pCur->pTab;
  if( pCur->pStmt==0 ) return;
  assert( p!=0 && pCur->iSlot<CACHE_NREAD );
  if( pCur->iSlot>=0 && p->st.aRead[pCur->iSlot]==pCur->pStmt ){
    assert( p->st.aReadBusy[pCur->iSlot] );
    if( pCur->bStepped ) sqlite3_reset(pCur->pStmt);
    if( (pCur->idxNum & CACHE_IDX_EQ) && !pCur->bNumPhase ){
      sqlite3_bind_null(pCur->pStmt, 1);  /* (it may point into aKey) */
    }
    p->st.aReadBusy[pCur->iSlot] = 0;
  }else{
    sqlite3_finalize(pCur->pStmt);
  }
  pCur->pStmt = 0;
  pCur->iSlot = -1;
  pCur->bStepped = 0;
}

/* (Its memory is kept for the instance's next cursor: a get opens and
** closes one each time it runs.) */
static int cacheClose(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  cache_vtab *p = (cache_vtab*)cur->pVtab;
  cacheCursorRelease(pCur);
  cacheCursorFreeIn(pCur);
  assert( pCur->pStmt==0 && pCur->iSlot==-1 && pCur->apIn==0 );
  if( pCur->pTab ) acornCacheTableUnref(pCur->pTab);
  if( p->pSpare==0 ){
    p->pSpare = pCur;
  }else{
    sqlite3_free(pCur);
  }
  return SQLITE_OK;
}

/* Read statement columns. */
#define CACHE_READ_ID       0
#define CACHE_READ_KEY      1
#define CACHE_READ_CREATED  2
#define CACHE_READ_EXPIRES  3
#define CACHE_READ_VALUE    4
#define CACHE_READ_SIZE     5
#define CACHE_READ_TAG      6

/* The read statement's text for the plan's bits (columns not asked for
** are NULL: positions stay CACHE_READ_*; last_used falls back on
** created).  Binds: ?1 the key, ?2 the time, ?3 the tag.  bTags: the
** table has <t>_tag (format 3).  bNum: the numeric statement of a point
** lookup: the TEXT keys equal to the number ?1 under NUMERIC affinity
** (CAST(...AS NUMERIC) has it, key has none: SQLite applies it to both);
** such a text starts with a space, a sign, a point or a digit (bytes
** 0x09..0x39), a range of the key's index. */
static char *cacheCursorSql(cache_table *p, int idxNum, int bTags, int bNum){
  int bPoint = (idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0;
  int bMore = (idxNum & (CACHE_IDX_MORE|CACHE_IDX_LRU))!=0;
  int bTagEq = (idxNum & CACHE_IDX_TAG)!=0 && !bPoint;
  char *zTag = 0, *zFrom, *zSql;
  assert( !bNum || bPoint );
  if( !bTags ){
    zTag = sqlite3_mprintf("NULL");
  }else if( bTagEq ){
    zTag = sqlite3_mprintf("g.tag");
  }else if( idxNum & CACHE_IDX_TAGCOL ){
    zTag = sqlite3_mprintf("(SELECT tag FROM \"%w\".\"%w_tag\" WHERE id=d.id)",
                           p->zDb, p->zName);
  }else{
    zTag = sqlite3_mprintf("NULL");
  }
  zFrom = bTagEq && bTags
      ? sqlite3_mprintf("\"%w\".\"%w_tag\" g JOIN \"%w\".\"%w_data\" d"
                        " ON d.id=g.id WHERE g.tag=?3 AND", p->zDb, p->zName,
                        p->zDb, p->zName)
      : sqlite3_mprintf("\"%w\".\"%w_data\" d WHERE %s", p->zDb, p->zName,
                        bTagEq ? "0 AND" : "");
  zSql = zTag && zFrom ? sqlite3_mprintf(
      "SELECT d.id, key, %s, %s, %s, %s, %s FROM %s"
      " %s(expires IS NULL OR expires>?2)",
      bMore ? "created" : "NULL",
      bMore ? "expires" : "NULL",
      (idxNum & CACHE_IDX_VALUE) ? "value" : "NULL",
      (idxNum & CACHE_IDX_SIZE) ? CACHE_SIZE_SQL : "NULL",
      zTag, zFrom, !bPoint ? "" : bNum ? "key>=char(9) AND key<':' AND"
      " key=CAST(?1 AS NUMERIC) AND " : "key=?1 AND ") : 0;
  sqlite3_free(zTag);
  sqlite3_free(zFrom);
  return zSql;
}

static int cacheCursorStatement(cache_cursor *pCur, int idxNum, int bNum){
  cache_table *p = pCur->pTab;
  int bPoint = (idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0;
  int bMore = (idxNum & (CACHE_IDX_MORE|CACHE_IDX_LRU))!=0;
  int bValue = (idxNum & CACHE_IDX_VALUE)!=0;
  int bSize = (idxNum & CACHE_IDX_SIZE)!=0;
  int bTagCol = (idxNum & CACHE_IDX_TAGCOL)!=0;
  int bTagEq = (idxNum & CACHE_IDX_TAG)!=0 && !bPoint;
  int iSlot = bPoint | (bMore<<1) | (bValue<<2) | (bSize<<3) | (bTagCol<<4)
            | (bTagEq<<5) | ((bPoint && bNum)<<6);
  int bKeep = 1;
  char *zSql;
  int rc;
  assert( p!=0 && iSlot>=0 && iSlot<CACHE_NREAD );
  if( pCur->pStmt && pCur->iSlot==iSlot ){
    return SQLITE_OK;          /* reset when its last use ended */
  }
  cacheCursorRelease(pCur);
  pCur->bNumPhase = bPoint && bNum;
  if( p->st.aRead[iSlot] && !p->st.aReadBusy[iSlot] ){
    pCur->pStmt = p->st.aRead[iSlot];
    pCur->iSlot = iSlot;
    p->st.aReadBusy[iSlot] = 1;
    return SQLITE_OK;
  }
  if( (bTagCol || bTagEq) && p->iFormat<3 ){
    /* an older table has no tags, unless another connection converted it
    ** since: that statement is not kept, the next one looks again */
    int iFormat = p->iFormat;
    rc = acornCacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
    if( rc ) return rc;
    bKeep = iFormat>=3;
  }
  zSql = cacheCursorSql(p, idxNum, bKeep, bPoint && bNum);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1,
           SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &pCur->pStmt, 0);
  sqlite3_free(zSql);
  if( rc ){
    acorn_vtab_error(pCur->base.pVtab, "cache: %s", sqlite3_errmsg(p->db));
    return rc;
  }
  if( p->st.aRead[iSlot]==0 && bKeep ){
    p->st.aRead[iSlot] = pCur->pStmt;
    p->st.aReadBusy[iSlot] = 1;
    pCur->iSlot = iSlot;
  }
  assert( pCur->pStmt!=0 );
  return SQLITE_OK;
}

/* Is v a number a point lookup also runs the numeric statement for? */
static int cacheIsNumber(sqlite3_value *v){
  int e = sqlite3_value_type(v);
  return e==SQLITE_INTEGER || e==SQLITE_FLOAT;
}

/* Move the cursor to statement bNum (exact 0, numeric 1) of its plan. */
static int cacheCursorPhase(cache_cursor *pCur, int bNum){
  int rc = cacheCursorStatement(pCur, pCur->idxNum, bNum);
  if( rc ) return rc;
  assert( pCur->bNumPhase==(bNum && (pCur->idxNum
                                     & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0) );
  if( pCur->bStepped ){
    sqlite3_reset(pCur->pStmt);
    pCur->bStepped = 0;
  }
  sqlite3_bind_int64(pCur->pStmt, 2, pCur->now);
  return SQLITE_OK;
}

/* Step to the next live row: through a point lookup's exact statement,
** then its numeric one (for a number); for IN, value by value through the
** list.  A get that read no value from either counts a miss. */
static int cacheCursorAdvance(cache_cursor *pCur){
  cache_table *p = pCur->pTab;
  int bPoint = (pCur->idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0;
  int rc;
  assert( p!=0 && pCur->pStmt!=0 );
  assert( !pCur->bInNext || (pCur->idxNum & CACHE_IDX_IN) );
  pCur->bTouched = 0;
  for(;;){
    sqlite3_value *pVal;
    if( pCur->bInNext ){
      /* IN: the next value, on the exact statement */
      if( pCur->iIn>=pCur->nIn ){
        pCur->bEof = 1;
        return SQLITE_OK;
      }
      if( pCur->bNumPhase && (rc = cacheCursorPhase(pCur, 0))!=0 ) return rc;
      sqlite3_bind_value(pCur->pStmt, 1, pCur->apIn[pCur->iIn++]);
      pCur->bFound = pCur->bHit = 0;
      pCur->bInNext = 0;
    }
    pCur->bStepped = 1;
    rc = sqlite3_step(pCur->pStmt);
    if( rc==SQLITE_ROW ){
      if( !pCur->bNumPhase ) pCur->bFound = 1;
      pCur->bEof = 0;
      return SQLITE_OK;
    }
    if( rc!=SQLITE_DONE ){
      sqlite3_reset(pCur->pStmt);
      pCur->bStepped = 0;
      pCur->bEof = 1;
      acorn_vtab_error(pCur->base.pVtab, "cache: %s", sqlite3_errmsg(p->db));
      return rc;
    }
    /* this statement is done: the numeric one next, for a number */
    pVal = !bPoint || pCur->bNumPhase ? 0
         : (pCur->idxNum & CACHE_IDX_IN) ? pCur->apIn[pCur->iIn-1] : pCur->pNum;
    if( pVal && cacheIsNumber(pVal) ){
      rc = cacheCursorPhase(pCur, 1);
      if( rc ) return rc;
      sqlite3_bind_value(pCur->pStmt, 1, pVal);
      continue;
    }
    /* the value's lookup is over */
    if( bPoint && (pCur->idxNum & CACHE_IDX_VALUE)
     && !pCur->bFound && !pCur->bHit && p->ePolicy==CACHE_POLICY_LRU ){
      p->uses.nMiss++;
    }
    if( !(pCur->idxNum & CACHE_IDX_IN) ){
      pCur->bEof = 1;
      return SQLITE_OK;
    }
    sqlite3_reset(pCur->pStmt);
    pCur->bStepped = 0;
    pCur->bInNext = 1;
  }
}

static int cacheFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  cache_cursor *pCur = (cache_cursor*)cur;
  cache_table *p;
  int rc;
  (void)idxStr; (void)argc;
  cacheCursorFreeIn(pCur);
  pCur->bEof = 1;
  p = cacheVtabTable((cache_vtab*)cur->pVtab, &rc);
  if( p==0 ) return rc;
  if( pCur->pTab!=p ){
    /* (the instance was bound to another table since: its statement goes) */
    cacheCursorRelease(pCur);
    if( pCur->pTab ) acornCacheTableUnref(pCur->pTab);
    acornCacheTableRef(p);
    pCur->pTab = p;
  }
  acornCacheHeldCheck(p);
  assert( pCur->pTab==p && pCur->nIn==0 && pCur->pNum==0 );
  pCur->idxNum = idxNum;
  pCur->now = acornCacheNowMs();
  pCur->bFound = pCur->bHit = pCur->bInNext = 0;
  rc = cacheCursorPhase(pCur, 0);
  if( rc ) return rc;
  if( idxNum & CACHE_IDX_EQ ){
    if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return SQLITE_OK;
    if( cacheIsNumber(argv[0]) ){
      pCur->pNum = sqlite3_value_dup(argv[0]);
      if( pCur->pNum==0 ) return SQLITE_NOMEM;
    }
    acornCacheBindKeyIn(pCur->pStmt, 1, argv[0], p->bUtf16, pCur->aKey,
                        (int)sizeof(pCur->aKey));
  }else if( idxNum & CACHE_IDX_TAG ){
    sqlite3_bind_value(pCur->pStmt, 3, argv[0]);   /* (NULL matches none) */
  }else if( idxNum & CACHE_IDX_IN ){
    sqlite3_value *pVal = 0;
    int nAlloc = 0;
    for(rc=sqlite3_vtab_in_first(argv[0], &pVal); rc==SQLITE_OK && pVal;
        rc=sqlite3_vtab_in_next(argv[0], &pVal)){
      if( sqlite3_value_type(pVal)==SQLITE_NULL ) continue;
      if( pCur->nIn==nAlloc ){
        int nNew = nAlloc ? nAlloc*2 : 8;
        sqlite3_value **aNew = sqlite3_realloc64(pCur->apIn,
                                   sizeof(sqlite3_value*)*(size_t)nNew);
        if( aNew==0 ) return SQLITE_NOMEM;
        pCur->apIn = aNew;
        nAlloc = nNew;
      }
      pCur->apIn[pCur->nIn] = sqlite3_value_dup(pVal);
      if( pCur->apIn[pCur->nIn]==0 ) return SQLITE_NOMEM;
      pCur->nIn++;
    }
    if( rc!=SQLITE_OK && rc!=SQLITE_DONE ) return rc;
    assert( pCur->nIn<=nAlloc );
    pCur->bInNext = 1;
  }
  return cacheCursorAdvance(pCur);
}

static int cacheNext(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  if( (pCur->idxNum & CACHE_IDX_EQ) && pCur->pNum==0 ){
    /* a TEXT or BLOB key: one row at most, and no numeric statement */
    pCur->bEof = 1;
    sqlite3_reset(pCur->pStmt);
    pCur->bStepped = 0;
    return SQLITE_OK;
  }
  return cacheCursorAdvance(pCur);
}

static int cacheEof(sqlite3_vtab_cursor *cur){
  return ((cache_cursor*)cur)->bEof;
}

static int cacheRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  assert( !((cache_cursor*)cur)->bEof && ((cache_cursor*)cur)->pStmt!=0 );
  *pRowid = sqlite3_column_int64(((cache_cursor*)cur)->pStmt, CACHE_READ_ID);
  return SQLITE_OK;
}

/* The stored recency of entry id: *pbFound, *pMs, *pHits. */

static int cacheColumnRecency(cache_cursor *pCur, sqlite3_context *ctx, int i){
  cache_table *p = pCur->pTab;
  sqlite3_stmt *pStmt = pCur->pStmt;
  i64 id = sqlite3_column_int64(pStmt, CACHE_READ_ID);
  i64 ms = sqlite3_column_int64(pStmt, CACHE_READ_CREATED), nHits = 0;
  const cache_use *u;
  char *zErr = 0;
  int bFound = 0, rc;
  assert( i==CACHE_COLUMN_LAST_USED || i==CACHE_COLUMN_HITS );
  if( p->ePolicy==CACHE_POLICY_FIFO ){
    if( i==CACHE_COLUMN_LAST_USED ) sqlite3_result_int64(ctx, ms);
    return SQLITE_OK;
  }
  /* stored (a record, or none: never used since the set), with this
  ** connection's buffered uses over it */
  rc = acornCacheStoredUse(p, id, &bFound, &ms, &nHits, &zErr);
  acorn_vtab_error_take(pCur->base.pVtab, zErr);
  if( rc ) return rc;
  u = acornCacheUsesFind(&p->uses, id);
  if( u ){
    ms = u->ms;
    nHits += u->nHit;
  }
  sqlite3_result_int64(ctx, i==CACHE_COLUMN_HITS ? nHits : ms);
  return SQLITE_OK;
}

static int cacheColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  cache_cursor *pCur = (cache_cursor*)cur;
  sqlite3_stmt *pStmt = pCur->pStmt;
  assert( !pCur->bEof && pStmt!=0 && i>=0 && i<=CACHE_COLUMN_COMMAND );
  if( sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;
  switch( i ){
    case CACHE_COLUMN_KEY:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_KEY));
      break;
    case CACHE_COLUMN_VALUE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_VALUE));
      if( !pCur->bTouched && (pCur->idxNum & CACHE_IDX_VALUE) ){
        pCur->bTouched = pCur->bHit = 1;
        acornCacheTouch(pCur->pTab, sqlite3_column_int64(pStmt, CACHE_READ_ID),
                   pCur->now);
      }
      break;
    case CACHE_COLUMN_SIZE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_SIZE));
      break;
    case CACHE_COLUMN_CREATED:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_CREATED));
      break;
    case CACHE_COLUMN_LAST_USED:
    case CACHE_COLUMN_HITS:
      return cacheColumnRecency(pCur, ctx, i);
    case CACHE_COLUMN_EXPIRES:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_EXPIRES));
      break;
    case CACHE_COLUMN_TAG:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_TAG));
      break;
    default:
      break;     /* the command column reads as NULL */
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------- writes */

/* The commands; the first CACHE_CMD_NARG take an argument in value. */
static const char *const azCacheCmd[] = {
  "capacity", "default_ttl", "max_entries", "feed", "purge", "flush",
  "integrity_check"
};
#define CACHE_NCMD      (int)(sizeof(azCacheCmd)/sizeof(azCacheCmd[0]))
#define CACHE_CMD_NARG  4
#define CACHE_CMD_INTEGRITY 6

/* The argument of command iCmd (< CACHE_CMD_NARG) in *piVal: capacity in
** bytes; default_ttl in seconds, max_entries and feed counts, where NULL
** is 0 (off).  A number, or text as the option of that name takes it. */
static int cacheCommandArg(cache_vtab *p, int iCmd, sqlite3_value *pArg,
                           i64 *piVal){
  static const char *const azHelp[] = {
    CACHE_SIZE_HELP, CACHE_TTL_HELP, CACHE_MAXENT_HELP, CACHE_FEED_HELP
  };
  static const i64 aMax[] = {
    CACHE_MAX_CAPACITY, (i64)CACHE_MAX_TTL, CACHE_MAX_COUNTER, CACHE_MAX_FEED
  };
  const char *z = 0;
  int e = sqlite3_value_type(pArg), bBad;
  assert( iCmd>=0 && iCmd<CACHE_CMD_NARG );
  assert( CACHE_CMD_NARG==(int)(sizeof(aMax)/sizeof(aMax[0])) );
  *piVal = 0;
  if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ){
    bBad = !acornCacheWholeNumber(pArg, piVal) || *piVal<(iCmd==0)
        || *piVal>aMax[iCmd];
  }else if( e==SQLITE_TEXT ){
    int rc = acornCacheTextArg(pArg, &z);
    if( rc==SQLITE_NOMEM ) return rc;
    bBad = rc ? 1
         : iCmd==0 ? acornCacheParseSize(z, piVal)
         : iCmd==1 ? acornCacheParseDuration(z, piVal)
         : acornCacheParseCount(z, aMax[iCmd], piVal);
  }else{
    bBad = e!=SQLITE_NULL || iCmd==0;
  }
  if( !bBad ){
    assert( *piVal>=(iCmd==0) && *piVal<=aMax[iCmd] );
    return SQLITE_OK;
  }
  if( e==SQLITE_NULL ){
    acorn_vtab_error(&p->base, "cache: bad %s NULL; %s", azCacheCmd[iCmd],
                     azHelp[iCmd]);
  }else if( e==SQLITE_TEXT && z==0 ){
    acorn_vtab_error(&p->base, "cache: bad %s (TEXT with a NUL byte); %s",
                     azCacheCmd[iCmd], azHelp[iCmd]);
  }else{
    acorn_vtab_error(&p->base, "cache: bad %s '%s'; %s", azCacheCmd[iCmd],
                     (const char*)sqlite3_value_text(pArg), azHelp[iCmd]);
  }
  return SQLITE_ERROR;
}

/* An INSERT with the command column set: argv as xUpdate has it.  The
** row names the command and, for those that take one, its argument in
** value: any other column given is refused, naming it.  The command's
** index in azCacheCmd in *piCmd, its argument in *piVal. */
static int cacheCommandCheck(cache_vtab *p, sqlite3_value **argv,
                             const char *zCmd, int *piCmd, i64 *piVal){
  int i, iCmd;
  for(iCmd=0; iCmd<CACHE_NCMD && sqlite3_stricmp(zCmd, azCacheCmd[iCmd]); iCmd++){}
  if( iCmd==CACHE_NCMD ){
    acorn_vtab_error(&p->base, "cache: unknown command '%s'; accepted commands"
                     " are capacity, default_ttl, max_entries, feed, purge,"
                     " flush and integrity_check", zCmd);
    return SQLITE_ERROR;
  }
  for(i=-1; i<CACHE_COLUMN_COMMAND; i++){
    if( i==CACHE_COLUMN_VALUE && iCmd<CACHE_CMD_NARG ) continue;
    if( sqlite3_value_type(argv[2+i])!=SQLITE_NULL ){
      acorn_vtab_error(&p->base, "cache: a command row sets only the command"
          " column and, for capacity, default_ttl, max_entries and feed,"
          " value; %s was given too", i<0 ? "rowid" : azCacheColumn[i]);
      return SQLITE_ERROR;
    }
  }
  assert( iCmd>=0 && iCmd<CACHE_NCMD );
  *piCmd = iCmd;
  if( iCmd>=CACHE_CMD_NARG ) return SQLITE_OK;
  return cacheCommandArg(p, iCmd, argv[2+CACHE_COLUMN_VALUE], piVal);
}

/* Run a command: integrity_check checks the stored table and writes
** nothing; the others are writes (buffered recency written, the option
** set, expired entries reclaimed, eviction down to the bounds). */
static int cacheCommand(cache_vtab *p, cache_table *pTab, sqlite3_value **argv){
  const char *zCmd = 0;
  cache_op op;
  i64 iVal = 0;
  int rc, iCmd = 0;
  rc = acornCacheTextArg(argv[2+CACHE_COLUMN_COMMAND], &zCmd);
  if( rc==SQLITE_MISMATCH ){
    acorn_vtab_error(&p->base, "cache: a command is one of the words capacity,"
        " default_ttl, max_entries, feed, purge, flush and integrity_check,"
        " as TEXT; got %s", sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])
        ==SQLITE_TEXT ? "TEXT with a NUL byte" : "a BLOB");
    return SQLITE_ERROR;
  }
  if( rc ) return rc;
  rc = cacheCommandCheck(p, argv, zCmd, &iCmd, &iVal);
  if( rc ) return rc;
  rc = acornCacheOpBegin(&op, pTab, p, 0);
  if( iCmd==CACHE_CMD_INTEGRITY ){
    char *zErr = 0;
    if( rc==SQLITE_OK ) rc = acornCacheConfigSync(&op);
    if( rc ) return cacheOpFinish(&op, rc);
    rc = acornCacheIntegrity(op.pTab, &zErr);
    acorn_vtab_error_take(&p->base, zErr);
    return rc;
  }
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(&op);
  if( rc==SQLITE_OK ){
    switch( iCmd ){
      case 0: op.cfg.capacity = iVal;     break;
      case 1: op.cfg.nDefaultTtl = iVal;  break;
      case 2: op.cfg.nMaxEntries = iVal;  break;
      case 3: op.cfg.nFeed = iVal;        break;
    }
  }
  assert( rc!=SQLITE_OK || iCmd>=CACHE_CMD_NARG || iVal>=0 );
  if( rc==SQLITE_OK && iCmd==3 ) rc = acornCacheFeedTrim(&op);
  if( rc==SQLITE_OK ) rc = acornCacheReclaimExpired(&op);
  if( rc==SQLITE_OK ) rc = acornCacheEvict(&op);
  return cacheOpFinish(&op, acornCacheOpCommit(&op, rc));
}

/* Refuse a write to the rowid or a read-only column (bUpdate: an UPDATE,
** where an unchanged column is not written). */
static int cacheWritableCheck(cache_vtab *p, sqlite3_value **argv,
                              int bUpdate){
  int i;
  if( bUpdate ? (!sqlite3_value_nochange(argv[1])
                 && sqlite3_value_int64(argv[1])!=sqlite3_value_int64(argv[0]))
              : sqlite3_value_type(argv[1])!=SQLITE_NULL ){
    acorn_vtab_error(&p->base, "cache: rowid is read-only");
    return SQLITE_ERROR;
  }
  if( bUpdate && !sqlite3_value_nochange(argv[2+CACHE_COLUMN_COMMAND])
   && sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
    acorn_vtab_error(&p->base, "cache: commands are run by INSERT INTO"
        " \"%w\"(\"%w\", value) VALUES(command, argument)", p->zName, p->zName);
    return SQLITE_ERROR;
  }
  for(i=CACHE_COLUMN_SIZE; i<=CACHE_COLUMN_HITS; i++){
    if( bUpdate ? !sqlite3_value_nochange(argv[2+i])
                : sqlite3_value_type(argv[2+i])!=SQLITE_NULL ){
      acorn_vtab_error(&p->base, "cache: column %s is read-only; writable"
                       " columns are key, value, expires, tag and ttl",
                       azCacheColumn[i]);
      return SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

static int cacheDeleteRow(cache_vtab *p, cache_table *pTab, i64 id){
  cache_op op;
  int bFound = 0;
  int rc = acornCacheOpBegin(&op, pTab, p, 0);
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(&op);
  if( rc==SQLITE_OK ) rc = acornCacheDeleteEntry(&op, id, &bFound);
  if( rc==SQLITE_OK ) rc = acornCacheReclaimExpired(&op);
  return cacheOpFinish(&op, acornCacheOpCommit(&op, rc));
}

/* INSERT: a set (OR IGNORE: only if no live entry has the key). */
static int cacheInsertRow(cache_vtab *p, cache_table *pTab,
                          sqlite3_value **argv, int bIgnore, i64 *pRowid){
  i64 nTtlMs = -1;
  cache_new new;
  cache_op op;
  int bIgnored = 0;
  int rc = cacheWritableCheck(p, argv, 0);
  if( rc ) return rc;
  memset(&new, 0, sizeof(new));
  acornCacheOpInit(&op, pTab, p);
  new.pKey = argv[2+CACHE_COLUMN_KEY];
  new.pValue = argv[2+CACHE_COLUMN_VALUE];
  rc = acornCacheCheckValues(&op, &new, argv[2+CACHE_COLUMN_EXPIRES],
                             argv[2+CACHE_COLUMN_TTL], &nTtlMs);
  new.pTag = argv[2+CACHE_COLUMN_TAG];
  if( rc==SQLITE_OK ) rc = acornCacheCheckTag(&op, new.pTag);
  if( rc ) return cacheOpFinish(&op, rc);
  rc = acornCacheOpBegin(&op, pTab, p, 0);
  if( rc==SQLITE_OK ){
    rc = acornCacheSetGiven(&op, &new, nTtlMs, bIgnore, pRowid, &bIgnored);
    if( bIgnored ) return cacheOpFinish(&op, rc);
  }
  return cacheOpFinish(&op, acornCacheOpCommit(&op, rc));
}

/* The row an UPDATE changes, as stored: copies of key, value and expires,
** its created, and the hits it keeps (stored, plus this connection's
** buffered uses of it, written just before the set).  pKey is 0 if the
** row went away under the statement. */
typedef struct cache_old cache_old;
struct cache_old {
  sqlite3_value *pKey, *pValue, *pExpires;
  sqlite3_value *pTag;          /* 0: none */
  i64 iCreated, nHits;
};

static int cacheOldRead(cache_op *op, i64 id, cache_old *pOld){
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, CACHE_STMT_ROW, &pStmt);
  memset(pOld, 0, sizeof(*pOld));
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    pOld->pKey = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
    pOld->pValue = sqlite3_value_dup(sqlite3_column_value(pStmt, 1));
    pOld->iCreated = sqlite3_column_int64(pStmt, 2);
    pOld->pExpires = sqlite3_value_dup(sqlite3_column_value(pStmt, 3));
    if( pOld->pKey==0 || pOld->pValue==0 || pOld->pExpires==0 ){
      rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
  else sqlite3_reset(pStmt);
  rc = acornCacheOpError(op, rc);
  if( rc==SQLITE_OK && pOld->pKey ) rc = acornCacheTagGet(op, id, &pOld->pTag);
  if( rc==SQLITE_OK && pOld->pKey && op->cfg.ePolicy==CACHE_POLICY_LRU ){
    cache_rec r;
    const cache_use *u = acornCacheUsesFind(&op->pTab->uses, id);
    int bFound = 0;
    rc = acornCacheRecFind(op, id, &r, &bFound);
    if( bFound ) pOld->nHits = r.hits;
    if( u ) pOld->nHits += u->nHit;
  }
  return rc;
}

static void cacheOldFree(cache_old *pOld){
  sqlite3_value_free(pOld->pKey);
  sqlite3_value_free(pOld->pValue);
  sqlite3_value_free(pOld->pExpires);
  sqlite3_value_free(pOld->pTag);
}

/* The new value of column i of an UPDATE: the old one if unchanged. */
static sqlite3_value *cacheNewValue(sqlite3_value **argv, int i,
                                    sqlite3_value *pOld){
  return sqlite3_value_nochange(argv[2+i]) ? pOld : argv[2+i];
}

/* An UPDATE that sets only expires, ttl or tag (key and value unchanged):
** a renewal in place (acornCacheRenew), which writes the entry's row but
** not its value.  SET ttl = ? renews expires; SET expires and ttl, both
** not NULL, is refused; a ttl set to NULL keeps expires.  Checked before
** the first write, as cacheUpdateRow's. */
static int cacheRenewRow(cache_vtab *p, cache_table *pTab,
                         sqlite3_value **argv){
  sqlite3_value *pExpires = argv[2+CACHE_COLUMN_EXPIRES];
  sqlite3_value *pTtl = argv[2+CACHE_COLUMN_TTL];
  cache_renewal renew;
  int bFound = 0, rc;
  i64 nTtlMs = -1;
  cache_op op;
  renew.bSetExpires = !sqlite3_value_nochange(pExpires);
  renew.bSetTag = !sqlite3_value_nochange(argv[2+CACHE_COLUMN_TAG]);
  renew.pTag = argv[2+CACHE_COLUMN_TAG];
  rc = acornCacheOpBegin(&op, pTab, p, 0);
  if( rc==SQLITE_OK ){
    rc = acornCacheCheckExpiry(&op, renew.bSetExpires ? pExpires : 0,
                          sqlite3_value_nochange(pTtl) ? 0 : pTtl,
                          &renew.iExpires, &nTtlMs);
  }
  if( nTtlMs>=0 ) renew.bSetExpires = 1;
  acornCacheTtlApply(&op, nTtlMs, &renew.iExpires);
  if( rc==SQLITE_OK && renew.bSetTag ) rc = acornCacheCheckTag(&op, renew.pTag);
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(&op);
  if( rc==SQLITE_OK ) rc = acornCacheReclaimExpired(&op);
  if( rc==SQLITE_OK ){
    rc = acornCacheRenew(&op, sqlite3_value_int64(argv[0]), &renew, &bFound);
  }
  return cacheOpFinish(&op, acornCacheOpCommit(&op, rc));
}

/* UPDATE: a set that keeps created and hits.  Whatever can refuse it is
** checked before the first write: SQLite opens no statement journal for a
** one-row change of a virtual table, so inside a transaction a write made
** before an error would stay.  The old entry goes; the key is set anew
** (replacing any entry that had the new key).  OR IGNORE skips a row whose
** new key another live entry has. */
static int cacheUpdateRow(cache_vtab *p, cache_table *pTab,
                          sqlite3_value **argv, int bIgnore){
  i64 idOld = sqlite3_value_int64(argv[0]), idOther = 0, idNew = 0;
  i64 nTtlMs = -1;
  sqlite3_value *pExpires, *pTtl;
  int bFound = 0, rc;
  cache_new new;
  cache_old old;
  cache_op op;
  rc = cacheWritableCheck(p, argv, 1);
  if( rc ) return rc;
  if( sqlite3_value_nochange(argv[2+CACHE_COLUMN_KEY])
   && sqlite3_value_nochange(argv[2+CACHE_COLUMN_VALUE]) ){
    return cacheRenewRow(p, pTab, argv);
  }
  memset(&old, 0, sizeof(old));
  memset(&new, 0, sizeof(new));
  rc = acornCacheOpBegin(&op, pTab, p, 0);
  if( rc==SQLITE_OK ) rc = cacheOldRead(&op, idOld, &old);
  if( rc==SQLITE_OK && old.pKey ){
    /* SET ttl = ? renews expires; SET expires and ttl, both not NULL, is
    ** refused; a ttl left or set to NULL keeps expires */
    pTtl = argv[2+CACHE_COLUMN_TTL];
    pExpires = sqlite3_value_nochange(argv[2+CACHE_COLUMN_EXPIRES])
             ? (sqlite3_value_nochange(pTtl)
                || sqlite3_value_type(pTtl)==SQLITE_NULL ? old.pExpires : 0)
             : argv[2+CACHE_COLUMN_EXPIRES];
    new.pKey = cacheNewValue(argv, CACHE_COLUMN_KEY, old.pKey);
    new.pValue = cacheNewValue(argv, CACHE_COLUMN_VALUE, old.pValue);
    rc = acornCacheCheckValues(&op, &new, pExpires,
                          sqlite3_value_nochange(pTtl) ? 0 : pTtl, &nTtlMs);
    acornCacheTtlApply(&op, nTtlMs, &new.iExpires);
    new.pTag = cacheNewValue(argv, CACHE_COLUMN_TAG, old.pTag);
    new.iCreated = old.iCreated;
    new.nHits = old.nHits;
    if( rc==SQLITE_OK ) rc = acornCacheCheckTag(&op, new.pTag);
    if( rc==SQLITE_OK ) rc = acornCacheCheckSize(&op, new.nSize);
    if( rc==SQLITE_OK && new.pKey!=old.pKey && bIgnore ){
      rc = acornCacheLiveKey(&op, new.pKey, idOld, &idOther);
    }
  }
  /* (a row gone away under the statement: nothing to update but the
  ** flush, as every write flushes) */
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(&op);
  if( rc==SQLITE_OK && old.pKey && idOther==0 ){
    rc = acornCacheDeleteEntry(&op, idOld, &bFound);
    if( rc==SQLITE_OK ) rc = acornCacheSet(&op, &new, &idNew);
  }
  cacheOldFree(&old);
  return cacheOpFinish(&op, acornCacheOpCommit(&op, rc));
}

static int cacheUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                       sqlite3_int64 *pRowid){
  cache_vtab *p = (cache_vtab*)pVtab;
  int rc;
  cache_table *pTab = cacheVtabTable(p, &rc);
  if( pTab==0 ) return rc;
  if( argc==1 ) return cacheDeleteRow(p, pTab, sqlite3_value_int64(argv[0]));
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    if( sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
      return cacheCommand(p, pTab, argv);
    }
    return cacheInsertRow(p, pTab, argv,
                          sqlite3_vtab_on_conflict(pTab->db)==SQLITE_IGNORE,
                          pRowid);
  }
  return cacheUpdateRow(p, pTab, argv,
                        sqlite3_vtab_on_conflict(pTab->db)==SQLITE_IGNORE);
}

#if SQLITE_VERSION_NUMBER >= 3044000
/* PRAGMA integrity_check (SQLite 3.44 and later) checks cache tables too:
** a broken invariant is reported as a problem, in *pzErr. */
static int cacheIntegrityMethod(sqlite3_vtab *pVtab, const char *zSchema,
                                const char *zTabName, int mFlags,
                                char **pzErr){
  cache_vtab *pV = (cache_vtab*)pVtab;
  cache_table *pTab;
  cache_op op;
  int rc;
  (void)zSchema; (void)zTabName; (void)mFlags;
  pTab = cacheVtabTable(pV, &rc);
  if( pTab==0 ){
    *pzErr = pV->base.zErrMsg;
    pV->base.zErrMsg = 0;
    return rc==SQLITE_CORRUPT_VTAB ? SQLITE_OK : rc;
  }
  acornCacheOpInit(&op, pTab, 0);
  rc = acornCacheConfigSync(&op);     /* the checks read the row */
  if( rc ){
    *pzErr = op.zErr;
    return rc;
  }
  rc = acornCacheIntegrity(pTab, pzErr);
  return rc==SQLITE_CORRUPT_VTAB ? SQLITE_OK : rc;
}
#endif

static sqlite3_module cacheModule = {
#if SQLITE_VERSION_NUMBER >= 3044000
  /* iVersion    */ 4,
#else
  /* iVersion    */ 3,
#endif
  /* xCreate     */ cacheCreate,
  /* xConnect    */ cacheConnect,
  /* xBestIndex  */ cacheBestIndex,
  /* xDisconnect */ cacheDisconnect,
  /* xDestroy    */ cacheDestroy,
  /* xOpen       */ cacheOpen,
  /* xClose      */ cacheClose,
  /* xFilter     */ cacheFilter,
  /* xNext       */ cacheNext,
  /* xEof        */ cacheEof,
  /* xColumn     */ cacheColumn,
  /* xRowid      */ cacheRowid,
  /* xUpdate     */ cacheUpdate,
  /* xBegin      */ cacheBegin,
  /* xSync       */ cacheSync,
  /* xCommit     */ cacheCommit,
  /* xRollback   */ cacheRollback,
  /* xFindMethod */ 0,
  /* xRename     */ cacheRename,
  /* xSavepoint  */ cacheSavepoint,
  /* xRelease    */ cacheRelease,
  /* xRollbackTo */ cacheRollbackTo,
  /* xShadowName */ cacheShadowName,
#if SQLITE_VERSION_NUMBER >= 3044000
  /* xIntegrity  */ cacheIntegrityMethod,
#endif
};

/* The module, cache_read() and cache_stats(), all on db's cache_conn: each
** registration holds a reference and gives it back in its destructor. */
int acorn_cache_register(sqlite3 *db){
  cache_conn *pConn = acornCacheConnAcquire(db);
  int rc;
  if( pConn==0 ) return SQLITE_NOMEM;
  rc = sqlite3_create_module_v2(db, "cache", &cacheModule, pConn,
                                acornCacheConnRelease);
  if( rc==SQLITE_OK ) rc = acorn_cache_func_register(db, pConn);
  if( rc==SQLITE_OK ) rc = acornCacheFeedRegister(db, pConn);
  return rc;
}
