/*
** cache_format.c: the formats of the stored table, and the conversions of
** older ones, each inside the write that first meets the table:
**
**   format 1  acorn 0.1: recency in <t>_lru, a config row without policy,
**             head, low, dead.  Converted to 2: those columns added, the
**             records of entries used since their set moved to <t>_rec
**             (their LRU order kept), <t>_lru emptied (it stays until the
**             table is dropped).
**   format 2  acorn 0.2: no option columns (dttl, maxent, feed, tagged,
**             fseq) in the config row, no <t>_tag or <t>_feed, no bound
**             on the expiries (elow, eseq).  Converted to 3: the columns
**             added, 0 (off), the bound not known (eseq -1: the first look
**             for expired entries finds it), and the tables made.
**             acorn 0.2 reads and writes a converted table as before: it
**             names the columns it knows.
**   format 3  acorn 0.3 before its rows held their size: <t>_data without
**             a size column (the size of an entry is computed from its
**             key and value each time a write needs it).  Not converted:
**             a size column added to an existing table would land after
**             the value (ALTER TABLE adds columns last), where reading it
**             walks a large value's overflow pages, and filling it would
**             rewrite every row, values and all, in the first write.  A
**             format 3 table is read and written as it is.
**   format 4  this version's; what CREATE makes: format 3 with a size
**             column in <t>_data before value, written by every set, so
**             eviction reads it instead of computing it (about 2,900 fewer
**             instructions an evicting set).  An older acorn that writes
**             the table (0.2 names the columns it knows) leaves size NULL:
**             such a row's size is computed as in format 3.
**
** Reads never convert: a table that is only read stays as it is (its
** config row read with the columns it lacks as 0).  A rollback of the
** converting write takes the conversion back; the connection then probes
** the format again before it next reads the config row.
*/
#include "cacheInt.h"

/* Does the shadow table zDb.zName_zSuffix have column zCol?  *pbHas.  A
** probe that fails for want of memory says nothing, and is SQLITE_NOMEM. */
static int cacheColumnHas(sqlite3 *db, const char *zDb, const char *zName,
                          const char *zSuffix, const char *zCol, int *pbHas){
  char *zSql = sqlite3_mprintf("SELECT %s FROM \"%w\".\"%w_%s\"",
                               zCol, zDb, zName, zSuffix);
  sqlite3_stmt *pStmt = 0;
  int rc;
  assert( db!=0 && zDb!=0 && zName!=0 && zCol!=0 && pbHas!=0 );
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( (rc&0xff)==SQLITE_NOMEM ) return SQLITE_NOMEM;
  *pbHas = rc==SQLITE_OK;
  return SQLITE_OK;
}

/* Which format is the stored table: 4 (a size column in <t>_data); 3;
** 2 (made by acorn 0.2: no option columns dttl, maxent, feed, tagged,
** fseq, elow, eseq in its config row, no <t>_tag or <t>_feed); or 1 (made
** by acorn 0.1, recency in <t>_lru, no head column either)?  eseq is the
** last thing the conversion to 3 adds. */
int acornCacheFormatProbe(sqlite3 *db, const char *zDb, const char *zName,
                            int *piFormat){
  int bHas = 0;
  int rc = cacheColumnHas(db, zDb, zName, "config", "eseq", &bHas);
  assert( piFormat!=0 );
  if( rc==SQLITE_OK && bHas ){
    rc = cacheColumnHas(db, zDb, zName, "data", "size", &bHas);
    *piFormat = bHas ? 4 : 3;
  }else if( rc==SQLITE_OK ){
    rc = cacheColumnHas(db, zDb, zName, "config", "head", &bHas);
    *piFormat = bHas ? 2 : 1;
  }
  assert( rc!=SQLITE_OK || (*piFormat>=1 && *piFormat<=CACHE_FORMAT_NEW) );
  return rc;
}

/* Convert a format 1 table to format 2, inside the caller's write. */
static int cacheUpgrade1(cache_op *op){
  cache_table *p = op->pTab;
  sqlite3_stmt *pStmt = 0;
  cache_rec *aRec = 0;
  int nRec = 0, nAlloc = 0, rc;
  const char *d = p->zDb, *n = p->zName;
  char *zSql = sqlite3_mprintf(
      "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN policy INTEGER NOT NULL"
      " DEFAULT 0;"
      "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN head INTEGER NOT NULL"
      " DEFAULT 0;"
      "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN low INTEGER NOT NULL"
      " DEFAULT 0;"
      "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN dead INTEGER NOT NULL"
      " DEFAULT 0;"
      CACHE_REC_DDL,
      d, n, d, n, d, n, d, n, d, n, d, p->uid, n, d, n);
  assert( p->iFormat==1 );       /* acornCacheUpgrade probed it just now */
  if( zSql==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if( rc ) return acornCacheOpError(op, rc);
  /* Entries used since their set have used != id in format 1. */
  zSql = sqlite3_mprintf("SELECT id, used, last_used, " CACHE_LRU1_HITS
                         " FROM \"%w\".\"%w_lru\" WHERE used<>id ORDER BY id",
                         d, n);
  if( zSql==0 ) return acornCacheOpError(op, SQLITE_NOMEM);
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    if( nRec==nAlloc ){
      cache_rec *aNew;
      nAlloc = nAlloc ? nAlloc*2 : 256;
      aNew = sqlite3_realloc64(aRec, sizeof(cache_rec)*(size_t)nAlloc);
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      aRec = aNew;
    }
    assert( nRec>=0 && nRec<nAlloc );
    aRec[nRec].id = sqlite3_column_int64(pStmt, 0);
    aRec[nRec].used = sqlite3_column_int64(pStmt, 1);
    aRec[nRec].ms = sqlite3_column_int64(pStmt, 2);
    aRec[nRec].hits = sqlite3_column_int64(pStmt, 3);
    nRec++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc ){
    sqlite3_free(aRec);
    return acornCacheOpError(op, rc);
  }
  acornCacheFinalizeAll(p);
  p->iFormat = 2;
  acornCacheChunkDropAll(p);
  assert( nRec==0 || aRec!=0 );
  rc = acornCacheRecMerge(op, aRec, nRec);
  sqlite3_free(aRec);
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf("DELETE FROM \"%w\".\"%w_lru\"", d, n);
    rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc ) return acornCacheOpError(op, rc);
  }
  return rc;
}

/* Convert a format 1 or 2 table to format 3 (the option columns of the
** config row, 0: off; the bound on expiries, not known; <t>_tag and
** <t>_feed), inside the caller's write.  The statements of the
** old format are finalized (the schema changes).  Only a write converts:
** a table that is only read stays as it is, and acorn 0.2 reads and
** writes a converted table as before (it names the columns it knows). */
int acornCacheUpgrade(cache_op *op){
  cache_table *p = op->pTab;
  int rc, iFormat = 1;
  char *zSql;
  assert( p!=0 && p->iFormat>=1 && p->iFormat<=CACHE_FORMAT_NEW );
  if( p->iFormat>=3 ) return SQLITE_OK;
  rc = acornCacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
  if( rc ) return acornCacheOpError(op, rc);
  assert( iFormat>=1 && iFormat<=3 );   /* (only CREATE makes a 4) */
  p->iFormat = iFormat;                 /* (converted by another connection) */
  if( iFormat==1 ) rc = cacheUpgrade1(op);
  assert( rc!=SQLITE_OK || iFormat>=2 || p->iFormat==2 );
  if( rc==SQLITE_OK && iFormat<3 ){
    const char *d = p->zDb, *n = p->zName;
    zSql = sqlite3_mprintf(
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN dttl INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN maxent INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN feed INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN tagged INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN fseq INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN elow INTEGER;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN eseq INTEGER NOT NULL"
        " DEFAULT -1;" CACHE_V3_DDL, d, n, d, n, d, n, d, n, d, n, d, n, d, n,
        d, n, d, p->uid, n, d, n);
    rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    rc = acornCacheOpError(op, rc);
  }
  if( rc ) return rc;
  p->bFormatNew = 1;
  p->iFormat = 3;
  acornCacheFinalizeAll(p);
  p->held.eCfg = CACHE_CFG_NONE;   /* the caller reads the row again, as 3 */
  return SQLITE_OK;
}

/* A rollback (bEnd: of the whole transaction) may have taken back a
** conversion made in its transaction: the format is probed again before
** the table is next used. */
void acornCacheFormatStale(cache_table *p, int bEnd){
  assert( p!=0 && (bEnd==0 || bEnd==1) );
  if( p->bFormatNew ) p->bFormatStale = 1;
  if( bEnd ) p->bFormatNew = 0;
}

/* Probe the format again if a rollback may have changed it. */
int acornCacheFormatRecheck(cache_op *op){
  cache_table *p = op->pTab;
  int rc, iFormat = 3;
  assert( p!=0 && p->iFormat>=1 && p->iFormat<=CACHE_FORMAT_NEW );
  if( !p->bFormatStale ) return SQLITE_OK;
  rc = acornCacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
  if( rc ) return acornCacheOpError(op, rc);
  assert( iFormat>=1 && iFormat<=CACHE_FORMAT_NEW );
  p->bFormatStale = 0;
  if( iFormat!=p->iFormat ){
    acornCacheFinalizeAll(p);
    acornCacheChunkDropAll(p);
    p->iFormat = iFormat;
  }
  return SQLITE_OK;
}

