/*
** bench_run.c: one run of bench_insert, the engine behind the table-valued
** function in bench_insert.c (which parses the parameters and makes the
** rows).  The interface is benchInt.h: acorn_bench_run() takes a checked
** bench_config and fills a bench_result, or returns an error message;
** acorn_bench_fsync_us() measures a directory's fsync.
**
** ONE RUN (acorn_bench_run)
**
**  1. Room for the ids and the content.  Ids (acorn_uuid4/7/8, or
**     acorn_random for the shortid) are made while no clock runs, so that
**     the numbers measure SQLite, not the id maker: in chunks of about
**     BENCH_ID_CHUNK rows (a multiple of batch), one chunk before each
**     phase of step 4, so their memory is bounded whatever `rows` is.  An
**     integer id is the rowid, made by SQLite: no ids, one phase.
**  2. A scratch database "acorn-bench-<16 hex>.db" is created in
**     realpath(dir) (absolute, so never read as a URI; no symlink, which
**     SQLITE_OPEN_NOFOLLOW would refuse) with open(O_CREAT|O_EXCL); a name
**     whose -wal, -shm or -journal already exists is skipped.  It is in the
**     registry of live scratch files (bench_scratch.c) until removed.
**     storage=memory uses "file:/acorn-bench-<hex>" on the memdb VFS
**     instead, shared by the run's connections, and makes no file.
**  3. A setup connection copies the template if there is one (see
**     bench_template.c), sets page_size, runs the schema, or, without
**     schema and template, creates the posts table (STRICT; WITHOUT ROWID
**     for text and blob ids), then sets journal_mode; a user's statement
**     is then prepared there and checked (one INSERT, UPDATE, DELETE,
**     REPLACE or SELECT, only ?1 ?2 ?3 bound).
**  4. Each writer and reader opens its own connection, installs a busy
**     handler that sleeps as SQLite's busy_timeout does and counts its
**     calls, sets the pragmas and prepares its statements; then all wait at
**     a start gate (busy counts from here: opening together can wait).
**     The clock runs while the gate is open, one phase per chunk of ids:
**     the gate opens, writers claim `batch` row numbers at a time from a
**     shared atomic counter until the chunk's rows are all claimed,
**     readers read while the writers write (each at least once a phase),
**     and all come back to the gate, which the next chunk's ids reopen.
**     elapsed is the sum of the phases.  A writer's WAL hook (journal=wal)
**     does what SQLite's autocheckpoint does, counting.  A transaction
**     refused with SQLITE_BUSY after the busy handler gave up is rolled
**     back and run again from BEGIN, counted.  Readers with reader_hold_ms
**     keep each read transaction open that long.
**     The run writes exactly `rows` rows unless `seconds`
**     passes (checked before each transaction), a statement fails (which
**     stops everyone), a terminating signal comes or, with SQLite 3.41 or
**     later, the host connection is interrupted (sqlite3_is_interrupted,
**     checked before each transaction).  With threads=1 and readers=0 the
**     writer runs in the calling thread.
**  5. Every thread is joined, every statement finalized, every connection
**     closed, rows counted and sizes taken, then the database and its -wal,
**     -shm and -journal are unlinked, on every path.
**
** Latencies are kept one by one in runs of at most BENCH_EXACT_MAX rows
** (exact percentiles) and counted in a fixed histogram per writer beyond.
*/
#include "benchInt.h"

#ifdef ACORN_TESTING
/* Test builds: a bound on every run's timed part (0: none), so that the
** fuzzer's runs of a writer that retries BUSY until `seconds` end. */
sqlite3_int64 acorn_test_bench_max_ns = 0;
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const acorn_bench_azId[] = { "integer", "shortid", "uuid4_text",
  "uuid4_blob", "uuid7_text", "uuid7_blob", "uuid8_text", "uuid8_blob", 0 };
const char *const acorn_bench_azJournal[] = { "wal", "delete", "truncate",
  "persist", "memory", "off", 0 };
const char *const acorn_bench_azSync[] = { "off", "normal", "full", "extra",
  0 };
const char *const acorn_bench_azBegin[] = { "deferred", "immediate", 0 };
const char *const acorn_bench_azPrepare[] = { "once", "each", "exec", 0 };
const char *const acorn_bench_azLocking[] = { "normal", "exclusive", 0 };
const char *const acorn_bench_azStorage[] = { "file", "memory", 0 };

/* -------------------------------------------------------------------- */
/* Clock                                                                 */

static void benchSleepMs(int ms){
  struct timespec ts;
  ts.tv_sec = ms/1000;
  ts.tv_nsec = (long)(ms%1000)*1000000L;
  while( nanosleep(&ts, &ts)!=0 && errno==EINTR ){}
}


/* -------------------------------------------------------------------- */
/* Latencies: exact up to BENCH_EXACT_MAX rows, a histogram beyond       */
/*
** A run of at most BENCH_EXACT_MAX rows keeps every latency (8 bytes a
** row) and reports exact percentiles.  A longer run counts them in a
** histogram per writer instead, of fixed size whatever `rows` is:
** log-linear buckets, exact below 256 ns, then BENCH_HIST_SUB buckets per
** power of two, so a percentile is reported as the middle of its bucket,
** within 1/256 (0.4%) of the exact value; the maximum is kept exactly.
*/
#define BENCH_EXACT_MAX  1000000
#define BENCH_HIST_SUB   128
#define BENCH_HIST_N     (BENCH_HIST_SUB*58)   /* values up to 2^64-1 */

/* The bucket of v nanoseconds. */
static int benchHistIndex(uint64_t v){
  int iShift;
  if( v<2*BENCH_HIST_SUB ) return (int)v;
  iShift = 63 - __builtin_clzll(v) - 7;        /* 1.. */
  return (iShift+1)*BENCH_HIST_SUB + (int)((v>>iShift) - BENCH_HIST_SUB);
}

/* The middle of bucket i (its value if exact). */
static uint64_t benchHistValue(int i){
  int iShift;
  uint64_t lo;
  if( i<2*BENCH_HIST_SUB ) return (uint64_t)i;
  iShift = i/BENCH_HIST_SUB - 1;
  lo = (uint64_t)(BENCH_HIST_SUB + i%BENCH_HIST_SUB) << iShift;
  return lo + (((uint64_t)1<<iShift) - 1)/2;
}

/* The value of rank iRank (1-based) among the n counted in a[]. */
static uint64_t benchHistRank(const uint64_t *a, sqlite3_int64 iRank){
  sqlite3_int64 nSeen = 0;
  int i;
  for(i=0; i<BENCH_HIST_N; i++){
    nSeen += (sqlite3_int64)a[i];
    if( nSeen>=iRank ) return benchHistValue(i);
  }
  return benchHistValue(BENCH_HIST_N-1);
}

/* -------------------------------------------------------------------- */
/* One run                                                               */

/* The busy handler of each connection: the same delays as SQLite's own
** busy_timeout handler (sqliteDefaultBusyCallback), plus a count. */
typedef struct bench_busy bench_busy;
struct bench_busy {
  int iTimeout;            /* ms */
  sqlite3_int64 nBusy;     /* calls */
  int *pbStop;             /* the run's stop flag: give up when set */
};

static int benchBusyHandler(void *pArg, int nCount){
  static const unsigned char aDelay[] = {1,2,5,10,15,20,25,25,25,50,50,100};
  static const unsigned char aTotal[] = {0,1,3,8,18,33,53,78,103,128,178,228};
  const int nDelay = (int)sizeof(aDelay);
  bench_busy *p = (bench_busy*)pArg;
  int delay, prior;
  p->nBusy++;
  if( acorn_bench_signalled() || (p->pbStop && __atomic_load_n(p->pbStop,
                                                        __ATOMIC_RELAXED)) ){
    return 0;                  /* the run is stopping: wait no more */
  }
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


/* Ids are made in chunks of about this many rows (a multiple of batch),
** while the clock is stopped: the memory they take is bounded whatever
** `rows` is. */
#define BENCH_ID_CHUNK   65536

/* A writer's progress handler runs every this many virtual machine
** instructions (one clock read: well under 1% of an insert's cost). */
#define BENCH_PROGRESS_OPS 10000

typedef struct bench_run bench_run;
typedef struct bench_worker bench_worker;

struct bench_worker {
  bench_run *pRun;
  int bReader;
  int bThread;                 /* a pthread was started for it */
  pthread_t tid;
  sqlite3 *db;
  sqlite3_stmt *pIns, *pBegin, *pCommit, *pSel;
  sqlite3_stmt *pRead;         /* writers with read_first: the SELECT */
  char *zSqlBuf;               /* prepare=exec: the SQL text */
  bench_busy busy;
  sqlite3_int64 nDone;         /* rows inserted or SELECTs run */
  uint64_t *aLat;              /* writers: ns per row done, in its own array
                               ** (no cache line shared with other writers) */
  sqlite3_int64 nLat, nLatAlloc;
  unsigned int *aHist;         /* writers of a long run: BENCH_HIST_N counts
                               ** instead of aLat */
  uint64_t mxLat;              /* with aHist: the largest latency */
  sqlite3_int64 tEnd;          /* writers: when the phase's last row was done */
  uint64_t iRand;              /* readers: xorshift state */
  int rc;
  char *zErr;                  /* sqlite3_malloc'd */
  const char *zDenied;         /* what its authorizer refused (static) */
  int bDeadline;               /* its progress handler stopped a step:
                               ** seconds ran out */
  sqlite3_int64 nBusyErr;      /* writers: transactions retried after BUSY */
  int mxFrame;                 /* writers: the most WAL frames after a commit */
  int nAutoCkpt;               /* writers: checkpoint at this many frames */
  sqlite3_int64 nCkpt, nCkptBlocked;   /* writers: checkpoints run, and of
                               ** those, the ones stopped short by readers */
  char aPad[128];              /* keeps the fields each writer updates in its
                               ** loop off its neighbours' cache lines */
};

struct bench_run {
  const bench_config *pCfg;
  sqlite3 *dbHost;             /* the connection running the statement, for
                               ** sqlite3_is_interrupted(); 0: not checked */
  char *zOpen;                 /* file name or URI the connections open */
  int openFlags;
  const char *zDenied;         /* what the setup connection's authorizer
                               ** refused (static text), or NULL */
  const char *zInsert;         /* the write with bind parameters */
  int bCustom;                 /* zInsert is the user's statement */
  int nParam;                  /* bind parameters of the user's statement */
  unsigned char *aId;          /* ids of rows iChunk0.., nIdLen bytes each */
  int nIdLen;                  /* bytes of one id (0 for integer: no ids) */
  sqlite3_int64 nChunk;        /* rows per phase: a multiple of batch */
  sqlite3_int64 iChunk0;       /* the current phase's rows: iChunk0.. */
  sqlite3_int64 iChunkEnd;     /* ..iChunkEnd-1 */
  char *zContent;
  int bHist;                   /* latencies in histograms (a long run) */
  char aPad1[64];              /* iNext, written by every claim, alone on */
  sqlite3_int64 iNext;         /* next unclaimed row number (atomic) */
  char aPad2[64];              /* its cache line, away from what is read */
  int bStop;                   /* atomic: stop now */
  int nWriterLeft;             /* atomic: writers still in this phase */
  sqlite3_int64 tStart, tDeadline;   /* of the current phase */
  pthread_mutex_t appMutex;    /* mutex=1 */
  pthread_mutex_t gateMutex;
  pthread_cond_t gateCond;
  int nReady;                  /* threads waiting at the gate */
  int iPhase;                  /* phases the gate has opened for */
  int bDone;                   /* no more phases: the threads end */
  int bThreads;                /* workers run in threads of their own */
  int bWal;                    /* a -wal file beside a scratch file */
  int szPage;                  /* the scratch database's page size */
  int bLocks;                  /* appMutex, gateMutex, gateCond exist */
};

static const char zTitle[] = "Some title";

/* The journal_mode to set.  An in-memory database keeps its journal in
** memory: storage=memory runs wal, delete, truncate and persist as memory
** (setting wal on memdb would try a WAL without shared memory). */
static const char *benchJournalPragma(const bench_config *c){
  if( c->eStorage==BENCH_STORAGE_MEMORY && c->eJournal<=BENCH_JOURNAL_PERSIST ){
    return "memory";
  }
  return acorn_bench_azJournal[c->eJournal];
}

/* A worker failed: stop the run and, if this is the failure that stops it,
** keep it on the worker as the run's error (rc, and the message made from
** zFmt unless it is NULL: out of memory).  A failure after the stop is its
** consequence (a busy wait given up because of it), not kept.  Returns rc
** (SQLITE_ERROR if rc was SQLITE_OK). */
static int benchWorkerFail(bench_worker *w, int rc, const char *zFmt, ...){
  if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
  if( __atomic_exchange_n(&w->pRun->bStop, 1, __ATOMIC_SEQ_CST)==0 ){
    w->rc = rc;
    if( zFmt ){
      va_list ap;
      va_start(ap, zFmt);
      w->zErr = sqlite3_vmprintf(zFmt, ap);
      va_end(ap);
    }
  }
  return rc;
}

/* SQLite's message for error rc of db (rc's, without a connection, or
** when memory ran out: an allocation of acorn's own, as in registering its
** functions, leaves the connection's message as it was). */
static const char *benchDbErrmsg(sqlite3 *db, int rc){
  return db && (rc&0xff)!=SQLITE_NOMEM ? sqlite3_errmsg(db)
                                       : sqlite3_errstr(rc);
}

/* The same for the worker's last error. */
static const char *benchErrmsg(bench_worker *w, int rc){
  return benchDbErrmsg(w->db, rc);
}

static int benchExec(bench_worker *w, const char *zSql){
  int rc = sqlite3_exec(w->db, zSql, 0, 0, 0);
  if( rc!=SQLITE_OK ){
    return benchWorkerFail(w, rc, "%s failed: %s", zSql, benchErrmsg(w, rc));
  }
  return SQLITE_OK;
}

static int benchLatGrow(bench_worker *w, sqlite3_int64 nNeed);

/* -------------------------------------------------------------------- */
/* What schema and statement may do                                      */
/*
** schema and statement run on the scratch database, and only there: each
** scratch connection has an authorizer that refuses ATTACH (VACUUM INTO
** and VACUUM attach a database: the authorizer sees an ATTACH of the
** target file, or of '' for VACUUM, on every version), DETACH,
** load_extension(), writefile() and edit() (should the host register them
** on every connection), and the PRAGMAs that set process-wide state
** (temp_store_directory, data_store_directory, soft_heap_limit,
** hard_heap_limit); SQLITE_LIMIT_ATTACHED is 0, extension loading is off
** and trusted_schema is off (a template's triggers and views call only
** innocuous functions).  The setup connection runs schema in DEFENSIVE mode
** (no writable_schema).  bench_insert itself refuses to start a run in a
** thread that is inside one (benchInRun): a schema or statement that names
** it, when acorn is on every connection (acorn-auto.so,
** sqlite3_auto_extension), is refused instead of nesting runs until the
** stack runs out.
*/

/* Set in each thread while it works for a run: the caller's, for the
** whole of acorn_bench_run, and every worker thread's. */
static __thread int benchInRun = 0;

int acorn_bench_in_run(void){
  return benchInRun;
}

/* Functions and PRAGMAs refused: the name, then how a message names it. */
static const char *const benchAzDeniedFunc[] = {
  "load_extension", "load_extension()", "writefile", "writefile()",
  "edit", "edit()", 0
};
static const char *const benchAzDeniedPragma[] = {
  "temp_store_directory", "PRAGMA temp_store_directory",
  "data_store_directory", "PRAGMA data_store_directory",
  "soft_heap_limit", "PRAGMA soft_heap_limit",
  "hard_heap_limit", "PRAGMA hard_heap_limit", 0
};

/* How az (name, then how a message names it, ..., 0) names z, or 0. */
static const char *benchDeniedName(const char *const *az, const char *z){
  int k;
  for(k=0; z && az[k]; k+=2){
    if( sqlite3_stricmp(z, az[k])==0 ) return az[k+1];
  }
  return 0;
}

/* The authorizer of every scratch connection.  pArg is where the first
** thing refused is recorded (static text), for the error message. */
static int benchAuth(void *pArg, int op, const char *z1, const char *z2,
                     const char *zDb, const char *zTrigger){
  const char **pzDenied = (const char**)pArg;
  const char *zWhat = 0;
  (void)zDb; (void)zTrigger;
  switch( op ){
    case SQLITE_ATTACH: zWhat = "ATTACH (or VACUUM)"; break;
    case SQLITE_DETACH: zWhat = "DETACH"; break;
    case SQLITE_FUNCTION: zWhat = benchDeniedName(benchAzDeniedFunc, z2); break;
    case SQLITE_PRAGMA: zWhat = benchDeniedName(benchAzDeniedPragma, z1); break;
  }
  if( zWhat==0 ) return SQLITE_OK;
  if( pzDenied && *pzDenied==0 ) *pzDenied = zWhat;
  return SQLITE_DENY;
}

/* The message for zParam ("schema" or "statement") refused zDenied. */
static char *benchDeniedMsg(const char *zParam, const char *zDenied){
  return sqlite3_mprintf("%s may not use %s: schema and statement run on the"
      " scratch database only, without ATTACH, DETACH, VACUUM, extensions or"
      " process-wide PRAGMAs", zParam, zDenied);
}

/* Open a connection to the run's scratch database, with acorn's id
** functions (uuid7_blob() ...) and its cache (the module, cache_get,
** cache_read ...) for the schema, the template and the statement to use,
** fenced as above; *pzDenied records what its authorizer refuses.  Every
** connection of a run opens here: setup, writers, readers.  A cache
** table's writes put acorn's -wal hook in place of SQLite's only, never of
** a writer's own (benchWalHook): see "THE -WAL FILE" in cache_table.c. */
static int benchOpenScratch(bench_run *r, sqlite3 **pDb,
                            const char **pzDenied){
  int rc = sqlite3_open_v2(r->zOpen, pDb, r->openFlags, 0);
  if( rc==SQLITE_OK ){
    sqlite3_limit(*pDb, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_db_config(*pDb, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0,
                      (int*)0);
    sqlite3_db_config(*pDb, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int*)0);
    if( ACORN_HAS_API(set_authorizer) ){      /* see acorn_bench_run */
      rc = sqlite3_set_authorizer(*pDb, benchAuth, (void*)pzDenied);
    }
  }
  if( rc==SQLITE_OK ) rc = acorn_uuid_register(*pDb);
  if( rc==SQLITE_OK ) rc = acorn_cache_register(*pDb);
  return rc;
}

/* A writer's progress handler: a step still running when the phase's
** deadline passes (a statement that never returns) is interrupted, and
** the run ends as a run cut short by seconds does. */
static int benchProgress(void *pArg){
  bench_worker *w = (bench_worker*)pArg;
  sqlite3_int64 tDeadline = w->pRun->tDeadline;
  if( tDeadline>0 && acorn_bench_mono()>=tDeadline ){
    w->bDeadline = 1;
    return 1;
  }
  return 0;
}

/* Did the write fail only because seconds ran out (benchProgress)? */
static int benchTimeUp(bench_worker *w, int rc){
  return (rc&0xff)==SQLITE_INTERRUPT && w->bDeadline;
}

/* A writer's WAL hook, called after each of its commits with the frames
** in the log: what SQLite's own autocheckpoint hook does (a PASSIVE
** checkpoint once the log has wal_autocheckpoint pages), counted.  A
** checkpoint that stops before the end of the log (nCkpt < nLog) was
** held back by a reader's snapshot: blocked.  The frame counts seen here
** give the -wal file's largest size (benchRunWal). */
static __attribute__((noinline)) void benchWalCheckpoint(bench_worker *w,
    sqlite3 *db, const char *zDb, int nFrame){
  int nLog = 0, nCkpt = 0;
  if( nFrame>w->mxFrame ) w->mxFrame = nFrame;
  if( sqlite3_wal_checkpoint_v2(db, zDb, SQLITE_CHECKPOINT_PASSIVE, &nLog,
                                &nCkpt)==SQLITE_OK ){
    w->nCkpt++;
    if( nCkpt<nLog ) w->nCkptBlocked++;
  }
}
static int benchWalHook(void *pArg, sqlite3 *db, const char *zDb, int nFrame){
  bench_worker *w = (bench_worker*)pArg;
  /* (the checkpoint apart, not inlined: a commit below the threshold costs
  ** what SQLite's own hook costs, a compare) */
  if( nFrame>=w->nAutoCkpt ) benchWalCheckpoint(w, db, zDb, nFrame);
  return SQLITE_OK;
}

/* Run "PRAGMA <zName>=<v>" on the worker's connection. */
static int benchPragma(bench_worker *w, const char *zName, sqlite3_int64 v){
  char *zSql = sqlite3_mprintf("PRAGMA %s=%lld", zName, v);
  int rc = zSql ? benchExec(w, zSql) : benchWorkerFail(w, SQLITE_NOMEM, 0);
  sqlite3_free(zSql);
  return rc;
}

/* A writer's statements: BEGIN, COMMIT, the write (prepare=once) and
** read_first's SELECT; prepare=exec keeps a buffer for the SQL text
** instead of the first three. */
static int benchWriterPrepare(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  int rc = SQLITE_OK;
  if( c->bReadFirst ){
    rc = sqlite3_prepare_v2(w->db, "SELECT title FROM posts WHERE id=?1",
                            -1, &w->pRead, 0);
  }
  if( rc==SQLITE_OK && c->ePrepare==BENCH_PREPARE_EXEC ){
    w->zSqlBuf = sqlite3_malloc(c->nContent + 200);
    return w->zSqlBuf ? SQLITE_OK : benchWorkerFail(w, SQLITE_NOMEM, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(w->db,
      c->eBegin==BENCH_BEGIN_IMMEDIATE ? "BEGIN IMMEDIATE" : "BEGIN",
      -1, &w->pBegin, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(w->db, "COMMIT", -1,
                                              &w->pCommit, 0);
  if( rc==SQLITE_OK && c->ePrepare==BENCH_PREPARE_ONCE ){
    rc = sqlite3_prepare_v2(w->db, r->zInsert, -1, &w->pIns, 0);
  }
  if( rc!=SQLITE_OK && w->zDenied ){
    char *z = benchDeniedMsg("statement", w->zDenied);
    benchWorkerFail(w, rc, z ? "%s" : 0, z);
    sqlite3_free(z);
    return rc;
  }
  if( rc!=SQLITE_OK ){
    return benchWorkerFail(w, rc, "cannot prepare the %s: %s",
                           r->bCustom ? "statement" : "INSERT",
                           benchErrmsg(w, rc));
  }
  return SQLITE_OK;
}

/* Open the worker's connection, set the pragmas, prepare.  A failure is
** recorded on the worker (benchWorkerFail) and stops the run. */
static int benchWorkerSetup(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  char *zSql;
  int rc;
  rc = benchOpenScratch(r, &w->db, &w->zDenied);
  if( rc!=SQLITE_OK ){
    return benchWorkerFail(w, rc, "cannot open the scratch database: %s",
                           benchErrmsg(w, rc));
  }
  if( !w->bReader && ACORN_HAS_API(progress_handler) ){
    /* (better-sqlite3 builds SQLite with SQLITE_OMIT_PROGRESS_CALLBACK:
    ** there seconds cannot stop a step that never returns) */
    sqlite3_progress_handler(w->db, BENCH_PROGRESS_OPS, benchProgress, w);
  }
  w->busy.iTimeout = c->iBusyTimeout;
  w->busy.pbStop = &r->bStop;
  sqlite3_busy_handler(w->db, benchBusyHandler, &w->busy);
  if( r->bWal && !w->bReader ){
    /* wal_autocheckpoint=0: none (never that many frames) */
    w->nAutoCkpt = c->nAutoCheckpoint>0 ? c->nAutoCheckpoint : 0x7fffffff;
    sqlite3_wal_hook(w->db, benchWalHook, w);
  }
  zSql = sqlite3_mprintf(
      "PRAGMA locking_mode=%s; PRAGMA journal_mode=%s; PRAGMA synchronous=%s;"
      " PRAGMA foreign_keys=ON;",
      acorn_bench_azLocking[c->eLocking], benchJournalPragma(c),
      acorn_bench_azSync[c->eSync]);
  if( zSql==0 ) return benchWorkerFail(w, SQLITE_NOMEM, 0);
  rc = benchExec(w, zSql);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && c->bCacheSize ){
    rc = benchPragma(w, "cache_size", c->iCacheSize);
  }
  if( rc==SQLITE_OK && c->bMmapSize ){
    rc = benchPragma(w, "mmap_size", c->iMmapSize);
  }
  if( rc==SQLITE_OK && c->iJournalSizeLimit>=0 ){
    rc = benchPragma(w, "journal_size_limit", c->iJournalSizeLimit);
  }
  if( rc!=SQLITE_OK ) return rc;
  if( w->bReader ){
    rc = sqlite3_prepare_v2(w->db,
        "SELECT title, content, created FROM posts WHERE id=?1", -1,
        &w->pSel, 0);
    if( rc!=SQLITE_OK ){
      return benchWorkerFail(w, rc, "cannot prepare the SELECT: %s",
                             benchErrmsg(w, rc));
    }
    acorn_random(&w->iRand, sizeof(w->iRand));
    w->iRand |= 1;
    return SQLITE_OK;
  }
  if( r->bHist ){
    w->aHist = sqlite3_malloc64(sizeof(unsigned int)*BENCH_HIST_N);
    if( w->aHist==0 ) return benchWorkerFail(w, SQLITE_NOMEM, 0);
    memset(w->aHist, 0, sizeof(unsigned int)*BENCH_HIST_N);
  }else{
    /* a fair share of the rows, touched now so that no page fault lands
    ** in the timed loop */
    sqlite3_int64 nShare = c->nRow/c->nThread + c->nBatch + 16;
    if( nShare>c->nRow ) nShare = c->nRow;
    if( benchLatGrow(w, nShare) ) return SQLITE_NOMEM;
    memset(w->aLat, 0, sizeof(uint64_t)*(size_t)w->nLatAlloc);
  }
  return benchWriterPrepare(w);
}

static void benchWorkerClose(bench_worker *w){
  sqlite3_finalize(w->pIns);
  sqlite3_finalize(w->pBegin);
  sqlite3_finalize(w->pCommit);
  sqlite3_finalize(w->pSel);
  sqlite3_finalize(w->pRead);
  w->pIns = w->pBegin = w->pCommit = w->pSel = w->pRead = 0;
  sqlite3_close_v2(w->db);   /* rolls back an open transaction */
  w->db = 0;
  sqlite3_free(w->zSqlBuf);
  w->zSqlBuf = 0;
}

static void benchWorkerFree(bench_worker *w){
  sqlite3_free(w->aLat);
  sqlite3_free(w->aHist);
  w->aLat = 0;
  w->aHist = 0;
}

/* prepare=exec: the INSERT of row i as SQL text with literal values. */
static const char *benchInsertText(bench_worker *w, sqlite3_int64 i){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  char *z = w->zSqlBuf;
  static const char zHex[] = "0123456789abcdef";
  if( c->eId==BENCH_ID_INTEGER ){
    memcpy(z, "INSERT INTO posts(title,content) VALUES('", 41); z += 41;
  }else{
    /* only here: integer ids make no aId (it is NULL, and NULL+0 is UB) */
    const unsigned char *aId = r->aId + (i - r->iChunk0)*r->nIdLen;
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

/* The write of row i failed: "insert failed: ..." for the built-in
** INSERT, "statement failed at row N: ..." for the user's statement. */
static int benchRowFail(bench_worker *w, int rc, sqlite3_int64 i){
  if( benchTimeUp(w, rc) ) return rc;  /* a stop, not a failure */
  if( (rc&0xff)==SQLITE_BUSY ) return rc;   /* retried (benchWriterLoop) */
  if( w->zDenied ){
    char *z = benchDeniedMsg("statement", w->zDenied);
    benchWorkerFail(w, rc, z ? "%s" : 0, z);
    sqlite3_free(z);
    return rc;
  }
  if( w->pRun->bCustom ){
    return benchWorkerFail(w, rc, "statement failed at row %lld: %s", i+1,
                           benchErrmsg(w, rc));
  }
  return benchWorkerFail(w, rc, "insert failed: %s", benchErrmsg(w, rc));
}

/* Write row i.  SQLITE_OK or an error already recorded. */
static int benchInsertRow(bench_worker *w, sqlite3_int64 i){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  sqlite3_stmt *pStmt = w->pIns;
  int rc, iCol = 1;
  if( c->ePrepare==BENCH_PREPARE_EXEC ){
    rc = sqlite3_exec(w->db, benchInsertText(w, i), 0, 0, 0);
    return rc==SQLITE_OK ? SQLITE_OK : benchRowFail(w, rc, i);
  }
  if( c->ePrepare==BENCH_PREPARE_EACH ){
    rc = sqlite3_prepare_v2(w->db, r->zInsert, -1, &pStmt, 0);
    if( rc!=SQLITE_OK ) return benchRowFail(w, rc, i);
  }
  if( r->bCustom ){
    /* ?1 the row number, ?2 the id (NULL for integer: the rowid), ?3 the
    ** content; the statement uses those it names */
    if( r->nParam>=1 ) sqlite3_bind_int64(pStmt, 1, i+1);
    if( r->nParam>=2 && c->eId!=BENCH_ID_INTEGER ){
      const unsigned char *a = r->aId + (i - r->iChunk0)*r->nIdLen;
      if( BENCH_ID_IS_BLOB(c->eId) ){
        sqlite3_bind_blob(pStmt, 2, a, 16, SQLITE_STATIC);
      }else{
        sqlite3_bind_text(pStmt, 2, (const char*)a, r->nIdLen, SQLITE_STATIC);
      }
    }
    if( r->nParam>=3 ){
      sqlite3_bind_text(pStmt, 3, r->zContent, c->nContent, SQLITE_STATIC);
    }
  }else{
    if( c->eId!=BENCH_ID_INTEGER ){
      const unsigned char *a = r->aId + (i - r->iChunk0)*r->nIdLen;
      if( BENCH_ID_IS_BLOB(c->eId) ){
        sqlite3_bind_blob(pStmt, 1, a, 16, SQLITE_STATIC);
      }else{
        sqlite3_bind_text(pStmt, 1, (const char*)a, r->nIdLen, SQLITE_STATIC);
      }
      iCol = 2;
    }
    sqlite3_bind_text(pStmt, iCol, zTitle, sizeof(zTitle)-1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, iCol+1, r->zContent, c->nContent, SQLITE_STATIC);
  }
  /* a SELECT (or RETURNING) of the user's: its rows are read and dropped */
  while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){}
  if( rc==SQLITE_DONE ){
    rc = c->ePrepare==BENCH_PREPARE_EACH ? sqlite3_finalize(pStmt)
                                         : sqlite3_reset(pStmt);
  }else{
    /* the message first: finalize would lose it */
    rc = benchRowFail(w, rc, i);
    if( c->ePrepare==BENCH_PREPARE_EACH ) sqlite3_finalize(pStmt);
    else sqlite3_reset(pStmt);
    return rc;
  }
  if( rc!=SQLITE_OK ) return benchRowFail(w, rc, i);
  return SQLITE_OK;
}

/* BEGIN or COMMIT of a batch. */
static int benchTxn(bench_worker *w, int bCommit){
  const bench_config *c = w->pRun->pCfg;
  int rc;
  if( c->ePrepare==BENCH_PREPARE_EXEC ){
    rc = sqlite3_exec(w->db, bCommit ? "COMMIT"
        : c->eBegin==BENCH_BEGIN_IMMEDIATE ? "BEGIN IMMEDIATE" : "BEGIN",
        0, 0, 0);
  }else{
    sqlite3_stmt *p = bCommit ? w->pCommit : w->pBegin;
    rc = sqlite3_step(p);
    sqlite3_reset(p);
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( (rc&0xff)==SQLITE_BUSY ) return rc;   /* retried (benchWriterLoop) */
  if( rc!=SQLITE_OK && !benchTimeUp(w, rc) ){
    return benchWorkerFail(w, rc, "%s failed: %s",
                           bCommit ? "COMMIT" : "BEGIN", benchErrmsg(w, rc));
  }
  return SQLITE_OK;
}

/* Room for at least nNeed latencies in w->aLat (rarely reached: the
** first allocation is a fair share of the rows).  Nonzero on failure. */
static int benchLatGrow(bench_worker *w, sqlite3_int64 nNeed){
  sqlite3_int64 nNew = w->nLatAlloc*2;
  uint64_t *aNew;
  if( nNew<nNeed ) nNew = nNeed;
  aNew = sqlite3_realloc64(w->aLat, sizeof(uint64_t)*(sqlite3_uint64)nNew);
  if( aNew==0 ){
    benchWorkerFail(w, SQLITE_NOMEM, "out of memory for the latencies");
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

/* Record one latency of ns nanoseconds. */
static void benchLatAdd(bench_worker *w, uint64_t ns){
  if( w->aHist ){
    w->aHist[benchHistIndex(ns)]++;
    if( ns>w->mxLat ) w->mxLat = ns;
  }else{
    w->aLat[w->nLat++] = ns;
  }
}

/* read_first: the SELECT of a recent row (the one claimed before row
** i0, or i0 itself at the start of a chunk of ids) that opens a read
** transaction before the write.  SQLITE_OK, SQLITE_BUSY (retried) or an
** error recorded. */
static int benchReadFirst(bench_worker *w, sqlite3_int64 i0){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  sqlite3_int64 k = i0>r->iChunk0 ? i0-1 : i0;
  int rc;
  if( c->eId==BENCH_ID_INTEGER ){
    sqlite3_bind_int64(w->pRead, 1, k+1);
  }else if( BENCH_ID_IS_BLOB(c->eId) ){
    sqlite3_bind_blob(w->pRead, 1, r->aId + (k-r->iChunk0)*16, 16,
                      SQLITE_STATIC);
  }else{
    sqlite3_bind_text(w->pRead, 1, (const char*)r->aId
                      + (k-r->iChunk0)*r->nIdLen, r->nIdLen, SQLITE_STATIC);
  }
  while( (rc = sqlite3_step(w->pRead))==SQLITE_ROW ){}
  sqlite3_reset(w->pRead);
  if( rc==SQLITE_DONE || benchTimeUp(w, rc) ) return SQLITE_OK;
  if( (rc&0xff)==SQLITE_BUSY ) return rc;
  return benchWorkerFail(w, rc, "read_first's SELECT failed: %s",
                         benchErrmsg(w, rc));
}

/* A transaction refused with SQLITE_BUSY (or BUSY_SNAPSHOT) after the busy
** handler gave up: roll it back, count it, drop the latencies its rows
** recorded (in a run with histograms they stay), so that the writer
** retries it from BEGIN, as an application would.  Zero if it cannot:
** the run is stopping, or the ROLLBACK failed (recorded). */
static int benchRetry(bench_worker *w, sqlite3_int64 nRecorded){
  bench_run *r = w->pRun;
  w->nBusyErr++;
  if( !w->aHist ) w->nLat -= nRecorded;
  if( !sqlite3_get_autocommit(w->db)
   && benchExec(w, "ROLLBACK")!=SQLITE_OK ){
    return 0;
  }
  return !__atomic_load_n(&r->bStop, __ATOMIC_RELAXED)
      && !acorn_bench_signalled() && acorn_bench_mono()<r->tDeadline;
}

/* A writer's part of one phase: claim `batch` rows at a time until the
** phase's rows are all claimed, the deadline passes or the run stops. */
static void benchWriterLoop(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  int bTxn = c->nBatch>1 || c->bReadFirst;
  sqlite3_int64 t = acorn_bench_mono();
  for(;;){
    sqlite3_int64 i0, n, j, tPrev, nLat0;
    int rc = SQLITE_OK;
    if( __atomic_load_n(&r->bStop, __ATOMIC_RELAXED) ) break;
    if( acorn_bench_signalled() ) break;
    if( t>=r->tDeadline ) break;
    if( benchInterrupted(r->dbHost) ){
      benchWorkerFail(w, SQLITE_INTERRUPT, "interrupted");
      break;
    }
    i0 = __atomic_fetch_add(&r->iNext, (sqlite3_int64)c->nBatch,
                            __ATOMIC_RELAXED);
    if( i0>=r->iChunkEnd ) break;
    n = r->iChunkEnd - i0;
    if( n>c->nBatch ) n = c->nBatch;
    if( w->aHist==0 && w->nLat+n>w->nLatAlloc
     && benchLatGrow(w, w->nLat+n) ) break;
    tPrev = acorn_bench_mono();   /* latency includes waiting for the mutex */
    if( c->bMutex ) pthread_mutex_lock(&r->appMutex);
  again:                          /* after a BUSY: the batch from BEGIN */
    j = 0;
    nLat0 = w->nLat;
    if( bTxn ){
      rc = benchTxn(w, 0);
      if( rc==SQLITE_OK && c->bReadFirst ) rc = benchReadFirst(w, i0);
    }
    for(; rc==SQLITE_OK && j<n; j++){
      if( acorn_bench_signalled() ){ rc = SQLITE_INTERRUPT; break; }
      rc = benchInsertRow(w, i0+j);
      if( rc==SQLITE_OK && (j<n-1 || !bTxn) ){
        t = acorn_bench_mono();
        benchLatAdd(w, t>tPrev ? (uint64_t)(t-tPrev) : 1);
        tPrev = t;
      }
    }
    if( rc==SQLITE_OK && bTxn ){
      rc = benchTxn(w, 1);
      t = acorn_bench_mono();
      if( rc==SQLITE_OK ){
        benchLatAdd(w, t>tPrev ? (uint64_t)(t-tPrev) : 1);    /* + COMMIT */
      }
    }
    /* the latencies this attempt recorded go with it (the loop's j counts
    ** the failed row too, which recorded none) */
    if( rc!=SQLITE_OK && (rc&0xff)==SQLITE_BUSY
     && benchRetry(w, w->nLat - nLat0) ){
      goto again;
    }
    if( c->bMutex ) pthread_mutex_unlock(&r->appMutex);
    if( rc!=SQLITE_OK ) break;
    w->nDone += n;
  }
  w->tEnd = acorn_bench_mono();
  __atomic_fetch_sub(&r->nWriterLeft, 1, __ATOMIC_SEQ_CST);
}

/* A reader's point SELECT of a row claimed so far (integer ids: any row
** of the run; other ids: rows of this phase, whose ids are in memory). */
static int benchReadOne(bench_worker *w){
  bench_run *r = w->pRun;
  const bench_config *c = r->pCfg;
  sqlite3_int64 n = __atomic_load_n(&r->iNext, __ATOMIC_RELAXED);
  sqlite3_int64 k;
  int rc;
  if( n>r->iChunkEnd ) n = r->iChunkEnd;
  if( c->eId!=BENCH_ID_INTEGER ) n -= r->iChunk0;
  if( n<1 ) n = 1;
  w->iRand ^= w->iRand<<13; w->iRand ^= w->iRand>>7; w->iRand ^= w->iRand<<17;
  k = (sqlite3_int64)(w->iRand % (uint64_t)n);
  if( c->eId==BENCH_ID_INTEGER ){
    sqlite3_bind_int64(w->pSel, 1, k+1);
  }else if( BENCH_ID_IS_BLOB(c->eId) ){
    sqlite3_bind_blob(w->pSel, 1, r->aId + k*16, 16, SQLITE_STATIC);
  }else{
    sqlite3_bind_text(w->pSel, 1, (const char*)r->aId + k*r->nIdLen,
                      r->nIdLen, SQLITE_STATIC);
  }
  while( (rc = sqlite3_step(w->pSel))==SQLITE_ROW ){}
  if( rc==SQLITE_DONE ) return sqlite3_reset(w->pSel);
  sqlite3_reset(w->pSel);
  return rc;
}

/* A reader's part of one phase: one point SELECT, then more until the
** phase's writers are done (at least one, so that a reader the scheduler
** starts late still reads: reads_per_sec is never 0 by chance).  With
** reader_hold_ms, they run in read transactions kept open that long each
** (one snapshot), one after the other. */
static void benchReaderLoop(bench_worker *w){
  bench_run *r = w->pRun;
  sqlite3_int64 tHoldNs = (sqlite3_int64)r->pCfg->iReaderHoldMs*1000000;
  sqlite3_int64 tHoldEnd = 0;          /* 0: no read transaction open */
  int rc = SQLITE_OK, bFirst = 1;
  while( !__atomic_load_n(&r->bStop, __ATOMIC_RELAXED)
      && !acorn_bench_signalled()
      && (bFirst || __atomic_load_n(&r->nWriterLeft, __ATOMIC_RELAXED)>0) ){
    bFirst = 0;
    if( tHoldNs>0 && tHoldEnd==0 ){
      rc = sqlite3_exec(w->db, "BEGIN", 0, 0, 0);
      if( rc!=SQLITE_OK ) break;
      tHoldEnd = acorn_bench_mono() + tHoldNs;
    }
    rc = benchReadOne(w);
    if( rc!=SQLITE_OK ) break;
    w->nDone++;
    if( tHoldEnd && acorn_bench_mono()>=tHoldEnd ){
      tHoldEnd = 0;
      rc = sqlite3_exec(w->db, "COMMIT", 0, 0, 0);
      if( rc!=SQLITE_OK ) break;
    }
  }
  if( rc!=SQLITE_OK ){
    benchWorkerFail(w, rc, "read failed: %s", benchErrmsg(w, rc));
  }
  if( !sqlite3_get_autocommit(w->db) ){
    sqlite3_exec(w->db, "COMMIT", 0, 0, 0);   /* the phase is over */
  }
}

/* A worker thread: set up, then, each time the gate opens for a phase,
** do its part and come back to wait, until there are no more phases. */
static void *benchThreadMain(void *pArg){
  bench_worker *w = (bench_worker*)pArg;
  bench_run *r = w->pRun;
  int iSeen = 0;
  benchInRun = 1;
  benchWorkerSetup(w);
  pthread_mutex_lock(&r->gateMutex);
  for(;;){
    r->nReady++;
    pthread_cond_broadcast(&r->gateCond);
    while( r->iPhase==iSeen && !r->bDone ){
      pthread_cond_wait(&r->gateCond, &r->gateMutex);
    }
    if( r->bDone ) break;
    iSeen = r->iPhase;
    pthread_mutex_unlock(&r->gateMutex);
    if( w->bReader ){
      benchReaderLoop(w);
    }else{
      benchWriterLoop(w);
    }
    pthread_mutex_lock(&r->gateMutex);
  }
  pthread_mutex_unlock(&r->gateMutex);
  return 0;
}

static int benchCmpU64(const void *a, const void *b){
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x<y ? -1 : x>y;
}

/* The size of one id, the rows of a phase, and room for their ids.  An
** integer id is made by SQLite (the rowid): no ids, one phase. */
static int benchIdsAlloc(bench_run *r){
  const bench_config *c = r->pCfg;
  switch( c->eId ){
    case BENCH_ID_INTEGER:    r->nIdLen = 0;  break;
    case BENCH_ID_SHORTID:    r->nIdLen = 16; break;
    case BENCH_ID_UUID4_BLOB:
    case BENCH_ID_UUID7_BLOB:
    case BENCH_ID_UUID8_BLOB: r->nIdLen = 16; break;
    default:                  r->nIdLen = 36; break;
  }
  if( r->nIdLen==0 ){
    r->nChunk = c->nRow;
    return SQLITE_OK;
  }
  r->nChunk = c->nBatch>=BENCH_ID_CHUNK ? c->nBatch
              : (BENCH_ID_CHUNK/c->nBatch)*c->nBatch;
  if( r->nChunk>c->nRow ) r->nChunk = c->nRow;
  r->aId = sqlite3_malloc64((sqlite3_uint64)r->nChunk * r->nIdLen);
  return r->aId ? SQLITE_OK : SQLITE_NOMEM;
}

/* Make the ids of rows i0..i1-1 into aId, while no clock runs. */
static void benchMakeIds(bench_run *r, sqlite3_int64 i0, sqlite3_int64 i1){
  const bench_config *c = r->pCfg;
  static const char zAlpha[] = "ABEGHNQRTadeghnqrt2345789";
  sqlite3_int64 i;
  for(i=i0; i<i1 && r->nIdLen>0; i++){
    unsigned char *p = r->aId + (i-i0)*r->nIdLen;
    unsigned char a[16];
    int k;
    switch( c->eId ){
      case BENCH_ID_SHORTID:
        for(k=0; k<16; ){
          unsigned char b;
          acorn_random(&b, 1);
          if( b<250 ) p[k++] = (unsigned char)zAlpha[b%25];
        }
        continue;
      case BENCH_ID_UUID4_TEXT: case BENCH_ID_UUID4_BLOB: acorn_uuid4(a); break;
      case BENCH_ID_UUID7_TEXT: case BENCH_ID_UUID7_BLOB: acorn_uuid7(a); break;
      default:                                acorn_uuid8(a); break;
    }
    if( BENCH_ID_IS_BLOB(c->eId) ) memcpy(p, a, 16);
    else acorn_uuid_format(a, (char*)p);
  }
}

/* The timed part, in phases of nChunk rows: for each, make its ids with
** the clock stopped (the workers wait at the gate), open the gate, and
** wait until every worker is back.  nThread is the number of worker
** threads started; 0: the one writer, aW[0], runs in this thread.  The
** phases' times add up to the elapsed time, which `seconds` bounds.
** Returns the elapsed nanoseconds. */
static sqlite3_int64 benchPhases(bench_run *r, bench_worker *aW, int nThread){
  const bench_config *c = r->pCfg;
  sqlite3_int64 tBudget = (sqlite3_int64)(c->rSeconds*1e9), tUsed = 0, i0;
#ifdef ACORN_TESTING
  if( acorn_test_bench_max_ns>0 && tBudget>acorn_test_bench_max_ns ){
    tBudget = acorn_test_bench_max_ns;
  }
#endif
  int i;
  if( nThread ){
    pthread_mutex_lock(&r->gateMutex);
    while( r->nReady<nThread ){
      pthread_cond_wait(&r->gateCond, &r->gateMutex);
    }
    pthread_mutex_unlock(&r->gateMutex);
  }
  /* busy counts the timed part only: connections opening one WAL file
  ** together, and setting their pragmas, can wait on each other then */
  for(i=0; i<(nThread ? nThread : 1); i++) aW[i].busy.nBusy = 0;
  for(i0=0; i0<c->nRow; i0+=r->nChunk){
    sqlite3_int64 tEnd;
    if( __atomic_load_n(&r->bStop, __ATOMIC_SEQ_CST) || acorn_bench_signalled()
     || tUsed>=tBudget ){
      break;
    }
    r->iChunk0 = i0;
    r->iChunkEnd = i0+r->nChunk<c->nRow ? i0+r->nChunk : c->nRow;
    benchMakeIds(r, r->iChunk0, r->iChunkEnd);
    r->iNext = i0;
    r->nWriterLeft = c->nThread;
    if( nThread ){
      pthread_mutex_lock(&r->gateMutex);
      r->nReady = 0;
      r->tStart = acorn_bench_mono();
      r->tDeadline = r->tStart + (tBudget - tUsed);
      r->iPhase++;
      pthread_cond_broadcast(&r->gateCond);
      while( r->nReady<nThread ){
        pthread_cond_wait(&r->gateCond, &r->gateMutex);
      }
      pthread_mutex_unlock(&r->gateMutex);
    }else{
      r->tStart = acorn_bench_mono();
      r->tDeadline = r->tStart + (tBudget - tUsed);
      benchWriterLoop(&aW[0]);
    }
    tEnd = r->tStart;
    for(i=0; i<c->nThread; i++){
      if( aW[i].tEnd>tEnd ) tEnd = aW[i].tEnd;
    }
    tUsed += tEnd - r->tStart;
  }
  if( nThread ){
    pthread_mutex_lock(&r->gateMutex);
    r->bDone = 1;
    pthread_cond_broadcast(&r->gateCond);
    pthread_mutex_unlock(&r->gateMutex);
  }
  return tUsed;
}

/* -------------------------------------------------------------------- */
/* The scratch database's content, and the statement                     */

/* z past white space, comments and semicolons. */
static const char *benchSkipSpace(const char *z){
  for(;;){
    if( *z==' ' || *z=='\t' || *z=='\n' || *z=='\r' || *z=='\f' || *z==';' ){
      z++;
    }else if( z[0]=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( z[0]=='/' && z[1]=='*' ){
      z += 2;
      while( *z && !(z[0]=='*' && z[1]=='/') ) z++;
      if( *z ) z += 2;
    }else{
      return z;
    }
  }
}

/* Is the user's statement one INSERT, UPDATE, DELETE, REPLACE or SELECT
** (a WITH in front is fine) that binds only ?1, ?2, ?3?  A SELECT is how a
** function call is timed (SELECT cache_write(...), cache_read(...)); any
** rows a statement returns are stepped through and dropped
** (benchInsertRow).  Prepared on db, the fresh scratch database with its
** schema; r->nParam is set.  SQLITE_OK, or an error with *pzErr. */
static int benchStatementCheck(bench_run *r, sqlite3 *db, char **pzErr){
  static const char *const azVerb[] = {
    "INSERT", "UPDATE", "DELETE", "REPLACE", "SELECT", "WITH"
  };
  const int nVerb = (int)(sizeof(azVerb)/sizeof(azVerb[0]));
  const char *zSql = r->zInsert, *zTail = 0, *zWhy = 0, *z;
  char zParam[32];
  sqlite3_stmt *pStmt = 0;
  int rc, k, n;
  r->zDenied = 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, &zTail);
  if( rc!=SQLITE_OK && r->zDenied ){
    *pzErr = benchDeniedMsg("statement", r->zDenied);
    return rc;
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cannot prepare the statement: %s",
                             sqlite3_errmsg(db));
    return rc;
  }
  z = benchSkipSpace(zSql);
  for(n=0; (z[n]>='a' && z[n]<='z') || (z[n]>='A' && z[n]<='Z'); n++){}
  for(k=0; k<nVerb; k++){
    if( n==(int)strlen(azVerb[k]) && sqlite3_strnicmp(z, azVerb[k], n)==0 ){
      break;
    }
  }
  if( pStmt==0 ){
    zWhy = "no statement";
  }else if( *benchSkipSpace(zTail) ){
    zWhy = "more than one statement";
  }else if( k==nVerb ){
    zWhy = "it is not an INSERT, UPDATE, DELETE, REPLACE or SELECT";
  }
  if( zWhy ){
    *pzErr = sqlite3_mprintf("statement must be one INSERT, UPDATE, DELETE,"
                             " REPLACE or SELECT (got %Q: %s)", zSql, zWhy);
    sqlite3_finalize(pStmt);
    return SQLITE_ERROR;
  }
  n = sqlite3_bind_parameter_count(pStmt);
  for(k=1; k<=n && zWhy==0; k++){
    const char *zName = sqlite3_bind_parameter_name(pStmt, k);
    sqlite3_snprintf(sizeof(zParam), zParam, "?%d", k);
    if( k>3 ) zWhy = zName ? zName : zParam;
    else if( zName && strcmp(zName, zParam)!=0 ) zWhy = zName;
  }
  if( zWhy ){
    /* before the finalize: zWhy may be the statement's own name text */
    *pzErr = sqlite3_mprintf("statement may use only the parameters ?1 (the"
                             " row number), ?2 (the id) and ?3 (the content)"
                             " (got %Q: it has %s)", zSql, zWhy);
    rc = SQLITE_ERROR;
  }
  sqlite3_finalize(pStmt);
  r->nParam = n;
  return rc;
}

/* The journal_mode of the run, set on the setup connection (after the
** schema) and checked: a file must report the mode asked for. */
static int benchSetupJournal(bench_run *r, sqlite3 *db, char **pzErr){
  const bench_config *c = r->pCfg;
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("PRAGMA journal_mode=%s", benchJournalPragma(c));
  int rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW
   && c->eStorage==BENCH_STORAGE_FILE ){
    const char *zGot = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zWant = acorn_bench_azJournal[c->eJournal];
    if( zGot==0 || sqlite3_stricmp(zGot, zWant)!=0 ){
      *pzErr = sqlite3_mprintf("journal_mode=%s was not applied; SQLite"
          " reports %s", zWant, zGot ? zGot : "NULL");
      rc = SQLITE_ERROR;
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  return rc;
}

/* The scratch database as the run needs it, on the setup connection:
** the template's copy, page_size, then schema (or the posts table), then
** journal_mode, then the user's statement checked against it.  The schema
** runs before journal_mode so that it can set what only a database without
** a page written takes, as PRAGMA auto_vacuum (journal_mode=wal writes the
** first page). */
static int benchSetupSchema(bench_run *r, sqlite3 *db, char **pzErr){
  const bench_config *c = r->pCfg;
  static const char *const azType[] = { "INTEGER", "TEXT", "BLOB" };
  int iType = c->eId==BENCH_ID_INTEGER ? 0 : (BENCH_ID_IS_BLOB(c->eId)) ? 2 : 1;
  char *zSql;
  int rc = SQLITE_OK;
  if( c->zTemplate ){
    rc = acorn_bench_template_copy(c, db, pzErr);
  }else if( c->bPageSize ){
    zSql = sqlite3_mprintf("PRAGMA page_size=%lld", c->iPageSize);
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK && c->zSchema ){
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int*)0);
    rc = sqlite3_exec(db, c->zSchema, 0, 0, 0);
    if( rc!=SQLITE_OK && *pzErr==0 && r->zDenied ){
      *pzErr = benchDeniedMsg("schema", r->zDenied);
    }else if( rc!=SQLITE_OK && *pzErr==0 ){
      *pzErr = sqlite3_mprintf("schema failed: %s", sqlite3_errmsg(db));
    }
    /* (DEFENSIVE refuses journal_mode=off too: the schema's only) */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 0, (int*)0);
  }else if( rc==SQLITE_OK && c->zTemplate==0 ){
    zSql = sqlite3_mprintf(
        "CREATE TABLE posts(id %s PRIMARY KEY, title TEXT NOT NULL,"
        " content TEXT NOT NULL, created TEXT NOT NULL DEFAULT"
        " (strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'))) STRICT%s",
        azType[iType], iType ? ", WITHOUT ROWID" : "");
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ) rc = benchSetupJournal(r, db, pzErr);
  if( rc==SQLITE_OK && r->bCustom ) rc = benchStatementCheck(r, db, pzErr);
  if( rc!=SQLITE_OK && *pzErr==0 ){
    /* rc is the connection's error, or an allocation of our own */
    *pzErr = sqlite3_mprintf("cannot set up the scratch database: %s",
                             sqlite3_errcode(db)==rc ? sqlite3_errmsg(db)
                                                     : sqlite3_errstr(rc));
  }
  return rc;
}

/* Sizes at the end: database plus WAL. */
static sqlite3_int64 benchDbBytes(bench_run *r, sqlite3 *db){
  const bench_config *c = r->pCfg;
  sqlite3_int64 n = 0;
  if( c->eStorage==BENCH_STORAGE_FILE ){
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

/* p50, p99 and max of every writer's latencies, merged: exact from the
** arrays of a short run, from the histograms of a long one. */
static int benchLatencies(bench_run *r, bench_worker *aW, bench_result *pRes){
  const bench_config *c = r->pCfg;
  sqlite3_int64 n = 0;
  int i;
  if( r->bHist ){
    uint64_t *aSum = sqlite3_malloc64(sizeof(uint64_t)*BENCH_HIST_N);
    uint64_t mx = 0;
    int k;
    if( aSum==0 ) return SQLITE_NOMEM;
    memset(aSum, 0, sizeof(uint64_t)*BENCH_HIST_N);
    for(i=0; i<c->nThread; i++){
      if( aW[i].aHist==0 ) continue;
      for(k=0; k<BENCH_HIST_N; k++){
        aSum[k] += aW[i].aHist[k];
        n += aW[i].aHist[k];
      }
      if( aW[i].mxLat>mx ) mx = aW[i].mxLat;
    }
    if( n>0 ){
      uint64_t p50 = benchHistRank(aSum, (n+1)/2);
      uint64_t p99 = benchHistRank(aSum, (n*99+99)/100);
      /* a bucket's middle can pass the largest value in it */
      pRes->rP50 = (p50<mx ? p50 : mx)/1000.0;
      pRes->rP99 = (p99<mx ? p99 : mx)/1000.0;
      pRes->rMax = mx/1000.0;
      pRes->bLatency = 1;
    }
    sqlite3_free(aSum);
  }else{
    uint64_t *aAll;
    for(i=0; i<c->nThread; i++) n += aW[i].nLat;
    if( n==0 ) return SQLITE_OK;
    aAll = sqlite3_malloc64(sizeof(uint64_t)*(sqlite3_uint64)n);
    if( aAll==0 ) return SQLITE_NOMEM;
    n = 0;
    for(i=0; i<c->nThread; i++){
      if( aW[i].nLat==0 ) continue;
      memcpy(aAll+n, aW[i].aLat, sizeof(uint64_t)*(size_t)aW[i].nLat);
      n += aW[i].nLat;
    }
    qsort(aAll, (size_t)n, sizeof(uint64_t), benchCmpU64);
    pRes->rP50 = aAll[(n+1)/2-1]/1000.0;
    pRes->rP99 = aAll[(n*99+99)/100-1]/1000.0;
    pRes->rMax = aAll[n-1]/1000.0;
    pRes->bLatency = 1;
    sqlite3_free(aAll);
  }
  return SQLITE_OK;
}

/* 1. Room for the ids (made phase by phase), the content and the
** workers; the write to time. */
static int benchRunAlloc(bench_run *r, bench_worker **paW, int nW){
  const bench_config *c = r->pCfg;
  static const char zPat[] = "Some content";
  bench_worker *aW;
  int i, rc = benchIdsAlloc(r);
  if( rc!=SQLITE_OK ) return rc;
  r->zContent = sqlite3_malloc(c->nContent+1);
  *paW = aW = sqlite3_malloc64(sizeof(bench_worker)*(sqlite3_uint64)nW);
  /* zeroed before anything can fail: step 5 reads every worker */
  if( aW ) memset(aW, 0, sizeof(bench_worker)*(size_t)nW);
  if( r->zContent==0 || aW==0 ) return SQLITE_NOMEM;
  for(i=0; i<nW; i++){
    aW[i].pRun = r;
    aW[i].bReader = i>=c->nThread;
  }
  for(i=0; i<c->nContent; i++) r->zContent[i] = zPat[i%12];
  r->zContent[c->nContent] = 0;
  if( c->zStatement ){
    r->zInsert = c->zStatement;
    r->bCustom = 1;
  }else if( c->eId==BENCH_ID_INTEGER ){
    r->zInsert = "INSERT INTO posts(title,content) VALUES(?1,?2)";
  }else{
    r->zInsert = "INSERT INTO posts(id,title,content) VALUES(?1,?2,?3)";
  }
  return SQLITE_OK;
}

/* A new name "file:/<zPrefix><16 hex digits>?vfs=memdb": an in-memory
** database that every connection of this process opening the name shares.
** 0 if out of memory. */
static char *benchMemdbName(const char *zPrefix){
  unsigned char a[8];
  acorn_random(a, sizeof(a));
  return sqlite3_mprintf("file:/%s%02x%02x%02x%02x%02x%02x%02x%02x?vfs=memdb",
                         zPrefix, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                         a[7]);
}

/* Does the memdb VFS of this SQLite keep a writer from committing while
** another connection reads?  Before SQLite's fix of December 2022 (3.38
** has not got it, Debian 12's 3.40.1 and 3.52 have) it did not: a
** writer committed under a reader's open read transaction, so connections
** of one run read torn pages, which can make a step loop until the run's
** time is up.  Found by asking, once a process: a reader holds a read
** transaction and a write must fail with SQLITE_BUSY.  1 yes, 0 no, -1
** not known (the probe failed, out of memory say: asked again next time). */
static int benchMemdbLocks(void){
  static int iKnown = -1;
  int v = __atomic_load_n(&iKnown, __ATOMIC_ACQUIRE);
  if( v<0 ){
    sqlite3 *a = 0, *b = 0;
    char *zName = benchMemdbName("acorn-bench-probe-");
    const int flags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI;
    if( zName
     && sqlite3_open_v2(zName, &a, flags, 0)==SQLITE_OK
     && sqlite3_open_v2(zName, &b, flags, 0)==SQLITE_OK
     && sqlite3_exec(a, "CREATE TABLE t(x)", 0, 0, 0)==SQLITE_OK
     && sqlite3_exec(b, "BEGIN; SELECT count(*) FROM t", 0, 0, 0)==SQLITE_OK ){
      int rc = sqlite3_exec(a, "INSERT INTO t VALUES(1)", 0, 0, 0);
      if( rc==SQLITE_BUSY || rc==SQLITE_OK ) v = rc==SQLITE_BUSY;
    }
    sqlite3_close_v2(b);
    sqlite3_close_v2(a);
    sqlite3_free(zName);
    if( v>=0 ) __atomic_store_n(&iKnown, v, __ATOMIC_RELEASE);
  }
  return v;
}

/* 2. The scratch database: a new file in dir, or a memdb name. */
static int benchRunScratch(bench_run *r, char **pzErr){
  const bench_config *c = r->pCfg;
  int rc = SQLITE_OK, bLocks = 1;
  if( c->eStorage==BENCH_STORAGE_MEMORY && c->nThread + c->nReader>1 ){
    bLocks = benchMemdbLocks();
  }
  if( bLocks<0 ){
    *pzErr = sqlite3_mprintf("storage=memory: cannot tell whether this"
        " SQLite's in-memory database keeps a writer from committing under"
        " another connection's reads (the check failed)");
    rc = SQLITE_NOMEM;
  }else if( bLocks==0 ){
    *pzErr = sqlite3_mprintf("storage=memory with more than one writer or a"
        " reader needs an in-memory database that keeps a writer from"
        " committing under another connection's reads, which this SQLite %s"
        " does not (SQLite fixed it in December 2022); use storage=file, or"
        " threads=1 and readers=0", sqlite3_libversion());
    rc = SQLITE_ERROR;
  }else if( c->eStorage==BENCH_STORAGE_FILE ){
    rc = acorn_bench_create_scratch(c->zDirReal, "acorn-bench-", ".db", 1,
                                    &r->zOpen, 0, pzErr);
    r->openFlags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOFOLLOW;
  }else{
    r->zOpen = benchMemdbName("acorn-bench-");
    if( r->zOpen==0 ) rc = SQLITE_NOMEM;
    r->openFlags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI;
  }
  if( r->bThreads ) r->openFlags |= SQLITE_OPEN_NOMUTEX;
  return rc;
}

/* The setup connection to the scratch database, in *pDb. */
static int benchOpenSetup(bench_run *r, sqlite3 **pDb, char **pzErr){
  int rc = benchOpenScratch(r, pDb, &r->zDenied);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cannot open the scratch database: %s",
                             benchDbErrmsg(*pDb, rc));
  }
  return rc;
}

/* 3. The setup connection, and the schema on it. */
static int benchRunSetup(bench_run *r, sqlite3 **pDb, char **pzErr){
  const bench_config *c = r->pCfg;
  int rc;
  if( !ACORN_HAS_API(set_authorizer) && (c->zSchema || c->zStatement) ){
    /* a SQLite built with SQLITE_OMIT_AUTHORIZATION: schema and statement
    ** could not be fenced into the scratch database */
    *pzErr = sqlite3_mprintf("schema and statement need SQLite's authorizer,"
                             " which this SQLite is built without");
    return SQLITE_ERROR;
  }
  rc = benchOpenSetup(r, pDb, pzErr);
  if( rc==SQLITE_OK ) rc = benchSetupSchema(r, *pDb, pzErr);
  if( rc==SQLITE_OK && r->bWal ){
    sqlite3_stmt *pStmt = 0;
    if( sqlite3_prepare_v2(*pDb, "PRAGMA page_size", -1, &pStmt, 0)==SQLITE_OK
     && sqlite3_step(pStmt)==SQLITE_ROW ){
      r->szPage = sqlite3_column_int(pStmt, 0);
    }
    sqlite3_finalize(pStmt);
  }
  return rc;
}

/* 4a. The application mutex and the start gate (bInit), or their end. */
static int benchRunLocks(bench_run *r, int bInit, char **pzErr){
  if( !bInit ){
    if( r->bLocks ){
      pthread_cond_destroy(&r->gateCond);
      pthread_mutex_destroy(&r->gateMutex);
      pthread_mutex_destroy(&r->appMutex);
    }
    r->bLocks = 0;
    return SQLITE_OK;
  }
  if( pthread_mutex_init(&r->appMutex, 0)!=0 ) goto no_mutex;
  if( pthread_mutex_init(&r->gateMutex, 0)!=0 ){
    pthread_mutex_destroy(&r->appMutex);
    goto no_mutex;
  }
  if( pthread_cond_init(&r->gateCond, 0)!=0 ){
    pthread_mutex_destroy(&r->gateMutex);
    pthread_mutex_destroy(&r->appMutex);
    goto no_mutex;
  }
  r->bLocks = 1;
  return SQLITE_OK;
no_mutex:
  *pzErr = sqlite3_mprintf("cannot create a mutex");
  return SQLITE_ERROR;
}

/* 4b. The workers: the one writer in this thread, or a thread each, with
** the terminating signals blocked; the timed part; every thread joined.
** *ptElapsed is the time of the phases.  A worker's own failure is on the
** worker (step 5 reads it). */
static int benchRunWorkers(bench_run *r, bench_worker *aW, int nW,
                           sqlite3_int64 *ptElapsed, char **pzErr){
  sigset_t oldMask;
  int i, nStarted = 0, rc = SQLITE_OK;
  if( !r->bThreads ){
    if( benchWorkerSetup(&aW[0])==SQLITE_OK ){
      *ptElapsed = benchPhases(r, aW, 0);
    }
    return SQLITE_OK;
  }
  acorn_bench_signals_block(1, &oldMask);  /* the threads start blocked */
  for(i=0; i<nW; i++){
    if( pthread_create(&aW[i].tid, 0, benchThreadMain, &aW[i])!=0 ){
      *pzErr = sqlite3_mprintf("cannot start thread %d of %d: %s",
                               i+1, nW, strerror(errno));
      rc = SQLITE_ERROR;
      __atomic_store_n(&r->bStop, 1, __ATOMIC_SEQ_CST);
      break;
    }
    aW[i].bThread = 1;
    nStarted++;
  }
  acorn_bench_signals_block(0, &oldMask);
  *ptElapsed = benchPhases(r, aW, nStarted);
  for(i=0; i<nStarted; i++) pthread_join(aW[i].tid, 0);
  return rc;
}

/* 5a, first: the -wal file: its size now, after the timed part and
** before any connection closes (the last to close checkpoints and deletes
** it), and the largest it reached.  The file grows only by frames
** appended at its end: after a commit whose log holds F frames it is
** 32 + F*(24 + page_size) bytes (a header, then per frame a 24-byte header
** and a page), or more if an earlier, longer log left it so (a new log is
** written from the start of the old file, which only journal_size_limit
** cuts).  A log starts again only after a checkpoint of all of it, and
** only the writers' WAL hooks checkpoint, at F >= wal_autocheckpoint: so
** the largest F a hook saw there is the largest log of the run, and
** without checkpoints the file only grew and its size now is its peak.
** Exact, and without a system call or a compare per commit. */
static void benchRunWal(bench_run *r, bench_worker *aW, bench_result *pRes){
  const bench_config *c = r->pCfg;
  struct stat st;
  char *zWal;
  int i, mxFrame = 0;
  pRes->bWal = 1;
  zWal = sqlite3_mprintf("%s-wal", r->zOpen);
  if( zWal && stat(zWal, &st)==0 ) pRes->nWalEnd = st.st_size;
  sqlite3_free(zWal);
  for(i=0; i<c->nThread; i++){
    if( aW[i].mxFrame>mxFrame ) mxFrame = aW[i].mxFrame;
    pRes->nCheckpoints += aW[i].nCkpt;
    pRes->nCheckpointsBlocked += aW[i].nCkptBlocked;
  }
  pRes->nWalMax = mxFrame>0 ? 32 + (sqlite3_int64)mxFrame*(24 + r->szPage) : 0;
  if( pRes->nWalEnd>pRes->nWalMax ) pRes->nWalMax = pRes->nWalEnd;
}

/* 5a. The run's outcome: a deferred signal (the files removed before the
** connections close, so that closing has nothing to checkpoint), else the
** first worker's failure, else rc; the workers' counts added up and their
** connections closed. */
static int benchRunCollect(bench_run *r, bench_worker *aW, int nW, int rc,
                           bench_result *pRes, char **pzErr){
  const bench_config *c = r->pCfg;
  int i;
  if( acorn_bench_signalled() ){
    if( r->zOpen && c->eStorage==BENCH_STORAGE_FILE ){
      acorn_bench_unlink_all(r->zOpen, 1);
    }
    if( rc==SQLITE_OK ){
      int sig = __atomic_load_n(&acorn_bench_sig_pending, __ATOMIC_RELAXED);
      rc = SQLITE_INTERRUPT;
      *pzErr = sqlite3_mprintf("stopped by %s", sig==SIGTERM ? "SIGTERM"
                               : sig==SIGINT ? "SIGINT" : "SIGHUP");
    }
  }
  if( aW && r->bWal && r->zOpen ) benchRunWal(r, aW, pRes);
  for(i=0; aW && i<nW; i++){
    if( rc==SQLITE_OK && aW[i].rc!=SQLITE_OK ){
      rc = aW[i].rc;
      sqlite3_free(*pzErr);
      *pzErr = aW[i].zErr;
      aW[i].zErr = 0;
    }
    if( !aW[i].bReader ){
      pRes->nWrites += aW[i].nDone;
    }else{
      pRes->nReads += aW[i].nDone;
    }
    pRes->nBusy += aW[i].busy.nBusy;
    pRes->nBusyErrors += aW[i].nBusyErr;
    sqlite3_free(aW[i].zErr);
    benchWorkerClose(&aW[i]);
  }
  return rc;
}

/* 5b. Rows and sizes, on the setup connection (opened again for file
** storage): count(*) of posts, or, for a workload of the user's, the rows
** its statement ran for. */
static int benchRunCount(bench_run *r, sqlite3 **pDb, bench_result *pRes,
                         char **pzErr){
  const bench_config *c = r->pCfg;
  sqlite3_stmt *pStmt = 0;
  int rc = *pDb ? SQLITE_OK : benchOpenSetup(r, pDb, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  pRes->nDbBytes = benchDbBytes(r, *pDb);
  if( c->zSchema || c->zStatement || c->zTemplate ){
    pRes->nRowsWritten = pRes->nWrites;
    return SQLITE_OK;
  }
  rc = sqlite3_prepare_v2(*pDb, "SELECT count(*) FROM posts", -1, &pStmt, 0);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    pRes->nRowsWritten = sqlite3_column_int64(pStmt, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cannot count the rows: %s",
                             sqlite3_errmsg(*pDb));
  }
  return rc;
}

/* 5c. Close and remove everything, on every path. */
static void benchRunFree(bench_run *r, bench_worker *aW, int nW,
                         sqlite3 *dbSetup){
  int i;
  sqlite3_close_v2(dbSetup);
  if( r->zOpen && r->pCfg->eStorage==BENCH_STORAGE_FILE ){
    acorn_bench_live_remove(r->zOpen);
  }
  benchRunLocks(r, 0, 0);
  sqlite3_free(r->zOpen);
  sqlite3_free(r->aId);
  sqlite3_free(r->zContent);
  for(i=0; aW && i<nW; i++) benchWorkerFree(&aW[i]);
  sqlite3_free(aW);
}

/* One run with the settings in c (see benchInt.h), in the steps of the
** comment at the top. */
int acorn_bench_run(const bench_config *c, sqlite3 *dbHost,
                    bench_result *pRes, char **pzErr){
  bench_run run;
  bench_worker *aW = 0;
  sqlite3 *dbSetup = 0;
  sqlite3_int64 tElapsed = 0;
  int nW = c->nThread + c->nReader;
  int rc, bWasInRun = benchInRun;

  benchInRun = 1;
  memset(&run, 0, sizeof(run));
  memset(pRes, 0, sizeof(*pRes));
  run.pCfg = c;
#if SQLITE_VERSION_NUMBER>=3041000
  if( sqlite3_libversion_number()>=3041000 ) run.dbHost = dbHost;
#else
  (void)dbHost;
#endif
  run.nWriterLeft = c->nThread;
  run.bHist = c->nRow>BENCH_EXACT_MAX;
  run.bThreads = nW>1;
  run.bWal = c->eJournal==BENCH_JOURNAL_WAL && c->eStorage==BENCH_STORAGE_FILE;

  rc = benchRunAlloc(&run, &aW, nW);
  if( rc==SQLITE_OK ) rc = benchRunScratch(&run, pzErr);
  if( rc==SQLITE_OK ) rc = benchRunSetup(&run, &dbSetup, pzErr);
  if( rc==SQLITE_OK ) rc = benchRunLocks(&run, 1, pzErr);
  /* For file storage the setup connection is closed while the workers
  ** run (locking=exclusive lets no other connection in) and opened again
  ** to count.  A memdb database lives only while a connection holds it. */
  if( rc==SQLITE_OK && c->eStorage==BENCH_STORAGE_FILE ){
    sqlite3_close_v2(dbSetup);
    dbSetup = 0;
  }
  if( rc==SQLITE_OK ) rc = benchRunWorkers(&run, aW, nW, &tElapsed, pzErr);
  rc = benchRunCollect(&run, aW, nW, rc, pRes, pzErr);
  pRes->rElapsed = (double)tElapsed/1e9;
  if( rc==SQLITE_OK ) rc = benchRunCount(&run, &dbSetup, pRes, pzErr);
  pRes->bContent = !run.bCustom || run.nParam>=3;
  if( rc==SQLITE_OK ) rc = benchLatencies(&run, aW, pRes);
  benchRunFree(&run, aW, nW, dbSetup);
  benchInRun = bWasInRun;
  return rc;
}
