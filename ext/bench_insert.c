/*
** bench_insert.c: the seed's writer-throughput experiments as an eponymous
** table-valued function.
**
**   SELECT * FROM bench_insert;                     -- one run, the defaults
**   SELECT threads, mutex, writes_per_sec FROM bench_insert
**    WHERE threads IN (1, 2, 4, 16) AND mutex IN (0, 1);        -- 8 rows
**   SELECT id, writes_per_sec, p99_us FROM bench_insert
**    WHERE id IN ('integer','uuid4_blob','uuid7_blob') AND rows=5000;
**
** Every parameter is a HIDDEN column (so it is also a positional argument:
** bench_insert('uuid7_text') sets id).  A parameter constrained with = (or
** IS) or IN takes those values (IS NULL too, for the parameters that take
** NULL); the others take their defaults.  The result has one row per combination of the values.  Each row is computed when the
** cursor reaches it (xFilter for the first, xNext for the others), so the
** shell prints each row as its run ends.
**
** PARAMETERS (allowed values; default)
**
**   id           integer | shortid | uuid4_text | uuid4_blob | uuid7_text |
**                uuid7_blob | uuid8_text | uuid8_blob;            integer
**   journal      wal | delete | truncate | persist | memory | off; wal
**   synchronous  off | normal | full | extra;                     normal
**   threads      writer threads, each with its own connection,
**                1..64;                                           1
**   mutex        0 | 1: an application mutex held around every
**                transaction (every insert when batch=1);         0
**   batch        rows per transaction, 1..1000000 (1: autocommit); 1
**   begin        deferred | immediate (BEGIN of batch>1);         deferred
**   prepare      once | each | exec;                              once
**   locking      normal | exclusive;                              normal
**   page_size    power of two in 512..65536, or NULL;             NULL
**   cache_size   integer in -1000000000..1000000000, or NULL;     NULL
**   mmap_size    integer in 0..1099511627776, or NULL;            NULL
**                (NULL: the pragma is not run, the library default holds)
**   readers      reader threads doing point SELECTs by id, 0..64; 0
**   rows         rows written per run by all threads, 1..10000000; 10000
**   seconds      upper bound on one run, a number in (0, 86400];  60
**   content      bytes in the content column, 0..1000000;         12
**   busy_timeout milliseconds, 0..3600000;                        1000
**   storage      file | memory;                                   file
**   dir          an existing writable directory;    $TMPDIR, else /tmp
**
** An invalid value is an error that names the parameter and lists what is
** allowed, e.g.
**   bench_insert: journal must be one of wal, delete, truncate, persist,
**   memory, off (got 'bogus')
** A constraint other than = or IN (or IS NULL on page_size, cache_size,
** mmap_size) on a parameter is an error:
**   bench_insert: parameter threads takes only = or IN constraints
** locking=exclusive lets only one connection in: it requires threads=1 and
** readers=0.  threads>1 or readers>0 require a thread-safe SQLite.  With
** storage=memory SQLite keeps the journal in memory: wal, delete, truncate
** and persist run as memory (the journal column shows the value asked for).
** An insert that fails stops the run and becomes the error, with SQLite's
** message and every parameter of the run:
**   bench_insert: insert failed: disk I/O error (id=integer journal=wal ...)
**
** RESULT COLUMNS
**
**   rows_written    INTEGER  count(*) of posts after the run
**   elapsed         REAL     seconds, to the microsecond, from the opening
**                            of the start gate to the end of the last writer
**                            (the parameter `seconds` bounds this timed part;
**                            this is what it took)
**   writes_per_sec  INTEGER  rows inserted / elapsed
**   ns_per_write    INTEGER  elapsed / rows inserted (wall time per row)
**   p50_us, p99_us, max_us   REAL  latency of one insert in microseconds:
**                            its step (busy waits included), plus, for the
**                            first and last row of a batch, BEGIN and
**                            COMMIT, plus, with mutex=1, the wait for the
**                            application mutex
**   reads_per_sec   INTEGER  point SELECTs by all readers / elapsed
**   busy            INTEGER  SQLITE_BUSY retries (busy handler calls)
**   db_bytes        INTEGER  database plus WAL after the run's connections
**                            closed (memory: page_count*page_size)
**   sqlite_version  TEXT     sqlite3_libversion() of the running library
**   fsync_us        REAL     median of 5 write+fsync of 4 KiB to a new file
**                            in dir, measured once per dir per statement;
**                            NULL with storage=memory, which writes nothing
**                            in dir
**
** ROW ORDER
**
** Combinations nest in the order of the parameter list above: id varies
** slowest, dir fastest.  Within one parameter the values are ordered as the
** list above orders them (for enumerations), ascending for numbers (NULL
** first), and by byte order for dir; duplicates are removed.
**
** HOW IT WORKS
**
** Declared schema: the 12 result columns, then the 19 parameters as HIDDEN
** columns, in the order above.  xBestIndex gives each parameter's first
** usable = / IS / IN constraint an argvIndex (in column order) with omit
** set, and asks for IN lists all at once (sqlite3_vtab_in); IS NULL on
** page_size, cache_size or mmap_size is used (omit set) without one.
** idxStr has one character per parameter: '-' unconstrained, '=' a single
** value, 'i' an IN list, 'n' IS NULL; xFilter reads argv accordingly.  An unusable constraint on a
** parameter gives SQLITE_CONSTRAINT; any other operator is an error.
** xFilter validates every value of every parameter before the first run.
**
** One run (benchRun):
**  1. The ids are made first, with acorn_uuid4/7/8 and acorn_random (the
**     shortid), before any clock starts, as the seed makes its ids before
**     timing.
**  2. A scratch database "acorn-bench-<16 hex>.db" is created in
**     realpath(dir) (absolute, so never read as a URI; no symlink, which
**     SQLITE_OPEN_NOFOLLOW would refuse) with open(O_CREAT|O_EXCL); a name
**     whose -wal, -shm or -journal already exists is skipped.  It is in a
**     registry of live scratch files until removed; an atexit hook removes
**     those still live if the host exits mid-run.  storage=memory uses "file:/acorn-bench-<hex>"
**     on the memdb VFS instead, shared by the run's connections.
**  3. A setup connection sets page_size and journal_mode and creates the
**     seed's posts table (STRICT; WITHOUT ROWID for text and blob ids).
**  4. Each writer and reader opens its own connection, installs a busy
**     handler that sleeps as SQLite's busy_timeout does and counts its
**     calls, sets the pragmas and prepares its statements; then all wait at
**     a start gate.  The clock starts when the gate opens.  Writers claim
**     `batch` row numbers at a time from a shared atomic counter, so the
**     run writes exactly `rows` rows unless `seconds` passes (checked
**     before each transaction), an insert fails (which stops everyone) or,
**     with SQLite 3.41 or later, the host connection is interrupted
**     (sqlite3_is_interrupted, checked before each transaction).
**     With threads=1 and readers=0 the writer runs in the calling thread.
**  5. Every thread is joined, every statement finalized, every connection
**     closed, rows counted and sizes taken, then the database and its -wal,
**     -shm and -journal are unlinked, on every path.
*/
#include "acorn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Result columns, then the parameters (HIDDEN) in their documented order. */
#define BENCH_COL_ROWS_WRITTEN   0
#define BENCH_COL_ELAPSED        1
#define BENCH_COL_WRITES_PER_SEC 2
#define BENCH_COL_NS_PER_WRITE   3
#define BENCH_COL_P50_US         4
#define BENCH_COL_P99_US         5
#define BENCH_COL_MAX_US         6
#define BENCH_COL_READS_PER_SEC  7
#define BENCH_COL_BUSY           8
#define BENCH_COL_DB_BYTES       9
#define BENCH_COL_SQLITE_VERSION 10
#define BENCH_COL_FSYNC_US       11
#define BENCH_NRESULT            12

#define BENCH_P_ID           0
#define BENCH_P_JOURNAL      1
#define BENCH_P_SYNCHRONOUS  2
#define BENCH_P_THREADS      3
#define BENCH_P_MUTEX        4
#define BENCH_P_BATCH        5
#define BENCH_P_BEGIN        6
#define BENCH_P_PREPARE      7
#define BENCH_P_LOCKING      8
#define BENCH_P_PAGE_SIZE    9
#define BENCH_P_CACHE_SIZE   10
#define BENCH_P_MMAP_SIZE    11
#define BENCH_P_READERS      12
#define BENCH_P_ROWS         13
#define BENCH_P_SECONDS      14
#define BENCH_P_CONTENT      15
#define BENCH_P_BUSY_TIMEOUT 16
#define BENCH_P_STORAGE      17
#define BENCH_P_DIR          18
#define BENCH_NPARAM         19

#define BENCH_SCHEMA \
  "CREATE TABLE x(rows_written, elapsed, writes_per_sec, ns_per_write," \
  " p50_us, p99_us, max_us, reads_per_sec, busy, db_bytes," \
  " sqlite_version, fsync_us," \
  " id HIDDEN, journal HIDDEN, synchronous HIDDEN, threads HIDDEN," \
  " mutex HIDDEN, batch HIDDEN, begin HIDDEN, prepare HIDDEN," \
  " locking HIDDEN, page_size HIDDEN, cache_size HIDDEN, mmap_size HIDDEN," \
  " readers HIDDEN, rows HIDDEN, seconds HIDDEN, content HIDDEN," \
  " busy_timeout HIDDEN, storage HIDDEN, dir HIDDEN)"

#define BENCH_MAX_COMBOS 10000

/* Enumerations: the index is the value kept in bench_value.i. */
enum { ID_INTEGER, ID_SHORTID, ID_UUID4_TEXT, ID_UUID4_BLOB, ID_UUID7_TEXT,
       ID_UUID7_BLOB, ID_UUID8_TEXT, ID_UUID8_BLOB };
enum { STORAGE_FILE, STORAGE_MEMORY };
enum { PREPARE_ONCE, PREPARE_EACH, PREPARE_EXEC };

#define BENCH_ID_IS_BLOB(e) \
  ((e)==ID_UUID4_BLOB || (e)==ID_UUID7_BLOB || (e)==ID_UUID8_BLOB)

static const char *const azId[] = { "integer", "shortid", "uuid4_text",
  "uuid4_blob", "uuid7_text", "uuid7_blob", "uuid8_text", "uuid8_blob", 0 };
static const char *const azJournal[] = { "wal", "delete", "truncate",
  "persist", "memory", "off", 0 };
static const char *const azSync[] = { "off", "normal", "full", "extra", 0 };
static const char *const azBegin[] = { "deferred", "immediate", 0 };
static const char *const azPrepare[] = { "once", "each", "exec", 0 };
static const char *const azLocking[] = { "normal", "exclusive", 0 };
static const char *const azStorage[] = { "file", "memory", 0 };

/* How a parameter's values are checked. */
enum { BP_ENUM, BP_INT, BP_REAL, BP_DIR };

typedef struct bench_param bench_param;
struct bench_param {
  const char *zName;
  int eType;
  const char *const *azEnum;   /* BP_ENUM: the allowed names */
  sqlite3_int64 iMin, iMax;    /* BP_INT: the range */
  int bNull;                   /* BP_INT: NULL allowed, meaning unset */
  sqlite3_int64 iDefault;      /* BP_ENUM, BP_INT default (unless bNull) */
};

static const bench_param aParam[BENCH_NPARAM] = {
  { "id",           BP_ENUM, azId,      0, 0, 0, ID_INTEGER },
  { "journal",      BP_ENUM, azJournal, 0, 0, 0, 0 },
  { "synchronous",  BP_ENUM, azSync,    0, 0, 0, 1 },
  { "threads",      BP_INT,  0,         1, 64, 0, 1 },
  { "mutex",        BP_INT,  0,         0, 1, 0, 0 },
  { "batch",        BP_INT,  0,         1, 1000000, 0, 1 },
  { "begin",        BP_ENUM, azBegin,   0, 0, 0, 0 },
  { "prepare",      BP_ENUM, azPrepare, 0, 0, 0, PREPARE_ONCE },
  { "locking",      BP_ENUM, azLocking, 0, 0, 0, 0 },
  { "page_size",    BP_INT,  0,         512, 65536, 1, 0 },
  { "cache_size",   BP_INT,  0,         -1000000000, 1000000000, 1, 0 },
  { "mmap_size",    BP_INT,  0,         0, 1099511627776LL, 1, 0 },
  { "readers",      BP_INT,  0,         0, 64, 0, 0 },
  { "rows",         BP_INT,  0,         1, 10000000, 0, 10000 },
  { "seconds",      BP_REAL, 0,         0, 86400, 0, 60 },
  { "content",      BP_INT,  0,         0, 1000000, 0, 12 },
  { "busy_timeout", BP_INT,  0,         0, 3600000, 0, 1000 },
  { "storage",      BP_ENUM, azStorage, 0, 0, 0, STORAGE_FILE },
  { "dir",          BP_DIR,  0,         0, 0, 0, 0 },
};

/* One value of one parameter. */
typedef struct bench_value bench_value;
struct bench_value {
  int bNull;          /* unset (page_size, cache_size, mmap_size) */
  sqlite3_int64 i;    /* BP_ENUM index or BP_INT value */
  double r;           /* BP_REAL */
  char *z;            /* BP_DIR, owned: the value as given (shown) */
  char *zReal;        /* BP_DIR, owned: realpath(z), where files are made */
  double rFsyncUs;    /* BP_DIR: fsync_us measured there */
};

/* The settings of one run, read from one combination of values. */
typedef struct bench_config bench_config;
struct bench_config {
  int eId, eJournal, eSync, nThread, bMutex, nBatch, eBegin, ePrepare;
  int eLocking, nReader, nContent, iBusyTimeout, eStorage;
  int bPageSize, bCacheSize, bMmapSize;
  sqlite3_int64 iPageSize, iCacheSize, iMmapSize, nRow;
  double rSeconds;
  const char *zDir;        /* dir as given, for messages */
  const char *zDirReal;    /* its realpath: absolute, no symlink */
};

/* What one run measured. */
typedef struct bench_result bench_result;
struct bench_result {
  sqlite3_int64 nRowsWritten, nWrites, nReads, nBusy, nDbBytes;
  double rElapsed, rP50, rP99, rMax;
};

/* -------------------------------------------------------------------- */
/* Clock, busy handler, small helpers                                    */

static sqlite3_int64 benchMono(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (sqlite3_int64)ts.tv_sec*1000000000 + ts.tv_nsec;
}

static void benchSleepMs(int ms){
  struct timespec ts;
  ts.tv_sec = ms/1000;
  ts.tv_nsec = (long)(ms%1000)*1000000L;
  while( nanosleep(&ts, &ts)!=0 && errno==EINTR ){}
}

/* The busy handler of each connection: the same delays as SQLite's own
** busy_timeout handler (sqliteDefaultBusyCallback), plus a count. */
typedef struct bench_busy bench_busy;
struct bench_busy {
  int iTimeout;            /* ms */
  sqlite3_int64 nBusy;     /* calls */
};

static int benchBusyHandler(void *pArg, int nCount){
  static const unsigned char aDelay[] = {1,2,5,10,15,20,25,25,25,50,50,100};
  static const unsigned char aTotal[] = {0,1,3,8,18,33,53,78,103,128,178,228};
  const int nDelay = (int)sizeof(aDelay);
  bench_busy *p = (bench_busy*)pArg;
  int delay, prior;
  p->nBusy++;
  if( nCount<nDelay ){
    delay = aDelay[nCount];
    prior = aTotal[nCount];
  }else{
    delay = aDelay[nDelay-1];
    prior = aTotal[nDelay-1] + delay*(nCount-(nDelay-1));
  }
  if( prior+delay>p->iTimeout ){
    delay = p->iTimeout - prior;
    if( delay<=0 ) return 0;
  }
  benchSleepMs(delay);
  return 1;
}

/* "id=integer journal=wal ..." for error messages.  sqlite3_free() it. */
static char *benchConfigDesc(const bench_config *c){
  char zPage[32], zCache[32], zMmap[32];
  if( c->bPageSize ) sqlite3_snprintf(32, zPage, "%lld", c->iPageSize);
  else sqlite3_snprintf(32, zPage, "NULL");
  if( c->bCacheSize ) sqlite3_snprintf(32, zCache, "%lld", c->iCacheSize);
  else sqlite3_snprintf(32, zCache, "NULL");
  if( c->bMmapSize ) sqlite3_snprintf(32, zMmap, "%lld", c->iMmapSize);
  else sqlite3_snprintf(32, zMmap, "NULL");
  return sqlite3_mprintf(
    "id=%s journal=%s synchronous=%s threads=%d mutex=%d batch=%d begin=%s"
    " prepare=%s locking=%s page_size=%s cache_size=%s mmap_size=%s"
    " readers=%d rows=%lld seconds=%!.15g content=%d busy_timeout=%d"
    " storage=%s dir=%s",
    azId[c->eId], azJournal[c->eJournal], azSync[c->eSync], c->nThread,
    c->bMutex, c->nBatch, azBegin[c->eBegin], azPrepare[c->ePrepare],
    azLocking[c->eLocking], zPage, zCache, zMmap, c->nReader, c->nRow,
    c->rSeconds, c->nContent, c->iBusyTimeout, azStorage[c->eStorage],
    c->zDir);
}

/* -------------------------------------------------------------------- */
/* One run                                                               */

typedef struct bench_run bench_run;
typedef struct bench_worker bench_worker;

struct bench_worker {
  bench_run *pRun;
  int bReader;
  int bThread;                 /* a pthread was started for it */
  pthread_t tid;
  sqlite3 *db;
  sqlite3_stmt *pIns, *pBegin, *pCommit, *pSel;
  char *zSqlBuf;               /* prepare=exec: the SQL text */
  bench_busy busy;
  sqlite3_int64 nDone;         /* rows inserted or SELECTs run */
  uint64_t *aLat;              /* writers: ns per row done, in its own array
                               ** (no cache line shared with other writers) */
  sqlite3_int64 nLat, nLatAlloc;
  sqlite3_int64 tEnd;          /* writers: when the last row was done */
  uint64_t iRand;              /* readers: xorshift state */
  int rc;
  char *zErr;                  /* sqlite3_malloc'd */
  char aPad[128];              /* keeps the fields each writer updates in its
                               ** loop off its neighbours' cache lines */
};

struct bench_run {
  const bench_config *pCfg;
  sqlite3 *dbHost;             /* the connection running the statement, for
                               ** sqlite3_is_interrupted(); 0: not checked */
  char *zOpen;                 /* file name or URI the connections open */
  int openFlags;
  const char *zInsert;         /* the INSERT with bind parameters */
  unsigned char *aId;          /* nRow ids, nIdStride bytes each */
  int nIdLen;                  /* bytes of one id (0 for integer) */
  char *zContent;
  uint64_t *aLat;              /* all workers' latencies, merged at the end */
  char aPad1[64];              /* iNext, written by every claim, alone on */
  sqlite3_int64 iNext;         /* next unclaimed row number (atomic) */
  char aPad2[64];              /* its cache line, away from what is read */
  int bStop;                   /* atomic: stop now */
  int nWriterLeft;             /* atomic: writers still running */
  sqlite3_int64 tStart, tDeadline;
  pthread_mutex_t appMutex;    /* mutex=1 */
  pthread_mutex_t gateMutex;
  pthread_cond_t gateCond;
  int nReady;                  /* threads past their setup */
  int bGo;                     /* the gate is open */
};

static const char zTitle[] = "Some title";

/* The journal_mode to set.  An in-memory database keeps its journal in
** memory: storage=memory runs wal, delete, truncate and persist as memory
** (setting wal on memdb would try a WAL without shared memory). */
static const char *benchJournalPragma(const bench_config *c){
  if( c->eStorage==STORAGE_MEMORY && c->eJournal<4 ) return "memory";
  return azJournal[c->eJournal];
}

/* Record the first error of a worker and stop the run. */
static void benchWorkerFail(bench_worker *w, const char *zWhat, int rc){
  if( w->rc==SQLITE_OK ){
    w->rc = rc ? rc : SQLITE_ERROR;
    w->zErr = sqlite3_mprintf("%s: %s", zWhat,
                  w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
  }
  __atomic_store_n(&w->pRun->bStop, 1, __ATOMIC_SEQ_CST);
}

static int benchExec(bench_worker *w, const char *zSql){
  int rc = sqlite3_exec(w->db, zSql, 0, 0, 0);
  if( rc!=SQLITE_OK ){
    char *zWhat = sqlite3_mprintf("%s failed", zSql);
    benchWorkerFail(w, zWhat ? zWhat : "setup failed", rc);
    sqlite3_free(zWhat);
  }
  return rc;
}

static int benchLatGrow(bench_worker *w, sqlite3_int64 nNeed);

/* Open the worker's connection, set the pragmas, prepare. */
static int benchWorkerSetup(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  char *zSql;
  int rc;
  rc = sqlite3_open_v2(r->zOpen, &w->db, r->openFlags, 0);
  if( rc!=SQLITE_OK ){
    benchWorkerFail(w, "cannot open the scratch database", rc);
    return rc;
  }
  w->busy.iTimeout = c->iBusyTimeout;
  sqlite3_busy_handler(w->db, benchBusyHandler, &w->busy);
  zSql = sqlite3_mprintf(
      "PRAGMA locking_mode=%s; PRAGMA journal_mode=%s; PRAGMA synchronous=%s;"
      " PRAGMA foreign_keys=ON;",
      azLocking[c->eLocking], benchJournalPragma(c), azSync[c->eSync]);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = benchExec(w, zSql);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && c->bCacheSize ){
    zSql = sqlite3_mprintf("PRAGMA cache_size=%lld", c->iCacheSize);
    rc = zSql ? benchExec(w, zSql) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK && c->bMmapSize ){
    zSql = sqlite3_mprintf("PRAGMA mmap_size=%lld", c->iMmapSize);
    rc = zSql ? benchExec(w, zSql) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc!=SQLITE_OK ) return rc;
  if( w->bReader ){
    rc = sqlite3_prepare_v2(w->db,
        "SELECT title, content, created FROM posts WHERE id=?1", -1,
        &w->pSel, 0);
    if( rc!=SQLITE_OK ) benchWorkerFail(w, "cannot prepare the SELECT", rc);
    acorn_random(&w->iRand, sizeof(w->iRand));
    w->iRand |= 1;
    return rc;
  }
  {
    /* a fair share of the rows, touched now so that no page fault lands
    ** in the timed loop */
    sqlite3_int64 nShare = c->nRow/c->nThread + c->nBatch + 16;
    if( nShare>c->nRow ) nShare = c->nRow;
    if( benchLatGrow(w, nShare) ) return SQLITE_NOMEM;
    memset(w->aLat, 0, sizeof(uint64_t)*(size_t)w->nLatAlloc);
  }
  if( c->ePrepare==PREPARE_EXEC ){
    w->zSqlBuf = sqlite3_malloc(c->nContent + 200);
    if( w->zSqlBuf==0 ) return SQLITE_NOMEM;
    return SQLITE_OK;
  }
  rc = sqlite3_prepare_v2(w->db, c->eBegin ? "BEGIN IMMEDIATE" : "BEGIN",
                          -1, &w->pBegin, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(w->db, "COMMIT", -1,
                                              &w->pCommit, 0);
  if( rc==SQLITE_OK && c->ePrepare==PREPARE_ONCE ){
    rc = sqlite3_prepare_v2(w->db, r->zInsert, -1, &w->pIns, 0);
  }
  if( rc!=SQLITE_OK ) benchWorkerFail(w, "cannot prepare the INSERT", rc);
  return rc;
}

/* benchWorkerSetup, with every failure recorded on the worker. */
static int benchWorkerSetupOrFail(bench_worker *w){
  int rc = benchWorkerSetup(w);
  if( rc!=SQLITE_OK ){
    if( w->rc==SQLITE_OK ) w->rc = rc;
    __atomic_store_n(&w->pRun->bStop, 1, __ATOMIC_SEQ_CST);
  }
  return rc;
}

static void benchWorkerClose(bench_worker *w){
  sqlite3_finalize(w->pIns);
  sqlite3_finalize(w->pBegin);
  sqlite3_finalize(w->pCommit);
  sqlite3_finalize(w->pSel);
  w->pIns = w->pBegin = w->pCommit = w->pSel = 0;
  sqlite3_close_v2(w->db);   /* rolls back an open transaction */
  w->db = 0;
  sqlite3_free(w->zSqlBuf);
  w->zSqlBuf = 0;
}

static void benchWorkerFree(bench_worker *w){
  sqlite3_free(w->aLat);
  w->aLat = 0;
}

/* prepare=exec: the INSERT of row i as SQL text with literal values. */
static const char *benchInsertText(bench_worker *w, sqlite3_int64 i){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  char *z = w->zSqlBuf;
  static const char zHex[] = "0123456789abcdef";
  if( c->eId==ID_INTEGER ){
    memcpy(z, "INSERT INTO posts(title,content) VALUES('", 41); z += 41;
  }else{
    /* only here: integer ids make no aId (it is NULL, and NULL+0 is UB) */
    const unsigned char *aId = r->aId + i*r->nIdLen;
    memcpy(z, "INSERT INTO posts(id,title,content) VALUES(", 43); z += 43;
    if( BENCH_ID_IS_BLOB(c->eId) ){            /* the blob kinds */
      int k;
      *z++ = 'x'; *z++ = '\'';
      for(k=0; k<16; k++){
        *z++ = zHex[aId[k]>>4];
        *z++ = zHex[aId[k]&15];
      }
      *z++ = '\'';
    }else{
      *z++ = '\'';
      memcpy(z, aId, r->nIdLen); z += r->nIdLen;
      *z++ = '\'';
    }
    *z++ = ','; *z++ = '\'';
  }
  memcpy(z, zTitle, sizeof(zTitle)-1); z += sizeof(zTitle)-1;
  memcpy(z, "','", 3); z += 3;
  memcpy(z, r->zContent, c->nContent); z += c->nContent;
  memcpy(z, "')", 3);
  return w->zSqlBuf;
}

/* Insert row i.  SQLITE_OK or an error already recorded. */
static int benchInsertRow(bench_worker *w, sqlite3_int64 i){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  sqlite3_stmt *pStmt = w->pIns;
  int rc, iCol = 1;
  if( c->ePrepare==PREPARE_EXEC ){
    rc = sqlite3_exec(w->db, benchInsertText(w, i), 0, 0, 0);
    if( rc!=SQLITE_OK ) benchWorkerFail(w, "insert failed", rc);
    return rc;
  }
  if( c->ePrepare==PREPARE_EACH ){
    rc = sqlite3_prepare_v2(w->db, r->zInsert, -1, &pStmt, 0);
    if( rc!=SQLITE_OK ){
      benchWorkerFail(w, "insert failed", rc);
      return rc;
    }
  }
  if( c->eId!=ID_INTEGER ){
    const unsigned char *a = r->aId + i*r->nIdLen;
    if( BENCH_ID_IS_BLOB(c->eId) ){
      sqlite3_bind_blob(pStmt, 1, a, 16, SQLITE_STATIC);
    }else{
      sqlite3_bind_text(pStmt, 1, (const char*)a, r->nIdLen, SQLITE_STATIC);
    }
    iCol = 2;
  }
  sqlite3_bind_text(pStmt, iCol, zTitle, sizeof(zTitle)-1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, iCol+1, r->zContent, c->nContent, SQLITE_STATIC);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_DONE ){
    rc = c->ePrepare==PREPARE_EACH ? sqlite3_finalize(pStmt)
                                   : sqlite3_reset(pStmt);
  }else{
    benchWorkerFail(w, "insert failed", rc);
    if( c->ePrepare==PREPARE_EACH ) sqlite3_finalize(pStmt);
    else sqlite3_reset(pStmt);
    return w->rc;
  }
  if( rc!=SQLITE_OK ) benchWorkerFail(w, "insert failed", rc);
  return rc;
}

/* BEGIN or COMMIT of a batch. */
static int benchTxn(bench_worker *w, int bCommit){
  const bench_config *c = w->pRun->pCfg;
  int rc;
  if( c->ePrepare==PREPARE_EXEC ){
    rc = sqlite3_exec(w->db, bCommit ? "COMMIT"
                      : (c->eBegin ? "BEGIN IMMEDIATE" : "BEGIN"), 0, 0, 0);
  }else{
    sqlite3_stmt *p = bCommit ? w->pCommit : w->pBegin;
    rc = sqlite3_step(p);
    sqlite3_reset(p);
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc!=SQLITE_OK ){
    benchWorkerFail(w, bCommit ? "COMMIT failed" : "BEGIN failed", rc);
  }
  return rc;
}

/* Room for at least nNeed latencies in w->aLat (rarely reached: the
** first allocation is a fair share of the rows).  Nonzero on failure. */
static int benchLatGrow(bench_worker *w, sqlite3_int64 nNeed){
  sqlite3_int64 nNew = w->nLatAlloc*2;
  uint64_t *aNew;
  if( nNew<nNeed ) nNew = nNeed;
  aNew = sqlite3_realloc64(w->aLat, sizeof(uint64_t)*(sqlite3_uint64)nNew);
  if( aNew==0 ){
    if( w->rc==SQLITE_OK ){
      w->rc = SQLITE_NOMEM;
      w->zErr = sqlite3_mprintf("out of memory for the latencies");
    }
    __atomic_store_n(&w->pRun->bStop, 1, __ATOMIC_SEQ_CST);
    return 1;
  }
  w->aLat = aNew;
  w->nLatAlloc = nNew;
  return 0;
}

/* Has the host connection been interrupted (sqlite3_interrupt, Ctrl-C in
** the shell)?  Needs SQLite 3.41 in the headers to compile the call and in
** the library to make it (an older library's sqlite3_api has no such
** entry); otherwise never. */
static int benchInterrupted(sqlite3 *db){
#if SQLITE_VERSION_NUMBER>=3041000
  return db!=0 && sqlite3_is_interrupted(db);
#else
  (void)db;
  return 0;
#endif
}

static void benchWriterLoop(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  sqlite3_int64 t = benchMono();
  for(;;){
    sqlite3_int64 i0, n, j, tPrev;
    int rc = SQLITE_OK;
    if( __atomic_load_n(&r->bStop, __ATOMIC_RELAXED) ) break;
    if( t>=r->tDeadline ) break;
    if( benchInterrupted(r->dbHost) ){
      if( w->rc==SQLITE_OK ){
        w->rc = SQLITE_INTERRUPT;
        w->zErr = sqlite3_mprintf("interrupted");
      }
      __atomic_store_n(&r->bStop, 1, __ATOMIC_SEQ_CST);
      break;
    }
    i0 = __atomic_fetch_add(&r->iNext, (sqlite3_int64)c->nBatch,
                            __ATOMIC_RELAXED);
    if( i0>=c->nRow ) break;
    n = c->nRow - i0;
    if( n>c->nBatch ) n = c->nBatch;
    if( w->nLat+n>w->nLatAlloc && benchLatGrow(w, w->nLat+n) ) break;
    tPrev = benchMono();          /* latency includes waiting for the mutex */
    if( c->bMutex ) pthread_mutex_lock(&r->appMutex);
    if( c->nBatch>1 ) rc = benchTxn(w, 0);
    for(j=0; rc==SQLITE_OK && j<n; j++){
      rc = benchInsertRow(w, i0+j);
      if( rc==SQLITE_OK && (j<n-1 || c->nBatch==1) ){
        t = benchMono();
        w->aLat[w->nLat++] = t>tPrev ? (uint64_t)(t-tPrev) : 1;
        tPrev = t;
      }
    }
    if( rc==SQLITE_OK && c->nBatch>1 ){
      rc = benchTxn(w, 1);
      t = benchMono();
      w->aLat[w->nLat++] = t>tPrev ? (uint64_t)(t-tPrev) : 1;  /* + COMMIT */
    }
    if( c->bMutex ) pthread_mutex_unlock(&r->appMutex);
    if( rc!=SQLITE_OK ) break;
    w->nDone += n;
  }
  w->tEnd = benchMono();
  __atomic_fetch_sub(&r->nWriterLeft, 1, __ATOMIC_SEQ_CST);
}

static void benchReaderLoop(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  while( !__atomic_load_n(&r->bStop, __ATOMIC_RELAXED)
      && __atomic_load_n(&r->nWriterLeft, __ATOMIC_RELAXED)>0 ){
    sqlite3_int64 n = __atomic_load_n(&r->iNext, __ATOMIC_RELAXED);
    sqlite3_int64 k;
    int rc;
    if( n>c->nRow ) n = c->nRow;
    if( n<1 ) n = 1;
    w->iRand ^= w->iRand<<13; w->iRand ^= w->iRand>>7; w->iRand ^= w->iRand<<17;
    k = (sqlite3_int64)(w->iRand % (uint64_t)n);
    if( c->eId==ID_INTEGER ){
      sqlite3_bind_int64(w->pSel, 1, k+1);
    }else if( BENCH_ID_IS_BLOB(c->eId) ){
      sqlite3_bind_blob(w->pSel, 1, r->aId + k*16, 16, SQLITE_STATIC);
    }else{
      sqlite3_bind_text(w->pSel, 1, (const char*)r->aId + k*r->nIdLen,
                        r->nIdLen, SQLITE_STATIC);
    }
    while( (rc = sqlite3_step(w->pSel))==SQLITE_ROW ){}
    if( rc==SQLITE_DONE ) rc = sqlite3_reset(w->pSel);
    else sqlite3_reset(w->pSel);
    if( rc!=SQLITE_OK ){
      benchWorkerFail(w, "read failed", rc);
      break;
    }
    w->nDone++;
  }
}

static void *benchThreadMain(void *pArg){
  bench_worker *w = (bench_worker*)pArg;
  bench_run *r = w->pRun;
  benchWorkerSetupOrFail(w);
  pthread_mutex_lock(&r->gateMutex);
  r->nReady++;
  pthread_cond_broadcast(&r->gateCond);
  while( !r->bGo ) pthread_cond_wait(&r->gateCond, &r->gateMutex);
  pthread_mutex_unlock(&r->gateMutex);
  if( w->bReader ){
    benchReaderLoop(w);
  }else{
    benchWriterLoop(w);
  }
  return 0;
}

static int benchCmpU64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

/* Make the ids, before any clock starts. */
static int benchMakeIds(bench_run *r){
  const bench_config *c = r->pCfg;
  static const char zAlpha[] = "ABEGHNQRTadeghnqrt2345789";
  sqlite3_int64 i;
  switch( c->eId ){
    case ID_INTEGER:  r->nIdLen = 0;  return SQLITE_OK;
    case ID_SHORTID:  r->nIdLen = 16; break;
    case ID_UUID4_BLOB: case ID_UUID7_BLOB: case ID_UUID8_BLOB:
                      r->nIdLen = 16; break;
    default:          r->nIdLen = 36; break;
  }
  r->aId = sqlite3_malloc64((sqlite3_uint64)c->nRow * r->nIdLen);
  if( r->aId==0 ) return SQLITE_NOMEM;
  for(i=0; i<c->nRow; i++){
    unsigned char *p = r->aId + i*r->nIdLen;
    unsigned char a[16];
    int k;
    switch( c->eId ){
      case ID_SHORTID:
        for(k=0; k<16; ){
          unsigned char b;
          acorn_random(&b, 1);
          if( b<250 ) p[k++] = (unsigned char)zAlpha[b%25];
        }
        continue;
      case ID_UUID4_TEXT: case ID_UUID4_BLOB: acorn_uuid4(a); break;
      case ID_UUID7_TEXT: case ID_UUID7_BLOB: acorn_uuid7(a); break;
      default:                                acorn_uuid8(a); break;
    }
    if( BENCH_ID_IS_BLOB(c->eId) ) memcpy(p, a, 16);
    else acorn_uuid_format(a, (char*)p);
  }
  return SQLITE_OK;
}

/* -------------------------------------------------------------------- */
/* Scratch files still live, removed by an atexit hook                   */
/*
** A host that exits during a run (the sqlite3 shell calls exit(1) on the
** third Ctrl-C) would leave the scratch database and its -wal, -shm and
** -journal behind.  Every scratch file is in this registry from its
** creation until it is removed; an atexit hook, installed once, removes
** the files of those still registered.  The hook may run inside a signal
** handler that interrupted a thread holding the registry's mutex, so it
** only tries the lock, for a bounded time, and gives up rather than
** deadlock.  The library stays loaded until exit (-z nodelete), so the
** hook's code is there when it runs.
*/
typedef struct bench_live bench_live;
struct bench_live {
  bench_live *pNext;
  int bSideFiles;         /* also -wal, -shm, -journal */
  char zPath[1];          /* the file, allocated to fit */
};
static pthread_mutex_t benchLiveMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t benchLiveOnce = PTHREAD_ONCE_INIT;
static bench_live *benchLiveList = 0;
static int benchLiveHook = 0;          /* the atexit hook is installed */

static void benchUnlinkAll(const char *zPath, int bSideFiles){
  static const char *const azSuffix[] = { "-wal", "-shm", "-journal" };
  char zBuf[4200];
  int k;
  if( bSideFiles ){
    for(k=0; k<3; k++){
      if( strlen(zPath)+strlen(azSuffix[k])<sizeof(zBuf) ){
        memcpy(zBuf, zPath, strlen(zPath));
        strcpy(zBuf+strlen(zPath), azSuffix[k]);
        unlink(zBuf);
      }
    }
  }
  unlink(zPath);
}

static void benchLiveAtExit(void){
  struct timespec ts = { 0, 2000000 };   /* 2 ms */
  bench_live *p;
  int i;
  for(i=0; i<250; i++){
    if( pthread_mutex_trylock(&benchLiveMutex)==0 ) break;
    nanosleep(&ts, 0);
  }
  if( i==250 ) return;        /* held by the thread that is exiting */
  while( (p = benchLiveList)!=0 ){
    benchLiveList = p->pNext;
    benchUnlinkAll(p->zPath, p->bSideFiles);
    free(p);                  /* a thread removing it later finds nothing */
  }
  pthread_mutex_unlock(&benchLiveMutex);
}

static void benchLiveInstall(void){
  benchLiveHook = atexit(benchLiveAtExit)==0;
}

/* Register zPath as live.  Nonzero only if out of memory. */
static int benchLiveAdd(const char *zPath, int bSideFiles){
  size_t n = strlen(zPath);
  bench_live *p = malloc(sizeof(bench_live)+n);
  if( p==0 ) return 1;
  pthread_once(&benchLiveOnce, benchLiveInstall);
  memcpy(p->zPath, zPath, n+1);
  p->bSideFiles = bSideFiles;
  pthread_mutex_lock(&benchLiveMutex);
  p->pNext = benchLiveList;
  benchLiveList = p;
  pthread_mutex_unlock(&benchLiveMutex);
  return 0;
}

/* Remove zPath (and its side files if registered so) and unregister it. */
static void benchLiveRemove(const char *zPath){
  bench_live **pp, *p = 0;
  pthread_mutex_lock(&benchLiveMutex);
  for(pp=&benchLiveList; *pp; pp=&(*pp)->pNext){
    if( strcmp((*pp)->zPath, zPath)==0 ){
      p = *pp;
      *pp = p->pNext;
      break;
    }
  }
  pthread_mutex_unlock(&benchLiveMutex);
  benchUnlinkAll(zPath, p ? p->bSideFiles : 1);
  free(p);
}

/* Create a fresh scratch file name in zDir exclusively: *pzPath, and, if
** pFd is not NULL, the open descriptor in *pFd.  It is registered as live
** until benchLiveRemove(). */
static int benchCreateScratch(const char *zDir, const char *zPrefix,
                              const char *zSuffix, int bSideFiles,
                              char **pzPath, int *pFd, char **pzErr){
  int iTry;
  for(iTry=0; iTry<100; iTry++){
    unsigned char a[8];
    char zHex[17];
    char *zPath;
    int fd, k;
    struct stat st;
    acorn_random(a, sizeof(a));
    for(k=0; k<8; k++) sqlite3_snprintf(3, zHex+2*k, "%02x", a[k]);
    zPath = sqlite3_mprintf("%s/%s%s%s", zDir, zPrefix, zHex, zSuffix);
    if( zPath==0 ) return SQLITE_NOMEM;
    if( bSideFiles ){
      static const char *const azSide[] = { "-wal", "-shm", "-journal" };
      int bTaken = 0;
      for(k=0; k<3 && !bTaken; k++){
        char *zSide = sqlite3_mprintf("%s%s", zPath, azSide[k]);
        if( zSide==0 ){ sqlite3_free(zPath); return SQLITE_NOMEM; }
        if( lstat(zSide, &st)==0 || errno!=ENOENT ) bTaken = 1;
        sqlite3_free(zSide);
      }
      if( bTaken ){ sqlite3_free(zPath); continue; }
    }
    fd = open(zPath, O_CREAT|O_EXCL|O_RDWR|O_CLOEXEC|O_NOFOLLOW, 0600);
    if( fd<0 ){
      int e = errno;
      if( e==EEXIST ){ sqlite3_free(zPath); continue; }
      *pzErr = sqlite3_mprintf("cannot create a scratch file %s: %s",
                               zPath, strerror(e));
      sqlite3_free(zPath);
      return SQLITE_CANTOPEN;
    }
    if( benchLiveAdd(zPath, bSideFiles) ){
      close(fd);
      unlink(zPath);
      sqlite3_free(zPath);
      return SQLITE_NOMEM;
    }
    if( pFd ) *pFd = fd;      /* the caller writes the file it created */
    else close(fd);
    *pzPath = zPath;
    return SQLITE_OK;
  }
  *pzErr = sqlite3_mprintf("cannot find a free scratch file name in %s", zDir);
  return SQLITE_CANTOPEN;
}

/* fsync_us: median of 5 (4 KiB pwrite + fsync) on a new file in zDir. */
static int benchFsyncUs(const char *zDir, double *pUs, char **pzErr){
  char *zPath = 0;
  char aBuf[4096];
  sqlite3_int64 aT[5], t;
  int rc, fd, i, j;
  rc = benchCreateScratch(zDir, "acorn-fsync-", ".tmp", 0, &zPath, &fd,
                          pzErr);
  if( rc!=SQLITE_OK ) return rc;
  memset(aBuf, 'a', sizeof(aBuf));
  for(i=0; i<5 && rc==SQLITE_OK; i++){
    aBuf[0] = (char)('a'+i);
    t = benchMono();
    if( pwrite(fd, aBuf, sizeof(aBuf), 0)!=(ssize_t)sizeof(aBuf)
     || fsync(fd)!=0 ){
      *pzErr = sqlite3_mprintf("cannot write and fsync %s: %s", zPath,
                               strerror(errno));
      rc = SQLITE_IOERR;
    }
    aT[i] = benchMono() - t;
  }
  close(fd);
  benchLiveRemove(zPath);
  sqlite3_free(zPath);
  if( rc!=SQLITE_OK ) return rc;
  for(i=1; i<5; i++){                       /* insertion sort of 5 */
    for(j=i; j>0 && aT[j-1]>aT[j]; j--){
      t = aT[j]; aT[j] = aT[j-1]; aT[j-1] = t;
    }
  }
  *pUs = (double)aT[2]/1000.0;
  return SQLITE_OK;
}

static int benchSetupSchema(bench_run *r, sqlite3 *db, char **pzErr){
  const bench_config *c = r->pCfg;
  static const char *const azType[] = { "INTEGER", "TEXT", "BLOB" };
  int iType = c->eId==ID_INTEGER ? 0 : (BENCH_ID_IS_BLOB(c->eId)) ? 2 : 1;
  char *zSql;
  int rc = SQLITE_OK;
  if( c->bPageSize ){
    zSql = sqlite3_mprintf("PRAGMA page_size=%lld", c->iPageSize);
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pStmt = 0;
    zSql = sqlite3_mprintf("PRAGMA journal_mode=%s", benchJournalPragma(c));
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
     && c->eStorage==STORAGE_FILE ){
      const char *zGot = (const char*)sqlite3_column_text(pStmt, 0);
      if( zGot==0 || sqlite3_stricmp(zGot, azJournal[c->eJournal])!=0 ){
        *pzErr = sqlite3_mprintf("journal_mode=%s was not applied; SQLite"
            " reports %s", azJournal[c->eJournal], zGot ? zGot : "NULL");
        rc = SQLITE_ERROR;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
    else sqlite3_finalize(pStmt);
  }
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf(
        "CREATE TABLE posts(id %s PRIMARY KEY, title TEXT NOT NULL,"
        " content TEXT NOT NULL, created TEXT NOT NULL DEFAULT"
        " (strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'))) STRICT%s",
        azType[iType], iType ? ", WITHOUT ROWID" : "");
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc!=SQLITE_OK && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("cannot set up the scratch database: %s",
                             sqlite3_errmsg(db));
  }
  return rc;
}

/* Sizes at the end: database plus WAL. */
static sqlite3_int64 benchDbBytes(bench_run *r, sqlite3 *db){
  const bench_config *c = r->pCfg;
  sqlite3_int64 n = 0;
  if( c->eStorage==STORAGE_FILE ){
    struct stat st;
    char *zWal = sqlite3_mprintf("%s-wal", r->zOpen);
    if( stat(r->zOpen, &st)==0 ) n += st.st_size;
    if( zWal && stat(zWal, &st)==0 ) n += st.st_size;
    sqlite3_free(zWal);
  }else{
    sqlite3_stmt *pStmt = 0;
    if( sqlite3_prepare_v2(db, "SELECT page_count*page_size FROM"
          " pragma_page_count, pragma_page_size", -1, &pStmt, 0)==SQLITE_OK
     && sqlite3_step(pStmt)==SQLITE_ROW ){
      n = sqlite3_column_int64(pStmt, 0);
    }
    sqlite3_finalize(pStmt);
  }
  return n;
}

/* One run with the settings in c.  On error, *pzErr (without prefix). */
static int benchRun(const bench_config *c, sqlite3 *dbHost,
                    bench_result *pRes, char **pzErr){
  bench_run run;
  bench_worker *aW = 0;
  sqlite3 *dbSetup = 0;
  int nW = c->nThread + c->nReader;
  int bThreads = nW>1;
  int rc, i, nStarted = 0;
  int bMutexInit = 0;

  memset(&run, 0, sizeof(run));
  memset(pRes, 0, sizeof(*pRes));
  run.pCfg = c;
#if SQLITE_VERSION_NUMBER>=3041000
  if( sqlite3_libversion_number()>=3041000 ) run.dbHost = dbHost;
#else
  (void)dbHost;
#endif
  run.nWriterLeft = c->nThread;

  /* 1. ids and content, before any clock */
  rc = benchMakeIds(&run);
  if( rc==SQLITE_OK ){
    run.zContent = sqlite3_malloc(c->nContent+1);
    run.aLat = sqlite3_malloc64(sizeof(uint64_t)*(sqlite3_uint64)c->nRow);
    aW = sqlite3_malloc64(sizeof(bench_worker)*(sqlite3_uint64)nW);
    if( aW ) memset(aW, 0, sizeof(bench_worker)*(size_t)nW);
    if( run.zContent==0 || run.aLat==0 || aW==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    static const char zPat[] = "Some content";
    for(i=0; i<c->nContent; i++) run.zContent[i] = zPat[i%12];
    run.zContent[c->nContent] = 0;
    run.zInsert = c->eId==ID_INTEGER
        ? "INSERT INTO posts(title,content) VALUES(?1,?2)"
        : "INSERT INTO posts(id,title,content) VALUES(?1,?2,?3)";
  }

  /* 2. the scratch database */
  if( rc==SQLITE_OK ){
    if( c->eStorage==STORAGE_FILE ){
      rc = benchCreateScratch(c->zDirReal, "acorn-bench-", ".db", 1,
                              &run.zOpen, 0, pzErr);
      run.openFlags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOFOLLOW;
    }else{
      unsigned char a[8];
      acorn_random(a, sizeof(a));
      run.zOpen = sqlite3_mprintf("file:/acorn-bench-%02x%02x%02x%02x%02x"
          "%02x%02x%02x?vfs=memdb", a[0], a[1], a[2], a[3], a[4], a[5],
          a[6], a[7]);
      if( run.zOpen==0 ) rc = SQLITE_NOMEM;
      run.openFlags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI;
    }
    if( bThreads ) run.openFlags |= SQLITE_OPEN_NOMUTEX;
  }

  /* 3. schema */
  if( rc==SQLITE_OK ){
    rc = sqlite3_open_v2(run.zOpen, &dbSetup, run.openFlags, 0);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("cannot open the scratch database: %s",
                 dbSetup ? sqlite3_errmsg(dbSetup) : sqlite3_errstr(rc));
    }else{
      rc = benchSetupSchema(&run, dbSetup, pzErr);
    }
  }

  /* 4. the workers */
  if( rc==SQLITE_OK ){
    for(i=0; i<nW; i++){
      aW[i].pRun = &run;
      aW[i].bReader = i>=c->nThread;
    }
    if( pthread_mutex_init(&run.appMutex, 0)==0 ){
      if( pthread_mutex_init(&run.gateMutex, 0)==0 ){
        if( pthread_cond_init(&run.gateCond, 0)==0 ){
          bMutexInit = 1;
        }else{
          pthread_mutex_destroy(&run.gateMutex);
          pthread_mutex_destroy(&run.appMutex);
        }
      }else{
        pthread_mutex_destroy(&run.appMutex);
      }
    }
    if( !bMutexInit ){
      rc = SQLITE_ERROR;
      *pzErr = sqlite3_mprintf("cannot create a mutex");
    }
  }
  /* For file storage the setup connection is closed while the workers
  ** run (locking=exclusive lets no other connection in) and opened again
  ** to count.  A memdb database lives only while a connection holds it. */
  if( rc==SQLITE_OK && c->eStorage==STORAGE_FILE ){
    sqlite3_close_v2(dbSetup);
    dbSetup = 0;
  }
  if( rc==SQLITE_OK && !bThreads ){
    if( benchWorkerSetupOrFail(&aW[0])==SQLITE_OK ){
      run.tStart = benchMono();
      run.tDeadline = run.tStart + (sqlite3_int64)(c->rSeconds*1e9);
      benchWriterLoop(&aW[0]);
    }
  }else if( rc==SQLITE_OK ){
    for(i=0; i<nW; i++){
      if( pthread_create(&aW[i].tid, 0, benchThreadMain, &aW[i])!=0 ){
        *pzErr = sqlite3_mprintf("cannot start thread %d of %d: %s",
                                 i+1, nW, strerror(errno));
        rc = SQLITE_ERROR;
        __atomic_store_n(&run.bStop, 1, __ATOMIC_SEQ_CST);
        break;
      }
      aW[i].bThread = 1;
      nStarted++;
    }
    pthread_mutex_lock(&run.gateMutex);
    while( run.nReady<nStarted ){
      pthread_cond_wait(&run.gateCond, &run.gateMutex);
    }
    run.tStart = benchMono();
    run.tDeadline = run.tStart + (sqlite3_int64)(c->rSeconds*1e9);
    run.bGo = 1;
    pthread_cond_broadcast(&run.gateCond);
    pthread_mutex_unlock(&run.gateMutex);
    for(i=0; i<nStarted; i++) pthread_join(aW[i].tid, 0);
  }

  /* 5. results, then close and remove everything, on every path */
  if( aW ){
    sqlite3_int64 tEnd = run.tStart;
    for(i=0; i<nW; i++){
      if( rc==SQLITE_OK && aW[i].rc!=SQLITE_OK ){
        rc = aW[i].rc;
        sqlite3_free(*pzErr);
        *pzErr = aW[i].zErr;
        aW[i].zErr = 0;
      }
      if( !aW[i].bReader ){
        pRes->nWrites += aW[i].nDone;
        if( aW[i].tEnd>tEnd ) tEnd = aW[i].tEnd;
      }else{
        pRes->nReads += aW[i].nDone;
      }
      pRes->nBusy += aW[i].busy.nBusy;
      sqlite3_free(aW[i].zErr);
      benchWorkerClose(&aW[i]);
    }
    pRes->rElapsed = (double)(tEnd - run.tStart)/1e9;
  }
  if( rc==SQLITE_OK && dbSetup==0 ){
    rc = sqlite3_open_v2(run.zOpen, &dbSetup, run.openFlags, 0);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("cannot open the scratch database: %s",
                 dbSetup ? sqlite3_errmsg(dbSetup) : sqlite3_errstr(rc));
    }
  }
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pStmt = 0;
    pRes->nDbBytes = benchDbBytes(&run, dbSetup);
    rc = sqlite3_prepare_v2(dbSetup, "SELECT count(*) FROM posts", -1,
                            &pStmt, 0);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      pRes->nRowsWritten = sqlite3_column_int64(pStmt, 0);
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
    else sqlite3_finalize(pStmt);
    if( rc!=SQLITE_OK ){
      *pzErr = sqlite3_mprintf("cannot count the rows: %s",
                               sqlite3_errmsg(dbSetup));
    }
  }
  if( rc==SQLITE_OK ){
    /* every writer's latencies, merged (each row is done at most once) */
    sqlite3_int64 n = 0;
    for(i=0; i<nW; i++){
      if( aW[i].nLat==0 || n+aW[i].nLat>c->nRow ) continue;
      memcpy(run.aLat+n, aW[i].aLat, sizeof(uint64_t)*(size_t)aW[i].nLat);
      n += aW[i].nLat;
    }
    if( n>0 ){
      qsort(run.aLat, (size_t)n, sizeof(uint64_t), benchCmpU64);
      pRes->rP50 = run.aLat[(n+1)/2-1]/1000.0;
      pRes->rP99 = run.aLat[(n*99+99)/100-1]/1000.0;
      pRes->rMax = run.aLat[n-1]/1000.0;
    }
  }
  sqlite3_close_v2(dbSetup);
  if( run.zOpen && c->eStorage==STORAGE_FILE ) benchLiveRemove(run.zOpen);
  if( bMutexInit ){
    pthread_cond_destroy(&run.gateCond);
    pthread_mutex_destroy(&run.gateMutex);
    pthread_mutex_destroy(&run.appMutex);
  }
  sqlite3_free(run.zOpen);
  sqlite3_free(run.aId);
  sqlite3_free(run.zContent);
  sqlite3_free(run.aLat);
  for(i=0; aW && i<nW; i++) benchWorkerFree(&aW[i]);
  sqlite3_free(aW);
  return rc;
}

/* -------------------------------------------------------------------- */
/* The virtual table                                                     */

typedef struct bench_vtab bench_vtab;
struct bench_vtab {
  sqlite3_vtab base;
  sqlite3 *db;                      /* the connection it belongs to */
};

typedef struct bench_cursor bench_cursor;
struct bench_cursor {
  sqlite3_vtab_cursor base;
  bench_value *aVal[BENCH_NPARAM];  /* each parameter's values, ordered */
  int nVal[BENCH_NPARAM];
  int nAlloc[BENCH_NPARAM];         /* room in aVal[p] */
  int aIdx[BENCH_NPARAM];           /* the current combination */
  sqlite3_int64 iRowid;
  int bEof;
  bench_result res;
};

static int benchConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  bench_vtab *pNew;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, BENCH_SCHEMA);
  if( rc==SQLITE_OK ){
    pNew = sqlite3_malloc(sizeof(*pNew));
    if( pNew==0 ) return SQLITE_NOMEM;
    memset(pNew, 0, sizeof(*pNew));
    pNew->db = db;
    *ppVtab = &pNew->base;
    sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  }
  return rc;
}

static int benchDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static void benchCursorReset(bench_cursor *pCur){
  int p, k;
  for(p=0; p<BENCH_NPARAM; p++){
    for(k=0; k<pCur->nVal[p]; k++){
      sqlite3_free(pCur->aVal[p][k].z);
      sqlite3_free(pCur->aVal[p][k].zReal);
    }
    sqlite3_free(pCur->aVal[p]);
    pCur->aVal[p] = 0;
    pCur->nVal[p] = 0;
    pCur->nAlloc[p] = 0;
    pCur->aIdx[p] = 0;
  }
  pCur->bEof = 1;
}

static int benchOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  bench_cursor *pCur;
  (void)pVtab;
  pCur = sqlite3_malloc(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

static int benchClose(sqlite3_vtab_cursor *cur){
  bench_cursor *pCur = (bench_cursor*)cur;
  benchCursorReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* A value as the error message shows it.  sqlite3_free() it. */
static char *benchValueDesc(sqlite3_value *v){
  switch( sqlite3_value_type(v) ){
    case SQLITE_INTEGER:
      return sqlite3_mprintf("%lld", sqlite3_value_int64(v));
    case SQLITE_FLOAT:
      return sqlite3_mprintf("%!.15g", sqlite3_value_double(v));
    case SQLITE_TEXT:
      return sqlite3_mprintf("%Q", (const char*)sqlite3_value_text(v));
    case SQLITE_BLOB:
      return sqlite3_mprintf("a blob");
    default:
      return sqlite3_mprintf("NULL");
  }
}

/* The error for parameter p and value v. */
static void benchValueError(sqlite3_vtab *pVtab, int p, sqlite3_value *v,
                            const char *zWhy){
  const bench_param *pP = &aParam[p];
  char *zGot = benchValueDesc(v);
  char *zAllowed = 0;
  switch( pP->eType ){
    case BP_ENUM: {
      int k;
      zAllowed = sqlite3_mprintf("one of");
      for(k=0; zAllowed && pP->azEnum[k]; k++){
        char *z = sqlite3_mprintf("%s%s %s", zAllowed, k ? "," : "",
                                  pP->azEnum[k]);
        sqlite3_free(zAllowed);
        zAllowed = z;
      }
      break;
    }
    case BP_INT:
      if( p==BENCH_P_PAGE_SIZE ){
        zAllowed = sqlite3_mprintf("a power of two in 512..65536, or NULL"
                                   " for the library default");
      }else if( p==BENCH_P_MUTEX ){
        zAllowed = sqlite3_mprintf("0 or 1");
      }else{
        zAllowed = sqlite3_mprintf("an integer in %lld..%lld%s", pP->iMin,
                pP->iMax, pP->bNull ? ", or NULL for the library default" : "");
      }
      break;
    case BP_REAL:
      zAllowed = sqlite3_mprintf("a number greater than 0 and at most %lld",
                                 pP->iMax);
      break;
    default:
      zAllowed = sqlite3_mprintf("an existing writable directory");
      break;
  }
  if( zWhy ){
    acorn_vtab_error(pVtab, "bench_insert: %s must be %s (got %s: %s)",
                     pP->zName, zAllowed ? zAllowed : "?",
                     zGot ? zGot : "?", zWhy);
  }else{
    acorn_vtab_error(pVtab, "bench_insert: %s must be %s (got %s)",
                     pP->zName, zAllowed ? zAllowed : "?", zGot ? zGot : "?");
  }
  sqlite3_free(zAllowed);
  sqlite3_free(zGot);
}

/* Length of "/acorn-bench-<16 hex>.db", the longest name made in dir that
** SQLite opens. */
#define BENCH_SCRATCH_NAME_LEN 32

/* Check directory z (the value of dir, or the default) and fill *pOut with
** it and with its realpath.  Files are made under the realpath: it is
** absolute, so SQLite never reads it as a URI (a relative dir such as
** 'file:x.db#' would otherwise open x.db), and it has no symlink, which
** SQLITE_OPEN_NOFOLLOW refuses anywhere in the path.  SQLITE_OK or an
** error set. */
static int benchParseDir(sqlite3_vtab *pVtab, const char *z,
                         bench_value *pOut){
  struct stat st;
  const char *zWhy = 0;
  char *zReal;
  char zBuf[160];
  sqlite3_vfs *pVfs;
  if( stat(z, &st)!=0 ){
    zWhy = strerror(errno);
  }else if( !S_ISDIR(st.st_mode) ){
    zWhy = "not a directory";
  }else if( access(z, W_OK|X_OK)!=0 ){
    zWhy = strerror(errno);
  }
  if( zWhy ){
    acorn_vtab_error(pVtab, "bench_insert: dir must be an existing writable"
                     " directory (got %Q: %s)", z, zWhy);
    return SQLITE_ERROR;
  }
  zReal = realpath(z, 0);
  if( zReal==0 ){
    acorn_vtab_error(pVtab, "bench_insert: dir must be an existing writable"
                     " directory (got %Q: realpath: %s)", z, strerror(errno));
    return SQLITE_ERROR;
  }
  pVfs = sqlite3_vfs_find(0);
  /* SQLite opens a database only if its path plus "-journal" fits in the
  ** VFS's mxPathname (sqlite3PagerOpen) */
  if( pVfs && (int)strlen(zReal)+BENCH_SCRATCH_NAME_LEN+8>pVfs->mxPathname ){
    sqlite3_snprintf(sizeof(zBuf), zBuf, "the path of a scratch database"
        " there would be %d bytes, more than SQLite's limit of %d",
        (int)strlen(zReal)+BENCH_SCRATCH_NAME_LEN, pVfs->mxPathname-8);
    acorn_vtab_error(pVtab, "bench_insert: dir must be an existing writable"
                     " directory (got %Q: %s)", z, zBuf);
    free(zReal);
    return SQLITE_ERROR;
  }
  pOut->z = sqlite3_mprintf("%s", z);
  pOut->zReal = sqlite3_mprintf("%s", zReal);
  free(zReal);
  if( pOut->z==0 || pOut->zReal==0 ){
    sqlite3_free(pOut->z);
    sqlite3_free(pOut->zReal);
    pOut->z = pOut->zReal = 0;
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Check value v of parameter p; fill *pOut.  SQLITE_OK or an error set. */
static int benchParseValue(sqlite3_vtab *pVtab, int p, sqlite3_value *v,
                           bench_value *pOut){
  const bench_param *pP = &aParam[p];
  int eType = sqlite3_value_type(v);
  memset(pOut, 0, sizeof(*pOut));
  switch( pP->eType ){
    case BP_ENUM: {
      int k;
      if( eType==SQLITE_TEXT ){
        const char *z = (const char*)sqlite3_value_text(v);
        for(k=0; z && pP->azEnum[k]; k++){
          if( strcmp(z, pP->azEnum[k])==0 ){
            pOut->i = k;
            return SQLITE_OK;
          }
        }
      }
      break;
    }
    case BP_INT: {
      sqlite3_int64 i;
      if( eType==SQLITE_NULL && pP->bNull ){
        pOut->bNull = 1;
        return SQLITE_OK;
      }
      if( eType==SQLITE_INTEGER ){
        i = sqlite3_value_int64(v);
      }else if( eType==SQLITE_FLOAT ){
        double r = sqlite3_value_double(v);
        if( !(r>=-9e15 && r<=9e15) || r!=(double)(sqlite3_int64)r ) break;
        i = (sqlite3_int64)r;
      }else{
        break;
      }
      if( i<pP->iMin || i>pP->iMax ) break;
      if( p==BENCH_P_PAGE_SIZE && (i & (i-1))!=0 ) break;
      pOut->i = i;
      return SQLITE_OK;
    }
    case BP_REAL: {
      double r;
      if( eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT ) break;
      r = sqlite3_value_double(v);
      if( !(r>0.0 && r<=(double)pP->iMax) ) break;
      pOut->r = r;
      return SQLITE_OK;
    }
    default: {   /* BP_DIR */
      const char *z;
      if( eType!=SQLITE_TEXT ) break;
      z = (const char*)sqlite3_value_text(v);
      if( z==0 || z[0]==0 ) break;
      return benchParseDir(pVtab, z, pOut);
    }
  }
  benchValueError(pVtab, p, v, 0);
  return SQLITE_ERROR;
}

static int benchCmpValue(const bench_value *a, const bench_value *b, int p){
  if( a->bNull || b->bNull ) return b->bNull - a->bNull;
  switch( aParam[p].eType ){
    case BP_REAL: return a->r<b->r ? -1 : a->r>b->r;
    case BP_DIR:  return strcmp(a->z, b->z);
    default:      return a->i<b->i ? -1 : a->i>b->i;
  }
}

/* Add a value to parameter p's list, keeping it ordered and unique: a
** binary search, and room grown by doubling, so that a list of n values
** (which SQLite hands over in ascending order) costs O(n log n). */
static int benchAddValue(bench_cursor *pCur, int p, bench_value *pNew){
  int n = pCur->nVal[p], lo = 0, hi = n;
  bench_value *a = pCur->aVal[p];
  while( lo<hi ){
    int mid = (lo+hi)/2;
    int c = benchCmpValue(&a[mid], pNew, p);
    if( c==0 ){
      sqlite3_free(pNew->z);
      sqlite3_free(pNew->zReal);
      return SQLITE_OK;
    }
    if( c<0 ) lo = mid+1; else hi = mid;
  }
  if( n>=pCur->nAlloc[p] ){
    int nNew = pCur->nAlloc[p] ? 2*pCur->nAlloc[p] : 4;
    a = sqlite3_realloc64(a, sizeof(bench_value)*(sqlite3_uint64)nNew);
    if( a==0 ){
      sqlite3_free(pNew->z);
      sqlite3_free(pNew->zReal);
      return SQLITE_NOMEM;
    }
    pCur->aVal[p] = a;
    pCur->nAlloc[p] = nNew;
  }
  if( lo<n ) memmove(&a[lo+1], &a[lo], sizeof(bench_value)*(size_t)(n-lo));
  a[lo] = *pNew;
  pCur->nVal[p] = n+1;
  return SQLITE_OK;
}

static int benchDefaultValue(bench_cursor *pCur, int p){
  bench_value v;
  memset(&v, 0, sizeof(v));
  if( aParam[p].eType==BP_DIR ){
    const char *z = getenv("TMPDIR");
    int rc = benchParseDir(pCur->base.pVtab, z && z[0] ? z : "/tmp", &v);
    if( rc!=SQLITE_OK ) return rc;
  }else if( aParam[p].eType==BP_REAL ){
    v.r = (double)aParam[p].iDefault;
  }else if( aParam[p].bNull ){
    v.bNull = 1;
  }else{
    v.i = aParam[p].iDefault;
  }
  return benchAddValue(pCur, p, &v);
}

/* The settings of the cursor's current combination. */
static void benchCurrentConfig(bench_cursor *pCur, bench_config *c){
  const bench_value *v[BENCH_NPARAM];
  int p;
  for(p=0; p<BENCH_NPARAM; p++) v[p] = &pCur->aVal[p][pCur->aIdx[p]];
  memset(c, 0, sizeof(*c));
  c->eId = (int)v[BENCH_P_ID]->i;
  c->eJournal = (int)v[BENCH_P_JOURNAL]->i;
  c->eSync = (int)v[BENCH_P_SYNCHRONOUS]->i;
  c->nThread = (int)v[BENCH_P_THREADS]->i;
  c->bMutex = (int)v[BENCH_P_MUTEX]->i;
  c->nBatch = (int)v[BENCH_P_BATCH]->i;
  c->eBegin = (int)v[BENCH_P_BEGIN]->i;
  c->ePrepare = (int)v[BENCH_P_PREPARE]->i;
  c->eLocking = (int)v[BENCH_P_LOCKING]->i;
  c->bPageSize = !v[BENCH_P_PAGE_SIZE]->bNull;
  c->iPageSize = v[BENCH_P_PAGE_SIZE]->i;
  c->bCacheSize = !v[BENCH_P_CACHE_SIZE]->bNull;
  c->iCacheSize = v[BENCH_P_CACHE_SIZE]->i;
  c->bMmapSize = !v[BENCH_P_MMAP_SIZE]->bNull;
  c->iMmapSize = v[BENCH_P_MMAP_SIZE]->i;
  c->nReader = (int)v[BENCH_P_READERS]->i;
  c->nRow = v[BENCH_P_ROWS]->i;
  c->rSeconds = v[BENCH_P_SECONDS]->r;
  c->nContent = (int)v[BENCH_P_CONTENT]->i;
  c->iBusyTimeout = (int)v[BENCH_P_BUSY_TIMEOUT]->i;
  c->eStorage = (int)v[BENCH_P_STORAGE]->i;
  c->zDir = v[BENCH_P_DIR]->z;
  c->zDirReal = v[BENCH_P_DIR]->zReal;
}

/* Run the current combination; an error goes to the vtab. */
static int benchRunCurrent(bench_cursor *pCur){
  bench_config c;
  char *zErr = 0;
  int rc;
  benchCurrentConfig(pCur, &c);
  rc = benchRun(&c, ((bench_vtab*)pCur->base.pVtab)->db, &pCur->res, &zErr);
  if( rc!=SQLITE_OK ){
    char *zDesc = benchConfigDesc(&c);
    if( rc==SQLITE_NOMEM && zErr==0 ){
      sqlite3_free(zDesc);
      return SQLITE_NOMEM;
    }
    acorn_vtab_error(pCur->base.pVtab, "bench_insert: %s (%s)",
                     zErr ? zErr : sqlite3_errstr(rc), zDesc ? zDesc : "");
    sqlite3_free(zDesc);
    sqlite3_free(zErr);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static int benchFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  bench_cursor *pCur = (bench_cursor*)cur;
  sqlite3_vtab *pVtab = cur->pVtab;
  int p, k, iArg = 0, rc = SQLITE_OK;
  sqlite3_int64 nCombo = 1;
  (void)idxNum;
  benchCursorReset(pCur);
  pCur->iRowid = 0;
  for(p=0; p<BENCH_NPARAM && rc==SQLITE_OK; p++){
    char cKind = idxStr && (int)strlen(idxStr)>p ? idxStr[p] : '-';
    if( cKind=='n' ){
      bench_value v;
      memset(&v, 0, sizeof(v));
      v.bNull = 1;
      rc = benchAddValue(pCur, p, &v);
    }else if( cKind=='-' || iArg>=argc ){
      rc = benchDefaultValue(pCur, p);
    }else if( cKind=='i' ){
      sqlite3_value *pVal = 0;
      int rc2;
      for(rc2=sqlite3_vtab_in_first(argv[iArg], &pVal);
          rc2==SQLITE_OK && pVal && rc==SQLITE_OK;
          rc2=sqlite3_vtab_in_next(argv[iArg], &pVal)){
        bench_value v;
        rc = benchParseValue(pVtab, p, pVal, &v);
        if( rc==SQLITE_OK ) rc = benchAddValue(pCur, p, &v);
        if( rc==SQLITE_OK && nCombo*pCur->nVal[p]>BENCH_MAX_COMBOS ){
          /* give up now, not after reading the rest of a long list */
          acorn_vtab_error(pVtab, "bench_insert: more than %d combinations"
                           " of parameters", BENCH_MAX_COMBOS);
          rc = SQLITE_ERROR;
        }
      }
      if( rc==SQLITE_OK && rc2!=SQLITE_OK && rc2!=SQLITE_DONE ) rc = rc2;
      iArg++;
    }else{
      bench_value v;
      rc = benchParseValue(pVtab, p, argv[iArg++], &v);
      if( rc==SQLITE_OK ) rc = benchAddValue(pCur, p, &v);
    }
    nCombo *= pCur->nVal[p] ? pCur->nVal[p] : 1;  /* of parameters 0..p */
  }
  if( rc!=SQLITE_OK ){
    benchCursorReset(pCur);
    return rc;
  }
  nCombo = 1;
  for(p=0; p<BENCH_NPARAM; p++){
    if( pCur->nVal[p]==0 ){     /* an empty IN list: no rows */
      benchCursorReset(pCur);
      return SQLITE_OK;
    }
    nCombo *= pCur->nVal[p];
    if( nCombo>BENCH_MAX_COMBOS ){
      acorn_vtab_error(pVtab, "bench_insert: more than %d combinations of"
                       " parameters", BENCH_MAX_COMBOS);
      benchCursorReset(pCur);
      return SQLITE_ERROR;
    }
  }
  {
    /* checks across parameters, before the first run */
    int nVal;
    sqlite3_int64 maxThreads, maxReaders;
    nVal = pCur->nVal[BENCH_P_THREADS];
    maxThreads = pCur->aVal[BENCH_P_THREADS][nVal-1].i;
    nVal = pCur->nVal[BENCH_P_READERS];
    maxReaders = pCur->aVal[BENCH_P_READERS][nVal-1].i;
    nVal = pCur->nVal[BENCH_P_LOCKING];
    if( (maxThreads>1 || maxReaders>0) && sqlite3_threadsafe()==0 ){
      acorn_vtab_error(pVtab, "bench_insert: threads > 1 and readers > 0"
          " need a thread-safe SQLite; this one is built with"
          " SQLITE_THREADSAFE=0");
      benchCursorReset(pCur);
      return SQLITE_ERROR;
    }
    if( pCur->aVal[BENCH_P_LOCKING][nVal-1].i==1
     && (maxThreads>1 || maxReaders>0) ){
      acorn_vtab_error(pVtab, "bench_insert: locking=exclusive lets one"
          " connection in: it needs threads=1 and readers=0");
      benchCursorReset(pCur);
      return SQLITE_ERROR;
    }
  }
  /* fsync_us, only where a run will write files: storage=memory writes
  ** nothing in dir (storage values are ordered: file first) */
  for(k=0; pCur->aVal[BENCH_P_STORAGE][0].i==STORAGE_FILE
           && k<pCur->nVal[BENCH_P_DIR]; k++){
    char *zErr = 0;
    bench_value *pDir = &pCur->aVal[BENCH_P_DIR][k];
    rc = benchFsyncUs(pDir->zReal, &pDir->rFsyncUs, &zErr);
    if( rc!=SQLITE_OK ){
      acorn_vtab_error(pVtab, "bench_insert: %s", zErr ? zErr : "fsync_us");
      sqlite3_free(zErr);
      benchCursorReset(pCur);
      return SQLITE_ERROR;
    }
  }
  pCur->bEof = 0;
  pCur->iRowid = 1;
  rc = benchRunCurrent(pCur);
  if( rc!=SQLITE_OK ) pCur->bEof = 1;
  return rc;
}

static int benchNext(sqlite3_vtab_cursor *cur){
  bench_cursor *pCur = (bench_cursor*)cur;
  int p, rc;
  for(p=BENCH_NPARAM-1; p>=0; p--){
    if( ++pCur->aIdx[p]<pCur->nVal[p] ) break;
    pCur->aIdx[p] = 0;
  }
  if( p<0 ){
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  pCur->iRowid++;
  rc = benchRunCurrent(pCur);
  if( rc!=SQLITE_OK ) pCur->bEof = 1;
  return rc;
}

static int benchEof(sqlite3_vtab_cursor *cur){
  return ((bench_cursor*)cur)->bEof;
}

static int benchRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((bench_cursor*)cur)->iRowid;
  return SQLITE_OK;
}

static void benchResultRound(sqlite3_context *ctx, double r, double scale){
  sqlite3_result_double(ctx, (double)(sqlite3_int64)(r*scale+0.5)/scale);
}

static int benchColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  bench_cursor *pCur = (bench_cursor*)cur;
  const bench_result *r = &pCur->res;
  if( i>=BENCH_NRESULT ){
    int p = i - BENCH_NRESULT;
    const bench_value *v = &pCur->aVal[p][pCur->aIdx[p]];
    switch( aParam[p].eType ){
      case BP_ENUM:
        sqlite3_result_text(ctx, aParam[p].azEnum[v->i], -1, SQLITE_STATIC);
        break;
      case BP_REAL:
        sqlite3_result_double(ctx, v->r);
        break;
      case BP_DIR:
        sqlite3_result_text(ctx, v->z, -1, SQLITE_TRANSIENT);
        break;
      default:
        if( !v->bNull ) sqlite3_result_int64(ctx, v->i);
        break;
    }
    return SQLITE_OK;
  }
  switch( i ){
    case BENCH_COL_ROWS_WRITTEN:
      sqlite3_result_int64(ctx, r->nRowsWritten); break;
    case BENCH_COL_ELAPSED:
      benchResultRound(ctx, r->rElapsed, 1e6); break;
    case BENCH_COL_WRITES_PER_SEC:
      sqlite3_result_int64(ctx, r->rElapsed>0
          ? (sqlite3_int64)(r->nWrites/r->rElapsed+0.5) : 0);
      break;
    case BENCH_COL_NS_PER_WRITE:
      sqlite3_result_int64(ctx, r->nWrites>0
          ? (sqlite3_int64)(r->rElapsed*1e9/r->nWrites+0.5) : 0);
      break;
    case BENCH_COL_P50_US: benchResultRound(ctx, r->rP50, 10.0); break;
    case BENCH_COL_P99_US: benchResultRound(ctx, r->rP99, 10.0); break;
    case BENCH_COL_MAX_US: benchResultRound(ctx, r->rMax, 10.0); break;
    case BENCH_COL_READS_PER_SEC:
      sqlite3_result_int64(ctx, r->rElapsed>0
          ? (sqlite3_int64)(r->nReads/r->rElapsed+0.5) : 0);
      break;
    case BENCH_COL_BUSY: sqlite3_result_int64(ctx, r->nBusy); break;
    case BENCH_COL_DB_BYTES: sqlite3_result_int64(ctx, r->nDbBytes); break;
    case BENCH_COL_SQLITE_VERSION:
      sqlite3_result_text(ctx, sqlite3_libversion(), -1, SQLITE_STATIC);
      break;
    default: {  /* BENCH_COL_FSYNC_US; NULL for storage=memory */
      const bench_value *v =
          &pCur->aVal[BENCH_P_DIR][pCur->aIdx[BENCH_P_DIR]];
      const bench_value *pStorage =
          &pCur->aVal[BENCH_P_STORAGE][pCur->aIdx[BENCH_P_STORAGE]];
      if( pStorage->i==STORAGE_FILE ) benchResultRound(ctx, v->rFsyncUs, 10.0);
      break;
    }
  }
  return SQLITE_OK;
}

static int benchBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int aCons[BENCH_NPARAM];   /* constraint used for each parameter, or -1 */
  char zKind[BENCH_NPARAM+1];
  int i, p, nArg = 0;
  for(p=0; p<BENCH_NPARAM; p++) aCons[p] = -1;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn<BENCH_NRESULT ) continue;    /* SQLite filters those */
    if( pC->op==SQLITE_INDEX_CONSTRAINT_LIMIT
     || pC->op==SQLITE_INDEX_CONSTRAINT_OFFSET ) continue;
    p = pC->iColumn - BENCH_NRESULT;
    if( pC->op!=SQLITE_INDEX_CONSTRAINT_EQ
     && pC->op!=SQLITE_INDEX_CONSTRAINT_IS
     && (pC->op!=SQLITE_INDEX_CONSTRAINT_ISNULL || !aParam[p].bNull) ){
      acorn_vtab_error(pVtab, "bench_insert: parameter %s takes only = or"
                       " IN constraints", aParam[p].zName);
      return SQLITE_ERROR;
    }
    if( !pC->usable ) return SQLITE_CONSTRAINT;
    if( aCons[p]<0 ) aCons[p] = i;
  }
  for(p=0; p<BENCH_NPARAM; p++){
    zKind[p] = '-';
    if( aCons[p]<0 ) continue;
    i = aCons[p];
    pInfo->aConstraintUsage[i].omit = 1;
    if( pInfo->aConstraint[i].op==SQLITE_INDEX_CONSTRAINT_ISNULL ){
      zKind[p] = 'n';           /* NULL, the documented "unset" */
      continue;
    }
    pInfo->aConstraintUsage[i].argvIndex = ++nArg;
    zKind[p] = '=';
    if( pInfo->aConstraint[i].op==SQLITE_INDEX_CONSTRAINT_EQ
     && sqlite3_vtab_in(pInfo, i, -1) ){
      sqlite3_vtab_in(pInfo, i, 1);
      zKind[p] = 'i';
    }
  }
  zKind[BENCH_NPARAM] = 0;
  pInfo->idxStr = sqlite3_mprintf("%s", zKind);
  if( pInfo->idxStr==0 ) return SQLITE_NOMEM;
  pInfo->needToFreeIdxStr = 1;
  pInfo->estimatedCost = 1.0;
  pInfo->estimatedRows = 1;
  return SQLITE_OK;
}

static sqlite3_module benchModule = {
  0,                 /* iVersion */
  0,                 /* xCreate: eponymous only */
  benchConnect,
  benchBestIndex,
  benchDisconnect,
  0,                 /* xDestroy */
  benchOpen,
  benchClose,
  benchFilter,
  benchNext,
  benchEof,
  benchColumn,
  benchRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
#if SQLITE_VERSION_NUMBER >= 3044000
  0,                 /* xIntegrity */
#endif
};

int acorn_bench_insert_register(sqlite3 *db){
  return sqlite3_create_module(db, "bench_insert", &benchModule, 0);
}
