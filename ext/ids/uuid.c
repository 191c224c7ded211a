/*
** uuid.c: RFC 9562 UUIDs (versions 4, 5, 7 and 8, nil and max) and ULIDs,
** as text or 16-byte blobs, under acorn's names and the names of SQLite's
** ext/misc/uuid.c, sqlean, PostgreSQL 18 and turso.
**
** GENERATORS (SQLITE_INNOCUOUS; not deterministic)
**
**   uuid4()              TEXT  random, version 4, lowercase 8-4-4-4-12
**   uuid4_blob()         BLOB  the same as 16 bytes
**   uuid7()              TEXT  version 7, time-ordered
**   uuid7(ms)            TEXT  version 7 with the given unix milliseconds
**   uuid7_blob([ms])     BLOB
**   uuid8()              TEXT  version 8, time-ordered, sub-ms precision
**   uuid8(ms)            TEXT  version 8 with the given unix milliseconds
**   uuid8_blob([ms])     BLOB
**   uuidv7(shift)        TEXT  version 7 at now shifted by SQLite date
**                              modifier text: uuidv7('-1 hour')
**   ulid()               TEXT  a ULID: uuid7()'s 128 bits in 26 characters
**                              of Crockford base32, uppercase
**   ulid_blob()          BLOB  the same as 16 bytes (= uuid7_blob())
**
**     SELECT uuid7(1700000000000);  -- '018bcfe5-6800-7xxx-yxxx-xxxxxxxxxxxx'
**
** Exact aliases (one implementation, registered under each name):
**   uuid() (SQLite), gen_random_uuid() (sqlean, PostgreSQL, turso),
**   uuidv4() (PostgreSQL), uuid4_str() (turso)      = uuid4()
**   uuidv7() (PostgreSQL), uuid7_str() (turso)      = uuid7()
**   ulid_blob()                                     = uuid7_blob()
**
** ms must be an integer in 0..281474976710655 (2^48-1): an INTEGER, or a
** REAL with no fractional part (JavaScript numbers bind as REAL).  Anything
** else, NULL and TEXT included, is an error: "uuid7: ms must be an integer
** in 0..281474976710655 (below 10^11: unix seconds)" (the message names the
** function as called).  A number below 10^11 is unix seconds, as sqlean's
** uuid7(seconds) takes them: every millisecond time after 1973-03-03 is
** above it, and every second time before the year 5138 below, so a query
** written for sqlean gets the same time.
**
** shift must be TEXT that SQLite's date functions take as one modifier
** ('-1 hour', '+30 days', 'start of day', ...) and that leaves the time in
** 1970..9999; anything else, NULL included, is an error: "uuidv7: shift
** must be a date modifier such as '-1 hour' or '+30 days' giving a time in
** 1970..9999".
**
** CONSTANTS (SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC)
**
**   uuid_nil(), uuid_max()            TEXT  all bits 0, all bits 1 (5.9, 5.10)
**   uuid_nil_blob(), uuid_max_blob()  BLOB
**
** NAME-BASED (SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC)
**
**   uuid5(ns, name)      TEXT  version 5: SHA-1 of ns's 16 bytes then name
**   uuid5_blob(ns, name) BLOB
**
**     SELECT uuid5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org');
**     -- '886313e1-3b8a-5372-9b90-0c9aee199e5d'
**
** ns is a UUID as the converters accept it; anything else gives NULL.
** name: TEXT is hashed as its UTF-8 bytes, BLOB as its bytes, INTEGER as
** its decimal text (uuid5(ns, 42) = uuid5(ns, '42')); NULL gives NULL; a
** REAL is an error, "uuid5: name must be TEXT, BLOB or INTEGER", because its
** text form differs between SQLite versions.
**
** CONVERTERS (SQLITE_INNOCUOUS | SQLITE_DETERMINISTIC)
**
**   uuid_str(X)               TEXT     canonical lowercase form
**   uuid_blob(X)              BLOB     16 bytes
**   uuid_version(X)           INTEGER  the version nibble (0..15)
**   uuid_timestamp(X)         INTEGER  unix ms of a version 1, 6, 7 or 8
**                                      UUID (1 and 6: floor of the 100-ns
**                                      count), else NULL
**   uuid_extract_version(X)   INTEGER  PostgreSQL's: the version nibble of
**                                      a UUID of variant 10, else NULL
**   uuid_extract_timestamp(X) TEXT     PostgreSQL's: the time of a version
**                                      1, 6 or 7 UUID of variant 10, in UTC
**                                      as 'YYYY-MM-DD HH:MM:SS.SSS' (what
**                                      datetime(x, 'unixepoch', 'subsec')
**                                      writes), else NULL; NULL also after
**                                      year 9999, as datetime() gives
**   uuid7_timestamp_ms(X)     INTEGER  sqlean's: unix ms of a version 7
**                                      UUID, else NULL
**   ulid_timestamp(X)         INTEGER  unix ms of a ULID (its first 48 bits)
**   ulid_to_uuid(X)           TEXT     the UUID of a ULID's 128 bits
**   uuid_to_ulid(X)           TEXT     the ULID of a UUID's 128 bits
**
** A UUID X is accepted exactly as SQLite's ext/misc/uuid.c accepts it: a
** BLOB of 16 bytes, or TEXT made of an optional '{', 32 hex digits of
** either case with at most one '-' before any pair of digits, an optional
** '}', and nothing after.  A ULID X (ulid_timestamp, ulid_to_uuid) is a
** BLOB of 16 bytes, or TEXT of exactly 26 Crockford base32 characters of
** either case, the first one 0-7 (128 bits), with I and L read as 1 and O
** as 0.  Everything else (NULL, other text, a blob of another length, an
** INTEGER, a REAL) gives NULL.
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
** A ULID (48-bit ms, then 80 bits) made by ulid() is a uuid7(): the same
** sequence, so its 80 bits after the time hold the version, the counter,
** the variant and 62 random bits, and ulid_to_uuid(ulid()) is a valid
** version 7 UUID.  Text: the 128 bits as 26 base32 digits, most
** significant first, the first digit holding only the top 3 bits.
**
** Timestamps of versions 1 and 6 (5.1, 5.6) count 100-ns intervals since
** 1582-10-15 in 60 bits: version 1 stores time_low (32 bits), time_mid
** (16), then the top 12 bits beside the version; version 6 stores them
** most significant first.  ms = floor((count - 122192928000000000) / 10^4).
**
** Version 5 (5.5): SHA-1 over the namespace's 16 bytes then the name; the
** first 16 bytes of the digest, with version 0101 and variant 10 set.
**
** uuidv7(shift) asks SQLite on the calling connection for
** julianday(now_seconds, 'unixepoch', shift) (the date functions of every
** SQLite from 3.38 to 3.52 take that), turns it back into ms, and makes a
** uuid7(ms) of it: time bits shifted, counter and rand_b random.  It is
** outside the monotonic sequence below, like every call with an explicit
** time: shifted ids sort by their shifted time, not by when they were made.
**
** Monotonicity.  Per version, one process-wide 64-bit word holds the last
** 60 time bits handed out (ms<<12 | rand_a) and is advanced with a
** compare-and-swap loop, so every value is greater than every value made
** before it in the process, by any thread or connection:
**   v7: a new millisecond starts the counter at a random 11-bit value (top
**       bit clear, leaving at least 2048 steps); otherwise last+1.  Counter
**       overflow carries into the millisecond field, so the timestamp runs
**       ahead of the clock rather than repeat; a clock that steps back keeps
**       the last timestamp.  uuid7(), ulid() and their blob forms share it.
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
#define UUID_SECONDS_BELOW 100000000000LL  /* 10^11: below it, seconds */

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

/* How a generator writes its id. */
#define UUID_FORM_TEXT 0     /* 8-4-4-4-12 lowercase */
#define UUID_FORM_BLOB 1     /* 16 bytes */
#define UUID_FORM_ULID 2     /* 26 characters of Crockford base32 */

/* What each generator makes: version, form, and its SQL name. */
typedef struct uuid_kind uuid_kind;
struct uuid_kind {
  const char *zName;
  int iVersion;
  int iForm;
};

/* The two Crockford base32 digits of each 10-bit value. */
static const char aUlidPair[2049] =
  "000102030405060708090A0B0C0D0E0F0G0H0J0K0M0N0P0Q0R0S0T0V0W0X0Y0Z"
  "101112131415161718191A1B1C1D1E1F1G1H1J1K1M1N1P1Q1R1S1T1V1W1X1Y1Z"
  "202122232425262728292A2B2C2D2E2F2G2H2J2K2M2N2P2Q2R2S2T2V2W2X2Y2Z"
  "303132333435363738393A3B3C3D3E3F3G3H3J3K3M3N3P3Q3R3S3T3V3W3X3Y3Z"
  "404142434445464748494A4B4C4D4E4F4G4H4J4K4M4N4P4Q4R4S4T4V4W4X4Y4Z"
  "505152535455565758595A5B5C5D5E5F5G5H5J5K5M5N5P5Q5R5S5T5V5W5X5Y5Z"
  "606162636465666768696A6B6C6D6E6F6G6H6J6K6M6N6P6Q6R6S6T6V6W6X6Y6Z"
  "707172737475767778797A7B7C7D7E7F7G7H7J7K7M7N7P7Q7R7S7T7V7W7X7Y7Z"
  "808182838485868788898A8B8C8D8E8F8G8H8J8K8M8N8P8Q8R8S8T8V8W8X8Y8Z"
  "909192939495969798999A9B9C9D9E9F9G9H9J9K9M9N9P9Q9R9S9T9V9W9X9Y9Z"
  "A0A1A2A3A4A5A6A7A8A9AAABACADAEAFAGAHAJAKAMANAPAQARASATAVAWAXAYAZ"
  "B0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFBGBHBJBKBMBNBPBQBRBSBTBVBWBXBYBZ"
  "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECFCGCHCJCKCMCNCPCQCRCSCTCVCWCXCYCZ"
  "D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFDGDHDJDKDMDNDPDQDRDSDTDVDWDXDYDZ"
  "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFEGEHEJEKEMENEPEQERESETEVEWEXEYEZ"
  "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFFFGFHFJFKFMFNFPFQFRFSFTFVFWFXFYFZ"
  "G0G1G2G3G4G5G6G7G8G9GAGBGCGDGEGFGGGHGJGKGMGNGPGQGRGSGTGVGWGXGYGZ"
  "H0H1H2H3H4H5H6H7H8H9HAHBHCHDHEHFHGHHHJHKHMHNHPHQHRHSHTHVHWHXHYHZ"
  "J0J1J2J3J4J5J6J7J8J9JAJBJCJDJEJFJGJHJJJKJMJNJPJQJRJSJTJVJWJXJYJZ"
  "K0K1K2K3K4K5K6K7K8K9KAKBKCKDKEKFKGKHKJKKKMKNKPKQKRKSKTKVKWKXKYKZ"
  "M0M1M2M3M4M5M6M7M8M9MAMBMCMDMEMFMGMHMJMKMMMNMPMQMRMSMTMVMWMXMYMZ"
  "N0N1N2N3N4N5N6N7N8N9NANBNCNDNENFNGNHNJNKNMNNNPNQNRNSNTNVNWNXNYNZ"
  "P0P1P2P3P4P5P6P7P8P9PAPBPCPDPEPFPGPHPJPKPMPNPPPQPRPSPTPVPWPXPYPZ"
  "Q0Q1Q2Q3Q4Q5Q6Q7Q8Q9QAQBQCQDQEQFQGQHQJQKQMQNQPQQQRQSQTQVQWQXQYQZ"
  "R0R1R2R3R4R5R6R7R8R9RARBRCRDRERFRGRHRJRKRMRNRPRQRRRSRTRVRWRXRYRZ"
  "S0S1S2S3S4S5S6S7S8S9SASBSCSDSESFSGSHSJSKSMSNSPSQSRSSSTSVSWSXSYSZ"
  "T0T1T2T3T4T5T6T7T8T9TATBTCTDTETFTGTHTJTKTMTNTPTQTRTSTTTVTWTXTYTZ"
  "V0V1V2V3V4V5V6V7V8V9VAVBVCVDVEVFVGVHVJVKVMVNVPVQVRVSVTVVVWVXVYVZ"
  "W0W1W2W3W4W5W6W7W8W9WAWBWCWDWEWFWGWHWJWKWMWNWPWQWRWSWTWVWWWXWYWZ"
  "X0X1X2X3X4X5X6X7X8X9XAXBXCXDXEXFXGXHXJXKXMXNXPXQXRXSXTXVXWXXXYXZ"
  "Y0Y1Y2Y3Y4Y5Y6Y7Y8Y9YAYBYCYDYEYFYGYHYJYKYMYNYPYQYRYSYTYVYWYXYYYZ"
  "Z0Z1Z2Z3Z4Z5Z6Z7Z8Z9ZAZBZCZDZEZFZGZHZJZKZMZNZPZQZRZSZTZVZWZXZYZZ";

/* The 26 characters of the ULID of a[16]: the 128 bits read as 130 with
** two zero bits on top, so the first two characters are a[0] and each
** further 5 bytes make 8 characters, two at a time. */
static void ulidFormat(const unsigned char a[16], char z[26]){
  int g;
  memcpy(z, &aUlidPair[2*a[0]], 2);
  for(g=0; g<3; g++){
    const unsigned char *p = a + 1 + 5*g;
    uint64_t v = (uint64_t)p[0]<<32 | (uint64_t)p[1]<<24 | (uint64_t)p[2]<<16
               | (uint64_t)p[3]<<8 | p[4];
    char *zOut = z + 2 + 8*g;
    memcpy(zOut,   &aUlidPair[2*((v>>30) & 1023)], 2);
    memcpy(zOut+2, &aUlidPair[2*((v>>20) & 1023)], 2);
    memcpy(zOut+4, &aUlidPair[2*((v>>10) & 1023)], 2);
    memcpy(zOut+6, &aUlidPair[2*(v & 1023)], 2);
  }
}

/* Crockford digit values of either case, I and L as 1, O as 0; 32 for
** anything else. */
static const unsigned char aUlidVal[256] = {
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0x00 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0x10 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0x20 */
   0, 1, 2, 3, 4, 5, 6, 7, 8, 9,32,32,32,32,32,32,  /* 0x30 */
  32,10,11,12,13,14,15,16,17, 1,18,19, 1,20,21, 0,  /* 0x40 */
  22,23,24,25,26,32,27,28,29,30,31,32,32,32,32,32,  /* 0x50 */
  32,10,11,12,13,14,15,16,17, 1,18,19, 1,20,21, 0,  /* 0x60 */
  22,23,24,25,26,32,27,28,29,30,31,32,32,32,32,32,  /* 0x70 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0x80 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0x90 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xa0 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xb0 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xc0 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xd0 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xe0 */
  32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,32,  /* 0xf0 */
};

/* Parse 26 base32 characters.  Return 0 on success. */
static int ulidParseText(const unsigned char *z, int n, unsigned char a[16]){
  uint64_t hi = 0, lo = 0;
  int i;
  if( n!=26 ) return 1;
  for(i=0; i<26; i++){
    unsigned v = aUlidVal[z[i]];
    if( v>31 || (i==0 && v>7) ) return 1;
    hi = hi<<5 | lo>>59;
    lo = lo<<5 | v;
  }
  for(i=0; i<8; i++){
    a[i] = (unsigned char)(hi>>(56-8*i));
    a[i+8] = (unsigned char)(lo>>(56-8*i));
  }
  return 0;
}

/* The 16 bytes of X, in aBuf or in X itself, or 0 if X is not a UUID
** (bUlid: not a ULID).  A 16-byte blob is taken as the bytes either way. */
static const unsigned char *uuidInput(sqlite3_value *pX, unsigned char *aBuf,
                                      int bUlid){
  switch( sqlite3_value_type(pX) ){
    case SQLITE_TEXT: {
      const unsigned char *z = sqlite3_value_text(pX);
      if( z==0 ) return 0;
      if( bUlid ? ulidParseText(z, sqlite3_value_bytes(pX), aBuf)
                : uuidParseText(z, aBuf) ){
        return 0;
      }
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

/* The first 48 bits of a[], big-endian: the unix ms of a v7 or v8 UUID
** and of a ULID, the high time bits of a v6. */
static int64_t uuidBe48(const unsigned char *a){
  int64_t t = 0;
  int i;
  for(i=0; i<6; i++) t = (t<<8) | a[i];
  return t;
}

static void uuidResult(sqlite3_context *ctx, const unsigned char a[16], int iForm){
  if( iForm==UUID_FORM_BLOB ){
    sqlite3_result_blob(ctx, a, 16, SQLITE_TRANSIENT);
  }else if( iForm==UUID_FORM_ULID ){
    char z[26];
    ulidFormat(a, z);
    sqlite3_result_text(ctx, z, 26, SQLITE_TRANSIENT);
  }else{
    char z[36];
    acorn_uuid_format(a, z);
    sqlite3_result_text(ctx, z, 36, SQLITE_TRANSIENT);
  }
}

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
      acorn_result_error(ctx, "%s: ms must be an integer in 0..%lld (below"
                         " 10^11: unix seconds)", pKind->zName, UUID_MAX_MS);
      return;
    }
    if( ms<UUID_SECONDS_BELOW ) ms *= 1000;    /* seconds, as sqlean's */
    uuidAtMs(a, pKind->iVersion, (uint64_t)ms);
  }else if( pKind->iVersion==7 ){
    acorn_uuid7(a);
  }else if( pKind->iVersion==8 ){
    acorn_uuid8(a);
  }else{
    acorn_uuid4(a);
  }
  uuidResult(ctx, a, pKind->iForm);
}

/* julianday(now, 'unixepoch', zShift) on the calling connection, in unix
** ms, into *pMs.  SQLITE_OK, SQLITE_EMPTY if SQLite gives no date (a bad
** modifier), or an error code. */
static int uuidShiftedMs(sqlite3 *db, const char *zShift, int64_t *pMs){
  sqlite3_stmt *pStmt = 0;
  int64_t now = acorn_now_ns()/1000000;
  int rc = sqlite3_prepare_v2(db, "SELECT julianday(?1, 'unixepoch', ?2)", -1,
                              &pStmt, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_double(pStmt, 1, (double)now/1000.0);
    sqlite3_bind_text(pStmt, 2, zShift, -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW && sqlite3_column_type(pStmt, 0)==SQLITE_FLOAT ){
      /* days since the unix epoch, to ms; a julianday is exact to ~20 us */
      double r = (sqlite3_column_double(pStmt, 0) - 2440587.5)*86400000.0;
      *pMs = (int64_t)(r<0 ? r-0.5 : r+0.5);
      rc = SQLITE_OK;
    }else if( rc==SQLITE_ROW ){
      rc = SQLITE_EMPTY;
    }
  }
  sqlite3_finalize(pStmt);
  return rc;
}

/* uuidv7(shift): PostgreSQL's, with SQLite's date modifiers as the shift. */
static void uuidV7ShiftFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int64_t ms = -1;
  unsigned char a[16];
  (void)argc;
  if( sqlite3_value_type(argv[0])==SQLITE_TEXT ){
    const char *zShift = (const char*)sqlite3_value_text(argv[0]);
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    int rc = zShift ? uuidShiftedMs(db, zShift, &ms) : SQLITE_NOMEM;
    if( rc==SQLITE_NOMEM ){
      sqlite3_result_error_nomem(ctx);
      return;
    }
    if( rc!=SQLITE_OK && rc!=SQLITE_EMPTY ){
      acorn_result_error(ctx, "uuidv7: %s", sqlite3_errmsg(db));
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    if( rc==SQLITE_EMPTY ) ms = -1;
  }
  if( ms<0 || ms>UUID_MAX_MS ){
    acorn_result_error(ctx, "uuidv7: shift must be a date modifier such as "
                       "'-1 hour' or '+30 days' giving a time in 1970..9999");
    return;
  }
  uuidAtMs(a, 7, (uint64_t)ms);
  uuidResult(ctx, a, UUID_FORM_TEXT);
}

/* uuid_nil(), uuid_max() and their blob forms: user data is the kind, its
** iVersion the fill byte (0 or 0xff). */
static void uuidConstFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const uuid_kind *pKind = (const uuid_kind*)sqlite3_user_data(ctx);
  unsigned char a[16];
  (void)argc; (void)argv;
  memset(a, pKind->iVersion, 16);
  uuidResult(ctx, a, pKind->iForm);
}

/* uuid5(ns, name) and uuid5_blob(ns, name). */
static void uuid5Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const uuid_kind *pKind = (const uuid_kind*)sqlite3_user_data(ctx);
  unsigned char aBuf[16], aDigest[20];
  const unsigned char *aNs;
  const void *pName;
  int nName;
  acorn_sha1 sha;
  (void)argc;
  switch( sqlite3_value_type(argv[1]) ){
    case SQLITE_NULL:
      return;
    case SQLITE_FLOAT:
      acorn_result_error(ctx, "%s: name must be TEXT, BLOB or INTEGER",
                         pKind->zName);
      return;
    case SQLITE_BLOB:
      pName = sqlite3_value_blob(argv[1]);
      nName = sqlite3_value_bytes(argv[1]);
      if( pName==0 && nName>0 ){
        sqlite3_result_error_nomem(ctx);
        return;
      }
      break;
    default:   /* TEXT, or an INTEGER as its decimal text */
      pName = sqlite3_value_text(argv[1]);
      if( pName==0 ){
        sqlite3_result_error_nomem(ctx);
        return;
      }
      nName = sqlite3_value_bytes(argv[1]);
      break;
  }
  aNs = uuidInput(argv[0], aBuf, 0);
  if( aNs==0 ) return;
  acorn_sha1_init(&sha);
  acorn_sha1_update(&sha, aNs, 16);
  if( nName>0 ) acorn_sha1_update(&sha, pName, (size_t)nName);
  acorn_sha1_final(&sha, aDigest);
  aDigest[6] = (unsigned char)((aDigest[6] & 0x0f) | 0x50);
  uuidSetVariant(aDigest);
  uuidResult(ctx, aDigest, pKind->iForm);
}

/* The converters: how the argument is read (a UUID, or a ULID) and how
** the same 128 bits are written. */
typedef struct uuid_conv uuid_conv;
struct uuid_conv {
  int bUlidIn;          /* the argument is a ULID, else a UUID */
  int iForm;            /* UUID_FORM_* of the result */
};
static const uuid_conv aConv[] = {
  /* 0 uuid_str */     { 0, UUID_FORM_TEXT },
  /* 1 uuid_blob */    { 0, UUID_FORM_BLOB },
  /* 2 uuid_to_ulid */ { 0, UUID_FORM_ULID },
  /* 3 ulid_to_uuid */ { 1, UUID_FORM_TEXT },
};

static void uuidConvertFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  const uuid_conv *pConv = (const uuid_conv*)sqlite3_user_data(ctx);
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf, pConv->bUlidIn);
  (void)argc;
  if( a ) uuidResult(ctx, a, pConv->iForm);
}

/* ulid_timestamp(X): the first 48 bits of a ULID. */
static void ulidTimestampFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidInput(argv[0], aBuf, 1);
  (void)argc;
  if( a ) sqlite3_result_int64(ctx, uuidBe48(a));
}

/* What a version or timestamp reader answers for: a bit per version, and
** whether the variant must be 10 (PostgreSQL's names) and the result is
** date text. */
typedef struct uuid_reader uuid_reader;
struct uuid_reader {
  unsigned mVersion;     /* 1<<v for each version v with an answer */
  int bVariant10;        /* NULL unless the variant bits are 10 */
  int bText;             /* 'YYYY-MM-DD HH:MM:SS.SSS' instead of ms */
};

/* The UUID a[] under pReader's rules, or 0 for NULL. */
static const unsigned char *uuidReaderInput(sqlite3_context *ctx,
                                            sqlite3_value *pX,
                                            unsigned char *aBuf){
  const uuid_reader *pReader = (const uuid_reader*)sqlite3_user_data(ctx);
  const unsigned char *a = uuidInput(pX, aBuf, 0);
  if( a==0 ) return 0;
  if( (pReader->mVersion & (1u<<(a[6]>>4)))==0 ) return 0;
  if( pReader->bVariant10 && (a[8] & 0xc0)!=0x80 ) return 0;
  return a;
}

static void uuidVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *a = uuidReaderInput(ctx, argv[0], aBuf);
  (void)argc;
  if( a==0 ) return;
  sqlite3_result_int(ctx, a[6]>>4);
}

/* Unix ms of a version 1, 6, 7 or 8 UUID (versions 1 and 6: floor). */
static sqlite3_int64 uuidMs(const unsigned char *a){
  int iVersion = a[6]>>4;
  int64_t t;
  if( iVersion==7 || iVersion==8 ) return uuidBe48(a);
  if( iVersion==1 ){
    t = (int64_t)(a[6] & 0x0f)<<56 | (int64_t)a[7]<<48
      | (int64_t)a[4]<<40 | (int64_t)a[5]<<32
      | (int64_t)a[0]<<24 | (int64_t)a[1]<<16 | (int64_t)a[2]<<8 | a[3];
  }else{
    t = uuidBe48(a)<<12 | (int64_t)(a[6] & 0x0f)<<8 | a[7];
  }
  /* 100-ns intervals from 1582-10-15 to 1970-01-01: 122192928000000000 */
  t -= 122192928000000000LL;
  return t>=0 ? t/10000 : -((-t + 9999)/10000);
}

/* v (>=0) as n decimal digits with leading zeros. */
static void uuidDigits(char *z, int n, int v){
  while( n-- ){
    z[n] = (char)('0' + v%10);
    v /= 10;
  }
}

/* ms as 'YYYY-MM-DD HH:MM:SS.SSS' in UTC into z[24] (with its NUL), or
** return 1 if the year is outside 0000..9999. */
static int uuidDateText(sqlite3_int64 ms, char z[24]){
  int64_t days = ms>=0 ? ms/86400000 : -((-ms + 86399999)/86400000);
  int64_t msDay = ms - days*86400000;
  /* civil date from days since 1970-01-01, in 400-year eras from 0000-03-01 */
  int64_t d = days + 719468;
  int64_t era = (d>=0 ? d : d-146096)/146097;
  int64_t doe = d - era*146097;
  int64_t yoe = (doe - doe/1460 + doe/36524 - doe/146096)/365;
  int64_t doy = doe - (365*yoe + yoe/4 - yoe/100);
  int64_t mp = (5*doy + 2)/153;
  int iDay = (int)(doy - (153*mp + 2)/5 + 1);
  int iMonth = (int)(mp<10 ? mp+3 : mp-9);
  int64_t iYear = yoe + era*400 + (iMonth<=2);
  if( iYear<0 || iYear>9999 ) return 1;
  uuidDigits(z, 4, (int)iYear);            z[4] = '-';
  uuidDigits(z+5, 2, iMonth);              z[7] = '-';
  uuidDigits(z+8, 2, iDay);                z[10] = ' ';
  uuidDigits(z+11, 2, (int)(msDay/3600000));  z[13] = ':';
  uuidDigits(z+14, 2, (int)(msDay/60000%60)); z[16] = ':';
  uuidDigits(z+17, 2, (int)(msDay/1000%60));  z[19] = '.';
  uuidDigits(z+20, 3, (int)(msDay%1000));     z[23] = 0;
  return 0;
}

static void uuidTimestampFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const uuid_reader *pReader = (const uuid_reader*)sqlite3_user_data(ctx);
  unsigned char aBuf[16];
  const unsigned char *a = uuidReaderInput(ctx, argv[0], aBuf);
  sqlite3_int64 ms;
  (void)argc;
  if( a==0 ) return;
  ms = uuidMs(a);
  if( pReader->bText ){
    char z[24];
    if( uuidDateText(ms, z) ) return;
    sqlite3_result_text(ctx, z, 23, SQLITE_TRANSIENT);
  }else{
    sqlite3_result_int64(ctx, ms);
  }
}

#define V(n) (1u<<(n))
static const uuid_reader aReader[] = {
  /* 0 uuid_version */           { 0xffff,               0, 0 },
  /* 1 uuid_extract_version */   { 0xffff,               1, 0 },
  /* 2 uuid_timestamp */         { V(1)|V(6)|V(7)|V(8),  0, 0 },
  /* 3 uuid_extract_timestamp */ { V(1)|V(6)|V(7),       1, 1 },
  /* 4 uuid7_timestamp_ms */     { V(7),                 0, 0 },
};
#undef V

enum {
  K_UUID4, K_UUID4_BLOB, K_UUID7, K_UUID7_BLOB, K_UUID8, K_UUID8_BLOB,
  K_ULID, K_NIL, K_NIL_BLOB, K_MAX, K_MAX_BLOB, K_UUID5, K_UUID5_BLOB
};
static const uuid_kind aKind[] = {
  { "uuid4",         4,    UUID_FORM_TEXT },
  { "uuid4_blob",    4,    UUID_FORM_BLOB },
  { "uuid7",         7,    UUID_FORM_TEXT },
  { "uuid7_blob",    7,    UUID_FORM_BLOB },
  { "uuid8",         8,    UUID_FORM_TEXT },
  { "uuid8_blob",    8,    UUID_FORM_BLOB },
  { "ulid",          7,    UUID_FORM_ULID },
  { "uuid_nil",      0,    UUID_FORM_TEXT },   /* iVersion: the fill byte */
  { "uuid_nil_blob", 0,    UUID_FORM_BLOB },
  { "uuid_max",      0xff, UUID_FORM_TEXT },
  { "uuid_max_blob", 0xff, UUID_FORM_BLOB },
  { "uuid5",         5,    UUID_FORM_TEXT },
  { "uuid5_blob",    5,    UUID_FORM_BLOB },
};

#define UUID_GEN  (SQLITE_UTF8|SQLITE_INNOCUOUS)
#define UUID_PURE (SQLITE_UTF8|SQLITE_INNOCUOUS|SQLITE_DETERMINISTIC)

/* The registration table: every name, aliases included, once. */
static const struct {
  const char *zName;
  int nArg;
  int flags;
  void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  const void *pArg;       /* user data: a uuid_kind, uuid_reader or uuid_conv */
} aUuidFunc[] = {
  { "uuid4",                  0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4] },
  { "uuid",                   0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4] },
  { "gen_random_uuid",        0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4] },
  { "uuidv4",                 0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4] },
  { "uuid4_str",              0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4] },
  { "uuid4_blob",             0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID4_BLOB] },
  { "uuid7",                  0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7] },
  { "uuidv7",                 0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7] },
  { "uuid7_str",              0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7] },
  { "uuid7",                  1, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7] },
  { "uuidv7",                 1, UUID_GEN,  uuidV7ShiftFunc, 0 },
  { "uuid7_blob",             0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7_BLOB] },
  { "ulid_blob",              0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7_BLOB] },
  { "uuid7_blob",             1, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID7_BLOB] },
  { "uuid8",                  0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID8] },
  { "uuid8",                  1, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID8] },
  { "uuid8_blob",             0, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID8_BLOB] },
  { "uuid8_blob",             1, UUID_GEN,  uuidGenFunc,     &aKind[K_UUID8_BLOB] },
  { "ulid",                   0, UUID_GEN,  uuidGenFunc,     &aKind[K_ULID] },
  { "uuid_nil",               0, UUID_PURE, uuidConstFunc,   &aKind[K_NIL] },
  { "uuid_nil_blob",          0, UUID_PURE, uuidConstFunc,   &aKind[K_NIL_BLOB] },
  { "uuid_max",               0, UUID_PURE, uuidConstFunc,   &aKind[K_MAX] },
  { "uuid_max_blob",          0, UUID_PURE, uuidConstFunc,   &aKind[K_MAX_BLOB] },
  { "uuid5",                  2, UUID_PURE, uuid5Func,       &aKind[K_UUID5] },
  { "uuid5_blob",             2, UUID_PURE, uuid5Func,       &aKind[K_UUID5_BLOB] },
  { "uuid_str",               1, UUID_PURE, uuidConvertFunc, &aConv[0] },
  { "uuid_blob",              1, UUID_PURE, uuidConvertFunc, &aConv[1] },
  { "uuid_version",           1, UUID_PURE, uuidVersionFunc, &aReader[0] },
  { "uuid_extract_version",   1, UUID_PURE, uuidVersionFunc, &aReader[1] },
  { "uuid_timestamp",         1, UUID_PURE, uuidTimestampFunc, &aReader[2] },
  { "uuid_extract_timestamp", 1, UUID_PURE, uuidTimestampFunc, &aReader[3] },
  { "uuid7_timestamp_ms",     1, UUID_PURE, uuidTimestampFunc, &aReader[4] },
  { "uuid_to_ulid",           1, UUID_PURE, uuidConvertFunc, &aConv[2] },
  { "ulid_to_uuid",           1, UUID_PURE, uuidConvertFunc, &aConv[3] },
  { "ulid_timestamp",         1, UUID_PURE, ulidTimestampFunc, 0 },
};

int acorn_uuid_register(sqlite3 *db){
  int rc = SQLITE_OK;
  size_t i;
  for(i=0; i<sizeof(aUuidFunc)/sizeof(aUuidFunc[0]) && rc==SQLITE_OK; i++){
    rc = sqlite3_create_function(db, aUuidFunc[i].zName, aUuidFunc[i].nArg,
             aUuidFunc[i].flags, (void*)aUuidFunc[i].pArg, aUuidFunc[i].xFunc,
             0, 0);
  }
  return rc;
}
