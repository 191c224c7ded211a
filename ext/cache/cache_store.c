/*
** cache_store.c: the stored table of a cache, as statements on its shadow
** tables inside the user's transaction (so ROLLBACK and ROLLBACK TO undo
** sets, deletes, evictions, capacity changes and written recency alike).
** What the table does for a user is in docs/cache.md; this is how it is
** kept.
**
** THE SHADOW TABLES (format 4; xShadowName knows their suffixes)
**
**   <t>_config(id=1, capacity, bytes, entries, seq, hits, misses,
**              evictions, expired, uid, policy, head, low, dead, dttl,
**              maxent, feed, tagged, fseq, elow, eseq)
**       One row.  uid is random at CREATE: the table's identity.  dttl,
**       maxent and feed are the options default_ttl (seconds),
**       max_entries and feed (0: off); tagged counts the rows of <t>_tag,
**       fseq the removals ever written to <t>_feed.  Checked
**       as it is read: a counter that is not an INTEGER in 0..2^62
**       (capacity 1..2^62) is SQLITE_CORRUPT_VTAB, so no sum of counters
**       can overflow.  elow is a lower bound on every entry's expires
**       (NULL: no entry expires), true while eseq = seq (eseq is written
**       with seq by every write of this format, -1 where not known):
**       cache_config.iExpLow in cacheInt.h says how it is kept.
**   <t>_data(id INTEGER PRIMARY KEY, key UNIQUE, created, expires, size,
**            value)
**       One row per entry; value last, so reading expires or size never
**       walks a large value's overflow pages.  size, the bytes the entry
**       counts for (CACHE_SIZE_SQL of its key and value), is written by
**       every set so that a write reads it rather than computing it; a row
**       without it (NULL: written by an older acorn, which names the
**       columns it knows) has it computed.  A format 3 table has no size
**       column: its sizes are computed (cache_format.c).
**   <t>_expiry(expires, id) WITHOUT ROWID   the entries that can expire
**   <t>_rec(lo INTEGER PRIMARY KEY, minused, recs)  + index on minused
**       Recency records, packed: row lo holds, in the blob recs, one
**       record {id, used, last_used, hits} for each entry with id in
**       [lo, next lo) used since its set, sorted by id; minused is the
**       least used in it above low (NULL if none).  The index is named
**       after the uid (an index cannot be renamed with its table).
**   <t>_tag(id INTEGER PRIMARY KEY, tag TEXT NOT NULL)  + index on tag
**       One row per entry that has a tag; an entry without one has no row,
**       and while no entry has one (config column tagged = 0) a delete
**       does not even look.  A table of its own rather than a column of
**       <t>_data: an older table's <t>_data stays as it is (a column added
**       by ALTER would land after value, on a large value's overflow
**       pages), and entries without a tag cost nothing, not a byte of
**       every row and of the index.  SELECT ... WHERE tag = ? and DELETE
**       ... WHERE tag = ? walk the index: they touch that tag's entries
**       only.
**   <t>_feed(seq INTEGER PRIMARY KEY, key, size, reason, at)
**       The newest `feed` removals the application did not ask for: an
**       eviction by capacity (reason 1) or by max_entries (2), or an
**       expired entry reclaimed (3); at in unix ms.  seq counts up from
**       the config column fseq and is never given twice, so a consumer
**       that polls WHERE seq > ? misses nothing the feed still holds.
**       Written by the write that removes the entry, inside its
**       transaction: a rollback takes the rows back with the removal;
**       read by cache_evictions() (cache_feed.c).
**   <t>_lru    acorn 0.1's recency table (format 1): cache_format.c
**
** RECENCY
**
**   seq counts up.  Every set takes the next value as the entry's id (a set
**   of a stored key makes a new entry, so id order is set order); every
**   written use, and every renewal (an UPDATE of expires or tag alone,
**   which keeps the entry and its id), takes the next as the entry's used.  An entry's recency is
**   its latest such number: no ties; under lru eviction follows it exactly,
**   under fifo it follows ids.  A record is 28 bytes, little-endian: id
**   (8), used (8), last_used (6), hits (6), so a chunk is read and written
**   with no parsing.  Chunk 0 always exists, so every id falls in a chunk.
**   A chunk whose blob grows past the page size less a margin is split; an
**   empty one is deleted (but 0).
**
** EVICTION (lru) looks at two candidates and takes the lower recency: the
**   oldest entry never used since its set (the first id >= head with no
**   record; every live entry below head has a record), and the entry of the
**   least used record above low (through the index on minused).  Evicting
**   that one does not rewrite its chunk: low moves up to its used, and the
**   chunk's minused to its next record; records at or below low are dropped
**   whenever their chunk is written.  Deletes, expiries and sets of stored
**   keys leave the old entry's record, counted in dead; eviction passes over
**   such a record when it meets it, and once dead passes entries + 1024 a
**   write sweeps every chunk (one lookup an entry gone).  Under fifo the
**   candidate is the first id.
**
** A FILE FROM A STRANGER may hold anything in these tables.  Every value a
** loop or a sum runs on is bounded where it is read: the counters as the
** config row is read (above), entry ids to 1..seq (cacheIdCheck: a set
** takes seq+1), record ids as their chunk is decoded; and a write refuses to
** store a counter out of range, or to end over the capacity with nothing
** left to evict (cacheConfigCheck, acornCacheEvict): SQLITE_CORRUPT_VTAB,
** naming what disagrees.  A trigger or an index acorn did not make on a
** shadow table would run inside the writes: while one is there, no write
** (acornCacheForeignFind).
**
** A WRITE (cache_op) reads the config row (or the transaction's copy) at
** its start, writes the connection's buffered uses first (so eviction sees
** them), then its change, and keeps the row for xSync.  Every set, update,
** delete and command but integrity_check reclaims expired entries first,
** once the time reaches elow (before it, none has expired).
*/
#include "cacheInt.h"

#include <stdarg.h>

/*
** The statement texts.  Each is complete: it is formatted with the schema
** and table name, as (zDb, zName) given three times over, and names its
** tables as "schema"."table_suffix".
*/


/* Columns of CACHE_STMT_CONFIG_READ (and READ1, READ2). */
#define CACHE_CONFIG_NCOL 20

static const struct {
  int eStmt;                 /* its index, checked by assert() */
  const char *zSql;
} aCacheStmt[CACHE_NSTMT] = {
  { CACHE_STMT_CONFIG_READ,
    "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired,"
    " uid, policy, head, low, dead, dttl, maxent, feed, fseq, tagged,"
    " elow, eseq FROM \"%w\".\"%w_config\" WHERE id=1" },
  { CACHE_STMT_CONFIG_READ1,     /* format 1, before its conversion */
    "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired,"
    " uid, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, -1"
    " FROM \"%w\".\"%w_config\" WHERE id=1" },
  { CACHE_STMT_CONFIG_READ2,     /* format 2, before its conversion */
    "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired,"
    " uid, policy, head, low, dead, 0, 0, 0, 0, 0, NULL, -1"
    " FROM \"%w\".\"%w_config\" WHERE id=1" },
  { CACHE_STMT_CONFIG_WRITE,
    "UPDATE \"%w\".\"%w_config\" SET capacity=?1, bytes=?2, entries=?3,"
    " seq=?4, hits=?5, misses=?6, evictions=?7, expired=?8, head=?9,"
    " low=?10, dead=?11, dttl=?12, maxent=?13, feed=?14, fseq=?15,"
    " tagged=?16, elow=?17, eseq=?18 WHERE id=1" },
  { CACHE_STMT_FIND,
    "SELECT id, expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE key=?1" },
  { CACHE_STMT_FIND_LIVE,
    "SELECT (SELECT uid FROM \"%w\".\"%w_config\" WHERE id=1),"
    " (SELECT id FROM \"%w\".\"%w_data\" WHERE key=?1"
    " AND (expires IS NULL OR expires>?2))" },
  { CACHE_STMT_GET,               /* cache_get: a live entry's value */
    "SELECT id, value FROM \"%w\".\"%w_data\""
    " WHERE key=?1 AND (expires IS NULL OR expires>?2)" },
  { CACHE_STMT_INSERT,
    "INSERT INTO \"%w\".\"%w_data\"(id, key, created, expires, value)"
    " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(key) DO NOTHING" },
  { CACHE_STMT_DELETE,
    "DELETE FROM \"%w\".\"%w_data\" WHERE id=?1" },
  { CACHE_STMT_ROW,
    "SELECT key, value, created, expires FROM \"%w\".\"%w_data\""
    " WHERE id=?1" },
  { CACHE_STMT_HEAD,
    "SELECT id, expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id>=?1 ORDER BY id LIMIT 1" },
  { CACHE_STMT_ENTRY,
    "SELECT expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id=?1" },
  { CACHE_STMT_EXPIRES_SET,       /* a renewal: the row keeps its place */
    "UPDATE \"%w\".\"%w_data\" SET expires=?2 WHERE id=?1" },
  { CACHE_STMT_EXPIRY_ADD,
    "INSERT INTO \"%w\".\"%w_expiry\"(expires, id) VALUES(?1, ?2)" },
  { CACHE_STMT_EXPIRY_DEL,
    "DELETE FROM \"%w\".\"%w_expiry\" WHERE expires=?1 AND id=?2" },
  { CACHE_STMT_EXPIRY_FIRST,
    "SELECT expires, id FROM \"%w\".\"%w_expiry\""
    " ORDER BY expires, id LIMIT 1" },
  { CACHE_STMT_CHUNK_FIND,
    "SELECT lo, recs FROM \"%w\".\"%w_rec\" WHERE lo<=?1"
    " ORDER BY lo DESC LIMIT 1" },
  { CACHE_STMT_CHUNK_NEXT,
    "SELECT lo FROM \"%w\".\"%w_rec\" WHERE lo>?1 ORDER BY lo LIMIT 1" },
  { CACHE_STMT_CHUNK_OLDEST,     /* (the index alone: the chunk is loaded */
    "SELECT lo FROM \"%w\".\"%w_rec\" WHERE minused IS NOT NULL"
    " ORDER BY minused LIMIT 1" },  /* by cacheChunkLoad, usually held) */
  { CACHE_STMT_CHUNK_WRITE,
    "UPDATE \"%w\".\"%w_rec\" SET minused=?2, recs=?3 WHERE lo=?1" },
  { CACHE_STMT_CHUNK_ADD,
    "INSERT INTO \"%w\".\"%w_rec\"(lo, minused, recs) VALUES(?1, ?2, ?3)" },
  { CACHE_STMT_CHUNK_DELETE,
    "DELETE FROM \"%w\".\"%w_rec\" WHERE lo=?1" },
  { CACHE_STMT_CHUNK_SETMIN,
    "UPDATE \"%w\".\"%w_rec\" SET minused=?2 WHERE lo=?1" },
  { CACHE_STMT_EXISTS,
    "SELECT 1 FROM \"%w\".\"%w_data\" WHERE id=?1" },
  { CACHE_STMT_LRU1_READ,        /* format 1, before its conversion */
    "SELECT last_used, " CACHE_LRU1_HITS " FROM \"%w\".\"%w_lru\""
    " WHERE id=?1" },
  { CACHE_STMT_DATA_VERSION,
    "PRAGMA \"%w\".data_version" },
  { CACHE_STMT_SCHEMA_VERSION,
    "PRAGMA \"%w\".schema_version" },
  { CACHE_STMT_TAG_ADD,
    "INSERT INTO \"%w\".\"%w_tag\"(id, tag) VALUES(?1, ?2)" },
  { CACHE_STMT_TAG_DEL,
    "DELETE FROM \"%w\".\"%w_tag\" WHERE id=?1" },
  { CACHE_STMT_TAG_GET,
    "SELECT tag FROM \"%w\".\"%w_tag\" WHERE id=?1" },
  { CACHE_STMT_FEED_ADD,
    "INSERT INTO \"%w\".\"%w_feed\"(seq, key, size, reason, at)"
    " SELECT ?1, key, ?2, ?3, ?4 FROM \"%w\".\"%w_data\" WHERE id=?5" },
  { CACHE_STMT_FEED_TRIM,
    "DELETE FROM \"%w\".\"%w_feed\" WHERE seq<=?1" },
  /* cache_write: a live entry's id, and its value's type as SQLite's code
  ** (SQLITE_INTEGER 1 .. SQLITE_BLOB 4; typeof reads the record header,
  ** not the value) */
  { CACHE_STMT_FIND_WRITE,
    "SELECT id, CASE typeof(value) WHEN 'integer' THEN 1 WHEN 'real' THEN 2"
    " WHEN 'text' THEN 3 ELSE 4 END FROM \"%w\".\"%w_data\""
    " WHERE key=?1 AND (expires IS NULL OR expires>?2)" },
  /* a write that changes nothing: it takes the schema's write lock, under
  ** the busy handler, before anything is read */
  { CACHE_STMT_WRITE_LOCK,
    "DELETE FROM \"%w\".\"%w_config\" WHERE 0" },
  /* the transaction of a cache_write() called in autocommit */
  { CACHE_STMT_WRITE_BEGIN, "SAVEPOINT acorn_cache_write" },
  { CACHE_STMT_WRITE_END, "RELEASE acorn_cache_write" },
  { CACHE_STMT_WRITE_UNDO, "ROLLBACK TO acorn_cache_write" },
  /* the whole transaction, when its savepoint could not be rolled back
  ** (prepared before it is needed: it steps without allocating) */
  { CACHE_STMT_ROLLBACK, "ROLLBACK" },
  /* FIND, HEAD, ENTRY and INSERT of a format 4 table (cacheStmtSized) */
  { CACHE_STMT_FIND4,
    "SELECT id, expires, " CACHE_SIZE4_SQL " FROM \"%w\".\"%w_data\""
    " WHERE key=?1" },
  { CACHE_STMT_HEAD4,
    "SELECT id, expires, " CACHE_SIZE4_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id>=?1 ORDER BY id LIMIT 1" },
  { CACHE_STMT_ENTRY4,
    "SELECT expires, " CACHE_SIZE4_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id=?1" },
  { CACHE_STMT_INSERT4,
    "INSERT INTO \"%w\".\"%w_data\"(id, key, created, expires, size, value)"
    " VALUES(?1, ?2, ?3, ?4, ?6, ?5) ON CONFLICT(key) DO NOTHING" },
};

/* -------------------------------------------------------------- utilities */

/* A new op on pTab (pVtab: the instance it runs for, or 0): no error yet.
** The time is a write's (acornCacheOpBegin sets it). */
void acornCacheOpInit(cache_op *op, cache_table *pTab, cache_vtab *pVtab){
  assert( pVtab==0 || pVtab->pTab==pTab );
  memset(op, 0, sizeof(*op));
  op->pTab = pTab;
  op->pVtab = pVtab;
}

/* Record the connection's latest error as the operation's first error. */
int acornCacheOpError(cache_op *op, int rc){
  if( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE && op->zErr==0 ){
    assert( rc==SQLITE_NOMEM || op->pTab!=0 );
    op->zErr = sqlite3_mprintf("%s: %s", op->zWho ? op->zWho : "cache",
                   rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                    : sqlite3_errmsg(op->pTab->db));
    op->rcErr = rc;
  }
  return rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* The same with a message of our own. */
int acornCacheOpFail(cache_op *op, int rc, const char *zFmt, ...){
  assert( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE );
  if( op->zErr==0 ){
    va_list ap;
    va_start(ap, zFmt);
    op->zErr = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
    op->rcErr = rc;
  }
  return rc;
}

/* The text of statement i for the table zDb.zName, from sqlite3_mprintf()
** (0: out of memory).  A statement of no table (a savepoint's) ignores
** them. */
char *acornCacheStmtSql(int i, const char *zDb, const char *zName){
  assert( i>=0 && i<CACHE_NSTMT && aCacheStmt[i].eStmt==i );
  assert( zDb!=0 && zName!=0 );
  return sqlite3_mprintf(aCacheStmt[i].zSql, zDb, zName, zDb, zName, zDb,
                         zName);
}

/* Statement i (FIND, HEAD, ENTRY or INSERT), or its twin of a format 4
** table, which reads and writes the size its rows hold. */
static int cacheStmtSized(cache_op *op, int i, sqlite3_stmt **ppStmt){
  if( op->pTab->iFormat>=4 ){
    i = i==CACHE_STMT_FIND ? CACHE_STMT_FIND4
      : i==CACHE_STMT_HEAD ? CACHE_STMT_HEAD4
      : i==CACHE_STMT_ENTRY ? CACHE_STMT_ENTRY4 : CACHE_STMT_INSERT4;
  }
  return acornCacheStmt(op, i, ppStmt);
}

int acornCacheStmt(cache_op *op, int i, sqlite3_stmt **ppStmt){
  cache_table *p = op->pTab;
  assert( p!=0 && ppStmt!=0 );
  assert( i>=0 && i<CACHE_NSTMT && aCacheStmt[i].eStmt==i );
  if( p->st.aStmt[i]==0 ){
    int rc;
    char *zSql = acornCacheStmtSql(i, p->zDb, p->zName);
    if( zSql==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
    rc = sqlite3_prepare_v3(p->db, zSql, -1,
             SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &p->st.aStmt[i], 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return acornCacheOpError(op, rc);
  }
  *ppStmt = p->st.aStmt[i];
  return SQLITE_OK;
}

/* Step a statement that returns no row we need, then reset it. */
int acornCacheRun(cache_op *op, sqlite3_stmt *pStmt){
  int rc, rc2;
  assert( pStmt!=0 && op->pTab!=0 );
  rc = sqlite3_step(pStmt);
  rc2 = sqlite3_reset(pStmt);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = rc2;
  return acornCacheOpError(op, rc);
}

/* One value of one query run once (probes of the schema, not statements
** of the hot path): the first column of its first row in *pVal, *pbRow if
** there is a row.  The error of preparing or stepping it, else SQLITE_OK.
** Prepared with SQLITE_PREPARE_NO_VTAB: no virtual table is connected.
** zSql, from sqlite3_mprintf() (0: out of memory), is freed. */
int acornCacheQueryInt(sqlite3 *db, char *zSql, i64 *pVal, int *pbRow){
  sqlite3_stmt *pStmt = 0;
  int rc, bRow = 0;
  if( pbRow ) *pbRow = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    bRow = sqlite3_step(pStmt)==SQLITE_ROW;
    if( bRow ) *pVal = sqlite3_column_int64(pStmt, 0);
    rc = sqlite3_finalize(pStmt);
  }
  if( pbRow ) *pbRow = bRow;
  return rc;
}

void acornCacheFinalizeAll(cache_table *p){
  int i;
  p->st.iGen++;
  p->st.bCfgBound = 0;
  for(i=0; i<CACHE_NSTMT; i++){
    sqlite3_finalize(p->st.aStmt[i]);
    p->st.aStmt[i] = 0;
  }
  for(i=0; i<CACHE_NREAD; i++){
    /* A busy slot's statement belongs to its cursor from now on. */
    if( !p->st.aReadBusy[i] ) sqlite3_finalize(p->st.aRead[i]);
    p->st.aRead[i] = 0;
    p->st.aReadBusy[i] = 0;
  }
}

/* ------------------------------------------------------- recency records */

/* A record is stored as 28 bytes, little-endian: id (8), used (8), ms
** (6, unsigned: a clock before 1970 counts as 0) and hits (6, at most
** 2^48-1).  Fixed width: a chunk is read and written with no parsing. */
#define CACHE_REC_BYTES 28
#define CACHE_MAX48     (((i64)1<<48)-1)

/* Little-endian fields of 8 and 6 bytes, written out byte by byte so that
** the compiler makes each one or two moves (a loop over n bytes was about
** 60 instructions a record, as much as the SQL that writes the chunk). */
static void cachePut8(unsigned char *a, u64 v){
  a[0] = (unsigned char)v;       a[1] = (unsigned char)(v>>8);
  a[2] = (unsigned char)(v>>16); a[3] = (unsigned char)(v>>24);
  a[4] = (unsigned char)(v>>32); a[5] = (unsigned char)(v>>40);
  a[6] = (unsigned char)(v>>48); a[7] = (unsigned char)(v>>56);
}
static void cachePut6(unsigned char *a, u64 v){
  a[0] = (unsigned char)v;       a[1] = (unsigned char)(v>>8);
  a[2] = (unsigned char)(v>>16); a[3] = (unsigned char)(v>>24);
  a[4] = (unsigned char)(v>>32); a[5] = (unsigned char)(v>>40);
}
static u64 cacheGet8(const unsigned char *a){
  return (u64)a[0] | (u64)a[1]<<8 | (u64)a[2]<<16 | (u64)a[3]<<24
       | (u64)a[4]<<32 | (u64)a[5]<<40 | (u64)a[6]<<48 | (u64)a[7]<<56;
}
static u64 cacheGet6(const unsigned char *a){
  return (u64)a[0] | (u64)a[1]<<8 | (u64)a[2]<<16 | (u64)a[3]<<24
       | (u64)a[4]<<32 | (u64)a[5]<<40;
}

/* Room for n records in the chunk. */
static int cacheChunkReserve(cache_chunk *c, int n){
  assert( n>=0 && c->nAlloc>=0 );
  if( n>c->nAlloc ){
    int nNew = c->nAlloc ? c->nAlloc : 64;
    cache_rec *aNew;
    while( nNew<n ) nNew *= 2;
    aNew = sqlite3_realloc64(c->aRec, sizeof(cache_rec)*(size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    c->aRec = aNew;
    c->nAlloc = nNew;
  }
  assert( c->nAlloc>=n );
  return SQLITE_OK;
}

/* Decode the blob of chunk lo into c.  SQLITE_CORRUPT_VTAB if it is not
** whole records with ascending ids, all at or after lo. */
int acornCacheChunkDecode(cache_chunk *c, i64 lo, const unsigned char *a,
                            int n){
  int i, nRec = n/CACHE_REC_BYTES;
  assert( n>=0 && (a!=0 || n==0) );
  c->lo = lo;
  c->nRec = 0;
  if( n%CACHE_REC_BYTES ) return SQLITE_CORRUPT_VTAB;
  if( cacheChunkReserve(c, nRec) ) return SQLITE_NOMEM;
  for(i=0; i<nRec; i++, a+=CACHE_REC_BYTES){
    cache_rec *r = &c->aRec[i];
    r->id = (i64)cacheGet8(a);
    r->used = (i64)cacheGet8(a+8);
    r->ms = (i64)cacheGet6(a+16);
    r->hits = (i64)cacheGet6(a+22);
    if( r->id<lo || (i>0 && r->id<=r[-1].id) || r->used<0 ){
      return SQLITE_CORRUPT_VTAB;
    }
  }
  c->nRec = nRec;
  assert( nRec==0 || (c->aRec[0].id>=lo && c->aRec[nRec-1].id>=c->aRec[0].id) );
  return SQLITE_OK;
}

/* Encode records aRec[0..n) into a (room for CACHE_REC_BYTES each); the
** bytes written. */
static int cacheChunkEncode(const cache_rec *aRec, int n, unsigned char *a){
  int i;
  assert( n>=0 && (a!=0 || n==0) );
  for(i=0; i<n; i++, a+=CACHE_REC_BYTES){
    i64 ms = aRec[i].ms<0 ? 0 : aRec[i].ms>CACHE_MAX48 ? CACHE_MAX48 : aRec[i].ms;
    i64 hits = aRec[i].hits>CACHE_MAX48 ? CACHE_MAX48 : aRec[i].hits;
    cachePut8(a, (u64)aRec[i].id);
    cachePut8(a+8, (u64)aRec[i].used);
    cachePut6(a+16, (u64)ms);
    cachePut6(a+22, (u64)hits);
  }
  return n*CACHE_REC_BYTES;
}

void acornCacheChunkDropAll(cache_table *p){
  int i;
  for(i=0; i<CACHE_NCHUNK; i++) p->held.aChunk[i].bValid = 0;
}

/* What p holds (the config row, the chunks) may be out of date: none of it
** is used again; the next read reads it from the file. */
void acornCacheHeldForget(cache_table *p){
  p->held.iGen++;
  p->held.eCfg = CACHE_CFG_NONE;
}

/* Note PRAGMA data_version and schema_version now, inside a read
** transaction of a statement on the table's schema: its schema in memory
** is the file's (the statement checked it as it began), which
** cacheSchemaCurrent() builds on.  v is the file's data version now: only
** when it changed since the last note (this connection's own commits are
** noted at xCommit: they change neither the schema in memory's currency
** nor PRAGMA data_version). */
static void cacheNoteVersions(cache_table *p, unsigned v){
  cache_op op;
  sqlite3_stmt *pStmt;
  i64 aV[2] = {-1, -1};
  int i;
  if( (i64)v==p->seen.iNotedVersion ) return;
  p->seen.iNotedVersion = v;
  acornCacheOpInit(&op, p, 0);
  for(i=0; i<2; i++){
    int eStmt = i ? CACHE_STMT_SCHEMA_VERSION : CACHE_STMT_DATA_VERSION;
    if( acornCacheStmt(&op, eStmt, &pStmt)==SQLITE_OK ){
      if( sqlite3_step(pStmt)==SQLITE_ROW ){
        aV[i] = sqlite3_column_int64(pStmt, 0);
      }
      if( sqlite3_reset(pStmt) ) aV[i] = -1;
    }
  }
  sqlite3_free(op.zErr);
  p->seen.iDataVersion = aV[0];
  p->seen.iSchemaVersion = aV[1];
}

/* What a connection holds of a table (decoded chunks, the config row)
** stays good while nothing else changes it: inside a transaction (its
** snapshot) until a rollback, and from one transaction to the next while
** the file's data version is the one seen at the end of the last
** (SQLITE_FCNTL_DATA_VERSION changes when another connection commits; this
** connection's own commits are noted at xCommit).  Called at the start of
** every read and write outside a transaction.  Under a DROP TABLE's mark
** (txn.bDrop) nothing held outlives the statement: what it read may be
** the dropping transaction's, which a rollback that no xRollback of this
** table sees takes back without changing the data version, and a chunk
** kept from it would be written back over the restored records. */
void acornCacheHeldValidate(cache_table *p){
  unsigned v = 0;
  /* the version is current only once a read transaction has begun */
  if( sqlite3_txn_state(p->db, p->zDb)==SQLITE_TXN_NONE
   || sqlite3_file_control(p->db, p->zDb, SQLITE_FCNTL_DATA_VERSION, &v) ){
    acornCacheHeldForget(p);
  }else{
    if( v!=p->seen.iVersion || p->txn.bDrop ){
      acornCacheHeldForget(p);
      p->seen.iVersion = v;
    }
    if( (i64)v!=p->seen.iNotedVersion ) cacheNoteVersions(p, v);
  }
}
void acornCacheHeldCheck(cache_table *p){
  if( !p->txn.bOpen ) acornCacheHeldValidate(p);
}

/* Load the chunk that holds id (ids >= 1) into one of p->held.aChunk: *ppC.
** The lo = 0 chunk always exists once the table is format 2. */
static int cacheChunkLoad(cache_op *op, i64 id, cache_chunk **ppC){
  cache_table *p = op->pTab;
  cache_chunk *c;
  sqlite3_stmt *pStmt;
  int rc, i;
  for(i=0; i<CACHE_NCHUNK; i++){
    c = &p->held.aChunk[i];
    if( c->bValid && c->iGen==p->held.iGen && c->lo<=id && id<c->hi ){
      *ppC = c;
      return SQLITE_OK;
    }
  }
  c = &p->held.aChunk[p->held.iChunkNext];
  p->held.iChunkNext = (p->held.iChunkNext+1) % CACHE_NCHUNK;
  c->bValid = 0;
  rc = acornCacheStmt(op, CACHE_STMT_CHUNK_FIND, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    rc = acornCacheChunkDecode(c, sqlite3_column_int64(pStmt, 0),
                          sqlite3_column_blob(pStmt, 1),
                          sqlite3_column_bytes(pStmt, 1));
    /* (lo is the INTEGER PRIMARY KEY of a table acorn made: another type
    ** is a table made by someone else, whose order no loop may trust) */
    if( rc==SQLITE_OK && sqlite3_column_type(pStmt, 0)!=SQLITE_INTEGER ){
      rc = SQLITE_CORRUPT_VTAB;
    }
    sqlite3_reset(pStmt);
  }else{
    rc = sqlite3_reset(pStmt);
    c->lo = 0;          /* no chunk yet: row 0 is made at the first write */
    c->nRec = 0;
  }
  if( rc==SQLITE_OK ){
    rc = acornCacheStmt(op, CACHE_STMT_CHUNK_NEXT, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, c->lo);
    c->hi = sqlite3_step(pStmt)==SQLITE_ROW ? sqlite3_column_int64(pStmt, 0)
                                            : LLONG_MAX;
    rc = sqlite3_reset(pStmt);
    /* the next chunk's lo at or below an id this chunk was found for: not
    ** the order of an INTEGER PRIMARY KEY (a merge would never move on) */
    if( rc==SQLITE_OK && c->hi<=id ) rc = SQLITE_CORRUPT_VTAB;
  }
  if( rc==SQLITE_CORRUPT_VTAB ){
    return acornCacheOpFail(op, rc, "cache: the recency records of \"%w\" at"
                            " %lld are corrupt", p->zName, c->lo);
  }
  if( rc ) return acornCacheOpError(op, rc);
  c->bValid = 1;
  c->iGen = p->held.iGen;
  assert( id<c->hi && c->nRec>=0 );
  *ppC = c;
  return SQLITE_OK;
}

/* Bind row lo of <t>_rec to pStmt (CHUNK_WRITE or CHUNK_ADD), run it, and
** unbind the blob (aBuf is the caller's).  pMinUsed 0: no record (minused
** NULL). */
static int cacheChunkRun(cache_op *op, int eStmt, i64 lo, const i64 *pMinUsed,
                         const unsigned char *aBuf, int nByte){
  sqlite3_stmt *pStmt;
  int rc;
  assert( eStmt==CACHE_STMT_CHUNK_WRITE || eStmt==CACHE_STMT_CHUNK_ADD );
  assert( nByte>=0 && nByte%CACHE_REC_BYTES==0 );
  assert( (nByte==0)==(pMinUsed==0) );
  rc = acornCacheStmt(op, eStmt, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, lo);
  if( pMinUsed ) sqlite3_bind_int64(pStmt, 2, *pMinUsed);
  else sqlite3_bind_null(pStmt, 2);
  sqlite3_bind_blob(pStmt, 3, aBuf, nByte, SQLITE_STATIC);
  rc = acornCacheRun(op, pStmt);
  sqlite3_bind_null(pStmt, 3);
  return rc;
}

/* Write row lo of <t>_rec from aRec[0..n): the row updated, or made if
** there is none (a piece split off).  Not INSERT OR REPLACE: a statement
** that may delete a row before it inserts one opens a statement savepoint
** inside the transaction, and every savepoint that begins writes the
** table's config row (cacheSavepoint): once a chunk written. */
static int cacheChunkWriteRow(cache_op *op, i64 lo, const cache_rec *aRec,
                              int n, unsigned char *aBuf){
  sqlite3_stmt *pStmt;
  int rc, i, nByte;
  i64 minUsed = LLONG_MAX;
  assert( n>=0 && aBuf!=0 );
  if( n==0 && lo!=0 ){
    rc = acornCacheStmt(op, CACHE_STMT_CHUNK_DELETE, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, lo);
    return acornCacheRun(op, pStmt);
  }
  for(i=0; i<n; i++){
    if( aRec[i].used<minUsed ) minUsed = aRec[i].used;
  }
  nByte = cacheChunkEncode(aRec, n, aBuf);
  rc = cacheChunkRun(op, CACHE_STMT_CHUNK_WRITE, lo, n ? &minUsed : 0, aBuf,
                     nByte);
  if( rc==SQLITE_OK && sqlite3_changes(op->pTab->db)==0 ){
    rc = cacheChunkRun(op, CACHE_STMT_CHUNK_ADD, lo, n ? &minUsed : 0, aBuf,
                       nByte);
  }
  return rc;
}

/* Write chunk c back.  A chunk whose blob would pass nChunkMax bytes is
** split into rows of about half that; c then holds the first. */
static int cacheChunkSave(cache_op *op, cache_chunk *c){
  cache_table *p = op->pTab;
  unsigned char *aBuf;
  int rc = SQLITE_OK, i, j, nByte, nPiece, iRec;
  assert( c->bValid );
  /* records of entries evicted in order (used <= iLow) go now */
  for(i=j=0; i<c->nRec; i++){
    if( c->aRec[i].used>op->cfg.iLow ) c->aRec[j++] = c->aRec[i];
  }
  c->nRec = j;
  aBuf = sqlite3_malloc64((size_t)c->nRec*CACHE_REC_BYTES + 1);
  if( aBuf==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  nByte = c->nRec*CACHE_REC_BYTES;
  assert( p->nChunkMax>0 );
  nPiece = nByte<=p->nChunkMax ? 1 : 1 + 2*nByte/p->nChunkMax;
  for(i=0, iRec=0; rc==SQLITE_OK && i<nPiece; i++){
    int iEnd = (int)((i64)c->nRec*(i+1)/nPiece);
    assert( iEnd>=iRec && iEnd<=c->nRec );
    i64 lo = i==0 ? c->lo : c->aRec[iRec].id;
    rc = cacheChunkWriteRow(op, lo, c->aRec+iRec, iEnd-iRec, aBuf);
    iRec = iEnd;
  }
  sqlite3_free(aBuf);
  if( rc ){
    acornCacheChunkDropAll(p);
  }else if( nPiece>1 ){
    int nFirst = (int)((i64)c->nRec/nPiece);
    c->hi = c->aRec[nFirst].id;
    c->nRec = nFirst;
  }else if( c->nRec==0 && c->lo!=0 ){
    acornCacheChunkDropAll(p);  /* deleted: its ids go to the chunk before */
  }
  return rc;
}

/* The record of entry id in *pRec, if it has one (*pbFound). */
int acornCacheRecFind(cache_op *op, i64 id, cache_rec *pRec, int *pbFound){
  cache_chunk *c = 0;
  int lo = 0, hi, rc = cacheChunkLoad(op, id, &c);
  *pbFound = 0;
  if( rc ) return rc;
  hi = c->nRec;
  while( lo<hi ){
    int mid = (lo+hi)/2;
    if( c->aRec[mid].id<id ) lo = mid+1; else hi = mid;
  }
  assert( lo>=0 && lo<=c->nRec );
  if( lo<c->nRec && c->aRec[lo].id==id ){
    *pRec = c->aRec[lo];
    *pbFound = 1;
  }
  return SQLITE_OK;
}

/* Is id, read from shadow table <t>_zSuffix, an entry id the config row
** allows: 1..seq (every set takes seq+1)?  An id edited by hand is refused
** where it is read, so no loop or sum ever runs on one: SQLITE_CORRUPT_VTAB
** with a message naming it. */
static int cacheIdCheck(cache_op *op, const char *zSuffix, i64 id){
  if( id>=1 && id<=op->cfg.seq ) return SQLITE_OK;
  return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w_%s\""
                          " names entry %lld, an id the table never gave (they"
                          " go from 1 to its seq)", op->pTab->zDb,
                          op->pTab->zName, zSuffix, id);
}

/* The size of entry id as its row gave it: a format 4 row holds it, and a
** file from a stranger may hold any number there.  In 0..2^62, so that no
** sum or difference of sizes and counters overflows. */
static int cacheSizeCheck(cache_op *op, i64 id, i64 nSize){
  if( nSize>=0 && nSize<=CACHE_MAX_COUNTER ) return SQLITE_OK;
  return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w_data\""
                          " gives entry %lld a size of %lld bytes",
                          op->pTab->zDb, op->pTab->zName, id, nSize);
}

/* Merge records aNew[0..n) (sorted by id, distinct) into the chunks:
** a record for an id that has one replaces used and ms and adds hits. */
int acornCacheRecMerge(cache_op *op, const cache_rec *aNew, int n){
  cache_chunk *c = 0;
  cache_rec *aOut = 0;
  int nOutAlloc = 0, i = 0, rc = SQLITE_OK;
  assert( n>=0 && (aNew!=0 || n==0) );
  /* (the ids came from reads of <t>_data: each chunk load below must make
  ** progress, which an id outside 1..seq could stop) */
  for(i=0; rc==SQLITE_OK && i<n; i++) rc = cacheIdCheck(op, "data", aNew[i].id);
  i = 0;
  while( rc==SQLITE_OK && i<n ){
    int j, iOld = 0, nOut = 0;
    rc = cacheChunkLoad(op, aNew[i].id, &c);
    if( rc ) break;
    for(j=i; j<n && aNew[j].id<c->hi; j++){}
    if( c->nRec + (j-i) > nOutAlloc ){
      cache_rec *aNext;
      nOutAlloc = c->nRec + (j-i) + 64;
      aNext = sqlite3_realloc64(aOut, sizeof(cache_rec)*(size_t)nOutAlloc);
      if( aNext==0 ){ rc = acornCacheOpError(op, SQLITE_NOMEM); break; }
      aOut = aNext;
    }
    while( iOld<c->nRec || i<j ){
      if( i>=j || (iOld<c->nRec && c->aRec[iOld].id<aNew[i].id) ){
        aOut[nOut++] = c->aRec[iOld++];
      }else if( iOld<c->nRec && c->aRec[iOld].id==aNew[i].id ){
        aOut[nOut] = c->aRec[iOld++];
        aOut[nOut].used = aNew[i].used;
        aOut[nOut].ms = aNew[i].ms;
        aOut[nOut].hits += aNew[i].hits;
        nOut++;
        i++;
      }else{
        aOut[nOut++] = aNew[i++];
      }
    }
    assert( i==j && nOut<=nOutAlloc );
    rc = cacheChunkReserve(c, nOut);
    if( rc ){ acornCacheOpError(op, rc); break; }
    memcpy(c->aRec, aOut, sizeof(cache_rec)*(size_t)nOut);
    c->nRec = nOut;
    rc = cacheChunkSave(op, c);
  }
  sqlite3_free(aOut);
  return rc;
}

/* Drop the records of entries that are gone, from every chunk: deletes and
** sets of stored keys leave their entries' records behind (eviction meets
** them in time, but a table that never fills would keep them), so a write
** sweeps once op->cfg.nDead passes the entries (amortised: one existence
** check per entry gone). */
static int cacheSweep(cache_op *op){
  sqlite3_stmt *pNext, *pExists;
  i64 lo = -1;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK ){
    cache_chunk *c = 0;
    int i, j, bNext = 0;
    rc = acornCacheStmt(op, CACHE_STMT_CHUNK_NEXT, &pNext);
    if( rc ) break;
    sqlite3_bind_int64(pNext, 1, lo);
    if( sqlite3_step(pNext)==SQLITE_ROW ){
      lo = sqlite3_column_int64(pNext, 0);
      bNext = 1;
    }
    rc = acornCacheOpError(op, sqlite3_reset(pNext));
    if( rc || !bNext ) break;
    rc = cacheChunkLoad(op, lo, &c);
    if( rc==SQLITE_OK ) rc = acornCacheStmt(op, CACHE_STMT_EXISTS, &pExists);
    for(i=j=0; rc==SQLITE_OK && i<c->nRec; i++){
      int bLive = 0;
      if( c->aRec[i].used>op->cfg.iLow ){
        sqlite3_bind_int64(pExists, 1, c->aRec[i].id);
        bLive = sqlite3_step(pExists)==SQLITE_ROW;
        rc = acornCacheOpError(op, sqlite3_reset(pExists));
      }
      if( bLive ) c->aRec[j++] = c->aRec[i];
    }
    assert( rc!=SQLITE_OK || j<=c->nRec );
    if( rc==SQLITE_OK && j<c->nRec ){
      c->nRec = j;
      rc = cacheChunkSave(op, c);
    }
  }
  if( rc==SQLITE_OK ) op->cfg.nDead = 0;
  return rc;
}

/* ------------------------------------------------------- config, format */

/* Is the config row at pStmt (CACHE_STMT_CONFIG_READ's columns) out of
** range?  A row edited by hand: the config read refuses it with
** SQLITE_CORRUPT_VTAB, and integrity_check reports it in the same words.
** capacity 1..2^62; dttl 0..CACHE_MAX_TTL (a write turns it into ms);
** bytes, entries, seq, hits, misses, evictions, expired, head, low, dead,
** maxent, feed and fseq 0..2^62; all INTEGER (uid,
** policy and eseq are free, elow too and may be NULL; how head and low
** stand to seq, the options to their bounds and elow to the entries is
** integrity_check's to judge). */
static int cacheConfigBad(sqlite3_stmt *pStmt){
  int i;
  for(i=0; i<CACHE_CONFIG_NCOL; i++){
    i64 v;
    int e = sqlite3_column_type(pStmt, i);
    if( e!=SQLITE_INTEGER && (i!=18 || e!=SQLITE_NULL) ) return 1;
    if( i==8 || i==9 || i>=18 ) continue;    /* uid, policy, elow, eseq */
    v = sqlite3_column_int64(pStmt, i);
    if( v<(i==0) || v>(i==13 ? (i64)CACHE_MAX_TTL : CACHE_MAX_COUNTER) ){
      return 1;
    }
  }
  return 0;
}

/* The row at pStmt as integrity_check words it, for the message. */
static char *cacheConfigText(sqlite3_stmt *pStmt){
  static const char *const azName[CACHE_CONFIG_NCOL] = {
    "capacity", "bytes", "entries", "seq", "hits", "misses", "evictions",
    "expired", 0, 0, "head", "low", "dead", "default_ttl", "max_entries",
    "feed", "feed_seq", "tagged", "expiry_low", "expiry_seq"
  };
  char *z = 0;
  int i;
  for(i=0; i<CACHE_CONFIG_NCOL; i++){
    const char *zVal = (const char*)sqlite3_column_text(pStmt, i);
    if( azName[i]==0 ) continue;
    z = sqlite3_mprintf("%z%s%s %s", z, i ? ", " : "", azName[i],
                        zVal ? zVal : "NULL");
    if( z==0 ) break;
  }
  return z;
}

/* The counters a write may move, by name: the first of pCfg's outside
** 0..CACHE_MAX_COUNTER in *pzName and *pVal (1), or none (0). */
static int cacheConfigCounterBad(const cache_config *pCfg,
                                 const char **pzName, i64 *pVal){
  static const char *const azName[] = {
    "bytes", "entries", "seq", "hits", "misses", "evictions", "expired",
    "head", "low", "dead", "tagged", "feed_seq"
  };
  const i64 aVal[] = {
    pCfg->bytes, pCfg->entries, pCfg->seq, pCfg->hits, pCfg->misses,
    pCfg->evictions, pCfg->expired, pCfg->iHead, pCfg->iLow, pCfg->nDead,
    pCfg->nTagged, pCfg->iFeedSeq
  };
  int i;
  assert( sizeof(azName)/sizeof(azName[0])==sizeof(aVal)/sizeof(aVal[0]) );
  for(i=0; i<(int)(sizeof(aVal)/sizeof(aVal[0])); i++){
    if( aVal[i]<0 || aVal[i]>CACHE_MAX_COUNTER ){
      *pzName = azName[i];
      *pVal = aVal[i];
      return 1;
    }
  }
  return 0;
}

#ifndef NDEBUG
/* Is every counter of pCfg in the range a config row is read and written
** in (cacheConfigBad, cacheConfigCheck)?  For assert(). */
static int cacheConfigInRange(const cache_config *pCfg){
  const char *zName;
  i64 v;
  return !cacheConfigCounterBad(pCfg, &zName, &v)
      && pCfg->capacity>=1 && pCfg->capacity<=CACHE_MAX_CAPACITY
      && (pCfg->ePolicy==CACHE_POLICY_LRU || pCfg->ePolicy==CACHE_POLICY_FIFO);
}
#endif

/* The row at pStmt (CONFIG_READ's columns) into *pCfg. */
static void cacheConfigColumns(sqlite3_stmt *pStmt, cache_config *pCfg){
  pCfg->capacity = sqlite3_column_int64(pStmt, 0);
  pCfg->bytes = sqlite3_column_int64(pStmt, 1);
  pCfg->entries = sqlite3_column_int64(pStmt, 2);
  pCfg->seq = sqlite3_column_int64(pStmt, 3);
  pCfg->hits = sqlite3_column_int64(pStmt, 4);
  pCfg->misses = sqlite3_column_int64(pStmt, 5);
  pCfg->evictions = sqlite3_column_int64(pStmt, 6);
  pCfg->expired = sqlite3_column_int64(pStmt, 7);
  pCfg->uid = sqlite3_column_int64(pStmt, 8);
  pCfg->ePolicy = sqlite3_column_int(pStmt, 9)==CACHE_POLICY_FIFO
                ? CACHE_POLICY_FIFO : CACHE_POLICY_LRU;
  pCfg->iHead = sqlite3_column_int64(pStmt, 10);
  pCfg->iLow = sqlite3_column_int64(pStmt, 11);
  pCfg->nDead = sqlite3_column_int64(pStmt, 12);
  pCfg->nDefaultTtl = sqlite3_column_int64(pStmt, 13);
  pCfg->nMaxEntries = sqlite3_column_int64(pStmt, 14);
  pCfg->nFeed = sqlite3_column_int64(pStmt, 15);
  pCfg->iFeedSeq = sqlite3_column_int64(pStmt, 16);
  pCfg->nTagged = sqlite3_column_int64(pStmt, 17);
  if( sqlite3_column_int64(pStmt, 19)!=pCfg->seq ){
    pCfg->iExpLow = CACHE_EXP_UNKNOWN;    /* not kept since: find it again */
  }else if( sqlite3_column_type(pStmt, 18)==SQLITE_NULL ){
    pCfg->iExpLow = CACHE_EXP_NONE;
  }else{
    pCfg->iExpLow = sqlite3_column_int64(pStmt, 18);
  }
}

/* Read the config row as stored into op->cfg, in the table's format, and
** note the file's data version it was read at.  The row is checked as it
** is read: a counter out of range is SQLITE_CORRUPT_VTAB.  (The table
** layer's acornCacheConfigLoad decides whether to read it, and what a uid
** that is not the table's means.) */
int acornCacheConfigRead(cache_op *op){
  cache_table *p = op->pTab;
  cache_config *pCfg = &op->cfg;
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, p->iFormat==1 ? CACHE_STMT_CONFIG_READ1
                            : p->iFormat==2 ? CACHE_STMT_CONFIG_READ2
                            : CACHE_STMT_CONFIG_READ, &pStmt);
  if( rc ) return rc;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW && cacheConfigBad(pStmt) ){
    /* A row edited by hand: refused, never counted on (a counter at the
    ** int64 limit would overflow at the next set or use). */
    char *zRow = cacheConfigText(pStmt);
    sqlite3_reset(pStmt);
    rc = acornCacheOpFail(op, zRow ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM,
                     "%s: \"%w\".\"%w_config\": a counter is out of"
                     " range: %s", op->zWho ? op->zWho : "cache", p->zDb,
                     p->zName, zRow);
    sqlite3_free(zRow);
    return rc;
  }
  if( rc!=SQLITE_ROW ){
    sqlite3_reset(pStmt);
    if( rc!=SQLITE_DONE ) return acornCacheOpError(op, rc);
    return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "%s: the row of"
                       " \"%w\".\"%w_config\" is missing",
                       op->zWho ? op->zWho : "cache", p->zDb, p->zName);
  }
  cacheConfigColumns(pStmt, pCfg);
  assert( cacheConfigInRange(pCfg) );
  {
    unsigned v = 0;             /* (while the row's read transaction lasts) */
    if( sqlite3_file_control(p->db, p->zDb, SQLITE_FCNTL_DATA_VERSION, &v)
        ==SQLITE_OK && (i64)v!=p->seen.iNotedVersion ){
      cacheNoteVersions(p, v);
    }
  }
  return acornCacheOpError(op, sqlite3_reset(pStmt));
}

/* Is cfg a config row that may be written: every counter in the range
** the read refuses outside of (cacheConfigBad), the bounds held?  A row
** edited by hand with counters in range but wrong (bytes 0 where the
** entries hold 56) could make a write's own arithmetic leave one outside
** (bytes -56), and then every statement would fail: the write fails
** instead, naming what is inconsistent, and stores nothing. */
static int cacheConfigCheck(cache_op *op, const cache_config *pCfg){
  const char *zName = 0;
  i64 v = 0;
  if( cacheConfigCounterBad(pCfg, &zName, &v) ){
    return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w\":"
        " the counters do not match the entries (%s would be %lld):"
        " integrity_check says more", op->pTab->zDb, op->pTab->zName,
        zName, v);
  }
  if( pCfg->capacity<1 || pCfg->capacity>CACHE_MAX_CAPACITY ){
    return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w\":"
        " capacity would be %lld", op->pTab->zDb, op->pTab->zName,
        pCfg->capacity);
  }
  return SQLITE_OK;
}

/* Write cfg to the config row.  Bindings stay on a statement from one
** step to the next: only the values that differ from those it has bound
** (st.aCfgBound, while st.bCfgBound: until the statements are finalized) are
** bound again, a handful of 18 for a set, each bind a call that locks. */
static int cacheConfigWrite(cache_op *op, const cache_config *pCfg){
  cache_table *p = op->pTab;
  sqlite3_stmt *pStmt;
  i64 aVal[CACHE_CFG_NBIND];
  int i, bAll, rc;
  /* A trigger on the config table (possible outside defensive mode) makes
  ** the write a statement with a savepoint, whose xSavepoint would come
  ** back here while the statement runs: bCfgWriting stops that
  ** (acornCacheConfigSync) and this refuses any other way back. */
  if( p->held.bCfgWriting ){
    return acornCacheOpFail(op, SQLITE_ERROR, "cache: the config row of"
                            " \"%w\" is written while it is being written",
                            p->zName);
  }
  rc = cacheConfigCheck(op, pCfg);
  if( rc ) return rc;
  assert( cacheConfigInRange(pCfg) );
  rc = acornCacheStmt(op, CACHE_STMT_CONFIG_WRITE, &pStmt);
  if( rc ) return rc;
  aVal[0] = pCfg->capacity;     aVal[1] = pCfg->bytes;
  aVal[2] = pCfg->entries;      aVal[3] = pCfg->seq;
  aVal[4] = pCfg->hits;         aVal[5] = pCfg->misses;
  aVal[6] = pCfg->evictions;    aVal[7] = pCfg->expired;
  aVal[8] = pCfg->iHead;        aVal[9] = pCfg->iLow;
  aVal[10] = pCfg->nDead;       aVal[11] = pCfg->nDefaultTtl;
  aVal[12] = pCfg->nMaxEntries; aVal[13] = pCfg->nFeed;
  aVal[14] = pCfg->iFeedSeq;    aVal[15] = pCfg->nTagged;
  /* elow: LLONG_MAX binds NULL (no expiry; or not known, with eseq -1) */
  aVal[16] = pCfg->iExpLow==CACHE_EXP_UNKNOWN ? LLONG_MAX : pCfg->iExpLow;
  aVal[17] = pCfg->iExpLow==CACHE_EXP_UNKNOWN ? -1 : pCfg->seq;
  bAll = !p->st.bCfgBound;
  for(i=0; i<CACHE_CFG_NBIND; i++){
    if( !bAll && aVal[i]==p->st.aCfgBound[i] ) continue;
    if( i==16 && aVal[i]==LLONG_MAX ) sqlite3_bind_null(pStmt, i+1);
    else sqlite3_bind_int64(pStmt, i+1, aVal[i]);
    p->st.aCfgBound[i] = aVal[i];
  }
  p->st.bCfgBound = 1;
  p->held.bCfgWriting = 1;
  rc = acornCacheRun(op, pStmt);
  p->held.bCfgWriting = 0;
  return rc;
}

/* The end of a write: op->cfg is the config row now; inside a transaction
** it is written at xSync or as a savepoint begins (acornCacheConfigSync). */
int acornCacheConfigSave(cache_op *op){
  cache_table *p = op->pTab;
  int rc;
  p->held.cfg = op->cfg;
  if( p->txn.bOpen ){
    p->held.eCfg = CACHE_CFG_DIRTY;
    return SQLITE_OK;
  }
  rc = cacheConfigWrite(op, &op->cfg);
  p->held.eCfg = rc ? CACHE_CFG_NONE : CACHE_CFG_CLEAN;
  return rc;
}

/* Write the held copy of the config row, if it is newer.  Idempotent. */
int acornCacheConfigSync(cache_op *op){
  cache_table *p = op->pTab;
  int rc = SQLITE_OK;
  if( p->held.eCfg==CACHE_CFG_DIRTY && !p->held.bCfgWriting ){
    rc = cacheConfigWrite(op, &p->held.cfg);
    if( rc==SQLITE_OK ) p->held.eCfg = CACHE_CFG_CLEAN;
  }
  return rc;
}

/* Does the schema hold an object the cache did not make that hangs on one
** of the shadow tables it writes: a trigger (it would run inside the
** cache's own writes, whatever trusted_schema and DEFENSIVE say: SQLite
** 3.52 refuses triggers on shadow tables, 3.38-3.51 do not), or an index
** (the cache's writes would update it; one can make them fail)?  A
** database file may come from a stranger.  *pzWhat describes the first
** one found (0 if none); SQLITE_OK unless the query failed.  Only the
** tables the table's format makes its own are looked at (<t>_tag and
** <t>_feed next to an older table are someone else's, <t>_lru is the
** cache's only in format 1), and not the temp schema: no file brings it,
** every object in it is the connection's own, and SQLite itself puts
** some there (a VACUUM while a temp table shadows a main table copies
** main's indexes on that name onto the temp table). */
int acornCacheForeignFind(cache_table *p, char **pzWhat){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc;
  *pzWhat = 0;
  if( sqlite3_stricmp(p->zDb, "temp")==0 ) return SQLITE_OK;
  zSql = sqlite3_mprintf(
      "SELECT type, name, tbl_name FROM \"%w\".sqlite_schema"
      " WHERE type IN ('trigger', 'index')"
      " AND lower(tbl_name) IN (lower('%q_config'), lower('%q_data'),"
      " lower('%q_expiry'), lower('%q_rec'), lower('%q_tag'), lower('%q_feed'),"
      " lower('%q_lru'))"
      " AND name NOT LIKE 'sqlite^_autoindex^_%%' ESCAPE '^'"
      " AND lower(name) NOT IN ('acorn_cache_%016llx_minused',"
      " 'acorn_cache_%016llx_tag') LIMIT 1",
      p->zDb, p->zName, p->zName, p->zName, p->zName,
      p->iFormat>=3 ? p->zName : "", p->iFormat>=3 ? p->zName : "",
      p->iFormat==1 ? p->zName : "", p->uid, p->uid);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int bTrigger = sqlite3_column_text(pStmt, 0)[0]=='t';
    *pzWhat = sqlite3_mprintf("%s \"%w\" is on its shadow table \"%w\": acorn"
        " did not make it, and %s; DROP %s \"%w\".\"%w\" to use the table",
        bTrigger ? "trigger" : "index", sqlite3_column_text(pStmt, 1),
        sqlite3_column_text(pStmt, 2), bTrigger
        ? "it would run inside the cache's writes"
        : "the cache's writes would update it",
        bTrigger ? "TRIGGER" : "INDEX", p->zDb, sqlite3_column_text(pStmt, 1));
    if( *pzWhat==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pStmt);
  }else{
    sqlite3_finalize(pStmt);
  }
  if( rc ){
    sqlite3_free(*pzWhat);
    *pzWhat = 0;
  }
  return rc;
}

/* No write while such an object is there: asked again only when the
** schema may have changed (its version, noted as the file's data version
** changes: cacheNoteVersions). */
int acornCacheForeignCheck(cache_op *op){
  cache_table *p = op->pTab;
  char *zWhat = 0;
  int rc;
  if( p->seen.iSchemaVersion>=0 && p->seen.iSchemaVersion==p->seen.iForeignOk ){
    return SQLITE_OK;
  }
  rc = acornCacheForeignFind(p, &zWhat);
  if( rc ) return acornCacheOpError(op, rc);
  if( zWhat ){
    rc = acornCacheOpFail(op, SQLITE_ERROR, "cache: \"%w\".\"%w\" is not"
                          " written while %s", p->zDb, p->zName, zWhat);
    sqlite3_free(zWhat);
    return rc;
  }
  p->seen.iForeignOk = p->seen.iSchemaVersion;
  return SQLITE_OK;
}

/* ------------------------------------------------------- writing recency */

/* Write the buffered uses to the records, oldest first, and the counters
** to op->cfg, inside the caller's transaction.  The uses themselves stay:
** acornCacheTxnWritten() retires them once the caller's write succeeded. */
int acornCacheFlushWrite(cache_op *op){
  cache_uses *u = &op->pTab->uses;
  cache_rec *aRec;
  int rc, i;
  assert( u->nUse>=0 && u->nMiss>=0 && u->nHit>=0 && u->nHitLoose>=0 );
  op->cfg.misses += u->nMiss;
  op->cfg.hits += u->nHitLoose;
  if( u->nUse==0 ) return SQLITE_OK;
  rc = acornCacheUsesNumber(u, op->cfg.seq);
  if( rc ) return acornCacheOpError(op, rc);
  op->cfg.seq += u->nUse;
  aRec = sqlite3_malloc64(sizeof(cache_rec)*(size_t)u->nUse);
  if( aRec==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  for(i=0; i<u->nUse; i++){
    aRec[i].id = u->aUse[i].id;
    aRec[i].used = u->aUse[i].iUsed;
    aRec[i].ms = u->aUse[i].ms;
    aRec[i].hits = u->aUse[i].nHit;
  }
  rc = acornCacheRecMerge(op, aRec, u->nUse);
  sqlite3_free(aRec);
  op->cfg.hits += u->nHit;
  return rc;
}

/* ------------------------------------------------------------------ tags */

/* Give entry id (just set) the tag pTag (TEXT, checked by the caller). */
int acornCacheTagAdd(cache_op *op, i64 id, sqlite3_value *pTag){
  sqlite3_stmt *pStmt;
  int rc;
  assert( pTag!=0 && sqlite3_value_type(pTag)==SQLITE_TEXT );
  assert( op->pTab->iFormat>=3 );
  rc = acornCacheStmt(op, CACHE_STMT_TAG_ADD, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  sqlite3_bind_value(pStmt, 2, pTag);
  rc = acornCacheRun(op, pStmt);
  if( rc==SQLITE_OK ) op->cfg.nTagged++;
  return rc;
}

/* Entry id goes: its tag, if it has one, with it. */
int acornCacheTagDelete(cache_op *op, i64 id){
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, CACHE_STMT_TAG_DEL, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = acornCacheRun(op, pStmt);
  if( rc==SQLITE_OK && sqlite3_changes(op->pTab->db)>0 ) op->cfg.nTagged--;
  return rc;
}

/* The tag of entry id, a copy in *ppTag (0 if it has none): the caller
** frees it with sqlite3_value_free(). */
int acornCacheTagGet(cache_op *op, i64 id, sqlite3_value **ppTag){
  sqlite3_stmt *pStmt;
  int rc;
  *ppTag = 0;
  if( op->cfg.nTagged==0 ) return SQLITE_OK;
  rc = acornCacheStmt(op, CACHE_STMT_TAG_GET, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *ppTag = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
    if( *ppTag==0 ){
      sqlite3_reset(pStmt);
      return acornCacheOpError(op, SQLITE_NOMEM);
    }
  }
  return acornCacheOpError(op, sqlite3_reset(pStmt));
}

/* ------------------------------------------------------------------ feed */

/* Drop the feed's rows beyond the newest op->cfg.nFeed. */
int acornCacheFeedTrim(cache_op *op){
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, CACHE_STMT_FEED_TRIM, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, op->cfg.iFeedSeq - op->cfg.nFeed);
  return acornCacheRun(op, pStmt);
}

/* Entry id (nSize bytes) is about to go for reason eWhy (a
** CACHE_GONE_* other than ASKED): a row of the feed, which keeps the
** newest op->cfg.nFeed (> 0). */
int acornCacheFeedAdd(cache_op *op, i64 id, i64 nSize, int eWhy){
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, CACHE_STMT_FEED_ADD, &pStmt);
  assert( op->cfg.nFeed>0 && eWhy!=CACHE_GONE_ASKED );
  if( rc ) return rc;
  if( op->cfg.iFeedSeq>=CACHE_MAX_COUNTER ){
    return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: the feed of"
                            " \"%w\" has run out of numbers", op->pTab->zName);
  }
  sqlite3_bind_int64(pStmt, 1, op->cfg.iFeedSeq+1);
  sqlite3_bind_int64(pStmt, 2, nSize);
  sqlite3_bind_int(pStmt, 3, eWhy);
  sqlite3_bind_int64(pStmt, 4, op->now);
  sqlite3_bind_int64(pStmt, 5, id);
  rc = acornCacheRun(op, pStmt);
  if( rc ) return rc;
  op->cfg.iFeedSeq++;
  return acornCacheFeedTrim(op);
}

/* ------------------------------------------------------- entry writes */

/* What a write needs of a stored entry to delete it.  FIND and HEAD
** return these columns; ENTRY all but the id. */
typedef struct cache_entry cache_entry;
struct cache_entry {
  i64 id;
  int bExpires;         /* expires is not NULL */
  i64 iExpires;
  i64 nSize;            /* bytes of key and value */
};

/* Step pStmt (FIND, HEAD or ENTRY, bound), read its row into *pE if there
** is one (*pbFound), and reset it. */
static inline int cacheEntryStep(cache_op *op, sqlite3_stmt *pStmt, cache_entry *pE,
                          int *pbFound){
  int rc;
  *pbFound = sqlite3_step(pStmt)==SQLITE_ROW;
  if( *pbFound ){
    pE->id = sqlite3_column_int64(pStmt, 0);
    pE->bExpires = sqlite3_column_type(pStmt, 1)!=SQLITE_NULL;
    pE->iExpires = sqlite3_column_int64(pStmt, 1);
    pE->nSize = sqlite3_column_int64(pStmt, 2);
  }
  rc = acornCacheOpError(op, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK && *pbFound ) rc = cacheIdCheck(op, "data", pE->id);
  if( rc==SQLITE_OK && *pbFound ) rc = cacheSizeCheck(op, pE->id, pE->nSize);
  return rc;
}

/* Delete entry *pE.  Its record, if it has one, stays until eviction meets
** it or a sweep finds it dead (bNoRec: it has none; no sweep needs to
** look). */
static int cacheDeleteKnown(cache_op *op, const cache_entry *pE, int bNoRec,
                            int eWhy){
  sqlite3_stmt *pStmt;
  int rc = SQLITE_OK;
  assert( eWhy>=CACHE_GONE_ASKED && eWhy<=CACHE_GONE_EXPIRED );
  assert( pE->nSize>=0 );
  if( eWhy!=CACHE_GONE_ASKED && op->cfg.nFeed>0 ){
    rc = acornCacheFeedAdd(op, pE->id, pE->nSize, eWhy);
  }
  if( rc==SQLITE_OK && op->cfg.nTagged>0 ) rc = acornCacheTagDelete(op, pE->id);
  if( rc==SQLITE_OK ) rc = acornCacheStmt(op, CACHE_STMT_DELETE, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, pE->id);
  rc = acornCacheRun(op, pStmt);
  if( rc==SQLITE_OK && pE->bExpires ){
    rc = acornCacheStmt(op, CACHE_STMT_EXPIRY_DEL, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, pE->iExpires);
      sqlite3_bind_int64(pStmt, 2, pE->id);
      rc = acornCacheRun(op, pStmt);
    }
  }
  if( !bNoRec && op->cfg.ePolicy==CACHE_POLICY_LRU ) op->cfg.nDead++;
  op->cfg.bytes -= pE->nSize;
  op->cfg.entries--;
  return rc;
}

/* Read entry id into *pE if it exists (*pbFound). */
static int cacheEntryRead(cache_op *op, i64 id, cache_entry *pE, int *pbFound){
  sqlite3_stmt *pStmt;
  int rc = cacheStmtSized(op, CACHE_STMT_ENTRY, &pStmt);
  *pbFound = 0;
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  *pbFound = sqlite3_step(pStmt)==SQLITE_ROW;
  if( *pbFound ){          /* (the id is known: not read again) */
    pE->id = id;
    pE->bExpires = sqlite3_column_type(pStmt, 0)!=SQLITE_NULL;
    pE->iExpires = sqlite3_column_int64(pStmt, 0);
    pE->nSize = sqlite3_column_int64(pStmt, 1);
  }
  rc = acornCacheOpError(op, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK && *pbFound ) rc = cacheSizeCheck(op, id, pE->nSize);
  return rc;
}

/* Delete entry id if it exists (*pbFound), for reason eWhy. */
static int cacheDeleteEntryWhy(cache_op *op, i64 id, int *pbFound, int eWhy){
  cache_entry e;
  int rc = cacheEntryRead(op, id, &e, pbFound);
  if( rc || !*pbFound ) return rc;
  return cacheDeleteKnown(op, &e, 0, eWhy);
}

/* Delete entry id if it exists (*pbFound): the application asks. */
int acornCacheDeleteEntry(cache_op *op, i64 id, int *pbFound){
  return cacheDeleteEntryWhy(op, id, pbFound, CACHE_GONE_ASKED);
}

/* Reclaim every entry that expired at or before op->now, in order of
** expiry; the least expiry left becomes the bound iExpLow (cacheInt.h).  No
** look at all while now is below the bound. */
int acornCacheReclaimExpired(cache_op *op){
  sqlite3_stmt *pStmt;
  int rc = SQLITE_OK;
  while( op->now>=op->cfg.iExpLow ){
    i64 id, iExpires;
    int bFound = 0;
    rc = acornCacheStmt(op, CACHE_STMT_EXPIRY_FIRST, &pStmt);
    if( rc ) break;
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      rc = acornCacheOpError(op, sqlite3_reset(pStmt));
      if( rc==SQLITE_OK ) op->cfg.iExpLow = CACHE_EXP_NONE;
      break;
    }
    iExpires = sqlite3_column_int64(pStmt, 0);
    id = sqlite3_column_int64(pStmt, 1);
    rc = acornCacheOpError(op, sqlite3_reset(pStmt));
    if( rc==SQLITE_OK ) rc = cacheIdCheck(op, "expiry", id);
    if( rc ) break;
    if( iExpires>op->now ){
      op->cfg.iExpLow = iExpires;   /* the least: none has expired */
      break;
    }
    rc = cacheDeleteEntryWhy(op, id, &bFound, CACHE_GONE_EXPIRED);
    if( rc ) break;
    if( !bFound ){
      return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w_expiry\""
                         " names entry %lld, which does not exist",
                         op->pTab->zDb, op->pTab->zName, id);
    }
    op->cfg.expired++;
  }
  assert( rc!=SQLITE_OK || op->now<op->cfg.iExpLow );
  return rc;
}

/* The chunk of <t>_rec with the least live recency (used > iLow), and that
** record: *ppC 0 if no chunk has one. */
static int cacheOldestRecord(cache_op *op, cache_chunk **ppC, cache_rec *pRec){
  sqlite3_stmt *pStmt;
  i64 lo = -1;
  int rc = acornCacheStmt(op, CACHE_STMT_CHUNK_OLDEST, &pStmt);
  *ppC = 0;
  if( rc ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) lo = sqlite3_column_int64(pStmt, 0);
  rc = acornCacheOpError(op, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK && lo>=0 ){
    cache_chunk *c = 0;
    int i, bFound = 0;
    rc = cacheChunkLoad(op, lo, &c);
    for(i=0; rc==SQLITE_OK && i<c->nRec; i++){
      const cache_rec *r = &c->aRec[i];
      if( r->used>op->cfg.iLow && (!bFound || r->used<pRec->used) ){
        *pRec = *r;
        bFound = 1;
      }
    }
    if( rc==SQLITE_OK && !bFound ){
      return acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: chunk %lld of"
                         " \"%w\" has a minused but no live record", lo,
                         op->pTab->zName);
    }
    *ppC = c;
  }
  return rc;
}

/* Eviction has reached record r of chunk c (its entry evicted, or found
** gone): the watermark iLow moves to it, and c's minused to the next live
** record, or c goes if none is left (but chunk 0). */
static int cacheOldestPassed(cache_op *op, cache_chunk *c, i64 used){
  sqlite3_stmt *pStmt;
  i64 minUsed = LLONG_MAX;
  int i, rc;
  op->cfg.iLow = used;
  for(i=0; i<c->nRec; i++){
    if( c->aRec[i].used>used && c->aRec[i].used<minUsed ){
      minUsed = c->aRec[i].used;
    }
  }
  if( minUsed==LLONG_MAX && c->lo!=0 ){
    rc = acornCacheStmt(op, CACHE_STMT_CHUNK_DELETE, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, c->lo);
      rc = acornCacheRun(op, pStmt);
    }
    acornCacheChunkDropAll(op->pTab);       /* its ids go to the chunk before */
    return rc;
  }
  rc = acornCacheStmt(op, CACHE_STMT_CHUNK_SETMIN, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, c->lo);
  if( minUsed==LLONG_MAX ) sqlite3_bind_null(pStmt, 2);
  else sqlite3_bind_int64(pStmt, 2, minUsed);
  return acornCacheRun(op, pStmt);
}

/* Evict one entry: the one of least recency (lru) or the oldest (fifo).
** *pbNone if there is none.  eWhy: the bound passed. */
static int cacheEvictOne(cache_op *op, int *pbNone, int eWhy){
  int bLru = op->cfg.ePolicy==CACHE_POLICY_LRU;
  sqlite3_stmt *pStmt;
  int rc;
  for(;;){
    cache_entry eA, eB;
    int bA = 0, bFound = 0;
    cache_rec rB = {0, 0, 0, 0};
    cache_chunk *cB = 0;
    /* A: the first entry at or after head never used since its set */
    for(;;){
      cache_rec r;
      int bRec = 0;
      rc = cacheStmtSized(op, CACHE_STMT_HEAD, &pStmt);
      if( rc ) return rc;
      sqlite3_bind_int64(pStmt, 1, op->cfg.iHead);
      rc = cacheEntryStep(op, pStmt, &eA, &bA);
      if( rc || !bA || !bLru ) break;
      rc = acornCacheRecFind(op, eA.id, &r, &bRec);
      if( rc || !bRec ) break;
      op->cfg.iHead = eA.id + 1;   /* used since its set: its record counts */
      bA = 0;
    }
    if( rc ) return rc;
    /* B: the entry with the least recency among those with a record */
    if( bLru ){
      rc = cacheOldestRecord(op, &cB, &rB);
      if( rc ) return rc;
    }
    if( !bA && cB==0 ){
      *pbNone = 1;
      return SQLITE_OK;
    }
    if( bA && (cB==0 || eA.id<rB.used) ){
      op->cfg.iHead = eA.id + 1;
      return cacheDeleteKnown(op, &eA, 1, eWhy);
    }
    /* B, unless its entry is gone (deleted or set again since: its
    ** record was left for eviction to meet) */
    rc = cacheEntryRead(op, rB.id, &eB, &bFound);
    if( rc==SQLITE_OK ) rc = cacheOldestPassed(op, cB, rB.used);
    if( rc==SQLITE_OK && bFound ) return cacheDeleteKnown(op, &eB, 1, eWhy);
    if( rc ) return rc;
    if( op->cfg.nDead>0 ) op->cfg.nDead--;
  }
}

/* Is the table over a bound: more bytes than the capacity, or more
** entries than max_entries? */
static int cacheOverBound(const cache_config *pCfg){
  return pCfg->bytes > pCfg->capacity
      || (pCfg->nMaxEntries>0 && pCfg->entries > pCfg->nMaxEntries);
}

/* Evict until the bounds hold: bytes <= capacity and entries <=
** max_entries. */
int acornCacheEvict(cache_op *op){
  int bNone = 0, rc = SQLITE_OK;
  while( rc==SQLITE_OK && !bNone && cacheOverBound(&op->cfg)
      && op->cfg.entries>0 ){
    rc = cacheEvictOne(op, &bNone, op->cfg.bytes > op->cfg.capacity
                                   ? CACHE_GONE_CAPACITY : CACHE_GONE_ENTRIES);
    if( rc==SQLITE_OK && !bNone ) op->cfg.evictions++;
  }
  if( rc==SQLITE_OK && cacheOverBound(&op->cfg) ){
    /* nothing left to evict, and still over: the counters (or the
    ** recency records eviction follows) are not the table's */
    rc = acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w\":"
        " the counters do not match the entries (bytes %lld, entries %lld"
        " with no entry left to evict under capacity %lld, max_entries"
        " %lld): integrity_check says more", op->pTab->zDb, op->pTab->zName,
        op->cfg.bytes, op->cfg.entries, op->cfg.capacity,
        op->cfg.nMaxEntries);
  }
  assert( rc!=SQLITE_OK || !cacheOverBound(&op->cfg) );
  return rc;
}

/* Bind a set's key or value (checked: a key TEXT, BLOB or INTEGER; a value
** TEXT, BLOB, INTEGER or REAL: bValue) for one step,
** with no copy where it can be: a TEXT (in a UTF-8 database) or BLOB from
** the value's own bytes, which outlive the step.  The caller binds the
** parameter to NULL once the statement is reset (cacheUnbind), so that no
** binding is left pointing at them. */
static void cacheBindNoCopy(sqlite3_stmt *pStmt, int i, sqlite3_value *pVal,
                            int bUtf16, int bValue){
  static const char aEmpty[1] = {0};
  int e = sqlite3_value_type(pVal);
  if( e==SQLITE_BLOB ){
    const void *a = sqlite3_value_blob(pVal);
    int n = sqlite3_value_bytes(pVal);
    if( a || n==0 ){
      sqlite3_bind_blob(pStmt, i, n ? a : aEmpty, n, SQLITE_STATIC);
      return;
    }
  }else if( e==SQLITE_TEXT && !bUtf16 ){
    const unsigned char *z = sqlite3_value_text(pVal);
    if( z ){
      sqlite3_bind_text(pStmt, i, (const char*)z, sqlite3_value_bytes(pVal),
                        SQLITE_STATIC);
      return;
    }
  }
  if( bValue ){
    sqlite3_bind_value(pStmt, i, pVal);   /* a REAL value stays REAL */
  }else{
    acornCacheBindKey(pStmt, i, pVal);    /* a whole REAL key: INTEGER */
  }
}

/* Insert the row of entry id, unless an entry has the key: *pbDone 0 then,
** and nothing is written (INSERT ... ON CONFLICT(key) DO NOTHING). */
static int cacheDataInsert(cache_op *op, i64 id, const cache_new *pNew,
                           int *pbDone){
  sqlite3_stmt *pStmt;
  int bUtf16 = op->pTab->bUtf16;
  int rc = cacheStmtSized(op, CACHE_STMT_INSERT, &pStmt);
  *pbDone = 0;
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  cacheBindNoCopy(pStmt, 2, pNew->pKey, bUtf16, 0);
  sqlite3_bind_int64(pStmt, 3, pNew->iCreated);
  if( pNew->iExpires!=CACHE_EXP_NONE ){
    sqlite3_bind_int64(pStmt, 4, pNew->iExpires);
  }else{
    sqlite3_bind_null(pStmt, 4);
  }
  cacheBindNoCopy(pStmt, 5, pNew->pValue, bUtf16, 1);
  if( op->pTab->iFormat>=4 ) sqlite3_bind_int64(pStmt, 6, pNew->nSize);
  rc = acornCacheRun(op, pStmt);
  /* (the statement's own count: it is the last to finish on db) */
  if( rc==SQLITE_OK ) *pbDone = sqlite3_changes(op->pTab->db)>0;
  sqlite3_bind_null(pStmt, 2);        /* nothing left bound to the value's */
  sqlite3_bind_null(pStmt, 5);        /* bytes, nor keeping them alive */
  return rc;
}

/* Delete the stored entry that has the key, if there is one (*pbFound): a
** set of the key replaces it. */
static int cacheDeleteKey(cache_op *op, sqlite3_value *pKey, int *pbFound){
  sqlite3_stmt *pStmt;
  cache_entry eOld;
  int rc = cacheStmtSized(op, CACHE_STMT_FIND, &pStmt);
  *pbFound = 0;
  if( rc ) return rc;
  acornCacheBindKey(pStmt, 1, pKey);
  rc = cacheEntryStep(op, pStmt, &eOld, pbFound);
  if( rc==SQLITE_OK && *pbFound ){
    rc = cacheDeleteKnown(op, &eOld, 0, CACHE_GONE_ASKED);
  }
  return rc;
}

/* The entry row of a set: the key's stored entry, if any, deleted, and the
** new row inserted.  Either the key is looked up first, or the row is
** inserted first and the key looked up only if the insert finds it taken
** (and writes nothing): a lookup costs about what the insert's own check
** of the key costs, and a set that follows a get that missed (a cache read
** through) would pay it for nothing, while a set of a stored key would
** pay for a failed insert.  The table guesses from its last set
** (bSetLookFirst: that one replaced an entry). */
static int cacheSetRow(cache_op *op, i64 id, const cache_new *pNew){
  cache_table *p = op->pTab;
  int bLook = p->bSetLookFirst, bFound = 0, bDone = 0, rc = SQLITE_OK;
  if( bLook ) rc = cacheDeleteKey(op, pNew->pKey, &bFound);
  if( rc==SQLITE_OK ) rc = cacheDataInsert(op, id, pNew, &bDone);
  if( rc==SQLITE_OK && !bDone && !bLook ){
    rc = cacheDeleteKey(op, pNew->pKey, &bFound);
    if( rc==SQLITE_OK && bFound ) rc = cacheDataInsert(op, id, pNew, &bDone);
  }
  if( rc==SQLITE_OK && !bDone ){
    rc = acornCacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w_data\""
                          " refused key as taken, but no entry has it",
                          p->zDb, p->zName);
  }
  p->bSetLookFirst = bFound;
  return rc;
}

/* Store key -> value as a new entry, the most recent one, replacing any
** entry that has the key.  Expired entries are reclaimed first (an expired
** entry of the key among them: it goes as expired);
** entries are evicted after, until the capacity holds: the entry just set
** is the most recent, so it is never among them.  pNew->nHits > 0 (an
** UPDATE keeps the hits) gives it a record.  The new id in *pId. */
int acornCacheSet(cache_op *op, const cache_new *pNew, i64 *pId){
  sqlite3_stmt *pStmt;
  i64 id = op->cfg.seq + 1;
  int rc = acornCacheReclaimExpired(op);
  assert( pNew->nSize>=0 && pNew->nHits>=0 );
  assert( pNew->pKey!=0 && pNew->pValue!=0 );
  assert( op->pTab->iFormat>=3 );
  if( rc==SQLITE_OK ) rc = cacheSetRow(op, id, pNew);
  if( rc ) return rc;
  op->cfg.seq = id;
  if( pNew->iExpires!=CACHE_EXP_NONE ){
    if( pNew->iExpires<op->cfg.iExpLow ) op->cfg.iExpLow = pNew->iExpires;
    rc = acornCacheStmt(op, CACHE_STMT_EXPIRY_ADD, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, pNew->iExpires);
      sqlite3_bind_int64(pStmt, 2, id);
      rc = acornCacheRun(op, pStmt);
    }
  }
  if( rc==SQLITE_OK && pNew->pTag
   && sqlite3_value_type(pNew->pTag)!=SQLITE_NULL ){
    rc = acornCacheTagAdd(op, id, pNew->pTag);
  }
  if( rc==SQLITE_OK && pNew->nHits>0 && op->cfg.ePolicy==CACHE_POLICY_LRU ){
    cache_rec r;
    r.id = id;
    r.used = id;
    r.ms = op->now;
    r.hits = pNew->nHits;
    rc = acornCacheRecMerge(op, &r, 1);
  }
  op->cfg.bytes += pNew->nSize;
  op->cfg.entries++;
  if( rc==SQLITE_OK ) rc = acornCacheEvict(op);
  *pId = id;
  return rc;
}

/* Set entry *pE's expires in place (CACHE_EXP_NONE: NULL), and its row of
** <t>_expiry with it, if it changes.  (pE is read from the file, which may
** hold any expires: whether it has one is its own flag.) */
static int cacheExpiresSet(cache_op *op, const cache_entry *pE, i64 iExpires){
  sqlite3_stmt *pStmt;
  int bExpires = iExpires!=CACHE_EXP_NONE;
  int rc = SQLITE_OK;
  if( pE->bExpires==bExpires && (!bExpires || pE->iExpires==iExpires) ){
    return SQLITE_OK;
  }
  if( pE->bExpires ){
    rc = acornCacheStmt(op, CACHE_STMT_EXPIRY_DEL, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, pE->iExpires);
    sqlite3_bind_int64(pStmt, 2, pE->id);
    rc = acornCacheRun(op, pStmt);
  }
  if( rc==SQLITE_OK ) rc = acornCacheStmt(op, CACHE_STMT_EXPIRES_SET, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, pE->id);
  if( bExpires ) sqlite3_bind_int64(pStmt, 2, iExpires);
  else sqlite3_bind_null(pStmt, 2);
  rc = acornCacheRun(op, pStmt);
  if( rc==SQLITE_OK && bExpires ){
    rc = acornCacheStmt(op, CACHE_STMT_EXPIRY_ADD, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, iExpires);
    sqlite3_bind_int64(pStmt, 2, pE->id);
    rc = acornCacheRun(op, pStmt);
    if( iExpires<op->cfg.iExpLow ) op->cfg.iExpLow = iExpires;
  }
  return rc;
}

/* Renew entry id in place (an UPDATE that sets only expires, ttl or tag):
** its expires and its tag as pRenew says, and under lru its recency, as a
** use that counts no hit: it becomes the most recent entry.  Its id, key,
** value, size, created and hits stay, so no byte or entry is counted
** anew, and the value is not written: SQLite rewrites the row where its
** length stays (an expires renewed) without writing the value's overflow
** pages, where a new entry writes every page of the value.  Under fifo the
** entry keeps its place (its set).  *pbFound 0 if the entry is gone. */
int acornCacheRenew(cache_op *op, i64 id, const cache_renewal *pRenew,
                    int *pbFound){
  cache_entry e;
  int rc = cacheEntryRead(op, id, &e, pbFound);
  if( rc || !*pbFound ) return rc;
  if( pRenew->bSetExpires ) rc = cacheExpiresSet(op, &e, pRenew->iExpires);
  if( rc==SQLITE_OK && pRenew->bSetTag ){
    sqlite3_value *pTag = pRenew->pTag;
    if( op->cfg.nTagged>0 ) rc = acornCacheTagDelete(op, id);
    if( rc==SQLITE_OK && pTag && sqlite3_value_type(pTag)!=SQLITE_NULL ){
      rc = acornCacheTagAdd(op, id, pTag);
    }
  }
  if( rc==SQLITE_OK && op->cfg.ePolicy==CACHE_POLICY_LRU ){
    cache_rec r;
    r.id = id;
    r.used = ++op->cfg.seq;
    r.ms = op->now;
    r.hits = 0;
    rc = acornCacheRecMerge(op, &r, 1);
  }
  return rc;
}

/* The stored recency of entry id: *pbFound, *pMs, *pHits.  An error
** message in *pzErr. */
int acornCacheStoredUse(cache_table *p, i64 id, int *pbFound, i64 *pMs,
                   i64 *pHits, char **pzErr){
  cache_op op;
  int rc;
  acornCacheOpInit(&op, p, 0);
  *pbFound = 0;
  if( p->iFormat==1 ){
    sqlite3_stmt *pStmt;
    rc = acornCacheStmt(&op, CACHE_STMT_LRU1_READ, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      if( sqlite3_step(pStmt)==SQLITE_ROW ){
        *pbFound = 1;
        *pMs = sqlite3_column_int64(pStmt, 0);
        *pHits = sqlite3_column_int64(pStmt, 1);
      }
      rc = acornCacheOpError(&op, sqlite3_reset(pStmt));
    }
  }else{
    cache_rec r;
    rc = acornCacheRecFind(&op, id, &r, pbFound);
    if( *pbFound ){
      *pMs = r.ms;
      *pHits = r.hits;
    }
  }
  *pzErr = op.zErr;
  return rc;
}

/* Does a live entry other than idNot have the key?  Its id in *pId. */
int acornCacheLiveKey(cache_op *op, sqlite3_value *pKey, i64 idNot, i64 *pId){
  sqlite3_stmt *pStmt;
  int rc = acornCacheStmt(op, CACHE_STMT_FIND_LIVE, &pStmt);
  *pId = 0;
  if( rc ) return rc;
  acornCacheBindKey(pStmt, 1, pKey);
  sqlite3_bind_int64(pStmt, 2, op->now);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 1);
    if( *pId==idNot ) *pId = 0;
  }
  return acornCacheOpError(op, sqlite3_reset(pStmt));
}

/* The end of a write: a sweep if one is due, the config row and the
** uses, written.  The caller hands op's error on. */
int acornCacheOpCommit(cache_op *op, int rc){
  if( rc==SQLITE_OK && op->cfg.nDead>op->cfg.entries+1024 ){
    rc = cacheSweep(op);
  }
  if( rc==SQLITE_OK ) rc = acornCacheConfigSave(op);
  if( rc==SQLITE_OK ) acornCacheTxnWritten(&op->pTab->txn, &op->pTab->uses);
  if( rc ) acornCacheChunkDropAll(op->pTab);
  return rc;
}
