/*
** cacheInt.h: the cache's internal header, shared by its files.  What a
** user sees (the table, its options, statements and functions, what they
** guarantee) is specified in docs/cache.md; this header holds the types,
** their invariants and the prototypes that cross files.
**
** THE FILES, in layers, lowest first: each calls only the ones above it in
** this list (tests/ext-shape checks that no function of a file is called
** from a file listed before it).
**
**   cache_uses.c   a connection's recency buffer: the pending uses and the
**                  transaction mirror (no SQL; tests/c/cache_uses.c tests it
**                  directly)
**   cache_value.c  the values a cache is given: numbers, sizes, durations,
**                  keys, names (no SQL)
**   cache_store.c  the stored table: statements, the config row, entries,
**                  recency records, eviction, expiry, tags and the feed
**   cache_format.c the formats of older versions' tables, and their
**                  conversion at the first write
**   cache_check.c  the integrity check of the stored table
**   cache_table.c  how a connection holds a table: the per-connection
**                  state, binding instances, the start of a write (the
**                  config row, the format), the names cache_get() looked
**                  up, flushing on its own, the -wal file's bound
**   cache_set.c    a set as the application gives it (INSERT or
**                  cache_set): its checks and its write
**   cache_func.c   cache_get(), cache_set(), cache_read(), cache_write(),
**                  cache_stats(), cache_wal_limit() and finding a cache
**                  table by name
**   cache_feed.c   the cache_evictions() table-valued function
**   cache_vtab.c   the virtual table: options, create/connect, the
**                  transaction methods, reads, writes, commands; and the
**                  registration of all of it
**
** THE OBJECTS
**
**   cache_conn    one per database connection that registered the module
**                 (shared by every registration on that connection): the
**                 connection's cache tables and vtab instances.  Every
**                 method runs under the connection's mutex, so nothing in it
**                 needs a lock of its own.
**   cache_table   one per (schema, uid) a connection has opened: what the
**                 connection holds of one stored table (statements, decoded
**                 chunks, the config row of its transaction, the recency
**                 buffer).  SQLite connects a table again after any schema
**                 change while the old instance may live on in the open
**                 transaction: both instances find the same cache_table, so
**                 every transaction method may run twice for one event and
**                 is written to be idempotent.
**   cache_vtab    one per vtab instance: a handle on its cache_table, bound
**                 once the table's uid is read (at connect, or at first use
**                 if the config row could not be read then).
**   cache_op      one write (or config read) in progress: the config row as
**                 the write sees it, the time, the first error.
*/
#ifndef ACORN_CACHEINT_H
#define ACORN_CACHEINT_H

#include "acorn.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef sqlite3_int64 i64;
typedef sqlite3_uint64 u64;

#define CACHE_COLUMN_KEY        0
#define CACHE_COLUMN_VALUE      1
#define CACHE_COLUMN_SIZE       2
#define CACHE_COLUMN_CREATED    3
#define CACHE_COLUMN_LAST_USED  4
#define CACHE_COLUMN_HITS       5
#define CACHE_COLUMN_EXPIRES    6
#define CACHE_COLUMN_TAG        7     /* hidden: TEXT or NULL */
#define CACHE_COLUMN_TTL        8     /* hidden, write-only: sets expires */
#define CACHE_COLUMN_COMMAND    9     /* always last: named after the table */

#define CACHE_POLICY_LRU   0
#define CACHE_POLICY_FIFO  1

#define CACHE_DEFAULT_CAPACITY  ((i64)1<<30)
#define CACHE_MAX_CAPACITY      ((i64)1<<62)
/* The bound of every counter of the config row: beyond what any number of
** sets and uses reaches, and far enough below the int64 limit that no sum
** or difference of counters and sizes overflows. */
#define CACHE_MAX_COUNTER       ((i64)1<<62)
#define CACHE_DEFAULT_BUFFER    100000
#define CACHE_MAX_BUFFER        1000000
/* The longest ttl, in seconds (about 31,700 years): now plus it, in ms,
** stays far inside an i64. */
#define CACHE_MAX_TTL           1000000000000.0
#define CACHE_MAX_FEED          1000000     /* removals the feed may keep */

#define CACHE_SIZE_HELP \
  "expected a positive number of bytes, optionally with a unit B, kB, MB," \
  " GB, KiB, MiB or GiB (e.g. 1048576, '64MiB' or '1.5GiB'; a fraction" \
  " needs a unit above B), at most 4611686018427387904 bytes"

/* A unit of an option's amount (acornCacheParseAmount): its name, lower
** case, and what one of it is worth (bytes, seconds). */
typedef struct cache_unit cache_unit;
struct cache_unit {
  const char *zUnit;
  i64 iMul;
};

/* The bytes an entry counts for, computed from its stored row: an INTEGER
** key 8, TEXT and BLOB their length in the database encoding, an INTEGER
** value the length of its decimal text in it (as acorn 0.2 computed, which
** reads and writes format 4 tables), a REAL value 8 (not its text, whose
** length differs between SQLite versions).  length() of
** a BLOB column reads only the record header, not overflow pages. */
#define CACHE_SIZE_SQL \
  "(CASE typeof(key) WHEN 'integer' THEN 8 ELSE length(CAST(key AS BLOB)) END" \
  " + CASE typeof(value) WHEN 'blob' THEN length(value)" \
  " WHEN 'real' THEN 8 ELSE length(CAST(value AS BLOB)) END)"

/* The same in a format 4 table, whose rows hold it (size, before value):
** computed only for a row without it (one an older acorn wrote: NULL). */
#define CACHE_SIZE4_SQL "coalesce(size, " CACHE_SIZE_SQL ")"

/* The newest format: what CREATE makes (cache_format.c lists them). */
#define CACHE_FORMAT_NEW 4

/* hits of a format 1 row, in the range a record holds (6 bytes), so that
** no sum with it overflows whatever the row says */
#define CACHE_LRU1_HITS "max(0, min(hits, 281474976710655))"

/* Statements on the shadow tables (texts in cache_store.c), prepared on
** first use and kept on the cache_table. */
enum {
  CACHE_STMT_CONFIG_READ,
  CACHE_STMT_CONFIG_READ1,
  CACHE_STMT_CONFIG_READ2,
  CACHE_STMT_CONFIG_WRITE,
  CACHE_STMT_FIND,
  CACHE_STMT_FIND_LIVE,
  CACHE_STMT_GET,
  CACHE_STMT_INSERT,
  CACHE_STMT_DELETE,
  CACHE_STMT_ROW,
  CACHE_STMT_HEAD,
  CACHE_STMT_ENTRY,
  CACHE_STMT_EXPIRES_SET,
  CACHE_STMT_EXPIRY_ADD,
  CACHE_STMT_EXPIRY_DEL,
  CACHE_STMT_EXPIRY_FIRST,
  CACHE_STMT_CHUNK_FIND,
  CACHE_STMT_CHUNK_NEXT,
  CACHE_STMT_CHUNK_OLDEST,
  CACHE_STMT_CHUNK_WRITE,
  CACHE_STMT_CHUNK_ADD,
  CACHE_STMT_CHUNK_DELETE,
  CACHE_STMT_CHUNK_SETMIN,
  CACHE_STMT_EXISTS,
  CACHE_STMT_LRU1_READ,
  CACHE_STMT_DATA_VERSION,
  CACHE_STMT_SCHEMA_VERSION,
  CACHE_STMT_TAG_ADD,
  CACHE_STMT_TAG_DEL,
  CACHE_STMT_TAG_GET,
  CACHE_STMT_FEED_ADD,
  CACHE_STMT_FEED_TRIM,
  CACHE_STMT_FIND_WRITE,
  CACHE_STMT_WRITE_LOCK,
  CACHE_STMT_WRITE_BEGIN,
  CACHE_STMT_WRITE_END,
  CACHE_STMT_WRITE_UNDO,
  CACHE_STMT_ROLLBACK,
  CACHE_STMT_FIND4,             /* FIND, HEAD, ENTRY and INSERT in a format */
  CACHE_STMT_HEAD4,             /* 4 table: its rows hold their size */
  CACHE_STMT_ENTRY4,
  CACHE_STMT_INSERT4,
  CACHE_NSTMT
};

/* SQL that makes <t>_rec and its index on minused.  The index is named
** after the table's uid, not its name: ALTER TABLE RENAME cannot rename an
** index, nor drop one while the ALTER runs.  Arguments: schema, name,
** schema, uid, name, schema, name. */
#define CACHE_REC_DDL \
  "CREATE TABLE \"%w\".\"%w_rec\"(lo INTEGER PRIMARY KEY, minused INTEGER," \
  " recs BLOB NOT NULL);" \
  "CREATE INDEX \"%w\".\"acorn_cache_%016llx_minused\"" \
  " ON \"%w_rec\"(minused);" \
  "INSERT INTO \"%w\".\"%w_rec\" VALUES(0, NULL, x'');"

/* SQL that makes the shadow tables format 3 adds: <t>_tag, one row per
** entry that has a tag, with its index on tag (named after the uid, as
** <t>_rec's), and <t>_feed, the removals the application did not ask for.
** Arguments: schema, name, schema, uid, name, schema, name. */
#define CACHE_V3_DDL \
  "CREATE TABLE \"%w\".\"%w_tag\"(id INTEGER PRIMARY KEY, tag TEXT NOT NULL);" \
  "CREATE INDEX \"%w\".\"acorn_cache_%016llx_tag\" ON \"%w_tag\"(tag);" \
  "CREATE TABLE \"%w\".\"%w_feed\"(seq INTEGER PRIMARY KEY, key NOT NULL," \
  " size INTEGER NOT NULL, reason INTEGER NOT NULL, at INTEGER NOT NULL);"

/* Why an entry goes: the application asked (a delete, a set of its key),
** or not (what the feed keeps). */
#define CACHE_GONE_ASKED     0
#define CACHE_GONE_CAPACITY  1
#define CACHE_GONE_ENTRIES   2
#define CACHE_GONE_EXPIRED   3

/* Read statements of the cursor, one slot per (point, columns read, tag
** read, tag = ?, a point lookup's numeric statement). */
#define CACHE_NREAD 128

/* Keys up to this many bytes are bound to a get's statement from a copy
** in a buffer of the caller's, with no allocation (acornCacheBindKeyIn). */
#define CACHE_KEY_BUF 64

/* ------------------------------------------------------------ the config */

typedef struct cache_config cache_config;
struct cache_config {
  i64 capacity, bytes, entries, seq, hits, misses, evictions, expired;
  i64 uid;              /* the table's identity, 0 in tables without one */
  i64 iHead;            /* every live entry with id < iHead has a record */
  i64 iLow;             /* records with used <= iLow are dead (evicted) */
  i64 nDead;            /* entries gone since the last sweep, records
                        ** perhaps left (an upper bound) */
  int ePolicy;          /* CACHE_POLICY_LRU or CACHE_POLICY_FIFO */
  /* format 3 (0 in older formats, until their first write converts them) */
  i64 nDefaultTtl;      /* default_ttl in seconds, 0 for none */
  i64 nMaxEntries;      /* max_entries, 0 for no bound */
  i64 nFeed;            /* feed: removals kept, 0 for off */
  i64 iFeedSeq;         /* seq of the latest removal written to the feed */
  i64 nTagged;          /* entries with a tag: rows of <t>_tag */
  i64 iExpLow;          /* no entry expires before it (below) */
};

/* iExpLow is a lower bound on the expiry of every entry: no row of
** <t>_expiry has expires < iExpLow.  LLONG_MAX: no entry expires (no row);
** LLONG_MIN: not known.  So while now < iExpLow no entry has expired, and a
** write does not look for expired ones.  Kept true by every path that
** writes expires: a set (INSERT, UPDATE, default_ttl, ttl: all through
** acornCacheSet) and a renewal in place (acornCacheRenew) lower it to the
** entry's expiry; deletes leave it (a bound
** it stays); the look for expired entries (acornCacheReclaimExpired), which
** reads the least expiry, raises it to that, or LLONG_MAX when none is
** left.  Stored in the config row (elow, NULL for LLONG_MAX) beside the seq
** it was written at (eseq): it is read as written only while eseq is the
** row's seq, so any write that did not keep it (acorn 0.2 writing a
** converted table: its sets take a new seq; a conversion: eseq is -1)
** leaves it not known, and the next look finds it again.  Rolled back with
** the row, as every counter is.  integrity_check checks it. */
#define CACHE_EXP_NONE     LLONG_MAX
#define CACHE_EXP_UNKNOWN  LLONG_MIN

/* Parameters of CACHE_STMT_CONFIG_WRITE. */
#define CACHE_CFG_NBIND 18

/* What a connection holds of the config row (cache_table.eCfg).  Inside a
** transaction the row is read once and written at xSync and as a
** savepoint begins; a write to the table reads and writes cfg instead (one
** b-tree update a transaction, not two a statement).  Because the row is
** written as every savepoint begins, ROLLBACK TO leaves in the b-tree the
** row as that savepoint began: the held copy is dropped and read again. */
#define CACHE_CFG_NONE   0      /* not held: read the row */
#define CACHE_CFG_CLEAN  1      /* held, equal to the row */
#define CACHE_CFG_DIRTY  2      /* held, newer than the row */

/* ------------------------------------------------ the recency buffer */

/* One buffered use: an entry's recency not yet written. */
typedef struct cache_use cache_use;
struct cache_use {
  i64 id;               /* <t>_data.id */
  i64 ms;               /* unix ms of the latest use */
  i64 nHit;             /* uses since the last flush, >= 1 */
  i64 iSeq;             /* the use counter at the latest use */
  i64 iUsed;            /* the recency given by the flush that wrote it */
  int iLevel;           /* savepoint level it was written at (aFlushed) */
  int iNext;            /* hash chain: index+1 in aUse, 0 ends */
};

/*
** The pending uses of one table on one connection: recorded by reads,
** which never write, and written by a flush.
** Invariants (acornCacheUsesCheck):
**   - aUse[0..nUse) hold distinct ids, each with nHit >= 1, each found
**     from aHash: aHash[h] is index+1 of the first use whose id hashes to
**     h, chained by iNext; nHash is 0 or a power of two >= 2*nUse;
**   - nHit is the sum of nHit over aUse; iSeq of every use <= iUseSeq;
**   - nMiss, nHitLoose >= 0.
*/
typedef struct cache_uses cache_uses;
struct cache_uses {
  cache_use *aUse;      /* one per id, in no order */
  int nUse, nAlloc;
  int *aHash;           /* id -> index+1 in aUse, chained by iNext */
  int nHash;            /* slots in aHash, a power of two, or 0 */
  i64 iUseSeq;          /* use counter: orders the uses */
  i64 nHit;             /* sum of nHit over aUse */
  i64 nMiss;            /* misses not yet written */
  i64 nHitLoose;        /* hits not yet written of uses whose entry a
                        ** rollback took away (counted, not recorded) */
};

/* Counts written by one flush inside a transaction: misses, and hits of
** uses whose entry a rollback took away. */
typedef struct cache_count cache_count;
struct cache_count { int iLevel; i64 nMiss; i64 nHit; };

/*
** The transaction mirror: what the uses written in the open transaction
** were, so that a rollback puts them back in the buffer (with their old
** use counters, older than any use since) and the database and the buffer
** always agree on what is written.
** Invariants (acornCacheTxnCheck):
**   - outside a transaction (bOpen 0) aFlushed and aCount are empty,
**     iLevel is -1, no aLevelSeq is set;
**   - inside, no aFlushed or aCount level is above iLevel, no aLevelSeq is
**     set above iLevel+1, and bDrop is 0;
**   - iDropSeq is LLONG_MAX unless bDrop.
** Rollbacks.  The seq of a table goes back with a rollback, so the ids of
** entries made in the part rolled back will be given again.  Their uses
** (buffered, or written there and put back) must not land on those new
** entries: the part rolled back began at seq aLevelSeq (the least set at
** its level or deeper), and every use of an id above it is dropped.
*/
typedef struct cache_txn cache_txn;
struct cache_txn {
  int bOpen;            /* between xBegin and xCommit/xRollback */
  int iLevel;           /* innermost open savepoint seen, -1 for none */
  cache_use *aFlushed;  /* written in the open transaction */
  int nFlushed, nFlushedAlloc;
  cache_count *aCount;  /* counts written in the open transaction */
  int nCount, nCountAlloc;
  i64 *aLevelSeq;       /* [iLevel+1]: seq at the first write at that level
                        ** of the open transaction, or -1 */
  int nLevelSeq;        /* slots in aLevelSeq */
  int bLevelLost;       /* a level could not be noted (out of memory): a
                        ** rollback drops every use it would put back */
  int bDrop;            /* a DROP TABLE inside a transaction ended what
                        ** this mirror held of it (no xRollback reaches a
                        ** dropped table), and a ROLLBACK TO may bring the
                        ** table back inside it: until the connection is
                        ** seen outside a transaction or the table joins
                        ** one, no config row is held, and no use of an
                        ** entry with an id above iDropSeq is kept */
  i64 iDropSeq;         /* entries above it may be that transaction's (as
                        ** acornCacheTxnRollback bounds them: LLONG_MAX none,
                        ** -1 every one) */
};

/* cache_uses.c */
void acornCacheUsesFree(cache_uses *u);
cache_use *acornCacheUsesFind(const cache_uses *u, i64 id);
int acornCacheUsesAdd(cache_uses *u, i64 id, i64 ms);
int acornCacheUsesUnwritten(const cache_uses *u);
int acornCacheUsesNumber(cache_uses *u, i64 iSeq);
void acornCacheUsesDropAbove(cache_uses *u, i64 iMaxId);
void acornCacheTxnInit(cache_txn *t);
void acornCacheTxnFree(cache_txn *t);
void acornCacheTxnWritten(cache_txn *t, cache_uses *u);
void acornCacheTxnNoteWrite(cache_txn *t, i64 seq);
i64 acornCacheTxnRollback(cache_txn *t, cache_uses *u, int iLevel);
void acornCacheTxnRelease(cache_txn *t, int iLevel);
void acornCacheTxnEnd(cache_txn *t);
#ifndef NDEBUG
void acornCacheUsesCheck(const cache_uses *u);
void acornCacheTxnCheck(const cache_txn *t);
#else
# define acornCacheUsesCheck(u)
# define acornCacheTxnCheck(t)
#endif

/* ------------------------------------------------------ recency records */

/* One recency record: an entry used since its set. */
typedef struct cache_rec cache_rec;
struct cache_rec {
  i64 id;               /* <t>_data.id */
  i64 used;             /* its recency: the seq of its latest written use */
  i64 ms;               /* last_used, unix ms */
  i64 hits;             /* reads since the set */
};

/* A chunk of records as decoded: the row of <t>_rec with key lo, covering
** ids in [lo, hi).  aRec is sorted by id.  A table keeps the last
** CACHE_NCHUNK read or written (eviction looks at two at a time, in
** chunks all over the table). */
#define CACHE_NCHUNK 32
typedef struct cache_chunk cache_chunk;
struct cache_chunk {
  i64 lo, hi;
  int bValid;           /* holds the chunk as stored when it was read */
  u64 iGen;             /* cache_table.iGen then: at another, not used */
  cache_rec *aRec;
  int nRec, nAlloc;
};

/* ------------------------------------------------------------ the objects */

typedef struct cache_conn cache_conn;
typedef struct cache_table cache_table;
typedef struct cache_vtab cache_vtab;

/* The options of an instance that are not stored (recency_buffer and
** autoflush): each connection may give its own; the table takes those of
** the instance that binds it last. */
typedef struct cache_opts cache_opts;
struct cache_opts {
  int nBufferMax;       /* recency_buffer: 1..CACHE_MAX_BUFFER */
  int bAutoflush;       /* autoflush: may write recency on its own */
};

/* What the file says a table is, as it is opened: its identity, format
** and policy (none changes while the uid is the same but the format, by
** a conversion). */
typedef struct cache_ident cache_ident;
struct cache_ident {
  i64 uid;              /* <t>_config.uid */
  int iFormat;          /* 1..CACHE_FORMAT_NEW */
  int ePolicy;          /* CACHE_POLICY_* */
};

/* A table's prepared statements (cache_store.c).  Every statement is
** prepared at its first use and finalized together (acornCacheFinalizeAll:
** the schema changed), which bumps iGen and forgets what CONFIG_WRITE has
** bound.  aRead are the cursors' statements (cache_vtab.c), each either
** idle (aReadBusy 0: finalized with the rest) or a cursor's.
** Invariants: bCfgBound only while aStmt[CACHE_STMT_CONFIG_WRITE] is set;
** aReadBusy[i] only while aRead[i] is set. */
typedef struct cache_stmts cache_stmts;
struct cache_stmts {
  sqlite3_stmt *aStmt[CACHE_NSTMT];
  u64 iGen;             /* bumped each time aStmt is finalized */
  int bCfgBound;        /* CONFIG_WRITE has aCfgBound bound */
  i64 aCfgBound[CACHE_CFG_NBIND];
  char aGetKey[CACHE_KEY_BUF];  /* the key GET is bound to (cache_get) */
  sqlite3_stmt *aRead[CACHE_NREAD];
  unsigned char aReadBusy[CACHE_NREAD];
};

/* What a connection holds of a stored table between its statements: the
** config row as the transaction has it, the savepoint levels' view of it,
** and the recency chunks last read or written (cache_store.c).
** Invariants: eCfg is CACHE_CFG_NONE, CLEAN or DIRTY; 0 <= nCfgSaved <=
** nCfgSavedAlloc; 0 <= iChunkNext < CACHE_NCHUNK. */
typedef struct cache_held cache_held;
struct cache_held {
  int eCfg;             /* CACHE_CFG_*: is cfg the config row now? */
  cache_config cfg;     /* the config row as the transaction has it */
  unsigned char *aCfgSaved;  /* [k] for open savepoint levels k <
                        ** nCfgSaved: did the b-tree hold the config row as
                        ** it was when level k began?  (cacheSavepoint) */
  int nCfgSaved, nCfgSavedAlloc;
  int bCfgWriting;      /* the config row is being written: a savepoint
                        ** that statement opens does not write it again */
  cache_chunk aChunk[CACHE_NCHUNK];  /* chunks last read or written */
  int iChunkNext;       /* the slot the next chunk read goes to */
  u64 iGen;             /* bumped when what is held may be out of date
                        ** (64 bits: a chunk's never comes round again) */
};

/* What the connection last saw of the file, to tell whether what it holds
** is still good and whether the schema may have changed (cache_store.c,
** cacheNoteVersions; cache_table.c, cacheSchemaCurrent). */
typedef struct cache_seen cache_seen;
struct cache_seen {
  unsigned iVersion;    /* the file's data version when what is held was
                        ** last known good, between transactions */
  i64 iDataVersion;     /* PRAGMA data_version and schema_version as last */
  i64 iSchemaVersion;   /* seen inside a statement: see cacheSchemaCurrent */
  i64 iNotedVersion;    /* the file's data version then, -1 for never */
  i64 iForeignOk;       /* iSchemaVersion when no foreign trigger or index
                        ** was on the shadow tables, -1 for never */
};

/*
** One stored table as one connection holds it.
** Invariants (acornCacheTableCheck): uses, txn, st and held keep theirs;
** held.eCfg is not CACHE_CFG_DIRTY outside a transaction, and
** CACHE_CFG_NONE under a DROP's mark (txn.bDrop); nRef >= 0; iFormat
** 1..3; ePolicy a CACHE_POLICY_*; opts in range.  (uid is the file's: any
** value, 0 in tables older than uids.)
** What is held (chunks, cfg) stays good inside a transaction until a
** rollback, and from one transaction to the next while the file's data
** version is seen.iVersion (another connection's commit changes it; this
** connection's commits are noted at xCommit): held.iGen counts the times
** it went out of date, and a chunk read at another iGen is not used.
*/
struct cache_table {
  cache_conn *pConn;
  cache_table *pNext;   /* pConn's list */
  int nRef;             /* instances bound to it, and callers using it */
  sqlite3 *db;
  char *zDb;            /* schema name: "main", "temp", ... */
  char *zName;          /* the table's name now (xRename changes it) */
  i64 uid;              /* <t>_config.uid */
  int bGone;            /* another table has the name now: never written */
  int iFormat;          /* 4 (its rows hold their size); 3 for a table
                        ** made before that; 2 for a table made by acorn
                        ** 0.2, 1 by 0.1 (converted to 3 at their first
                        ** write) */
  int bFormatNew;       /* converted by this connection's open transaction */
  int bFormatStale;     /* a rollback may have undone that conversion: probe
                        ** the format at the next config read */
  int ePolicy;          /* from the config row */
  int bUtf16;           /* the database's text encoding is UTF-16 */
  int nChunkMax;        /* split a chunk's blob above this many bytes */
  cache_opts opts;      /* recency_buffer and autoflush */
  int nNextFlush;       /* try a flush when the uses reach this */
  int bSetBroken;       /* a cache_set() failed halfway in the open
                        ** transaction and its rollback could not run
                        ** (SQLite before 3.40, out of memory): no write and
                        ** no commit (xSync refuses) until it ends */
  int bSetLookFirst;    /* the last set replaced an entry: the next looks
                        ** its key up before it inserts (cacheSetRow) */
  cache_stmts st;       /* its statements */
  cache_held held;      /* the config row and chunks as held */
  cache_seen seen;      /* the file's versions as last seen */
  cache_uses uses;      /* the recency buffer */
  cache_txn txn;        /* the transaction mirror */
};

struct cache_vtab {
  sqlite3_vtab base;
  cache_conn *pConn;
  cache_vtab *pNext;    /* pConn's list of instances */
  cache_table *pTab;    /* its table, 0 until the uid is read */
  char *zDb;            /* schema and name as connected */
  char *zName;
  cache_opts opts;      /* its options, for the table when bound */
  void *pSpare;         /* a closed cursor's memory, for the next (cache_vtab.c) */
};

/* A table name as cache_get() or cache_write() was given it, and the table
** it named: used again, without looking the name up, while nothing could
** have changed what it names (cache_func.c, cacheNameKnown).  iStmtGen and
** a statement's REPREPARE count say that the function's statement is the
** one that was stepped then, not prepared again since: its schema did not
** change.  Each function has its statement (eKind): cache_get its GET,
** cache_write its WRITE_LOCK, cache_read its FIND_LIVE. */
#define CACHE_NNAME 4
#define CACHE_NAME_GET    0     /* kinds: the statement is CACHE_STMT_GET */
#define CACHE_NAME_WRITE  1     /*        CACHE_STMT_WRITE_LOCK */
#define CACHE_NAME_READ   2     /*        CACHE_STMT_FIND_LIVE */
#define CACHE_NAME_NKIND  3
typedef struct cache_name cache_name;
struct cache_name {
  char *zName;          /* as given; 0 for an empty slot */
  cache_table *pTab;    /* the table it names (no reference: a table
                        ** clears the slots naming it as it goes) */
  u64 iStmtGen;         /* pTab->iStmtGen then */
  int anReprepare[CACHE_NAME_NKIND];  /* SQLITE_STMTSTATUS_REPREPARE of
                        ** each kind's statement then; -1: not noted */
  int eWhere;           /* CACHE_NAME_*: what could name another table */
};
#define CACHE_NAME_TEMP  1      /* a bare name found in temp: nothing */
#define CACHE_NAME_MAIN  2      /* a bare name found in main: a table in
                                ** temp (once temp has one, it is open) */
#define CACHE_NAME_ALONE 3      /* 'main.name': that, and a table of that
                                ** name with the dot in an attached database
                                ** (none is attached) */

/* The -wal file's bound (cache_table.c, "THE -WAL FILE"): what a
** connection that writes cache tables keeps of it.
** Invariants: nLimit 0..CACHE_MAX_CAPACITY; iRetry >= 0; nPage 0 or the
** page size of schema zPageDb. */
#define CACHE_DEFAULT_WAL_LIMIT  ((i64)64<<20)
typedef struct cache_wal cache_wal;
struct cache_wal {
  i64 nLimit;           /* bytes the -wal file is kept under; 0: none */
  int bLooked;          /* the hook in place was looked at since nLimit
                        ** was set (acornCacheWalHook) */
  i64 iRetry;           /* frames: after a checkpoint that readers kept
                        ** from finishing, the next is tried at this log
                        ** length */
  int nPage;            /* page size of zPageDb, 0 if not known */
  char zPageDb[32];     /* the schema nPage is of */
};

struct cache_conn {
  sqlite3 *db;
  int nRef;             /* registrations on db that use it, and
                        ** instances of its tables */
  cache_conn *pNext;    /* the process-wide list (registration, and the
                        ** -wal hook finding its connection's bound) */
  cache_table *pTabList;
  cache_vtab *pVtabList;
  cache_name aName[CACHE_NNAME];  /* names cache_get() looked up */
  int iNameNext;        /* the slot the next name goes to */
  cache_wal wal;        /* the -wal file's bound */
};

/* An entry as a write hands it to the store (acornCacheSet), checked. */
typedef struct cache_new cache_new;
struct cache_new {
  sqlite3_value *pKey;    /* TEXT, BLOB, INTEGER or a whole REAL */
  sqlite3_value *pValue;  /* TEXT, BLOB, INTEGER or REAL */
  sqlite3_value *pTag;    /* TEXT; 0 or NULL for none */
  i64 iExpires;           /* unix ms; CACHE_EXP_NONE: never (NULL) */
  i64 nSize;              /* bytes of key and value (acornCacheValueBytes) */
  i64 iCreated;           /* unix ms */
  i64 nHits;              /* hits it keeps (an UPDATE), else 0 */
};

/* What a renewal changes of an entry in place (acornCacheRenew). */
typedef struct cache_renewal cache_renewal;
struct cache_renewal {
  int bSetExpires;        /* expires changes, to iExpires */
  i64 iExpires;           /* unix ms; CACHE_EXP_NONE: never (NULL) */
  int bSetTag;            /* the tag changes, to pTag */
  sqlite3_value *pTag;    /* TEXT; 0 or NULL for none */
};

/* One write to the stored table, or a read of its config row. */
typedef struct cache_op cache_op;
struct cache_op {
  cache_table *pTab;
  cache_vtab *pVtab;    /* the instance it runs for, or 0 (functions) */
  cache_config cfg;
  i64 now;              /* unix ms */
  const char *zWho;     /* prefix of messages: "cache" unless set */
  char *zErr;           /* first error message, or 0 */
  int rcErr;            /* its result code (SQLITE_ERROR unless one says
                        ** more: SQLITE_CORRUPT_VTAB, ...) */
  int bChanged;         /* the config row names another table (uid) */
};

/* cache_value.c: values */
i64 acornCacheNowMs(void);
int acornCacheWholeNumber(sqlite3_value *v, i64 *pOut);
int acornCacheParseCount(const char *z, i64 iMax, i64 *pOut);
int acornCacheTextArg(sqlite3_value *v, const char **pz);
int acornCacheParseSize(const char *z, i64 *pOut);
int acornCacheParseDuration(const char *z, i64 *pOut);
int acornCacheParseAmount(const char *z, const cache_unit *aUnit, int nUnit,
                          i64 iMax, i64 *pOut);
i64 acornCacheBytes(int bUtf16, sqlite3_value *pVal);
i64 acornCacheValueBytes(int bUtf16, sqlite3_value *pVal);
const char *acornCacheTypeName(int eType);
int acornCacheCheckKey(const char *zWho, sqlite3_value *pKey, char **pzErr);
void acornCacheBindKey(sqlite3_stmt *pStmt, int i, sqlite3_value *pKey);
void acornCacheBindKeyIn(sqlite3_stmt *pStmt, int i, sqlite3_value *pKey,
                         int bUtf16, char *aBuf, int nBuf);

/* cache_store.c: statements and errors */
void acornCacheOpInit(cache_op *op, cache_table *pTab, cache_vtab *pVtab);
int acornCacheOpError(cache_op *op, int rc);
int acornCacheOpFail(cache_op *op, int rc, const char *zFmt, ...);
char *acornCacheStmtSql(int i, const char *zDb, const char *zName);
int acornCacheStmt(cache_op *op, int i, sqlite3_stmt **ppStmt);
int acornCacheRun(cache_op *op, sqlite3_stmt *pStmt);
int acornCacheQueryInt(sqlite3 *db, char *zSql, i64 *pVal, int *pbRow);
void acornCacheFinalizeAll(cache_table *pTab);
/* cache_store.c: what a table holds, recency records, the config row */
void acornCacheChunkDropAll(cache_table *pTab);
void acornCacheHeldForget(cache_table *pTab);
void acornCacheHeldCheck(cache_table *pTab);
void acornCacheHeldValidate(cache_table *pTab);
int acornCacheRecFind(cache_op *op, i64 id, cache_rec *pRec, int *pbFound);
int acornCacheRecMerge(cache_op *op, const cache_rec *aNew, int n);
int acornCacheChunkDecode(cache_chunk *c, i64 lo, const unsigned char *a,
                          int n);
int acornCacheConfigRead(cache_op *op);
int acornCacheConfigSave(cache_op *op);
int acornCacheConfigSync(cache_op *op);
int acornCacheForeignFind(cache_table *pTab, char **pzWhat);
int acornCacheForeignCheck(cache_op *op);
/* cache_store.c: entries, tags and the feed */
int acornCacheFlushWrite(cache_op *op);
int acornCacheOpCommit(cache_op *op, int rc);
int acornCacheDeleteEntry(cache_op *op, i64 id, int *pbFound);
int acornCacheReclaimExpired(cache_op *op);
int acornCacheEvict(cache_op *op);
int acornCacheSet(cache_op *op, const cache_new *pNew, i64 *pId);
int acornCacheRenew(cache_op *op, i64 id, const cache_renewal *pRenew,
                    int *pbFound);
int acornCacheLiveKey(cache_op *op, sqlite3_value *pKey, i64 idNot, i64 *pId);
int acornCacheStoredUse(cache_table *pTab, i64 id, int *pbFound, i64 *pMs,
                   i64 *pHits, char **pzErr);
int acornCacheTagAdd(cache_op *op, i64 id, sqlite3_value *pTag);
int acornCacheTagDelete(cache_op *op, i64 id);
int acornCacheTagGet(cache_op *op, i64 id, sqlite3_value **ppTag);
int acornCacheFeedAdd(cache_op *op, i64 id, i64 nSize, int eWhy);
int acornCacheFeedTrim(cache_op *op);

/* cache_format.c: formats and conversions */
int acornCacheFormatProbe(sqlite3 *db, const char *zDb, const char *zName,
                          int *piFormat);
int acornCacheUpgrade(cache_op *op);
int acornCacheFormatRecheck(cache_op *op);
void acornCacheFormatStale(cache_table *pTab, int bEnd);

/* cache_check.c */
int acornCacheIntegrity(cache_table *pTab, char **pzErr);

/* cache_table.c: connections */
cache_conn *acornCacheConnAcquire(sqlite3 *db);
void acornCacheConnRef(cache_conn *pConn);
void acornCacheConnRelease(void *pConn);
void acornCacheWalHook(cache_conn *pConn);
void acornCacheWalLimit(cache_conn *pConn, i64 nLimit);
/* cache_table.c: a connection's tables */
void acornCacheTableRef(cache_table *pTab);
void acornCacheTableUnref(cache_table *pTab);
void acornCacheTableRetire(cache_table *pTab);
int acornCacheTableOpen(cache_conn *pConn, const char *zDb, const char *zName,
                        const cache_opts *pOpts, cache_table **ppTab,
                        char **pzErr);
int acornCacheVtabAttach(cache_vtab *pVtab, const cache_ident *pId);
int acornCacheVtabBind(cache_vtab *p, char **pzErr);
int acornCacheTableSwitch(cache_op *op, i64 uid);
int acornCacheDropEnd(cache_table *pTab);
void acornCacheNameForget(cache_conn *pConn, cache_table *pTab);
void acornCacheNameNote(cache_conn *pConn, const char *zTab, cache_table *p,
                        int eKind, int nReprepare);
int acornCacheConfigLoad(cache_op *op);
int acornCacheSetBroken(cache_op *op);
int acornCacheOpBegin(cache_op *op, cache_table *pTab, cache_vtab *pVtab,
                      const char *zWho);
int acornCacheStmtBusy(sqlite3 *db, int bWrite);
int acornCacheFlushStandalone(cache_table *pTab, int bIdle);
void acornCacheTouch(cache_table *pTab, i64 id, i64 ms);
void acornCacheTableJoin(cache_table *pTab);
void acornCacheTableTxnEnd(cache_table *pTab, int bCommit);
void acornCacheTableDropInTxn(cache_table *pTab);
#ifndef NDEBUG
void acornCacheTableCheck(const cache_table *pTab);
#else
# define acornCacheTableCheck(p)
#endif

/* cache_set.c: a set as given */
int acornCacheCheckExpiry(cache_op *op, sqlite3_value *pExpires,
                          sqlite3_value *pTtl, i64 *piExpires,
                          i64 *pnTtlMs);
int acornCacheCheckValues(cache_op *op, cache_new *pNew,
                          sqlite3_value *pExpires, sqlite3_value *pTtl,
                          i64 *pnTtlMs);
int acornCacheCheckTag(cache_op *op, sqlite3_value *pTag);
void acornCacheTtlApply(const cache_op *op, i64 nTtlMs, i64 *piExpires);
int acornCacheCheckSize(cache_op *op, i64 nSize);
int acornCacheSetGiven(cache_op *op, cache_new *pNew, i64 nTtlMs,
                       int bIgnore, i64 *pRowid, int *pbIgnored);

/* cache_func.c: the table-valued functions over one cache table
** (cache_stats, cache_evictions): an instance knows its connection; the
** hidden column tbl names the table. */
typedef struct cache_tvf cache_tvf;
struct cache_tvf {
  sqlite3_vtab base;
  cache_conn *pConn;    /* the module's pAux */
};
int acornCacheTvfConnect(sqlite3 *db, void *pAux, const char *zSchema,
                         sqlite3_vtab **ppVtab);
int acornCacheTvfDisconnect(sqlite3_vtab *pVtab);
cache_table *acornCacheTvfTable(sqlite3_vtab *pVtab, sqlite3_value *pArg,
                                const char *zWho, const char **pzTab,
                                cache_op *op, int *pRc);
/* The module of such a function: eponymous (no xCreate), read-only. */
#if SQLITE_VERSION_NUMBER >= 3044000
# define CACHE_TVF_INTEGRITY , 0
#else
# define CACHE_TVF_INTEGRITY
#endif
#define CACHE_TVF_MODULE(xConnect, xBestIndex, xOpen, xClose, xFilter, \
                         xNext, xEof, xColumn, xRowid) {                  \
  0, 0, xConnect, xBestIndex, acornCacheTvfDisconnect, 0, xOpen, xClose,  \
  xFilter, xNext, xEof, xColumn, xRowid,                                  \
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 CACHE_TVF_INTEGRITY }

/* cache_func.c */
int acorn_cache_func_register(sqlite3 *db, cache_conn *pConn);

/* cache_feed.c */
int acornCacheFeedRegister(sqlite3 *db, cache_conn *pConn);

#endif /* ACORN_CACHEINT_H */
