/*
** bench_insert.c: writer-throughput experiments (journal mode, synchronous,
** writer threads, an application mutex, batching, primary key type ...) as
** an eponymous table-valued function.  docs/bench_insert.md says where the
** experiments come from.
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
** NULL); the others take their defaults.  The result has one row per
** combination of the values.  Each row is computed when the cursor reaches
** it (xFilter for the first, xNext for the others), so the shell prints
** each row as its run ends.
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
**   begin        deferred | immediate (BEGIN of batch>1, or of every
**                transaction with read_first=1);                  deferred
**   prepare      once | each | exec;                              once
**   locking      normal | exclusive;                              normal
**   page_size    power of two in 512..65536, or NULL;             NULL
**   cache_size   integer in -1000000000..1000000000, or NULL;     NULL
**   mmap_size    integer in 0..1099511627776, or NULL;            NULL
**                (NULL: the pragma is not run, the library default holds)
**   readers      reader threads doing point SELECTs by id, 0..64; 0
**   rows         rows written per run by all threads, 1..10000000; 10000
**   seconds      upper bound on the timed part of one run, a number in
**                (0, 86400]; a step still running when it is up is
**                interrupted (its transaction rolled back, not
**                counted);                                        60
**   content      bytes in the content column, 0..1000000;         12
**   busy_timeout milliseconds, 0..3600000;                        1000
**   storage      file | memory;                                   file
**   dir          an existing writable directory;    $TMPDIR, else /tmp
**   schema       SQL run once on each fresh scratch database (tables,
**                indexes, triggers, cache tables: every connection of a
**                run has acorn's id functions and cache), or NULL: the
**                posts table (none with a template);              NULL
**   statement    the write to time, bound per row: ?1 the row number
**                (1..rows), ?2 the id made by `id` (NULL for integer),
**                ?3 the content; one INSERT, UPDATE, DELETE, REPLACE or
**                SELECT (a function call to time: SELECT cache_read(...)),
**                any rows it returns read and dropped, or NULL: the
**                built-in INSERT into posts;                      NULL
**   template     an existing SQLite database, copied read-only (backup
**                API) into each scratch database before the schema, or
**                NULL;                                            NULL
**   read_first   0 | 1: each transaction reads a recent row of posts
**                (SELECT by id) before it writes, in an explicit
**                transaction even with batch=1;                   0
**   wal_autocheckpoint  pages, 0..1000000000: a writer runs a PASSIVE
**                checkpoint after a commit that leaves the log at least
**                this long (SQLite's own autocheckpoint, counted); 0:
**                none while the clock runs;                       1000
**   journal_size_limit  bytes, -1..1099511627776 (-1: the pragma is not
**                run, no limit);                                  -1
**   reader_hold_ms  milliseconds, 0..3600000: each reader runs its
**                SELECTs in read transactions kept open this long, one
**                after the other (0: each SELECT its own);        0
**
**   SELECT writes_per_sec, p99_us FROM bench_insert
**    WHERE template='app.db' AND schema='CREATE INDEX ev_kind ON ev(kind)'
**      AND statement='INSERT INTO ev(id, kind, body) VALUES(?2, ?1 % 7, ?3)'
**      AND id='uuid7_blob' AND batch IN (1, 100);
**
** Every integer parameter also takes a REAL with no fractional part (as
** JavaScript numbers bind).  Enumerated values are case-insensitive ('WAL'
** is wal, as in PRAGMA journal_mode=WAL); the columns and messages show
** them as listed above.  An invalid value is an error that names the
** parameter and lists what is allowed, e.g.
**   bench_insert: journal must be one of wal, delete, truncate, persist,
**   memory, off (got 'bogus')
** A constraint other than = or IN (or IS NULL on the parameters that take
** NULL) on a parameter is an error:
**   bench_insert: parameter threads takes only = or IN constraints
** locking=exclusive lets only one connection in: it requires threads=1 and
** readers=0.  threads>1 or readers>0 require a thread-safe SQLite.  A
** template needs a statement; readers>0 needs schema and template NULL
** (readers read posts); prepare=exec takes no statement; page_size takes
** no template.  With storage=memory SQLite keeps the journal in memory:
** wal, delete, truncate and persist run as memory (the journal column
** shows the value asked for).  These are checked before the first run.
** The statement is checked when its run has made the scratch database
** (its tables must exist): not a single INSERT, UPDATE, DELETE, REPLACE
** or SELECT, or one that binds anything but ?1, ?2, ?3, is refused.
** read_first=1 needs schema and template NULL (it reads posts).
** A write refused with SQLITE_BUSY (BUSY_SNAPSHOT included) once the busy
** handler gives up is rolled back and its transaction retried from BEGIN
** (busy_errors counts them) until seconds is up.  Any other write that
** fails stops the run and becomes the error, with
** SQLite's message and every parameter of the run:
**   bench_insert: insert failed: disk I/O error (id=integer journal=wal ...)
**   bench_insert: statement failed at row 51: UNIQUE constraint failed:
**   t.k (id=integer ... statement='INSERT INTO t(k) VALUES(?1 % 50)')
**
** SECURITY
**
** A database file, and a schema or statement from a stranger, can make
** bench_insert do nothing beyond a run it was asked for:
**   - no schema can name it: CREATE VIRTUAL TABLE ... USING bench_insert is
**     refused (no xCreate), and a table that a file's sqlite_schema declares
**     so anyway (writable_schema) is refused by xConnect, before any run:
**       bench_insert: table main.users is refused: bench_insert is a
**       table-valued function only, which no schema can name (CREATE
**       VIRTUAL TABLE ... USING bench_insert)
**   - it is SQLITE_VTAB_DIRECTONLY: no view or trigger can call it;
**   - schema and statement act on the scratch database only: its
**     connections refuse ATTACH (and so VACUUM INTO and VACUUM), DETACH,
**     load_extension(), writefile(), edit() and the PRAGMAs
**     temp_store_directory, data_store_directory, soft_heap_limit and
**     hard_heap_limit, with trusted_schema off; schema runs in DEFENSIVE
**     mode:
**       bench_insert: schema may not use ATTACH (or VACUUM): schema and
**       statement run on the scratch database only, without ATTACH,
**       DETACH, VACUUM, extensions or process-wide PRAGMAs (id=...)
**   - runs do not nest: with acorn on every connection (acorn-auto.so,
**     sqlite3_auto_extension) a schema or statement that runs bench_insert
**     gets "bench_insert: schema and statement cannot run bench_insert: a
**     run does not start inside another run";
**   - seconds bounds even a statement that never returns (a progress
**     handler on the writers; not on a SQLite built with
**     SQLITE_OMIT_PROGRESS_CALLBACK, as better-sqlite3's is, whose API has
**     none); a SQLite without the authorizer (SQLITE_OMIT_AUTHORIZATION)
**     runs no schema or statement;
**   - a template is opened read-only and must be a regular file beginning
**     with "SQLite format 3\0"; schema, statement, template and dir with a
**     NUL inside are refused, not cut there.
**
** RESULT COLUMNS
**
**   rows_written    INTEGER  count(*) of posts after the run; with schema,
**                            statement or template: the rows (row
**                            numbers) the statement ran for
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
**   reads_per_sec   INTEGER  point SELECTs by all readers / elapsed (0
**                            without readers)
**   (writes_per_sec, ns_per_write, the latencies and reads_per_sec are NULL
**   for a run that wrote no row: one whose seconds ran out before the first)
**   busy            INTEGER  SQLITE_BUSY retries (busy handler calls)
**                            while the clock runs
**   db_bytes        INTEGER  database plus WAL after the run's connections
**                            closed (memory: page_count*page_size)
**   sqlite_version  TEXT     sqlite3_libversion() of the running library
**   fsync_us        REAL     median of 5 write+fsync of 4 KiB to a new file
**                            in dir, measured once per dir per statement;
**                            NULL with storage=memory, which writes nothing
**                            in dir
**   busy_errors     INTEGER  transactions refused with SQLITE_BUSY after
**                            the busy handler gave up (or without it: a
**                            deferred transaction that has read), rolled
**                            back and retried
**   wal_bytes_max   INTEGER  the largest size of the -wal file while the
**                            clock ran: 32 + F*(24+page_size) for the
**                            largest log of F frames (bench_run.c)
**   wal_bytes_end   INTEGER  its size after the timed part, before the
**                            connections close
**   checkpoints     INTEGER  PASSIVE checkpoints the writers ran
**   checkpoints_blocked INTEGER  those that stopped before the end of the
**                            log (a reader's snapshot needs the rest)
**   (the four WAL columns are NULL without a -wal file: journal other
**   than wal, or storage=memory)
**   content_mb_per_sec REAL  rows inserted * content / elapsed / 1e6: the
**                            bytes of content bound to the rows, in MB
**                            (10^6 bytes, as Go's MB/s) a second, to the
**                            kB; NULL for a statement that binds no ?3
**                            (and, as the rates, for a run of no row)
**
** ROW ORDER
**
** Combinations nest in the order of the parameter list above: id varies
** slowest, reader_hold_ms fastest.  Within one parameter the values are ordered as the
** list above orders them (for enumerations), ascending for numbers, by
** byte order for dir, schema, statement and template (NULL first);
** duplicates are removed.
**
** HOW IT WORKS
**
** Declared schema: the 18 result columns, then the 26 parameters as HIDDEN
** columns, in the order above.  xBestIndex gives each parameter's first
** usable = / IS / IN constraint an argvIndex (in column order) with omit
** set, and asks for IN lists all at once (sqlite3_vtab_in); IS NULL on a
** parameter that takes NULL is used (omit set) without one.
** idxStr has one character per parameter: '-' unconstrained, '=' a single
** value, 'i' an IN list, 'n' IS NULL; xFilter reads argv accordingly.  An
** unusable constraint on a parameter gives SQLITE_CONSTRAINT; any other
** operator is an error.
** xFilter validates every value of every parameter before the first run.
**
** One run is bench_run.c's (acorn_bench_run, behind benchInt.h): this file
** reads the parameters, checks every value, and turns each combination
** into a bench_config and each bench_result into a row.
*/
#include "benchInt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
#define BENCH_COL_BUSY_ERRORS    12
#define BENCH_COL_WAL_BYTES_MAX  13
#define BENCH_COL_WAL_BYTES_END  14
#define BENCH_COL_CHECKPOINTS    15
#define BENCH_COL_CKPT_BLOCKED   16
#define BENCH_COL_CONTENT_MB     17
#define BENCH_NRESULT            18

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
#define BENCH_P_SCHEMA       19
#define BENCH_P_STATEMENT    20
#define BENCH_P_TEMPLATE     21
#define BENCH_P_READ_FIRST   22
#define BENCH_P_WAL_AUTOCKPT 23
#define BENCH_P_JOURNAL_SIZE 24
#define BENCH_P_READER_HOLD  25
#define BENCH_NPARAM         26

#define BENCH_SCHEMA \
  "CREATE TABLE x(rows_written, elapsed, writes_per_sec, ns_per_write," \
  " p50_us, p99_us, max_us, reads_per_sec, busy, db_bytes," \
  " sqlite_version, fsync_us, busy_errors, wal_bytes_max, wal_bytes_end," \
  " checkpoints, checkpoints_blocked, content_mb_per_sec," \
  " id HIDDEN, journal HIDDEN, synchronous HIDDEN, threads HIDDEN," \
  " mutex HIDDEN, batch HIDDEN, begin HIDDEN, prepare HIDDEN," \
  " locking HIDDEN, page_size HIDDEN, cache_size HIDDEN, mmap_size HIDDEN," \
  " readers HIDDEN, rows HIDDEN, seconds HIDDEN, content HIDDEN," \
  " busy_timeout HIDDEN, storage HIDDEN, dir HIDDEN, schema HIDDEN," \
  " statement HIDDEN, template HIDDEN, read_first HIDDEN," \
  " wal_autocheckpoint HIDDEN, journal_size_limit HIDDEN," \
  " reader_hold_ms HIDDEN)"

#define BENCH_MAX_COMBOS 10000

/* How a parameter's values are checked. */
enum {
  BENCH_PARAM_ENUM,            /* a name from azEnum */
  BENCH_PARAM_INT,             /* an integer in iMin..iMax (or NULL) */
  BENCH_PARAM_REAL,            /* a number in (0, iMax] */
  BENCH_PARAM_DIR,             /* an existing writable directory */
  BENCH_PARAM_TEXT,            /* any text, or NULL */
  BENCH_PARAM_FILE             /* an existing database file, or NULL */
};

typedef struct bench_param bench_param;
struct bench_param {
  const char *zName;
  int eType;                   /* BENCH_PARAM_* */
  const char *const *azEnum;   /* ENUM: the allowed names */
  sqlite3_int64 iMin, iMax;    /* INT: the range; REAL: iMax */
  int bNull;                   /* INT, TEXT, FILE: NULL allowed: unset */
  sqlite3_int64 iDefault;      /* ENUM, INT, REAL default (unless bNull) */
};

#define E_ BENCH_PARAM_ENUM
#define I_ BENCH_PARAM_INT
static const bench_param aParam[BENCH_NPARAM] = {
  { "id",          E_, acorn_bench_azId,      0, 0, 0, BENCH_ID_INTEGER },
  { "journal",     E_, acorn_bench_azJournal, 0, 0, 0, BENCH_JOURNAL_WAL },
  { "synchronous", E_, acorn_bench_azSync,    0, 0, 0, BENCH_SYNC_NORMAL },
  { "threads",     I_, 0, 1, 64, 0, 1 },
  { "mutex",       I_, 0, 0, 1, 0, 0 },
  { "batch",       I_, 0, 1, 1000000, 0, 1 },
  { "begin",       E_, acorn_bench_azBegin,   0, 0, 0, BENCH_BEGIN_DEFERRED },
  { "prepare",     E_, acorn_bench_azPrepare, 0, 0, 0, BENCH_PREPARE_ONCE },
  { "locking",     E_, acorn_bench_azLocking, 0, 0, 0, BENCH_LOCKING_NORMAL },
  { "page_size",   I_, 0, 512, 65536, 1, 0 },
  { "cache_size",  I_, 0, -1000000000, 1000000000, 1, 0 },
  { "mmap_size",   I_, 0, 0, 1099511627776LL, 1, 0 },
  { "readers",     I_, 0, 0, 64, 0, 0 },
  { "rows",        I_, 0, 1, 10000000, 0, 10000 },
  { "seconds",     BENCH_PARAM_REAL, 0, 0, 86400, 0, 60 },
  { "content",     I_, 0, 0, 1000000, 0, 12 },
  { "busy_timeout", I_, 0, 0, 3600000, 0, 1000 },
  { "storage",     E_, acorn_bench_azStorage, 0, 0, 0, BENCH_STORAGE_FILE },
  { "dir",         BENCH_PARAM_DIR, 0, 0, 0, 0, 0 },
  { "schema",      BENCH_PARAM_TEXT, 0, 0, 0, 1, 0 },
  { "statement",   BENCH_PARAM_TEXT, 0, 0, 0, 1, 0 },
  { "template",    BENCH_PARAM_FILE, 0, 0, 0, 1, 0 },
  { "read_first",  I_, 0, 0, 1, 0, 0 },
  { "wal_autocheckpoint", I_, 0, 0, 1000000000, 0, 1000 },
  { "journal_size_limit", I_, 0, -1, 1099511627776LL, 0, -1 },
  { "reader_hold_ms", I_, 0, 0, 3600000, 0, 0 },
};
#undef E_
#undef I_

/* One value of one parameter. */
typedef struct bench_value bench_value;
struct bench_value {
  int bNull;          /* NULL: unset (page_size, ..., template) */
  sqlite3_int64 i;    /* ENUM: the index of the name; INT: the value */
  double r;           /* REAL */
  char *z;            /* DIR, TEXT, FILE, owned: the value as given */
  char *zReal;        /* DIR, FILE, owned: realpath(z), what is opened */
  double rFsyncUs;    /* DIR: fsync_us measured there */
};

/* "id=integer journal=wal ..." for error messages: every parameter, and
** schema, statement and template when they are set, and the BUSY and WAL
** parameters when one is not its default.  sqlite3_free() it. */
static char *benchConfigDesc(const bench_config *c){
  char zPage[32], zCache[32], zMmap[32];
  char *zDesc, *zMore;
  if( c->bPageSize ) sqlite3_snprintf(32, zPage, "%lld", c->iPageSize);
  else sqlite3_snprintf(32, zPage, "NULL");
  if( c->bCacheSize ) sqlite3_snprintf(32, zCache, "%lld", c->iCacheSize);
  else sqlite3_snprintf(32, zCache, "NULL");
  if( c->bMmapSize ) sqlite3_snprintf(32, zMmap, "%lld", c->iMmapSize);
  else sqlite3_snprintf(32, zMmap, "NULL");
  zDesc = sqlite3_mprintf(
    "id=%s journal=%s synchronous=%s threads=%d mutex=%d batch=%d begin=%s"
    " prepare=%s locking=%s page_size=%s cache_size=%s mmap_size=%s"
    " readers=%d rows=%lld seconds=%!.15g content=%d busy_timeout=%d"
    " storage=%s dir=%s",
    acorn_bench_azId[c->eId], acorn_bench_azJournal[c->eJournal],
    acorn_bench_azSync[c->eSync], c->nThread, c->bMutex, c->nBatch,
    acorn_bench_azBegin[c->eBegin], acorn_bench_azPrepare[c->ePrepare],
    acorn_bench_azLocking[c->eLocking], zPage, zCache, zMmap, c->nReader,
    c->nRow, c->rSeconds, c->nContent, c->iBusyTimeout,
    acorn_bench_azStorage[c->eStorage], c->zDir);
  if( zDesc && c->zSchema ){
    zMore = sqlite3_mprintf("%s schema=%Q", zDesc, c->zSchema);
    sqlite3_free(zDesc);
    zDesc = zMore;
  }
  if( zDesc && c->zStatement ){
    zMore = sqlite3_mprintf("%s statement=%Q", zDesc, c->zStatement);
    sqlite3_free(zDesc);
    zDesc = zMore;
  }
  if( zDesc && c->zTemplate ){
    zMore = sqlite3_mprintf("%s template=%s", zDesc, c->zTemplate);
    sqlite3_free(zDesc);
    zDesc = zMore;
  }
  if( zDesc && (c->bReadFirst || c->nAutoCheckpoint!=1000
                || c->iJournalSizeLimit!=-1 || c->iReaderHoldMs) ){
    zMore = sqlite3_mprintf("%s read_first=%d wal_autocheckpoint=%d"
        " journal_size_limit=%lld reader_hold_ms=%d", zDesc, c->bReadFirst,
        c->nAutoCheckpoint, c->iJournalSizeLimit, c->iReaderHoldMs);
    sqlite3_free(zDesc);
    zDesc = zMore;
  }
  return zDesc;
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

/* Is this xConnect the eponymous table's?  xCreate is 0, so SQLite
** refuses CREATE VIRTUAL TABLE ... USING bench_insert; but a database file
** can carry such a row in its sqlite_schema (written with writable_schema),
** and SQLite connects it with xConnect, on every version, whatever
** trusted_schema or DEFENSIVE say.  The eponymous table is connected in main
** under the module's own name with no arguments, and only when main's
** schema has no table of that name (a schema's table comes first). */
static int benchIsEponymous(sqlite3 *db, int argc, const char *const *argv){
  if( argc!=3 || sqlite3_stricmp(argv[1], "main")!=0
   || sqlite3_stricmp(argv[2], "bench_insert")!=0 ){
    return 0;
  }
  return sqlite3_table_column_metadata(db, "main", argv[2], 0, 0, 0, 0, 0,
                                       0)!=SQLITE_OK;
}

static int benchConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  bench_vtab *pNew;
  int rc;
  (void)pAux;
  if( !benchIsEponymous(db, argc, argv) ){
    *pzErr = sqlite3_mprintf("bench_insert: table %s.%s is refused:"
        " bench_insert is a table-valued function only, which no schema can"
        " name (CREATE VIRTUAL TABLE ... USING bench_insert)",
        argc>1 ? argv[1] : "?", argc>2 ? argv[2] : "?");
    return SQLITE_ERROR;
  }
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
    case BENCH_PARAM_ENUM: {
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
    case BENCH_PARAM_INT:
      if( p==BENCH_P_PAGE_SIZE ){
        zAllowed = sqlite3_mprintf("a power of two in 512..65536, or NULL"
                                   " for the library default");
      }else if( p==BENCH_P_MUTEX || p==BENCH_P_READ_FIRST ){
        zAllowed = sqlite3_mprintf("0 or 1");
      }else{
        zAllowed = sqlite3_mprintf("an integer in %lld..%lld%s", pP->iMin,
                pP->iMax, pP->bNull ? ", or NULL for the library default" : "");
      }
      break;
    case BENCH_PARAM_REAL:
      zAllowed = sqlite3_mprintf("a number greater than 0 and at most %lld",
                                 pP->iMax);
      break;
    case BENCH_PARAM_TEXT:
      zAllowed = sqlite3_mprintf(p==BENCH_P_SCHEMA
          ? "SQL text, or NULL for the posts table"
          : "an INSERT, UPDATE, DELETE, REPLACE or SELECT as text, or NULL"
            " for the built-in insert");
      break;
    case BENCH_PARAM_FILE:
      zAllowed = sqlite3_mprintf("an existing SQLite database, or NULL for"
                                 " none");
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


/* Keep path z as given and zReal, its realpath (malloc()ed, freed here),
** in *pOut.  SQLITE_OK or SQLITE_NOMEM. */
static int benchKeepPath(bench_value *pOut, const char *z, char *zReal){
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
  int nLimit;
  const char *zWhose = "SQLite's";
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
  ** VFS's mxPathname (sqlite3PagerOpen); the registry of live files holds
  ** paths of BENCH_PATH_MAX bytes (the unix VFS's limit is lower) */
  nLimit = pVfs ? pVfs->mxPathname-8 : BENCH_PATH_MAX-1;
  if( nLimit>BENCH_PATH_MAX-1 ){
    nLimit = BENCH_PATH_MAX-1;
    zWhose = "bench_insert's";
  }
  if( (int)strlen(zReal)+BENCH_SCRATCH_NAME_LEN>nLimit ){
    sqlite3_snprintf(sizeof(zBuf), zBuf, "the path of a scratch database"
        " there would be %d bytes, more than %s limit of %d",
        (int)strlen(zReal)+BENCH_SCRATCH_NAME_LEN, zWhose, nLimit);
    acorn_vtab_error(pVtab, "bench_insert: dir must be an existing writable"
                     " directory (got %Q: %s)", z, zBuf);
    free(zReal);
    return SQLITE_ERROR;
  }
  return benchKeepPath(pOut, z, zReal);
}

/* Does file zReal begin with the 16 bytes of an SQLite database's header?
** SQLite itself opens an empty file, or one that reads as empty to stat()
** (/proc/self/status), as an empty database.  NULL if it does, else why
** not (sqlite3_malloc'd). */
static char *benchCheckHeader(const char *zReal){
  static const char zMagic[16] = "SQLite format 3";   /* and its NUL */
  char a[16];
  ssize_t n = 0, k;
  int fd = open(zReal, O_RDONLY|O_CLOEXEC);
  if( fd<0 ) return sqlite3_mprintf("%s", strerror(errno));
  while( n<16 && (k = read(fd, a+n, (size_t)(16-n)))>0 ) n += k;
  close(fd);
  if( n<16 || memcmp(a, zMagic, 16)!=0 ){
    return sqlite3_mprintf("not an SQLite database: it does not begin with"
                           " \"SQLite format 3\"");
  }
  return 0;
}

/* Check template z (given, not NULL) and fill *pOut with it and its
** realpath: an existing regular file that SQLite opens read-only as a
** database.  SQLITE_OK or an error set. */
static int benchParseTemplate(sqlite3_vtab *pVtab, sqlite3_value *v,
                              bench_value *pOut){
  const char *z = (const char*)sqlite3_value_text(v);
  struct stat st;
  char *zReal = 0, *zWhy = 0;
  int rc = SQLITE_OK;
  if( z==0 || z[0]==0 ){
    benchValueError(pVtab, BENCH_P_TEMPLATE, v, 0);
    return SQLITE_ERROR;
  }
  if( stat(z, &st)!=0 || access(z, R_OK)!=0 ){
    zWhy = sqlite3_mprintf("%s", strerror(errno));
  }else if( !S_ISREG(st.st_mode) ){
    zWhy = sqlite3_mprintf("not a regular file");
  }else if( (zReal = realpath(z, 0))==0 ){
    zWhy = sqlite3_mprintf("realpath: %s", strerror(errno));
  }else{
    rc = acorn_bench_template_check(zReal, &zWhy);
    if( rc==SQLITE_NOMEM && zWhy==0 ){
      free(zReal);
      return SQLITE_NOMEM;
    }
    if( rc==SQLITE_OK ) zWhy = benchCheckHeader(zReal);
  }
  if( zWhy ){
    benchValueError(pVtab, BENCH_P_TEMPLATE, v, zWhy);
    sqlite3_free(zWhy);
    free(zReal);
    return SQLITE_ERROR;
  }
  return benchKeepPath(pOut, z, zReal);
}

/* Does text value v of parameter p hold a NUL?  Everything after it would
** be dropped unseen (SQL, a path): an error is set. */
static int benchHasNul(sqlite3_vtab *pVtab, int p, sqlite3_value *v){
  const char *z = (const char*)sqlite3_value_text(v);
  int n = sqlite3_value_bytes(v);
  char zWhy[80];
  if( z==0 || (int)strlen(z)==n ) return 0;
  sqlite3_snprintf(sizeof(zWhy), zWhy, "a NUL character at byte %d, and"
                   " text after it", (int)strlen(z));
  benchValueError(pVtab, p, v, zWhy);
  return 1;
}

/* Check value v of parameter p; fill *pOut.  SQLITE_OK or an error set. */
static int benchParseValue(sqlite3_vtab *pVtab, int p, sqlite3_value *v,
                           bench_value *pOut){
  const bench_param *pP = &aParam[p];
  int eType = sqlite3_value_type(v);
  memset(pOut, 0, sizeof(*pOut));
  switch( pP->eType ){
    case BENCH_PARAM_ENUM: {
      int k;
      if( eType==SQLITE_TEXT ){
        const char *z = (const char*)sqlite3_value_text(v);
        for(k=0; z && pP->azEnum[k]; k++){
          if( sqlite3_stricmp(z, pP->azEnum[k])==0 ){
            pOut->i = k;
            return SQLITE_OK;
          }
        }
      }
      break;
    }
    case BENCH_PARAM_INT: {
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
    case BENCH_PARAM_REAL: {
      double r;
      if( eType!=SQLITE_INTEGER && eType!=SQLITE_FLOAT ) break;
      r = sqlite3_value_double(v);
      if( !(r>0.0 && r<=(double)pP->iMax) ) break;
      pOut->r = r;
      return SQLITE_OK;
    }
    case BENCH_PARAM_TEXT:
      if( eType==SQLITE_NULL ){
        pOut->bNull = 1;
        return SQLITE_OK;
      }
      if( eType!=SQLITE_TEXT ) break;
      if( benchHasNul(pVtab, p, v) ) return SQLITE_ERROR;
      pOut->z = sqlite3_mprintf("%s", (const char*)sqlite3_value_text(v));
      return pOut->z ? SQLITE_OK : SQLITE_NOMEM;
    case BENCH_PARAM_FILE:
      if( eType==SQLITE_NULL ){
        pOut->bNull = 1;
        return SQLITE_OK;
      }
      if( eType!=SQLITE_TEXT ) break;
      if( benchHasNul(pVtab, p, v) ) return SQLITE_ERROR;
      return benchParseTemplate(pVtab, v, pOut);
    default: {   /* BENCH_PARAM_DIR */
      const char *z;
      if( eType!=SQLITE_TEXT ) break;
      if( benchHasNul(pVtab, p, v) ) return SQLITE_ERROR;
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
    case BENCH_PARAM_REAL: return a->r<b->r ? -1 : a->r>b->r;
    case BENCH_PARAM_DIR:
    case BENCH_PARAM_TEXT:
    case BENCH_PARAM_FILE: return strcmp(a->z, b->z);
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
  if( aParam[p].eType==BENCH_PARAM_DIR ){
    const char *z = getenv("TMPDIR");
    int rc = benchParseDir(pCur->base.pVtab, z && z[0] ? z : "/tmp", &v);
    if( rc!=SQLITE_OK ) return rc;
  }else if( aParam[p].eType==BENCH_PARAM_REAL ){
    v.r = (double)aParam[p].iDefault;
  }else if( aParam[p].bNull ){
    v.bNull = 1;
  }else{
    v.i = aParam[p].iDefault;
  }
  return benchAddValue(pCur, p, &v);
}

/* Does some value of parameter p set it (is not NULL)?  Values are
** ordered with NULL first. */
static int benchAnySet(bench_cursor *pCur, int p){
  return !pCur->aVal[p][pCur->nVal[p]-1].bNull;
}

/* Is some value of parameter p NULL? */
static int benchAnyNull(bench_cursor *pCur, int p){
  return pCur->aVal[p][0].bNull;
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
  c->zSchema = v[BENCH_P_SCHEMA]->bNull ? 0 : v[BENCH_P_SCHEMA]->z;
  c->zStatement = v[BENCH_P_STATEMENT]->bNull ? 0 : v[BENCH_P_STATEMENT]->z;
  c->zTemplate = v[BENCH_P_TEMPLATE]->bNull ? 0 : v[BENCH_P_TEMPLATE]->z;
  c->zTemplateReal = v[BENCH_P_TEMPLATE]->zReal;
  c->bReadFirst = (int)v[BENCH_P_READ_FIRST]->i;
  c->nAutoCheckpoint = (int)v[BENCH_P_WAL_AUTOCKPT]->i;
  c->iJournalSizeLimit = v[BENCH_P_JOURNAL_SIZE]->i;
  c->iReaderHoldMs = (int)v[BENCH_P_READER_HOLD]->i;
}

/* Run the current combination; an error goes to the vtab. */
static int benchRunCurrent(bench_cursor *pCur){
  bench_config c;
  char *zErr = 0;
  int rc;
  benchCurrentConfig(pCur, &c);
  rc = acorn_bench_run(&c, ((bench_vtab*)pCur->base.pVtab)->db, &pCur->res,
                       &zErr);
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

/* The values of an IN list (argument pList) for parameter p; nCombo is
** the number of combinations of the parameters before p. */
static int benchReadIn(bench_cursor *pCur, int p, sqlite3_value *pList,
                       sqlite3_int64 nCombo){
  sqlite3_vtab *pVtab = pCur->base.pVtab;
  sqlite3_value *pVal = 0;
  int rc = SQLITE_OK, rc2;
  for(rc2=sqlite3_vtab_in_first(pList, &pVal);
      rc2==SQLITE_OK && pVal && rc==SQLITE_OK;
      rc2=sqlite3_vtab_in_next(pList, &pVal)){
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
  return rc;
}

/* Every parameter's values, as idxStr (see HOW IT WORKS) says argv holds
** them: a value, an IN list, IS NULL or the default. */
static int benchReadParams(bench_cursor *pCur, const char *idxStr, int argc,
                           sqlite3_value **argv){
  sqlite3_vtab *pVtab = pCur->base.pVtab;
  sqlite3_int64 nCombo = 1;
  int p, iArg = 0, rc = SQLITE_OK;
  for(p=0; p<BENCH_NPARAM && rc==SQLITE_OK; p++){
    char cKind = idxStr && (int)strlen(idxStr)>p ? idxStr[p] : '-';
    bench_value v;
    if( cKind=='n' ){
      memset(&v, 0, sizeof(v));
      v.bNull = 1;
      rc = benchAddValue(pCur, p, &v);
    }else if( cKind=='-' || iArg>=argc ){
      rc = benchDefaultValue(pCur, p);
    }else if( cKind=='i' ){
      rc = benchReadIn(pCur, p, argv[iArg++], nCombo);
    }else{
      rc = benchParseValue(pVtab, p, argv[iArg++], &v);
      if( rc==SQLITE_OK ) rc = benchAddValue(pCur, p, &v);
    }
    nCombo *= pCur->nVal[p] ? pCur->nVal[p] : 1;  /* of parameters 0..p */
  }
  return rc;
}

/* The number of combinations (0: an empty IN list, no rows), or -1 with
** an error set: more than BENCH_MAX_COMBOS. */
static sqlite3_int64 benchCountCombos(bench_cursor *pCur){
  sqlite3_int64 nCombo = 1;
  int p;
  for(p=0; p<BENCH_NPARAM; p++){
    nCombo *= pCur->nVal[p];
    if( nCombo==0 ) return 0;
    if( nCombo>BENCH_MAX_COMBOS ){
      acorn_vtab_error(pCur->base.pVtab, "bench_insert: more than %d"
                       " combinations of parameters", BENCH_MAX_COMBOS);
      return -1;
    }
  }
  return nCombo;
}

/* The largest value of integer or enumerated parameter p. */
static sqlite3_int64 benchMaxValue(bench_cursor *pCur, int p){
  return pCur->aVal[p][pCur->nVal[p]-1].i;
}

/* Checks across parameters, before the first run: why the values cannot
** be combined, or NULL. */
static const char *benchCrossCheck(bench_cursor *pCur){
  sqlite3_int64 maxThreads = benchMaxValue(pCur, BENCH_P_THREADS);
  sqlite3_int64 maxReaders = benchMaxValue(pCur, BENCH_P_READERS);
  if( (maxThreads>1 || maxReaders>0) && sqlite3_threadsafe()==0 ){
    return "threads > 1 and readers > 0 need a thread-safe SQLite; this one"
           " is built with SQLITE_THREADSAFE=0";
  }
  if( benchMaxValue(pCur, BENCH_P_LOCKING)==BENCH_LOCKING_EXCLUSIVE
   && (maxThreads>1 || maxReaders>0) ){
    return "locking=exclusive lets one connection in: it needs threads=1"
           " and readers=0";
  }
  if( benchAnySet(pCur, BENCH_P_TEMPLATE)
   && benchAnyNull(pCur, BENCH_P_STATEMENT) ){
    return "template needs statement: with a template no posts table is"
           " made for the built-in insert";
  }
  if( maxReaders>0 && (benchAnySet(pCur, BENCH_P_SCHEMA)
                       || benchAnySet(pCur, BENCH_P_TEMPLATE)) ){
    return "readers read the posts table by id: readers > 0 needs schema"
           " and template NULL";
  }
  if( benchMaxValue(pCur, BENCH_P_READ_FIRST)
   && (benchAnySet(pCur, BENCH_P_SCHEMA)
       || benchAnySet(pCur, BENCH_P_TEMPLATE)) ){
    return "read_first reads the posts table by id: read_first=1 needs"
           " schema and template NULL";
  }
  if( benchMaxValue(pCur, BENCH_P_PREPARE)==BENCH_PREPARE_EXEC
   && benchAnySet(pCur, BENCH_P_STATEMENT) ){
    return "prepare=exec sends the built-in insert as SQL text with its"
           " values: with statement use once or each";
  }
  if( benchAnySet(pCur, BENCH_P_PAGE_SIZE)
   && benchAnySet(pCur, BENCH_P_TEMPLATE) ){
    return "page_size cannot be combined with template: the copy keeps the"
           " template's page size";
  }
  return 0;
}

/* fsync_us of each dir, only where a run will write files: storage=memory
** writes nothing in dir (storage values are ordered: file first). */
static int benchMeasureFsync(bench_cursor *pCur){
  int k, rc;
  if( pCur->aVal[BENCH_P_STORAGE][0].i!=BENCH_STORAGE_FILE ) return SQLITE_OK;
  for(k=0; k<pCur->nVal[BENCH_P_DIR]; k++){
    char *zErr = 0;
    bench_value *pDir = &pCur->aVal[BENCH_P_DIR][k];
    rc = acorn_bench_fsync_us(pDir->zReal, &pDir->rFsyncUs, &zErr);
    if( rc!=SQLITE_OK ){
      /* no message when even the path could not be allocated */
      acorn_vtab_error(pCur->base.pVtab, "bench_insert: %s",
                       zErr ? zErr : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      return rc==SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_ERROR;
    }
  }
  return SQLITE_OK;
}

/* Read and check every value of every parameter, then run the first
** combination. */
static int benchFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  bench_cursor *pCur = (bench_cursor*)cur;
  sqlite3_vtab *pVtab = cur->pVtab;
  sqlite3_int64 nCombo = 0;
  const char *zWhy;
  int rc;
  (void)idxNum;
  benchCursorReset(pCur);
  pCur->iRowid = 0;
  if( acorn_bench_in_run() ){
    /* a schema or statement naming bench_insert, on a scratch connection
    ** that has acorn (acorn-auto.so, sqlite3_auto_extension) */
    acorn_vtab_error(pVtab, "bench_insert: schema and statement cannot run"
        " bench_insert: a run does not start inside another run");
    return SQLITE_ERROR;
  }
  rc = benchReadParams(pCur, idxStr, argc, argv);
  if( rc==SQLITE_OK && (nCombo = benchCountCombos(pCur))<0 ){
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && nCombo>0 && (zWhy = benchCrossCheck(pCur))!=0 ){
    acorn_vtab_error(pVtab, "bench_insert: %s", zWhy);
    rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK && nCombo>0 ) rc = benchMeasureFsync(pCur);
  if( rc!=SQLITE_OK || nCombo==0 ){     /* an error, or no rows */
    benchCursorReset(pCur);
    return rc;
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

/* The value of parameter p in the current combination. */
static const bench_value *benchCurrent(const bench_cursor *pCur, int p){
  return &pCur->aVal[p][pCur->aIdx[p]];
}

/* Parameter p's column: its value in the current combination. */
static void benchParamColumn(const bench_cursor *pCur, sqlite3_context *ctx,
                             int p){
  const bench_value *v = benchCurrent(pCur, p);
  switch( aParam[p].eType ){
    case BENCH_PARAM_ENUM:
      sqlite3_result_text(ctx, aParam[p].azEnum[v->i], -1, SQLITE_STATIC);
      break;
    case BENCH_PARAM_REAL:
      sqlite3_result_double(ctx, v->r);
      break;
    case BENCH_PARAM_DIR:
    case BENCH_PARAM_TEXT:
    case BENCH_PARAM_FILE:
      if( !v->bNull ) sqlite3_result_text(ctx, v->z, -1, SQLITE_TRANSIENT);
      break;
    default:
      if( !v->bNull ) sqlite3_result_int64(ctx, v->i);
      break;
  }
}

static int benchColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  bench_cursor *pCur = (bench_cursor*)cur;
  const bench_result *r = &pCur->res;
  if( i>=BENCH_NRESULT ){
    benchParamColumn(pCur, ctx, i - BENCH_NRESULT);
    return SQLITE_OK;
  }
  switch( i ){
    case BENCH_COL_ROWS_WRITTEN:
      sqlite3_result_int64(ctx, r->nRowsWritten); break;
    case BENCH_COL_ELAPSED:
      benchResultRound(ctx, r->rElapsed, 1e6); break;
    /* A run that wrote no row (seconds over before the first) has no
    ** rate and no latency: NULL, not a 0 that reads as "infinitely slow". */
    case BENCH_COL_WRITES_PER_SEC:
      if( r->nWrites>0 && r->rElapsed>0 ){
        sqlite3_result_int64(ctx, (sqlite3_int64)(r->nWrites/r->rElapsed+0.5));
      }
      break;
    case BENCH_COL_NS_PER_WRITE:
      if( r->nWrites>0 ){
        sqlite3_result_int64(ctx,
                             (sqlite3_int64)(r->rElapsed*1e9/r->nWrites+0.5));
      }
      break;
    case BENCH_COL_P50_US:
      if( r->bLatency ) benchResultRound(ctx, r->rP50, 10.0);
      break;
    case BENCH_COL_P99_US:
      if( r->bLatency ) benchResultRound(ctx, r->rP99, 10.0);
      break;
    case BENCH_COL_MAX_US:
      if( r->bLatency ) benchResultRound(ctx, r->rMax, 10.0);
      break;
    case BENCH_COL_READS_PER_SEC:
      if( r->nWrites>0 && r->rElapsed>0 ){
        sqlite3_result_int64(ctx, (sqlite3_int64)(r->nReads/r->rElapsed+0.5));
      }
      break;
    case BENCH_COL_BUSY: sqlite3_result_int64(ctx, r->nBusy); break;
    case BENCH_COL_DB_BYTES: sqlite3_result_int64(ctx, r->nDbBytes); break;
    case BENCH_COL_BUSY_ERRORS: sqlite3_result_int64(ctx, r->nBusyErrors); break;
    /* the WAL columns: NULL without a -wal file (journal other than wal,
    ** storage=memory) */
    case BENCH_COL_WAL_BYTES_MAX:
      if( r->bWal ) sqlite3_result_int64(ctx, r->nWalMax);
      break;
    case BENCH_COL_WAL_BYTES_END:
      if( r->bWal ) sqlite3_result_int64(ctx, r->nWalEnd);
      break;
    case BENCH_COL_CHECKPOINTS:
      if( r->bWal ) sqlite3_result_int64(ctx, r->nCheckpoints);
      break;
    case BENCH_COL_CKPT_BLOCKED:
      if( r->bWal ) sqlite3_result_int64(ctx, r->nCheckpointsBlocked);
      break;
    /* the content's bytes: NULL for a statement that binds no ?3, which
    ** hands no content to its rows */
    case BENCH_COL_CONTENT_MB:
      if( r->nWrites>0 && r->rElapsed>0 && r->bContent ){
        double nByte = (double)r->nWrites
                     * (double)benchCurrent(pCur, BENCH_P_CONTENT)->i;
        benchResultRound(ctx, nByte/r->rElapsed/1e6, 1000.0);
      }
      break;
    case BENCH_COL_SQLITE_VERSION:
      sqlite3_result_text(ctx, sqlite3_libversion(), -1, SQLITE_STATIC);
      break;
    default:    /* BENCH_COL_FSYNC_US; NULL for storage=memory */
      if( benchCurrent(pCur, BENCH_P_STORAGE)->i==BENCH_STORAGE_FILE ){
        benchResultRound(ctx, benchCurrent(pCur, BENCH_P_DIR)->rFsyncUs, 10.0);
      }
      break;
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
  /* iVersion    */ 0,
  /* xCreate     */ 0,               /* eponymous only */
  /* xConnect    */ benchConnect,
  /* xBestIndex  */ benchBestIndex,
  /* xDisconnect */ benchDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ benchOpen,
  /* xClose      */ benchClose,
  /* xFilter     */ benchFilter,
  /* xNext       */ benchNext,
  /* xEof        */ benchEof,
  /* xColumn     */ benchColumn,
  /* xRowid      */ benchRowid,
  /* xUpdate     */ 0,
  /* xBegin      */ 0,
  /* xSync       */ 0,
  /* xCommit     */ 0,
  /* xRollback   */ 0,
  /* xFindMethod */ 0,
  /* xRename     */ 0,
  /* xSavepoint  */ 0,
  /* xRelease    */ 0,
  /* xRollbackTo */ 0,
  /* xShadowName */ 0,
#if SQLITE_VERSION_NUMBER>=3044000
  /* xIntegrity  */ 0,   /* declared by the headers from 3.44 on */
#endif
};

int acorn_bench_insert_register(sqlite3 *db){
  return sqlite3_create_module(db, "bench_insert", &benchModule, 0);
}
