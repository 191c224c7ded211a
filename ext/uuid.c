/*
** uuid.c: RFC 9562 UUIDs, versions 4, 7 and 8, as text or 16-byte blobs.
**
** GENERATORS (SQLITE_INNOCUOUS; not deterministic)
**
**   uuid4()              TEXT  random, version 4, lowercase 8-4-4-4-12
**   gen_random_uuid()    TEXT  alias of uuid4(), as in PostgreSQL
**   uuid4_blob()         BLOB  the same as 16 bytes
**   uuid7()              TEXT  version 7, time-ordered
**   uuid7(ms)            TEXT  version 7 with the given unix milliseconds
**   uuid7_blob([ms])     BLOB
**   uuid8()              TEXT  version 8, time-ordered, sub-ms precision
**   uuid8(ms)            TEXT  version 8 with the given unix milliseconds
**   uuid8_blob([ms])     BLOB
**
**     SELECT uuid7(1700000000000);  -- '018bcfe5-6800-7xxx-yxxx-xxxxxxxxxxxx'
**
** ms must be an integer in 0..281474976710655 (2^48-1): an INTEGER, or a
** REAL with no fractional part (JavaScript numbers bind as REAL).  Anything
** else, NULL and TEXT included, is an error: "uuid7: ms must be an integer
** in 0..281474976710655" (the message names the function as called).
**
** CONVERTERS (SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC)
**
**   uuid_str(X)          TEXT     canonical lowercase form
**   uuid_blob(X)         BLOB     16 bytes
**   uuid_version(X)      INTEGER  the version nibble (0..15)
**   uuid_timestamp(X)    INTEGER  unix ms of a version 7 or 8 UUID, else NULL
**
** X is accepted exactly as SQLite's ext/misc/uuid.c accepts it: a BLOB of
** 16 bytes, or TEXT made of an optional '{', 32 hex digits of either case
** with at most one '-' before any pair of digits, an optional '}', and
** nothing after.  Everything else (NULL, other text, a blob of another
** length, an INTEGER, a REAL) gives NULL.
**
** HOW IT WORKS
**
** Layout of version 7 (RFC 9562 5.7) and of acorn's version 8 (5.8):
**
**   bits   0..47  unix_ts_ms   48-bit unix milliseconds (both)
**   bits  48..51  ver          0111 (7) or 1000 (8)
**   bits  52..63  rand_a       v7: 12-bit counter (6.2 method 1)
**                              v8: 12-bit sub-millisecond fraction,
**                                  floor(ns_within_ms * 4096 / 10^6)
**                                  (6.2 method 3)
**   bits  64..65  var          10
**   bits  66..127 rand_b       62 random bits (both)
**
** Monotonicity.  Per version, one process-wide 64-bit word holds the last
** 60 time bits handed out (ms<<12 | rand_a) and is advanced with a
** compare-and-swap loop, so every value is greater than every value made
** before it in the process, by any thread or connection:
**   v7: a new millisecond starts the counter at a random 11-bit value (top
**       bit clear, leaving at least 2048 steps); otherwise last+1.  Counter
**       overflow carries into the millisecond field, so the timestamp runs
**       ahead of the clock rather than repeat; a clock that steps back keeps
**       the last timestamp.
**   v8: the candidate is ms<<12 | fraction; if it does not exceed the last
**       one, it becomes last+1.
** Calls with an explicit ms are not part of this sequence: their time bits
** are the given ms and everything else is random.
**
** Random bits come from acorn_random() (random.c): a per-thread ChaCha20
** stream seeded from the OS and reseeded after fork().
*/
#include "acorn.h"

#include <string.h>

#define UUID_MAX_MS 0xffffffffffffLL    /* 2^48-1 = 281474976710655 */

static uint64_t gUuid7Last = 0;  /* ms<<12 | counter of the last uuid7() */
static uint64_t gUuid8Last = 0;  /* ms<<12 | fraction of the last uuid8() */

static const char aHexPair[513] =
  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
  "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
  "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
  "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
  "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
  "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
  "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* Hex digit value, or 16 for anything that is not [0-9a-fA-F]. */
static const unsigned char aHexVal[256] = {
#define X16 16,16,16,16,16,16,16,16,16,16,16,16,16,16,16,16
  X16, X16, X16,
  0,1,2,3,4,5,6,7,8,9,16,16,16,16,16,16,          /* 0x30 */
  16,10,11,12,13,14,15,16,16,16,16,16,16,16,16,16, /* 0x40 */
  X16,
  16,10,11,12,13,14,15,16,16,16,16,16,16,16,16,16, /* 0x60 */
  X16, X16, X16, X16, X16, X16, X16, X16, X16   /* 0x70..0xff */
#undef X16
};

void acorn_uuid_format(const unsigned char a[16], char z[36]){
#define HEXPAIR(i, at) memcpy(z+(at), &aHexPair[2*a[i]], 2)
  HEXPAIR(0, 0);  HEXPAIR(1, 2);  HEXPAIR(2, 4);  HEXPAIR(3, 6);  z[8] = '-';
  HEXPAIR(4, 9);  HEXPAIR(5, 11); z[13] = '-';
  HEXPAIR(6, 14); HEXPAIR(7, 16); z[18] = '-';
  HEXPAIR(8, 19); HEXPAIR(9, 21); z[23] = '-';
  HEXPAIR(10, 24); HEXPAIR(11, 26); HEXPAIR(12, 28);
  HEXPAIR(13, 30); HEXPAIR(14, 32); HEXPAIR(15, 34);
#undef HEXPAIR
}

/* Parse text as ext/misc/uuid.c does.  Return 0 on success. */
static int uuidParseText(const unsigned char *z, unsigned char a[16]){
  int i;
  if( z[0]=='{' ) z++;
  for(i=0; i<16; i++){
    unsigned hi, lo;
    if( z[0]=='-' ) z++;
    hi = aHexVal[z[0]];
    if( hi>15 ) return 1;
    lo = aHexVal[z[1]];
    if( lo>15 ) return 1;
    a[i] = (unsigned char)(hi<<4 | lo);
    z += 2;
  }
  if( z[0]=='}' ) z++;
  return z[0]!=0;
}

/* The 16 bytes of X, in aBuf or in X itself, or 0 if X is not a UUID. */
static const unsigned char *uuidInput(sqlite3_value *pX, unsigned char *aBuf){
  switch( sqlite3_value_type(pX) ){
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_value_text(pX);
      if( z==0 || uuidParseText(z, aBuf) ) return 0;
      return aBuf;
    }
    case SQLITE_BLOB: {
      if( sqlite3_value_bytes(pX)!=16 ) return 0;
      return (const unsigned char*)sqlite3_value_blob(pX);
    }
    default:
      return 0;
  }
}

static void uuidStoreTime(unsigned char a[16], uint64_t iTime60, int iVersion){
  uint64_t ms = iTime60>>12;
  unsigned randA = (unsigned)(iTime60 & 0xfff);
  a[0] = (unsigned char)(ms>>40);
  a[1] = (unsigned char)(ms>>32);
  a[2] = (unsigned char)(ms>>24);
  a[3] = (unsigned char)(ms>>16);
  a[4] = (unsigned char)(ms>>8);
  a[5] = (unsigned char)(ms);
  a[6] = (unsigned char)((iVersion<<4) | (randA>>8));
  a[7] = (unsigned char)(randA & 0xff);
}

static void uuidSetVariant(unsigned char a[16]){
  a[8] = (unsigned char)((a[8] & 0x3f) | 0x80);
}

void acorn_uuid4(unsigned char a[16]){
  acorn_random(a, 16);
  a[6] = (unsigned char)((a[6] & 0x0f) | 0x40);
  uuidSetVariant(a);
}

void acorn_uuid7(unsigned char a[16]){
  uint64_t ms = (uint64_t)(acorn_now_ns()/1000000);
  uint64_t last, next;
  acorn_random(a+6, 10);   /* a[6..7] seed the counter, a[8..15] rand_b */
  last = __atomic_load_n(&gUuid7Last, __ATOMIC_RELAXED);
  do{
    if( ms>(last>>12) ){
      next = ms<<12 | (uint64_t)(((a[6]<<8) | a[7]) & 0x7ff);
    }else{
      next = last+1;
    }
  }while( !__atomic_compare_exchange_n(&gUuid7Last, &last, next, 1,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED) );
  uuidStoreTime(a, next, 7);
  uuidSetVariant(a);
}

void acorn_uuid8(unsigned char a[16]){
  int64_t ns = acorn_now_ns();
  uint64_t cand = (uint64_t)(ns/1000000)<<12
                | (uint64_t)((ns%1000000)*4096/1000000);
  uint64_t last, next;
  acorn_random(a+8, 8);
  last = __atomic_load_n(&gUuid8Last, __ATOMIC_RELAXED);
  do{
    next = cand>last ? cand : last+1;
  }while( !__atomic_compare_exchange_n(&gUuid8Last, &last, next, 1,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED) );
  uuidStoreTime(a, next, 8);
  uuidSetVariant(a);
}

/* A v7 or v8 UUID for the given ms: time bits fixed, the rest random. */
static void uuidAtMs(unsigned char a[16], int iVersion, uint64_t ms){
  acorn_random(a+6, 10);
  uuidStoreTime(a, ms<<12 | (uint64_t)(((a[6]<<8) | a[7]) & 0xfff), iVersion);
  uuidSetVariant(a);
}

/* What each generator makes: version, text or blob, and its SQL name. */
typedef struct uuid_kind uuid_kind;
struct uuid_kind {
  const char *zName;
  int iVersion;
  int bBlob;
};

static void uuidGenFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const uuid_kind *pKind = (const uuid_kind*)sqlite3_user_data(ctx);
  unsigned char a[16];
  if( argc==1 ){
    sqlite3_int64 ms = -1;
    if( sqlite3_value_type(argv[0])==SQLITE_INTEGER ){
      ms = sqlite3_value_int64(argv[0]);
    }else if( sqlite3_value_type(argv[0])==SQLITE_FLOAT ){
      /* A whole number as a REAL: JavaScript and JSON numbers bind so. */
      double r = sqlite3_value_double(argv[0]);
      if( r>=0.0 && r<=(double)UUID_MAX_MS && (double)(sqlite3_int64)r==r ){
        ms = (sqlite3_int64)r;
      }
    }
    if( ms<0 || ms>UUID_MAX_MS ){
      acorn_result_error(ctx, "%s: ms must be an integer in 0..%lld",
                         pKind->zName, UUID_MAX_MS);
      return;
    }
    uuidAtMs(a, pKind->iVersion, (uint64_t)ms);
  }else if( pKind->iVersion==7 ){
    acorn_uuid7(a);
  }else if( pKind->iVersion==8 ){
    acorn_uuid8(a);
  }else{
    acorn_uuid4(a);
  }
  if( pKind->bBlob ){
    sqlite3_result_blob(ctx, a, 16, SQLITE_TRANSIENT);
  }else{
    char z[36];
    acorn_uuid_format(a, z);
    sqlite3_result_text(ctx, z, 36, SQLITE_TRANSIENT);
  }
}

static void uuidStrFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf);
  char z[36];
  (void)argc;
  if( a==0 ) return;
  acorn_uuid_format(a, z);
  sqlite3_result_text(ctx, z, 36, SQLITE_TRANSIENT);
}

static void uuidBlobFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf);
  (void)argc;
  if( a==0 ) return;
  sqlite3_result_blob(ctx, a, 16, SQLITE_TRANSIENT);
}

static void uuidVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf);
  (void)argc;
  if( a==0 ) return;
  sqlite3_result_int(ctx, a[6]>>4);
}

static void uuidTimestampFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf);
  sqlite3_int64 ms = 0;
  int i;
  (void)argc;
  if( a==0 || ((a[6]>>4)!=7 && (a[6]>>4)!=8) ) return;
  for(i=0; i<6; i++) ms = (ms<<8) | a[i];
  sqlite3_result_int64(ctx, ms);
}

static const uuid_kind aKind[] = {
  { "uuid4",           4, 0 },
  { "gen_random_uuid", 4, 0 },
  { "uuid4_blob",      4, 1 },
  { "uuid7",           7, 0 },
  { "uuid7_blob",      7, 1 },
  { "uuid8",           8, 0 },
  { "uuid8_blob",      8, 1 },
};

int acorn_uuid_register(sqlite3 *db){
  static const struct {
    const char *zName;
    int nArg;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aConv[] = {
    { "uuid_str",       1, uuidStrFunc       },
    { "uuid_blob",      1, uuidBlobFunc      },
    { "uuid_version",   1, uuidVersionFunc   },
    { "uuid_timestamp", 1, uuidTimestampFunc },
  };
  int rc = SQLITE_OK;
  size_t i;
  for(i=0; i<sizeof(aKind)/sizeof(aKind[0]) && rc==SQLITE_OK; i++){
    rc = sqlite3_create_function(db, aKind[i].zName, 0,
             SQLITE_UTF8|SQLITE_INNOCUOUS, (void*)&aKind[i], uuidGenFunc, 0, 0);
    if( rc==SQLITE_OK && aKind[i].iVersion!=4 ){
      rc = sqlite3_create_function(db, aKind[i].zName, 1,
             SQLITE_UTF8|SQLITE_INNOCUOUS, (void*)&aKind[i], uuidGenFunc, 0, 0);
    }
  }
  for(i=0; i<sizeof(aConv)/sizeof(aConv[0]) && rc==SQLITE_OK; i++){
    rc = sqlite3_create_function(db, aConv[i].zName, aConv[i].nArg,
             SQLITE_UTF8|SQLITE_INNOCUOUS|SQLITE_DETERMINISTIC, 0,
             aConv[i].xFunc, 0, 0);
  }
  return rc;
}
