/*
** cache_crash.c: a cache table survives its writer being killed at any
** moment, and loses no acknowledged entry.
**
**   build/cache_crash EXT DB LOG MODE JOURNAL TRIALS SEED MAXMS
**
**     MODE     keep   capacity far above the data: nothing is ever evicted,
**                     recency_buffer 4 (gets write their recency in short
**                     transactions of their own, a write a kill can land in)
**              evict  capacity of a few dozen entries: sets evict; the
**                     default recency_buffer (uses are written by the next
**                     write of the writer, inside its transaction)
**              fifo   as evict, with policy = fifo: eviction in set order,
**                     gets write nothing
**     JOURNAL  wal or delete
**     TRIALS   how many writers are started and killed
**     SEED     the random seed of the whole run (printed on failure)
**     MAXMS    each writer is killed with SIGKILL after 0..MAXMS ms
**
** DB and LOG are created afresh: a table t USING cache(...) in DB with the
** journal mode given, with a feed of 50 removals (the model's removals:
** the checker compares cache_evictions with them row for row).  Half the
** sets give a tag, which UPDATEs of value and key keep: the checker
** compares each entry's tag with the model's, and integrity_check checks
** that the tag rows agree with the entries.  Then TRIALS times: a writer process (forked) opens DB
** and does random cache operations until it is killed; a checker process
** then opens DB and compares it with the log.  Prints "ok ..." with counts
** and exits 0, or prints what differs and exits 1.
**
** THE WRITER
**
**   Autocommit sets (new keys and replacements; expires NULL, in the past
**   or far in the future), UPDATEs of value and expires, renewals (UPDATEs
**   of expires, ttl and tag alone), UPDATEs of the key,
**   deletes, capacity changes, purge, flush, gets (key = ?, key IN (...),
**   cache_read) and explicit transactions of several of those with
**   SAVEPOINT, ROLLBACK TO, RELEASE, ending in COMMIT or ROLLBACK; now and
**   then it closes and reopens its connection (the close writes buffered
**   recency).  PRAGMA synchronous and wal_autocheckpoint are random.
**   A value is derived from a version number unique in the run: 16 bytes
**   "v%015lld" then pseudo-random bytes seeded by the version, of a length
**   the version decides; a read value is verified in full.
**
**   The log (LOG, appended with one write(2) per record, so a kill leaves
**   whole records or a torn last one):
**     W trial               a writer starts (a new connection)
**     T n k  + k op lines   intent: written before the statement runs
**                           (autocommit write) or before COMMIT/ROLLBACK
**                           (explicit transaction, first op BEGIN)
**     E n                   the statement, COMMIT or ROLLBACK returned
**     G key version         an autocommit get and what it returned (0: none)
**     K n 0|1               the checker's verdict on an unfinished block n:
**                           not committed / committed
**   Op lines: S key ver exp tag (set; tag 0 none, 1..3 red, green, blue),
**   U key ver exp (UPDATE value, expires), N key exp tag ttl (UPDATE expires,
**   ttl and tag alone: a renewal in place; exp 4 is a ttl of a random number
**   of days, given last, in MODE evict the only kind: its expires tells it
**   from any other renewal),
**   M key newkey (UPDATE key), D key, Z capacity, X max_entries (MODE
**   evict and fifo only), P (purge), F (flush),
**   O (close and reopen), G key ver, I n key ver ... (IN get), C key ver
**   (cache_read), BEGIN, COMMIT, ROLLBACK, SV name, RT name, RL name.
**   exp is 0 (NULL), 1 (in the past: expired at once), 2 (far future) or
**   3 (ttl 0: expires is the time of the write, expired at once too).
**
** THE CHECKER
**
**   Replays the log on a model of the table: entries (id, version, size,
**   expires, hits, recency), the counters, and the writer's connection
**   (buffered uses, uses written inside the open transaction, savepoints),
**   as the README specifies: a use is buffered and written at the
**   connection's next write to the table, inside that write's transaction;
**   ROLLBACK and ROLLBACK TO undo writes and put the uses written since
**   back into the buffer; a killed writer's buffer is lost.  Every write
**   reclaims expired entries, then evicts least recently used ones (under
**   fifo: the ones set longest ago) until bytes <= capacity and entries <=
**   max_entries.  Every logged read is checked against the model at
**   its place in the log.
**
**   After a kill, at most the last block is unfinished (T without E): the
**   database must equal the model either without it or with it, and the
**   checker appends its verdict.  The database is compared through SQL
**   only: PRAGMA integrity_check, the cache's integrity_check command, the
**   listing (key, size, expires, tag, hits; in MODE evict only, as hits are
**   exact only there), every value (read on a second, read-only
**   connection, so that the checker's reads are never written as uses),
**   cache_stats (capacity, entries, bytes, evictions, expired), max_entries
**   (from the config row: nothing else shows it), the feed
**   (cache_evictions: seq, key, reason of each row), and
**   bytes <= capacity.  In MODE evict the comparison also fixes the
**   recency order: the blocks that could leave two orders differ in hits.
*/
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "splitmix.h"

typedef sqlite3_int64 i64;

#define NKEY        40
#define VER_TRIAL   10000000LL      /* version = trial*VER_TRIAL + n */
#define EXP_PAST    1000LL          /* unix ms 1000: long expired */
#define EXP_FUTURE  4102444800000LL /* 2100-01-01 */
#define KEEP_CAP    100000000LL
#define EVICT_CAP   6000LL

static char azKey[NKEY][48];
static int gbFifo;               /* policy = fifo: no uses, set order */
static i64 giStartMs;            /* unix ms before the first writer */

static i64 nowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (i64)ts.tv_sec*1000 + ts.tv_nsec/1000000;
}
/* The tags a set may give: 1..3 (0, none, is NULL). */
static const char *const azTag[] = { 0, "red", "green", "blue" };

static void initKeys(void){
  int i;
  for(i=0; i<NKEY; i++){
    if( i%5==0 ){
      snprintf(azKey[i], sizeof(azKey[i]), "k%d-a-longer-key-%d", i, i*i);
    }else{
      snprintf(azKey[i], sizeof(azKey[i]), "k%d", i);
    }
  }
}
static int keyIndex(const char *z){
  int i;
  for(i=0; i<NKEY; i++) if( strcmp(azKey[i], z)==0 ) return i;
  return -1;
}

/* ------------------------------------------------------------ randomness
** (splitmix() and rnd(): splitmix.h) */

/* The value of a version: 16 bytes of header, then bytes from its own
** stream; the length is the version's too. */
static int valueLen(i64 v){
  unsigned long long h = splitmix((unsigned long long)v);
  return h%10==0 ? 1000 + (int)((h>>8)%2000) : 1 + (int)((h>>8)%400);
}
static int valueMake(i64 v, unsigned char *a){
  int n = 16 + valueLen(v), i;
  unsigned long long s = (unsigned long long)v * 31 + 7;
  char zHead[17];
  snprintf(zHead, sizeof(zHead), "v%015lld", v);
  memcpy(a, zHead, 16);
  for(i=16; i<n; i++){
    if( (i&7)==0 ) s = splitmix(s);
    a[i] = (unsigned char)(s >> ((i&7)*8));
  }
  return n;
}
/* The version a stored value was made from, or -1 if the bytes are not
** exactly those of any version. */
static i64 valueVersion(const unsigned char *a, int n){
  static unsigned char aWant[4096];
  char zHead[17];
  i64 v;
  if( a==0 || n<16 ) return -1;
  memcpy(zHead, a, 16);
  zHead[16] = 0;
  if( zHead[0]!='v' ) return -1;
  v = strtoll(zHead+1, 0, 10);
  if( v<=0 || valueMake(v, aWant)!=n || memcmp(a, aWant, n)!=0 ) return -1;
  return v;
}

/* ------------------------------------------------------------ helpers */

static void die(const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(3);
}

static sqlite3 *openDb(const char *zPath, const char *zExt, int flags){
  sqlite3 *db = 0;
  char *zErr = 0;
  if( sqlite3_open_v2(zPath, &db, flags, 0)!=SQLITE_OK ){
    die("open %s: %s", zPath, db ? sqlite3_errmsg(db) : "out of memory");
  }
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, zExt, 0, &zErr)!=SQLITE_OK ){
    die("load %s: %s", zExt, zErr ? zErr : sqlite3_errmsg(db));
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

static void execOrDie(sqlite3 *db, const char *zSql){
  char *zErr = 0;
  if( sqlite3_exec(db, zSql, 0, 0, &zErr)!=SQLITE_OK ){
    die("%s: %s", zSql, zErr ? zErr : sqlite3_errmsg(db));
  }
}

static void logWrite(int fd, const char *z, size_t n){
  while( n>0 ){
    ssize_t k = write(fd, z, n);
    if( k<0 ){
      if( errno==EINTR ) continue;
      die("write log: %s", strerror(errno));
    }
    z += k;
    n -= (size_t)k;
  }
}

/* A growing text buffer. */
typedef struct strbuf strbuf;
struct strbuf { char *z; size_t n, nAlloc; };
static void sbAdd(strbuf *p, const char *zFmt, ...){
  va_list ap;
  int k;
  for(;;){
    va_start(ap, zFmt);
    k = vsnprintf(p->z ? p->z + p->n : 0, p->z ? p->nAlloc - p->n : 0, zFmt, ap);
    va_end(ap);
    if( p->z && (size_t)k < p->nAlloc - p->n ){ p->n += (size_t)k; return; }
    p->nAlloc = p->nAlloc*2 + (size_t)k + 256;
    p->z = realloc(p->z, p->nAlloc);
    if( p->z==0 ) die("out of memory");
  }
}

/* ------------------------------------------------------------ the writer */

enum { W_SET, W_UPD, W_REN, W_DEL, W_GET, W_IN, W_READ, W_CAP, W_PURGE,
       W_FLUSH, W_MAXENT, W_RENEW, W_NSTMT };
static const char *azWriterSql[W_NSTMT] = {
  "INSERT INTO t(key, value, expires, ttl, tag) VALUES(?1, ?2, ?3, ?4, ?5)",
  "UPDATE t SET value = ?2, expires = ?3, ttl = ?4 WHERE key = ?1",
  "UPDATE t SET key = ?2 WHERE key = ?1",
  "DELETE FROM t WHERE key = ?1",
  "SELECT value FROM t WHERE key = ?1",
  "SELECT key, value FROM t WHERE key IN (?1, ?2, ?3)",
  "SELECT cache_read('t', ?1, 0, 100000)",
  "INSERT INTO t(t, value) VALUES('capacity', ?1)",
  "INSERT INTO t(t) VALUES('purge')",
  "INSERT INTO t(t) VALUES('flush')",
  "INSERT INTO t(t, value) VALUES('max_entries', ?1)",
  "UPDATE t SET expires = ?2, ttl = ?3, tag = ?4 WHERE key = ?1",
};

typedef struct writer writer;
struct writer {
  sqlite3 *db;
  const char *zDb, *zExt;
  sqlite3_stmt *aStmt[W_NSTMT];
  int fd;
  int iTrial;
  int bEvict;
  i64 nVer;             /* versions and block numbers made so far */
};

static void writerOpen(writer *w){
  int i;
  char zSql[100];
  static const char *azSync[] = { "OFF", "OFF", "OFF", "NORMAL", "NORMAL", "FULL" };
  w->db = openDb(w->zDb, w->zExt, SQLITE_OPEN_READWRITE);
  snprintf(zSql, sizeof(zSql), "PRAGMA synchronous=%s; PRAGMA wal_autocheckpoint=%d",
           azSync[rnd(6)], rnd(2) ? 10 + (int)rnd(100) : 1000);
  execOrDie(w->db, zSql);
  for(i=0; i<W_NSTMT; i++){
    if( sqlite3_prepare_v2(w->db, azWriterSql[i], -1, &w->aStmt[i], 0) ){
      die("prepare %s: %s", azWriterSql[i], sqlite3_errmsg(w->db));
    }
  }
}

static void writerClose(writer *w){
  int i, rc;
  for(i=0; i<W_NSTMT; i++){
    sqlite3_finalize(w->aStmt[i]);
    w->aStmt[i] = 0;
  }
  rc = sqlite3_close(w->db);
  if( rc!=SQLITE_OK ) die("close: %s", sqlite3_errstr(rc));
  w->db = 0;
}

static i64 writerNext(writer *w){
  return (i64)w->iTrial*VER_TRIAL + ++w->nVer;
}

/* Run a statement that returns no rows. */
static void writerStep(writer *w, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_DONE ){
    die("%s: %s", sqlite3_sql(pStmt), sqlite3_errmsg(w->db));
  }
  sqlite3_reset(pStmt);
  sqlite3_clear_bindings(pStmt);
}

/* The version a value column holds, -1 if corrupt, 0 for NULL. */
static i64 columnVersion(sqlite3_stmt *pStmt, int i){
  if( sqlite3_column_type(pStmt, i)==SQLITE_NULL ) return 0;
  return valueVersion(sqlite3_column_blob(pStmt, i), sqlite3_column_bytes(pStmt, i));
}

static int expPick(void){
  unsigned r = rnd(20);
  return r<12 ? 0 : r<17 ? 2 : r<19 ? 1 : 3;
}
/* expires at i, ttl at i+1: 1 is expires in the past, 3 ttl 0 (expires =
** the time of the write: expired at once too) */
static void bindExp(sqlite3_stmt *pStmt, int i, int eExp){
  if( eExp==3 ){
    sqlite3_bind_int64(pStmt, i+1, 0);
  }else if( eExp!=0 ){
    sqlite3_bind_int64(pStmt, i, eExp==1 ? EXP_PAST : EXP_FUTURE);
  }
}

/* Do one random operation; append its op line to pOps.  Reads log what
** they returned.  bTxn: inside an explicit transaction (no reopen). */
static void writerOp(writer *w, strbuf *pOps, int bTxn, int bLogFirst){
  unsigned char aVal[4096];
  unsigned r = rnd(100);
  int k = (int)rnd(NKEY), n;
  sqlite3_stmt *pStmt;
  /* A write is logged before it runs when it is autocommit (bLogFirst). */
#define LOG_FIRST() if( bLogFirst ){ logWrite(w->fd, pOps->z, pOps->n); }
  if( r<30 ){
    i64 v = writerNext(w);
    int e = expPick();
    int iTag = rnd(2) ? 1 + k%3 : 0;
    sbAdd(pOps, "S %s %lld %d %d\n", azKey[k], v, e, iTag);
    LOG_FIRST();
    pStmt = w->aStmt[W_SET];
    n = valueMake(v, aVal);
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    sqlite3_bind_blob(pStmt, 2, aVal, n, SQLITE_TRANSIENT);
    bindExp(pStmt, 3, e);
    if( iTag ) sqlite3_bind_text(pStmt, 5, azTag[iTag], -1, SQLITE_STATIC);
    writerStep(w, pStmt);
  }else if( r<37 ){
    i64 v = writerNext(w);
    int e = expPick();
    sbAdd(pOps, "U %s %lld %d\n", azKey[k], v, e);
    LOG_FIRST();
    pStmt = w->aStmt[W_UPD];
    n = valueMake(v, aVal);
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    sqlite3_bind_blob(pStmt, 2, aVal, n, SQLITE_TRANSIENT);
    bindExp(pStmt, 3, e);
    writerStep(w, pStmt);
  }else if( r<40 ){
    int k2 = (k + 1 + (int)rnd(NKEY-1)) % NKEY;
    sbAdd(pOps, "M %s %s\n", azKey[k], azKey[k2]);
    LOG_FIRST();
    pStmt = w->aStmt[W_REN];
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 2, azKey[k2], -1, SQLITE_STATIC);
    writerStep(w, pStmt);
  }else if( r<44 ){
    /* a renewal in place: expires NULL, past, future or a ttl of days
    ** (4), and a tag or none.  The ttl is a random number of whole days,
    ** so that the checker tells renewals apart by their expires: in MODE
    ** evict (lru) a renewal is a use, and one that changed nothing else
    ** would leave two models that differ only in recency order; there
    ** every renewal is of kind 4. */
    static const int aExp[] = { 0, 1, 2, 4 };
    int e = w->bEvict && !gbFifo ? 4 : aExp[rnd(4)], iTag = (int)rnd(4);
    i64 ttl = e==4 ? 86400*(1 + (i64)rnd(1000000)) : 0;
    sbAdd(pOps, "N %s %d %d %lld\n", azKey[k], e, iTag, ttl);
    LOG_FIRST();
    pStmt = w->aStmt[W_RENEW];
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    if( e==4 ) sqlite3_bind_int64(pStmt, 3, ttl);
    else if( e ) sqlite3_bind_int64(pStmt, 2, e==1 ? EXP_PAST : EXP_FUTURE);
    if( iTag ) sqlite3_bind_text(pStmt, 4, azTag[iTag], -1, SQLITE_STATIC);
    writerStep(w, pStmt);
  }else if( r<50 ){
    sbAdd(pOps, "D %s\n", azKey[k]);
    LOG_FIRST();
    pStmt = w->aStmt[W_DEL];
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    writerStep(w, pStmt);
  }else if( r<53 && w->bEvict && rnd(3)==0 ){
    /* (evicting modes: entries are bounded too, or not any more) */
    i64 c = rnd(2) ? 0 : 5 + rnd(30);
    sbAdd(pOps, "X %lld\n", c);
    LOG_FIRST();
    pStmt = w->aStmt[W_MAXENT];
    sqlite3_bind_int64(pStmt, 1, c);
    writerStep(w, pStmt);
  }else if( r<53 ){
    i64 c = w->bEvict ? 3500 + rnd(5000) : KEEP_CAP + rnd(1000);
    sbAdd(pOps, "Z %lld\n", c);
    LOG_FIRST();
    pStmt = w->aStmt[W_CAP];
    sqlite3_bind_int64(pStmt, 1, c);
    writerStep(w, pStmt);
  }else if( r<55 ){
    sbAdd(pOps, "P\n");
    LOG_FIRST();
    writerStep(w, w->aStmt[W_PURGE]);
  }else if( r<57 ){
    sbAdd(pOps, "F\n");
    LOG_FIRST();
    writerStep(w, w->aStmt[W_FLUSH]);
  }else if( r<58 && !bTxn ){
    /* The close writes the buffered uses: a write of its own. */
    sbAdd(pOps, "O\n");
    LOG_FIRST();
    writerClose(w);
    writerOpen(w);
  }else if( r<85 ){
    i64 v = 0;
    int rc;
    pStmt = w->aStmt[W_GET];
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      v = columnVersion(pStmt, 0);
      rc = sqlite3_step(pStmt);
    }
    if( rc!=SQLITE_DONE ) die("get: %s", sqlite3_errmsg(w->db));
    sqlite3_reset(pStmt);
    sbAdd(pOps, "G %s %lld\n", azKey[k], v);
  }else if( r<92 ){
    int a[3], i, rc;
    i64 av[3] = {0, 0, 0};
    a[0] = k;
    a[1] = (k + 1 + (int)rnd(NKEY-1)) % NKEY;
    do{ a[2] = (int)rnd(NKEY); }while( a[2]==a[0] || a[2]==a[1] );
    pStmt = w->aStmt[W_IN];
    for(i=0; i<3; i++) sqlite3_bind_text(pStmt, i+1, azKey[a[i]], -1, SQLITE_STATIC);
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      int j = keyIndex((const char*)sqlite3_column_text(pStmt, 0));
      for(i=0; i<3; i++) if( a[i]==j ) av[i] = columnVersion(pStmt, 1);
    }
    if( rc!=SQLITE_DONE ) die("get IN: %s", sqlite3_errmsg(w->db));
    sqlite3_reset(pStmt);
    sbAdd(pOps, "I 3 %s %lld %s %lld %s %lld\n", azKey[a[0]], av[0],
          azKey[a[1]], av[1], azKey[a[2]], av[2]);
  }else{
    i64 v = 0;
    int rc;
    pStmt = w->aStmt[W_READ];
    sqlite3_bind_text(pStmt, 1, azKey[k], -1, SQLITE_STATIC);
    rc = sqlite3_step(pStmt);
    if( rc!=SQLITE_ROW ) die("cache_read: %s", sqlite3_errmsg(w->db));
    v = columnVersion(pStmt, 0);
    sqlite3_reset(pStmt);
    sbAdd(pOps, "C %s %lld\n", azKey[k], v);
  }
#undef LOG_FIRST
}

static void writerMain(writer *w){
  char zLine[64];
  strbuf ops = {0, 0, 0};
  int nLine = snprintf(zLine, sizeof(zLine), "W %d\n", w->iTrial);
  off_t nLog = lseek(w->fd, 0, SEEK_END);
  if( nLog>0 ){
    /* A record torn by the last kill: end it and mark it ("~"). */
    char c = 0;
    if( pread(w->fd, &c, 1, nLog-1)==1 && c!='\n' ) logWrite(w->fd, "\n~\n", 3);
  }
  logWrite(w->fd, zLine, (size_t)nLine);
  writerOpen(w);
  for(;;){
    i64 iBlock = writerNext(w);
    ops.n = 0;
    if( rnd(100)<15 ){
      /* An explicit transaction. */
      int nOp = 2 + (int)rnd(9), i, nSv = 0, nOpen = 0;
      int aOpen[16];
      strbuf blk = {0, 0, 0};
      int bImmediate = (int)rnd(2);
      execOrDie(w->db, bImmediate ? "BEGIN IMMEDIATE" : "BEGIN");
      sbAdd(&ops, "BEGIN\n");
      for(i=0; i<nOp; i++){
        unsigned r = rnd(100);
        char zSql[64];
        if( r<15 && nOpen<16 ){
          aOpen[nOpen++] = ++nSv;
          snprintf(zSql, sizeof(zSql), "SAVEPOINT s%d", nSv);
          execOrDie(w->db, zSql);
          sbAdd(&ops, "SV s%d\n", nSv);
        }else if( r<23 && nOpen>0 ){
          int j = (int)rnd((unsigned)nOpen);
          snprintf(zSql, sizeof(zSql), "ROLLBACK TO s%d", aOpen[j]);
          execOrDie(w->db, zSql);
          sbAdd(&ops, "RT s%d\n", aOpen[j]);
          nOpen = j+1;
        }else if( r<30 && nOpen>0 ){
          int j = (int)rnd((unsigned)nOpen);
          snprintf(zSql, sizeof(zSql), "RELEASE s%d", aOpen[j]);
          execOrDie(w->db, zSql);
          sbAdd(&ops, "RL s%d\n", aOpen[j]);
          nOpen = j;
        }else{
          writerOp(w, &ops, 1, 0);
        }
      }
      {
        int bCommit = rnd(100)<80;
        int nOps = 0;
        size_t j;
        sbAdd(&ops, "%s\n", bCommit ? "COMMIT" : "ROLLBACK");
        for(j=0; j<ops.n; j++) if( ops.z[j]=='\n' ) nOps++;
        sbAdd(&blk, "T %lld %d\n%.*s", iBlock, nOps, (int)ops.n, ops.z);
        logWrite(w->fd, blk.z, blk.n);
        execOrDie(w->db, bCommit ? "COMMIT" : "ROLLBACK");
        free(blk.z);
      }
    }else{
      /* An autocommit statement: a write is logged as a block of one op
      ** before it runs; a read as a line after it. */
      sbAdd(&ops, "T %lld 1\n", iBlock);
      {
        size_t nHead = ops.n;
        writerOp(w, &ops, 0, 1);
        if( ops.z[nHead]=='G' || ops.z[nHead]=='I' || ops.z[nHead]=='C' ){
          logWrite(w->fd, ops.z + nHead, ops.n - nHead);
          continue;
        }
      }
    }
    nLine = snprintf(zLine, sizeof(zLine), "E %lld\n", iBlock);
    logWrite(w->fd, zLine, (size_t)nLine);
  }
}

/* ------------------------------------------------------------ the model */

typedef struct m_entry m_entry;
struct m_entry {
  int bStored;          /* in the table (maybe expired, not reclaimed yet) */
  int eExp;             /* 0 NULL, 1 past, 2 future, 3 ttl 0 (the write's
                        ** time: expired at once, after every 1), 4 a
                        ** renewal's ttl of days */
  i64 ttl;              /* eExp 4: the ttl in seconds (unique in the run) */
  int iTag;             /* azTag[iTag], 0 for none */
  i64 id, version, nVal, hits, rank;
};
/* A row of the feed: removals not asked for, the newest FEED_N. */
#define FEED_N 50
typedef struct m_feed m_feed;
struct m_feed { i64 seq; int k; int eWhy; };   /* eWhy: 1 capacity, 2
                                                ** entries, 3 expired */
typedef struct m_db m_db;
struct m_db {
  m_entry a[NKEY];
  i64 seq, capacity, evictions, expired;
  i64 maxent;           /* max_entries, 0 for none */
  i64 fseq;             /* removals written to the feed so far */
  m_feed aFeed[FEED_N]; /* the newest, oldest first */
  int nFeed;
};
typedef struct m_use m_use;
struct m_use { i64 id, iSeq, nHit; int iLevel; };
typedef struct m_conn m_conn;
struct m_conn {
  m_use *aPend; int nPend, nPendAlloc;      /* buffered uses, one per id */
  m_use *aFlushed; int nFlushed, nFlushedAlloc;  /* written in the txn */
  i64 iTouch;
  int iLevel;                               /* open savepoints - 1 */
};

static i64 mSize(const m_db *p, int k){ return (i64)strlen(azKey[k]) + p->a[k].nVal; }
static i64 mBytes(const m_db *p){
  i64 n = 0; int k;
  for(k=0; k<NKEY; k++) if( p->a[k].bStored ) n += mSize(p, k);
  return n;
}
static i64 mEntries(const m_db *p){
  i64 n = 0; int k;
  for(k=0; k<NKEY; k++) n += p->a[k].bStored;
  return n;
}
static int mExpired(const m_entry *e){ return e->eExp==1 || e->eExp==3; }
static int mLive(const m_db *p, int k){ return p->a[k].bStored && !mExpired(&p->a[k]); }

/* Entry k goes for reason eWhy: a row of the feed. */
static void mGone(m_db *p, int k, int eWhy){
  if( p->nFeed==FEED_N ){
    memmove(p->aFeed, p->aFeed+1, sizeof(m_feed)*(FEED_N-1));
    p->nFeed--;
  }
  p->aFeed[p->nFeed].seq = ++p->fseq;
  p->aFeed[p->nFeed].k = k;
  p->aFeed[p->nFeed].eWhy = eWhy;
  p->nFeed++;
}

static m_use *mUseAdd(m_use **pa, int *pn, int *pnAlloc){
  if( *pn==*pnAlloc ){
    *pnAlloc = *pnAlloc ? *pnAlloc*2 : 64;
    *pa = realloc(*pa, sizeof(m_use)*(size_t)*pnAlloc);
    if( *pa==0 ) die("out of memory");
  }
  memset(&(*pa)[*pn], 0, sizeof(m_use));
  return &(*pa)[(*pn)++];
}
static m_use *mPendFind(m_conn *c, i64 id){
  int i;
  for(i=0; i<c->nPend; i++) if( c->aPend[i].id==id ) return &c->aPend[i];
  return 0;
}

static void mUse(m_db *p, m_conn *c, int k){
  m_use *u;
  if( !mLive(p, k) || gbFifo ) return;
  u = mPendFind(c, p->a[k].id);
  if( u==0 ){
    u = mUseAdd(&c->aPend, &c->nPend, &c->nPendAlloc);
    u->id = p->a[k].id;
  }
  u->iSeq = ++c->iTouch;
  u->nHit++;
}

static int cmpUseSeq(const void *a, const void *b){
  i64 x = ((const m_use*)a)->iSeq, y = ((const m_use*)b)->iSeq;
  return x<y ? -1 : x>y;
}

/* The buffered uses are written, oldest first, inside the transaction. */
static void mFlush(m_db *p, m_conn *c){
  int i, k;
  qsort(c->aPend, (size_t)c->nPend, sizeof(m_use), cmpUseSeq);
  for(i=0; i<c->nPend; i++){
    m_use *f;
    p->seq++;
    for(k=0; k<NKEY; k++){
      if( p->a[k].bStored && p->a[k].id==c->aPend[i].id ){
        p->a[k].rank = p->seq;
        p->a[k].hits += c->aPend[i].nHit;
      }
    }
    f = mUseAdd(&c->aFlushed, &c->nFlushed, &c->nFlushedAlloc);
    *f = c->aPend[i];
    f->iLevel = c->iLevel;
  }
  c->nPend = 0;
}

/* A rollback to level iLevel: uses written at that level or deeper are
** buffered again, with their old order. */
static void mRestore(m_conn *c, int iLevel){
  int i, j;
  for(i=j=0; i<c->nFlushed; i++){
    m_use *f = &c->aFlushed[i];
    if( f->iLevel>=iLevel ){
      m_use *u = mPendFind(c, f->id);
      if( u==0 ){
        u = mUseAdd(&c->aPend, &c->nPend, &c->nPendAlloc);
        u->id = f->id;
        u->iSeq = f->iSeq;
      }
      if( f->iSeq>u->iSeq ) u->iSeq = f->iSeq;
      u->nHit += f->nHit;
    }else{
      c->aFlushed[j++] = *f;
    }
  }
  c->nFlushed = j;
}

/* Expired entries go in order of expires, then id: every past one (1)
** before every ttl 0 (3), whose expires is the time of its set. */
static void mReclaim(m_db *p){
  for(;;){
    int k, kMin = -1;
    for(k=0; k<NKEY; k++){
      const m_entry *e = &p->a[k];
      if( e->bStored && mExpired(e)
       && (kMin<0 || e->eExp<p->a[kMin].eExp
           || (e->eExp==p->a[kMin].eExp && e->id<p->a[kMin].id)) ){
        kMin = k;
      }
    }
    if( kMin<0 ) return;
    p->a[kMin].bStored = 0;
    p->expired++;
    mGone(p, kMin, 3);
  }
}

static void mEvict(m_db *p){
  while( (mBytes(p)>p->capacity || (p->maxent>0 && mEntries(p)>p->maxent))
      && mEntries(p)>0 ){
    int k, kMin = -1;
    for(k=0; k<NKEY; k++){
      if( p->a[k].bStored && (kMin<0 || (gbFifo ? p->a[k].id<p->a[kMin].id
                                               : p->a[k].rank<p->a[kMin].rank)) ){
        kMin = k;
      }
    }
    mGone(p, kMin, mBytes(p)>p->capacity ? 1 : 2);
    p->a[kMin].bStored = 0;
    p->evictions++;
  }
}

/* A set makes a new entry, even of a stored key (ext/cache/cache_vtab.c: "a set of a
** stored key makes a new entry"): buffered uses of the entry it replaces,
** put back by a rollback, meet no entry when they are written. */
static void mSet(m_db *p, int k, i64 version, i64 nVal, int eExp, i64 hits,
                 int iTag){
  m_entry *e = &p->a[k];
  mReclaim(p);
  e->bStored = 1;
  e->iTag = iTag;
  e->id = e->rank = ++p->seq;
  e->version = version;
  e->nVal = nVal;
  e->eExp = eExp;
  e->ttl = 0;
  e->hits = hits;
  mEvict(p);
}

/* ------------------------------------------------------------ the log */

typedef struct logline logline;
struct logline { char *z; };

static char *readAll(const char *zPath, size_t *pn){
  FILE *f = fopen(zPath, "rb");
  char *z = 0;
  size_t n = 0, nAlloc = 0, k;
  if( f==0 ) die("open %s: %s", zPath, strerror(errno));
  for(;;){
    if( n+65536>nAlloc ){
      nAlloc = nAlloc*2 + 65536;
      z = realloc(z, nAlloc+1);
      if( z==0 ) die("out of memory");
    }
    k = fread(z+n, 1, nAlloc-n, f);
    if( k==0 ) break;
    n += k;
  }
  fclose(f);
  z[n] = 0;
  *pn = n;
  return z;
}

typedef struct replay replay;
struct replay {
  m_db db;
  m_conn conn;
  int bEvict;
  /* counts */
  int nBlock, nCommitted, nRolledBack, nReads, nInflight, nInflightCommitted;
  int nWriters, nOps;
  char zFail[1024];
};

static int fail(replay *r, const char *zFmt, ...){
  va_list ap;
  if( r->zFail[0] ) return 1;
  va_start(ap, zFmt);
  vsnprintf(r->zFail, sizeof(r->zFail), zFmt, ap);
  va_end(ap);
  return 1;
}

/* Check a logged read of key zKey that returned version v. */
static int mRead(replay *r, const char *zLine, const char *zKey, i64 v){
  int k = keyIndex(zKey);
  i64 want;
  if( k<0 ) return fail(r, "bad key in log line '%s'", zLine);
  want = mLive(&r->db, k) ? r->db.a[k].version : 0;
  r->nReads++;
  if( v!=want ){
    return fail(r, "read of %s returned version %lld, the model has %lld"
                " (log line '%s')", zKey, v, want, zLine);
  }
  mUse(&r->db, &r->conn, k);
  return 0;
}

static int cmpKeyIdx(const void *a, const void *b){
  return strcmp(azKey[*(const int*)a], azKey[*(const int*)b]);
}

/* Apply one op line to the model.  Savepoint snapshots on aSnap. */
typedef struct m_sv m_sv;
struct m_sv { char zName[16]; m_db snap; };

static int mApply(replay *r, const char *zLine, m_sv *aSv, int *pnSv,
                  m_db *pBegin){
  m_db *p = &r->db;
  m_conn *c = &r->conn;
  char zA[64], zB[64];
  long long v = 0;
  int e = 0, k, k2;
  r->nOps++;
  if( strcmp(zLine, "BEGIN")==0 ){
    *pBegin = *p;
    *pnSv = 0;
    c->iLevel = -1;
    return 0;
  }
  if( strcmp(zLine, "COMMIT")==0 ){
    c->nFlushed = 0;
    return 0;
  }
  if( strcmp(zLine, "ROLLBACK")==0 ){
    *p = *pBegin;
    mRestore(c, -1);
    c->iLevel = -1;
    return 0;
  }
  if( strncmp(zLine, "SV ", 3)==0 || strncmp(zLine, "RT ", 3)==0
   || strncmp(zLine, "RL ", 3)==0 ){
    char zName[16];
    int j;
    if( sscanf(zLine+3, "%15s", zName)!=1 ) return fail(r, "bad log line '%s'", zLine);
    if( strncmp(zLine, "SV ", 3)==0 ){
      if( *pnSv>=16 ) return fail(r, "too many savepoints");
      strcpy(aSv[*pnSv].zName, zName);
      aSv[*pnSv].snap = *p;
      (*pnSv)++;
      c->iLevel = *pnSv - 1;
      return 0;
    }
    for(j=*pnSv-1; j>=0 && strcmp(aSv[j].zName, zName)!=0; j--){}
    if( j<0 ) return fail(r, "no savepoint %s at '%s'", zName, zLine);
    if( strncmp(zLine, "RT ", 3)==0 ){
      *p = aSv[j].snap;
      mRestore(c, j);
      *pnSv = j+1;
      c->iLevel = j;
      return 0;
    }
    if( strncmp(zLine, "RL ", 3)==0 ){
      int i;
      for(i=0; i<c->nFlushed; i++){
        if( c->aFlushed[i].iLevel>=j ) c->aFlushed[i].iLevel = j-1;
      }
      *pnSv = j;
      c->iLevel = j-1;
      return 0;
    }
  }
  switch( zLine[0] ){
    case 'S':
    case 'U': {
      int iTag = 0;
      if( sscanf(zLine+2, "%63s %lld %d %d", zA, &v, &e, &iTag)!=(zLine[0]=='S' ? 4 : 3)
       || (k = keyIndex(zA))<0 || iTag<0 || iTag>3 ){
        return fail(r, "bad log line '%s'", zLine);
      }
      if( zLine[0]=='U' && !mLive(p, k) ) return 0;   /* nothing to update */
      mFlush(p, c);
      if( zLine[0]=='U' ){
        mSet(p, k, v, valueLen(v)+16, e, p->a[k].hits, p->a[k].iTag);
      }else{
        mSet(p, k, v, valueLen(v)+16, e, 0, iTag);
      }
      return 0;
    }
    case 'M':
      if( sscanf(zLine+2, "%63s %63s", zA, zB)!=2 || (k = keyIndex(zA))<0
       || (k2 = keyIndex(zB))<0 ){
        return fail(r, "bad log line '%s'", zLine);
      }
      if( !mLive(p, k) ) return 0;
      mFlush(p, c);
      {
        m_entry old = p->a[k];
        p->a[k].bStored = 0;
        mSet(p, k2, old.version, old.nVal, old.eExp, old.hits, old.iTag);
        p->a[k2].ttl = old.ttl;
      }
      return 0;
    case 'N': {
      /* a renewal keeps the entry (id, version, size, hits); under lru it
      ** is the most recent */
      int iTag = 0;
      i64 ttl = 0;
      if( sscanf(zLine+2, "%63s %d %d %lld", zA, &e, &iTag, &ttl)!=4
       || (k = keyIndex(zA))<0 || iTag<0 || iTag>3 ){
        return fail(r, "bad log line '%s'", zLine);
      }
      if( !mLive(p, k) ) return 0;
      mFlush(p, c);
      mReclaim(p);
      p->a[k].eExp = e;
      p->a[k].ttl = ttl;
      p->a[k].iTag = iTag;
      if( !gbFifo ) p->a[k].rank = ++p->seq;
      return 0;
    }
    case 'D':
      if( (k = keyIndex(zLine+2))<0 ) return fail(r, "bad log line '%s'", zLine);
      if( !mLive(p, k) ) return 0;
      mFlush(p, c);
      p->a[k].bStored = 0;
      mReclaim(p);
      return 0;
    case 'Z':
      mFlush(p, c);
      p->capacity = strtoll(zLine+2, 0, 10);
      mReclaim(p);
      mEvict(p);
      return 0;
    case 'X':
      mFlush(p, c);
      p->maxent = strtoll(zLine+2, 0, 10);
      mReclaim(p);
      mEvict(p);
      return 0;
    case 'P':
      mFlush(p, c);
      mReclaim(p);
      mEvict(p);
      return 0;
    case 'F':
      mFlush(p, c);
      mReclaim(p);
      mEvict(p);
      return 0;
    case 'O':
      /* the close writes the buffer in a transaction of its own */
      mFlush(p, c);
      c->nFlushed = 0;
      return 0;
    case 'G':
      if( sscanf(zLine+2, "%63s %lld", zA, &v)!=2 ) return fail(r, "bad log line '%s'", zLine);
      return mRead(r, zLine, zA, v);
    case 'C':
      if( zLine[1]==' ' ){
        if( sscanf(zLine+2, "%63s %lld", zA, &v)!=2 ) return fail(r, "bad log line '%s'", zLine);
        return mRead(r, zLine, zA, v);
      }
      break;
    case 'I': {
      char az[3][64];
      long long av[3];
      int aIdx[3], i, j;
      if( sscanf(zLine+2, "3 %63s %lld %63s %lld %63s %lld", az[0], &av[0],
                 az[1], &av[1], az[2], &av[2])!=6 ){
        return fail(r, "bad log line '%s'", zLine);
      }
      for(i=0; i<3; i++){
        if( (aIdx[i] = keyIndex(az[i]))<0 ) return fail(r, "bad log line '%s'", zLine);
      }
      /* SQLite visits the IN values in index order (BINARY for text). */
      qsort(aIdx, 3, sizeof(int), cmpKeyIdx);
      for(i=0; i<3; i++){
        for(j=0; j<3; j++){
          if( keyIndex(az[j])==aIdx[i] && mRead(r, zLine, az[j], av[j]) ) return 1;
        }
      }
      return 0;
    }
    default:
      break;
  }
  return fail(r, "unknown log line '%s'", zLine);
}

/* The writer's connection is gone: its buffer with it. */
static void mCrash(m_conn *c){
  c->nPend = 0;
  c->nFlushed = 0;
  c->iTouch = 0;
  c->iLevel = -1;
}

/* Apply block lines az[0..n-1] (without the T line) as one transaction. */
static int mBlock(replay *r, char **az, int n){
  static m_sv aSv[16];
  int nSv = 0, i;
  m_db begin = r->db;
  int bExplicit = n>0 && strcmp(az[0], "BEGIN")==0;
  r->conn.iLevel = -1;
  for(i=0; i<n; i++){
    if( mApply(r, az[i], aSv, &nSv, &begin) ) return 1;
  }
  if( !bExplicit ) r->conn.nFlushed = 0;      /* autocommit: committed */
  return 0;
}

/* ------------------------------------------------------------ the checker */

/* What the database holds, as far as SQL shows it. */
typedef struct observed observed;
struct observed {
  int bLive[NKEY];
  i64 version[NKEY], size[NKEY], hits[NKEY], expires[NKEY];
  int bExpNull[NKEY];
  int iTag[NKEY];           /* index in azTag, 0 NULL, -1 another text */
  i64 capacity, entries, bytes, evictions, expired;
  i64 maxent;               /* max_entries, from the config row: no other
                            ** read shows it, and a kill inside an X block
                            ** leaves a table that differs in nothing else */
  m_feed aFeed[FEED_N+1];   /* cache_evictions, in order of seq */
  int nFeed;
};

static int observe(replay *r, const char *zDb, const char *zExt, observed *o){
  sqlite3 *db, *dbRo;
  sqlite3_stmt *pStmt = 0;
  char *zUri;
  int rc, k;
  memset(o, 0, sizeof(*o));
  db = openDb(zDb, zExt, SQLITE_OPEN_READWRITE);
  /* the first read rolls back a hot journal or recovers the WAL */
  rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pStmt);
  if( rc!=SQLITE_ROW || strcmp((const char*)sqlite3_column_text(pStmt, 0), "ok")!=0 ){
    fail(r, "PRAGMA integrity_check: %s", rc==SQLITE_ROW
         ? (const char*)sqlite3_column_text(pStmt, 0) : sqlite3_errmsg(db));
    sqlite3_finalize(pStmt);
    sqlite3_close(db);
    return 1;
  }
  sqlite3_finalize(pStmt);
  if( sqlite3_exec(db, "INSERT INTO t(t) VALUES('integrity_check')", 0, 0, 0) ){
    fail(r, "the cache's integrity_check: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  /* The listing is not a use: it changes nothing. */
  rc = sqlite3_prepare_v2(db, "SELECT key, size, hits, expires, tag FROM t", -1, &pStmt, 0);
  while( (rc==SQLITE_OK || rc==SQLITE_ROW) && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    k = keyIndex((const char*)sqlite3_column_text(pStmt, 0));
    if( k<0 || o->bLive[k] ){
      fail(r, "the listing has an unknown or repeated key '%s'", sqlite3_column_text(pStmt, 0));
      break;
    }
    o->bLive[k] = 1;
    o->size[k] = sqlite3_column_int64(pStmt, 1);
    o->hits[k] = sqlite3_column_int64(pStmt, 2);
    o->bExpNull[k] = sqlite3_column_type(pStmt, 3)==SQLITE_NULL;
    o->expires[k] = sqlite3_column_int64(pStmt, 3);
    o->iTag[k] = 0;
    if( sqlite3_column_type(pStmt, 4)!=SQLITE_NULL ){
      const char *zTag = (const char*)sqlite3_column_text(pStmt, 4);
      int t;
      for(t=3; t>0 && (zTag==0 || strcmp(zTag, azTag[t])!=0); t--){}
      o->iTag[k] = t>0 ? t : -1;
    }
  }
  if( rc!=SQLITE_DONE && !r->zFail[0] ) fail(r, "listing: %s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  rc = sqlite3_prepare_v2(db, "SELECT capacity, entries, bytes, evictions, expired,"
                          " bytes <= capacity FROM cache_stats('t')", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    o->capacity = sqlite3_column_int64(pStmt, 0);
    o->entries = sqlite3_column_int64(pStmt, 1);
    o->bytes = sqlite3_column_int64(pStmt, 2);
    o->evictions = sqlite3_column_int64(pStmt, 3);
    o->expired = sqlite3_column_int64(pStmt, 4);
    if( !sqlite3_column_int(pStmt, 5) ){
      fail(r, "bytes %lld > capacity %lld", o->bytes, o->capacity);
    }
  }else if( !r->zFail[0] ){
    fail(r, "cache_stats: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  rc = sqlite3_prepare_v2(db, "SELECT maxent FROM t_config", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    o->maxent = sqlite3_column_int64(pStmt, 0);
  }else if( !r->zFail[0] ){
    fail(r, "max_entries: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);

  rc = sqlite3_prepare_v2(db, "SELECT seq, key, reason FROM cache_evictions('t')",
                          -1, &pStmt, 0);
  while( (rc==SQLITE_OK || rc==SQLITE_ROW) && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const char *zWhy = (const char*)sqlite3_column_text(pStmt, 2);
    m_feed *f = &o->aFeed[o->nFeed];
    if( o->nFeed>FEED_N ){
      fail(r, "the feed holds more than %d rows", FEED_N);
      break;
    }
    f->seq = sqlite3_column_int64(pStmt, 0);
    f->k = keyIndex((const char*)sqlite3_column_text(pStmt, 1));
    f->eWhy = strcmp(zWhy, "capacity")==0 ? 1 : strcmp(zWhy, "entries")==0 ? 2
            : strcmp(zWhy, "expired")==0 ? 3 : 0;
    o->nFeed++;
  }
  if( rc!=SQLITE_DONE && !r->zFail[0] ) fail(r, "feed: %s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);

  /* Values: read on a read-only connection, whose uses can never be
  ** written, so the table's recency stays the writer's. */
  zUri = sqlite3_mprintf("file:%s?mode=ro", zDb);
  dbRo = openDb(zUri, zExt, SQLITE_OPEN_READONLY|SQLITE_OPEN_URI);
  sqlite3_free(zUri);
  rc = sqlite3_prepare_v2(dbRo, "SELECT key, value FROM t", -1, &pStmt, 0);
  while( (rc==SQLITE_OK || rc==SQLITE_ROW) && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    k = keyIndex((const char*)sqlite3_column_text(pStmt, 0));
    if( k<0 || !o->bLive[k] ){
      fail(r, "key '%s' has a value but is not in the listing", sqlite3_column_text(pStmt, 0));
      break;
    }
    o->version[k] = columnVersion(pStmt, 1);
    if( o->version[k]<=0 ){
      fail(r, "the value of %s is not the value of any version", azKey[k]);
      break;
    }
  }
  if( rc!=SQLITE_DONE && !r->zFail[0] ) fail(r, "values: %s", sqlite3_errmsg(dbRo));
  sqlite3_finalize(pStmt);
  if( sqlite3_close(dbRo)!=SQLITE_OK ) fail(r, "close of the read-only connection failed");
  if( sqlite3_close(db)!=SQLITE_OK ) fail(r, "close failed");
  return r->zFail[0]!=0;
}

/* Does the feed (cache_evictions) show the model's removals?  In MODE keep
** and fifo, and in evict when the recency order is the model's (the hits
** decide it), row for row: seq, key and reason. */
static int feedMatches(const m_db *p, const observed *o, char *zWhy,
                       size_t nWhy){
  int i;
  if( o->nFeed!=p->nFeed ){
    snprintf(zWhy, nWhy, "the feed holds %d rows, the model %d", o->nFeed,
             p->nFeed);
    return 0;
  }
  for(i=0; i<p->nFeed; i++){
    const m_feed *a = &o->aFeed[i], *b = &p->aFeed[i];
    if( a->seq!=b->seq || a->k!=b->k || a->eWhy!=b->eWhy ){
      snprintf(zWhy, nWhy, "feed row %d is %lld|%s|%d, the model's %lld|%s|%d",
               i, a->seq, a->k>=0 ? azKey[a->k] : "?", a->eWhy, b->seq,
               azKey[b->k], b->eWhy);
      return 0;
    }
  }
  return 1;
}

/* Does the database show model p?  Describes the first difference. */
static int matches(const replay *r, const m_db *p, const observed *o,
                   char *zWhy, size_t nWhy){
  int k;
  for(k=0; k<NKEY; k++){
    const m_entry *e = &p->a[k];
    int bLive = mLive(p, k);
    if( bLive!=o->bLive[k] ){
      snprintf(zWhy, nWhy, "%s is %s, the model has it %s", azKey[k],
               o->bLive[k] ? "there" : "missing",
               bLive ? "(version " : "gone");
      if( bLive ){
        size_t n = strlen(zWhy);
        snprintf(zWhy+n, nWhy-n, "%lld)", e->version);
      }
      return 0;
    }
    if( !bLive ) continue;
    if( o->version[k]!=e->version ){
      snprintf(zWhy, nWhy, "%s has version %lld, the model %lld", azKey[k],
               o->version[k], e->version);
      return 0;
    }
    if( o->size[k]!=mSize(p, k) ){
      snprintf(zWhy, nWhy, "%s has size %lld, the model %lld", azKey[k],
               o->size[k], mSize(p, k));
      return 0;
    }
    if( o->bExpNull[k]!=(e->eExp==0)
     || (e->eExp==2 && o->expires[k]!=EXP_FUTURE)
     || (e->eExp==4 && (o->expires[k] - e->ttl*1000 < giStartMs
                        || o->expires[k] - e->ttl*1000 > nowMs())) ){
      snprintf(zWhy, nWhy, "%s has expires %s%lld, the model %d", azKey[k],
               o->bExpNull[k] ? "NULL " : "", o->expires[k], e->eExp);
      return 0;
    }
    if( o->iTag[k]!=e->iTag ){
      snprintf(zWhy, nWhy, "%s has tag %s, the model %s", azKey[k],
               o->iTag[k]<0 ? "(another)" : o->iTag[k] ? azTag[o->iTag[k]] : "NULL",
               e->iTag ? azTag[e->iTag] : "NULL");
      return 0;
    }
    if( r->bEvict && !gbFifo && o->hits[k]!=e->hits ){
      snprintf(zWhy, nWhy, "%s has hits %lld, the model %lld", azKey[k],
               o->hits[k], e->hits);
      return 0;
    }
  }
  if( o->capacity!=p->capacity || o->entries!=mEntries(p) || o->bytes!=mBytes(p)
   || o->evictions!=p->evictions || o->expired!=p->expired ){
    snprintf(zWhy, nWhy, "cache_stats capacity|entries|bytes|evictions|expired"
             " %lld|%lld|%lld|%lld|%lld, the model %lld|%lld|%lld|%lld|%lld",
             o->capacity, o->entries, o->bytes, o->evictions, o->expired,
             p->capacity, mEntries(p), mBytes(p), p->evictions, p->expired);
    return 0;
  }
  if( o->maxent!=p->maxent ){
    snprintf(zWhy, nWhy, "max_entries %lld, the model %lld", o->maxent,
             p->maxent);
    return 0;
  }
  return feedMatches(p, o, zWhy, nWhy);
}

/* Do two models keep their stored entries in the same recency order? */
static int sameOrder(const m_db *a, const m_db *b){
  int i, j;
  for(i=0; i<NKEY; i++){
    for(j=0; j<NKEY; j++){
      if( a->a[i].bStored && a->a[j].bStored && b->a[i].bStored && b->a[j].bStored
       && (a->a[i].rank<a->a[j].rank)!=(b->a[i].rank<b->a[j].rank) ){
        return 0;
      }
    }
  }
  return 1;
}

/* Replay LOG; if DB is given, compare and append the verdict on the
** unfinished block.  Returns 0 if all agrees. */
static int checkerMain(replay *r, const char *zDb, const char *zExt,
                       const char *zLog, i64 capacity0){
  size_t nText, i;
  char *zText = readAll(zLog, &nText);
  char **az = 0;
  int nLine = 0, nAlloc = 0, iLine;
  i64 iOpen = 0;           /* unfinished block: its number */
  int iOpenFirst = 0, nOpenOps = 0;
  m_db before;
  memset(&r->db, 0, sizeof(r->db));
  r->db.capacity = capacity0;
  mCrash(&r->conn);
  /* Whole lines only: a torn last line was never acknowledged. */
  for(i=0; i<nText; ){
    size_t j = i;
    while( j<nText && zText[j]!='\n' ) j++;
    if( j==nText ) break;
    zText[j] = 0;
    if( strcmp(zText+i, "~")==0 ){
      /* the line before was torn by a kill: it was never acknowledged */
      if( nLine>0 ) nLine--;
      i = j+1;
      continue;
    }
    if( nLine==nAlloc ){
      nAlloc = nAlloc*2 + 1024;
      az = realloc(az, sizeof(char*)*(size_t)nAlloc);
      if( az==0 ) die("out of memory");
    }
    az[nLine++] = zText + i;
    i = j+1;
  }
  for(iLine=0; iLine<nLine && !r->zFail[0]; ){
    char *z = az[iLine];
    long long n = 0, iVerdict = 0;
    int k = 0;
    if( z[0]=='W' ){
      mCrash(&r->conn);
      r->nWriters++;
      iLine++;
    }else if( z[0]=='T' ){
      if( sscanf(z+2, "%lld %d", &n, &k)!=2 ) return fail(r, "bad log line '%s'", z);
      r->nBlock++;
      {
        /* Torn by a kill (written in one write(2), so only its end can be
        ** missing): its COMMIT or statement never ran.  The next writer's
        ** W line, or the end of the log, comes before its last op. */
        int j;
        for(j=iLine+1; j<=iLine+k && j<nLine && az[j][0]!='W'; j++){}
        if( j<=iLine+k ){
          iLine = j;
          continue;
        }
      }
      if( iLine+1+k<nLine && az[iLine+1+k][0]=='E' ){
        mBlock(r, az+iLine+1, k);
        if( strcmp(az[iLine+k], "ROLLBACK")==0 ) r->nRolledBack++;
        else r->nCommitted++;
        iLine += k+2;
        continue;
      }
      /* Unfinished: the writer was killed before the end.  A verdict
      ** follows if a checker saw the database after that kill. */
      if( iLine+1+k<nLine && az[iLine+1+k][0]=='K' ){
        long long nK = 0;
        if( sscanf(az[iLine+1+k]+2, "%lld %lld", &nK, &iVerdict)!=2 || nK!=n ){
          return fail(r, "bad verdict line '%s'", az[iLine+1+k]);
        }
        if( iVerdict ) mBlock(r, az+iLine+1, k);
        r->nInflight++;
        r->nInflightCommitted += iVerdict!=0;
        iLine += k+2;
        continue;
      }
      if( iLine+1+k<nLine ){
        return fail(r, "block %lld is not followed by its end or a verdict", n);
      }
      iOpen = n;
      iOpenFirst = iLine+1;
      nOpenOps = k;
      break;
    }else if( z[0]=='G' || z[0]=='I' || z[0]=='C' ){
      mApply(r, z, 0, 0, 0);
      iLine++;
    }else if( z[0]=='K' ){
      iLine++;             /* a verdict with no unfinished block: nothing */
    }else{
      return fail(r, "unknown log line '%s'", z);
    }
  }
  if( r->zFail[0] || zDb==0 ){
    free(az); free(zText);
    return r->zFail[0]!=0;
  }
  {
    observed o;
    char zWhy0[400], zWhy1[400];
    int b0 = 0, b1 = 0;
    if( observe(r, zDb, zExt, &o) ){
      free(az); free(zText);
      return 1;
    }
    before = r->db;
    if( iOpen ){
      /* r1: the model with the unfinished block committed, from the
      ** writer's state just before it (its buffered uses included) */
      replay r1 = *r;
      r1.conn.aPend = malloc(sizeof(m_use)*(size_t)(r->conn.nPendAlloc+1));
      r1.conn.aFlushed = malloc(sizeof(m_use)*(size_t)(r->conn.nFlushedAlloc+1));
      if( r1.conn.aPend==0 || r1.conn.aFlushed==0 ) die("out of memory");
      memcpy(r1.conn.aPend, r->conn.aPend, sizeof(m_use)*(size_t)r->conn.nPend);
      memcpy(r1.conn.aFlushed, r->conn.aFlushed, sizeof(m_use)*(size_t)r->conn.nFlushed);
      mCrash(&r->conn);
      b0 = matches(r, &r->db, &o, zWhy0, sizeof(zWhy0));
      if( mBlock(&r1, az+iOpenFirst, nOpenOps) ){
        snprintf(r->zFail, sizeof(r->zFail), "%s", r1.zFail);
        free(az); free(zText);
        return 1;
      }
      b1 = matches(r, &r1.db, &o, zWhy1, sizeof(zWhy1));
      if( b0 && b1 && r->bEvict && !sameOrder(&before, &r1.db) ){
        fail(r, "block %lld: the database matches the model with and without"
             " it, and the two differ in recency order", (long long)iOpen);
      }else if( !b0 && !b1 ){
        fail(r, "after the kill in block %lld: without it: %s; with it: %s",
             (long long)iOpen, zWhy0, zWhy1);
      }
      if( !r->zFail[0] ){
        char zV[64];
        int nV = snprintf(zV, sizeof(zV), "K %lld %d\n", (long long)iOpen, b0 ? 0 : 1);
        int fd = open(zLog, O_WRONLY|O_APPEND);
        if( fd<0 ) die("open %s: %s", zLog, strerror(errno));
        logWrite(fd, zV, (size_t)nV);
        close(fd);
        r->nInflight++;
        if( !b0 ) r->nInflightCommitted++;
      }
      free(r1.conn.aPend);
      free(r1.conn.aFlushed);
    }else{
      mCrash(&r->conn);
      if( !matches(r, &r->db, &o, zWhy0, sizeof(zWhy0)) ){
        fail(r, "after the kill: %s", zWhy0);
      }
    }
  }
  free(az);
  free(zText);
  return r->zFail[0]!=0;
}

/* ------------------------------------------------------------ the driver */

static void sleepMs(unsigned ms){
  struct timespec ts;
  ts.tv_sec = ms/1000;
  ts.tv_nsec = (long)(ms%1000)*1000000L;
  while( nanosleep(&ts, &ts)!=0 && errno==EINTR ){}
}

int main(int argc, char **argv){
  const char *zExt, *zDb, *zLog, *zJournal;
  int bEvict, nTrial, nMaxMs, iTrial, fd;
  unsigned long long iSeed;
  i64 capacity0;
  char zSql[256];
  replay r;
  if( argc!=9 ){
    fprintf(stderr, "usage: %s EXT DB LOG keep|evict|fifo wal|delete TRIALS SEED MAXMS\n",
            argv[0]);
    return 2;
  }
  zExt = argv[1]; zDb = argv[2]; zLog = argv[3];
  gbFifo = strcmp(argv[4], "fifo")==0;
  bEvict = gbFifo || strcmp(argv[4], "evict")==0;
  zJournal = argv[5];
  nTrial = atoi(argv[6]);
  iSeed = strtoull(argv[7], 0, 10);
  giStartMs = nowMs();
  nMaxMs = atoi(argv[8]);
  initKeys();
  capacity0 = bEvict ? EVICT_CAP : KEEP_CAP;

  /* A fresh database and log. */
  {
    static const char *azSuffix[] = { "", "-wal", "-shm", "-journal" };
    size_t i;
    sqlite3 *db;
    for(i=0; i<sizeof(azSuffix)/sizeof(azSuffix[0]); i++){
      char *z = sqlite3_mprintf("%s%s", zDb, azSuffix[i]);
      unlink(z);
      sqlite3_free(z);
    }
    db = openDb(zDb, zExt, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE);
    snprintf(zSql, sizeof(zSql), "PRAGMA journal_mode=%s;"
             " CREATE VIRTUAL TABLE t USING cache(capacity=%lld, feed=50%s)",
             zJournal, capacity0, gbFifo ? ", policy=fifo"
                                  : bEvict ? "" : ", recency_buffer=4");
    execOrDie(db, zSql);
    if( sqlite3_close(db)!=SQLITE_OK ) die("close failed");
    fd = open(zLog, O_WRONLY|O_CREAT|O_TRUNC, 0644);
    if( fd<0 ) die("create %s: %s", zLog, strerror(errno));
    close(fd);
  }

  gRand = iSeed;
  for(iTrial=1; iTrial<=nTrial; iTrial++){
    int st = 0;
    unsigned ms = rnd((unsigned)nMaxMs + 1);
    pid_t pid = fork();
    if( pid<0 ) die("fork: %s", strerror(errno));
    if( pid==0 ){
      writer w;
      memset(&w, 0, sizeof(w));
      gRand = splitmix(iSeed*1000003ULL + (unsigned long long)iTrial);
      w.zDb = zDb;
      w.zExt = zExt;
      w.iTrial = iTrial;
      w.bEvict = bEvict;
      w.fd = open(zLog, O_RDWR|O_APPEND);
      if( w.fd<0 ) die("open %s: %s", zLog, strerror(errno));
      writerMain(&w);
      _exit(0);
    }
    sleepMs(ms);
    kill(pid, SIGKILL);
    if( waitpid(pid, &st, 0)!=pid ) die("waitpid: %s", strerror(errno));
    if( !WIFSIGNALED(st) || WTERMSIG(st)!=SIGKILL ){
      fprintf(stderr, "trial %d (seed %llu): the writer ended by itself"
              " (status %d) instead of being killed\n", iTrial, iSeed, st);
      return 1;
    }
    pid = fork();
    if( pid<0 ) die("fork: %s", strerror(errno));
    if( pid==0 ){
      memset(&r, 0, sizeof(r));
      r.bEvict = bEvict;
      if( checkerMain(&r, zDb, zExt, zLog, capacity0) ){
        fprintf(stderr, "trial %d (seed %llu, killed after %u ms): %s\n",
                iTrial, iSeed, ms, r.zFail);
        _exit(1);
      }
      _exit(0);
    }
    if( waitpid(pid, &st, 0)!=pid ) die("waitpid: %s", strerror(errno));
    if( !WIFEXITED(st) || WEXITSTATUS(st)!=0 ){
      fprintf(stderr, "trial %d (seed %llu): the check failed (status %d);"
              " database %s, log %s\n", iTrial, iSeed, st, zDb, zLog);
      return 1;
    }
  }

  /* The whole log once more, for the counts. */
  memset(&r, 0, sizeof(r));
  r.bEvict = bEvict;
  if( checkerMain(&r, 0, 0, zLog, capacity0) ){
    fprintf(stderr, "replay: %s\n", r.zFail);
    return 1;
  }
  {
    int nEntries = 0, k;
    for(k=0; k<NKEY; k++) nEntries += r.db.a[k].bStored;
    printf("ok %d kills (%s, %s; seed %llu): %d blocks committed, %d rolled back,"
           " %d cut by a kill (%d of them committed), %d ops, %d reads checked;"
           " at the end %d entries, %lld evictions, %lld expired\n",
           nTrial, argv[4], zJournal, iSeed, r.nCommitted, r.nRolledBack, r.nInflight,
           r.nInflightCommitted, r.nOps, r.nReads, nEntries,
           r.db.evictions, r.db.expired);
  }
  free(r.conn.aPend);
  free(r.conn.aFlushed);
  return 0;
}
