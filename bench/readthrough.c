/*
** readthrough.c: a read-through cache under skewed (Zipf) traffic, the
** cache table against the same cache written by hand in plain SQLite.
**
**   build/readthrough EXTENSION DIR KEYS S MODE VALUE REQUESTS
**
** KEYS keys 'key%010lld' (13 bytes); their popularity follows a Zipf
** distribution of exponent S (P(rank r) proportional to 1/r^S, r = 1..KEYS),
** drawn by inversion of the exact CDF (precomputed, binary search) from a
** xorshift generator with a fixed starting state, and the ranks are mapped
** to key numbers by a fixed shuffle, so that the hot keys are spread over
** the key order.  The sequence is made once and every side gets the same.
** A request is a get of its key and, on a miss, a set of that key with a
** VALUE-byte value made from the key (its number in the first 8 bytes, a
** fixed pattern after); every hit checks the value's length and number.
** Each side's capacity is 10% of the keys' bytes: KEYS/10 entries of
** 13+VALUE bytes (acorn counts key plus value bytes; the hand-written sides
** count the same, length(k)+length(v)).
**
** MODE is "auto" (every statement autocommit; a hand-written set and its
** evictions in one BEGIN IMMEDIATE .. COMMIT of their own) or "txn" (100
** requests per BEGIN IMMEDIATE .. COMMIT, on every side).
**
** Six sides, each a file in DIR, journal_mode=WAL, synchronous=NORMAL, one
** connection, statements prepared once (bind, step, reset):
**   lru   acorn: CREATE VIRTUAL TABLE c USING cache(capacity=...);
**         get SELECT cache_get('c', ?) (NULL: a miss; with
**         READTHROUGH_GET=select, SELECT value FROM c WHERE key=? instead),
**         set INSERT INTO c(key, value) (acorn evicts; with
**         READTHROUGH_SET=function, SELECT cache_set('c', ?, ?) instead)
**   fifo  the same with policy=fifo
**   a1    exact LRU by hand: kv(k TEXT PRIMARY KEY, v BLOB, used INTEGER),
**         an index on used; get SELECT rowid, v FROM kv WHERE k=? and, on a
**         hit, UPDATE kv SET used=? WHERE rowid=? (a write per get; the
**         counter and the byte total in process memory); set INSERT, then,
**         until the total fits, SELECT rowid, length(k)+length(v) FROM kv
**         ORDER BY used LIMIT 1 and DELETE that rowid
**   a2    a1 with what several processes need: the byte total in a
**         one-row table meta(total), read and written in the set's
**         transaction, and the counter taken as max(used)+1
**   b1    FIFO by hand: kv(k TEXT PRIMARY KEY, v BLOB); get SELECT v; set
**         INSERT, then, until the total fits, the smallest rowid's row is
**         read (its size) and deleted; the byte total in process memory
**   b2    b1 with the byte total in meta(total)
** READTHROUGH_RETURNING=1 writes the hand-written sides with RETURNING
** instead, one statement where the above has two: get UPDATE kv SET used=?
** WHERE k=? RETURNING v, eviction DELETE ... WHERE rowid=(SELECT ...)
** RETURNING length(k)+length(v).  Those are slower here (a statement with
** RETURNING runs its rows through a temporary table), so the default is the
** faster baseline.
**
** First a warm-up, untimed, in transactions of 1000 on every side: the
** sequence's requests up to the one that sets the (KEYS/10)th distinct
** key, so every cache is exactly full.  Then REQUESTS requests (the
** sequence goes on) in 10 slices: every side runs slice i before any runs
** slice i+1, and the side that goes first rotates, so background writeback
** and noise fall on all of them alike.  lru's time includes a final
** 'flush' of its buffered recency.  A side's rate is its requests over the
** sum of its slices' time; pages written are sqlite3_db_status(
** SQLITE_DBSTATUS_CACHE_WRITE) over the slices, per request.
**
** Checked at the end: every hand-written side's byte total equals the sum
** of its rows' length(k)+length(v), and every side is within its
** capacity; acorn's integrity_check command passes; the three LRU sides
** had the same hits and hold the same keys, and so do the three FIFO sides
** (the same algorithm on the same sequence).  Any failure exits 1.
**
** Printed: a markdown table (requests/s, hit ratio, pages written per
** request, ratios lru/a1, lru/a2, fifo/b1, fifo/b2), then one line
** "ratios: KEYS S MODE VALUE lru/a1 lru/a2 fifo/b1 fifo/b2" for the summary
** bench/readthrough.sh prints.
*/
#define BENCH_NAME "readthrough"
#include "bench_util.h"
#include <math.h>
#include <string.h>

static const char *zExt;
static const char *zDir;

static void fail(const char *zFmt, const char *zA, const char *zB){
  fprintf(stderr, "readthrough: ");
  fprintf(stderr, zFmt, zA, zB);
  fprintf(stderr, "\n");
  exit(1);
}

/* A uniform double in [0, 1), 53 bits. */
static double rnd01(unsigned long long *pState){
  return (benchRandom(pState)>>11) * (1.0/9007199254740992.0);
}

static unsigned long long mix(unsigned long long x){
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x>>30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x>>27)) * 0x94D049BB133111EBULL;
  return x ^ (x>>31);
}

#define KEYLEN 13                /* of a key that benchKey() makes */

/* ------------------------------------------------------------ the sequence
** Ranks 0..n-1 (rank r has weight 1/(r+1)^s); aCdf[r] = the sum of the
** weights of ranks 0..r.  A draw takes u uniform in [0, total) and returns
** the smallest r with aCdf[r] > u: exactly P(r) = weight(r)/total. */
typedef struct zipf zipf;
struct zipf {
  long long n;
  double *aCdf;
  int *aKey;                   /* rank -> key number (a fixed shuffle) */
  unsigned long long x;        /* the generator's state */
};

static void zipf_init(zipf *z, long long n, double s){
  long long r;
  double t = 0;
  unsigned long long x = 0x2545F4914F6CDD1DULL;
  z->n = n;
  z->aCdf = malloc(sizeof(double)*n);
  z->aKey = malloc(sizeof(int)*n);
  if( !z->aCdf || !z->aKey ) fail("%s%s", "out of memory", "");
  for(r=0; r<n; r++){
    t += pow((double)(r+1), -s);
    z->aCdf[r] = t;
    z->aKey[r] = (int)r;
  }
  for(r=n-1; r>0; r--){
    long long j = (long long)(benchRandom(&x) % (unsigned long long)(r+1));
    int tmp = z->aKey[r]; z->aKey[r] = z->aKey[j]; z->aKey[j] = tmp;
  }
  z->x = 0x853C49E6748FEA9BULL ^ mix((unsigned long long)n)
         ^ mix((unsigned long long)(s*1e6));
  if( z->x==0 ) z->x = 1;
}

static long long zipf_rank(zipf *z){
  double u = rnd01(&z->x) * z->aCdf[z->n-1];
  long long lo = 0, hi = z->n-1;
  while( lo<hi ){
    long long mid = lo + (hi-lo)/2;
    if( z->aCdf[mid]>u ) hi = mid; else lo = mid+1;
  }
  return lo;
}

/* ------------------------------------------------------------ the sides */
#define NSIDE 6
enum { S_LRU, S_FIFO, S_A1, S_A2, S_B1, S_B2 };
static const char *const azSide[NSIDE] = { "lru", "fifo", "a1", "a2", "b1", "b2" };
static const char *const azLabel[NSIDE] = {
  "acorn lru", "acorn fifo", "a1: LRU by hand, total in memory",
  "a2: LRU by hand, total in a table", "b1: FIFO by hand, total in memory",
  "b2: FIFO by hand, total in a table",
};

typedef struct side side;
struct side {
  int iSide;
  sqlite3 *db;
  char zPath[4096];
  sqlite3_stmt *pGet, *pSet, *pEvict, *pTotal, *pSetTotal;
  sqlite3_stmt *pTouch, *pOldest;  /* the forms without RETURNING */
  sqlite3_stmt *pBegin, *pCommit;
  long long nTotal;            /* a1, b1: the byte total */
  long long nUsed;             /* a1: the recency counter */
  double t;                    /* seconds in the measured slices */
  long long nPages;            /* pages written in them */
  long long nHit, nMiss;       /* requests in them */
  long long nEvict;            /* evictions written by hand, all of the run */
};

static int bIsAcorn(int i){ return i==S_LRU || i==S_FIFO; }
static int bHasMeta(int i){ return i==S_A2 || i==S_B2; }

static int bSplit;             /* hand-written: no RETURNING (the default) */
static int bSelectGet;         /* acorn: SELECT value, not cache_get */
static int bFuncSet;           /* acorn: SELECT cache_set, not INSERT */
static long long nCapacity;    /* bytes */
static int nValue;             /* bytes of a value */
static unsigned char *aVal;    /* the value being set */

static void side_open(side *p, int iSide){
  memset(p, 0, sizeof(*p));
  p->iSide = iSide;
  snprintf(p->zPath, sizeof(p->zPath), "%s/%s.db", zDir, azSide[iSide]);
  benchRemoveDb(p->zPath);
  p->db = benchOpenWal(p->zPath);
  if( bIsAcorn(iSide) ){
    char *zSql;
    benchLoad(p->db, zExt);
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE c USING cache(capacity=%lld,"
                           " policy=%s)", nCapacity, azSide[iSide]);
    benchExec(p->db, zSql);
    sqlite3_free(zSql);
    p->pGet = benchPrepare(p->db, bSelectGet
                                  ? "SELECT value FROM c WHERE key=?1"
                                  : "SELECT cache_get('c', ?1)");
    p->pSet = benchPrepare(p->db, bFuncSet
                                  ? "SELECT cache_set('c', ?1, ?2)"
                                  : "INSERT INTO c(key, value) VALUES(?1, ?2)");
  }else if( iSide==S_A1 || iSide==S_A2 ){
    benchExec(p->db,
              "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB, used INTEGER);"
              "CREATE INDEX kv_used ON kv(used);");
    if( bSplit ){
      p->pGet = benchPrepare(p->db, "SELECT rowid, v FROM kv WHERE k=?1");
      p->pTouch = benchPrepare(p->db, iSide==S_A1
          ? "UPDATE kv SET used=?2 WHERE rowid=?1"
          : "UPDATE kv SET used=(SELECT max(used)+1 FROM kv) WHERE rowid=?1");
      p->pOldest = benchPrepare(p->db,
                                "SELECT rowid, length(k)+length(v) FROM kv"
                                " ORDER BY used LIMIT 1");
      p->pEvict = benchPrepare(p->db, "DELETE FROM kv WHERE rowid=?1");
    }
    if( iSide==S_A1 ){
      if( !bSplit ){
        p->pGet = benchPrepare(p->db,
                               "UPDATE kv SET used=?2 WHERE k=?1 RETURNING v");
      }
      p->pSet = benchPrepare(p->db,
                             "INSERT INTO kv(k, v, used) VALUES(?1, ?2, ?3)");
    }else{
      if( !bSplit ){
        p->pGet = benchPrepare(p->db,
                               "UPDATE kv SET used=(SELECT max(used)+1 FROM kv)"
                               " WHERE k=?1 RETURNING v");
      }
      p->pSet = benchPrepare(p->db,
                             "INSERT INTO kv(k, v, used) VALUES(?1, ?2,"
                             " (SELECT coalesce(max(used), 0)+1 FROM kv))");
    }
    if( !bSplit ){
      p->pEvict = benchPrepare(p->db,
                               "DELETE FROM kv WHERE rowid=(SELECT rowid"
                               " FROM kv ORDER BY used LIMIT 1)"
                               " RETURNING length(k)+length(v)");
    }
  }else{
    benchExec(p->db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
    p->pGet = benchPrepare(p->db, "SELECT v FROM kv WHERE k=?1");
    p->pSet = benchPrepare(p->db, "INSERT INTO kv(k, v) VALUES(?1, ?2)");
    if( bSplit ){
      p->pOldest = benchPrepare(p->db,
                                "SELECT rowid, length(k)+length(v) FROM kv"
                                " ORDER BY rowid LIMIT 1");
      p->pEvict = benchPrepare(p->db, "DELETE FROM kv WHERE rowid=?1");
    }else{
      p->pEvict = benchPrepare(p->db,
                               "DELETE FROM kv WHERE rowid=(SELECT min(rowid)"
                               " FROM kv) RETURNING length(k)+length(v)");
    }
  }
  if( bHasMeta(iSide) ){
    benchExec(p->db,
              "CREATE TABLE meta(id INTEGER PRIMARY KEY CHECK (id=1),"
              " total INTEGER NOT NULL); INSERT INTO meta VALUES(1, 0);");
    p->pTotal = benchPrepare(p->db, "SELECT total FROM meta WHERE id=1");
    p->pSetTotal = benchPrepare(p->db, "UPDATE meta SET total=?1 WHERE id=1");
  }
  p->pBegin = benchPrepare(p->db, "BEGIN IMMEDIATE");
  p->pCommit = benchPrepare(p->db, "COMMIT");
}

static void side_close(side *p){
  sqlite3_finalize(p->pGet);
  sqlite3_finalize(p->pSet);
  sqlite3_finalize(p->pEvict);
  sqlite3_finalize(p->pTouch);
  sqlite3_finalize(p->pOldest);
  sqlite3_finalize(p->pTotal);
  sqlite3_finalize(p->pSetTotal);
  sqlite3_finalize(p->pBegin);
  sqlite3_finalize(p->pCommit);
  benchCheck(sqlite3_close(p->db), p->db, "close");
}

static void step_done(side *p, sqlite3_stmt *pStmt, const char *zWhat){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW && sqlite3_stmt_readonly(pStmt) ){
    rc = sqlite3_step(pStmt);      /* SELECT cache_set(...): its one row */
  }
  if( rc!=SQLITE_DONE ){
    benchCheck(rc==SQLITE_ROW ? SQLITE_ERROR : rc, p->db, zWhat);
  }
  sqlite3_reset(pStmt);
}

/* The get of key number iKey: 1 on a hit (its value checked), 0 on a miss. */
static int do_get(side *p, const char *z, long long iKey){
  int rc, bHit = 0;
  int iCol = p->pTouch ? 1 : 0;
  sqlite3_int64 iRowid = 0;
  sqlite3_bind_text(p->pGet, 1, z, KEYLEN, SQLITE_STATIC);
  if( p->iSide==S_A1 && !p->pTouch ) sqlite3_bind_int64(p->pGet, 2, ++p->nUsed);
  rc = sqlite3_step(p->pGet);
  if( rc==SQLITE_ROW && sqlite3_column_type(p->pGet, iCol)==SQLITE_NULL ){
    rc = sqlite3_step(p->pGet);  /* cache_get's miss */
  }else if( rc==SQLITE_ROW ){
    const unsigned char *a = sqlite3_column_blob(p->pGet, iCol);
    long long v;
    if( p->pTouch ) iRowid = sqlite3_column_int64(p->pGet, 0);
    if( sqlite3_column_bytes(p->pGet, iCol)!=nValue ){
      fail("%s: a value of the wrong length for %s", azSide[p->iSide], z);
    }
    memcpy(&v, a, 8);
    if( v!=iKey ) fail("%s: the value of another key for %s", azSide[p->iSide], z);
    bHit = 1;
    rc = sqlite3_step(p->pGet);  /* to the end (with RETURNING: its commit) */
  }
  benchCheck(rc, p->db, "get");
  if( rc!=SQLITE_DONE ) fail("%s: %s", azSide[p->iSide], "a get returned two rows");
  sqlite3_reset(p->pGet);
  if( bHit && p->pTouch ){
    sqlite3_bind_int64(p->pTouch, 1, iRowid);
    if( p->iSide==S_A1 ) sqlite3_bind_int64(p->pTouch, 2, ++p->nUsed);
    step_done(p, p->pTouch, "touch");
  }
  return bHit;
}

/* The set of key number iKey, with the evictions it needs.  With bOwnTxn
** the hand-written sides wrap it in a transaction of its own. */
static void do_set(side *p, const char *z, long long iKey, int bOwnTxn){
  long long nSize = KEYLEN + nValue, nTotal;
  memcpy(aVal, &iKey, 8);
  if( bIsAcorn(p->iSide) ){
    sqlite3_bind_text(p->pSet, 1, z, KEYLEN, SQLITE_STATIC);
    sqlite3_bind_blob(p->pSet, 2, aVal, nValue, SQLITE_STATIC);
    step_done(p, p->pSet, "set");
    return;
  }
  if( bOwnTxn ) step_done(p, p->pBegin, "BEGIN IMMEDIATE");
  sqlite3_bind_text(p->pSet, 1, z, KEYLEN, SQLITE_STATIC);
  sqlite3_bind_blob(p->pSet, 2, aVal, nValue, SQLITE_STATIC);
  if( p->iSide==S_A1 ) sqlite3_bind_int64(p->pSet, 3, ++p->nUsed);
  step_done(p, p->pSet, "set");
  if( bHasMeta(p->iSide) ){
    benchCheck(sqlite3_step(p->pTotal), p->db, "read the total");
    nTotal = sqlite3_column_int64(p->pTotal, 0);
    sqlite3_reset(p->pTotal);
  }else{
    nTotal = p->nTotal;
  }
  nTotal += nSize;
  while( nTotal>nCapacity ){
    if( bSplit ){
      if( sqlite3_step(p->pOldest)!=SQLITE_ROW ){
        benchCheck(SQLITE_ERROR, p->db, "oldest");
      }
      sqlite3_bind_int64(p->pEvict, 1, sqlite3_column_int64(p->pOldest, 0));
      nTotal -= sqlite3_column_int64(p->pOldest, 1);
      sqlite3_reset(p->pOldest);
      step_done(p, p->pEvict, "evict");
    }else{
      if( sqlite3_step(p->pEvict)!=SQLITE_ROW ){
        benchCheck(SQLITE_ERROR, p->db, "evict");
      }
      nTotal -= sqlite3_column_int64(p->pEvict, 0);
      step_done(p, p->pEvict, "evict");
    }
    p->nEvict++;
  }
  if( bHasMeta(p->iSide) ){
    sqlite3_bind_int64(p->pSetTotal, 1, nTotal);
    step_done(p, p->pSetTotal, "write the total");
  }else{
    p->nTotal = nTotal;
  }
  if( bOwnTxn ) step_done(p, p->pCommit, "COMMIT");
}

/* Requests aSeq[i0 .. i1) on side p in transactions of nTxn (0: autocommit);
** with bTimed the time, pages, hits and misses count. */
static void run_requests(side *p, const int *aSeq, long long i0, long long i1,
                         int nTxn, int bTimed, int bFlush){
  char z[32];
  long long i, nHit = 0, nMiss = 0;
  double t0 = benchSeconds();
  benchPagesWritten(p->db);
  for(i=i0; i<i1; i++){
    long long iKey = aSeq[i];
    if( nTxn && (i-i0)%nTxn==0 ) step_done(p, p->pBegin, "BEGIN IMMEDIATE");
    benchKey(z, iKey);
    if( do_get(p, z, iKey) ){
      nHit++;
    }else{
      nMiss++;
      do_set(p, z, iKey, nTxn==0);
    }
    if( nTxn && ((i-i0)%nTxn==nTxn-1 || i==i1-1) ) step_done(p, p->pCommit, "COMMIT");
  }
  if( bFlush && p->iSide==S_LRU ){
    benchExec(p->db, "INSERT INTO c(c) VALUES('flush')");
  }
  if( bTimed ){
    p->t += benchSeconds()-t0;
    p->nPages += benchPagesWritten(p->db);
    p->nHit += nHit;
    p->nMiss += nMiss;
  }
}

/* The side's keys as a count and an order-free hash of their numbers. */
static void key_set(side *p, long long *pN, unsigned long long *pH){
  sqlite3_stmt *q = benchPrepare(p->db, bIsAcorn(p->iSide) ? "SELECT key FROM c"
                                                         : "SELECT k FROM kv");
  *pN = 0; *pH = 0;
  while( sqlite3_step(q)==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(q, 0);
    (*pN)++;
    *pH += mix((unsigned long long)atoll(z+3));
  }
  benchCheck(sqlite3_finalize(q), p->db, "list the keys");
}

static void finish_checks(side *a){
  int k;
  long long aN[NSIDE];
  unsigned long long aH[NSIDE];
  for(k=0; k<NSIDE; k++){
    side *p = &a[k];
    long long nBytes;
    char zA[200], zB[200];
    if( bIsAcorn(k) ){
      benchExec(p->db, "INSERT INTO c(c) VALUES('integrity_check')");
      nBytes = benchInt64(p->db, "SELECT bytes FROM cache_stats('c')");
    }else{
      long long nSum = benchInt64(p->db,
          "SELECT coalesce(sum(length(k)+length(v)), 0) FROM kv");
      long long nTotal = bHasMeta(k)
                         ? benchInt64(p->db, "SELECT total FROM meta")
                         : p->nTotal;
      if( nSum!=nTotal ){
        snprintf(zA, sizeof(zA), "%lld", nTotal);
        snprintf(zB, sizeof(zB), "%lld", nSum);
        fprintf(stderr, "readthrough: %s: ", azSide[k]);
        fail("its byte total %s is not the sum of its rows, %s", zA, zB);
      }
      nBytes = nSum;
    }
    if( nBytes>nCapacity ){
      snprintf(zA, sizeof(zA), "%lld", nBytes);
      snprintf(zB, sizeof(zB), "%lld", nCapacity);
      fprintf(stderr, "readthrough: %s: ", azSide[k]);
      fail("%s bytes, above the capacity of %s", zA, zB);
    }
    key_set(p, &aN[k], &aH[k]);
  }
  for(k=0; k<NSIDE; k++){
    int b = bIsAcorn(k) ? k : (k<=S_A2 ? S_LRU : S_FIFO);
    if( k==b ) continue;
    if( a[k].nHit!=a[b].nHit ){
      fail("%s had other hits than %s (the same algorithm on the same requests)",
           azSide[k], azSide[b]);
    }
    if( aN[k]!=aN[b] || aH[k]!=aH[b] ){
      fail("%s holds other keys than %s (the same algorithm on the same requests)",
           azSide[k], azSide[b]);
    }
  }
}

#define NSLICE 10

int main(int argc, char **argv){
  long long nKeys, nReq, nWarm, nSeq, nEntries, i, nDistinct;
  double s, aRate[NSIDE];
  const char *zMode;
  int nTxn, k, iSl;
  zipf z;
  int *aSeq;
  unsigned char *aSeen;
  side a[NSIDE];
  if( argc!=8 ){
    fprintf(stderr, "usage: %s EXTENSION DIR KEYS S auto|txn VALUE REQUESTS\n",
            argv[0]);
    return 2;
  }
  zExt = argv[1];
  zDir = argv[2];
  nKeys = atoll(argv[3]);
  s = atof(argv[4]);
  zMode = argv[5];
  bSelectGet = getenv("READTHROUGH_GET")
               && strcmp(getenv("READTHROUGH_GET"), "select")==0;
  bFuncSet = getenv("READTHROUGH_SET")
             && strcmp(getenv("READTHROUGH_SET"), "function")==0;
  bSplit = !(getenv("READTHROUGH_RETURNING")
             && strcmp(getenv("READTHROUGH_RETURNING"), "1")==0);
  nValue = atoi(argv[6]);
  nReq = atoll(argv[7]);
  if( strcmp(zMode, "auto")==0 ) nTxn = 0;
  else if( strcmp(zMode, "txn")==0 ) nTxn = 100;
  else fail("MODE must be auto or txn, not %s%s", zMode, "");
  if( nKeys<100 || nKeys>100000000 || s<=0 || nValue<8 || nValue>(1<<24)
   || nReq<NSLICE*100 || nReq%(NSLICE*100)!=0 ){
    fail("%s%s", "KEYS must be 100..10^8, S positive, VALUE at least 8 bytes,"
         " REQUESTS a multiple of 1000", "");
  }
  nEntries = nKeys/10;
  nCapacity = nEntries*(KEYLEN+nValue);
  aVal = malloc(nValue);
  for(i=0; i<nValue; i++) aVal[i] = (unsigned char)(i*7+1);

  /* The sequence: the warm-up up to the (nEntries)th distinct key, then
  ** nReq requests. */
  zipf_init(&z, nKeys, s);
  aSeen = calloc(nKeys, 1);
  nSeq = nKeys + nReq;
  aSeq = malloc(sizeof(int)*nSeq);
  if( !aSeen || !aSeq || !aVal ) fail("%s%s", "out of memory", "");
  nDistinct = 0;
  for(i=0; nDistinct<nEntries; i++){
    long long r;
    if( i==nSeq ){
      nSeq *= 2;
      aSeq = realloc(aSeq, sizeof(int)*nSeq);
      if( !aSeq ) fail("%s%s", "out of memory", "");
    }
    r = zipf_rank(&z);
    aSeq[i] = z.aKey[r];
    if( !aSeen[aSeq[i]] ){ aSeen[aSeq[i]] = 1; nDistinct++; }
  }
  nWarm = i;
  if( nWarm+nReq>nSeq ){
    nSeq = nWarm+nReq;
    aSeq = realloc(aSeq, sizeof(int)*nSeq);
    if( !aSeq ) fail("%s%s", "out of memory", "");
  }
  {
    /* The draws against the distribution: the share of the top 1% of
    ** ranks must be within 6 standard deviations of its probability. */
    long long nTop = nKeys/100, nIn = 0, nOut;
    double p;
    for(i=nWarm; i<nWarm+nReq; i++){
      long long r = zipf_rank(&z);
      aSeq[i] = z.aKey[r];
      if( r<nTop ) nIn++;
    }
    nOut = nReq;
    p = z.aCdf[nTop-1]/z.aCdf[nKeys-1];
    if( fabs(nIn - p*nOut) > 6*sqrt(nOut*p*(1-p)) + 1 ){
      fail("%s%s", "the Zipf draws do not follow the distribution", "");
    }
  }
  free(aSeen);

  for(k=0; k<NSIDE; k++) side_open(&a[k], k);

  /* Warm-up, untimed: every cache ends exactly full. */
  for(k=0; k<NSIDE; k++){
    long long n;
    run_requests(&a[k], aSeq, 0, nWarm, 1000, 0, 1);
    n = benchInt64(a[k].db, bIsAcorn(k) ? "SELECT count(*) FROM c"
                                        : "SELECT count(*) FROM kv");
    if( n!=nEntries || a[k].nEvict!=0 ){
      fail("%s: %s", azSide[k], "the warm-up did not fill the cache exactly");
    }
    benchExec(a[k].db, "PRAGMA wal_checkpoint(TRUNCATE)");
  }

  /* Measured: nReq requests in NSLICE slices, the sides taking turns. */
  for(iSl=0; iSl<NSLICE; iSl++){
    long long i0 = nWarm + iSl*(nReq/NSLICE);
    for(k=0; k<NSIDE; k++){
      side *p = &a[(iSl+k)%NSIDE];
      run_requests(p, aSeq, i0, i0 + nReq/NSLICE, nTxn, 1, iSl==NSLICE-1);
    }
  }
  finish_checks(a);

  printf("%lld keys, Zipf s=%g, %s, %d-byte values, capacity %lld bytes"
         " (%lld entries), %lld requests after %lld of warm-up; SQLite %s,"
         " WAL, synchronous=NORMAL\n\n", nKeys, s,
         nTxn ? "100 requests per transaction" : "autocommit", nValue,
         nCapacity, nEntries, nReq, nWarm, sqlite3_libversion());
  printf("| side | requests/s | hit ratio | pages written/request | ratio |\n");
  printf("|---|--:|--:|--:|---|\n");
  for(k=0; k<NSIDE; k++) aRate[k] = nReq/a[k].t;
  for(k=0; k<NSIDE; k++){
    char zRatio[100] = "";
    if( k==S_LRU ){
      snprintf(zRatio, sizeof(zRatio), "%.2f of a1, %.2f of a2",
               aRate[S_LRU]/aRate[S_A1], aRate[S_LRU]/aRate[S_A2]);
    }else if( k==S_FIFO ){
      snprintf(zRatio, sizeof(zRatio), "%.2f of b1, %.2f of b2",
               aRate[S_FIFO]/aRate[S_B1], aRate[S_FIFO]/aRate[S_B2]);
    }
    printf("| %s | %.0f | %.3f | %.2f | %s |\n", azLabel[k], aRate[k],
           (double)a[k].nHit/nReq, (double)a[k].nPages/nReq, zRatio);
  }
  printf("\nratios: %lld %g %s %d %.2f %.2f %.2f %.2f\n", nKeys, s, zMode, nValue,
         aRate[S_LRU]/aRate[S_A1], aRate[S_LRU]/aRate[S_A2],
         aRate[S_FIFO]/aRate[S_B1], aRate[S_FIFO]/aRate[S_B2]);
  for(k=0; k<NSIDE; k++) side_close(&a[k]);
  for(k=0; k<NSIDE; k++) benchRemoveDb(a[k].zPath);
  free(z.aCdf);
  free(z.aKey);
  free(aSeq);
  free(aVal);
  return 0;
}
