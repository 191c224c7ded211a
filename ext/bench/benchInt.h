/*
** benchInt.h: what bench_insert.c (the table-valued function: parameters,
** their values, the rows), bench_run.c (one run: scratch database,
** connections, threads, clock), bench_scratch.c (scratch files, signals)
** and bench_template.c (the template's copy) share.  Internal to acorn.
**
** THE FILES, in layers, lowest first: each calls only the ones above it in
** this list (tests/ext-shape checks that no function of a file is called
** from a file listed before it).
**
**   bench_scratch.c  scratch files and directories, deferred signals
**   bench_template.c the template database, checked and copied
**   bench_run.c      one run: connections, threads, the clock, the result
**   bench_insert.c   the table-valued function: parameters, their values,
**                    one row per combination
**
** bench_insert.c reads one combination of parameter values into a
** bench_config and calls acorn_bench_run(), which fills a bench_result or
** returns an error message.  Every value in a bench_config has been
** checked: acorn_bench_run() trusts it.
*/
#ifndef ACORN_BENCHINT_H
#define ACORN_BENCHINT_H

#include "acorn.h"

#include <signal.h>
#include <time.h>

/* The enumerated parameters.  The value is the index of its name in the
** matching acorn_bench_az* array, which is also the order of the rows. */
enum {
  BENCH_ID_INTEGER, BENCH_ID_SHORTID, BENCH_ID_UUID4_TEXT,
  BENCH_ID_UUID4_BLOB, BENCH_ID_UUID7_TEXT, BENCH_ID_UUID7_BLOB,
  BENCH_ID_UUID8_TEXT, BENCH_ID_UUID8_BLOB
};
#define BENCH_ID_IS_BLOB(e) \
  ((e)==BENCH_ID_UUID4_BLOB || (e)==BENCH_ID_UUID7_BLOB \
   || (e)==BENCH_ID_UUID8_BLOB)
enum {
  BENCH_JOURNAL_WAL, BENCH_JOURNAL_DELETE, BENCH_JOURNAL_TRUNCATE,
  BENCH_JOURNAL_PERSIST, BENCH_JOURNAL_MEMORY, BENCH_JOURNAL_OFF
};
enum { BENCH_SYNC_OFF, BENCH_SYNC_NORMAL, BENCH_SYNC_FULL, BENCH_SYNC_EXTRA };
enum { BENCH_BEGIN_DEFERRED, BENCH_BEGIN_IMMEDIATE };
enum { BENCH_PREPARE_ONCE, BENCH_PREPARE_EACH, BENCH_PREPARE_EXEC };
enum { BENCH_LOCKING_NORMAL, BENCH_LOCKING_EXCLUSIVE };
enum { BENCH_STORAGE_FILE, BENCH_STORAGE_MEMORY };

/* Their names, in value order, each list ended by NULL. */
extern const char *const acorn_bench_azId[];
extern const char *const acorn_bench_azJournal[];
extern const char *const acorn_bench_azSync[];
extern const char *const acorn_bench_azBegin[];
extern const char *const acorn_bench_azPrepare[];
extern const char *const acorn_bench_azLocking[];
extern const char *const acorn_bench_azStorage[];

/* A scratch file is "<dir>/acorn-bench-<16 hex>.db" (or "acorn-fsync-
** <16 hex>.tmp"): realpath(dir) plus this many bytes.  Its path must fit
** in BENCH_PATH_MAX bytes, NUL included (the registry of live files holds
** paths that long; SQLite's unix VFS allows less). */
#define BENCH_SCRATCH_NAME_LEN 32
#define BENCH_PATH_MAX         1024

/* The settings of one run. */
typedef struct bench_config bench_config;
struct bench_config {
  int eId, eJournal, eSync, nThread, bMutex, nBatch, eBegin, ePrepare;
  int eLocking, nReader, nContent, iBusyTimeout, eStorage;
  int bPageSize, bCacheSize, bMmapSize;
  int bReadFirst;          /* each transaction reads a row before it writes */
  int nAutoCheckpoint;     /* pages; 0: no checkpoint while the clock runs */
  int iReaderHoldMs;       /* readers keep each read transaction this long */
  sqlite3_int64 iPageSize, iCacheSize, iMmapSize, nRow;
  sqlite3_int64 iJournalSizeLimit;   /* bytes; -1: the pragma is not run */
  double rSeconds;
  const char *zDir;        /* dir as given, for messages */
  const char *zDirReal;    /* its realpath: absolute, no symlink */
  const char *zSchema;     /* SQL run on the fresh database, or NULL: the
                           ** posts table (nothing if zTemplate is set) */
  const char *zStatement;  /* the write to time, or NULL: the built-in
                           ** INSERT into posts */
  const char *zTemplate;   /* template as given, or NULL: none */
  const char *zTemplateReal;   /* its realpath */
};

/* What one run measured. */
typedef struct bench_result bench_result;
struct bench_result {
  sqlite3_int64 nRowsWritten, nWrites, nReads, nBusy, nDbBytes;
  sqlite3_int64 nBusyErrors;           /* transactions retried after BUSY */
  int bWal;                            /* a WAL file: the four below hold */
  sqlite3_int64 nWalMax, nWalEnd;      /* bytes of the -wal file */
  sqlite3_int64 nCheckpoints, nCheckpointsBlocked;
  double rElapsed, rP50, rP99, rMax;   /* seconds; microseconds */
  int bLatency;                        /* rP50, rP99, rMax hold something */
  int bContent;                        /* every row had `content` bytes
                                       ** bound: the built-in INSERT, or a
                                       ** statement that uses ?3 */
};

/* One run with the settings in c.  dbHost is the connection running the
** statement (its interrupt stops the run, with SQLite 3.41 or later).  On
** error, *pzErr is the message (sqlite3_malloc'd, without the
** "bench_insert: " prefix), or NULL for SQLITE_NOMEM. */
int acorn_bench_run(const bench_config *c, sqlite3 *dbHost,
                    bench_result *pRes, char **pzErr);

/* Is the calling thread working for a run (its caller's thread, or one of
** its workers)?  A run is not started there: schema and statement cannot
** nest runs. */
int acorn_bench_in_run(void);

/* Can zReal (a realpath) be copied as a template: is it a database that
** opens read-only?  SQLITE_OK, or an error with *pzWhy (SQLite's message,
** sqlite3_malloc'd). */
int acorn_bench_template_check(const char *zReal, char **pzWhy);

/* The template (realpath c->zTemplateReal) copied into dbDest's main
** database, replacing all of it.  SQLITE_OK, or an error with *pzErr. */
int acorn_bench_template_copy(const bench_config *c, sqlite3 *dbDest,
                              char **pzErr);

/* A scratch file: a fresh name "<zDir>/<zPrefix><16 hex><zSuffix>" made
** with open(O_CREAT|O_EXCL) (if bSideFiles, one whose -wal, -shm and
** -journal do not exist either): *pzPath (sqlite3_malloc'd) and, if pFd is
** not NULL, the open descriptor.  It is registered as live, removed at exit
** or on a terminating signal, until acorn_bench_live_remove(zPath). */
int acorn_bench_create_scratch(const char *zDir, const char *zPrefix,
                               const char *zSuffix, int bSideFiles,
                               char **pzPath, int *pFd, char **pzErr);
void acorn_bench_live_remove(const char *zPath);

/* Unlink zPath and, if bSideFiles, its -wal, -shm and -journal.
** Async-signal-safe. */
void acorn_bench_unlink_all(const char *zPath, int bSideFiles);

/* Block (bBlock) SIGTERM, SIGINT and SIGHUP in the calling thread, saving
** its mask in *pOld, or put *pOld back: worker threads start with them
** blocked. */
void acorn_bench_signals_block(int bBlock, sigset_t *pOld);

/* A terminating signal deferred while scratch files live (its number, or
** 0; atomic): every run stops at its next row and removes its files.
** Declared hidden, as its definition is: read directly, not through the
** global offset table, in the writers' loop. */
extern int acorn_bench_sig_pending __attribute__((visibility("hidden")));

/* Has a terminating signal asked every run to stop?  Inline: writers ask
** before every row. */
static inline int acorn_bench_signalled(void){
  return __atomic_load_n(&acorn_bench_sig_pending, __ATOMIC_RELAXED)!=0;
}

/* The monotonic clock in nanoseconds.  Inline: writers read it per row. */
static inline sqlite3_int64 acorn_bench_mono(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (sqlite3_int64)ts.tv_sec*1000000000 + ts.tv_nsec;
}

/* fsync_us: the median of 5 (4 KiB pwrite + fsync) on a new file in zDir
** (a realpath), in microseconds. */
int acorn_bench_fsync_us(const char *zDir, double *pUs, char **pzErr);

#ifdef ACORN_TESTING
extern sqlite3_int64 acorn_test_bench_max_ns;
#endif

#endif /* ACORN_BENCHINT_H */
