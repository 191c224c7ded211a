/*
** cache_check.c: the integrity check of a cache table's stored form
** (acornCacheIntegrity), run by the integrity_check command and, on
** SQLite 3.44 and later, by PRAGMA integrity_check.
**
** The invariants of the storage format (cache_store.c's header) that SQL
** can see: the config row's counters, options and their ranges, entries
** and bytes against the data table and max_entries, the expiry table
** against the entries' expires and the bound on them (elow), the tag table
** against the entries and the tagged counter, the feed against its size,
** its sequence and its reasons, and the recency records (each chunk
** decoded and checked against the entries and the head and low marks).
** A broken invariant is a message in *pzErr; the check changes nothing.
*/
#include "cacheInt.h"

/* The invariants of the stored table that SQL can check, each a query that
** returns a row (its message) when broken.  Formatted as aCacheStmt's. */
static const char *const azCacheCheck[] = {
  "SELECT 'the config table has ' || n || ' rows, not 1' FROM (SELECT"
  " count(*) AS n, min(id) AS m FROM \"%w\".\"%w_config\") WHERE n!=1 OR m!=1",
  "SELECT 'a counter is out of range: capacity ' || capacity || ', bytes '"
  " || bytes || ', entries ' || entries || ', seq ' || seq || ', hits ' ||"
  " hits || ', misses ' || misses || ', evictions ' || evictions ||"
  " ', expired ' || expired FROM \"%w\".\"%w_config\" WHERE capacity<1"
  " OR bytes<0 OR entries<0 OR seq<0 OR hits<0 OR misses<0 OR evictions<0"
  " OR expired<0 OR max(capacity, bytes, entries, seq, hits, misses,"
  "   evictions, expired)>4611686018427387904"     /* CACHE_MAX_COUNTER */
  " OR typeof(capacity)||typeof(bytes)||typeof(entries)||typeof(seq)"
  "    ||typeof(hits)||typeof(misses)||typeof(evictions)||typeof(expired)"
  "    !='integerintegerintegerintegerintegerintegerintegerinteger'",
  "SELECT 'bytes is ' || bytes || ', above the capacity of ' || capacity"
  " FROM \"%w\".\"%w_config\" WHERE bytes>capacity",
  "SELECT 'entries is ' || c.entries || ' but the data table holds ' ||"
  " (SELECT count(*) FROM \"%w\".\"%w_data\") || ' rows'"
  " FROM \"%w\".\"%w_config\" c"
  " WHERE c.entries!=(SELECT count(*) FROM \"%w\".\"%w_data\")",
  "SELECT 'entry ' || id || ' has a key of type ' || typeof(key) ||"
  " ' and a value of type ' || typeof(value) FROM \"%w\".\"%w_data\""
  " WHERE typeof(key) NOT IN ('integer','text','blob')"
  " OR typeof(value) NOT IN ('text','blob','integer','real')"
  " OR typeof(created)!='integer'"
  " OR typeof(expires) NOT IN ('integer','null') LIMIT 1",
  "SELECT 'bytes is ' || c.bytes || ' but the entries'' sizes sum to ' ||"
  " (SELECT coalesce(sum(" CACHE_SIZE_SQL "),0) FROM \"%w\".\"%w_data\")"
  " FROM \"%w\".\"%w_config\" c WHERE c.bytes!="
  " (SELECT coalesce(sum(" CACHE_SIZE_SQL "),0) FROM \"%w\".\"%w_data\")",
  "SELECT 'seq ' || c.seq || ' is below the id ' || m FROM"
  " \"%w\".\"%w_config\" c, (SELECT max(id) AS m FROM \"%w\".\"%w_data\")"
  " WHERE c.seq<m",
  "SELECT 'the expiry table and the entries'' expires disagree at entry ' ||"
  " id FROM (SELECT expires, id FROM \"%w\".\"%w_expiry\" EXCEPT"
  " SELECT expires, id FROM \"%w\".\"%w_data\" WHERE expires IS NOT NULL"
  " UNION ALL SELECT * FROM (SELECT expires, id FROM \"%w\".\"%w_data\""
  " WHERE expires IS NOT NULL EXCEPT SELECT expires, id"
  " FROM \"%w\".\"%w_expiry\")) LIMIT 1",
};
/* Format 2 only. */
static const char *const azCacheCheck2[] = {
  "SELECT 'policy ' || policy || ', head ' || head || ', low ' || low ||"
  " ' or dead ' || dead || ' is out of range'"
  " FROM \"%w\".\"%w_config\" WHERE policy NOT IN (0,1) OR head<0"
  " OR head>seq+1 OR typeof(head)!='integer' OR low<0 OR low>seq"
  " OR typeof(low)!='integer' OR dead<0 OR dead>4611686018427387904"
  " OR typeof(dead)!='integer'",
  "SELECT 'the records have no chunk 0' WHERE NOT EXISTS"
  " (SELECT 1 FROM \"%w\".\"%w_rec\" WHERE lo=0)",
};

/* Format 3 only: the options in range, the bound on entries, the bound on
** expiries (while it is known: eseq = seq). */
static const char *const azCacheCheck3[] = {
  "SELECT 'default_ttl ' || dttl || ', max_entries ' || maxent || ', feed '"
  " || feed || ', feed_seq ' || fseq || ' or tagged ' || tagged ||"
  " ' is out of range'"
  " FROM \"%w\".\"%w_config\" WHERE typeof(dttl)||typeof(maxent)"
  "||typeof(feed)||typeof(fseq)||typeof(tagged)"
  "!='integerintegerintegerintegerinteger' OR tagged<0"
  " OR dttl<0 OR dttl>1000000000000"                      /* CACHE_MAX_TTL */
  " OR maxent<0 OR maxent>4611686018427387904"
  " OR feed<0 OR feed>1000000"                            /* CACHE_MAX_FEED */
  " OR fseq<0 OR fseq>4611686018427387904",
  "SELECT 'expiry_low ' || coalesce(elow, 'NULL') || ' at expiry_seq ' ||"
  " eseq || ' is not a lower bound of the expiries' || CASE WHEN m IS NULL"
  " THEN '' ELSE ' (the least is ' || m || ')' END"
  " FROM \"%w\".\"%w_config\","
  " (SELECT min(expires) AS m FROM \"%w\".\"%w_expiry\")"
  " WHERE typeof(elow) NOT IN ('integer','null') OR typeof(eseq)!='integer'"
  " OR (eseq=seq AND m<coalesce(elow, 9223372036854775807))",
  "SELECT 'entries is ' || entries || ', above max_entries ' || maxent"
  " FROM \"%w\".\"%w_config\" WHERE maxent>0 AND entries>maxent",
  "SELECT 'tagged is ' || c.tagged || ' but the tag table holds ' || n ||"
  " ' rows' FROM \"%w\".\"%w_config\" c, (SELECT count(*) AS n FROM"
  " \"%w\".\"%w_tag\") WHERE c.tagged!=n",
  "SELECT 'the tag of entry ' || id || ' is ' || CASE typeof(tag) WHEN"
  " 'text' THEN 'left after the entry' ELSE 'of type ' || typeof(tag) END"
  " FROM \"%w\".\"%w_tag\" g WHERE typeof(tag)!='text' OR NOT EXISTS"
  " (SELECT 1 FROM \"%w\".\"%w_data\" d WHERE d.id=g.id) LIMIT 1",
  "SELECT 'the feed holds ' || n || ' rows, above feed ' || c.feed ||"
  " ', or one above feed_seq ' || c.fseq || ' or of no reason'"
  " FROM \"%w\".\"%w_config\" c, (SELECT count(*) AS n, max(seq) AS m,"
  " sum(reason NOT IN (1,2,3)) AS b FROM \"%w\".\"%w_feed\")"
  " WHERE n>c.feed OR m>c.fseq OR b>0",
};

/* Format 4 only: a size a row holds is its key's and value's (NULL: a row
** an older acorn wrote, computed). */
static const char zCacheCheck4[] =
  "SELECT 'entry ' || id || ' holds the size ' || quote(size) || ' but its"
  " key and value hold ' || " CACHE_SIZE_SQL " || ' bytes'"
  " FROM \"%w\".\"%w_data\" WHERE size IS NOT NULL"
  " AND (typeof(size)!='integer' OR size!=" CACHE_SIZE_SQL ") LIMIT 1";

/* Run one check query; a row is the broken invariant, into *pzErr. */
static int cacheCheckQuery(cache_table *p, const char *zFmt, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  const char *d = p->zDb, *n = p->zName;
  char *zSql = sqlite3_mprintf(zFmt, d, n, d, n, d, n, d, n, d, n);
  int rc;
  /* (no message yet: each check runs only while the others found none) */
  assert( zFmt!=0 && pzErr!=0 && *pzErr==0 );
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
    rc = SQLITE_CORRUPT_VTAB;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  return rc;
}

static int cacheI64Cmp(const void *a, const void *b){
  i64 x = *(const i64*)a, y = *(const i64*)b;
  assert( a!=0 && b!=0 );
  return x<y ? -1 : x>y;
}

/* What cacheCheckRecords() gathers: the config row's seq, head, low and
** policy, and every record's id and used, in id order. */
typedef struct cache_check cache_check;
struct cache_check {
  i64 seq, iHead, iLow;
  int ePolicy;
  i64 *aId, *aUsed;
  int nRec, nAlloc;
  i64 iPrevLo;          /* the chunk before, -1 for none */
  char *zErr;           /* the broken invariant */
};

/* Check chunk lo, decoded in *c, whose minused column is pMin; its records
** are added to pCk. */
static int cacheCheckChunk(cache_check *pCk, cache_chunk *c, i64 lo,
                           sqlite3_value *pMin){
  i64 minUsed = LLONG_MAX;
  int i;
  assert( pCk->zErr==0 && c->lo==lo && c->nRec>=0 );
  assert( pCk->nRec>=0 && pCk->nRec<=pCk->nAlloc );
  if( pCk->iPrevLo>=0 && pCk->nRec>0 && pCk->aId[pCk->nRec-1]>=lo ){
    pCk->zErr = sqlite3_mprintf("chunk %lld holds entry %lld, which belongs"
                   " to chunk %lld", pCk->iPrevLo, pCk->aId[pCk->nRec-1], lo);
    return SQLITE_CORRUPT_VTAB;
  }
  if( c->nRec==0 && lo!=0 ){
    pCk->zErr = sqlite3_mprintf("chunk %lld is empty", lo);
    return SQLITE_CORRUPT_VTAB;
  }
  if( c->nRec>0 && pCk->ePolicy==CACHE_POLICY_FIFO ){
    pCk->zErr = sqlite3_mprintf("chunk %lld holds records under fifo", lo);
    return SQLITE_CORRUPT_VTAB;
  }
  if( pCk->nRec+c->nRec>pCk->nAlloc ){
    int nNew = (pCk->nRec+c->nRec)*2 + 64;
    i64 *a1 = sqlite3_realloc64(pCk->aUsed, sizeof(i64)*(size_t)nNew);
    i64 *a2;
    if( a1 ) pCk->aUsed = a1;
    a2 = sqlite3_realloc64(pCk->aId, sizeof(i64)*(size_t)nNew);
    if( a2 ) pCk->aId = a2;
    if( a1==0 || a2==0 ) return SQLITE_NOMEM;
    pCk->nAlloc = nNew;
  }
  assert( pCk->nRec+c->nRec<=pCk->nAlloc );
  for(i=0; i<c->nRec; i++){
    const cache_rec *r = &c->aRec[i];
    /* as acornCacheChunkDecode() let them through */
    assert( r->id>=lo && (i==0 || r[-1].id<r->id) && r->used>=0 );
    if( r->used<r->id || r->used>pCk->seq ){
      pCk->zErr = sqlite3_mprintf("entry %lld has recency %lld, outside"
                                  " [%lld, %lld]", r->id, r->used, r->id,
                                  pCk->seq);
      return SQLITE_CORRUPT_VTAB;
    }
    if( r->used>pCk->iLow && r->used<minUsed ) minUsed = r->used;
    pCk->aUsed[pCk->nRec] = r->used;
    pCk->aId[pCk->nRec] = r->id;
    pCk->nRec++;
  }
  assert( minUsed==LLONG_MAX || minUsed>pCk->iLow );
  if( (sqlite3_value_type(pMin)==SQLITE_NULL)!=(minUsed==LLONG_MAX)
   || (minUsed!=LLONG_MAX && sqlite3_value_int64(pMin)!=minUsed) ){
    char zWant[32];
    const char *zHas = (const char*)sqlite3_value_text(pMin);
    sqlite3_snprintf(sizeof(zWant), zWant, minUsed==LLONG_MAX ? "NULL"
                     : "%lld", minUsed);
    pCk->zErr = sqlite3_mprintf("chunk %lld has minused %s, not %s", lo,
                                zHas ? zHas : "NULL", zWant);
    return SQLITE_CORRUPT_VTAB;
  }
  pCk->iPrevLo = lo;
  return SQLITE_OK;
}

/* Every chunk of <t>_rec, through cacheCheckChunk(). */
static int cacheCheckChunks(cache_table *p, cache_check *pCk){
  cache_chunk c;
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT lo, minused, recs FROM \"%w\".\"%w_rec\""
                               " ORDER BY lo", p->zDb, p->zName);
  int rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  assert( pCk->nRec==0 && pCk->iPrevLo==-1 && pCk->zErr==0 );
  memset(&c, 0, sizeof(c));
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    i64 lo = sqlite3_column_int64(pStmt, 0);
    rc = acornCacheChunkDecode(&c, lo, sqlite3_column_blob(pStmt, 2),
                          sqlite3_column_bytes(pStmt, 2));
    if( rc==SQLITE_CORRUPT_VTAB ){
      pCk->zErr = sqlite3_mprintf("the records of chunk %lld cannot be"
                                  " decoded", lo);
    }
    if( rc==SQLITE_OK ){
      rc = cacheCheckChunk(pCk, &c, lo, sqlite3_column_value(pStmt, 1));
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  sqlite3_free(c.aRec);
  return rc;
}

/* No two records hold the same recency. */
static int cacheCheckDistinct(cache_check *pCk){
  i64 *aSorted;
  int i, rc = SQLITE_OK;
  assert( pCk->zErr==0 && pCk->nRec>=0 && pCk->nRec<=pCk->nAlloc );
  if( pCk->nRec<2 ) return SQLITE_OK;
  aSorted = sqlite3_malloc64(sizeof(i64)*(size_t)pCk->nRec);
  if( aSorted==0 ) return SQLITE_NOMEM;
  memcpy(aSorted, pCk->aUsed, sizeof(i64)*(size_t)pCk->nRec);
  qsort(aSorted, (size_t)pCk->nRec, sizeof(i64), cacheI64Cmp);
  for(i=1; i<pCk->nRec; i++){
    assert( aSorted[i-1]<=aSorted[i] );
    if( aSorted[i]==aSorted[i-1] ){
      pCk->zErr = sqlite3_mprintf("recency %lld is held by two entries",
                                  aSorted[i]);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
  }
  sqlite3_free(aSorted);
  return rc;
}

/* Every live entry below head has a record of recency above low, and no
** live entry one at or below low (lru). */
static int cacheCheckHead(cache_table *p, cache_check *pCk){
  sqlite3_stmt *pData = 0;
  char *zSql = sqlite3_mprintf("SELECT id FROM \"%w\".\"%w_data\" ORDER BY id",
                               p->zDb, p->zName);
  int rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pData, 0) : SQLITE_NOMEM;
  int k = 0;
  sqlite3_free(zSql);
  assert( pCk->ePolicy==CACHE_POLICY_LRU && pCk->zErr==0 );
  while( rc==SQLITE_OK && sqlite3_step(pData)==SQLITE_ROW ){
    i64 id = sqlite3_column_int64(pData, 0);
    int bRec;
    while( k<pCk->nRec && pCk->aId[k]<id ) k++;
    assert( k>=0 && k<=pCk->nRec );
    bRec = k<pCk->nRec && pCk->aId[k]==id;
    if( bRec && pCk->aUsed[k]<=pCk->iLow ){
      pCk->zErr = sqlite3_mprintf("entry %lld has recency %lld, at or below"
                                  " low %lld", id, pCk->aUsed[k], pCk->iLow);
      rc = SQLITE_CORRUPT_VTAB;
    }else if( id<pCk->iHead && !bRec ){
      pCk->zErr = sqlite3_mprintf("entry %lld is below head %lld but has no"
                                  " record", id, pCk->iHead);
      rc = SQLITE_CORRUPT_VTAB;
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pData);
  else sqlite3_finalize(pData);
  return rc;
}

/* The invariants of the records: each chunk well formed, its records in
** its range and ascending, minused their least used, every used distinct
** and within (id, seq], and every live entry below head recorded. */
static int cacheCheckRecords(cache_table *p, char **pzErr){
  cache_check ck;
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT seq, head, policy, low FROM"
                               " \"%w\".\"%w_config\"", p->zDb, p->zName);
  int rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  assert( p->iFormat>=2 && *pzErr==0 );     /* (format 1 has no records) */
  memset(&ck, 0, sizeof(ck));
  ck.iPrevLo = -1;
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    ck.seq = sqlite3_column_int64(pStmt, 0);
    ck.iHead = sqlite3_column_int64(pStmt, 1);
    ck.ePolicy = sqlite3_column_int(pStmt, 2);
    ck.iLow = sqlite3_column_int64(pStmt, 3);
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK ) rc = cacheCheckChunks(p, &ck);
  if( rc==SQLITE_OK ) rc = cacheCheckDistinct(&ck);
  if( rc==SQLITE_OK && ck.ePolicy==CACHE_POLICY_LRU ){
    rc = cacheCheckHead(p, &ck);
  }
  sqlite3_free(ck.aUsed);
  sqlite3_free(ck.aId);
  *pzErr = ck.zErr;
  return rc;
}

/* Check every invariant of the stored table.  SQLITE_OK if they hold;
** SQLITE_CORRUPT_VTAB with *pzErr (sqlite3_free it) naming the first
** broken one; another code, with *pzErr, for an error while reading. */
int acornCacheIntegrity(cache_table *p, char **pzErr){
  char *zWhat = 0;
  size_t i;
  int rc = SQLITE_OK;
  assert( p!=0 && pzErr!=0 );
  assert( p->iFormat>=1 && p->iFormat<=CACHE_FORMAT_NEW );
  *pzErr = 0;
  rc = acornCacheForeignFind(p, &zWhat);
  if( rc==SQLITE_OK && zWhat ) rc = SQLITE_CORRUPT_VTAB;
  for(i=0; rc==SQLITE_OK && i<sizeof(azCacheCheck)/sizeof(azCacheCheck[0]); i++){
    rc = cacheCheckQuery(p, azCacheCheck[i], &zWhat);
  }
  if( p->iFormat>=2 ){
    for(i=0; rc==SQLITE_OK && i<sizeof(azCacheCheck2)/sizeof(azCacheCheck2[0]);
        i++){
      rc = cacheCheckQuery(p, azCacheCheck2[i], &zWhat);
    }
    for(i=0; rc==SQLITE_OK && p->iFormat>=3
             && i<sizeof(azCacheCheck3)/sizeof(azCacheCheck3[0]); i++){
      rc = cacheCheckQuery(p, azCacheCheck3[i], &zWhat);
    }
    if( rc==SQLITE_OK && p->iFormat>=4 ){
      rc = cacheCheckQuery(p, zCacheCheck4, &zWhat);
    }
    if( rc==SQLITE_OK ) rc = cacheCheckRecords(p, &zWhat);
  }
  assert( rc!=SQLITE_OK || zWhat==0 );
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cache: integrity_check of \"%w\": %s", p->zName,
                 zWhat ? zWhat : rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                  : sqlite3_errmsg(p->db));
    if( *pzErr==0 ) rc = SQLITE_NOMEM;
  }
  assert( rc!=SQLITE_OK || *pzErr==0 );
  sqlite3_free(zWhat);
  return rc;
}

