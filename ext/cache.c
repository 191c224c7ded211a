/*
** cache.c: a capacity-bounded blob store inside the database, evicting the
** least recently used entry (or the oldest set, with policy = fifo).
**
** THE TABLE
**
**   CREATE VIRTUAL TABLE thumbs USING cache(capacity = '64MiB');
**
**   Columns (the hidden last one is named after the table, as in FTS5):
**     key        TEXT, BLOB or INTEGER; not NULL; unique; compared as SQLite
**                compares values (1 and '1' are different keys); a REAL
**                with no fractional part is stored as the INTEGER
**     value      BLOB or TEXT, stored as given; not NULL
**     size       INTEGER  bytes of key plus value as stored (an INTEGER key
**                         counts 8; TEXT in the database encoding)
**     created    INTEGER  unix ms of the set
**     last_used  INTEGER  unix ms of the latest use (fifo: of the set)
**     hits       INTEGER  reads of value since the set (fifo: NULL)
**     expires    INTEGER  unix ms, or NULL for never; settable
**     <table>    HIDDEN   the command column
**   size, created, last_used and hits are read-only.  Tables cannot be
**   named after a column, nor rowid, oid or _rowid_ (that would hide the
**   rowid alias).
**
**   Options (CREATE VIRTUAL TABLE ... USING cache(name = value, ...)), each
**   at most once:
**     capacity        bytes, an integer or a number with a unit B, kB, MB,
**                     GB (powers of 1000), KiB, MiB, GiB (powers of 1024);
**                     default 1GiB.  Kept in the table; later changes by the
**                     'capacity' command persist and win over this option.
**     recency_buffer  how many distinct keys' recency a connection holds in
**                     memory before it writes them (1..1000000, default
**                     100000; about 56 bytes per key)
**     policy          lru (default): evict the least recently used entry;
**                     fifo: evict the entry set longest ago.  A get under
**                     fifo writes nothing, ever, and hits are not counted.
**                     Set at CREATE only.
**     autoflush       on (default) | off: off, a connection writes its
**                     buffered recency only inside its own writes to the
**                     table and by the 'flush' command, never on its own
**                     (buffer full, close): for replicated SQLite that
**                     takes only what a client writes (dqlite); uses left
**                     at close are dropped (recency only).
**   An integer option may be written as a whole number with a fraction of
**   zeros ('1000.0'), as an INTEGER argument may be a whole REAL.
**
**   Statements:
**     INSERT INTO t(key, value [, expires]) VALUES(...)  set; replaces a key
**     INSERT OR IGNORE INTO t(key, value) ...   set only if no live entry
**                                               has the key (add)
**     SELECT value FROM t WHERE key = ?                  get; a use
**     SELECT value FROM t WHERE key IN (...)             gets; uses
**     UPDATE t SET value = ?, expires = ? WHERE key = ?  a set that keeps
**                                                        created and hits
**     DELETE FROM t WHERE key = ?
**     SELECT key, size, created, last_used, hits, expires FROM t
**                                                        listing; not a use
**     INSERT INTO t(t, value) VALUES('capacity', '128MiB')  change capacity
**     INSERT INTO t(t) VALUES('purge')    drop expired entries now
**     INSERT INTO t(t) VALUES('flush')    write this connection's buffered
**                                         recency now
**     INSERT INTO t(t) VALUES('integrity_check')  check every invariant of
**                                         the stored table; an error names
**                                         the first one broken
**   A command row sets the command column and, for capacity, value: any
**   other column is an error that names it.
**   Any row whose value column is read counts as a use: its recency moves
**   to the front, its hits and the table's hits go up by one.  A point
**   lookup (key = ? or key IN) in a statement that reads value (an UPDATE's
**   does) and finds nothing live is a miss.  INSERT and INSERT OR REPLACE,
**   OR ABORT, OR FAIL, OR ROLLBACK all replace a stored key (a cache's set);
**   OR IGNORE keeps a live stored entry untouched (an expired one is
**   replaced).  UPDATE OR IGNORE skips a row whose new key is live in
**   another entry.
**
** FUNCTIONS
**
**   cache_read(table, key, offset, length)  BLOB
**     Bytes offset..offset+length-1 of the value, read with incremental blob
**     I/O (only the pages needed); shorter at the end of the value, x'' past
**     it; NULL for a missing or expired key (a miss).  A use, like a get.
**   SELECT * FROM cache_stats('thumbs')
**     One row: capacity, entries, bytes, hits, misses, evictions, expired
**     (hits and misses NULL under fifo).
**   table is the cache table's name, optionally 'schema.name'.
**
** CAPACITY AND EVICTION
**
**   The sum of size over stored entries (expired ones included until they
**   are reclaimed) is counted exactly in the config row.  Every write to the
**   table (set, update, delete, command) first reclaims expired entries and
**   then evicts until the new entry fits, in the same transaction, so after
**   every statement the sum is at most the capacity.  An entry larger than
**   the capacity is refused with "cache: entry of N bytes exceeds capacity
**   of M bytes" before anything changes.
**
**   Recency is a sequence number (seq in the config row).  Every set takes
**   the next one as the entry's id (a set of a stored key makes a new entry,
**   so id order is set order; a rolled-back set gives its id back, and uses
**   buffered for ids above the seq of a rolled-back savepoint are dropped
**   with it, so a use never lands on the entry that reuses an id); every
**   written use takes the next one as the entry's `used`.  An entry's
**   recency is its latest such number: no ties, and under lru the order of
**   eviction is exactly the order of last use (sets count as uses); under
**   fifo it is the order of ids.
**
** HOW IT WORKS
**
**   Shadow tables (xShadowName knows the suffixes; DEFENSIVE makes them
**   read-only to ordinary SQL).  Their names belong to the table: CREATE
**   and RENAME fail, naming the object, if another object has one of them
**   (<t>_lru included); DROP and RENAME take exactly the tables the cache
**   made (cacheLruOwned says which <t>_lru that is):
**     <t>_config(id=1, capacity, bytes, entries, seq, hits, misses,
**                evictions, expired, uid, policy, head, low, dead)
**                                      one row; uid is random at CREATE:
**                                      the table's identity; head, low,
**                                      dead: see eviction below
**     <t>_data(id INTEGER PRIMARY KEY, key UNIQUE, created, expires, value)
**                                      one row per entry; value last, so
**                                      reading expires never walks a large
**                                      value's overflow pages.  size is
**                                      computed from the row (length() of a
**                                      BLOB reads only the record header)
**     <t>_expiry(expires, id) WITHOUT ROWID       entries that can expire
**     <t>_rec(lo INTEGER PRIMARY KEY, minused, recs)  + index on minused
**                                      recency records, packed: row lo
**                                      holds, in the blob recs, one record
**                                      {id, used, last_used, hits} for each
**                                      entry with id in [lo, next lo) that
**                                      was used since its set, sorted by
**                                      id; minused is the least used in it
**                                      above low (NULL if none); the index
**                                      is named after the uid, as an index
**                                      cannot be renamed with its table
**   The config row is checked as it is read: a counter that is not an
**   INTEGER in 0..2^62 (capacity 1..2^62) is SQLITE_CORRUPT_VTAB, "a counter
**   is out of range", so no sum of counters can overflow.
**   Every write is done by statements on these tables inside the user's
**   transaction, so ROLLBACK and ROLLBACK TO undo sets, deletes, evictions,
**   capacity changes and written recency alike.
**
**   Records.  A record is 28 bytes, little-endian: id (8), used (8),
**   last_used (6), hits (6): fixed width, so a chunk is read and written
**   with no parsing.  The chunk row with lo = 0 always exists, so every id
**   falls in a chunk.  A chunk whose blob grows past the page size less a
**   margin is split into rows of about half that; a chunk left empty is
**   deleted (but row 0).  Writing K buffered uses rewrites each chunk they
**   fall in once: at 10^6 entries and K = 10^5 that is a few thousand rows,
**   where one row per use would be 10^5 random b-tree updates with their
**   index entries.
**
**   Eviction under lru looks at two candidates and takes the one with the
**   lower recency: the oldest entry never used since its set (the first id
**   >= head with no record; head moves past entries found to have one, as
**   every entry below head has a record while it lives), and the entry of
**   the least used record above low (through the index on minused).
**   Evicting that entry does not rewrite its chunk: low moves up to its
**   used, and the chunk's minused to its next record (records at or below
**   low are dropped whenever their chunk is written).  Deletes, expiries
**   and sets of stored keys leave the old entry's record too, and count in
**   dead; eviction passes over such a record when it meets it (its entry
**   is gone), and once dead passes entries + 1024 a write sweeps all chunks
**   for records of entries gone (amortised: one lookup an entry gone).
**   Under fifo the candidate is the first id.  A set that evicts an entry
**   never used dirties the pages a hand-written eviction does (the new row,
**   the evicted row, their key index entries) plus the config row.
**
**   What a connection holds.  Inside a transaction the config row is read
**   once and written at xSync and as a savepoint begins (so the table as it
**   stood at each savepoint has its counters; each savepoint also keeps a
**   copy for ROLLBACK TO);
**   decoded chunks (CACHE_NCHUNK) are kept.  Both stay good from one
**   transaction to the next while the file's data version is the one noted
**   at the last commit (another connection's commit changes it), and go at
**   a rollback.

**   Reads never write.  A use is recorded in a per-connection buffer (one
**   per table, struct cache_buffer; it moves with the table from vtab
**   instance to vtab instance, see "Schema resets" below): an array with
**   one slot per id {ms, hits, use counter}, found through an open hash of
**   indexes, so a get costs one probe and no allocation.  The buffer is
**   written: its uses numbered in use-counter order (each taking the next
**   seq as `used`), then merged into the chunks in id order:
**     - at the start of every write to the table by this connection, inside
**       its transaction (so eviction sees it);
**     - when it holds recency_buffer keys, if the connection is in
**       autocommit mode and no writing statement is running (its own short
**       transaction; on failure it stays buffered), unless autoflush=off;
**     - at disconnect, under the same conditions (DEFENSIVE is lifted
**       around this flush: there is no statement running to allow it),
**       unless autoflush=off;
**     - by the 'flush' command.
**   Uses written inside a transaction are copied to a second array, tagged
**   with the savepoint level; xRollback / xRollbackTo put them back in the
**   buffer with their old counters (older than any use since), and the
**   miss counts with them; xCommit drops them.  So the in-memory state
**   always matches what the database kept.  The listing overlays buffered
**   hits and last_used, cache_stats adds buffered hits and misses, so one
**   connection always sees its own uses.  Under fifo nothing is buffered.
**
**   xBestIndex: idxNum bits
**     1  CACHE_IDX_EQ     key = ?       argv[0] the key
**     2  CACHE_IDX_IN     key IN (...)  argv[0] the list (sqlite3_vtab_in)
**     4  CACHE_IDX_VALUE  value is read (a use; misses counted)
**     8  CACHE_IDX_LRU    last_used or hits is read (records looked up)
**    32  CACHE_IDX_SIZE   size is read
**    64  CACHE_IDX_MORE   created or expires is read
**   The read statement on <t>_data fetches only the columns asked for (a
**   get of value does not compute a size or read created).  key is always
**   read: a lookup names it, so colUsed always has it.
**   With neither 1 nor 2 it is a scan of <t>_data in id (set) order.
**   idxStr names the plan, e.g. "key=? value", "key IN (...)", "scan lru".
**   Only BINARY comparisons on key are used for lookups.
**
**   A registry (process-wide list behind a mutex) maps (db, schema, table)
**   to the connected vtab so that cache_read() and cache_stats() use the
**   connection's buffer; they connect the table first if needed.
**
**   Schema resets.  Any DDL (by this connection or another) makes SQLite
**   connect the table again as a new instance, while the old one lives on
**   until SQLite disconnects it, maybe while a statement runs (no flush
**   then); DETACH disconnects with the schema already gone.  So the buffer
**   belongs to the table, not to the instance: a new instance takes the
**   buffer of the older or parked instance with the same uid (cacheAdopt),
**   which goes stale (inert: not found by cache_read/cache_stats, its
**   transaction events go to its successor, nothing to flush).  A
**   disconnect that cannot flush parks the instance (statements finalized)
**   until the next instance of the table on that connection or the close;
**   so does DROP TABLE inside a transaction (for a ROLLBACK that brings the
**   table back), keeping only the uses not written yet.
**   A buffer whose uid is not the uid of the table now under that name
**   (dropped and created again elsewhere) is dropped, never written.
**
**   Tables made by acorn 0.1 (format 1) kept recency in <t>_lru(id, used
**   UNIQUE, last_used, hits, size).  They are read as they are; the first
**   write (or a flush with no statement running) converts them: the config
**   row gains policy and head, <t>_rec is made from the rows of <t>_lru
**   used since their set, and <t>_lru is emptied (it cannot be dropped
**   while the writing statement runs; DROP TABLE of the cache drops it).
*/
#include "acorn.h"

#include <assert.h>
#include <limits.h>
#include <pthread.h>
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
#define CACHE_COLUMN_COMMAND    7
#define CACHE_SCHEMA \
  "CREATE TABLE x(key, value BLOB, size INTEGER, created INTEGER," \
  " last_used INTEGER, hits INTEGER, expires INTEGER, \"%w\" HIDDEN)"

#define CACHE_IDX_EQ     1
#define CACHE_IDX_IN     2
#define CACHE_IDX_VALUE  4
#define CACHE_IDX_LRU    8
#define CACHE_IDX_SIZE   32
#define CACHE_IDX_MORE   64

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

#define CACHE_SIZE_HELP \
  "expected a positive number of bytes, optionally with a unit B, kB, MB," \
  " GB, KiB, MiB or GiB (e.g. 1048576 or '64MiB')"

/* The bytes an entry counts for, computed from its stored row: an INTEGER
** key 8, TEXT and BLOB their length in the database encoding.  length() of
** a BLOB column reads only the record header, not overflow pages. */
#define CACHE_SIZE_SQL \
  "(CASE typeof(key) WHEN 'integer' THEN 8 ELSE length(CAST(key AS BLOB)) END" \
  " + CASE typeof(value) WHEN 'blob' THEN length(value)" \
  " ELSE length(CAST(value AS BLOB)) END)"

/* ---------------------------------------------------------- statements */
/*
** Statements on the shadow tables, prepared on first use and kept on the
** vtab.  Each text is complete: it is formatted with the schema and table
** name, as (zDb, zName) given three times over, and names its tables as
** "schema"."table_suffix".
*/
enum {
  CACHE_STMT_CONFIG_READ,
  CACHE_STMT_CONFIG_READ1,
  CACHE_STMT_CONFIG_WRITE,
  CACHE_STMT_FIND,
  CACHE_STMT_FIND_LIVE,
  CACHE_STMT_INSERT,
  CACHE_STMT_DELETE,
  CACHE_STMT_ROW,
  CACHE_STMT_HEAD,
  CACHE_STMT_ENTRY,
  CACHE_STMT_EXPIRY_ADD,
  CACHE_STMT_EXPIRY_DEL,
  CACHE_STMT_EXPIRED,
  CACHE_STMT_CHUNK_FIND,
  CACHE_STMT_CHUNK_NEXT,
  CACHE_STMT_CHUNK_OLDEST,
  CACHE_STMT_CHUNK_WRITE,
  CACHE_STMT_CHUNK_DELETE,
  CACHE_STMT_CHUNK_SETMIN,
  CACHE_STMT_EXISTS,
  CACHE_STMT_LRU1_READ,
  CACHE_NSTMT
};

/* hits of a format 1 row, in the range a record holds (6 bytes), so that
** no sum with it overflows whatever the row says */
#define CACHE_LRU1_HITS "max(0, min(hits, 281474976710655))"

static const struct {
  int eStmt;                 /* its index, checked by assert() */
  const char *zSql;
} aCacheStmt[CACHE_NSTMT] = {
  { CACHE_STMT_CONFIG_READ,
    "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired,"
    " uid, policy, head, low, dead FROM \"%w\".\"%w_config\" WHERE id=1" },
  { CACHE_STMT_CONFIG_READ1,     /* format 1, before its conversion */
    "SELECT capacity, bytes, entries, seq, hits, misses, evictions, expired,"
    " uid, 0, 0, 0, 0 FROM \"%w\".\"%w_config\" WHERE id=1" },
  { CACHE_STMT_CONFIG_WRITE,
    "UPDATE \"%w\".\"%w_config\" SET capacity=?1, bytes=?2, entries=?3,"
    " seq=?4, hits=?5, misses=?6, evictions=?7, expired=?8, head=?9,"
    " low=?10, dead=?11 WHERE id=1" },
  { CACHE_STMT_FIND,
    "SELECT id, expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE key=?1" },
  { CACHE_STMT_FIND_LIVE,
    "SELECT (SELECT uid FROM \"%w\".\"%w_config\" WHERE id=1),"
    " (SELECT id FROM \"%w\".\"%w_data\" WHERE key=?1"
    " AND (expires IS NULL OR expires>?2))" },
  { CACHE_STMT_INSERT,
    "INSERT INTO \"%w\".\"%w_data\"(id, key, created, expires, value)"
    " VALUES(?1, ?2, ?3, ?4, ?5)" },
  { CACHE_STMT_DELETE,
    "DELETE FROM \"%w\".\"%w_data\" WHERE id=?1" },
  { CACHE_STMT_ROW,
    "SELECT key, value, created, expires FROM \"%w\".\"%w_data\""
    " WHERE id=?1" },
  { CACHE_STMT_HEAD,
    "SELECT id, expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id>=?1 ORDER BY id LIMIT 1" },
  { CACHE_STMT_ENTRY,
    "SELECT id, expires, " CACHE_SIZE_SQL " FROM \"%w\".\"%w_data\""
    " WHERE id=?1" },
  { CACHE_STMT_EXPIRY_ADD,
    "INSERT INTO \"%w\".\"%w_expiry\"(expires, id) VALUES(?1, ?2)" },
  { CACHE_STMT_EXPIRY_DEL,
    "DELETE FROM \"%w\".\"%w_expiry\" WHERE expires=?1 AND id=?2" },
  { CACHE_STMT_EXPIRED,
    "SELECT id FROM \"%w\".\"%w_expiry\" WHERE expires<=?1 LIMIT 1" },
  { CACHE_STMT_CHUNK_FIND,
    "SELECT lo, recs FROM \"%w\".\"%w_rec\" WHERE lo<=?1"
    " ORDER BY lo DESC LIMIT 1" },
  { CACHE_STMT_CHUNK_NEXT,
    "SELECT lo FROM \"%w\".\"%w_rec\" WHERE lo>?1 ORDER BY lo LIMIT 1" },
  { CACHE_STMT_CHUNK_OLDEST,
    "SELECT lo, recs FROM \"%w\".\"%w_rec\" WHERE minused IS NOT NULL"
    " ORDER BY minused LIMIT 1" },
  { CACHE_STMT_CHUNK_WRITE,
    "INSERT OR REPLACE INTO \"%w\".\"%w_rec\"(lo, minused, recs)"
    " VALUES(?1, ?2, ?3)" },
  { CACHE_STMT_CHUNK_DELETE,
    "DELETE FROM \"%w\".\"%w_rec\" WHERE lo=?1" },
  { CACHE_STMT_CHUNK_SETMIN,
    "UPDATE \"%w\".\"%w_rec\" SET minused=?2 WHERE lo=?1" },
  { CACHE_STMT_EXISTS,
    "SELECT 1 FROM \"%w\".\"%w_data\" WHERE id=?1" },
  { CACHE_STMT_LRU1_READ,        /* format 1, before its conversion */
    "SELECT last_used, " CACHE_LRU1_HITS " FROM \"%w\".\"%w_lru\""
    " WHERE id=?1" },
};

/* Read statements, one slot per (point, columns read) combination. */
#define CACHE_NREAD 16

/* ---------------------------------------------------------- types */

typedef struct cache_config cache_config;
struct cache_config {
  i64 capacity, bytes, entries, seq, hits, misses, evictions, expired;
  i64 uid;              /* the table's identity, 0 in tables without one */
  i64 iHead;            /* every live entry with id < iHead has a record */
  i64 iLow;             /* records with used <= iLow are dead (evicted) */
  i64 nDead;            /* entries gone since the last sweep, records
                        ** perhaps left (an upper bound) */
  int ePolicy;          /* CACHE_POLICY_LRU or CACHE_POLICY_FIFO */
};

/* One buffered use: an entry's recency not yet written. */
typedef struct cache_use cache_use;
struct cache_use {
  i64 id;               /* <t>_data.id */
  i64 ms;               /* unix ms of the latest use */
  i64 nHit;             /* uses since the last flush, >= 1 */
  i64 iSeq;             /* the buffer's use counter at the latest use */
  i64 iUsed;            /* the recency given by the flush that wrote it */
  int iLevel;           /* savepoint level it was written at (aFlushed) */
  int iNext;            /* hash chain: index+1 in aPending, 0 ends */
};

/* Counts written by one flush inside a transaction: misses, and hits of
** uses whose entry a rollback took away (counted, not recorded). */
typedef struct cache_count cache_count;
struct cache_count { int iLevel; i64 nMiss; i64 nHit; };

/* What a transaction holds of the config row (cache_buffer.eCfg).  Inside
** a transaction the row is read once and written at xSync and as a
** savepoint begins: a write to the table reads and writes cfg instead (one
** b-tree update a transaction, not two a statement).  A savepoint keeps a
** copy (cache_snap) that ROLLBACK TO puts back. */
#define CACHE_CFG_NONE   0      /* not held: read the row */
#define CACHE_CFG_CLEAN  1      /* held, equal to the row */
#define CACHE_CFG_DIRTY  2      /* held, newer than the row */

typedef struct cache_snap cache_snap;
struct cache_snap { int iLevel; int eCfg; cache_config cfg; };

/*
** The recency buffer of one table on one connection, with the transaction
** state that goes with it.  It is owned by one vtab instance at a time (a
** pointer handed over when SQLite connects the table again).
**
** Invariants (cacheBufferCheck):
**   - aPending[0..nPending) hold distinct ids, each with nHit >= 1, and
**     each is found from aHash: aHash[h] is index+1 of the first use whose
**     id hashes to h, chained by iNext; nHash is 0 or a power of two at
**     least twice nPending;
**   - nHitPending is the sum of nHit over aPending;
**   - iSeq of every pending use is at most iUseSeq;
**   - outside a transaction (bInTxn 0) aFlushed, aCount and aSnap are
**     empty, iLevel is -1, eCfg is not CACHE_CFG_DIRTY and no aLevelSeq is
**     set;
**     inside, no aFlushed, aCount or aSnap level is above iLevel, aSnap is
**     in ascending level order, no aSnap level is below iSnapLow, no
**     aLevelSeq is set above iLevel, and bDropTxn is 0;
**   - iDropSeq is LLONG_MAX unless bDropTxn; with bDropTxn eCfg is
**     CACHE_CFG_NONE.
** Savepoints.  Every xSavepoint that succeeds leaves a copy of the config
** row for its level in aSnap, so a level at or above iSnapLow without one
** is a level whose xSavepoint failed: nothing was done at it, and a
** rollback to it keeps what is held.  A level below iSnapLow began before
** the table joined the transaction: a rollback to it leaves the table's
** own row.
** Rollbacks.  The seq of a table goes back with a rollback, so the ids of
** entries made in the part rolled back will be given again.  Their uses
** (buffered, or written there and put back) must not land on those new
** entries: the part rolled back began at seq aLevelSeq (the least set at
** its level or deeper), and every use of an id above it is dropped.
*/
typedef struct cache_buffer cache_buffer;
struct cache_buffer {
  cache_use *aPending;  /* buffered uses, one per id, in no order */
  int nPending, nPendingAlloc;
  int *aHash;           /* id -> index+1 in aPending, chained by iNext */
  int nHash;            /* slots in aHash, a power of two, or 0 */
  i64 iUseSeq;          /* use counter: orders the buffered uses */
  i64 nHitPending;      /* sum of nHit over aPending */
  i64 nMissPending;     /* misses not yet written */
  i64 nHitLoose;        /* hits not yet written of uses whose entry a
                        ** rollback took away */
  cache_use *aFlushed;  /* written in the open transaction */
  int nFlushed, nFlushedAlloc;
  cache_count *aCount;  /* counts written in the open transaction */
  int nCount, nCountAlloc;
  int bInTxn;           /* between xBegin and xCommit/xRollback */
  int iLevel;           /* innermost open savepoint seen, -1 for none */
  i64 *aLevelSeq;       /* [iLevel+1]: seq at the first write at that level
                        ** of the open transaction, or -1 */
  int nLevelSeq;        /* slots in aLevelSeq */
  int bLevelLost;       /* a level could not be noted (out of memory): a
                        ** rollback drops every use it would put back */
  int eCfg;             /* CACHE_CFG_*: is cfg the config row of the open
                        ** transaction? */
  cache_config cfg;     /* the config row as the transaction has it */
  cache_snap *aSnap;    /* eCfg and cfg as each open savepoint began */
  int nSnap, nSnapAlloc;
  int iSnapLow;         /* the least level xSavepoint was called with in
                        ** the open transaction, INT_MAX for none */
  int bDropTxn;         /* a DROP TABLE inside a transaction took it from
                        ** this buffer (no xRollback reaches a dropped
                        ** instance), and a ROLLBACK TO may bring the table
                        ** back inside it: until the connection is seen
                        ** outside a transaction or the buffer joins one, no
                        ** config row is held, and no use of an entry with an
                        ** id above iDropSeq is kept (cacheDropEnd) */
  i64 iDropSeq;         /* entries above it may be that transaction's (as
                        ** cacheBufferRollback bounds them: LLONG_MAX none,
                        ** -1 every one) */
  unsigned iGen;        /* bumped when what the connection holds of the
                        ** table may be out of date: a rollback, another
                        ** connection's commit (cache_chunk keeps it) */
  unsigned iVersion;    /* the file's data version when what is held was
                        ** last known good, between transactions */
};

/* One recency record: an entry used since its set. */
typedef struct cache_rec cache_rec;
struct cache_rec {
  i64 id;               /* <t>_data.id */
  i64 used;             /* its recency: the seq of its latest written use */
  i64 ms;               /* last_used, unix ms */
  i64 hits;             /* reads since the set */
};

/* A chunk of records as decoded: the row of <t>_rec with key lo, covering
** ids in [lo, hi).  aRec is sorted by id.  A vtab keeps the last
** CACHE_NCHUNK read or written (eviction looks at two at a time, in
** chunks all over the table). */
#define CACHE_NCHUNK 32
typedef struct cache_chunk cache_chunk;
struct cache_chunk {
  i64 lo, hi;
  int bValid;           /* holds the chunk as stored now */
  unsigned iGen;        /* cache_buffer.iGen when it was read */
  cache_rec *aRec;
  int nRec, nAlloc;
};

typedef struct cache_vtab cache_vtab;
struct cache_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
  char *zDb;            /* schema name: "main", "temp", ... */
  char *zName;          /* table name */
  sqlite3_stmt *aStmt[CACHE_NSTMT];
  sqlite3_stmt *aRead[CACHE_NREAD];
  unsigned char aReadBusy[CACHE_NREAD];
  cache_buffer *pBuf;   /* this table's buffer, 0 once stale */
  int nBufferMax;       /* recency_buffer option */
  int nNextFlush;       /* try a flush when nPending reaches this */
  int bAutoflush;       /* autoflush option: may write recency on its own */
  int iFormat;          /* 2, or 1 for a table made by acorn 0.1 */
  int ePolicy;          /* from the config row */
  int nChunkMax;        /* split a chunk's blob above this many bytes */
  cache_chunk aChunk[CACHE_NCHUNK];  /* chunks last read or written */
  int iChunkNext;       /* the slot the next chunk read goes to */
  u64 *aEnc;            /* scratch for encoding a chunk */
  i64 uid;              /* <t>_config.uid: >0; -1 not known yet */
  int bStale;           /* a newer instance has the table (and the buffer),
                        ** or the table under this name is another one */
  int bParked;          /* disconnected, kept only for its buffer */
  int bRegistered;      /* in the registry (cacheAdopt, bRegister): until
                        ** then the connect that makes it adopts nothing */
  int bInUse;           /* cache_read or cache_stats is using it: 1; and
                        ** SQLite has disconnected it meanwhile: 2 */
  int bUtf16;           /* the database's text encoding is UTF-16 */
  cache_vtab *pRegNext; /* registry list */
};

typedef struct cache_cursor cache_cursor;
struct cache_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pStmt;  /* the read statement, from a slot or private */
  int iSlot;            /* slot of pStmt in aRead[], -1 if private */
  int bStepped;         /* pStmt was stepped since its last reset */
  int idxNum;
  int bEof;
  int bTouched;         /* this row's use is recorded */
  i64 now;              /* unix ms at xFilter: expiry cut-off */
  sqlite3_value **apIn; /* IN values */
  int nIn, iIn;
};

/*
** One write to the stored table: the config row as read at its start and
** written at its end, the time, and the first error, which the caller
** hands on (to the vtab's zErrMsg, or a function's result).
*/
typedef struct cache_op cache_op;
struct cache_op {
  cache_vtab *p;
  cache_config cfg;
  i64 now;              /* unix ms */
  const char *zWho;     /* prefix of messages: "cache" unless set */
  char *zErr;           /* first error message, or 0 */
};

/* ---------------------------------------------------------------- registry */

static pthread_mutex_t gCacheMutex = PTHREAD_MUTEX_INITIALIZER;
static cache_vtab *gCacheList = 0;

static void cacheUnregister(cache_vtab *p){
  cache_vtab **pp;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; *pp; pp=&(*pp)->pRegNext){
    if( *pp==p ){ *pp = p->pRegNext; break; }
  }
  pthread_mutex_unlock(&gCacheMutex);
}

/* Do a and b stand for the same table of the same connection? */
static int cacheSameTable(const cache_vtab *a, const cache_vtab *b){
  return a->db==b->db && a->uid>=0 && a->uid==b->uid
      && sqlite3_stricmp(a->zDb, b->zDb)==0;
}

/* The instance that holds stale p's buffer now (live or parked), or 0. */
static cache_vtab *cacheSuccessor(cache_vtab *p){
  cache_vtab *q;
  pthread_mutex_lock(&gCacheMutex);
  for(q=gCacheList; q; q=q->pRegNext){
    if( q!=p && !q->bStale && cacheSameTable(q, p) ) break;
  }
  pthread_mutex_unlock(&gCacheMutex);
  return q;
}

/* Mark p stale: it stands for no table now.  Its buffer goes. */
static void cacheBufferFree(cache_buffer *b);
static void cacheSetStale(cache_vtab *p){
  cache_buffer *b;
  pthread_mutex_lock(&gCacheMutex);
  p->bStale = 1;
  b = p->pBuf;
  p->pBuf = 0;
  pthread_mutex_unlock(&gCacheMutex);
  cacheBufferFree(b);
}

/* The live instance of db's cache table zDb.zName, or 0. */
static cache_vtab *cacheLookup(sqlite3 *db, const char *zDb, int nDb,
                               const char *zName){
  cache_vtab *p;
  pthread_mutex_lock(&gCacheMutex);
  for(p=gCacheList; p; p=p->pRegNext){     /* newest first */
    if( p->db==db && !p->bStale && !p->bParked
     && sqlite3_strnicmp(p->zDb, zDb, nDb)==0 && p->zDb[nDb]==0
     && sqlite3_stricmp(p->zName, zName)==0 ){
      break;
    }
  }
  pthread_mutex_unlock(&gCacheMutex);
  return p;
}

/* The cache table zDb.zName, connected first if need be (preparing a
** statement that names it calls xConnect), or 0 if that is no cache table.
** *pbExists is set if there is a table of that name; *pRc to SQLITE_NOMEM
** if the lookup ran out of memory (then 0 says nothing). */
static cache_vtab *cacheFindIn(sqlite3 *db, const char *zDb, int nDb,
                               const char *zName, int *pbExists, int *pRc){
  cache_vtab *p = 0;
  char *zSchema = sqlite3_mprintf("%.*s", nDb, zDb);
  int rc;
  *pbExists = 0;
  if( zSchema==0 ){
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  rc = sqlite3_table_column_metadata(db, zSchema, zName, 0, 0, 0, 0, 0, 0);
  if( rc==SQLITE_OK ){
    *pbExists = 1;
    p = cacheLookup(db, zDb, nDb, zName);
    if( p==0 ){
      char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w\" LIMIT 0",
                                   zSchema, zName);
      sqlite3_stmt *pStmt = 0;
      rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      p = cacheLookup(db, zDb, nDb, zName);
      if( p==0 && (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
    }
  }else if( (rc&0xff)==SQLITE_NOMEM ){
    *pRc = SQLITE_NOMEM;
  }
  sqlite3_free(zSchema);
  return p;
}

/* The cache table that SQL would take for zName: a bare name is looked up
** as SQLite does (temp, main, then attached databases in order), and
** names a cache table only if the table found is one; then "schema.name".
** 0 if there is none, or if the lookup failed: then *pRc says why
** (SQLITE_NOMEM; it is SQLITE_OK after a plain miss). */
static cache_vtab *cacheFind(sqlite3 *db, const char *zName, int *pRc){
  const char *zDot = strchr(zName, '.');
  sqlite3_stmt *pList = 0;
  int i, rc, bExists = 0;
  cache_vtab *p = 0;
  *pRc = SQLITE_OK;
  if( SQLITE_VERSION_NUMBER<3039000 || sqlite3_libversion_number()<3039000 ){
    /* sqlite3_db_name() is 3.39: its slot in an older library's API table
    ** is NULL (calling it would jump to address 0).  The pragma lists the
    ** same schemas: main, temp (once it exists), then attached ones, in
    ** the order of their index. */
    rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list"
                            " ORDER BY seq=1 DESC, seq", -1, &pList, 0);
    if( rc ){
      sqlite3_finalize(pList);
      if( (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
      return 0;
    }
  }
  for(i=0; ; i++){
    const char *zDb;
    if( pList ){
      rc = sqlite3_step(pList);
      zDb = rc==SQLITE_ROW ? (const char*)sqlite3_column_text(pList, 0) : 0;
      if( (rc&0xff)==SQLITE_NOMEM ) *pRc = SQLITE_NOMEM;
    }else{
#if SQLITE_VERSION_NUMBER>=3039000
      zDb = sqlite3_db_name(db, i<2 ? i^1 : i);
#else
      zDb = 0;
#endif
    }
    if( zDb==0 ) break;
    p = cacheFindIn(db, zDb, (int)strlen(zDb), zName, &bExists, pRc);
    if( bExists || *pRc ) break;
  }
  sqlite3_finalize(pList);
  if( bExists || *pRc ) return p;
  if( zDot ){
    return cacheFindIn(db, zName, (int)(zDot-zName), zDot+1, &bExists, pRc);
  }
  return 0;
}

/* -------------------------------------------------------------- utilities */

static i64 cacheNowMs(void){
  return acorn_now_ns()/1000000;
}

/* Record the connection's latest error as the operation's first error. */
static int cacheOpError(cache_op *op, int rc){
  if( rc!=SQLITE_OK && rc!=SQLITE_ROW && rc!=SQLITE_DONE && op->zErr==0 ){
    op->zErr = sqlite3_mprintf("%s: %s", op->zWho ? op->zWho : "cache",
                   rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                    : sqlite3_errmsg(op->p->db));
  }
  return rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* The same with a message of our own. */
static int cacheOpFail(cache_op *op, int rc, const char *zFmt, ...){
  if( op->zErr==0 ){
    va_list ap;
    va_start(ap, zFmt);
    op->zErr = sqlite3_vmprintf(zFmt, ap);
    va_end(ap);
  }
  return rc;
}

/* End of an operation run for a vtab method: its error goes to zErrMsg. */
static int cacheOpFinish(cache_op *op, int rc){
  if( op->zErr ){
    sqlite3_free(op->p->base.zErrMsg);
    op->p->base.zErrMsg = op->zErr;
    op->zErr = 0;
  }
  return rc;
}

static int cacheStmt(cache_op *op, int i, sqlite3_stmt **ppStmt){
  cache_vtab *p = op->p;
  assert( i>=0 && i<CACHE_NSTMT && aCacheStmt[i].eStmt==i );
  if( p->aStmt[i]==0 ){
    int rc;
    char *zSql = sqlite3_mprintf(aCacheStmt[i].zSql, p->zDb, p->zName,
                                 p->zDb, p->zName, p->zDb, p->zName);
    if( zSql==0 ) return cacheOpError(op, SQLITE_NOMEM);
    rc = sqlite3_prepare_v3(p->db, zSql, -1,
             SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &p->aStmt[i], 0);
    sqlite3_free(zSql);
    if( rc!=SQLITE_OK ) return cacheOpError(op, rc);
  }
  *ppStmt = p->aStmt[i];
  return SQLITE_OK;
}

/* Step a statement that returns no row we need, then reset it. */
static int cacheRun(cache_op *op, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  int rc2 = sqlite3_reset(pStmt);
  if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = rc2;
  return cacheOpError(op, rc);
}

static void cacheFinalizeAll(cache_vtab *p){
  int i;
  for(i=0; i<CACHE_NSTMT; i++){
    sqlite3_finalize(p->aStmt[i]);
    p->aStmt[i] = 0;
  }
  for(i=0; i<CACHE_NREAD; i++){
    /* A busy slot's statement belongs to its cursor from now on. */
    if( !p->aReadBusy[i] ) sqlite3_finalize(p->aRead[i]);
    p->aRead[i] = 0;
    p->aReadBusy[i] = 0;
  }
}

/* Is v an integer: an INTEGER, or a REAL with no fractional part that an
** i64 holds (JavaScript numbers bind as REAL)?  Its value in *pOut. */
static int cacheWholeNumber(sqlite3_value *v, i64 *pOut){
  int e = sqlite3_value_type(v);
  if( e==SQLITE_INTEGER ){
    *pOut = sqlite3_value_int64(v);
    return 1;
  }
  if( e==SQLITE_FLOAT ){
    double r = sqlite3_value_double(v);
    if( r>=-9223372036854775808.0 && r<9223372036854775808.0
     && r==(double)(i64)r ){
      *pOut = (i64)r;
      return 1;
    }
  }
  return 0;
}

/* Parse digits with an optional fraction of zeros ("1000", "1000.00"):
** the value in *pOut (at most iMax), the text after it in *pzEnd.  0 on
** success. */
static int cacheParseWhole(const char *z, i64 iMax, i64 *pOut,
                           const char **pzEnd){
  i64 v = 0;
  int nDigit = 0;
  while( *z>='0' && *z<='9' ){
    if( v > (iMax - (*z - '0'))/10 ) return 1;
    v = v*10 + (*z - '0');
    z++;
    nDigit++;
  }
  if( nDigit==0 ) return 1;
  if( *z=='.' ){
    z++;
    while( *z=='0' ) z++;
  }
  *pOut = v;
  *pzEnd = z;
  return 0;
}

/* Parse a size: digits, optional spaces, optional unit.  0 on success. */
static int cacheParseSize(const char *z, i64 *pOut){
  static const struct { const char *zUnit; i64 iMul; } aUnit[] = {
    { "",    1 }, { "b",   1 },
    { "kb",  1000 }, { "mb", 1000000 }, { "gb", 1000000000 },
    { "kib", (i64)1<<10 }, { "mib", (i64)1<<20 }, { "gib", (i64)1<<30 },
  };
  i64 v = 0;
  size_t i;
  if( z==0 ) return 1;
  while( *z==' ' ) z++;
  if( cacheParseWhole(z, CACHE_MAX_CAPACITY, &v, &z) ) return 1;
  while( *z==' ' ) z++;
  for(i=0; i<sizeof(aUnit)/sizeof(aUnit[0]); i++){
    size_t n = strlen(aUnit[i].zUnit);
    if( sqlite3_strnicmp(z, aUnit[i].zUnit, (int)n)==0 ){
      const char *zEnd = z + n;
      while( *zEnd==' ' ) zEnd++;
      if( *zEnd ) continue;
      if( v > CACHE_MAX_CAPACITY / aUnit[i].iMul ) return 1;
      v *= aUnit[i].iMul;
      if( v<1 ) return 1;
      *pOut = v;
      return 0;
    }
  }
  return 1;
}

/* Bytes a key or value counts for: BLOB its length, TEXT its length in
** the database's encoding (as stored, and as cache_read's offsets count),
** INTEGER (or a whole REAL key, stored as INTEGER) 8. */
static i64 cacheBytes(int bUtf16, sqlite3_value *pVal){
  int e = sqlite3_value_type(pVal);
  if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ) return 8;
  if( e==SQLITE_TEXT && bUtf16 ) return sqlite3_value_bytes16(pVal);
  return sqlite3_value_bytes(pVal);
}

static const char *cacheTypeName(int eType){
  switch( eType ){
    case SQLITE_INTEGER: return "INTEGER";
    case SQLITE_FLOAT:   return "REAL";
    case SQLITE_TEXT:    return "TEXT";
    case SQLITE_BLOB:    return "BLOB";
    default:             return "NULL";
  }
}

/* Check a key as the user gave it; zWho prefixes the message. */
static char *cacheCheckKey(const char *zWho, sqlite3_value *pKey){
  int e = sqlite3_value_type(pKey);
  i64 iKey;
  if( e==SQLITE_NULL ){
    return sqlite3_mprintf("%s: key must not be NULL;"
                           " expected TEXT, BLOB or INTEGER", zWho);
  }
  if( e==SQLITE_FLOAT && !cacheWholeNumber(pKey, &iKey) ){
    return sqlite3_mprintf("%s: key must be TEXT, BLOB or INTEGER, got REAL",
                           zWho);
  }
  return 0;
}

/* Bind a checked key: a whole REAL as the INTEGER it is. */
static void cacheBindKey(sqlite3_stmt *pStmt, int i, sqlite3_value *pKey){
  i64 iKey;
  if( sqlite3_value_type(pKey)==SQLITE_FLOAT && cacheWholeNumber(pKey, &iKey) ){
    sqlite3_bind_int64(pStmt, i, iKey);
  }else{
    sqlite3_bind_value(pStmt, i, pKey);
  }
}

/* ------------------------------------------------------- recency buffer */

static unsigned cacheHashSlot(const cache_buffer *b, i64 id){
  u64 h = (u64)id * 0x9E3779B97F4A7C15ULL;
  return (unsigned)(h>>32) & (unsigned)(b->nHash-1);
}

#ifndef NDEBUG
/* Assert the invariants written beside struct cache_buffer.  O(n): called
** where the buffer changes wholesale, not on every use. */
static void cacheBufferCheck(const cache_buffer *b){
  int i, n;
  i64 nHit = 0;
  if( b==0 ) return;
  assert( b->nPending>=0 && b->nPending<=b->nPendingAlloc );
  assert( b->nHash==0 || ((b->nHash & (b->nHash-1))==0
                          && b->nHash>=2*b->nPending) );
  assert( b->nHash>0 || b->nPending==0 );
  for(i=0; i<b->nPending; i++){
    const cache_use *u = &b->aPending[i];
    int j;
    assert( u->nHit>=1 );
    assert( u->iSeq<=b->iUseSeq );
    nHit += u->nHit;
    for(j=b->aHash[cacheHashSlot(b, u->id)]; j && j!=i+1;
        j=b->aPending[j-1].iNext){
      assert( b->aPending[j-1].id!=u->id );
    }
    assert( j==i+1 );
  }
  for(i=n=0; b->nPending>0 && i<b->nHash; i++){
    int j;
    for(j=b->aHash[i]; j; j=b->aPending[j-1].iNext){
      assert( j>=1 && j<=b->nPending );
      n++;
    }
  }
  assert( n==b->nPending );
  assert( nHit==b->nHitPending );
  assert( b->nMissPending>=0 && b->nHitLoose>=0 );
  if( !b->bInTxn ){
    assert( b->nFlushed==0 && b->nCount==0 && b->iLevel==-1 );
    assert( b->nSnap==0 && b->eCfg!=CACHE_CFG_DIRTY );
    assert( b->iSnapLow==INT_MAX );
  }else{
    assert( !b->bDropTxn );
  }
  assert( b->bDropTxn || b->iDropSeq==LLONG_MAX );
  assert( !b->bDropTxn || b->eCfg==CACHE_CFG_NONE );
  for(i=0; i<b->nSnap; i++){
    assert( b->aSnap[i].iLevel<=b->iLevel );
    assert( b->aSnap[i].iLevel>=b->iSnapLow );
    assert( i==0 || b->aSnap[i-1].iLevel<b->aSnap[i].iLevel );
  }
  for(i=b->iLevel+2; i<b->nLevelSeq; i++) assert( b->aLevelSeq[i]<0 );
  for(i=0; i<b->nFlushed; i++) assert( b->aFlushed[i].iLevel<=b->iLevel );
  for(i=0; i<b->nCount; i++) assert( b->aCount[i].iLevel<=b->iLevel );
}
#else
# define cacheBufferCheck(b)
#endif

static cache_buffer *cacheBufferNew(void){
  cache_buffer *b = sqlite3_malloc64(sizeof(*b));
  if( b ){
    memset(b, 0, sizeof(*b));
    b->iLevel = -1;
    b->iSnapLow = INT_MAX;
    b->iDropSeq = LLONG_MAX;
  }
  return b;
}

static void cacheBufferFree(cache_buffer *b){
  if( b ){
    sqlite3_free(b->aPending);
    sqlite3_free(b->aHash);
    sqlite3_free(b->aFlushed);
    sqlite3_free(b->aCount);
    sqlite3_free(b->aLevelSeq);
    sqlite3_free(b->aSnap);
    sqlite3_free(b);
  }
}

static int cacheBufferEmpty(const cache_buffer *b){
  return b==0 || (b->nPending==0 && b->nMissPending==0 && b->nHitLoose==0
                  && b->nFlushed==0
                  && b->nCount==0);
}

/* Must b outlive its vtab instance (parked, for the next instance of the
** table to adopt)?  Yes while it holds anything, or the state of an open
** transaction: its savepoint copies, and a config row not yet written. */
static int cacheBufferKeep(const cache_buffer *b){
  return !cacheBufferEmpty(b)
      || (b && (b->bInTxn || b->eCfg==CACHE_CFG_DIRTY || b->bDropTxn));
}

/* Does b hold anything not written yet? */
static int cacheBufferUnwritten(const cache_buffer *b){
  return b && (b->nPending || b->nMissPending || b->nHitLoose);
}

static cache_use *cacheBufferFind(const cache_buffer *b, i64 id){
  int i;
  if( b==0 || b->nHash==0 ) return 0;
  for(i=b->aHash[cacheHashSlot(b, id)]; i; i=b->aPending[i-1].iNext){
    if( b->aPending[i-1].id==id ) return &b->aPending[i-1];
  }
  return 0;
}

/* Rebuild the hash over aPending, with at least nWant slots. */
static int cacheHashRebuild(cache_buffer *b, int nWant){
  int i;
  if( nWant>b->nHash ){
    int nNew = b->nHash ? b->nHash : 64;
    int *aNew;
    while( nNew<nWant ) nNew *= 2;
    aNew = sqlite3_malloc64(sizeof(int)*(size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    sqlite3_free(b->aHash);
    b->aHash = aNew;
    b->nHash = nNew;
  }
  if( b->nHash ) memset(b->aHash, 0, sizeof(int)*(size_t)b->nHash);
  for(i=0; i<b->nPending; i++){
    unsigned h = cacheHashSlot(b, b->aPending[i].id);
    b->aPending[i].iNext = b->aHash[h];
    b->aHash[h] = i+1;
  }
  return SQLITE_OK;
}

/* A new pending use for id (not in the buffer yet), zeroed but for id, or
** 0 if out of memory. */
static cache_use *cacheBufferAdd(cache_buffer *b, i64 id){
  cache_use *pNew;
  unsigned h;
  if( b->nPending>=b->nPendingAlloc ){
    int nNew = b->nPendingAlloc ? b->nPendingAlloc*2 : 64;
    cache_use *aNew = sqlite3_realloc64(b->aPending,
                                        sizeof(cache_use)*(size_t)nNew);
    if( aNew==0 ) return 0;
    b->aPending = aNew;
    b->nPendingAlloc = nNew;
  }
  if( (b->nPending+1)*2 > b->nHash
   && cacheHashRebuild(b, (b->nPending+1)*2) ){
    return 0;
  }
  pNew = &b->aPending[b->nPending++];
  memset(pNew, 0, sizeof(*pNew));
  pNew->id = id;
  h = cacheHashSlot(b, id);
  pNew->iNext = b->aHash[h];
  b->aHash[h] = b->nPending;
  return pNew;
}

/* Record in b a use of entry id at time ms.  0 if out of memory (the use
** is lost, nothing else). */
static int cacheBufferUse(cache_buffer *b, i64 id, i64 ms){
  cache_use *u = cacheBufferFind(b, id);
  if( u==0 ){
    u = cacheBufferAdd(b, id);
    if( u==0 ) return 0;
  }
  u->ms = ms;
  u->nHit++;
  u->iSeq = ++b->iUseSeq;
  b->nHitPending++;
  return 1;
}

/* The uses written by a flush are part of the database now: keep them,
** inside a transaction, until it ends (a rollback puts them back; if that
** cannot be kept, out of memory, a rollback loses these uses, nothing
** else), and empty the buffer. */
static void cacheBufferWritten(cache_buffer *b){
  if( b->bInTxn && b->nPending ){
    if( b->nFlushed+b->nPending > b->nFlushedAlloc ){
      int nNew = b->nFlushedAlloc ? b->nFlushedAlloc : 64;
      cache_use *aNew;
      while( nNew<b->nFlushed+b->nPending ) nNew *= 2;
      aNew = sqlite3_realloc64(b->aFlushed, sizeof(cache_use)*(size_t)nNew);
      if( aNew ){
        b->aFlushed = aNew;
        b->nFlushedAlloc = nNew;
      }
    }
    if( b->nFlushed+b->nPending <= b->nFlushedAlloc ){
      int i;
      for(i=0; i<b->nPending; i++){
        b->aFlushed[b->nFlushed] = b->aPending[i];
        b->aFlushed[b->nFlushed].iLevel = b->iLevel;
        b->nFlushed++;
      }
    }
  }
  if( b->bInTxn && (b->nMissPending || b->nHitLoose) ){
    if( b->nCount==b->nCountAlloc ){
      int nNew = b->nCountAlloc ? b->nCountAlloc*2 : 8;
      cache_count *aNew = sqlite3_realloc64(b->aCount,
                                            sizeof(cache_count)*(size_t)nNew);
      if( aNew ){
        b->aCount = aNew;
        b->nCountAlloc = nNew;
      }
    }
    if( b->nCount<b->nCountAlloc ){
      b->aCount[b->nCount].iLevel = b->iLevel;
      b->aCount[b->nCount].nMiss = b->nMissPending;
      b->aCount[b->nCount].nHit = b->nHitLoose;
      b->nCount++;
    }
  }
  if( b->nPending ){
    b->nPending = 0;
    memset(b->aHash, 0, sizeof(int)*(size_t)b->nHash);
  }
  b->nHitPending = 0;
  b->nMissPending = 0;
  b->nHitLoose = 0;
  cacheBufferCheck(b);
}

/* A write is starting at seq: the first at its savepoint level notes it
** (the start of what a rollback to that level undoes). */
static void cacheBufferNoteWrite(cache_buffer *b, i64 seq){
  int k;
  if( b==0 || !b->bInTxn ) return;
  k = b->iLevel + 1;
  if( k>=b->nLevelSeq ){
    int nNew = k + 8, i;
    i64 *aNew = sqlite3_realloc64(b->aLevelSeq, sizeof(i64)*(size_t)nNew);
    if( aNew==0 ){
      b->bLevelLost = 1;
      return;
    }
    for(i=b->nLevelSeq; i<nNew; i++) aNew[i] = -1;
    b->aLevelSeq = aNew;
    b->nLevelSeq = nNew;
  }
  if( b->aLevelSeq[k]<0 ) b->aLevelSeq[k] = seq;
}

/* Is b still under the mark of a DROP TABLE (bDropTxn)?  Not once the
** connection is seen outside a transaction: it is past that one. */
static int cacheDropEnd(cache_vtab *p, cache_buffer *b){
  if( b->bDropTxn && sqlite3_get_autocommit(p->db) ){
    b->bDropTxn = 0;
    b->iDropSeq = LLONG_MAX;
  }
  return b->bDropTxn;
}

/* Forget what savepoint levels iLevel and deeper noted; the least of it. */
static i64 cacheBufferLevelSeq(cache_buffer *b, int iLevel){
  i64 s = -1;
  int k;
  for(k=iLevel+1; k<b->nLevelSeq; k++){
    if( k>=0 && b->aLevelSeq[k]>=0 ){
      if( s<0 || b->aLevelSeq[k]<s ) s = b->aLevelSeq[k];
      b->aLevelSeq[k] = -1;
    }
  }
  return s;
}

/* A rollback to savepoint level iLevel (-1: of the transaction): put uses
** written at that level or deeper back in the buffer, where they keep
** their use counter values, all lower than those of the uses buffered
** since, so the next flush writes them first; and drop every use of an
** entry made in the part rolled back (id above the seq it began at).
** Returns that bound: LLONG_MAX if nothing was written there, -1 if it is
** not known (every use dropped). */
static i64 cacheBufferRollback(cache_buffer *b, int iLevel){
  i64 iMaxId = cacheBufferLevelSeq(b, iLevel);
  int i, j;
  if( iMaxId<0 ) iMaxId = LLONG_MAX;   /* nothing was written there */
  if( b->bLevelLost ) iMaxId = -1;     /* not known: keep none */
  for(i=j=0; i<b->nFlushed; i++){
    cache_use *pF = &b->aFlushed[i];
    if( pF->iLevel<iLevel ){
      b->aFlushed[j++] = *pF;
    }else if( pF->id>iMaxId ){
      b->nHitLoose += pF->nHit;        /* its entry is gone; reads stay */
    }else{
      cache_use *pSame = cacheBufferFind(b, pF->id);
      if( pSame==0 ){
        pSame = cacheBufferAdd(b, pF->id);
        if( pSame ){
          pSame->ms = pF->ms;
          pSame->iSeq = pF->iSeq;
        }
      }
      if( pSame ){
        /* the same id may have been written more than once: latest wins */
        if( pF->iSeq>pSame->iSeq ){
          pSame->iSeq = pF->iSeq;
          pSame->ms = pF->ms;
        }
        pSame->nHit += pF->nHit;
        b->nHitPending += pF->nHit;
      }
    }
  }
  b->nFlushed = j;
  for(i=j=0; i<b->nPending; i++){
    if( b->aPending[i].id<=iMaxId ){
      b->aPending[j++] = b->aPending[i];
    }else{
      b->nHitPending -= b->aPending[i].nHit;
      b->nHitLoose += b->aPending[i].nHit;
    }
  }
  if( j<b->nPending ){
    b->nPending = j;
    cacheHashRebuild(b, 0);     /* no allocation: cannot fail */
  }
  for(i=j=0; i<b->nCount; i++){
    if( b->aCount[i].iLevel>=iLevel ){
      b->nMissPending += b->aCount[i].nMiss;
      b->nHitLoose += b->aCount[i].nHit;
    }else{
      b->aCount[j++] = b->aCount[i];
    }
  }
  b->nCount = j;
  return iMaxId;
}

static int cacheUseCmpSeq(const void *a, const void *b){
  i64 x = ((const cache_use*)a)->iSeq, y = ((const cache_use*)b)->iSeq;
  return x<y ? -1 : x>y;
}
static int cacheUseCmpId(const void *a, const void *b){
  i64 x = ((const cache_use*)a)->id, y = ((const cache_use*)b)->id;
  return x<y ? -1 : x>y;
}

/* ------------------------------------------------------- recency records */

/* A record is stored as 28 bytes, little-endian: id (8), used (8), ms
** (6, unsigned: a clock before 1970 counts as 0) and hits (6, at most
** 2^48-1).  Fixed width: a chunk is read and written with no parsing. */
#define CACHE_REC_BYTES 28
#define CACHE_MAX48     (((i64)1<<48)-1)

static void cachePut(unsigned char *a, u64 v, int n){
  int i;
  for(i=0; i<n; i++){ a[i] = (unsigned char)v; v >>= 8; }
}
static u64 cacheGet(const unsigned char *a, int n){
  u64 v = 0;
  int i;
  if( n==8 ){
    for(i=0; i<8; i++) v |= (u64)a[i] << (8*i);
    return v;
  }
  for(i=n-1; i>=0; i--) v = (v<<8) | a[i];
  return v;
}

/* Room for n records in the chunk. */
static int cacheChunkReserve(cache_chunk *c, int n){
  if( n>c->nAlloc ){
    int nNew = c->nAlloc ? c->nAlloc : 64;
    cache_rec *aNew;
    while( nNew<n ) nNew *= 2;
    aNew = sqlite3_realloc64(c->aRec, sizeof(cache_rec)*(size_t)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    c->aRec = aNew;
    c->nAlloc = nNew;
  }
  return SQLITE_OK;
}

/* Decode the blob of chunk lo into c.  SQLITE_CORRUPT_VTAB if it is not
** whole records with ascending ids, all at or after lo. */
static int cacheChunkDecode(cache_chunk *c, i64 lo, const unsigned char *a,
                            int n){
  int i, nRec = n/CACHE_REC_BYTES;
  c->lo = lo;
  c->nRec = 0;
  if( n%CACHE_REC_BYTES ) return SQLITE_CORRUPT_VTAB;
  if( cacheChunkReserve(c, nRec) ) return SQLITE_NOMEM;
  for(i=0; i<nRec; i++, a+=CACHE_REC_BYTES){
    cache_rec *r = &c->aRec[i];
    r->id = (i64)cacheGet(a, 8);
    r->used = (i64)cacheGet(a+8, 8);
    r->ms = (i64)cacheGet(a+16, 6);
    r->hits = (i64)cacheGet(a+22, 6);
    if( r->id<lo || (i>0 && r->id<=r[-1].id) || r->used<0 ){
      return SQLITE_CORRUPT_VTAB;
    }
  }
  c->nRec = nRec;
  return SQLITE_OK;
}

/* Encode records aRec[0..n) into a (room for CACHE_REC_BYTES each); the
** bytes written. */
static int cacheChunkEncode(const cache_rec *aRec, int n, unsigned char *a){
  int i;
  for(i=0; i<n; i++, a+=CACHE_REC_BYTES){
    i64 ms = aRec[i].ms<0 ? 0 : aRec[i].ms>CACHE_MAX48 ? CACHE_MAX48 : aRec[i].ms;
    i64 hits = aRec[i].hits>CACHE_MAX48 ? CACHE_MAX48 : aRec[i].hits;
    cachePut(a, (u64)aRec[i].id, 8);
    cachePut(a+8, (u64)aRec[i].used, 8);
    cachePut(a+16, (u64)ms, 6);
    cachePut(a+22, (u64)hits, 6);
  }
  return n*CACHE_REC_BYTES;
}

static void cacheChunkDropAll(cache_vtab *p){
  int i;
  for(i=0; i<CACHE_NCHUNK; i++) p->aChunk[i].bValid = 0;
}

/* What a connection holds of a table (decoded chunks in p->aChunk, the
** config row in the buffer) stays good while nothing else changes it:
** inside a transaction (its snapshot) until a rollback, and from one
** transaction to the next while the file's data version is the one seen
** at the end of the last (SQLITE_FCNTL_DATA_VERSION changes when another
** connection commits; this connection's own commits are noted at
** xCommit).  Called at the start of every read and write. */
static void cacheHeldValidate(cache_vtab *p, cache_buffer *b){
  unsigned v = 0;
  /* the version is current only once a read transaction has begun */
  if( sqlite3_txn_state(p->db, p->zDb)==SQLITE_TXN_NONE
   || sqlite3_file_control(p->db, p->zDb, SQLITE_FCNTL_DATA_VERSION, &v)
   || v!=b->iVersion ){
    b->iGen++;
    b->eCfg = CACHE_CFG_NONE;
    b->iVersion = v;
  }
}
static void cacheHeldCheck(cache_vtab *p){
  cache_buffer *b = p->pBuf;
  int i;
  if( b && !b->bInTxn ) cacheHeldValidate(p, b);
  for(i=0; i<CACHE_NCHUNK; i++){
    if( b==0 || p->aChunk[i].iGen!=b->iGen ) p->aChunk[i].bValid = 0;
  }
}

/* Load the chunk that holds id (ids >= 1) into one of p->aChunk: *ppC.
** The lo = 0 chunk always exists once the table is format 2. */
static int cacheChunkLoad(cache_op *op, i64 id, cache_chunk **ppC){
  cache_vtab *p = op->p;
  cache_chunk *c;
  sqlite3_stmt *pStmt;
  int rc, i;
  for(i=0; i<CACHE_NCHUNK; i++){
    c = &p->aChunk[i];
    if( c->bValid && c->lo<=id && id<c->hi ){
      *ppC = c;
      return SQLITE_OK;
    }
  }
  c = &p->aChunk[p->iChunkNext];
  p->iChunkNext = (p->iChunkNext+1) % CACHE_NCHUNK;
  c->bValid = 0;
  rc = cacheStmt(op, CACHE_STMT_CHUNK_FIND, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    rc = cacheChunkDecode(c, sqlite3_column_int64(pStmt, 0),
                          sqlite3_column_blob(pStmt, 1),
                          sqlite3_column_bytes(pStmt, 1));
    if( rc==SQLITE_CORRUPT_VTAB ){
      cacheOpFail(op, rc, "cache: the recency records of \"%w\" at %lld"
                  " are corrupt", p->zName, c->lo);
    }
    sqlite3_reset(pStmt);
    if( rc ) return cacheOpError(op, rc);
  }else{
    rc = sqlite3_reset(pStmt);
    if( rc ) return cacheOpError(op, rc);
    c->lo = 0;          /* no chunk yet: row 0 is made at the first write */
    c->nRec = 0;
  }
  rc = cacheStmt(op, CACHE_STMT_CHUNK_NEXT, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, c->lo);
  c->hi = sqlite3_step(pStmt)==SQLITE_ROW ? sqlite3_column_int64(pStmt, 0)
                                          : LLONG_MAX;
  rc = sqlite3_reset(pStmt);
  if( rc ) return cacheOpError(op, rc);
  c->bValid = 1;
  c->iGen = p->pBuf ? p->pBuf->iGen : 0;
  *ppC = c;
  return SQLITE_OK;
}

/* Write row lo of <t>_rec from aRec[0..n). */
static int cacheChunkWriteRow(cache_op *op, i64 lo, const cache_rec *aRec,
                              int n, unsigned char *aBuf){
  sqlite3_stmt *pStmt;
  int rc, i, nByte;
  i64 minUsed = LLONG_MAX;
  if( n==0 && lo!=0 ){
    rc = cacheStmt(op, CACHE_STMT_CHUNK_DELETE, &pStmt);
    if( rc ) return rc;
    sqlite3_bind_int64(pStmt, 1, lo);
    return cacheRun(op, pStmt);
  }
  rc = cacheStmt(op, CACHE_STMT_CHUNK_WRITE, &pStmt);
  if( rc ) return rc;
  for(i=0; i<n; i++){
    if( aRec[i].used<minUsed ) minUsed = aRec[i].used;
  }
  nByte = cacheChunkEncode(aRec, n, aBuf);
  sqlite3_bind_int64(pStmt, 1, lo);
  if( n ) sqlite3_bind_int64(pStmt, 2, minUsed);
  else sqlite3_bind_null(pStmt, 2);
  sqlite3_bind_blob(pStmt, 3, aBuf, nByte, SQLITE_STATIC);
  rc = cacheRun(op, pStmt);
  sqlite3_clear_bindings(pStmt);
  return rc;
}

/* Write chunk c back.  A chunk whose blob would pass nChunkMax bytes is
** split into rows of about half that; c then holds the first. */
static int cacheChunkSave(cache_op *op, cache_chunk *c){
  cache_vtab *p = op->p;
  unsigned char *aBuf;
  int rc = SQLITE_OK, i, j, nByte, nPiece, iRec;
  assert( c->bValid );
  /* records of entries evicted in order (used <= iLow) go now */
  for(i=j=0; i<c->nRec; i++){
    if( c->aRec[i].used>op->cfg.iLow ) c->aRec[j++] = c->aRec[i];
  }
  c->nRec = j;
  aBuf = sqlite3_malloc64((size_t)c->nRec*CACHE_REC_BYTES + 1);
  if( aBuf==0 ) return cacheOpError(op, SQLITE_NOMEM);
  nByte = c->nRec*CACHE_REC_BYTES;
  nPiece = nByte<=p->nChunkMax ? 1 : 1 + 2*nByte/p->nChunkMax;
  for(i=0, iRec=0; rc==SQLITE_OK && i<nPiece; i++){
    int iEnd = (int)((i64)c->nRec*(i+1)/nPiece);
    i64 lo = i==0 ? c->lo : c->aRec[iRec].id;
    rc = cacheChunkWriteRow(op, lo, c->aRec+iRec, iEnd-iRec, aBuf);
    iRec = iEnd;
  }
  sqlite3_free(aBuf);
  if( rc ){
    cacheChunkDropAll(p);
  }else if( nPiece>1 ){
    int nFirst = (int)((i64)c->nRec/nPiece);
    c->hi = c->aRec[nFirst].id;
    c->nRec = nFirst;
  }else if( c->nRec==0 && c->lo!=0 ){
    cacheChunkDropAll(p);  /* deleted: its ids go to the chunk before */
  }
  return rc;
}

/* The record of entry id in *pRec, if it has one (*pbFound). */
static int cacheRecFind(cache_op *op, i64 id, cache_rec *pRec, int *pbFound){
  cache_chunk *c = 0;
  int lo = 0, hi, rc = cacheChunkLoad(op, id, &c);
  *pbFound = 0;
  if( rc ) return rc;
  hi = c->nRec;
  while( lo<hi ){
    int mid = (lo+hi)/2;
    if( c->aRec[mid].id<id ) lo = mid+1; else hi = mid;
  }
  if( lo<c->nRec && c->aRec[lo].id==id ){
    *pRec = c->aRec[lo];
    *pbFound = 1;
  }
  return SQLITE_OK;
}

/* Merge records aNew[0..n) (sorted by id, distinct) into the chunks:
** a record for an id that has one replaces used and ms and adds hits. */
static int cacheRecMerge(cache_op *op, const cache_rec *aNew, int n){
  cache_chunk *c = 0;
  cache_rec *aOut = 0;
  int nOutAlloc = 0, i = 0, rc = SQLITE_OK;
  while( rc==SQLITE_OK && i<n ){
    int j, iOld = 0, nOut = 0;
    rc = cacheChunkLoad(op, aNew[i].id, &c);
    if( rc ) break;
    for(j=i; j<n && aNew[j].id<c->hi; j++){}
    if( c->nRec + (j-i) > nOutAlloc ){
      cache_rec *aNext;
      nOutAlloc = c->nRec + (j-i) + 64;
      aNext = sqlite3_realloc64(aOut, sizeof(cache_rec)*(size_t)nOutAlloc);
      if( aNext==0 ){ rc = cacheOpError(op, SQLITE_NOMEM); break; }
      aOut = aNext;
    }
    while( iOld<c->nRec || i<j ){
      if( i>=j || (iOld<c->nRec && c->aRec[iOld].id<aNew[i].id) ){
        aOut[nOut++] = c->aRec[iOld++];
      }else if( iOld<c->nRec && c->aRec[iOld].id==aNew[i].id ){
        aOut[nOut] = c->aRec[iOld++];
        aOut[nOut].used = aNew[i].used;
        aOut[nOut].ms = aNew[i].ms;
        aOut[nOut].hits += aNew[i].hits;
        nOut++;
        i++;
      }else{
        aOut[nOut++] = aNew[i++];
      }
    }
    rc = cacheChunkReserve(c, nOut);
    if( rc ){ cacheOpError(op, rc); break; }
    memcpy(c->aRec, aOut, sizeof(cache_rec)*(size_t)nOut);
    c->nRec = nOut;
    rc = cacheChunkSave(op, c);
  }
  sqlite3_free(aOut);
  return rc;
}

/* Drop the records of entries that are gone, from every chunk: deletes and
** sets of stored keys leave their entries' records behind (eviction meets
** them in time, but a table that never fills would keep them), so a write
** sweeps once op->cfg.nDead passes the entries (amortised: one existence
** check per entry gone). */
static int cacheSweep(cache_op *op){
  sqlite3_stmt *pNext, *pExists;
  i64 lo = -1;
  int rc = SQLITE_OK;
  while( rc==SQLITE_OK ){
    cache_chunk *c = 0;
    int i, j, bNext = 0;
    rc = cacheStmt(op, CACHE_STMT_CHUNK_NEXT, &pNext);
    if( rc ) break;
    sqlite3_bind_int64(pNext, 1, lo);
    if( sqlite3_step(pNext)==SQLITE_ROW ){
      lo = sqlite3_column_int64(pNext, 0);
      bNext = 1;
    }
    rc = cacheOpError(op, sqlite3_reset(pNext));
    if( rc || !bNext ) break;
    rc = cacheChunkLoad(op, lo, &c);
    if( rc==SQLITE_OK ) rc = cacheStmt(op, CACHE_STMT_EXISTS, &pExists);
    for(i=j=0; rc==SQLITE_OK && i<c->nRec; i++){
      int bLive = 0;
      if( c->aRec[i].used>op->cfg.iLow ){
        sqlite3_bind_int64(pExists, 1, c->aRec[i].id);
        bLive = sqlite3_step(pExists)==SQLITE_ROW;
        rc = cacheOpError(op, sqlite3_reset(pExists));
      }
      if( bLive ) c->aRec[j++] = c->aRec[i];
    }
    if( rc==SQLITE_OK && j<c->nRec ){
      c->nRec = j;
      rc = cacheChunkSave(op, c);
    }
  }
  if( rc==SQLITE_OK ) op->cfg.nDead = 0;
  return rc;
}

/* ------------------------------------------------------- config, format */

static void cacheAdopt(cache_vtab*, int);

/* The buffer that holds op's transaction state: p's, or its successor's
** if p is stale. */
static cache_buffer *cacheOpBuffer(cache_op *op){
  cache_vtab *p = op->p;
  if( p->bStale ) p = cacheSuccessor(p);
  return p ? p->pBuf : 0;
}

/* Is the config row at pStmt (CACHE_STMT_CONFIG_READ's columns) out of
** range?  A row edited by hand: the config read refuses it with
** SQLITE_CORRUPT_VTAB, and integrity_check reports it in the same words.
** capacity 1..2^62; bytes, entries, seq, hits, misses, evictions, expired,
** head, low and dead 0..2^62; all INTEGER (uid and policy are free; how
** head and low stand to seq is integrity_check's to judge). */
static int cacheConfigBad(sqlite3_stmt *pStmt){
  int i;
  for(i=0; i<13; i++){
    i64 v;
    if( sqlite3_column_type(pStmt, i)!=SQLITE_INTEGER ) return 1;
    if( i==8 || i==9 ) continue;                     /* uid, policy */
    v = sqlite3_column_int64(pStmt, i);
    if( v<(i==0) || v>CACHE_MAX_COUNTER ) return 1;
  }
  return 0;
}

/* The row at pStmt as integrity_check words it, for the message. */
static char *cacheConfigText(sqlite3_stmt *pStmt){
  static const char *const azName[] = {
    "capacity", "bytes", "entries", "seq", "hits", "misses", "evictions",
    "expired", 0, 0, "head", "low", "dead"
  };
  char *z = 0;
  int i;
  for(i=0; i<13; i++){
    if( azName[i]==0 ) continue;
    z = sqlite3_mprintf("%z%s%s %s", z, i ? ", " : "", azName[i],
                        (const char*)sqlite3_column_text(pStmt, i));
    if( z==0 ) break;
  }
  return z;
}

/* Read the config row into op->cfg: the transaction's copy if it holds
** one.  A uid that is not the one p was made for means the table under
** this name is another one (dropped and created again by another
** connection): p goes stale and its buffer with it. */
static int cacheConfigLoad(cache_op *op){
  cache_vtab *p = op->p;
  cache_config *pCfg = &op->cfg;
  cache_buffer *b = cacheOpBuffer(op);
  sqlite3_stmt *pStmt;
  int rc;
  if( b && b->eCfg!=CACHE_CFG_NONE ){
    *pCfg = b->cfg;
    return SQLITE_OK;
  }
  if( b ) cacheDropEnd(p, b);
  rc = cacheStmt(op, p->iFormat==1 ? CACHE_STMT_CONFIG_READ1
                                   : CACHE_STMT_CONFIG_READ, &pStmt);
  if( rc ) return rc;
  rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW && cacheConfigBad(pStmt) ){
    /* A row edited by hand: refused, never counted on (a counter at the
    ** int64 limit would overflow at the next set or use). */
    char *zRow = cacheConfigText(pStmt);
    sqlite3_reset(pStmt);
    rc = cacheOpFail(op, zRow ? SQLITE_CORRUPT_VTAB : SQLITE_NOMEM,
                     "cache: \"%w\".\"%w_config\": a counter is out of"
                     " range: %s", p->zDb, p->zName, zRow);
    sqlite3_free(zRow);
    return rc;
  }
  if( rc==SQLITE_ROW ){
    pCfg->capacity = sqlite3_column_int64(pStmt, 0);
    pCfg->bytes = sqlite3_column_int64(pStmt, 1);
    pCfg->entries = sqlite3_column_int64(pStmt, 2);
    pCfg->seq = sqlite3_column_int64(pStmt, 3);
    pCfg->hits = sqlite3_column_int64(pStmt, 4);
    pCfg->misses = sqlite3_column_int64(pStmt, 5);
    pCfg->evictions = sqlite3_column_int64(pStmt, 6);
    pCfg->expired = sqlite3_column_int64(pStmt, 7);
    pCfg->uid = sqlite3_column_int64(pStmt, 8);
    pCfg->ePolicy = sqlite3_column_int(pStmt, 9)==CACHE_POLICY_FIFO
                  ? CACHE_POLICY_FIFO : CACHE_POLICY_LRU;
    pCfg->iHead = sqlite3_column_int64(pStmt, 10);
    pCfg->iLow = sqlite3_column_int64(pStmt, 11);
    pCfg->nDead = sqlite3_column_int64(pStmt, 12);
    rc = cacheOpError(op, sqlite3_reset(pStmt));
    if( rc==SQLITE_OK ){
      if( p->uid<0 ){
        p->uid = pCfg->uid;
        if( p->bRegistered && !p->bStale && cacheBufferEmpty(p->pBuf) ){
          cacheAdopt(p, 0);
          b = p->pBuf;
          if( b && b->eCfg!=CACHE_CFG_NONE ){
            *pCfg = b->cfg;            /* the transaction's copy */
            return SQLITE_OK;
          }
        }
      }else if( p->uid!=pCfg->uid ){
        cacheSetStale(p);
        p->uid = pCfg->uid;
        b = 0;
      }
      p->ePolicy = pCfg->ePolicy;
      /* (under a DROP's mark the row may be a transaction's that no
      ** rollback of it would take from the buffer: read each time) */
      if( b && p->iFormat==2 && !b->bDropTxn ){
        b->cfg = *pCfg;
        b->eCfg = CACHE_CFG_CLEAN;
      }
    }
    return rc;
  }
  sqlite3_reset(pStmt);
  if( rc==SQLITE_DONE ){
    return cacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: the row of"
                       " \"%w\".\"%w_config\" is missing", p->zDb, p->zName);
  }
  return cacheOpError(op, rc);
}

/* Write cfg to the config row. */
static int cacheConfigWrite(cache_op *op, const cache_config *pCfg){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(op, CACHE_STMT_CONFIG_WRITE, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, pCfg->capacity);
  sqlite3_bind_int64(pStmt, 2, pCfg->bytes);
  sqlite3_bind_int64(pStmt, 3, pCfg->entries);
  sqlite3_bind_int64(pStmt, 4, pCfg->seq);
  sqlite3_bind_int64(pStmt, 5, pCfg->hits);
  sqlite3_bind_int64(pStmt, 6, pCfg->misses);
  sqlite3_bind_int64(pStmt, 7, pCfg->evictions);
  sqlite3_bind_int64(pStmt, 8, pCfg->expired);
  sqlite3_bind_int64(pStmt, 9, pCfg->iHead);
  sqlite3_bind_int64(pStmt, 10, pCfg->iLow);
  sqlite3_bind_int64(pStmt, 11, pCfg->nDead);
  return cacheRun(op, pStmt);
}

/* The end of a write: op->cfg is the config row now; inside a transaction
** it is written at xSync (cacheConfigSync). */
static int cacheConfigSave(cache_op *op){
  cache_buffer *b = cacheOpBuffer(op);
  int rc;
  if( b && b->bInTxn ){
    b->cfg = op->cfg;
    b->eCfg = CACHE_CFG_DIRTY;
    return SQLITE_OK;
  }
  rc = cacheConfigWrite(op, &op->cfg);
  if( b ){
    b->cfg = op->cfg;
    b->eCfg = rc ? CACHE_CFG_NONE : CACHE_CFG_CLEAN;
  }
  return rc;
}

/* Write the transaction's copy of the config row, if it is newer. */
static int cacheConfigSync(cache_op *op){
  cache_buffer *b = cacheOpBuffer(op);
  int rc = SQLITE_OK;
  if( b && b->eCfg==CACHE_CFG_DIRTY ){
    rc = cacheConfigWrite(op, &b->cfg);
    if( rc==SQLITE_OK ) b->eCfg = CACHE_CFG_CLEAN;
  }
  return rc;
}

/* Which format is the stored table: 2, or 1 (made by acorn 0.1, recency
** in <t>_lru)?  Format 2 has the head column in its config row: a probe
** that fails for want of memory says nothing, and is SQLITE_NOMEM. */
static int cacheFormatProbe(sqlite3 *db, const char *zDb, const char *zName,
                            int *piFormat){
  char *zSql = sqlite3_mprintf("SELECT head FROM \"%w\".\"%w_config\"",
                               zDb, zName);
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( (rc&0xff)==SQLITE_NOMEM ) return SQLITE_NOMEM;
  *piFormat = rc==SQLITE_OK ? 2 : 1;
  return SQLITE_OK;
}

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

/* Convert a format 1 table to format 2, inside the caller's write.  The
** statements of the old format are finalized (the schema changes). */
static int cacheUpgrade(cache_op *op){
  cache_vtab *p = op->p;
  sqlite3_stmt *pStmt = 0;
  cache_rec *aRec = 0;
  int nRec = 0, nAlloc = 0, rc;
  char *zSql;
  int iFormat = 1;
  if( p->iFormat!=1 ) return SQLITE_OK;
  rc = cacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
  if( rc ) return cacheOpError(op, rc);
  if( iFormat==2 ){
    p->iFormat = 2;          /* converted by another connection */
  }else{
    const char *d = p->zDb, *n = p->zName;
    zSql = sqlite3_mprintf(
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN policy INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN head INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN low INTEGER NOT NULL"
        " DEFAULT 0;"
        "ALTER TABLE \"%w\".\"%w_config\" ADD COLUMN dead INTEGER NOT NULL"
        " DEFAULT 0;"
        CACHE_REC_DDL,
        d, n, d, n, d, n, d, n, d, n, d, p->uid, n, d, n);
    if( zSql==0 ) return cacheOpError(op, SQLITE_NOMEM);
    rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
    if( rc ) return cacheOpError(op, rc);
    /* Entries used since their set have used != id in format 1. */
    zSql = sqlite3_mprintf("SELECT id, used, last_used, " CACHE_LRU1_HITS
                           " FROM \"%w\".\"%w_lru\" WHERE used<>id ORDER BY id",
                           d, n);
    if( zSql==0 ) return cacheOpError(op, SQLITE_NOMEM);
    rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      if( nRec==nAlloc ){
        cache_rec *aNew;
        nAlloc = nAlloc ? nAlloc*2 : 256;
        aNew = sqlite3_realloc64(aRec, sizeof(cache_rec)*(size_t)nAlloc);
        if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
        aRec = aNew;
      }
      aRec[nRec].id = sqlite3_column_int64(pStmt, 0);
      aRec[nRec].used = sqlite3_column_int64(pStmt, 1);
      aRec[nRec].ms = sqlite3_column_int64(pStmt, 2);
      aRec[nRec].hits = sqlite3_column_int64(pStmt, 3);
      nRec++;
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
    else sqlite3_finalize(pStmt);
    if( rc ){
      sqlite3_free(aRec);
      return cacheOpError(op, rc);
    }
    cacheFinalizeAll(p);
    p->iFormat = 2;
    cacheChunkDropAll(p);
    rc = cacheRecMerge(op, aRec, nRec);
    sqlite3_free(aRec);
    if( rc==SQLITE_OK ){
      zSql = sqlite3_mprintf("DELETE FROM \"%w\".\"%w_lru\"", d, n);
      rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
      sqlite3_free(zSql);
      if( rc ) return cacheOpError(op, rc);
    }
    if( rc ) return rc;
  }
  cacheFinalizeAll(p);
  return cacheConfigLoad(op);
}

/* The start of every write: the config row, and a format 1 table made
** format 2. */
static int cacheOpBegin(cache_op *op, cache_vtab *p){
  int rc;
  memset(op, 0, sizeof(*op));
  op->p = p;
  op->now = cacheNowMs();
  cacheHeldCheck(p);
  rc = cacheConfigLoad(op);
  if( rc==SQLITE_OK && p->iFormat==1 ) rc = cacheUpgrade(op);
  if( rc==SQLITE_OK ){
    cache_vtab *q = p->bStale ? cacheSuccessor(p) : p;
    if( q ) cacheBufferNoteWrite(q->pBuf, op->cfg.seq);
  }
  return rc;
}

/* ------------------------------------------------------- writing recency */

/* Write the buffered uses to the records, oldest first, and the counters
** to op->cfg, inside the caller's transaction.  The buffer itself is kept:
** cacheBufferWritten() retires it once the caller's write succeeded. */
static int cacheFlushWrite(cache_op *op){
  cache_buffer *b = op->p->pBuf;
  cache_rec *aRec;
  int rc, i;
  if( b==0 ) return SQLITE_OK;
  op->cfg.misses += b->nMissPending;
  op->cfg.hits += b->nHitLoose;
  if( b->nPending==0 ) return SQLITE_OK;
  cacheBufferCheck(b);
  /* Number the uses in the order they were made, then write them in id
  ** order: each chunk is read and written once. */
  qsort(b->aPending, (size_t)b->nPending, sizeof(cache_use), cacheUseCmpSeq);
  for(i=0; i<b->nPending; i++) b->aPending[i].iUsed = op->cfg.seq + 1 + i;
  op->cfg.seq += b->nPending;
  qsort(b->aPending, (size_t)b->nPending, sizeof(cache_use), cacheUseCmpId);
  rc = cacheHashRebuild(b, 0);
  if( rc ) return cacheOpError(op, rc);
  aRec = sqlite3_malloc64(sizeof(cache_rec)*(size_t)b->nPending);
  if( aRec==0 ) return cacheOpError(op, SQLITE_NOMEM);
  for(i=0; i<b->nPending; i++){
    aRec[i].id = b->aPending[i].id;
    aRec[i].used = b->aPending[i].iUsed;
    aRec[i].ms = b->aPending[i].ms;
    aRec[i].hits = b->aPending[i].nHit;
  }
  rc = cacheRecMerge(op, aRec, b->nPending);
  sqlite3_free(aRec);
  op->cfg.hits += b->nHitPending;
  return rc;
}

/* Is a statement that writes running on db? */
static int cacheWriterBusy(sqlite3 *db){
  sqlite3_stmt *pStmt = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    if( sqlite3_stmt_busy(pStmt) && !sqlite3_stmt_readonly(pStmt) ) return 1;
  }
  return 0;
}

/* Flush in a short transaction of its own, only when that cannot join or
** disturb the user's: autocommit mode, no writing statement running.  A
** format 1 table is converted only if no statement at all is running. */
/* Is the schema of p->zDb that p->db holds the one in the file?  If not,
** the next statement on it makes SQLite drop and load that schema again,
** which a flush at xDisconnect must not cause: sqlite3_close() disconnects
** virtual tables while it walks the schema's tables.  The cookie of the
** schema in memory is p3 of the Transaction opcode of a statement prepared
** on it (EXPLAIN lists it and runs nothing); PRAGMA schema_version reads the
** file's.  Called inside a transaction, so the answer holds. */
static int cacheSchemaCurrent(cache_vtab *p){
  sqlite3_stmt *pStmt = 0;
  i64 iMem = -1, iFile = -2;
  char *zSql = sqlite3_mprintf("EXPLAIN SELECT 1 FROM \"%w\".sqlite_schema",
                               p->zDb);
  if( zSql && sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    while( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zOp = (const char*)sqlite3_column_text(pStmt, 1);
      if( zOp && strcmp(zOp, "Transaction")==0 ){
        iMem = sqlite3_column_int64(pStmt, 4);
        break;
      }
    }
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  pStmt = 0;
  zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", p->zDb);
  if( zSql && sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    iFile = sqlite3_column_int64(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return iMem==iFile;
}

/* Flush in a short transaction of its own, only when that cannot join or
** disturb the user's: autocommit mode, no writing statement running.  With
** bIdle (xDisconnect: no statement at all is running) a format 1 table may
** be converted, and nothing is written unless the schema in memory is
** current.  The transaction is ours, so a failure ends it with a whole
** ROLLBACK, prepared before anything is written: a RELEASE can fail (busy,
** with a reader on a rollback journal; out of memory) and would leave the
** transaction open, with the connection's next statements inside it.
**
** Without bIdle the flush runs inside the step of another statement (a
** read of the table, cache_read).  Before SQLite 3.40, after an allocation
** fails there no statement steps (not even that ROLLBACK) until the outer
** one ends, and an outer statement that reads no table (SELECT
** cache_read(...)) then ends without rolling back: the transaction would
** stay open.  There the uses wait for the table's next write, 'flush' or
** close. */
static int cacheFlushStandalone(cache_vtab *p, int bIdle){
  sqlite3_stmt *pRollback = 0;
  cache_op op;
  int rc;
  if( !cacheBufferUnwritten(p->pBuf) || p->bStale ) return SQLITE_OK;
  if( !sqlite3_get_autocommit(p->db) || cacheWriterBusy(p->db) ){
    return SQLITE_BUSY;
  }
  cacheDropEnd(p, p->pBuf);     /* outside a transaction: past a DROP's */
  if( !bIdle && sqlite3_libversion_number()<3040000 ) return SQLITE_BUSY;
  if( p->iFormat==1 && !bIdle ) return SQLITE_BUSY;
  memset(&op, 0, sizeof(op));
  rc = sqlite3_prepare_v2(p->db, "ROLLBACK", -1, &pRollback, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(p->db, "SAVEPOINT acorn_cache_flush", 0, 0, 0);
  }
  if( rc==SQLITE_OK && bIdle && !cacheSchemaCurrent(p) ) rc = SQLITE_SCHEMA;
  if( rc==SQLITE_OK ) rc = cacheOpBegin(&op, p);
  if( rc==SQLITE_OK && p->bStale ) rc = SQLITE_ABORT;  /* nothing of ours */
  if( rc==SQLITE_OK ) rc = cacheFlushWrite(&op);
  if( rc==SQLITE_OK ) rc = cacheConfigSave(&op);
  if( rc==SQLITE_OK ) rc = sqlite3_exec(p->db, "RELEASE acorn_cache_flush", 0, 0, 0);
  if( rc==SQLITE_OK ){
    cacheBufferWritten(p->pBuf);
  }else{
    if( pRollback && !sqlite3_get_autocommit(p->db) ) sqlite3_step(pRollback);
    cacheChunkDropAll(p);
    if( p->pBuf ){
      p->pBuf->eCfg = CACHE_CFG_NONE;
      p->pBuf->iGen++;
    }
  }
  sqlite3_finalize(pRollback);
  /* Nobody reads this message: the caller carries on. */
  sqlite3_free(op.zErr);
  return rc;
}

/* Record a use of entry id at time ms (lru only). */
static void cacheTouch(cache_vtab *p, i64 id, i64 ms){
  if( p->ePolicy==CACHE_POLICY_FIFO ) return;
  if( p->bStale ){
    /* an instance that SQLite has replaced: its successor records it */
    p = cacheSuccessor(p);
    if( p==0 ) return;
  }
  if( p->pBuf==0 ) return;
  /* A use of an entry that the transaction a DROP TABLE took from this
  ** buffer may have made would outlive a rollback of it unseen, and land
  ** on the entry given that id next: not kept. */
  if( cacheDropEnd(p, p->pBuf) && id>p->pBuf->iDropSeq ) return;
  if( !cacheBufferUse(p->pBuf, id, ms) ) return;
  if( p->pBuf->nPending>=p->nNextFlush && p->bAutoflush ){
    if( cacheFlushStandalone(p, 0)==SQLITE_OK ){
      p->nNextFlush = p->nBufferMax;
    }else{
      p->nNextFlush = p->pBuf->nPending + p->nBufferMax;
    }
  }
}

/* ------------------------------------------------------- entry writes */

/* What a write needs of a stored entry to delete it.  FIND, HEAD and ENTRY
** all return these columns. */
typedef struct cache_entry cache_entry;
struct cache_entry {
  i64 id;
  int bExpires;         /* expires is not NULL */
  i64 iExpires;
  i64 nSize;            /* bytes of key and value */
};

/* Step pStmt (FIND, HEAD or ENTRY, bound), read its row into *pE if there
** is one (*pbFound), and reset it. */
static int cacheEntryStep(cache_op *op, sqlite3_stmt *pStmt, cache_entry *pE,
                          int *pbFound){
  *pbFound = sqlite3_step(pStmt)==SQLITE_ROW;
  if( *pbFound ){
    pE->id = sqlite3_column_int64(pStmt, 0);
    pE->bExpires = sqlite3_column_type(pStmt, 1)!=SQLITE_NULL;
    pE->iExpires = sqlite3_column_int64(pStmt, 1);
    pE->nSize = sqlite3_column_int64(pStmt, 2);
  }
  return cacheOpError(op, sqlite3_reset(pStmt));
}

/* Delete entry *pE.  Its record, if it has one, stays until eviction meets
** it or a sweep finds it dead (bNoRec: it has none; no sweep needs to
** look). */
static int cacheDeleteKnown(cache_op *op, const cache_entry *pE, int bNoRec){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(op, CACHE_STMT_DELETE, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, pE->id);
  rc = cacheRun(op, pStmt);
  if( rc==SQLITE_OK && pE->bExpires ){
    rc = cacheStmt(op, CACHE_STMT_EXPIRY_DEL, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, pE->iExpires);
      sqlite3_bind_int64(pStmt, 2, pE->id);
      rc = cacheRun(op, pStmt);
    }
  }
  if( !bNoRec && op->cfg.ePolicy==CACHE_POLICY_LRU ) op->cfg.nDead++;
  op->cfg.bytes -= pE->nSize;
  op->cfg.entries--;
  return rc;
}

/* Read entry id into *pE if it exists (*pbFound). */
static int cacheEntryRead(cache_op *op, i64 id, cache_entry *pE, int *pbFound){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(op, CACHE_STMT_ENTRY, &pStmt);
  *pbFound = 0;
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, id);
  return cacheEntryStep(op, pStmt, pE, pbFound);
}

/* Delete entry id if it exists (*pbFound). */
static int cacheDeleteEntry(cache_op *op, i64 id, int *pbFound){
  cache_entry e;
  int rc = cacheEntryRead(op, id, &e, pbFound);
  if( rc || !*pbFound ) return rc;
  return cacheDeleteKnown(op, &e, 0);
}

/* Reclaim every entry that expired at or before op->now. */
static int cacheReclaimExpired(cache_op *op){
  sqlite3_stmt *pStmt;
  int rc;
  for(;;){
    i64 id;
    int bFound = 0;
    rc = cacheStmt(op, CACHE_STMT_EXPIRED, &pStmt);
    if( rc ) break;
    sqlite3_bind_int64(pStmt, 1, op->now);
    if( sqlite3_step(pStmt)!=SQLITE_ROW ){
      rc = cacheOpError(op, sqlite3_reset(pStmt));
      break;
    }
    id = sqlite3_column_int64(pStmt, 0);
    rc = cacheOpError(op, sqlite3_reset(pStmt));
    if( rc==SQLITE_OK ) rc = cacheDeleteEntry(op, id, &bFound);
    if( rc ) break;
    if( !bFound ){
      return cacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: \"%w\".\"%w_expiry\""
                         " names entry %lld, which does not exist",
                         op->p->zDb, op->p->zName, id);
    }
    op->cfg.expired++;
  }
  return rc;
}

/* The chunk of <t>_rec with the least live recency (used > iLow), and that
** record: *ppC 0 if no chunk has one. */
static int cacheOldestRecord(cache_op *op, cache_chunk **ppC, cache_rec *pRec){
  sqlite3_stmt *pStmt;
  i64 lo = -1;
  int rc = cacheStmt(op, CACHE_STMT_CHUNK_OLDEST, &pStmt);
  *ppC = 0;
  if( rc ) return rc;
  if( sqlite3_step(pStmt)==SQLITE_ROW ) lo = sqlite3_column_int64(pStmt, 0);
  rc = cacheOpError(op, sqlite3_reset(pStmt));
  if( rc==SQLITE_OK && lo>=0 ){
    cache_chunk *c = 0;
    int i, bFound = 0;
    rc = cacheChunkLoad(op, lo, &c);
    for(i=0; rc==SQLITE_OK && i<c->nRec; i++){
      const cache_rec *r = &c->aRec[i];
      if( r->used>op->cfg.iLow && (!bFound || r->used<pRec->used) ){
        *pRec = *r;
        bFound = 1;
      }
    }
    if( rc==SQLITE_OK && !bFound ){
      return cacheOpFail(op, SQLITE_CORRUPT_VTAB, "cache: chunk %lld of"
                         " \"%w\" has a minused but no live record", lo,
                         op->p->zName);
    }
    *ppC = c;
  }
  return rc;
}

/* Eviction has reached record r of chunk c (its entry evicted, or found
** gone): the watermark iLow moves to it, and c's minused to the next live
** record, or c goes if none is left (but chunk 0). */
static int cacheOldestPassed(cache_op *op, cache_chunk *c, i64 used){
  sqlite3_stmt *pStmt;
  i64 minUsed = LLONG_MAX;
  int i, rc;
  op->cfg.iLow = used;
  for(i=0; i<c->nRec; i++){
    if( c->aRec[i].used>used && c->aRec[i].used<minUsed ){
      minUsed = c->aRec[i].used;
    }
  }
  if( minUsed==LLONG_MAX && c->lo!=0 ){
    rc = cacheStmt(op, CACHE_STMT_CHUNK_DELETE, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, c->lo);
      rc = cacheRun(op, pStmt);
    }
    cacheChunkDropAll(op->p);       /* its ids go to the chunk before */
    return rc;
  }
  rc = cacheStmt(op, CACHE_STMT_CHUNK_SETMIN, &pStmt);
  if( rc ) return rc;
  sqlite3_bind_int64(pStmt, 1, c->lo);
  if( minUsed==LLONG_MAX ) sqlite3_bind_null(pStmt, 2);
  else sqlite3_bind_int64(pStmt, 2, minUsed);
  return cacheRun(op, pStmt);
}

/* Evict one entry: the one of least recency (lru) or the oldest (fifo).
** *pbNone if there is none. */
static int cacheEvictOne(cache_op *op, int *pbNone){
  int bLru = op->cfg.ePolicy==CACHE_POLICY_LRU;
  sqlite3_stmt *pStmt;
  int rc;
  for(;;){
    cache_entry eA, eB;
    int bA = 0, bFound = 0;
    cache_rec rB = {0, 0, 0, 0};
    cache_chunk *cB = 0;
    /* A: the first entry at or after head never used since its set */
    for(;;){
      cache_rec r;
      int bRec = 0;
      rc = cacheStmt(op, CACHE_STMT_HEAD, &pStmt);
      if( rc ) return rc;
      sqlite3_bind_int64(pStmt, 1, op->cfg.iHead);
      rc = cacheEntryStep(op, pStmt, &eA, &bA);
      if( rc || !bA || !bLru ) break;
      rc = cacheRecFind(op, eA.id, &r, &bRec);
      if( rc || !bRec ) break;
      op->cfg.iHead = eA.id + 1;   /* used since its set: its record counts */
      bA = 0;
    }
    if( rc ) return rc;
    /* B: the entry with the least recency among those with a record */
    if( bLru ){
      rc = cacheOldestRecord(op, &cB, &rB);
      if( rc ) return rc;
    }
    if( !bA && cB==0 ){
      *pbNone = 1;
      return SQLITE_OK;
    }
    if( bA && (cB==0 || eA.id<rB.used) ){
      op->cfg.iHead = eA.id + 1;
      return cacheDeleteKnown(op, &eA, 1);
    }
    /* B, unless its entry is gone (deleted or set again since: its
    ** record was left for eviction to meet) */
    rc = cacheEntryRead(op, rB.id, &eB, &bFound);
    if( rc==SQLITE_OK ) rc = cacheOldestPassed(op, cB, rB.used);
    if( rc==SQLITE_OK && bFound ) return cacheDeleteKnown(op, &eB, 1);
    if( rc ) return rc;
    if( op->cfg.nDead>0 ) op->cfg.nDead--;
  }
}

/* Evict until nNeed more bytes fit. */
static int cacheEvict(cache_op *op, i64 nNeed){
  int bNone = 0, rc = SQLITE_OK;
  while( rc==SQLITE_OK && !bNone && op->cfg.bytes + nNeed > op->cfg.capacity
      && op->cfg.entries>0 ){
    rc = cacheEvictOne(op, &bNone);
    if( rc==SQLITE_OK && !bNone ) op->cfg.evictions++;
  }
  return rc;
}

/* Store key -> value as a new entry, the most recent one, replacing any
** entry that has the key.  Expired entries are reclaimed first;
** entries are evicted after, until the capacity holds: the entry just set
** is the most recent, so it is never among them.  nHits > 0 (an UPDATE
** keeps the hits) gives it a record.  The new id in *pId. */
static int cacheSet(
  cache_op *op, sqlite3_value *pKey, sqlite3_value *pValue,
  int bExpires, i64 iExpires, i64 nSize, i64 iCreated, i64 nHits, i64 *pId
){
  sqlite3_stmt *pStmt;
  cache_entry eOld;
  i64 id;
  int bOld = 0;
  int rc = cacheReclaimExpired(op);
  if( rc==SQLITE_OK ) rc = cacheStmt(op, CACHE_STMT_FIND, &pStmt);
  if( rc ) return rc;
  cacheBindKey(pStmt, 1, pKey);
  rc = cacheEntryStep(op, pStmt, &eOld, &bOld);
  if( rc==SQLITE_OK && bOld ) rc = cacheDeleteKnown(op, &eOld, 0);
  if( rc ) return rc;
  id = ++op->cfg.seq;
  rc = cacheStmt(op, CACHE_STMT_INSERT, &pStmt);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, id);
    cacheBindKey(pStmt, 2, pKey);
    sqlite3_bind_int64(pStmt, 3, iCreated);
    if( bExpires ) sqlite3_bind_int64(pStmt, 4, iExpires);
    else sqlite3_bind_null(pStmt, 4);
    sqlite3_bind_value(pStmt, 5, pValue);
    rc = cacheRun(op, pStmt);
    sqlite3_clear_bindings(pStmt);     /* do not keep the value alive */
  }
  if( rc==SQLITE_OK && bExpires ){
    rc = cacheStmt(op, CACHE_STMT_EXPIRY_ADD, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, iExpires);
      sqlite3_bind_int64(pStmt, 2, id);
      rc = cacheRun(op, pStmt);
    }
  }
  if( rc==SQLITE_OK && nHits>0 && op->cfg.ePolicy==CACHE_POLICY_LRU ){
    cache_rec r;
    r.id = id;
    r.used = id;
    r.ms = op->now;
    r.hits = nHits;
    rc = cacheRecMerge(op, &r, 1);
  }
  op->cfg.bytes += nSize;
  op->cfg.entries++;
  if( rc==SQLITE_OK ) rc = cacheEvict(op, 0);
  *pId = id;
  return rc;
}

/* ------------------------------------------------------- integrity */

/* The invariants of the stored table that SQL can check, each a query that
** returns a row (its message) when broken.  Formatted as aCacheStmt's. */
static const char *const azCacheCheck[] = {
  "SELECT 'the config table has ' || n || ' rows, not 1' FROM (SELECT"
  " count(*) AS n, min(id) AS m FROM \"%w\".\"%w_config\") WHERE n!=1 OR m!=1",
  "SELECT 'a counter is out of range: capacity ' || capacity || ', bytes '"
  " || bytes || ', entries ' || entries || ', seq ' || seq || ', hits ' ||"
  " hits || ', misses ' || misses || ', evictions ' || evictions ||"
  " ', expired ' || expired FROM \"%w\".\"%w_config\" WHERE capacity<1"
  " OR bytes<0 OR entries<0 OR seq<0 OR hits<0 OR misses<0 OR evictions<0"
  " OR expired<0 OR max(capacity, bytes, entries, seq, hits, misses,"
  "   evictions, expired)>4611686018427387904"     /* CACHE_MAX_COUNTER */
  " OR typeof(capacity)||typeof(bytes)||typeof(entries)||typeof(seq)"
  "    ||typeof(hits)||typeof(misses)||typeof(evictions)||typeof(expired)"
  "    !='integerintegerintegerintegerintegerintegerintegerinteger'",
  "SELECT 'bytes is ' || bytes || ', above the capacity of ' || capacity"
  " FROM \"%w\".\"%w_config\" WHERE bytes>capacity",
  "SELECT 'entries is ' || c.entries || ' but the data table holds ' ||"
  " (SELECT count(*) FROM \"%w\".\"%w_data\") || ' rows'"
  " FROM \"%w\".\"%w_config\" c"
  " WHERE c.entries!=(SELECT count(*) FROM \"%w\".\"%w_data\")",
  "SELECT 'entry ' || id || ' has a key of type ' || typeof(key) ||"
  " ' and a value of type ' || typeof(value) FROM \"%w\".\"%w_data\""
  " WHERE typeof(key) NOT IN ('integer','text','blob')"
  " OR typeof(value) NOT IN ('text','blob')"
  " OR typeof(created)!='integer'"
  " OR typeof(expires) NOT IN ('integer','null') LIMIT 1",
  "SELECT 'bytes is ' || c.bytes || ' but the entries'' sizes sum to ' ||"
  " (SELECT coalesce(sum(" CACHE_SIZE_SQL "),0) FROM \"%w\".\"%w_data\")"
  " FROM \"%w\".\"%w_config\" c WHERE c.bytes!="
  " (SELECT coalesce(sum(" CACHE_SIZE_SQL "),0) FROM \"%w\".\"%w_data\")",
  "SELECT 'seq ' || c.seq || ' is below the id ' || m FROM"
  " \"%w\".\"%w_config\" c, (SELECT max(id) AS m FROM \"%w\".\"%w_data\")"
  " WHERE c.seq<m",
  "SELECT 'the expiry table and the entries'' expires disagree at entry ' ||"
  " id FROM (SELECT expires, id FROM \"%w\".\"%w_expiry\" EXCEPT"
  " SELECT expires, id FROM \"%w\".\"%w_data\" WHERE expires IS NOT NULL"
  " UNION ALL SELECT * FROM (SELECT expires, id FROM \"%w\".\"%w_data\""
  " WHERE expires IS NOT NULL EXCEPT SELECT expires, id"
  " FROM \"%w\".\"%w_expiry\")) LIMIT 1",
};
/* Format 2 only. */
static const char *const azCacheCheck2[] = {
  "SELECT 'policy ' || policy || ', head ' || head || ', low ' || low ||"
  " ' or dead ' || dead || ' is out of range'"
  " FROM \"%w\".\"%w_config\" WHERE policy NOT IN (0,1) OR head<0"
  " OR head>seq+1 OR typeof(head)!='integer' OR low<0 OR low>seq"
  " OR typeof(low)!='integer' OR dead<0 OR dead>4611686018427387904"
  " OR typeof(dead)!='integer'",
  "SELECT 'the records have no chunk 0' WHERE NOT EXISTS"
  " (SELECT 1 FROM \"%w\".\"%w_rec\" WHERE lo=0)",
};

/* Run one check query; a row is the broken invariant, into *pzErr. */
static int cacheCheckQuery(cache_vtab *p, const char *zFmt, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  const char *d = p->zDb, *n = p->zName;
  char *zSql = sqlite3_mprintf(zFmt, d, n, d, n, d, n, d, n, d, n);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    *pzErr = sqlite3_mprintf("%s", sqlite3_column_text(pStmt, 0));
    rc = SQLITE_CORRUPT_VTAB;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  return rc;
}

static int cacheI64Cmp(const void *a, const void *b){
  i64 x = *(const i64*)a, y = *(const i64*)b;
  return x<y ? -1 : x>y;
}

/* The invariants of the records: each chunk well formed, its records in
** its range and ascending, minused their least used, every used distinct
** and within (id, seq], and every live entry below head recorded. */
static int cacheCheckRecords(cache_vtab *p, char **pzErr){
  cache_chunk c;
  sqlite3_stmt *pStmt = 0, *pData = 0;
  i64 *aUsed = 0, *aId = 0, seq = 0, iHead = 0, iLow = 0, iPrevLo = -1;
  int nRecAll = 0, nAlloc = 0, ePolicy = 0, i, rc;
  char *zSql;
  memset(&c, 0, sizeof(c));
  zSql = sqlite3_mprintf("SELECT seq, head, policy, low FROM"
                         " \"%w\".\"%w_config\"", p->zDb, p->zName);
  rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    seq = sqlite3_column_int64(pStmt, 0);
    iHead = sqlite3_column_int64(pStmt, 1);
    ePolicy = sqlite3_column_int(pStmt, 2);
    iLow = sqlite3_column_int64(pStmt, 3);
  }
  sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc==SQLITE_OK ){
    zSql = sqlite3_mprintf("SELECT lo, minused, recs FROM \"%w\".\"%w_rec\""
                           " ORDER BY lo", p->zDb, p->zName);
    rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    i64 lo = sqlite3_column_int64(pStmt, 0);
    i64 minUsed = LLONG_MAX;
    int bNull = sqlite3_column_type(pStmt, 1)==SQLITE_NULL;
    rc = cacheChunkDecode(&c, lo, sqlite3_column_blob(pStmt, 2),
                          sqlite3_column_bytes(pStmt, 2));
    if( rc==SQLITE_CORRUPT_VTAB ){
      *pzErr = sqlite3_mprintf("the records of chunk %lld cannot be decoded",
                               lo);
      break;
    }
    if( rc ) break;
    if( iPrevLo>=0 && nRecAll>0 && aId[nRecAll-1]>=lo ){
      *pzErr = sqlite3_mprintf("chunk %lld holds entry %lld, which belongs"
                               " to chunk %lld", iPrevLo, aId[nRecAll-1], lo);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( c.nRec==0 && lo!=0 ){
      *pzErr = sqlite3_mprintf("chunk %lld is empty", lo);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( c.nRec>0 && ePolicy==CACHE_POLICY_FIFO ){
      *pzErr = sqlite3_mprintf("chunk %lld holds records under fifo", lo);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    if( nRecAll+c.nRec>nAlloc ){
      i64 *a1, *a2;
      nAlloc = (nRecAll+c.nRec)*2 + 64;
      a1 = sqlite3_realloc64(aUsed, sizeof(i64)*(size_t)nAlloc);
      if( a1 ) aUsed = a1;
      a2 = sqlite3_realloc64(aId, sizeof(i64)*(size_t)nAlloc);
      if( a2 ) aId = a2;
      if( a1==0 || a2==0 ){ rc = SQLITE_NOMEM; break; }
    }
    for(i=0; i<c.nRec; i++){
      const cache_rec *r = &c.aRec[i];
      if( r->used<r->id || r->used>seq ){
        *pzErr = sqlite3_mprintf("entry %lld has recency %lld, outside"
                                 " [%lld, %lld]", r->id, r->used, r->id, seq);
        rc = SQLITE_CORRUPT_VTAB;
        break;
      }
      if( r->used>iLow && r->used<minUsed ) minUsed = r->used;
      aUsed[nRecAll] = r->used;
      aId[nRecAll] = r->id;
      nRecAll++;
    }
    if( rc ) break;
    if( bNull!=(minUsed==LLONG_MAX)
     || (!bNull && sqlite3_column_int64(pStmt, 1)!=minUsed) ){
      char zWant[32];
      sqlite3_snprintf(sizeof(zWant), zWant, minUsed==LLONG_MAX ? "NULL"
                       : "%lld", minUsed);
      *pzErr = sqlite3_mprintf("chunk %lld has minused %s, not %s", lo,
          (const char*)sqlite3_column_text(pStmt, 1)
            ? (const char*)sqlite3_column_text(pStmt, 1) : "NULL", zWant);
      rc = SQLITE_CORRUPT_VTAB;
      break;
    }
    iPrevLo = lo;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && nRecAll>1 ){
    i64 *aSorted = sqlite3_malloc64(sizeof(i64)*(size_t)nRecAll);
    if( aSorted==0 ){
      rc = SQLITE_NOMEM;
    }else{
      memcpy(aSorted, aUsed, sizeof(i64)*(size_t)nRecAll);
      qsort(aSorted, (size_t)nRecAll, sizeof(i64), cacheI64Cmp);
      for(i=1; i<nRecAll; i++){
        if( aSorted[i]==aSorted[i-1] ){
          *pzErr = sqlite3_mprintf("recency %lld is held by two entries",
                                   aSorted[i]);
          rc = SQLITE_CORRUPT_VTAB;
          break;
        }
      }
      sqlite3_free(aSorted);
    }
  }
  if( rc==SQLITE_OK && ePolicy==CACHE_POLICY_LRU ){
    /* every live entry below head has a record of recency above low, and
    ** no live entry one at or below low; aId is ascending */
    zSql = sqlite3_mprintf("SELECT id FROM \"%w\".\"%w_data\" ORDER BY id",
                           p->zDb, p->zName);
    rc = zSql ? sqlite3_prepare_v2(p->db, zSql, -1, &pData, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc==SQLITE_OK ){
      int k = 0;
      while( sqlite3_step(pData)==SQLITE_ROW ){
        i64 id = sqlite3_column_int64(pData, 0);
        int bRec;
        while( k<nRecAll && aId[k]<id ) k++;
        bRec = k<nRecAll && aId[k]==id;
        if( bRec && aUsed[k]<=iLow ){
          *pzErr = sqlite3_mprintf("entry %lld has recency %lld, at or below"
                                   " low %lld", id, aUsed[k], iLow);
          rc = SQLITE_CORRUPT_VTAB;
          break;
        }
        if( id<iHead && !bRec ){
          *pzErr = sqlite3_mprintf("entry %lld is below head %lld but has no"
                                   " record", id, iHead);
          rc = SQLITE_CORRUPT_VTAB;
          break;
        }
      }
      if( rc==SQLITE_OK ) rc = sqlite3_finalize(pData);
      else sqlite3_finalize(pData);
    }
  }
  sqlite3_free(aUsed);
  sqlite3_free(aId);
  sqlite3_free(c.aRec);
  return rc;
}

/* Check every invariant of the stored table.  SQLITE_OK if they hold;
** SQLITE_CORRUPT_VTAB with *pzErr (sqlite3_free it) naming the first
** broken one; another code, with *pzErr, for an error while reading. */
static int cacheIntegrity(cache_vtab *p, char **pzErr){
  char *zWhat = 0;
  size_t i;
  int rc = SQLITE_OK;
  *pzErr = 0;
  for(i=0; rc==SQLITE_OK && i<sizeof(azCacheCheck)/sizeof(azCacheCheck[0]); i++){
    rc = cacheCheckQuery(p, azCacheCheck[i], &zWhat);
  }
  if( p->iFormat==2 ){
    for(i=0; rc==SQLITE_OK && i<sizeof(azCacheCheck2)/sizeof(azCacheCheck2[0]);
        i++){
      rc = cacheCheckQuery(p, azCacheCheck2[i], &zWhat);
    }
    if( rc==SQLITE_OK ) rc = cacheCheckRecords(p, &zWhat);
  }
  if( rc!=SQLITE_OK ){
    *pzErr = sqlite3_mprintf("cache: integrity_check of \"%w\": %s", p->zName,
                 zWhat ? zWhat : rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                  : sqlite3_errmsg(p->db));
    if( *pzErr==0 ) rc = SQLITE_NOMEM;
  }
  sqlite3_free(zWhat);
  return rc;
}

/* ------------------------------------------------------- create/connect */

static const char *const azCacheColumn[] = {
  "key", "value", "size", "created", "last_used", "hits", "expires"
};

/* Is zName a name no cache table may take?  *pzErr says why. */
static int cacheBadName(const char *zName, char **pzErr){
  static const char *const azAlias[] = { "rowid", "oid", "_rowid_" };
  size_t i;
  for(i=0; i<sizeof(azCacheColumn)/sizeof(azCacheColumn[0]); i++){
    if( sqlite3_stricmp(zName, azCacheColumn[i])==0 ){
      *pzErr = sqlite3_mprintf("cache: a cache table cannot be named '%s':"
                               " that is the name of a column", zName);
      return 1;
    }
  }
  for(i=0; i<sizeof(azAlias)/sizeof(azAlias[0]); i++){
    if( sqlite3_stricmp(zName, azAlias[i])==0 ){
      *pzErr = sqlite3_mprintf("cache: a cache table cannot be named '%s':"
                               " it would hide the rowid alias of that name",
                               zName);
      return 1;
    }
  }
  return 0;
}

/* Split "name = value"; strip spaces and one pair of quotes from value. */
static int cacheSplitArg(const char *zArg, char **pzName, char **pzValue){
  const char *zEq = strchr(zArg, '=');
  const char *z0, *z1;
  if( zEq==0 ) return 1;
  z0 = zArg; z1 = zEq;
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  *pzName = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  z0 = zEq+1; z1 = zEq + strlen(zEq);
  while( z0<z1 && (*z0==' ' || *z0=='\t') ) z0++;
  while( z1>z0 && (z1[-1]==' ' || z1[-1]=='\t') ) z1--;
  if( z1-z0>=2 && (*z0=='\'' || *z0=='"') && z1[-1]==*z0 ){ z0++; z1--; }
  *pzValue = sqlite3_mprintf("%.*s", (int)(z1-z0), z0);
  return 0;
}

/* The options of CREATE VIRTUAL TABLE, parsed. */
typedef struct cache_options cache_options;
struct cache_options {
  i64 nCapacity;
  int nBuffer;
  int ePolicy;
  int bAutoflush;
};

#define CACHE_OPTION_NAMES "capacity, recency_buffer, policy and autoflush"

static int cacheParseOptions(int argc, const char *const*argv,
                             cache_options *pOpt, char **pzErr){
  static const char *const azOpt[] = {
    "capacity", "recency_buffer", "policy", "autoflush"
  };
  int aSeen[4] = {0, 0, 0, 0};
  int i;
  pOpt->nCapacity = CACHE_DEFAULT_CAPACITY;
  pOpt->nBuffer = CACHE_DEFAULT_BUFFER;
  pOpt->ePolicy = CACHE_POLICY_LRU;
  pOpt->bAutoflush = 1;
  for(i=3; i<argc; i++){
    char *zName = 0, *zValue = 0;
    int rc = SQLITE_OK, k;
    if( cacheSplitArg(argv[i], &zName, &zValue) ){
      *pzErr = sqlite3_mprintf("cache: bad argument '%s': expected"
          " name = value, with name capacity, recency_buffer, policy or"
          " autoflush",
          argv[i]);
      return SQLITE_ERROR;
    }
    if( zName==0 || zValue==0 ){
      sqlite3_free(zName);
      sqlite3_free(zValue);
      return SQLITE_NOMEM;
    }
    for(k=0; k<4 && sqlite3_stricmp(zName, azOpt[k])!=0; k++){}
    if( k==4 ){
      *pzErr = sqlite3_mprintf("cache: unknown option '%s'; accepted options"
                               " are " CACHE_OPTION_NAMES, zName);
      rc = SQLITE_ERROR;
    }else if( aSeen[k]++ ){
      *pzErr = sqlite3_mprintf("cache: option %s is given twice", azOpt[k]);
      rc = SQLITE_ERROR;
    }else if( k==0 ){
      if( cacheParseSize(zValue, &pOpt->nCapacity) ){
        *pzErr = sqlite3_mprintf("cache: bad capacity '%s'; " CACHE_SIZE_HELP,
                                 zValue);
        rc = SQLITE_ERROR;
      }
    }else if( k==1 ){
      i64 n = 0;
      const char *zEnd = 0;
      if( cacheParseWhole(zValue, CACHE_MAX_BUFFER, &n, &zEnd) || *zEnd
       || n<1 ){
        *pzErr = sqlite3_mprintf("cache: bad recency_buffer '%s'; expected"
                                 " an integer from 1 to %d", zValue,
                                 CACHE_MAX_BUFFER);
        rc = SQLITE_ERROR;
      }
      pOpt->nBuffer = (int)n;
    }else if( k==3 ){
      if( sqlite3_stricmp(zValue, "on")==0 ){
        pOpt->bAutoflush = 1;
      }else if( sqlite3_stricmp(zValue, "off")==0 ){
        pOpt->bAutoflush = 0;
      }else{
        *pzErr = sqlite3_mprintf("cache: bad autoflush '%s'; expected on or"
                                 " off", zValue);
        rc = SQLITE_ERROR;
      }
    }else{
      if( sqlite3_stricmp(zValue, "lru")==0 ){
        pOpt->ePolicy = CACHE_POLICY_LRU;
      }else if( sqlite3_stricmp(zValue, "fifo")==0 ){
        pOpt->ePolicy = CACHE_POLICY_FIFO;
      }else{
        *pzErr = sqlite3_mprintf("cache: bad policy '%s'; expected lru or"
                                 " fifo", zValue);
        rc = SQLITE_ERROR;
      }
    }
    sqlite3_free(zName);
    sqlite3_free(zValue);
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

static void cacheFree(cache_vtab *p){
  cacheUnregister(p);
  cacheFinalizeAll(p);
  cacheBufferFree(p->pBuf);
  {
    int i;
    for(i=0; i<CACHE_NCHUNK; i++) sqlite3_free(p->aChunk[i].aRec);
  }
  sqlite3_free(p->zDb);
  sqlite3_free(p->zName);
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p);
}

/* Register new instance p.  SQLite connects a table again after a schema
** reset (any DDL, by this connection or another) while the old instance
** may live on until it is disconnected, and DETACH disconnects at once:
** the buffer of an older or parked instance of the same table moves to p
** (a pointer handed over), and that instance goes inert.  An older
** instance of another table under the same name (dropped and created
** again) keeps its buffer out of p, and goes inert too.  Until p knows
** its table's uid (the config row could not be read at connect, as in a
** schema reload inside a statement) live instances are left alone: the
** first config read that learns it after p is registered calls this again
** (bRegister 0), or the older instance's transaction state, in its buffer,
** would be lost.  (The read at connect waits for the call with bRegister
** that ends it: a connect that then fails must not have taken a buffer.) */
static void cacheAdopt(cache_vtab *p, int bRegister){
  cache_vtab *q, **pp, *pFree = 0;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; (q = *pp)!=0; ){
    if( q!=p && q->db==p->db && !q->bStale
     && (q->bParked ? cacheSameTable(q, p)
                    : p->uid>=0
                      && sqlite3_stricmp(q->zDb, p->zDb)==0
                      && sqlite3_stricmp(q->zName, p->zName)==0) ){
      if( cacheSameTable(q, p) && cacheBufferEmpty(p->pBuf) && q->pBuf ){
        cache_buffer *t = p->pBuf;
        p->pBuf = q->pBuf;
        q->pBuf = t;
        p->nNextFlush = p->pBuf->nPending + p->nBufferMax;
      }
      q->bStale = 1;
      cacheBufferFree(q->pBuf);
      q->pBuf = 0;
      if( q->bParked ){
        *pp = q->pRegNext;
        q->pRegNext = pFree;
        pFree = q;
        continue;
      }
    }
    pp = &q->pRegNext;
  }
  if( bRegister ){
    p->pRegNext = gCacheList;
    gCacheList = p;
    p->bRegistered = 1;
  }
  pthread_mutex_unlock(&gCacheMutex);
  while( pFree ){
    q = pFree;
    pFree = q->pRegNext;
    q->pRegNext = 0;
    cacheFree(q);
  }
}

/* The shadow tables of any format: format 1 had <t>_lru, which a
** converted table keeps, empty.  Every one of these names belongs to the
** cache table (xShadowName), so CREATE and RENAME refuse a name whose
** shadow names another object has taken; of <t>_lru, only the table
** acorn 0.1 made is ever dropped or renamed (cacheLruOwned). */
static const char *const azCacheShadow[] = {
  "config", "data", "expiry", "rec", "lru"
};
#define CACHE_NSHADOW (int)(sizeof(azCacheShadow)/sizeof(azCacheShadow[0]))

/* The columns of <t>_lru as acorn 0.1 declared them. */
#define CACHE_LRU_COLUMNS "(id INTEGER PRIMARY KEY, used INTEGER NOT NULL" \
  " UNIQUE, last_used INTEGER NOT NULL, hits INTEGER NOT NULL," \
  " size INTEGER NOT NULL)"

/* Is any shadow name of table zName in schema zDb taken?  Then *pzErr
** names the object and the names a cache needs, and the result is
** SQLITE_ERROR: a cache never adopts a table it did not make. */
static int cacheShadowFree(sqlite3 *db, const char *zDb, const char *zName,
                           const char *zVerb, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf(
      "SELECT type, name FROM \"%w\".sqlite_schema WHERE name COLLATE NOCASE"
      " IN ('%q_config', '%q_data', '%q_expiry', '%q_rec', '%q_lru')"
      " ORDER BY name LIMIT 1", zDb, zName, zName, zName, zName, zName);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
    *pzErr = sqlite3_mprintf("cache: cannot %s \"%s\": %s %s named \"%s\""
        " exists; a cache table \"%s\" keeps its data in the tables"
        " %s_config, %s_data, %s_expiry, %s_rec and %s_lru", zVerb, zName,
        zType && zType[0]=='i' ? "an" : "a", zType,
        sqlite3_column_text(pStmt, 1), zName, zName, zName, zName, zName,
        zName);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pStmt);
  }else{
    sqlite3_finalize(pStmt);
  }
  if( rc && (rc&0xff)!=SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
  }
  return rc;
}

/* Is <t>_lru the recency table acorn 0.1 made for this cache?  Only then
** may DROP TABLE and RENAME take it.  A table of that name with other
** columns is someone else's; one with 0.1's columns is the cache's while
** the table is format 1, and after the conversion only while it is empty
** (the conversion empties it): a user's table of the same shape that holds
** rows is never dropped. */
static int cacheLruOwned(cache_vtab *p, int *pbOwned){
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc, iFormat = 2, bShape = 0;
  *pbOwned = 0;
  zSql = sqlite3_mprintf("SELECT substr(sql, instr(sql, '('))=%Q FROM"
                         " \"%w\".sqlite_schema WHERE type='table' AND"
                         " name='%q_lru' COLLATE NOCASE",
                         CACHE_LRU_COLUMNS, p->zDb, p->zName);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    bShape = sqlite3_column_int(pStmt, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
  else sqlite3_finalize(pStmt);
  if( rc || !bShape ) return rc;
  rc = cacheFormatProbe(p->db, p->zDb, p->zName, &iFormat);
  if( rc ) return rc;
  if( iFormat==1 ){
    *pbOwned = 1;
    return SQLITE_OK;
  }
  zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".\"%w_lru\" LIMIT 1",
                         p->zDb, p->zName);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1, SQLITE_PREPARE_NO_VTAB, &pStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    *pbOwned = sqlite3_step(pStmt)==SQLITE_DONE;
    rc = sqlite3_finalize(pStmt);
  }
  return rc;
}

static int cacheInit(
  sqlite3 *db, int argc, const char *const*argv,
  sqlite3_vtab **ppVtab, char **pzErr, int bCreate
){
  cache_vtab *p;
  cache_options opt;
  int rc;
  char *zSql;

  *ppVtab = 0;
  rc = cacheParseOptions(argc, argv, &opt, pzErr);
  if( rc ) return rc;
  if( cacheBadName(argv[2], pzErr) ) return SQLITE_ERROR;

  zSql = sqlite3_mprintf(CACHE_SCHEMA, argv[2]);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSql);
  sqlite3_free(zSql);
  if( rc ){
    *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
    return rc;
  }

  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->db = db;
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  p->zName = sqlite3_mprintf("%s", argv[2]);
  p->pBuf = cacheBufferNew();
  p->nBufferMax = opt.nBuffer;
  p->nNextFlush = opt.nBuffer;
  p->bAutoflush = opt.bAutoflush;
  p->uid = -1;
  p->iFormat = 2;
  p->ePolicy = opt.ePolicy;
  if( p->zDb==0 || p->zName==0 || p->pBuf==0 ){
    rc = SQLITE_NOMEM;
  }else if( bCreate ){
    /* A random identity: a table dropped and created again under the same
    ** name is another table to the buffers of other connections. */
    const char *d = p->zDb, *n = p->zName;
    do{
      sqlite3_randomness(sizeof(p->uid), &p->uid);
      p->uid &= LLONG_MAX;
    }while( p->uid==0 );
    rc = cacheShadowFree(db, d, n, "create", pzErr);
    zSql = rc ? 0 : sqlite3_mprintf(
      "CREATE TABLE \"%w\".\"%w_config\"(id INTEGER PRIMARY KEY,"
      " capacity INTEGER NOT NULL, bytes INTEGER NOT NULL,"
      " entries INTEGER NOT NULL, seq INTEGER NOT NULL, hits INTEGER NOT NULL,"
      " misses INTEGER NOT NULL, evictions INTEGER NOT NULL,"
      " expired INTEGER NOT NULL, uid INTEGER NOT NULL DEFAULT 0,"
      " policy INTEGER NOT NULL DEFAULT 0, head INTEGER NOT NULL DEFAULT 0,"
      " low INTEGER NOT NULL DEFAULT 0, dead INTEGER NOT NULL DEFAULT 0);"
      "INSERT INTO \"%w\".\"%w_config\""
      " VALUES(1, %lld, 0, 0, 0, 0, 0, 0, 0, %lld, %d, 0, 0, 0);"
      "CREATE TABLE \"%w\".\"%w_data\"(id INTEGER PRIMARY KEY,"
      " key NOT NULL UNIQUE, created INTEGER NOT NULL, expires INTEGER,"
      " value NOT NULL);"
      "CREATE TABLE \"%w\".\"%w_expiry\"(expires INTEGER NOT NULL,"
      " id INTEGER NOT NULL, PRIMARY KEY(expires, id)) WITHOUT ROWID;"
      CACHE_REC_DDL,
      d, n, d, n, opt.nCapacity, p->uid, opt.ePolicy, d, n, d, n,
      d, n, d, p->uid, n, d, n);
    if( rc ){
      /* *pzErr says which name is taken */
    }else if( zSql==0 ){
      rc = SQLITE_NOMEM;
    }else{
      rc = sqlite3_exec(db, zSql, 0, 0, 0);
      sqlite3_free(zSql);
      if( rc ) *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
    }
  }else{
    cache_op op;
    memset(&op, 0, sizeof(op));
    op.p = p;
    rc = cacheFormatProbe(db, p->zDb, p->zName, &p->iFormat);
    /* If the config row cannot be read now (a lock), uid stays unknown
    ** (-1) until the first write or flush reads it. */
    if( rc==SQLITE_OK ) rc = cacheConfigLoad(&op);
    sqlite3_free(op.zErr);
    if( rc!=SQLITE_NOMEM ) rc = SQLITE_OK;
    cacheFinalizeAll(p);
  }
  if( rc==SQLITE_OK ){
    /* The plain pragmas, not pragma_encoding and pragma_page_size: those
    ** are virtual tables of main, and a statement using them makes SQLite
    ** reload main's schema if it is out of date (after a CREATE refused
    ** in this transaction), which also drops temp's: in xCreate of a temp
    ** table, the table being created. */
    sqlite3_stmt *pStmt = 0;
    rc = sqlite3_prepare_v2(db, "PRAGMA encoding", -1, &pStmt, 0);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zEnc = (const char*)sqlite3_column_text(pStmt, 0);
      p->bUtf16 = zEnc && sqlite3_strnicmp(zEnc, "UTF-16", 6)==0;
    }
    sqlite3_finalize(pStmt);
    pStmt = 0;
    p->nChunkMax = 4096 - 200;
    zSql = sqlite3_mprintf("PRAGMA \"%w\".page_size", p->zDb);
    if( rc==SQLITE_OK ){
      rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
    }
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      int nPage = sqlite3_column_int(pStmt, 0);
      if( nPage>=512 ) p->nChunkMax = nPage - nPage/16 - 64;
    }
    /* A step that failed (out of memory) may have rolled back the whole
    ** transaction, the CREATE's included: say so, never succeed. */
    if( rc==SQLITE_OK ){
      rc = sqlite3_finalize(pStmt);
    }else{
      sqlite3_finalize(pStmt);
    }
    if( rc ) *pzErr = sqlite3_mprintf("cache: %s", sqlite3_errmsg(db));
  }
  if( rc ){
    cacheBufferFree(p->pBuf);
    sqlite3_free(p->zDb);
    sqlite3_free(p->zName);
    sqlite3_free(p);
    return rc;
  }
  cacheAdopt(p, 1);
  *ppVtab = &p->base;
  return SQLITE_OK;
}

static int cacheCreate(sqlite3 *db, void *pAux, int argc,
                       const char *const*argv, sqlite3_vtab **ppVtab,
                       char **pzErr){
  (void)pAux;
  return cacheInit(db, argc, argv, ppVtab, pzErr, 1);
}

static int cacheConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const*argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  (void)pAux;
  return cacheInit(db, argc, argv, ppVtab, pzErr, 0);
}

/* Keep p, disconnected, only for its buffer: until the next instance of
** its table on this connection adopts it, or the connection closes. */
static void cachePark(cache_vtab *p){
  cacheFinalizeAll(p);
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = 0;
  pthread_mutex_lock(&gCacheMutex);
  p->bParked = 1;
  pthread_mutex_unlock(&gCacheMutex);
}

static int cacheDisconnect(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_buffer *b = p->pBuf;
  if( p->bInUse ){
    /* In the middle of cache_read or cache_stats: after DDL (another
    ** connection's, or a CREATE that failed), SQLite re-prepares one of
    ** p's statements as it runs and lets go of the instances the new
    ** schema replaces.  cacheUseEnd() finishes this. */
    p->bInUse = 2;
    return SQLITE_OK;
  }
  /* Keep this connection's buffered recency if that can be done safely. */
  if( !p->bStale && cacheBufferUnwritten(b) && p->bAutoflush ){
    sqlite3_stmt *pStmt = 0;
    int bBusy = 0;
    while( (pStmt = sqlite3_next_stmt(p->db, pStmt))!=0 ){
      if( sqlite3_stmt_busy(pStmt) ){ bBusy = 1; break; }
    }
    if( !bBusy ){
      /* DEFENSIVE lets a vtab write its shadow tables only from inside a
      ** statement; at close there is none.  Lift it around our own flush
      ** (only our statements run) and put it back. */
      int bDefensive = 0;
      sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &bDefensive);
      if( bDefensive ) sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, 0, 0);
      cacheFlushStandalone(p, 1);
      if( bDefensive ) sqlite3_db_config(p->db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0);
    }
  }
  if( !p->bStale && p->uid>=0 && cacheBufferKeep(p->pBuf) ){
    /* Not written (a statement is running, or the schema is gone, as at
    ** DETACH).  The transaction state stays with the buffer: a stale
    ** instance that SQLite still holds in the transaction forwards its
    ** events to the instance that adopts it. */
    cachePark(p);
    return SQLITE_OK;
  }
  cacheFree(p);
  return SQLITE_OK;
}

/* The connection is closing (or the module is registered again): free
** the buffers parked for it. */
static void cacheModuleDestroy(void *pAux){
  sqlite3 *db = (sqlite3*)pAux;
  cache_vtab *q, **pp, *pFree = 0;
  pthread_mutex_lock(&gCacheMutex);
  for(pp=&gCacheList; (q = *pp)!=0; ){
    if( q->db==db && q->bParked ){
      *pp = q->pRegNext;
      q->pRegNext = pFree;
      pFree = q;
    }else{
      pp = &q->pRegNext;
    }
  }
  pthread_mutex_unlock(&gCacheMutex);
  while( pFree ){
    q = pFree;
    pFree = q->pRegNext;
    cacheFree(q);
  }
}

static void cacheBufferTxnEnd(cache_vtab*, cache_buffer*, int);

static int cacheDestroy(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  char *zSql = 0;
  int i, rc;
  int bLru = 0;
  cacheFinalizeAll(p);
  rc = cacheLruOwned(p, &bLru);
  for(i=0; rc==SQLITE_OK && i<CACHE_NSHADOW; i++){
    if( strcmp(azCacheShadow[i], "lru")==0 && !bLru ) continue;
    zSql = sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_%s\"",
                           p->zDb, p->zName, azCacheShadow[i]);
    rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
  }
  if( rc ){
    acorn_vtab_error(pVtab, "cache: %s", sqlite3_errmsg(p->db));
    return rc;
  }
  if( p->uid>=0 && p->pBuf && !sqlite3_get_autocommit(p->db)
   && (cacheBufferUnwritten(p->pBuf) || p->pBuf->bInTxn
       || p->pBuf->bDropTxn) ){
    /* DROP TABLE inside a transaction: a ROLLBACK or ROLLBACK TO brings
    ** the table back (same uid), and its next instance adopts the uses
    ** not written yet.  What this instance held of the transaction goes,
    ** as in a rollback of it, since no xRollback may reach it now: the
    ** config row it changed (the restored table has the stored one), and
    ** every use of an entry made in the transaction (a rollback would
    ** give its id to a new entry).  A ROLLBACK TO brings the table back
    ** inside the transaction, which the buffer no longer follows: bDropTxn
    ** says so, and iDropSeq where its entries begin.  Uses and counts
    ** written earlier in the transaction are not put back: whether the
    ** rollback undoes them is not known here.  (Parked until the table
    ** comes back or the connection closes.) */
    cache_buffer *b = p->pBuf;
    i64 iDropSeq = b->iDropSeq;        /* an earlier DROP's, or LLONG_MAX */
    i64 iMaxId;
    b->nFlushed = 0;
    b->nCount = 0;
    iMaxId = cacheBufferRollback(b, -1);
    if( iMaxId<iDropSeq ) iDropSeq = iMaxId;
    cacheBufferTxnEnd(p, b, 0);
    b->bDropTxn = 1;
    b->iDropSeq = iDropSeq;
    cachePark(p);
    return SQLITE_OK;
  }
  cacheFree(p);
  return SQLITE_OK;
}

static int cacheRename(sqlite3_vtab *pVtab, const char *zNew){
  cache_vtab *p = (cache_vtab*)pVtab;
  char *zName, *zErr = 0;
  int i, rc, bLru = 0;
  rc = cacheBadName(zNew, &zErr) ? SQLITE_ERROR
     : cacheShadowFree(p->db, p->zDb, zNew, "rename to", &zErr);
  if( rc ){
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = zErr;
    return rc;
  }
  cacheFinalizeAll(p);
  rc = cacheLruOwned(p, &bLru);
  for(i=0; rc==SQLITE_OK && i<CACHE_NSHADOW; i++){
    char *zOld, *zSql;
    if( strcmp(azCacheShadow[i], "lru")==0 && !bLru ) continue;
    zOld = sqlite3_mprintf("%s_%s", p->zName, azCacheShadow[i]);
    if( zOld==0 ){ rc = SQLITE_NOMEM; break; }
    if( sqlite3_table_column_metadata(p->db, p->zDb, zOld, 0, 0, 0, 0, 0, 0)
        ==SQLITE_OK ){
      zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w\" RENAME TO \"%w_%s\"",
                             p->zDb, zOld, zNew, azCacheShadow[i]);
      rc = zSql ? sqlite3_exec(p->db, zSql, 0, 0, 0) : SQLITE_NOMEM;
      sqlite3_free(zSql);
    }
    sqlite3_free(zOld);
  }
  if( rc ){
    acorn_vtab_error(pVtab, "cache: %s", rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                          : sqlite3_errmsg(p->db));
    return rc;
  }
  zName = sqlite3_mprintf("%s", zNew);
  if( zName==0 ) return SQLITE_NOMEM;
  pthread_mutex_lock(&gCacheMutex);
  sqlite3_free(p->zName);
  p->zName = zName;
  pthread_mutex_unlock(&gCacheMutex);
  return SQLITE_OK;
}

static int cacheShadowName(const char *zSuffix){
  int i;
  for(i=0; i<CACHE_NSHADOW; i++){
    if( sqlite3_stricmp(zSuffix, azCacheShadow[i])==0 ) return 1;
  }
  return 0;
}

/* ------------------------------------------------------- transactions */

/* The buffer a transaction event concerns.  A stale instance's events
** concern the buffer it handed over: they go to its successor (which may
** get them itself as well; each handler can run twice). */
static cache_buffer *cacheTxnBuffer(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  if( p->bStale ) p = cacheSuccessor(p);
  return p ? p->pBuf : 0;
}

/* b joins the connection's transaction.  What the last transaction left
** held is good if nobody wrote since.  The mark a DROP TABLE left
** (iDropSeq) becomes the transaction's first write: a rollback of it drops
** the uses of entries made after that (it may be the same transaction). */
static void cacheBufferJoin(cache_vtab *p, cache_buffer *b){
  cacheHeldValidate(p, b);
  b->bInTxn = 1;
  b->iLevel = -1;
  if( cacheDropEnd(p, b) ){
    if( b->iDropSeq<0 ){
      b->bLevelLost = 1;
    }else if( b->iDropSeq<LLONG_MAX ){
      cacheBufferNoteWrite(b, b->iDropSeq);
    }
    b->bDropTxn = 0;
    b->iDropSeq = LLONG_MAX;
  }
}

static int cacheBegin(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  if( p->bStale ) p = cacheSuccessor(p);
  if( p && p->pBuf && !p->pBuf->bInTxn ) cacheBufferJoin(p, p->pBuf);
  return SQLITE_OK;
}

/* Before the commit: the transaction's copy of the config row goes to
** the table. */
static int cacheSync(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_op op;
  int rc;
  if( p->bStale && (p = cacheSuccessor(p))==0 ) return SQLITE_OK;
  memset(&op, 0, sizeof(op));
  op.p = p;
  rc = cacheConfigSync(&op);
  return cacheOpFinish(&op, rc);
}

/* The transaction is over.  Committed, the config row and the chunks held
** stay good as long as the file's data version stays what it is now. */
static void cacheBufferTxnEnd(cache_vtab *p, cache_buffer *b, int bCommit){
  if( bCommit ){
    if( b->eCfg==CACHE_CFG_DIRTY ) b->eCfg = CACHE_CFG_NONE;  /* not synced */
    if( sqlite3_file_control(p->db, p->zDb, SQLITE_FCNTL_DATA_VERSION,
                             &b->iVersion) ){
      b->iGen++;
      b->eCfg = CACHE_CFG_NONE;
    }
  }else{
    b->iGen++;
    b->eCfg = CACHE_CFG_NONE;
  }
  b->nFlushed = 0;
  b->nCount = 0;
  b->bInTxn = 0;
  b->iLevel = -1;
  b->bLevelLost = 0;
  b->nSnap = 0;
  b->iSnapLow = INT_MAX;
  b->bDropTxn = 0;
  b->iDropSeq = LLONG_MAX;
  cacheBufferLevelSeq(b, -1);
  cacheBufferCheck(b);
}

static int cacheCommit(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  if( p->bStale ) p = cacheSuccessor(p);
  if( p && p->pBuf ) cacheBufferTxnEnd(p, p->pBuf, 1);
  return SQLITE_OK;
}

static int cacheRollback(sqlite3_vtab *pVtab){
  cache_vtab *p = (cache_vtab*)pVtab;
  if( p->bStale ) p = cacheSuccessor(p);
  if( p && p->pBuf ){
    cacheBufferRollback(p->pBuf, -1);
    cacheBufferTxnEnd(p, p->pBuf, 0);
  }
  return SQLITE_OK;
}

/* Drop the copies of the config row of savepoint levels iLevel and deeper. */
static void cacheSnapDrop(cache_buffer *b, int iLevel){
  while( b->nSnap>0 && b->aSnap[b->nSnap-1].iLevel>=iLevel ) b->nSnap--;
}

static int cacheSavepoint(sqlite3_vtab *pVtab, int iSavepoint){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_buffer *b;
  if( p->bStale ) p = cacheSuccessor(p);
  b = p ? p->pBuf : 0;
  if( b==0 ) return SQLITE_OK;
  if( !b->bInTxn ) cacheBufferJoin(p, b);
  if( iSavepoint>b->iLevel ) b->iLevel = iSavepoint;
  if( iSavepoint<b->iSnapLow ) b->iSnapLow = iSavepoint;
  /* The config row goes to the table as a savepoint begins, so that the
  ** table as it stood at every savepoint holds its own counters: a DROP
  ** TABLE rolled back to a savepoint brings them back with the table, the
  ** dropped instance's copy being gone.  Between savepoints (the writes of
  ** one statement) it stays held. */
  if( b->eCfg==CACHE_CFG_DIRTY ){
    int rc = cacheSync(pVtab);
    if( rc ) return rc;
  }
  /* (delivered twice, through a stale instance and its successor: the
  ** first copy stands) */
  if( b->nSnap==0 || b->aSnap[b->nSnap-1].iLevel<iSavepoint ){
    if( b->nSnap==b->nSnapAlloc ){
      int nNew = b->nSnapAlloc ? b->nSnapAlloc*2 : 4;
      cache_snap *aNew = sqlite3_realloc64(b->aSnap,
                                           sizeof(cache_snap)*(size_t)nNew);
      if( aNew==0 ){
        /* no copy: the savepoint fails, nothing is done at its level */
        cacheBufferCheck(b);
        return SQLITE_NOMEM;
      }
      b->aSnap = aNew;
      b->nSnapAlloc = nNew;
    }
    b->aSnap[b->nSnap].iLevel = iSavepoint;
    b->aSnap[b->nSnap].eCfg = b->eCfg;
    b->aSnap[b->nSnap].cfg = b->cfg;
    b->nSnap++;
  }
  return SQLITE_OK;
}

static int cacheRelease(sqlite3_vtab *pVtab, int iSavepoint){
  cache_buffer *b = cacheTxnBuffer(pVtab);
  int i;
  /* not in the transaction (a DROP TABLE in it ended what the buffer held
  ** of it, cacheDestroy): nothing to move */
  if( b==0 || !b->bInTxn ) return SQLITE_OK;
  for(i=0; i<b->nFlushed; i++){
    if( b->aFlushed[i].iLevel>=iSavepoint ) b->aFlushed[i].iLevel = iSavepoint-1;
  }
  for(i=0; i<b->nCount; i++){
    if( b->aCount[i].iLevel>=iSavepoint ) b->aCount[i].iLevel = iSavepoint-1;
  }
  cacheSnapDrop(b, iSavepoint);
  {
    /* what the released levels began at now belongs to the level around */
    i64 s = cacheBufferLevelSeq(b, iSavepoint);
    b->iLevel = iSavepoint-1;
    if( s>=0 && iSavepoint>=0 && iSavepoint<b->nLevelSeq
     && (b->aLevelSeq[iSavepoint]<0 || s<b->aLevelSeq[iSavepoint]) ){
      b->aLevelSeq[iSavepoint] = s;
    }
  }
  cacheBufferCheck(b);
  return SQLITE_OK;
}

static int cacheRollbackTo(sqlite3_vtab *pVtab, int iSavepoint){
  cache_buffer *b = cacheTxnBuffer(pVtab);
  cache_vtab *p = (cache_vtab*)pVtab;
  if( b==0 ) return SQLITE_OK;
  if( !b->bInTxn ){
    /* a DROP TABLE in the transaction ended what the buffer held of it
    ** (cacheDestroy); what is held of the table may be out of date now */
    b->iGen++;
    return SQLITE_OK;
  }
  cacheBufferRollback(b, iSavepoint);
  b->iLevel = iSavepoint;
  b->iGen++;
  /* The config row as savepoint iSavepoint began (it stays open): its
  ** copy; without one, below iSnapLow the table joined the transaction
  ** later, so the row then was the table's, which the rollback restored;
  ** at or above, its xSavepoint failed (out of memory), nothing was done
  ** at the level, and what is held is how it began. */
  cacheSnapDrop(b, iSavepoint+1);
  if( b->nSnap>0 && b->aSnap[b->nSnap-1].iLevel==iSavepoint ){
    b->eCfg = b->aSnap[b->nSnap-1].eCfg;
    b->cfg = b->aSnap[b->nSnap-1].cfg;
  }else if( iSavepoint<b->iSnapLow ){
    assert( b->nSnap==0 );
    b->eCfg = CACHE_CFG_NONE;
  }
  cacheChunkDropAll(p);
  cacheBufferCheck(b);
  return SQLITE_OK;
}

/* ------------------------------------------------------- reads */

static const char *const azCacheIdxStr[16] = {
  "scan",         "key=?",         "key IN (...)",         "?",
  "scan value",   "key=? value",   "key IN (...) value",   "?",
  "scan lru",     "key=? lru",     "key IN (...) lru",     "?",
  "scan value lru", "key=? value lru", "key IN (...) value lru", "?",
};

static int cacheBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, iEq = -1, iIn = -1, idxNum = 0;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    const char *zColl;
    if( pC->iColumn!=CACHE_COLUMN_KEY || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ
     || !pC->usable ) continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if( zColl && sqlite3_stricmp(zColl, "BINARY")!=0 ) continue;
    if( sqlite3_vtab_in(pInfo, i, -1) ){
      if( iIn<0 ) iIn = i;
    }else if( iEq<0 ){
      iEq = i;
    }
  }
  if( iEq>=0 ){
    pInfo->aConstraintUsage[iEq].argvIndex = 1;
    pInfo->aConstraintUsage[iEq].omit = 1;
    pInfo->estimatedCost = 10.0;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
    idxNum = CACHE_IDX_EQ;
  }else if( iIn>=0 ){
    sqlite3_vtab_in(pInfo, iIn, 1);
    pInfo->aConstraintUsage[iIn].argvIndex = 1;
    pInfo->aConstraintUsage[iIn].omit = 1;
    pInfo->estimatedCost = 100.0;
    pInfo->estimatedRows = 10;
    idxNum = CACHE_IDX_IN;
  }else{
    pInfo->estimatedCost = 1000000.0;
    pInfo->estimatedRows = 1000000;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_VALUE) ){
    idxNum |= CACHE_IDX_VALUE;
  }
  if( pInfo->colUsed & (((sqlite3_uint64)1<<CACHE_COLUMN_LAST_USED)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_HITS)) ){
    idxNum |= CACHE_IDX_LRU;
  }
  if( pInfo->colUsed & ((sqlite3_uint64)1<<CACHE_COLUMN_SIZE) ){
    idxNum |= CACHE_IDX_SIZE;
  }
  if( pInfo->colUsed & (((sqlite3_uint64)1<<CACHE_COLUMN_CREATED)
                      | ((sqlite3_uint64)1<<CACHE_COLUMN_EXPIRES)) ){
    idxNum |= CACHE_IDX_MORE;
  }
  pInfo->idxNum = idxNum;
  pInfo->idxStr = (char*)azCacheIdxStr[idxNum & 15];
  return SQLITE_OK;
}

static int cacheOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_cursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->iSlot = -1;
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void cacheCursorFreeIn(cache_cursor *pCur){
  int i;
  for(i=0; i<pCur->nIn; i++) sqlite3_value_free(pCur->apIn[i]);
  sqlite3_free(pCur->apIn);
  pCur->apIn = 0;
  pCur->nIn = pCur->iIn = 0;
}

/* Give back the cursor's statement: reset into its slot, or finalize. */
static void cacheCursorRelease(cache_cursor *pCur){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  if( pCur->pStmt==0 ) return;
  if( pCur->iSlot>=0 && p->aRead[pCur->iSlot]==pCur->pStmt ){
    if( pCur->bStepped ) sqlite3_reset(pCur->pStmt);
    p->aReadBusy[pCur->iSlot] = 0;
  }else{
    sqlite3_finalize(pCur->pStmt);
  }
  pCur->pStmt = 0;
  pCur->iSlot = -1;
  pCur->bStepped = 0;
}

static int cacheClose(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  cacheCursorRelease(pCur);
  cacheCursorFreeIn(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Read statement columns. */
#define CACHE_READ_ID       0
#define CACHE_READ_KEY      1
#define CACHE_READ_CREATED  2
#define CACHE_READ_EXPIRES  3
#define CACHE_READ_VALUE    4
#define CACHE_READ_SIZE     5

static int cacheCursorStatement(cache_cursor *pCur, int idxNum){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  int bPoint = (idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))!=0;
  int bMore = (idxNum & (CACHE_IDX_MORE|CACHE_IDX_LRU))!=0;
  int bValue = (idxNum & CACHE_IDX_VALUE)!=0;
  int bSize = (idxNum & CACHE_IDX_SIZE)!=0;
  int iSlot = bPoint | (bMore<<1) | (bValue<<2) | (bSize<<3);
  char *zSql;
  int rc;
  assert( iSlot<CACHE_NREAD );
  if( pCur->pStmt && pCur->iSlot==iSlot ){
    return SQLITE_OK;          /* reset when its last use ended */
  }
  cacheCursorRelease(pCur);
  if( p->aRead[iSlot] && !p->aReadBusy[iSlot] ){
    pCur->pStmt = p->aRead[iSlot];
    pCur->iSlot = iSlot;
    p->aReadBusy[iSlot] = 1;
    return SQLITE_OK;
  }
  /* The columns not asked for are NULL: positions stay CACHE_READ_*.
  ** (last_used falls back on created.) */
  zSql = sqlite3_mprintf(
      "SELECT id, key, %s, %s, %s, %s FROM \"%w\".\"%w_data\""
      " WHERE %s(expires IS NULL OR expires>?2)",
      bMore ? "created" : "NULL",
      bMore ? "expires" : "NULL", bValue ? "value" : "NULL",
      bSize ? CACHE_SIZE_SQL : "NULL",
      p->zDb, p->zName, bPoint ? "key=?1 AND " : "");
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v3(p->db, zSql, -1,
           SQLITE_PREPARE_PERSISTENT|SQLITE_PREPARE_NO_VTAB, &pCur->pStmt, 0);
  sqlite3_free(zSql);
  if( rc ){
    acorn_vtab_error(&p->base, "cache: %s", sqlite3_errmsg(p->db));
    return rc;
  }
  if( p->aRead[iSlot]==0 ){
    p->aRead[iSlot] = pCur->pStmt;
    p->aReadBusy[iSlot] = 1;
    pCur->iSlot = iSlot;
  }
  return SQLITE_OK;
}

/* Step to the next live row; for IN, move on through the list. */
static int cacheCursorAdvance(cache_cursor *pCur){
  cache_vtab *p = (cache_vtab*)pCur->base.pVtab;
  int rc;
  pCur->bTouched = 0;
  for(;;){
    if( pCur->idxNum & CACHE_IDX_IN ){
      if( pCur->iIn>=pCur->nIn ){
        pCur->bEof = 1;
        return SQLITE_OK;
      }
      if( pCur->bStepped ) sqlite3_reset(pCur->pStmt);
      sqlite3_bind_value(pCur->pStmt, 1, pCur->apIn[pCur->iIn++]);
    }
    pCur->bStepped = 1;
    rc = sqlite3_step(pCur->pStmt);
    if( rc==SQLITE_ROW ){
      pCur->bEof = 0;
      return SQLITE_OK;
    }
    if( rc!=SQLITE_DONE ){
      sqlite3_reset(pCur->pStmt);
      pCur->bStepped = 0;
      pCur->bEof = 1;
      acorn_vtab_error(&p->base, "cache: %s", sqlite3_errmsg(p->db));
      return rc;
    }
    if( (pCur->idxNum & (CACHE_IDX_EQ|CACHE_IDX_IN))
     && (pCur->idxNum & CACHE_IDX_VALUE)
     && p->ePolicy==CACHE_POLICY_LRU ){
      cache_vtab *q = p->bStale ? cacheSuccessor(p) : p;
      if( q && q->pBuf ) q->pBuf->nMissPending++;
    }
    if( !(pCur->idxNum & CACHE_IDX_IN) ){
      pCur->bEof = 1;
      return SQLITE_OK;
    }
  }
}

static int cacheFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv){
  cache_cursor *pCur = (cache_cursor*)cur;
  cache_vtab *p = (cache_vtab*)cur->pVtab;
  int rc;
  (void)idxStr; (void)argc;
  cacheCursorFreeIn(pCur);
  pCur->bEof = 1;
  cacheHeldCheck(p);
  rc = cacheCursorStatement(pCur, idxNum);
  if( rc ) return rc;
  pCur->idxNum = idxNum;
  pCur->now = cacheNowMs();
  if( pCur->bStepped ){
    sqlite3_reset(pCur->pStmt);
    pCur->bStepped = 0;
  }
  sqlite3_bind_int64(pCur->pStmt, 2, pCur->now);
  if( idxNum & CACHE_IDX_EQ ){
    if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return SQLITE_OK;
    sqlite3_bind_value(pCur->pStmt, 1, argv[0]);
  }else if( idxNum & CACHE_IDX_IN ){
    sqlite3_value *pVal = 0;
    int nAlloc = 0;
    for(rc=sqlite3_vtab_in_first(argv[0], &pVal); rc==SQLITE_OK && pVal;
        rc=sqlite3_vtab_in_next(argv[0], &pVal)){
      if( sqlite3_value_type(pVal)==SQLITE_NULL ) continue;
      if( pCur->nIn==nAlloc ){
        int nNew = nAlloc ? nAlloc*2 : 8;
        sqlite3_value **aNew = sqlite3_realloc64(pCur->apIn,
                                   sizeof(sqlite3_value*)*(size_t)nNew);
        if( aNew==0 ) return SQLITE_NOMEM;
        pCur->apIn = aNew;
        nAlloc = nNew;
      }
      pCur->apIn[pCur->nIn] = sqlite3_value_dup(pVal);
      if( pCur->apIn[pCur->nIn]==0 ) return SQLITE_NOMEM;
      pCur->nIn++;
    }
    if( rc!=SQLITE_OK && rc!=SQLITE_DONE ) return rc;
  }
  return cacheCursorAdvance(pCur);
}

static int cacheNext(sqlite3_vtab_cursor *cur){
  cache_cursor *pCur = (cache_cursor*)cur;
  if( pCur->idxNum & CACHE_IDX_EQ ){
    pCur->bEof = 1;
    sqlite3_reset(pCur->pStmt);
    pCur->bStepped = 0;
    return SQLITE_OK;
  }
  return cacheCursorAdvance(pCur);
}

static int cacheEof(sqlite3_vtab_cursor *cur){
  return ((cache_cursor*)cur)->bEof;
}

static int cacheRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = sqlite3_column_int64(((cache_cursor*)cur)->pStmt, CACHE_READ_ID);
  return SQLITE_OK;
}

/* The stored recency of entry id: *pbFound, *pMs, *pHits. */
static int cacheStoredUse(cache_vtab *p, i64 id, int *pbFound, i64 *pMs,
                          i64 *pHits){
  cache_op op;
  int rc;
  memset(&op, 0, sizeof(op));
  op.p = p;
  *pbFound = 0;
  if( p->iFormat==1 ){
    sqlite3_stmt *pStmt;
    rc = cacheStmt(&op, CACHE_STMT_LRU1_READ, &pStmt);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int64(pStmt, 1, id);
      if( sqlite3_step(pStmt)==SQLITE_ROW ){
        *pbFound = 1;
        *pMs = sqlite3_column_int64(pStmt, 0);
        *pHits = sqlite3_column_int64(pStmt, 1);
      }
      rc = cacheOpError(&op, sqlite3_reset(pStmt));
    }
  }else{
    cache_rec r;
    rc = cacheRecFind(&op, id, &r, pbFound);
    if( *pbFound ){
      *pMs = r.ms;
      *pHits = r.hits;
    }
  }
  return cacheOpFinish(&op, rc);
}

static int cacheColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  cache_cursor *pCur = (cache_cursor*)cur;
  cache_vtab *p = (cache_vtab*)cur->pVtab;
  sqlite3_stmt *pStmt = pCur->pStmt;
  if( sqlite3_vtab_nochange(ctx) ) return SQLITE_OK;
  switch( i ){
    case CACHE_COLUMN_KEY:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_KEY));
      break;
    case CACHE_COLUMN_VALUE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_VALUE));
      if( !pCur->bTouched && (pCur->idxNum & CACHE_IDX_VALUE) ){
        pCur->bTouched = 1;
        cacheTouch(p, sqlite3_column_int64(pStmt, CACHE_READ_ID), pCur->now);
      }
      break;
    case CACHE_COLUMN_SIZE:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_SIZE));
      break;
    case CACHE_COLUMN_CREATED:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_CREATED));
      break;
    case CACHE_COLUMN_LAST_USED:
    case CACHE_COLUMN_HITS: {
      /* stored (a record, or none: never used since the set), with this
      ** connection's buffered uses over it */
      i64 id = sqlite3_column_int64(pStmt, CACHE_READ_ID);
      i64 ms = sqlite3_column_int64(pStmt, CACHE_READ_CREATED), nHits = 0;
      const cache_use *u;
      int bFound = 0, rc;
      if( p->ePolicy==CACHE_POLICY_FIFO ){
        if( i==CACHE_COLUMN_LAST_USED ) sqlite3_result_int64(ctx, ms);
        break;
      }
      rc = cacheStoredUse(p, id, &bFound, &ms, &nHits);
      if( rc ) return rc;                 /* its message is on the vtab */
      u = cacheBufferFind(p->bStale ? 0 : p->pBuf, id);
      if( u ){
        ms = u->ms;
        nHits += u->nHit;
      }
      sqlite3_result_int64(ctx, i==CACHE_COLUMN_HITS ? nHits : ms);
      break;
    }
    case CACHE_COLUMN_EXPIRES:
      sqlite3_result_value(ctx, sqlite3_column_value(pStmt, CACHE_READ_EXPIRES));
      break;
    default:
      break;     /* the command column reads as NULL */
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------- writes */

/* Check a set's key, value and expires; the expires as an integer. */
static int cacheCheckValues(
  cache_op *op, sqlite3_value *pKey, sqlite3_value *pValue,
  sqlite3_value *pExpires, int *pbExpires, i64 *piExpires
){
  char *zErr = cacheCheckKey("cache", pKey);
  int e;
  if( zErr ){
    sqlite3_free(op->zErr);
    op->zErr = zErr;
    return SQLITE_ERROR;
  }
  e = sqlite3_value_type(pValue);
  if( e==SQLITE_NULL ){
    return cacheOpFail(op, SQLITE_ERROR,
        "cache: value must not be NULL; expected BLOB or TEXT");
  }
  if( e!=SQLITE_BLOB && e!=SQLITE_TEXT ){
    return cacheOpFail(op, SQLITE_ERROR,
        "cache: value must be BLOB or TEXT, got %s", cacheTypeName(e));
  }
  e = sqlite3_value_type(pExpires);
  *pbExpires = e!=SQLITE_NULL;
  if( e!=SQLITE_NULL && !cacheWholeNumber(pExpires, piExpires) ){
    return cacheOpFail(op, SQLITE_ERROR, "cache: expires must be an INTEGER"
                       " (unix ms) or NULL, got %s", cacheTypeName(e));
  }
  return SQLITE_OK;
}

static int cacheCheckSize(cache_op *op, i64 nSize){
  if( nSize>op->cfg.capacity ){
    return cacheOpFail(op, SQLITE_ERROR,
        "cache: entry of %lld bytes exceeds capacity of %lld bytes",
        nSize, op->cfg.capacity);
  }
  return SQLITE_OK;
}

/* Does a live entry other than idNot have the key?  Its id in *pId. */
static int cacheLiveKey(cache_op *op, sqlite3_value *pKey, i64 idNot,
                        i64 *pId){
  sqlite3_stmt *pStmt;
  int rc = cacheStmt(op, CACHE_STMT_FIND_LIVE, &pStmt);
  *pId = 0;
  if( rc ) return rc;
  cacheBindKey(pStmt, 1, pKey);
  sqlite3_bind_int64(pStmt, 2, op->now);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    *pId = sqlite3_column_int64(pStmt, 1);
    if( *pId==idNot ) *pId = 0;
  }
  return cacheOpError(op, sqlite3_reset(pStmt));
}

/* The end of a write: the config row and the buffer, written. */
static int cacheOpCommit(cache_op *op, int rc){
  if( rc==SQLITE_OK && op->cfg.nDead>op->cfg.entries+1024 ){
    rc = cacheSweep(op);
  }
  if( rc==SQLITE_OK ) rc = cacheConfigSave(op);
  if( rc==SQLITE_OK && op->p->pBuf ) cacheBufferWritten(op->p->pBuf);
  if( rc ) cacheChunkDropAll(op->p);
  return cacheOpFinish(op, rc);
}

/* An INSERT with the command column set: argv as xUpdate has it.  The
** row names the command and, for capacity only, its argument in value:
** any other column given is refused, naming it. */
static int cacheCommand(cache_vtab *p, sqlite3_value **argv){
  sqlite3_value *pCmd = argv[2+CACHE_COLUMN_COMMAND];
  sqlite3_value *pArg = argv[2+CACHE_COLUMN_VALUE];
  const char *zCmd = (const char*)sqlite3_value_text(pCmd);
  cache_op op;
  i64 nCapacity = 0;
  int rc, i, bCapacity;
  if( zCmd==0 ) return SQLITE_NOMEM;
  bCapacity = sqlite3_stricmp(zCmd, "capacity")==0;
  if( !bCapacity && sqlite3_stricmp(zCmd, "purge")!=0
   && sqlite3_stricmp(zCmd, "flush")!=0
   && sqlite3_stricmp(zCmd, "integrity_check")!=0 ){
    acorn_vtab_error(&p->base, "cache: unknown command '%s'; accepted commands"
                     " are capacity, purge, flush and integrity_check", zCmd);
    return SQLITE_ERROR;
  }
  for(i=-1; i<CACHE_COLUMN_COMMAND; i++){
    if( i==CACHE_COLUMN_VALUE && bCapacity ) continue;
    if( sqlite3_value_type(argv[2+i])!=SQLITE_NULL ){
      acorn_vtab_error(&p->base, "cache: a command row sets only the command"
          " column and, for capacity, value; %s was given too",
          i<0 ? "rowid" : azCacheColumn[i]);
      return SQLITE_ERROR;
    }
  }
  if( bCapacity ){
    int e = sqlite3_value_type(pArg);
    int bBad;
    if( e==SQLITE_INTEGER || e==SQLITE_FLOAT ){
      bBad = !cacheWholeNumber(pArg, &nCapacity)
          || nCapacity<1 || nCapacity>CACHE_MAX_CAPACITY;
    }else if( e==SQLITE_TEXT ){
      bBad = cacheParseSize((const char*)sqlite3_value_text(pArg), &nCapacity);
    }else{
      bBad = 1;
    }
    if( bBad ){
      if( e==SQLITE_NULL ){
        acorn_vtab_error(&p->base, "cache: bad capacity NULL; " CACHE_SIZE_HELP);
      }else{
        acorn_vtab_error(&p->base, "cache: bad capacity '%s'; " CACHE_SIZE_HELP,
                         (const char*)sqlite3_value_text(pArg));
      }
      return SQLITE_ERROR;
    }
  }else if( sqlite3_stricmp(zCmd, "integrity_check")==0 ){
    char *zErr = 0;
    rc = cacheOpBegin(&op, p);
    if( rc==SQLITE_OK ) rc = cacheConfigSync(&op);
    if( rc ) return cacheOpFinish(&op, rc);
    rc = cacheIntegrity(p, &zErr);
    if( zErr ){
      sqlite3_free(p->base.zErrMsg);
      p->base.zErrMsg = zErr;
    }
    return rc;
  }
  rc = cacheOpBegin(&op, p);
  if( rc==SQLITE_OK ) rc = cacheFlushWrite(&op);
  if( rc==SQLITE_OK && nCapacity ) op.cfg.capacity = nCapacity;
  if( rc==SQLITE_OK && sqlite3_stricmp(zCmd, "flush")!=0 ){
    rc = cacheReclaimExpired(&op);
  }
  if( rc==SQLITE_OK ) rc = cacheEvict(&op, 0);
  return cacheOpCommit(&op, rc);
}

static int cacheUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                       sqlite3_int64 *pRowid){
  cache_vtab *p = (cache_vtab*)pVtab;
  int bIgnore = sqlite3_vtab_on_conflict(p->db)==SQLITE_IGNORE;
  cache_op op;
  int rc, i;

  if( argc==1 ){                                   /* DELETE */
    int bFound = 0;
    rc = cacheOpBegin(&op, p);
    if( rc==SQLITE_OK ) rc = cacheFlushWrite(&op);
    if( rc==SQLITE_OK ) rc = cacheDeleteEntry(&op, sqlite3_value_int64(argv[0]),
                                              &bFound);
    if( rc==SQLITE_OK ) rc = cacheReclaimExpired(&op);
    return cacheOpCommit(&op, rc);
  }

  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){   /* INSERT */
    sqlite3_value *pKey = argv[2+CACHE_COLUMN_KEY];
    sqlite3_value *pValue = argv[2+CACHE_COLUMN_VALUE];
    i64 nSize, iExpires = 0, idLive = 0;
    int bExpires = 0;
    if( sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
      return cacheCommand(p, argv);
    }
    if( sqlite3_value_type(argv[1])!=SQLITE_NULL ){
      acorn_vtab_error(pVtab, "cache: rowid is read-only");
      return SQLITE_ERROR;
    }
    for(i=CACHE_COLUMN_SIZE; i<=CACHE_COLUMN_HITS; i++){
      if( sqlite3_value_type(argv[2+i])!=SQLITE_NULL ){
        acorn_vtab_error(pVtab, "cache: column %s is read-only; writable"
                         " columns are key, value and expires", azCacheColumn[i]);
        return SQLITE_ERROR;
      }
    }
    memset(&op, 0, sizeof(op));
    op.p = p;
    rc = cacheCheckValues(&op, pKey, pValue, argv[2+CACHE_COLUMN_EXPIRES],
                          &bExpires, &iExpires);
    if( rc ) return cacheOpFinish(&op, rc);
    nSize = cacheBytes(p->bUtf16, pKey) + cacheBytes(p->bUtf16, pValue);
    rc = cacheOpBegin(&op, p);
    if( rc==SQLITE_OK ) rc = cacheCheckSize(&op, nSize);
    if( rc==SQLITE_OK && bIgnore ){
      rc = cacheLiveKey(&op, pKey, 0, &idLive);
      if( rc==SQLITE_OK && idLive ){
        *pRowid = idLive;       /* OR IGNORE: the stored entry stays */
        return cacheOpFinish(&op, SQLITE_OK);
      }
    }
    if( rc==SQLITE_OK ) rc = cacheFlushWrite(&op);
    if( rc==SQLITE_OK ){
      rc = cacheSet(&op, pKey, pValue, bExpires, iExpires, nSize, op.now, 0,
                    pRowid);
    }
    return cacheOpCommit(&op, rc);
  }

  /* UPDATE: a set that keeps created and hits. */
  {
    i64 idOld = sqlite3_value_int64(argv[0]);
    sqlite3_value *pOldKey = 0, *pOldValue = 0, *pOldExpires = 0;
    sqlite3_value *pKey, *pValue, *pExpires;
    i64 iCreated = 0, nHits = 0, nSize, iExpires = 0;
    int bExpires = 0;
    sqlite3_stmt *pStmt;
    if( !sqlite3_value_nochange(argv[1])
     && sqlite3_value_int64(argv[1])!=idOld ){
      acorn_vtab_error(pVtab, "cache: rowid is read-only");
      return SQLITE_ERROR;
    }
    if( !sqlite3_value_nochange(argv[2+CACHE_COLUMN_COMMAND])
     && sqlite3_value_type(argv[2+CACHE_COLUMN_COMMAND])!=SQLITE_NULL ){
      acorn_vtab_error(pVtab, "cache: commands are run by INSERT INTO"
          " \"%w\"(\"%w\", value) VALUES(command, argument)", p->zName, p->zName);
      return SQLITE_ERROR;
    }
    for(i=CACHE_COLUMN_SIZE; i<=CACHE_COLUMN_HITS; i++){
      if( !sqlite3_value_nochange(argv[2+i]) ){
        acorn_vtab_error(pVtab, "cache: column %s is read-only; writable"
                         " columns are key, value and expires", azCacheColumn[i]);
        return SQLITE_ERROR;
      }
    }
    /* Whatever can refuse the UPDATE is checked before the first write:
    ** SQLite opens no statement journal for a one-row change of a virtual
    ** table, so inside a transaction a write made before an error would
    ** stay.  The hits kept are the stored ones plus this connection's
    ** buffered uses of the entry, written just before the set. */
    rc = cacheOpBegin(&op, p);
    if( rc==SQLITE_OK ) rc = cacheStmt(&op, CACHE_STMT_ROW, &pStmt);
    if( rc ) return cacheOpCommit(&op, rc);
    sqlite3_bind_int64(pStmt, 1, idOld);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      pOldKey = sqlite3_value_dup(sqlite3_column_value(pStmt, 0));
      pOldValue = sqlite3_value_dup(sqlite3_column_value(pStmt, 1));
      iCreated = sqlite3_column_int64(pStmt, 2);
      pOldExpires = sqlite3_value_dup(sqlite3_column_value(pStmt, 3));
      if( pOldKey==0 || pOldValue==0 || pOldExpires==0 ) rc = SQLITE_NOMEM;
    }
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pStmt);
    else sqlite3_reset(pStmt);
    rc = cacheOpError(&op, rc);
    if( rc==SQLITE_OK && pOldKey && op.cfg.ePolicy==CACHE_POLICY_LRU ){
      cache_rec r;
      const cache_use *u = cacheBufferFind(p->pBuf, idOld);
      int bFound = 0;
      rc = cacheRecFind(&op, idOld, &r, &bFound);
      if( bFound ) nHits = r.hits;
      if( u ) nHits += u->nHit;
    }
    if( rc==SQLITE_OK && pOldKey==0 ){
      /* the row went away under the statement: nothing to update but the
      ** flush (every write flushes) */
      rc = cacheFlushWrite(&op);
    }else if( rc==SQLITE_OK ){
      i64 idOther = 0, idNew = 0;
      pKey = sqlite3_value_nochange(argv[2+CACHE_COLUMN_KEY])
               ? pOldKey : argv[2+CACHE_COLUMN_KEY];
      pValue = sqlite3_value_nochange(argv[2+CACHE_COLUMN_VALUE])
               ? pOldValue : argv[2+CACHE_COLUMN_VALUE];
      pExpires = sqlite3_value_nochange(argv[2+CACHE_COLUMN_EXPIRES])
               ? pOldExpires : argv[2+CACHE_COLUMN_EXPIRES];
      rc = cacheCheckValues(&op, pKey, pValue, pExpires, &bExpires, &iExpires);
      nSize = cacheBytes(p->bUtf16, pKey) + cacheBytes(p->bUtf16, pValue);
      if( rc==SQLITE_OK ) rc = cacheCheckSize(&op, nSize);
      if( rc==SQLITE_OK && pKey!=pOldKey && bIgnore ){
        rc = cacheLiveKey(&op, pKey, idOld, &idOther);
      }
      /* The old entry goes; the key is set anew (replacing any entry that
      ** had the new key), keeping created and hits.  OR IGNORE skips a row
      ** whose new key another live entry has. */
      if( rc==SQLITE_OK ) rc = cacheFlushWrite(&op);
      if( rc==SQLITE_OK && idOther==0 ){
        int bFound = 0;
        rc = cacheDeleteEntry(&op, idOld, &bFound);
        if( rc==SQLITE_OK ){
          rc = cacheSet(&op, pKey, pValue, bExpires, iExpires, nSize,
                        iCreated, nHits, &idNew);
        }
      }
    }
    sqlite3_value_free(pOldKey);
    sqlite3_value_free(pOldValue);
    sqlite3_value_free(pOldExpires);
    return cacheOpCommit(&op, rc);
  }
}

#if SQLITE_VERSION_NUMBER >= 3044000
/* PRAGMA integrity_check (SQLite 3.44 and later) checks cache tables too:
** a broken invariant is reported as a problem, in *pzErr. */
static int cacheIntegrityMethod(sqlite3_vtab *pVtab, const char *zSchema,
                                const char *zTabName, int mFlags,
                                char **pzErr){
  cache_vtab *p = (cache_vtab*)pVtab;
  cache_op op;
  int rc;
  (void)zSchema; (void)zTabName; (void)mFlags;
  memset(&op, 0, sizeof(op));
  op.p = p;
  rc = cacheConfigSync(&op);     /* the checks read the row */
  if( rc ){
    *pzErr = op.zErr;
    return rc;
  }
  rc = cacheIntegrity(p, pzErr);
  return rc==SQLITE_CORRUPT_VTAB ? SQLITE_OK : rc;
}
#endif

static sqlite3_module cacheModule = {
#if SQLITE_VERSION_NUMBER >= 3044000
  /* iVersion    */ 4,
#else
  /* iVersion    */ 3,
#endif
  /* xCreate     */ cacheCreate,
  /* xConnect    */ cacheConnect,
  /* xBestIndex  */ cacheBestIndex,
  /* xDisconnect */ cacheDisconnect,
  /* xDestroy    */ cacheDestroy,
  /* xOpen       */ cacheOpen,
  /* xClose      */ cacheClose,
  /* xFilter     */ cacheFilter,
  /* xNext       */ cacheNext,
  /* xEof        */ cacheEof,
  /* xColumn     */ cacheColumn,
  /* xRowid      */ cacheRowid,
  /* xUpdate     */ cacheUpdate,
  /* xBegin      */ cacheBegin,
  /* xSync       */ cacheSync,
  /* xCommit     */ cacheCommit,
  /* xRollback   */ cacheRollback,
  /* xFindMethod */ 0,
  /* xRename     */ cacheRename,
  /* xSavepoint  */ cacheSavepoint,
  /* xRelease    */ cacheRelease,
  /* xRollbackTo */ cacheRollbackTo,
  /* xShadowName */ cacheShadowName,
#if SQLITE_VERSION_NUMBER >= 3044000
  /* xIntegrity  */ cacheIntegrityMethod,
#endif
};

/* ------------------------------------------------------- cache_read, _stats */

/* The caller is done with p, an instance cacheResolve() returned: if SQLite
** disconnected it meanwhile, do it now. */
static void cacheUseEnd(cache_vtab *p){
  int bGone = p->bInUse==2;
  p->bInUse = 0;
  if( bGone ) cacheDisconnect(&p->base);
}

/* The cache table named zTab on db, with its config row read into op->cfg
** (op is begun for it).  An instance found out of date (another connection
** dropped the table, or dropped and created it again) is marked stale and
** the name looked up once more.  0 with op->zErr if there is none; 0
** without a message if memory ran out.  The instance returned is marked in
** use: the caller passes it to cacheUseEnd() when done. */
static cache_vtab *cacheResolve(sqlite3 *db, const char *zTab,
                                const char *zWho, cache_op *op){
  int i, rc = SQLITE_OK;
  memset(op, 0, sizeof(*op));
  for(i=0; i<2; i++){
    cache_vtab *p = zTab ? cacheFind(db, zTab, &rc) : 0;
    if( p==0 && rc ){
      sqlite3_free(op->zErr);            /* out of memory: no message */
      op->zErr = 0;
      return 0;
    }
    if( p==0 ) break;
    p->bInUse = 1;
    sqlite3_free(op->zErr);
    memset(op, 0, sizeof(*op));
    op->p = p;
    op->zWho = zWho;
    op->now = cacheNowMs();
    cacheHeldCheck(p);
    rc = cacheConfigLoad(op);
    if( rc==SQLITE_OK && !p->bStale ) return p;
    if( (rc&0xff)==SQLITE_NOMEM ){
      cacheUseEnd(p);
      sqlite3_free(op->zErr);
      op->zErr = 0;
      return 0;
    }
    if( rc!=SQLITE_OK && (rc&0xff)!=SQLITE_ERROR ){
      cacheUseEnd(p);
      return 0;
    }
    cacheSetStale(p);         /* gone or another table: look again */
    cacheUseEnd(p);
  }
  /* no such table now, or still another one after looking again */
  sqlite3_free(op->zErr);
  op->zErr = sqlite3_mprintf("%s: no such cache table: %Q", zWho, zTab);
  return 0;
}

static void cacheRead(sqlite3_context*, sqlite3_value**, cache_vtab**);

static void cacheReadFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  cache_vtab *pUsed = 0;
  (void)argc;
  cacheRead(ctx, argv, &pUsed);
  if( pUsed ) cacheUseEnd(pUsed);
}

/* The body of cache_read; *ppUsed is the instance it uses. */
static void cacheRead(sqlite3_context *ctx, sqlite3_value **argv,
                      cache_vtab **ppUsed){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTab = (const char*)sqlite3_value_text(argv[0]);
  cache_vtab *p;
  cache_op op;
  sqlite3_stmt *pStmt, *pLive = 0;
  sqlite3_blob *pBlob = 0;
  char *zErr, *zData;
  i64 iOff, nLen, id = 0, nTotal;
  unsigned char *aBuf;
  int rc;
  zErr = cacheCheckKey("cache_read", argv[1]);
  if( zErr ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
    return;
  }
  if( !cacheWholeNumber(argv[2], &iOff) || iOff<0 ){
    acorn_result_error(ctx, "cache_read: offset must be a non-negative integer");
    return;
  }
  if( !cacheWholeNumber(argv[3], &nLen) || nLen<0 ){
    acorn_result_error(ctx, "cache_read: length must be a non-negative integer");
    return;
  }
  p = cacheResolve(db, zTab, "cache_read", &op);
  *ppUsed = p;
  rc = p ? cacheStmt(&op, CACHE_STMT_FIND_LIVE, &pStmt)
         : op.zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  if( rc==SQLITE_OK ){
    cacheBindKey(pStmt, 1, argv[1]);
    sqlite3_bind_int64(pStmt, 2, op.now);
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      id = sqlite3_column_int64(pStmt, 1);
      /* Not reset until the value is read: its read transaction keeps
      ** the entry from being deleted by another connection in between. */
      pLive = pStmt;
    }else{
      rc = cacheOpError(&op, sqlite3_reset(pStmt));
    }
  }
  if( rc ){
    if( rc==SQLITE_NOMEM ){
      sqlite3_result_error_nomem(ctx);
    }else if( op.zErr ){
      sqlite3_result_error(ctx, op.zErr, -1);
    }else{
      sqlite3_result_error_code(ctx, rc);
    }
    sqlite3_free(op.zErr);
    return;
  }
  if( id==0 ){
    sqlite3_reset(pLive);
    if( p->ePolicy==CACHE_POLICY_LRU && p->pBuf ) p->pBuf->nMissPending++;
    return;                              /* NULL */
  }
  zData = sqlite3_mprintf("%s_data", p->zName);
  if( zData==0 ){
    sqlite3_reset(pLive);
    sqlite3_result_error_nomem(ctx);
    return;
  }
  rc = sqlite3_blob_open(db, p->zDb, zData, "value", id, 0, &pBlob);
  sqlite3_free(zData);
  if( rc ){
    acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(db));
    sqlite3_blob_close(pBlob);
    sqlite3_reset(pLive);
    return;
  }
  nTotal = sqlite3_blob_bytes(pBlob);
  if( iOff>=nTotal ){
    nLen = 0;
  }else if( nLen>nTotal-iOff ){
    nLen = nTotal-iOff;
  }
  if( nLen==0 ){
    sqlite3_result_zeroblob(ctx, 0);
  }else{
    aBuf = sqlite3_malloc64((sqlite3_uint64)nLen);
    if( aBuf==0 ){
      sqlite3_blob_close(pBlob);
      sqlite3_reset(pLive);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    rc = sqlite3_blob_read(pBlob, aBuf, (int)nLen, (int)iOff);
    if( rc ){
      sqlite3_free(aBuf);
      acorn_result_error(ctx, "cache_read: %s", sqlite3_errmsg(db));
      sqlite3_blob_close(pBlob);
      sqlite3_reset(pLive);
      return;
    }
    sqlite3_result_blob64(ctx, aBuf, (sqlite3_uint64)nLen, sqlite3_free);
  }
  sqlite3_blob_close(pBlob);
  sqlite3_reset(pLive);
  cacheTouch(p, id, op.now);
}

#define CACHE_STATS_NCOL   7
#define CACHE_STATS_TABLE  7     /* the hidden argument column */

typedef struct cache_stats_vtab cache_stats_vtab;
struct cache_stats_vtab {
  sqlite3_vtab base;
  sqlite3 *db;
};

typedef struct cache_stats_cursor cache_stats_cursor;
struct cache_stats_cursor {
  sqlite3_vtab_cursor base;
  i64 a[CACHE_STATS_NCOL];
  int bFifo;            /* hits and misses are not counted: NULL */
  char *zTable;
  int bEof;
};

static int cacheStatsConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const*argv, sqlite3_vtab **ppVtab,
                             char **pzErr){
  cache_stats_vtab *pNew;
  int rc;
  (void)pAux; (void)argc; (void)argv; (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(capacity, entries, bytes,"
                                " hits, misses, evictions, expired, tbl HIDDEN)");
  if( rc ) return rc;
  pNew = sqlite3_malloc64(sizeof(*pNew));
  if( pNew==0 ) return SQLITE_NOMEM;
  memset(pNew, 0, sizeof(*pNew));
  pNew->db = db;
  *ppVtab = &pNew->base;
  return SQLITE_OK;
}

static int cacheStatsDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

static int cacheStatsBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int i, bSeen = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=CACHE_STATS_TABLE || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ){
      continue;
    }
    bSeen = 1;
    if( !pC->usable ) continue;
    pInfo->aConstraintUsage[i].argvIndex = 1;
    pInfo->aConstraintUsage[i].omit = 1;
    pInfo->estimatedCost = 1.0;
    pInfo->estimatedRows = 1;
    return SQLITE_OK;
  }
  if( bSeen ) return SQLITE_CONSTRAINT;
  acorn_vtab_error(pVtab, "cache_stats: missing argument: the name of a cache"
                   " table, as in SELECT * FROM cache_stats('thumbs')");
  return SQLITE_ERROR;
}

static int cacheStatsOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor){
  cache_stats_cursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static int cacheStatsClose(sqlite3_vtab_cursor *cur){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  sqlite3_free(pCur->zTable);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int cacheStatsFilter(sqlite3_vtab_cursor *cur, int idxNum,
                            const char *idxStr, int argc,
                            sqlite3_value **argv){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  cache_stats_vtab *pTab = (cache_stats_vtab*)cur->pVtab;
  const char *zTab;
  const cache_buffer *b;
  cache_vtab *p;
  cache_op op;
  (void)idxNum; (void)idxStr;
  pCur->bEof = 1;
  sqlite3_free(pCur->zTable);
  pCur->zTable = 0;
  if( argc<1 ) return SQLITE_OK;
  zTab = (const char*)sqlite3_value_text(argv[0]);
  p = cacheResolve(pTab->db, zTab, "cache_stats", &op);
  if( p==0 ){
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = op.zErr;
    return op.zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  b = p->pBuf;
  pCur->a[0] = op.cfg.capacity;
  pCur->a[1] = op.cfg.entries;
  pCur->a[2] = op.cfg.bytes;
  pCur->a[3] = op.cfg.hits + (b ? b->nHitPending + b->nHitLoose : 0);
  pCur->a[4] = op.cfg.misses + (b ? b->nMissPending : 0);
  pCur->a[5] = op.cfg.evictions;
  pCur->a[6] = op.cfg.expired;
  pCur->bFifo = op.cfg.ePolicy==CACHE_POLICY_FIFO;
  cacheUseEnd(p);
  pCur->zTable = sqlite3_mprintf("%s", zTab);
  if( pCur->zTable==0 ) return SQLITE_NOMEM;
  pCur->bEof = 0;
  return SQLITE_OK;
}

static int cacheStatsNext(sqlite3_vtab_cursor *cur){
  ((cache_stats_cursor*)cur)->bEof = 1;
  return SQLITE_OK;
}

static int cacheStatsEof(sqlite3_vtab_cursor *cur){
  return ((cache_stats_cursor*)cur)->bEof;
}

static int cacheStatsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                            int i){
  cache_stats_cursor *pCur = (cache_stats_cursor*)cur;
  if( i>=CACHE_STATS_NCOL ){
    sqlite3_result_text(ctx, pCur->zTable, -1, SQLITE_TRANSIENT);
  }else if( !(pCur->bFifo && (i==3 || i==4)) ){
    sqlite3_result_int64(ctx, pCur->a[i]);
  }
  return SQLITE_OK;
}

static int cacheStatsRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  (void)cur;
  *pRowid = 1;
  return SQLITE_OK;
}

static sqlite3_module cacheStatsModule = {
  /* iVersion    */ 0,
  /* xCreate     */ 0,
  /* xConnect    */ cacheStatsConnect,
  /* xBestIndex  */ cacheStatsBestIndex,
  /* xDisconnect */ cacheStatsDisconnect,
  /* xDestroy    */ 0,
  /* xOpen       */ cacheStatsOpen,
  /* xClose      */ cacheStatsClose,
  /* xFilter     */ cacheStatsFilter,
  /* xNext       */ cacheStatsNext,
  /* xEof        */ cacheStatsEof,
  /* xColumn     */ cacheStatsColumn,
  /* xRowid      */ cacheStatsRowid,
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
#if SQLITE_VERSION_NUMBER >= 3044000
  /* xIntegrity  */ 0,
#endif
};

int acorn_cache_register(sqlite3 *db){
  int rc = sqlite3_create_module_v2(db, "cache", &cacheModule, (void*)db,
                                    cacheModuleDestroy);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module(db, "cache_stats", &cacheStatsModule, 0);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_function(db, "cache_read", 4, SQLITE_UTF8, 0,
                                 cacheReadFunc, 0, 0);
  }
  return rc;
}
