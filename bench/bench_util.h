/*
** bench_util.h: the helpers every C program in bench/ would otherwise
** carry its own copy of: the clock, the SQL calls that end the program on
** any error, the random numbers and the key names.
**
** Each program includes it from its own directory (#include
** "bench_util.h"), so the build lines of the Makefile and bench/uuid.sh need
** no -I.  The functions are static inline: one program uses only some of
** them, and an unused static inline is neither warned about (-Wall -Werror)
** nor linked, so bench/clock_cost.c builds without -lsqlite3.
**
** A program defines BENCH_NAME, the name its errors start with, before the
** include.  Any failure prints "BENCH_NAME: what: why" and exits 1: a run
** that went wrong has no number worth keeping.
*/
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#ifndef BENCH_NAME
# error "define BENCH_NAME, the program's name for its errors, before including bench_util.h"
#endif

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds, and in seconds. */
static inline long long benchClockNs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec*1000000000 + ts.tv_nsec;
}
static inline double benchSeconds(void){
  return benchClockNs()*1e-9;
}

/* The median of a[0..n-1], which it sorts. */
static inline int benchCmpDouble(const void *a, const void *b){
  double x = *(const double*)a, y = *(const double*)b;
  return x<y ? -1 : x>y;
}
static inline double benchMedian(double *a, int n){
  qsort(a, n, sizeof(double), benchCmpDouble);
  return n%2 ? a[n/2] : (a[n/2-1]+a[n/2])/2;
}

/* Ends the program: "NAME: zWhat: " and db's last error (nothing without
** db). */
static inline void benchDie(sqlite3 *db, const char *zWhat){
  fprintf(stderr, BENCH_NAME ": %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

/* Ends the program unless rc is a success (SQLITE_OK, _ROW or _DONE). */
static inline void benchCheck(int rc, sqlite3 *db, const char *zWhat){
  if( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE ) benchDie(db, zWhat);
}

static inline void benchExec(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, BENCH_NAME ": %s: %s\n", zSql, zErr);
    exit(1);
  }
}

static inline sqlite3_stmt *benchPrepare(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &p, 0)!=SQLITE_OK ) benchDie(db, zSql);
  return p;
}

/* The first column of the first row of zSql, which must have a row. */
static inline long long benchInt64(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = benchPrepare(db, zSql);
  long long v;
  if( sqlite3_step(p)!=SQLITE_ROW ) benchDie(db, zSql);
  v = sqlite3_column_int64(p, 0);
  sqlite3_finalize(p);
  return v;
}

/* zPath opened as every benchmark here runs: journal_mode=WAL,
** synchronous=NORMAL. */
static inline sqlite3 *benchOpenWal(const char *zPath){
  sqlite3 *db = 0;
  if( sqlite3_open(zPath, &db)!=SQLITE_OK ) benchDie(db, "open");
  benchExec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
  return db;
}

/* Loads the extension zExt (acorn) on db. */
static inline void benchLoad(sqlite3 *db, const char *zExt){
  char *zErr = 0;
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, BENCH_NAME ": load %s: %s\n", zExt, zErr);
    exit(1);
  }
}

/* Removes the database zPath and the files SQLite keeps beside it, so a
** run starts from nothing and leaves nothing. */
static inline void benchRemoveDb(const char *zPath){
  static const char *const azSuffix[] = { "-wal", "-shm", "-journal", "" };
  char z[4200];
  int k;
  for(k=0; k<4; k++){
    snprintf(z, sizeof(z), "%s%s", zPath, azSuffix[k]);
    remove(z);
  }
}

/* Pages db's page cache wrote since the last call (SQLITE_DBSTATUS_CACHE_WRITE,
** reset by each call). */
static inline long long benchPagesWritten(sqlite3 *db){
  int cur = 0, hi = 0;
  sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1);
  return cur;
}

/* xorshift64: the next number of the sequence in *pState (never 0). */
static inline unsigned long long benchRandom(unsigned long long *pState){
  unsigned long long x = *pState;
  x ^= x<<13; x ^= x>>7; x ^= x<<17;
  return *pState = x;
}

/* The i-th number of a fixed permutation of 0..n-1 (i*step mod n, step
** coprime to n), so reads land all over the table and every key is
** distinct. */
static inline long long benchPermute(long long i, long long n){
  long long step = 2654435761LL % n;
  while( step<2 ) step += 1;
  for(;;){
    long long a = step, b = n;
    while( b ){ long long t = a % b; a = b; b = t; }
    if( a==1 ) break;
    step++;
  }
  return (i * step) % n;
}

/* The keys: 'key%010lld' (13 bytes) for cache_bench and readthrough, bound
** as 'k%08lld' to parameter 1 for cache_ir and get_ir. */
static inline void benchKey(char *z, long long i){
  snprintf(z, 32, "key%010lld", i);
}
static inline void benchBindKey(sqlite3_stmt *p, long long i){
  char z[32];
  snprintf(z, sizeof(z), "k%08lld", i);
  sqlite3_bind_text(p, 1, z, -1, SQLITE_TRANSIENT);
}

#endif /* BENCH_UTIL_H */
