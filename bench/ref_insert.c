/*
** ref_insert.c: one run of bench_insert's workload as a plain C program,
** the yardstick of bench/insert.sh.
**
**   build/ref_insert DIR [threads=N] [batch=N] [rows=N] [synchronous=S]
**                        [journal=J] [mutex=0|1] [content=N]
**                        [busy_timeout=MS]
**
** Prints one line: "writes_per_sec=N rows=N seconds=S".
**
** It does what bench_insert does for id=integer, prepare=once,
** begin=deferred, locking=normal, storage=file, readers=0, and nothing
** more: the same scratch file creation (O_EXCL in DIR), the same setup
** connection (journal_mode, the posts table), one connection per
** writer opened with the same flags, the same pragmas and busy handler
** (SQLite's busy_timeout delays), the same prepared INSERT and BEGIN/COMMIT,
** rows claimed `batch` at a time from one atomic counter, the clock from
** the opening of the start gate to the end of the last writer, and the
** single writer in the main thread when threads=1.  It does not record
** per-insert latencies (bench_insert does); that is the overhead the ratio
** in bench/insert.sh shows.
*/
#define BENCH_NAME "ref_insert"
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static int nThread = 1, nBatch = 1, bMutex = 0, nContent = 12;
static int iBusyTimeout = 1000;
static long long nRow = 10000;
static const char *zSync = "normal", *zJournal = "wal";
static char zPath[4096];
static char *zContent;
/* iNext, written by every claim, alone on its cache line, away from bStop
** and zContent that every writer reads, as in bench_insert. */
static struct {
  char aPad1[64];
  long long v;
  char aPad2[64];
} __attribute__((aligned(64))) iNextPadded;
#define iNext (iNextPadded.v)
static int bStop = 0;
static pthread_mutex_t appMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gateMutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gateCond = PTHREAD_COND_INITIALIZER;
static int nReady = 0, bGo = 0;
static int openFlags = SQLITE_OPEN_READWRITE|SQLITE_OPEN_NOFOLLOW;

typedef struct worker {
  pthread_t tid;
  sqlite3 *db;
  sqlite3_stmt *pIns, *pBegin, *pCommit;
  long long nDone;
  long long tEnd;
  int iTimeout, rc;
  char zErr[512];
} worker;

static int busyHandler(void *pArg, int nCount){
  static const unsigned char aDelay[] = {1,2,5,10,15,20,25,25,25,50,50,100};
  static const unsigned char aTotal[] = {0,1,3,8,18,33,53,78,103,128,178,228};
  const int nDelay = (int)sizeof(aDelay);
  int iTimeout = *(int*)pArg, delay, prior;
  struct timespec ts;
  if( nCount<nDelay ){
    delay = aDelay[nCount];
    prior = aTotal[nCount];
  }else{
    delay = aDelay[nDelay-1];
    prior = aTotal[nDelay-1] + delay*(nCount-(nDelay-1));
  }
  if( prior+delay>iTimeout ){
    delay = iTimeout - prior;
    if( delay<=0 ) return 0;
  }
  ts.tv_sec = delay/1000;
  ts.tv_nsec = (long)(delay%1000)*1000000L;
  while( nanosleep(&ts, &ts)!=0 && errno==EINTR ){}
  return 1;
}

static void fail(worker *w, const char *zWhat){
  if( w->rc==SQLITE_OK ){
    w->rc = SQLITE_ERROR;
    snprintf(w->zErr, sizeof(w->zErr), "%s: %s", zWhat,
             w->db ? sqlite3_errmsg(w->db) : "?");
  }
  __atomic_store_n(&bStop, 1, __ATOMIC_SEQ_CST);
}

static int setup(worker *w){
  char zSql[256];
  if( sqlite3_open_v2(zPath, &w->db, openFlags, 0)!=SQLITE_OK ){
    fail(w, "open"); return 1;
  }
  w->iTimeout = iBusyTimeout;
  sqlite3_busy_handler(w->db, busyHandler, &w->iTimeout);
  snprintf(zSql, sizeof(zSql), "PRAGMA locking_mode=normal; PRAGMA"
           " journal_mode=%s; PRAGMA synchronous=%s; PRAGMA foreign_keys=ON;",
           zJournal, zSync);
  if( sqlite3_exec(w->db, zSql, 0, 0, 0)!=SQLITE_OK ){ fail(w, zSql); return 1; }
  if( sqlite3_prepare_v2(w->db, "BEGIN", -1, &w->pBegin, 0)
   || sqlite3_prepare_v2(w->db, "COMMIT", -1, &w->pCommit, 0)
   || sqlite3_prepare_v2(w->db,
        "INSERT INTO posts(title,content) VALUES(?1,?2)", -1, &w->pIns, 0) ){
    fail(w, "prepare"); return 1;
  }
  return 0;
}

static int txn(worker *w, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  sqlite3_reset(p);
  if( rc!=SQLITE_DONE ){ fail(w, "BEGIN/COMMIT"); return 1; }
  return 0;
}

static void writerLoop(worker *w){
  for(;;){
    long long i0, n, j;
    int bErr = 0;
    if( __atomic_load_n(&bStop, __ATOMIC_RELAXED) ) break;
    i0 = __atomic_fetch_add(&iNext, (long long)nBatch, __ATOMIC_RELAXED);
    if( i0>=nRow ) break;
    n = nRow - i0;
    if( n>nBatch ) n = nBatch;
    if( bMutex ) pthread_mutex_lock(&appMutex);
    if( nBatch>1 ) bErr = txn(w, w->pBegin);
    for(j=0; !bErr && j<n; j++){
      sqlite3_bind_text(w->pIns, 1, "Some title", 10, SQLITE_STATIC);
      sqlite3_bind_text(w->pIns, 2, zContent, nContent, SQLITE_STATIC);
      if( sqlite3_step(w->pIns)!=SQLITE_DONE ){ fail(w, "insert"); bErr = 1; }
      sqlite3_reset(w->pIns);
    }
    if( !bErr && nBatch>1 ) bErr = txn(w, w->pCommit);
    if( bMutex ) pthread_mutex_unlock(&appMutex);
    if( bErr ) break;
    w->nDone += n;
  }
  w->tEnd = benchClockNs();
}

static void *threadMain(void *p){
  worker *w = (worker*)p;
  if( setup(w) ) __atomic_store_n(&bStop, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&gateMutex);
  nReady++;
  pthread_cond_broadcast(&gateCond);
  while( !bGo ) pthread_cond_wait(&gateCond, &gateMutex);
  pthread_mutex_unlock(&gateMutex);
  writerLoop(w);
  return 0;
}

int main(int argc, char **argv){
  worker *aW;
  sqlite3 *db = 0;
  char zSql[512];
  long long tStart, tEnd, nDone = 0;
  int i, fd, rc = 0, nStarted = 0;
  unsigned int uSeed;
  char *zDir;
  if( argc<2 ){
    fprintf(stderr, "usage: %s DIR [threads=N] [batch=N] [rows=N]"
            " [synchronous=S] [journal=J] [mutex=0|1] [content=N]"
            " [busy_timeout=MS]\n", argv[0]);
    return 2;
  }
  for(i=2; i<argc; i++){
    const char *z = argv[i];
    if( strncmp(z, "threads=", 8)==0 ) nThread = atoi(z+8);
    else if( strncmp(z, "batch=", 6)==0 ) nBatch = atoi(z+6);
    else if( strncmp(z, "rows=", 5)==0 ) nRow = atoll(z+5);
    else if( strncmp(z, "synchronous=", 12)==0 ) zSync = z+12;
    else if( strncmp(z, "journal=", 8)==0 ) zJournal = z+8;
    else if( strncmp(z, "mutex=", 6)==0 ) bMutex = atoi(z+6);
    else if( strncmp(z, "content=", 8)==0 ) nContent = atoi(z+8);
    else if( strncmp(z, "busy_timeout=", 13)==0 ) iBusyTimeout = atoi(z+13);
    else { fprintf(stderr, "unknown argument %s\n", z); return 2; }
  }
  if( nThread<1 || nBatch<1 || nRow<1 || nContent<0 ){
    fprintf(stderr, "threads, batch, rows must be >= 1\n");
    return 2;
  }
  zContent = malloc((size_t)nContent+1);
  aW = calloc((size_t)nThread, sizeof(worker));
  if( zContent==0 || aW==0 ) return 1;
  for(i=0; i<nContent; i++) zContent[i] = "Some content"[i%12];
  if( nThread>1 ) openFlags |= SQLITE_OPEN_NOMUTEX;

  /* realpath, as bench_insert does: absolute (never read as a URI) and
  ** without the symlinks SQLITE_OPEN_NOFOLLOW refuses */
  zDir = realpath(argv[1], 0);
  if( zDir==0 ){ perror(argv[1]); return 1; }
  uSeed = (unsigned)(benchClockNs() ^ getpid());
  for(i=0; i<100; i++){
    snprintf(zPath, sizeof(zPath), "%s/ref-insert-%08x%08x.db", zDir,
             rand_r(&uSeed), rand_r(&uSeed));
    fd = open(zPath, O_CREAT|O_EXCL|O_RDWR|O_CLOEXEC|O_NOFOLLOW, 0600);
    if( fd>=0 ) break;
    if( errno!=EEXIST ){ perror(zPath); return 1; }
  }
  if( fd<0 ) return 1;
  close(fd);

  snprintf(zSql, sizeof(zSql), "PRAGMA journal_mode=%s; CREATE TABLE"
      " posts(id INTEGER PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT"
      " NULL, created TEXT NOT NULL DEFAULT"
      " (strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ'))) STRICT", zJournal);
  if( sqlite3_open_v2(zPath, &db, openFlags, 0)!=SQLITE_OK
   || sqlite3_exec(db, zSql, 0, 0, 0)!=SQLITE_OK ){
    fprintf(stderr, "setup: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    benchRemoveDb(zPath);
    return 1;
  }
  sqlite3_close(db);

  if( nThread==1 ){
    if( setup(&aW[0])==0 ){
      tStart = benchClockNs();
      writerLoop(&aW[0]);
    }else{
      tStart = benchClockNs();
    }
  }else{
    for(i=0; i<nThread; i++){
      if( pthread_create(&aW[i].tid, 0, threadMain, &aW[i])!=0 ){
        __atomic_store_n(&bStop, 1, __ATOMIC_SEQ_CST);
        rc = 1;
        break;
      }
      nStarted++;
    }
    pthread_mutex_lock(&gateMutex);
    while( nReady<nStarted ) pthread_cond_wait(&gateCond, &gateMutex);
    tStart = benchClockNs();
    bGo = 1;
    pthread_cond_broadcast(&gateCond);
    pthread_mutex_unlock(&gateMutex);
    for(i=0; i<nStarted; i++) pthread_join(aW[i].tid, 0);
  }
  tEnd = tStart;
  for(i=0; i<nThread; i++){
    if( aW[i].rc ){ fprintf(stderr, "%s\n", aW[i].zErr); rc = 1; }
    if( aW[i].tEnd>tEnd ) tEnd = aW[i].tEnd;
    nDone += aW[i].nDone;
    sqlite3_finalize(aW[i].pIns);
    sqlite3_finalize(aW[i].pBegin);
    sqlite3_finalize(aW[i].pCommit);
    sqlite3_close(aW[i].db);
  }
  benchRemoveDb(zPath);
  if( rc==0 ){
    double s = (double)(tEnd-tStart)/1e9;
    printf("writes_per_sec=%.0f rows=%lld seconds=%.3f\n",
           s>0 ? nDone/s : 0.0, nDone, s);
  }
  free(aW);
  free(zContent);
  free(zDir);
  return rc;
}
