/*
** cache_value.c: the values a cache is given, before any of them reaches a
** shadow table: numbers (whole numbers, counts, sizes and durations with
** their units), keys (checked and bound as they are stored), the text of
** names and commands, and the bytes a value counts for.  Nothing here runs
** SQL or knows a table: the virtual table, the functions and the store all
** call down to it, so an argument is checked once, on its way down.
**
** Every parser takes the whole text or nothing (no leading or trailing
** space, no sign, no exponent): "10", "10.00", "1.5 GiB", never "10.",
** " 10" or "1e1".  Each returns 0 on success, as sqlite3_strglob() does.
*/
#include "cacheInt.h"

/* The time now, in unix milliseconds (acorn's clock: see acorn.h). */
i64 acornCacheNowMs(void){
  return acorn_now_ns()/1000000;
}

/* Is v an integer: an INTEGER, or a REAL with no fractional part that an
** i64 holds (JavaScript numbers bind as REAL)?  Its value in *pOut. */
int acornCacheWholeNumber(sqlite3_value *v, i64 *pOut){
  int e = sqlite3_value_type(v);
  assert( v!=0 && pOut!=0 );
  if( e==SQLITE_INTEGER ){
    *pOut = sqlite3_value_int64(v);
    return 1;
  }
  if( e==SQLITE_FLOAT ){
    double r = sqlite3_value_double(v);
    if( r>=-9223372036854775808.0 && r<9223372036854775808.0
     && r==(double)(i64)r ){
      *pOut = (i64)r;
      assert( (double)*pOut==r );
      return 1;
    }
  }
  return 0;
}

/* The digits at *z as a whole number 0..iMax in *pV, and *pz past them:
** the count of digits, or -1 if the number passes iMax.  (A digit above
** iMax is refused before the bound is divided: with iMax < 9, (iMax-d)/10
** would round up to 0 and let it through.) */
static int cacheParseDigits(const char **pz, i64 iMax, i64 *pV){
  const char *z = *pz;
  i64 v = 0;
  int n = 0;
  assert( iMax>=0 );
  for(; *z>='0' && *z<='9'; z++, n++){
    int d = *z - '0';
    if( d>iMax || v > (iMax - d)/10 ) return -1;
    v = v*10 + d;
  }
  assert( v>=0 && v<=iMax );
  *pz = z;
  *pV = v;
  return n;
}

/* Parse a whole number 0..iMax: digits, and a fraction of zeros if any
** ("10", "10.00"; not "10.", " 10", "+10", "1e1": the one grammar of
** counts, as the amounts', acornCacheParseAmount, without a unit).  0 on
** success. */
int acornCacheParseCount(const char *z, i64 iMax, i64 *pOut){
  i64 v = 0;
  assert( iMax>=0 && pOut!=0 );
  if( z==0 || cacheParseDigits(&z, iMax, &v)<=0 ) return 1;
  if( *z=='.' ){
    if( z[1]!='0' ) return 1;
    for(z++; *z=='0'; z++){}
  }
  if( *z!=0 ) return 1;
  assert( v>=0 && v<=iMax );
  *pOut = v;
  return 0;
}

/* v as the text of a name or a word of the cache's (a command, an
** option's value) in *pz: SQLITE_OK if it is TEXT with no NUL byte inside,
** SQLITE_MISMATCH if not (text cut at a NUL byte, or a BLOB read as text,
** is never one: each is taken whole), SQLITE_NOMEM. */
int acornCacheTextArg(sqlite3_value *v, const char **pz){
  const char *z;
  assert( v!=0 && pz!=0 );
  *pz = 0;
  if( sqlite3_value_type(v)!=SQLITE_TEXT ) return SQLITE_MISMATCH;
  z = (const char*)sqlite3_value_text(v);
  if( z==0 ) return SQLITE_NOMEM;
  if( (int)strlen(z)!=sqlite3_value_bytes(v) ) return SQLITE_MISMATCH;
  *pz = z;
  return SQLITE_OK;
}

/* Parse an amount: digits with an optional fraction (".5", a digit at
** least after the point), optional spaces, one of the units aUnit[] names
** (any case; "" for none); nothing before or after.  A fraction that is
** not all zeros needs a
** unit of more than 1: the amount is then rounded down to whole units of
** 1 (bytes, seconds), and one that is not 0 must not round down to 0.  No
** sign, no exponent.  The amount, 0..iMax, in
** *pOut.  0 on success. */
int acornCacheParseAmount(const char *z, const cache_unit *aUnit, int nUnit,
                          i64 iMax, i64 *pOut){
  const char *zFrac = 0;
  i64 v = 0, iMul = 0, iPart = 0;
  int i, nFrac = 0, bFrac = 0;
  assert( aUnit!=0 && nUnit>0 && iMax>=0 && pOut!=0 );
  if( z==0 || cacheParseDigits(&z, iMax, &v)<=0 ) return 1;
  if( *z=='.' ){
    for(zFrac = ++z; *z>='0' && *z<='9'; z++, nFrac++){
      if( *z!='0' ) bFrac = 1;
    }
    if( nFrac==0 ) return 1;
  }
  while( *z==' ' ) z++;
  for(i=0; i<nUnit && iMul==0; i++){
    int n = (int)strlen(aUnit[i].zUnit);
    const char *zEnd = z + n;
    assert( aUnit[i].iMul>=1 );
    if( sqlite3_strnicmp(z, aUnit[i].zUnit, n)!=0 ) continue;
    if( *zEnd==0 ) iMul = aUnit[i].iMul;
  }
  if( iMul==0 || (bFrac && iMul==1) || v > iMax/iMul ) return 1;
  assert( iMul>=1 && v>=0 && v*iMul<=iMax );
  assert( nFrac==0 || zFrac!=0 );
  /* floor(iMul * 0.d1d2...dn), from the last digit back: floor((iMul*d +
  ** x)/10) for x = floor(iMul * 0.d(k+1)...dn) is exact, as x < iMul */
  for(i=nFrac-1; i>=0; i--){
    assert( iPart<iMul );
    iPart = (iMul*(zFrac[i]-'0') + iPart)/10;
  }
  assert( iPart>=0 && iPart<iMul );
  if( iPart > iMax - v*iMul ) return 1;
  *pOut = v*iMul + iPart;
  assert( *pOut>=0 && *pOut<=iMax );
  return *pOut==0 && bFrac;     /* not 0, yet less than one byte, second */
}

/* Parse a size: a positive amount of bytes with an optional unit B, kB,
** MB, GB (powers of 1000), KiB, MiB or GiB (of 1024).  0 on success. */
int acornCacheParseSize(const char *z, i64 *pOut){
  static const cache_unit aUnit[] = {
    { "",    1 }, { "b",   1 },
    { "kb",  1000 }, { "mb", 1000000 }, { "gb", 1000000000 },
    { "kib", (i64)1<<10 }, { "mib", (i64)1<<20 }, { "gib", (i64)1<<30 },
  };
  i64 v = 0;
  if( acornCacheParseAmount(z, aUnit, (int)(sizeof(aUnit)/sizeof(aUnit[0])),
                            CACHE_MAX_CAPACITY, &v) || v<1 ){
    return 1;
  }
  assert( v>=1 && v<=CACHE_MAX_CAPACITY );
  *pOut = v;
  return 0;
}

/* Parse a duration: seconds with an optional unit s, m, h or d.  0 on
** success. */
int acornCacheParseDuration(const char *z, i64 *pOut){
  static const cache_unit aUnit[] = {
    { "", 1 }, { "s", 1 }, { "m", 60 }, { "h", 3600 }, { "d", 86400 },
  };
  assert( pOut!=0 );
  return acornCacheParseAmount(z, aUnit, (int)(sizeof(aUnit)/sizeof(aUnit[0])),
                               (i64)CACHE_MAX_TTL, pOut);
}

/* Bytes a key or value counts for: BLOB its length, TEXT its length in
** the database's encoding (as stored, and as cache_read's offsets count),
** INTEGER (or a whole REAL key, stored as INTEGER) 8. */
i64 acornCacheBytes(int bUtf16, sqlite3_value *pVal){
  int e = sqlite3_value_type(pVal);
  assert( pVal!=0 && (bUtf16==0 || bUtf16==1) );
  if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ) return 8;
  if( e==SQLITE_TEXT && bUtf16 ) return sqlite3_value_bytes16(pVal);
  return sqlite3_value_bytes(pVal);
}

/* Bytes a value counts for: as acornCacheBytes, but an INTEGER counts the
** length of its decimal text, as SQL's length() gives it (and acorn 0.2
** computed it), and a REAL 8, not its text, whose length differs between
** SQLite versions.  CACHE_SIZE_SQL computes the same from a stored row. */
i64 acornCacheValueBytes(int bUtf16, sqlite3_value *pVal){
  int e = sqlite3_value_type(pVal);
  if( e==SQLITE_INTEGER ){
    char z[24];
    sqlite3_snprintf(sizeof(z), z, "%lld", sqlite3_value_int64(pVal));
    return (i64)strlen(z)*(bUtf16 ? 2 : 1);
  }
  return acornCacheBytes(bUtf16, pVal);
}

const char *acornCacheTypeName(int eType){
  assert( eType>=SQLITE_INTEGER && eType<=SQLITE_NULL );   /* a value's type */
  switch( eType ){
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT:   return "REAL";
    case SQLITE_TEXT:    return "TEXT";
    case SQLITE_BLOB:    return "BLOB";
    default:             return "NULL";
  }
}

/* Check a key as the user gave it; zWho prefixes the message. */
int acornCacheCheckKey(const char *zWho, sqlite3_value *pKey, char **pzErr){
  int e = sqlite3_value_type(pKey);
  i64 iKey;
  assert( zWho!=0 && pKey!=0 && pzErr!=0 );
  *pzErr = 0;
  if( e==SQLITE_NULL ){
    *pzErr = sqlite3_mprintf("%s: key must not be NULL;"
                             " expected TEXT, BLOB or INTEGER", zWho);
  }else if( e==SQLITE_FLOAT && !acornCacheWholeNumber(pKey, &iKey) ){
    *pzErr = sqlite3_mprintf("%s: key must be TEXT, BLOB or INTEGER, got"
                             " REAL", zWho);
  }else{
    return SQLITE_OK;
  }
  /* (refused either way: a message that cannot be made is no consent) */
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Bind a checked key: a whole REAL as the INTEGER it is. */
void acornCacheBindKey(sqlite3_stmt *pStmt, int i, sqlite3_value *pKey){
  i64 iKey;
  assert( pStmt!=0 && i>=1 && pKey!=0 );
  if( sqlite3_value_type(pKey)==SQLITE_FLOAT && acornCacheWholeNumber(pKey, &iKey) ){
    sqlite3_bind_int64(pStmt, i, iKey);
  }else{
    sqlite3_bind_value(pStmt, i, pKey);
  }
}

/* Bind a checked key as acornCacheBindKey does, with no allocation when
** it is a TEXT (in a UTF-8 database) or BLOB of at most nBuf bytes: copied
** into aBuf and bound from there.  aBuf must outlive the binding: the
** caller binds the parameter again (or to NULL) before it goes. */
void acornCacheBindKeyIn(sqlite3_stmt *pStmt, int i, sqlite3_value *pKey,
                         int bUtf16, char *aBuf, int nBuf){
  int e = sqlite3_value_type(pKey);
  assert( pStmt!=0 && i>=1 && aBuf!=0 && nBuf>=0 );
  if( (e==SQLITE_TEXT && !bUtf16) || e==SQLITE_BLOB ){
    const void *a = e==SQLITE_TEXT ? (const void*)sqlite3_value_text(pKey)
                                   : sqlite3_value_blob(pKey);
    int n = sqlite3_value_bytes(pKey);
    if( (a || n==0) && n<=nBuf ){
      assert( n>=0 );
      if( n ) memcpy(aBuf, a, (size_t)n);
      if( e==SQLITE_TEXT ){
        sqlite3_bind_text(pStmt, i, aBuf, n, SQLITE_STATIC);
      }else{
        sqlite3_bind_blob(pStmt, i, aBuf, n, SQLITE_STATIC);  /* x'': not NULL */
      }
      return;
    }
  }
  acornCacheBindKey(pStmt, i, pKey);
}
