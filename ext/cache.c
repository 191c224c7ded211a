/*
** cache.c: a capacity-bounded LRU blob store inside the database.
**
** THE TABLE
**
**   CREATE VIRTUAL TABLE thumbs USING cache(capacity = '64MiB');
**
**   Columns (the hidden last one is named after the table, as in FTS5):
**     key        TEXT, BLOB or INTEGER; not NULL; unique; compared as SQLite
**                compares values (1 and '1' are different keys)
**     value      BLOB or TEXT, stored as given; not NULL
**     size       INTEGER  bytes of key plus value as stored (an INTEGER key
**                         counts 8; TEXT in the database encoding)
**     created    INTEGER  unix ms of the set
**     last_used  INTEGER  unix ms of the latest use
**     hits       INTEGER  reads of value since the set
**     expires    INTEGER  unix ms, or NULL for never; settable
**     <table>    HIDDEN   the command column
**   size, created, last_used and hits are read-only.
**
**   Options (CREATE VIRTUAL TABLE ... USING cache(name = value, ...)):
**     capacity        bytes, an integer or a number with a unit B, kB, MB,
**                     GB (powers of 1000), KiB, MiB, GiB (powers of 1024);
**                     default 1GiB.  Kept in the table; later changes by the
**                     'capacity' command persist and win over this option.
**     recency_buffer  how many distinct keys' recency a connection holds in
**                     memory before it writes them (1..1000000, default
**                     100000; about 56 bytes per key)
**
**   Statements:
**     INSERT INTO t(key, value [, expires]) VALUES(...)  set; replaces a key
**     SELECT value FROM t WHERE key = ?                  get; a use
**     SELECT value FROM t WHERE key IN (...)             gets; uses
**     UPDATE t SET value = ?, expires = ? WHERE key = ?  a set (keeps
**                                                        created and hits)
**     DELETE FROM t WHERE key = ?
**     SELECT key, size, created, last_used, hits, expires FROM t
**                                                        listing; not a use
**     INSERT INTO t(t, value) VALUES('capacity', '128MiB')  change capacity
**     INSERT INTO t(t) VALUES('purge')    drop expired entries now
**     INSERT INTO t(t) VALUES('flush')    write this connection's buffered
**                                         recency now
**   Any row whose value column is read counts as a use: its recency moves
**   to the front, its hits and the table's hits go up by one.  A point
**   lookup (key = ? or key IN) in a statement that reads value (an UPDATE's
**   does) and finds nothing live is a miss.  Every INSERT replaces a stored
**   key (there is no conflict handling to choose).
**
** FUNCTIONS
**
**   cache_read(table, key, offset, length)  BLOB
**     Bytes offset..offset+length-1 of the value, read with incremental blob
**     I/O (only the pages needed); shorter at the end of the value, x'' past
**     it; NULL for a missing or expired key (a miss).  A use, like a get.
**   SELECT * FROM cache_stats('thumbs')
**     One row: capacity, entries, bytes, hits, misses, evictions, expired.
**   table is the cache table's name, optionally 'schema.name'.
**
** CAPACITY AND LRU
**
**   The sum of size over stored entries (expired ones included until they
**   are reclaimed) is counted exactly in the config row.  Every write to the
**   table (set, update, delete, command) first reclaims expired entries and
**   then evicts least recently used entries until the new entry fits, in the
**   same transaction, so after every statement the sum is at most the
**   capacity.  An entry larger than the capacity is refused with
**   "cache: entry of N bytes exceeds capacity of M bytes" before anything
**   changes.  Recency is a sequence number (seq in the config row): every set
**   and every flushed use takes the next one, so ties never happen and the
**   order of eviction is exactly the order of last use (sets count as uses).
**
** HOW IT WORKS
**
**   Shadow tables (xShadowName knows the suffixes; DEFENSIVE makes them
**   read-only to ordinary SQL):
**     <t>_config(id=1, capacity, bytes, entries, seq, hits, misses,
**                evictions, expired, uid)                  one row; uid is
**                                      random at CREATE: the table's identity
**                                      (tables made before it have no uid)
**     <t>_data(id INTEGER PRIMARY KEY, key UNIQUE, created, expires, value)
**                                      value last: reading expires must not
**                                      walk a large value's overflow pages
**     <t>_lru(id INTEGER PRIMARY KEY, used UNIQUE, last_used, hits, size)
**                                      narrow: what a use rewrites
**     <t>_expiry(expires, id) WITHOUT ROWID       entries that can expire
**   Every write is done by statements on these tables inside the user's
**   transaction, so ROLLBACK and ROLLBACK TO undo sets, deletes, evictions,
**   capacity changes and flushed recency alike.  A set of a stored key
**   rewrites its rows in place (same id, the key index untouched); a new key
**   takes the next seq as its id (ids are never reused).
**
**   Reads never write.  A use is recorded in a per-connection buffer (one
**   per table; it moves with the table from vtab instance to vtab
**   instance, see "Schema resets" below): an array with one slot per id
**   {ms, hits, use counter}, found through an open hash of indexes, so a
**   get costs one probe and no allocation.  The buffer is written to
**   <t>_lru: its slots are numbered in use-counter order (each taking the
**   next seq as `used`) and written in id order, so the narrow table is
**   walked front to back:
**     - at the start of every write to the table by this connection, inside
**       its transaction (so eviction sees it);
**     - when it holds recency_buffer keys, if the connection is in
**       autocommit mode and no writing statement is running (its own short
**       transaction; on failure it stays buffered);
**     - at disconnect, under the same conditions (DEFENSIVE is lifted
**       around this flush: there is no statement running to allow it),
**       and only if the schema in memory is current (cacheSchemaCurrent);
**     - by the 'flush' command.
**   Slots written inside a transaction are copied to a second array,
**   tagged with the savepoint level; xRollback / xRollbackTo put them back
**   in the buffer with their old counters (older than any use since), and
**   the miss counts with them; xCommit drops them.  So the in-memory state
**   always matches what the database kept.  The listing
**   overlays buffered hits and last_used, cache_stats adds buffered hits and
**   misses, so one connection always sees its own uses.
**
**   xBestIndex: idxNum bits
**     1  CACHE_IDX_EQ     key = ?       argv[0] the key
**     2  CACHE_IDX_IN     key IN (...)  argv[0] the list (sqlite3_vtab_in)
**     4  CACHE_IDX_VALUE  value is read (a use; misses counted)
**     8  CACHE_IDX_LRU    size, last_used or hits is read (join <t>_lru)
**   With neither 1 nor 2 it is a scan of <t>_data in id (creation) order.
**   idxStr names the plan, e.g. "key=? value", "key IN (...)", "scan lru".
**   Only BINARY comparisons on key are used for lookups.
**
**   A registry (process-wide list behind a mutex) maps (db, schema, table)
**   to the connected vtab so that cache_read() and cache_stats() use the
**   connection's buffer; they connect the table first if needed.
**
**   Schema resets.  Any DDL (by this connection or another) makes SQLite
**   connect the table again as a new instance, while the old one lives on
**   until SQLite disconnects it, maybe while a statement runs (no flush
**   then); DETACH disconnects with the schema already gone.  So the buffer
**   belongs to the table, not to the instance: a new instance takes the
**   buffer of the older or parked instance with the same uid (cacheAdopt),
**   which goes stale (inert: not found by cache_read/cache_stats, its
**   transaction events go to its successor, nothing to flush).  A
**   disconnect that cannot flush parks the instance (statements finalized)
**   until the next instance of the table on that connection or the close;
**   so does DROP TABLE inside a transaction (for a ROLLBACK that brings the
**   table back), keeping only the uses not written yet.
**   A buffer whose uid is not the uid of the table now under that name
**   (dropped and created again elsewhere) is dropped, never written.
*/
#include "acorn.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef sqlite3_int64 i64;

#define CACHE_COLUMN_KEY        0
#define CACHE_COLUMN_VALUE      1
#define CACHE_COLUMN_SIZE       2
#define CACHE_COLUMN_CREATED    3
#define CACHE_COLUMN_LAST_USED  4
#define CACHE_COLUMN_HITS       5
#define CACHE_COLUMN_EXPIRES    6
#define CACHE_COLUMN_COMMAND    7
#define CACHE_SCHEMA \
  "CREATE TABLE x(key, value BLOB, size INTEGER, created INTEGER," \
  " last_used INTEGER, hits INTEGER, expires INTEGER, \"%w\" HIDDEN)"

#define CACHE_IDX_EQ     1
#define CACHE_IDX_IN     2
#define CACHE_IDX_VALUE  4
#define CACHE_IDX_LRU    8

#define CACHE_DEFAULT_CAPACITY  ((i64)1<<30)
#define CACHE_MAX_CAPACITY      ((i64)1<<62)
#define CACHE_DEFAULT_BUFFER    100000
#define CACHE_MAX_BUFFER        1000000

#define CACHE_SIZE_HELP \
  "expected a positive number of bytes, optionally with a unit B, kB, MB," \
  " GB, KiB, MiB or GiB (e.g. 1048576 or '64MiB')"

/* Statements on the shadow tables.  %s is the quoted schema and table name
** without the closing quote: "main"."thumbs */
enum {
  CACHE_STMT_CFG_READ, CACHE_STMT_CFG_WRITE, CACHE_STMT_FIND,
  CACHE_STMT_FIND_LIVE, CACHE_STMT_DEL_DATA, CACHE_STMT_DEL_LRU,
  CACHE_STMT_DEL_EXPIRY, CACHE_STMT_INS_DATA, CACHE_STMT_INS_LRU,
  CACHE_STMT_INS_EXPIRY, CACHE_STMT_TOUCH, CACHE_STMT_OLDEST,
  CACHE_STMT_EXPIRED, CACHE_STMT_ROW, CACHE_STMT_FIND_OLD,
  CACHE_STMT_UPD_DATA, CACHE_STMT_UPD_LRU,
  CACHE_NSTMT
};
static const char *const azCacheSql[CACHE_NSTMT] = {
  "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired, %s"
  " FROM %s_config\" WHERE id=1",
  "UPDATE %s_config\" SET capacity=?1, bytes=?2, entries=?3, seq=?4,"
  " hits=?5, misses=?6, evictions=?7, expired=?8 WHERE id=1",
  "SELECT id FROM %s_data\" WHERE key=?1",
  "SELECT (SELECT %s FROM %s_config\" WHERE id=1), (SELECT id FROM %s_data\""
  " WHERE key=?1 AND (expires IS NULL OR expires>?2))",
  "DELETE FROM %s_data\" WHERE id=?1 RETURNING expires",
  "DELETE FROM %s_lru\" WHERE id=?1 RETURNING size",
  "DELETE FROM %s_expiry\" WHERE expires=?1 AND id=?2",
  "INSERT INTO %s_data\"(id, key, value, created, expires)"
  " VALUES(?1, ?2, ?3, ?4, ?5)",
  "INSERT INTO %s_lru\"(id, used, last_used, hits, size)"
  " VALUES(?1, ?2, ?3, ?4, ?5)",
  "INSERT INTO %s_expiry\"(expires, id) VALUES(?1, ?2)",
  "UPDATE %s_lru\" SET used=?2, last_used=?3, hits=hits+?4 WHERE id=?1",
  "SELECT id FROM %s_lru\" ORDER BY used LIMIT 1",
  "SELECT id FROM %s_expiry\" WHERE expires<=?1 LIMIT 1",
  "SELECT d.key, d.value, d.created, d.expires, l.hits"
  " FROM %s_data\" d JOIN %s_lru\" l ON l.id=d.id WHERE d.id=?1",
  "SELECT d.id, d.expires, l.size FROM %s_data\" d JOIN %s_lru\" l"
  " ON l.id=d.id WHERE d.key=?1",
  "UPDATE %s_data\" SET created=?2, expires=?3, value=?4 WHERE id=?1",
  "UPDATE %s_lru\" SET used=?2, last_used=?3, hits=?4, size=?5 WHERE id=?1",
};

/* Read statements, one slot per (point, value, lru) combination. */
#define CACHE_NREAD 8

typedef struct cache_config cache_config;
struct cache_config {
  i64 capacity, bytes, entries, seq, hits, misses, evictions, expired;
  i64 uid;              /* the table's identity, 0 in tables without one */
};

/* One buffered use: an entry's recency not yet in <t>_lru. */
typedef struct cache_touch cache_touch;
struct cache_touch {
  i64 id;               /* <t>_data.id */
  i64 ms;               /* unix ms of the latest use */
  i64 nHit;             /* uses since the last flush */
  i64 iSeq;             /* the connection's use counter at the latest use */
  i64 iUsed;            /* <t>_lru.used given by the flush */
  int iLevel;           /* savepoint level it was flushed at (aFlushed) */
  int iNext;            /* hash chain: index+1 in aPending, 0 ends */
};

/* Misses written by one flush inside a transaction. */
typedef struct cache_miss cache_miss;
struct cache_miss { int iLevel; i64 nMiss; };

typedef struct cache_vtab cache_vtab;
struct cache_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  char *zDb;            /* schema name: "main", "temp", ... */
  char *zName;          /* table name */
  char *zQual;          /* "zDb"."zName  (no closing quote) */
  sqlite3_stmt *aStmt[CACHE_NSTMT];
  sqlite3_stmt *aRead[CACHE_NREAD];
  unsigned char aReadBusy[CACHE_NREAD];
  int nBufferMax;       /* recency_buffer option */
  int nNextFlush;       /* try a flush when nPending reaches this */
  i64 iTouchSeq;        /* use counter: orders the buffered uses */
  cache_touch *aPending;/* buffered uses, one per id, in no order */
  int nPending, nPendingAlloc;
  int *aHash;           /* id -> index+1 in aPending, chained by iNext */
  int nHash;            /* slots in aHash, a power of two, or 0 */
  cache_touch *aFlushed;/* written in the open transaction */
  int nFlushed, nFlushedAlloc;
  i64 nHitPending;      /* sum of nHit over pending nodes */
  i64 nMissPending;     /* misses not yet written */
  cache_miss *aMiss;    /* misses flushed in the open transaction */
  int nMiss, nMissAlloc;
  int bInTxn;           /* between xBegin and xCommit/xRollback */
  int iLevel;           /* innermost open savepoint seen, -1 for none */
  i64 uid;              /* <t>_config.uid: >0; 0 for a table made before
                        ** uids; -1 not known yet */
  int bUid;             /* <t>_config has the uid column */
  int bStale;           /* a newer instance has the table (and the buffer),
                        ** or the table under this name is another one */
  int bParked;          /* disconnected, kept only for its buffer */
  int bInUse;           /* cache_read is using it: 1; and SQLite has
                        ** disconnected it meanwhile: 2 (cacheUseEnd) */
  int bUtf16;           /* the database's text encoding is UTF-16 */
  cache_vtab *pRegNext; /* registry list */
};

typedef struct cache_cursor cache_cursor;
struct cache_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pStmt;  /* the read statement, from a slot or private */
  int iSlot;            /* slot of pStmt in aRead[], -1 if private */
  int idxNum;
  int bEof;
  int bTouched;         /* this row's use is recorded */
  i64 now;              /* unix ms at xFilter: expiry cut-off */
  sqlite3_value **apIn; /* IN values */
  int nIn, iIn;
};

/* ---------------------------------------------------------------- registry */

static pthread_mutex_t gCacheMutex = PTHREAD_MUTEX_INITIALIZER;
static cache_vtab *gCacheList = 0;

static void cacheUnregister(cache_vtab *p){
  cache_vtab **pp;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; *pp; pp=&(*pp)->pRegNext){
    if( *pp==p ){ *pp = p->pRegNext; break; }
  }
  pthread_mutex_unlock(&gCacheMutex);
}

/* Do a and b stand for the same table of the same connection?  By uid; a
** table made before uids by schema and name. */
static int cacheSameTable(const cache_vtab *a, const cache_vtab *b){
  if( a->db!=b->db || a->uid<0 || a->uid!=b->uid ) return 0;
  if( sqlite3_stricmp(a->zDb, b->zDb)!=0 ) return 0;
  return a->uid>0 || sqlite3_stricmp(a->zName, b->zName)==0;
}

/* The instance that holds stale p's buffer now (live or parked), or 0. */
static cache_vtab *cacheSuccessor(cache_vtab *p){
  cache_vtab *q;
  pthread_mutex_lock(&gCacheMutex);
  for(q=gCacheList; q; q=q->pRegNext){
    if( q!=p && !q->bStale && cacheSameTable(q, p) ) break;
  }
  pthread_mutex_unlock(&gCacheMutex);
  return q;
}

/* The live instance of db's cache table zDb.zName, or 0. */
static cache_vtab *cacheLookup(sqlite3 *db, const char *zDb, int nDb,
                               const char *zName){
  cache_vtab *p;
  pthread_mutex_lock(&gCacheMutex);
  for(p=gCacheList; p; p=p->pRegNext){     /* newest first */
    if( p->db==db && !p->bStale && !p->bParked
     && sqlite3_strnicmp(p->zDb, zDb, nDb)==0 && p->zDb[nDb]==0
     && sqlite3_stricmp(p->zName, zName)==0 ){
      break;
    }
  }
  pthread_mutex_unlock(&gCacheMutex);
  return p;
}

/* The cache table zDb.zName, connected first if need be (preparing a
** statement that names it calls xConnect), or 0 if that is no cache table.
** *pbExists is set if there is a table of that name. */
static cache_vtab *cacheFindIn(sqlite3 *db, const char *zDb, int nDb,
                               const char *zName, int *pbExists){
  cache_vtab *p;
  char *zSchema = sqlite3_mprintf("%.*s", nDb, zDb);
  int rc;
  *pbExists = 0;
  if( zSchema==0 ) return 0;
  rc = sqlite3_table_column_metadata(db, zSchema, zName, 0, 0, 0, 0, 0, 0);
  if( rc==SQLITE_OK ){
    *pbExists = 1;
    p = cacheLookup(db, zDb, nDb, zName);
    if( p==0 ){
      char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" LIMIT 0",
                                   zSchema, zName);
      sqlite3_stmt *pStmt = 0;
      if( zSql ) sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      p = cacheLookup(db, zDb, nDb, zName);
    }
  }else{
    p = 0;
  }
  sqlite3_free(zSchema);
  return p;
}

/* The cache table that SQL would take for zName: a bare name is looked up
** as SQLite does (temp, main, then attached databases in order), and
** names a cache table only if the table found is one; then "schema.name".
** 0 if there is none. */
static cache_vtab *cacheFind(sqlite3 *db, const char *zName){
  const char *zDot = strchr(zName, '.');
  sqlite3_stmt *pList = 0;
  int i, bExists = 0;
  cache_vtab *p = 0;
  if( SQLITE_VERSION_NUMBER<3039000 || sqlite3_libversion_number()<3039000 ){
    /* sqlite3_db_name() is 3.39: its slot in an older library's API table
    ** is NULL (calling it would jump to address 0).  The pragma lists the same schemas: main, temp (once it
    ** exists), then attached ones, in the order of their index. */
    if( sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list"
                           " ORDER BY seq=1 DESC, seq", -1, &pList, 0) ){
      sqlite3_finalize(pList);
      return 0;
    }
  }
  for(i=0; ; i++){
    const char *zDb;
    if( pList ){
      zDb = sqlite3_step(pList)==SQLITE_ROW
          ? (const char*)sqlite3_column_text(pList, 0) : 0;
    }else{
#if SQLITE_VERSION_NUMBER>=3039000
      zDb = sqlite3_db_name(db, i<2 ? i^1 : i);
#else
      zDb = 0;
#endif
    }
    if( zDb==0 ) break;
    p = cacheFindIn(db, zDb, (int)strlen(zDb), zName, &bExists);
    if( bExists ) break;
  }
  sqlite3_finalize(pList);
  if( bExists ) return p;
  if( zDot ){
    return cacheFindIn(db, zName, (int)(zDot-zName), zDot+1, &bExists);
  }
  return 0;
}

/* ---------------------------------------------------------------- helpers */

static i64 cacheNowMs(void){
  return acorn_now_ns()/1000000;
}

/* Set the vtab's error from the connection's latest error. */
static int cacheDbError(cache_vtab *p, int rc){
  if( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
    acorn_vtab_error(&p->base, "cache: %s", sqlite3_errmsg(p->db));
  }
  return rc;
}

static int cacheStmt(cache_vtab *p, int i, sqlite3_stmt **ppStmt){
  if( p->aStmt[i]==0 ){
    int rc;
    char *zSql;
    if( i==CACHE_STMT_CFG_READ || i==CACHE_STMT_FIND_LIVE ){
      zSql = sqlite3_mprintf(azCacheSql[i], p->bUid ? "uid" : "0",
                             p->zQual, p->zQual);
    }else{
      zSql = sqlite3_mprintf(azCacheSql[i], p->zQual, p->zQual);
    }
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(p->db, zSql, -1,
             SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &p->aStmt[i], 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return cacheDbError(p, rc);
  }
  *ppStmt = p->aStmt[i];
  return SQLITE_OK;
}

/* Step a statement that returns no row we need, then reset it. */
static int cacheRun(cache_vtab *p, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  int rc2 = sqlite3_reset(pStmt);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = rc2;
  return cacheDbError(p, rc);
}

static void cacheFinalizeAll(cache_vtab *p){
  int i;
  for(i=0; i<CACHE_NSTMT; i++){
    sqlite3_finalize(p->aStmt[i]);
    p->aStmt[i] = 0;
  }
  for(i=0; i<CACHE_NREAD; i++){
    /* A busy slot's statement belongs to its cursor from now on. */
    if( !p->aReadBusy[i] ) sqlite3_finalize(p->aRead[i]);
    p->aRead[i] = 0;
    p->aReadBusy[i] = 0;
  }
}

static void cacheBufferDrop(cache_vtab *p);

static int cacheConfigLoad(cache_vtab *p, cache_config *pCfg){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(p, CACHE_STMT_CFG_READ, &pStmt);
  if( rc ) return rc;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    pCfg->capacity = sqlite3_column_int64(pStmt, 0);
    pCfg->bytes = sqlite3_column_int64(pStmt, 1);
    pCfg->entries = sqlite3_column_int64(pStmt, 2);
    pCfg->seq = sqlite3_column_int64(pStmt, 3);
    pCfg->hits = sqlite3_column_int64(pStmt, 4);
    pCfg->misses = sqlite3_column_int64(pStmt, 5);
    pCfg->evictions = sqlite3_column_int64(pStmt, 6);
    pCfg->expired = sqlite3_column_int64(pStmt, 7);
    pCfg->uid = sqlite3_column_int64(pStmt, 8);
    if( p->uid<0 ){
      p->uid = pCfg->uid;
    }else if( p->uid!=pCfg->uid ){
      /* The table under this name is not the one the buffer was made
      ** for (dropped and created again by another connection): its ids
      ** mean nothing here. */
      cacheBufferDrop(p);
      p->uid = pCfg->uid;
      p->bStale = 1;
    }
    return cacheDbError(p, sqlite3_reset(pStmt));
  }
  sqlite3_reset(pStmt);
  if( rc==SQLITE_DONE ){
    acorn_vtab_error(&p->base, "cache: the row of %s_config\" is missing",
                     p->zQual);
    return SQLITE_CORRUPT_VTAB;
  }
  return cacheDbError(p, rc);
}

static int cacheConfigSave(cache_vtab *p, const cache_config *pCfg){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(p, CACHE_STMT_CFG_WRITE, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, pCfg->capacity);
  sqlite3_bind_int64(pStmt, 2, pCfg->bytes);
  sqlite3_bind_int64(pStmt, 3, pCfg->entries);
  sqlite3_bind_int64(pStmt, 4, pCfg->seq);
  sqlite3_bind_int64(pStmt, 5, pCfg->hits);
  sqlite3_bind_int64(pStmt, 6, pCfg->misses);
  sqlite3_bind_int64(pStmt, 7, pCfg->evictions);
  sqlite3_bind_int64(pStmt, 8, pCfg->expired);
  return cacheRun(p, pStmt);
}

/* Parse a size: digits, optional spaces, optional unit.  0 on success. */
static int cacheParseSize(const char *z, i64 *pOut){
  static const struct { const char *zUnit; i64 iMul; } aUnit[] = {
    { "",    1 }, { "b",   1 },
    { "kb",  1000 }, { "mb", 1000000 }, { "gb", 1000000000 },
    { "kib", (i64)1<<10 }, { "mib", (i64)1<<20 }, { "gib", (i64)1<<30 },
  };
  i64 v = 0;
  size_t i;
  int nDigit = 0;
  if( z==0 ) return 1;
  while( *z==' ' ) z++;
  while( *z>='0' && *z<='9' ){
    if( v > (CACHE_MAX_CAPACITY - (*z - '0'))/10 ) return 1;
    v = v*10 + (*z - '0');
    z++;
    nDigit++;
  }
  if( nDigit==0 ) return 1;
  while( *z==' ' ) z++;
  for(i=0; i<sizeof(aUnit)/sizeof(aUnit[0]); i++){
    size_t n = strlen(aUnit[i].zUnit);
    if( sqlite3_strnicmp(z, aUnit[i].zUnit, (int)n)==0 ){
      const char *zEnd = z + n;
      while( *zEnd==' ' ) zEnd++;
      if( *zEnd ) continue;
      if( v > CACHE_MAX_CAPACITY / aUnit[i].iMul ) return 1;
      v *= aUnit[i].iMul;
      if( v<1 ) return 1;
      *pOut = v;
      return 0;
    }
  }
  return 1;
}

/* Bytes a key or value counts for: BLOB its length, TEXT its length in
** the database's encoding (as stored, and as cache_read's offsets count),
** INTEGER 8. */
static i64 cacheBytes(int bUtf16, sqlite3_value *pVal){
  int e = sqlite3_value_type(pVal);
  if( e==SQLITE_INTEGER ) return 8;
  if( e==SQLITE_TEXT && bUtf16 ) return sqlite3_value_bytes16(pVal);
  return sqlite3_value_bytes(pVal);
}

static const char *cacheTypeName(int eType){
  switch( eType ){
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT:   return "REAL";
    case SQLITE_TEXT:    return "TEXT";
    case SQLITE_BLOB:    return "BLOB";
    default:             return "NULL";
  }
}

/* Check a key as the user gave it; zWho prefixes the message. */
static char *cacheCheckKey(const char *zWho, sqlite3_value *pKey){
  int e = sqlite3_value_type(pKey);
  if( e==SQLITE_NULL ){
    return sqlite3_mprintf("%s: key must not be NULL;"
                           " expected TEXT, BLOB or INTEGER", zWho);
  }
  if( e==SQLITE_FLOAT ){
    return sqlite3_mprintf("%s: key must be TEXT, BLOB or INTEGER, got REAL",
                           zWho);
  }
  return 0;
}

/* ------------------------------------------------------- recency buffer */

static unsigned cacheHashSlot(const cache_vtab *p, i64 id){
  uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL;
  return (unsigned)(h>>32) & (unsigned)(p->nHash-1);
}

static cache_touch *cacheHashFind(const cache_vtab *p, i64 id){
  int i;
  if( p->nHash==0 ) return 0;
  for(i=p->aHash[cacheHashSlot(p, id)]; i; i=p->aPending[i-1].iNext){
    if( p->aPending[i-1].id==id ) return &p->aPending[i-1];
  }
  return 0;
}

/* Rebuild the hash over aPending, with at least two slots per entry. */
static int cacheHashRebuild(cache_vtab *p, int nWant){
  int i;
  if( nWant>p->nHash ){
    int nNew = p->nHash ? p->nHash : 64;
    int *aNew;
    while( nNew<nWant ) nNew *= 2;
    aNew = sqlite3_malloc64(sizeof(int)*(size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    sqlite3_free(p->aHash);
    p->aHash = aNew;
    p->nHash = nNew;
  }
  if( p->nHash ) memset(p->aHash, 0, sizeof(int)*(size_t)p->nHash);
  for(i=0; i<p->nPending; i++){
    unsigned h = cacheHashSlot(p, p->aPending[i].id);
    p->aPending[i].iNext = p->aHash[h];
    p->aHash[h] = i+1;
  }
  return SQLITE_OK;
}

/* A new pending entry for id (not in the buffer yet), or 0 if out of
** memory. */
static cache_touch *cacheTouchNew(cache_vtab *p, i64 id){
  cache_touch *pNew;
  unsigned h;
  if( p->nPending>=p->nPendingAlloc ){
    int nNew = p->nPendingAlloc ? p->nPendingAlloc*2 : 64;
    cache_touch *aNew = sqlite3_realloc64(p->aPending,
                                          sizeof(cache_touch)*(size_t)nNew);
    if( aNew==0 ) return 0;
    p->aPending = aNew;
    p->nPendingAlloc = nNew;
  }
  if( (p->nPending+1)*2 > p->nHash
   && cacheHashRebuild(p, (p->nPending+1)*2) ){
    return 0;
  }
  pNew = &p->aPending[p->nPending++];
  memset(pNew, 0, sizeof(*pNew));
  pNew->id = id;
  h = cacheHashSlot(p, id);
  pNew->iNext = p->aHash[h];
  p->aHash[h] = p->nPending;
  return pNew;
}

/* Forget the buffered uses and misses: they belong to no table now. */
static void cacheBufferDrop(cache_vtab *p){
  p->nPending = 0;
  if( p->nHash ) memset(p->aHash, 0, sizeof(int)*(size_t)p->nHash);
  p->nFlushed = 0;
  p->nMiss = 0;
  p->nHitPending = 0;
  p->nMissPending = 0;
  p->nNextFlush = p->nBufferMax;
}

/* Give the buffer of pFrom (same table, older instance) to pTo, whose
** buffer is empty, with the transaction state that goes with it. */
static void cacheBufferMove(cache_vtab *pTo, cache_vtab *pFrom){
#define CACHE_SWAP(T, f) { T t_ = pTo->f; pTo->f = pFrom->f; pFrom->f = t_; }
  CACHE_SWAP(cache_touch*, aPending);
  CACHE_SWAP(int, nPending);
  CACHE_SWAP(int, nPendingAlloc);
  CACHE_SWAP(int*, aHash);
  CACHE_SWAP(int, nHash);
  CACHE_SWAP(cache_touch*, aFlushed);
  CACHE_SWAP(int, nFlushed);
  CACHE_SWAP(int, nFlushedAlloc);
  CACHE_SWAP(cache_miss*, aMiss);
  CACHE_SWAP(int, nMiss);
  CACHE_SWAP(int, nMissAlloc);
  CACHE_SWAP(i64, nHitPending);
  CACHE_SWAP(i64, nMissPending);
#undef CACHE_SWAP
  pTo->iTouchSeq = pFrom->iTouchSeq;
  if( pFrom->bInTxn ){
    pTo->bInTxn = 1;
    pTo->iLevel = pFrom->iLevel;
  }
  pTo->nNextFlush = pTo->nPending + pTo->nBufferMax;
  cacheBufferDrop(pFrom);
}

static int cacheFlushStandalone(cache_vtab *p, int bSchemaCheck);

/* Record a use of entry id at time ms. */
static void cacheTouch(cache_vtab *p, i64 id, i64 ms){
  cache_touch *pNode;
  if( p->bStale ){
    /* an instance that SQLite has replaced: its successor records it */
    p = cacheSuccessor(p);
    if( p==0 ) return;
  }
  pNode = cacheHashFind(p, id);
  if( pNode==0 ){
    pNode = cacheTouchNew(p, id);
    if( pNode==0 ) return;               /* out of memory: the use is lost */
  }
  pNode->ms = ms;
  pNode->nHit++;
  pNode->iSeq = ++p->iTouchSeq;
  p->nHitPending++;
  if( p->nPending>=p->nNextFlush ){
    if( cacheFlushStandalone(p, 0)!=SQLITE_OK ){
      p->nNextFlush = p->nPending + p->nBufferMax;
    }
  }
}

static int cacheTouchCmp(const void *a, const void *b){
  i64 x = ((const cache_touch*)a)->iSeq, y = ((const cache_touch*)b)->iSeq;
  return x<y ? -1 : x>y;
}
static int cacheTouchCmpId(const void *a, const void *b){
  i64 x = ((const cache_touch*)a)->id, y = ((const cache_touch*)b)->id;
  return x<y ? -1 : x>y;
}

/* Write the buffered uses to <t>_lru, oldest first, and the counters to
** *pCfg, inside the caller's transaction.  The buffer itself is kept (only
** sorted): cacheFlushDone() retires it once the caller's write succeeded. */
static int cacheFlushWrite(cache_vtab *p, cache_config *pCfg){
  cache_touch *pNode;
  sqlite3_stmt *pStmt;
  int rc, i;
  if( p->nPending==0 ){
    pCfg->misses += p->nMissPending;
    return SQLITE_OK;
  }
  /* Number the uses in the order they were made, then write them in id
  ** order: <t>_lru is walked front to back instead of at random. */
  qsort(p->aPending, (size_t)p->nPending, sizeof(cache_touch), cacheTouchCmp);
  for(i=0; i<p->nPending; i++) p->aPending[i].iUsed = pCfg->seq + 1 + i;
  pCfg->seq += p->nPending;
  qsort(p->aPending, (size_t)p->nPending, sizeof(cache_touch), cacheTouchCmpId);
  rc = cacheHashRebuild(p, 0);
  if( rc ) return rc;
  rc = cacheStmt(p, CACHE_STMT_TOUCH, &pStmt);
  for(i=0; rc==SQLITE_OK && i<p->nPending; i++){
    pNode = &p->aPending[i];
    sqlite3_bind_int64(pStmt, 1, pNode->id);
    sqlite3_bind_int64(pStmt, 2, pNode->iUsed);
    sqlite3_bind_int64(pStmt, 3, pNode->ms);
    sqlite3_bind_int64(pStmt, 4, pNode->nHit);
    rc = cacheRun(p, pStmt);
  }
  pCfg->hits += p->nHitPending;
  pCfg->misses += p->nMissPending;
  return rc;
}

/* The flush written by cacheFlushWrite() is part of the database now. */
static void cacheFlushDone(cache_vtab *p){
  if( p->bInTxn && p->nPending ){
    /* Keep what was written until the transaction ends: a rollback puts
    ** it back.  If that cannot be kept (out of memory), a rollback loses
    ** these uses, nothing else. */
    if( p->nFlushed+p->nPending > p->nFlushedAlloc ){
      int nNew = p->nFlushedAlloc ? p->nFlushedAlloc : 64;
      cache_touch *aNew;
      while( nNew<p->nFlushed+p->nPending ) nNew *= 2;
      aNew = sqlite3_realloc64(p->aFlushed, sizeof(cache_touch)*(size_t)nNew);
      if( aNew ){
        p->aFlushed = aNew;
        p->nFlushedAlloc = nNew;
      }
    }
    if( p->nFlushed+p->nPending <= p->nFlushedAlloc ){
      int i;
      for(i=0; i<p->nPending; i++){
        p->aFlushed[p->nFlushed] = p->aPending[i];
        p->aFlushed[p->nFlushed].iLevel = p->iLevel;
        p->nFlushed++;
      }
    }
  }
  if( p->bInTxn ){
    if( p->nMissPending ){
      if( p->nMiss==p->nMissAlloc ){
        int nNew = p->nMissAlloc ? p->nMissAlloc*2 : 8;
        cache_miss *aNew = sqlite3_realloc64(p->aMiss, sizeof(cache_miss)*(size_t)nNew);
        if( aNew ){
          p->aMiss = aNew;
          p->nMissAlloc = nNew;
        }
      }
      if( p->nMiss<p->nMissAlloc ){
        p->aMiss[p->nMiss].iLevel = p->iLevel;
        p->aMiss[p->nMiss].nMiss = p->nMissPending;
        p->nMiss++;
      }
    }
  }
  p->nPending = 0;
  if( p->nHash ) memset(p->aHash, 0, sizeof(int)*(size_t)p->nHash);
  p->nHitPending = 0;
  p->nMissPending = 0;
  p->nNextFlush = p->nBufferMax;
}

/* Put uses flushed at savepoint level iLevel or deeper back in the
** buffer.  They keep their use counter values, all lower than those of the
** uses buffered since, so the next flush writes them first. */
static void cacheRestore(cache_vtab *p, int iLevel){
  int i, j;
  for(i=j=0; i<p->nFlushed; i++){
    cache_touch *pF = &p->aFlushed[i];
    if( pF->iLevel>=iLevel ){
      cache_touch *pSame = cacheHashFind(p, pF->id);
      if( pSame==0 ){
        pSame = cacheTouchNew(p, pF->id);
        if( pSame ){
          pSame->ms = pF->ms;
          pSame->iSeq = pF->iSeq;
        }
      }
      if( pSame ){
        /* the same id may have been flushed more than once: latest wins */
        if( pF->iSeq>pSame->iSeq ){
          pSame->iSeq = pF->iSeq;
          pSame->ms = pF->ms;
        }
        pSame->nHit += pF->nHit;
        p->nHitPending += pF->nHit;
      }
    }else{
      p->aFlushed[j++] = *pF;
    }
  }
  p->nFlushed = j;
  for(i=j=0; i<p->nMiss; i++){
    if( p->aMiss[i].iLevel>=iLevel ){
      p->nMissPending += p->aMiss[i].nMiss;
    }else{
      p->aMiss[j++] = p->aMiss[i];
    }
  }
  p->nMiss = j;
}

/* Is a statement that writes running on db? */
static int cacheWriterBusy(sqlite3 *db){
  sqlite3_stmt *pStmt = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    if( sqlite3_stmt_busy(pStmt) && !sqlite3_stmt_readonly(pStmt) ) return 1;
  }
  return 0;
}

/* Is the schema of p->zDb that p->db holds the one in the file?  If not,
** the next statement on it makes SQLite drop and reload that schema, which
** xDisconnect must not cause: sqlite3_close() disconnects virtual tables
** while it walks the schema's tables.  The cookie of the schema in memory
** is p3 of the Transaction opcode of a statement prepared on it (EXPLAIN
** lists it and runs nothing); PRAGMA schema_version reads the file's and
** compares nothing.  Called inside a transaction, so the answer holds. */
static int cacheSchemaCurrent(cache_vtab *p){
  sqlite3_stmt *pStmt = 0;
  i64 iMem = -1, iFile = -2;
  char *zSql = sqlite3_mprintf("EXPLAIN SELECT 1 FROM \"%w\".sqlite_schema",
                               p->zDb);
  if( zSql && sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zOp = (const char*)sqlite3_column_text(pStmt, 1);
      if( zOp && strcmp(zOp, "Transaction")==0 ){
        iMem = sqlite3_column_int64(pStmt, 4);
        break;
      }
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  pStmt = 0;
  zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", p->zDb);
  if( zSql && sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    iFile = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return iMem==iFile;
}

/* Flush in a short transaction of its own, only when that cannot join or
** disturb the user's: autocommit mode, no writing statement running; with
** bSchemaCheck (xDisconnect) only if the schema in memory is current. */
static int cacheFlushStandalone(cache_vtab *p, int bSchemaCheck){
  cache_config cfg;
  int rc;
  if( p->nPending==0 && p->nMissPending==0 ) return SQLITE_OK;
  if( !sqlite3_get_autocommit(p->db) || cacheWriterBusy(p->db) ){
    return SQLITE_BUSY;
  }
  rc = sqlite3_exec(p->db, "SAVEPOINT acorn_cache_flush", 0, 0, 0);
  if( rc!=SQLITE_OK ) return rc;
  if( bSchemaCheck && !cacheSchemaCurrent(p) ) rc = SQLITE_SCHEMA;
  if( rc==SQLITE_OK ) rc = cacheConfigLoad(p, &cfg);
  if( rc==SQLITE_OK && p->bStale ) rc = SQLITE_ABORT;  /* nothing of ours */
  if( rc==SQLITE_OK ) rc = cacheFlushWrite(p, &cfg);
  if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
  if( rc==SQLITE_OK ) rc = sqlite3_exec(p->db, "RELEASE acorn_cache_flush", 0, 0, 0);
  if( rc==SQLITE_OK ){
    cacheFlushDone(p);
  }else{
    sqlite3_exec(p->db, "ROLLBACK TO acorn_cache_flush;"
                        " RELEASE acorn_cache_flush", 0, 0, 0);
  }
  /* Nobody reads this message: the caller carries on. */
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = 0;
  return rc;
}

/* ------------------------------------------------------- entry writes */

/* Delete entry id if it exists; adjust *pCfg. */
static int cacheDeleteEntry(cache_vtab *p, cache_config *pCfg, i64 id){
  sqlite3_stmt *pStmt;
  int rc, bExpires = 0, bFound = 0;
  i64 iExpires = 0, nSize = 0;
  rc = cacheStmt(p, CACHE_STMT_DEL_DATA, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    bFound = 1;
    if( sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
      bExpires = 1;
      iExpires = sqlite3_column_int64(pStmt, 0);
    }
  }
  rc = cacheDbError(p, sqlite3_reset(pStmt));
  if( rc || !bFound ) return rc;
  rc = cacheStmt(p, CACHE_STMT_DEL_LRU, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  if( sqlite3_step(pStmt)==SQLITE_ROW ) nSize = sqlite3_column_int64(pStmt, 0);
  rc = cacheDbError(p, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK && bExpires ){
    rc = cacheStmt(p, CACHE_STMT_DEL_EXPIRY, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, iExpires);
      sqlite3_bind_int64(pStmt, 2, id);
      rc = cacheRun(p, pStmt);
    }
  }
  pCfg->bytes -= nSize;
  pCfg->entries--;
  return rc;
}

/* Step pStmt, a query whose first row's first column is an entry id, and
** delete that entry.  Sets *pbNone and deletes nothing if there is no row. */
static int cacheDeleteFirst(cache_vtab *p, cache_config *pCfg,
                            sqlite3_stmt *pStmt, int *pbNone){
  i64 id;
  int rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_ROW ){
    *pbNone = 1;
    return cacheDbError(p, sqlite3_reset(pStmt));
  }
  id = sqlite3_column_int64(pStmt, 0);
  rc = cacheDbError(p, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK ) rc = cacheDeleteEntry(p, pCfg, id);
  return rc;
}

/* Reclaim every entry that expired at or before now. */
static int cacheReclaimExpired(cache_vtab *p, cache_config *pCfg, i64 now){
  sqlite3_stmt *pStmt;
  int bNone = 0;
  int rc = cacheStmt(p, CACHE_STMT_EXPIRED, &pStmt);
  while( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, now);
    rc = cacheDeleteFirst(p, pCfg, pStmt, &bNone);
    if( bNone ) break;
    pCfg->expired++;
  }
  return rc;
}

/* Evict least recently used entries until nNeed more bytes fit. */
static int cacheEvict(cache_vtab *p, cache_config *pCfg, i64 nNeed){
  sqlite3_stmt *pStmt;
  int bNone = 0;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK && !bNone && pCfg->bytes + nNeed > pCfg->capacity
      && pCfg->entries>0 ){
    rc = cacheStmt(p, CACHE_STMT_OLDEST, &pStmt);
    if( rc ) break;
    rc = cacheDeleteFirst(p, pCfg, pStmt, &bNone);
    if( !bNone ) pCfg->evictions++;
  }
  return rc;
}

/* Store key -> value as the most recently used entry.  A stored key is
** rewritten in place (same id: the key's index entry does not move); a new
** one gets the next seq as its id.  Expired entries are reclaimed first;
** least recently used ones are evicted after, until the capacity holds: the
** entry just set is the most recent, so it is never among them. */
static int cacheSet(
  cache_vtab *p, cache_config *pCfg,
  sqlite3_value *pKey, sqlite3_value *pValue, sqlite3_value *pExpires,
  i64 nSize, i64 iCreated, i64 nHits, i64 now, i64 *pId
){
  sqlite3_stmt *pStmt;
  i64 id = 0, nOldSize = 0, iOldExpires = 0;
  int bOldExpires = 0;
  int rc = cacheReclaimExpired(p, pCfg, now);
  if( rc==SQLITE_OK ) rc = cacheStmt(p, CACHE_STMT_FIND_OLD, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_value(pStmt, 1, pKey);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    id = sqlite3_column_int64(pStmt, 0);
    if( sqlite3_column_type(pStmt, 1)!=SQLITE_NULL ){
      bOldExpires = 1;
      iOldExpires = sqlite3_column_int64(pStmt, 1);
    }
    nOldSize = sqlite3_column_int64(pStmt, 2);
  }
  rc = cacheDbError(p, sqlite3_reset(pStmt));
  if( rc ) return rc;

  if( id ){
    rc = cacheStmt(p, CACHE_STMT_UPD_LRU, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      sqlite3_bind_int64(pStmt, 2, ++pCfg->seq);
      sqlite3_bind_int64(pStmt, 3, now);
      sqlite3_bind_int64(pStmt, 4, nHits);
      sqlite3_bind_int64(pStmt, 5, nSize);
      rc = cacheRun(p, pStmt);
    }
    if( rc==SQLITE_OK ) rc = cacheStmt(p, CACHE_STMT_UPD_DATA, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      sqlite3_bind_int64(pStmt, 2, iCreated);
      sqlite3_bind_value(pStmt, 3, pExpires);
      sqlite3_bind_value(pStmt, 4, pValue);
      rc = cacheRun(p, pStmt);
      sqlite3_clear_bindings(pStmt);     /* do not keep the value alive */
    }
    if( rc==SQLITE_OK && bOldExpires ){
      rc = cacheStmt(p, CACHE_STMT_DEL_EXPIRY, &pStmt);
      if( rc==SQLITE_OK ){
        sqlite3_bind_int64(pStmt, 1, iOldExpires);
        sqlite3_bind_int64(pStmt, 2, id);
        rc = cacheRun(p, pStmt);
      }
    }
    pCfg->bytes += nSize - nOldSize;
  }else{
    id = ++pCfg->seq;
    rc = cacheStmt(p, CACHE_STMT_INS_DATA, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      sqlite3_bind_value(pStmt, 2, pKey);
      sqlite3_bind_value(pStmt, 3, pValue);
      sqlite3_bind_int64(pStmt, 4, iCreated);
      sqlite3_bind_value(pStmt, 5, pExpires);
      rc = cacheRun(p, pStmt);
      sqlite3_clear_bindings(pStmt);     /* do not keep the value alive */
    }
    if( rc==SQLITE_OK ) rc = cacheStmt(p, CACHE_STMT_INS_LRU, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      sqlite3_bind_int64(pStmt, 2, id);
      sqlite3_bind_int64(pStmt, 3, now);
      sqlite3_bind_int64(pStmt, 4, nHits);
      sqlite3_bind_int64(pStmt, 5, nSize);
      rc = cacheRun(p, pStmt);
    }
    pCfg->bytes += nSize;
    pCfg->entries++;
  }
  if( rc==SQLITE_OK && sqlite3_value_type(pExpires)!=SQLITE_NULL ){
    rc = cacheStmt(p, CACHE_STMT_INS_EXPIRY, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_value(pStmt, 1, pExpires);
      sqlite3_bind_int64(pStmt, 2, id);
      rc = cacheRun(p, pStmt);
    }
  }
  if( rc==SQLITE_OK ) rc = cacheEvict(p, pCfg, 0);
  *pId = id;
  return rc;
}

/* ------------------------------------------------------- create/connect */

static const char *const azCacheColumn[] = {
  "key", "value", "size", "created", "last_used", "hits", "expires"
};

/* Split "name = value"; strip spaces and one pair of quotes from value. */
static int cacheSplitArg(const char *zArg, char **pzName, char **pzValue){
  const char *zEq = strchr(zArg, '=');
  const char *z0, *z1;
  if( zEq==0 ) return 1;
  z0 = zArg; z1 = zEq;
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  *pzName = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  z0 = zEq+1; z1 = zEq + strlen(zEq);
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  if( z1-z0>=2 && (*z0=='\'' || *z0=='"') && z1[-1]==*z0 ){ z0++; z1--; }
  *pzValue = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  return 0;
}

static void cacheFree(cache_vtab *p);

/* Read the table's uid at connect.  A table made before uids has no
** such column: uid 0, matched by schema and name.  If it cannot be read
** now, it stays -1 (unknown) until the first write or flush reads it. */
static int cacheReadUid(cache_vtab *p){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT uid FROM %s_config\" WHERE id=1",
                               p->zQual);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_NOMEM ) return rc;
  if( rc!=SQLITE_OK ){
    p->bUid = 0;
    p->uid = 0;
  }else if( sqlite3_step(pStmt)==SQLITE_ROW ){
    p->uid = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return SQLITE_OK;
}

/* Register new instance p.  SQLite connects a table again after a schema
** reset (any DDL, by this connection or another) while the old instance
** may live on until it is disconnected, and DETACH disconnects at once:
** the buffered recency of an older or parked instance of the same table
** moves to p, and that instance goes inert.  An older instance of another
** table under the same name (dropped and created again) keeps its buffer
** out of p, and goes inert too. */
static void cacheAdopt(cache_vtab *p){
  cache_vtab *q, **pp, *pFree = 0;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; (q = *pp)!=0; ){
    if( q->db==p->db && !q->bStale
     && (q->bParked ? cacheSameTable(q, p)
                    : sqlite3_stricmp(q->zDb, p->zDb)==0
                      && sqlite3_stricmp(q->zName, p->zName)==0) ){
      if( cacheSameTable(q, p) && p->nPending==0 && p->nFlushed==0 ){
        cacheBufferMove(p, q);
      }
      q->bStale = 1;
      if( q->bParked ){
        *pp = q->pRegNext;
        q->pRegNext = pFree;
        pFree = q;
        continue;
      }
    }
    pp = &q->pRegNext;
  }
  p->pRegNext = gCacheList;
  gCacheList = p;
  pthread_mutex_unlock(&gCacheMutex);
  while( pFree ){
    q = pFree;
    pFree = q->pRegNext;
    q->pRegNext = 0;
    cacheFree(q);
  }
}

static int cacheInit(
  sqlite3 *db, int argc, const char *const*argv,
  sqlite3_vtab **ppVtab, char **pzErr, int bCreate
){
  cache_vtab *p;
  i64 nCapacity = CACHE_DEFAULT_CAPACITY;
  int nBuffer = CACHE_DEFAULT_BUFFER;
  int rc, i;
  char *zSql;

  *ppVtab = 0;
  for(i=3; i<argc; i++){
    char *zName = 0, *zValue = 0;
    int bBad = 0;
    if( cacheSplitArg(argv[i], &zName, &zValue) ){
      *pzErr = sqlite3_mprintf("cache: bad argument '%s': expected"
          " name = value, with name capacity or recency_buffer", argv[i]);
      return SQLITE_ERROR;
    }
    if( zName==0 || zValue==0 ){
      bBad = 2;
    }else if( sqlite3_stricmp(zName, "capacity")==0 ){
      if( cacheParseSize(zValue, &nCapacity) ){
        *pzErr = sqlite3_mprintf("cache: bad capacity '%s'; " CACHE_SIZE_HELP,
                                 zValue);
        bBad = 1;
      }
    }else if( sqlite3_stricmp(zName, "recency_buffer")==0 ){
      i64 n = 0;
      const char *z = zValue;
      while( *z>='0' && *z<='9' && n<=CACHE_MAX_BUFFER ){ n = n*10 + (*z++ - '0'); }
      if( *z || z==zValue || n<1 || n>CACHE_MAX_BUFFER ){
        *pzErr = sqlite3_mprintf("cache: bad recency_buffer '%s'; expected"
                                 " an integer from 1 to %d", zValue,
                                 CACHE_MAX_BUFFER);
        bBad = 1;
      }
      nBuffer = (int)n;
    }else{
      *pzErr = sqlite3_mprintf("cache: unknown option '%s'; accepted options"
                               " are capacity and recency_buffer", zName);
      bBad = 1;
    }
    sqlite3_free(zName);
    sqlite3_free(zValue);
    if( bBad ) return bBad==2 ? SQLITE_NOMEM : SQLITE_ERROR;
  }
  for(i=0; i<(int)(sizeof(azCacheColumn)/sizeof(azCacheColumn[0])); i++){
    if( sqlite3_stricmp(argv[2], azCacheColumn[i])==0 ){
      *pzErr = sqlite3_mprintf("cache: a cache table cannot be named '%s':"
                               " that is the name of a column", argv[2]);
      return SQLITE_ERROR;
    }
  }

  zSql = sqlite3_mprintf(CACHE_SCHEMA, argv[2]);
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
  p->db = db;
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  p->zQual = sqlite3_mprintf("\"%w\".\"%w", argv[1], argv[2]);
  p->nBufferMax = nBuffer;
  p->nNextFlush = nBuffer;
  p->iLevel = -1;
  p->uid = -1;
  p->bUid = 1;
  if( p->zDb==0 || p->zName==0 || p->zQual==0 ){
    rc = SQLITE_NOMEM;
  }else if( bCreate ){
    /* A random identity: a table dropped and created again under the same
    ** name is another table to the buffers of other connections. */
    do{
      sqlite3_randomness(sizeof(p->uid), &p->uid);
      p->uid &= LLONG_MAX;
    }while( p->uid==0 );
    const char *q = p->zQual;
    zSql = sqlite3_mprintf(
      "CREATE TABLE %s_config\"(id INTEGER PRIMARY KEY,"
      " capacity INTEGER NOT NULL, bytes INTEGER NOT NULL,"
      " entries INTEGER NOT NULL, seq INTEGER NOT NULL, hits INTEGER NOT NULL,"
      " misses INTEGER NOT NULL, evictions INTEGER NOT NULL,"
      " expired INTEGER NOT NULL, uid INTEGER NOT NULL DEFAULT 0);"
      "INSERT INTO %s_config\" VALUES(1, %lld, 0, 0, 0, 0, 0, 0, 0, %lld);"
      "CREATE TABLE %s_data\"(id INTEGER PRIMARY KEY, key NOT NULL UNIQUE,"
      " created INTEGER NOT NULL, expires INTEGER, value NOT NULL);"
      "CREATE TABLE %s_lru\"(id INTEGER PRIMARY KEY,"
      " used INTEGER NOT NULL UNIQUE, last_used INTEGER NOT NULL,"
      " hits INTEGER NOT NULL, size INTEGER NOT NULL);"
      "CREATE TABLE %s_expiry\"(expires INTEGER NOT NULL, id INTEGER NOT NULL,"
      " PRIMARY KEY(expires, id)) WITHOUT ROWID;",
      q, q, nCapacity, p->uid, q, q, q);
    if( zSql==0 ){
      rc = SQLITE_NOMEM;
    }else{
      rc = sqlite3_exec(db, zSql, 0, 0, 0);
      sqlite3_free(zSql);
      if( rc ) *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
    }
  }else{
    rc = cacheReadUid(p);
  }
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pStmt = 0;
    rc = sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &pStmt, 0);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zEnc = (const char*)sqlite3_column_text(pStmt, 0);
      p->bUtf16 = zEnc && sqlite3_strnicmp(zEnc, "UTF-16", 6)==0;
    }
    sqlite3_finalize(pStmt);
    if( rc ) *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
  }
  if( rc ){
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p->zQual);
    sqlite3_free(p);
    return rc;
  }
  cacheAdopt(p);
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int cacheCreate(sqlite3 *db, void *pAux, int argc,
                       const char *const*argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  (void)pAux;
  return cacheInit(db, argc, argv, ppVtab, pzErr, 1);
}

static int cacheConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const*argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  (void)pAux;
  return cacheInit(db, argc, argv, ppVtab, pzErr, 0);
}

static void cacheFree(cache_vtab *p){
  cacheUnregister(p);
  cacheFinalizeAll(p);
  sqlite3_free(p->aPending);
  sqlite3_free(p->aFlushed);
  sqlite3_free(p->aHash);
  sqlite3_free(p->aMiss);
  sqlite3_free(p->zDb);
  sqlite3_free(p->zName);
  sqlite3_free(p->zQual);
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p);
}

static int cacheDisconnect(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  if( p->bInUse ){
    /* In the middle of cache_read: after another connection's DDL, SQLite
    ** re-prepares one of p's statements as it runs, and lets go of the
    ** instances the new schema replaces.  cache_read finishes this. */
    p->bInUse = 2;
    return SQLITE_OK;
  }
  /* Keep this connection's buffered recency if that can be done safely. */
  if( !p->bStale && (p->nPending || p->nMissPending) ){
    sqlite3_stmt *pStmt = 0;
    int bBusy = 0;
    while( (pStmt = sqlite3_next_stmt(p->db, pStmt))!=0 ){
      if( sqlite3_stmt_busy(pStmt) ){ bBusy = 1; break; }
    }
    if( !bBusy ){
      /* DEFENSIVE lets a vtab write its shadow tables only from inside a
      ** statement; at close there is none.  Lift it around our own flush
      ** (only our statements run) and put it back. */
      int bDefensive = 0;
      sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &bDefensive);
      if( bDefensive ) sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, 0, 0);
      cacheFlushStandalone(p, 1);
      if( bDefensive ) sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0);
    }
  }
  if( !p->bStale && p->uid>=0
   && (p->nPending || p->nMissPending || p->nFlushed || p->nMiss) ){
    /* Not written (a statement is running, or the schema is gone, as
    ** at DETACH): park the buffer for the next instance of this table
    ** on this connection (cacheAdopt), until the connection closes.
    ** The transaction state stays with it: a stale instance that SQLite
    ** still holds in the transaction forwards its events here. */
    cacheFinalizeAll(p);
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = 0;
    pthread_mutex_lock(&gCacheMutex);
    p->bParked = 1;
    pthread_mutex_unlock(&gCacheMutex);
    return SQLITE_OK;
  }
  cacheFree(p);
  return SQLITE_OK;
}

/* The connection is closing (or the module is registered again): free
** the buffers parked for it. */
static void cacheModuleDestroy(void *pAux){
  sqlite3 *db = (sqlite3*)pAux;
  cache_vtab *q, **pp, *pFree = 0;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; (q = *pp)!=0; ){
    if( q->db==db && q->bParked ){
      *pp = q->pRegNext;
      q->pRegNext = pFree;
      pFree = q;
    }else{
      pp = &q->pRegNext;
    }
  }
  pthread_mutex_unlock(&gCacheMutex);
  while( pFree ){
    q = pFree;
    pFree = q->pRegNext;
    cacheFree(q);
  }
}

static int cacheDestroy(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  const char *q = p->zQual;
  int rc;
  char *zSql;
  cacheFinalizeAll(p);
  zSql = sqlite3_mprintf(
      "DROP TABLE IF EXISTS %s_config\";"
      "DROP TABLE IF EXISTS %s_data\";"
      "DROP TABLE IF EXISTS %s_lru\";"
      "DROP TABLE IF EXISTS %s_expiry\";", q, q, q, q);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc ) return cacheDbError(p, rc);
  if( p->uid>=0 && (p->nPending || p->nMissPending)
   && !sqlite3_get_autocommit(p->db) ){
    /* DROP TABLE inside a transaction: a ROLLBACK or ROLLBACK TO brings
    ** the table back (same uid), and its next instance adopts the uses
    ** not written yet.  Uses written earlier in this transaction are not
    ** kept: whether the rollback undoes them is not known here. */
    p->nFlushed = 0;
    p->nMiss = 0;
    p->bInTxn = 0;
    p->iLevel = -1;
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = 0;
    pthread_mutex_lock(&gCacheMutex);
    p->bParked = 1;
    pthread_mutex_unlock(&gCacheMutex);
    return SQLITE_OK;
  }
  cacheFree(p);
  return SQLITE_OK;
}

static int cacheRename(sqlite3_vtab *pVtab, const char *zNew){
  cache_vtab *p = (cache_vtab*)pVtab;
  const char *q = p->zQual;
  char *zSql, *zQual, *zName;
  int rc, i;
  /* xConnect refuses these names: a table renamed to one could never be
  ** used or dropped again. */
  for(i=0; i<(int)(sizeof(azCacheColumn)/sizeof(azCacheColumn[0])); i++){
    if( sqlite3_stricmp(zNew, azCacheColumn[i])==0 ){
      acorn_vtab_error(pVtab, "cache: a cache table cannot be named '%s':"
                       " that is the name of a column", zNew);
      return SQLITE_ERROR;
    }
  }
  cacheFinalizeAll(p);
  zSql = sqlite3_mprintf(
      "ALTER TABLE %s_config\" RENAME TO \"%w_config\";"
      "ALTER TABLE %s_data\" RENAME TO \"%w_data\";"
      "ALTER TABLE %s_lru\" RENAME TO \"%w_lru\";"
      "ALTER TABLE %s_expiry\" RENAME TO \"%w_expiry\";",
      q, zNew, q, zNew, q, zNew, q, zNew);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc ) return cacheDbError(p, rc);
  zQual = sqlite3_mprintf("\"%w\".\"%w", p->zDb, zNew);
  zName = sqlite3_mprintf("%s", zNew);
  if( zQual==0 || zName==0 ){
    sqlite3_free(zQual);
    sqlite3_free(zName);
    return SQLITE_NOMEM;
  }
  pthread_mutex_lock(&gCacheMutex);
  sqlite3_free(p->zQual);
  sqlite3_free(p->zName);
  p->zQual = zQual;
  p->zName = zName;
  pthread_mutex_unlock(&gCacheMutex);
  return SQLITE_OK;
}

static int cacheShadowName(const char *zSuffix){
  static const char *const azSuffix[] = { "config", "data", "lru", "expiry" };
  size_t i;
  for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
    if( sqlite3_stricmp(zSuffix, azSuffix[i])==0 ) return 1;
  }
  return 0;
}

/* ------------------------------------------------------- transactions */

static int cacheBegin(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  p->bInTxn = 1;
  p->iLevel = -1;
  return SQLITE_OK;
}

static int cacheSync(sqlite3_vtab *pVtab){
  (void)pVtab;
  return SQLITE_OK;
}

/* A stale instance's transaction events concern the buffer it handed
** over: they go to its successor (which may get them itself as well; each
** handler can run twice). */
static cache_vtab *cacheTxnTarget(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  return p->bStale ? cacheSuccessor(p) : p;
}

static int cacheCommit(sqlite3_vtab *pVtab){
  cache_vtab *p = cacheTxnTarget(pVtab);
  if( p==0 ) return SQLITE_OK;
  p->nFlushed = 0;
  p->nMiss = 0;
  p->bInTxn = 0;
  p->iLevel = -1;
  return SQLITE_OK;
}

static int cacheRollback(sqlite3_vtab *pVtab){
  cache_vtab *p = cacheTxnTarget(pVtab);
  if( p==0 ) return SQLITE_OK;
  cacheRestore(p, -1);
  p->bInTxn = 0;
  p->iLevel = -1;
  return SQLITE_OK;
}

static int cacheSavepoint(sqlite3_vtab *pVtab, int iSavepoint){
  cache_vtab *p = cacheTxnTarget(pVtab);
  if( p==0 ) return SQLITE_OK;
  p->iLevel = iSavepoint;
  return SQLITE_OK;
}

static int cacheRelease(sqlite3_vtab *pVtab, int iSavepoint){
  cache_vtab *p = cacheTxnTarget(pVtab);
  int i;
  if( p==0 ) return SQLITE_OK;
  for(i=0; i<p->nFlushed; i++){
    if( p->aFlushed[i].iLevel>=iSavepoint ) p->aFlushed[i].iLevel = iSavepoint-1;
  }
  for(i=0; i<p->nMiss; i++){
    if( p->aMiss[i].iLevel>=iSavepoint ) p->aMiss[i].iLevel = iSavepoint-1;
  }
  p->iLevel = iSavepoint-1;
  return SQLITE_OK;
}

static int cacheRollbackTo(sqlite3_vtab *pVtab, int iSavepoint){
  cache_vtab *p = cacheTxnTarget(pVtab);
  if( p==0 ) return SQLITE_OK;
  cacheRestore(p, iSavepoint);
  p->iLevel = iSavepoint;
  return SQLITE_OK;
}

/* ------------------------------------------------------- reads */

static const char *const azCacheIdxStr[16] = {
  "scan",         "key=?",         "key IN (...)",         "?",
  "scan value",   "key=? value",   "key IN (...) value",   "?",
  "scan lru",     "key=? lru",     "key IN (...) lru",     "?",
  "scan value lru", "key=? value lru", "key IN (...) value lru", "?",
};

static int cacheBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, iEq = -1, iIn = -1, idxNum = 0;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    const char *zColl;
    if( pC->iColumn!=CACHE_COLUMN_KEY || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ
     || !pC->usable ) continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
    if( sqlite3_vtab_in(pInfo, i, -1) ){
      if( iIn<0 ) iIn = i;
    }else if( iEq<0 ){
      iEq = i;
    }
  }
  if( iEq>=0 ){
    pInfo->aConstraintUsage[iEq].argvIndex = 1;
    pInfo->aConstraintUsage[iEq].omit = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    idxNum = CACHE_IDX_EQ;
  }else if( iIn>=0 ){
    sqlite3_vtab_in(pInfo, iIn, 1);
    pInfo->aConstraintUsage[iIn].argvIndex = 1;
    pInfo->aConstraintUsage[iIn].omit = 1;
    pInfo->estimatedCost = 100.0;
    pInfo->estimatedRows = 10;
    idxNum = CACHE_IDX_IN;
  }else{
    pInfo->estimatedCost = 1000000.0;
    pInfo->estimatedRows = 1000000;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_VALUE) ){
    idxNum |= CACHE_IDX_VALUE;
  }
  if( pInfo->colUsed & (((sqlite3_uint64)1<<CACHE_COLUMN_SIZE)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_LAST_USED)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_HITS)) ){
    idxNum |= CACHE_IDX_LRU;
  }
  pInfo->idxNum = idxNum;
  pInfo->idxStr = (char*)azCacheIdxStr[idxNum];
  return SQLITE_OK;
}

static int cacheOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_cursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->iSlot = -1;
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void cacheCursorFreeIn(cache_cursor *pCur){
  int i;
  for(i=0; i<pCur->nIn; i++) sqlite3_value_free(pCur->apIn[i]);
  sqlite3_free(pCur->apIn);
  pCur->apIn = 0;
  pCur->nIn = pCur->iIn = 0;
}

/* Give back the cursor's statement: reset into its slot, or finalize. */
static void cacheCursorRelease(cache_cursor *pCur){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  if( pCur->pStmt==0 ) return;
  if( pCur->iSlot>=0 && p->aRead[pCur->iSlot]==pCur->pStmt ){
    sqlite3_reset(pCur->pStmt);
    p->aReadBusy[pCur->iSlot] = 0;
  }else{
    sqlite3_finalize(pCur->pStmt);
  }
  pCur->pStmt = 0;
  pCur->iSlot = -1;
}

static int cacheClose(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  cacheCursorRelease(pCur);
  cacheCursorFreeIn(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Statement columns: 0 id, 1 key, 2 created, 3 expires, 4 value,
** 5 last_used, 6 hits, 7 size. */
static int cacheCursorStatement(cache_cursor *pCur, int idxNum){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  int bPoint = (idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0;
  int bValue = (idxNum & CACHE_IDX_VALUE)!=0;
  int bLru = (idxNum & CACHE_IDX_LRU)!=0;
  int iSlot = bPoint | (bValue<<1) | (bLru<<2);
  char *zSql;
  int rc;
  if( pCur->pStmt && pCur->iSlot==iSlot ){
    sqlite3_reset(pCur->pStmt);
    return SQLITE_OK;
  }
  cacheCursorRelease(pCur);
  if( p->aRead[iSlot] && !p->aReadBusy[iSlot] ){
    pCur->pStmt = p->aRead[iSlot];
    pCur->iSlot = iSlot;
    p->aReadBusy[iSlot] = 1;
    return SQLITE_OK;
  }
  zSql = sqlite3_mprintf(
      "SELECT d.id, d.key, d.created, d.expires, %s, %s FROM %s_data\" d%s%s%s"
      " WHERE %s(d.expires IS NULL OR d.expires>?2)",
      bValue ? "d.value" : "NULL",
      bLru ? "l.last_used, l.hits, l.size" : "NULL, NULL, NULL",
      p->zQual,
      bLru ? " JOIN " : "", bLru ? p->zQual : "", bLru ? "_lru\" l ON l.id=d.id" : "",
      bPoint ? "d.key=?1 AND " : "");
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1,
           SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &pCur->pStmt, 0);
  sqlite3_free(zSql);
  if( rc ) return cacheDbError(p, rc);
  if( p->aRead[iSlot]==0 ){
    p->aRead[iSlot] = pCur->pStmt;
    p->aReadBusy[iSlot] = 1;
    pCur->iSlot = iSlot;
  }
  return SQLITE_OK;
}

/* Step to the next live row; for IN, move on through the list. */
static int cacheCursorAdvance(cache_cursor *pCur){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  int rc;
  pCur->bTouched = 0;
  for(;;){
    if( pCur->idxNum & CACHE_IDX_IN ){
      if( pCur->iIn>=pCur->nIn ){
        pCur->bEof = 1;
        return SQLITE_OK;
      }
      sqlite3_reset(pCur->pStmt);
      sqlite3_bind_value(pCur->pStmt, 1, pCur->apIn[pCur->iIn++]);
      sqlite3_bind_int64(pCur->pStmt, 2, pCur->now);
    }
    rc = sqlite3_step(pCur->pStmt);
    if( rc==SQLITE_ROW ){
      pCur->bEof = 0;
      return SQLITE_OK;
    }
    if( rc!=SQLITE_DONE ){
      sqlite3_reset(pCur->pStmt);
      pCur->bEof = 1;
      return cacheDbError(p, rc);
    }
    if( (pCur->idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))
     && (pCur->idxNum & CACHE_IDX_VALUE) ){
      p->nMissPending++;
    }
    if( !(pCur->idxNum & CACHE_IDX_IN) ){
      pCur->bEof = 1;
      return SQLITE_OK;
    }
  }
}

static int cacheFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  cache_cursor *pCur = (cache_cursor*)cur;
  int rc;
  (void)idxStr; (void)argc;
  cacheCursorFreeIn(pCur);
  pCur->bEof = 1;
  rc = cacheCursorStatement(pCur, idxNum);
  if( rc ) return rc;
  pCur->idxNum = idxNum;
  pCur->now = cacheNowMs();
  sqlite3_clear_bindings(pCur->pStmt);
  sqlite3_bind_int64(pCur->pStmt, 2, pCur->now);
  if( idxNum & CACHE_IDX_EQ ){
    if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return SQLITE_OK;
    sqlite3_bind_value(pCur->pStmt, 1, argv[0]);
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
  }
  return cacheCursorAdvance(pCur);
}

static int cacheNext(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  if( pCur->idxNum & CACHE_IDX_EQ ){
    pCur->bEof = 1;
    sqlite3_reset(pCur->pStmt);
    return SQLITE_OK;
  }
  return cacheCursorAdvance(pCur);
}

static int cacheEof(sqlite3_vtab_cursor *cur){
  return ((cache_cursor*)cur)->bEof;
}

static int cacheRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = sqlite3_column_int64(((cache_cursor*)cur)->pStmt, 0);
  return SQLITE_OK;
}

static int cacheColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  cache_cursor *pCur = (cache_cursor*)cur;
  cache_vtab *p = (cache_vtab*)cur->pVtab;
  sqlite3_stmt *pStmt = pCur->pStmt;
  cache_touch *pNode;
  if( sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;
  switch( i ){
    case CACHE_COLUMN_KEY:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 1));
      break;
    case CACHE_COLUMN_VALUE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 4));
      if( !pCur->bTouched && (pCur->idxNum & CACHE_IDX_VALUE) ){
        pCur->bTouched = 1;
        cacheTouch(p, sqlite3_column_int64(pStmt, 0), cacheNowMs());
      }
      break;
    case CACHE_COLUMN_SIZE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 7));
      break;
    case CACHE_COLUMN_CREATED:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 2));
      break;
    case CACHE_COLUMN_LAST_USED:
      pNode = cacheHashFind(p, sqlite3_column_int64(pStmt, 0));
      if( pNode ){
        sqlite3_result_int64(ctx, pNode->ms);
      }else{
        sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 5));
      }
      break;
    case CACHE_COLUMN_HITS:
      pNode = cacheHashFind(p, sqlite3_column_int64(pStmt, 0));
      sqlite3_result_int64(ctx, sqlite3_column_int64(pStmt, 6)
                                + (pNode ? pNode->nHit : 0));
      break;
    case CACHE_COLUMN_EXPIRES:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 3));
      break;
    default:
      break;     /* the command column reads as NULL */
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------- writes */

static int cacheCheckValues(
  cache_vtab *p, sqlite3_value *pKey, sqlite3_value *pValue,
  sqlite3_value *pExpires
){
  char *zErr = cacheCheckKey("cache", pKey);
  int e;
  if( zErr ){
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = zErr;
    return SQLITE_ERROR;
  }
  e = sqlite3_value_type(pValue);
  if( e==SQLITE_NULL ){
    acorn_vtab_error(&p->base,
        "cache: value must not be NULL; expected BLOB or TEXT");
    return SQLITE_ERROR;
  }
  if( e!=SQLITE_BLOB && e!=SQLITE_TEXT ){
    acorn_vtab_error(&p->base, "cache: value must be BLOB or TEXT, got %s",
                     cacheTypeName(e));
    return SQLITE_ERROR;
  }
  e = sqlite3_value_type(pExpires);
  if( e!=SQLITE_NULL && e!=SQLITE_INTEGER ){
    acorn_vtab_error(&p->base, "cache: expires must be an INTEGER (unix ms)"
                     " or NULL, got %s", cacheTypeName(e));
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static int cacheCheckSize(cache_vtab *p, const cache_config *pCfg, i64 nSize){
  if( nSize>pCfg->capacity ){
    acorn_vtab_error(&p->base,
        "cache: entry of %lld bytes exceeds capacity of %lld bytes",
        nSize, pCfg->capacity);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* The invariants of the stored table, each a query that returns a row
** (its message) when broken.  %s is the quoted schema and table name
** without the closing quote. */
static const char *const azCacheCheck[] = {
  "SELECT 'the config table has ' || count(*) || ' rows, not 1'"
  " FROM %s_config\" HAVING count(*)!=1 OR min(id)!=1",
  "SELECT 'a counter is out of range: capacity ' || capacity || ', bytes '"
  " || bytes || ', entries ' || entries || ', seq ' || seq || ', hits ' ||"
  " hits || ', misses ' || misses || ', evictions ' || evictions ||"
  " ', expired ' || expired FROM %s_config\" WHERE capacity<1"
  " OR capacity>4611686018427387904 OR bytes<0 OR entries<0 OR seq<0"
  " OR hits<0 OR misses<0 OR evictions<0 OR expired<0"
  " OR typeof(capacity)||typeof(bytes)||typeof(entries)||typeof(seq)"
  "    !='integerintegerintegerinteger'",
  "SELECT 'bytes is ' || bytes || ', above the capacity of ' || capacity"
  " FROM %s_config\" WHERE bytes>capacity",
  "SELECT 'entries is ' || c.entries || ' but the data table holds ' ||"
  " (SELECT count(*) FROM %s_data\") || ' rows and the lru table ' ||"
  " (SELECT count(*) FROM %s_lru\") FROM %s_config\" c WHERE"
  " c.entries!=(SELECT count(*) FROM %s_data\")"
  " OR c.entries!=(SELECT count(*) FROM %s_lru\")",
  "SELECT 'entry ' || d.id || ' has no lru row' FROM %s_data\" d"
  " WHERE NOT EXISTS(SELECT 1 FROM %s_lru\" l WHERE l.id=d.id) LIMIT 1",
  "SELECT 'entry ' || d.id || ' has size ' || l.size || ', not the ' ||"
  " (CASE typeof(d.key) WHEN 'integer' THEN 8"
  "  ELSE length(CAST(d.key AS BLOB)) END + length(CAST(d.value AS BLOB)))"
  " || ' bytes of its key and value' FROM %s_data\" d JOIN %s_lru\" l"
  " ON l.id=d.id WHERE l.size!=CASE typeof(d.key) WHEN 'integer' THEN 8"
  "  ELSE length(CAST(d.key AS BLOB)) END + length(CAST(d.value AS BLOB))"
  " LIMIT 1",
  "SELECT 'bytes is ' || c.bytes || ' but the entries'' sizes sum to ' ||"
  " (SELECT coalesce(sum(size),0) FROM %s_lru\") FROM %s_config\" c"
  " WHERE c.bytes!=(SELECT coalesce(sum(size),0) FROM %s_lru\")",
  "SELECT 'entry ' || id || ' has a key of type ' || typeof(key) ||"
  " ' and a value of type ' || typeof(value) FROM %s_data\""
  " WHERE typeof(key) NOT IN ('integer','text','blob')"
  " OR typeof(value) NOT IN ('text','blob')"
  " OR typeof(created)!='integer'"
  " OR typeof(expires) NOT IN ('integer','null') LIMIT 1",
  "SELECT 'entry ' || id || ' has a bad lru row: used ' || used ||"
  " ', last_used ' || last_used || ', hits ' || hits FROM %s_lru\""
  " WHERE hits<0 OR typeof(hits)!='integer' OR typeof(used)!='integer'"
  " OR typeof(last_used)!='integer' LIMIT 1",
  "SELECT 'seq ' || c.seq || ' is below an id or a recency in use'"
  " FROM %s_config\" c WHERE c.seq<(SELECT max(id) FROM %s_data\")"
  " OR c.seq<(SELECT max(used) FROM %s_lru\")",
  "SELECT 'the expiry table and the entries'' expires disagree at entry ' ||"
  " id FROM (SELECT expires, id FROM %s_expiry\" EXCEPT SELECT expires, id"
  " FROM %s_data\" WHERE expires IS NOT NULL UNION ALL"
  " SELECT * FROM (SELECT expires, id FROM %s_data\" WHERE expires IS NOT"
  " NULL EXCEPT SELECT expires, id FROM %s_expiry\")) LIMIT 1",
};

/* Check every invariant of the stored table.  SQLITE_OK if they hold;
** SQLITE_CORRUPT_VTAB with *pzErr (sqlite3_free it) naming the first
** broken one; another code for an error while reading. */
static int cacheIntegrity(cache_vtab *p, char **pzErr){
  size_t i;
  int rc = SQLITE_OK;
  *pzErr = 0;
  for(i=0; rc==SQLITE_OK && i<sizeof(azCacheCheck)/sizeof(azCacheCheck[0]); i++){
    const char *q = p->zQual;
    sqlite3_stmt *pStmt = 0;
    char *zSql = sqlite3_mprintf(azCacheCheck[i], q, q, q, q, q, q, q, q);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      *pzErr = sqlite3_mprintf("cache: integrity_check of \"%w\": %s",
                               p->zName, sqlite3_column_text(pStmt, 0));
      rc = *pzErr ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM;
    }
    if( rc==SQLITE_OK ){
      rc = sqlite3_finalize(pStmt);
    }else{
      sqlite3_finalize(pStmt);
    }
    if( rc!=SQLITE_OK && *pzErr==0 ){
      *pzErr = sqlite3_mprintf("cache: integrity_check of \"%w\": %s",
                               p->zName, sqlite3_errmsg(p->db));
    }
  }
  return rc;
}

static int cacheCommand(cache_vtab *p, sqlite3_value *pCmd,
                        sqlite3_value *pArg){
  const char *zCmd = (const char*)sqlite3_value_text(pCmd);
  cache_config cfg;
  i64 nCapacity = 0;
  int rc;
  if( zCmd==0 ) return SQLITE_NOMEM;
  if( sqlite3_stricmp(zCmd, "capacity")==0 ){
    int e = sqlite3_value_type(pArg);
    int bBad;
    if( e==SQLITE_INTEGER ){
      nCapacity = sqlite3_value_int64(pArg);
      bBad = nCapacity<1 || nCapacity>CACHE_MAX_CAPACITY;
    }else if( e==SQLITE_TEXT ){
      bBad = cacheParseSize((const char*)sqlite3_value_text(pArg), &nCapacity);
    }else{
      bBad = 1;
    }
    if( bBad ){
      if( e==SQLITE_NULL ){
        acorn_vtab_error(&p->base, "cache: bad capacity NULL; " CACHE_SIZE_HELP);
      }else{
        acorn_vtab_error(&p->base, "cache: bad capacity '%s'; " CACHE_SIZE_HELP,
                         (const char*)sqlite3_value_text(pArg));
      }
      return SQLITE_ERROR;
    }
  }else if( sqlite3_stricmp(zCmd, "integrity_check")==0 ){
    char *zErr = 0;
    rc = cacheIntegrity(p, &zErr);
    if( zErr ){
      sqlite3_free(p->base.zErrMsg);
      p->base.zErrMsg = zErr;
    }
    return rc;
  }else if( sqlite3_stricmp(zCmd, "purge")!=0
         && sqlite3_stricmp(zCmd, "flush")!=0 ){
    acorn_vtab_error(&p->base, "cache: unknown command '%s'; accepted commands"
                     " are capacity, purge, flush and integrity_check", zCmd);
    return SQLITE_ERROR;
  }
  rc = cacheConfigLoad(p, &cfg);
  if( rc==SQLITE_OK ) rc = cacheFlushWrite(p, &cfg);
  if( rc==SQLITE_OK && nCapacity ) cfg.capacity = nCapacity;
  if( rc==SQLITE_OK && sqlite3_stricmp(zCmd, "flush")!=0 ){
    rc = cacheReclaimExpired(p, &cfg, cacheNowMs());
  }
  if( rc==SQLITE_OK ) rc = cacheEvict(p, &cfg, 0);
  if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
  if( rc==SQLITE_OK ) cacheFlushDone(p);
  return rc;
}

static int cacheUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                       sqlite3_int64 *pRowid){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_config cfg;
  i64 now = cacheNowMs();
  int rc, i;

  if( argc==1 ){                                   /* DELETE */
    rc = cacheConfigLoad(p, &cfg);
    if( rc==SQLITE_OK ) rc = cacheFlushWrite(p, &cfg);
    if( rc==SQLITE_OK ) rc = cacheDeleteEntry(p, &cfg, sqlite3_value_int64(argv[0]));
    if( rc==SQLITE_OK ) rc = cacheReclaimExpired(p, &cfg, now);
    if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
    if( rc==SQLITE_OK ) cacheFlushDone(p);
    return rc;
  }

  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){   /* INSERT */
    sqlite3_value *pKey = argv[2+CACHE_COLUMN_KEY];
    sqlite3_value *pValue = argv[2+CACHE_COLUMN_VALUE];
    sqlite3_value *pExpires = argv[2+CACHE_COLUMN_EXPIRES];
    i64 nSize;
    if( sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
      return cacheCommand(p, argv[2+CACHE_COLUMN_COMMAND], pValue);
    }
    if( sqlite3_value_type(argv[1])!=SQLITE_NULL ){
      acorn_vtab_error(pVtab, "cache: rowid is read-only");
      return SQLITE_ERROR;
    }
    for(i=CACHE_COLUMN_SIZE; i<=CACHE_COLUMN_HITS; i++){
      if( sqlite3_value_type(argv[2+i])!=SQLITE_NULL ){
        acorn_vtab_error(pVtab, "cache: column %s is read-only; writable"
                         " columns are key, value and expires", azCacheColumn[i]);
        return SQLITE_ERROR;
      }
    }
    rc = cacheCheckValues(p, pKey, pValue, pExpires);
    if( rc ) return rc;
    nSize = cacheBytes(p->bUtf16, pKey) + cacheBytes(p->bUtf16, pValue);
    rc = cacheConfigLoad(p, &cfg);
    if( rc==SQLITE_OK ) rc = cacheCheckSize(p, &cfg, nSize);
    if( rc==SQLITE_OK ) rc = cacheFlushWrite(p, &cfg);
    if( rc==SQLITE_OK ){
      rc = cacheSet(p, &cfg, pKey, pValue, pExpires, nSize, now, 0, now, pRowid);
    }
    if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
    if( rc==SQLITE_OK ) cacheFlushDone(p);
    return rc;
  }

  /* UPDATE: a set that keeps created and hits. */
  {
    i64 idOld = sqlite3_value_int64(argv[0]);
    sqlite3_value *pOldKey = 0, *pOldValue = 0, *pOldExpires = 0;
    sqlite3_value *pKey, *pValue, *pExpires;
    i64 iCreated = now, nHits = 0, nSize;
    sqlite3_stmt *pStmt;
    if( !sqlite3_value_nochange(argv[1])
     && sqlite3_value_int64(argv[1])!=idOld ){
      acorn_vtab_error(pVtab, "cache: rowid is read-only");
      return SQLITE_ERROR;
    }
    if( !sqlite3_value_nochange(argv[2+CACHE_COLUMN_COMMAND])
     && sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
      acorn_vtab_error(pVtab, "cache: commands are run by INSERT INTO"
          " \"%w\"(\"%w\", value) VALUES(command, argument)", p->zName, p->zName);
      return SQLITE_ERROR;
    }
    for(i=CACHE_COLUMN_SIZE; i<=CACHE_COLUMN_HITS; i++){
      if( !sqlite3_value_nochange(argv[2+i]) ){
        acorn_vtab_error(pVtab, "cache: column %s is read-only; writable"
                         " columns are key, value and expires", azCacheColumn[i]);
        return SQLITE_ERROR;
      }
    }
    /* Whatever can refuse the UPDATE is checked before the first write:
    ** SQLite opens no statement journal for a one-row change of a virtual
    ** table, so inside a transaction a write made before the error would
    ** stay.  The row's hits read here lack this connection's buffered uses
    ** of it, which are added before the flush writes them. */
    rc = cacheConfigLoad(p, &cfg);
    if( rc==SQLITE_OK ) rc = cacheStmt(p, CACHE_STMT_ROW, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, idOld);
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      pOldKey = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      pOldValue = sqlite3_value_dup(sqlite3_column_value(pStmt, 1));
      iCreated = sqlite3_column_int64(pStmt, 2);
      pOldExpires = sqlite3_value_dup(sqlite3_column_value(pStmt, 3));
      nHits = sqlite3_column_int64(pStmt, 4);
      rc = SQLITE_OK;
      if( pOldKey==0 || pOldValue==0 || pOldExpires==0 ) rc = SQLITE_NOMEM;
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
    }
    sqlite3_reset(pStmt);
    if( rc==SQLITE_OK && pOldKey==0 ){
      /* The row went away under the statement: nothing to update but
      ** the flush. */
      rc = cacheFlushWrite(p, &cfg);
      if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
      if( rc==SQLITE_OK ) cacheFlushDone(p);
      return rc;
    }
    if( rc==SQLITE_OK ){
      pKey = sqlite3_value_nochange(argv[2+CACHE_COLUMN_KEY])
               ? pOldKey : argv[2+CACHE_COLUMN_KEY];
      pValue = sqlite3_value_nochange(argv[2+CACHE_COLUMN_VALUE])
               ? pOldValue : argv[2+CACHE_COLUMN_VALUE];
      pExpires = sqlite3_value_nochange(argv[2+CACHE_COLUMN_EXPIRES])
               ? pOldExpires : argv[2+CACHE_COLUMN_EXPIRES];
      rc = cacheCheckValues(p, pKey, pValue, pExpires);
      nSize = cacheBytes(p->bUtf16, pKey) + cacheBytes(p->bUtf16, pValue);
      if( rc==SQLITE_OK ) rc = cacheCheckSize(p, &cfg, nSize);
      if( rc==SQLITE_OK ){
        cache_touch *pNode = cacheHashFind(p, idOld);
        if( pNode ) nHits += pNode->nHit;
        rc = cacheFlushWrite(p, &cfg);
      }
      /* Same key: cacheSet() rewrites the entry in place, keeping its id.
      ** A new key: the old entry goes, the new key is set (replacing any
      ** entry that had it). */
      if( rc==SQLITE_OK && pKey!=pOldKey ){
        rc = cacheDeleteEntry(p, &cfg, idOld);
      }
      if( rc==SQLITE_OK ){
        i64 idNew;
        rc = cacheSet(p, &cfg, pKey, pValue, pExpires, nSize, iCreated, nHits,
                      now, &idNew);
      }
      if( rc==SQLITE_OK ) rc = cacheConfigSave(p, &cfg);
      if( rc==SQLITE_OK ) cacheFlushDone(p);
    }else{
      cacheDbError(p, rc);
    }
    sqlite3_value_free(pOldKey);
    sqlite3_value_free(pOldValue);
    sqlite3_value_free(pOldExpires);
    return rc;
  }
}

#if SQLITE_VERSION_NUMBER >= 3044000
/* PRAGMA integrity_check (SQLite 3.44 and later) checks cache tables too:
** a broken invariant is reported as a problem, in *pzErr. */
static int cacheIntegrityMethod(sqlite3_vtab *pVtab, const char *zSchema,
                                const char *zTabName, int mFlags,
                                char **pzErr){
  cache_vtab *p = (cache_vtab*)pVtab;
  int rc;
  (void)zSchema; (void)zTabName; (void)mFlags;
  rc = cacheIntegrity(p, pzErr);
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

/* ------------------------------------------------------- cache_read */

/* cache_read is done with p: if SQLite disconnected it meanwhile, do it
** now. */
static void cacheUseEnd(cache_vtab *p){
  int bGone = p->bInUse==2;
  p->bInUse = 0;
  if( bGone ) cacheDisconnect(&p->base);
}

static void cacheRead(sqlite3_context*, sqlite3_value**, cache_vtab**);

static void cacheReadFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  cache_vtab *pUsed = 0;
  (void)argc;
  cacheRead(ctx, argv, &pUsed);
  if( pUsed ) cacheUseEnd(pUsed);
}

/* The body of cache_read; *ppUsed is the instance it uses, marked so. */
static void cacheRead(sqlite3_context *ctx, sqlite3_value **argv,
                      cache_vtab **ppUsed){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTab = (const char*)sqlite3_value_text(argv[0]);
  cache_vtab *p;
  sqlite3_stmt *pStmt;
  sqlite3_blob *pBlob = 0;
  char *zErr, *zData;
  i64 iOff, nLen, id = 0, nTotal, now;
  unsigned char *aBuf;
  int rc, i;
  zErr = cacheCheckKey("cache_read", argv[1]);
  if( zErr ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
    return;
  }
  if( sqlite3_value_type(argv[2])!=SQLITE_INTEGER
   || (iOff = sqlite3_value_int64(argv[2]))<0 ){
    acorn_result_error(ctx, "cache_read: offset must be a non-negative integer");
    return;
  }
  if( sqlite3_value_type(argv[3])!=SQLITE_INTEGER
   || (nLen = sqlite3_value_int64(argv[3]))<0 ){
    acorn_result_error(ctx, "cache_read: length must be a non-negative integer");
    return;
  }
  now = cacheNowMs();
  for(i=0; ; i++){
    i64 uid = 0;
    p = zTab ? cacheFind(db, zTab) : 0;
    if( p==0 ){
      acorn_result_error(ctx, "cache_read: no such cache table: %Q", zTab);
      return;
    }
    p->bInUse = 1;
    *ppUsed = p;
    rc = cacheStmt(p, CACHE_STMT_FIND_LIVE, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_value(pStmt, 1, argv[1]);
      sqlite3_bind_int64(pStmt, 2, now);
      rc = sqlite3_step(pStmt);
      if( rc==SQLITE_ROW ){
        uid = sqlite3_column_int64(pStmt, 0);
        id = sqlite3_column_int64(pStmt, 1);
      }
      rc = sqlite3_reset(pStmt);
    }
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = 0;
    if( i>0 || (rc!=SQLITE_OK && (rc&0xff)!=SQLITE_ERROR)
     || (rc==SQLITE_OK && (p->uid<0 || uid==p->uid)) ){
      break;
    }
    /* Another connection changed the schema since p was connected, and
    ** the table under this name is gone or is another one: p is done
    ** with.  Look again (which connects the table if there is one). */
    pthread_mutex_lock(&gCacheMutex);
    p->bStale = 1;
    pthread_mutex_unlock(&gCacheMutex);
    cacheBufferDrop(p);
    *ppUsed = 0;
    cacheUseEnd(p);
    id = 0;
  }
  if( rc==SQLITE_NOMEM ){
    /* from cacheStmt(), which leaves no message on db */
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( rc ){
    acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(db));
    return;
  }
  if( id==0 ){
    p->nMissPending++;
    return;                              /* NULL */
  }
  zData = sqlite3_mprintf("%s_data", p->zName);
  if( zData==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = sqlite3_blob_open(db, p->zDb, zData, "value", id, 0, &pBlob);
  sqlite3_free(zData);
  if( rc ){
    acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(db));
    sqlite3_blob_close(pBlob);
    return;
  }
  nTotal = sqlite3_blob_bytes(pBlob);
  if( iOff>=nTotal ){
    nLen = 0;
  }else if( nLen>nTotal-iOff ){
    nLen = nTotal-iOff;
  }
  if( nLen==0 ){
    sqlite3_result_zeroblob(ctx, 0);
  }else{
    aBuf = sqlite3_malloc64((sqlite3_uint64)nLen);
    if( aBuf==0 ){
      sqlite3_blob_close(pBlob);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    rc = sqlite3_blob_read(pBlob, aBuf, (int)nLen, (int)iOff);
    if( rc ){
      sqlite3_free(aBuf);
      acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(db));
      sqlite3_blob_close(pBlob);
      return;
    }
    sqlite3_result_blob64(ctx, aBuf, (sqlite3_uint64)nLen, sqlite3_free);
  }
  sqlite3_blob_close(pBlob);
  cacheTouch(p, id, now);
}

/* ------------------------------------------------------- cache_stats */

#define CACHE_STATS_NCOL   7
#define CACHE_STATS_TABLE  7     /* the hidden argument column */

typedef struct cache_stats_vtab cache_stats_vtab;
struct cache_stats_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
};

typedef struct cache_stats_cursor cache_stats_cursor;
struct cache_stats_cursor {
  sqlite3_vtab_cursor base;
  i64 a[CACHE_STATS_NCOL];
  char *zTable;
  int bEof;
};

static int cacheStatsConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const*argv, sqlite3_vtab **ppVtab,
                             char **pzErr){
  cache_stats_vtab *pNew;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(capacity, entries, bytes,"
                                " hits, misses, evictions, expired, tbl HIDDEN)");
  if( rc ) return rc;
  pNew = sqlite3_malloc64(sizeof(*pNew));
  if( pNew==0 ) return SQLITE_NOMEM;
  memset(pNew, 0, sizeof(*pNew));
  pNew->db = db;
  *ppVtab = &pNew->base;
  return SQLITE_OK;
}

static int cacheStatsDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int cacheStatsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, bSeen = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=CACHE_STATS_TABLE || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ){
      continue;
    }
    bSeen = 1;
    if( !pC->usable ) continue;
    pInfo->aConstraintUsage[i].argvIndex = 1;
    pInfo->aConstraintUsage[i].omit = 1;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
    return SQLITE_OK;
  }
  if( bSeen ) return SQLITE_CONSTRAINT;
  acorn_vtab_error(pVtab, "cache_stats: missing argument: the name of a cache"
                   " table, as in SELECT * FROM cache_stats('thumbs')");
  return SQLITE_ERROR;
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
  cache_stats_vtab *pTab = (cache_stats_vtab*)cur->pVtab;
  const char *zTab;
  cache_vtab *p;
  cache_config cfg;
  int rc, i;
  (void)idxNum; (void)idxStr;
  pCur->bEof = 1;
  sqlite3_free(pCur->zTable);
  pCur->zTable = 0;
  if( argc<1 ) return SQLITE_OK;
  zTab = (const char*)sqlite3_value_text(argv[0]);
  for(i=0; ; i++){
    p = zTab ? cacheFind(pTab->db, zTab) : 0;
    if( p==0 ){
      acorn_vtab_error(cur->pVtab, "cache_stats: no such cache table: %Q", zTab);
      return SQLITE_ERROR;
    }
    rc = cacheConfigLoad(p, &cfg);
    if( i>0 || (rc!=SQLITE_OK && (rc&0xff)!=SQLITE_ERROR)
     || (rc==SQLITE_OK && !p->bStale) ){
      break;
    }
    /* The table under this name is gone or is another one (changed by
    ** another connection): p is done with.  Look again. */
    pthread_mutex_lock(&gCacheMutex);
    p->bStale = 1;
    pthread_mutex_unlock(&gCacheMutex);
    cacheBufferDrop(p);
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = 0;
  }
  if( rc ){
    acorn_vtab_error(cur->pVtab, "cache_stats: %s",
                     p->base.zErrMsg ? p->base.zErrMsg : sqlite3_errstr(rc));
    sqlite3_free(p->base.zErrMsg);
    p->base.zErrMsg = 0;
    return rc;
  }
  pCur->a[0] = cfg.capacity;
  pCur->a[1] = cfg.entries;
  pCur->a[2] = cfg.bytes;
  pCur->a[3] = cfg.hits + p->nHitPending;
  pCur->a[4] = cfg.misses + p->nMissPending;
  pCur->a[5] = cfg.evictions;
  pCur->a[6] = cfg.expired;
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
  if( i<CACHE_STATS_NCOL ){
    sqlite3_result_int64(ctx, pCur->a[i]);
  }else{
    sqlite3_result_text(ctx, pCur->zTable, -1, SQLITE_TRANSIENT);
  }
  return SQLITE_OK;
}

static int cacheStatsRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  (void)cur;
  *pRowid = 1;
  return SQLITE_OK;
}

static sqlite3_module cacheStatsModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,
  /* xConnect    */ cacheStatsConnect,
  /* xBestIndex  */ cacheStatsBestIndex,
  /* xDisconnect */ cacheStatsDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ cacheStatsOpen,
  /* xClose      */ cacheStatsClose,
  /* xFilter     */ cacheStatsFilter,
  /* xNext       */ cacheStatsNext,
  /* xEof        */ cacheStatsEof,
  /* xColumn     */ cacheStatsColumn,
  /* xRowid      */ cacheStatsRowid,
  /* xUpdate     */ 0,
  /* xBegin      */ 0,
  /* xSync       */ 0,
  /* xCommit     */ 0,
  /* xRollback   */ 0,
  /* xFindMethod */ 0,
  /* xRename     */ 0,
  /* xSavepoint  */ 0,
  /* xRelease    */ 0,
  /* xRollbackTo */ 0,
  /* xShadowName */ 0,
#if SQLITE_VERSION_NUMBER >= 3044000
  /* xIntegrity  */ 0,
#endif
};

int acorn_cache_register(sqlite3 *db){
  int rc = sqlite3_create_module_v2(db, "cache", &cacheModule, (void*)db,
                                    cacheModuleDestroy);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module(db, "cache_stats", &cacheStatsModule, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "cache_read", 4, SQLITE_UTF8, 0,
                                 cacheReadFunc, 0, 0);
  }
  return rc;
}
