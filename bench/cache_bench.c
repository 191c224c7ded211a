/*
** cache_bench.c: the cache virtual table against plain tables, in one run.
**
**   build/cache_bench EXTENSION DIR KEYS [RUNS]
**
** Three sides, each a file in DIR with journal_mode=WAL,
** synchronous=NORMAL, one connection, statements prepared once (bind,
** step, reset), 1 KiB values:
**   plain  kv(k TEXT PRIMARY KEY, v BLOB), what a user writes by hand
**   lru    CREATE VIRTUAL TABLE c USING cache(capacity=...)
**   fifo   the same with policy=fifo
** Every phase runs in 10 slices, the sides taking turns (the one that goes
** first rotating), with the same keys on every side, so that background
** writeback and noise fall on all alike; a side's rate is its operations
** over the sum of its slices' time.  Phases:
**
**   load        KEYS sets of new keys in transactions of 1000
**               (plain: INSERT OR REPLACE; the caches' capacity is 4x the
**               data, nothing is evicted)
**   get         200000 random gets of stored keys, autocommit; the
**               caches' times include writing their buffered
**               recency (lru: a flush at each recency_buffer distinct keys,
**               as in normal use, and a final 'flush'; fifo writes none)
**   replace     KEYS/5 (at most 20000) autocommit sets of stored keys
**   evict-auto  the caches' capacity is set to their bytes; then 20000
**               autocommit sets of new keys, each evicting one entry.
**               plain: the eviction a user writes by hand, in one
**               transaction: INSERT OR REPLACE the new key, DELETE the
**               row of the smallest rowid (the oldest set)
**   evict-txn   100000 such sets in transactions of 1000
**
** For each phase it prints the rates, the ratios lru/plain and fifo/plain
** (the median of the per-run ratios), and the pages each operation dirties
** on each side (sqlite3_db_status SQLITE_DBSTATUS_CACHE_WRITE: pages the
** page cache wrote, divided by the operations); at the end, the size of
** each database (file plus WAL).  RUNS (default 3) repeats everything.
** CACHE_BENCH_SQL, if set, is run on every side after the pragmas above
** (e.g. "PRAGMA cache_size=-65536" to give each side a 64 MiB page cache).
*/
#define BENCH_NAME "cache_bench"
#include "bench_util.h"
#include <string.h>
#include <sys/stat.h>

static const char *zExt;
static const char *zDir;

#define NSIDE 3
static const char *const azSide[NSIDE] = { "plain", "lru", "fifo" };

/* One side: its connection, statements and counters. */
typedef struct side side;
struct side {
  int iSide;
  sqlite3 *db;
  char zPath[4096];
  sqlite3_stmt *pSet, *pGet, *pDel;
  double t;                  /* seconds spent in the current phase */
  long long nPages;          /* pages written in the current phase */
};

static void side_open(side *p, int iSide, long long nCapacity){
  memset(p, 0, sizeof(*p));
  p->iSide = iSide;
  snprintf(p->zPath, sizeof(p->zPath), "%s/%s.db", zDir, azSide[iSide]);
  benchRemoveDb(p->zPath);
  p->db = benchOpenWal(p->zPath);
  if( getenv("CACHE_BENCH_SQL") ) benchExec(p->db, getenv("CACHE_BENCH_SQL"));
  if( iSide==0 ){
    benchExec(p->db, "CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB)");
    p->pSet = benchPrepare(p->db,
                           "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)");
    p->pGet = benchPrepare(p->db, "SELECT v FROM kv WHERE k=?1");
    p->pDel = benchPrepare(p->db,
                   "DELETE FROM kv WHERE rowid=(SELECT min(rowid) FROM kv)");
  }else{
    char *zSql;
    benchLoad(p->db, zExt);
    zSql = sqlite3_mprintf("CREATE VIRTUAL TABLE c USING cache(capacity=%lld,"
                           " policy=%s)", nCapacity, azSide[iSide]);
    benchExec(p->db, zSql);
    sqlite3_free(zSql);
    p->pSet = benchPrepare(p->db, "INSERT INTO c(key, value) VALUES(?1, ?2)");
    p->pGet = benchPrepare(p->db, "SELECT value FROM c WHERE key=?1");
  }
}

static void side_close(side *p){
  sqlite3_finalize(p->pSet);
  sqlite3_finalize(p->pGet);
  sqlite3_finalize(p->pDel);
  sqlite3_close(p->db);
}

static long long file_bytes(const char *zPath){
  char zWal[4200];
  struct stat st;
  long long n = 0;
  if( stat(zPath, &st)==0 ) n += st.st_size;
  snprintf(zWal, sizeof(zWal), "%s-wal", zPath);
  if( stat(zWal, &st)==0 ) n += st.st_size;
  return n;
}

static unsigned char aVal[1024];

/* n sets in transactions of nTxn (0: autocommit) of the keys iFirst,
** iFirst+1, ... (bSeq) or random keys out of [0, nSpace); with bEvict the
** plain side deletes its oldest row in each set's transaction. */
static void do_sets(side *p, long long n, int nTxn, long long iFirst,
                    long long nSpace, unsigned long long *pRng, int bEvict){
  char z[32];
  long long i;
  double t0 = benchSeconds();
  benchPagesWritten(p->db);
  for(i=0; i<n; i++){
    int bOwnTxn = nTxn==0 && bEvict && p->iSide==0;
    if( nTxn && i%nTxn==0 ) benchExec(p->db, "BEGIN");
    if( bOwnTxn ) benchExec(p->db, "BEGIN");
    benchKey(z, nSpace
                ? (long long)(benchRandom(pRng)%(unsigned long long)nSpace)
                : iFirst + i);
    sqlite3_bind_text(p->pSet, 1, z, -1, SQLITE_STATIC);
    sqlite3_bind_blob(p->pSet, 2, aVal, sizeof(aVal), SQLITE_STATIC);
    benchCheck(sqlite3_step(p->pSet), p->db, "set");
    sqlite3_reset(p->pSet);
    if( bEvict && p->iSide==0 ){
      benchCheck(sqlite3_step(p->pDel), p->db, "delete oldest");
      sqlite3_reset(p->pDel);
    }
    if( bOwnTxn ) benchExec(p->db, "COMMIT");
    if( nTxn && (i%nTxn==nTxn-1 || i==n-1) ) benchExec(p->db, "COMMIT");
  }
  p->t += benchSeconds()-t0;
  p->nPages += benchPagesWritten(p->db);
}

/* n random gets of keys out of [0, nKeys); every one must be found.  With
** bFlush the lru side writes its buffered recency at the end. */
static void do_gets(side *p, long long nKeys, long long n,
                    unsigned long long *pRng, int bFlush){
  char z[32];
  long long i, nFound = 0;
  double t0 = benchSeconds();
  benchPagesWritten(p->db);
  for(i=0; i<n; i++){
    benchKey(z, (long long)(benchRandom(pRng)%(unsigned long long)nKeys));
    sqlite3_bind_text(p->pGet, 1, z, -1, SQLITE_STATIC);
    if( sqlite3_step(p->pGet)==SQLITE_ROW ){
      if( sqlite3_column_bytes(p->pGet, 0)==(int)sizeof(aVal) ) nFound++;
    }
    sqlite3_reset(p->pGet);
  }
  if( bFlush && p->iSide==1 ){
    benchExec(p->db, "INSERT INTO c(c) VALUES('flush')");
  }
  p->t += benchSeconds()-t0;
  p->nPages += benchPagesWritten(p->db);
  if( nFound!=n ){
    fprintf(stderr, "cache_bench: %s: %lld of %lld gets found\n",
            azSide[p->iSide], nFound, n);
    exit(1);
  }
}

#define MAXRUN 9
#define NSLICE 10
enum { P_LOAD, P_GET, P_REPLACE, P_EVAUTO, P_EVTXN, NPHASE };
static const char *const azPhase[NPHASE] = {
  "load (sets, txn of 1000)", "random gets, incl. recency",
  "replacing sets, autocommit", "evicting sets, autocommit",
  "evicting sets, txn of 1000",
};
static double aRate[NPHASE][NSIDE][MAXRUN];
static double aPages[NPHASE][NSIDE];
static long long aBytes[NSIDE];
static long long aOps[NPHASE];

/* Run X (a phase's work for side S) on every side in NSLICE slices, the
** sides taking turns, the first rotating. */
#define INTERLEAVE(A, X) do{ \
    int iSl_, k_; side *S; \
    for(k_=0; k_<NSIDE; k_++){ (A)[k_].t = 0; (A)[k_].nPages = 0; } \
    for(iSl_=0; iSl_<NSLICE; iSl_++){ \
      for(k_=0; k_<NSIDE; k_++){ S = &(A)[(iSl_+k_)%NSIDE]; X; } \
    } \
  }while(0)

static void record(side *a, int iPhase, int iRun, long long nOps){
  int k;
  aOps[iPhase] = nOps;
  for(k=0; k<NSIDE; k++){
    aRate[iPhase][k][iRun] = nOps/a[k].t;
    aPages[iPhase][k] += (double)a[k].nPages/nOps;
  }
}

static void run(int iRun, long long nKeys){
  long long nData = nKeys*(sizeof(aVal)+13);
  long long nGet = 200000;
  long long nRepl = nKeys/5<20000 ? nKeys/5 : 20000;
  long long nEvAuto = 20000, nEvTxn = 100000;
  long long iNext = nKeys;      /* the next new key */
  unsigned long long aRng[NSIDE];
  side a[NSIDE];
  int k;
  for(k=0; k<(int)sizeof(aVal); k++) aVal[k] = (unsigned char)(k*7+iRun);
  for(k=0; k<NSIDE; k++) side_open(&a[k], k, nData*4);

  INTERLEAVE(a, do_sets(S, nKeys/NSLICE, 1000, iSl_*(nKeys/NSLICE), 0, 0, 0));
  record(a, P_LOAD, iRun, nKeys/NSLICE*NSLICE);

  for(k=0; k<NSIDE; k++) aRng[k] = 88172645463325252ULL + (unsigned)iRun;
  INTERLEAVE(a, do_gets(S, nKeys/NSLICE*NSLICE, nGet/NSLICE,
                        &aRng[S->iSide], iSl_==NSLICE-1));
  record(a, P_GET, iRun, nGet/NSLICE*NSLICE);

  for(k=0; k<NSIDE; k++) aRng[k] = 1181783497276652981ULL + (unsigned)iRun;
  INTERLEAVE(a, do_sets(S, nRepl/NSLICE, 0, 0, nKeys/NSLICE*NSLICE,
                        &aRng[S->iSide], 0));
  record(a, P_REPLACE, iRun, nRepl/NSLICE*NSLICE);

  for(k=1; k<NSIDE; k++){
    /* full: from now on every set of a new key evicts one entry */
    long long nBytes = benchInt64(a[k].db,
                                  "SELECT bytes FROM cache_stats('c')");
    char *zSql = sqlite3_mprintf(
        "INSERT INTO c(c, value) VALUES('capacity', %lld)", nBytes);
    benchExec(a[k].db, zSql);
    sqlite3_free(zSql);
  }
  INTERLEAVE(a, do_sets(S, nEvAuto/NSLICE, 0, iNext + iSl_*(nEvAuto/NSLICE),
                        0, 0, 1));
  iNext += nEvAuto;
  record(a, P_EVAUTO, iRun, nEvAuto/NSLICE*NSLICE);
  INTERLEAVE(a, do_sets(S, nEvTxn/NSLICE, 1000, iNext + iSl_*(nEvTxn/NSLICE),
                        0, 0, 1));
  record(a, P_EVTXN, iRun, nEvTxn/NSLICE*NSLICE);

  for(k=0; k<NSIDE; k++){
    long long n = benchInt64(a[k].db, k ? "SELECT count(*) FROM c"
                                        : "SELECT count(*) FROM kv");
    if( n!=nKeys/NSLICE*NSLICE ){
      fprintf(stderr, "cache_bench: %s holds %lld entries, not %lld\n",
              azSide[k], n, nKeys/NSLICE*NSLICE);
      exit(1);
    }
    if( k ) benchExec(a[k].db, "INSERT INTO c(c) VALUES('integrity_check')");
    side_close(&a[k]);
    aBytes[k] = file_bytes(a[k].zPath);
  }
}

int main(int argc, char **argv){
  int nRun, i, k, r;
  long long nKeys;
  if( argc<4 ){
    fprintf(stderr, "usage: %s EXTENSION DIR KEYS [RUNS]\n", argv[0]);
    return 2;
  }
  zExt = argv[1];
  zDir = argv[2];
  nKeys = atoll(argv[3]);
  nRun = argc>4 ? atoi(argv[4]) : 3;
  if( nRun<1 || nRun>MAXRUN || nKeys<1000 ){
    fprintf(stderr, "cache_bench: RUNS must be 1..%d, KEYS at least 1000\n",
            MAXRUN);
    return 2;
  }
  for(r=0; r<nRun; r++){
    run(r, nKeys);
    fprintf(stderr, "  %lld keys, run %d of %d (ops/s plain/lru/fifo):",
            nKeys, r+1, nRun);
    for(i=0; i<NPHASE; i++){
      fprintf(stderr, " %.0f/%.0f/%.0f", aRate[i][0][r], aRate[i][1][r],
              aRate[i][2][r]);
    }
    fprintf(stderr, "\n");
  }
  printf("%lld keys, 1 KiB values, SQLite %s, WAL, synchronous=NORMAL,"
         " median of %d runs\n", nKeys, sqlite3_libversion(), nRun);
  printf("| %-28s | %9s | %9s | %9s | %8s | %8s | %s |\n", "phase", "plain/s",
         "lru/s", "fifo/s", "lru", "fifo", "pages/op plain lru fifo");
  printf("|------------------------------|----------:|----------:|----------:"
         "|---------:|---------:|-------------------------|\n");
  for(i=0; i<NPHASE; i++){
    double aR[NSIDE][MAXRUN], aM[NSIDE];
    for(k=0; k<NSIDE; k++){
      for(r=0; r<nRun; r++) aR[k][r] = aRate[i][k][r]/aRate[i][0][r];
      aM[k] = benchMedian(aRate[i][k], nRun);
    }
    printf("| %-28s | %9.0f | %9.0f | %9.0f | %8.2f | %8.2f | %7.2f %6.2f %6.2f |\n",
           azPhase[i], aM[0], aM[1], aM[2], benchMedian(aR[1], nRun),
           benchMedian(aR[2], nRun), aPages[i][0]/nRun, aPages[i][1]/nRun,
           aPages[i][2]/nRun);
  }
  printf("database bytes (file + WAL) after the run: plain %lld, lru %lld"
         " (%.2fx), fifo %lld (%.2fx)\n", aBytes[0], aBytes[1],
         (double)aBytes[1]/aBytes[0], aBytes[2], (double)aBytes[2]/aBytes[0]);
  return 0;
}
