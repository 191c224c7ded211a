/*
** cache_set.c: a set as the application gives it, by INSERT INTO t(key,
** value, expires, ttl, tag) or by cache_set(t, key, value, ttl, tag): the
** checks of what it is given, made before anything is written, and the
** write (acornCacheSetGiven).  Both ways run this code, so they refuse the
** same values with the same messages (each named by op->zWho: "cache" for
** the table, "cache_set" for the function) and count, evict, expire and
** feed alike.
**
** Whatever can refuse a set is checked before its first write: SQLite
** opens no statement journal for a one-row change of a virtual table, nor
** for a function's own statements, so inside a transaction a write made
** before an error would stay.
*/
#include "cacheInt.h"

/* The prefix of a message: the function or "cache". */
static const char *cacheWho(const cache_op *op){
  return op->zWho ? op->zWho : "cache";
}

/* The expiry a write gives: expires (pExpires, 0 where not given: an
** UPDATE that leaves it) or a ttl (pTtl, 0 where not given), not both
** non-NULL.  A ttl is seconds, INTEGER or REAL, 0..CACHE_MAX_TTL, or
** NULL; expires an INTEGER (unix ms) or NULL.  *piExpires: expires as
** given, CACHE_EXP_NONE for NULL or none (so an expires of
** 9223372036854775807 is NULL too); *pnTtlMs: the ttl in ms (-1: none),
** which acornCacheTtlApply() turns into expires once the write's time is
** known. */
int acornCacheCheckExpiry(cache_op *op, sqlite3_value *pExpires,
                          sqlite3_value *pTtl, i64 *piExpires,
                          i64 *pnTtlMs){
  int e = pTtl ? sqlite3_value_type(pTtl) : SQLITE_NULL;
  *piExpires = CACHE_EXP_NONE;
  *pnTtlMs = -1;
  if( e!=SQLITE_NULL ){
    double r;
    if( e!=SQLITE_INTEGER && e!=SQLITE_FLOAT ){
      return acornCacheOpFail(op, SQLITE_ERROR, "%s: ttl must be a number"
          " of seconds (INTEGER or REAL) or NULL, got %s", cacheWho(op),
          acornCacheTypeName(e));
    }
    r = sqlite3_value_double(pTtl);
    if( !(r>=0.0 && r<=CACHE_MAX_TTL) ){
      return acornCacheOpFail(op, SQLITE_ERROR, "%s: bad ttl %s; expected"
          " seconds from 0 to %.0f", cacheWho(op),
          (const char*)sqlite3_value_text(pTtl), CACHE_MAX_TTL);
    }
    /* rounded to the nearest ms: a ttl of 1.001 is the double
    ** 1.00099999..., and 1001 ms is meant (a host that has only doubles,
    ** JavaScript, passes ms/1000) */
    *pnTtlMs = e==SQLITE_INTEGER ? sqlite3_value_int64(pTtl)*1000
                                 : (i64)(r*1000.0 + 0.5);
  }
  e = pExpires ? sqlite3_value_type(pExpires) : SQLITE_NULL;
  if( e==SQLITE_NULL ) return SQLITE_OK;
  if( *pnTtlMs>=0 ){
    return acornCacheOpFail(op, SQLITE_ERROR, "%s: ttl and expires are"
        " both given; give one: ttl in seconds from now, or expires in unix"
        " ms", cacheWho(op));
  }
  if( !acornCacheWholeNumber(pExpires, piExpires) ){
    return acornCacheOpFail(op, SQLITE_ERROR, "%s: expires must be an"
        " INTEGER (unix ms) or NULL, got %s", cacheWho(op),
        acornCacheTypeName(e));
  }
  return SQLITE_OK;
}

/* Check a set's key and value (pNew->pKey, pNew->pValue), and its expiry
** (acornCacheCheckExpiry, into pNew->iExpires and *pnTtlMs); pNew->nSize.
** op->pTab is the table (its text encoding sizes the entry). */
int acornCacheCheckValues(cache_op *op, cache_new *pNew,
                          sqlite3_value *pExpires, sqlite3_value *pTtl,
                          i64 *pnTtlMs){
  sqlite3_value *pKey = pNew->pKey, *pValue = pNew->pValue;
  char *zErr = 0;
  int e, rc = acornCacheCheckKey(cacheWho(op), pKey, &zErr);
  assert( op->pTab!=0 );
  *pnTtlMs = -1;
  if( rc ){
    if( op->zErr==0 ){           /* (zErr 0: out of memory, no message) */
      op->zErr = zErr;
      op->rcErr = rc;
    }else{
      sqlite3_free(zErr);
    }
    return rc;
  }
  e = sqlite3_value_type(pValue);
  if( e==SQLITE_NULL ){
    return acornCacheOpFail(op, SQLITE_ERROR, "%s: value must not be NULL;"
        " expected BLOB, TEXT, INTEGER or REAL", cacheWho(op));
  }
  pNew->nSize = acornCacheBytes(op->pTab->bUtf16, pKey)
              + acornCacheValueBytes(op->pTab->bUtf16, pValue);
  return acornCacheCheckExpiry(op, pExpires, pTtl, &pNew->iExpires, pnTtlMs);
}

/* A tag is TEXT or NULL. */
int acornCacheCheckTag(cache_op *op, sqlite3_value *pTag){
  int e = pTag ? sqlite3_value_type(pTag) : SQLITE_NULL;
  if( e==SQLITE_NULL || e==SQLITE_TEXT ) return SQLITE_OK;
  return acornCacheOpFail(op, SQLITE_ERROR, "%s: tag must be TEXT or NULL,"
                          " got %s", cacheWho(op), acornCacheTypeName(e));
}

/* A ttl given (nTtlMs >= 0) sets expires to the write's time plus it. */
void acornCacheTtlApply(const cache_op *op, i64 nTtlMs, i64 *piExpires){
  assert( nTtlMs<=(i64)CACHE_MAX_TTL*1000 && op->now<CACHE_MAX_COUNTER );
  if( nTtlMs>=0 ) *piExpires = op->now + nTtlMs;
}

/* An entry larger than the capacity is refused, not stored and evicted. */
int acornCacheCheckSize(cache_op *op, i64 nSize){
  if( nSize>op->cfg.capacity ){
    return acornCacheOpFail(op, SQLITE_ERROR,
        "%s: entry of %lld bytes exceeds capacity of %lld bytes",
        cacheWho(op), nSize, op->cfg.capacity);
  }
  return SQLITE_OK;
}

/* The write of a set checked by acornCacheCheckValues (pNew, nTtlMs) and
** acornCacheCheckTag, op begun (acornCacheOpBegin): expires from the ttl,
** or from default_ttl when neither was given; the size checked against
** the capacity; with bIgnore (INSERT OR IGNORE) nothing written if a live
** entry has the key (its id in *pRowid, *pbIgnored set: op is over, not
** to be committed); else the buffered uses written, and the set
** (acornCacheSet), its id in *pRowid: the caller ends op
** (acornCacheOpCommit). */
int acornCacheSetGiven(cache_op *op, cache_new *pNew, i64 nTtlMs,
                       int bIgnore, i64 *pRowid, int *pbIgnored){
  i64 idLive = 0;
  int rc;
  *pbIgnored = 0;
  assert( op->pTab!=0 && op->now>0 );
  if( nTtlMs<0 && pNew->iExpires==CACHE_EXP_NONE && op->cfg.nDefaultTtl>0 ){
    nTtlMs = op->cfg.nDefaultTtl*1000;     /* neither given: default_ttl */
  }
  acornCacheTtlApply(op, nTtlMs, &pNew->iExpires);
  pNew->iCreated = op->now;
  rc = acornCacheCheckSize(op, pNew->nSize);
  if( rc==SQLITE_OK && bIgnore ){
    rc = acornCacheLiveKey(op, pNew->pKey, 0, &idLive);
    if( rc==SQLITE_OK && idLive ){
      *pRowid = idLive;       /* OR IGNORE: the stored entry stays */
      *pbIgnored = 1;
      return SQLITE_OK;
    }
  }
  if( rc==SQLITE_OK ) rc = acornCacheFlushWrite(op);
  if( rc==SQLITE_OK ) rc = acornCacheSet(op, pNew, pRowid);
  return rc;
}
