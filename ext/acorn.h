/*
** acorn.h: what the parts of acorn share.
**
** Every C file of acorn.so in ext/ includes this header first (ext/auto.c
** is the separate preload library, a plain client of libsqlite3).  It pulls in the SQLite
** extension API the right way for both builds:
**
**   loadable  (dist/acorn.so)    sqlite3ext.h; the API table pointer is
**                                defined once, in acorn.c (EXTENSION_INIT1),
**                                and declared extern everywhere else.
**   static    (dist/libacorn.a)  -DSQLITE_CORE: the macros vanish and calls
**                                go straight to the linked SQLite.
**
** Each feature file exposes exactly one acorn_<feature>_register(db) that
** acorn.c calls from its registration table.  Other cross-file services (the
** random source, the clock, the id makers) are declared here.  Everything
** except sqlite3_acorn_init is built with hidden visibility.
*/
#ifndef ACORN_H
#define ACORN_H

#include "sqlite3ext.h"
#ifndef ACORN_API_OWNER
SQLITE_EXTENSION_INIT3
#endif

#include <stddef.h>
#include <stdint.h>

/* Does the SQLite that loaded acorn have API function X (a member of
** sqlite3_api_routines, e.g. progress_handler)?  A library built with
** SQLITE_OMIT_PROGRESS_CALLBACK (better-sqlite3's) or another SQLITE_OMIT_*
** leaves its entry NULL, and a call would jump to 0.  Linked statically,
** a missing function fails at link time instead. */
#ifdef SQLITE_CORE
# define ACORN_HAS_API(X) 1
#else
# define ACORN_HAS_API(X) (sqlite3_api->X!=0)
#endif

/* Registration of each feature (one file each). */
int acorn_uuid_register(sqlite3 *db);
int acorn_bench_insert_register(sqlite3 *db);
int acorn_cache_register(sqlite3 *db);

/* The one error function.  Sets a printf-style message on a function call,
** prefixed with nothing: callers write "uuid7: ..." themselves so that the
** message names the function or parameter as the user wrote it. */
void acorn_result_error(sqlite3_context *ctx, const char *zFmt, ...);
/* The same for a virtual table: frees any old zErrMsg, sets the new one. */
void acorn_vtab_error(sqlite3_vtab *pVtab, const char *zFmt, ...);
/* zErr (from sqlite3_malloc(); 0: none, the message stays) becomes
** pVtab's message, the old one freed. */
void acorn_vtab_error_take(sqlite3_vtab *pVtab, char *zErr);

/* random.c: a ChaCha20 keystream per thread, seeded from getrandom(2),
** reseeded in a child after fork(), no lock on the hot path. */
void acorn_random(void *pOut, size_t n);
/* random.c: wall clock, unix nanoseconds (CLOCK_REALTIME).  Builds with
** -DACORN_TESTING (test programs only) let acorn_test_clock replace it. */
int64_t acorn_now_ns(void);
#ifdef ACORN_TESTING
extern int64_t (*acorn_test_clock)(void);
/* random.c, test builds only (tests/c/chacha_kat.c): blocks iCtr..iCtr+7
** of ChaCha20 for a key and nonce given as RFC 8439 writes them, in the
** generator's word-interleaved layout; and the calling thread's generator
** set to a known key. */
void acorn_test_chacha_blocks8(const unsigned char aKey[32], uint32_t iCtr,
                               const unsigned char aNonce[12],
                               unsigned char aOut[512]);
void acorn_test_random_key(const unsigned char aKey[32]);
#endif

/* uuid.c: the id makers, for other features (bench_insert) to share. */
void acorn_uuid4(unsigned char a[16]);
void acorn_uuid7(unsigned char a[16]);   /* strictly increasing in-process */
void acorn_uuid8(unsigned char a[16]);   /* strictly increasing in-process */
void acorn_uuid_format(const unsigned char a[16], char z[36]); /* no NUL */

/* sha1.c: SHA-1 (FIPS 180-4), for version 5 UUIDs. */
typedef struct acorn_sha1 acorn_sha1;
struct acorn_sha1 {
  uint32_t aH[5];           /* the hash state */
  uint64_t nByte;           /* bytes taken so far */
  unsigned char aBuf[64];   /* the partial block, nByte%64 bytes */
};
void acorn_sha1_init(acorn_sha1 *p);
void acorn_sha1_update(acorn_sha1 *p, const void *pData, size_t n);
void acorn_sha1_final(acorn_sha1 *p, unsigned char aDigest[20]);

#endif /* ACORN_H */
